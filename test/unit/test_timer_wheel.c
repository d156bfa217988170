/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Timing wheel against a sorted reference. An entry's key is its slot, the
 * deadline rounded up to a multiple of 2^slot_shift; the reference order is
 * (key, arrival), i.e. time order across slots and FIFO within one. Small
 * wheels (64 slots, 1-cycle slots) make most deadlines land in level 2 and
 * the overflow list, so every path that moves lists down is exercised.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "uroce_test.h"
#include "uroce_pace.h"

struct item {
	struct uroce_wheel_entry e;
	uint64_t key;		/* slot the deadline rounds up to */
	uint32_t seq;		/* arrival order */
	bool armed;		/* in the reference */
};

static uint32_t next_seq;

/* A random number of up to `bits` bits, small ones as likely as large. */
static uint64_t
rnd_bits(unsigned int bits)
{
	unsigned int b = ut_rand() % (bits + 1);

	return b == 64 ? ut_rand() : ut_rand() & ((UINT64_C(1) << b) - 1);
}

static struct item *
item_of(struct uroce_wheel_entry *e)
{
	return container_of(e, struct item, e);
}

static uint64_t
key_of(const struct uroce_wheel *w, uint64_t deadline)
{
	uint64_t low = deadline & ((UINT64_C(1) << w->slot_shift) - 1);

	return (deadline >> w->slot_shift) + (low != 0);
}

static void
arm(struct uroce_wheel *w, struct item *it, uint64_t deadline)
{
	uroce_wheel_add(w, &it->e, deadline);
	it->key = key_of(w, deadline);
	it->seq = next_seq++;
	it->armed = true;
}

static int
cmp_ref(const void *a, const void *b)
{
	const struct item *x = *(const struct item *const *)a;
	const struct item *y = *(const struct item *const *)b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* True if slot key is due at now (key << shift <= now, without overflow). */
static bool
due(const struct uroce_wheel *w, uint64_t key, uint64_t now)
{
	return key <= (now >> w->slot_shift);
}

/*
 * Expire everything, moving the clock by random steps of up to step_bits
 * bits, max_out entries per call. Checks: the order is the reference order;
 * nothing leaves before its deadline; after each round nothing due is left.
 */
static void
drain_and_compare(struct uroce_wheel *w, struct item *it, unsigned int n,
		  uint64_t now, unsigned int step_bits, unsigned int max_out)
{
	struct item **ref = calloc(n, sizeof(*ref));
	struct item **got = calloc(n, sizeof(*got));
	struct uroce_wheel_entry *out[64];
	unsigned int nref = 0, ngot = 0, i, k, early = 0, late = 0, wrong = 0;
	uint64_t rounds = 0;

	for (i = 0; i < n; i++)
		if (it[i].armed)
			ref[nref++] = &it[i];
	qsort(ref, nref, sizeof(*ref), cmp_ref);
	UT_CHECK_EQ(uroce_wheel_count(w), nref);
	while (ngot < nref && rounds++ < 10000000) {
		now += rnd_bits(step_bits);
		do {
			k = uroce_wheel_expire(w, now, out, max_out);
			for (i = 0; i < k && ngot < nref; i++) {
				early += out[i]->deadline > now;
				early += uroce_wheel_armed(out[i]);
				got[ngot++] = item_of(out[i]);
				item_of(out[i])->armed = false;
			}
		} while (k == max_out);
		if (ngot < nref && due(w, ref[ngot]->key, now))
			late++;
	}
	UT_CHECK_EQ(ngot, nref);
	for (i = 0; i < ngot; i++)
		wrong += got[i] != ref[i];
	UT_CHECK_EQ(wrong, 0);
	UT_CHECK_EQ(early, 0);
	UT_CHECK_EQ(late, 0);
	UT_CHECK_EQ(uroce_wheel_count(w), 0);
	free(ref);
	free(got);
}

static void
test_init(void)
{
	struct uroce_wheel w;

	UT_CHECK_EQ(uroce_wheel_init(&w, 0, 32, 0), -EINVAL);
	UT_CHECK_EQ(uroce_wheel_init(&w, 0, 8192, 0), -EINVAL);
	UT_CHECK_EQ(uroce_wheel_init(&w, 0, 100, 0), -EINVAL);
	UT_CHECK_EQ(uroce_wheel_init(&w, UROCE_WHEEL_SHIFT_MAX + 1, 64, 0), -EINVAL);
	UT_CHECK_EQ(uroce_wheel_init(NULL, 0, 64, 0), -EINVAL);
	UT_CHECK_EQ(uroce_wheel_init(&w, UROCE_WHEEL_SHIFT_MAX, 4096, UINT64_MAX), 0);
	uroce_wheel_fini(&w);
}

/*
 * Random deadlines (a quarter of them shared, to test FIFO) within
 * 2^spread_bits cycles, all added before the clock moves.
 */
static void
test_random(unsigned int shift, unsigned int nslots, unsigned int n,
	    unsigned int spread_bits, unsigned int step_bits,
	    unsigned int max_out)
{
	static const uint64_t shared[] = { 1000, 5000, 70000, 1u << 20 };
	struct item *it = calloc(n, sizeof(*it));
	struct uroce_wheel w;
	uint64_t now = 12345, d;
	unsigned int i;

	UT_CHECK_EQ(uroce_wheel_init(&w, shift, nslots, now), 0);
	for (i = 0; i < n; i++) {
		uroce_wheel_entry_init(&it[i].e);
		if (ut_rand() % 4 == 0)
			d = now + 1 + shared[ut_rand() % RTE_DIM(shared)];
		else
			d = now + 1 + rnd_bits(spread_bits);
		arm(&w, &it[i], d);
	}
	drain_and_compare(&w, it, n, now, step_bits, max_out);
	UT_NOTE("random: shift %u, %u slots, %u entries, 2^%u spread, max %u",
		shift, nslots, n, spread_bits, max_out);
	uroce_wheel_fini(&w);
	free(it);
}

/* Adds while the clock runs: always for a later slot than now's. */
static void
test_interleaved(unsigned int shift, unsigned int nslots)
{
	enum { N = 5000 };
	struct item *it = calloc(N, sizeof(*it));
	struct item **ref = calloc(N, sizeof(*ref));
	struct item **got = calloc(N, sizeof(*got));
	struct uroce_wheel_entry *out[16];
	struct uroce_wheel w;
	uint64_t now = 1;
	unsigned int added = 0, ngot = 0, i, k, wrong = 0, early = 0;

	UT_CHECK_EQ(uroce_wheel_init(&w, shift, nslots, now), 0);
	while (ngot < added || added < N) {
		for (i = ut_rand() % 8; i > 0 && added < N; i--, added++) {
			uroce_wheel_entry_init(&it[added].e);
			arm(&w, &it[added], ((now >> shift) + 1 + rnd_bits(16))
			    << shift | (ut_rand() & ((UINT64_C(1) << shift) - 1)));
		}
		now += rnd_bits(12);
		while ((k = uroce_wheel_expire(&w, now, out, RTE_DIM(out))) > 0)
			for (i = 0; i < k; i++) {
				early += out[i]->deadline > now;
				got[ngot++] = item_of(out[i]);
			}
	}
	for (i = 0; i < N; i++)
		ref[i] = &it[i];
	qsort(ref, N, sizeof(*ref), cmp_ref);
	for (i = 0; i < N; i++)
		wrong += got[i] != ref[i];
	UT_CHECK_EQ(ngot, N);
	UT_CHECK_EQ(wrong, 0);
	UT_CHECK_EQ(early, 0);
	UT_NOTE("interleaved: shift %u, %u slots", shift, nslots);
	uroce_wheel_fini(&w);
	free(it);
	free(ref);
	free(got);
}

/*
 * One deadline D, armed from the overflow list's range, then from level 2's,
 * then from level 1's: the entries leave in the order they came, with
 * neighbours D - 1 and D + 1 around them.
 */
static void
test_fifo_levels(void)
{
	/* 64 slots of 1 cycle: blocks of 64 cycles, laps of 4096. */
	const uint64_t d = 1000010;	/* block starts at 1000000 */
	const uint64_t t1 = 999500;	/* same lap as d, earlier block */
	const uint64_t t2 = 1000000;	/* d's block */
	struct item it[40];
	struct uroce_wheel_entry *out[64];
	struct uroce_wheel w;
	unsigned int i, k, wrong = 0;

	UT_CHECK_EQ(uroce_wheel_init(&w, 0, 64, 0), 0);
	for (i = 0; i < RTE_DIM(it); i++)
		uroce_wheel_entry_init(&it[i].e);
	for (i = 0; i < 10; i++)	/* 0..9: overflow; 30, 31: neighbours */
		arm(&w, &it[i], d);
	arm(&w, &it[30], d + 1);
	arm(&w, &it[31], d - 1);
	UT_CHECK_EQ(uroce_wheel_expire(&w, t1, out, 64), 0);
	for (i = 10; i < 20; i++)	/* level 2 */
		arm(&w, &it[i], d);
	arm(&w, &it[32], d + 1);
	UT_CHECK_EQ(uroce_wheel_expire(&w, t2, out, 64), 0);
	for (i = 20; i < 30; i++)	/* level 1 */
		arm(&w, &it[i], d);
	UT_CHECK_EQ(uroce_wheel_expire(&w, d - 2, out, 64), 0);
	k = uroce_wheel_expire(&w, d - 1, out, 64);
	UT_CHECK(k == 1 && out[0] == &it[31].e);
	k = uroce_wheel_expire(&w, d, out, 64);
	UT_CHECK_EQ(k, 30);
	for (i = 0; i < k; i++)
		wrong += out[i] != &it[i].e;
	UT_CHECK_EQ(wrong, 0);
	k = uroce_wheel_expire(&w, d + 1, out, 64);
	UT_CHECK(k == 2 && out[0] == &it[30].e && out[1] == &it[32].e);

	/* A deadline already passed joins the current slot, at its tail. */
	arm(&w, &it[0], d + 100);
	arm(&w, &it[2], d + 100);
	k = uroce_wheel_expire(&w, d + 200, out, 1);
	UT_CHECK(k == 1 && out[0] == &it[0].e);
	arm(&w, &it[1], 5);
	k = uroce_wheel_expire(&w, d + 200, out, 64);
	UT_CHECK(k == 2 && out[0] == &it[2].e && out[1] == &it[1].e);
	UT_CHECK_EQ(uroce_wheel_count(&w), 0);
	uroce_wheel_fini(&w);
}

/* Deleting and moving arbitrary entries, before and after they cascade. */
static void
test_del(void)
{
	enum { N = 3000 };
	struct item *it = calloc(N, sizeof(*it));
	struct uroce_wheel_entry *out[N];
	struct uroce_wheel w;
	uint64_t now = 0;
	unsigned int i, k, j, bad = 0;

	UT_CHECK_EQ(uroce_wheel_init(&w, 2, 64, now), 0);
	for (i = 0; i < N; i++) {
		uroce_wheel_entry_init(&it[i].e);
		UT_CHECK_EQ(uroce_wheel_del(&w, &it[i].e), -ENOENT);
		arm(&w, &it[i], 1 + rnd_bits(20));
	}
	for (i = 0; i < N; i++)
		if (ut_rand() % 3 == 0) {
			bad += uroce_wheel_del(&w, &it[i].e) != 0;
			bad += uroce_wheel_armed(&it[i].e);
			it[i].armed = false;
		}
	/* Part of the way: entries leave, others move down a level. */
	now = UINT64_C(1) << 17;
	while ((k = uroce_wheel_expire(&w, now, out, N)) > 0)
		for (j = 0; j < k; j++) {
			bad += !item_of(out[j])->armed;
			bad += out[j]->deadline > now;
			item_of(out[j])->armed = false;
			bad += uroce_wheel_del(&w, out[j]) != -ENOENT;
		}
	for (i = 0; i < N; i++) {
		if (!it[i].armed || ut_rand() % 3 != 0)
			continue;
		if (ut_rand() % 2 == 0) {
			bad += uroce_wheel_del(&w, &it[i].e) != 0;
			it[i].armed = false;
		} else {
			/* Re-arm an armed entry: it moves, and arrives anew. */
			arm(&w, &it[i], now + 1 + rnd_bits(20));
		}
	}
	UT_CHECK_EQ(bad, 0);
	drain_and_compare(&w, it, N, now, 14, 64);
	uroce_wheel_fini(&w);
	free(it);
}

/* Deadlines many laps away leave exactly when due, at O(1) cost per call. */
static void
test_far(void)
{
	static const uint64_t far[] = {
		UINT64_C(1) << 40, (UINT64_C(1) << 40) + 1, UINT64_C(1) << 50,
		(UINT64_C(1) << 63) + 12345, UINT64_MAX,
	};
	struct item it[RTE_DIM(far)];
	struct uroce_wheel_entry *out[8];
	struct uroce_wheel w;
	uint64_t v;
	unsigned int i;

	UT_CHECK_EQ(uroce_wheel_init(&w, 0, 64, 0), 0);
	for (i = 0; i < RTE_DIM(far); i++) {
		uroce_wheel_entry_init(&it[i].e);
		arm(&w, &it[i], far[i]);
	}
	for (i = 0; i < RTE_DIM(far); i++) {
		v = w.visits;
		UT_CHECK_EQ(uroce_wheel_expire(&w, far[i] - 1, out, 8), 0);
		UT_CHECK(w.visits - v <= 4);
		v = w.visits;
		UT_CHECK_EQ(uroce_wheel_expire(&w, far[i], out, 8), 1);
		UT_CHECK(out[0] == &it[i].e);
		UT_CHECK(w.visits - v <= 6);
		UT_NOTE("far deadline %u", i);
	}
	UT_CHECK_EQ(uroce_wheel_count(&w), 0);
	uroce_wheel_fini(&w);
}

/* A full slot taken seven at a time, with newcomers joining at the tail. */
static void
test_max(void)
{
	struct item it[100];
	struct uroce_wheel_entry *out[8];
	struct uroce_wheel w;
	unsigned int i, k, got = 0, wrong = 0;

	UT_CHECK_EQ(uroce_wheel_init(&w, 3, 64, 0), 0);
	for (i = 0; i < 90; i++) {
		uroce_wheel_entry_init(&it[i].e);
		arm(&w, &it[i], 97 + i % 8);	/* all round up to slot 13 */
	}
	UT_CHECK_EQ(uroce_wheel_expire(&w, 103, out, 7), 0);
	while ((k = uroce_wheel_expire(&w, 104, out, 7)) > 0) {
		UT_CHECK(k == 7 || got + k == 100);
		for (i = 0; i < k; i++, got++)
			wrong += out[i] != &it[got].e;
		if (got == 42)
			for (i = 90; i < 100; i++) {
				uroce_wheel_entry_init(&it[i].e);
				arm(&w, &it[i], 0);	/* past: current slot */
			}
	}
	UT_CHECK_EQ(got, 100);
	UT_CHECK_EQ(wrong, 0);
	uroce_wheel_fini(&w);
}

/* The cost of expire is O(1) per call plus O(1) per entry, never per slot. */
static void
test_cost(void)
{
	enum { N = 10000 };
	struct item *it = calloc(N, sizeof(*it));
	struct uroce_wheel_entry *out[64];
	struct uroce_wheel w;
	uint64_t now = 0, v, worst = 0, calls = 0, left = N;
	unsigned int i, k;

	/* Empty: any stretch costs one step. */
	UT_CHECK_EQ(uroce_wheel_init(&w, 0, 4096, 0), 0);
	for (i = 0; i < 1000; i++) {
		v = w.visits;
		uroce_wheel_expire(&w, now += UINT64_C(1) << 30, out, 64);
		worst = RTE_MAX(worst, w.visits - v);
	}
	UT_CHECK_EQ(worst, 1);
	/* One entry far away: empty stretches still cost O(1) per call. */
	uroce_wheel_entry_init(&it[0].e);
	arm(&w, &it[0], now + (UINT64_C(1) << 40));
	worst = 0;
	for (i = 0; i < 100000; i++) {
		v = w.visits;
		UT_CHECK_EQ(uroce_wheel_expire(&w, now += 997, out, 64), 0);
		worst = RTE_MAX(worst, w.visits - v);
	}
	UT_CHECK(worst <= 2);
	uroce_wheel_fini(&w);

	/* 10,000 entries over 2^30 cycles, 16-cycle slots. */
	UT_CHECK_EQ(uroce_wheel_init(&w, 4, 4096, 0), 0);
	now = 0;
	for (i = 0; i < N; i++) {
		uroce_wheel_entry_init(&it[i].e);
		arm(&w, &it[i], 1 + ut_rand() % (UINT64_C(1) << 30));
	}
	v = w.visits;
	while (left > 0) {
		now += UINT64_C(1) << 14;
		calls++;
		while ((k = uroce_wheel_expire(&w, now, out, 64)) > 0)
			left -= k;
	}
	printf("10000 entries: %" PRIu64 " calls, %" PRIu64 " steps\n",
	       calls, w.visits - v);
	UT_CHECK(w.visits - v <= 2 * calls + 4 * N);
	uroce_wheel_fini(&w);
	free(it);
}

/*
 * uroce_wheel_add_range(): the time chosen is the first block start from
 * deadline to latest, else deadline (also when it is due already), and the
 * entries leave in the order of the times chosen, FIFO within a slot, with
 * exact ones (plain adds and deletes) mixed in. Then the head lists: 1,000
 * entries filed for a block's start 20 blocks ahead stay in the list they
 * were filed in until they leave, in order, when the cursor enters it.
 */
static void
test_range(void)
{
	enum { N = 4000, HEADS = 1000 };
	const unsigned int shift = 2, nslots = 64;
	const uint64_t block = (uint64_t)nslots << shift;
	struct item *it = calloc(N, sizeof(*it));
	struct uroce_wheel_entry *out[64];
	struct uroce_wheel w;
	uint64_t now = 777, d, late, start, want;
	uint32_t list0[HEADS];
	unsigned int i, j, k, got = 0, bad = 0, moved = 0, ranged = 0;

	UT_CHECK_EQ(uroce_wheel_init(&w, shift, nslots, now), 0);
	for (i = 0; i < N; i++) {
		uroce_wheel_entry_init(&it[i].e);
		d = now - 100 + rnd_bits(22);
		late = d + rnd_bits(12);
		if (ut_rand() % 4 == 0) {
			arm(&w, &it[i], d);
			/* A passed deadline leaves with the current slot. */
			it[i].key = RTE_MAX(it[i].key, w.cur);
			continue;
		}
		uroce_wheel_add_range(&w, &it[i].e, d, late);
		it[i].key = RTE_MAX(key_of(&w, it[i].e.deadline), w.cur);
		it[i].seq = next_seq++;
		it[i].armed = true;
		start = RTE_ALIGN_CEIL(d, block);
		want = key_of(&w, d) > w.cur && start <= late &&
		       key_of(&w, d) % nslots != 0 ? start : d;
		bad += it[i].e.deadline != want;
		ranged += want != d;
		if (ut_rand() % 8 == 0) {	/* some leave before their time */
			bad += uroce_wheel_del(&w, &it[i].e) != 0;
			it[i].armed = false;
		}
	}
	UT_CHECK_EQ(bad, 0);
	UT_CHECK(ranged > N / 10);
	UT_NOTE("range: %u of %u entries moved to a block's start", ranged, N);
	drain_and_compare(&w, it, N, now, 10, 64);
	uroce_wheel_fini(&w);

	/* Head lists: filed once, never moved. */
	now = 5 * block + 3;
	UT_CHECK_EQ(uroce_wheel_init(&w, shift, nslots, now), 0);
	d = 25 * block;
	for (i = 0; i < HEADS; i++) {
		uroce_wheel_entry_init(&it[i].e);
		uroce_wheel_add_range(&w, &it[i].e, d - 1 - i % 50, d + 10);
		bad += key_of(&w, it[i].e.deadline) != d >> shift;
		list0[i] = it[i].e.list;
	}
	UT_CHECK_EQ(uroce_wheel_expire(&w, d - 1, out, 64), 0);
	for (i = 0; i < HEADS; i++)
		moved += it[i].e.list != list0[i];
	while ((k = uroce_wheel_expire(&w, d, out, 64)) > 0)
		for (j = 0; j < k; j++, got++)
			bad += got >= HEADS || out[j] != &it[got].e;
	UT_CHECK_EQ(got, HEADS);
	UT_CHECK_EQ(bad, 0);
	UT_CHECK_EQ(moved, 0);
	UT_CHECK_EQ(uroce_wheel_count(&w), 0);
	uroce_wheel_fini(&w);
	free(it);
}

int
main(void)
{
	test_init();
	test_random(0, 64, 3000, 20, 14, 64);
	test_random(0, 64, 3000, 40, 40, 64);
	test_random(0, 64, 3000, 20, 16, 1);
	test_random(4, 256, 3000, 24, 18, 7);
	test_random(10, 4096, 10000, 34, 30, 64);
	test_random(0, 4096, 10000, 26, 20, 3);
	test_interleaved(0, 64);
	test_interleaved(3, 128);
	test_fifo_levels();
	test_del();
	test_far();
	test_max();
	test_cost();
	test_range();
	return ut_summary();
}
