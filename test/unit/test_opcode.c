/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Invariants of the opcode table. The expectations come from an independent
 * list (IBTA Table 38 codes) and from the opcode names, so that a flag or
 * header bit that disagrees with its name cannot hide.
 */
#include <stdlib.h>
#include <string.h>

#include "uroce_test.h"
#include "uroce_wire.h"

/* IBTA Table 38: which codes exist in each transport (RD is not supported). */
static bool
ibta_valid(unsigned int c)
{
	unsigned int op = c & 0x1f;

	switch (c >> 5) {
	case 0: /* RC */
	case 5: /* XRC */
		return op <= 0x14 || op == 0x16 || op == 0x17;
	case 1: /* UC */
		return op <= 0x0b;
	case 3: /* UD */
		return op == 0x04 || op == 0x05;
	case 4: /* CNP, A17.9.3 */
		return c == 0x81;
	default:
		return false;
	}
}

static const char *const prefixes[UROCE_TR_COUNT] = {
	[UROCE_TR_RC] = "RC_", [UROCE_TR_UC] = "UC_", [UROCE_TR_UD] = "UD_",
	[UROCE_TR_XRC] = "XRC_", [UROCE_TR_CNP] = "CNP",
};

static const unsigned int transport_of_prefix[8] = {
	UROCE_TR_RC, UROCE_TR_UC, 99, UROCE_TR_UD, UROCE_TR_CNP, UROCE_TR_XRC, 99, 99,
};

static bool
has(const char *name, const char *word)
{
	return strstr(name, word) != NULL;
}

static bool
hdr(const struct uroce_opcode_info *o, enum uroce_hdr h)
{
	return o->hdrs & UROCE_HDR_BIT(h);
}

static void
check_layout(unsigned int c, const struct uroce_opcode_info *o)
{
	unsigned int h, expect = UROCE_BTH_LEN;

	UT_CHECK_EQ(o->hdrs >> UROCE_HDR_COUNT, 0);
	for (h = 0; h < UROCE_HDR_COUNT; h++) {
		if (hdr(o, h)) {
			UT_CHECK_EQ(o->off[h], expect);
			expect += uroce_hdr_len(h);
		} else {
			UT_CHECK_EQ(o->off[h], 0);
		}
	}
	UT_CHECK_EQ(o->hdr_len, expect);
	UT_NOTE("layout of opcode 0x%02x %s", c, o->name);
}

/* FIRST/MIDDLE/LAST/ONLY, IMM and INV flags agree with the name. */
static void
check_flags_vs_name(const struct uroce_opcode_info *o)
{
	const char *n = o->name;
	uint16_t pos = o->flags & UROCE_OPF_ONLY;

	if (has(n, "_ONLY") || o->kind == UROCE_OP_ACK || o->kind == UROCE_OP_ATOMIC_ACK ||
	    o->kind == UROCE_OP_CMP_SWAP || o->kind == UROCE_OP_FETCH_ADD ||
	    o->kind == UROCE_OP_READ_REQ || o->kind == UROCE_OP_CNP)
		UT_CHECK_EQ(pos, UROCE_OPF_ONLY);	/* ONLY implies FIRST and LAST */
	else if (has(n, "_FIRST"))
		UT_CHECK_EQ(pos, UROCE_OPF_FIRST);
	else if (has(n, "_MIDDLE"))
		UT_CHECK_EQ(pos, 0);
	else if (has(n, "_LAST"))
		UT_CHECK_EQ(pos, UROCE_OPF_LAST);
	else
		UT_CHECK(!"name says nothing about its position");
	UT_CHECK_EQ(!!(o->flags & UROCE_OPF_IMM), has(n, "WITH_IMMEDIATE"));
	UT_CHECK_EQ(!!(o->flags & UROCE_OPF_IMM), hdr(o, UROCE_HDR_IMMDT));
	UT_CHECK_EQ(!!(o->flags & UROCE_OPF_INV), has(n, "WITH_INVALIDATE"));
	UT_CHECK_EQ(!!(o->flags & UROCE_OPF_INV), hdr(o, UROCE_HDR_IETH));
	UT_NOTE("flags of %s", n);
}

/* Each extension header appears exactly where IBTA 9.2 puts it. */
static void
check_headers_vs_kind(const struct uroce_opcode_info *o)
{
	bool first = o->flags & UROCE_OPF_FIRST, last = o->flags & UROCE_OPF_LAST;
	bool req = o->flags & UROCE_OPF_REQ;

	UT_CHECK_EQ(hdr(o, UROCE_HDR_RETH),
		    (o->kind == UROCE_OP_WRITE && first) || o->kind == UROCE_OP_READ_REQ);
	UT_CHECK_EQ(hdr(o, UROCE_HDR_AETH),
		    o->kind == UROCE_OP_ACK || o->kind == UROCE_OP_ATOMIC_ACK ||
		    (o->kind == UROCE_OP_READ_RESP && (first || last)));
	UT_CHECK_EQ(hdr(o, UROCE_HDR_ATMETH),
		    o->kind == UROCE_OP_CMP_SWAP || o->kind == UROCE_OP_FETCH_ADD);
	UT_CHECK_EQ(hdr(o, UROCE_HDR_ATMACK), o->kind == UROCE_OP_ATOMIC_ACK);
	UT_CHECK_EQ(hdr(o, UROCE_HDR_XRCETH), o->transport == UROCE_TR_XRC && req);
	UT_CHECK_EQ(hdr(o, UROCE_HDR_DETH), o->transport == UROCE_TR_UD);
	UT_CHECK_EQ(hdr(o, UROCE_HDR_CNP), o->kind == UROCE_OP_CNP);
	UT_CHECK_EQ(!!(o->flags & UROCE_OPF_PAYLOAD),
		    o->kind == UROCE_OP_SEND || o->kind == UROCE_OP_WRITE ||
		    o->kind == UROCE_OP_READ_RESP);
	UT_NOTE("headers of %s", o->name);
}

/* Requests and responses; only reliable requests that end a message are answered. */
static void
check_direction(const struct uroce_opcode_info *o)
{
	bool req = o->flags & UROCE_OPF_REQ, resp = o->flags & UROCE_OPF_RESP;
	bool reliable = o->transport == UROCE_TR_RC || o->transport == UROCE_TR_XRC;
	bool is_resp_kind = o->kind == UROCE_OP_ACK || o->kind == UROCE_OP_ATOMIC_ACK ||
			    o->kind == UROCE_OP_READ_RESP;

	UT_CHECK(!(req && resp));
	UT_CHECK_EQ(resp, is_resp_kind);
	UT_CHECK_EQ(req, !is_resp_kind && o->kind != UROCE_OP_CNP);
	UT_CHECK_EQ(!!(o->flags & UROCE_OPF_NEEDS_ACK),
		    reliable && req && (o->flags & UROCE_OPF_LAST));
	UT_NOTE("direction of %s", o->name);
}

static void
check_opcode(unsigned int c)
{
	const struct uroce_opcode_info *o = uroce_opcode((uint8_t)c);

	UT_CHECK_EQ(o->valid, ibta_valid(c));
	if (!o->valid) {
		UT_CHECK(o->name == NULL);
		return;
	}
	if (!UT_CHECK(o->name != NULL))
		return;
	UT_CHECK_EQ(o->transport, transport_of_prefix[c >> 5]);
	UT_CHECK(strncmp(o->name, prefixes[o->transport],
			 strlen(prefixes[o->transport])) == 0);
	UT_NOTE("opcode 0x%02x %s", c, o->name);
	check_layout(c, o);
	check_flags_vs_name(o);
	check_headers_vs_kind(o);
	check_direction(o);
}

/* RC, UC and XRC rows of the same 5-bit operation carry the same name after the prefix. */
static void
check_siblings(void)
{
	unsigned int op;

	for (op = 0; op < 32; op++) {
		const struct uroce_opcode_info *rc = uroce_opcode((uint8_t)op);
		const struct uroce_opcode_info *uc = uroce_opcode((uint8_t)(0x20 | op));
		const struct uroce_opcode_info *xrc = uroce_opcode((uint8_t)(0xa0 | op));

		if (rc->valid && uc->valid)
			UT_CHECK(strcmp(rc->name + 3, uc->name + 3) == 0);
		if (rc->valid && xrc->valid)
			UT_CHECK(strcmp(rc->name + 3, xrc->name + 4) == 0);
		UT_CHECK_EQ(rc->valid, xrc->valid);
	}
}

static void
check_unique_names(void)
{
	unsigned int a, b;

	for (a = 0; a < 256; a++)
		for (b = a + 1; b < 256; b++)
			if (uroce_opcodes[a].valid && uroce_opcodes[b].valid)
				UT_CHECK(strcmp(uroce_opcodes[a].name,
						uroce_opcodes[b].name) != 0);
}

int
main(void)
{
	unsigned int c, n = 0;

	for (c = 0; c < 256; c++) {
		check_opcode(c);
		n += uroce_opcodes[c].valid;
	}
	/* RC 23 + UC 12 + UD 2 + CNP 1 + XRC 23 */
	UT_CHECK_EQ(n, 61);
	check_siblings();
	check_unique_names();
	UT_CHECK(strcmp(uroce_opcode(UROCE_OPC_CNP)->name, "CNP") == 0);
	UT_CHECK_EQ(uroce_opcode(UROCE_OPC_RC_WRITE_ONLY_IMM)->hdr_len, 12 + 16 + 4);
	UT_CHECK_EQ(uroce_opcode(0xb3)->hdr_len, 12 + 4 + 28);	/* XRC CmpSwap */
	UT_CHECK_EQ(uroce_opcode(UROCE_OPC_UD_SEND_ONLY_IMM)->hdr_len, 12 + 8 + 4);
	return ut_summary();
}
