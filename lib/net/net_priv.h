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

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_flow.h>
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
/* Buffers net_af_xdp (22.11) keeps in each queue's fill ring. */
#define NET_XDP_FILL		2048

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
	NET_CLASS_NDP,			/* ICMPv6 neighbour solicitation or
					 * advertisement (RFC 4861 4.3, 4.4) */
};

struct net_frame {
	enum net_class cls;
	bool vlan;
	uint16_t vid;
	uint16_t l3_off;		/* IP or ARP header */
	uint16_t l4_off;		/* UDP (ROCE) or ICMPv6 (NDP) header */
	uint16_t l3_end;		/* end of the IP datagram (ROCE, NDP) */
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
	bool kernel;			/* filled by the kernel thread */
	bool kstop;			/* asks that thread to end */
	pthread_t kthread;
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
	uint16_t cap;			/* tx: room in the array (0: not
					 * uroce_port_tx(), no faults) */
	uint16_t out;			/* tx: frames left in the array */
	bool bypass;			/* tx retries: no second fault */
	bool on;			/* a rate is not 0 */
	bool rx;			/* the receive direction (ce marks) */
	uint32_t seq;			/* the setting's count it took up */
	struct uroce_config_fault cfg;	/* its copy of the rates and seed */
	uint64_t mix;			/* port, queue, direction: seed ^ mix */
	const struct net_fault *fl;
	struct rte_mempool *pool;	/* for copies (dup, shared frames) */
	struct uroce_port_stats *st;	/* the queue's counters */
	const struct rte_eth_rxtx_callback *cb;
	struct rte_mbuf *in[NET_FAULT_BURST_MAX];
} __rte_cache_aligned;

/* The rates and seed change at run time (uroce_port_set_fault()): one
 * writer at a time, under a sequence count; each queue takes up a new
 * setting at its next burst, reseeded. */
struct net_fault {
	struct uroce_config_fault cfg;
	rte_seqcount_t seq;
	struct net_fault_q *rx;		/* [nb_queues] */
	struct net_fault_q *tx;
};

/* ---------------------------------------------------------------------------
 * Capture (pcap.c).
 */
struct net_pcap;

/* ---------------------------------------------------------------------------
 * The kernel exception path (exc.c) and rte_flow steering (steer.c).
 */
#define NET_FLOW_MAX	(2 + UROCE_CONFIG_MAX_IP6 + 3)	/* GIDs + ARP, ND,
							 * default */

/* The rte_flow calls steer.c makes: rte_flow's own, or a test's mock. */
struct net_flow_ops {
	struct rte_flow *(*create)(uint16_t port_id,
				   const struct rte_flow_attr *attr,
				   const struct rte_flow_item pattern[],
				   const struct rte_flow_action actions[],
				   struct rte_flow_error *error);
	int (*destroy)(uint16_t port_id, struct rte_flow *flow,
		       struct rte_flow_error *error);
};

struct net_exc {
	struct uroce_glue_link link;	/* the kernel's interface */
	uint16_t port_id;
	uint16_t nb_queues;		/* its queue pairs (= the port's) */
	bool started;
};

/* ---------------------------------------------------------------------------
 * The port.
 */
struct net_queue {
	struct uroce_port_stats st;	/* this queue's share */
	/* Frames the ethdev did not take yet, oldest first; only the queue's
	 * lcore touches them (port.c, "Back-pressure"). */
	uint16_t nb_wait;
	bool dropping;		/* stuck: what the ethdev refuses is freed */
	uint64_t stuck_since;	/* TSC the ethdev last took nothing, or 0 */
	struct rte_mbuf *wait[NET_TX_HOLD];
} __rte_cache_aligned;

struct uroce_port {
	unsigned int idx;		/* in the config: device uroce<idx> */
	uint16_t port_id;
	uint16_t nb_queues;
	uint16_t nb_hw_queues;		/* of the ethdev: + exc_q with exc */
	uint16_t mtu;
	bool has_vlan;
	uint16_t vlan;
	bool has_ip4;
	rte_be32_t ip4;
	bool started;
	/* A memif client whose server was not listening at the open: the
	 * start is tried again by uroce_port_link_poll(). */
	bool start_later;
	/* Gone for good (link.c): set by the removal callback or the first
	 * reader of the link to find the kernel interface gone. */
	bool gone;
	bool rmv_cb;		/* the removal callback is registered */
	bool tx_extbuf;
	bool tx_ip_cksum;	/* the PMD computes IPv4 header checksums */
	bool memif_guard;	/* memif: bursts inside net_memif_enter/leave */
	struct rte_ether_addr mac;
	struct rte_mempool *pool;
	struct uroce_glue_link link;
	const struct uroce_config_port *cfg;
	unsigned int gid_cnt;
	/* IPv4-mapped, [port] ip6, the link-local address from the MAC. */
	union uroce_gid gid[2 + UROCE_CONFIG_MAX_IP6];
	uint8_t ip6_cnt;		/* [port] ip6, or the kernel's */
	uint8_t ip6[UROCE_CONFIG_MAX_IP6][16];
	struct net_queue *q;		/* [nb_queues] */
	struct net_pcap *pcap;		/* NULL: no capture */
	struct net_fault *fault;	/* NULL: no injection */
	struct net_neigh_table *neigh;
	uroce_port_raw_fn raw_fn;	/* NULL: other frames are dropped */
	void *raw_arg;
	/* The kernel exception path (NULL: none). With it the ethdev has one
	 * rx/tx queue more when the device has it and steer is not soft,
	 * exc_q (= nb_queues), the default rule's target when steer_flow
	 * (rte_flow rules took); else every frame comes to
	 * the stack's queues and what is not the stack's goes to the kernel
	 * from there (software dispatch). */
	struct net_exc *exc;
	bool exc_on;			/* an exception interface is set */
	uint16_t exc_q;
	bool steer_flow;
	unsigned int nb_flows;
	struct rte_flow *flows[NET_FLOW_MAX];
};

/* ---------------------------------------------------------------------------
 * memif_guard.c: no memif region is unmapped while a burst on a memif port
 * is in flight (see there). A thread's slot: seq odd while it is inside a
 * burst; the shared one (threads beyond the slots) counts bursts by 2.
 */
struct net_memif_slot {
	uint64_t seq;
	bool used;
	bool shared;
} __rte_cache_aligned;

extern __thread struct net_memif_slot *net_memif_self;
extern bool net_memif_fence;	/* no membarrier: pollers fence */

/* Hook librte_net_memif.so's munmap, once a process; whether it is. */
bool net_memif_guard_install(void);
/* munmaps of the PMD that waited for a burst. */
uint64_t net_memif_unmap_waits(void);
struct net_memif_slot *net_memif_slot_get(void);
void net_memif_shared_enter(struct net_memif_slot *s);
void net_memif_shared_leave(struct net_memif_slot *s);

static inline struct net_memif_slot *
net_memif_enter(void)
{
	struct net_memif_slot *s = net_memif_self;

	if (unlikely(s == NULL))
		s = net_memif_slot_get();
	if (unlikely(s->shared)) {
		net_memif_shared_enter(s);
		return s;
	}
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELAXED);
	/* Our odd seq before the PMD's flags: the unmapping thread's
	 * membarrier() orders the rest, or this fence. */
	if (unlikely(net_memif_fence))
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	else
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return s;
}

static inline void
net_memif_leave(struct net_memif_slot *s)
{
	if (unlikely(s->shared))
		net_memif_shared_leave(s);
	else
		__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);
}

/* rte_eth_{rx,tx}_burst() on p, inside the unmap guard on a memif port. */
static inline uint16_t
net_burst(const struct uroce_port *p, uint16_t q, struct rte_mbuf **m,
	  uint16_t n, bool tx)
{
	struct net_memif_slot *g;
	uint16_t done;

	if (likely(!p->memif_guard))
		return tx ? rte_eth_tx_burst(p->port_id, q, m, n) :
			    rte_eth_rx_burst(p->port_id, q, m, n);
	g = net_memif_enter();
	done = tx ? rte_eth_tx_burst(p->port_id, q, m, n) :
		    rte_eth_rx_burst(p->port_id, q, m, n);
	net_memif_leave(g);
	return done;
}

/* neigh.c */
int net_neigh_init(struct uroce_port *p, const struct uroce_config *cfg);
/* Change a slot's state (and MAC when mac != NULL), under t->lock. */
void net_neigh_set(struct net_neigh_table *t, struct net_neigh *s,
		   uint8_t state, const struct rte_ether_addr *mac);
void net_neigh_free(struct uroce_port *p);
/* Handle an ARP frame received on queue q; consumes m. */
void net_arp_input(struct uroce_port *p, uint16_t q, struct rte_mbuf *m,
		   const struct net_frame *f);
/* A gratuitous ARP request for our address on queue 0. */
void net_arp_announce(struct uroce_port *p);
/* Whether gid is one of the port's GIDs. */
bool net_is_own_gid(const struct uroce_port *p, const union uroce_gid *gid);
/* Learn key -> mac (see neigh.c); create: a new entry too. */
void net_neigh_learn(struct uroce_port *p, const union uroce_gid *key,
		     const struct rte_ether_addr *mac, bool create);
/* Append a control frame's L2 header (tagged on a VLAN port) and l3_len
 * zeroed bytes to m; @return the L3 header, NULL when m has no room. */
void *net_ctrl_frame(struct uroce_port *p, struct rte_mbuf *m,
		     const struct rte_ether_addr *dst, uint16_t ether_type,
		     uint16_t l3_len);

/* ndp.c: IPv6 neighbour discovery (RFC 4861). */
/* Whether the ICMPv6 message at f->l4_off is an NS or NA. */
bool net_ndp_is_nd(const uint8_t *d, uint32_t len, uint16_t l4_off);
/* Handle an NS/NA frame received on queue q; consumes m. */
void net_ndp_input(struct uroce_port *p, uint16_t q, struct rte_mbuf *m,
		   const struct net_frame *f);
/* A neighbour solicitation for target on queue q; 0 or -ENOBUFS. */
int net_ndp_solicit(struct uroce_port *p, uint16_t q,
		    const union uroce_gid *target);

/* port.c: set up n rx/tx queue pairs (rx buffers from pool); on failure
 * *bad is the queue. */
int net_queue_pairs(uint16_t port_id, uint16_t n, struct rte_mempool *pool,
		    uint16_t *bad);

/* exc.c */
/* The exception interface's dev string for the port ("" when none). */
const char *net_exc_dev(const struct uroce_port *p, char *buf, size_t len);
/* Bring up the exception interface dev (after the port's ethdev: its MAC
 * and pool); 0 or a negative errno with err. */
int net_exc_open(struct uroce_port *p, const char *dev, char *err,
		 size_t err_len);
void net_exc_close(struct uroce_port *p);
/* Give m (the wire's) to the kernel on queue q; consumes m. */
void net_exc_to_kernel(struct uroce_port *p, uint16_t q, struct rte_mbuf *m);
/* A copy of m to the kernel (ARP, neighbour discovery: both need it). */
void net_exc_copy(struct uroce_port *p, uint16_t q, const struct rte_mbuf *m);
/* Queue 0's lcore: the exception rx queue to the kernel, the kernel's
 * frames to the wire. */
void net_exc_poll(struct uroce_port *p);

/* steer.c */
/* Install the rules (RoCEv2 to our addresses, ARP and neighbour discovery
 * to the stack's queues, the rest to exc_q); 0: p->steer_flow, or a
 * negative errno (nothing installed) with why. */
int net_steer_start(struct uroce_port *p, char *why, size_t len);
void net_steer_stop(struct uroce_port *p);
/* For tests: the rte_flow calls (NULL: rte_flow's). */
void net_steer_set_ops(const struct net_flow_ops *ops);

/* neigh_kernel.c: the thread that fills the table from the kernel's. */
int net_kneigh_start(struct uroce_port *p);
void net_kneigh_stop(struct uroce_port *p);

/* kernel.c: rtnetlink, control path only. */
struct net_kernel_addrs {
	bool has_ip4;
	rte_be32_t ip4;			/* the interface's first IPv4 */
	unsigned int ip6_cnt;
	uint8_t ip6[UROCE_CONFIG_MAX_IP6][16];
};
/* The addresses of interface ifindex; 0 or a negative errno. */
int net_kernel_addrs(unsigned int ifindex, struct net_kernel_addrs *out);
/* The kernel's MAC for gid on ifindex: 0; -EAGAIN (resolving or stale
 * without a MAC), -ENOENT (no entry), -EHOSTUNREACH (FAILED), or errno. */
int net_kernel_neigh(unsigned int ifindex, const union uroce_gid *gid,
		     struct rte_ether_addr *mac);
/* Make the kernel resolve gid on the interface (one UDP datagram). */
int net_kernel_neigh_kick(unsigned int ifindex, const char *ifname,
			  const union uroce_gid *gid);
/* The interface's MTU, or a negative errno. */
int net_kernel_mtu(const char *ifname);
/* Interface ifindex: 1 up and running, 0 not, -ENODEV no such interface,
 * or a negative errno. */
int net_kernel_link(unsigned int ifindex);

/* link.c: the ethdev's removal callback, at open and close. */
void net_link_watch_start(struct uroce_port *p);
void net_link_watch_stop(struct uroce_port *p);

/* pcap.c */
int net_pcap_open(struct uroce_port *p, const char *path, char *err,
		  size_t err_len);
/* Capture the RoCEv2 frames among pkts (dir: RTE_PCAPNG_DIRECTION_*). */
void net_pcap_capture(struct uroce_port *p, uint16_t q,
		      struct rte_mbuf *const *pkts, uint16_t n, int dir);
void net_pcap_close(struct uroce_port *p);

/* fault.c */
int net_fault_start(struct uroce_port *p, const struct uroce_config_fault *f,
		    char *err, size_t err_len);
void net_fault_stop(struct uroce_port *p);

/* Queue q's tx injector, or NULL: p->fault is published (release) once
 * its callbacks are in, maybe while the queues run. */
static inline struct net_fault_q *
net_fault_txq(const struct uroce_port *p, uint16_t q)
{
	struct net_fault *fl = __atomic_load_n(&p->fault, __ATOMIC_ACQUIRE);

	return fl != NULL ? &fl->tx[q] : NULL;
}

#endif /* UROCE_NET_PRIV_H */
