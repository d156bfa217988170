/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_RING_MEM_H
#define UROCE_RING_MEM_H

/**
 * @file
 * Where the slot memory of a queue (a QP's send and receive rings, a CQ's,
 * an SRQ's) comes from: the default allocator (posix_memalign), or the
 * caller's, as ibv_alloc_parent_domain(3) lets an application give the
 * provider its own allocator for "its internal resources". The memory is
 * zeroed and cache-line aligned whichever allocator gave it.
 *
 * A queue takes its memory from the caller's allocator when it is
 * created; a resize (ibv_resize_cq, ibv_modify_srq IBV_SRQ_MAX_WR) takes
 * the new ring from the default one, so that no caller's function runs
 * on an engine lcore for it, and gives the old ring back to whichever
 * allocator made it. free may then be called on an engine lcore: the
 * caller's free must accept that (the verbs layer queues the pointer and
 * hands it to the application later, on the application's thread).
 */

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a ring is for: the kind passed to the allocator. */
enum uroce_ring_kind {
	UROCE_RING_SQ = 1,		/**< a QP's send queue */
	UROCE_RING_RQ = 2,		/**< a QP's receive queue */
	UROCE_RING_CQ = 3,		/**< a CQ */
	UROCE_RING_SRQ = 4,		/**< an SRQ */
};

/** A caller's allocator (NULL functions: the default one). */
struct uroce_ring_alloc {
	/** 0 and *out (size bytes, aligned to align); 1: use the default
	 *  allocator; a negative errno: fail the creation. */
	int (*alloc)(void *arg, size_t size, size_t align,
		     enum uroce_ring_kind kind, void **out);
	/** Give back what alloc gave. */
	void (*free)(void *arg, void *ptr, enum uroce_ring_kind kind);
	void *arg;
};

/**
 * size bytes of zeroed, cache-line aligned memory from a (NULL or no
 * alloc function: the default allocator); *ext says whether a's gave it.
 * @return the memory, or NULL (out of memory, or a's alloc failed)
 */
void *uroce_ring_mem_get(const struct uroce_ring_alloc *a, size_t size,
			 enum uroce_ring_kind kind, bool *ext);

/** Free p (NULL: nothing) to the allocator that gave it. */
void uroce_ring_mem_put(const struct uroce_ring_alloc *a, void *p,
			enum uroce_ring_kind kind, bool ext);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_RING_MEM_H */
