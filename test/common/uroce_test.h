/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * A minimal test harness. A CHECK records a failure with file:line and the
 * values, and carries on: no macro hides a return. A test program ends with
 * `return ut_summary();` which prints "<name>: N checks, N failed" and
 * returns 1 if any check failed (meson then counts the test as failed).
 */
#ifndef UROCE_TEST_H
#define UROCE_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static unsigned long ut_checks;
static unsigned long ut_failed;
/* Failures already given a note; unused in a test without UT_NOTE(). */
static unsigned long ut_failed_noted __attribute__((unused));

static inline bool
ut_record(bool ok, const char *file, int line, const char *what)
{
	ut_checks++;
	if (!ok) {
		ut_failed++;
		fprintf(stderr, "FAIL %s:%d: %s\n", file, line, what);
	}
	return ok;
}

/* Each evaluates to the outcome, so a test may stop early where it must. */
#define UT_CHECK(cond) ut_record(!!(cond), __FILE__, __LINE__, #cond)

#define UT_CHECK_EQ(a, b) ({						\
	uint64_t ut_a_ = (uint64_t)(a), ut_b_ = (uint64_t)(b);		\
	bool ut_ok_ = ut_record(ut_a_ == ut_b_, __FILE__, __LINE__, #a " == " #b); \
	if (!ut_ok_)							\
		fprintf(stderr, "     %s = %" PRIu64 " (0x%" PRIx64 "), %s = %" PRIu64 " (0x%" PRIx64 ")\n", \
			#a, ut_a_, ut_a_, #b, ut_b_, ut_b_);		\
	ut_ok_; })

#define UT_CHECK_MEM(a, b, n) ({					\
	bool ut_ok_ = ut_record(memcmp((a), (b), (n)) == 0, __FILE__, __LINE__, \
				"memcmp(" #a ", " #b ", " #n ") == 0");	\
	ut_ok_; })

/* Context for the failures since the previous note (e.g. which opcode a
 * loop is at); prints nothing if there were none. */
#define UT_NOTE(...) do {						\
	if (ut_failed != ut_failed_noted) {				\
		ut_failed_noted = ut_failed;				\
		fprintf(stderr, "     note: ");				\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
	}								\
} while (0)

/* A deterministic xorshift64 generator for test data; ut_srand() picks the
 * sequence, so a failing run can be repeated exactly. */
/* Seconds on the monotonic clock, for the bounds of waits (never a
 * threshold a test asserts). */
static inline double
ut_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t ut_rng = 0x2545f4914f6cdd1dULL;

static inline void
ut_srand(uint64_t seed)
{
	ut_rng = seed ? seed : 1;
}

static inline uint64_t
ut_rand(void)
{
	ut_rng ^= ut_rng << 13;
	ut_rng ^= ut_rng >> 7;
	ut_rng ^= ut_rng << 17;
	return ut_rng;
}

/* Fill n bytes with ut_rand() data. */
static inline void
ut_fill_rand(void *p, size_t n)
{
	uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)ut_rand();
}

static inline int
ut_summary_named(const char *name)
{
	printf("%s: %lu checks, %lu failed\n", name, ut_checks, ut_failed);
	if (ut_checks == 0) {
		fprintf(stderr, "%s: no check ran\n", name);
		return 1;
	}
	return ut_failed ? 1 : 0;
}

#define ut_summary() ut_summary_named(__FILE__)

#endif /* UROCE_TEST_H */
