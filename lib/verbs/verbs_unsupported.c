/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Every device verb that is not built yet. ibv_open_device() fails with
 * ENOSYS (the engine-backed version comes next), so no application can
 * hold a context, PD, CQ or QP of ours: the verbs below can only be
 * reached with someone else's objects or with NULL, and they touch
 * neither. Each fails the way rdma-core reports an absent feature (its
 * dummy ops, and the man pages' return conventions):
 *  - pointer results: NULL, errno = EOPNOTSUPP;
 *  - "0 or the value of errno": EOPNOTSUPP;
 *  - "0 or -1" (get_async_event, get_cq_event, query_gid, query_pkey,
 *    get_pkey_index, init_ah_from_wc, close_device, query_gid_type):
 *    -1, errno = EOPNOTSUPP;
 *  - acknowledgements and unimports: nothing to do.
 * As each verb gets its real implementation, it leaves this file.
 */

#include "verbs_priv.h"

/* <infiniband/verbs.h> turns these names into inline wrappers. */
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

static int
absent_minus_one(void)
{
	errno = UROCE_VERBS_ABSENT;
	return -1;
}

/* ---- device and context ---- */

struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	return uroce_verbs_null(ENOSYS);
}

int
ibv_close_device(struct ibv_context *context)
{
	return absent_minus_one();
}

struct ibv_context *
ibv_import_device(int cmd_fd)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

int
ibv_query_device(struct ibv_context *context,
		 struct ibv_device_attr *device_attr)
{
	return UROCE_VERBS_ABSENT;
}

int
ibv_query_port(struct ibv_context *context, uint8_t port_num,
	       struct _compat_ibv_port_attr *port_attr)
{
	return UROCE_VERBS_ABSENT;
}

int
ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
	      union ibv_gid *gid)
{
	return absent_minus_one();
}

int
_ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
		  uint32_t gid_index, struct ibv_gid_entry *entry,
		  uint32_t flags, size_t entry_size)
{
	return UROCE_VERBS_ABSENT;
}

/* Returns the number of entries or a negative errno (man ibv_query_gid_ex). */
ssize_t
_ibv_query_gid_table(struct ibv_context *context,
		     struct ibv_gid_entry *entries, size_t max_entries,
		     uint32_t flags, size_t entry_size)
{
	return -UROCE_VERBS_ABSENT;
}

int
ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		   unsigned int index, enum ibv_gid_type_sysfs *type)
{
	return absent_minus_one();
}

int
ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
	       __be16 *pkey)
{
	return absent_minus_one();
}

int
ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num,
		   __be16 pkey)
{
	return absent_minus_one();
}

int
ibv_get_async_event(struct ibv_context *context,
		    struct ibv_async_event *event)
{
	return absent_minus_one();
}

void
ibv_ack_async_event(struct ibv_async_event *event)
{
}

int
ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
			    struct ibv_ah_attr *attr,
			    uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t *vid)
{
	return UROCE_VERBS_ABSENT;
}

/* ---- protection domains and memory ---- */

struct ibv_pd *
ibv_alloc_pd(struct ibv_context *context)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

int
ibv_dealloc_pd(struct ibv_pd *pd)
{
	return UROCE_VERBS_ABSENT;
}

struct ibv_pd *
ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

void
ibv_unimport_pd(struct ibv_pd *pd)
{
}

struct ibv_mr *
ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

struct ibv_mr *
ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		int access)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		 unsigned int access)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

struct ibv_mr *
ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
		  uint64_t iova, int fd, int access)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

/* The old MR stays valid: an input error in man ibv_rereg_mr's terms. */
int
ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
	     size_t length, int access)
{
	errno = UROCE_VERBS_ABSENT;
	return IBV_REREG_MR_ERR_INPUT;
}

int
ibv_dereg_mr(struct ibv_mr *mr)
{
	return UROCE_VERBS_ABSENT;
}

struct ibv_mr *
ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

void
ibv_unimport_mr(struct ibv_mr *mr)
{
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

/* ---- completion channels and CQs ---- */

struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

int
ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	return UROCE_VERBS_ABSENT;
}

struct ibv_cq *
ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

int
ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	return UROCE_VERBS_ABSENT;
}

int
ibv_destroy_cq(struct ibv_cq *cq)
{
	return UROCE_VERBS_ABSENT;
}

int
ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
		 void **cq_context)
{
	return absent_minus_one();
}

void
ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
}

/* ---- shared receive queues ---- */

struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

int
ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
	       int srq_attr_mask)
{
	return UROCE_VERBS_ABSENT;
}

int
ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr)
{
	return UROCE_VERBS_ABSENT;
}

int
ibv_destroy_srq(struct ibv_srq *srq)
{
	return UROCE_VERBS_ABSENT;
}

/* ---- queue pairs ---- */

struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

int
ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
	     struct ibv_qp_init_attr *init_attr)
{
	return UROCE_VERBS_ABSENT;
}

int
ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	return UROCE_VERBS_ABSENT;
}

int
ibv_destroy_qp(struct ibv_qp *qp)
{
	return UROCE_VERBS_ABSENT;
}

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

/* ---- address handles ---- */

struct ibv_ah *
ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

struct ibv_ah *
ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
		      struct ibv_grh *grh, uint8_t port_num)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

int
ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
		    struct ibv_wc *wc, struct ibv_grh *grh,
		    struct ibv_ah_attr *ah_attr)
{
	return absent_minus_one();
}

int
ibv_destroy_ah(struct ibv_ah *ah)
{
	return UROCE_VERBS_ABSENT;
}
