/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_NET_PRIV_H
#define UROCE_NET_PRIV_H

/*
 * Inside a port: per-queue counters (one writer each: the queue's lcore),
 * the neighbour table (neigh.c), the capture (pcap.c) and the fault
 * injection callbacks (fault.c).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_seqcount.h>
#include <rte_spinlock.h>

#include "uroce_glue.h"
#include "uroce_port.h"

extern int uroce_net_logtype;

#define NET_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, uroce_net_logtype, "uroce.net: " __VA_ARGS__)

#define NET_RX_DESC		512
#define NET_TX_DESC		512
#define NET_POOL_CACHE		256
#define NET_BURST		32
#define NET_TX_RETRIES		4
/* Frames a queue keeps while its ethdev queue is full (back-pressure). */
#define NET_TX_HOLD		256
/* A queue that takes nothing for this long (ms) drops what waits. */
#define NET_TX_STUCK_MS		100
/* Frames with the extra room a VLAN tag and the slack of some PMDs need. */
#define NET_FRAME_SLACK		(RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN + 64)
#define NET_DATAROOM_MIN	2048

/* ---------------------------------------------------------------------------
 * Counters: one writer per queue, read by stats_get on any thread.
 */
static inline void
net_ctr_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, *c + n, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------------
 * Frame classes (one 802.1Q tag at most).
 */
enum net_class {
	NET_CLASS_OTHER,
	NET_CLASS_ARP,
	NET_CLASS_ROCE,			/* IPv4/IPv6, UDP, dst port 4791 */
};

struct net_frame {
	enum net_class cls;
	bool vlan;
	bool ip6;			/* ROCE: over IPv6 (else IPv4) */
	uint16_t vid;
	uint16_t l3_off;		/* IP or ARP header */
	uint16_t l4_off;		/* UDP header (ROCE) */
	uint16_t l3_end;		/* end of the IP datagram (ROCE) */
};

/* Classify the contiguous first segment of m. */
void net_classify(const struct rte_mbuf *m, struct net_frame *f);

/* ---------------------------------------------------------------------------
 * Neighbours (neigh.c). Keys are GIDs (IPv4-mapped for IPv4); slots are
 * claimed once and never freed, so a key never moves: readers find it
 * without locks and read its state under the slot's seqcount. Writers
 * (learning, resolve starting a request, poll_ctrl) hold the table lock.
 */
#define NET_NEIGH_SLOTS		512	/* power of 2 */
#define NET_ARP_TRIES		5
#define NET_ARP_RETRY_MS	100

enum net_neigh_state {
	NEIGH_NONE,			/* key known, nothing asked */
	NEIGH_INCOMPLETE,		/* requests going out */
	NEIGH_REACHABLE,		/* learnt from ARP */
	NEIGH_STATIC,			/* [neigh]: never overwritten */
	NEIGH_FAILED,			/* no answer after NET_ARP_TRIES */
};

struct net_neigh {
	union uroce_gid key;		/* immutable once used is set */
	uint8_t used;			/* release-stored after key */
	rte_seqcount_t seq;
	uint8_t state;			/* enum net_neigh_state */
	uint8_t tries;			/* requests sent */
	struct rte_ether_addr mac;
	uint64_t due;			/* TSC of the next request; 0: now */
};

struct net_neigh_table {
	rte_spinlock_t lock;		/* writers */
	uint32_t pending;		/* INCOMPLETE entries (atomic) */
	uint64_t retry_tsc;		/* NET_ARP_RETRY_MS in TSC */
	struct net_neigh slot[NET_NEIGH_SLOTS];
};

/* ---------------------------------------------------------------------------
 * Fault injection (fault.c), per queue and direction.
 */
#define NET_FAULT_BURST_MAX	512	/* larger bursts pass untouched */

struct net_fault_q {
	uint64_t rng;			/* splitmix64 state */
	struct rte_mbuf *held;		/* reorder: goes out after the next */
	uint16_t cap;			/* tx: room in the array (0: nb) */
	uint16_t out;			/* tx: frames left in the array */
	bool bypass;			/* tx retries: no second fault */
	const struct uroce_config_fault *cfg;
	struct rte_mempool *pool;	/* for copies (dup, shared frames) */
	struct uroce_port_stats *st;	/* the queue's counters */
	const struct rte_eth_rxtx_callback *cb;
	struct rte_mbuf *in[NET_FAULT_BURST_MAX];
} __rte_cache_aligned;

struct net_fault {
	struct uroce_config_fault cfg;
	struct net_fault_q *rx;		/* [nb_queues] */
	struct net_fault_q *tx;
};

/* ---------------------------------------------------------------------------
 * Capture (pcap.c).
 */
struct net_pcap;

/* ---------------------------------------------------------------------------
 * The port.
 */
struct net_queue {
	struct uroce_port_stats st;	/* this queue's share */
	/* Frames the ethdev did not take yet, oldest first; only the queue's
	 * lcore touches them (port.c, "Back-pressure"). */
	uint16_t nb_wait;
	uint64_t stuck_since;	/* TSC the ethdev last took nothing, or 0 */
	struct rte_mbuf *wait[NET_TX_HOLD];
} __rte_cache_aligned;

struct uroce_port {
	unsigned int idx;		/* in the config: device uroce<idx> */
	uint16_t port_id;
	uint16_t nb_queues;
	uint16_t mtu;
	bool has_vlan;
	uint16_t vlan;
	bool has_ip4;
	rte_be32_t ip4;
	bool started;
	bool tx_extbuf;
	struct rte_ether_addr mac;
	struct rte_mempool *pool;
	struct uroce_glue_link link;
	const struct uroce_config_port *cfg;
	unsigned int gid_cnt;
	union uroce_gid gid[1 + UROCE_CONFIG_MAX_IP6];
	struct net_queue *q;		/* [nb_queues] */
	struct net_pcap *pcap;		/* NULL: no capture */
	struct net_fault *fault;	/* NULL: no injection */
	struct net_neigh_table *neigh;
	uroce_port_raw_fn raw_fn;	/* NULL: other frames are dropped */
	void *raw_arg;
};

/* neigh.c */
int net_neigh_init(struct uroce_port *p, const struct uroce_config *cfg);
void net_neigh_free(struct uroce_port *p);
/* Handle an ARP frame received on queue q; consumes m. */
void net_arp_input(struct uroce_port *p, uint16_t q, struct rte_mbuf *m,
		   const struct net_frame *f);
/* A gratuitous ARP request for our address on queue 0. */
void net_arp_announce(struct uroce_port *p);

/* pcap.c */
int net_pcap_open(struct uroce_port *p, const char *path, char *err,
		  size_t err_len);
/* Capture the RoCEv2 frames among pkts (dir: RTE_PCAPNG_DIRECTION_*). */
void net_pcap_capture(struct uroce_port *p, uint16_t q,
		      struct rte_mbuf *const *pkts, uint16_t n, int dir);
void net_pcap_close(struct uroce_port *p);

/* fault.c */
int net_fault_start(struct uroce_port *p, char *err, size_t err_len);
void net_fault_stop(struct uroce_port *p);

#endif /* UROCE_NET_PRIV_H */
