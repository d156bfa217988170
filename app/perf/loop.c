/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * --loop: both ends in one process, for small machines, over a config
 * with two ports (e.g. ringlink:NAME,side=0 and side=1): one busy thread
 * runs the client's loops and, at each of their progress points, one step
 * of the server's half of the phase (its receives, its pong, its raw
 * count). The engine keeps frames between the two devices on the wire
 * (UROCE_ENGINE_WIRE_XDEV), so the link is measured as it is.
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
		break;
	case PH_BW:
		ret = perf_bw_server_step(tw, &tw->twin_res);
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

/* Raw: count what is still on the link until it has been quiet a while. */
static void
raw_drain(struct perf *tw)
{
	uint64_t quiet = rte_rdtsc(), frames = tw->twin_res.frames, now;
	uint64_t drain = (uint64_t)(DRAIN_S * (double)tw->hz);

	do {
		perf_raw_bw_server_step(tw, &tw->twin_res);
		now = rte_rdtsc();
		if (tw->twin_res.frames != frames) {
			frames = tw->twin_res.frames;
			quiet = now;
		}
	} while (now - quiet < drain);
	tw->twin_res.cycles = tw->twin_last - tw->twin_first;
	tw->twin_res.secs = (double)tw->twin_res.cycles / (double)tw->hz;
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
	if (ret < 0)
		return ret;
	tw->twin_kind = ph->kind;
	switch (ph->kind) {
	case PH_RAW_BW: ret = perf_raw_bw_client(p, ph, res); break;
	case PH_BW: ret = perf_bw_client(p, ph, res); break;
	case PH_RAW_LAT: ret = perf_raw_lat(p, ph, res); break;
	default: ret = perf_lat_run(p, ph, res); break;
	}
	if (ph->kind == PH_RAW_BW)
		raw_drain(tw);
	if (ph->kind == PH_LAT)
		perf_lat_server_end(tw);
	tw->twin_kind = 0;
	*srv = tw->twin_res;
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
