/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Helpers shared by the wire component's files.
 */
#ifndef UROCE_WIRE_PRIV_H
#define UROCE_WIRE_PRIV_H

#include <string.h>

#include <rte_ether.h>
#include <rte_ip.h>

#include "uroce_wire.h"

#define UROCE_IPV4_MAX_HDR	60
#define UROCE_IPV6_HDR		40
#define UROCE_UDP_HDR		8

static inline uint16_t
uroce_load_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
uroce_load_be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t
uroce_load_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline void
uroce_store_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Offset of the IP header behind at most one 802.1Q tag; the frame holds
 * the Ethernet header. */
static inline uint16_t
uroce_l3_offset(const uint8_t *frame)
{
	return uroce_load_be16(frame + 12) == RTE_ETHER_TYPE_VLAN ?
	       RTE_ETHER_HDR_LEN + 4 : RTE_ETHER_HDR_LEN;
}

/* Length of the IP header at @l3 (IPv4 with options, or IPv6 without). */
static inline uint16_t
uroce_l3_len(const uint8_t *l3)
{
	return (l3[0] >> 4) == 4 ? (uint16_t)((l3[0] & 0xf) * 4) : UROCE_IPV6_HDR;
}

/* Internet checksum of an IPv4 header of @len bytes, in host order (0 over
 * a header whose checksum field is right). rte_raw_cksum() sums native
 * 16-bit words; the one's-complement sum does not depend on the byte order
 * of the words (RFC 1071 2(B)), so it is swapped once at the end. */
static inline uint16_t
uroce_ipv4_cksum(const uint8_t *ip, unsigned int len)
{
	return rte_be_to_cpu_16((uint16_t)~rte_raw_cksum(ip, len));
}

/* Encode the extension headers @op has, at their offsets from @bth. */
void uroce_ext_put(uint8_t *bth, const struct uroce_opcode_info *op,
		   const struct uroce_ext_fields *ext);

#endif /* UROCE_WIRE_PRIV_H */
