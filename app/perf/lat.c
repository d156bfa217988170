/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Latency on the transport, one message at a time, progress on this thread:
 *  - memory poll (WRITE, as ib_write_lat): each side writes size bytes into
 *    the other's target area and polls the last byte of its own for the
 *    sequence number; the client times the round trip and records half;
 *  - receive (SEND, WRITE with immediate, as ib_send_lat): the same with
 *    receive completions instead of memory;
 *  - completion (READ, atomics, as ib_read_lat): the client times each
 *    WR to its completion and records the whole time.
 * The server side runs until the client's next control message.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include <uroce/uroce.h>

#include "perf_priv.h"

#define WARMUP		8	/* round trips not recorded */
#define LAT_OWED_MAX	8	/* send completions left to reap, at most */

struct lat {
	struct perf *p;
	const struct perf_wl *wl;
	uint32_t size;
	uint64_t posted, completed;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	uint64_t stall;
};

static void
lat_init(struct lat *l, struct perf *p, uint32_t size)
{
	memset(l, 0, sizeof(*l));
	l->p = p;
	l->wl = perf_wls[p->o->wl];
	l->size = size;
	l->wr.sg_list = &l->sge;
	l->wl->fill(p, &l->wr, size, 0);
	if (l->wl->fixed_size == 0)
		l->sge.addr += p->area;		/* from the source area */
	if (size <= p->max_inline &&
	    l->wl->lat != PERF_LAT_COMPLETION)
		l->wr.send_flags = IBV_SEND_INLINE;
	l->stall = (uint64_t)(PERF_WAIT_S * (double)p->hz);
}

/* Post the one WR, signaled: one WR at a time never fills the CQ, and
 * nothing unreported is left in the SQ when the phase ends. */
static int
lat_post(struct lat *l)
{
	struct ibv_send_wr *bad;
	int ret;

	l->wr.send_flags |= IBV_SEND_SIGNALED;
	ret = l->p->ops->post_send(&l->p->qps[0], &l->wr, &bad);
	if (ret < 0)
		fprintf(stderr, "uroce-perf: post_send: %s\n", strerror(-ret));
	else
		l->posted++;
	return ret;
}

/* Drain the send CQ: 1 when a completion came, 0 none, < 0 an error. */
static int
lat_reap(struct lat *l, struct perf_lat_res *r)
{
	struct ibv_wc wc[16];
	int n, i;

	n = l->p->ops->poll_cq(l->p, false, 16, wc);
	for (i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "uroce-perf: completion: %s\n",
				perf_wc_status(wc[i].status));
			r->errors++;
			return -EIO;
		}
	if (n > 0)
		l->completed += (uint64_t)n;
	return n < 0 ? n : n > 0;
}

/* Whether the peer's next message is here: seq in the last byte of our
 * target area, or a receive completion (its receive posted again).
 * 1 yes, 0 not yet, < 0 error. */
static int
lat_arrived(struct lat *l, struct perf_lat_res *r, uint8_t seq)
{
	volatile uint8_t *in = l->p->buf + l->size - 1;
	struct ibv_wc wc;

	if (l->wl->lat == PERF_LAT_MEMPOLL)
		return *in == seq;
	if (l->wl->lat != PERF_LAT_RECV ||
	    l->p->ops->poll_cq(l->p, true, 1, &wc) != 1)
		return 0;
	if (wc.status != IBV_WC_SUCCESS) {
		r->errors++;
		return -EIO;
	}
	perf_recv_taken(l->p, 0);
	return perf_recvs_fill(l->p, 0, l->p->rx_depth) < 0 ? -EIO : 1;
}

/* Wait for the peer's next message (or, one-sided, our completion).
 * 1: it came; 0: the client's control message came first (server);
 * < 0: error or stall. The peer's message is looked for before our send
 * completions are reaped, so that reaping is not on the way to the next
 * post; they are reaped while nothing arrives, and first when a few are
 * owed (the SQ and the send CQ never fill). */
static int
lat_wait(struct lat *l, struct perf_lat_res *r, uint8_t seq, bool server)
{
	uint64_t since = rte_rdtsc(), loops = 0;
	int ret, got = 0;

	for (;;) {
		perf_progress(l->p);
		if (l->wl->lat != PERF_LAT_COMPLETION &&
		    l->posted - l->completed < LAT_OWED_MAX)
			got = lat_arrived(l, r, seq);
		if (got != 0)
			return got;
		ret = lat_reap(l, r);
		if (ret < 0)
			return ret;
		if (l->wl->lat == PERF_LAT_COMPLETION)
			got = ret > 0 && !server;
		if (got != 0)
			return got;
		if ((++loops & 1023) == 0) {
			if (server && perf_ctl_ready(l->p->fd))
				return 0;
			if (!server && rte_rdtsc() - since > l->stall) {
				fprintf(stderr, "uroce-perf: latency: no answer "
					"for %.0f s\n", PERF_WAIT_S);
				return -ETIMEDOUT;
			}
		}
	}
}

/* The receives a RECV ping-pong needs on either side. */
static int
lat_recvs(struct perf *p)
{
	return perf_recvs_fill(p, 0, p->rx_depth) < 0 ? -EIO : 0;
}

static int
lat_client(struct lat *l, const struct perf_phase *ph, struct perf_lat_res *r)
{
	uint8_t *out = l->p->buf + l->p->area + l->size - 1;
	uint64_t i, t0, t1, end, div, n = ph->iters + WARMUP;
	uint8_t seq;
	int ret;

	div = l->wl->lat == PERF_LAT_COMPLETION ? 1 : 2;
	end = rte_rdtsc() + (uint64_t)(ph->duration * (double)l->p->hz);
	for (i = 0; !perf_stop && (ph->iters != 0 ? i < n :
	     (i < WARMUP || rte_rdtsc() < end)); i++) {
		seq = (uint8_t)(i % 255 + 1);
		*out = seq;
		t0 = rte_rdtsc();
		ret = lat_post(l);
		if (ret == 0)
			ret = lat_wait(l, r, seq, false);
		if (ret < 0)
			return ret;
		t1 = rte_rdtsc();
		if (i >= WARMUP)
			perf_hist_add(&r->h, perf_cyc_ns(l->p, t1 - t0, div));
	}
	return 0;
}

static int
lat_server(struct lat *l, struct perf_lat_res *r)
{
	uint8_t *out = l->p->buf + l->p->area + l->size - 1;
	uint64_t i;
	uint8_t seq;
	int ret;

	for (i = 0;; i++) {
		seq = (uint8_t)(i % 255 + 1);
		ret = lat_wait(l, r, seq, true);
		if (ret <= 0)
			return ret;
		*out = seq;
		ret = lat_post(l);
		if (ret < 0)
			return ret;
	}
}

/* What is still in flight completes before the next phase. */
static int
lat_drain(struct lat *l, struct perf_lat_res *r)
{
	uint64_t since = rte_rdtsc();
	int ret;

	while (l->completed < l->posted) {
		perf_progress(l->p);
		ret = lat_reap(l, r);
		if (ret < 0)
			return ret;
		if (rte_rdtsc() - since > l->stall) {
			fprintf(stderr, "uroce-perf: latency: WRs left in flight\n");
			return -ETIMEDOUT;
		}
	}
	return 0;
}

int
perf_lat_run(struct perf *p, const struct perf_phase *ph,
	     struct perf_lat_res *r)
{
	struct lat l;
	int ret;

	perf_hist_reset(&r->h);
	r->errors = 0;
	lat_init(&l, p, ph->size);
	/* A fresh start: the last byte of both areas is not a sequence. */
	p->buf[ph->size - 1] = 0;
	p->buf[p->area + ph->size - 1] = 0;
	if (l.wl->lat == PERF_LAT_RECV && lat_recvs(p) < 0)
		return -EIO;
	if (p->o->server)
		ret = l.wl->lat == PERF_LAT_COMPLETION ?
			lat_wait(&l, r, 0, true) : lat_server(&l, r);
	else
		ret = lat_client(&l, ph, r);
	if (ret >= 0)
		ret = lat_drain(&l, r);
	return ret < 0 ? ret : 0;
}

/* ------------------------------------------------------------------------
 * The server half for --loop, one step at a time.
 */
struct lat_srv {
	struct lat l;
	uint64_t i;
};

int
perf_lat_server_begin(struct perf *p, const struct perf_phase *ph)
{
	struct lat_srv *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return -ENOMEM;
	lat_init(&s->l, p, ph->size);
	p->buf[ph->size - 1] = 0;
	p->buf[p->area + ph->size - 1] = 0;
	p->twin_lat = s;
	if (s->l.wl->lat == PERF_LAT_RECV && lat_recvs(p) < 0)
		return -EIO;
	return 0;
}

int
perf_lat_server_step(struct perf *p, struct perf_lat_res *r)
{
	struct lat_srv *s = p->twin_lat;
	uint8_t seq = (uint8_t)(s->i % 255 + 1);
	int ret;

	ret = lat_reap(&s->l, r);
	if (ret < 0 || s->l.wl->lat == PERF_LAT_COMPLETION)
		return ret < 0 ? ret : 0;
	ret = lat_arrived(&s->l, r, seq);
	if (ret <= 0)
		return ret;
	p->buf[p->area + s->l.size - 1] = seq;
	s->i++;
	return lat_post(&s->l);
}

void
perf_lat_server_end(struct perf *p)
{
	struct lat_srv *s = p->twin_lat;
	struct perf_lat_res r;

	if (s != NULL)
		lat_drain(&s->l, &r);
	free(s);
	p->twin_lat = NULL;
}
