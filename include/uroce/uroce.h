/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_H
#define UROCE_H

/**
 * @file
 * uroce's public native API: what an application uses besides the verbs.
 *
 *	char err[512];
 *	if (uroce_init(NULL, UROCE_INIT_NATIVE, err, sizeof(err)) < 0)
 *		fprintf(stderr, "%s\n", err);	// UROCE_CONFIG names the file
 *	for (;;) {
 *		uroce_poll();			// run the stack on this thread
 *		...				// verbs: post, poll CQs
 *	}
 *	uroce_fini();
 *
 * Without UROCE_INIT_NATIVE, background engine lcores ([eal] lcores) run
 * the stack and uroce_poll() has nothing to do. If the process has started
 * DPDK itself (rte_eal_init()), uroce joins that EAL and uses its idle
 * worker lcores, or native progress when there is none.
 *
 * Errors are negative errno values.
 */

#include <stddef.h>

/* UROCE_VERSION: the version string, e.g. "0.1.0", from the build. */
#include <uroce/uroce_version.h>

#ifdef __cplusplus
extern "C" {
#endif

/** No background lcores: the application calls uroce_poll(). */
#define UROCE_INIT_NATIVE	0x1u

/**
 * Load the configuration file (NULL: the UROCE_CONFIG environment
 * variable), start DPDK unless it runs, open every port (devices uroce0,
 * uroce1, ...) and start the engine.
 *
 * @param flags  UROCE_INIT_*
 * @param err    on failure one line naming the file, key or step that
 *   failed (may be NULL); 512 bytes fit every message
 * @return 0, or a negative errno (-EALREADY when initialised; -ENOTSUP
 *   after uroce_fini() when uroce started DPDK: it cannot start twice in
 *   a process); nothing is left half up.
 */
int uroce_init(const char *config_path, unsigned int flags, char *err,
	       size_t err_len);

/**
 * Native progress: one iteration of the stack on the calling thread
 * (receive, transmit, timers, control). Call it in a loop.
 * @return > 0 when it did work, 0 when idle (or when background lcores run
 *   the stack), -ENODEV before uroce_init().
 */
int uroce_poll(void);

/** Stop the stack, free every object and close the ports. */
void uroce_fini(void);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_H */
