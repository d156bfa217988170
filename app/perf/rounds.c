/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * A row's rounds: the raw ceiling and the transport alternate, so that a
 * change of the machine's speed (other load, the host's frequency) hits
 * both figures alike; the row reports the median round of each, the
 * spread, and whether the ceiling itself moved.
 */
#include <math.h>
#include <stdlib.h>

#include "perf_priv.h"

unsigned int
perf_median_round(const double *v, unsigned int n)
{
	unsigned int i, j, below, same, want = n > 0 ? (n - 1) / 2 : 0;

	/* The round with want figures below it (ties: the first of them);
	 * n is at most PERF_MAX_ROUNDS, so counting beats sorting. */
	for (i = 0; i < n; i++) {
		below = same = 0;
		for (j = 0; j < n; j++) {
			below += v[j] < v[i];
			same += v[j] == v[i] && j < i;
		}
		if (below + same == want)
			return i;
	}
	return 0;
}

void
perf_spread(const double *v, unsigned int n, double *min, double *max)
{
	unsigned int i;

	*min = *max = n > 0 ? v[0] : 0;
	for (i = 1; i < n; i++) {
		if (v[i] < *min)
			*min = v[i];
		if (v[i] > *max)
			*max = v[i];
	}
}

bool
perf_moved(double a, double b, double lim)
{
	return fabs(b - a) > lim * a;
}

/* Every pair of rounds under perf_moved(): the widest is the smallest
 * figure against the largest. */
bool
perf_row_moved(const struct perf_row *w, double lim)
{
	double lo, hi;

	if (w->nraw < 2)
		return false;
	perf_spread(w->raw_fig, w->nraw, &lo, &hi);
	return perf_moved(lo, hi, lim);
}
