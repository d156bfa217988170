/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * A port on a kernel interface follows the interface (verbs_ifdown.sh
 * makes the veth pair and runs this in namespace a): the peer end set
 * down gives IBV_EVENT_PORT_ERR and IBV_PORT_DOWN, set up again
 * IBV_EVENT_PORT_ACTIVE and IBV_PORT_ACTIVE; the same for the interface
 * itself; the interface deleted gives IBV_EVENT_PORT_ERR, then
 * IBV_EVENT_DEVICE_FATAL, and the port stays DOWN; then creating a QP or
 * an AH, and bringing a QP towards RTS, fail with EIO, while moving one to
 * ERR and destroying everything work.
 *
 *	verbs_ifdown DEV IFACE PEER_NS PEER_IFACE
 *
 * DEV is the [port] dev value (af_xdp:IFACE, net_af_packet0,iface=IFACE).
 */

#include <errno.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "uroce_test.h"
#include "uroce_test_verbs.h"

extern char **environ;

/* A guard against a hang, not a timing threshold. */
#define EVENT_GUARD_MS	30000

/* ip(8) with args; 0 when it exited 0. */
static int
ip_cmd(const char *a1, const char *a2, const char *a3, const char *a4,
       const char *a5, const char *a6)
{
	char *argv[] = { "ip", (char *)a1, (char *)a2, (char *)a3, (char *)a4,
			 (char *)a5, (char *)a6, NULL };
	int status;
	pid_t pid;

	if (posix_spawnp(&pid, "ip", NULL, NULL, argv, environ) != 0 ||
	    waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* After the action what: the event want on the async fd, port 1 in state. */
static bool
expect(struct ibv_context *ctx, int want, enum ibv_port_state state,
       const char *what)
{
	int port = 0, got = ut_verbs_port_event(ctx, EVENT_GUARD_MS, &port);
	bool ok = UT_CHECK_EQ(got, want);

	ok = UT_CHECK_EQ(port, 1) && ok;
	ok = UT_CHECK_EQ(ut_verbs_port_state(ctx), state) && ok;
	printf("%s: %s, port state %s\n", what,
	       got < 0 ? "no event" : ibv_event_type_str(got),
	       ibv_port_state_str(ut_verbs_port_state(ctx)));
	UT_NOTE("%s", what);
	return ok;
}

/* An RC QP; @init: brought to INIT (while the port is there). */
static struct ibv_qp *
rc_qp(struct ibv_pd *pd, struct ibv_cq *cq, bool to_init)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	struct ibv_qp *qp;

	memset(&init, 0, sizeof(init));
	init.send_cq = cq;
	init.recv_cq = cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 1;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &init);
	if (qp == NULL || !to_init)
		return qp;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

/* After DEVICE_FATAL: what needs the port fails with EIO, as rdma-core's
 * verbs do on a disassociated device; a QP in INIT from before goes to ERR,
 * and every object is destroyed. */
static void
fatal_verbs(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq,
	    struct ibv_qp *qp)
{
	struct ibv_ah_attr ah;
	struct ibv_qp_attr a;

	errno = 0;
	UT_CHECK(rc_qp(pd, cq, false) == NULL && errno == EIO);
	memset(&ah, 0, sizeof(ah));
	ah.is_global = 1;
	ah.port_num = 1;
	UT_CHECK_EQ(ibv_query_gid(ctx, 1, 0, &ah.grh.dgid), 0);
	errno = 0;
	UT_CHECK(ibv_create_ah(pd, &ah) == NULL && errno == EIO);
	/* INIT -> RTR needs the path: EIO before any attribute is read. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	UT_CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), EIO);
	UT_CHECK_EQ(qp->state, IBV_QPS_INIT);
	a.qp_state = IBV_QPS_ERR;
	UT_CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	UT_NOTE("verbs after DEVICE_FATAL");
}

static void
run(const char *ifc, const char *ns, const char *peer)
{
	struct ibv_context *ctx = ut_verbs_open_one();
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int port;

	if (!UT_CHECK(ctx != NULL))
		return;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	qp = pd != NULL && cq != NULL ? rc_qp(pd, cq, true) : NULL;
	if (!UT_CHECK(qp != NULL)) {
		ibv_close_device(ctx);
		return;
	}
	/* Up at the open (link_wait), or coming up. */
	if (ut_verbs_port_state(ctx) != IBV_PORT_ACTIVE)
		UT_CHECK_EQ(ut_verbs_port_event(ctx, EVENT_GUARD_MS, &port),
			    IBV_EVENT_PORT_ACTIVE);
	if (UT_CHECK_EQ(ut_verbs_port_state(ctx), IBV_PORT_ACTIVE) &&
	    UT_CHECK_EQ(ip_cmd("-n", ns, "link", "set", peer, "down"), 0) &&
	    expect(ctx, IBV_EVENT_PORT_ERR, IBV_PORT_DOWN, "peer down") &&
	    UT_CHECK_EQ(ip_cmd("-n", ns, "link", "set", peer, "up"), 0) &&
	    expect(ctx, IBV_EVENT_PORT_ACTIVE, IBV_PORT_ACTIVE, "peer up") &&
	    UT_CHECK_EQ(ip_cmd("link", "set", ifc, "down", NULL, NULL), 0) &&
	    expect(ctx, IBV_EVENT_PORT_ERR, IBV_PORT_DOWN, "down") &&
	    UT_CHECK_EQ(ip_cmd("link", "set", ifc, "up", NULL, NULL), 0) &&
	    expect(ctx, IBV_EVENT_PORT_ACTIVE, IBV_PORT_ACTIVE, "up") &&
	    UT_CHECK_EQ(ip_cmd("link", "del", ifc, NULL, NULL, NULL), 0) &&
	    expect(ctx, IBV_EVENT_PORT_ERR, IBV_PORT_DOWN, "deleted") &&
	    expect(ctx, IBV_EVENT_DEVICE_FATAL, IBV_PORT_DOWN, "deleted"))
		fatal_verbs(ctx, pd, cq, qp);
	UT_CHECK_EQ(ibv_destroy_qp(qp), 0);
	UT_CHECK_EQ(ibv_destroy_cq(cq), 0);
	UT_CHECK_EQ(ibv_dealloc_pd(pd), 0);
	UT_CHECK_EQ(ibv_close_device(ctx), 0);
}

int
main(int argc, char **argv)
{
	char conf[64];
	FILE *f;

	setvbuf(stdout, NULL, _IOLBF, 0);	/* whole lines in the log */
	if (argc != 5) {
		fprintf(stderr, "usage: %s DEV IFACE PEER_NS PEER_IFACE\n",
			argv[0]);
		return 2;
	}
	snprintf(conf, sizeof(conf), "/tmp/uroce-ifdown-%d.conf",
		 (int)getpid());
	f = fopen(conf, "w");
	if (!UT_CHECK(f != NULL))
		return ut_summary();
	fprintf(f, "[port]\ndev = %s\nip = 10.83.0.1/24\nlink_wait = 2\n",
		argv[1]);
	if (UT_CHECK_EQ(fclose(f), 0)) {
		setenv("UROCE_CONFIG", conf, 1);
		run(argv[2], argv[3], argv[4]);
	}
	unlink(conf);
	return ut_summary();
}
