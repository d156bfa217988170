/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The RC/UC requester (IBTA 9.5, ch. 9.7): turns send WQEs into request
 * packets. Segmentation at the path MTU, 24-bit PSNs from sq_psn, ACKREQ
 * on the last packet of each message and every UROCE_REQ_ACKREQ_EVERY
 * packets, a window of UROCE_REQ_WINDOW unacknowledged PSNs, at most
 * max_rd_atomic READ/atomic requests outstanding, fences, and go-back-N
 * retransmission from a PSN (uroce_req_rewind()). The completer
 * (completer.c) moves una and decides when to rewind.
 */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "qp_priv.h"
#include "zcopy_priv.h"

/* Packet positions within a message, the column of req_opcode[]. */
enum pos { POS_ONLY, POS_FIRST, POS_MIDDLE, POS_LAST, POS_COUNT };

/* RC opcode of each send WR opcode and position (IBTA Table 38); the UC
 * opcode is the same with the UC transport bits (0x20). READ and atomics
 * are single request packets. */
static const uint8_t req_opcode[IBV_WR_SEND_WITH_INV + 1][POS_COUNT] = {
	[IBV_WR_RDMA_WRITE] = { UROCE_OPC_RC_WRITE_ONLY, UROCE_OPC_RC_WRITE_FIRST,
				UROCE_OPC_RC_WRITE_MIDDLE, UROCE_OPC_RC_WRITE_LAST },
	[IBV_WR_RDMA_WRITE_WITH_IMM] = { UROCE_OPC_RC_WRITE_ONLY_IMM,
				UROCE_OPC_RC_WRITE_FIRST, UROCE_OPC_RC_WRITE_MIDDLE,
				UROCE_OPC_RC_WRITE_LAST_IMM },
	[IBV_WR_SEND] = { UROCE_OPC_RC_SEND_ONLY, UROCE_OPC_RC_SEND_FIRST,
			  UROCE_OPC_RC_SEND_MIDDLE, UROCE_OPC_RC_SEND_LAST },
	[IBV_WR_SEND_WITH_IMM] = { UROCE_OPC_RC_SEND_ONLY_IMM, UROCE_OPC_RC_SEND_FIRST,
				   UROCE_OPC_RC_SEND_MIDDLE, UROCE_OPC_RC_SEND_LAST_IMM },
	[IBV_WR_RDMA_READ] = { UROCE_OPC_RC_READ_REQ },
	[IBV_WR_ATOMIC_CMP_AND_SWP] = { UROCE_OPC_RC_CMP_SWAP },
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = { UROCE_OPC_RC_FETCH_ADD },
	/* The IETH rides on the last packet (IBTA 9.4.1.2); RC only. */
	[IBV_WR_SEND_WITH_INV] = { UROCE_OPC_RC_SEND_ONLY_INV, UROCE_OPC_RC_SEND_FIRST,
				   UROCE_OPC_RC_SEND_MIDDLE, UROCE_OPC_RC_SEND_LAST_INV },
};

/* ---------------------------------------------------------------------------
 * State.
 */
void
uroce_req_reset(struct uroce_qp *qp)
{
	struct uroce_requester *req = &qp->req;

	memset(req, 0, sizeof(*req));
	req->start_idx = qp->sq.tail;
	req->tx_idx = qp->sq.tail;
	req->rto_at = UROCE_TIME_OFF;
	req->rnr_at = UROCE_TIME_OFF;
	req->wait_at = UROCE_TIME_OFF;
	uroce_req_attrs(qp);
}

void
uroce_req_attrs(struct uroce_qp *qp)
{
	struct uroce_requester *req = &qp->req;
	uint64_t us;

	req->mtu = uroce_mtu_bytes(qp->attr.path_mtu);
	req->dqpn = qp->attr.dest_qp_num;
	req->retry_cnt = qp->attr.retry_cnt;
	req->rnr_retry = qp->attr.rnr_retry;
	req->pace_late = uroce_qp_pace_late(qp);
	/* Local ACK timeout 4.096 us * 2^timeout, 0 = infinite (IBTA
	 * ch. 9.7), kept to a microsecond (rounded up). */
	if (qp->attr.timeout == 0) {
		req->rto_cycles = 0;
	} else {
		us = ((UINT64_C(4096) << (qp->attr.timeout & 31)) + 999) / 1000;
		req->rto_cycles = uroce_qp_us_to_cycles(qp, us);
	}
}

void
uroce_req_start(struct uroce_qp *qp)
{
	struct uroce_requester *req = &qp->req;
	uint32_t psn = qp->attr.sq_psn & UROCE_PSN_MASK;

	req->next_psn = psn;
	req->tx_psn = psn;
	req->una = psn;
	req->sent_psn = psn;
	req->ack_due = psn;
	uroce_req_attrs(qp);
	req->retry_left = req->retry_cnt;
	req->rnr_left = req->rnr_retry;
}

/* Packets a WQE takes: one per path MTU, at least one; a READ takes the
 * PSNs of its responses, an atomic one. */
static uint32_t
wqe_packets(const struct uroce_requester *req, const struct uroce_send_wqe *w)
{
	if (uroce_wqe_is_atomic(w) || w->length == 0)
		return 1;
	return (w->length + req->mtu - 1) / req->mtu;
}

bool
uroce_req_find(struct uroce_qp *qp, uint32_t psn, uint32_t *idx)
{
	uint32_t i;

	for (i = qp->sq.tail; i != qp->req.start_idx; i++) {
		const struct uroce_send_wqe *w = uroce_sq_wqe(qp, i);

		if (psn_diff(psn, w->first_psn) >= 0 &&
		    psn_diff(psn, w->last_psn) <= 0) {
			*idx = i;
			return true;
		}
	}
	return false;
}

void
uroce_req_rewind(struct uroce_qp *qp, uint32_t psn)
{
	struct uroce_requester *req = &qp->req;
	uint32_t idx;

	if (uroce_req_find(qp, psn, &idx)) {
		req->tx_idx = idx;
		req->tx_psn = psn;
	} else {
		req->tx_idx = req->start_idx;
		req->tx_psn = req->next_psn;
	}
	/* Re-armed by the next packet sent. */
	req->rto_at = UROCE_TIME_OFF;
}

void
uroce_req_check_drained(struct uroce_qp *qp)
{
	struct uroce_requester *req = &qp->req;
	const struct uroce_qp_env_ops *ops = qp->env->ops;

	if (qp->state != IBV_QPS_SQD || req->sqd_notified ||
	    qp->sq.tail != req->start_idx)
		return;
	/* SQD (IBTA ch. 11, Modify QP): drained once every started WQE
	 * has completed. */
	req->sqd_notified = true;
	QP_LOG(DEBUG, qp, "send queue drained");
	if (qp->attr.en_sqd_async_notify && ops != NULL && ops->async_event != NULL)
		ops->async_event(qp->env->ctx, IBV_EVENT_SQ_DRAINED, qp);
}

void
uroce_req_retire(struct uroce_qp *qp)
{
	struct uroce_requester *req = &qp->req;

	while (qp->sq.tail != req->start_idx) {
		const struct uroce_send_wqe *w = uroce_sq_wqe(qp, qp->sq.tail);

		if (psn_diff(w->last_psn, req->una) >= 0)
			break;
		if (uroce_wqe_is_rd_atomic(w))
			req->rd_started--;
		uroce_sq_complete_tail(qp, IBV_WC_SUCCESS);
	}
	/* The cursor never stays behind what is acknowledged. */
	if ((int32_t)(req->tx_idx - qp->sq.tail) < 0 ||
	    (req->tx_idx != req->start_idx && psn_diff(req->tx_psn, req->una) < 0))
		uroce_req_rewind(qp, req->una);
	uroce_req_check_drained(qp);
}

void
uroce_req_fail(struct uroce_qp *qp, uint32_t idx, enum ibv_wc_status status)
{
	struct uroce_requester *req = &qp->req;

	QP_LOG(INFO, qp, "wr_id %" PRIu64 " failed: status %d",
	       uroce_sq_wqe(qp, idx)->wr_id, (int)status);
	/* Completions stay in order: what precedes the failed WQE and has
	 * not completed is flushed first. */
	while (qp->sq.tail != idx)
		uroce_sq_complete_tail(qp, IBV_WC_WR_FLUSH_ERR);
	uroce_sq_complete_tail(qp, status);
	if ((int32_t)(req->start_idx - qp->sq.tail) < 0)
		req->start_idx = qp->sq.tail;
	/* RC errors are fatal to the QP (IBTA 10.3.1: ERR); UC/UD send
	 * errors stop the send queue only (SQE). */
	if (uroce_qp_initiator(qp))
		uroce_qp_to_err(qp);
	else
		uroce_qp_to_sqe(qp);
}

/* ---------------------------------------------------------------------------
 * Starting WQEs.
 */

/* Whether the next WQE may start now (SQD, max_rd_atomic, fence). */
static bool
start_allowed(const struct uroce_qp *qp, const struct uroce_send_wqe *w)
{
	const struct uroce_requester *req = &qp->req;

	if (qp->state != IBV_QPS_RTS)
		return false;	/* SQD: started WQEs finish, no new one */
	if (uroce_wqe_is_rd_atomic(w) &&
	    req->rd_started >= RTE_MAX((uint32_t)qp->attr.max_rd_atomic, 1u))
		return false;
	/* IBV_SEND_FENCE: wait for outstanding READ/atomic (IBTA ch. 9.4). */
	if ((w->send_flags & IBV_SEND_FENCE) && req->rd_started > 0)
		return false;
	return true;
}

/*
 * A bind or local invalidate (IBTA 10.6.7.2): run once every WQE before it
 * has completed, so that the operations posted before it used the old
 * binding and those after it (a SEND that carries the new R_Key, the man
 * page's ordering rule) find the new one. It takes no PSN and completes at
 * once, IBV_WC_BIND_MW or IBV_WC_LOCAL_INV; a failure completes it with
 * IBV_WC_MW_BIND_ERR ("memory management operation error") and, as every
 * local error, moves the QP to ERR. @return false: it must wait.
 */
static bool
run_local(struct uroce_qp *qp, struct uroce_send_wqe *w)
{
	struct uroce_requester *req = &qp->req;
	uint32_t idx = req->start_idx;
	int ret;

	if (qp->sq.tail != idx)
		return false;	/* completions of earlier WQEs first */
	if (w->opcode == IBV_WR_BIND_MW) {
		const struct uroce_mw_bind b = {
			.pd = qp->pd, .qp = qp, .mw_key = w->mw_key,
			.new_key = w->rkey, .mr_lkey = w->mr_lkey,
			.access = w->mw_access, .addr = w->remote_addr,
			.length = w->compare_add,
		};

		ret = uroce_mw_bind(qp->env->mrs, &b);
	} else {
		ret = uroce_mw_invalidate(qp->env->mrs, qp->pd, qp,
					  (uint32_t)w->imm);
	}
	w->first_psn = req->next_psn;
	w->last_psn = psn_add(req->next_psn, UROCE_PSN_MASK);
	req->start_idx++;
	if (ret < 0) {
		QP_LOG(INFO, qp, "%s of key 0x%x failed: %d",
		       w->opcode == IBV_WR_BIND_MW ? "bind" : "local invalidate",
		       w->opcode == IBV_WR_BIND_MW ? w->mw_key : (uint32_t)w->imm,
		       ret);
		uroce_req_fail(qp, idx, IBV_WC_MW_BIND_ERR);
		return false;
	}
	req->tx_idx = req->start_idx;
	uroce_sq_complete_tail(qp, IBV_WC_SUCCESS);
	return true;
}

/* Give the next WQE its PSNs. @return false if there is none to start. */
static bool
start_wqe(struct uroce_qp *qp)
{
	struct uroce_requester *req = &qp->req;
	uint32_t started;
	struct uroce_send_wqe *w;
	uint32_t idx;

again:
	started = req->start_idx - qp->sq.tail;
	idx = req->start_idx;
	if (uroce_ring_cons_avail(&qp->sq, started + 1) <= started) {
		req->stop = UROCE_REQ_STOP_IDLE;
		return false;
	}
	w = uroce_sq_wqe(qp, idx);
	if (!start_allowed(qp, w))
		return false;
	if (uroce_wqe_is_local(w)) {
		if (!run_local(qp, w))
			return false;
		goto again;
	}
	w->first_psn = req->next_psn;
	w->last_psn = psn_add(req->next_psn, wqe_packets(req, w) - 1);
	req->next_psn = psn_add(w->last_psn, 1);
	req->start_idx++;
	if (uroce_wqe_is_rd_atomic(w))
		req->rd_started++;
	if (uroce_wqe_check(qp, w) < 0) {
		uroce_req_fail(qp, idx, IBV_WC_LOC_PROT_ERR);
		return false;
	}
	return true;
}

/* ---------------------------------------------------------------------------
 * Building request packets.
 */
struct req_pkt {
	uint8_t opcode;
	enum pos pos;
	uint32_t off;		/* message offset of the payload */
	uint32_t plen;
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
};

static enum pos
pkt_pos(uint32_t k, uint32_t npk)
{
	if (npk == 1)
		return POS_ONLY;
	if (k == 0)
		return POS_FIRST;
	return k == npk - 1 ? POS_LAST : POS_MIDDLE;
}

static void
fill_rd_atomic(const struct uroce_send_wqe *w, struct req_pkt *p)
{
	p->pos = POS_ONLY;
	p->plen = 0;
	if (w->opcode == IBV_WR_RDMA_READ) {
		/* A READ resumed inside its range asks for the rest only,
		 * with the PSN of the first missing response (ch. 9.7). */
		p->ext.reth.va = w->remote_addr + p->off;
		p->ext.reth.rkey = w->rkey;
		p->ext.reth.len = w->length - p->off;
		return;
	}
	p->ext.atmeth.va = w->remote_addr;
	p->ext.atmeth.rkey = w->rkey;
	if (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
		p->ext.atmeth.swap_add = w->swap;
		p->ext.atmeth.cmp = w->compare_add;
	} else {
		p->ext.atmeth.swap_add = w->compare_add;
	}
}

static void
fill_send_write(const struct uroce_qp *qp, const struct uroce_send_wqe *w,
		uint32_t k, struct req_pkt *p)
{
	const struct uroce_requester *req = &qp->req;
	uint32_t npk = psn_diff(w->last_psn, w->first_psn) + 1;
	bool last;

	p->pos = pkt_pos(k, npk);
	last = p->pos == POS_LAST || p->pos == POS_ONLY;
	p->plen = RTE_MIN(req->mtu, w->length - p->off);
	if ((w->opcode == IBV_WR_RDMA_WRITE || w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) &&
	    (p->pos == POS_FIRST || p->pos == POS_ONLY)) {
		p->ext.reth.va = w->remote_addr;
		p->ext.reth.rkey = w->rkey;
		p->ext.reth.len = w->length;
	}
	if (last) {
		p->ext.imm = w->imm;
		p->ext.ieth_rkey = (uint32_t)w->imm;	/* invalidate_rkey */
		p->bth.se = (w->send_flags & IBV_SEND_SOLICITED) != 0;
	}
	/* ACK requests: the end of a message, every Nth packet of a long
	 * one, the packet that fills the window (so it reopens), and the
	 * first one after a timeout that found no ACK owed (timeout()). */
	if (uroce_qp_initiator(qp))
		p->bth.ackreq = last || (k + 1) % UROCE_REQ_ACKREQ_EVERY == 0 ||
			psn_diff(req->tx_psn, req->una) >= UROCE_REQ_WINDOW - 1 ||
			req->ackreq_next;
}

static void
fill_pkt(const struct uroce_qp *qp, const struct uroce_send_wqe *w,
	 struct req_pkt *p)
{
	const struct uroce_requester *req = &qp->req;
	uint32_t k = psn_diff(req->tx_psn, w->first_psn);

	memset(p, 0, sizeof(*p));
	p->off = k * req->mtu;
	if (uroce_wqe_is_rd_atomic(w))
		fill_rd_atomic(w, p);
	else
		fill_send_write(qp, w, k, p);
	p->opcode = req_opcode[w->opcode][p->pos] | uroce_qp_opc_base(qp);
	/* XRC: every request packet names the target's SRQ (XRCETH). */
	p->ext.xrc_srqn = w->xrc_srqn;
	p->bth.opcode = p->opcode;
	p->bth.pkey = 0xffff;
	p->bth.dqpn = req->dqpn;
	p->bth.psn = req->tx_psn;
}

/* Move the cursor past the packet just sent. */
static void
advance(struct uroce_qp *qp, const struct uroce_send_wqe *w,
	const struct req_pkt *p)
{
	struct uroce_requester *req = &qp->req;

	if (p->pos == POS_ONLY || p->pos == POS_LAST) {
		req->tx_idx++;
		req->tx_psn = psn_add(w->last_psn, 1);
	} else {
		req->tx_psn = psn_add(req->tx_psn, 1);
	}
}

/* The packet with its payload copied into one mbuf (inline data, small
 * payloads, ports without zero-copy). -ENOMEM: no mbuf. */
static int
build_copy(struct uroce_qp *qp, const struct uroce_send_wqe *w,
	   const struct req_pkt *p, struct uroce_txb *txb)
{
	struct rte_mbuf *m;
	uint8_t *payload;
	uint32_t hl;
	int ret;

	m = uroce_frame_alloc(qp, &qp->path, p->opcode, p->plen, &payload);
	if (m == NULL)
		return -ENOMEM;
	hl = uroce_frame_hdrs(qp, m, &qp->path, &p->bth, &p->ext, p->plen);
	if (p->plen > 0) {
		ret = uroce_wqe_gather(qp, w, p->off, payload, p->plen);
		if (ret < 0) {
			rte_pktmbuf_free(m);
			return ret == -ENOMEM ? -EFAULT : ret;
		}
	}
	uroce_frame_seal(qp, m, hl, p->plen, txb);
	return 0;
}

/* Send one packet of the WQE at tx_idx; large payloads of RC requests go
 * zero-copy (zcopy.c). @return 1 sent, 0 must wait. */
static int
send_pkt(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb)
{
	struct uroce_requester *req = &qp->req;
	struct uroce_send_wqe *w = uroce_sq_wqe(qp, req->tx_idx);
	struct req_pkt p;
	uint32_t len, rest;
	int ret;

	fill_pkt(qp, w, &p);
	len = uroce_frame_len(&qp->path, p.opcode, p.plen);
	if (!uroce_qp_pace(qp, now, len)) {
		/* The rest of the message and the WQEs behind it. */
		rest = uroce_wqe_is_rd_atomic(w) ? 0 : w->length - p.off - p.plen;
		uroce_qp_pace_wait(qp, now, len,
				   uroce_qp_pace_behind(qp, req->tx_idx, rest));
		return 0;
	}
	ret = uroce_zc_wanted(qp, w, p.plen) ?
		uroce_zc_send(qp, w, &p.bth, &p.ext, p.off, p.plen, txb) :
		build_copy(qp, w, &p, txb);
	if (ret == -ENOMEM) {
		uroce_req_retry_wait(qp, now);
		return 0;
	}
	if (ret < 0) {
		uroce_req_fail(qp, req->tx_idx, IBV_WC_LOC_PROT_ERR);
		return 0;
	}
	if (psn_diff(req->tx_psn, req->sent_psn) < 0)
		qp->stats.retransmits++;
	advance(qp, w, &p);
	if (psn_diff(req->tx_psn, req->sent_psn) > 0)
		req->sent_psn = req->tx_psn;
	/* A message's end is answered too: an ACK, a READ's data, an
	 * atomic's result. */
	if ((p.bth.ackreq || p.pos == POS_LAST || p.pos == POS_ONLY) &&
	    psn_diff(req->tx_psn, req->ack_due) > 0)
		req->ack_due = req->tx_psn;
	req->ackreq_next = false;
	if (qp->type == IBV_QPT_UC) {
		/* UC completes when sent (no ACKs, IBTA ch. 9.8). */
		req->una = req->tx_psn;
		uroce_req_retire(qp);
	} else {
		/* The retransmit timer restarts with every packet sent; the
		 * deadline moves lazily, in uroce_req_timer(). */
		req->last_tx = now;
		if (req->rto_at == UROCE_TIME_OFF && req->rto_cycles != 0)
			req->rto_at = now + req->rto_cycles;
	}
	return 1;
}

/* Whether the requester may send its next packet now. */
static bool
can_send(struct uroce_qp *qp, uint64_t now)
{
	struct uroce_requester *req = &qp->req;

	if (req->rnr_at != UROCE_TIME_OFF) {
		if (now < req->rnr_at)
			return false;
		req->rnr_at = UROCE_TIME_OFF;
	}
	if (req->wait_at != UROCE_TIME_OFF) {
		if (now < req->wait_at)
			return false;
		req->wait_at = UROCE_TIME_OFF;
	}
	if (req->tx_idx == req->start_idx && !start_wqe(qp))
		return false;
	if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD)
		return false;	/* start_wqe() failed it */
	if (uroce_qp_initiator(qp) &&
	    psn_diff(req->tx_psn, req->una) >= UROCE_REQ_WINDOW) {
		req->stop = UROCE_REQ_STOP_WINDOW;
		return false;
	}
	return true;
}

bool
uroce_req_tx(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb)
{
	if (!uroce_qp_path_ready(qp, now))
		return false;
	for (;;) {
		if (uroce_txb_full(txb)) {
			uroce_qp_pace_turn(qp, now);
			return true;
		}
		if (!can_send(qp, now) || send_pkt(qp, now, txb) == 0)
			return false;
	}
}

void
uroce_qp_prefetch_wqe(const struct uroce_qp *qp)
{
	const struct uroce_requester *req = &qp->req;
	const uint8_t *w;

	w = (const uint8_t *)uroce_sq_wqe(qp, req->tx_idx);
	rte_prefetch0(w);	/* opcode, length, the remote address */
	rte_prefetch0(w + sizeof(struct uroce_send_wqe));	/* PSNs, SGEs */
	/* Its count, which a zero-copy frame moves; none goes zero-copy
	 * below tx_zc_min bytes of payload (uroce_zc_wanted()). */
	if (qp->zc != NULL && req->mtu >= qp->env->tx_zc_min)
		rte_prefetch0(qp->zc);
}

/* ---------------------------------------------------------------------------
 * Timers.
 */
/*
 * The local ACK timeout expired. If something sent asks for a response
 * that has not come (IBTA 9.7.6.1.3), resend from the oldest packet not
 * acknowledged (go-back-N); the expiry counts against retry_cnt, and an
 * ACK's progress restores the count (completer.c). The timer stays armed
 * across the resend, so that a port that takes no frame still ends in
 * IBV_WC_RETRY_EXC_ERR.
 *
 * If nothing does, the responder owes nothing yet (it ACKs on AckReq,
 * responder.c): the requester itself is late with the rest of a message,
 * its engine behind the sum of many QPs' rates or its port full. Nothing
 * was lost, so nothing is resent and no retry is spent (late_timeouts,
 * not timeouts): the next packet asks for an ACK, and arms the timer
 * again (send_pkt()). Counted as retries, such expiries would end QPs in
 * RETRY_EXC_ERR while they only wait for their turn (10,000 QPs asking
 * for 3x their link, at a 4 ms timeout); re-armed at once, they would be
 * a timer call on a cold QP every timeout for each QP waiting. A port that
 * never drains still ends in the error: the net layer drops what it
 * cannot send after NET_TX_STUCK_MS (port.c, wait_stuck()), so the
 * packet that asks leaves, and its expiries count.
 */
static void
timeout(struct uroce_qp *qp, uint64_t now)
{
	struct uroce_requester *req = &qp->req;

	req->rto_at = UROCE_TIME_OFF;
	if (qp->sq.tail == req->start_idx)
		return;
	if (psn_diff(req->ack_due, req->una) <= 0) {
		qp->stats.late_timeouts++;
		QP_LOG(DEBUG, qp, "timeout with no ACK owed, the next packet "
		       "asks for one");
		req->ackreq_next = true;
		return;
	}
	qp->stats.timeouts++;
	/* retry_cnt retries after the first attempt, then the error
	 * (IBTA ch. 9.7). */
	if (req->retry_left == 0) {
		uroce_req_fail(qp, qp->sq.tail, IBV_WC_RETRY_EXC_ERR);
		return;
	}
	req->retry_left--;
	QP_LOG(DEBUG, qp, "timeout, resend from PSN %u (%u retries left)",
	       req->una, req->retry_left);
	uroce_req_rewind(qp, req->una);
	req->rto_at = now + req->rto_cycles;
}

/*
 * The local ACK timeout runs from the last request packet sent or the
 * last response heard to an outstanding PSN, whichever is later, and not
 * while the requester holds its next packet back (pacing tokens, an
 * mbuf). IBTA 9.7.6.1.3 starts the timer when a request is transmitted and
 * stops it when every outstanding request is acknowledged; which event
 * restarts it while several are outstanding is left to the
 * implementation.
 *
 * Transmissions restart it because pacing needs it: the responder ACKs
 * only the packets that ask for it (the last of each message,
 * responder.c), and the packets of a paced message may leave further
 * apart than the timeout while every one arrives. A packet lost in the
 * middle of a stream is found sooner anyway, by the PSN sequence NAK of
 * the next one.
 *
 * Responses restart it, even those that make no progress, because after
 * a rewind the responder still owes everything it was answering before:
 * a responder executes requests in PSN order (IBTA ch. 9.7), so the answer
 * to the first request sent again comes after the responses it had queued
 * (up to max_dest_rd_atomic READs: 128 of 64 KiB are 8,192 packets), all
 * of them out of sequence here. Timing out while they arrive would send
 * the whole window again, each READ of which the responder executes again
 * (a duplicate READ is executed again, ch. 9.7), behind the rest: the
 * queue grows with each expiry and retry_cnt ends the QP while the
 * responder is busy answering it. A responder that answers nothing still
 * times out one timeout after its last response.
 *
 * The deadline moves lazily: send_pkt() and uroce_comp_rx() only note the
 * time.
 */
void
uroce_req_timer(struct uroce_qp *qp, uint64_t now)
{
	struct uroce_requester *req = &qp->req;
	uint64_t heard;

	if (req->rto_at == UROCE_TIME_OFF || now < req->rto_at ||
	    (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD))
		return;
	if (req->wait_at != UROCE_TIME_OFF) {
		req->rto_at = RTE_MAX(req->wait_at, now) + req->rto_cycles;
		return;		/* held back here: nothing is late */
	}
	heard = RTE_MAX(req->last_tx, req->last_rx);
	if (now - heard < req->rto_cycles) {
		req->rto_at = heard + req->rto_cycles;
		return;		/* sent or answered since it was armed */
	}
	timeout(qp, now);
}

/*
 * While the requester holds its next packet back (wait_at: pacing tokens,
 * an mbuf), the local ACK timeout does not run (uroce_req_timer() only
 * moves it), so its deadline is not one: the call at wait_at moves it. A
 * wake-up for it would be a call on a cold QP for nothing, and paced QPs
 * whose waits outlast the timeout would have one every other wait.
 */
uint64_t
uroce_req_deadline(const struct uroce_qp *qp)
{
	const struct uroce_requester *req = &qp->req;

	if (req->wait_at != UROCE_TIME_OFF)
		return RTE_MIN(req->wait_at, req->rnr_at);
	return RTE_MIN(req->rto_at, req->rnr_at);
}
