/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Waiting for the engine in tests that drive it through its C API
 * (lib/engine/include/uroce_engine.h): progress on this thread when the engine has
 * no lcores (native poll), else let its lcores run. Every wait is bounded
 * by UT_WAIT_S, a hang guard and not a performance threshold; once a wait
 * ran out, ut_stuck makes later waits give up at once so that a broken
 * scenario ends soon (a test resets it between scenarios).
 */
#ifndef UROCE_TEST_ENGINE_H
#define UROCE_TEST_ENGINE_H

#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "uroce_engine.h"
#include "uroce_test.h"

#define UT_WAIT_S	10	/* bound of every wait (not a threshold) */

static bool ut_stuck;

/* Native progress on this thread, or let the lcores run. */
static inline void
ut_progress(void)
{
	if (uroce_engine_lcores() == 0) {
		if (uroce_engine_poll() == 0)
			usleep(10);
	} else {
		usleep(50);
	}
}

/* One completion from cq, waiting at most UT_WAIT_S. */
static inline bool
ut_wait_wc(struct uroce_cq *cq, struct ibv_wc *wc)
{
	double end = ut_now_s() + UT_WAIT_S;
	int n;

	do {
		n = uroce_cq_poll(cq, 1, wc);
		if (n != 0)
			return n == 1;
		if (ut_stuck)
			return false;
		ut_progress();
	} while (ut_now_s() < end);
	ut_stuck = true;
	return false;
}

#endif /* UROCE_TEST_ENGINE_H */
