/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Listeners: a service ID, the requests it holds, and its backlog. A
 * request past the backlog is refused at once, REJ "consumer defined"
 * (28) or SIDR_REP "reject", as Linux's cm answers for a listener that
 * refuses, and costs no memory: a REQ flood holds at most the backlog of
 * unanswered connections, and those answered wait for the peer with the
 * state machine's timeouts.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent_priv.h"

/* The backlog of a listen() with none (rdma_listen(3): 0 is "default"). */
#define CM_DEFAULT_BACKLOG	128

struct cm_listener *
cm_listener_find(struct cm_agent *a, uint64_t sid)
{
	struct cm_listener *l;

	LIST_FOREACH(l, &a->listeners, link)
		if (l->service_id == sid)
			return l;
	return NULL;
}

void
cm_listener_unbacklog(struct cm_conn *c)
{
	if (c->in_backlog && c->listener != NULL)
		c->listener->pending--;
	c->in_backlog = false;
}

void
cm_listener_detach(struct cm_conn *c)
{
	if (c->listener == NULL)
		return;
	cm_listener_unbacklog(c);
	TAILQ_REMOVE(&c->listener->conns, c, l_link);
	c->listener = NULL;
}

/* Refuse a request: REJ @reason, or SIDR_REP "reject". */
static void
refuse(struct cm_agent *a, const struct cm_rx *rx, uint16_t reason,
       struct cm_batch *b)
{
	const struct uroce_cm_msg *m = rx->msg;
	struct uroce_cm_msg out;

	if (m->hdr.attr_id == UROCE_CM_ATTR_SIDR_REQ) {
		uroce_cm_msg_init(&out, UROCE_CM_ATTR_SIDR_REP, m->hdr.tid);
		out.sidr_rep.request_id = m->sidr_req.request_id;
		out.sidr_rep.status = UROCE_CM_SIDR_REJECT;
		out.sidr_rep.service_id = m->sidr_req.service_id;
	} else if (uroce_cm_reply(NULL, m, UROCE_CM_ATTR_REJ, reason, &out) != 0) {
		return;
	}
	cm_batch_msg(a, b, &out, &rx->from, true);
}

void
cm_listener_request(struct cm_listener *l, const struct cm_rx *rx,
		    struct cm_batch *b)
{
	bool sidr = rx->msg->hdr.attr_id == UROCE_CM_ATTR_SIDR_REQ;
	struct cm_agent *a = l->a;
	struct cm_conn *c;

	if (l->pending >= l->backlog) {
		a->st.rej_backlog++;
		refuse(a, rx, UROCE_CM_REJ_CONSUMER_DEFINED, b);
		return;
	}
	c = cm_conn_new(a);
	if (c == NULL) {
		AG_LOG(ERR, "%s: no memory for a request\n", a->dev.name);
		refuse(a, rx, UROCE_CM_REJ_NO_RESOURCES, b);
		return;
	}
	c->peer = rx->from;
	c->sidr = sidr;
	c->tid = rx->msg->hdr.tid;
	c->fn = l->fn;
	c->owner = l->owner;
	c->listener = l;
	c->in_backlog = true;
	l->pending++;
	TAILQ_INSERT_TAIL(&l->conns, c, l_link);
	if (cm_step(a, c, sidr ? UROCE_CM_IN_RECV_SIDR_REQ : UROCE_CM_IN_RECV_REQ,
		    NULL, rx, b) != 0) {
		cm_conn_free(c);
		return;
	}
	cm_conn_set_remote(c);
}

int
cm_listen(struct cm_agent *a, uint64_t service_id, int backlog,
	  cm_event_fn fn, void *owner, struct cm_listener **out)
{
	struct cm_listener *l;
	int ret = 0;

	if (a == NULL || fn == NULL || out == NULL)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return -ENOMEM;
	l->a = a;
	l->service_id = service_id;
	l->backlog = backlog > 0 ? (unsigned int)backlog : CM_DEFAULT_BACKLOG;
	l->fn = fn;
	l->owner = owner;
	TAILQ_INIT(&l->conns);
	pthread_mutex_lock(&a->lock);
	if (cm_listener_find(a, service_id) != NULL)
		ret = -EADDRINUSE;
	else
		LIST_INSERT_HEAD(&a->listeners, l, link);
	pthread_mutex_unlock(&a->lock);
	if (ret != 0) {
		free(l);
		l = NULL;
	}
	*out = l;
	return ret;
}

void
cm_unlisten(struct cm_listener *l)
{
	struct cm_batch b = { 0 };
	struct cm_agent *a;
	struct cm_conn *c;

	if (l == NULL)
		return;
	a = l->a;
	pthread_mutex_lock(&a->lock);
	LIST_REMOVE(l, link);
	while ((c = TAILQ_FIRST(&l->conns)) != NULL)
		cm_conn_drop(c, &b);
	cm_cb_wait(a, NULL, l);
	pthread_mutex_unlock(&a->lock);
	cm_batch_send(a, &b);
	free(l);
}
