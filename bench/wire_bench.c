/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * uroce-wire-bench: cost of the wire component's hot path on one core.
 *  - parse + ICRC check and build + ICRC of an RC SEND_ONLY over IPv4 and
 *    IPv6 with 64 B, 1 KiB and 4 KiB payloads;
 *  - CRC-32 over 4 KiB with each implementation, next to memcpy of the same
 *    4 KiB, and their ratio.
 * Each row runs for about 0.2 s (--quick: 0.02 s), best of three. Needs no
 * EAL: time comes from CLOCK_MONOTONIC, cycles from the TSC.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_atomic.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>

#include "uroce_wire.h"
#include "uroce_crc32.h"

#define CRC_BUF_LEN	4096
#define FRAME_CAP	(4096 + 256)
#define NB_RUNS		3

/* Results land here so the compiler cannot drop the work. */
static volatile uint64_t sink;

struct bench_ctx {
	struct uroce_l2l3 path;
	struct uroce_bth_fields bth;
	struct uroce_ext_fields ext;
	uint8_t *payload;
	uint32_t payload_len;
	uint8_t *frame;
	uint32_t frame_len;
	uint8_t *src;		/* CRC / memcpy source, CRC_BUF_LEN */
	uint8_t *dst;		/* memcpy destination */
	uint32_t (*crc)(uint32_t crc, const void *buf, size_t len);
};

typedef void (bench_fn)(struct bench_ctx *ctx, uint64_t iters);

struct result {
	char name[48];
	uint32_t bytes;		/* per operation, for the rate */
	double ns;		/* per operation */
	double tsc;		/* TSC ticks per operation */
};

static struct result results[32];
static unsigned int nb_results;

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ---------------------------------------------------------------------------
 * The measured loops.
 */
static void
bench_parse(struct bench_ctx *ctx, uint64_t iters)
{
	struct uroce_pkt pkt;
	uint64_t acc = 0;

	while (iters-- > 0) {
		acc += uroce_wire_parse(ctx->frame, ctx->frame_len, 0, &pkt);
		acc += pkt.icrc;
	}
	sink += acc;
}

static void
bench_build(struct bench_ctx *ctx, uint64_t iters)
{
	uint64_t acc = 0;

	while (iters-- > 0) {
		ctx->bth.psn = (ctx->bth.psn + 1) & UROCE_PSN_MASK;
		acc += uroce_wire_build(ctx->frame, FRAME_CAP, &ctx->path,
					&ctx->bth, &ctx->ext, ctx->payload,
					ctx->payload_len);
	}
	sink += acc + ctx->frame[ctx->frame_len - 1];
}

static void
bench_crc(struct bench_ctx *ctx, uint64_t iters)
{
	uint32_t crc = UROCE_CRC32_INIT;

	/* Chained like a stream of packets: each call waits for the last. */
	while (iters-- > 0)
		crc = ctx->crc(crc, ctx->src, CRC_BUF_LEN);
	sink += crc;
}

static void
bench_memcpy(struct bench_ctx *ctx, uint64_t iters)
{
	uint64_t acc = 0;

	while (iters-- > 0) {
		memcpy(ctx->dst, ctx->src, CRC_BUF_LEN);
		/* The copy must happen every time: memory "changed". */
		rte_compiler_barrier();
		acc += ctx->dst[iters & (CRC_BUF_LEN - 1)];
	}
	sink += acc;
}

/* ---------------------------------------------------------------------------
 * Timing: grow the iteration count until a run lasts target_ns / 8, scale
 * it to target_ns, then keep the best of NB_RUNS runs.
 */
static void
measure(const char *name, bench_fn *fn, struct bench_ctx *ctx,
	uint32_t bytes, double target_ns)
{
	struct result *r = &results[nb_results++];
	uint64_t iters = 16, t0c;
	double t0, t, best = 0, best_tsc = 0;
	int i;

	for (;;) {
		t0 = now_ns();
		fn(ctx, iters);
		t = now_ns() - t0;
		if (t >= target_ns / 8)
			break;
		iters *= 2;
	}
	iters = (uint64_t)(iters * (target_ns / t)) + 1;
	for (i = 0; i < NB_RUNS; i++) {
		t0c = rte_rdtsc();
		t0 = now_ns();
		fn(ctx, iters);
		t = now_ns() - t0;
		if (i == 0 || t < best) {
			best = t;
			best_tsc = (double)(rte_rdtsc() - t0c);
		}
	}
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->bytes = bytes;
	r->ns = best / iters;
	r->tsc = best_tsc / iters;
	printf("%-34s %6u %9.1f %9.1f %8.2f %8.2f\n", r->name, r->bytes,
	       r->ns, r->tsc, 1e3 / r->ns, r->bytes / r->ns);
	fflush(stdout);
}

static const struct result *
find_result(const char *name)
{
	unsigned int i;

	for (i = 0; i < nb_results; i++)
		if (strcmp(results[i].name, name) == 0)
			return &results[i];
	return NULL;
}

/* ---------------------------------------------------------------------------
 * Set-up.
 */
static void
setup_path(struct uroce_l2l3 *p, bool v6)
{
	static const uint8_t dmac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
	static const uint8_t smac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	static const uint8_t sip6[16] = { 0xfd, 0x00, 0, 0, 0, 0, 0, 0,
					  0, 0, 0, 0, 0, 0, 0, 0x01 };
	static const uint8_t dip6[16] = { 0xfd, 0x00, 0, 0, 0, 0, 0, 0,
					  0, 0, 0, 0, 0, 0, 0, 0x02 };

	memset(p, 0, sizeof(*p));
	memcpy(p->dmac, dmac, sizeof(dmac));
	memcpy(p->smac, smac, sizeof(smac));
	if (v6) {
		memcpy(p->sgid.raw, sip6, sizeof(sip6));
		memcpy(p->dgid.raw, dip6, sizeof(dip6));
		p->flow_label = 0x12345;
	} else {
		uroce_gid_from_v4(&p->sgid, rte_cpu_to_be_32(0xc0a80001)); /* 192.168.0.1 */
		uroce_gid_from_v4(&p->dgid, rte_cpu_to_be_32(0xc0a80002)); /* 192.168.0.2 */
	}
	p->tclass = 0x02;	/* ECT(0) */
	p->hop_limit = 64;
	p->udp_sport = uroce_wire_udp_sport(0x11, 0x22);
}

/* Build one frame into ctx->frame; false (with a message) if it fails. */
static bool
setup_frame(struct bench_ctx *ctx, bool v6, uint32_t payload_len)
{
	struct uroce_pkt pkt;
	enum uroce_wire_verdict v;

	setup_path(&ctx->path, v6);
	memset(&ctx->bth, 0, sizeof(ctx->bth));
	memset(&ctx->ext, 0, sizeof(ctx->ext));
	ctx->bth.opcode = UROCE_OPC_RC_SEND_ONLY;
	ctx->bth.pkey = 0xffff;
	ctx->bth.dqpn = 0x22;
	ctx->bth.psn = 100;
	ctx->bth.ackreq = true;
	ctx->payload_len = payload_len;
	ctx->frame_len = uroce_wire_build(ctx->frame, FRAME_CAP, &ctx->path,
					  &ctx->bth, &ctx->ext, ctx->payload,
					  payload_len);
	if (ctx->frame_len == 0) {
		fprintf(stderr, "uroce_wire_build failed (IPv%d, %u B)\n",
			v6 ? 6 : 4, payload_len);
		return false;
	}
	v = uroce_wire_parse(ctx->frame, ctx->frame_len, 0, &pkt);
	if (v != UROCE_WIRE_OK || pkt.payload_len != payload_len) {
		fprintf(stderr, "uroce_wire_parse: %s (IPv%d, %u B)\n",
			uroce_wire_verdict_name(v), v6 ? 6 : 4, payload_len);
		return false;
	}
	return true;
}

static bool
bench_wire(struct bench_ctx *ctx, double target_ns)
{
	static const uint32_t sizes[] = { 64, 1024, 4096 };
	char name[48];
	unsigned int v6, i;

	for (v6 = 0; v6 <= 1; v6++)
		for (i = 0; i < RTE_DIM(sizes); i++) {
			if (!setup_frame(ctx, v6, sizes[i]))
				return false;
			snprintf(name, sizeof(name), "parse+icrc SEND_ONLY v%c %u",
				 v6 ? '6' : '4', sizes[i]);
			measure(name, bench_parse, ctx, ctx->frame_len, target_ns);
			snprintf(name, sizeof(name), "build+icrc SEND_ONLY v%c %u",
				 v6 ? '6' : '4', sizes[i]);
			measure(name, bench_build, ctx, ctx->frame_len, target_ns);
		}
	return true;
}

static void
bench_crc_memcpy(struct bench_ctx *ctx, double target_ns)
{
	char name[48];

	ctx->crc = uroce_crc32_update;
	snprintf(name, sizeof(name), "crc32 %s (dispatch)", uroce_crc32_impl());
	measure(name, bench_crc, ctx, CRC_BUF_LEN, target_ns);
	if (uroce_crc32_has_vpclmul()) {
		ctx->crc = uroce_crc32_update_vpclmul;
		measure("crc32 vpclmul", bench_crc, ctx, CRC_BUF_LEN, target_ns);
	}
	if (uroce_crc32_has_pclmul()) {
		ctx->crc = uroce_crc32_update_pclmul;
		measure("crc32 pclmul", bench_crc, ctx, CRC_BUF_LEN, target_ns);
	}
	ctx->crc = uroce_crc32_update_table;
	measure("crc32 table", bench_crc, ctx, CRC_BUF_LEN, target_ns);
	measure("memcpy", bench_memcpy, ctx, CRC_BUF_LEN, target_ns);
}

/* ---------------------------------------------------------------------------
 * Output.
 */
static int
write_json(const char *path, double ratio)
{
	FILE *f = fopen(path, "w");
	unsigned int i;

	if (f == NULL) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "{\n  \"crc32_impl\": \"%s\",\n", uroce_crc32_impl());
	fprintf(f, "  \"memcpy_over_crc32\": %.3f,\n  \"rows\": [\n", ratio);
	for (i = 0; i < nb_results; i++) {
		const struct result *r = &results[i];

		fprintf(f, "    {\"name\": \"%s\", \"bytes\": %u, \"ns\": %.3f, "
			"\"tsc\": %.1f, \"mops\": %.3f, \"gbytes_s\": %.3f}%s\n",
			r->name, r->bytes, r->ns, r->tsc, 1e3 / r->ns,
			r->bytes / r->ns, i + 1 < nb_results ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	if (fclose(f) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static void
usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--quick] [--json FILE]\n"
		"  --quick      about 0.02 s per row instead of 0.2 s\n"
		"  --json FILE  also write the results as JSON\n", prog);
}

static void *
xmalloc_aligned(size_t len)
{
	void *p = aligned_alloc(64, RTE_ALIGN_CEIL(len, 64));

	if (p == NULL) {
		fprintf(stderr, "out of memory\n");
		exit(EXIT_FAILURE);
	}
	return p;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_ctx ctx;
	const struct result *crc, *cpy;
	const char *json = NULL;
	double target_ns = 200e6, ratio;
	unsigned int i;
	int c;

	while ((c = getopt_long(argc, argv, "qj:h", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			target_ns = 20e6;
			break;
		case 'j':
			json = optarg;
			break;
		case 'h':
			usage(argv[0]);
			return EXIT_SUCCESS;
		default:
			usage(argv[0]);
			return EXIT_FAILURE;
		}
	}
	if (optind != argc) {
		usage(argv[0]);
		return EXIT_FAILURE;
	}

	memset(&ctx, 0, sizeof(ctx));
	ctx.payload = xmalloc_aligned(4096);
	ctx.frame = xmalloc_aligned(FRAME_CAP);
	ctx.src = xmalloc_aligned(CRC_BUF_LEN);
	ctx.dst = xmalloc_aligned(CRC_BUF_LEN);
	for (i = 0; i < 4096; i++)
		ctx.payload[i] = (uint8_t)(i * 7 + 3);
	for (i = 0; i < CRC_BUF_LEN; i++)
		ctx.src[i] = (uint8_t)(i * 13 + 1);
	memset(ctx.dst, 0, CRC_BUF_LEN);

	printf("uroce-wire-bench: crc32 %s, %.2f s per row, best of %d\n",
	       uroce_crc32_impl(), target_ns / 1e9, NB_RUNS);
	printf("%-34s %6s %9s %9s %8s %8s\n", "operation", "bytes", "ns/op",
	       "tsc/op", "Mop/s", "GB/s");
	if (!bench_wire(&ctx, target_ns))
		return EXIT_FAILURE;
	bench_crc_memcpy(&ctx, target_ns);

	crc = &results[nb_results - 1];
	for (i = 0; i < nb_results; i++)
		if (strncmp(results[i].name, "crc32", 5) == 0) {
			crc = &results[i];	/* the dispatched one comes first */
			break;
		}
	cpy = find_result("memcpy");
	ratio = crc->ns / cpy->ns;
	printf("\ncrc32 (%s) %.2f GB/s, memcpy %.2f GB/s over %u B: "
	       "memcpy/crc32 = %.2fx (aim: <= 2x)\n", uroce_crc32_impl(),
	       CRC_BUF_LEN / crc->ns, CRC_BUF_LEN / cpy->ns, CRC_BUF_LEN, ratio);

	if (json != NULL && write_json(json, ratio) != 0)
		return EXIT_FAILURE;
	free(ctx.payload);
	free(ctx.frame);
	free(ctx.src);
	free(ctx.dst);
	return EXIT_SUCCESS;
}
