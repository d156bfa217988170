/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Neighbours and ARP (RFC 826); IPv6 neighbour discovery is in ndp.c.
 * The table is open addressing over a fixed array; a slot, once given a
 * key, keeps it for the port's life, so a reader finds a key without
 * locks and reads the slot's state and MAC under its seqcount. Writers
 * (learning, resolve starting a request, poll_ctrl) hold the table's
 * spinlock. Entries never expire for now.
 */

#include <errno.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "net_priv.h"

static const char *const neigh_state_names[] = {
	[NEIGH_NONE] = "NONE",
	[NEIGH_INCOMPLETE] = "INCOMPLETE",
	[NEIGH_REACHABLE] = "REACHABLE",
	[NEIGH_STATIC] = "STATIC",
	[NEIGH_FAILED] = "FAILED",
};

/* ---------------------------------------------------------------------------
 * The table.
 */
/* Word by word: a GID is only 4-byte aligned, and rte_hash_crc() reads
 * 8-byte words (UBSan: misaligned load). */
static uint32_t
slot_hash(const union uroce_gid *key)
{
	uint32_t h = 0;
	unsigned int i;

	for (i = 0; i < RTE_DIM(key->dw); i++)
		h = rte_hash_crc_4byte(key->dw[i], h);
	return h;
}

/* The slot holding key, or NULL. Lock-free. */
static struct net_neigh *
slot_find(struct net_neigh_table *t, const union uroce_gid *key)
{
	uint32_t h = slot_hash(key), i;

	for (i = 0; i < NET_NEIGH_SLOTS; i++) {
		struct net_neigh *s = &t->slot[(h + i) & (NET_NEIGH_SLOTS - 1)];

		if (!__atomic_load_n(&s->used, __ATOMIC_ACQUIRE))
			return NULL;
		if (memcmp(s->key.raw, key->raw, sizeof(key->raw)) == 0)
			return s;
	}
	return NULL;
}

/* The slot of key, claimed (state NONE) if new. Under t->lock. */
static struct net_neigh *
slot_get(struct net_neigh_table *t, const union uroce_gid *key)
{
	uint32_t h = slot_hash(key), i;

	for (i = 0; i < NET_NEIGH_SLOTS; i++) {
		struct net_neigh *s = &t->slot[(h + i) & (NET_NEIGH_SLOTS - 1)];

		if (!s->used) {
			s->key = *key;
			s->state = NEIGH_NONE;
			__atomic_store_n(&s->used, 1, __ATOMIC_RELEASE);
			return s;
		}
		if (memcmp(s->key.raw, key->raw, sizeof(key->raw)) == 0)
			return s;
	}
	return NULL;
}

/* A consistent copy of the slot's state and MAC. */
static uint8_t
slot_read(const struct net_neigh *s, struct rte_ether_addr *mac)
{
	uint32_t sn;
	uint8_t state;

	do {
		sn = rte_seqcount_read_begin(&s->seq);
		state = s->state;
		*mac = s->mac;
	} while (rte_seqcount_read_retry(&s->seq, sn));
	return state;
}

/* Change the slot's state (and MAC when mac != NULL). Under t->lock. */
void
net_neigh_set(struct net_neigh_table *t, struct net_neigh *s, uint8_t state,
	 const struct rte_ether_addr *mac)
{
	if (s->state == NEIGH_INCOMPLETE && state != NEIGH_INCOMPLETE)
		__atomic_fetch_sub(&t->pending, 1, __ATOMIC_RELAXED);
	else if (s->state != NEIGH_INCOMPLETE && state == NEIGH_INCOMPLETE)
		__atomic_fetch_add(&t->pending, 1, __ATOMIC_RELAXED);
	rte_seqcount_write_begin(&s->seq);
	s->state = state;
	if (mac != NULL)
		s->mac = *mac;
	rte_seqcount_write_end(&s->seq);
}

int
net_neigh_init(struct uroce_port *p, const struct uroce_config *cfg)
{
	struct net_neigh_table *t;
	union uroce_gid key;
	unsigned int i;

	t = rte_zmalloc("uroce_neigh", sizeof(*t), RTE_CACHE_LINE_SIZE);
	if (t == NULL)
		return -ENOMEM;
	rte_spinlock_init(&t->lock);
	t->retry_tsc = rte_get_tsc_hz() / 1000 * NET_ARP_RETRY_MS;
	for (i = 0; i < cfg->neigh_cnt; i++) {
		const struct uroce_config_neigh *n = &cfg->neigh[i];
		struct net_neigh *s;

		if (n->is_ip6)
			memcpy(key.raw, n->ip6, sizeof(key.raw));
		else
			uroce_gid_from_v4(&key, n->ip4);
		s = slot_get(t, &key);
		if (s == NULL) {
			rte_free(t);
			return -ENOSPC;
		}
		net_neigh_set(t, s, NEIGH_STATIC, &n->mac);
	}
	p->neigh = t;
	return 0;
}

void
net_neigh_free(struct uroce_port *p)
{
	rte_free(p->neigh);
	p->neigh = NULL;
}

/* ---------------------------------------------------------------------------
 * Resolution.
 */
bool
net_is_own_gid(const struct uroce_port *p, const union uroce_gid *gid)
{
	uint64_t g[2], o[2];
	unsigned int i;

	/* Two 8-byte compares, not a memcmp() call: every received frame
	 * asks (port.c roce_ours()). */
	memcpy(g, gid->raw, sizeof(g));
	for (i = 0; i < p->gid_cnt; i++) {
		memcpy(o, p->gid[i].raw, sizeof(o));
		if (((g[0] ^ o[0]) | (g[1] ^ o[1])) == 0)
			return true;
	}
	return false;
}

/* Slow path: start (or report) a resolution under the lock. */
static int
resolve_locked(struct uroce_port *p, const union uroce_gid *gid,
	       struct rte_ether_addr *mac)
{
	struct net_neigh_table *t = p->neigh;
	struct net_neigh *s = slot_get(t, gid);

	if (s == NULL)
		return -ENOSPC;
	switch (s->state) {
	case NEIGH_REACHABLE:
	case NEIGH_STATIC:
		*mac = s->mac;
		return 0;
	case NEIGH_INCOMPLETE:
		return -EAGAIN;
	case NEIGH_FAILED:
		/* Reported once; the next call asks again. */
		net_neigh_set(t, s, NEIGH_NONE, NULL);
		return -EHOSTUNREACH;
	default:
		break;
	}
	s->tries = 0;
	s->due = 0;
	net_neigh_set(t, s, NEIGH_INCOMPLETE, NULL);
	return -EAGAIN;
}

int
uroce_port_resolve(struct uroce_port *p, const union uroce_gid *gid,
		   struct rte_ether_addr *mac)
{
	struct net_neigh_table *t = p->neigh;
	struct net_neigh *s;
	int ret;

	if (net_is_own_gid(p, gid)) {
		*mac = p->mac;
		return 0;
	}
	s = slot_find(t, gid);
	if (s != NULL) {
		uint8_t state = slot_read(s, mac);

		if (state == NEIGH_REACHABLE || state == NEIGH_STATIC)
			return 0;
		if (state == NEIGH_INCOMPLETE)
			return -EAGAIN;
	}
	/* The kernel's table, or our own: ARP needs our IPv4 address, neighbour
	 * discovery an IPv6 one. */
	if (!t->kernel && (uroce_gid_is_v4(gid) ? !p->has_ip4 :
			   p->gid_cnt <= (p->has_ip4 ? 1u : 0u)))
		return -EHOSTUNREACH;
	rte_spinlock_lock(&t->lock);
	ret = resolve_locked(p, gid, mac);
	rte_spinlock_unlock(&t->lock);
	return ret;
}

/* ---------------------------------------------------------------------------
 * ARP frames.
 */

/* A control frame the port sends (ARP, neighbour discovery): its Ethernet
 * [+ 802.1Q, PCP 0] header and l3_len zeroed bytes after it, padded to the
 * Ethernet minimum. @return the L3 header, or NULL (no room). */
void *
net_ctrl_frame(struct uroce_port *p, struct rte_mbuf *m,
	       const struct rte_ether_addr *dst, uint16_t ether_type,
	       uint16_t l3_len)
{
	uint16_t l2 = RTE_ETHER_HDR_LEN + (p->has_vlan ? RTE_VLAN_HLEN : 0);
	uint16_t len = RTE_MAX(l2 + l3_len,
			       RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN);
	struct rte_ether_hdr *eh;
	uint8_t *d;

	d = (uint8_t *)rte_pktmbuf_append(m, len);
	if (d == NULL)
		return NULL;
	memset(d, 0, len);
	eh = (struct rte_ether_hdr *)d;
	eh->dst_addr = *dst;
	eh->src_addr = p->mac;
	if (p->has_vlan) {
		struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(eh + 1);

		eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_VLAN);
		vh->vlan_tci = rte_cpu_to_be_16(p->vlan);
		vh->eth_proto = rte_cpu_to_be_16(ether_type);
	} else {
		eh->ether_type = rte_cpu_to_be_16(ether_type);
	}
	return d + l2;
}

/* A request for tip from our address (gratuitous when tip is ours). */
static int
arp_request(struct uroce_port *p, uint16_t q, rte_be32_t tip)
{
	static const struct rte_ether_addr bcast = {
		.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
	struct rte_arp_hdr *a;

	if (m == NULL)
		return -ENOBUFS;
	a = net_ctrl_frame(p, m, &bcast, RTE_ETHER_TYPE_ARP, sizeof(*a));
	if (a == NULL) {
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	a->arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = RTE_ETHER_ADDR_LEN;
	a->arp_plen = sizeof(rte_be32_t);
	a->arp_opcode = RTE_BE16(RTE_ARP_OP_REQUEST);
	a->arp_data.arp_sha = p->mac;
	a->arp_data.arp_sip = p->ip4;
	a->arp_data.arp_tip = tip;
	if (uroce_port_tx(p, q, &m, 1) != 1)
		return -ENOBUFS;
	net_ctr_add(&p->q[q].st.arp_tx, 1);
	return 0;
}

void
net_arp_announce(struct uroce_port *p)
{
	if (p->has_ip4 && !p->neigh->kernel)
		arp_request(p, 0, p->ip4);
}

/*
 * Remember key -> mac: always for a known non-static entry (RFC 826's
 * "merge" step, RFC 4861 7.2.5), a new entry only when create (the frame
 * was for us).
 */
void
net_neigh_learn(struct uroce_port *p, const union uroce_gid *key,
		const struct rte_ether_addr *mac, bool create)
{
	struct net_neigh_table *t = p->neigh;
	struct rte_ether_addr old;
	struct net_neigh *s;
	uint8_t state;

	s = slot_find(t, key);
	if (s == NULL && !create)
		return;
	if (s != NULL) {
		state = slot_read(s, &old);
		if (state == NEIGH_STATIC || (state == NEIGH_REACHABLE &&
		    rte_is_same_ether_addr(&old, mac)))
			return;
	}
	rte_spinlock_lock(&t->lock);
	s = slot_get(t, key);
	if (s != NULL && s->state != NEIGH_STATIC) {
		NET_LOG(DEBUG, "uroce%u: neighbour %s -> REACHABLE\n", p->idx,
			neigh_state_names[s->state]);
		net_neigh_set(t, s, NEIGH_REACHABLE, mac);
	}
	rte_spinlock_unlock(&t->lock);
}

/* Turn the request in m into our reply and send it back on queue q. */
static void
arp_reply(struct uroce_port *p, uint16_t q, struct rte_mbuf *m,
	  struct rte_arp_hdr *a)
{
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);

	eh->dst_addr = a->arp_data.arp_sha;
	eh->src_addr = p->mac;
	a->arp_opcode = RTE_BE16(RTE_ARP_OP_REPLY);
	a->arp_data.arp_tha = a->arp_data.arp_sha;
	a->arp_data.arp_tip = a->arp_data.arp_sip;
	a->arp_data.arp_sha = p->mac;
	a->arp_data.arp_sip = p->ip4;
	if (uroce_port_tx(p, q, &m, 1) == 1)
		net_ctr_add(&p->q[q].st.arp_tx, 1);
}

void
net_arp_input(struct uroce_port *p, uint16_t q, struct rte_mbuf *m,
	      const struct net_frame *f)
{
	struct rte_arp_hdr *a = rte_pktmbuf_mtod_offset(m, struct rte_arp_hdr *,
							f->l3_off);
	uint16_t op = rte_be_to_cpu_16(a->arp_opcode);
	union uroce_gid sip;
	bool for_us;

	net_ctr_add(&p->q[q].st.arp_rx, 1);
	/* The kernel answers ARP on an interface it shares with us. */
	if (p->neigh->kernel || !p->has_ip4 || a->arp_hardware != RTE_BE16(RTE_ARP_HRD_ETHER) ||
	    a->arp_protocol != RTE_BE16(RTE_ETHER_TYPE_IPV4) ||
	    a->arp_hlen != RTE_ETHER_ADDR_LEN || a->arp_plen != 4 ||
	    (op != RTE_ARP_OP_REQUEST && op != RTE_ARP_OP_REPLY)) {
		rte_pktmbuf_free(m);
		return;
	}
	for_us = a->arp_data.arp_tip == p->ip4;
	/* 0.0.0.0 is a probe (RFC 5227); our own address is a conflict or
	 * our own announcement looped back: learn neither. */
	if (a->arp_data.arp_sip != 0 && a->arp_data.arp_sip != p->ip4 &&
	    !rte_is_multicast_ether_addr(&a->arp_data.arp_sha)) {
		uroce_gid_from_v4(&sip, a->arp_data.arp_sip);
		net_neigh_learn(p, &sip, &a->arp_data.arp_sha, for_us);
	}
	if (op == RTE_ARP_OP_REQUEST && for_us &&
	    a->arp_data.arp_sip != p->ip4) {
		arp_reply(p, q, m, a);
		return;
	}
	rte_pktmbuf_free(m);
}

/* ---------------------------------------------------------------------------
 * Retries.
 */
static void
slot_poll(struct uroce_port *p, uint16_t q, struct net_neigh *s, uint64_t now)
{
	struct net_neigh_table *t = p->neigh;

	if (s->state != NEIGH_INCOMPLETE || now < s->due)
		return;
	if (s->tries >= NET_ARP_TRIES) {
		NET_LOG(DEBUG, "uroce%u: neighbour INCOMPLETE -> FAILED after "
			"%u requests\n", p->idx, s->tries);
		net_neigh_set(t, s, NEIGH_FAILED, NULL);
		return;
	}
	/* A request that finds no buffer is tried again at the next poll. */
	if ((uroce_gid_is_v4(&s->key) ?
	     arp_request(p, q, uroce_gid_to_v4(&s->key)) :
	     net_ndp_solicit(p, q, &s->key)) != 0)
		return;
	s->tries++;
	s->due = now + t->retry_tsc;
}

bool
uroce_port_ctrl_pending(const struct uroce_port *p)
{
	return __atomic_load_n(&p->neigh->pending, __ATOMIC_RELAXED) != 0;
}

void
uroce_port_poll_ctrl(struct uroce_port *p, uint16_t q, uint64_t now)
{
	struct net_neigh_table *t = p->neigh;
	unsigned int i;

	if (t->kernel || __atomic_load_n(&t->pending, __ATOMIC_RELAXED) == 0)
		return;
	if (!rte_spinlock_trylock(&t->lock))
		return;
	for (i = 0; i < NET_NEIGH_SLOTS; i++) {
		if (t->slot[i].used)
			slot_poll(p, q, &t->slot[i], now);
	}
	rte_spinlock_unlock(&t->lock);
}
