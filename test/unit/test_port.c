/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Ports over ringlinks (lib/net, pmd_glue): ARP resolution (learnt, static,
 * own, unknown -> -EHOSTUNREACH on a fake clock), the link-local GID and
 * IPv6 neighbour discovery (hostile solicitations counted), frames intact across the
 * link (chained ones linearized, per queue), non-RoCE counted, the dev
 * string errors, seeded fault injection (drop counted exactly, repeatable
 * per seed, dup/corrupt/reorder shapes, rx and tx), and a pcapng capture
 * checked block by block and with tshark when it is installed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "uroce_config.h"
#include "uroce_glue.h"
#include "uroce_port.h"
#include "uroce_test.h"
#include "uroce_test_eal.h"
#include "uroce_test_port.h"
#include "uroce_wire.h"

#define MAX_FRAMES	2048
#define PPM_ALL		UROCE_CONFIG_PPM

static struct uroce_config cfg;

static union uroce_gid
gid4(const char *ip)
{
	union uroce_gid g;
	rte_be32_t a;

	inet_pton(AF_INET, ip, &a);
	uroce_gid_from_v4(&g, a);
	return g;
}

/* Receive on both ports until nothing moves (bounded), keeping at most
 * MAX_FRAMES of b's RoCE frames in got[] (freed by the caller). */
static unsigned int
pump(struct uroce_port *a, struct uroce_port *b, uint16_t q,
     struct rte_mbuf **got)
{
	struct rte_mbuf *pk[64];
	unsigned int n = 0, idle, i, k;

	for (idle = 0; idle < 4; idle++) {
		k = uroce_port_rx(a, q, pk, 64);
		rte_pktmbuf_free_bulk(pk, k);
		if (k > 0)
			idle = 0;
		k = uroce_port_rx(b, q, pk, 64);
		for (i = 0; i < k; i++) {
			if (got != NULL && n < MAX_FRAMES)
				got[n++] = pk[i];
			else
				rte_pktmbuf_free(pk[i]);
		}
		if (k > 0)
			idle = 0;
	}
	return n;
}

/* A RoCEv2 RC SEND of plen random bytes from a to b, PSN seq. */
static struct rte_mbuf *
roce_frame(struct uroce_port *a, struct uroce_port *b, uint32_t seq,
	   uint32_t plen)
{
	uint8_t payload[9000];
	struct uroce_l2l3 l = { .hop_limit = 64 };
	struct uroce_bth_fields bth = { .opcode = UROCE_OPC_RC_SEND_ONLY,
					.pkey = 0xffff, .dqpn = 17, .psn = seq };
	struct uroce_ext_fields ext = { 0 };
	struct rte_mbuf *m = rte_pktmbuf_alloc(uroce_port_pool(a));
	union uroce_gid g[2];
	uint32_t len, i;
	uint8_t *d;

	if (m == NULL)
		return NULL;
	memcpy(l.smac, uroce_port_mac(a), 6);
	memcpy(l.dmac, uroce_port_mac(b), 6);
	uroce_port_gids(a, &g[0], 1);
	uroce_port_gids(b, &g[1], 1);
	l.sgid = g[0];
	l.dgid = g[1];
	l.udp_sport = uroce_wire_udp_sport(17, 18);
	for (i = 0; i < plen; i++)
		payload[i] = (uint8_t)ut_rand();
	len = uroce_wire_hdrs_len(&l, bth.opcode) + plen +
	      uroce_wire_trailer_len(plen);
	d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	if (d == NULL || uroce_wire_build(d, len, &l, &bth, &ext, payload,
					  plen) != len) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	return m;
}

static uint32_t
frame_psn(const struct rte_mbuf *m)
{
	struct uroce_pkt pkt;

	if (uroce_wire_parse(rte_pktmbuf_mtod(m, const uint8_t *),
			     rte_pktmbuf_pkt_len(m), 0, &pkt) != UROCE_WIRE_OK)
		return UINT32_MAX;
	return pkt.bth.psn;
}

/* ---------------------------------------------------------------------------
 * Neighbours.
 */
static void
test_arp(struct uroce_port *a, struct uroce_port *b)
{
	union uroce_gid gb = gid4("10.0.0.2"), ga = gid4("10.0.0.1");
	union uroce_gid gs = gid4("10.0.0.9");
	struct rte_ether_addr mac, want = { { 2, 0, 0, 0, 0, 9 } };
	uint64_t arp_tx;

	/* The gratuitous ARPs of both opens arrive and are consumed. */
	pump(a, b, 0, NULL);
	UT_CHECK_EQ(ut_port_stats(a).arp_rx, 1);
	UT_CHECK_EQ(ut_port_stats(b).arp_rx, 1);
	UT_CHECK_EQ(uroce_port_resolve(a, &gb, &mac), -EAGAIN);
	UT_CHECK_EQ(uroce_port_resolve(a, &gb, &mac), -EAGAIN);
	uroce_port_poll_ctrl(a, 0, 1000);
	UT_CHECK_EQ(ut_port_stats(a).arp_tx, 2);	/* the announcement + 1 */
	pump(a, b, 0, NULL);
	UT_CHECK_EQ(ut_port_stats(b).arp_tx, 2);	/* announcement + the reply */
	UT_CHECK_EQ(uroce_port_resolve(a, &gb, &mac), 0);
	UT_CHECK(rte_is_same_ether_addr(&mac, uroce_port_mac(b)));
	/* b learnt a from the request addressed to it. */
	UT_CHECK_EQ(uroce_port_resolve(b, &ga, &mac), 0);
	UT_CHECK(rte_is_same_ether_addr(&mac, uroce_port_mac(a)));
	/* Static and own entries answer at once, without ARP. */
	arp_tx = ut_port_stats(a).arp_tx;
	UT_CHECK_EQ(uroce_port_resolve(a, &gs, &mac), 0);
	UT_CHECK(rte_is_same_ether_addr(&mac, &want));
	UT_CHECK_EQ(uroce_port_resolve(a, &ga, &mac), 0);
	UT_CHECK(rte_is_same_ether_addr(&mac, uroce_port_mac(a)));
	uroce_port_poll_ctrl(a, 0, 2000);
	UT_CHECK_EQ(ut_port_stats(a).arp_tx, arp_tx);
	UT_CHECK(rte_is_same_ether_addr(uroce_port_mac(a),
		 &(struct rte_ether_addr){ { 2, 0x75, 0x72, 0, 0, 0 } }) == 0);
	UT_CHECK_EQ(uroce_port_mac(a)->addr_bytes[0], 0x02);
	UT_CHECK_EQ(uroce_port_mac(b)->addr_bytes[5], 1);
}

static void
test_arp_unreachable(struct uroce_port *a, struct uroce_port *b)
{
	union uroce_gid gx = gid4("10.0.0.77"), g6;
	struct rte_ether_addr mac;
	uint64_t hz = rte_get_tsc_hz(), t0 = 1000000, tx0, b_rx0;
	unsigned int i;

	tx0 = ut_port_stats(a).arp_tx;
	b_rx0 = ut_port_stats(b).arp_rx;
	UT_CHECK_EQ(uroce_port_resolve(a, &gx, &mac), -EAGAIN);
	for (i = 0; i < 5; i++) {
		/* Once per 100 ms: a poll half-way sends nothing. */
		uroce_port_poll_ctrl(a, 0, t0 + i * hz / 10);
		uroce_port_poll_ctrl(a, 0, t0 + i * hz / 10 + hz / 20);
		UT_CHECK_EQ(ut_port_stats(a).arp_tx, tx0 + i + 1);
		UT_CHECK_EQ(uroce_port_resolve(a, &gx, &mac), -EAGAIN);
		UT_NOTE("try %u", i);
	}
	uroce_port_poll_ctrl(a, 0, t0 + 5 * hz / 10);
	UT_CHECK_EQ(ut_port_stats(a).arp_tx, tx0 + 5);
	UT_CHECK_EQ(uroce_port_resolve(a, &gx, &mac), -EHOSTUNREACH);
	/* Asked again: a new round. */
	UT_CHECK_EQ(uroce_port_resolve(a, &gx, &mac), -EAGAIN);
	uroce_port_poll_ctrl(a, 0, t0 + 6 * hz / 10);
	UT_CHECK_EQ(ut_port_stats(a).arp_tx, tx0 + 6);
	/* b saw the requests (not for it: nothing learnt, no reply). */
	pump(a, b, 0, NULL);
	UT_CHECK_EQ(ut_port_stats(b).arp_rx, b_rx0 + 6);
	UT_CHECK_EQ(uroce_port_resolve(b, &gx, &mac), -EAGAIN);
	/* IPv6 without a [neigh] entry: a neighbour solicitation. */
	memset(&g6, 0, sizeof(g6));
	g6.raw[0] = 0xfd;
	g6.raw[15] = 1;
	tx0 = ut_port_stats(a).nd_tx;
	UT_CHECK_EQ(uroce_port_resolve(a, &g6, &mac), -EAGAIN);
	uroce_port_poll_ctrl(a, 0, t0 + 7 * hz / 10);
	UT_CHECK_EQ(ut_port_stats(a).nd_tx, tx0 + 1);
	pump(a, b, 0, NULL);
	g6.raw[15] = 9;
	UT_CHECK_EQ(uroce_port_resolve(a, &g6, &mac), 0);
	UT_CHECK_EQ(mac.addr_bytes[5], 0x66);
}

/* ---------------------------------------------------------------------------
 * IPv6 neighbour discovery: the link-local GID of the MAC, NS/NA both
 * ways, and hostile NS frames (built here byte by byte, RFC 4861 4.3)
 * dropped and counted.
 */

/* fe80::/64 with the modified EUI-64 of mac (RFC 4291 appendix A). */
static union uroce_gid
gid_ll(const struct rte_ether_addr *mac)
{
	const uint8_t *m = mac->addr_bytes;
	union uroce_gid g = { .raw = { 0xfe, 0x80, [8] = (uint8_t)(m[0] ^ 2),
		m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5] } };

	return g;
}

/* RFC 1071 sum of the ICMPv6 message and its pseudo-header. */
static uint16_t
icmp6_sum(const uint8_t *ip6, const uint8_t *icmp, uint32_t len)
{
	uint32_t sum = len + 58, i;

	for (i = 8; i < 40; i += 2)
		sum += (uint32_t)ip6[i] << 8 | ip6[i + 1];
	for (i = 0; i < len; i += 2)
		sum += (uint32_t)icmp[i] << 8 | (i + 1 < len ? icmp[i + 1] : 0);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

enum ns_flaw { NS_GOOD, NS_HOPS, NS_CSUM, NS_OPTLEN0, NS_CODE };

/* An NS from "from" (link-local, its MAC in the SLLA option) for target,
 * with one flaw. */
static struct rte_mbuf *
ns_frame(struct uroce_port *from, const union uroce_gid *target,
	 enum ns_flaw flaw)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(uroce_port_pool(from));
	union uroce_gid src = gid_ll(uroce_port_mac(from));
	uint8_t *d, *ip, *icmp;
	uint16_t ck;

	if (m == NULL)
		return NULL;
	d = (uint8_t *)rte_pktmbuf_append(m, 14 + 40 + 32);
	if (d == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(d, 0, 14 + 40 + 32);
	d[0] = 0x33; d[1] = 0x33; d[2] = 0xff;
	memcpy(d + 3, &target->raw[13], 3);
	memcpy(d + 6, uroce_port_mac(from), 6);
	d[12] = 0x86; d[13] = 0xdd;
	ip = d + 14;
	ip[0] = 0x60;
	ip[5] = 32;			/* payload length */
	ip[6] = 58;			/* ICMPv6 */
	ip[7] = flaw == NS_HOPS ? 64 : 255;
	memcpy(ip + 8, src.raw, 16);
	ip[24] = 0xff; ip[25] = 0x02; ip[35] = 1; ip[36] = 0xff;
	memcpy(ip + 37, &target->raw[13], 3);
	icmp = ip + 40;
	icmp[0] = 135;
	icmp[1] = flaw == NS_CODE ? 1 : 0;
	memcpy(icmp + 8, target->raw, 16);
	icmp[24] = 1;			/* SLLA */
	icmp[25] = flaw == NS_OPTLEN0 ? 0 : 1;
	memcpy(icmp + 26, uroce_port_mac(from), 6);
	ck = icmp6_sum(ip, icmp, 32);
	if (flaw == NS_CSUM)
		ck ^= 0x0100;
	icmp[2] = (uint8_t)(ck >> 8);
	icmp[3] = (uint8_t)ck;
	return m;
}

static void
test_ndp(struct uroce_port *a, struct uroce_port *b)
{
	union uroce_gid g[4], lla = gid_ll(uroce_port_mac(a));
	union uroce_gid llb = gid_ll(uroce_port_mac(b));
	struct rte_ether_addr mac;
	struct uroce_port_stats sa = ut_port_stats(a), sb = ut_port_stats(b);
	struct rte_mbuf *m;
	enum ns_flaw fl;

	/* GID 1: the link-local address of the MAC, after the IPv4 GID. */
	UT_CHECK_EQ(uroce_port_gids(a, g, 4), 2);
	UT_CHECK(uroce_gid_is_v4(&g[0]));
	UT_CHECK_MEM(g[1].raw, lla.raw, 16);
	UT_CHECK_EQ(uroce_port_resolve(a, &lla, &mac), 0);
	/* a asks for b: one NS; b answers with one NA and learns a. */
	UT_CHECK_EQ(uroce_port_resolve(a, &llb, &mac), -EAGAIN);
	uroce_port_poll_ctrl(a, 0, 5000000);
	UT_CHECK_EQ(ut_port_stats(a).nd_tx, sa.nd_tx + 1);
	pump(a, b, 0, NULL);
	UT_CHECK_EQ(ut_port_stats(b).nd_rx, sb.nd_rx + 1);
	UT_CHECK_EQ(ut_port_stats(b).nd_tx, sb.nd_tx + 1);
	UT_CHECK_EQ(ut_port_stats(a).nd_rx, sa.nd_rx + 1);
	UT_CHECK_EQ(ut_port_stats(a).nd_bad + ut_port_stats(b).nd_bad, sa.nd_bad + sb.nd_bad);
	UT_CHECK_EQ(uroce_port_resolve(a, &llb, &mac), 0);
	UT_CHECK(rte_is_same_ether_addr(&mac, uroce_port_mac(b)));
	UT_CHECK_EQ(uroce_port_resolve(b, &lla, &mac), 0);
	UT_CHECK(rte_is_same_ether_addr(&mac, uroce_port_mac(a)));
	/* Hand-built: a good NS is answered; each flaw is dropped and
	 * counted, with no answer. */
	for (fl = NS_GOOD; fl <= NS_CODE; fl++) {
		sa = ut_port_stats(a);
		sb = ut_port_stats(b);
		m = ns_frame(a, &llb, fl);
		UT_CHECK_EQ(uroce_port_tx(a, 0, &m, 1), 1);
		pump(a, b, 0, NULL);
		UT_CHECK_EQ(ut_port_stats(b).nd_rx, sb.nd_rx + 1);
		UT_CHECK_EQ(ut_port_stats(b).nd_bad, sb.nd_bad + (fl != NS_GOOD));
		UT_CHECK_EQ(ut_port_stats(b).nd_tx, sb.nd_tx + (fl == NS_GOOD));
		UT_CHECK_EQ(ut_port_stats(a).nd_rx, sa.nd_rx + (fl == NS_GOOD));
		UT_CHECK_EQ(ut_port_stats(b).non_roce, sb.non_roce);
		UT_NOTE("NS flaw %d", fl);
	}
	/* An NS for an address that is not b's: no answer, nothing bad. */
	g[3] = llb;
	g[3].raw[15] ^= 1;
	sb = ut_port_stats(b);
	m = ns_frame(a, &g[3], NS_GOOD);
	UT_CHECK_EQ(uroce_port_tx(a, 0, &m, 1), 1);
	pump(a, b, 0, NULL);
	UT_CHECK_EQ(ut_port_stats(b).nd_rx, sb.nd_rx + 1);
	UT_CHECK_EQ(ut_port_stats(b).nd_tx, sb.nd_tx);
	UT_CHECK_EQ(ut_port_stats(b).nd_bad, sb.nd_bad);
}

/* ---------------------------------------------------------------------------
 * Frames.
 */
static void
test_frames(struct uroce_port *a, struct uroce_port *b, uint16_t q)
{
	static struct rte_mbuf *sent[64], *got[MAX_FRAMES];
	uint8_t copy[64][1600];
	uint32_t len[64];
	unsigned int i, n = 40, k;
	struct uroce_port_stats sa = ut_port_stats(a), sb = ut_port_stats(b);

	for (i = 0; i < n; i++) {
		sent[i] = roce_frame(a, b, i, (uint32_t)(ut_rand() % 1400));
		if (!UT_CHECK(sent[i] != NULL))
			return;
		len[i] = rte_pktmbuf_pkt_len(sent[i]);
		memcpy(copy[i], rte_pktmbuf_mtod(sent[i], void *), len[i]);
	}
	UT_CHECK_EQ(uroce_port_tx(a, q, sent, (uint16_t)n), n);
	k = pump(a, b, q, got);
	UT_CHECK_EQ(k, n);
	for (i = 0; i < k && i < n; i++) {
		UT_CHECK_EQ(rte_pktmbuf_pkt_len(got[i]), len[i]);
		UT_CHECK_EQ(got[i]->nb_segs, 1);
		UT_CHECK_MEM(rte_pktmbuf_mtod(got[i], void *), copy[i], len[i]);
		UT_NOTE("queue %u frame %u", q, i);
	}
	rte_pktmbuf_free_bulk(got, k);
	UT_CHECK_EQ(ut_port_stats(a).tx_pkts - sa.tx_pkts, n);
	UT_CHECK_EQ(ut_port_stats(b).rx_pkts - sb.rx_pkts, n);
	UT_CHECK_EQ(ut_port_stats(a).tx_full, 0);
}

/* Read what b received on queue 0 into got (up to max), in order. */
static unsigned int
drain(struct uroce_port *b, struct rte_mbuf **got, unsigned int max)
{
	unsigned int n = 0;
	uint16_t k;

	do {
		k = uroce_port_rx(b, 0, got + n, (uint16_t)RTE_MIN(64u, max - n));
		n += k;
	} while (k > 0 && n < max);
	return n;
}

/*
 * Back-pressure: a full ethdev queue stalls rather than drops. The ring of
 * a ringlink holds UROCE_GLUE_RINGLINK_SIZE - 1 frames; the next ones wait
 * on the port queue (busy), in order, up to 256; only the rest are freed
 * (tx_full). Once the peer reads, a flush sends what waited, in order. A
 * queue that takes nothing for 100 ms is stuck (the watchdog): it drops
 * what waits, and what the ethdev refuses after, never busy, until the
 * ethdev takes a frame again.
 */
static void
test_backpressure(struct uroce_port *a, struct uroce_port *b)
{
	enum { RING = UROCE_GLUE_RINGLINK_SIZE - 1, HOLD = 256, MORE = 100 };
	static struct rte_mbuf *sent[RING + HOLD + MORE], *got[RING + HOLD + 1];
	struct uroce_port_stats s0 = ut_port_stats(a);
	unsigned int i, n = RING + HOLD + MORE, k;

	for (i = 0; i < n; i++) {
		sent[i] = roce_frame(a, b, i, 64);
		if (!UT_CHECK(sent[i] != NULL))
			return;
	}
	UT_CHECK(!uroce_port_tx_busy(a, 0));
	UT_CHECK_EQ(uroce_port_tx(a, 0, sent, RING + 10), RING + 10);
	UT_CHECK(uroce_port_tx_busy(a, 0));
	UT_CHECK_EQ(ut_port_stats(a).tx_full - s0.tx_full, 0);
	/* Behind the stall: 246 more wait, the last MORE are freed. */
	UT_CHECK_EQ(uroce_port_tx(a, 0, sent + RING + 10, HOLD - 10 + MORE),
		    HOLD - 10);
	UT_CHECK_EQ(ut_port_stats(a).tx_full - s0.tx_full, MORE);
	UT_CHECK_EQ(uroce_port_tx_flush(a, 0), 0);	/* still full */
	k = drain(b, got, RTE_DIM(got));
	UT_CHECK_EQ(k, RING);
	UT_CHECK_EQ(uroce_port_tx_flush(a, 0), HOLD);
	UT_CHECK(!uroce_port_tx_busy(a, 0));
	k += drain(b, got + k, RTE_DIM(got) - k);
	UT_CHECK_EQ(k, RING + HOLD);
	for (i = 0; i < k && i < RING + HOLD; i++)	/* the same, in order */
		if (!UT_CHECK(got[i] == sent[i]))
			break;
	rte_pktmbuf_free_bulk(got, k);
	UT_CHECK_EQ(ut_port_stats(a).tx_pkts - s0.tx_pkts, RING + HOLD);

	/* The watchdog: nothing taken for 100 ms, what waits is dropped. */
	for (i = 0; i < RING + 5; i++)
		sent[i] = roce_frame(a, b, i, 64);
	s0 = ut_port_stats(a);
	UT_CHECK_EQ(uroce_port_tx(a, 0, sent, RING + 5), RING + 5);
	UT_CHECK(uroce_port_tx_busy(a, 0));
	UT_CHECK_EQ(uroce_port_tx_flush(a, 0), 0);
	usleep(150 * 1000);
	UT_CHECK_EQ(uroce_port_tx_flush(a, 0), 0);
	UT_CHECK(!uroce_port_tx_busy(a, 0));
	UT_CHECK_EQ(ut_port_stats(a).tx_full - s0.tx_full, 5);
	UT_CHECK_EQ(ut_port_stats(a).tx_stuck - s0.tx_stuck, 1);
	/* Stuck: the ring still full, new frames are dropped, none waits. */
	for (i = 0; i < MORE; i++)
		sent[i] = roce_frame(a, b, i, 64);
	UT_CHECK_EQ(uroce_port_tx(a, 0, sent, MORE), 0);
	UT_CHECK(!uroce_port_tx_busy(a, 0));
	UT_CHECK_EQ(ut_port_stats(a).tx_full - s0.tx_full, 5 + MORE);
	UT_CHECK_EQ(ut_port_stats(a).tx_stuck - s0.tx_stuck, 1);
	k = drain(b, got, RTE_DIM(got));
	UT_CHECK_EQ(k, RING);
	rte_pktmbuf_free_bulk(got, k);
	/* Taking frames again: past the ring's room they wait, as before. */
	for (i = 0; i < RING + 5; i++)
		sent[i] = roce_frame(a, b, i, 64);
	s0 = ut_port_stats(a);
	UT_CHECK_EQ(uroce_port_tx(a, 0, sent, RING + 5), RING + 5);
	UT_CHECK(uroce_port_tx_busy(a, 0));
	UT_CHECK_EQ(ut_port_stats(a).tx_full - s0.tx_full, 0);
	k = drain(b, got, RTE_DIM(got));
	UT_CHECK_EQ(uroce_port_tx_flush(a, 0), 5);
	UT_CHECK(!uroce_port_tx_busy(a, 0));
	k += drain(b, got + k, RTE_DIM(got) - k);
	UT_CHECK_EQ(k, RING + 5);
	for (i = 0; i < k && i < RING + 5; i++)	/* the same, in order */
		if (!UT_CHECK(got[i] == sent[i]))
			break;
	rte_pktmbuf_free_bulk(got, k);
}

/* A frame split over two segments arrives in one, bytes intact. */
static void
test_chain(struct uroce_port *a, struct uroce_port *b)
{
	struct rte_mbuf *m = roce_frame(a, b, 7, 1000), *tail, *got[MAX_FRAMES];
	uint8_t want[1200];
	uint32_t len, cut = 100;

	if (!UT_CHECK(m != NULL))
		return;
	len = rte_pktmbuf_pkt_len(m);
	memcpy(want, rte_pktmbuf_mtod(m, void *), len);
	tail = rte_pktmbuf_alloc(uroce_port_pool(a));
	memcpy(rte_pktmbuf_append(tail, (uint16_t)(len - cut)), want + cut,
	       len - cut);
	rte_pktmbuf_trim(m, (uint16_t)(len - cut));
	UT_CHECK_EQ(rte_pktmbuf_chain(m, tail), 0);
	UT_CHECK_EQ(m->nb_segs, 2);
	UT_CHECK_EQ(uroce_port_tx(a, 0, &m, 1), 1);
	if (UT_CHECK_EQ(pump(a, b, 0, got), 1)) {
		UT_CHECK_EQ(got[0]->nb_segs, 1);
		UT_CHECK_EQ(rte_pktmbuf_pkt_len(got[0]), len);
		UT_CHECK_MEM(rte_pktmbuf_mtod(got[0], void *), want, len);
		rte_pktmbuf_free(got[0]);
	}
}


/* Insert an 802.1Q tag of vid after the MAC addresses of m's frame. */
static bool
add_tag(struct rte_mbuf *m, uint16_t vid)
{
	uint8_t mac[12];
	uint8_t *d;

	if (m == NULL)
		return false;
	memcpy(mac, rte_pktmbuf_mtod(m, uint8_t *), sizeof(mac));
	d = (uint8_t *)rte_pktmbuf_prepend(m, 4);
	if (d == NULL)
		return false;
	memcpy(d, mac, sizeof(mac));
	d[12] = 0x81;
	d[13] = 0x00;
	d[14] = (uint8_t)(vid >> 8);
	d[15] = (uint8_t)vid;
	return true;
}

/* Raw frames: UDP to another port, IPv6 ICMP, an unknown ethertype, and a
 * RoCE frame with a VLAN tag on an untagged port. */
static void
test_non_roce(struct uroce_port *a, struct uroce_port *b)
{
	static const uint16_t et[3] = { 0x0800, 0x86dd, 0x88b5 };
	struct rte_mbuf *m[4];
	uint64_t non0 = ut_port_stats(b).non_roce, rx0 = ut_port_stats(b).rx_pkts;
	unsigned int i;
	uint8_t *d;

	for (i = 0; i < 3; i++) {
		m[i] = rte_pktmbuf_alloc(uroce_port_pool(a));
		d = (uint8_t *)rte_pktmbuf_append(m[i], 100);
		memset(d, 0, 100);
		memcpy(d, uroce_port_mac(b), 6);
		d[12] = (uint8_t)(et[i] >> 8);
		d[13] = (uint8_t)et[i];
		d[14] = i == 0 ? 0x45 : 0x60;
		if (i == 0) {		/* IPv4 UDP to port 53 */
			d[23] = 17;
			d[36] = 0;
			d[37] = 53;
		} else if (i == 1) {	/* IPv6, next header ICMPv6 */
			d[20] = 58;
		}
	}
	m[3] = roce_frame(a, b, 1, 10);
	UT_CHECK(add_tag(m[3], 5));
	UT_CHECK_EQ(uroce_port_tx(a, 0, m, 4), 4);
	UT_CHECK_EQ(pump(a, b, 0, NULL), 0);
	UT_CHECK_EQ(ut_port_stats(b).non_roce - non0, 4);
	UT_CHECK_EQ(ut_port_stats(b).rx_pkts - rx0, 0);
}

/* Ports sharing a link (af_packet sockets on one veth) see each other's
 * frames: a RoCEv2 frame to another IP address is dropped and counted,
 * one to the port's own is delivered. */
static void
test_not_ours(struct uroce_port *a, struct uroce_port *b)
{
	struct uroce_port_stats s0 = ut_port_stats(b);
	struct rte_mbuf *m[2], *got[4];
	rte_be32_t other;
	unsigned int n;

	m[0] = roce_frame(a, b, 7, 32);
	m[1] = roce_frame(a, b, 8, 32);
	if (!UT_CHECK(m[0] != NULL && m[1] != NULL))
		return;
	inet_pton(AF_INET, "10.0.0.7", &other);
	memcpy(rte_pktmbuf_mtod_offset(m[0], uint8_t *, RTE_ETHER_HDR_LEN +
		offsetof(struct rte_ipv4_hdr, dst_addr)), &other, 4);
	UT_CHECK_EQ(uroce_port_tx(a, 0, m, 2), 2);
	n = pump(a, b, 0, got);
	UT_CHECK_EQ(n, 1);
	if (n == 1)
		UT_CHECK_EQ(frame_psn(got[0]), 8);
	rte_pktmbuf_free_bulk(got, n);
	UT_CHECK_EQ(ut_port_stats(b).not_ours - s0.not_ours, 1);
	UT_CHECK_EQ(ut_port_stats(b).rx_pkts - s0.rx_pkts, 1);
	UT_CHECK_EQ(ut_port_stats(b).non_roce - s0.non_roce, 0);
}

static void
test_dev_errors(void)
{
	static const char *const bad[] = {
		"ringlink:,side=0", "ringlink:a-b,side=0", "ringlink:x,side=2",
		"ringlink:x", "ringlink:waytoolongname12345,side=0",
		"net_nosuchdriver0",
	};
	struct uroce_port *p = NULL;
	char err[256];
	unsigned int i;

	for (i = 0; i < RTE_DIM(bad); i++) {
		ut_port_cfg(&cfg, 5, bad[i], "10.9.0.1");
		err[0] = '\0';
		UT_CHECK(uroce_port_open(&cfg, 5, 1, &p, err, sizeof(err)) < 0);
		UT_CHECK(strstr(err, "[port] dev = ") == err);
		UT_CHECK(strstr(err, bad[i]) != NULL);
		UT_NOTE("dev %s: %s", bad[i], err);
	}
	/* The same side twice; queues that do not match the other side. */
	ut_port_cfg(&cfg, 5, "ringlink:dup,side=0", "10.9.0.1");
	ut_port_cfg(&cfg, 6, "ringlink:dup,side=0", "10.9.0.2");
	p = ut_port_open(&cfg, 5, 1);
	UT_CHECK(uroce_port_open(&cfg, 6, 1, &(struct uroce_port *){ NULL },
				 err, sizeof(err)) == -EBUSY);
	ut_port_cfg(&cfg, 6, "ringlink:dup,side=1", "10.9.0.2");
	UT_CHECK(uroce_port_open(&cfg, 6, 2, &(struct uroce_port *){ NULL },
				 err, sizeof(err)) == -EINVAL);
	UT_CHECK(strstr(err, "queues") != NULL);
	uroce_port_close(p);
	cfg.port_cnt = 5;
}

/* ---------------------------------------------------------------------------
 * VLAN ports: ARP goes tagged, tagged RoCE frames pass, untagged ones and
 * other VLANs do not.
 */
static struct rte_mbuf *
vlan_frame(struct uroce_port *a, struct uroce_port *b, uint16_t vid)
{
	struct rte_mbuf *m = roce_frame(a, b, 5, 20);

	if (m == NULL || vid == UINT16_MAX)
		return m;
	if (!add_tag(m, vid)) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	return m;
}

static void
test_vlan(void)
{
	union uroce_gid gb = gid4("10.5.0.2");
	struct rte_ether_addr mac;
	struct rte_mbuf *m[3], *got[MAX_FRAMES];
	struct uroce_port *va, *vb;
	uint16_t vid = 0;
	unsigned int k;

	ut_port_cfg(&cfg, 3, "ringlink:vl,side=0", "10.5.0.1");
	ut_port_cfg(&cfg, 4, "ringlink:vl,side=1", "10.5.0.2");
	cfg.port[3].has_vlan = cfg.port[4].has_vlan = true;
	cfg.port[3].vlan = cfg.port[4].vlan = 77;
	va = ut_port_open(&cfg, 3, 1);
	vb = ut_port_open(&cfg, 4, 1);
	if (va == NULL || vb == NULL)
		goto out;
	UT_CHECK(uroce_port_vlan(va, &vid));
	UT_CHECK_EQ(vid, 77);
	pump(va, vb, 0, NULL);
	UT_CHECK_EQ(uroce_port_resolve(va, &gb, &mac), -EAGAIN);
	uroce_port_poll_ctrl(va, 0, 1);
	pump(va, vb, 0, NULL);
	UT_CHECK_EQ(uroce_port_resolve(va, &gb, &mac), 0);
	UT_CHECK(rte_is_same_ether_addr(&mac, uroce_port_mac(vb)));
	/* Neighbour discovery on the VLAN too (tagged both ways). */
	gb = gid_ll(uroce_port_mac(vb));
	UT_CHECK_EQ(uroce_port_resolve(va, &gb, &mac), -EAGAIN);
	uroce_port_poll_ctrl(va, 0, 2);
	pump(va, vb, 0, NULL);
	UT_CHECK_EQ(uroce_port_resolve(va, &gb, &mac), 0);
	UT_CHECK(rte_is_same_ether_addr(&mac, uroce_port_mac(vb)));
	UT_CHECK_EQ(ut_port_stats(vb).nd_rx, 1);
	UT_CHECK_EQ(ut_port_stats(va).nd_rx, 1);
	UT_CHECK_EQ(ut_port_stats(vb).non_roce, 0);
	m[0] = vlan_frame(va, vb, 77);
	m[1] = vlan_frame(va, vb, UINT16_MAX);	/* untagged */
	m[2] = vlan_frame(va, vb, 78);
	UT_CHECK_EQ(uroce_port_tx(va, 0, m, 3), 3);
	k = pump(va, vb, 0, got);
	UT_CHECK_EQ(k, 1);
	UT_CHECK_EQ(ut_port_stats(vb).non_roce, 2);
	rte_pktmbuf_free_bulk(got, k);
out:
	uroce_port_close(va);
	uroce_port_close(vb);
	cfg.port[3].has_vlan = cfg.port[4].has_vlan = false;
}

/* ---------------------------------------------------------------------------
 * Resolve on one thread while rx learns on another: MACs are never torn.
 * Replies make 10.6.1.i -> 02:g:g:g:g:i for generation g = 1, 2, ...
 */
#define CONC_HOSTS	64
#define CONC_GENS	100

struct conc {
	struct uroce_port *p;
	uint32_t done;
	unsigned int seen, torn;
};

static void *
conc_reader(void *arg)
{
	struct conc *c = arg;
	struct rte_ether_addr mac;
	union uroce_gid g;
	unsigned int i = 0;
	char ip[32];
	const uint8_t *b = mac.addr_bytes;

	while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) {
		snprintf(ip, sizeof(ip), "10.6.1.%u", i);
		g = gid4(ip);
		if (uroce_port_resolve(c->p, &g, &mac) == 0) {
			c->seen++;
			if (b[1] != b[2] || b[2] != b[3] || b[3] != b[4] ||
			    b[5] != i || b[1] == 0)
				c->torn++;
		}
		i = (i + 1) % CONC_HOSTS;
		if (i % 16 == 0)
			sched_yield();	/* the machine may have one core */
	}
	return NULL;
}

static struct rte_mbuf *
arp_reply_to(struct uroce_port *from, struct uroce_port *to, unsigned int i,
	     unsigned int gen)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(uroce_port_pool(from));
	struct rte_ether_hdr *eh;
	struct rte_arp_hdr *a;
	union uroce_gid g;
	char ip[32];

	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, 60);
	memset(eh, 0, 60);
	eh->dst_addr = *uroce_port_mac(to);
	eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_ARP);
	a = (struct rte_arp_hdr *)(eh + 1);
	a->arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = 6;
	a->arp_plen = 4;
	a->arp_opcode = RTE_BE16(RTE_ARP_OP_REPLY);
	a->arp_data.arp_sha = (struct rte_ether_addr){ { 2, (uint8_t)gen,
		(uint8_t)gen, (uint8_t)gen, (uint8_t)gen, (uint8_t)i } };
	snprintf(ip, sizeof(ip), "10.6.1.%u", i);
	g = gid4(ip);
	a->arp_data.arp_sip = uroce_gid_to_v4(&g);
	a->arp_data.arp_tha = *uroce_port_mac(to);
	uroce_port_gids(to, &g, 1);
	a->arp_data.arp_tip = uroce_gid_to_v4(&g);
	eh->src_addr = a->arp_data.arp_sha;
	return m;
}

static void
test_concurrent(void)
{
	struct conc c = { 0 };
	struct rte_mbuf *m[CONC_HOSTS];
	struct uroce_port *ca, *cb;
	pthread_t th;
	unsigned int gen, i;

	ut_port_cfg(&cfg, 3, "ringlink:cc,side=0", "10.6.0.1");
	ut_port_cfg(&cfg, 4, "ringlink:cc,side=1", "10.6.0.2");
	ca = ut_port_open(&cfg, 3, 1);
	cb = ut_port_open(&cfg, 4, 1);
	if (ca == NULL || cb == NULL)
		goto out;
	pump(ca, cb, 0, NULL);
	c.p = cb;
	if (!UT_CHECK_EQ(pthread_create(&th, NULL, conc_reader, &c), 0))
		goto out;
	for (gen = 1; gen <= CONC_GENS; gen++) {
		for (i = 0; i < CONC_HOSTS; i++)
			m[i] = arp_reply_to(ca, cb, i, gen);
		uroce_port_tx(ca, 0, m, CONC_HOSTS);
		pump(ca, cb, 0, NULL);
		sched_yield();
	}
	__atomic_store_n(&c.done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	UT_CHECK_EQ(c.torn, 0);
	UT_CHECK_EQ(ut_port_stats(cb).arp_rx, CONC_HOSTS * CONC_GENS + 1);
	printf("concurrent resolve: %u answers while learning\n", c.seen);
out:
	uroce_port_close(ca);
	uroce_port_close(cb);
}

/* ---------------------------------------------------------------------------
 * Fault injection: a pair fa (faults from cfg) -> fb (none).
 */
struct fault_run {
	unsigned int got;
	uint32_t psn[MAX_FRAMES];
	struct uroce_port_stats st;
};

static void
fault_pair(const char *name, const struct uroce_config_fault *f, bool on_rx)
{
	char dev[64];

	snprintf(dev, sizeof(dev), "ringlink:%s,side=0", name);
	ut_port_cfg(&cfg, 3, dev, "10.1.0.1");
	snprintf(dev, sizeof(dev), "ringlink:%s,side=1", name);
	ut_port_cfg(&cfg, 4, dev, "10.1.0.2");
	cfg.port[on_rx ? 4 : 3].has_fault = true;
	cfg.port[on_rx ? 4 : 3].fault = *f;
}

/* n frames fa -> fb in bursts of 32; the PSNs fb got, and the counters of
 * the faulty side. */
static void
fault_run(const struct uroce_config_fault *f, bool on_rx, unsigned int n,
	  struct fault_run *r)
{
	static struct rte_mbuf *got[MAX_FRAMES];
	struct rte_mbuf *burst[32];
	struct uroce_port *fa, *fb;
	unsigned int i, k;

	fault_pair("flt", f, on_rx);
	fa = ut_port_open(&cfg, 3, 1);
	fb = ut_port_open(&cfg, 4, 1);
	memset(r, 0, sizeof(*r));
	if (fa == NULL || fb == NULL)
		goto out;
	pump(fa, fb, 0, NULL);		/* the announcements */
	for (i = 0; i < n; i += k) {
		k = RTE_MIN(32u, n - i);
		for (unsigned int j = 0; j < k; j++)
			burst[j] = roce_frame(fa, fb, i + j, 64);
		uroce_port_tx(fa, 0, burst, (uint16_t)k);
		r->got += pump(fa, fb, 0, got + r->got);
	}
	for (i = 0; i < r->got; i++)
		r->psn[i] = frame_psn(got[i]);
	rte_pktmbuf_free_bulk(got, r->got);
	r->st = ut_port_stats(on_rx ? fb : fa);
out:
	uroce_port_close(fa);
	uroce_port_close(fb);
	cfg.port[3].has_fault = cfg.port[4].has_fault = false;
}

static void
test_fault_drop(void)
{
	static struct fault_run r1, r2, r3;
	struct uroce_config_fault f = { .drop_ppm = 300000, .seed = 7 };
	unsigned int n = 1000;

	fault_run(&f, false, n, &r1);
	UT_CHECK(r1.st.fault_drop > 200 && r1.st.fault_drop < 400);
	UT_CHECK_EQ(r1.got + r1.st.fault_drop, n);
	UT_CHECK_EQ(r1.st.fault_dup + r1.st.fault_corrupt + r1.st.fault_reorder, 0);
	fault_run(&f, false, n, &r2);
	UT_CHECK_EQ(r2.st.fault_drop, r1.st.fault_drop);
	UT_CHECK_EQ(r2.got, r1.got);
	UT_CHECK_MEM(r2.psn, r1.psn, r1.got * sizeof(uint32_t));
	f.seed = 8;
	fault_run(&f, false, n, &r3);
	UT_CHECK_EQ(r3.got + r3.st.fault_drop, n);
	UT_CHECK(r3.got != r1.got ||
		 memcmp(r3.psn, r1.psn, r1.got * sizeof(uint32_t)) != 0);
	/* The same on the receiving side's rx callback. */
	f.seed = 7;
	fault_run(&f, true, n, &r3);
	UT_CHECK_EQ(r3.got + r3.st.fault_drop, n);
	UT_CHECK(r3.st.fault_drop > 200 && r3.st.fault_drop < 400);
}

static void
test_fault_shapes(bool on_rx)
{
	static struct fault_run r;
	struct uroce_config_fault f = { .seed = 3 };
	unsigned int i, n = 10;

	f.dup_ppm = PPM_ALL;
	fault_run(&f, on_rx, n, &r);
	UT_CHECK_EQ(r.st.fault_dup, n);
	UT_CHECK_EQ(r.got, 2 * n);
	for (i = 0; i < r.got; i++)
		UT_CHECK_EQ(r.psn[i], i / 2);
	f.dup_ppm = 0;
	f.reorder_ppm = PPM_ALL;
	fault_run(&f, on_rx, n, &r);
	UT_CHECK_EQ(r.st.fault_reorder, n / 2);
	UT_CHECK_EQ(r.got, n);
	for (i = 0; i < r.got; i++)
		UT_CHECK_EQ(r.psn[i], i ^ 1);	/* 1 0 3 2 5 4 ... */
	UT_NOTE("%s", on_rx ? "rx" : "tx");
}

/* n frames a -> b from PSN first, in bursts of 32: how many b got, and
 * (if psn) their PSNs less first. */
static unsigned int
send_n(struct uroce_port *a, struct uroce_port *b, uint32_t first,
       unsigned int n, uint32_t *psn)
{
	static struct rte_mbuf *got[MAX_FRAMES];
	struct rte_mbuf *burst[32];
	unsigned int i, j, k, total = 0;

	for (i = 0; i < n; i += k) {
		k = RTE_MIN(32u, n - i);
		for (j = 0; j < k; j++)
			burst[j] = roce_frame(a, b, first + i + j, 64);
		uroce_port_tx(a, 0, burst, (uint16_t)k);
		total += pump(a, b, 0, got + total);
	}
	for (i = 0; i < total && psn != NULL; i++)
		psn[i] = frame_psn(got[i]) - first;
	rte_pktmbuf_free_bulk(got, total);
	return total;
}

/*
 * uroce_port_set_fault() on ports that started without faults: the tx
 * side's setting drops the same frames as the same setting from the
 * config (a seed repeats); "none" and a rejected setting (a probability
 * above 1: EINVAL) leave every frame through; the rx side too.
 */
static void
test_fault_runtime(void)
{
	static struct fault_run cfgrun;
	static uint32_t psn[MAX_FRAMES];
	struct uroce_config_fault f = { .drop_ppm = 300000, .seed = 7 };
	struct uroce_config_fault none = { .seed = 7 }, all = { .drop_ppm = PPM_ALL };
	struct uroce_config_fault bad = { .dup_ppm = PPM_ALL + 1 };
	struct uroce_port *fa, *fb;
	char err[128] = "";
	unsigned int got, n = 1000;
	bool on = true;

	fault_run(&f, false, n, &cfgrun);	/* the same, from the config */
	fault_pair("frt", &f, false);
	cfg.port[3].has_fault = false;
	fa = ut_port_open(&cfg, 3, 1);
	fb = ut_port_open(&cfg, 4, 1);
	if (!UT_CHECK(fa != NULL && fb != NULL))
		goto out;
	pump(fa, fb, 0, NULL);
	UT_CHECK_EQ(send_n(fa, fb, 0, 100, NULL), 100);
	UT_CHECK_EQ(uroce_port_set_fault(fa, &f, err, sizeof(err)), 0);
	got = send_n(fa, fb, 1000, n, psn);
	UT_CHECK_EQ(got, cfgrun.got);
	UT_CHECK_MEM(psn, cfgrun.psn, cfgrun.got * sizeof(uint32_t));
	UT_CHECK_EQ(ut_port_stats(fa).fault_drop, n - got);
	UT_CHECK_EQ(uroce_port_set_fault(fa, &none, err, sizeof(err)), 0);
	UT_CHECK_EQ(send_n(fa, fb, 3000, 100, NULL), 100);
	UT_CHECK_EQ(uroce_port_set_fault(fa, &bad, err, sizeof(err)), -EINVAL);
	UT_CHECK(strstr(err, "probability") != NULL);
	UT_CHECK_EQ(send_n(fa, fb, 4000, 100, NULL), 100);
	UT_CHECK_EQ(ut_port_stats(fa).fault_drop, n - got);
	/* The receiving side's rx callback, added now. */
	UT_CHECK_EQ(uroce_port_set_fault(fb, &all, err, sizeof(err)), 0);
	UT_CHECK_EQ(send_n(fa, fb, 5000, 50, NULL), 0);
	UT_CHECK_EQ(ut_port_stats(fb).fault_drop, 50);
	UT_CHECK_EQ(uroce_port_set_fault(fb, &none, err, sizeof(err)), 0);
	UT_CHECK_EQ(send_n(fa, fb, 6000, 50, NULL), 50);
	/* The spec parser uroce-perf's `set fault` uses. */
	UT_CHECK_EQ(uroce_config_parse_fault("drop=1%,seed=3", &f, &on, err,
					     sizeof(err)), 0);
	UT_CHECK(on);
	UT_CHECK_EQ(f.drop_ppm, 10000);
	UT_CHECK_EQ(f.seed, 3);
	UT_CHECK_EQ(uroce_config_parse_fault("drop=2", &f, &on, err, sizeof(err)),
		    -EINVAL);
	UT_CHECK(strstr(err, "drop") != NULL);
	UT_CHECK_EQ(f.drop_ppm, 10000);		/* unchanged */
	UT_CHECK_EQ(uroce_config_parse_fault("none", &f, &on, err, sizeof(err)), 0);
	UT_CHECK(!on);
out:
	uroce_port_close(fa);
	uroce_port_close(fb);
}

/* Every frame differs from the one sent in one byte after the UDP header,
 * and the parser drops it. */
static void
test_fault_corrupt(void)
{
	struct uroce_config_fault f = { .corrupt_ppm = PPM_ALL, .seed = 11 };
	struct rte_mbuf *m, *got[MAX_FRAMES];
	uint8_t want[200];
	struct uroce_port *fa, *fb;
	struct uroce_pkt pkt;
	unsigned int i, j, diff, at = 0, k;
	uint32_t len;

	fault_pair("cor", &f, false);
	fa = ut_port_open(&cfg, 3, 1);
	fb = ut_port_open(&cfg, 4, 1);
	if (fa == NULL || fb == NULL)
		goto out;
	pump(fa, fb, 0, NULL);
	for (i = 0; i < 20; i++) {
		m = roce_frame(fa, fb, i, 100);
		len = rte_pktmbuf_pkt_len(m);
		memcpy(want, rte_pktmbuf_mtod(m, void *), len);
		uroce_port_tx(fa, 0, &m, 1);
		k = pump(fa, fb, 0, got);
		if (!UT_CHECK_EQ(k, 1))
			break;
		for (j = 0, diff = 0; j < len; j++) {
			if (rte_pktmbuf_mtod(got[0], uint8_t *)[j] != want[j]) {
				diff++;
				at = j;
			}
		}
		UT_CHECK_EQ(diff, 1);
		UT_CHECK(at >= 14 + 20 + 8 && at != 14 + 20 + 8 + 4);
		UT_CHECK(uroce_wire_parse(rte_pktmbuf_mtod(got[0], uint8_t *),
					  len, 0, &pkt) != UROCE_WIRE_OK);
		UT_NOTE("frame %u, byte %u", i, at);
		rte_pktmbuf_free(got[0]);
	}
	UT_CHECK_EQ(ut_port_stats(fa).fault_corrupt, 20);
out:
	uroce_port_close(fa);
	uroce_port_close(fb);
	cfg.port[3].has_fault = false;
}

/* Set the ECN bits of a built IPv4 frame (checksum kept right). */
static void
set_ecn(struct rte_mbuf *m, uint8_t ecn)
{
	uint8_t *ip = rte_pktmbuf_mtod_offset(m, uint8_t *, 14);

	ip[1] = (uint8_t)((ip[1] & ~UROCE_ECN_MASK) | ecn);
	uroce_wire_ipv4_cksum_fill(ip);
}

/* ce=P on the receiving port: ECT frames arrive CE and still valid (IPv4
 * checksum, ICRC), Not-ECT ones untouched; on the sending port's side
 * (transmit) it marks nothing. */
static void
ce_run(bool on_rx, uint32_t ppm, unsigned int *marked, uint64_t *ctr)
{
	struct uroce_config_fault f = { .ce_ppm = ppm, .seed = 5 };
	struct rte_mbuf *m, *got[MAX_FRAMES];
	static const uint8_t ecns[] = { UROCE_ECN_ECT0, UROCE_ECN_NOT_ECT,
					UROCE_ECN_ECT1 };
	struct uroce_port *fa, *fb;
	struct uroce_pkt pkt;
	uint8_t ecn;
	unsigned int i, k;
	uint32_t len;

	*marked = 0;
	*ctr = 0;
	fault_pair("ce", &f, on_rx);
	fa = ut_port_open(&cfg, 3, 1);
	fb = ut_port_open(&cfg, 4, 1);
	if (fa == NULL || fb == NULL)
		goto out;
	pump(fa, fb, 0, NULL);
	for (i = 0; i < 60; i++) {
		ecn = ecns[i % 3];
		m = roce_frame(fa, fb, i, 100);
		if (!UT_CHECK(m != NULL))
			break;
		set_ecn(m, ecn);
		len = rte_pktmbuf_pkt_len(m);
		uroce_port_tx(fa, 0, &m, 1);
		k = pump(fa, fb, 0, got);
		if (!UT_CHECK_EQ(k, 1))
			break;
		if (UT_CHECK_EQ(uroce_wire_parse(rte_pktmbuf_mtod(got[0], uint8_t *),
						 len, 0, &pkt), UROCE_WIRE_OK)) {
			UT_CHECK_EQ(pkt.bth.psn, i);
			if (uroce_pkt_ecn(&pkt) == UROCE_ECN_CE) {
				UT_CHECK(ecn != UROCE_ECN_NOT_ECT);
				(*marked)++;
			} else {
				UT_CHECK_EQ(uroce_pkt_ecn(&pkt), ecn);
			}
		}
		rte_pktmbuf_free(got[0]);
	}
	*ctr = ut_port_stats(on_rx ? fb : fa).fault_ce;
out:
	uroce_port_close(fa);
	uroce_port_close(fb);
	cfg.port[3].has_fault = false;
	cfg.port[4].has_fault = false;
}

static void
test_fault_ce(void)
{
	unsigned int marked, again;
	uint64_t ctr;

	ce_run(true, PPM_ALL, &marked, &ctr);
	UT_CHECK_EQ(marked, 40);	/* every ECT(0) and ECT(1) frame */
	UT_CHECK_EQ(ctr, 40);
	ce_run(false, PPM_ALL, &marked, &ctr);
	UT_CHECK_EQ(marked, 0);		/* transmit: no marks */
	UT_CHECK_EQ(ctr, 0);
	ce_run(true, PPM_ALL / 2, &marked, &ctr);
	UT_CHECK(marked > 0 && marked < 40);
	UT_CHECK_EQ(ctr, marked);
	ce_run(true, PPM_ALL / 2, &again, &ctr);
	UT_CHECK_EQ(again, marked);	/* the seed repeats */
	UT_NOTE("ce=50%%: %u of 40 ECT frames marked", marked);
}

/* ---------------------------------------------------------------------------
 * Capture.
 */
static uint32_t
rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Block types in order, and the captured length of each packet block. */
static int
pcapng_read(const char *path, uint32_t *types, unsigned int *nblocks,
	    uint32_t *caplen, unsigned int *npkts)
{
	static uint8_t buf[1 << 20];
	FILE *f = fopen(path, "rb");
	size_t n, off = 0;
	uint32_t len;

	if (f == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	*nblocks = *npkts = 0;
	while (off + 12 <= n) {
		len = rd32(buf + off + 4);
		if (len < 12 || len % 4 != 0 || off + len > n ||
		    rd32(buf + off + len - 4) != len)
			return -1;
		types[(*nblocks)++] = rd32(buf + off);
		if (rd32(buf + off) == 6)
			caplen[(*npkts)++] = rd32(buf + off + 20);
		off += len;
	}
	return off == n ? 0 : -1;
}

static const char *
find_tshark(void)
{
	const char *env = getenv("UROCE_TSHARK");

	if (env != NULL && *env != '\0')
		return env;
	if (access("/usr/bin/tshark", X_OK) == 0)
		return "/usr/bin/tshark";
	return NULL;
}

/* The number of frames tshark reads that decode as RoCEv2 RC SEND ONLY
 * (BTH opcode 4); the first max lengths in lens. */
static unsigned int
tshark_lens(const char *tshark, const char *path, uint32_t *lens,
	    unsigned int max)
{
	char cmd[512], line[64];
	unsigned int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s -r %s -Y 'infiniband.bth.opcode == 4' "
		 "-T fields -e frame.len 2>/dev/null", tshark, path);
	f = popen(cmd, "r");
	if (f == NULL)
		return 0;
	for (; fgets(line, sizeof(line), f) != NULL; n++) {
		if (n < max)
			lens[n] = (uint32_t)strtoul(line, NULL, 10);
	}
	UT_CHECK_EQ(pclose(f), 0);
	return n;
}

/* Section header, interface blocks, npkts packets, then statistics; the
 * first packets of the lengths in want. */
static void
pcap_check(const char *path, const uint32_t *want, unsigned int nwant,
	   unsigned int npkts)
{
	static uint32_t types[4096], caplen[4096];
	uint32_t lens[16];
	const char *tshark = find_tshark();
	unsigned int nb, np, i;

	if (!UT_CHECK_EQ(pcapng_read(path, types, &nb, caplen, &np), 0))
		return;
	UT_CHECK_EQ(types[0], 0x0a0d0d0a);
	UT_CHECK_EQ(types[1], 1);
	UT_CHECK_EQ(np, npkts);
	UT_CHECK_EQ(types[nb - 1], 5);
	for (i = 0; i < nwant && i < np; i++)
		UT_CHECK_EQ(caplen[i], want[i]);
	if (tshark == NULL) {
		printf("tshark not found: checked the pcapng blocks only\n");
		return;
	}
	UT_CHECK_EQ(tshark_lens(tshark, path, lens, nwant), npkts);
	for (i = 0; i < nwant; i++)
		UT_CHECK_EQ(lens[i], want[i]);
}

/*
 * Ports 3 and 4 of the config joined by ringlink NAME, port 3 capturing into a
 * fresh /tmp/uroce-ut-KIND-PID.pcapng (its name in path), their ARP done.
 * false when a port did not open (the opened one is in *pa or *pb).
 */
static bool
capture_pair(const char *name, const char *kind,
	     char *path, size_t len, struct uroce_port **pa,
	     struct uroce_port **pb)
{
	char dev[64];

	snprintf(path, len, "/tmp/uroce-ut-%s-%d.pcapng", kind, (int)getpid());
	snprintf(dev, sizeof(dev), "ringlink:%s,side=0", name);
	ut_port_cfg(&cfg, 3, dev, "10.2.0.1");
	snprintf(dev, sizeof(dev), "ringlink:%s,side=1", name);
	ut_port_cfg(&cfg, 4, dev, "10.2.0.2");
	snprintf(cfg.port[3].pcap, sizeof(cfg.port[3].pcap), "%s", path);
	*pa = ut_port_open(&cfg, 3, 1);
	*pb = ut_port_open(&cfg, 4, 1);
	if (*pa == NULL || *pb == NULL)
		return false;
	pump(*pa, *pb, 0, NULL);
	return true;
}

static void
test_pcap(void)
{
	char path[128];
	static struct rte_mbuf *got[MAX_FRAMES];
	struct rte_mbuf *m[8];
	uint32_t want[16];
	unsigned int i, nw = 0, k;
	struct uroce_port *pa, *pb;
	struct rte_ether_addr mac;
	union uroce_gid gx = gid4("10.2.0.99");
	struct rte_mempool *mp;

	if (!capture_pair("cap", "port", path, sizeof(path), &pa, &pb))
		goto out;
	/* 5 frames out of pa, an ARP request (not captured)... */
	for (i = 0; i < 5; i++) {
		m[i] = roce_frame(pa, pb, i, 100 * i + 1);
		want[nw++] = rte_pktmbuf_pkt_len(m[i]);
	}
	UT_CHECK_EQ(uroce_port_tx(pa, 0, m, 5), 5);
	uroce_port_resolve(pa, &gx, &mac);
	uroce_port_poll_ctrl(pa, 0, 1);
	k = pump(pa, pb, 0, got);
	UT_CHECK_EQ(k, 5);
	/* ... and 3 frames into pa. */
	for (i = 0; i < 3; i++) {
		m[i] = roce_frame(pb, pa, i, 33 * i);
		want[nw++] = rte_pktmbuf_pkt_len(m[i]);
	}
	UT_CHECK_EQ(uroce_port_tx(pb, 0, m, 3), 3);
	UT_CHECK_EQ(pump(pb, pa, 0, got + k), 3);
	rte_pktmbuf_free_bulk(got, k + 3);
	UT_CHECK_EQ(ut_port_stats(pa).pcap_written, 8);
	/* More frames than the capture pool holds: copies must come back. */
	for (i = 0; i < 2000; i += 8) {
		for (k = 0; k < 8; k++)
			m[k] = roce_frame(pa, pb, i + k, 10);
		uroce_port_tx(pa, 0, m, 8);
		pump(pa, pb, 0, NULL);
	}
	UT_CHECK_EQ(ut_port_stats(pa).pcap_written, 2008);
	UT_CHECK_EQ(ut_port_stats(pa).pcap_lost, 0);
	/* The capture pool (pcap.c names it; the only one here) got all its
	 * copies back. */
	mp = rte_mempool_lookup("uroce_pc0");
	if (UT_CHECK(mp != NULL))
		UT_CHECK_EQ(rte_mempool_in_use_count(mp), 0);
	uroce_port_close(pa);
	pa = NULL;
	pcap_check(path, want, nw, 2008);
out:
	uroce_port_close(pa);
	uroce_port_close(pb);
	cfg.port[3].pcap[0] = '\0';
	unlink(path);
}

/* ---------------------------------------------------------------------------
 * Zero-copy frames (lib/transport/zcopy.c): headers in a direct mbuf, the
 * payload an external buffer in "application memory", the ICRC in a last
 * direct segment. The fault injector and the capture must cope with them
 * and never write into that memory.
 */
static void
ext_noop_free(void *addr, void *opaque)
{
	RTE_SET_USED(addr);
	RTE_SET_USED(opaque);
}

static struct rte_mbuf_ext_shared_info ext_shinfo = {
	.free_cb = ext_noop_free, .refcnt = 1,
};

/* m's bytes [cut, len - 4) moved into app and attached from there. */
static struct rte_mbuf *
ext_chain(struct uroce_port *p, struct rte_mbuf *m, uint8_t *app, uint32_t cut)
{
	uint32_t len = rte_pktmbuf_pkt_len(m), plen = len - 4 - cut;
	struct rte_mbuf *x = rte_pktmbuf_alloc(uroce_port_pool(p));
	struct rte_mbuf *t = rte_pktmbuf_alloc(uroce_port_pool(p));
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);

	if (x == NULL || t == NULL)
		return NULL;
	memcpy(app, d + cut, plen);
	memcpy(rte_pktmbuf_append(t, 4), d + len - 4, 4);
	rte_mbuf_ext_refcnt_update(&ext_shinfo, 1);
	rte_pktmbuf_attach_extbuf(x, app, RTE_BAD_IOVA, (uint16_t)plen,
				  &ext_shinfo);
	x->data_len = (uint16_t)plen;
	x->pkt_len = plen;
	rte_pktmbuf_trim(m, (uint16_t)(len - cut));
	if (rte_pktmbuf_chain(m, x) != 0 || rte_pktmbuf_chain(m, t) != 0)
		return NULL;
	return m;
}

/* A held (reordered) frame is a copy: the application may rewrite its
 * memory once the tx call returned. Corruption never lands in it. */
static void
test_fault_extbuf(void)
{
	struct uroce_config_fault f = { .reorder_ppm = PPM_ALL, .seed = 5 };
	static uint8_t app[2][1200], keep[2][1200], want[2][1300];
	struct rte_mbuf *m, *got[MAX_FRAMES];
	struct uroce_port *fa, *fb;
	uint32_t len[2];
	unsigned int i, j, diff;

	fault_pair("zcr", &f, false);
	fa = ut_port_open(&cfg, 3, 1);
	fb = ut_port_open(&cfg, 4, 1);
	if (fa == NULL || fb == NULL)
		goto out;
	pump(fa, fb, 0, NULL);
	for (i = 0; i < 2; i++) {
		m = roce_frame(fa, fb, i, 1000);
		len[i] = rte_pktmbuf_pkt_len(m);
		memcpy(want[i], rte_pktmbuf_mtod(m, void *), len[i]);
		m = ext_chain(fa, m, app[i], 80);
		if (!UT_CHECK(m != NULL))
			goto out;
		UT_CHECK_EQ(uroce_port_tx(fa, 0, &m, 1), 1);
		if (i == 0) {	/* held: the chain itself was let go */
			UT_CHECK_EQ(rte_mbuf_ext_refcnt_read(&ext_shinfo), 1);
			memset(app[0], 0xee, sizeof(app[0]));
		}
	}
	UT_CHECK_EQ(ut_port_stats(fa).fault_reorder, 1);
	if (UT_CHECK_EQ(pump(fa, fb, 0, got), 2)) {	/* 1, then 0 */
		UT_CHECK_EQ(rte_pktmbuf_pkt_len(got[1]), len[0]);
		UT_CHECK_MEM(rte_pktmbuf_mtod(got[1], void *), want[0], len[0]);
		UT_CHECK_MEM(rte_pktmbuf_mtod(got[0], void *), want[1], len[1]);
		rte_pktmbuf_free_bulk(got, 2);
	}
	UT_CHECK_EQ(rte_mbuf_ext_refcnt_read(&ext_shinfo), 1);
	uroce_port_close(fa);
	uroce_port_close(fb);
	/* Corruption: one byte off on the wire, none in the application's. */
	f.reorder_ppm = 0;
	f.corrupt_ppm = PPM_ALL;
	fault_pair("zcc", &f, false);
	fa = ut_port_open(&cfg, 3, 1);
	fb = ut_port_open(&cfg, 4, 1);
	if (fa == NULL || fb == NULL)
		goto out;
	pump(fa, fb, 0, NULL);
	for (i = 0; i < 20; i++) {
		m = roce_frame(fa, fb, i, 1000);
		len[0] = rte_pktmbuf_pkt_len(m);
		memcpy(want[0], rte_pktmbuf_mtod(m, void *), len[0]);
		/* cut 50: the payload piece starts inside the BTH */
		m = ext_chain(fa, m, app[0], 50);
		memcpy(keep[0], app[0], sizeof(app[0]));
		UT_CHECK_EQ(uroce_port_tx(fa, 0, &m, 1), 1);
		if (!UT_CHECK_EQ(pump(fa, fb, 0, got), 1))
			break;
		for (j = 0, diff = 0; j < len[0]; j++)
			diff += rte_pktmbuf_mtod(got[0], uint8_t *)[j] != want[0][j];
		UT_CHECK_EQ(diff, 1);
		UT_CHECK_MEM(app[0], keep[0], sizeof(app[0]));
		UT_NOTE("corrupt frame %u", i);
		rte_pktmbuf_free(got[0]);
	}
	UT_CHECK_EQ(ut_port_stats(fa).fault_corrupt, 20);
	UT_CHECK_EQ(rte_mbuf_ext_refcnt_read(&ext_shinfo), 1);
out:
	uroce_port_close(fa);
	uroce_port_close(fb);
	cfg.port[3].has_fault = false;
}

/* A chain is captured whole, as the bytes it carries. */
static void
test_pcap_extbuf(void)
{
	static uint8_t app[1600], want[1700], file[1 << 16];
	struct rte_mbuf *got[MAX_FRAMES];
	struct uroce_port *pa, *pb;
	struct rte_mbuf *m;
	char path[128];
	uint32_t len = 0;
	ssize_t n = 0;
	FILE *fp;

	if (!capture_pair("zcp", "zc", path, sizeof(path), &pa, &pb))
		goto out;
	m = roce_frame(pa, pb, 3, 1400);
	len = rte_pktmbuf_pkt_len(m);
	memcpy(want, rte_pktmbuf_mtod(m, void *), len);
	m = ext_chain(pa, m, app, 66);
	if (!UT_CHECK(m != NULL) || !UT_CHECK_EQ(m->nb_segs, 3))
		goto out;
	UT_CHECK_EQ(uroce_port_tx(pa, 0, &m, 1), 1);
	if (UT_CHECK_EQ(pump(pa, pb, 0, got), 1)) {
		UT_CHECK_MEM(rte_pktmbuf_mtod(got[0], void *), want, len);
		rte_pktmbuf_free(got[0]);
	}
	UT_CHECK_EQ(ut_port_stats(pa).pcap_written, 1);
	UT_CHECK_EQ(ut_port_stats(pa).pcap_lost, 0);
	uroce_port_close(pa);
	pa = NULL;
	fp = fopen(path, "rb");
	if (UT_CHECK(fp != NULL)) {
		n = (ssize_t)fread(file, 1, sizeof(file), fp);
		fclose(fp);
	}
	UT_CHECK(n > 0 && memmem(file, (size_t)n, want, len) != NULL);
out:
	uroce_port_close(pa);
	uroce_port_close(pb);
	cfg.port[3].pcap[0] = '\0';
	unlink(path);
}

/* Port pools left behind: close keeps a pool whose frames are still out,
 * so any left means a frame leaked somewhere. */
static void
count_pool(struct rte_mempool *mp, void *arg)
{
	if (strncmp(mp->name, "uroce_", 6) == 0) {
		(*(unsigned int *)arg)++;
		fprintf(stderr, "     pool %s: %u in use\n", mp->name,
			rte_mempool_in_use_count(mp));
	}
}

static void
no_quiesce(void *arg)
{
	(void)arg;
}

/* ---------------------------------------------------------------------------
 * Gone for good. DPDK 22.11 installs no driver headers: these two are its
 * ethdev's driver interface (ethdev_driver.h), exported, used here to
 * raise a removal as a PMD does.
 */
struct rte_eth_dev;
struct rte_eth_dev *rte_eth_dev_allocated(const char *name);
int rte_eth_dev_callback_process(struct rte_eth_dev *dev,
				 enum rte_eth_event_type event,
				 void *ret_param);

/* RTE_ETH_EVENT_INTR_RMV (a NIC unplugged): the port is gone, its link
 * down, and a link poll changes neither. */
static void
test_gone_rmv(void)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	struct uroce_port *a, *b;
	struct rte_eth_dev *dev;

	ut_port_cfg(&cfg, 0, "ringlink:rmv,side=0", "10.0.0.1");
	ut_port_cfg(&cfg, 1, "ringlink:rmv,side=1", "10.0.0.2");
	a = ut_port_open(&cfg, 0, 1);
	b = ut_port_open(&cfg, 1, 1);
	if (a == NULL || b == NULL)
		goto out;
	UT_CHECK(!uroce_port_gone(a));
	UT_CHECK(uroce_port_link_up(a));
	UT_CHECK_EQ(rte_eth_dev_get_name_by_port(uroce_port_id(a), name), 0);
	dev = rte_eth_dev_allocated(name);
	if (!UT_CHECK(dev != NULL))
		goto out;
	UT_CHECK_EQ(rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_RMV,
						 NULL), 0);
	UT_CHECK(uroce_port_gone(a));
	UT_CHECK(!uroce_port_link_up(a));
	UT_CHECK(!uroce_port_link_poll(a, no_quiesce, NULL));
	UT_CHECK(uroce_port_gone(a));
	UT_CHECK(!uroce_port_gone(b));
out:
	uroce_port_close(a);
	uroce_port_close(b);
}

/* A memif client whose server is not there tries its start again at
 * each link poll (-EPERM from the PMD: not gone); once the ethdev itself
 * is removed, the start fails for good: gone, and no more tries. */
static void
test_gone_start(void)
{
	struct rte_eth_dev_info info;
	struct uroce_port *c;
	char dev[160];

	snprintf(dev, sizeof(dev), "net_memif7,role=client,id=0,"
		 "socket=/tmp/uroce-ut-gone-%d.sock", (int)getpid());
	ut_port_cfg(&cfg, 0, dev, "10.0.0.1");
	c = ut_port_open(&cfg, 0, 1);
	if (c == NULL)
		return;
	UT_CHECK(!uroce_port_link_poll(c, no_quiesce, NULL));
	UT_CHECK(!uroce_port_link_poll(c, no_quiesce, NULL));
	UT_CHECK(!uroce_port_gone(c));
	if (UT_CHECK_EQ(rte_eth_dev_info_get(uroce_port_id(c), &info), 0))
		UT_CHECK_EQ(rte_dev_remove(info.device), 0);
	UT_CHECK(!uroce_port_link_poll(c, no_quiesce, NULL));
	UT_CHECK(uroce_port_gone(c));
	UT_CHECK(!uroce_port_link_up(c));
	UT_CHECK(!uroce_port_link_poll(c, no_quiesce, NULL));
	uroce_port_close(c);
}

int
main(int argc, char **argv)
{
	unsigned int pools = 0;
	struct uroce_port *a, *b, *a2, *b2;

	ut_srand(42);
	if (ut_eal_start(argv[0]) < 0)
		return 1;
	ut_port_cfg(&cfg, 0, "ringlink:t1,side=0", "10.0.0.1");
	ut_port_cfg(&cfg, 1, "ringlink:t1,side=1", "10.0.0.2");
	ut_port_cfg(&cfg, 2, "ringlink:t2,side=0", "10.0.0.3");
	cfg.neigh_cnt = 2;
	inet_pton(AF_INET, "10.0.0.9", &cfg.neigh[0].ip4);
	cfg.neigh[0].mac = (struct rte_ether_addr){ { 2, 0, 0, 0, 0, 9 } };
	cfg.neigh[1].is_ip6 = true;
	cfg.neigh[1].ip6[0] = 0xfd;
	cfg.neigh[1].ip6[15] = 9;
	cfg.neigh[1].mac = (struct rte_ether_addr){ { 2, 0, 0, 0, 0, 0x66 } };
	a = ut_port_open(&cfg, 0, 1);
	b = ut_port_open(&cfg, 1, 1);
	if (a != NULL && b != NULL) {
		test_arp(a, b);
		test_arp_unreachable(a, b);
		test_ndp(a, b);
		test_frames(a, b, 0);
		test_backpressure(a, b);
		test_chain(a, b);
		test_non_roce(a, b);
		test_not_ours(a, b);
	}
	uroce_port_close(a);
	uroce_port_close(b);
	/* Two queue pairs: each queue its own ring pair. */
	ut_port_cfg(&cfg, 0, "ringlink:q2,side=0", "10.0.0.1");
	ut_port_cfg(&cfg, 1, "ringlink:q2,side=1", "10.0.0.2");
	a2 = ut_port_open(&cfg, 0, 2);
	b2 = ut_port_open(&cfg, 1, 2);
	if (a2 != NULL && b2 != NULL) {
		test_frames(a2, b2, 1);
		test_frames(a2, b2, 0);
	}
	uroce_port_close(a2);
	uroce_port_close(b2);
	test_dev_errors();
	test_vlan();
	test_concurrent();
	test_fault_drop();
	test_fault_runtime();
	test_fault_shapes(false);
	test_fault_shapes(true);
	test_fault_corrupt();
	test_fault_ce();
	test_pcap();
	test_fault_extbuf();
	test_pcap_extbuf();
	test_gone_rmv();
	test_gone_start();
	rte_mempool_walk(count_pool, &pools);
	UT_CHECK_EQ(pools, 0);
	rte_eal_cleanup();
	return ut_summary();
}
