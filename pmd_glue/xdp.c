/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * AF_XDP ports: net_af_xdp on a kernel interface with our XDP program
 * (xdp/uroce_xdp.bpf.c), which takes RoCEv2 to our addresses and passes
 * everything else to the kernel.
 *
 * Who loads the program: DPDK 22.11's net_af_xdp, through its xdp_prog=
 * devarg. Without that devarg the PMD has libxdp load libxdp's own
 * program (every frame of the queue to the socket: the kernel would lose
 * ARP, ICMP, TCP), and 22.11 has no way to hand it a program we attached
 * ourselves. So the PMD loads and attaches our object file (with
 * XDP_FLAGS_UPDATE_IF_NOEXIST) and fills its xsks_map; this file does
 * what the PMD does not, with libbpf:
 *  - before the probe, looks at the interface: a program of someone else
 *    is left alone and the port fails with a message naming the interface;
 *    a stale one of ours (its owner process is gone: a kill -9) is
 *    detached so the PMD can attach a fresh one;
 *  - after the start, finds the program the PMD attached, checks it is
 *    ours, writes our addresses into uroce_addrs and our pid and start
 *    time into uroce_owner;
 *  - after the close, detaches the program if the PMD left it attached.
 */

#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/ioctl.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>

#include "glue_priv.h"

#define XDP_PROG_NAME	"uroce_xdp"
#define XDP_PROG_ENV	"UROCE_XDP_PROG"

struct xdp_owner {			/* uroce_xdp.bpf.c struct owner */
	uint32_t pid;
	uint32_t pad;
	uint64_t start_time;
};

/* $UROCE_XDP_PROG, else the build tree's object, else the installed one. */
static const char *
obj_path(void)
{
	const char *env = getenv(XDP_PROG_ENV);

	if (env != NULL && env[0] != '\0')
		return env;
	if (access(UROCE_XDP_OBJ_BUILD, R_OK) == 0)
		return UROCE_XDP_OBJ_BUILD;
	return UROCE_XDP_OBJ_INSTALL;
}

/* Field 22 of /proc/PID/stat (start time in clock ticks), 0 if gone. */
static uint64_t
proc_start_time(uint32_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (p == NULL || (p = strrchr(buf, ')')) == NULL)
		return 0;
	/* After "pid (comm)", field 3 is the state: 19 more to field 22. */
	for (i = 0; i < 20 && p != NULL; i++)
		p = strchr(p + 1, ' ');
	if (p != NULL)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

/* ---------------------------------------------------------------------------
 * The program on an interface.
 */
struct xdp_found {
	uint32_t id;			/* 0: none attached */
	uint32_t flags;			/* XDP_FLAGS_*_MODE it is attached in */
	char name[BPF_OBJ_NAME_LEN];
	int addrs_fd, owner_fd;		/* our maps, -1 if absent */
};

static void
found_close(struct xdp_found *x)
{
	if (x->addrs_fd >= 0)
		close(x->addrs_fd);
	if (x->owner_fd >= 0)
		close(x->owner_fd);
	x->addrs_fd = x->owner_fd = -1;
}

/* Our maps among the program's (by name). */
static void
maps_find(int prog_fd, struct xdp_found *x)
{
	struct bpf_prog_info info = { 0 };
	uint32_t ids[16], len = sizeof(info), i, n;

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0)
		return;
	n = RTE_MIN(info.nr_map_ids, (uint32_t)RTE_DIM(ids));
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = n;
	info.map_ids = (uint64_t)(uintptr_t)ids;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0)
		return;
	for (i = 0; i < n; i++) {
		struct bpf_map_info mi = { 0 };
		uint32_t mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &mi, &mlen) == 0 &&
		    strcmp(mi.name, "uroce_addrs") == 0 && x->addrs_fd < 0)
			x->addrs_fd = fd;
		else if (strcmp(mi.name, "uroce_owner") == 0 && x->owner_fd < 0)
			x->owner_fd = fd;
		else
			close(fd);
	}
}

/* What is attached to ifindex: 0 (x->id 0: nothing) or a negative errno. */
static int
xdp_inspect(unsigned int ifindex, struct xdp_found *x)
{
	static const uint32_t mode_flags[] = {
		[XDP_ATTACHED_DRV] = XDP_FLAGS_DRV_MODE,
		[XDP_ATTACHED_SKB] = XDP_FLAGS_SKB_MODE,
		[XDP_ATTACHED_HW] = XDP_FLAGS_HW_MODE,
	};
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);
	int fd, ret;

	memset(x, 0, sizeof(*x));
	x->addrs_fd = x->owner_fd = -1;
	ret = bpf_xdp_query((int)ifindex, 0, &q);
	if (ret != 0)
		return ret;
	x->id = q.prog_id;
	if (q.attach_mode < RTE_DIM(mode_flags))
		x->flags = mode_flags[q.attach_mode];
	if (x->id == 0)
		return 0;
	fd = bpf_prog_get_fd_by_id(x->id);
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
		snprintf(x->name, sizeof(x->name), "%s", info.name);
	if (strcmp(x->name, XDP_PROG_NAME) == 0)
		maps_find(fd, x);
	close(fd);
	return 0;
}

static bool
is_ours(const struct xdp_found *x)
{
	return strcmp(x->name, XDP_PROG_NAME) == 0 && x->addrs_fd >= 0 &&
	       x->owner_fd >= 0;
}

/* Whether the process that attached our program is gone. */
static bool
owner_gone(const struct xdp_found *x, uint32_t *pid)
{
	struct xdp_owner o = { 0 };
	uint32_t key = 0;

	*pid = 0;
	if (bpf_map_lookup_elem(x->owner_fd, &key, &o) != 0 || o.pid == 0)
		return true;	/* never claimed: its process died starting */
	*pid = o.pid;
	if (kill((pid_t)o.pid, 0) != 0 && errno == ESRCH)
		return true;
	return proc_start_time(o.pid) != o.start_time;
}

/* Detach program id from ifindex (only if it is still the one there). */
static int
xdp_detach_id(unsigned int ifindex, uint32_t id, uint32_t flags)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
	int fd = bpf_prog_get_fd_by_id(id), ret;

	if (fd < 0)
		return -errno;
	opts.old_prog_fd = fd;
	ret = bpf_xdp_detach((int)ifindex, flags | XDP_FLAGS_REPLACE, &opts);
	close(fd);
	return ret;
}

/*
 * Before the probe: the interface must carry no program, or a stale one
 * of ours (replaced). A live uroce on the same interface, or anyone
 * else's program, is an error that names the interface.
 */
static int
preflight(struct uroce_glue_link *link, char *err, size_t len)
{
	struct xdp_found x;
	uint32_t pid;
	int ret;

	ret = xdp_inspect(link->ifindex, &x);
	if (ret != 0) {
		snprintf(err, len, "interface %s: cannot query its XDP program: %s",
			 link->ifname, strerror(-ret));
		return ret;
	}
	if (x.id == 0)
		return 0;
	if (!is_ours(&x)) {
		snprintf(err, len, "interface %s has someone else's XDP program "
			 "(id %u, name \"%s\"): left alone; detach it (ip link "
			 "set dev %s xdp off) or use another interface",
			 link->ifname, x.id, x.name, link->ifname);
		found_close(&x);
		return -EBUSY;
	}
	if (!owner_gone(&x, &pid)) {
		snprintf(err, len, "interface %s is in use by another uroce "
			 "process (pid %u, XDP program id %u)", link->ifname,
			 pid, x.id);
		found_close(&x);
		return -EBUSY;
	}
	found_close(&x);
	ret = xdp_detach_id(link->ifindex, x.id, x.flags);
	if (ret != 0) {
		snprintf(err, len, "interface %s: cannot detach the stale uroce "
			 "XDP program (id %u): %s", link->ifname, x.id,
			 strerror(-ret));
		return ret;
	}
	GLUE_LOG(NOTICE, "%s: replaced a stale uroce XDP program (id %u) "
		 "left by process %u\n", link->ifname, x.id, pid);
	return 0;
}

/* ---------------------------------------------------------------------------
 * Attach.
 */

/* The net_af_xdp devargs for dev: af_xdp:IFACE[,args] becomes
 * net_af_xdp_IFACE,iface=IFACE[,args]; queue_count and xdp_prog are
 * added unless given. */
static int
devargs(const char *dev, uint16_t nb_queues, struct uroce_glue_link *link,
	char *out, size_t out_len, char *err, size_t len)
{
	const char *rest = "";
	int n;

	if (strncmp(dev, XDP_PREFIX, strlen(XDP_PREFIX)) == 0) {
		const char *ifn = dev + strlen(XDP_PREFIX);
		size_t k = strcspn(ifn, ",");

		if (k == 0 || k >= sizeof(link->ifname)) {
			snprintf(err, len, "af_xdp:IFACE: bad interface name");
			return -EINVAL;
		}
		memcpy(link->ifname, ifn, k);
		link->ifname[k] = '\0';
		rest = ifn + k;
		n = snprintf(out, out_len, "net_af_xdp_%s,iface=%s%s",
			     link->ifname, link->ifname, rest);
	} else {
		if (!glue_devarg(dev, "iface", link->ifname,
				 sizeof(link->ifname))) {
			snprintf(err, len, "net_af_xdp needs iface=IFACE");
			return -EINVAL;
		}
		n = snprintf(out, out_len, "%s", dev);
	}
	if (n > 0 && (size_t)n < out_len && strstr(out, ",queue_count=") == NULL)
		n += snprintf(out + n, out_len - (size_t)n, ",queue_count=%u",
			      nb_queues);
	if (n > 0 && (size_t)n < out_len && strstr(out, ",xdp_prog=") == NULL)
		n += snprintf(out + n, out_len - (size_t)n, ",xdp_prog=%s",
			      obj_path());
	if (n < 0 || (size_t)n >= out_len) {
		snprintf(err, len, "device string too long");
		return -EINVAL;
	}
	return 0;
}

/* The interface's queues as net_af_xdp counts them: its combined
 * channels (ETHTOOL_GCHANNELS), 1 when it reports none (a veth). */
static unsigned int
iface_queues(const char *ifname)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr = { .ifr_data = (void *)&ch };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int ret;

	if (fd < 0)
		return 1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ret = ioctl(fd, SIOCETHTOOL, &ifr);
	close(fd);
	return ret != 0 || ch.max_combined == 0 ? 1 : ch.combined_count;
}

/* One XSK per engine lcore's queue; RoCEv2 that the NIC spreads to a
 * queue without one goes to the kernel (the program's default). */
static int
queues_check(const struct uroce_glue_link *link, uint16_t nb_queues,
	     char *err, size_t len)
{
	unsigned int have = iface_queues(link->ifname);

	if (nb_queues > have) {
		snprintf(err, len, "interface %s has %u queue%s for AF_XDP "
			 "sockets, %u wanted ([eal] lcores; ethtool -L %s "
			 "combined %u where the NIC allows it)", link->ifname,
			 have, have == 1 ? "" : "s", nb_queues, link->ifname,
			 nb_queues);
		return -EINVAL;
	}
	if (nb_queues < have)
		GLUE_LOG(WARNING, "%s: %u queues, AF_XDP sockets on the first "
			 "%u: RoCEv2 the NIC steers to the others goes to the "
			 "kernel (set [eal] lcores = %u, or ethtool -L %s "
			 "combined %u)\n", link->ifname, have, nb_queues, have,
			 link->ifname, nb_queues);
	return 0;
}

int
glue_xdp_attach(const char *dev, uint16_t nb_queues,
		struct uroce_glue_link *link, char *err, size_t len)
{
	char args[UROCE_GLUE_DEVARGS_LEN];
	int ret;

	ret = devargs(dev, nb_queues, link, args, sizeof(args), err, len);
	if (ret != 0)
		return ret;
	link->ifindex = if_nametoindex(link->ifname);
	if (link->ifindex == 0) {
		snprintf(err, len, "interface %s: %s", link->ifname,
			 strerror(errno));
		return -ENODEV;
	}
	if (strstr(dev, ",xdp_prog=") == NULL && access(obj_path(), R_OK) != 0) {
		snprintf(err, len, "interface %s: XDP object %s: %s (set %s)",
			 link->ifname, obj_path(), strerror(errno),
			 XDP_PROG_ENV);
		return -ENOENT;
	}
	ret = queues_check(link, nb_queues, err, len);
	if (ret == 0)
		ret = preflight(link, err, len);
	if (ret != 0)
		return ret;
	GLUE_LOG(DEBUG, "af_xdp: %s\n", args);
	return glue_probe(args, link, err, len);
}

/* ---------------------------------------------------------------------------
 * After the start: claim the program and give it our addresses.
 */
int
uroce_glue_xdp_claim(struct uroce_glue_link *link, const uint8_t (*addr)[16],
		     unsigned int n, char *err, size_t len)
{
	struct xdp_owner o = { .pid = (uint32_t)getpid() };
	struct xdp_found x;
	uint32_t key = 0;
	uint8_t one = 1;
	unsigned int i;
	int ret;

	if (link->kind != UROCE_GLUE_AF_XDP)
		return 0;
	ret = xdp_inspect(link->ifindex, &x);
	if (ret == 0 && (x.id == 0 || !is_ours(&x)))
		ret = -ENOENT;
	if (ret != 0) {
		snprintf(err, len, "interface %s: our XDP program is not attached "
			 "after the start (%s; found id %u \"%s\")",
			 link->ifname, strerror(-ret), x.id, x.name);
		found_close(&x);
		return ret;
	}
	link->xdp_prog_id = x.id;
	link->xdp_flags = x.flags;
	o.start_time = proc_start_time(o.pid);
	ret = bpf_map_update_elem(x.owner_fd, &key, &o, BPF_ANY);
	for (i = 0; i < n && ret == 0; i++)
		ret = bpf_map_update_elem(x.addrs_fd, addr[i], &one, BPF_ANY);
	found_close(&x);
	if (ret != 0) {
		snprintf(err, len, "interface %s: XDP maps: %s", link->ifname,
			 strerror(-ret));
		return ret;
	}
	GLUE_LOG(INFO, "%s: XDP program id %u takes RoCEv2 to %u addresses\n",
		 link->ifname, x.id, n);
	return 0;
}

/* After the close: the program goes if the PMD left it there. */
void
glue_xdp_detach(struct uroce_glue_link *link)
{
	struct xdp_found x;
	int ret;

	if (link->xdp_prog_id == 0)
		return;
	if (xdp_inspect(link->ifindex, &x) == 0 &&
	    x.id == link->xdp_prog_id) {
		ret = xdp_detach_id(link->ifindex, x.id, link->xdp_flags);
		if (ret != 0)
			GLUE_LOG(WARNING, "%s: detach XDP program %u: %s\n",
				 link->ifname, x.id, strerror(-ret));
	}
	found_close(&x);
	link->xdp_prog_id = 0;
}
