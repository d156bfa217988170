/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * What uroce's librdmacm exports but does not do yet: multicast (no
 * multicast on the stack's UD QPs: ibv_attach_mcast is EOPNOTSUPP) and
 * rsockets. Each fails at once with -1 and errno set: EOPNOTSUPP for the
 * multicast calls, ENOSYS for the rsocket calls, so that a program that
 * falls back to plain sockets on an rsocket error does so.
 */

#include <errno.h>
#include <poll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>

#include "rdmacm_priv.h"

int
rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr,
		    void *context)
{
	return cma_err(-EOPNOTSUPP);
}

int
rdma_join_multicast_ex(struct rdma_cm_id *id,
		       struct rdma_cm_join_mc_attr_ex *mc_join_attr,
		       void *context)
{
	return cma_err(-EOPNOTSUPP);
}

int
rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	return cma_err(-EOPNOTSUPP);
}

/* The rsocket calls: all ENOSYS. */
#define RS_NOSYS(ret_type, name, ...) \
	ret_type name(__VA_ARGS__) { errno = ENOSYS; return -1; }

RS_NOSYS(int, rsocket, int domain, int type, int protocol)
RS_NOSYS(int, rbind, int s, const struct sockaddr *addr, socklen_t len)
RS_NOSYS(int, rlisten, int s, int backlog)
RS_NOSYS(int, raccept, int s, struct sockaddr *addr, socklen_t *len)
RS_NOSYS(int, rconnect, int s, const struct sockaddr *addr, socklen_t len)
RS_NOSYS(int, rshutdown, int s, int how)
RS_NOSYS(int, rclose, int s)
RS_NOSYS(ssize_t, rrecv, int s, void *buf, size_t len, int flags)
RS_NOSYS(ssize_t, rrecvfrom, int s, void *buf, size_t len, int flags,
	 struct sockaddr *src, socklen_t *srclen)
RS_NOSYS(ssize_t, rrecvmsg, int s, struct msghdr *msg, int flags)
RS_NOSYS(ssize_t, rsend, int s, const void *buf, size_t len, int flags)
RS_NOSYS(ssize_t, rsendto, int s, const void *buf, size_t len, int flags,
	 const struct sockaddr *dst, socklen_t dstlen)
RS_NOSYS(ssize_t, rsendmsg, int s, const struct msghdr *msg, int flags)
RS_NOSYS(ssize_t, rread, int s, void *buf, size_t count)
RS_NOSYS(ssize_t, rreadv, int s, const struct iovec *iov, int iovcnt)
RS_NOSYS(ssize_t, rwrite, int s, const void *buf, size_t count)
RS_NOSYS(ssize_t, rwritev, int s, const struct iovec *iov, int iovcnt)
RS_NOSYS(int, rpoll, struct pollfd *fds, nfds_t nfds, int timeout)
RS_NOSYS(int, rselect, int nfds, fd_set *r, fd_set *w, fd_set *e,
	 struct timeval *timeout)
RS_NOSYS(int, rgetpeername, int s, struct sockaddr *addr, socklen_t *len)
RS_NOSYS(int, rgetsockname, int s, struct sockaddr *addr, socklen_t *len)
RS_NOSYS(int, rsetsockopt, int s, int level, int optname,
	 const void *optval, socklen_t optlen)
RS_NOSYS(int, rgetsockopt, int s, int level, int optname, void *optval,
	 socklen_t *optlen)
RS_NOSYS(int, rfcntl, int s, int cmd, ...)
RS_NOSYS(off_t, riomap, int s, void *buf, size_t len, int prot, int flags,
	 off_t offset)
RS_NOSYS(int, riounmap, int s, void *buf, size_t len)

/* riowrite returns size_t: (size_t)-1 on error, as rdma-core's. */
size_t
riowrite(int s, const void *buf, size_t count, off_t offset, int flags)
{
	errno = ENOSYS;
	return (size_t)-1;
}
