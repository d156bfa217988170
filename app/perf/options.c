/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * uroce-perf's command line. Every error is one line on stderr naming the
 * option and the value; the caller exits with status 2.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "perf_priv.h"

#define MAX_MSG		(8u << 20)	/* largest message: 8 MiB */

static const char usage_text[] =
"usage: uroce-perf -c CONFIG --server [options]\n"
"       uroce-perf -c CONFIG --connect ADDR [options]\n"
"  -c, --config FILE   uroce configuration (one port)\n"
"      --server        wait for a client; it chooses the workload\n"
"      --connect ADDR  the server's control address (IPv4 or name)\n"
"  -p, --port N        TCP control port (default 18515)\n"
"      --core N        pin the busy thread to CPU N (-1: do not pin; default:\n"
"                      server the first CPU allowed, client the second)\n"
"  -w, --workload W    send, write, write_imm, read, cas, fadd (write)\n"
"  -m, --mode M[,M]    bw, rate, lat (bw)\n"
"  -s, --size N        message bytes (K, M suffixes; bw 65536, rate 64)\n"
"  -a, --all           size sweep: powers of two from 2 to --max-size\n"
"      --max-size N    largest message of -a (8M)\n"
"      --lat-size N    latency message bytes (8)\n"
"  -q, --depth N       outstanding WRs per QP (128)\n"
"  -D, --duration S    seconds of each figure, split over the rounds (2;\n"
"                      fractions allowed)\n"
"  -n, --iters N       messages per phase, every round, instead of -D\n"
"      --rounds N      each row alternates the raw ceiling and the transport\n"
"                      N times, 1..25, and reports the median of each (3;\n"
"                      1 with --window)\n"
"      --moved PCT     flag a row whose ceiling moved by more than PCT\n"
"                      percent between its rounds (15)\n"
"      --qps N         QPs, 1..10000, posted to round robin (1)\n"
"      --inflight N    messages in flight over all QPs (qps x depth)\n"
"      --rate KBPS     rate limit per QP (kbit/s)\n"
"      --rate-total KBPS  rate limits summing to KBPS, 1:2:3:4 round robin\n"
"      --burst N       max_burst_sz of the rate limits (0: the default)\n"
"      --window S      bw: pacing measured in windows of S s, the first\n"
"                      discarded (achieved/target, per QP in --json)\n"
"      --raw           the raw ceiling only\n"
"      --no-raw        the transport only (no ratio)\n"
"      --json FILE     every figure as JSON\n"
"      --plot FILE     PNG (gnuplot): sweep bandwidth and ratio, or CDF\n"
"      --quiet         no live line\n"
"      --loop          both ends in this process, over the config's two\n"
"                      ports (e.g. ringlink:NAME,side=0 and side=1)\n"
"      --bidir         bw, rate: both sides send (raw too)\n"
"      --srq           every QP receives from one shared receive queue\n"
"                      holding min(2 x --inflight, qps x depth) receives\n"
"  -i, --interactive   a prompt: start, stop, show port stats, show qp N,\n"
"                      set rate N KBPS, set fault SPEC ([port] fault\n"
"                      syntax, or none), quit\n"
"      --verbs         through the verbs library: ibv_post_send(),\n"
"                      ibv_poll_cq() on this thread, the stack on an\n"
"                      engine lcore (the raw ceiling too); --srq through\n"
"                      ibv_create_srq(), ibv_post_srq_recv()\n";

enum {
	O_SERVER = 256, O_CONNECT, O_CORE, O_MAXSZ, O_LATSZ, O_QPS, O_RATE,
	O_RAW, O_NORAW, O_JSON, O_PLOT, O_QUIET, O_SRQ, O_BIDIR, O_VERBS,
	O_LOOP, O_INFLIGHT, O_RATE_TOTAL, O_BURST, O_WINDOW, O_ROUNDS,
	O_MOVED,
};

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "server", no_argument, NULL, O_SERVER },
	{ "connect", required_argument, NULL, O_CONNECT },
	{ "port", required_argument, NULL, 'p' },
	{ "core", required_argument, NULL, O_CORE },
	{ "workload", required_argument, NULL, 'w' },
	{ "mode", required_argument, NULL, 'm' },
	{ "size", required_argument, NULL, 's' },
	{ "all", no_argument, NULL, 'a' },
	{ "max-size", required_argument, NULL, O_MAXSZ },
	{ "lat-size", required_argument, NULL, O_LATSZ },
	{ "depth", required_argument, NULL, 'q' },
	{ "duration", required_argument, NULL, 'D' },
	{ "iters", required_argument, NULL, 'n' },
	{ "rounds", required_argument, NULL, O_ROUNDS },
	{ "moved", required_argument, NULL, O_MOVED },
	{ "qps", required_argument, NULL, O_QPS },
	{ "inflight", required_argument, NULL, O_INFLIGHT },
	{ "rate", required_argument, NULL, O_RATE },
	{ "rate-total", required_argument, NULL, O_RATE_TOTAL },
	{ "burst", required_argument, NULL, O_BURST },
	{ "window", required_argument, NULL, O_WINDOW },
	{ "raw", no_argument, NULL, O_RAW },
	{ "no-raw", no_argument, NULL, O_NORAW },
	{ "json", required_argument, NULL, O_JSON },
	{ "plot", required_argument, NULL, O_PLOT },
	{ "quiet", no_argument, NULL, O_QUIET },
	{ "srq", no_argument, NULL, O_SRQ },
	{ "bidir", no_argument, NULL, O_BIDIR },
	{ "verbs", no_argument, NULL, O_VERBS },
	{ "loop", no_argument, NULL, O_LOOP },
	{ "interactive", no_argument, NULL, 'i' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int
bad(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "uroce-perf: %s \"%s\": %s\n", opt, val, why);
	return -EINVAL;
}

/* An unsigned number with an optional K/M/G suffix (powers of 1024). */
static int
num(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end, why[96];
	uint64_t v, mul = 1;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (end != s && (*end == 'K' || *end == 'k'))
		mul = 1024, end++;
	else if (end != s && (*end == 'M' || *end == 'm'))
		mul = 1024 * 1024, end++;
	else if (end != s && (*end == 'G' || *end == 'g'))
		mul = 1024 * 1024 * 1024, end++;
	snprintf(why, sizeof(why), "not a number in %" PRIu64 "..%" PRIu64,
		 lo, hi);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' ||
	    v > hi / mul || v * mul < lo || v * mul > hi)
		return bad(opt, s, why);
	*out = v * mul;
	return 0;
}

static int
parse_modes(const char *s, unsigned int *modes)
{
	static const struct { const char *n; unsigned int m; } tbl[] = {
		{ "bw", PERF_MODE_BW }, { "rate", PERF_MODE_RATE },
		{ "lat", PERF_MODE_LAT },
	};
	char buf[64], *tok, *save = NULL;
	unsigned int i;

	if (strlen(s) >= sizeof(buf))
		return bad("--mode", s, "expected bw, rate, lat or a list");
	strcpy(buf, s);
	*modes = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < RTE_DIM(tbl) && strcmp(tok, tbl[i].n) != 0; i++)
			;
		if (i == RTE_DIM(tbl))
			return bad("--mode", s, "expected bw, rate, lat or a list");
		*modes |= tbl[i].m;
	}
	return *modes ? 0 : bad("--mode", s, "expected bw, rate, lat or a list");
}

static int
parse_wl(const char *s, unsigned int *wl)
{
	unsigned int i;

	for (i = 0; i < perf_nwls; i++)
		if (strcmp(s, perf_wls[i]->name) == 0) {
			*wl = i;
			return 0;
		}
	return bad("--workload", s,
		   "expected send, write, write_imm, read, cas or fadd");
}

/* A rule about options together (no single value to quote). */
static int
rule(const char *opts, const char *why)
{
	fprintf(stderr, "uroce-perf: %s: %s\n", opts, why);
	return -EINVAL;
}

/* One option; 1 for --help. */
static const char *argv_opt;

static int
parse_one(int c, struct perf_opts *o, uint64_t *size, bool *sweep)
{
	uint64_t v;
	char *end;
	int ret = 0;

	switch (c) {
	case 'c': o->config = optarg; break;
	case O_SERVER: o->server = true; break;
	case O_CONNECT: o->connect = optarg; break;
	case 'p':
		ret = num("--port", optarg, 1, 65535, &v);
		o->tcp_port = (uint16_t)v;
		break;
	case O_CORE:
		if (strcmp(optarg, "-1") == 0) {
			o->core = -1;
			break;
		}
		ret = num("--core", optarg, 0, 1023, &v);
		o->core = (int)v;
		break;
	case 'w': ret = parse_wl(optarg, &o->wl); break;
	case 'm': ret = parse_modes(optarg, &o->modes); break;
	case 's': ret = num("--size", optarg, 1, MAX_MSG, size); break;
	case 'a': *sweep = true; break;
	case O_MAXSZ:
		ret = num("--max-size", optarg, 2, MAX_MSG, &v);
		o->max_size = (uint32_t)v;
		break;
	case O_LATSZ:
		ret = num("--lat-size", optarg, 1, MAX_MSG, &v);
		o->lat_size = (uint32_t)v;
		break;
	case 'q':
		ret = num("--depth", optarg, 1, 4096, &v);
		o->depth = (uint32_t)v;
		break;
	case 'D':
		o->duration = strtod(optarg, &end);
		if (end == optarg || *end != '\0' || !(o->duration > 0) ||
		    o->duration > 3600)
			ret = bad("--duration", optarg,
				  "not a number of seconds in (0, 3600]");
		break;
	case 'n': ret = num("--iters", optarg, 1, UINT32_MAX, &o->iters); break;
	case O_ROUNDS:
		ret = num("--rounds", optarg, 1, PERF_MAX_ROUNDS, &v);
		o->rounds = (unsigned int)v;
		break;
	case O_MOVED:
		o->moved = strtod(optarg, &end) / 100;
		if (end == optarg || *end != '\0' || !(o->moved > 0) ||
		    o->moved > 10)
			ret = bad("--moved", optarg,
				  "not a percentage in (0, 1000]");
		break;
	case O_QPS:
		ret = num("--qps", optarg, 1, PERF_MAX_QPS, &v);
		o->qps = (uint32_t)v;
		break;
	case O_INFLIGHT:
		ret = num("--inflight", optarg, 1, UINT32_MAX, &v);
		o->inflight = (uint32_t)v;
		break;
	case O_RATE:
		ret = num("--rate", optarg, 1, 100000000, &v);
		o->rate_kbps = (uint32_t)v;
		break;
	case O_RATE_TOTAL:
		ret = num("--rate-total", optarg, 1, UINT64_C(1) << 40,
			  &o->rate_total_kbps);
		break;
	case O_BURST:
		ret = num("--burst", optarg, 0, 16 << 20, &v);
		o->burst = (uint32_t)v;
		break;
	case O_WINDOW:
		o->window_s = strtod(optarg, &end);
		if (end == optarg || *end != '\0' || !(o->window_s > 0) ||
		    o->window_s > 60)
			ret = bad("--window", optarg,
				  "not a number of seconds in (0, 60]");
		break;
	case O_RAW: o->raw_only = true; break;
	case O_NORAW: o->no_raw = true; break;
	case O_JSON: o->json = optarg; break;
	case O_PLOT: o->plot = optarg; break;
	case O_QUIET: o->quiet = true; break;
	case O_SRQ: o->srq = true; break;
	case O_BIDIR: o->bidir = true; break;
	case O_VERBS: o->verbs = true; break;
	case O_LOOP: o->loop = true; break;
	case 'i': o->interactive = true; break;
	case 'h': fputs(usage_text, stdout); return 1;
	default:
		fprintf(stderr, "uroce-perf: %s: unknown option or missing value "
			"(--help lists them)\n", argv_opt);
		return -EINVAL;
	}
	return ret;
}

/* The size list: one size, the sweep, or the mode's default. */
static int
sizes_fill(struct perf_opts *o, uint64_t size, bool sweep)
{
	const struct perf_wl *wl = perf_wls[o->wl];
	uint64_t s;

	o->nsizes = 0;
	if (wl->fixed_size != 0) {
		o->sizes[o->nsizes++] = wl->fixed_size;
		o->lat_size = wl->fixed_size;
	} else if (sweep) {
		for (s = 2; s <= o->max_size && o->nsizes < PERF_MAX_SIZES; s *= 2)
			o->sizes[o->nsizes++] = (uint32_t)s;
	} else {
		o->sizes[o->nsizes++] = size != 0 ? (uint32_t)size :
			(o->modes & PERF_MODE_BW) ? 65536 : 64;
		if (size != 0 && o->modes == PERF_MODE_LAT)
			o->lat_size = (uint32_t)size;
	}
	if (!sweep)
		o->max_size = 0;
	for (s = 0; s < o->nsizes; s++)
		o->max_size = RTE_MAX(o->max_size, o->sizes[s]);
	o->max_size = RTE_MAX(o->max_size, o->lat_size);
	return 0;
}

int
perf_opts_parse(int argc, char **argv, struct perf_opts *o)
{
	uint64_t size = 0;
	bool sweep = false;
	int c, ret;

	memset(o, 0, sizeof(*o));
	o->tcp_port = PERF_DEF_PORT;
	o->core = -2;
	o->wl = 1;			/* write */
	o->modes = PERF_MODE_BW;
	o->lat_size = 8;
	o->max_size = MAX_MSG;
	o->depth = 128;
	o->qps = 1;
	o->moved = PERF_DEF_MOVED;
	opterr = 0;	/* our own one-line messages */
	while ((c = getopt_long(argc, argv, "c:p:w:m:s:aq:D:n:ih", long_opts,
				NULL)) != -1) {
		argv_opt = argv[optind - 1];
		ret = parse_one(c, o, &size, &sweep);
		if (ret != 0)
			return ret;
	}
	if (optind < argc)
		return bad("argument", argv[optind], "unexpected");
	if (o->config == NULL)
		return rule("--config", "required");
	if (o->loop && (o->server || o->connect != NULL))
		return rule("--loop", "both ends run here: no --server, no --connect");
	if (o->interactive && o->server)
		return rule("-i", "the client (or --loop) has the prompt");
	if (!o->loop && o->server == (o->connect != NULL))
		return rule("--server/--connect", "give exactly one");
	if (o->rate_kbps != 0 && o->rate_total_kbps != 0)
		return rule("--rate/--rate-total", "give at most one");
	if ((o->window_s != 0 || o->rate_total_kbps != 0 || o->burst != 0) &&
	    (o->loop || o->bidir || o->interactive))
		return rule("--window/--rate-total/--burst",
			    "two processes, one way, no -i");
	if (o->raw_only && o->no_raw)
		return rule("--raw/--no-raw", "give at most one");
	/* The pacing windows measure one transport phase. */
	if (o->window_s != 0 && o->rounds > 1)
		return rule("--window/--rounds", "windows measure one round");
	if (o->rounds == 0)
		o->rounds = o->window_s != 0 ? 1 : PERF_DEF_ROUNDS;
	if (o->duration == 0 && o->iters == 0)
		o->duration = 2;
	if (o->duration != 0 && o->iters != 0)
		return rule("--duration/--iters", "give at most one");
	return sizes_fill(o, size, sweep);
}

uint32_t
perf_srq_wr(const struct perf_opts *o)
{
	uint64_t n = (uint64_t)o->qps * o->depth;

	/* Twice what can be in flight: receives that completed wait for
	 * the server's poll to be posted again, and a dry SRQ costs an RNR
	 * wait. Never more than the private queues would hold. */
	if (o->inflight != 0 && 2 * (uint64_t)o->inflight < n)
		n = 2 * (uint64_t)o->inflight;

	if (!o->srq)
		return 0;
	return (uint32_t)RTE_MIN(n, (uint64_t)UINT32_MAX);
}
