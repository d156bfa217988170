/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Memory regions (ibv_reg_mr(3)): the device's key table (uroce_mr.h)
 * through the engine. Nothing is pinned: the engine reaches the memory
 * with the CPU through the process's own page tables.
 */

#include <errno.h>
#include <stdlib.h>

#include "uroce_engine.h"
#include "uroce_memguard.h"
#include "uroce_mr.h"
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
	mr->mr.handle = uroce_verbs_handle_add(pd->context, UROCE_VH_MR,
					       mr->umr);
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
	uroce_verbs_handle_del(mr->handle);
	free(m);
	return 0;
}

/*
 * ibv_rereg_mr(3): "conceptually, deregister followed by register", done
 * in place: the MR keeps its lkey and rkey, which peers may hold (mlx5
 * keeps them too, and rdma-core's tests rely on it). rdma-core's input
 * checks come first (unknown flags, a translation without addr or length,
 * access without IBV_REREG_MR_CHANGE_ACCESS), then the registration's; a
 * failure of either leaves the MR as it was and is IBV_REREG_MR_ERR_INPUT
 * with errno set. Returns once no engine lcore can still use the old
 * region.
 */
int
ibv_rereg_mr(struct ibv_mr *ibmr, int flags, struct ibv_pd *pd, void *addr,
	     size_t length, int access)
{
	struct uroce_vmr *m = (struct uroce_vmr *)ibmr;
	struct ibv_pd *npd;
	void *naddr;
	size_t nlen;
	uint64_t iova;
	int ret;

	if (ibmr == NULL || flags == 0 ||
	    (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) &&
	     (addr == NULL || length == 0)) ||
	    (access != 0 && !(flags & IBV_REREG_MR_CHANGE_ACCESS)) ||
	    ((flags & IBV_REREG_MR_CHANGE_PD) &&
	     (pd == NULL || pd->context != ibmr->context))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	npd = (flags & IBV_REREG_MR_CHANGE_PD) ? pd : ibmr->pd;
	naddr = (flags & IBV_REREG_MR_CHANGE_TRANSLATION) ? addr : ibmr->addr;
	nlen = (flags & IBV_REREG_MR_CHANGE_TRANSLATION) ? length :
		ibmr->length;
	iova = (flags & IBV_REREG_MR_CHANGE_TRANSLATION) ? (uintptr_t)addr :
		m->umr->iova;
	ret = uroce_dev_mr_rereg(m->umr, ((struct uroce_vpd *)npd)->upd,
				 naddr, nlen, iova,
				 (flags & IBV_REREG_MR_CHANGE_ACCESS) ?
				 (unsigned int)access : m->umr->access);
	if (ret < 0) {
		errno = -ret;
		return IBV_REREG_MR_ERR_INPUT;
	}
	ibmr->pd = npd;
	ibmr->addr = naddr;
	ibmr->length = nlen;
	return 0;
}

/* ------------------------------------------------------------------------
 * On-demand paging (uroce_mr.h): registration takes IBV_ACCESS_ON_DEMAND
 * and the implicit whole-space region; these are its caps and its advice.
 */

/* Every operation of every transport works on on-demand memory: the data
 * path's accesses are the same for pinned and on-demand regions. */
void
uroce_verbs_odp_caps(struct ibv_device_attr_ex *a)
{
	const uint32_t recv = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		IBV_ODP_SUPPORT_SRQ_RECV;
	const uint32_t rdma = recv | IBV_ODP_SUPPORT_WRITE |
		IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC;

	a->odp_caps.general_caps = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT;
	a->odp_caps.per_transport_caps.rc_odp_caps = rdma;
	a->odp_caps.per_transport_caps.uc_odp_caps = recv |
		IBV_ODP_SUPPORT_WRITE;
	a->odp_caps.per_transport_caps.ud_odp_caps = recv;
	a->xrc_odp_caps = rdma;
}

/*
 * ibv_advise_mr(3): prefetch faults the SGEs' pages in now, on the calling
 * thread (readable, or writable for _PREFETCH_WRITE); _PREFETCH_NO_FAULT
 * has nothing to do, the engine sees what the CPU sees. Done at once
 * whether IBV_ADVISE_MR_FLAG_FLUSH asks for it or not. Every SGE is checked
 * before any page is touched; errors as the man page and mlx5 give them.
 */
int
uroce_verbs_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge)
{
	const struct uroce_qp_env *env;
	bool write = advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	uint32_t i;
	void *host;
	int ret;

	if (advice != IBV_ADVISE_MR_ADVICE_PREFETCH && !write &&
	    advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return EOPNOTSUPP;
	if ((flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH) || sg_list == NULL ||
	    num_sge == 0)
		return EINVAL;
	env = uroce_dev_env(uroce_vctx_of(pd->context)->dev);
	for (i = 0; i < num_sge; i++) {
		ret = uroce_mr_check_advise(env->mrs,
					    ((struct uroce_vpd *)pd)->upd,
					    sg_list[i].lkey, sg_list[i].addr,
					    sg_list[i].length, write, &host);
		if (ret < 0)
			return -ret;
	}
	for (i = 0; advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT &&
		    i < num_sge; i++) {
		uroce_mr_check_advise(env->mrs, ((struct uroce_vpd *)pd)->upd,
				      sg_list[i].lkey, sg_list[i].addr,
				      sg_list[i].length, write, &host);
		ret = uroce_memguard_populate(host, sg_list[i].length, write);
		if (ret < 0)
			return -ret;
	}
	return 0;
}
