/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * A memif client's control channel. In DPDK 22.11, rte_eth_dev_start() of
 * a memif client connects once to its server's socket; the handshake then
 * runs on the EAL interrupt thread. The server listens from its probe on
 * but serves a client only once its own port has started: an INIT that
 * comes before is answered "ID not found" (memif_msg_receive_init()), and
 * a server that leaves closes the channel too. Either way the client's PMD
 * runs memif_disconnect(), which closes the control socket, and never
 * connects again, though its ethdev stays started.
 *
 * The socket's closing is what the caller watches: the start notes the
 * socket it opened (a SOCK_SEQPACKET Unix socket connected to a named
 * address that was not open before the start), and the channel is gone
 * when that socket is. The PMD closes it last, once the interrupt thread
 * is done with the port (the callback's unregister handler), so a stop
 * from then on does not race that thread.
 */

#include <dirent.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <rte_ethdev.h>

#include "glue_priv.h"

/* Control sockets of other memif clients of the process, open before a
 * start: one per memif client port at most. */
#define MEMIF_SOCKS_MAX		64

/* Whether fd is a SOCK_SEQPACKET Unix socket connected to a named address
 * (a memif server's socket); its inode in *ino. A server's own accepted
 * channels have an unnamed peer, DPDK's telemetry connections too. */
static bool
memif_sock(int fd, ino_t *ino)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	int type;
	socklen_t tlen = sizeof(type);
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
		return false;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) != 0 ||
	    type != SOCK_SEQPACKET)
		return false;
	if (getpeername(fd, (struct sockaddr *)&sa, &len) != 0 ||
	    sa.sun_family != AF_UNIX ||
	    len <= offsetof(struct sockaddr_un, sun_path) + 1)
		return false;
	*ino = st.st_ino;
	return true;
}

/* The memif control sockets open now: their fds and inodes, up to max;
 * the count, or -errno. */
static int
memif_socks(int *fds, ino_t *inos, unsigned int max)
{
	struct dirent *d;
	unsigned int n = 0;
	DIR *dir;
	int fd;

	dir = opendir("/proc/self/fd");
	if (dir == NULL)
		return -errno;
	while (n < max && (d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		fd = atoi(d->d_name);
		if (fd == dirfd(dir) || !memif_sock(fd, &inos[n]))
			continue;
		fds[n++] = fd;
	}
	closedir(dir);
	return (int)n;
}

static bool
ino_in(ino_t ino, const ino_t *set, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (set[i] == ino)
			return true;
	}
	return false;
}

int
uroce_glue_memif_start(struct uroce_glue_link *link)
{
	int fds[MEMIF_SOCKS_MAX], nb, na, i, ret;
	ino_t before[MEMIF_SOCKS_MAX], after[MEMIF_SOCKS_MAX];

	link->cc_watch = false;
	nb = memif_socks(fds, before, MEMIF_SOCKS_MAX);
	ret = rte_eth_dev_start(link->port_id);
	if (ret != 0 || nb < 0)
		return ret;
	na = memif_socks(fds, after, MEMIF_SOCKS_MAX);
	if (na < 0)
		return 0;
	link->cc_watch = true;
	link->cc_fd = -1;
	for (i = 0; i < na; i++) {
		if (!ino_in(after[i], before, nb)) {
			link->cc_fd = fds[i];
			link->cc_ino = after[i];
			break;
		}
	}
	/* None new: the channel closed already, the server refused it. */
	GLUE_LOG(DEBUG, "%s: memif control socket %d\n", link->name,
		 link->cc_fd);
	return 0;
}

bool
uroce_glue_memif_dropped(const struct uroce_glue_link *link)
{
	struct stat st;

	if (!link->cc_watch)
		return false;
	return link->cc_fd < 0 || fstat(link->cc_fd, &st) != 0 ||
	       st.st_ino != link->cc_ino;
}
