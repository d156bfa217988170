/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The RC transport end to end over the in-memory link
 * (test/common/uroce_test_link.h): random mixes of every opcode and size,
 * several SGEs, inline, signaled and unsignaled WRs, checked byte for byte
 * and completion by completion, without faults and with loss, reordering,
 * duplication and corruption; atomics and their replay cache; a peer that
 * is gone (retry_cnt, the timer, the flush); RNR NAKs (rnr_retry).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_test.h"
#include "uroce_test_eal.h"
#include "uroce_test_link.h"

#define BUF_LEN		(4u << 20)
#define GUARD		64
#define ROUND_WQES	24
#define ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* A registered buffer with guard bytes on both sides. */
struct rbuf {
	uint8_t *raw;
	uint8_t *mem;
	struct uroce_mr *mr;
	size_t used;
};

static int
rbuf_init(struct rbuf *b, struct ut_node *n)
{
	b->raw = aligned_alloc(4096, BUF_LEN + 2 * 4096);
	if (b->raw == NULL)
		return -ENOMEM;
	memset(b->raw, 0xa5, BUF_LEN + 2 * 4096);
	b->mem = b->raw + 4096;
	b->mr = ut_node_reg(n, b->mem, BUF_LEN, ACCESS_ALL);
	b->used = 0;
	return b->mr != NULL ? 0 : -EINVAL;
}

static bool
rbuf_guards_ok(const struct rbuf *b)
{
	size_t i;

	for (i = 4096 - GUARD; i < 4096; i++)
		if (b->raw[i] != 0xa5 || b->raw[4096 + BUF_LEN + (4095 - i)] != 0xa5)
			return false;
	return true;
}

static uint8_t *
rbuf_take(struct rbuf *b, size_t len)
{
	uint8_t *p = b->mem + b->used;

	b->used = RTE_ALIGN_CEIL(b->used + len, 8);
	return p;
}

/* Split [addr, addr + len) into 1..max SGEs (some may be empty). */
static int
split_sges(struct ibv_sge *sge, int max, uint8_t *addr, uint32_t len, uint32_t lkey)
{
	int n = 1 + (int)(ut_rand() % max), i;
	uint32_t left = len;

	for (i = 0; i < n; i++) {
		uint32_t l = (i == n - 1) ? left : (uint32_t)(ut_rand() % (left + 1));

		sge[i].addr = (uintptr_t)addr;
		sge[i].length = l;
		sge[i].lkey = lkey;
		addr += l;
		left -= l;
	}
	return n;
}

/* ---------------------------------------------------------------------------
 * Random mixes.
 */
struct expect_wc {
	uint64_t wr_id;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len;
	bool imm;
	uint32_t imm_data;
};

struct check {
	uint8_t *got;		/* memory the operation writes */
	const uint8_t *want;	/* its expected contents (copy) */
	uint32_t len;
	int wr;
};

struct round {
	struct expect_wc swc[ROUND_WQES], rwc[ROUND_WQES];
	unsigned int nswc, nrwc;
	struct ibv_wc gs[ROUND_WQES * 2], gr[ROUND_WQES * 2];
	unsigned int ngs, ngr;
	struct check chk[2 * ROUND_WQES];
	uint8_t want[2 * ROUND_WQES][4 * 4096 + 64];
	unsigned int nchk;
	struct uroce_qp *qa, *qb;
	struct ut_link *l;
};

struct env {
	struct ut_link l;
	struct rbuf la, lb, rb;		/* A local; B recv area; B target */
	struct uroce_qp *qa, *qb;
	uint32_t mtu;
};

static const enum ibv_wr_opcode all_ops[] = {
	IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
	IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
	IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
};

static uint32_t
pick_len(uint32_t mtu)
{
	switch (ut_rand() % 10) {
	case 0: return 0;
	case 1: return 1;
	case 2: return mtu - 1;
	case 3: return mtu;
	case 4: return mtu + 1;
	case 5: return 2 * mtu;
	case 6: return (uint32_t)(ut_rand() % 64);
	default: return (uint32_t)(ut_rand() % (4 * mtu + 1));
	}
}

static void
add_check(struct round *r, uint8_t *got, const uint8_t *want, uint32_t len, int wr)
{
	struct check *c = &r->chk[r->nchk];

	memcpy(r->want[r->nchk], want, len);
	c->got = got;
	c->want = r->want[r->nchk];
	c->len = len;
	c->wr = wr;
	r->nchk++;
}

/* B posts the receive a SEND or WRITE_WITH_IMM consumes. */
static void
post_recv_for(struct env *e, struct round *r, uint32_t len, uint8_t **dst,
	      uint64_t wr_id)
{
	struct ibv_sge sge[4];
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge }, *bad;
	uint32_t room = len + (uint32_t)(ut_rand() % 3) * 7;

	*dst = rbuf_take(&e->lb, room);
	memset(*dst, 0, room);
	wr.num_sge = split_sges(sge, 4, *dst, room, e->lb.mr->lkey);
	UT_CHECK_EQ(uroce_qp_post_recv(r->qb, &wr, &bad), 0);
}

static void
build_atomic(struct env *e, struct round *r, struct ibv_send_wr *wr,
	     struct ibv_sge *sge, int i)
{
	uint8_t *res = rbuf_take(&e->la, 8), *tgt = rbuf_take(&e->rb, 8);
	uint64_t v = ut_rand(), nv, a = ut_rand();

	memcpy(tgt, &v, 8);
	memset(res, 0, 8);
	sge[0] = (struct ibv_sge){ (uintptr_t)res, 8, e->la.mr->lkey };
	wr->num_sge = 1;
	wr->wr.atomic.remote_addr = (uintptr_t)tgt;
	wr->wr.atomic.rkey = e->rb.mr->rkey;
	if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr->wr.atomic.compare_add = (ut_rand() & 1) ? v : v ^ 1;
		wr->wr.atomic.swap = a;
		nv = wr->wr.atomic.compare_add == v ? a : v;
	} else {
		wr->wr.atomic.compare_add = a;
		nv = v + a;
	}
	add_check(r, res, (const uint8_t *)&v, 8, i);
	add_check(r, tgt, (const uint8_t *)&nv, 8, i);
}

/* Build WR i of a round: its data, its expected effects and completions. */
static void
build_wr(struct env *e, struct round *r, struct ibv_send_wr *wr,
	 struct ibv_sge *sge, int i, bool last)
{
	enum ibv_wr_opcode op = all_ops[ut_rand() % RTE_DIM(all_ops)];
	uint32_t len = pick_len(e->mtu);
	uint8_t *src, *dst;
	bool sig = last || (ut_rand() % 4 != 0);

	memset(wr, 0, sizeof(*wr));
	wr->wr_id = 1000 + i;
	wr->opcode = op;
	wr->sg_list = sge;
	wr->imm_data = (uint32_t)ut_rand();
	wr->send_flags = (sig ? IBV_SEND_SIGNALED : 0) |
			 ((ut_rand() & 3) == 0 ? IBV_SEND_SOLICITED : 0) |
			 ((ut_rand() & 7) == 0 ? IBV_SEND_FENCE : 0);
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		build_atomic(e, r, wr, sge, i);
		len = 8;
	} else if (op == IBV_WR_RDMA_READ) {
		src = rbuf_take(&e->rb, len);
		dst = rbuf_take(&e->la, len);
		ut_fill_rand(src, len);
		memset(dst, 0, len);
		wr->num_sge = split_sges(sge, 4, dst, len, e->la.mr->lkey);
		wr->wr.rdma.remote_addr = (uintptr_t)src;
		wr->wr.rdma.rkey = e->rb.mr->rkey;
		add_check(r, dst, src, len, i);
	} else {
		src = rbuf_take(&e->la, len);
		ut_fill_rand(src, len);
		wr->num_sge = split_sges(sge, 4, src, len, e->la.mr->lkey);
		if (len <= 128 && (ut_rand() & 3) == 0)
			wr->send_flags |= IBV_SEND_INLINE;
		if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM) {
			dst = rbuf_take(&e->rb, len);
			memset(dst, 0, len);
			wr->wr.rdma.remote_addr = (uintptr_t)dst;
			wr->wr.rdma.rkey = e->rb.mr->rkey;
			add_check(r, dst, src, len, i);
		}
		if (op != IBV_WR_RDMA_WRITE) {
			uint8_t *rd;
			struct expect_wc *x = &r->rwc[r->nrwc++];

			post_recv_for(e, r, op == IBV_WR_RDMA_WRITE_WITH_IMM ? 0 : len,
				      &rd, 5000 + i);
			if (op != IBV_WR_RDMA_WRITE_WITH_IMM)
				add_check(r, rd, src, len, i);
			x->wr_id = 5000 + i;
			x->opcode = op == IBV_WR_RDMA_WRITE_WITH_IMM ?
				IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
			x->byte_len = len;
			x->imm = op != IBV_WR_SEND;
			x->imm_data = wr->imm_data;
		}
	}
	if (sig) {
		static const enum ibv_wc_opcode wc_op[] = {
			[IBV_WR_RDMA_WRITE] = IBV_WC_RDMA_WRITE,
			[IBV_WR_RDMA_WRITE_WITH_IMM] = IBV_WC_RDMA_WRITE,
			[IBV_WR_SEND] = IBV_WC_SEND,
			[IBV_WR_SEND_WITH_IMM] = IBV_WC_SEND,
			[IBV_WR_RDMA_READ] = IBV_WC_RDMA_READ,
			[IBV_WR_ATOMIC_CMP_AND_SWP] = IBV_WC_COMP_SWAP,
			[IBV_WR_ATOMIC_FETCH_AND_ADD] = IBV_WC_FETCH_ADD,
		};
		struct expect_wc *x = &r->swc[r->nswc++];

		x->wr_id = wr->wr_id;
		x->opcode = wc_op[op];
		x->byte_len = len;
	}
}

static bool
round_done(struct ut_link *l, void *ctx)
{
	struct round *r = ctx;
	int n;

	(void)l;
	n = uroce_cq_poll(r->qa->send_cq, (int)(RTE_DIM(r->gs) - r->ngs), r->gs + r->ngs);
	if (n > 0)
		r->ngs += n;
	n = uroce_cq_poll(r->qb->recv_cq, (int)(RTE_DIM(r->gr) - r->ngr), r->gr + r->ngr);
	if (n > 0)
		r->ngr += n;
	return r->ngs >= r->nswc && r->ngr >= r->nrwc;
}

static void
check_round(struct round *r)
{
	unsigned int i;

	UT_CHECK_EQ(r->ngs, r->nswc);
	UT_CHECK_EQ(r->ngr, r->nrwc);
	for (i = 0; i < r->nswc && i < r->ngs; i++) {
		UT_CHECK_EQ(r->gs[i].status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(r->gs[i].wr_id, r->swc[i].wr_id);
		UT_CHECK_EQ(r->gs[i].opcode, r->swc[i].opcode);
		UT_CHECK_EQ(r->gs[i].byte_len, r->swc[i].byte_len);
		UT_CHECK_EQ(r->gs[i].qp_num, r->qa->qpn);
		UT_NOTE("send completion %u", i);
	}
	for (i = 0; i < r->nrwc && i < r->ngr; i++) {
		UT_CHECK_EQ(r->gr[i].status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(r->gr[i].wr_id, r->rwc[i].wr_id);
		UT_CHECK_EQ(r->gr[i].opcode, r->rwc[i].opcode);
		UT_CHECK_EQ(r->gr[i].byte_len, r->rwc[i].byte_len);
		UT_CHECK_EQ(r->gr[i].src_qp, r->qa->qpn);
		UT_CHECK_EQ(r->gr[i].qp_num, r->qb->qpn);
		UT_CHECK_EQ(!!(r->gr[i].wc_flags & IBV_WC_WITH_IMM), r->rwc[i].imm);
		if (r->rwc[i].imm)
			UT_CHECK_EQ(r->gr[i].imm_data, r->rwc[i].imm_data);
		UT_NOTE("recv completion %u", i);
	}
	for (i = 0; i < r->nchk; i++) {
		UT_CHECK_MEM(r->chk[i].got, r->chk[i].want, r->chk[i].len);
		UT_NOTE("data of wr %d (%u bytes)", r->chk[i].wr, r->chk[i].len);
	}
}

static int
env_init(struct env *e, uint64_t seed, const struct ut_qp_opts *o)
{
	if (ut_link_init(&e->l, seed, IBV_MTU_4096) != 0)
		return -ENOMEM;
	if (rbuf_init(&e->la, &e->l.node[0]) || rbuf_init(&e->lb, &e->l.node[1]) ||
	    rbuf_init(&e->rb, &e->l.node[1]))
		return -ENOMEM;
	e->mtu = uroce_mtu_bytes(o->path_mtu);
	return ut_link_pair(&e->l, o, 0x101, 0x202, &e->qa, &e->qb);
}

static void
env_fini(struct env *e)
{
	ut_link_fini(&e->l);
	free(e->la.raw);
	free(e->lb.raw);
	free(e->rb.raw);
}

static void
run_mix(const char *name, uint64_t seed, enum ibv_mtu mtu, uint8_t sgid,
	const struct ut_fault *f, int rounds)
{
	static struct round r;
	struct ut_qp_opts o;
	struct env *e = calloc(1, sizeof(*e));
	int k, i;

	ut_srand(seed);
	ut_qp_opts_default(&o, IBV_QPT_RC);
	o.path_mtu = mtu;
	o.sgid_index = sgid;
	if (!UT_CHECK(e != NULL) || !UT_CHECK_EQ(env_init(e, seed, &o), 0))
		return;
	e->l.dir[0].f = *f;
	e->l.dir[1].f = *f;
	for (k = 0; k < rounds; k++) {
		struct ibv_send_wr wr[ROUND_WQES], *bad = NULL;
		struct ibv_sge sge[ROUND_WQES][4];

		memset(&r, 0, sizeof(r));
		r.qa = e->qa;
		r.qb = e->qb;
		r.l = &e->l;
		e->la.used = e->lb.used = e->rb.used = 0;
		for (i = 0; i < ROUND_WQES; i++) {
			build_wr(e, &r, &wr[i], sge[i], i, i == ROUND_WQES - 1);
			wr[i].next = i + 1 < ROUND_WQES ? &wr[i + 1] : NULL;
		}
		UT_CHECK_EQ(uroce_qp_post_send(e->qa, wr, &bad), 0);
		UT_CHECK(ut_link_run(&e->l, round_done, &r, ut_link_us(10000000), 2000000));
		check_round(&r);
		UT_NOTE("%s: round %d (now %" PRIu64 ")", name, k, e->l.now);
		if (ut_failed)
			break;
	}
	ut_link_settle(&e->l, ut_link_us(1000));
	UT_CHECK(rbuf_guards_ok(&e->la));
	UT_CHECK(rbuf_guards_ok(&e->lb));
	UT_CHECK(rbuf_guards_ok(&e->rb));
	UT_CHECK_EQ(e->qa->state, IBV_QPS_RTS);
	UT_CHECK_EQ(e->qb->state, IBV_QPS_RTS);
	/* With UT_LINK_ZC_MIN (the rc_zcopy test) chains did go out. */
	if (getenv("UT_LINK_ZC_MIN") != NULL)
		UT_CHECK(e->l.dir[1].chains > 0);
	UT_CHECK_EQ(uroce_qp_zc_inflight(e->qa), 0);
	if (f->drop || f->dup || f->reorder || f->corrupt) {
		/* the faults did happen, and were repaired */
		UT_CHECK(e->l.dir[1].dropped + e->l.dir[0].dropped > 0);
		UT_CHECK(e->qa->stats.retransmits > 0);
	} else {
		UT_CHECK_EQ(e->qa->stats.retransmits, 0);
		UT_CHECK_EQ(e->qb->stats.dup_reqs, 0);
	}
	UT_NOTE("%s", name);
	printf("%s: A tx %" PRIu64 " retx %" PRIu64 " timeouts %" PRIu64
	       " naks_rx %" PRIu64 " B dup %" PRIu64 " oos %" PRIu64
	       " (drop %" PRIu64 "/%" PRIu64 " reorder %" PRIu64 " dup %" PRIu64
	       " corrupt %" PRIu64 ")\n", name,
	       e->qa->stats.tx_pkts, e->qa->stats.retransmits, e->qa->stats.timeouts,
	       e->qa->stats.naks_rx[0], e->qb->stats.dup_reqs, e->qb->stats.out_of_seq,
	       e->l.dir[1].dropped, e->l.dir[0].dropped,
	       e->l.dir[0].reordered + e->l.dir[1].reordered,
	       e->l.dir[0].duped + e->l.dir[1].duped,
	       e->l.dir[0].corrupted + e->l.dir[1].corrupted);
	env_fini(e);
	free(e);
}

static void
test_mixes(void)
{
	const struct ut_fault none = { 0 };
	const struct ut_fault faults = { .drop = 10000, .reorder = 10000,
					 .dup = 1000, .corrupt = 1000 };
	const struct ut_fault heavy = { .drop = 50000, .reorder = 50000,
					.dup = 20000, .corrupt = 20000 };

	run_mix("rc-1024-v4", 1, IBV_MTU_1024, 0, &none, 40);
	run_mix("rc-256-v6", 2, IBV_MTU_256, 1, &none, 20);
	run_mix("rc-4096-v4", 3, IBV_MTU_4096, 0, &none, 10);
	run_mix("rc-1024-faults", 4, IBV_MTU_1024, 0, &faults, 60);
	run_mix("rc-256-faults-v6", 5, IBV_MTU_256, 1, &faults, 30);
	run_mix("rc-1024-heavy", 6, IBV_MTU_1024, 0, &heavy, 30);
}

/* ---------------------------------------------------------------------------
 * Deterministic scenarios.
 */

/* What the tap saw: frames of one opcode from one side. */
struct tap {
	int from;
	int opcode;		/* -1: any */
	int psn;		/* -1: any */
	unsigned int seen;
	unsigned int drop_first;	/* drop that many of them */
	uint64_t t[64];
	struct uroce_ext_fields ext[64];
};

static bool
tap_fn(struct ut_link *l, int from, const struct uroce_pkt *pkt, void *ctx)
{
	struct tap *t = ctx;

	if (from != t->from || (t->opcode >= 0 && pkt->bth.opcode != t->opcode) ||
	    (t->psn >= 0 && pkt->bth.psn != (uint32_t)t->psn))
		return true;
	if (t->seen < RTE_DIM(t->t)) {
		t->t[t->seen] = l->now;
		uroce_wire_ext_get(pkt, &t->ext[t->seen]);
	}
	t->seen++;
	if (t->drop_first > 0) {
		t->drop_first--;
		return false;
	}
	return true;
}

struct want_n {
	struct uroce_cq *cq;
	unsigned int n, got;
	struct ibv_wc wc[16];
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

static int
post_one(struct uroce_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id, void *buf,
	 uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return uroce_qp_post_send(qp, &wr, &bad);
}

static int
post_atomic(struct uroce_qp *qp, enum ibv_wr_opcode op, void *res, uint32_t lkey,
	    uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	struct ibv_sge sge = { (uintptr_t)res, 8, lkey };
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 77;
	wr.opcode = op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	return uroce_qp_post_send(qp, &wr, &bad);
}

static struct env *
env_new(uint64_t seed, struct ut_qp_opts *o)
{
	struct env *e = calloc(1, sizeof(*e));

	ut_srand(seed);
	if (e == NULL || env_init(e, seed, o) != 0) {
		UT_CHECK(!"environment");
		free(e);
		return NULL;
	}
	return e;
}

static void
env_free(struct env *e)
{
	env_fini(e);
	free(e);
}

/* The atomic result comes once, whether the request arrives twice or its
 * ACK is lost and the request sent again: the replay cache answers. */
static void
test_atomic_replay(void)
{
	struct ut_qp_opts o;
	struct tap t = { .from = 1, .opcode = UROCE_OPC_RC_ATOMIC_ACK, .psn = -1 };
	struct want_n w = { .n = 1 };
	uint64_t *tgt, *res, v = 100;
	struct env *e;

	ut_qp_opts_default(&o, IBV_QPT_RC);
	o.timeout = 10;
	e = env_new(11, &o);
	if (e == NULL)
		return;
	w.cq = e->qa->send_cq;
	tgt = (uint64_t *)rbuf_take(&e->rb, 8);
	res = (uint64_t *)rbuf_take(&e->la, 8);
	*tgt = v;
	e->l.tap = tap_fn;
	e->l.tap_ctx = &t;
	/* 1. every frame towards B duplicated */
	e->l.dir[1].f.dup = 1000000;
	UT_CHECK_EQ(post_atomic(e->qa, IBV_WR_ATOMIC_FETCH_AND_ADD, res, e->la.mr->lkey,
				(uintptr_t)tgt, e->rb.mr->rkey, 5, 0), 0);
	UT_CHECK(ut_link_run(&e->l, got_n, &w, ut_link_us(1000000), 100000));
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_EQ(w.wc[0].opcode, IBV_WC_FETCH_ADD);
	UT_CHECK_EQ(w.wc[0].byte_len, 8);
	UT_CHECK_EQ(*res, 100);
	UT_CHECK_EQ(*tgt, 105);
	UT_CHECK_EQ(e->qb->stats.dup_reqs, 1);
	UT_CHECK_EQ(t.seen, 2);		/* answered twice, executed once */
	UT_CHECK_EQ(t.ext[1].atmack_orig, 100);
	ut_link_settle(&e->l, ut_link_us(1000));
	/* 2. the ACK lost: timeout, the request again, the cached answer */
	e->l.dir[1].f.dup = 0;
	t.seen = 0;
	t.drop_first = 1;
	w.got = 0;
	*res = 0;
	UT_CHECK_EQ(post_atomic(e->qa, IBV_WR_ATOMIC_CMP_AND_SWP, res, e->la.mr->lkey,
				(uintptr_t)tgt, e->rb.mr->rkey, 105, 7), 0);
	UT_CHECK(ut_link_run(&e->l, got_n, &w, ut_link_us(1000000), 100000));
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_EQ(w.wc[0].opcode, IBV_WC_COMP_SWAP);
	UT_CHECK_EQ(*res, 105);		/* a second execution would say 7 */
	UT_CHECK_EQ(*tgt, 7);
	UT_CHECK_EQ(t.seen, 2);
	UT_CHECK_EQ(e->qa->stats.timeouts, 1);
	UT_CHECK_EQ(e->qb->stats.dup_reqs, 2);
	UT_NOTE("atomic replay");
	env_free(e);
}

/* A READ whose middle response is lost asks again for the rest only
 * (IBTA 9.7.5.1.5), with the PSN of the missing response. */
static void
test_read_resume(void)
{
	struct ut_qp_opts o;
	struct tap rsp = { .from = 1, .opcode = UROCE_OPC_RC_READ_RESP_MIDDLE,
			   .psn = -1, .drop_first = 1 };
	struct want_n w = { .n = 1 };
	uint8_t *src, *dst;
	struct env *e;
	uint32_t len = 4 * 1024 + 100;

	ut_qp_opts_default(&o, IBV_QPT_RC);
	e = env_new(12, &o);
	if (e == NULL)
		return;
	w.cq = e->qa->send_cq;
	src = rbuf_take(&e->rb, len);
	dst = rbuf_take(&e->la, len);
	ut_fill_rand(src, len);
	e->l.tap = tap_fn;
	e->l.tap_ctx = &rsp;
	UT_CHECK_EQ(post_one(e->qa, IBV_WR_RDMA_READ, 9, dst, len, e->la.mr->lkey,
			     (uintptr_t)src, e->rb.mr->rkey), 0);
	UT_CHECK(ut_link_run(&e->l, got_n, &w, ut_link_us(1000000), 100000));
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_EQ(w.wc[0].byte_len, len);
	UT_CHECK_MEM(dst, src, len);
	UT_CHECK_EQ(e->qa->stats.retransmits, 1);	/* the READ request, once */
	UT_CHECK_EQ(e->qa->stats.timeouts, 0);
	UT_CHECK_EQ(e->qb->stats.dup_reqs, 1);
	UT_NOTE("read resume");
	env_free(e);
}

/* The peer stops receiving: the first packet goes out retry_cnt + 1 times,
 * one local ACK timeout apart, then IBV_WC_RETRY_EXC_ERR and flushes. */
static void
test_peer_gone(void)
{
	struct ut_qp_opts o;
	struct tap t = { .from = 0, .opcode = -1 };
	struct want_n w = { .n = 4 };
	uint64_t rto, us;
	uint8_t *buf;
	struct ibv_qp_attr attr;
	struct env *e;
	int i;

	ut_qp_opts_default(&o, IBV_QPT_RC);
	o.timeout = 10;
	o.retry_cnt = 3;
	e = env_new(13, &o);
	if (e == NULL)
		return;
	t.psn = (int)o.psn[0];
	w.cq = e->qa->send_cq;
	buf = rbuf_take(&e->la, 100);
	e->l.tap = tap_fn;
	e->l.tap_ctx = &t;
	e->l.node[1].rx_off = true;
	for (i = 1; i <= 4; i++)
		UT_CHECK_EQ(post_one(e->qa, IBV_WR_SEND, i, buf, 100, e->la.mr->lkey, 0, 0), 0);
	UT_CHECK(ut_link_run(&e->l, got_n, &w, UINT64_MAX / 4, 100000));
	UT_CHECK_EQ(w.got, 4);
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_RETRY_EXC_ERR);
	UT_CHECK_EQ(w.wc[0].wr_id, 1);
	for (i = 1; i < 4; i++) {
		UT_CHECK_EQ(w.wc[i].status, IBV_WC_WR_FLUSH_ERR);
		UT_CHECK_EQ(w.wc[i].wr_id, (uint64_t)i + 1);
	}
	UT_CHECK_EQ(t.seen, o.retry_cnt + 1u);
	/* 4.096 us * 2^10, to the microsecond above: 4195 us */
	us = (4096ull * 1024 + 999) / 1000;
	rto = ut_link_us(us);
	UT_CHECK_EQ(us, 4195);
	for (i = 1; i < (int)t.seen && i < 4; i++)
		UT_CHECK_EQ(t.t[i] - t.t[i - 1], rto);
	UT_CHECK(e->l.now - t.t[0] >= (o.retry_cnt + 1u) * rto);
	UT_CHECK(e->l.now - t.t[0] <= (o.retry_cnt + 1u) * rto + ut_link_us(10));
	UT_CHECK_EQ(e->qa->stats.timeouts, o.retry_cnt + 1u);
	uroce_qp_query(e->qa, &attr, NULL);
	UT_CHECK_EQ(attr.qp_state, IBV_QPS_ERR);
	UT_NOTE("peer gone");
	env_free(e);
}

/* Holds node 0's transmission after `after` frames of it: the engine
 * behind (tx_held: timers still send) or a port that never drains. */
struct hold {
	unsigned int after, seen;
	bool stall;
	bool ackreq[16];
	uint32_t psn[16];
};

static bool
hold_tap(struct ut_link *l, int from, const struct uroce_pkt *pkt, void *ctx)
{
	struct hold *h = ctx;

	if (from != 0)
		return true;
	if (h->seen < RTE_DIM(h->ackreq)) {
		h->ackreq[h->seen] = pkt->bth.ackreq;
		h->psn[h->seen] = pkt->bth.psn;
	}
	if (++h->seen == h->after) {
		l->node[0].tx_held = true;
		l->node[0].tx_stalled = h->stall;
	}
	return true;
}

/* hold_env()'s local ACK timeout, 4.096 us x 2^10 rounded up to the
 * microsecond, on the link's clock. */
#define HOLD_RTO	ut_link_us((4096ull * 1024 + 999) / 1000)

/* The pair the timeout tests use (4.2 ms local ACK timeout, retry_cnt 3);
 * NULL if it could not be made. */
static struct env *
hold_env(uint64_t seed, struct ut_qp_opts *o)
{
	ut_qp_opts_default(o, IBV_QPT_RC);
	o->timeout = 10;
	o->retry_cnt = 3;
	return env_new(seed, o);
}

/* A WRITE of len random bytes from A to B's zeroed *dst, A sending three
 * frames a call and held by h after h->after of them. */
static int
hold_write(struct env *e, struct hold *h, uint32_t len, uint8_t **src,
	   uint8_t **dst)
{
	*src = rbuf_take(&e->la, len);
	*dst = rbuf_take(&e->rb, len);
	ut_fill_rand(*src, len);
	memset(*dst, 0, len);
	e->l.tap = hold_tap;
	e->l.tap_ctx = h;
	e->l.node[0].txb_cap = 3;
	return post_one(e->qa, IBV_WR_RDMA_WRITE, 1, *src, len, e->la.mr->lkey,
			(uintptr_t)*dst, e->rb.mr->rkey);
}

/*
 * A's engine falls behind in the middle of an 8-packet WRITE: three
 * packets out, none asking for an ACK, then only A's timers may send (3
 * frames a call). The local ACK timeout finds no ACK owed: it resends
 * nothing, spends no retry (a late expiry, not a timeout), and the next
 * packet asks for an ACK (requester.c timeout()). The WRITE completes
 * with every byte placed and no retransmission.
 */
static void
test_timeout_nothing_owed(void)
{
	struct ut_qp_opts o;
	struct hold h = { .after = 3 };
	struct want_n w = { .n = 1 };
	const uint32_t len = 8 * 1024;
	uint8_t *src, *dst;
	unsigned int i;
	struct env *e;

	e = hold_env(14, &o);
	if (e == NULL)
		return;
	w.cq = e->qa->send_cq;
	UT_CHECK_EQ(hold_write(e, &h, len, &src, &dst), 0);
	UT_CHECK(ut_link_run(&e->l, got_n, &w, ut_link_us(1000000), 100000));
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_MEM(dst, src, len);
	UT_CHECK_EQ(h.seen, 8);
	for (i = 0; i < 3; i++)
		UT_CHECK(!h.ackreq[i]);
	UT_CHECK(h.ackreq[3]);		/* the first after the expiry */
	UT_CHECK(h.ackreq[7]);		/* the message's end */
	for (i = 0; i < 8; i++)
		UT_CHECK_EQ(h.psn[i], (o.psn[0] + i) & UROCE_PSN_MASK);
	UT_CHECK(e->qa->stats.late_timeouts >= 1);
	UT_CHECK_EQ(e->qa->stats.timeouts, 0);
	UT_CHECK_EQ(e->qa->stats.retransmits, 0);
	UT_CHECK_EQ(e->qb->stats.dup_reqs, 0);
	UT_NOTE("timeout with no ACK owed: no resend, %" PRIu64 " expiries",
		e->qa->stats.late_timeouts);
	env_free(e);
}

/*
 * A's port takes no frame after a 3-packet WRITE whose end asked for an
 * ACK, and B receives nothing: every expiry counts against retry_cnt and
 * the timer stays armed although nothing can be sent: IBV_WC_RETRY_EXC_ERR
 * after retry_cnt + 1 timeouts, none of them late.
 */
static void
test_timeout_port_stalled(void)
{
	struct ut_qp_opts o;
	struct hold h = { .after = 3, .stall = true };
	struct want_n w = { .n = 1 };
	struct ibv_qp_attr attr;
	uint64_t rto, t0;
	uint8_t *src, *dst;
	struct env *e;

	e = hold_env(15, &o);
	if (e == NULL)
		return;
	w.cq = e->qa->send_cq;
	e->l.node[1].rx_off = true;
	t0 = e->l.now;
	UT_CHECK_EQ(hold_write(e, &h, 3 * 1024, &src, &dst), 0);
	UT_CHECK(ut_link_run(&e->l, got_n, &w, ut_link_us(1000000), 100000));
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_RETRY_EXC_ERR);
	UT_CHECK_EQ(h.seen, 3);
	UT_CHECK(h.ackreq[2]);
	UT_CHECK_EQ(e->qa->stats.timeouts, o.retry_cnt + 1u);
	UT_CHECK_EQ(e->qa->stats.late_timeouts, 0);
	UT_CHECK_EQ(e->qa->stats.retransmits, 0);
	rto = HOLD_RTO;
	UT_CHECK_EQ(e->l.now - t0, (o.retry_cnt + 1u) * rto);
	uroce_qp_query(e->qa, &attr, NULL);
	UT_CHECK_EQ(attr.qp_state, IBV_QPS_ERR);
	UT_NOTE("port stalled, ACK owed: RETRY_EXC_ERR");
	env_free(e);
}

/*
 * A's port takes no frame after three of an 8-packet WRITE, none of them
 * asking for an ACK. The local ACK timeout expires once, late (nothing
 * owed): it spends no retry and is not armed again, so nothing is due
 * while the QP waits for its turn, and it stays in RTS for twice retry_cnt
 * + 1 timeouts (an engine far behind many QPs, whose retries must not run
 * out). Then either the port takes frames again and the WRITE
 * completes, every byte placed, nothing resent; or (dead) what A sends
 * goes nowhere, as when the net layer drops what a port never drains
 * (NET_TX_STUCK_MS): the packets that ask for an ACK leave, and retry_cnt
 * + 1 timeouts later, exactly, IBV_WC_RETRY_EXC_ERR.
 */
static void
test_timeout_stall_none_owed(bool dead)
{
	struct ut_qp_opts o;
	struct hold h = { .after = 3, .stall = true };
	struct want_n w = { .n = 1 };
	const uint32_t len = 8 * 1024;
	struct ibv_qp_attr attr;
	uint64_t rto, t1;
	uint8_t *src, *dst;
	struct env *e;

	e = hold_env(dead ? 17 : 16, &o);
	if (e == NULL)
		return;
	w.cq = e->qa->send_cq;
	rto = HOLD_RTO;
	UT_CHECK_EQ(hold_write(e, &h, len, &src, &dst), 0);
	/* Quiet: nothing sent, nothing due. */
	UT_CHECK(!ut_link_run(&e->l, got_n, &w, UINT64_MAX / 4, 100000));
	e->l.now += 2 * (o.retry_cnt + 1u) * rto;
	UT_CHECK(!ut_link_run(&e->l, got_n, &w, UINT64_MAX / 4, 100000));
	UT_CHECK_EQ(w.got, 0);
	UT_CHECK_EQ(h.seen, 3);
	UT_CHECK_EQ(e->qa->stats.late_timeouts, 1);
	UT_CHECK_EQ(e->qa->stats.timeouts, 0);
	uroce_qp_query(e->qa, &attr, NULL);
	UT_CHECK_EQ(attr.qp_state, IBV_QPS_RTS);

	e->l.node[0].tx_held = false;
	e->l.node[0].tx_stalled = false;
	e->l.node[1].rx_off = dead;
	t1 = e->l.now;
	UT_CHECK(ut_link_run(&e->l, got_n, &w, ut_link_us(1000000), 100000));
	UT_CHECK(h.ackreq[3]);		/* the first after the expiry */
	if (dead) {
		UT_CHECK_EQ(w.wc[0].status, IBV_WC_RETRY_EXC_ERR);
		UT_CHECK_EQ(e->qa->stats.timeouts, o.retry_cnt + 1u);
		UT_CHECK_EQ(e->l.now - t1, (o.retry_cnt + 1u) * rto);
		UT_CHECK_EQ(e->qa->stats.retransmits, o.retry_cnt * 8u);
	} else {
		UT_CHECK_EQ(w.wc[0].status, IBV_WC_SUCCESS);
		UT_CHECK_MEM(dst, src, len);
		UT_CHECK_EQ(e->qa->stats.timeouts, 0);
		UT_CHECK_EQ(e->qa->stats.retransmits, 0);
	}
	UT_NOTE("port stalled for %u timeouts, none owed: %s",
		2 * (o.retry_cnt + 1u),
		dead ? "then dead, RETRY_EXC_ERR" : "then back, the WRITE whole");
	env_free(e);
}

/*
 * A slow link behind a lost READ response: eight 8-packet READs
 * outstanding, B answering at once but the link delivering one frame to A
 * per third of a local ACK timeout (a slow peer's queue), the last
 * response of the first READ dropped. A finds the gap at the next READ's
 * first response and asks again from the missing PSN; the answer comes
 * after the 56 responses already queued on the link, all out of sequence
 * for A by then, which take about 19 timeouts to arrive. They restart A's
 * local ACK timer (requester.c, uroce_req_timer()): no timeout, every READ
 * asked again once, every READ intact. Counted as silence, they would
 * spend retry_cnt (3) and end the QP in IBV_WC_RETRY_EXC_ERR.
 */
static void
test_read_slow_responder(void)
{
	enum { NREAD = 8, PKTS = 8 };
	struct ut_qp_opts o;
	struct tap rsp = { .from = 1, .opcode = UROCE_OPC_RC_READ_RESP_LAST,
			   .psn = -1, .drop_first = 1 };
	struct want_n w = { .n = NREAD };
	uint8_t *src[NREAD], *dst[NREAD];
	uint64_t step, end;
	struct env *e;
	uint32_t len;
	int i;

	e = hold_env(16, &o);
	if (e == NULL)
		return;
	len = PKTS * e->mtu;
	w.cq = e->qa->send_cq;
	rsp.psn = (int)((o.psn[0] + PKTS - 1) & UROCE_PSN_MASK);
	e->l.tap = tap_fn;
	e->l.tap_ctx = &rsp;
	e->l.node[0].rx_cap = 1;
	for (i = 0; i < NREAD; i++) {
		src[i] = rbuf_take(&e->rb, len);
		dst[i] = rbuf_take(&e->la, len);
		ut_fill_rand(src[i], len);
		memset(dst[i], 0, len);
		UT_CHECK_EQ(post_one(e->qa, IBV_WR_RDMA_READ, (uint64_t)i, dst[i], len,
				     e->la.mr->lkey, (uintptr_t)src[i],
				     e->rb.mr->rkey), 0);
	}
	/* One frame to A a step, a third of a timeout between steps. */
	step = HOLD_RTO / 3;
	end = e->l.now + 400 * HOLD_RTO;
	while (!got_n(&e->l, &w) && e->l.now < end) {
		ut_link_step(&e->l);
		e->l.now += step;
		while (ut_link_advance(&e->l, e->l.now))
			;
	}
	UT_CHECK_EQ(w.got, NREAD);
	for (i = 0; i < (int)w.got && i < NREAD; i++) {
		UT_CHECK_EQ(w.wc[i].status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(w.wc[i].wr_id, (uint64_t)i);
	}
	for (i = 0; i < NREAD; i++)
		UT_CHECK_MEM(dst[i], src[i], len);
	UT_CHECK_EQ(rsp.seen, 1u);	/* asked again, it comes as an ONLY */
	/* Every READ asked again once, at the gap; never on a timeout. */
	UT_CHECK_EQ(e->qa->stats.retransmits, NREAD);
	UT_CHECK_EQ(e->qa->stats.timeouts, 0);
	UT_CHECK(e->qb->stats.dup_reqs >= NREAD);
	UT_NOTE("read, slow responder");
	env_free(e);
}

/* No receive WQE: RNR NAKs, the requester waits the NAK's timer each time;
 * receives posted later let it through. rnr_retry 0: the error at once. */
static void
test_rnr(void)
{
	struct ut_qp_opts o;
	struct tap t = { .from = 0, .opcode = -1 };
	struct want_n w = { .n = 1 }, wr = { .n = 1 };
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 55, .sg_list = &sge, .num_sge = 1 }, *bad;
	uint8_t *src, *dst;
	struct env *e;
	unsigned int i;

	ut_qp_opts_default(&o, IBV_QPT_RC);
	o.min_rnr_timer = 5;	/* 60 us */
	e = env_new(14, &o);
	if (e == NULL)
		return;
	t.psn = (int)o.psn[0];
	w.cq = e->qa->send_cq;
	wr.cq = e->qb->recv_cq;
	src = rbuf_take(&e->la, 300);
	dst = rbuf_take(&e->lb, 300);
	ut_fill_rand(src, 300);
	e->l.tap = tap_fn;
	e->l.tap_ctx = &t;
	UT_CHECK_EQ(post_one(e->qa, IBV_WR_SEND, 1, src, 300, e->la.mr->lkey, 0, 0), 0);
	for (i = 0; i < 2000 && e->qb->stats.rnr_naks_tx < 5; i++)
		if (ut_link_step(&e->l) == 0)
			ut_link_advance(&e->l, UINT64_MAX);
	UT_CHECK_EQ(e->qb->stats.rnr_naks_tx, 5);
	UT_CHECK_EQ(e->qa->stats.rnr_naks_rx, 5);
	UT_CHECK(!got_n(&e->l, &w));
	for (i = 1; i < t.seen && i < 5; i++)
		UT_CHECK(t.t[i] - t.t[i - 1] >= ut_link_us(60));
	sge = (struct ibv_sge){ (uintptr_t)dst, 300, e->lb.mr->lkey };
	UT_CHECK_EQ(uroce_qp_post_recv(e->qb, &rwr, &bad), 0);
	UT_CHECK(ut_link_run(&e->l, got_n, &w, ut_link_us(1000000), 100000));
	UT_CHECK(ut_link_run(&e->l, got_n, &wr, ut_link_us(1000000), 100000));
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_EQ(wr.wc[0].status, IBV_WC_SUCCESS);
	UT_CHECK_EQ(wr.wc[0].byte_len, 300);
	UT_CHECK_MEM(dst, src, 300);
	UT_NOTE("rnr, retried");
	env_free(e);

	/* rnr_retry 0 */
	o.rnr_retry = 0;
	e = env_new(15, &o);
	if (e == NULL)
		return;
	w.cq = e->qa->send_cq;
	w.n = 2;
	w.got = 0;
	src = rbuf_take(&e->la, 300);
	UT_CHECK_EQ(post_one(e->qa, IBV_WR_SEND, 1, src, 300, e->la.mr->lkey, 0, 0), 0);
	UT_CHECK_EQ(post_one(e->qa, IBV_WR_SEND, 2, src, 300, e->la.mr->lkey, 0, 0), 0);
	UT_CHECK(ut_link_run(&e->l, got_n, &w, ut_link_us(1000000), 100000));
	UT_CHECK_EQ(w.wc[0].status, IBV_WC_RNR_RETRY_EXC_ERR);
	UT_CHECK_EQ(w.wc[0].wr_id, 1);
	UT_CHECK_EQ(w.wc[1].status, IBV_WC_WR_FLUSH_ERR);
	UT_CHECK_EQ(e->qa->stats.rnr_naks_rx, 1);
	UT_CHECK_EQ(e->qa->state, IBV_QPS_ERR);
	UT_NOTE("rnr_retry 0");
	env_free(e);
}

int
main(int argc, char **argv)
{
	(void)argc;
	if (ut_eal_start(argv[0]) < 0)
		return 1;
	test_mixes();
	test_atomic_replay();
	test_read_resume();
	test_peer_gone();
	test_timeout_nothing_owed();
	test_timeout_port_stalled();
	test_timeout_stall_none_owed(false);
	test_timeout_stall_none_owed(true);
	test_read_slow_responder();
	test_rnr();
	return ut_summary();
}
