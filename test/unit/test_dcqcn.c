/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The DCQCN reaction and notification points on a fake clock (time in
 * microseconds), step by step against values computed by hand from the
 * rules in uroce_dcqcn.h: Rc (1 - alpha / 2) on a cut, alpha g / 1024 a
 * quiet period, (Rt + Rc + 1) / 2 a stage.
 */
#include <rte_common.h>

#include "uroce_test.h"
#include "uroce_dcqcn.h"

/* Round numbers: 1 Gbit/s line, alpha starting at 1 (1024) so the first
 * cut halves, g = 1016/1024 (g' = 1/128), F = 5. */
static struct uroce_dcqcn_params
params(void)
{
	return (struct uroce_dcqcn_params){
		.line_kbps = 1000000, .first_kbps = 0, .min_kbps = 1000,
		.ai_kbps = 5000, .hai_kbps = 50000, .min_dec_fac = 50,
		.threshold = 5, .byte_reset = 0, .g = 1016,
		.initial_alpha = 1024, .time_reset = 300, .alpha_period = 55,
		.reduce_period = 4,
	};
}

/* One CNP: the QP becomes limited at half the line rate; alpha stays 1
 * (1024 x 1016 / 1024 + 8). */
static void
test_one_cnp(void)
{
	struct uroce_dcqcn_params p = params();
	struct uroce_dcqcn s;

	uroce_dcqcn_init(&s);
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 0);
	UT_CHECK_EQ(uroce_dcqcn_timer(&s, &p, 5000), UROCE_DCQCN_NONE);
	UT_CHECK_EQ(uroce_dcqcn_sent(&s, &p, 100000), UROCE_DCQCN_NONE);
	UT_CHECK_EQ(uroce_dcqcn_cnp(&s, &p, 1000), UROCE_DCQCN_CUT);
	UT_CHECK(s.active);
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 500000);
	UT_CHECK_EQ(s.rt, 1000000);
	UT_CHECK_EQ(s.alpha, 1024);
	UT_CHECK_EQ(s.timer_at, 1300);
	/* Before the timer: nothing. */
	UT_CHECK_EQ(uroce_dcqcn_timer(&s, &p, 1299), UROCE_DCQCN_NONE);
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 500000);

	/* mlx5's own defaults: alpha 1023, g 1019: Rc = 10^6 x 1025 / 2048. */
	p.initial_alpha = 1023;
	p.g = 1019;
	uroce_dcqcn_init(&s);
	UT_CHECK_EQ(uroce_dcqcn_cnp(&s, &p, 0), UROCE_DCQCN_CUT);
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 500488);
	/* (1023 x 1019 + 5 x 1024) / 1024 = 1023.0 */
	UT_CHECK_EQ(s.alpha, 1023);
}

/* A train: a CNP within reduce_period is ignored; later ones cut by the
 * alpha that decayed meanwhile, then raise it. */
static void
test_cnp_train(void)
{
	struct uroce_dcqcn_params p = params();
	struct uroce_dcqcn s;

	uroce_dcqcn_init(&s);
	UT_CHECK_EQ(uroce_dcqcn_cnp(&s, &p, 1000), UROCE_DCQCN_CUT);
	UT_CHECK_EQ(uroce_dcqcn_cnp(&s, &p, 1002), UROCE_DCQCN_IGNORED);
	UT_CHECK_EQ(uroce_dcqcn_cnp(&s, &p, 1003), UROCE_DCQCN_IGNORED);
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 500000);
	/* One alpha period later: alpha 1024 x 1016 / 1024 = 1016;
	 * Rc = 500000 x (2048 - 1016) / 2048 = 251953;
	 * alpha = (1016 x 1016 + 8192) / 1024 = 1016. */
	UT_CHECK_EQ(uroce_dcqcn_alpha(&s, &p, 1055), 1016);
	UT_CHECK_EQ(uroce_dcqcn_cnp(&s, &p, 1055), UROCE_DCQCN_CUT);
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 251953);
	UT_CHECK_EQ(s.rt, 500000);
	UT_CHECK_EQ(s.alpha, 1016);
	/* Two periods: 1016 -> 1008 -> 1000; Rc = 251953 x 1048 / 2048 =
	 * 128929 (above the 50% floor, 125976); alpha (1000 x 1016 + 8192)
	 * / 1024 = 1000. */
	UT_CHECK_EQ(uroce_dcqcn_cnp(&s, &p, 1165), UROCE_DCQCN_CUT);
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 128929);
	UT_CHECK_EQ(s.rt, 251953);
	UT_CHECK_EQ(s.alpha, 1000);

	/* reduce_period 0: every CNP cuts. */
	p.reduce_period = 0;
	uroce_dcqcn_init(&s);
	UT_CHECK_EQ(uroce_dcqcn_cnp(&s, &p, 7), UROCE_DCQCN_CUT);
	UT_CHECK_EQ(uroce_dcqcn_cnp(&s, &p, 7), UROCE_DCQCN_CUT);
	/* alpha still 1024 (no period passed): 500000 / 2 */
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 250000);
}

/* The floors: min_dec_fac and min_kbps. */
static void
test_floors(void)
{
	struct uroce_dcqcn_params p = params();
	struct uroce_dcqcn s;

	p.min_dec_fac = 80;		/* a cut keeps 80% */
	uroce_dcqcn_init(&s);
	UT_CHECK_EQ(uroce_dcqcn_cnp(&s, &p, 0), UROCE_DCQCN_CUT);
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 800000);
	p.min_dec_fac = 50;
	p.min_kbps = 300000;
	UT_CHECK_EQ(uroce_dcqcn_cnp(&s, &p, 10), UROCE_DCQCN_CUT);
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 400000);
	UT_CHECK_EQ(uroce_dcqcn_cnp(&s, &p, 20), UROCE_DCQCN_CUT);
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 300000);	/* not 200000 */
	UT_CHECK_EQ(uroce_dcqcn_cnp(&s, &p, 30), UROCE_DCQCN_CUT);
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 300000);
}

/* The timer path to the line rate: four stages of fast recovery, then
 * additive increase (Rt clamped at the line rate), then released. */
static void
test_timer_recovery(void)
{
	static const uint64_t rc[] = {
		750000, 875000, 937500, 968750,		/* fast recovery */
		984375, 992188, 996094, 998047,		/* additive, Rt 10^6 */
		999024, 999512, 999756, 999878, 999939, 999970, 999985,
		999993, 999997, 999999,
	};
	struct uroce_dcqcn_params p = params();
	struct uroce_dcqcn s;
	uint64_t now = 300;
	unsigned int i;

	uroce_dcqcn_init(&s);
	UT_CHECK_EQ(uroce_dcqcn_cnp(&s, &p, 0), UROCE_DCQCN_CUT);
	for (i = 0; i < RTE_DIM(rc); i++, now += 300) {
		UT_CHECK_EQ(uroce_dcqcn_timer(&s, &p, now), UROCE_DCQCN_RAISED);
		UT_CHECK_EQ(uroce_dcqcn_rate(&s), rc[i]);
		UT_CHECK_EQ(s.rt, 1000000);
		UT_CHECK_EQ(s.t_stage, i + 1);
	}
	UT_CHECK_EQ(uroce_dcqcn_timer(&s, &p, now), UROCE_DCQCN_RELEASED);
	UT_CHECK(!s.active);
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 0);
	/* Released: alpha is no longer kept. */
	UT_CHECK_EQ(uroce_dcqcn_alpha(&s, &p, now), 0);
}

/* A late timer call: one stage, the next expiry a period after it. */
static void
test_timer_late(void)
{
	struct uroce_dcqcn_params p = params();
	struct uroce_dcqcn s;

	uroce_dcqcn_init(&s);
	uroce_dcqcn_cnp(&s, &p, 0);
	UT_CHECK_EQ(uroce_dcqcn_timer(&s, &p, 1000), UROCE_DCQCN_RAISED);
	UT_CHECK_EQ(s.t_stage, 1);
	UT_CHECK_EQ(s.timer_at, 1300);
	UT_CHECK_EQ(uroce_dcqcn_timer(&s, &p, 1299), UROCE_DCQCN_NONE);
	UT_CHECK_EQ(uroce_dcqcn_timer(&s, &p, 1300), UROCE_DCQCN_RAISED);
	UT_CHECK_EQ(s.timer_at, 1600);
}

/* The byte counter, and additive then hyper increase when both counts
 * pass F. The first CNP starts from rate_to_set_on_first_cnp. */
static void
test_bytes_hyper(void)
{
	struct uroce_dcqcn_params p = params();
	struct uroce_dcqcn s;
	uint64_t now = 300;
	unsigned int i;

	p.first_kbps = 100000;
	p.byte_reset = 10000;
	uroce_dcqcn_init(&s);
	UT_CHECK_EQ(uroce_dcqcn_cnp(&s, &p, 0), UROCE_DCQCN_CUT);
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 50000);
	UT_CHECK_EQ(s.rt, 100000);
	/* Bytes short of a stage: nothing; the one that fills it: B = 1,
	 * fast recovery to 75000. */
	UT_CHECK_EQ(uroce_dcqcn_sent(&s, &p, 9999), UROCE_DCQCN_NONE);
	UT_CHECK_EQ(uroce_dcqcn_sent(&s, &p, 1), UROCE_DCQCN_RAISED);
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 75000);
	UT_CHECK_EQ(s.b_stage, 1);
	UT_CHECK_EQ(s.bytes, 0);
	/* A frame larger than two stages: one stage, the rest kept below a
	 * stage. */
	UT_CHECK_EQ(uroce_dcqcn_sent(&s, &p, 25000), UROCE_DCQCN_RAISED);
	UT_CHECK_EQ(s.b_stage, 2);
	UT_CHECK_EQ(s.bytes, 9999);
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 87500);

	/* Start again for the hyper path: T to 5, then B to 5, then one
	 * more of each. */
	uroce_dcqcn_init(&s);
	uroce_dcqcn_cnp(&s, &p, 0);
	{
		static const uint64_t t5[] = { 75000, 87500, 93750, 96875, 100938 };

		for (i = 0; i < 5; i++, now += 300) {
			UT_CHECK_EQ(uroce_dcqcn_timer(&s, &p, now), UROCE_DCQCN_RAISED);
			UT_CHECK_EQ(uroce_dcqcn_rate(&s), t5[i]);
		}
		UT_CHECK_EQ(s.rt, 105000);	/* the fifth: additive */
	}
	{
		/* B = 1..5 with T = 5: additive (min(T, B) not above F). */
		static const uint64_t b5[] = { 105469, 110235, 115118, 120059, 125030 };

		for (i = 0; i < 5; i++) {
			UT_CHECK_EQ(uroce_dcqcn_sent(&s, &p, 10000), UROCE_DCQCN_RAISED);
			UT_CHECK_EQ(uroce_dcqcn_rate(&s), b5[i]);
			UT_CHECK_EQ(s.rt, 110000 + 5000 * i);
		}
	}
	/* T = 6, B = 5: still additive. */
	UT_CHECK_EQ(uroce_dcqcn_timer(&s, &p, now), UROCE_DCQCN_RAISED);
	UT_CHECK_EQ(s.rt, 135000);
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 130015);
	/* B = 6: both above F, hyper: Rt += 50000 x (6 - 5). */
	UT_CHECK_EQ(uroce_dcqcn_sent(&s, &p, 10000), UROCE_DCQCN_RAISED);
	UT_CHECK_EQ(s.rt, 185000);
	UT_CHECK_EQ(uroce_dcqcn_rate(&s), 157508);
	/* A CNP resets both counts and cuts from the current rate. */
	now += 300;
	UT_CHECK_EQ(uroce_dcqcn_cnp(&s, &p, now), UROCE_DCQCN_CUT);
	UT_CHECK_EQ(s.rt, 157508);
	UT_CHECK_EQ(s.t_stage, 0);
	UT_CHECK_EQ(s.b_stage, 0);
	UT_CHECK(uroce_dcqcn_rate(&s) < 157508);
}

/* Alpha alone: g per quiet period, the floor reaching 0. */
static void
test_alpha(void)
{
	struct uroce_dcqcn_params p = params();
	struct uroce_dcqcn s;

	uroce_dcqcn_init(&s);
	uroce_dcqcn_cnp(&s, &p, 0);
	UT_CHECK_EQ(uroce_dcqcn_alpha(&s, &p, 54), 1024);
	UT_CHECK_EQ(uroce_dcqcn_alpha(&s, &p, 55), 1016);
	UT_CHECK_EQ(uroce_dcqcn_alpha(&s, &p, 110), 1008);
	UT_CHECK_EQ(uroce_dcqcn_alpha(&s, &p, 165), 1000);
	/* A very long quiet spell: 0, in bounded work. */
	UT_CHECK_EQ(uroce_dcqcn_alpha(&s, &p, UINT64_C(1) << 62), 0);
	p.g = 0;
	UT_CHECK_EQ(uroce_dcqcn_alpha(&s, &p, 55), 0);
}

/* The notification point: one CNP per interval per QP. */
static void
test_np_interval(void)
{
	struct uroce_dcqcn_np np = { 0 }, other = { 0 };

	UT_CHECK(uroce_dcqcn_np_ce(&np, 1000, 50));
	UT_CHECK(!uroce_dcqcn_np_ce(&np, 1000, 50));
	UT_CHECK(!uroce_dcqcn_np_ce(&np, 1049, 50));
	UT_CHECK(uroce_dcqcn_np_ce(&other, 1049, 50));	/* its own interval */
	UT_CHECK(uroce_dcqcn_np_ce(&np, 1050, 50));
	UT_CHECK(!uroce_dcqcn_np_ce(&np, 1099, 50));
	UT_CHECK(uroce_dcqcn_np_ce(&np, 5000, 50));
	/* Interval 0: every mark. */
	UT_CHECK(uroce_dcqcn_np_ce(&np, 5000, 0));
	UT_CHECK(uroce_dcqcn_np_ce(&np, 5000, 0));
	/* The first mark at time 0 counts. */
	np = (struct uroce_dcqcn_np){ 0 };
	UT_CHECK(uroce_dcqcn_np_ce(&np, 0, 50));
	UT_CHECK(!uroce_dcqcn_np_ce(&np, 49, 50));
}

int
main(void)
{
	test_one_cnp();
	test_cnp_train();
	test_floors();
	test_timer_recovery();
	test_timer_late();
	test_bytes_hyper();
	test_alpha();
	test_np_interval();
	return ut_summary();
}
