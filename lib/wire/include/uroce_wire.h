/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_WIRE_H
#define UROCE_WIRE_H

/**
 * @file
 * RoCEv2 wire format: the opcode table, the transport headers, building and
 * parsing frames (Ethernet [802.1Q] / IPv4 or IPv6 / UDP 4791 / BTH ... ICRC).
 *
 * The component works on flat byte buffers and needs no EAL: the engine hands
 * it the first segment of an mbuf, tests hand it arrays. Multi-part data
 * (headers in one buffer, payload in registered memory) is covered by the
 * split API: uroce_wire_write_hdrs() + uroce_icrc_hdrs()/uroce_crc32_update().
 *
 * References: IBTA Vol. 1 rel. 1.4 ch. 9 (transport headers), Annex A17
 * (RoCEv2: UDP encapsulation, ICRC, CNP).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UROCE_UDP_PORT		4791	/* IBTA A17.3.1 */
#define UROCE_UDP_SPORT_MIN	0xC000	/* flow-entropy source ports, A17.5.1 */
#define UROCE_BTH_TVER		0

/* Transport header sizes in bytes (IBTA 9.2 - 9.3, A17.9.3 for CNP). */
#define UROCE_BTH_LEN		12
#define UROCE_RETH_LEN		16
#define UROCE_AETH_LEN		4
#define UROCE_ATMETH_LEN	28
#define UROCE_ATMACK_LEN	8
#define UROCE_IMMDT_LEN		4
#define UROCE_IETH_LEN		4
#define UROCE_DETH_LEN		8
#define UROCE_XRCETH_LEN	4
#define UROCE_CNP_RSVD_LEN	16
#define UROCE_GRH_LEN		40
#define UROCE_ICRC_LEN		4

/* ---------------------------------------------------------------------------
 * Transport headers as they are on the wire (big endian, packed).
 */
struct uroce_bth {
	uint8_t opcode;
	uint8_t flags;		/* SE:1 M:1 PadCnt:2 TVer:4 */
	rte_be16_t pkey;
	uint8_t resv8a;		/* FECN:1 BECN:1 resv:6 -- masked by the ICRC */
	uint8_t dqpn[3];
	rte_be32_t apsn;	/* AckReq:1 resv:7 PSN:24 */
} __rte_packed;

#define UROCE_BTH_SE		0x80
#define UROCE_BTH_MIG		0x40
#define UROCE_BTH_PAD_SHIFT	4
#define UROCE_BTH_PAD_MASK	0x30
#define UROCE_BTH_TVER_MASK	0x0f
#define UROCE_BTH_FECN		0x80
#define UROCE_BTH_BECN		0x40
#define UROCE_BTH_ACKREQ	0x80000000u
#define UROCE_PSN_MASK		0x00ffffffu
#define UROCE_QPN_MASK		0x00ffffffu

struct uroce_reth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be32_t dmalen;
} __rte_packed;

struct uroce_aeth {
	rte_be32_t smsn;	/* Syndrome:8 MSN:24 */
} __rte_packed;

struct uroce_atmeth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be64_t swap_add;
	rte_be64_t cmp;
} __rte_packed;

struct uroce_atmack {
	rte_be64_t orig;
} __rte_packed;

struct uroce_deth {
	rte_be32_t qkey;
	rte_be32_t sqpn;	/* resv:8 SrcQP:24 */
} __rte_packed;

struct uroce_xrceth {
	rte_be32_t srqn;	/* resv:8 XRCSRQ:24 */
} __rte_packed;

/* The Global Route Header that UD receivers find in front of their data. */
struct uroce_grh {
	rte_be32_t vtf;		/* IPVer:4 TClass:8 FlowLabel:20 */
	rte_be16_t paylen;
	uint8_t next_hdr;
	uint8_t hop_limit;
	uint8_t sgid[16];
	uint8_t dgid[16];
} __rte_packed;

/* ---------------------------------------------------------------------------
 * The opcode table. One entry per BTH opcode (IBTA Table 38 + A17.9.3 CNP),
 * indexed by the 8-bit opcode; unknown opcodes have .valid == false.
 */

/* Extension headers, in the order they follow the BTH (IBTA 9.2). */
enum uroce_hdr {
	UROCE_HDR_XRCETH,
	UROCE_HDR_DETH,
	UROCE_HDR_RETH,
	UROCE_HDR_ATMETH,
	UROCE_HDR_AETH,
	UROCE_HDR_ATMACK,
	UROCE_HDR_IMMDT,
	UROCE_HDR_IETH,
	UROCE_HDR_CNP,		/* 16 reserved bytes of a CNP */
	UROCE_HDR_COUNT
};

#define UROCE_HDR_BIT(h)	(1u << (h))

enum uroce_transport {
	UROCE_TR_RC,
	UROCE_TR_UC,
	UROCE_TR_UD,
	UROCE_TR_XRC,
	UROCE_TR_CNP,
	UROCE_TR_COUNT
};

/* What the packet asks of the receiver. */
enum uroce_op_kind {
	UROCE_OP_SEND,
	UROCE_OP_WRITE,
	UROCE_OP_READ_REQ,
	UROCE_OP_READ_RESP,
	UROCE_OP_ACK,
	UROCE_OP_ATOMIC_ACK,
	UROCE_OP_CMP_SWAP,
	UROCE_OP_FETCH_ADD,
	UROCE_OP_CNP,
	UROCE_OP_KIND_COUNT
};

/* Opcode flags. ONLY == FIRST | LAST; a MIDDLE packet has neither. */
#define UROCE_OPF_FIRST		0x0001u	/* first packet of a message */
#define UROCE_OPF_LAST		0x0002u	/* last packet of a message */
#define UROCE_OPF_ONLY		(UROCE_OPF_FIRST | UROCE_OPF_LAST)
#define UROCE_OPF_PAYLOAD	0x0004u	/* may carry payload */
#define UROCE_OPF_IMM		0x0008u	/* carries immediate data (ImmDt) */
#define UROCE_OPF_INV		0x0010u	/* carries an rkey to invalidate (IETH) */
#define UROCE_OPF_REQ		0x0020u	/* requester -> responder */
#define UROCE_OPF_RESP		0x0040u	/* responder -> requester */
#define UROCE_OPF_NEEDS_ACK	0x0080u	/* responder answers it (RC/XRC last/only, read, atomic) */
#define UROCE_OPF_ECT		0x0100u	/* RC/UC data: ECN-capable with congestion
					 * control (requests and READ responses;
					 * ACKs and CNPs stay Not-ECT, A17.9) */

struct uroce_opcode_info {
	const char *name;	/* "RC_SEND_FIRST" ... ; NULL when !valid */
	bool valid;
	uint8_t transport;	/* enum uroce_transport */
	uint8_t kind;		/* enum uroce_op_kind */
	uint8_t hdr_len;	/* BTH + every extension header */
	uint16_t flags;		/* UROCE_OPF_* */
	uint16_t hdrs;		/* UROCE_HDR_BIT() of each extension header present */
	uint8_t off[UROCE_HDR_COUNT]; /* offset from the BTH; 0 when absent */
};

extern const struct uroce_opcode_info uroce_opcodes[256];

static inline const struct uroce_opcode_info *
uroce_opcode(uint8_t opcode)
{
	return &uroce_opcodes[opcode];
}

/* Length of one extension header (UROCE_*_LEN). */
uint8_t uroce_hdr_len(enum uroce_hdr h);
const char *uroce_hdr_name(enum uroce_hdr h);
const char *uroce_transport_name(enum uroce_transport t);

/* Frequently used opcodes (IBTA Table 38). The XRC ones are RC | 0xa0. */
enum {
	UROCE_OPC_RC_SEND_FIRST = 0x00,
	UROCE_OPC_RC_SEND_MIDDLE = 0x01,
	UROCE_OPC_RC_SEND_LAST = 0x02,
	UROCE_OPC_RC_SEND_LAST_IMM = 0x03,
	UROCE_OPC_RC_SEND_ONLY = 0x04,
	UROCE_OPC_RC_SEND_ONLY_IMM = 0x05,
	UROCE_OPC_RC_WRITE_FIRST = 0x06,
	UROCE_OPC_RC_WRITE_MIDDLE = 0x07,
	UROCE_OPC_RC_WRITE_LAST = 0x08,
	UROCE_OPC_RC_WRITE_LAST_IMM = 0x09,
	UROCE_OPC_RC_WRITE_ONLY = 0x0a,
	UROCE_OPC_RC_WRITE_ONLY_IMM = 0x0b,
	UROCE_OPC_RC_READ_REQ = 0x0c,
	UROCE_OPC_RC_READ_RESP_FIRST = 0x0d,
	UROCE_OPC_RC_READ_RESP_MIDDLE = 0x0e,
	UROCE_OPC_RC_READ_RESP_LAST = 0x0f,
	UROCE_OPC_RC_READ_RESP_ONLY = 0x10,
	UROCE_OPC_RC_ACK = 0x11,
	UROCE_OPC_RC_ATOMIC_ACK = 0x12,
	UROCE_OPC_RC_CMP_SWAP = 0x13,
	UROCE_OPC_RC_FETCH_ADD = 0x14,
	UROCE_OPC_RC_SEND_LAST_INV = 0x16,
	UROCE_OPC_RC_SEND_ONLY_INV = 0x17,
	UROCE_OPC_UC_BASE = 0x20,
	UROCE_OPC_UD_SEND_ONLY = 0x64,
	UROCE_OPC_UD_SEND_ONLY_IMM = 0x65,
	UROCE_OPC_CNP = 0x81,
	UROCE_OPC_XRC_BASE = 0xa0,
};

/* ---------------------------------------------------------------------------
 * ICRC (IBTA A17.3.3): CRC-32 (the Ethernet polynomial, reflected) over
 * 8 bytes of 1s standing in for the LRH, the IP header with the variant fields
 * set to 1s (IPv4 TOS/TTL/checksum; IPv6 traffic class/flow label/hop limit),
 * the UDP header with its checksum set to 1s, the BTH with resv8a set to 1s,
 * and everything after the BTH up to the ICRC. Sent least significant byte
 * first, like the Ethernet FCS.
 */

#define UROCE_CRC32_INIT	0xffffffffu

/* Continue a CRC-32 register over @len bytes (no final inversion). */
uint32_t uroce_crc32_update(uint32_t crc, const void *buf, size_t len);

/*
 * uroce_crc32_update() over @a then @b, two separate buffers, in one pass:
 * one fold set-up and one reduction for both (short frames are mostly
 * set-up). @alen must be a non-zero multiple of 16, and the 16 bytes in
 * front of @b readable (a short @b is loaded with them; they do not count).
 */
uint32_t uroce_crc32_update2(uint32_t crc, const void *a, size_t alen,
			     const void *b, size_t blen);

/* Bit-serial reference of the same function: for tests only. */
uint32_t uroce_crc32_update_ref(uint32_t crc, const void *buf, size_t len);

/* Name of the implementation uroce_crc32_update() chose: "vpclmul" (AVX-512),
 * "pclmul" or "table". */
const char *uroce_crc32_impl(void);

/*
 * CRC register after the masked pseudo-header: the 1s, the IP header at @l3
 * (IPv4 or IPv6 by its version nibble; @l3_len bytes), UDP and the BTH.
 * The caller continues it over the rest and inverts it.
 */
uint32_t uroce_icrc_hdrs(const uint8_t *l3, uint16_t l3_len);

/*
 * The same register continued over the @rest_len bytes that follow the BTH
 * in the same buffer (extension headers, payload, pad): the whole ICRC but
 * its inversion, in one pass.
 */
uint32_t uroce_icrc_frame(const uint8_t *l3, uint16_t l3_len,
			  uint32_t rest_len);

/* ---------------------------------------------------------------------------
 * Addresses and paths. IP addresses are kept as 16-byte GIDs: IPv4 as the
 * IPv4-mapped address ::ffff:a.b.c.d (IBTA A17.8), which is also GID 0.
 */
union uroce_gid {
	uint8_t raw[16];
	rte_be32_t dw[4];
};

/* Inline: the builder and the parser ask once or twice a frame. */
static inline bool
uroce_gid_is_v4(const union uroce_gid *gid)
{
	return gid->dw[0] == 0 && gid->dw[1] == 0 &&
	       gid->dw[2] == rte_cpu_to_be_32(0x0000ffffu);
}

static inline void
uroce_gid_from_v4(union uroce_gid *gid, rte_be32_t ip4)
{
	gid->dw[0] = 0;
	gid->dw[1] = 0;
	gid->dw[2] = rte_cpu_to_be_32(0x0000ffffu);
	gid->dw[3] = ip4;
}

static inline rte_be32_t
uroce_gid_to_v4(const union uroce_gid *gid)
{
	return gid->dw[3];
}

/* Everything below the BTH that a connection (or an AH) fixes. */
struct uroce_l2l3 {
	uint8_t dmac[6];
	uint8_t smac[6];
	bool vlan;
	uint16_t vlan_tci;	/* PCP:3 DEI:1 VID:12, host order */
	union uroce_gid sgid;	/* IPv4-mapped => IPv4 header, else IPv6 */
	union uroce_gid dgid;
	uint8_t tclass;		/* DSCP:6 ECN:2 */
	uint8_t hop_limit;	/* TTL / hop limit */
	uint32_t flow_label;	/* IPv6 only, 20 bits */
	uint16_t udp_sport;	/* flow entropy, see uroce_wire_udp_sport() */
	bool ect;		/* congestion control: the opcodes with
				 * UROCE_OPF_ECT leave ECT(0) */
};

/* The ECN bits of an IP TOS / traffic class byte (RFC 3168 5). */
#define UROCE_ECN_MASK		0x03
#define UROCE_ECN_NOT_ECT	0x00
#define UROCE_ECN_ECT1		0x01
#define UROCE_ECN_ECT0		0x02
#define UROCE_ECN_CE		0x03

/* The tclass byte a frame of @op leaves with on path @p: ECT(0) in place
 * of Not-ECT for the ECN-capable opcodes when the path asks for it. */
static inline uint8_t
uroce_wire_frame_tclass(const struct uroce_l2l3 *p, uint16_t op_flags)
{
	if (p->ect && (op_flags & UROCE_OPF_ECT))
		return (uint8_t)((p->tclass & ~UROCE_ECN_MASK) | UROCE_ECN_ECT0);
	return p->tclass;
}

/*
 * Mark Congestion Experienced on an ECN-capable frame in place, as a
 * switch does (RFC 3168 5): the IP header at @l3 (IPv4 or IPv6 by its
 * version nibble), the IPv4 checksum updated (RFC 1624). The ICRC does
 * not cover these bits (A17.3.3). Returns false, changing nothing, when
 * the frame is Not-ECT or already CE.
 */
bool uroce_wire_mark_ce(uint8_t *l3);

/* The tclass to send for a GRH traffic class: its DSCP, ECN Not-ECT (see
 * gid.c). */
uint8_t uroce_wire_tclass(uint8_t grh_tclass);

/* UDP source port for a QP pair: stable per flow, in [0xC000, 0xFFFF]. */
uint16_t uroce_wire_udp_sport(uint32_t src_qpn, uint32_t dst_qpn);

/* ---------------------------------------------------------------------------
 * Header fields in host order, for the builder and as the parser's view.
 */
struct uroce_bth_fields {
	uint8_t opcode;
	bool se, mig, fecn, becn, ackreq;
	uint8_t pad;		/* builder: computed from the payload length */
	uint8_t tver;
	uint16_t pkey;
	uint32_t dqpn;
	uint32_t psn;
};

struct uroce_ext_fields {
	struct { uint64_t va; uint32_t rkey, len; } reth;
	struct { uint8_t syndrome; uint32_t msn; } aeth;
	struct { uint64_t va; uint32_t rkey; uint64_t swap_add, cmp; } atmeth;
	uint64_t atmack_orig;
	rte_be32_t imm;		/* immediate data stays in network order, as in ibv_wc */
	uint32_t ieth_rkey;
	struct { uint32_t qkey, sqpn; } deth;
	uint32_t xrc_srqn;
};

/* ---------------------------------------------------------------------------
 * Parsing.
 */

/* Why a frame was dropped. UROCE_WIRE_OK (0) means it parsed. */
enum uroce_wire_verdict {
	UROCE_WIRE_OK = 0,
	UROCE_WIRE_DROP_TRUNCATED,	/* a header or the ICRC runs past the frame */
	UROCE_WIRE_DROP_ETHERTYPE,	/* neither IPv4 nor IPv6 (after one 802.1Q tag) */
	UROCE_WIRE_DROP_IP_HDR,		/* bad version, IHL, or IPv6 extension header */
	UROCE_WIRE_DROP_IP_CSUM,	/* IPv4 header checksum */
	UROCE_WIRE_DROP_IP_LEN,		/* IP length disagrees with the frame */
	UROCE_WIRE_DROP_IP_FRAG,	/* IPv4 fragment */
	UROCE_WIRE_DROP_NOT_UDP,
	UROCE_WIRE_DROP_UDP_PORT,	/* destination port is not 4791 */
	UROCE_WIRE_DROP_UDP_LEN,	/* UDP length disagrees with the IP length */
	UROCE_WIRE_DROP_TVER,		/* BTH transport version is not 0 */
	UROCE_WIRE_DROP_OPCODE,		/* no such opcode (IBTA C9-3) */
	UROCE_WIRE_DROP_LENGTH,		/* transport length wrong for the opcode (IBTA C9-7) */
	UROCE_WIRE_DROP_PAD,		/* pad count inconsistent with the payload */
	UROCE_WIRE_DROP_ICRC,
	UROCE_WIRE_VERDICT_COUNT
};

const char *uroce_wire_verdict_name(enum uroce_wire_verdict v);

/* Counters a port keeps per verdict (index UROCE_WIRE_OK counts good frames). */
struct uroce_wire_stats {
	uint64_t verdict[UROCE_WIRE_VERDICT_COUNT];
};

/* A parsed frame: offsets into the caller's buffer plus decoded fields. */
struct uroce_pkt {
	const uint8_t *frame;
	const struct uroce_opcode_info *op;
	uint16_t l3_off;	/* IP header */
	uint16_t l4_off;	/* UDP header */
	uint16_t bth_off;
	uint16_t payload_off;
	uint32_t payload_len;	/* without the pad bytes */
	uint32_t frame_len;	/* up to and including the ICRC (no L2 padding) */
	bool vlan;
	uint16_t vlan_tci;
	uint8_t ip_ver;		/* 4 or 6 */
	uint8_t tclass;
	uint8_t hop_limit;
	uint32_t flow_label;
	uint16_t udp_sport;
	union uroce_gid sgid;
	union uroce_gid dgid;
	struct uroce_bth_fields bth;
	uint32_t icrc;		/* as received: the 4 bytes read little-endian, the
				 * value uroce_wire_icrc() computes */
};

/* Parse flags. */
#define UROCE_PARSE_NO_ICRC	0x1u	/* skip the ICRC check (the port did it) */

/*
 * Parse one frame of @len bytes. Never reads outside [frame, frame + len).
 * Fills @pkt and returns UROCE_WIRE_OK, or returns the reason to drop it.
 */
enum uroce_wire_verdict uroce_wire_parse(const uint8_t *frame, uint32_t len,
					 unsigned int flags,
					 struct uroce_pkt *pkt);

/** What uroce_wire_peek_dqpn() returns for a frame that is not RoCEv2. */
#define UROCE_WIRE_NO_QPN	UINT32_MAX

/*
 * The destination QP of a frame of @len bytes, from a few loads and none of
 * the parser's checks, to look its QP up ahead of the parse (a prefetch):
 * for every frame that uroce_wire_parse() accepts, its bth.dqpn; for
 * others, any QPN or UROCE_WIRE_NO_QPN. Never reads outside the frame.
 */
uint32_t uroce_wire_peek_dqpn(const uint8_t *frame, uint32_t len);

/* Decode the extension headers @pkt->op names (the others are left zero). */
void uroce_wire_ext_get(const struct uroce_pkt *pkt, struct uroce_ext_fields *ext);

/* The ECN bits the frame arrived with (UROCE_ECN_*). */
static inline uint8_t
uroce_pkt_ecn(const struct uroce_pkt *pkt)
{
	return pkt->tclass & UROCE_ECN_MASK;
}

/*
 * The fields of a CNP (A17.9.2) from a QP to the QP whose frames arrived
 * marked: BTH opcode 0x81, the destination QP the sender's, BECN set, the
 * P_Key the connection's, PSN 0; the 16 reserved bytes that follow are
 * zero (uroce_wire_build() writes them so).
 */
void uroce_wire_cnp_bth(struct uroce_bth_fields *bth, uint32_t dqpn,
			uint16_t pkey);

/* Direct accessors for the hot path; valid only if the opcode has the header. */
static inline const void *
uroce_pkt_hdr(const struct uroce_pkt *pkt, enum uroce_hdr h)
{
	return pkt->frame + pkt->bth_off + pkt->op->off[h];
}

static inline const uint8_t *
uroce_pkt_payload(const struct uroce_pkt *pkt)
{
	return pkt->frame + pkt->payload_off;
}

/* ---------------------------------------------------------------------------
 * Building.
 */

/* Header bytes in front of the payload for this path and opcode. */
uint32_t uroce_wire_hdrs_len(const struct uroce_l2l3 *l2l3, uint8_t opcode);

/* Bytes after the payload: pad to 4 bytes plus the ICRC. */
static inline uint32_t
uroce_wire_trailer_len(uint32_t payload_len)
{
	return (-payload_len & 3u) + UROCE_ICRC_LEN;
}

/*
 * Write Ethernet/IP/UDP/BTH/extension headers for a payload of @payload_len
 * bytes into @buf (uroce_wire_hdrs_len() bytes). The IP and UDP lengths, the
 * BTH pad count and the IPv4 checksum are filled in. Returns the header
 * length, or 0 if the opcode is invalid or the packet would exceed 64 KiB.
 */
uint32_t uroce_wire_write_hdrs(uint8_t *buf, const struct uroce_l2l3 *l2l3,
			       const struct uroce_bth_fields *bth,
			       const struct uroce_ext_fields *ext,
			       uint32_t payload_len);

/*
 * IPv4 header checksum offload (rte_mbuf RTE_MBUF_F_TX_IP_CKSUM).
 * UROCE_WIRE_IP_CKSUM_OL: uroce_wire_write_hdrs_ol() leaves the IPv4 header
 * checksum 0 for the NIC (DPDK wants it 0); IPv6 frames are unchanged. The
 * ICRC masks that field (IBTA A17.4.1), so it is the same either way.
 */
#define UROCE_WIRE_IP_CKSUM_OL	(1u << 0)

uint32_t uroce_wire_write_hdrs_ol(uint8_t *buf, const struct uroce_l2l3 *l2l3,
				  const struct uroce_bth_fields *bth,
				  const struct uroce_ext_fields *ext,
				  uint32_t payload_len, unsigned int flags);

/* Whether the path is IPv4 (the offload applies); then the mbuf's l2_len
 * (802.1Q tag included) and l3_len in *l2, *l3. */
bool uroce_wire_tx_ol(const struct uroce_l2l3 *l2l3, uint8_t *l2,
		      uint16_t *l3);

/* Compute and store the checksum of the IPv4 header at @ip (where a frame
 * built for the offload does not reach a NIC: local loopback). */
void uroce_wire_ipv4_cksum_fill(uint8_t *ip);

/*
 * Build a whole frame into @buf (capacity @cap): headers, payload, zero pad
 * and ICRC. Returns the frame length, or 0 if it does not fit or is invalid.
 */
uint32_t uroce_wire_build(uint8_t *buf, uint32_t cap,
			  const struct uroce_l2l3 *l2l3,
			  const struct uroce_bth_fields *bth,
			  const struct uroce_ext_fields *ext,
			  const void *payload, uint32_t payload_len);

/*
 * ICRC of a frame whose headers are at @hdrs (as uroce_wire_write_hdrs() wrote
 * them, @hdrs_len bytes) and whose payload (without pad) is at @payload.
 * The value to store little-endian after the pad.
 */
uint32_t uroce_wire_icrc(const uint8_t *hdrs, uint32_t hdrs_len,
			 const void *payload, uint32_t payload_len);

/* The same for a payload that follows the headers in @frame, its zero pad
 * written after it. */
uint32_t uroce_wire_icrc_frame(const uint8_t *frame, uint32_t hdrs_len,
			       uint32_t payload_len);

/*
 * The same in pieces, for a payload that lies in several buffers (a
 * zero-copy chain): begin over the headers, uroce_crc32_update() over each
 * piece in order, end with the payload's total length (it adds the pad and
 * inverts). The result equals uroce_wire_icrc() of the joined payload.
 */
uint32_t uroce_wire_icrc_begin(const uint8_t *hdrs, uint32_t hdrs_len);
uint32_t uroce_wire_icrc_end(uint32_t crc, uint32_t payload_len);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_WIRE_H */
