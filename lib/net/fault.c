/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * [port] fault = drop=P,reorder=P,dup=P,corrupt=P,ce=P,seed=S: seeded faults on
 * the link, in ethdev rx and tx callbacks, one generator per port index,
 * queue and direction, so a run repeats exactly for a seed.
 *
 * Only RoCEv2 frames are touched (ARP and the rest pass), so that
 * neighbour resolution stays reliable. Each RoCEv2 frame draws four
 * numbers, drop, corrupt, dup, reorder, whatever the outcome, so that the
 * sequence of one fault does not depend on the others' rates:
 *   drop     the frame is freed;
 *   corrupt  one byte after the UDP header is inverted (never the BTH's
 *            resv8a byte, which the ICRC masks: IBTA A17.3.3), so the
 *            ICRC fails; shared or external buffers are copied first;
 *   dup      a deep copy goes out right after the frame (skipped when
 *            the burst array has no room left);
 *   reorder  the frame is held and goes out right after the next frame
 *            that goes out on that queue and direction (one at a time);
 *            a held frame with shared or external buffers is copied
 *            first: a zero-copy frame may not outlive the tx burst
 *            (lib/transport/zcopy.c, rule 1), and the copy never writes
 *            into application memory;
 *   ce       received frames only: an ECN-capable (ECT) frame is marked
 *            Congestion Experienced, as a congested switch marks it
 *            (RFC 3168 5; uroce_wire_mark_ce(), the IPv4 checksum kept
 *            right; the ICRC does not cover the bits); a Not-ECT frame
 *            passes unmarked. Its number is drawn (fifth, after the
 *            others) only when ce is set, so a spec without it repeats
 *            the faults it did before ce existed.
 *
 * The tx callback acts on uroce_port_tx()'s bursts only, which read back
 * how many frames it left (fq->out); other bursts on the queue pass.
 * uroce_port_set_fault() changes the rates and seed while the queues run,
 * and installs the callbacks if the port started without them (ethdev
 * publishes a new callback with a release store, so adding one beside a
 * running burst is safe; removing one is not, and waits for the port's
 * stop). Each queue takes a new setting up at its next burst and reseeds,
 * so a run from a given setting repeats as one from the config does.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>

#include "net_priv.h"

enum { DIR_RX, DIR_TX };

/* splitmix64 (Steele, Lea, Flood 2014): any seed, 0 included, is fine. */
static inline uint64_t
rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* True with probability ppm / 10^6. */
static inline bool
rng_hit(uint64_t *s, uint32_t ppm)
{
	return ((rng_next(s) >> 32) * UROCE_CONFIG_PPM >> 32) < ppm;
}

/* A private, direct, single-segment-owned copy of m if m's data is shared
 * (refcnt, indirect or external buffers); m itself otherwise. */
static struct rte_mbuf *
fault_own(struct net_fault_q *fq, struct rte_mbuf *m)
{
	const struct rte_mbuf *s;
	struct rte_mbuf *c;

	for (s = m; s != NULL; s = s->next) {
		if (!RTE_MBUF_DIRECT(s) || rte_mbuf_refcnt_read(s) > 1)
			break;
	}
	if (s == NULL)
		return m;
	c = rte_pktmbuf_copy(m, fq->pool, 0, UINT32_MAX);
	if (c == NULL)
		return NULL;
	rte_pktmbuf_free(m);
	return c;
}

/* Invert one byte in [UDP end, IP end) but the BTH's resv8a. */
static struct rte_mbuf *
fault_corrupt(struct net_fault_q *fq, struct rte_mbuf *m,
	      const struct net_frame *f)
{
	uint32_t start = f->l4_off + 8u;
	uint32_t end = RTE_MIN((uint32_t)f->l3_end, rte_pktmbuf_pkt_len(m));
	uint32_t off, span;
	struct rte_mbuf *seg;
	struct rte_mbuf *own;

	if (end <= start + 5)
		return m;
	span = end - start - 1;		/* minus the resv8a byte */
	off = start + (uint32_t)(rng_next(&fq->rng) % span);
	if (off >= start + 4)		/* BTH byte 4: resv8a, skipped */
		off++;
	own = fault_own(fq, m);
	if (own == NULL)
		return m;
	for (seg = own; seg != NULL && off >= seg->data_len; seg = seg->next)
		off -= seg->data_len;
	if (seg != NULL) {
		*rte_pktmbuf_mtod_offset(seg, uint8_t *, off) ^= 0xff;
		net_ctr_add(&fq->st->fault_corrupt, 1);
	}
	return own;
}

/* Mark CE on an ECT frame (own copy first if shared). */
static struct rte_mbuf *
fault_ce(struct net_fault_q *fq, struct rte_mbuf *m, const struct net_frame *f)
{
	struct rte_mbuf *own;
	uint8_t ecn;

	if (rte_pktmbuf_data_len(m) < f->l4_off)
		return m;
	ecn = rte_pktmbuf_mtod_offset(m, const uint8_t *, f->l3_off)[1];
	if (*rte_pktmbuf_mtod_offset(m, const uint8_t *, f->l3_off) >> 4 == 6)
		ecn >>= 4;
	ecn &= UROCE_ECN_MASK;
	if (ecn == UROCE_ECN_NOT_ECT || ecn == UROCE_ECN_CE)
		return m;
	own = fault_own(fq, m);
	if (own == NULL)
		return m;
	if (uroce_wire_mark_ce(rte_pktmbuf_mtod_offset(own, uint8_t *,
						       f->l3_off)))
		net_ctr_add(&fq->st->fault_ce, 1);
	return own;
}

/*
 * Rewrite pkts[0..nb) into pkts[0..return) with the faults; pkts has room
 * for cap frames. Room is kept for every remaining input before a
 * duplicate or a held frame is added.
 */
/* Seeds differ by port index, queue and direction; a seed repeats. */
static void
fault_seed(struct net_fault_q *fq)
{
	uint64_t s = fq->cfg.seed ^ fq->mix;

	fq->rng = rng_next(&s);
}

/* Take up a setting uroce_port_set_fault() finished; one being written
 * waits a burst. */
static void
fault_sync(struct net_fault_q *fq)
{
	const struct net_fault *fl = fq->fl;
	struct uroce_config_fault c;
	uint32_t sn = rte_seqcount_read_begin(&fl->seq);

	if (likely(sn == fq->seq))
		return;
	c = fl->cfg;
	if (rte_seqcount_read_retry(&fl->seq, sn))
		return;
	fq->cfg = c;
	fq->seq = sn;
	fq->on = c.drop_ppm != 0 || c.reorder_ppm != 0 || c.dup_ppm != 0 ||
		 c.corrupt_ppm != 0 || (fq->rx && c.ce_ppm != 0);
	fault_seed(fq);
}

static uint16_t
fault_apply(struct net_fault_q *fq, struct rte_mbuf **pkts, uint16_t nb,
	    uint16_t cap)
{
	const struct uroce_config_fault *cfg = &fq->cfg;
	struct rte_mbuf *m, *dup, *own;
	struct net_frame f;
	uint16_t i, out = 0;
	bool drop, corrupt, dupe, hold, ce;

	fault_sync(fq);
	if (nb > NET_FAULT_BURST_MAX || (!fq->on && fq->held == NULL))
		return nb;
	memcpy(fq->in, pkts, nb * sizeof(*pkts));
	for (i = 0; i < nb; i++) {
		m = fq->in[i];
		net_classify(m, &f);
		if (f.cls != NET_CLASS_ROCE) {
			pkts[out++] = m;
			continue;
		}
		drop = rng_hit(&fq->rng, cfg->drop_ppm);
		corrupt = rng_hit(&fq->rng, cfg->corrupt_ppm);
		dupe = rng_hit(&fq->rng, cfg->dup_ppm);
		hold = rng_hit(&fq->rng, cfg->reorder_ppm);
		ce = fq->rx && cfg->ce_ppm != 0 && rng_hit(&fq->rng, cfg->ce_ppm);
		if (drop) {
			rte_pktmbuf_free(m);
			net_ctr_add(&fq->st->fault_drop, 1);
			continue;
		}
		if (corrupt)
			m = fault_corrupt(fq, m, &f);
		if (ce)
			m = fault_ce(fq, m, &f);
		dup = NULL;
		if (dupe && out + 1u + (nb - i) <= cap) {
			dup = rte_pktmbuf_copy(m, fq->pool, 0, UINT32_MAX);
			if (dup != NULL)
				net_ctr_add(&fq->st->fault_dup, 1);
		}
		own = hold && fq->held == NULL ? fault_own(fq, m) : NULL;
		if (own != NULL) {	/* NULL: no copy, not held */
			fq->held = own;
			net_ctr_add(&fq->st->fault_reorder, 1);
			if (dup != NULL)
				pkts[out++] = dup;
			continue;
		}
		pkts[out++] = m;
		if (dup != NULL)
			pkts[out++] = dup;
		/* The held frame goes right after this one, room permitting. */
		if (fq->held != NULL && out + (nb - i - 1u) < cap) {
			pkts[out++] = fq->held;
			fq->held = NULL;
		}
	}
	return out;
}

static uint16_t
fault_rx_cb(uint16_t port_id, uint16_t queue, struct rte_mbuf *pkts[],
	    uint16_t nb_pkts, uint16_t max_pkts, void *user)
{
	return fault_apply(user, pkts, nb_pkts, max_pkts);
}

/* uroce_port_tx() says how much room its array has (fq->cap) and reads
 * back how many frames it holds (fq->out); its retries bypass us. */
static uint16_t
fault_tx_cb(uint16_t port_id, uint16_t queue, struct rte_mbuf *pkts[],
	    uint16_t nb_pkts, void *user)
{
	struct net_fault_q *fq = user;

	if (fq->bypass || fq->cap == 0)
		return nb_pkts;
	fq->out = fault_apply(fq, pkts, nb_pkts,
			      fq->cap > nb_pkts ? fq->cap : nb_pkts);
	return fq->out;
}

static void
fault_q_init(struct uroce_port *p, const struct net_fault *fl,
	     struct net_fault_q *fq, uint16_t q, unsigned int dir)
{
	fq->mix = ((uint64_t)p->idx << 48) ^ ((uint64_t)q << 8) ^ dir;
	fq->fl = fl;
	fq->pool = p->pool;
	fq->st = &p->q[q].st;
	fq->rx = dir == DIR_RX;
}

/* The one writer: the queues take it up at their next burst. */
static void
fault_publish(struct net_fault *fl, const struct uroce_config_fault *f)
{
	rte_seqcount_write_begin(&fl->seq);
	fl->cfg = *f;
	rte_seqcount_write_end(&fl->seq);
}

static void
fault_log(const struct uroce_port *p, const struct uroce_config_fault *f)
{
	NET_LOG(DEBUG, "uroce%u: faults drop %u reorder %u dup %u corrupt %u "
		"ce %u ppm, seed %" PRIu64 "\n", p->idx, f->drop_ppm,
		f->reorder_ppm, f->dup_ppm, f->corrupt_ppm, f->ce_ppm, f->seed);
}

/*
 * The injector with setting f, its callbacks on every queue. At start, or
 * later while the queues run: p->fault is published only once every
 * callback is in (a burst that saw it NULL made no use of them). If one
 * cannot be added, those that were stay, with no fault to inject, until
 * the port stops.
 */
int
net_fault_start(struct uroce_port *p, const struct uroce_config_fault *f,
		char *err, size_t err_len)
{
	static const struct uroce_config_fault none = { 0 };
	struct net_fault *fl;
	uint16_t q;
	int ret = 0;

	fl = rte_zmalloc("uroce_fault", sizeof(*fl), RTE_CACHE_LINE_SIZE);
	if (fl == NULL)
		return -ENOMEM;
	fl->rx = rte_zmalloc("uroce_fault_q", 2 * p->nb_queues * sizeof(*fl->rx),
			     RTE_CACHE_LINE_SIZE);
	if (fl->rx == NULL) {
		rte_free(fl);
		return -ENOMEM;
	}
	fl->tx = fl->rx + p->nb_queues;
	fault_publish(fl, f);
	for (q = 0; q < p->nb_queues && ret == 0; q++) {
		fault_q_init(p, fl, &fl->rx[q], q, DIR_RX);
		fault_q_init(p, fl, &fl->tx[q], q, DIR_TX);
		fl->rx[q].cb = rte_eth_add_rx_callback(p->port_id, q,
						       fault_rx_cb, &fl->rx[q]);
		fl->tx[q].cb = rte_eth_add_tx_callback(p->port_id, q,
						       fault_tx_cb, &fl->tx[q]);
		if (fl->rx[q].cb == NULL || fl->tx[q].cb == NULL) {
			snprintf(err, err_len, "[port] fault (dev %s): ethdev "
				 "callbacks: %s", p->cfg->dev,
				 rte_strerror(rte_errno));
			NET_LOG(ERR, "%s\n", err);
			ret = rte_errno != 0 ? -rte_errno : -ENOTSUP;
			fault_publish(fl, &none);
		}
	}
	__atomic_store_n(&p->fault, fl, __ATOMIC_RELEASE);
	if (ret == 0)
		fault_log(p, f);
	return ret;
}

int
uroce_port_set_fault(struct uroce_port *p, const struct uroce_config_fault *f,
		     char *err, size_t err_len)
{
	if (p == NULL || f == NULL || f->drop_ppm > UROCE_CONFIG_PPM ||
	    f->reorder_ppm > UROCE_CONFIG_PPM || f->dup_ppm > UROCE_CONFIG_PPM ||
	    f->corrupt_ppm > UROCE_CONFIG_PPM || f->ce_ppm > UROCE_CONFIG_PPM) {
		snprintf(err, err_len, "a fault probability above 1");
		return -EINVAL;
	}
	if (p->fault == NULL)
		return net_fault_start(p, f, err, err_len);
	fault_publish(p->fault, f);
	fault_log(p, f);
	return 0;
}

/* After the ethdev stopped: no burst runs, the callbacks can go. */
void
net_fault_stop(struct uroce_port *p)
{
	struct net_fault *fl = p->fault;
	uint16_t q;

	if (fl == NULL)
		return;
	for (q = 0; q < p->nb_queues; q++) {
		if (fl->rx[q].cb != NULL &&
		    rte_eth_remove_rx_callback(p->port_id, q, fl->rx[q].cb) == 0)
			rte_free((void *)(uintptr_t)fl->rx[q].cb);
		if (fl->tx[q].cb != NULL &&
		    rte_eth_remove_tx_callback(p->port_id, q, fl->tx[q].cb) == 0)
			rte_free((void *)(uintptr_t)fl->tx[q].cb);
		rte_pktmbuf_free(fl->rx[q].held);
		rte_pktmbuf_free(fl->tx[q].held);
	}
	rte_free(fl->rx);
	rte_free(fl);
	p->fault = NULL;
}
