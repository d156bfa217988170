/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Set-up of tests that drive the stack through our libibverbs.so.1: a
 * configuration file for UROCE_CONFIG, and the EAL run directory of its
 * file prefix removed at exit. Register the clean-up before the first verb
 * starts the engine: atexit handlers run in reverse, so the engine stops
 * first.
 */
#ifndef UROCE_TEST_VERBS_H
#define UROCE_TEST_VERBS_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char ut_verbs_conf[64];
static char ut_verbs_rundir[96];

static inline int
ut_verbs_rm_entry(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static inline void
ut_verbs_cleanup(void)
{
	nftw(ut_verbs_rundir, ut_verbs_rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	remove(ut_verbs_conf);
}

/*
 * Two ports of this process joined by ringlink name (no socket, no lock):
 * 192.168.<subnet>.1 and .2, MTU 1500, one engine lcore, EAL memory from
 * UROCE_TEST_MEM, file prefix uroce-<name>-<pid>. Sets UROCE_CONFIG and
 * registers the clean-up. @return 0, or -1 (errno) if the file fails.
 */
static inline int
ut_verbs_ringlink_config(const char *name, unsigned int subnet)
{
	const char *mem = getenv("UROCE_TEST_MEM");
	int pid = (int)getpid();
	FILE *f;

	snprintf(ut_verbs_conf, sizeof(ut_verbs_conf), "/tmp/uroce-%s.%d.conf",
		 name, pid);
	snprintf(ut_verbs_rundir, sizeof(ut_verbs_rundir),
		 "/var/run/dpdk/uroce-%s-%d", name, pid);
	f = fopen(ut_verbs_conf, "w");
	if (f == NULL)
		return -1;
	fprintf(f, "[port0]\ndev = ringlink:%s,side=0\n"
		"ip = 192.168.%u.1/24\nmtu = 1500\n"
		"[port1]\ndev = ringlink:%s,side=1\n"
		"ip = 192.168.%u.2/24\nmtu = 1500\n"
		"[eal]\nlcores = 1\n"
		"args = --no-pci %s --file-prefix=uroce-%s-%d "
		"--log-level=*:warning\n", name, subnet, name, subnet,
		mem != NULL ? mem : "--no-huge -m 256", name, pid);
	fclose(f);
	setenv("UROCE_CONFIG", ut_verbs_conf, 1);
	atexit(ut_verbs_cleanup);
	return 0;
}

#endif /* UROCE_TEST_VERBS_H */
