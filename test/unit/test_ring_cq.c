/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The SPSC ring (lib/transport/include/uroce_ring.h) and the CQ on it
 * (lib/transport/cq.c): fill/drain/wrap, the 32-bit index wrap, a two-thread
 * stress run, CQ order, partial polls, cleaning a reset QP's completions,
 * overrun, notification arming, a two-thread arm/poll/notify run that
 * would hang on a lost wakeup, completion timestamps (across a clean and
 * a resize) and a caller's ring allocator (uroce_ring_mem.h).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_pause.h>

#include "uroce_cq.h"
#include "uroce_ring.h"
#include "uroce_test.h"

/* Spin politely: a CI machine may give the two threads fewer cores. */
static void
backoff(unsigned int *spins)
{
	if (++*spins % 64 == 0)
		sched_yield();
	else
		rte_pause();
}

/* ---------------------------------------------------------------------------
 * Ring, one thread.
 */
static void
test_ring_init(void)
{
	struct uroce_ring r;
	uint64_t mem[8];

	UT_CHECK_EQ(uroce_ring_init(&r, mem, 0, 8), -EINVAL);
	UT_CHECK_EQ(uroce_ring_init(&r, mem, 3, 8), -EINVAL);
	UT_CHECK_EQ(uroce_ring_init(&r, mem, 6, 8), -EINVAL);
	UT_CHECK_EQ(uroce_ring_init(&r, mem, 8, 0), -EINVAL);
	UT_CHECK_EQ(uroce_ring_init(&r, NULL, 8, 8), -EINVAL);
	UT_CHECK_EQ(uroce_ring_init(&r, mem, UINT32_C(1) << 31, 1), 0);
	UT_CHECK_EQ(uroce_ring_capacity(&r), UINT32_C(1) << 31);
	UT_CHECK_EQ(uroce_ring_init(&r, mem, 1, 8), 0);
	UT_CHECK_EQ(uroce_ring_capacity(&r), 1);
	UT_CHECK_EQ(uroce_ring_init(&r, mem, 8, 8), 0);
	UT_CHECK_EQ(uroce_ring_capacity(&r), 8);
	UT_CHECK_EQ(uroce_ring_mem_size(8, 48), 384);
	UT_CHECK_EQ(uroce_ring_count(&r), 0);
	/* the two sides' indexes on their own cache lines */
	UT_CHECK(offsetof(struct uroce_ring, head) / RTE_CACHE_LINE_SIZE !=
		 offsetof(struct uroce_ring, tail) / RTE_CACHE_LINE_SIZE);
	UT_CHECK(offsetof(struct uroce_ring, slots) / RTE_CACHE_LINE_SIZE !=
		 offsetof(struct uroce_ring, head) / RTE_CACHE_LINE_SIZE);
}

/*
 * Push and pop random amounts (element by element and in bulk) through a
 * ring of 8, many times round, starting just below the 2^32 index wrap;
 * check order, the full and empty cases, and the counts.
 */
static void
fill_drain(uint32_t start)
{
	struct uroce_ring r;
	uint64_t mem[8], in = 0, out = 0, v;
	unsigned int round, i, n, bad = 0;
	uint32_t avail;

	uroce_ring_init(&r, mem, 8, sizeof(uint64_t));
	r.head = r.tail = r.prod_tail_seen = r.cons_head_seen = start;
	srand(7);
	for (round = 0; round < 20000; round++) {
		n = (unsigned int)rand() % 10;
		for (i = 0; i < n; i++) {
			if (in - out == 8) {
				bad += uroce_ring_enqueue(&r, &in);
				bad += uroce_ring_prod_avail(&r, 1) != 0;
				break;
			}
			bad += !uroce_ring_enqueue(&r, &in);
			in++;
		}
		bad += uroce_ring_count(&r) != in - out;
		/* drain in bulk, in place */
		n = (unsigned int)rand() % 10;
		avail = uroce_ring_cons_avail(&r, n);
		/* at least n when n are there, never more than there are */
		bad += avail > in - out || avail < RTE_MIN(n, in - out);
		n = RTE_MIN(n, avail);
		for (i = 0; i < n; i++) {
			memcpy(&v, uroce_ring_cons_slot(&r, i), sizeof(v));
			bad += v != out + i;
		}
		uroce_ring_cons_release(&r, n);
		out += n;
		if (in == out)
			bad += uroce_ring_dequeue(&r, &v);
	}
	UT_CHECK_EQ(bad, 0);
	UT_CHECK(in > 50000);
	UT_CHECK((uint32_t)(r.head - start) == (uint32_t)in);
	UT_NOTE("start index 0x%x", start);
}

static void
test_ring_fill_drain(void)
{
	fill_drain(0);
	fill_drain(UINT32_MAX - 3);	/* indexes wrap within the run */
	fill_drain(INT32_MAX - 2);
}

/* Bulk produce in place; avail's "at least want" contract. */
static void
test_ring_bulk(void)
{
	struct uroce_ring r;
	uint32_t mem[16], i, v;

	uroce_ring_init(&r, mem, 16, sizeof(uint32_t));
	UT_CHECK_EQ(uroce_ring_prod_avail(&r, 16), 16);
	for (i = 0; i < 10; i++)
		memcpy(uroce_ring_prod_slot(&r, i), &i, sizeof(i));
	UT_CHECK_EQ(uroce_ring_cons_avail(&r, 1), 0);	/* not committed */
	uroce_ring_prod_commit(&r, 10);
	UT_CHECK_EQ(uroce_ring_prod_avail(&r, 1), 6);
	UT_CHECK_EQ(uroce_ring_cons_avail(&r, 10), 10);
	uroce_ring_cons_release(&r, 4);
	/* the producer's copy of tail is not reloaded while 6 >= 6 ... */
	UT_CHECK_EQ(uroce_ring_prod_avail(&r, 6), 6);
	/* ... and is when more is wanted */
	UT_CHECK_EQ(uroce_ring_prod_avail(&r, 7), 10);
	UT_CHECK_EQ(uroce_ring_cons_avail(&r, 1), 6);
	UT_CHECK(uroce_ring_dequeue(&r, &v));
	UT_CHECK_EQ(v, 4);
	UT_CHECK_EQ(uroce_ring_count(&r), 5);
}

/* ---------------------------------------------------------------------------
 * Ring, two threads: 10 million sequence numbers, in order, none lost.
 */
#define STRESS_N	10000000u
#define STRESS_SLOTS	1024u

struct stress {
	struct uroce_ring r;
	uint64_t mem[STRESS_SLOTS];
};

static void *
stress_producer(void *arg)
{
	struct stress *s = arg;
	uint64_t seq = 0;
	uint32_t n, i;
	unsigned int spins = 0;

	while (seq < STRESS_N) {
		n = uroce_ring_prod_avail(&s->r, 32);
		if (n == 0) {
			backoff(&spins);
			continue;
		}
		n = RTE_MIN(n, 32u);
		n = (uint32_t)RTE_MIN((uint64_t)n, STRESS_N - seq);
		for (i = 0; i < n; i++, seq++)
			*(uint64_t *)uroce_ring_prod_slot(&s->r, i) = seq;
		uroce_ring_prod_commit(&s->r, n);
	}
	return NULL;
}

static void
test_ring_two_threads(void)
{
	struct stress *s = aligned_alloc(RTE_CACHE_LINE_SIZE, sizeof(*s));
	uint64_t expect = 0, bad = 0;
	unsigned int spins = 0;
	uint32_t n, i;
	pthread_t t;
	double t0;

	if (!UT_CHECK(s != NULL))
		return;
	uroce_ring_init(&s->r, s->mem, STRESS_SLOTS, sizeof(uint64_t));
	t0 = ut_now_s();
	if (!UT_CHECK_EQ(pthread_create(&t, NULL, stress_producer, s), 0))
		return;
	while (expect < STRESS_N) {
		n = uroce_ring_cons_avail(&s->r, 32);
		if (n == 0) {
			backoff(&spins);
			continue;
		}
		for (i = 0; i < n; i++, expect++)
			bad += *(const uint64_t *)
				uroce_ring_cons_slot(&s->r, i) != expect;
		uroce_ring_cons_release(&s->r, n);
	}
	pthread_join(t, NULL);
	printf("ring: %u sequence numbers across two threads in %.3f s\n",
	       STRESS_N, ut_now_s() - t0);
	UT_CHECK_EQ(bad, 0);
	UT_CHECK_EQ(expect, STRESS_N);
	UT_CHECK_EQ(uroce_ring_count(&s->r), 0);
	free(s);
}

/* ---------------------------------------------------------------------------
 * CQ, one thread.
 */
static struct ibv_wc
wc_of(uint64_t id, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = id;
	wc.status = st;
	wc.opcode = IBV_WC_RECV;
	wc.byte_len = (uint32_t)id * 3;
	wc.qp_num = 0x123456;
	wc.src_qp = 0xabcdef;
	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.imm_data = (uint32_t)~id;
	wc.vendor_err = 7;
	return wc;
}

static unsigned int
push_ids(struct uroce_cq *cq, uint64_t from, uint64_t to)
{
	struct ibv_wc wc;
	unsigned int bad = 0;

	for (; from < to; from++) {
		wc = wc_of(from, IBV_WC_SUCCESS);
		bad += uroce_cq_push(cq, &wc) != 0;
	}
	return bad;
}

/* Field by field: struct copies need not carry the padding. */
static bool
wc_eq(const struct ibv_wc *a, const struct ibv_wc *b)
{
	return a->wr_id == b->wr_id && a->status == b->status &&
		a->opcode == b->opcode && a->vendor_err == b->vendor_err &&
		a->byte_len == b->byte_len && a->imm_data == b->imm_data &&
		a->qp_num == b->qp_num && a->src_qp == b->src_qp &&
		a->wc_flags == b->wc_flags && a->pkey_index == b->pkey_index &&
		a->slid == b->slid && a->sl == b->sl &&
		a->dlid_path_bits == b->dlid_path_bits;
}

/* poll up to n and check they are ids from, from + 1, ... in full */
static int
poll_ids(struct uroce_cq *cq, int n, uint64_t from)
{
	struct ibv_wc got[64], want;
	int ret, i;

	ret = uroce_cq_poll(cq, n, got);
	for (i = 0; i < ret; i++) {
		want = wc_of(from + (uint64_t)i, IBV_WC_SUCCESS);
		UT_CHECK(wc_eq(&got[i], &want));
		UT_NOTE("entry %d, expected wr_id %" PRIu64 ", got %" PRIu64,
			i, from + (uint64_t)i, (uint64_t)got[i].wr_id);
	}
	return ret;
}

static void
test_cq_init(void)
{
	struct uroce_cq cq;

	UT_CHECK_EQ(uroce_cq_init(&cq, 0), -EINVAL);
	UT_CHECK_EQ(uroce_cq_init(&cq, UROCE_CQ_MAX_CQE + 1), -EINVAL);
	UT_CHECK_EQ(uroce_cq_init(&cq, 1), 0);
	UT_CHECK_EQ(uroce_cq_size(&cq), 1);
	uroce_cq_fini(&cq);
	UT_CHECK_EQ(uroce_cq_init(&cq, 5), 0);
	UT_CHECK_EQ(uroce_cq_size(&cq), 8);	/* at least cqe entries */
	UT_CHECK(!uroce_cq_in_error(&cq));
	UT_CHECK_EQ(uroce_cq_overrun_count(&cq), 0);
	uroce_cq_fini(&cq);
	UT_CHECK_EQ(uroce_cq_init(&cq, 64), 0);
	UT_CHECK_EQ(uroce_cq_size(&cq), 64);
	uroce_cq_fini(&cq);
}

static void
test_cq_order_partial(void)
{
	struct uroce_cq cq;
	struct ibv_wc wc;
	uint64_t next = 0, polled = 0;
	unsigned int round;
	int ret;

	if (uroce_cq_init(&cq, 16) != 0)
		return;
	UT_CHECK_EQ(uroce_cq_poll(&cq, 4, &wc), 0);	/* empty */
	UT_CHECK_EQ(push_ids(&cq, 0, 5), 0);
	next = 5;
	UT_CHECK_EQ(uroce_cq_poll(&cq, 0, &wc), 0);
	UT_CHECK_EQ(uroce_cq_poll(&cq, -1, &wc), 0);
	UT_CHECK_EQ(poll_ids(&cq, 2, 0), 2);
	UT_CHECK_EQ(poll_ids(&cq, 10, 2), 3);
	UT_CHECK_EQ(uroce_cq_poll(&cq, 10, &wc), 0);
	polled = 5;
	/* many times round the 16 entries, in uneven steps */
	for (round = 0; round < 500; round++) {
		unsigned int n = 1 + round % 16;

		UT_CHECK_EQ(push_ids(&cq, next, next + n), 0);
		next += n;
		while (polled < next) {
			ret = poll_ids(&cq, 1 + (int)(round % 7), polled);
			if (!UT_CHECK(ret > 0))
				break;
			polled += (uint64_t)ret;
		}
	}
	UT_CHECK_EQ(polled, next);
	UT_CHECK(!uroce_cq_in_error(&cq));
	uroce_cq_fini(&cq);
}

/* ibv_resize_cq(): queued completions kept in order across a wrap, too
 * small refused with nothing changed, both ways in size. */
static void
test_cq_resize(void)
{
	struct uroce_cq cq;
	struct ibv_wc wc;

	if (uroce_cq_init(&cq, 8) != 0)
		return;
	/* The ring wrapped: tail at 6, entries 6..11 in slots 6, 7, 0..3. */
	UT_CHECK_EQ(push_ids(&cq, 0, 6), 0);
	UT_CHECK_EQ(poll_ids(&cq, 6, 0), 6);
	UT_CHECK_EQ(push_ids(&cq, 6, 12), 0);
	UT_CHECK_EQ(uroce_cq_resize(&cq, 0), -EINVAL);
	UT_CHECK_EQ(uroce_cq_resize(&cq, 5), -EINVAL);	/* 6 queued */
	UT_CHECK_EQ(uroce_cq_resize(&cq, UROCE_CQ_MAX_CQE + 1), -EINVAL);
	UT_CHECK_EQ(uroce_cq_size(&cq), 8);
	UT_CHECK_EQ(uroce_cq_resize(&cq, 100), 0);
	UT_CHECK_EQ(uroce_cq_size(&cq), 128);
	UT_CHECK_EQ(poll_ids(&cq, 2, 6), 2);
	/* Room for 122 more now. */
	UT_CHECK_EQ(push_ids(&cq, 12, 134), 0);
	UT_CHECK_EQ(poll_ids(&cq, 64, 8), 64);
	UT_CHECK_EQ(poll_ids(&cq, 64, 72), 62);
	UT_CHECK_EQ(uroce_cq_poll(&cq, 1, &wc), 0);
	/* Smaller, empty. */
	UT_CHECK_EQ(push_ids(&cq, 134, 136), 0);
	UT_CHECK_EQ(uroce_cq_resize(&cq, 2), 0);
	UT_CHECK_EQ(uroce_cq_size(&cq), 2);
	UT_CHECK_EQ(poll_ids(&cq, 4, 134), 2);
	UT_CHECK(!uroce_cq_in_error(&cq));
	uroce_cq_fini(&cq);
}

/* Push completions of QPs qpn[i % nq] with wr_id from..to-1. */
static void
push_qps(struct uroce_cq *cq, uint64_t from, uint64_t to,
	 const uint32_t *qpn, unsigned int nq)
{
	struct ibv_wc wc;

	for (; from < to; from++) {
		wc = wc_of(from, IBV_WC_SUCCESS);
		wc.qp_num = qpn[from % nq];
		UT_CHECK_EQ(uroce_cq_push(cq, &wc), 0);
	}
}

/* Poll everything; the wr_ids in order into ids; the count. */
static int
poll_all(struct uroce_cq *cq, uint64_t *ids, int max)
{
	struct ibv_wc wc[4];
	int n = 0, k, i;

	while ((k = uroce_cq_poll(cq, 4, wc)) > 0)
		for (i = 0; i < k && n < max; i++)
			ids[n++] = wc[i].wr_id;
	return n;
}

/* A QP reset: its queued completions are passed over by the poll, those
 * pushed after the clean (the QP used again) are not, other QPs' stay in
 * order; across a ring wrap, a resize, and more cleans than the list
 * holds before the consumer passes the first. */
static void
test_cq_clean(void)
{
	static const uint32_t qpn[2] = { 0x11, 0x22 };
	uint64_t ids[64];
	struct uroce_cq cq;
	int n, i;

	if (uroce_cq_init(&cq, 16) != 0)
		return;
	UT_CHECK_EQ(uroce_cq_clean(&cq, 0x11), 0);	/* empty: nothing */
	push_qps(&cq, 0, 10, qpn, 2);		/* even ids 0x11, odd 0x22 */
	UT_CHECK_EQ(poll_ids(&cq, 0, 0), 0);
	UT_CHECK_EQ(uroce_cq_clean(&cq, 0x11), 0);
	push_qps(&cq, 10, 14, qpn, 2);		/* after: all kept */
	n = poll_all(&cq, ids, 64);
	UT_CHECK_EQ(n, 9);
	for (i = 0; i < 5 && i < n; i++)
		UT_CHECK_EQ(ids[i], (uint64_t)(2 * i + 1));
	for (i = 5; i < 9 && i < n; i++)
		UT_CHECK_EQ(ids[i], (uint64_t)(i + 5));
	/* Partly polled, wrapped (tail at 14), cleaned, then resized: the
	 * resize drops what was cleaned and counts only the rest. */
	push_qps(&cq, 14, 26, qpn, 2);
	UT_CHECK_EQ(uroce_cq_poll(&cq, 2, (struct ibv_wc [2]){ 0 }), 2);
	UT_CHECK_EQ(uroce_cq_clean(&cq, 0x22), 0);
	UT_CHECK_EQ(uroce_cq_resize(&cq, 4), -EINVAL);	/* 5 left */
	UT_CHECK_EQ(uroce_cq_resize(&cq, 5), 0);
	UT_CHECK_EQ(uroce_cq_size(&cq), 8);
	n = poll_all(&cq, ids, 64);
	UT_CHECK_EQ(n, 5);
	for (i = 0; i < n; i++)
		UT_CHECK_EQ(ids[i], (uint64_t)(16 + 2 * i));
	uroce_cq_fini(&cq);
	/* The list full: a clean more is refused (its completions stay);
	 * once the consumer has passed them all, the list starts again. */
	if (uroce_cq_init(&cq, 64) != 0)
		return;
	for (i = 0; i < UROCE_CQ_CLEANS; i++) {
		push_qps(&cq, (uint64_t)i, (uint64_t)i + 1, qpn, 2);
		UT_CHECK_EQ(uroce_cq_clean(&cq, qpn[i % 2]), 0);
	}
	push_qps(&cq, 100, 101, qpn, 2);
	UT_CHECK_EQ(uroce_cq_clean(&cq, qpn[0]), -ENOSPC);
	n = poll_all(&cq, ids, 64);
	UT_CHECK_EQ(n, 1);
	UT_CHECK_EQ(n > 0 ? ids[0] : 0, 100);
	push_qps(&cq, 102, 104, qpn, 2);
	UT_CHECK_EQ(uroce_cq_clean(&cq, qpn[0]), 0);
	n = poll_all(&cq, ids, 64);
	UT_CHECK_EQ(n, 1);
	UT_CHECK_EQ(n > 0 ? ids[0] : 0, 103);
	UT_CHECK(!uroce_cq_in_error(&cq));
	uroce_cq_fini(&cq);
}

static void
test_cq_overrun(void)
{
	struct uroce_cq cq;
	struct ibv_wc wc = wc_of(99, IBV_WC_SUCCESS);

	if (uroce_cq_init(&cq, 4) != 0)
		return;
	/* wrap once before filling */
	UT_CHECK_EQ(push_ids(&cq, 0, 3), 0);
	UT_CHECK_EQ(poll_ids(&cq, 2, 0), 2);
	UT_CHECK_EQ(push_ids(&cq, 3, 6), 0);	/* 2..5: full */
	UT_CHECK_EQ(uroce_cq_push(&cq, &wc), -ENOSPC);
	UT_CHECK(uroce_cq_in_error(&cq));
	UT_CHECK_EQ(uroce_cq_overrun_count(&cq), 1);
	/* the event is due once; later completions are dropped, counted */
	UT_CHECK_EQ(uroce_cq_push(&cq, &wc), -EIO);
	UT_CHECK_EQ(uroce_cq_overrun_count(&cq), 2);
	/* the queued completions are intact, in order */
	UT_CHECK_EQ(poll_ids(&cq, 3, 2), 3);
	/* room again, but the CQ stays in error */
	UT_CHECK_EQ(uroce_cq_push(&cq, &wc), -EIO);
	UT_CHECK_EQ(uroce_cq_overrun_count(&cq), 3);
	UT_CHECK_EQ(poll_ids(&cq, 8, 5), 1);
	UT_CHECK_EQ(uroce_cq_poll(&cq, 8, &wc), -EIO);
	UT_CHECK_EQ(uroce_cq_poll(&cq, 1, &wc), -EIO);
	UT_CHECK_EQ(uroce_cq_poll(&cq, 0, &wc), 0);
	uroce_cq_fini(&cq);
}

static void
test_cq_notify(void)
{
	struct uroce_cq cq;
	struct ibv_wc ok = wc_of(1, IBV_WC_SUCCESS);
	struct ibv_wc err = wc_of(2, IBV_WC_REM_ACCESS_ERR);

	if (uroce_cq_init(&cq, 8) != 0)
		return;
	/* created disarmed */
	UT_CHECK(!uroce_cq_should_notify(&cq, &ok, true));
	/* next completion: one shot */
	uroce_cq_req_notify(&cq, false);
	UT_CHECK(uroce_cq_should_notify(&cq, &ok, false));
	UT_CHECK(!uroce_cq_should_notify(&cq, &ok, false));
	UT_CHECK(!uroce_cq_should_notify(&cq, &ok, true));
	/* solicited only: unsolicited successes pass by, still armed */
	uroce_cq_req_notify(&cq, true);
	UT_CHECK(!uroce_cq_should_notify(&cq, &ok, false));
	UT_CHECK(!uroce_cq_should_notify(&cq, &ok, false));
	UT_CHECK(uroce_cq_should_notify(&cq, &ok, true));
	UT_CHECK(!uroce_cq_should_notify(&cq, &ok, true));
	/* an error completion counts as solicited */
	uroce_cq_req_notify(&cq, true);
	UT_CHECK(uroce_cq_should_notify(&cq, &err, false));
	UT_CHECK(!uroce_cq_should_notify(&cq, &err, false));
	/* arming twice is one arm */
	uroce_cq_req_notify(&cq, false);
	uroce_cq_req_notify(&cq, false);
	UT_CHECK(uroce_cq_should_notify(&cq, &ok, false));
	UT_CHECK(!uroce_cq_should_notify(&cq, &ok, false));
	/* solicited-only does not narrow a pending next-completion arm */
	uroce_cq_req_notify(&cq, false);
	uroce_cq_req_notify(&cq, true);
	UT_CHECK(uroce_cq_should_notify(&cq, &ok, false));
	/* next-completion widens a pending solicited-only arm */
	uroce_cq_req_notify(&cq, true);
	uroce_cq_req_notify(&cq, false);
	UT_CHECK(uroce_cq_should_notify(&cq, &ok, false));
	UT_CHECK(!uroce_cq_should_notify(&cq, &err, true));
	/* a CQ no event can leave (no channel): armed, it never signals */
	uroce_cq_set_no_events(&cq);
	uroce_cq_req_notify(&cq, false);
	UT_CHECK(!uroce_cq_should_notify(&cq, &ok, false));
	UT_CHECK(!uroce_cq_should_notify(&cq, &err, true));
	uroce_cq_fini(&cq);
}

/* ---------------------------------------------------------------------------
 * CQ, two threads: the engine pushes and signals when should_notify says so;
 * the application polls, and when empty arms, polls again and only then
 * waits for a signal. A missed signal would leave it waiting with the
 * engine finished: that is the failure detected.
 */
#define NOTIFY_N	100000u

struct notify_run {
	struct uroce_cq cq;
	uint64_t events;	/* signals raised, RELEASE */
	bool done;		/* engine finished, RELEASE */
};

static void *
notify_engine(void *arg)
{
	struct notify_run *nr = arg;
	struct ibv_wc wc;
	unsigned int spins = 0, gap;
	uint64_t id = 0;

	while (id < NOTIFY_N) {
		/* producer-side look: never overrun the CQ */
		if (uroce_ring_prod_avail(&nr->cq.ring, 1) == 0) {
			backoff(&spins);
			continue;
		}
		wc = wc_of(id, IBV_WC_SUCCESS);
		if (uroce_cq_push(&nr->cq, &wc) != 0)
			break;
		if (uroce_cq_should_notify(&nr->cq, &wc, false))
			__atomic_fetch_add(&nr->events, 1, __ATOMIC_RELEASE);
		id++;
		/* gaps of varying length, so that the app often runs dry and
		 * arms just as the next completion arrives
		 */
		for (gap = 0; gap < (id * 13) % 97; gap++)
			rte_pause();
	}
	__atomic_store_n(&nr->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Wait for a signal newer than seen; false if the engine finished first. */
static bool
wait_event(struct notify_run *nr, uint64_t seen)
{
	unsigned int spins = 0;

	while (__atomic_load_n(&nr->events, __ATOMIC_ACQUIRE) == seen) {
		if (__atomic_load_n(&nr->done, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&nr->events, __ATOMIC_ACQUIRE) == seen)
			return false;
		backoff(&spins);
	}
	return true;
}

/* One completion, as an application polling one at a time does; when the
 * CQ is empty: arm, poll again, and only then wait. 0 if a signal that was
 * due never came.
 */
static int
app_poll_one(struct notify_run *nr, struct ibv_wc *wc, uint64_t *waits)
{
	uint64_t seen;
	int n;

	for (;;) {
		n = uroce_cq_poll(&nr->cq, 1, wc);
		if (n != 0)
			return n;
		seen = __atomic_load_n(&nr->events, __ATOMIC_ACQUIRE);
		uroce_cq_req_notify(&nr->cq, false);
		n = uroce_cq_poll(&nr->cq, 1, wc);
		if (n != 0)
			return n;
		++*waits;
		if (!wait_event(nr, seen))
			return 0;
	}
}

static void
test_cq_notify_two_threads(void)
{
	struct notify_run *nr = aligned_alloc(RTE_CACHE_LINE_SIZE,
					      sizeof(*nr));
	uint64_t got = 0, bad = 0, waits = 0;
	struct ibv_wc wc;
	pthread_t t;
	int n = 0;

	if (!UT_CHECK(nr != NULL))
		return;
	memset(nr, 0, sizeof(*nr));
	if (!UT_CHECK_EQ(uroce_cq_init(&nr->cq, 32), 0))
		return;
	if (!UT_CHECK_EQ(pthread_create(&t, NULL, notify_engine, nr), 0))
		return;
	while (got < NOTIFY_N) {
		n = app_poll_one(nr, &wc, &waits);
		if (n != 1)
			break;
		bad += wc.wr_id != got++;
	}
	pthread_join(t, NULL);
	printf("cq notify: %" PRIu64 " completions, %" PRIu64 " waits, %"
	       PRIu64 " events\n", got, waits, nr->events);
	UT_CHECK_EQ(n, 1);	/* 0: lost wakeup; < 0: CQ error */
	UT_CHECK_EQ(got, NOTIFY_N);
	UT_CHECK_EQ(bad, 0);
	UT_CHECK(!uroce_cq_in_error(&nr->cq));
	uroce_cq_fini(&nr->cq);
	free(nr);
}

/* Timestamps: each entry's TSC is read at its push, so they are in push
 * order and between two reads around the pushes; a clean skips an entry
 * with its stamp, a resize keeps them; a CQ without the flag gives 0. */
static void
test_cq_timestamps(void)
{
	struct ibv_wc wc[8] = { 0 };
	uint64_t ts[8], t0, t1;
	struct uroce_cq cq;
	int n, i;

	UT_CHECK_EQ(uroce_cq_init_ex(&cq, 8, 1u << 5, NULL), -EINVAL);
	if (!UT_CHECK_EQ(uroce_cq_init_ex(&cq, 8, UROCE_CQ_TIMESTAMP, NULL), 0))
		return;
	t0 = rte_rdtsc();
	for (i = 0; i < 6; i++) {
		wc[0].wr_id = (uint64_t)i;
		wc[0].qp_num = i == 2 ? 0x22 : 0x11;
		UT_CHECK_EQ(uroce_cq_push(&cq, &wc[0]), 0);
	}
	t1 = rte_rdtsc();
	UT_CHECK_EQ(uroce_cq_clean(&cq, 0x22), 0);
	UT_CHECK_EQ(uroce_cq_poll_ts(&cq, 1, wc, ts), 1);
	UT_CHECK(wc[0].wr_id == 0 && ts[0] >= t0 && ts[0] <= t1);
	UT_CHECK_EQ(uroce_cq_resize(&cq, 16), 0);
	n = uroce_cq_poll_ts(&cq, 8, wc + 1, ts + 1);
	UT_CHECK_EQ(n, 4);			/* 1, 3, 4, 5: 2 cleaned */
	for (i = 1; i <= n; i++) {
		UT_CHECK_EQ(wc[i].wr_id, (uint64_t)(i == 1 ? 1 : i + 1));
		UT_CHECK(ts[i] >= ts[i - 1] && ts[i] <= t1);
	}
	uroce_cq_fini(&cq);
	if (!UT_CHECK_EQ(uroce_cq_init(&cq, 4), 0))
		return;
	UT_CHECK_EQ(uroce_cq_push(&cq, &wc[0]), 0);
	ts[0] = 1;
	UT_CHECK_EQ(uroce_cq_poll_ts(&cq, 1, wc, ts), 1);
	UT_CHECK_EQ(ts[0], 0);
	uroce_cq_fini(&cq);
}

/* A caller's allocator: asked for the CQ ring with its kind and a cache
 * line alignment; the ring is its memory; a resize takes the default
 * allocator's and gives the first back to the caller's free; answering
 * "use the default" (1) and failing (-ENOMEM) as documented. */
struct counting_alloc {
	int answer;
	unsigned int allocs, frees;
	void *given, *freed;
	enum uroce_ring_kind kind;
};

static int
ca_alloc(void *arg, size_t size, size_t align, enum uroce_ring_kind kind,
	 void **out)
{
	struct counting_alloc *c = arg;

	c->allocs++;
	c->kind = kind;
	if (c->answer != 0)
		return c->answer;
	if (posix_memalign(out, align, size) != 0)
		return -ENOMEM;
	memset(*out, 0xa5, size);	/* the ring must not rely on zeros */
	c->given = *out;
	return 0;
}

static void
ca_free(void *arg, void *ptr, enum uroce_ring_kind kind)
{
	struct counting_alloc *c = arg;

	c->frees++;
	c->freed = ptr;
	c->kind = kind;
	free(ptr);
}

static void
test_cq_ring_alloc(void)
{
	struct counting_alloc c = { 0 };
	struct uroce_ring_alloc a = { ca_alloc, ca_free, &c };
	struct ibv_wc wc = { .wr_id = 7 };
	struct uroce_cq cq;

	if (!UT_CHECK_EQ(uroce_cq_init_ex(&cq, 8, 0, &a), 0))
		return;
	UT_CHECK(c.allocs == 1 && c.kind == UROCE_RING_CQ && cq.mem_ext &&
		 cq.mem == c.given && cq.ring.slots == c.given);
	UT_CHECK_EQ(uroce_cq_poll(&cq, 1, &wc), 0);	/* empty */
	UT_CHECK_EQ(uroce_cq_push(&cq, &(struct ibv_wc){ .wr_id = 7 }), 0);
	UT_CHECK_EQ(uroce_cq_resize(&cq, 32), 0);
	UT_CHECK(c.allocs == 1 && c.frees == 1 && c.freed == c.given &&
		 !cq.mem_ext);
	UT_CHECK(uroce_cq_poll(&cq, 1, &wc) == 1 && wc.wr_id == 7);
	uroce_cq_fini(&cq);			/* the default's: free() */
	UT_CHECK_EQ(c.frees, 1);
	c.answer = 1;
	if (UT_CHECK_EQ(uroce_cq_init_ex(&cq, 8, 0, &a), 0)) {
		UT_CHECK(c.allocs == 2 && !cq.mem_ext);
		uroce_cq_fini(&cq);
		UT_CHECK_EQ(c.frees, 1);
	}
	c.answer = -ENOMEM;
	UT_CHECK_EQ(uroce_cq_init_ex(&cq, 8, 0, &a), -ENOMEM);
	UT_CHECK_EQ(c.allocs, 3);
}

int
main(void)
{
	test_ring_init();
	test_ring_fill_drain();
	test_ring_bulk();
	test_ring_two_threads();
	test_cq_init();
	test_cq_order_partial();
	test_cq_resize();
	test_cq_clean();
	test_cq_overrun();
	test_cq_notify();
	test_cq_notify_two_threads();
	test_cq_timestamps();
	test_cq_ring_alloc();
	return ut_summary();
}
