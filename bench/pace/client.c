/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * uroce-pace-perf, the client: RC WRITE streams and what they achieve.
 *
 * A scenario is nqp RC QPs, each with `depth` WRITEs of msg bytes always
 * outstanding (reposted as they complete, so every QP stays backlogged),
 * each QP paced at its own rate or not at all. Time is cut in windows of
 * window_s (rte_rdtsc); the first window is discarded (it holds the
 * bucket's initial burst and the start of the stream). What counts is what
 * the pacer counts: the frame bytes the port sent (struct
 * uroce_port_stats tx_bytes, which for this client are only its requests)
 * per window, and each QP's tx_bytes over the measured windows.
 *
 * Suite "full":
 *  a. the ceiling: one unpaced stream;
 *  b. one stream at 10 Mbit/s, 100 Mbit/s, 1, 5, 10 Gbit/s and 90 % of
 *     the ceiling: achieved / target (targets above the ceiling are
 *     reported as such, not as a miss);
 *  c. 1, 100, 1,000 and 10,000 QPs whose rates (in the ratio 1:2:3:4,
 *     round robin) sum to 80 % of the ceiling: the aggregate error, the
 *     worst QP's error, and the work cycles per frame sent (the cycles of
 *     loop iterations that did something - engine work, completions,
 *     posts - over the frames the port sent).
 * Suite "one": one scenario, --qps QPs at --rate kbit/s each (0: unpaced).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include <uroce/uroce.h>

#include "pace_perf.h"

#define PP_CLIENT_PSN	0x00abcdu
#define PP_DEPTH_MAX	16u
#define PP_WC_BURST	64
#define PP_MAX_SCEN	16

/* A scenario: what to run. */
struct scen {
	char name[32];
	const char *group;	/* "ceiling", "single", "multi", "one" */
	uint32_t nqp;
	uint64_t total_kbps;	/* sum of the QPs' rates; 0: unpaced */
	bool weighted;		/* rates 1:2:3:4 round robin, else equal */
};

/* What it gave. */
struct result {
	struct scen sc;
	uint64_t target_kbps;	/* sum of the integer rates set */
	double achieved_bps;	/* over the measured windows */
	double err;		/* achieved / target - 1 */
	double worst_win_err;	/* the worst measured window's */
	double worst_qp_err;	/* the worst QP's, over the measured windows */
	double cyc_per_pkt;
	uint64_t pkts;		/* frames in the measured windows */
	double goodput_bps;	/* payload bytes completed, whole run */
	uint64_t retransmits;	/* the client QPs', whole run */
	uint64_t timeouts;
	bool above_ceiling;
	bool ok;		/* no error; the data checked when asked */
};

/* Run state of one scenario. */
struct run {
	struct pp_side *s;
	const struct pp_opts *o;
	struct pp_ctl peer;
	uint32_t *rqpn;
	uint32_t *rate;		/* kbit/s per QP, 0: unpaced */
	uint32_t *outst;	/* WRITEs outstanding per QP */
	uint64_t *tx0;		/* QP tx_bytes at the end of window 0 */
	uint32_t depth;
	bool posting;
	bool failed;
	uint64_t posted, completed;
	uint64_t work;		/* cycles of iterations that did work */
};

static double
tsc_s(uint64_t cycles)
{
	return (double)cycles / (double)rte_get_tsc_hz();
}

static bool
post_write(struct run *r, uint32_t i)
{
	uint32_t slot = i % PP_SLOTS, msg = r->o->msg;
	struct ibv_sge sge = {
		.addr = (uintptr_t)(r->s->buf + (size_t)slot * msg),
		.length = msg, .lkey = r->s->mr->lkey,
	};
	struct ibv_send_wr wr, *bad = NULL;
	int ret;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = i;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = r->peer.addr + (uint64_t)slot * msg;
	wr.wr.rdma.rkey = r->peer.rkey;
	ret = uroce_qp_post_send(r->s->qp[i], &wr, &bad);
	if (ret != 0) {
		fprintf(stderr, "pace-perf: post on QP %u: %s\n", i,
			strerror(ret < 0 ? -ret : ret));
		r->failed = true;
		return false;
	}
	r->outst[i]++;
	r->posted++;
	return true;
}

/* One iteration: the stack, completions, reposts. */
static void
iterate(struct run *r)
{
	struct ibv_wc wc[PP_WC_BURST];
	uint64_t t0 = rte_rdtsc();
	int n, k, work;

	work = uroce_poll();
	n = uroce_cq_poll(r->s->cq, PP_WC_BURST, wc);
	for (k = 0; k < n; k++) {
		uint32_t i = (uint32_t)wc[k].wr_id;

		if (wc[k].status != IBV_WC_SUCCESS || i >= r->s->nqp) {
			fprintf(stderr, "pace-perf: QP %u: completion status "
				"%d\n", i, (int)wc[k].status);
			r->failed = true;
			continue;
		}
		r->outst[i]--;
		r->completed++;
		if (r->posting)
			post_write(r, i);
	}
	if (work > 0 || n > 0)
		r->work += rte_rdtsc() - t0;
}

static uint64_t
qp_tx_bytes(struct run *r, uint32_t i)
{
	struct uroce_qp_stats st;

	memset(&st, 0, sizeof(st));
	if (uroce_dev_qp_stats(r->s->qp[i], &st) < 0)
		r->failed = true;
	return st.tx_bytes;
}

/* Set every QP's rate (0 removes it). */
static bool
set_rates(struct run *r, bool on)
{
	struct ibv_qp_rate_limit_attr a;
	uint32_t i;
	int ret;

	for (i = 0; i < r->s->nqp; i++) {
		if (r->rate[i] == 0)
			continue;
		memset(&a, 0, sizeof(a));
		a.rate_limit = on ? r->rate[i] : 0;
		a.max_burst_sz = on ? r->o->burst : 0;
		ret = uroce_dev_qp_rate_limit(r->s->qp[i], &a);
		if (ret < 0) {
			fprintf(stderr, "pace-perf: rate %u kbit/s on QP %u: "
				"%s\n", a.rate_limit, i, strerror(-ret));
			return false;
		}
	}
	return true;
}

/* Both sides' QPs in RTS, the rates set. */
static bool
scen_setup(struct run *r, uint32_t nqp)
{
	struct pp_ctl m;
	uint32_t k;

	if (!pp_side_open(r->s, (size_t)PP_SLOTS * r->o->msg) ||
	    !pp_qps_create(r->s, nqp, r->depth))
		return false;
	for (k = 0; k < PP_SLOTS; k++)
		pp_fill(r->s->buf + (size_t)k * r->o->msg, r->o->msg, k);
	memset(&m, 0, sizeof(m));
	m.type = PP_SETUP;
	m.nqp = nqp;
	m.msg = r->o->msg;
	m.flags = r->o->check ? PP_F_CHECK : 0;
	pp_my_ctl(r->s, &m, PP_CLIENT_PSN);
	if (!pp_send(r->s->fd, &m, r->s->qpn, nqp * sizeof(uint32_t)) ||
	    !pp_recv(r->s->fd, &r->peer, PP_REPLY, NULL, 0, PP_WAIT_S * 4))
		return false;
	if (r->peer.nqp != nqp) {
		fprintf(stderr, "pace-perf: the server could not set up %u "
			"QPs\n", nqp);
		return false;
	}
	return pp_recv_bytes(r->s->fd, r->rqpn, nqp * sizeof(uint32_t)) &&
		pp_qps_connect(r->s, r->rqpn, &r->peer, PP_CLIENT_PSN) &&
		set_rates(r, true);
}

/* Stop posting, lift the limits (so that what is queued leaves at once),
 * wait for every WRITE; then the server's verdict. */
static bool
scen_finish(struct run *r, struct pp_ctl *res)
{
	uint64_t end;
	struct pp_ctl m;

	r->posting = false;
	/* A QP in ERR refuses the verb (EINVAL); its WQEs are flushed. */
	set_rates(r, false);
	end = rte_rdtsc() + (uint64_t)(PP_WAIT_S * rte_get_tsc_hz());
	while (r->completed < r->posted && !r->failed && rte_rdtsc() < end)
		iterate(r);
	if (r->completed != r->posted) {
		fprintf(stderr, "pace-perf: %" PRIu64 " of %" PRIu64 " WRITEs "
			"completed\n", r->completed, r->posted);
		r->failed = true;
	}
	memset(&m, 0, sizeof(m));
	m.type = PP_DONE;
	if (!pp_send(r->s->fd, &m, NULL, 0) ||
	    !pp_recv(r->s->fd, res, PP_RESULT, NULL, 0, PP_WAIT_S))
		return false;
	if (res->failed != 0)
		fprintf(stderr, "pace-perf: the server found %u errors\n",
			res->failed);
	return !r->failed && res->failed == 0;
}

/* One window's end: the port's counters and the work so far. */
struct mark {
	uint64_t tsc, bytes, pkts, work;
};

static void
mark_now(struct run *r, struct mark *mk)
{
	struct uroce_port_stats ps;

	uroce_port_stats_get(uroce_dev_port(r->s->dev), &ps);
	mk->tsc = rte_rdtsc();
	mk->bytes = ps.tx_bytes;
	mk->pkts = ps.tx_pkts;
	mk->work = r->work;
}

static double
rel_err(double got, double want)
{
	return want > 0 ? got / want - 1.0 : 0.0;
}

/* The windows: traffic and marks; the errors into res. */
static void
measure(struct run *r, struct result *res)
{
	unsigned int nwin = r->o->windows, w;
	uint64_t win = (uint64_t)(r->o->window_s * rte_get_tsc_hz());
	double target = (double)res->target_kbps * 1000.0, t, e, got;
	struct mark mk[nwin + 1];
	uint32_t i;

	mark_now(r, &mk[0]);
	for (w = 1; w <= nwin && !r->failed; w++) {
		while (rte_rdtsc() < mk[0].tsc + w * win && !r->failed)
			iterate(r);
		mark_now(r, &mk[w]);
		if (w == 1)	/* measured windows start here */
			for (i = 0; i < r->s->nqp; i++)
				r->tx0[i] = qp_tx_bytes(r, i);
	}
	if (r->failed)
		return;
	res->worst_win_err = 0;
	for (w = 2; w <= nwin; w++) {
		got = (double)(mk[w].bytes - mk[w - 1].bytes) * 8.0 /
			tsc_s(mk[w].tsc - mk[w - 1].tsc);
		e = rel_err(got, target);
		if (fabs(e) > fabs(res->worst_win_err))
			res->worst_win_err = e;
	}
	t = tsc_s(mk[nwin].tsc - mk[1].tsc);
	res->achieved_bps = (double)(mk[nwin].bytes - mk[1].bytes) * 8.0 / t;
	res->err = rel_err(res->achieved_bps, target);
	res->pkts = mk[nwin].pkts - mk[1].pkts;
	res->cyc_per_pkt = res->pkts ? (double)(mk[nwin].work - mk[1].work) /
		(double)res->pkts : 0;
	res->worst_qp_err = 0;
	for (i = 0; i < r->s->nqp && r->rate[i] != 0; i++) {
		got = (double)(qp_tx_bytes(r, i) - r->tx0[i]) * 8.0 / t;
		e = rel_err(got, (double)r->rate[i] * 1000.0);
		if (fabs(e) > fabs(res->worst_qp_err))
			res->worst_qp_err = e;
	}
}

static void
sum_counters(struct run *r, struct result *res)
{
	struct uroce_qp_stats st;
	uint32_t i;

	for (i = 0; i < r->s->nqp; i++) {
		memset(&st, 0, sizeof(st));
		uroce_dev_qp_stats(r->s->qp[i], &st);
		res->retransmits += st.retransmits;
		res->timeouts += st.timeouts;
	}
}

/* --check: the pacer held the paced QPs back (its counter moved), and
 * the server received at least the payload completed. */
static bool
check_counters(struct run *r, const struct pp_ctl *srv)
{
	struct uroce_qp_stats st;
	uint64_t payload = r->completed * r->o->msg;
	bool ok = srv->rx_bytes >= payload;
	uint32_t i;

	for (i = 0; i < r->s->nqp; i++) {
		memset(&st, 0, sizeof(st));
		ok &= uroce_dev_qp_stats(r->s->qp[i], &st) == 0;
		ok &= r->rate[i] == 0 || st.pace_wait_cycles > 0;
		ok &= st.tx_bytes >= r->o->msg;	/* each QP sent */
	}
	printf("check: %" PRIu64 " WRITEs of %u B completed, server received "
	       "%" PRIu64 " frame bytes in %" PRIu64 " frames: %s\n",
	       r->completed, r->o->msg, srv->rx_bytes, srv->rx_pkts,
	       ok ? "ok" : "FAILED");
	return ok;
}

static void
rates_fill(struct run *r, const struct scen *sc, struct result *res)
{
	uint64_t wsum = 0;
	uint32_t i, w;

	for (i = 0; i < sc->nqp; i++)
		wsum += sc->weighted ? 1 + i % 4 : 1;
	res->target_kbps = 0;
	for (i = 0; i < sc->nqp; i++) {
		w = sc->weighted ? 1 + i % 4 : 1;
		r->rate[i] = sc->total_kbps == 0 ? 0 :
			(uint32_t)RTE_MAX(sc->total_kbps * w / wsum, (uint64_t)1);
		res->target_kbps += r->rate[i];
	}
}

static bool
run_scen(struct pp_side *s, const struct pp_opts *o, const struct scen *sc,
	 struct result *res)
{
	struct run r = { .s = s, .o = o, .posting = true };
	uint64_t t0;
	struct pp_ctl srv;
	uint32_t i;
	bool ok;

	memset(res, 0, sizeof(*res));
	memset(&srv, 0, sizeof(srv));
	res->sc = *sc;
	r.depth = 32u / sc->nqp;
	r.depth = RTE_MAX(r.depth, 2u);
	r.depth = RTE_MIN(r.depth, PP_DEPTH_MAX);
	r.rqpn = calloc(sc->nqp, sizeof(*r.rqpn));
	r.rate = calloc(sc->nqp, sizeof(*r.rate));
	r.outst = calloc(sc->nqp, sizeof(*r.outst));
	r.tx0 = calloc(sc->nqp, sizeof(*r.tx0));
	ok = r.rqpn && r.rate && r.outst && r.tx0;
	if (ok)
		rates_fill(&r, sc, res);
	ok = ok && scen_setup(&r, sc->nqp);
	t0 = rte_rdtsc();
	for (i = 0; ok && i < sc->nqp * r.depth; i++)
		ok = post_write(&r, i % sc->nqp);
	if (ok)
		measure(&r, res);
	ok = scen_finish(&r, &srv) && ok;
	sum_counters(&r, res);
	res->goodput_bps = (double)r.completed * o->msg * 8.0 /
		tsc_s(rte_rdtsc() - t0);
	if (ok && o->check)
		ok = check_counters(&r, &srv);
	res->ok = ok;
	pp_side_close(s);
	free(r.rqpn);
	free(r.rate);
	free(r.outst);
	free(r.tx0);
	return ok;
}

/* ---------------------------------------------------------------------------
 * Suites and the report.
 */
static const uint64_t single_kbps[] = {
	10000, 100000, 1000000, 5000000, 10000000,
};
static const uint32_t multi_nqp[] = { 1, 100, 1000, 10000 };

static void
scen_set(struct scen *sc, const char *group, const char *name, uint32_t nqp,
	 uint64_t kbps, bool weighted)
{
	memset(sc, 0, sizeof(*sc));
	sc->group = group;
	snprintf(sc->name, sizeof(sc->name), "%s", name);
	sc->nqp = nqp;
	sc->total_kbps = kbps;
	sc->weighted = weighted;
}

static void
rate_name(char *buf, size_t len, uint64_t kbps)
{
	if (kbps >= 1000000 && kbps % 1000000 == 0)
		snprintf(buf, len, "%" PRIu64 "G", kbps / 1000000);
	else if (kbps >= 1000 && kbps % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "M", kbps / 1000);
	else
		snprintf(buf, len, "%" PRIu64 "k", kbps);
}

static void
print_head(void)
{
	printf("%-12s %6s %12s %12s %9s %9s %9s %8s %7s  %s\n", "scenario",
	       "QPs", "target Mb/s", "got Mb/s", "error", "worst 1s",
	       "worst QP", "cyc/pkt", "resent", "verdict");
}

static const char *
verdict(const struct result *r)
{
	if (!r->ok)
		return "ERROR";
	if (strcmp(r->sc.group, "ceiling") == 0 ||
	    strcmp(r->sc.group, "one") == 0)
		return "-";
	if (r->above_ceiling)
		return "above ceiling";
	if (fabs(r->err) > 0.01 ||
	    (strcmp(r->sc.group, "multi") == 0 && fabs(r->worst_qp_err) > 0.05))
		return "MISSED";
	return "ok";
}

static void
print_row(const struct result *r)
{
	printf("%-12s %6u %12.3f %12.3f %+8.3f%% %+8.3f%% %+8.3f%% %8.0f %7"
	       PRIu64 "  %s\n", r->sc.name, r->sc.nqp,
	       (double)r->target_kbps / 1e3, r->achieved_bps / 1e6,
	       r->err * 100, r->worst_win_err * 100, r->worst_qp_err * 100,
	       r->cyc_per_pkt, r->retransmits, verdict(r));
}

static void
json_write(const struct pp_opts *o, const struct result *res, unsigned int n,
	   double ceiling, double cyc_ratio)
{
	FILE *f = fopen(o->json, "w");
	unsigned int i;

	if (f == NULL) {
		perror(o->json);
		return;
	}
	fprintf(f, "{\n  \"window_s\": %.3f, \"windows_measured\": %u, "
		"\"msg\": %u, \"tsc_hz\": %" PRIu64 ",\n  \"ceiling_bps\": "
		"%.0f, \"cycles_ratio_10000_vs_1\": %.3f,\n  \"results\": [\n",
		o->window_s, o->windows - 1, o->msg, rte_get_tsc_hz(),
		ceiling, cyc_ratio);
	for (i = 0; i < n; i++)
		fprintf(f, "    {\"group\": \"%s\", \"name\": \"%s\", \"qps\": "
			"%u, \"target_bps\": %.0f, \"achieved_bps\": %.0f, "
			"\"error\": %.6f, \"worst_window_error\": %.6f, "
			"\"worst_qp_error\": %.6f, \"cycles_per_pkt\": %.1f, "
			"\"pkts\": %" PRIu64 ", \"goodput_bps\": %.0f, "
			"\"retransmits\": %" PRIu64 ", \"timeouts\": %" PRIu64
			", \"above_ceiling\": %s, \"verdict\": \"%s\"}%s\n",
			res[i].sc.group, res[i].sc.name, res[i].sc.nqp,
			(double)res[i].target_kbps * 1e3, res[i].achieved_bps,
			res[i].err, res[i].worst_win_err, res[i].worst_qp_err,
			res[i].cyc_per_pkt, res[i].pkts, res[i].goodput_bps,
			res[i].retransmits, res[i].timeouts, res[i].above_ceiling ? "true" : "false",
			verdict(&res[i]), i + 1 < n ? "," : "");
	fprintf(f, "  ]\n}\n");
	fclose(f);
}

/* The scenarios that depend on the ceiling, once it is known. */
static unsigned int
full_plan(struct scen *sc, double ceiling_bps)
{
	uint64_t ceil_kbps = (uint64_t)(ceiling_bps / 1000.0);
	unsigned int n = 0, k;
	char name[32], rn[24];

	for (k = 0; k < RTE_DIM(single_kbps); k++) {
		rate_name(rn, sizeof(rn), single_kbps[k]);
		snprintf(name, sizeof(name), "1x%s", rn);
		scen_set(&sc[n++], "single", name, 1, single_kbps[k], false);
	}
	scen_set(&sc[n++], "single", "1x90%ceil", 1, ceil_kbps * 9 / 10,
		 false);
	for (k = 0; k < RTE_DIM(multi_nqp); k++) {
		snprintf(name, sizeof(name), "%ux80%%", multi_nqp[k]);
		scen_set(&sc[n++], "multi", name, multi_nqp[k],
			 ceil_kbps * 8 / 10, true);
	}
	return n;
}

static bool
wait_link(struct pp_side *s)
{
	uint64_t end = rte_rdtsc() + (uint64_t)(PP_WAIT_S * rte_get_tsc_hz());
	struct uroce_port *port = uroce_dev_port(uroce_dev_get(0));

	while (!uroce_port_link_up(port) && rte_rdtsc() < end)
		uroce_poll();
	(void)s;
	return uroce_port_link_up(port);
}

int
pp_client(struct pp_side *s, const struct pp_opts *o)
{
	struct result res[PP_MAX_SCEN];
	struct scen sc[PP_MAX_SCEN];
	double ceiling = 0, c1 = 0, c10k = 0;
	unsigned int n = 0, i;
	struct pp_ctl m;
	bool ok;

	if (!wait_link(s)) {
		fprintf(stderr, "pace-perf: the link did not come up\n");
		return 1;
	}
	if (strcmp(o->suite, "one") == 0) {
		scen_set(&sc[0], "one", "one", o->nqp,
			 (uint64_t)o->rate_kbps * o->nqp, false);
		n = 1;
	} else {
		scen_set(&sc[0], "ceiling", "ceiling", 1, 0, false);
		n = 1;
	}
	print_head();
	ok = run_scen(s, o, &sc[0], &res[0]);
	print_row(&res[0]);
	if (ok && strcmp(o->suite, "full") == 0) {
		ceiling = res[0].achieved_bps;
		n += full_plan(sc + 1, ceiling);
		/* A scenario that fails is reported and the next one runs. */
		for (i = 1; i < n; i++) {
			ok &= run_scen(s, o, &sc[i], &res[i]);
			res[i].above_ceiling = (double)res[i].target_kbps *
				1e3 > ceiling;
			print_row(&res[i]);
			if (strcmp(sc[i].group, "multi") == 0 && sc[i].nqp == 1)
				c1 = res[i].cyc_per_pkt;
			if (strcmp(sc[i].group, "multi") == 0 &&
			    sc[i].nqp == 10000)
				c10k = res[i].cyc_per_pkt;
		}
		if (c1 > 0 && c10k > 0)
			printf("cycles per frame, 10000 QPs vs 1: %.2fx\n",
			       c10k / c1);
	}
	if (o->json != NULL)
		json_write(o, res, n, ceiling, c1 > 0 ? c10k / c1 : 0);
	memset(&m, 0, sizeof(m));
	m.type = PP_QUIT;
	pp_send(s->fd, &m, NULL, 0);
	return ok ? 0 : 1;
}
