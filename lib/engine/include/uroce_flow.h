/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_FLOW_H
#define UROCE_FLOW_H

/**
 * @file
 * Flow steering for RAW_PACKET QPs (ibv_create_flow(3)): rules that pick
 * received Ethernet frames for a QP.
 *
 * What a rule sees. A port hands the engine the frames the stack itself
 * does not take: RoCEv2 (UDP destination port 4791) and ARP frames on the
 * port's VLAN belong to the stack and are never offered to rules; every
 * other frame the ethdev receives is (other VLANs included). Frames that
 * no rule takes are dropped and counted in the port's non_roce counter.
 * A frame a raw QP sends takes the wire even when its destination MAC is
 * another local device's: the engine's internal loopback is for RoCEv2.
 *
 * Rules (struct ibv_flow_attr followed by its specs):
 *  - IBV_FLOW_ATTR_NORMAL with any of the specs ETH (dst_mac, src_mac,
 *    ether_type after the last VLAN tag, vlan_tag: a non-zero mask needs a
 *    tagged frame), IPV4 (src_ip, dst_ip; the frame must be IPv4), TCP or
 *    UDP (src_port, dst_port; the frame must carry that protocol over IPv4
 *    or IPv6, and for IPv4 be the first fragment). Fields in network
 *    order; IPV4_EXT (IPV4 plus proto, tos, ttl and the 3 flag bits; one
 *    of IPV4 and IPV4_EXT per rule); IPV6 (src_ip, dst_ip, flow_label
 *    in network order, next_hdr, traffic_class, hop_limit; the frame must
 *    be IPv6, its next_hdr the fixed header's: extension headers are not
 *    walked; one of IPV4 and IPV6 per rule); a bit counts where the mask
 *    has it set (any mask, not only all or nothing); no spec at all
 *    matches every frame.
 *  - IBV_FLOW_ATTR_MC_DEFAULT (multicast frames no NORMAL rule took) and
 *    IBV_FLOW_ATTR_ALL_DEFAULT (any frame no other rule took), no specs.
 *  - Order: NORMAL rules by priority (lower value first, any 16-bit value
 *    is valid), equal priorities in creation order; then MC_DEFAULT, then
 *    ALL_DEFAULT. The first rule that matches takes the frame.
 * Errors (nothing is created): -EINVAL for a malformed attr (comp_mask set,
 * port not 1, a spec whose size is not its type's (or shorter than a spec
 * header, as where num_of_specs runs past the specs), a spec type given
 * twice, TCP and UDP together, IPv4 and IPv6 together, specs on a DEFAULT
 * rule, unknown type or flags); -EOPNOTSUPP for what is valid but not
 * built: IBV_FLOW_ATTR_SNIFFER, the flags DONT_TRAP and EGRESS,
 * IBV_FLOW_SPEC_INNER and the spec types ESP, VXLAN, GRE, MPLS and the
 * action specs.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Spec bits of a rule. */
#define UROCE_FLOW_ETH		0x1u
#define UROCE_FLOW_IPV4		0x2u
#define UROCE_FLOW_TCP		0x4u
#define UROCE_FLOW_UDP		0x8u
#define UROCE_FLOW_IPV6		0x10u

/** A parsed rule; values are stored already masked. */
struct uroce_flow_rule {
	enum ibv_flow_attr_type type;	/**< NORMAL, MC_DEFAULT, ALL_DEFAULT */
	uint16_t priority;
	uint32_t specs;			/**< UROCE_FLOW_* given */
	struct ibv_flow_eth_filter eth, eth_mask;
	struct ibv_flow_ipv4_ext_filter ip, ip_mask; /**< IPV4 or IPV4_EXT */
	struct ibv_flow_ipv6_filter ip6, ip6_mask;
	struct ibv_flow_tcp_udp_filter l4, l4_mask;
};

/** What rules look at in a frame (network order, as the filters). */
struct uroce_flow_key {
	bool eth;			/**< at least an Ethernet header */
	bool has_vlan;
	uint8_t ip_ver;			/**< 0, 4 or 6 */
	bool has_l4;			/**< TCP/UDP ports present */
	uint8_t l4_proto;		/**< IP protocol / next header */
	struct ibv_flow_eth_filter e;	/**< vlan_tag: the outer TCI */
	struct ibv_flow_ipv4_ext_filter ip;	/**< flags: the 3 flag bits */
	struct ibv_flow_ipv6_filter ip6;	/**< flow_label: 20 bits, BE */
	struct ibv_flow_tcp_udp_filter l4;
};

/**
 * Check and parse attr and the num_of_specs specs after it, each as long as
 * its own size says; attr->size is not read, as rdma-core's libibverbs
 * does not read it (it builds the kernel command's size from the specs).
 * @return 0 and *r, -EINVAL or -EOPNOTSUPP (see the file comment).
 */
int uroce_flow_rule_parse(const struct ibv_flow_attr *attr,
			  struct uroce_flow_rule *r);

/** The fields of the frame of len bytes at d that rules match. */
void uroce_flow_key_get(const uint8_t *d, uint32_t len,
			struct uroce_flow_key *k);

/** Whether rule r takes a frame with key k (DEFAULT rules: by kind only). */
bool uroce_flow_rule_match(const struct uroce_flow_rule *r,
			   const struct uroce_flow_key *k);

/**
 * Order of two rules: negative when a is tried before b (NORMAL by
 * priority, then MC_DEFAULT, then ALL_DEFAULT; ties 0).
 */
int uroce_flow_rule_cmp(const struct uroce_flow_rule *a,
			const struct uroce_flow_rule *b);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_FLOW_H */
