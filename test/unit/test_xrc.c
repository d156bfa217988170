/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * XRC over the in-memory link (IBTA Annex A14), on a fake clock:
 *  - an XRC_SEND QP on A sends to an XRC_RECV QP on B, each message into
 *    the XRC SRQ its WR names (two SRQs of one domain, alternately): every
 *    frame is an XRC opcode, requests carry the XRCETH naming the SRQ,
 *    responses do not; messages of 0 B to 4 MTUs land byte-exact in the
 *    named SRQ's WQEs, complete on that SRQ's CQ with the target QP's
 *    number; with 1% drop and 1% reorder as well;
 *  - RDMA WRITE and READ through the target use the PD of the SRQ named
 *    (an R_Key of another PD is a remote access error);
 *  - an XRCETH naming an SRQ of another domain, a basic SRQ or no SRQ at
 *    all: NAK Invalid Request (REM_INV_REQ_ERR at the sender, the target
 *    in ERR), no WQE taken from any SRQ.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_test.h"
#include "uroce_test_eal.h"
#include "uroce_test_link.h"
#include "uroce_srq.h"

#define NSRQ		4		/* x0, x1 (domain X), y (domain Y), basic */
#define SRQ_WR		64
#define MSG_MAX		4096
#define MEM_LEN		(SRQ_WR * MSG_MAX)

static struct ut_link *L;
static int dom_x, dom_y;		/* their addresses are the domains */
static struct uroce_srq *srqs[NSRQ];
static uint8_t src[MEM_LEN], dst[NSRQ][MEM_LEN];
static struct uroce_mr *mr_src, *mr_dst, *mr_other;
static uint8_t other[4096];
static int other_pd;

/* The stub engine's SRQ table: numbers 1 .. NSRQ. */
static struct uroce_srq *
lookup(void *ctx, uint32_t srqn)
{
	(void)ctx;
	return srqn >= 1 && srqn <= NSRQ ? srqs[srqn - 1] : NULL;
}

static int
srq_new(unsigned int i, enum ibv_srq_type type, const void *xrcd)
{
	struct ut_node *b = &L->node[1];
	struct uroce_srq_init init = {
		.type = type, .pd = &b->pd, .xrcd = xrcd,
		.cq = type == IBV_SRQT_XRC ? b->rcq : NULL,
		.max_wr = SRQ_WR, .max_sge = 2, .srqn = i + 1,
	};

	return uroce_srq_create(&b->env, &init, &srqs[i]);
}

/* A (XRC_SEND, qpn 0x10) and B (XRC_RECV in domain X, qpn 0x20). */
static int
pair(struct uroce_qp **s, struct uroce_qp **t)
{
	struct ut_qp_opts o;
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_XRC_RECV };
	struct ut_node *b = &L->node[1];
	int ret;

	ut_qp_opts_default(&o, IBV_QPT_XRC_SEND);
	ret = ut_node_qp(&L->node[0], &o, 0x10, s);
	if (ret == 0)
		ret = uroce_qp_create(&b->env, NULL, NULL, NULL, &init, 0x20, t);
	if (ret != 0)
		return ret;
	(*t)->xrcd = &dom_x;
	b->qps[b->nqp++] = *t;
	ret = ut_qp_up(L, 0, *s, 0x20, &o);
	o.type = IBV_QPT_XRC_RECV;
	return ret ? ret : ut_qp_up(L, 1, *t, 0x10, &o);
}

static void
unpair(struct uroce_qp *s, struct uroce_qp *t)
{
	ut_link_flush_wire(L);
	ut_node_forget_qp(&L->node[0], s);
	ut_node_forget_qp(&L->node[1], t);
	uroce_qp_destroy(s);
	uroce_qp_destroy(t);
}

/* The tap: every frame an XRC opcode; requests name an SRQ, responses do
 * not carry an XRCETH (IBTA A14.3). */
struct tap_seen {
	unsigned int req, resp, bad;
	uint32_t last_srqn;
};

static bool
tap(struct ut_link *l, int from, const struct uroce_pkt *pkt, void *ctx)
{
	struct tap_seen *t = ctx;
	struct uroce_ext_fields ext;

	(void)l;
	if (pkt->op->transport != UROCE_TR_XRC) {
		t->bad++;
		return true;
	}
	uroce_wire_ext_get(pkt, &ext);
	if (from == 0 && (pkt->op->flags & UROCE_OPF_REQ)) {
		t->req++;
		t->last_srqn = ext.xrc_srqn;
	} else if (from == 1 && (pkt->op->flags & UROCE_OPF_RESP)) {
		t->resp++;
	} else {
		t->bad++;
	}
	return true;
}

static void
post_srq(struct uroce_srq *srq, uint8_t *mem, uint64_t id, uint32_t n)
{
	struct ibv_sge sge[2];
	struct ibv_recv_wr wr = { .sg_list = sge, .num_sge = 2 }, *bad;
	uint32_t i;

	for (i = 0; i < n; i++) {
		/* Two SGEs of a slot: the message crosses from one to the next. */
		sge[0] = (struct ibv_sge){ (uintptr_t)mem + i * MSG_MAX, 1000,
					   mr_dst->lkey };
		sge[1] = (struct ibv_sge){ (uintptr_t)mem + i * MSG_MAX + 1000,
					   MSG_MAX - 1000, mr_dst->lkey };
		wr.wr_id = id + i;
		UT_CHECK_EQ(uroce_srq_post_recv(srq, &wr, &bad), 0);
	}
}

static int
post_send(struct uroce_qp *s, uint64_t id, enum ibv_wr_opcode op,
	  uint32_t off, uint32_t len, uint32_t srqn, uint64_t raddr,
	  uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)src + off, len, mr_src->lkey };
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = rte_cpu_to_be_32((uint32_t)id);
	wr.qp_type.xrc.remote_srqn = srqn;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return uroce_qp_post_send(s, &wr, &bad);
}

/* n SENDs alternately to x0 and x1, lengths 0 .. 4 MTUs, under faults. */
static void
test_send(const struct ut_fault *f, uint32_t n)
{
	struct uroce_qp *s = NULL, *t = NULL;
	struct tap_seen seen = { 0 };
	uint32_t len[SRQ_WR], got[2] = { 0, 0 }, i, k, c;
	struct ibv_wc wc;

	if (!UT_CHECK_EQ(pair(&s, &t), 0))
		return;
	L->dir[0].f = *f;
	L->dir[1].f = *f;
	L->tap = tap;
	L->tap_ctx = &seen;
	memset(dst, 0, sizeof(dst));
	post_srq(srqs[0], dst[0], 1000, n);
	post_srq(srqs[1], dst[1], 2000, n);
	for (i = 0; i < n; i++) {
		len[i] = (uint32_t)(ut_rand() % (MSG_MAX + 1));
		UT_CHECK_EQ(post_send(s, i, i % 3 ? IBV_WR_SEND : IBV_WR_SEND_WITH_IMM,
				      i * MSG_MAX, len[i], 1 + i % 2, 0, 0), 0);
	}
	ut_link_settle(L, UT_LINK_HZ);
	for (i = 0; i < n; i++) {
		if (!UT_CHECK_EQ(uroce_cq_poll(s->send_cq, 1, &wc), 1))
			break;
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	}
	/* Completions of both SRQs on their CQ, each SRQ's in its order. */
	for (c = 0; c < n; c++) {
		if (!UT_CHECK_EQ(uroce_cq_poll(L->node[1].rcq, 1, &wc), 1))
			break;
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wc.opcode, IBV_WC_RECV);
		UT_CHECK_EQ(wc.qp_num, 0x20);
		UT_CHECK_EQ(wc.src_qp, 0x10);
		k = wc.wr_id >= 2000;
		UT_CHECK_EQ(wc.wr_id, (k ? 2000 : 1000) + got[k]);
		i = got[k]++ * 2 + k;	/* the message that went there */
		UT_CHECK_EQ(wc.byte_len, len[i]);
		UT_CHECK_EQ(!!(wc.wc_flags & IBV_WC_WITH_IMM), i % 3 == 0);
		UT_CHECK_MEM(dst[k] + (i / 2) * MSG_MAX, src + i * MSG_MAX, len[i]);
		UT_NOTE("message %u (%u bytes) to SRQ %u", i, len[i], k + 1);
	}
	UT_CHECK_EQ(uroce_srq_count(srqs[0]) + uroce_srq_count(srqs[1]),
		    2 * n - got[0] - got[1]);
	UT_CHECK(seen.req > 0 && seen.resp > 0);
	UT_CHECK_EQ(seen.bad, 0);
	UT_CHECK_EQ(t->state, IBV_QPS_RTS);
	L->tap = NULL;
	memset(&L->dir[0].f, 0, sizeof(L->dir[0].f));
	memset(&L->dir[1].f, 0, sizeof(L->dir[1].f));
	/* Drain what the SRQs still hold for the next test. */
	unpair(s, t);
	while (uroce_srq_take(srqs[0], (struct uroce_recv_wqe *)(void *)dst[2]) ||
	       uroce_srq_take(srqs[1], (struct uroce_recv_wqe *)(void *)dst[2]))
		;
}

/* WRITE and READ: the R_Key checks use the named SRQ's PD. */
static void
test_rdma(void)
{
	struct uroce_qp *s = NULL, *t = NULL;
	struct ibv_wc wc;
	uint32_t i;

	if (!UT_CHECK_EQ(pair(&s, &t), 0))
		return;
	for (i = 0; i < 6000; i++)
		src[i] = (uint8_t)(i * 31 + 1);
	memset(dst[3], 0, 8192);
	UT_CHECK_EQ(post_send(s, 1, IBV_WR_RDMA_WRITE, 0, 6000, 1,
			      (uintptr_t)dst[3], mr_dst->rkey), 0);
	UT_CHECK_EQ(post_send(s, 2, IBV_WR_RDMA_READ, 8192, 6000, 2,
			      (uintptr_t)dst[3], mr_dst->rkey), 0);
	ut_link_settle(L, UT_LINK_HZ);
	UT_CHECK_EQ(uroce_cq_poll(s->send_cq, 1, &wc), 1);
	UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	UT_CHECK_EQ(uroce_cq_poll(s->send_cq, 1, &wc), 1);
	UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	UT_CHECK_MEM(dst[3], src, 6000);
	UT_CHECK_MEM(src + 8192, src, 6000);
	/* A key of another PD than the SRQ's: remote access error. */
	UT_CHECK_EQ(post_send(s, 3, IBV_WR_RDMA_WRITE, 0, 100, 1,
			      (uintptr_t)other, mr_other->rkey), 0);
	ut_link_settle(L, UT_LINK_HZ);
	UT_CHECK_EQ(uroce_cq_poll(s->send_cq, 1, &wc), 1);
	UT_CHECK_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
	UT_CHECK_EQ(t->state, IBV_QPS_ERR);
	unpair(s, t);
}

/* An SRQ the target may not use: NAK Invalid Request, nothing taken. */
static void
test_bad_srq(uint32_t srqn)
{
	struct uroce_qp *s = NULL, *t = NULL;
	uint32_t before[NSRQ], i;
	struct ibv_wc wc;

	if (!UT_CHECK_EQ(pair(&s, &t), 0))
		return;
	for (i = 0; i < NSRQ; i++) {
		post_srq(srqs[i], dst[i], 1, 1);
		before[i] = uroce_srq_count(srqs[i]);
	}
	UT_CHECK_EQ(post_send(s, 7, IBV_WR_SEND, 0, 64, srqn, 0, 0), 0);
	ut_link_settle(L, UT_LINK_HZ);
	UT_CHECK_EQ(uroce_cq_poll(s->send_cq, 1, &wc), 1);
	UT_CHECK_EQ(wc.wr_id, 7);
	UT_CHECK_EQ(wc.status, IBV_WC_REM_INV_REQ_ERR);
	UT_CHECK_EQ(t->state, IBV_QPS_ERR);
	UT_CHECK_EQ(t->stats.naks_tx[1], 1);	/* NAK code 1: Invalid Request */
	UT_CHECK_EQ(uroce_cq_poll(L->node[1].rcq, 1, &wc), 0);
	for (i = 0; i < NSRQ; i++) {
		UT_CHECK_EQ(uroce_srq_count(srqs[i]), before[i]);
		while (uroce_srq_take(srqs[i], (struct uroce_recv_wqe *)(void *)dst[3]))
			;
	}
	UT_NOTE("XRCETH SRQ %u", srqn);
	unpair(s, t);
}

int
main(int argc, char **argv)
{
	static const struct ut_fault none = { 0 };
	static const struct ut_fault lossy = { .drop = 10000, .reorder = 10000 };
	unsigned int i;

	(void)argc;
	ut_srand(5);
	if (ut_eal_start(argv[0]) < 0)
		return 1;
	L = calloc(1, sizeof(*L));
	if (L == NULL || ut_link_init(L, 91, IBV_MTU_1024) != 0)
		return 1;
	L->node[1].ops.srq_lookup = lookup;
	mr_src = ut_node_reg(&L->node[0], src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
	mr_dst = ut_node_reg(&L->node[1], dst, sizeof(dst), IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!UT_CHECK(mr_src && mr_dst) ||
	    !UT_CHECK_EQ(uroce_mr_reg(L->node[1].mrs, &other_pd, other,
				      sizeof(other), (uintptr_t)other,
				      IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_WRITE, &mr_other), 0))
		return ut_summary();
	/* An XRC SRQ needs a domain and a CQ. */
	{
		struct uroce_srq_init bad = {
			.type = IBV_SRQT_XRC, .pd = &L->node[1].pd, .max_wr = 4,
			.max_sge = 1, .srqn = 9, .xrcd = &dom_x,
		};
		struct uroce_srq *srq = NULL;

		UT_CHECK_EQ(uroce_srq_create(&L->node[1].env, &bad, &srq), -EINVAL);
		bad.cq = L->node[1].rcq;
		bad.xrcd = NULL;
		UT_CHECK_EQ(uroce_srq_create(&L->node[1].env, &bad, &srq), -EINVAL);
	}
	if (!UT_CHECK_EQ(srq_new(0, IBV_SRQT_XRC, &dom_x), 0) ||
	    !UT_CHECK_EQ(srq_new(1, IBV_SRQT_XRC, &dom_x), 0) ||
	    !UT_CHECK_EQ(srq_new(2, IBV_SRQT_XRC, &dom_y), 0) ||
	    !UT_CHECK_EQ(srq_new(3, IBV_SRQT_BASIC, NULL), 0))
		return ut_summary();
	for (i = 0; i < MEM_LEN; i++)
		src[i] = (uint8_t)ut_rand();
	test_send(&none, 40);
	UT_NOTE("send");
	test_send(&lossy, 60);
	UT_NOTE("send, lossy");
	test_rdma();
	UT_NOTE("rdma");
	test_bad_srq(3);	/* domain Y */
	test_bad_srq(4);	/* a basic SRQ */
	test_bad_srq(77);	/* none */
	for (i = 0; i < NSRQ; i++)
		uroce_srq_destroy(srqs[i]);
	ut_link_fini(L);
	free(L);
	return ut_summary();
}
