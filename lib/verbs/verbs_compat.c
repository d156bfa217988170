/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The non-default versions the real library keeps for binaries linked
 * against libibverbs 1.0 (2006: struct ibv_device_1_0 and friends, a
 * layout that wraps every object), and ibv_register_driver@IBVERBS_1.1
 * (the pre-2017 provider registration). A binary that old cannot use the
 * stack: every one of them fails the rdma-core way for an absent feature
 * (NULL or -1 with errno EOPNOTSUPP, or EOPNOTSUPP returned), or does
 * nothing. They exist so that the symbol table is rdma-core 44's exactly.
 *
 * Declared without parameters, never looking at their arguments: callers
 * use the old prototypes, and under the SysV x86-64 ABI a callee that
 * ignores its arguments is called correctly with any argument list.
 */

#include "verbs_priv.h"

#define COMPAT_PTR(name, node) \
	void *uroce_compat_##name(void); \
	UROCE_VERBS_COMPAT(uroce_compat_##name, name, node); \
	void *uroce_compat_##name(void) \
	{ return uroce_verbs_null(UROCE_VERBS_ABSENT); }

#define COMPAT_ERRNO(name, node) \
	int uroce_compat_##name(void); \
	UROCE_VERBS_COMPAT(uroce_compat_##name, name, node); \
	int uroce_compat_##name(void) { return UROCE_VERBS_ABSENT; }

#define COMPAT_MINUS_ONE(name, node) \
	int uroce_compat_##name(void); \
	UROCE_VERBS_COMPAT(uroce_compat_##name, name, node); \
	int uroce_compat_##name(void) \
	{ errno = UROCE_VERBS_ABSENT; return -1; }

#define COMPAT_VOID(name, node) \
	void uroce_compat_##name(void); \
	UROCE_VERBS_COMPAT(uroce_compat_##name, name, node); \
	void uroce_compat_##name(void) { }

/* Devices and contexts. ibv_get_device_list@1.0 leaves *num_devices as
 * it is: with no list there is nothing to count. */
COMPAT_PTR(ibv_get_device_list, IBVERBS_1.0)
COMPAT_VOID(ibv_free_device_list, IBVERBS_1.0)
COMPAT_PTR(ibv_get_device_name, IBVERBS_1.0)
COMPAT_PTR(ibv_open_device, IBVERBS_1.0)
COMPAT_MINUS_ONE(ibv_close_device, IBVERBS_1.0)
COMPAT_MINUS_ONE(ibv_get_async_event, IBVERBS_1.0)
COMPAT_VOID(ibv_ack_async_event, IBVERBS_1.0)
COMPAT_ERRNO(ibv_query_device, IBVERBS_1.0)
COMPAT_ERRNO(ibv_query_port, IBVERBS_1.0)
COMPAT_MINUS_ONE(ibv_query_gid, IBVERBS_1.0)
COMPAT_MINUS_ONE(ibv_query_pkey, IBVERBS_1.0)

/* rdma-core's GUID for a device it cannot read: 0. */
uint64_t uroce_compat_ibv_get_device_guid(void);
UROCE_VERBS_COMPAT(uroce_compat_ibv_get_device_guid, ibv_get_device_guid,
		   IBVERBS_1.0);
uint64_t
uroce_compat_ibv_get_device_guid(void)
{
	return 0;
}

/* PDs and MRs */
COMPAT_PTR(ibv_alloc_pd, IBVERBS_1.0)
COMPAT_ERRNO(ibv_dealloc_pd, IBVERBS_1.0)
COMPAT_PTR(ibv_reg_mr, IBVERBS_1.0)
COMPAT_ERRNO(ibv_dereg_mr, IBVERBS_1.0)

/* CQs */
COMPAT_PTR(ibv_create_cq, IBVERBS_1.0)
COMPAT_ERRNO(ibv_resize_cq, IBVERBS_1.0)
COMPAT_ERRNO(ibv_destroy_cq, IBVERBS_1.0)
COMPAT_MINUS_ONE(ibv_get_cq_event, IBVERBS_1.0)
COMPAT_VOID(ibv_ack_cq_events, IBVERBS_1.0)

/* SRQs */
COMPAT_PTR(ibv_create_srq, IBVERBS_1.0)
COMPAT_ERRNO(ibv_modify_srq, IBVERBS_1.0)
COMPAT_ERRNO(ibv_query_srq, IBVERBS_1.0)
COMPAT_ERRNO(ibv_destroy_srq, IBVERBS_1.0)

/* QPs */
COMPAT_PTR(ibv_create_qp, IBVERBS_1.0)
COMPAT_ERRNO(ibv_query_qp, IBVERBS_1.0)
COMPAT_ERRNO(ibv_modify_qp, IBVERBS_1.0)
COMPAT_ERRNO(ibv_destroy_qp, IBVERBS_1.0)
COMPAT_ERRNO(ibv_attach_mcast, IBVERBS_1.0)
COMPAT_ERRNO(ibv_detach_mcast, IBVERBS_1.0)

/* AHs */
COMPAT_PTR(ibv_create_ah, IBVERBS_1.0)
COMPAT_ERRNO(ibv_destroy_ah, IBVERBS_1.0)

/* The old provider registration: providers of that era cannot load. */
COMPAT_VOID(ibv_register_driver, IBVERBS_1.1)
