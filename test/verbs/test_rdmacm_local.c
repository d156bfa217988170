/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Our librdmacm.so.1 where no connection is needed, over the two devices of
 * a ringlink configuration in this process (uroce0 192.168.<N>.1, uroce1
 * .2): event channel fd semantics (poll, O_NONBLOCK), rdma_getaddrinfo's
 * forms, bind errors (EADDRINUSE, EADDRNOTAVAIL, ENODEV) and ephemeral
 * ports, address resolution (ADDR_RESOLVED over the ring's ARP, ENODEV off
 * every subnet, ADDR_ERROR -ETIMEDOUT for a neighbour that never answers),
 * the route, synchronous ids, the QP's first states and rdma_init_qp_attr,
 * the private data limits, and the calls that are not supported yet; an id
 * destroyed or migrated with an unread event takes its readiness with it
 * and never changes the flags of the application's fd.
 * Then connections between the two devices through the CM agents: private
 * data of REQ and REP delivered, both QPs in RTS facing each other,
 * DISCONNECTED on both sides; REJECTED with reason 8 for a port nobody
 * listens on and 28 with the REJ's private data from rdma_reject(); the
 * listener's backlog of unread requests, past which a REQ is not
 * answered (the peer's resend then connects).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

#include "uroce_test.h"
#include "uroce_test_verbs.h"

#define SUBNET		97
/* [port0] cm_ack_timeout of the run (uroce1 keeps the default, 17) */
#define PORT0_ACK_TIMEOUT	14
#define PORT0_ACK_TIMEOUT_S	"14"
/* A guard against a hang, not a timing threshold. */
#define GUARD_MS	30000

static struct sockaddr_in
sin_of(const char *ip, uint16_t port)
{
	struct sockaddr_in s;

	memset(&s, 0, sizeof(s));
	s.sin_family = AF_INET;
	s.sin_port = htons(port);
	inet_pton(AF_INET, ip, &s.sin_addr);
	return s;
}

static char *
addr_of(unsigned int host)
{
	static char buf[4][32];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "192.168.%d.%u", SUBNET, host);
	return buf[i];
}

/* The next event of @ch, waited for with poll (bounded). */
static struct rdma_cm_event *
next_event(struct rdma_event_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev = NULL;

	if (!UT_CHECK(poll(&p, 1, GUARD_MS) == 1))
		return NULL;
	if (!UT_CHECK_EQ(rdma_get_cm_event(ch, &ev), 0))
		return NULL;
	return ev;
}

static void
test_channel(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct pollfd p;
	struct rdma_cm_event *ev;

	if (!UT_CHECK(ch != NULL))
		return;
	UT_CHECK(ch->fd >= 0);
	/* nothing queued: poll times out, a non-blocking read is EAGAIN */
	p.fd = ch->fd;
	p.events = POLLIN;
	UT_CHECK_EQ(poll(&p, 1, 0), 0);
	UT_CHECK_EQ(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK),
		    0);
	errno = 0;
	UT_CHECK_EQ(rdma_get_cm_event(ch, &ev), -1);
	UT_CHECK_EQ(errno, EAGAIN);
	UT_CHECK_EQ(rdma_get_cm_event(NULL, &ev), -1);
	UT_CHECK_EQ(errno, EINVAL);
	rdma_destroy_event_channel(ch);
	UT_CHECK(strcmp(rdma_event_str(RDMA_CM_EVENT_ESTABLISHED),
			"RDMA_CM_EVENT_ESTABLISHED") == 0);
	UT_CHECK(strcmp(rdma_event_str(RDMA_CM_EVENT_TIMEWAIT_EXIT),
			"RDMA_CM_EVENT_TIMEWAIT_EXIT") == 0);
	UT_CHECK(strcmp(rdma_event_str((enum rdma_cm_event_type)99),
			"UNKNOWN EVENT") == 0);
}

/* Watches a channel fd's flags until told to stop. */
struct flag_watch {
	int fd;
	bool stop;
	bool saw_nonblock;
};

static void *
flag_watch_run(void *arg)
{
	struct flag_watch *w = arg;

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE))
		if (fcntl(w->fd, F_GETFL) & O_NONBLOCK)
			w->saw_nonblock = true;
	return NULL;
}

/* A blocking rdma_get_cm_event() on another thread. */
struct blocked_read {
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;
	int ret;
	int err;
};

static void *
blocked_read_run(void *arg)
{
	struct blocked_read *r = arg;

	r->ret = rdma_get_cm_event(r->ch, &r->ev);
	r->err = errno;
	return NULL;
}

/* An id of @ch resolving an address (ADDR_RESOLVED to come). */
static struct rdma_cm_id *
id_resolving(struct rdma_event_channel *ch)
{
	struct sockaddr_in dst = sin_of(addr_of(2), 20040);
	struct rdma_cm_id *id;

	if (!UT_CHECK_EQ(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0))
		return NULL;
	UT_CHECK_EQ(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000),
		    0);
	return id;
}

/* An id of @ch with one unread ADDR_RESOLVED event (the fd readable). */
static struct rdma_cm_id *
id_with_event(struct rdma_event_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_id *id = id_resolving(ch);

	if (id != NULL)
		UT_CHECK_EQ(poll(&p, 1, GUARD_MS), 1);
	return id;
}

/*
 * Events removed unread (rdma_destroy_id, rdma_migrate_id) take their
 * readiness with them: the fd is no longer readable, a blocking reader
 * sleeps on to the next event, and the application's fd flags never
 * change meanwhile (a reader entering then would fail with EAGAIN).
 */
static void
test_channel_unread(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_event_channel *ch2 = rdma_create_event_channel();
	struct pollfd p;
	struct flag_watch w = { 0 };
	struct blocked_read r = { 0 };
	struct rdma_cm_id *id, *id2;
	pthread_t t;
	int i;

	id2 = NULL;
	if (!UT_CHECK(ch != NULL && ch2 != NULL))
		return;
	p.fd = ch->fd;
	p.events = POLLIN;
	w.fd = ch->fd;
	UT_CHECK_EQ(pthread_create(&t, NULL, flag_watch_run, &w), 0);
	for (i = 0; i < 50; i++) {
		id = id_with_event(ch);
		if (id == NULL)
			break;
		UT_CHECK_EQ(rdma_destroy_id(id), 0);
		if (!UT_CHECK_EQ(poll(&p, 1, 0), 0))
			break;
	}
	__atomic_store_n(&w.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	UT_CHECK(!w.saw_nonblock);
	/* migrated with its event: ch2 readable, ch not */
	id = id_with_event(ch);
	if (id != NULL) {
		UT_CHECK_EQ(rdma_migrate_id(id, ch2), 0);
		UT_CHECK_EQ(poll(&p, 1, 0), 0);
		p.fd = ch2->fd;
		UT_CHECK_EQ(poll(&p, 1, 0), 1);
		p.fd = ch->fd;
	}
	if (id != NULL) {
		UT_CHECK_EQ(rdma_destroy_id(id), 0);
		p.fd = ch2->fd;
		UT_CHECK_EQ(poll(&p, 1, 0), 0);
	}
	/* a blocking reader of the emptied channel gets the next event */
	r.ch = ch2;
	UT_CHECK_EQ(pthread_create(&t, NULL, blocked_read_run, &r), 0);
	id2 = id_resolving(ch2);
	pthread_join(t, NULL);
	if (UT_CHECK_EQ(r.ret, 0)) {
		UT_CHECK(r.ev->id == id2);
		UT_CHECK_EQ(r.ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
		rdma_ack_cm_event(r.ev);
	} else {
		UT_NOTE("blocking read: %s", strerror(r.err));
	}
	if (id2 != NULL)
		rdma_destroy_id(id2);
	rdma_destroy_event_channel(ch2);
	rdma_destroy_event_channel(ch);
}

static void
test_getaddrinfo(void)
{
	struct rdma_addrinfo hints, *res = NULL;
	struct sockaddr_in *s;

	/* passive, no node: the wildcard with the service as port */
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_PASSIVE;
	hints.ai_port_space = RDMA_PS_TCP;
	if (UT_CHECK_EQ(rdma_getaddrinfo(NULL, "7471", &hints, &res), 0)) {
		UT_CHECK(res->ai_src_addr != NULL && res->ai_dst_addr == NULL);
		s = (struct sockaddr_in *)res->ai_src_addr;
		UT_CHECK_EQ(s->sin_family, AF_INET);
		UT_CHECK_EQ(ntohs(s->sin_port), 7471);
		UT_CHECK_EQ(s->sin_addr.s_addr, htonl(INADDR_ANY));
		UT_CHECK_EQ(res->ai_port_space, RDMA_PS_TCP);
		UT_CHECK_EQ(res->ai_qp_type, IBV_QPT_RC);
		rdma_freeaddrinfo(res);
	}
	/* active, numeric: the destination */
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_NUMERICHOST;
	res = NULL;
	if (UT_CHECK_EQ(rdma_getaddrinfo(addr_of(2), "20079", &hints, &res), 0)) {
		s = (struct sockaddr_in *)res->ai_dst_addr;
		UT_CHECK(s != NULL && res->ai_dst_len == sizeof(*s));
		UT_CHECK_EQ(ntohs(s->sin_port), 20079);
		UT_CHECK_EQ(s->sin_addr.s_addr, sin_of(addr_of(2), 0).sin_addr.s_addr);
		rdma_freeaddrinfo(res);
	}
	/* UD hints give the UDP port space */
	memset(&hints, 0, sizeof(hints));
	hints.ai_qp_type = IBV_QPT_UD;
	res = NULL;
	if (UT_CHECK_EQ(rdma_getaddrinfo(addr_of(2), "1", &hints, &res), 0)) {
		UT_CHECK_EQ(res->ai_port_space, RDMA_PS_UDP);
		rdma_freeaddrinfo(res);
	}
	/* a name with RAI_NUMERICHOST, an unknown flag: getaddrinfo's codes */
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_NUMERICHOST;
	UT_CHECK_EQ(rdma_getaddrinfo("no-such-host.invalid", "1", &hints, &res),
		    EAI_NONAME);
	hints.ai_flags = 0x100;
	UT_CHECK_EQ(rdma_getaddrinfo(addr_of(2), "1", &hints, &res), EAI_BADFLAGS);
	UT_CHECK_EQ(rdma_getaddrinfo(NULL, NULL, NULL, &res), -1);
	UT_CHECK_EQ(errno, EINVAL);
}

static void
test_bind(void)
{
	struct rdma_cm_id *a, *b, *w;
	struct sockaddr_in s;

	if (!UT_CHECK_EQ(rdma_create_id(NULL, &a, NULL, RDMA_PS_TCP), 0))
		return;
	UT_CHECK_EQ(rdma_create_id(NULL, &b, NULL, RDMA_PS_TCP), 0);
	s = sin_of(addr_of(1), 20001);
	UT_CHECK_EQ(rdma_bind_addr(a, (struct sockaddr *)&s), 0);
	UT_CHECK(a->verbs != NULL);
	UT_CHECK_EQ(ntohs(rdma_get_src_port(a)), 20001);
	/* the same address and port: in use; nothing changed on b */
	UT_CHECK_EQ(rdma_bind_addr(b, (struct sockaddr *)&s), -1);
	UT_CHECK_EQ(errno, EADDRINUSE);
	UT_CHECK(b->verbs == NULL);
	/* the wildcard on that port too */
	s = sin_of("0.0.0.0", 20001);
	UT_CHECK_EQ(rdma_bind_addr(b, (struct sockaddr *)&s), -1);
	UT_CHECK_EQ(errno, EADDRINUSE);
	/* the other device's address on the same port is free */
	s = sin_of(addr_of(2), 20001);
	UT_CHECK_EQ(rdma_bind_addr(b, (struct sockaddr *)&s), 0);
	UT_CHECK(b->verbs != NULL && b->verbs != a->verbs);
	rdma_destroy_id(b);
	/* an address nobody has; one the host has but no uroce device */
	UT_CHECK_EQ(rdma_create_id(NULL, &b, NULL, RDMA_PS_TCP), 0);
	s = sin_of("10.254.253.252", 20002);
	UT_CHECK_EQ(rdma_bind_addr(b, (struct sockaddr *)&s), -1);
	UT_CHECK_EQ(errno, EADDRNOTAVAIL);
	s = sin_of("127.0.0.1", 20002);
	UT_CHECK_EQ(rdma_bind_addr(b, (struct sockaddr *)&s), -1);
	UT_CHECK_EQ(errno, ENODEV);
	/* port 0: an ephemeral port */
	s = sin_of(addr_of(1), 0);
	UT_CHECK_EQ(rdma_bind_addr(b, (struct sockaddr *)&s), 0);
	UT_CHECK(ntohs(rdma_get_src_port(b)) >= 32768);
	/* a port freed by a destroy can be bound again */
	rdma_destroy_id(a);
	UT_CHECK_EQ(rdma_create_id(NULL, &w, NULL, RDMA_PS_TCP), 0);
	s = sin_of("0.0.0.0", 20001);
	UT_CHECK_EQ(rdma_bind_addr(w, (struct sockaddr *)&s), 0);
	UT_CHECK(w->verbs == NULL);	/* the wildcard binds no device */
	UT_CHECK_EQ(rdma_listen(w, 4), 0);
	rdma_destroy_id(w);
	rdma_destroy_id(b);
	/* the port spaces are separate */
	UT_CHECK_EQ(rdma_create_id(NULL, &a, NULL, RDMA_PS_TCP), 0);
	UT_CHECK_EQ(rdma_create_id(NULL, &b, NULL, RDMA_PS_UDP), 0);
	s = sin_of(addr_of(1), 20003);
	UT_CHECK_EQ(rdma_bind_addr(a, (struct sockaddr *)&s), 0);
	UT_CHECK_EQ(rdma_bind_addr(b, (struct sockaddr *)&s), 0);
	rdma_destroy_id(a);
	rdma_destroy_id(b);
	UT_CHECK_EQ(rdma_create_id(NULL, &a, NULL, (enum rdma_port_space)7), -1);
	UT_CHECK_EQ(errno, EINVAL);
}

/* Resolution on a channel: ADDR_RESOLVED, ROUTE_RESOLVED, the QP. */
static void
test_resolve(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct ibv_recv_wr rw = { .wr_id = 1 }, *bad_rw;
	struct ibv_qp_init_attr qa;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct sockaddr_in dst = sin_of(addr_of(2), 20010);
	struct sockaddr_in src = sin_of(addr_of(1), 0);
	struct ibv_port_attr pa;
	int mask;

	if (!UT_CHECK(ch != NULL) ||
	    !UT_CHECK_EQ(rdma_create_id(ch, &id, &dst, RDMA_PS_TCP), 0))
		return;
	UT_CHECK_EQ(rdma_resolve_route(id, 1000), -1);	/* no address yet */
	UT_CHECK_EQ(errno, EINVAL);
	/* from uroce0's address: across the ring, ARP resolving uroce1 */
	UT_CHECK_EQ(rdma_resolve_addr(id, (struct sockaddr *)&src,
				      (struct sockaddr *)&dst, 2000), 0);
	ev = next_event(ch);
	if (ev != NULL) {
		UT_CHECK_EQ(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
		UT_CHECK_EQ(ev->status, 0);
		UT_CHECK(ev->id == id && ev->id->context == &dst);
		UT_CHECK_EQ(rdma_ack_cm_event(ev), 0);
	}
	/* bound to the device of that address */
	UT_CHECK(id->verbs != NULL);
	UT_CHECK_EQ(((struct sockaddr_in *)rdma_get_local_addr(id))->sin_addr.s_addr,
		    sin_of(addr_of(1), 0).sin_addr.s_addr);
	UT_CHECK(ntohs(rdma_get_src_port(id)) != 0);
	UT_CHECK_EQ(ntohs(rdma_get_dst_port(id)), 20010);
	UT_CHECK_EQ(rdma_resolve_route(id, 1000), 0);
	ev = next_event(ch);
	if (ev != NULL) {
		UT_CHECK_EQ(ev->event, RDMA_CM_EVENT_ROUTE_RESOLVED);
		rdma_ack_cm_event(ev);
	}
	UT_CHECK_EQ(id->route.num_paths, 1);
	if (UT_CHECK(id->route.path_rec != NULL) &&
	    UT_CHECK_EQ(ibv_query_port(id->verbs, 1, &pa), 0))
		UT_CHECK_EQ(id->route.path_rec->mtu, pa.active_mtu);
	/* before the exchange: RTR cannot be computed */
	attr.qp_state = IBV_QPS_RTR;
	UT_CHECK_EQ(rdma_init_qp_attr(id, &attr, &mask), -1);
	UT_CHECK_EQ(errno, EINVAL);
	attr.qp_state = IBV_QPS_INIT;
	if (UT_CHECK_EQ(rdma_init_qp_attr(id, &attr, &mask), 0)) {
		UT_CHECK_EQ(mask, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
		UT_CHECK_EQ(attr.port_num, 1);
		UT_CHECK_EQ(attr.pkey_index, 0);
		UT_CHECK_EQ(attr.qp_access_flags,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	}
	/* a QP with no PD nor CQs: the device's PD, CQs made for it, INIT */
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 8;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (UT_CHECK_EQ(rdma_create_qp(id, NULL, &qa), 0)) {
		UT_CHECK(id->qp != NULL && id->send_cq != NULL &&
			 id->recv_cq != NULL && id->send_cq_channel != NULL);
		UT_CHECK_EQ(ibv_query_qp(id->qp, &attr, IBV_QP_STATE |
					 IBV_QP_ACCESS_FLAGS, &init), 0);
		UT_CHECK_EQ(attr.qp_state, IBV_QPS_INIT);
		UT_CHECK_EQ(id->qp->state, IBV_QPS_INIT);
		UT_CHECK_EQ(attr.qp_access_flags,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		/* INIT takes receives at once (made with the QP) */
		UT_CHECK_EQ(ibv_post_recv(id->qp, &rw, &bad_rw), 0);
		UT_CHECK_EQ(rdma_create_qp(id, NULL, &qa), -1);	/* has one */
		UT_CHECK_EQ(errno, EINVAL);
	}
	rdma_destroy_qp(id);
	UT_CHECK(id->qp == NULL && id->send_cq == NULL);
	UT_CHECK_EQ(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

/* Errors of resolution, private data limits, synchronous ids. */
static void
test_resolve_errors(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct sockaddr_in dst;
	uint8_t priv[64] = { 0 };
	double t0;

	if (!UT_CHECK(ch != NULL))
		return;
	/* off every device's subnet */
	UT_CHECK_EQ(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	dst = sin_of("10.1.2.3", 1);
	UT_CHECK_EQ(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 100), -1);
	UT_CHECK_EQ(errno, ENODEV);
	/* on the subnet, nobody answers ARP: ADDR_ERROR, -ETIMEDOUT, after
	 * the timeout at the earliest */
	dst = sin_of(addr_of(77), 1);
	t0 = ut_now_s();
	UT_CHECK_EQ(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 300), 0);
	ev = next_event(ch);
	if (ev != NULL) {
		UT_CHECK_EQ(ev->event, RDMA_CM_EVENT_ADDR_ERROR);
		UT_CHECK_EQ(ev->status, -ETIMEDOUT);
		UT_CHECK(ut_now_s() - t0 >= 0.3);
		rdma_ack_cm_event(ev);
	}
	rdma_destroy_id(id);

	/* synchronous: the calls return once the event is in */
	if (!UT_CHECK_EQ(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0))
		return;
	dst = sin_of(addr_of(2), 20011);
	UT_CHECK_EQ(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	UT_CHECK(id->event != NULL &&
		 id->event->event == RDMA_CM_EVENT_ADDR_RESOLVED);
	/* no source: a local destination loops on the device that has it */
	UT_CHECK_EQ(((struct sockaddr_in *)rdma_get_local_addr(id))->sin_addr.s_addr,
		    dst.sin_addr.s_addr);
	UT_CHECK_EQ(rdma_resolve_route(id, 2000), 0);
	UT_CHECK(id->event != NULL &&
		 id->event->event == RDMA_CM_EVENT_ROUTE_RESOLVED);
	/* private data over the REQ's 56 user bytes: EINVAL, nothing sent */
	memset(&cp, 0, sizeof(cp));
	cp.private_data = priv;
	cp.private_data_len = 57;
	UT_CHECK_EQ(rdma_connect(id, &cp), -1);
	UT_CHECK_EQ(errno, EINVAL);
	/* more depth than the device has: EINVAL (RDMA_MAX_* is the most) */
	cp.private_data_len = 0;
	cp.responder_resources = 200;
	UT_CHECK_EQ(rdma_connect(id, &cp), -1);
	UT_CHECK_EQ(errno, EINVAL);
	/* accept, reject, disconnect of an id with no request: EINVAL */
	UT_CHECK_EQ(rdma_accept(id, NULL), -1);
	UT_CHECK_EQ(errno, EINVAL);
	UT_CHECK_EQ(rdma_reject(id, NULL, 0), -1);
	UT_CHECK_EQ(errno, EINVAL);
	UT_CHECK_EQ(rdma_disconnect(id), -1);
	UT_CHECK_EQ(errno, EINVAL);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
}

/* A UD id's QP goes to RTS at once with the UDP port space's Q_Key. */
static void
test_ud_qp(void)
{
	struct rdma_addrinfo hints, *res = NULL;
	struct ibv_qp_init_attr qa, init;
	struct ibv_qp_attr attr;
	struct rdma_cm_id *id;

	memset(&hints, 0, sizeof(hints));
	hints.ai_port_space = RDMA_PS_UDP;
	hints.ai_qp_type = IBV_QPT_UD;
	if (!UT_CHECK_EQ(rdma_getaddrinfo(addr_of(2), "20012", &hints, &res), 0))
		return;
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_UD;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (UT_CHECK_EQ(rdma_create_ep(&id, res, NULL, &qa), 0)) {
		UT_CHECK_EQ(id->ps, RDMA_PS_UDP);
		UT_CHECK_EQ(ibv_query_qp(id->qp, &attr, IBV_QP_STATE | IBV_QP_QKEY,
					 &init), 0);
		UT_CHECK_EQ(attr.qp_state, IBV_QPS_RTS);
		UT_CHECK_EQ(attr.qkey, RDMA_UDP_QKEY);
		rdma_destroy_ep(id);
	}
	rdma_freeaddrinfo(res);
}

static void
test_options_unsupported(void)
{
	struct sockaddr_in s = sin_of("239.1.1.1", 0);
	struct rdma_cm_id *id;
	struct ibv_context **devs;
	uint8_t tos = 32;
	int one = 1, n = -1;

	devs = rdma_get_devices(&n);
	UT_CHECK_EQ(n, 2);
	UT_CHECK(devs != NULL && devs[0] != NULL && devs[1] != NULL &&
		 devs[2] == NULL);
	rdma_free_devices(devs);
	if (!UT_CHECK_EQ(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0))
		return;
	UT_CHECK_EQ(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos,
				    sizeof(tos)), 0);
	UT_CHECK_EQ(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &one,
				    sizeof(one)), -1);
	UT_CHECK_EQ(errno, EINVAL);
	UT_CHECK_EQ(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR,
				    &one, sizeof(one)), 0);
	UT_CHECK_EQ(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY,
				    &one, sizeof(one)), 0);
	tos = 14;
	UT_CHECK_EQ(rdma_set_option(id, RDMA_OPTION_ID,
				    RDMA_OPTION_ID_ACK_TIMEOUT, &tos,
				    sizeof(tos)), 0);
	UT_CHECK_EQ(rdma_join_multicast(id, (struct sockaddr *)&s, NULL), -1);
	UT_CHECK_EQ(errno, EOPNOTSUPP);
	UT_CHECK_EQ(rdma_leave_multicast(id, (struct sockaddr *)&s), -1);
	UT_CHECK_EQ(errno, EOPNOTSUPP);
	rdma_destroy_id(id);
	errno = 0;
	UT_CHECK_EQ(rsocket(AF_INET, SOCK_STREAM, 0), -1);
	UT_CHECK_EQ(errno, ENOSYS);
	UT_CHECK_EQ(rclose(3), -1);
}

/* The next event of @ch, which must be @type (acked unless @keep). */
static struct rdma_cm_event *
expect_event(struct rdma_event_channel *ch, enum rdma_cm_event_type type,
	     bool keep)
{
	struct rdma_cm_event *ev = next_event(ch);

	if (ev == NULL)
		return NULL;
	if (!UT_CHECK_EQ(ev->event, type))
		UT_NOTE("got %s status %d, want %s", rdma_event_str(ev->event),
			ev->status, rdma_event_str(type));
	if (!keep) {
		rdma_ack_cm_event(ev);
		return NULL;
	}
	return ev;
}

/* An active id of uroce0 resolved to uroce1's address, port @port, with
 * an RC QP. */
static struct rdma_cm_id *
active_id(struct rdma_event_channel *ch, uint16_t port)
{
	struct sockaddr_in src = sin_of(addr_of(1), 0);
	struct sockaddr_in dst = sin_of(addr_of(2), port);
	struct ibv_qp_init_attr qa;
	struct rdma_cm_id *id;

	if (!UT_CHECK_EQ(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0))
		return NULL;
	UT_CHECK_EQ(rdma_resolve_addr(id, (struct sockaddr *)&src,
				      (struct sockaddr *)&dst, 2000), 0);
	expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, false);
	UT_CHECK_EQ(rdma_resolve_route(id, 2000), 0);
	expect_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, false);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	UT_CHECK_EQ(rdma_create_qp(id, NULL, &qa), 0);
	return id;
}

/*
 * A connection between the two devices: the REQ's 56 user bytes reach
 * CONNECT_REQUEST, the REP's 196 reach ESTABLISHED, the QPs are in RTS
 * with each other's QPN and the local ACK timeout of the active side's
 * port (uroce0's [port0] cm_ack_timeout, set by main()), the passive one
 * from the REQ as Linux's CM gives it (uroce1's own is the default 17), a
 * SEND crosses, DISCONNECTED on both sides.
 */
static void
test_connect(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in ls = sin_of(addr_of(2), 20020);
	struct rdma_cm_id *l, *a, *p = NULL;
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	struct ibv_qp_init_attr qa, init;
	struct ibv_qp_attr attr;
	uint8_t req[56], rep[196];
	int i;

	for (i = 0; i < 56; i++)
		req[i] = (uint8_t)(i + 1);
	for (i = 0; i < 196; i++)
		rep[i] = (uint8_t)(0xff - i);
	if (!UT_CHECK(ch != NULL) ||
	    !UT_CHECK_EQ(rdma_create_id(ch, &l, NULL, RDMA_PS_TCP), 0))
		return;
	UT_CHECK_EQ(rdma_bind_addr(l, (struct sockaddr *)&ls), 0);
	if (!UT_CHECK_EQ(rdma_listen(l, 8), 0))
		return;
	a = active_id(ch, 20020);
	if (a == NULL)
		return;
	memset(&cp, 0, sizeof(cp));
	cp.private_data = req;
	cp.private_data_len = sizeof(req);
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	UT_CHECK_EQ(rdma_connect(a, &cp), 0);
	ev = expect_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST, true);
	if (ev == NULL)
		goto out;
	p = ev->id;
	UT_CHECK(ev->listen_id == l && p != l);
	UT_CHECK(ev->param.conn.private_data_len >= sizeof(req) &&
		 memcmp(ev->param.conn.private_data, req, sizeof(req)) == 0);
	UT_CHECK_EQ(ev->param.conn.qp_num, a->qp->qp_num);
	UT_CHECK_EQ(ev->param.conn.responder_resources, 1);
	UT_CHECK_EQ(ntohs(rdma_get_dst_port(p)), ntohs(rdma_get_src_port(a)));
	rdma_ack_cm_event(ev);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	UT_CHECK_EQ(rdma_create_qp(p, NULL, &qa), 0);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = rep;
	cp.private_data_len = sizeof(rep);
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.rnr_retry_count = 7;
	/* the REP's limit: one byte more is EINVAL */
	cp.private_data_len = sizeof(rep) + 1;
	UT_CHECK_EQ(rdma_accept(p, &cp), -1);
	UT_CHECK_EQ(errno, EINVAL);
	cp.private_data_len = sizeof(rep);
	UT_CHECK_EQ(rdma_accept(p, &cp), 0);
	/* the two ESTABLISHED: the active side's carries the REP's data */
	for (i = 0; i < 2; i++) {
		ev = expect_event(ch, RDMA_CM_EVENT_ESTABLISHED, true);
		if (ev == NULL)
			break;
		if (ev->id == a)
			UT_CHECK(ev->param.conn.private_data_len == sizeof(rep) &&
				 memcmp(ev->param.conn.private_data, rep,
					sizeof(rep)) == 0);
		rdma_ack_cm_event(ev);
	}
	UT_CHECK_EQ(ibv_query_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_DEST_QPN |
				 IBV_QP_ACCESS_FLAGS | IBV_QP_TIMEOUT, &init), 0);
	UT_CHECK_EQ(attr.qp_state, IBV_QPS_RTS);
	UT_CHECK_EQ(attr.dest_qp_num, p->qp->qp_num);
	UT_CHECK(attr.qp_access_flags & IBV_ACCESS_REMOTE_READ);
	UT_CHECK_EQ(attr.timeout, PORT0_ACK_TIMEOUT);
	UT_CHECK_EQ(ibv_query_qp(p->qp, &attr, IBV_QP_STATE | IBV_QP_DEST_QPN |
				 IBV_QP_TIMEOUT, &init), 0);
	UT_CHECK_EQ(attr.qp_state, IBV_QPS_RTS);
	UT_CHECK_EQ(attr.dest_qp_num, a->qp->qp_num);
	UT_CHECK_EQ(attr.timeout, PORT0_ACK_TIMEOUT);
	attr.qp_state = IBV_QPS_RTR;
	{
		int mask;

		UT_CHECK_EQ(rdma_init_qp_attr(p, &attr, &mask), 0);
		UT_CHECK_EQ(attr.dest_qp_num, a->qp->qp_num);
		UT_CHECK(mask & IBV_QP_RQ_PSN);
	}
	/* disconnect: both sides get DISCONNECTED, the QP goes to ERR */
	UT_CHECK_EQ(rdma_disconnect(a), 0);
	UT_CHECK_EQ(ibv_query_qp(a->qp, &attr, IBV_QP_STATE, &init), 0);
	UT_CHECK_EQ(attr.qp_state, IBV_QPS_ERR);
	for (i = 0; i < 2; i++) {
		ev = expect_event(ch, RDMA_CM_EVENT_DISCONNECTED, true);
		if (ev == NULL)
			break;
		if (ev->id == p)
			UT_CHECK_EQ(rdma_disconnect(p), 0);	/* the DREP */
		rdma_ack_cm_event(ev);
	}
out:
	if (p != NULL) {
		rdma_destroy_qp(p);
		rdma_destroy_id(p);
	}
	rdma_destroy_qp(a);
	rdma_destroy_id(a);
	rdma_destroy_id(l);
	rdma_destroy_event_channel(ch);
}

/* REJ: a port nobody listens on is reason 8 (invalid service ID); the
 * listener's rdma_reject is 28 with its private data. */
static void
test_reject(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in ls = sin_of(addr_of(2), 20021);
	struct rdma_cm_id *l, *a;
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	uint8_t rej[148];

	memset(rej, 0x5a, sizeof(rej));
	if (!UT_CHECK(ch != NULL))
		return;
	a = active_id(ch, 20029);
	memset(&cp, 0, sizeof(cp));
	UT_CHECK_EQ(rdma_connect(a, &cp), 0);
	ev = expect_event(ch, RDMA_CM_EVENT_REJECTED, true);
	if (ev != NULL) {
		UT_CHECK_EQ(ev->status, 8);
		rdma_ack_cm_event(ev);
	}
	rdma_destroy_qp(a);
	rdma_destroy_id(a);

	UT_CHECK_EQ(rdma_create_id(ch, &l, NULL, RDMA_PS_TCP), 0);
	UT_CHECK_EQ(rdma_bind_addr(l, (struct sockaddr *)&ls), 0);
	UT_CHECK_EQ(rdma_listen(l, 8), 0);
	a = active_id(ch, 20021);
	UT_CHECK_EQ(rdma_connect(a, &cp), 0);
	ev = expect_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST, true);
	if (ev != NULL) {
		struct rdma_cm_id *p = ev->id;

		rdma_ack_cm_event(ev);
		UT_CHECK_EQ(rdma_reject(p, rej, sizeof(rej) + 1), -1);
		UT_CHECK_EQ(errno, EINVAL);
		UT_CHECK_EQ(rdma_reject(p, rej, sizeof(rej)), 0);
		ev = expect_event(ch, RDMA_CM_EVENT_REJECTED, true);
		if (ev != NULL) {
			UT_CHECK_EQ(ev->status, 28);
			UT_CHECK(ev->id == a);
			UT_CHECK(ev->param.conn.private_data_len == sizeof(rej) &&
				 memcmp(ev->param.conn.private_data, rej,
					sizeof(rej)) == 0);
			rdma_ack_cm_event(ev);
		}
		rdma_destroy_id(p);
	}
	rdma_destroy_qp(a);
	rdma_destroy_id(a);
	rdma_destroy_id(l);
	rdma_destroy_event_channel(ch);
}

/* How many events wait on @ch, read without blocking (acked, their new
 * ids kept in @ids when not NULL). */
static int
drain_events(struct rdma_event_channel *ch, struct rdma_cm_id **ids, int max)
{
	int fl = fcntl(ch->fd, F_GETFL), n = 0;
	struct rdma_cm_event *ev;

	fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK);
	while (rdma_get_cm_event(ch, &ev) == 0) {
		if (ids != NULL && n < max)
			ids[n] = ev->id;
		n++;
		rdma_ack_cm_event(ev);
	}
	UT_CHECK_EQ(errno, EAGAIN);
	fcntl(ch->fd, F_SETFL, fl);
	return n;
}

static void
accept_one(struct rdma_cm_id *p)
{
	struct ibv_qp_init_attr qa;
	struct rdma_conn_param cp;

	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	UT_CHECK_EQ(rdma_create_qp(p, NULL, &qa), 0);
	memset(&cp, 0, sizeof(cp));
	UT_CHECK_EQ(rdma_accept(p, &cp), 0);
}

/*
 * rdma_listen()'s backlog counts the CONNECT_REQUESTs not yet read, as
 * the kernel's rdma_ucm does. Past it a REQ is not answered at all (the
 * kernel's cm sends no REJ when the listener has no room, so that the
 * peer retries): with a backlog of 2, three REQs give two events; the
 * REQ of a fourth id to another listener of the same device, sent after
 * them, shows that the third was handled. Once the two are read, the
 * third's REQ resend (after its CM response timeout) is a request, and
 * all three connect: nobody is REJECTED.
 */
static void
test_backlog(void)
{
	struct rdma_event_channel *lch = rdma_create_event_channel();
	struct rdma_event_channel *lch2 = rdma_create_event_channel();
	struct rdma_event_channel *ach = rdma_create_event_channel();
	struct sockaddr_in ls = sin_of(addr_of(2), 20031);
	struct sockaddr_in ls2 = sin_of(addr_of(2), 20032);
	struct rdma_cm_id *l, *l2, *a[4], *p[3] = { NULL }, *q = NULL;
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	int i, est = 0;

	if (!UT_CHECK(lch != NULL && lch2 != NULL && ach != NULL))
		return;
	UT_CHECK_EQ(rdma_create_id(lch, &l, NULL, RDMA_PS_TCP), 0);
	UT_CHECK_EQ(rdma_bind_addr(l, (struct sockaddr *)&ls), 0);
	UT_CHECK_EQ(rdma_listen(l, 2), 0);
	UT_CHECK_EQ(rdma_create_id(lch2, &l2, NULL, RDMA_PS_TCP), 0);
	UT_CHECK_EQ(rdma_bind_addr(l2, (struct sockaddr *)&ls2), 0);
	UT_CHECK_EQ(rdma_listen(l2, 0), 0);
	memset(&cp, 0, sizeof(cp));
	for (i = 0; i < 4; i++) {
		a[i] = active_id(ach, i < 3 ? 20031 : 20032);
		if (a[i] == NULL)
			return;
	}
	for (i = 0; i < 4; i++)
		UT_CHECK_EQ(rdma_connect(a[i], &cp), 0);
	ev = expect_event(lch2, RDMA_CM_EVENT_CONNECT_REQUEST, true);
	if (ev != NULL) {
		q = ev->id;
		rdma_ack_cm_event(ev);
	}
	UT_CHECK_EQ(drain_events(lch, p, 2), 2);
	UT_NOTE("backlog 2: three REQs, two CONNECT_REQUESTs, the third "
		"not answered");
	/* nothing came back to the active side meanwhile */
	UT_CHECK_EQ(drain_events(ach, NULL, 0), 0);
	ev = expect_event(lch, RDMA_CM_EVENT_CONNECT_REQUEST, true);
	if (ev != NULL) {
		p[2] = ev->id;
		rdma_ack_cm_event(ev);
	}
	for (i = 0; i < 3; i++)
		if (p[i] != NULL)
			accept_one(p[i]);
	if (q != NULL)
		accept_one(q);
	/* the four ESTABLISHED of the active side, and four of ours */
	for (i = 0; i < 8; i++) {
		ev = next_event(i < 4 ? ach : (i < 7 ? lch : lch2));
		if (ev == NULL)
			break;
		if (!UT_CHECK_EQ(ev->event, RDMA_CM_EVENT_ESTABLISHED))
			UT_NOTE("got %s status %d", rdma_event_str(ev->event),
				ev->status);
		est += ev->event == RDMA_CM_EVENT_ESTABLISHED;
		rdma_ack_cm_event(ev);
	}
	UT_CHECK_EQ(est, 8);
	for (i = 0; i < 4; i++) {
		rdma_destroy_qp(a[i]);
		rdma_destroy_id(a[i]);
	}
	for (i = 0; i < 3; i++)
		if (p[i] != NULL) {
			rdma_destroy_qp(p[i]);
			rdma_destroy_id(p[i]);
		}
	if (q != NULL) {
		rdma_destroy_qp(q);
		rdma_destroy_id(q);
	}
	rdma_destroy_id(l);
	rdma_destroy_id(l2);
	rdma_destroy_event_channel(ach);
	rdma_destroy_event_channel(lch);
	rdma_destroy_event_channel(lch2);
}

int
main(void)
{
	if (ut_verbs_ringlink_config("cmloc", SUBNET) != 0) {
		perror("config");
		return 1;
	}
	setenv("UROCE_PORT0_CM_ACK_TIMEOUT", PORT0_ACK_TIMEOUT_S, 1);
	test_channel();
	test_channel_unread();
	test_getaddrinfo();
	test_bind();
	test_resolve();
	test_resolve_errors();
	test_ud_qp();
	test_options_unsupported();
	test_connect();
	test_reject();
	test_backlog();
	return ut_summary();
}
