/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_SRQ_H
#define UROCE_SRQ_H

/**
 * @file
 * Shared receive queues (IBTA 10.2.9; ibv_create_srq(3), ibv_modify_srq(3)):
 * one pool of receive WQEs that many QPs take from, whichever engine lcore
 * owns them.
 *
 * Threads. The WQEs live in a struct uroce_ring, which is single-producer
 * single-consumer; two locks make it multi-producer multi-consumer:
 *  - prod_lock: posters (uroce_srq_post_recv(), application threads);
 *  - cons_lock: consumers (uroce_srq_take(), the owner lcores of the QPs
 *    that use the SRQ), and the limit;
 *  - uroce_srq_modify() takes both (prod_lock first), so a resize swaps the
 *    ring while nobody posts or takes.
 * A consumer copies the WQE it takes into its QP (struct uroce_qp's
 * srq_wqe) under cons_lock: no ring slot is read outside a lock, and a
 * multi-packet message keeps its WQE while the ring moves on. One lock
 * round trip per message received (not per packet); a QP's owner never
 * waits for a poster, only for another consumer or a resize.
 *
 * Limit (ibv_modify_srq(3), IBV_SRQ_LIMIT): armed with limit > 0; when a
 * take leaves fewer than limit WQEs, or when arming finds fewer already,
 * the SRQ disarms (limit 0) and raises IBV_EVENT_SRQ_LIMIT_REACHED once,
 * through env->ops->async_event(ctx, ev, srq), from the thread that
 * crossed it (a consumer lcore, or the modifier), outside the locks.
 *
 * Types. uroce_srq_create() takes the srq_type and looks its rules up in
 * one table (srq.c, srq_types[]): BASIC is here; XRC and TM plug in their
 * own struct uroce_srq_type (srq_priv.h) with checks of their init fields
 * and set-up of srq->type_priv.
 *
 * Errors are negative errno; a failed call changes nothing.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rte_spinlock.h>

#include "uroce_cq.h"
#include "uroce_ring.h"
#include "uroce_ring_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

struct uroce_qp_env;
struct uroce_recv_wqe;
struct uroce_srq_type;

/** What ibv_create_srq_ex() asks, in engine terms. */
struct uroce_srq_init {
	enum ibv_srq_type type;		/**< BASIC, XRC, TM */
	const void *pd;			/**< the WQEs' lkeys belong to it */
	struct uroce_cq *cq;		/**< XRC, TM: the SRQ's own CQ */
	const void *xrcd;		/**< XRC: its domain */
	struct ibv_tm_cap tm_cap;	/**< TM */
	uint32_t max_wr;		/**< 1 .. env->max_srq_wr */
	uint32_t max_sge;		/**< 1 .. env->max_srq_sge */
	uint32_t srqn;			/**< the number the engine gave it */
	/** The ring's allocator (NULL: the default; uroce_ring_mem.h). */
	const struct uroce_ring_alloc *alloc;
};

struct uroce_srq {
	/* Fixed at create. */
	const struct uroce_qp_env *env;
	const struct uroce_srq_type *ops;	/**< the type's rules */
	enum ibv_srq_type type;
	const void *pd;
	struct uroce_cq *cq;		/**< XRC, TM; NULL for BASIC */
	const void *xrcd;
	uint32_t srqn;
	uint32_t max_sge;
	uint32_t slot_size;		/**< bytes of one struct uroce_recv_wqe */
	void *user;			/**< the verbs layer's object */
	void *engine;			/**< the engine's */
	void *type_priv;		/**< XRC/TM state, their own */
	uint32_t refs;			/**< QPs attached (engine lock) */

	/* Posters (and resize). */
	rte_spinlock_t prod_lock __rte_cache_aligned;
	/* Consumers, the limit (and resize). */
	rte_spinlock_t cons_lock;
	struct uroce_ring ring;		/**< struct uroce_recv_wqe slots */
	void *mem;			/**< the ring's slots */
	bool mem_ext;			/**< from alloc */
	struct uroce_ring_alloc alloc;	/**< who made mem, fixed at create */
	uint32_t max_wr;		/**< ring capacity (what query says) */
	uint32_t limit;			/**< armed limit, 0: disarmed */
	uint64_t limit_events;		/**< IBV_EVENT_SRQ_LIMIT_REACHED raised */
	uint64_t taken;			/**< WQEs consumers took */
};

/**
 * ibv_create_srq_ex(): an empty, disarmed SRQ of at least max_wr WQEs of
 * max_sge SGEs. -EINVAL (max_wr or max_sge 0 or above env's max_srq_wr /
 * max_srq_sge, no pd), -EOPNOTSUPP (a type without rules, or the type's
 * own checks), -ENOMEM. (*out)->max_wr and max_sge say what was created.
 */
int uroce_srq_create(const struct uroce_qp_env *env,
		     const struct uroce_srq_init *init, struct uroce_srq **out);

/** Free an SRQ (no QP uses it any more). NULL is a no-op. */
void uroce_srq_destroy(struct uroce_srq *srq);

/**
 * ibv_post_srq_recv(): any thread. WRs in order; the first bad one stops
 * the list with *bad_wr set to it: -EINVAL (num_sge > max_sge or < 0),
 * -ENOMEM (full).
 */
int uroce_srq_post_recv(struct uroce_srq *srq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);

/**
 * ibv_modify_srq(): any thread. mask of IBV_SRQ_MAX_WR (resize: max_wr in
 * 1..env->max_srq_wr and not below the WQEs outstanding; posted WQEs keep
 * their order) and IBV_SRQ_LIMIT (srq_limit in 0..max_wr, the new max_wr
 * when both are given). Anything else in mask, or any bad value: -EINVAL
 * and nothing changes (ENOMEM likewise). On success attr->max_wr and
 * max_sge hold the actual sizes; arming above the outstanding count raises
 * the event at once and leaves the SRQ disarmed.
 */
int uroce_srq_modify(struct uroce_srq *srq, struct ibv_srq_attr *attr,
		     int mask);

/** ibv_query_srq(): max_wr, max_sge, the armed limit (0: disarmed). */
void uroce_srq_query(struct uroce_srq *srq, struct ibv_srq_attr *attr);

/** WQEs posted and not taken (a snapshot). */
uint32_t uroce_srq_count(struct uroce_srq *srq);

/**
 * Consumer (a QP's owner lcore): copy the oldest WQE into dst
 * (srq->slot_size bytes) and take it. Checks the limit.
 * @return true, or false when the SRQ is empty.
 */
bool uroce_srq_take(struct uroce_srq *srq, struct uroce_recv_wqe *dst);

/* ibv_post_srq_ops() on the owner of a TM-SRQ's CQ (tm_rx.c): -EINVAL on
 * another type, else uroce_tm_post_ops() with completions on srq->cq. */
int uroce_srq_post_ops(struct uroce_srq *srq, struct ibv_ops_wr *wr,
		       struct ibv_ops_wr **bad_wr);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_SRQ_H */
