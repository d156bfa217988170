/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The engine behind the verbs: started lazily, at the first
 * ibv_open_device() of the process, from the configuration file
 * (UROCE_CONFIG), and shared by every context afterwards. Lazily, because
 * programs fork before they open a device (perftest, test runners): a
 * library constructor would start DPDK in a parent that never uses it.
 *
 * fork(). The engine lives in the process that started it: its lcores are
 * threads, which fork() does not copy. A child forked before the first
 * open starts its own engine at its first open. A child forked after the
 * parent started one cannot: DPDK's EAL initialises once per address space
 * (rte_eal_init() refuses a second call, and the child inherited the
 * parent's "initialised" state), so the child's open fails with ENODEV and
 * one line that says why. The pid that started the engine tells the two
 * apart.
 *
 * The engine stops at exit (atexit), in the process that started it only:
 * its lcores must not run on while the process tears down, and the ports
 * (a memif server's socket) close cleanly.
 */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uroce_config.h"
#include "uroce_engine.h"
#include "uroce_verbs.h"
#include "verbs_priv.h"

static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uroce_config engine_cfg;	/* must outlive the engine */
static pid_t engine_pid;		/* 0: never started here */
static int engine_err;			/* positive errno of a failed EAL start */

static const struct uroce_dev_events verbs_events = {
	.cq_event = uroce_verbs_cq_event,
	.async_event = uroce_verbs_async_event,
};

static void
engine_stop_at_exit(void)
{
	pthread_mutex_lock(&engine_lock);
	if (engine_pid == getpid() && uroce_engine_running()) {
		uroce_engine_fini();
		uroce_config_free(&engine_cfg);
	}
	pthread_mutex_unlock(&engine_lock);
}

static unsigned int engine_flags;	/* uroce_verbs_engine_flags() */

void
uroce_verbs_engine_flags(unsigned int flags)
{
	pthread_mutex_lock(&engine_lock);
	engine_flags = flags;
	pthread_mutex_unlock(&engine_lock);
}

/* Under engine_lock. @return 0 or a positive errno, reported on stderr. */
static int
engine_start(void)
{
	char err[UROCE_CONFIG_ERR_LEN];
	unsigned int i;
	int ret;

	ret = uroce_config_load(uroce_config_path(), &engine_cfg, err,
				sizeof(err));
	if (ret == 0) {
		ret = uroce_engine_init(&engine_cfg, engine_flags, err,
				       sizeof(err));
		if (ret < 0) {
			uroce_config_free(&engine_cfg);
			/* DPDK cannot start twice, not even after a
			 * failure: later opens fail the same way. */
			engine_err = -ret;
		}
	}
	if (ret < 0) {
		fprintf(stderr, "%s\n", err);
		return -ret;
	}
	for (i = 0; i < uroce_dev_count(); i++)
		uroce_dev_set_events(uroce_dev_get(i), &verbs_events, NULL);
	engine_pid = getpid();
	atexit(engine_stop_at_exit);
	return 0;
}

int
uroce_verbs_engine_get(void)
{
	int ret;

	pthread_mutex_lock(&engine_lock);
	if (engine_pid != 0 && engine_pid != getpid()) {
		fprintf(stderr,
			"uroce: the stack was started by process %d before fork(): "
			"process %d cannot start its own (DPDK starts once per "
			"process); open the device after fork() only\n",
			(int)engine_pid, (int)getpid());
		ret = ENODEV;
	} else if (engine_pid != 0) {
		ret = 0;
	} else if (engine_err != 0) {
		ret = engine_err;
	} else {
		ret = engine_start();
	}
	pthread_mutex_unlock(&engine_lock);
	return ret;
}
