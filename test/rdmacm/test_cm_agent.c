/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The CM agent (lib/rdmacm/agent/cm_agent.h) between the two devices of a
 * ringlink pair opened through our libibverbs.so.1, the agent linked as
 * librdmacm.so.1 links it:
 *  - agent to agent: REQ -> REP -> RTU, ESTABLISHED on both sides, private
 *    data, comm IDs, TIDs, CA GUIDs and the REQ's CM timing (20, 15)
 *    checked; DREQ -> DREP, DISCONNECTED, then TIMEWAIT_EXIT on both;
 *    a REJ with private data; a REQ to a service nobody listens on,
 *    REJECTED 8; the release of an established connection sends a DREQ,
 *    of a request a REJ 28; SIDR_REQ -> SIDR_REP, and "unsupported";
 *    the counters in DPDK telemetry's /uroce/cm as cm_agent_stats() has them;
 *  - against a raw GSI (the UROCE_PRIVATE_1 table on a device with no
 *    agent): a duplicate REQ answered with the same bytes, the backlog
 *    (REJ 28 past it), a REQ in time-wait and one from a QPN still known
 *    (REJ 10), MADs that are not CM MADs dropped and counted, and a flood
 *    of 10,000 REQs: the backlog holds, answered requests expire through
 *    the state machine's retries, every connection is freed;
 *  - a peer device with no agent: its engine answers the REQ with REJ 8
 *    (the REQ's comm ID and TID echoed, Message REJected REQ) at once;
 *    a peer whose GSI is open but never answers: the REQ sent
 *    MaxCMRetries + 1 times, then UNREACHABLE (CM timing shortened
 *    through cm_agent_set_timing()).
 * Every wait is bounded (UT_WAIT_S) only to end a hung run; nothing
 * asserts a time.
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <infiniband/verbs.h>

#include "agent/cm_agent.h"
#include "uroce_cm.h"
#include "uroce_test.h"
#include "uroce_test_verbs.h"
#include "uroce_verbs_cm.h"

#define UT_WAIT_S	30.0
#define MAX_EV		64
#define SID_TCP(port)	uroce_cma_service_id(UROCE_RDMA_PS_TCP, (port))
#define SID_UDP(port)	uroce_cma_service_id(UROCE_RDMA_PS_UDP, (port))

static struct ibv_context *ctx[2];
static union ibv_gid gid[2];
static uint64_t guid[2];

/* ------------------------------------------------------------------------
 * Owners: each records the events it is given, in order.
 */
struct rec {
	struct cm_conn *c;
	enum uroce_cm_event ev;
	uint16_t rej_reason;
	bool has_msg;
	struct uroce_cm_msg msg;
	struct cm_peer from;
};

struct owner {
	const char *name;
	struct rec ev[MAX_EV];
	unsigned int n, taken;
	/* auto mode (the flood): answer requests, release what ends */
	bool flood;
	unsigned int req, unreach, other;
};

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ev_cond = PTHREAD_COND_INITIALIZER;

static void flood_event(struct owner *o, struct cm_conn *c,
			const struct cm_event *e);

static void
on_event(void *arg, struct cm_conn *c, const struct cm_event *e)
{
	struct owner *o = arg;
	struct rec *r;

	if (o->flood) {
		flood_event(o, c, e);
		return;
	}
	pthread_mutex_lock(&ev_lock);
	if (o->n < MAX_EV) {
		r = &o->ev[o->n++];
		memset(r, 0, sizeof(*r));
		r->c = c;
		r->ev = e->ev;
		r->rej_reason = e->rej_reason;
		r->has_msg = e->msg != NULL;
		if (e->msg != NULL)
			r->msg = *e->msg;
		if (e->from != NULL)
			r->from = *e->from;
		UT_CHECK((e->msg == NULL) == (e->from == NULL));
	} else {
		UT_CHECK(!"too many events");
	}
	pthread_cond_broadcast(&ev_cond);
	pthread_mutex_unlock(&ev_lock);
}

/* The owner's next event, which must be @ev: a copy into @out. */
static bool
next_ev(struct owner *o, enum uroce_cm_event ev, struct rec *out)
{
	double end = ut_now_s() + UT_WAIT_S;
	struct timespec ts;
	bool ok;

	pthread_mutex_lock(&ev_lock);
	while (o->taken == o->n && ut_now_s() < end) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&ev_cond, &ev_lock, &ts);
	}
	ok = o->taken < o->n;
	if (ok)
		*out = o->ev[o->taken++];
	pthread_mutex_unlock(&ev_lock);
	if (!UT_CHECK(ok)) {
		fprintf(stderr, "     %s: no event, wanted \"%s\"\n", o->name,
			uroce_cm_event_str(ev));
		return false;
	}
	if (!UT_CHECK_EQ(out->ev, ev)) {
		fprintf(stderr, "     %s: \"%s\", wanted \"%s\"\n", o->name,
			uroce_cm_event_str(out->ev), uroce_cm_event_str(ev));
		return false;
	}
	return true;
}

/* Nothing left unread in the owner's queue. */
static void
no_more_ev(struct owner *o)
{
	pthread_mutex_lock(&ev_lock);
	if (!UT_CHECK_EQ(o->n, o->taken))
		fprintf(stderr, "     %s: unexpected \"%s\"\n", o->name,
			uroce_cm_event_str(o->ev[o->taken].ev));
	o->taken = o->n = 0;
	pthread_mutex_unlock(&ev_lock);
}

static struct cm_agent_stats
stats(struct cm_agent *a)
{
	struct cm_agent_stats st;

	cm_agent_stats(a, &st);
	return st;
}

#define STAT_OFF(f)	offsetof(struct cm_agent_stats, f)
/* Until the counter at @off of @a reaches @want. */
static bool
wait_stat(struct cm_agent *a, size_t off, uint64_t want)
{
	double end = ut_now_s() + UT_WAIT_S;
	struct cm_agent_stats st;
	uint64_t v;

	do {
		st = stats(a);
		v = *(uint64_t *)(void *)((char *)&st + off);
		if (v == want)
			return true;
		usleep(1000);
	} while (ut_now_s() < end);
	fprintf(stderr, "     counter at %zu: %" PRIu64 ", wanted %" PRIu64 "\n",
		off, v, want);
	return false;
}

/* ------------------------------------------------------------------------
 * Messages.
 */
static struct cm_peer
peer_to(int to)
{
	struct cm_peer p;

	memset(&p, 0, sizeof(p));
	p.gid = gid[to];
	p.local_gid = gid[!to];
	p.local_gid_index = 0;
	return p;
}

/* A REQ body as rdma_cm's layer builds one: RC, path over RoCE, CMA
 * header and @ulen bytes of user data from @user. */
static void
req_body(struct uroce_cm_msg *m, uint64_t sid, uint32_t qpn, int from,
	 const uint8_t *user, size_t ulen)
{
	struct uroce_cma_hdr h;

	memset(m, 0, sizeof(*m));
	uroce_cm_msg_init(m, UROCE_CM_ATTR_REQ, 0);
	m->req.service_id = sid;
	m->req.local_qpn = qpn;
	m->req.local_qkey = 0;
	m->req.responder_resources = 1;
	m->req.initiator_depth = 1;
	m->req.transport_type = UROCE_CM_TST_RC;
	m->req.starting_psn = (qpn * 7) & 0xffffff;
	m->req.retry_count = 7;
	m->req.rnr_retry_count = 7;
	m->req.pkey = 0xffff;
	m->req.path_mtu = IBV_MTU_1024;
	m->req.primary.local_lid = UROCE_LID_PERMISSIVE;
	m->req.primary.remote_lid = UROCE_LID_PERMISSIVE;
	memcpy(m->req.primary.local_gid, gid[from].raw, 16);
	memcpy(m->req.primary.remote_gid, gid[!from].raw, 16);
	m->req.primary.hop_limit = 64;
	m->req.primary.local_ack_timeout = 14;
	memset(&h, 0, sizeof(h));
	h.ip_version = 4;
	h.src_port = 4242;
	memcpy(h.src_addr, gid[from].raw, 16);
	memcpy(h.dst_addr, gid[!from].raw, 16);
	UT_CHECK_EQ(uroce_cma_pack(m, &h, user, ulen), 0);
}

static void
rep_body(struct uroce_cm_msg *m, uint32_t qpn, const uint8_t *priv, size_t len)
{
	memset(m, 0, sizeof(*m));
	uroce_cm_msg_init(m, UROCE_CM_ATTR_REP, 0);
	m->rep.local_qpn = qpn;
	m->rep.starting_psn = 0x123456;
	m->rep.responder_resources = 1;
	m->rep.initiator_depth = 1;
	m->rep.rnr_retry_count = 7;
	m->rep.target_ack_delay = 15;
	UT_CHECK_EQ(uroce_cm_priv_set(m, priv, len), 0);
}

/* A message of type @attr with @len bytes of private data. */
static void
plain_body(struct uroce_cm_msg *m, uint16_t attr, const uint8_t *priv,
	   size_t len)
{
	memset(m, 0, sizeof(*m));
	uroce_cm_msg_init(m, attr, 0);
	UT_CHECK_EQ(uroce_cm_priv_set(m, priv, len), 0);
}

static struct owner cli = { .name = "client" }, srv = { .name = "server" };
static struct owner conn_owner = { .name = "server connection" };

/* ------------------------------------------------------------------------
 * Agent to agent.
 */

/* REQ -> REP -> RTU; both ends ESTABLISHED. @cc, @sc: the connections. */
static bool
connect_pair(struct cm_agent *a, struct cm_agent *b, uint64_t sid,
	     struct cm_conn **cc, struct cm_conn **sc)
{
	uint8_t user[UROCE_CMA_REQ_USER_MAX], priv[UROCE_CM_REP_PRIV_LEN];
	struct cm_peer to = peer_to(1);
	struct uroce_cm_msg m;
	struct uroce_cma_hdr h;
	struct rec r, req, rep;
	uint32_t my_id;

	ut_fill_rand(user, sizeof(user));
	ut_fill_rand(priv, sizeof(priv));
	*cc = *sc = NULL;
	if (!UT_CHECK_EQ(cm_conn_create(a, on_event, &cli, cc), 0))
		return false;
	req_body(&m, sid, 0x111, 0, user, sizeof(user));
	UT_CHECK_EQ(cm_conn_send(*cc, UROCE_CM_IN_SEND_REQ, &m, &to), 0);
	my_id = m.req.local_comm_id;
	UT_CHECK(my_id != 0);
	UT_CHECK_EQ(cm_conn_state(*cc), UROCE_CM_REQ_SENT);
	if (!next_ev(&srv, UROCE_CM_EV_REQ_RCVD, &req))
		return false;
	*sc = req.c;
	/* What the agent filled in, and the caller's body intact. */
	UT_CHECK_EQ(req.msg.req.local_comm_id, my_id);
	UT_CHECK_EQ(req.msg.req.service_id, sid);
	UT_CHECK_EQ(req.msg.req.local_qpn, 0x111);
	UT_CHECK_EQ(req.msg.req.remote_cm_resp_timeout, 20);
	UT_CHECK_EQ(req.msg.req.local_cm_resp_timeout, 20);
	UT_CHECK_EQ(req.msg.req.max_cm_retries, 15);
	UT_CHECK_EQ(req.msg.req.local_ca_guid, guid[0]);
	UT_CHECK(req.msg.hdr.tid != 0);
	UT_CHECK_EQ(uroce_cma_hdr_get(req.msg.req.private_data,
				      UROCE_CM_REQ_PRIV_LEN, &h), 0);
	UT_CHECK_EQ(h.src_port, 4242);
	UT_CHECK_MEM(req.msg.req.private_data + UROCE_CMA_HDR_LEN, user,
		     sizeof(user));
	UT_CHECK_MEM(req.from.gid.raw, gid[0].raw, 16);
	UT_CHECK_MEM(req.from.local_gid.raw, gid[1].raw, 16);
	UT_CHECK_EQ(req.from.local_gid_index, 0);
	UT_CHECK_EQ(cm_conn_state(*sc), UROCE_CM_REQ_RCVD);
	UT_CHECK_MEM(cm_conn_peer(*sc)->gid.raw, gid[0].raw, 16);
	cm_conn_own(*sc, on_event, &conn_owner);

	rep_body(&m, 0x222, priv, sizeof(priv));
	UT_CHECK_EQ(cm_conn_send(*sc, UROCE_CM_IN_SEND_REP, &m, NULL), 0);
	UT_CHECK_EQ(cm_conn_state(*sc), UROCE_CM_REP_SENT);
	if (!next_ev(&cli, UROCE_CM_EV_REP_RCVD, &rep))
		return false;
	UT_CHECK(rep.c == *cc);
	UT_CHECK_EQ(rep.msg.rep.remote_comm_id, my_id);
	UT_CHECK(rep.msg.rep.local_comm_id != 0);
	UT_CHECK_EQ(rep.msg.rep.local_qpn, 0x222);
	UT_CHECK_EQ(rep.msg.rep.local_ca_guid, guid[1]);
	/* REQ, REP and RTU are one transaction (Linux's cm.c). */
	UT_CHECK_EQ(rep.msg.hdr.tid, req.msg.hdr.tid);
	UT_CHECK_MEM(rep.msg.rep.private_data, priv, sizeof(priv));

	plain_body(&m, UROCE_CM_ATTR_RTU, priv, 10);
	UT_CHECK_EQ(cm_conn_send(*cc, UROCE_CM_IN_SEND_RTU, &m, NULL), 0);
	UT_CHECK_EQ(m.hdr.tid, req.msg.hdr.tid);
	UT_CHECK(next_ev(&cli, UROCE_CM_EV_ESTABLISHED, &r));
	if (!next_ev(&conn_owner, UROCE_CM_EV_ESTABLISHED, &r))
		return false;
	UT_CHECK(r.has_msg && r.msg.hdr.attr_id == UROCE_CM_ATTR_RTU);
	UT_CHECK_MEM(r.msg.rtu.private_data, priv, 10);
	UT_CHECK_EQ(cm_conn_state(*cc), UROCE_CM_ESTABLISHED);
	UT_CHECK_EQ(cm_conn_state(*sc), UROCE_CM_ESTABLISHED);
	return true;
}

static void
check_connect_disconnect(struct cm_agent *a, struct cm_agent *b)
{
	struct cm_agent_stats a0 = stats(a), b0 = stats(b);
	uint8_t priv[UROCE_CM_DREQ_PRIV_LEN];
	struct cm_listener *l = NULL;
	struct cm_conn *cc, *sc;
	struct uroce_cm_msg m;
	struct rec r;

	ut_fill_rand(priv, sizeof(priv));
	if (!UT_CHECK_EQ(cm_listen(b, SID_TCP(7471), 4, on_event, &srv, &l), 0))
		return;
	UT_CHECK_EQ(cm_listen(b, SID_TCP(7471), 4, on_event, &srv,
			      &(struct cm_listener *){ NULL }), -EADDRINUSE);
	if (!connect_pair(a, b, SID_TCP(7471), &cc, &sc))
		goto out;
	/* REQ, RTU one way; REP the other; nothing resent. */
	UT_CHECK_EQ(stats(a).tx, a0.tx + 2);
	UT_CHECK_EQ(stats(b).rx, b0.rx + 2);
	UT_CHECK_EQ(stats(b).tx, b0.tx + 1);
	UT_CHECK_EQ(stats(a).resends + stats(b).resends, a0.resends + b0.resends);
	UT_CHECK_EQ(stats(a).conns, a0.conns + 1);
	UT_CHECK_EQ(stats(b).conns, b0.conns + 1);

	/* A send the state machine does not allow. */
	plain_body(&m, UROCE_CM_ATTR_RTU, NULL, 0);
	UT_CHECK_EQ(cm_conn_send(cc, UROCE_CM_IN_SEND_RTU, &m, NULL), -EINVAL);
	plain_body(&m, UROCE_CM_ATTR_DREP, NULL, 0);
	UT_CHECK_EQ(cm_conn_send(cc, UROCE_CM_IN_SEND_DREQ, &m, NULL), -EINVAL);

	/* DREQ -> DREP -> DISCONNECTED, then time-wait on both sides. */
	plain_body(&m, UROCE_CM_ATTR_DREQ, priv, sizeof(priv));
	UT_CHECK_EQ(cm_conn_send(cc, UROCE_CM_IN_SEND_DREQ, &m, NULL), 0);
	UT_CHECK_EQ(m.dreq.remote_qpn, 0x222);
	if (next_ev(&conn_owner, UROCE_CM_EV_DREQ_RCVD, &r)) {
		UT_CHECK_MEM(r.msg.dreq.private_data, priv, sizeof(priv));
		UT_CHECK_EQ(r.msg.dreq.remote_qpn, 0x222);
	}
	/* The peer's DREQ came first: ours is refused as gone. */
	plain_body(&m, UROCE_CM_ATTR_DREQ, NULL, 0);
	UT_CHECK_EQ(cm_conn_send(sc, UROCE_CM_IN_SEND_DREQ, &m, NULL), -ENOTCONN);
	plain_body(&m, UROCE_CM_ATTR_DREP, priv, 100);
	UT_CHECK_EQ(cm_conn_send(sc, UROCE_CM_IN_SEND_DREP, &m, NULL), 0);
	UT_CHECK_EQ(cm_conn_state(sc), UROCE_CM_TIMEWAIT);
	if (next_ev(&cli, UROCE_CM_EV_DISCONNECTED, &r)) {
		UT_CHECK(r.has_msg && r.msg.hdr.attr_id == UROCE_CM_ATTR_DREP);
		UT_CHECK_MEM(r.msg.drep.private_data, priv, 100);
	}
	UT_CHECK(next_ev(&cli, UROCE_CM_EV_TIMEWAIT_EXIT, &r));
	UT_CHECK(next_ev(&conn_owner, UROCE_CM_EV_TIMEWAIT_EXIT, &r));
	UT_CHECK_EQ(cm_conn_state(cc), UROCE_CM_IDLE);
	UT_CHECK_EQ(cm_conn_state(sc), UROCE_CM_IDLE);
	cm_conn_release(cc);
	cm_conn_release(sc);
	UT_CHECK_EQ(stats(a).conns, a0.conns);
	UT_CHECK_EQ(stats(b).conns, b0.conns);
	UT_CHECK_EQ(stats(a).tx_err + stats(b).tx_err, a0.tx_err + b0.tx_err);
	UT_NOTE("REQ/REP/RTU, DREQ/DREP, time-wait between two agents");
out:
	no_more_ev(&cli);
	no_more_ev(&srv);
	no_more_ev(&conn_owner);
	cm_unlisten(l);
}

/* A REJ with private data; a REQ nobody listens for: REJ 8. */
static void
check_reject(struct cm_agent *a, struct cm_agent *b)
{
	uint8_t priv[UROCE_CM_REJ_PRIV_LEN];
	struct cm_agent_stats b0 = stats(b);
	struct cm_peer to = peer_to(1);
	struct cm_listener *l = NULL;
	struct cm_conn *cc = NULL;
	struct uroce_cm_msg m;
	struct rec r;

	ut_fill_rand(priv, sizeof(priv));
	if (!UT_CHECK_EQ(cm_listen(b, SID_TCP(7472), 4, on_event, &srv, &l), 0))
		return;
	UT_CHECK_EQ(cm_conn_create(a, on_event, &cli, &cc), 0);
	req_body(&m, SID_TCP(7472), 0x333, 0, NULL, 0);
	UT_CHECK_EQ(cm_conn_send(cc, UROCE_CM_IN_SEND_REQ, &m, &to), 0);
	if (next_ev(&srv, UROCE_CM_EV_REQ_RCVD, &r)) {
		plain_body(&m, UROCE_CM_ATTR_REJ, priv, sizeof(priv));
		m.rej.reason = UROCE_CM_REJ_CONSUMER_DEFINED;
		UT_CHECK_EQ(cm_conn_send(r.c, UROCE_CM_IN_SEND_REJ, &m, NULL), 0);
		UT_CHECK_EQ(m.rej.msg_rejected, UROCE_CM_MSG_REQ);
		UT_CHECK_EQ(cm_conn_state(r.c), UROCE_CM_IDLE);
		cm_conn_release(r.c);
	}
	if (next_ev(&cli, UROCE_CM_EV_REJECTED, &r)) {
		UT_CHECK_EQ(r.rej_reason, UROCE_CM_REJ_CONSUMER_DEFINED);
		UT_CHECK_MEM(r.msg.rej.private_data, priv, sizeof(priv));
		UT_CHECK_EQ(r.msg.rej.msg_rejected, UROCE_CM_MSG_REQ);
	}
	UT_CHECK_EQ(cm_conn_state(cc), UROCE_CM_IDLE);
	/* The connection can send again after a REJ: to nobody this time. */
	req_body(&m, SID_TCP(9999), 0x334, 0, NULL, 0);
	UT_CHECK_EQ(cm_conn_send(cc, UROCE_CM_IN_SEND_REQ, &m, &to), 0);
	if (next_ev(&cli, UROCE_CM_EV_REJECTED, &r)) {
		UT_CHECK_EQ(r.rej_reason, UROCE_CM_REJ_INVALID_SERVICE_ID);
		UT_CHECK_EQ(r.msg.rej.remote_comm_id, m.req.local_comm_id);
	}
	UT_CHECK_EQ(stats(b).replied_unmatched, b0.replied_unmatched + 1);
	cm_conn_release(cc);
	UT_CHECK_EQ(stats(b).conns, b0.conns);
	UT_NOTE("REJ with private data; REQ to nobody: REJ 8");
	no_more_ev(&cli);
	no_more_ev(&srv);
	cm_unlisten(l);
}

/* Releases: an established connection sends a DREQ, a request a REJ 28. */
static void
check_release(struct cm_agent *a, struct cm_agent *b)
{
	struct cm_agent_stats a0 = stats(a), b0 = stats(b);
	struct cm_peer to = peer_to(1);
	struct cm_listener *l = NULL;
	struct cm_conn *cc, *sc;
	struct uroce_cm_msg m;
	struct rec r;

	if (!UT_CHECK_EQ(cm_listen(b, SID_TCP(7473), 4, on_event, &srv, &l), 0))
		return;
	if (connect_pair(a, b, SID_TCP(7473), &cc, &sc)) {
		cm_conn_release(cc);
		if (next_ev(&conn_owner, UROCE_CM_EV_DREQ_RCVD, &r))
			UT_CHECK_EQ(r.msg.dreq.remote_qpn, 0x222);
		plain_body(&m, UROCE_CM_ATTR_DREP, NULL, 0);
		UT_CHECK_EQ(cm_conn_send(sc, UROCE_CM_IN_SEND_DREP, &m, NULL), 0);
		UT_CHECK(next_ev(&conn_owner, UROCE_CM_EV_TIMEWAIT_EXIT, &r));
		cm_conn_release(sc);
		/* The released one: DREP, time-wait, then freed. */
		UT_CHECK(wait_stat(a, STAT_OFF(conns), a0.conns));
	}
	/* A request released by its listener's owner: REJ 28. */
	UT_CHECK_EQ(cm_conn_create(a, on_event, &cli, &cc), 0);
	req_body(&m, SID_TCP(7473), 0x444, 0, NULL, 0);
	UT_CHECK_EQ(cm_conn_send(cc, UROCE_CM_IN_SEND_REQ, &m, &to), 0);
	if (next_ev(&srv, UROCE_CM_EV_REQ_RCVD, &r))
		cm_conn_release(r.c);
	if (next_ev(&cli, UROCE_CM_EV_REJECTED, &r))
		UT_CHECK_EQ(r.rej_reason, UROCE_CM_REJ_CONSUMER_DEFINED);
	cm_conn_release(cc);
	UT_CHECK(wait_stat(a, STAT_OFF(conns), a0.conns));
	UT_CHECK(wait_stat(b, STAT_OFF(conns), b0.conns));
	UT_NOTE("release: DREQ from ESTABLISHED, REJ 28 from REQ_RCVD");
	no_more_ev(&cli);
	no_more_ev(&srv);
	no_more_ev(&conn_owner);
	cm_unlisten(l);
}

static void
check_sidr(struct cm_agent *a, struct cm_agent *b)
{
	uint8_t priv[UROCE_CM_SIDR_REP_PRIV_LEN], user[64];
	struct cm_peer to = peer_to(1);
	struct cm_listener *l = NULL;
	struct cm_conn *cc = NULL;
	struct uroce_cm_msg m;
	struct uroce_cma_hdr h;
	struct rec r;

	ut_fill_rand(priv, sizeof(priv));
	ut_fill_rand(user, sizeof(user));
	if (!UT_CHECK_EQ(cm_listen(b, SID_UDP(7474), 4, on_event, &srv, &l), 0))
		return;
	UT_CHECK_EQ(cm_conn_create(a, on_event, &cli, &cc), 0);
	memset(&m, 0, sizeof(m));
	uroce_cm_msg_init(&m, UROCE_CM_ATTR_SIDR_REQ, 0);
	m.sidr_req.service_id = SID_UDP(7474);
	m.sidr_req.pkey = 0xffff;
	memset(&h, 0, sizeof(h));
	h.ip_version = 4;
	h.src_port = 5000;
	UT_CHECK_EQ(uroce_cma_pack(&m, &h, user, sizeof(user)), 0);
	UT_CHECK_EQ(cm_conn_send(cc, UROCE_CM_IN_SEND_SIDR_REQ, &m, &to), 0);
	if (next_ev(&srv, UROCE_CM_EV_SIDR_REQ_RCVD, &r)) {
		UT_CHECK_EQ(r.msg.sidr_req.request_id, m.sidr_req.request_id);
		UT_CHECK_MEM(r.msg.sidr_req.private_data + UROCE_CMA_HDR_LEN,
			     user, sizeof(user));
		memset(&m, 0, sizeof(m));
		uroce_cm_msg_init(&m, UROCE_CM_ATTR_SIDR_REP, 0);
		m.sidr_rep.status = UROCE_CM_SIDR_SUCCESS;
		m.sidr_rep.qpn = 0x555;
		m.sidr_rep.qkey = 0x12345678;
		m.sidr_rep.service_id = SID_UDP(7474);
		UT_CHECK_EQ(uroce_cm_priv_set(&m, priv, sizeof(priv)), 0);
		UT_CHECK_EQ(cm_conn_send(r.c, UROCE_CM_IN_SEND_SIDR_REP, &m,
					 NULL), 0);
		cm_conn_release(r.c);
	}
	if (next_ev(&cli, UROCE_CM_EV_SIDR_REP_RCVD, &r)) {
		UT_CHECK_EQ(r.msg.sidr_rep.status, UROCE_CM_SIDR_SUCCESS);
		UT_CHECK_EQ(r.msg.sidr_rep.qpn, 0x555);
		UT_CHECK_EQ(r.msg.sidr_rep.qkey, 0x12345678);
		UT_CHECK_MEM(r.msg.sidr_rep.private_data, priv, sizeof(priv));
	}
	/* Nobody listens: SIDR_REP "service ID not supported". */
	memset(&m, 0, sizeof(m));
	uroce_cm_msg_init(&m, UROCE_CM_ATTR_SIDR_REQ, 0);
	m.sidr_req.service_id = SID_UDP(7475);
	UT_CHECK_EQ(cm_conn_send(cc, UROCE_CM_IN_SEND_SIDR_REQ, &m, &to), 0);
	if (next_ev(&cli, UROCE_CM_EV_SIDR_REP_RCVD, &r))
		UT_CHECK_EQ(r.msg.sidr_rep.status, UROCE_CM_SIDR_UNSUPPORTED);
	cm_conn_release(cc);
	UT_NOTE("SIDR_REQ -> SIDR_REP; to nobody: unsupported");
	no_more_ev(&cli);
	no_more_ev(&srv);
	cm_unlisten(l);
}

/* The peer's device has no GSI consumer: its engine answers the REQ with
 * REJ 8 "invalid service ID" at once, echoing the REQ's comm ID, as a
 * host's kernel CM does for a service nobody listens on. */
static void
check_noagent(struct cm_agent *a)
{
	struct cm_agent_stats a0 = stats(a);
	struct cm_peer to = peer_to(1);
	struct cm_conn *cc = NULL;
	struct uroce_cm_msg m;
	struct rec r;

	UT_CHECK_EQ(cm_conn_create(a, on_event, &cli, &cc), 0);
	req_body(&m, SID_TCP(7477), 0x667, 0, NULL, 0);
	UT_CHECK_EQ(cm_conn_send(cc, UROCE_CM_IN_SEND_REQ, &m, &to), 0);
	if (UT_CHECK(next_ev(&cli, UROCE_CM_EV_REJECTED, &r)) &&
	    UT_CHECK(r.has_msg)) {
		UT_CHECK_EQ(r.rej_reason, UROCE_CM_REJ_INVALID_SERVICE_ID);
		UT_CHECK_EQ(r.msg.rej.reason, UROCE_CM_REJ_INVALID_SERVICE_ID);
		UT_CHECK_EQ(r.msg.rej.msg_rejected, UROCE_CM_MSG_REQ);
		UT_CHECK_EQ(r.msg.rej.remote_comm_id, m.req.local_comm_id);
		UT_CHECK_EQ(r.msg.rej.local_comm_id, 0);
		UT_CHECK_EQ(r.msg.hdr.tid, m.hdr.tid);
	}
	UT_CHECK_EQ(stats(a).tx, a0.tx + 1);
	UT_CHECK_EQ(stats(a).resends, a0.resends);
	cm_conn_release(cc);
	UT_NOTE("REQ to a device with no agent: REJ 8 from its engine");
	no_more_ev(&cli);
}

/* The peer's GSI is open but never answers: MaxCMRetries + 1 REQs, then
 * UNREACHABLE. */
static void
check_unreachable(struct cm_agent *a)
{
	const struct uroce_cm_timing fast = {
		.cm_resp_timeout = 8, .max_cm_retries = 3, .packet_life = 8,
	};
	const struct uroce_cm_timing bad = { .cm_resp_timeout = 32 };
	struct cm_agent_stats a0 = stats(a);
	struct cm_peer to = peer_to(1);
	struct cm_conn *cc = NULL;
	struct uroce_cm_msg m;
	struct rec r;

	UT_CHECK_EQ(cm_agent_set_timing(a, &bad), -EINVAL);
	UT_CHECK_EQ(cm_agent_set_timing(a, &fast), 0);
	UT_CHECK_EQ(cm_conn_create(a, on_event, &cli, &cc), 0);
	req_body(&m, SID_TCP(7476), 0x666, 0, NULL, 0);
	UT_CHECK_EQ(cm_conn_send(cc, UROCE_CM_IN_SEND_REQ, &m, &to), 0);
	UT_CHECK_EQ(m.req.max_cm_retries, 3);
	UT_CHECK_EQ(m.req.remote_cm_resp_timeout, 8);
	UT_CHECK(next_ev(&cli, UROCE_CM_EV_UNREACHABLE, &r));
	UT_CHECK(!r.has_msg);
	UT_CHECK_EQ(stats(a).tx, a0.tx + 4);
	UT_CHECK_EQ(stats(a).resends, a0.resends + 3);
	UT_CHECK_EQ(cm_conn_state(cc), UROCE_CM_IDLE);
	cm_conn_release(cc);
	UT_CHECK_EQ(stats(a).conns, a0.conns);
	UT_NOTE("REQ to a closed GSI: 4 sends, then UNREACHABLE");
	no_more_ev(&cli);
}

/* ------------------------------------------------------------------------
 * A raw GSI on device 0: the table of libibverbs.so.1 used directly.
 */
struct raw {
	const struct uroce_verbs_cm_glue *g;
	struct uroce_verbs_gsi *h;
};

static void
raw_send_mad(struct raw *w, const uint8_t *mad)
{
	struct uroce_verbs_mad_tx tx;

	memset(&tx, 0, sizeof(tx));
	memcpy(tx.mad, mad, sizeof(tx.mad));
	tx.dgid = gid[1];
	UT_CHECK_EQ(w->g->gsi_send(w->h, &tx), 0);
}

static void
raw_send(struct raw *w, const struct uroce_cm_msg *m, uint8_t *mad_out)
{
	uint8_t mad[UROCE_MAD_LEN];

	if (!UT_CHECK_EQ(uroce_cm_encode(m, mad), 0))
		return;
	raw_send_mad(w, mad);
	if (mad_out != NULL)
		memcpy(mad_out, mad, sizeof(mad));
}

/* The next MAD (@wait: bounded by UT_WAIT_S, else only what is there). */
static bool
raw_recv(struct raw *w, struct uroce_cm_msg *m, uint8_t *mad_out, bool wait)
{
	double end = ut_now_s() + UT_WAIT_S;
	struct uroce_verbs_mad_rx rx;
	struct pollfd p = { .fd = w->g->gsi_fd(w->h), .events = POLLIN };
	int n;

	do {
		n = w->g->gsi_recv(w->h, &rx, 1);
		if (n == 1) {
			if (mad_out != NULL)
				memcpy(mad_out, rx.mad, sizeof(rx.mad));
			return UT_CHECK_EQ(uroce_cm_decode(rx.mad, sizeof(rx.mad),
							   m), 0);
		}
		if (!wait)
			return false;
		poll(&p, 1, 20);
	} while (ut_now_s() < end);
	return false;
}

static bool
raw_expect(struct raw *w, uint16_t attr, struct uroce_cm_msg *m, uint8_t *mad)
{
	if (!UT_CHECK(raw_recv(w, m, mad, true)))
		return false;
	return UT_CHECK_EQ(m->hdr.attr_id, attr);
}

static void
raw_req(struct uroce_cm_msg *m, uint64_t sid, uint32_t id, uint32_t qpn,
	uint64_t tid)
{
	req_body(m, sid, qpn, 0, NULL, 0);
	m->hdr.tid = tid;
	m->req.local_comm_id = id;
	m->req.remote_cm_resp_timeout = 20;
	m->req.local_cm_resp_timeout = 20;
	m->req.max_cm_retries = 15;
	m->req.local_ca_guid = guid[0];
}

/* Duplicates: a REQ again before the answer (ignored), after the REP (the
 * same REP bytes again); a REQ in time-wait and one from a QPN still
 * known: REJ 10. */
static void
check_duplicates(struct raw *w, struct cm_agent *b)
{
	uint8_t rep1[UROCE_MAD_LEN], rep2[UROCE_MAD_LEN], priv[40];
	struct cm_agent_stats b0 = stats(b);
	struct cm_listener *l = NULL;
	struct uroce_cm_msg req, m, rep;
	struct cm_conn *sc = NULL;
	struct rec r;

	ut_fill_rand(priv, sizeof(priv));
	if (!UT_CHECK_EQ(cm_listen(b, SID_TCP(7480), 4, on_event, &srv, &l), 0))
		return;
	raw_req(&req, SID_TCP(7480), 0xabc00001, 0x777, 0x1111);
	raw_send(w, &req, NULL);
	if (next_ev(&srv, UROCE_CM_EV_REQ_RCVD, &r))
		sc = r.c;
	raw_send(w, &req, NULL);	/* unanswered yet: ignored */
	UT_CHECK(wait_stat(b, STAT_OFF(duplicates), b0.duplicates + 1));
	if (sc == NULL)
		goto out;
	cm_conn_own(sc, on_event, &conn_owner);
	rep_body(&m, 0x888, priv, sizeof(priv));
	UT_CHECK_EQ(cm_conn_send(sc, UROCE_CM_IN_SEND_REP, &m, NULL), 0);
	if (raw_expect(w, UROCE_CM_ATTR_REP, &rep, rep1)) {
		UT_CHECK_EQ(rep.hdr.tid, 0x1111);
		UT_CHECK_EQ(rep.rep.remote_comm_id, 0xabc00001);
	}
	raw_send(w, &req, NULL);	/* REP_SENT: the same REP again */
	if (raw_expect(w, UROCE_CM_ATTR_REP, &rep, rep2))
		UT_CHECK_MEM(rep1, rep2, UROCE_MAD_LEN);
	UT_CHECK_EQ(stats(b).resends, b0.resends + 1);
	UT_CHECK_EQ(stats(b).duplicates, b0.duplicates + 2);

	/* RTU, then the raw side disconnects: DREQ -> DREP (the owner's). */
	memset(&m, 0, sizeof(m));
	uroce_cm_msg_init(&m, UROCE_CM_ATTR_RTU, 0x1111);
	m.rtu.local_comm_id = 0xabc00001;
	m.rtu.remote_comm_id = rep.rep.local_comm_id;
	raw_send(w, &m, NULL);
	UT_CHECK(next_ev(&conn_owner, UROCE_CM_EV_ESTABLISHED, &r));
	uroce_cm_msg_init(&m, UROCE_CM_ATTR_DREQ, 0x2222);
	m.dreq.local_comm_id = 0xabc00001;
	m.dreq.remote_comm_id = rep.rep.local_comm_id;
	m.dreq.remote_qpn = 0x888;
	raw_send(w, &m, rep1);
	UT_CHECK(next_ev(&conn_owner, UROCE_CM_EV_DREQ_RCVD, &r));
	plain_body(&m, UROCE_CM_ATTR_DREP, NULL, 0);
	UT_CHECK_EQ(cm_conn_send(sc, UROCE_CM_IN_SEND_DREP, &m, NULL), 0);
	if (raw_expect(w, UROCE_CM_ATTR_DREP, &m, NULL))
		UT_CHECK_EQ(m.hdr.tid, 0x2222);
	/* Time-wait: the DREQ again gets a DREP; the same REQ a REJ 10;
	 * a new REQ from the same QPN a REJ 10 too. */
	raw_send_mad(w, rep1);
	raw_expect(w, UROCE_CM_ATTR_DREP, &m, NULL);
	raw_send(w, &req, NULL);
	if (raw_expect(w, UROCE_CM_ATTR_REJ, &m, NULL))
		UT_CHECK_EQ(m.rej.reason, UROCE_CM_REJ_STALE_CONN);
	UT_CHECK_EQ(stats(b).replied, b0.replied + 2);
	raw_req(&req, SID_TCP(7480), 0xabc00002, 0x777, 0x3333);
	raw_send(w, &req, NULL);
	if (raw_expect(w, UROCE_CM_ATTR_REJ, &m, NULL)) {
		UT_CHECK_EQ(m.rej.reason, UROCE_CM_REJ_STALE_CONN);
		UT_CHECK_EQ(m.rej.remote_comm_id, 0xabc00002);
		UT_CHECK_EQ(m.hdr.tid, 0x3333);
	}
	UT_CHECK_EQ(stats(b).rej_stale, b0.rej_stale + 1);
	UT_CHECK(next_ev(&conn_owner, UROCE_CM_EV_TIMEWAIT_EXIT, &r));
	cm_conn_release(sc);
	UT_NOTE("duplicate REQs, REJ stale in time-wait and from a known QPN");
out:
	no_more_ev(&srv);
	no_more_ev(&conn_owner);
	cm_unlisten(l);
}

/* Past the backlog: REJ 28, nothing kept; unlisten rejects the rest. */
static void
check_backlog(struct raw *w, struct cm_agent *b)
{
	struct cm_agent_stats b0 = stats(b);
	struct cm_listener *l = NULL;
	struct cm_conn *owned = NULL;
	struct uroce_cm_msg req, m;
	struct rec r;
	unsigned int i, rej = 0;

	if (!UT_CHECK_EQ(cm_listen(b, SID_TCP(7481), 2, on_event, &srv, &l), 0))
		return;
	for (i = 0; i < 3; i++) {
		raw_req(&req, SID_TCP(7481), 0xbcd00000 + i, 0x900 + i, 0x10 + i);
		raw_send(w, &req, NULL);
	}
	UT_CHECK(next_ev(&srv, UROCE_CM_EV_REQ_RCVD, &r));
	if (UT_CHECK(next_ev(&srv, UROCE_CM_EV_REQ_RCVD, &r)))
		owned = r.c;
	if (raw_expect(w, UROCE_CM_ATTR_REJ, &m, NULL)) {
		UT_CHECK_EQ(m.rej.reason, UROCE_CM_REJ_CONSUMER_DEFINED);
		UT_CHECK_EQ(m.rej.remote_comm_id, 0xbcd00002);
		UT_CHECK_EQ(m.rej.msg_rejected, UROCE_CM_MSG_REQ);
	}
	UT_CHECK_EQ(stats(b).rej_backlog, b0.rej_backlog + 1);
	UT_CHECK_EQ(stats(b).conns, b0.conns + 2);
	/* One taken by an owner: room for one more. */
	cm_conn_own(owned, on_event, &conn_owner);
	raw_req(&req, SID_TCP(7481), 0xbcd00003, 0x903, 0x13);
	raw_send(w, &req, NULL);
	UT_CHECK(next_ev(&srv, UROCE_CM_EV_REQ_RCVD, &r));
	/* Unlisten: the two it holds are rejected; the owned one stays. */
	cm_unlisten(l);
	for (i = 0; i < 2; i++)
		if (raw_expect(w, UROCE_CM_ATTR_REJ, &m, NULL) &&
		    m.rej.reason == UROCE_CM_REJ_CONSUMER_DEFINED)
			rej++;
	UT_CHECK_EQ(rej, 2);
	UT_CHECK_EQ(stats(b).conns, b0.conns + 1);
	UT_CHECK_EQ(cm_conn_state(owned), UROCE_CM_REQ_RCVD);
	cm_conn_release(owned);
	if (raw_expect(w, UROCE_CM_ATTR_REJ, &m, NULL))
		UT_CHECK_EQ(m.rej.remote_comm_id, 0xbcd00001);
	UT_CHECK_EQ(stats(b).conns, b0.conns);
	UT_NOTE("backlog 2: the third REQ REJ 28; unlisten rejects the rest");
	no_more_ev(&srv);
	no_more_ev(&conn_owner);
}

/* The flood's owner: answers every request with a REP, never gets an
 * RTU, releases what times out. On the agent's thread. */
static void
flood_event(struct owner *o, struct cm_conn *c, const struct cm_event *e)
{
	struct uroce_cm_msg m;
	bool bad = false;

	if (e->ev == UROCE_CM_EV_REQ_RCVD) {
		rep_body(&m, 0x2000 + (e->msg->req.local_qpn & 0xfff), NULL, 0);
		bad = cm_conn_send(c, UROCE_CM_IN_SEND_REP, &m, NULL) != 0;
	} else if (e->ev == UROCE_CM_EV_UNREACHABLE) {
		cm_conn_release(c);
	} else {
		bad = true;
	}
	pthread_mutex_lock(&ev_lock);
	o->req += e->ev == UROCE_CM_EV_REQ_RCVD;
	o->unreach += e->ev == UROCE_CM_EV_UNREACHABLE;
	o->other += bad;
	pthread_mutex_unlock(&ev_lock);
}

#define FLOOD_N		10000u
#define FLOOD_WINDOW	64u
#define FLOOD_BACKLOG	16

/* Take what waits on the raw GSI: first answers per REQ, by kind. */
static void
flood_drain(struct raw *w, uint8_t *answered, unsigned int *reps,
	    unsigned int *rejs)
{
	struct uroce_cm_msg m;
	uint32_t i;

	while (raw_recv(w, &m, NULL, false)) {
		i = (m.hdr.attr_id == UROCE_CM_ATTR_REP ? m.rep.remote_comm_id :
		     m.rej.remote_comm_id) - 0x10000000u;
		if (!UT_CHECK(i < FLOOD_N))
			continue;
		if (answered[i]++ == 0) {
			*reps += m.hdr.attr_id == UROCE_CM_ATTR_REP;
			*rejs += m.hdr.attr_id == UROCE_CM_ATTR_REJ;
		}
	}
}

/*
 * 10,000 REQs from one peer, never completed. Paced by what the agent
 * has received (at most FLOOD_WINDOW ahead), so that no REQ is lost on
 * the way in; what comes back is counted by the agent (what the raw side
 * reads of the answers and their resends may lose some to its own ring,
 * so it only has to see both kinds).
 */
static void
check_flood(struct raw *w, struct cm_agent *b)
{
	const struct uroce_cm_timing fast = {
		.cm_resp_timeout = 8, .max_cm_retries = 2, .packet_life = 4,
	};
	struct owner fo = { .name = "flood", .flood = true };
	static uint8_t answered[FLOOD_N];
	struct cm_agent_stats b0 = stats(b), b1;
	unsigned int sent, reps = 0, rejs = 0, acc;
	struct pollfd p = { .fd = w->g->gsi_fd(w->h), .events = POLLIN };
	double end = ut_now_s() + 10 * UT_WAIT_S;
	struct cm_listener *l = NULL;
	struct uroce_cm_msg req;

	UT_CHECK_EQ(cm_agent_set_timing(b, &fast), 0);
	if (!UT_CHECK_EQ(cm_listen(b, SID_TCP(7482), FLOOD_BACKLOG, on_event,
				   &fo, &l), 0))
		return;
	memset(answered, 0, sizeof(answered));
	for (sent = 0; sent < FLOOD_N && ut_now_s() < end; sent++) {
		while (sent - (stats(b).rx - b0.rx) >= FLOOD_WINDOW &&
		       ut_now_s() < end) {
			poll(&p, 1, 1);
			flood_drain(w, answered, &reps, &rejs);
		}
		raw_req(&req, SID_TCP(7482), 0x10000000u + sent,
			0x10000 + sent, sent);
		req.req.local_cm_resp_timeout = 8;
		req.req.max_cm_retries = 2;
		raw_send(w, &req, NULL);
		flood_drain(w, answered, &reps, &rejs);
	}
	UT_CHECK(wait_stat(b, STAT_OFF(rx), b0.rx + FLOOD_N));
	/* Every accepted one expires: REP sent 3 times, then UNREACHABLE,
	 * released, freed. */
	UT_CHECK(wait_stat(b, STAT_OFF(conns), b0.conns));
	b1 = stats(b);
	pthread_mutex_lock(&ev_lock);
	acc = fo.req;
	UT_CHECK_EQ(fo.req + (b1.rej_backlog - b0.rej_backlog), FLOOD_N);
	UT_CHECK_EQ(fo.unreach, fo.req);
	UT_CHECK_EQ(fo.other, 0);
	pthread_mutex_unlock(&ev_lock);
	UT_CHECK(acc >= FLOOD_BACKLOG);
	UT_CHECK_EQ(b1.resends - b0.resends, 2 * acc);
	UT_CHECK_EQ(b1.tx - b0.tx, 3 * acc + (b1.rej_backlog - b0.rej_backlog));
	UT_CHECK_EQ(b1.tx_err, b0.tx_err);
	UT_CHECK_EQ(b1.drop_decode + b1.drop_unmatched,
		    b0.drop_decode + b0.drop_unmatched);
	cm_unlisten(l);
	flood_drain(w, answered, &reps, &rejs);
	UT_CHECK(reps > 0 && rejs > 0);
	UT_CHECK(reps <= acc && rejs <= b1.rej_backlog - b0.rej_backlog);
	UT_NOTE("flood: %u REQs, %u accepted and expired", FLOOD_N, acc);
	printf("flood: %u REQs, %u accepted (each expired), %" PRIu64
	       " refused past backlog %d; the raw side read %u REPs, %u REJs\n",
	       FLOOD_N, acc, b1.rej_backlog - b0.rej_backlog, FLOOD_BACKLOG,
	       reps, rejs);
}

/* What is not a CM MAD: dropped, counted. */
static void
check_bad_mads(struct raw *w, struct cm_agent *b)
{
	struct cm_agent_stats b0 = stats(b);
	struct uroce_cm_msg m;
	uint8_t mad[UROCE_MAD_LEN];

	raw_req(&m, SID_TCP(1), 0xcde00001, 0x999, 1);
	if (!UT_CHECK_EQ(uroce_cm_encode(&m, mad), 0))
		return;
	mad[2] = 1;		/* CM class version 1 */
	raw_send_mad(w, mad);
	mad[2] = 2;
	mad[1] = 0x03;		/* subnet administration */
	raw_send_mad(w, mad);
	mad[1] = 0x07;
	mad[17] = 0x19;		/* LAP: not handled */
	raw_send_mad(w, mad);
	UT_CHECK(wait_stat(b, STAT_OFF(drop_decode), b0.drop_decode + 3));
	UT_CHECK_EQ(stats(b).tx, b0.tx);
	/* An RTU for nobody: dropped; a DREQ for nobody: a DREP. */
	uroce_cm_msg_init(&m, UROCE_CM_ATTR_RTU, 5);
	m.rtu.local_comm_id = 1;
	m.rtu.remote_comm_id = 0x5a5a5a5a;
	raw_send(w, &m, NULL);
	UT_CHECK(wait_stat(b, STAT_OFF(drop_unmatched), b0.drop_unmatched + 1));
	uroce_cm_msg_init(&m, UROCE_CM_ATTR_DREQ, 6);
	m.dreq.local_comm_id = 1;
	m.dreq.remote_comm_id = 0x5a5a5a5a;
	raw_send(w, &m, NULL);
	if (raw_expect(w, UROCE_CM_ATTR_DREP, &m, NULL)) {
		UT_CHECK_EQ(m.hdr.tid, 6);
		UT_CHECK_EQ(m.drep.remote_comm_id, 1);
	}
	UT_NOTE("bad MADs dropped; unmatched RTU dropped, DREQ answered");
}

static void
run_raw(struct cm_agent *b)
{
	struct raw w = { .g = uroce_verbs_cm_glue(UROCE_VERBS_CM_GLUE_V1) };

	if (!UT_CHECK(w.g != NULL) ||
	    !UT_CHECK_EQ(w.g->gsi_open(ctx[0], &w.h), 0))
		return;
	check_bad_mads(&w, b);
	check_duplicates(&w, b);
	check_backlog(&w, b);
	check_flood(&w, b);
	w.g->gsi_close(w.h);
}

/* A raw GSI on device 1 that reads nothing: A's REQs go unanswered. */
static void
run_silent(struct cm_agent *a)
{
	struct raw w = { .g = uroce_verbs_cm_glue(UROCE_VERBS_CM_GLUE_V1) };

	if (!UT_CHECK(w.g != NULL) ||
	    !UT_CHECK_EQ(w.g->gsi_open(ctx[1], &w.h), 0))
		return;
	check_unreachable(a);
	w.g->gsi_close(w.h);
}

/* DPDK telemetry's /uroce/cm, through this process's telemetry socket:
 * the counters of device 1's agent as cm_agent_stats() gives them. */
static void
check_telemetry(struct cm_agent *b)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct cm_agent_stats st = stats(b);
	char js[16384], want[64];
	const char *p;
	ssize_t n = -1;
	int fd;

	if (!UT_CHECK(strlen(ut_verbs_rundir) + 20 < sizeof(sun.sun_path)))
		return;
	memcpy(sun.sun_path, ut_verbs_rundir, strlen(ut_verbs_rundir));
	strcat(sun.sun_path, "/dpdk_telemetry.v2");
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (!UT_CHECK(fd >= 0))
		return;
	if (UT_CHECK(connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0) &&
	    UT_CHECK(recv(fd, js, sizeof(js), 0) > 0) &&
	    UT_CHECK(send(fd, "/uroce/cm", 9, 0) == 9))
		n = recv(fd, js, sizeof(js) - 1, 0);
	close(fd);
	if (!UT_CHECK(n > 0))
		return;
	js[n] = '\0';
	p = strstr(js, "\"uroce1\":{");
	if (!UT_CHECK(p != NULL))
		return;
	snprintf(want, sizeof(want), "\"rx\":%" PRIu64 ",", st.rx);
	UT_CHECK(strstr(p, want) != NULL);
	snprintf(want, sizeof(want), "\"conns\":%" PRIu64 ",", st.conns);
	UT_CHECK(strstr(p, want) != NULL);
	UT_CHECK(strstr(js, "\"uroce0\":{") != NULL);
	UT_NOTE("telemetry /uroce/cm: %s", js);
}

/* get/put: one agent a device, shared; not ours: -ENODEV. */
static void
check_get(struct cm_agent *a)
{
	struct ibv_device **list;
	struct ibv_context *again, fake;
	struct cm_agent *x = NULL;
	int n;

	UT_CHECK_EQ(cm_agent_get(ctx[0], &x), 0);
	UT_CHECK(x == a);
	cm_agent_put(x);
	list = ibv_get_device_list(&n);
	again = list != NULL ? ibv_open_device(list[0]) : NULL;
	if (UT_CHECK(again != NULL)) {
		UT_CHECK_EQ(cm_agent_get(again, &x), 0);
		UT_CHECK(x == a);
		cm_agent_put(x);
		ibv_close_device(again);
	}
	ibv_free_device_list(list);
	memset(&fake, 0, sizeof(fake));
	UT_CHECK_EQ(cm_agent_get(&fake, &x), -ENODEV);
	UT_CHECK_EQ(cm_agent_get(NULL, &x), -EINVAL);
}

int
main(void)
{
	struct ibv_device **list = NULL;
	struct cm_agent *a = NULL, *b = NULL;
	int i;

	ut_srand(0xc3a9);
	if (ut_verbs_ringlink_pair("cma", 86, &list, &ctx[0], &ctx[1]) != 0)
		goto out;
	for (i = 0; i < 2; i++) {
		UT_CHECK_EQ(ibv_query_gid(ctx[i], 1, 0, &gid[i]), 0);
		guid[i] = be64toh(ibv_get_device_guid(ctx[i]->device));
	}
	if (!UT_CHECK_EQ(cm_agent_get(ctx[0], &a), 0) ||
	    !UT_CHECK_EQ(cm_agent_get(ctx[1], &b), 0))
		goto out;
	check_get(a);
	check_connect_disconnect(a, b);
	check_reject(a, b);
	check_release(a, b);
	check_sidr(a, b);
	check_telemetry(b);
	/* Device 0 without its agent: a raw GSI against B's agent. */
	cm_agent_put(a);
	a = NULL;
	run_raw(b);
	/* Device 1 without its agent: its engine refuses A's REQ; then a
	 * raw GSI there that never answers: A's REQs go unanswered. */
	cm_agent_put(b);
	b = NULL;
	if (UT_CHECK_EQ(cm_agent_get(ctx[0], &a), 0)) {
		check_noagent(a);
		run_silent(a);
	}
out:
	cm_agent_put(a);
	cm_agent_put(b);
	ut_verbs_close_pair(list, ctx[0], ctx[1]);
	return ut_summary();
}
