/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The kernel exception path. A NIC that DPDK drives (a PCI NIC) is gone
 * from the kernel: the host would lose its network. So the port opens a
 * second ethdev whose other side is a kernel interface (net_tap, or
 * net_virtio_user with vhost-net) with the NIC's MAC, and passes it every
 * frame that is not the stack's (and a copy of ARP and neighbour discovery,
 * which both need); what the kernel sends through it goes out on the NIC.
 *
 * Queues: the exception ethdev has as many queue pairs as the port. The
 * lcore of port queue q hands frames to the kernel on exception tx queue q;
 * queue 0's lcore also drains the port's exception rx queue (exc_q, where
 * the default rte_flow rule steers) to exception tx queue 0 and the
 * exception rx queues to the NIC's tx queue 0. Nothing waits: a full
 * queue drops (exc_drop), as a kernel's backlog does.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>

#include "net_priv.h"

const char *
net_exc_dev(const struct uroce_port *p, char *buf, size_t len)
{
	if (p->cfg->exception_set)
		return p->cfg->exception;
	/* A PCI NIC without the key: a tap named after the device. */
	if (p->cfg->is_pci) {
		snprintf(buf, len, "net_tap_uroce%u,iface=uroce%u", p->idx,
			 p->idx);
		return buf;
	}
	return "";
}

static int
exc_setup(struct uroce_port *p, struct net_exc *x, char *err, size_t len)
{
	struct rte_eth_conf conf = { 0 };
	uint16_t q;
	int ret;

	ret = rte_eth_dev_configure(x->port_id, x->nb_queues, x->nb_queues,
				    &conf);
	if (ret == 0)
		ret = net_queue_pairs(x->port_id, x->nb_queues, p->pool, &q);
	if (ret != 0) {
		snprintf(err, len, "queues: %s", strerror(-ret));
		return ret;
	}
	/* The kernel answers for the NIC's MAC: frames to it must be its
	 * own there (a tap drops others as PACKET_OTHERHOST). */
	ret = rte_eth_dev_default_mac_addr_set(x->port_id, &p->mac);
	if (ret != 0 && !x->link.soft_mac)
		NET_LOG(WARNING, "%s: exception interface keeps its MAC (%s): "
			"the kernel will not take frames for %02x:..:%02x\n",
			x->link.name, strerror(-ret), p->mac.addr_bytes[0],
			p->mac.addr_bytes[5]);
	rte_eth_dev_set_mtu(x->port_id, p->mtu);
	ret = rte_eth_dev_start(x->port_id);
	if (ret != 0) {
		snprintf(err, len, "start: %s", strerror(-ret));
		return ret;
	}
	x->started = true;
	return 0;
}

int
net_exc_open(struct uroce_port *p, const char *dev, char *err, size_t len)
{
	struct net_exc *x;
	char why[256];
	int ret;

	x = rte_zmalloc("uroce_exc", sizeof(*x), RTE_CACHE_LINE_SIZE);
	if (x == NULL)
		return -ENOMEM;
	x->nb_queues = p->nb_queues;
	ret = uroce_glue_attach(dev, x->nb_queues, &x->link, why, sizeof(why));
	if (ret != 0) {
		rte_free(x);
		snprintf(err, len, "[port] exception = %s: %s", dev, why);
		return ret;
	}
	x->port_id = x->link.port_id;
	p->exc = x;
	ret = exc_setup(p, x, why, sizeof(why));
	if (ret != 0) {
		snprintf(err, len, "[port] exception = %s: %s", dev, why);
		net_exc_close(p);
		return ret;
	}
	NET_LOG(INFO, "uroce%u: exception interface %s (ethdev %u)\n", p->idx,
		x->link.name, x->port_id);
	return 0;
}

void
net_exc_close(struct uroce_port *p)
{
	struct net_exc *x = p->exc;

	if (x == NULL)
		return;
	if (x->started)
		rte_eth_dev_stop(x->port_id);
	uroce_glue_detach(&x->link);
	rte_free(x);
	p->exc = NULL;
}

/* Send n frames on exception tx queue q; the rest are freed (exc_drop). */
static void
to_kernel(struct uroce_port *p, uint16_t q, struct rte_mbuf **m, uint16_t n)
{
	struct net_queue *nq = &p->q[q];
	uint16_t sent = rte_eth_tx_burst(p->exc->port_id, q, m, n);

	net_ctr_add(&nq->st.exc_in, sent);
	if (sent < n) {
		net_ctr_add(&nq->st.exc_drop, n - sent);
		rte_pktmbuf_free_bulk(m + sent, n - sent);
	}
}

void
net_exc_to_kernel(struct uroce_port *p, uint16_t q, struct rte_mbuf *m)
{
	to_kernel(p, q, &m, 1);
}

void
net_exc_copy(struct uroce_port *p, uint16_t q, const struct rte_mbuf *m)
{
	struct rte_mbuf *c = rte_pktmbuf_copy(m, p->pool, 0, UINT32_MAX);

	if (c == NULL) {
		net_ctr_add(&p->q[q].st.exc_drop, 1);
		return;
	}
	to_kernel(p, q, &c, 1);
}

void
net_exc_poll(struct uroce_port *p)
{
	struct net_exc *x = p->exc;
	struct rte_mbuf *m[NET_BURST];
	struct net_queue *nq = &p->q[0];
	uint16_t n, sent, eq;

	if (p->steer_flow) {	/* the default rule's queue */
		n = net_burst(p, p->exc_q, m, NET_BURST, false);
		if (n > 0)
			to_kernel(p, 0, m, n);
	}
	for (eq = 0; eq < x->nb_queues; eq++) {
		n = rte_eth_rx_burst(x->port_id, eq, m, NET_BURST);
		if (n == 0)
			continue;
		sent = net_burst(p, 0, m, n, true);
		net_ctr_add(&nq->st.exc_out, sent);
		if (sent < n) {
			net_ctr_add(&nq->st.exc_drop, n - sent);
			rte_pktmbuf_free_bulk(m + sent, n - sent);
		}
	}
}
