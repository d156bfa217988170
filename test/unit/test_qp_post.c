/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * QP verbs: create checks, ibv_post_send/ibv_post_recv errors (state,
 * opcode for the QP type, SGE count, inline length, full queues, bad_wr),
 * and the side effects of modify: ERR flushes in order, RESET empties,
 * RTS->SQD drains and raises IBV_EVENT_SQ_DRAINED.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_test.h"
#include "uroce_test_eal.h"
#include "uroce_test_link.h"

static uint8_t mem_a[1 << 16], mem_b[1 << 16];

struct fix {
	struct ut_link l;
	struct uroce_mr *ma, *mb;
	struct uroce_qp *qa, *qb;
};

static int
fix_init(struct fix *f, enum ibv_qp_type type, uint64_t seed)
{
	struct ut_qp_opts o;

	ut_qp_opts_default(&o, type);
	o.max_send_wr = 8;
	o.max_recv_wr = 8;
	o.max_sge = 2;
	o.max_inline = 64;
	if (ut_link_init(&f->l, seed, IBV_MTU_1024) != 0)
		return -ENOMEM;
	f->ma = ut_node_reg(&f->l.node[0], mem_a, sizeof(mem_a),
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	f->mb = ut_node_reg(&f->l.node[1], mem_b, sizeof(mem_b),
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (f->ma == NULL || f->mb == NULL)
		return -EINVAL;
	return ut_link_pair(&f->l, &o, 0x31, 0x42, &f->qa, &f->qb);
}

static void
wr_init(struct ibv_send_wr *wr, struct ibv_sge *sge, enum ibv_wr_opcode op,
	uint64_t wr_id, uint32_t len, uint32_t lkey)
{
	memset(wr, 0, sizeof(*wr));
	sge->addr = (uintptr_t)mem_a;
	sge->length = len;
	sge->lkey = lkey;
	wr->wr_id = wr_id;
	wr->opcode = op;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->send_flags = IBV_SEND_SIGNALED;
}

static int
poll_all(struct uroce_cq *cq, struct ibv_wc *wc, int max)
{
	int n = uroce_cq_poll(cq, max, wc);

	return n < 0 ? 0 : n;
}

/* ---------------------------------------------------------------------------
 * Create.
 */
/* XRC: an initiator has a send queue only, a target no queue and no CQ
 * (IBTA XRC annex A14.2); neither takes ibv_post_recv, a target no send. */
static void
test_create_xrc(struct ut_node *n, struct ibv_qp_init_attr *init)
{
	struct ibv_recv_wr rwr = { .wr_id = 1 }, *rbad = NULL;
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_SEND }, *bad = NULL;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct uroce_qp *qp = NULL;

	init->qp_type = IBV_QPT_XRC_SEND;
	UT_CHECK_EQ(uroce_qp_create(&n->env, &n->pd, NULL, n->rcq, init, 9, &qp), -EINVAL);
	if (UT_CHECK_EQ(uroce_qp_create(&n->env, &n->pd, n->scq, NULL, init, 9, &qp), 0)) {
		UT_CHECK(qp->send_cq == n->scq && qp->recv_cq == NULL);
		UT_CHECK(qp->resp == NULL);
		UT_CHECK_EQ(uroce_qp_modify(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0), 0);
		UT_CHECK_EQ(uroce_qp_post_recv(qp, &rwr, &rbad), -EINVAL);
		UT_CHECK(rbad == &rwr);
		uroce_qp_destroy(qp);
	}
	init->qp_type = IBV_QPT_XRC_RECV;
	qp = NULL;
	if (UT_CHECK_EQ(uroce_qp_create(&n->env, NULL, NULL, NULL, init, 10, &qp), 0)) {
		UT_CHECK(qp->send_cq == NULL && qp->recv_cq == NULL);
		UT_CHECK(qp->resp != NULL);
		UT_CHECK_EQ(uroce_qp_modify(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0), 0);
		rbad = NULL;
		UT_CHECK_EQ(uroce_qp_post_recv(qp, &rwr, &rbad), -EINVAL);
		UT_CHECK_EQ(uroce_qp_post_send(qp, &wr, &bad), -EINVAL);
		UT_CHECK(bad == &wr);
		uroce_qp_destroy(qp);
	}
}

static void
test_create(void)
{
	struct ut_link *l = calloc(1, sizeof(*l));
	struct ibv_qp_init_attr init;
	struct ibv_qp_init_attr qinit;
	struct ibv_qp_attr attr;
	struct uroce_qp *qp = NULL;
	struct ut_node *n;
	struct uroce_srq_init srq_init = { 0 };
	struct uroce_srq *srq = NULL;

	if (!UT_CHECK(l != NULL) || !UT_CHECK_EQ(ut_link_init(l, 1, IBV_MTU_1024), 0))
		return;
	n = &l->node[0];
	memset(&init, 0, sizeof(init));
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 5;
	init.cap.max_recv_wr = 0;
	init.cap.max_send_sge = 3;
	init.cap.max_recv_sge = 1;
	init.cap.max_inline_data = 100;
	UT_CHECK_EQ(uroce_qp_create(&n->env, &n->pd, n->scq, n->rcq, &init, 9, &qp), 0);
	if (qp != NULL) {
		uroce_qp_query(qp, &attr, &qinit);
		UT_CHECK_EQ(qinit.cap.max_send_wr, 8);	/* a power of two */
		UT_CHECK_EQ(qinit.cap.max_recv_wr, 1);
		UT_CHECK_EQ(qinit.cap.max_send_sge, 3);
		UT_CHECK_EQ(qinit.cap.max_inline_data, 100);
		UT_CHECK_EQ(attr.qp_state, IBV_QPS_RESET);
		UT_CHECK_EQ(qp->qpn, 9);
		uroce_qp_destroy(qp);
	}
	init.cap.max_send_sge = n->env.max_sge + 1;
	UT_CHECK_EQ(uroce_qp_create(&n->env, &n->pd, n->scq, n->rcq, &init, 9, &qp), -EINVAL);
	init.cap.max_send_sge = 1;
	init.cap.max_inline_data = n->env.max_inline + 1;
	UT_CHECK_EQ(uroce_qp_create(&n->env, &n->pd, n->scq, n->rcq, &init, 9, &qp), -EINVAL);
	init.cap.max_inline_data = 0;
	init.cap.max_send_wr = n->env.max_qp_wr + 1;
	UT_CHECK_EQ(uroce_qp_create(&n->env, &n->pd, n->scq, n->rcq, &init, 9, &qp), -EINVAL);
	init.cap.max_send_wr = 1;
	UT_CHECK_EQ(uroce_qp_create(&n->env, &n->pd, NULL, n->rcq, &init, 9, &qp), -EINVAL);
	/* RAW_PACKET QPs take no receives from an SRQ. */
	srq_init.type = IBV_SRQT_BASIC;
	srq_init.pd = &n->pd;
	srq_init.max_wr = 4;
	srq_init.max_sge = 1;
	UT_CHECK_EQ(uroce_srq_create(&n->env, &srq_init, &srq), 0);
	init.srq = (struct ibv_srq *)(void *)srq;
	init.qp_type = IBV_QPT_RAW_PACKET;
	UT_CHECK_EQ(uroce_qp_create(&n->env, &n->pd, n->scq, n->rcq, &init, 9, &qp), -EOPNOTSUPP);
	uroce_srq_destroy(srq);
	init.srq = NULL;
	init.qp_type = IBV_QPT_DRIVER;
	UT_CHECK_EQ(uroce_qp_create(&n->env, &n->pd, n->scq, n->rcq, &init, 9, &qp), -EOPNOTSUPP);
	test_create_xrc(n, &init);
	ut_link_fini(l);
	free(l);
}

/* ---------------------------------------------------------------------------
 * Post errors.
 */
static void
test_post_state(void)
{
	struct ut_link *l = calloc(1, sizeof(*l));
	struct ut_qp_opts o;
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_recv_wr rwr = { .wr_id = 1 }, *rbad = NULL;
	struct ibv_sge sge;
	struct ibv_qp_attr a;
	struct uroce_qp *qp;

	if (!UT_CHECK(l != NULL) || !UT_CHECK_EQ(ut_link_init(l, 2, IBV_MTU_1024), 0))
		return;
	ut_qp_opts_default(&o, IBV_QPT_RC);
	if (!UT_CHECK_EQ(ut_node_qp(&l->node[0], &o, 0x77, &qp), 0))
		return;
	wr_init(&wr, &sge, IBV_WR_SEND, 1, 0, 0);
	/* RESET: neither queue takes WRs */
	UT_CHECK_EQ(uroce_qp_post_send(qp, &wr, &bad), -EINVAL);
	UT_CHECK(bad == &wr);
	UT_CHECK_EQ(uroce_qp_post_recv(qp, &rwr, &rbad), -EINVAL);
	UT_CHECK(rbad == &rwr);
	/* INIT: receives yes, sends no */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, l->now), 0);
	UT_CHECK_EQ(uroce_qp_post_recv(qp, &rwr, &rbad), 0);
	bad = NULL;
	UT_CHECK_EQ(uroce_qp_post_send(qp, &wr, &bad), -EINVAL);
	UT_CHECK(bad == &wr);
	UT_CHECK_EQ(uroce_ring_count(&qp->sq), 0);
	UT_CHECK_EQ(uroce_ring_count(&qp->rq), 1);
	ut_link_fini(l);
	free(l);
}

static void
test_post_errors(void)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct ibv_send_wr wr[10], *bad;
	struct ibv_sge sge[10][3];
	struct ibv_recv_wr rwr[10], *rbad;
	struct uroce_ah ah;
	unsigned int kicks;
	int i;

	if (!UT_CHECK(f != NULL) || !UT_CHECK_EQ(fix_init(f, IBV_QPT_RC, 3), 0))
		return;
	for (i = 0; i < 10; i++) {
		wr_init(&wr[i], sge[i], IBV_WR_SEND, (uint64_t)i, 16, f->ma->lkey);
		wr[i].next = i < 9 ? &wr[i + 1] : NULL;
	}
	/* too many SGEs in the second WR: the first stays posted */
	wr[1].num_sge = 3;
	wr[1].next = NULL;
	kicks = f->l.node[0].kicks;
	bad = NULL;
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, wr, &bad), -EINVAL);
	UT_CHECK(bad == &wr[1]);
	UT_CHECK_EQ(uroce_ring_count(&f->qa->sq), 1);
	UT_CHECK_EQ(f->l.node[0].kicks, kicks + 1);
	wr[1].num_sge = 1;
	/* inline longer than max_inline_data */
	wr[1].send_flags |= IBV_SEND_INLINE;
	sge[1][0].length = 65;
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, &wr[1], &bad), -EINVAL);
	UT_CHECK(bad == &wr[1]);
	sge[1][0].length = 64;
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, &wr[1], &bad), 0);
	/* inline READ, opcode outside the table, atomic of 4 bytes */
	wr[2].opcode = IBV_WR_RDMA_READ;
	wr[2].send_flags |= IBV_SEND_INLINE;
	wr[2].next = NULL;
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, &wr[2], &bad), -EINVAL);
	wr[2].send_flags = 0;
	wr[2].opcode = IBV_WR_BIND_MW;		/* a bind names a window */
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, &wr[2], &bad), -EINVAL);
	wr[2].opcode = (enum ibv_wr_opcode)200;
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, &wr[2], &bad), -EINVAL);
	wr[2].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	sge[2][0].length = 4;
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, &wr[2], &bad), -EINVAL);
	UT_CHECK_EQ(uroce_ring_count(&f->qa->sq), 2);
	/* full: 8 slots */
	for (i = 2; i < 10; i++)
		wr_init(&wr[i], sge[i], IBV_WR_SEND, (uint64_t)i, 16, f->ma->lkey),
		wr[i].next = i < 9 ? &wr[i + 1] : NULL;
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, &wr[2], &bad), -ENOMEM);
	UT_CHECK(bad == &wr[8]);
	UT_CHECK_EQ(uroce_ring_count(&f->qa->sq), 8);
	/* receive side: SGEs and full */
	for (i = 0; i < 10; i++) {
		memset(&rwr[i], 0, sizeof(rwr[i]));
		rwr[i].wr_id = (uint64_t)i;
		rwr[i].sg_list = sge[i];
		rwr[i].num_sge = 1;
		rwr[i].next = i < 9 ? &rwr[i + 1] : NULL;
	}
	rwr[0].num_sge = 3;
	UT_CHECK_EQ(uroce_qp_post_recv(f->qb, rwr, &rbad), -EINVAL);
	UT_CHECK(rbad == &rwr[0]);
	rwr[0].num_sge = 1;
	UT_CHECK_EQ(uroce_qp_post_recv(f->qb, rwr, &rbad), -ENOMEM);
	UT_CHECK(rbad == &rwr[8]);
	ut_link_fini(&f->l);
	free(f);

	/* opcodes by QP type: UC has no READ/atomics, UD has SENDs only */
	f = calloc(1, sizeof(*f));
	if (!UT_CHECK(f != NULL) || !UT_CHECK_EQ(fix_init(f, IBV_QPT_UC, 4), 0))
		return;
	wr_init(&wr[0], sge[0], IBV_WR_RDMA_READ, 1, 16, f->ma->lkey);
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, wr, &bad), -EINVAL);
	wr[0].opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	sge[0][0].length = 8;
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, wr, &bad), -EINVAL);
	wr[0].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, wr, &bad), 0);
	ut_link_fini(&f->l);
	free(f);
	f = calloc(1, sizeof(*f));
	if (!UT_CHECK(f != NULL) || !UT_CHECK_EQ(fix_init(f, IBV_QPT_UD, 5), 0))
		return;
	ut_link_ah(&f->l, 0, 0, &ah);
	wr_init(&wr[0], sge[0], IBV_WR_RDMA_WRITE, 1, 16, f->ma->lkey);
	wr[0].wr.ud.ah = (struct ibv_ah *)&ah;
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, wr, &bad), -EINVAL);
	wr[0].opcode = IBV_WR_SEND;
	wr[0].wr.ud.ah = NULL;
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, wr, &bad), -EINVAL);
	wr[0].wr.ud.ah = (struct ibv_ah *)&ah;
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, wr, &bad), 0);
	ut_link_fini(&f->l);
	free(f);
}

/* ---------------------------------------------------------------------------
 * Modify side effects.
 */
static void
test_err_flush(void)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct ibv_send_wr wr[6], *bad;
	struct ibv_sge sge[6];
	struct ibv_recv_wr rwr[3], *rbad;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[16];
	int i, n;

	if (!UT_CHECK(f != NULL) || !UT_CHECK_EQ(fix_init(f, IBV_QPT_RC, 6), 0))
		return;
	for (i = 0; i < 5; i++) {
		wr_init(&wr[i], &sge[i], IBV_WR_SEND, 100 + i, 16, f->ma->lkey);
		wr[i].next = i < 4 ? &wr[i + 1] : NULL;
		if (i == 1 || i == 3)
			wr[i].send_flags = 0;	/* unsignaled: flushed all the same */
	}
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, wr, &bad), 0);
	for (i = 0; i < 3; i++) {
		memset(&rwr[i], 0, sizeof(rwr[i]));
		rwr[i].wr_id = 200 + i;
		rwr[i].next = i < 2 ? &rwr[i + 1] : NULL;
	}
	UT_CHECK_EQ(uroce_qp_post_recv(f->qa, rwr, &rbad), 0);
	/* the first two go out and are acknowledged before the error */
	UT_CHECK_EQ(uroce_qp_modify(f->qa, &a, IBV_QP_STATE, f->l.now), 0);
	n = poll_all(f->qa->send_cq, wc, 16);
	UT_CHECK_EQ(n, 5);
	for (i = 0; i < n; i++) {
		UT_CHECK_EQ(wc[i].status, IBV_WC_WR_FLUSH_ERR);
		UT_CHECK_EQ(wc[i].wr_id, 100u + i);
		UT_CHECK_EQ(wc[i].qp_num, f->qa->qpn);
	}
	n = poll_all(f->qa->recv_cq, wc, 16);
	UT_CHECK_EQ(n, 3);
	for (i = 0; i < n; i++) {
		UT_CHECK_EQ(wc[i].status, IBV_WC_WR_FLUSH_ERR);
		UT_CHECK_EQ(wc[i].wr_id, 200u + i);
	}
	/* posted in ERR: accepted, then flushed by the next tx */
	wr_init(&wr[5], &sge[5], IBV_WR_SEND, 300, 16, f->ma->lkey);
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, &wr[5], &bad), 0);
	rwr[0].next = NULL;
	UT_CHECK_EQ(uroce_qp_post_recv(f->qa, rwr, &rbad), 0);
	ut_link_step(&f->l);
	n = poll_all(f->qa->send_cq, wc, 16);
	UT_CHECK_EQ(n, 1);
	UT_CHECK_EQ(wc[0].wr_id, 300);
	UT_CHECK_EQ(wc[0].status, IBV_WC_WR_FLUSH_ERR);
	n = poll_all(f->qa->recv_cq, wc, 16);
	UT_CHECK_EQ(n, 1);
	UT_CHECK_EQ(wc[0].status, IBV_WC_WR_FLUSH_ERR);
	UT_CHECK_EQ(f->l.dir[1].sent, 0);	/* nothing went out in ERR */
	ut_link_fini(&f->l);
	free(f);
}

/* A scatter/gather list at a 4-byte offset, as libiscsi's packed iSER
 * descriptors hold theirs: the verbs API puts no alignment on it (under
 * UBSan a member access through it would stop the test). Two SENDs, one
 * inline, from two SGEs land in a receive of two SGEs, bytes intact. */
static void
test_sge_unaligned(void)
{
	struct fix *f = calloc(1, sizeof(*f));
	uint64_t sraw[5], rraw[5];
	struct ibv_sge *sl = (void *)((char *)sraw + 4);
	struct ibv_sge *rl = (void *)((char *)rraw + 4);
	struct ibv_sge sg[2];
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_wc wc[4];
	int i, k, n;

	if (!UT_CHECK(f != NULL) || !UT_CHECK_EQ(fix_init(f, IBV_QPT_RC, 9), 0))
		return;
	for (i = 0; i < 64; i++)
		mem_a[i] = (uint8_t)(i * 7 + 1);
	sg[0] = (struct ibv_sge){ (uintptr_t)mem_a, 24, f->ma->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)(mem_a + 24), 40, f->ma->lkey };
	memcpy(sl, sg, sizeof(sg));
	for (k = 0; k < 2; k++) {
		memset(mem_b, 0, 256);
		sg[0] = (struct ibv_sge){ (uintptr_t)mem_b, 32, f->mb->lkey };
		sg[1] = (struct ibv_sge){ (uintptr_t)(mem_b + 100), 32,
					  f->mb->lkey };
		memcpy(rl, sg, sizeof(sg));
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = 40 + k;
		rwr.sg_list = rl;
		rwr.num_sge = 2;
		UT_CHECK_EQ(uroce_qp_post_recv(f->qb, &rwr, &rbad), 0);
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 50 + k;
		wr.opcode = IBV_WR_SEND;
		wr.sg_list = sl;
		wr.num_sge = 2;
		wr.send_flags = IBV_SEND_SIGNALED | (k ? IBV_SEND_INLINE : 0);
		UT_CHECK_EQ(uroce_qp_post_send(f->qa, &wr, &bad), 0);
		ut_link_settle(&f->l, ut_link_us(100000));
		n = poll_all(f->qb->recv_cq, wc, 4);
		if (UT_CHECK_EQ(n, 1)) {
			UT_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
			UT_CHECK_EQ(wc[0].byte_len, 64u);
		}
		n = poll_all(f->qa->send_cq, wc, 4);
		if (UT_CHECK_EQ(n, 1))
			UT_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
		UT_CHECK_MEM(mem_b, mem_a, 32);
		UT_CHECK_MEM(mem_b + 100, mem_a + 32, 32);
	}
	ut_link_fini(&f->l);
	free(f);
}

/* RESET drops what is queued without completions; the QP then works. */
static void
test_reset(void)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct ibv_send_wr wr[3], *bad;
	struct ibv_sge sge[3];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct ut_qp_opts o;
	struct ibv_wc wc[8];
	int i;

	if (!UT_CHECK(f != NULL) || !UT_CHECK_EQ(fix_init(f, IBV_QPT_RC, 7), 0))
		return;
	for (i = 0; i < 3; i++) {
		wr_init(&wr[i], &sge[i], IBV_WR_RDMA_WRITE, 10 + i, 100, f->ma->lkey);
		wr[i].wr.rdma.remote_addr = (uintptr_t)mem_b;
		wr[i].wr.rdma.rkey = f->mb->rkey;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, wr, &bad), 0);
	ut_node_tx(&f->l, 0);	/* in flight, never delivered */
	ut_link_flush_wire(&f->l);
	UT_CHECK_EQ(uroce_qp_modify(f->qa, &a, IBV_QP_STATE, f->l.now), 0);
	UT_CHECK_EQ(uroce_qp_modify(f->qb, &a, IBV_QP_STATE, f->l.now), 0);
	UT_CHECK_EQ(uroce_ring_count(&f->qa->sq), 0);
	UT_CHECK_EQ(poll_all(f->qa->send_cq, wc, 8), 0);
	UT_CHECK_EQ(uroce_qp_deadline(f->qa), UINT64_MAX);
	/* up again with other PSNs: a WRITE gets through */
	ut_qp_opts_default(&o, IBV_QPT_RC);
	o.psn[0] = 5;
	o.psn[1] = 6;
	UT_CHECK_EQ(ut_qp_up(&f->l, 0, f->qa, f->qb->qpn, &o), 0);
	UT_CHECK_EQ(ut_qp_up(&f->l, 1, f->qb, f->qa->qpn, &o), 0);
	memset(mem_b, 0, 100);
	memset(mem_a, 0x3c, 100);
	wr[0].next = NULL;
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, wr, &bad), 0);
	ut_link_settle(&f->l, ut_link_us(1000));
	UT_CHECK_EQ(poll_all(f->qa->send_cq, wc, 8), 1);
	UT_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_EQ(wc[0].wr_id, 10);
	UT_CHECK_MEM(mem_b, mem_a, 100);
	ut_link_fini(&f->l);
	free(f);
}

/* RTS->SQD: WQEs already started finish, then IBV_EVENT_SQ_DRAINED once;
 * the rest wait for SQD->RTS. */
static void
test_sqd(void)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct ibv_send_wr wr[6], *bad;
	struct ibv_sge sge[6];
	struct ibv_qp_attr a;
	struct ibv_wc wc[8];
	struct ut_node *na;
	int i, n;

	if (!UT_CHECK(f != NULL) || !UT_CHECK_EQ(fix_init(f, IBV_QPT_RC, 8), 0))
		return;
	na = &f->l.node[0];
	for (i = 0; i < 6; i++) {
		wr_init(&wr[i], &sge[i], IBV_WR_RDMA_WRITE, 20 + i, 3000, f->ma->lkey);
		wr[i].wr.rdma.remote_addr = (uintptr_t)mem_b;
		wr[i].wr.rdma.rkey = f->mb->rkey;
		wr[i].next = (i == 2 || i == 5) ? NULL : &wr[i + 1];
	}
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, wr, &bad), 0);
	ut_node_tx(&f->l, 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_SQD;
	a.en_sqd_async_notify = 1;
	UT_CHECK_EQ(uroce_qp_modify(f->qa, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY,
				    f->l.now), 0);
	UT_CHECK_EQ(uroce_qp_post_send(f->qa, &wr[3], &bad), 0);
	uroce_qp_query(f->qa, &a, NULL);
	UT_CHECK_EQ(a.qp_state, IBV_QPS_SQD);
	UT_CHECK_EQ(a.sq_draining, 1);
	UT_CHECK_EQ(na->nev, 0);
	ut_link_settle(&f->l, ut_link_us(1000));
	n = poll_all(f->qa->send_cq, wc, 8);
	UT_CHECK_EQ(n, 3);
	UT_CHECK_EQ(na->nev, 1);
	UT_CHECK_EQ(na->ev[0], IBV_EVENT_SQ_DRAINED);
	UT_CHECK(na->ev_obj[0] == f->qa);
	uroce_qp_query(f->qa, &a, NULL);
	UT_CHECK_EQ(a.sq_draining, 0);
	UT_CHECK_EQ(uroce_ring_count(&f->qa->sq), 3);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	UT_CHECK_EQ(uroce_qp_modify(f->qa, &a, IBV_QP_STATE, f->l.now), 0);
	ut_link_settle(&f->l, ut_link_us(1000));
	n = poll_all(f->qa->send_cq, wc, 8);
	UT_CHECK_EQ(n, 3);
	for (i = 0; i < n; i++) {
		UT_CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wc[i].wr_id, 23u + i);
	}
	UT_CHECK_EQ(na->nev, 1);
	ut_link_fini(&f->l);
	free(f);
}

/* A failed modify changes nothing; an unresolvable path or GIDs of two
 * families fail RTR; a path still resolving (-EAGAIN) holds the first
 * packet until resolve() says 0. */
static void
test_modify_path(void)
{
	struct ut_link *l = calloc(1, sizeof(*l));
	struct ut_qp_opts o;
	struct uroce_qp *qa, *qb;
	struct ibv_qp_attr a;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;

	if (!UT_CHECK(l != NULL) || !UT_CHECK_EQ(ut_link_init(l, 9, IBV_MTU_1024), 0))
		return;
	ut_qp_opts_default(&o, IBV_QPT_RC);
	UT_CHECK_EQ(ut_node_qp(&l->node[0], &o, 0x51, &qa), 0);
	UT_CHECK_EQ(ut_node_qp(&l->node[1], &o, 0x52, &qb), 0);
	l->node[0].resolve_err = -EHOSTUNREACH;
	UT_CHECK_EQ(ut_qp_up(l, 0, qa, 0x52, &o), -EHOSTUNREACH);
	uroce_qp_query(qa, &a, NULL);
	UT_CHECK_EQ(a.qp_state, IBV_QPS_INIT);
	l->node[0].resolve_err = 0;
	/* An IPv4 source GID and an IPv6 destination make no IP header. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x52;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = 0;
	memcpy(a.ah_attr.grh.dgid.raw, l->node[1].env.gid[1].raw, 16);
	UT_CHECK_EQ(uroce_qp_modify(qa, &a, IBV_QP_STATE | IBV_QP_AV |
				    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER, l->now), -EINVAL);
	uroce_qp_query(qa, &a, NULL);
	UT_CHECK_EQ(a.qp_state, IBV_QPS_INIT);
	l->node[0].resolve_eagain = 3;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	UT_CHECK_EQ(uroce_qp_modify(qa, &a, IBV_QP_STATE, l->now), 0);
	UT_CHECK_EQ(ut_qp_up(l, 0, qa, 0x52, &o), 0);
	UT_CHECK_EQ(ut_qp_up(l, 1, qb, 0x51, &o), 0);
	UT_CHECK(!qa->path_resolved);
	/* a zero-length WRITE needs neither keys nor addresses (C9-88) */
	wr_init(&wr, &sge, IBV_WR_RDMA_WRITE, 1, 0, 0);
	UT_CHECK_EQ(uroce_qp_post_send(qa, &wr, &bad), 0);
	ut_link_settle(l, ut_link_us(10000));
	UT_CHECK_EQ(l->node[0].resolve_eagain, 0);
	UT_CHECK_EQ(uroce_cq_poll(qa->send_cq, 1, &wc), 1);
	UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	UT_CHECK(qa->path_resolved);
	ut_link_fini(l);
	free(l);
}

/* A completion that finds its CQ full: IBV_EVENT_CQ_ERR, raised once. */
static void
test_cq_overrun(void)
{
	struct ut_link *l = calloc(1, sizeof(*l));
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_recv_wr rwr[4], *bad;
	struct uroce_cq *cq;
	struct uroce_qp *qp = NULL;
	struct ut_node *n;
	int i;

	if (!UT_CHECK(l != NULL) || !UT_CHECK_EQ(ut_link_init(l, 10, IBV_MTU_1024), 0))
		return;
	n = &l->node[0];
	cq = ut_cq_new(2);
	memset(&init, 0, sizeof(init));
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 4;
	init.cap.max_recv_wr = 4;
	init.cap.max_recv_sge = 1;
	if (!UT_CHECK(cq != NULL) ||
	    !UT_CHECK_EQ(uroce_qp_create(&n->env, &n->pd, n->scq, cq, &init, 3, &qp), 0))
		return;
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, l->now), 0);
	for (i = 0; i < 4; i++) {
		memset(&rwr[i], 0, sizeof(rwr[i]));
		rwr[i].wr_id = (uint64_t)i;
		rwr[i].next = i < 3 ? &rwr[i + 1] : NULL;
	}
	UT_CHECK_EQ(uroce_qp_post_recv(qp, rwr, &bad), 0);
	a.qp_state = IBV_QPS_ERR;
	UT_CHECK_EQ(uroce_qp_modify(qp, &a, IBV_QP_STATE, l->now), 0);
	UT_CHECK_EQ(n->nev, 1);
	UT_CHECK_EQ(n->ev[0], IBV_EVENT_CQ_ERR);
	UT_CHECK(n->ev_obj[0] == cq);
	UT_CHECK(uroce_cq_in_error(cq));
	UT_CHECK_EQ(uroce_cq_overrun_count(cq), 2);
	uroce_qp_destroy(qp);
	ut_cq_free(cq);
	ut_link_fini(l);
	free(l);
}

int
main(int argc, char **argv)
{
	(void)argc;
	if (ut_eal_start(argv[0]) < 0)
		return 1;
	test_create();
	UT_NOTE("create");
	test_post_state();
	UT_NOTE("post_state");
	test_post_errors();
	UT_NOTE("post_errors");
	test_err_flush();
	UT_NOTE("err_flush");
	test_sge_unaligned();
	UT_NOTE("sge_unaligned");
	test_reset();
	UT_NOTE("reset");
	test_sqd();
	UT_NOTE("sqd");
	test_modify_path();
	UT_NOTE("modify_path");
	test_cq_overrun();
	UT_NOTE("cq_overrun");
	return ut_summary();
}
