/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_VERBS_CM_H
#define UROCE_VERBS_CM_H

/*
 * The private interface of libibverbs.so.1 to uroce's librdmacm.so.1: a
 * device's QP1 (the GSI, IBTA vol. 1 ch. 13.5) reached through a verbs
 * context, and rdma_cm's QP changes in one engine call. librdmacm.so.1 is
 * a shared library of its own that links libibverbs.so.1, which holds the
 * whole stack; this table is the one door
 * between them. Exported as uroce_verbs_cm_glue in the version node
 * UROCE_PRIVATE_1 (libibverbs.map), besides rdma-core's own nodes; a
 * caller that may run on rdma-core's libibverbs finds it with
 * dlvsym(RTLD_DEFAULT, UROCE_VERBS_CM_GLUE_SYM, UROCE_VERBS_CM_GLUE_NODE)
 * and takes its absence as "not a uroce device".
 *
 * The GSI of a device has one consumer in the process: gsi_open() on two
 * contexts of the same device gives the same handle, counted; gsi_close()
 * drops one count, the last closes it. MADs the GSI takes and drops are
 * described in lib/engine/include/uroce_gsi.h (what is checked, which
 * counter moves). Handle functions may be called from any application
 * thread; gsi_close() not at the same time as another call on the handle.
 * Negative errno returns.
 */

#include <dlfcn.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UROCE_VERBS_CM_GLUE_SYM		"uroce_verbs_cm_glue"
#define UROCE_VERBS_CM_GLUE_NODE	"UROCE_PRIVATE_1"
/** The table's versions: V2 adds modify_qp_seq, V3 create_qp_init (an
 *  older caller gets the same table and does not read past its last
 *  member). */
#define UROCE_VERBS_CM_GLUE_V1		1
#define UROCE_VERBS_CM_GLUE_V2		2
#define UROCE_VERBS_CM_GLUE_V3		3

/** A MAD's size (IBTA ch. 13.4). */
#define UROCE_VERBS_MAD_SIZE		256
/** uroce_verbs_mad_rx.gid_index when the destination is none of ours. */
#define UROCE_VERBS_GID_NONE		0xff

struct uroce_verbs_gsi;

/** A received MAD and where it came from (the UD frame to QP1). */
struct uroce_verbs_mad_rx {
	uint8_t mad[UROCE_VERBS_MAD_SIZE];
	union ibv_gid sgid;	/**< the sender's IP as a GID (IPv4-mapped) */
	union ibv_gid dgid;	/**< the frame's destination IP as a GID */
	uint32_t src_qp;	/**< DETH source QP */
	uint32_t flow_label;	/**< IPv6 flow label (0 over IPv4) */
	uint16_t pkey;		/**< BTH P_Key */
	uint16_t udp_sport;	/**< UDP source port */
	uint8_t port_num;	/**< 1 */
	uint8_t gid_index;	/**< dgid's index in the port's GID table */
	uint8_t tclass;		/**< IP TOS / traffic class */
	uint8_t hop_limit;	/**< TTL / hop limit */
};

/** A MAD to a remote GSI (QP 1, Q_Key 0x80010000, P_Key 0xFFFF). */
struct uroce_verbs_mad_tx {
	uint8_t mad[UROCE_VERBS_MAD_SIZE];
	union ibv_gid dgid;	/**< destination (IPv4-mapped or IPv6) */
	uint8_t sgid_index;	/**< source GID, of the same family */
	uint8_t tclass;		/**< traffic class */
	uint8_t hop_limit;	/**< 0: 64 */
	uint32_t flow_label;	/**< 20 bits; 0: none */
};

/** Who a context's device is. */
struct uroce_verbs_cm_dev {
	unsigned int index;	/**< the device's index: uroce<index> */
	uint64_t node_guid;	/**< host order (the CM's Local CA GUID) */
	char name[IBV_SYSFS_NAME_MAX];
};

struct uroce_verbs_cm_glue {
	int version;		/**< UROCE_VERBS_CM_GLUE_V1 */
	/** The device of @ctx: 0, or -ENODEV when @ctx is not a uroce
	 *  context, -EINVAL (NULL). */
	int (*dev)(struct ibv_context *ctx, struct uroce_verbs_cm_dev *out);
	/** Open (or share) the GSI of @ctx's device: 0; -ENODEV, -EBUSY
	 *  (held by a consumer outside this table), -ENOMEM. */
	int (*gsi_open)(struct ibv_context *ctx, struct uroce_verbs_gsi **out);
	void (*gsi_close)(struct uroce_verbs_gsi *g);
	/** An eventfd, readable when MADs wait (uroce_gsi_fd()). */
	int (*gsi_fd)(const struct uroce_verbs_gsi *g);
	/** Up to @n MADs, oldest first: the number taken (0: none). */
	int (*gsi_recv)(struct uroce_verbs_gsi *g, struct uroce_verbs_mad_rx *out,
			unsigned int n);
	/** Send one MAD, the next hop resolved first (up to 2 s): 0 once it
	 *  is queued for the port (engine lcore 0 sends it without the
	 *  caller waiting; in order); -EINVAL, -EHOSTUNREACH, -ENOMEM, -ENOSPC. */
	int (*gsi_send)(struct uroce_verbs_gsi *g,
			const struct uroce_verbs_mad_tx *tx);
	/** V2: ibv_modify_qp(@qp, &@attr[i], @mask[i]) for i < @n, in order,
	 *  as one call to the QP's owner lcore instead of @n (rdma_cm's
	 *  INIT, RTR, RTS back to back): each change is in effect, and
	 *  qp->state follows it, when this returns. Stops at the first
	 *  failure: its negative errno, *@done the changes made before it
	 *  (@n on success; none when the arguments are bad: -EINVAL, or
	 *  -ENODEV when @qp is not a uroce QP). */
	int (*modify_qp_seq)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			     const int *mask, unsigned int n,
			     unsigned int *done);
	/** V3: ibv_create_qp_ex(@ctx, @attr), the new QP then moved to INIT
	 *  by ibv_modify_qp(qp, @first, @first_mask) before the engine sees
	 *  it: no round trip to its owner lcore (rdma_create_qp's INIT).
	 *  The QP in INIT (qp->state too), or NULL with errno: as either
	 *  call's, EINVAL when @first is not a change to INIT, ENODEV when
	 *  @ctx is not a uroce context; no QP is left then. */
	struct ibv_qp *(*create_qp_init)(struct ibv_context *ctx,
					 struct ibv_qp_init_attr_ex *attr,
					 struct ibv_qp_attr *first,
					 int first_mask);
};

/**
 * The table of @version, or NULL when this library does not have it.
 */
const struct uroce_verbs_cm_glue *uroce_verbs_cm_glue(int version);

/**
 * For a caller that may run on rdma-core's libibverbs: the table of
 * @version from the libibverbs.so.1 loaded, or NULL when it is not uroce's
 * (no UROCE_VERBS_CM_GLUE_SYM in UROCE_VERBS_CM_GLUE_NODE) or lacks it.
 */
static inline const struct uroce_verbs_cm_glue *
uroce_verbs_cm_glue_find(int version)
{
	typedef const struct uroce_verbs_cm_glue *(*glue_fn)(int);
	glue_fn fn = (glue_fn)dlvsym(RTLD_DEFAULT, UROCE_VERBS_CM_GLUE_SYM,
				     UROCE_VERBS_CM_GLUE_NODE);

	return fn != NULL ? fn(version) : NULL;
}

#ifdef __cplusplus
}
#endif

#endif /* UROCE_VERBS_CM_H */
