/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * What the client prints: a live line every second while a transport
 * phase runs, the final table (transport, raw ceiling, ratio: each the
 * median of the row's rounds, with their spread), and the JSON file with
 * every figure.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_cycles.h>

#include <uroce/uroce.h>

#include "perf_priv.h"

double
perf_gbps(const struct perf_bw_res *r)
{
	return r->secs > 0 ? (double)r->bytes * 8 / r->secs / 1e9 : 0;
}

double
perf_mps(const struct perf_bw_res *r)
{
	uint64_t n = r->msgs != 0 ? r->msgs : r->frames;

	return r->secs > 0 ? (double)n / r->secs / 1e6 : 0;
}

static double
ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* The figure a bw or rate row is judged by: goodput, or message rate
 * against the raw packet rate. */
static double
row_ratio(const struct perf_row *w)
{
	if (!w->has_raw || !w->has_tp)
		return 0;
	if (w->mode == PERF_MODE_RATE)
		return ratio(perf_mps(&w->tp), perf_mps(&w->raw));
	return ratio(perf_gbps(&w->tp), perf_gbps(&w->raw));
}

/* ------------------------------------------------------------------------
 * Live line.
 */
static uint64_t
port_tx(struct perf *p)
{
	struct uroce_port_stats st;

	uroce_port_stats_get(p->port, &st);
	return st.tx_pkts;
}

void
perf_live_start(struct perf *p, struct perf_live *l, uint64_t now)
{
	memset(l, 0, sizeof(*l));
	l->last_tsc = now;
	l->next = now + p->hz;
	l->last_pkts = port_tx(p);
}

void
perf_live_tick(struct perf *p, struct perf_live *l, uint64_t now,
	       uint64_t msgs, uint64_t bytes)
{
	struct perf_qp_ctr c;
	uint64_t pkts;
	double s;

	if (now < l->next || p->o->quiet)
		return;
	s = (double)(now - l->last_tsc) / (double)p->hz;
	pkts = port_tx(p);
	perf_qp_counters(p, &c);
	printf("  %8.3f Mmsg/s %8.3f Gbit/s %7.3f Mpps  retransmits %" PRIu64
	       "\n", (double)(msgs - l->last_msgs) / s / 1e6,
	       (double)(bytes - l->last_bytes) * 8 / s / 1e9,
	       (double)(pkts - l->last_pkts) / s / 1e6, c.retransmits);
	fflush(stdout);
	l->last_tsc = now;
	l->last_msgs = msgs;
	l->last_bytes = bytes;
	l->last_pkts = pkts;
	l->next = now + p->hz;
}

/* ------------------------------------------------------------------------
 * Table.
 */
/* Decimals for a figure of the table's spread columns: 3 or 4 digits. */
static int
prec(double v)
{
	return v >= 100 ? 0 : v >= 10 ? 1 : v >= 1 ? 2 : 4;
}

/* "lo..hi" of a row's rounds, right-aligned in width. */
static void
spread_col(FILE *f, const double *v, unsigned int n, int width)
{
	char buf[64];
	double lo, hi;

	if (n == 0) {
		fprintf(f, "%*s", width, "-");
		return;
	}
	perf_spread(v, n, &lo, &hi);
	snprintf(buf, sizeof(buf), "%.*f..%.*f", prec(lo), lo, prec(hi), hi);
	fprintf(f, "%*s", width, buf);
}

static void
bw_rows(const struct perf *p, const struct perf_row *rows, unsigned int n,
	FILE *f)
{
	const struct perf_row *w;
	unsigned int i;
	bool head = false;

	for (i = 0; i < n; i++) {
		w = &rows[i];
		if (w->mode == PERF_MODE_LAT)
			continue;
		if (!head)
			fprintf(f, "%9s %6s | %9s %9s %9s | %9s %9s | %6s | "
				"%15s %15s | %10s %8s\n",
				"size", "frame", "Gbit/s", "Mmsg/s", "cyc/msg",
				"raw Gb/s", "raw Mpps", "ratio", "uroce min..max",
				"raw min..max", "retransmit", "errors");
		head = true;
		fprintf(f, "%9u %6u | ", w->size, w->frame_len);
		if (w->has_tp)
			fprintf(f, "%9.3f %9.4f %9.0f | ", perf_gbps(&w->tp),
				perf_mps(&w->tp), w->tp.msgs ?
				(double)w->tp.cycles / (double)w->tp.msgs : 0);
		else
			fprintf(f, "%9s %9s %9s | ", "-", "-", "-");
		if (w->has_raw)
			fprintf(f, "%9.3f %9.4f | ", perf_gbps(&w->raw),
				perf_mps(&w->raw));
		else
			fprintf(f, "%9s %9s | ", "-", "-");
		if (w->has_raw && w->has_tp)
			fprintf(f, "%5.0f%% | ", 100 * row_ratio(w));
		else
			fprintf(f, "%6s | ", "-");
		spread_col(f, w->tp_fig, w->ntp, 15);
		fprintf(f, " ");
		spread_col(f, w->raw_fig, w->nraw, 15);
		fprintf(f, " | %10" PRIu64 " %8" PRIu64 "%s\n",
			w->tp.qc.retransmits, w->tp.errors,
			w->moved ? "  MOVED" : "");
	}
	(void)p;
}

static void
lat_cols(const struct perf_lat_res *r, FILE *f)
{
	if (r == NULL || r->h.count == 0) {
		fprintf(f, "%8s %8s %8s %8s | ", "-", "-", "-", "-");
		return;
	}
	fprintf(f, "%8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " | ",
		perf_hist_pct(&r->h, 50), perf_hist_pct(&r->h, 99),
		perf_hist_pct(&r->h, 99.9), r->h.max);
}

static void
lat_rows(const struct perf_row *rows, unsigned int n, FILE *f)
{
	const struct perf_row *w;
	unsigned int i;
	bool head = false;

	for (i = 0; i < n; i++) {
		w = &rows[i];
		if (w->mode != PERF_MODE_LAT)
			continue;
		if (!head)
			fprintf(f, "%9s | %8s %8s %8s %8s | %8s %8s %8s %8s | "
				"%9s | %13s %13s\n",
				"lat size", "p50 ns", "p99", "p99.9", "max",
				"raw p50", "p99", "p99.9", "max", "p50 ratio",
				"p50 min..max", "raw min..max");
		head = true;
		fprintf(f, "%9u | ", w->size);
		lat_cols(w->tlat, f);
		lat_cols(w->rlat, f);
		if (w->tlat && w->rlat && w->rlat->h.count && w->tlat->h.count)
			fprintf(f, "%8.2fx | ", ratio((double)perf_hist_pct(
				&w->tlat->h, 50), (double)perf_hist_pct(
				&w->rlat->h, 50)));
		else
			fprintf(f, "%9s | ", "-");
		spread_col(f, w->tp_fig, w->ntp, 13);
		fprintf(f, " ");
		spread_col(f, w->raw_fig, w->nraw, 13);
		fprintf(f, "%s\n", w->moved ? "  MOVED" : "");
	}
}

void
perf_report_table(const struct perf *p, const struct perf_row *rows,
		  unsigned int n, FILE *f)
{
	const struct perf_wl *wl = perf_wls[p->o->wl];
	unsigned int i;

	fprintf(f, "\nuroce-perf: RC %s, %u QP%s, depth %u", wl->name, p->nqp,
		p->nqp > 1 ? "s" : "", p->o->depth);
	if (p->o->inflight != 0)
		fprintf(f, ", at most %u in flight", p->o->inflight);
	fprintf(f, ", path MTU %u, %s per phase\n", p->mtu,
		p->o->iters ? "fixed iterations" : "fixed time");
	fprintf(f, "each row: the median of %u round%s, each %s on the same "
		"port and core; ratio = uroce / raw, the medians; min..max "
		"over the rounds (Gbit/s; Mmsg/s and Mpps for rate rows; ns)\n",
		p->o->rounds, p->o->rounds > 1 ? "s" : "",
		p->o->no_raw ? "uroce alone" : p->o->raw_only ?
		"the raw ceiling alone" : "the raw ceiling then uroce");
	bw_rows(p, rows, n, f);
	lat_rows(rows, n, f);
	for (i = 0; i < n && !rows[i].moved; i++)
		;
	if (i < n)
		fprintf(f, "MOVED: the ceiling differed by more than %.0f%% "
			"between rounds: the machine's speed changed during the "
			"row, so its ratio says little about the stack\n",
			p->o->moved * 100);
	if (wl->lat == PERF_LAT_COMPLETION)
		fprintf(f, "(%s latency: time to the requester's completion; "
			"raw: half the ping-pong)\n", wl->name);
	else
		fprintf(f, "(latency: half the round trip of a ping-pong)\n");
}

/* ------------------------------------------------------------------------
 * JSON.
 */
/* A figure over a row's rounds: its name (the key of the median round's
 * value beside it), median, min, max and each round's, times scale. */
static void
json_rounds(FILE *f, const char *figure, const double *v, unsigned int n,
	    double scale)
{
	double lo, hi;
	unsigned int i;

	perf_spread(v, n, &lo, &hi);
	fprintf(f, "\"rounds\": %u, \"figure\": \"%s\", \"median\": %.6f, "
		"\"min\": %.6f, \"max\": %.6f, \"round_values\": [", n, figure,
		v[perf_median_round(v, n)] * scale, lo * scale, hi * scale);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%.6f", i ? ", " : "", v[i] * scale);
	fprintf(f, "]");
}

/* Whether the ceiling moved between rounds, and by how much (the
 * spread over the smallest), null without a ceiling. */
static void
json_moved(FILE *f, const struct perf_row *w)
{
	double lo, hi;

	if (w->nraw == 0) {
		fprintf(f, ", \"ceiling_moved\": null, \"ceiling_spread\": null");
		return;
	}
	perf_spread(w->raw_fig, w->nraw, &lo, &hi);
	fprintf(f, ", \"ceiling_moved\": %s, \"ceiling_spread\": %.6f",
		w->moved ? "true" : "false", lo > 0 ? (hi - lo) / lo : 0);
}

static void
json_bw(FILE *f, const struct perf_row *w)
{
	const struct perf_bw_res *t = &w->tp, *r = &w->raw;
	bool rate = w->mode == PERF_MODE_RATE;

	fprintf(f, "    {\"mode\": \"%s\", \"size\": %u, \"frame_len\": %u",
		rate ? "rate" : "bw", w->size, w->frame_len);
	if (w->has_tp)
		fprintf(f, ", \"messages\": %" PRIu64 ", \"bytes\": %" PRIu64
			", \"seconds\": %.6f, \"goodput_gbps\": %.4f"
			", \"msg_rate_mps\": %.6f, \"cycles_per_msg\": %.1f"
			", \"errors\": %" PRIu64 ", \"failed_qps\": %" PRIu64
			", \"retransmits\": %" PRIu64
			", \"timeouts\": %" PRIu64 ", \"late_timeouts\": %" PRIu64,
			t->msgs, t->bytes, t->secs,
			perf_gbps(t), perf_mps(t), t->msgs ?
			(double)t->cycles / (double)t->msgs : 0, t->errors,
			t->failed_qps, t->qc.retransmits, t->qc.timeouts,
			t->qc.late_timeouts);
	if (w->has_tp) {
		fprintf(f, ", \"cpu_cycles_per_msg\": %.1f, ", t->msgs ?
			(double)t->cpu_cycles / (double)t->msgs : 0);
		json_rounds(f, rate ? "msg_rate_mps" : "goodput_gbps",
			    w->tp_fig, w->ntp, 1);
	}
	if (w->has_raw) {
		fprintf(f, ", \"raw\": {\"frames\": %" PRIu64 ", \"seconds\": "
			"%.6f, \"pps\": %.1f, \"goodput_gbps\": %.4f, ",
			r->frames, r->secs, perf_mps(r) * 1e6, perf_gbps(r));
		json_rounds(f, rate ? "pps" : "goodput_gbps", w->raw_fig,
			    w->nraw, rate ? 1e6 : 1);
		fprintf(f, "}");
	} else {
		fprintf(f, ", \"raw\": null");
	}
	json_moved(f, w);
	if (w->has_tp && w->has_raw)
		fprintf(f, ", \"ratio\": %.4f}", row_ratio(w));
	else
		fprintf(f, ", \"ratio\": null}");
}

static void
json_hist(FILE *f, const char *pre, const struct perf_lat_res *r)
{
	fprintf(f, "\"%ssamples\": %" PRIu64 ", \"%sp50_ns\": %" PRIu64
		", \"%sp99_ns\": %" PRIu64 ", \"%sp999_ns\": %" PRIu64
		", \"%smax_ns\": %" PRIu64 ", \"%serrors\": %" PRIu64,
		pre, r->h.count, pre, perf_hist_pct(&r->h, 50), pre,
		perf_hist_pct(&r->h, 99), pre, perf_hist_pct(&r->h, 99.9), pre,
		r->h.max, pre, r->errors);
}

static void
json_lat(FILE *f, const struct perf_row *w)
{
	fprintf(f, "    {\"mode\": \"lat\", \"size\": %u, \"frame_len\": %u",
		w->size, w->frame_len);
	if (w->tlat != NULL) {
		fprintf(f, ", ");
		json_hist(f, "", w->tlat);
		fprintf(f, ", ");
		json_rounds(f, "p50_ns", w->tp_fig, w->ntp, 1);
	}
	if (w->rlat != NULL) {
		fprintf(f, ", \"raw\": {");
		json_hist(f, "", w->rlat);
		fprintf(f, ", ");
		json_rounds(f, "p50_ns", w->raw_fig, w->nraw, 1);
		fprintf(f, "}");
	} else {
		fprintf(f, ", \"raw\": null");
	}
	json_moved(f, w);
	if (w->tlat != NULL && w->rlat != NULL && w->rlat->h.count != 0)
		fprintf(f, ", \"ratio_p50\": %.4f}",
			ratio((double)perf_hist_pct(&w->tlat->h, 50),
			      (double)perf_hist_pct(&w->rlat->h, 50)));
	else
		fprintf(f, ", \"ratio_p50\": null}");
}

int
perf_report_json(const struct perf *p, const struct perf_row *rows,
		 unsigned int n, const char *path)
{
	FILE *f = fopen(path, "w");
	unsigned int i;

	if (f == NULL) {
		fprintf(stderr, "uroce-perf: --json %s: %s\n", path,
			strerror(errno));
		return -errno;
	}
	fprintf(f, "{\n  \"tool\": \"uroce-perf\", \"version\": \"%s\",\n"
		"  \"backend\": \"%s\", \"workload\": \"%s\", \"qps\": %u, "
		"\"depth\": %u, \"path_mtu\": %u, \"tsc_hz\": %" PRIu64 ",\n"
		"  \"srq\": %s, \"recv_wqes\": %" PRIu64 ",\n"
		"  \"rounds\": %u, \"moved_limit\": %.4f,\n",
		UROCE_VERSION, p->ops->name, perf_wls[p->o->wl]->name, p->nqp,
		p->o->depth, p->mtu, p->hz, p->srq_wr != 0 ? "true" : "false",
		perf_wls[p->o->wl]->needs_recv ? perf_recvs_total(p) : 0,
		p->o->rounds, p->o->moved);
	perf_pace_json(p, f);
	fprintf(f, "  \"results\": [\n");
	for (i = 0; i < n; i++) {
		if (rows[i].mode == PERF_MODE_LAT)
			json_lat(f, &rows[i]);
		else
			json_bw(f, &rows[i]);
		fprintf(f, "%s\n", i + 1 < n ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	if (fclose(f) != 0) {
		fprintf(stderr, "uroce-perf: --json %s: %s\n", path,
			strerror(errno));
		return -EIO;
	}
	return 0;
}
