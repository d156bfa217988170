/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The kernel exception path and rte_flow steering (lib/net exc.c,
 * steer.c) over ringlinks, with the NIC's rte_flow mocked at the ethdev
 * boundary: the mock keeps the rules the port makes and sorts the frames
 * the "wire" side sends onto rx queues by them, as a NIC would (first
 * match by priority). Three ports: P under test (its exception interface
 * a second ringlink), W the wire peer, K the "kernel" behind P's exception
 * interface, with P's MAC as a tap's kernel side has.
 *
 * Flow mode: the rules (RoCEv2 per GID, ARP, ICMPv6, default); RoCEv2 to
 * the stack, byte-exact; ICMP and UDP 4791 to someone else's address to
 * the kernel, byte-exact; ARP to both (the kernel's address answered by
 * it, through P); the kernel's frames out on the wire; ICMPv6 echo to the
 * kernel while P answers neighbour discovery. A PMD that refuses rules:
 * steer = auto dispatches in software with the same outcome, steer = flow
 * fails to open with a message naming the key, steer = soft makes none.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_mbuf.h>

#include "net_priv.h"
#include "uroce_config.h"
#include "uroce_port.h"
#include "uroce_test.h"
#include "uroce_test_eal.h"
#include "uroce_test_port.h"
#include "uroce_test_frame.h"
#include "uroce_wire.h"

/* ---------------------------------------------------------------------------
 * The mock NIC's rte_flow.
 */
#define MOCK_RULES	32
#define MOCK_ITEMS	8

struct mock_item {
	enum rte_flow_item_type type;
	bool has_spec;
	union {
		struct rte_flow_item_eth eth;
		struct rte_flow_item_vlan vlan;
		struct rte_flow_item_ipv4 ip4;
		struct rte_flow_item_ipv6 ip6;
		struct rte_flow_item_udp udp;
	} spec, mask;
};

struct mock_rule {
	bool live;
	uint32_t prio;
	int queue;			/* QUEUE index, or RSS's first */
	unsigned int n;
	struct mock_item item[MOCK_ITEMS];
};

static struct mock_rule rules[MOCK_RULES];
static bool mock_refuse;
static unsigned int mock_created, mock_destroyed;

static size_t
item_size(enum rte_flow_item_type t)
{
	switch (t) {
	case RTE_FLOW_ITEM_TYPE_ETH: return sizeof(struct rte_flow_item_eth);
	case RTE_FLOW_ITEM_TYPE_VLAN: return sizeof(struct rte_flow_item_vlan);
	case RTE_FLOW_ITEM_TYPE_IPV4: return sizeof(struct rte_flow_item_ipv4);
	case RTE_FLOW_ITEM_TYPE_IPV6: return sizeof(struct rte_flow_item_ipv6);
	case RTE_FLOW_ITEM_TYPE_UDP: return sizeof(struct rte_flow_item_udp);
	default: return 0;
	}
}

static struct rte_flow *
mock_create(uint16_t port_id, const struct rte_flow_attr *attr,
	    const struct rte_flow_item pattern[],
	    const struct rte_flow_action actions[], struct rte_flow_error *e)
{
	struct mock_rule *r = NULL;
	unsigned int i;

	if (mock_refuse) {
		rte_flow_error_set(e, ENOTSUP, RTE_FLOW_ERROR_TYPE_UNSPECIFIED,
				   NULL, "mock: no rte_flow");
		return NULL;
	}
	for (i = 0; i < MOCK_RULES && r == NULL; i++)
		if (!rules[i].live)
			r = &rules[i];
	if (r == NULL)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->prio = attr->priority;
	for (i = 0; pattern[i].type != RTE_FLOW_ITEM_TYPE_END; i++) {
		size_t sz = item_size(pattern[i].type);

		if (!UT_CHECK(sz > 0 && i < MOCK_ITEMS))
			return NULL;
		r->item[i].type = pattern[i].type;
		r->item[i].has_spec = pattern[i].spec != NULL;
		if (pattern[i].spec != NULL) {
			memcpy(&r->item[i].spec, pattern[i].spec, sz);
			memcpy(&r->item[i].mask, pattern[i].mask, sz);
		}
	}
	r->n = i;
	if (actions[0].type == RTE_FLOW_ACTION_TYPE_QUEUE)
		r->queue = ((const struct rte_flow_action_queue *)
			    actions[0].conf)->index;
	else if (actions[0].type == RTE_FLOW_ACTION_TYPE_RSS)
		r->queue = ((const struct rte_flow_action_rss *)
			    actions[0].conf)->queue[0];
	else
		return NULL;
	r->live = true;
	mock_created++;
	(void)port_id;
	return (struct rte_flow *)r;
}

static int
mock_destroy(uint16_t port_id, struct rte_flow *f, struct rte_flow_error *e)
{
	((struct mock_rule *)f)->live = false;
	mock_destroyed++;
	return 0;
}

static const struct net_flow_ops mock_ops = {
	.create = mock_create,
	.destroy = mock_destroy,
};

static bool
masked_eq(const void *a, const void *b, const void *mask, size_t n)
{
	const uint8_t *x = a, *y = b, *m = mask;
	size_t i;

	for (i = 0; i < n; i++)
		if ((x[i] & m[i]) != (y[i] & m[i]))
			return false;
	return true;
}

/* Whether the frame matches one item; off/et track the walk. */
static bool
item_match(const struct mock_item *it, const uint8_t *d, uint32_t *off,
	   uint16_t *et)
{
	switch (it->type) {
	case RTE_FLOW_ITEM_TYPE_ETH:
		*et = (uint16_t)(d[12] << 8 | d[13]);
		*off = 14;
		return !it->has_spec ||
		       masked_eq(&it->spec.eth.hdr.ether_type, d + 12,
				 &it->mask.eth.hdr.ether_type, 2);
	case RTE_FLOW_ITEM_TYPE_VLAN:
		if (*et != 0x8100)
			return false;
		*et = (uint16_t)(d[16] << 8 | d[17]);
		*off = 18;
		return masked_eq(&it->spec.vlan.hdr, d + 14,
				 &it->mask.vlan.hdr, 4);
	case RTE_FLOW_ITEM_TYPE_IPV4:
		return *et == 0x0800 &&
		       masked_eq(&it->spec.ip4.hdr, d + *off,
				 &it->mask.ip4.hdr, 20) &&
		       (*off += 20, true);
	case RTE_FLOW_ITEM_TYPE_IPV6:
		return *et == 0x86dd &&
		       masked_eq(&it->spec.ip6.hdr, d + *off,
				 &it->mask.ip6.hdr, 40) &&
		       (*off += 40, true);
	case RTE_FLOW_ITEM_TYPE_UDP:
		return d[*off - (*et == 0x0800 ? 11 : 34)] == 17 &&
		       masked_eq(&it->spec.udp.hdr, d + *off,
				 &it->mask.udp.hdr, 8);
	default:
		return false;
	}
}

/* The rx queue the mock NIC puts the frame on: the first live rule of the
 * lowest priority that matches; 0 (no rule: a NIC's default queue). */
static uint16_t
mock_queue(const struct rte_mbuf *m)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct mock_rule *best = NULL;
	unsigned int i, k;

	for (i = 0; i < MOCK_RULES; i++) {
		const struct mock_rule *r = &rules[i];
		uint32_t off = 0;
		uint16_t et = 0;
		bool ok = r->live;

		for (k = 0; ok && k < r->n; k++)
			ok = item_match(&r->item[k], d, &off, &et);
		if (ok && (best == NULL || r->prio < best->prio))
			best = r;
	}
	return best != NULL ? (uint16_t)best->queue : 0;
}

static unsigned int
live_rules(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < MOCK_RULES; i++)
		n += rules[i].live;
	return n;
}

/* ---------------------------------------------------------------------------
 * Ports, and what the wire peer and the kernel receive.
 */
static struct uroce_config cfg;

struct sink {
	unsigned int n;
	struct rte_mbuf *m[64];
};

static struct sink at_wire, at_kernel;

static bool
sink_take(void *arg, uint16_t q, struct rte_mbuf *m)
{
	struct sink *s = arg;

	if (s->n == RTE_DIM(s->m))
		return false;
	s->m[s->n++] = m;
	return true;
}

static void
sink_clear(struct sink *s)
{
	rte_pktmbuf_free_bulk(s->m, s->n);
	s->n = 0;
}

static void
port_cfg(unsigned int idx, const char *dev, const char *ip)
{
	ut_port_cfg(&cfg, idx, dev, ip);
	cfg.port[idx].exception_set = true;	/* none unless set */
}

struct trio {
	struct uroce_port *p, *w, *k;
	uint16_t w_queues;
	struct rte_mbuf *roce[8];	/* what P's rx returned */
	unsigned int nroce;
};

/* Receive on all three until nothing moves (bounded). */
static void
pump(struct trio *t)
{
	struct rte_mbuf *pk[32];
	unsigned int idle, k, i;
	uint16_t q;

	for (idle = 0; idle < 4; idle++) {
		k = uroce_port_rx(t->p, 0, pk, 32);
		for (i = 0; i < k; i++) {
			if (t->nroce < RTE_DIM(t->roce))
				t->roce[t->nroce++] = pk[i];
			else
				rte_pktmbuf_free(pk[i]);
		}
		for (q = 0; q < t->w_queues; q++) {
			i = uroce_port_rx(t->w, q, pk, 32);
			rte_pktmbuf_free_bulk(pk, i);
			k += i;
		}
		i = uroce_port_rx(t->k, 0, pk, 32);
		rte_pktmbuf_free_bulk(pk, i);
		k += i;
		if (k > 0)
			idle = 0;
	}
}

/* A frame from W into the mock NIC: the queue its rules pick (0 when
 * flow is false: software dispatch, one queue). */
static void
wire_send(struct trio *t, const struct ut_frame *f, uint8_t *bytes,
	  bool flow, uint16_t want_q)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(uroce_port_pool(t->w));
	uint16_t q;

	if (!UT_CHECK(m != NULL))
		return;
	ut_frame_build(f, bytes, (uint8_t)f->len);
	memcpy(rte_pktmbuf_append(m, (uint16_t)f->len), bytes, f->len);
	q = flow ? mock_queue(m) : 0;
	UT_CHECK_EQ(q, want_q);
	UT_CHECK_EQ(uroce_port_tx(t->w, q, &m, 1), 1);
	pump(t);
}

static bool
same_bytes(const struct rte_mbuf *m, const uint8_t *b, uint32_t len)
{
	return rte_pktmbuf_pkt_len(m) == len &&
	       memcmp(rte_pktmbuf_mtod(m, const void *), b, len) == 0;
}

/* Frames of the wire: (P's addresses) 10.7.0.1 is the stack's, 10.7.0.5
 * the kernel's, 10.7.0.99 nobody's on P. */
static struct ut_frame
frame(const struct trio *t, uint8_t proto, uint32_t dip, uint16_t dport)
{
	struct ut_frame f = { .vlan = -1, .ip = 4, .proto = proto,
			      .sip = 0x0a070002, .dip = dip, .sport = 49152,
			      .dport = dport, .len = 120 };

	memcpy(f.dmac, uroce_port_mac(t->p), 6);
	memcpy(f.smac, uroce_port_mac(t->w), 6);
	return f;
}

static void
check_dispatch(struct trio *t, bool flow)
{
	struct uroce_port_stats p0 = ut_port_stats(t->p), p1, k0 = ut_port_stats(t->k);
	uint16_t exc_q = flow ? 1 : 0;
	struct ut_frame f;
	uint8_t b[256];
	union uroce_gid g, gg[2];
	struct rte_ether_addr mac;
	struct rte_mbuf *m;
	rte_be32_t kip = RTE_BE32(0x0a070005);

	/* RoCEv2 to the stack's address: the stack's queue, to the stack. */
	f = frame(t, 17, 0x0a070001, UROCE_UDP_PORT);
	wire_send(t, &f, b, flow, 0);
	UT_CHECK(t->nroce == 1 && same_bytes(t->roce[0], b, f.len));
	rte_pktmbuf_free_bulk(t->roce, t->nroce);
	t->nroce = 0;
	UT_CHECK_EQ(at_kernel.n, 0);
	/* ICMP to the kernel's address; RoCEv2 to someone else's. */
	f = frame(t, 1, 0x0a070005, 0);
	wire_send(t, &f, b, flow, exc_q);
	UT_CHECK(at_kernel.n == 1 && same_bytes(at_kernel.m[0], b, f.len));
	sink_clear(&at_kernel);
	f = frame(t, 17, 0x0a070063, UROCE_UDP_PORT);
	wire_send(t, &f, b, flow, exc_q);
	UT_CHECK_EQ(t->nroce, 0);
	p1 = ut_port_stats(t->p);
	UT_CHECK_EQ(p1.exc_in - p0.exc_in, 2);
	UT_CHECK_EQ(p1.rx_pkts - p0.rx_pkts, 1);
	UT_CHECK_EQ(p1.non_roce, p0.non_roce);
	/* The kernel got the RoCEv2 frame: K, the port standing in for it,
	 * takes RoCEv2 to an address not its own as any other frame (its
	 * sink), not as RoCEv2 for its QPs. */
	UT_CHECK(at_kernel.n == 1 && same_bytes(at_kernel.m[0], b, f.len));
	UT_CHECK_EQ(ut_port_stats(t->k).rx_pkts - k0.rx_pkts, 0);
	sink_clear(&at_kernel);
	/* W asks for the kernel's address: P sees the ARP and copies it to
	 * the kernel, whose answer goes out through P. */
	uroce_gid_from_v4(&g, kip);
	UT_CHECK_EQ(uroce_port_resolve(t->w, &g, &mac), -EAGAIN);
	uroce_port_poll_ctrl(t->w, 0, 1);
	pump(t);
	UT_CHECK_EQ(uroce_port_resolve(t->w, &g, &mac), 0);
	UT_CHECK(rte_is_same_ether_addr(&mac, uroce_port_mac(t->p)));
	UT_CHECK_EQ(ut_port_stats(t->p).arp_rx - p1.arp_rx, 1);
	UT_CHECK(ut_port_stats(t->p).exc_out - p1.exc_out >= 1);
	/* The kernel sends an ICMP frame: out on the wire, byte-exact. */
	f = frame(t, 1, 0x0a070002, 0);
	memcpy(f.dmac, uroce_port_mac(t->w), 6);
	memcpy(f.smac, uroce_port_mac(t->p), 6);
	f.sip = 0x0a070005;
	sink_clear(&at_wire);
	ut_frame_build(&f, b, 9);
	m = rte_pktmbuf_alloc(uroce_port_pool(t->k));
	memcpy(rte_pktmbuf_append(m, (uint16_t)f.len), b, f.len);
	p1 = ut_port_stats(t->p);
	UT_CHECK_EQ(uroce_port_tx(t->k, 0, &m, 1), 1);
	pump(t);
	UT_CHECK(at_wire.n == 1 && same_bytes(at_wire.m[0], b, f.len));
	UT_CHECK_EQ(ut_port_stats(t->p).exc_out - p1.exc_out, 1);
	sink_clear(&at_wire);
	/* IPv6: W resolves P's link-local GID (P answers; the kernel gets a
	 * copy), then an ICMPv6 echo goes to the kernel, not the stack. */
	UT_CHECK_EQ(uroce_port_gids(t->p, gg, 2), 2);
	g = gg[1];
	p1 = ut_port_stats(t->p);
	UT_CHECK_EQ(uroce_port_resolve(t->w, &g, &mac), -EAGAIN);
	uroce_port_poll_ctrl(t->w, 0, 2);
	pump(t);
	UT_CHECK_EQ(uroce_port_resolve(t->w, &g, &mac), 0);
	UT_CHECK(rte_is_same_ether_addr(&mac, uroce_port_mac(t->p)));
	UT_CHECK_EQ(ut_port_stats(t->p).nd_rx - p1.nd_rx, 1);
	f = frame(t, 58, 0, 0);
	f.ip = 6;
	f.len = 14 + 40 + 16;
	sink_clear(&at_kernel);
	p1 = ut_port_stats(t->p);
	wire_send(t, &f, b, flow, 0);
	UT_CHECK(at_kernel.n == 1 && same_bytes(at_kernel.m[0], b, f.len));
	UT_CHECK_EQ(ut_port_stats(t->p).exc_in - p1.exc_in, 1);
	sink_clear(&at_kernel);
	UT_CHECK_EQ(ut_port_stats(t->p).exc_drop, 0);
}

/* P, W and K over ringlinks named by tag; P steers as steer says. */
static bool
trio_open(struct trio *t, const char *tag, enum uroce_config_steer steer)
{
	char dev[64];

	memset(t, 0, sizeof(*t));
	snprintf(dev, sizeof(dev), "ringlink:%sn,side=0", tag);
	port_cfg(0, dev, "10.7.0.1");
	snprintf(cfg.port[0].exception, sizeof(cfg.port[0].exception),
		 "ringlink:%sx,side=0", tag);
	cfg.port[0].steer = steer;
	snprintf(dev, sizeof(dev), "ringlink:%sn,side=1", tag);
	port_cfg(1, dev, "10.7.0.2");
	snprintf(dev, sizeof(dev), "ringlink:%sx,side=1", tag);
	port_cfg(2, dev, "10.7.0.5");
	t->p = ut_port_open(&cfg, 0, 1);
	if (t->p == NULL)
		return false;
	cfg.port[2].has_mac = true;
	cfg.port[2].mac = *uroce_port_mac(t->p);
	/* P's queue and (unless soft) its exception queue. */
	t->w_queues = steer == UROCE_STEER_SOFT ? 1 : 2;
	t->w = ut_port_open(&cfg, 1, t->w_queues);
	t->k = ut_port_open(&cfg, 2, 1);
	if (t->w == NULL || t->k == NULL)
		return false;
	uroce_port_set_raw(t->w, sink_take, &at_wire);
	uroce_port_set_raw(t->k, sink_take, &at_kernel);
	pump(t);
	sink_clear(&at_wire);
	sink_clear(&at_kernel);
	return true;
}

static void
trio_close(struct trio *t)
{
	uroce_port_close(t->p);
	uroce_port_close(t->w);
	uroce_port_close(t->k);
	sink_clear(&at_wire);
	sink_clear(&at_kernel);
}

static void
test_flow(void)
{
	struct trio t;

	mock_refuse = false;
	if (trio_open(&t, "f", UROCE_STEER_FLOW)) {
		/* RoCEv2 for the IPv4 and the link-local GID, ARP, ICMPv6,
		 * default. */
		UT_CHECK_EQ(live_rules(), 5);
		check_dispatch(&t, true);
	}
	trio_close(&t);
	UT_CHECK_EQ(live_rules(), 0);
	UT_CHECK_EQ(mock_created, mock_destroyed);
}

static void
test_soft(void)
{
	struct uroce_port *p = NULL;
	char err[256] = "";
	struct trio t;

	/* The PMD refuses: auto dispatches in software. */
	mock_refuse = true;
	if (trio_open(&t, "a", UROCE_STEER_AUTO)) {
		UT_CHECK_EQ(live_rules(), 0);
		check_dispatch(&t, false);
	}
	trio_close(&t);
	/* soft: no rules asked for at all. */
	mock_refuse = false;
	mock_created = 0;
	if (trio_open(&t, "s", UROCE_STEER_SOFT)) {
		UT_CHECK_EQ(mock_created, 0);
		check_dispatch(&t, false);
	}
	trio_close(&t);
	/* flow on a PMD that refuses: open fails, naming the key. */
	mock_refuse = true;
	port_cfg(0, "ringlink:rn,side=0", "10.7.0.1");
	snprintf(cfg.port[0].exception, sizeof(cfg.port[0].exception),
		 "ringlink:rx,side=0");
	cfg.port[0].steer = UROCE_STEER_FLOW;
	UT_CHECK_EQ(uroce_port_open(&cfg, 0, 1, &p, err, sizeof(err)),
		    -ENOTSUP);
	UT_CHECK(strstr(err, "steer") != NULL);
	UT_NOTE("%s", err);
	/* A bad exception interface: one line naming the key. */
	mock_refuse = false;
	snprintf(cfg.port[0].exception, sizeof(cfg.port[0].exception),
		 "net_nosuchdriver0");
	UT_CHECK(uroce_port_open(&cfg, 0, 1, &p, err, sizeof(err)) < 0);
	UT_CHECK(strstr(err, "[port] exception = net_nosuchdriver0") == err);
}

int
main(int argc, char **argv)
{
	if (ut_eal_start(argv[0]) < 0)
		return 1;
	net_steer_set_ops(&mock_ops);
	test_flow();
	test_soft();
	net_steer_set_ops(NULL);
	rte_eal_cleanup();
	return ut_summary();
}
