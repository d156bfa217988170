/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Tag-matching SRQs through our libibverbs.so.1 (rdma-core's
 * tag_matching.md, ibv_post_srq_ops(3), ibv_create_srq_ex(3)), in one
 * process with two devices joined by a ringlink: uroce0's RC QP (plain
 * receive queue) sends to uroce1's RC QP on a TM-SRQ whose CQ is an
 * extended CQ with IBV_WC_EX_WITH_TM_INFO.
 *  - tm_caps of ibv_query_device_ex();
 *  - ibv_create_srq_ex() IBV_SRQT_TM: its errors create nothing;
 *  - ibv_post_srq_ops(): errors and bad_wr, ADD/DEL/SYNC completions,
 *    a stale DEL (IBV_WC_TM_ERR);
 *  - eager matched (data, flags, ibv_wc_read_tm_info()), unexpected
 *    (plain receive, headers and all, IBV_WC_TM_RECV without MATCH),
 *    NO_TAG;
 *  - rendezvous: uroce1 reads uroce0's buffer, completes MATCH then
 *    DATA_VALID, and uroce0's QP receives the FIN;
 *  - ibv_destroy_srq() EBUSY while the QP is on it.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <endian.h>
#include <infiniband/tm_types.h>
#include <infiniband/verbs.h>

#include "uroce_test.h"
#include "uroce_test_verbs.h"

#define BUF_SIZE	(1u << 20)
#define WAIT_SEC	10	/* a hang guard, not a performance bound */
#define TMH_LEN		sizeof(struct ibv_tmh)
#define RNDV_LEN	(sizeof(struct ibv_tmh) + sizeof(struct ibv_rvh))

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;
	struct ibv_srq *srq;	/* B only */
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

/* A completion as the extended CQ reads it. */
struct xwc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	unsigned int flags;
	uint32_t byte_len;
	struct ibv_wc_tm_info tm;
};

static bool
wait_xwc(struct side *s, struct xwc *x)
{
	struct ibv_poll_cq_attr pa = { 0 };
	double end = ut_now_s() + WAIT_SEC;
	int ret;

	do {
		ret = ibv_start_poll(s->cqx, &pa);
		if (ret == 0) {
			x->wr_id = s->cqx->wr_id;
			x->status = s->cqx->status;
			x->opcode = ibv_wc_read_opcode(s->cqx);
			x->flags = ibv_wc_read_wc_flags(s->cqx);
			x->byte_len = ibv_wc_read_byte_len(s->cqx);
			memset(&x->tm, 0, sizeof(x->tm));
			if (x->opcode == IBV_WC_TM_RECV)
				ibv_wc_read_tm_info(s->cqx, &x->tm);
			ibv_end_poll(s->cqx);
			return true;
		}
		usleep(20);
	} while (ret == ENOENT && ut_now_s() < end);
	return false;
}

/* A tag-matching SRQ of max_wr receives (one SGE each) on s's PD and CQ. */
static void
tm_srq_attr(struct ibv_srq_init_attr_ex *sa, const struct side *s,
	    uint32_t max_wr, uint32_t tags, uint32_t ops)
{
	memset(sa, 0, sizeof(*sa));
	sa->attr.max_wr = max_wr;
	sa->attr.max_sge = 1;
	sa->srq_type = IBV_SRQT_TM;
	sa->pd = s->pd;
	sa->cq = s->cq;
	sa->tm_cap.max_num_tags = tags;
	sa->tm_cap.max_ops = ops;
	sa->comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
		IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
}

static int
side_open(struct side *s, struct ibv_context *ctx, bool tm)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_srq_init_attr_ex sa;
	struct ibv_qp_init_attr qa;

	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	s->pd = ibv_alloc_pd(ctx);
	s->buf = aligned_alloc(4096, BUF_SIZE);
	s->cqx = ibv_create_cq_ex(ctx, &ca);
	if (!UT_CHECK(s->pd != NULL && s->buf != NULL && s->cqx != NULL))
		return -1;
	s->cq = ibv_cq_ex_to_cq(s->cqx);
	UT_CHECK(s->cqx->read_tm_info != NULL);
	memset(s->buf, 0xa5, BUF_SIZE);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!UT_CHECK(s->mr != NULL))
		return -1;
	if (tm) {
		tm_srq_attr(&sa, s, 64, 32, 16);
		s->srq = ibv_create_srq_ex(ctx, &sa);
		if (!UT_CHECK(s->srq != NULL))
			return -1;
		UT_CHECK(sa.attr.max_wr >= 64);
	}
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.srq = s->srq;
	qa.qp_type = IBV_QPT_RC;
	/* A TM QP asks for no send queue, as rdma-core's tests make theirs:
	 * the rendezvous READ and FIN still need one (qp_priv.h). */
	qa.cap.max_send_wr = tm ? 0 : 16;
	qa.cap.max_recv_wr = tm ? 0 : 16;
	qa.cap.max_send_sge = tm ? 0 : 1;
	qa.cap.max_recv_sge = tm ? 0 : 1;
	s->qp = ibv_create_qp(s->pd, &qa);
	return UT_CHECK(s->qp != NULL) ? 0 : -1;
}

static void
side_connect(struct side *s, const struct side *peer)
{
	struct ibv_qp_attr a = {
		.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE,
	};

	ut_verbs_rc_connect(s->qp, peer->ctx, peer->qp->qp_num, 100, 1);
	/* The peer's rendezvous READs need remote read (RTS -> RTS). */
	UT_CHECK_EQ(ibv_modify_qp(s->qp, &a, IBV_QP_ACCESS_FLAGS), 0);
}

static void
side_close(struct side *s)
{
	if (s->srq != NULL && s->qp != NULL)
		UT_CHECK_EQ(ibv_destroy_srq(s->srq), EBUSY);
	if (s->qp != NULL)
		UT_CHECK_EQ(ibv_destroy_qp(s->qp), 0);
	if (s->srq != NULL)
		UT_CHECK_EQ(ibv_destroy_srq(s->srq), 0);
	ut_verbs_destroy(NULL, s->mr, s->cq, s->pd);
	free(s->buf);
}

/* ---------------------------------------------------------------------------
 * Helpers.
 */
static void
tmh_put(uint8_t *p, uint8_t op, uint64_t tag, uint32_t priv)
{
	struct ibv_tmh h = { .opcode = op };

	h.app_ctx = htobe32(priv);
	h.tag = htobe64(tag);
	memcpy(p, &h, sizeof(h));
}

static void
send_at(struct side *s, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)(s->buf + off), len, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	UT_CHECK_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
}

static void
recv_at(struct side *s, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)(s->buf + off), len, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 },
		*bad;

	if (s->srq != NULL)
		UT_CHECK_EQ(ibv_post_srq_recv(s->srq, &wr, &bad), 0);
	else
		UT_CHECK_EQ(ibv_post_recv(s->qp, &wr, &bad), 0);
}

/* ADD a tag on B's SRQ, signaled, reporting cnt unexpected messages. */
static uint32_t
tag_add(struct side *b, uint64_t tag, uint64_t recv_wr_id, uint32_t off,
	uint32_t len, uint32_t cnt)
{
	struct ibv_sge sge = { (uintptr_t)(b->buf + off), len, b->mr->lkey };
	struct ibv_ops_wr wr = {
		.wr_id = 5000 + recv_wr_id, .opcode = IBV_WR_TAG_ADD,
		.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC,
	}, *bad = NULL;
	struct xwc x;

	wr.tm.unexpected_cnt = cnt;
	wr.tm.add.recv_wr_id = recv_wr_id;
	wr.tm.add.sg_list = &sge;
	wr.tm.add.num_sge = 1;
	wr.tm.add.tag = tag;
	wr.tm.add.mask = ~0ull;
	UT_CHECK_EQ(ibv_post_srq_ops(b->srq, &wr, &bad), 0);
	if (UT_CHECK(wait_xwc(b, &x))) {
		UT_CHECK_EQ(x.opcode, IBV_WC_TM_ADD);
		UT_CHECK_EQ(x.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(x.wr_id, 5000 + recv_wr_id);
	}
	return wr.tm.handle;
}

/* ---------------------------------------------------------------------------
 */
static void
test_caps(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex a;

	memset(&a, 0, sizeof(a));
	UT_CHECK_EQ(ibv_query_device_ex(ctx, NULL, &a), 0);
	UT_CHECK_EQ(a.tm_caps.flags, IBV_TM_CAP_RC);
	UT_CHECK_EQ(a.tm_caps.max_num_tags, 1024);
	UT_CHECK_EQ(a.tm_caps.max_ops, 256);
	UT_CHECK_EQ(a.tm_caps.max_sge, 1);
	UT_CHECK_EQ(a.tm_caps.max_rndv_hdr_size, 256);
}

static void
test_create_errors(struct side *b)
{
	struct ibv_srq_init_attr_ex sa, good;
	struct ibv_srq *srq;

	tm_srq_attr(&good, b, 8, 4, 4);
	/* No TM attributes. */
	sa = good;
	sa.comp_mask &= ~(uint32_t)IBV_SRQ_INIT_ATTR_TM;
	errno = 0;
	UT_CHECK(ibv_create_srq_ex(b->ctx, &sa) == NULL && errno == EINVAL);
	/* No CQ. */
	sa = good;
	sa.comp_mask &= ~(uint32_t)IBV_SRQ_INIT_ATTR_CQ;
	errno = 0;
	UT_CHECK(ibv_create_srq_ex(b->ctx, &sa) == NULL && errno == EINVAL);
	/* Tag list beyond tm_caps, or empty; max_ops likewise. */
	sa = good;
	sa.tm_cap.max_num_tags = 1025;
	errno = 0;
	UT_CHECK(ibv_create_srq_ex(b->ctx, &sa) == NULL && errno == EINVAL);
	sa.tm_cap.max_num_tags = 0;
	errno = 0;
	UT_CHECK(ibv_create_srq_ex(b->ctx, &sa) == NULL && errno == EINVAL);
	sa = good;
	sa.tm_cap.max_ops = 257;
	errno = 0;
	UT_CHECK(ibv_create_srq_ex(b->ctx, &sa) == NULL && errno == EINVAL);
	/* And a good one, destroyed. */
	sa = good;
	srq = ibv_create_srq_ex(b->ctx, &sa);
	if (UT_CHECK(srq != NULL))
		UT_CHECK_EQ(ibv_destroy_srq(srq), 0);
}

static void
test_ops(struct side *b)
{
	struct ibv_sge two[2] = {
		{ (uintptr_t)b->buf, 8, b->mr->lkey },
		{ (uintptr_t)b->buf + 8, 8, b->mr->lkey },
	};
	struct ibv_ops_wr w[3], *bad;
	uint32_t h;
	struct xwc x;

	memset(w, 0, sizeof(w));
	w[0].opcode = IBV_WR_TAG_SYNC;
	w[0].next = &w[1];
	w[1].opcode = (enum ibv_ops_wr_opcode)7;
	bad = NULL;
	UT_CHECK_EQ(ibv_post_srq_ops(b->srq, &w[0], &bad), EINVAL);
	UT_CHECK(bad == &w[1]);
	w[1].opcode = IBV_WR_TAG_ADD;
	w[1].tm.add.sg_list = two;
	w[1].tm.add.num_sge = 2;
	bad = NULL;
	UT_CHECK_EQ(ibv_post_srq_ops(b->srq, &w[1], &bad), EINVAL);
	UT_CHECK(bad == &w[1]);
	/* ADD then DEL, signaled; the DEL again fails with TM_ERR. */
	h = tag_add(b, 99, 1, 0, 64, 0);
	memset(&w[2], 0, sizeof(w[2]));
	w[2].wr_id = 77;
	w[2].opcode = IBV_WR_TAG_DEL;
	w[2].flags = IBV_OPS_SIGNALED;
	w[2].tm.handle = h;
	UT_CHECK_EQ(ibv_post_srq_ops(b->srq, &w[2], &bad), 0);
	if (UT_CHECK(wait_xwc(b, &x))) {
		UT_CHECK_EQ(x.opcode, IBV_WC_TM_DEL);
		UT_CHECK_EQ(x.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(x.wr_id, 77);
	}
	UT_CHECK_EQ(ibv_post_srq_ops(b->srq, &w[2], &bad), 0);
	if (UT_CHECK(wait_xwc(b, &x))) {
		UT_CHECK_EQ(x.opcode, IBV_WC_TM_DEL);
		UT_CHECK_EQ(x.status, IBV_WC_TM_ERR);
	}
	/* SYNC, signaled. */
	memset(&w[0], 0, sizeof(w[0]));
	w[0].wr_id = 78;
	w[0].opcode = IBV_WR_TAG_SYNC;
	w[0].flags = IBV_OPS_SIGNALED;
	UT_CHECK_EQ(ibv_post_srq_ops(b->srq, &w[0], &bad), 0);
	if (UT_CHECK(wait_xwc(b, &x))) {
		UT_CHECK_EQ(x.opcode, IBV_WC_TM_SYNC);
		UT_CHECK_EQ(x.flags & IBV_WC_TM_SYNC_REQ, 0);
	}
}

/* Eager matched, unexpected and NO_TAG. */
static void
test_eager(struct side *a, struct side *b)
{
	struct xwc x;
	uint32_t unexp = 0;

	tag_add(b, 0x42, 10, 0, 4096, unexp);
	tmh_put(a->buf, IBV_TMH_EAGER, 0x42, 0xfeed);
	ut_fill_rand(a->buf + TMH_LEN, 700);
	send_at(a, 1, 0, TMH_LEN + 700);
	if (UT_CHECK(wait_xwc(b, &x))) {
		UT_CHECK_EQ(x.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(x.opcode, IBV_WC_TM_RECV);
		UT_CHECK_EQ(x.wr_id, 10);
		UT_CHECK_EQ(x.flags, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID);
		UT_CHECK_EQ(x.byte_len, 700);
		UT_CHECK_EQ(x.tm.tag, 0x42);
		UT_CHECK_EQ(x.tm.priv, 0xfeed);
		UT_CHECK_MEM(b->buf, a->buf + TMH_LEN, 700);
	}
	if (UT_CHECK(wait_xwc(a, &x)))
		UT_CHECK_EQ(x.status, IBV_WC_SUCCESS);
	/* Unexpected: the whole message to the plain receive. */
	recv_at(b, 20, 8192, 4096);
	tmh_put(a->buf + 8192, IBV_TMH_EAGER, 0x43, 1);
	ut_fill_rand(a->buf + 8192 + TMH_LEN, 100);
	send_at(a, 2, 8192, TMH_LEN + 100);
	if (UT_CHECK(wait_xwc(b, &x))) {
		UT_CHECK_EQ(x.opcode, IBV_WC_TM_RECV);
		UT_CHECK_EQ(x.flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID), 0);
		UT_CHECK_EQ(x.tm.tag, 0);
		UT_CHECK_EQ(x.wr_id, 20);
		UT_CHECK_EQ(x.byte_len, TMH_LEN + 100);
		/* Receive completions never ask for a sync. */
		UT_CHECK_EQ(x.flags, 0);
		UT_CHECK_MEM(b->buf + 8192, a->buf + 8192, TMH_LEN + 100);
		unexp++;
	}
	wait_xwc(a, &x);
	/* NO_TAG. */
	recv_at(b, 21, 16384, 4096);
	a->buf[16384] = IBV_TMH_NO_TAG;
	ut_fill_rand(a->buf + 16385, 20);
	send_at(a, 3, 16384, 21);
	if (UT_CHECK(wait_xwc(b, &x))) {
		UT_CHECK_EQ(x.opcode, IBV_WC_TM_NO_TAG);
		UT_CHECK_EQ(x.tm.tag, 0);
		UT_CHECK_EQ(x.wr_id, 21);
		UT_CHECK_EQ(x.byte_len, 21);
		UT_CHECK_MEM(b->buf + 16384, a->buf + 16384, 21);
	}
	wait_xwc(a, &x);
	/* Synced: a new tag matches again, no SYNC_REQ. */
	tag_add(b, 0x44, 11, 24576, 4096, unexp);
	tmh_put(a->buf + 24576, IBV_TMH_EAGER, 0x44, 2);
	ut_fill_rand(a->buf + 24576 + TMH_LEN, 3000);
	send_at(a, 4, 24576, TMH_LEN + 3000);
	if (UT_CHECK(wait_xwc(b, &x))) {
		UT_CHECK_EQ(x.opcode, IBV_WC_TM_RECV);
		UT_CHECK_EQ(x.flags, IBV_WC_TM_MATCH);
	}
	if (UT_CHECK(wait_xwc(b, &x))) {
		UT_CHECK_EQ(x.opcode, IBV_WC_TM_RECV);
		UT_CHECK_EQ(x.flags, IBV_WC_TM_DATA_VALID);
		UT_CHECK_EQ(x.byte_len, 3000);
		UT_CHECK_EQ(x.tm.tag, 0);	/* the tag came with the MATCH */
		UT_CHECK_MEM(b->buf + 24576, a->buf + 24576 + TMH_LEN, 3000);
	}
	wait_xwc(a, &x);
}

static void
test_rndv(struct side *a, struct side *b)
{
	uint32_t n = 300000, data = 65536, fin = 512 * 1024;
	struct ibv_rvh rvh;
	struct xwc x;

	recv_at(a, 30, fin, 64);
	ut_fill_rand(a->buf + data, n);
	tmh_put(a->buf, IBV_TMH_RNDV, 0x99, 0x1234);
	rvh.va = htobe64((uintptr_t)(a->buf + data));
	rvh.rkey = htobe32(a->mr->rkey);
	rvh.len = htobe32(n);
	memcpy(a->buf + TMH_LEN, &rvh, sizeof(rvh));
	/* The tagged buffer sits past the unexpected buffers used before. */
	tag_add(b, 0x99, 12, 65536, n, 1);
	send_at(a, 5, 0, RNDV_LEN);
	if (UT_CHECK(wait_xwc(b, &x))) {
		UT_CHECK_EQ(x.opcode, IBV_WC_TM_RECV);
		UT_CHECK_EQ(x.flags, IBV_WC_TM_MATCH);
		UT_CHECK_EQ(x.wr_id, 12);
		UT_CHECK_EQ(x.tm.tag, 0x99);
		UT_CHECK_EQ(x.tm.priv, 0x1234);
	}
	if (UT_CHECK(wait_xwc(b, &x))) {
		UT_CHECK_EQ(x.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(x.opcode, IBV_WC_TM_RECV);
		UT_CHECK_EQ(x.flags, IBV_WC_TM_DATA_VALID);
		UT_CHECK_EQ(x.byte_len, n);
		UT_CHECK_EQ(x.tm.tag, 0);	/* the tag came with the MATCH */
		UT_CHECK_EQ(x.tm.priv, 0);
		UT_CHECK_MEM(b->buf + 65536, a->buf + data, n);
	}
	/* A: its SEND, then the FIN on its receive queue. */
	if (UT_CHECK(wait_xwc(a, &x))) {
		UT_CHECK_EQ(x.opcode, IBV_WC_SEND);
		UT_CHECK_EQ(x.status, IBV_WC_SUCCESS);
	}
	if (UT_CHECK(wait_xwc(a, &x))) {
		UT_CHECK_EQ(x.opcode, IBV_WC_RECV);
		UT_CHECK_EQ(x.wr_id, 30);
		UT_CHECK_EQ(x.byte_len, RNDV_LEN);
		UT_CHECK_EQ(a->buf[fin], IBV_TMH_FIN);
		UT_CHECK_MEM(a->buf + fin + 1, a->buf + 1, RNDV_LEN - 1);
	}
}

int
main(void)
{
	struct ibv_device **list = NULL;
	struct ibv_context *c0 = NULL, *c1 = NULL;
	struct side a, b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (ut_verbs_ringlink_pair("vtm", 85, &list, &c0, &c1) == 0 &&
	    side_open(&a, c0, false) == 0 && side_open(&b, c1, true) == 0) {
		side_connect(&a, &b);
		side_connect(&b, &a);
		test_caps(c1);
		test_create_errors(&b);
		test_ops(&b);
		UT_NOTE("before the rendezvous");
		test_eager(&a, &b);
		test_rndv(&a, &b);
		UT_NOTE("rendezvous");
	}
	side_close(&a);
	side_close(&b);
	ut_verbs_close_pair(list, c0, c1);
	return ut_summary();
}
