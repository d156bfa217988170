/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * fork() support. rdma-core needs ibv_fork_init() on old kernels because
 * the RDMA driver pins registered pages for DMA: after fork() a
 * copy-on-write fault could move the parent's page away from the pinned
 * one, so it marks registered ranges MADV_DONTFORK. Nothing pins our
 * memory: the engine reads and writes registered buffers with the CPU,
 * through the parent's own page tables, so fork() is always safe. Hence
 * ibv_fork_init() succeeds without doing anything, fork is reported as
 * not needed (IBV_FORK_UNNEEDED, what rdma-core says on kernels with
 * copy-on-fork pinning), and the range calls are no-ops.
 */

#include "verbs_priv.h"

int
ibv_fork_init(void)
{
	return 0;
}

enum ibv_fork_status
ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

int
ibv_dontfork_range(void *base, size_t size)
{
	return 0;
}

int
ibv_dofork_range(void *base, size_t size)
{
	return 0;
}
