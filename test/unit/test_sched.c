/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Ready lists (uroce_sched, lib/pace/sched.c): FIFO order within an
 * output, outputs taking turns, a busy output skipped with its entries
 * kept in place, argument errors. Then the engine's transmit scheme on a
 * fake clock - ready lists, token buckets and the timing wheel together,
 * a frame budget per iteration - with paced and unpaced QPs: QPs with the
 * same limit get the same bytes, every paced QP gets exactly its rate, and
 * an unpaced QP gets every frame of the budget the paced ones leave.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>

#include "uroce_test.h"
#include "uroce_pace.h"

struct item {
	struct uroce_sched_entry e;
	unsigned int id;
};

static unsigned int
id_of(struct uroce_sched_entry *e)
{
	return e == NULL ? ~0u : container_of(e, struct item, e)->id;
}

static void
test_errors(void)
{
	struct uroce_sched s;
	struct item a;

	UT_CHECK_EQ(uroce_sched_init(&s, 0), -EINVAL);
	UT_CHECK_EQ(uroce_sched_init(&s, UROCE_SCHED_MAX_LISTS + 1), -EINVAL);
	UT_CHECK_EQ(uroce_sched_init(NULL, 1), -EINVAL);
	UT_CHECK_EQ(uroce_sched_init(&s, UROCE_SCHED_MAX_LISTS), 0);
	uroce_sched_entry_init(&a.e, 3);
	UT_CHECK_EQ(uroce_sched_del(&s, &a.e), -ENOENT);
	UT_CHECK(uroce_sched_add(&s, &a.e));
	UT_CHECK(!uroce_sched_add(&s, &a.e));	/* queued once */
	UT_CHECK_EQ(uroce_sched_count(&s), 1u);
	UT_CHECK_EQ(uroce_sched_del(&s, &a.e), 0);
	UT_CHECK_EQ(uroce_sched_count(&s), 0u);
	UT_CHECK(uroce_sched_next(&s, 0) == NULL);
}

/* Three outputs: 0 holds ids 0..3, 1 holds 10..11, 2 holds 20. */
static void
fill3(struct uroce_sched *s, struct item *it)
{
	static const unsigned int ids[] = { 0, 10, 1, 20, 2, 11, 3 };
	unsigned int i;

	uroce_sched_init(s, 3);
	for (i = 0; i < RTE_DIM(ids); i++) {
		it[i].id = ids[i];
		uroce_sched_entry_init(&it[i].e, ids[i] / 10);
		uroce_sched_add(s, &it[i].e);
	}
}

static void
test_turns(void)
{
	static const unsigned int want[] = { 0, 10, 20, 1, 11, 2, 3 };
	struct uroce_sched s;
	struct item it[7];
	unsigned int i;

	fill3(&s, it);
	for (i = 0; i < RTE_DIM(want); i++)
		UT_CHECK_EQ(id_of(uroce_sched_next(&s, 0)), want[i]);
	UT_CHECK(uroce_sched_next(&s, 0) == NULL);
	UT_CHECK_EQ(uroce_sched_count(&s), 0u);
}

/* A busy output is skipped and its entries keep their order; when every
 * output that holds entries is busy, nothing comes out. */
static void
test_busy(void)
{
	static const unsigned int want[] = { 10, 20, 11, 0, 1, 2, 3 };
	struct uroce_sched s;
	struct item it[7];
	unsigned int i;

	fill3(&s, it);
	for (i = 0; i < 3; i++)
		UT_CHECK_EQ(id_of(uroce_sched_next(&s, 1u << 0)), want[i]);
	UT_CHECK(uroce_sched_next(&s, 1u << 0) == NULL);
	UT_CHECK_EQ(uroce_sched_count(&s), 4u);
	for (; i < RTE_DIM(want); i++)
		UT_CHECK_EQ(id_of(uroce_sched_next(&s, 1u << 1)), want[i]);
}

/* Taken and added again: the tail, behind the others of its output. */
static void
test_requeue(void)
{
	struct uroce_sched s;
	struct item it[3];
	unsigned int i, seen[3] = { 0 };
	struct uroce_sched_entry *e;

	uroce_sched_init(&s, 1);
	for (i = 0; i < 3; i++) {
		it[i].id = i;
		uroce_sched_entry_init(&it[i].e, 0);
		uroce_sched_add(&s, &it[i].e);
	}
	for (i = 0; i < 300; i++) {
		e = uroce_sched_next(&s, 0);
		UT_CHECK_EQ(id_of(e), i % 3);
		seen[id_of(e) % 3]++;
		uroce_sched_add(&s, e);
	}
	UT_CHECK(seen[0] == 100 && seen[1] == 100 && seen[2] == 100);
}

/* ---------------------------------------------------------------------------
 * The engine's scheme on a fake clock (lib/engine/lcore.c: eng_timers,
 * eng_tx). A QP call builds frames until its bucket is empty (then it is
 * armed on the wheel at uroce_tb_ready_at()) or CALL_MAX frames (then it
 * is ready again, at the tail); an iteration builds at most BUDGET frames
 * and then the clock moves on by STEP cycles.
 */
#define HZ		1000000000ull	/* 1 GHz: a cycle is a ns */
#define FRAME		1000u		/* bytes */
#define BUDGET		16u
#define CALL_MAX	BUDGET	/* a call may fill what is left */
#define STEP		1000ull		/* cycles per iteration */
#define ITERS		200000u
#define NQP		9

struct sim_qp {
	struct uroce_sched_entry e;
	struct uroce_wheel_entry w;
	struct uroce_tb_profile prof;
	struct uroce_tb tb;
	bool paced;
	uint64_t frames;
};

/* One call: frames until the budget, CALL_MAX, or the bucket says wait. */
static unsigned int
sim_call(struct sim_qp *q, struct uroce_sched *s, struct uroce_wheel *w,
	 uint64_t now, unsigned int room)
{
	unsigned int n = 0;

	while (n < RTE_MIN(room, CALL_MAX)) {
		if (q->paced && !uroce_tb_consume(&q->tb, &q->prof, now, FRAME)) {
			uroce_wheel_add(w, &q->w,
					uroce_tb_ready_at(&q->tb, &q->prof, now,
							  FRAME));
			q->frames += n;
			return n;
		}
		n++;
	}
	q->frames += n;
	uroce_sched_add(s, &q->e);	/* backlogged: more to send */
	return n;
}

static void
sim_iteration(struct sim_qp *qp, struct uroce_sched *s, struct uroce_wheel *w,
	      uint64_t now)
{
	struct uroce_wheel_entry *due[NQP];
	unsigned int i, n, built = 0, round;
	struct uroce_sched_entry *e;
	struct sim_qp *q;

	n = uroce_wheel_expire(w, now, due, NQP);
	for (i = 0; i < n; i++)
		uroce_sched_add(s, &container_of(due[i], struct sim_qp, w)->e);
	round = uroce_sched_count(s);
	for (i = 0; i < round && built < BUDGET &&
	     (e = uroce_sched_next(s, 0)) != NULL; i++) {
		q = container_of(e, struct sim_qp, e);
		n = sim_call(q, s, w, now, BUDGET - built);
		built += n;
	}
}

static void
test_share(void)
{
	/* Four QPs at 1 Gbit/s, four at 2 Gbit/s, one unpaced; the budget
	 * is 16 frames per us = 128 Gbit/s. */
	static const uint64_t kbps[NQP] = {
		1000000, 1000000, 1000000, 1000000,
		2000000, 2000000, 2000000, 2000000, 0,
	};
	struct sim_qp qp[NQP];
	struct uroce_sched s;
	struct uroce_wheel w;
	uint64_t now = 0, paced = 0, secs_ns = ITERS * STEP, expect;
	unsigned int i, it;

	memset(qp, 0, sizeof(qp));
	UT_CHECK_EQ(uroce_sched_init(&s, 1), 0);
	UT_CHECK_EQ(uroce_wheel_init(&w, 6, 256, now), 0);
	for (i = 0; i < NQP; i++) {
		uroce_sched_entry_init(&qp[i].e, 0);
		uroce_wheel_entry_init(&qp[i].w);
		qp[i].paced = kbps[i] != 0;
		if (qp[i].paced) {
			UT_CHECK_EQ(uroce_tb_profile_init(&qp[i].prof, HZ,
							  kbps[i], 2 * FRAME), 0);
			uroce_tb_init(&qp[i].tb, &qp[i].prof, now);
		}
		uroce_sched_add(&s, &qp[i].e);
	}
	for (it = 0; it < ITERS; it++, now += STEP)
		sim_iteration(qp, &s, &w, now);
	for (i = 0; i < NQP && qp[i].paced; i++) {
		/* burst + rate x time, to within a frame (the wheel's slot
		 * and the iteration step delay a frame by < 2 us). */
		expect = 2 + kbps[i] * 125 * secs_ns / HZ / FRAME;
		UT_CHECK(qp[i].frames <= expect);
		UT_CHECK(qp[i].frames + 1 >= expect);
		if (qp[i].frames > expect || qp[i].frames + 1 < expect)
			UT_NOTE("QP %u: %lu frames, %lu expected", i,
				(unsigned long)qp[i].frames,
				(unsigned long)expect);
		paced += qp[i].frames;
	}
	/* Same limit, same frames. */
	UT_CHECK_EQ(qp[0].frames, qp[3].frames);
	UT_CHECK_EQ(qp[4].frames, qp[7].frames);
	/* The unpaced QP fills every frame of the budget the others leave. */
	UT_CHECK_EQ(qp[NQP - 1].frames, (uint64_t)ITERS * BUDGET - paced);
	uroce_wheel_fini(&w);
}

int
main(void)
{
	test_errors();
	test_turns();
	test_busy();
	test_requeue();
	test_share();
	return ut_summary_named("sched");
}
