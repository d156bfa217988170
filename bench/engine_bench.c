/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * uroce-engine-bench: TSC cycles of one empty iteration of the engine loop
 * (uroce_poll() with native progress and nothing to do): what a polling
 * engine pays between two frames, on two ports of a ringlink pair (the
 * ports' own rx and tx are cheap ring checks, so the figure is mostly the
 * engine's). Best of ROUNDS rounds of ITERS calls, so that another
 * process taking the core shows up in the other rounds only. Indicative on
 * a shared machine.
 *
 *	uroce-engine-bench [EAL args]   (default: --no-huge -m 256)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>

#include <uroce/uroce.h>

#define ITERS		200000
#define ROUNDS		7

static double
round_cycles(void)
{
	uint64_t t0 = rte_rdtsc_precise();
	unsigned int i;

	for (i = 0; i < ITERS; i++)
		uroce_poll();
	return (double)(rte_rdtsc_precise() - t0) / ITERS;
}

int
main(int argc, char **argv)
{
	char path[64], args[512] = "", err[512];
	double best = 0, c;
	FILE *f;
	int i, ret;

	for (i = 1; i < argc; i++) {
		strncat(args, argv[i], sizeof(args) - strlen(args) - 2);
		strcat(args, " ");
	}
	snprintf(path, sizeof(path), "/tmp/uroce-engine-bench-%d.conf",
		 (int)getpid());
	f = fopen(path, "w");
	if (f == NULL)
		return 1;
	fprintf(f, "[port0]\ndev = ringlink:eb,side=0\nip = 10.1.1.1/24\n"
		"[port1]\ndev = ringlink:eb,side=1\nip = 10.1.1.2/24\n"
		"[eal]\nlcores = 1\nargs = %s --file-prefix=uroce-eb%d "
		"--no-telemetry --no-shconf --log-level=*:warning\n",
		argc > 1 ? args : "--no-huge -m 256", (int)getpid());
	fclose(f);
	ret = uroce_init(path, UROCE_INIT_NATIVE, err, sizeof(err));
	unlink(path);
	if (ret < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	for (i = 0; i < ROUNDS; i++) {
		c = round_cycles();
		if (i == 0 || c < best)
			best = c;
	}
	printf("empty engine iteration (uroce_poll, 2 ringlink ports): "
	       "%.1f TSC cycles, best of %d x %d\n", best, ROUNDS, ITERS);
	snprintf(path, sizeof(path), "%s", rte_eal_get_runtime_dir());
	uroce_fini();
	rmdir(path);	/* EAL leaves its empty runtime directory */
	return 0;
}
