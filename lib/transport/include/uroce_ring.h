/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_RING_H
#define UROCE_RING_H

/**
 * @file
 * A single-producer, single-consumer ring of fixed-size slots: the queues
 * between app threads and an engine lcore, the way a NIC's are.
 *
 *  - send/recv work queues: the app thread posting WRs produces, the engine
 *    lcore that owns the QP consumes;
 *  - completion queues: the engine produces, the app thread polling consumes.
 *
 * Exactly one thread may act as producer and one as consumer at a time; a
 * per-QP post lock (for concurrent posters) keeps the producer single. Each
 * helper says which side may call it and which ordering it relies on.
 *
 * Indexes are free-running 32-bit counters (head: slots ever produced, tail:
 * slots ever consumed); head - tail is the fill level even across the 2^32
 * wrap, so all nb_slots slots are usable and none is kept empty. Slot i
 * lives at (i & mask).
 *
 * Ordering, one pair per direction (C11 / __atomic built-ins, as DPDK 22.11):
 *  - the producer fills slots, then stores head with RELEASE; the consumer
 *    loads head with ACQUIRE, so it sees the slot contents;
 *  - the consumer reads slots, then stores tail with RELEASE; the producer
 *    loads tail with ACQUIRE before it reuses those slots, so it never
 *    overwrites a slot that is still being read.
 * Each side keeps a private copy of the other's index and reloads it only
 * when the copy says there is not enough room or data, so the hot path
 * touches the other side's cache line only when it must.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest number of slots: the fill level must fit in 32 bits. */
#define UROCE_RING_MAX_SLOTS	(UINT32_C(1) << 31)

/* Cache-line aligned: embed it, or allocate with aligned_alloc(). */
struct uroce_ring {
	/* Set by uroce_ring_init(), then read-only; both sides read it. */
	uint8_t *slots;
	uint32_t mask;			/* nb_slots - 1 */
	uint32_t slot_size;		/* bytes per slot */

	/* Producer's line: written by the producer only. */
	uint32_t head __rte_cache_aligned;	/* RELEASE-stored */
	uint32_t prod_tail_seen;		/* producer's copy of tail */

	/* Consumer's line: written by the consumer only. */
	uint32_t tail __rte_cache_aligned;	/* RELEASE-stored */
	uint32_t cons_head_seen;		/* consumer's copy of head */
} __rte_cache_aligned;

/** Bytes of slot memory a ring of nb_slots slots of slot_size needs. */
static inline size_t
uroce_ring_mem_size(uint32_t nb_slots, uint32_t slot_size)
{
	return (size_t)nb_slots * slot_size;
}

/**
 * Set up an empty ring over caller-provided slot memory of
 * uroce_ring_mem_size() bytes (cache-line aligned for best results).
 * Call before either side starts; the ring does not own mem.
 *
 * @return 0, or -EINVAL when nb_slots is not a power of two in
 *   1..UROCE_RING_MAX_SLOTS, slot_size is 0 or mem is NULL.
 */
static inline int
uroce_ring_init(struct uroce_ring *r, void *mem, uint32_t nb_slots,
		uint32_t slot_size)
{
	if (mem == NULL || slot_size == 0 || !rte_is_power_of_2(nb_slots) ||
	    nb_slots > UROCE_RING_MAX_SLOTS)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->slots = mem;
	r->mask = nb_slots - 1;
	r->slot_size = slot_size;
	return 0;
}

/** Number of slots. Either side. */
static inline uint32_t
uroce_ring_capacity(const struct uroce_ring *r)
{
	return r->mask + 1;
}

/* Address of slot number idx (a free-running index). Either side. */
static inline void *
uroce_ring_slot_at(const struct uroce_ring *r, uint32_t idx)
{
	return r->slots + (size_t)(idx & r->mask) * r->slot_size;
}

/* ----------------------------------------------------------------------
 * Producer side.
 */

/**
 * Producer only. Number of free slots: exact when fewer than want were
 * free by the producer's last look, else possibly an under-estimate (never
 * an over-estimate). Reloads tail with ACQUIRE only in the first case; that
 * pairs with the consumer's RELEASE in uroce_ring_cons_release(), so the
 * slots it frees are no longer being read.
 */
static inline uint32_t
uroce_ring_prod_avail(struct uroce_ring *r, uint32_t want)
{
	uint32_t cap = r->mask + 1;
	uint32_t n = cap - (r->head - r->prod_tail_seen);

	if (n >= want)
		return n;
	r->prod_tail_seen = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	return cap - (r->head - r->prod_tail_seen);
}

/**
 * Producer only. The i-th free slot after head, to fill in place; valid for
 * i < uroce_ring_prod_avail(). The consumer cannot see it before commit.
 */
static inline void *
uroce_ring_prod_slot(const struct uroce_ring *r, uint32_t i)
{
	return uroce_ring_slot_at(r, r->head + i);
}

/**
 * Producer only. Hand the next n filled slots to the consumer (n no more
 * than prod_avail returned). RELEASE: the slot contents written before are
 * visible to a consumer that ACQUIRE-loads the new head.
 */
static inline void
uroce_ring_prod_commit(struct uroce_ring *r, uint32_t n)
{
	__atomic_store_n(&r->head, r->head + n, __ATOMIC_RELEASE);
}

/**
 * Producer only. Copy one slot_size object in and commit it.
 * @return true, or false when the ring is full (nothing written).
 */
static inline bool
uroce_ring_enqueue(struct uroce_ring *r, const void *obj)
{
	if (uroce_ring_prod_avail(r, 1) == 0)
		return false;
	memcpy(uroce_ring_prod_slot(r, 0), obj, r->slot_size);
	uroce_ring_prod_commit(r, 1);
	return true;
}

/* ----------------------------------------------------------------------
 * Consumer side.
 */

/**
 * Consumer only. Number of filled slots: exact when fewer than want were
 * filled by the consumer's last look, else possibly an under-estimate.
 * Reloads head with ACQUIRE only in the first case; that pairs with the
 * producer's RELEASE in uroce_ring_prod_commit(), so the slot contents are
 * visible.
 */
static inline uint32_t
uroce_ring_cons_avail(struct uroce_ring *r, uint32_t want)
{
	uint32_t n = r->cons_head_seen - r->tail;

	if (n >= want)
		return n;
	r->cons_head_seen = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	return r->cons_head_seen - r->tail;
}

/**
 * Consumer only. The i-th filled slot after tail, to read in place; valid
 * for i < uroce_ring_cons_avail() until uroce_ring_cons_release().
 */
static inline const void *
uroce_ring_cons_slot(const struct uroce_ring *r, uint32_t i)
{
	return uroce_ring_slot_at(r, r->tail + i);
}

/**
 * Consumer only. Give the next n read slots back to the producer (n no more
 * than cons_avail returned). RELEASE: the reads of those slots happen before
 * a producer that ACQUIRE-loads the new tail overwrites them.
 */
static inline void
uroce_ring_cons_release(struct uroce_ring *r, uint32_t n)
{
	__atomic_store_n(&r->tail, r->tail + n, __ATOMIC_RELEASE);
}

/**
 * Consumer only. Copy one slot_size object out and release its slot.
 * @return true, or false when the ring is empty.
 */
static inline bool
uroce_ring_dequeue(struct uroce_ring *r, void *obj)
{
	if (uroce_ring_cons_avail(r, 1) == 0)
		return false;
	memcpy(obj, uroce_ring_cons_slot(r, 0), r->slot_size);
	uroce_ring_cons_release(r, 1);
	return true;
}

/* ----------------------------------------------------------------------
 * Any thread.
 */

/**
 * Fill level as seen by a third party (statistics, debugging): a snapshot
 * that may be stale by the time it is used. tail is loaded first, with
 * ACQUIRE so that the head load cannot move before it: head can then only
 * be newer, never behind, so the difference is never negative; it can
 * still overstate when both moved in between, hence the clamp.
 */
static inline uint32_t
uroce_ring_count(const struct uroce_ring *r)
{
	uint32_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	uint32_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);

	return RTE_MIN(head - tail, r->mask + 1);
}

#ifdef __cplusplus
}
#endif

#endif /* UROCE_RING_H */
