/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_RDMACM_PRIV_H
#define UROCE_RDMACM_PRIV_H

/*
 * Internals of uroce's librdmacm.so.1: the rdma_cm API (rdma-core 44's
 * <rdma/rdma_cma.h>) over the uroce devices of our libibverbs.so.1 and the
 * CM agent (agent/cm_agent.h), which runs the IBTA CM over each device's
 * QP1. What the kernel's rdma_ucm and rdma_cm do for rdma-core's library
 * happens here, in the process: ports, addresses, routes, events.
 *
 * Which symbol is exported at which version is decided by librdmacm.map;
 * every other global of this library stays local. Functions of this
 * library return negative errno; the API functions convert (cma_err()).
 */

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_log.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "agent/cm_agent.h"
#include "uroce_cm.h"

extern int uroce_rdmacm_logtype;
#define CMA_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, uroce_rdmacm_logtype, \
		"rdmacm: " fmt "\n", ##__VA_ARGS__)

#define CMA_MAX_DEVS		8
#define CMA_MAX_GIDS		16
#define CMA_MAX_IP6		8

/* The API's error convention: -1 with errno set (0 stays 0). */
static inline int
cma_err(int ret)
{
	if (ret >= 0)
		return ret;
	errno = -ret;
	return -1;
}

/* ---- cma_dev.c: the uroce devices ---- */

struct cma_dev {
	struct ibv_context *verbs;
	struct ibv_pd *pd;		/* for QPs created with no PD */
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	uint64_t guid;			/* node GUID, host order */
	int gid_cnt;
	union ibv_gid gid[CMA_MAX_GIDS];
	/* The port's addresses and their prefixes ([port] ip of the
	 * configuration): the subnets resolve_addr matches. */
	bool has_ip4;
	uint32_t ip4;			/* network order */
	uint8_t ip4_prefix;
	int ip6_cnt;
	uint8_t ip6[CMA_MAX_IP6][16];
	uint8_t ip6_prefix[CMA_MAX_IP6];
	/* [port] cm_response_timeout and cm_max_retries: the agent's
	 * timing (rdma_cm's defaults without a configuration). */
	struct uroce_cm_timing timing;
	/* Local ACK timeout of the RC QPs of ids that set none ([port]
	 * cm_ack_timeout, else CMA_DEFAULT_ACK_TIMEOUT). */
	uint8_t ack_timeout;
	pthread_mutex_t agent_lock;
	struct cm_agent *agent;		/* made on first use */
};

/* The devices, opened once: 0 and *n, or negative errno. */
int cma_devs(struct cma_dev **devs, int *n);
/* The device of a verbs context of ours, or NULL. */
struct cma_dev *cma_dev_of(struct ibv_context *verbs);
/* The device that owns address @sa (a GID of it equals it), or NULL. */
struct cma_dev *cma_dev_by_addr(const struct sockaddr *sa, int *gid_index);
/* The device whose subnet holds @sa; local GID index of @sa's family. */
struct cma_dev *cma_dev_by_subnet(const struct sockaddr *sa, int *gid_index);
/* The GID of an address: IPv4-mapped or the IPv6 address. */
void cma_addr_gid(const struct sockaddr *sa, union ibv_gid *gid);
/* The device's agent, made on first use. */
int cma_dev_agent(struct cma_dev *d, struct cm_agent **out);

/* ---- cma_channel.c: event channels and events ---- */

struct cma_id;

/* The most a listener's backlog may be, and what rdma_listen() gives a
 * backlog of 0 or less or above it: the kernel's default of the sysctl
 * net.rdma_ucm.max_backlog. */
#define CMA_MAX_BACKLOG	1024

struct cma_event {
	struct rdma_cm_event ev;	/* what the application gets */
	TAILQ_ENTRY(cma_event) link;
	struct cma_id *id;		/* counted in id->events */
	struct cma_id *listen;		/* CONNECT_REQUEST: the listener */
	uint8_t priv[UROCE_CM_REP_PRIV_LEN + UROCE_CM_DREQ_PRIV_LEN];
};

struct cma_channel {
	struct rdma_event_channel ch;	/* fd: a pipe, one byte an event */
	int own_fd;			/* the library's, non-blocking */
	bool take_back;			/* own_fd reads the pipe */
	pthread_mutex_t lock;
	TAILQ_HEAD(, cma_event) queue;	/* not yet read */
	unsigned int owed;		/* queued with no byte: pipe full */
	unsigned int stale;		/* bytes of events removed unread */
};

static inline struct cma_channel *
cma_channel_of(struct rdma_event_channel *ch)
{
	return (struct cma_channel *)ch;
}

struct cma_channel *cma_channel_new(void);
void cma_channel_free(struct cma_channel *c);
/* An event of @id, not queued yet; for a CONNECT_REQUEST @listen is its
 * listener. @priv, @len is copied as param.conn's or param.ud's private
 * data. NULL: no memory. */
struct cma_event *cma_event_new(struct cma_id *id, struct cma_id *listen,
				enum rdma_cm_event_type type, int status,
				const void *priv, size_t len);
/* Queue a complete event on its channel (taking a reference on its id). */
void cma_event_queue(struct cma_event *e);
/* Both at once, for an event with no more parameters. */
int cma_post(struct cma_id *id, struct cma_id *listen,
	     enum rdma_cm_event_type type, int status, const void *priv,
	     size_t len);
/* A listener's backlog: take a place for a CONNECT_REQUEST about to be
 * queued (false: full), give it back when the event is read or was not
 * queued after all. */
bool cma_backlog_take(struct cma_id *l);
void cma_backlog_give(struct cma_id *l);
/* Move the unread events of @id from its channel to @to. */
void cma_channel_move(struct cma_id *id, struct cma_channel *to);
/* Drop the unread events of @id (destroy); the new ids of requests a
 * listener never read are destroyed. */
void cma_channel_drop(struct cma_id *id);

/* ---- cma_id.c: ids, ports ---- */

enum cma_state {
	CMA_IDLE,
	CMA_ADDR_BOUND,
	CMA_ADDR_QUERY,
	CMA_ADDR_RESOLVED,
	CMA_ROUTE_QUERY,
	CMA_ROUTE_RESOLVED,
	CMA_CONNECT,		/* REQ sent, or a request being answered */
	CMA_CONNECTED,
	CMA_DISCONNECT,
	CMA_LISTEN,
	CMA_STATE_COUNT
};

/* What the CM exchange fixed for the QP (REQ and REP). */
struct cma_qp_params {
	bool known;			/* the peer's REQ or REP is in */
	/* A REQ's or REP's Starting PSN (IBTA vol 1 ch. 12) is the first
	 * PSN its sender's QP receives and its recipient's QP sends, as
	 * Linux's cm.c sets the QPs: ours is our RTR's rq_psn, the peer's
	 * our RTS's sq_psn. */
	uint32_t local_psn;		/* our receive PSN (our REQ/REP's) */
	uint32_t remote_psn;		/* our send PSN (the peer's REQ/REP's) */
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	uint8_t resp_res;		/* our QP's max_dest_rd_atomic */
	uint8_t init_depth;		/* our QP's max_rd_atomic */
	uint8_t mtu;			/* enum ibv_mtu */
	uint8_t retry;
	uint8_t rnr_retry;
	uint8_t srq;
	uint8_t flow_control;
	/* Passive side: the REQ's primary Local ACK Timeout (0: none). As
	 * Linux's CM derives the passive QP's from it (packet life time =
	 * it - 1, timeout = life + 1), both QPs of a connection get the one
	 * the active side chose. */
	uint8_t req_ack_timeout;
};

struct cma_id {
	struct rdma_cm_id id;		/* first: the application's pointer */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum cma_state state;
	struct cma_dev *dev;		/* bound device, NULL before */
	int gid_index;			/* our GID of the id's address */
	bool sync;			/* made with no channel: own channel */
	bool destroying;
	bool bound_any;			/* wildcard address */
	uint16_t port;			/* host order; 0 until bound */
	int refs;			/* events read but not acked, workers */
	/* options */
	bool tos_set, reuseaddr, afonly, afonly_set, timeout_set;
	uint8_t tos;
	uint8_t ack_timeout;
	/* listening: at most @backlog CONNECT_REQUESTs queued and not yet
	 * read (req_queued, atomic), as the kernel's rdma_ucm counts */
	int backlog;
	int req_queued;
	LIST_ENTRY(cma_id) port_link;	/* in the bound ids of the process */
	/* connection */
	struct cm_conn *conn;
	struct cma_qp_params qp;
	struct ibv_sa_path_rec path;
	struct cma_id *listen;		/* a request's listener */
	bool connect_error;
	/* DISCONNECTED was posted (the peer's DREQ): one per connection, as
	 * the kernel's rdma_cm gives it once. */
	bool disc_posted;
	struct ibv_ece local_ece, remote_ece;
	/* rdma_create_ep: what rdma_get_request creates on a new id */
	struct ibv_qp_init_attr *ep_qp_attr;
	/* our CQs and channels (rdma_create_qp with none given) */
	bool own_cqs;
};

static inline struct cma_id *
cma_id_of(struct rdma_cm_id *id)
{
	return (struct cma_id *)id;
}

const char *cma_state_str(enum cma_state s);
int cma_id_new(struct cma_channel *ch, void *context, enum rdma_port_space ps,
	       enum ibv_qp_type qpt, struct cma_id **out);
void cma_id_get(struct cma_id *id);
void cma_id_put(struct cma_id *id);
/* Bind @id to @sa (port 0: an ephemeral one) on device @d (NULL: find
 * it from the address; a wildcard binds no device). */
int cma_bind(struct cma_id *id, const struct sockaddr *sa);
/* The bound id that listens on (@ps, @port) for a request to @dst arriving
 * on @d, with a reference, or NULL. */
struct cma_id *cma_listener_find(struct cma_dev *d, uint16_t ps,
				 uint16_t port, const uint8_t dst[16],
				 int ip_version);
/* Synchronous ids: wait for the next event, as librdmacm's ucma_complete:
 * the previous one is acked, the new one kept in id->event. */
int cma_sync_wait(struct cma_id *id);
/* Free an id no one holds any more (a request's that was never read). */
void cma_id_destroy_now(struct cma_id *id);
uint16_t cma_addr_port(const struct sockaddr *sa);
void cma_addr_set_port(struct sockaddr *sa, uint16_t port);
socklen_t cma_addr_len(const struct sockaddr *sa);
bool cma_addr_any(const struct sockaddr *sa);

/* ---- cma_addr.c: addresses and routes ---- */
int cma_resolve_addr(struct cma_id *id, const struct sockaddr *src,
		     const struct sockaddr *dst, int timeout_ms);
int cma_resolve_route(struct cma_id *id, int timeout_ms);

/* ---- cma_qp.c: QP attributes and transitions ---- */
/* The kernel's default ACK timeout of a RoCE path (4.096 us x 2^n): the
 * packet life time + 1 (cm_ack_timeout with a smaller CA ACK delay). */
#define CMA_DEFAULT_ACK_TIMEOUT	(UROCE_CM_DEFAULT_PACKET_LIFE + 1)
#define CMA_DEFAULT_RETRY	7
#define CMA_DEFAULT_RNR_RETRY	7

/* The local ACK timeout of the id's QP: its RDMA_OPTION_ID_ACK_TIMEOUT,
 * else on the passive side the REQ's, else its device's. */
static inline uint8_t
cma_ack_timeout(const struct cma_id *id)
{
	if (id->timeout_set)
		return id->ack_timeout;
	if (id->qp.req_ack_timeout != 0)
		return id->qp.req_ack_timeout;
	return id->dev != NULL ? id->dev->ack_timeout : CMA_DEFAULT_ACK_TIMEOUT;
}
int cma_init_qp_attr(struct cma_id *id, struct ibv_qp_attr *a, int *mask);
/* The most states cma_modify_qp_seq() takes. */
#define CMA_QP_SEQ_MAX	3
int cma_modify_qp_seq(struct cma_id *id, const enum ibv_qp_state *states,
		      unsigned int n);
int cma_qp_to_err(struct cma_id *id);
/* The id's QP number and whether it uses an SRQ (QP or conn param). */
uint32_t cma_id_qpn(struct cma_id *id, const struct rdma_conn_param *p);

/* ---- cma_conn.c: the connection over the agent ---- */
int cma_listen_start(struct cma_id *id);
void cma_listen_stop(struct cma_id *id);
int cma_connect(struct cma_id *id, const struct rdma_conn_param *p);
int cma_accept(struct cma_id *id, const struct rdma_conn_param *p);
int cma_reject(struct cma_id *id, const void *priv, uint8_t len,
	       uint16_t reason);
int cma_disconnect(struct cma_id *id);
int cma_establish(struct cma_id *id);
int cma_notify(struct cma_id *id, enum ibv_event_type ev);
void cma_conn_drop(struct cma_id *id);

#endif /* UROCE_RDMACM_PRIV_H */
