/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_CQ_H
#define UROCE_CQ_H

/**
 * @file
 * A completion queue: an SPSC ring (uroce_ring.h) of struct ibv_wc that the
 * owning engine lcore fills and the application's ibv_poll_cq() drains.
 *
 * Entries are struct ibv_wc themselves, not a compact CQE converted at poll
 * time: polling is then one copy per completion with nothing to translate,
 * every field ibv_poll_cq(3) documents (vendor_err, src_qp, wc_flags, ...)
 * round-trips unchanged, and there is no second CQE layout to keep in step
 * with the verbs header. A compact format would save 16 of 48 bytes per
 * entry, which matters for DMA across PCIe, not within one process.
 *
 * Overrun. ibv_poll_cq(3): "In case of a CQ overrun, the async event
 * IBV_EVENT_CQ_ERR will be triggered, and the CQ cannot be used." A
 * completion that finds the CQ full is not written (the entries not yet
 * polled are kept as they are); the CQ enters its error state for good and
 * counts the lost completion. The engine raises IBV_EVENT_CQ_ERR when
 * uroce_cq_push() returns -ENOSPC, which happens once per CQ.
 * uroce_cq_poll() still returns the completions queued before the overrun,
 * in order (they are genuine), and then fails with -EIO instead of
 * returning 0 for ever: a completion is lost, and an application that waits
 * for it would otherwise hang.
 *
 * Timestamps (ibv_create_cq_ex(3), IBV_WC_EX_WITH_COMPLETION_TIMESTAMP):
 * a CQ made with UROCE_CQ_TIMESTAMP has slots of struct uroce_cqe, the
 * completion and the TSC (rte_rdtsc()) read by uroce_cq_push() as it
 * queues it, when the completion is generated; uroce_cq_poll_ts() returns
 * it. Other CQs keep slots of a bare struct ibv_wc and read no clock.
 *
 * Notification (ibv_req_notify_cq(3)): the application arms the CQ for the
 * next completion or for the next solicited one; the first completion that
 * matches makes the engine signal the completion channel and disarms the
 * CQ ("one shot"). A solicited completion is a receive completion of a
 * message with the Solicited Event bit, or any unsuccessful one.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rte_common.h>

#include "uroce_ring.h"
#include "uroce_ring_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest CQ: 4 Mi entries (192 MiB of struct ibv_wc). */
#define UROCE_CQ_MAX_CQE	(UINT32_C(1) << 22)

/** Armed state; ordered so that arming keeps the wider of two requests. */
enum uroce_cq_arm {
	UROCE_CQ_DISARMED = 0,
	UROCE_CQ_ARMED_SOLICITED = 1,	/**< next solicited completion */
	UROCE_CQ_ARMED_NEXT = 2,	/**< next completion of any kind */
};

/** Cache-line aligned: allocate it with aligned_alloc() or rte_malloc(). */
/* QPs whose completions can be removed at once (uroce_cq_clean()) before
 * the application polls past the first: more than a program resets or
 * destroys between two polls of one CQ. */
#define UROCE_CQ_CLEANS		16

/** uroce_cq_init_ex() flags. */
#define UROCE_CQ_TIMESTAMP	1u	/**< entries carry their push's TSC */

/** A slot of a CQ made with UROCE_CQ_TIMESTAMP. */
struct uroce_cqe {
	struct ibv_wc wc;
	uint64_t tsc;			/**< rte_rdtsc() at uroce_cq_push() */
};

struct uroce_cq {
	struct uroce_ring ring;		/**< slots of struct ibv_wc or uroce_cqe */
	void *mem;			/**< the ring's slots, owned */
	bool ts;			/**< UROCE_CQ_TIMESTAMP: uroce_cqe slots */
	bool mem_ext;			/**< mem is alloc's */
	struct uroce_ring_alloc alloc;	/**< who made mem (uroce_ring_mem.h) */

	/* Engine side: written by the producer only. */
	uint32_t in_error __rte_cache_aligned;	/**< 1 after an overrun */
	/** No completion event can ever be delivered (no completion channel,
	 *  no event callback): completions skip the arm check and its full
	 *  barrier. Set before the CQ is in use (uroce_cq_set_no_events()). */
	bool no_events;
	uint64_t overrun_cnt;		/**< completions lost */

	/** Completions removed by uroce_cq_clean(), not yet passed by the
	 *  consumer: (qp_num << 32 | ring index the clean ran at) each, stored
	 *  whole (atomically) by the producer, n_clean RELEASE-stored after. */
	uint64_t clean[UROCE_CQ_CLEANS];
	uint32_t n_clean;

	/* Armed by the application, disarmed by the engine. */
	uint32_t arm __rte_cache_aligned;	/**< enum uroce_cq_arm */
};

/**
 * Set up an empty, disarmed CQ of at least cqe_count entries (a power of
 * two, as ibv_create_cq(3) allows: "at least cqe entries").
 * @return 0, -EINVAL (cqe_count 0, as rxe refuses it, or above
 *   UROCE_CQ_MAX_CQE), -ENOMEM
 */
int uroce_cq_init(struct uroce_cq *cq, uint32_t cqe_count);

/** uroce_cq_init() with flags (UROCE_CQ_TIMESTAMP; -EINVAL for others),
 *  the ring from alloc (NULL: the default allocator; uroce_ring_mem.h). */
int uroce_cq_init_ex(struct uroce_cq *cq, uint32_t cqe_count,
		     unsigned int flags, const struct uroce_ring_alloc *alloc);

/**
 * ibv_resize_cq(): at least cqe_count entries (a power of two), the
 * completions not yet polled kept in order; the error and armed states
 * are kept. Neither side may use the CQ meanwhile (the engine runs it on
 * the producer's thread while the consumer waits for it).
 * @return 0; -EINVAL (cqe_count 0, above UROCE_CQ_MAX_CQE, or fewer than
 *   the completions it holds: nothing changed), -ENOMEM (nothing changed)
 */
int uroce_cq_resize(struct uroce_cq *cq, uint32_t cqe_count);

/**
 * Engine (producer) only: remove the completions of QP qp_num not yet
 * polled, as a NIC's driver cleans a CQ when a QP is reset or destroyed
 * (the application must not see them: the QP number may be reused). The
 * consumer skips them as it polls (no copying under it). When
 * UROCE_CQ_CLEANS QPs are cleaned already and the consumer has not
 * passed the first, they stay.
 * @return 0; -ENOSPC: the completions stay
 */
int uroce_cq_clean(struct uroce_cq *cq, uint32_t qp_num);

/** Free the CQ's memory. Neither side may use it any more. */
void uroce_cq_fini(struct uroce_cq *cq);

/** Number of entries, the cqe that ibv_create_cq() reports. Any thread. */
uint32_t uroce_cq_size(const struct uroce_cq *cq);

/**
 * Engine (producer) only. Queue one completion.
 * @return 0; -ENOSPC if the CQ was full: nothing written, the CQ is now in
 *   error, raise IBV_EVENT_CQ_ERR; -EIO if the CQ was already in error
 *   (the completion is dropped and counted, the event was raised before).
 */
int uroce_cq_push(struct uroce_cq *cq, const struct ibv_wc *wc);

/**
 * Application (consumer) only: ibv_poll_cq(). Move up to n completions, the
 * oldest first, into wc.
 * @return the number moved (0 when empty, or when n <= 0, as rdma-core's
 *   providers do), or -EIO once a CQ in error has no completion left.
 */
int uroce_cq_poll(struct uroce_cq *cq, int n, struct ibv_wc *wc);

/**
 * uroce_cq_poll() with the TSC of each completion moved into tsc[] (0 on a
 * CQ made without UROCE_CQ_TIMESTAMP).
 */
int uroce_cq_poll_ts(struct uroce_cq *cq, int n, struct ibv_wc *wc,
		     uint64_t *tsc);

/** Whether an overrun put the CQ in error. Any thread. */
bool uroce_cq_in_error(const struct uroce_cq *cq);

/** Completions lost to overruns. Any thread. */
uint64_t uroce_cq_overrun_count(const struct uroce_cq *cq);

/**
 * Application only: ibv_req_notify_cq(). Arm for the next completion, or
 * with solicited_only for the next solicited one. A pending request for the
 * next completion is not narrowed by a later solicited-only one (as rxe).
 * Then poll once more: a completion queued before the arm raises no event.
 */
void uroce_cq_req_notify(struct uroce_cq *cq, bool solicited_only);

/** A CQ whose completions can raise no event (created without a completion
 *  channel): before any QP or SRQ uses it, by its creator. */
void uroce_cq_set_no_events(struct uroce_cq *cq);

/**
 * Engine only, after uroce_cq_push() of wc returned 0: whether to signal
 * the completion channel. True when armed for any completion, or armed for
 * solicited ones and solicited is set (the message had the Solicited Event
 * bit) or wc->status is not IBV_WC_SUCCESS; the CQ is then disarmed.
 *
 * A full barrier separates the push from reading the arm, and another the
 * arm from the application's next poll: so either the engine sees the arm
 * and signals, or the application's poll after arming sees the completion.
 * Always false, with no barrier, for a CQ set with uroce_cq_set_no_events()
 * (the barrier waits for the store buffer to drain, a cost paid per
 * completion that a receiver of small SENDs notices).
 */
bool uroce_cq_should_notify(struct uroce_cq *cq, const struct ibv_wc *wc,
			    bool solicited);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_CQ_H */
