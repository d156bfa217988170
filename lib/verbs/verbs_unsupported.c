/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The device verbs uroce does not do (yet): no multicast, no ECE, no
 * device memory to import, no dma-buf MRs. Each fails the way rdma-core
 * reports an absent feature (its dummy ops, and the man pages' conventions):
 *  - pointer results: NULL, errno = EOPNOTSUPP;
 *  - "0 or the value of errno": EOPNOTSUPP;
 *  - unimports: nothing to do.
 * As a verb gets its real implementation, it leaves this file.
 */

#include "verbs_priv.h"

/* ---- device and context ---- */

int
ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
			    struct ibv_ah_attr *attr,
			    uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t *vid)
{
	return UROCE_VERBS_ABSENT;
}

/* ---- protection domains and memory ---- */

struct ibv_mr *
ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
		  uint64_t iova, int fd, int access)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

struct ibv_dm *
ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

void
ibv_unimport_dm(struct ibv_dm *dm)
{
}

/* ---- queue pairs ---- */

/* "0 otherwise": in-order placement is not promised. */
int
ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op,
			   uint32_t flags)
{
	return 0;
}

int
ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return UROCE_VERBS_ABSENT;
}

int
ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return UROCE_VERBS_ABSENT;
}

int
ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return UROCE_VERBS_ABSENT;
}

int
ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return UROCE_VERBS_ABSENT;
}
