/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Link kinds: the dev string's prefix picks a row of link_kinds[], which
 * says how the kind behaves (see struct uroce_glue_link); vdevs and PCI
 * devices are probed with rte_dev_probe(), ringlinks built in ringlink.c.
 */

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_ethdev.h>

#include "glue_priv.h"
#include "uroce_config.h"

RTE_LOG_REGISTER_SUFFIX(uroce_glue_logtype, glue, NOTICE);

struct link_kind {
	const char *prefix;		/* of the dev string; NULL: PCI */
	enum uroce_glue_kind kind;
	const char *name;
	bool big_frames, soft_mac, peer_link;
};

/* memif passes frames above its reported 1518-byte maximum when the MTU is
 * left alone (tx chains buffers, rx reassembles); a ring has no size limit.
 * Neither filters on the destination MAC. */
static const struct link_kind link_kinds[] = {
	{ RINGLINK_PREFIX, UROCE_GLUE_RINGLINK, "ringlink", true, true, false },
	{ "net_memif", UROCE_GLUE_MEMIF, "memif", true, true, true },
	{ "net_af_packet", UROCE_GLUE_AF_PACKET, "af_packet", false, false, false },
	{ "net_tap", UROCE_GLUE_TAP, "tap", false, false, false },
	{ XDP_PREFIX, UROCE_GLUE_AF_XDP, "af_xdp", false, false, false },
	{ "net_af_xdp", UROCE_GLUE_AF_XDP, "af_xdp", false, false, false },
	{ "net_ring", UROCE_GLUE_RING, "ring", true, true, false },
	{ "", UROCE_GLUE_VDEV, "vdev", false, false, false },
	{ NULL, UROCE_GLUE_PCI, "pci", false, false, false },
};

const char *
uroce_glue_kind_name(enum uroce_glue_kind kind)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(link_kinds); i++) {
		if (link_kinds[i].kind == kind)
			return link_kinds[i].name;
	}
	return "?";
}

/* [dddd:]bb:dd.f at the start of s. */
static bool
is_pci(const char *s)
{
	size_t n = strcspn(s, ",");
	const char *dot = memchr(s, '.', n);

	return dot != NULL && memchr(s, ':', n) != NULL &&
	       (n == 7 || n == 12) && dot == s + n - 2;
}

static const struct link_kind *
kind_of(const char *dev)
{
	unsigned int i;

	if (is_pci(dev))
		return &link_kinds[RTE_DIM(link_kinds) - 1];
	for (i = 0; link_kinds[i].prefix != NULL; i++) {
		if (strncmp(dev, link_kinds[i].prefix,
			    strlen(link_kinds[i].prefix)) == 0)
			return &link_kinds[i];
	}
	return NULL;
}

/* The device name of dev: up to the first ',', PCI with its domain. */
static void
dev_name(const char *dev, bool pci, char *name, size_t len)
{
	size_t n = strcspn(dev, ",");

	if (pci && n == 7)
		snprintf(name, len, "0000:%.*s", (int)n, dev);
	else
		snprintf(name, len, "%.*s", (int)n, dev);
}

/* The first ethdev of the device called name (or the ethdev so named). */
static int
find_port(const char *name, uint16_t *port_id)
{
	struct rte_eth_dev_info info;
	uint16_t pid;

	if (rte_eth_dev_get_port_by_name(name, port_id) == 0)
		return 0;
	RTE_ETH_FOREACH_DEV(pid) {
		if (rte_eth_dev_info_get(pid, &info) == 0 &&
		    info.device != NULL &&
		    strcmp(rte_dev_name(info.device), name) == 0) {
			*port_id = pid;
			return 0;
		}
	}
	return -ENODEV;
}

int
glue_probe(const char *dev, struct uroce_glue_link *link, char *err,
	   size_t len)
{
	char name[RTE_DEV_NAME_MAX_LEN];
	int ret;

	dev_name(dev, link->kind == UROCE_GLUE_PCI, name, sizeof(name));
	if (find_port(name, &link->port_id) == 0) {
		GLUE_LOG(DEBUG, "%s exists already (EAL args?): using it\n",
			 name);
		link->probed = false;
		goto found;
	}
	ret = rte_dev_probe(dev);
	if (ret < 0 && ret != -EEXIST) {
		/* EAL says -EFAULT when no bus or driver takes the name. */
		snprintf(err, len, "%s (rte_dev_probe: %s)",
			 ret == -ENOENT || ret == -ENODEV || ret == -EINVAL ||
			 ret == -EFAULT ?
			 "no such driver or device, or bad devargs" :
			 "probe failed", strerror(-ret));
		return -ENODEV;
	}
	link->probed = ret == 0;
	if (find_port(name, &link->port_id) != 0) {
		snprintf(err, len, "probed, but no ethdev named %s", name);
		return -ENODEV;
	}
found:
	if (rte_eth_dev_get_name_by_port(link->port_id, link->name) != 0)
		snprintf(link->name, sizeof(link->name), "%s", name);
	return 0;
}

/* key= of a devargs string "name,k1=v1,k2=v2" (glue_priv.h). */
bool
glue_devarg(const char *dev, const char *key, char *val, size_t len)
{
	size_t kl = strlen(key), n;
	const char *p;

	for (p = strchr(dev, ','); p != NULL; p = strchr(p + 1, ',')) {
		if (strncmp(p + 1, key, kl) != 0 || p[1 + kl] != '=')
			continue;
		p += 2 + kl;
		n = strcspn(p, ",");
		if (n == 0 || n >= len)
			return false;
		memcpy(val, p, n);
		val[n] = '\0';
		return true;
	}
	return false;
}

/*
 * memif with its default 2048-byte buffers loses frames that span two
 * descriptors in DPDK 22.11 (it shows as floods of stale duplicates, or
 * as a tx that never drains, with a 4096 MTU): give every frame up to the
 * 9000-byte MTU one buffer, unless the dev string chose a size itself.
 */
#define MEMIF_BSIZE	"16384"

static int
probe_memif(const char *dev, struct uroce_glue_link *link, char *err,
	    size_t len)
{
	char with[UROCE_CONFIG_STR_LEN + sizeof(",bsize=" MEMIF_BSIZE)];

	snprintf(with, sizeof(with), "%s,bsize=" MEMIF_BSIZE, dev);
	return glue_probe(with, link, err, len);
}

int
uroce_glue_attach(const char *dev, uint16_t nb_queues,
		  struct uroce_glue_link *link, char *err, size_t err_len)
{
	const struct link_kind *k = kind_of(dev);
	char role[8];
	int ret;

	memset(link, 0, sizeof(*link));
	if (nb_queues == 0 || nb_queues > UROCE_GLUE_MAX_QUEUES) {
		snprintf(err, err_len, "%u queue pairs: 1..%u supported",
			 nb_queues, UROCE_GLUE_MAX_QUEUES);
		return -EINVAL;
	}
	if (k == NULL || (k->kind == UROCE_GLUE_VDEV && dev[0] == '\0')) {
		snprintf(err, err_len, "not a device string");
		return -EINVAL;
	}
	link->kind = k->kind;
	link->big_frames = k->big_frames;
	link->soft_mac = k->soft_mac;
	link->peer_link = k->peer_link;
	link->memif_server = k->kind == UROCE_GLUE_MEMIF &&
			     glue_devarg(dev, "role", role, sizeof(role)) &&
			     strcmp(role, "server") == 0;
	if (k->kind == UROCE_GLUE_RINGLINK)
		ret = glue_ringlink_attach(dev, nb_queues, link, err, err_len);
	else if (k->kind == UROCE_GLUE_AF_XDP)
		ret = glue_xdp_attach(dev, nb_queues, link, err, err_len);
	else if (k->kind == UROCE_GLUE_MEMIF && strstr(dev, "bsize=") == NULL)
		ret = probe_memif(dev, link, err, err_len);
	else
		ret = glue_probe(dev, link, err, err_len);
	if (ret == 0 && link->memif_server)
		glue_memif_server_add(link, dev);
	/* af_packet and tap on a named kernel interface (neighbours). */
	if (ret == 0 && link->ifindex == 0 &&
	    glue_devarg(dev, "iface", link->ifname, sizeof(link->ifname)))
		link->ifindex = if_nametoindex(link->ifname);
	if (ret == 0)
		GLUE_LOG(DEBUG, "%s: %s link, ethdev %u (%s)\n", dev, k->name,
			 link->port_id, link->name);
	return ret;
}

/*
 * memif closes in turn. In DPDK 22.11 the PMD serves the peer's leaving (a
 * DISCONNECT message, or EOF on the control socket) on the EAL interrupt
 * thread with memif_disconnect(); our stop runs memif_disconnect() too and
 * our close frees the port's private data. When the peer leaves while we
 * stop and close, the two threads free the same regions, or the handler
 * runs on a port already released (a SEGV at exit, now and then). So the
 * client goes at once, and the server waits for the client to have gone
 * (its link down), up to MEMIF_SERVER_WAIT_MS (a
 * client that lives on then sees the server leave while it runs, which is
 * safe); whichever side finds its link already down leaves the handler
 * MEMIF_GRACE_MS to finish before it stops.
 */
#define MEMIF_SERVER_WAIT_MS	1000
#define MEMIF_GRACE_MS		20

static bool
glue_link_down(uint16_t port_id)
{
	struct rte_eth_link l;

	return rte_eth_link_get_nowait(port_id, &l) != 0 ||
	       l.link_status == RTE_ETH_LINK_DOWN;
}

static void
memif_wait_peer(const struct uroce_glue_link *link)
{
	unsigned int ms, wait;

	wait = link->memif_server ? MEMIF_SERVER_WAIT_MS : 0;
	for (ms = 0; !glue_link_down(link->port_id); ms++) {
		if (ms >= wait)
			return;
		rte_delay_us_sleep(1000);
	}
	rte_delay_us_sleep(MEMIF_GRACE_MS * 1000);
}

void
uroce_glue_before_stop(const struct uroce_glue_link *link)
{
	if (link->kind != UROCE_GLUE_MEMIF)
		return;
	memif_wait_peer(link);
	/* No client may come back between our stop and close (memif.c). */
	if (link->memif_server)
		glue_memif_unlisten(link);
}

void
uroce_glue_detach(struct uroce_glue_link *link)
{
	struct rte_eth_dev_info info;
	struct rte_device *dev = NULL;
	int ret;

	if (link->kind == UROCE_GLUE_RINGLINK) {
		glue_ringlink_detach(link);
		return;
	}
	if (!link->probed)
		return;
	if (link->memif_server) {
		glue_memif_unlisten(link);	/* a port never started */
		glue_memif_server_del(link);
	}
	if (rte_eth_dev_info_get(link->port_id, &info) == 0)
		dev = info.device;
	ret = rte_eth_dev_close(link->port_id);
	if (ret != 0)
		GLUE_LOG(WARNING, "%s: close: %s\n", link->name, strerror(-ret));
	if (dev != NULL) {
		ret = rte_dev_remove(dev);
		if (ret != 0)
			GLUE_LOG(WARNING, "%s: remove: %s\n", link->name,
				 strerror(-ret));
	}
	if (link->kind == UROCE_GLUE_AF_XDP)
		glue_xdp_detach(link);
}
