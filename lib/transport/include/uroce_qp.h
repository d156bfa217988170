/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_QP_H
#define UROCE_QP_H

/**
 * @file
 * A queue pair and the transport that runs it: the contract between the
 * transport (qp.c, requester.c, completer.c, responder.c, ud.c, raw.c) and
 * the engine that owns the QP (lib/engine).
 *
 * Threads (docs/architecture.md, Threads and ownership: one owner per QP):
 *  - uroce_qp_post_send() and uroce_qp_post_recv() run on application
 *    threads. They write WQEs into the SQ/RQ rings (SPSC; a per-queue
 *    spinlock keeps the producer single when several threads post) and
 *    call env->ops->kick().
 *  - Every other function runs on the QP's owner lcore only (or, in unit
 *    tests, on the one thread that drives the QP): uroce_qp_rx(),
 *    uroce_qp_tx(), uroce_qp_timer(), uroce_qp_modify(), uroce_qp_query(),
 *    uroce_qp_destroy(). The engine turns control verbs into messages to
 *    the owner.
 *
 * Time is an argument: now is a TSC value (env->tsc_hz cycles a second).
 * Tests pass a fake clock.
 *
 * Packets are mbufs. The engine hands the transport parsed frames (the
 * frame contiguous in the first segment; the transport does not keep or
 * free the mbuf) and collects the frames the transport builds in a
 * struct uroce_txb (the transport allocates them from env->pool; they are
 * complete frames with their ICRC; a frame may be a chain).
 *
 * Scheduling. The transport never loops on its own. It tells the engine
 * what it needs:
 *  - kick(qp): the QP has something to transmit now; the engine calls
 *    uroce_qp_tx() soon, and again while it returns true;
 *  - uroce_qp_deadline(qp): the earliest TSC at which uroce_qp_timer()
 *    must run (retransmit, RNR wait, pacing), and
 *    uroce_qp_deadline_latest() how late it may run; the engine
 *    reads them after every call into the QP and (re)arms its timer.
 *
 * Errors are negative errno.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_spinlock.h>

#include "uroce_cq.h"
#include "uroce_mr.h"
#include "uroce_qp_modify.h"
#include "uroce_ring.h"
#include "uroce_ring_mem.h"
#include "uroce_pace.h"
#include "uroce_dcqcn.h"
#include "uroce_srq.h"
#include "uroce_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

struct uroce_qp;

/* ------------------------------------------------------------------------
 * What a device gives its QPs: the environment, filled by the engine once
 * per device (port) and read-only afterwards.
 */

/** Hooks into the engine. ctx is uroce_qp_env.ctx. */
struct uroce_qp_env_ops {
	/**
	 * Fill l2l3->dmac for l2l3->dgid (the next hop's MAC): 0, -EAGAIN
	 * while resolution is under way (the transport asks again later,
	 * at the latest at its next timer), -EHOSTUNREACH when it failed.
	 * Owner lcore.
	 */
	int (*resolve)(void *ctx, struct uroce_l2l3 *l2l3);
	/** qp has work to transmit. Any thread (post verbs call it). */
	void (*kick)(void *ctx, struct uroce_qp *qp);
	/** An affiliated asynchronous event (IBV_EVENT_*) of a QP or a CQ
	 *  (obj is the struct uroce_qp * or struct uroce_cq *). Owner. */
	void (*async_event)(void *ctx, enum ibv_event_type ev, void *obj);
	/** cq asks for its completion channel to be signalled. Owner. */
	void (*cq_event)(void *ctx, struct uroce_cq *cq);
	/** XRC targets: the SRQ numbered srqn, or NULL; valid until the
	 *  owner's next quiescent point (the engine frees SRQs after one).
	 *  Owner. NULL: no SRQ is ever found. */
	struct uroce_srq *(*srq_lookup)(void *ctx, uint32_t srqn);
};

/** The engine's env.tx_zc_min where zero-copy is allowed. Below it a copy
 *  into one mbuf costs less than the chain (3 mbufs, attach, refcounts):
 *  uroce-zcopy-bench: the chain costs more up to 2 KiB, the same at 4 KiB. */
#define UROCE_TX_ZC_MIN		4096

/** Largest GID table of a port. */
#define UROCE_GID_TBL_MAX	16

struct uroce_qp_env {
	const struct uroce_qp_env_ops *ops;
	void *ctx;
	struct rte_mempool *pool;	/**< tx mbufs (data room >= port MTU + 128) */
	struct uroce_mr_table *mrs;	/**< the device's regions */
	struct uroce_qp_limits lim;	/**< modify_qp checks (active_mtu ...) */
	uint64_t tsc_hz;
	uint8_t mac[6];			/**< the port's MAC: source of every frame */
	bool vlan;			/**< the port tags its frames */
	uint16_t vlan_id;		/**< 12 bits; PCP comes from the SL */
	uint16_t gid_cnt;		/**< valid entries of gid[] */
	union uroce_gid gid[UROCE_GID_TBL_MAX]; /**< 0: IPv4-mapped, then IPv6 */
	uint16_t mtu;			/**< the ethdev's IP MTU (the frame budget) */
	bool tx_extbuf;			/**< port takes external-buffer mbufs */
	/** The port's NIC computes IPv4 header checksums: frames leave the
	 *  field 0 and carry RTE_MBUF_F_TX_IP_CKSUM (wqe.c). */
	bool tx_ip_cksum;
	/** RC request payloads of at least this many bytes go out zero-copy
	 *  from registered memory (zcopy.c); 0: always copied. Non-zero
	 *  only where tx_extbuf holds and [port] zero_copy is on. */
	uint32_t tx_zc_min;
	uint32_t max_sge;		/**< device caps the create checks use */
	uint32_t max_inline;
	uint32_t max_qp_wr;
	uint32_t max_srq_wr;		/**< SRQ caps (uroce_srq_create()) */
	uint32_t max_srq_sge;
	/** [port] cc = dcqcn (qp_cc.c): RC and UC paths leave ECT(0), CE
	 *  marks are answered with CNPs, CNPs drive DCQCN. */
	bool cc;
	struct uroce_dcqcn_params dcqcn;	/**< periods in TSC cycles */
	uint64_t cnp_interval;		/**< cycles between one QP's CNPs */
};

/** Bytes of the path MTU (IBV_MTU_256 ... IBV_MTU_4096). */
static inline uint32_t
uroce_mtu_bytes(enum ibv_mtu mtu)
{
	return 128u << mtu;
}

/**
 * Release a lock of the data path (the post locks, the engine's native
 * lock). rte_spinlock_unlock() is an xchg on x86: a locked instruction,
 * which waits until every store before it is visible to other cores,
 * such as the frame just written into a memif ring that the peer polls
 * (hundreds of cycles). A RELEASE store orders the critical
 * section before the release just as well, at the cost of a plain store.
 */
static inline void
uroce_spin_unlock(rte_spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------------
 * Transmit batches.
 */
#define UROCE_TXB_MAX	64

struct uroce_txb {
	uint16_t n;			/**< frames in pkts[] */
	uint16_t cap;			/**< at most UROCE_TXB_MAX */
	struct rte_mbuf *pkts[UROCE_TXB_MAX];
};

static inline bool
uroce_txb_full(const struct uroce_txb *b)
{
	return b->n >= b->cap;
}

/** Append a built frame; the caller checked !uroce_txb_full(). */
static inline void
uroce_txb_add(struct uroce_txb *b, struct rte_mbuf *m)
{
	b->pkts[b->n++] = m;
}

/* ------------------------------------------------------------------------
 * Work queue entries, as the rings hold them. A slot is the fixed part
 * followed by max(num_sge * sizeof(struct ibv_sge), max_inline) bytes:
 * the gather list, or the data itself for IBV_SEND_INLINE (copied at
 * post time, so the caller's buffer is free when the post returns).
 */
struct uroce_ah;

struct uroce_send_wqe {
	uint64_t wr_id;
	uint8_t opcode;			/**< enum ibv_wr_opcode */
	uint8_t num_sge;
	uint16_t pad0;
	uint32_t send_flags;		/**< enum ibv_send_flags */
	uint32_t length;		/**< message bytes (sum of the SGEs) */
	rte_be32_t imm;			/**< imm_data or invalidate_rkey */
	uint32_t rkey;			/**< RDMA, atomic; BIND_MW: the new key */
	uint64_t remote_addr;		/**< BIND_MW: the window's address */
	uint64_t compare_add;		/**< atomic: compare or add; BIND_MW: length */
	uint64_t swap;
	union {
		struct {
			struct uroce_ah *ah;	/**< UD */
			uint32_t remote_qpn;	/**< UD */
			uint32_t remote_qkey;	/**< UD */
		};
		struct {			/**< BIND_MW */
			uint32_t mw_key;	/**< the window's key now */
			uint32_t mr_lkey;	/**< the MR, 0 for none */
			uint32_t mw_access;	/**< mw_access_flags */
		};
	};
	/* Owner-lcore progress state (the requester/completer's own). */
	uint32_t first_psn;
	uint32_t last_psn;
	uint32_t state;			/**< requester-private */
	uint32_t xrc_srqn;		/**< XRC_SEND: the target SRQ (XRCETH) */
	uint8_t data[];			/**< struct ibv_sge[num_sge] or inline bytes */
};

struct uroce_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t length;		/**< sum of the SGE lengths */
	struct ibv_sge sge[];
};

/* ------------------------------------------------------------------------
 * Address handles (UD destinations), created by the engine.
 */
struct uroce_ah {
	struct ibv_ah_attr attr;	/**< as created (ibv_query_ah) */
	const void *pd;
	struct uroce_l2l3 l2l3;		/**< built at create; dmac resolved */
	bool resolved;			/**< dmac known */
	/** attr.static_rate holds sends to it below the line rate (IBTA
	 *  9.11; uroce_ah_static_rate()): each UD QP keeps a bucket for it
	 *  (ud_pace.c). False: a send to it pays this one test. */
	bool paced;
	uint64_t id;			/**< unique while paced: the buckets' key */
	struct uroce_tb_profile pace_prof;	/**< when paced */
};

/**
 * Check and apply an address handle's static rate on this port (IBTA
 * 9.11): -EINVAL if attr.static_rate is not an enum ibv_rate; paced, with
 * a tight profile and a fresh id, when it is below the line rate.
 */
int uroce_ah_static_rate(const struct uroce_qp_env *env, struct uroce_ah *ah);

/* ------------------------------------------------------------------------
 * Counters of one QP (telemetry /uroce/qp,<n>). Owner lcore writes them
 * with plain adds; other threads may read them (aligned 64-bit loads are
 * not torn on x86-64) and get a value that is at most a little stale.
 * Every member is a uint64_t (lib/engine/stats.c sums them as an array).
 */
struct uroce_qp_stats {
	uint64_t tx_pkts, tx_bytes;	/**< frames built, frame bytes */
	uint64_t pace_wait_cycles;	/**< time spent waiting for tokens (beside
					 *   tx_*: a paced frame moves all three,
					 *   in one line) */
	/** Tokens dropped at the burst while frames were queued, that is
	 *  rate lost for good (qp_pace.c, Lost rate), by why the QP's send
	 *  side had stopped (enum uroce_req_stop less one): [0] a frame
	 *  waited for tokens and was served late, [1] the PSN window was
	 *  full, [2] a full transmit batch, waiting for its next turn; and
	 *  [3] nothing was posted: the application's pause, not a loss of
	 *  the stack (a benchmark that does not keep its QP busy). */
	uint64_t pace_lost_bytes[4];
	uint64_t rx_pkts, rx_bytes;	/**< frames delivered to the QP */
	uint64_t retransmits;		/**< request packets sent again */
	uint64_t timeouts;		/**< local ACK timeouts with an ACK owed
					 *   (each spends a retry) */
	uint64_t late_timeouts;		/**< expiries with none owed: the QP
					 *   itself was late (requester.c) */
	uint64_t acks_tx, acks_rx;
	uint64_t naks_tx[4];		/**< by NAK code: PSN seq, inv req, rem acc, rem op */
	uint64_t naks_rx[4];
	uint64_t rnr_naks_tx, rnr_naks_rx;
	uint64_t dup_reqs;		/**< duplicate requests seen by the responder */
	uint64_t out_of_seq;		/**< requests ahead of the expected PSN */
	uint64_t drops;			/**< packets the QP dropped (bad P_Key/Q_Key,
					 *   wrong state, UC gap ...) */
	/* Breakdowns (telemetry). drops stays the total. */
	uint64_t rnr_retries;		/**< RNR NAKs answered by a resend after the wait */
	uint64_t dup_resps;		/**< responses for no outstanding PSN (dropped) */
	uint64_t drop_state;		/**< frames in a state that takes none, or a
					 *   response in RTR */
	uint64_t drop_opcode;		/**< opcode of another transport or QP type */
	uint64_t drop_pkey;		/**< P_Key mismatch (IBTA 10.9) */
	uint64_t drop_qkey;		/**< UD Q_Key mismatch (IBTA 10.2.4) */
	uint64_t drop_no_rwqe;		/**< UD frame without a receive WQE */
	uint64_t srq_taken;		/**< receive WQEs taken from the SRQ */
	uint64_t access_denied;		/**< requests the QP's qp_access_flags
					 *   refuse (RC: NAKed, UC: dropped) */
	/** Congestion control (qp_cc.c), named as RoCE NICs name them: frames
	 *  received with CE, CNPs sent for them, CNPs that cut the rate, and
	 *  CNPs ignored (within rate_reduce_monitor_period of a cut). */
	uint64_t np_ecn_marked_roce_packets;
	uint64_t np_cnp_sent;
	uint64_t rp_cnp_handled;
	uint64_t rp_cnp_ignored;
	/** UD: waits for the tokens of an address handle's static rate
	 *  (ud_pace.c); their time is in pace_wait_cycles. */
	uint64_t pace_ah_waits;
};

/* ------------------------------------------------------------------------
 * The QP.
 */
struct uroce_qp_cap {
	uint32_t max_send_wr, max_recv_wr;	/**< ring slots (powers of two) */
	uint32_t max_send_sge, max_recv_sge;
	uint32_t max_inline_data;
};

/*
 * The requester's and completer's state (requester.c, completer.c; no
 * other file touches it). It is here rather than in qp_priv.h because the
 * QP holds it (struct uroce_qp, req). SQ indexes are the ring's
 * free-running counters: WQEs in [sq.tail, start_idx) have PSNs and wait
 * for completion; [start_idx, sq.head) are not started yet.
 */
/* Why the requester last stopped with frames left to send (qp_pace.c,
 * Lost rate): what the tokens its bucket drops meanwhile are lost to. */
enum uroce_req_stop {
	UROCE_REQ_STOP_NONE,	/* a retry or RNR wait, or not sending */
	UROCE_REQ_STOP_TOKENS,	/* wait_at is a pacing wait for a batch */
	UROCE_REQ_STOP_WINDOW,	/* UROCE_REQ_WINDOW PSNs unacknowledged */
	UROCE_REQ_STOP_TURN,	/* its transmit batch full: the next call */
	UROCE_REQ_STOP_IDLE,	/* nothing posted */
};

struct uroce_requester {
	uint32_t start_idx;	/**< next WQE to start */
	uint32_t tx_idx;	/**< WQE of the next packet to send */
	uint32_t tx_psn;	/**< its PSN (== next_psn when tx_idx == start_idx) */
	uint32_t next_psn;	/**< first PSN not given to any WQE */
	uint32_t una;		/**< oldest PSN not yet acknowledged */
	uint32_t sent_psn;	/**< first PSN never transmitted */
	uint32_t ack_due;	/**< PSN after the last packet sent that
				 *   asks for a response (AckReq, a message's
				 *   end): one is owed while una is before it */
	uint32_t rd_started;	/**< READ/atomic WQEs started, not retired */
	uint32_t retry_left;	/**< transport retries left (retry_cnt) */
	uint32_t rnr_left;	/**< RNR retries left (rnr_retry) */
	uint32_t mtu;		/**< path MTU in bytes */
	/* Copies of attributes (uroce_req_attrs()), so that a transmit call
	 * and an ACK read no line of qp->attr. */
	uint32_t dqpn;		/**< dest_qp_num */
	uint64_t rto_cycles;	/**< retransmit timeout; 0 = infinite */
	uint64_t rto_at;	/**< retransmit deadline or UROCE_TIME_OFF */
	uint64_t last_tx;	/**< TSC of the last request packet sent */
	uint64_t last_rx;	/**< TSC of the last response (ACK, NAK, READ
				 *   response, atomic ACK) to an outstanding
				 *   PSN, progress or not */
	uint64_t rnr_at;	/**< end of an RNR wait or UROCE_TIME_OFF */
	uint64_t wait_at;	/**< retry resolve/mbuf/pacing then */
	uint64_t pace_late;	/**< uroce_qp_pace_late(), kept in step */
	uint32_t gap_una;	/**< una a response gap already rewound to */
	bool gap_rewound;
	bool ackreq_next;	/**< the next packet asks for an ACK */
	bool sqd_notified;	/**< IBV_EVENT_SQ_DRAINED raised for this SQD */
	uint8_t stop;		/**< enum uroce_req_stop */
	uint8_t retry_cnt;	/**< copies, as dqpn */
	uint8_t rnr_retry;
};

struct uroce_zc;		/* zcopy.c private */
struct uroce_ud_pace;		/* ud_pace.c private */
struct uroce_responder;		/* responder.c private */

struct uroce_qp {
	/* Fixed at create. */
	const struct uroce_qp_env *env;
	uint32_t qpn;
	enum ibv_qp_type type;
	const void *pd;
	struct uroce_cq *send_cq, *recv_cq;
	bool sq_sig_all;
	struct uroce_qp_cap cap;
	struct uroce_srq *srq;		/**< receives come from it, or NULL */
	unsigned int lcore;		/**< owner engine lcore (engine sets it) */
	void *user;			/**< the verbs layer's object */
	void *engine;			/**< the engine's per-QP state */

	/* Application side: the work queues (producer: posters). */
	rte_spinlock_t sq_lock __rte_cache_aligned;
	struct uroce_ring sq;		/**< struct uroce_send_wqe slots */
	rte_spinlock_t rq_lock;
	struct uroce_ring rq;		/**< struct uroce_recv_wqe slots */
	void *sq_mem, *rq_mem;
	/** State the posters see (RESET: post fails), written by the owner. */
	volatile enum ibv_qp_state post_state;

	/* Owner side. A paced QP woken from the timing wheel is a cold QP
	 * (10,000 of them take turns), so what a transmit call reads is
	 * packed into six lines from a 128-byte boundary, pairs that an
	 * adjacent-line prefetcher fetches together: the state line, the
	 * path's headers, the requester (two lines), the bucket with its
	 * profile, and the counters a frame moves (the engine prefetches the
	 * six, uroce_qp_prefetch()). */
	enum ibv_qp_state state __rte_aligned(2 * RTE_CACHE_LINE_SIZE);
	/** The responder may owe an ACK, NAK or response (responder.c keeps
	 *  it: never false while something is owed). */
	bool resp_owed;
	bool path_resolved;
	/* Pacing (qp_pace.c): the requester consults it when pace_on. */
	bool pace_on;
	/** DCQCN holds the QP below the line rate (qp_cc.c): its byte
	 *  counter runs on what the pacer charges. */
	bool cc_active;
	struct uroce_responder *resp;
	struct uroce_zc *zc;		/**< zero-copy frames' buffer owner, or NULL */
	uint64_t pace_bytes;	/**< bytes the pacer let go (charged) */
	struct uroce_l2l3 path __rte_cache_aligned; /**< RC/UC: the primary path's headers */
	/** Every type has one: UD and RAW_PACKET use its wait timer and SQD
	 *  drain state, not its window. */
	struct uroce_requester req __rte_cache_aligned;
	/* The bucket and its profile: 16 + 48 bytes, one line. */
	struct uroce_tb pace_tb __rte_cache_aligned;
	struct uroce_tb_profile pace_prof;
	/** Its first line holds the counters a transmitted frame moves. */
	struct uroce_qp_stats stats __rte_cache_aligned;

	struct ibv_qp_attr attr;	/**< what ibv_query_qp() returns */
	/* Congestion control (qp_cc.c): the reaction point's DCQCN state,
	 * the notification point's CNP interval, and the user's rate limit's
	 * profile, which the DCQCN rate is combined with. */
	struct uroce_dcqcn cc_rp;
	struct uroce_dcqcn_np cc_np;
	uint64_t cc_rate_kbps;		/**< cc_rp's rate for readers on other
					 *   threads (relaxed atomics) */
	struct uroce_tb_profile pace_user_prof;
	/* The address vector's static rate (RC/UC), if it holds the QP below
	 * the line rate (0: none), and its profile (qp_pace.c). */
	uint32_t static_kbps;
	struct uroce_tb_profile pace_static_prof;
	/* UD: a bucket per paced address handle it sends to (ud_pace.c),
	 * allocated with the QP. */
	struct uroce_ud_pace *ud_pace;
	/* With an SRQ: the WQE the message in progress (or the next one) goes
	 * to, taken from the SRQ and held until it completes (srq.c). */
	struct uroce_recv_wqe *srq_wqe;	/**< srq->slot_size bytes */
	bool srq_held;

	/* XRC (xrc.c): the XRC domain of an XRC_RECV QP (the engine's, set
	 * at create). A target has no PD, SRQ or CQ of its own: pd, srq and
	 * recv_cq are those of the XRC SRQ the request in progress names. */
	const void *xrcd;

	/* Who made sq_mem and rq_mem (uroce_ring_mem.h), fixed at create. */
	struct uroce_ring_alloc alloc;
	bool sq_ext, rq_ext;
};

/**
 * Create a QP in RESET. Checks init (ibv_create_qp(3)): qp_type RC, UC, UD,
 * RAW_PACKET, XRC_SEND or XRC_RECV (else -EOPNOTSUPP); send_cq and recv_cq
 * given (-EINVAL), except: XRC_SEND has no receive side (recv_cq ignored,
 * stored NULL), XRC_RECV no CQ and no work queue of its own (both ignored;
 * its receives come from the XRC SRQ each request names);
 * cap within env's limits (-EINVAL); max_*_wr >= 1 rounded up to a power of
 * two. init->srq, when not NULL, is a struct uroce_srq * (cast, as a UD
 * WR's ah is a struct uroce_ah *): the QP (RC, UC or UD; else -EOPNOTSUPP)
 * takes its receives from it, has no RQ of its own (cap max_recv_wr and
 * max_recv_sge are ignored and read 0) and does not count as a user of it
 * (the engine keeps srq->refs). init->cap is NOT written; *out->cap holds
 * what was created.
 * @return 0 and *out, or a negative errno.
 */
int uroce_qp_create(const struct uroce_qp_env *env, const void *pd,
		    struct uroce_cq *send_cq, struct uroce_cq *recv_cq,
		    const struct ibv_qp_init_attr *init, uint32_t qpn,
		    struct uroce_qp **out);
/**
 * Create the QP of an RSS QP (ibv_create_qp_ex(3), IBV_QP_INIT_ATTR_RX_HASH):
 * RAW_PACKET in RESET with no CQ and no work queue of its own; frames that
 * flow rules steer to it go to the receive WQs its indirection table names
 * (the engine's RSS, lib/engine/dev_wq.c). Posting a send or a receive on
 * it is -EINVAL.
 * @return 0 and *out, or a negative errno.
 */
int uroce_qp_create_rss(const struct uroce_qp_env *env, const void *pd,
			uint32_t qpn, struct uroce_qp **out);

/** uroce_qp_create() with the send and receive rings from alloc (NULL:
 *  the default allocator; uroce_ring_mem.h). */
int uroce_qp_create_ex(const struct uroce_qp_env *env, const void *pd,
		       struct uroce_cq *send_cq, struct uroce_cq *recv_cq,
		       const struct ibv_qp_init_attr *init, uint32_t qpn,
		       const struct uroce_ring_alloc *alloc,
		       struct uroce_qp **out);

/** Free a QP (owner). Outstanding WQEs are dropped without completions,
 *  as ibv_destroy_qp(3) allows. NULL is a no-op. */
void uroce_qp_destroy(struct uroce_qp *qp);

/**
 * The headers below the BTH for an address vector (ibv_ah_attr) on this
 * port: source MAC and GID, destination GID, tclass, hop limit, flow
 * label, and the VLAN tag with PCP = SL when the port tags. Leaves dmac
 * (resolution) and udp_sport (per QP pair or per AH) to the caller.
 * -EINVAL for an sgid_index outside the GID table or GIDs of two families.
 */
int uroce_l2l3_from_ah(const struct uroce_qp_env *env,
		       const struct ibv_ah_attr *ah, struct uroce_l2l3 *l);

/* The bytes a QP out of tokens gathers before it wakes up (qp_pace.c,
 * Batching). */
static inline uint32_t
uroce_qp_pace_batch(const struct uroce_qp *qp)
{
	return qp->pace_prof.batch_bytes;
}

/**
 * ibv_modify_qp() on the owner: uroce_qp_modify_check() against env->lim,
 * then apply, then the transition's side effects: RESET empties both
 * queues; ERR flushes every outstanding WQE with IBV_WC_WR_FLUSH_ERR; RTR
 * sets up the responder (rq_psn, resolve the path); RTS the requester
 * (sq_psn); RTS->SQD drains and raises IBV_EVENT_SQ_DRAINED when
 * en_sqd_async_notify. -EINVAL changes nothing.
 */
int uroce_qp_modify(struct uroce_qp *qp, struct ibv_qp_attr *attr,
		    int mask, uint64_t now);

/** ibv_query_qp(): the stored attributes and the created caps. */
void uroce_qp_query(const struct uroce_qp *qp, struct ibv_qp_attr *attr,
		    struct ibv_qp_init_attr *init);

/**
 * ibv_post_send(): any thread. As in rdma-core's providers, WRs are posted
 * in order and the first bad one stops the list with *bad_wr set to it
 * (the ones before it stay posted). Errors: -EINVAL (state RESET/INIT/RTR, bad opcode for
 * the QP type, num_sge > max_send_sge, inline too long), -ENOMEM (SQ full).
 * Also -EINVAL: IBV_SEND_INLINE on a READ or atomic, an atomic whose gather
 * list is not one SGE of 8 bytes, a message over 2^31 bytes, a UD WR
 * without an AH; on RAW_PACKET any opcode but IBV_WR_SEND. In SQD the
 * WR waits for RTS; in SQE and ERR it is
 * accepted and flushed (IBV_WC_WR_FLUSH_ERR) by the next uroce_qp_tx().
 * Transport limits (lib/transport/qp_priv.h): at most 256 unacknowledged
 * request PSNs, ACKREQ every 32 packets and on each message's last,
 * max_rd_atomic 0 is taken as 1.
 */
int uroce_qp_post_send(struct uroce_qp *qp, struct ibv_send_wr *wr,
		       struct ibv_send_wr **bad_wr);

/** ibv_post_recv(): any thread. -EINVAL (RESET, num_sge > max_recv_sge,
 *  a QP with an SRQ), -ENOMEM (RQ full). */
int uroce_qp_post_recv(struct uroce_qp *qp, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);

/**
 * A frame for this QP (pkt->bth.dqpn == qp->qpn, parsed and ICRC-checked
 * by the engine). Requests go to the responder, responses to the
 * completer. NAKs, READ and atomic responses go into txb at once when it
 * has room (else they are owed and uroce_qp_tx() sends them); an ACK the
 * responder comes to owe is not sent here: the QP is kicked, and
 * uroce_qp_tx_owed() (the engine: after the receive burst) or
 * uroce_qp_tx() sends it, one ACK for all the burst's requests.
 */
void uroce_qp_rx(struct uroce_qp *qp, const struct uroce_pkt *pkt,
		 struct rte_mbuf *m, uint64_t now, struct uroce_txb *txb);

/**
 * RAW_PACKET QPs (raw.c): a frame the engine's flow rules steered to qp.
 * It consumes a receive WQE (the whole frame scattered, byte_len its
 * length, IBV_WC_RECV) in RTR/RTS/SQD/SQE; with no WQE posted, or in
 * another state, it is dropped and counted in stats.drops (no RNR for raw
 * QPs). The caller keeps the mbuf.
 */
void uroce_qp_raw_rx(struct uroce_qp *qp, struct rte_mbuf *m, uint64_t now);

/**
 * Transmit what the QP has for the wire now, until txb is full: owed
 * responses (ACK/NAK, READ responses, atomic ACKs) first, then requests
 * within the window, max_rd_atomic and pacing.
 * @return true if the QP still has something to send now (txb filled up).
 */
bool uroce_qp_tx(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb);

/**
 * Transmit only what the responder owes (ACK, NAK, READ and atomic
 * responses), until txb is full: what a receive burst left owed, sent
 * before the iteration's other work. qp->resp_owed says whether there is
 * any. @return true if more is owed (txb filled up).
 */
bool uroce_qp_tx_owed(struct uroce_qp *qp, uint64_t now,
		      struct uroce_txb *txb);

/** Run expired timers (retransmit, RNR, pacing). */
void uroce_qp_timer(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb);

/*
 * Asking for a cold QP's state ahead of a call on it. The engine wakes
 * paced QPs from its timing wheel a few at a time, and with 10,000 of them
 * each is out of the cache: a call that finds its lines one miss at a time
 * waits for a dozen misses in a row. Two stages, the second reading what
 * the first asked for, which the caller issues a call or more apart
 * (lib/engine/lcore.c):
 *  1. uroce_qp_prefetch(): the QP's own lines that a transmit call reads,
 *     the requester's among them;
 *  2. uroce_qp_prefetch_wqe(): the send WQE at the requester's cursor, and
 *     the zero-copy frames' owner where the path MTU lets frames go
 *     zero-copy.
 */
static inline void
uroce_qp_prefetch(const struct uroce_qp *qp)
{
	rte_prefetch0(qp);			/* env, type, CQs */
	rte_prefetch0(&qp->sq);			/* slots, mask */
	rte_prefetch0(&qp->sq.head);		/* the posters' index */
	rte_prefetch0(&qp->sq.tail);
	rte_prefetch0(&qp->state);		/* state, resp, zc */
	rte_prefetch0(&qp->path);
	rte_prefetch0(&qp->req);
	rte_prefetch0((const char *)(&qp->req + 1) - 1);
	rte_prefetch0(&qp->pace_tb);		/* and the profile */
	rte_prefetch0(&qp->stats);		/* tx_*, pace_wait_cycles */
}

/** Stage 2 (above). */
void uroce_qp_prefetch_wqe(const struct uroce_qp *qp);

/** Segments of zero-copy frames of qp that are still attached to
 *  application memory (built and not yet freed); 0 without zero-copy. */
uint32_t uroce_qp_zc_inflight(const struct uroce_qp *qp);

/** Earliest TSC at which uroce_qp_timer() must run; UINT64_MAX for none. */
uint64_t uroce_qp_deadline(const struct uroce_qp *qp);

/** The latest TSC at which uroce_qp_timer() may run for the deadline dl
 * that uroce_qp_deadline() returned, at no cost to the QP: dl itself,
 * unless dl is a paced QP's wake-up for its batch (qp_pace.c, Wake-up). */
uint64_t uroce_qp_deadline_latest(const struct uroce_qp *qp, uint64_t dl);

/** Whether a uroce_qp_tx() call at now would do nothing: the QP is in RTS,
 * owes no response, and holds its next packet back until a time still to
 * come (pacing tokens, or a retry), which uroce_qp_deadline() is at or
 * before. A kick then needs no call of its own once the QP's timer is
 * armed: the timer's call finds what the kick was for (a WQE posted, an
 * ACK's progress). */
bool uroce_qp_tx_waits(const struct uroce_qp *qp, uint64_t now);

/* ------------------------------------------------------------------------
 * Packet pacing (qp_pace.c; what counts and the default burst are
 * explained there).
 */
/** A QP out of tokens gathers a batch of at least this many typical
 *  packets, ... */
#define UROCE_PACE_BATCH_PKTS		7
/** ... of up to this many while they take at most ... */
#define UROCE_PACE_BATCH_MAX_PKTS	16
/** ... this long at its rate (qp_pace.c, Batch span), ... */
#define UROCE_PACE_BATCH_SPAN_US	40000
/** ... and of at least the bytes of this long at its rate; */
#define UROCE_PACE_BATCH_US		50
/** it leaves room in its bucket (the slack) for this long at its rate, and
 *  for at least one typical packet: the host's stalls of a busy thread
 *  (qp_pace.c, Burst). The default burst is the two. */
#define UROCE_PACE_SLACK_US		5000
/**
 * Owner only: frames of bytes the pacer let go earlier (pace_bytes grew by
 * that much during a call) were handed to the port at now. The bucket is
 * brought to what it would hold had they been charged at now
 * (uroce_tb_handoff()), so that the port never sees more than the burst
 * back to back however late the hand-off came (engine: lcore.c).
 */
void uroce_qp_pace_handoff(struct uroce_qp *qp, uint64_t now, uint64_t bytes);

/** The rate DCQCN holds the QP to, kbit/s; 0 when it does not limit it
 *  (no CNP yet, or recovered to the line rate). Any thread: the value
 *  the owner last set. */
uint64_t uroce_qp_cc_rate_kbps(const struct uroce_qp *qp);

/** Largest max_burst_sz accepted (bytes). */
#define UROCE_PACE_BURST_MAX		(UINT32_C(1) << 24)

/**
 * ibv_modify_qp_rate_limit() on the owner, O(1). rate_limit 0 removes the
 * limit; max_burst_sz / typical_pkt_sz 0 pick the defaults. Only in RTS
 * and for RC, UC and UD QPs. Errors (nothing changed): -EINVAL (state,
 * type, rate outside [rate_limit_min, rate_limit_max], typical_pkt_sz
 * larger than a frame, max_burst_sz below typical_pkt_sz or above
 * UROCE_PACE_BURST_MAX), -EOPNOTSUPP (the device does not pace).
 */
int uroce_qp_set_rate_limit(struct uroce_qp *qp,
			    const struct ibv_qp_rate_limit_attr *attr,
			    uint64_t now);

/** Validate a limit and compute its profile (*prof untouched for rate 0).
 *  Changes nothing. uroce_qp_modify() uses it for IBV_QP_RATE_LIMIT. */
int uroce_qp_rate_limit_prepare(const struct uroce_qp *qp,
				const struct ibv_qp_rate_limit_attr *attr,
				struct uroce_tb_profile *prof);

/** Apply a prepared limit (cannot fail). */
void uroce_qp_rate_limit_apply(struct uroce_qp *qp, uint32_t rate_kbps,
			       const struct uroce_tb_profile *prof,
			       uint64_t now);

/** A static rate of enum ibv_rate (IBTA 9.11): its multiple of 2.5 Gb/s
 *  (-1 if not a whole one) and its Mb/s, as rdma-core reports them. */
struct uroce_rate {
	enum ibv_rate rate;
	int mult;
	int mbps;
};

/** Every static rate, *n of them (rate.c). */
const struct uroce_rate *uroce_rate_table(size_t *n);

/** The row of rate; NULL for IBV_RATE_MAX and values that are no rate. */
const struct uroce_rate *uroce_rate_find(enum ibv_rate rate);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_QP_H */
