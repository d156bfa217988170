/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * RoCEv2 frame builder: Ethernet [802.1Q] / IPv4 or IPv6 / UDP 4791 / BTH /
 * extension headers, then (for uroce_wire_build) payload, pad and ICRC.
 */
#include <string.h>

#include <rte_ip.h>
#include <rte_udp.h>

#include "uroce_wire.h"
#include "wire_priv.h"

static uint32_t
l2_len(const struct uroce_l2l3 *p)
{
	return RTE_ETHER_HDR_LEN + (p->vlan ? 4 : 0);
}

/* IPv4 or IPv6 is decided once per packet, by the destination GID. */
static uint32_t
l3_len(bool v4)
{
	return v4 ? sizeof(struct rte_ipv4_hdr) : UROCE_IPV6_HDR;
}

static uint32_t
hdrs_len(const struct uroce_l2l3 *p, bool v4, uint8_t opcode)
{
	return l2_len(p) + l3_len(v4) + UROCE_UDP_HDR + uroce_opcode(opcode)->hdr_len;
}

uint32_t
uroce_wire_hdrs_len(const struct uroce_l2l3 *p, uint8_t opcode)
{
	return hdrs_len(p, uroce_gid_is_v4(&p->dgid), opcode);
}

static void
put_be16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

/* Returns the IP header offset. */
static uint32_t
write_l2(uint8_t *b, const struct uroce_l2l3 *p, bool v4)
{
	uint32_t off = 12;

	memcpy(b, p->dmac, 6);
	memcpy(b + 6, p->smac, 6);
	if (p->vlan) {
		put_be16(b + off, RTE_ETHER_TYPE_VLAN);
		put_be16(b + off + 2, p->vlan_tci);
		off += 4;
	}
	put_be16(b + off, v4 ? RTE_ETHER_TYPE_IPV4 : RTE_ETHER_TYPE_IPV6);
	return off + 2;
}

/*
 * @ip_len: IP header + UDP + transport + ICRC. DF set, ID 0 (RFC 6864 4.1).
 * The checksum stays 0 when the NIC computes it (UROCE_WIRE_IP_CKSUM_OL);
 * otherwise it is summed from the field values (RFC 1071), as the header is
 * stored field by field: a header built on the stack and copied stalled on
 * the copy's wide load of the narrow stores.
 */
static void
write_ipv4(uint8_t *b, const struct uroce_l2l3 *p, uint8_t tos,
	   uint32_t ip_len, unsigned int flags)
{
	rte_be32_t src = uroce_gid_to_v4(&p->sgid), dst = uroce_gid_to_v4(&p->dgid);
	uint32_t s, d, sum;

	b[0] = RTE_IPV4_VHL_DEF;
	b[1] = tos;
	put_be16(b + 2, (uint16_t)ip_len);
	put_be16(b + 4, 0);
	put_be16(b + 6, RTE_IPV4_HDR_DF_FLAG);
	b[8] = p->hop_limit;
	b[9] = IPPROTO_UDP;
	put_be16(b + 10, 0);
	memcpy(b + 12, &src, 4);
	memcpy(b + 16, &dst, 4);
	if (flags & UROCE_WIRE_IP_CKSUM_OL)
		return;
	s = rte_be_to_cpu_32(src);
	d = rte_be_to_cpu_32(dst);
	sum = (RTE_IPV4_VHL_DEF << 8 | tos) + ip_len +
	      RTE_IPV4_HDR_DF_FLAG + ((uint32_t)p->hop_limit << 8 | IPPROTO_UDP) +
	      (s >> 16) + (s & 0xffff) + (d >> 16) + (d & 0xffff);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	put_be16(b + 10, (uint16_t)~sum);
}

void
uroce_wire_ipv4_cksum_fill(uint8_t *ip)
{
	uint32_t ihl = (ip[0] & 0xfu) * 4;
	uint8_t *ck = ip + offsetof(struct rte_ipv4_hdr, hdr_checksum);

	put_be16(ck, 0);
	put_be16(ck, uroce_ipv4_cksum(ip, ihl));
}

static void
write_ipv6(uint8_t *b, const struct uroce_l2l3 *p, uint8_t tc,
	   uint32_t ip_len)
{
	struct rte_ipv6_hdr h = {
		.vtc_flow = rte_cpu_to_be_32(6u << 28 |
			(uint32_t)tc << RTE_IPV6_HDR_TC_SHIFT |
			(p->flow_label & RTE_IPV6_HDR_FL_MASK)),
		.payload_len = rte_cpu_to_be_16((uint16_t)(ip_len - UROCE_IPV6_HDR)),
		.proto = IPPROTO_UDP,
		.hop_limits = p->hop_limit,
	};

	memcpy(h.src_addr, p->sgid.raw, 16);
	memcpy(h.dst_addr, p->dgid.raw, 16);
	memcpy(b, &h, sizeof(h));
}

/* UDP checksum 0: the ICRC protects the packet (A17.3.2, as RoCE NICs send it). */
static void
write_udp(uint8_t *b, const struct uroce_l2l3 *p, uint32_t udp_len)
{
	put_be16(b, p->udp_sport);
	put_be16(b + 2, UROCE_UDP_PORT);
	put_be16(b + 4, (uint16_t)udp_len);
	put_be16(b + 6, 0);
}

static void
write_bth(uint8_t *b, const struct uroce_bth_fields *f, uint8_t pad)
{
	struct uroce_bth *h = (struct uroce_bth *)b;
	uint32_t apsn = (f->psn & UROCE_PSN_MASK) | (f->ackreq ? UROCE_BTH_ACKREQ : 0);

	h->opcode = f->opcode;
	h->flags = (f->se ? UROCE_BTH_SE : 0) | (f->mig ? UROCE_BTH_MIG : 0) |
		   (uint8_t)(pad << UROCE_BTH_PAD_SHIFT) |
		   (f->tver & UROCE_BTH_TVER_MASK);
	h->pkey = rte_cpu_to_be_16(f->pkey);
	h->resv8a = (f->fecn ? UROCE_BTH_FECN : 0) | (f->becn ? UROCE_BTH_BECN : 0);
	h->dqpn[0] = (uint8_t)(f->dqpn >> 16);
	h->dqpn[1] = (uint8_t)(f->dqpn >> 8);
	h->dqpn[2] = (uint8_t)f->dqpn;
	h->apsn = rte_cpu_to_be_32(apsn);
}

static uint32_t
write_hdrs(uint8_t *buf, const struct uroce_l2l3 *p, bool v4,
	   const struct uroce_bth_fields *bth,
	   const struct uroce_ext_fields *ext, uint32_t payload_len,
	   unsigned int flags)
{
	const struct uroce_opcode_info *op = uroce_opcode(bth->opcode);
	uint32_t transport, udp_len, ip_len, l3, l4;

	if (!op->valid || (payload_len && !(op->flags & UROCE_OPF_PAYLOAD)) ||
	    payload_len > UINT16_MAX)
		return 0;
	transport = op->hdr_len + payload_len + uroce_wire_trailer_len(payload_len);
	udp_len = UROCE_UDP_HDR + transport;
	ip_len = l3_len(v4) + udp_len;
	if (ip_len > UINT16_MAX)
		return 0;
	l3 = write_l2(buf, p, v4);
	l4 = l3 + l3_len(v4);
	if (v4)
		write_ipv4(buf + l3, p, uroce_wire_frame_tclass(p, op->flags),
			   ip_len, flags);
	else
		write_ipv6(buf + l3, p, uroce_wire_frame_tclass(p, op->flags),
			   ip_len);
	write_udp(buf + l4, p, udp_len);
	write_bth(buf + l4 + UROCE_UDP_HDR, bth, -payload_len & 3u);
	uroce_ext_put(buf + l4 + UROCE_UDP_HDR, op, ext);
	return l4 + UROCE_UDP_HDR + op->hdr_len;
}

uint32_t
uroce_wire_write_hdrs(uint8_t *buf, const struct uroce_l2l3 *p,
		      const struct uroce_bth_fields *bth,
		      const struct uroce_ext_fields *ext, uint32_t payload_len)
{
	return write_hdrs(buf, p, uroce_gid_is_v4(&p->dgid), bth, ext,
			  payload_len, 0);
}

uint32_t
uroce_wire_write_hdrs_ol(uint8_t *buf, const struct uroce_l2l3 *p,
			 const struct uroce_bth_fields *bth,
			 const struct uroce_ext_fields *ext,
			 uint32_t payload_len, unsigned int flags)
{
	return write_hdrs(buf, p, uroce_gid_is_v4(&p->dgid), bth, ext,
			  payload_len, flags);
}

bool
uroce_wire_tx_ol(const struct uroce_l2l3 *p, uint8_t *l2, uint16_t *l3)
{
	if (!uroce_gid_is_v4(&p->dgid))
		return false;
	*l2 = (uint8_t)l2_len(p);
	*l3 = (uint16_t)l3_len(true);
	return true;
}

uint32_t
uroce_wire_build(uint8_t *buf, uint32_t cap, const struct uroce_l2l3 *p,
		 const struct uroce_bth_fields *bth,
		 const struct uroce_ext_fields *ext,
		 const void *payload, uint32_t payload_len)
{
	uint32_t hlen, pad = -payload_len & 3u;
	bool v4 = uroce_gid_is_v4(&p->dgid);
	uint64_t need;

	if (!uroce_opcode(bth->opcode)->valid)
		return 0;
	need = (uint64_t)hdrs_len(p, v4, bth->opcode) + payload_len +
	       uroce_wire_trailer_len(payload_len);
	if (need > cap)
		return 0;
	hlen = write_hdrs(buf, p, v4, bth, ext, payload_len, 0);
	if (hlen == 0)
		return 0;
	if (payload_len)
		memcpy(buf + hlen, payload, payload_len);
	memset(buf + hlen + payload_len, 0, pad);
	uroce_store_le32(buf + hlen + payload_len + pad,
			 uroce_wire_icrc_frame(buf, hlen, payload_len));
	return (uint32_t)need;
}

void
uroce_wire_cnp_bth(struct uroce_bth_fields *bth, uint32_t dqpn, uint16_t pkey)
{
	memset(bth, 0, sizeof(*bth));
	bth->opcode = UROCE_OPC_CNP;
	bth->becn = true;
	bth->pkey = pkey;
	bth->dqpn = dqpn & UROCE_QPN_MASK;
}

/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') over the 16-bit word holding
 * the TOS (version/IHL in its high byte). */
static void
ipv4_tos_set(uint8_t *ip, uint8_t tos)
{
	uint8_t *ck = ip + offsetof(struct rte_ipv4_hdr, hdr_checksum);
	uint32_t old = (uint32_t)ip[0] << 8 | ip[1];
	uint32_t new = (uint32_t)ip[0] << 8 | tos;
	uint32_t sum = (uint16_t)~((uint32_t)ck[0] << 8 | ck[1]);

	sum += (uint16_t)~old + new;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	ip[1] = tos;
	put_be16(ck, (uint16_t)~sum);
}

bool
uroce_wire_mark_ce(uint8_t *l3)
{
	uint8_t tc;

	if ((l3[0] >> 4) == 4) {
		tc = l3[1];
		if ((tc & UROCE_ECN_MASK) == UROCE_ECN_NOT_ECT ||
		    (tc & UROCE_ECN_MASK) == UROCE_ECN_CE)
			return false;
		ipv4_tos_set(l3, tc | UROCE_ECN_CE);
		return true;
	}
	/* IPv6: the traffic class spans the low nibble of byte 0 and the
	 * high nibble of byte 1; ECN is bits 4-5 of byte 1. */
	tc = (uint8_t)((l3[0] & 0x0f) << 4 | l3[1] >> 4);
	if ((tc & UROCE_ECN_MASK) == UROCE_ECN_NOT_ECT ||
	    (tc & UROCE_ECN_MASK) == UROCE_ECN_CE)
		return false;
	l3[1] |= UROCE_ECN_CE << 4;
	return true;
}
