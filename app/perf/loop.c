/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * --loop: both ends in one process, for small machines, over a config
 * with two ports (e.g. ringlink:NAME,side=0 and side=1): one busy thread
 * runs the client's loops and, at each of their progress points, one step
 * of the server's half of the phase (its receives, its pong, its raw
 * count; --bidir: its own sends too). The engine keeps frames between the
 * two devices on the wire (UROCE_ENGINE_WIRE_XDEV, also when the verbs
 * layer starts it), so the link is measured as it is. With --verbs the
 * stack runs on its engine lcore, which also runs the raw phases (it owns
 * both ports' queues).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include <uroce/uroce.h>

#include "perf_priv.h"

#define DRAIN_S		0.01	/* quiet time that ends a raw count */

void
perf_progress(struct perf *p)
{
	/* --verbs: ibv_poll_cq(), which every loop calls, runs the stack
	 * (inline progress) or the engine lcore does: a verbs program makes
	 * no other call, and a second iteration per loop would cost the
	 * inline mode what the program does not pay. */
	if (!p->o->verbs)
		uroce_poll();
	if (p->self_srv != NULL &&
	    perf_bw_server_step(p, p->self_srv) < 0)
		p->self_srv->errors++;
	if (p->twin != NULL)
		perf_twin_step(p->twin);
}

void
perf_twin_step(struct perf *tw)
{
	struct perf_lat_res *none = NULL;
	int ret = 0;

	switch (tw->twin_kind) {
	case PH_RAW_BW:
		perf_raw_bw_server_step(tw, &tw->twin_res);
		perf_raw_half_step(tw);		/* --bidir */
		break;
	case PH_BW:
		ret = perf_bw_server_step(tw, &tw->twin_res);
		perf_bw_half_step(tw);		/* --bidir */
		break;
	case PH_RAW_LAT:
		none = calloc(1, sizeof(*none));
		if (none != NULL)
			perf_raw_pong_step(tw, none);
		ret = none == NULL || none->errors ? -EIO : 0;
		free(none);
		break;
	case PH_LAT:
		none = calloc(1, sizeof(*none));
		ret = none == NULL ? -ENOMEM : perf_lat_server_step(tw, none);
		free(none);
		break;
	default:
		break;
	}
	if (ret < 0)
		tw->twin_res.errors++;
}

/* Raw: count what is still on the link until it has been quiet a while
 * (--bidir: the twin's half sent first, and both ends count). */
static void
raw_drain(struct perf *p)
{
	struct perf *tw = p->twin;
	uint64_t quiet = rte_rdtsc(), frames = UINT64_MAX, now, sum;
	uint64_t drain = (uint64_t)(DRAIN_S * (double)tw->hz);

	while (!perf_raw_half_done(tw)) {
		perf_twin_step(tw);
		perf_raw_bw_server_step(p, p->raw_rx);
	}
	do {
		perf_raw_bw_server_step(tw, &tw->twin_res);
		if (p->raw_rx != NULL)
			perf_raw_bw_server_step(p, p->raw_rx);
		now = rte_rdtsc();
		sum = tw->twin_res.frames +
			(p->raw_rx != NULL ? p->raw_rx->frames : 0);
		if (sum != frames) {
			frames = sum;
			quiet = now;
		}
	} while (now - quiet < drain);
	tw->twin_res.cycles = tw->twin_last - tw->twin_first;
	tw->twin_res.secs = (double)tw->twin_res.cycles / (double)tw->hz;
	if (p->raw_rx != NULL) {
		p->raw_rx->cycles = p->twin_last - p->twin_first;
		p->raw_rx->secs = (double)p->raw_rx->cycles / (double)p->hz;
	}
}

/* A raw phase, with the twin's half, where the backend lends the ports
 * (--verbs: the engine lcore, which serves both). */
struct loop_raw {
	struct perf *p;
	const struct perf_phase *ph;
	void *res;
};

static int
loop_raw_run(void *arg)
{
	struct loop_raw *c = arg;
	int ret;

	if (c->ph->kind == PH_RAW_LAT)
		return perf_raw_lat(c->p, c->ph, c->res);
	ret = perf_raw_bw_client(c->p, c->ph, c->res);
	raw_drain(c->p);
	return ret;
}

/*
 * --bidir: the twin sends its own half (bw.c, raw.c: stepped with its
 * server half), and the client serves it as a two-process client does:
 * its receives (self_srv), or its raw count (raw_rx), into bidir_rx.
 */
static int
bidir_begin(struct perf *p, const struct perf_phase *ph)
{
	int ret = perf_bidir_begin(p, ph);

	if (ret < 0 || !p->o->bidir)
		return ret;
	if (ph->kind == PH_RAW_BW)
		return perf_raw_half_open(p->twin, ph);
	if (ph->kind == PH_BW)
		return perf_bw_half_open(p->twin, ph);
	return 0;
}

/* The halves closed; srv (bw) gets what the twin's own half did. */
static int
bidir_end(struct perf *p, const struct perf_phase *ph, struct perf_bw_res *srv)
{
	struct perf *tw = p->twin;
	struct perf_bw_res half;
	int ret = 0;

	if (ph->kind == PH_BW && tw->bw_half != NULL) {
		ret = perf_bw_half_close(tw, &half);
		if (srv != NULL)
			*srv = half;
	}
	perf_raw_half_close(tw);
	p->self_srv = NULL;
	p->raw_rx = NULL;
	return ret;
}

int
perf_loop_phase(struct perf *p, const struct perf_phase *ph, void *res,
		struct perf_bw_res *srv, uint64_t *srv_lat_errors)
{
	struct perf *tw = p->twin;
	int ret = 0;

	memset(&tw->twin_res, 0, sizeof(tw->twin_res));
	tw->twin_kind = 0;
	if (ph->kind == PH_BW)
		ret = perf_bw_server_begin(tw);
	else if (ph->kind == PH_LAT)
		ret = perf_lat_server_begin(tw, ph);
	if (ret == 0)
		ret = bidir_begin(p, ph);
	if (ret < 0) {
		bidir_end(p, ph, NULL);
		return ret;
	}
	tw->twin_kind = ph->kind;
	switch (ph->kind) {
	case PH_RAW_BW:
	case PH_RAW_LAT: {
		struct loop_raw c = { .p = p, .ph = ph, .res = res };

		ret = p->ops->on_port(p, loop_raw_run, &c);
		break;
	}
	case PH_BW: ret = perf_bw_client(p, ph, res); break;
	default: ret = perf_lat_run(p, ph, res); break;
	}
	if (ph->kind == PH_LAT)
		perf_lat_server_end(tw);
	*srv = tw->twin_res;
	if (ph->kind == PH_BW && p->o->bidir) {
		/* The server's own half, as a two-process server reports. */
		int hret;

		while (ret == 0 && !perf_bw_half_done(tw)) {
			perf_progress(p);
			if (p->self_srv->errors != 0)
				ret = -EIO;
		}
		hret = bidir_end(p, ph, srv);
		srv->errors += tw->twin_res.errors;
		ret = ret != 0 ? ret : hret;
	} else {
		bidir_end(p, ph, NULL);
	}
	tw->twin_kind = 0;
	*srv_lat_errors = ph->kind == PH_LAT || ph->kind == PH_RAW_LAT ?
		tw->twin_res.errors : 0;
	if (ret == 0 && tw->twin_res.errors != 0) {
		fprintf(stderr, "uroce-perf: the server half failed the phase\n");
		ret = -EIO;
	}
	return ret;
}

/* Both ends' objects, their details handed over in memory, QPs to RTS. */
int
perf_loop_run(struct perf *c, struct perf *s)
{
	struct perf_hello h = {
		.wl = c->o->wl, .nqp = c->o->qps, .depth = c->o->depth,
		.max_size = c->o->max_size, .rate_kbps = c->o->rate_kbps,
		.srq_wr = perf_srq_wr(c->o),
	};
	uint32_t i;
	int ret;

	if (uroce_dev_count() < 2) {
		fprintf(stderr, "uroce-perf: --loop: %s has %u port; it needs two "
			"([port0] and [port1], e.g. ringlink:NAME,side=0 and "
			"side=1)\n", c->o->config, uroce_dev_count());
		return -EINVAL;
	}
	c->dev_idx = 0;
	s->dev_idx = 1;
	ret = c->ops->open_twin(s);
	if (ret < 0) {
		fprintf(stderr, "uroce-perf: --loop: cannot open the second "
			"device: %s\n", strerror(-ret));
		return ret;
	}
	ret = perf_setup(c, &h);
	if (ret == 0)
		ret = perf_setup(s, &h);
	if (ret < 0)
		return ret;
	c->peer = s->me;
	s->peer = c->me;
	for (i = 0; i < c->nqp; i++) {
		c->qps[i].rqpn = s->qps[i].qpn;
		c->qps[i].rpsn = s->qps[i].qpn & UROCE_PSN_MASK;
		s->qps[i].rqpn = c->qps[i].qpn;
		s->qps[i].rpsn = c->qps[i].qpn & UROCE_PSN_MASK;
	}
	ret = perf_connect_qps(c, &h);
	if (ret == 0)
		ret = perf_connect_qps(s, &h);
	if (ret < 0)
		return ret;
	c->twin = s;
	return c->o->interactive ? perf_interactive(c) : perf_client_rows(c);
}
