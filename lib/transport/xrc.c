/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * XRC (IBTA Vol. 1 Annex A14, eXtended Reliable Connected transport).
 *
 * The initiator (XRC_SEND) is RC's requester with XRC opcodes and the
 * WR's remote SRQ number in an XRCETH (requester.c). The target
 * (XRC_RECV) is RC's responder without a receive queue, CQ or PD of its
 * own: each request names in its XRCETH the XRC SRQ its message goes to,
 * which must belong to the target's XRC domain (A14.4: else the request
 * is invalid, NAK Invalid Request). For the time of a request the target
 * borrows that SRQ: its WQEs (uroce_qp_rwqe() takes from qp->srq), its CQ
 * (completions) and its PD (every L_Key and R_Key check). A message that
 * took a WQE keeps its SRQ until it completes; its other packets must
 * name the same SRQ.
 *
 * Here: the XRC SRQ type's rules (srq.c's table) and the target's bind.
 */
#include <errno.h>

#include "qp_priv.h"
#include "srq_priv.h"

/* ibv_create_srq_ex(3): an XRC SRQ names its XRC domain and its CQ. */
static int
xrc_srq_check(const struct uroce_qp_env *env, const struct uroce_srq_init *init)
{
	(void)env;
	return init->xrcd != NULL && init->cq != NULL ? 0 : -EINVAL;
}

const struct uroce_srq_type uroce_srq_type_xrc = {
	.name = "xrc",
	.check = xrc_srq_check,
};

size_t
uroce_xrc_wqe_size(const struct uroce_qp_env *env)
{
	/* Any SRQ of the domain may be named: room for the largest WQE. */
	return sizeof(struct uroce_recv_wqe) +
	       env->max_srq_sge * sizeof(struct ibv_sge);
}

static struct uroce_srq *
srq_lookup(const struct uroce_qp *qp, uint32_t srqn)
{
	const struct uroce_qp_env_ops *ops = qp->env->ops;

	if (ops == NULL || ops->srq_lookup == NULL)
		return NULL;
	return ops->srq_lookup(qp->env->ctx, srqn);
}

int
uroce_xrc_bind(struct uroce_qp *qp, uint32_t srqn)
{
	struct uroce_srq *srq = srq_lookup(qp, srqn);

	if (srq == NULL || srq->type != IBV_SRQT_XRC || srq->xrcd != qp->xrcd) {
		QP_LOG(DEBUG, qp, "XRCETH names SRQ %u: not an XRC SRQ of its domain",
		       srqn);
		return -EINVAL;
	}
	if (qp->srq_held && qp->srq != srq) {
		QP_LOG(DEBUG, qp, "XRCETH names SRQ %u inside a message to SRQ %u",
		       srqn, qp->srq->srqn);
		return -EINVAL;
	}
	qp->srq = srq;
	qp->recv_cq = srq->cq;
	qp->pd = srq->pd;
	return 0;
}

void
uroce_xrc_unbind(struct uroce_qp *qp)
{
	/* A held WQE keeps its SRQ (and CQ, for a flush) until it is done. */
	if (qp->srq_held)
		return;
	qp->srq = NULL;
	qp->recv_cq = NULL;
	qp->pd = NULL;
}
