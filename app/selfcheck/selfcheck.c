/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * uroce-selfcheck: build a RoCEv2 frame of every opcode over IPv4 and IPv6,
 * parse it back, verify every field and the ICRC, make sure a copy with one
 * flipped payload/header bit is dropped, and print the opcode table.
 * Exit status 0 when every opcode passed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uroce/uroce.h>

#include "uroce_wire.h"

#define PAYLOAD_LEN 1021	/* not a multiple of 4: exercises the pad */

struct result {
	uint32_t frame_len;
	bool ok;
	const char *why;
};

static void
fill_path(struct uroce_l2l3 *p, int ipver)
{
	static const uint8_t v6a[16] = { 0xfd, 0, 0, 0x77, [15] = 1 };
	static const uint8_t v6b[16] = { 0xfd, 0, 0, 0x77, [15] = 2 };

	memset(p, 0, sizeof(*p));
	memcpy(p->smac, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(p->dmac, "\x02\x00\x00\x00\x00\x02", 6);
	if (ipver == 4) {
		uroce_gid_from_v4(&p->sgid, rte_cpu_to_be_32(0xc0a84d01));
		uroce_gid_from_v4(&p->dgid, rte_cpu_to_be_32(0xc0a84d02));
	} else {
		memcpy(p->sgid.raw, v6a, 16);
		memcpy(p->dgid.raw, v6b, 16);
		p->flow_label = 0x12345;
	}
	p->tclass = 0x68;	/* DSCP 26, ECT(0) */
	p->hop_limit = 64;
	p->udp_sport = uroce_wire_udp_sport(0x11, 0x22);
}

static void
fill_fields(uint8_t opcode, struct uroce_bth_fields *b, struct uroce_ext_fields *e)
{
	memset(b, 0, sizeof(*b));
	memset(e, 0, sizeof(*e));
	b->opcode = opcode;
	b->pkey = 0xffff;
	b->dqpn = 0x000022;
	b->psn = 0xabcdef;
	b->ackreq = true;
	e->reth.va = 0x00007f0012345678ULL;
	e->reth.rkey = 0x1234abcd;
	e->reth.len = PAYLOAD_LEN;
	e->aeth.syndrome = 0x1f;
	e->aeth.msn = 0x000777;
	e->atmeth.va = 0x00007f0000001000ULL;
	e->atmeth.rkey = 0x55aa55aa;
	e->atmeth.swap_add = 0x0102030405060708ULL;
	e->atmeth.cmp = 0x1112131415161718ULL;
	e->atmack_orig = 0x2122232425262728ULL;
	e->imm = rte_cpu_to_be_32(0xdeadbeef);
	e->ieth_rkey = 0x0badcafe;
	e->deth.qkey = 0x11111111;
	e->deth.sqpn = 0x000011;
	e->xrc_srqn = 0x000033;
}

static bool
fields_equal(const struct uroce_pkt *k, const struct uroce_bth_fields *b,
	     const struct uroce_ext_fields *e, const uint8_t *payload, uint32_t len)
{
	struct uroce_ext_fields got;

	if (k->bth.opcode != b->opcode || k->bth.psn != b->psn ||
	    k->bth.dqpn != b->dqpn || k->bth.pkey != b->pkey ||
	    k->bth.ackreq != b->ackreq || k->payload_len != len ||
	    (len && memcmp(uroce_pkt_payload(k), payload, len) != 0))
		return false;
	uroce_wire_ext_get(k, &got);
	if ((k->op->hdrs & UROCE_HDR_BIT(UROCE_HDR_RETH)) &&
	    memcmp(&got.reth, &e->reth, sizeof(got.reth)) != 0)
		return false;
	if ((k->op->hdrs & UROCE_HDR_BIT(UROCE_HDR_ATMETH)) &&
	    memcmp(&got.atmeth, &e->atmeth, sizeof(got.atmeth)) != 0)
		return false;
	if ((k->op->flags & UROCE_OPF_IMM) && got.imm != e->imm)
		return false;
	return true;
}

static struct result
check_opcode(uint8_t opcode, int ipver)
{
	static uint8_t frame[2048], payload[PAYLOAD_LEN];
	const struct uroce_opcode_info *o = uroce_opcode(opcode);
	uint32_t len = (o->flags & UROCE_OPF_PAYLOAD) ? PAYLOAD_LEN : 0, i;
	struct result r = { 0, false, "" };
	struct uroce_l2l3 p;
	struct uroce_bth_fields b;
	struct uroce_ext_fields e;
	struct uroce_pkt k;

	for (i = 0; i < len; i++)
		payload[i] = (uint8_t)(i * 7 + opcode);
	fill_path(&p, ipver);
	fill_fields(opcode, &b, &e);
	r.frame_len = uroce_wire_build(frame, sizeof(frame), &p, &b, &e, payload, len);
	if (r.frame_len == 0) {
		r.why = "build failed";
		return r;
	}
	if (uroce_wire_parse(frame, r.frame_len, 0, &k) != UROCE_WIRE_OK) {
		r.why = uroce_wire_verdict_name(uroce_wire_parse(frame, r.frame_len, 0, &k));
		return r;
	}
	if (!fields_equal(&k, &b, &e, payload, len)) {
		r.why = "fields differ";
		return r;
	}
	frame[r.frame_len - 6] ^= 0x10;	/* last payload/header byte before pad+ICRC */
	if (uroce_wire_parse(frame, r.frame_len, 0, &k) != UROCE_WIRE_DROP_ICRC) {
		r.why = "corruption not caught";
		return r;
	}
	r.ok = true;
	return r;
}

static const char *
position(uint16_t flags)
{
	static const char *const names[4] = { "middle", "first", "last", "only" };

	return names[flags & UROCE_OPF_ONLY];
}

static void
headers_string(const struct uroce_opcode_info *o, char *buf, size_t cap)
{
	unsigned int h;
	size_t n = 0;

	n += (size_t)snprintf(buf, cap, "BTH");
	for (h = 0; h < UROCE_HDR_COUNT && n < cap; h++)
		if (o->hdrs & UROCE_HDR_BIT(h))
			n += (size_t)snprintf(buf + n, cap - n, "+%s", uroce_hdr_name(h));
}

int
main(void)
{
	unsigned int c, total = 0, passed = 0;
	char hdrs[64];

	printf("uroce %s self-check: RoCEv2 wire format, every opcode (CRC-32: %s)\n\n",
	       UROCE_VERSION, uroce_crc32_impl());
	printf("%-4s %-40s %-26s %-6s %4s  %-18s %-18s\n", "op", "name", "headers",
	       "pos", "hlen", "IPv4 frame", "IPv6 frame");
	for (c = 0; c < 256; c++) {
		const struct uroce_opcode_info *o = uroce_opcode((uint8_t)c);
		struct result r4, r6;

		if (!o->valid)
			continue;
		r4 = check_opcode((uint8_t)c, 4);
		r6 = check_opcode((uint8_t)c, 6);
		headers_string(o, hdrs, sizeof(hdrs));
		printf("0x%02x %-40s %-26s %-6s %4u  %5u B %-10s %5u B %-10s\n", c, o->name,
		       hdrs, position(o->flags), o->hdr_len, r4.frame_len,
		       r4.ok ? "ok" : r4.why, r6.frame_len, r6.ok ? "ok" : r6.why);
		total++;
		passed += r4.ok && r6.ok;
	}
	printf("\n%u opcodes: %u passed, %u failed (build, parse, every field, ICRC, "
	       "corruption dropped; IPv4 and IPv6, %u B payload)\n",
	       total, passed, total - passed, PAYLOAD_LEN);
	return passed == total ? EXIT_SUCCESS : EXIT_FAILURE;
}
