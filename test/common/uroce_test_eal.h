/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * EAL start-up for tests that need mbufs, rings or ethdevs. The memory mode
 * comes from UROCE_TEST_MEM (quickstart.sh sets "--in-memory" when hugepages
 * are mounted, "--no-huge -m 256" otherwise); without it, --no-huge with a
 * file prefix unique to the process, so parallel tests never share state.
 * Always --no-pci: the PCI devices of these machines are the machine's own.
 */
#ifndef UROCE_TEST_EAL_H
#define UROCE_TEST_EAL_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>

#define UT_EAL_MAX_ARGS 32

/* Whether tests run EAL on hugepages (UROCE_TEST_MEM without --no-huge). */
static inline bool
ut_eal_hugepages(void)
{
	const char *mem = getenv("UROCE_TEST_MEM");

	return mem != NULL && *mem != '\0' && strstr(mem, "--no-huge") == NULL;
}

/* EAL makes a runtime directory for the file prefix (no shared config,
 * no hugepage files: only the telemetry socket) and leaves it at exit; the
 * test removes its own, registered before rte_eal_init() so that it runs
 * after the exit handler of telemetry, which unlinks the socket. */
static inline void
ut_eal_rmdir(void)
{
	rmdir(rte_eal_get_runtime_dir());
}

/*
 * Start EAL for test prog with extra arguments (NULL-terminated list, may
 * be NULL), e.g. { "--vdev=net_ring0", NULL }. Uses lcores from "-l" or
 * "--lcores" in extra when given, else "-l 0". Returns rte_eal_init()'s result.
 */
static inline int
ut_eal_init(const char *prog, const char *const *extra)
{
	static char prefix[64], buf[256];
	char *argv[UT_EAL_MAX_ARGS];
	int argc = 0;
	bool lcores = false;
	const char *mem = getenv("UROCE_TEST_MEM");
	char *tok, *save = NULL;

	argv[argc++] = (char *)prog;
	argv[argc++] = (char *)"--no-pci";
	argv[argc++] = (char *)"--log-level=*:warning";
	if (mem == NULL || *mem == '\0' || strstr(mem, "--no-huge") != NULL) {
		snprintf(buf, sizeof(buf), "%s",
			 mem && *mem ? mem : "--no-huge -m 256");
		for (tok = strtok_r(buf, " ", &save);
		     tok != NULL && argc < UT_EAL_MAX_ARGS - 8;
		     tok = strtok_r(NULL, " ", &save))
			argv[argc++] = tok;
		snprintf(prefix, sizeof(prefix), "--file-prefix=ut%d",
			 (int)getpid());
		argv[argc++] = prefix;
		argv[argc++] = (char *)"--no-shconf";
	} else {
		argv[argc++] = (char *)"--in-memory";
	}
	for (; extra != NULL && *extra != NULL && argc < UT_EAL_MAX_ARGS - 3;
	     extra++) {
		if (strcmp(*extra, "-l") == 0 ||
		    strncmp(*extra, "--lcores", 8) == 0)
			lcores = true;
		argv[argc++] = (char *)*extra;
	}
	if (!lcores) {
		argv[argc++] = (char *)"-l";
		argv[argc++] = (char *)"0";
	}
	argv[argc] = NULL;
	if (prefix[0] != '\0')
		atexit(ut_eal_rmdir);
	return rte_eal_init(argc, argv);
}

/* ut_eal_init() without extra arguments, saying so on stderr if it fails.
 * @return 0, or -1: the test's main() then returns 1. */
static inline int
ut_eal_start(const char *prog)
{
	if (ut_eal_init(prog, NULL) >= 0)
		return 0;
	fprintf(stderr, "EAL init failed\n");
	return -1;
}

#endif /* UROCE_TEST_EAL_H */
