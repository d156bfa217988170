/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The QP object: create, destroy, the post verbs, modify with its side
 * effects, query, and the engine-facing rx/tx/timer/deadline entry points
 * that hand work to the requester, completer, responder and UD code.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "qp_priv.h"
#include "zcopy_priv.h"

/* ---------------------------------------------------------------------------
 * Create and destroy.
 */

/* Send WR opcodes each QP type takes (ibv_post_send(3), "opcode"). */
#define WR_BIT(op)	(UINT32_C(1) << (op))
#define WR_SEND_OPS	(WR_BIT(IBV_WR_SEND) | WR_BIT(IBV_WR_SEND_WITH_IMM))
#define WR_WRITE_OPS	(WR_BIT(IBV_WR_RDMA_WRITE) | WR_BIT(IBV_WR_RDMA_WRITE_WITH_IMM))
#define WR_RD_AT_OPS	(WR_BIT(IBV_WR_RDMA_READ) | WR_BIT(IBV_WR_ATOMIC_CMP_AND_SWP) | \
			 WR_BIT(IBV_WR_ATOMIC_FETCH_AND_ADD))
/* Memory window operations, local to the requester (ibv_post_send(3): UC,
 * RC, XRC_SEND); they carry no data. SEND with Invalidate has opcodes on
 * RC only (IBTA Table 38: none for UC; XRC's are not in the wire table). */
#define WR_MW_OPS	(WR_BIT(IBV_WR_BIND_MW) | WR_BIT(IBV_WR_LOCAL_INV))
#define WR_INV_OPS	WR_BIT(IBV_WR_SEND_WITH_INV)

/*
 * What each QP type is, in one place: the create checks, the post checks
 * and the receive path read it (IBTA ch. 9-11 and the XRC annex A14: an
 * XRC initiator only sends, an XRC target only receives, into the SRQs its
 * requests name). Types without an entry are not offered (EOPNOTSUPP).
 */
struct qp_type_rules {
	bool ok;		/**< a type uroce creates */
	bool connected;		/**< has a path (AV) set by modify_qp */
	bool responder;		/**< answers requests (ACK, READ, atomics) */
	bool send_cq, recv_cq;	/**< CQs it must be given at create */
	bool own_rq;		/**< a receive queue of its own (without an SRQ) */
	bool srq_ok;		/**< may take its receives from a basic SRQ */
	bool wire;		/**< takes opcodes from the wire (RAW: flow rules) */
	bool rx_req;		/**< takes request packets */
	uint8_t transport;	/**< of the opcodes it takes (wire) */
	uint32_t wr_ops;	/**< send WR opcodes (ibv_post_send(3)) */
};

/*		 ok   conn  resp  scq   rcq   ownrq srq   wire  rxreq */
static const struct qp_type_rules qp_types[] = {
	[IBV_QPT_RC] = { true, true, true, true, true, true, true, true, true,
			 UROCE_TR_RC, WR_SEND_OPS | WR_WRITE_OPS | WR_RD_AT_OPS |
			 WR_MW_OPS | WR_INV_OPS },
	[IBV_QPT_UC] = { true, true, true, true, true, true, true, true, true,
			 UROCE_TR_UC, WR_SEND_OPS | WR_WRITE_OPS | WR_MW_OPS },
	[IBV_QPT_UD] = { true, false, false, true, true, true, true, true, true,
			 UROCE_TR_UD, WR_SEND_OPS },
	/* The gathered bytes are the frame: no immediate to carry. */
	[IBV_QPT_RAW_PACKET] = { true, false, false, true, true, true, false,
				 false, false, 0, WR_BIT(IBV_WR_SEND) },
	[IBV_QPT_XRC_SEND] = { true, true, false, true, false, false, false,
			       true, false, UROCE_TR_XRC,
			       WR_SEND_OPS | WR_WRITE_OPS | WR_RD_AT_OPS |
			       WR_MW_OPS },
	[IBV_QPT_XRC_RECV] = { true, true, true, false, false, false, false,
			       true, true, UROCE_TR_XRC, 0 },
};

/* The rules of type, or NULL for a type not offered. */
static const struct qp_type_rules *
type_rules(enum ibv_qp_type type)
{
	if ((unsigned int)type >= RTE_DIM(qp_types) || !qp_types[type].ok)
		return NULL;
	return &qp_types[type];
}

/* A receive queue of its own: not with an SRQ, not for XRC QPs (an XRC
 * target's completions go to the CQ of the SRQ that takes each message). */
static bool
type_has_rq(const struct uroce_qp *qp)
{
	return qp->srq == NULL && qp_types[qp->type].own_rq;
}

/* The receive caps do not count with an SRQ (ibv_create_qp(3)). */
static int
check_caps(const struct uroce_qp_env *env, const struct ibv_qp_cap *cap,
	   bool srq)
{
	if (cap->max_send_wr > env->max_qp_wr ||
	    (!srq && cap->max_recv_wr > env->max_qp_wr) ||
	    cap->max_send_sge > env->max_sge ||
	    (!srq && cap->max_recv_sge > env->max_sge) ||
	    cap->max_inline_data > env->max_inline)
		return -EINVAL;
	return 0;
}

/* Zeroed memory aligned to align bytes, a power of two of at least a
 * cache line. */
static void *
alloc_aligned_to(size_t size, size_t align)
{
	void *p = NULL;

	if (posix_memalign(&p, align, RTE_ALIGN_CEIL(size, align)) != 0)
		return NULL;
	memset(p, 0, size);
	return p;
}

static void *
alloc_aligned(size_t size)
{
	return alloc_aligned_to(size, RTE_CACHE_LINE_SIZE);
}

static int
alloc_queues(struct uroce_qp *qp, const struct ibv_qp_cap *cap)
{
	uint32_t nsq = cap->max_send_wr;
	uint32_t nrq = rte_align32pow2(RTE_MAX(cap->max_recv_wr, 1u));
	uint32_t sdata = RTE_MAX(cap->max_send_sge * (uint32_t)sizeof(struct ibv_sge),
				 cap->max_inline_data);
	uint32_t sslot;
	uint32_t rslot = sizeof(struct uroce_recv_wqe) +
			 cap->max_recv_sge * sizeof(struct ibv_sge);

	/* On a TM-SRQ the send queue also carries the rendezvous FIN, inline
	 * (tm_rx.c). */
	if (uroce_qp_on_tm_srq(qp)) {
		sdata = RTE_MAX(sdata, UROCE_TM_FIN_LEN);
		nsq += UROCE_TM_RNDV_SQ_SLOTS;
	}
	nsq = rte_align32pow2(RTE_MAX(nsq, 1u));
	sslot = RTE_ALIGN_CEIL(sizeof(struct uroce_send_wqe) + sdata, 8);
	if (!type_has_rq(qp)) {
		/* No RQ of its own: an empty one-slot ring keeps the RQ code
		 * paths uniform; receives go to srq_wqe, one SRQ slot (XRC
		 * targets: any SRQ of the domain's). */
		nrq = 1;
		rslot = sizeof(struct uroce_recv_wqe);
	}
	if (qp->srq != NULL || qp->type == IBV_QPT_XRC_RECV) {
		qp->srq_wqe = alloc_aligned(qp->srq != NULL ? qp->srq->slot_size :
					    uroce_xrc_wqe_size(qp->env));
		if (qp->srq_wqe == NULL)
			return -ENOMEM;
	}
	qp->sq_mem = uroce_ring_mem_get(&qp->alloc,
					uroce_ring_mem_size(nsq, sslot),
					UROCE_RING_SQ, &qp->sq_ext);
	qp->rq_mem = uroce_ring_mem_get(&qp->alloc,
					uroce_ring_mem_size(nrq, rslot),
					UROCE_RING_RQ, &qp->rq_ext);
	if (qp->sq_mem == NULL || qp->rq_mem == NULL)
		return -ENOMEM;
	uroce_ring_init(&qp->sq, qp->sq_mem, nsq, sslot);
	uroce_ring_init(&qp->rq, qp->rq_mem, nrq, rslot);
	qp->cap.max_send_wr = nsq;
	qp->cap.max_recv_wr = type_has_rq(qp) ? nrq : 0;
	qp->cap.max_send_sge = cap->max_send_sge;
	qp->cap.max_recv_sge = type_has_rq(qp) ? cap->max_recv_sge : 0;
	qp->cap.max_inline_data = cap->max_inline_data;
	return 0;
}

static int
alloc_transport(struct uroce_qp *qp)
{
	struct uroce_responder *resp;
	uint32_t n;

	if (!qp_types[qp->type].responder)
		return 0;
	qp->resp = resp = calloc(1, sizeof(*resp));
	if (resp == NULL)
		return -ENOMEM;
	n = RTE_MAX(qp->env->lim.max_qp_rd_atom, 1u);
	n = RTE_MIN(n, (uint32_t)UROCE_RESP_RES_MAX);
	resp->res_cap = n;
	resp->res = calloc(n, sizeof(*resp->res));
	resp->replay = calloc(n, sizeof(*resp->replay));
	if (resp->res == NULL || resp->replay == NULL)
		return -ENOMEM;
	return 0;
}

/* The create checks of ibv_create_qp(3) against the type's rules. */
static int
create_check(const struct uroce_qp_env *env, const struct ibv_qp_init_attr *init,
	     const struct uroce_cq *send_cq, const struct uroce_cq *recv_cq)
{
	const struct qp_type_rules *t = type_rules(init->qp_type);
	const struct uroce_srq *srq = (const void *)init->srq;

	if (t == NULL)
		return -EOPNOTSUPP;
	if ((t->send_cq && send_cq == NULL) || (t->recv_cq && recv_cq == NULL))
		return -EINVAL;
	if (srq != NULL && !t->srq_ok)
		return -EOPNOTSUPP;
	/* Tag matching is for RC (tm_caps.flags IBV_TM_CAP_RC only). */
	if (srq != NULL && srq->type == IBV_SRQT_TM &&
	    init->qp_type != IBV_QPT_RC)
		return -EOPNOTSUPP;
	/* An XRC SRQ serves XRC_RECV QPs only, through XRCETH. */
	if (srq != NULL && srq->type == IBV_SRQT_XRC)
		return -EINVAL;
	return check_caps(env, &init->cap, srq != NULL || !t->own_rq);
}

static int qp_build(const struct uroce_qp_env *env, const void *pd,
		    struct uroce_cq *send_cq, struct uroce_cq *recv_cq,
		    const struct ibv_qp_init_attr *init, uint32_t qpn,
		    const struct uroce_ring_alloc *alloc, struct uroce_qp **out);

int
uroce_qp_create(const struct uroce_qp_env *env, const void *pd,
		struct uroce_cq *send_cq, struct uroce_cq *recv_cq,
		const struct ibv_qp_init_attr *init, uint32_t qpn,
		struct uroce_qp **out)
{
	return uroce_qp_create_ex(env, pd, send_cq, recv_cq, init, qpn, NULL,
				  out);
}

int
uroce_qp_create_ex(const struct uroce_qp_env *env, const void *pd,
		   struct uroce_cq *send_cq, struct uroce_cq *recv_cq,
		   const struct ibv_qp_init_attr *init, uint32_t qpn,
		   const struct uroce_ring_alloc *alloc, struct uroce_qp **out)
{
	int ret;

	if (env == NULL || init == NULL || out == NULL)
		return -EINVAL;
	ret = create_check(env, init, send_cq, recv_cq);
	if (ret < 0)
		return ret;
	return qp_build(env, pd, send_cq, recv_cq, init, qpn, alloc, out);
}

int
uroce_qp_create_rss(const struct uroce_qp_env *env, const void *pd,
		    uint32_t qpn, struct uroce_qp **out)
{
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RAW_PACKET };

	if (env == NULL || out == NULL)
		return -EINVAL;
	return qp_build(env, pd, NULL, NULL, &init, qpn, NULL, out);
}

/* A checked QP: allocate and set it up in RESET. */
static int
qp_build(const struct uroce_qp_env *env, const void *pd,
	 struct uroce_cq *send_cq, struct uroce_cq *recv_cq,
	 const struct ibv_qp_init_attr *init, uint32_t qpn,
	 const struct uroce_ring_alloc *alloc, struct uroce_qp **out)
{
	struct uroce_qp *qp;
	int ret;

	/* Aligned as the type asks: the owner lines in 128-byte pairs. */
	qp = alloc_aligned_to(sizeof(*qp), _Alignof(struct uroce_qp));
	if (qp == NULL)
		return -ENOMEM;
	qp->env = env;
	if (alloc != NULL)
		qp->alloc = *alloc;
	qp->srq = (struct uroce_srq *)(void *)init->srq;
	qp->qpn = qpn & UROCE_QPN_MASK;
	qp->type = init->qp_type;
	qp->pd = pd;
	/* XRC QPs keep no receive CQ (a target completes into its SRQs'). */
	qp->send_cq = qp_types[qp->type].send_cq ? send_cq : NULL;
	qp->recv_cq = qp_types[qp->type].recv_cq ? recv_cq : NULL;
	/* A TM-SRQ reports the receives of its QPs to its own CQ
	 * (tag_matching.md, "TM-SRQ creation"). */
	if (uroce_qp_on_tm_srq(qp))
		qp->recv_cq = qp->srq->cq;
	qp->sq_sig_all = init->sq_sig_all != 0;
	rte_spinlock_init(&qp->sq_lock);
	rte_spinlock_init(&qp->rq_lock);
	ret = alloc_queues(qp, &init->cap);
	if (ret == 0)
		ret = alloc_transport(qp);
	if (ret == 0)
		ret = uroce_zc_qp_init(qp);
	if (ret == 0)
		ret = uroce_ud_pace_init(qp);
	if (ret < 0) {
		uroce_qp_destroy(qp);
		return ret;
	}
	qp->state = IBV_QPS_RESET;
	qp->post_state = IBV_QPS_RESET;
	qp->attr.qp_state = IBV_QPS_RESET;
	qp->attr.cur_qp_state = IBV_QPS_RESET;
	qp->attr.path_mtu = IBV_MTU_1024;
	qp->attr.cap.max_send_wr = qp->cap.max_send_wr;
	qp->attr.cap.max_recv_wr = qp->cap.max_recv_wr;
	qp->attr.cap.max_send_sge = qp->cap.max_send_sge;
	qp->attr.cap.max_recv_sge = qp->cap.max_recv_sge;
	qp->attr.cap.max_inline_data = qp->cap.max_inline_data;
	uroce_req_reset(qp);
	if (qp->resp != NULL)
		uroce_resp_reset(qp);
	*out = qp;
	return 0;
}

void
uroce_qp_destroy(struct uroce_qp *qp)
{
	if (qp == NULL)
		return;
	/* Type 2 windows bound to it are invalid from now (IBTA 10.6.7.2):
	 * a later QP at the same address must not find them bound to it. */
	if (qp->env != NULL && qp->env->mrs != NULL)
		uroce_mw_unbind_qp(qp->env->mrs, qp);
	uroce_zc_qp_fini(qp);
	uroce_ud_pace_fini(qp);
	if (uroce_qp_on_tm_srq(qp) && qp->resp != NULL)
		uroce_tm_qp_flush(qp, true, false);
	if (qp->resp != NULL) {
		free(qp->resp->res);
		free(qp->resp->replay);
	}
	free(qp->resp);
	uroce_ring_mem_put(&qp->alloc, qp->sq_mem, UROCE_RING_SQ, qp->sq_ext);
	uroce_ring_mem_put(&qp->alloc, qp->rq_mem, UROCE_RING_RQ, qp->rq_ext);
	free(qp->srq_wqe);
	free(qp);
}

/* ---------------------------------------------------------------------------
 * Post verbs (any thread).
 */
static bool
post_send_state_ok(enum ibv_qp_state s)
{
	/* ibv_post_send(3): the QP must be in RTS (or beyond it: SQD queues
	 * the WR, SQE and ERR flush it). */
	return s == IBV_QPS_RTS || s == IBV_QPS_SQD || s == IBV_QPS_SQE ||
	       s == IBV_QPS_ERR;
}

static int
send_wr_check(const struct uroce_qp *qp, const struct ibv_send_wr *wr,
	      uint64_t *len)
{
	uint64_t sum = 0;
	int i;

	/* An RSS QP has no send side (uroce_qp_create_rss()). */
	if (!post_send_state_ok(qp->post_state) || qp->send_cq == NULL)
		return -EINVAL;
	if ((unsigned int)wr->opcode >= 32 ||
	    !(qp_types[qp->type].wr_ops & WR_BIT(wr->opcode)))
		return -EINVAL;
	if (WR_BIT(wr->opcode) & WR_MW_OPS) {
		/* No data: the gather list is not looked at. A bind names a
		 * window, and an MR unless it unbinds (ibv_bind_mw(3)). */
		*len = 0;
		if (wr->opcode == IBV_WR_BIND_MW &&
		    (wr->bind_mw.mw == NULL ||
		     (wr->bind_mw.bind_info.mr == NULL &&
		      wr->bind_mw.bind_info.length != 0)))
			return -EINVAL;
		return 0;
	}
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_send_sge)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		sum += uroce_sge_at(wr->sg_list, i).length;
	if (sum > UROCE_MSG_MAX)
		return -EINVAL;
	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    ((WR_BIT(wr->opcode) & WR_RD_AT_OPS) ||
	     sum > qp->cap.max_inline_data))
		return -EINVAL;
	/* An atomic returns 8 bytes into exactly one SGE of 8 bytes. */
	if ((WR_BIT(wr->opcode) & WR_RD_AT_OPS) &&
	    wr->opcode != IBV_WR_RDMA_READ &&
	    (wr->num_sge != 1 || sum != 8))
		return -EINVAL;
	if (qp->type == IBV_QPT_UD && wr->wr.ud.ah == NULL)
		return -EINVAL;
	*len = sum;
	return 0;
}

/* The gather list, or the inline data itself. */
static void
send_wr_data(struct uroce_send_wqe *w, const struct ibv_send_wr *wr)
{
	int i;

	if (wr->send_flags & IBV_SEND_INLINE) {
		uint8_t *d = w->data;

		/* Inline data is copied now, from the caller's addresses:
		 * the buffer is the caller's again when the post returns. */
		for (i = 0; i < wr->num_sge; i++) {
			struct ibv_sge sg = uroce_sge_at(wr->sg_list, i);

			memcpy(d, (const void *)(uintptr_t)sg.addr, sg.length);
			d += sg.length;
		}
	} else if (wr->num_sge > 0) {
		memcpy(w->data, wr->sg_list, wr->num_sge * sizeof(struct ibv_sge));
	}
}

/* A bind or local invalidate: what the requester needs to run it
 * (requester.c); a local invalidate's key is the imm word. */
static void
send_wr_mw(struct uroce_send_wqe *w, const struct ibv_send_wr *wr)
{
	const struct ibv_mw_bind_info *bi = &wr->bind_mw.bind_info;

	w->num_sge = 0;
	w->length = 0;
	w->send_flags &= ~(uint32_t)IBV_SEND_INLINE;
	if (wr->opcode != IBV_WR_BIND_MW)
		return;
	w->mw_key = wr->bind_mw.mw->rkey;
	w->rkey = wr->bind_mw.rkey;
	w->mr_lkey = bi->mr != NULL ? bi->mr->lkey : 0;
	w->remote_addr = bi->addr;
	w->compare_add = bi->length;
	w->mw_access = bi->mw_access_flags;
}

static void
send_wr_encode(struct uroce_send_wqe *w, const struct ibv_send_wr *wr,
	       uint64_t len, enum ibv_qp_type type)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->opcode = (uint8_t)wr->opcode;
	w->num_sge = (uint8_t)wr->num_sge;
	w->send_flags = wr->send_flags;
	w->length = (uint32_t)len;
	w->imm = wr->imm_data;
	if (type == IBV_QPT_UD) {
		w->ah = (struct uroce_ah *)wr->wr.ud.ah;
		w->remote_qpn = wr->wr.ud.remote_qpn;
		w->remote_qkey = wr->wr.ud.remote_qkey;
		send_wr_data(w, wr);
		return;
	}
	if (type == IBV_QPT_XRC_SEND)
		w->xrc_srqn = wr->qp_type.xrc.remote_srqn & UROCE_QPN_MASK;
	if (WR_BIT(wr->opcode) & WR_MW_OPS) {
		send_wr_mw(w, wr);
		return;
	}
	if (WR_BIT(wr->opcode) & (WR_WRITE_OPS | WR_BIT(IBV_WR_RDMA_READ))) {
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
	} else if (WR_BIT(wr->opcode) & WR_RD_AT_OPS) {
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
	}
	send_wr_data(w, wr);
}

int
uroce_qp_post_send(struct uroce_qp *qp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	int ret = 0, posted = 0;
	uint64_t len;

	rte_spinlock_lock(&qp->sq_lock);
	for (; wr != NULL; wr = wr->next) {
		ret = send_wr_check(qp, wr, &len);
		if (ret == 0 && uroce_ring_prod_avail(&qp->sq, 1) == 0)
			ret = -ENOMEM;
		if (ret < 0)
			break;
		send_wr_encode(uroce_ring_prod_slot(&qp->sq, 0), wr, len,
			       qp->type);
		uroce_ring_prod_commit(&qp->sq, 1);
		posted++;
	}
	uroce_spin_unlock(&qp->sq_lock);
	if (ret < 0 && bad_wr != NULL)
		*bad_wr = wr;
	if (posted > 0)
		uroce_qp_kick(qp);
	return ret;
}

int
uroce_qp_post_recv(struct uroce_qp *qp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	int ret = 0, posted = 0;
	uint32_t len;

	rte_spinlock_lock(&qp->rq_lock);
	for (; wr != NULL; wr = wr->next) {
		/* A QP with an SRQ has no RQ to post to (ibv_post_recv(3)),
		 * nor has an XRC QP (no receive CQ). */
		if (qp->post_state == IBV_QPS_RESET || qp->srq != NULL ||
		    qp->recv_cq == NULL)
			ret = -EINVAL;
		else
			ret = uroce_recv_wr_check(wr, qp->cap.max_recv_sge, &len);
		if (ret == 0 && uroce_ring_prod_avail(&qp->rq, 1) == 0)
			ret = -ENOMEM;
		if (ret < 0)
			break;
		uroce_recv_wqe_fill(uroce_ring_prod_slot(&qp->rq, 0), wr, len);
		uroce_ring_prod_commit(&qp->rq, 1);
		posted++;
	}
	uroce_spin_unlock(&qp->rq_lock);
	if (ret < 0 && bad_wr != NULL)
		*bad_wr = wr;
	/* In ERR a receive is flushed at once (by uroce_qp_tx). */
	if (posted > 0 && qp->post_state == IBV_QPS_ERR)
		uroce_qp_kick(qp);
	return ret;
}

/* ---------------------------------------------------------------------------
 * Errors, paths, time.
 */

/*
 * A QP with an SRQ that entered ERR has no WQE left that it will consume
 * (its own was flushed just before): IBV_EVENT_QP_LAST_WQE_REACHED (IBTA
 * 10.3.1, 11.6.3), so the application knows no completion of it can still
 * come and may destroy it.
 */
static void
uroce_qp_last_wqe(struct uroce_qp *qp)
{
	if (qp->srq != NULL)
		uroce_qp_async(qp, IBV_EVENT_QP_LAST_WQE_REACHED);
}

void
uroce_qp_async(struct uroce_qp *qp, enum ibv_event_type ev)
{
	const struct uroce_qp_env_ops *ops = qp->env->ops;

	if (ops != NULL && ops->async_event != NULL)
		ops->async_event(qp->env->ctx, ev, qp);
}

void
uroce_qp_to_err(struct uroce_qp *qp)
{
	if (qp->state == IBV_QPS_ERR)
		return;
	QP_LOG(INFO, qp, "-> ERR");
	qp->state = IBV_QPS_ERR;
	qp->attr.qp_state = IBV_QPS_ERR;
	qp->post_state = IBV_QPS_ERR;
	if (qp->resp != NULL) {
		/* Only an owed NAK still goes out (IBTA 10.3.1, Error). */
		qp->resp->res_cnt = 0;
		qp->resp->ack_owed = false;
	}
	uroce_qp_flush_sq(qp);
	uroce_qp_flush_rq(qp);
	uroce_qp_last_wqe(qp);
	uroce_qp_kick(qp);
}

void
uroce_qp_to_sqe(struct uroce_qp *qp)
{
	if (qp->state == IBV_QPS_SQE || qp->state == IBV_QPS_ERR)
		return;
	QP_LOG(INFO, qp, "-> SQE");
	qp->state = IBV_QPS_SQE;
	qp->attr.qp_state = IBV_QPS_SQE;
	qp->post_state = IBV_QPS_SQE;
	uroce_qp_flush_sq(qp);
}

uint64_t
uroce_qp_us_to_cycles(const struct uroce_qp *qp, uint64_t us)
{
	uint64_t hz = qp->env->tsc_hz;

	/* Split so that us * hz cannot overflow for any 5-bit timeout. */
	return (us / 1000000) * hz + (us % 1000000) * hz / 1000000;
}

static int
resolve(const struct uroce_qp *qp, struct uroce_l2l3 *l2l3)
{
	const struct uroce_qp_env_ops *ops = qp->env->ops;

	if (ops == NULL || ops->resolve == NULL)
		return 0;
	return ops->resolve(qp->env->ctx, l2l3);
}

bool
uroce_qp_path_ready(struct uroce_qp *qp, uint64_t now)
{
	if (qp->path_resolved)
		return true;
	if (qp->req.wait_at != UROCE_TIME_OFF && now < qp->req.wait_at)
		return false;
	if (resolve(qp, &qp->path) == 0) {
		qp->path_resolved = true;
		return true;
	}
	uroce_req_retry_wait(qp, now);
	return false;
}

/* ---------------------------------------------------------------------------
 * Modify.
 */

int
uroce_l2l3_from_ah(const struct uroce_qp_env *env,
		   const struct ibv_ah_attr *ah, struct uroce_l2l3 *l)
{
	const struct ibv_global_route *grh = &ah->grh;

	if (grh->sgid_index >= env->gid_cnt)
		return -EINVAL;
	memset(l, 0, sizeof(*l));
	memcpy(l->smac, env->mac, sizeof(l->smac));
	l->sgid = env->gid[grh->sgid_index];
	memcpy(l->dgid.raw, grh->dgid.raw, sizeof(l->dgid.raw));
	/* One IP header carries both: an IPv4 source and an IPv6
	 * destination (or the reverse) has no frame. */
	if (uroce_gid_is_v4(&l->sgid) != uroce_gid_is_v4(&l->dgid))
		return -EINVAL;
	l->tclass = uroce_wire_tclass(grh->traffic_class);
	l->hop_limit = grh->hop_limit;
	l->flow_label = grh->flow_label & 0xfffff;
	if (env->vlan) {
		/* The SL picks the 802.1p priority, as RoCE NICs map it. */
		l->vlan = true;
		l->vlan_tci = (uint16_t)(((ah->sl & 7) << 13) |
					 (env->vlan_id & 0xfff));
	}
	return 0;
}

/* The primary path from the address vector (ibv_modify_qp(3), ah_attr). */
static int
path_build(const struct uroce_qp *qp, const struct ibv_qp_attr *a,
	   struct uroce_l2l3 *p)
{
	int ret = uroce_l2l3_from_ah(qp->env, &a->ah_attr, p);

	if (ret == 0)
		p->udp_sport = uroce_wire_udp_sport(qp->qpn, a->dest_qp_num);
	/* With congestion control, RC and UC data leave ECN-capable. */
	if (ret == 0)
		p->ect = qp->env->cc && (qp->type == IBV_QPT_RC ||
					 qp->type == IBV_QPT_UC);
	return ret;
}

static bool
state_has_path(enum ibv_qp_state s)
{
	return s == IBV_QPS_RTR || s == IBV_QPS_RTS || s == IBV_QPS_SQD ||
	       s == IBV_QPS_SQE;
}

/* A QP moved to RESET leaves no completion behind on its CQs, as a NIC's
 * driver cleans them (mlx5 does; rdma-core's tests expect it): a program
 * that resets a QP to use it again must not poll its old flushes as new
 * work's. The reset's own completions below (an SRQ WQE it held) stay. */
static void
qp_clean_cqs(struct uroce_qp *qp)
{
	if (qp->send_cq != NULL && uroce_cq_clean(qp->send_cq, qp->qpn) != 0)
		QP_LOG(DEBUG, qp, "reset: its send CQ has too many cleans pending: its completions stay");
	if (qp->recv_cq != NULL && qp->recv_cq != qp->send_cq &&
	    uroce_cq_clean(qp->recv_cq, qp->qpn) != 0)
		QP_LOG(DEBUG, qp, "reset: its receive CQ has too many cleans pending: its completions stay");
}

static void
qp_reset(struct uroce_qp *qp)
{
	qp_clean_cqs(qp);
	qp->post_state = IBV_QPS_RESET;
	if (uroce_qp_on_tm_srq(qp))
		uroce_tm_qp_flush(qp, true, true);
	uroce_ring_cons_release(&qp->sq, uroce_ring_cons_avail(&qp->sq, UINT32_MAX));
	uroce_ring_cons_release(&qp->rq, uroce_ring_cons_avail(&qp->rq, UINT32_MAX));
	/* A WQE taken from the SRQ is not the SRQ's any more: it completes
	 * (flushed) rather than vanish with the QP's own queues. */
	if (qp->srq != NULL && qp->srq_held)
		uroce_qp_flush_rq(qp);
	uroce_req_reset(qp);
	if (qp->resp != NULL)
		uroce_resp_reset(qp);
	uroce_qp_cc_reset(qp);
	qp->path_resolved = false;
}

static void
modify_effects(struct uroce_qp *qp, enum ibv_qp_state cur,
	       enum ibv_qp_state next)
{
	uroce_req_attrs(qp);
	if (qp->resp != NULL)
		qp->resp->mtu = uroce_mtu_bytes(qp->attr.path_mtu);
	if (next == IBV_QPS_RESET) {
		qp_reset(qp);
		return;
	}
	if (next == IBV_QPS_ERR) {
		qp->state = cur;	/* so that to_err runs its course */
		uroce_qp_to_err(qp);
		return;
	}
	if (qp->resp != NULL && cur == IBV_QPS_INIT && next == IBV_QPS_RTR)
		uroce_resp_start(qp);
	if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS)
		uroce_req_start(qp);
	if (next == IBV_QPS_SQD && cur != IBV_QPS_SQD) {
		qp->req.sqd_notified = false;
		uroce_req_check_drained(qp);
	}
	qp->post_state = next;
	if ((cur == IBV_QPS_SQD || cur == IBV_QPS_SQE) && next == IBV_QPS_RTS)
		uroce_qp_kick(qp);
}

int
uroce_qp_modify(struct uroce_qp *qp, struct ibv_qp_attr *attr, int mask,
		uint64_t now)
{
	enum ibv_qp_state cur = qp->state, next;
	struct ibv_qp_attr tmp = qp->attr;
	struct uroce_l2l3 path;
	bool new_path = false, resolved = false;
	bool pace = (mask & IBV_QP_RATE_LIMIT) != 0;
	bool av = qp_types[qp->type].connected && (mask & IBV_QP_AV);
	struct uroce_tb_profile prof = { 0 }, sprof = { 0 };
	uint32_t skbps = 0;
	int ret;

	ret = uroce_qp_modify_check(&qp->env->lim, qp->type, cur, attr, mask);
	if (ret < 0)
		return ret;
	if (pace && attr->rate_limit != 0) {
		/* Default burst and typical size, as for the rate-limit verb. */
		struct ibv_qp_rate_limit_attr rl = { .rate_limit = attr->rate_limit };

		ret = uroce_qp_rate_limit_prepare(qp, &rl, &prof);
		if (ret < 0)
			return ret;
	}
	if (av) {
		ret = uroce_qp_static_rate_prepare(qp, attr->ah_attr.static_rate,
						   &skbps, &sprof);
		if (ret < 0)
			return ret;
	}
	next = cur;
	uroce_qp_modify_apply(&tmp, &next, attr, mask);
	if (qp_types[qp->type].connected && state_has_path(next) &&
	    (!state_has_path(cur) || (mask & (IBV_QP_AV | IBV_QP_DEST_QPN)))) {
		ret = path_build(qp, &tmp, &path);
		if (ret < 0)
			return ret;
		/* -EAGAIN: resolution under way, the QP asks again before it
		 * transmits; a failure fails the verb, as the kernel's does. */
		ret = resolve(qp, &path);
		if (ret < 0 && ret != -EAGAIN)
			return ret;
		new_path = true;
		resolved = ret == 0;
	}
	qp->attr = tmp;
	if (av) {
		qp->static_kbps = skbps;
		if (skbps != 0)
			qp->pace_static_prof = sprof;
	}
	if (pace)
		uroce_qp_rate_limit_apply(qp, attr->rate_limit, &prof, now);
	else if (av)
		uroce_qp_pace_cc(qp, now, true);
	qp->attr.cap.max_send_wr = qp->cap.max_send_wr;
	qp->attr.cap.max_recv_wr = qp->cap.max_recv_wr;
	qp->attr.cap.max_send_sge = qp->cap.max_send_sge;
	qp->attr.cap.max_recv_sge = qp->cap.max_recv_sge;
	qp->attr.cap.max_inline_data = qp->cap.max_inline_data;
	qp->state = next;
	if (new_path) {
		qp->path = path;
		qp->path_resolved = resolved;
	}
	if (cur != next)
		QP_LOG(DEBUG, qp, "%s modify %s -> %s",
		       uroce_qp_type_name(qp->type), uroce_qp_state_name(cur),
		       uroce_qp_state_name(next));
	modify_effects(qp, cur, next);
	return 0;
}

void
uroce_qp_query(const struct uroce_qp *qp, struct ibv_qp_attr *attr,
	       struct ibv_qp_init_attr *init)
{
	if (attr != NULL) {
		*attr = qp->attr;
		attr->qp_state = qp->state;
		attr->cur_qp_state = qp->state;
		attr->sq_draining = qp->state == IBV_QPS_SQD &&
				    qp->req.start_idx != qp->sq.tail;
	}
	if (init != NULL) {
		memset(init, 0, sizeof(*init));
		init->qp_type = qp->type;
		init->sq_sig_all = qp->sq_sig_all;
		init->cap.max_send_wr = qp->cap.max_send_wr;
		init->cap.max_recv_wr = qp->cap.max_recv_wr;
		init->cap.max_send_sge = qp->cap.max_send_sge;
		init->cap.max_recv_sge = qp->cap.max_recv_sge;
		init->cap.max_inline_data = qp->cap.max_inline_data;
	}
}

/* ---------------------------------------------------------------------------
 * Engine entry points.
 */

/* States in which a QP takes packets (IBTA 10.3.1: RTR and beyond; ERR
 * and the states before RTR drop them). */
static const bool rx_state_ok[IBV_QPS_ERR + 1] = {
	[IBV_QPS_RTR] = true,
	[IBV_QPS_RTS] = true,
	[IBV_QPS_SQD] = true,
	[IBV_QPS_SQE] = true,
};

/* P_Key match (IBTA ch. 10.9): the QP's P_Key is the default full member
 * 0xFFFF, which matches a full or a limited member of partition 0x7FFF. */
static bool
pkey_ok(uint16_t pkey)
{
	return (pkey & 0x7fff) == 0x7fff;
}

/* Whether the QP takes the frame at all; a drop is counted by reason. */
static bool
rx_admit(struct uroce_qp *qp, const struct uroce_pkt *pkt)
{
	uint64_t *why = NULL;

	if ((unsigned int)qp->state > IBV_QPS_ERR || !rx_state_ok[qp->state])
		why = &qp->stats.drop_state;
	else if (!qp_types[qp->type].wire ||
		 pkt->op->transport != qp_types[qp->type].transport ||
		 ((pkt->op->flags & UROCE_OPF_REQ) && !qp_types[qp->type].rx_req))
		why = &qp->stats.drop_opcode;
	else if (!pkey_ok(pkt->bth.pkey))
		why = &qp->stats.drop_pkey;
	if (why == NULL)
		return true;
	(*why)++;
	qp->stats.drops++;
	return false;
}

void
uroce_qp_rx(struct uroce_qp *qp, const struct uroce_pkt *pkt,
	    struct rte_mbuf *m, uint64_t now, struct uroce_txb *txb)
{
	const struct uroce_opcode_info *op = pkt->op;

	(void)m;
	qp->stats.rx_pkts++;
	qp->stats.rx_bytes += pkt->frame_len;
	/* RoCEv2 congestion management (A17.9, qp_cc.c): a CNP is for the
	 * reaction point; a CE mark on a path with ECN for the notification
	 * point, and the frame goes on as any other. */
	if (unlikely(op->kind == UROCE_OP_CNP)) {
		uroce_qp_cnp_rx(qp, pkt, now);
		return;
	}
	if (!rx_admit(qp, pkt))
		return;
	if (unlikely(uroce_pkt_ecn(pkt) == UROCE_ECN_CE) && qp->path.ect)
		uroce_qp_ce_rx(qp, now);
	if (qp->type == IBV_QPT_UD) {
		uroce_ud_rx(qp, pkt, now);
		return;
	}
	if (op->flags & UROCE_OPF_RESP) {
		if (!uroce_qp_initiator(qp) || qp->state == IBV_QPS_RTR) {
			qp->stats.drops++;
			if (!uroce_qp_initiator(qp))
				qp->stats.drop_opcode++;
			else
				qp->stats.drop_state++;
			return;
		}
		uroce_comp_rx(qp, pkt, now);
		uroce_qp_kick(qp);
		return;
	}
	uroce_resp_rx(qp, pkt, now, txb);
}

bool
uroce_qp_tx_owed(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb)
{
	if (qp->resp == NULL || qp->state == IBV_QPS_RESET ||
	    qp->state == IBV_QPS_INIT)
		return false;
	return uroce_resp_tx(qp, now, txb);
}

bool
uroce_qp_tx(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb)
{
	bool more = false;

	switch (qp->state) {
	case IBV_QPS_RESET:
	case IBV_QPS_INIT:
		return false;
	case IBV_QPS_ERR:
		/* Owed NAKs still go out, then whatever was posted since
		 * is flushed. */
		if (qp->resp != NULL)
			more = uroce_resp_tx(qp, now, txb);
		uroce_qp_flush_sq(qp);
		uroce_qp_flush_rq(qp);
		return more;
	default:
		break;
	}
	if (qp->resp != NULL) {
		more = uroce_resp_tx(qp, now, txb);
		if (more)
			return true;
	}
	if (qp->state == IBV_QPS_SQE) {
		uroce_qp_flush_sq(qp);
		return false;
	}
	if (qp->type == IBV_QPT_UD)
		return uroce_ud_tx(qp, now, txb);
	if (qp->type == IBV_QPT_RAW_PACKET)
		return uroce_raw_tx(qp, now, txb);
	if (qp->state == IBV_QPS_RTS || qp->state == IBV_QPS_SQD)
		return uroce_req_tx(qp, now, txb);
	return false;
}

void
uroce_qp_timer(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb)
{
	uroce_req_timer(qp, now);
	if (unlikely(qp->cc_rp.active) && now >= qp->cc_rp.timer_at)
		uroce_qp_cc_timer(qp, now);
	if (uroce_qp_tx(qp, now, txb))
		uroce_qp_kick(qp);
}

uint64_t
uroce_qp_deadline(const struct uroce_qp *qp)
{
	/* The responder has no timer: it ACKs as requests arrive. DCQCN's
	 * rate-increase timer runs while it limits the QP (qp_cc.c). */
	uint64_t dl = uroce_req_deadline(qp);

	if (unlikely(qp->cc_rp.active))
		dl = RTE_MIN(dl, qp->cc_rp.timer_at);
	return dl;
}

/* can_send() and uroce_dgram_tx() return at once before wait_at, and
 * uroce_qp_tx() calls the responder first only for what it owes. */
bool
uroce_qp_tx_waits(const struct uroce_qp *qp, uint64_t now)
{
	return qp->state == IBV_QPS_RTS && !qp->resp_owed &&
	       qp->req.wait_at != UROCE_TIME_OFF && now < qp->req.wait_at;
}

uint64_t
uroce_qp_deadline_latest(const struct uroce_qp *qp, uint64_t dl)
{
	const struct uroce_requester *req = &qp->req;

	/* Only the wait for tokens has room, up to an RNR wait's end (an
	 * unset one is UROCE_TIME_OFF, which bounds the sum); retries, RNR
	 * and ACK timeouts have none. */
	if (dl != req->wait_at || req->stop != UROCE_REQ_STOP_TOKENS ||
	    dl >= req->rnr_at)
		return dl;
	return dl + RTE_MIN(req->pace_late, req->rnr_at - dl);
}
