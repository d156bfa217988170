/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The CM state machine (lib/cm/cm_fsm.c) on a fake clock: both sides of the
 * handshake REQ -> REP -> RTU with every message through encode/decode, a
 * reject with private data, no listener (REJ 8), a lost REQ retried then
 * UNREACHABLE after MaxCMRetries + 1 sends at the right times, MRA
 * extending the wait, duplicates answered with the same reply, DREQ/DREP
 * from either side, a lost DREQ, time-wait and its expiry, and every
 * (state, input) pair this file's own list forbids refused with nothing
 * changed.
 */
#include <errno.h>
#include <string.h>

#include "uroce_test.h"
#include "uroce_cm.h"

#define ID_A		0xa1a1a1a1u	/* active side's comm ID */
#define ID_P		0xb2b2b2b2u	/* passive side's */
#define QPN_A		0x000111
#define QPN_P		0x000222
#define RESP_A		10	/* the REQ's remote CM response timeout */
#define RESP_P		11	/* the REQ's local CM response timeout */
#define RETRIES		3
#define LIFE		4

static const struct uroce_cm_timing timing = {
	.cm_resp_timeout = 12, .max_cm_retries = 2, .packet_life = LIFE,
};

/* What each side waits for an answer: the peer's response timeout plus
 * twice the packet life time, 4.096 us x 2^n each. */
#define T(n)		(4096ull << (n))
#define WAIT_A		(T(RESP_A) + 2 * T(LIFE))
#define WAIT_P		(T(RESP_P) + 2 * T(LIFE))
#define TIMEWAIT	T(LIFE + 1)

/* A message through the codec, the way it crosses the wire. */
static struct uroce_cm_msg
wire(const struct uroce_cm_msg *m)
{
	uint8_t mad[UROCE_MAD_LEN];
	struct uroce_cm_msg d;

	memset(&d, 0, sizeof(d));
	UT_CHECK_EQ(uroce_cm_encode(m, mad), 0);
	UT_CHECK_EQ(uroce_cm_decode(mad, sizeof(mad), &d), 0);
	return d;
}

static struct uroce_cm_msg
mk(uint16_t attr, uint32_t local, uint32_t remote)
{
	struct uroce_cm_msg m;

	uroce_cm_msg_init(&m, attr, 0x2a);
	switch (attr) {
	case UROCE_CM_ATTR_REQ:
		m.req.local_comm_id = local;
		m.req.local_qpn = QPN_A;
		m.req.service_id = uroce_cma_service_id(UROCE_RDMA_PS_TCP, 7471);
		m.req.remote_cm_resp_timeout = RESP_A;
		m.req.local_cm_resp_timeout = RESP_P;
		m.req.max_cm_retries = RETRIES;
		m.req.path_mtu = 5;
		break;
	case UROCE_CM_ATTR_SIDR_REQ:
		m.sidr_req.request_id = local;
		break;
	case UROCE_CM_ATTR_SIDR_REP:
		m.sidr_rep.request_id = remote;
		break;
	default:
		m.rtu.local_comm_id = local;
		m.rtu.remote_comm_id = remote;
		break;
	}
	if (attr == UROCE_CM_ATTR_REP)
		m.rep.local_qpn = QPN_P;
	if (attr == UROCE_CM_ATTR_DREQ)	/* the QP of the side it goes to */
		m.dreq.remote_qpn = local == ID_A ? QPN_P : QPN_A;
	return m;
}

static struct uroce_cm_effects fx;

/* One step that must succeed. */
#define STEP(c, in, msg, now) \
	UT_CHECK_EQ(uroce_cm_step((c), UROCE_CM_IN_ ## in, (msg), (now), &fx), 0)

static void
expect(const struct uroce_cm_conn *c, enum uroce_cm_state st, unsigned int f,
       uint16_t send, enum uroce_cm_event ev, const char *what)
{
	UT_CHECK_EQ(c->state, st);
	UT_CHECK_EQ(fx.fx, f);
	if (f & (UROCE_CM_FX_SEND | UROCE_CM_FX_RESEND | UROCE_CM_FX_REPLY))
		UT_CHECK_EQ(fx.send_attr, send);
	UT_CHECK_EQ(fx.event, ev);
	UT_NOTE("%s (state %s, event %s)", what, uroce_cm_state_str(c->state),
		uroce_cm_event_str(fx.event));
}

#define SEND	UROCE_CM_FX_SEND
#define RESEND	UROCE_CM_FX_RESEND
#define TIMER	UROCE_CM_FX_TIMER
#define STOP	UROCE_CM_FX_STOP
#define EVENT	UROCE_CM_FX_EVENT
#define REPLY	UROCE_CM_FX_REPLY
#define S(x)	UROCE_CM_ ## x
#define A(x)	UROCE_CM_ATTR_ ## x
#define E(x)	UROCE_CM_EV_ ## x

/* The handshake up to ESTABLISHED on both sides, starting at @t0. */
static void
connect(struct uroce_cm_conn *a, struct uroce_cm_conn *p, uint64_t t0)
{
	struct uroce_cm_conn l;
	struct uroce_cm_msg m, r;

	uroce_cm_conn_init(a, ID_A, &timing);
	uroce_cm_conn_init(p, ID_P, &timing);
	uroce_cm_conn_init(&l, 0, &timing);
	STEP(&l, LISTEN, NULL, t0);
	UT_CHECK_EQ(l.state, S(LISTEN));

	m = mk(A(REQ), ID_A, 0);
	STEP(a, SEND_REQ, &m, t0);
	expect(a, S(REQ_SENT), SEND | TIMER, A(REQ), E(NONE), "REQ sent");
	UT_CHECK_EQ(fx.deadline_ns, t0 + WAIT_A);

	r = wire(&m);
	STEP(&l, RECV_REQ, &r, t0 + 10);
	expect(&l, S(LISTEN), EVENT, 0, E(LISTEN_REQ), "listener");
	STEP(p, RECV_REQ, &r, t0 + 10);
	expect(p, S(REQ_RCVD), EVENT, 0, E(REQ_RCVD), "REQ received");
	UT_CHECK_EQ(p->remote_comm_id, ID_A);
	UT_CHECK_EQ(p->remote_qpn, QPN_A);
	UT_CHECK_EQ(p->max_cm_retries, RETRIES);

	m = mk(A(REP), ID_P, ID_A);
	STEP(p, SEND_REP, &m, t0 + 20);
	expect(p, S(REP_SENT), SEND | TIMER, A(REP), E(NONE), "REP sent");
	UT_CHECK_EQ(fx.deadline_ns, t0 + 20 + WAIT_P);

	r = wire(&m);
	STEP(a, RECV_REP, &r, t0 + 30);
	expect(a, S(REP_RCVD), STOP | EVENT, 0, E(REP_RCVD), "REP received");
	UT_CHECK_EQ(a->remote_comm_id, ID_P);
	UT_CHECK_EQ(a->remote_qpn, QPN_P);
	UT_CHECK_EQ(a->deadline_ns, 0);

	m = mk(A(RTU), ID_A, ID_P);
	STEP(a, SEND_RTU, &m, t0 + 40);
	expect(a, S(ESTABLISHED), SEND | EVENT, A(RTU), E(ESTABLISHED), "RTU sent");
	r = wire(&m);
	STEP(p, RECV_RTU, &r, t0 + 50);
	expect(p, S(ESTABLISHED), STOP | EVENT, 0, E(ESTABLISHED), "RTU received");
	UT_CHECK_EQ(p->deadline_ns, 0);
}

/* Put an established connection in state @st (for inputs that need it). */
static void
conn_goto(struct uroce_cm_conn *c, enum uroce_cm_state st)
{
	c->state = st;
	c->deadline_ns = 0;
}

static void
test_handshake_and_dups(void)
{
	struct uroce_cm_conn a, p, before;
	struct uroce_cm_msg m;

	connect(&a, &p, 1000);
	/* Our RTU was lost: a duplicate REP gets the RTU again. */
	m = mk(A(REP), ID_P, ID_A);
	STEP(&a, RECV_REP, &m, 2000);
	expect(&a, S(ESTABLISHED), RESEND, A(RTU), E(NONE), "dup REP");
	/* ... but not on the passive side, which sent no RTU. */
	before = p;
	m = mk(A(REP), ID_A, ID_P);
	UT_CHECK_EQ(uroce_cm_step(&p, UROCE_CM_IN_RECV_REP, &m, 2000, &fx), -EINVAL);
	UT_CHECK_MEM(&p, &before, sizeof(p));
	/* A duplicate RTU changes nothing. */
	m = mk(A(RTU), ID_A, ID_P);
	STEP(&p, RECV_RTU, &m, 2000);
	expect(&p, S(ESTABLISHED), 0, 0, E(NONE), "dup RTU");
}

/* A request the user has no room for (its listener's backlog full) is
 * forgotten with nothing sent; the peer's resend of the same REQ is then
 * a new request. Only a received request can be forgotten. */
static void
test_forget(void)
{
	struct uroce_cm_conn a, p;
	struct uroce_cm_msg req = mk(A(REQ), ID_A, 0);

	uroce_cm_conn_init(&a, ID_A, &timing);
	uroce_cm_conn_init(&p, ID_P, &timing);
	STEP(&a, SEND_REQ, &req, 0);
	STEP(&p, RECV_REQ, &req, 5);
	STEP(&p, FORGET, NULL, 6);
	expect(&p, S(IDLE), STOP, 0, E(NONE), "request forgotten");
	UT_CHECK_EQ(p.deadline_ns, 0);
	STEP(&p, RECV_REQ, &req, 7);
	expect(&p, S(REQ_RCVD), EVENT, 0, E(REQ_RCVD), "the resend, a new request");
	UT_CHECK_EQ(uroce_cm_step(&a, UROCE_CM_IN_FORGET, NULL, 8, &fx), -EINVAL);
	UT_CHECK_EQ(a.state, S(REQ_SENT));
}

static void
test_dup_req_in_rep_sent(void)
{
	struct uroce_cm_conn a, p;
	struct uroce_cm_msg req = mk(A(REQ), ID_A, 0), rep = mk(A(REP), ID_P, ID_A);
	uint64_t dl;

	uroce_cm_conn_init(&a, ID_A, &timing);
	uroce_cm_conn_init(&p, ID_P, &timing);
	STEP(&a, SEND_REQ, &req, 0);
	STEP(&p, RECV_REQ, &req, 5);
	STEP(&p, RECV_REQ, &req, 6);	/* the user has not answered: dropped */
	expect(&p, S(REQ_RCVD), 0, 0, E(NONE), "dup REQ in REQ_RCVD");
	STEP(&p, SEND_REP, &rep, 7);
	dl = p.deadline_ns;
	STEP(&p, RECV_REQ, &req, 8);
	expect(&p, S(REP_SENT), RESEND, A(REP), E(NONE), "dup REQ in REP_SENT");
	UT_CHECK_EQ(p.deadline_ns, dl);
	/* A REQ from another comm ID is not this connection's. */
	req.req.local_comm_id = ID_A + 1;
	UT_CHECK_EQ(uroce_cm_step(&p, UROCE_CM_IN_RECV_REQ, &req, 9, &fx), -ENOENT);
	/* The RTU never comes: the REP is sent MaxCMRetries + 1 times. */
	for (int i = 1; i <= RETRIES; i++) {
		STEP(&p, TIMEOUT, NULL, 7 + i * WAIT_P);
		expect(&p, S(REP_SENT), RESEND | TIMER, A(REP), E(NONE), "REP resent");
	}
	STEP(&p, TIMEOUT, NULL, 7 + (RETRIES + 1) * WAIT_P);
	expect(&p, S(IDLE), EVENT, 0, E(UNREACHABLE), "REP unanswered");
}

static void
test_reject(void)
{
	static const char why[] = "not now, thank you";
	struct uroce_cm_conn a, p;
	struct uroce_cm_msg req = mk(A(REQ), ID_A, 0), rej, r;

	uroce_cm_conn_init(&a, ID_A, &timing);
	uroce_cm_conn_init(&p, ID_P, &timing);
	STEP(&a, SEND_REQ, &req, 0);
	STEP(&p, RECV_REQ, &req, 5);
	rej = mk(A(REJ), ID_P, ID_A);
	rej.rej.reason = UROCE_CM_REJ_CONSUMER_DEFINED;
	UT_CHECK_EQ(uroce_cma_pack(&rej, NULL, why, sizeof(why)), 0);
	STEP(&p, SEND_REJ, &rej, 6);
	expect(&p, S(IDLE), SEND, A(REJ), E(NONE), "REJ sent");
	r = wire(&rej);
	STEP(&a, RECV_REJ, &r, 7);
	expect(&a, S(IDLE), STOP | EVENT, 0, E(REJECTED), "REJ received");
	UT_CHECK_EQ(fx.rej_reason, 28);
	UT_CHECK_MEM(r.rej.private_data, why, sizeof(why));
	UT_CHECK_EQ(a.deadline_ns, 0);

	/* The active side rejects the REP: the passive side's QP has been
	 * used, so it waits out time-wait (Linux cm_rej_handler()). */
	connect(&a, &p, 0);
	conn_goto(&a, S(REP_RCVD));
	rej = mk(A(REJ), ID_P, ID_A);
	rej.rej.reason = UROCE_CM_REJ_CONSUMER_DEFINED;
	STEP(&a, RECV_REJ, &rej, 10);
	expect(&a, S(TIMEWAIT), TIMER | EVENT, 0, E(REJECTED), "REJ in REP_RCVD");
	UT_CHECK_EQ(fx.deadline_ns, 10 + TIMEWAIT);
	/* A REJ "stale connection" of a received REQ: time-wait too. */
	conn_goto(&p, S(REQ_RCVD));
	rej = mk(A(REJ), ID_A, ID_P);
	rej.rej.reason = UROCE_CM_REJ_STALE_CONN;
	STEP(&p, RECV_REJ, &rej, 20);
	expect(&p, S(TIMEWAIT), TIMER | EVENT, 0, E(REJECTED), "REJ stale in REQ_RCVD");
	/* The active side gives up in REQ_SENT (REJ Timeout): it knows no
	 * comm ID of ours, its REJ carries 0 there. Ours in REP_SENT takes
	 * it; one naming another peer ID does not match. */
	conn_goto(&p, S(REP_SENT));
	rej = mk(A(REJ), ID_A + 1, 0);
	rej.rej.reason = UROCE_CM_REJ_TIMEOUT;
	UT_CHECK_EQ(uroce_cm_step(&p, UROCE_CM_IN_RECV_REJ, &rej, 30, &fx), -ENOENT);
	rej = mk(A(REJ), ID_A, 0);
	rej.rej.reason = UROCE_CM_REJ_TIMEOUT;
	STEP(&p, RECV_REJ, &rej, 30);
	expect(&p, S(IDLE), STOP | EVENT, 0, E(REJECTED), "REJ Timeout in REP_SENT");
	UT_CHECK_EQ(fx.rej_reason, UROCE_CM_REJ_TIMEOUT);
	/* ... and the active side itself never takes a REJ naming 0. */
	connect(&a, &p, 0);
	conn_goto(&a, S(REQ_SENT));
	rej = mk(A(REJ), ID_P, 0);
	UT_CHECK_EQ(uroce_cm_step(&a, UROCE_CM_IN_RECV_REJ, &rej, 40, &fx), -ENOENT);
}

static void
test_no_listener_and_stale(void)
{
	struct uroce_cm_conn a;
	struct uroce_cm_msg req = mk(A(REQ), ID_A, 0), out, r;

	uroce_cm_conn_init(&a, ID_A, &timing);
	STEP(&a, SEND_REQ, &req, 0);
	req.hdr.tid = 0x1122334455667788ull;
	UT_CHECK_EQ(uroce_cm_unmatched(&req, false, &out), 1);
	UT_CHECK_EQ(out.hdr.attr_id, A(REJ));
	UT_CHECK_EQ(out.hdr.tid, req.hdr.tid);
	UT_CHECK_EQ(out.rej.reason, 8);
	UT_CHECK_EQ(out.rej.msg_rejected, UROCE_CM_MSG_REQ);
	UT_CHECK_EQ(out.rej.remote_comm_id, ID_A);
	UT_CHECK_EQ(out.rej.local_comm_id, 0);
	r = wire(&out);
	STEP(&a, RECV_REJ, &r, 50);
	expect(&a, S(IDLE), STOP | EVENT, 0, E(REJECTED), "no listener");
	UT_CHECK_EQ(fx.rej_reason, 8);

	/* A stale connection: REJ 10, and the active side waits out time-wait. */
	uroce_cm_conn_init(&a, ID_A, &timing);
	STEP(&a, SEND_REQ, &req, 100);
	UT_CHECK_EQ(uroce_cm_unmatched(&req, true, &out), 1);
	UT_CHECK_EQ(out.rej.reason, 10);
	STEP(&a, RECV_REJ, &out, 150);
	expect(&a, S(TIMEWAIT), TIMER | EVENT, 0, E(REJECTED), "stale");
	UT_CHECK_EQ(fx.deadline_ns, 150 + TIMEWAIT);

	/* What else matches no connection. */
	out = mk(A(DREQ), ID_P, ID_A);
	UT_CHECK_EQ(uroce_cm_unmatched(&out, false, &r), 1);
	UT_CHECK_EQ(r.hdr.attr_id, A(DREP));
	UT_CHECK_EQ(r.drep.local_comm_id, ID_A);
	UT_CHECK_EQ(r.drep.remote_comm_id, ID_P);
	out = mk(A(REP), ID_P, ID_A);
	UT_CHECK_EQ(uroce_cm_unmatched(&out, false, &r), 0);
	UT_CHECK_EQ(uroce_cm_unmatched(&out, true, &r), 1);
	UT_CHECK_EQ(r.rej.msg_rejected, UROCE_CM_MSG_REP);
	out = mk(A(RTU), ID_P, ID_A);
	UT_CHECK_EQ(uroce_cm_unmatched(&out, true, &r), 0);
	out = mk(A(SIDR_REQ), ID_A, 0);
	out.sidr_req.service_id = uroce_cma_service_id(UROCE_RDMA_PS_UDP, 7174);
	UT_CHECK_EQ(uroce_cm_unmatched(&out, false, &r), 1);
	UT_CHECK_EQ(r.hdr.attr_id, A(SIDR_REP));
	UT_CHECK_EQ(r.sidr_rep.request_id, ID_A);
	UT_CHECK_EQ(r.sidr_rep.status, UROCE_CM_SIDR_UNSUPPORTED);
	UT_CHECK_EQ(r.sidr_rep.service_id, out.sidr_req.service_id);
	out = mk(A(SIDR_REP), 0, ID_A);
	UT_CHECK_EQ(uroce_cm_unmatched(&out, false, &r), 0);
}

static void
test_lost_req(void)
{
	struct uroce_cm_conn a, before;
	struct uroce_cm_msg req = mk(A(REQ), ID_A, 0);
	const uint64_t t0 = 5000;
	int sends = 1;

	uroce_cm_conn_init(&a, ID_A, &timing);
	STEP(&a, SEND_REQ, &req, t0);
	UT_CHECK_EQ(fx.deadline_ns, t0 + WAIT_A);
	for (int i = 1; i <= RETRIES; i++) {
		/* Not before its time. */
		before = a;
		UT_CHECK_EQ(uroce_cm_step(&a, UROCE_CM_IN_TIMEOUT, NULL,
					  t0 + i * WAIT_A - 1, &fx), -EINVAL);
		UT_CHECK_MEM(&a, &before, sizeof(a));
		STEP(&a, TIMEOUT, NULL, t0 + i * WAIT_A);
		expect(&a, S(REQ_SENT), RESEND | TIMER, A(REQ), E(NONE), "REQ resent");
		UT_CHECK_EQ(fx.deadline_ns, t0 + (i + 1) * WAIT_A);
		sends++;
	}
	STEP(&a, TIMEOUT, NULL, t0 + (RETRIES + 1) * WAIT_A);
	expect(&a, S(IDLE), EVENT, 0, E(UNREACHABLE), "REQ unanswered");
	UT_CHECK_EQ(sends, RETRIES + 1);
	UT_CHECK_EQ(a.deadline_ns, 0);
	/* No timer left: another timeout is refused. */
	UT_CHECK_EQ(uroce_cm_step(&a, UROCE_CM_IN_TIMEOUT, NULL, UINT64_MAX, &fx), -EINVAL);
}

static void
test_mra(void)
{
	struct uroce_cm_conn a, p, before;
	struct uroce_cm_msg req = mk(A(REQ), ID_A, 0), mra = mk(A(MRA), ID_P, ID_A), r;
	const uint64_t wait_mra = T(16) + 2 * T(LIFE);

	uroce_cm_conn_init(&a, ID_A, &timing);
	uroce_cm_conn_init(&p, ID_P, &timing);
	STEP(&a, SEND_REQ, &req, 0);
	STEP(&p, RECV_REQ, &req, 5);
	mra.mra.msg_mraed = UROCE_CM_MSG_REQ;
	mra.mra.service_timeout = 16;
	STEP(&p, SEND_MRA, &mra, 6);
	expect(&p, S(MRA_REQ_SENT), SEND, A(MRA), E(NONE), "MRA sent");
	/* A duplicate REQ gets the MRA again. */
	STEP(&p, RECV_REQ, &req, 7);
	expect(&p, S(MRA_REQ_SENT), RESEND, A(MRA), E(NONE), "dup REQ after MRA");

	r = wire(&mra);
	STEP(&a, RECV_MRA, &r, 100);
	expect(&a, S(MRA_REQ_RCVD), TIMER, 0, E(NONE), "MRA received");
	UT_CHECK_EQ(fx.deadline_ns, 100 + wait_mra);
	UT_CHECK(wait_mra > WAIT_A);
	/* A duplicate MRA does not move the deadline again. */
	STEP(&a, RECV_MRA, &r, 150);
	expect(&a, S(MRA_REQ_RCVD), 0, 0, E(NONE), "dup MRA");
	UT_CHECK_EQ(a.deadline_ns, 100 + wait_mra);
	/* The REQ's own deadline has gone. */
	before = a;
	UT_CHECK_EQ(uroce_cm_step(&a, UROCE_CM_IN_TIMEOUT, NULL, WAIT_A, &fx), -EINVAL);
	UT_CHECK_MEM(&a, &before, sizeof(a));
	/* An MRA for a REP is not for a side awaiting a REP. */
	r.mra.msg_mraed = UROCE_CM_MSG_REP;
	UT_CHECK_EQ(uroce_cm_step(&a, UROCE_CM_IN_RECV_MRA, &r, 101, &fx), -EINVAL);
	UT_CHECK_MEM(&a, &before, sizeof(a));
	/* The REP then comes in time. */
	r = mk(A(REP), ID_P, ID_A);
	STEP(&p, SEND_REP, &r, 200);
	STEP(&a, RECV_REP, &r, 300);
	expect(&a, S(REP_RCVD), STOP | EVENT, 0, E(REP_RCVD), "REP after MRA");

	/* Without the REP: the extended wait then the retries run out. */
	uroce_cm_conn_init(&a, ID_A, &timing);
	STEP(&a, SEND_REQ, &req, 0);
	mra.mra.service_timeout = 16;
	STEP(&a, RECV_MRA, &mra, 10);
	STEP(&a, TIMEOUT, NULL, 10 + wait_mra);
	expect(&a, S(MRA_REQ_RCVD), RESEND | TIMER, A(REQ), E(NONE), "REQ after MRA wait");
	UT_CHECK_EQ(fx.deadline_ns, 10 + 2 * wait_mra);
}

/* Disconnect from @first's side; both end in TIMEWAIT then IDLE. */
static void
disconnect(struct uroce_cm_conn *first, struct uroce_cm_conn *second, uint64_t t)
{
	struct uroce_cm_msg dreq, drep, r;

	dreq = mk(A(DREQ), first->local_comm_id, first->remote_comm_id);
	UT_CHECK_EQ(dreq.dreq.remote_qpn, first->remote_qpn);
	UT_CHECK_EQ(dreq.dreq.remote_qpn, second->local_qpn);
	STEP(first, SEND_DREQ, &dreq, t);
	expect(first, S(DREQ_SENT), SEND | TIMER, A(DREQ), E(NONE), "DREQ sent");
	r = wire(&dreq);
	STEP(second, RECV_DREQ, &r, t + 1);
	expect(second, S(DREQ_RCVD), EVENT, 0, E(DREQ_RCVD), "DREQ received");
	/* A DREQ for another QP is not this connection's. */
	dreq.dreq.remote_qpn ^= 1;
	r = wire(&dreq);
	UT_CHECK_EQ(uroce_cm_step(second, UROCE_CM_IN_RECV_DREQ, &r, t + 2, &fx), -ENOENT);
	dreq.dreq.remote_qpn ^= 1;
	r = wire(&dreq);
	/* A duplicate while the user decides: nothing. */
	STEP(second, RECV_DREQ, &r, t + 2);
	expect(second, S(DREQ_RCVD), 0, 0, E(NONE), "dup DREQ");
	drep = mk(A(DREP), second->local_comm_id, second->remote_comm_id);
	STEP(second, SEND_DREP, &drep, t + 3);
	expect(second, S(TIMEWAIT), SEND | TIMER, A(DREP), E(NONE), "DREP sent");
	UT_CHECK_EQ(fx.deadline_ns, t + 3 + TIMEWAIT);
	r = wire(&drep);
	STEP(first, RECV_DREP, &r, t + 4);
	expect(first, S(TIMEWAIT), TIMER | EVENT, 0, E(DISCONNECTED), "DREP received");
	UT_CHECK_EQ(fx.deadline_ns, t + 4 + TIMEWAIT);

	/* Our DREP was lost: a DREQ in TIMEWAIT is answered with a fresh DREP. */
	r = wire(&dreq);
	STEP(second, RECV_DREQ, &r, t + 5);
	expect(second, S(TIMEWAIT), REPLY, A(DREP), E(NONE), "DREQ in TIMEWAIT");
	UT_CHECK_EQ(uroce_cm_reply(second, &r, fx.send_attr, 0, &drep), 0);
	UT_CHECK_EQ(drep.hdr.attr_id, A(DREP));
	UT_CHECK_EQ(drep.drep.local_comm_id, second->local_comm_id);
	UT_CHECK_EQ(drep.drep.remote_comm_id, second->remote_comm_id);
	STEP(first, RECV_DREP, &drep, t + 6);
	expect(first, S(TIMEWAIT), 0, 0, E(NONE), "late DREP");

	/* Time-wait ends: comm ID and QPN may be reused. */
	STEP(second, TIMEOUT, NULL, t + 3 + TIMEWAIT);
	expect(second, S(IDLE), EVENT, 0, E(TIMEWAIT_EXIT), "time-wait exit");
	STEP(first, TIMEOUT, NULL, t + 4 + TIMEWAIT);
	expect(first, S(IDLE), EVENT, 0, E(TIMEWAIT_EXIT), "time-wait exit");
	UT_CHECK_EQ(first->deadline_ns, 0);
}

static void
test_disconnect(void)
{
	struct uroce_cm_conn a, p, before;
	struct uroce_cm_msg m, req;

	connect(&a, &p, 0);
	disconnect(&a, &p, 1000000);
	connect(&a, &p, 0);
	disconnect(&p, &a, 1000000);

	/* Both sides disconnect at once: each answers the other's DREQ, and
	 * the DREP to its own takes it to time-wait (Linux cm_drep_handler()). */
	connect(&a, &p, 0);
	m = mk(A(DREQ), ID_A, ID_P);
	STEP(&a, SEND_DREQ, &m, 10);
	req = mk(A(DREQ), ID_P, ID_A);
	STEP(&p, SEND_DREQ, &req, 10);
	STEP(&a, RECV_DREQ, &req, 11);
	expect(&a, S(DREQ_RCVD), STOP | EVENT, 0, E(DREQ_RCVD), "crossed DREQ");
	STEP(&p, RECV_DREQ, &m, 11);
	m = mk(A(DREP), ID_P, ID_A);
	STEP(&p, SEND_DREP, &m, 12);
	STEP(&a, RECV_DREP, &m, 13);
	expect(&a, S(TIMEWAIT), TIMER | EVENT, 0, E(DISCONNECTED), "DREP in DREQ_RCVD");

	/* The DREQ is lost: retries, then time-wait all the same. */
	connect(&a, &p, 0);
	m = mk(A(DREQ), ID_A, ID_P);
	STEP(&a, SEND_DREQ, &m, 100);
	for (int i = 1; i <= RETRIES; i++) {
		STEP(&a, TIMEOUT, NULL, 100 + i * WAIT_A);
		expect(&a, S(DREQ_SENT), RESEND | TIMER, A(DREQ), E(NONE), "DREQ resent");
	}
	STEP(&a, TIMEOUT, NULL, 100 + (RETRIES + 1) * WAIT_A);
	expect(&a, S(TIMEWAIT), TIMER | EVENT, 0, E(DISCONNECTED), "DREQ unanswered");
	UT_CHECK_EQ(fx.deadline_ns, 100 + (RETRIES + 1) * WAIT_A + TIMEWAIT);

	/* In time-wait a duplicate REQ gets REJ "stale connection". */
	connect(&a, &p, 0);
	m = mk(A(DREQ), ID_A, ID_P);
	STEP(&p, RECV_DREQ, &m, 10);
	m = mk(A(DREP), ID_P, ID_A);
	STEP(&p, SEND_DREP, &m, 11);
	req = mk(A(REQ), ID_A, 0);
	before = p;
	STEP(&p, RECV_REQ, &req, 12);
	expect(&p, S(TIMEWAIT), REPLY, A(REJ), E(NONE), "dup REQ in TIMEWAIT");
	UT_CHECK_EQ(fx.rej_reason, UROCE_CM_REJ_STALE_CONN);
	UT_CHECK_MEM(&p, &before, sizeof(p));
	UT_CHECK_EQ(uroce_cm_reply(&p, &req, fx.send_attr, fx.rej_reason, &m), 0);
	UT_CHECK_EQ(m.rej.reason, 10);
	UT_CHECK_EQ(m.rej.msg_rejected, UROCE_CM_MSG_REQ);
	UT_CHECK_EQ(m.rej.local_comm_id, ID_P);
	UT_CHECK_EQ(m.rej.remote_comm_id, ID_A);
	UT_CHECK_EQ(m.hdr.tid, req.hdr.tid);
	/* Nothing reuses the comm ID before time-wait is over. */
	m = mk(A(REQ), ID_P, 0);
	UT_CHECK_EQ(uroce_cm_step(&p, UROCE_CM_IN_SEND_REQ, &m, 13, &fx), -EINVAL);
	UT_CHECK_MEM(&p, &before, sizeof(p));
	STEP(&p, TIMEOUT, NULL, 11 + TIMEWAIT);
	expect(&p, S(IDLE), EVENT, 0, E(TIMEWAIT_EXIT), "time-wait over");
	STEP(&p, SEND_REQ, &m, 11 + TIMEWAIT);
	expect(&p, S(REQ_SENT), SEND | TIMER, A(REQ), E(NONE), "comm ID reused");
}

/* ---------------------------------------------------------------------------
 * Every (state, input): this file's own list of what IBTA 12.9 and Linux's
 * cm.c allow; everything else must be refused with nothing changed.
 */
#define I(x)	(1u << UROCE_CM_IN_ ## x)
static const uint32_t allowed[UROCE_CM_STATE_COUNT] = {
	[S(IDLE)] = I(LISTEN) | I(SEND_REQ) | I(SEND_SIDR_REQ) | I(RECV_REQ) |
		    I(RECV_SIDR_REQ),
	[S(LISTEN)] = I(RECV_REQ) | I(RECV_SIDR_REQ),
	[S(REQ_SENT)] = I(RECV_REP) | I(RECV_MRA) | I(RECV_REJ) | I(SEND_REJ) |
			I(TIMEOUT),
	[S(MRA_REQ_RCVD)] = I(RECV_REP) | I(RECV_MRA) | I(RECV_REJ) | I(SEND_REJ) |
			    I(TIMEOUT),
	[S(REQ_RCVD)] = I(SEND_REP) | I(SEND_MRA) | I(SEND_REJ) | I(RECV_REQ) |
			I(RECV_REJ) | I(FORGET),
	[S(MRA_REQ_SENT)] = I(SEND_REP) | I(SEND_REJ) | I(RECV_REQ) | I(RECV_REJ),
	[S(REP_SENT)] = I(RECV_RTU) | I(COMM_EST) | I(RECV_REQ) | I(RECV_MRA) |
			I(RECV_REJ) | I(RECV_DREQ) | I(SEND_REJ) | I(TIMEOUT),
	[S(MRA_REP_RCVD)] = I(RECV_RTU) | I(COMM_EST) | I(RECV_REQ) | I(RECV_MRA) |
			    I(RECV_REJ) | I(RECV_DREQ) | I(SEND_REJ) | I(TIMEOUT),
	[S(REP_RCVD)] = I(SEND_RTU) | I(SEND_MRA) | I(SEND_REJ) | I(RECV_REP) |
			I(RECV_REJ),
	[S(MRA_REP_SENT)] = I(SEND_RTU) | I(SEND_REJ) | I(RECV_REP) | I(RECV_REJ),
	[S(ESTABLISHED)] = I(SEND_DREQ) | I(RECV_DREQ) | I(RECV_REP) | I(RECV_RTU) |
			   I(COMM_EST) | I(RECV_REJ),
	[S(DREQ_SENT)] = I(RECV_DREP) | I(RECV_DREQ) | I(RECV_REJ) | I(RECV_RTU) |
			 I(TIMEOUT),
	[S(DREQ_RCVD)] = I(SEND_DREP) | I(RECV_DREP) | I(RECV_DREQ) | I(RECV_RTU),
	[S(TIMEWAIT)] = I(RECV_DREQ) | I(RECV_REQ) | I(RECV_REP) | I(RECV_RTU) |
			I(RECV_DREP) | I(RECV_REJ) | I(TIMEOUT),
	[S(SIDR_REQ_SENT)] = I(RECV_SIDR_REP) | I(TIMEOUT),
	[S(SIDR_REQ_RCVD)] = I(SEND_SIDR_REP) | I(RECV_SIDR_REQ),
};

static const uint16_t in_attr[UROCE_CM_IN_COUNT] = {
	[UROCE_CM_IN_SEND_REQ] = A(REQ), [UROCE_CM_IN_SEND_MRA] = A(MRA),
	[UROCE_CM_IN_SEND_REJ] = A(REJ), [UROCE_CM_IN_SEND_REP] = A(REP),
	[UROCE_CM_IN_SEND_RTU] = A(RTU), [UROCE_CM_IN_SEND_DREQ] = A(DREQ),
	[UROCE_CM_IN_SEND_DREP] = A(DREP), [UROCE_CM_IN_SEND_SIDR_REQ] = A(SIDR_REQ),
	[UROCE_CM_IN_SEND_SIDR_REP] = A(SIDR_REP),
	[UROCE_CM_IN_RECV_REQ] = A(REQ), [UROCE_CM_IN_RECV_MRA] = A(MRA),
	[UROCE_CM_IN_RECV_REJ] = A(REJ), [UROCE_CM_IN_RECV_REP] = A(REP),
	[UROCE_CM_IN_RECV_RTU] = A(RTU), [UROCE_CM_IN_RECV_DREQ] = A(DREQ),
	[UROCE_CM_IN_RECV_DREP] = A(DREP), [UROCE_CM_IN_RECV_SIDR_REQ] = A(SIDR_REQ),
	[UROCE_CM_IN_RECV_SIDR_REP] = A(SIDR_REP),
};

/* A connection in state @s with both comm IDs known and a timer due. */
static void
conn_in(struct uroce_cm_conn *c, enum uroce_cm_state s)
{
	uroce_cm_conn_init(c, ID_A, &timing);
	c->state = s;
	c->remote_comm_id = ID_P;
	c->active = true;
	c->sends = 1;
	c->wait_ns = 100;
	c->deadline_ns = 50;
	c->last_sent = A(RTU);
	c->local_qpn = QPN_A;
}

/* A well-formed message for @in addressed to (or from) that connection. */
static struct uroce_cm_msg
msg_for(enum uroce_cm_state s, enum uroce_cm_input in)
{
	bool recv = in >= UROCE_CM_IN_RECV_REQ && in <= UROCE_CM_IN_RECV_SIDR_REP;
	struct uroce_cm_msg m = recv ? mk(in_attr[in], ID_P, ID_A) :
				       mk(in_attr[in], ID_A, ID_P);

	if (in_attr[in] == A(MRA))
		m.mra.msg_mraed = s == S(REQ_SENT) || s == S(MRA_REQ_RCVD) ?
				  UROCE_CM_MSG_REQ : UROCE_CM_MSG_REP;
	return m;
}

static void
test_every_pair(void)
{
	struct uroce_cm_effects poison, keep;
	struct uroce_cm_conn c, before;
	struct uroce_cm_msg m;
	int ret, refused = 0, taken = 0;

	memset(&poison, 0x5a, sizeof(poison));
	for (int s = 0; s < UROCE_CM_STATE_COUNT; s++) {
		for (int in = 0; in < UROCE_CM_IN_COUNT; in++) {
			conn_in(&c, (enum uroce_cm_state)s);
			before = c;
			m = msg_for((enum uroce_cm_state)s, (enum uroce_cm_input)in);
			keep = poison;
			ret = uroce_cm_step(&c, (enum uroce_cm_input)in,
					    in_attr[in] ? &m : NULL, 100, &keep);
			if (allowed[s] & (1u << in)) {
				UT_CHECK_EQ(ret, 0);
				taken++;
			} else {
				UT_CHECK_EQ(ret, -EINVAL);
				UT_CHECK_MEM(&c, &before, sizeof(c));
				UT_CHECK_MEM(&keep, &poison, sizeof(keep));
				refused++;
			}
			UT_NOTE("%s in %s", uroce_cm_input_str((enum uroce_cm_input)in),
				uroce_cm_state_str((enum uroce_cm_state)s));
		}
	}
	UT_CHECK(refused > 200);
	UT_CHECK(taken > 60);

	/* A message of the wrong type, or none, for an input that needs one. */
	conn_in(&c, S(REP_SENT));
	before = c;
	m = mk(A(REP), ID_P, ID_A);
	UT_CHECK_EQ(uroce_cm_step(&c, UROCE_CM_IN_RECV_RTU, &m, 100, &fx), -EINVAL);
	UT_CHECK_EQ(uroce_cm_step(&c, UROCE_CM_IN_RECV_RTU, NULL, 100, &fx), -EINVAL);
	/* An RTU for another connection. */
	m = mk(A(RTU), ID_P, ID_A + 1);
	UT_CHECK_EQ(uroce_cm_step(&c, UROCE_CM_IN_RECV_RTU, &m, 100, &fx), -ENOENT);
	m = mk(A(RTU), ID_P + 1, ID_A);
	UT_CHECK_EQ(uroce_cm_step(&c, UROCE_CM_IN_RECV_RTU, &m, 100, &fx), -ENOENT);
	UT_CHECK_EQ(uroce_cm_step(&c, UROCE_CM_IN_COUNT, NULL, 100, &fx), -EINVAL);
	UT_CHECK_MEM(&c, &before, sizeof(c));
}

static void
test_names(void)
{
	UT_CHECK(strcmp(uroce_cm_state_str(S(MRA_REP_RCVD)), "MRA_REP_RCVD") == 0);
	UT_CHECK(strcmp(uroce_cm_state_str(S(TIMEWAIT)), "TIMEWAIT") == 0);
	UT_CHECK(strcmp(uroce_cm_state_str(UROCE_CM_STATE_COUNT), "?") == 0);
	for (int s = 0; s < UROCE_CM_STATE_COUNT; s++)
		UT_CHECK(uroce_cm_state_str((enum uroce_cm_state)s)[0] != '?');
	for (int i = 0; i < UROCE_CM_IN_COUNT; i++)
		UT_CHECK(uroce_cm_input_str((enum uroce_cm_input)i)[0] != '?');
	for (int e = 0; e < UROCE_CM_EV_COUNT; e++)
		UT_CHECK(uroce_cm_event_str((enum uroce_cm_event)e)[0] != '?');
}

static void
test_sidr(void)
{
	struct uroce_cm_conn a, p;
	struct uroce_cm_msg q = mk(A(SIDR_REQ), ID_A, 0), r = mk(A(SIDR_REP), 0, ID_A);
	const uint64_t w = T(12) + 2 * T(LIFE);

	uroce_cm_conn_init(&a, ID_A, &timing);
	uroce_cm_conn_init(&p, ID_P, &timing);
	STEP(&a, SEND_SIDR_REQ, &q, 0);
	expect(&a, S(SIDR_REQ_SENT), SEND | TIMER, A(SIDR_REQ), E(NONE), "SIDR_REQ");
	UT_CHECK_EQ(fx.deadline_ns, w);
	STEP(&p, RECV_SIDR_REQ, &q, 1);
	expect(&p, S(SIDR_REQ_RCVD), EVENT, 0, E(SIDR_REQ_RCVD), "SIDR_REQ received");
	STEP(&p, SEND_SIDR_REP, &r, 2);
	expect(&p, S(IDLE), SEND, A(SIDR_REP), E(NONE), "SIDR_REP sent");
	STEP(&a, RECV_SIDR_REP, &r, 3);
	expect(&a, S(IDLE), STOP | EVENT, 0, E(SIDR_REP_RCVD), "SIDR_REP received");
	/* Unanswered: the timing's retries (2), then unreachable. */
	uroce_cm_conn_init(&a, ID_A, &timing);
	STEP(&a, SEND_SIDR_REQ, &q, 0);
	STEP(&a, TIMEOUT, NULL, w);
	STEP(&a, TIMEOUT, NULL, 2 * w);
	expect(&a, S(SIDR_REQ_SENT), RESEND | TIMER, A(SIDR_REQ), E(NONE), "resent");
	STEP(&a, TIMEOUT, NULL, 3 * w);
	expect(&a, S(IDLE), EVENT, 0, E(UNREACHABLE), "SIDR unanswered");
}

int
main(void)
{
	test_handshake_and_dups();
	test_dup_req_in_rep_sent();
	test_forget();
	test_reject();
	test_no_listener_and_stale();
	test_lost_req();
	test_mra();
	test_disconnect();
	test_sidr();
	test_every_pair();
	test_names();
	return ut_summary();
}
