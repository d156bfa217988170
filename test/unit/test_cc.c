/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Congestion control of RC QPs (lib/transport/qp_cc.c) over the in-memory
 * link on its fake clock:
 *  - clean, cc on: the data frames leave ECT(0), ACKs Not-ECT, no CNP,
 *    the counters stay 0 and the QP is not limited;
 *  - every frame towards B marked CE: B counts them and sends CNPs to A's
 *    QP (BECN, Not-ECT), at most one per CNP interval; A handles or
 *    ignores each, its rate falls below the line rate; the bytes arrive
 *    intact; then, with no marks, A's timers raise the rate back to the
 *    line rate, which releases it, and no CNP is sent;
 *  - cc off: frames leave Not-ECT, nothing is marked, no CNP;
 *  - CNPs handed to a QP directly: handled, ignored within the monitor
 *    period, dropped where there is no congestion control; the rate in
 *    force is the lower of the user's rate limit and DCQCN's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_test.h"
#include "uroce_test_eal.h"
#include "uroce_test_link.h"

#define BUF_LEN		(1u << 20)
#define MSG_LEN		16384u
#define LINE_KBPS	UINT64_C(10000000)	/* 10 Gbit/s */
#define QPN_A		0x10
#define QPN_B		0x20
#define ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

/* What the tap saw, by direction (0: A sends, 1: B sends). */
struct seen {
	unsigned int data[2], data_ect[2], ack[2], ack_not_ect[2];
	unsigned int cnp[2], cnp_ok[2];
	uint64_t min_rate;		/* A's lowest DCQCN rate seen, kbit/s */
	struct uroce_qp *qa;
};

struct rig {
	struct ut_link l;
	struct uroce_qp *qa, *qb;
	uint8_t *la, *rb;
	struct uroce_mr *mla, *mrb;
	struct seen seen;
};

static bool
tap(struct ut_link *l, int from, const struct uroce_pkt *pkt, void *ctx)
{
	struct seen *s = ctx;
	uint8_t ecn = uroce_pkt_ecn(pkt);
	uint64_t r;

	(void)l;
	if (pkt->op->kind == UROCE_OP_CNP) {
		s->cnp[from]++;
		s->cnp_ok[from] += pkt->bth.becn && ecn == UROCE_ECN_NOT_ECT &&
				   pkt->bth.dqpn == (from ? QPN_A : QPN_B) &&
				   pkt->payload_len == 0;
	} else if (pkt->op->kind == UROCE_OP_ACK) {
		s->ack[from]++;
		s->ack_not_ect[from] += ecn == UROCE_ECN_NOT_ECT;
	} else {
		s->data[from]++;
		s->data_ect[from] += ecn == UROCE_ECN_ECT0;
	}
	r = uroce_qp_cc_rate_kbps(s->qa);
	if (r != 0 && (s->min_rate == 0 || r < s->min_rate))
		s->min_rate = r;
	return true;
}

/* The defaults (config_cc.c) in cycles of the fake 2 GHz clock, a
 * 10 Gbit/s line; cnp_us: the CNP interval. */
static void
cc_env(struct uroce_qp_env *e, bool on, uint64_t cnp_us)
{
	struct uroce_dcqcn_params *p = &e->dcqcn;

	e->cc = on;
	memset(p, 0, sizeof(*p));
	p->line_kbps = LINE_KBPS;
	p->min_kbps = 1000;
	p->ai_kbps = 5000;
	p->hai_kbps = 50000;
	p->min_dec_fac = 50;
	p->threshold = 5;
	p->byte_reset = 32767;
	p->g = 1019;
	p->initial_alpha = 1023;
	p->time_reset = ut_link_us(300);
	p->alpha_period = ut_link_us(55);
	p->reduce_period = ut_link_us(4);
	e->cnp_interval = ut_link_us(cnp_us);
}

static int
rig_up(struct rig *r, bool cc, uint64_t cnp_us)
{
	struct ut_qp_opts o;
	int s;

	memset(r, 0, sizeof(*r));
	if (ut_link_init(&r->l, 7, IBV_MTU_1024) != 0)
		return -ENOMEM;
	for (s = 0; s < 2; s++) {
		r->l.node[s].env.lim.rate_limit_min = 1;
		r->l.node[s].env.lim.rate_limit_max = 100000000;
		cc_env(&r->l.node[s].env, cc, cnp_us);
	}
	ut_qp_opts_default(&o, IBV_QPT_RC);
	r->la = aligned_alloc(4096, BUF_LEN);
	r->rb = aligned_alloc(4096, BUF_LEN);
	if (r->la == NULL || r->rb == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < BUF_LEN; i++)
		r->la[i] = (uint8_t)(i * 13 + 5);
	memset(r->rb, 0, BUF_LEN);
	r->mla = ut_node_reg(&r->l.node[0], r->la, BUF_LEN, ACCESS_ALL);
	r->mrb = ut_node_reg(&r->l.node[1], r->rb, BUF_LEN, ACCESS_ALL);
	if (r->mla == NULL || r->mrb == NULL)
		return -EINVAL;
	if (ut_link_pair(&r->l, &o, QPN_A, QPN_B, &r->qa, &r->qb) != 0)
		return -EINVAL;
	r->seen.qa = r->qa;
	r->l.tap = tap;
	r->l.tap_ctx = &r->seen;
	return 0;
}

static void
rig_down(struct rig *r)
{
	ut_link_fini(&r->l);
	free(r->la);
	free(r->rb);
}

static bool
got_wc(struct ut_link *l, void *ctx)
{
	struct ibv_wc *wc = ctx;

	return uroce_cq_poll(l->node[0].scq, 1, wc) > 0;
}

/* The whole buffer A -> B in WRITEs of MSG_LEN, the last signaled;
 * true if it completed successfully. */
static bool
write_all(struct rig *r)
{
	struct ibv_wc wc;
	unsigned int i, n = BUF_LEN / MSG_LEN;

	for (i = 0; i < n; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)r->la + i * MSG_LEN,
			.length = MSG_LEN, .lkey = r->mla->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = i + 1 == n ? IBV_SEND_SIGNALED : 0,
		}, *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)r->rb + i * MSG_LEN;
		wr.wr.rdma.rkey = r->mrb->rkey;
		if (!UT_CHECK_EQ(uroce_qp_post_send(r->qa, &wr, &bad), 0))
			return false;
	}
	memset(&wc, 0, sizeof(wc));
	if (!UT_CHECK(ut_link_run(&r->l, got_wc, &wc, ut_link_us(10000000),
				  4000000)))
		return false;
	return UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS) &&
	       UT_CHECK_MEM(r->rb, r->la, BUF_LEN);
}

static void
test_clean(void)
{
	struct rig r;

	if (!UT_CHECK_EQ(rig_up(&r, true, 50), 0))
		goto out;
	UT_CHECK(r.qa->path.ect && r.qb->path.ect);
	if (!write_all(&r))
		goto out;
	UT_CHECK(r.seen.data[0] >= BUF_LEN / 1024);
	UT_CHECK_EQ(r.seen.data_ect[0], r.seen.data[0]);
	UT_CHECK(r.seen.ack[1] > 0);
	UT_CHECK_EQ(r.seen.ack_not_ect[1], r.seen.ack[1]);
	UT_CHECK_EQ(r.seen.cnp[0] + r.seen.cnp[1], 0);
	UT_CHECK_EQ(r.qb->stats.np_ecn_marked_roce_packets, 0);
	UT_CHECK_EQ(r.qb->stats.np_cnp_sent, 0);
	UT_CHECK_EQ(r.qa->stats.rp_cnp_handled + r.qa->stats.rp_cnp_ignored, 0);
	UT_CHECK_EQ(uroce_qp_cc_rate_kbps(r.qa), 0);
	UT_CHECK(!r.qa->pace_on);
out:
	rig_down(&r);
}

/* The link of the fake clock has no capacity limit: a QP sends its whole
 * window at once, before any CNP could come back. A user limit below the
 * line rate (9 Gbit/s, a 64 KiB burst) spreads the stream over time, as
 * a link would. */
static void
spread(struct rig *r)
{
	struct ibv_qp_rate_limit_attr rl = {
		.rate_limit = 9000000, .max_burst_sz = 65536,
	};

	UT_CHECK_EQ(uroce_qp_set_rate_limit(r->qa, &rl, r->l.now), 0);
}

/* Marks on every frame towards B, then none: the rate falls, then
 * recovers to the line rate. */
static void
test_marked(void)
{
	struct rig r;
	uint64_t t0, elapsed, cnps, last;
	unsigned int raises = 0, i;
	uint64_t rate, prev;

	if (!UT_CHECK_EQ(rig_up(&r, true, 50), 0))
		goto out;
	spread(&r);
	r.l.dir[1].f.ce = 1000000;
	t0 = r.l.now;
	if (!write_all(&r))
		goto out;
	elapsed = r.l.now - t0;
	cnps = r.qb->stats.np_cnp_sent;
	UT_NOTE("marked: %u data frames, %" PRIu64 " CNPs, %" PRIu64
		" handled, %" PRIu64 " ignored, lowest rate %" PRIu64
		" kbit/s, %" PRIu64 " us", r.seen.data[0], cnps,
		r.qa->stats.rp_cnp_handled, r.qa->stats.rp_cnp_ignored,
		r.seen.min_rate, elapsed / ut_link_us(1));
	/* Every data frame marked, and counted by B's QP. */
	UT_CHECK_EQ(r.l.dir[1].ce, r.seen.data[0]);
	UT_CHECK_EQ(r.qb->stats.np_ecn_marked_roce_packets, r.seen.data[0]);
	/* CNPs: some, each well formed and to A's QP, at most one per
	 * interval of the run's time. */
	UT_CHECK(cnps >= 2);
	UT_CHECK_EQ(r.seen.cnp[1], cnps);
	UT_CHECK_EQ(r.seen.cnp_ok[1], cnps);
	UT_CHECK_EQ(r.seen.cnp[0], 0);
	UT_CHECK(cnps <= 1 + elapsed / ut_link_us(50));
	UT_CHECK_EQ(r.qa->stats.rp_cnp_handled + r.qa->stats.rp_cnp_ignored,
		    cnps);
	UT_CHECK(r.qa->stats.rp_cnp_handled >= 2);
	/* The rate fell: half the line at the first CNP, lower after. */
	UT_CHECK(r.seen.min_rate > 0 && r.seen.min_rate < LINE_KBPS / 2);
	UT_CHECK(r.qa->pace_on);

	/* No more marks: the timer raises the rate, stage by stage, until
	 * it is back at the line rate and released. */
	r.l.dir[1].f.ce = 0;
	last = r.qb->stats.np_cnp_sent;
	prev = uroce_qp_cc_rate_kbps(r.qa);
	for (i = 0; i < 100000 && r.qa->cc_rp.active; i++) {
		if (!ut_link_advance(&r.l, UINT64_MAX))
			break;
		rate = uroce_qp_cc_rate_kbps(r.qa);
		if (rate == 0)
			break;
		UT_CHECK(rate >= prev);
		raises += rate > prev;
		prev = rate;
	}
	UT_NOTE("recovered after %u raises", raises);
	UT_CHECK(!r.qa->cc_rp.active);
	UT_CHECK_EQ(uroce_qp_cc_rate_kbps(r.qa), 0);
	UT_CHECK_EQ(r.qa->pace_prof.rate_kbps, 9000000);	/* the user's again */
	UT_CHECK(raises > 5);
	UT_CHECK_EQ(r.qb->stats.np_cnp_sent, last);
	/* And the stream still runs, unmarked, with no CNP. */
	memset(r.rb, 0, BUF_LEN);
	if (write_all(&r))
		UT_CHECK_EQ(r.qb->stats.np_cnp_sent, last);
out:
	rig_down(&r);
}

/* A CNP interval longer than the run: one CNP. */
static void
test_interval(void)
{
	struct rig r;

	if (!UT_CHECK_EQ(rig_up(&r, true, 100000000), 0))
		goto out;
	spread(&r);
	r.l.dir[1].f.ce = 1000000;
	if (!write_all(&r))
		goto out;
	UT_CHECK(r.qb->stats.np_ecn_marked_roce_packets > 100);
	UT_CHECK_EQ(r.qb->stats.np_cnp_sent, 1);
	UT_CHECK_EQ(r.seen.cnp[1], 1);
	UT_CHECK_EQ(r.qa->stats.rp_cnp_handled, 1);
out:
	rig_down(&r);
}

static void
test_off(void)
{
	struct rig r;

	if (!UT_CHECK_EQ(rig_up(&r, false, 50), 0))
		goto out;
	UT_CHECK(!r.qa->path.ect);
	r.l.dir[1].f.ce = 1000000;
	if (!write_all(&r))
		goto out;
	UT_CHECK_EQ(r.seen.data_ect[0], 0);
	UT_CHECK_EQ(r.l.dir[1].ce, 0);		/* Not-ECT: nothing to mark */
	UT_CHECK_EQ(r.seen.cnp[1], 0);
	UT_CHECK_EQ(r.qb->stats.np_ecn_marked_roce_packets, 0);
out:
	rig_down(&r);
}

/* Hand qp a CNP from its peer at the link's time. */
static void
give_cnp(struct rig *r, struct uroce_qp *qp, uint16_t pkey)
{
	static uint8_t frame[256];
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
	struct uroce_l2l3 p = r->qb->path;
	struct uroce_txb txb;
	struct uroce_pkt pkt;
	uint32_t n;

	memset(&ext, 0, sizeof(ext));
	uroce_wire_cnp_bth(&bth, qp->qpn, pkey);
	n = uroce_wire_build(frame, sizeof(frame), &p, &bth, &ext, NULL, 0);
	if (!UT_CHECK_EQ(uroce_wire_parse(frame, n, 0, &pkt), UROCE_WIRE_OK))
		return;
	ut_txb_init(&txb);
	uroce_qp_rx(qp, &pkt, NULL, r->l.now, &txb);
	UT_CHECK_EQ(txb.n, 0);		/* a CNP is answered by nothing */
}

static void
test_direct(void)
{
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = 1000000 };
	struct rig r;
	uint64_t drops;

	if (!UT_CHECK_EQ(rig_up(&r, true, 50), 0))
		goto out;
	/* A user limit of 1 Gbit/s, below the first cut (5 Gbit/s). */
	UT_CHECK_EQ(uroce_qp_set_rate_limit(r.qa, &rl, r.l.now), 0);
	give_cnp(&r, r.qa, 0xffff);
	UT_CHECK_EQ(r.qa->stats.rp_cnp_handled, 1);
	UT_CHECK_EQ(uroce_qp_cc_rate_kbps(r.qa), 5004882); /* 10^7 x 1025/2048 */
	UT_CHECK_EQ(r.qa->pace_prof.rate_kbps, 1000000);
	/* Within rate_reduce_monitor_period: ignored. */
	r.l.now += ut_link_us(3);
	give_cnp(&r, r.qa, 0xffff);
	UT_CHECK_EQ(r.qa->stats.rp_cnp_ignored, 1);
	UT_CHECK_EQ(uroce_qp_cc_rate_kbps(r.qa), 5004882);
	/* Cuts until DCQCN's rate is below the user's: it is in force. */
	while (uroce_qp_cc_rate_kbps(r.qa) >= 1000000) {
		r.l.now += ut_link_us(5);
		give_cnp(&r, r.qa, 0xffff);
	}
	UT_CHECK(r.qa->stats.rp_cnp_handled >= 4);
	UT_CHECK_EQ(r.qa->pace_prof.rate_kbps, uroce_qp_cc_rate_kbps(r.qa));
	UT_CHECK_EQ(r.qa->attr.rate_limit, 1000000);	/* the user's, kept */
	/* A bad P_Key: dropped, counted. */
	drops = r.qa->stats.drop_pkey;
	give_cnp(&r, r.qa, 0x1234);
	UT_CHECK_EQ(r.qa->stats.drop_pkey, drops + 1);
	/* RESET: DCQCN starts over, the user's profile is back. */
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

		UT_CHECK_EQ(uroce_qp_modify(r.qa, &a, IBV_QP_STATE, r.l.now), 0);
		UT_CHECK_EQ(uroce_qp_cc_rate_kbps(r.qa), 0);
	}
out:
	rig_down(&r);
}

/* A CNP to a QP whose port has no congestion control: dropped. */
static void
test_direct_off(void)
{
	struct rig r;

	if (!UT_CHECK_EQ(rig_up(&r, false, 50), 0))
		goto out;
	give_cnp(&r, r.qa, 0xffff);
	UT_CHECK_EQ(r.qa->stats.rp_cnp_handled + r.qa->stats.rp_cnp_ignored, 0);
	UT_CHECK_EQ(r.qa->stats.drop_opcode, 1);
	UT_CHECK_EQ(uroce_qp_cc_rate_kbps(r.qa), 0);
	UT_CHECK(!r.qa->pace_on);
out:
	rig_down(&r);
}

int
main(int argc, char **argv)
{
	(void)argc;
	if (ut_eal_start(argv[0]) < 0)
		return 1;
	test_clean();
	test_marked();
	test_interval();
	test_off();
	test_direct();
	test_direct_off();
	return ut_summary();
}
