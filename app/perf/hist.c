/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Latency histogram: log-linear buckets of nanoseconds, exact below 128 ns
 * and within 1/64 (1.6%) above, as HdrHistogram does with 6 significant
 * bits. Percentiles report a bucket's lower bound; max and min are exact.
 */
#include <string.h>

#include <rte_common.h>

#include "perf_priv.h"

#define SUB_BITS	6
#define SUB		(1u << SUB_BITS)	/* 64 buckets per power of two */
#define NB		(sizeof(((struct perf_hist *)0)->b) / sizeof(uint64_t))

uint64_t
perf_cyc_ns(const struct perf *p, uint64_t cycles, unsigned int div)
{
	return (uint64_t)((double)cycles * 1e9 / (double)p->hz / div);
}

void
perf_hist_reset(struct perf_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

/* v < 128: bucket v. Else with msb the top bit (>= 7) and shift = msb - 6:
 * bucket shift * 64 + (v >> shift), the top 7 bits selecting one of 64. */
static unsigned int
bucket(uint64_t v)
{
	unsigned int shift;

	if (v < 2 * SUB)
		return (unsigned int)v;
	shift = 63u - (unsigned int)__builtin_clzll(v) - SUB_BITS;
	return shift * SUB + (unsigned int)(v >> shift);
}

static uint64_t
bucket_low(unsigned int i)
{
	unsigned int shift;

	if (i < 2 * SUB)
		return i;
	shift = i / SUB - 1;
	return (uint64_t)(i % SUB + SUB) << shift;
}

void
perf_hist_add(struct perf_hist *h, uint64_t ns)
{
	unsigned int i = bucket(ns);

	h->b[i < NB ? i : NB - 1]++;
	h->count++;
	h->sum += ns;
	if (ns > h->max)
		h->max = ns;
	if (ns < h->min)
		h->min = ns;
}

/* The value below which pct percent of the samples lie. */
uint64_t
perf_hist_pct(const struct perf_hist *h, double pct)
{
	uint64_t want, seen = 0;
	unsigned int i;

	if (h->count == 0)
		return 0;
	want = (uint64_t)((double)h->count * pct / 100.0);
	if (want == 0)
		want = 1;
	for (i = 0; i < NB; i++) {
		seen += h->b[i];
		if (seen >= want)
			return RTE_MAX(bucket_low(i), h->min);
	}
	return h->max;
}

void
perf_hist_cdf(const struct perf_hist *h, FILE *f)
{
	uint64_t seen = 0;
	unsigned int i;

	for (i = 0; i < NB && h->count != 0; i++) {
		if (h->b[i] == 0)
			continue;
		seen += h->b[i];
		fprintf(f, "%lu %.6f\n", (unsigned long)bucket_low(i),
			(double)seen / (double)h->count);
	}
}
