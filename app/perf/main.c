/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * uroce-perf: the client runs a list of phases (for each row, --rounds
 * times: the raw ceiling, then the transport) and the server follows them
 * over the TCP control connection:
 *
 *	client			server
 *	hello (run params,
 *	  rounds a row)	   -->	objects from the params
 *			   <--	hello (its buffer, GID, MAC)
 *	QPNs		   -->
 *			   <--	QPNs		both bring their QPs to RTS
 *	phase (its round)  -->	prepare (receives)
 *			   <--	ready		both run the phase
 *	end		   -->	stop
 *			   <--	result (what the server counted)
 *	... quit	   -->
 *
 * Progress is native (no engine lcores): one busy thread per process,
 * pinned with --core; or, with --verbs, through the verbs library with the
 * stack on an engine lcore (verbs.c). Either side may use either backend.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include <uroce/uroce.h>

#include "perf_priv.h"

#define HELLO_MAGIC	0x75706632u	/* "upf2" */
#define MAX_ROWS	(2 * PERF_MAX_SIZES + 1)

enum msg_type {
	MSG_PHASE = 0x70680001, MSG_READY, MSG_END, MSG_RESULT,
};

struct perf_msg {
	uint32_t type;
	uint32_t status;		/* RESULT: 0 or the server's errno */
	struct perf_phase ph;
	struct perf_bw_res res;
	uint64_t lat_errors;
};

/* --core unset: the server takes the first CPU this process may use and
 * the client the second, so that the two busy threads do not share one;
 * with a single CPU nothing is pinned. */
static int
default_core(bool server)
{
	cpu_set_t set;
	int c, seen = 0;

	if (sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) < 2)
		return -1;
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set) && seen++ == (server ? 0 : 1))
			return c;
	return -1;
}

static int
pin(int core, bool server)
{
	cpu_set_t set;
	int ret;

	if (core == -2)
		core = default_core(server);
	if (core < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(core, &set);
	ret = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (ret != 0) {
		fprintf(stderr, "uroce-perf: --core %d: not a CPU this process "
			"may run on (%s)\n", core, strerror(ret));
		return -ret;
	}
	return 0;
}

static bool
expect(struct perf *p, struct perf_msg *m, uint32_t type, double wait_s)
{
	if (perf_ctl_recv(p->fd, m, sizeof(*m), wait_s) != 1 ||
	    m->type != type) {
		fprintf(stderr, "uroce-perf: control connection: the peer is "
			"gone or out of step\n");
		return false;
	}
	return true;
}

/* QPNs both ways (the client's first); each QP's first PSN is its QPN. */
static int
exchange_qpns(struct perf *p)
{
	uint32_t *mine = calloc(p->nqp, 4), *theirs = calloc(p->nqp, 4), i;
	size_t len = (size_t)p->nqp * 4;
	int ret = 0;

	if (mine == NULL || theirs == NULL)
		ret = -ENOMEM;
	for (i = 0; ret == 0 && i < p->nqp; i++)
		mine[i] = p->qps[i].qpn;
	if (ret == 0 && (!perf_ctl_send(p->fd, mine, len) ||
			 perf_ctl_recv(p->fd, theirs, len, PERF_WAIT_S) != 1))
		ret = -ECONNRESET;
	for (i = 0; ret == 0 && i < p->nqp; i++) {
		p->qps[i].rqpn = theirs[i];
		p->qps[i].rpsn = theirs[i] & UROCE_PSN_MASK;
	}
	free(mine);
	free(theirs);
	if (ret < 0)
		fprintf(stderr, "uroce-perf: QP exchange: %s\n", strerror(-ret));
	return ret;
}

/* A raw phase, where the backend lends the port (the engine lcore with
 * --verbs). The server says ready only once the port is its own: a ping
 * that the engine took instead would be lost. */
struct raw_call {
	struct perf *p;
	const struct perf_phase *ph;
	void *res;
	const struct perf_msg *ready;	/* server: send it first */
};

static int
raw_call_run(void *arg)
{
	struct raw_call *c = arg;

	if (c->ready != NULL &&
	    !perf_ctl_send(c->p->fd, c->ready, sizeof(*c->ready)))
		return -ECONNRESET;
	if (c->ph->kind == PH_RAW_LAT)
		return perf_raw_lat(c->p, c->ph, c->res);
	return c->p->o->server ? perf_raw_bw_server(c->p, c->ph, c->res) :
		perf_raw_bw_client(c->p, c->ph, c->res);
}

static int
raw_phase(struct perf *p, const struct perf_phase *ph, void *res,
	  const struct perf_msg *ready)
{
	struct raw_call c = { .p = p, .ph = ph, .res = res, .ready = ready };

	return p->ops->on_port(p, raw_call_run, &c);
}

/* ------------------------------------------------------------------------
 * Server.
 */
static int
server_phase(struct perf *p, struct perf_msg *m)
{
	struct perf_phase ph = m->ph;
	struct perf_lat_res *lat = calloc(1, sizeof(*lat));
	const struct perf_msg ready = { .type = MSG_READY };
	struct perf_msg out;
	bool raw = ph.kind == PH_RAW_BW || ph.kind == PH_RAW_LAT;
	int ret;

	if (lat == NULL || (!raw && !perf_ctl_send(p->fd, &ready, sizeof(ready)))) {
		free(lat);
		return -ECONNRESET;
	}
	memset(&out, 0, sizeof(out));
	switch (ph.kind) {
	case PH_RAW_BW: ret = raw_phase(p, &ph, &out.res, &ready); break;
	case PH_BW: ret = perf_bw_server(p, &ph, &out.res); break;
	case PH_RAW_LAT: ret = raw_phase(p, &ph, lat, &ready); break;
	case PH_LAT: ret = perf_lat_run(p, &ph, lat); break;
	default: ret = -EINVAL; break;
	}
	out.lat_errors = lat->errors;
	free(lat);
	if (!expect(p, m, MSG_END, PERF_WAIT_S))
		return -ECONNRESET;
	out.type = MSG_RESULT;
	out.status = (uint32_t)-ret;
	return perf_ctl_send(p->fd, &out, sizeof(out)) ? ret : -ECONNRESET;
}

static int
run_server(struct perf *p)
{
	struct perf_hello h;
	struct perf_msg m;
	int lfd, ret;

	lfd = perf_ctl_listen(p->o->tcp_port);
	if (lfd < 0) {
		fprintf(stderr, "uroce-perf: --port %u: %s\n", p->o->tcp_port,
			strerror(-lfd));
		return lfd;
	}
	printf("uroce-perf: server on TCP port %u, device %s (%s)\n",
	       p->o->tcp_port, uroce_dev_name(p->dev), p->ops->name);
	fflush(stdout);
	p->fd = perf_ctl_accept(lfd);
	close(lfd);
	if (p->fd < 0 || perf_ctl_recv(p->fd, &h, sizeof(h), PERF_WAIT_S) != 1 ||
	    h.magic != HELLO_MAGIC || h.wl >= perf_nwls || h.nqp == 0 ||
	    h.nqp > PERF_MAX_QPS || h.depth == 0 || h.max_size == 0 ||
	    h.rounds == 0 || h.rounds > PERF_MAX_ROUNDS) {
		fprintf(stderr, "uroce-perf: no valid hello from the client\n");
		return -EPROTO;
	}
	/* The client's parameters are the run's. */
	p->o->wl = h.wl;
	p->o->depth = h.depth;
	p->o->qps = h.nqp;
	p->o->bidir = h.bidir != 0;
	p->o->srq = h.srq_wr != 0;
	p->o->rounds = h.rounds;
	p->peer = h.info;
	ret = perf_setup(p, &h);
	if (ret < 0)
		return ret;
	h.info = p->me;
	if (!perf_ctl_send(p->fd, &h, sizeof(h)))
		return -ECONNRESET;
	ret = exchange_qpns(p);
	if (ret == 0)
		ret = perf_connect_qps(p, &h);
	while (ret == 0) {
		if (perf_ctl_recv(p->fd, &m, sizeof(m), 3600) != 1)
			return -ECONNRESET;
		if (m.type != MSG_PHASE)
			return -EPROTO;
		if (m.ph.kind == PH_QUIT)
			break;
		if (m.ph.round >= p->o->rounds)
			return -EPROTO;
		ret = server_phase(p, &m);
	}
	return ret;
}

/* ------------------------------------------------------------------------
 * Client.
 */

/* --bidir: the client serves the server's half too (receives; the raw
 * frames it sends, counted in bidir_rx with their window). */
int
perf_bidir_begin(struct perf *p, const struct perf_phase *ph)
{
	memset(&p->bidir_rx, 0, sizeof(p->bidir_rx));
	if (!p->o->bidir)
		return 0;
	if (ph->kind == PH_RAW_BW) {
		p->twin_first = p->twin_last = 0;
		p->raw_rx = &p->bidir_rx;
	} else if (ph->kind == PH_BW) {
		p->self_srv = &p->bidir_rx;
		return perf_bw_server_begin(p);
	}
	return 0;
}

/* Until the server's result comes (at most wait_s): keep serving its
 * half. */
static void
bidir_wait(struct perf *p, const struct perf_phase *ph, double wait_s)
{
	double end = perf_now() + wait_s;
	uint64_t loops = 0;

	if (p->raw_rx == NULL && p->self_srv == NULL)
		return;
	while ((++loops & 255) != 0 ||
	       (!perf_ctl_ready(p->fd) && perf_now() < end)) {
		if (ph->kind == PH_RAW_BW)
			perf_raw_bw_server_step(p, p->raw_rx);
		else
			perf_progress(p);
	}
	if (ph->kind == PH_RAW_BW) {
		p->bidir_rx.cycles = p->twin_last - p->twin_first;
		p->bidir_rx.secs = (double)p->bidir_rx.cycles / (double)p->hz;
	}
	p->raw_rx = NULL;
	p->self_srv = NULL;
}

/* One phase on both sides; *srv gets what the server counted. */
static int
client_phase(struct perf *p, const struct perf_phase *ph, void *res,
	     struct perf_msg *srv)
{
	struct perf_msg m = { .type = MSG_PHASE, .ph = *ph };
	int ret;

	memset(srv, 0, sizeof(*srv));
	if (p->twin != NULL)
		return perf_loop_phase(p, ph, res, &srv->res, &srv->lat_errors);
	if (!perf_ctl_send(p->fd, &m, sizeof(m)) ||
	    !expect(p, &m, MSG_READY, PERF_WAIT_S))
		return -ECONNRESET;
	ret = perf_bidir_begin(p, ph);
	switch (ph->kind) {
	case PH_RAW_BW: ret = ret ? ret : raw_phase(p, ph, res, NULL); break;
	case PH_BW: ret = ret ? ret : perf_bw_client(p, ph, res); break;
	default: ret = ph->kind == PH_LAT ? perf_lat_run(p, ph, res) :
			raw_phase(p, ph, res, NULL); break;
	}
	memset(&m, 0, sizeof(m));
	m.type = MSG_END;
	if (!perf_ctl_send(p->fd, &m, sizeof(m)))
		return -ECONNRESET;
	/* A live server answers the end once its half is done; after a
	 * failed phase, the server may be why: wait less. */
	bidir_wait(p, ph, ret < 0 ? PERF_FAIL_WAIT_S : PERF_WAIT_S);
	if (!expect(p, srv, MSG_RESULT,
		    ret < 0 ? PERF_FAIL_WAIT_S : PERF_WAIT_S + 5)) {
		/* No result (the server gone mid-phase): none counted. */
		memset(srv, 0, sizeof(*srv));
		return -ECONNRESET;
	}
	if (ret == 0 && srv->status != 0) {
		fprintf(stderr, "uroce-perf: the server failed the phase: %s\n",
			strerror((int)srv->status));
		ret = -(int)srv->status;
	}
	return ret;
}

static void
say(const struct perf *p, const char *what, uint32_t size, uint32_t round)
{
	if (p->o->quiet)
		return;
	if (p->o->rounds > 1)
		printf("%s, %u B, round %u/%u:\n", what, size, round + 1,
		       p->o->rounds);
	else
		printf("%s, %u B:\n", what, size);
	fflush(stdout);
}

/* The figure a bw or rate round is judged by. */
static double
bw_fig(const struct perf_row *w, const struct perf_bw_res *r)
{
	return w->mode == PERF_MODE_RATE ? perf_mps(r) : perf_gbps(r);
}

/* One round of a bw or rate row: the raw ceiling, then the transport. */
static int
bw_round(struct perf *p, struct perf_row *w, uint32_t round,
	 struct perf_bw_res *raw, struct perf_bw_res *tp)
{
	uint32_t fpm = (w->size + p->mtu - 1) / p->mtu;	/* frames a message */
	struct perf_phase ph = { .round = round,
				 .duration = p->o->duration / p->o->rounds };
	struct perf_msg srv;
	int ret;

	if (!p->o->no_raw) {
		ph.kind = PH_RAW_BW;
		ph.size = w->frame_len;
		ph.iters = p->o->iters * fpm;
		say(p, "raw", ph.size, round);
		ret = client_phase(p, &ph, raw, &srv);
		if (ret < 0)
			return ret;
		/* The ceiling is what arrived, over the receiver's window
		 * (--bidir: both receivers, the longer window). */
		raw->frames = srv.res.frames + p->bidir_rx.frames;
		raw->secs = RTE_MAX(srv.res.secs, p->bidir_rx.secs);
		raw->bytes = srv.res.frames * perf_frame_payload(p, w->size);
		w->raw_fig[w->nraw++] = bw_fig(w, raw);
	}
	if (p->o->raw_only)
		return 0;
	ph.kind = PH_BW;
	ph.size = w->size;
	ph.iters = p->o->iters;
	say(p, perf_wls[p->o->wl]->name, ph.size, round);
	ret = client_phase(p, &ph, tp, &srv);
	perf_pace_peer(p, &srv.res);
	tp->errors += srv.res.errors + p->bidir_rx.errors;
	tp->failed_qps += srv.res.failed_qps;
	if (p->o->bidir) {	/* the server's half is in its result */
		tp->msgs += srv.res.msgs;
		tp->bytes += srv.res.bytes;
		tp->frames += srv.res.frames;
		tp->qc.retransmits += srv.res.qc.retransmits;
		tp->secs = RTE_MAX(tp->secs, srv.res.secs);
	}
	if (ret == 0 || tp->msgs != 0 || tp->errors != 0)
		w->tp_fig[w->ntp++] = bw_fig(w, tp);
	return ret;
}

/* The row's figures: its median rounds, the trouble of every round. */
static void
bw_row_sum(struct perf *p, struct perf_row *w, const struct perf_bw_res *raw,
	   const struct perf_bw_res *tp)
{
	unsigned int i;

	if (w->nraw > 0)
		w->raw = raw[perf_median_round(w->raw_fig, w->nraw)];
	w->has_raw = w->nraw > 0;
	w->moved = perf_row_moved(w, p->o->moved);
	if (w->ntp == 0)
		return;
	w->tp = tp[perf_median_round(w->tp_fig, w->ntp)];
	w->has_tp = true;
	memset(&w->tp.qc, 0, sizeof(w->tp.qc));
	w->tp.errors = w->tp.failed_qps = 0;
	for (i = 0; i < w->ntp; i++) {
		w->tp.errors += tp[i].errors;
		w->tp.failed_qps += tp[i].failed_qps;
		w->tp.qc.retransmits += tp[i].qc.retransmits;
		w->tp.qc.timeouts += tp[i].qc.timeouts;
		w->tp.qc.late_timeouts += tp[i].qc.late_timeouts;
	}
}

/* A bw or rate row: rounds of the raw ceiling, then the transport. The
 * ceiling is measured again for each row, even for a frame length an
 * earlier row had, and in every round: right before its transport phase,
 * it sees the same machine (other load, frequency) as the figure it
 * judges. */
static int
client_bw_row(struct perf *p, struct perf_row *w)
{
	struct perf_bw_res *raw, *tp;
	uint32_t r;
	int ret = 0;

	w->frame_len = perf_frame_len(p, w->size);
	raw = calloc(p->o->rounds, sizeof(*raw));
	tp = calloc(p->o->rounds, sizeof(*tp));
	if (raw == NULL || tp == NULL)
		ret = -ENOMEM;
	for (r = 0; ret == 0 && r < p->o->rounds && !perf_stop; r++)
		ret = bw_round(p, w, r, &raw[w->nraw], &tp[w->ntp]);
	if (raw != NULL && tp != NULL)
		bw_row_sum(p, w, raw, tp);
	free(raw);
	free(tp);
	return ret;
}

/* One round of a latency row: the raw ping-pong, then the transport's. */
static int
lat_round(struct perf *p, struct perf_row *w, uint32_t round,
	  struct perf_lat_res *raw, struct perf_lat_res *tp)
{
	struct perf_phase ph = { .round = round, .iters = p->o->iters,
				 .duration = p->o->duration / p->o->rounds };
	struct perf_msg srv;
	int ret;

	if (!p->o->no_raw) {
		ph.kind = PH_RAW_LAT;
		ph.size = w->frame_len;
		say(p, "raw ping-pong", ph.size, round);
		ret = client_phase(p, &ph, raw, &srv);
		if (ret < 0)
			return ret;
		w->raw_fig[w->nraw++] = (double)perf_hist_pct(&raw->h, 50);
	}
	if (p->o->raw_only)
		return 0;
	ph.kind = PH_LAT;
	ph.size = w->size;
	say(p, "latency", ph.size, round);
	ret = client_phase(p, &ph, tp, &srv);
	tp->errors += srv.lat_errors;
	w->tp_fig[w->ntp++] = (double)perf_hist_pct(&tp->h, 50);
	return ret;
}

/* The median round of n (by p50) into a new copy; *dst NULL if none. */
static int
lat_median(struct perf_lat_res **dst, const struct perf_lat_res *r,
	   const double *fig, unsigned int n)
{
	uint64_t errors = 0;
	unsigned int i;

	*dst = NULL;
	if (n == 0)
		return 0;
	*dst = malloc(sizeof(**dst));
	if (*dst == NULL)
		return -ENOMEM;
	**dst = r[perf_median_round(fig, n)];
	for (i = 0; i < n; i++)
		errors += r[i].errors;
	(*dst)->errors = errors;
	return 0;
}

static int
client_lat_row(struct perf *p, struct perf_row *w)
{
	struct perf_lat_res *raw, *tp;
	uint32_t r;
	int ret = 0, ret2;

	w->frame_len = perf_frame_len(p, w->size);
	raw = calloc(p->o->rounds, sizeof(*raw));
	tp = calloc(p->o->rounds, sizeof(*tp));
	if (raw == NULL || tp == NULL)
		ret = -ENOMEM;
	for (r = 0; ret == 0 && r < p->o->rounds && !perf_stop; r++)
		ret = lat_round(p, w, r, &raw[w->nraw], &tp[w->ntp]);
	if (raw != NULL && tp != NULL) {
		ret2 = lat_median(&w->rlat, raw, w->raw_fig, w->nraw);
		if (ret2 == 0)
			ret2 = lat_median(&w->tlat, tp, w->tp_fig, w->ntp);
		ret = ret ? ret : ret2;
	}
	w->has_raw = w->rlat != NULL;
	w->has_tp = w->tlat != NULL;
	w->moved = perf_row_moved(w, p->o->moved);
	free(raw);
	free(tp);
	return ret;
}

/* The rows in order: bw sizes, rate sizes, latency. */
static unsigned int
rows_plan(const struct perf_opts *o, struct perf_row *rows)
{
	static const enum perf_mode order[] = { PERF_MODE_BW, PERF_MODE_RATE };
	unsigned int n = 0, i, k;

	for (k = 0; k < 2; k++)
		for (i = 0; (o->modes & order[k]) && i < o->nsizes; i++) {
			rows[n].mode = order[k];
			rows[n++].size = o->sizes[i];
		}
	if (o->modes & PERF_MODE_LAT) {
		rows[n].mode = PERF_MODE_LAT;
		rows[n++].size = o->lat_size;
	}
	return n;
}

static int
client_run_rows(struct perf *p, struct perf_row *rows, unsigned int n)
{
	struct perf_msg m = { .type = MSG_PHASE, .ph = { .kind = PH_QUIT } };
	unsigned int i;
	int ret = 0;

	for (i = 0; i < n && ret == 0 && !perf_stop; i++)
		ret = rows[i].mode == PERF_MODE_LAT ?
			client_lat_row(p, &rows[i]) :
			client_bw_row(p, &rows[i]);
	if (p->twin == NULL && !p->o->interactive)
		perf_ctl_send(p->fd, &m, sizeof(m));
	return ret;
}

/* The server's wait ends: nothing more to run (-i sends it at quit). */
static void
client_quit(struct perf *p)
{
	struct perf_msg m = { .type = MSG_PHASE, .ph = { .kind = PH_QUIT } };

	if (p->twin == NULL && p->fd >= 0)
		perf_ctl_send(p->fd, &m, sizeof(m));
}

static int
run_client(struct perf *p)
{
	struct perf_hello h = {
		.magic = HELLO_MAGIC, .wl = p->o->wl, .nqp = p->o->qps,
		.depth = p->o->depth, .max_size = p->o->max_size,
		.rate_kbps = p->o->rate_kbps, .bidir = p->o->bidir,
		.srq_wr = perf_srq_wr(p->o), .rounds = p->o->rounds,
	};
	int ret;

	p->fd = perf_ctl_connect(p->o->connect, p->o->tcp_port);
	if (p->fd < 0) {
		fprintf(stderr, "uroce-perf: --connect %s, port %u: %s\n",
			p->o->connect, p->o->tcp_port, strerror(-p->fd));
		return p->fd;
	}
	ret = perf_setup(p, &h);
	if (ret < 0)
		return ret;
	h.info = p->me;
	if (!perf_ctl_send(p->fd, &h, sizeof(h)) ||
	    perf_ctl_recv(p->fd, &h, sizeof(h), PERF_WAIT_S) != 1 ||
	    h.magic != HELLO_MAGIC) {
		fprintf(stderr, "uroce-perf: no hello from the server\n");
		return -EPROTO;
	}
	p->peer = h.info;
	ret = exchange_qpns(p);
	if (ret == 0)
		ret = perf_connect_qps(p, &h);
	if (ret == 0)
		ret = perf_pace_setup(p);
	if (ret < 0)
		return ret;
	if (p->o->interactive) {
		ret = perf_interactive(p);
		client_quit(p);
		return ret;
	}
	return perf_client_rows(p);
}

/* The client's rows, the table, the JSON and the plot. */
int
perf_client_rows(struct perf *p)
{
	struct perf_row rows[MAX_ROWS];
	unsigned int n, i;
	int ret;

	memset(rows, 0, sizeof(rows));
	n = rows_plan(p->o, rows);
	ret = client_run_rows(p, rows, n);
	perf_report_table(p, rows, n, stdout);
	perf_pace_report(p, stdout);
	if (p->o->json != NULL && perf_report_json(p, rows, n, p->o->json) < 0)
		ret = ret ? ret : -EIO;
	if (p->o->plot != NULL && perf_plot(p, rows, n, p->o->plot) < 0)
		ret = ret ? ret : -EIO;
	for (i = 0; i < n; i++) {
		free(rows[i].rlat);
		free(rows[i].tlat);
	}
	perf_pace_free(p);
	return ret;
}

int
main(int argc, char **argv)
{
	struct perf_opts o, so;
	struct perf p, s;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = perf_opts_parse(argc, argv, &o);
	if (ret != 0)
		return ret > 0 ? 0 : PERF_EXIT_USAGE;
	memset(&p, 0, sizeof(p));
	p.o = &o;
	p.fd = -1;
	p.ops = o.verbs ? &perf_verbs_ops : &perf_native_ops;
	/* --verbs: the engine lcore floats over the process's CPUs and only
	 * this thread is pinned, after the engine starts (EAL takes its CPU
	 * set from this thread's affinity). */
	if (!o.verbs && pin(o.core, o.server) < 0)
		return PERF_EXIT_USAGE;
	if (p.ops->start(&p, o.config) < 0)
		return 1;
	if (o.verbs && pin(o.core, o.server) < 0) {
		p.ops->stop(&p);
		return PERF_EXIT_USAGE;
	}
	p.hz = rte_get_tsc_hz();
	if (o.loop) {
		so = o;
		so.server = true;
		memset(&s, 0, sizeof(s));
		s.o = &so;
		s.ops = p.ops;
		s.fd = -1;
		s.hz = p.hz;
		ret = perf_loop_run(&p, &s);
		p.twin = NULL;
		perf_teardown(&s);
		p.ops->close_twin(&s);
	} else {
		ret = o.server ? run_server(&p) : run_client(&p);
	}
	/* The server closes its ports first and the control connection
	 * after; the client waits for that before closing its own, so that
	 * the two memif ends never tear down at the same time. */
	if (p.fd >= 0 && !o.server) {
		uint8_t b;

		perf_ctl_recv(p.fd, &b, 1, 5.0);
	}
	perf_teardown(&p);
	p.ops->stop(&p);
	if (p.fd >= 0)
		close(p.fd);
	return ret < 0 ? 1 : 0;
}
