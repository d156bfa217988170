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
#include <pthread.h>
#include <sys/queue.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

#include "uroce_ring_mem.h"

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
/** verbs_async.c: the device of the open context on that cmd_fd file. */
struct uroce_verbs_device *uroce_verbs_ctx_file_device(dev_t fdev, ino_t fino);
/** verbs_context.c: a context on dev; cmd_fd -1: a file of its own, else
 *  that one, which the context then owns. NULL with errno. */
struct ibv_context *uroce_verbs_ctx_open(struct ibv_device *device,
					 int cmd_fd);
void uroce_verbs_device_put(struct uroce_verbs_device *dev);

/* ---- the objects (verbs_context.c, verbs_pd.c ... verbs_qp.c) ----
 *
 * Each verbs object is the public struct the application sees, first (so
 * that the two pointers are one), followed by the engine object behind it
 * (lib/engine/include/uroce_engine.h). Inside lib/ errors are negative errno; each
 * verb converts them to its own convention (man page) at its return.
 */
struct uroce_dev;
struct uroce_pd;
struct uroce_cq;
struct uroce_mr;
struct uroce_ah;
struct uroce_qp;

/** Async events a context keeps until ibv_get_async_event() reads them. */
#define UROCE_VERBS_ASYNC_QUEUE	256

struct uroce_vctx {
	struct verbs_context vctx;	/**< vctx.context is what apps get */
	struct uroce_verbs_device *vdev;	/**< reference held */
	struct uroce_dev *dev;
	pthread_mutex_t ev_lock;	/**< the async queue */
	unsigned int ev_head, ev_cnt;
	unsigned int ev_skip;		/**< eventfd counts of dropped events */
	uint64_t ev_lost;		/**< events dropped: queue full */
	struct ibv_async_event ev_q[UROCE_VERBS_ASYNC_QUEUE];
	TAILQ_ENTRY(uroce_vctx) link;	/**< the open contexts (port events) */
	/* cmd_fd's file: contexts on one file share their PDs and MRs
	 * (ibv_import_device(3), verbs_import.c). */
	dev_t file_dev;
	ino_t file_ino;
};

struct uroce_vparent;
struct uroce_vpd {
	struct ibv_pd pd;
	struct uroce_pd *upd;		/**< a parent domain's: its PD's */
	struct uroce_vparent *parent;	/**< NULL: a plain PD */
	uint32_t parents;		/**< parent domains on it (ctx mutex) */
	bool imported;			/**< by ibv_import_pd() */
};

/*
 * The ring allocator of a QP, CQ or SRQ made on a parent domain
 * (verbs_pd.c): the engine calls the application's alloc through it at
 * create, and its frees (on an engine lcore, at a CQ resize or a QP's
 * destroy) are queued here and handed to the application's free on its
 * own thread by uroce_verbs_bufs_flush().
 */
#define UROCE_VBUFS_MAX	4
struct uroce_vbufs {
	struct uroce_vparent *parent;	/**< NULL: the default allocator */
	struct uroce_ring_alloc alloc;
	unsigned int n;			/**< frees queued */
	struct {
		void *ptr;
		uint64_t type;
	} freed[UROCE_VBUFS_MAX];
};

/** b for an object made on pd: the allocator to give the engine (NULL:
 *  the default one); on a parent domain, a reference on it taken. */
const struct uroce_ring_alloc *uroce_verbs_bufs_init(struct uroce_vbufs *b,
						     struct ibv_pd *pd);
/** Hand the queued frees to the application (its thread). */
void uroce_verbs_bufs_flush(struct uroce_vbufs *b);
/** The object is gone: flush, and drop the parent domain's reference. */
void uroce_verbs_bufs_fini(struct uroce_vbufs *b);
/** Whether pd is a parent domain. */
bool uroce_verbs_pd_is_parent(const struct ibv_pd *pd);
struct ibv_td *uroce_verbs_alloc_td(struct ibv_context *context,
				    struct ibv_td_init_attr *init_attr);
int uroce_verbs_dealloc_td(struct ibv_td *td);
struct ibv_pd *uroce_verbs_alloc_parent_domain(struct ibv_context *context,
					       struct ibv_parent_domain_init_attr *attr);

struct uroce_vmr {
	struct ibv_mr mr;
	struct uroce_mr *umr;
	bool imported;			/**< by ibv_import_mr() */
};

/* ---- verbs_import.c: handles of PDs and MRs for ibv_import_pd/_mr ---- */
enum uroce_verbs_handle_kind {
	UROCE_VH_PD = 1,
	UROCE_VH_MR = 2,
};
/** A handle for engine object obj of a context (pd->handle, mr->handle);
 *  0 when out of memory (the object is then not importable). */
uint32_t uroce_verbs_handle_add(struct ibv_context *ctx,
				enum uroce_verbs_handle_kind kind, void *obj);
/** The object is gone: its handle finds nothing. 0: no-op. */
void uroce_verbs_handle_del(uint32_t handle);

struct uroce_vcq;
TAILQ_HEAD(uroce_vcq_list, uroce_vcq);

/* A completion channel: an eventfd in semaphore mode counts the events
 * queued (one read, one event); the queue says which CQ each is for. */
struct uroce_vchannel {
	struct ibv_comp_channel ch;
	pthread_mutex_t lock;
	struct uroce_vcq_list pending;	/**< CQs with events to read */
	unsigned int skip;		/**< eventfd counts of dropped events */
};

/* A CQ: ibv_cq, or ibv_cq_ex when made by ibv_create_cq_ex() (whose
 * first members are an ibv_cq's: ibv_cq_ex_to_cq() is a cast). */
struct uroce_vcq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cqx;
	};
	struct uroce_cq *ucq;
	struct uroce_vbufs bufs;	/**< made on a parent domain */
	/* ibv_start_poll() ... ibv_end_poll(): the current completion and
	 * its TSC (a CQ with completion timestamps). */
	struct ibv_wc cur;
	uint64_t cur_tsc;
	/* Channel side, under the channel's lock. */
	uint32_t ev_pending;		/**< queued, not read yet */
	bool ev_queued;			/**< on the channel's pending list */
	TAILQ_ENTRY(uroce_vcq) ev_link;
	/* Reported to the application, under cq.mutex: ibv_destroy_cq()
	 * waits until every one is acknowledged (ibv_ack_cq_events(3)). */
	uint32_t comp_reported;
	uint32_t async_reported;
};

/* A QP: ibv_qp, or ibv_qp_ex when created with send_ops_flags
 * (ibv_qp_to_qp_ex() then returns the ex view). */
struct uroce_vwr;			/* verbs_qp_ex.c's batch */
struct uroce_vqp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qpx;
	};
	struct uroce_qp *uqp;
	struct uroce_vbufs bufs;	/**< made on a parent domain */
	bool is_ex;			/**< created with send_ops_flags */
	uint32_t async_reported;	/**< under qp.mutex, as for CQs */
	struct uroce_vwr *wr;		/**< the ibv_wr_* batch, is_ex only */
	/* XRC_RECV (verbs_xrcd.c): the creating handle, and on it the
	 * handles open on the QP (ibv_open_qp). */
	struct uroce_vqp *xrc_base;
	unsigned int xrc_handles;
};

/* An ibv_open_xrcd() handle on a domain (verbs_xrcd.c). */
struct uroce_vxrcd_dom;
struct uroce_vxrcd {
	struct ibv_xrcd xrcd;
	struct uroce_vxrcd_dom *dom;
};

struct uroce_vah {
	struct ibv_ah ah;
	struct uroce_ah *uah;
};

/* An SRQ (verbs_srq.c). */
struct uroce_srq;
struct uroce_vsrq {
	struct ibv_srq srq;
	struct uroce_srq *usrq;
	struct uroce_vbufs bufs;	/**< made on a parent domain */
	enum ibv_srq_type type;
	uint32_t async_reported;	/**< under srq.mutex, as for CQs */
};

static inline struct uroce_vctx *
uroce_vctx_of(struct ibv_context *ctx)
{
	return (struct uroce_vctx *)((char *)ctx -
		offsetof(struct uroce_vctx, vctx.context));
}

/* ---- verbs_engine.c ---- */

/**
 * The engine for an ibv_open_device(): started at the first call
 * (configuration from UROCE_CONFIG), then shared by every context of the
 * process. @return 0, or a positive errno with one line on stderr.
 */
int uroce_verbs_engine_get(void);

/* ---- verbs_async.c ---- */

/** Add one event to an eventfd in semaphore mode. */
void uroce_verbs_efd_signal(int fd);
/** Take one: 0, or -1 with errno (EAGAIN on an O_NONBLOCK fd). */
int uroce_verbs_efd_wait(int fd);

/** Set up / tear down a context's async queue and its eventfd. */
int uroce_verbs_async_init(struct uroce_vctx *c);
void uroce_verbs_async_fini(struct uroce_vctx *c);
/** Queue an event (any thread, engine lcores included). */
void uroce_verbs_async_post(struct uroce_vctx *c,
			    const struct ibv_async_event *ev);
/** Drop the queued events of a destroyed object. */
void uroce_verbs_async_forget(struct uroce_vctx *c, const void *obj);
/** Engine callback: an affiliated event of a QP, an SRQ or (CQ_ERR) a
 *  CQ. */
void uroce_verbs_async_event(void *arg, enum ibv_event_type ev, void *obj);

/* ---- verbs_cq.c ---- */

/** ibv_create_cq()'s checks and CQ; NULL with errno. */
struct uroce_vcq *uroce_verbs_cq_new(struct ibv_context *context, int cqe,
				     void *cq_context,
				     struct ibv_comp_channel *channel,
				     int comp_vector, unsigned int flags,
				     struct ibv_pd *pd);
/** ctx->create_cq_ex (verbs_cq_ex.c). */
struct ibv_cq_ex *uroce_verbs_create_cq_ex(struct ibv_context *context,
					   struct ibv_cq_init_attr_ex *attr);
/** Engine callback: signal the CQ's completion channel. */
void uroce_verbs_cq_event(void *arg, struct uroce_cq *cq);
int uroce_verbs_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int uroce_verbs_modify_qp_seq(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			      const int *mask, unsigned int n,
			      unsigned int *done);
int uroce_verbs_req_notify_cq(struct ibv_cq *cq, int solicited_only);

/* ---- verbs_mw.c ---- */

struct ibv_mw *uroce_verbs_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int uroce_verbs_dealloc_mw(struct ibv_mw *mw);
int uroce_verbs_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
			struct ibv_mw_bind *mw_bind);

/* ---- verbs_qp.c, verbs_qp_ex.c ---- */

int uroce_verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			  struct ibv_send_wr **bad_wr);
int uroce_verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr);
struct ibv_qp *uroce_verbs_create_qp_ex(struct ibv_context *context,
					struct ibv_qp_init_attr_ex *attr);
struct ibv_qp *uroce_verbs_create_qp_init(struct ibv_context *context,
					  struct ibv_qp_init_attr_ex *attr,
					  struct ibv_qp_attr *first,
					  int first_mask);

/** Fill a new handle's struct ibv_qp (number, context, state RESET). */
void uroce_verbs_qp_fill(struct uroce_vqp *q, struct ibv_context *context,
			 struct ibv_pd *pd, void *qp_context);
/** ibv_destroy_qp()'s work but the free: the engine QP, its events.
 *  0 or an errno (nothing changed). */
int uroce_verbs_qp_destroy(struct uroce_vqp *q);
void uroce_verbs_qp_free(struct uroce_vqp *q);

/* ---- verbs_xrcd.c ---- */
struct uroce_xrcd;
struct ibv_xrcd *uroce_verbs_open_xrcd(struct ibv_context *context,
				       struct ibv_xrcd_init_attr *attr);
int uroce_verbs_close_xrcd(struct ibv_xrcd *xrcd);
struct uroce_xrcd *uroce_verbs_xrcd_engine(struct ibv_xrcd *xrcd);
struct ibv_qp *uroce_verbs_open_qp(struct ibv_context *context,
				   struct ibv_qp_open_attr *attr);
/** ibv_destroy_qp() of an XRC_RECV handle. */
int uroce_verbs_xrc_qp_destroy(struct uroce_vqp *q);

/* ---- verbs_srq.c ---- */

struct ibv_srq *uroce_verbs_create_srq_ex(struct ibv_context *context,
					  struct ibv_srq_init_attr_ex *attr);
int uroce_verbs_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			      struct ibv_recv_wr **bad_wr);
int uroce_verbs_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);

/* ---- verbs_tm.c ---- */
struct uroce_srq_init;
int uroce_verbs_srq_init_tm(struct ibv_context *context,
			    const struct ibv_srq_init_attr_ex *a,
			    struct uroce_srq_init *init);
int uroce_verbs_post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *wr,
			     struct ibv_ops_wr **bad_wr);
void uroce_verbs_tm_caps(struct ibv_tm_caps *caps);

/* ---- verbs_mr.c ---- */
void uroce_verbs_odp_caps(struct ibv_device_attr_ex *a);
int uroce_verbs_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			  uint32_t flags, struct ibv_sge *sg_list,
			  uint32_t num_sge);

/* ---- verbs_flow.c ---- */
struct ibv_flow *uroce_verbs_create_flow(struct ibv_qp *qp,
					 struct ibv_flow_attr *attr);
int uroce_verbs_destroy_flow(struct ibv_flow *flow);

/* ---- verbs_wq.c ---- */
struct ibv_wq *uroce_verbs_create_wq(struct ibv_context *context,
				     struct ibv_wq_init_attr *attr);
int uroce_verbs_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr);
int uroce_verbs_destroy_wq(struct ibv_wq *wq);
struct ibv_rwq_ind_table *
uroce_verbs_create_rwq_ind_table(struct ibv_context *context,
				 struct ibv_rwq_ind_table_init_attr *attr);
int uroce_verbs_destroy_rwq_ind_table(struct ibv_rwq_ind_table *t);
struct uroce_ind_tbl;
struct uroce_ind_tbl *uroce_verbs_ind_tbl_engine(struct ibv_rwq_ind_table *t);

/** Set up the ibv_wr_* API of a QP created with send_ops_flags. */
int uroce_verbs_qpx_init(struct uroce_vqp *q, uint64_t send_ops_flags);
void uroce_verbs_qpx_fini(struct uroce_vqp *q);
/** Send ops the ibv_wr_* API offers (IBV_QP_EX_WITH_*). */
#define UROCE_VERBS_QPX_OPS						\
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |	\
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |		\
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |	\
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_BIND_MW |	\
	 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV)

/* ---- verbs_pace.c ---- */

int uroce_verbs_modify_qp_rate_limit(struct ibv_qp *qp,
				     struct ibv_qp_rate_limit_attr *attr);

/* ---- verbs_context.c ---- */

int uroce_verbs_query_device_ex(struct ibv_context *context,
				const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr,
				size_t attr_size);
int uroce_verbs_query_port(struct ibv_context *context, uint8_t port_num,
			   struct ibv_port_attr *attr, size_t attr_len);
int uroce_verbs_query_rt_values(struct ibv_context *context,
				struct ibv_values_ex *values);
/** The completion clock (the TSC, rte_rdtsc()) in kHz: hca_core_clock. */
uint64_t uroce_verbs_clock_khz(void);
/** A completion clock value as CLOCK_REALTIME ns. */
uint64_t uroce_verbs_clock_to_ns(uint64_t tsc);

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
