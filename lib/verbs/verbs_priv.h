/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_VERBS_PRIV_H
#define UROCE_VERBS_PRIV_H

/*
 * Internals of our libibverbs.so.1. The public prototypes come from the
 * system <infiniband/verbs.h> (rdma-core 44); this header declares the
 * exported symbols that verbs.h does not (rdma-core keeps them in its
 * private driver.h and marshall.h, which Debian does not ship), with
 * prototypes of our own, and what the files of lib/verbs share.
 *
 * Which symbol is exported at which version is decided by libibverbs.map
 * alone; every other global of this library stays local.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

/*
 * Bind a function to a non-default (compat, '@') version of an exported
 * name, as the real library does for the IBVERBS_1.0 ABI. The function
 * itself keeps a local name (hidden by the map's "local: *").
 */
#define UROCE_VERBS_COMPAT(impl, name, node) \
	__asm__(".symver " #impl "," #name "@" #node)

/*
 * The rdma-core conventions for an absent feature (its dummy ops):
 * verbs returning a pointer give NULL with errno = EOPNOTSUPP, verbs
 * returning int give EOPNOTSUPP (a positive errno value), except the few
 * documented to return -1 and set errno.
 */
#define UROCE_VERBS_ABSENT	EOPNOTSUPP

/** Fail a pointer-returning verb the rdma-core way. */
static inline void *
uroce_verbs_null(int err)
{
	errno = err;
	return NULL;
}

/* ---- verbs_device.c ---- */

/*
 * One device per configured port, uroce0 ... uroce7. The list returned by
 * ibv_get_device_list() holds one reference on each device; an open
 * context will hold another, so that a device outlives the list it came
 * from (man ibv_get_device_list).
 */
struct uroce_verbs_device {
	struct ibv_device ibdev;	/**< what the application sees */
	unsigned int port;		/**< configuration port index */
	__be64 node_guid;		/**< network order */
	unsigned int refcnt;		/**< atomic */
};

static inline struct uroce_verbs_device *
uroce_verbs_device_of(struct ibv_device *ibdev)
{
	return (struct uroce_verbs_device *)((char *)ibdev -
		offsetof(struct uroce_verbs_device, ibdev));
}

void uroce_verbs_device_get(struct uroce_verbs_device *dev);
void uroce_verbs_device_put(struct uroce_verbs_device *dev);

/* ---- exported, not declared by <infiniband/verbs.h> ---- */

/* IBVERBS_1.0/1.1 (rdma-core's driver.h and marshall.h) */
const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file,
			char *buf, size_t size);
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

struct ib_uverbs_ah_attr;
struct ib_uverbs_qp_attr;
struct ib_user_path_rec;
struct ibv_sa_path_rec;
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
				struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
				struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
				 struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
			       struct ibv_sa_path_rec *src);

/* IBVERBS_PRIVATE_34: rdma-core's provider interface (verbs_private.c).
 * Our own minimal prototypes: no provider ever gets a device from us. */
struct verbs_device_ops;
struct verbs_context_ops;
struct verbs_sysfs_dev;
struct ibv_command_buffer;

enum ibv_gid_type_sysfs {
	IBV_GID_TYPE_SYSFS_IB_ROCE_V1,	/* the sysfs "IB/RoCE v1" */
	IBV_GID_TYPE_SYSFS_ROCE_V2,	/* the sysfs "RoCE v2" */
};
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, enum ibv_gid_type_sysfs *type);

extern bool verbs_allow_disassociate_destroy;
void verbs_register_driver_34(const struct verbs_device_ops *ops);
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);
struct ibv_context *verbs_open_device(struct ibv_device *device,
				      void *private_data);
void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...);
int execute_ioctl(struct ibv_context *context,
		  struct ibv_command_buffer *cmd);
unsigned int __ioctl_final_num_attrs(unsigned int num_attrs,
				     struct ibv_command_buffer *link);
int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...);

#endif /* UROCE_VERBS_PRIV_H */
