/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * A port on a kernel interface follows the interface (verbs_ifdown.sh
 * makes the veth pair and runs this in namespace a): the peer end set
 * down gives IBV_EVENT_PORT_ERR and IBV_PORT_DOWN, set up again
 * IBV_EVENT_PORT_ACTIVE and IBV_PORT_ACTIVE; the same for the interface
 * itself; the interface deleted gives IBV_EVENT_PORT_ERR, then
 * IBV_EVENT_DEVICE_FATAL, and the port stays DOWN.
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

static void
run(const char *ifc, const char *ns, const char *peer)
{
	struct ibv_context *ctx = ut_verbs_open_one();
	int port;

	if (!UT_CHECK(ctx != NULL))
		return;
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
	    expect(ctx, IBV_EVENT_PORT_ERR, IBV_PORT_DOWN, "deleted"))
		expect(ctx, IBV_EVENT_DEVICE_FATAL, IBV_PORT_DOWN, "deleted");
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
