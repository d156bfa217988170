/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The threads uroce starts inside a program leave its signals to it. The
 * program here blocks nothing while the stack starts (the engine and its
 * EAL threads at the first rdma_cm call, the CM agent, the address
 * resolution workers), then does what tgtd does: blocks SIGUSR2 in its
 * own thread only, reads it from a signalfd, and sends it to the process
 * with kill(). POSIX delivers a process-directed signal to any thread that
 * does not block it: if one of ours did not, the signal would end the
 * process (SIGUSR2's default action) instead of reaching the signalfd.
 * Every thread but the program's must have every signal blocked
 * (/proc/self/task/<tid>/status, SigBlk).
 */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "uroce_test.h"
#include "uroce_test_verbs.h"

#define SUBNET		98
/* A guard against a hang, not a timing threshold. */
#define GUARD_MS	30000

static const int program_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM,
	SIGCHLD, SIGWINCH,
};

static struct sockaddr_in
sin_of(unsigned int host, uint16_t port)
{
	struct sockaddr_in s;
	char ip[32];

	snprintf(ip, sizeof(ip), "192.168.%u.%u", SUBNET, host);
	memset(&s, 0, sizeof(s));
	s.sin_family = AF_INET;
	s.sin_port = htons(port);
	inet_pton(AF_INET, ip, &s.sin_addr);
	return s;
}

/* SigBlk of thread tid into *mask: false if the thread is gone (the
 * resolution workers end on their own). */
static bool
sig_blocked(const char *tid, uint64_t *mask)
{
	char path[300], line[128];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = sscanf(line, "SigBlk: %" SCNx64, mask) == 1;
	fclose(f);
	return found;
}

/* The name of thread @tid (static buffer). */
static const char *
thread_name(const char *tid)
{
	static char name[32];
	char path[300];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/comm", tid);
	f = fopen(path, "r");
	name[0] = '\0';
	if (f != NULL) {
		if (fgets(name, sizeof(name), f) != NULL)
			name[strcspn(name, "\n")] = '\0';
		fclose(f);
	}
	return name;
}

/* Every thread but this one blocks every signal a program uses; @return
 * how many other threads there are. */
static unsigned int
check_threads(void)
{
	char self[16];
	struct dirent *d;
	unsigned int n = 0, i;
	DIR *dir = opendir("/proc/self/task");

	if (!UT_CHECK(dir != NULL))
		return 0;
	snprintf(self, sizeof(self), "%d", (int)getpid());
	while ((d = readdir(dir)) != NULL) {
		uint64_t mask;

		if (d->d_name[0] == '.' || strcmp(d->d_name, self) == 0)
			continue;
		if (!sig_blocked(d->d_name, &mask))
			continue;
		n++;
		for (i = 0; i < sizeof(program_signals) / sizeof(program_signals[0]); i++) {
			int s = program_signals[i];

			if (!UT_CHECK(mask & (UINT64_C(1) << (s - 1))))
				fprintf(stderr, "thread %s (%s) does not block "
					"signal %d (SigBlk %016" PRIx64 ")\n",
					d->d_name, thread_name(d->d_name), s,
					mask);
		}
	}
	closedir(dir);
	return n;
}

/* The stack started with nothing blocked: an id resolving an address
 * across the ring (the engine, the agent, the resolution workers). */
static void
start_stack(struct rdma_event_channel **ch, struct rdma_cm_id **id)
{
	struct sockaddr_in src = sin_of(1, 0), dst = sin_of(2, 20030);
	struct pollfd p;
	struct rdma_cm_event *ev;

	*ch = rdma_create_event_channel();
	if (!UT_CHECK(*ch != NULL) ||
	    !UT_CHECK_EQ(rdma_create_id(*ch, id, NULL, RDMA_PS_TCP), 0))
		return;
	UT_CHECK_EQ(rdma_resolve_addr(*id, (struct sockaddr *)&src,
				      (struct sockaddr *)&dst, 2000), 0);
	/* the workers run now: look at them before they finish */
	UT_CHECK(check_threads() > 0);
	p = (struct pollfd){ .fd = (*ch)->fd, .events = POLLIN };
	if (UT_CHECK_EQ(poll(&p, 1, GUARD_MS), 1) &&
	    UT_CHECK_EQ(rdma_get_cm_event(*ch, &ev), 0)) {
		UT_CHECK_EQ(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
		rdma_ack_cm_event(ev);
	}
}

/* tgtd's pattern: SIGUSR2 blocked here, read from a signalfd, sent to the
 * process. */
static void
check_signalfd(void)
{
	struct signalfd_siginfo si;
	struct pollfd p;
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	UT_CHECK_EQ(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
	fd = signalfd(-1, &set, SFD_CLOEXEC);
	if (!UT_CHECK(fd >= 0))
		return;
	UT_CHECK_EQ(kill(getpid(), SIGUSR2), 0);
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (UT_CHECK_EQ(poll(&p, 1, GUARD_MS), 1) &&
	    UT_CHECK_EQ(read(fd, &si, sizeof(si)), (ssize_t)sizeof(si)))
		UT_CHECK_EQ(si.ssi_signo, (uint32_t)SIGUSR2);
	close(fd);
}

int
main(void)
{
	struct rdma_event_channel *ch = NULL;
	struct rdma_cm_id *id = NULL;
	sigset_t none;

	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, NULL);
	if (ut_verbs_ringlink_config("cmsig", SUBNET) != 0) {
		perror("config");
		return 1;
	}
	start_stack(&ch, &id);
	check_threads();
	check_signalfd();
	if (id != NULL)
		rdma_destroy_id(id);
	if (ch != NULL)
		rdma_destroy_event_channel(ch);
	return ut_summary();
}
