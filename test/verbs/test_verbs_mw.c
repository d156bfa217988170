/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Memory windows through our libibverbs.so.1, uroce0 (A, the requester)
 * and uroce1 (B, whose memory the windows expose), joined by a ringlink:
 *  - the device advertises windows; ibv_alloc_mw of an unknown type is
 *    EINVAL; ibv_dealloc_mw;
 *  - type 1 through ibv_bind_mw(): IBV_WC_BIND_MW, a new mw->rkey, WRITE
 *    and READ through the window byte-exact, ibv_dereg_mr EBUSY while it is
 *    bound, an access past its range IBV_WC_REM_ACCESS_ERR;
 *  - type 2 through IBV_WR_BIND_MW: an access through another QP is
 *    IBV_WC_REM_ACCESS_ERR; SEND_WITH_INV invalidates it (the receive has
 *    IBV_WC_WITH_INV and the key), after which the key is refused;
 *  - LOCAL_INV, then the key refused; the ibv_wr_* builders; a bind behind
 *    a WRITE in one list completes after it; a bind to an
 *    MR without IBV_ACCESS_MW_BIND completes IBV_WC_MW_BIND_ERR.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "uroce_test.h"
#include "uroce_test_verbs.h"

#define LEN	4096
#define QP_ACC	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ)
#define QPX_OPS	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND | \
		 IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV | \
		 IBV_QP_EX_WITH_SEND_WITH_INV)

static struct ibv_context *ca, *cb;
static struct ibv_pd *pda, *pdb;
static struct ibv_cq *cqa, *cqb;
static struct ibv_mr *mra, *mrb;
static uint8_t bufa[LEN] __attribute__((aligned(4096)));
static uint8_t bufb[LEN] __attribute__((aligned(4096)));

struct pair {
	struct ibv_qp *a, *b;
};

static struct ibv_qp *
qp_new(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq, bool ex)
{
	struct ibv_qp_init_attr_ex x;

	memset(&x, 0, sizeof(x));
	x.qp_type = IBV_QPT_RC;
	x.send_cq = cq;
	x.recv_cq = cq;
	x.cap.max_send_wr = 16;
	x.cap.max_recv_wr = 16;
	x.cap.max_send_sge = 1;
	x.cap.max_recv_sge = 1;
	x.comp_mask = IBV_QP_INIT_ATTR_PD;
	x.pd = pd;
	if (ex) {
		x.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		x.send_ops_flags = QPX_OPS;
	}
	return ibv_create_qp_ex(ctx, &x);
}

static bool
pair_new(struct pair *p, bool ex)
{
	p->a = qp_new(ca, pda, cqa, ex);
	p->b = qp_new(cb, pdb, cqb, ex);
	if (!UT_CHECK(p->a != NULL && p->b != NULL))
		return false;
	ut_verbs_rc_connect_ex(p->a, cb, p->b->qp_num, 100, 1, 1, QP_ACC);
	ut_verbs_rc_connect_ex(p->b, ca, p->a->qp_num, 100, 1, 1, QP_ACC);
	return true;
}

static void
pair_free(struct pair *p)
{
	UT_CHECK_EQ(ibv_destroy_qp(p->a), 0);
	UT_CHECK_EQ(ibv_destroy_qp(p->b), 0);
}

/* One completion of cq (a 10 s guard against a hang, not a threshold). */
static bool
poll1(struct ibv_cq *cq, struct ibv_wc *wc)
{
	time_t end = time(NULL) + 10;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n != 0)
			return UT_CHECK_EQ(n, 1);
	} while (time(NULL) < end);
	return UT_CHECK(!"no completion");
}

static enum ibv_wc_status
wait_status(struct ibv_cq *cq, enum ibv_wc_opcode *op)
{
	struct ibv_wc wc;

	if (!poll1(cq, &wc))
		return IBV_WC_GENERAL_ERR;
	if (op != NULL)
		*op = wc.opcode;
	return wc.status;
}

/* A -> B RDMA op of len bytes at remote va through rkey: its status. */
static enum ibv_wc_status
rdma(struct ibv_qp *qa, enum ibv_wr_opcode op, uint32_t rkey, uint64_t va,
     uint32_t off, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)bufa + off, .length = len, .lkey = mra->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.rdma.remote_addr = va;
	wr.wr.rdma.rkey = rkey;
	if (!UT_CHECK_EQ(ibv_post_send(qa, &wr, &bad), 0))
		return IBV_WC_GENERAL_ERR;
	return wait_status(cqa, NULL);
}

static enum ibv_wc_status
bind2(struct ibv_qp *qb, struct ibv_mw *mw, uint32_t key, struct ibv_mr *mr,
      uint64_t addr, uint64_t len, unsigned int acc, enum ibv_wc_opcode *op)
{
	struct ibv_send_wr wr = {
		.wr_id = 2, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = key;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = acc;
	if (!UT_CHECK_EQ(ibv_post_send(qb, &wr, &bad), 0))
		return IBV_WC_GENERAL_ERR;
	return wait_status(cqb, op);
}

static void
test_caps(void)
{
	struct ibv_device_attr a;
	struct ibv_mw *mw;

	UT_CHECK_EQ(ibv_query_device(cb, &a), 0);
	UT_CHECK(a.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
	UT_CHECK(a.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	UT_CHECK(a.max_mw > 0);
	errno = 0;
	UT_CHECK(ibv_alloc_mw(pdb, (enum ibv_mw_type)3) == NULL);
	UT_CHECK_EQ(errno, EINVAL);
	mw = ibv_alloc_mw(pdb, IBV_MW_TYPE_1);
	if (UT_CHECK(mw != NULL)) {
		UT_CHECK_EQ(mw->type, IBV_MW_TYPE_1);
		UT_CHECK(mw->pd == pdb);
		/* a PD with a window is busy */
		UT_CHECK_EQ(ibv_dealloc_pd(pdb), EBUSY);
		UT_CHECK_EQ(ibv_dealloc_mw(mw), 0);
	}
}

static void
test_type1(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(pdb, IBV_MW_TYPE_1);
	struct ibv_mw_bind mb = { .wr_id = 7, .send_flags = IBV_SEND_SIGNALED };
	uint64_t base = (uintptr_t)bufb + 256;
	enum ibv_wc_opcode op = 0;
	struct pair p;
	uint32_t k0;
	int i;

	if (!UT_CHECK(mw != NULL) || !pair_new(&p, false))
		return;
	k0 = mw->rkey;
	mb.bind_info.mr = mrb;
	mb.bind_info.addr = base;
	mb.bind_info.length = 1024;
	mb.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ;
	UT_CHECK_EQ(ibv_bind_mw(p.b, mw, &mb), 0);
	UT_CHECK(mw->rkey != k0);
	UT_CHECK_EQ(wait_status(cqb, &op), IBV_WC_SUCCESS);
	UT_CHECK_EQ(op, IBV_WC_BIND_MW);
	for (i = 0; i < 512; i++)
		bufa[i] = (uint8_t)(i * 7 + 1);
	memset(bufb, 0, LEN);
	UT_CHECK_EQ(rdma(p.a, IBV_WR_RDMA_WRITE, mw->rkey, base + 64, 0, 512),
		    IBV_WC_SUCCESS);
	UT_CHECK_MEM(bufb + 256 + 64, bufa, 512);
	UT_CHECK_EQ(rdma(p.a, IBV_WR_RDMA_READ, mw->rkey, base + 64, 1024, 512),
		    IBV_WC_SUCCESS);
	UT_CHECK_MEM(bufa + 1024, bufa, 512);
	UT_CHECK_EQ(ibv_dereg_mr(mrb), EBUSY);
	/* past the window's end, inside the MR */
	UT_CHECK_EQ(rdma(p.a, IBV_WR_RDMA_WRITE, mw->rkey, base + 1000, 0, 64),
		    IBV_WC_REM_ACCESS_ERR);
	pair_free(&p);
	UT_CHECK_EQ(ibv_dealloc_mw(mw), 0);
}

static void
test_type2_inv(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(pdb, IBV_MW_TYPE_2);
	struct ibv_sge rs = { (uintptr_t)bufb + 2048, 64, 0 };
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = {
		.wr_id = 3, .opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED,
	}, *sbad;
	uint64_t base = (uintptr_t)bufb;
	enum ibv_wc_opcode op = 0;
	struct pair p, q;
	struct ibv_wc wc;
	uint32_t key;

	if (!UT_CHECK(mw != NULL) || !pair_new(&p, false) || !pair_new(&q, false))
		return;
	rs.lkey = mrb->lkey;
	key = ibv_inc_rkey(mw->rkey);
	UT_CHECK_EQ(bind2(p.b, mw, key, mrb, base, 1024, IBV_ACCESS_REMOTE_WRITE,
			  &op), IBV_WC_SUCCESS);
	UT_CHECK_EQ(op, IBV_WC_BIND_MW);
	memset(bufa, 0xab, 64);
	UT_CHECK_EQ(rdma(p.a, IBV_WR_RDMA_WRITE, key, base, 0, 64),
		    IBV_WC_SUCCESS);
	UT_CHECK_MEM(bufb, bufa, 64);
	/* type 2B: not through another QP */
	UT_CHECK_EQ(rdma(q.a, IBV_WR_RDMA_WRITE, key, base, 0, 64),
		    IBV_WC_REM_ACCESS_ERR);
	/* remote invalidation */
	UT_CHECK_EQ(ibv_post_recv(p.b, &rwr, &rbad), 0);
	swr.invalidate_rkey = key;
	UT_CHECK_EQ(ibv_post_send(p.a, &swr, &sbad), 0);
	UT_CHECK_EQ(wait_status(cqa, &op), IBV_WC_SUCCESS);
	UT_CHECK_EQ(op, IBV_WC_SEND);
	if (poll1(cqb, &wc)) {
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wc.opcode, IBV_WC_RECV);
		UT_CHECK(wc.wc_flags & IBV_WC_WITH_INV);
		UT_CHECK_EQ(wc.invalidated_rkey, key);
	}
	UT_CHECK_EQ(rdma(p.a, IBV_WR_RDMA_WRITE, key, base, 0, 64),
		    IBV_WC_REM_ACCESS_ERR);
	pair_free(&p);
	pair_free(&q);
	UT_CHECK_EQ(ibv_dealloc_mw(mw), 0);
}

static void
test_local_inv_qpx(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(pdb, IBV_MW_TYPE_2);
	struct ibv_mw_bind_info bi = {
		.mr = mrb, .addr = (uintptr_t)bufb, .length = 256,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_qp_ex *x;
	enum ibv_wc_opcode op = 0;
	struct pair p;
	uint32_t key;

	if (!UT_CHECK(mw != NULL) || !pair_new(&p, true))
		return;
	x = ibv_qp_to_qp_ex(p.b);
	key = ibv_inc_rkey(mw->rkey);
	ibv_wr_start(x);
	x->wr_id = 4;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x, mw, key, &bi);
	UT_CHECK_EQ(ibv_wr_complete(x), 0);
	UT_CHECK_EQ(wait_status(cqb, &op), IBV_WC_SUCCESS);
	UT_CHECK_EQ(op, IBV_WC_BIND_MW);
	UT_CHECK_EQ(rdma(p.a, IBV_WR_RDMA_WRITE, key, (uintptr_t)bufb, 0, 16),
		    IBV_WC_SUCCESS);
	ibv_wr_start(x);
	ibv_wr_local_inv(x, key);
	UT_CHECK_EQ(ibv_wr_complete(x), 0);
	UT_CHECK_EQ(wait_status(cqb, &op), IBV_WC_SUCCESS);
	UT_CHECK_EQ(op, IBV_WC_LOCAL_INV);
	UT_CHECK_EQ(rdma(p.a, IBV_WR_RDMA_WRITE, key, (uintptr_t)bufb, 0, 16),
		    IBV_WC_REM_ACCESS_ERR);
	pair_free(&p);
	UT_CHECK_EQ(ibv_dealloc_mw(mw), 0);
}

/* A bind posted right behind a WRITE in one list runs once the WRITE has
 * completed: both complete, in order. */
static void
test_bind_after_write(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(pdb, IBV_MW_TYPE_2);
	struct ibv_sge sge = { (uintptr_t)bufb + 512, 256, 0 };
	struct ibv_send_wr w[2], *bad;
	struct ibv_wc wc;
	struct pair p;

	if (!UT_CHECK(mw != NULL) || !pair_new(&p, false))
		return;
	sge.lkey = mrb->lkey;
	memset(w, 0, sizeof(w));
	w[0].wr_id = 10;
	w[0].opcode = IBV_WR_RDMA_WRITE;
	w[0].send_flags = IBV_SEND_SIGNALED;
	w[0].sg_list = &sge;
	w[0].num_sge = 1;
	w[0].wr.rdma.remote_addr = (uintptr_t)bufa + 2048;
	w[0].wr.rdma.rkey = mra->rkey;
	w[0].next = &w[1];
	w[1].wr_id = 11;
	w[1].opcode = IBV_WR_BIND_MW;
	w[1].send_flags = IBV_SEND_SIGNALED;
	w[1].bind_mw.mw = mw;
	w[1].bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	w[1].bind_mw.bind_info.mr = mrb;
	w[1].bind_mw.bind_info.addr = (uintptr_t)bufb;
	w[1].bind_mw.bind_info.length = 64;
	w[1].bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	memset(bufb + 512, 0x3c, 256);
	UT_CHECK_EQ(ibv_post_send(p.b, w, &bad), 0);
	if (poll1(cqb, &wc)) {
		UT_CHECK_EQ(wc.wr_id, 10);
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	}
	if (poll1(cqb, &wc)) {
		UT_CHECK_EQ(wc.wr_id, 11);
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wc.opcode, IBV_WC_BIND_MW);
	}
	UT_CHECK_MEM(bufa + 2048, bufb + 512, 256);
	pair_free(&p);
	UT_CHECK_EQ(ibv_dealloc_mw(mw), 0);
}

static void
test_bind_error(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(pdb, IBV_MW_TYPE_2);
	struct ibv_mr *plain = ibv_reg_mr(pdb, bufb, LEN, QP_ACC);
	struct pair p;

	if (!UT_CHECK(mw != NULL && plain != NULL) || !pair_new(&p, false))
		return;
	UT_CHECK_EQ(bind2(p.b, mw, ibv_inc_rkey(mw->rkey), plain,
			  (uintptr_t)bufb, 64, IBV_ACCESS_REMOTE_WRITE, NULL),
		    IBV_WC_MW_BIND_ERR);
	pair_free(&p);
	UT_CHECK_EQ(ibv_dealloc_mw(mw), 0);
	UT_CHECK_EQ(ibv_dereg_mr(plain), 0);
}

int
main(void)
{
	struct ibv_device **list = NULL;

	if (ut_verbs_ringlink_pair("mw", 87, &list, &ca, &cb) == 0) {
		pda = ibv_alloc_pd(ca);
		pdb = ibv_alloc_pd(cb);
		cqa = ibv_create_cq(ca, 64, NULL, NULL, 0);
		cqb = ibv_create_cq(cb, 64, NULL, NULL, 0);
		mra = ibv_reg_mr(pda, bufa, LEN, QP_ACC);
		mrb = ibv_reg_mr(pdb, bufb, LEN, QP_ACC | IBV_ACCESS_MW_BIND);
		if (UT_CHECK(mra != NULL && mrb != NULL && cqa && cqb)) {
			test_caps();
			test_type1();
			test_type2_inv();
			test_local_inv_qpx();
			test_bind_after_write();
			test_bind_error();
		}
		ut_verbs_destroy(NULL, mra, cqa, pda);
		ut_verbs_destroy(NULL, mrb, cqb, pdb);
	}
	ut_verbs_close_pair(list, ca, cb);
	ut_verbs_cleanup();
	return ut_summary();
}
