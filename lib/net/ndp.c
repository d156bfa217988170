/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * IPv6 neighbour discovery (RFC 4861), the part a host needs to reach its
 * on-link neighbours and be reached: neighbour solicitations (NS) for the
 * GIDs we resolve, sent to the target's solicited-node multicast address,
 * and advertisements (NA) answering solicitations for our own GIDs. The
 * table is neigh.c's (keys are GIDs), with its retries. Not done: duplicate
 * address detection (our addresses are configured or derived from the
 * MAC), router discovery (one link, no routers), unsolicited NAs.
 */

#include <errno.h>
#include <string.h>

#include <rte_ip.h>

#include "net_priv.h"

#define ND_HOP_LIMIT		255	/* RFC 4861 7.1.1: proves on-link */
#define ND_TYPE_NS		135
#define ND_TYPE_NA		136
#define ND_OPT_SLLA		1	/* source link-layer address */
#define ND_OPT_TLLA		2	/* target link-layer address */
#define ND_NA_SOLICITED		0x40	/* first flags byte of an NA */
#define ND_NA_OVERRIDE		0x20

/* ICMPv6 NS and NA share this layout (RFC 4861 4.3, 4.4); the options
 * follow in units of 8 bytes. */
struct nd_msg {
	uint8_t type, code;
	rte_be16_t cksum;
	uint8_t flags, rsvd[3];
	uint8_t target[16];
} __rte_packed;

struct nd_opt_lla {
	uint8_t type, len;		/* len 1: 8 bytes */
	uint8_t mac[RTE_ETHER_ADDR_LEN];
};

#define ND_LEN		(sizeof(struct nd_msg) + sizeof(struct nd_opt_lla))

static bool
is_link_local(const uint8_t *a)
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

bool
net_ndp_is_nd(const uint8_t *d, uint32_t len, uint16_t l4_off)
{
	return len >= l4_off + sizeof(struct nd_msg) &&
	       (d[l4_off] == ND_TYPE_NS || d[l4_off] == ND_TYPE_NA);
}

/* ---------------------------------------------------------------------------
 * Sending.
 */

/* Our source address towards target: the link-local GID for a link-local
 * target, else the first other IPv6 GID (RFC 6724's rule 2, scope). */
static const union uroce_gid *
src_for(const struct uroce_port *p, const union uroce_gid *target)
{
	const union uroce_gid *ll = NULL, *other = NULL;
	unsigned int i;

	for (i = 0; i < p->gid_cnt; i++) {
		const union uroce_gid *g = &p->gid[i];

		if (uroce_gid_is_v4(g))
			continue;
		if (is_link_local(g->raw)) {
			if (ll == NULL)
				ll = g;
		} else if (other == NULL) {
			other = g;
		}
	}
	if (is_link_local(target->raw))
		return ll != NULL ? ll : other;
	return other != NULL ? other : ll;
}

/* IPv6 header + NS/NA with one link-layer address option, checksummed. */
static void
nd_fill(struct uroce_port *p, struct rte_ipv6_hdr *ip,
	const union uroce_gid *src, const uint8_t *dst, uint8_t type,
	uint8_t flags, const union uroce_gid *target)
{
	struct nd_msg *nd = (struct nd_msg *)(ip + 1);
	struct nd_opt_lla *o = (struct nd_opt_lla *)(nd + 1);

	ip->vtc_flow = RTE_BE32(6u << 28);
	ip->payload_len = rte_cpu_to_be_16(ND_LEN);
	ip->proto = IPPROTO_ICMPV6;
	ip->hop_limits = ND_HOP_LIMIT;
	memcpy(ip->src_addr, src->raw, 16);
	memcpy(ip->dst_addr, dst, 16);
	nd->type = type;
	nd->flags = flags;
	memcpy(nd->target, target->raw, 16);
	o->type = type == ND_TYPE_NS ? ND_OPT_SLLA : ND_OPT_TLLA;
	o->len = 1;
	memcpy(o->mac, p->mac.addr_bytes, sizeof(o->mac));
	/* The UDP/TCP routine sums the same pseudo-header (RFC 8200 8.1),
	 * with ip->proto as the next header. */
	nd->cksum = rte_ipv6_udptcp_cksum(ip, nd);
}

/* Allocate and send one NS/NA on queue q. */
static int
nd_send(struct uroce_port *p, uint16_t q, const struct rte_ether_addr *dmac,
	const union uroce_gid *src, const uint8_t *dst, uint8_t type,
	uint8_t flags, const union uroce_gid *target)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
	struct rte_ipv6_hdr *ip;

	if (m == NULL)
		return -ENOBUFS;
	ip = net_ctrl_frame(p, m, dmac, RTE_ETHER_TYPE_IPV6,
			    sizeof(*ip) + ND_LEN);
	if (ip == NULL) {
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	nd_fill(p, ip, src, dst, type, flags, target);
	if (uroce_port_tx(p, q, &m, 1) != 1)
		return -ENOBUFS;
	net_ctr_add(&p->q[q].st.nd_tx, 1);
	return 0;
}

int
net_ndp_solicit(struct uroce_port *p, uint16_t q, const union uroce_gid *target)
{
	const union uroce_gid *src = src_for(p, target);
	/* Solicited-node multicast ff02::1:ffXX:XXXX (RFC 4291 2.7.1) and
	 * its MAC 33:33:ff:XX:XX:XX (RFC 2464 7). */
	uint8_t dst[16] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };
	struct rte_ether_addr dmac = { { 0x33, 0x33, 0xff } };

	if (src == NULL)
		return -EADDRNOTAVAIL;
	memcpy(&dst[13], &target->raw[13], 3);
	memcpy(&dmac.addr_bytes[3], &target->raw[13], 3);
	return nd_send(p, q, &dmac, src, dst, ND_TYPE_NS, 0, target);
}

/* ---------------------------------------------------------------------------
 * Receiving.
 */

/* The link-layer address option of type want among the options: *mac and
 * *found. false: an option of length 0 or past the end (RFC 4861 7.1.1:
 * drop the message). */
static bool
opt_lla(const uint8_t *o, uint32_t len, uint8_t want,
	struct rte_ether_addr *mac, bool *found)
{
	*found = false;
	while (len >= 2) {
		uint32_t olen = (uint32_t)o[1] * 8;

		if (olen == 0 || olen > len)
			return false;
		if (o[0] == want && olen >= sizeof(struct nd_opt_lla)) {
			memcpy(mac->addr_bytes, o + 2, RTE_ETHER_ADDR_LEN);
			*found = true;
		}
		o += olen;
		len -= olen;
	}
	return true;
}

/* RFC 4861 7.1.1 and 7.1.2 checks common to NS and NA. */
static bool
nd_valid(const struct rte_ipv6_hdr *ip, const struct nd_msg *nd,
	 uint32_t icmp_len)
{
	return ip->hop_limits == ND_HOP_LIMIT && nd->code == 0 &&
	       icmp_len >= sizeof(*nd) && nd->target[0] != 0xff &&
	       rte_ipv6_udptcp_cksum_verify(ip, nd) == 0;
}

/* An NS: learn the sender, answer when the target is ours. */
static void
ns_input(struct uroce_port *p, uint16_t q, const struct rte_ipv6_hdr *ip,
	 const struct nd_msg *nd, const struct rte_ether_addr *slla)
{
	union uroce_gid target, sender;
	static const uint8_t unspec[16];

	memcpy(target.raw, nd->target, 16);
	memcpy(sender.raw, ip->src_addr, 16);
	/* From :: it is duplicate address detection (RFC 4862 5.4.3): we do
	 * not defend, and have nobody to answer. */
	if (memcmp(ip->src_addr, unspec, 16) == 0 ||
	    !net_is_own_gid(p, &target) || slla == NULL)
		return;
	/* RFC 4861 7.2.3: the sender's address, then a solicited NA. */
	net_neigh_learn(p, &sender, slla, true);
	nd_send(p, q, slla, &target, ip->src_addr, ND_TYPE_NA,
		ND_NA_SOLICITED | ND_NA_OVERRIDE, &target);
}

/* An NA: the target's MAC, for an entry we have (RFC 4861 7.2.5). */
static void
na_input(struct uroce_port *p, const struct nd_msg *nd,
	 const struct rte_ether_addr *tlla)
{
	union uroce_gid target;

	memcpy(target.raw, nd->target, 16);
	if (tlla == NULL || net_is_own_gid(p, &target) ||
	    rte_is_multicast_ether_addr(tlla))
		return;
	net_neigh_learn(p, &target, tlla, false);
}

void
net_ndp_input(struct uroce_port *p, uint16_t q, struct rte_mbuf *m,
	      const struct net_frame *f)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct rte_ipv6_hdr *ip = (const void *)(d + f->l3_off);
	const struct nd_msg *nd = (const void *)(d + f->l4_off);
	uint32_t icmp_len = (uint32_t)f->l3_end - f->l4_off;
	struct rte_ether_addr lla;
	bool ok, found = false;

	net_ctr_add(&p->q[q].st.nd_rx, 1);
	ok = f->l3_end <= rte_pktmbuf_data_len(m) && nd_valid(ip, nd, icmp_len);
	if (ok)
		ok = opt_lla((const uint8_t *)(nd + 1),
			     icmp_len - (uint32_t)sizeof(*nd),
			     nd->type == ND_TYPE_NS ? ND_OPT_SLLA : ND_OPT_TLLA,
			     &lla, &found);
	if (!ok)
		net_ctr_add(&p->q[q].st.nd_bad, 1);
	else if (nd->type == ND_TYPE_NS)
		ns_input(p, q, ip, nd, found ? &lla : NULL);
	else
		na_input(p, nd, found ? &lla : NULL);
	rte_pktmbuf_free(m);
}
