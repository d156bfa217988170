/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Build then parse every opcode over IPv4, IPv6 and 802.1Q with random field
 * values: every field comes back equal. Then the hostile side: a frame cut at
 * any length, or with any covered byte changed, is dropped for a reason.
 * The IPv4 checksum offload: the headers with the checksum left to the NIC
 * differ in that field only, and the ICRC is the same. The QPN peek agrees
 * with the parser. ECN: with congestion control the RC and UC data opcodes
 * leave ECT(0) and the rest as the path says, the DSCP kept; a CE mark
 * keeps the frame valid (IPv4 checksum, ICRC). A CNP built and parsed.
 */
#include <stdlib.h>
#include <string.h>

#include "uroce_test.h"
#include "uroce_wire.h"

#define CAP 9000

static void
random_path(struct uroce_l2l3 *p, int ipver, bool vlan)
{
	unsigned int i;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < 6; i++) {
		p->dmac[i] = (uint8_t)ut_rand();
		p->smac[i] = (uint8_t)ut_rand();
	}
	p->vlan = vlan;
	p->vlan_tci = (uint16_t)ut_rand();
	if (ipver == 4) {
		uroce_gid_from_v4(&p->sgid, (rte_be32_t)ut_rand());
		uroce_gid_from_v4(&p->dgid, (rte_be32_t)ut_rand());
	} else {
		for (i = 0; i < 16; i++) {
			p->sgid.raw[i] = (uint8_t)ut_rand();
			p->dgid.raw[i] = (uint8_t)ut_rand();
		}
		p->sgid.raw[0] = p->dgid.raw[0] = 0xfe;	/* never IPv4-mapped */
		p->flow_label = (uint32_t)ut_rand() & 0xfffff;
	}
	p->tclass = (uint8_t)ut_rand();
	p->hop_limit = (uint8_t)ut_rand();
	p->udp_sport = uroce_wire_udp_sport((uint32_t)ut_rand(), (uint32_t)ut_rand());
}

static void
random_fields(uint8_t opcode, struct uroce_bth_fields *b, struct uroce_ext_fields *e)
{
	uint64_t r = ut_rand();

	memset(b, 0, sizeof(*b));
	b->opcode = opcode;
	b->se = r & 1;
	b->mig = r & 2;
	b->fecn = r & 4;
	b->becn = r & 8;
	b->ackreq = r & 16;
	b->pkey = (uint16_t)(r >> 8);
	b->dqpn = (uint32_t)ut_rand() & UROCE_QPN_MASK;
	b->psn = (uint32_t)ut_rand() & UROCE_PSN_MASK;
	e->reth.va = ut_rand();
	e->reth.rkey = (uint32_t)ut_rand();
	e->reth.len = (uint32_t)ut_rand();
	e->aeth.syndrome = (uint8_t)ut_rand();
	e->aeth.msn = (uint32_t)ut_rand() & 0xffffff;
	e->atmeth.va = ut_rand();
	e->atmeth.rkey = (uint32_t)ut_rand();
	e->atmeth.swap_add = ut_rand();
	e->atmeth.cmp = ut_rand();
	e->atmack_orig = ut_rand();
	e->imm = (rte_be32_t)ut_rand();
	e->ieth_rkey = (uint32_t)ut_rand();
	e->deth.qkey = (uint32_t)ut_rand();
	e->deth.sqpn = (uint32_t)ut_rand() & 0xffffff;
	e->xrc_srqn = (uint32_t)ut_rand() & 0xffffff;
}

/* The fields the opcode carries, the others zero: what the parser returns. */
static void
expected_ext(const struct uroce_opcode_info *o, const struct uroce_ext_fields *in,
	     struct uroce_ext_fields *out)
{
	memset(out, 0, sizeof(*out));
#define KEEP(h, f) do { if (o->hdrs & UROCE_HDR_BIT(UROCE_HDR_##h)) out->f = in->f; } while (0)
	KEEP(RETH, reth);
	KEEP(AETH, aeth);
	KEEP(ATMETH, atmeth);
	KEEP(ATMACK, atmack_orig);
	KEEP(IMMDT, imm);
	KEEP(IETH, ieth_rkey);
	KEEP(DETH, deth);
	KEEP(XRCETH, xrc_srqn);
#undef KEEP
}

/* Member by member: the structs have padding that memcmp would compare. */
static void
check_ext_equal(const struct uroce_ext_fields *a, const struct uroce_ext_fields *b)
{
	UT_CHECK_EQ(a->reth.va, b->reth.va);
	UT_CHECK_EQ(a->reth.rkey, b->reth.rkey);
	UT_CHECK_EQ(a->reth.len, b->reth.len);
	UT_CHECK_EQ(a->aeth.syndrome, b->aeth.syndrome);
	UT_CHECK_EQ(a->aeth.msn, b->aeth.msn);
	UT_CHECK_EQ(a->atmeth.va, b->atmeth.va);
	UT_CHECK_EQ(a->atmeth.rkey, b->atmeth.rkey);
	UT_CHECK_EQ(a->atmeth.swap_add, b->atmeth.swap_add);
	UT_CHECK_EQ(a->atmeth.cmp, b->atmeth.cmp);
	UT_CHECK_EQ(a->atmack_orig, b->atmack_orig);
	UT_CHECK_EQ(a->imm, b->imm);
	UT_CHECK_EQ(a->ieth_rkey, b->ieth_rkey);
	UT_CHECK_EQ(a->deth.qkey, b->deth.qkey);
	UT_CHECK_EQ(a->deth.sqpn, b->deth.sqpn);
	UT_CHECK_EQ(a->xrc_srqn, b->xrc_srqn);
}

static void
check_parsed(const struct uroce_pkt *k, const struct uroce_l2l3 *p,
	     const struct uroce_bth_fields *b, const struct uroce_ext_fields *e,
	     const uint8_t *payload, uint32_t len)
{
	struct uroce_ext_fields got, want;

	UT_CHECK_EQ(k->bth.opcode, b->opcode);
	UT_CHECK_EQ(k->bth.se, b->se);
	UT_CHECK_EQ(k->bth.mig, b->mig);
	UT_CHECK_EQ(k->bth.fecn, b->fecn);
	UT_CHECK_EQ(k->bth.becn, b->becn);
	UT_CHECK_EQ(k->bth.ackreq, b->ackreq);
	UT_CHECK_EQ(k->bth.pkey, b->pkey);
	UT_CHECK_EQ(k->bth.dqpn, b->dqpn);
	UT_CHECK_EQ(k->bth.psn, b->psn);
	UT_CHECK_EQ(k->bth.pad, -len & 3u);
	UT_CHECK_EQ(k->payload_len, len);
	UT_CHECK(len == 0 || UT_CHECK_MEM(uroce_pkt_payload(k), payload, len));
	UT_CHECK_EQ(k->vlan, p->vlan);
	UT_CHECK_EQ(k->vlan_tci, p->vlan ? p->vlan_tci : 0);
	UT_CHECK_EQ(k->tclass, p->tclass);
	UT_CHECK_EQ(k->hop_limit, p->hop_limit);
	UT_CHECK_EQ(k->udp_sport, p->udp_sport);
	UT_CHECK_MEM(k->sgid.raw, p->sgid.raw, 16);
	UT_CHECK_MEM(k->dgid.raw, p->dgid.raw, 16);
	if (k->ip_ver == 6)
		UT_CHECK_EQ(k->flow_label, p->flow_label);
	uroce_wire_ext_get(k, &got);
	expected_ext(k->op, e, &want);
	check_ext_equal(&got, &want);
}

/* Every byte the ICRC or a header check covers: all from the IP header on,
 * except the variant fields the ICRC masks (and IPv6 has no checksum for). */
static bool
covered(const struct uroce_pkt *k, uint32_t i)
{
	uint32_t l3 = k->l3_off;

	if (i < l3)
		return false;
	if (k->ip_ver == 6 && i < l3 + 4)	/* traffic class, flow label */
		return false;
	if (k->ip_ver == 6 && i == l3 + 7)	/* hop limit */
		return false;
	if (i == k->l4_off + 6u || i == k->l4_off + 7u)	/* UDP checksum */
		return false;
	if (i == k->bth_off + 4u)	/* BTH resv8a / FECN / BECN */
		return false;
	return true;
}

static void
check_hostile(uint8_t *f, uint32_t len)
{
	struct uroce_pkt k;
	uint32_t i, cut_from = len > 200 ? len - 40 : 0;

	uroce_wire_parse(f, len, 0, &k);
	for (i = cut_from; i < len; i++)
		UT_CHECK(uroce_wire_parse(f, i, 0, &k) != UROCE_WIRE_OK);
	for (i = 0; i < 60 && i < cut_from; i++)
		UT_CHECK(uroce_wire_parse(f, i, 0, &k) != UROCE_WIRE_OK);
	uroce_wire_parse(f, len, 0, &k);
	for (i = 0; i < len; i++) {
		struct uroce_pkt bad;
		uint8_t save = f[i], bit = (uint8_t)(1u << (ut_rand() & 7));

		if (!covered(&k, i))
			continue;
		f[i] ^= bit;
		if (!UT_CHECK(uroce_wire_parse(f, len, 0, &bad) != UROCE_WIRE_OK))
			fprintf(stderr, "     byte %u bit 0x%02x passed\n", i, bit);
		f[i] = save;
	}
}

/* The peek finds the parser's QPN, and none in a frame cut before the
 * BTH's end, sent to another UDP port, or of another ethertype. */
static void
check_peek(uint8_t *f, uint32_t len, const struct uroce_pkt *k)
{
	uint32_t et_off = k->vlan ? 16 : 12;
	uint8_t save, et[2];

	UT_CHECK_EQ(uroce_wire_peek_dqpn(f, len), k->bth.dqpn);
	UT_CHECK_EQ(uroce_wire_peek_dqpn(f, k->bth_off + UROCE_BTH_LEN - 1),
		    UROCE_WIRE_NO_QPN);
	UT_CHECK_EQ(uroce_wire_peek_dqpn(f, 0), UROCE_WIRE_NO_QPN);
	save = f[k->l4_off + 3];
	f[k->l4_off + 3] ^= 1;			/* UDP port 4790 */
	UT_CHECK_EQ(uroce_wire_peek_dqpn(f, len), UROCE_WIRE_NO_QPN);
	f[k->l4_off + 3] = save;
	memcpy(et, f + et_off, sizeof(et));
	f[et_off] = 0x08;			/* ARP (0x0806): not IP */
	f[et_off + 1] = 0x06;
	UT_CHECK_EQ(uroce_wire_peek_dqpn(f, len), UROCE_WIRE_NO_QPN);
	memcpy(f + et_off, et, sizeof(et));
	UT_CHECK_EQ(uroce_wire_peek_dqpn(f, len), k->bth.dqpn);
}

static void
roundtrip(uint8_t opcode, int ipver, bool vlan, uint32_t len, bool hostile)
{
	static uint8_t frame[CAP], payload[CAP];
	const struct uroce_opcode_info *o = uroce_opcode(opcode);
	struct uroce_l2l3 p;
	struct uroce_bth_fields b;
	struct uroce_ext_fields e;
	struct uroce_pkt k;
	uint32_t i, flen;

	if (!(o->flags & UROCE_OPF_PAYLOAD))
		len = 0;
	for (i = 0; i < len; i++)
		payload[i] = (uint8_t)ut_rand();
	random_path(&p, ipver, vlan);
	random_fields(opcode, &b, &e);
	flen = uroce_wire_build(frame, CAP, &p, &b, &e, payload, len);
	if (!UT_CHECK(flen == uroce_wire_hdrs_len(&p, opcode) + len +
		      uroce_wire_trailer_len(len)))
		return;
	if (!UT_CHECK_EQ(uroce_wire_parse(frame, flen, 0, &k), UROCE_WIRE_OK))
		return;
	UT_CHECK_EQ(k.ip_ver, ipver);
	UT_CHECK_EQ(k.frame_len, flen);
	check_parsed(&k, &p, &b, &e, payload, len);
	check_peek(frame, flen, &k);
	/* Ethernet padding after the IP packet is not part of it. */
	memset(frame + flen, 0, 20);
	UT_CHECK_EQ(uroce_wire_parse(frame, flen + 20, 0, &k), UROCE_WIRE_OK);
	if (hostile)
		check_hostile(frame, flen);
	UT_NOTE("opcode 0x%02x IPv%d vlan %d len %u", opcode, ipver, vlan, len);
}

static void
check_builder_refuses(void)
{
	static uint8_t frame[CAP];
	struct uroce_l2l3 p;
	struct uroce_bth_fields b;
	struct uroce_ext_fields e;

	random_path(&p, 4, false);
	random_fields(0x15, &b, &e);	/* reserved opcode */
	UT_CHECK_EQ(uroce_wire_build(frame, CAP, &p, &b, &e, NULL, 0), 0);
	random_fields(UROCE_OPC_RC_ACK, &b, &e);	/* ACK has no payload */
	UT_CHECK_EQ(uroce_wire_build(frame, CAP, &p, &b, &e, frame, 4), 0);
	random_fields(UROCE_OPC_RC_SEND_ONLY, &b, &e);
	UT_CHECK_EQ(uroce_wire_build(frame, 100, &p, &b, &e, frame, 100), 0);
	UT_CHECK_EQ(uroce_wire_write_hdrs(frame, &p, &b, &e, 70000), 0);
}

/* Headers for the offload (UROCE_WIRE_IP_CKSUM_OL) against the software
 * frame: IPv4 leaves its checksum 0 and nothing else changes, the ICRC
 * included (it masks the field, IBTA A17.3.3); IPv6 is untouched. */
static void
check_ip_cksum_ol(uint8_t opcode, int ipver, bool vlan, uint32_t len)
{
	static uint8_t frame[CAP], hdrs[CAP], payload[CAP];
	struct uroce_l2l3 p;
	struct uroce_bth_fields b;
	struct uroce_ext_fields e;
	uint32_t i, hl, flen, ck, icrc;
	uint16_t l3 = 0;
	uint8_t l2 = 0;

	for (i = 0; i < len; i++)
		payload[i] = (uint8_t)ut_rand();
	random_path(&p, ipver, vlan);
	random_fields(opcode, &b, &e);
	flen = uroce_wire_build(frame, CAP, &p, &b, &e, payload, len);
	hl = uroce_wire_write_hdrs_ol(hdrs, &p, &b, &e, len,
				      UROCE_WIRE_IP_CKSUM_OL);
	if (!UT_CHECK(flen != 0) ||
	    !UT_CHECK_EQ(hl, uroce_wire_hdrs_len(&p, opcode)))
		return;
	icrc = rte_cpu_to_le_32(uroce_wire_icrc(hdrs, hl, payload, len));
	UT_CHECK_MEM(frame + flen - UROCE_ICRC_LEN, &icrc, UROCE_ICRC_LEN);
	if (ipver == 6) {
		UT_CHECK(!uroce_wire_tx_ol(&p, &l2, &l3));
		UT_CHECK_MEM(hdrs, frame, hl);
		return;
	}
	if (!UT_CHECK(uroce_wire_tx_ol(&p, &l2, &l3)))
		return;
	UT_CHECK_EQ(l2, vlan ? 18 : 14);
	UT_CHECK_EQ(l3, 20);
	ck = l2 + 10u;			/* hdr_checksum in the IPv4 header */
	UT_CHECK(frame[ck] != 0 || frame[ck + 1] != 0);
	UT_CHECK(hdrs[ck] == 0 && hdrs[ck + 1] == 0);
	UT_CHECK_MEM(hdrs, frame, ck);
	UT_CHECK_MEM(hdrs + ck + 2, frame + ck + 2, hl - ck - 2);
	/* What the NIC (or the loopback path) then writes. */
	uroce_wire_ipv4_cksum_fill(hdrs + l2);
	UT_CHECK_MEM(hdrs, frame, hl);
	UT_NOTE("offload: opcode 0x%02x IPv%d vlan %d len %u", opcode, ipver,
		vlan, len);
}

/* The opcodes that leave ECT(0) with congestion control (A17.9): RC and
 * UC data and requests; never ACKs, UD, XRC or CNPs. */
static bool
want_ect(uint8_t c)
{
	const struct uroce_opcode_info *o = uroce_opcode(c);

	return (o->transport == UROCE_TR_RC || o->transport == UROCE_TR_UC) &&
	       o->kind != UROCE_OP_ACK && o->kind != UROCE_OP_ATOMIC_ACK;
}

/* A path with ect set: the ECN bits by opcode, the DSCP as given; then a
 * CE mark, which a valid frame takes and stays valid with. */
static void
check_ecn(uint8_t opcode, int ipver, bool vlan)
{
	static uint8_t frame[CAP], before[CAP];
	uint8_t payload[64], ecn, want;
	struct uroce_l2l3 p;
	struct uroce_bth_fields b;
	struct uroce_ext_fields e;
	struct uroce_pkt k;
	uint32_t flen, len;

	len = uroce_opcode(opcode)->flags & UROCE_OPF_PAYLOAD ? 61 : 0;
	memset(payload, 0xa5, sizeof(payload));
	random_path(&p, ipver, vlan);
	p.ect = ut_rand() & 1;
	random_fields(opcode, &b, &e);
	flen = uroce_wire_build(frame, CAP, &p, &b, &e, payload, len);
	if (!UT_CHECK(flen != 0) ||
	    !UT_CHECK_EQ(uroce_wire_parse(frame, flen, 0, &k), UROCE_WIRE_OK))
		return;
	want = p.ect && want_ect(opcode) ? UROCE_ECN_ECT0 :
		p.tclass & UROCE_ECN_MASK;
	ecn = uroce_pkt_ecn(&k);
	UT_CHECK_EQ(ecn, want);
	UT_CHECK_EQ(k.tclass >> 2, p.tclass >> 2);	/* DSCP kept */
	UT_CHECK_EQ(k.vlan, vlan);
	memcpy(before, frame, flen);
	if (ecn == UROCE_ECN_NOT_ECT || ecn == UROCE_ECN_CE) {
		UT_CHECK(!uroce_wire_mark_ce(frame + k.l3_off));
		UT_CHECK_MEM(frame, before, flen);
		return;
	}
	UT_CHECK(uroce_wire_mark_ce(frame + k.l3_off));
	/* The parse checks the IPv4 checksum and the ICRC. */
	if (!UT_CHECK_EQ(uroce_wire_parse(frame, flen, 0, &k), UROCE_WIRE_OK))
		return;
	UT_CHECK_EQ(uroce_pkt_ecn(&k), UROCE_ECN_CE);
	UT_CHECK_EQ(k.tclass >> 2, p.tclass >> 2);
	UT_CHECK_EQ(k.bth.psn, b.psn);
	UT_CHECK(!uroce_wire_mark_ce(frame + k.l3_off));	/* once */
	if (ipver == 4) {
		/* The incremental checksum equals one computed afresh. */
		memcpy(before, frame, flen);
		uroce_wire_ipv4_cksum_fill(before + k.l3_off);
		UT_CHECK_MEM(before, frame, flen);
	}
}

/* A CNP (A17.9.2): opcode 0x81, BECN, the sender's QP, 16 zero bytes,
 * Not-ECT even on a path with congestion control. */
static void
check_cnp(int ipver, bool vlan)
{
	static const uint8_t zero[UROCE_CNP_RSVD_LEN];
	static uint8_t frame[CAP];
	struct uroce_ext_fields e;
	struct uroce_bth_fields b;
	struct uroce_l2l3 p;
	struct uroce_pkt k;
	uint32_t flen;

	random_path(&p, ipver, vlan);
	p.ect = true;
	memset(&e, 0x5a, sizeof(e));
	uroce_wire_cnp_bth(&b, 0xff123456, 0xbeef);
	flen = uroce_wire_build(frame, CAP, &p, &b, &e, NULL, 0);
	UT_CHECK_EQ(flen, (vlan ? 18u : 14u) + (ipver == 4 ? 20u : 40u) + 8 +
		    UROCE_BTH_LEN + UROCE_CNP_RSVD_LEN + UROCE_ICRC_LEN);
	if (!UT_CHECK_EQ(uroce_wire_parse(frame, flen, 0, &k), UROCE_WIRE_OK))
		return;
	UT_CHECK_EQ(k.bth.opcode, UROCE_OPC_CNP);
	UT_CHECK_EQ(k.op->kind, UROCE_OP_CNP);
	UT_CHECK(k.bth.becn);
	UT_CHECK(!k.bth.fecn);
	UT_CHECK_EQ(k.bth.dqpn, 0x123456);
	UT_CHECK_EQ(k.bth.pkey, 0xbeef);
	UT_CHECK_EQ(k.bth.psn, 0);
	UT_CHECK(!k.bth.ackreq && !k.bth.se && !k.bth.mig);
	UT_CHECK_EQ(k.payload_len, 0);
	UT_CHECK_MEM(frame + k.bth_off + UROCE_BTH_LEN, zero, sizeof(zero));
	UT_CHECK_EQ(uroce_pkt_ecn(&k), p.tclass & UROCE_ECN_MASK);
}

int
main(void)
{
	static const uint32_t sizes[] = { 0, 1, 2, 3, 4, 5, 63, 256, 1021, 1024, 4096, 8000 };
	unsigned int c, s, v;

	for (c = 0; c < 256; c++) {
		if (!uroce_opcodes[c].valid)
			continue;
		for (v = 0; v < 4; v++)
			for (s = 0; s < RTE_DIM(sizes); s++)
				roundtrip((uint8_t)c, v & 1 ? 6 : 4, v & 2, sizes[s],
					  s == 3 || s == 6);
	}
	check_builder_refuses();
	for (c = 0; c < 256; c++) {
		if (!uroce_opcodes[c].valid)
			continue;
		for (v = 0; v < 4; v++)
			check_ip_cksum_ol((uint8_t)c, v & 1 ? 6 : 4, v & 2,
					  uroce_opcodes[c].flags & UROCE_OPF_PAYLOAD ?
					  (uint32_t)ut_rand() % 4097 : 0);
	}
	for (c = 0; c < 256; c++) {
		if (!uroce_opcodes[c].valid)
			continue;
		UT_CHECK_EQ(!!(uroce_opcodes[c].flags & UROCE_OPF_ECT),
			    want_ect((uint8_t)c));
		for (v = 0; v < 16; v++)
			check_ecn((uint8_t)c, v & 1 ? 6 : 4, v & 2);
	}
	for (v = 0; v < 4; v++)
		check_cnp(v & 1 ? 6 : 4, v & 2);
	for (c = 0; c < 2000; c++)
		UT_CHECK(uroce_wire_udp_sport((uint32_t)ut_rand(), (uint32_t)ut_rand()) >=
			 UROCE_UDP_SPORT_MIN);
	UT_CHECK_EQ(uroce_wire_udp_sport(17, 42), uroce_wire_udp_sport(17, 42));
	return ut_summary();
}
