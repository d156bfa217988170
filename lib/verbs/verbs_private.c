/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * IBVERBS_PRIVATE_34: rdma-core's interface to its providers (libmlx5,
 * libefa, ...). They are never given a device by us, but they are loaded
 * (perftest links libmlx5 and libefa; DPDK's mlx PMDs link libibverbs) and,
 * as Debian links everything BIND_NOW, every symbol they import must
 * exist. libmlx5's constructor calls verbs_register_driver_34() at load
 * time: it must return quietly. Everything here does nothing or fails the
 * rdma-core way for an absent feature; none touches its arguments.
 */

#include "verbs_priv.h"

/* Exported data keeps rdma-core's size (1) in sanitizer builds too: no
 * ASan redzone around it (clang; GCC has no such variable attribute). */
#if defined(__clang__)
__attribute__((no_sanitize("address")))
#endif
bool verbs_allow_disassociate_destroy;

/* Providers register at load time; we have no use for them. */
void
verbs_register_driver_34(const struct verbs_device_ops *ops)
{
}

void *
_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
			      size_t alloc_size,
			      struct verbs_context *context_offset,
			      uint32_t driver_id)
{
	return uroce_verbs_null(UROCE_VERBS_ABSENT);
}

void
verbs_uninit_context(struct verbs_context *context)
{
}

void
verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops)
{
}

void
verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
	      struct ibv_comp_channel *channel, void *cq_context)
{
}

/* Opening a device goes through ibv_open_device(), not built yet. */
struct ibv_context *
verbs_open_device(struct ibv_device *device, void *private_data)
{
	return uroce_verbs_null(ENOSYS);
}

/* A provider's debug log: providers never run here. */
void
__verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt, ...)
{
}

int
execute_ioctl(struct ibv_context *context, struct ibv_command_buffer *cmd)
{
	return UROCE_VERBS_ABSENT;
}

/* A pure count in rdma-core (attributes of a command chain); our command
 * buffers are never built, so the count is the caller's own. */
unsigned int
__ioctl_final_num_attrs(unsigned int num_attrs,
			struct ibv_command_buffer *link)
{
	return num_attrs;
}

int
ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			  struct verbs_sysfs_dev *sysfs_dev,
			  const char *fnfmt, ...)
{
	errno = ENOENT;
	return -1;
}

/*
 * The ibv_cmd_* helpers write uverbs commands to /dev/infiniband/uverbsN.
 * All return 0 or an errno value, except ibv_cmd_poll_cq (a count or -1).
 * Declared without parameters: only providers call them, through their
 * real prototypes, and under the SysV x86-64 ABI a callee that ignores
 * its arguments is called correctly with any argument list.
 */
#define CMD_ABSENT(name) \
	int name(void); \
	int name(void) { return UROCE_VERBS_ABSENT; }

CMD_ABSENT(ibv_cmd_advise_mr)
CMD_ABSENT(ibv_cmd_alloc_dm)
CMD_ABSENT(ibv_cmd_alloc_mw)
CMD_ABSENT(ibv_cmd_alloc_pd)
CMD_ABSENT(ibv_cmd_attach_mcast)
CMD_ABSENT(ibv_cmd_close_xrcd)
CMD_ABSENT(ibv_cmd_create_ah)
CMD_ABSENT(ibv_cmd_create_counters)
CMD_ABSENT(ibv_cmd_create_cq)
CMD_ABSENT(ibv_cmd_create_cq_ex)
CMD_ABSENT(ibv_cmd_create_flow)
CMD_ABSENT(ibv_cmd_create_flow_action_esp)
CMD_ABSENT(ibv_cmd_create_qp)
CMD_ABSENT(ibv_cmd_create_qp_ex)
CMD_ABSENT(ibv_cmd_create_qp_ex2)
CMD_ABSENT(ibv_cmd_create_rwq_ind_table)
CMD_ABSENT(ibv_cmd_create_srq)
CMD_ABSENT(ibv_cmd_create_srq_ex)
CMD_ABSENT(ibv_cmd_create_wq)
CMD_ABSENT(ibv_cmd_dealloc_mw)
CMD_ABSENT(ibv_cmd_dealloc_pd)
CMD_ABSENT(ibv_cmd_dereg_mr)
CMD_ABSENT(ibv_cmd_destroy_ah)
CMD_ABSENT(ibv_cmd_destroy_counters)
CMD_ABSENT(ibv_cmd_destroy_cq)
CMD_ABSENT(ibv_cmd_destroy_flow)
CMD_ABSENT(ibv_cmd_destroy_flow_action)
CMD_ABSENT(ibv_cmd_destroy_qp)
CMD_ABSENT(ibv_cmd_destroy_rwq_ind_table)
CMD_ABSENT(ibv_cmd_destroy_srq)
CMD_ABSENT(ibv_cmd_destroy_wq)
CMD_ABSENT(ibv_cmd_detach_mcast)
CMD_ABSENT(ibv_cmd_free_dm)
CMD_ABSENT(ibv_cmd_get_context)
CMD_ABSENT(ibv_cmd_modify_cq)
CMD_ABSENT(ibv_cmd_modify_flow_action_esp)
CMD_ABSENT(ibv_cmd_modify_qp)
CMD_ABSENT(ibv_cmd_modify_qp_ex)
CMD_ABSENT(ibv_cmd_modify_srq)
CMD_ABSENT(ibv_cmd_modify_wq)
CMD_ABSENT(ibv_cmd_open_qp)
CMD_ABSENT(ibv_cmd_open_xrcd)
CMD_ABSENT(ibv_cmd_post_recv)
CMD_ABSENT(ibv_cmd_post_send)
CMD_ABSENT(ibv_cmd_post_srq_recv)
CMD_ABSENT(ibv_cmd_query_context)
CMD_ABSENT(ibv_cmd_query_device_any)
CMD_ABSENT(ibv_cmd_query_mr)
CMD_ABSENT(ibv_cmd_query_port)
CMD_ABSENT(ibv_cmd_query_qp)
CMD_ABSENT(ibv_cmd_query_srq)
CMD_ABSENT(ibv_cmd_read_counters)
CMD_ABSENT(ibv_cmd_reg_dm_mr)
CMD_ABSENT(ibv_cmd_reg_dmabuf_mr)
CMD_ABSENT(ibv_cmd_reg_mr)
CMD_ABSENT(ibv_cmd_req_notify_cq)
CMD_ABSENT(ibv_cmd_rereg_mr)
CMD_ABSENT(ibv_cmd_resize_cq)

int ibv_cmd_poll_cq(void);

int
ibv_cmd_poll_cq(void)
{
	errno = UROCE_VERBS_ABSENT;
	return -1;
}
