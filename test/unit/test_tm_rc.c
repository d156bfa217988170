/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Tag matching end to end over the in-memory link
 * (test/common/uroce_test_link.h): node A's RC QP sends tag-matching
 * messages to node B's RC QP on a TM-SRQ (lib/transport/tm_rx.c). Eager
 * messages matched (one packet and several), unexpected (to the plain
 * receives, headers and all, with the phase rules), NO_TAG, rendezvous
 * (B reads A's buffer, A gets the FIN) byte for byte also with loss and
 * reordering, a buffer too small (RNDV_INCOMPLETE), RNR while no plain
 * receive is posted, and malformed headers NAKed and counted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qp_priv.h"
#include "srq_priv.h"
#include "uroce_srq.h"
#include "uroce_test.h"
#include "uroce_test_eal.h"
#include "uroce_test_link.h"
#include "uroce_tm.h"

#define BUF_LEN		(1u << 20)
#define ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)
#define QPN_A		0x100
#define QPN_B		0x200
#define HDR		sizeof(struct ibv_tmh)
#define RHDR		(sizeof(struct ibv_tmh) + sizeof(struct ibv_rvh))

struct env {
	struct ut_link l;
	struct uroce_srq *srq;
	struct uroce_tm *tm;
	struct uroce_qp *qa, *qb;
	uint8_t *ma, *mb;		/* registered buffers of A and B */
	struct uroce_mr *mra, *mrb;
};

static void
env_free(struct env *e)
{
	if (e->qb != NULL) {
		ut_node_forget_qp(&e->l.node[1], e->qb);
		uroce_qp_destroy(e->qb);
	}
	uroce_srq_destroy(e->srq);
	ut_link_fini(&e->l);
	free(e->ma);
	free(e->mb);
	free(e);
}

static struct env *
env_new(uint64_t seed, uint32_t srq_wr)
{
	struct env *e = calloc(1, sizeof(*e));
	struct uroce_srq_init si;
	struct ibv_qp_init_attr init;
	struct ut_qp_opts o;
	struct ut_node *b;
	int ret;

	if (e == NULL || ut_link_init(&e->l, seed, IBV_MTU_1024) != 0) {
		UT_CHECK(0);
		free(e);
		return NULL;
	}
	b = &e->l.node[1];
	e->ma = aligned_alloc(4096, BUF_LEN);
	e->mb = aligned_alloc(4096, BUF_LEN);
	memset(e->mb, 0xa5, BUF_LEN);
	e->mra = ut_node_reg(&e->l.node[0], e->ma, BUF_LEN, ACCESS_ALL);
	e->mrb = ut_node_reg(b, e->mb, BUF_LEN, ACCESS_ALL);
	memset(&si, 0, sizeof(si));
	si.type = IBV_SRQT_TM;
	si.pd = &b->pd;
	si.cq = b->rcq;
	si.tm_cap.max_num_tags = 64;
	si.tm_cap.max_ops = 16;
	si.max_wr = srq_wr;
	si.max_sge = 1;
	si.srqn = 1;
	ret = uroce_srq_create(&b->env, &si, &e->srq);
	UT_CHECK_EQ(ret, 0);
	if (ret != 0) {
		env_free(e);
		return NULL;
	}
	e->tm = e->srq->type_priv;
	ut_qp_opts_default(&o, IBV_QPT_RC);
	o.min_rnr_timer = 1;
	UT_CHECK_EQ(ut_node_qp(&e->l.node[0], &o, QPN_A, &e->qa), 0);
	memset(&init, 0, sizeof(init));
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 4;
	init.cap.max_send_sge = 1;
	init.srq = (struct ibv_srq *)e->srq;
	ret = uroce_qp_create(&b->env, &b->pd, b->scq, b->rcq, &init, QPN_B,
			      &e->qb);
	UT_CHECK_EQ(ret, 0);
	if (ret != 0) {
		env_free(e);
		return NULL;
	}
	b->qps[b->nqp++] = e->qb;
	UT_CHECK_EQ(ut_qp_up(&e->l, 0, e->qa, QPN_B, &o), 0);
	UT_CHECK_EQ(ut_qp_up(&e->l, 1, e->qb, QPN_A, &o), 0);
	return e;
}

/* ---------------------------------------------------------------------------
 * Helpers.
 */
/* A sends len bytes at A's offset off (a message built there). */
static int
a_send(struct env *e, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)(e->ma + off), len, e->mra->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	return uroce_qp_post_send(e->qa, &wr, &bad);
}

/* Build a tag-matching message at A's offset off: headers + n bytes of
 * random payload. @return its length. */
static uint32_t
a_msg(struct env *e, uint32_t off, uint8_t op, uint64_t tag, uint32_t priv,
      uint32_t n)
{
	struct uroce_tm_msg m = { .op = op, .tag = tag, .app_ctx = priv };
	uint32_t h = uroce_tm_hdr_len(op);

	uroce_tm_build(&m, e->ma + off);
	ut_fill_rand(e->ma + off + h, n);
	return h + n;
}

/* A sends an eager message (tag, priv, n random payload bytes) built at
 * its offset off, as send wr_id; the post checked. */
static void
a_eager(struct env *e, uint64_t wr_id, uint32_t off, uint64_t tag,
	uint32_t priv, uint32_t n)
{
	uint32_t len = a_msg(e, off, IBV_TMH_EAGER, tag, priv, n);

	UT_CHECK_EQ(a_send(e, wr_id, off, len), 0);
}

static void
b_add(struct env *e, uint64_t tag, uint64_t recv_wr_id, uint32_t off,
      uint32_t len, uint32_t cnt)
{
	struct ibv_sge sge = { (uintptr_t)(e->mb + off), len, e->mrb->lkey };
	struct ibv_ops_wr wr = {
		.wr_id = 1000 + recv_wr_id, .opcode = IBV_WR_TAG_ADD,
		.flags = IBV_OPS_TM_SYNC,
	};

	wr.tm.unexpected_cnt = cnt;
	wr.tm.add.recv_wr_id = recv_wr_id;
	wr.tm.add.sg_list = &sge;
	wr.tm.add.num_sge = 1;
	wr.tm.add.tag = tag;
	wr.tm.add.mask = ~0ull;
	UT_CHECK_EQ(uroce_srq_post_ops(e->srq, &wr, NULL), 0);
}

static void
b_plain(struct env *e, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)(e->mb + off), len, e->mrb->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };

	UT_CHECK_EQ(uroce_srq_post_recv(e->srq, &wr, NULL), 0);
}

struct want {
	struct uroce_cq *cq;
	unsigned int n, got;
	struct ibv_wc wc[64];
};

static bool
got_n(struct ut_link *l, void *ctx)
{
	struct want *w = ctx;
	int r;

	(void)l;
	while (w->got < w->n && w->got < RTE_DIM(w->wc) &&
	       (r = uroce_cq_poll(w->cq, 1, &w->wc[w->got])) > 0)
		w->got++;
	return w->got >= w->n;
}

/* Run until A has na send completions and B's SRQ CQ nb completions. */
static void
run(struct env *e, struct want *wa, unsigned int na, struct want *wb,
    unsigned int nb)
{
	memset(wa, 0, sizeof(*wa));
	memset(wb, 0, sizeof(*wb));
	wa->cq = e->l.node[0].scq;
	wa->n = na;
	wb->cq = e->srq->cq;
	wb->n = nb;
	UT_CHECK(ut_link_run(&e->l, got_n, wa, ut_link_us(2000000), 200000));
	UT_CHECK(ut_link_run(&e->l, got_n, wb, ut_link_us(2000000), 200000));
	ut_link_settle(&e->l, ut_link_us(100000));
	UT_CHECK(!got_n(&e->l, wb) || wb->got == nb);
}

static void
check_info(const struct ibv_wc *wc, uint64_t tag, uint32_t priv)
{
	struct ibv_wc_tm_info info;

	uroce_tm_wc_info(wc, &info);
	UT_CHECK_EQ(info.tag, tag);
	UT_CHECK_EQ(info.priv, priv);
}

/* ---------------------------------------------------------------------------
 */
static void
test_eager(void)
{
	struct env *e = env_new(1, 16);
	struct want wa, wb;

	if (e == NULL)
		return;
	/* One packet, matched: MATCH | DATA_VALID, the payload only. */
	b_add(e, 0x77, 1, 0, 4096, 0);
	a_eager(e, 11, 0, 0x77, 0xabcd, 500);
	run(e, &wa, 1, &wb, 1);
	UT_CHECK_EQ(wa.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_EQ(wb.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_EQ(wb.wc[0].opcode, IBV_WC_TM_RECV);
	UT_CHECK_EQ(wb.wc[0].wr_id, 1);
	UT_CHECK_EQ(wb.wc[0].byte_len, 500);
	UT_CHECK_EQ(wb.wc[0].wc_flags, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID);
	UT_CHECK_EQ(wb.wc[0].qp_num, QPN_B);
	check_info(&wb.wc[0], 0x77, 0xabcd);
	UT_CHECK_MEM(e->mb, e->ma + HDR, 500);
	UT_CHECK_EQ(e->mb[500], 0xa5);
	UT_CHECK_EQ(e->tm->n_listed, 0);
	UT_CHECK_EQ(e->tm->stats.matched, 1);

	/* Three packets: MATCH at once, DATA_VALID with the length at the end. */
	b_add(e, 0x78, 2, 8192, 8192, 0);
	a_eager(e, 12, 8192, 0x78, 7, 2500);
	run(e, &wa, 1, &wb, 2);
	UT_CHECK_EQ(wb.wc[0].opcode, IBV_WC_TM_RECV);
	UT_CHECK_EQ(wb.wc[0].wc_flags, IBV_WC_TM_MATCH);
	UT_CHECK_EQ(wb.wc[0].wr_id, 2);
	UT_CHECK_EQ(wb.wc[1].opcode, IBV_WC_TM_RECV);
	UT_CHECK_EQ(wb.wc[1].wc_flags, IBV_WC_TM_DATA_VALID);
	UT_CHECK_EQ(wb.wc[1].wr_id, 2);
	UT_CHECK_EQ(wb.wc[1].byte_len, 2500);
	check_info(&wb.wc[0], 0x78, 7);		/* the tag comes with the MATCH */
	check_info(&wb.wc[1], 0, 0);
	UT_CHECK_MEM(e->mb + 8192, e->ma + 8192 + HDR, 2500);

	/* Too long for the tagged buffer: LOC_LEN_ERR, sender REM_INV_REQ. */
	b_add(e, 0x79, 3, 20000, 100, 0);
	a_eager(e, 13, 20000, 0x79, 7, 200);
	run(e, &wa, 1, &wb, 1);
	UT_CHECK_EQ(wa.wc[0].status, IBV_WC_REM_INV_REQ_ERR);
	UT_CHECK_EQ(wb.wc[0].status, IBV_WC_LOC_LEN_ERR);
	UT_CHECK_EQ(wb.wc[0].wr_id, 3);
	UT_CHECK_EQ(e->qb->state, IBV_QPS_ERR);
	env_free(e);
}

/* Unexpected messages: the whole message to a plain receive, IBV_WC_TM_RECV
 * without MATCH or DATA_VALID, tag 0, no SYNC_REQ (only the tag operations'
 * completions carry it); a tag added before software reported them never matches. */
static void
test_unexpected(void)
{
	struct env *e = env_new(2, 16);
	struct want wa, wb;

	if (e == NULL)
		return;
	b_plain(e, 50, 0, 4096);
	b_plain(e, 51, 4096, 4096);
	b_plain(e, 52, 8192, 4096);
	b_plain(e, 53, 12288, 4096);
	a_eager(e, 1, 0, 0x10, 1, 300);
	run(e, &wa, 1, &wb, 1);
	UT_CHECK_EQ(wb.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_EQ(wb.wc[0].opcode, IBV_WC_TM_RECV);
	UT_CHECK_EQ(wb.wc[0].wr_id, 50);
	UT_CHECK_EQ(wb.wc[0].src_qp, 0);	/* the tag's high half */
	UT_CHECK_EQ(wb.wc[0].vendor_err, 0);
	UT_CHECK_EQ(wb.wc[0].byte_len, HDR + 300);
	UT_CHECK_EQ(wb.wc[0].wc_flags, 0);
	UT_CHECK_MEM(e->mb, e->ma, HDR + 300);
	UT_CHECK_EQ(e->tm->unexp_hw, 1);
	/* Software adds tag 0x10 without having counted the unexpected one:
	 * the next 0x10 message must not overtake it. */
	b_add(e, 0x10, 9, 65536, 4096, 0);
	a_eager(e, 2, 4096, 0x10, 2, 100);
	run(e, &wa, 1, &wb, 1);
	UT_CHECK_EQ(wb.wc[0].opcode, IBV_WC_TM_RECV);
	UT_CHECK_EQ(wb.wc[0].wr_id, 51);
	UT_CHECK_EQ(e->tm->n_listed, 1);
	/* NO_TAG: delivered whole, IBV_WC_TM_NO_TAG, the phase stays. */
	e->ma[8192] = IBV_TMH_NO_TAG;
	ut_fill_rand(e->ma + 8193, 40);
	UT_CHECK_EQ(a_send(e, 3, 8192, 41), 0);
	run(e, &wa, 1, &wb, 1);
	UT_CHECK_EQ(wb.wc[0].opcode, IBV_WC_TM_NO_TAG);
	UT_CHECK_EQ(wb.wc[0].wr_id, 52);
	UT_CHECK_EQ(wb.wc[0].src_qp, 0);	/* no tag */
	UT_CHECK_EQ(wb.wc[0].byte_len, 41);
	UT_CHECK_MEM(e->mb + 8192, e->ma + 8192, 41);
	UT_CHECK_EQ(e->tm->unexp_hw, 2);
	/* In sync again (2 reported), a new tag matches. */
	b_add(e, 0x10, 10, 69632, 4096, 2);
	a_eager(e, 4, 12288, 0x10, 3, 64);
	run(e, &wa, 1, &wb, 1);
	UT_CHECK_EQ(wb.wc[0].opcode, IBV_WC_TM_RECV);
	UT_CHECK_EQ(wb.wc[0].wr_id, 10);
	UT_CHECK_EQ(wb.wc[0].wc_flags, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID);
	UT_CHECK_MEM(e->mb + 69632, e->ma + 12288 + HDR, 64);
	/* The stale tag is still listed; software deletes it. */
	UT_CHECK_EQ(e->tm->n_listed, 1);
	env_free(e);
}

/* No plain receive for an unexpected message: RNR NAK, nothing consumed;
 * once one is posted the retry lands. */
static void
test_rnr(void)
{
	struct env *e = env_new(3, 16);
	struct want wa, wb;
	unsigned int i;

	if (e == NULL)
		return;
	a_eager(e, 1, 0, 0x20, 1, 100);
	for (i = 0; i < 2000 && e->qb->stats.rnr_naks_tx < 2; i++)
		if (ut_link_step(&e->l) == 0)
			ut_link_advance(&e->l, UINT64_MAX);
	UT_CHECK(e->qb->stats.rnr_naks_tx >= 2);
	UT_CHECK_EQ(e->tm->unexp_hw, 0);
	b_plain(e, 60, 0, 4096);
	run(e, &wa, 1, &wb, 1);
	UT_CHECK_EQ(wa.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_EQ(wb.wc[0].wr_id, 60);
	UT_CHECK_EQ(e->tm->unexp_hw, 1);
	env_free(e);
}

/* Malformed headers: NAK Invalid Request, counted, the tag untouched. */
static void
test_bad_hdr(void)
{
	static const struct { uint8_t op; uint32_t len; } bad[] = {
		{ IBV_TMH_EAGER, 15 }, { IBV_TMH_RNDV, 31 }, { IBV_TMH_FIN, 10 },
		{ 9, 64 }, { IBV_TMH_EAGER, 0 },
	};
	struct want wa, wb;
	unsigned int i;

	for (i = 0; i < RTE_DIM(bad); i++) {
		struct env *e = env_new(10 + i, 16);

		if (e == NULL)
			return;
		b_add(e, 0, 1, 0, 4096, 0);
		b_plain(e, 2, 4096, 4096);
		memset(e->ma, 0, 64);
		e->ma[0] = bad[i].op;
		UT_CHECK_EQ(a_send(e, 1, 0, bad[i].len), 0);
		run(e, &wa, 1, &wb, 0);
		UT_CHECK_EQ(wa.wc[0].status, IBV_WC_REM_INV_REQ_ERR);
		UT_CHECK_EQ(e->tm->stats.bad_hdr, 1);
		UT_CHECK_EQ(e->tm->n_listed, 1);
		UT_CHECK_EQ(uroce_cq_poll(e->srq->cq, 1, &wb.wc[0]), 0);
		UT_NOTE("bad header %u", i);
		env_free(e);
	}
}

/* Rendezvous: B reads A's buffer into the tagged buffer and sends the
 * FIN, which A's own receive gets. */
static void
rndv_one(struct env *e, uint64_t tag, uint32_t a_off, uint32_t b_off,
	 uint32_t n, uint64_t recv_wr_id)
{
	struct uroce_tm_msg m = {
		.op = IBV_TMH_RNDV, .tag = tag, .app_ctx = (uint32_t)tag,
		.va = (uintptr_t)(e->ma + a_off + 64), .rkey = e->mra->rkey,
		.len = n,
	};

	ut_fill_rand(e->ma + a_off + 64, n);
	uroce_tm_build(&m, e->ma + a_off);
	b_add(e, tag, recv_wr_id, b_off, n, (uint32_t)e->tm->unexp_hw);
	UT_CHECK_EQ(a_send(e, recv_wr_id, a_off, RHDR), 0);
}

static void
a_recv(struct env *e, uint64_t wr_id, uint32_t off)
{
	struct ibv_sge sge = { (uintptr_t)(e->ma + off), 64, e->mra->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 },
		*bad;

	UT_CHECK_EQ(uroce_qp_post_recv(e->qa, &wr, &bad), 0);
}

static void
test_rndv(void)
{
	struct env *e = env_new(4, 16);
	struct uroce_tm_msg fin;
	struct want wa, wb, wf;
	uint32_t n = 100000;

	if (e == NULL)
		return;
	a_recv(e, 900, 512 * 1024);
	rndv_one(e, 0x5151, 0, 0, n, 7);
	run(e, &wa, 1, &wb, 2);
	UT_CHECK_EQ(wa.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_EQ(wb.wc[0].opcode, IBV_WC_TM_RECV);
	UT_CHECK_EQ(wb.wc[0].wc_flags, IBV_WC_TM_MATCH);
	UT_CHECK_EQ(wb.wc[0].wr_id, 7);
	UT_CHECK_EQ(wb.wc[1].opcode, IBV_WC_TM_RECV);
	UT_CHECK_EQ(wb.wc[1].status, IBV_WC_SUCCESS);
	UT_CHECK_EQ(wb.wc[1].wc_flags, IBV_WC_TM_DATA_VALID);
	UT_CHECK_EQ(wb.wc[1].byte_len, n);
	UT_CHECK_EQ(wb.wc[1].wr_id, 7);
	check_info(&wb.wc[0], 0x5151, 0x5151);	/* the tag comes with the MATCH */
	check_info(&wb.wc[1], 0, 0);
	UT_CHECK_MEM(e->mb, e->ma + 64, n);
	UT_CHECK_EQ(e->mb[n], 0xa5);
	/* The FIN: the request's TMH and RVH, opcode FIN; B's send CQ saw
	 * nothing of the internal READ and SEND. */
	memset(&wf, 0, sizeof(wf));
	wf.cq = e->l.node[0].rcq;
	wf.n = 1;
	UT_CHECK(ut_link_run(&e->l, got_n, &wf, ut_link_us(2000000), 200000));
	UT_CHECK_EQ(wf.wc[0].wr_id, 900);
	UT_CHECK_EQ(wf.wc[0].byte_len, RHDR);
	UT_CHECK_EQ(uroce_tm_parse(e->ma + 512 * 1024, RHDR, &fin), 0);
	UT_CHECK_EQ(fin.op, IBV_TMH_FIN);
	UT_CHECK_EQ(fin.tag, 0x5151);
	UT_CHECK_MEM(e->ma + 512 * 1024 + 1, e->ma + 1, RHDR - 1);
	UT_CHECK_EQ(uroce_cq_poll(e->l.node[1].scq, 1, &wf.wc[0]), 0);
	/* The tag slot is free again. */
	UT_CHECK_EQ(e->tm->tags[e->tm->free_tail].state, UROCE_TM_FREE);

	/* A buffer too small: RNDV_INCOMPLETE with the headers in it. */
	b_add(e, 0x5252, 8, 300000, 50, 0);
	ut_fill_rand(e->ma + 200000 + 64, 1000);
	{
		struct uroce_tm_msg m = {
			.op = IBV_TMH_RNDV, .tag = 0x5252,
			.va = (uintptr_t)(e->ma + 200064), .rkey = e->mra->rkey,
			.len = 1000,
		};
		uroce_tm_build(&m, e->ma + 200000);
	}
	UT_CHECK_EQ(a_send(e, 2, 200000, RHDR), 0);
	run(e, &wa, 1, &wb, 1);
	UT_CHECK_EQ(wb.wc[0].status, IBV_WC_TM_RNDV_INCOMPLETE);
	UT_CHECK_EQ(wb.wc[0].wc_flags, IBV_WC_TM_MATCH);
	UT_CHECK_EQ(wb.wc[0].byte_len, RHDR);
	UT_CHECK_MEM(e->mb + 300000, e->ma + 200000, RHDR);
	UT_CHECK_EQ(e->mb[300000 + RHDR], 0xa5);
	env_free(e);
}

/* B's QP fails while a rendezvous READ is out: the tagged buffer
 * completes flushed (it is the SRQ's) and its slot is free again. */
static void
rndv_flush(enum ibv_qp_state to)
{
	struct env *e = env_new(6, 16);
	struct ibv_qp_attr a = { .qp_state = to };
	struct want wb;
	unsigned int i;
	uint32_t slot;

	if (e == NULL)
		return;
	rndv_one(e, 0x6161, 0, 0, 5000, 4);
	slot = e->tm->head;
	memset(&wb, 0, sizeof(wb));
	wb.cq = e->srq->cq;
	wb.n = 1;
	/* A hears nothing: B's READ is never answered. */
	e->l.node[0].rx_off = true;
	for (i = 0; i < 1000 && !got_n(&e->l, &wb); i++)
		ut_link_step(&e->l);
	UT_CHECK_EQ(wb.got, 1);
	UT_CHECK_EQ(wb.wc[0].wc_flags, IBV_WC_TM_MATCH);
	UT_CHECK_EQ(e->tm->tags[slot].state, UROCE_TM_CONSUMED);
	UT_CHECK_EQ(uroce_qp_modify(e->qb, &a, IBV_QP_STATE, e->l.now), 0);
	wb.n = 2;
	UT_CHECK(got_n(&e->l, &wb));
	UT_CHECK_EQ(wb.wc[1].opcode, IBV_WC_TM_RECV);
	UT_CHECK_EQ(wb.wc[1].status, IBV_WC_WR_FLUSH_ERR);
	UT_CHECK_EQ(wb.wc[1].wr_id, 4);
	UT_CHECK_EQ(e->tm->tags[slot].state, UROCE_TM_FREE);
	/* Nothing of the internal WQEs on B's own send CQ. */
	UT_CHECK_EQ(uroce_cq_poll(e->l.node[1].scq, 1, &wb.wc[0]), 0);
	UT_NOTE("to state %d", (int)to);
	env_free(e);
}

static void
test_rndv_flush(void)
{
	rndv_flush(IBV_QPS_ERR);	/* the SQ flush */
	rndv_flush(IBV_QPS_RESET);	/* the SQ dropped, the tag not */
}

/* Many rendezvous and eager messages with loss and reordering. */
static void
test_lossy(void)
{
	struct env *e = env_new(5, 64);
	struct want wa, wb;
	unsigned int i, k = 12;
	uint32_t sz[12];

	if (e == NULL)
		return;
	e->l.dir[0].f.drop = e->l.dir[1].f.drop = 20000;
	e->l.dir[0].f.reorder = e->l.dir[1].f.reorder = 20000;
	for (i = 0; i < k; i++) {
		a_recv(e, 900 + i, 900 * 1024 + i * 64);
		sz[i] = 1 + (uint32_t)(ut_rand() % 20000);
		rndv_one(e, 0x100 + i, i * 32768, i * 32768, sz[i], i);
	}
	run(e, &wa, k, &wb, 2 * k);
	for (i = 0; i < k; i++) {
		UT_CHECK_EQ(wa.wc[i].status, IBV_WC_SUCCESS);
		UT_CHECK_MEM(e->mb + i * 32768, e->ma + i * 32768 + 64, sz[i]);
		UT_NOTE("rndv %u", i);
	}
	for (i = 0; i < 2 * k; i++)
		UT_CHECK_EQ(wb.wc[i].status, IBV_WC_SUCCESS);
	UT_CHECK(e->l.dir[0].dropped + e->l.dir[1].dropped > 0);
	/* B's send queue holds two rendezvous at a time: the others waited
	 * behind RNR NAKs. Its own send CQ saw nothing of them. */
	UT_CHECK(e->qb->stats.rnr_naks_tx > 0);
	UT_CHECK_EQ(uroce_cq_poll(e->l.node[1].scq, 1, &wa.wc[0]), 0);
	UT_CHECK_EQ(e->tm->stats.matched, k);
	env_free(e);
}

int
main(int argc, char **argv)
{
	(void)argc;
	if (ut_eal_start(argv[0]) < 0)
		return 1;
	test_eager();
	test_unexpected();
	test_rnr();
	test_bad_hdr();
	test_rndv();
	test_rndv_flush();
	test_lossy();
	return ut_summary();
}
