/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Connections: their comm IDs, the tables that find them, what the agent
 * fills into the messages they send (IBTA 12.6: MAD header, transaction
 * ID, comm IDs, REQ timing, CA GUID), and their release.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "agent_priv.h"

static const union ibv_gid gid_none;

static uint64_t
local_hash(uint32_t id)
{
	return cm_hash_gid(&gid_none, id);
}

static uint64_t
remote_hash(const struct cm_conn *c)
{
	return cm_hash_gid(&c->peer.gid, c->fsm.remote_comm_id |
			   (uint64_t)c->sidr << 32);
}

static uint64_t
qpn_hash(const struct cm_conn *c)
{
	return cm_hash_gid(&c->peer.gid, c->fsm.remote_qpn);
}

static bool
local_id_used(struct cm_agent *a, uint32_t id)
{
	uint64_t h = local_hash(id);
	struct cm_hnode *e = NULL;

	while ((e = cm_htab_next(&a->by_local, h, e)) != NULL)
		if (container_of(e, struct cm_conn, h_local)->fsm.local_comm_id == id)
			return true;
	return false;
}

/* A comm ID no living connection has (time-wait included), from a
 * counter that started at a random value; never 0 (a REJ's "unknown"). */
static uint32_t
comm_id_new(struct cm_agent *a)
{
	uint32_t id;

	do
		id = a->next_comm_id++;
	while (id == 0 || local_id_used(a, id));
	return id;
}

struct cm_conn *
cm_conn_new(struct cm_agent *a)
{
	struct cm_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->a = a;
	uroce_cm_conn_init(&c->fsm, comm_id_new(a), &a->timing);
	cm_htab_add(&a->by_local, &c->h_local, local_hash(c->fsm.local_comm_id));
	TAILQ_INSERT_TAIL(&a->conns, c, link);
	a->st.conns++;
	return c;
}

void
cm_conn_free(struct cm_conn *c)
{
	struct cm_agent *a = c->a;

	cm_listener_detach(c);
	if (c->in_remote)
		cm_htab_del(&a->by_remote, &c->h_remote);
	if (c->in_qpn)
		cm_htab_del(&a->by_qpn, &c->h_qpn);
	cm_heap_set(&a->heap, c, 0);
	cm_htab_del(&a->by_local, &c->h_local);
	TAILQ_REMOVE(&a->conns, c, link);
	a->st.conns--;
	free(c);
}

void
cm_conn_maybe_free(struct cm_conn *c)
{
	if (c->released && c->refs == 0 && c->fsm.state == UROCE_CM_IDLE &&
	    c->heap_key == 0)
		cm_conn_free(c);
}

bool
cm_conn_needs_answers(const struct cm_conn *c)
{
	return c->fsm.state != UROCE_CM_IDLE;
}

/* The passive side's key: the peer's comm ID (its REQ's duplicates find
 * the connection), set once the request made it. */
void
cm_conn_set_remote(struct cm_conn *c)
{
	if (c->in_remote)
		return;
	cm_htab_add(&c->a->by_remote, &c->h_remote, remote_hash(c));
	c->in_remote = true;
}

/* The tables follow the state: IDLE leaves the peer's keys (a later REQ
 * with the same IDs is new), a learnt QPN joins by_qpn (stale REQs). */
void
cm_conn_update(struct cm_conn *c)
{
	struct cm_agent *a = c->a;
	enum uroce_cm_state s = c->fsm.state;

	if (s == UROCE_CM_IDLE) {
		if (c->in_remote)
			cm_htab_del(&a->by_remote, &c->h_remote);
		if (c->in_qpn)
			cm_htab_del(&a->by_qpn, &c->h_qpn);
		c->in_remote = c->in_qpn = false;
	} else if (!c->in_qpn && !c->sidr && c->fsm.remote_qpn != 0) {
		cm_htab_add(&a->by_qpn, &c->h_qpn, qpn_hash(c));
		c->in_qpn = true;
	}
	if (c->in_backlog && s != UROCE_CM_REQ_RCVD &&
	    s != UROCE_CM_MRA_REQ_SENT && s != UROCE_CM_SIDR_REQ_RCVD)
		cm_listener_unbacklog(c);
}

/* ------------------------------------------------------------------------
 * What the agent fills into a message.
 */
static const uint16_t send_attr[UROCE_CM_IN_COUNT] = {
	[UROCE_CM_IN_SEND_REQ] = UROCE_CM_ATTR_REQ,
	[UROCE_CM_IN_SEND_MRA] = UROCE_CM_ATTR_MRA,
	[UROCE_CM_IN_SEND_REJ] = UROCE_CM_ATTR_REJ,
	[UROCE_CM_IN_SEND_REP] = UROCE_CM_ATTR_REP,
	[UROCE_CM_IN_SEND_RTU] = UROCE_CM_ATTR_RTU,
	[UROCE_CM_IN_SEND_DREQ] = UROCE_CM_ATTR_DREQ,
	[UROCE_CM_IN_SEND_DREP] = UROCE_CM_ATTR_DREP,
	[UROCE_CM_IN_SEND_SIDR_REQ] = UROCE_CM_ATTR_SIDR_REQ,
	[UROCE_CM_IN_SEND_SIDR_REP] = UROCE_CM_ATTR_SIDR_REP,
};

/* Message REJected (IBTA Table 108) by the state the REJ leaves. */
static uint8_t
rej_msg_type(enum uroce_cm_state s)
{
	switch (s) {
	case UROCE_CM_REQ_RCVD:
	case UROCE_CM_MRA_REQ_SENT:
		return UROCE_CM_MSG_REQ;
	case UROCE_CM_REP_RCVD:
	case UROCE_CM_MRA_REP_SENT:
		return UROCE_CM_MSG_REP;
	default:
		return UROCE_CM_MSG_OTHER;
	}
}

/* A new transaction (REQ, SIDR_REQ, DREQ: IBTA 13.4.6.4) takes a fresh
 * TID; every other message belongs to the one its connection is in, as
 * Linux's cm.c keeps one TID for REQ, REP and RTU and one for DREQ, DREP. */
static uint64_t
msg_tid(struct cm_conn *c, uint16_t attr)
{
	if (attr == UROCE_CM_ATTR_REQ || attr == UROCE_CM_ATTR_SIDR_REQ ||
	    attr == UROCE_CM_ATTR_DREQ)
		c->tid = cm_tid_new(c->a);
	return c->tid;
}

static void
fill_ids(struct cm_conn *c, struct uroce_cm_msg *m)
{
	const struct uroce_cm_conn *f = &c->fsm;
	struct cm_agent *a = c->a;

	switch (m->hdr.attr_id) {
	case UROCE_CM_ATTR_REQ:
		m->req.local_comm_id = f->local_comm_id;
		m->req.remote_cm_resp_timeout = a->timing.cm_resp_timeout;
		m->req.local_cm_resp_timeout = a->timing.cm_resp_timeout;
		m->req.max_cm_retries = a->timing.max_cm_retries;
		m->req.local_ca_guid = a->dev.node_guid;
		return;
	case UROCE_CM_ATTR_SIDR_REQ:
		m->sidr_req.request_id = f->local_comm_id;
		return;
	case UROCE_CM_ATTR_SIDR_REP:
		m->sidr_rep.request_id = f->remote_comm_id;
		return;
	case UROCE_CM_ATTR_REP:
		m->rep.local_ca_guid = a->dev.node_guid;
		break;
	case UROCE_CM_ATTR_REJ:
		m->rej.msg_rejected = rej_msg_type(f->state);
		break;
	case UROCE_CM_ATTR_DREQ:
		if (m->dreq.remote_qpn == 0)
			m->dreq.remote_qpn = f->remote_qpn;
		break;
	default:
		break;
	}
	/* MRA, REJ, REP, RTU, DREQ, DREP start with the two comm IDs. */
	m->rtu.local_comm_id = f->local_comm_id;
	m->rtu.remote_comm_id = f->remote_comm_id;
}

/* The header and the CM's own fields of @m, a @attr message of @c. */
static void
fill_msg(struct cm_conn *c, uint16_t attr, struct uroce_cm_msg *m)
{
	struct uroce_cm_msg h;

	uroce_cm_msg_init(&h, attr, msg_tid(c, attr));
	m->hdr = h.hdr;
	fill_ids(c, m);
}

/* ------------------------------------------------------------------------
 * Release: what a connection still owes its peer (Linux cm_destroy_id()).
 */
struct release_act {
	enum uroce_cm_input in;		/* 0 (LISTEN): nothing to send */
	uint16_t reason;		/* a REJ's */
};

static const struct release_act release_acts[UROCE_CM_STATE_COUNT] = {
	[UROCE_CM_REQ_SENT] = { UROCE_CM_IN_SEND_REJ, UROCE_CM_REJ_TIMEOUT },
	[UROCE_CM_MRA_REQ_RCVD] = { UROCE_CM_IN_SEND_REJ, UROCE_CM_REJ_TIMEOUT },
	[UROCE_CM_REQ_RCVD] = { UROCE_CM_IN_SEND_REJ, UROCE_CM_REJ_CONSUMER_DEFINED },
	[UROCE_CM_MRA_REQ_SENT] = { UROCE_CM_IN_SEND_REJ, UROCE_CM_REJ_CONSUMER_DEFINED },
	[UROCE_CM_REP_SENT] = { UROCE_CM_IN_SEND_REJ, UROCE_CM_REJ_CONSUMER_DEFINED },
	[UROCE_CM_MRA_REP_RCVD] = { UROCE_CM_IN_SEND_REJ, UROCE_CM_REJ_CONSUMER_DEFINED },
	[UROCE_CM_REP_RCVD] = { UROCE_CM_IN_SEND_REJ, UROCE_CM_REJ_CONSUMER_DEFINED },
	[UROCE_CM_MRA_REP_SENT] = { UROCE_CM_IN_SEND_REJ, UROCE_CM_REJ_CONSUMER_DEFINED },
	[UROCE_CM_ESTABLISHED] = { UROCE_CM_IN_SEND_DREQ, 0 },
	[UROCE_CM_DREQ_RCVD] = { UROCE_CM_IN_SEND_DREP, 0 },
	[UROCE_CM_SIDR_REQ_RCVD] = { UROCE_CM_IN_SEND_SIDR_REP, 0 },
};

/* The message of a release: a REJ (with, for a REJ Timeout, the CA GUID
 * as its ARI, IBTA Table 112), a DREQ, a DREP, a SIDR_REP "reject". */
static void
release_msg(struct cm_conn *c, const struct release_act *r,
	    struct uroce_cm_msg *m)
{
	uint16_t attr = send_attr[r->in];
	uint64_t guid = c->a->dev.node_guid;
	unsigned int i;

	memset(m, 0, sizeof(*m));
	fill_msg(c, attr, m);
	if (attr == UROCE_CM_ATTR_REJ) {
		m->rej.reason = r->reason;
		if (r->reason == UROCE_CM_REJ_TIMEOUT) {
			m->rej.ari_len = 8;
			for (i = 0; i < 8; i++)
				m->rej.ari[i] = (uint8_t)(guid >> (56 - 8 * i));
		}
	}
	if (attr == UROCE_CM_ATTR_SIDR_REP)
		m->sidr_rep.status = UROCE_CM_SIDR_REJECT;
}

void
cm_conn_drop(struct cm_conn *c, struct cm_batch *b)
{
	const struct release_act *r = &release_acts[c->fsm.state];
	struct uroce_cm_msg m;

	c->fn = NULL;
	c->owner = NULL;
	c->released = true;
	cm_listener_detach(c);
	if (r->in != 0) {
		release_msg(c, r, &m);
		if (cm_step(c->a, c, r->in, &m, NULL, b) != 0) {
			AG_LOG(ERR, "%s: comm ID 0x%08x: release in %s failed\n",
			       c->a->dev.name, c->fsm.local_comm_id,
			       uroce_cm_state_str(c->fsm.state));
			c->fsm.state = UROCE_CM_IDLE;
			c->fsm.deadline_ns = 0;
			cm_heap_set(&c->a->heap, c, 0);
			cm_conn_update(c);
		}
	}
	cm_conn_maybe_free(c);
}

/* ------------------------------------------------------------------------
 * cm_agent.h
 */
int
cm_conn_create(struct cm_agent *a, cm_event_fn fn, void *owner,
	       struct cm_conn **out)
{
	struct cm_conn *c;

	if (a == NULL || fn == NULL || out == NULL)
		return -EINVAL;
	pthread_mutex_lock(&a->lock);
	c = cm_conn_new(a);
	if (c != NULL) {
		c->fn = fn;
		c->owner = owner;
	}
	pthread_mutex_unlock(&a->lock);
	*out = c;
	return c != NULL ? 0 : -ENOMEM;
}

void
cm_conn_own(struct cm_conn *c, cm_event_fn fn, void *owner)
{
	if (c == NULL || fn == NULL)
		return;
	pthread_mutex_lock(&c->a->lock);
	cm_listener_detach(c);
	c->fn = fn;
	c->owner = owner;
	pthread_mutex_unlock(&c->a->lock);
}

/* A refused send on a connection that went away meanwhile. */
static bool
conn_gone(const struct cm_conn *c, enum uroce_cm_input in)
{
	switch (c->fsm.state) {
	case UROCE_CM_IDLE:
		return in != UROCE_CM_IN_SEND_REQ && in != UROCE_CM_IN_SEND_SIDR_REQ;
	case UROCE_CM_TIMEWAIT:
	case UROCE_CM_DREQ_SENT:
	case UROCE_CM_DREQ_RCVD:
		return true;
	default:
		return false;
	}
}

static int
conn_send_locked(struct cm_conn *c, enum uroce_cm_input in,
		 struct uroce_cm_msg *msg, const struct cm_peer *to,
		 struct cm_batch *b)
{
	bool first = in == UROCE_CM_IN_SEND_REQ || in == UROCE_CM_IN_SEND_SIDR_REQ;
	struct cm_peer old = c->peer;
	bool old_sidr = c->sidr;
	int ret;

	if (c->released)
		return -EINVAL;
	if (first) {
		c->peer = *to;
		c->sidr = in == UROCE_CM_IN_SEND_SIDR_REQ;
	}
	if (msg != NULL)
		fill_msg(c, msg->hdr.attr_id, msg);
	ret = cm_step(c->a, c, in, msg, NULL, b);
	if (ret != 0 && first) {
		c->peer = old;
		c->sidr = old_sidr;
	}
	if (ret == -EINVAL && conn_gone(c, in))
		ret = -ENOTCONN;
	return ret;
}

int
cm_conn_send(struct cm_conn *c, enum uroce_cm_input in,
	     struct uroce_cm_msg *msg, const struct cm_peer *to)
{
	struct cm_batch b = { 0 };
	struct cm_agent *a;
	bool wake;
	int ret;

	if (c == NULL || (unsigned int)in >= UROCE_CM_IN_COUNT)
		return -EINVAL;
	if (in == UROCE_CM_IN_COMM_EST ? msg != NULL :
	    (send_attr[in] == 0 || msg == NULL || msg->hdr.attr_id != send_attr[in]))
		return -EINVAL;
	if ((in == UROCE_CM_IN_SEND_REQ || in == UROCE_CM_IN_SEND_SIDR_REQ) &&
	    to == NULL)
		return -EINVAL;
	a = c->a;
	pthread_mutex_lock(&a->lock);
	ret = conn_send_locked(c, in, msg, to, &b);
	wake = !STAILQ_EMPTY(&a->evq) && !cm_on_thread(a);
	pthread_mutex_unlock(&a->lock);
	if (wake)
		cm_wake(a);
	if (ret != 0) {
		free(b.v);
		return ret;
	}
	return cm_batch_send(a, &b);
}

enum uroce_cm_state
cm_conn_state(const struct cm_conn *c)
{
	enum uroce_cm_state s;

	if (c == NULL)
		return UROCE_CM_IDLE;
	pthread_mutex_lock(&c->a->lock);
	s = c->fsm.state;
	pthread_mutex_unlock(&c->a->lock);
	return s;
}

const struct cm_peer *
cm_conn_peer(const struct cm_conn *c)
{
	return c != NULL ? &c->peer : NULL;
}

void
cm_conn_release(struct cm_conn *c)
{
	struct cm_batch b = { 0 };
	struct cm_agent *a;

	if (c == NULL)
		return;
	a = c->a;
	pthread_mutex_lock(&a->lock);
	/* No callback is started for it from here on; one running now holds
	 * a reference (it is not freed under it) and is waited for. */
	cm_conn_drop(c, &b);
	cm_cb_wait(a, c, NULL);
	pthread_mutex_unlock(&a->lock);
	cm_batch_send(a, &b);
}

void
cm_conn_forget(struct cm_conn *c)
{
	struct cm_batch b = { 0 };
	struct cm_agent *a;

	if (c == NULL)
		return;
	a = c->a;
	pthread_mutex_lock(&a->lock);
	if (c->fsm.state != UROCE_CM_REQ_RCVD || c->released) {
		pthread_mutex_unlock(&a->lock);
		cm_conn_release(c);
		return;
	}
	c->fn = NULL;
	c->owner = NULL;
	c->released = true;
	cm_listener_detach(c);
	/* Back to IDLE with no message (b stays empty): it leaves the
	 * peer's tables, so the REQ's resend (same comm ID) is a new
	 * request. */
	if (cm_step(a, c, UROCE_CM_IN_FORGET, NULL, NULL, &b) != 0)
		AG_LOG(ERR, "%s: comm ID 0x%08x: %s refused to forget\n",
		       a->dev.name, c->fsm.local_comm_id,
		       uroce_cm_state_str(c->fsm.state));
	a->st.drop_backlog++;
	AG_LOG(DEBUG, "%s: comm ID 0x%08x: request forgotten (backlog full)\n",
	       a->dev.name, c->fsm.local_comm_id);
	cm_conn_maybe_free(c);
	cm_cb_wait(a, c, NULL);
	pthread_mutex_unlock(&a->lock);
}
