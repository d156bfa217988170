/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * RC QPs on a tag-matching SRQ (tag_matching.md): the SRQ type's rules,
 * ibv_post_srq_ops() on the owner, and the receive side of the protocol.
 *
 * A SEND's first packet is looked at by uroce_tm_rx() before the responder
 * takes a receive WQE for it:
 *  - IBV_TMH_NO_TAG: the whole message to a plain SRQ receive, completed
 *    as IBV_WC_TM_NO_TAG;
 *  - EAGER or RNDV matching no eligible tag, and FIN: unexpected, the whole
 *    message (headers too) to a plain receive, IBV_WC_TM_RECV with neither
 *    MATCH nor DATA_VALID; the phase advances (uroce_tm.h);
 *  - EAGER matching a tag: the payload after the TMH to the tagged buffer.
 *    One packet: one IBV_WC_TM_RECV with MATCH | DATA_VALID; more: MATCH
 *    at the first, DATA_VALID (with the length) at the last;
 *  - RNDV matching a tag whose buffer holds RVH.len bytes: the QP's send
 *    queue, which the TM-SRQ owns for this (tag_matching.md, "the
 *    ownership of the QP's Send Queue is passed to the TM-SRQ"), gets two
 *    internal WQEs: an RDMA READ of the sender's buffer into the tagged
 *    buffer, then a fenced SEND of the FIN (the request's TMH and RVH with
 *    opcode IBV_TMH_FIN), which the fence holds until the READ completed.
 *    IBV_WC_TM_RECV with MATCH now, with DATA_VALID when the READ
 *    completes. Without two free send slots the request gets an RNR NAK
 *    (nothing consumed). A buffer too small: IBV_WC_TM_RNDV_INCOMPLETE
 *    with the TMH and RVH scattered into it, and software takes over;
 *  - a malformed TMH/RVH: NAK Invalid Request (IBTA 9.9.3), counted.
 * Every TM completion goes to the SRQ's CQ (the QP's recv_cq is the SRQ's
 * CQ); receive completions never carry IBV_WC_TM_SYNC_REQ, which only the
 * tag operations' completions do (tag_matching.md).
 *
 * All of it runs on the owner lcore of the SRQ's CQ, which owns every QP
 * on the SRQ (the engine places them so): matching needs no lock.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>

#include "qp_priv.h"
#include "srq_priv.h"
#include "uroce_tm.h"

#define FIN_LEN	UROCE_TM_FIN_LEN
_Static_assert(UROCE_TM_FIN_LEN == sizeof(struct ibv_tmh) + sizeof(struct ibv_rvh),
	       "a FIN is a TMH and an RVH");

static struct uroce_tm *
tm_of(const struct uroce_qp *qp)
{
	return qp->srq->type_priv;
}

/* ---------------------------------------------------------------------------
 * The SRQ type.
 */
static int
tm_check(const struct uroce_qp_env *env, const struct uroce_srq_init *init)
{
	(void)env;
	/* A TM-SRQ reports to its own CQ (tag_matching.md, "TM-SRQ creation"). */
	if (init->cq == NULL)
		return -EINVAL;
	if (init->tm_cap.max_num_tags == 0 ||
	    init->tm_cap.max_num_tags > UROCE_TM_MAX_TAGS ||
	    init->tm_cap.max_ops == 0 || init->tm_cap.max_ops > UROCE_TM_MAX_OPS)
		return -EINVAL;
	return 0;
}

static int
tm_init(struct uroce_srq *srq, const struct uroce_srq_init *init)
{
	struct ibv_tm_cap cap = init->tm_cap;
	struct uroce_tm *tm;
	int ret = uroce_tm_create(&cap, &tm);

	if (ret == 0)
		srq->type_priv = tm;
	return ret;
}

static void
tm_fini(struct uroce_srq *srq)
{
	uroce_tm_destroy(srq->type_priv);
	srq->type_priv = NULL;
}

const struct uroce_srq_type uroce_srq_type_tm = {
	.name = "tm",
	.check = tm_check,
	.init = tm_init,
	.fini = tm_fini,
};

/* A completion on the SRQ's CQ from the SRQ itself (ops). */
static void
srq_cq_push(void *ctx, const struct ibv_wc *wc)
{
	struct uroce_srq *srq = ctx;
	const struct uroce_qp_env_ops *ops = srq->env->ops;
	int ret = uroce_cq_push(srq->cq, wc);

	if (ret == -ENOSPC && ops != NULL && ops->async_event != NULL)
		ops->async_event(srq->env->ctx, IBV_EVENT_CQ_ERR, srq->cq);
	else if (ret == 0 && uroce_cq_should_notify(srq->cq, wc, false) &&
		 ops != NULL && ops->cq_event != NULL)
		ops->cq_event(srq->env->ctx, srq->cq);
}

int
uroce_srq_post_ops(struct uroce_srq *srq, struct ibv_ops_wr *wr,
		   struct ibv_ops_wr **bad_wr)
{
	if (srq->type != IBV_SRQT_TM) {
		if (bad_wr != NULL)
			*bad_wr = wr;
		return -EINVAL;
	}
	return uroce_tm_post_ops(srq->type_priv, wr, bad_wr, srq_cq_push, srq);
}

/* ---------------------------------------------------------------------------
 * Tagged buffers.
 */
static void
tag_complete(struct uroce_qp *qp, uint32_t slot, enum ibv_wc_status status,
	     unsigned int flags, uint32_t len, bool final)
{
	struct uroce_tm *tm = tm_of(qp);
	struct ibv_wc wc;

	uroce_tm_wc_recv(&tm->tags[slot], status, flags, len, &wc);
	wc.qp_num = qp->qpn;
	if (final)
		uroce_tm_release(tm, slot);
	uroce_qp_complete(qp, qp->recv_cq, &wc, false);
}

/* Scatter into a tagged buffer (its lkey is the SRQ's PD's). */
static int
tag_scatter(const struct uroce_qp *qp, const struct uroce_tm_tag *t,
	    uint32_t off, const void *src, uint32_t len)
{
	if (len == 0)
		return 0;
	if ((uint64_t)off + len > t->sge.length)
		return -EMSGSIZE;
	return uroce_pd_scatter(qp, qp->srq->pd, &t->sge, 1, off, src, len);
}

/* The data of a matched EAGER message (any packet). */
static enum uroce_tm_rx
eager_data(struct uroce_qp *qp, const uint8_t *src, uint32_t len, bool last,
	   uint8_t *code)
{
	struct uroce_responder *r = qp->resp;
	struct uroce_tm *tm = tm_of(qp);
	const struct uroce_tm_tag *t = &tm->tags[r->tm_slot];
	int ret = tag_scatter(qp, t, r->rcv_off, src, len);

	if (ret < 0) {
		/* As a plain receive too short or not writable (IBTA 9.9.3). */
		*code = ret == -EMSGSIZE ? UROCE_NAK_INV_REQ : UROCE_NAK_REM_OP;
		r->err_wc = true;	/* the completion reports it */
		tag_complete(qp, r->tm_slot, ret == -EMSGSIZE ?
			     IBV_WC_LOC_LEN_ERR : IBV_WC_LOC_PROT_ERR,
			     r->tm_flags, 0, true);
		r->tm_mode = UROCE_TMM_NONE;
		return UROCE_TM_RX_NAK;
	}
	r->rcv_off += len;
	if (last) {
		tag_complete(qp, r->tm_slot, IBV_WC_SUCCESS,
			     r->tm_flags | IBV_WC_TM_DATA_VALID, r->rcv_off, true);
		r->tm_mode = UROCE_TMM_NONE;
		r->rcv_off = 0;
		r->msn++;
	}
	return UROCE_TM_RX_OK;
}

static enum uroce_tm_rx
eager_first(struct uroce_qp *qp, const struct uroce_pkt *pkt,
	    const struct uroce_tm_msg *msg, uint32_t slot, uint8_t *code)
{
	struct uroce_responder *r = qp->resp;
	bool last = pkt->op->flags & UROCE_OPF_LAST;
	uint32_t hdr = uroce_tm_hdr_len(msg->op);

	uroce_tm_take(tm_of(qp), slot, msg);
	r->tm_mode = UROCE_TMM_TAGGED;
	r->tm_slot = slot;
	r->rcv_off = 0;
	r->tm_flags = IBV_WC_TM_MATCH;
	if (!last) {
		/* The match is reported at once (tag_matching.md). */
		tag_complete(qp, slot, IBV_WC_SUCCESS, IBV_WC_TM_MATCH, 0, false);
		r->tm_flags = 0;
	}
	return eager_data(qp, uroce_pkt_payload(pkt) + hdr,
			  pkt->payload_len - hdr, last, code);
}

/* The two WQEs a matched rendezvous puts on the QP's send queue, or false
 * when it has no room for both (nothing written). */
static bool
rndv_post(struct uroce_qp *qp, uint32_t slot, const struct uroce_tm_msg *msg)
{
	const struct uroce_tm_tag *t = &tm_of(qp)->tags[slot];
	struct uroce_tm_msg fin = *msg;
	struct uroce_send_wqe *w;
	bool ok;

	rte_spinlock_lock(&qp->sq_lock);
	ok = uroce_ring_prod_avail(&qp->sq, 2) >= 2;
	if (ok) {
		w = uroce_ring_prod_slot(&qp->sq, 0);
		memset(w, 0, sizeof(*w));
		w->wr_id = slot;
		w->opcode = IBV_WR_RDMA_READ;
		w->send_flags = UROCE_SEND_TM_RNDV;
		w->num_sge = 1;
		w->length = msg->len;
		w->remote_addr = msg->va;
		w->rkey = msg->rkey;
		memcpy(w->data, &t->sge, sizeof(t->sge));
		((struct ibv_sge *)w->data)->length = msg->len;
		w = uroce_ring_prod_slot(&qp->sq, 1);
		memset(w, 0, sizeof(*w));
		w->wr_id = slot;
		w->opcode = IBV_WR_SEND;
		/* The fence keeps the FIN behind the READ's data (IBTA 9.4). */
		w->send_flags = UROCE_SEND_TM_FIN | IBV_SEND_INLINE | IBV_SEND_FENCE;
		w->length = FIN_LEN;
		fin.op = IBV_TMH_FIN;
		uroce_tm_build(&fin, w->data);
		uroce_ring_prod_commit(&qp->sq, 2);
	}
	rte_spinlock_unlock(&qp->sq_lock);
	if (ok)
		uroce_qp_kick(qp);
	return ok;
}

static enum uroce_tm_rx
rndv_first(struct uroce_qp *qp, const struct uroce_pkt *pkt,
	   const struct uroce_tm_msg *msg, uint32_t slot, uint8_t *code)
{
	struct uroce_responder *r = qp->resp;
	struct uroce_tm *tm = tm_of(qp);
	const struct uroce_tm_tag *t = &tm->tags[slot];
	uint32_t n;

	if (msg->len > t->sge.length) {
		/* Software takes over: the headers into the buffer. */
		uroce_tm_take(tm, slot, msg);
		n = RTE_MIN((uint32_t)FIN_LEN, t->sge.length);
		if (tag_scatter(qp, t, 0, uroce_pkt_payload(pkt), n) < 0) {
			tag_complete(qp, slot, IBV_WC_LOC_PROT_ERR,
				     IBV_WC_TM_MATCH, 0, true);
			r->err_wc = true;	/* the completion reports it */
			*code = UROCE_NAK_REM_OP;
			return UROCE_TM_RX_NAK;
		}
		tag_complete(qp, slot, IBV_WC_TM_RNDV_INCOMPLETE,
			     IBV_WC_TM_MATCH, n, true);
	} else {
		if (!rndv_post(qp, slot, msg))
			return UROCE_TM_RX_RNR;
		uroce_tm_take(tm, slot, msg);
		tag_complete(qp, slot, IBV_WC_SUCCESS, IBV_WC_TM_MATCH, 0, false);
	}
	/* The meta-data after the RVH is software's: discarded. */
	r->tm_mode = UROCE_TMM_DISCARD;
	if (pkt->op->flags & UROCE_OPF_LAST) {
		r->tm_mode = UROCE_TMM_NONE;
		r->msn++;
	}
	return UROCE_TM_RX_OK;
}

/* To a plain SRQ receive, as rx_send() does; a receive must be there. */
static enum uroce_tm_rx
plain_first(struct uroce_qp *qp, const struct uroce_tm_msg *msg)
{
	if (uroce_qp_rwqe(qp) == NULL)
		return UROCE_TM_RX_RNR;
	if (msg->op == IBV_TMH_NO_TAG) {
		tm_of(qp)->stats.no_tag++;
		qp->resp->tm_mode = UROCE_TMM_NO_TAG;
	} else {
		uroce_tm_unexpected(tm_of(qp));
		qp->resp->tm_mode = UROCE_TMM_NONE;
	}
	return UROCE_TM_RX_PLAIN;
}

enum uroce_tm_rx
uroce_tm_rx(struct uroce_qp *qp, const struct uroce_pkt *pkt, bool len_ok,
	    uint8_t *code)
{
	struct uroce_responder *r = qp->resp;
	bool last = pkt->op->flags & UROCE_OPF_LAST;
	struct uroce_tm_msg msg;
	uint32_t slot;

	*code = UROCE_NAK_INV_REQ;
	if (!(pkt->op->flags & UROCE_OPF_FIRST)) {
		if (r->tm_mode == UROCE_TMM_TAGGED)
			return len_ok ? eager_data(qp, uroce_pkt_payload(pkt),
						   pkt->payload_len, last, code) :
				UROCE_TM_RX_NAK;
		if (r->tm_mode != UROCE_TMM_DISCARD)
			return UROCE_TM_RX_PLAIN;
		if (!len_ok)
			return UROCE_TM_RX_NAK;
		if (last) {
			r->tm_mode = UROCE_TMM_NONE;
			r->msn++;
		}
		return UROCE_TM_RX_OK;
	}
	if (!len_ok)
		return UROCE_TM_RX_NAK;
	if (uroce_tm_parse(uroce_pkt_payload(pkt), pkt->payload_len, &msg) < 0) {
		tm_of(qp)->stats.bad_hdr++;
		QP_LOG(INFO, qp, "malformed tag-matching header (PSN %u)",
		       pkt->bth.psn);
		return UROCE_TM_RX_NAK;
	}
	slot = uroce_tm_match(tm_of(qp), &msg);
	if (slot == UROCE_TM_NIL)
		return plain_first(qp, &msg);
	if (msg.op == IBV_TMH_RNDV)
		return rndv_first(qp, pkt, &msg, slot, code);
	return eager_first(qp, pkt, &msg, slot, code);
}

/*
 * A message to a plain SRQ receive: NO_TAG as IBV_WC_TM_NO_TAG, an
 * unexpected one as IBV_WC_TM_RECV with neither MATCH nor DATA_VALID (what
 * rdma-core's tests and mlx5 give; tag_matching.md says IBV_WC_RECV), both
 * with no tag information (a tag 0).
 */
void
uroce_tm_rx_plain_wc(const struct uroce_qp *qp, struct ibv_wc *wc)
{
	if (wc->opcode != IBV_WC_RECV)
		return;		/* RDMA WRITE with immediate: as plain SRQs */
	wc->opcode = qp->resp->tm_mode == UROCE_TMM_NO_TAG ? IBV_WC_TM_NO_TAG :
		     IBV_WC_TM_RECV;
	uroce_tm_wc_set_info(wc, 0, 0);
	qp->resp->tm_mode = UROCE_TMM_NONE;
}

/* ---------------------------------------------------------------------------
 * The internal send WQEs' completions.
 */
bool
uroce_tm_sq_wc(struct uroce_qp *qp, const struct uroce_send_wqe *w,
	       enum ibv_wc_status status, struct ibv_wc *wc,
	       struct uroce_cq **cq)
{
	struct uroce_tm *tm = tm_of(qp);
	uint32_t slot = (uint32_t)w->wr_id;

	/* The FIN is the TM-SRQ's own message: nobody to tell. */
	if (w->send_flags & UROCE_SEND_TM_FIN)
		return false;
	uroce_tm_wc_recv(&tm->tags[slot], status,
			 status == IBV_WC_SUCCESS ? IBV_WC_TM_DATA_VALID : 0,
			 status == IBV_WC_SUCCESS ? w->length : 0, wc);
	wc->qp_num = qp->qpn;
	uroce_tm_release(tm, slot);
	*cq = qp->recv_cq;
	return true;
}

/* ---------------------------------------------------------------------------
 * A QP leaving: its tagged buffers are the SRQ's, so they do not vanish
 * with the QP's queues (as a WQE taken from a plain SRQ, srq.c).
 */
void
uroce_tm_qp_flush(struct uroce_qp *qp, bool sq, bool complete)
{
	struct uroce_responder *r = qp->resp;
	struct uroce_tm *tm = tm_of(qp);
	uint32_t i, n;

	/* An eager message in progress: its MATCH may be out already. */
	if (r->tm_mode == UROCE_TMM_TAGGED) {
		if (complete)
			tag_complete(qp, r->tm_slot, IBV_WC_WR_FLUSH_ERR,
				     r->tm_flags, 0, true);
		else
			uroce_tm_release(tm, r->tm_slot);
	}
	r->tm_mode = UROCE_TMM_NONE;
	if (!sq)
		return;
	/* Rendezvous READs not done: flushed (RESET, destroy drop the SQ
	 * without completions; ERR flushes it through uroce_sq_complete_tail). */
	n = uroce_ring_cons_avail(&qp->sq, UINT32_MAX);
	for (i = 0; i < n; i++) {
		const struct uroce_send_wqe *w = uroce_sq_wqe(qp, qp->sq.tail + i);
		struct uroce_cq *cq;
		struct ibv_wc wc;

		if (!(w->send_flags & UROCE_SEND_TM_RNDV))
			continue;
		if (uroce_tm_sq_wc(qp, w, IBV_WC_WR_FLUSH_ERR, &wc, &cq) &&
		    complete)
			uroce_qp_complete(qp, cq, &wc, false);
	}
}
