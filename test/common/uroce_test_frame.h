/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Plain Ethernet frames for the flow-steering and RAW_PACKET tests, and
 * ibv_flow_attr builders. Byte layouts written out by hand (IEEE 802.3,
 * 802.1Q, RFC 791, RFC 8200, RFC 768, RFC 793), not with the stack's code.
 */
#ifndef UROCE_TEST_FRAME_H
#define UROCE_TEST_FRAME_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>

struct ut_frame {
	uint8_t dmac[6], smac[6];
	int vlan;		/* -1: untagged, else the TCI */
	int ip;			/* 0: no IP (ether_type given), 4 or 6 */
	uint16_t ether_type;	/* when ip == 0 */
	uint32_t sip, dip;	/* host order */
	uint8_t proto;		/* 6 TCP, 17 UDP, other */
	uint16_t sport, dport;	/* host order */
	uint16_t frag_off;	/* IPv4 fragment offset (8-byte units) */
	uint32_t len;		/* total frame bytes (>= headers) */
};

static inline void
ut_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
ut_put32(uint8_t *p, uint32_t v)
{
	ut_put16(p, (uint16_t)(v >> 16));
	ut_put16(p + 2, (uint16_t)v);
}

/* Build f into buf (f->len bytes; payload bytes from seed). @return len. */
static inline uint32_t
ut_frame_build(const struct ut_frame *f, uint8_t *buf, uint8_t seed)
{
	uint32_t off = 12, i, l3, l4len;

	for (i = 0; i < f->len; i++)
		buf[i] = (uint8_t)(seed + i * 7);
	memcpy(buf, f->dmac, 6);
	memcpy(buf + 6, f->smac, 6);
	if (f->vlan >= 0) {
		ut_put16(buf + off, 0x8100);
		ut_put16(buf + off + 2, (uint16_t)f->vlan);
		off += 4;
	}
	ut_put16(buf + off, f->ip == 4 ? 0x0800 : f->ip == 6 ? 0x86dd :
		 f->ether_type);
	l3 = off + 2;
	if (f->ip == 4) {
		buf[l3] = 0x45;
		buf[l3 + 1] = 0;
		ut_put16(buf + l3 + 2, (uint16_t)(f->len - l3));
		ut_put16(buf + l3 + 4, 1);
		ut_put16(buf + l3 + 6, f->frag_off & 0x1fff);
		buf[l3 + 8] = 64;
		buf[l3 + 9] = f->proto;
		ut_put16(buf + l3 + 10, 0);
		ut_put32(buf + l3 + 12, f->sip);
		ut_put32(buf + l3 + 16, f->dip);
		l3 += 20;
	} else if (f->ip == 6) {
		ut_put32(buf + l3, 0x60000000);
		ut_put16(buf + l3 + 4, (uint16_t)(f->len - l3 - 40));
		buf[l3 + 6] = f->proto;
		buf[l3 + 7] = 64;
		memset(buf + l3 + 8, 0, 32);
		ut_put32(buf + l3 + 20, f->sip);
		ut_put32(buf + l3 + 36, f->dip);
		l3 += 40;
	} else {
		return f->len;
	}
	ut_put16(buf + l3, f->sport);
	ut_put16(buf + l3 + 2, f->dport);
	l4len = f->len - l3;
	if (f->proto == 17)
		ut_put16(buf + l3 + 4, (uint16_t)l4len);
	return f->len;
}

/* A flow attr with up to three specs back to back, as ibv_create_flow(3)'s
 * example lays them out (the 20-byte attr needs no padding before a byte
 * array). */
struct ut_flow {
	struct ibv_flow_attr attr;
	uint8_t specs[3 * 64];
};

static inline void
ut_flow_init(struct ut_flow *f, enum ibv_flow_attr_type type,
	     uint16_t priority)
{
	memset(f, 0, sizeof(*f));
	f->attr.type = type;
	f->attr.size = sizeof(f->attr);
	f->attr.priority = priority;
	f->attr.port = 1;
}

static inline void
ut_flow_add(struct ut_flow *f, const void *spec, uint16_t size)
{
	memcpy((uint8_t *)&f->attr + f->attr.size, spec, size);
	f->attr.size += size;
	f->attr.num_of_specs++;
}

/* ETH: dst MAC (mask all or none), optional ether_type and VLAN id. */
static inline void
ut_flow_eth(struct ut_flow *f, const uint8_t *dmac, uint16_t ether_type,
	    int vid)
{
	struct ibv_flow_spec_eth s;

	memset(&s, 0, sizeof(s));
	s.type = IBV_FLOW_SPEC_ETH;
	s.size = sizeof(s);
	if (dmac != NULL) {
		memcpy(s.val.dst_mac, dmac, 6);
		memset(s.mask.dst_mac, 0xff, 6);
	}
	if (ether_type != 0) {
		s.val.ether_type = htobe16(ether_type);
		s.mask.ether_type = 0xffff;
	}
	if (vid >= 0) {
		s.val.vlan_tag = htobe16((uint16_t)vid);
		s.mask.vlan_tag = htobe16(0x0fff);
	}
	ut_flow_add(f, &s, sizeof(s));
}

static inline void
ut_flow_ipv4(struct ut_flow *f, uint32_t sip, uint32_t dip)
{
	struct ibv_flow_spec_ipv4 s;

	memset(&s, 0, sizeof(s));
	s.type = IBV_FLOW_SPEC_IPV4;
	s.size = sizeof(s);
	s.val.src_ip = htobe32(sip);
	s.mask.src_ip = sip ? 0xffffffff : 0;
	s.val.dst_ip = htobe32(dip);
	s.mask.dst_ip = dip ? 0xffffffff : 0;
	ut_flow_add(f, &s, sizeof(s));
}

/* IPV6: the frames' addresses (ut_frame_build(): 12 zero bytes, then the
 * 32 bits given; 0: any), next_hdr (0: any). */
static inline void
ut_flow_ipv6(struct ut_flow *f, uint32_t sip, uint32_t dip, uint8_t next_hdr)
{
	struct ibv_flow_spec_ipv6 s;

	memset(&s, 0, sizeof(s));
	s.type = IBV_FLOW_SPEC_IPV6;
	s.size = sizeof(s);
	ut_put32(s.val.src_ip + 12, sip);
	memset(s.mask.src_ip, sip ? 0xff : 0, 16);
	ut_put32(s.val.dst_ip + 12, dip);
	memset(s.mask.dst_ip, dip ? 0xff : 0, 16);
	s.val.next_hdr = next_hdr;
	s.mask.next_hdr = next_hdr ? 0xff : 0;
	ut_flow_add(f, &s, sizeof(s));
}

/* TCP or UDP ports (0: any). */
static inline void
ut_flow_l4(struct ut_flow *f, bool tcp, uint16_t sport, uint16_t dport)
{
	struct ibv_flow_spec_tcp_udp s;

	memset(&s, 0, sizeof(s));
	s.type = tcp ? IBV_FLOW_SPEC_TCP : IBV_FLOW_SPEC_UDP;
	s.size = sizeof(s);
	s.val.src_port = htobe16(sport);
	s.mask.src_port = sport ? 0xffff : 0;
	s.val.dst_port = htobe16(dport);
	s.mask.dst_port = dport ? 0xffff : 0;
	ut_flow_add(f, &s, sizeof(s));
}

#endif /* UROCE_TEST_FRAME_H */
