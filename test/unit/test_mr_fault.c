/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Memory that goes away after its registration (uroce_memguard.h), over
 * the in-memory link: a region registered, then unmapped, is reached by
 * each access of the data path, and the process lives on with the error
 * on the QP:
 *  - the responder's WRITE, READ and FETCH_AND_ADD into it: NAK Remote
 *    Access Error, IBV_WC_REM_ACCESS_ERR at the requester, the responder's
 *    QP in ERR with IBV_EVENT_QP_ACCESS_ERR, the fault counted;
 *  - a SEND into a receive buffer in it: IBV_WC_LOC_PROT_ERR at the
 *    receiver, IBV_WC_REM_OP_ERR at the sender;
 *  - a SEND gathered from it (copied, and zero-copy) and a READ response
 *    scattered into it: IBV_WC_LOC_PROT_ERR at the requester;
 *  - an on-demand region registered over a hole that is mapped afterwards
 *    takes a WRITE intact; the implicit region's WRITE to the first page
 *    or to an address that is not canonical is a remote access error.
 * And the handler leaves other faults to the handler installed before it.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "uroce_memguard.h"
#include "uroce_test.h"
#include "uroce_test_eal.h"
#include "uroce_test_link.h"

#define LEN		8192u	/* two pages, several packets */
#define PAGE		4096u
#define NAK_REM_ACCESS	2	/* naks_tx[]: Remote Access Error */
#define ALL		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

struct env {
	struct ut_link l;
	uint8_t *ok[2];			/* mapped buffer of each side */
	struct uroce_mr *ok_mr[2];
	uint8_t *gone;			/* registered on gone_side, unmapped */
	struct uroce_mr *gone_mr;
	struct uroce_qp *qa, *qb;
};

static uint8_t *
map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* A pair of RC QPs; side gone_side has a region it then unmaps. */
static struct env *
env_new(uint64_t seed, int gone_side, unsigned int gone_access)
{
	struct env *e = calloc(1, sizeof(*e));
	struct ut_qp_opts o;
	int i;

	ut_qp_opts_default(&o, IBV_QPT_RC);
	if (e == NULL || ut_link_init(&e->l, seed, IBV_MTU_4096) != 0)
		exit(1);
	for (i = 0; i < 2; i++) {
		e->ok[i] = map(LEN);
		e->ok_mr[i] = e->ok[i] == NULL ? NULL :
			ut_node_reg(&e->l.node[i], e->ok[i], LEN, ALL);
	}
	e->gone = map(LEN);
	e->gone_mr = e->gone == NULL ? NULL :
		ut_node_reg(&e->l.node[gone_side], e->gone, LEN, gone_access);
	if (e->ok_mr[0] == NULL || e->ok_mr[1] == NULL || e->gone_mr == NULL ||
	    munmap(e->gone, LEN) != 0 ||
	    ut_link_pair(&e->l, &o, 0x101, 0x202, &e->qa, &e->qb) != 0) {
		UT_CHECK(!"environment");
		exit(1);
	}
	return e;
}

static void
env_free(struct env *e)
{
	ut_link_fini(&e->l);
	munmap(e->ok[0], LEN);
	munmap(e->ok[1], LEN);
	free(e);
}

static bool
got_one(struct ut_link *l, void *ctx)
{
	struct ibv_wc *wc = ctx;

	(void)l;
	return uroce_cq_poll(l->node[0].scq, 1, wc) == 1;
}

/* One signaled WR from A: local SGE (addr, lkey), remote (raddr, rkey). */
static struct ibv_wc
run_op(struct env *e, enum ibv_wr_opcode op, uint64_t addr, uint32_t lkey,
       uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { addr, len, lkey };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;

	memset(&wr, 0, sizeof(wr));
	memset(&wc, 0, sizeof(wc));
	wc.status = IBV_WC_GENERAL_ERR;
	wr.opcode = op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	UT_CHECK_EQ(uroce_qp_post_send(e->qa, &wr, &bad), 0);
	UT_CHECK(ut_link_run(&e->l, got_one, &wc, ut_link_us(1000000), 100000));
	return wc;
}

/* The responder's accesses: NAK, QP_ACCESS_ERR, the fault counted. */
static void
test_responder(void)
{
	static const struct {
		const char *name;
		enum ibv_wr_opcode op;
		uint32_t len;
	} ops[] = {
		{ "WRITE", IBV_WR_RDMA_WRITE, LEN },
		{ "READ", IBV_WR_RDMA_READ, LEN },
		{ "FETCH_AND_ADD", IBV_WR_ATOMIC_FETCH_AND_ADD, 8 },
	};
	unsigned int i;

	for (i = 0; i < RTE_DIM(ops); i++) {
		struct env *e = env_new(10 + i, 1, ALL);
		uint64_t faults = uroce_memguard_faults();
		struct ibv_wc wc;

		wc = run_op(e, ops[i].op, (uintptr_t)e->ok[0],
			    e->ok_mr[0]->lkey, ops[i].len,
			    (uintptr_t)e->gone + LEN - ops[i].len,
			    e->gone_mr->rkey);
		UT_CHECK_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
		UT_CHECK(uroce_memguard_faults() > faults);
		UT_CHECK_EQ(e->qb->stats.naks_tx[NAK_REM_ACCESS], 1);
		UT_CHECK_EQ(e->qb->state, IBV_QPS_ERR);
		if (UT_CHECK_EQ(e->l.node[1].nev, 1))
			UT_CHECK_EQ(e->l.node[1].ev[0], IBV_EVENT_QP_ACCESS_ERR);
		UT_NOTE("%s into an unmapped region", ops[i].name);
		env_free(e);
	}
}

static bool
got_recv(struct ut_link *l, void *ctx)
{
	struct ibv_wc *wc = ctx;

	return uroce_cq_poll(l->node[1].rcq, 1, wc) == 1;
}

/* A receive buffer in the unmapped region: both sides see the error. */
static void
test_recv_scatter(void)
{
	struct env *e = env_new(20, 1, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = { (uintptr_t)e->gone, LEN, e->gone_mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *rbad;
	struct ibv_wc wc, rwc;

	UT_CHECK_EQ(uroce_qp_post_recv(e->qb, &rwr, &rbad), 0);
	wc = run_op(e, IBV_WR_SEND, (uintptr_t)e->ok[0], e->ok_mr[0]->lkey,
		    100, 0, 0);
	UT_CHECK_EQ(wc.status, IBV_WC_REM_OP_ERR);
	memset(&rwc, 0, sizeof(rwc));
	UT_CHECK(ut_link_run(&e->l, got_recv, &rwc, ut_link_us(1000000), 1000));
	UT_CHECK_EQ(rwc.wr_id, 7);
	UT_CHECK_EQ(rwc.status, IBV_WC_LOC_PROT_ERR);
	UT_NOTE("SEND into an unmapped receive buffer");
	env_free(e);
}

/* The requester's own SGEs in the unmapped region. */
static void
test_requester(void)
{
	struct env *e;
	struct ibv_wc wc;
	int zc;

	for (zc = 0; zc < 2; zc++) {
		e = env_new(30 + zc, 0, ALL);
		if (zc) {	/* whole 4 KiB payloads go zero-copy */
			e->l.node[0].env.tx_extbuf = true;
			e->l.node[0].env.tx_zc_min = 1;
		}
		wc = run_op(e, IBV_WR_RDMA_WRITE, (uintptr_t)e->gone,
			    e->gone_mr->lkey, LEN, (uintptr_t)e->ok[1],
			    e->ok_mr[1]->rkey);
		UT_CHECK_EQ(wc.status, IBV_WC_LOC_PROT_ERR);
		UT_CHECK_EQ(e->qa->state, IBV_QPS_ERR);
		UT_NOTE("WRITE gathered from an unmapped region%s",
			zc ? ", zero-copy" : "");
		env_free(e);
	}
	e = env_new(32, 0, ALL);
	wc = run_op(e, IBV_WR_RDMA_READ, (uintptr_t)e->gone, e->gone_mr->lkey,
		    LEN, (uintptr_t)e->ok[1], e->ok_mr[1]->rkey);
	UT_CHECK_EQ(wc.status, IBV_WC_LOC_PROT_ERR);
	UT_NOTE("READ response into an unmapped region");
	env_free(e);
}

/* On demand: registered over a hole, mapped afterwards, written intact. */
static void
test_odp_late_map(void)
{
	struct env *e = env_new(40, 1, ALL | IBV_ACCESS_ON_DEMAND);
	uint8_t *m;
	struct ibv_wc wc;

	ut_fill_rand(e->ok[0], LEN);
	m = mmap(e->gone, LEN, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (UT_CHECK(m == e->gone)) {
		wc = run_op(e, IBV_WR_RDMA_WRITE, (uintptr_t)e->ok[0],
			    e->ok_mr[0]->lkey, LEN, (uintptr_t)m,
			    e->gone_mr->rkey);
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		UT_CHECK_MEM(m, e->ok[0], LEN);
		munmap(m, LEN);
	}
	UT_NOTE("on-demand region mapped after its registration");
	env_free(e);
}

/* The implicit region names every address: one in the first page (never
 * mapped) and one that is not canonical (a general protection fault, no
 * fault address) are remote access errors like any hole. */
static void
test_implicit_wild(void)
{
	static const uint64_t wild[] = { 16, UINT64_C(0x8000000000000000) };
	unsigned int i;

	for (i = 0; i < RTE_DIM(wild); i++) {
		struct env *e = env_new(50 + i, 1, ALL);
		struct uroce_mr *imp = NULL;
		struct ibv_wc wc;

		UT_CHECK_EQ(uroce_mr_reg(e->l.node[1].mrs, &e->l.node[1].pd,
					 NULL, SIZE_MAX, 0,
					 ALL | IBV_ACCESS_ON_DEMAND, &imp), 0);
		if (imp != NULL) {
			wc = run_op(e, IBV_WR_RDMA_WRITE, (uintptr_t)e->ok[0],
				    e->ok_mr[0]->lkey, 8, wild[i], imp->rkey);
			UT_CHECK_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
		}
		UT_NOTE("implicit region, WRITE to 0x%" PRIx64, wild[i]);
		env_free(e);
	}
}

/* A fault outside any guarded access reaches the handler installed
 * before (here the test's own, which jumps back). */
static sigjmp_buf prev_jb;
static volatile sig_atomic_t prev_calls;

static void
prev_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	prev_calls++;
	siglongjmp(prev_jb, 1);
}

static void
test_chain(void)
{
	struct sigaction sa, old;
	volatile uint8_t *hole = map(PAGE);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = prev_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (!UT_CHECK(hole != NULL) ||
	    !UT_CHECK_EQ(sigaction(SIGSEGV, &sa, &old), 0))
		return;
	UT_CHECK_EQ(uroce_memguard_init(), 0);	/* chains prev_handler */
	munmap((void *)hole, PAGE);
	if (sigsetjmp(prev_jb, 1) == 0)
		hole[0] = 1;
	UT_CHECK_EQ(prev_calls, 1);
	/* a guarded access still fails on its own */
	UT_CHECK_EQ(uroce_memguard_copy((void *)hole, "x", 1, (void *)hole),
		    -EFAULT);
	UT_CHECK_EQ(prev_calls, 1);
	UT_NOTE("unguarded faults go to the handler installed before");
}

int
main(int argc, char **argv)
{
	(void)argc;
	if (ut_eal_start(argv[0]) < 0)
		return 1;
	test_responder();
	test_recv_scatter();
	test_requester();
	test_odp_late_map();
	test_implicit_wild();
	test_chain();
	return ut_summary();
}
