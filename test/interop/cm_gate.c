/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * An LD_PRELOAD module for run_interop.py's perftest -R clients on the
 * host: every rdma_connect() after a process's first waits until the
 * harness has seen the server listen again.
 *
 * perftest -R connects twice, for its own exchanges and then for the test,
 * and its client sends the test's REQ as soon as its side of the last
 * exchange is done. A server much slower than its client (the guest's,
 * under TCG) has not called rdma_listen() again by then, and the REQ is
 * rejected (docs/interop.md, perftest's second connection). Call N
 * creates $UROCE_INTEROP_CM_GATE.N.wait, then waits for
 * $UROCE_INTEROP_CM_GATE.N, which the harness creates once the guest shows
 * a listening CM ID on the test's port; at most 60 s, then it connects
 * anyway. Without the variable it only passes the call on.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct rdma_cm_id;
struct rdma_conn_param;

typedef int (*connect_fn)(struct rdma_cm_id *, struct rdma_conn_param *);

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param);

#define GATE_POLL_US	10000
#define GATE_POLLS	6000	/* 60 s */

static void
gate_wait(const char *gate, unsigned int n)
{
	char path[4096];
	int fd, i;

	snprintf(path, sizeof(path), "%s.%u.wait", gate, n);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s.%u", gate, n);
	for (i = 0; i < GATE_POLLS && access(path, F_OK) != 0; i++)
		usleep(GATE_POLL_US);
}

int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	static connect_fn real;
	static unsigned int calls;
	const char *gate = getenv("UROCE_INTEROP_CM_GATE");

	if (real == NULL)
		real = (connect_fn)dlsym(RTLD_NEXT, "rdma_connect");
	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	if (gate != NULL && ++calls > 1)
		gate_wait(gate, calls);
	return real(id, param);
}
