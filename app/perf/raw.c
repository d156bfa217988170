/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The raw ceiling: plain rte_eth_tx_burst()/rte_eth_rx_burst() on the same
 * port, queue and core as the transport, with frames of the length the
 * transport sends (Ethernet, IPv4, UDP 4791, a BTH, payload, ICRC bytes),
 * and no transport at all: no segmentation, no ACKs, no completions. The
 * engine is not polled meanwhile, so the port is ours. The frames carry
 * destination QP 0xFFFFFF and no valid ICRC, so that a stray one reaching
 * the stack later is dropped by the parser.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "perf_priv.h"

#define BURST		32
#define HDR_LEN		(14 + 20 + 8 + 12)	/* Ethernet, IPv4, UDP, BTH */
#define PSN_OFF		(14 + 20 + 8 + 9)
#define DRAIN_S		0.05	/* quiet time that ends the server's count */

struct raw {
	struct perf *p;
	uint16_t pid;
	struct rte_mempool *pool;
	uint32_t len;				/* frame bytes */
	uint8_t hdr[HDR_LEN];
};

/* The IPv4 address of an IPv4-mapped GID (::ffff:a.b.c.d). */
static rte_be32_t
gid_ip4(const uint8_t *gid)
{
	rte_be32_t a;

	memcpy(&a, gid + 12, 4);
	return a;
}

static void
raw_init(struct raw *r, struct perf *p, uint32_t len)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)r->hdr;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint8_t *bth = (uint8_t *)(udp + 1);

	memset(r, 0, sizeof(*r));
	r->p = p;
	r->pid = uroce_port_id(p->port);
	r->pool = uroce_port_pool(p->port);
	r->len = len;
	memcpy(&eth->dst_addr, p->peer.mac, 6);
	memcpy(&eth->src_addr, p->me.mac, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(len - 14));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = gid_ip4(p->me.gid);
	ip->dst_addr = gid_ip4(p->peer.gid);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16(0xc000);
	udp->dst_port = rte_cpu_to_be_16(4791);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(len - 34));
	bth[0] = 0x0a;				/* RC RDMA WRITE Only */
	bth[2] = bth[3] = 0xff;			/* P_Key */
	bth[5] = bth[6] = bth[7] = 0xff;	/* destination QP 0xFFFFFF */
}

static void
set_psn(struct rte_mbuf *m, uint32_t psn)
{
	uint8_t *b = rte_pktmbuf_mtod(m, uint8_t *) + PSN_OFF;

	b[0] = (uint8_t)(psn >> 16);
	b[1] = (uint8_t)(psn >> 8);
	b[2] = (uint8_t)psn;
}

static uint32_t
get_psn(const struct rte_mbuf *m)
{
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *) + PSN_OFF;

	if (m->data_len < PSN_OFF + 3)
		return UINT32_MAX;
	return (uint32_t)b[0] << 16 | (uint32_t)b[1] << 8 | b[2];
}

/* n frames: the headers written, the payload left as the pool has it
 * (its bytes do not matter; the port copies them all the same). */
static int
raw_alloc(struct raw *r, struct rte_mbuf **m, unsigned int n)
{
	unsigned int i;

	if (rte_pktmbuf_alloc_bulk(r->pool, m, n) != 0)
		return -ENOBUFS;
	for (i = 0; i < n; i++) {
		memcpy(rte_pktmbuf_mtod(m[i], uint8_t *), r->hdr, HDR_LEN);
		m[i]->data_len = (uint16_t)r->len;
		m[i]->pkt_len = r->len;
	}
	return 0;
}

/* One tx burst of the phase's frames, a fresh burst once the last one is
 * gone (at most iters frames in all, 0: no limit): the frames the port
 * took, or -ENOBUFS (no mbufs). */
static int
raw_tx_some(struct raw *r, struct rte_mbuf **m, uint16_t *have,
	    uint64_t *sent, uint64_t iters)
{
	uint16_t k, n;

	if (*have == 0) {
		k = BURST;
		if (iters != 0)
			k = (uint16_t)RTE_MIN((uint64_t)BURST, iters - *sent);
		if (raw_alloc(r, m, k) < 0)
			return -ENOBUFS;
		*have = k;
	}
	n = rte_eth_tx_burst(r->pid, 0, m, *have);
	if (n > 0) {
		memmove(m, m + n, (*have - n) * sizeof(m[0]));
		*have = (uint16_t)(*have - n);
		*sent += n;
	}
	return n;
}

int
perf_raw_bw_client(struct perf *p, const struct perf_phase *ph,
		   struct perf_bw_res *res)
{
	struct rte_mbuf *m[BURST], *rx[BURST];
	uint64_t start, end, now, sent = 0, stall;
	uint16_t have = 0, n;
	struct raw r;
	int ret;

	memset(res, 0, sizeof(*res));
	raw_init(&r, p, ph->size);
	start = now = rte_rdtsc();
	end = start + (uint64_t)(ph->duration * (double)p->hz);
	stall = start;
	while (!perf_stop && (ph->iters != 0 ? sent < ph->iters : now < end)) {
		ret = raw_tx_some(&r, m, &have, &sent, ph->iters);
		if (ret < 0) {
			fprintf(stderr, "uroce-perf: raw: no mbufs\n");
			return ret;
		}
		if (ret > 0)
			stall = now;
		if (p->twin != NULL)
			perf_twin_step(p->twin);
		/* Anything coming back is not ours to keep; with --bidir it
		 * is the peer's half, counted. */
		if (p->raw_rx != NULL) {
			perf_raw_bw_server_step(p, p->raw_rx);
		} else {
			n = rte_eth_rx_burst(r.pid, 0, rx, BURST);
			rte_pktmbuf_free_bulk(rx, n);
		}
		now = rte_rdtsc();
		if (now - stall > (uint64_t)(PERF_WAIT_S * (double)p->hz)) {
			fprintf(stderr, "uroce-perf: raw: the port takes no "
				"frame\n");
			rte_pktmbuf_free_bulk(m, have);
			return -ETIMEDOUT;
		}
	}
	rte_pktmbuf_free_bulk(m, have);
	res->frames = sent;
	res->cycles = now - start;
	res->secs = (double)res->cycles / (double)p->hz;
	return 0;
}

/* --loop --bidir: the twin's own raw frames, a burst per step from the
 * client's loop (loop.c); what arrives at the twin its server step counts. */
struct perf_raw_half {
	struct raw r;
	struct rte_mbuf *m[BURST];
	uint16_t have;
	uint64_t sent, iters, end, stall, last;	/* stall: no frame taken */
	bool done;
};

int
perf_raw_half_open(struct perf *tw, const struct perf_phase *ph)
{
	struct perf_raw_half *h = calloc(1, sizeof(*h));

	if (h == NULL)
		return -ENOMEM;
	raw_init(&h->r, tw, ph->size);
	h->iters = ph->iters;
	h->last = rte_rdtsc();
	h->end = h->last + (uint64_t)(ph->duration * (double)tw->hz);
	h->stall = (uint64_t)(PERF_WAIT_S * (double)tw->hz);
	tw->raw_half = h;
	return 0;
}

void
perf_raw_half_step(struct perf *tw)
{
	struct perf_raw_half *h = tw->raw_half;
	uint64_t now;

	if (h == NULL || h->done)
		return;
	now = rte_rdtsc();
	if (now - h->last > h->stall)
		fprintf(stderr, "uroce-perf: raw: the second port takes no "
			"frame\n");
	if (perf_stop || now - h->last > h->stall ||
	    (h->iters != 0 ? h->sent >= h->iters : now >= h->end)) {
		h->done = true;
		return;
	}
	/* No mbufs (< 0): the pool is short, the next step tries again. */
	if (raw_tx_some(&h->r, h->m, &h->have, &h->sent, h->iters) > 0)
		h->last = now;
}

bool
perf_raw_half_done(const struct perf *tw)
{
	const struct perf_raw_half *h = tw->raw_half;

	return h == NULL || h->done;
}

void
perf_raw_half_close(struct perf *tw)
{
	struct perf_raw_half *h = tw->raw_half;

	if (h == NULL)
		return;
	rte_pktmbuf_free_bulk(h->m, h->have);
	free(h);
	tw->raw_half = NULL;
}

/* What arrived since the last step: counted and freed; p->twin_first and
 * twin_last the TSC of the first and the last frame. */
void
perf_raw_bw_server_step(struct perf *p, struct perf_bw_res *res)
{
	struct rte_mbuf *m[BURST];
	uint16_t n, i;
	uint64_t now;

	n = rte_eth_rx_burst(uroce_port_id(p->port), 0, m, BURST);
	if (n == 0)
		return;
	now = rte_rdtsc();
	if (res->frames == 0)
		p->twin_first = now;
	p->twin_last = now;
	res->frames += n;
	for (i = 0; i < n; i++)
		res->bytes += m[i]->pkt_len;
	rte_pktmbuf_free_bulk(m, n);
}

/* Count what arrives until the client's next control message and a quiet
 * spell after it; the window is first to last frame. */
int
perf_raw_bw_server(struct perf *p, const struct perf_phase *ph,
		   struct perf_bw_res *res)
{
	uint64_t drain = (uint64_t)(DRAIN_S * (double)p->hz);
	uint64_t now, loops = 0, quiet = 0, frames = 0;
	bool ending = false;

	memset(res, 0, sizeof(*res));
	if (p->o->bidir) {
		struct perf_bw_res own;
		int ret;

		p->raw_rx = res;
		ret = perf_raw_bw_client(p, ph, &own);
		p->raw_rx = NULL;
		if (ret < 0)
			return ret;
		frames = res->frames;
		quiet = rte_rdtsc();
	}
	for (;;) {
		perf_raw_bw_server_step(p, res);
		now = rte_rdtsc();
		if (res->frames != frames) {
			frames = res->frames;
			quiet = now;
		}
		if (!ending && (++loops & 1023) == 0 && perf_ctl_ready(p->fd)) {
			ending = true;
			quiet = now;
		}
		if (ending && now - quiet > drain)
			break;
	}
	res->cycles = p->twin_last - p->twin_first;
	res->secs = (double)res->cycles / (double)p->hz;
	return 0;
}

/* ------------------------------------------------------------------------
 * Ping-pong: the client sends one frame with a sequence number in the PSN
 * field and waits for it to come back; the server sends every frame
 * straight back. Frames with another number (strays) are dropped.
 */
/* Every frame that arrived goes straight back. */
void
perf_raw_pong_step(struct perf *p, struct perf_lat_res *res)
{
	uint16_t pid = uroce_port_id(p->port), n, s;
	struct rte_mbuf *m[BURST];

	n = rte_eth_rx_burst(pid, 0, m, BURST);
	if (n > 0) {
		s = rte_eth_tx_burst(pid, 0, m, n);
		rte_pktmbuf_free_bulk(m + s, n - s);
		res->errors += n - s;
	}
}

static int
raw_pong(struct raw *r, struct perf_lat_res *res)
{
	uint64_t loops = 0;

	for (;;) {
		perf_raw_pong_step(r->p, res);
		if ((++loops & 1023) == 0 && perf_ctl_ready(r->p->fd))
			return 0;
	}
}

static int
raw_ping(struct raw *r, uint32_t seq)
{
	uint64_t since = rte_rdtsc();
	struct rte_mbuf *m[BURST];
	bool back = false;
	uint16_t n, i;

	if (raw_alloc(r, m, 1) < 0)
		return -ENOBUFS;
	set_psn(m[0], seq);
	if (rte_eth_tx_burst(r->pid, 0, m, 1) != 1) {
		rte_pktmbuf_free(m[0]);
		return -EAGAIN;
	}
	while (!back) {
		if (r->p->twin != NULL)
			perf_twin_step(r->p->twin);
		n = rte_eth_rx_burst(r->pid, 0, m, BURST);
		for (i = 0; i < n; i++)
			back |= get_psn(m[i]) == seq;
		rte_pktmbuf_free_bulk(m, n);
		if (!back && rte_rdtsc() - since >
		    (uint64_t)(PERF_WAIT_S * (double)r->p->hz)) {
			fprintf(stderr, "uroce-perf: raw ping %u lost\n", seq);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

int
perf_raw_lat(struct perf *p, const struct perf_phase *ph,
	     struct perf_lat_res *res)
{
	uint64_t i, t0, end;
	struct raw r;
	int ret;

	perf_hist_reset(&res->h);
	res->errors = 0;
	raw_init(&r, p, ph->size);
	if (p->o->server)
		return raw_pong(&r, res);
	end = rte_rdtsc() + (uint64_t)(ph->duration * (double)p->hz);
	for (i = 0; !perf_stop && (ph->iters != 0 ? i < ph->iters + 8 :
	     (i < 8 || rte_rdtsc() < end)); i++) {
		t0 = rte_rdtsc();
		ret = raw_ping(&r, (uint32_t)(i & 0xffffff));
		if (ret == -EAGAIN)
			continue;
		if (ret < 0) {
			res->errors++;
			return ret;
		}
		if (i >= 8)	/* as lat.c, a warm-up */
			perf_hist_add(&res->h, perf_cyc_ns(p, rte_rdtsc() - t0,
							    2));
	}
	return 0;
}
