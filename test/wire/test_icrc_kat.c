/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Known answers for the ICRC. Two RoCEv2 frames assembled by hand, whose ICRC
 * comes from outside uroce: the IPv4 one from scapy.contrib.roce, the IPv6 one
 * (scapy has no IPv6 ICRC) from icrc_ref() in crosscheck_scapy.py, a python
 * rendering of IBTA A17.3.3 that agrees with scapy on IPv4. uroce must parse
 * each with the fields it was made of, compute the same ICRC, and build the
 * same bytes from those fields. Also the CRC-32 check value.
 */
#include <stdint.h>
#include <string.h>

#include "uroce_test.h"
#include "uroce_wire.h"

/* RC RDMA WRITE Only with Immediate over IPv4, 5 bytes of payload (pad 3). */
static const uint8_t frame_v4[] = {
	/* Ethernet: to 02:00:00:00:00:02 from 02:00:00:00:00:01, IPv4 */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00,
	/* IPv4: TOS 0x62, length 72, ID 0, DF, TTL 64, UDP, checksum 0xb63f,
	 * 192.0.2.1 -> 192.0.2.2 */
	0x45, 0x62, 0x00, 0x48, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb6, 0x3f,
	0xc0, 0x00, 0x02, 0x01, 0xc0, 0x00, 0x02, 0x02,
	/* UDP: 0xc0de -> 4791, length 52, checksum 0 */
	0xc0, 0xde, 0x12, 0xb7, 0x00, 0x34, 0x00, 0x00,
	/* BTH: opcode 0x0b, SE, pad 3, P_Key 0xffff, BECN, QP 0x000123,
	 * AckReq, PSN 0x00abcd */
	0x0b, 0xb0, 0xff, 0xff, 0x40, 0x00, 0x01, 0x23, 0x80, 0x00, 0xab, 0xcd,
	/* RETH: VA 0x00007f0012345678, R_Key 0x1234abcd, DMA length 5 */
	0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x56, 0x78, 0x12, 0x34, 0xab, 0xcd,
	0x00, 0x00, 0x00, 0x05,
	/* ImmDt */
	0xde, 0xad, 0xbe, 0xef,
	/* payload "hello", 3 pad bytes */
	0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00,
	/* ICRC, by scapy */
	0xd0, 0x46, 0x30, 0xa5,
};

/* UD SEND Only over 802.1Q and IPv6, 6 bytes of payload (pad 2). */
static const uint8_t frame_v6[] = {
	/* Ethernet: to 02:00:00:00:00:04 from 02:00:00:00:00:03, 802.1Q */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x04, 0x02, 0x00, 0x00, 0x00, 0x00, 0x03,
	0x81, 0x00,
	/* 802.1Q: PCP 3, VID 5, IPv6 */
	0x60, 0x05, 0x86, 0xdd,
	/* IPv6: traffic class 0x8a, flow label 0x12345, payload length 40,
	 * UDP, hop limit 64, fd00::1 -> fd00::2 */
	0x68, 0xa1, 0x23, 0x45, 0x00, 0x28, 0x11, 0x40,
	0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
	/* UDP: 0xd00d -> 4791, length 40, checksum 0 */
	0xd0, 0x0d, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,
	/* BTH: opcode 0x64, MigReq, pad 2, P_Key 0x8001, FECN, QP 0x00c0de,
	 * PSN 0x123456 */
	0x64, 0x60, 0x80, 0x01, 0x80, 0x00, 0xc0, 0xde, 0x00, 0x12, 0x34, 0x56,
	/* DETH: Q_Key 0x1ee7c0de, source QP 0x000042 */
	0x1e, 0xe7, 0xc0, 0xde, 0x00, 0x00, 0x00, 0x42,
	/* payload "uroce!", 2 pad bytes */
	0x75, 0x72, 0x6f, 0x63, 0x65, 0x21, 0x00, 0x00,
	/* ICRC, by icrc_ref() */
	0x3d, 0xf7, 0x94, 0x68,
};

struct kat {
	const char *name;
	const uint8_t *frame;
	uint32_t len;
	struct uroce_l2l3 l2l3;
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
	const char *payload;
	uint32_t payload_len;
	uint32_t icrc;		/* the ICRC bytes read little-endian */
};

static const struct kat kats[] = {
	{
		.name = "ipv4 rc_write_only_imm",
		.frame = frame_v4, .len = sizeof(frame_v4),
		.l2l3 = {
			.dmac = { 0x02, 0, 0, 0, 0, 0x02 },
			.smac = { 0x02, 0, 0, 0, 0, 0x01 },
			.sgid.raw = { [10] = 0xff, 0xff, 192, 0, 2, 1 },
			.dgid.raw = { [10] = 0xff, 0xff, 192, 0, 2, 2 },
			.tclass = 0x62, .hop_limit = 64, .udp_sport = 0xc0de,
		},
		.bth = {
			.opcode = UROCE_OPC_RC_WRITE_ONLY_IMM, .se = true,
			.becn = true, .ackreq = true, .pad = 3, .pkey = 0xffff,
			.dqpn = 0x000123, .psn = 0x00abcd,
		},
		.ext = {
			.reth = { .va = 0x00007f0012345678ull, .rkey = 0x1234abcd, .len = 5 },
			.imm = RTE_BE32(0xdeadbeef),
		},
		.payload = "hello", .payload_len = 5,
		.icrc = 0xa53046d0,
	},
	{
		.name = "ipv6 vlan ud_send_only",
		.frame = frame_v6, .len = sizeof(frame_v6),
		.l2l3 = {
			.dmac = { 0x02, 0, 0, 0, 0, 0x04 },
			.smac = { 0x02, 0, 0, 0, 0, 0x03 },
			.vlan = true, .vlan_tci = 0x6005,
			.sgid.raw = { 0xfd, [15] = 1 },
			.dgid.raw = { 0xfd, [15] = 2 },
			.tclass = 0x8a, .hop_limit = 64, .flow_label = 0x12345,
			.udp_sport = 0xd00d,
		},
		.bth = {
			.opcode = UROCE_OPC_UD_SEND_ONLY, .mig = true, .fecn = true,
			.pad = 2, .pkey = 0x8001, .dqpn = 0x00c0de, .psn = 0x123456,
		},
		.ext = { .deth = { .qkey = 0x1ee7c0de, .sqpn = 0x000042 } },
		.payload = "uroce!", .payload_len = 6,
		.icrc = 0x6894f73d,
	},
};

static void
check_l2l3(const struct kat *k, const struct uroce_pkt *pkt)
{
	UT_CHECK_EQ(pkt->vlan, k->l2l3.vlan);
	UT_CHECK_EQ(pkt->vlan_tci, k->l2l3.vlan_tci);
	UT_CHECK_EQ(pkt->ip_ver, uroce_gid_is_v4(&k->l2l3.dgid) ? 4 : 6);
	UT_CHECK_EQ(pkt->tclass, k->l2l3.tclass);
	UT_CHECK_EQ(pkt->hop_limit, k->l2l3.hop_limit);
	UT_CHECK_EQ(pkt->flow_label, k->l2l3.flow_label);
	UT_CHECK_EQ(pkt->udp_sport, k->l2l3.udp_sport);
	UT_CHECK_MEM(pkt->sgid.raw, k->l2l3.sgid.raw, 16);
	UT_CHECK_MEM(pkt->dgid.raw, k->l2l3.dgid.raw, 16);
}

static void
check_bth(const struct kat *k, const struct uroce_bth_fields *b)
{
	UT_CHECK_EQ(b->opcode, k->bth.opcode);
	UT_CHECK_EQ(b->se, k->bth.se);
	UT_CHECK_EQ(b->mig, k->bth.mig);
	UT_CHECK_EQ(b->fecn, k->bth.fecn);
	UT_CHECK_EQ(b->becn, k->bth.becn);
	UT_CHECK_EQ(b->ackreq, k->bth.ackreq);
	UT_CHECK_EQ(b->pad, k->bth.pad);
	UT_CHECK_EQ(b->tver, 0);
	UT_CHECK_EQ(b->pkey, k->bth.pkey);
	UT_CHECK_EQ(b->dqpn, k->bth.dqpn);
	UT_CHECK_EQ(b->psn, k->bth.psn);
}

/* The two frames use RETH + ImmDt and DETH; the other fields must stay zero. */
static void
check_ext(const struct kat *k, const struct uroce_ext_fields *e)
{
	UT_CHECK_EQ(e->reth.va, k->ext.reth.va);
	UT_CHECK_EQ(e->reth.rkey, k->ext.reth.rkey);
	UT_CHECK_EQ(e->reth.len, k->ext.reth.len);
	UT_CHECK_EQ(e->imm, k->ext.imm);
	UT_CHECK_EQ(e->deth.qkey, k->ext.deth.qkey);
	UT_CHECK_EQ(e->deth.sqpn, k->ext.deth.sqpn);
	UT_CHECK_EQ(e->aeth.msn, 0);
	UT_CHECK_EQ(e->atmeth.va, 0);
	UT_CHECK_EQ(e->xrc_srqn, 0);
}

static void
test_parse(const struct kat *k)
{
	struct uroce_ext_fields ext;
	struct uroce_pkt pkt;

	memset(&pkt, 0, sizeof(pkt));
	if (!UT_CHECK_EQ(uroce_wire_parse(k->frame, k->len, 0, &pkt), UROCE_WIRE_OK)) {
		UT_NOTE("%s", k->name);
		return;
	}
	check_l2l3(k, &pkt);
	check_bth(k, &pkt.bth);
	memset(&ext, 0, sizeof(ext));
	uroce_wire_ext_get(&pkt, &ext);
	check_ext(k, &ext);
	UT_CHECK_EQ(pkt.frame_len, k->len);
	UT_CHECK_EQ(pkt.icrc, k->icrc);
	if (UT_CHECK_EQ(pkt.payload_len, k->payload_len))
		UT_CHECK_MEM(uroce_pkt_payload(&pkt), k->payload, k->payload_len);
	UT_NOTE("%s", k->name);
}

static void
test_icrc(const struct kat *k)
{
	uint32_t hdrs_len = k->len - k->payload_len -
			    uroce_wire_trailer_len(k->payload_len);

	UT_CHECK_EQ(uroce_wire_hdrs_len(&k->l2l3, k->bth.opcode), hdrs_len);
	UT_CHECK_EQ(uroce_wire_icrc(k->frame, hdrs_len, k->payload, k->payload_len),
		    k->icrc);
	/* payload and pad in place, one pass */
	UT_CHECK_EQ(uroce_wire_icrc_frame(k->frame, hdrs_len, k->payload_len),
		    k->icrc);
	UT_NOTE("%s", k->name);
}

static void
test_build(const struct kat *k)
{
	uint8_t buf[256];
	uint32_t len;

	memset(buf, 0xa5, sizeof(buf));
	len = uroce_wire_build(buf, sizeof(buf), &k->l2l3, &k->bth, &k->ext,
			       k->payload, k->payload_len);
	if (UT_CHECK_EQ(len, k->len))
		UT_CHECK_MEM(buf, k->frame, k->len);
	UT_NOTE("%s", k->name);
}

/* The CRC-32 check value (the ICRC's polynomial, reflected, inverted). */
static void
test_crc32_check_value(void)
{
	static const char digits[] = "123456789";

	UT_CHECK_EQ(~uroce_crc32_update(UROCE_CRC32_INIT, digits, 9), 0xcbf43926u);
	UT_CHECK_EQ(~uroce_crc32_update_ref(UROCE_CRC32_INIT, digits, 9), 0xcbf43926u);
}

int
main(void)
{
	unsigned int i;

	test_crc32_check_value();
	for (i = 0; i < RTE_DIM(kats); i++) {
		test_parse(&kats[i]);
		test_icrc(&kats[i]);
		test_build(&kats[i]);
	}
	return ut_summary();
}
