/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_ENGINE_H
#define UROCE_ENGINE_H

/**
 * @file
 * The engine: the lcores that run the transport (docs/architecture.md,
 * Threads and ownership), the devices (one per configured port: uroce0,
 * uroce1, ...) and their objects (PD, CQ, MR, AH, QP). This is what the
 * verbs layer and the tests use.
 *
 * One engine per process. Each QP belongs to one engine lcore, its owner;
 * so does each CQ while QPs use it (the owner of its first QP). Control
 * verbs (modify, query, destroy) are messages executed by the owner; they
 * run inline when the caller is the owner or when there are no background
 * lcores. Posting (uroce_qp_post_send(), uroce_qp_post_recv()) and polling
 * (uroce_cq_poll()) go straight to the transport's rings: no lock, no
 * message.
 *
 * Progress. Background lcores (EAL worker lcores) loop: rx burst, parse and
 * ICRC check, QPN lookup, hand-off to the owner, doorbells, timers, tx, idle
 * back-off. With UROCE_ENGINE_NO_LCORES, [eal] lcores = 0 (or when a host
 * EAL has no free worker) no lcore runs in the background: the application
 * calls uroce_engine_poll() (uroce_poll()) which runs one iteration of the
 * same loop on its thread; without UROCE_ENGINE_NO_LCORES a keeper thread
 * runs it while no application call does (inline progress).
 *
 * Loopback. A frame whose destination MAC is a port of this process goes
 * straight to that device's receive path, as an RDMA NIC loops back, so two
 * QPs of one device, or two devices of one process, talk without a wire
 * (UROCE_ENGINE_WIRE_XDEV keeps the loop to one device).
 *
 * Threads. Every function here may be called from any thread unless said
 * otherwise; the object functions of one device are serialised inside.
 * The caller keeps the verbs rule that an object is not used while (or
 * after) it is destroyed. Errors are negative errno.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rte_mbuf.h>

#include "uroce_config.h"
#include "uroce_cq.h"
#include "uroce_mr.h"
#include "uroce_port.h"
#include "uroce_qp.h"
#include "uroce_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * The engine.
 */

/** No background lcores: native progress only, through uroce_engine_poll(),
 *  which the caller promises to call. Without it and with [eal] lcores = 0
 *  (inline progress), a keeper thread runs the loop whenever no call has
 *  for [eal] keeper_us, and sleeps otherwise. */
#define UROCE_ENGINE_NO_LCORES	0x1u
/** Loop back only frames for the sending device's own MAC: frames between
 *  two devices of the process take the wire (tests of the port path). */
#define UROCE_ENGINE_WIRE_XDEV	0x2u

/** Most engine lcores. */
#define UROCE_ENGINE_MAX_LCORES	16

/**
 * Start the engine. If EAL is not running, start it from cfg ([eal] args,
 * plus --no-pci unless a port is PCI, plus the lcores: the calling thread is
 * the main lcore and cfg->lcores workers are the engine lcores, floating
 * over the process's CPUs unless args pin them with -l/-c/--lcores). If EAL
 * runs already, join it: use up to cfg->lcores idle worker lcores, or run
 * with native progress only if there is none. Then open every port with one
 * queue per engine lcore, one device per port, and launch the lcores.
 *
 * cfg must stay valid until uroce_engine_fini().
 *
 * @param flags  UROCE_ENGINE_*
 * @param err    on failure one line (no newline) naming what failed; may
 *   be NULL
 * @return 0; -EALREADY (an engine runs); -ENOTSUP (an engine that
 *   started EAL has been finished: DPDK cannot start twice in a process);
 *   -EINVAL (no port, an MTU too small for RoCEv2, bad EAL args), -ENOMEM,
 *   or the port's error; nothing is left up.
 */
int uroce_engine_init(const struct uroce_config *cfg, unsigned int flags,
		      char *err, size_t err_len);

/**
 * Stop the lcores, destroy every object left (QPs, AHs, MRs, CQs, PDs),
 * close the ports, and clean EAL up if uroce_engine_init() started it.
 * No other engine call may run at the same time. No-op without an engine.
 */
void uroce_engine_fini(void);

/** Whether an engine runs. */
bool uroce_engine_running(void);

/** Background lcores running the stack (0: native progress only). */
unsigned int uroce_engine_lcores(void);

/**
 * Native progress: one iteration of the engine loop on the calling thread
 * (rx, hand-offs, doorbells, timers, tx, control messages). Only one thread
 * progresses at a time: a concurrent call returns 0 at once.
 * @return work done (frames, QPs served, timers), 0 when idle, or when
 *   background lcores run the stack; -ENODEV without an engine.
 */
int uroce_engine_poll(void);

/**
 * Run fn(arg) on engine lcore idx, between two iterations of its loop (with
 * native progress: on the calling thread, under the progress lock). While
 * fn runs that lcore neither receives nor transmits, so the port queues it
 * owns (queue idx of every port) are fn's to use: uroce-perf measures the
 * raw ceiling of the link this way on the core that runs the transport.
 * fn must not call the object functions below (they would wait for the
 * lcore that runs fn); control verbs of other threads wait until it ends.
 * @return fn's value; -EINVAL (fn NULL, idx >= max(1, lcores)); -ENODEV
 *   without an engine.
 */
int uroce_engine_run_on(unsigned int idx, int (*fn)(void *arg), void *arg);

/** Counters of one engine lcore (native: index 0). */
struct uroce_lcore_stats {
	uint64_t loops;			/**< iterations */
	uint64_t idle_loops;		/**< iterations that found nothing */
	uint64_t sleeps;		/**< back-off sleeps */
	uint64_t ctrl_msgs;		/**< control messages executed */
	uint64_t doorbells;		/**< doorbells from other threads */
	/** posts served on the posting thread (native progress, nobody
	 * in the loop): their frames left before the post returned */
	uint64_t direct_tx;
	uint64_t timers;		/**< timer expiries */
	/** TSC cycles of the iterations that found work, from the
	 * iteration's start (after idle ones: its first clock read, the
	 * clock being read lazily) to its end: what the stack costs, for cycles per
	 * frame. An iteration longer than a millisecond is left out: the
	 * thread was preempted, or (on a VM) the vCPU ran slow while the
	 * loop caught up at its full budget, and either would count the
	 * host's load as ours. */
	uint64_t work_cycles;
	uint64_t long_loops;		/**< iterations left out of work_cycles */
	/** their TSC cycles: on a VM, time the host took the vCPU away or
	 * slowed it (a paced QP loses the tokens of a stall beyond its
	 * burst) */
	uint64_t long_cycles;
	/** Gaps: the loop did not start an iteration for more than a
	 * millisecond after the last one started (a back-off sleep is at
	 * most 64 us). The thread was preempted, in an iteration or between
	 * two, whether or not it had work - on a VM, mostly the host taking
	 * the vCPU away - or, under native progress, the application did
	 * not poll. long_loops see only the iterations that found work. */
	uint64_t gap_loops;
	uint64_t gap_cycles;		/**< their TSC cycles, start to start */
	/** TSC cycles in the ports' transmit bursts of the engine's batches:
	 * the hand-over to the PMD, which for memif is the copy into the
	 * shared ring and for a NIC a descriptor write. Part of work_cycles
	 * (but for a burst on a posting thread, direct_tx): it tells the
	 * port's share of cycles per frame from the stack's own. */
	uint64_t tx_cycles;
	/** iterations the keeper thread ran (inline progress: no
	 * application call had run one for [eal] keeper_us) */
	uint64_t keeper_loops;
};

/** @return 0, or -EINVAL for an index >= max(1, uroce_engine_lcores()). */
int uroce_engine_lcore_stats(unsigned int idx, struct uroce_lcore_stats *st);

/* ------------------------------------------------------------------------
 * Devices: uroce<i> for port i of the config.
 */
struct uroce_dev;
struct uroce_pd;

/** Device limits, beyond env->lim and env->max_* (ibv_query_device). */
struct uroce_dev_caps {
	uint32_t max_qp;
	uint32_t max_cq;
	uint32_t max_cqe;
	uint32_t max_mr;
	uint32_t max_mw;	/**< shares the key table with max_mr */
	uint32_t max_pd;
	uint32_t max_ah;
	uint32_t max_srq;		/**< max_srq_wr/_sge: the env's */
	uint64_t max_mr_size;
};

/** Counters of one device (summed over the lcores). */
struct uroce_dev_stats {
	uint64_t rx_pkts;		/**< frames from the port */
	uint64_t tx_pkts;		/**< frames handed to the port */
	uint64_t loop_pkts;		/**< frames looped back to a local device */
	uint64_t loop_drops;		/**< loopback frames lost (queue full) */
	uint64_t unknown_qpn;		/**< parsed frames for no QP of the device */
	uint64_t handoffs;		/**< frames passed to their owner lcore */
	uint64_t handoff_drops;		/**< ... lost because its ring was full */
	/** QP1 (uroce_gsi.h): MADs into the consumer's ring, MADs sent, and
	 *  frames to QP1 dropped by reason */
	uint64_t gsi_rx, gsi_tx;
	uint64_t gsi_drop_opcode, gsi_drop_pkey, gsi_drop_qkey, gsi_drop_len;
	uint64_t gsi_drop_mad, gsi_drop_noagent, gsi_drop_full;
	/** CM requests answered by a device with no consumer (uroce_gsi.h) */
	uint64_t gsi_noagent_replied;
	/** Accesses to registered memory that faulted, each a protection
	 *  error on its QP (uroce_memguard.h); process-wide */
	uint64_t mem_faults;
	struct uroce_wire_stats wire;	/**< parse verdicts (OK counts good frames) */
};

/** Events of a device's objects, as the verbs layer wants them. */
struct uroce_dev_events {
	/** A CQ's completion channel is to be signalled. Owner lcore. */
	void (*cq_event)(void *arg, struct uroce_cq *cq);
	/** An affiliated async event; obj is the struct uroce_qp * or, for
	 *  IBV_EVENT_CQ_ERR, the struct uroce_cq *. Owner lcore. For
	 *  IBV_EVENT_PORT_ACTIVE and IBV_EVENT_PORT_ERR (the link went up or
	 *  down), the struct uroce_dev *, on the engine's link thread. */
	void (*async_event)(void *arg, enum ibv_event_type ev, void *obj);
};

unsigned int uroce_dev_count(void);
/** Device idx (0 .. count - 1), or NULL. */
struct uroce_dev *uroce_dev_get(unsigned int idx);
/** Device by name ("uroce0"), or NULL. */
struct uroce_dev *uroce_dev_by_name(const char *name);
const char *uroce_dev_name(const struct uroce_dev *dev);
unsigned int uroce_dev_index(const struct uroce_dev *dev);
/** What the device's QPs see: MAC, MTU, GIDs, limits (read-only). */
const struct uroce_qp_env *uroce_dev_env(const struct uroce_dev *dev);
struct uroce_port *uroce_dev_port(const struct uroce_dev *dev);
void uroce_dev_caps(const struct uroce_dev *dev, struct uroce_dev_caps *caps);
void uroce_dev_stats_get(const struct uroce_dev *dev,
			 struct uroce_dev_stats *st);

/** Register the event callbacks (NULL members: ignored). Call before
 *  creating objects; ev is copied. The callbacks run on engine lcores and
 *  must not call the object functions below (they would wait for the
 *  lcore that runs them). */
void uroce_dev_set_events(struct uroce_dev *dev,
			  const struct uroce_dev_events *ev, void *arg);

/**
 * The largest IB MTU a RoCEv2 packet fits in at this IP MTU, as RoCE NICs
 * derive active_mtu: <= mtu - 40 (IP) - 8 (UDP) - 12 (BTH) - 16 (RETH) - 4
 * (ICRC). 1500 -> IBV_MTU_1024, 9000 -> IBV_MTU_4096. 0 below IBV_MTU_256.
 */
enum ibv_mtu uroce_dev_active_mtu(uint16_t ip_mtu);

/**
 * Deliver a frame to dev's receive path as if the port had received it
 * (parse, ICRC, QPN lookup, the owner's rx), on an engine lcore soon after.
 * Takes the mbuf in all cases. @return 0, -ENOBUFS (queue full: freed).
 */
int uroce_dev_inject(struct uroce_dev *dev, struct rte_mbuf *m);

/* ------------------------------------------------------------------------
 * XRC domains (xrcd.c). Opaque. Sharing one through a file (an inode) is
 * the verbs layer's business: here a domain is one object.
 */
struct uroce_xrcd;

/** A new XRC domain. -ENOMEM. */
int uroce_xrcd_alloc(struct uroce_dev *dev, struct uroce_xrcd **out);
/** Free it: -EBUSY while an XRC_RECV QP or an XRC SRQ uses it. */
int uroce_xrcd_free(struct uroce_xrcd *xrcd);
struct uroce_dev *uroce_xrcd_dev(const struct uroce_xrcd *xrcd);
/** The XRC_RECV QP numbered qpn in xrcd (ibv_open_qp(3)); -EINVAL if it
 *  has none of that number. */
int uroce_xrcd_qp_find(struct uroce_xrcd *xrcd, uint32_t qpn,
		       struct uroce_qp **out);

/* ------------------------------------------------------------------------
 * Objects. A struct uroce_pd is opaque; a CQ is the transport's
 * struct uroce_cq (poll it with uroce_cq_poll(), arm it with
 * uroce_cq_req_notify()); an MR the transport's struct uroce_mr (mr->pd is
 * the struct uroce_pd *); an AH the transport's struct uroce_ah; a QP the
 * transport's struct uroce_qp (qp->user is the caller's pointer; post with
 * uroce_qp_post_send() / uroce_qp_post_recv()).
 */

/** ibv_alloc_pd(). -ENOMEM. */
int uroce_pd_alloc(struct uroce_dev *dev, struct uroce_pd **out);
/** ibv_dealloc_pd(): -EBUSY while an MR, AH or QP uses it. NULL: -EINVAL. */
int uroce_pd_free(struct uroce_pd *pd);
struct uroce_dev *uroce_pd_dev(const struct uroce_pd *pd);

/**
 * ibv_create_cq(): at least cqe entries. Not bound to an lcore until a QP
 * uses it. @return 0, -EINVAL (cqe 0 or > caps.max_cqe), -ENOMEM.
 */
int uroce_dev_cq_create(struct uroce_dev *dev, uint32_t cqe, void *user,
			struct uroce_cq **out);
/** uroce_dev_cq_create() with uroce_cq_init_ex()'s flags
 *  (UROCE_CQ_TIMESTAMP) and the ring from alloc (NULL: the default). */
int uroce_dev_cq_create_ex(struct uroce_dev *dev, uint32_t cqe,
			   unsigned int flags,
			   const struct uroce_ring_alloc *alloc, void *user,
			   struct uroce_cq **out);
/**
 * ibv_resize_cq(): uroce_cq_resize() on the CQ's owner lcore (at once
 * when no QP has bound it yet). The caller is the CQ's consumer: it must
 * not poll it meanwhile. -EINVAL (cqe 0, above caps.max_cqe, fewer than
 * the completions queued), -ENOMEM.
 */
int uroce_dev_cq_resize(struct uroce_cq *cq, uint32_t cqe);
/** ibv_destroy_cq(): -EBUSY while a QP uses it. */
int uroce_dev_cq_destroy(struct uroce_cq *cq);
void *uroce_dev_cq_user(const struct uroce_cq *cq);
/** The CQ's owner lcore index, or -1 while no QP uses it. */
int uroce_dev_cq_lcore(const struct uroce_cq *cq);

/**
 * ibv_reg_mr_iova2(): uroce_mr_reg() on the device's key table (see it for
 * the errors). mr->pd is pd.
 */
int uroce_dev_mr_reg(struct uroce_pd *pd, void *addr, size_t len,
		     uint64_t iova, unsigned int access, struct uroce_mr **out);
/**
 * ibv_dereg_mr(): the keys stop working at once; returns once every engine
 * lcore has passed a quiescent point, so no access through it is under way
 * and the memory may be freed. -EINVAL for an unknown mr.
 */
int uroce_dev_mr_dereg(struct uroce_mr *mr);
/**
 * ibv_rereg_mr(): mr keeps its keys and becomes [addr, addr + len) seen
 * at iova with access, in npd (a PD of the same device: else -EINVAL).
 * The checks and errors of uroce_dev_mr_reg(), nothing changed on
 * failure; meanwhile its keys fail (uroce_mr_rereg_begin()). Returns once
 * no engine lcore can still use the old fields.
 */
int uroce_dev_mr_rereg(struct uroce_mr *mr, struct uroce_pd *npd, void *addr,
		       size_t len, uint64_t iova, unsigned int access);

/**
 * ibv_alloc_mw(): uroce_mw_alloc() on the device's key table; the window
 * holds pd (ibv_dealloc_pd() is -EBUSY while it lives).
 * @return 0 and *rkey, -EINVAL (type), -ENOMEM.
 */
int uroce_dev_mw_alloc(struct uroce_pd *pd, enum ibv_mw_type type,
		       uint32_t *rkey);
/**
 * ibv_dealloc_mw(): uroce_mw_dealloc(); returns once every engine lcore
 * has passed a quiescent point, as uroce_dev_mr_dereg(). -EINVAL.
 */
int uroce_dev_mw_dealloc(struct uroce_pd *pd, uint32_t rkey);

/**
 * ibv_create_ah(): a RoCEv2 destination. attr needs is_global, port_num 1,
 * a valid sgid_index, and a dgid of the same family as the sgid (-EINVAL).
 * The next hop's MAC is resolved now (a local port's at once; else ARP,
 * waiting a bounded time while the engine progresses): -EHOSTUNREACH when
 * it cannot be, as ibv_create_ah() fails when the kernel cannot resolve.
 */
int uroce_dev_ah_create(struct uroce_pd *pd, const struct ibv_ah_attr *attr,
			struct uroce_ah **out);
/** ibv_destroy_ah(). */
int uroce_dev_ah_destroy(struct uroce_ah *ah);

/**
 * ibv_create_srq_ex(): an SRQ of pd's device (uroce_srq_create() for the
 * checks and errors; init->pd is set here, init->cq must be a CQ of the
 * device or NULL). It gets an SRQ number (srq->srqn, 1 .. caps.max_srq)
 * that uroce_dev_srq_lookup() finds. -ENOMEM beyond caps.max_srq.
 */
int uroce_dev_srq_create(struct uroce_pd *pd, struct uroce_srq_init *init,
			 void *user, struct uroce_srq **out);
/** ibv_destroy_srq(): -EBUSY while a QP uses it; no lookup finds it once
 *  this returns. */
int uroce_dev_srq_destroy(struct uroce_srq *srq);
/** ibv_post_srq_ops() (ibv_post_srq_ops(3)) on a TM-SRQ: uroce_tm_post_ops()
 *  run on the lcore of the SRQ's CQ; -EINVAL with *bad_wr = wr for an SRQ
 *  of another type. */
int uroce_dev_srq_post_ops(struct uroce_srq *srq, struct ibv_ops_wr *wr,
			   struct ibv_ops_wr **bad_wr);
/** ibv_modify_srq(): uroce_srq_modify(). */
int uroce_dev_srq_modify(struct uroce_srq *srq, struct ibv_srq_attr *attr,
			 int mask);
/** ibv_query_srq(): uroce_srq_query(). */
int uroce_dev_srq_query(struct uroce_srq *srq, struct ibv_srq_attr *attr);
/** The SRQ of number srqn, or NULL. Any thread, no lock: an engine lcore
 *  may use what it found until its next quiescent point (eng_sync()). */
struct uroce_srq *uroce_dev_srq_lookup(uint32_t srqn);

/**
 * ibv_create_qp(): a QP in RESET with a fresh QPN (24 bits, never 0 or 1),
 * owned by an engine lcore (round-robin, or the lcore its CQs are bound
 * to). send_cq and recv_cq must belong to pd's device (-EINVAL) and agree
 * on the owner (-EINVAL with a log line). init->srq, if set, is a struct
 * uroce_srq * of the device (cast; -EINVAL for another device's): the QP
 * holds it (uroce_dev_srq_destroy() -EBUSY) until destroyed. Other checks:
 * uroce_qp_create().
 * init->cap is not written; (*out)->cap holds the created sizes.
 */
int uroce_dev_qp_create(struct uroce_pd *pd, struct uroce_cq *send_cq,
			struct uroce_cq *recv_cq,
			const struct ibv_qp_init_attr *init, void *user,
			struct uroce_qp **out);
/**
 * uroce_dev_qp_create(), the QP then changed by first/first_mask (NULL:
 * not) as uroce_dev_qp_modify() would, before any lcore can see it: no
 * round trip to the owner lcore. Only a change to INIT (-EINVAL otherwise,
 * and uroce_dev_qp_modify()'s errors); on an error no QP is made. Its
 * rings come from alloc (NULL: the default allocator; uroce_ring_mem.h).
 */
int uroce_dev_qp_create_init(struct uroce_pd *pd, struct uroce_cq *send_cq,
			     struct uroce_cq *recv_cq,
			     const struct ibv_qp_init_attr *init, void *user,
			     struct ibv_qp_attr *first, int first_mask,
			     const struct uroce_ring_alloc *alloc,
			     struct uroce_qp **out);
/**
 * XRC (IBTA XRC annex A14). An XRC_SEND QP is created by
 * uroce_dev_qp_create() with a send CQ only (recv_cq is not looked at);
 * an XRC_RECV QP here, in its domain, with no PD, CQ or work queue: its
 * requests go to the XRC SRQ each names, which must be of the same domain.
 * The domain's target QPs share one owner lcore (and so do the CQs of its
 * SRQs). -EINVAL (not XRC_RECV), -ENOMEM; other checks: uroce_qp_create().
 */
int uroce_dev_xrc_qp_create(struct uroce_xrcd *xrcd,
			    const struct ibv_qp_init_attr *init, void *user,
			    struct uroce_qp **out);

/** ibv_modify_qp() on the owner: uroce_qp_modify() (-EINVAL changes
 *  nothing). */
int uroce_dev_qp_modify(struct uroce_qp *qp, struct ibv_qp_attr *attr,
			int mask);
/** uroce_dev_qp_modify() with @attr[i], @mask[i] for i < @n, in order, in
 *  one control message (rdma_cm's INIT, RTR, RTS): stops at the first
 *  failure and returns it, with *@done the changes made before it (@n on
 *  success); -EINVAL for bad arguments, nothing changed. */
int uroce_dev_qp_modify_seq(struct uroce_qp *qp, struct ibv_qp_attr *attr,
			    const int *mask, unsigned int n,
			    unsigned int *done);
/** ibv_modify_qp_rate_limit() on the owner: uroce_qp_set_rate_limit()
 *  (a failure changes nothing). */
int uroce_dev_qp_rate_limit(struct uroce_qp *qp,
			    const struct ibv_qp_rate_limit_attr *attr);
/** ibv_query_qp() on the owner. */
int uroce_dev_qp_query(struct uroce_qp *qp, struct ibv_qp_attr *attr,
		       struct ibv_qp_init_attr *init);
/** ibv_destroy_qp(): frames for it are dropped from now on; outstanding
 *  WQEs go without completions. -EBUSY while flow rules steer to it, or
 *  (a WQ) an indirection table names it. */
int uroce_dev_qp_destroy(struct uroce_qp *qp);
/** A QP's counters, read on the owner. */
int uroce_dev_qp_stats(struct uroce_qp *qp, struct uroce_qp_stats *st);

/**
 * ibv_create_flow(): steer received frames that match attr (and its specs
 * after it) to qp, a RAW_PACKET QP (rules and errors: uroce_flow.h; a UD
 * QP -EOPNOTSUPP, other types -EINVAL; -ENOMEM). Frames reach the QP from
 * the next engine iteration on; ibv_destroy_qp() fails with -EBUSY while
 * the QP has rules.
 */
struct uroce_flow;
int uroce_dev_flow_create(struct uroce_qp *qp, const struct ibv_flow_attr *attr,
			  struct uroce_flow **out);
/** ibv_destroy_flow(): no frame is steered by it once this returns. */
int uroce_dev_flow_destroy(struct uroce_flow *flow);

/**
 * Receive work queues and RSS (ibv_create_wq(3), ibv_create_rwq_ind_table(3),
 * RSS QPs of ibv_create_qp_ex(3)); the model is in lib/engine/dev_wq.c.
 */
struct uroce_dev_wq_caps {
	uint32_t max_wq;		/**< shared with max_qp */
	uint32_t max_ind_tbl;		/**< per device */
	uint32_t max_ind_tbl_size;	/**< entries */
	uint64_t rx_hash_fields;	/**< IBV_RX_HASH_* */
};
void uroce_dev_wq_caps(struct uroce_dev_wq_caps *caps);
/** A WQ of type RQ in RESET: a receive queue of max_wr (rounded up to a
 *  power of two) WQEs of max_sge SGEs completing on cq; *out is its QP
 *  (receives are posted with uroce_qp_post_recv(), its number is
 *  (*out)->qpn). -EINVAL: 0 or over the QP limits, a CQ of another device;
 *  -ENOMEM beyond max_qp QPs and WQs. */
int uroce_dev_wq_create(struct uroce_pd *pd, struct uroce_cq *cq,
			uint32_t max_wr, uint32_t max_sge, void *user,
			struct uroce_qp **out);
/** ibv_modify_wq() of the state: to RDY from RESET, to ERR from RDY, to
 *  RESET from RDY or ERR, RESET and RDY to themselves; -EINVAL for any other,
 *  or when has_cur and cur is not the WQ's state; nothing changes then. */
int uroce_dev_wq_modify(struct uroce_qp *wq, enum ibv_wq_state cur,
			bool has_cur, enum ibv_wq_state to);
/** ibv_destroy_wq(): -EBUSY while an indirection table names it. */
int uroce_dev_wq_destroy(struct uroce_qp *wq);
/** An indirection table of 2^log_size WQs of dev (-EINVAL: log_size above
 *  that of max_ind_tbl_size, a NULL entry, not a WQ of dev; -ENOMEM). */
struct uroce_ind_tbl;
int uroce_dev_ind_tbl_create(struct uroce_dev *dev, uint32_t log_size,
			     struct uroce_qp *const *wqs,
			     struct uroce_ind_tbl **out);
/** -EBUSY while an RSS QP uses it. */
int uroce_dev_ind_tbl_destroy(struct uroce_ind_tbl *t);
/** An RSS QP (RAW_PACKET, no queue of its own) spreading what flow rules
 *  steer to it over t's WQs by the Toeplitz hash h (uroce_rss.h: its
 *  -EINVAL and -EOPNOTSUPP); a table of another device -EINVAL. */
int uroce_dev_rss_qp_create(struct uroce_pd *pd, struct uroce_ind_tbl *t,
			    const struct ibv_rx_hash_conf *h, void *user,
			    struct uroce_qp **out);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_ENGINE_H */
