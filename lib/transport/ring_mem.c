/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Queue memory from the default or a caller's allocator (uroce_ring_mem.h).
 */

#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "uroce_ring_mem.h"

void *
uroce_ring_mem_get(const struct uroce_ring_alloc *a, size_t size,
		   enum uroce_ring_kind kind, bool *ext)
{
	void *p = NULL;
	int ret = 1;

	size = RTE_ALIGN_CEIL(size, RTE_CACHE_LINE_SIZE);
	if (a != NULL && a->alloc != NULL)
		ret = a->alloc(a->arg, size, RTE_CACHE_LINE_SIZE, kind, &p);
	if (ret < 0)
		return NULL;
	*ext = ret == 0;
	if (ret == 1 && posix_memalign(&p, RTE_CACHE_LINE_SIZE, size) != 0)
		return NULL;
	/* ibv_alloc_parent_domain(3) has the callback zero it; not every
	 * one does (posix_memalign does not). */
	if (p != NULL)
		memset(p, 0, size);
	return p;
}

void
uroce_ring_mem_put(const struct uroce_ring_alloc *a, void *p,
		   enum uroce_ring_kind kind, bool ext)
{
	if (p == NULL)
		return;
	if (ext)
		a->free(a->arg, p, kind);
	else
		free(p);
}
