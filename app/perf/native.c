/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The native backend: liburoce's own object and data-path calls, and no
 * engine lcore (UROCE_ENGINE_NO_LCORES): the benchmark's thread runs the
 * stack with uroce_poll() between its posts and polls, run to completion
 * (one busy core per process, like testpmd's forwarding engines).
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>

#include <uroce/uroce.h>

#include "uroce_config.h"
#include "perf_priv.h"

static struct uroce_config native_cfg;	/* must outlive the engine */

static int
native_start(struct perf *p, const char *config)
{
	char err[UROCE_CONFIG_ERR_LEN];
	int ret;

	memset(&native_cfg, 0, sizeof(native_cfg));
	if (uroce_config_load(config, &native_cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -EINVAL;
	}
	ret = uroce_engine_init(&native_cfg, UROCE_ENGINE_NO_LCORES |
				(p->o->loop ? UROCE_ENGINE_WIRE_XDEV : 0), err,
				sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "%s\n", err);
		uroce_config_free(&native_cfg);
		return ret;
	}
	p->dev = uroce_dev_get(p->dev_idx);
	return 0;
}

static void
native_stop(struct perf *p)
{
	uroce_engine_fini();
	uroce_config_free(&native_cfg);
}

static int
native_open_twin(struct perf *tw)
{
	tw->dev = uroce_dev_get(tw->dev_idx);
	return tw->dev != NULL ? 0 : -ENODEV;
}

static void
native_close_twin(struct perf *tw)
{
	(void)tw;
}

static int
native_pd_mr(struct perf *p, unsigned int access)
{
	int ret = uroce_pd_alloc(p->dev, &p->pd);

	if (ret == 0)
		ret = uroce_dev_mr_reg(p->pd, p->buf, p->buf_len,
				       (uintptr_t)p->buf, access, &p->mr);
	if (ret < 0)
		return ret;
	p->lkey = p->mr->lkey;
	p->rkey = p->mr->rkey;
	return 0;
}

static int
native_cqs(struct perf *p, uint32_t cqe_s, uint32_t cqe_r)
{
	int ret = uroce_dev_cq_create(p->dev, cqe_s, p, &p->scq);

	if (ret == 0)
		ret = uroce_dev_cq_create(p->dev, cqe_r, p, &p->rcq);
	if (ret < 0)
		return ret;
	p->scq_size = uroce_cq_size(p->scq);
	return 0;
}

static int
native_qp_create(struct perf *p, struct perf_qp *q,
		 struct ibv_qp_init_attr *init)
{
	int ret;

	init->srq = (struct ibv_srq *)(void *)p->srq;	/* the engine's SRQ */
	ret = uroce_dev_qp_create(p->pd, p->scq, p->rcq, init, p, &q->qp);

	if (ret < 0)
		return ret;
	q->qpn = q->qp->qpn;
	p->max_inline = q->qp->cap.max_inline_data;
	return 0;
}

static int
native_qp_modify(struct perf_qp *q, struct ibv_qp_attr *a, int mask)
{
	return uroce_dev_qp_modify(q->qp, a, mask);
}

static int
native_rate_limit(struct perf_qp *q, struct ibv_qp_rate_limit_attr *a)
{
	return uroce_dev_qp_rate_limit(q->qp, a);
}

static void
native_close(struct perf *p)
{
	uint32_t i;

	for (i = 0; i < p->nqp; i++)
		uroce_dev_qp_destroy(p->qps[i].qp);
	if (p->srq != NULL)
		uroce_dev_srq_destroy(p->srq);
	if (p->scq != NULL)
		uroce_dev_cq_destroy(p->scq);
	if (p->rcq != NULL)
		uroce_dev_cq_destroy(p->rcq);
	if (p->mr != NULL)
		uroce_dev_mr_dereg(p->mr);
	if (p->pd != NULL)
		uroce_pd_free(p->pd);
	p->srq = NULL;
	p->scq = p->rcq = NULL;
	p->mr = NULL;
	p->pd = NULL;
}

static int
native_post_send(struct perf_qp *q, struct ibv_send_wr *wr,
		 struct ibv_send_wr **bad)
{
	return uroce_qp_post_send(q->qp, wr, bad);
}

static int
native_post_recv(struct perf_qp *q, struct ibv_recv_wr *wr,
		 struct ibv_recv_wr **bad)
{
	return uroce_qp_post_recv(q->qp, wr, bad);
}

static int
native_srq_create(struct perf *p, uint32_t max_wr)
{
	struct uroce_srq_init init = { .type = IBV_SRQT_BASIC, .max_sge = 1,
				       .max_wr = max_wr };

	return uroce_dev_srq_create(p->pd, &init, p, &p->srq);
}

static int
native_post_srq_recv(struct perf *p, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad)
{
	return uroce_srq_post_recv(p->srq, wr, bad);
}

static int
native_poll_cq(struct perf *p, bool recv, int n, struct ibv_wc *wc)
{
	return uroce_cq_poll(recv ? p->rcq : p->scq, n, wc);
}

/* Nothing runs the stack but this thread: the port is free between two
 * uroce_poll() calls. */
static int
native_on_port(struct perf *p, int (*fn)(void *arg), void *arg)
{
	return fn(arg);
}

const struct perf_ops perf_native_ops = {
	.name = "native",
	.start = native_start,
	.stop = native_stop,
	.open_twin = native_open_twin,
	.close_twin = native_close_twin,
	.pd_mr = native_pd_mr,
	.cqs = native_cqs,
	.qp_create = native_qp_create,
	.qp_modify = native_qp_modify,
	.rate_limit = native_rate_limit,
	.close = native_close,
	.post_send = native_post_send,
	.post_recv = native_post_recv,
	.srq_create = native_srq_create,
	.post_srq_recv = native_post_srq_recv,
	.poll_cq = native_poll_cq,
	.on_port = native_on_port,
};
