/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Shared receive queues: ibv_create_srq, ibv_create_srq_ex (ctx op),
 * ibv_modify_srq, ibv_query_srq, ibv_destroy_srq, ibv_post_srq_recv (ctx
 * op) and ibv_get_srq_num (ctx op). The engine's SRQ (lib/engine/
 * dev_srq.c, lib/transport/srq.c) is behind each ibv_srq; it has no owner
 * lcore, so every verb runs on the caller's thread.
 *
 * Types: srq_init() turns an ibv_srq_init_attr_ex into the engine's init,
 * one case per srq_type; XRC and TM add theirs there.
 */

#include <stdlib.h>
#include <string.h>

#include "uroce_engine.h"
#include "verbs_priv.h"

/* comp_mask bits rdma-core 44 defines. */
#define SRQ_INIT_MASK_KNOWN	(IBV_SRQ_INIT_ATTR_RESERVED - 1)

static struct uroce_vsrq *
vsrq_of(struct ibv_srq *srq)
{
	return (struct uroce_vsrq *)srq;
}

/* An XRC SRQ names its domain and its CQ, of the PD's device
 * (ibv_create_srq_ex(3)): completions go to its CQ. */
static int
srq_init_xrc(const struct ibv_srq_init_attr_ex *a, struct uroce_srq_init *init)
{
	const uint32_t need = IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;

	if ((a->comp_mask & need) != need || a->xrcd == NULL || a->cq == NULL ||
	    a->xrcd->context->device != a->pd->context->device ||
	    a->cq->context != a->pd->context)
		return EINVAL;
	init->xrcd = uroce_verbs_xrcd_engine(a->xrcd);
	init->cq = ((struct uroce_vcq *)a->cq)->ucq;
	return 0;
}

/* The engine's init from the verbs one: 0 or an errno. */
static int
srq_init(struct ibv_context *context, const struct ibv_srq_init_attr_ex *a,
	 struct uroce_srq_init *init)
{
	enum ibv_srq_type type = (a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ?
				 a->srq_type : IBV_SRQT_BASIC;

	if (a->comp_mask & ~(uint32_t)SRQ_INIT_MASK_KNOWN)
		return EOPNOTSUPP;
	if (!(a->comp_mask & IBV_SRQ_INIT_ATTR_PD) || a->pd == NULL)
		return EINVAL;
	memset(init, 0, sizeof(*init));
	init->type = type;
	init->max_wr = a->attr.max_wr;
	init->max_sge = a->attr.max_sge;
	switch (type) {
	case IBV_SRQT_BASIC:
		/* xrcd, cq and tm_cap do not apply (ibv_create_srq_ex(3)). */
		return 0;
	case IBV_SRQT_XRC:
		return srq_init_xrc(a, init);
	case IBV_SRQT_TM:	/* tm: cq and tm_cap */
		return uroce_verbs_srq_init_tm(context, a, init);
	default:
		return EOPNOTSUPP;
	}
}

/* Create the SRQ a's (checked) init asks for. NULL with errno. */
static struct ibv_srq *
srq_new(struct ibv_context *context, struct ibv_srq_init_attr_ex *a)
{
	struct uroce_srq_init init;
	struct uroce_vsrq *s;
	struct ibv_srq *srq;
	int ret;

	ret = srq_init(context, a, &init);
	if (ret == 0 && a->pd->context != context)
		ret = EINVAL;
	if (ret != 0)
		return uroce_verbs_null(ret);
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return uroce_verbs_null(ENOMEM);
	/* On a parent domain, the ring from its allocator (verbs_pd.c). */
	init.alloc = uroce_verbs_bufs_init(&s->bufs, a->pd);
	ret = uroce_dev_srq_create(((struct uroce_vpd *)a->pd)->upd, &init, s,
				   &s->usrq);
	if (ret < 0) {
		uroce_verbs_bufs_fini(&s->bufs);
		free(s);
		return uroce_verbs_null(-ret);
	}
	s->type = init.type;
	srq = &s->srq;
	srq->context = context;
	srq->srq_context = a->srq_context;
	srq->pd = a->pd;
	srq->handle = s->usrq->srqn;
	pthread_mutex_init(&srq->mutex, NULL);
	pthread_cond_init(&srq->cond, NULL);
	/* ibv_create_srq(3): attr comes back with what was created. */
	a->attr.max_wr = s->usrq->max_wr;
	a->attr.max_sge = s->usrq->max_sge;
	return srq;
}

struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr)
{
	struct ibv_srq_init_attr_ex a;
	struct ibv_srq *srq;

	if (pd == NULL || srq_init_attr == NULL)
		return uroce_verbs_null(EINVAL);
	memset(&a, 0, sizeof(a));
	a.srq_context = srq_init_attr->srq_context;
	a.attr = srq_init_attr->attr;
	a.comp_mask = IBV_SRQ_INIT_ATTR_PD;
	a.pd = pd;
	srq = srq_new(pd->context, &a);
	if (srq != NULL) {
		srq_init_attr->attr.max_wr = a.attr.max_wr;
		srq_init_attr->attr.max_sge = a.attr.max_sge;
	}
	return srq;
}

/* verbs_context.create_srq_ex. */
struct ibv_srq *
uroce_verbs_create_srq_ex(struct ibv_context *context,
			  struct ibv_srq_init_attr_ex *attr)
{
	if (context == NULL || attr == NULL)
		return uroce_verbs_null(EINVAL);
	return srq_new(context, attr);
}

/* "0 on success, or the value of errno"; a failure changes nothing. */
int
ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
	       int srq_attr_mask)
{
	int ret;

	if (srq == NULL || srq_attr == NULL)
		return EINVAL;
	ret = -uroce_dev_srq_modify(vsrq_of(srq)->usrq, srq_attr,
				    srq_attr_mask);
	uroce_verbs_bufs_flush(&vsrq_of(srq)->bufs);	/* a resize's old ring */
	return ret;
}

int
ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr)
{
	if (srq == NULL || srq_attr == NULL)
		return EINVAL;
	return -uroce_dev_srq_query(vsrq_of(srq)->usrq, srq_attr);
}

/* EBUSY while a QP uses it (ibv_destroy_srq(3)); then waits, as rdma-core,
 * until its async events were acknowledged. */
int
ibv_destroy_srq(struct ibv_srq *srq)
{
	struct uroce_vsrq *s = vsrq_of(srq);
	int ret;

	if (srq == NULL)
		return EINVAL;
	ret = uroce_dev_srq_destroy(s->usrq);
	if (ret < 0)
		return -ret;
	uroce_verbs_async_forget(uroce_vctx_of(srq->context), srq);
	pthread_mutex_lock(&srq->mutex);
	while (srq->events_completed != s->async_reported)
		pthread_cond_wait(&srq->cond, &srq->mutex);
	pthread_mutex_unlock(&srq->mutex);
	pthread_cond_destroy(&srq->cond);
	pthread_mutex_destroy(&srq->mutex);
	uroce_verbs_bufs_fini(&s->bufs);
	free(s);
	return 0;
}

/* ctx->ops.post_srq_recv: "0 on success, or the value of errno". */
int
uroce_verbs_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr)
{
	return -uroce_srq_post_recv(vsrq_of(srq)->usrq, wr, bad_wr);
}

/* verbs_context.get_srq_num: the number XRC senders name. */
int
uroce_verbs_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	if (srq == NULL || srq_num == NULL)
		return EINVAL;
	*srq_num = vsrq_of(srq)->usrq->srqn;
	return 0;
}
