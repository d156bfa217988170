/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Contexts: ibv_open_device() / ibv_close_device(), and what a context
 * says about its device and port (query_device(_ex), query_port, the GID
 * and P_Key tables).
 *
 * The context is a real struct verbs_context (abi_compat and sz set), so
 * that the extended verbs, static inlines in <infiniband/verbs.h>, reach
 * us through its ops; those we do not fill are NULL, which the inlines
 * turn into EOPNOTSUPP.
 *
 * Attributes are the engine's own limits (uroce_dev_caps(), the device's
 * QP environment); capability flags name only what works.
 */

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <uroce/uroce_version.h>

#include "uroce_engine.h"
#include "verbs_priv.h"

/* <infiniband/verbs.h> turns ibv_query_port into an inline wrapper. */
#undef ibv_query_port

/*
 * An IEEE OUI with the locally administered bit set (02:75:72, "ur"):
 * the IEEE never assigns such a value, so no tool mistakes us for a real
 * vendor's adapter and takes its vendor-specific paths.
 */
#define UROCE_VENDOR_ID		0x027572
#define UROCE_VENDOR_PART_ID	1
/* IBTA 14.2.5.6 PortInfo: PortPhysicalState 5 = LinkUp, 3 = Disabled. */
#define PHYS_STATE_LINK_UP	5
#define PHYS_STATE_DISABLED	3
/* Local CA ACK delay: 4.096 us * 2^15 = 134 ms, the ACK timeout floor
 * that a software responder can meet under load (rxe reports the same). */
#define UROCE_CA_ACK_DELAY	15

static struct uroce_dev *
ctx_dev(struct ibv_context *ctx)
{
	return uroce_vctx_of(ctx)->dev;
}

/* ------------------------------------------------------------------------
 * Open and close.
 */
static void
ctx_set_ops(struct uroce_vctx *c)
{
	struct ibv_context *ctx = &c->vctx.context;
	struct verbs_context *v = &c->vctx;

	ctx->ops._compat_query_device = ibv_query_device;
	ctx->ops._compat_query_port = ibv_query_port;
	ctx->ops.poll_cq = uroce_verbs_poll_cq;
	ctx->ops.req_notify_cq = uroce_verbs_req_notify_cq;
	ctx->ops.post_send = uroce_verbs_post_send;
	ctx->ops.post_recv = uroce_verbs_post_recv;
	ctx->ops.post_srq_recv = uroce_verbs_post_srq_recv;
	ctx->ops.alloc_mw = uroce_verbs_alloc_mw;
	ctx->ops.dealloc_mw = uroce_verbs_dealloc_mw;
	ctx->ops.bind_mw = uroce_verbs_bind_mw;
	v->query_port = uroce_verbs_query_port;
	v->query_device_ex = uroce_verbs_query_device_ex;
	v->create_qp_ex = uroce_verbs_create_qp_ex;
	v->modify_qp_rate_limit = uroce_verbs_modify_qp_rate_limit;
	v->create_cq_ex = uroce_verbs_create_cq_ex;
	v->ibv_create_flow = uroce_verbs_create_flow;
	v->ibv_destroy_flow = uroce_verbs_destroy_flow;
	v->open_xrcd = uroce_verbs_open_xrcd;
	v->close_xrcd = uroce_verbs_close_xrcd;
	v->open_qp = uroce_verbs_open_qp;
	v->create_srq_ex = uroce_verbs_create_srq_ex;
	v->get_srq_num = uroce_verbs_get_srq_num;
	v->post_srq_ops = uroce_verbs_post_srq_ops;
	v->alloc_td = uroce_verbs_alloc_td;
	v->dealloc_td = uroce_verbs_dealloc_td;
	v->alloc_parent_domain = uroce_verbs_alloc_parent_domain;
	v->query_rt_values = uroce_verbs_query_rt_values;
	v->create_wq = uroce_verbs_create_wq;
	v->modify_wq = uroce_verbs_modify_wq;
	v->destroy_wq = uroce_verbs_destroy_wq;
	v->create_rwq_ind_table = uroce_verbs_create_rwq_ind_table;
	v->destroy_rwq_ind_table = uroce_verbs_destroy_rwq_ind_table;
	v->advise_mr = uroce_verbs_advise_mr;
}

/* cmd_fd: no kernel device behind it, but a real descriptor of the
 * context's own, so that programs that dup(), fstat() or poll() it
 * (rdma-core's tests, to share or import a context) get a valid one. A
 * memfd: its inode names the context's file, which ibv_import_device()
 * finds again through a dup() (verbs_import.c). Closed by
 * ibv_close_device(), close-on-exec as rdma-core opens uverbs. */
static int
ctx_file(struct uroce_vctx *c, int cmd_fd)
{
	int fd = cmd_fd >= 0 ? cmd_fd :
		memfd_create("uroce-context", MFD_CLOEXEC);
	struct stat st;
	int err;

	if (fd < 0)
		return errno;
	if (fstat(fd, &st) != 0) {
		err = errno;
		if (cmd_fd < 0)
			close(fd);
		return err;
	}
	c->vctx.context.cmd_fd = fd;
	c->file_dev = st.st_dev;
	c->file_ino = st.st_ino;
	return 0;
}

struct ibv_context *
uroce_verbs_ctx_open(struct ibv_device *device, int cmd_fd)
{
	struct uroce_verbs_device *vdev;
	struct uroce_vctx *c;
	struct uroce_dev *dev;
	int ret;

	if (device == NULL)
		return uroce_verbs_null(EINVAL);
	vdev = uroce_verbs_device_of(device);
	ret = uroce_verbs_engine_get();
	if (ret != 0)
		return uroce_verbs_null(ret);
	/* The list may come from a file changed since the engine started. */
	dev = uroce_dev_get(vdev->port);
	if (dev == NULL || strcmp(uroce_dev_name(dev), device->name) != 0)
		return uroce_verbs_null(ENODEV);
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return uroce_verbs_null(ENOMEM);
	c->dev = dev;
	ret = ctx_file(c, cmd_fd);
	if (ret != 0) {
		free(c);
		return uroce_verbs_null(ret);
	}
	ret = uroce_verbs_async_init(c);
	if (ret != 0) {
		if (cmd_fd < 0)
			close(c->vctx.context.cmd_fd);
		free(c);
		return uroce_verbs_null(ret);
	}
	c->vdev = vdev;
	c->vctx.sz = sizeof(c->vctx);
	c->vctx.context.device = device;
	c->vctx.context.num_comp_vectors = 1;
	c->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	pthread_mutex_init(&c->vctx.context.mutex, NULL);
	ctx_set_ops(c);
	uroce_verbs_device_get(vdev);
	return &c->vctx.context;
}

struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	return uroce_verbs_ctx_open(device, -1);
}

/* "0 on success, -1 on error" (ibv_open_device(3)). Objects still open
 * stay with the engine until the process ends. */
int
ibv_close_device(struct ibv_context *context)
{
	struct uroce_vctx *c;

	if (context == NULL) {
		errno = EINVAL;
		return -1;
	}
	c = uroce_vctx_of(context);
	uroce_verbs_async_fini(c);
	close(context->cmd_fd);
	pthread_mutex_destroy(&context->mutex);
	uroce_verbs_device_put(c->vdev);
	free(c);
	return 0;
}

/* ------------------------------------------------------------------------
 * Device attributes.
 */
static void
device_attr(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	struct uroce_dev *dev = ctx_dev(ctx);
	const struct uroce_qp_env *env = uroce_dev_env(dev);
	struct uroce_dev_caps caps;

	uroce_dev_caps(dev, &caps);
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "uroce %s", UROCE_VERSION);
	a->node_guid = uroce_verbs_device_of(ctx->device)->node_guid;
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = caps.max_mr_size;
	a->page_size_cap = ~(uint64_t)(4096 - 1);
	a->vendor_id = UROCE_VENDOR_ID;
	a->vendor_part_id = UROCE_VENDOR_PART_ID;
	a->max_qp = (int)caps.max_qp;
	a->max_qp_wr = (int)env->max_qp_wr;
	/* Only what works: RNR NAKs from the responder, flow steering for
	 * RAW_PACKET QPs (ibv_create_flow(3) asks for it), SRQ resize
	 * (ibv_modify_srq IBV_SRQ_MAX_WR), XRC (verbs_xrcd.c, lib/transport/
	 * xrc.c), memory windows of type 1 and 2B (verbs_mw.c, lib/transport/
	 * mr.c); no APM. ibv_resize_cq() works but has no flag. */
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN |
		IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_MANAGED_FLOW_STEERING |
		IBV_DEVICE_SRQ_RESIZE | IBV_DEVICE_XRC |
		IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	a->max_sge = (int)env->max_sge;
	a->max_sge_rd = (int)env->max_sge;
	a->max_cq = (int)caps.max_cq;
	a->max_cqe = (int)caps.max_cqe;
	a->max_mr = (int)caps.max_mr;
	a->max_mw = (int)caps.max_mw;
	a->max_pd = (int)caps.max_pd;
	a->max_qp_rd_atom = (int)env->lim.max_qp_rd_atom;
	a->max_qp_init_rd_atom = (int)env->lim.max_qp_init_rd_atom;
	a->max_res_rd_atom = (int)(env->lim.max_qp_rd_atom * caps.max_qp);
	/* Atomics are CPU atomics on the responder's memory: atomic with
	 * respect to every other RDMA atomic on this device (IBTA 10.8.3). */
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_ah = (int)caps.max_ah;
	a->max_srq = (int)caps.max_srq;
	a->max_srq_wr = (int)env->max_srq_wr;
	a->max_srq_sge = (int)env->max_srq_sge;
	a->max_pkeys = env->lim.pkey_tbl_len;
	a->local_ca_ack_delay = UROCE_CA_ACK_DELAY;
	a->phys_port_cnt = 1;
}

/* "0 on success, or the value of errno" (ibv_query_device(3)). */
int
ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr)
{
	if (context == NULL || attr == NULL)
		return EINVAL;
	device_attr(context, attr);
	return 0;
}

/* Receive WQs and RSS QPs (verbs_wq.c, lib/engine/dev_wq.c). */
static void
rss_caps(struct ibv_device_attr_ex *a)
{
	struct uroce_dev_wq_caps c;

	uroce_dev_wq_caps(&c);
	a->rss_caps.supported_qpts = 1u << IBV_QPT_RAW_PACKET;
	a->rss_caps.max_rwq_indirection_tables = c.max_ind_tbl;
	a->rss_caps.max_rwq_indirection_table_size = c.max_ind_tbl_size;
	a->rss_caps.rx_hash_fields_mask = c.rx_hash_fields;
	a->rss_caps.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	a->max_wq_type_rq = c.max_wq;
}

int
uroce_verbs_query_device_ex(struct ibv_context *context,
			    const struct ibv_query_device_ex_input *input,
			    struct ibv_device_attr_ex *attr, size_t attr_size)
{
	const struct uroce_qp_env *env;
	struct ibv_device_attr_ex a;

	if (input != NULL && input->comp_mask != 0)
		return EINVAL;
	/* rdma-core: the caller's struct must reach comp_mask at least. */
	if (attr_size < offsetof(struct ibv_device_attr_ex, comp_mask) +
			sizeof(attr->comp_mask))
		return EINVAL;
	env = uroce_dev_env(ctx_dev(context));
	memset(&a, 0, sizeof(a));
	device_attr(context, &a.orig_attr);
	a.device_cap_flags_ex = a.orig_attr.device_cap_flags;
	/* ibv_modify_qp(IBV_QP_RATE_LIMIT): the per-QP token bucket. */
	a.packet_pacing_caps.qp_rate_limit_min = env->lim.rate_limit_min;
	a.packet_pacing_caps.qp_rate_limit_max = env->lim.rate_limit_max;
	if (env->lim.rate_limit_max != 0)
		a.packet_pacing_caps.supported_qpts = 1u << IBV_QPT_RC |
			1u << IBV_QPT_UC | 1u << IBV_QPT_UD |
			1u << IBV_QPT_RAW_PACKET;
	uroce_verbs_tm_caps(&a.tm_caps);
	/* The completion clock: the TSC, all 64 bits (verbs_cq_ex.c). */
	a.completion_timestamp_mask = UINT64_MAX;
	a.hca_core_clock = uroce_verbs_clock_khz();
	rss_caps(&a);
	uroce_verbs_odp_caps(&a);
	a.phys_port_cnt_ex = 1;
	memcpy(attr, &a, RTE_MIN(attr_size, sizeof(a)));
	if (attr_size > sizeof(a))
		memset((char *)attr + sizeof(a), 0, attr_size - sizeof(a));
	return 0;
}

/* ------------------------------------------------------------------------
 * The completion clock: the TSC of the engine lcores (invariant and
 * shared by every core, what DPDK's timers run on).
 */

uint64_t
uroce_verbs_clock_khz(void)
{
	return rte_get_tsc_hz() / 1000;
}

/* Now on CLOCK_REALTIME, less the ticks since tsc: a value read from
 * another core a tick ahead of this one counts as now. */
uint64_t
uroce_verbs_clock_to_ns(uint64_t tsc)
{
	uint64_t hz = rte_get_tsc_hz(), now = rte_rdtsc(), d;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	d = now > tsc ? now - tsc : 0;
	return (uint64_t)ts.tv_sec * (uint64_t)NS_PER_S + (uint64_t)ts.tv_nsec -
		(d / hz * (uint64_t)NS_PER_S + d % hz * (uint64_t)NS_PER_S / hz);
}

/* ibv_query_rt_values_ex(3): "0 on success or the value of errno". The
 * raw clock is the TSC, in raw_clock.tv_nsec with tv_sec 0 (as mlx5 reports
 * its cycle counter); comp_mask comes back with what was read. */
int
uroce_verbs_query_rt_values(struct ibv_context *context,
			    struct ibv_values_ex *values)
{
	uint32_t want;

	if (context == NULL || values == NULL)
		return EINVAL;
	want = values->comp_mask;
	values->comp_mask = 0;
	if (want & IBV_VALUES_MASK_RAW_CLOCK) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)rte_rdtsc();
		values->comp_mask |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Port attributes.
 */
static void
port_attr(struct ibv_context *ctx, struct ibv_port_attr *a)
{
	struct uroce_dev *dev = ctx_dev(ctx);
	const struct uroce_qp_env *env = uroce_dev_env(dev);
	bool up = uroce_port_link_up(uroce_dev_port(dev));

	memset(a, 0, sizeof(*a));
	a->state = up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	a->phys_state = up ? PHYS_STATE_LINK_UP : PHYS_STATE_DISABLED;
	a->max_mtu = IBV_MTU_4096;
	a->active_mtu = env->lim.active_mtu;
	a->gid_tbl_len = UROCE_GID_TBL_MAX;
	a->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	a->max_msg_sz = UINT32_C(1) << 31;
	a->pkey_tbl_len = env->lim.pkey_tbl_len;
	a->max_vl_num = 1;		/* VL0 only */
	/* The ethdev's speed is not known here: 1X at 25 Gb/s per lane. */
	a->active_width = 1;		/* 1X */
	a->active_speed = 32;		/* EDR, 25.78 Gb/s */
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
}

/* Copy at most len bytes of the attributes, zero what is beyond ours. */
int
uroce_verbs_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *attr, size_t attr_len)
{
	struct ibv_port_attr a;

	if (context == NULL || attr == NULL)
		return EINVAL;
	if (port_num != 1)
		return EINVAL;
	port_attr(context, &a);
	memcpy(attr, &a, RTE_MIN(attr_len, sizeof(a)));
	if (attr_len > sizeof(a))
		memset((char *)attr + sizeof(a), 0, attr_len - sizeof(a));
	return 0;
}

/*
 * The exported symbol, for programs built before the size argument
 * existed: their struct (rdma-core's private _compat_ibv_port_attr) ends
 * with link_layer and a reserved byte where flags is now. Fill it up to
 * link_layer.
 */
int
ibv_query_port(struct ibv_context *context, uint8_t port_num,
	       struct _compat_ibv_port_attr *port_attr)
{
	struct ibv_port_attr a;
	int ret;

	ret = uroce_verbs_query_port(context, port_num, &a, sizeof(a));
	if (ret == 0)
		memcpy(port_attr, &a, offsetof(struct ibv_port_attr, flags));
	return ret;
}

/* ------------------------------------------------------------------------
 * GIDs: index 0 the IPv4-mapped address, then the IPv6 ones, all RoCE v2;
 * the table has UROCE_GID_TBL_MAX entries, the rest empty.
 */

/* 0 and the entry; ENODATA: empty; EINVAL: no such port or index. */
static int
gid_entry(struct ibv_context *ctx, uint32_t port, uint32_t idx,
	  struct ibv_gid_entry *e)
{
	const struct uroce_qp_env *env;

	if (ctx == NULL || port != 1 || idx >= UROCE_GID_TBL_MAX)
		return EINVAL;
	env = uroce_dev_env(ctx_dev(ctx));
	if (idx >= env->gid_cnt)
		return ENODATA;
	memset(e, 0, sizeof(*e));
	memcpy(e->gid.raw, env->gid[idx].raw, sizeof(e->gid.raw));
	e->gid_index = idx;
	e->port_num = port;
	e->gid_type = IBV_GID_TYPE_ROCE_V2;
	e->ndev_ifindex = 0;		/* no kernel netdev */
	return 0;
}

/* "0 on success, -1 on error"; an empty entry reads as zeros, as
 * rdma-core keeps the old sysfs behaviour. */
int
ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
	      union ibv_gid *gid)
{
	struct ibv_gid_entry e;
	int ret;

	if (gid == NULL || index < 0) {
		errno = EINVAL;
		return -1;
	}
	ret = gid_entry(context, port_num, (uint32_t)index, &e);
	if (ret == ENODATA) {
		memset(gid, 0, sizeof(*gid));
		return 0;
	}
	if (ret != 0) {
		errno = ret;
		return -1;
	}
	*gid = e.gid;
	return 0;
}

/* "0 on success or the value of errno"; ENODATA for an empty entry. */
int
_ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
		  uint32_t gid_index, struct ibv_gid_entry *entry,
		  uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;
	int ret;

	if (entry == NULL || flags != 0 || entry_size < sizeof(e))
		return EINVAL;
	ret = gid_entry(context, port_num, gid_index, &e);
	if (ret == 0) {
		memcpy(entry, &e, sizeof(e));
		memset((char *)entry + sizeof(e), 0, entry_size - sizeof(e));
	}
	return ret;
}

/* The valid entries of every port, or a negative errno: -EINVAL when
 * max_entries cannot hold them (ibv_query_gid_table(3)). */
ssize_t
_ibv_query_gid_table(struct ibv_context *context,
		     struct ibv_gid_entry *entries, size_t max_entries,
		     uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;
	size_t n = 0;
	uint32_t i;

	if (context == NULL || entries == NULL || flags != 0 ||
	    entry_size < sizeof(e))
		return -EINVAL;
	for (i = 0; i < UROCE_GID_TBL_MAX; i++) {
		if (gid_entry(context, 1, i, &e) != 0)
			continue;
		if (n == max_entries)
			return -EINVAL;
		memcpy((char *)entries + n * entry_size, &e, sizeof(e));
		memset((char *)entries + n * entry_size + sizeof(e), 0,
		       entry_size - sizeof(e));
		n++;
	}
	return (ssize_t)n;
}

/* The sysfs enum; an empty entry says IB/RoCE v1, as rdma-core does. */
int
ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		   unsigned int index, enum ibv_gid_type_sysfs *type)
{
	struct ibv_gid_entry e;
	int ret;

	if (type == NULL) {
		errno = EINVAL;
		return -1;
	}
	ret = gid_entry(context, port_num, index, &e);
	if (ret == ENODATA) {
		*type = IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
		return 0;
	}
	if (ret != 0) {
		errno = ret;
		return -1;
	}
	*type = IBV_GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}

/* ------------------------------------------------------------------------
 * P_Keys: RoCE has the default partition only (IBTA A17.9.1: 0xFFFF).
 */
#define UROCE_DEFAULT_PKEY	0xffff

int
ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
	       __be16 *pkey)
{
	if (context == NULL || pkey == NULL || port_num != 1 || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htobe16(UROCE_DEFAULT_PKEY);
	return 0;
}

int
ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num,
		   __be16 pkey)
{
	if (context == NULL || port_num != 1) {
		errno = EINVAL;
		return -1;
	}
	if (be16toh(pkey) != UROCE_DEFAULT_PKEY) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}
