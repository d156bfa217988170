/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Memory regions (ibv_reg_mr(3)): the device's key table (uroce_mr.h)
 * through the engine. Nothing is pinned: the engine reaches the memory
 * with the CPU through the process's own page tables.
 */

#include <stdlib.h>

#include "uroce_engine.h"
#include "verbs_priv.h"

/* <infiniband/verbs.h> turns these names into inline wrappers. */
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		 unsigned int access)
{
	struct uroce_vmr *mr;
	int ret;

	if (pd == NULL)
		return uroce_verbs_null(EINVAL);
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return uroce_verbs_null(ENOMEM);
	ret = uroce_dev_mr_reg(((struct uroce_vpd *)pd)->upd, addr, length,
			       iova, access, &mr->umr);
	if (ret < 0) {
		free(mr);
		return uroce_verbs_null(-ret);
	}
	mr->mr.context = pd->context;
	mr->mr.pd = pd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.handle = 0;
	mr->mr.lkey = mr->umr->lkey;
	mr->mr.rkey = mr->umr->rkey;
	return &mr->mr;
}

struct ibv_mr *
ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr,
				(unsigned int)access);
}

struct ibv_mr *
ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

/* "0 on success, or the value of errno". Returns once no engine lcore
 * can still touch the memory. */
int
ibv_dereg_mr(struct ibv_mr *mr)
{
	struct uroce_vmr *m = (struct uroce_vmr *)mr;
	int ret;

	if (mr == NULL)
		return EINVAL;
	ret = uroce_dev_mr_dereg(m->umr);
	if (ret < 0)
		return -ret;
	free(m);
	return 0;
}
