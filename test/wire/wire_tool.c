/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * uroce-wire-tool: the uroce side of the wire cross-checks
 * (crosscheck_scapy.py, crosscheck_tshark.py).
 *
 *   uroce-wire-tool build-all OUT.pcap OUT.json [--seed N] [--ipv6] [--vlan]
 *		[--ect]
 *	Builds frames with uroce_wire_build() for every valid opcode, with
 *	random field values, and writes them to a pcap file (linktype
 *	Ethernet) and a JSON file that lists the values used for each frame.
 *	--ect builds them on a path with congestion control: the JSON then
 *	gives the tclass this tool expects on the wire (ECT(0) for RC and UC
 *	data and requests, A17.9), and CNPs are built by
 *	uroce_wire_cnp_bth() (BECN, PSN 0, no other flag).
 *
 *   uroce-wire-tool parse IN.pcap
 *	Parses every frame with uroce_wire_parse() and prints one JSON object
 *	per line: the verdict and, for good frames, the decoded fields.
 *
 * Both outputs describe a frame with the same keys, so a script can compare
 * what was built with what was parsed. Numbers are host-order values of the
 * wire fields; "imm" is the immediate data read as a big-endian number; "icrc"
 * is the 4 ICRC bytes read little-endian (the order they are sent in).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_wire.h"

#define FRAME_MAX		2048
#define PAYLOAD_MAX		1500
#define FRAMES_PAYLOAD_OP	5	/* one without payload, then pad 0..3 */
#define FRAMES_OTHER_OP		2

#define PCAP_MAGIC		0xa1b2c3d4u
#define PCAP_MAGIC_NS		0xa1b23c4du
#define PCAP_LINKTYPE_ETHER	1
#define PCAP_SNAPLEN		65535u

/* ---------------------------------------------------------------------------
 * Random numbers (splitmix64): the same seed gives the same frames.
 */
static uint64_t rng_state;

static uint64_t
rnd64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A random value of @bits bits (1..64). */
static uint64_t
rnd_bits(unsigned int bits)
{
	return bits >= 64 ? rnd64() : rnd64() & ((1ull << bits) - 1);
}

/* A random value in [lo, hi]. */
static uint32_t
rnd_range(uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(rnd64() % ((uint64_t)hi - lo + 1));
}

static void
rnd_fill(uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)rnd64();
}

/* ---------------------------------------------------------------------------
 * Classic pcap files (microsecond or nanosecond, either byte order on input).
 */
struct pcap_global {
	uint32_t magic;
	uint16_t major, minor;
	int32_t thiszone;
	uint32_t sigfigs, snaplen, linktype;
};

struct pcap_record {
	uint32_t ts_sec, ts_frac, incl_len, orig_len;
};

static int
pcap_write_global(FILE *f)
{
	struct pcap_global g = {
		.magic = PCAP_MAGIC, .major = 2, .minor = 4,
		.snaplen = PCAP_SNAPLEN, .linktype = PCAP_LINKTYPE_ETHER,
	};

	return fwrite(&g, sizeof(g), 1, f) == 1 ? 0 : -1;
}

static int
pcap_write_record(FILE *f, uint32_t index, const uint8_t *frame, uint32_t len)
{
	struct pcap_record r = {
		.ts_sec = 1767225600u + index,	/* 2026-01-01, one frame a second */
		.incl_len = len, .orig_len = len,
	};

	if (fwrite(&r, sizeof(r), 1, f) != 1 || fwrite(frame, len, 1, f) != 1)
		return -1;
	return 0;
}

static uint32_t
swap32_if(bool swap, uint32_t v)
{
	return swap ? __builtin_bswap32(v) : v;
}

/* Checks the global header; sets *swap when the file is of the other endianness. */
static int
pcap_read_global(FILE *f, bool *swap)
{
	struct pcap_global g;
	uint32_t magic;

	if (fread(&g, sizeof(g), 1, f) != 1)
		return -1;
	*swap = g.magic != PCAP_MAGIC && g.magic != PCAP_MAGIC_NS;
	magic = swap32_if(*swap, g.magic);
	if (magic != PCAP_MAGIC && magic != PCAP_MAGIC_NS)
		return -1;
	return swap32_if(*swap, g.linktype) == PCAP_LINKTYPE_ETHER ? 0 : -1;
}

/*
 * Reads the next record into a buffer of exactly its length, so a sanitizer
 * sees any read past the frame. Returns 1 with a frame, 0 at the end, -1 on error.
 */
static int
pcap_read_record(FILE *f, bool swap, uint8_t **frame, uint32_t *len)
{
	struct pcap_record r;

	if (fread(&r, sizeof(r), 1, f) != 1)
		return feof(f) ? 0 : -1;
	*len = swap32_if(swap, r.incl_len);
	if (*len > PCAP_SNAPLEN)
		return -1;
	*frame = malloc(*len ? *len : 1);
	if (*frame == NULL)
		return -1;
	if (*len && fread(*frame, *len, 1, f) != 1) {
		free(*frame);
		return -1;
	}
	return 1;
}

/* ---------------------------------------------------------------------------
 * JSON output.
 */

/* Everything a frame is described by, in both outputs. */
struct frame_desc {
	struct uroce_l2l3 l2l3;		/* MACs are used by build-all only */
	uint8_t ip_ver;
	struct uroce_bth_fields bth;
	const struct uroce_opcode_info *op;
	struct uroce_ext_fields ext;
	const uint8_t *payload;
	uint32_t payload_len;
	uint32_t icrc;
	uint32_t frame_len;
	bool has_expect;		/* --ect: expect_tclass is the wire's */
	uint8_t expect_tclass;
};

static void
json_hex(FILE *o, const char *key, const uint8_t *buf, size_t len)
{
	size_t i;

	fprintf(o, ", \"%s\": \"", key);
	for (i = 0; i < len; i++)
		fprintf(o, "%02x", buf[i]);
	fputc('"', o);
}

static void
json_mac(FILE *o, const char *key, const uint8_t mac[6])
{
	fprintf(o, ", \"%s\": \"%02x:%02x:%02x:%02x:%02x:%02x\"", key,
		mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
}

/* An IPv4 GID as a dotted quad, any other as an IPv6 address. */
static void
json_addr(FILE *o, const char *key, const union uroce_gid *gid)
{
	char s[INET6_ADDRSTRLEN];
	rte_be32_t v4;

	if (uroce_gid_is_v4(gid)) {
		v4 = uroce_gid_to_v4(gid);
		inet_ntop(AF_INET, &v4, s, sizeof(s));
	} else {
		inet_ntop(AF_INET6, gid->raw, s, sizeof(s));
	}
	fprintf(o, ", \"%s\": \"%s\"", key, s);
}

static void
json_bth(FILE *o, const struct uroce_bth_fields *b)
{
	fprintf(o, ", \"opcode\": %u, \"se\": %d, \"mig\": %d, \"pad\": %u"
		", \"tver\": %u, \"pkey\": %u, \"fecn\": %d, \"becn\": %d"
		", \"dqpn\": %" PRIu32 ", \"ackreq\": %d, \"psn\": %" PRIu32,
		b->opcode, b->se, b->mig, b->pad, b->tver, b->pkey, b->fecn,
		b->becn, b->dqpn, b->ackreq, b->psn);
}

/* JSON keys of the extension headers (fixed here, for the scripts). */
static const char *const ext_key[UROCE_HDR_COUNT] = {
	[UROCE_HDR_XRCETH] = "xrceth",
	[UROCE_HDR_DETH] = "deth",
	[UROCE_HDR_RETH] = "reth",
	[UROCE_HDR_ATMETH] = "atomiceth",
	[UROCE_HDR_AETH] = "aeth",
	[UROCE_HDR_ATMACK] = "atomicacketh",
	[UROCE_HDR_IMMDT] = "immdt",
	[UROCE_HDR_IETH] = "ieth",
	[UROCE_HDR_CNP] = "cnp",
};

/* Prints one extension header's fields as a JSON object (no leading comma). */
static void
json_ext_hdr(FILE *o, enum uroce_hdr h, const struct uroce_ext_fields *e)
{
	fprintf(o, "\"%s\": {", ext_key[h]);
	switch (h) {
	case UROCE_HDR_XRCETH:
		fprintf(o, "\"srqn\": %" PRIu32, e->xrc_srqn);
		break;
	case UROCE_HDR_DETH:
		fprintf(o, "\"qkey\": %" PRIu32 ", \"sqpn\": %" PRIu32,
			e->deth.qkey, e->deth.sqpn);
		break;
	case UROCE_HDR_RETH:
		fprintf(o, "\"va\": %" PRIu64 ", \"rkey\": %" PRIu32
			", \"len\": %" PRIu32, e->reth.va, e->reth.rkey, e->reth.len);
		break;
	case UROCE_HDR_ATMETH:
		fprintf(o, "\"va\": %" PRIu64 ", \"rkey\": %" PRIu32
			", \"swap_add\": %" PRIu64 ", \"cmp\": %" PRIu64,
			e->atmeth.va, e->atmeth.rkey, e->atmeth.swap_add,
			e->atmeth.cmp);
		break;
	case UROCE_HDR_AETH:
		fprintf(o, "\"syndrome\": %u, \"msn\": %" PRIu32,
			e->aeth.syndrome, e->aeth.msn);
		break;
	case UROCE_HDR_ATMACK:
		fprintf(o, "\"orig\": %" PRIu64, e->atmack_orig);
		break;
	case UROCE_HDR_IMMDT:
		fprintf(o, "\"imm\": %" PRIu32, rte_be_to_cpu_32(e->imm));
		break;
	case UROCE_HDR_IETH:
		fprintf(o, "\"rkey\": %" PRIu32, e->ieth_rkey);
		break;
	default:	/* the CNP's reserved bytes have no fields */
		break;
	}
	fputc('}', o);
}

/* "ext": one object per extension header the opcode has, keyed by its name. */
static void
json_ext(FILE *o, const struct uroce_opcode_info *op,
	 const struct uroce_ext_fields *e)
{
	const char *sep = "";
	unsigned int h;

	fprintf(o, ", \"ext\": {");
	for (h = 0; h < UROCE_HDR_COUNT; h++) {
		if (!(op->hdrs & UROCE_HDR_BIT(h)))
			continue;
		fputs(sep, o);
		json_ext_hdr(o, h, e);
		sep = ", ";
	}
	fputc('}', o);
}

static void
json_l3(FILE *o, const struct frame_desc *d)
{
	const struct uroce_l2l3 *p = &d->l2l3;

	fprintf(o, ", \"vlan\": %d, \"vlan_tci\": %u, \"ip_ver\": %u",
		p->vlan, p->vlan_tci, d->ip_ver);
	json_addr(o, "src", &p->sgid);
	json_addr(o, "dst", &p->dgid);
	fprintf(o, ", \"tclass\": %u, \"hop_limit\": %u, \"flow_label\": %" PRIu32
		", \"udp_sport\": %u", d->has_expect ? d->expect_tclass : p->tclass,
		p->hop_limit, p->flow_label, p->udp_sport);
}

/* The keys both subcommands print for a frame (each preceded by ", "). */
static void
json_frame(FILE *o, const struct frame_desc *d)
{
	fprintf(o, ", \"name\": \"%s\"", d->op->name);
	json_l3(o, d);
	json_bth(o, &d->bth);
	json_ext(o, d->op, &d->ext);
	fprintf(o, ", \"payload_len\": %" PRIu32, d->payload_len);
	json_hex(o, "payload", d->payload, d->payload_len);
	fprintf(o, ", \"icrc\": %" PRIu32 ", \"frame_len\": %" PRIu32,
		d->icrc, d->frame_len);
}

/* ---------------------------------------------------------------------------
 * build-all
 */
struct build_opts {
	const char *pcap_path, *json_path;
	uint64_t seed;
	bool ipv6, vlan, ect;
};

static void
rand_unicast_mac(uint8_t mac[6])
{
	rnd_fill(mac, 6);
	mac[0] &= 0xfe;		/* individual address */
}

static void
rand_gid(union uroce_gid *gid, bool ipv6)
{
	if (!ipv6) {	/* a unicast IPv4 address, first octet 1..223 */
		uroce_gid_from_v4(gid, rte_cpu_to_be_32(rnd_range(1, 223) << 24 |
							(uint32_t)rnd_bits(24)));
		return;
	}
	rnd_fill(gid->raw, sizeof(gid->raw));
	gid->raw[0] = 0xfd;	/* unique local, never IPv4-mapped */
}

static void
rand_l2l3(struct uroce_l2l3 *p, const struct build_opts *opt)
{
	memset(p, 0, sizeof(*p));
	rand_unicast_mac(p->dmac);
	rand_unicast_mac(p->smac);
	p->vlan = opt->vlan;
	if (p->vlan)	/* random PCP and DEI, VID 1..4094 */
		p->vlan_tci = (uint16_t)(rnd_bits(4) << 12 | rnd_range(1, 4094));
	rand_gid(&p->sgid, opt->ipv6);
	rand_gid(&p->dgid, opt->ipv6);
	p->tclass = (uint8_t)rnd_bits(8);
	p->hop_limit = (uint8_t)rnd_range(1, 255);
	p->flow_label = opt->ipv6 ? (uint32_t)rnd_bits(20) : 0;
	p->udp_sport = (uint16_t)rnd_range(UROCE_UDP_SPORT_MIN, 0xffff);
}

static void
rand_bth(struct uroce_bth_fields *b, uint8_t opcode, uint32_t payload_len)
{
	memset(b, 0, sizeof(*b));
	b->opcode = opcode;
	b->se = rnd_bits(1);
	b->mig = rnd_bits(1);
	b->fecn = rnd_bits(1);
	b->becn = rnd_bits(1);
	b->ackreq = rnd_bits(1);
	b->pad = -payload_len & 3u;	/* what the builder must write */
	b->tver = UROCE_BTH_TVER;
	b->pkey = (uint16_t)rnd_bits(16);
	b->dqpn = (uint32_t)rnd_bits(24);
	b->psn = (uint32_t)rnd_bits(24);
}

static void
rand_ext(struct uroce_ext_fields *e)
{
	e->reth.va = rnd64();
	e->reth.rkey = (uint32_t)rnd_bits(32);
	e->reth.len = (uint32_t)rnd_bits(32);
	e->aeth.syndrome = (uint8_t)rnd_bits(8);
	e->aeth.msn = (uint32_t)rnd_bits(24);
	e->atmeth.va = rnd64();
	e->atmeth.rkey = (uint32_t)rnd_bits(32);
	e->atmeth.swap_add = rnd64();
	e->atmeth.cmp = rnd64();
	e->atmack_orig = rnd64();
	e->imm = (rte_be32_t)rnd_bits(32);
	e->ieth_rkey = (uint32_t)rnd_bits(32);
	e->deth.qkey = (uint32_t)rnd_bits(32);
	e->deth.sqpn = (uint32_t)rnd_bits(24);
	e->xrc_srqn = (uint32_t)rnd_bits(24);
}

/* Payload length of the @nth frame of an opcode: 0, then pad 0, 3, 2, 1. */
static uint32_t
pick_payload_len(const struct uroce_opcode_info *op, unsigned int nth)
{
	if (!(op->flags & UROCE_OPF_PAYLOAD) || nth == 0)
		return 0;
	return 4 * rnd_range(0, PAYLOAD_MAX / 4 - 1) + (nth - 1) % 4;
}

/* --ect: the path asks for ECT; the tclass the frame must carry is worked
 * out here from the opcode's transport and kind, not from the builder's
 * flag, and the JSON records it (the build then leaves d->l2l3.ect set,
 * which only the frame, not the JSON, reflects). */
static void
ect_path(struct frame_desc *d, uint8_t opcode)
{
	const struct uroce_opcode_info *op = uroce_opcode(opcode);
	bool data = (op->transport == UROCE_TR_RC || op->transport == UROCE_TR_UC) &&
		    op->kind != UROCE_OP_ACK && op->kind != UROCE_OP_ATOMIC_ACK;

	d->l2l3.ect = true;
	if (opcode == UROCE_OPC_CNP)
		uroce_wire_cnp_bth(&d->bth, d->bth.dqpn, d->bth.pkey);
	d->bth.tver = UROCE_BTH_TVER;
	if (data)
		d->expect_tclass = (uint8_t)((d->l2l3.tclass & ~UROCE_ECN_MASK) |
					     UROCE_ECN_ECT0);
	else
		d->expect_tclass = d->l2l3.tclass;
	d->has_expect = true;
}

/* Builds one random frame for @opcode into @frame; fills @d. Returns its length. */
static uint32_t
build_one(uint8_t *frame, uint8_t *payload, struct frame_desc *d, uint8_t opcode,
	  unsigned int nth, const struct build_opts *opt)
{
	memset(d, 0, sizeof(*d));
	d->op = uroce_opcode(opcode);
	d->payload_len = pick_payload_len(d->op, nth);
	d->payload = payload;
	rnd_fill(payload, d->payload_len);
	rand_l2l3(&d->l2l3, opt);
	d->ip_ver = opt->ipv6 ? 6 : 4;
	rand_bth(&d->bth, opcode, d->payload_len);
	rand_ext(&d->ext);
	if (opt->ect)
		ect_path(d, opcode);
	d->frame_len = uroce_wire_build(frame, FRAME_MAX, &d->l2l3, &d->bth,
					&d->ext, payload, d->payload_len);
	if (d->frame_len >= UROCE_ICRC_LEN) {
		const uint8_t *c = frame + d->frame_len - UROCE_ICRC_LEN;

		d->icrc = (uint32_t)c[0] | (uint32_t)c[1] << 8 |
			  (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
	}
	return d->frame_len;
}

static void
json_built(FILE *o, uint32_t index, const struct frame_desc *d)
{
	fprintf(o, "%s\n  {\"index\": %" PRIu32, index ? "," : "", index);
	json_mac(o, "dmac", d->l2l3.dmac);
	json_mac(o, "smac", d->l2l3.smac);
	json_frame(o, d);
	fputc('}', o);
}

static unsigned int
frames_for(const struct uroce_opcode_info *op)
{
	return op->flags & UROCE_OPF_PAYLOAD ? FRAMES_PAYLOAD_OP : FRAMES_OTHER_OP;
}

/* Writes every frame; returns the number written, or -1. */
static int
build_frames(FILE *pcap, FILE *json, const struct build_opts *opt)
{
	static uint8_t frame[FRAME_MAX], payload[PAYLOAD_MAX];
	struct frame_desc d;
	uint32_t index = 0;
	unsigned int opc, nth;

	for (opc = 0; opc < 256; opc++) {
		if (!uroce_opcodes[opc].valid)
			continue;
		for (nth = 0; nth < frames_for(&uroce_opcodes[opc]); nth++) {
			if (build_one(frame, payload, &d, opc, nth, opt) == 0) {
				fprintf(stderr, "uroce_wire_build failed: opcode 0x%02x payload %u\n",
					opc, d.payload_len);
				return -1;
			}
			if (pcap_write_record(pcap, index, frame, d.frame_len) < 0)
				return -1;
			json_built(json, index++, &d);
		}
	}
	return (int)index;
}

static int
cmd_build_all(const struct build_opts *opt)
{
	FILE *pcap = fopen(opt->pcap_path, "wb");
	FILE *json = fopen(opt->json_path, "w");
	int n = -1;

	rng_state = opt->seed;
	if (pcap == NULL || json == NULL) {
		fprintf(stderr, "cannot create output: %s\n", strerror(errno));
		goto out;
	}
	if (pcap_write_global(pcap) < 0)
		goto out;
	fprintf(json, "{\"seed\": %" PRIu64 ", \"ipv6\": %d, \"vlan\": %d, \"frames\": [",
		opt->seed, opt->ipv6, opt->vlan);
	n = build_frames(pcap, json, opt);
	fprintf(json, "\n]}\n");
out:
	if (pcap != NULL && fclose(pcap) != 0)
		n = -1;
	if (json != NULL && fclose(json) != 0)
		n = -1;
	if (n < 0)
		return 1;
	fprintf(stderr, "built %d frames\n", n);
	return 0;
}

/* ---------------------------------------------------------------------------
 * parse
 */
static void
desc_from_pkt(struct frame_desc *d, const struct uroce_pkt *pkt)
{
	memset(d, 0, sizeof(*d));
	d->l2l3.vlan = pkt->vlan;
	d->l2l3.vlan_tci = pkt->vlan_tci;
	d->l2l3.sgid = pkt->sgid;
	d->l2l3.dgid = pkt->dgid;
	d->l2l3.tclass = pkt->tclass;
	d->l2l3.hop_limit = pkt->hop_limit;
	d->l2l3.flow_label = pkt->flow_label;
	d->l2l3.udp_sport = pkt->udp_sport;
	d->ip_ver = pkt->ip_ver;
	d->bth = pkt->bth;
	d->op = pkt->op;
	uroce_wire_ext_get(pkt, &d->ext);
	d->payload = uroce_pkt_payload(pkt);
	d->payload_len = pkt->payload_len;
	d->icrc = pkt->icrc;
	d->frame_len = pkt->frame_len;
}

static void
json_parsed(uint32_t index, const uint8_t *frame, uint32_t len)
{
	enum uroce_wire_verdict v;
	struct uroce_pkt pkt;
	struct frame_desc d;

	memset(&pkt, 0, sizeof(pkt));
	v = uroce_wire_parse(frame, len, 0, &pkt);
	printf("{\"index\": %" PRIu32 ", \"len\": %" PRIu32 ", \"verdict\": \"%s\"",
	       index, len, uroce_wire_verdict_name(v));
	if (v == UROCE_WIRE_OK) {
		desc_from_pkt(&d, &pkt);
		json_frame(stdout, &d);
		printf(", \"l3_off\": %u, \"l4_off\": %u, \"bth_off\": %u"
		       ", \"payload_off\": %u", pkt.l3_off, pkt.l4_off,
		       pkt.bth_off, pkt.payload_off);
	}
	printf("}\n");
}

static int
cmd_parse(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint32_t index = 0, len;
	uint8_t *frame;
	bool swap;
	int rc;

	if (f == NULL || pcap_read_global(f, &swap) < 0) {
		fprintf(stderr, "%s: not a readable Ethernet pcap file\n", path);
		if (f != NULL)
			fclose(f);
		return 1;
	}
	while ((rc = pcap_read_record(f, swap, &frame, &len)) > 0) {
		json_parsed(index++, frame, len);
		free(frame);
	}
	fclose(f);
	if (rc < 0)
		fprintf(stderr, "%s: bad record after %" PRIu32 " frames\n", path, index);
	return rc < 0 || fflush(stdout) != 0;
}

/* ---------------------------------------------------------------------------
 * Command line.
 */
static int
usage(void)
{
	fprintf(stderr,
		"usage: uroce-wire-tool build-all OUT.pcap OUT.json [--seed N] [--ipv6] [--vlan] [--ect]\n"
		"       uroce-wire-tool parse IN.pcap\n");
	return 2;
}

static int
parse_build_opts(int argc, char **argv, struct build_opts *opt)
{
	char *end;
	int i;

	memset(opt, 0, sizeof(*opt));
	opt->seed = 1;
	if (argc < 4)
		return -1;
	opt->pcap_path = argv[2];
	opt->json_path = argv[3];
	for (i = 4; i < argc; i++) {
		if (strcmp(argv[i], "--ipv6") == 0) {
			opt->ipv6 = true;
		} else if (strcmp(argv[i], "--vlan") == 0) {
			opt->vlan = true;
		} else if (strcmp(argv[i], "--ect") == 0) {
			opt->ect = true;
		} else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
			opt->seed = strtoull(argv[++i], &end, 0);
			if (*end != '\0')
				return -1;
		} else {
			return -1;
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct build_opts opt;

	if (argc >= 2 && strcmp(argv[1], "build-all") == 0) {
		if (parse_build_opts(argc, argv, &opt) < 0)
			return usage();
		return cmd_build_all(&opt);
	}
	if (argc == 3 && strcmp(argv[1], "parse") == 0)
		return cmd_parse(argv[2]);
	return usage();
}
