/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Per-QP packet pacing (ibv_modify_qp_rate_limit(3), IBV_QP_RATE_LIMIT in
 * ibv_modify_qp(3)): validating a limit, turning it into a token-bucket
 * profile (lib/pace) and applying it in O(1) on the owner lcore.
 *
 * What counts against the rate: every frame the QP's send side puts on the
 * wire - first transmissions, go-back-N retransmissions (requester.c), UD
 * datagrams (ud.c), RAW_PACKET frames (raw.c: the gathered bytes are the
 * frame, charged as they are), and the responder's RDMA READ response
 * and atomic response packets (responder.c), which are data the QP sends.
 * ACKs and NAKs are neither delayed nor charged: RoCE NICs pace the send
 * queue, and holding back an acknowledgement would only make the peer
 * retransmit; an ACK is 62 bytes per up to 32 data packets.
 *
 * Burst. The bucket holds at most max_burst_sz bytes, so no more than that
 * leaves back to back (a frame longer than the burst goes alone, from a
 * full bucket, see uroce_pace.h). Part of the burst is the batch a QP
 * gathers before it wakes up (pace_want() below), the rest the slack:
 * room for the tokens that come in while the engine wakes up late and
 * while it builds the batch, which the hand-off charges as if it had left
 * at once (uroce_tb_handoff()). A wake-up later than the slack loses
 * tokens for good, so the slack must outlast what stalls a busy thread
 * here, plus up to 20 us to build a transmit batch of 64 frames of 2 KiB.
 * On a shared host a spinning thread loses its CPU for 20-50 us over a
 * thousand times a second, and for 0.5-5 ms a few times a second; a QP
 * near the link's rate cannot catch up what a stall longer than its slack
 * costs it. So the slack is UROCE_PACE_SLACK_US (5 ms: outlasts those
 * stalls) at the rate, and at least one typical packet (milliseconds at a
 * low rate): after a stall the QP catches up with at most that much at
 * once, never more than its burst. The slack is for stalls while the QP
 * has frames queued, not for a pause of the application: the tokens a
 * pause brings fill the bucket only up to the batch, or up to what it
 * held when its queue ran empty (Lost rate, below), so the first frames
 * of a paced stream that pauses leave as one batch, not as the whole
 * burst.
 *
 * Batch. At least UROCE_PACE_BATCH_PKTS typical packets, so that 10,000
 * slow QPs cost the engine a wheel expiry per 6 frames, not per frame (a
 * frame is its payload and 58 B of headers over IPv4, so the bytes of 7
 * packets of the default typical size, the path MTU, hold 6 full frames);
 * up to UROCE_PACE_BATCH_MAX_PKTS while they leave within
 * UROCE_PACE_BATCH_SPAN_US at the rate (Batch span, below); and at least
 * UROCE_PACE_BATCH_US at the rate, so that a fast QP fills the engine's
 * transmit batch (at 25 Gbit/s, 50 us let a busy engine iteration build
 * about 60 frames of 2 KiB, near the unpaced stream's 73, at about 5%
 * more cycles a frame; 25 us allow 30, at 11-14% more, which leaves a QP
 * near the ceiling no room to catch up after a stall).
 * max_burst_sz 0 picks the default: the two added, 8 typical packets at
 * a low rate (below 3.3 Mbit/s at 2 KiB), 16 packets and 5 ms of slack
 * from 6.6 Mbit/s, 5.05 ms at a high one (at most UROCE_PACE_BURST_MAX; a
 * user who wants it smoother after stalls sets max_burst_sz). An explicit
 * max_burst_sz is split the same way as far as it goes: the batch first,
 * then the slack, at least one typical packet of it (pace_batch_bytes()).
 * The batch is bounded because full buckets are work queued in the engine:
 * when the engine falls behind the sum of the rates, every QP's full
 * bucket leaves in one round, and a round longer than the local ACK
 * timeout makes a QP held back in the ready list mid-message time out
 * with no ACK due (such an expiry resends nothing and spends no retry:
 * late_timeouts, requester.c, timeout()). A flat batch of 15 packets (a
 * burst of 16) would hold 10,000 x 16 frames of 2 KiB, about 70 ms at
 * the link's rate, whatever the QPs' rates; a burst of 8 keeps that under
 * half, and the span below bounds a larger batch by time.
 *
 * Batch span. A wake-up is a call on a cold QP, and with 10,000 QPs the
 * engine's cycles a frame are what limits the aggregate rate, so a slow
 * QP gathers more than the minimum when it can do so in
 * UROCE_PACE_BATCH_SPAN_US at its rate (40 ms: QPs of 2.5-10 Mbit/s,
 * 10,000 sharing 80% of a link 1:2:3:4, gather 7 to 16 packets, about
 * 0.08 wake-ups a frame instead of 0.13). The span keeps the batch of a
 * slow QP (7 packets below 3.3 Mbit/s at 2 KiB) and its quantum on the
 * wire short, and bounds the work full buckets hold when the engine falls
 * behind: 40 ms and the slack of each QP's rate. Rates that add up to
 * several times what the engine builds still make rounds longer than the
 * local ACK timeout (late timeouts, nothing resent). The quantum shows in
 * short measurements: a lone QP at 10 Mbit/s sends about 15 frames every
 * 26 ms, so a window of a few seconds sees it a fraction of a percent
 * above its rate.
 *
 * typical_pkt_sz 0 is the port's MTU (ibv_query_port active_mtu); for
 * RAW_PACKET, whose frames carry no transport headers and are as long as
 * the link allows (perftest's raw_ethernet_bw sends MTU + 14), it is the
 * largest untagged frame. It only sizes that default, since the bucket
 * charges each frame's real length.
 */
#include <errno.h>

#include <rte_common.h>

#include "qp_priv.h"

/* Ethernet header, 802.1Q tag and FCS around the IP MTU: a frame's bytes. */
#define PACE_L2_MAX	(14 + 4 + 4)

/* The Ethernet header before the IP MTU of an untagged frame. */
#define PACE_ETH_HDR	14

/* Bytes per second in one kbit/s. */
#define PACE_BYTES_PER_KBIT	125u

static bool
pace_type_ok(enum ibv_qp_type type)
{
	/* The types whose send queue the pacer serves; XRC is not paced. */
	return type == IBV_QPT_RC || type == IBV_QPT_UC || type == IBV_QPT_UD ||
	       type == IBV_QPT_RAW_PACKET;
}

/* Bytes of us microseconds at rate_kbps. */
static uint64_t
pace_us_bytes(uint32_t rate_kbps, uint64_t us)
{
	return (uint64_t)rate_kbps * PACE_BYTES_PER_KBIT * us / 1000000;
}

/* The batch a QP gathers when its burst has room for it (see Burst):
 * whole typical packets, 7 to 16 of them as 40 ms at the rate allow, or
 * 50 us at the rate if more. */
static uint64_t
pace_batch_want(uint32_t rate_kbps, uint32_t typical)
{
	uint64_t pkts = pace_us_bytes(rate_kbps, UROCE_PACE_BATCH_SPAN_US) /
			typical;

	pkts = RTE_MIN(pkts, (uint64_t)UROCE_PACE_BATCH_MAX_PKTS);
	pkts = RTE_MAX(pkts, (uint64_t)UROCE_PACE_BATCH_PKTS);
	return RTE_MAX(pkts * typical,
		       pace_us_bytes(rate_kbps, UROCE_PACE_BATCH_US));
}

static uint32_t
pace_default_burst(uint32_t rate_kbps, uint32_t typical)
{
	uint64_t t = pace_batch_want(rate_kbps, typical) +
		     RTE_MAX((uint64_t)typical,
			     pace_us_bytes(rate_kbps, UROCE_PACE_SLACK_US));

	return (uint32_t)RTE_MIN(t, (uint64_t)UROCE_PACE_BURST_MAX);
}

/* The bytes a QP out of tokens gathers (Batching, below): its burst less
 * the slack, which is what the burst has beyond the batch it wants, up to
 * UROCE_PACE_SLACK_US at the rate, and at least one typical packet;
 * nothing (the next frame alone) for a burst too small to keep both. */
static uint32_t
pace_batch_bytes(uint32_t rate_kbps, uint32_t burst, uint32_t typical)
{
	uint64_t want = pace_batch_want(rate_kbps, typical);
	uint64_t room = burst > want ? burst - want : 0;
	uint64_t slack;

	slack = RTE_MIN(pace_us_bytes(rate_kbps, UROCE_PACE_SLACK_US), room);
	slack = RTE_MAX(slack, (uint64_t)typical);
	return slack < burst ? (uint32_t)(burst - slack) : 0;
}

/*
 * Wake-up. A QP out of tokens asks to be called when its bucket holds the
 * batch, and may be called later at no cost while the slack (the burst
 * beyond the batch) takes what comes in meanwhile. PACE_LATE_RESERVE_US
 * of it is kept for what a wake-up is late by anyway (the host's stalls,
 * building the batch); half the rest (the requester's copy: pace_late) is
 * offered to the engine, which may file the wake-up at the start of a
 * block of its timing wheel within it (uroce_wheel_add_range()): there it
 * is never moved between the wheel's levels (but once if it is filed in
 * the wheel's next lap), and the QPs that wake up at
 * one block's start fill the engine's transmit batches together. The
 * other half is for the time the engine takes to serve them all. With the
 * default burst that is 1.5 ms from 3.3 Mbit/s up (a slack of 5 ms), and
 * more below, where the slack is one typical packet: 2.8 ms at 2.2 Mbit/s
 * (10,000 QPs sharing a link); a block is about 500 us. The reserve is
 * 2 ms rather than the whole default slack: reserving 5 ms would let
 * 10,000 QPs at 2.2 Mbit/s be filed only 1.3 ms late instead of 2.8, and
 * fewer of them would share a transmit batch (about 120 frames per busy
 * iteration instead of 150).
 */
#define PACE_LATE_RESERVE_US	2000

uint64_t
uroce_qp_pace_late(const struct uroce_qp *qp)
{
	const struct uroce_tb_profile *p = &qp->pace_prof;
	uint64_t slack, reserve = uroce_qp_us_to_cycles(qp, PACE_LATE_RESERVE_US);

	if (!qp->pace_on || p->batch_bytes == 0)
		return 0;
	/* Bytes < 2^24 and tsc_hz <= 2^36 (uroce_pace.h): no overflow. */
	slack = (uint64_t)(p->burst_bytes - p->batch_bytes) * p->tsc_hz /
		p->refill;
	return slack > reserve ? (slack - reserve) / 2 : 0;
}

int
uroce_qp_rate_limit_prepare(const struct uroce_qp *qp,
			    const struct ibv_qp_rate_limit_attr *a,
			    struct uroce_tb_profile *prof)
{
	const struct uroce_qp_env *env = qp->env;
	uint32_t typical = a->typical_pkt_sz, burst = a->max_burst_sz;
	int ret;

	if (env->lim.rate_limit_max == 0)
		return -EOPNOTSUPP;
	if (a->comp_mask != 0)		/* no extension is known */
		return -EINVAL;
	if (!pace_type_ok(qp->type) && a->rate_limit != 0)
		return -EINVAL;
	if (a->rate_limit != 0 && (a->rate_limit < env->lim.rate_limit_min ||
				   a->rate_limit > env->lim.rate_limit_max))
		return -EINVAL;
	if (typical == 0 && qp->type == IBV_QPT_RAW_PACKET)
		typical = (uint32_t)env->mtu + PACE_ETH_HDR;
	else if (typical == 0)
		typical = uroce_mtu_bytes(env->lim.active_mtu);
	/* Sizes that make no sense: a typical packet no frame can have, a
	 * burst smaller than it, or a burst beyond what we hold. */
	if (typical > (uint32_t)env->mtu + PACE_L2_MAX ||
	    (burst != 0 && (burst < typical || burst > UROCE_PACE_BURST_MAX)))
		return -EINVAL;
	if (a->rate_limit == 0)
		return 0;
	if (burst == 0)
		burst = pace_default_burst(a->rate_limit, typical);
	ret = uroce_tb_profile_init(prof, env->tsc_hz, a->rate_limit, burst);
	if (ret == 0)
		prof->batch_bytes = pace_batch_bytes(a->rate_limit, burst,
						     typical);
	return ret;
}

/*
 * Batching. A QP that ran out of tokens waits until the bucket holds its
 * next frame and what is queued behind it, up to uroce_qp_pace_batch()
 * bytes (the burst less the slack), rather than its next frame alone:
 * each wake-up is a timer expiry and a call on a QP whose state is likely
 * out of the cache, so a slow QP sends several frames per expiry, and a
 * fast one fills the engine's transmit batch instead of releasing a frame
 * or two per engine iteration. The rate is unchanged (tokens wait in the
 * bucket, which has the slack left for a late wake-up) and so is the
 * burst bound (the bucket enforces it). Only the frames of a backlog
 * gather: the caller says how many bytes wait behind the frame (a lower
 * bound: payloads without headers), so the last ones leave as soon as
 * their own tokens are there.
 */
static uint32_t
pace_want(const struct uroce_qp *qp, uint32_t bytes, uint32_t more)
{
	uint64_t want = RTE_MIN((uint64_t)bytes + more,
				(uint64_t)uroce_qp_pace_batch(qp));

	return want > bytes ? (uint32_t)want : bytes;
}

uint32_t
uroce_qp_pace_behind(struct uroce_qp *qp, uint32_t idx, uint32_t from)
{
	uint32_t posted, i, n = 0;
	uint64_t sum = from;

	/* The rest of the message fills the batch (a long message's frames
	 * but its last few): the SQ's producer index, a cache line of its
	 * own, is not read. */
	if (from >= uroce_qp_pace_batch(qp))
		return from;
	posted = uroce_ring_cons_avail(&qp->sq, UINT32_MAX);
	for (i = idx + 1; i - qp->sq.tail < posted &&
	     sum < uroce_qp_pace_batch(qp) &&
	     n < UROCE_TXB_MAX; i++, n++) {
		const struct uroce_send_wqe *w = uroce_sq_wqe(qp, i);

		if (!uroce_wqe_is_rd_atomic(w))
			sum += w->length;
	}
	return (uint32_t)RTE_MIN(sum, (uint64_t)UINT32_MAX);
}

/*
 * Lost rate. Tokens the bucket drops at the burst are rate the QP never
 * gets back. The QP's send side notes why it stopped (req.stop, until the
 * next frame goes), and pace_lost_bytes counts them by that reason: at
 * the first try after the stop, and what the hand-off of a batch drops
 * after it.
 *  - A frame waited for tokens (uroce_qp_pace_wait()): it was served later
 *    than its slack covers - the engine behind its work, or the thread
 *    stalled.
 *  - The PSN window was full: the responder, or the link to it, is slower
 *    than the rate.
 *  - Its transmit batch was full: it waited for its next turn, behind the
 *    other QPs' calls, the port's back-pressure or a stalled thread
 *    (uroce_qp_pace_turn(): the requester's frames, a UD or raw QP's, and
 *    the responder's READ and atomic responses).
 *  - Nothing was posted: the application paused, which is no loss of
 *    ours (pace_idle_bytes), but shows a benchmark that does not keep
 *    its QP busy. The pause then fills the bucket only up to the batch,
 *    or up to what it held when its last frame went if more
 *    (uroce_tb_resume()): the slack is for catching up after a stall,
 *    the pause adds nothing to catch up, and what the QP was owed when
 *    its send queue ran empty (a stream catching up with a few messages
 *    in flight) it keeps (see Burst).
 */
static void
pace_lost(struct uroce_qp *qp, uint64_t bytes)
{
	uint8_t stop = qp->req.stop;

	if (stop != UROCE_REQ_STOP_NONE)
		qp->stats.pace_lost_bytes[stop - 1] += bytes;
}

bool
uroce_qp_pace(struct uroce_qp *qp, uint64_t now, uint32_t bytes)
{
	if (!qp->pace_on)
		return true;
	if (qp->req.stop == UROCE_REQ_STOP_IDLE && uroce_qp_pace_batch(qp))
		pace_lost(qp, uroce_tb_resume(&qp->pace_tb, &qp->pace_prof,
					      now, uroce_qp_pace_batch(qp)));
	else if (qp->req.stop != UROCE_REQ_STOP_NONE)
		pace_lost(qp, uroce_tb_excess(&qp->pace_tb, &qp->pace_prof,
					      now));
	if (!uroce_tb_consume(&qp->pace_tb, &qp->pace_prof, now, bytes))
		return false;
	qp->req.stop = UROCE_REQ_STOP_NONE;
	qp->pace_bytes += bytes;
	if (unlikely(qp->cc_active))
		uroce_qp_cc_sent(qp, now, bytes);
	return true;
}

void
uroce_qp_pace_handoff(struct uroce_qp *qp, uint64_t now, uint64_t bytes)
{
	if (!qp->pace_on)
		return;
	pace_lost(qp, uroce_tb_handoff(&qp->pace_tb, &qp->pace_prof, now,
				       bytes));
}

void
uroce_qp_pace_wait(struct uroce_qp *qp, uint64_t now, uint32_t bytes,
		   uint32_t more)
{
	struct uroce_requester *req = &qp->req;
	uint64_t ready = uroce_tb_ready_at(&qp->pace_tb, &qp->pace_prof, now,
					   pace_want(qp, bytes, more));

	/* Count a wait once, not again when asked during it. */
	if (req->wait_at == UROCE_TIME_OFF || req->wait_at <= now)
		qp->stats.pace_wait_cycles += ready - now;
	req->wait_at = ready;
	req->stop = UROCE_REQ_STOP_TOKENS;
}

/* A full batch is the reason only once the tokens are there: a QP called
 * with no room (its port stalled: lib/engine/lcore.c) while a pacing wait
 * is pending still waits for the tokens first. */
void
uroce_qp_pace_turn(struct uroce_qp *qp, uint64_t now)
{
	struct uroce_requester *req = &qp->req;

	if (req->stop != UROCE_REQ_STOP_TOKENS ||
	    req->wait_at == UROCE_TIME_OFF || now >= req->wait_at)
		req->stop = UROCE_REQ_STOP_TURN;
}

/* Put a profile in force (rate 0: none). @kick: a control path, where a
 * wait computed at the old rate may be too long (a higher rate, or none):
 * try again now; a pacing wait that still holds is recomputed at the new
 * rate by the next uroce_qp_pace(). The byte counter's raises come from
 * the transmit path itself, which has just been charged: no wait to
 * undo, and no kick of a QP being served. */
static void
pace_set(struct uroce_qp *qp, uint32_t rate_kbps,
	 const struct uroce_tb_profile *prof, uint64_t now, bool kick)
{
	if (rate_kbps == 0) {
		qp->pace_on = false;
	} else if (!qp->pace_on) {
		/* Off -> on: a full bucket, as after creation. */
		qp->pace_prof = *prof;
		uroce_tb_init(&qp->pace_tb, &qp->pace_prof, now);
		qp->pace_on = true;
	} else {
		/* O(1): earned tokens are kept, capped at the new burst. */
		uroce_tb_set_profile(&qp->pace_tb, &qp->pace_prof, prof, now);
		qp->pace_prof = *prof;
	}
	qp->req.pace_late = uroce_qp_pace_late(qp);
	if (!kick)
		return;
	qp->req.wait_at = UROCE_TIME_OFF;
	uroce_qp_kick(qp);
}

/*
 * A tight profile: for a rate that must hold at once, a cut of DCQCN's or
 * a static rate standing for a slower link, the burst is the batch
 * (pace_batch_want(), for packets of the port's MTU: 50 us at a high
 * rate) and one packet of slack, not the 5 ms of slack a user's limit
 * gets. -EINVAL for a rate the bucket cannot hold.
 */
static int
pace_tight(const struct uroce_qp_env *env, uint32_t kbps,
	   struct uroce_tb_profile *prof)
{
	uint32_t typical = uroce_mtu_bytes(env->lim.active_mtu);
	uint32_t burst;
	int ret;

	burst = (uint32_t)RTE_MIN(pace_batch_want(kbps, typical) + typical,
				  (uint64_t)UROCE_PACE_BURST_MAX);
	ret = uroce_tb_profile_init(prof, env->tsc_hz, kbps, burst);
	if (ret == 0)
		prof->batch_bytes = pace_batch_bytes(kbps, burst, typical);
	return ret;
}

/*
 * Static rate (IBTA 9.11): an address vector may ask for a rate below the
 * port's, to keep a faster sender from overrunning a slower link on the
 * path. An RC or UC QP is paced at its path's rate with a tight profile,
 * and the lower of it and the user's limit is the limit in force; a UD
 * address handle carries its own, which the QP's sends to it are held to
 * (ud_pace.c). IBV_RATE_MAX, and a rate at or above the line rate ([port]
 * dcqcn's rpg_max_rate, else the most the pacer takes), pace nothing.
 */
int
uroce_static_rate_profile(const struct uroce_qp_env *env, enum ibv_rate rate,
			  uint32_t *kbps, struct uroce_tb_profile *prof)
{
	const struct uroce_rate *r = uroce_rate_find(rate);
	uint64_t line = env->dcqcn.line_kbps != 0 ? env->dcqcn.line_kbps :
			env->lim.rate_limit_max;
	uint64_t k;

	*kbps = 0;
	if (r == NULL || env->lim.rate_limit_max == 0)
		return 0;
	k = (uint64_t)r->mbps * 1000;
	if (k >= line || k > env->lim.rate_limit_max)
		return 0;
	*kbps = (uint32_t)k;
	return pace_tight(env, *kbps, prof);
}

int
uroce_qp_static_rate_prepare(const struct uroce_qp *qp, enum ibv_rate rate,
			     uint32_t *kbps, struct uroce_tb_profile *prof)
{
	*kbps = 0;
	if (qp->type == IBV_QPT_UD || !pace_type_ok(qp->type))
		return 0;
	return uroce_static_rate_profile(qp->env, rate, kbps, prof);
}

uint32_t
uroce_qp_pace_base(const struct uroce_qp *qp,
		   const struct uroce_tb_profile **prof)
{
	uint32_t user = qp->attr.rate_limit;

	if (qp->static_kbps != 0 && (user == 0 || qp->static_kbps < user)) {
		*prof = &qp->pace_static_prof;
		return qp->static_kbps;
	}
	*prof = &qp->pace_user_prof;
	return user;
}

/*
 * Congestion control. The rate in force is the lower of the limit without
 * it (the user's, ibv_modify_qp_rate_limit, its profile as given, or the
 * static rate) and the DCQCN rate (qp_cc.c), which has a tight profile: a
 * cut must hold at once, and a QP that was not paced starts with a full
 * bucket. A QP that DCQCN does not limit is paced as before, or not at
 * all, and pays nothing per frame for congestion control.
 */
void
uroce_qp_pace_cc(struct uroce_qp *qp, uint64_t now, bool kick)
{
	uint64_t cc = uroce_dcqcn_rate(&qp->cc_rp);
	const struct uroce_tb_profile *base_prof;
	uint32_t base = uroce_qp_pace_base(qp, &base_prof);
	struct uroce_tb_profile prof;

	qp->cc_active = qp->cc_rp.active;
	__atomic_store_n(&qp->cc_rate_kbps, cc, __ATOMIC_RELAXED);
	if (cc == 0 || (base != 0 && base <= cc) ||
	    pace_tight(qp->env, (uint32_t)cc, &prof) != 0) {
		pace_set(qp, base, base_prof, now, kick);
		return;
	}
	pace_set(qp, (uint32_t)cc, &prof, now, kick);
}

void
uroce_qp_rate_limit_apply(struct uroce_qp *qp, uint32_t rate_kbps,
			  const struct uroce_tb_profile *prof, uint64_t now)
{
	qp->attr.rate_limit = rate_kbps;
	if (rate_kbps != 0)
		qp->pace_user_prof = *prof;
	uroce_qp_pace_cc(qp, now, true);
}

int
uroce_qp_set_rate_limit(struct uroce_qp *qp,
			const struct ibv_qp_rate_limit_attr *attr, uint64_t now)
{
	struct uroce_tb_profile prof;
	int ret;

	if (qp == NULL || attr == NULL)
		return -EINVAL;
	/* As ibv_modify_qp(RTS -> RTS, IBV_QP_RATE_LIMIT), which is what
	 * rdma-core's providers do for this verb: only in RTS. */
	if (qp->state != IBV_QPS_RTS)
		return -EINVAL;
	ret = uroce_qp_rate_limit_prepare(qp, attr, &prof);
	if (ret < 0)
		return ret;
	uroce_qp_rate_limit_apply(qp, attr->rate_limit, &prof, now);
	return 0;
}
