/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The port's link as the verbs see it (ibv_query_port(), the engine's link
 * watch): the ethdev's link, and on a port backed by a kernel interface
 * (af_xdp, af_packet or tap with iface=) the interface's own state too. In
 * DPDK 22.11 the af_xdp and af_packet PMDs report a link that never goes
 * down, so an interface set down, or a veth whose peer went down, would
 * otherwise look ACTIVE while nothing passes. The interface counts as up
 * when it is IFF_UP and IFF_RUNNING (netdevice(7): administratively up
 * and its carrier on, what ip(8) shows as LOWER_UP).
 *
 * Gone for good: the kernel interface no longer exists (deleted, or its
 * namespace with it), the ethdev reported RTE_ETH_EVENT_INTR_RMV (the
 * device was removed, a NIC unplugged), or a memif client's start, tried
 * again at each poll, failed with something other than its server not
 * listening (port.c, start_again()). None comes back on the same port:
 * the engine raises IBV_EVENT_DEVICE_FATAL (engine/link.c).
 */

#include <errno.h>
#include <string.h>

#include "net_priv.h"

static bool
kernel_up(struct uroce_port *p)
{
	int ret;

	if (p->link.ifindex == 0)
		return true;
	ret = net_kernel_link(p->link.ifindex);
	if (ret == -ENODEV && !__atomic_exchange_n(&p->gone, true,
						   __ATOMIC_ACQ_REL))
		NET_LOG(ERR, "%s: interface %s (index %u) is gone\n",
			p->cfg->dev, p->link.ifname, p->link.ifindex);
	return ret == 1;
}

bool
uroce_port_link_up(const struct uroce_port *cp)
{
	/* Only the gone flag is written, by the first to see it go. */
	struct uroce_port *p = (struct uroce_port *)(uintptr_t)cp;
	struct rte_eth_link link;

	return __atomic_load_n(&p->started, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&p->gone, __ATOMIC_ACQUIRE) &&
	       rte_eth_link_get_nowait(p->port_id, &link) == 0 &&
	       link.link_status == RTE_ETH_LINK_UP && kernel_up(p);
}

bool
uroce_port_gone(const struct uroce_port *p)
{
	return __atomic_load_n(&p->gone, __ATOMIC_ACQUIRE);
}

/* EAL interrupt thread. */
static int
link_rmv(uint16_t port_id, enum rte_eth_event_type type, void *arg,
	 void *ret_param)
{
	struct uroce_port *p = arg;

	(void)type;
	(void)ret_param;
	__atomic_store_n(&p->gone, true, __ATOMIC_RELEASE);
	NET_LOG(ERR, "%s: ethdev %u was removed\n", p->cfg->dev, port_id);
	return 0;
}

void
net_link_watch_start(struct uroce_port *p)
{
	int ret = rte_eth_dev_callback_register(p->port_id,
						RTE_ETH_EVENT_INTR_RMV,
						link_rmv, p);

	p->rmv_cb = ret == 0;
	if (ret != 0)
		NET_LOG(DEBUG, "%s: no removal callback: %s\n", p->cfg->dev,
			strerror(-ret));
}

void
net_link_watch_stop(struct uroce_port *p)
{
	if (!p->rmv_cb)
		return;
	/* -EAGAIN: the callback runs now; it is short, try again. */
	while (rte_eth_dev_callback_unregister(p->port_id,
					       RTE_ETH_EVENT_INTR_RMV,
					       link_rmv, p) == -EAGAIN)
		;
	p->rmv_cb = false;
}
