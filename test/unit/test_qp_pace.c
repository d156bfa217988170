/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Per-QP pacing through the QP verbs (lib/transport/qp_pace.c):
 *  - the matrix of uroce_qp_set_rate_limit() (ibv_modify_qp_rate_limit) and
 *    modify_qp(IBV_QP_RATE_LIMIT) calls in every state and QP type, valid
 *    and invalid, with query and the bucket proving a failure changed
 *    nothing;
 *  - paced QPs over the in-memory link on its fake clock, where time only
 *    jumps to deadlines, so the bucket's arithmetic is checked exactly:
 *    every frame the paced side sends (first transmissions,
 *    retransmissions, READ responses) conforms to burst + rate * time, and
 *    a backlogged sender is exactly on the rate (the last frame leaves in
 *    the cycle its tokens are there); a rate change takes effect at once;
 *    two QPs at one rate get the same bytes;
 *  - a paced RAW_PACKET QP: its frames of mixed sizes conform to burst +
 *    rate * time and a backlog leaves exactly on the rate;
 *  - the static rate of an RC or UC QP's address vector: the lower of it
 *    and the user's limit in force, a bad one refused, RESET forgetting
 *    it, and a stream conforming to it;
 *  - the static rates of UD address handles: one UD QP sending to AHs of
 *    different rates holds each AH's datagrams to its own rate, the QP's
 *    own limit still applies where lower, more AHs than the QP keeps
 *    buckets for are each still held to theirs, and an AH at the port's
 *    rate is not held at all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_test.h"
#include "uroce_test_eal.h"
#include "uroce_test_link.h"
#include "qp_priv.h"		/* UROCE_REQ_WINDOW */

#define RATE_MIN	1000u
#define RATE_MAX	100000000u
#define MAX_FRAMES	16384
#define BUF_LEN		(2u << 20)
#define ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static int
link_up(struct ut_link *l, uint64_t seed)
{
	int s, ret = ut_link_init(l, seed, IBV_MTU_1024);

	for (s = 0; ret == 0 && s < 2; s++) {
		l->node[s].env.lim.rate_limit_min = RATE_MIN;
		l->node[s].env.lim.rate_limit_max = RATE_MAX;
	}
	return ret;
}

/* ---------------------------------------------------------------------------
 * The matrix.
 */

/* One step towards target along RESET-INIT-RTR-RTS(-SQD|ERR). */
static int
step_to(struct ut_link *l, struct uroce_qp *qp, enum ibv_qp_state next)
{
	struct ibv_qp_attr a;
	int mask = IBV_QP_STATE;
	bool conn = qp->type == IBV_QPT_RC || qp->type == IBV_QPT_UC;

	memset(&a, 0, sizeof(a));
	a.qp_state = next;
	if (next == IBV_QPS_INIT) {
		a.port_num = 1;
		mask |= IBV_QP_PORT;
		if (qp->type != IBV_QPT_RAW_PACKET) {
			mask |= IBV_QP_PKEY_INDEX;
			mask |= conn ? IBV_QP_ACCESS_FLAGS : IBV_QP_QKEY;
			a.qkey = 0x11111111;
		}
	} else if (next == IBV_QPS_RTR && conn) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = 0x99;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.hop_limit = 64;
		memcpy(a.ah_attr.grh.dgid.raw, l->node[1].env.gid[0].raw, 16);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (qp->type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	} else if (next == IBV_QPS_RTS && qp->type != IBV_QPT_RAW_PACKET) {
		mask |= IBV_QP_SQ_PSN;
		if (qp->type == IBV_QPT_RC) {
			a.timeout = 14;
			a.retry_cnt = 7;
			a.rnr_retry = 7;
			a.max_rd_atomic = 1;
			mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				IBV_QP_MAX_QP_RD_ATOMIC;
		}
	}
	return uroce_qp_modify(qp, &a, mask, l->now);
}

static const enum ibv_qp_state path[] = {
	IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
};

/* Bring a fresh QP of type to state (SQD and ERR from RTS). */
static struct uroce_qp *
qp_in(struct ut_link *l, enum ibv_qp_type type, enum ibv_qp_state st,
      uint32_t qpn)
{
	struct ut_qp_opts o;
	struct uroce_qp *qp = NULL;
	unsigned int i;

	ut_qp_opts_default(&o, type);
	if (ut_node_qp(&l->node[0], &o, qpn, &qp) != 0)
		return NULL;
	for (i = 1; i < RTE_DIM(path); i++) {
		if (qp->state == st)
			return qp;
		if (step_to(l, qp, path[i]) != 0)
			return NULL;
	}
	if (st != IBV_QPS_RTS && step_to(l, qp, st) != 0)
		return NULL;
	return qp->state == st ? qp : NULL;
}

/* The link and an RC QP in RTS on node 0; NULL, the link gone, if not. */
static struct uroce_qp *
rc_rts_up(struct ut_link *l, uint64_t seed)
{
	struct uroce_qp *qp;

	if (!UT_CHECK_EQ(link_up(l, seed), 0))
		return NULL;
	qp = qp_in(l, IBV_QPT_RC, IBV_QPS_RTS, 0x200);
	if (!UT_CHECK(qp != NULL))
		ut_link_fini(l);
	return qp;
}

struct snap {
	struct ibv_qp_attr attr;
	bool on;
	struct uroce_tb_profile prof;
	struct uroce_tb tb;
};

static void
snap_take(const struct uroce_qp *qp, struct snap *s)
{
	memset(s, 0, sizeof(*s));
	uroce_qp_query(qp, &s->attr, NULL);
	s->on = qp->pace_on;
	s->prof = qp->pace_prof;
	s->tb = qp->pace_tb;
}

static bool
snap_same(const struct uroce_qp *qp, const struct snap *s)
{
	struct snap now;

	snap_take(qp, &now);
	return memcmp(&now, s, sizeof(now)) == 0;
}

static bool
type_paced(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC || t == IBV_QPT_UC || t == IBV_QPT_UD ||
	       t == IBV_QPT_RAW_PACKET;
}

/* ibv_modify_qp_rate_limit in every type and state: only RTS of a paced
 * type accepts it; a failure changes nothing. */
static void
test_verb_matrix(void)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_RAW_PACKET,
	};
	static const enum ibv_qp_state states[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
		IBV_QPS_SQD, IBV_QPS_ERR,
	};
	struct ut_link l;
	unsigned int t, s;
	uint32_t qpn = 0x100, typ;

	if (!UT_CHECK_EQ(link_up(&l, 7), 0))
		return;
	for (t = 0; t < RTE_DIM(types); t++) {
		for (s = 0; s < RTE_DIM(states); s++) {
			struct ibv_qp_rate_limit_attr rl = { .rate_limit = 5000 };
			struct uroce_qp *qp = qp_in(&l, types[t], states[s], qpn++);
			bool ok = states[s] == IBV_QPS_RTS && type_paced(types[t]);
			struct snap before;
			int ret;

			if (!UT_CHECK(qp != NULL)) {
				UT_NOTE("type %d state %d", types[t], states[s]);
				continue;
			}
			snap_take(qp, &before);
			ret = uroce_qp_set_rate_limit(qp, &rl, l.now);
			UT_CHECK_EQ(ret, ok ? 0 : -EINVAL);
			if (ok) {
				struct ibv_qp_attr a;

				uroce_qp_query(qp, &a, NULL);
				UT_CHECK_EQ(a.rate_limit, 5000);
				UT_CHECK(qp->pace_on);
				UT_CHECK_EQ(qp->pace_prof.rate_kbps, 5000);
				/* Default burst at a low rate: a batch
				 * of packets of port MTU (1024) here, of
				 * the largest frame (4,210 B) for
				 * RAW_PACKET, 7 to 16 of them as 40 ms
				 * at 625 kB/s (25,000 B) allow, and a
				 * slack of 5 ms at that rate, at least
				 * one of those packets. */
				typ = types[t] == IBV_QPT_RAW_PACKET ?
				      l.node[0].env.mtu + 14u : 1024;
				UT_CHECK_EQ(qp->pace_prof.burst_bytes,
					    types[t] == IBV_QPT_RAW_PACKET ?
					    8 * typ : 16 * 1024 + 3125u);
			} else {
				UT_CHECK(snap_same(qp, &before));
			}
			/* Rate 0 applies where the verb does. */
			rl.rate_limit = 0;
			ret = uroce_qp_set_rate_limit(qp, &rl, l.now);
			UT_CHECK_EQ(ret, states[s] == IBV_QPS_RTS ? 0 : -EINVAL);
			if (ok)
				UT_CHECK(!qp->pace_on);
			UT_NOTE("type %d state %d", types[t], states[s]);
		}
	}
	ut_link_fini(&l);
}

/* Bad values in RTS: EINVAL and nothing changed, with pacing on before. */
static void
test_verb_invalid(void)
{
	static const struct {
		const char *what;
		struct ibv_qp_rate_limit_attr a;
	} bad[] = {
		{ "rate below min", { RATE_MIN - 1, 0, 0, 0 } },
		{ "rate above max", { RATE_MAX + 1, 0, 0, 0 } },
		{ "rate way above", { UINT32_MAX, 0, 0, 0 } },
		{ "typical above a frame", { 10000, 0, 9000, 0 } },
		{ "burst below typical", { 10000, 500, 1000, 0 } },
		{ "burst below default typical", { 10000, 1023, 0, 0 } },
		{ "burst too big", { 10000, UROCE_PACE_BURST_MAX + 1, 0, 0 } },
		{ "unknown comp_mask", { 10000, 0, 0, 1 } },
	};
	struct ibv_qp_rate_limit_attr good = { 20000, 8192, 1024, 0 };
	struct ut_link l;
	struct uroce_qp *qp;
	struct snap before;
	unsigned int i;

	qp = rc_rts_up(&l, 8);
	if (qp == NULL)
		return;
	UT_CHECK_EQ(uroce_qp_set_rate_limit(qp, &good, l.now), 0);
	UT_CHECK_EQ(qp->pace_prof.burst_bytes, 8192);
	l.now += ut_link_us(3);
	snap_take(qp, &before);
	for (i = 0; i < RTE_DIM(bad); i++) {
		UT_CHECK_EQ(uroce_qp_set_rate_limit(qp, &bad[i].a, l.now), -EINVAL);
		UT_CHECK(snap_same(qp, &before));
		UT_NOTE("%s", bad[i].what);
	}
	UT_CHECK_EQ(uroce_qp_set_rate_limit(NULL, &good, l.now), -EINVAL);
	UT_CHECK_EQ(uroce_qp_set_rate_limit(qp, NULL, l.now), -EINVAL);
	/* Boundaries are accepted. */
	good.rate_limit = RATE_MIN;
	UT_CHECK_EQ(uroce_qp_set_rate_limit(qp, &good, l.now), 0);
	good.rate_limit = RATE_MAX;
	good.max_burst_sz = UROCE_PACE_BURST_MAX;
	UT_CHECK_EQ(uroce_qp_set_rate_limit(qp, &good, l.now), 0);
	UT_CHECK_EQ(qp->pace_prof.burst_bytes, UROCE_PACE_BURST_MAX);
	/* Default burst at a high rate: 50 us + 5 ms of it, 63 MB at
	 * 100 Gbit/s, as much as a burst may be; 3.16 MB at 5 Gbit/s. */
	good.max_burst_sz = 0;
	UT_CHECK_EQ(uroce_qp_set_rate_limit(qp, &good, l.now), 0);
	UT_CHECK_EQ(qp->pace_prof.burst_bytes, UROCE_PACE_BURST_MAX);
	good.rate_limit = 5000000;
	UT_CHECK_EQ(uroce_qp_set_rate_limit(qp, &good, l.now), 0);
	UT_CHECK_EQ(qp->pace_prof.burst_bytes, 3156250);
	/* A device that does not pace. */
	l.node[0].env.lim.rate_limit_max = 0;
	snap_take(qp, &before);
	UT_CHECK_EQ(uroce_qp_set_rate_limit(qp, &good, l.now), -EOPNOTSUPP);
	UT_CHECK(snap_same(qp, &before));
	l.node[0].env.lim.rate_limit_max = RATE_MAX;
	ut_link_fini(&l);
}

/* What a QP out of tokens gathers (qp_pace.c, Burst and Batching): its
 * burst less the slack. Default bursts: 7 typical packets and one of slack
 * at a low rate, up to 16 as 40 ms at the rate allow, 50 us and 5 ms of
 * slack at a high one. An explicit burst: that batch first, then up to
 * 5 ms of slack, at least one packet of it, nothing when the burst is one
 * packet. And how late its wake-up may be (qp_pace.c, Wake-up): half of
 * what the slack lasts beyond 2 ms, in cycles of the 2 GHz fake clock. */
static void
test_batch_size(void)
{
	static const struct {
		struct ibv_qp_rate_limit_attr a;
		uint32_t burst, batch;
		uint64_t late;
	} cases[] = {
		/* A slack of 2,048 B at 125 kB/s: 16,384 us. */
		{ { 1000, 0, 2048, 0 }, 8 * 2048, 7 * 2048, 14384000 },
		/* 5 ms at 1.25 MB/s (6,250 B): more than a packet; 40 ms
		 * (50,000 B) hold 24 packets, 16 are taken. */
		{ { 10000, 0, 2048, 0 }, 16 * 2048 + 6250, 16 * 2048, 3000000 },
		/* 40 ms at 625 kB/s (25,000 B): 12 whole packets. */
		{ { 5000, 0, 2048, 0 }, 12 * 2048 + 3125, 12 * 2048, 3000000 },
		/* 50 us, and 5 ms up to UROCE_PACE_BURST_MAX. */
		{ { 100000000, 0, 2048, 0 }, UROCE_PACE_BURST_MAX, 625000, 0 },
		/* 5 ms at 1 Gbit/s (625,000 B) above 16 packets, and
		 * those above 50 us (6,250 B). */
		{ { 1000000, 0, 1024, 0 }, 16 * 1024 + 625000, 16 * 1024,
		  3000000 },
		/* 1,024 B at 200 kB/s: 5,120 us; 40 ms: 7 packets. */
		{ { 1600, 0, 1024, 0 }, 8 * 1024, 7 * 1024, 3120000 },
		/* 5 ms at 500 kB/s (2,500 B); 40 ms: 19 packets. */
		{ { 4000, 0, 1024, 0 }, 16 * 1024 + 2500, 16 * 1024, 3000000 },
		/* Room for the batch and one packet of slack. */
		{ { 10000, 16384, 2048, 0 }, 16384, 14336, 0 },
		{ { 1000, 16384, 2048, 0 }, 16384, 14336, 14384000 },
		{ { 10000, 2048, 2048, 0 }, 2048, 0, 0 },
		/* 50 us at 10 Gbit/s (62,500 B) first, the rest slack. */
		{ { 10000000, 65536, 2048, 0 }, 65536, 62500, 0 },
		/* The batch first, the rest slack, under 5 ms at 1 Gbit/s. */
		{ { 1000000, 32768, 1024, 0 }, 32768, 16 * 1024, 0 },
		/* Over it: the batch the rest. */
		{ { 1000000, 700000, 1024, 0 }, 700000, 75000, 3000000 },
		/* Too small for the batch: one packet of slack. */
		{ { 1000000, 4096, 1024, 0 }, 4096, 3072, 0 },
	};
	struct ut_link l;
	struct uroce_qp *qp;
	unsigned int i;

	qp = rc_rts_up(&l, 8);
	if (qp == NULL)
		return;
	for (i = 0; i < RTE_DIM(cases); i++) {
		UT_CHECK_EQ(uroce_qp_set_rate_limit(qp, &cases[i].a, l.now), 0);
		UT_CHECK_EQ(qp->pace_prof.burst_bytes, cases[i].burst);
		UT_CHECK_EQ(uroce_qp_pace_batch(qp), cases[i].batch);
		UT_CHECK_EQ(qp->req.pace_late, cases[i].late);
	}
	ut_link_fini(&l);
}

/* RAW_PACKET: IBV_QP_RATE_LIMIT on RTR->RTS, RTS->RTS and SQD->RTS (its
 * table in qp_modify.c), nowhere else; bad rates change nothing. */
static void
test_modify_raw(struct ut_link *l)
{
	struct ibv_qp_attr a, q;
	struct uroce_qp *qp;
	struct snap before;

	memset(&a, 0, sizeof(a));
	/* INIT->RTR does not take it. */
	qp = qp_in(l, IBV_QPT_RAW_PACKET, IBV_QPS_INIT, 0x310);
	if (!UT_CHECK(qp != NULL))
		return;
	snap_take(qp, &before);
	a.qp_state = IBV_QPS_RTR;
	a.rate_limit = 5000;
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_RATE_LIMIT, l->now), -EINVAL);
	UT_CHECK(snap_same(qp, &before));
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_STATE, l->now), 0);
	/* RTR->RTS does (perftest's --rate_limit_type=PP path). */
	a.qp_state = IBV_QPS_RTS;
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_RATE_LIMIT, l->now), 0);
	uroce_qp_query(qp, &q, NULL);
	UT_CHECK_EQ(q.rate_limit, 5000);
	UT_CHECK(qp->pace_on);
	UT_CHECK_EQ(qp->pace_prof.rate_kbps, 5000);
	/* typical_pkt_sz 0 is the largest untagged frame for RAW_PACKET. */
	UT_CHECK_EQ(qp->pace_prof.burst_bytes,
		    (UROCE_PACE_BATCH_PKTS + 1) * (l->node[0].env.mtu + 14u));
	/* RTS->RTS: a new rate; bad ones change nothing. */
	a.rate_limit = 8000;
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_RATE_LIMIT, l->now), 0);
	UT_CHECK_EQ(qp->pace_prof.rate_kbps, 8000);
	snap_take(qp, &before);
	a.rate_limit = RATE_MAX + 1;
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_RATE_LIMIT, l->now), -EINVAL);
	UT_CHECK(snap_same(qp, &before));
	a.rate_limit = RATE_MIN - 1;
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_RATE_LIMIT, l->now), -EINVAL);
	UT_CHECK(snap_same(qp, &before));
	/* A burst below the default typical size (a whole frame) is EINVAL. */
	{
		struct ibv_qp_rate_limit_attr rl = {
			8000, l->node[0].env.mtu + 13u, 0, 0,
		};

		UT_CHECK_EQ(uroce_qp_set_rate_limit(qp, &rl, l->now), -EINVAL);
		UT_CHECK(snap_same(qp, &before));
		rl.max_burst_sz++;
		UT_CHECK_EQ(uroce_qp_set_rate_limit(qp, &rl, l->now), 0);
		UT_CHECK_EQ(qp->pace_prof.burst_bytes, l->node[0].env.mtu + 14u);
		snap_take(qp, &before);
	}
	/* RTS->SQD does not take it; SQD->RTS does, 0 turns pacing off. */
	a.qp_state = IBV_QPS_SQD;
	a.rate_limit = 9000;
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_RATE_LIMIT, l->now), -EINVAL);
	UT_CHECK(snap_same(qp, &before));
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_STATE, l->now), 0);
	a.qp_state = IBV_QPS_RTS;
	a.rate_limit = 0;
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_RATE_LIMIT, l->now), 0);
	uroce_qp_query(qp, &q, NULL);
	UT_CHECK_EQ(q.rate_limit, 0);
	UT_CHECK(!qp->pace_on);
	UT_NOTE("raw modify");
}

/* modify_qp(IBV_QP_RATE_LIMIT): applied on the ways into RTS and RTS->RTS,
 * rejected elsewhere and for bad rates, with nothing changed. */
static void
test_modify(void)
{
	struct ut_link l;
	struct uroce_qp *qp;
	struct ibv_qp_attr a, q;
	struct snap before;

	if (!UT_CHECK_EQ(link_up(&l, 9), 0))
		return;
	qp = qp_in(&l, IBV_QPT_UC, IBV_QPS_RTS, 0x300);
	if (!UT_CHECK(qp != NULL))
		goto out;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.rate_limit = 7000;
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_RATE_LIMIT, l.now), 0);
	uroce_qp_query(qp, &q, NULL);
	UT_CHECK_EQ(q.rate_limit, 7000);
	UT_CHECK(qp->pace_on);
	UT_CHECK_EQ(qp->pace_prof.rate_kbps, 7000);
	/* Bad rates: nothing changes. */
	snap_take(qp, &before);
	a.rate_limit = RATE_MAX + 1;
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_RATE_LIMIT, l.now), -EINVAL);
	UT_CHECK(snap_same(qp, &before));
	a.rate_limit = RATE_MIN - 1;
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_RATE_LIMIT, l.now), -EINVAL);
	UT_CHECK(snap_same(qp, &before));
	/* RTS->SQD does not take it. */
	a.qp_state = IBV_QPS_SQD;
	a.rate_limit = 9000;
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_RATE_LIMIT, l.now), -EINVAL);
	UT_CHECK(snap_same(qp, &before));
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_STATE, l.now), 0);
	/* SQD->RTS does, and 0 turns pacing off. */
	a.qp_state = IBV_QPS_RTS;
	a.rate_limit = 0;
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_RATE_LIMIT, l.now), 0);
	uroce_qp_query(qp, &q, NULL);
	UT_CHECK_EQ(q.rate_limit, 0);
	UT_CHECK(!qp->pace_on);
	/* RTR->RTS with a rate. */
	qp = qp_in(&l, IBV_QPT_RC, IBV_QPS_RTR, 0x301);
	if (!UT_CHECK(qp != NULL))
		goto out;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	a.rate_limit = 100000;
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				    IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RATE_LIMIT, l.now), 0);
	UT_CHECK(qp->pace_on);
	UT_CHECK_EQ(qp->pace_prof.rate_kbps, 100000);
	test_modify_raw(&l);
out:
	ut_link_fini(&l);
}

/* ---------------------------------------------------------------------------
 * Traffic on the fake clock.
 */

struct frame_log {
	int side;			/* record frames of this node */
	uint32_t qpn;			/* ... sent by this QP (dest = peer) */
	uint32_t dqpn;
	uint32_t drop_every;		/* drop each Nth first transmission */
	uint32_t n, seen;
	uint64_t t[MAX_FRAMES];
	uint32_t len[MAX_FRAMES];
	uint32_t psn[MAX_FRAMES];
};

static bool
tap_log(struct ut_link *l, int from, const struct uroce_pkt *pkt, void *ctx)
{
	struct frame_log *fl = ctx;

	/* ACKs and NAKs are not paced (qp_pace.c). */
	if (from != fl->side || pkt->bth.dqpn != fl->dqpn ||
	    pkt->bth.opcode == UROCE_OPC_RC_ACK)
		return true;
	if (fl->n < MAX_FRAMES) {
		fl->t[fl->n] = l->now;
		fl->len[fl->n] = pkt->frame_len;
		fl->psn[fl->n] = pkt->bth.psn;
		fl->n++;
	}
	fl->seen++;
	return !(fl->drop_every != 0 && fl->seen % fl->drop_every == 0);
}

/* Token-bucket conformance of frames [from, n) from time t0 with a bucket
 * holding b0 bytes then: in units of 1/hz byte, tokens never below zero.
 * Every window [i, j] must also fit burst + rate * (t_j - t_i).
 * @return the tokens left after the last frame. */
static int64_t
check_conform(const struct frame_log *fl, uint32_t from, uint64_t t0,
	      int64_t b0, const struct uroce_tb_profile *p)
{
	int64_t hz = (int64_t)p->tsc_hz, tok = 0;
	uint32_t i, j;
	bool ok = true;

	for (i = from; i < fl->n; i++) {
		int64_t sent = 0;

		for (j = from; j <= i; j++)
			sent += fl->len[j];
		tok = b0 * hz + (int64_t)(fl->t[i] - t0) * (int64_t)p->refill -
		      sent * hz;
		ok = ok && tok >= 0;
	}
	UT_CHECK(ok);
	/* Any window: bytes(i..j) <= burst + rate * (t_j - t_i). */
	ok = true;
	for (i = from; i < fl->n; i++) {
		int64_t sent = 0;

		for (j = i; j < fl->n; j++) {
			sent += fl->len[j];
			ok = ok && sent * hz <= (int64_t)p->burst_bytes * hz +
			     (int64_t)(fl->t[j] - fl->t[i]) * (int64_t)p->refill;
		}
	}
	UT_CHECK(ok);
	return tok;
}

struct stream {
	struct ut_link l;
	struct uroce_qp *qa, *qb;
	uint8_t *la, *rb;
	struct uroce_mr *mla, *mrb;
	struct frame_log *fl;
};

static int
stream_init(struct stream *s, uint64_t seed, uint32_t qpn_a, uint32_t qpn_b)
{
	struct ut_qp_opts o;

	memset(s, 0, sizeof(*s));
	if (link_up(&s->l, seed) != 0)
		return -ENOMEM;
	ut_qp_opts_default(&o, IBV_QPT_RC);
	s->la = aligned_alloc(4096, BUF_LEN);
	s->rb = aligned_alloc(4096, BUF_LEN);
	s->fl = calloc(1, sizeof(*s->fl));
	if (s->la == NULL || s->rb == NULL || s->fl == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < BUF_LEN; i++)
		s->la[i] = (uint8_t)(i * 7 + 3);
	memset(s->rb, 0, BUF_LEN);
	s->mla = ut_node_reg(&s->l.node[0], s->la, BUF_LEN, ACCESS_ALL);
	s->mrb = ut_node_reg(&s->l.node[1], s->rb, BUF_LEN, ACCESS_ALL);
	if (s->mla == NULL || s->mrb == NULL)
		return -EINVAL;
	return ut_link_pair(&s->l, &o, qpn_a, qpn_b, &s->qa, &s->qb);
}

static void
stream_fini(struct stream *s)
{
	ut_link_fini(&s->l);
	free(s->la);
	free(s->rb);
	free(s->fl);
}

/* A stream of seed between QPs 0x10 (A) and 0x20 (B), logging the frames
 * node `side` sends to the other QP (none for side -1); NULL (a failed
 * check) if it cannot be set up. */
static struct stream *
stream_new(uint64_t seed, int side)
{
	struct stream *s = calloc(1, sizeof(*s));

	if (!UT_CHECK(s != NULL))
		return NULL;
	if (!UT_CHECK_EQ(stream_init(s, seed, 0x10, 0x20), 0)) {
		stream_fini(s);
		free(s);
		return NULL;
	}
	if (side >= 0) {
		s->fl->side = side;
		s->fl->dqpn = side == 0 ? 0x20 : 0x10;
		s->l.tap = tap_log;
		s->l.tap_ctx = s->fl;
	}
	return s;
}

static void
stream_free(struct stream *s)
{
	if (s != NULL)
		stream_fini(s);
	free(s);
}

/* The tokens lost (bytes, lost) are what a stream is behind its rate at
 * its end (left, in 1/tsc_hz bytes, check_conform()), to within a burst. */
static void
check_lost_is_shortfall(int64_t left, uint64_t lost,
			const struct uroce_tb_profile *p)
{
	int64_t hz = (int64_t)p->tsc_hz;

	UT_CHECK(left >= (int64_t)lost * hz);
	UT_CHECK(left - (int64_t)lost * hz <= (int64_t)p->burst_bytes * hz);
}

/* Post n WRITEs (or READs) of len from A at off; the last one signaled. */
static int
post_ops(struct stream *s, struct uroce_qp *qp, enum ibv_wr_opcode op,
	 unsigned int n, uint32_t len, uint32_t off)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)s->la + off + i * len,
			.length = len, .lkey = s->mla->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1, .opcode = op,
			.send_flags = i + 1 == n ? IBV_SEND_SIGNALED : 0,
		}, *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)s->rb + off + i * len;
		wr.wr.rdma.rkey = s->mrb->rkey;
		if (uroce_qp_post_send(qp, &wr, &bad) != 0)
			return -1;
	}
	return 0;
}

struct want {
	struct uroce_cq *cq;
	int got;
	struct ibv_wc wc[4];
};

static bool
got_one(struct ut_link *l, void *ctx)
{
	struct want *w = ctx;
	int n;

	(void)l;
	n = uroce_cq_poll(w->cq, 1, &w->wc[w->got]);
	if (n > 0)
		w->got += n;
	return w->got > 0;
}

/* A backlogged QP wakes up once per batch (qp_pace.c, pace_want()): the
 * frames leave in groups sharing one time, each group but the last holding
 * as many frames of the largest length as the batch has room for. */
static void
check_batches(const struct frame_log *fl, uint32_t batch)
{
	uint32_t i, max_len = 0, groups = 1, per;

	for (i = 0; i < fl->n; i++)
		max_len = RTE_MAX(max_len, fl->len[i]);
	for (i = 1; i < fl->n; i++)
		groups += fl->t[i] != fl->t[i - 1];
	per = RTE_MAX(batch / max_len, 1u);
	/* The first group is the full bucket, the others one batch each. */
	UT_CHECK(groups <= 1 + (fl->n + per - 1) / per);
	UT_NOTE("%u frames in %u groups, batch %u B", fl->n, groups, batch);
}

/* One RC WRITE stream, paced at rate_kbps; frames dropped if drop_every;
 * with late, each wake-up as late as uroce_qp_deadline_latest() allows,
 * and delay cycles later still. */
static void
test_write_stream_delay(uint32_t rate_kbps, uint32_t burst,
			uint32_t drop_every, bool late, uint64_t delay)
{
	struct ibv_qp_rate_limit_attr rl = { rate_kbps, burst, 0, 0 };
	struct stream *s = stream_new(11, 0);
	struct want w = { 0 };
	uint64_t t0;
	int64_t left, lost, hz;

	if (s == NULL)
		return;
	s->fl->drop_every = drop_every;
	UT_CHECK_EQ(uroce_qp_set_rate_limit(s->qa, &rl, s->l.now), 0);
	s->l.timers_late = late;
	s->l.timer_delay = delay;
	t0 = s->l.now;
	/* 64 x 16 KiB = 1 MiB, 1024 frames of 1 KiB payload. */
	UT_CHECK_EQ(post_ops(s, s->qa, IBV_WR_RDMA_WRITE, 64, 16384, 0), 0);
	w.cq = s->l.node[0].scq;
	/* 1 MiB at 1 Mbit/s takes 8.4 s. */
	UT_CHECK(ut_link_run(&s->l, got_one, &w, ut_link_us(20000000),
			     2000000));
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_MEM(s->la, s->rb, 64 * 16384);
	UT_CHECK(s->fl->n >= 1024 && s->fl->n < MAX_FRAMES);
	left = check_conform(s->fl, 0, t0, s->qa->pace_prof.burst_bytes,
			     &s->qa->pace_prof);
	if (drop_every == 0 && delay != 0) {
		/* Woken later than the slack covers: the tokens dropped at
		 * the burst are counted, and they are what the stream is
		 * behind the rate, to within the last wake-up's bucket. */
		lost = (int64_t)s->qa->stats.pace_lost_bytes[0];
		hz = (int64_t)s->qa->pace_prof.tsc_hz;
		/* All of it to the late wake-ups. */
		UT_CHECK_EQ(s->qa->stats.pace_lost_bytes[1], 0);
		UT_CHECK_EQ(s->qa->stats.pace_lost_bytes[2], 0);
		UT_CHECK_EQ(s->qa->stats.pace_lost_bytes[3], 0);
		UT_CHECK(s->l.late_runs > 20);
		UT_CHECK(lost > 0);
		check_lost_is_shortfall(left, (uint64_t)lost,
					&s->qa->pace_prof);
		UT_CHECK_EQ(s->fl->n, 1024);
		UT_NOTE("lost %" PRId64 " B, behind %" PRId64 " B", lost,
			left / hz);
	} else if (drop_every == 0 && late) {
		/* Woken late every time, but never later than the slack
		 * covers: no token lost, only the last wake-up's lateness
		 * left over. */
		UT_CHECK(s->l.late_runs > 100);
		UT_CHECK(left < (int64_t)((s->qa->req.pace_late + 1) *
					  s->qa->pace_prof.refill));
		UT_CHECK_EQ(s->qa->stats.pace_lost_bytes[0], 0);
		UT_CHECK_EQ(s->fl->n, 1024);
	} else if (drop_every == 0) {
		/* Backlogged all along: the last frame left in the very cycle
		 * its tokens were there - the rate is exact. */
		UT_CHECK(left < (int64_t)s->qa->pace_prof.refill);
		UT_CHECK_EQ(s->fl->n, 1024);
		check_batches(s->fl, uroce_qp_pace_batch(s->qa));
	} else {
		UT_CHECK(s->qa->stats.retransmits > 0);
		UT_CHECK(s->fl->n > 1024);
	}
	UT_CHECK(s->qa->stats.pace_wait_cycles > 0);
	UT_NOTE("write stream %u kbit/s burst %u drop 1/%u%s, delay %" PRIu64,
		rate_kbps, burst, drop_every, late ? ", woken late" : "",
		delay);
	stream_free(s);
}

static void
test_write_stream(uint32_t rate_kbps, uint32_t burst, uint32_t drop_every)
{
	test_write_stream_delay(rate_kbps, burst, drop_every, false, 0);
}

static bool
past(struct ut_link *l, void *ctx)
{
	return l->now >= *(const uint64_t *)ctx;
}

/*
 * The window, not the pacer, holds the stream back: A receives nothing
 * (no ACK) for the first 50 ms of a 1 Gbit/s stream of 64 KiB WRITEs, 16
 * more than its UROCE_REQ_WINDOW PSNs hold (frames of 1 KiB: 4 MiB, 34 ms
 * at the rate), so the window stays full until the ACK timeout (67 ms
 * after the last packet) resends the oldest (B's ACK of the duplicate
 * acknowledges them all). The tokens of that wait beyond the burst are
 * lost, all of them counted as lost to the window, none as late service,
 * a missed turn or idle, and they are what the stream is behind the rate
 * at its end, to within the burst.
 */
static void
test_lost_window(void)
{
	struct ibv_qp_rate_limit_attr rl = { 1000000, 0, 0, 0 };
	const uint32_t len = 65536, n = UROCE_REQ_WINDOW / 64 + 16;
	struct stream *s = stream_new(13, 0);
	struct want w = { 0 };
	const uint64_t *lost;
	uint64_t t0, until;
	int64_t left;
	uint32_t i;

	if (s == NULL)
		return;
	lost = s->qa->stats.pace_lost_bytes;
	UT_CHECK_EQ(uroce_qp_set_rate_limit(s->qa, &rl, s->l.now), 0);
	t0 = s->l.now;
	until = t0 + ut_link_us(50000);
	s->l.node[0].rx_off = true;
	/* The same 2 MiB again and again: the last one signaled. */
	for (i = 0; i < n; i++) {
		uint32_t off = (i * len) % BUF_LEN;

		if (!UT_CHECK_EQ(post_ops(s, s->qa, IBV_WR_RDMA_WRITE, 1, len,
					  off), 0))
			goto out;
	}
	UT_CHECK(ut_link_run(&s->l, past, &until, ut_link_us(100000), 4000000));
	UT_CHECK_EQ(s->qa->req.stop, UROCE_REQ_STOP_WINDOW);
	UT_CHECK_EQ(s->fl->n, UROCE_REQ_WINDOW);
	s->l.node[0].rx_off = false;
	w.cq = s->l.node[0].scq;
	/* Every WRITE is signaled by post_ops() (n = 1): wait for the last. */
	for (i = 0; i < n; i++) {
		w.got = 0;
		if (!UT_CHECK(ut_link_run(&s->l, got_one, &w,
					  ut_link_us(1000000), 4000000)) ||
		    !UT_CHECK_EQ(w.wc[0].status, IBV_WC_SUCCESS))
			goto out;
	}
	UT_CHECK_MEM(s->la, s->rb, BUF_LEN);
	UT_CHECK_EQ(s->qa->stats.timeouts, 1);
	UT_CHECK(s->qa->stats.retransmits > 0);
	left = check_conform(s->fl, 0, t0, s->qa->pace_prof.burst_bytes,
			     &s->qa->pace_prof);
	UT_CHECK(lost[1] > 0);
	UT_CHECK_EQ(lost[0], 0);
	UT_CHECK_EQ(lost[2], 0);
	UT_CHECK_EQ(lost[3], 0);
	check_lost_is_shortfall(left, lost[1], &s->qa->pace_prof);
	UT_NOTE("window: lost %" PRIu64 " B, behind %" PRId64 " B, %" PRIu64
		" resent", lost[1], left / (int64_t)UT_LINK_HZ,
		s->qa->stats.retransmits);
out:
	stream_free(s);
}

/* A stream at 100 Mbit/s, default burst, for the pause tests. */
static struct stream *
idle_stream_new(uint64_t seed, struct want *w)
{
	struct ibv_qp_rate_limit_attr rl = { 100000, 0, 0, 0 };
	struct stream *s = stream_new(seed, 0);

	if (s == NULL)
		return NULL;
	UT_CHECK_EQ(uroce_qp_set_rate_limit(s->qa, &rl, s->l.now), 0);
	w->cq = s->l.node[0].scq;
	return s;
}

/* Post n WRITEs of 16 KiB from A, message first on, and run the link until
 * the last one's completion. */
static void
idle_write(struct stream *s, struct want *w, uint32_t n, uint32_t first)
{
	w->got = 0;
	UT_CHECK_EQ(post_ops(s, s->qa, IBV_WR_RDMA_WRITE, n, 16384,
			     first * 16384), 0);
	UT_CHECK(ut_link_run(&s->l, got_one, w, ut_link_us(1000000), 100000));
}

/*
 * Nothing posted for 10 ms at 100 Mbit/s after a stream that drained the
 * bucket (5 messages, more than its burst): the pause fills the bucket
 * only up to the batch (qp_pace.c, Lost rate), so the message after it
 * conforms to a bucket that held the batch when it was posted, not the
 * whole burst. What the bucket drops is counted as the application's
 * pause (pace_idle_bytes), not as a loss: the 125,000 B of the pause less
 * the batch, give or take what the stream had left.
 */
static void
test_idle(void)
{
	struct want w = { 0 };
	struct stream *s = idle_stream_new(14, &w);
	const uint64_t *lost;
	uint64_t burst, batch, t1;
	uint32_t n1;

	if (s == NULL)
		return;
	lost = s->qa->stats.pace_lost_bytes;
	burst = s->qa->pace_prof.burst_bytes;
	batch = uroce_qp_pace_batch(s->qa);
	idle_write(s, &w, 5, 0);
	UT_CHECK(5 * 16384 > burst);
	UT_CHECK_EQ(s->qa->req.stop, UROCE_REQ_STOP_IDLE);
	UT_CHECK_EQ(lost[3], 0);
	UT_CHECK(uroce_tb_tokens(&s->qa->pace_tb, &s->qa->pace_prof,
				 s->l.now) < (int64_t)batch);
	s->l.now += ut_link_us(10000);
	n1 = s->fl->n;
	t1 = s->l.now;
	idle_write(s, &w, 1, 5);
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_MEM(s->la, s->rb, 6 * 16384);
	UT_CHECK_EQ(s->fl->n - n1, 16);
	check_conform(s->fl, n1, t1, (int64_t)batch, &s->qa->pace_prof);
	UT_CHECK(lost[3] + batch >= 125000 && lost[3] <= 125000);
	UT_CHECK_EQ(lost[0], 0);
	UT_CHECK_EQ(lost[1], 0);
	UT_CHECK_EQ(lost[2], 0);
	UT_NOTE("idle: %" PRIu64 " B, batch %" PRIu64 ", burst %" PRIu64,
		lost[3], batch, burst);
	stream_free(s);
}

/*
 * A stream that runs out of posted work while it is owed tokens keeps
 * them: 2 messages of 16 KiB at 100 Mbit/s, then 2 ms with nothing
 * posted. The bucket is full (the burst) when they are posted; they take
 * less than it, and what is left, above the batch, is still there after
 * the pause (its refill dropped at the burst, counted as idle): the next
 * message leaves at once, as the bucket allows.
 */
static void
test_idle_keeps(void)
{
	struct want w = { 0 };
	struct stream *s = idle_stream_new(15, &w);
	int64_t before, after;
	uint64_t waited;

	if (s == NULL)
		return;
	idle_write(s, &w, 2, 0);
	UT_CHECK_EQ(s->qa->req.stop, UROCE_REQ_STOP_IDLE);
	before = uroce_tb_tokens(&s->qa->pace_tb, &s->qa->pace_prof, s->l.now);
	UT_CHECK(before > (int64_t)uroce_qp_pace_batch(s->qa));
	s->l.now += ut_link_us(2000);
	waited = s->qa->stats.pace_wait_cycles;
	idle_write(s, &w, 1, 2);
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_MEM(s->la, s->rb, 3 * 16384);
	/* No frame of the third message waited for tokens. */
	after = uroce_tb_tokens(&s->qa->pace_tb, &s->qa->pace_prof, s->l.now);
	UT_CHECK(after >= 0);
	UT_CHECK_EQ(s->qa->stats.pace_wait_cycles, waited);
	UT_NOTE("idle keeps: %" PRId64 " B held before the pause, %" PRId64
		" after the message", before, after);
	stream_free(s);
}

/* A rate so low that one frame's tokens take longer than the ACK timeout
 * (50 kbit/s: a 1 KiB-payload frame every ~180 ms, timeout 67 ms). B ACKs
 * only the last packet of each 2-packet message (AckReq, responder.c), so
 * A's first packet of a message waits unacknowledged while the second one
 * waits for tokens: the timer must not run while the QP holds a packet
 * back, and must run from the last packet sent (requester.c). One ACK per
 * message, no timeout, no resend. With drop_last, the last packet (PSN 7,
 * the one that asks for the ACK) is lost once: the timer is all that can
 * find it, so exactly one timeout resends the message (PSN 6 and 7). */
static void
test_slow_no_timeout(bool drop_last)
{
	/* A burst of 2 frames: one frame per wake-up (no batch). */
	struct ibv_qp_rate_limit_attr rl = { 50, 2048, 0, 0 };
	struct stream *s = stream_new(12, 0);
	struct want w = { 0 };

	if (s == NULL)
		return;
	s->fl->drop_every = drop_last ? 8 : 0;
	s->l.node[0].env.lim.rate_limit_min = 1;	/* the verb's floor */
	UT_CHECK_EQ(uroce_qp_set_rate_limit(s->qa, &rl, s->l.now), 0);
	/* 4 x 2 KiB: 8 frames, about 1.4 s on the fake clock. */
	UT_CHECK_EQ(post_ops(s, s->qa, IBV_WR_RDMA_WRITE, 4, 2048, 0), 0);
	w.cq = s->l.node[0].scq;
	UT_CHECK(ut_link_run(&s->l, got_one, &w, ut_link_us(10000000), 2000000));
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_MEM(s->la, s->rb, 4 * 2048);
	UT_CHECK_EQ(s->qa->stats.timeouts, drop_last ? 1 : 0);
	UT_CHECK_EQ(s->qa->stats.retransmits, drop_last ? 2 : 0);
	UT_CHECK_EQ(s->qa->stats.tx_pkts, drop_last ? 10 : 8);
	UT_CHECK_EQ(s->qb->stats.dup_reqs, drop_last ? 1 : 0);
	UT_CHECK_EQ(s->qb->stats.acks_tx, 4);
	UT_CHECK_EQ(s->qa->stats.acks_rx, 4);
	UT_CHECK(s->qa->stats.pace_wait_cycles > 0);
	/* One wake-up per frame held back (the 7 after the first), none at
	 * the local ACK timeout while a frame waits for its tokens
	 * (requester.c, uroce_req_deadline(): waking up there too would make
	 * 10 and 15); the loss adds the timeout and the waits of the 2 resent
	 * frames. */
	UT_CHECK_EQ(s->l.timer_runs, drop_last ? 10 : 7);
	UT_NOTE("slow paced stream, %s", drop_last ? "last packet lost once" :
		"no loss");
	stream_free(s);
}

/* For READs from A: B's buffer holds the bytes, A's is zeroed. */
static void
read_source(struct stream *s)
{
	memcpy(s->rb, s->la, BUF_LEN);
	memset(s->la, 0, BUF_LEN);
}

/* READ responses from a paced B. */
static void
test_read_stream(void)
{
	struct ibv_qp_rate_limit_attr rl = { 200000, 0, 0, 0 };
	struct stream *s = stream_new(12, 1);
	struct want w = { 0 };
	uint64_t t0;
	int64_t left;

	if (s == NULL)
		return;
	read_source(s);
	UT_CHECK_EQ(uroce_qp_set_rate_limit(s->qb, &rl, s->l.now), 0);
	t0 = s->l.now;
	/* One READ of 512 KiB: 512 response frames from B. */
	UT_CHECK_EQ(post_ops(s, s->qa, IBV_WR_RDMA_READ, 1, 512 * 1024, 0), 0);
	w.cq = s->l.node[0].scq;
	UT_CHECK(ut_link_run(&s->l, got_one, &w, ut_link_us(1000000), 2000000));
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_MEM(s->la, s->rb, 512 * 1024);
	UT_CHECK_EQ(s->fl->n, 512);
	left = check_conform(s->fl, 0, t0, s->qb->pace_prof.burst_bytes,
			     &s->qb->pace_prof);
	UT_CHECK(left < (int64_t)s->qb->pace_prof.refill);
	UT_NOTE("read responses");
	stream_free(s);
}

/* A rate change in the middle of a stream holds from the next frame on. */
static bool
half_sent(struct ut_link *l, void *ctx)
{
	const struct frame_log *fl = ctx;

	(void)l;
	return fl->n >= 300;
}

/*
 * A paced responder whose port takes nothing in the middle of a READ at
 * 200 Mbit/s, for 10 ms: called with no room for its responses (the
 * engine's batch for a stalled port) while its pacing wait is pending, it
 * still waits for tokens; once the wait is over, it records a missed
 * turn, so the 250,000 B of tokens that came in beyond its bucket are
 * counted as lost waiting for a turn, and nothing as late or idle. The
 * READ still completes byte-exact.
 */
static void
test_read_turn(void)
{
	struct ibv_qp_rate_limit_attr rl = { 200000, 0, 0, 0 };
	struct stream *s = stream_new(16, 1);
	struct want w = { 0 };
	const uint64_t *lost;
	uint64_t burst;

	if (s == NULL)
		return;
	lost = s->qb->stats.pace_lost_bytes;
	read_source(s);
	UT_CHECK_EQ(uroce_qp_set_rate_limit(s->qb, &rl, s->l.now), 0);
	burst = s->qb->pace_prof.burst_bytes;
	UT_CHECK_EQ(post_ops(s, s->qa, IBV_WR_RDMA_READ, 1, 512 * 1024, 0), 0);
	UT_CHECK(ut_link_run(&s->l, half_sent, s->fl, ut_link_us(1000000),
			     2000000));
	UT_CHECK_EQ(lost[2], 0);
	s->l.node[1].tx_stalled = true;
	/* Its pacing wait is pending: a call with no room leaves that as
	 * the reason. */
	UT_CHECK(s->qb->req.wait_at != UROCE_TIME_OFF &&
		 s->qb->req.wait_at > s->l.now);
	ut_link_step(&s->l);
	UT_CHECK_EQ(s->qb->req.stop, UROCE_REQ_STOP_TOKENS);
	s->l.now += ut_link_us(10000);
	ut_link_step(&s->l);
	UT_CHECK_EQ(s->qb->req.stop, UROCE_REQ_STOP_TURN);
	s->l.node[1].tx_stalled = false;
	w.cq = s->l.node[0].scq;
	UT_CHECK(ut_link_run(&s->l, got_one, &w, ut_link_us(1000000), 2000000));
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_MEM(s->la, s->rb, 512 * 1024);
	/* The bucket held between a frame's debt and a burst at the stall. */
	UT_CHECK(lost[2] + burst + 4096 >= 250000 && lost[2] <= 250000 + burst);
	UT_CHECK_EQ(lost[0], 0);
	UT_CHECK_EQ(lost[1], 0);
	UT_CHECK_EQ(lost[3], 0);
	UT_NOTE("read responses held by a stalled port: %" PRIu64
		" B lost waiting for a turn, burst %" PRIu64, lost[2], burst);
	stream_free(s);
}

static void
test_rate_change(void)
{
	struct ibv_qp_rate_limit_attr rl = { 1000000, 0, 0, 0 };
	struct stream *s = stream_new(13, 0);
	struct uroce_tb_profile p1;
	struct want w = { 0 };
	uint64_t tc;
	uint32_t from;
	int64_t left, b0;

	if (s == NULL)
		return;
	UT_CHECK_EQ(uroce_qp_set_rate_limit(s->qa, &rl, s->l.now), 0);
	UT_CHECK_EQ(post_ops(s, s->qa, IBV_WR_RDMA_WRITE, 64, 16384, 0), 0);
	UT_CHECK(ut_link_run(&s->l, half_sent, s->fl, ut_link_us(1000000), 2000000));
	/* Slower, then check everything after the change against it. Tokens
	 * at the change are kept, capped at the new burst. */
	tc = s->l.now;
	from = s->fl->n;
	p1 = s->qa->pace_prof;
	b0 = uroce_tb_tokens(&s->qa->pace_tb, &p1, tc);
	rl.rate_limit = 100000;
	UT_CHECK_EQ(uroce_qp_set_rate_limit(s->qa, &rl, tc), 0);
	b0 = RTE_MIN(b0, (int64_t)s->qa->pace_prof.burst_bytes);
	UT_CHECK(b0 >= 0);
	w.cq = s->l.node[0].scq;
	UT_CHECK(ut_link_run(&s->l, got_one, &w, ut_link_us(1000000), 2000000));
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_SUCCESS);
	left = check_conform(s->fl, from, tc, b0 + 1, &s->qa->pace_prof);
	UT_CHECK(left < (int64_t)s->qa->pace_prof.refill + (int64_t)p1.tsc_hz);
	UT_CHECK_EQ(s->fl->n, 1024);
	/* And faster again: the wait computed at the slow rate is dropped. */
	UT_NOTE("rate change");
	stream_free(s);
}

/* Two QP pairs at one rate, both backlogged: the same bytes in the same
 * time, within the batch a waiting QP gathers (7 frames, qp_pace.c): the
 * first stream's last frames leave as soon as their own tokens are there,
 * while the other waits for a batch. */
struct two_log {
	struct frame_log *fl[2];
};

static bool
tap_two(struct ut_link *l, int from, const struct uroce_pkt *pkt, void *ctx)
{
	struct two_log *tl = ctx;

	tap_log(l, from, pkt, tl->fl[0]);
	return tap_log(l, from, pkt, tl->fl[1]);
}

static void
test_two_fair(void)
{
	struct ibv_qp_rate_limit_attr rl = { 500000, 0, 0, 0 };
	struct stream *s = stream_new(14, -1);
	struct frame_log *f2 = calloc(1, sizeof(*f2));
	struct uroce_qp *qa2 = NULL, *qb2 = NULL;
	struct two_log tl;
	struct ut_qp_opts o;
	struct want w = { 0 };
	uint64_t t_end, tol, b[2] = { 0, 0 };
	uint32_t i, k;

	if (s == NULL || !UT_CHECK(f2 != NULL))
		goto out;
	ut_qp_opts_default(&o, IBV_QPT_RC);
	if (!UT_CHECK_EQ(ut_link_pair(&s->l, &o, 0x11, 0x21, &qa2, &qb2), 0))
		goto out;
	s->fl->dqpn = 0x20;
	f2->dqpn = 0x21;
	tl.fl[0] = s->fl;
	tl.fl[1] = f2;
	s->l.tap = tap_two;
	s->l.tap_ctx = &tl;
	UT_CHECK_EQ(uroce_qp_set_rate_limit(s->qa, &rl, s->l.now), 0);
	UT_CHECK_EQ(uroce_qp_set_rate_limit(qa2, &rl, s->l.now), 0);
	UT_CHECK_EQ(post_ops(s, s->qa, IBV_WR_RDMA_WRITE, 32, 16384, 0), 0);
	UT_CHECK_EQ(post_ops(s, qa2, IBV_WR_RDMA_WRITE, 64, 16384, 0), 0);
	w.cq = s->l.node[0].scq;
	/* The first (shorter) stream ends; compare up to its last frame. */
	UT_CHECK(ut_link_run(&s->l, got_one, &w, ut_link_us(1000000), 2000000));
	t_end = s->fl->t[s->fl->n - 1];
	for (k = 0; k < 2; k++)
		for (i = 0; i < tl.fl[k]->n; i++)
			if (tl.fl[k]->t[i] <= t_end)
				b[k] += tl.fl[k]->len[i];
	UT_CHECK_EQ(s->fl->n, 512);
	/* Within a batch of frames (1,024 B payloads in 1,100 B frames). */
	tol = uroce_qp_pace_batch(s->qa) / 1024 * 1100;
	UT_CHECK_EQ(uroce_qp_pace_batch(s->qa), 16 * 1024);
	UT_CHECK(b[0] + tol >= b[1] && b[1] + tol >= b[0]);
	UT_NOTE("fair: %lu vs %lu bytes", (unsigned long)b[0], (unsigned long)b[1]);
out:
	stream_free(s);
	free(f2);
}

/* ---------------------------------------------------------------------------
 * RAW_PACKET. Its frames are not RoCE (the tap parses RoCE only): a raw
 * send completes in the very call that builds its frame, so the send CQ,
 * polled after every step (before the clock moves), gives each frame's
 * time exactly; wr_id indexes its length.
 */
#define RAW_FRAMES	200

struct raw_log {
	struct frame_log *fl;
	struct uroce_cq *cq;
	const uint32_t *len;
	uint32_t bad;		/* completions not IBV_WC_SUCCESS */
};

static bool
raw_all_sent(struct ut_link *l, void *ctx)
{
	struct raw_log *rl = ctx;
	struct ibv_wc wc[16];
	int n, i;

	while ((n = uroce_cq_poll(rl->cq, RTE_DIM(wc), wc)) > 0) {
		for (i = 0; i < n; i++) {
			struct frame_log *fl = rl->fl;

			if (wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].wr_id >= RAW_FRAMES || fl->n >= MAX_FRAMES) {
				rl->bad++;
				continue;
			}
			fl->t[fl->n] = l->now;
			fl->len[fl->n] = rl->len[wc[i].wr_id];
			fl->n++;
		}
	}
	return rl->fl->n + rl->bad >= RAW_FRAMES;
}

/* Frames of 60 .. 1514 bytes from a raw QP paced at rate_kbps. */
static void
test_raw_stream(uint32_t rate_kbps, uint32_t burst)
{
	struct ibv_qp_rate_limit_attr rl = { rate_kbps, burst, 0, 0 };
	static const uint32_t sizes[] = { 60, 1514, 342, 1000, 64, 1514, 777 };
	static uint32_t len[RAW_FRAMES];
	static uint8_t buf[RAW_FRAMES * 1514];
	struct frame_log *fl = calloc(1, sizeof(*fl));
	struct raw_log log = { .fl = fl, .len = len };
	struct uroce_mr *mr;
	struct uroce_qp *qp;
	struct ut_link l;
	uint64_t t0, bytes = 0;
	int64_t left;
	uint32_t i;

	if (!UT_CHECK(fl != NULL) || !UT_CHECK_EQ(link_up(&l, 15), 0))
		goto out_free;
	qp = qp_in(&l, IBV_QPT_RAW_PACKET, IBV_QPS_RTS, 0x400);
	mr = ut_node_reg(&l.node[0], buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (!UT_CHECK(qp != NULL && mr != NULL))
		goto out;
	UT_CHECK_EQ(uroce_qp_set_rate_limit(qp, &rl, l.now), 0);
	t0 = l.now;
	for (i = 0; i < RAW_FRAMES; i++) {
		uint8_t *f = buf + i * 1514;
		struct ibv_sge sge = { (uintptr_t)f, 0, mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *bad;

		len[i] = sizes[i % RTE_DIM(sizes)];
		sge.length = len[i];
		bytes += len[i];
		memcpy(f, ut_link_mac[1], 6);
		memcpy(f + 6, ut_link_mac[0], 6);
		f[12] = 0x88;			/* local experimental ether_type */
		f[13] = 0xb5;
		memset(f + 14, (int)i, len[i] - 14);
		if (!UT_CHECK_EQ(uroce_qp_post_send(qp, &wr, &bad), 0))
			goto out;
	}
	log.cq = l.node[0].scq;
	UT_CHECK(ut_link_run(&l, raw_all_sent, &log, ut_link_us(1000000), 2000000));
	UT_CHECK_EQ(log.bad, 0);
	UT_CHECK_EQ(fl->n, RAW_FRAMES);
	/* Every frame left, as it was, towards B (which parses no raw). */
	UT_CHECK_EQ(l.dir[1].sent, RAW_FRAMES);
	UT_CHECK_EQ(qp->stats.tx_pkts, RAW_FRAMES);
	UT_CHECK_EQ(qp->stats.tx_bytes, bytes);
	left = check_conform(fl, 0, t0, qp->pace_prof.burst_bytes, &qp->pace_prof);
	/* Backlogged: the last frame left in the cycle its tokens were there. */
	UT_CHECK(left < (int64_t)qp->pace_prof.refill);
	UT_CHECK(qp->stats.pace_wait_cycles > 0);
	/* Served on time, so nothing lost; the send queue is empty now. */
	for (i = 0; i < RTE_DIM(qp->stats.pace_lost_bytes); i++)
		UT_CHECK_EQ(qp->stats.pace_lost_bytes[i], 0);
	UT_CHECK_EQ(qp->req.stop, UROCE_REQ_STOP_IDLE);
	UT_NOTE("raw stream %u kbit/s burst %u", rate_kbps, burst);
out:
	ut_link_fini(&l);
out_free:
	free(fl);
}

/* ---------------------------------------------------------------------------
 * Static rate (IBTA 9.11): an RC or UC QP's address vector paces it.
 */

/* The QP's path again, through SQD (IBTA 10.3.1: SQD->SQD takes an AV),
 * with static rate r; back in RTS on success. */
static int
set_static(struct ut_link *l, struct uroce_qp *qp, unsigned int r)
{
	struct ibv_qp_attr a, q;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_SQD;
	if (qp->state == IBV_QPS_RTS &&
	    uroce_qp_modify(qp, &a, IBV_QP_STATE, l->now) != 0)
		return -1;
	uroce_qp_query(qp, &q, NULL);
	q.qp_state = IBV_QPS_SQD;
	q.ah_attr.static_rate = (uint8_t)r;
	ret = uroce_qp_modify(qp, &q, IBV_QP_STATE | IBV_QP_AV, l->now);
	a.qp_state = IBV_QPS_RTS;
	if (uroce_qp_modify(qp, &a, IBV_QP_STATE, l->now) != 0)
		return -1;
	return ret;
}

/* The rate in force for each mix of static rate and user limit; a bad
 * rate changes nothing; RESET forgets the path's rate. */
static void
test_static_modify(void)
{
	struct ibv_qp_rate_limit_attr rl = { 5000000, 0, 0, 0 };
	struct ut_link l;
	struct uroce_qp *qp;
	struct ibv_qp_attr q;
	struct snap before;

	qp = rc_rts_up(&l, 15);
	if (qp == NULL)
		return;
	UT_CHECK(!qp->pace_on);
	UT_CHECK_EQ(set_static(&l, qp, IBV_RATE_10_GBPS), 0);
	uroce_qp_query(qp, &q, NULL);
	UT_CHECK_EQ(q.ah_attr.static_rate, IBV_RATE_10_GBPS);
	UT_CHECK_EQ(q.rate_limit, 0);
	UT_CHECK(qp->pace_on);
	UT_CHECK_EQ(qp->pace_prof.rate_kbps, 10000000);
	/* Tight: the batch and one packet of slack, not 5 ms (6.25 MB). */
	UT_CHECK(qp->pace_prof.burst_bytes < 100000);
	/* The lower of the two is in force, whichever comes first. */
	UT_CHECK_EQ(uroce_qp_set_rate_limit(qp, &rl, l.now), 0);
	UT_CHECK_EQ(qp->pace_prof.rate_kbps, 5000000);
	rl.rate_limit = 20000000;
	UT_CHECK_EQ(uroce_qp_set_rate_limit(qp, &rl, l.now), 0);
	UT_CHECK_EQ(qp->pace_prof.rate_kbps, 10000000);
	uroce_qp_query(qp, &q, NULL);
	UT_CHECK_EQ(q.rate_limit, 20000000);
	rl.rate_limit = 0;
	UT_CHECK_EQ(uroce_qp_set_rate_limit(qp, &rl, l.now), 0);
	UT_CHECK(qp->pace_on);
	UT_CHECK_EQ(qp->pace_prof.rate_kbps, 10000000);
	/* FDR's 14 Gb/s is its signalling rate, 14,062 Mb/s. */
	UT_CHECK_EQ(set_static(&l, qp, IBV_RATE_14_GBPS), 0);
	UT_CHECK_EQ(qp->pace_prof.rate_kbps, 14062000);
	/* Not an enum ibv_rate: refused, nothing changed. */
	snap_take(qp, &before);
	UT_CHECK_EQ(set_static(&l, qp, 1), -EINVAL);
	UT_CHECK_EQ(set_static(&l, qp, 25), -EINVAL);
	UT_CHECK(snap_same(qp, &before));
	/* At or above the line (here the most the pacer takes, 100 Gb/s),
	 * and the port's rate (IBV_RATE_MAX): not paced. */
	UT_CHECK_EQ(set_static(&l, qp, IBV_RATE_200_GBPS), 0);
	UT_CHECK(!qp->pace_on);
	UT_CHECK_EQ(set_static(&l, qp, IBV_RATE_2_5_GBPS), 0);
	UT_CHECK_EQ(qp->pace_prof.rate_kbps, 2500000);
	UT_CHECK_EQ(set_static(&l, qp, IBV_RATE_MAX), 0);
	UT_CHECK(!qp->pace_on);
	/* RESET drops the path and its rate. */
	UT_CHECK_EQ(set_static(&l, qp, IBV_RATE_40_GBPS), 0);
	UT_CHECK(qp->pace_on);
	memset(&q, 0, sizeof(q));
	q.qp_state = IBV_QPS_RESET;
	UT_CHECK_EQ(uroce_qp_modify(qp, &q, IBV_QP_STATE, l.now), 0);
	UT_CHECK(!qp->pace_on);
	UT_CHECK_EQ(qp->static_kbps, 0);
	/* UC takes it at RTR, as RC does. */
	qp = qp_in(&l, IBV_QPT_UC, IBV_QPS_INIT, 0x310);
	if (UT_CHECK(qp != NULL)) {
		memset(&q, 0, sizeof(q));
		q.qp_state = IBV_QPS_RTR;
		q.path_mtu = IBV_MTU_1024;
		q.dest_qp_num = 0x99;
		q.ah_attr.is_global = 1;
		q.ah_attr.port_num = 1;
		q.ah_attr.static_rate = IBV_RATE_25_GBPS;
		memcpy(q.ah_attr.grh.dgid.raw, l.node[1].env.gid[0].raw, 16);
		UT_CHECK_EQ(uroce_qp_modify(qp, &q, IBV_QP_STATE | IBV_QP_AV |
					    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					    IBV_QP_RQ_PSN, l.now), 0);
		UT_CHECK(qp->pace_on);
		UT_CHECK_EQ(qp->pace_prof.rate_kbps, 25781000);
	}
	ut_link_fini(&l);
}

/* A backlogged RC WRITE stream under a static rate of 2.5 Gb/s conforms
 * to it and is exactly on it, as under a user's limit. */
static void
test_static_stream(void)
{
	struct stream *s = stream_new(16, 0);
	struct want w = { 0 };
	uint64_t t0;
	int64_t left;

	if (s == NULL)
		return;
	UT_CHECK_EQ(set_static(&s->l, s->qa, IBV_RATE_2_5_GBPS), 0);
	UT_CHECK_EQ(s->qa->pace_prof.rate_kbps, 2500000);
	t0 = s->l.now;
	UT_CHECK_EQ(post_ops(s, s->qa, IBV_WR_RDMA_WRITE, 64, 16384, 0), 0);
	w.cq = s->l.node[0].scq;
	UT_CHECK(ut_link_run(&s->l, got_one, &w, ut_link_us(1000000), 2000000));
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_MEM(s->la, s->rb, 64 * 16384);
	UT_CHECK_EQ(s->fl->n, 1024);
	left = check_conform(s->fl, 0, t0, s->qa->pace_prof.burst_bytes,
			     &s->qa->pace_prof);
	UT_CHECK(left < (int64_t)s->qa->pace_prof.refill);
	UT_CHECK(s->qa->stats.pace_wait_cycles > 0);
	UT_NOTE("static rate stream, burst %u B",
		s->qa->pace_prof.burst_bytes);
	stream_free(s);
}

/* ---------------------------------------------------------------------------
 * Static rates of UD address handles (ud_pace.c). Each AH's datagrams go
 * to their own remote QPN, so the tap tells them apart.
 */
#define UD_AHS		10
#define UD_QPN_BASE	0x40
#define UD_LEN		1024u

struct ud_logs {
	struct frame_log *fl[UD_AHS];
	unsigned int n;
};

static bool
tap_ud(struct ut_link *l, int from, const struct uroce_pkt *pkt, void *ctx)
{
	struct ud_logs *ul = ctx;
	unsigned int i;

	for (i = 0; i < ul->n; i++)
		if (!tap_log(l, from, pkt, ul->fl[i]))
			return false;
	return true;
}

struct ud_fix {
	struct ut_link l;
	struct uroce_qp *qa, *qb;
	struct uroce_mr *mr;
	uint8_t buf[UD_LEN];
	struct uroce_ah ah[UD_AHS];
	struct ud_logs logs;
	uint32_t posted;
};

static struct ud_fix *
ud_fix_new(uint64_t seed, const uint8_t *rates, unsigned int n)
{
	struct ud_fix *f = calloc(1, sizeof(*f));
	struct ut_qp_opts o;
	unsigned int i;

	if (!UT_CHECK(f != NULL) || !UT_CHECK_EQ(link_up(&f->l, seed), 0)) {
		free(f);
		return NULL;
	}
	ut_qp_opts_default(&o, IBV_QPT_UD);
	o.qkey = 0x11111111;
	if (!UT_CHECK_EQ(ut_link_pair(&f->l, &o, 0x30, 0x31, &f->qa, &f->qb), 0))
		goto fail;
	f->mr = ut_node_reg(&f->l.node[0], f->buf, sizeof(f->buf),
			    IBV_ACCESS_LOCAL_WRITE);
	if (!UT_CHECK(f->mr != NULL))
		goto fail;
	f->logs.n = n;
	for (i = 0; i < n; i++) {
		ut_link_ah(&f->l, 0, 0, &f->ah[i]);
		f->ah[i].attr.static_rate = rates[i];
		if (!UT_CHECK_EQ(uroce_ah_static_rate(&f->l.node[0].env,
						      &f->ah[i]), 0))
			goto fail;
		f->logs.fl[i] = calloc(1, sizeof(*f->logs.fl[i]));
		if (!UT_CHECK(f->logs.fl[i] != NULL))
			goto fail;
		f->logs.fl[i]->dqpn = UD_QPN_BASE + i;
	}
	f->l.tap = tap_ud;
	f->l.tap_ctx = &f->logs;
	return f;
fail:
	ut_link_fini(&f->l);
	for (i = 0; i < n; i++)
		free(f->logs.fl[i]);
	free(f);
	return NULL;
}

static void
ud_fix_free(struct ud_fix *f)
{
	unsigned int i;

	if (f == NULL)
		return;
	ut_link_fini(&f->l);
	for (i = 0; i < f->logs.n; i++)
		free(f->logs.fl[i]);
	free(f);
}

/* Post n datagrams of UD_LEN bytes, round robin over the AHs. */
static int
ud_post(struct ud_fix *f, uint32_t n)
{
	struct ibv_sge sge = { (uintptr_t)f->buf, UD_LEN, f->mr->lkey };
	struct ibv_send_wr wr, *bad;
	uint32_t i, k;

	for (i = 0; i < n; i++, f->posted++) {
		k = f->posted % f->logs.n;
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = f->posted;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.wr.ud.ah = (struct ibv_ah *)&f->ah[k];
		wr.wr.ud.remote_qpn = UD_QPN_BASE + k;
		wr.wr.ud.remote_qkey = 0x11111111;
		if (uroce_qp_post_send(f->qa, &wr, &bad) != 0)
			return -1;
	}
	return 0;
}

static bool
ud_all_sent(struct ut_link *l, void *ctx)
{
	struct ud_fix *f = ctx;
	uint32_t sent = 0;
	unsigned int i;

	(void)l;
	for (i = 0; i < f->logs.n; i++)
		sent += f->logs.fl[i]->n;
	return sent >= f->posted;
}

/* A bad static rate is refused; the port's rate, and rates at or above
 * the line (here the most the pacer takes, 100 Gb/s), pace nothing;
 * a rate below it gets a tight profile. */
static void
test_ud_ah_create(void)
{
	struct ut_link l;
	struct uroce_ah ah;

	if (!UT_CHECK_EQ(link_up(&l, 17), 0))
		return;
	ut_link_ah(&l, 0, 0, &ah);
	ah.attr.static_rate = 1;		/* reserved */
	UT_CHECK_EQ(uroce_ah_static_rate(&l.node[0].env, &ah), -EINVAL);
	ah.attr.static_rate = IBV_RATE_1200_GBPS + 1;
	UT_CHECK_EQ(uroce_ah_static_rate(&l.node[0].env, &ah), -EINVAL);
	ah.attr.static_rate = IBV_RATE_MAX;
	UT_CHECK_EQ(uroce_ah_static_rate(&l.node[0].env, &ah), 0);
	UT_CHECK(!ah.paced);
	ah.attr.static_rate = IBV_RATE_200_GBPS;
	UT_CHECK_EQ(uroce_ah_static_rate(&l.node[0].env, &ah), 0);
	UT_CHECK(!ah.paced);
	ah.attr.static_rate = IBV_RATE_5_GBPS;
	UT_CHECK_EQ(uroce_ah_static_rate(&l.node[0].env, &ah), 0);
	UT_CHECK(ah.paced);
	UT_CHECK(ah.id != 0);
	UT_CHECK_EQ(ah.pace_prof.rate_kbps, 5000000);
	UT_CHECK(ah.pace_prof.burst_bytes < 100000);
	ut_link_fini(&l);
}

/* One UD QP, datagrams round robin to an AH at 2.5 Gb/s, one at 10 Gb/s
 * and one at the port's rate: each paced AH's frames conform to its own
 * bucket, the slowest is exactly on its rate (it holds the head of the
 * line), and the datagrams to the unpaced AH make no AH wait. With
 * @qp_kbps the QP's own limit, below the AHs', is what holds them all. */
static void
test_ud_ah_rates(uint32_t qp_kbps)
{
	static const uint8_t rates[] = {
		IBV_RATE_2_5_GBPS, IBV_RATE_10_GBPS, IBV_RATE_MAX,
	};
	struct ibv_qp_rate_limit_attr rl = { qp_kbps, 16384, 0, 0 };
	struct ud_fix *f = ud_fix_new(18, rates, RTE_DIM(rates));
	struct frame_log *all = calloc(1, sizeof(*all));
	uint64_t t0, waits;
	int64_t left;
	unsigned int i, j;

	if (f == NULL || !UT_CHECK(all != NULL))
		goto out;
	/* Unpaced alone first: no AH waits. */
	f->logs.n = 3;
	for (i = 0; i < 40; i++) {
		f->posted = 2 + 3 * i;	/* the AH at the port's rate */
		UT_CHECK_EQ(ud_post(f, 1), 0);
	}
	f->posted = 40;
	UT_CHECK(ut_link_run(&f->l, ud_all_sent, f, ut_link_us(1000000),
			     2000000));
	UT_CHECK_EQ(f->logs.fl[2]->n, 40);
	UT_CHECK_EQ(f->qa->stats.pace_ah_waits, 0);
	ut_link_settle(&f->l, ut_link_us(100000));
	for (i = 0; i < 3; i++)
		f->logs.fl[i]->n = 0;
	f->posted = 0;
	/* The QP's limit from here: a full bucket (an idle QP's would hold
	 * only its batch, qp_pace.c Lost rate). */
	if (qp_kbps != 0)
		UT_CHECK_EQ(uroce_qp_set_rate_limit(f->qa, &rl, f->l.now), 0);
	t0 = f->l.now;
	UT_CHECK_EQ(ud_post(f, 240), 0);
	UT_CHECK(ut_link_run(&f->l, ud_all_sent, f, ut_link_us(1000000),
			     2000000));
	for (i = 0; i < 3; i++)
		UT_CHECK_EQ(f->logs.fl[i]->n, 80);
	waits = f->qa->stats.pace_ah_waits;
	if (qp_kbps == 0) {
		left = check_conform(f->logs.fl[0], 0, t0,
				     f->ah[0].pace_prof.burst_bytes,
				     &f->ah[0].pace_prof);
		UT_CHECK(left < (int64_t)f->ah[0].pace_prof.refill);
		check_conform(f->logs.fl[1], 0, t0,
			      f->ah[1].pace_prof.burst_bytes,
			      &f->ah[1].pace_prof);
		UT_CHECK(waits > 0);
	} else {
		/* Every frame, in order, against the QP's bucket. */
		for (i = 0; i < 3; i++)
			for (j = 0; j < 80; j++) {
				uint32_t k = all->n++;

				all->t[k] = f->logs.fl[i]->t[j];
				all->len[k] = f->logs.fl[i]->len[j];
			}
		/* Merge by time (stable: the tap logs in send order). */
		for (i = 1; i < all->n; i++)
			for (j = i; j > 0 && all->t[j - 1] > all->t[j]; j--) {
				RTE_SWAP(all->t[j - 1], all->t[j]);
				RTE_SWAP(all->len[j - 1], all->len[j]);
			}
		left = check_conform(all, 0, t0, f->qa->pace_prof.burst_bytes,
				     &f->qa->pace_prof);
		UT_CHECK(left < (int64_t)f->qa->pace_prof.refill);
		check_conform(f->logs.fl[0], 0, t0,
			      f->ah[0].pace_prof.burst_bytes,
			      &f->ah[0].pace_prof);
		UT_CHECK_EQ(f->qa->pace_prof.rate_kbps, qp_kbps);
	}
	UT_NOTE("UD AHs, QP limit %u kbit/s: %lu AH waits", qp_kbps,
		(unsigned long)waits);
out:
	free(all);
	ud_fix_free(f);
}

/* More paced AHs than a QP keeps buckets for: each AH is still held to
 * its rate (a bucket is reused only once full). */
static void
test_ud_ah_many(void)
{
	uint8_t rates[UD_AHS];
	struct ud_fix *f;
	uint64_t t0;
	unsigned int i;

	for (i = 0; i < UD_AHS; i++)
		rates[i] = i % 2 ? IBV_RATE_5_GBPS : IBV_RATE_2_5_GBPS;
	f = ud_fix_new(19, rates, UD_AHS);
	if (f == NULL)
		return;
	t0 = f->l.now;
	UT_CHECK_EQ(ud_post(f, 250), 0);
	UT_CHECK(ut_link_run(&f->l, ud_all_sent, f, ut_link_us(1000000),
			     2000000));
	for (i = 0; i < UD_AHS; i++) {
		UT_CHECK_EQ(f->logs.fl[i]->n, 25);
		check_conform(f->logs.fl[i], 0, t0,
			      f->ah[i].pace_prof.burst_bytes,
			      &f->ah[i].pace_prof);
	}
	UT_CHECK(f->qa->stats.pace_ah_waits > 0);
	ud_fix_free(f);
}

int
main(int argc, char **argv)
{
	(void)argc;
	if (ut_eal_start(argv[0]) < 0)
		return 1;
	test_verb_matrix();
	test_verb_invalid();
	test_batch_size();
	test_modify();
	test_write_stream(10000, 0, 0);		/* 10 Mbit/s */
	test_write_stream(1000000, 0, 0);	/* 1 Gbit/s */
	/* 40 Gbit/s, a burst of 150 us (50 us of batch): the default's
	 * 5 ms slack would take the whole MiB at once. */
	test_write_stream(40000000, 750000, 0);
	test_write_stream(300000, 4096, 0);	/* explicit burst */
	test_write_stream(300000, 0, 50);	/* loss: retransmissions */
	/* Rates whose slack is one packet (8,192 and 5,120 us): a wake-up
	 * may come late (3,096 and 1,560 us). */
	test_write_stream_delay(1000, 0, 0, true, 0);
	test_write_stream_delay(1600, 0, 0, true, 0);
	/* 10 ms late beyond that: the slack does not cover it. */
	test_write_stream_delay(1000, 0, 0, true, ut_link_us(10000));
	/* 300 us at 1 Gbit/s with a slack of 100 us (a burst of 7 packets
	 * and 12,500 B): many wake-ups, each losing some. */
	test_write_stream_delay(1000000, 7 * 1024 + 12500, 0, false,
				ut_link_us(300));
	test_lost_window();
	test_idle();
	test_idle_keeps();
	test_slow_no_timeout(false);
	test_slow_no_timeout(true);
	test_read_stream();
	test_read_turn();
	test_rate_change();
	test_two_fair();
	test_static_modify();
	test_static_stream();
	test_ud_ah_create();
	test_ud_ah_rates(0);
	test_ud_ah_rates(1000000);		/* the QP's 1 Gb/s, 16 KiB burst */
	test_ud_ah_many();
	test_raw_stream(10000, 0);		/* 10 Mbit/s, default burst */
	/* 100 Mbit/s: at 1 Gbit/s the default burst (5 ms, 625 kB) would
	 * take the whole 150 kB at once. */
	test_raw_stream(100000, 0);
	test_raw_stream(300000, 9000);		/* explicit burst */
	return ut_summary();
}
