/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Queue pairs: create (ibv_create_qp, ibv_create_qp_ex), modify, query,
 * destroy, and the post ops of ctx->ops. The engine runs the control
 * verbs on the QP's owner lcore; posting goes straight into the QP's
 * rings (uroce_qp_post_send()).
 *
 * qp->state follows every successful ibv_modify_qp() and ibv_query_qp()
 * with IBV_QP_STATE, as in rdma-core: applications read it directly.
 */

#include <stdlib.h>
#include <string.h>

#include "uroce_engine.h"
#include "uroce_verbs.h"
#include "verbs_priv.h"

/* The init attributes of ibv_create_qp_ex() we take. */
#define QP_INIT_MASK_SUPPORTED						\
	(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |			\
	 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | IBV_QP_INIT_ATTR_CREATE_FLAGS |	\
	 QP_INIT_MASK_RSS)
/* An RSS QP names both (ibv_create_qp_ex(3)). */
#define QP_INIT_MASK_RSS \
	(IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH)

static struct uroce_vqp *
vqp_of(struct ibv_qp *qp)
{
	return (struct uroce_vqp *)qp;
}

struct uroce_qp *
uroce_verbs_qp_uqp(struct ibv_qp *qp)
{
	return vqp_of(qp)->uqp;
}

static void
cap_out(const struct uroce_qp *uqp, struct ibv_qp_cap *cap)
{
	cap->max_send_wr = uqp->cap.max_send_wr;
	cap->max_recv_wr = uqp->cap.max_recv_wr;
	cap->max_send_sge = uqp->cap.max_send_sge;
	cap->max_recv_sge = uqp->cap.max_recv_sge;
	cap->max_inline_data = uqp->cap.max_inline_data;
}

void
uroce_verbs_qp_fill(struct uroce_vqp *q, struct ibv_context *context,
		    struct ibv_pd *pd, void *qp_context)
{
	struct ibv_qp *qp = &q->qp;

	qp->context = context;
	qp->qp_context = qp_context;
	qp->pd = pd;
	qp->handle = q->uqp->qpn;
	qp->qp_num = q->uqp->qpn;
	qp->state = IBV_QPS_RESET;
	qp->qp_type = q->uqp->type;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
}

/* The engine QP of an XRC_RECV QP: in the domain, no PD, CQ or queue. */
static int
qp_create_xrc_recv(struct ibv_xrcd *xrcd, struct ibv_qp_init_attr *init,
		   struct uroce_vqp *q)
{
	if (xrcd == NULL)
		return EINVAL;
	return -uroce_dev_xrc_qp_create(uroce_verbs_xrcd_engine(xrcd), init, q,
					&q->uqp);
}

static int
qp_create_engine(struct ibv_pd *pd, struct ibv_qp_init_attr *init,
		 struct ibv_qp_attr *first, int first_mask, struct uroce_vqp *q)
{
	/* XRC_SEND has no receive side (ibv_create_qp_ex(3)). */
	bool rq = init->qp_type != IBV_QPT_XRC_SEND;

	struct ibv_qp_init_attr ei;

	if (pd == NULL || init->send_cq == NULL ||
	    (rq && init->recv_cq == NULL))
		return EINVAL;
	if (init->srq != NULL && init->srq->context != pd->context)
		return EINVAL;
	/* The engine takes its own SRQ (uroce_dev_qp_create()). */
	ei = *init;
	if (init->srq != NULL)
		ei.srq = (struct ibv_srq *)(void *)
			((struct uroce_vsrq *)init->srq)->usrq;
	/* On a parent domain, the rings from its allocator (verbs_pd.c). */
	return -uroce_dev_qp_create_init(((struct uroce_vpd *)pd)->upd,
					 ((struct uroce_vcq *)init->send_cq)->ucq,
					 rq ? ((struct uroce_vcq *)init->recv_cq)->ucq :
					 NULL, &ei, q, first, first_mask,
					 uroce_verbs_bufs_init(&q->bufs, pd),
					 &q->uqp);
}

/* Create the engine QP behind a new uroce_vqp (xrcd for XRC_RECV, pd for
 * the others), in INIT at once with @first (NULL: RESET; not XRC_RECV).
 * @return 0 or an errno. */
static int
qp_new(struct ibv_pd *pd, struct ibv_xrcd *xrcd, struct ibv_qp_init_attr *init,
       struct ibv_qp_attr *first, int first_mask, struct uroce_vqp **out)
{
	struct uroce_vqp *q;
	struct ibv_qp *qp;
	int ret;

	if (init == NULL)
		return EINVAL;
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return ENOMEM;
	if (init->qp_type == IBV_QPT_XRC_RECV)
		ret = first != NULL ? EINVAL : qp_create_xrc_recv(xrcd, init, q);
	else
		ret = qp_create_engine(pd, init, first, first_mask, q);
	if (ret != 0) {
		uroce_verbs_bufs_fini(&q->bufs);
		free(q);
		return ret;
	}
	uroce_verbs_qp_fill(q, pd != NULL ? pd->context : xrcd->context, pd,
			    init->qp_context);
	qp = &q->qp;
	qp->send_cq = q->uqp->send_cq != NULL ? init->send_cq : NULL;
	qp->recv_cq = q->uqp->recv_cq != NULL ? init->recv_cq : NULL;
	qp->srq = init->srq;
	if (first != NULL)
		qp->state = first->qp_state;
	if (init->qp_type == IBV_QPT_XRC_RECV) {
		q->xrc_base = q;
		q->xrc_handles = 1;
		qp->pd = NULL;
	}
	/* ibv_create_qp(3): cap returns the sizes actually created. */
	cap_out(q->uqp, &init->cap);
	*out = q;
	return 0;
}

void
uroce_verbs_qp_free(struct uroce_vqp *q)
{
	uroce_verbs_bufs_fini(&q->bufs);
	pthread_cond_destroy(&q->qp.cond);
	pthread_mutex_destroy(&q->qp.mutex);
	free(q);
}

struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct uroce_vqp *q;
	int ret;

	/* XRC_RECV needs a domain: only ibv_create_qp_ex() gives one. */
	if (pd == NULL)
		return uroce_verbs_null(EINVAL);
	ret = qp_new(pd, NULL, qp_init_attr, NULL, 0, &q);

	if (ret != 0)
		return uroce_verbs_null(ret);
	return &q->qp;
}

/* ibv_create_qp_ex(3): an XRC_RECV QP names its domain (IBV_QP_INIT_ATTR_
 * XRCD), every other type its PD, of this context's device. */
static bool
qp_ex_owner_ok(struct ibv_context *context,
	       const struct ibv_qp_init_attr_ex *attr)
{
	if (attr->qp_type == IBV_QPT_XRC_RECV)
		return (attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) &&
		       attr->xrcd != NULL &&
		       attr->xrcd->context->device == context->device;
	return (attr->comp_mask & IBV_QP_INIT_ATTR_PD) && attr->pd != NULL &&
	       attr->pd->context == context;
}

/*
 * An RSS QP (IBV_QP_INIT_ATTR_IND_TABLE and _RX_HASH, RAW_PACKET): receives
 * only, through its table's WQs; no CQ, SRQ or send ops of its own
 * (-EINVAL), its caps are not read and come back 0. lib/engine/dev_wq.c.
 */
static struct ibv_qp *
qp_create_rss(struct ibv_qp_init_attr_ex *attr)
{
	struct uroce_vqp *q;
	int ret;

	if ((attr->comp_mask & QP_INIT_MASK_RSS) != QP_INIT_MASK_RSS ||
	    attr->qp_type != IBV_QPT_RAW_PACKET || attr->rwq_ind_tbl == NULL ||
	    attr->rwq_ind_tbl->context != attr->pd->context ||
	    attr->send_cq != NULL || attr->recv_cq != NULL ||
	    attr->srq != NULL ||
	    (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return uroce_verbs_null(EINVAL);
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return uroce_verbs_null(ENOMEM);
	ret = uroce_dev_rss_qp_create(((struct uroce_vpd *)attr->pd)->upd,
				      uroce_verbs_ind_tbl_engine(attr->rwq_ind_tbl),
				      &attr->rx_hash_conf, q, &q->uqp);
	if (ret < 0) {
		free(q);
		return uroce_verbs_null(-ret);
	}
	uroce_verbs_qp_fill(q, attr->pd->context, attr->pd, attr->qp_context);
	memset(&attr->cap, 0, sizeof(attr->cap));
	return &q->qp;
}

/* verbs_context.create_qp_ex: the ibv_wr_* API with send_ops_flags. */
struct ibv_qp *
uroce_verbs_create_qp_ex(struct ibv_context *context,
			 struct ibv_qp_init_attr_ex *attr)
{
	return uroce_verbs_create_qp_init(context, attr, NULL, 0);
}

/* uroce_verbs_cm.h's create_qp_init: ibv_create_qp_ex(), then @first
 * (to INIT) made before the QP's owner lcore sees it. */
struct ibv_qp *
uroce_verbs_create_qp_init(struct ibv_context *context,
			   struct ibv_qp_init_attr_ex *attr,
			   struct ibv_qp_attr *first, int first_mask)
{
	struct ibv_qp_init_attr init;
	struct uroce_vqp *q;
	uint64_t ops = 0;
	int ret;

	if (attr == NULL || !qp_ex_owner_ok(context, attr))
		return uroce_verbs_null(EINVAL);
	if ((attr->comp_mask & ~QP_INIT_MASK_SUPPORTED) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags != 0))
		return uroce_verbs_null(EOPNOTSUPP);
	if (attr->comp_mask & QP_INIT_MASK_RSS)
		return first != NULL ? uroce_verbs_null(EINVAL) :
		       qp_create_rss(attr);
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ops = attr->send_ops_flags;
		if (ops == 0 || (ops & ~(uint64_t)UROCE_VERBS_QPX_OPS))
			return uroce_verbs_null(EOPNOTSUPP);
	}
	/* The leading members of the two init structs are the same. */
	memset(&init, 0, sizeof(init));
	init.qp_context = attr->qp_context;
	init.send_cq = attr->send_cq;
	init.recv_cq = attr->recv_cq;
	init.srq = attr->srq;
	init.cap = attr->cap;
	init.qp_type = attr->qp_type;
	init.sq_sig_all = attr->sq_sig_all;
	ret = qp_new(attr->qp_type == IBV_QPT_XRC_RECV ? NULL : attr->pd,
		     attr->qp_type == IBV_QPT_XRC_RECV ? attr->xrcd : NULL,
		     &init, first, first_mask, &q);
	if (ret == 0 && ops != 0) {
		ret = uroce_verbs_qpx_init(q, ops);
		if (ret != 0) {
			uroce_dev_qp_destroy(q->uqp);
			uroce_verbs_qp_free(q);
		}
	}
	if (ret != 0)
		return uroce_verbs_null(ret);
	attr->cap = init.cap;
	return &q->qp;
}

/* The ex view only for QPs created with send_ops_flags (rdma-core). */
struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	return qp != NULL && vqp_of(qp)->is_ex ? &vqp_of(qp)->qpx : NULL;
}

/* "0 on success, or the value of errno"; a failure changes nothing. */
int
ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	int ret;

	if (qp == NULL || attr == NULL)
		return EINVAL;
	ret = uroce_dev_qp_modify(vqp_of(qp)->uqp, attr, attr_mask);
	if (ret < 0)
		return -ret;
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	return 0;
}

/* uroce_verbs_cm.h's modify_qp_seq: ibv_modify_qp() @n times, one engine
 * call; qp->state follows each change made. */
int
uroce_verbs_modify_qp_seq(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			  const int *mask, unsigned int n, unsigned int *done)
{
	unsigned int i;
	int ret;

	*done = 0;
	if (qp == NULL || attr == NULL || mask == NULL || n == 0)
		return -EINVAL;
	ret = uroce_dev_qp_modify_seq(vqp_of(qp)->uqp, attr, mask, n, done);
	for (i = 0; i < *done; i++)
		if (mask[i] & IBV_QP_STATE)
			qp->state = attr[i].qp_state;
	return ret;
}

int
ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
	     struct ibv_qp_init_attr *init_attr)
{
	struct ibv_qp_init_attr init;
	int ret;

	if (qp == NULL || attr == NULL)
		return EINVAL;
	memset(&init, 0, sizeof(init));
	ret = uroce_dev_qp_query(vqp_of(qp)->uqp, attr, &init);
	if (ret < 0)
		return -ret;
	init.qp_context = qp->qp_context;
	init.send_cq = qp->send_cq;
	init.recv_cq = qp->recv_cq;
	init.srq = qp->srq;
	init.qp_type = qp->qp_type;
	cap_out(vqp_of(qp)->uqp, &init.cap);
	if (init_attr != NULL)
		*init_attr = init;
	/* The engine may have moved the QP (to ERR, SQE) on its own. */
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	return 0;
}

/* Waits, as rdma-core, until the QP's async events were acknowledged. */
int
uroce_verbs_qp_destroy(struct uroce_vqp *q)
{
	struct ibv_qp *qp = &q->qp;
	int ret;

	ret = uroce_dev_qp_destroy(q->uqp);
	if (ret < 0)
		return -ret;
	uroce_verbs_async_forget(uroce_vctx_of(qp->context), qp);
	pthread_mutex_lock(&qp->mutex);
	while (qp->events_completed != q->async_reported)
		pthread_cond_wait(&qp->cond, &qp->mutex);
	pthread_mutex_unlock(&qp->mutex);
	if (q->is_ex)
		uroce_verbs_qpx_fini(q);
	return 0;
}

int
ibv_destroy_qp(struct ibv_qp *qp)
{
	int ret;

	if (qp == NULL)
		return EINVAL;
	if (qp->qp_type == IBV_QPT_XRC_RECV)
		return uroce_verbs_xrc_qp_destroy(vqp_of(qp));
	ret = uroce_verbs_qp_destroy(vqp_of(qp));
	if (ret == 0)
		uroce_verbs_qp_free(vqp_of(qp));
	return ret;
}

/* ------------------------------------------------------------------------
 * Posting (ctx->ops): "0 on success, or the value of errno", *bad_wr the
 * first WR not posted.
 */

/*
 * UD: the transport takes the engine's address handle, the application
 * gives ours. Each WR is posted from a copy that names the engine's, so
 * that the application's list is never written to.
 */
static int
post_send_ud(struct uroce_qp *uqp, struct ibv_send_wr *wr,
	     struct ibv_send_wr **bad_wr)
{
	struct ibv_send_wr one, *bad;
	int ret;

	for (; wr != NULL; wr = wr->next) {
		one = *wr;
		one.next = NULL;
		if (wr->wr.ud.ah != NULL)
			one.wr.ud.ah = (struct ibv_ah *)
				((struct uroce_vah *)wr->wr.ud.ah)->uah;
		ret = uroce_qp_post_send(uqp, &one, &bad);
		if (ret < 0) {
			*bad_wr = wr;
			return -ret;
		}
	}
	return 0;
}

int
uroce_verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	struct ibv_send_wr *bad = NULL;
	int ret;

	if (qp->qp_type == IBV_QPT_UD)
		return post_send_ud(vqp_of(qp)->uqp, wr,
				    bad_wr != NULL ? bad_wr : &bad);
	ret = uroce_qp_post_send(vqp_of(qp)->uqp, wr, bad_wr);
	return -ret;
}

int
uroce_verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	return -uroce_qp_post_recv(vqp_of(qp)->uqp, wr, bad_wr);
}
