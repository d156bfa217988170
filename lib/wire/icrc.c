/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * RoCEv2 invariant CRC (IBTA A17.3.3). The CRC covers the headers with their
 * variant fields (those routers may change) replaced by 1s. The masked copy is
 * at most 8 + 60 + 8 + 12 bytes, so it is made on the stack; the rest of the
 * packet is fed to the CRC where it lies.
 *
 * x86-64 only for now (SSE2 is part of its baseline, as DPDK's build assumes).
 */
#include <string.h>

#include <emmintrin.h>

#include <rte_ip.h>
#include <rte_udp.h>

#include "uroce_wire.h"
#include "wire_priv.h"

#define LRH_ONES	8	/* stand-in for the IB Local Route Header */

/* Mask the variant fields of the IPv4 header (TOS, TTL, checksum). */
static void
mask_ipv4(uint8_t *ip)
{
	struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

	h->type_of_service = 0xff;
	h->time_to_live = 0xff;
	h->hdr_checksum = 0xffff;
}

/* Mask the variant fields of the IPv6 header (traffic class, flow label, hop limit). */
static void
mask_ipv6(uint8_t *ip)
{
	struct rte_ipv6_hdr *h = (struct rte_ipv6_hdr *)ip;

	h->vtc_flow |= rte_cpu_to_be_32(0x0fffffffu);
	h->hop_limits = 0xff;
}

/* Any IP header length (IPv4 with options): a byte-wise masked copy. */
static uint32_t
icrc_hdrs_generic(const uint8_t *l3, uint16_t l3_len)
{
	uint8_t buf[LRH_ONES + UROCE_IPV4_MAX_HDR + sizeof(struct rte_udp_hdr) +
		    UROCE_BTH_LEN];
	uint8_t *ip = buf + LRH_ONES;
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + l3_len);
	struct uroce_bth *bth = (struct uroce_bth *)(udp + 1);
	size_t len = LRH_ONES + l3_len + sizeof(*udp) + UROCE_BTH_LEN;

	memset(buf, 0xff, LRH_ONES);
	memcpy(ip, l3, len - LRH_ONES);
	if ((l3[0] >> 4) == 4)
		mask_ipv4(ip);
	else
		mask_ipv6(ip);
	udp->dgram_cksum = 0xffff;
	bth->resv8a = 0xff;
	return uroce_crc32_update(UROCE_CRC32_INIT, buf, len);
}

/*
 * The common layouts, IPv4 without options and IPv6, whose pseudo-header is
 * 48 and 68 bytes. Setting a field to 1s is an OR, so the masked copy is
 * made with 16-byte loads OR'ed with a constant and 16-byte stores. The load
 * starts 8 bytes before the IP header (inside the Ethernet header, which the
 * callers guarantee) and those 8 bytes are OR'ed to 1s: the LRH stand-in.
 * Whole-vector stores also let the CRC's 16-byte loads forward from them
 * (a byte-wise copy stalls that forwarding, which 64-byte packets feel).
 */
#define M1 0xff
static const uint8_t mask_v4[48] __rte_aligned(16) = {
	M1, M1, M1, M1, M1, M1, M1, M1,		/* LRH stand-in */
	0, M1, 0, 0, 0, 0, 0, 0,		/* IPv4: TOS */
	M1, 0, M1, M1, 0, 0, 0, 0, 0, 0, 0, 0,	/* TTL, checksum */
	0, 0, 0, 0, 0, 0, M1, M1,		/* UDP checksum */
	0, 0, 0, 0, M1, 0, 0, 0, 0, 0, 0, 0,	/* BTH resv8a */
};
static const uint8_t mask_v6[64] __rte_aligned(16) = {
	M1, M1, M1, M1, M1, M1, M1, M1,		/* LRH stand-in */
	0x0f, M1, M1, M1, 0, 0, 0, M1,		/* IPv6: class, flow label, hop limit */
	[48] = 0, 0, 0, 0, 0, 0, M1, M1,	/* UDP checksum */
	0, 0, 0, 0, M1, 0, 0, 0,		/* BTH resv8a; its PSN word follows */
};
#undef M1

/* The masked pseudo-header of a common layout into @buf; its length, or 0
 * for IPv4 with options. */
static inline unsigned int
icrc_mask(__m128i buf[4], const uint8_t *l3, uint16_t l3_len)
{
	const uint8_t *from = l3 - LRH_ONES, *mask;
	unsigned int i, chunks;

	if (l3_len == sizeof(struct rte_ipv4_hdr) && (l3[0] >> 4) == 4) {
		mask = mask_v4;
		chunks = 3;
	} else if (l3_len == UROCE_IPV6_HDR) {
		mask = mask_v6;
		chunks = 4;
	} else {
		return 0;
	}
	for (i = 0; i < chunks; i++)
		buf[i] = _mm_or_si128(_mm_loadu_si128((const __m128i *)(from + 16 * i)),
				      _mm_load_si128((const __m128i *)(mask + 16 * i)));
	return 16 * chunks;
}

uint32_t
uroce_icrc_hdrs(const uint8_t *l3, uint16_t l3_len)
{
	__m128i buf[4];
	unsigned int n;

	RTE_ASSERT(l3_len <= UROCE_IPV4_MAX_HDR);
	n = icrc_mask(buf, l3, l3_len);
	if (n == 0)
		return icrc_hdrs_generic(l3, l3_len);
	/* IPv6: 64 masked bytes, then the BTH's last 4 (A, PSN) as they are */
	return uroce_crc32_update(uroce_crc32_update(UROCE_CRC32_INIT, buf, n),
				  l3 + n - LRH_ONES,
				  l3_len + sizeof(struct rte_udp_hdr) +
				  UROCE_BTH_LEN + LRH_ONES - n);
}

uint32_t
uroce_icrc_frame(const uint8_t *l3, uint16_t l3_len, uint32_t rest_len)
{
	const uint8_t *rest = l3 + l3_len + sizeof(struct rte_udp_hdr) +
			      UROCE_BTH_LEN, *from;
	__m128i buf[4];
	unsigned int n;

	RTE_ASSERT(l3_len <= UROCE_IPV4_MAX_HDR);
	n = icrc_mask(buf, l3, l3_len);
	if (n == 0)
		return uroce_crc32_update(icrc_hdrs_generic(l3, l3_len), rest,
					  rest_len);
	/* The frame from where the masked copy ends: the rest, and for
	 * IPv6 (64 masked bytes) the BTH's last 4 (A, PSN) before it. */
	from = l3 + n - LRH_ONES;
	return uroce_crc32_update2(UROCE_CRC32_INIT, buf, n, from,
				   (size_t)(rest - from) + rest_len);
}

static const uint8_t zero_pad[3];

uint32_t
uroce_wire_icrc_begin(const uint8_t *hdrs, uint32_t hdrs_len)
{
	uint16_t l3_off = uroce_l3_offset(hdrs);
	uint16_t l3_len = uroce_l3_len(hdrs + l3_off);
	uint32_t ext_off = l3_off + l3_len + sizeof(struct rte_udp_hdr) +
			   UROCE_BTH_LEN;
	uint32_t crc;

	crc = uroce_icrc_hdrs(hdrs + l3_off, l3_len);
	return uroce_crc32_update(crc, hdrs + ext_off, hdrs_len - ext_off);
}

uint32_t
uroce_wire_icrc_frame(const uint8_t *frame, uint32_t hdrs_len,
		      uint32_t payload_len)
{
	const uint8_t *l3 = frame + uroce_l3_offset(frame);
	uint16_t l3_len = uroce_l3_len(l3);
	uint32_t ext_off = (uint32_t)(l3 - frame) + l3_len +
			   sizeof(struct rte_udp_hdr) + UROCE_BTH_LEN;

	return ~uroce_icrc_frame(l3, l3_len, hdrs_len - ext_off + payload_len +
				 (-payload_len & 3u));
}

uint32_t
uroce_wire_icrc_end(uint32_t crc, uint32_t payload_len)
{
	crc = uroce_crc32_update(crc, zero_pad, -payload_len & 3u);
	return ~crc;
}

uint32_t
uroce_wire_icrc(const uint8_t *hdrs, uint32_t hdrs_len,
		const void *payload, uint32_t payload_len)
{
	uint32_t crc = uroce_wire_icrc_begin(hdrs, hdrs_len);

	crc = uroce_crc32_update(crc, payload, payload_len);
	return uroce_wire_icrc_end(crc, payload_len);
}
