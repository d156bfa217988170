/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * RoCEv2 frame parser. Each layer checks that its header lies inside the
 * frame before reading it, and the IP length (not the frame length, which may
 * carry Ethernet padding) delimits the packet. A frame that fails a check is
 * dropped for a named reason; nothing past @len is ever read.
 */
#include <string.h>

#include <rte_ip.h>

#include "uroce_wire.h"
#include "wire_priv.h"

static const char *const verdict_names[UROCE_WIRE_VERDICT_COUNT] = {
	[UROCE_WIRE_OK] = "ok",
	[UROCE_WIRE_DROP_TRUNCATED] = "truncated",
	[UROCE_WIRE_DROP_ETHERTYPE] = "bad_ethertype",
	[UROCE_WIRE_DROP_IP_HDR] = "bad_ip_header",
	[UROCE_WIRE_DROP_IP_CSUM] = "bad_ipv4_checksum",
	[UROCE_WIRE_DROP_IP_LEN] = "bad_ip_length",
	[UROCE_WIRE_DROP_IP_FRAG] = "ip_fragment",
	[UROCE_WIRE_DROP_NOT_UDP] = "not_udp",
	[UROCE_WIRE_DROP_UDP_PORT] = "bad_udp_port",
	[UROCE_WIRE_DROP_UDP_LEN] = "bad_udp_length",
	[UROCE_WIRE_DROP_TVER] = "bad_bth_tver",
	[UROCE_WIRE_DROP_OPCODE] = "bad_opcode",
	[UROCE_WIRE_DROP_LENGTH] = "bad_transport_length",
	[UROCE_WIRE_DROP_PAD] = "bad_pad_count",
	[UROCE_WIRE_DROP_ICRC] = "bad_icrc",
};

const char *
uroce_wire_verdict_name(enum uroce_wire_verdict v)
{
	return (unsigned int)v < UROCE_WIRE_VERDICT_COUNT ? verdict_names[v] : "?";
}

/* Ethernet and at most one 802.1Q tag. Sets l3_off; returns the ethertype in *et. */
static enum uroce_wire_verdict
parse_l2(const uint8_t *f, uint32_t len, struct uroce_pkt *pkt, uint16_t *et)
{
	if (len < RTE_ETHER_HDR_LEN)
		return UROCE_WIRE_DROP_TRUNCATED;
	*et = uroce_load_be16(f + 12);
	pkt->l3_off = RTE_ETHER_HDR_LEN;
	if (*et == RTE_ETHER_TYPE_VLAN) {
		if (len < RTE_ETHER_HDR_LEN + 4)
			return UROCE_WIRE_DROP_TRUNCATED;
		pkt->vlan = true;
		pkt->vlan_tci = uroce_load_be16(f + 14);
		*et = uroce_load_be16(f + 16);
		pkt->l3_off += 4;
	}
	if (*et != RTE_ETHER_TYPE_IPV4 && *et != RTE_ETHER_TYPE_IPV6)
		return UROCE_WIRE_DROP_ETHERTYPE;
	return UROCE_WIRE_OK;
}

/* IPv4: sets l4_off, the addresses and frame_len (end of the IP packet). */
static enum uroce_wire_verdict
parse_ipv4(const uint8_t *ip, uint32_t room, struct uroce_pkt *pkt)
{
	const struct rte_ipv4_hdr *h = (const struct rte_ipv4_hdr *)ip;
	uint32_t ihl, tot;

	if (room < sizeof(*h))
		return UROCE_WIRE_DROP_TRUNCATED;
	ihl = (ip[0] & 0xf) * 4u;
	if ((ip[0] >> 4) != 4 || ihl < sizeof(*h))
		return UROCE_WIRE_DROP_IP_HDR;
	if (room < ihl)
		return UROCE_WIRE_DROP_TRUNCATED;
	tot = rte_be_to_cpu_16(h->total_length);
	if (tot < ihl || tot > room)
		return UROCE_WIRE_DROP_IP_LEN;
	if (uroce_ipv4_cksum(ip, ihl) != 0)
		return UROCE_WIRE_DROP_IP_CSUM;
	if (rte_be_to_cpu_16(h->fragment_offset) &
	    (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK))
		return UROCE_WIRE_DROP_IP_FRAG;
	if (h->next_proto_id != IPPROTO_UDP)
		return UROCE_WIRE_DROP_NOT_UDP;
	pkt->ip_ver = 4;
	pkt->tclass = h->type_of_service;
	pkt->hop_limit = h->time_to_live;
	uroce_gid_from_v4(&pkt->sgid, h->src_addr);
	uroce_gid_from_v4(&pkt->dgid, h->dst_addr);
	pkt->l4_off = pkt->l3_off + ihl;
	pkt->frame_len = pkt->l3_off + tot;
	return UROCE_WIRE_OK;
}

/* IPv6 extension headers (RFC 8200 4, IANA): RoCEv2 expects none. */
static bool
ipv6_is_ext_hdr(uint8_t proto)
{
	switch (proto) {
	case 0: case 43: case 44: case 50: case 51: case 60: case 135: case 139: case 140:
		return true;
	default:
		return false;
	}
}

/* IPv6 without extension headers (RoCEv2 puts UDP right after it). */
static enum uroce_wire_verdict
parse_ipv6(const uint8_t *ip, uint32_t room, struct uroce_pkt *pkt)
{
	const struct rte_ipv6_hdr *h = (const struct rte_ipv6_hdr *)ip;
	uint32_t vtf, plen;

	if (room < sizeof(*h))
		return UROCE_WIRE_DROP_TRUNCATED;
	vtf = rte_be_to_cpu_32(h->vtc_flow);
	if ((vtf >> 28) != 6)
		return UROCE_WIRE_DROP_IP_HDR;
	plen = rte_be_to_cpu_16(h->payload_len);
	if (plen > room - sizeof(*h))
		return UROCE_WIRE_DROP_IP_LEN;
	if (h->proto != IPPROTO_UDP)
		return ipv6_is_ext_hdr(h->proto) ?
		       UROCE_WIRE_DROP_IP_HDR : UROCE_WIRE_DROP_NOT_UDP;
	pkt->ip_ver = 6;
	pkt->tclass = (uint8_t)(vtf >> RTE_IPV6_HDR_TC_SHIFT);
	pkt->flow_label = vtf & RTE_IPV6_HDR_FL_MASK;
	pkt->hop_limit = h->hop_limits;
	memcpy(pkt->sgid.raw, h->src_addr, 16);
	memcpy(pkt->dgid.raw, h->dst_addr, 16);
	pkt->l4_off = pkt->l3_off + sizeof(*h);
	pkt->frame_len = pkt->l4_off + plen;
	return UROCE_WIRE_OK;
}

/* UDP to port 4791 whose length is the rest of the IP packet. */
static enum uroce_wire_verdict
parse_udp(const uint8_t *f, struct uroce_pkt *pkt)
{
	const uint8_t *u = f + pkt->l4_off;
	uint32_t room = pkt->frame_len - pkt->l4_off;

	if (room < UROCE_UDP_HDR)
		return UROCE_WIRE_DROP_TRUNCATED;
	if (uroce_load_be16(u + 2) != UROCE_UDP_PORT)
		return UROCE_WIRE_DROP_UDP_PORT;
	if (uroce_load_be16(u + 4) != room)
		return UROCE_WIRE_DROP_UDP_LEN;
	pkt->udp_sport = uroce_load_be16(u);
	pkt->bth_off = pkt->l4_off + UROCE_UDP_HDR;
	return UROCE_WIRE_OK;
}

static void
decode_bth(const struct uroce_bth *b, struct uroce_bth_fields *o)
{
	uint32_t apsn = rte_be_to_cpu_32(b->apsn);

	o->opcode = b->opcode;
	o->se = b->flags & UROCE_BTH_SE;
	o->mig = b->flags & UROCE_BTH_MIG;
	o->pad = (b->flags & UROCE_BTH_PAD_MASK) >> UROCE_BTH_PAD_SHIFT;
	o->tver = b->flags & UROCE_BTH_TVER_MASK;
	o->pkey = rte_be_to_cpu_16(b->pkey);
	o->fecn = b->resv8a & UROCE_BTH_FECN;
	o->becn = b->resv8a & UROCE_BTH_BECN;
	o->dqpn = uroce_load_be24(b->dqpn);
	o->ackreq = apsn & UROCE_BTH_ACKREQ;
	o->psn = apsn & UROCE_PSN_MASK;
}

/*
 * BTH and the opcode's extension headers. The bytes between them and the
 * ICRC are payload plus pad; IBTA C9-7 wants that a multiple of 4, and an
 * opcode without payload to have none.
 */
static enum uroce_wire_verdict
parse_bth(const uint8_t *f, struct uroce_pkt *pkt)
{
	uint32_t room = pkt->frame_len - pkt->bth_off;
	const struct uroce_opcode_info *op;
	uint32_t rest;

	if (room < UROCE_BTH_LEN + UROCE_ICRC_LEN)
		return UROCE_WIRE_DROP_TRUNCATED;
	decode_bth((const struct uroce_bth *)(f + pkt->bth_off), &pkt->bth);
	if (pkt->bth.tver != UROCE_BTH_TVER)
		return UROCE_WIRE_DROP_TVER;
	op = uroce_opcode(pkt->bth.opcode);
	if (!op->valid)
		return UROCE_WIRE_DROP_OPCODE;
	if (room < (uint32_t)op->hdr_len + UROCE_ICRC_LEN)
		return UROCE_WIRE_DROP_TRUNCATED;
	rest = room - op->hdr_len - UROCE_ICRC_LEN;
	if ((rest & 3u) != 0 || (rest != 0 && !(op->flags & UROCE_OPF_PAYLOAD)))
		return UROCE_WIRE_DROP_LENGTH;
	if (pkt->bth.pad > rest)
		return UROCE_WIRE_DROP_PAD;
	pkt->op = op;
	pkt->payload_off = pkt->bth_off + op->hdr_len;
	pkt->payload_len = rest - pkt->bth.pad;
	return UROCE_WIRE_OK;
}

static enum uroce_wire_verdict
check_icrc(const uint8_t *f, struct uroce_pkt *pkt)
{
	uint32_t icrc_off = pkt->frame_len - UROCE_ICRC_LEN;
	uint32_t after_bth = pkt->bth_off + UROCE_BTH_LEN;
	uint32_t crc;

	crc = ~uroce_icrc_frame(f + pkt->l3_off, pkt->l4_off - pkt->l3_off,
				icrc_off - after_bth);
	return crc == pkt->icrc ? UROCE_WIRE_OK : UROCE_WIRE_DROP_ICRC;
}

enum uroce_wire_verdict
uroce_wire_parse(const uint8_t *f, uint32_t len, unsigned int flags,
		 struct uroce_pkt *pkt)
{
	enum uroce_wire_verdict v;
	uint16_t et;

	memset(pkt, 0, sizeof(*pkt));	/* vector stores: lib/meson.build */
	pkt->frame = f;
	v = parse_l2(f, len, pkt, &et);
	if (v != UROCE_WIRE_OK)
		return v;
	if (et == RTE_ETHER_TYPE_IPV4)
		v = parse_ipv4(f + pkt->l3_off, len - pkt->l3_off, pkt);
	else
		v = parse_ipv6(f + pkt->l3_off, len - pkt->l3_off, pkt);
	if (v == UROCE_WIRE_OK)
		v = parse_udp(f, pkt);
	if (v == UROCE_WIRE_OK)
		v = parse_bth(f, pkt);
	if (v != UROCE_WIRE_OK)
		return v;
	pkt->icrc = uroce_load_le32(f + pkt->frame_len - UROCE_ICRC_LEN);
	if (flags & UROCE_PARSE_NO_ICRC)
		return UROCE_WIRE_OK;
	return check_icrc(f, pkt);
}

/* The offsets of uroce_wire_parse()'s layers, from the helpers that find
 * them in the frames we build: an accepted frame is IPv4 or IPv6 behind
 * at most one tag, its IP version matching the ethertype, and to port
 * 4791, long enough to hold the BTH. */
uint32_t
uroce_wire_peek_dqpn(const uint8_t *f, uint32_t len)
{
	uint32_t l3, l4;
	uint16_t et;

	if (len < RTE_ETHER_HDR_LEN)
		return UROCE_WIRE_NO_QPN;
	l3 = uroce_l3_offset(f);
	if (len < l3 + sizeof(struct rte_ipv4_hdr))
		return UROCE_WIRE_NO_QPN;
	et = uroce_load_be16(f + l3 - 2);
	if (et != RTE_ETHER_TYPE_IPV4 && et != RTE_ETHER_TYPE_IPV6)
		return UROCE_WIRE_NO_QPN;
	l4 = l3 + uroce_l3_len(f + l3);
	if (len < l4 + UROCE_UDP_HDR + UROCE_BTH_LEN ||
	    uroce_load_be16(f + l4 + 2) != UROCE_UDP_PORT)
		return UROCE_WIRE_NO_QPN;
	return uroce_load_be24(((const struct uroce_bth *)
				(f + l4 + UROCE_UDP_HDR))->dqpn);
}
