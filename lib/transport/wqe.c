/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Gather and scatter through SGEs, completions, flushes, and frame
 * building: the pieces the requester, completer, responder and UD share.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_mbuf.h>

#include "qp_priv.h"
#include "uroce_memguard.h"

/* ---------------------------------------------------------------------------
 * Gather (send WQEs) and scatter (receive WQEs, READ responses).
 */
/*
 * Copy len bytes between buf and the memory the SGE list names, starting
 * off bytes into the list: into the SGEs (scatter, which needs
 * LOCAL_WRITE) or out of them (gather: local read is always allowed,
 * ibv_reg_mr(3)). -EMSGSIZE when the list is shorter than off + len.
 */
static int
sge_copy(const struct uroce_qp *qp, const void *pd, const struct ibv_sge *sge,
	 uint32_t num_sge, uint32_t off, void *buf, uint32_t len, bool to_sge)
{
	unsigned int need = to_sge ? IBV_ACCESS_LOCAL_WRITE : 0;
	uint8_t *b = buf;
	unsigned int i;

	for (i = 0; i < num_sge && len > 0; i++) {
		uint32_t n;
		void *host;
		int ret;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		n = RTE_MIN(sge[i].length - off, len);
		ret = uroce_mr_check_local(qp->env->mrs, pd, sge[i].lkey,
					   sge[i].addr + off, n, need, &host);
		/* Memory unmapped since the registration faults: a
		 * protection error as a bad key (uroce_memguard.h). */
		if (ret == 0)
			ret = to_sge ? uroce_memguard_copy(host, b, n, host) :
				       uroce_memguard_copy(b, host, n, host);
		if (ret < 0)
			return ret;
		b += n;
		len -= n;
		off = 0;
	}
	return len == 0 ? 0 : -EMSGSIZE;
}

int
uroce_wqe_gather(const struct uroce_qp *qp, const struct uroce_send_wqe *w,
		 uint32_t off, void *dst, uint32_t len)
{
	if (w->send_flags & IBV_SEND_INLINE) {
		memcpy(dst, w->data + off, len);
		return 0;
	}
	return sge_copy(qp, qp->pd, (const struct ibv_sge *)w->data,
			w->num_sge, off, dst, len, false);
}

int
uroce_sge_scatter(const struct uroce_qp *qp, const struct ibv_sge *sge,
		  uint32_t num_sge, uint32_t off, const void *src, uint32_t len)
{
	return sge_copy(qp, qp->pd, sge, num_sge, off, (void *)(uintptr_t)src,
			len, true);
}

int
uroce_pd_scatter(const struct uroce_qp *qp, const void *pd,
		 const struct ibv_sge *sge, uint32_t num_sge, uint32_t off,
		 const void *src, uint32_t len)
{
	return sge_copy(qp, pd, sge, num_sge, off, (void *)(uintptr_t)src, len,
			true);
}

/* The PD of a send WQE's SGEs: a rendezvous READ (tm_rx.c) lands in a
 * tagged buffer, registered in the TM-SRQ's PD. */
static const void *
wqe_pd(const struct uroce_qp *qp, const struct uroce_send_wqe *w)
{
	return (w->send_flags & UROCE_SEND_TM_RNDV) ? qp->srq->pd : qp->pd;
}

int
uroce_wqe_scatter(const struct uroce_qp *qp, const struct uroce_send_wqe *w,
		  uint32_t off, const void *src, uint32_t len)
{
	return sge_copy(qp, wqe_pd(qp, w), (const struct ibv_sge *)w->data,
			w->num_sge, off, (void *)(uintptr_t)src, len, true);
}

/* ---------------------------------------------------------------------------
 * Receive WQEs: the QP's RQ, or its SRQ.
 */
int
uroce_rwqe_scatter(const struct uroce_qp *qp, const struct uroce_recv_wqe *rw,
		   uint32_t off, const void *src, uint32_t len)
{
	/* An SRQ's WQEs are the SRQ's PD's (IBTA 10.2.9: the QP and the SRQ
	 * may be in different PDs). */
	const void *pd = qp->srq != NULL ? qp->srq->pd : qp->pd;

	return sge_copy(qp, pd, rw->sge, rw->num_sge, off,
			(void *)(uintptr_t)src, len, true);
}

const struct uroce_recv_wqe *
uroce_qp_rwqe(struct uroce_qp *qp)
{
	if (qp->srq == NULL)
		return uroce_ring_cons_avail(&qp->rq, 1) == 0 ? NULL :
		       uroce_rq_wqe(qp, qp->rq.tail);
	if (!qp->srq_held) {
		if (!uroce_srq_take(qp->srq, qp->srq_wqe))
			return NULL;
		qp->srq_held = true;
		qp->stats.srq_taken++;
	}
	return qp->srq_wqe;
}

void
uroce_qp_rwqe_done(struct uroce_qp *qp)
{
	if (qp->srq == NULL)
		uroce_ring_cons_release(&qp->rq, 1);
	else
		qp->srq_held = false;
}

int
uroce_recv_wr_check(const struct ibv_recv_wr *wr, uint32_t max_sge,
		    uint32_t *len)
{
	uint64_t sum = 0;
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		sum += uroce_sge_at(wr->sg_list, i).length;
	*len = (uint32_t)RTE_MIN(sum, (uint64_t)UINT32_MAX);
	return 0;
}

void
uroce_recv_wqe_fill(struct uroce_recv_wqe *r, const struct ibv_recv_wr *wr,
		    uint32_t len)
{
	r->wr_id = wr->wr_id;
	r->num_sge = (uint32_t)wr->num_sge;
	r->length = len;
	if (wr->num_sge > 0)
		memcpy(r->sge, wr->sg_list, wr->num_sge * sizeof(struct ibv_sge));
}

int
uroce_wqe_check(const struct uroce_qp *qp, const struct uroce_send_wqe *w)
{
	const struct ibv_sge *sge = (const struct ibv_sge *)w->data;
	/* Atomics write the original value into their SGE. */
	unsigned int need = uroce_wqe_is_rd_atomic(w) ? IBV_ACCESS_LOCAL_WRITE : 0;
	unsigned int i;
	void *host;
	int ret;

	if (w->send_flags & IBV_SEND_INLINE)
		return 0;
	for (i = 0; i < w->num_sge; i++) {
		ret = uroce_mr_check_local(qp->env->mrs, wqe_pd(qp, w),
					   sge[i].lkey, sge[i].addr,
					   sge[i].length, need, &host);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* ---------------------------------------------------------------------------
 * Completions.
 */

/* ibv_wc opcode of each send WR opcode (ibv_poll_cq(3)). */
static const enum ibv_wc_opcode send_wc_opcode[] = {
	[IBV_WR_RDMA_WRITE] = IBV_WC_RDMA_WRITE,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = IBV_WC_RDMA_WRITE,
	[IBV_WR_SEND] = IBV_WC_SEND,
	[IBV_WR_SEND_WITH_IMM] = IBV_WC_SEND,
	[IBV_WR_RDMA_READ] = IBV_WC_RDMA_READ,
	[IBV_WR_ATOMIC_CMP_AND_SWP] = IBV_WC_COMP_SWAP,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = IBV_WC_FETCH_ADD,
	[IBV_WR_LOCAL_INV] = IBV_WC_LOCAL_INV,
	[IBV_WR_BIND_MW] = IBV_WC_BIND_MW,
	[IBV_WR_SEND_WITH_INV] = IBV_WC_SEND,
};

void
uroce_send_wc(const struct uroce_qp *qp, const struct uroce_send_wqe *w,
	      enum ibv_wc_status status, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = w->wr_id;
	wc->status = status;
	if (w->opcode < RTE_DIM(send_wc_opcode))
		wc->opcode = send_wc_opcode[w->opcode];
	wc->byte_len = w->length;
	wc->qp_num = qp->qpn;
}

void
uroce_qp_complete(struct uroce_qp *qp, struct uroce_cq *cq,
		  const struct ibv_wc *wc, bool solicited)
{
	const struct uroce_qp_env_ops *ops = qp->env->ops;
	int ret = uroce_cq_push(cq, wc);

	if (ret == -ENOSPC) {
		/* ibv_poll_cq(3): an overrun raises IBV_EVENT_CQ_ERR, once. */
		QP_LOG(ERR, qp, "CQ overrun, completion of wr_id %" PRIu64
		       " lost", wc->wr_id);
		if (ops != NULL && ops->async_event != NULL)
			ops->async_event(qp->env->ctx, IBV_EVENT_CQ_ERR, cq);
		return;
	}
	if (ret == 0 && uroce_cq_should_notify(cq, wc, solicited) &&
	    ops != NULL && ops->cq_event != NULL)
		ops->cq_event(qp->env->ctx, cq);
}

void
uroce_sq_complete_tail(struct uroce_qp *qp, enum ibv_wc_status status)
{
	const struct uroce_send_wqe *w = uroce_sq_wqe(qp, qp->sq.tail);
	struct uroce_cq *cq = qp->send_cq;
	struct ibv_wc wc;
	bool due;

	if (w->send_flags & UROCE_SEND_TM_MASK) {
		due = uroce_tm_sq_wc(qp, w, status, &wc, &cq);
	} else {
		due = status != IBV_WC_SUCCESS || uroce_wqe_signaled(qp, w);
		if (due)
			uroce_send_wc(qp, w, status, &wc);
	}
	/* The slot is free before the completion is visible: an application
	 * that polls it and posts at once finds room. */
	uroce_ring_cons_release(&qp->sq, 1);
	if (due)
		uroce_qp_complete(qp, cq, &wc, false);
}

void
uroce_qp_flush_sq(struct uroce_qp *qp)
{
	uint32_t n = uroce_ring_cons_avail(&qp->sq, UINT32_MAX);
	uint32_t i;

	/* A flushed WR completes signaled or not: unsuccessful completions
	 * are always generated (IBTA ch. 10.8, ibv_post_send(3)). */
	for (i = 0; i < n; i++)
		uroce_sq_complete_tail(qp, IBV_WC_WR_FLUSH_ERR);
	qp->req.start_idx = qp->sq.tail;
	qp->req.tx_idx = qp->sq.tail;
	qp->req.tx_psn = qp->req.next_psn;
	qp->req.una = qp->req.next_psn;
	qp->req.rd_started = 0;
	qp->req.rto_at = UROCE_TIME_OFF;
	qp->req.rnr_at = UROCE_TIME_OFF;
}

static void
flush_rwqe(struct uroce_qp *qp, uint64_t wr_id)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = wr_id;
	wc.status = IBV_WC_WR_FLUSH_ERR;
	wc.opcode = IBV_WC_RECV;
	wc.qp_num = qp->qpn;
	uroce_qp_complete(qp, qp->recv_cq, &wc, false);
}

void
uroce_qp_flush_rq(struct uroce_qp *qp)
{
	uint32_t n = uroce_ring_cons_avail(&qp->rq, UINT32_MAX);
	uint32_t i;

	for (i = 0; i < n; i++) {	/* each slot freed before its CQE */
		uint64_t wr_id = uroce_rq_wqe(qp, qp->rq.tail)->wr_id;

		uroce_ring_cons_release(&qp->rq, 1);
		flush_rwqe(qp, wr_id);
	}
	if (uroce_qp_on_tm_srq(qp) && qp->resp != NULL)
		uroce_tm_qp_flush(qp, false, true);
	/* The WQE taken from the SRQ is this QP's: it completes here. The
	 * SRQ's own stay for the other QPs (ibv_create_qp(3), IBTA 10.2.9). */
	if (qp->srq != NULL && qp->srq_held) {
		qp->srq_held = false;
		flush_rwqe(qp, qp->srq_wqe->wr_id);
	}
	if (qp->resp != NULL) {
		qp->resp->rcv_off = 0;
		qp->resp->seq = UROCE_SEQ_NONE;
	}
}

/* ---------------------------------------------------------------------------
 * Frames.
 */
uint32_t
uroce_frame_len(const struct uroce_l2l3 *l2l3, uint8_t opcode, uint32_t plen)
{
	return uroce_wire_hdrs_len(l2l3, opcode) + plen +
	       uroce_wire_trailer_len(plen);
}

struct rte_mbuf *
uroce_frame_alloc(struct uroce_qp *qp, const struct uroce_l2l3 *l2l3,
		  uint8_t opcode, uint32_t plen, uint8_t **payload)
{
	uint32_t hl = uroce_wire_hdrs_len(l2l3, opcode);
	uint32_t len = hl + plen + uroce_wire_trailer_len(plen);
	struct rte_mbuf *m = rte_pktmbuf_alloc(qp->env->pool);

	if (m == NULL)
		return NULL;
	if (rte_pktmbuf_tailroom(m) < len) {
		QP_LOG(ERR, qp, "frame of %u bytes does not fit an mbuf", len);
		rte_pktmbuf_free(m);
		return NULL;
	}
	*payload = rte_pktmbuf_mtod(m, uint8_t *) + hl;
	return m;
}

unsigned int
uroce_frame_tx_ol(const struct uroce_qp *qp, struct rte_mbuf *m,
		  const struct uroce_l2l3 *l2l3)
{
	uint8_t l2;
	uint16_t l3;

	if (!qp->env->tx_ip_cksum || !uroce_wire_tx_ol(l2l3, &l2, &l3))
		return 0;
	m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
	m->l2_len = l2;
	m->l3_len = l3;
	return UROCE_WIRE_IP_CKSUM_OL;
}

uint32_t
uroce_frame_hdrs(struct uroce_qp *qp, struct rte_mbuf *m,
		 const struct uroce_l2l3 *l2l3,
		 const struct uroce_bth_fields *bth,
		 const struct uroce_ext_fields *ext, uint32_t plen)
{
	return uroce_wire_write_hdrs_ol(rte_pktmbuf_mtod(m, uint8_t *), l2l3,
					bth, ext, plen,
					uroce_frame_tx_ol(qp, m, l2l3));
}

void
uroce_frame_seal(struct uroce_qp *qp, struct rte_mbuf *m, uint32_t hl,
		 uint32_t plen, struct uroce_txb *txb)
{
	uint8_t *buf = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t pad = -plen & 3u;
	uint32_t icrc;

	memset(buf + hl + plen, 0, pad);
	icrc = uroce_wire_icrc_frame(buf, hl, plen);
	/* The ICRC goes out least significant byte first (IBTA A17.3.3). */
	buf[hl + plen + pad + 0] = (uint8_t)icrc;
	buf[hl + plen + pad + 1] = (uint8_t)(icrc >> 8);
	buf[hl + plen + pad + 2] = (uint8_t)(icrc >> 16);
	buf[hl + plen + pad + 3] = (uint8_t)(icrc >> 24);
	m->data_len = (uint16_t)(hl + plen + pad + UROCE_ICRC_LEN);
	m->pkt_len = m->data_len;
	qp->stats.tx_pkts++;
	qp->stats.tx_bytes += m->pkt_len;
	uroce_txb_add(txb, m);
}

void
uroce_frame_finish(struct uroce_qp *qp, struct rte_mbuf *m,
		   const struct uroce_l2l3 *l2l3,
		   const struct uroce_bth_fields *bth,
		   const struct uroce_ext_fields *ext, uint32_t plen,
		   struct uroce_txb *txb)
{
	uroce_frame_seal(qp, m, uroce_frame_hdrs(qp, m, l2l3, bth, ext, plen),
			 plen, txb);
}
