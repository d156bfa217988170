/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * uroce-pace-bench: cost per packet of pacing on one core, for 1 to 10,000
 * paced QPs sharing a 100 Gbit/s link equally (1 KiB packets).
 *
 * Each QP is a token bucket plus a wheel entry. A fake clock advances by one
 * packet time on the link per step; each step expires the due QPs, charges
 * the packet (uroce_tb_consume) and re-arms the QP at its next ready time
 * (uroce_tb_ready_at + uroce_wheel_add). The real cycles of that loop, over
 * the packets it sends, are the cost; with a wheel it should not depend on
 * the number of QPs. Each row runs for about 0.2 s (--quick: 0.02 s), best
 * of three. Needs no EAL: cycles come from the TSC, time from
 * CLOCK_MONOTONIC.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "uroce_pace.h"

#define FAKE_HZ		UINT64_C(2100000000)	/* fake clock: a 2.1 GHz TSC */
#define LINK_KBPS	UINT64_C(100000000)	/* 100 Gbit/s */
#define PKT_BYTES	1024
#define SLOT_SHIFT	7			/* 128-cycle slots, ~61 ns */
#define NB_SLOTS	4096
#define BURST_OUT	32
#define NB_RUNS		3

struct paced_qp {
	struct uroce_wheel_entry ent;
	struct uroce_tb tb;
	uint64_t sent;
} __rte_cache_aligned;

struct bench {
	struct paced_qp *qps;
	unsigned int nb_qps;
	struct uroce_tb_profile prof;
	struct uroce_wheel wheel;
	uint64_t now;		/* fake clock */
	uint64_t step;		/* one packet on the link, in fake cycles */
	uint64_t sent;
	uint64_t refused;	/* woken before the bucket allowed: must stay 0 */
};

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* One link step: send for every due QP and re-arm it. */
static inline void
bench_step(struct bench *b)
{
	struct uroce_wheel_entry *out[BURST_OUT];
	struct paced_qp *q;
	unsigned int n, i;

	b->now += b->step;
	n = uroce_wheel_expire(&b->wheel, b->now, out, BURST_OUT);
	for (i = 0; i < n; i++) {
		q = container_of(out[i], struct paced_qp, ent);
		if (uroce_tb_consume(&q->tb, &b->prof, b->now, PKT_BYTES)) {
			q->sent++;
			b->sent++;
		} else {
			b->refused++;
		}
		uroce_wheel_add(&b->wheel, &q->ent,
				uroce_tb_ready_at(&q->tb, &b->prof, b->now,
						  PKT_BYTES));
	}
}

static int
bench_setup(struct bench *b, unsigned int nb_qps)
{
	unsigned int i;
	int ret;

	memset(b, 0, sizeof(*b));
	b->nb_qps = nb_qps;
	b->qps = aligned_alloc(RTE_CACHE_LINE_SIZE, nb_qps * sizeof(*b->qps));
	if (b->qps == NULL)
		return -1;
	ret = uroce_tb_profile_init(&b->prof, FAKE_HZ, LINK_KBPS / nb_qps,
				    PKT_BYTES);
	if (ret == 0)
		ret = uroce_wheel_init(&b->wheel, SLOT_SHIFT, NB_SLOTS, 0);
	if (ret != 0) {
		free(b->qps);
		return -1;
	}
	b->step = (PKT_BYTES * 8 * FAKE_HZ + LINK_KBPS * 1000 - 1) /
		  (LINK_KBPS * 1000);
	/* Start the QPs one packet time apart, as a link would drain them. */
	for (i = 0; i < nb_qps; i++) {
		memset(&b->qps[i], 0, sizeof(b->qps[i]));
		uroce_wheel_entry_init(&b->qps[i].ent);
		uroce_tb_init(&b->qps[i].tb, &b->prof, 0);
		uroce_wheel_add(&b->wheel, &b->qps[i].ent, i * b->step);
	}
	return 0;
}

static void
bench_run(struct bench *b, uint64_t steps)
{
	while (steps-- > 0)
		bench_step(b);
}

struct row {
	unsigned int nb_qps;
	double tsc_per_pkt;
	double ns_per_pkt;
	uint64_t pkts;
	uint64_t refused;
};

/* Warm up (every QP sends a few times), then time the best of NB_RUNS. */
static int
measure(unsigned int nb_qps, double target_ns, struct row *r)
{
	struct bench b;
	uint64_t steps = 4096, sent0, t0c, tc;
	double t0, t, best = 0;
	int i;

	if (bench_setup(&b, nb_qps) != 0)
		return -1;
	bench_run(&b, 4 * (uint64_t)nb_qps + 100000);
	for (;;) {
		t0 = now_ns();
		bench_run(&b, steps);
		t = now_ns() - t0;
		if (t >= target_ns / 8)
			break;
		steps *= 2;
	}
	steps = (uint64_t)(steps * (target_ns / t)) + 1;
	for (i = 0; i < NB_RUNS; i++) {
		sent0 = b.sent;
		t0c = rte_rdtsc();
		t0 = now_ns();
		bench_run(&b, steps);
		t = now_ns() - t0;
		tc = rte_rdtsc() - t0c;
		if (b.sent == sent0)
			continue;
		if (best == 0 || tc / (double)(b.sent - sent0) < r->tsc_per_pkt) {
			best = t;
			r->tsc_per_pkt = tc / (double)(b.sent - sent0);
			r->ns_per_pkt = t / (double)(b.sent - sent0);
			r->pkts = b.sent - sent0;
		}
	}
	r->nb_qps = nb_qps;
	r->refused = b.refused;
	uroce_wheel_fini(&b.wheel);
	free(b.qps);
	return best > 0 ? 0 : -1;
}

static void
usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--quick]\n"
		"  --quick  about 0.02 s per row instead of 0.2 s\n", prog);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const unsigned int counts[] = { 1, 100, 1000, 10000 };
	struct row rows[RTE_DIM(counts)];
	double target_ns = 200e6;
	unsigned int i;
	int c;

	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			target_ns = 20e6;
			break;
		case 'h':
			usage(argv[0]);
			return EXIT_SUCCESS;
		default:
			usage(argv[0]);
			return EXIT_FAILURE;
		}
	}
	if (optind != argc) {
		usage(argv[0]);
		return EXIT_FAILURE;
	}

	printf("uroce-pace-bench: consume + ready_at + wheel re-arm per packet, "
	       "%u B packets, 100 Gbit/s shared equally,\n"
	       "wheel %u slots x 2^%u cycles, %.2f s per row, best of %d\n",
	       PKT_BYTES, NB_SLOTS, SLOT_SHIFT, target_ns / 1e9, NB_RUNS);
	printf("%8s %14s %12s %10s %9s %8s\n", "QPs", "kbit/s per QP",
	       "packets", "tsc/pkt", "ns/pkt", "refused");
	memset(rows, 0, sizeof(rows));
	for (i = 0; i < RTE_DIM(counts); i++) {
		if (measure(counts[i], target_ns, &rows[i]) != 0) {
			fprintf(stderr, "set-up failed for %u QPs\n", counts[i]);
			return EXIT_FAILURE;
		}
		printf("%8u %14" PRIu64 " %12" PRIu64 " %10.1f %9.2f %8" PRIu64 "\n",
		       rows[i].nb_qps, LINK_KBPS / counts[i], rows[i].pkts,
		       rows[i].tsc_per_pkt, rows[i].ns_per_pkt, rows[i].refused);
		fflush(stdout);
	}
	printf("\n10000 QPs vs 1 QP: %.2fx (target: <= 1.2x)\n",
	       rows[RTE_DIM(counts) - 1].tsc_per_pkt / rows[0].tsc_per_pkt);
	for (i = 0; i < RTE_DIM(counts); i++)
		if (rows[i].refused != 0)
			return EXIT_FAILURE;
	return EXIT_SUCCESS;
}
