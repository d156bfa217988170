/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Pacing measured in windows (the client's bw phase, --window S): the
 * per-QP rates (--rate, or --rate-total split 1:2:3:4 round robin, with
 * --burst as max_burst_sz), and what the QPs achieve.
 *
 * Time is cut in windows of S seconds from the phase's start (TSC); the
 * first is discarded (it holds the buckets' initial bursts and the start
 * of the streams) and the whole windows that follow, until the phase's
 * end, are measured. What counts is what the pacer charges: frame bytes,
 * the port's tx_bytes per window for the aggregate (a WRITE client's port
 * sends only its requests) and each QP's tx_bytes over the measured
 * windows. Cycles per frame are the engine's work cycles (iterations that
 * found work, those over 1 ms left out: struct uroce_lcore_stats) over the
 * frames the port sent, which other load on the machine distorts less
 * than wall time, and of them those of the port's transmit bursts
 * (tx_cycles: for memif the copy into the shared ring, whose cost swings
 * up to 4x with the host's state), which tell the port's share from the
 * stack's own. With no rate the windows measure the unpaced stream (the
 * ceiling the pacing targets are set from). The stalls: the time in
 * which the loop started no iteration for over 1 ms (gap_cycles), here
 * over the windows and at the server over its phase (its result message),
 * which tells a host's stalls from the stack's own misses.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "perf_priv.h"
#include "uroce_port.h"

/* Reasons tokens are lost for (struct uroce_qp_stats, pace_lost_bytes). */
#define PACE_LOST	RTE_DIM(((struct uroce_qp_stats *)NULL)->pace_lost_bytes)

struct pace_mark {
	uint64_t tsc, bytes, pkts, work, long_loops, timers;
	uint64_t work_loops;		/* iterations that found work */
	uint64_t long_cycles;		/* of those over 1 ms */
	uint64_t gap_loops, gap_cycles;	/* the loop's gaps over 1 ms */
	uint64_t tx_cycles;		/* in the port's transmit bursts */
};

struct perf_pace {
	uint32_t *rate;			/* kbit/s per QP, 0: unpaced */
	uint64_t *tx0, *wait0;		/* per QP at the end of window 0 */
	uint64_t *lost0;		/* PACE_LOST per QP, as tx0 */
	uint64_t win;			/* window, cycles */
	uint64_t start, target_kbps;
	unsigned int nwin, w;		/* windows measured, marks taken */
	struct pace_mark *mk;		/* nwin + 2 marks */
	bool done;
	/* Results. */
	double achieved_bps, err, worst_win_err, worst_qp_err, cyc_per_frame;
	double port_cyc_per_frame;	/* of them, the port's tx bursts */
	double timers_per_frame;	/* wheel expiries: wake-ups per frame */
	double frames_per_loop;		/* per busy iteration */
	double preempted_share;		/* time in iterations over 1 ms */
	/* Time in the loop's gaps over 1 ms (uroce_lcore_stats): here, in
	 * the windows; the server's, over its phase (-1: not known). */
	double gap_share, peer_gap_share;
	double *qp_bps;
	uint64_t *qp_wait_cycles;
	uint64_t *qp_lost;		/* pace_lost_bytes[] in the windows */
	double lost_share[PACE_LOST];	/* their sums against the target */
};

static uint32_t
pace_weight(const struct perf *p, uint32_t i)
{
	return p->o->rate_total_kbps != 0 ? 1 + i % 4 : 1;
}

/* Each QP's rate: --rate, or its share of --rate-total (1:2:3:4). */
static void
pace_rates(struct perf *p, struct perf_pace *pc)
{
	uint64_t wsum = 0, r;
	uint32_t i;

	for (i = 0; i < p->nqp; i++)
		wsum += pace_weight(p, i);
	for (i = 0; i < p->nqp; i++) {
		r = p->o->rate_total_kbps != 0 ?
			RTE_MAX(p->o->rate_total_kbps * pace_weight(p, i) / wsum,
				(uint64_t)1) : p->o->rate_kbps;
		pc->rate[i] = (uint32_t)r;
		pc->target_kbps += r;
	}
}

static int
pace_apply(struct perf *p, const struct perf_pace *pc)
{
	struct ibv_qp_rate_limit_attr a;
	uint32_t i;
	int ret;

	for (i = 0; i < p->nqp; i++) {
		if (pc->rate[i] == 0)
			continue;
		memset(&a, 0, sizeof(a));
		a.rate_limit = pc->rate[i];
		a.max_burst_sz = p->o->burst;
		ret = p->ops->rate_limit(&p->qps[i], &a);
		if (ret < 0) {
			fprintf(stderr, "uroce-perf: rate %u kbit/s, burst %u "
				"on QP %u: %s\n", a.rate_limit, a.max_burst_sz,
				i, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

int
perf_pace_setup(struct perf *p)
{
	struct perf_pace *pc;
	uint32_t n = p->nqp;

	if (p->o->window_s == 0 && p->o->rate_total_kbps == 0 &&
	    p->o->burst == 0)
		return 0;
	pc = calloc(1, sizeof(*pc));
	if (pc == NULL)
		return -ENOMEM;
	p->pace = pc;
	pc->peer_gap_share = -1;
	pc->rate = calloc(n, sizeof(*pc->rate));
	pc->tx0 = calloc(n, sizeof(*pc->tx0));
	pc->wait0 = calloc(n, sizeof(*pc->wait0));
	pc->qp_bps = calloc(n, sizeof(*pc->qp_bps));
	pc->qp_wait_cycles = calloc(n, sizeof(*pc->qp_wait_cycles));
	pc->lost0 = calloc((size_t)n * PACE_LOST, sizeof(*pc->lost0));
	pc->qp_lost = calloc((size_t)n * PACE_LOST, sizeof(*pc->qp_lost));
	if (pc->rate == NULL || pc->tx0 == NULL || pc->wait0 == NULL ||
	    pc->qp_bps == NULL || pc->qp_wait_cycles == NULL ||
	    pc->lost0 == NULL || pc->qp_lost == NULL)
		return -ENOMEM;
	pace_rates(p, pc);
	return pace_apply(p, pc);
}

void
perf_pace_free(struct perf *p)
{
	struct perf_pace *pc = p->pace;

	if (pc == NULL)
		return;
	free(pc->rate);
	free(pc->tx0);
	free(pc->wait0);
	free(pc->qp_bps);
	free(pc->qp_wait_cycles);
	free(pc->lost0);
	free(pc->qp_lost);
	free(pc->mk);
	free(pc);
	p->pace = NULL;
}

static void
pace_mark(const struct perf *p, struct pace_mark *m)
{
	struct uroce_lcore_stats ls;
	struct uroce_port_stats ps;

	uroce_port_stats_get(p->port, &ps);
	memset(&ls, 0, sizeof(ls));
	uroce_engine_lcore_stats(0, &ls);
	m->tsc = rte_rdtsc();
	m->bytes = ps.tx_bytes;
	m->pkts = ps.tx_pkts;
	m->work = ls.work_cycles;
	m->long_loops = ls.long_loops;
	m->timers = ls.timers;
	m->work_loops = ls.loops - ls.idle_loops;
	m->long_cycles = ls.long_cycles;
	m->gap_loops = ls.gap_loops;
	m->gap_cycles = ls.gap_cycles;
	m->tx_cycles = ls.tx_cycles;
}

/* Each QP's tx_bytes, pace wait and lost tokens into tx[], wait[] and
 * lost[] (PACE_LOST per QP). */
static void
pace_qp_snap(const struct perf *p, uint64_t *tx, uint64_t *wait,
	     uint64_t *lost)
{
	struct uroce_qp_stats st;
	uint32_t i;

	for (i = 0; i < p->nqp; i++) {
		memset(&st, 0, sizeof(st));
		uroce_dev_qp_stats(p->qps[i].qp, &st);
		tx[i] = st.tx_bytes;
		wait[i] = st.pace_wait_cycles;
		memcpy(&lost[i * PACE_LOST], st.pace_lost_bytes,
		       sizeof(st.pace_lost_bytes));
	}
}

void
perf_pace_begin(struct perf *p, double duration)
{
	struct perf_pace *pc = p->pace;

	if (pc == NULL || p->o->window_s == 0)
		return;
	pc->win = (uint64_t)(p->o->window_s * (double)p->hz);
	pc->nwin = (unsigned int)(duration / p->o->window_s + 1e-9);
	pc->nwin = pc->nwin > 1 ? pc->nwin - 1 : 0;
	free(pc->mk);
	pc->mk = calloc(pc->nwin + 2, sizeof(*pc->mk));
	pc->w = 0;
	pc->done = pc->mk == NULL || pc->nwin == 0;
	if (pc->done)
		return;
	pace_mark(p, &pc->mk[0]);
	pc->start = pc->mk[0].tsc;
	pc->w = 1;
}

static double
rel_err(double got, double want)
{
	return want > 0 ? got / want - 1.0 : 0.0;
}

/* A count between marks a and b per frame sent meanwhile (0: none). */
static double
per_frame(const struct pace_mark *a, const struct pace_mark *b, uint64_t n)
{
	return b->pkts > a->pkts ? (double)n / (double)(b->pkts - a->pkts) : 0;
}

static void
pace_results(struct perf *p, struct perf_pace *pc)
{
	const struct pace_mark *a = &pc->mk[1], *b = &pc->mk[pc->nwin + 1];
	double secs = (double)(b->tsc - a->tsc) / (double)p->hz, got, e;
	double target = (double)pc->target_kbps * 1e3;
	uint64_t *tx = calloc(p->nqp, sizeof(*tx)), lost[PACE_LOST] = { 0 };
	unsigned int w, r;
	uint32_t i;

	pc->achieved_bps = (double)(b->bytes - a->bytes) * 8.0 / secs;
	pc->err = rel_err(pc->achieved_bps, target);
	pc->cyc_per_frame = per_frame(a, b, b->work - a->work);
	pc->port_cyc_per_frame = per_frame(a, b, b->tx_cycles - a->tx_cycles);
	pc->timers_per_frame = per_frame(a, b, b->timers - a->timers);
	pc->preempted_share = (double)(b->long_cycles - a->long_cycles) /
		(double)(b->tsc - a->tsc);
	pc->gap_share = (double)(b->gap_cycles - a->gap_cycles) /
		(double)(b->tsc - a->tsc);
	pc->frames_per_loop = b->work_loops > a->work_loops ?
		(double)(b->pkts - a->pkts) /
		(double)(b->work_loops - a->work_loops) : 0;
	for (w = 2; w <= pc->nwin + 1; w++) {
		got = (double)(pc->mk[w].bytes - pc->mk[w - 1].bytes) * 8.0 /
			((double)(pc->mk[w].tsc - pc->mk[w - 1].tsc) /
			 (double)p->hz);
		e = rel_err(got, target);
		if (fabs(e) > fabs(pc->worst_win_err))
			pc->worst_win_err = e;
	}
	if (tx == NULL)
		return;
	pace_qp_snap(p, tx, pc->qp_wait_cycles, pc->qp_lost);
	for (i = 0; i < p->nqp; i++) {
		pc->qp_bps[i] = (double)(tx[i] - pc->tx0[i]) * 8.0 / secs;
		pc->qp_wait_cycles[i] -= pc->wait0[i];
		for (r = 0; r < PACE_LOST; r++) {
			pc->qp_lost[i * PACE_LOST + r] -=
				pc->lost0[i * PACE_LOST + r];
			lost[r] += pc->qp_lost[i * PACE_LOST + r];
		}
		e = rel_err(pc->qp_bps[i], (double)pc->rate[i] * 1e3);
		if (fabs(e) > fabs(pc->worst_qp_err))
			pc->worst_qp_err = e;
	}
	for (r = 0; r < PACE_LOST; r++)
		pc->lost_share[r] = target > 0 ?
			(double)lost[r] * 8.0 / secs / target : 0;
	free(tx);
}

/* From the bw loop, with a recent TSC: the window marks. */
void
perf_pace_tick(struct perf *p, uint64_t now)
{
	struct perf_pace *pc = p->pace;

	if (pc == NULL || pc->done || now < pc->start + pc->w * pc->win)
		return;
	/* The measured windows start here: the QPs' counters first, since
	 * reading 10,000 QPs' takes this thread (with native progress, the
	 * stack too) 3-4 ms, a stall that belongs to the discarded window.
	 * With the stack on this thread no QP sends meanwhile, so the
	 * counters are those of the mark. */
	if (pc->w == 1)
		pace_qp_snap(p, pc->tx0, pc->wait0, pc->lost0);
	pace_mark(p, &pc->mk[pc->w]);
	if (pc->w++ == pc->nwin + 1) {
		pc->done = true;
		pace_results(p, pc);
	}
}

static bool
pace_measured(const struct perf *p)
{
	return p->pace != NULL && p->pace->done && p->pace->nwin > 0 &&
		p->pace->mk != NULL;
}

void
perf_pace_peer(struct perf *p, const struct perf_bw_res *srv)
{
	if (p->pace != NULL && srv->cycles != 0)
		p->pace->peer_gap_share = (double)srv->gap_cycles /
					  (double)srv->cycles;
}

void
perf_pace_report(const struct perf *p, FILE *f)
{
	const struct perf_pace *pc = p->pace;
	char peer[32] = "not known";

	if (!pace_measured(p))
		return;
	if (pc->peer_gap_share >= 0)
		snprintf(peer, sizeof(peer), "%.2f%%",
			 pc->peer_gap_share * 100);
	fprintf(f, "pacing, %u windows of %.3f s: frame bytes %.3f Mbit/s",
		pc->nwin, p->o->window_s, pc->achieved_bps / 1e6);
	if (pc->target_kbps != 0)
		fprintf(f, " for %.3f Mbit/s (%+.3f%%, worst window %+.3f%%, "
			"worst QP %+.3f%%)", (double)pc->target_kbps / 1e3,
			pc->err * 100, pc->worst_win_err * 100,
			pc->worst_qp_err * 100);
	fprintf(f, "; %.0f engine cycles (%.0f of them the port's transmit) "
		"and %.2f timer expiries per frame, "
		"%.1f frames per busy iteration, %" PRIu64
		" iterations over 1 ms (%.2f%% of the time); the loop stalled "
		"over 1 ms %" PRIu64 " times (%.2f%% of the time; the "
		"server's %s); tokens lost to "
		"late service %.2f%%, a full window %.2f%%, waiting for a "
		"turn %.2f%%, nothing posted %.2f%% of the target\n",
		pc->cyc_per_frame, pc->port_cyc_per_frame,
		pc->timers_per_frame, pc->frames_per_loop,
		pc->mk[pc->nwin + 1].long_loops - pc->mk[1].long_loops,
		pc->preempted_share * 100,
		pc->mk[pc->nwin + 1].gap_loops - pc->mk[1].gap_loops,
		pc->gap_share * 100, peer,
		pc->lost_share[0] * 100,
		pc->lost_share[1] * 100, pc->lost_share[2] * 100,
		pc->lost_share[3] * 100);
}

void
perf_pace_json(const struct perf *p, FILE *f)
{
	const struct perf_pace *pc = p->pace;
	uint32_t i;

	if (!pace_measured(p))
		return;
	fprintf(f, "  \"pace\": {\"window_s\": %.6f, \"windows_measured\": %u, "
		"\"burst\": %u, \"target_bps\": %.0f, \"achieved_bps\": %.0f, "
		"\"error\": %.6f, \"worst_window_error\": %.6f, "
		"\"worst_qp_error\": %.6f, \"cycles_per_frame\": %.1f, "
		"\"port_tx_cycles_per_frame\": %.1f, "
		"\"timers_per_frame\": %.3f, \"frames_per_loop\": %.2f, "
		"\"frames\": %" PRIu64 ", \"preempted_loops\": %" PRIu64
		", \"preempted_share\": %.6f, \"gap_loops\": %" PRIu64
		", \"gap_share\": %.6f, \"peer_gap_share\": %.6f, "
		"\"lost_share\": %.6f, "
		"\"lost_window_share\": %.6f, \"lost_turn_share\": %.6f, "
		"\"idle_share\": %.6f,"
		"\n    \"qps\": [", p->o->window_s, pc->nwin, p->o->burst,
		(double)pc->target_kbps * 1e3, pc->achieved_bps, pc->err,
		pc->worst_win_err, pc->worst_qp_err, pc->cyc_per_frame,
		pc->port_cyc_per_frame, pc->timers_per_frame,
		pc->frames_per_loop, pc->mk[pc->nwin + 1].pkts - pc->mk[1].pkts,
		pc->mk[pc->nwin + 1].long_loops - pc->mk[1].long_loops,
		pc->preempted_share,
		pc->mk[pc->nwin + 1].gap_loops - pc->mk[1].gap_loops,
		pc->gap_share, pc->peer_gap_share,
		pc->lost_share[0], pc->lost_share[1],
		pc->lost_share[2], pc->lost_share[3]);
	for (i = 0; i < p->nqp; i++)
		fprintf(f, "%s\n      {\"qpn\": %u, \"target_bps\": %.0f, "
			"\"achieved_bps\": %.0f, \"error\": %.6f, "
			"\"pace_wait_us\": %.1f, \"pace_lost_bytes\": %" PRIu64
			", \"pace_lost_window_bytes\": %" PRIu64
			", \"pace_lost_turn_bytes\": %" PRIu64
			", \"pace_idle_bytes\": %" PRIu64 "}", i ? "," : "",
			p->qps[i].qpn, (double)pc->rate[i] * 1e3,
			pc->qp_bps[i], rel_err(pc->qp_bps[i],
					       (double)pc->rate[i] * 1e3),
			(double)pc->qp_wait_cycles[i] * 1e6 / (double)p->hz,
			pc->qp_lost[i * PACE_LOST],
			pc->qp_lost[i * PACE_LOST + 1],
			pc->qp_lost[i * PACE_LOST + 2],
			pc->qp_lost[i * PACE_LOST + 3]);
	fprintf(f, "]},\n");
}
