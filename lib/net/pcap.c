/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * [port] pcap = FILE: every RoCEv2 frame the port sends (as the stack gave
 * it, before fault injection) and receives (after it), in pcapng through
 * rte_pcapng. Each lcore copies its frames into capture mbufs on its own
 * (rte_pcapng_copy: the pool is thread-safe) and writes them under the
 * capture's lock, one writev per burst, so blocks never interleave.
 *
 * DPDK 22.11's rte_pcapng_fdopen() writes one interface block per ethdev
 * that exists at that moment and maps port ids to them: the file is opened
 * after our ethdev exists.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_pcapng.h>
#include <rte_version.h>

#include "net_priv.h"

#define PCAP_POOL_CACHE		32

struct net_pcap {
	rte_pcapng_t *w;
	rte_spinlock_t lock;
	struct rte_mempool *pool;
	uint64_t start_ns;
};

static uint64_t
wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static int
pcap_pool(struct uroce_port *p, struct net_pcap *c)
{
	static uint32_t seq;
	char name[RTE_MEMPOOL_NAMESIZE];
	uint32_t frame = (uint32_t)p->mtu + NET_FRAME_SLACK;
	/* Copies live only inside one capture call per lcore. */
	uint32_t n = p->nb_queues * 2 * (NET_BURST + PCAP_POOL_CACHE) + 256;

	snprintf(name, sizeof(name), "uroce_pc%u",
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	c->pool = rte_pktmbuf_pool_create(name, rte_align32pow2(n) - 1,
					  PCAP_POOL_CACHE, 0,
					  (uint16_t)rte_pcapng_mbuf_size(frame),
					  (int)rte_socket_id());
	return c->pool != NULL ? 0 : -rte_errno;
}

int
net_pcap_open(struct uroce_port *p, const char *path, char *err,
	      size_t err_len)
{
	struct net_pcap *c;
	char app[64];
	int fd, ret;

	c = rte_zmalloc("uroce_pcap", sizeof(*c), RTE_CACHE_LINE_SIZE);
	if (c == NULL)
		return -ENOMEM;
	rte_spinlock_init(&c->lock);
	ret = pcap_pool(p, c);
	if (ret != 0) {
		snprintf(err, err_len, "[port] pcap = %s: capture mempool: %s",
			 path, strerror(-ret));
		rte_free(c);
		return ret;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, err_len, "[port] pcap = %s: %s", path,
			 strerror(errno));
		goto fail;
	}
	snprintf(app, sizeof(app), "uroce (%s)", rte_version());
	c->w = rte_pcapng_fdopen(fd, "Linux", NULL, app, NULL);
	if (c->w == NULL) {
		ret = rte_errno != 0 ? -rte_errno : -EIO;
		snprintf(err, err_len, "[port] pcap = %s: pcapng header: %s",
			 path, rte_strerror(rte_errno));
		close(fd);
		goto fail;
	}
	c->start_ns = wall_ns();
	p->pcap = c;
	return 0;
fail:
	NET_LOG(ERR, "%s\n", err);
	rte_mempool_free(c->pool);
	rte_free(c);
	return ret;
}

static void
pcap_write(struct uroce_port *p, uint16_t q, struct rte_mbuf **mc,
	   uint16_t k)
{
	struct net_pcap *c = p->pcap;
	ssize_t ret;

	rte_spinlock_lock(&c->lock);
	ret = rte_pcapng_write_packets(c->w, mc, k);
	rte_spinlock_unlock(&c->lock);
	/* 22.11 writes and leaves the copies to the caller. */
	rte_pktmbuf_free_bulk(mc, k);
	net_ctr_add(ret < 0 ? &p->q[q].st.pcap_lost :
		    &p->q[q].st.pcap_written, k);
}

void
net_pcap_capture(struct uroce_port *p, uint16_t q,
		 struct rte_mbuf *const *pkts, uint16_t n, int dir)
{
	struct rte_mbuf *mc[NET_BURST];
	uint64_t tsc = rte_get_tsc_cycles();
	struct net_frame f;
	uint16_t i, k = 0;

	for (i = 0; i < n; i++) {
		net_classify(pkts[i], &f);
		if (f.cls != NET_CLASS_ROCE)
			continue;
		mc[k] = rte_pcapng_copy(p->port_id, q, pkts[i], p->pcap->pool,
					UINT32_MAX, tsc,
					(enum rte_pcapng_direction)dir);
		if (mc[k] == NULL) {
			net_ctr_add(&p->q[q].st.pcap_lost, 1);
			continue;
		}
		if (++k == NET_BURST) {
			pcap_write(p, q, mc, k);
			k = 0;
		}
	}
	if (k > 0)
		pcap_write(p, q, mc, k);
}

void
net_pcap_close(struct uroce_port *p)
{
	struct net_pcap *c = p->pcap;
	struct uroce_port_stats st;

	if (c == NULL)
		return;
	uroce_port_stats_get(p, &st);
	rte_pcapng_write_stats(c->w, p->port_id, NULL, c->start_ns, wall_ns(),
			       st.pcap_written, st.pcap_lost);
	rte_pcapng_close(c->w);		/* closes the file */
	rte_mempool_free(c->pool);
	rte_free(c);
	p->pcap = NULL;
}
