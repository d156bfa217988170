/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Bandwidth and message rate on the transport, run to completion on this
 * thread (native progress): post, uroce_poll(), poll the CQ, again. Each
 * QP keeps up to depth WRs outstanding, posted in batches of `sig` with
 * only the last signaled (as perftest's cq_mod does); the QPs with room
 * for a batch wait their turn in a FIFO, at most VISITS batches per loop
 * so that 10,000 QPs do not starve the stack's own progress. A loop costs
 * what it posts and reaps, not a look at every QP: with the stack on the
 * same thread, a walk over the full QPs in every loop would take cycles
 * the engine needs (about a tenth of the core with 100 paced QPs).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include <uroce/uroce.h>

#include "perf_priv.h"

#define SIG_MAX		16
#define VISITS		64
#define WC_BURST	64

struct bw_client {
	struct perf *p;
	const struct perf_wl *wl;
	uint32_t sig;
	uint32_t *room;			/* FIFO of QPs with room for a batch */
	bool *queued;			/* QP index -> in room */
	uint32_t room_head, room_n;
	uint64_t posted, done, target;	/* target 0: until the deadline */
	uint64_t sig_out, sig_max;	/* signaled WRs outstanding, CQ room */
	uint64_t inflight;		/* cap on posted - done, 0: none */
	bool *failed;			/* QP index -> an error completion came */
	uint32_t failed_qps;
	uint64_t lost;			/* failed QPs' WRs never confirmed */
	struct ibv_send_wr wr[SIG_MAX];
	struct ibv_sge sge[SIG_MAX];
};

static void
wr_chain(struct bw_client *c, uint32_t size)
{
	uint32_t i;

	memset(c->wr, 0, sizeof(c->wr));
	for (i = 0; i < c->sig; i++) {
		c->wr[i].sg_list = &c->sge[i];
		c->wl->fill(c->p, &c->wr[i], size, 0);
		c->wr[i].next = i + 1 < c->sig ? &c->wr[i + 1] : NULL;
		if (size <= c->p->max_inline &&
		    (c->wl->opcode == IBV_WR_SEND ||
		     c->wl->opcode == IBV_WR_RDMA_WRITE ||
		     c->wl->opcode == IBV_WR_RDMA_WRITE_WITH_IMM))
			c->wr[i].send_flags = IBV_SEND_INLINE;
	}
	c->wr[c->sig - 1].send_flags |= IBV_SEND_SIGNALED;
}

/* One batch on QP qi: the last b WRs of the chain; wr_id says whose (on
 * every WR: a QP in error completes each, signaled or not) and, on the
 * signaled last, how many. */
static int
post_batch(struct bw_client *c, uint32_t qi, uint32_t b)
{
	struct ibv_send_wr *bad = NULL;
	uint32_t i;
	int ret;

	for (i = c->sig - b; i < c->sig - 1; i++)
		c->wr[i].wr_id = qi;
	c->wr[c->sig - 1].wr_id = ((uint64_t)b << 32) | qi;
	ret = c->p->ops->post_send(&c->p->qps[qi], &c->wr[c->sig - b], &bad);
	if (ret < 0) {
		fprintf(stderr, "uroce-perf: post_send on QP 0x%06x: %s\n",
			c->p->qps[qi].qpn, strerror(-ret));
		return ret;
	}
	c->p->qps[qi].outstanding += b;
	c->posted += b;
	c->sig_out++;
	return 0;
}

static void
room_push(struct bw_client *c, uint32_t qi)
{
	uint32_t n = c->p->nqp, i = c->room_head + c->room_n;

	c->room[i >= n ? i - n : i] = qi;
	c->room_n++;
	c->queued[qi] = true;
}

static uint32_t
room_pop(struct bw_client *c)
{
	uint32_t qi = c->room[c->room_head];

	c->room_head = c->room_head + 1 == c->p->nqp ? 0 : c->room_head + 1;
	c->room_n--;
	c->queued[qi] = false;
	return qi;
}

/* Whether QP qi takes another batch of sig (a shorter last one of a
 * target may fit where this does not: the QP comes back when one of its
 * batches completes). */
static bool
has_room(const struct bw_client *c, uint32_t qi)
{
	return c->p->qps[qi].outstanding + c->sig <= c->p->o->depth;
}

static int
room_init(struct bw_client *c)
{
	uint32_t qi;

	c->room = calloc(c->p->nqp, sizeof(*c->room));
	c->queued = calloc(c->p->nqp, sizeof(*c->queued));
	c->failed = calloc(c->p->nqp, sizeof(*c->failed));
	if (c->room == NULL || c->queued == NULL || c->failed == NULL)
		return -ENOMEM;
	for (qi = 0; qi < c->p->nqp; qi++)
		if (has_room(c, qi))
			room_push(c, qi);
	return 0;
}

/* One batch on each of the next QPs with room, round robin. */
static int
post_some(struct bw_client *c)
{
	uint32_t v, qi, b;
	int ret;

	for (v = 0; v < VISITS && c->room_n > 0; v++) {
		if (c->sig_out >= c->sig_max ||
		    (c->target != 0 && c->posted >= c->target))
			return 0;
		b = c->sig;
		if (c->target != 0)
			b = (uint32_t)RTE_MIN((uint64_t)b, c->target - c->posted);
		if (c->inflight != 0 && c->posted - c->done + b > c->inflight)
			return 0;
		qi = room_pop(c);
		ret = post_batch(c, qi, b);
		if (ret < 0)
			return ret;
		if (has_room(c, qi))
			room_push(c, qi);
	}
	return 0;
}

/*
 * An error completion: the QP is in the error state and completes each
 * WR it still holds, flushed (ibv_poll_cq(3)). At its first, what it had
 * outstanding is lost: WRs that left before the failing one may have
 * arrived, but none will be confirmed. The run then posts no more and
 * waits for every other QP's WRs (client_drained()), so that one failure
 * says how many QPs failed, not only which came first.
 */
static void
qp_failed(struct bw_client *c, const struct ibv_wc *wc)
{
	uint32_t qi = (uint32_t)wc->wr_id;

	if (qi >= c->p->nqp || c->failed[qi])
		return;
	if (c->failed_qps++ == 0)
		fprintf(stderr, "uroce-perf: completion on QP 0x%06x: %s\n",
			wc->qp_num, perf_wc_status(wc->status));
	c->failed[qi] = true;
	c->lost += c->p->qps[qi].outstanding;
	c->p->qps[qi].outstanding = 0;
}

/* Every WR posted has completed, or is lost with its QP. */
static bool
client_drained(const struct bw_client *c)
{
	return c->done + c->lost == c->posted;
}

/* A drained client's outcome. */
static int
client_status(const struct bw_client *c)
{
	return c->failed_qps > 0 ? -EIO : 0;
}

/* The completions polled (errors included), < 0: the CQ failed. */
static int
reap(struct bw_client *c, struct perf_bw_res *r)
{
	struct ibv_wc wc[WC_BURST];
	uint32_t cnt, qi;
	int n, i;

	n = c->p->ops->poll_cq(c->p, false, WC_BURST, wc);
	if (n < 0) {
		fprintf(stderr, "uroce-perf: send CQ overrun\n");
		return n;
	}
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			r->errors++;
			qp_failed(c, &wc[i]);
			continue;
		}
		cnt = (uint32_t)(wc[i].wr_id >> 32);
		qi = (uint32_t)wc[i].wr_id;
		c->p->qps[qi].outstanding -= cnt;
		c->done += cnt;
		c->sig_out--;
		if (!c->queued[qi] && has_room(c, qi))
			room_push(c, qi);
	}
	return n;
}

static int
client_init(struct bw_client *c, struct perf *p, const struct perf_phase *ph)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->p = p;
	c->wl = perf_wls[p->o->wl];
	c->sig = RTE_MIN(p->o->depth, (uint32_t)SIG_MAX);
	/* Pacing (pace.c): batches of half the depth keep each QP
	 * backlogged while a batch completes. */
	if (p->pace != NULL && p->o->depth > 1)
		c->sig = RTE_MIN(p->o->depth / 2, (uint32_t)SIG_MAX);
	c->sig_max = p->scq_size;
	c->target = ph->iters;
	c->inflight = RTE_MAX(p->o->inflight, c->sig);
	if (p->o->inflight == 0)
		c->inflight = 0;
	wr_chain(c, ph->size);
	ret = room_init(c);
	if (ret < 0)
		fprintf(stderr, "uroce-perf: %u QPs: %s\n", p->nqp,
			strerror(-ret));
	return ret;
}

static void
client_fini(struct bw_client *c)
{
	free(c->room);
	free(c->queued);
	free(c->failed);
	c->room = NULL;
	c->queued = NULL;
	c->failed = NULL;
}

/* Whether the phase posts more: not after a QP failed. */
static bool
client_posting(const struct bw_client *c, uint64_t now, uint64_t end)
{
	if (perf_stop || c->failed_qps > 0)
		return false;
	return c->target != 0 ? c->posted < c->target : now < end;
}

/* What a finished client half did (r->cycles from its first post to its
 * last completion). */
static void
client_result(struct bw_client *c, const struct perf_phase *ph,
	      uint64_t start, uint64_t last_done, struct perf_bw_res *r)
{
	struct perf *p = c->p;

	r->cycles = last_done - start;
	r->secs = (double)r->cycles / (double)p->hz;
	r->msgs = c->done;
	r->bytes = c->done * ph->size;
	r->frames = c->done * ((ph->size + p->mtu - 1) / p->mtu);
	r->failed_qps = c->failed_qps;
	if (c->failed_qps > 0)
		fprintf(stderr, "uroce-perf: %u of %u QPs failed; %" PRIu64
			" of %" PRIu64 " messages posted not completed\n",
			c->failed_qps, p->nqp, c->lost, c->posted);
}

int
perf_bw_client(struct perf *p, const struct perf_phase *ph,
	       struct perf_bw_res *r)
{
	struct bw_client c;
	struct perf_qp_ctr c0;
	uint64_t start, end, now, last_done, stall, loops = 0;
	struct perf_live live;
	double cpu0 = perf_thread_cpu();
	int ret = 0;

	memset(r, 0, sizeof(*r));
	ret = client_init(&c, p, ph);
	if (ret < 0)
		goto out;
	perf_qp_counters(p, &c0);
	start = now = rte_rdtsc();
	end = start + (uint64_t)(ph->duration * (double)p->hz);
	last_done = start;
	stall = (uint64_t)(PERF_WAIT_S * (double)p->hz);
	perf_live_start(p, &live, start);
	perf_pace_begin(p, ph->duration);
	for (;;) {
		bool posting = client_posting(&c, now, end);

		if (posting && (ret = post_some(&c)) < 0)
			break;
		perf_progress(p);
		ret = reap(&c, r);
		if (ret < 0)
			break;
		/* The clock only when something completed or now and then:
		 * rdtsc costs more than a loop in some VMs. */
		if (ret == 0 && (++loops & 63) != 0 &&
		    !(!posting && client_drained(&c)))
			continue;
		now = rte_rdtsc();
		if (ret > 0)
			last_done = now;
		else if (now - last_done > stall) {
			fprintf(stderr, "uroce-perf: no completion for %.0f s "
				"(%" PRIu64 " of %" PRIu64 " done)\n",
				PERF_WAIT_S, c.done, c.posted);
			ret = -ETIMEDOUT;
			break;
		}
		if (!posting && client_drained(&c)) {
			ret = client_status(&c);
			break;
		}
		perf_live_tick(p, &live, now, c.done, c.done * ph->size);
		perf_pace_tick(p, now);
	}
	client_result(&c, ph, start, last_done, r);
	r->cpu_cycles = (uint64_t)((perf_thread_cpu() - cpu0) * (double)p->hz);
	perf_qp_counters_since(p, &c0, &r->qc);
out:
	client_fini(&c);
	return ret;
}

/* ------------------------------------------------------------------------
 * --loop --bidir: the twin's own half, a step at a time from the client's
 * progress calls (loop.c), until it has sent what the phase asks and seen
 * it completed.
 */
struct perf_bw_half {
	struct bw_client c;
	struct perf_phase ph;
	struct perf_bw_res r;
	struct perf_qp_ctr c0;
	uint64_t start, end, now, last_done, steps;
	bool done;
	int err;
};

int
perf_bw_half_open(struct perf *tw, const struct perf_phase *ph)
{
	struct perf_bw_half *h = calloc(1, sizeof(*h));
	int ret;

	if (h == NULL)
		return -ENOMEM;
	ret = client_init(&h->c, tw, ph);
	if (ret < 0) {
		client_fini(&h->c);
		free(h);
		return ret;
	}
	h->ph = *ph;
	perf_qp_counters(tw, &h->c0);
	h->start = h->now = h->last_done = rte_rdtsc();
	h->end = h->start + (uint64_t)(ph->duration * (double)tw->hz);
	tw->bw_half = h;
	return 0;
}

void
perf_bw_half_step(struct perf *tw)
{
	struct perf_bw_half *h = tw->bw_half;
	struct bw_client *c;
	bool posting;
	int n;

	if (h == NULL || h->done)
		return;
	c = &h->c;
	/* The clock now and then (rdtsc costs more than a step here). */
	if ((++h->steps & 15) == 0)
		h->now = rte_rdtsc();
	posting = client_posting(c, h->now, h->end);
	if (posting && (h->err = post_some(c)) < 0) {
		h->done = true;
		return;
	}
	n = reap(c, &h->r);
	if (n < 0) {
		h->err = n;
		h->done = true;
		return;
	}
	if (n > 0)
		h->last_done = h->now = rte_rdtsc();
	else if (h->now - h->last_done > (uint64_t)(PERF_WAIT_S * (double)tw->hz)) {
		fprintf(stderr, "uroce-perf: the server half: no completion "
			"for %.0f s\n", PERF_WAIT_S);
		h->err = -ETIMEDOUT;
		h->done = true;
		return;
	}
	h->done = !posting && client_drained(c);
	if (h->done)
		h->err = client_status(c);
}

bool
perf_bw_half_done(const struct perf *tw)
{
	const struct perf_bw_half *h = tw->bw_half;

	return h == NULL || h->done;
}

int
perf_bw_half_close(struct perf *tw, struct perf_bw_res *r)
{
	struct perf_bw_half *h = tw->bw_half;
	int ret;

	memset(r, 0, sizeof(*r));
	if (h == NULL)
		return 0;
	r->errors = h->r.errors;
	client_result(&h->c, &h->ph, h->start, h->last_done, r);
	perf_qp_counters_since(tw, &h->c0, &r->qc);
	ret = h->err < 0 ? h->err : 0;
	client_fini(&h->c);
	free(h);
	tw->bw_half = NULL;
	return ret;
}

/* ------------------------------------------------------------------------
 * Server: progress, and receives kept posted when the workload needs them,
 * until the client's next control message.
 */
int
perf_bw_server_begin(struct perf *p)
{
	uint32_t qi;
	int ret;

	for (qi = 0; perf_wls[p->o->wl]->needs_recv && qi < p->nqp; qi++) {
		ret = perf_recvs_fill(p, qi, p->rx_depth);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Receive completions: count them and post the receives again. */
int
perf_bw_server_step(struct perf *p, struct perf_bw_res *r)
{
	struct ibv_wc wc[WC_BURST];
	uint32_t qi;
	int n, i;

	if (!perf_wls[p->o->wl]->needs_recv)
		return 0;
	/* Drain the CQ: one engine pass can deliver more messages than one
	 * poll takes, and receives not posted again run the QPs dry. */
	do {
		n = p->ops->poll_cq(p, true, WC_BURST, wc);
		if (n < 0)
			return n;
		for (i = 0; i < n; i++) {
			qi = (uint32_t)wc[i].wr_id;
			perf_recv_taken(p, qi);
			if (wc[i].status != IBV_WC_SUCCESS) {
				r->errors++;
				continue;
			}
			r->msgs++;
			r->bytes += wc[i].byte_len;
		}
		/* The receives again, a chain per QP (the QP's next ones
		 * find it full). */
		for (i = 0; i < n; i++)
			if (perf_recvs_fill(p, (uint32_t)wc[i].wr_id,
					    p->rx_depth) < 0)
				return -EIO;
	} while (n == WC_BURST);
	return 0;
}

/* The engine loop's gap cycles so far (lcore 0: the native loop, or
 * --verbs' engine lcore). */
static uint64_t
bw_gap_cycles(void)
{
	struct uroce_lcore_stats ls;

	memset(&ls, 0, sizeof(ls));
	uroce_engine_lcore_stats(0, &ls);
	return ls.gap_cycles;
}

int
perf_bw_server(struct perf *p, const struct perf_phase *ph,
	       struct perf_bw_res *r)
{
	uint64_t loops = 0, start = rte_rdtsc(), gap0 = bw_gap_cycles();
	struct perf_bw_res served;
	int ret;

	memset(r, 0, sizeof(*r));
	memset(&served, 0, sizeof(served));
	ret = perf_bw_server_begin(p);
	if (ret == 0 && p->o->bidir) {
		/* Our own half first, serving the client's meanwhile; what
		 * the result reports is our half. */
		p->self_srv = &served;
		ret = perf_bw_client(p, ph, r);
		if (ret < 0) {
			p->self_srv = NULL;
			return ret;
		}
		start = rte_rdtsc();
	}
	/* --verbs with nothing to receive (WRITE, READ, atomics): the engine
	 * lcore serves the peer, this thread has nothing to do but wait, as
	 * perftest's server does; spinning would take a core from it. */
	if (ret == 0 && p->o->verbs && !p->o->bidir &&
	    !perf_wls[p->o->wl]->needs_recv) {
		while (!perf_ctl_wait(p->fd, 100))
			;
		r->gap_cycles = bw_gap_cycles() - gap0;
		r->cycles = rte_rdtsc() - start;
		r->secs = (double)r->cycles / (double)p->hz;
		return 0;
	}
	while (ret == 0) {
		if (p->o->bidir) {
			perf_progress(p);
			ret = p->self_srv->errors ? -EIO : 0;
		} else {
			if (!p->o->verbs)	/* --verbs: poll_cq runs it */
				uroce_poll();
			ret = perf_bw_server_step(p, r);
		}
		if ((++loops & 1023) == 0 && perf_ctl_ready(p->fd))
			break;
	}
	r->gap_cycles = bw_gap_cycles() - gap0;
	if (p->o->bidir) {
		r->errors += p->self_srv->errors;
		p->self_srv = NULL;
		return ret;
	}
	r->cycles = rte_rdtsc() - start;
	r->secs = (double)r->cycles / (double)p->hz;
	return ret;
}
