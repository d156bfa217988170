/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * What the kernel knows about an interface the port shares with it, read
 * over rtnetlink (rtnetlink(7)): its addresses (RTM_GETADDR, as Soft-RoCE
 * takes its GIDs from the netdev's addresses) and its neighbours
 * (RTM_GETNEIGH). Neighbour resolution is the kernel's: on AF_XDP the ARP
 * and ND replies reach the kernel, not us. A missing entry is made to
 * appear by sending one UDP datagram to the address (discard port 9) from
 * a socket bound to the interface: the kernel resolves before it sends.
 *
 * Control path only (port open, the neighbour thread of neigh_kernel.c):
 * every call is a few syscalls.
 */

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "net_priv.h"

#define NL_BUF		16384
#define DISCARD_PORT	9

static int
nl_open(void)
{
	struct timeval tv = { .tv_sec = 1 };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/*
 * Send req and hand each answer message to fn(msg, arg) until NLMSG_DONE
 * (a dump) or the one answer (a get). fn returns 0 to go on.
 * @return 0, the kernel's negative errno, or fn's non-zero value.
 */
static int
nl_talk(struct nlmsghdr *req, int (*fn)(const struct nlmsghdr *, void *),
	void *arg)
{
	static uint32_t seq;
	char buf[NL_BUF] __rte_aligned(4);
	bool dump = req->nlmsg_flags & NLM_F_DUMP;
	int fd = nl_open(), ret = 0;
	ssize_t n;

	if (fd < 0)
		return fd;
	req->nlmsg_seq = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
	if (send(fd, req, req->nlmsg_len, 0) < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		struct nlmsghdr *h;

		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			ret = -errno;
			goto out;
		}
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != req->nlmsg_seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				goto out;
			if (h->nlmsg_type == NLMSG_ERROR) {
				ret = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
				goto out;
			}
			ret = fn(h, arg);
			if (ret != 0 || !dump)
				goto out;
		}
	}
out:
	close(fd);
	return ret;
}

/* ---------------------------------------------------------------------------
 * Addresses.
 */
struct addr_walk {
	unsigned int ifindex;
	struct net_kernel_addrs *out;
};

static int
addr_one(const struct nlmsghdr *h, void *arg)
{
	struct addr_walk *w = arg;
	const struct ifaddrmsg *ifa = NLMSG_DATA(h);
	const struct rtattr *rta = IFA_RTA(ifa);
	int len = (int)IFA_PAYLOAD(h);
	struct net_kernel_addrs *o = w->out;

	if (h->nlmsg_type != RTM_NEWADDR || ifa->ifa_index != w->ifindex)
		return 0;
	for (; RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		if (rta->rta_type != IFA_ADDRESS)
			continue;
		if (ifa->ifa_family == AF_INET && !o->has_ip4 &&
		    RTA_PAYLOAD(rta) == 4) {
			memcpy(&o->ip4, RTA_DATA(rta), 4);
			o->has_ip4 = true;
		} else if (ifa->ifa_family == AF_INET6 &&
			   RTA_PAYLOAD(rta) == 16 &&
			   o->ip6_cnt < RTE_DIM(o->ip6)) {
			memcpy(o->ip6[o->ip6_cnt++], RTA_DATA(rta), 16);
		}
	}
	return 0;
}

int
net_kernel_addrs(unsigned int ifindex, struct net_kernel_addrs *out)
{
	struct {
		struct nlmsghdr h;
		struct ifaddrmsg ifa;
	} req = {
		.h = {
			.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg)),
			.nlmsg_type = RTM_GETADDR,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		},
		.ifa = { .ifa_family = AF_UNSPEC },
	};
	struct addr_walk w = { ifindex, out };

	memset(out, 0, sizeof(*out));
	return nl_talk(&req.h, addr_one, &w);
}

/* ---------------------------------------------------------------------------
 * Neighbours.
 */
struct neigh_get {
	struct rte_ether_addr *mac;
	int state;			/* -ENOENT until found */
};

/* Entries the kernel will send with: a MAC that is usable now. */
#define NUD_USABLE	(NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | \
			 NUD_PERMANENT | NUD_NOARP)

static int
neigh_one(const struct nlmsghdr *h, void *arg)
{
	struct neigh_get *g = arg;
	const struct ndmsg *nd = NLMSG_DATA(h);
	const struct rtattr *rta = (const void *)((const char *)nd +
						  NLMSG_ALIGN(sizeof(*nd)));
	int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*nd)));

	if (h->nlmsg_type != RTM_NEWNEIGH)
		return 0;
	g->state = -EAGAIN;
	if (nd->ndm_state & NUD_FAILED)
		g->state = -EHOSTUNREACH;
	if (!(nd->ndm_state & NUD_USABLE))
		return 0;
	for (; RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		if (rta->rta_type == NDA_LLADDR &&
		    RTA_PAYLOAD(rta) == RTE_ETHER_ADDR_LEN) {
			memcpy(g->mac, RTA_DATA(rta), RTE_ETHER_ADDR_LEN);
			g->state = 0;
		}
	}
	return 0;
}

int
net_kernel_neigh(unsigned int ifindex, const union uroce_gid *gid,
		 struct rte_ether_addr *mac)
{
	struct {
		struct nlmsghdr h;
		struct ndmsg nd;
		struct rtattr dst;
		uint8_t addr[16];
	} req = {
		.h = {
			.nlmsg_type = RTM_GETNEIGH,
			.nlmsg_flags = NLM_F_REQUEST,
		},
		.nd = { .ndm_ifindex = (int)ifindex },
		.dst = { .rta_type = NDA_DST },
	};
	struct neigh_get g = { mac, -ENOENT };
	size_t alen = uroce_gid_is_v4(gid) ? 4 : 16;
	int ret;

	req.nd.ndm_family = alen == 4 ? AF_INET : AF_INET6;
	memcpy(req.addr, alen == 4 ? &gid->raw[12] : gid->raw, alen);
	req.dst.rta_len = (unsigned short)RTA_LENGTH(alen);
	req.h.nlmsg_len = NLMSG_LENGTH(sizeof(req.nd)) +
			  RTA_ALIGN(req.dst.rta_len);
	ret = nl_talk(&req.h, neigh_one, &g);
	return ret == 0 ? g.state : ret;
}

int
net_kernel_neigh_kick(unsigned int ifindex, const char *ifname,
		      const union uroce_gid *gid)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(DISCARD_PORT) };
	struct sockaddr_in s4 = { .sin_family = AF_INET,
				  .sin_port = htons(DISCARD_PORT) };
	bool v4 = uroce_gid_is_v4(gid);
	int fd, ret = 0;

	fd = socket(v4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Out of this interface even where routes say otherwise. */
	if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname,
		       (socklen_t)strlen(ifname)) != 0)
		ret = -errno;
	if (v4)
		memcpy(&s4.sin_addr, &gid->raw[12], 4);
	else {
		memcpy(&s6.sin6_addr, gid->raw, 16);
		s6.sin6_scope_id = ifindex;	/* for link-local GIDs */
	}
	if (ret == 0 && sendto(fd, "", 0, MSG_DONTWAIT,
			       v4 ? (struct sockaddr *)&s4 :
			       (struct sockaddr *)&s6,
			       v4 ? sizeof(s4) : sizeof(s6)) < 0 &&
	    errno != EAGAIN)
		ret = -errno;
	close(fd);
	return ret;
}

int
net_kernel_mtu(const char *ifname)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ret = ioctl(fd, SIOCGIFMTU, &ifr) == 0 ? ifr.ifr_mtu : -errno;
	close(fd);
	return ret;
}

int
net_kernel_link(unsigned int ifindex)
{
	const short want = IFF_UP | IFF_RUNNING;
	struct ifreq ifr = { 0 };
	int fd, ret;

	if (if_indextoname(ifindex, ifr.ifr_name) == NULL)
		return errno == ENXIO || errno == ENODEV ? -ENODEV : -errno;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0)
		ret = (ifr.ifr_flags & want) == want;
	else
		ret = errno == ENXIO ? -ENODEV : -errno;
	close(fd);
	return ret;
}
