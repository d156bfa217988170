/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * One step of a connection's state machine (uroce_cm_step()) and its
 * effects carried out: sends and resends (the exact bytes of the last
 * message, IBTA 12.6: a duplicate is answered with what was sent), fresh
 * replies (uroce_cm_reply()), the timer heap, and events for the owner,
 * queued here and delivered by the agent's thread with no lock held.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>

#include "agent_priv.h"

uint64_t
cm_tid_new(struct cm_agent *a)
{
	return a->tid_hi | a->tid_lo++;
}

/* ------------------------------------------------------------------------
 * The batch of sends.
 */
int
cm_batch_add(struct cm_batch *b, const uint8_t *mad, const struct cm_peer *to,
	     bool reply)
{
	struct uroce_verbs_mad_tx *t, *v;
	size_t cap;

	if (b->n == b->cap) {
		cap = b->cap != 0 ? b->cap * 2 : 8;
		v = realloc(b->v, cap * sizeof(*v));
		if (v == NULL) {
			b->lost++;
			return -ENOMEM;
		}
		b->v = v;
		b->cap = cap;
	}
	t = &b->v[b->n++];
	memset(t, 0, sizeof(*t));
	memcpy(t->mad, mad, sizeof(t->mad));
	t->dgid = to->gid;
	t->sgid_index = to->local_gid_index;
	t->tclass = to->tclass;
	/* An answer goes back with the sender's default hop limit; a first
	 * message with the one its caller chose (0: 64). */
	t->hop_limit = reply ? 0 : to->hop_limit;
	t->flow_label = to->flow_label;
	return 0;
}

int
cm_batch_msg(struct cm_agent *a, struct cm_batch *b,
	     const struct uroce_cm_msg *m, const struct cm_peer *to, bool reply)
{
	uint8_t mad[UROCE_MAD_LEN];
	int ret;

	ret = uroce_cm_encode(m, mad);
	if (ret < 0) {
		AG_LOG(ERR, "%s: cannot encode a %s (%d)\n", a->dev.name,
		       uroce_cm_attr_str(m->hdr.attr_id), ret);
		return ret;
	}
	return cm_batch_add(b, mad, to, reply);
}

int
cm_batch_send(struct cm_agent *a, struct cm_batch *b)
{
	int ret, first = 0;
	size_t i;

	for (i = 0; i < b->n; i++) {
		ret = a->glue->gsi_send(a->gsi, &b->v[i]);
		if (ret == 0) {
			__atomic_fetch_add(&a->st.tx, 1, __ATOMIC_RELAXED);
			continue;
		}
		__atomic_fetch_add(&a->st.tx_err, 1, __ATOMIC_RELAXED);
		AG_LOG(NOTICE, "%s: a MAD not sent: %s\n", a->dev.name,
		       strerror(-ret));
		if (first == 0)
			first = ret;
	}
	if (b->resends > 0)
		__atomic_fetch_add(&a->st.resends, b->resends, __ATOMIC_RELAXED);
	if (b->lost > 0)
		__atomic_fetch_add(&a->st.tx_err, b->lost, __ATOMIC_RELAXED);
	free(b->v);
	memset(b, 0, sizeof(*b));
	return first != 0 ? first : 0;
}

/* ------------------------------------------------------------------------
 * Events: queued under the lock, delivered by the agent's thread.
 */
void
cm_queue_event(struct cm_agent *a, struct cm_conn *c, enum uroce_cm_event ev,
	       uint16_t reason, const struct cm_rx *rx)
{
	struct cm_evq *q;

	if (c->fn == NULL || a->closing)
		return;		/* released: nobody to tell */
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		a->st.ev_lost++;
		AG_LOG(ERR, "%s: comm ID 0x%08x: event \"%s\" lost (no memory)\n",
		       a->dev.name, c->fsm.local_comm_id, uroce_cm_event_str(ev));
		return;
	}
	q->c = c;
	q->e.ev = ev;
	q->e.rej_reason = ev == UROCE_CM_EV_REJECTED ? reason : 0;
	if (rx != NULL && rx->msg != NULL) {
		q->has_msg = true;
		q->msg = *rx->msg;
		q->from = rx->from;
	}
	c->refs++;
	STAILQ_INSERT_TAIL(&a->evq, q, link);
}

/* One event: the owner's callback, no lock held; false when none is left. */
static bool
deliver_one(struct cm_agent *a)
{
	struct cm_evq *q;
	struct cm_conn *c;
	cm_event_fn fn;
	void *owner;

	pthread_mutex_lock(&a->lock);
	q = STAILQ_FIRST(&a->evq);
	if (q == NULL) {
		pthread_mutex_unlock(&a->lock);
		return false;
	}
	STAILQ_REMOVE_HEAD(&a->evq, link);
	c = q->c;
	fn = a->closing ? NULL : c->fn;
	owner = c->owner;
	if (fn != NULL) {
		a->cb_conn = c;
		a->cb_listener = c->listener;
		a->st.events++;
		pthread_mutex_unlock(&a->lock);
		q->e.msg = q->has_msg ? &q->msg : NULL;
		q->e.from = q->has_msg ? &q->from : NULL;
		fn(owner, c, &q->e);
		pthread_mutex_lock(&a->lock);
		a->cb_conn = NULL;
		a->cb_listener = NULL;
		pthread_cond_broadcast(&a->cond);
	}
	c->refs--;
	cm_conn_maybe_free(c);
	pthread_mutex_unlock(&a->lock);
	free(q);
	return true;
}

void
cm_deliver(struct cm_agent *a)
{
	while (deliver_one(a))
		;
}

/* ------------------------------------------------------------------------
 * Timers.
 */
void
cm_timer_arm(struct cm_agent *a)
{
	struct cm_conn *top = cm_heap_top(&a->heap);
	uint64_t due = top != NULL ? top->heap_key : 0;
	struct itimerspec its;

	if (a->closing && (due == 0 || a->close_deadline_ns < due))
		due = a->close_deadline_ns;
	if (due == a->armed_ns)
		return;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(due / 1000000000u);
	its.it_value.tv_nsec = (long)(due % 1000000000u);
	if (timerfd_settime(a->tfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		a->armed_ns = due;
}

/* The due timers, earliest first. A timeout the state machine refuses
 * (none due for it) only takes the connection out of the heap. */
void
cm_timers(struct cm_agent *a, uint64_t now, struct cm_batch *b)
{
	struct cm_rx rx = { .msg = NULL, .now_ns = now };
	struct cm_conn *c;

	while ((c = cm_heap_top(&a->heap)) != NULL && c->heap_key <= now) {
		if (cm_step(a, c, UROCE_CM_IN_TIMEOUT, NULL, &rx, b) != 0)
			cm_heap_set(&a->heap, c, 0);
		cm_conn_maybe_free(c);
	}
	cm_timer_arm(a);
}

/* ------------------------------------------------------------------------
 * The step.
 */
static void
step_log(const struct cm_agent *a, const struct cm_conn *c,
	 enum uroce_cm_input in, enum uroce_cm_state from,
	 const struct uroce_cm_effects *fx)
{
	if (!rte_log_can_log(cm_agent_logtype, RTE_LOG_DEBUG))
		return;
	AG_LOG(DEBUG, "%s: comm ID 0x%08x: %s: %s -> %s%s%s\n", a->dev.name,
	       c->fsm.local_comm_id, uroce_cm_input_str(in),
	       uroce_cm_state_str(from), uroce_cm_state_str(c->fsm.state),
	       (fx->fx & UROCE_CM_FX_EVENT) ? ", event " : "",
	       (fx->fx & UROCE_CM_FX_EVENT) ? uroce_cm_event_str(fx->event) : "");
}

/* The fresh answer FX_REPLY asks for, to where the message came from. */
static void
step_reply(struct cm_agent *a, struct cm_conn *c, const struct cm_rx *rx,
	   const struct uroce_cm_effects *fx, struct cm_batch *b)
{
	struct uroce_cm_msg out;

	if (rx == NULL || rx->msg == NULL ||
	    uroce_cm_reply(&c->fsm, rx->msg, fx->send_attr, fx->rej_reason,
			   &out) != 0)
		return;
	if (cm_batch_msg(a, b, &out, &rx->from, true) == 0)
		a->st.replied++;
}

/* The sends of a step: its message (@msg, encoded, kept for resends), the
 * last message again, a fresh reply. */
static int
step_sends(struct cm_agent *a, struct cm_conn *c, const struct uroce_cm_msg *msg,
	   const uint8_t *mad, const struct cm_rx *rx,
	   const struct uroce_cm_effects *fx, struct cm_batch *b)
{
	bool reply = !c->fsm.active;

	if ((fx->fx & UROCE_CM_FX_SEND) && msg != NULL) {
		memcpy(c->last_mad, mad, sizeof(c->last_mad));
		cm_batch_add(b, c->last_mad, &c->peer, reply);
	}
	if (fx->fx & UROCE_CM_FX_RESEND) {
		if (cm_batch_add(b, c->last_mad, &c->peer, reply) == 0)
			b->resends++;
	}
	if (fx->fx & UROCE_CM_FX_REPLY)
		step_reply(a, c, rx, fx, b);
	return 0;
}

int
cm_step(struct cm_agent *a, struct cm_conn *c, enum uroce_cm_input in,
	const struct uroce_cm_msg *msg, const struct cm_rx *rx,
	struct cm_batch *b)
{
	enum uroce_cm_state from = c->fsm.state;
	uint8_t mad[UROCE_MAD_LEN];
	struct uroce_cm_effects fx;
	uint64_t now = rx != NULL ? rx->now_ns : cm_now_ns();
	int ret;

	/* A message to send is encoded first: one that does not encode
	 * changes nothing. */
	if (msg != NULL && (ret = uroce_cm_encode(msg, mad)) < 0)
		return ret;
	ret = uroce_cm_step(&c->fsm, in, msg != NULL ? msg :
			    (rx != NULL ? rx->msg : NULL), now, &fx);
	if (ret != 0)
		return ret;
	step_log(a, c, in, from, &fx);
	step_sends(a, c, msg, mad, rx, &fx, b);
	if (cm_heap_set(&a->heap, c, c->fsm.deadline_ns) != 0)
		AG_LOG(ERR, "%s: comm ID 0x%08x: no memory for its timer\n",
		       a->dev.name, c->fsm.local_comm_id);
	cm_conn_update(c);
	if (fx.fx & UROCE_CM_FX_EVENT)
		cm_queue_event(a, c, fx.event, fx.rej_reason,
			       in == UROCE_CM_IN_TIMEOUT ? NULL : rx);
	cm_timer_arm(a);
	return 0;
}
