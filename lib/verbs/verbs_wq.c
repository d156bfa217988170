/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Receive work queues and RSS: ibv_create_wq(), ibv_modify_wq(),
 * ibv_destroy_wq(), ibv_post_wq_recv() and ibv_create_rwq_ind_table() /
 * ibv_destroy_rwq_ind_table(), which <infiniband/verbs.h> implements inline
 * through verbs_context's ops and wq->post_recv; the RSS QPs that use the
 * tables are made in verbs_qp.c. The model (a WQ is a receive-only raw
 * queue of the engine, an RSS QP spreads steered frames over its table's
 * WQs by a Toeplitz hash) is lib/engine/dev_wq.c's; here the checks of
 * the man pages and the return conventions.
 */

#include <stdlib.h>

#include "uroce_engine.h"
#include "uroce_qp.h"
#include "verbs_priv.h"

struct uroce_vwq {
	struct ibv_wq wq;
	struct uroce_qp *uqp;
};

struct uroce_vind {
	struct ibv_rwq_ind_table t;
	struct uroce_ind_tbl *ut;
};

#define WQ_ATTR_KNOWN \
	(IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE | IBV_WQ_ATTR_FLAGS)

static struct uroce_vwq *
vwq_of(struct ibv_wq *wq)
{
	return (struct uroce_vwq *)wq;
}

/* wq->post_recv: "0 on success, or the value of errno". */
static int
wq_post_recv(struct ibv_wq *wq, struct ibv_recv_wr *wr,
	     struct ibv_recv_wr **bad_wr)
{
	return -uroce_qp_post_recv(vwq_of(wq)->uqp, wr, bad_wr);
}

/* ibv_create_wq(3): type RQ; no creation flags (CVLAN stripping, FCS,
 * padding, delay drop: EOPNOTSUPP); max_wr and max_sge come back with
 * what was made. */
static int
wq_check(struct ibv_context *context, const struct ibv_wq_init_attr *a)
{
	if (a == NULL || a->pd == NULL || a->cq == NULL ||
	    a->pd->context != context || a->cq->context != context ||
	    (a->comp_mask & ~(uint32_t)IBV_WQ_INIT_ATTR_FLAGS))
		return EINVAL;
	if (a->wq_type != IBV_WQT_RQ ||
	    ((a->comp_mask & IBV_WQ_INIT_ATTR_FLAGS) && a->create_flags != 0))
		return EOPNOTSUPP;
	return 0;
}

struct ibv_wq *
uroce_verbs_create_wq(struct ibv_context *context,
		      struct ibv_wq_init_attr *attr)
{
	struct uroce_vwq *w;
	int ret;

	ret = wq_check(context, attr);
	if (ret != 0)
		return uroce_verbs_null(ret);
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return uroce_verbs_null(ENOMEM);
	ret = uroce_dev_wq_create(((struct uroce_vpd *)attr->pd)->upd,
				  ((struct uroce_vcq *)attr->cq)->ucq,
				  attr->max_wr, attr->max_sge, w, &w->uqp);
	if (ret < 0) {
		free(w);
		return uroce_verbs_null(-ret);
	}
	w->wq.context = context;
	w->wq.pd = attr->pd;
	w->wq.cq = attr->cq;
	w->wq.wq_num = w->uqp->qpn;
	w->wq.handle = w->uqp->qpn;
	w->wq.state = IBV_WQS_RESET;
	w->wq.wq_type = IBV_WQT_RQ;
	w->wq.post_recv = wq_post_recv;
	attr->max_wr = w->uqp->cap.max_recv_wr;
	attr->max_sge = w->uqp->cap.max_recv_sge;
	return &w->wq;
}

/* ibv_modify_wq(3): the state (and the current state it is assumed to
 * be in); flags (CVLAN stripping ...) EOPNOTSUPP. */
int
uroce_verbs_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr)
{
	int ret;

	if (wq == NULL || attr == NULL || (attr->attr_mask & ~WQ_ATTR_KNOWN))
		return EINVAL;
	if ((attr->attr_mask & IBV_WQ_ATTR_FLAGS) && attr->flags_mask != 0)
		return EOPNOTSUPP;
	if (!(attr->attr_mask & IBV_WQ_ATTR_STATE))
		return 0;
	ret = uroce_dev_wq_modify(vwq_of(wq)->uqp, attr->curr_wq_state,
				  (attr->attr_mask & IBV_WQ_ATTR_CURR_STATE) != 0,
				  attr->wq_state);
	if (ret < 0)
		return -ret;
	wq->state = attr->wq_state;
	return 0;
}

int
uroce_verbs_destroy_wq(struct ibv_wq *wq)
{
	int ret;

	if (wq == NULL)
		return EINVAL;
	ret = uroce_dev_wq_destroy(vwq_of(wq)->uqp);
	if (ret < 0)
		return -ret;
	pthread_cond_destroy(&wq->cond);
	pthread_mutex_destroy(&wq->mutex);
	free(wq);
	return 0;
}

/* ibv_create_rwq_ind_table(3): 2^log_ind_tbl_size WQs of this context. */
struct ibv_rwq_ind_table *
uroce_verbs_create_rwq_ind_table(struct ibv_context *context,
				 struct ibv_rwq_ind_table_init_attr *attr)
{
	static uint32_t next_num;
	struct uroce_qp **wqs;
	struct uroce_vind *v;
	uint32_t i, n;
	int ret;

	if (attr == NULL || attr->ind_tbl == NULL || attr->comp_mask != 0 ||
	    attr->log_ind_tbl_size >= 32)
		return uroce_verbs_null(EINVAL);
	n = UINT32_C(1) << attr->log_ind_tbl_size;
	wqs = calloc(n, sizeof(*wqs));
	v = calloc(1, sizeof(*v));
	ret = wqs == NULL || v == NULL ? -ENOMEM : 0;
	for (i = 0; ret == 0 && i < n; i++) {
		if (attr->ind_tbl[i] == NULL ||
		    attr->ind_tbl[i]->context != context)
			ret = -EINVAL;
		else
			wqs[i] = vwq_of(attr->ind_tbl[i])->uqp;
	}
	if (ret == 0)
		ret = uroce_dev_ind_tbl_create(uroce_vctx_of(context)->dev,
					       attr->log_ind_tbl_size, wqs,
					       &v->ut);
	free(wqs);
	if (ret < 0) {
		free(v);
		return uroce_verbs_null(-ret);
	}
	v->t.context = context;
	v->t.ind_tbl_num = (int)(__atomic_add_fetch(&next_num, 1,
						    __ATOMIC_RELAXED) &
				 INT32_MAX);
	v->t.ind_tbl_handle = v->t.ind_tbl_num;
	return &v->t;
}

int
uroce_verbs_destroy_rwq_ind_table(struct ibv_rwq_ind_table *t)
{
	struct uroce_vind *v = (struct uroce_vind *)t;
	int ret;

	if (t == NULL)
		return EINVAL;
	ret = uroce_dev_ind_tbl_destroy(v->ut);
	if (ret < 0)
		return -ret;
	free(v);
	return 0;
}

struct uroce_ind_tbl *
uroce_verbs_ind_tbl_engine(struct ibv_rwq_ind_table *t)
{
	return ((struct uroce_vind *)t)->ut;
}
