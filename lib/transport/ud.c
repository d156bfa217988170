/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Unreliable Datagram (IBTA ch. 9.8 and 10.2): one packet per message, a DETH
 * with the Q_Key and the source QPN, an address handle per WR. A receive
 * starts with the 40-byte GRH: RoCEv2 over IPv4 puts 20 zero bytes and
 * then the IPv4 header there, over IPv6 the IPv6 header (as rdma-core's
 * providers lay it out; ibv_poll_cq(3), IBV_WC_GRH).
 */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "qp_priv.h"

/* The Q_Key a WR sends: with the high bit set the QP's own (ibv_post_send(3),
 * IBTA ch. 10.2, controlled Q_Keys). */
static uint32_t
send_qkey(const struct uroce_qp *qp, const struct uroce_send_wqe *w)
{
	return (w->remote_qkey & 0x80000000u) ? qp->attr.qkey : w->remote_qkey;
}

void
uroce_dgram_complete(struct uroce_qp *qp, const struct uroce_send_wqe *w,
		     enum ibv_wc_status status)
{
	struct ibv_wc wc;

	if (status != IBV_WC_SUCCESS || uroce_wqe_signaled(qp, w)) {
		uroce_send_wc(qp, w, status, &wc);
		uroce_ring_cons_release(&qp->sq, 1);	/* room before the CQE */
		uroce_qp_complete(qp, qp->send_cq, &wc, false);
	} else {
		uroce_ring_cons_release(&qp->sq, 1);
	}
	qp->req.start_idx = qp->sq.tail;
	qp->req.tx_idx = qp->sq.tail;
	if (status != IBV_WC_SUCCESS) {
		QP_LOG(INFO, qp, "send wr_id %" PRIu64 " failed: status %d",
		       w->wr_id, (int)status);
		uroce_qp_to_sqe(qp);
	}
}

/* The WR's destination, resolved. 0, -EAGAIN (wait) or another error. */
static int
ud_path(struct uroce_qp *qp, const struct uroce_send_wqe *w,
	struct uroce_l2l3 *l2l3)
{
	const struct uroce_qp_env_ops *ops = qp->env->ops;

	*l2l3 = w->ah->l2l3;
	memcpy(l2l3->smac, qp->env->mac, sizeof(l2l3->smac));
	if (l2l3->udp_sport == 0)
		l2l3->udp_sport = uroce_wire_udp_sport(qp->qpn, w->remote_qpn);
	if (w->ah->resolved || ops == NULL || ops->resolve == NULL)
		return 0;
	return ops->resolve(qp->env->ctx, l2l3);
}

/* Build one datagram. @return 1 sent (or failed and completed), 0 wait. */
static int
ud_send_one(struct uroce_qp *qp, struct uroce_send_wqe *w, uint64_t now,
	    struct uroce_txb *txb)
{
	struct uroce_bth_fields bth = { .pkey = 0xffff };
	struct uroce_ext_fields ext;
	struct uroce_tb *ah_tb = NULL;
	struct uroce_l2l3 l2l3;
	struct rte_mbuf *m;
	uint8_t *payload;
	uint32_t len;
	int ret;

	/* A datagram is one packet of at most the port's MTU (IBTA ch. 9.8). */
	if (w->length > uroce_mtu_bytes(qp->env->lim.active_mtu)) {
		uroce_dgram_complete(qp, w, IBV_WC_LOC_LEN_ERR);
		return 1;
	}
	ret = ud_path(qp, w, &l2l3);
	if (ret == -EAGAIN) {
		uroce_req_retry_wait(qp, now);
		return 0;
	}
	if (ret < 0) {
		uroce_dgram_complete(qp, w, IBV_WC_GENERAL_ERR);
		return 1;
	}
	bth.opcode = (w->opcode == IBV_WR_SEND_WITH_IMM) ?
		UROCE_OPC_UD_SEND_ONLY_IMM : UROCE_OPC_UD_SEND_ONLY;
	len = uroce_frame_len(&l2l3, bth.opcode, w->length);
	/* The AH's static rate first (ud_pace.c), then the QP's own limit:
	 * the frame goes when both hold it. */
	if (unlikely(w->ah->paced) &&
	    (ah_tb = uroce_ud_pace_ah(qp, w->ah, now, len)) == NULL)
		return 0;
	if (!uroce_qp_pace(qp, now, len)) {
		uroce_qp_pace_wait(qp, now, len,
				   uroce_qp_pace_behind(qp, qp->sq.tail, 0));
		return 0;
	}
	if (ah_tb != NULL)
		uroce_ud_pace_charge(ah_tb, now, len);
	m = uroce_frame_alloc(qp, &l2l3, bth.opcode, w->length, &payload);
	if (m == NULL) {
		uroce_req_retry_wait(qp, now);
		return 0;
	}
	if (uroce_wqe_gather(qp, w, 0, payload, w->length) < 0) {
		rte_pktmbuf_free(m);
		uroce_dgram_complete(qp, w, IBV_WC_LOC_PROT_ERR);
		return 1;
	}
	memset(&ext, 0, sizeof(ext));
	ext.deth.qkey = send_qkey(qp, w);
	ext.deth.sqpn = qp->qpn;
	ext.imm = w->imm;
	bth.se = (w->send_flags & IBV_SEND_SOLICITED) != 0;
	bth.dqpn = w->remote_qpn & UROCE_QPN_MASK;
	bth.psn = qp->req.next_psn;
	qp->req.next_psn = psn_add(qp->req.next_psn, 1);
	uroce_frame_finish(qp, m, &l2l3, &bth, &ext, w->length, txb);
	/* UD completes when the datagram is built (IBTA ch. 9.8). */
	uroce_dgram_complete(qp, w, IBV_WC_SUCCESS);
	return 1;
}

bool
uroce_dgram_tx(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb,
	       uroce_dgram_send_fn send_one)
{
	struct uroce_requester *req = &qp->req;

	if (req->wait_at != UROCE_TIME_OFF) {
		if (now < req->wait_at)
			return false;
		req->wait_at = UROCE_TIME_OFF;
	}
	while (qp->state == IBV_QPS_RTS && uroce_ring_cons_avail(&qp->sq, 1) > 0) {
		if (uroce_txb_full(txb)) {
			uroce_qp_pace_turn(qp, now);
			return true;
		}
		if (send_one(qp, uroce_sq_wqe(qp, qp->sq.tail), now, txb) == 0)
			return false;
	}
	if (qp->state == IBV_QPS_SQD)
		uroce_req_check_drained(qp);
	else if (qp->state == IBV_QPS_RTS)
		req->stop = UROCE_REQ_STOP_IDLE;
	return false;
}

bool
uroce_ud_tx(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb)
{
	return uroce_dgram_tx(qp, now, txb, ud_send_one);
}

/* The 40 bytes in front of a UD receive's data. */
static void
grh_bytes(const struct uroce_pkt *pkt, uint8_t grh[UROCE_GRH_LEN])
{
	memset(grh, 0, UROCE_GRH_LEN);
	if (pkt->ip_ver == 4)
		memcpy(grh + 20, pkt->frame + pkt->l3_off, 20);
	else
		memcpy(grh, pkt->frame + pkt->l3_off, UROCE_GRH_LEN);
}

static void
ud_recv_wc(struct uroce_qp *qp, const struct uroce_recv_wqe *rw,
	   enum ibv_wc_status status, uint32_t len, const struct uroce_pkt *pkt,
	   const struct uroce_ext_fields *ext)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = rw->wr_id;
	wc.status = status;
	wc.opcode = IBV_WC_RECV;
	wc.qp_num = qp->qpn;
	if (status == IBV_WC_SUCCESS) {
		wc.byte_len = len;
		wc.src_qp = ext->deth.sqpn;
		wc.wc_flags = IBV_WC_GRH;
		if (pkt->op->flags & UROCE_OPF_IMM) {
			wc.wc_flags |= IBV_WC_WITH_IMM;
			wc.imm_data = ext->imm;
		}
	}
	uroce_qp_rwqe_done(qp);
	uroce_qp_complete(qp, qp->recv_cq, &wc, pkt->bth.se);
}

void
uroce_ud_rx(struct uroce_qp *qp, const struct uroce_pkt *pkt, uint64_t now)
{
	const struct uroce_recv_wqe *rw;
	struct uroce_ext_fields ext;
	uint8_t grh[UROCE_GRH_LEN];
	uint32_t len = UROCE_GRH_LEN + pkt->payload_len;

	(void)now;
	uroce_wire_ext_get(pkt, &ext);
	/* Q_Key mismatch: silently dropped (IBTA 10.2.4). No
	 * receive WQE: dropped too, UD has no RNR. */
	if (ext.deth.qkey != qp->attr.qkey ||
	    (rw = uroce_qp_rwqe(qp)) == NULL) {
		qp->stats.drops++;
		if (ext.deth.qkey != qp->attr.qkey)
			qp->stats.drop_qkey++;
		else
			qp->stats.drop_no_rwqe++;
		return;
	}
	if (len > rw->length) {
		ud_recv_wc(qp, rw, IBV_WC_LOC_LEN_ERR, 0, pkt, &ext);
		return;
	}
	grh_bytes(pkt, grh);
	if (uroce_rwqe_scatter(qp, rw, 0, grh, sizeof(grh)) < 0 ||
	    uroce_rwqe_scatter(qp, rw, UROCE_GRH_LEN, uroce_pkt_payload(pkt),
			       pkt->payload_len) < 0) {
		ud_recv_wc(qp, rw, IBV_WC_LOC_PROT_ERR, 0, pkt, &ext);
		return;
	}
	ud_recv_wc(qp, rw, IBV_WC_SUCCESS, len, pkt, &ext);
}
