/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * A port whose link comes up after the open, as a NIC's cable plugged in
 * later: a memif client opens while its server does not listen
 * (link_wait = 0: no wait), reports IBV_PORT_DOWN, then a child process
 * opens the memif server; the client connects by itself, the context gets
 * IBV_EVENT_PORT_ACTIVE and the port is ACTIVE. When the child closes its
 * device and exits, IBV_EVENT_PORT_ERR follows and the port is DOWN again.
 * Once the server's port has closed (at exit), nothing listens on its
 * socket: the client that saw it leave and tries again is refused (DPDK 22.11's memif
 * leaves the listener open, and the client that reached it sent the
 * server's interrupt thread into a loop on freed state).
 * Both configs have no [eal]: each process gets its own file prefix.
 *
 *	verbs_link            the test
 *	verbs_link serve CONF SOCK  the memif server, until its stdin closes
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "uroce_test.h"
#include "uroce_test_verbs.h"

extern char **environ;

/* A guard against a hang, not a timing threshold. */
#define EVENT_GUARD_MS	60000

static char conf_client[64], conf_server[64], sock[64];

static int
write_conf(const char *path, const char *role, int host)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -1;
	fprintf(f, "[port]\ndev = net_memif0,role=%s,socket=%s\n"
		"ip = 192.168.94.%d/24\nlink_wait = 0\n", role, sock, host);
	return fclose(f);
}

/* Whether a SOCK_SEQPACKET connect to path, in the abstract namespace
 * (memif's default) or the file system, is accepted. */
static bool
listens(const char *path, bool abstract)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0), ret;

	/* An abstract name is as long as the address says: no NUL after. */
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
				    abstract + strlen(path));

	snprintf(sa.sun_path + abstract, sizeof(sa.sun_path) - 1, "%s", path);
	ret = connect(fd, (struct sockaddr *)&sa, len);
	close(fd);
	return ret == 0;
}

static const char *serve_sock;

/* At the child's exit, after the engine's own exit handler (registered
 * later, so run earlier) closed the port: nothing listens any more. */
static void
serve_exit(void)
{
	if (listens(serve_sock, true) || listens(serve_sock, false))
		_exit(4);
}

/* The child: the memif server's device, open until stdin closes. The
 * port closes at exit. */
static int
serve(const char *conf, const char *path)
{
	struct ibv_context *ctx;
	char c;

	serve_sock = path;
	atexit(serve_exit);
	setenv("UROCE_CONFIG", conf, 1);
	ctx = ut_verbs_open_one();
	if (ctx == NULL)
		return 1;
	while (read(0, &c, 1) > 0)
		;
	return ibv_close_device(ctx) == 0 ? 0 : 3;
}

static pid_t
spawn_server(int *wr)
{
	posix_spawn_file_actions_t fa;
	char *argv[] = { (char *)"verbs_link", (char *)"serve", conf_server,
			 sock, NULL };
	int fds[2];
	pid_t pid;

	if (pipe(fds) != 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	if (posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ) != 0)
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	close(fds[0]);
	*wr = fds[1];
	return pid;
}

static void
cleanup(void)
{
	remove(conf_client);
	remove(conf_server);
}

int
main(int argc, char **argv)
{
	struct ibv_context *ctx;
	int pid = (int)getpid(), wr = -1, port = 0, status = 0;
	pid_t child;

	if (argc == 4 && strcmp(argv[1], "serve") == 0)
		return serve(argv[2], argv[3]);
	snprintf(conf_client, sizeof(conf_client), "/tmp/uroce-link-b.%d.conf", pid);
	snprintf(conf_server, sizeof(conf_server), "/tmp/uroce-link-a.%d.conf", pid);
	snprintf(sock, sizeof(sock), "/tmp/uroce-link-%d.sock", pid);
	if (write_conf(conf_client, "client", 2) != 0 ||
	    write_conf(conf_server, "server", 1) != 0) {
		perror("config");
		return 1;
	}
	atexit(cleanup);
	setenv("UROCE_CONFIG", conf_client, 1);
	/* The server does not listen: the open succeeds, the port is DOWN. */
	ctx = ut_verbs_open_one();
	if (!UT_CHECK(ctx != NULL))
		return ut_summary();
	UT_CHECK_EQ(ut_verbs_port_state(ctx), IBV_PORT_DOWN);
	child = spawn_server(&wr);
	if (UT_CHECK(child > 0)) {
		UT_CHECK_EQ(ut_verbs_port_event(ctx, EVENT_GUARD_MS, &port),
			    IBV_EVENT_PORT_ACTIVE);
		UT_CHECK_EQ(port, 1);
		UT_CHECK_EQ(ut_verbs_port_state(ctx), IBV_PORT_ACTIVE);
		UT_NOTE("the memif server came");
		close(wr);	/* the server closes its device and exits */
		UT_CHECK_EQ(waitpid(child, &status, 0), child);
		UT_CHECK(WIFEXITED(status));
		/* 4: a listener left after the close. */
		UT_CHECK_EQ(WEXITSTATUS(status), 0);
		UT_CHECK_EQ(ut_verbs_port_event(ctx, EVENT_GUARD_MS, &port),
			    IBV_EVENT_PORT_ERR);
		UT_CHECK_EQ(port, 1);
		UT_CHECK_EQ(ut_verbs_port_state(ctx), IBV_PORT_DOWN);
		UT_NOTE("the memif server left");
	}
	UT_CHECK_EQ(ibv_close_device(ctx), 0);
	return ut_summary();
}
