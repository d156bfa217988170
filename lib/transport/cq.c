/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Completion queues: the engine pushes struct ibv_wc into an SPSC ring, the
 * application polls it. See uroce_cq.h for the overrun and notification
 * rules; the comments here are about who touches what, in which order.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>

#include "uroce_cq.h"

/* An empty ring of at least cqe_count completions (a power of two) of
 * slot bytes each, on memory from a (uroce_ring_mem.h), which it returns;
 * NULL when out of memory. */
static void *
ring_alloc(struct uroce_ring *r, uint32_t cqe_count, uint32_t slot,
	   const struct uroce_ring_alloc *a, bool *ext)
{
	uint32_t nb = rte_align32pow2(cqe_count);
	void *mem = uroce_ring_mem_get(a, uroce_ring_mem_size(nb, slot),
				       UROCE_RING_CQ, ext);

	if (mem != NULL) {
		memset(r, 0, sizeof(*r));
		uroce_ring_init(r, mem, nb, slot);
	}
	return mem;
}

int
uroce_cq_init_ex(struct uroce_cq *cq, uint32_t cqe_count, unsigned int flags,
		 const struct uroce_ring_alloc *alloc)
{
	bool ts = (flags & UROCE_CQ_TIMESTAMP) != 0, ext = false;
	struct uroce_ring r;
	void *mem;

	if (cqe_count == 0 || cqe_count > UROCE_CQ_MAX_CQE ||
	    (flags & ~UROCE_CQ_TIMESTAMP) != 0)
		return -EINVAL;
	mem = ring_alloc(&r, cqe_count, ts ? sizeof(struct uroce_cqe) :
			 sizeof(struct ibv_wc), alloc, &ext);
	if (mem == NULL)
		return -ENOMEM;
	memset(cq, 0, sizeof(*cq));
	cq->mem = mem;
	cq->ring = r;
	cq->ts = ts;
	cq->mem_ext = ext;
	if (alloc != NULL)
		cq->alloc = *alloc;
	return 0;
}

int
uroce_cq_init(struct uroce_cq *cq, uint32_t cqe_count)
{
	return uroce_cq_init_ex(cq, cqe_count, 0, NULL);
}

/* Whether the completion at ring index idx, of QP qpn, was cleaned by one
 * of c[0..n): a clean removes what its QP had queued below the index the
 * producer was at. Indices wrap: compared as a signed distance. */
static bool
cleaned(const uint64_t *c, uint32_t n, uint32_t idx, uint32_t qpn)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if ((uint32_t)(c[i] >> 32) == qpn &&
		    (int32_t)(idx - (uint32_t)c[i]) < 0)
			return true;
	}
	return false;
}

/* The cleans the consumer may see: copied whole out of the CQ. */
static uint32_t
cleans_load(const struct uroce_cq *cq, uint64_t *c)
{
	uint32_t n = __atomic_load_n(&cq->n_clean, __ATOMIC_ACQUIRE), i;

	for (i = 0; i < n; i++)
		c[i] = __atomic_load_n(&cq->clean[i], __ATOMIC_RELAXED);
	return n;
}

int
uroce_cq_resize(struct uroce_cq *cq, uint32_t cqe_count)
{
	uint32_t n = uroce_ring_count(&cq->ring), i, live = 0, nc;
	uint64_t c[UROCE_CQ_CLEANS];
	const struct ibv_wc *wc;
	struct uroce_ring r;
	bool ext;
	void *mem;

	nc = cleans_load(cq, c);
	n = uroce_ring_cons_avail(&cq->ring, n);
	for (i = 0; i < n; i++) {
		wc = uroce_ring_cons_slot(&cq->ring, i);
		live += !cleaned(c, nc, cq->ring.tail + i, wc->qp_num);
	}
	if (cqe_count == 0 || cqe_count > UROCE_CQ_MAX_CQE || cqe_count < live)
		return -EINVAL;
	/* The default allocator (uroce_ring_mem.h): this runs on an engine
	 * lcore. */
	mem = ring_alloc(&r, cqe_count, cq->ring.slot_size, NULL, &ext);
	if (mem == NULL)
		return -ENOMEM;
	/* The completions not yet polled and not cleaned, oldest first, at
	 * the new ring's start: the next poll returns them in the same order.
	 * The cleans are done with: the indices they name are gone. */
	for (i = 0, live = 0; i < n; i++) {
		wc = uroce_ring_cons_slot(&cq->ring, i);
		if (!cleaned(c, nc, cq->ring.tail + i, wc->qp_num))
			memcpy(uroce_ring_prod_slot(&r, live++), wc,
			       r.slot_size);
	}
	uroce_ring_prod_commit(&r, live);
	uroce_ring_mem_put(&cq->alloc, cq->mem, UROCE_RING_CQ, cq->mem_ext);
	cq->mem_ext = ext;
	cq->mem = mem;
	cq->ring = r;
	cq->n_clean = 0;
	return 0;
}

int
uroce_cq_clean(struct uroce_cq *cq, uint32_t qp_num)
{
	struct uroce_ring *r = &cq->ring;
	uint32_t head = r->head;	/* the producer's own index */
	uint32_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	uint32_t n = cq->n_clean, i;

	/* Once the consumer has passed every clean, the list starts again.
	 * A poll that loaded the old count may read a slot rewritten: each
	 * slot is one atomic word, and a newer clean only removes more of
	 * what was queued before it. */
	for (i = 0; i < n && (int32_t)(tail - (uint32_t)cq->clean[i]) >= 0; i++)
		;
	if (i == n)
		n = 0;
	if (head == tail) {
		if (n == 0)
			__atomic_store_n(&cq->n_clean, 0, __ATOMIC_RELEASE);
		return 0;	/* nothing queued */
	}
	if (n == UROCE_CQ_CLEANS)
		return -ENOSPC;
	__atomic_store_n(&cq->clean[n], (uint64_t)qp_num << 32 | head,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&cq->n_clean, n + 1, __ATOMIC_RELEASE);
	return 0;
}

void
uroce_cq_fini(struct uroce_cq *cq)
{
	uroce_ring_mem_put(&cq->alloc, cq->mem, UROCE_RING_CQ, cq->mem_ext);
	cq->mem = NULL;
}

uint32_t
uroce_cq_size(const struct uroce_cq *cq)
{
	return uroce_ring_capacity(&cq->ring);
}

/* Producer only: overrun_cnt has one writer; RELAXED is enough for the
 * readers, who want a count, not an ordering.
 */
static void
count_lost(struct uroce_cq *cq)
{
	__atomic_store_n(&cq->overrun_cnt, cq->overrun_cnt + 1,
			 __ATOMIC_RELAXED);
}

int
uroce_cq_push(struct uroce_cq *cq, const struct ibv_wc *wc)
{
	struct uroce_ring *r = &cq->ring;
	void *slot;

	/* in_error is the producer's own: a plain read sees its last store */
	if (cq->in_error) {
		count_lost(cq);
		return -EIO;
	}
	if (uroce_ring_prod_avail(r, 1) == 0) {
		count_lost(cq);
		/* RELEASE: a poll that ACQUIRE-loads the error also sees
		 * every completion committed before it (see uroce_cq_poll).
		 */
		__atomic_store_n(&cq->in_error, 1, __ATOMIC_RELEASE);
		return -ENOSPC;
	}
	slot = uroce_ring_prod_slot(r, 0);
	memcpy(slot, wc, sizeof(*wc));
	if (cq->ts)
		((struct uroce_cqe *)slot)->tsc = rte_rdtsc();
	uroce_ring_prod_commit(r, 1);
	return 0;
}

/* uroce_cq_poll() while some completions are cleaned: those are passed
 * over (released unread) as the others are moved out. */
/* Move the completion in slot e, and its TSC when tsc is not NULL. */
static inline void
poll_take(const struct uroce_cq *cq, const void *e, struct ibv_wc *wc,
	  uint64_t *tsc)
{
	memcpy(wc, e, sizeof(*wc));
	if (tsc != NULL)
		*tsc = cq->ts ? ((const struct uroce_cqe *)e)->tsc : 0;
}

static int
poll_cleaned(struct uroce_cq *cq, int n, struct ibv_wc *wc, uint64_t *tsc,
	     uint32_t avail)
{
	struct uroce_ring *r = &cq->ring;
	uint64_t c[UROCE_CQ_CLEANS];
	const struct ibv_wc *e;
	uint32_t nc = cleans_load(cq, c), i, out = 0;

	for (i = 0; i < avail && out < (uint32_t)n; i++) {
		e = uroce_ring_cons_slot(r, i);
		if (!cleaned(c, nc, r->tail + i, e->qp_num)) {
			poll_take(cq, e, &wc[out], tsc != NULL ? &tsc[out] : NULL);
			out++;
		}
	}
	uroce_ring_cons_release(r, i);
	return (int)out;
}

int
uroce_cq_poll_ts(struct uroce_cq *cq, int n, struct ibv_wc *wc, uint64_t *tsc)
{
	struct uroce_ring *r = &cq->ring;
	uint32_t avail, i;

	if (n <= 0)
		return 0;
	avail = uroce_ring_cons_avail(r, (uint32_t)n);
	if (avail == 0 && uroce_cq_in_error(cq)) {
		/* Empty as of a head load made before the error was seen:
		 * look again, now that the error's ACQUIRE orders the load
		 * after every push that preceded the overrun.
		 */
		avail = uroce_ring_cons_avail(r, 1);
		if (avail == 0)
			return -EIO;
	}
	if (unlikely(__atomic_load_n(&cq->n_clean, __ATOMIC_RELAXED) != 0))
		return poll_cleaned(cq, n, wc, tsc, avail);
	avail = RTE_MIN(avail, (uint32_t)n);
	for (i = 0; i < avail; i++)
		poll_take(cq, uroce_ring_cons_slot(r, i), &wc[i],
			  tsc != NULL ? &tsc[i] : NULL);
	uroce_ring_cons_release(r, avail);
	return (int)avail;
}

int
uroce_cq_poll(struct uroce_cq *cq, int n, struct ibv_wc *wc)
{
	return uroce_cq_poll_ts(cq, n, wc, NULL);
}

bool
uroce_cq_in_error(const struct uroce_cq *cq)
{
	return __atomic_load_n(&cq->in_error, __ATOMIC_ACQUIRE) != 0;
}

uint64_t
uroce_cq_overrun_count(const struct uroce_cq *cq)
{
	return __atomic_load_n(&cq->overrun_cnt, __ATOMIC_RELAXED);
}

/*
 * Arming and signalling are a store-then-load on each side: the app stores
 * arm and then loads head (its next poll), the engine stores head (the push)
 * and then loads arm. Acquire/release cannot order a store before a later
 * load; a SEQ_CST fence on both sides does, so at least one of the two sees
 * the other's store and no completion is left without an event or a poll.
 */
void
uroce_cq_req_notify(struct uroce_cq *cq, bool solicited_only)
{
	uint32_t want = solicited_only ? UROCE_CQ_ARMED_SOLICITED :
		UROCE_CQ_ARMED_NEXT;
	uint32_t cur = __atomic_load_n(&cq->arm, __ATOMIC_RELAXED);

	/* Widen only: NEXT stays NEXT when solicited-only is asked for. */
	while (cur < want &&
	       !__atomic_compare_exchange_n(&cq->arm, &cur, want, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Whether a completion fires a CQ armed in state arm. */
static bool
arm_matches(uint32_t arm, const struct ibv_wc *wc, bool solicited)
{
	if (arm == UROCE_CQ_ARMED_NEXT)
		return true;
	return arm == UROCE_CQ_ARMED_SOLICITED &&
		(solicited || wc->status != IBV_WC_SUCCESS);
}

void
uroce_cq_set_no_events(struct uroce_cq *cq)
{
	cq->no_events = true;
}

bool
uroce_cq_should_notify(struct uroce_cq *cq, const struct ibv_wc *wc,
		       bool solicited)
{
	uint32_t cur;

	if (cq->no_events)
		return false;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	cur = __atomic_load_n(&cq->arm, __ATOMIC_RELAXED);
	/* The app may widen SOLICITED to NEXT meanwhile: then retry. */
	while (arm_matches(cur, wc, solicited)) {
		if (__atomic_compare_exchange_n(&cq->arm, &cur,
						UROCE_CQ_DISARMED, false,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return true;
	}
	return false;
}
