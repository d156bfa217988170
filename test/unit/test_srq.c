/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Shared receive queues (lib/transport/srq.c) on their own and under QPs
 * over the in-memory link (test/common/uroce_test_link.h): create rules,
 * post errors, resize keeping the WQEs and their order, the limit event
 * rules, a failed modify changing nothing; RC QPs sharing one SRQ
 * (multi-packet SENDs, immediate data, two SGEs, the SRQ's own PD, RNR
 * when it runs dry, every QP served); UD (GRH, drop counted when empty);
 * a QP in ERR flushes only the WQE it holds and raises LAST_WQE_REACHED;
 * and a poster, two consumers and a resizer on four threads.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_test.h"
#include "uroce_test_eal.h"
#include "uroce_test_link.h"

#define ACCESS_RECV	(IBV_ACCESS_LOCAL_WRITE)
#define SLOT		(16u << 10)	/* receive buffer of one WQE */
#define SGE0		100u		/* bytes of its first SGE */

static int srq_pd;			/* the SRQs' PD: not the QPs' */

static struct uroce_srq *
srq_new(struct ut_node *n, uint32_t max_wr, uint32_t max_sge)
{
	struct uroce_srq_init init = {
		.type = IBV_SRQT_BASIC, .pd = &srq_pd,
		.max_wr = max_wr, .max_sge = max_sge, .srqn = 1,
	};
	struct uroce_srq *srq = NULL;

	if (!UT_CHECK_EQ(uroce_srq_create(&n->env, &init, &srq), 0))
		return NULL;
	return srq;
}

static int
post_ids(struct uroce_srq *srq, uint64_t first, unsigned int n)
{
	struct ibv_recv_wr wr = { .num_sge = 0 }, *bad = NULL;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < n && ret == 0; i++) {
		wr.wr_id = first + i;
		ret = uroce_srq_post_recv(srq, &wr, &bad);
	}
	return ret;
}

/* The wr_id of the next WQE taken, or UINT64_MAX when empty. */
static uint64_t
take_id(struct uroce_srq *srq)
{
	uint8_t buf[sizeof(struct uroce_recv_wqe) + 8 * sizeof(struct ibv_sge)];
	struct uroce_recv_wqe *w = (struct uroce_recv_wqe *)buf;

	return uroce_srq_take(srq, w) ? w->wr_id : UINT64_MAX;
}

/* ---------------------------------------------------------------------------
 * The object alone.
 */
static void
test_create(struct ut_node *n)
{
	struct uroce_srq_init init = {
		.type = IBV_SRQT_BASIC, .pd = &srq_pd, .max_wr = 5, .max_sge = 3,
	};
	struct uroce_srq *srq = NULL;
	struct ibv_srq_attr a;
	unsigned int i;
	static const struct { enum ibv_srq_type type; uint32_t wr, sge; int err; } bad[] = {
		{ IBV_SRQT_XRC, 4, 1, -EINVAL },	/* no domain, no CQ (test_xrc.c) */
		{ IBV_SRQT_TM, 4, 1, -EINVAL },		/* no CQ, no tm_cap */
		{ (enum ibv_srq_type)7, 4, 1, -EOPNOTSUPP },
		{ IBV_SRQT_BASIC, 0, 1, -EINVAL },
		{ IBV_SRQT_BASIC, 4097, 1, -EINVAL },	/* env max_srq_wr 4096 */
		{ IBV_SRQT_BASIC, 4, 0, -EINVAL },
		{ IBV_SRQT_BASIC, 4, 9, -EINVAL },	/* env max_srq_sge 8 */
	};

	for (i = 0; i < RTE_DIM(bad); i++) {
		struct uroce_srq_init b = init;

		b.type = bad[i].type;
		b.max_wr = bad[i].wr;
		b.max_sge = bad[i].sge;
		UT_CHECK_EQ(uroce_srq_create(&n->env, &b, &srq), bad[i].err);
		UT_NOTE("bad create %u", i);
	}
	init.pd = NULL;
	UT_CHECK_EQ(uroce_srq_create(&n->env, &init, &srq), -EINVAL);
	init.pd = &srq_pd;
	if (!UT_CHECK_EQ(uroce_srq_create(&n->env, &init, &srq), 0))
		return;
	UT_CHECK_EQ(srq->max_wr, 8);		/* >= 5 */
	UT_CHECK_EQ(srq->max_sge, 3);
	uroce_srq_query(srq, &a);
	UT_CHECK_EQ(a.max_wr, 8);
	UT_CHECK_EQ(a.max_sge, 3);
	UT_CHECK_EQ(a.srq_limit, 0);
	uroce_srq_destroy(srq);
	init.max_wr = n->env.max_srq_wr;
	init.max_sge = n->env.max_srq_sge;
	if (UT_CHECK_EQ(uroce_srq_create(&n->env, &init, &srq), 0)) {
		UT_CHECK_EQ(srq->max_wr, n->env.max_srq_wr);
		uroce_srq_destroy(srq);
	}
}

static void
test_post(struct ut_node *n)
{
	struct uroce_srq *srq = srq_new(n, 8, 3);
	struct ibv_sge sge[4] = { { 0 } };
	struct ibv_recv_wr wr[3], *bad = NULL;

	if (srq == NULL)
		return;
	memset(wr, 0, sizeof(wr));
	wr[0] = (struct ibv_recv_wr){ .wr_id = 1, .next = &wr[1], .sg_list = sge, .num_sge = 3 };
	wr[1] = (struct ibv_recv_wr){ .wr_id = 2, .next = &wr[2], .sg_list = sge, .num_sge = 0 };
	wr[2] = (struct ibv_recv_wr){ .wr_id = 3, .sg_list = sge, .num_sge = 4 };
	UT_CHECK_EQ(uroce_srq_post_recv(srq, wr, &bad), -EINVAL);
	UT_CHECK(bad == &wr[2]);		/* the ones before stay posted */
	UT_CHECK_EQ(uroce_srq_count(srq), 2);
	wr[2].num_sge = -1;
	UT_CHECK_EQ(uroce_srq_post_recv(srq, &wr[2], &bad), -EINVAL);
	UT_CHECK_EQ(post_ids(srq, 10, 6), 0);
	UT_CHECK_EQ(post_ids(srq, 16, 1), -ENOMEM);	/* 8 of 8 */
	UT_CHECK_EQ(uroce_srq_count(srq), 8);
	UT_CHECK_EQ(take_id(srq), 1);
	UT_CHECK_EQ(take_id(srq), 2);
	UT_CHECK_EQ(take_id(srq), 10);
	UT_CHECK_EQ(srq->taken, 3);
	uroce_srq_destroy(srq);
}

/* Resize: WQEs and order survive; what is invalid changes nothing. */
static void
test_resize(struct ut_node *n)
{
	struct uroce_srq *srq = srq_new(n, 8, 3);
	struct ibv_srq_attr a, q;
	unsigned int i;

	if (srq == NULL)
		return;
	UT_CHECK_EQ(post_ids(srq, 0, 8), 0);
	memset(&a, 0, sizeof(a));
	a.max_wr = 4;			/* below the 8 outstanding */
	a.srq_limit = 2;		/* valid on its own */
	UT_CHECK_EQ(uroce_srq_modify(srq, &a, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT), -EINVAL);
	a.max_wr = 0;
	UT_CHECK_EQ(uroce_srq_modify(srq, &a, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT), -EINVAL);
	a.max_wr = n->env.max_srq_wr + 1;
	UT_CHECK_EQ(uroce_srq_modify(srq, &a, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT), -EINVAL);
	a.srq_limit = 9;		/* above max_wr 8 */
	UT_CHECK_EQ(uroce_srq_modify(srq, &a, IBV_SRQ_LIMIT), -EINVAL);
	a.srq_limit = 2;
	UT_CHECK_EQ(uroce_srq_modify(srq, &a, IBV_SRQ_LIMIT | 4), -EINVAL);
	uroce_srq_query(srq, &q);
	UT_CHECK_EQ(q.max_wr, 8);
	UT_CHECK_EQ(q.srq_limit, 0);
	UT_CHECK_EQ(uroce_srq_count(srq), 8);
	/* Grow with 8 outstanding, the limit with it (within the new size). */
	a.max_wr = 100;
	a.max_sge = 1;			/* irrelevant to modify */
	a.srq_limit = 3;
	UT_CHECK_EQ(uroce_srq_modify(srq, &a, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT), 0);
	UT_CHECK_EQ(a.max_wr, 128);
	UT_CHECK_EQ(a.max_sge, 3);
	uroce_srq_query(srq, &q);
	UT_CHECK_EQ(q.max_wr, 128);
	UT_CHECK_EQ(q.srq_limit, 3);
	UT_CHECK_EQ(post_ids(srq, 8, 120), 0);
	UT_CHECK_EQ(post_ids(srq, 128, 1), -ENOMEM);
	/* Shrink to exactly what is outstanding. */
	for (i = 0; i < 120; i++)
		UT_CHECK_EQ(take_id(srq), i);
	a.max_wr = 8;
	UT_CHECK_EQ(uroce_srq_modify(srq, &a, IBV_SRQ_MAX_WR), 0);
	UT_CHECK_EQ(a.max_wr, 8);
	for (i = 120; i < 128; i++)
		UT_CHECK_EQ(take_id(srq), i);
	UT_CHECK_EQ(take_id(srq), UINT64_MAX);
	UT_CHECK_EQ(a.srq_limit, 3);	/* not written */
	uroce_srq_destroy(srq);
}

/* The limit: one event when the count drops below it, then disarmed. */
static void
test_limit(struct ut_node *n)
{
	struct uroce_srq *srq = srq_new(n, 16, 1);
	struct ibv_srq_attr a = { 0 }, q;
	unsigned int nev = n->nev;

	if (srq == NULL)
		return;
	UT_CHECK_EQ(post_ids(srq, 0, 5), 0);
	a.srq_limit = 3;
	UT_CHECK_EQ(uroce_srq_modify(srq, &a, IBV_SRQ_LIMIT), 0);
	UT_CHECK_EQ(n->nev, nev);		/* 5 >= 3 */
	take_id(srq);
	take_id(srq);
	UT_CHECK_EQ(n->nev, nev);		/* 3 left: not below 3 */
	uroce_srq_query(srq, &q);
	UT_CHECK_EQ(q.srq_limit, 3);
	take_id(srq);				/* 2 < 3 */
	UT_CHECK_EQ(n->nev, nev + 1);
	UT_CHECK_EQ(n->ev[nev], IBV_EVENT_SRQ_LIMIT_REACHED);
	UT_CHECK(n->ev_obj[nev] == srq);
	uroce_srq_query(srq, &q);
	UT_CHECK_EQ(q.srq_limit, 0);		/* disarmed */
	take_id(srq);
	take_id(srq);
	UT_CHECK_EQ(n->nev, nev + 1);		/* once */
	/* Arming above the count raises it at once. */
	UT_CHECK_EQ(post_ids(srq, 5, 1), 0);
	a.srq_limit = 2;
	UT_CHECK_EQ(uroce_srq_modify(srq, &a, IBV_SRQ_LIMIT), 0);
	UT_CHECK_EQ(n->nev, nev + 2);
	uroce_srq_query(srq, &q);
	UT_CHECK_EQ(q.srq_limit, 0);
	/* 0 disarms: no event. Re-armed at the count: none until a take. */
	a.srq_limit = 0;
	UT_CHECK_EQ(uroce_srq_modify(srq, &a, IBV_SRQ_LIMIT), 0);
	a.srq_limit = 1;
	UT_CHECK_EQ(uroce_srq_modify(srq, &a, IBV_SRQ_LIMIT), 0);
	UT_CHECK_EQ(n->nev, nev + 2);
	UT_CHECK_EQ(take_id(srq), 5);
	UT_CHECK_EQ(n->nev, nev + 3);
	UT_CHECK_EQ(srq->limit_events, 3);
	uroce_srq_destroy(srq);
}

/* ---------------------------------------------------------------------------
 * Under QPs.
 */
#define NQP	4
#define NMSG	12		/* SENDs per QP */
#define NWQE	8		/* receive WQEs the SRQ holds at a time */
#define SBUF_LEN	(NQP * NMSG * 4096)	/* a buffer per message */

struct shared {
	struct ut_link l;
	struct uroce_srq *srq;
	struct uroce_qp *qa[NQP], *qb[NQP];
	uint8_t *sbuf, *rbuf;
	struct uroce_mr *smr, *rmr;
	/* Progress of the receive side. */
	unsigned int got[NQP], total, want;
	uint32_t len[NQP][NMSG];
	bool ud;
};

static uint32_t
msg_len(unsigned int q, unsigned int m)
{
	/* 0 B to three path MTUs and a bit, one of each size class. */
	static const uint32_t sz[] = { 0, 1, 99, 1024, 1025, 3 * 1024 + 7, 2048 };

	return sz[(q + m) % RTE_DIM(sz)];
}

static uint8_t
msg_byte(unsigned int q, unsigned int m, uint32_t i)
{
	return (uint8_t)(q * 31 + m * 7 + i);
}

/* Receive WQE slot: SGE0 bytes, then the rest of the slot after a gap. */
static void
post_slot(struct shared *s, unsigned int slot)
{
	uint8_t *b = s->rbuf + (size_t)slot * SLOT * 2;
	struct ibv_sge sge[2] = {
		{ (uintptr_t)b, SGE0, s->rmr->lkey },
		{ (uintptr_t)(b + SLOT), SLOT - SGE0, s->rmr->lkey },
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = sge, .num_sge = 2 }, *bad;

	memset(b, 0, SGE0);
	memset(b + SLOT, 0, SLOT - SGE0);
	UT_CHECK_EQ(uroce_srq_post_recv(s->srq, &wr, &bad), 0);
}

/* The message byte i of a WQE slot (UD: after the GRH). */
static uint8_t
slot_byte(const struct shared *s, unsigned int slot, uint32_t i)
{
	const uint8_t *b = s->rbuf + (size_t)slot * SLOT * 2;

	return i < SGE0 ? b[i] : b[SLOT + i - SGE0];
}

static int
shared_init(struct shared *s, uint64_t seed, enum ibv_qp_type type)
{
	size_t rlen = (size_t)NWQE * SLOT * 2;
	struct ut_qp_opts o;
	unsigned int q;
	int ret;

	memset(s, 0, sizeof(*s));
	s->ud = type == IBV_QPT_UD;
	if (ut_link_init(&s->l, seed, IBV_MTU_1024) != 0)
		return -ENOMEM;
	s->srq = srq_new(&s->l.node[1], NWQE, 2);
	s->sbuf = aligned_alloc(4096, SBUF_LEN);
	s->rbuf = aligned_alloc(4096, rlen);
	if (s->srq == NULL || s->sbuf == NULL || s->rbuf == NULL)
		return -ENOMEM;
	s->smr = ut_node_reg(&s->l.node[0], s->sbuf, SBUF_LEN, ACCESS_RECV);
	/* The receive buffers belong to the SRQ's PD (IBTA 10.2.9). */
	ret = uroce_mr_reg(s->l.node[1].mrs, &srq_pd, s->rbuf, rlen,
			   (uintptr_t)s->rbuf, ACCESS_RECV, &s->rmr);
	if (s->smr == NULL || ret != 0)
		return -EINVAL;
	ut_qp_opts_default(&o, type);
	o.min_rnr_timer = 1;
	for (q = 0; q < NQP && ret == 0; q++) {
		o.srq = NULL;
		ret = ut_node_qp(&s->l.node[0], &o, 0x100 + q, &s->qa[q]);
		o.srq = s->srq;
		if (ret == 0)
			ret = ut_node_qp(&s->l.node[1], &o, 0x200 + q, &s->qb[q]);
		if (ret == 0)
			ret = ut_qp_up(&s->l, 0, s->qa[q], 0x200 + q, &o);
		if (ret == 0)
			ret = ut_qp_up(&s->l, 1, s->qb[q], 0x100 + q, &o);
	}
	return ret;
}

static void
shared_fini(struct shared *s)
{
	ut_link_fini(&s->l);
	uroce_srq_destroy(s->srq);
	free(s->sbuf);
	free(s->rbuf);
}

/* Message m of QP q: its first bytes say q and m, imm = q << 16 | m. */
static int
send_msg(struct shared *s, unsigned int q, unsigned int m, struct uroce_ah *ah)
{
	uint32_t len = msg_len(q, m), i;
	uint8_t *b = s->sbuf + ((size_t)q * NMSG + m) * 4096;
	struct ibv_sge sge = { (uintptr_t)b, len, s->smr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = m, .sg_list = &sge, .num_sge = 1,
		.opcode = (m & 1) ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = rte_cpu_to_be_32(q << 16 | m),
	}, *bad;

	for (i = 0; i < len; i++)
		b[i] = msg_byte(q, m, i);
	if (ah != NULL) {
		wr.wr.ud.ah = (struct ibv_ah *)ah;
		wr.wr.ud.remote_qpn = s->qb[q]->qpn;
		wr.wr.ud.remote_qkey = 0x11111111;
	}
	s->len[q][m] = len;
	return uroce_qp_post_send(s->qa[q], &wr, &bad);
}

/* Which B QP a qp_num is. */
static int
qb_index(const struct shared *s, uint32_t qpn)
{
	unsigned int q;

	for (q = 0; q < NQP; q++)
		if (s->qb[q]->qpn == qpn)
			return (int)q;
	return -1;
}

/* One receive completion: in order per QP, byte-exact, its slot reposted. */
static void
check_recv(struct shared *s, const struct ibv_wc *wc)
{
	int q = qb_index(s, wc->qp_num);
	uint32_t off = s->ud ? UROCE_GRH_LEN : 0, i;
	unsigned int m;
	bool same = true;

	if (!UT_CHECK(q >= 0) || !UT_CHECK_EQ(wc->status, IBV_WC_SUCCESS))
		return;
	m = s->got[q]++;
	s->total++;
	UT_CHECK_EQ(wc->opcode, IBV_WC_RECV);
	UT_CHECK_EQ(wc->byte_len, s->len[q][m] + off);
	UT_CHECK_EQ(wc->src_qp, s->qa[q]->qpn);
	UT_CHECK_EQ(!!(wc->wc_flags & IBV_WC_WITH_IMM), m & 1);
	if (m & 1)
		UT_CHECK_EQ(rte_be_to_cpu_32(wc->imm_data), (uint32_t)q << 16 | m);
	for (i = 0; i < s->len[q][m]; i++)
		same = same && slot_byte(s, (unsigned int)wc->wr_id, off + i) ==
			       msg_byte((unsigned int)q, m, i);
	UT_CHECK(same);
	if (s->ud) {
		UT_CHECK(wc->wc_flags & IBV_WC_GRH);
		/* IPv4: the header in the last 20 of the GRH's 40 bytes. */
		UT_CHECK_EQ(slot_byte(s, (unsigned int)wc->wr_id, 20), 0x45);
	}
	UT_NOTE("qp %d message %u", q, m);
	post_slot(s, (unsigned int)wc->wr_id);
}

static bool
recv_all(struct ut_link *l, void *ctx)
{
	struct shared *s = ctx;
	struct ibv_wc wc;

	(void)l;
	while (uroce_cq_poll(s->l.node[1].rcq, 1, &wc) == 1)
		check_recv(s, &wc);
	return s->total >= s->want;
}

/* Four RC QPs share an SRQ of 8 WQEs for 48 messages: every message lands
 * byte-exact in a WQE of the SRQ, RNR NAKs while it is dry, and every QP
 * gets all of its messages (in order, no QP left out). */
static void
test_rc_shared(void)
{
	struct shared *s = calloc(1, sizeof(*s));
	unsigned int q, m;
	uint64_t rnr = 0;

	if (!UT_CHECK(s != NULL) || !UT_CHECK_EQ(shared_init(s, 21, IBV_QPT_RC), 0))
		goto out;
	for (m = 0; m < NWQE; m++)
		post_slot(s, m);
	for (m = 0; m < NMSG; m++)
		for (q = 0; q < NQP; q++)
			UT_CHECK_EQ(send_msg(s, q, m, NULL), 0);
	s->want = NQP * NMSG;
	UT_CHECK(ut_link_run(&s->l, recv_all, s, ut_link_us(1000000), 1000000));
	for (q = 0; q < NQP; q++) {
		UT_CHECK_EQ(s->got[q], NMSG);
		UT_CHECK_EQ(s->qb[q]->stats.srq_taken, NMSG);
		rnr += s->qb[q]->stats.rnr_naks_tx;
		UT_CHECK_EQ(s->qb[q]->cap.max_recv_wr, 0);
	}
	UT_CHECK(rnr > 0);			/* the SRQ ran dry */
	UT_CHECK_EQ(s->srq->taken, NQP * NMSG);
	UT_CHECK_EQ(uroce_srq_count(s->srq), NWQE);
out:
	if (s != NULL)
		shared_fini(s);
	free(s);
}

/* UD QPs sharing an SRQ: the GRH in front, drops counted when it is empty. */
static void
test_ud_shared(void)
{
	struct shared *s = calloc(1, sizeof(*s));
	struct uroce_ah ah;
	unsigned int q;

	if (!UT_CHECK(s != NULL) || !UT_CHECK_EQ(shared_init(s, 22, IBV_QPT_UD), 0))
		goto out;
	ut_link_ah(&s->l, 0, 0, &ah);
	for (q = 0; q < 2; q++)
		post_slot(s, q);
	/* Two datagrams for QP 0, two WQEs: both land. Then, the SRQ empty,
	 * one for each QP: dropped and counted (UD has no RNR). */
	UT_CHECK_EQ(send_msg(s, 0, 0, &ah), 0);
	UT_CHECK_EQ(send_msg(s, 0, 1, &ah), 0);
	s->want = 2;
	UT_CHECK(ut_link_run(&s->l, recv_all, s, ut_link_us(1000), 10000));
	UT_CHECK_EQ(s->got[0], 2);
	UT_CHECK_EQ(uroce_srq_count(s->srq), 2);	/* reposted */
	while (uroce_srq_count(s->srq) > 0)
		take_id(s->srq);
	UT_CHECK_EQ(send_msg(s, 0, 2, &ah), 0);
	UT_CHECK_EQ(send_msg(s, 1, 0, &ah), 0);
	ut_link_settle(&s->l, ut_link_us(1000));
	UT_CHECK_EQ(s->qb[0]->stats.drop_no_rwqe, 1);
	UT_CHECK_EQ(s->qb[1]->stats.drop_no_rwqe, 1);
	UT_CHECK_EQ(s->total, 2);
out:
	if (s != NULL)
		shared_fini(s);
	free(s);
}

/* Drops the first SEND_LAST from A to B. */
static bool
drop_last(struct ut_link *l, int from, const struct uroce_pkt *pkt, void *ctx)
{
	bool *dropped = ctx;

	(void)l;
	if (from != 0 || *dropped || pkt->bth.opcode != UROCE_OPC_RC_SEND_LAST)
		return true;
	*dropped = true;
	return false;
}

static bool
srq_taken_one(struct ut_link *l, void *ctx)
{
	(void)l;
	return ((struct uroce_srq *)ctx)->taken == 1 && l->dir[1].n == 0;
}

/* A QP that enters ERR flushes the WQE it took (the message in progress),
 * leaves the SRQ's WQEs to the others, and raises LAST_WQE_REACHED. */
static void
test_err_flush(void)
{
	struct shared *s = calloc(1, sizeof(*s));
	struct ut_node *nb;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;
	bool dropped = false;
	unsigned int nev, m;

	if (!UT_CHECK(s != NULL) || !UT_CHECK_EQ(shared_init(s, 23, IBV_QPT_RC), 0))
		goto out;
	nb = &s->l.node[1];
	for (m = 0; m < 4; m++)
		post_slot(s, m);
	/* QP 0: a 2-packet SEND whose last packet is lost; B holds its WQE. */
	s->l.tap = drop_last;
	s->l.tap_ctx = &dropped;
	UT_CHECK_EQ(send_msg(s, 0, 4, NULL), 0);	/* 1025 B, no imm */
	UT_CHECK(ut_link_run(&s->l, srq_taken_one, s->srq, 0, 100));
	UT_CHECK(dropped);
	UT_CHECK(s->qb[0]->srq_held);
	UT_CHECK_EQ(uroce_srq_count(s->srq), 3);
	nev = nb->nev;
	UT_CHECK_EQ(uroce_qp_modify(s->qb[0], &a, IBV_QP_STATE, s->l.now), 0);
	/* One flush completion: the held WQE (slot 0), nothing of the SRQ's. */
	UT_CHECK_EQ(uroce_cq_poll(nb->rcq, 1, &wc), 1);
	UT_CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	UT_CHECK_EQ(wc.wr_id, 0);
	UT_CHECK_EQ(wc.qp_num, s->qb[0]->qpn);
	UT_CHECK_EQ(uroce_cq_poll(nb->rcq, 1, &wc), 0);
	UT_CHECK_EQ(uroce_srq_count(s->srq), 3);
	UT_CHECK_EQ(nb->nev, nev + 1);
	UT_CHECK_EQ(nb->ev[nev], IBV_EVENT_QP_LAST_WQE_REACHED);
	UT_CHECK(nb->ev_obj[nev] == s->qb[0]);
	/* QP 1 (nothing held) in ERR: the event, no completion. */
	UT_CHECK_EQ(uroce_qp_modify(s->qb[1], &a, IBV_QP_STATE, s->l.now), 0);
	UT_CHECK_EQ(uroce_cq_poll(nb->rcq, 1, &wc), 0);
	UT_CHECK_EQ(nb->nev, nev + 2);
	UT_CHECK(nb->ev_obj[nev + 1] == s->qb[1]);
	/* QP 2 still receives from the SRQ's WQEs. */
	s->got[2] = 0;
	s->want = 3;
	for (m = 0; m < 3; m++)
		UT_CHECK_EQ(send_msg(s, 2, m, NULL), 0);
	UT_CHECK(ut_link_run(&s->l, recv_all, s, ut_link_us(1000000), 100000));
	UT_CHECK_EQ(s->got[2], 3);
	UT_CHECK_EQ(uroce_srq_count(s->srq), 3);	/* reposted by recv_all */
out:
	if (s != NULL)
		shared_fini(s);
	free(s);
}

/* ---------------------------------------------------------------------------
 * Threads: a poster, two consumers and a resizer.
 */
#define STRESS_N	200000u

struct stress {
	struct uroce_srq *srq;
	uint32_t taken;				/* atomic */
	uint32_t stop;				/* atomic */
	uint8_t *seen;				/* per wr_id, atomic adds */
	uint32_t order_bad;			/* atomic */
	uint32_t resizes, limit_events;		/* atomic */
};

static void
stress_async(void *ctx, enum ibv_event_type ev, void *obj)
{
	struct stress *st = ctx;

	(void)obj;
	if (ev == IBV_EVENT_SRQ_LIMIT_REACHED)
		__atomic_fetch_add(&st->limit_events, 1, __ATOMIC_RELAXED);
}

static void *
stress_post(void *arg)
{
	struct stress *st = arg;
	uint32_t i = 0;

	while (i < STRESS_N) {
		if (post_ids(st->srq, i, 1) == 0)
			i++;
		else
			sched_yield();
	}
	return NULL;
}

static void *
stress_take(void *arg)
{
	struct stress *st = arg;
	uint64_t id, last = 0;
	bool first = true;

	while (__atomic_load_n(&st->taken, __ATOMIC_RELAXED) < STRESS_N) {
		id = take_id(st->srq);
		if (id == UINT64_MAX) {
			sched_yield();
			continue;
		}
		/* FIFO: one consumer sees its ids rise, resizes or not. */
		if (!first && id <= last)
			__atomic_fetch_add(&st->order_bad, 1, __ATOMIC_RELAXED);
		first = false;
		last = id;
		if (id < STRESS_N)
			__atomic_fetch_add(&st->seen[id], 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&st->taken, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *
stress_resize(void *arg)
{
	struct stress *st = arg;
	struct ibv_srq_attr a = { 0 };
	unsigned int k = 0;

	while (__atomic_load_n(&st->taken, __ATOMIC_RELAXED) < STRESS_N) {
		a.max_wr = (k++ & 1) ? 64 : 1024;
		a.srq_limit = 16;
		/* Shrinking below what is outstanding fails, and changes
		 * nothing; growing always works. */
		if (uroce_srq_modify(st->srq, &a, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT) == 0)
			__atomic_fetch_add(&st->resizes, 1, __ATOMIC_RELAXED);
		sched_yield();
	}
	return NULL;
}

static void
test_threads(void)
{
	struct uroce_qp_env_ops ops = { .async_event = stress_async };
	struct uroce_qp_env env = { .ops = &ops, .max_srq_wr = 4096, .max_srq_sge = 1 };
	struct stress st = { 0 };
	pthread_t t[4];
	unsigned int i, once = 0;

	env.ctx = &st;
	st.seen = calloc(STRESS_N, 1);
	{
		struct uroce_srq_init init = {
			.type = IBV_SRQT_BASIC, .pd = &srq_pd, .max_wr = 64, .max_sge = 1,
		};

		if (!UT_CHECK(st.seen != NULL) ||
		    !UT_CHECK_EQ(uroce_srq_create(&env, &init, &st.srq), 0)) {
			free(st.seen);
			return;
		}
	}
	pthread_create(&t[0], NULL, stress_post, &st);
	pthread_create(&t[1], NULL, stress_take, &st);
	pthread_create(&t[2], NULL, stress_take, &st);
	pthread_create(&t[3], NULL, stress_resize, &st);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < STRESS_N; i++)
		once += st.seen[i] == 1;
	UT_CHECK_EQ(once, STRESS_N);		/* each WQE taken exactly once */
	UT_CHECK_EQ(st.taken, STRESS_N);
	UT_CHECK_EQ(st.order_bad, 0);
	UT_CHECK(st.resizes > 0);
	UT_CHECK_EQ(st.limit_events, st.srq->limit_events);
	printf("threads: %u resizes, %u limit events\n", st.resizes,
	       st.limit_events);
	uroce_srq_destroy(st.srq);
	free(st.seen);
}

int
main(int argc, char **argv)
{
	struct ut_link *l = calloc(1, sizeof(*l));

	(void)argc;
	if (ut_eal_init(argv[0], NULL) < 0 || l == NULL ||
	    ut_link_init(l, 1, IBV_MTU_1024) != 0) {
		fprintf(stderr, "set-up failed\n");
		return 1;
	}
	test_create(&l->node[0]);
	test_post(&l->node[0]);
	test_resize(&l->node[0]);
	test_limit(&l->node[0]);
	ut_link_fini(l);
	free(l);
	test_rc_shared();
	test_ud_shared();
	test_err_flush();
	test_threads();
	return ut_summary();
}
