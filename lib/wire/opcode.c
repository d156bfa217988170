/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The BTH opcode table (IBTA Vol. 1 Table 38 "OpCode field", and Annex A17.9.3
 * for the RoCEv2 CNP). Each row names its extension headers as a mask; their
 * offsets and the total header length are derived from the mask at compile
 * time, in the order IBTA 9.2 fixes, so no offset is written by hand.
 */
#include <assert.h>

#include "uroce_wire.h"

/* .hdrs is 16 bits wide: every header bit must fit (the rxe table once
 * compared mask bits wider than its field). */
static_assert(UROCE_HDR_COUNT <= 16, "uroce_opcode_info.hdrs too narrow");

static const uint8_t hdr_lens[UROCE_HDR_COUNT] = {
	[UROCE_HDR_XRCETH] = UROCE_XRCETH_LEN,
	[UROCE_HDR_DETH] = UROCE_DETH_LEN,
	[UROCE_HDR_RETH] = UROCE_RETH_LEN,
	[UROCE_HDR_ATMETH] = UROCE_ATMETH_LEN,
	[UROCE_HDR_AETH] = UROCE_AETH_LEN,
	[UROCE_HDR_ATMACK] = UROCE_ATMACK_LEN,
	[UROCE_HDR_IMMDT] = UROCE_IMMDT_LEN,
	[UROCE_HDR_IETH] = UROCE_IETH_LEN,
	[UROCE_HDR_CNP] = UROCE_CNP_RSVD_LEN,
};

static const char *const hdr_names[UROCE_HDR_COUNT] = {
	[UROCE_HDR_XRCETH] = "XRCETH",
	[UROCE_HDR_DETH] = "DETH",
	[UROCE_HDR_RETH] = "RETH",
	[UROCE_HDR_ATMETH] = "AtomicETH",
	[UROCE_HDR_AETH] = "AETH",
	[UROCE_HDR_ATMACK] = "AtomicAckETH",
	[UROCE_HDR_IMMDT] = "ImmDt",
	[UROCE_HDR_IETH] = "IETH",
	[UROCE_HDR_CNP] = "CNP-reserved",
};

static const char *const transport_names[UROCE_TR_COUNT] = {
	[UROCE_TR_RC] = "RC",
	[UROCE_TR_UC] = "UC",
	[UROCE_TR_UD] = "UD",
	[UROCE_TR_XRC] = "XRC",
	[UROCE_TR_CNP] = "CNP",
};

uint8_t
uroce_hdr_len(enum uroce_hdr h)
{
	return h < UROCE_HDR_COUNT ? hdr_lens[h] : 0;
}

const char *
uroce_hdr_name(enum uroce_hdr h)
{
	return h < UROCE_HDR_COUNT ? hdr_names[h] : "?";
}

const char *
uroce_transport_name(enum uroce_transport t)
{
	return t < UROCE_TR_COUNT ? transport_names[t] : "?";
}

/* ---- compile-time layout from a header mask ---------------------------- */

#define H(x)		UROCE_HDR_BIT(UROCE_HDR_##x)
#define HAS(m, x)	(((m) >> UROCE_HDR_##x) & 1u)
/* Bytes of header x if present in m and placed before header number lim. */
#define LEN_IF(m, x, lim) \
	(HAS(m, x) * (UROCE_HDR_##x < (lim)) * UROCE_##x##_LEN)
#define UROCE_CNP_LEN	UROCE_CNP_RSVD_LEN
/* Extension-header bytes before header number lim (IBTA 9.2 order). */
#define EXT_BEFORE(m, lim) (LEN_IF(m, XRCETH, lim) + LEN_IF(m, DETH, lim) + \
	LEN_IF(m, RETH, lim) + LEN_IF(m, ATMETH, lim) + LEN_IF(m, AETH, lim) + \
	LEN_IF(m, ATMACK, lim) + LEN_IF(m, IMMDT, lim) + LEN_IF(m, IETH, lim) + \
	LEN_IF(m, CNP, lim))
#define OFF(m, x)	(HAS(m, x) ? UROCE_BTH_LEN + EXT_BEFORE(m, UROCE_HDR_##x) : 0)

#define ROW(code, nm, tr, knd, fl, m) [code] = {			\
	.name = nm,							\
	.valid = true,							\
	.transport = UROCE_TR_##tr,					\
	.kind = UROCE_OP_##knd,						\
	.flags = (fl),							\
	.hdrs = (m),							\
	.hdr_len = UROCE_BTH_LEN + EXT_BEFORE(m, UROCE_HDR_COUNT),	\
	.off = {							\
		[UROCE_HDR_XRCETH] = OFF(m, XRCETH),			\
		[UROCE_HDR_DETH] = OFF(m, DETH),			\
		[UROCE_HDR_RETH] = OFF(m, RETH),			\
		[UROCE_HDR_ATMETH] = OFF(m, ATMETH),			\
		[UROCE_HDR_AETH] = OFF(m, AETH),			\
		[UROCE_HDR_ATMACK] = OFF(m, ATMACK),			\
		[UROCE_HDR_IMMDT] = OFF(m, IMMDT),			\
		[UROCE_HDR_IETH] = OFF(m, IETH),			\
		[UROCE_HDR_CNP] = OFF(m, CNP),				\
	},								\
},

/* ---- the operations, by their 5-bit code (IBTA Table 38) ---------------- */

#define F	UROCE_OPF_FIRST
#define L	UROCE_OPF_LAST
#define O	UROCE_OPF_ONLY
#define P	UROCE_OPF_PAYLOAD
#define I	UROCE_OPF_IMM
#define V	UROCE_OPF_INV
#define RQ	UROCE_OPF_REQ
#define RS	UROCE_OPF_RESP
#define A	UROCE_OPF_NEEDS_ACK
#define E	UROCE_OPF_ECT
/* RC and UC data are ECN-capable: the requests and what carries payload
 * (READ responses); ACKs and atomic ACKs are not (A17.9). */
#define ECT_IF(fl)	(((fl) & (P | RQ)) ? E : 0)

/* SEND and RDMA WRITE: the operations RC, UC and XRC share. */
#define SEND_WRITE_OPS(X)						\
	X(0x00, "SEND_FIRST", SEND, F | P | RQ, 0)			\
	X(0x01, "SEND_MIDDLE", SEND, P | RQ, 0)				\
	X(0x02, "SEND_LAST", SEND, L | P | RQ | A, 0)			\
	X(0x03, "SEND_LAST_WITH_IMMEDIATE", SEND, L | P | I | RQ | A, H(IMMDT)) \
	X(0x04, "SEND_ONLY", SEND, O | P | RQ | A, 0)			\
	X(0x05, "SEND_ONLY_WITH_IMMEDIATE", SEND, O | P | I | RQ | A, H(IMMDT)) \
	X(0x06, "RDMA_WRITE_FIRST", WRITE, F | P | RQ, H(RETH))		\
	X(0x07, "RDMA_WRITE_MIDDLE", WRITE, P | RQ, 0)			\
	X(0x08, "RDMA_WRITE_LAST", WRITE, L | P | RQ | A, 0)		\
	X(0x09, "RDMA_WRITE_LAST_WITH_IMMEDIATE", WRITE, L | P | I | RQ | A, H(IMMDT)) \
	X(0x0a, "RDMA_WRITE_ONLY", WRITE, O | P | RQ | A, H(RETH))	\
	X(0x0b, "RDMA_WRITE_ONLY_WITH_IMMEDIATE", WRITE, O | P | I | RQ | A, \
	  H(RETH) | H(IMMDT))

/* Reliable-only operations: READ, atomics, their responses, invalidate. */
#define RELIABLE_OPS(X)							\
	X(0x0c, "RDMA_READ_REQUEST", READ_REQ, O | RQ | A, H(RETH))	\
	X(0x0d, "RDMA_READ_RESPONSE_FIRST", READ_RESP, F | P | RS, H(AETH)) \
	X(0x0e, "RDMA_READ_RESPONSE_MIDDLE", READ_RESP, P | RS, 0)	\
	X(0x0f, "RDMA_READ_RESPONSE_LAST", READ_RESP, L | P | RS, H(AETH)) \
	X(0x10, "RDMA_READ_RESPONSE_ONLY", READ_RESP, O | P | RS, H(AETH)) \
	X(0x11, "ACKNOWLEDGE", ACK, O | RS, H(AETH))			\
	X(0x12, "ATOMIC_ACKNOWLEDGE", ATOMIC_ACK, O | RS, H(AETH) | H(ATMACK)) \
	X(0x13, "COMPARE_SWAP", CMP_SWAP, O | RQ | A, H(ATMETH))	\
	X(0x14, "FETCH_ADD", FETCH_ADD, O | RQ | A, H(ATMETH))		\
	X(0x16, "SEND_LAST_WITH_INVALIDATE", SEND, L | P | V | RQ | A, H(IETH)) \
	X(0x17, "SEND_ONLY_WITH_INVALIDATE", SEND, O | P | V | RQ | A, H(IETH))

#define RC_ROW(op, nm, k, fl, m) ROW(0x00 | (op), "RC_" nm, RC, k, \
	(fl) | ECT_IF(fl), m)
/* UC: no responses, so nothing is acknowledged (IBTA 9.8). */
#define UC_ROW(op, nm, k, fl, m) ROW(0x20 | (op), "UC_" nm, UC, k, \
	((fl) & ~A) | ECT_IF(fl), m)
/* XRC requests name the target SRQ in an XRCETH; responses do not (IBTA 9.2.5). */
#define XRC_ROW(op, nm, k, fl, m) ROW(0xa0 | (op), "XRC_" nm, XRC, k, fl, \
	(m) | (((fl) & RQ) ? H(XRCETH) : 0))

const struct uroce_opcode_info uroce_opcodes[256] = {
	SEND_WRITE_OPS(RC_ROW)
	RELIABLE_OPS(RC_ROW)
	SEND_WRITE_OPS(UC_ROW)
	ROW(0x64, "UD_SEND_ONLY", UD, SEND, O | P | RQ, H(DETH))
	ROW(0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", UD, SEND, O | P | I | RQ,
	    H(DETH) | H(IMMDT))
	/* RoCEv2 Congestion Notification Packet (A17.9.3): BTH + 16 reserved bytes */
	ROW(0x81, "CNP", CNP, CNP, O, H(CNP))
	SEND_WRITE_OPS(XRC_ROW)
	RELIABLE_OPS(XRC_ROW)
};
