/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Extended CQs through our libibverbs.so.1 (ibv_create_cq_ex(3)), in one
 * process with two devices joined by a ringlink (uroce0 and uroce1):
 *  - every documented error of ibv_create_cq_ex(), with nothing created;
 *  - the polling API on an empty CQ (ENOENT);
 *  - a mix of completions (send, send with immediate, RDMA write, write
 *    with immediate, read, both atomics, a multi-packet send) posted twice:
 *    drained once with ibv_poll_cq() on ibv_cq_ex_to_cq(), once with
 *    ibv_start_poll()/ibv_next_poll()/ibv_end_poll(); every field the ex
 *    API reads equals ibv_poll_cq()'s, and the data is intact;
 *  - completion timestamps (both views, on every completion of the ex
 *    round): the TSC values between two ibv_query_rt_values_ex() reads
 *    around the round and in order, the wallclock ones between two
 *    CLOCK_REALTIME reads; the device's clock attributes;
 *  - parent domains and thread domains: the allocator is called for the
 *    rings of a QP, a CQ and an SRQ made on the parent domain, on the
 *    caller's thread, its memory holds the WQEs of traffic that arrives
 *    intact, every buffer comes back to its free; IBV_ALLOCATOR_USE_
 *    DEFAULT, a failing allocator (ENOMEM, nothing left), EBUSY while in
 *    use, EINVAL for bad attributes;
 *  - completion events on an ex CQ through its channel (the -e style);
 *  - EBUSY destroying an ex CQ a QP uses, then a clean destroy;
 *  - bad input across the object verbs: objects of
 *    another device, limits, invalid transitions and attributes give
 *    EINVAL with nothing changed, objects in use EBUSY, NULL EINVAL.
 */

#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uroce_test.h"
#include "uroce_test_verbs.h"
#include "verbs_priv.h"

#define BUF_SIZE	16384
#define MIX_MAX		16
#define WAIT_SEC	10	/* a hang guard, not a performance bound */
#define DIM(a)		(sizeof(a) / sizeof((a)[0]))
#define READ_OFF	12288	/* at qb: what the RDMA read fetches */

/* ------------------------------------------------------------------------
 * Creation errors: each fails with its errno and leaves nothing behind
 * (the channel is not held: it can be destroyed afterwards).
 */
struct bad_attr {
	const char *what;
	struct ibv_cq_init_attr_ex attr;	/* channel/cqe filled in below */
	int err;
};

static const struct bad_attr bad_attrs[] = {
	{ "cqe 0", { .cqe = 0 }, EINVAL },
	{ "comp_vector 1", { .cqe = 8, .comp_vector = 1 }, EINVAL },
	{ "comp_vector -1", { .cqe = 8, .comp_vector = UINT32_MAX }, EINVAL },
	{ "unknown comp_mask", { .cqe = 8, .comp_mask = 1u << 2 }, EOPNOTSUPP },
	{ "cvlan", { .cqe = 8, .wc_flags = IBV_WC_EX_WITH_CVLAN }, EOPNOTSUPP },
	{ "flow tag", { .cqe = 8, .wc_flags = IBV_WC_EX_WITH_FLOW_TAG },
	  EOPNOTSUPP },
	{ "unknown wc_flag", { .cqe = 8, .wc_flags = 1ull << 40 }, EOPNOTSUPP },
	{ "ignore overrun",
	  { .cqe = 8, .comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
	    .flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN }, EOPNOTSUPP },
	{ "unknown flag",
	  { .cqe = 8, .comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS, .flags = 1u << 7 },
	  EOPNOTSUPP },
	{ "a PD that is no parent domain",
	  { .cqe = 8, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD }, EINVAL },
};

static void
test_create_errors(struct ibv_context *ctx, struct ibv_context *other,
		   int max_cqe)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_comp_channel *och = ibv_create_comp_channel(other);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq_init_attr_ex a;
	struct ibv_cq_ex *cqx;
	size_t i;

	if (!UT_CHECK(ch != NULL && och != NULL && pd != NULL))
		return;
	for (i = 0; i < DIM(bad_attrs); i++) {
		a = bad_attrs[i].attr;
		a.channel = ch;
		a.parent_domain = pd;
		errno = 0;
		cqx = ibv_create_cq_ex(ctx, &a);
		UT_CHECK(cqx == NULL);
		UT_CHECK_EQ(errno, bad_attrs[i].err);
		UT_NOTE("%s", bad_attrs[i].what);
	}
	/* Too many entries; a channel of another context; no attributes. */
	a = (struct ibv_cq_init_attr_ex){ .cqe = (uint32_t)max_cqe + 1,
					  .channel = ch };
	errno = 0;
	UT_CHECK(ibv_create_cq_ex(ctx, &a) == NULL && errno == EINVAL);
	a = (struct ibv_cq_init_attr_ex){ .cqe = 8, .channel = och };
	errno = 0;
	UT_CHECK(ibv_create_cq_ex(ctx, &a) == NULL && errno == EINVAL);
	errno = 0;
	UT_CHECK(ibv_create_cq_ex(ctx, NULL) == NULL && errno == EINVAL);
	/* Nothing held the channels. */
	UT_CHECK_EQ(ibv_destroy_comp_channel(ch), 0);
	UT_CHECK_EQ(ibv_destroy_comp_channel(och), 0);

	/* What is accepted: single-threaded; the accessors asked for only. */
	a = (struct ibv_cq_init_attr_ex){ .cqe = 8,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED };
	cqx = ibv_create_cq_ex(ctx, &a);
	if (UT_CHECK(cqx != NULL)) {
		UT_CHECK(cqx->read_opcode != NULL && cqx->read_wc_flags != NULL);
		UT_CHECK(cqx->read_byte_len == NULL && cqx->read_imm_data == NULL);
		UT_CHECK(cqx->read_completion_ts == NULL &&
			 cqx->read_completion_wallclock_ns == NULL);
		UT_CHECK(cqx->cqe >= 8);
		UT_CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	}
	UT_CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* ------------------------------------------------------------------------
 * Two RC QPs on two devices.
 */
struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq_ex *cqx;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;		/* BUF_SIZE bytes + an 8-byte atomic word */
};

static int
side_open(struct side *s, struct ibv_context *ctx, void *cq_context)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = MIX_MAX * 2, .cq_context = cq_context,
		.wc_flags = IBV_WC_STANDARD_FLAGS |
			IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};
	struct ibv_qp_init_attr qa;

	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	s->pd = ibv_alloc_pd(ctx);
	s->ch = ibv_create_comp_channel(ctx);
	s->buf = aligned_alloc(64, BUF_SIZE + 64);
	if (!UT_CHECK(s->pd != NULL && s->ch != NULL && s->buf != NULL))
		return -1;
	memset(s->buf, 0, BUF_SIZE + 64);
	ca.channel = s->ch;
	s->cqx = ibv_create_cq_ex(ctx, &ca);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_SIZE + 64,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!UT_CHECK(s->cqx != NULL && s->mr != NULL))
		return -1;
	UT_CHECK(s->cqx->context == ctx && s->cqx->channel == s->ch &&
		 s->cqx->cq_context == cq_context);
	UT_CHECK(s->cqx->read_byte_len != NULL &&
		 s->cqx->read_dlid_path_bits != NULL);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = ibv_cq_ex_to_cq(s->cqx);
	qa.recv_cq = ibv_cq_ex_to_cq(s->cqx);
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = MIX_MAX;
	qa.cap.max_recv_wr = MIX_MAX;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	s->qp = ibv_create_qp(s->pd, &qa);
	return UT_CHECK(s->qp != NULL) ? 0 : -1;
}

static void
side_connect(struct side *s, const struct side *peer)
{
	ut_verbs_rc_connect_ex(s->qp, peer->ctx, peer->qp->qp_num, 100, 12, 4,
			       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			       IBV_ACCESS_REMOTE_ATOMIC);
}

static void
side_close(struct side *s)
{
	ut_verbs_destroy(s->qp, s->mr,
			 s->cqx != NULL ? ibv_cq_ex_to_cq(s->cqx) : NULL, s->pd);
	/* After its CQ; the PD is unrelated. */
	if (s->ch != NULL)
		UT_CHECK_EQ(ibv_destroy_comp_channel(s->ch), 0);
	free(s->buf);
}

/* ------------------------------------------------------------------------
 * The mix: what qa posts, at which offsets of the two buffers.
 */
struct mix_op {
	enum ibv_wr_opcode op;
	uint32_t len;		/* bytes (8 for atomics) */
	uint32_t loff, roff;	/* local and remote offsets */
	bool recv;		/* consumes a receive at qb */
};

#define ATOM_OFF	BUF_SIZE
#define IMM_BASE	0x5a000000u

static const struct mix_op mix[] = {
	{ IBV_WR_SEND, 100, 0, 0, true },
	{ IBV_WR_SEND_WITH_IMM, 0, 0, 0, true },
	{ IBV_WR_RDMA_WRITE, 3000, 0, 4096, false },
	{ IBV_WR_RDMA_WRITE_WITH_IMM, 500, 3000, 8192, true },
	{ IBV_WR_RDMA_READ, 2000, 8192, READ_OFF, false },
	{ IBV_WR_ATOMIC_CMP_AND_SWP, 8, 12288, ATOM_OFF, false },
	{ IBV_WR_ATOMIC_FETCH_AND_ADD, 8, 12296, ATOM_OFF, false },
	{ IBV_WR_SEND, 3 * 1024 + 17, 0, 0, true },
};
#define MIX_N		DIM(mix)

static unsigned int
mix_recvs(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < MIX_N; i++)
		n += mix[i].recv;
	return n;
}

static void
post_mix(struct side *a, struct side *b)
{
	struct ibv_send_wr swr, *bad_s;
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_sge sge;
	unsigned int i, r = 0;

	for (i = 0; i < MIX_N; i++) {
		if (!mix[i].recv)
			continue;
		/* Receives land at the start of qb's buffer (the sends and
		 * the write-with-immediate's receive takes no bytes). */
		sge = (struct ibv_sge){ (uintptr_t)b->buf, 4096, b->mr->lkey };
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = 200 + r++;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		UT_CHECK_EQ(ibv_post_recv(b->qp, &rwr, &bad_r), 0);
	}
	for (i = 0; i < MIX_N; i++) {
		const struct mix_op *m = &mix[i];

		sge = (struct ibv_sge){ (uintptr_t)a->buf + m->loff, m->len,
					a->mr->lkey };
		memset(&swr, 0, sizeof(swr));
		swr.wr_id = 100 + i;
		swr.sg_list = &sge;
		swr.num_sge = m->len > 0 ? 1 : 0;
		swr.opcode = m->op;
		swr.send_flags = IBV_SEND_SIGNALED;
		swr.imm_data = htobe32(IMM_BASE + i);
		swr.wr.rdma.remote_addr = (uintptr_t)b->buf + m->roff;
		swr.wr.rdma.rkey = b->mr->rkey;
		if (m->op == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    m->op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			swr.wr.atomic.remote_addr = (uintptr_t)b->buf + m->roff;
			swr.wr.atomic.rkey = b->mr->rkey;
			swr.wr.atomic.compare_add =
				m->op == IBV_WR_ATOMIC_CMP_AND_SWP ? 1000 : 5;
			swr.wr.atomic.swap = 2000;
		}
		UT_CHECK_EQ(ibv_post_send(a->qp, &swr, &bad_s), 0);
		UT_NOTE("post %u", i);
	}
}

/* Drain n completions with ibv_poll_cq() on the ex CQ's ibv_cq. */
static unsigned int
drain_poll_cq(struct ibv_cq_ex *cqx, struct ibv_wc *wc, unsigned int n)
{
	double end = ut_now_s() + WAIT_SEC;
	unsigned int got = 0;
	int r;

	while (got < n && ut_now_s() < end) {
		r = ibv_poll_cq(ibv_cq_ex_to_cq(cqx), (int)(n - got), wc + got);
		if (!UT_CHECK(r >= 0))
			break;
		got += (unsigned int)r;
	}
	return got;
}

/* One completion through the ex API's accessors, as an ibv_wc. */
static void
read_ex(struct ibv_cq_ex *cqx, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqx->wr_id;
	wc->status = cqx->status;
	wc->opcode = ibv_wc_read_opcode(cqx);
	wc->vendor_err = ibv_wc_read_vendor_err(cqx);
	wc->byte_len = ibv_wc_read_byte_len(cqx);
	wc->wc_flags = ibv_wc_read_wc_flags(cqx);
	if (wc->wc_flags & IBV_WC_WITH_IMM)
		wc->imm_data = ibv_wc_read_imm_data(cqx);
	wc->qp_num = ibv_wc_read_qp_num(cqx);
	wc->src_qp = ibv_wc_read_src_qp(cqx);
	wc->slid = (uint16_t)ibv_wc_read_slid(cqx);
	wc->sl = ibv_wc_read_sl(cqx);
	wc->dlid_path_bits = ibv_wc_read_dlid_path_bits(cqx);
}

/* Drain n completions with the ex API, in batches as they come; with
 * ts, their timestamps too (raw in ts[i], wallclock in ts[n + i]). */
static unsigned int
drain_ex_ts(struct ibv_cq_ex *cqx, struct ibv_wc *wc, unsigned int n,
	    uint64_t *ts)
{
	double end = ut_now_s() + WAIT_SEC;
	unsigned int got = 0;
	int ret;

	while (got < n && ut_now_s() < end) {
		ret = ibv_start_poll(cqx, &(struct ibv_poll_cq_attr){ 0 });
		if (ret == ENOENT)
			continue;
		if (!UT_CHECK_EQ(ret, 0))
			break;
		do {
			if (ts != NULL) {
				ts[got] = ibv_wc_read_completion_ts(cqx);
				ts[n + got] =
					ibv_wc_read_completion_wallclock_ns(cqx);
			}
			read_ex(cqx, &wc[got++]);
		} while (got < n && (ret = ibv_next_poll(cqx)) == 0);
		UT_CHECK(got == n || ret == ENOENT);
		ibv_end_poll(cqx);
	}
	return got;
}

static unsigned int
drain_ex(struct ibv_cq_ex *cqx, struct ibv_wc *wc, unsigned int n)
{
	return drain_ex_ts(cqx, wc, n, NULL);
}

static uint64_t
realtime_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The device clock now (ibv_query_rt_values_ex(), the raw clock). */
static uint64_t
raw_clock(struct ibv_context *ctx)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	UT_CHECK_EQ(ibv_query_rt_values_ex(ctx, &v), 0);
	UT_CHECK_EQ(v.comp_mask, IBV_VALUES_MASK_RAW_CLOCK);
	UT_CHECK_EQ(v.raw_clock.tv_sec, 0);
	return (uint64_t)v.raw_clock.tv_nsec;
}

/* n completions' timestamps (drain_ex_ts()) taken between raw clock values
 * c0 and c1 and realtime w0 and w1, in the order they were queued. The
 * wallclock view is converted from the raw one as it is read: 1 ms of
 * slack covers the two clocks' rates differing under NTP slewing. */
static void
check_ts(const uint64_t *ts, unsigned int n, uint64_t c0, uint64_t c1,
	 uint64_t w0, uint64_t w1)
{
	const uint64_t slack = 1000000;
	unsigned int i, bad = 0;

	for (i = 0; i < n; i++) {
		bad += ts[i] < c0 || ts[i] > c1;
		bad += i > 0 && ts[i] < ts[i - 1];
		bad += ts[n + i] + slack < w0 || ts[n + i] > w1 + slack;
	}
	UT_CHECK_EQ(bad, 0);
	UT_NOTE("%u timestamps, first %" PRIu64 " ticks after the round began",
		n, n > 0 ? ts[0] - c0 : 0);
}

/* Every field the ex API reads, against ibv_poll_cq()'s. */
static void
compare_wc(const struct ibv_wc *p, const struct ibv_wc *x, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++, p++, x++) {
		UT_CHECK_EQ(x->wr_id, p->wr_id);
		UT_CHECK_EQ(x->status, p->status);
		UT_CHECK_EQ(x->opcode, p->opcode);
		UT_CHECK_EQ(x->vendor_err, p->vendor_err);
		UT_CHECK_EQ(x->byte_len, p->byte_len);
		UT_CHECK_EQ(x->wc_flags, p->wc_flags);
		if (p->wc_flags & IBV_WC_WITH_IMM)
			UT_CHECK_EQ(x->imm_data, p->imm_data);
		UT_CHECK_EQ(x->qp_num, p->qp_num);
		UT_CHECK_EQ(x->src_qp, p->src_qp);
		UT_CHECK_EQ(x->slid, p->slid);
		UT_CHECK_EQ(x->sl, p->sl);
		UT_CHECK_EQ(x->dlid_path_bits, p->dlid_path_bits);
		UT_NOTE("completion %u (wr_id %llu)", i,
			(unsigned long long)p->wr_id);
	}
}

/* What the mix must have produced, whichever way it was polled. */
static void
check_mix(const struct side *a, const struct side *b,
	  const struct ibv_wc *sw, const struct ibv_wc *rw)
{
	static const enum ibv_wc_opcode send_op[] = {
		IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE,
		IBV_WC_RDMA_READ, IBV_WC_COMP_SWAP, IBV_WC_FETCH_ADD,
		IBV_WC_SEND,
	};
	unsigned int i, r = 0;
	uint64_t v;

	for (i = 0; i < MIX_N; i++) {
		UT_CHECK_EQ(sw[i].wr_id, 100 + i);
		UT_CHECK_EQ(sw[i].status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(sw[i].opcode, send_op[i]);
		UT_CHECK_EQ(sw[i].qp_num, a->qp->qp_num);
		UT_NOTE("send completion %u", i);
		if (!mix[i].recv)
			continue;
		UT_CHECK_EQ(rw[r].wr_id, 200 + r);
		UT_CHECK_EQ(rw[r].status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(rw[r].opcode,
			    mix[i].op == IBV_WR_RDMA_WRITE_WITH_IMM ?
			    IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV);
		UT_CHECK_EQ(rw[r].byte_len, mix[i].len);
		UT_CHECK_EQ(rw[r].qp_num, b->qp->qp_num);
		if (UT_CHECK_EQ(!!(rw[r].wc_flags & IBV_WC_WITH_IMM),
				mix[i].op == IBV_WR_SEND_WITH_IMM ||
				mix[i].op == IBV_WR_RDMA_WRITE_WITH_IMM) &&
		    (rw[r].wc_flags & IBV_WC_WITH_IMM))
			UT_CHECK_EQ(be32toh(rw[r].imm_data), IMM_BASE + i);
		UT_NOTE("receive completion %u (mix %u)", r, i);
		r++;
	}
	/* The bytes: the last send, both writes, the read; the compare and
	 * swap found 1000 (equal: swapped to 2000), the add found 2000 and
	 * left 2005. */
	UT_CHECK_MEM(b->buf, a->buf, 3 * 1024 + 17);
	UT_CHECK_MEM(b->buf + 4096, a->buf, 3000);
	UT_CHECK_MEM(b->buf + 8192, a->buf + 3000, 500);
	UT_CHECK_MEM(a->buf + 8192, b->buf + READ_OFF, 2000);
	memcpy(&v, a->buf + 12288, 8);
	UT_CHECK_EQ(v, 1000);
	memcpy(&v, a->buf + 12296, 8);
	UT_CHECK_EQ(v, 2000);
	memcpy(&v, b->buf + ATOM_OFF, 8);
	UT_CHECK_EQ(v, 2005);
}

/* Fresh source bytes, cleared destinations, the atomic word at 1000. */
static void
reset_bufs(struct side *a, struct side *b)
{
	uint64_t v = 1000;
	unsigned int i;

	for (i = 0; i < 12288; i++)
		a->buf[i] = (char)ut_rand();
	memset(a->buf + 8192, 0, 4096 + 16);
	memset(b->buf, 0, READ_OFF);
	for (i = READ_OFF; i < BUF_SIZE; i++)
		b->buf[i] = (char)ut_rand();
	memcpy(b->buf + ATOM_OFF, &v, 8);
}

static void
test_mix(struct side *a, struct side *b)
{
	struct ibv_wc ps[MIX_N], pr[MIX_N], xs[MIX_N], xr[MIX_N];
	uint64_t ts_s[2 * MIX_N], ts_r[2 * MIX_N], c0, c1, w0, w1;
	unsigned int nr = mix_recvs();

	/* Empty: ENOENT, and the CQ stays usable. */
	UT_CHECK_EQ(ibv_start_poll(a->cqx, &(struct ibv_poll_cq_attr){ 0 }),
		    ENOENT);
	UT_CHECK_EQ(ibv_start_poll(a->cqx,
		&(struct ibv_poll_cq_attr){ .comp_mask = 1 }), EINVAL);

	/* Round 1: ibv_poll_cq() on ibv_cq_ex_to_cq(). */
	reset_bufs(a, b);
	post_mix(a, b);
	UT_CHECK_EQ(drain_poll_cq(a->cqx, ps, MIX_N), MIX_N);
	UT_CHECK_EQ(drain_poll_cq(b->cqx, pr, nr), nr);
	check_mix(a, b, ps, pr);
	UT_NOTE("round 1: ibv_poll_cq");

	/* Round 2: the same posts, through the ex API, with timestamps. */
	reset_bufs(a, b);
	w0 = realtime_ns();
	c0 = raw_clock(a->ctx);
	post_mix(a, b);
	UT_CHECK_EQ(drain_ex_ts(a->cqx, xs, MIX_N, ts_s), MIX_N);
	UT_CHECK_EQ(drain_ex_ts(b->cqx, xr, nr, ts_r), nr);
	c1 = raw_clock(b->ctx);
	w1 = realtime_ns();
	check_mix(a, b, xs, xr);
	UT_NOTE("round 2: ex API");
	check_ts(ts_s, MIX_N, c0, c1, w0, w1);
	check_ts(ts_r, nr, c0, c1, w0, w1);
	compare_wc(ps, xs, MIX_N);
	compare_wc(pr, xr, nr);
	UT_CHECK_EQ(ibv_start_poll(a->cqx, NULL), ENOENT);
	UT_CHECK_EQ(ibv_start_poll(b->cqx, NULL), ENOENT);
}

/* -e style: arm, sleep on the channel, take the event, then poll. */
static void
test_events(struct side *a, struct side *b)
{
	struct pollfd pfd = { .fd = b->ch->fd, .events = POLLIN };
	struct ibv_send_wr swr, *bad_s;
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	UT_CHECK_EQ(ibv_req_notify_cq(ibv_cq_ex_to_cq(b->cqx), 0), 0);
	UT_CHECK_EQ(poll(&pfd, 1, 0), 0);	/* nothing yet */
	sge = (struct ibv_sge){ (uintptr_t)b->buf, 64, b->mr->lkey };
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 300;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	UT_CHECK_EQ(ibv_post_recv(b->qp, &rwr, &bad_r), 0);
	sge = (struct ibv_sge){ (uintptr_t)a->buf, 64, a->mr->lkey };
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 301;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND_WITH_IMM;
	swr.imm_data = htobe32(0xfeedf00d);
	swr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	UT_CHECK_EQ(ibv_post_send(a->qp, &swr, &bad_s), 0);
	if (!UT_CHECK_EQ(poll(&pfd, 1, WAIT_SEC * 1000), 1))
		return;
	UT_CHECK_EQ(ibv_get_cq_event(b->ch, &ev_cq, &ev_ctx), 0);
	UT_CHECK(ev_cq == ibv_cq_ex_to_cq(b->cqx));
	UT_CHECK(ev_ctx == b->cqx->cq_context);
	ibv_ack_cq_events(ev_cq, 1);
	if (UT_CHECK_EQ(ibv_start_poll(b->cqx, NULL), 0)) {
		UT_CHECK_EQ(b->cqx->wr_id, 300);
		UT_CHECK_EQ(b->cqx->status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(ibv_wc_read_opcode(b->cqx), IBV_WC_RECV);
		UT_CHECK_EQ(ibv_wc_read_byte_len(b->cqx), 64);
		UT_CHECK_EQ(be32toh(ibv_wc_read_imm_data(b->cqx)), 0xfeedf00d);
		UT_CHECK_EQ(ibv_next_poll(b->cqx), ENOENT);
		ibv_end_poll(b->cqx);
	}
	UT_CHECK_EQ(drain_poll_cq(a->cqx, &wc, 1), 1);
	UT_CHECK_EQ(wc.wr_id, 301);
	/* A CQ a QP uses cannot go. */
	UT_CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(b->cqx)), EBUSY);
}

/* An error completion reads the same through the ex API: a write to a
 * key qb never gave out (IBTA 9.7.5.2.4: remote access error). */
static void
test_error_completion(struct side *a, struct side *b)
{
	struct ibv_send_wr swr, *bad_s;
	struct ibv_sge sge;
	struct ibv_wc wc;

	sge = (struct ibv_sge){ (uintptr_t)a->buf, 64, a->mr->lkey };
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 400;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_RDMA_WRITE;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.wr.rdma.remote_addr = (uintptr_t)b->buf;
	swr.wr.rdma.rkey = b->mr->rkey ^ 0x5a5a00;
	UT_CHECK_EQ(ibv_post_send(a->qp, &swr, &bad_s), 0);
	if (UT_CHECK_EQ(drain_ex(a->cqx, &wc, 1), 1)) {
		UT_CHECK_EQ(wc.wr_id, 400);
		UT_CHECK_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
		UT_CHECK_EQ(wc.qp_num, a->qp->qp_num);
	}
}

/* The device clock's attributes: the TSC, all 64 bits, running; the raw
 * clock read asks for nothing when asked for nothing. */
static void
test_absent(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex dx;
	struct ibv_values_ex v = { .comp_mask = 0 };
	struct ibv_xrcd_init_attr xa = { 0 };
	uint64_t t0;

	UT_CHECK_EQ(ibv_query_device_ex(ctx, NULL, &dx), 0);
	UT_CHECK_EQ(dx.completion_timestamp_mask, UINT64_MAX);
	UT_CHECK(dx.hca_core_clock > 0);
	UT_CHECK_EQ(ibv_query_rt_values_ex(ctx, &v), 0);
	UT_CHECK_EQ(v.comp_mask, 0);
	t0 = raw_clock(ctx);
	UT_CHECK(raw_clock(ctx) > t0);
	UT_NOTE("hca_core_clock %" PRIu64 " kHz", dx.hca_core_clock);
	errno = 0;
	/* XRC domains exist now (test_verbs_xrc.c): no FD/OFLAGS mask is EINVAL. */
	UT_CHECK(ibv_open_xrcd(ctx, &xa) == NULL && errno == EINVAL);
}

/* ------------------------------------------------------------------------
 * Bad input: the documented errors, and nothing changed by a failed verb.
 */
static struct ibv_qp *
rc_qp(struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq,
      uint32_t max_send_wr)
{
	struct ibv_qp_init_attr qa;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = scq;
	qa.recv_cq = rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = max_send_wr;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	return ibv_create_qp(pd, &qa);
}

static void
check_qp_state(struct ibv_qp *qp, enum ibv_qp_state want)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	UT_CHECK_EQ(qp->state, want);
	UT_CHECK_EQ(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	UT_CHECK_EQ(a.qp_state, want);
}

/* ------------------------------------------------------------------------
 * Parent domains: an arena allocator that records what it is asked.
 */
#define ARENA_SIZE	(1u << 20)
#define ARENA_PTRS	8

struct arena {
	char *base;
	size_t used;
	unsigned int allocs, frees, kinds;	/* kinds: bit per type */
	unsigned int foreign;	/* calls off the main thread, or bad pd */
	bool use_default;
	int fail_in;		/* allocations before one fails; -1 never */
	pthread_t thread;
	struct ibv_pd *pd;	/* the parent domain it serves */
	void *live[ARENA_PTRS];
};

static void *
arena_alloc(struct ibv_pd *pd, void *pd_context, size_t size, size_t align,
	    uint64_t type)
{
	struct arena *ar = pd_context;
	size_t off = (ar->used + align - 1) & ~(align - 1);
	unsigned int i;

	ar->allocs++;
	ar->kinds |= 1u << (type & 31);
	ar->foreign += !pthread_equal(pthread_self(), ar->thread) ||
		       pd != ar->pd || align == 0 || (align & (align - 1));
	if (ar->use_default)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (ar->fail_in == 0 || off + size > ARENA_SIZE)
		return NULL;
	if (ar->fail_in > 0)
		ar->fail_in--;
	for (i = 0; i < ARENA_PTRS && ar->live[i] != NULL; i++)
		;
	if (i == ARENA_PTRS)
		return NULL;
	ar->used = off + size;
	ar->live[i] = ar->base + off;
	return ar->live[i];
}

static void
arena_free(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t type)
{
	struct arena *ar = pd_context;
	unsigned int i;

	(void)type;
	ar->frees++;
	ar->foreign += !pthread_equal(pthread_self(), ar->thread) ||
		       pd != ar->pd;
	for (i = 0; i < ARENA_PTRS && ar->live[i] != ptr; i++)
		;
	if (i < ARENA_PTRS)
		ar->live[i] = NULL;
	else
		ar->foreign++;	/* never given out */
}

static unsigned int
arena_live(const struct arena *ar)
{
	unsigned int i, n = 0;

	for (i = 0; i < ARENA_PTRS; i++)
		n += ar->live[i] != NULL;
	return n;
}

/* EINVAL for each bad attribute set; nothing made. */
static void
parent_errors(struct ibv_context *c0, struct ibv_context *c1,
	      struct ibv_pd *pd, struct ibv_pd *par)
{
	struct ibv_pd *opd = ibv_alloc_pd(c1);
	struct ibv_parent_domain_init_attr pa[] = {
		{ .pd = NULL },
		{ .pd = par },			/* a parent domain as PD */
		{ .pd = opd },			/* another context's PD */
		{ .pd = pd, .comp_mask = 1u << 5 },
		{ .pd = pd, .alloc = arena_alloc,
		  .comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS },
	};
	size_t i;

	for (i = 0; i < DIM(pa); i++) {
		errno = 0;
		UT_CHECK(ibv_alloc_parent_domain(c0, &pa[i]) == NULL &&
			 errno == EINVAL);
	}
	errno = 0;
	UT_CHECK(ibv_alloc_td(c0, &(struct ibv_td_init_attr){ 1 }) == NULL &&
		 errno == EINVAL);
	if (opd != NULL)
		UT_CHECK_EQ(ibv_dealloc_pd(opd), 0);
}

/* SEND one message from s to r over their connected QPs; the receive's
 * bytes intact. Polls both CQs. */
static bool
pd_send(struct ibv_qp *s, struct ibv_cq *scq, struct ibv_mr *smr,
	struct ibv_qp *r, struct ibv_cq *rcq, struct ibv_mr *rmr)
{
	struct ibv_sge ss = { (uintptr_t)smr->addr, 1000, smr->lkey };
	struct ibv_sge rs = { (uintptr_t)rmr->addr, 1000, rmr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rs, .num_sge = 1 };
	struct ibv_send_wr swr = { .wr_id = 1, .sg_list = &ss, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_recv_wr *br;
	struct ibv_send_wr *bs;
	struct ibv_wc wc;
	double end = ut_now_s() + WAIT_SEC;
	unsigned int i, got = 0;

	for (i = 0; i < 1000; i++)
		((char *)smr->addr)[i] = (char)ut_rand();
	memset(rmr->addr, 0, 1000);
	UT_CHECK_EQ(ibv_post_recv(r, &rwr, &br), 0);
	UT_CHECK_EQ(ibv_post_send(s, &swr, &bs), 0);
	while (got < 2 && ut_now_s() < end) {
		if (ibv_poll_cq(scq, 1, &wc) == 1)
			got += UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		if (ibv_poll_cq(rcq, 1, &wc) == 1)
			got += UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS) &&
			       UT_CHECK_EQ(wc.byte_len, 1000);
	}
	return UT_CHECK_EQ(got, 2) &&
	       UT_CHECK(memcmp(smr->addr, rmr->addr, 1000) == 0);
}

/* RC traffic both ways between a QP on the parent domain (its rings, its
 * ex CQ's and an SRQ's from the arena) and a plain one on c1. */
static void
parent_traffic(struct ibv_context *c0, struct ibv_context *c1,
	       struct ibv_pd *par, struct arena *ar)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 16,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = par };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_pd *pd1 = ibv_alloc_pd(c1);
	struct ibv_cq *cq1 = ibv_create_cq(c1, 16, NULL, NULL, 0);
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(c0, &ca);
	struct ibv_srq *srq = ibv_create_srq(par, &sa);
	char *buf = calloc(1, 8192);
	struct ibv_mr *mr = NULL, *mr1 = NULL;
	struct ibv_qp *qp = NULL, *qp1 = NULL;
	size_t i, nz = 0;

	if (!UT_CHECK(pd1 && cq1 && cqx && srq && buf))
		goto out;
	UT_CHECK_EQ(ar->kinds, 1u << 3 | 1u << 4);	/* CQ, SRQ */
	mr = ibv_reg_mr(par, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	mr1 = ibv_reg_mr(pd1, buf + 4096, 4096, IBV_ACCESS_LOCAL_WRITE);
	qp = rc_qp(par, ibv_cq_ex_to_cq(cqx), ibv_cq_ex_to_cq(cqx), 4);
	qp1 = rc_qp(pd1, cq1, cq1, 4);
	if (!UT_CHECK(mr && mr1 && qp && qp1))
		goto out;
	UT_CHECK(mr->pd == par && qp->pd == par);
	UT_CHECK_EQ(ar->kinds, 1u << 1 | 1u << 2 | 1u << 3 | 1u << 4);
	UT_CHECK_EQ(ibv_dealloc_pd(par), EBUSY);
	ut_verbs_rc_connect(qp, c1, qp1->qp_num, 7, 12);
	ut_verbs_rc_connect(qp1, c0, qp->qp_num, 7, 12);
	pd_send(qp, ibv_cq_ex_to_cq(cqx), mr, qp1, cq1, mr1);
	pd_send(qp1, cq1, mr1, qp, ibv_cq_ex_to_cq(cqx), mr);
	/* The WQEs and completions were written in the arena. */
	for (i = 0; i < ar->used; i++)
		nz += ar->base[i] != 0;
	UT_CHECK(nz > 0);
	UT_NOTE("parent domain: %u allocations, %zu bytes, %zu written",
		ar->allocs, ar->used, nz);
out:
	if (qp1 != NULL)
		UT_CHECK_EQ(ibv_destroy_qp(qp1), 0);
	if (qp != NULL)
		UT_CHECK_EQ(ibv_destroy_qp(qp), 0);
	if (srq != NULL)
		UT_CHECK_EQ(ibv_destroy_srq(srq), 0);
	ut_verbs_destroy(NULL, mr, cqx != NULL ? ibv_cq_ex_to_cq(cqx) : NULL,
			 NULL);
	ut_verbs_destroy(NULL, mr1, cq1, pd1);
	free(buf);
}

static void
test_parent_domain(struct ibv_context *c0, struct ibv_context *c1)
{
	struct arena ar = { .thread = pthread_self(), .fail_in = -1 };
	struct ibv_td *td = ibv_alloc_td(c0, &(struct ibv_td_init_attr){ 0 });
	struct ibv_pd *pd = ibv_alloc_pd(c0), *par;
	struct ibv_parent_domain_init_attr pa = { .pd = pd, .td = td,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = arena_alloc, .free = arena_free, .pd_context = &ar };
	struct ibv_cq *cq = ibv_create_cq(c0, 8, NULL, NULL, 0);

	ar.base = calloc(1, ARENA_SIZE);
	if (!UT_CHECK(td != NULL && pd != NULL && cq != NULL && ar.base))
		return;
	par = ar.pd = ibv_alloc_parent_domain(c0, &pa);
	if (!UT_CHECK(par != NULL))
		return;
	UT_CHECK(par->context == c0 && par != pd);
	parent_errors(c0, c1, pd, par);
	UT_CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
	UT_CHECK_EQ(ibv_dealloc_td(td), EBUSY);
	parent_traffic(c0, c1, par, &ar);
	UT_CHECK_EQ(ar.frees, ar.allocs);
	UT_CHECK_EQ(arena_live(&ar), 0);
	/* The receive ring's allocation fails: ENOMEM, and the send ring it
	 * gave before comes back. */
	ar.fail_in = 1;
	ar.allocs = ar.frees = 0;
	errno = 0;
	UT_CHECK(rc_qp(par, cq, cq, 4) == NULL && errno == ENOMEM);
	UT_CHECK(ar.allocs == 2 && ar.frees == 1);
	UT_CHECK_EQ(arena_live(&ar), 0);
	/* IBV_ALLOCATOR_USE_DEFAULT: asked, nothing taken, nothing freed. */
	ar.fail_in = -1;
	ar.use_default = true;
	ar.allocs = ar.frees = 0;
	ar.used = 0;
	{
		struct ibv_qp *qp = rc_qp(par, cq, cq, 4);

		if (UT_CHECK(qp != NULL))
			UT_CHECK_EQ(ibv_destroy_qp(qp), 0);
	}
	UT_CHECK(ar.allocs == 2 && ar.frees == 0 && ar.used == 0);
	UT_CHECK_EQ(ar.foreign, 0);
	/* Without allocators: the library's rings; still held by its QP. */
	{
		struct ibv_parent_domain_init_attr pb = { .pd = pd };
		struct ibv_pd *p2 = ibv_alloc_parent_domain(c0, &pb);
		struct ibv_qp *qp = p2 != NULL ? rc_qp(p2, cq, cq, 4) : NULL;

		if (UT_CHECK(qp != NULL)) {
			UT_CHECK_EQ(ibv_dealloc_pd(p2), EBUSY);
			UT_CHECK_EQ(ibv_destroy_qp(qp), 0);
		}
		if (p2 != NULL)
			UT_CHECK_EQ(ibv_dealloc_pd(p2), 0);
	}
	UT_CHECK_EQ(ibv_dealloc_pd(par), 0);
	UT_CHECK_EQ(ibv_dealloc_td(td), 0);
	UT_CHECK_EQ(ibv_destroy_cq(cq), 0);
	UT_CHECK_EQ(ibv_dealloc_pd(pd), 0);
	free(ar.base);
}

static void
test_bad_qp(struct ibv_context *c0, struct ibv_context *c1,
	    struct ibv_pd *pd, struct ibv_cq *cq, struct ibv_cq *ocq)
{
	struct ibv_device_attr da;
	struct ibv_qp_attr a;
	struct ibv_qp *qp;

	UT_CHECK_EQ(ibv_query_device(c0, &da), 0);
	/* A CQ of another device; more WRs than max_qp_wr; no CQ. */
	errno = 0;
	UT_CHECK(rc_qp(pd, cq, ocq, 4) == NULL && errno == EINVAL);
	errno = 0;
	UT_CHECK(rc_qp(pd, ocq, cq, 4) == NULL && errno == EINVAL);
	errno = 0;
	UT_CHECK(rc_qp(pd, cq, cq, (uint32_t)da.max_qp_wr + 1) == NULL &&
		 errno == EINVAL);
	errno = 0;
	UT_CHECK(rc_qp(pd, NULL, cq, 4) == NULL && errno == EINVAL);
	/* None of them holds the CQ: it could go (it is reused below). */
	qp = rc_qp(pd, cq, cq, 4);
	if (!UT_CHECK(qp != NULL))
		return;
	/* RESET -> RTR skips INIT (ibv_modify_qp(3)'s table): EINVAL. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	UT_CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	check_qp_state(qp, IBV_QPS_RESET);
	/* RESET -> INIT without its required attributes, or with port 2. */
	a.qp_state = IBV_QPS_INIT;
	UT_CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	check_qp_state(qp, IBV_QPS_RESET);
	a.port_num = 2;
	UT_CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), EINVAL);
	check_qp_state(qp, IBV_QPS_RESET);
	a.port_num = 1;
	a.pkey_index = 1;	/* one P_Key: index 0 only */
	UT_CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), EINVAL);
	check_qp_state(qp, IBV_QPS_RESET);
	a.pkey_index = 0;
	UT_CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	check_qp_state(qp, IBV_QPS_INIT);
	UT_CHECK_EQ(ibv_modify_qp(NULL, &a, IBV_QP_STATE), EINVAL);
	UT_CHECK_EQ(ibv_modify_qp(qp, NULL, IBV_QP_STATE), EINVAL);
	UT_CHECK_EQ(ibv_destroy_cq(cq), EBUSY);
	UT_CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
	UT_CHECK_EQ(ibv_destroy_qp(qp), 0);
	(void)c1;
}

static void
test_bad_input(struct ibv_context *c0, struct ibv_context *c1)
{
	static char buf[4096];
	struct ibv_pd *pd = ibv_alloc_pd(c0);
	struct ibv_cq *cq = ibv_create_cq(c0, 8, NULL, NULL, 0);
	struct ibv_cq *ocq = ibv_create_cq(c1, 8, NULL, NULL, 0);
	struct ibv_ah_attr ah = { .is_global = 1, .port_num = 2 };
	struct ibv_mr *mr;

	if (!UT_CHECK(pd != NULL && cq != NULL && ocq != NULL))
		return;
	test_bad_qp(c0, c1, pd, cq, ocq);
	/* An MR holds its PD; unknown access bits are refused. */
	errno = 0;
	UT_CHECK(ibv_reg_mr(pd, buf, sizeof(buf), 1 << 30) == NULL &&
		 errno == EINVAL);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (UT_CHECK(mr != NULL)) {
		UT_CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
		UT_CHECK_EQ(ibv_dereg_mr(mr), 0);
	}
	/* An AH on a port the device does not have. */
	errno = 0;
	UT_CHECK(ibv_create_ah(pd, &ah) == NULL && errno == EINVAL);
	/* NULL objects: EINVAL, not a crash. */
	UT_CHECK_EQ(ibv_destroy_qp(NULL), EINVAL);
	UT_CHECK_EQ(ibv_destroy_cq(NULL), EINVAL);
	UT_CHECK_EQ(ibv_dealloc_pd(NULL), EINVAL);
	UT_CHECK_EQ(ibv_dereg_mr(NULL), EINVAL);
	UT_CHECK_EQ(ibv_destroy_ah(NULL), EINVAL);
	UT_CHECK_EQ(ibv_destroy_comp_channel(NULL), EINVAL);
	errno = 0;
	UT_CHECK(ibv_alloc_pd(NULL) == NULL && errno == EINVAL);
	errno = 0;
	UT_CHECK(ibv_reg_mr(NULL, buf, 1, 0) == NULL && errno == EINVAL);
	UT_CHECK_EQ(ibv_query_device(NULL, NULL), EINVAL);
	/* Everything above left the objects as they were: they all go. */
	UT_CHECK_EQ(ibv_destroy_cq(cq), 0);
	UT_CHECK_EQ(ibv_destroy_cq(ocq), 0);
	UT_CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

int
main(void)
{
	struct ibv_device **list = NULL;
	struct ibv_context *c0 = NULL, *c1 = NULL;
	struct ibv_device_attr da;
	struct side a, b;

	ut_srand(44);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (ut_verbs_ringlink_pair("cqex", 83, &list, &c0, &c1) == 0 &&
	    UT_CHECK_EQ(ibv_query_device(c0, &da), 0)) {
		test_absent(c0);
		test_create_errors(c0, c1, da.max_cqe);
		test_bad_input(c0, c1);
		test_parent_domain(c0, c1);
		if (side_open(&a, c0, &a) == 0 && side_open(&b, c1, &b) == 0) {
			side_connect(&a, &b);
			side_connect(&b, &a);
			test_mix(&a, &b);
			test_events(&a, &b);
			test_error_completion(&a, &b);
		}
		side_close(&a);
		side_close(&b);
	}
	ut_verbs_close_pair(list, c0, c1);
	return ut_summary();
}
