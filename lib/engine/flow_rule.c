/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Flow rules: parse an ibv_flow_attr with its specs (ibv_create_flow(3)),
 * extract the fields of a frame, match. Pure functions: no engine state,
 * so the unit tests drive them directly. The rules are in uroce_flow.h.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <netinet/in.h>

#include "uroce_flow.h"

/* The leading members every spec shares (struct ibv_flow_spec, hdr). */
#define SPEC_HDR_LEN	(sizeof(uint32_t) + sizeof(uint16_t))

#define FLOW_FLAGS_KNOWN \
	(IBV_FLOW_ATTR_FLAGS_DONT_TRAP | IBV_FLOW_ATTR_FLAGS_EGRESS)

/* One spec type: its size and where its value and mask go. */
struct spec_desc {
	uint32_t type;
	uint32_t bit;			/* UROCE_FLOW_*; 0: not supported */
	size_t size;			/* sizeof its struct ibv_flow_spec_xxx */
	size_t spec_val;		/* offset of val in it (mask follows) */
	size_t filt_len;		/* bytes of one filter */
	size_t val_off, mask_off;	/* in struct uroce_flow_rule */
};

#define RULE_OFF(m)	offsetof(struct uroce_flow_rule, m)

static const struct spec_desc spec_descs[] = {
#define SPEC(t, bit, st, ft, v, m) \
	{ t, bit, sizeof(struct st), offsetof(struct st, val), \
	  sizeof(struct ft), RULE_OFF(v), RULE_OFF(m) }
	SPEC(IBV_FLOW_SPEC_ETH, UROCE_FLOW_ETH, ibv_flow_spec_eth,
	     ibv_flow_eth_filter, eth, eth_mask),
	/* IPV4 is the leading part of IPV4_EXT's filter. */
	SPEC(IBV_FLOW_SPEC_IPV4, UROCE_FLOW_IPV4, ibv_flow_spec_ipv4,
	     ibv_flow_ipv4_filter, ip, ip_mask),
	SPEC(IBV_FLOW_SPEC_IPV4_EXT, UROCE_FLOW_IPV4, ibv_flow_spec_ipv4_ext,
	     ibv_flow_ipv4_ext_filter, ip, ip_mask),
	SPEC(IBV_FLOW_SPEC_IPV6, UROCE_FLOW_IPV6, ibv_flow_spec_ipv6,
	     ibv_flow_ipv6_filter, ip6, ip6_mask),
	SPEC(IBV_FLOW_SPEC_TCP, UROCE_FLOW_TCP, ibv_flow_spec_tcp_udp,
	     ibv_flow_tcp_udp_filter, l4, l4_mask),
	SPEC(IBV_FLOW_SPEC_UDP, UROCE_FLOW_UDP, ibv_flow_spec_tcp_udp,
	     ibv_flow_tcp_udp_filter, l4, l4_mask),
	/* Known to rdma-core 44, not built here: -EOPNOTSUPP. */
	{ .type = IBV_FLOW_SPEC_ESP },
	{ .type = IBV_FLOW_SPEC_VXLAN_TUNNEL },
	{ .type = IBV_FLOW_SPEC_GRE },
	{ .type = IBV_FLOW_SPEC_MPLS },
	{ .type = IBV_FLOW_SPEC_ACTION_TAG },
	{ .type = IBV_FLOW_SPEC_ACTION_DROP },
	{ .type = IBV_FLOW_SPEC_ACTION_HANDLE },
	{ .type = IBV_FLOW_SPEC_ACTION_COUNT },
};

/* spec_store() takes the mask right after the value. */
_Static_assert(offsetof(struct ibv_flow_spec_eth, mask) ==
	       offsetof(struct ibv_flow_spec_eth, val) +
	       sizeof(struct ibv_flow_eth_filter), "eth spec layout");
_Static_assert(offsetof(struct ibv_flow_spec_ipv4, mask) ==
	       offsetof(struct ibv_flow_spec_ipv4, val) +
	       sizeof(struct ibv_flow_ipv4_filter), "ipv4 spec layout");
_Static_assert(offsetof(struct ibv_flow_spec_ipv4_ext, mask) ==
	       offsetof(struct ibv_flow_spec_ipv4_ext, val) +
	       sizeof(struct ibv_flow_ipv4_ext_filter), "ipv4_ext spec layout");
_Static_assert(offsetof(struct ibv_flow_ipv4_ext_filter, dst_ip) ==
	       offsetof(struct ibv_flow_ipv4_filter, dst_ip),
	       "ipv4 filter is ipv4_ext's prefix");
_Static_assert(offsetof(struct ibv_flow_spec_ipv6, mask) ==
	       offsetof(struct ibv_flow_spec_ipv6, val) +
	       sizeof(struct ibv_flow_ipv6_filter), "ipv6 spec layout");
_Static_assert(offsetof(struct ibv_flow_spec_tcp_udp, mask) ==
	       offsetof(struct ibv_flow_spec_tcp_udp, val) +
	       sizeof(struct ibv_flow_tcp_udp_filter), "tcp/udp spec layout");

static const struct spec_desc *
spec_find(uint32_t type)
{
	size_t i;

	for (i = 0; i < sizeof(spec_descs) / sizeof(spec_descs[0]); i++)
		if (spec_descs[i].type == type)
			return &spec_descs[i];
	return NULL;
}

/* Store a spec's value (masked) and mask into r. */
static void
spec_store(struct uroce_flow_rule *r, const struct spec_desc *d,
	   const uint8_t *spec)
{
	uint8_t *val = (uint8_t *)r + d->val_off;
	uint8_t *mask = (uint8_t *)r + d->mask_off;
	/* Value then mask, each filt_len bytes (struct ibv_flow_spec_xxx). */
	const uint8_t *sv = spec + d->spec_val;
	size_t i;

	memcpy(mask, sv + d->filt_len, d->filt_len);
	for (i = 0; i < d->filt_len; i++)
		val[i] = sv[i] & mask[i];
	r->specs |= d->bit;
}

/* Specs of which a rule takes one at most: L3, L4. */
static const uint32_t spec_excl[] = {
	UROCE_FLOW_IPV4 | UROCE_FLOW_IPV6,
	UROCE_FLOW_TCP | UROCE_FLOW_UDP,
};

/* Whether adding bit to have breaks a one-of rule. */
static bool
spec_conflicts(uint32_t have, uint32_t bit)
{
	size_t i;

	if (have & bit)
		return true;
	for (i = 0; i < sizeof(spec_excl) / sizeof(spec_excl[0]); i++)
		if ((spec_excl[i] & bit) && (spec_excl[i] & have))
			return true;
	return false;
}

/* One spec at off. @return its size, or <0. */
static int
spec_parse(const uint8_t *base, uint32_t off, struct uroce_flow_rule *r)
{
	const struct spec_desc *d;
	uint32_t type;
	uint16_t len;

	memcpy(&type, base + off, sizeof(type));
	memcpy(&len, base + off + sizeof(type), sizeof(len));
	if (len < SPEC_HDR_LEN)
		return -EINVAL;
	if (type & IBV_FLOW_SPEC_INNER)
		return -EOPNOTSUPP;
	d = spec_find(type);
	if (d == NULL)
		return -EINVAL;
	if (d->bit == 0)
		return -EOPNOTSUPP;
	if (len != d->size || spec_conflicts(r->specs, d->bit))
		return -EINVAL;
	spec_store(r, d, base + off);
	return len;
}

static int
attr_check(const struct ibv_flow_attr *attr)
{
	if (attr->comp_mask != 0 || attr->port != 1 ||
	    (attr->flags & ~FLOW_FLAGS_KNOWN))
		return -EINVAL;
	switch (attr->type) {
	case IBV_FLOW_ATTR_NORMAL:
		break;
	case IBV_FLOW_ATTR_ALL_DEFAULT:
	case IBV_FLOW_ATTR_MC_DEFAULT:
		if (attr->num_of_specs != 0)
			return -EINVAL;
		break;
	case IBV_FLOW_ATTR_SNIFFER:
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}
	if (attr->flags != 0)
		return -EOPNOTSUPP;
	return 0;
}

int
uroce_flow_rule_parse(const struct ibv_flow_attr *attr,
		      struct uroce_flow_rule *r)
{
	const uint8_t *base = (const uint8_t *)attr;
	struct uroce_flow_rule tmp;
	uint32_t off = sizeof(*attr);
	unsigned int i;
	int ret;

	if (attr == NULL || r == NULL)
		return -EINVAL;
	ret = attr_check(attr);
	if (ret < 0)
		return ret;
	memset(&tmp, 0, sizeof(tmp));
	tmp.type = attr->type;
	tmp.priority = attr->priority;
	/* attr->size is not read: rdma-core's libibverbs finds the specs by
	 * num_of_specs and each spec's own size, and builds the kernel
	 * command's size from them (ibv_cmd_create_flow()), so programs
	 * leave it at sizeof(struct ibv_flow_attr) (pyverbs) or at the
	 * whole (the man page's example). As there, num_of_specs must not
	 * count more specs than follow; the walk stops at the first bad one. */
	for (i = 0; i < attr->num_of_specs; i++) {
		ret = spec_parse(base, off, &tmp);
		if (ret < 0)
			return ret;
		off += (uint32_t)ret;
	}
	*r = tmp;
	return 0;
}

/* ---------------------------------------------------------------------------
 * Frames.
 */
#define ET_VLAN		0x8100
#define ET_QINQ		0x88a8
#define ET_IPV4		0x0800
#define ET_IPV6		0x86dd
#define VLAN_TAGS_MAX	2

static uint16_t
be16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* L4 ports at off when the frame holds them. */
static void
key_l4(const uint8_t *d, uint32_t len, uint32_t off, uint8_t proto,
       struct uroce_flow_key *k)
{
	k->l4_proto = proto;
	if ((proto == IPPROTO_TCP || proto == IPPROTO_UDP) && off + 4 <= len) {
		k->has_l4 = true;
		memcpy(&k->l4.src_port, d + off, 2);
		memcpy(&k->l4.dst_port, d + off + 2, 2);
	}
}

static void
key_ip(const uint8_t *d, uint32_t len, uint32_t off, uint16_t et,
       struct uroce_flow_key *k)
{
	if (et == ET_IPV4 && off + 20 <= len && (d[off] >> 4) == 4) {
		uint32_t ihl = (uint32_t)(d[off] & 0xf) * 4;

		k->ip_ver = 4;
		memcpy(&k->ip.src_ip, d + off + 12, 4);
		memcpy(&k->ip.dst_ip, d + off + 16, 4);
		k->ip.proto = d[off + 9];
		k->ip.tos = d[off + 1];
		k->ip.ttl = d[off + 8];
		k->ip.flags = d[off + 6] >> 5;
		k->l4_proto = d[off + 9];
		/* Only the first fragment has the L4 header. */
		if (ihl >= 20 && (be16_at(d + off + 6) & 0x1fff) == 0)
			key_l4(d, len, off + ihl, d[off + 9], k);
	} else if (et == ET_IPV6 && off + 40 <= len && (d[off] >> 4) == 6) {
		/* RFC 8200: version 4 bits, traffic class 8, flow label 20. */
		uint32_t vtf = (uint32_t)be16_at(d + off) << 16 |
			       be16_at(d + off + 2);

		k->ip_ver = 6;
		memcpy(k->ip6.src_ip, d + off + 8, 16);
		memcpy(k->ip6.dst_ip, d + off + 24, 16);
		k->ip6.flow_label = htonl(vtf & 0xfffff);
		k->ip6.traffic_class = (uint8_t)(vtf >> 20);
		k->ip6.next_hdr = d[off + 6];
		k->ip6.hop_limit = d[off + 7];
		key_l4(d, len, off + 40, d[off + 6], k);
	}
}

void
uroce_flow_key_get(const uint8_t *d, uint32_t len, struct uroce_flow_key *k)
{
	uint32_t off = 12;
	uint16_t et;
	int tags;

	memset(k, 0, sizeof(*k));
	if (len < 14)
		return;
	k->eth = true;
	memcpy(k->e.dst_mac, d, 6);
	memcpy(k->e.src_mac, d + 6, 6);
	et = be16_at(d + off);
	/* ether_type is the one after the last VLAN tag (ibv_create_flow(3)). */
	for (tags = 0; (et == ET_VLAN || et == ET_QINQ) && tags < VLAN_TAGS_MAX &&
	     off + 6 <= len; tags++) {
		if (!k->has_vlan)
			memcpy(&k->e.vlan_tag, d + off + 2, 2);
		k->has_vlan = true;
		off += 4;
		et = be16_at(d + off);
	}
	memcpy(&k->e.ether_type, d + off, 2);
	key_ip(d, len, off + 2, et, k);
}

#define IP6_FILTER_LEN \
	(offsetof(struct ibv_flow_ipv6_filter, hop_limit) + 1)

/* (a ^ b) & mask == 0 over n bytes; a is already masked. */
static bool
masked_eq(const void *a, const void *b, const void *mask, size_t n)
{
	const uint8_t *x = a, *y = b, *m = mask;
	size_t i;

	for (i = 0; i < n; i++)
		if ((x[i] ^ y[i]) & m[i])
			return false;
	return true;
}

static bool
match_eth(const struct uroce_flow_rule *r, const struct uroce_flow_key *k)
{
	const struct ibv_flow_eth_filter *v = &r->eth, *m = &r->eth_mask;

	if (m->vlan_tag != 0 && !k->has_vlan)
		return false;
	return masked_eq(v->dst_mac, k->e.dst_mac, m->dst_mac, 6) &&
	       masked_eq(v->src_mac, k->e.src_mac, m->src_mac, 6) &&
	       masked_eq(&v->ether_type, &k->e.ether_type, &m->ether_type, 2) &&
	       masked_eq(&v->vlan_tag, &k->e.vlan_tag, &m->vlan_tag, 2);
}

bool
uroce_flow_rule_match(const struct uroce_flow_rule *r,
		      const struct uroce_flow_key *k)
{
	uint8_t proto;

	if (!k->eth)
		return false;
	if (r->type == IBV_FLOW_ATTR_ALL_DEFAULT)
		return true;
	if (r->type == IBV_FLOW_ATTR_MC_DEFAULT)
		return (k->e.dst_mac[0] & 1) != 0;	/* group address bit */
	if ((r->specs & UROCE_FLOW_ETH) && !match_eth(r, k))
		return false;
	if ((r->specs & UROCE_FLOW_IPV4) &&
	    (k->ip_ver != 4 ||
	     !masked_eq(&r->ip, &k->ip, &r->ip_mask, sizeof(r->ip))))
		return false;
	/* The filter's named fields: not its trailing padding byte. */
	if ((r->specs & UROCE_FLOW_IPV6) &&
	    (k->ip_ver != 6 ||
	     !masked_eq(&r->ip6, &k->ip6, &r->ip6_mask, IP6_FILTER_LEN)))
		return false;
	if (r->specs & (UROCE_FLOW_TCP | UROCE_FLOW_UDP)) {
		proto = (r->specs & UROCE_FLOW_TCP) ? IPPROTO_TCP : IPPROTO_UDP;
		if (!k->has_l4 || k->l4_proto != proto ||
		    !masked_eq(&r->l4, &k->l4, &r->l4_mask, sizeof(r->l4)))
			return false;
	}
	return true;
}

/* NORMAL rules first, then MC_DEFAULT, then ALL_DEFAULT. */
static int
type_rank(enum ibv_flow_attr_type t)
{
	return t == IBV_FLOW_ATTR_NORMAL ? 0 :
	       t == IBV_FLOW_ATTR_MC_DEFAULT ? 1 : 2;
}

int
uroce_flow_rule_cmp(const struct uroce_flow_rule *a,
		    const struct uroce_flow_rule *b)
{
	int ra = type_rank(a->type), rb = type_rank(b->type);

	if (ra != rb)
		return ra - rb;
	return (int)a->priority - (int)b->priority;
}
