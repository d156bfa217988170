/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The engine loop. One iteration, on a background lcore or inside
 * uroce_engine_poll():
 *
 *   control messages -> doorbells -> rx (port, hand-offs, loopback)
 *   -> timers -> tx (ready QPs, round-robin) -> flush -> port control
 *
 * A background lcore then reports a quiescent point (rte_rcu_qsbr: MR
 * deregistration and QP destruction wait for it) and backs off when idle:
 * a few rte_pause() iterations, then sleeps growing from 1 us to 64 us, so
 * two processes on a 2-core machine both progress; a control message ends
 * the sleep at once (wake.c). Work resets the back-off.
 *
 * Native progress (no background lcore): the thread in uroce_engine_poll()
 * is the owner while it iterates, a thread that posts while nobody
 * iterates serves its QP at once (eng_kick_native()).
 *
 * Everything here runs on the lcore that owns the context, except
 * eng_kick(), which any thread calls.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_prefetch.h>

#include "engine_priv.h"

RTE_DEFINE_PER_LCORE(struct eng_lcore *, eng_cur);

/* Idle back-off: spin this many empty iterations, then sleep. */
#define ENG_IDLE_SPIN		64
#define ENG_SLEEP_MIN_NS	1000
#define ENG_SLEEP_MAX_NS	64000
/* Timer slack of an engine thread, so that short sleeps stay short. */
#define ENG_TIMER_SLACK_NS	1000

static struct rte_ring *
eng_ring(const char *what, unsigned int idx, unsigned int size)
{
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "uroce_%s%u", what, idx);
	return rte_ring_create(name, size, SOCKET_ID_ANY, RING_F_SC_DEQ);
}

/* Wheel slots of about a microsecond: 2^shift <= tsc_hz / 10^6. */
static unsigned int
eng_wheel_shift(uint64_t hz)
{
	unsigned int shift = 0;

	while (shift < UROCE_WHEEL_SHIFT_MAX && (hz >> (shift + 1)) >= 1000000)
		shift++;
	return shift;
}

int
eng_lcore_setup(struct eng_lcore *lc, unsigned int idx, unsigned int lcore_id)
{
	unsigned int d;
	int ret;

	memset(lc, 0, sizeof(*lc));
	lc->idx = idx;
	lc->lcore_id = lcore_id;
	uroce_sched_init(&lc->ready, ENG_SCHED_NOWIRE + 1);
	TAILQ_INIT(&lc->owned);
	for (d = 0; d < UROCE_CONFIG_MAX_PORTS; d++) {
		lc->txb[d].cap = UROCE_TXB_MAX;
		lc->wire_txb[d].cap = UROCE_TXB_MAX;
	}
	lc->ctrl = eng_ring("ctl", idx, ENG_RING_SIZE);
	lc->db = eng_ring("db", idx, ENG_DB_RING_SIZE);
	lc->lo = eng_ring("lo", idx, ENG_RING_SIZE);
	lc->ho = eng_ring("ho", idx, ENG_RING_SIZE);
	if (lc->ctrl == NULL || lc->db == NULL || lc->lo == NULL ||
	    lc->ho == NULL) {
		ret = -(rte_errno ? rte_errno : ENOMEM);
		goto fail;
	}
	ret = uroce_wheel_init(&lc->wheel, eng_wheel_shift(eng_g->tsc_hz),
			       ENG_WHEEL_SLOTS, rte_get_tsc_cycles());
	if (ret == 0)
		return 0;
fail:
	rte_ring_free(lc->ctrl);
	rte_ring_free(lc->db);
	rte_ring_free(lc->lo);
	rte_ring_free(lc->ho);
	memset(lc, 0, sizeof(*lc));
	return ret;
}

static void
eng_ring_free_mbufs(struct rte_ring *r)
{
	void *m;

	if (r == NULL)
		return;
	while (rte_ring_sc_dequeue(r, &m) == 0)
		rte_pktmbuf_free(m);
}

/* After the lcore stopped: free the frames it holds. */
void
eng_lcore_drain(struct eng_lcore *lc)
{
	unsigned int d;

	eng_ring_free_mbufs(lc->lo);
	eng_ring_free_mbufs(lc->ho);
	for (d = 0; d < UROCE_CONFIG_MAX_PORTS; d++) {
		rte_pktmbuf_free_bulk(lc->txb[d].pkts, lc->txb[d].n);
		lc->txb[d].n = 0;
		rte_pktmbuf_free_bulk(lc->wire_txb[d].pkts, lc->wire_txb[d].n);
		lc->wire_txb[d].n = 0;
	}
}

/* After the lcore stopped and drained, and its QPs are gone. */
void
eng_lcore_free(struct eng_lcore *lc)
{
	rte_ring_free(lc->ctrl);
	rte_ring_free(lc->db);
	rte_ring_free(lc->lo);
	rte_ring_free(lc->ho);
	if (lc->wheel.lists != NULL)
		uroce_wheel_fini(&lc->wheel);
	memset(lc, 0, sizeof(*lc));
}

/* ------------------------------------------------------------------------
 * Scheduling of QPs: the ready lists and the timer wheel. Owner only.
 */

/* Whether the QP's calls may build frames for its port (else they only
 * flush WQEs into completions: ERR, SQE, RESET, INIT). */
static bool
eng_qp_wired(const struct eng_qp *eq)
{
	enum ibv_qp_state st = eq->qp->state;

	return st == IBV_QPS_RTR || st == IBV_QPS_RTS || st == IBV_QPS_SQD;
}

/*
 * The QP joins the ready list of its port, or the no-wire list when it
 * builds no frames, so that a stalled port holds back only the QPs that
 * would queue frames behind it (and does not hold back the flushing of a
 * QP in ERR). The state is read when the QP joins and at every activation
 * after: a QP that waits on the no-wire list since INIT and is then
 * modified to RTR/RTS (every modify activates it) moves to its port's list.
 * Left on the no-wire list it would build frames while the port stalls,
 * and what the port cannot hold would be freed as tx_full and resent by
 * go-back-N (as when many QPs are connected with no engine pass between
 * their modifies and then start sending at once). A QP that leaves RTS
 * while it waits on a stalled port's list runs when the stall ends (at the
 * latest the port's tx watchdog, uroce_port.h).
 */
void
eng_qp_activate(struct eng_lcore *lc, struct eng_qp *eq)
{
	unsigned int list = eng_qp_wired(eq) ? eq->dev->idx : ENG_SCHED_NOWIRE;

	if (eq->ready.queued) {
		if (eq->ready.list == list)
			return;
		uroce_sched_del(&lc->ready, &eq->ready);
	}
	uroce_sched_entry_init(&eq->ready, list);
	uroce_sched_add(&lc->ready, &eq->ready);
}

/*
 * After every call into a QP: its timer follows uroce_qp_deadline(), at
 * the time the wheel picks up to uroce_qp_deadline_latest() (a slow paced
 * QP's wake-up: the start of a wheel block, see qp_pace.c, Wake-up); an
 * armed time still in that range stands. Only where it pays: with at
 * least ENG_RANGE_MIN_TIMERS timers armed (below that the wheel's lists
 * stay in the cache and moving them costs little, while a range takes
 * half of the QP's margin against the host's stalls, which a lone paced
 * QP needs whole to keep its rate),
 * and for a range of at least ENG_RANGE_BLOCKS blocks: the QPs due at a
 * block's start are served one after another, over up to a block when
 * the engine is busy (150 frames per busy iteration at 10,000 QPs), and
 * the other half of the QP's spare slack must cover that as well.
 *
 * A QP on a ready list whose deadline has passed needs no timer: eng_tx()
 * calls it and re-arms it after. Else, when the iteration's budget is
 * spent, a timer that fired and put its QP on the ready list
 * (eng_timers()) would come back due at once and fire again every
 * iteration until eng_tx() reaches the QP: an engine behind its work
 * would spend itself on expiries.
 */
void
eng_qp_rearm(struct eng_lcore *lc, struct eng_qp *eq)
{
	struct uroce_wheel_entry *e = &eq->tmo->e;
	uint64_t dl = uroce_qp_deadline(eq->qp), latest;
	uint64_t block = uroce_wheel_block_cycles(&lc->wheel);

	if (dl == UINT64_MAX || (eq->ready.queued && dl <= eng_now(lc))) {
		if (uroce_wheel_armed(e))
			uroce_wheel_del(&lc->wheel, e);
		return;
	}
	latest = uroce_wheel_count(&lc->wheel) < ENG_RANGE_MIN_TIMERS ? dl :
		 uroce_qp_deadline_latest(eq->qp, dl);
	if (latest - dl < ENG_RANGE_BLOCKS * block)
		latest = dl;
	if (uroce_wheel_armed(e) && e->deadline >= dl && e->deadline <= latest)
		return;
	if (uroce_wheel_count(&lc->wheel) == 0)
		eng_now(lc);	/* the empty wheel's cursor to the present */
	uroce_wheel_add_range(&lc->wheel, e, dl, latest);
}

static void eng_tx_now(struct eng_lcore *lc, struct eng_qp *eq);

/*
 * A kick on the owner that needs no call of its own: the QP holds its next
 * packet back until a time its armed timer calls it at (a paced QP waiting
 * for its batch's tokens), and a call before that would do nothing
 * (uroce_qp_tx_waits()); the timer's call finds the WQE posted or the
 * ACK's progress. With thousands of slow paced QPs most kicks (the ACKs
 * and posts) come in that wait, and each call for one would read a cold
 * QP's lines for nothing, on the posting thread once per message.
 */
static bool
eng_kick_waits(struct eng_lcore *lc, const struct eng_qp *eq)
{
	return uroce_wheel_armed(&eq->tmo->e) &&
	       uroce_qp_tx_waits(eq->qp, eng_now(lc));
}

/*
 * Native progress (no background lcore) and nobody runs the loop: the
 * posting thread becomes the owner for as long as it takes to serve the
 * QP, the way a NIC starts on the doorbell write. Without this the WR
 * would wait for the poster's next uroce_poll() to get through the
 * control, doorbell, receive and timer steps first (a third of the
 * latency of a hop). false: someone else runs the loop; ring.
 */
static bool
eng_kick_native(struct eng_lcore *lc, struct eng_qp *eq)
{
	if (eng_g->nb_bg != 0 || RTE_PER_LCORE(eng_cur) != NULL ||
	    !rte_spinlock_trylock(&eng_g->native_lock))
		return false;
	RTE_PER_LCORE(eng_cur) = lc;
	eng_tx_now(lc, eq);
	RTE_PER_LCORE(eng_cur) = NULL;
	uroce_spin_unlock(&eng_g->native_lock);
	return true;
}

/*
 * The QP has work to transmit (env ops kick). On the owner it joins the
 * ready lists; in native mode the poster serves it at once if it can
 * (above); from any other thread it rings the owner's doorbell, at
 * most once until the owner takes it (db_pending). The exchange pairs with
 * the owner's in eng_db_drain(): a poster whose exchange finds the flag
 * already set has its WQEs visible to the owner's next uroce_qp_tx().
 */
void
eng_kick(void *ctx, struct uroce_qp *qp)
{
	struct eng_qp *eq = qp->engine;
	struct eng_lcore *lc;

	RTE_SET_USED(ctx);
	if (eq == NULL)		/* still being created */
		return;
	lc = eng_g->lc[qp->lcore];
	if (RTE_PER_LCORE(eng_cur) == lc) {
		if (!eng_kick_waits(lc, eq))
			eng_qp_activate(lc, eq);
		return;
	}
	if (eng_kick_native(lc, eq))
		return;
	if (__atomic_exchange_n(&eq->db_pending, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	if (rte_ring_mp_enqueue(lc->db, eq) != 0)
		__atomic_store_n(&lc->db_overflow, 1, __ATOMIC_RELEASE);
}

static unsigned int
eng_db_drain(struct eng_lcore *lc)
{
	void *objs[ENG_RX_BURST];
	struct eng_qp *eq;
	unsigned int i, n, total = 0;

	do {
		n = rte_ring_sc_dequeue_burst(lc->db, objs, RTE_DIM(objs), NULL);
		for (i = 0; i < n; i++) {
			eq = objs[i];
			__atomic_exchange_n(&eq->db_pending, 0, __ATOMIC_ACQ_REL);
			if (!eng_kick_waits(lc, eq))
				eng_qp_activate(lc, eq);
		}
		total += n;
	} while (n == RTE_DIM(objs));
	/* A doorbell that did not fit: serve every QP of the lcore. A load
	 * first: an exchange is a locked instruction, every iteration. */
	if (__atomic_load_n(&lc->db_overflow, __ATOMIC_RELAXED) != 0 &&
	    __atomic_exchange_n(&lc->db_overflow, 0, __ATOMIC_ACQ_REL) != 0) {
		TAILQ_FOREACH(eq, &lc->owned, owned_link) {
			__atomic_exchange_n(&eq->db_pending, 0, __ATOMIC_ACQ_REL);
			eng_qp_activate(lc, eq);
		}
		total++;
	}
	lc->st.doorbells += total;
	return total;
}

/* ------------------------------------------------------------------------
 * Transmit: flush a device's batch to its port, or loop frames back.
 */

/* The local device a frame is for (destination MAC), or NULL: the wire. */
static struct uroce_dev *
eng_loop_target(struct uroce_dev *dev, const struct rte_mbuf *m)
{
	const uint8_t *dmac = rte_pktmbuf_mtod(m, const uint8_t *);

	if (rte_pktmbuf_data_len(m) < RTE_ETHER_ADDR_LEN)
		return NULL;
	if (memcmp(dmac, dev->mac.addr_bytes, RTE_ETHER_ADDR_LEN) == 0)
		return dev;
	if (eng_g->flags & UROCE_ENGINE_WIRE_XDEV)
		return NULL;
	return eng_dev_by_mac(dmac);
}

/* A looped-back frame must be one plain segment, as a received one is: the
 * transport may build chains and external-buffer (zero-copy) frames. */
static struct rte_mbuf *
eng_linear_copy(struct uroce_dev *dev, struct rte_mbuf *m)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	struct rte_mbuf *c;
	const void *src;
	char *dst;

	if (m->nb_segs == 1 && !RTE_MBUF_HAS_EXTBUF(m))
		return m;
	c = rte_pktmbuf_alloc(dev->env.pool);
	dst = c != NULL ? rte_pktmbuf_append(c, len) : NULL;
	if (dst != NULL) {
		src = rte_pktmbuf_read(m, 0, len, dst);
		if (src != NULL && src != dst)
			memcpy(dst, src, len);
	}
	rte_pktmbuf_free(m);
	if (dst == NULL) {
		rte_pktmbuf_free(c);
		return NULL;
	}
	return c;
}

static void
eng_loop(struct eng_lcore *lc, struct uroce_dev *from, struct uroce_dev *to,
	 struct rte_mbuf *m)
{
	struct uroce_dev_stats *ds = &lc->dst[from->idx];
	uint64_t ol = m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM;
	uint8_t l2 = (uint8_t)m->l2_len;

	m = eng_linear_copy(from, m);
	if (m == NULL) {
		ds->loop_drops++;
		return;
	}
	/* Left to a NIC that this frame never meets: compute it here. */
	if (ol != 0) {
		uroce_wire_ipv4_cksum_fill(rte_pktmbuf_mtod(m, uint8_t *) + l2);
		m->ol_flags &= ~(RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_IPV4);
	}
	m->port = to->idx;
	if (rte_ring_mp_enqueue(lc->lo, m) != 0) {
		rte_pktmbuf_free(m);
		ds->loop_drops++;
		return;
	}
	ds->loop_pkts++;
}

/* The paced QPs' frames of txb have just gone to the port: their buckets
 * learn when (eng_qp_handoff()). */
static void
eng_pace_handoffs(struct eng_lcore *lc, const struct uroce_txb *txb,
		  uint64_t now)
{
	uint16_t i, k = 0;

	for (i = 0; i < lc->n_pace_ho; i++) {
		struct eng_pace_ho *h = &lc->pace_ho[i];

		if (h->txb == txb)
			uroce_qp_pace_handoff(h->qp, now, h->bytes);
		else
			lc->pace_ho[k++] = *h;
	}
	lc->n_pace_ho = k;
}

/* A raw frame to a multicast or broadcast MAC also reaches the device's
 * own flows, as a NIC loops multicast back to its local QPs (the sender's
 * too: that is what IBV_QP_CREATE_BLOCK_SELF_MCAST_LB would turn off). */
static void
eng_raw_mcast_loop(struct eng_lcore *lc, struct uroce_dev *dev,
		   const struct rte_mbuf *m)
{
	const uint8_t *dmac = rte_pktmbuf_mtod(m, const uint8_t *);
	struct rte_mbuf *c;

	if (rte_pktmbuf_data_len(m) < RTE_ETHER_ADDR_LEN ||
	    !rte_is_multicast_ether_addr((const struct rte_ether_addr *)dmac))
		return;
	c = rte_pktmbuf_copy(m, dev->env.pool, 0, UINT32_MAX);
	if (c == NULL) {
		lc->dst[dev->idx].loop_drops++;
		return;
	}
	/* Straight to the flow rules, as the port's rx hook takes a frame. */
	if (eng_flow_rx(dev, (uint16_t)lc->idx, c))
		lc->dst[dev->idx].loop_pkts++;
	else
		rte_pktmbuf_free(c);
}

/* Send a device's batch: RoCEv2 frames (txb) may loop back to a local
 * device, raw frames (wire_txb, RAW_PACKET QPs) always take the port and
 * multicast ones loop back to the device as well. */
static void
eng_flush_txb(struct eng_lcore *lc, struct uroce_dev *dev,
	      struct uroce_txb *txb)
{
	struct rte_mbuf *wire[UROCE_TXB_MAX];
	bool loop = txb == &lc->txb[dev->idx];
	struct uroce_dev *to;
	uint16_t i, nw = 0;
	uint64_t t0, now = 0;

	for (i = 0; i < txb->n; i++) {
		to = loop ? eng_loop_target(dev, txb->pkts[i]) : NULL;
		if (!loop)
			eng_raw_mcast_loop(lc, dev, txb->pkts[i]);
		if (to != NULL)
			eng_loop(lc, dev, to, txb->pkts[i]);
		else
			wire[nw++] = txb->pkts[i];
	}
	txb->n = 0;
	if (nw > 0) {
		t0 = rte_get_tsc_cycles();
		lc->dst[dev->idx].tx_pkts +=
			uroce_port_tx(dev->port, lc->idx, wire, nw);
		now = rte_get_tsc_cycles();
		lc->st.tx_cycles += now - t0;
	}
	/* The hand-off's time: the burst's end, read only if none went. */
	if (lc->n_pace_ho > 0)
		eng_pace_handoffs(lc, txb, nw > 0 ? now : rte_get_tsc_cycles());
}

static void
eng_flush(struct eng_lcore *lc, struct uroce_dev *dev)
{
	eng_flush_txb(lc, dev, &lc->txb[dev->idx]);
}

/* A frame the transport did not build (a MAD of the GSI, gsi.c), sent at
 * once with what waits in dev's batch: looped back to a local device or
 * put on the port. Owner of lc, between iterations (a control message). */
void
eng_send_frame(struct eng_lcore *lc, struct uroce_dev *dev, struct rte_mbuf *m)
{
	struct uroce_txb *txb = &lc->txb[dev->idx];

	if (uroce_txb_full(txb))
		eng_flush(lc, dev);
	uroce_txb_add(txb, m);
	eng_flush(lc, dev);
}

/* The batch a call into a QP of dev may fill: never a full one. */
static struct uroce_txb *
eng_txb(struct eng_lcore *lc, struct uroce_dev *dev)
{
	struct uroce_txb *txb = &lc->txb[dev->idx];

	if (uroce_txb_full(txb))
		eng_flush(lc, dev);
	return txb;
}

/* The batch of a QP's transmit call: raw QPs' frames stay on the wire. */
static struct uroce_txb *
eng_qp_txb(struct eng_lcore *lc, struct eng_qp *eq)
{
	struct uroce_txb *txb = &lc->wire_txb[eq->dev->idx];

	if (eq->qp->type != IBV_QPT_RAW_PACKET)
		return eng_txb(lc, eq->dev);
	if (uroce_txb_full(txb))
		eng_flush_txb(lc, eq->dev, txb);
	return txb;
}

/* Send every device's batches. */
static void
eng_flush_all(struct eng_lcore *lc)
{
	struct uroce_dev *dev;
	unsigned int d;

	for (d = 0; d < eng_g->ndev; d++) {
		dev = eng_g->dev[d];
		if (lc->txb[d].n > 0)
			eng_flush(lc, dev);
		if (lc->wire_txb[d].n > 0)
			eng_flush_txb(lc, dev, &lc->wire_txb[d]);
	}
}

/*
 * A paced QP's frames are charged at a clock read just before its call,
 * not at the iteration's, which would carry the jitter of everything else
 * the iteration does. They go to the port with the transmit batch they
 * are in, and the bucket then learns when they really left
 * (uroce_qp_pace_handoff(), as one burst), so that however late that is
 * (a batch filled by other QPs, a thread preempted), no full burst
 * follows right behind them and the wire never shows more than
 * max_burst_sz back to back (docs/pacing.md).
 */
static uint64_t
eng_qp_clock(struct eng_lcore *lc, const struct eng_qp *eq)
{
	return eq->qp->pace_on ? rte_get_tsc_cycles() : eng_now(lc);
}

static void
eng_qp_handoff(struct eng_lcore *lc, const struct eng_qp *eq,
	       struct uroce_txb *txb, uint64_t paced0)
{
	struct uroce_qp *qp = eq->qp;
	uint64_t bytes = qp->pace_bytes - paced0;
	uint16_t i;

	if (!qp->pace_on || bytes == 0)
		return;
	/* Its frames leave with the batch they are in, when the batch is
	 * full or at the end of the iteration, and not each QP's few on
	 * their own (10,000 slow QPs send 6 frames a call): the hand-off
	 * waits for them. The bucket sees the frames of a QP's calls into one
	 * batch as the one burst they are on the wire. */
	for (i = 0; i < lc->n_pace_ho; i++) {
		if (lc->pace_ho[i].qp == qp && lc->pace_ho[i].txb == txb) {
			lc->pace_ho[i].bytes += bytes;
			return;
		}
	}
	if (lc->n_pace_ho == ENG_PACE_HO_MAX)
		eng_flush_all(lc);	/* runs the pending hand-offs */
	if (txb->n == 0) {
		/* Nothing of it waits (flushed above, or charged frames
		 * that were never built: no mbuf). */
		uroce_qp_pace_handoff(qp, rte_get_tsc_cycles(), bytes);
		return;
	}
	lc->pace_ho[lc->n_pace_ho++] = (struct eng_pace_ho){
		.qp = qp, .txb = txb, .bytes = bytes };
}

/*
 * A QP that would put frames on a port queue that stalls stays ready
 * without building them: they would only wait behind the others
 * (back-pressure, uroce_port.h). QPs in the other states still run: their
 * calls flush WQEs into completions (ERR, SQE) and build nothing.
 */
static bool
eng_qp_stalled(const struct eng_lcore *lc, const struct eng_qp *eq)
{
	return eng_qp_wired(eq) && uroce_port_tx_busy(eq->dev->port, lc->idx);
}

/* The ready lists whose port stalls now (bit = device index). */
static uint32_t
eng_busy_ports(const struct eng_lcore *lc)
{
	uint32_t busy = 0;
	unsigned int d;

	for (d = 0; d < eng_g->ndev; d++)
		if (uroce_port_tx_busy(eng_g->dev[d]->port, lc->idx))
			busy |= UINT32_C(1) << d;
	return busy;
}

/*
 * One call per QP that was ready when the round began, ports taking turns
 * (uroce_sched_next()), until the iteration's frame budget is spent. The
 * QPs of a stalling port are not looked at: they keep their place, and so
 * do the QPs not reached, for the next iteration. A QP with more to send
 * goes to the tail of its list.
 */
static unsigned int
eng_tx(struct eng_lcore *lc)
{
	uint32_t round = uroce_sched_count(&lc->ready), busy;
	struct uroce_sched_entry *e;
	unsigned int n = 0, built = 0;
	struct uroce_txb *txb;
	struct eng_qp *eq;
	uint64_t paced0;
	uint16_t n0;
	bool more;

	if (round == 0)
		return 0;
	busy = eng_busy_ports(lc);
	while (n < round && built < ENG_TX_BUDGET &&
	       (e = uroce_sched_next(&lc->ready, busy)) != NULL) {
		eq = container_of(e, struct eng_qp, ready);
		txb = eng_qp_txb(lc, eq);
		n0 = txb->n;
		paced0 = eq->qp->pace_bytes;
		more = uroce_qp_tx(eq->qp, eng_qp_clock(lc, eq), txb);
		built += txb->n - n0;
		eng_qp_handoff(lc, eq, txb, paced0);
		eng_qp_rearm(lc, eq);
		if (more)
			eng_qp_activate(lc, eq);
		/* Its frames may have filled the port's queue. */
		if (uroce_port_tx_busy(eq->dev->port, lc->idx))
			busy |= UINT32_C(1) << eq->dev->idx;
		n++;
	}
	return n;
}

/*
 * A kicked QP, on its owner outside an iteration (eng_kick_native()). When
 * it is the only ready QP and its port takes frames, its call runs now and
 * the frames leave at once; otherwise it joins the ready lists and waits
 * its turn in the next iteration, as a doorbell would make it (a post must
 * not jump ahead of QPs already waiting, nor build behind a stall). A QP
 * that waits for its timer is left to it (eng_kick_waits()).
 */
static void
eng_tx_now(struct eng_lcore *lc, struct eng_qp *eq)
{
	lc->now_read = false;	/* a fresh clock, for the check and the call */
	if (!eng_kick_waits(lc, eq)) {
		eng_qp_activate(lc, eq);
		if (uroce_sched_count(&lc->ready) == 1 && eng_qp_wired(eq) &&
		    !eng_qp_stalled(lc, eq)) {
			eng_tx(lc);
			eng_flush_all(lc);
			lc->st.direct_tx++;
		}
	}
	lc->now_read = false;	/* the next iteration reads afresh */
}

/* ------------------------------------------------------------------------
 * Receive.
 */

/*
 * One frame for dev: parse (ICRC checked), find the QP, run its rx here or
 * hand the frame to its owner. counted: a hand-off, whose verdict and QPN
 * were counted by the lcore that received it.
 */
static struct eng_qp *
eng_deliver(struct eng_lcore *lc, struct uroce_dev *dev, struct rte_mbuf *m,
	    bool counted)
{
	struct uroce_dev_stats *ds = &lc->dst[dev->idx];
	enum uroce_wire_verdict v;
	struct eng_qp *eq, *served = NULL;
	struct uroce_pkt pkt;
	unsigned int owner;

	v = uroce_wire_parse(rte_pktmbuf_mtod(m, const uint8_t *),
			     rte_pktmbuf_data_len(m), 0, &pkt);
	if (!counted)
		ds->wire.verdict[v]++;
	if (v != UROCE_WIRE_OK)
		goto drop;
	/* QP1 is the GSI's, never an application QP's (gsi.c). Frames
	 * are not handed off for it: counted is false here. */
	if (unlikely(pkt.bth.dqpn == UROCE_GSI_QPN)) {
		eng_gsi_rx(lc, dev, &pkt);
		goto drop;
	}
	eq = eng_qpn_lookup(pkt.bth.dqpn);
	if (eq == NULL || eq->dev != dev) {
		if (!counted)
			ds->unknown_qpn++;
		goto drop;
	}
	owner = eq->qp->lcore;
	if (owner != lc->idx) {
		m->port = dev->idx;
		m->ol_flags &= ~(RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID);
		if (rte_ring_mp_enqueue(eng_g->lc[owner]->ho, m) != 0) {
			ds->handoff_drops++;
			goto drop;
		}
		ds->handoffs++;
		return NULL;
	}
	uroce_qp_rx(eq->qp, &pkt, m, eng_now(lc), eng_txb(lc, dev));
	eng_qp_rearm(lc, eq);
	served = eq;
drop:
	rte_pktmbuf_free(m);
	return served;
}

/*
 * With many QPs, each frame received (an ACK, mostly, on the sender) is
 * for a QP whose lines are out of the cache, and its delivery missed on
 * them one after another. So the QP of the frame ENG_PF_RX ahead is looked
 * up from its BTH (uroce_wire_peek_dqpn(), before that frame's parse) and
 * its eng_qp asked for, and the QP's own lines the frame before.
 */
#define ENG_PF_RX	2

static inline struct eng_qp *
eng_rx_peek(const struct rte_mbuf *m)
{
	uint32_t qpn = uroce_wire_peek_dqpn(rte_pktmbuf_mtod(m, const uint8_t *),
					    rte_pktmbuf_data_len(m));

	return qpn == UROCE_WIRE_NO_QPN ? NULL : eng_qpn_lookup(qpn);
}

/* The prefetches due before delivering frame i of n, from i = -ENG_PF_RX
 * (the lead-in); ahead[] keeps each frame's lookup for the second stage. */
static inline void
eng_rx_prefetch(struct rte_mbuf *const *pkts, struct eng_qp **ahead,
		unsigned int n, int i)
{
	int j = i + ENG_PF_RX;

	if (j < (int)n && (ahead[j] = eng_rx_peek(pkts[j])) != NULL)
		rte_prefetch0(ahead[j]);
	if (i >= -1 && i + 1 < (int)n && ahead[i + 1] != NULL)
		uroce_qp_prefetch(ahead[i + 1]->qp);
}

/* A burst's QPs for eng_rx_owed(): each once per run of its frames. */
static inline void
eng_seen_add(struct eng_qp **seen, unsigned int *n, struct eng_qp *eq)
{
	if (eq != NULL && (*n == 0 || seen[*n - 1] != eq))
		seen[(*n)++] = eq;
}

/*
 * After a burst: what its requests left owed (uroce_qp_rx()), one ACK a QP
 * for all of them, sent now rather than in the iteration's transmit step
 * (after the timers), so that a ping-pong's ACK leaves as soon as it did
 * when each request sent its own. seen[] holds the burst's QPs, a QP once
 * per run of its frames; a QP seen twice finds nothing owed the second
 * time. A QP whose port stalls keeps it owed for eng_tx().
 */
static void
eng_rx_owed(struct eng_lcore *lc, struct eng_qp *const *seen, unsigned int n)
{
	struct eng_qp *eq;
	unsigned int i;

	for (i = 0; i < n; i++) {
		eq = seen[i];
		if (!eq->qp->resp_owed || eng_qp_stalled(lc, eq))
			continue;
		uroce_qp_tx_owed(eq->qp, eng_now(lc), eng_qp_txb(lc, eq));
	}
}

/* Deliver a port's burst; the QPs it reached answer after it. */
static void
eng_deliver_burst(struct eng_lcore *lc, struct uroce_dev *dev,
		  struct rte_mbuf *const *pkts, unsigned int n)
{
	struct eng_qp *seen[ENG_RX_BURST], *ahead[ENG_RX_BURST];
	unsigned int ns = 0;
	int i;

	for (i = -ENG_PF_RX; i < 0; i++)
		eng_rx_prefetch(pkts, ahead, n, i);
	for (i = 0; i < (int)n; i++) {
		eng_rx_prefetch(pkts, ahead, n, i);
		eng_seen_add(seen, &ns, eng_deliver(lc, dev, pkts[i], false));
	}
	eng_rx_owed(lc, seen, ns);
}

static unsigned int
eng_rx_port(struct eng_lcore *lc, struct uroce_dev *dev)
{
	struct rte_mbuf *pkts[ENG_RX_BURST];
	unsigned int b, total = 0;
	uint16_t n;

	for (b = 0; b < ENG_RX_BURSTS; b++) {
		n = uroce_port_rx(dev->port, lc->idx, pkts, ENG_RX_BURST);
		lc->dst[dev->idx].rx_pkts += n;
		eng_deliver_burst(lc, dev, pkts, n);
		total += n;
		if (n < ENG_RX_BURST)
			break;
	}
	return total;
}

/* Frames queued for this lcore: loopback (lo) or hand-offs (ho: RoCEv2
 * frames, and frames flow rules steered to a raw QP of this lcore). */
static unsigned int
eng_rx_ring(struct eng_lcore *lc, struct rte_ring *r, bool counted)
{
	struct eng_qp *seen[ENG_RX_BURST], *ahead[ENG_RX_BURST];
	struct rte_mbuf *pkts[ENG_RX_BURST], *m;
	unsigned int n, ns = 0;
	int i;

	n = rte_ring_sc_dequeue_burst(r, (void **)pkts, RTE_DIM(pkts), NULL);
	for (i = -ENG_PF_RX; i < 0; i++)
		eng_rx_prefetch(pkts, ahead, n, i);
	for (i = 0; i < (int)n; i++) {
		m = pkts[i];
		eng_rx_prefetch(pkts, ahead, n, i);
		if (counted && eng_flow_handoff_rx(lc, m))
			continue;
		eng_seen_add(seen, &ns,
			     eng_deliver(lc, eng_g->dev[m->port], m, counted));
	}
	eng_rx_owed(lc, seen, ns);
	return n;
}

/*
 * The QPs of expired timers are likely out of the cache (10,000 slow paced
 * QPs each wake up every few ms), and so are their timer entries. Timers
 * expire one at a time, ENG_PF_QP calls ahead of the call on their QP, so
 * that each miss is taken while a call runs rather than one after another:
 *  - the entry: the wheel's lists are chains, and the expiry of one entry
 *    starts the load of the next (uroce_wheel_expire()); taken several
 *    at a time, their loads would wait for each other, one after another;
 *  - the eng_qp and the QP's own lines, its requester's among them, in the
 *    two stages of uroce_qp_prefetch(): asked for when the entry expires
 *    (it points at both, tmo.c), and its send WQE, which the requester's
 *    line says where to find, the call before.
 */
#define ENG_PF_QP	2
#define ENG_PF_RING	(ENG_PF_QP + 1)

static inline struct eng_tmo *
eng_timer_tmo(struct uroce_wheel_entry *e)
{
	return container_of(e, struct eng_tmo, e);
}

/* Call the QP of an expired timer. It builds its frames here unless its
 * port stalls or the iteration's budget is spent: then it gets a batch
 * with no room, which makes it ask to be called again (kick), and eng_tx()
 * serves it in turn. */
static void
eng_timer_call(struct eng_lcore *lc, struct eng_tmo *t, unsigned int *built)
{
	struct eng_qp *eq = t->eq;
	struct uroce_txb *txb, none;
	uint64_t paced0;
	uint16_t n0;

	/* A batch with no room: nothing is ever put in its pkts[], which an
	 * initializer would zero (520 bytes) on every call. */
	none.n = 0;
	none.cap = 0;
	if (*built >= ENG_TX_BUDGET || eng_qp_stalled(lc, eq))
		txb = &none;
	else
		txb = eng_qp_txb(lc, eq);
	n0 = txb->n;
	paced0 = eq->qp->pace_bytes;
	uroce_qp_timer(eq->qp, eng_qp_clock(lc, eq), txb);
	*built += txb->n - n0;
	eng_qp_handoff(lc, eq, txb, paced0);
	eng_qp_rearm(lc, eq);
}

/* The next due timer into the pipeline, its QP's lines asked for. */
static bool
eng_timer_take(struct eng_lcore *lc, struct eng_tmo **slot)
{
	struct uroce_wheel_entry *e;

	if (uroce_wheel_expire(&lc->wheel, eng_now(lc), &e, 1) == 0)
		return false;
	*slot = eng_timer_tmo(e);
	rte_prefetch0((*slot)->eq);
	uroce_qp_prefetch((*slot)->qp);
	return true;
}

/*
 * Timers expire while the iteration's transmit budget lasts, at most
 * ENG_TIMER_MAX: the due ones left wait in the wheel, in deadline order,
 * for the next iteration. Expiring a fixed number at once would send
 * those past the budget through the ready list (a second call, and list
 * links in cold QPs), which with 10,000 slow paced QPs (6 frames per
 * wake-up) is most iterations; taken one at a time, at most the
 * ENG_PF_QP taken ahead go there.
 */
static unsigned int
eng_timers(struct eng_lcore *lc)
{
	struct eng_tmo *ring[ENG_PF_RING];
	unsigned int head = 0, have = 0, total = 0, built = 0;

	if (uroce_wheel_count(&lc->wheel) == 0)
		return 0;	/* no clock needed (eng_now()) */
	for (;;) {
		while (have < ENG_PF_RING && total < ENG_TIMER_MAX &&
		       built < ENG_TX_BUDGET &&
		       eng_timer_take(lc, &ring[(head + have) % ENG_PF_RING])) {
			have++;
			total++;
		}
		if (have == 0)
			break;
		if (have > 1)
			uroce_qp_prefetch_wqe(ring[(head + 1) % ENG_PF_RING]->qp);
		eng_timer_call(lc, ring[head], &built);
		head = (head + 1) % ENG_PF_RING;
		have--;
	}
	lc->st.timers += total;
	return total;
}

/* ------------------------------------------------------------------------
 * The loop.
 */

/*
 * An iteration that found work: its cycles (uroce_lcore_stats), from the
 * iteration's clock. The clock is read lazily (eng_now()), so an iteration
 * that follows one with work reads it first thing (it likely works too);
 * the first one after idle ones counts from its first read, and one that
 * never read it (control messages only) counts nothing.
 */
static void
eng_count_work(struct eng_lcore *lc)
{
	uint64_t d;

	if (!lc->now_read)
		return;
	d = rte_get_tsc_cycles() - lc->now;
	if (d > eng_g->ms_cycles) {
		lc->st.long_loops++;
		lc->st.long_cycles += d;
	} else {
		lc->st.work_cycles += d;
	}
}

/*
 * A gap: more than a millisecond since the last iteration started
 * (uroce_lcore_stats). One clock read per iteration, apart from the lazy
 * eng_now(), since the stalls that matter most to a paced QP come while
 * the loop is idle, waiting for its wake-up, and an idle iteration reads
 * no clock: stalls of 1-10 ms between idle iterations (a few a second on
 * a shared host) cost a paced QP its rate, and long_loops sees none of
 * them.
 */
static void
eng_count_gap(struct eng_lcore *lc)
{
	uint64_t t = rte_get_tsc_cycles(), d = t - lc->loop_start;

	if (lc->loop_start != 0 && d > eng_g->ms_cycles) {
		lc->st.gap_loops++;
		lc->st.gap_cycles += d;
	}
	lc->loop_start = t;
}

unsigned int
eng_iterate(struct eng_lcore *lc)
{
	unsigned int d, work = 0;

	eng_count_gap(lc);
	lc->now_read = false;
	if (lc->worked)
		eng_now(lc);
	work += eng_ctrl_drain(lc);
	work += eng_db_drain(lc);
	for (d = 0; d < eng_g->ndev; d++)
		work += eng_rx_port(lc, eng_g->dev[d]);
	work += eng_rx_ring(lc, lc->ho, true);
	work += eng_rx_ring(lc, lc->lo, false);
	work += eng_timers(lc);
	for (d = 0; d < eng_g->ndev; d++)
		work += uroce_port_tx_flush(eng_g->dev[d]->port, lc->idx);
	work += eng_tx(lc);
	eng_flush_all(lc);
	RTE_ASSERT(lc->n_pace_ho == 0);
	for (d = 0; d < eng_g->ndev; d++) {
		if (uroce_port_ctrl_pending(eng_g->dev[d]->port))
			uroce_port_poll_ctrl(eng_g->dev[d]->port, lc->idx,
					     eng_now(lc));
	}
	lc->st.loops++;
	if (work == 0)
		lc->st.idle_loops++;
	else
		eng_count_work(lc);
	lc->worked = work != 0;
	lc->now_read = false;	/* callers between iterations read afresh */
	return work;
}

/* Nanoseconds until the wheel's next timer may be due (a lower bound). A
 * sleep must not pass it: a paced QP would lose the tokens of the delay
 * beyond its burst (qp_pace.c). */
uint64_t
eng_until_timer_ns(const struct eng_lcore *lc)
{
	uint64_t due = uroce_wheel_next_due(&lc->wheel);
	uint64_t now = rte_get_tsc_cycles();

	if (due == UINT64_MAX)
		return UINT64_MAX;
	if (due <= now)
		return 0;
	due -= now;
	if (due >= eng_g->tsc_hz)
		return UINT64_MAX;	/* over a second: no bound needed */
	return due * 1000000000 / eng_g->tsc_hz;
}

static void
eng_backoff(struct eng_lcore *lc, unsigned int work)
{
	uint64_t ns;

	if (work != 0) {
		lc->idle = 0;
		lc->sleep_ns = 0;
		return;
	}
	if (++lc->idle < ENG_IDLE_SPIN) {
		rte_pause();
		return;
	}
	lc->sleep_ns = lc->sleep_ns == 0 ? ENG_SLEEP_MIN_NS :
		RTE_MIN(lc->sleep_ns * 2, (uint64_t)ENG_SLEEP_MAX_NS);
	ns = eng_until_timer_ns(lc);
	if (ns < ENG_SLEEP_MIN_NS) {
		rte_pause();	/* a timer (a paced QP) is due: stay awake */
		return;
	}
	/* Offline while asleep: a synchronize does not wait for the sleep. */
	rte_rcu_qsbr_thread_offline(eng_g->qsv, lc->idx);
	eng_lcore_sleep(lc, RTE_MIN(lc->sleep_ns, ns));
	rte_rcu_qsbr_thread_online(eng_g->qsv, lc->idx);
	lc->st.sleeps++;
}

/* A background lcore (rte_eal_remote_launch). */
int
eng_lcore_main(void *arg)
{
	struct eng_lcore *lc = arg;
	unsigned int work;

	RTE_PER_LCORE(eng_cur) = lc;
	prctl(PR_SET_TIMERSLACK, (unsigned long)ENG_TIMER_SLACK_NS, 0, 0, 0);
	rte_rcu_qsbr_thread_online(eng_g->qsv, lc->idx);
	ENG_LOG(DEBUG, "lcore %u (engine %u) running\n", lc->lcore_id, lc->idx);
	while (!__atomic_load_n(&lc->stop, __ATOMIC_ACQUIRE)) {
		work = eng_iterate(lc);
		rte_rcu_qsbr_quiescent(eng_g->qsv, lc->idx);
		eng_backoff(lc, work);
	}
	/* Control messages posted before the stop still get an answer. */
	eng_ctrl_drain(lc);
	rte_rcu_qsbr_thread_offline(eng_g->qsv, lc->idx);
	RTE_PER_LCORE(eng_cur) = NULL;
	return 0;
}

int
uroce_engine_poll(void)
{
	struct eng_lcore *lc;
	unsigned int work;

	if (eng_g == NULL)
		return -ENODEV;
	if (eng_g->nb_bg > 0 || RTE_PER_LCORE(eng_cur) != NULL)
		return 0;
	if (!rte_spinlock_trylock(&eng_g->native_lock))
		return 0;
	lc = eng_g->lc[0];
	RTE_PER_LCORE(eng_cur) = lc;
	work = eng_iterate(lc);
	RTE_PER_LCORE(eng_cur) = NULL;
	/* Under the lock: one writer; the keeper reads it (keeper.c). */
	__atomic_store_n(&eng_g->app_iters, eng_g->app_iters + 1,
			 __ATOMIC_RELAXED);
	uroce_spin_unlock(&eng_g->native_lock);
	return (int)RTE_MIN(work, (unsigned int)INT32_MAX);
}

int
uroce_engine_lcore_stats(unsigned int idx, struct uroce_lcore_stats *st)
{
	if (eng_g == NULL || st == NULL || idx >= eng_g->nb_ctx)
		return -EINVAL;
	*st = eng_g->lc[idx]->st;
	return 0;
}
