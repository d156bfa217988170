/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The RC/UC responder (IBTA ch. 9.7, 9.9.3): PSN and opcode
 * sequence checks, SEND into receive WQEs, RDMA WRITE, RDMA READ and
 * atomics on registered memory, ACK coalescing, NAKs, duplicate handling
 * (re-ACK, READ re-executed, atomics answered from a replay cache), and
 * the UC rules (no ACK, a PSN gap drops the message in progress).
 */
#include <string.h>

#include <rte_mbuf.h>

#include "qp_priv.h"
#include "uroce_memguard.h"

/* What processing one request packet came to. */
enum rx_res {
	RX_OK,		/* executed: the PSN advances */
	RX_RNR,		/* no receive WQE: RNR NAK, nothing changed */
	RX_NAK,		/* error: NAK resp->err_code, QP to ERR (RC) */
};

/* Packet classes of the opcode sequence table. */
enum cls {
	CLS_SEND_FIRST, CLS_SEND_MIDDLE, CLS_SEND_LAST, CLS_SEND_ONLY,
	CLS_WRITE_FIRST, CLS_WRITE_MIDDLE, CLS_WRITE_LAST, CLS_WRITE_ONLY,
	CLS_READ, CLS_ATOMIC, CLS_COUNT,
	CLS_BAD = CLS_COUNT,
};

#define S_NONE	UROCE_SEQ_NONE
#define S_SEND	UROCE_SEQ_SEND
#define S_WRITE	UROCE_SEQ_WRITE
#define S_BAD	UROCE_SEQ_BAD

/*
 * Opcode sequence (IBTA ch. 9.7, the responder's OpCode check): after
 * a packet that leaves the responder in state [row], a packet of class [col] is
 * allowed and leaves it in the state given, or is an invalid request
 * (S_BAD): a MIDDLE or LAST needs the FIRST of its own kind before it, a
 * FIRST or ONLY cannot interrupt a message in progress.
 */
static const uint8_t seq_next[UROCE_SEQ_COUNT][CLS_COUNT] = {
	[S_NONE] = {
		[CLS_SEND_FIRST] = S_SEND, [CLS_SEND_MIDDLE] = S_BAD,
		[CLS_SEND_LAST] = S_BAD, [CLS_SEND_ONLY] = S_NONE,
		[CLS_WRITE_FIRST] = S_WRITE, [CLS_WRITE_MIDDLE] = S_BAD,
		[CLS_WRITE_LAST] = S_BAD, [CLS_WRITE_ONLY] = S_NONE,
		[CLS_READ] = S_NONE, [CLS_ATOMIC] = S_NONE,
	},
	[S_SEND] = {
		[CLS_SEND_FIRST] = S_BAD, [CLS_SEND_MIDDLE] = S_SEND,
		[CLS_SEND_LAST] = S_NONE, [CLS_SEND_ONLY] = S_BAD,
		[CLS_WRITE_FIRST] = S_BAD, [CLS_WRITE_MIDDLE] = S_BAD,
		[CLS_WRITE_LAST] = S_BAD, [CLS_WRITE_ONLY] = S_BAD,
		[CLS_READ] = S_BAD, [CLS_ATOMIC] = S_BAD,
	},
	[S_WRITE] = {
		[CLS_SEND_FIRST] = S_BAD, [CLS_SEND_MIDDLE] = S_BAD,
		[CLS_SEND_LAST] = S_BAD, [CLS_SEND_ONLY] = S_BAD,
		[CLS_WRITE_FIRST] = S_BAD, [CLS_WRITE_MIDDLE] = S_WRITE,
		[CLS_WRITE_LAST] = S_NONE, [CLS_WRITE_ONLY] = S_BAD,
		[CLS_READ] = S_BAD, [CLS_ATOMIC] = S_BAD,
	},
};

static enum cls
classify(const struct uroce_opcode_info *op)
{
	static const uint8_t pos_off[4] = { 1, 0, 2, 3 }; /* mid, first, last, only */
	unsigned int pos = op->flags & UROCE_OPF_ONLY;

	switch (op->kind) {
	case UROCE_OP_SEND:
		return (enum cls)(CLS_SEND_FIRST + pos_off[pos]);
	case UROCE_OP_WRITE:
		return (enum cls)(CLS_WRITE_FIRST + pos_off[pos]);
	case UROCE_OP_READ_REQ:
		return CLS_READ;
	case UROCE_OP_CMP_SWAP:
	case UROCE_OP_FETCH_ADD:
		return CLS_ATOMIC;
	default:
		return CLS_BAD;
	}
}

/* ---------------------------------------------------------------------------
 * State.
 */
void
uroce_resp_reset(struct uroce_qp *qp)
{
	struct uroce_responder *r = qp->resp;
	struct uroce_resp_res *res = r->res;
	struct uroce_replay *replay = r->replay;
	uint32_t cap = r->res_cap;

	memset(r, 0, sizeof(*r));
	memset(res, 0, cap * sizeof(*res));
	memset(replay, 0, cap * sizeof(*replay));
	r->res = res;
	r->replay = replay;
	r->res_cap = cap;
	r->mtu = uroce_mtu_bytes(qp->attr.path_mtu);
	qp->resp_owed = false;
}

void
uroce_resp_start(struct uroce_qp *qp)
{
	qp->resp->epsn = qp->attr.rq_psn & UROCE_PSN_MASK;
	qp->resp->mtu = uroce_mtu_bytes(qp->attr.path_mtu);
}

/* Responder resources the QP was given (max_dest_rd_atomic). */
static uint32_t
res_limit(const struct uroce_qp *qp)
{
	return RTE_MIN((uint32_t)qp->attr.max_dest_rd_atomic, qp->resp->res_cap);
}

static struct uroce_resp_res *
res_at(struct uroce_responder *r, uint32_t i)
{
	return &r->res[(r->res_head + i) % r->res_cap];
}

static struct uroce_resp_res *
res_push(struct uroce_qp *qp)
{
	struct uroce_responder *r = qp->resp;
	struct uroce_resp_res *e = res_at(r, r->res_cnt);

	qp->resp_owed = true;
	r->res_cnt++;
	memset(e, 0, sizeof(*e));
	return e;
}

static void
res_pop(struct uroce_responder *r)
{
	r->res_head = (r->res_head + 1) % r->res_cap;
	r->res_cnt--;
}

/* ---------------------------------------------------------------------------
 * Owed frames.
 */
static void
owe_ack(struct uroce_qp *qp)
{
	struct uroce_responder *r = qp->resp;

	qp->resp_owed = true;
	r->ack_owed = true;
	r->ack_psn = psn_add(r->epsn, UROCE_PSN_MASK);
}

void
uroce_resp_owe_cnp(struct uroce_qp *qp)
{
	qp->resp_owed = true;
	qp->resp->cnp_owed = true;
}

/* One NAK is owed at a time; a later one replaces it (an error that
 * moves the QP to ERR after a sequence error). Counted when sent. */
static void
owe_nak(struct uroce_qp *qp, uint8_t syn, uint32_t psn)
{
	struct uroce_responder *r = qp->resp;

	qp->resp_owed = true;
	r->nak_owed = true;
	r->nak_syn = syn;
	r->nak_psn = psn;
}

static void
count_nak(struct uroce_qp *qp, uint8_t syn)
{
	uint8_t code = syn & UROCE_AETH_VAL_MASK;

	if ((syn & UROCE_AETH_KIND_MASK) == UROCE_AETH_RNR_NAK)
		qp->stats.rnr_naks_tx++;
	else if (code < RTE_DIM(qp->stats.naks_tx))
		qp->stats.naks_tx[code]++;
}

static void
aeth_fill(const struct uroce_qp *qp, struct uroce_ext_fields *ext, uint8_t syn)
{
	ext->aeth.syndrome = syn;
	ext->aeth.msn = qp->resp->msn & UROCE_PSN_MASK;
}

/* An ACK or NAK frame. @return false if no mbuf. */
static bool
send_aeth(struct uroce_qp *qp, uint8_t syn, uint32_t psn, uint64_t now,
	  struct uroce_txb *txb)
{
	struct uroce_bth_fields bth = {
		.opcode = UROCE_OPC_RC_ACK | uroce_qp_opc_base(qp), .pkey = 0xffff,
		.dqpn = qp->attr.dest_qp_num, .psn = psn,
	};
	struct uroce_ext_fields ext;
	struct rte_mbuf *m;
	uint8_t *payload;

	memset(&ext, 0, sizeof(ext));
	aeth_fill(qp, &ext, syn);
	m = uroce_frame_alloc(qp, &qp->path, bth.opcode, 0, &payload);
	if (m == NULL) {
		uroce_req_retry_wait(qp, now);
		return false;
	}
	uroce_frame_finish(qp, m, &qp->path, &bth, &ext, 0, txb);
	return true;
}

/*
 * The affiliated asynchronous error of a responder error that moves an RC
 * QP to ERR (IBTA 11.6.3, ibv_get_async_event(3)), by NAK code: an invalid
 * request is IBV_EVENT_QP_REQ_ERR, a remote access violation (the QP's
 * enables, an R_Key, bounds or rights) IBV_EVENT_QP_ACCESS_ERR. They name
 * the responder's QP, which has no completion to report the error in; an
 * error that completed a receive WQE (a message too long for it, a buffer
 * not writable) is reported by that completion alone, as a NIC does.
 */
static const struct {
	bool raise;
	enum ibv_event_type ev;
} nak_event[UROCE_NAK_CODE_COUNT] = {
	[UROCE_NAK_INV_REQ] = { true, IBV_EVENT_QP_REQ_ERR },
	[UROCE_NAK_REM_ACCESS] = { true, IBV_EVENT_QP_ACCESS_ERR },
};

static void
rc_error(struct uroce_qp *qp, uint8_t code, uint32_t psn)
{
	struct uroce_responder *r = qp->resp;
	bool raise = code < UROCE_NAK_CODE_COUNT && nak_event[code].raise &&
		     !r->err_wc && qp->state != IBV_QPS_ERR;

	/* Class C/D errors (IBTA 9.9.3): NAK, then the QP goes to ERR. */
	QP_LOG(INFO, qp, "NAK code %u at PSN %u", code, psn);
	r->err_wc = false;
	owe_nak(qp, UROCE_AETH_NAK | code, psn);
	if (raise)
		uroce_qp_async(qp, nak_event[code].ev);
	uroce_qp_to_err(qp);
}

static uint8_t
read_resp_opcode(bool first, bool last)
{
	if (first)
		return last ? UROCE_OPC_RC_READ_RESP_ONLY : UROCE_OPC_RC_READ_RESP_FIRST;
	return last ? UROCE_OPC_RC_READ_RESP_LAST : UROCE_OPC_RC_READ_RESP_MIDDLE;
}

/* One packet of the response at the head of the queue. */
static bool
send_res(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb)
{
	struct uroce_responder *r = qp->resp;
	struct uroce_resp_res *e = res_at(r, 0);
	struct uroce_bth_fields bth = {
		.pkey = 0xffff, .dqpn = qp->attr.dest_qp_num, .psn = e->psn,
	};
	struct uroce_ext_fields ext;
	uint32_t plen = 0, flen;
	bool last = true;
	struct rte_mbuf *m;
	uint8_t *payload;
	void *host = NULL;

	memset(&ext, 0, sizeof(ext));
	aeth_fill(qp, &ext, UROCE_AETH_ACK | UROCE_AETH_CREDIT_INVALID);
	if (e->atomic) {
		bth.opcode = UROCE_OPC_RC_ATOMIC_ACK | uroce_qp_opc_base(qp);
		ext.atmack_orig = e->orig;
	} else {
		plen = RTE_MIN(e->left, r->mtu);
		last = e->left <= r->mtu;
		bth.opcode = read_resp_opcode(e->psn == e->first_psn, last) |
			     uroce_qp_opc_base(qp);
		/* Read the memory now, through the key again: the region may
		 * have gone since the request (IBTA 10.6.3). */
		if (plen > 0 &&
		    uroce_mr_check_remote_qp(qp->env->mrs, e->pd, qp, e->rkey, e->va, plen,
					  IBV_ACCESS_REMOTE_READ, &host) < 0) {
			res_pop(r);
			rc_error(qp, UROCE_NAK_REM_ACCESS, e->psn);
			return true;
		}
	}
	/* READ and atomic responses are data the QP sends: paced (qp_pace.c). */
	flen = uroce_frame_len(&qp->path, bth.opcode, plen);
	if (!uroce_qp_pace(qp, now, flen)) {
		/* The rest of this response gathers; later ones are not
		 * looked at. */
		uroce_qp_pace_wait(qp, now, flen,
				   e->atomic ? 0 : e->left - plen);
		return false;
	}
	m = uroce_frame_alloc(qp, &qp->path, bth.opcode, plen, &payload);
	if (m == NULL) {
		uroce_req_retry_wait(qp, now);
		return false;
	}
	/* Memory unmapped since the registration (or an on-demand page not
	 * mapped now) faults: a remote access error, as a bad key. */
	if (plen > 0 && uroce_memguard_copy(payload, host, plen, host) < 0) {
		rte_pktmbuf_free(m);
		res_pop(r);
		rc_error(qp, UROCE_NAK_REM_ACCESS, e->psn);
		return true;
	}
	uroce_frame_finish(qp, m, &qp->path, &bth, &ext, plen, txb);
	e->va += plen;
	e->left -= plen;
	e->psn = psn_add(e->psn, 1);
	if (last)
		res_pop(r);
	return true;
}

/* A CNP to the peer's QP (A17.9.2): BECN, the 16 reserved bytes zero,
 * Not-ECT (the opcode is not ECN-capable), neither paced nor charged. */
static bool
send_cnp(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb)
{
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
	struct rte_mbuf *m;
	uint8_t *payload;

	uroce_wire_cnp_bth(&bth, qp->attr.dest_qp_num, 0xffff);
	memset(&ext, 0, sizeof(ext));
	m = uroce_frame_alloc(qp, &qp->path, bth.opcode, 0, &payload);
	if (m == NULL) {
		uroce_req_retry_wait(qp, now);
		return false;
	}
	uroce_frame_finish(qp, m, &qp->path, &bth, &ext, 0, txb);
	qp->stats.np_cnp_sent++;
	return true;
}

/* Next owed frame: a CNP first (it carries no PSN), then in PSN order an
 * ACK for PSNs before the queued responses, the responses, then the ACK
 * and NAK that follow them. */
static bool
send_owed_one(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb)
{
	struct uroce_responder *r = qp->resp;

	if (unlikely(r->cnp_owed)) {
		if (!send_cnp(qp, now, txb))
			return false;
		r->cnp_owed = false;
		return true;
	}

	if (r->ack_owed &&
	    (r->res_cnt == 0 || psn_diff(r->ack_psn, res_at(r, 0)->psn) < 0)) {
		if (!send_aeth(qp, UROCE_AETH_ACK | UROCE_AETH_CREDIT_INVALID,
			       r->ack_psn, now, txb))
			return false;
		qp->stats.acks_tx++;
		r->ack_owed = false;
		r->unacked = 0;
		return true;
	}
	if (r->res_cnt > 0)
		return send_res(qp, now, txb);
	if (r->nak_owed) {
		if (!send_aeth(qp, r->nak_syn, r->nak_psn, now, txb))
			return false;
		count_nak(qp, r->nak_syn);
		r->nak_owed = false;
		return true;
	}
	return false;
}

/* Whether an ACK, a NAK or a response is owed; the QP's hint follows. */
static bool
resp_owes(struct uroce_qp *qp)
{
	const struct uroce_responder *r = qp->resp;

	qp->resp_owed = r->ack_owed || r->nak_owed || r->res_cnt > 0 ||
			r->cnp_owed;
	return qp->resp_owed;
}

/*
 * resp_owed, on the QP's own hot line, is set wherever something comes to
 * be owed (owe_ack(), owe_nak(), res_push()) and cleared here: a requester
 * turn of a QP that owes nothing does not load the responder (one cache
 * miss a call at 10,000 QPs).
 */
bool
uroce_resp_tx(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb)
{
	if (!qp->resp_owed || !resp_owes(qp))
		return false;
	if (!uroce_qp_path_ready(qp, now))
		return false;
	while (!uroce_txb_full(txb))
		if (!send_owed_one(qp, now, txb))
			return false;
	if (qp->resp->res_cnt > 0)	/* paced responses left, not an ACK */
		uroce_qp_pace_turn(qp, now);
	return resp_owes(qp);
}

/* ---------------------------------------------------------------------------
 * Receive completions.
 */
static void
recv_complete(struct uroce_qp *qp, enum ibv_wc_status status,
	      enum ibv_wc_opcode opcode, uint32_t len,
	      const struct uroce_pkt *pkt, const struct uroce_ext_fields *ext)
{
	const struct uroce_recv_wqe *rw = uroce_qp_rwqe(qp);
	struct ibv_wc wc;

	if (status != IBV_WC_SUCCESS)
		qp->resp->err_wc = true;	/* no async event (rc_error) */
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = rw->wr_id;
	wc.status = status;
	wc.opcode = opcode;
	wc.byte_len = len;
	wc.qp_num = qp->qpn;
	wc.src_qp = qp->attr.dest_qp_num;
	if (status == IBV_WC_SUCCESS && (pkt->op->flags & UROCE_OPF_IMM)) {
		wc.wc_flags |= IBV_WC_WITH_IMM;
		wc.imm_data = ext->imm;
	}
	if (status == IBV_WC_SUCCESS && (pkt->op->flags & UROCE_OPF_INV)) {
		wc.wc_flags |= IBV_WC_WITH_INV;
		wc.invalidated_rkey = ext->ieth_rkey;
	}
	if (uroce_qp_on_tm_srq(qp))
		uroce_tm_rx_plain_wc(qp, &wc);
	uroce_qp_rwqe_done(qp);
	qp->resp->rcv_off = 0;
	uroce_qp_complete(qp, qp->recv_cq, &wc, pkt->bth.se);
}

/* No receive WQE for the next message (the RQ's, or one the SRQ gives:
 * asking takes it, uroce_qp_rwqe()). */
static bool
rq_empty(struct uroce_qp *qp)
{
	return uroce_qp_rwqe(qp) == NULL;
}

/* ---------------------------------------------------------------------------
 * Executing requests. Each returns RX_OK, RX_RNR, or RX_NAK with *code.
 */

/* Every packet but the last of a message carries exactly a path MTU
 * (IBTA ch. 9.7, the responder's length checks). */
static bool
mid_len_ok(const struct uroce_qp *qp, const struct uroce_pkt *pkt)
{
	return (pkt->op->flags & UROCE_OPF_LAST) ||
	       pkt->payload_len == qp->resp->mtu;
}

/* What the tag-matching path's results mean here. */
static const enum rx_res tm_res[] = {
	[UROCE_TM_RX_OK] = RX_OK,
	[UROCE_TM_RX_RNR] = RX_RNR,
	[UROCE_TM_RX_NAK] = RX_NAK,
};

/*
 * SEND with Invalidate, at its last packet (the IETH's; IBTA 9.4.1.2,
 * 10.6.7.2.6): the R_Key must name a type 2 window bound, with that key,
 * to this QP in its PD. Otherwise the receive WQE completes in error
 * (IBV_WC_REM_INV_REQ_ERR, as rxe) and the requester gets NAK Invalid
 * Request; the QP goes to ERR. An MR's key cannot be invalidated here:
 * uroce has no fast-registration MRs.
 */
static bool
rx_invalidate(struct uroce_qp *qp, const struct uroce_pkt *pkt,
	      const struct uroce_ext_fields *ext)
{
	int ret = uroce_mw_invalidate(qp->env->mrs, qp->pd, qp, ext->ieth_rkey);

	if (ret == 0)
		return true;
	QP_LOG(INFO, qp, "SEND with invalidate of key 0x%x failed: %d",
	       ext->ieth_rkey, ret);
	qp->stats.access_denied++;
	recv_complete(qp, IBV_WC_REM_INV_REQ_ERR, IBV_WC_RECV, 0, pkt, ext);
	return false;
}

static enum rx_res
rx_send(struct uroce_qp *qp, const struct uroce_pkt *pkt,
	const struct uroce_ext_fields *ext, uint8_t *code)
{
	struct uroce_responder *r = qp->resp;
	const struct uroce_recv_wqe *rw;
	uint32_t plen = pkt->payload_len;

	/* On a TM-SRQ the tag-matching header decides first (tm_rx.c);
	 * unexpected and NO_TAG messages go on as plain SRQ receives. */
	if (uroce_qp_on_tm_srq(qp)) {
		enum uroce_tm_rx t = uroce_tm_rx(qp, pkt, mid_len_ok(qp, pkt), code);

		if (t != UROCE_TM_RX_PLAIN)
			return tm_res[t];
	}
	if (pkt->op->flags & UROCE_OPF_FIRST) {
		if (rq_empty(qp))
			return RX_RNR;	/* ch. 9.7: nothing consumed */
		r->rcv_off = 0;
	}
	*code = UROCE_NAK_INV_REQ;
	if (!mid_len_ok(qp, pkt))
		return RX_NAK;
	rw = uroce_qp_rwqe(qp);
	if ((uint64_t)r->rcv_off + plen > rw->length) {
		/* Longer than the receive buffers (IBTA 9.9.3): the WQE
		 * completes in error, the requester gets Invalid Request. */
		recv_complete(qp, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, pkt, ext);
		return RX_NAK;
	}
	if (uroce_rwqe_scatter(qp, rw, r->rcv_off, uroce_pkt_payload(pkt),
			       plen) < 0) {
		recv_complete(qp, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, pkt, ext);
		*code = UROCE_NAK_REM_OP;
		return RX_NAK;
	}
	r->rcv_off += plen;
	if ((pkt->op->flags & UROCE_OPF_INV) && !rx_invalidate(qp, pkt, ext)) {
		*code = UROCE_NAK_INV_REQ;
		return RX_NAK;
	}
	if (pkt->op->flags & UROCE_OPF_LAST) {
		recv_complete(qp, IBV_WC_SUCCESS, IBV_WC_RECV, r->rcv_off, pkt, ext);
		r->msn++;
	}
	return RX_OK;
}

/* NAK code of an R_Key check failure (uroce_mr.h). */
static uint8_t
key_nak(int err)
{
	return err == -UROCE_MR_EALIGN ? UROCE_NAK_INV_REQ : UROCE_NAK_REM_ACCESS;
}

static enum rx_res
rx_write(struct uroce_qp *qp, const struct uroce_pkt *pkt,
	 const struct uroce_ext_fields *ext, uint8_t *code)
{
	struct uroce_responder *r = qp->resp;
	uint32_t plen = pkt->payload_len;
	bool last = pkt->op->flags & UROCE_OPF_LAST;
	void *host;
	int ret;

	if (pkt->op->flags & UROCE_OPF_FIRST) {
		ret = uroce_mr_check_remote_qp(qp->env->mrs, qp->pd, qp, ext->reth.rkey,
					    ext->reth.va, ext->reth.len,
					    IBV_ACCESS_REMOTE_WRITE, &host);
		if (ret < 0) {
			*code = key_nak(ret);
			return RX_NAK;
		}
		r->w_va = ext->reth.va;
		r->w_rkey = ext->reth.rkey;
		r->w_left = ext->reth.len;
		r->w_len = ext->reth.len;
	}
	/* The packets must add up to RETH.len exactly (IBTA ch. 9.7). */
	*code = UROCE_NAK_INV_REQ;
	if (!mid_len_ok(qp, pkt) || plen > r->w_left || (last && plen != r->w_left))
		return RX_NAK;
	/* WRITE with immediate consumes a receive WQE at its last packet:
	 * check before touching memory, so an RNR NAK changes nothing. */
	if ((pkt->op->flags & UROCE_OPF_IMM) && rq_empty(qp))
		return RX_RNR;
	if (plen > 0) {
		ret = uroce_mr_check_remote_qp(qp->env->mrs, qp->pd, qp, r->w_rkey, r->w_va,
					    plen, IBV_ACCESS_REMOTE_WRITE, &host);
		if (ret == 0)
			ret = uroce_memguard_copy(host, uroce_pkt_payload(pkt),
						  plen, host);
		if (ret < 0) {	/* -EFAULT: unmapped since registered */
			*code = key_nak(ret);
			return RX_NAK;
		}
	}
	r->w_va += plen;
	r->w_left -= plen;
	if (last) {
		if (pkt->op->flags & UROCE_OPF_IMM)
			recv_complete(qp, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM,
				      r->w_len, pkt, ext);
		r->msn++;
	}
	return RX_OK;
}

static uint32_t
read_packets(const struct uroce_qp *qp, uint32_t len)
{
	return len == 0 ? 1 : (len + qp->resp->mtu - 1) / qp->resp->mtu;
}

static void
res_read_init(const struct uroce_qp *qp, struct uroce_resp_res *e, uint32_t psn,
	      const struct uroce_ext_fields *ext)
{
	e->atomic = false;
	e->first_psn = psn;
	e->psn = psn;
	e->last_psn = psn_add(psn, read_packets(qp, ext->reth.len) - 1);
	e->va = ext->reth.va;
	e->rkey = ext->reth.rkey;
	e->pd = qp->pd;
	e->left = ext->reth.len;
}

static enum rx_res
rx_read(struct uroce_qp *qp, const struct uroce_pkt *pkt,
	const struct uroce_ext_fields *ext, uint8_t *code)
{
	struct uroce_responder *r = qp->resp;
	void *host;
	int ret;

	/* More than max_dest_rd_atomic outstanding: invalid request. */
	*code = UROCE_NAK_INV_REQ;
	if (r->res_cnt >= res_limit(qp) || ext->reth.len > UROCE_MSG_MAX)
		return RX_NAK;
	ret = uroce_mr_check_remote_qp(qp->env->mrs, qp->pd, qp, ext->reth.rkey,
				    ext->reth.va, ext->reth.len,
				    IBV_ACCESS_REMOTE_READ, &host);
	if (ret < 0) {
		*code = key_nak(ret);
		return RX_NAK;
	}
	res_read_init(qp, res_push(qp), pkt->bth.psn, ext);
	r->msn++;
	return RX_OK;
}

/* Real CPU atomics on host memory (IBTA ch. 9.4): atomic against QPs of
 * other lcores and against the host's own CPU. -EFAULT when the memory is
 * gone since the registration. */
static int
atomic_exec(const struct uroce_pkt *pkt, const struct uroce_ext_fields *ext,
	    uint64_t *host, uint64_t *orig)
{
	if (pkt->op->kind == UROCE_OP_CMP_SWAP)
		return uroce_memguard_cas(host, ext->atmeth.cmp,
					  ext->atmeth.swap_add, orig);
	return uroce_memguard_fadd(host, ext->atmeth.swap_add, orig);
}

static enum rx_res
rx_atomic(struct uroce_qp *qp, const struct uroce_pkt *pkt,
	  const struct uroce_ext_fields *ext, uint8_t *code)
{
	struct uroce_responder *r = qp->resp;
	struct uroce_resp_res *e;
	struct uroce_replay *rp;
	uint64_t orig;
	void *host;
	int ret;

	*code = UROCE_NAK_INV_REQ;
	if (r->res_cnt >= res_limit(qp))
		return RX_NAK;
	ret = uroce_mr_check_remote_qp(qp->env->mrs, qp->pd, qp, ext->atmeth.rkey,
				    ext->atmeth.va, 8, IBV_ACCESS_REMOTE_ATOMIC,
				    &host);
	if (ret == 0)
		ret = atomic_exec(pkt, ext, host, &orig);
	if (ret < 0) {
		*code = key_nak(ret);
		return RX_NAK;
	}
	e = res_push(qp);
	e->atomic = true;
	e->first_psn = e->last_psn = e->psn = pkt->bth.psn;
	e->orig = orig;
	/* Remember the answer: a duplicate must not execute again. */
	rp = &r->replay[r->replay_next];
	r->replay_next = (r->replay_next + 1) % RTE_MAX(res_limit(qp), 1u);
	rp->valid = true;
	rp->psn = pkt->bth.psn;
	rp->orig = e->orig;
	r->msn++;
	return RX_OK;
}

/*
 * The QP's remote access enables each request kind needs (IBTA ch. 9.7,
 * the responder's checks of a request, and 10.6.3: both the QP's enables
 * and the key's rights must allow it): RDMA Write for WRITE and WRITE with
 * immediate (every packet), RDMA Read, Atomic. They are ibv_modify_qp(3)'s
 * qp_access_flags as the QP holds them now: a modify runs on the QP's own
 * lcore, between two packets. Checked after the opcode sequence and before
 * the responder resources, the length and the R_Key, the order rxe checks
 * them in, so a refused request touches nothing whatever its key allows.
 */
static const unsigned int kind_qp_access[UROCE_OP_KIND_COUNT] = {
	[UROCE_OP_WRITE] = IBV_ACCESS_REMOTE_WRITE,
	[UROCE_OP_READ_REQ] = IBV_ACCESS_REMOTE_READ,
	[UROCE_OP_CMP_SWAP] = IBV_ACCESS_REMOTE_ATOMIC,
	[UROCE_OP_FETCH_ADD] = IBV_ACCESS_REMOTE_ATOMIC,
};

static bool
qp_access_ok(const struct uroce_qp *qp, const struct uroce_opcode_info *op)
{
	unsigned int need = kind_qp_access[op->kind];

	return ((unsigned int)qp->attr.qp_access_flags & need) == need;
}

static enum rx_res
execute(struct uroce_qp *qp, const struct uroce_pkt *pkt,
	const struct uroce_ext_fields *ext, uint8_t *code)
{
	switch (pkt->op->kind) {
	case UROCE_OP_SEND:
		return rx_send(qp, pkt, ext, code);
	case UROCE_OP_WRITE:
		return rx_write(qp, pkt, ext, code);
	case UROCE_OP_READ_REQ:
		return rx_read(qp, pkt, ext, code);
	default:
		return rx_atomic(qp, pkt, ext, code);
	}
}

/* ---------------------------------------------------------------------------
 * RC.
 */

/* A request before epsn (IBTA ch. 9.7, duplicate requests): SEND/WRITE are
 * acknowledged again, a READ is executed again from memory, an atomic is
 * answered from the replay cache, never executed twice. */
static void
rx_duplicate(struct uroce_qp *qp, const struct uroce_pkt *pkt,
	     const struct uroce_ext_fields *ext)
{
	struct uroce_responder *r = qp->resp;
	uint32_t psn = pkt->bth.psn, i;
	void *host;

	qp->stats.dup_reqs++;
	if (pkt->op->kind == UROCE_OP_SEND || pkt->op->kind == UROCE_OP_WRITE) {
		if (pkt->bth.ackreq)
			owe_ack(qp);
		return;
	}
	for (i = 0; i < r->res_cnt; i++) {
		struct uroce_resp_res *e = res_at(r, i);

		if (psn_diff(psn, e->first_psn) < 0 || psn_diff(psn, e->last_psn) > 0)
			continue;
		/* Still queued: a READ starts again from the PSN asked. */
		if (!e->atomic)
			res_read_init(qp, e, psn, ext);
		return;
	}
	if (r->res_cnt >= res_limit(qp))
		return;		/* no room: the requester asks again */
	if (pkt->op->kind == UROCE_OP_READ_REQ) {
		/* Read again only while the QP still allows it. */
		if (qp_access_ok(qp, pkt->op) &&
		    uroce_mr_check_remote_qp(qp->env->mrs, qp->pd, qp, ext->reth.rkey,
					  ext->reth.va, ext->reth.len,
					  IBV_ACCESS_REMOTE_READ, &host) == 0)
			res_read_init(qp, res_push(qp), psn, ext);
		return;
	}
	for (i = 0; i < res_limit(qp); i++) {
		if (r->replay[i].valid && r->replay[i].psn == psn) {
			struct uroce_resp_res *e = res_push(qp);

			e->atomic = true;
			e->first_psn = e->last_psn = e->psn = psn;
			e->orig = r->replay[i].orig;
			return;
		}
	}
}

/*
 * After a packet executed: an ACK when it asks for one (AckReq), or after
 * UROCE_RESP_ACK_EVERY packets that did not, else none yet. IBTA 9.7.5.1
 * requires an acknowledgement for a request with AckReq set and lets one
 * ACK cover every PSN before it (coalescing), so the others need no ACK of
 * their own, and no timer: our requester (and rxe, and the NICs) sets
 * AckReq on the last packet of every message, on every
 * UROCE_REQ_ACKREQ_EVERY-th one of a long message and on the one that
 * fills its window, so every stream of requests ends with one. A paced QP
 * whose packets come milliseconds apart thus gets one ACK per message,
 * not one per packet (a coalescing timer shorter than the gap would fire
 * between any two of them).
 */
static void
ack_policy(struct uroce_qp *qp, const struct uroce_pkt *pkt)
{
	struct uroce_responder *r = qp->resp;

	if (pkt->op->kind == UROCE_OP_READ_REQ || pkt->op->kind == UROCE_OP_CMP_SWAP ||
	    pkt->op->kind == UROCE_OP_FETCH_ADD)
		return;		/* the response is the acknowledgement */
	r->unacked++;
	if (pkt->bth.ackreq || r->unacked >= UROCE_RESP_ACK_EVERY)
		owe_ack(qp);
}

static void
rc_rx(struct uroce_qp *qp, const struct uroce_pkt *pkt)
{
	struct uroce_responder *r = qp->resp;
	uint32_t psn = pkt->bth.psn;
	struct uroce_ext_fields ext;
	int32_t d = psn_diff(psn, r->epsn);
	uint8_t code = 0, next;
	enum cls c;

	uroce_wire_ext_get(pkt, &ext);
	/* XRC target: the SRQ named by the XRCETH serves this request (its
	 * WQEs, CQ, PD); one of another domain is an invalid request (IBTA
	 * A14.4). Duplicates and PSN errors need no SRQ. */
	if (qp->type == IBV_QPT_XRC_RECV && uroce_xrc_bind(qp, ext.xrc_srqn) < 0 &&
	    d == 0) {
		rc_error(qp, UROCE_NAK_INV_REQ, psn);
		return;
	}
	if (d < 0) {
		rx_duplicate(qp, pkt, &ext);
		return;
	}
	if (d > 0) {
		/* Ahead of epsn (IBTA ch. 9.7): one PSN sequence error NAK,
		 * then silence until epsn arrives. */
		qp->stats.out_of_seq++;
		if (!r->nak_seq_sent) {
			r->nak_seq_sent = true;
			owe_nak(qp, UROCE_AETH_NAK | UROCE_NAK_PSN_SEQ, r->epsn);
		}
		return;
	}
	r->nak_seq_sent = false;
	c = classify(pkt->op);
	next = c == CLS_BAD ? S_BAD : seq_next[r->seq][c];
	if (next == S_BAD) {
		rc_error(qp, UROCE_NAK_INV_REQ, psn);
		return;
	}
	/* An operation the QP does not enable: NAK Remote Access Error and
	 * the QP to ERR, as for an R_Key violation (IBTA 9.9.3): the
	 * requester's IBV_WC_REM_ACCESS_ERR of a RoCE NIC (rxe answers
	 * Invalid Request instead). */
	if (!qp_access_ok(qp, pkt->op)) {
		qp->stats.access_denied++;
		rc_error(qp, UROCE_NAK_REM_ACCESS, psn);
		return;
	}
	switch (execute(qp, pkt, &ext, &code)) {
	case RX_RNR:
		owe_nak(qp, UROCE_AETH_RNR_NAK | (qp->attr.min_rnr_timer & 31), psn);
		return;
	case RX_NAK:
		rc_error(qp, code, psn);
		return;
	case RX_OK:
		break;
	}
	r->seq = next;
	r->epsn = pkt->op->kind == UROCE_OP_READ_REQ ?
		psn_add(res_at(r, r->res_cnt - 1)->last_psn, 1) : psn_add(psn, 1);
	ack_policy(qp, pkt);
}

/* ---------------------------------------------------------------------------
 * UC (IBTA ch. 9.8): no ACK, no NAK. A PSN gap or any error drops the message
 * in progress (its receive WQE is used again) and every packet up to the
 * next FIRST or ONLY.
 */
static void
uc_drop(struct uroce_qp *qp)
{
	struct uroce_responder *r = qp->resp;

	qp->stats.drops++;
	r->uc_drop = true;
	r->seq = S_NONE;
	r->rcv_off = 0;
}

static void
uc_rx(struct uroce_qp *qp, const struct uroce_pkt *pkt)
{
	struct uroce_responder *r = qp->resp;
	struct uroce_ext_fields ext;
	uint8_t code, next;
	enum cls c;

	if (pkt->bth.psn != r->epsn && !r->uc_drop) {
		/* A gap: the message in progress is lost. */
		qp->stats.out_of_seq++;
		r->uc_drop = true;
		r->seq = S_NONE;
		r->rcv_off = 0;
	}
	r->epsn = psn_add(pkt->bth.psn, 1);
	if (r->uc_drop) {
		if (!(pkt->op->flags & UROCE_OPF_FIRST)) {
			qp->stats.drops++;
			return;
		}
		r->uc_drop = false;
		r->seq = S_NONE;
	}
	c = classify(pkt->op);
	next = c == CLS_BAD ? S_BAD : seq_next[r->seq][c];
	if (next == S_BAD) {
		uc_drop(qp);
		return;
	}
	/* A WRITE the QP does not enable: dropped with its message. */
	if (!qp_access_ok(qp, pkt->op)) {
		qp->stats.access_denied++;
		uc_drop(qp);
		return;
	}
	uroce_wire_ext_get(pkt, &ext);
	if (execute(qp, pkt, &ext, &code) != RX_OK) {
		uc_drop(qp);
		return;
	}
	r->seq = next;
}

/*
 * An ACK a request leaves owed is not built here but after the receive
 * burst (uroce_qp_tx_owed(), which the engine calls for the burst's QPs;
 * the kick asks for a transmit call otherwise). One ACK then answers all
 * the requests of a burst that ask for one (IBTA 9.7.5.1.1: an ACK
 * acknowledges every request before its PSN), rather than one per
 * request: a stream of small SENDs, each the last packet of its message,
 * would draw as many ACKs as requests, and both ends would handle twice
 * the frames. A ping-pong's burst is its one request: its ACK leaves at
 * once.
 */
void
uroce_resp_rx(struct uroce_qp *qp, const struct uroce_pkt *pkt, uint64_t now,
	      struct uroce_txb *txb)
{
	/* The first request a connected QP in RTR receives: Communication
	 * Established (IBTA 11.6.3), once, so that a passive side whose RTU
	 * was lost can move to RTS (rdma_cm's rdma_establish()). Later
	 * packets, and those after RTS, raise nothing. */
	if (qp->state == IBV_QPS_RTR && !qp->resp->comm_est) {
		qp->resp->comm_est = true;
		uroce_qp_async(qp, IBV_EVENT_COMM_EST);
	}
	if (qp->type == IBV_QPT_UC) {
		uc_rx(qp, pkt);
		return;
	}
	rc_rx(qp, pkt);
	if (qp->type == IBV_QPT_XRC_RECV)
		uroce_xrc_unbind(qp);
	if (!qp->resp_owed)
		return;
	/* NAKs, READ and atomic responses leave at once, as they did: a
	 * response held to the end of the burst keeps its responder
	 * resource, and a duplicate request behind it in the same burst
	 * then finds none free and goes unanswered (go-back-N after a lost
	 * response sends that pattern again and again). */
	if (qp->resp->nak_owed || qp->resp->res_cnt > 0) {
		if (uroce_resp_tx(qp, now, txb))
			uroce_qp_kick(qp);
		return;
	}
	uroce_qp_kick(qp);	/* only an ACK: after the burst */
}
