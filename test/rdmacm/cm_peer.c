/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * One side of an rdma_cm connection over the memif pair, for
 * check_cm_peer.py: a server on 192.168.77.1 or a client of it, each
 * through our librdmacm.so.1 with the configuration in UROCE_CONFIG.
 *
 *	cm_peer server|client SCENARIO [CYCLES BATCH]
 *
 * The peer that is to die kills itself with SIGKILL at its point, so the
 * point is exact; the survivor checks what its ids get:
 *
 *	unreach  the server dies at CONNECT_REQUEST, before any REP: the
 *	         client's REQ goes unanswered, UNREACHABLE -ETIMEDOUT
 *	rtu      the client dies at CONNECT_RESPONSE, before its RTU: the
 *	         server's REP goes unanswered, UNREACHABLE -ETIMEDOUT
 *	xfer     the server dies after 100 of the client's SENDs: the
 *	         client's next SEND completes RETRY_EXC_ERR (the rest
 *	         flushed), its DREQ goes unanswered, DISCONNECTED -ETIMEDOUT,
 *	         then TIMEWAIT_EXIT
 *	disc     the server dies at DISCONNECTED, the client's DREQ received
 *	         but not answered: the client gets DISCONNECTED -ETIMEDOUT,
 *	         then TIMEWAIT_EXIT
 *	noagent  the server only opens the device (no CM agent): the client's
 *	         REQ is REJECTED 8 (invalid service ID), its UD id's SIDR_REQ
 *	         UNREACHABLE with the SIDR_REP status 1 (service ID not
 *	         supported)
 *	cycles   CYCLES connections, BATCH at a time: connect, a SEND each way
 *	         checked byte for byte, disconnect, destroy; the fd count and
 *	         RSS after the first and the last thousand printed
 *
 * Lines on stdout: "READY" (the server listens), "DYING <point>",
 * "EVENT <name> <status>", "FDS a b", "RSS a b" (KiB), "OK" at the end of
 * a survivor's checks, then it waits for stdin to close (the test reads
 * its telemetry meanwhile) and exits 0, or 1 after "FAIL <what>".
 */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define SERVER_IP	"192.168.77.1"
#define PORT		7471
/* A guard against a hang, not a timing threshold. */
#define GUARD_MS	60000
#define MSG		64		/* bytes of a cycle's SEND */
#define XFER_SIZE	4096
#define XFER_DEPTH	16
#define XFER_DIE_AFTER	100
#define ACK_TIMEOUT	12		/* 4.096 us x 2^12: 16.8 ms */
#define RETRY_CNT	3

static int failed;

#define FAIL(...) do {							\
	printf("FAIL ");						\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	fflush(stdout);							\
	failed = 1;							\
} while (0)

static void
die_at(const char *point)
{
	printf("DYING %s\n", point);
	fflush(stdout);
	kill(getpid(), SIGKILL);
}

static struct sockaddr_in
server_addr(void)
{
	struct sockaddr_in s;

	memset(&s, 0, sizeof(s));
	s.sin_family = AF_INET;
	s.sin_port = htons(PORT);
	inet_pton(AF_INET, SERVER_IP, &s.sin_addr);
	return s;
}

/* The next event of @ch within the guard; NULL (and FAIL) if none. */
static struct rdma_cm_event *
next_event(struct rdma_event_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev = NULL;

	if (poll(&p, 1, GUARD_MS) != 1) {
		FAIL("no event in %d ms", GUARD_MS);
		return NULL;
	}
	if (rdma_get_cm_event(ch, &ev) != 0) {
		FAIL("rdma_get_cm_event: %s", strerror(errno));
		return NULL;
	}
	printf("EVENT %s %d\n", rdma_event_str(ev->event), ev->status);
	fflush(stdout);
	return ev;
}

/* The next event must be @type with @status: true, acked. */
static bool
expect(struct rdma_event_channel *ch, enum rdma_cm_event_type type,
       int status)
{
	struct rdma_cm_event *ev = next_event(ch);
	bool ok;

	if (ev == NULL)
		return false;
	ok = ev->event == type && ev->status == status;
	if (!ok)
		FAIL("expected %s %d", rdma_event_str(type), status);
	rdma_ack_cm_event(ev);
	return ok;
}

static void
wait_stdin(void)
{
	char buf[64];

	while (read(0, buf, sizeof(buf)) > 0)
		;
}

/* A surviving side's end: OK unless a check failed, then wait for the
 * script to close stdin; the exit status. */
static int
report(void)
{
	if (!failed)
		printf("OK\n");
	fflush(stdout);
	wait_stdin();
	return failed;
}

/* ------------------------------------------------------------------------
 * The kill scenarios.
 */

struct side {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen, *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
};

static struct ibv_qp_init_attr
qp_attr(struct ibv_cq *cq, uint32_t depth)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.send_cq = cq;
	a.recv_cq = cq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = depth;
	a.cap.max_recv_wr = depth;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	return a;
}

/* PD, CQ and a registered buffer on @id's device. */
static int
side_res(struct side *s, struct rdma_cm_id *id)
{
	s->pd = ibv_alloc_pd(id->verbs);
	s->cq = s->pd ? ibv_create_cq(id->verbs, 4 * XFER_DEPTH, NULL, NULL,
				      0) : NULL;
	s->buf = calloc(XFER_DEPTH, XFER_SIZE);
	s->mr = s->pd && s->buf ? ibv_reg_mr(s->pd, s->buf,
					     XFER_DEPTH * XFER_SIZE,
					     IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (s->mr == NULL) {
		FAIL("resources: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void
side_free(struct side *s)
{
	if (s->id != NULL) {
		if (s->id->qp != NULL)
			rdma_destroy_qp(s->id);
		rdma_destroy_id(s->id);
	}
	if (s->listen != NULL)
		rdma_destroy_id(s->listen);
	if (s->mr != NULL)
		ibv_dereg_mr(s->mr);
	if (s->cq != NULL)
		ibv_destroy_cq(s->cq);
	if (s->pd != NULL)
		ibv_dealloc_pd(s->pd);
	free(s->buf);
	if (s->ch != NULL)
		rdma_destroy_event_channel(s->ch);
}

static int
post_recv(struct side *s, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->buf + (size_t)slot * XFER_SIZE),
		.length = XFER_SIZE, .lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(s->id->qp, &wr, &bad);
}

static int
post_send(struct side *s, unsigned int slot, uint64_t seq)
{
	uint8_t *p = s->buf + (size_t)slot * XFER_SIZE;
	struct ibv_sge sge = {
		.addr = (uintptr_t)p, .length = XFER_SIZE, .lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = seq, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	memset(p, (int)(seq & 0xff), XFER_SIZE);
	memcpy(p, &seq, sizeof(seq));
	return ibv_post_send(s->id->qp, &wr, &bad);
}

/* One completion of @cq within the guard (busy-waits: the survivor's CQ
 * only, for a short while). */
static int
poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int i, n;

	for (i = 0; i < GUARD_MS * 10; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n != 0)
			return n;
		usleep(100);
	}
	FAIL("no completion");
	return -1;
}

/* Listen, take the request, make the QP with its receives, accept; or die
 * at the CONNECT_REQUEST (@die_at_req). */
static int
server_connect(struct side *s, bool die_at_req)
{
	struct sockaddr_in sa = server_addr();
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	struct ibv_qp_init_attr a;
	unsigned int i;

	if (rdma_create_id(s->ch, &s->listen, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_bind_addr(s->listen, (struct sockaddr *)&sa) != 0 ||
	    rdma_listen(s->listen, 8) != 0) {
		FAIL("listen: %s", strerror(errno));
		return -1;
	}
	printf("READY\n");
	fflush(stdout);
	ev = next_event(s->ch);
	if (ev == NULL || ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		FAIL("no CONNECT_REQUEST");
		return -1;
	}
	if (die_at_req)
		die_at("connect_request");
	s->id = ev->id;
	rdma_ack_cm_event(ev);
	if (side_res(s, s->id) != 0)
		return -1;
	a = qp_attr(s->cq, 2 * XFER_DEPTH);
	if (rdma_create_qp(s->id, s->pd, &a) != 0) {
		FAIL("rdma_create_qp: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < XFER_DEPTH; i++)
		post_recv(s, i);
	memset(&cp, 0, sizeof(cp));
	cp.retry_count = RETRY_CNT;
	cp.rnr_retry_count = 7;
	if (rdma_accept(s->id, &cp) != 0) {
		FAIL("rdma_accept: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Resolve and connect; without a QP on the id when @no_qp (the QP is made
 * by hand and named in the REQ: CONNECT_RESPONSE comes instead of
 * ESTABLISHED, and the RTU waits for rdma_establish()). */
static int
client_connect(struct side *s, bool no_qp, struct ibv_qp **own_qp)
{
	struct sockaddr_in sa = server_addr();
	struct rdma_conn_param cp;
	struct ibv_qp_init_attr a;
	uint8_t ack = ACK_TIMEOUT;

	if (rdma_create_id(s->ch, &s->id, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_resolve_addr(s->id, NULL, (struct sockaddr *)&sa, 2000) != 0 ||
	    !expect(s->ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0) ||
	    rdma_resolve_route(s->id, 2000) != 0 ||
	    !expect(s->ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0)) {
		FAIL("resolve: %s", strerror(errno));
		return -1;
	}
	if (rdma_set_option(s->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
			    &ack, sizeof(ack)) != 0 || side_res(s, s->id) != 0) {
		FAIL("ack timeout: %s", strerror(errno));
		return -1;
	}
	a = qp_attr(s->cq, 2 * XFER_DEPTH);
	memset(&cp, 0, sizeof(cp));
	cp.retry_count = RETRY_CNT;
	cp.rnr_retry_count = 7;
	if (no_qp) {
		*own_qp = ibv_create_qp(s->pd, &a);
		if (*own_qp == NULL) {
			FAIL("ibv_create_qp: %s", strerror(errno));
			return -1;
		}
		cp.qp_num = (*own_qp)->qp_num;
	} else if (rdma_create_qp(s->id, s->pd, &a) != 0) {
		FAIL("rdma_create_qp: %s", strerror(errno));
		return -1;
	}
	if (rdma_connect(s->id, &cp) != 0) {
		FAIL("rdma_connect: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* The client's SENDs until one fails: RETRY_EXC_ERR first, then only
 * flushed ones. */
static void
client_xfer(struct side *s)
{
	unsigned int inflight = 0, i;
	uint64_t seq = 0, ok = 0;
	struct ibv_wc wc;

	for (i = 0; i < XFER_DEPTH; i++) {
		if (post_send(s, i, seq++) != 0) {
			FAIL("post_send: %s", strerror(errno));
			return;
		}
		inflight++;
	}
	for (;;) {
		if (poll_one(s->cq, &wc) < 0)
			return;
		inflight--;
		if (wc.status != IBV_WC_SUCCESS)
			break;
		ok++;
		if (post_send(s, (unsigned int)(wc.wr_id % XFER_DEPTH),
			      seq++) != 0) {
			FAIL("post_send: %s", strerror(errno));
			return;
		}
		inflight++;
	}
	printf("SENT %" PRIu64 " then %s\n", ok, ibv_wc_status_str(wc.status));
	if (wc.status != IBV_WC_RETRY_EXC_ERR)
		FAIL("first error %s", ibv_wc_status_str(wc.status));
	while (inflight > 0 && poll_one(s->cq, &wc) > 0) {
		inflight--;
		if (wc.status != IBV_WC_WR_FLUSH_ERR)
			FAIL("after the error: %s",
			     ibv_wc_status_str(wc.status));
	}
}

/* The server's receives: checked, reposted; it dies after @n. */
static void
server_xfer(struct side *s, unsigned int n)
{
	unsigned int got = 0;
	struct ibv_wc wc;
	uint64_t seq;

	while (got < n && poll_one(s->cq, &wc) > 0) {
		if (wc.status != IBV_WC_SUCCESS ||
		    wc.byte_len != XFER_SIZE) {
			FAIL("recv %s", ibv_wc_status_str(wc.status));
			return;
		}
		memcpy(&seq, s->buf + wc.wr_id * XFER_SIZE, sizeof(seq));
		if (seq != got) {
			FAIL("recv seq %" PRIu64 " not %u", seq, got);
			return;
		}
		got++;
		post_recv(s, (unsigned int)wc.wr_id);
	}
}

static int
run_kill(bool server, const char *scen)
{
	struct side s;
	struct ibv_qp *own_qp = NULL;
	struct rdma_cm_event *ev;

	memset(&s, 0, sizeof(s));
	s.ch = rdma_create_event_channel();
	if (s.ch == NULL) {
		FAIL("channel: %s", strerror(errno));
		return 1;
	}
	if (server) {
		if (server_connect(&s, strcmp(scen, "unreach") == 0) != 0)
			goto out;
		if (strcmp(scen, "rtu") == 0) {
			/* the client is gone before its RTU */
			expect(s.ch, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
			goto out;
		}
		if (!expect(s.ch, RDMA_CM_EVENT_ESTABLISHED, 0))
			goto out;
		if (strcmp(scen, "xfer") == 0) {
			server_xfer(&s, XFER_DIE_AFTER);
			if (!failed)
				die_at("xfer");
		} else if (strcmp(scen, "disc") == 0) {
			ev = next_event(s.ch);
			if (ev != NULL && ev->event == RDMA_CM_EVENT_DISCONNECTED)
				die_at("disconnected");
			FAIL("no DISCONNECTED");
		}
		goto out;
	}
	if (client_connect(&s, strcmp(scen, "rtu") == 0, &own_qp) != 0)
		goto out;
	if (strcmp(scen, "unreach") == 0) {
		/* the server is gone before its REP */
		expect(s.ch, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		goto out;
	}
	if (strcmp(scen, "rtu") == 0) {
		ev = next_event(s.ch);
		if (ev != NULL && ev->event == RDMA_CM_EVENT_CONNECT_RESPONSE)
			die_at("connect_response");
		FAIL("no CONNECT_RESPONSE");
		goto out;
	}
	if (!expect(s.ch, RDMA_CM_EVENT_ESTABLISHED, 0))
		goto out;
	if (strcmp(scen, "xfer") == 0)
		client_xfer(&s);
	if (rdma_disconnect(s.id) != 0)
		FAIL("rdma_disconnect: %s", strerror(errno));
	/* the DREQ goes unanswered (IBTA 12.9.7.3: DREQ timeout) */
	if (expect(s.ch, RDMA_CM_EVENT_DISCONNECTED, -ETIMEDOUT))
		expect(s.ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
out:
	if (own_qp != NULL)
		ibv_destroy_qp(own_qp);
	side_free(&s);
	return report();
}

/* ------------------------------------------------------------------------
 * A device with no CM agent.
 */

static int
noagent_server(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (list != NULL && n > 0)
		ctx = ibv_open_device(list[0]);
	if (ctx == NULL) {
		FAIL("ibv_open_device: %s", strerror(errno));
	} else {
		printf("READY\n");
		fflush(stdout);
		wait_stdin();
		ibv_close_device(ctx);
	}
	if (list != NULL)
		ibv_free_device_list(list);
	return failed;
}

/* A connection (RC: REQ) or a UD id (SIDR_REQ) to a device nobody uses
 * the CM on. */
static void
noagent_try(enum rdma_port_space ps, enum rdma_cm_event_type type,
	    int status)
{
	struct sockaddr_in sa = server_addr();
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct ibv_qp_init_attr a;
	struct rdma_conn_param cp;
	struct rdma_cm_id *id = NULL;

	if (ch == NULL || rdma_create_id(ch, &id, NULL, ps) != 0 ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)&sa, 2000) != 0 ||
	    !expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0) ||
	    rdma_resolve_route(id, 2000) != 0 ||
	    !expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0)) {
		FAIL("resolve: %s", strerror(errno));
		goto out;
	}
	memset(&a, 0, sizeof(a));
	a.qp_type = ps == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC;
	a.cap.max_send_wr = a.cap.max_recv_wr = 4;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	memset(&cp, 0, sizeof(cp));
	if (rdma_create_qp(id, NULL, &a) != 0 || rdma_connect(id, &cp) != 0) {
		FAIL("connect: %s", strerror(errno));
		goto out;
	}
	expect(ch, type, status);
out:
	if (id != NULL) {
		if (id->qp != NULL)
			rdma_destroy_qp(id);
		rdma_destroy_id(id);
	}
	if (ch != NULL)
		rdma_destroy_event_channel(ch);
}

static int
noagent_client(void)
{
	/* REJ reason 8, invalid service ID (IBTA 12.6.7.2) */
	noagent_try(RDMA_PS_TCP, RDMA_CM_EVENT_REJECTED, 8);
	/* SIDR_REP status 1, service ID not supported (IBTA 12.11.2) */
	noagent_try(RDMA_PS_UDP, RDMA_CM_EVENT_UNREACHABLE, 1);
	return report();
}

/* ------------------------------------------------------------------------
 * Cycles.
 */

/* Open fds of the process. */
static int
fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;		/* opendir's own */
}

/* Resident set, KiB. */
static long
rss_kib(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
		rss = -1;
	fclose(f);
	return rss < 0 ? -1 : rss * (sysconf(_SC_PAGESIZE) / 1024);
}

/* A connection of the cycles, context of its id. */
struct cyc {
	struct rdma_cm_id *id;
	uint32_t n;			/* the cycle's number */
	uint8_t *buf;			/* [0, MSG) receive, [MSG, 2 MSG) send */
	bool got;			/* its message came */
};

struct cyc_run {
	struct rdma_event_channel *ch;
	struct ibv_comp_channel *cc;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *slab;			/* BATCH x 2 x MSG */
	struct cyc *slot;		/* BATCH */
	uint32_t batch, total;
	uint32_t started, done, live;
	bool server;
	struct rdma_cm_id *listen;
	int fds[2];
	long rss[2];
};

static void
fill(uint8_t *p, uint32_t n, bool reply)
{
	unsigned int i;

	for (i = 0; i < MSG; i++)
		p[i] = (uint8_t)(n * 31u + i * 7u + (reply ? 0x5a : 0));
}

static struct cyc *
cyc_new(struct cyc_run *r, struct rdma_cm_id *id)
{
	uint32_t i;

	for (i = 0; i < r->batch; i++) {
		if (r->slot[i].id == NULL) {
			r->slot[i].id = id;
			r->slot[i].got = false;
			r->slot[i].buf = r->slab + (size_t)i * 2 * MSG;
			id->context = &r->slot[i];
			r->live++;
			return &r->slot[i];
		}
	}
	return NULL;
}

static int
cyc_qp(struct cyc_run *r, struct cyc *c)
{
	struct ibv_qp_init_attr a = qp_attr(r->cq, 2);
	struct ibv_sge sge = { .addr = (uintptr_t)c->buf, .length = MSG,
			       .lkey = r->mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	if (rdma_create_qp(c->id, r->pd, &a) != 0)
		return -1;
	wr.wr_id = (uintptr_t)c;
	return ibv_post_recv(c->id->qp, &wr, &bad);
}

static int
cyc_send(struct cyc_run *r, struct cyc *c)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(c->buf + MSG), .length = MSG,
			       .lkey = r->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
	}, *bad;

	fill(c->buf + MSG, c->n, r->server);
	return ibv_post_send(c->id->qp, &wr, &bad);
}

/* The end of a connection's cycle: its QP and id go. */
static void
cyc_end(struct cyc_run *r, struct cyc *c)
{
	rdma_destroy_qp(c->id);
	rdma_destroy_id(c->id);
	c->id = NULL;
	r->live--;
	r->done++;
	if (r->done == 1000 || r->done == r->total) {
		int i = r->done == 1000 ? 0 : 1;

		r->fds[i] = fd_count();
		r->rss[i] = rss_kib();
	}
}

static int
cyc_start(struct cyc_run *r)
{
	struct sockaddr_in sa = server_addr();
	struct rdma_cm_id *id;
	struct cyc *c;

	if (rdma_create_id(r->ch, &id, NULL, RDMA_PS_TCP) != 0)
		return -1;
	c = cyc_new(r, id);
	c->n = r->started++;
	return rdma_resolve_addr(id, NULL, (struct sockaddr *)&sa, 2000);
}

/* One CM event of the cycles. */
static void
cyc_event(struct cyc_run *r, struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	struct cyc *c = id->context;
	struct rdma_conn_param cp;
	int ret = 0;

	memset(&cp, 0, sizeof(cp));
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(id, 2000);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = cyc_qp(r, c);
		if (ret == 0) {
			cp.private_data = &c->n;
			cp.private_data_len = sizeof(c->n);
			ret = rdma_connect(id, &cp);
		}
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		c = cyc_new(r, id);
		if (c == NULL || ev->param.conn.private_data_len < sizeof(c->n)) {
			FAIL("request past the batch");
			ret = -1;
			break;
		}
		memcpy(&c->n, ev->param.conn.private_data, sizeof(c->n));
		ret = cyc_qp(r, c);
		if (ret == 0)
			ret = rdma_accept(id, &cp);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (!r->server)
			ret = cyc_send(r, c);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (!c->got)
			FAIL("cycle %u: disconnected before its message", c->n);
		if (r->server)
			rdma_disconnect(id);
		rdma_ack_cm_event(ev);
		cyc_end(r, c);
		return;
	default:
		FAIL("cycle %u: %s %d", c ? c->n : 0, rdma_event_str(ev->event),
		     ev->status);
		ret = -1;
		break;
	}
	if (ret != 0 && !failed)
		FAIL("cycle %u at %s: %s", c ? c->n : 0,
		     rdma_event_str(ev->event), strerror(errno));
	rdma_ack_cm_event(ev);
}

/* Completions: a message checked (the server answers it, the client
 * disconnects); a SEND's own completion is unsignaled. */
static void
cyc_completions(struct cyc_run *r)
{
	struct ibv_wc wc[16];
	struct ibv_cq *cq;
	void *ctx;
	uint8_t want[MSG];
	int n, i;

	if (ibv_get_cq_event(r->cc, &cq, &ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		ibv_req_notify_cq(cq, 0);
	}
	while ((n = ibv_poll_cq(r->cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			struct cyc *c = (struct cyc *)(uintptr_t)wc[i].wr_id;

			if (wc[i].status != IBV_WC_SUCCESS) {
				FAIL("completion %s",
				     ibv_wc_status_str(wc[i].status));
				continue;
			}
			fill(want, c->n, !r->server);
			if (wc[i].byte_len != MSG ||
			    memcmp(c->buf, want, MSG) != 0) {
				FAIL("cycle %u: bytes differ", c->n);
				continue;
			}
			c->got = true;
			if (r->server)
				cyc_send(r, c);
			else if (rdma_disconnect(c->id) != 0)
				FAIL("rdma_disconnect: %s", strerror(errno));
		}
	}
}

static int
run_cycles(bool server, uint32_t total, uint32_t batch)
{
	struct sockaddr_in sa = server_addr();
	struct cyc_run r;
	struct rdma_cm_event *ev;
	struct pollfd p[2];
	struct ibv_context **devs;

	memset(&r, 0, sizeof(r));
	r.server = server;
	r.total = total;
	r.batch = batch;
	r.ch = rdma_create_event_channel();
	devs = rdma_get_devices(NULL);
	r.slot = calloc(batch, sizeof(*r.slot));
	r.slab = calloc(batch, 2 * MSG);
	if (r.ch == NULL || devs == NULL || devs[0] == NULL || r.slot == NULL ||
	    r.slab == NULL) {
		FAIL("set-up: %s", strerror(errno));
		return 1;
	}
	r.pd = ibv_alloc_pd(devs[0]);
	r.cc = ibv_create_comp_channel(devs[0]);
	r.cq = r.cc ? ibv_create_cq(devs[0], (int)(4 * batch), NULL, r.cc, 0) :
		      NULL;
	r.mr = r.pd ? ibv_reg_mr(r.pd, r.slab, (size_t)batch * 2 * MSG,
				 IBV_ACCESS_LOCAL_WRITE) : NULL;
	rdma_free_devices(devs);
	if (r.mr == NULL || r.cq == NULL || ibv_req_notify_cq(r.cq, 0) != 0) {
		FAIL("resources: %s", strerror(errno));
		return 1;
	}
	if (server) {
		if (rdma_create_id(r.ch, &r.listen, NULL, RDMA_PS_TCP) != 0 ||
		    rdma_bind_addr(r.listen, (struct sockaddr *)&sa) != 0 ||
		    rdma_listen(r.listen, (int)batch) != 0) {
			FAIL("listen: %s", strerror(errno));
			return 1;
		}
		printf("READY\n");
		fflush(stdout);
	}
	p[0].fd = r.ch->fd;
	p[1].fd = r.cc->fd;
	p[0].events = p[1].events = POLLIN;
	while (!failed && r.done < total) {
		while (!server && r.started < total && r.live < batch)
			if (cyc_start(&r) != 0)
				FAIL("start: %s", strerror(errno));
		if (poll(p, 2, GUARD_MS) <= 0) {
			FAIL("nothing for %d ms (%u done, %u live)", GUARD_MS,
			     r.done, r.live);
			break;
		}
		if (p[1].revents & POLLIN)
			cyc_completions(&r);
		if ((p[0].revents & POLLIN) && rdma_get_cm_event(r.ch, &ev) == 0)
			cyc_event(&r, ev);
	}
	printf("DONE %u\nFDS %d %d\nRSS %ld %ld\n", r.done, r.fds[0], r.fds[1],
	       r.rss[0], r.rss[1]);
	if (r.listen != NULL)
		rdma_destroy_id(r.listen);
	ibv_dereg_mr(r.mr);
	ibv_destroy_cq(r.cq);
	ibv_destroy_comp_channel(r.cc);
	ibv_dealloc_pd(r.pd);
	free(r.slab);
	free(r.slot);
	rdma_destroy_event_channel(r.ch);
	return report();
}

int
main(int argc, char **argv)
{
	bool server;

	if (argc < 3 || (strcmp(argv[1], "server") != 0 &&
			 strcmp(argv[1], "client") != 0)) {
		fprintf(stderr, "usage: cm_peer server|client SCENARIO "
			"[CYCLES BATCH]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	server = strcmp(argv[1], "server") == 0;
	if (strcmp(argv[2], "noagent") == 0)
		return server ? noagent_server() : noagent_client();
	if (strcmp(argv[2], "cycles") == 0)
		return run_cycles(server, argc > 3 ? (uint32_t)atoi(argv[3]) : 10000,
				  argc > 4 ? (uint32_t)atoi(argv[4]) : 100);
	return run_kill(server, argv[2]);
}
