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
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "glue_priv.h"

/* Control sockets of other memif clients of the process, open before a
 * start: one per memif client port at most. */
#define MEMIF_SOCKS_MAX		64

/* Whether fd is a SOCK_SEQPACKET socket whose address (its peer's, or
 * its own) is a named Unix one, into *sa and *len. */
static bool
seqpacket_named(int fd, bool peer, struct sockaddr_un *sa, socklen_t *len)
{
	int type = 0;
	socklen_t tlen = sizeof(type);

	*len = sizeof(*sa);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) != 0 ||
	    type != SOCK_SEQPACKET)
		return false;
	if ((peer ? getpeername : getsockname)(fd, (struct sockaddr *)sa,
					       len) != 0)
		return false;
	return sa->sun_family == AF_UNIX &&
	       *len > offsetof(struct sockaddr_un, sun_path) + 1;
}

/* Whether fd is a SOCK_SEQPACKET Unix socket connected to a named address
 * (a memif server's socket); its inode in *ino. A server's own accepted
 * channels have an unnamed peer, DPDK's telemetry connections too. */
static bool
memif_sock(int fd, ino_t *ino)
{
	struct sockaddr_un sa;
	socklen_t len;
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode) ||
	    !seqpacket_named(fd, true, &sa, &len))
		return false;
	*ino = st.st_ino;
	return true;
}

/* Calls visit(fd, arg) for each fd of the process until it returns true;
 * 0, or -errno when /proc/self/fd cannot be read. */
static int
fds_visit(bool (*visit)(int fd, void *arg), void *arg)
{
	struct dirent *d;
	DIR *dir;
	int fd;

	dir = opendir("/proc/self/fd");
	if (dir == NULL)
		return -errno;
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		fd = atoi(d->d_name);
		if (fd != dirfd(dir) && visit(fd, arg))
			break;
	}
	closedir(dir);
	return 0;
}

struct socks {
	int *fds;
	ino_t *inos;
	unsigned int n, max;
};

static bool
socks_add(int fd, void *arg)
{
	struct socks *s = arg;

	if (memif_sock(fd, &s->inos[s->n]))
		s->fds[s->n++] = fd;
	return s->n == s->max;
}

/* The memif control sockets open now: their fds and inodes, up to max;
 * the count, or -errno. */
static int
memif_socks(int *fds, ino_t *inos, unsigned int max)
{
	struct socks s = { .fds = fds, .inos = inos, .max = max };
	int ret = fds_visit(socks_add, &s);

	return ret < 0 ? ret : (int)s.n;
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

/*
 * A memif server's listening socket, closed before the server's last port
 * on it stops. DPDK 22.11 frees the socket's state when that port closes
 * (memif_socket_remove_device()) but neither closes the listening fd nor
 * unregisters its interrupt callback. A client that connects from the
 * stop on (one that saw the server's DISCONNECT and came straight back)
 * leaves the fd readable for good, and the interrupt thread then runs the
 * listener handler on freed state without end ("Failed to accept
 * connection request on socket fd -1"). An eventfd put in the listener's
 * place releases the socket (its epoll entry and its name go with it; a
 * client's connect is refused) and leaves the PMD a valid fd that never
 * becomes readable.
 */

/* DPDK 22.11's socket= default (ETH_MEMIF_DEFAULT_SOCKET_FILENAME). */
#define MEMIF_SOCKET_DEFAULT	"/run/memif.sock"

static pthread_mutex_t servers_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct uroce_glue_link *servers[MEMIF_SOCKS_MAX];

void
glue_memif_server_add(struct uroce_glue_link *link, const char *dev)
{
	unsigned int i;

	if (!glue_devarg(dev, "socket", link->memif_sock,
			 sizeof(link->memif_sock)))
		snprintf(link->memif_sock, sizeof(link->memif_sock), "%s",
			 MEMIF_SOCKET_DEFAULT);
	pthread_mutex_lock(&servers_lock);
	for (i = 0; i < MEMIF_SOCKS_MAX && servers[i] != NULL; i++)
		;
	if (i < MEMIF_SOCKS_MAX)
		servers[i] = link;
	pthread_mutex_unlock(&servers_lock);
}

void
glue_memif_server_del(const struct uroce_glue_link *link)
{
	unsigned int i;

	pthread_mutex_lock(&servers_lock);
	for (i = 0; i < MEMIF_SOCKS_MAX; i++) {
		if (servers[i] == link)
			servers[i] = NULL;
	}
	pthread_mutex_unlock(&servers_lock);
}

/* How many server ports of the process listen on path. */
static unsigned int
servers_on(const char *path)
{
	unsigned int i, n = 0;

	pthread_mutex_lock(&servers_lock);
	for (i = 0; i < MEMIF_SOCKS_MAX; i++) {
		if (servers[i] != NULL &&
		    strcmp(servers[i]->memif_sock, path) == 0)
			n++;
	}
	pthread_mutex_unlock(&servers_lock);
	return n;
}

struct listener {
	const char *path;
	int fd;
};

/* Whether fd listens as a SOCK_SEQPACKET Unix socket bound to l->path, in
 * the file system or (a leading NUL) in the abstract namespace. */
static bool
listener_of(int fd, void *arg)
{
	struct listener *l = arg;
	struct sockaddr_un sa;
	socklen_t len, olen = sizeof(int);
	size_t plen = strlen(l->path), nlen;
	const char *name = sa.sun_path;
	int on = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &olen) != 0 || !on ||
	    !seqpacket_named(fd, false, &sa, &len))
		return false;
	nlen = len - offsetof(struct sockaddr_un, sun_path);
	if (name[0] == '\0') {
		name++;
		nlen--;
	}
	if (plen > nlen || memcmp(name, l->path, plen) != 0 ||
	    (plen < nlen && name[plen] != '\0'))
		return false;
	l->fd = fd;
	return true;
}

void
glue_memif_unlisten(const struct uroce_glue_link *link)
{
	struct listener l = { .path = link->memif_sock, .fd = -1 };
	int efd;

	if (servers_on(link->memif_sock) > 1)
		return;		/* another port of ours still serves on it */
	if (fds_visit(listener_of, &l) != 0 || l.fd < 0) {
		GLUE_LOG(DEBUG, "%s: no memif listener on %s\n", link->name,
			 link->memif_sock);
		return;
	}
	efd = eventfd(0, EFD_CLOEXEC);
	if (efd < 0 || dup3(efd, l.fd, O_CLOEXEC) < 0)
		GLUE_LOG(WARNING, "%s: memif listener %d stays open: %s\n",
			 link->name, l.fd, strerror(errno));
	else
		GLUE_LOG(DEBUG, "%s: memif listener %d on %s closed\n",
			 link->name, l.fd, link->memif_sock);
	if (efd >= 0)
		close(efd);
}
