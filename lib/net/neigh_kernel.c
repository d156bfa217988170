/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Neighbours from the kernel ([port] neigh = kernel; the default on
 * AF_XDP, where ARP and ND replies go to the kernel). The table of
 * neigh.c is the cache the engine reads, lock-free as ever; what fills it
 * is a control thread of the port (not an engine lcore: netlink never
 * runs on the fast path). uroce_port_resolve() marks a new entry
 * INCOMPLETE; the thread then asks the kernel (RTM_GETNEIGH) every
 * NET_KNEIGH_POLL_US, and while the kernel has no usable entry sends it a
 * datagram to resolve (kernel.c), every NET_ARP_RETRY_MS, NET_ARP_TRIES
 * times, after which the entry is FAILED (reported once, as with our own
 * ARP). Entries learnt are re-read every NET_KNEIGH_REFRESH_MS so that a
 * MAC the kernel changed is followed.
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_lcore.h>

#include "net_priv.h"

#define NET_KNEIGH_POLL_US	1000
#define NET_KNEIGH_REFRESH_MS	1000

/* One INCOMPLETE entry: the kernel's answer, or a kick, or FAILED. */
static void
pending_poll(struct uroce_port *p, struct net_neigh *s, uint64_t now)
{
	struct net_neigh_table *t = p->neigh;
	struct rte_ether_addr mac;
	int ret;

	ret = net_kernel_neigh(p->link.ifindex, &s->key, &mac);
	rte_spinlock_lock(&t->lock);
	if (s->state != NEIGH_INCOMPLETE) {
		rte_spinlock_unlock(&t->lock);
		return;
	}
	if (ret == 0) {
		NET_LOG(DEBUG, "uroce%u: kernel neighbour INCOMPLETE -> "
			"REACHABLE\n", p->idx);
		net_neigh_set(t, s, NEIGH_REACHABLE, &mac);
	} else if (now >= s->due && s->tries >= NET_ARP_TRIES) {
		NET_LOG(DEBUG, "uroce%u: kernel neighbour INCOMPLETE -> FAILED "
			"after %u tries\n", p->idx, s->tries);
		net_neigh_set(t, s, NEIGH_FAILED, NULL);
	} else if (now >= s->due) {
		s->tries++;
		s->due = now + t->retry_tsc;
		rte_spinlock_unlock(&t->lock);
		ret = net_kernel_neigh_kick(p->link.ifindex, p->link.ifname,
					    &s->key);
		if (ret != 0)
			NET_LOG(DEBUG, "uroce%u: resolve via %s: %s\n", p->idx,
				p->link.ifname, strerror(-ret));
		return;
	}
	rte_spinlock_unlock(&t->lock);
}

/* A learnt entry whose MAC the kernel changed (or forgot: kept). */
static void
refresh(struct uroce_port *p, struct net_neigh *s)
{
	struct net_neigh_table *t = p->neigh;
	struct rte_ether_addr mac;

	if (net_kernel_neigh(p->link.ifindex, &s->key, &mac) != 0)
		return;
	rte_spinlock_lock(&t->lock);
	if (s->state == NEIGH_REACHABLE && !rte_is_same_ether_addr(&mac,
								   &s->mac))
		net_neigh_set(t, s, NEIGH_REACHABLE, &mac);
	rte_spinlock_unlock(&t->lock);
}

static void *
kneigh_main(void *arg)
{
	struct uroce_port *p = arg;
	struct net_neigh_table *t = p->neigh;
	const struct timespec nap = { 0, NET_KNEIGH_POLL_US * 1000 };
	uint64_t hz = rte_get_tsc_hz(), next_refresh = 0, now;
	unsigned int i;

	while (!__atomic_load_n(&t->kstop, __ATOMIC_ACQUIRE)) {
		bool pending = __atomic_load_n(&t->pending,
					       __ATOMIC_RELAXED) != 0;
		bool due;

		now = rte_get_tsc_cycles();
		due = now >= next_refresh;
		if (due)
			next_refresh = now + hz / 1000 * NET_KNEIGH_REFRESH_MS;
		for (i = 0; (pending || due) && i < NET_NEIGH_SLOTS; i++) {
			struct net_neigh *s = &t->slot[i];

			if (!__atomic_load_n(&s->used, __ATOMIC_ACQUIRE))
				continue;
			if (s->state == NEIGH_INCOMPLETE)
				pending_poll(p, s, now);
			else if (due && s->state == NEIGH_REACHABLE)
				refresh(p, s);
		}
		nanosleep(&nap, NULL);
	}
	return NULL;
}

int
net_kneigh_start(struct uroce_port *p)
{
	char name[RTE_MAX_THREAD_NAME_LEN];
	int ret;

	snprintf(name, sizeof(name), "uroce-neigh%u", p->idx);
	/* A control thread: off the engine lcores, not busy. */
	ret = rte_ctrl_thread_create(&p->neigh->kthread, name, NULL,
				     kneigh_main, p);
	if (ret != 0)
		return ret > 0 ? -ret : ret;
	p->neigh->kernel = true;
	return 0;
}

void
net_kneigh_stop(struct uroce_port *p)
{
	if (p->neigh == NULL || !p->neigh->kernel)
		return;
	__atomic_store_n(&p->neigh->kstop, true, __ATOMIC_RELEASE);
	pthread_join(p->neigh->kthread, NULL);
	p->neigh->kernel = false;
}
