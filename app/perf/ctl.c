/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The control connection: TCP between the two processes, as perftest
 * exchanges QP details. Both ends run on the same machine type and build,
 * so messages are sent as they are in memory.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "perf_priv.h"

double
perf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double
perf_thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
nodelay(int fd)
{
	int on = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

int
perf_ctl_listen(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), on = 1;

	if (fd < 0)
		return -errno;
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1) < 0) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	return fd;
}

/* Wait (no bound: a server waits for its client) and accept one. */
int
perf_ctl_accept(int lfd)
{
	int fd = accept(lfd, NULL, NULL);

	if (fd < 0)
		return -errno;
	nodelay(fd);
	return fd;
}

/* Connect, retrying for PERF_WAIT_S while the server starts. */
int
perf_ctl_connect(const char *host, uint16_t port)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	double end = perf_now() + PERF_WAIT_S;
	char svc[8];
	int fd, ret;

	snprintf(svc, sizeof(svc), "%u", port);
	ret = getaddrinfo(host, svc, &hints, &res);
	if (ret != 0)
		return -EHOSTUNREACH;
	do {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
			freeaddrinfo(res);
			nodelay(fd);
			return fd;
		}
		if (fd >= 0)
			close(fd);
		usleep(100 * 1000);
	} while (perf_now() < end);
	freeaddrinfo(res);
	return -ECONNREFUSED;
}

bool
perf_ctl_send(int fd, const void *m, size_t len)
{
	const uint8_t *b = m;
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = send(fd, b + done, len - done, MSG_NOSIGNAL);
		if (n <= 0)
			return false;
		done += (size_t)n;
	}
	return true;
}

int
perf_ctl_recv(int fd, void *m, size_t len, double wait_s)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint8_t *b = m;
	size_t done = 0;
	ssize_t n;

	if (poll(&pfd, 1, (int)(wait_s * 1000)) <= 0)
		return 0;
	while (done < len) {
		n = recv(fd, b + done, len - done, MSG_WAITALL);
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 1;
}

bool
perf_ctl_ready(int fd)
{
	return perf_ctl_wait(fd, 0);
}

bool
perf_ctl_wait(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, ms) > 0;
}
