/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_CM_AGENT_PRIV_H
#define UROCE_CM_AGENT_PRIV_H

/*
 * Internals of the CM agent (cm_agent.h). The files:
 *  agent.c        agents of the process: get/put, the thread and its loop;
 *  agent_table.c  the containers: hash chains (comm IDs) and the timer heap;
 *  agent_step.c   one state machine step and its effects carried out:
 *                 sends into a batch, timers, events queued and delivered;
 *  agent_conn.c   the connection calls of cm_agent.h (create, send, release);
 *  agent_listen.c listeners and their backlog;
 *  agent_rx.c     received MADs: decoded, matched, answered;
 *  agent_stats.c  counters and DPDK telemetry.
 *
 * Locking. One mutex an agent (a->lock) guards everything of it: its
 * tables, connections, listeners, queue and counters. Sends to the GSI
 * (which may wait up to 2 s for a neighbour) and callbacks run without it:
 * a step collects its sends into a struct cm_batch, sent after unlock,
 * and its events into the agent's queue, which only the agent's thread
 * delivers (one at a time, in order).
 */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_log.h>

#include "cm_agent.h"
#include "uroce_cm.h"
#include "uroce_verbs_cm.h"

extern int cm_agent_logtype;
#define AG_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, cm_agent_logtype, "cm agent: " __VA_ARGS__)

/* ---- agent_table.c ---- */

/* An intrusive hash chain entry; h is the hash of the caller's key. */
struct cm_hnode {
	struct cm_hnode *next;
	uint64_t h;
};

struct cm_htab {
	struct cm_hnode **b;
	uint32_t mask;		/* buckets - 1 */
	uint32_t n;
};

int cm_htab_init(struct cm_htab *t);
void cm_htab_fini(struct cm_htab *t);
/* Add @e with hash @h (the chains grow longer if the table cannot). */
void cm_htab_add(struct cm_htab *t, struct cm_hnode *e, uint64_t h);
void cm_htab_del(struct cm_htab *t, struct cm_hnode *e);
/* The first entry of hash @h after @from (NULL: the chain's first). */
struct cm_hnode *cm_htab_next(const struct cm_htab *t, uint64_t h,
			      struct cm_hnode *from);
uint64_t cm_hash_gid(const union ibv_gid *gid, uint64_t v);

struct cm_heap {
	struct cm_conn **v;
	size_t n, cap;
};
void cm_heap_fini(struct cm_heap *hp);
/* Put @c at key c->heap_key (in it already: moved), or take it out
 * (@key 0). -ENOMEM: not added. */
int cm_heap_set(struct cm_heap *hp, struct cm_conn *c, uint64_t key);
struct cm_conn *cm_heap_top(const struct cm_heap *hp);

/* ---- the objects ---- */

struct cm_listener {
	struct cm_agent *a;
	uint64_t service_id;
	unsigned int backlog;
	unsigned int pending;	/* requests unowned and unanswered */
	cm_event_fn fn;
	void *owner;
	TAILQ_HEAD(, cm_conn) conns;	/* those it owns */
	LIST_ENTRY(cm_listener) link;
};

struct cm_conn {
	struct cm_agent *a;
	struct uroce_cm_conn fsm;
	struct cm_peer peer;
	cm_event_fn fn;			/* NULL once released */
	void *owner;
	struct cm_listener *listener;	/* owner, until cm_conn_own() */
	uint64_t tid;			/* transaction of the last exchange */
	uint8_t last_mad[UROCE_MAD_LEN];	/* what FX_RESEND sends */
	unsigned int refs;		/* queued events that name it */
	bool released;
	bool in_backlog;		/* counted in listener->pending */
	bool sidr;			/* a SIDR exchange */
	bool in_remote, in_qpn;		/* in a->by_remote, a->by_qpn */
	size_t heap_idx;
	uint64_t heap_key;		/* 0: not in the timer heap */
	struct cm_hnode h_local, h_remote, h_qpn;
	TAILQ_ENTRY(cm_conn) link;	/* a->conns */
	TAILQ_ENTRY(cm_conn) l_link;	/* listener->conns */
};

/* An event waiting for the agent's thread to deliver it. */
struct cm_evq {
	STAILQ_ENTRY(cm_evq) link;
	struct cm_conn *c;
	struct cm_event e;
	bool has_msg;
	struct uroce_cm_msg msg;
	struct cm_peer from;
};

/* Sends collected under the lock, made after it. */
struct cm_batch {
	struct uroce_verbs_mad_tx *v;
	size_t n, cap;
	unsigned int resends;		/* how many of them are resends */
	unsigned int lost;		/* could not be queued (no memory) */
};

struct cm_agent {
	LIST_ENTRY(cm_agent) link;	/* the process's agents (registry) */
	unsigned int refs;		/* under the registry lock */
	bool closing;			/* last put: draining */
	bool stop;			/* the thread must end now */
	bool detached;			/* put from its own thread: frees itself */
	uint64_t close_deadline_ns;

	struct uroce_verbs_cm_dev dev;
	const struct uroce_verbs_cm_glue *glue;
	struct uroce_verbs_gsi *gsi;
	pthread_t thread;
	bool thread_started;
	int tfd;			/* timerfd, CLOCK_MONOTONIC */
	int wfd;			/* eventfd: wake the thread */

	pthread_mutex_t lock;
	pthread_cond_t cond;		/* a callback ended */
	struct uroce_cm_timing timing;	/* of new connections and REQs */
	uint64_t tid_hi;		/* random high 32 bits */
	uint32_t tid_lo;
	uint32_t next_comm_id;
	struct cm_htab by_local;	/* every conn: its local comm ID */
	struct cm_htab by_remote;	/* passive, not IDLE: (peer, its ID) */
	struct cm_htab by_qpn;		/* not IDLE: (peer, its QPN) */
	struct cm_heap heap;		/* conns with a deadline */
	uint64_t armed_ns;		/* the timerfd's deadline, 0: none */
	TAILQ_HEAD(, cm_conn) conns;
	LIST_HEAD(, cm_listener) listeners;
	STAILQ_HEAD(, cm_evq) evq;
	struct cm_conn *cb_conn;	/* in a callback for it now */
	struct cm_listener *cb_listener;
	struct cm_agent_stats st;
};

/* ---- agent.c ---- */
uint64_t cm_now_ns(void);
bool cm_on_thread(const struct cm_agent *a);
/* Wake the thread (events queued from another thread). */
void cm_wake(struct cm_agent *a);
/* Wait, lock held, until no callback runs for @c / @l (not on the
 * agent's own thread: nothing to wait for there). */
void cm_cb_wait(struct cm_agent *a, const struct cm_conn *c,
		const struct cm_listener *l);

/* ---- agent_step.c ---- */
/* What a received message comes with. */
struct cm_rx {
	const struct uroce_cm_msg *msg;
	struct cm_peer from;
	uint64_t now_ns;
};

uint64_t cm_tid_new(struct cm_agent *a);
/* Step @c with @in; for a send @msg is the message, complete; for a
 * receive @rx. Effects go to @b and the queue. Lock held. */
int cm_step(struct cm_agent *a, struct cm_conn *c, enum uroce_cm_input in,
	    const struct uroce_cm_msg *msg, const struct cm_rx *rx,
	    struct cm_batch *b);
/* Encode @m and queue it to @to. */
int cm_batch_msg(struct cm_agent *a, struct cm_batch *b,
		 const struct uroce_cm_msg *m, const struct cm_peer *to,
		 bool reply);
int cm_batch_add(struct cm_batch *b, const uint8_t *mad,
		 const struct cm_peer *to, bool reply);
/* Send the batch (lock not held): the first error, 0. */
int cm_batch_send(struct cm_agent *a, struct cm_batch *b);
void cm_queue_event(struct cm_agent *a, struct cm_conn *c,
		    enum uroce_cm_event ev, uint16_t reason,
		    const struct cm_rx *rx);
/* Deliver the queued events (the agent's thread, lock not held). */
void cm_deliver(struct cm_agent *a);
/* Fire the due timers, lock held. */
void cm_timers(struct cm_agent *a, uint64_t now, struct cm_batch *b);
/* Arm the timerfd for the earliest deadline, lock held. */
void cm_timer_arm(struct cm_agent *a);

/* ---- agent_conn.c ---- */
struct cm_conn *cm_conn_new(struct cm_agent *a);
/* Free @c if nothing holds it: released, IDLE, no queued event. */
void cm_conn_maybe_free(struct cm_conn *c);
void cm_conn_free(struct cm_conn *c);
/* Index changes after a step: tables by state, backlog. */
void cm_conn_update(struct cm_conn *c);
/* The release of cm_conn_release(), lock held. */
void cm_conn_drop(struct cm_conn *c, struct cm_batch *b);
void cm_conn_set_remote(struct cm_conn *c);
bool cm_conn_needs_answers(const struct cm_conn *c);

/* ---- agent_listen.c ---- */
struct cm_listener *cm_listener_find(struct cm_agent *a, uint64_t sid);
/* A new request for @l (REQ or SIDR_REQ @rx): the new connection, or
 * NULL after answering it (backlog full, no memory). */
void cm_listener_request(struct cm_listener *l, const struct cm_rx *rx,
			 struct cm_batch *b);
/* @c leaves its listener (owned, answered or released). */
void cm_listener_detach(struct cm_conn *c);
void cm_listener_unbacklog(struct cm_conn *c);

/* ---- agent_rx.c ---- */
/* Receive and handle what waits on the GSI; the agent's thread. */
void cm_rx_all(struct cm_agent *a);

/* ---- agent_stats.c ---- */
void cm_telemetry_register(void);
/* The registry, for telemetry: run @fn on every agent, registry locked. */
void cm_registry_walk(void (*fn)(struct cm_agent *a, void *arg), void *arg);

#endif /* UROCE_CM_AGENT_PRIV_H */
