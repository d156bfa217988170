/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_CM_AGENT_H
#define UROCE_CM_AGENT_H

/*
 * The CM agent: the IBTA CM (vol. 1 ch. 12) over a device's QP1, inside
 * librdmacm.so.1. One agent a device, shared by every rdma_cm_id of the
 * process on that device; it owns the device's GSI handle and a thread
 * that receives MADs, matches them to connections (comm IDs, service IDs,
 * SIDR request IDs), steps each connection's state machine (uroce_cm_step())
 * and runs its timers: resends, MRA waits, time-wait, half-open expiry.
 *
 * The rdma_cm layer above builds the bodies of the messages it sends (the
 * REQ's QP attributes, path and CMA header, the REP's QPN and PSN, private
 * data) and decides what the rdma_cm events are; the agent fills in what
 * belongs to the CM itself: the MAD header and transaction ID, the comm
 * IDs, the CM timing fields of a REQ (response timeouts, MaxCMRetries),
 * and answers on its own what needs no user (duplicates, unmatched
 * messages, stale connections, backlog overflow).
 *
 * Threads. Every function may be called from any application thread, and
 * from inside a callback. Callbacks run on the agent's thread with no
 * agent lock held, one at a time per agent, in the order the agent saw
 * the inputs. Negative errno returns.
 */

#include <stdint.h>

#include <infiniband/verbs.h>

#include "uroce_cm.h"

struct cm_agent;
struct cm_listener;
struct cm_conn;

/* Where a MAD goes or came from: the RoCEv2 addressing of QP1's UD frame. */
struct cm_peer {
	union ibv_gid gid;		/* the peer (IPv4-mapped or IPv6) */
	union ibv_gid local_gid;	/* ours: the frame's destination or source */
	uint8_t local_gid_index;	/* its index in port 1's GID table */
	uint8_t tclass;			/* traffic class / TOS */
	uint8_t hop_limit;		/* 0 when sending: 64 */
	uint32_t flow_label;		/* 20 bits, 0: none */
};

/*
 * What the agent tells a connection's owner (or, for a new request, the
 * listener's owner). @ev is one of the state machine's user events
 * (UROCE_CM_EV_*; never LISTEN_REQ, NONE). @msg is the received message
 * that caused it (REQ, REP, REJ, RTU, DREQ, DREP, SIDR_REQ, SIDR_REP),
 * NULL for timeouts and local causes; @rej_reason is set for REJECTED
 * (the REJ's reason, or UROCE_CM_REJ_TIMEOUT when the agent gave up);
 * @from is where @msg came from (NULL with @msg NULL). Pointers are valid
 * during the call only.
 */
struct cm_event {
	enum uroce_cm_event ev;
	const struct uroce_cm_msg *msg;
	const struct cm_peer *from;
	uint16_t rej_reason;
};

typedef void (*cm_event_fn)(void *owner, struct cm_conn *conn,
			    const struct cm_event *e);

/*
 * The agent of @ctx's device (a uroce verbs context), made and started on
 * first use and shared by reference afterwards: contexts of the same device
 * share one. -ENODEV for a context that is not a uroce device, -EBUSY when
 * something else holds the device's GSI, -ENOMEM, a thread error.
 */
int cm_agent_get(struct ibv_context *ctx, struct cm_agent **out);
/* Drop a reference; the last one stops the thread and closes the GSI once
 * no connection of it is left in a state that needs answers (it waits at
 * most the longest time-wait). */
void cm_agent_put(struct cm_agent *a);

/*
 * Listen for REQs (and SIDR_REQs) with @service_id: each new request makes
 * a connection (state REQ_RCVD / SIDR_REQ_RCVD) and calls @fn(@owner, conn,
 * REQ_RCVD or SIDR_REQ_RCVD). The listener then owns the connection until
 * cm_conn_own() gives it another owner or cm_conn_release() drops it.
 * At most @backlog requests wait unowned-and-unanswered (not yet REP/REJ/
 * SIDR_REP sent, nor owned); past that a REQ is answered REJ "consumer
 * defined" (28) and a SIDR_REQ SIDR_REP "reject", as Linux's cm does when
 * the listener refuses. A @backlog of 0 or less is 128 (rdma_listen(3):
 * "default"). -EADDRINUSE: @service_id listened on already.
 */
int cm_listen(struct cm_agent *a, uint64_t service_id, int backlog,
	      cm_event_fn fn, void *owner, struct cm_listener **out);
/* Stop listening: no callback for it once this returns. Requests it still
 * holds unowned are rejected (REJ 28 / SIDR_REP reject). */
void cm_unlisten(struct cm_listener *l);

/* A new connection for an active side (state IDLE), owned by @owner. */
int cm_conn_create(struct cm_agent *a, cm_event_fn fn, void *owner,
		   struct cm_conn **out);
/* Give @c (a listener's request) an owner of its own. */
void cm_conn_own(struct cm_conn *c, cm_event_fn fn, void *owner);

/*
 * Send a message on @c as the state machine input @in (UROCE_CM_IN_SEND_*),
 * or tell it UROCE_CM_IN_COMM_EST (@msg NULL). @msg's body is the
 * caller's: for a REQ every field but the comm IDs, the CM timing fields
 * (remote/local_cm_resp_timeout, max_cm_retries: the agent's, from
 * uroce_cm_timing defaults) and local_ca_guid; for others, everything but
 * the comm IDs and the header (and a REJ's Message REJected, which the
 * state says; a DREQ's Remote QPN when left 0). @to is needed for the first message of an
 * active side (REQ, SIDR_REQ): where it goes (and so every later message);
 * NULL otherwise. The agent sends it (with resends as the state machine
 * asks) and returns once it is queued for the port (engine lcore 0 puts
 * it there, in order, without the caller waiting).
 * -EINVAL: the state machine does not allow @in now, or @msg is not the
 * message @in sends; -ENOTCONN: the connection is gone (the peer's REJ or
 * DREQ came first, it timed out); a send error of the GSI.
 */
int cm_conn_send(struct cm_conn *c, enum uroce_cm_input in,
		 struct uroce_cm_msg *msg, const struct cm_peer *to);

/* The state of @c now, and the peer it talks to. */
enum uroce_cm_state cm_conn_state(const struct cm_conn *c);
const struct cm_peer *cm_conn_peer(const struct cm_conn *c);

/*
 * The owner is done with @c: no callback for it once this returns (called
 * from inside @c's callback too). A connection that still needs answers
 * carries on without an owner: ESTABLISHED sends a DREQ, DREQ_RCVD a DREP,
 * REQ_RCVD and REP_RCVD a REJ 28 (as Linux's cm_destroy_id()); time-wait
 * runs out; then the agent frees it.
 */
void cm_conn_release(struct cm_conn *c);

/*
 * Forget @c, a request (REQ_RCVD) its owner has no room for, with nothing
 * sent: as Linux's cm does when rdma_cm's backlog is full (the listener's
 * handler fails with -ENOMEM, and cm_destroy_id() then sends no REJ so
 * that the peer may retry). The peer's next resend of its REQ is a new
 * request. In any other state this is cm_conn_release(). No callback for
 * @c once this returns.
 */
void cm_conn_forget(struct cm_conn *c);

/* Counters of an agent (for telemetry and tests). */
struct cm_agent_stats {
	uint64_t rx;			/* MADs received */
	uint64_t tx;			/* MADs sent, resends included */
	uint64_t resends;
	uint64_t drop_decode;		/* not a CM MAD we handle */
	uint64_t drop_unmatched;	/* no connection, silently dropped */
	uint64_t replied_unmatched;	/* answered by uroce_cm_unmatched() */
	uint64_t rej_backlog;		/* REQs refused past a backlog */
	uint64_t conns;			/* connections alive now */
	/* Added after the first version: */
	uint64_t tx_err;		/* MADs the GSI did not send */
	uint64_t replied;		/* fresh answers of a connection's state
					 * machine: REJ "stale" in time-wait,
					 * DREP to a repeated DREQ */
	uint64_t rej_stale;		/* REQs from a QP still connected or in
					 * time-wait: REJ "stale connection" */
	uint64_t duplicates;		/* REQs, SIDR_REQs that found the
					 * connection they made before */
	uint64_t drop_addr;		/* sent to none of our GIDs */
	uint64_t events;		/* callbacks made */
	uint64_t ev_lost;		/* events lost: no memory */
	uint64_t drop_backlog;		/* requests forgotten, nothing sent:
					 * the owner's backlog was full */
};
void cm_agent_stats(const struct cm_agent *a, struct cm_agent_stats *out);

/*
 * The CM timing of @a's connections made from now on, and of the REQs
 * they send (Remote and Local CM Response Timeout, Max CM Retries): by
 * default rdma_cm's (UROCE_CM_DEFAULT_RESP_TIMEOUT, _RETRIES,
 * _PACKET_LIFE). Tests shorten it so that the retries and time-wait take
 * milliseconds. -EINVAL: a response timeout over 31, retries over 15, a
 * packet life time over 30.
 */
int cm_agent_set_timing(struct cm_agent *a, const struct uroce_cm_timing *t);

#endif /* UROCE_CM_AGENT_H */
