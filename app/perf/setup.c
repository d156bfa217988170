/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The device objects of a run: one PD, one registered buffer, a send CQ
 * and a receive CQ shared by every QP, and the RC QPs brought to RTS with
 * the peer's details (ibv_modify_qp(3) masks), made by the backend
 * (native.c, verbs.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "perf_priv.h"
#include "uroce_stats.h"

#define PERF_INLINE	64
#define PERF_RD_ATOM	16	/* READs / atomics in flight, as perftest */

static int
fail(const char *what, int ret)
{
	fprintf(stderr, "uroce-perf: %s: %s\n", what, strerror(-ret));
	return ret;
}

static int
wait_link(struct perf *p)
{
	double end = perf_now() + PERF_WAIT_S;

	while (!uroce_port_link_up(p->port)) {
		if (perf_now() > end) {
			fprintf(stderr, "uroce-perf: %s: link down after %.0f s "
				"(is the peer running?)\n",
				uroce_dev_name(p->dev), PERF_WAIT_S);
			return -ENOTCONN;
		}
		usleep(10 * 1000);
	}
	return 0;
}

/* Buffer, MR and CQs: what does not depend on the QP count. */
static int
base_create(struct perf *p, uint32_t max_size, uint32_t cqe_s, uint32_t cqe_r)
{
	unsigned int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct uroce_dev_caps caps;
	int ret;

	uroce_dev_caps(p->dev, &caps);
	p->area = RTE_ALIGN_CEIL(max_size, 4096u);
	p->buf_len = 2 * (size_t)p->area + 4096;
	p->buf = aligned_alloc(4096, p->buf_len);
	if (p->buf == NULL)
		return fail("buffer", -ENOMEM);
	memset(p->buf, 0, p->buf_len);
	ret = p->ops->pd_mr(p, access);
	if (ret < 0)
		return fail("PD and memory region", ret);
	ret = p->ops->cqs(p, RTE_MIN(cqe_s, caps.max_cqe),
			  RTE_MIN(cqe_r, caps.max_cqe));
	if (ret < 0)
		return fail("CQ", ret);
	return 0;
}

/* --srq: one SRQ for every QP's receives, as many as can be in flight
 * (the hello's srq_wr), within the device's limit; made by the backend. */
static int
srq_create(struct perf *p, const struct perf_hello *h, const struct perf_wl *wl)
{
	uint32_t max_wr = RTE_MIN(h->srq_wr, uroce_dev_env(p->dev)->max_srq_wr);
	int ret;

	if (h->srq_wr == 0 || !wl->needs_recv)
		return 0;
	ret = p->ops->srq_create(p, max_wr);
	if (ret < 0)
		return fail("SRQ", ret);
	p->srq_wr = max_wr;
	return 0;
}

/* Everything of one side, from the run's parameters (the client's
 * options, which the server gets in the hello). */
int
perf_setup(struct perf *p, const struct perf_hello *h)
{
	const struct perf_wl *wl = perf_wls[h->wl];
	const struct uroce_qp_env *env;
	struct ibv_qp_init_attr init;
	uint32_t i;
	uint64_t cqe_s, cqe_r;
	int ret;

	p->dev = uroce_dev_get(p->dev_idx);
	if (p->dev == NULL)
		return fail("device", -ENODEV);
	p->port = uroce_dev_port(p->dev);
	env = uroce_dev_env(p->dev);
	ret = wait_link(p);
	if (ret < 0)
		return ret;
	/* Bandwidth runs sign one WR in sig, but a QP in error completes
	 * every WR it holds (flushed): room for all of them. */
	cqe_s = (uint64_t)h->nqp * h->depth + 64;
	p->rx_depth = (uint32_t)RTE_MIN((uint64_t)h->depth * PERF_RX_DEPTH,
					env->max_qp_wr);
	cqe_r = wl->needs_recv ? (uint64_t)h->nqp * p->rx_depth + 64 : 64;
	ret = base_create(p, h->max_size, (uint32_t)RTE_MIN(cqe_s, UINT32_MAX),
			  (uint32_t)RTE_MIN(cqe_r, UINT32_MAX));
	if (ret < 0)
		return ret;
	p->qps = calloc(h->nqp, sizeof(*p->qps));
	if (p->qps == NULL)
		return fail("QPs", -ENOMEM);
	ret = srq_create(p, h, wl);
	if (ret < 0)
		return ret;
	memset(&init, 0, sizeof(init));
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = h->depth;
	init.cap.max_recv_wr = wl->needs_recv ? p->rx_depth : 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	init.cap.max_inline_data = RTE_MIN((uint32_t)PERF_INLINE, env->max_inline);
	for (i = 0; i < h->nqp; i++) {
		ret = p->ops->qp_create(p, &p->qps[i], &init);
		if (ret < 0)
			return fail("QP create", ret);
		p->nqp = i + 1;
	}
	memset(&p->me, 0, sizeof(p->me));
	p->me.active_mtu = env->lim.active_mtu;
	p->me.rkey = p->rkey;
	p->me.addr = (uintptr_t)p->buf;
	memcpy(p->me.gid, env->gid[0].raw, 16);
	memcpy(p->me.mac, env->mac, 6);
	return 0;
}

static void
av_to_peer(const struct perf *p, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = 1;
	ah->grh.sgid_index = 0;
	ah->grh.hop_limit = 64;
	memcpy(ah->grh.dgid.raw, p->peer.gid, 16);
}

/* RESET -> INIT -> RTR -> RTS. */
static int
connect_one(struct perf *p, struct perf_qp *q)
{
	const struct uroce_qp_limits *lim = &uroce_dev_env(p->dev)->lim;
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_ATOMIC;
	ret = p->ops->qp_modify(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret < 0)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = p->path_mtu;
	a.dest_qp_num = q->rqpn;
	a.rq_psn = q->rpsn;
	a.max_dest_rd_atomic = (uint8_t)RTE_MIN((uint32_t)PERF_RD_ATOM,
						lim->max_qp_rd_atom);
	a.min_rnr_timer = 1;	/* 0.01 ms (IBTA 9.7.5.2.8): short RNR waits */
	av_to_peer(p, &a.ah_attr);
	ret = p->ops->qp_modify(q, &a, IBV_QP_STATE | IBV_QP_AV |
				IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER);
	if (ret < 0)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = q->qpn & UROCE_PSN_MASK;	/* what the peer was told */
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = (uint8_t)RTE_MIN((uint32_t)PERF_RD_ATOM,
					   lim->max_qp_init_rd_atom);
	return p->ops->qp_modify(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
				 IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* --rate: ibv_modify_qp(IBV_QP_RATE_LIMIT) in RTS. A stack without pacing
 * refuses it: said once, and the run goes on unpaced. */
static void
rate_limit(struct perf *p, struct perf_qp *q, uint32_t kbps)
{
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.rate_limit = kbps;
	ret = p->ops->qp_modify(q, &a, IBV_QP_STATE | IBV_QP_RATE_LIMIT);
	if (ret < 0 && !p->rate_warned) {
		fprintf(stderr, "uroce-perf: --rate %u: the QP refused the rate "
			"limit (%s); running unpaced\n", kbps, strerror(-ret));
		p->rate_warned = true;
	}
}

int
perf_connect_qps(struct perf *p, const struct perf_hello *h)
{
	uint32_t i;
	int ret;

	p->path_mtu = RTE_MIN(uroce_dev_env(p->dev)->lim.active_mtu,
			      (enum ibv_mtu)p->peer.active_mtu);
	p->mtu = uroce_mtu_bytes(p->path_mtu);
	for (i = 0; i < p->nqp; i++) {
		ret = connect_one(p, &p->qps[i]);
		if (ret < 0)
			return fail("QP connect", ret);
		if (h->rate_kbps != 0)
			rate_limit(p, &p->qps[i], h->rate_kbps);
	}
	return 0;
}

void
perf_teardown(struct perf *p)
{
	if (p->ops != NULL)
		p->ops->close(p);
	p->srq_wr = 0;
	p->srq_recvs = 0;
	free(p->qps);
	free(p->buf);
	p->qps = NULL;
	p->buf = NULL;
	p->nqp = 0;
}

/* ------------------------------------------------------------------------
 * Receives.
 */
static uint32_t *
recv_count(struct perf *p, uint32_t qi)
{
	return p->srq_wr != 0 ? &p->srq_recvs : &p->qps[qi].recvs;
}

/* Receives up to want on QP qi (or the SRQ), posted as chains of up to
 * RECV_CHAIN: one post call (one lock) for a whole CQ poll's worth. */
#define RECV_CHAIN	32

int
perf_recvs_fill(struct perf *p, uint32_t qi, uint32_t want)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->buf, .length = p->area,
			       .lkey = p->lkey };
	struct ibv_recv_wr wr[RECV_CHAIN], *bad;
	uint32_t *n = recv_count(p, qi), k, i;
	int ret;

	if (p->srq_wr != 0)
		want = p->srq_wr;
	while (*n < want) {
		k = RTE_MIN(want - *n, (uint32_t)RECV_CHAIN);
		for (i = 0; i < k; i++)
			wr[i] = (struct ibv_recv_wr){ .wr_id = qi,
				.next = i + 1 < k ? &wr[i + 1] : NULL,
				.sg_list = &sge, .num_sge = 1 };
		bad = NULL;
		ret = p->srq_wr != 0 ? p->ops->post_srq_recv(p, wr, &bad) :
		      p->ops->post_recv(&p->qps[qi], wr, &bad);
		if (ret < 0) {
			/* The ones before bad were posted. */
			*n += bad != NULL ? (uint32_t)(bad - wr) : 0;
			fprintf(stderr, "uroce-perf: post_recv: %s\n",
				strerror(-ret));
			return ret;
		}
		*n += k;
	}
	return 0;
}

void
perf_recv_taken(struct perf *p, uint32_t qi)
{
	(*recv_count(p, qi))--;
}

uint64_t
perf_recvs_total(const struct perf *p)
{
	return p->srq_wr != 0 ? p->srq_wr : (uint64_t)p->nqp * p->rx_depth;
}

/* Every QP of the device, either backend: the sums of destroyed QPs stay
 * in, callers take differences. */
void
perf_qp_counters(struct perf *p, struct perf_qp_ctr *c)
{
	struct uroce_qp_stats sum;

	memset(c, 0, sizeof(*c));
	if (uroce_dev_qp_totals(p->dev, &sum, NULL) == 0) {
		c->retransmits = sum.retransmits;
		c->timeouts = sum.timeouts;
		c->late_timeouts = sum.late_timeouts;
	}
}

/* Since c0, a perf_qp_counters() earlier. */
void
perf_qp_counters_since(struct perf *p, const struct perf_qp_ctr *c0,
		       struct perf_qp_ctr *c)
{
	perf_qp_counters(p, c);
	c->retransmits -= c0->retransmits;
	c->timeouts -= c0->timeouts;
	c->late_timeouts -= c0->late_timeouts;
}

uint32_t
perf_frame_payload(const struct perf *p, uint32_t size)
{
	return RTE_MIN(size, p->mtu);
}

/* A message that spans packets is mostly middle packets (BTH only). */
uint32_t
perf_frame_len(const struct perf *p, uint32_t size)
{
	const struct perf_wl *wl = perf_wls[p->o->wl];

	if (size > p->mtu)
		return PERF_FRAME_BASE + p->mtu;
	return wl->frame_overhead + size;
}
