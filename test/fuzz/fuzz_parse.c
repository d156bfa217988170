/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * libFuzzer target for the RoCEv2 frame parser. Every input is parsed twice:
 * with the ICRC checked (what a port does) and without (so that mutations get
 * past the CRC into the transport headers). A frame that parses is then read
 * the way the engine reads it: every extension header, every payload byte;
 * and uroce_wire_peek_dqpn() must find the QPN the parser found. The same
 * bytes, as any Ethernet frame, go through what flow steering reads of a
 * frame a raw QP may get (uroce_flow_key_get(), an IPv6 + TCP rule, the RSS
 * hash over IPv4 and IPv6 tuples).
 * ASan catches any read outside the input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_flow.h"
#include "uroce_rss.h"
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

/* Flow steering's view of the frame; the hash of a v4 and a v6 tuple. */
static void
steer(const uint8_t *d, uint32_t len)
{
	static const struct uroce_rss_conf c4 = {
		.key = { 0x2cc681d1, 0x5bdbf4f7, 0xfca28319, 0xdb1a3e94 },
		.fields = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 |
			  IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP,
	};
	static const struct uroce_rss_conf c6 = {
		.key = { 0x6d5a56da, 0x255b0ec2, 0x4167253d, 0x43a38fb0 },
		.fields = IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6 |
			  IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP,
	};
	struct uroce_flow_rule r;
	struct uroce_flow_key k;

	memset(&r, 0, sizeof(r));
	r.type = IBV_FLOW_ATTR_NORMAL;
	r.specs = UROCE_FLOW_IPV6 | UROCE_FLOW_TCP;
	r.ip6_mask.next_hdr = 0xff;
	r.ip6.next_hdr = 6;
	uroce_flow_key_get(d, len, &k);
	fuzz_sink += uroce_flow_rule_match(&r, &k) + uroce_rss_hash(&c4, &k) +
		     uroce_rss_hash(&c6, &k);
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
	steer(copy, (uint32_t)size);
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
