/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The incast's switch: forwarding, the bottleneck queue with RED marking
 * (switch.h says what and why).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "switch.h"

#define BURST		32
#define ECN_MASK	0x3u
#define ECN_CE		0x3u

/* "ul_NAME_D_0": the ringlink's ring from side D (pmd_glue/ringlink.c). */
static struct rte_ring *
ring_of(const char *link, unsigned int from_side)
{
	char name[RTE_RING_NAMESIZE];
	struct rte_ring *r;

	snprintf(name, sizeof(name), "ul_%s_%u_0", link, from_side);
	r = rte_ring_lookup(name);
	if (r == NULL)
		fprintf(stderr, "uroce-incast: no ring %s\n", name);
	return r;
}

int
sw_init(struct sw *s, const struct sw_params *p, const char *rx_link,
	const char *const *tx_links)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->p = *p;
	if (p->senders == 0 || p->senders > SW_MAX_SENDERS ||
	    p->qcap == 0 || p->qcap > SW_MAX_QUEUE || p->max_th > p->qcap)
		return -EINVAL;
	/* The receiver is side 1 of its link, each sender side 0 of its own. */
	s->r_in = ring_of(rx_link, 1);
	s->r_out = ring_of(rx_link, 0);
	for (i = 0; i < p->senders; i++) {
		s->s_in[i] = ring_of(tx_links[i], 0);
		s->s_out[i] = ring_of(tx_links[i], 1);
		if (s->s_in[i] == NULL || s->s_out[i] == NULL)
			return -ENOENT;
	}
	if (s->r_in == NULL || s->r_out == NULL)
		return -ENOENT;
	if (rte_red_config_init(&s->red_cfg, (uint16_t)p->wq_log2,
				(uint16_t)p->min_th, (uint16_t)p->max_th,
				(uint16_t)p->maxp_inv) != 0 ||
	    rte_red_rt_data_init(&s->red) != 0) {
		fprintf(stderr, "uroce-incast: rte_red: bad thresholds "
			"%u..%u, 1/%u, wq 2^-%u\n", p->min_th, p->max_th,
			p->maxp_inv, p->wq_log2);
		return -EINVAL;
	}
	rte_red_rand_seed = 1;		/* the same marks for the same queue */
	s->q = calloc(p->qcap, sizeof(*s->q));
	s->hist = calloc(p->qcap + 1, sizeof(*s->hist));
	s->q_sum = calloc(p->slots + 1, sizeof(*s->q_sum));
	s->q_n = calloc(p->slots + 1, sizeof(*s->q_n));
	s->q_series = calloc(p->slots + 1, sizeof(*s->q_series));
	if (s->q == NULL || s->hist == NULL || s->q_sum == NULL ||
	    s->q_n == NULL || s->q_series == NULL) {
		sw_fini(s);
		return -ENOMEM;
	}
	s->bytes_per_cycle = p->rate_bps / 8.0 / (double)rte_get_tsc_hz();
	s->link_bytes_per_cycle = p->link_bps / 8.0 /
				  (double)rte_get_tsc_hz();
	s->sample_cycles = rte_get_tsc_hz() / (1000000 / SW_SAMPLE_US);
	s->slot_cycles = rte_get_tsc_hz() / (1000 / SW_SLOT_MS);
	s->t0 = UINT64_MAX;
	s->gap_cycles = rte_get_tsc_hz() / (1000000 / SW_GAP_US);
	/* SW_CATCHUP_US in frames of 2 KiB at the drain rate, at least 2 */
	s->catchup = RTE_MAX(2.0, p->rate_bps / 8 * SW_CATCHUP_US / 1e6 / 2048);
	return 0;
}

void
sw_fini(struct sw *s)
{
	unsigned int i;

	for (i = 0; i < SW_MAX_SENDERS; i++) {
		rte_pktmbuf_free(s->s_next[i]);
		s->s_next[i] = NULL;
	}
	while (s->q != NULL && s->q_len > 0) {
		rte_pktmbuf_free(s->q[s->q_head]);
		s->q_head = (s->q_head + 1) % s->p.qcap;
		s->q_len--;
	}
	free(s->q);
	free(s->hist);
	free(s->q_sum);
	free(s->q_n);
	free(s->q_series);
	s->q = NULL;
	s->hist = s->q_sum = s->q_n = NULL;
	s->q_series = NULL;
}

/* The ECN field's byte and shift in an IPv4 or IPv6 frame (one 802.1Q tag
 * allowed), or NULL. */
static uint8_t *
ecn_byte(struct rte_mbuf *m, unsigned int *shift, bool *v4)
{
	uint8_t *b = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t off = 12, len = rte_pktmbuf_data_len(m);
	uint16_t type;

	if (len < off + 2)
		return NULL;
	type = (uint16_t)(b[off] << 8 | b[off + 1]);
	if (type == RTE_ETHER_TYPE_VLAN) {
		off += 4;
		if (len < off + 2)
			return NULL;
		type = (uint16_t)(b[off] << 8 | b[off + 1]);
	}
	off += 2;
	if (type == RTE_ETHER_TYPE_IPV4 && len >= off + 20) {
		*shift = 0;
		*v4 = true;
		return &b[off + 1];		/* type of service */
	}
	if (type == RTE_ETHER_TYPE_IPV6 && len >= off + 40) {
		*shift = 4;
		*v4 = false;
		return &b[off + 1];		/* traffic class' low nibble */
	}
	return NULL;
}

static bool
is_ect(struct rte_mbuf *m)
{
	unsigned int shift;
	bool v4;
	uint8_t *e = ecn_byte(m, &shift, &v4);

	return e != NULL && ((*e >> shift) & ECN_MASK) != 0;
}

/* CE, as a switch marks it; the IPv4 header checksum is made again (the
 * ICRC leaves the ECN bits out, IBTA A17.3.3). */
static void
mark_ce(struct rte_mbuf *m)
{
	unsigned int shift;
	bool v4;
	uint8_t *e = ecn_byte(m, &shift, &v4);
	struct rte_ipv4_hdr *ip;

	*e |= (uint8_t)(ECN_CE << shift);
	if (v4) {
		ip = (struct rte_ipv4_hdr *)(void *)(e - 1);
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
}

/* A frame for the receiver arrives at the bottleneck. */
static void
enqueue(struct sw *s, struct rte_mbuf *m)
{
	int verdict;
	bool ect;

	s->c.arrived++;
	if (s->q_len == s->p.qcap) {
		s->c.dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	/* RED marks nothing at an empty queue, whose average it would decay
	 * for the idle time; DPDK 22.11's decay shifts by -1 for idle times
	 * under about one frame (rte_red.h, __rte_red_calc_qempty_factor;
	 * UBSan reports it), so the average starts over instead: with
	 * --wq-log2 1 it halves at every frame time and would be near zero
	 * within a few frames anyway. */
	if (s->q_len == 0) {
		rte_red_rt_data_init(&s->red);
		verdict = 0;
	} else {
		verdict = rte_red_enqueue_nonempty(&s->red_cfg, &s->red,
						   s->q_len);
	}
	ect = is_ect(m);
	s->c.ect += ect;
	/* RED's "drop" is a mark for ECN-capable frames; the others pass:
	 * the queue drops only when it is full. */
	if (verdict != 0 && ect) {
		mark_ce(m);
		s->c.marked++;
	}
	s->q[(s->q_head + s->q_len) % s->p.qcap] = m;
	s->q_len++;
}

/* A sender's frame has crossed its link. */
static void
arrive(struct sw *s, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh =
		rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

	/* ARP and other broadcasts pass beside the queue. */
	if (rte_is_multicast_ether_addr(&eh->dst_addr)) {
		if (rte_ring_enqueue(s->r_out, m) != 0)
			rte_pktmbuf_free(m);
		return;
	}
	enqueue(s, m);
}

/* Each sender's link carries link_bps: its credit as drain()'s. */
static void
from_senders(struct sw *s, uint64_t now)
{
	unsigned int i, n;
	double len;

	for (i = 0; i < s->p.senders; i++) {
		s->s_credit[i] += (double)(now - s->s_last[i]) *
				  s->link_bytes_per_cycle;
		s->s_last[i] = now;
		for (n = 0; n < BURST; n++) {
			if (s->s_next[i] == NULL &&
			    rte_ring_dequeue(s->s_in[i],
					     (void **)&s->s_next[i]) != 0)
				break;
			len = (double)rte_pktmbuf_pkt_len(s->s_next[i]);
			if (s->s_credit[i] > s->catchup * len)
				s->s_credit[i] = s->catchup * len;
			if (s->s_credit[i] < len)
				break;
			s->s_credit[i] -= len;
			arrive(s, s->s_next[i]);
			s->s_next[i] = NULL;
		}
		if (s->s_next[i] == NULL)
			s->s_credit[i] = 0;	/* an idle link saves nothing */
	}
}

/* Frames from the receiver, by destination MAC to the sender whose frames
 * came from it (learnt), broadcasts to every sender. */
static void
from_receiver(struct sw *s, const struct rte_ether_addr *macs, bool *known)
{
	struct rte_mbuf *pkts[BURST], *c;
	const struct rte_ether_hdr *eh;
	unsigned int i, n, k;
	bool sent;

	n = rte_ring_dequeue_burst(s->r_in, (void **)pkts, BURST, NULL);
	for (k = 0; k < n; k++) {
		eh = rte_pktmbuf_mtod(pkts[k], const struct rte_ether_hdr *);
		sent = false;
		for (i = 0; i < s->p.senders; i++) {
			if (rte_is_multicast_ether_addr(&eh->dst_addr)) {
				c = rte_pktmbuf_copy(pkts[k], pkts[k]->pool, 0,
						     UINT32_MAX);
				if (c != NULL &&
				    rte_ring_enqueue(s->s_out[i], c) != 0)
					rte_pktmbuf_free(c);
				continue;
			}
			if (known[i] &&
			    rte_is_same_ether_addr(&eh->dst_addr, &macs[i])) {
				if (rte_ring_enqueue(s->s_out[i], pkts[k]) != 0)
					rte_pktmbuf_free(pkts[k]);
				sent = true;
				s->c.back++;
				break;
			}
		}
		if (!sent) {
			if (!rte_is_multicast_ether_addr(&eh->dst_addr))
				s->c.stray++;
			rte_pktmbuf_free(pkts[k]);
		}
	}
}

/* Departures at the drain rate: no credit saved while the queue is empty,
 * at most SW_CATCHUP_US's worth after the thread was away. */
static void
drain(struct sw *s, uint64_t now)
{
	struct rte_mbuf *m;
	double len;

	s->credit += (double)(now - s->last_tsc) * s->bytes_per_cycle;
	s->last_tsc = now;
	while (s->q_len > 0) {
		m = s->q[s->q_head];
		len = (double)rte_pktmbuf_pkt_len(m);
		if (s->credit > s->catchup * len)
			s->credit = s->catchup * len;
		if (s->credit < len)
			return;
		if (rte_ring_enqueue(s->r_out, m) != 0) {
			s->c.stalls++;
			return;
		}
		s->credit -= len;
		s->c.sent++;
		s->c.sent_bytes += (uint64_t)len;
		if (s->measuring)
			s->c.busy_bytes += (uint64_t)len;
		s->q_head = (s->q_head + 1) % s->p.qcap;
		s->q_len--;
	}
	s->credit = 0;
}

static void
sample(struct sw *s, uint64_t now)
{
	uint64_t slot;

	if (now < s->next_sample)
		return;
	s->next_sample = now + s->sample_cycles;
	if (!s->measuring)
		return;
	s->hist[s->q_len]++;
	slot = (rte_rdtsc() - s->t0) / s->slot_cycles;
	if (slot < s->p.slots) {
		s->q_sum[slot] += s->q_len;
		s->q_n[slot]++;
	}
}

/* Learn each sender's MAC from its frames (its port's address). */
static void
learn(struct sw *s, struct rte_ether_addr *macs, bool *known)
{
	struct rte_mbuf *m;
	unsigned int i;

	for (i = 0; i < s->p.senders; i++) {
		if (known[i] || s->s_next[i] != NULL ||
		    rte_ring_count(s->s_in[i]) == 0)
			continue;
		if (rte_ring_dequeue(s->s_in[i], (void **)&m) != 0)
			continue;
		rte_ether_addr_copy(&rte_pktmbuf_mtod(m, struct rte_ether_hdr *)
				    ->src_addr, &macs[i]);
		known[i] = true;
		/* and on as any other frame of the sender */
		s->s_next[i] = m;	/* and on through its link */
	}
}

void
sw_start(struct sw *s)
{
	unsigned int i;

	s->last_tsc = s->prev = rte_rdtsc();
	for (i = 0; i < s->p.senders; i++)
		s->s_last[i] = s->last_tsc;
}

void
sw_poll(struct sw *s)
{
	/* Real time: the links keep it while the host has taken the core,
	 * and catch up after (credit for up to SW_CATCHUP_US, drain() and
	 * from_senders()), as the senders' pacers do; the time away is
	 * counted (gaps over SW_GAP_US between two polls). */
	uint64_t now = rte_rdtsc();

	if (s->measuring && now - s->prev > s->gap_cycles)
		s->away_cycles += now - s->prev;
	s->prev = now;
	learn(s, s->macs, s->known);
	from_senders(s, now);
	drain(s, now);
	from_receiver(s, s->macs, s->known);
	sample(s, now);
}

void
sw_finish(struct sw *s)
{
	unsigned int i;

	for (i = 0; i < s->p.slots; i++)
		s->q_series[i] = s->q_n[i] != 0 ?
			(double)s->q_sum[i] / (double)s->q_n[i] : 0.0;
}

unsigned int
sw_quantile(const struct sw *s, double f)
{
	uint64_t total = 0, acc = 0;
	unsigned int d;

	for (d = 0; d <= s->p.qcap; d++)
		total += s->hist[d];
	for (d = 0; d <= s->p.qcap; d++) {
		acc += s->hist[d];
		if (total != 0 && (double)acc >= f * (double)total)
			return d;
	}
	return s->p.qcap;
}
