/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The RC completer (IBTA ch. 9.7, 9.9): ACKs (coalesced: one covers
 * every PSN up to its own), NAKs, RNR NAKs, READ responses and atomic
 * ACKs. It moves the requester's una, scatters READ data and atomic
 * results, completes WQEs in order (requester.c retires them) and decides
 * when to send again from a PSN (go-back-N).
 */
#include <string.h>

#include "qp_priv.h"

/* Minimum RNR NAK timer of each 5-bit code, in microseconds (IBTA ch. 9.7,
 * Table 45; code 0 is the longest, 655.36 ms). */
static const uint32_t rnr_timer_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120,
	160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* Completion status of each NAK code (IBTA ch. 9.7, the NAK codes of the AETH);
 * 0 (PSN sequence error) is not an error: the requester resends. */
static const enum ibv_wc_status nak_wc_status[] = {
	[UROCE_NAK_INV_REQ] = IBV_WC_REM_INV_REQ_ERR,
	[UROCE_NAK_REM_ACCESS] = IBV_WC_REM_ACCESS_ERR,
	[UROCE_NAK_REM_OP] = IBV_WC_REM_OP_ERR,
	[4] = IBV_WC_REM_INV_RD_REQ_ERR,	/* invalid RD request */
};

/* Forward progress: everything before una is acknowledged. */
static void
progress(struct uroce_qp *qp, uint32_t una, uint64_t now)
{
	struct uroce_requester *req = &qp->req;

	req->una = una;
	req->retry_left = req->retry_cnt;
	req->rnr_left = req->rnr_retry;
	req->gap_rewound = false;
	uroce_req_retire(qp);
	if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD)
		return;
	/* The timer covers packets on the wire (IBTA 9.7.6.1.3: it runs from
	 * a request's transmission until its acknowledgement). With all that
	 * was sent acknowledged it stops, even if WQEs wait - e.g. for pacing
	 * tokens, which at a low rate can take longer than the timeout; the
	 * next packet sent arms it again (send_pkt()). */
	req->rto_at = (qp->sq.tail != req->start_idx && req->rto_cycles != 0 &&
		       psn_diff(req->sent_psn, una) > 0) ?
		now + req->rto_cycles : UROCE_TIME_OFF;
}

/* Send again from una, once per una value: a burst of out-of-order
 * responses or NAKs for the same hole asks only once. */
static void
rewind_once(struct uroce_qp *qp)
{
	struct uroce_requester *req = &qp->req;

	if (req->gap_rewound && req->gap_una == req->una)
		return;
	req->gap_rewound = true;
	req->gap_una = req->una;
	uroce_req_rewind(qp, req->una);
}

/*
 * Everything up to and including psn is acknowledged (an ACK, or implied
 * by a later response, IBTA ch. 9.7). A READ or atomic before psn that
 * has not had its response yet caps it: the responder got the request but
 * the response was lost, so the request goes again (implicit NAK, ch. 9.7).
 */
static void
ack_upto(struct uroce_qp *qp, uint32_t psn, uint64_t now)
{
	struct uroce_requester *req = &qp->req;
	uint32_t target = psn_add(psn, 1);
	bool implicit = false;
	uint32_t i;

	if (psn_diff(target, req->una) <= 0 || psn_diff(target, req->next_psn) > 0)
		return;
	for (i = qp->sq.tail; i != req->start_idx; i++) {
		const struct uroce_send_wqe *w = uroce_sq_wqe(qp, i);
		uint32_t missing;

		if (psn_diff(w->first_psn, target) >= 0)
			break;
		if (!uroce_wqe_is_rd_atomic(w))
			continue;
		missing = psn_diff(req->una, w->first_psn) > 0 ? req->una : w->first_psn;
		if (psn_diff(target, missing) > 0) {
			target = missing;
			implicit = true;
		}
		break;
	}
	if (target != req->una)
		progress(qp, target, now);
	if (implicit)
		rewind_once(qp);
}

static bool
psn_outstanding(const struct uroce_requester *req, uint32_t psn)
{
	return psn_diff(psn, req->una) >= 0 && psn_diff(psn, req->next_psn) < 0;
}

static void
rx_rnr(struct uroce_qp *qp, uint32_t psn, uint8_t code, uint64_t now)
{
	struct uroce_requester *req = &qp->req;
	uint32_t idx;

	qp->stats.rnr_naks_rx++;
	ack_upto(qp, psn_add(psn, UROCE_PSN_MASK), now);
	if (psn != req->una || !uroce_req_find(qp, psn, &idx))
		return;
	/* rnr_retry retries, 7 = for ever (IBTA ch. 9.7). */
	if (req->rnr_left == 0) {
		uroce_req_fail(qp, idx, IBV_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	if (req->rnr_retry != UROCE_RNR_RETRY_INF)
		req->rnr_left--;
	uroce_req_rewind(qp, psn);
	qp->stats.rnr_retries++;
	req->rnr_at = now + uroce_qp_us_to_cycles(qp, rnr_timer_us[code & 31]);
	QP_LOG(DEBUG, qp, "RNR NAK PSN %u, wait %u us", psn, rnr_timer_us[code & 31]);
}

static void
rx_nak(struct uroce_qp *qp, uint32_t psn, uint8_t code, uint64_t now)
{
	struct uroce_requester *req = &qp->req;
	uint32_t idx;

	if (code < RTE_DIM(qp->stats.naks_rx))
		qp->stats.naks_rx[code]++;
	ack_upto(qp, psn_add(psn, UROCE_PSN_MASK), now);
	if (psn != req->una)
		return;
	if (code == UROCE_NAK_PSN_SEQ) {
		/* The responder expects psn: go back to it (ch. 9.7). */
		rewind_once(qp);
		return;
	}
	if (code >= RTE_DIM(nak_wc_status) || !uroce_req_find(qp, psn, &idx))
		return;
	uroce_req_fail(qp, idx, nak_wc_status[code]);
}

static void
rx_ack(struct uroce_qp *qp, const struct uroce_pkt *pkt, uint64_t now)
{
	const struct uroce_aeth *aeth = uroce_pkt_hdr(pkt, UROCE_HDR_AETH);
	uint8_t syn = (uint8_t)(rte_be_to_cpu_32(aeth->smsn) >> 24);
	uint32_t psn = pkt->bth.psn;

	switch (syn & UROCE_AETH_KIND_MASK) {
	case UROCE_AETH_ACK:
		qp->stats.acks_rx++;
		ack_upto(qp, psn, now);
		break;
	case UROCE_AETH_RNR_NAK:
		rx_rnr(qp, psn, syn & UROCE_AETH_VAL_MASK, now);
		break;
	case UROCE_AETH_NAK:
		rx_nak(qp, psn, syn & UROCE_AETH_VAL_MASK, now);
		break;
	default:
		qp->stats.drops++;	/* reserved syndrome */
		break;
	}
}

/*
 * A response at psn: what comes before is acknowledged; psn itself must be
 * the next one expected (una) and belong to a WQE of the right kind.
 * @return the SQ index of that WQE, or false (dropped / gap handled).
 */
static bool
response_wqe(struct uroce_qp *qp, uint32_t psn, uint64_t now, uint32_t *idx)
{
	struct uroce_requester *req = &qp->req;

	if (!psn_outstanding(req, psn)) {
		qp->stats.drops++;	/* duplicate or never asked for */
		qp->stats.dup_resps++;
		return false;
	}
	ack_upto(qp, psn_add(psn, UROCE_PSN_MASK), now);
	if (qp->state == IBV_QPS_ERR)
		return false;
	if (psn != req->una) {
		rewind_once(qp);	/* a response went missing */
		return false;
	}
	return uroce_req_find(qp, psn, idx);
}

/* Whether a READ response of this shape fits the WQE at psn (IBTA
 * ch. 9.7: every response but the last carries a full path MTU). */
static bool
read_resp_ok(const struct uroce_qp *qp, const struct uroce_pkt *pkt,
	     const struct uroce_send_wqe *w, uint32_t off)
{
	bool last = pkt->bth.psn == w->last_psn;
	uint32_t want = last ? w->length - off : qp->req.mtu;

	if (w->opcode != IBV_WR_RDMA_READ)
		return false;
	if (last != !!(pkt->op->flags & UROCE_OPF_LAST))
		return false;
	return pkt->payload_len == want;
}

static void
rx_read_resp(struct uroce_qp *qp, const struct uroce_pkt *pkt, uint64_t now)
{
	uint32_t psn = pkt->bth.psn, idx, off;
	const struct uroce_send_wqe *w;
	int ret;

	if (!response_wqe(qp, psn, now, &idx))
		return;
	w = uroce_sq_wqe(qp, idx);
	off = psn_diff(psn, w->first_psn) * qp->req.mtu;
	if (!read_resp_ok(qp, pkt, w, off)) {
		qp->stats.drops++;
		return;
	}
	ret = uroce_wqe_scatter(qp, w, off, uroce_pkt_payload(pkt),
				pkt->payload_len);
	if (ret < 0) {
		uroce_req_fail(qp, idx, IBV_WC_LOC_PROT_ERR);
		return;
	}
	progress(qp, psn_add(psn, 1), now);
}

static void
rx_atomic_ack(struct uroce_qp *qp, const struct uroce_pkt *pkt, uint64_t now)
{
	const struct uroce_atmack *ack = uroce_pkt_hdr(pkt, UROCE_HDR_ATMACK);
	uint64_t orig = rte_be_to_cpu_64(ack->orig);
	const struct uroce_send_wqe *w;
	uint32_t idx;

	if (!response_wqe(qp, pkt->bth.psn, now, &idx))
		return;
	w = uroce_sq_wqe(qp, idx);
	if (!uroce_wqe_is_atomic(w)) {
		qp->stats.drops++;
		return;
	}
	/* The original value lands in the WQE's 8-byte SGE, host order. */
	if (uroce_sge_scatter(qp, (const struct ibv_sge *)w->data, w->num_sge,
			      0, &orig, sizeof(orig)) < 0) {
		uroce_req_fail(qp, idx, IBV_WC_LOC_PROT_ERR);
		return;
	}
	progress(qp, psn_add(pkt->bth.psn, 1), now);
}

void
uroce_comp_rx(struct uroce_qp *qp, const struct uroce_pkt *pkt, uint64_t now)
{
	/* The responder is answering: the local ACK timeout restarts, progress
	 * or not (requester.c, uroce_req_timer()). */
	if (psn_outstanding(&qp->req, pkt->bth.psn))
		qp->req.last_rx = now;
	switch (pkt->op->kind) {
	case UROCE_OP_ACK:
		rx_ack(qp, pkt, now);
		break;
	case UROCE_OP_READ_RESP:
		rx_read_resp(qp, pkt, now);
		break;
	case UROCE_OP_ATOMIC_ACK:
		rx_atomic_ack(qp, pkt, now);
		break;
	default:
		qp->stats.drops++;
		break;
	}
}
