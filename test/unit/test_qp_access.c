/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The responder's QP access rules over the in-memory link: a remote
 * operation needs both the region's right and the QP's enable in
 * qp_access_flags (RDMA Write for WRITE and WRITE with immediate, RDMA Read,
 * Atomic). For each operation, with a region that allows everything: the
 * QP with only the one enable it needs executes it; after an RTS -> RTS
 * modify takes that enable away (every other one kept), the same request
 * is refused: NAK Remote Access Error, IBV_WC_REM_ACCESS_ERR at the
 * requester, the responder's QP in ERR with one IBV_EVENT_QP_ACCESS_ERR
 * naming it (and no event at the requester, whose completion reports it),
 * its access_denied counter moved, and the target memory and the guard
 * bytes around it untouched. A UC WRITE is dropped without an answer or
 * event, and the QP goes on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_test.h"
#include "uroce_test_eal.h"
#include "uroce_test_link.h"

#define BUF_LEN		(64u * 1024)
#define PAT		0xa5
#define ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define REMOTE_ALL	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)
#define MSG_LEN		3000u	/* three packets at a 1024-byte path MTU */
#define NAK_REM_ACCESS	2	/* naks_tx[]/naks_rx[]: Remote Access Error */

/* A registered buffer with a page of guard bytes on each side. */
struct gbuf {
	uint8_t *raw, *mem;
	struct uroce_mr *mr;
};

struct env {
	struct ut_link l;
	struct gbuf la, lb, rb;	/* A's local, B's receive area, B's target */
	struct uroce_qp *qa, *qb;
};

static int
gbuf_init(struct gbuf *b, struct ut_node *n)
{
	b->raw = aligned_alloc(4096, BUF_LEN + 2 * 4096);
	if (b->raw == NULL)
		return -ENOMEM;
	memset(b->raw, PAT, BUF_LEN + 2 * 4096);
	b->mem = b->raw + 4096;
	b->mr = ut_node_reg(n, b->mem, BUF_LEN, ACCESS_ALL);
	return b->mr != NULL ? 0 : -EINVAL;
}

/* Every byte of the buffer and of its guards is still PAT. */
static bool
gbuf_untouched(const struct gbuf *b)
{
	size_t i;

	for (i = 0; i < BUF_LEN + 2 * 4096; i++)
		if (b->raw[i] != PAT)
			return false;
	return true;
}

static bool
gbuf_guards_ok(const struct gbuf *b)
{
	size_t i;

	for (i = 0; i < 4096; i++)
		if (b->raw[i] != PAT || b->raw[4096 + BUF_LEN + i] != PAT)
			return false;
	return true;
}

static struct env *
env_new(uint64_t seed, enum ibv_qp_type type)
{
	struct env *e = calloc(1, sizeof(*e));
	struct ut_qp_opts o;

	ut_qp_opts_default(&o, type);
	if (e == NULL) {
		UT_CHECK(!"environment");
		exit(1);
	}
	if (ut_link_init(&e->l, seed, IBV_MTU_4096) != 0 ||
	    gbuf_init(&e->la, &e->l.node[0]) != 0 ||
	    gbuf_init(&e->lb, &e->l.node[1]) != 0 ||
	    gbuf_init(&e->rb, &e->l.node[1]) != 0 ||
	    ut_link_pair(&e->l, &o, 0x101, 0x202, &e->qa, &e->qb) != 0) {
		UT_CHECK(!"environment");
		return e;	/* freed by env_free(), qa NULL */
	}
	return e;
}

static void
env_free(struct env *e)
{
	if (e == NULL)
		return;
	ut_link_fini(&e->l);
	free(e->la.raw);
	free(e->lb.raw);
	free(e->rb.raw);
	free(e);
}

/* ibv_modify_qp(RTS -> RTS, IBV_QP_ACCESS_FLAGS) on B's QP. */
static int
set_access(struct env *e, unsigned int flags)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.qp_access_flags = flags;
	return uroce_qp_modify(e->qb, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS,
			       e->l.now);
}

struct want_n {
	struct uroce_cq *cq;
	unsigned int n, got;
	struct ibv_wc wc[8];
};

static bool
got_n(struct ut_link *l, void *ctx)
{
	struct want_n *w = ctx;
	int n;

	(void)l;
	n = uroce_cq_poll(w->cq, (int)(RTE_DIM(w->wc) - w->got), w->wc + w->got);
	if (n > 0)
		w->got += n;
	return w->got >= w->n;
}

/* One signaled WR from A towards B's target buffer. */
static int
post_op(struct env *e, enum ibv_wr_opcode op, uint64_t wr_id, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)e->la.mem, len, e->la.mr->lkey };
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = 0x1234;
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		sge.length = 8;
		wr.wr.atomic.remote_addr = (uintptr_t)e->rb.mem;
		wr.wr.atomic.rkey = e->rb.mr->rkey;
		wr.wr.atomic.compare_add = 0xa5a5a5a5a5a5a5a5ull; /* matches */
		wr.wr.atomic.swap = 7;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)e->rb.mem;
		wr.wr.rdma.rkey = e->rb.mr->rkey;
	}
	return uroce_qp_post_send(e->qa, &wr, &bad);
}

static int
post_recv_b(struct env *e, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)e->lb.mem, 64, e->lb.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return uroce_qp_post_recv(e->qb, &wr, &bad);
}

struct op_case {
	const char *name;
	enum ibv_wr_opcode op;
	unsigned int need;	/* the QP enable it needs */
	uint32_t len;
};

static const struct op_case cases[] = {
	{ "WRITE", IBV_WR_RDMA_WRITE, IBV_ACCESS_REMOTE_WRITE, MSG_LEN },
	{ "WRITE 0 bytes", IBV_WR_RDMA_WRITE, IBV_ACCESS_REMOTE_WRITE, 0 },
	{ "WRITE_WITH_IMM", IBV_WR_RDMA_WRITE_WITH_IMM, IBV_ACCESS_REMOTE_WRITE,
	  MSG_LEN },
	{ "READ", IBV_WR_RDMA_READ, IBV_ACCESS_REMOTE_READ, MSG_LEN },
	{ "CMP_AND_SWP", IBV_WR_ATOMIC_CMP_AND_SWP, IBV_ACCESS_REMOTE_ATOMIC, 8 },
	{ "FETCH_AND_ADD", IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_ACCESS_REMOTE_ATOMIC, 8 },
};

static bool
is_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* The QP with only the enable the operation needs: it executes. */
static void
rc_allowed(struct env *e, const struct op_case *c)
{
	struct want_n w = { .cq = e->qa->send_cq, .n = 1 };
	struct want_n wr = { .cq = e->qb->recv_cq, .n = 1 };

	UT_CHECK_EQ(set_access(e, IBV_ACCESS_LOCAL_WRITE | c->need), 0);
	ut_fill_rand(e->la.mem, MSG_LEN);
	if (c->op == IBV_WR_RDMA_WRITE_WITH_IMM)
		UT_CHECK_EQ(post_recv_b(e, 9), 0);
	UT_CHECK_EQ(post_op(e, c->op, 1, c->len), 0);
	UT_CHECK(ut_link_run(&e->l, got_n, &w, ut_link_us(1000000), 100000));
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_SUCCESS);
	if (c->op == IBV_WR_RDMA_WRITE || c->op == IBV_WR_RDMA_WRITE_WITH_IMM)
		UT_CHECK_MEM(e->rb.mem, e->la.mem, c->len);
	if (c->op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		UT_CHECK(ut_link_run(&e->l, got_n, &wr, ut_link_us(1000000), 100000));
		UT_CHECK_EQ(wr.wc[0].status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wr.wc[0].imm_data, 0x1234);
	}
	if (c->op == IBV_WR_RDMA_READ)
		UT_CHECK_MEM(e->la.mem, e->rb.mem, c->len);
	if (is_atomic(c->op)) {
		uint64_t orig;

		memcpy(&orig, e->la.mem, 8);
		UT_CHECK_EQ(orig, 0xa5a5a5a5a5a5a5a5ull);
		UT_CHECK(e->rb.mem[0] != PAT);	/* swapped or added to */
	}
	UT_CHECK(gbuf_guards_ok(&e->rb));
	UT_CHECK_EQ(e->qb->stats.access_denied, 0);
	UT_CHECK_EQ(e->qb->state, IBV_QPS_RTS);
	UT_CHECK_EQ(e->l.node[1].nev, 0);
}

/* Every enable but the one it needs: refused, nothing touched. */
static void
rc_refused(struct env *e, const struct op_case *c)
{
	struct want_n w = { .cq = e->qa->send_cq, .n = 1 };
	struct want_n wr = { .cq = e->qb->recv_cq, .n = 1 };
	uint8_t local[MSG_LEN];

	/* the target and A's buffer back to the pattern */
	memset(e->rb.mem, PAT, BUF_LEN);
	memset(e->la.mem, PAT, BUF_LEN);
	ut_fill_rand(e->la.mem, c->op == IBV_WR_RDMA_READ ? 0 : MSG_LEN);
	memcpy(local, e->la.mem, sizeof(local));
	UT_CHECK_EQ(set_access(e, (IBV_ACCESS_LOCAL_WRITE | REMOTE_ALL) & ~c->need), 0);
	if (c->op == IBV_WR_RDMA_WRITE_WITH_IMM)
		UT_CHECK_EQ(post_recv_b(e, 10), 0);
	UT_CHECK_EQ(post_op(e, c->op, 2, c->len), 0);
	UT_CHECK(ut_link_run(&e->l, got_n, &w, ut_link_us(1000000), 100000));
	UT_CHECK_EQ(w.wc[0].wr_id, 2);
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_REM_ACCESS_ERR);
	UT_CHECK(gbuf_untouched(&e->rb));
	UT_CHECK_MEM(e->la.mem, local, sizeof(local));	/* no READ data, no result */
	UT_CHECK_EQ(e->qb->stats.access_denied, 1);
	UT_CHECK_EQ(e->qb->stats.naks_tx[NAK_REM_ACCESS], 1);
	UT_CHECK_EQ(e->qa->stats.naks_rx[NAK_REM_ACCESS], 1);
	UT_CHECK_EQ(e->qb->state, IBV_QPS_ERR);
	UT_CHECK_EQ(e->qa->state, IBV_QPS_ERR);
	/* IBTA 11.6.3: the responder's QP has no completion to say it */
	if (UT_CHECK_EQ(e->l.node[1].nev, 1)) {
		UT_CHECK_EQ(e->l.node[1].ev[0], IBV_EVENT_QP_ACCESS_ERR);
		UT_CHECK(e->l.node[1].ev_obj[0] == e->qb);
	}
	UT_CHECK_EQ(e->l.node[0].nev, 0);
	if (c->op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		/* the receive WQE is flushed, never completed with the data */
		UT_CHECK(ut_link_run(&e->l, got_n, &wr, ut_link_us(1000000), 100000));
		UT_CHECK_EQ(wr.wc[0].wr_id, 10);
		UT_CHECK_EQ(wr.wc[0].status, IBV_WC_WR_FLUSH_ERR);
	}
}

static void
test_rc(void)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(cases); i++) {
		struct env *e = env_new(100 + i, IBV_QPT_RC);

		if (e->qa != NULL) {
			rc_allowed(e, &cases[i]);
			rc_refused(e, &cases[i]);
		}
		UT_NOTE("RC %s: allowed with its enable, refused without", cases[i].name);
		env_free(e);
	}
}

/* Without any remote enable (qp_access_flags LOCAL_WRITE only, the
 * default of a QP created without IBV_QP_ACCESS_FLAGS is 0) a region that
 * allows everything is still out of reach. */
static void
test_rc_none(void)
{
	struct env *e = env_new(200, IBV_QPT_RC);
	struct want_n w = { .n = 1 };

	if (e->qa != NULL) {
		w.cq = e->qa->send_cq;
		UT_CHECK_EQ(set_access(e, 0), 0);
		UT_CHECK_EQ(post_op(e, IBV_WR_RDMA_WRITE, 3, 100), 0);
		UT_CHECK(ut_link_run(&e->l, got_n, &w, ut_link_us(1000000), 100000));
		UT_CHECK_EQ(w.wc[0].status, IBV_WC_REM_ACCESS_ERR);
		UT_CHECK(gbuf_untouched(&e->rb));
		UT_CHECK_EQ(e->qb->stats.access_denied, 1);
	}
	UT_NOTE("RC: no remote enable at all");
	env_free(e);
}

/* UC: a WRITE the QP does not enable is dropped, all its packets, with no
 * answer; the QP stays in RTS and takes the next allowed WRITE. */
static void
test_uc(void)
{
	struct env *e = env_new(300, IBV_QPT_UC);
	struct want_n w = { .n = 1 }, wr = { .n = 1 };
	uint64_t drops;

	if (e->qa == NULL) {
		env_free(e);
		return;
	}
	w.cq = e->qa->send_cq;
	wr.cq = e->qb->recv_cq;
	UT_CHECK_EQ(set_access(e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ), 0);
	ut_fill_rand(e->la.mem, MSG_LEN);
	UT_CHECK_EQ(post_recv_b(e, 11), 0);
	UT_CHECK_EQ(post_op(e, IBV_WR_RDMA_WRITE, 4, MSG_LEN), 0);
	UT_CHECK_EQ(post_op(e, IBV_WR_RDMA_WRITE_WITH_IMM, 5, MSG_LEN), 0);
	w.n = 2;
	UT_CHECK(ut_link_run(&e->l, got_n, &w, ut_link_us(1000000), 100000));
	ut_link_settle(&e->l, ut_link_us(1000));
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_SUCCESS);	/* UC: sent is done */
	UT_CHECK_EQ(w.wc[1].status, IBV_WC_SUCCESS);
	UT_CHECK(gbuf_untouched(&e->rb));
	UT_CHECK_EQ(e->qb->stats.access_denied, 2);	/* one per message */
	drops = e->qb->stats.drops;
	UT_CHECK_EQ(drops, 6);				/* every packet */
	UT_CHECK_EQ(e->qb->stats.acks_tx + e->qb->stats.naks_tx[NAK_REM_ACCESS], 0);
	UT_CHECK_EQ(e->qb->state, IBV_QPS_RTS);
	UT_CHECK(!got_n(&e->l, &wr));			/* its receive kept */
	/* the enable back: the next WRITE_WITH_IMM lands in the kept WQE */
	UT_CHECK_EQ(set_access(e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE), 0);
	UT_CHECK_EQ(post_op(e, IBV_WR_RDMA_WRITE_WITH_IMM, 6, MSG_LEN), 0);
	UT_CHECK(ut_link_run(&e->l, got_n, &wr, ut_link_us(1000000), 100000));
	UT_CHECK_EQ(wr.wc[0].wr_id, 11);
	UT_CHECK_EQ(wr.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_EQ(wr.wc[0].byte_len, MSG_LEN);
	UT_CHECK_MEM(e->rb.mem, e->la.mem, MSG_LEN);
	UT_CHECK(gbuf_guards_ok(&e->rb));
	UT_CHECK_EQ(e->qb->stats.access_denied, 2);
	UT_CHECK_EQ(e->l.node[1].nev, 0);
	UT_NOTE("UC WRITE without the enable dropped, the QP goes on");
	env_free(e);
}

int
main(int argc, char **argv)
{
	(void)argc;
	if (ut_eal_start(argv[0]) < 0)
		return 1;
	test_rc();
	test_rc_none();
	test_uc();
	return ut_summary();
}
