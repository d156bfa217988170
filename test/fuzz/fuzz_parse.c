/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * libFuzzer target for the RoCEv2 frame parser. Every input is parsed twice:
 * with the ICRC checked (what a port does) and without (so that mutations get
 * past the CRC into the transport headers). A frame that parses is then read
 * the way the engine reads it: every extension header, every payload byte;
 * and uroce_wire_peek_dqpn() must find the QPN the parser found.
 * ASan catches any read outside the input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Where consume() puts what it read, so that the reads are not optimised out. */
volatile uint32_t fuzz_sink;

static void
consume(const struct uroce_pkt *k)
{
	struct uroce_ext_fields ext;
	const uint8_t *p = uroce_pkt_payload(k);
	uint32_t i, sum = 0;

	uroce_wire_ext_get(k, &ext);
	for (i = 0; i < k->payload_len; i++)
		sum += p[i];
	fuzz_sink = sum + ext.reth.len + ext.deth.qkey;
	if (k->payload_off + k->payload_len + k->bth.pad + UROCE_ICRC_LEN != k->frame_len)
		abort();	/* the parser's lengths must add up */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uroce_pkt k;
	uint8_t *copy;
	uint32_t qpn;

	if (size > 65536 + 64)
		return 0;
	/* An exact-size heap copy, so that ASan sees every byte past the end. */
	copy = malloc(size ? size : 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	if (uroce_wire_parse(copy, (uint32_t)size, 0, &k) == UROCE_WIRE_OK)
		consume(&k);
	/* The peek reads within the frame for any input, and finds the
	 * parser's QPN in every frame the parser takes. */
	qpn = uroce_wire_peek_dqpn(copy, (uint32_t)size);
	if (uroce_wire_parse(copy, (uint32_t)size, UROCE_PARSE_NO_ICRC, &k) == UROCE_WIRE_OK) {
		consume(&k);
		if (qpn != k.bth.dqpn)
			abort();
	}
	free(copy);
	return 0;
}
