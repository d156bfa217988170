/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Token bucket on a fake clock. The expectations are exact: a sender that
 * goes as soon as the bucket allows sends, by time T, exactly
 *	pkt * floor((burst + rate * T) / pkt)
 * bytes (the bucket starts full and never reaches the cap again while the
 * sender keeps it drained), and ready_at() is exact to the cycle.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "uroce_test.h"
#include "uroce_pace.h"

__extension__ typedef __int128 i128;

#define HZ_2_1G		UINT64_C(2100000000)
#define HZ_1G		UINT64_C(1000000000)
#define KBPS_1M		UINT64_C(1000)		/* 1 Mbit/s in kbit/s */
#define KBPS_1G		UINT64_C(1000000)


static uint64_t
bytes_per_s(uint64_t kbps)
{
	return kbps * 125;
}

/*
 * Send pkt-byte packets at the times ready_at() gives, from *now up to
 * until. Every packet also checks that ready_at() is exact: one cycle
 * earlier the bucket says no. Returns the bytes sent; *bad counts misses.
 */
static uint64_t
send_greedy(struct uroce_tb *tb, const struct uroce_tb_profile *p,
	    uint64_t *now, uint64_t until, uint32_t pkt, uint64_t *bad)
{
	struct uroce_tb probe;
	uint64_t sent = 0, t = *now, r;

	for (;;) {
		r = uroce_tb_ready_at(tb, p, t, pkt);
		if (r > until)
			break;
		if (r > t) {
			probe = *tb;
			*bad += uroce_tb_consume(&probe, p, r - 1, pkt);
		}
		*bad += !uroce_tb_consume(tb, p, r, pkt);
		t = r;
		sent += pkt;
	}
	*now = t;
	return sent;
}

static void
test_profile_invalid(void)
{
	static const struct {
		uint64_t hz, kbps;
		uint32_t burst;
	} bad[] = {
		{ 0, KBPS_1G, 4096 },
		{ HZ_2_1G, 0, 4096 },
		{ HZ_2_1G, KBPS_1G, 0 },
		{ UROCE_TB_HZ_MAX + 1, KBPS_1G, 4096 },
		{ HZ_2_1G, UROCE_TB_RATE_MAX_KBPS + 1, 4096 },
		{ HZ_2_1G, UINT64_MAX, 4096 },
		{ UINT64_MAX, KBPS_1G, 4096 },
		/* burst * hz beyond 2^61 */
		{ HZ_2_1G, KBPS_1G, UINT32_MAX },
		{ UROCE_TB_HZ_MAX, KBPS_1G, (UINT32_C(1) << 25) + 1 },
	};
	struct uroce_tb_profile p, saved;
	unsigned int i;

	UT_CHECK_EQ(uroce_tb_profile_init(&p, HZ_2_1G, KBPS_1G, 4096), 0);
	saved = p;
	for (i = 0; i < RTE_DIM(bad); i++) {
		UT_CHECK_EQ(uroce_tb_profile_init(&p, bad[i].hz, bad[i].kbps,
						  bad[i].burst), -EINVAL);
		UT_CHECK_MEM(&p, &saved, sizeof(p));
		UT_NOTE("bad profile %u", i);
	}
	UT_CHECK_EQ(uroce_tb_profile_init(NULL, HZ_2_1G, KBPS_1G, 4096), -EINVAL);
	/* The edges of the ranges are accepted. */
	UT_CHECK_EQ(uroce_tb_profile_init(&p, UROCE_TB_HZ_MAX,
					  UROCE_TB_RATE_MAX_KBPS,
					  UINT32_C(1) << 25), 0);
	UT_CHECK_EQ(uroce_tb_profile_init(&p, 1, 1, UINT32_MAX), 0);
	UT_CHECK_EQ(uroce_tb_profile_init(&p, HZ_2_1G, 1, 1), 0);
}

/*
 * For each rate, clock and packet size: send for at least a simulated second
 * (longer for slow rates, so that at least 2000 packets go and one packet is
 * under 0.1% of the total). Exact count, and within 0.1% of burst + rate * T.
 */
static void
test_rates(void)
{
	static const uint64_t kbps[] = {
		1, KBPS_1M, 10 * KBPS_1M, 100 * KBPS_1M, KBPS_1G,
		10 * KBPS_1G, 25 * KBPS_1G, 100 * KBPS_1G,
	};
	static const uint64_t hz[] = { HZ_2_1G, HZ_1G };
	static const uint32_t pkts[] = { 1024, 4096 };
	const uint32_t burst = 65536;
	struct uroce_tb_profile p;
	struct uroce_tb tb;
	uint64_t secs, sent, expect, ideal, now, bad;
	unsigned int h, r, k;
	double err;

	printf("%12s %6s %5s %6s %14s %9s\n", "kbit/s", "GHz", "pkt", "secs",
	       "bytes sent", "err ppm");
	for (h = 0; h < RTE_DIM(hz); h++)
		for (r = 0; r < RTE_DIM(kbps); r++)
			for (k = 0; k < RTE_DIM(pkts); k++) {
				uint64_t bps = bytes_per_s(kbps[r]);

				secs = RTE_MAX(UINT64_C(1),
					       (2000ull * pkts[k] + bps - 1) / bps);
				UT_CHECK_EQ(uroce_tb_profile_init(&p, hz[h], kbps[r],
								  burst), 0);
				uroce_tb_init(&tb, &p, 0);
				now = 0;
				bad = 0;
				sent = send_greedy(&tb, &p, &now, secs * hz[h],
						   pkts[k], &bad);
				ideal = burst + bps * secs;
				expect = ideal / pkts[k] * pkts[k];
				err = ((double)ideal - (double)sent) / (double)(bps * secs);
				UT_CHECK_EQ(bad, 0);
				UT_CHECK_EQ(sent, expect);
				UT_CHECK(err >= 0 && err < 0.001);
				UT_NOTE("rate %" PRIu64 " kbit/s, hz %" PRIu64 ", pkt %u",
					kbps[r], hz[h], pkts[k]);
				printf("%12" PRIu64 " %6.1f %5u %6" PRIu64 " %14" PRIu64
				       " %9.1f\n", kbps[r], hz[h] / 1e9, pkts[k],
				       secs, sent, err * 1e6);
			}
}

/* A sender polling every `step` cycles, sending while the bucket allows. */
static void
test_polling(void)
{
	static const uint64_t kbps[] = { KBPS_1G, 100 * KBPS_1G };
	const uint64_t step = 64, until = HZ_2_1G / 100;	/* 10 ms */
	const uint32_t pkt = 1024, burst = 16384;
	struct uroce_tb_profile p;
	struct uroce_tb tb;
	uint64_t now, sent, ideal;
	unsigned int r;

	for (r = 0; r < RTE_DIM(kbps); r++) {
		UT_CHECK_EQ(uroce_tb_profile_init(&p, HZ_2_1G, kbps[r], burst), 0);
		uroce_tb_init(&tb, &p, 0);
		sent = 0;
		for (now = 0; now <= until; now += step)
			while (uroce_tb_consume(&tb, &p, now, pkt))
				sent += pkt;
		/* until is a multiple of step: the last poll is at until. */
		ideal = burst + bytes_per_s(kbps[r]) / 100;
		UT_CHECK_EQ(sent, ideal / pkt * pkt);
		UT_NOTE("polling at %" PRIu64 " kbit/s", kbps[r]);
	}
}

/*
 * The most that the sends (t[i], len[i]) put in any window [t_i, t_j], less
 * rate * (t_j - t_i), in tokens. One pass: for each j, the worst i is the
 * one with the largest rate * t_i - (bytes before i).
 */
static i128
worst_window(const uint64_t *t, const uint32_t *len, unsigned int n,
	     const struct uroce_tb_profile *p)
{
	i128 best = INT64_MIN, sum = 0, v, worst = INT64_MIN;
	unsigned int j;

	for (j = 0; j < n; j++) {
		v = (i128)p->refill * t[j] - sum * p->tsc_hz;
		best = RTE_MAX(best, v);
		sum += len[j];
		v = sum * p->tsc_hz - (i128)p->refill * t[j] + best;
		worst = RTE_MAX(worst, v);
	}
	return worst;
}

/*
 * Random attempts (random gaps, random sizes): in every window of w cycles
 * the bytes sent are at most max(burst, largest packet) + rate * w. A greedy
 * sender reaches burst + rate * w to within one cycle's worth of tokens.
 */
static void
test_burst_bound(void)
{
	static const uint64_t kbps[] = { 1, KBPS_1M, KBPS_1G, 100 * KBPS_1G };
	enum { N = 20000 };
	static uint64_t times[N];
	static uint32_t lens[N];
	struct uroce_tb_profile p;
	struct uroce_tb tb;
	uint32_t burst = 9000, len, maxlen;
	uint64_t now, gap;
	unsigned int r, n, i, big;
	i128 worst;

	for (r = 0; r < RTE_DIM(kbps); r++) {
		UT_CHECK_EQ(uroce_tb_profile_init(&p, HZ_2_1G, kbps[r], burst), 0);
		for (big = 0; big <= 1; big++) {
			/* Mean gap: about the time of a 1500-byte packet. */
			gap = 1500 * HZ_2_1G / bytes_per_s(kbps[r]) + 1;
			uroce_tb_init(&tb, &p, 0);
			now = 0;
			n = 0;
			maxlen = 0;
			for (i = 0; i < N; i++) {
				len = 64 + ut_rand() % (big ? 2 * burst : burst - 63);
				if (uroce_tb_consume(&tb, &p, now, len)) {
					times[n] = now;
					lens[n++] = len;
					maxlen = RTE_MAX(maxlen, len);
				}
				now += ut_rand() % (2 * gap);
			}
			UT_CHECK(n > N / 10);
			worst = worst_window(times, lens, n, &p);
			UT_CHECK(worst <= (i128)RTE_MAX(burst, maxlen) * p.tsc_hz);
			UT_NOTE("windows at %" PRIu64 " kbit/s, big %u", kbps[r], big);
		}
		/* Greedy: 1000 packets of 1000 bytes, each at its ready_at. */
		uroce_tb_init(&tb, &p, 0);
		now = 0;
		for (n = 0; n < 1000; n++) {
			now = uroce_tb_ready_at(&tb, &p, now, 1000);
			UT_CHECK(uroce_tb_consume(&tb, &p, now, 1000));
			times[n] = now;
			lens[n] = 1000;
		}
		worst = worst_window(times, lens, n, &p);
		UT_CHECK(worst <= (i128)burst * p.tsc_hz);
		UT_CHECK(worst > (i128)burst * p.tsc_hz - (i128)p.refill);
		UT_NOTE("greedy window at %" PRIu64 " kbit/s", kbps[r]);
	}
}

/* From random states, ready_at() is exact for sizes below and above the burst. */
static void
test_ready_at_random(void)
{
	struct uroce_tb_profile p;
	struct uroce_tb tb, a, b;
	uint64_t now = 1000, r, bad = 0, kbps;
	uint32_t bytes;
	unsigned int i;

	for (i = 0; i < 200000; i++) {
		if (i % 1000 == 0) {
			kbps = 1 + ut_rand() % (100 * KBPS_1G);
			UT_CHECK_EQ(uroce_tb_profile_init(&p, HZ_2_1G, kbps,
							  1 + ut_rand() % 20000), 0);
			uroce_tb_init(&tb, &p, now);
		}
		bytes = 1 + ut_rand() % 30000;
		now += ut_rand() % 4096;
		if (ut_rand() % 16 == 0)
			now -= ut_rand() % 8192;	/* clock jitter backwards */
		r = uroce_tb_ready_at(&tb, &p, now, bytes);
		a = tb;
		b = tb;
		if (r == now) {
			bad += !uroce_tb_consume(&a, &p, now, bytes);
		} else {
			bad += (int64_t)(r - now) < 0;
			bad += uroce_tb_consume(&a, &p, r - 1, bytes);
			bad += !uroce_tb_consume(&b, &p, r, bytes);
		}
		uroce_tb_consume(&tb, &p, now, bytes);
	}
	UT_CHECK_EQ(bad, 0);
}

/* A packet bigger than the burst goes from a full bucket and leaves debt. */
static void
test_oversize(void)
{
	struct uroce_tb_profile p;
	struct uroce_tb tb;
	uint64_t t, bps = bytes_per_s(KBPS_1G);

	UT_CHECK_EQ(uroce_tb_profile_init(&p, HZ_1G, KBPS_1G, 1000), 0);
	uroce_tb_init(&tb, &p, 0);
	UT_CHECK(uroce_tb_consume(&tb, &p, 0, 1500));
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &p, 0), (uint64_t)-500);
	/* The next waits for a full bucket: 1500 bytes at 125 MB/s = 12 us. */
	t = uroce_tb_ready_at(&tb, &p, 0, 1500);
	UT_CHECK_EQ(t, 1500 * HZ_1G / bps);
	UT_CHECK(!uroce_tb_consume(&tb, &p, t - 1, 1500));
	UT_CHECK(!uroce_tb_consume(&tb, &p, t - 1, 1000));
	UT_CHECK(uroce_tb_consume(&tb, &p, t, 1500));
	/* A small one needs only its own size. */
	UT_CHECK_EQ(uroce_tb_ready_at(&tb, &p, t, 100), t + 600 * HZ_1G / bps);
	/* Beyond UROCE_TB_MAX_BYTES the charge is capped, never overflows. */
	UT_CHECK_EQ(uroce_tb_profile_init(&p, UROCE_TB_HZ_MAX, 1, 1), 0);
	uroce_tb_init(&tb, &p, 0);
	UT_CHECK(uroce_tb_consume(&tb, &p, 0, UINT32_MAX));
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &p, 0), 1 - (int64_t)UROCE_TB_MAX_BYTES);
	UT_CHECK(uroce_tb_ready_at(&tb, &p, 0, UINT32_MAX) > 0);
}

/* Rate changes take effect at once and keep what the bucket holds. */
static void
test_rate_change(void)
{
	struct uroce_tb_profile slow, fast, small, other_hz;
	struct uroce_tb tb;
	const uint32_t pkt = 1024;
	uint64_t now = 0, t1, t2, sent, bad = 0, r;
	int64_t units;

	UT_CHECK_EQ(uroce_tb_profile_init(&slow, HZ_2_1G, KBPS_1G, 8192), 0);
	UT_CHECK_EQ(uroce_tb_profile_init(&fast, HZ_2_1G, 10 * KBPS_1G, 8192), 0);
	UT_CHECK_EQ(uroce_tb_profile_init(&small, HZ_2_1G, KBPS_1G, 2048), 0);

	/* 1 ms slow, then fast: the next packet is due at the fast rate. */
	uroce_tb_init(&tb, &slow, 0);
	t1 = HZ_2_1G / 1000;
	send_greedy(&tb, &slow, &now, t1, pkt, &bad);
	r = uroce_tb_ready_at(&tb, &slow, t1, pkt);
	UT_CHECK(r > t1);
	units = tb.tokens + (int64_t)((t1 - tb.time) * slow.refill);
	uroce_tb_set_profile(&tb, &slow, &fast, t1);
	UT_CHECK_EQ(tb.tokens, units);
	UT_CHECK_EQ(uroce_tb_ready_at(&tb, &fast, t1, pkt),
		    t1 + ((uint64_t)(pkt * HZ_2_1G - units) + fast.refill - 1) /
		    fast.refill);
	now = t1;
	t2 = t1 + HZ_2_1G / 1000;
	sent = send_greedy(&tb, &fast, &now, t2, pkt, &bad);
	UT_CHECK_EQ(sent, ((uint64_t)units + fast.refill * (t2 - t1)) /
		    (pkt * HZ_2_1G) * pkt);
	UT_CHECK_EQ(bad, 0);

	/* Fast to slow while waiting: the deadline moves out at once. */
	r = uroce_tb_ready_at(&tb, &fast, t2, pkt);
	uroce_tb_set_profile(&tb, &fast, &slow, t2);
	UT_CHECK(uroce_tb_ready_at(&tb, &slow, t2, pkt) > r);

	/* A full bucket is capped at a smaller burst, and stays so. */
	uroce_tb_init(&tb, &slow, 0);
	uroce_tb_set_profile(&tb, &slow, &small, 10);
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &small, 10), 2048);
	uroce_tb_set_profile(&tb, &small, &slow, 10);
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &slow, 10), 2048);

	/* Debt is kept. */
	uroce_tb_init(&tb, &small, 0);
	UT_CHECK(uroce_tb_consume(&tb, &small, 0, 4096));
	uroce_tb_set_profile(&tb, &small, &fast, 0);
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &fast, 0), (uint64_t)-2048);

	/* Another clock: converted, rounded down to whole bytes. */
	UT_CHECK_EQ(uroce_tb_profile_init(&other_hz, HZ_1G, KBPS_1G, 8192), 0);
	uroce_tb_init(&tb, &slow, 0);
	UT_CHECK(uroce_tb_consume(&tb, &slow, 0, 8000));
	uroce_tb_set_profile(&tb, &slow, &other_hz, 0);
	UT_CHECK_EQ(tb.tokens, 192 * (int64_t)HZ_1G);
	uroce_tb_set_profile(&tb, &other_hz, &small, 0);
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &small, 0), 192);
}

/* A clock that steps back counts as no time; a 64-bit wrap is a step. */
static void
test_clock(void)
{
	struct uroce_tb_profile p;
	struct uroce_tb tb;
	const uint64_t t0 = UINT64_C(1) << 42, bps = bytes_per_s(KBPS_1G);
	uint64_t r;

	UT_CHECK_EQ(uroce_tb_profile_init(&p, HZ_1G, KBPS_1G, 4096), 0);
	uroce_tb_init(&tb, &p, t0);
	UT_CHECK(uroce_tb_consume(&tb, &p, t0, 4096));
	/* Back by 1 ms and by 2^40 cycles: nothing gained, nothing lost. */
	UT_CHECK(!uroce_tb_consume(&tb, &p, t0 - HZ_1G / 1000, 1));
	UT_CHECK(!uroce_tb_consume(&tb, &p, t0 - (UINT64_C(1) << 40), 1));
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &p, 0), 0);
	UT_CHECK_EQ(tb.time, t0);
	/* Waiting is measured from the bucket's own time. */
	r = uroce_tb_ready_at(&tb, &p, t0 - 5000, 1000);
	UT_CHECK_EQ(r, t0 + 1000 * HZ_1G / bps);
	UT_CHECK(!uroce_tb_consume(&tb, &p, r - 1, 1000));
	UT_CHECK(uroce_tb_consume(&tb, &p, r, 1000));

	/* Across 2^64: 2000 cycles pass between UINT64_MAX - 999 and 1000. */
	uroce_tb_init(&tb, &p, UINT64_MAX - 999);
	UT_CHECK(uroce_tb_consume(&tb, &p, UINT64_MAX - 999, 4096));
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &p, 1000), 2000 * bps / HZ_1G);
	r = uroce_tb_ready_at(&tb, &p, UINT64_MAX - 999, 1000);
	UT_CHECK_EQ(r, UINT64_MAX - 999 + 1000 * HZ_1G / bps);	/* wraps */
	UT_CHECK(!uroce_tb_consume(&tb, &p, r - 1, 1000));
	UT_CHECK(uroce_tb_consume(&tb, &p, r, 1000));
}

/* Idle gaps of 2^40 cycles and more refill to exactly the burst. */
static void
test_idle_gap(void)
{
	static const struct {
		uint64_t hz, kbps;
		uint32_t burst;
	} cases[] = {
		{ HZ_2_1G, 1, 1500 },
		{ HZ_2_1G, 100 * KBPS_1G, 65536 },
		{ UROCE_TB_HZ_MAX, UROCE_TB_RATE_MAX_KBPS, UROCE_TB_MAX_BYTES },
		{ UROCE_TB_HZ_MAX, 1, UROCE_TB_MAX_BYTES },
		{ 1, UROCE_TB_RATE_MAX_KBPS, UROCE_TB_MAX_BYTES },
	};
	static const uint64_t gaps[] = {
		UINT64_C(1) << 40, (UINT64_C(1) << 63) - 1, 12345,
	};
	struct uroce_tb_profile p;
	struct uroce_tb tb;
	uint64_t now, expect;
	unsigned int c, g;

	for (c = 0; c < RTE_DIM(cases); c++)
		for (g = 0; g < RTE_DIM(gaps); g++) {
			UT_CHECK_EQ(uroce_tb_profile_init(&p, cases[c].hz,
							  cases[c].kbps,
							  cases[c].burst), 0);
			now = 77;
			uroce_tb_init(&tb, &p, now);
			UT_CHECK(uroce_tb_consume(&tb, &p, now, cases[c].burst));
			UT_CHECK(uroce_tb_consume(&tb, &p, now, 0));
			now += gaps[g];
			expect = (i128)gaps[g] * p.refill / p.tsc_hz >= cases[c].burst ?
				 cases[c].burst :
				 (uint64_t)((i128)gaps[g] * p.refill / p.tsc_hz);
			UT_CHECK_EQ(uroce_tb_tokens(&tb, &p, now), expect);
			UT_CHECK_EQ(uroce_tb_consume(&tb, &p, now, cases[c].burst),
				    expect == cases[c].burst);
			UT_NOTE("idle case %u gap %u", c, g);
		}
}

/* The bucket of the hand-off and resume tests: 8 Mbit/s (1 byte per 1000
 * cycles at 1 GHz), burst 10,000 B, full at now, then n packets of
 * 1,000 B taken at now. */
static void
tb_8mbit(struct uroce_tb_profile *p, struct uroce_tb *tb, uint64_t now,
	 int n)
{
	UT_CHECK_EQ(uroce_tb_profile_init(p, HZ_1G, 8 * KBPS_1M, 10000), 0);
	uroce_tb_init(tb, p, now);
	while (n-- > 0)
		UT_CHECK(uroce_tb_consume(tb, p, now, 1000));
}

/*
 * Hand-off (uroce_tb_handoff): 8 Mbit/s (1 byte per 1000 cycles at 1 GHz),
 * burst 10,000 B, packets of 1,000 B. 3 packets taken at t = 0 from a full
 * bucket leave only at t = 5 ms: a bucket that took them then holds
 * 10,000 - 3,000 B, not the 10,000 the refill (capped) gives, so what
 * follows at once is 7 packets and the wire never shows more than the
 * burst. Low in the bucket (steady state) nothing changes, and debt and a
 * hand-off larger than the burst are kept exact. What a refill would drop
 * at the burst (uroce_tb_excess()) and what the hand-off drops, that and
 * the rest beyond cap - bytes, exactly.
 */
static void
test_handoff(void)
{
	struct uroce_tb_profile p;
	struct uroce_tb tb;
	uint64_t now = 1000;
	int i;

	tb_8mbit(&p, &tb, now, 3);
	now += 5000000;			/* 5 ms: 5,000 B of refill, capped */
	/* 2,000 B beyond the burst come in, and the hand-off drops 3,000
	 * more. */
	UT_CHECK_EQ(uroce_tb_excess(&tb, &p, now), 2000);
	UT_CHECK_EQ(uroce_tb_handoff(&tb, &p, now, 3000), 5000);
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &p, now), 7000);
	for (i = 0; i < 7; i++)
		UT_CHECK(uroce_tb_consume(&tb, &p, now, 1000));
	UT_CHECK(!uroce_tb_consume(&tb, &p, now, 1000));
	/* Steady state: 1,000 B left, 2 packets handed over 100 us late:
	 * the 100 B of refill stay (1,100 < 10,000 - 2,000). */
	now += 1000000;			/* the bucket refills to 1,000 B */
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &p, now), 1000);
	UT_CHECK_EQ(uroce_tb_excess(&tb, &p, now + 100000), 0);
	UT_CHECK_EQ(uroce_tb_handoff(&tb, &p, now + 100000, 2000), 0);
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &p, now + 100000), 1100);
	/* More than the burst handed over: the bucket keeps no tokens. */
	now += 20000000;
	UT_CHECK_EQ(uroce_tb_excess(&tb, &p, now), 1100 + 19900 - 10000);
	UT_CHECK_EQ(uroce_tb_handoff(&tb, &p, now, 50000), 11000 + 10000);
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &p, now), 0);
	/* Debt (a packet larger than the burst) is kept as it is. */
	now += 20000000;
	UT_CHECK(uroce_tb_consume(&tb, &p, now, 15000));
	UT_CHECK_EQ(uroce_tb_handoff(&tb, &p, now, 15000), 0);
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &p, now), -5000);
	/* From debt: 20 ms bring 20,000 B, 5,000 of them beyond the burst;
	 * 14 ms bring none beyond it. */
	UT_CHECK_EQ(uroce_tb_excess(&tb, &p, now + 14000000), 0);
	UT_CHECK_EQ(uroce_tb_excess(&tb, &p, now + 20000000), 5000);
	/* Rounded down: 1 cycle more is a thousandth of a byte. */
	UT_CHECK_EQ(uroce_tb_excess(&tb, &p, now + 20000999), 5000);
	UT_CHECK_EQ(uroce_tb_excess(&tb, &p, now + 20001000), 5001);
	/* A clock behind the bucket: nothing. A gap of 2^62 cycles (its
	 * refill passes 2^64 tokens): 2^62 / 1000 B less debt and burst. */
	UT_CHECK_EQ(uroce_tb_excess(&tb, &p, now - 5), 0);
	UT_CHECK_EQ(uroce_tb_excess(&tb, &p, now + (UINT64_C(1) << 62)),
		    (UINT64_C(1) << 62) / 1000 - 15000);
}

/*
 * Resume after a pause (uroce_tb_resume), floor 4,000 B: the pause's
 * refill fills the bucket up to the floor, or up to what it held at its
 * last update if more; debt is paid back first. What a pause drops: the
 * refill beyond the burst and what is beyond that limit, exactly.
 */
static void
test_resume(void)
{
	struct uroce_tb_profile p;
	struct uroce_tb tb;
	uint64_t now = 1000;
	int i;

	/* 1,000 B held, 20 ms (20,000 B) of pause: 11,000 B beyond the
	 * burst and 6,000 beyond the floor dropped. */
	tb_8mbit(&p, &tb, now, 9);
	now += 20000000;
	UT_CHECK_EQ(uroce_tb_resume(&tb, &p, now, 4000), 11000 + 6000);
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &p, now), 4000);
	for (i = 0; i < 4; i++)
		UT_CHECK(uroce_tb_consume(&tb, &p, now, 1000));
	UT_CHECK(!uroce_tb_consume(&tb, &p, now, 1000));
	/* Under the floor: 2 ms bring 2,000 B, all kept. */
	now += 2000000;
	UT_CHECK_EQ(uroce_tb_resume(&tb, &p, now, 4000), 0);
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &p, now), 2000);
	/* 6,000 B held (owed) before a pause: kept, the refill dropped. */
	tb_8mbit(&p, &tb, now, 4);
	now += 20000000;
	UT_CHECK_EQ(uroce_tb_resume(&tb, &p, now, 4000), 16000 + 4000);
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &p, now), 6000);
	/* Debt: paid back, then up to the floor. */
	now += 4000000;
	UT_CHECK(uroce_tb_consume(&tb, &p, now, 15000));
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &p, now), -5000);
	now += 20000000;
	UT_CHECK_EQ(uroce_tb_resume(&tb, &p, now, 4000), 5000 + 6000);
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &p, now), 4000);
	/* A floor beyond the burst keeps the burst. */
	now += 20000000;
	UT_CHECK_EQ(uroce_tb_resume(&tb, &p, now, 50000), 14000);
	UT_CHECK_EQ(uroce_tb_tokens(&tb, &p, now), 10000);
}

int
main(void)
{
	ut_srand(0x9e3779b97f4a7c15ull);
	test_profile_invalid();
	test_rates();
	test_polling();
	test_burst_bound();
	test_ready_at_random();
	test_oversize();
	test_rate_change();
	test_clock();
	test_idle_gap();
	test_handoff();
	test_resume();
	return ut_summary();
}
