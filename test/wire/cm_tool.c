/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * uroce-cm-tool: the uroce side of the CM MAD cross-check (crosscheck_cm.py).
 *
 *   uroce-cm-tool build OUT.pcap OUT.json [--seed N]
 *	Builds CM MADs of every type uroce handles with random field values
 *	(uroce_cm_encode), each in a RoCEv2 UD SEND to QP1 as the GSI sends
 *	them (BTH destination QP 1, P_Key 0xFFFF, DETH Q_Key 0x80010000,
 *	source QP 1; uroce_wire_build), over IPv4 and IPv6. Writes a pcap
 *	(linktype Ethernet) and a JSON with every field of every MAD by its
 *	name in uroce_cm_fields(); byte fields as hex.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "uroce_cm.h"
#include "uroce_wire.h"

#define FRAME_MAX	512
#define PER_TYPE	6	/* MADs of each type and IP version */

static uint64_t rng_state;

static uint64_t
rnd64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void
rnd_fill(uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)rnd64();
}

static void
put_bits(uint8_t *p, unsigned int pos, unsigned int w, unsigned int v)
{
	for (unsigned int i = 0; i < w; i++) {
		uint8_t m = (uint8_t)(1u << (7 - (pos + i) % 8));

		if ((v >> (w - 1 - i)) & 1)
			p[(pos + i) / 8] |= m;
		else
			p[(pos + i) / 8] &= (uint8_t)~m;
	}
}

#define H UROCE_MAD_HDR_LEN

/*
 * A random CM MAD of @attr: random bytes, a CM header, the fields with
 * reserved values set within range; decoded, so @m holds what it says.
 */
static int
random_mad(uint16_t attr, struct uroce_cm_msg *m, const union uroce_gid *s,
	   const union uroce_gid *d, bool cma)
{
	uint8_t mad[UROCE_MAD_LEN];
	int ret;

	rnd_fill(mad, sizeof(mad));
	mad[0] = UROCE_MAD_BASE_VERSION;
	mad[1] = UROCE_MGMT_CLASS_CM;
	mad[2] = UROCE_CM_CLASS_VERSION;
	mad[3] = UROCE_MAD_METHOD_SEND;
	mad[16] = (uint8_t)(attr >> 8);
	mad[17] = (uint8_t)attr;
	switch (attr) {
	case UROCE_CM_ATTR_REQ:
		put_bits(mad, (H + 50) * 8, 4, 1 + (unsigned int)(rnd64() % 5));
		break;
	case UROCE_CM_ATTR_MRA:
	case UROCE_CM_ATTR_REJ:
		put_bits(mad, (H + 8) * 8, 2, (unsigned int)(rnd64() % 3));
		if (attr == UROCE_CM_ATTR_REJ)
			put_bits(mad, (H + 9) * 8, 7, (unsigned int)(rnd64() % 73));
		break;
	case UROCE_CM_ATTR_SIDR_REP:
		mad[H + 4] = (uint8_t)(rnd64() % 6);
		mad[H + 5] = (uint8_t)(rnd64() % 73);
		break;
	}
	ret = uroce_cm_decode(mad, sizeof(mad), m);
	if (ret != 0 || attr != UROCE_CM_ATTR_REQ)
		return ret;
	/* A REQ's primary path carries the frame's GIDs, as on RoCE. */
	memcpy(m->req.primary.local_gid, s->raw, 16);
	memcpy(m->req.primary.remote_gid, d->raw, 16);
	if (cma) {	/* an rdma_cm REQ: IP service ID, CMA header */
		struct uroce_cma_hdr h = { .ip_version = uroce_gid_is_v4(s) ? 4 : 6,
					   .src_port = (uint16_t)rnd64() };
		uint8_t user[UROCE_CMA_REQ_USER_MAX];

		rnd_fill(user, sizeof(user));
		memcpy(h.src_addr, s->raw, 16);
		memcpy(h.dst_addr, d->raw, 16);
		m->req.service_id = uroce_cma_service_id(UROCE_RDMA_PS_TCP,
							 (uint16_t)rnd64());
		return uroce_cma_pack(m, &h, user, sizeof(user));
	}
	return 0;
}

static void
rand_gid(union uroce_gid *g, bool v6)
{
	if (!v6) {
		uroce_gid_from_v4(g, rte_cpu_to_be_32((uint32_t)(10u << 24 |
						      (rnd64() & 0xffffff))));
		return;
	}
	rnd_fill(g->raw, 16);
	g->raw[0] = 0xfd;
}

static void
json_field(void *arg, const char *name, uint64_t v, const uint8_t *b, size_t n)
{
	FILE *o = arg;

	if (b == NULL) {
		fprintf(o, ", \"%s\": %" PRIu64, name, v);
		return;
	}
	fprintf(o, ", \"%s\": \"", name);
	for (size_t i = 0; i < n; i++)
		fprintf(o, "%02x", b[i]);
	fputc('"', o);
}

static int
pcap_global(FILE *f)
{
	const uint32_t g[6] = { 0xa1b2c3d4u, 2 | 4u << 16, 0, 0, 65535, 1 };

	return fwrite(g, sizeof(g), 1, f) == 1 ? 0 : -1;
}

static int
pcap_record(FILE *f, uint32_t index, const uint8_t *frame, uint32_t len)
{
	const uint32_t r[4] = { 1767225600u + index, 0, len, len };

	return fwrite(r, sizeof(r), 1, f) == 1 && fwrite(frame, len, 1, f) == 1 ? 0 : -1;
}

static int
build_one(FILE *pcap, FILE *json, uint32_t index, uint16_t attr, bool v6, bool cma)
{
	struct uroce_bth_fields bth = {
		.opcode = UROCE_OPC_UD_SEND_ONLY, .pkey = UROCE_DEFAULT_PKEY,
		.dqpn = UROCE_GSI_QPN, .psn = (uint32_t)rnd64() & 0xffffff,
	};
	struct uroce_ext_fields ext = {
		.deth = { .qkey = UROCE_GSI_QKEY, .sqpn = UROCE_GSI_QPN },
	};
	struct uroce_l2l3 l = { .dmac = { 0x02, 0, 0, 0, 0, 2 },
				.smac = { 0x02, 0, 0, 0, 0, 1 }, .hop_limit = 64 };
	uint8_t mad[UROCE_MAD_LEN], frame[FRAME_MAX];
	struct uroce_cm_msg m;
	uint32_t len;

	rand_gid(&l.sgid, v6);
	rand_gid(&l.dgid, v6);
	l.udp_sport = uroce_wire_udp_sport(UROCE_GSI_QPN, UROCE_GSI_QPN);
	if (random_mad(attr, &m, &l.sgid, &l.dgid, cma) != 0 ||
	    uroce_cm_encode(&m, mad) != 0) {
		fprintf(stderr, "cannot build a %s\n", uroce_cm_attr_str(attr));
		return -1;
	}
	len = uroce_wire_build(frame, sizeof(frame), &l, &bth, &ext, mad, sizeof(mad));
	if (len == 0 || pcap_record(pcap, index, frame, len) < 0)
		return -1;
	fprintf(json, "%s\n  {\"index\": %" PRIu32 ", \"name\": \"%s\", \"ip_ver\": %d"
		", \"cma\": %d, \"psn\": %" PRIu32 ", \"mad\": \"", index ? "," : "",
		index, uroce_cm_attr_str(attr), v6 ? 6 : 4, cma, bth.psn);
	for (size_t i = 0; i < sizeof(mad); i++)
		fprintf(json, "%02x", mad[i]);
	fputc('"', json);
	uroce_cm_fields(&m, json_field, json);
	fputc('}', json);
	return 0;
}

static int
build(const char *pcap_path, const char *json_path, uint64_t seed)
{
	static const uint16_t attrs[] = {
		UROCE_CM_ATTR_REQ, UROCE_CM_ATTR_MRA, UROCE_CM_ATTR_REJ,
		UROCE_CM_ATTR_REP, UROCE_CM_ATTR_RTU, UROCE_CM_ATTR_DREQ,
		UROCE_CM_ATTR_DREP, UROCE_CM_ATTR_SIDR_REQ, UROCE_CM_ATTR_SIDR_REP,
	};
	FILE *pcap = fopen(pcap_path, "wb"), *json = fopen(json_path, "w");
	uint32_t index = 0;
	int ret = -1;

	rng_state = seed;
	if (pcap == NULL || json == NULL || pcap_global(pcap) < 0) {
		fprintf(stderr, "cannot create output: %s\n", strerror(errno));
		goto out;
	}
	fprintf(json, "{\"seed\": %" PRIu64 ", \"frames\": [", seed);
	for (size_t a = 0; a < sizeof(attrs) / sizeof(attrs[0]); a++)
		for (int v6 = 0; v6 < 2; v6++)
			for (int n = 0; n < PER_TYPE; n++)
				if (build_one(pcap, json, index++, attrs[a], v6,
					      n % 2 == 1) < 0)
					goto out;
	fprintf(json, "\n]}\n");
	ret = 0;
out:
	if (pcap != NULL && fclose(pcap) != 0)
		ret = -1;
	if (json != NULL && fclose(json) != 0)
		ret = -1;
	return ret;
}

int
main(int argc, char **argv)
{
	uint64_t seed = 36;

	if (argc == 6 && strcmp(argv[4], "--seed") == 0)
		seed = strtoull(argv[5], NULL, 0);
	else if (argc != 4)
		goto usage;
	if (strcmp(argv[1], "build") != 0)
		goto usage;
	return build(argv[2], argv[3], seed) == 0 ? 0 : 1;
usage:
	fprintf(stderr, "usage: uroce-cm-tool build OUT.pcap OUT.json [--seed N]\n");
	return 2;
}
