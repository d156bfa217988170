/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The CM state machine of one connection as data (IBTA vol. 1 12.9; where
 * IBTA leaves a choice, what Linux's cm.c does, so that a RoCE NIC with the
 * kernel's CM talks to us).
 *
 * One rule per (state, input): the next state, what to do (flags below) and
 * what to tell the user. uroce_cm_step() looks the rule up, checks that the
 * message belongs to the connection, and only then changes anything.
 *
 * Timers (IBTA ch. 12, as Linux's cm.c runs them): after a message that awaits an answer the sender
 * waits the peer's CM response timeout plus twice the packet life time
 * (active side: the REQ's Remote CM Response Timeout; passive side: its
 * Local CM Response Timeout), resends up to MaxCMRetries times, then gives
 * up. An MRA makes it wait the MRA's service timeout plus twice the packet
 * life time instead (Linux cm_mra_handler()).
 */

#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>

#include "cm_priv.h"

/* What a rule does besides moving to its next state. */
#define F_SEND		(1u << 0)	/* send this step's message */
#define F_WAIT		(1u << 1)	/* ... and await an answer: first send, arm */
#define F_RESEND	(1u << 2)	/* a duplicate: send the last message again */
#define F_STOP		(1u << 3)	/* the awaited answer came: stop the timer */
#define F_TW		(1u << 4)	/* arm the time-wait timer */
#define F_RETRY		(1u << 5)	/* timeout: resend, or give up (fail_*) */
#define F_MRA		(1u << 6)	/* wait the MRA's service timeout instead */
#define F_REJ		(1u << 7)	/* a REJ: "stale connection" goes to TIMEWAIT */
#define F_REPLY_REJ	(1u << 8)	/* answer with REJ "stale connection" */
#define F_REPLY_DREP	(1u << 9)	/* answer with a DREP */
#define F_LEARN		(1u << 10)	/* take the peer's comm ID, QPN, timing */

struct fsm_rule {
	bool valid;
	uint8_t next;
	uint16_t flags;
	uint8_t event;
	uint8_t fail_next;	/* F_RETRY: where the last timeout leads */
	uint8_t fail_event;
};

#define RULE(n, f, ev)	{ .valid = true, .next = UROCE_CM_ ## n, .flags = (f), \
			  .event = UROCE_CM_EV_ ## ev }
#define STAY(f, ev)	{ .valid = true, .next = 0xff, .flags = (f), \
			  .event = UROCE_CM_EV_ ## ev }
#define RETRY(fn, fev)	{ .valid = true, .next = 0xff, .flags = F_RETRY, \
			  .event = UROCE_CM_EV_NONE, .fail_next = UROCE_CM_ ## fn, \
			  .fail_event = UROCE_CM_EV_ ## fev }
#define IGNORE		STAY(0, NONE)	/* a duplicate that needs no answer */

#define IN(x)		[UROCE_CM_IN_ ## x]
#define ST(x)		[UROCE_CM_ ## x]

static const struct fsm_rule fsm[UROCE_CM_STATE_COUNT][UROCE_CM_IN_COUNT] = {
	ST(IDLE) = {
		IN(LISTEN) = RULE(LISTEN, 0, NONE),
		IN(SEND_REQ) = RULE(REQ_SENT, F_SEND | F_WAIT, NONE),
		IN(SEND_SIDR_REQ) = RULE(SIDR_REQ_SENT, F_SEND | F_WAIT, NONE),
		/* a listener's new connection, stepped with its REQ */
		IN(RECV_REQ) = RULE(REQ_RCVD, F_LEARN, REQ_RCVD),
		IN(RECV_SIDR_REQ) = RULE(SIDR_REQ_RCVD, F_LEARN, SIDR_REQ_RCVD),
	},
	ST(LISTEN) = {
		IN(RECV_REQ) = STAY(0, LISTEN_REQ),
		IN(RECV_SIDR_REQ) = STAY(0, LISTEN_REQ),
	},
	ST(REQ_SENT) = {
		IN(RECV_REP) = RULE(REP_RCVD, F_STOP | F_LEARN, REP_RCVD),
		IN(RECV_MRA) = RULE(MRA_REQ_RCVD, F_MRA, NONE),
		IN(RECV_REJ) = RULE(IDLE, F_STOP | F_REJ, REJECTED),
		IN(SEND_REJ) = RULE(IDLE, F_SEND | F_STOP, NONE),
		IN(TIMEOUT) = RETRY(IDLE, UNREACHABLE),
	},
	ST(MRA_REQ_RCVD) = {
		IN(RECV_REP) = RULE(REP_RCVD, F_STOP | F_LEARN, REP_RCVD),
		IN(RECV_MRA) = IGNORE,		/* a duplicate: no new wait */
		IN(RECV_REJ) = RULE(IDLE, F_STOP | F_REJ, REJECTED),
		IN(SEND_REJ) = RULE(IDLE, F_SEND | F_STOP, NONE),
		IN(TIMEOUT) = RETRY(IDLE, UNREACHABLE),
	},
	ST(REQ_RCVD) = {
		IN(SEND_REP) = RULE(REP_SENT, F_SEND | F_WAIT, NONE),
		IN(SEND_MRA) = RULE(MRA_REQ_SENT, F_SEND, NONE),
		IN(SEND_REJ) = RULE(IDLE, F_SEND, NONE),
		IN(RECV_REQ) = IGNORE,		/* the user has not answered yet */
		IN(RECV_REJ) = RULE(IDLE, F_REJ, REJECTED),
		IN(FORGET) = RULE(IDLE, F_STOP, NONE),
	},
	ST(MRA_REQ_SENT) = {
		IN(SEND_REP) = RULE(REP_SENT, F_SEND | F_WAIT, NONE),
		IN(SEND_REJ) = RULE(IDLE, F_SEND, NONE),
		IN(RECV_REQ) = STAY(F_RESEND, NONE),	/* the MRA again */
		IN(RECV_REJ) = RULE(IDLE, F_REJ, REJECTED),
	},
	ST(REP_SENT) = {
		IN(RECV_RTU) = RULE(ESTABLISHED, F_STOP, ESTABLISHED),
		IN(COMM_EST) = RULE(ESTABLISHED, F_STOP, ESTABLISHED),
		IN(RECV_REQ) = STAY(F_RESEND, NONE),	/* the REP again */
		IN(RECV_MRA) = RULE(MRA_REP_RCVD, F_MRA, NONE),
		IN(RECV_REJ) = RULE(IDLE, F_STOP | F_REJ, REJECTED),
		IN(RECV_DREQ) = RULE(DREQ_RCVD, F_STOP, DREQ_RCVD),
		IN(SEND_REJ) = RULE(TIMEWAIT, F_SEND | F_TW, NONE),
		IN(TIMEOUT) = RETRY(IDLE, UNREACHABLE),
	},
	ST(MRA_REP_RCVD) = {
		IN(RECV_RTU) = RULE(ESTABLISHED, F_STOP, ESTABLISHED),
		IN(COMM_EST) = RULE(ESTABLISHED, F_STOP, ESTABLISHED),
		IN(RECV_REQ) = IGNORE,
		IN(RECV_MRA) = IGNORE,		/* a duplicate: no new wait */
		IN(RECV_REJ) = RULE(IDLE, F_STOP | F_REJ, REJECTED),
		IN(RECV_DREQ) = RULE(DREQ_RCVD, F_STOP, DREQ_RCVD),
		IN(SEND_REJ) = RULE(TIMEWAIT, F_SEND | F_TW, NONE),
		IN(TIMEOUT) = RETRY(IDLE, UNREACHABLE),
	},
	ST(REP_RCVD) = {
		IN(SEND_RTU) = RULE(ESTABLISHED, F_SEND, ESTABLISHED),
		IN(SEND_MRA) = RULE(MRA_REP_SENT, F_SEND, NONE),
		IN(SEND_REJ) = RULE(IDLE, F_SEND, NONE),
		IN(RECV_REP) = IGNORE,		/* the user has not answered yet */
		IN(RECV_REJ) = RULE(TIMEWAIT, F_TW, REJECTED),
	},
	ST(MRA_REP_SENT) = {
		IN(SEND_RTU) = RULE(ESTABLISHED, F_SEND, ESTABLISHED),
		IN(SEND_REJ) = RULE(IDLE, F_SEND, NONE),
		IN(RECV_REP) = STAY(F_RESEND, NONE),	/* the MRA again */
		IN(RECV_REJ) = RULE(TIMEWAIT, F_TW, REJECTED),
	},
	ST(ESTABLISHED) = {
		IN(SEND_DREQ) = RULE(DREQ_SENT, F_SEND | F_WAIT, NONE),
		IN(RECV_DREQ) = RULE(DREQ_RCVD, 0, DREQ_RCVD),
		IN(RECV_REP) = STAY(F_RESEND, NONE),	/* our RTU was lost */
		IN(RECV_RTU) = IGNORE,
		IN(COMM_EST) = IGNORE,
		IN(RECV_REJ) = RULE(TIMEWAIT, F_TW, REJECTED),
	},
	ST(DREQ_SENT) = {
		IN(RECV_DREP) = RULE(TIMEWAIT, F_TW, DISCONNECTED),
		IN(RECV_DREQ) = RULE(DREQ_RCVD, F_STOP, DREQ_RCVD),
		IN(RECV_REJ) = RULE(TIMEWAIT, F_TW, REJECTED),
		IN(RECV_RTU) = IGNORE,
		IN(TIMEOUT) = RETRY(TIMEWAIT, DISCONNECTED),
	},
	ST(DREQ_RCVD) = {
		IN(SEND_DREP) = RULE(TIMEWAIT, F_SEND | F_TW, NONE),
		/* both sides sent a DREQ; ours is answered (Linux cm_drep_handler()) */
		IN(RECV_DREP) = RULE(TIMEWAIT, F_TW, DISCONNECTED),
		IN(RECV_DREQ) = IGNORE,		/* the user has not answered yet */
		IN(RECV_RTU) = IGNORE,
	},
	ST(TIMEWAIT) = {
		IN(RECV_DREQ) = STAY(F_REPLY_DREP, NONE),
		IN(RECV_REQ) = STAY(F_REPLY_REJ, NONE),
		IN(RECV_REP) = IGNORE,
		IN(RECV_RTU) = IGNORE,
		IN(RECV_DREP) = IGNORE,
		IN(RECV_REJ) = IGNORE,
		IN(TIMEOUT) = RULE(IDLE, 0, TIMEWAIT_EXIT),
	},
	ST(SIDR_REQ_SENT) = {
		IN(RECV_SIDR_REP) = RULE(IDLE, F_STOP, SIDR_REP_RCVD),
		IN(TIMEOUT) = RETRY(IDLE, UNREACHABLE),
	},
	ST(SIDR_REQ_RCVD) = {
		IN(SEND_SIDR_REP) = RULE(IDLE, F_SEND, NONE),
		IN(RECV_SIDR_REQ) = IGNORE,
	},
};

/* The message type each input carries (0: none). */
static const uint16_t input_attr[UROCE_CM_IN_COUNT] = {
	IN(SEND_REQ) = UROCE_CM_ATTR_REQ,
	IN(SEND_MRA) = UROCE_CM_ATTR_MRA,
	IN(SEND_REJ) = UROCE_CM_ATTR_REJ,
	IN(SEND_REP) = UROCE_CM_ATTR_REP,
	IN(SEND_RTU) = UROCE_CM_ATTR_RTU,
	IN(SEND_DREQ) = UROCE_CM_ATTR_DREQ,
	IN(SEND_DREP) = UROCE_CM_ATTR_DREP,
	IN(SEND_SIDR_REQ) = UROCE_CM_ATTR_SIDR_REQ,
	IN(SEND_SIDR_REP) = UROCE_CM_ATTR_SIDR_REP,
	IN(RECV_REQ) = UROCE_CM_ATTR_REQ,
	IN(RECV_MRA) = UROCE_CM_ATTR_MRA,
	IN(RECV_REJ) = UROCE_CM_ATTR_REJ,
	IN(RECV_REP) = UROCE_CM_ATTR_REP,
	IN(RECV_RTU) = UROCE_CM_ATTR_RTU,
	IN(RECV_DREQ) = UROCE_CM_ATTR_DREQ,
	IN(RECV_DREP) = UROCE_CM_ATTR_DREP,
	IN(RECV_SIDR_REQ) = UROCE_CM_ATTR_SIDR_REQ,
	IN(RECV_SIDR_REP) = UROCE_CM_ATTR_SIDR_REP,
};

static bool
input_is_recv(enum uroce_cm_input in)
{
	return in >= UROCE_CM_IN_RECV_REQ && in <= UROCE_CM_IN_RECV_SIDR_REP;
}

void
uroce_cm_conn_init(struct uroce_cm_conn *c, uint32_t local_comm_id,
		   const struct uroce_cm_timing *t)
{
	memset(c, 0, sizeof(*c));
	c->state = UROCE_CM_IDLE;
	c->local_comm_id = local_comm_id;
	c->timing = *t;
	c->max_cm_retries = t->max_cm_retries;
}

/* Response wait for a peer answering within 4.096 us x 2^@resp_exp. */
static uint64_t
resp_wait_ns(const struct uroce_cm_conn *c, uint8_t resp_exp)
{
	return uroce_cm_time_ns(resp_exp) + 2 * uroce_cm_time_ns(c->timing.packet_life);
}

/* The two comm IDs of MRA, REJ, REP, RTU, DREQ and DREP: each message
 * struct starts with them (a common initial sequence of the union). */
static uint32_t
msg_local_id(const struct uroce_cm_msg *m)
{
	return m->rtu.local_comm_id;
}

static uint32_t
msg_remote_id(const struct uroce_cm_msg *m)
{
	return m->rtu.remote_comm_id;
}

/* A message this side sends must carry this connection's comm IDs. */
static int
check_sent(const struct uroce_cm_conn *c, const struct uroce_cm_msg *m)
{
	switch (m->hdr.attr_id) {
	case UROCE_CM_ATTR_REQ:
		if (m->req.max_cm_retries > 15 || m->req.remote_cm_resp_timeout > 31)
			return -EINVAL;
		return m->req.local_comm_id == c->local_comm_id ? 0 : -EINVAL;
	case UROCE_CM_ATTR_SIDR_REQ:
		return m->sidr_req.request_id == c->local_comm_id ? 0 : -EINVAL;
	case UROCE_CM_ATTR_SIDR_REP:
		return m->sidr_rep.request_id == c->remote_comm_id ? 0 : -EINVAL;
	default:
		return msg_local_id(m) == c->local_comm_id &&
		       msg_remote_id(m) == c->remote_comm_id ? 0 : -EINVAL;
	}
}

/* A received message must be addressed to this connection: its Remote
 * Communication ID is ours, its Local one the peer's. */
static int
check_rcvd(const struct uroce_cm_conn *c, const struct uroce_cm_msg *m)
{
	bool is_new = c->state == UROCE_CM_IDLE || c->state == UROCE_CM_LISTEN;

	switch (m->hdr.attr_id) {
	case UROCE_CM_ATTR_REQ:
		return is_new || m->req.local_comm_id == c->remote_comm_id ? 0 : -ENOENT;
	case UROCE_CM_ATTR_SIDR_REQ:
		return is_new || m->sidr_req.request_id == c->remote_comm_id ? 0 : -ENOENT;
	case UROCE_CM_ATTR_SIDR_REP:
		return m->sidr_rep.request_id == c->local_comm_id ? 0 : -ENOENT;
	case UROCE_CM_ATTR_REP:
		if (msg_remote_id(m) != c->local_comm_id)
			return -ENOENT;
		return c->remote_comm_id == 0 ||
		       msg_local_id(m) == c->remote_comm_id ? 0 : -ENOENT;
	case UROCE_CM_ATTR_MRA:
	case UROCE_CM_ATTR_REJ:
		/* Before the REP the peer's comm ID is unknown (Linux matches
		 * an MRA or a REJ of a REQ on ours alone), and a REJ of a REQ
		 * may carry local comm ID 0 (Linux's does). An active side
		 * that gives up before our REP reached it (REJ Timeout from
		 * REQ_SENT) knows no comm ID of ours: its REJ names only its
		 * own (Linux cm_acquire_rejected_id()). */
		if (m->hdr.attr_id == UROCE_CM_ATTR_REJ && msg_remote_id(m) == 0 &&
		    !c->active && c->remote_comm_id != 0)
			return msg_local_id(m) == c->remote_comm_id ? 0 : -ENOENT;
		if (msg_remote_id(m) != c->local_comm_id)
			return -ENOENT;
		return msg_local_id(m) == 0 || c->remote_comm_id == 0 ||
		       msg_local_id(m) == c->remote_comm_id ? 0 : -ENOENT;
	case UROCE_CM_ATTR_DREQ:
		/* ... and a DREQ names our QP (Linux cm_dreq_handler()). */
		if (m->dreq.remote_qpn != c->local_qpn)
			return -ENOENT;
		/* fall through */
	default:
		return msg_remote_id(m) == c->local_comm_id &&
		       msg_local_id(m) == c->remote_comm_id ? 0 : -ENOENT;
	}
}

/* An MRA must name the message this side awaits an answer to. */
static int
check_mra(const struct uroce_cm_conn *c, const struct uroce_cm_msg *m)
{
	bool req = c->state == UROCE_CM_REQ_SENT || c->state == UROCE_CM_MRA_REQ_RCVD;

	return m->mra.msg_mraed == (req ? UROCE_CM_MSG_REQ : UROCE_CM_MSG_REP) &&
	       m->mra.service_timeout <= 31 ? 0 : -EINVAL;
}

static int
check_input(const struct uroce_cm_conn *c, const struct fsm_rule *r,
	    enum uroce_cm_input in, const struct uroce_cm_msg *msg, uint64_t now)
{
	int ret;

	if (input_attr[in] != 0 && (msg == NULL || msg->hdr.attr_id != input_attr[in]))
		return -EINVAL;
	if (in == UROCE_CM_IN_TIMEOUT && (c->deadline_ns == 0 || now < c->deadline_ns))
		return -EINVAL;		/* no timer due: a stale timeout */
	if (input_attr[in] != 0) {
		ret = input_is_recv(in) ? check_rcvd(c, msg) : check_sent(c, msg);
		if (ret != 0)
			return ret;
	}
	if (in == UROCE_CM_IN_RECV_MRA && check_mra(c, msg) != 0)
		return -EINVAL;
	/* Resending the RTU for a duplicate REP: only the side that sent one. */
	if ((r->flags & F_RESEND) && c->state == UROCE_CM_ESTABLISHED &&
	    c->last_sent != UROCE_CM_ATTR_RTU)
		return -EINVAL;
	return 0;
}

/* The peer's comm ID, QPN and timing from its REQ, SIDR_REQ or REP. */
static void
learn(struct uroce_cm_conn *n, const struct uroce_cm_msg *m)
{
	switch (m->hdr.attr_id) {
	case UROCE_CM_ATTR_REQ:
		n->active = false;
		n->remote_comm_id = m->req.local_comm_id;
		n->remote_qpn = m->req.local_qpn;
		n->max_cm_retries = m->req.max_cm_retries & 15;
		n->wait_ns = resp_wait_ns(n, m->req.local_cm_resp_timeout & 31);
		break;
	case UROCE_CM_ATTR_SIDR_REQ:
		n->active = false;
		n->remote_comm_id = m->sidr_req.request_id;
		break;
	case UROCE_CM_ATTR_REP:
		n->remote_comm_id = m->rep.local_comm_id;
		n->remote_qpn = m->rep.local_qpn;
		break;
	default:
		break;
	}
}

/* The first send of a REQ or SIDR_REQ fixes how long to wait for answers. */
static void
start_active(struct uroce_cm_conn *n, const struct uroce_cm_msg *m)
{
	n->active = true;
	if (m->hdr.attr_id == UROCE_CM_ATTR_REQ) {
		n->max_cm_retries = m->req.max_cm_retries;
		n->wait_ns = resp_wait_ns(n, m->req.remote_cm_resp_timeout);
	} else {
		n->max_cm_retries = n->timing.max_cm_retries;
		n->wait_ns = resp_wait_ns(n, n->timing.cm_resp_timeout);
	}
}

/* A timeout: resend while retries remain, else the rule's failure. */
static void
retry(struct uroce_cm_conn *n, const struct fsm_rule *r, uint64_t now,
      struct uroce_cm_effects *e, uint8_t *next, bool *tw)
{
	if (n->sends <= n->max_cm_retries) {
		n->sends++;
		n->deadline_ns = now + n->wait_ns;
		e->fx |= UROCE_CM_FX_RESEND | UROCE_CM_FX_TIMER;
		e->send_attr = n->last_sent;
		return;
	}
	n->sends = 0;
	*next = r->fail_next;
	e->event = r->fail_event;
	*tw = *next == UROCE_CM_TIMEWAIT;
}

static void
apply(struct uroce_cm_conn *n, const struct fsm_rule *r, enum uroce_cm_input in,
      const struct uroce_cm_msg *msg, uint64_t now, struct uroce_cm_effects *e)
{
	uint8_t next = r->next == 0xff ? (uint8_t)n->state : r->next;
	bool tw = (r->flags & F_TW) != 0;

	e->event = r->event;
	if (in == UROCE_CM_IN_TIMEOUT)
		n->deadline_ns = 0;	/* it has fired */
	if (r->flags & F_LEARN)
		learn(n, msg);
	if (in == UROCE_CM_IN_SEND_REQ || in == UROCE_CM_IN_SEND_SIDR_REQ)
		start_active(n, msg);
	if (in == UROCE_CM_IN_SEND_REQ)
		n->local_qpn = msg->req.local_qpn;
	if (in == UROCE_CM_IN_SEND_REP)
		n->local_qpn = msg->rep.local_qpn;
	if (r->flags & F_SEND) {
		e->fx |= UROCE_CM_FX_SEND;
		e->send_attr = input_attr[in];
		n->last_sent = input_attr[in];
	}
	if (r->flags & F_STOP) {
		e->fx |= UROCE_CM_FX_STOP;
		n->deadline_ns = 0;
		n->sends = 0;
	}
	if (r->flags & F_WAIT) {
		n->sends = 1;
		n->deadline_ns = now + n->wait_ns;
		e->fx |= UROCE_CM_FX_TIMER;
	}
	if (r->flags & F_RESEND) {
		e->fx |= UROCE_CM_FX_RESEND;
		e->send_attr = n->last_sent;
	}
	if (r->flags & F_MRA) {
		n->wait_ns = resp_wait_ns(n, msg->mra.service_timeout);
		n->deadline_ns = now + n->wait_ns;
		e->fx |= UROCE_CM_FX_TIMER;
	}
	if (r->event == UROCE_CM_EV_REJECTED)
		e->rej_reason = msg->rej.reason;
	if ((r->flags & F_REJ) && msg->rej.reason == UROCE_CM_REJ_STALE_CONN) {
		next = UROCE_CM_TIMEWAIT;	/* Linux cm_rej_handler() */
		tw = true;
	}
	if (r->flags & F_REPLY_REJ) {
		e->fx |= UROCE_CM_FX_REPLY;
		e->send_attr = UROCE_CM_ATTR_REJ;
		e->rej_reason = UROCE_CM_REJ_STALE_CONN;
	}
	if (r->flags & F_REPLY_DREP) {
		e->fx |= UROCE_CM_FX_REPLY;
		e->send_attr = UROCE_CM_ATTR_DREP;
	}
	if (r->flags & F_RETRY)
		retry(n, r, now, e, &next, &tw);
	if (tw) {
		n->deadline_ns = now + uroce_cm_timewait_ns(&n->timing);
		n->sends = 0;
		e->fx = (e->fx & ~UROCE_CM_FX_STOP) | UROCE_CM_FX_TIMER;
	}
	if (e->fx & UROCE_CM_FX_TIMER)
		e->deadline_ns = n->deadline_ns;
	if (e->event != UROCE_CM_EV_NONE)
		e->fx |= UROCE_CM_FX_EVENT;
	n->state = (enum uroce_cm_state)next;
}

int
uroce_cm_step(struct uroce_cm_conn *c, enum uroce_cm_input in,
	      const struct uroce_cm_msg *msg, uint64_t now_ns,
	      struct uroce_cm_effects *fx)
{
	struct uroce_cm_effects e;
	struct uroce_cm_conn n;
	const struct fsm_rule *r;
	int ret;

	if (c == NULL || fx == NULL || (unsigned int)c->state >= UROCE_CM_STATE_COUNT ||
	    (unsigned int)in >= UROCE_CM_IN_COUNT)
		return -EINVAL;
	r = &fsm[c->state][in];
	if (!r->valid)
		return -EINVAL;
	ret = check_input(c, r, in, msg, now_ns);
	if (ret != 0) {
		CM_LOG(DEBUG, "comm ID 0x%08x: %s in %s refused (%d)\n",
		       c->local_comm_id, uroce_cm_input_str(in),
		       uroce_cm_state_str(c->state), ret);
		return ret;
	}
	memset(&e, 0, sizeof(e));
	n = *c;
	apply(&n, r, in, msg, now_ns, &e);
	*c = n;
	*fx = e;
	return 0;
}

/* Which message a REJ rejects (IBTA Table 108 Message REJected). */
static uint8_t
rejected_type(uint16_t attr)
{
	if (attr == UROCE_CM_ATTR_REQ)
		return UROCE_CM_MSG_REQ;
	return attr == UROCE_CM_ATTR_REP ? UROCE_CM_MSG_REP : UROCE_CM_MSG_OTHER;
}

int
uroce_cm_reply(const struct uroce_cm_conn *c, const struct uroce_cm_msg *rcv,
	       uint16_t attr, uint16_t reason, struct uroce_cm_msg *out)
{
	uint32_t peer, ours;

	if (rcv == NULL || out == NULL)
		return -EINVAL;
	switch (rcv->hdr.attr_id) {
	case UROCE_CM_ATTR_REQ:
		peer = rcv->req.local_comm_id;
		ours = 0;	/* a REQ names no comm ID of ours */
		break;
	case UROCE_CM_ATTR_REP:
	case UROCE_CM_ATTR_DREQ:
		peer = msg_local_id(rcv);
		ours = msg_remote_id(rcv);
		break;
	default:
		return -EINVAL;
	}
	if (c != NULL) {
		peer = c->remote_comm_id;
		ours = c->local_comm_id;
	}
	if (attr == UROCE_CM_ATTR_REJ && rcv->hdr.attr_id != UROCE_CM_ATTR_DREQ) {
		uroce_cm_msg_init(out, attr, rcv->hdr.tid);
		out->rej.local_comm_id = ours;
		out->rej.remote_comm_id = peer;
		out->rej.msg_rejected = rejected_type(rcv->hdr.attr_id);
		out->rej.reason = reason;
		return 0;
	}
	if (attr == UROCE_CM_ATTR_DREP && rcv->hdr.attr_id == UROCE_CM_ATTR_DREQ) {
		uroce_cm_msg_init(out, attr, rcv->hdr.tid);
		out->drep.local_comm_id = ours;
		out->drep.remote_comm_id = peer;
		return 0;
	}
	return -EINVAL;
}

int
uroce_cm_unmatched(const struct uroce_cm_msg *rcv, bool stale,
		   struct uroce_cm_msg *out)
{
	int ret;

	if (rcv == NULL || out == NULL)
		return -EINVAL;
	switch (rcv->hdr.attr_id) {
	case UROCE_CM_ATTR_REQ:
		ret = uroce_cm_reply(NULL, rcv, UROCE_CM_ATTR_REJ,
				     stale ? UROCE_CM_REJ_STALE_CONN :
					     UROCE_CM_REJ_INVALID_SERVICE_ID, out);
		break;
	case UROCE_CM_ATTR_REP:
		if (!stale)
			return 0;
		ret = uroce_cm_reply(NULL, rcv, UROCE_CM_ATTR_REJ,
				     UROCE_CM_REJ_STALE_CONN, out);
		break;
	case UROCE_CM_ATTR_DREQ:
		ret = uroce_cm_reply(NULL, rcv, UROCE_CM_ATTR_DREP, 0, out);
		break;
	case UROCE_CM_ATTR_SIDR_REQ:	/* Linux cm_sidr_req_handler() */
		uroce_cm_msg_init(out, UROCE_CM_ATTR_SIDR_REP, rcv->hdr.tid);
		out->sidr_rep.request_id = rcv->sidr_req.request_id;
		out->sidr_rep.status = UROCE_CM_SIDR_UNSUPPORTED;
		out->sidr_rep.service_id = rcv->sidr_req.service_id;
		return 1;
	default:
		return 0;
	}
	return ret == 0 ? 1 : ret;
}

/* ---------------------------------------------------------------------------
 * Names for logs.
 */
static const char *const state_names[UROCE_CM_STATE_COUNT] = {
	ST(IDLE) = "IDLE",
	ST(LISTEN) = "LISTEN",
	ST(REQ_SENT) = "REQ_SENT",
	ST(REQ_RCVD) = "REQ_RCVD",
	ST(MRA_REQ_SENT) = "MRA_REQ_SENT",
	ST(MRA_REQ_RCVD) = "MRA_REQ_RCVD",
	ST(REP_SENT) = "REP_SENT",
	ST(REP_RCVD) = "REP_RCVD",
	ST(MRA_REP_SENT) = "MRA_REP_SENT",
	ST(MRA_REP_RCVD) = "MRA_REP_RCVD",
	ST(ESTABLISHED) = "ESTABLISHED",
	ST(DREQ_SENT) = "DREQ_SENT",
	ST(DREQ_RCVD) = "DREQ_RCVD",
	ST(TIMEWAIT) = "TIMEWAIT",
	ST(SIDR_REQ_SENT) = "SIDR_REQ_SENT",
	ST(SIDR_REQ_RCVD) = "SIDR_REQ_RCVD",
};

static const char *const input_names[UROCE_CM_IN_COUNT] = {
	IN(LISTEN) = "listen",
	IN(SEND_REQ) = "send REQ",
	IN(SEND_MRA) = "send MRA",
	IN(SEND_REJ) = "send REJ",
	IN(SEND_REP) = "send REP",
	IN(SEND_RTU) = "send RTU",
	IN(SEND_DREQ) = "send DREQ",
	IN(SEND_DREP) = "send DREP",
	IN(SEND_SIDR_REQ) = "send SIDR_REQ",
	IN(SEND_SIDR_REP) = "send SIDR_REP",
	IN(COMM_EST) = "communication established",
	IN(RECV_REQ) = "REQ received",
	IN(RECV_MRA) = "MRA received",
	IN(RECV_REJ) = "REJ received",
	IN(RECV_REP) = "REP received",
	IN(RECV_RTU) = "RTU received",
	IN(RECV_DREQ) = "DREQ received",
	IN(RECV_DREP) = "DREP received",
	IN(RECV_SIDR_REQ) = "SIDR_REQ received",
	IN(RECV_SIDR_REP) = "SIDR_REP received",
	IN(TIMEOUT) = "timeout",
	IN(FORGET) = "forget",
};

static const char *const event_names[UROCE_CM_EV_COUNT] = {
	[UROCE_CM_EV_NONE] = "none",
	[UROCE_CM_EV_REQ_RCVD] = "REQ received",
	[UROCE_CM_EV_REP_RCVD] = "REP received",
	[UROCE_CM_EV_ESTABLISHED] = "established",
	[UROCE_CM_EV_REJECTED] = "rejected",
	[UROCE_CM_EV_UNREACHABLE] = "unreachable",
	[UROCE_CM_EV_DREQ_RCVD] = "DREQ received",
	[UROCE_CM_EV_DISCONNECTED] = "disconnected",
	[UROCE_CM_EV_TIMEWAIT_EXIT] = "time-wait exit",
	[UROCE_CM_EV_SIDR_REQ_RCVD] = "SIDR_REQ received",
	[UROCE_CM_EV_SIDR_REP_RCVD] = "SIDR_REP received",
	[UROCE_CM_EV_LISTEN_REQ] = "request on a listener",
};

const char *
uroce_cm_state_str(enum uroce_cm_state s)
{
	return (unsigned int)s < UROCE_CM_STATE_COUNT ? state_names[s] : "?";
}

const char *
uroce_cm_input_str(enum uroce_cm_input in)
{
	return (unsigned int)in < UROCE_CM_IN_COUNT ? input_names[in] : "?";
}

const char *
uroce_cm_event_str(enum uroce_cm_event ev)
{
	return (unsigned int)ev < UROCE_CM_EV_COUNT ? event_names[ev] : "?";
}
