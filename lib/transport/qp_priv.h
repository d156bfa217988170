/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * What qp.c, requester.c, completer.c, responder.c, ud.c and wqe.c share:
 * the requester's and responder's private state, PSN arithmetic, and the
 * helpers that build frames and push completions.
 *
 * Everything here runs on the QP's owner lcore (uroce_qp.h, Threads),
 * except where a comment says otherwise.
 */
#ifndef UROCE_QP_PRIV_H
#define UROCE_QP_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_log.h>

#include "transport_priv.h"
#include "uroce_qp.h"

/* ------------------------------------------------------------------------
 * Tunables.
 */
/** Request PSNs in flight before the requester waits for an ACK: 8 MiB
 *  at a 2,048 B path MTU, 2.4 ms at 28 Gbit/s, so that a responder's
 *  stall of a millisecond does not stop a stream (256 PSNs, 0.15 ms at
 *  that rate, would). The PSN space allows 2^23. */
#define UROCE_REQ_WINDOW	4096
/** ACKREQ on every Nth packet of a long message (and on its last). */
#define UROCE_REQ_ACKREQ_EVERY	32
/** The responder ACKs packets with ACKREQ, and at least every N without. */
#define UROCE_RESP_ACK_EVERY	32
/** Ask resolve() again, or retry an empty mempool, after this long. */
#define UROCE_RETRY_WAIT_US	50
/** Most READ/atomic responder resources a QP can have (max_dest_rd_atomic). */
#define UROCE_RESP_RES_MAX	256
/** Longest message (IBTA 9.4: 2^31 bytes). */
#define UROCE_MSG_MAX		(UINT32_C(1) << 31)
/** rnr_retry 7 means "retry for ever" (IBTA ch. 9.7). */
#define UROCE_RNR_RETRY_INF	7

#define UROCE_TIME_OFF		UINT64_MAX

/* AETH syndrome (IBTA 9.3.5, Table 43): bits 7..5 say which kind. */
#define UROCE_AETH_ACK		0x00	/* low 5 bits: credit count */
#define UROCE_AETH_RNR_NAK	0x20	/* low 5 bits: RNR timer code */
#define UROCE_AETH_NAK		0x60	/* low 5 bits: NAK code */
#define UROCE_AETH_KIND_MASK	0xe0
#define UROCE_AETH_VAL_MASK	0x1f
#define UROCE_AETH_CREDIT_INVALID 0x1f	/* no end-to-end credits (the AETH credit field) */

/* NAK codes (IBTA Table 44), also the index of stats.naks_*[]. */
enum uroce_nak_code {
	UROCE_NAK_PSN_SEQ = 0,
	UROCE_NAK_INV_REQ = 1,
	UROCE_NAK_REM_ACCESS = 2,
	UROCE_NAK_REM_OP = 3,
	UROCE_NAK_CODE_COUNT
};

#define QP_LOG(lvl, qp, fmt, ...)					\
	rte_log(RTE_LOG_ ## lvl, uroce_transport_logtype,		\
		"qp %u (%s): " fmt "\n", (qp)->qpn,			\
		uroce_qp_state_name((qp)->state), ##__VA_ARGS__)

/* ------------------------------------------------------------------------
 * PSN arithmetic (24 bits, IBTA 9.7.1): a - b as a signed distance.
 */
static inline uint32_t
psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & UROCE_PSN_MASK;
}

static inline int32_t
psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

/* ------------------------------------------------------------------------
 * Requester (requester.c) and completer (completer.c): their state, struct
 * uroce_requester, is in uroce_qp.h, where the QP holds it.
 */

/* The requester's and completer's entry points (qp.c calls them). */
void uroce_req_reset(struct uroce_qp *qp);
void uroce_req_start(struct uroce_qp *qp);	/* RTR->RTS: sq_psn */
void uroce_req_attrs(struct uroce_qp *qp);	/* timeout/retry/mtu changed */
bool uroce_req_tx(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb);
void uroce_req_timer(struct uroce_qp *qp, uint64_t now);
uint64_t uroce_req_deadline(const struct uroce_qp *qp);
void uroce_comp_rx(struct uroce_qp *qp, const struct uroce_pkt *pkt,
		   uint64_t now);
void uroce_req_check_drained(struct uroce_qp *qp);
/* Retire WQEs the completer finished; requester.c owns the SQ indexes. */
void uroce_req_retire(struct uroce_qp *qp);
/* Complete the WQE at idx with an error and move the QP to ERR. */
void uroce_req_fail(struct uroce_qp *qp, uint32_t idx,
		    enum ibv_wc_status status);
/* Send the packets again from psn (go-back-N, IBTA ch. 9.7). */
void uroce_req_rewind(struct uroce_qp *qp, uint32_t psn);
/* SQ index of the started WQE whose PSN range holds psn; false if none. */
bool uroce_req_find(struct uroce_qp *qp, uint32_t psn, uint32_t *idx);

/* ------------------------------------------------------------------------
 * Responder (responder.c).
 */
enum uroce_resp_seq {
	UROCE_SEQ_NONE,		/**< between messages: FIRST or ONLY next */
	UROCE_SEQ_SEND,		/**< inside a SEND: MIDDLE or LAST next */
	UROCE_SEQ_WRITE,	/**< inside a WRITE */
	UROCE_SEQ_COUNT,
	UROCE_SEQ_BAD = UROCE_SEQ_COUNT,
};

/* A READ or atomic answer waiting to be sent. */
struct uroce_resp_res {
	bool atomic;
	uint32_t first_psn;	/**< PSN of the request */
	uint32_t last_psn;	/**< last response PSN */
	uint32_t psn;		/**< next response PSN */
	uint64_t va;		/**< READ: next byte */
	uint32_t rkey;
	const void *pd;		/**< READ: the R_Key's PD (XRC: the SRQ's) */
	uint32_t left;		/**< READ: bytes still to send */
	uint64_t orig;		/**< atomic: the value before */
};

struct uroce_replay {
	bool valid;
	uint32_t psn;
	uint64_t orig;
};

struct uroce_responder {
	uint32_t epsn;		/**< expected PSN */
	uint32_t msn;		/**< messages completed (24 bits) */
	uint8_t seq;		/**< enum uroce_resp_seq */
	bool nak_seq_sent;	/**< silent until epsn arrives (IBTA ch. 9.7) */
	bool uc_drop;		/**< UC: dropping up to the next FIRST/ONLY */
	/* The message in progress. */
	uint32_t rcv_off;	/**< SEND: bytes scattered so far */
	uint64_t w_va;		/**< WRITE: next address */
	uint32_t w_rkey;
	uint32_t w_left;	/**< WRITE: bytes RETH.len still allows */
	uint32_t w_len;		/**< WRITE: RETH.len */
	/* Owed frames. */
	bool ack_owed;
	bool cnp_owed;		/**< a CNP for a CE mark (qp_cc.c) */
	uint32_t ack_psn;
	bool nak_owed;
	uint8_t nak_syn;	/**< AETH syndrome of the owed NAK */
	uint32_t nak_psn;
	uint32_t unacked;	/**< packets since the last ACK */
	uint32_t mtu;
	/* READ/atomic resources: a FIFO of res_cap entries. */
	uint32_t res_cap, res_head, res_cnt;
	struct uroce_resp_res *res;
	struct uroce_replay *replay;	/**< last res_cap atomics */
	uint32_t replay_next;
	/* On a TM-SRQ (tm_rx.c): where the SEND in progress goes. */
	uint8_t tm_mode;	/**< enum uroce_tm_mode */
	uint32_t tm_slot;	/**< TAGGED: the tag it matched */
	uint32_t tm_flags;	/**< TAGGED: IBV_WC_TM_MATCH not yet reported */
	/* Asynchronous events (responder.c). */
	bool err_wc;		/**< the error in hand completed a receive WQE */
	bool comm_est;		/**< IBV_EVENT_COMM_EST raised since RESET */
};

void uroce_resp_reset(struct uroce_qp *qp);
void uroce_resp_start(struct uroce_qp *qp);	/* INIT->RTR: rq_psn */
void uroce_resp_rx(struct uroce_qp *qp, const struct uroce_pkt *pkt,
		   uint64_t now, struct uroce_txb *txb);
bool uroce_resp_tx(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb);

/* ------------------------------------------------------------------------
 * RC QPs on a tag-matching SRQ (tm_rx.c).
 */
enum uroce_tm_mode {
	UROCE_TMM_NONE,		/**< plain receive, IBV_WC_RECV (unexpected) */
	UROCE_TMM_NO_TAG,	/**< plain receive, IBV_WC_TM_NO_TAG */
	UROCE_TMM_TAGGED,	/**< EAGER data to the matched tag */
	UROCE_TMM_DISCARD,	/**< rest of a matched RNDV request: ignored */
};

/* What uroce_tm_rx() made of a SEND packet: the responder's rx results,
 * or PLAIN: rx_send() goes on as for a plain SRQ. */
enum uroce_tm_rx {
	UROCE_TM_RX_OK,
	UROCE_TM_RX_RNR,
	UROCE_TM_RX_NAK,
	UROCE_TM_RX_PLAIN,
};

/* Internal send WQEs of a rendezvous (never posted by the application). */
#define UROCE_SEND_TM_RNDV	(UINT32_C(1) << 30)	/* READ of the data */
#define UROCE_SEND_TM_FIN	(UINT32_C(1) << 29)	/* SEND of the FIN */
#define UROCE_SEND_TM_MASK	(UROCE_SEND_TM_RNDV | UROCE_SEND_TM_FIN)
/* Bytes of a FIN: the request's TMH and RVH. */
#define UROCE_TM_FIN_LEN	32u
/* Send slots a QP on a TM-SRQ has beyond what it asked for: the SRQ owns
 * the QP's send queue for rendezvous (tag_matching.md), each a READ and a
 * FIN, and a QP may ask for none (max_send_wr 0): two rendezvous at once. */
#define UROCE_TM_RNDV_SQ_SLOTS	4u

static inline bool
uroce_qp_on_tm_srq(const struct uroce_qp *qp)
{
	return qp->srq != NULL && qp->srq->type == IBV_SRQT_TM;
}

/* A SEND packet of a QP on a TM-SRQ (len_ok: its length is right for its
 * place in the message); *code is the NAK code for UROCE_TM_RX_NAK. */
enum uroce_tm_rx uroce_tm_rx(struct uroce_qp *qp, const struct uroce_pkt *pkt,
			     bool len_ok, uint8_t *code);
/* A plain receive completion of such a QP: opcode and flags. */
void uroce_tm_rx_plain_wc(const struct uroce_qp *qp, struct ibv_wc *wc);
/* The QP's tagged receives in progress (and with sq, its rendezvous
 * READs) complete flushed when complete, else are only given back. */
void uroce_tm_qp_flush(struct uroce_qp *qp, bool sq, bool complete);
/* The completion an internal WQE produces: false if none. */
bool uroce_tm_sq_wc(struct uroce_qp *qp, const struct uroce_send_wqe *w,
		    enum ibv_wc_status status, struct ibv_wc *wc,
		    struct uroce_cq **cq);

/* ------------------------------------------------------------------------
 * UD (ud.c).
 */
bool uroce_ud_tx(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb);
/*
 * The send side shared by the QPs that complete a send once its frame is
 * built (UD and RAW_PACKET: no ACK). send_one builds the frame of the WQE
 * at the SQ tail, or completes it with an error: 1, or 0 to wait (the
 * requester's wait_at set).
 */
typedef int (*uroce_dgram_send_fn)(struct uroce_qp *qp,
				   struct uroce_send_wqe *w, uint64_t now,
				   struct uroce_txb *txb);
bool uroce_dgram_tx(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb,
		    uroce_dgram_send_fn send_one);
/* Complete the WQE at the SQ tail and release it (the slot is free before
 * the CQE is visible); an error moves the QP to SQE. */
void uroce_dgram_complete(struct uroce_qp *qp, const struct uroce_send_wqe *w,
			  enum ibv_wc_status status);
void uroce_ud_rx(struct uroce_qp *qp, const struct uroce_pkt *pkt,
		 uint64_t now);

/* ------------------------------------------------------------------------
 * XRC (xrc.c).
 */
/* Bytes of the WQE an XRC target holds (the largest an SRQ may have). */
size_t uroce_xrc_wqe_size(const struct uroce_qp_env *env);
/* Target: borrow the SRQ the XRCETH names (its WQEs, CQ and PD) for this
 * request; -EINVAL when it is no XRC SRQ of the QP's domain, or another
 * SRQ than the one the message in progress holds a WQE of. */
int uroce_xrc_bind(struct uroce_qp *qp, uint32_t srqn);
/* After the request: give the SRQ back unless a WQE of it is held. */
void uroce_xrc_unbind(struct uroce_qp *qp);

/* ------------------------------------------------------------------------
 * RAW_PACKET (raw.c); its receive is uroce_qp_raw_rx() (uroce_qp.h).
 */
bool uroce_raw_tx(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb);

/* ------------------------------------------------------------------------
 * QP-wide helpers (qp.c).
 */
/* Move to ERR (flushing what is outstanding) or SQE, as an error demands. */
void uroce_qp_to_err(struct uroce_qp *qp);
void uroce_qp_to_sqe(struct uroce_qp *qp);
/* Raise an affiliated asynchronous event of the QP (owner lcore). */
void uroce_qp_async(struct uroce_qp *qp, enum ibv_event_type ev);
/* Path of an RC/UC QP ready to use (dmac known); resolve() again if not. */
bool uroce_qp_path_ready(struct uroce_qp *qp, uint64_t now);
/* Cycles of a duration in microseconds. */
uint64_t uroce_qp_us_to_cycles(const struct uroce_qp *qp, uint64_t us);

/* Try the send side again a little later (no mbuf, path unresolved). */
static inline void
uroce_req_retry_wait(struct uroce_qp *qp, uint64_t now)
{
	qp->req.wait_at = now + uroce_qp_us_to_cycles(qp, UROCE_RETRY_WAIT_US);
	qp->req.stop = UROCE_REQ_STOP_NONE;
}
/* Pacing (qp_pace.c): true if a frame of bytes may go now (charged);
 * else uroce_qp_pace_wait() sets the time to try again, given the bytes
 * queued behind the frame (for the batch; UINT32_MAX: plenty). */
bool uroce_qp_pace(struct uroce_qp *qp, uint64_t now, uint32_t bytes);
/* The rate in force from the user's limit, the static rate and DCQCN's
 * (qp_pace.c); kick: from a control path (a CNP, the timer, modify_qp),
 * not a transmit. */
void uroce_qp_pace_cc(struct uroce_qp *qp, uint64_t now, bool kick);
/* The limit an address vector's static rate puts on the QP (0: none) and
 * its profile (qp_pace.c); changes nothing. */
int uroce_qp_static_rate_prepare(const struct uroce_qp *qp,
				 enum ibv_rate rate, uint32_t *kbps,
				 struct uroce_tb_profile *prof);
/* UD: a bucket per paced address handle (ud_pace.c). init allocates
 * them with a UD QP (-ENOMEM), fini frees them. uroce_ud_pace_ah(): the
 * AH's bucket if it holds the frame's bytes at now, to be charged by
 * uroce_ud_pace_charge() once the QP's own bucket lets the frame go; NULL
 * with the QP set to wait (req.wait_at) for it. */
int uroce_ud_pace_init(struct uroce_qp *qp);
void uroce_ud_pace_fini(struct uroce_qp *qp);
struct uroce_tb *uroce_ud_pace_ah(struct uroce_qp *qp,
				  const struct uroce_ah *ah, uint64_t now,
				  uint32_t bytes);
void uroce_ud_pace_charge(struct uroce_tb *tb, uint64_t now, uint32_t bytes);
/* The tight profile an address vector's static rate calls for on this
 * port, and its rate (0: the rate paces nothing; qp_pace.c). */
int uroce_static_rate_profile(const struct uroce_qp_env *env,
			      enum ibv_rate rate, uint32_t *kbps,
			      struct uroce_tb_profile *prof);
/* The limit without congestion control: the lower of the user's and the
 * static rate (0: none), its profile in *prof. */
uint32_t uroce_qp_pace_base(const struct uroce_qp *qp,
			    const struct uroce_tb_profile **prof);

/* Congestion control (qp_cc.c). */
void uroce_qp_cnp_rx(struct uroce_qp *qp, const struct uroce_pkt *pkt,
		     uint64_t now);
void uroce_qp_ce_rx(struct uroce_qp *qp, uint64_t now);
void uroce_qp_cc_timer(struct uroce_qp *qp, uint64_t now);
void uroce_qp_cc_sent(struct uroce_qp *qp, uint64_t now, uint32_t bytes);
void uroce_qp_cc_reset(struct uroce_qp *qp);
/* responder.c: a CNP is owed to the peer's QP. */
void uroce_resp_owe_cnp(struct uroce_qp *qp);
/* How late a wake-up for a batch may be (qp_pace.c, Wake-up); 0 unpaced. */
uint64_t uroce_qp_pace_late(const struct uroce_qp *qp);
void uroce_qp_pace_wait(struct uroce_qp *qp, uint64_t now, uint32_t bytes,
			uint32_t more);
/* The send side stops with its transmit batch full and frames left
 * (qp_pace.c, Lost rate). */
void uroce_qp_pace_turn(struct uroce_qp *qp, uint64_t now);
/* from + the payload bytes of the send WQEs posted behind SQ index idx,
 * summed up to the pacing batch: what uroce_qp_pace_wait() may gather.
 * Reads the poster's head: call it only to wait. */
uint32_t uroce_qp_pace_behind(struct uroce_qp *qp, uint32_t idx,
			      uint32_t from);

/* RC and the XRC initiator: ACKed requests, a window, retries, ERR on a
 * send error. */
static inline bool
uroce_qp_initiator(const struct uroce_qp *qp)
{
	return qp->type == IBV_QPT_RC || qp->type == IBV_QPT_XRC_SEND;
}

/* The BTH opcode bits of the QP's transport (IBTA Table 38): RC 0x00,
 * UC 0x20, XRC 0xa0; the operation bits are RC's. */
static inline uint8_t
uroce_qp_opc_base(const struct uroce_qp *qp)
{
	if (qp->type == IBV_QPT_UC)
		return UROCE_OPC_UC_BASE;
	if (qp->type == IBV_QPT_XRC_SEND || qp->type == IBV_QPT_XRC_RECV)
		return UROCE_OPC_XRC_BASE;
	return 0;
}

static inline void
uroce_qp_kick(struct uroce_qp *qp)
{
	if (qp->env->ops != NULL && qp->env->ops->kick != NULL)
		qp->env->ops->kick(qp->env->ctx, qp);
}

/* ------------------------------------------------------------------------
 * WQE and frame helpers (wqe.c).
 */
static inline struct uroce_send_wqe *
uroce_sq_wqe(const struct uroce_qp *qp, uint32_t idx)
{
	return uroce_ring_slot_at(&qp->sq, idx);
}

static inline struct uroce_recv_wqe *
uroce_rq_wqe(const struct uroce_qp *qp, uint32_t idx)
{
	return uroce_ring_slot_at(&qp->rq, idx);
}

/* Entry i of a caller's scatter/gather list, copied: the verbs API puts
 * no alignment on the list (libiscsi's iSER descriptors are packed and
 * hold theirs at 4-byte offsets), and struct ibv_sge wants 8. */
static inline struct ibv_sge
uroce_sge_at(const struct ibv_sge *list, int i)
{
	struct ibv_sge s;

	memcpy(&s, (const char *)list + (size_t)i * sizeof(s), sizeof(s));
	return s;
}

/*
 * Receive WQEs, from the QP's RQ or its SRQ (wqe.c). The responder, UD and
 * RAW_PACKET receive paths ask uroce_qp_rwqe() for the WQE the current
 * message goes to (NULL: none posted: RNR NAK or drop), scatter into it
 * with uroce_rwqe_scatter(), and call uroce_qp_rwqe_done() when the
 * message completes (before its CQE is pushed). With an SRQ the first ask
 * takes a WQE out of the SRQ into qp->srq_wqe, where it stays until done:
 * a message that is dropped and started again (UC) reuses it.
 */
const struct uroce_recv_wqe *uroce_qp_rwqe(struct uroce_qp *qp);
void uroce_qp_rwqe_done(struct uroce_qp *qp);
/* Scatter into a receive WQE: its lkeys belong to the SRQ's PD if any. */
int uroce_rwqe_scatter(const struct uroce_qp *qp,
		       const struct uroce_recv_wqe *rw, uint32_t off,
		       const void *src, uint32_t len);
/* A receive WR's checks (num_sge in 0..max_sge: else -EINVAL) and bytes;
 * then its WQE. Shared by ibv_post_recv and ibv_post_srq_recv. */
int uroce_recv_wr_check(const struct ibv_recv_wr *wr, uint32_t max_sge,
			uint32_t *len);
void uroce_recv_wqe_fill(struct uroce_recv_wqe *r,
			 const struct ibv_recv_wr *wr, uint32_t len);

static inline bool
uroce_wqe_is_rd_atomic(const struct uroce_send_wqe *w)
{
	return w->opcode == IBV_WR_RDMA_READ ||
	       w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* A memory window operation: run by the requester, no packet. */
static inline bool
uroce_wqe_is_local(const struct uroce_send_wqe *w)
{
	return w->opcode == IBV_WR_BIND_MW || w->opcode == IBV_WR_LOCAL_INV;
}

static inline bool
uroce_wqe_is_atomic(const struct uroce_send_wqe *w)
{
	return w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* Copy len bytes at message offset off of a send WQE into dst. */
int uroce_wqe_gather(const struct uroce_qp *qp, const struct uroce_send_wqe *w,
		     uint32_t off, void *dst, uint32_t len);
/* Check every SGE of a send WQE (local read), before its first packet. */
int uroce_wqe_check(const struct uroce_qp *qp, const struct uroce_send_wqe *w);
/* Copy len bytes to message offset off of a scatter list (local write). */
int uroce_sge_scatter(const struct uroce_qp *qp, const struct ibv_sge *sge,
		      uint32_t num_sge, uint32_t off, const void *src,
		      uint32_t len);

/* Complete the WQE at the SQ tail with status and release its slot (the
 * slot is free before the completion is visible): a successful WQE
 * completes if signaled, an unsuccessful one always; the internal WQEs of
 * a rendezvous (tm_rx.c) complete on the TM-SRQ's CQ, or not at all. */
void uroce_sq_complete_tail(struct uroce_qp *qp, enum ibv_wc_status status);
/* Scatter into an SGE list whose lkeys belong to pd. */
int uroce_pd_scatter(const struct uroce_qp *qp, const void *pd,
		     const struct ibv_sge *sge, uint32_t num_sge, uint32_t off,
		     const void *src, uint32_t len);
/* Copy a READ response or atomic result into a send WQE's SGEs (a
 * rendezvous READ's SGE is a tagged buffer of the TM-SRQ's PD). */
int uroce_wqe_scatter(const struct uroce_qp *qp, const struct uroce_send_wqe *w,
		      uint32_t off, const void *src, uint32_t len);

/* The completion of a send WQE. */
void uroce_send_wc(const struct uroce_qp *qp, const struct uroce_send_wqe *w,
		   enum ibv_wc_status status, struct ibv_wc *wc);
/* Push wc on cq: CQ overrun -> IBV_EVENT_CQ_ERR; armed -> cq_event. */
void uroce_qp_complete(struct uroce_qp *qp, struct uroce_cq *cq,
		       const struct ibv_wc *wc, bool solicited);
/* Whether a successful send WQE produces a completion. */
static inline bool
uroce_wqe_signaled(const struct uroce_qp *qp, const struct uroce_send_wqe *w)
{
	return qp->sq_sig_all || (w->send_flags & IBV_SEND_SIGNALED);
}

/* Complete every SQ (and RQ when rq) WQE with IBV_WC_WR_FLUSH_ERR. With
 * an SRQ, flush_rq completes the WQE the QP holds, never the SRQ's. */
void uroce_qp_flush_sq(struct uroce_qp *qp);
void uroce_qp_flush_rq(struct uroce_qp *qp);

/*
 * Frames. uroce_frame_alloc() takes an mbuf large enough for the headers of
 * opcode on l2l3 plus plen bytes of payload, and returns where the payload
 * goes; uroce_frame_finish() writes the headers, pad and ICRC, counts the
 * frame and appends it to txb. NULL when the pool is empty (wait_at set).
 */
struct rte_mbuf *uroce_frame_alloc(struct uroce_qp *qp,
				   const struct uroce_l2l3 *l2l3,
				   uint8_t opcode, uint32_t plen,
				   uint8_t **payload);
void uroce_frame_finish(struct uroce_qp *qp, struct rte_mbuf *m,
			const struct uroce_l2l3 *l2l3,
			const struct uroce_bth_fields *bth,
			const struct uroce_ext_fields *ext, uint32_t plen,
			struct uroce_txb *txb);
/* uroce_frame_finish() in two steps, the headers (returns their length)
 * before the payload is copied in, pad and ICRC after: the copy's time lets
 * the headers' narrow stores reach the cache before the ICRC's 16-byte
 * loads read them back (a load that spans several stores still in flight
 * waits for all of them). */
uint32_t uroce_frame_hdrs(struct uroce_qp *qp, struct rte_mbuf *m,
			  const struct uroce_l2l3 *l2l3,
			  const struct uroce_bth_fields *bth,
			  const struct uroce_ext_fields *ext, uint32_t plen);
void uroce_frame_seal(struct uroce_qp *qp, struct rte_mbuf *m, uint32_t hl,
		      uint32_t plen, struct uroce_txb *txb);
/* Where the port computes IPv4 header checksums (env->tx_ip_cksum) and
 * l2l3 is IPv4: mark m for it (ol_flags, l2_len, l3_len) and return
 * UROCE_WIRE_IP_CKSUM_OL for the builder; 0 otherwise. */
unsigned int uroce_frame_tx_ol(const struct uroce_qp *qp, struct rte_mbuf *m,
			       const struct uroce_l2l3 *l2l3);
/* Bytes of a frame (for pacing) before it is built. */
uint32_t uroce_frame_len(const struct uroce_l2l3 *l2l3, uint8_t opcode,
			 uint32_t plen);

#endif /* UROCE_QP_PRIV_H */
