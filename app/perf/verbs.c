/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The verbs backend (--verbs): the workloads through the verbs API, as a
 * verbs program under uroce-run runs them. ibv_post_send() and
 * ibv_poll_cq() go through the context's ops into our verbs layer (the
 * object files libibverbs.so.1 is built from are linked into uroce-perf:
 * one engine in the process, and the raw ceiling can still borrow the
 * port), and the stack is progressed by the engine lcore that
 * ibv_open_device() starts or, with [eal] lcores = 0, by the
 * ibv_poll_cq() calls of this thread and the keeper: this backend makes
 * no uroce_poll() call, as a verbs program makes none. The raw phases run on that engine lcore
 * (uroce_engine_run_on()), which does nothing else meanwhile: the ceiling
 * is measured on the core and port queue that carry the transport.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_priv.h"
#include "uroce_verbs.h"

/* ibv_open_device() on uroce<p->dev_idx>: the first one starts the stack
 * (the engine and its lcore). */
static int
verbs_open(struct perf *p)
{
	struct ibv_device **list;
	char name[32];
	int n, i;

	list = ibv_get_device_list(&n);
	if (list == NULL) {
		fprintf(stderr, "uroce-perf: --verbs: no device list: %s\n",
			strerror(errno));
		return -ENODEV;
	}
	snprintf(name, sizeof(name), "uroce%u", p->dev_idx);
	for (i = 0; i < n && p->vctx == NULL; i++)
		if (strcmp(ibv_get_device_name(list[i]), name) == 0)
			p->vctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (p->vctx == NULL) {
		fprintf(stderr, "uroce-perf: --verbs: cannot open %s\n", name);
		return -ENODEV;
	}
	p->dev = uroce_dev_get(p->dev_idx);
	return p->dev != NULL ? 0 : -ENODEV;
}

static int
verbs_start(struct perf *p, const char *config)
{
	/* The verbs layer reads its configuration as under uroce-run. */
	if (setenv("UROCE_CONFIG", config, 1) != 0)
		return -errno;
	/* --loop: the two devices talk over their link, not in memory, as
	 * in the native backend. */
	if (p->o->loop)
		uroce_verbs_engine_flags(UROCE_ENGINE_WIRE_XDEV);
	return verbs_open(p);
}

static void
verbs_close_twin(struct perf *tw)
{
	if (tw->vctx != NULL)
		ibv_close_device(tw->vctx);
	tw->vctx = NULL;
}

/* The engine stops now rather than at exit (the verbs layer's atexit then
 * finds nothing to do): the server's ports go down before its control
 * connection closes, as in the native backend, so that the two memif
 * ends never tear down at the same time. */
static void
verbs_stop(struct perf *p)
{
	if (p->vctx != NULL)
		ibv_close_device(p->vctx);
	p->vctx = NULL;
	uroce_engine_fini();
}

static int
verbs_pd_mr(struct perf *p, unsigned int access)
{
	p->vpd = ibv_alloc_pd(p->vctx);
	if (p->vpd == NULL)
		return -errno;
	p->vmr = ibv_reg_mr(p->vpd, p->buf, p->buf_len, (int)access);
	if (p->vmr == NULL)
		return -errno;
	p->lkey = p->vmr->lkey;
	p->rkey = p->vmr->rkey;
	return 0;
}

static int
verbs_cqs(struct perf *p, uint32_t cqe_s, uint32_t cqe_r)
{
	p->vscq = ibv_create_cq(p->vctx, (int)cqe_s, NULL, NULL, 0);
	if (p->vscq == NULL)
		return -errno;
	p->vrcq = ibv_create_cq(p->vctx, (int)cqe_r, NULL, NULL, 0);
	if (p->vrcq == NULL)
		return -errno;
	p->scq_size = (uint32_t)p->vscq->cqe;
	return 0;
}

static int
verbs_qp_create(struct perf *p, struct perf_qp *q,
		struct ibv_qp_init_attr *init)
{
	init->send_cq = p->vscq;
	init->recv_cq = p->vrcq;
	init->srq = p->vsrq;
	q->vqp = ibv_create_qp(p->vpd, init);
	if (q->vqp == NULL)
		return -errno;
	q->qpn = q->vqp->qp_num;
	q->qp = uroce_verbs_qp_uqp(q->vqp);	/* its counters */
	p->max_inline = init->cap.max_inline_data;	/* what was created */
	return 0;
}

static int
verbs_qp_modify(struct perf_qp *q, struct ibv_qp_attr *a, int mask)
{
	return -ibv_modify_qp(q->vqp, a, mask);
}

static int
verbs_rate_limit(struct perf_qp *q, struct ibv_qp_rate_limit_attr *a)
{
	return -ibv_modify_qp_rate_limit(q->vqp, a);
}

static void
verbs_close(struct perf *p)
{
	uint32_t i;

	for (i = 0; i < p->nqp; i++) {
		if (p->qps[i].vqp != NULL)
			ibv_destroy_qp(p->qps[i].vqp);
		p->qps[i].vqp = NULL;
		p->qps[i].qp = NULL;
	}
	if (p->vsrq != NULL)
		ibv_destroy_srq(p->vsrq);
	if (p->vscq != NULL)
		ibv_destroy_cq(p->vscq);
	if (p->vrcq != NULL)
		ibv_destroy_cq(p->vrcq);
	if (p->vmr != NULL)
		ibv_dereg_mr(p->vmr);
	if (p->vpd != NULL)
		ibv_dealloc_pd(p->vpd);
	p->vsrq = NULL;
	p->vscq = p->vrcq = NULL;
	p->vmr = NULL;
	p->vpd = NULL;
}

static int
verbs_post_send(struct perf_qp *q, struct ibv_send_wr *wr,
		struct ibv_send_wr **bad)
{
	return -ibv_post_send(q->vqp, wr, bad);
}

static int
verbs_post_recv(struct perf_qp *q, struct ibv_recv_wr *wr,
		struct ibv_recv_wr **bad)
{
	return -ibv_post_recv(q->vqp, wr, bad);
}

static int
verbs_srq_create(struct perf *p, uint32_t max_wr)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = max_wr,
						 .max_sge = 1 } };

	p->vsrq = ibv_create_srq(p->vpd, &a);
	return p->vsrq != NULL ? 0 : -errno;
}

static int
verbs_post_srq_recv(struct perf *p, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad)
{
	return -ibv_post_srq_recv(p->vsrq, wr, bad);
}

static int
verbs_poll_cq(struct perf *p, bool recv, int n, struct ibv_wc *wc)
{
	n = ibv_poll_cq(recv ? p->vrcq : p->vscq, n, wc);
	return n < 0 ? -EOVERFLOW : n;
}

/* Engine lcore 0 owns queue 0 of the port, the one the raw phases use. */
static int
verbs_on_port(struct perf *p, int (*fn)(void *arg), void *arg)
{
	return uroce_engine_run_on(0, fn, arg);
}

const struct perf_ops perf_verbs_ops = {
	.name = "verbs",
	.start = verbs_start,
	.stop = verbs_stop,
	.open_twin = verbs_open,	/* the stack is up: a device */
	.close_twin = verbs_close_twin,
	.pd_mr = verbs_pd_mr,
	.cqs = verbs_cqs,
	.qp_create = verbs_qp_create,
	.qp_modify = verbs_qp_modify,
	.rate_limit = verbs_rate_limit,
	.close = verbs_close,
	.post_send = verbs_post_send,
	.post_recv = verbs_post_recv,
	.srq_create = verbs_srq_create,
	.post_srq_recv = verbs_post_srq_recv,
	.poll_cq = verbs_poll_cq,
	.on_port = verbs_on_port,
};
