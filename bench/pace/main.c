/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * uroce-pace-perf: pacing measured over a real link, two processes.
 *
 *   uroce-pace-perf --role server --config A.conf
 *	prints "PACE-LISTEN <tcp port>", then serves set-ups until QUIT
 *   uroce-pace-perf --role client --config B.conf --tcp PORT
 *	[--suite full|one] [--json FILE] [--window S] [--windows N]
 *	[--msg BYTES] [--qps N --rate KBPS] [--burst BYTES] [--check]
 *
 * Each process runs the stack on its own thread (UROCE_INIT_NATIVE and a
 * busy uroce_poll() loop): pin the two to different cores with -l in
 * [eal] args. The memif ports are the configs' (run.sh writes them).
 * Exit status 0 when every stream completed without error (and, with
 * --check, the server found the data intact).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>

#include <uroce/uroce.h>

#include "pace_perf.h"
#include "uroce_engine.h"
#include "uroce_port.h"

/* Port counters at the end of a run, for the log: frames refused by a full
 * tx queue (tx_full) or lost by the receiver would explain retransmits. */
static void
port_summary(const char *role)
{
	struct uroce_dev *dev = uroce_dev_get(0);
	struct uroce_port_stats ps;

	if (dev == NULL)
		return;
	uroce_port_stats_get(uroce_dev_port(dev), &ps);
	fprintf(stderr, "pace-perf %s port: rx %" PRIu64 " tx %" PRIu64
		" tx_full %" PRIu64 " rx_err %" PRIu64 "\n", role, ps.rx_pkts,
		ps.tx_pkts, ps.tx_full, ps.rx_err);
}

#define PP_SERVER_PSN	0x123456u
#define PP_SERVER_WAIT	600.0	/* a whole client scenario, and then some */

static bool
server_setup(struct pp_side *s, const struct pp_ctl *m)
{
	struct pp_ctl r;
	uint32_t *rqpn = calloc(m->nqp, sizeof(*rqpn));
	bool ok;

	ok = rqpn != NULL && m->nqp > 0 && m->msg > 0 &&
		pp_recv_bytes(s->fd, rqpn, m->nqp * sizeof(*rqpn));
	ok = ok && pp_side_open(s, (size_t)PP_SLOTS * m->msg) &&
		pp_qps_create(s, m->nqp, 1) &&
		pp_qps_connect(s, rqpn, m, PP_SERVER_PSN);
	free(rqpn);
	memset(&r, 0, sizeof(r));
	r.type = PP_REPLY;
	r.nqp = ok ? s->nqp : 0;
	pp_my_ctl(s, &r, PP_SERVER_PSN);
	return pp_send(s->fd, &r, s->qpn, ok ? s->nqp * sizeof(uint32_t) : 0) &&
		ok;
}

/* DONE: the regions the client wrote hold its pattern (with --check),
 * and the bytes the QPs received. */
static bool
server_done(struct pp_side *s, const struct pp_ctl *setup)
{
	struct uroce_qp_stats st;
	struct pp_ctl r;
	uint8_t *ref = malloc(setup->msg);
	uint32_t k, i;

	memset(&r, 0, sizeof(r));
	r.type = PP_RESULT;
	for (k = 0; (setup->flags & PP_F_CHECK) &&
	     k < RTE_MIN(setup->nqp, (uint32_t)PP_SLOTS); k++) {
		if (ref == NULL) {
			r.failed++;
			break;
		}
		pp_fill(ref, setup->msg, k);
		if (memcmp(ref, s->buf + (size_t)k * setup->msg,
			   setup->msg) != 0) {
			fprintf(stderr, "pace-perf server: region %u is not "
				"what the client wrote\n", k);
			r.failed++;
		}
	}
	free(ref);
	for (i = 0; i < s->nqp; i++) {
		memset(&st, 0, sizeof(st));
		if (uroce_dev_qp_stats(s->qp[i], &st) < 0)
			r.failed++;
		r.rx_bytes += st.rx_bytes;
		r.rx_pkts += st.rx_pkts;
	}
	pp_side_close(s);
	return pp_send(s->fd, &r, NULL, 0);
}

static int
run_server(void)
{
	struct pp_side s = { .fd = -1 };
	struct pp_ctl m, setup;
	uint16_t port;
	int lfd = pp_tcp_listen(&port);
	bool ok = lfd >= 0;

	if (ok) {
		printf("PACE-LISTEN %u\n", port);
		fflush(stdout);
		s.fd = pp_tcp_accept(lfd);
		close(lfd);
		ok = s.fd >= 0;
	}
	memset(&setup, 0, sizeof(setup));
	while (ok && pp_recv(s.fd, &m, 0, NULL, 0, PP_SERVER_WAIT)) {
		if (m.type == PP_QUIT)
			break;
		if (m.type == PP_SETUP) {
			setup = m;
			ok = server_setup(&s, &m);
		} else if (m.type == PP_DONE) {
			ok = server_done(&s, &setup);
		} else {
			ok = false;
		}
	}
	ok &= m.type == PP_QUIT;
	pp_side_close(&s);
	if (s.fd >= 0)
		close(s.fd);
	return ok ? 0 : 1;
}

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s --role server --config FILE\n"
		"       %s --role client --config FILE --tcp PORT [--suite full|one]\n"
		"          [--json FILE] [--window S] [--windows N] [--msg BYTES]\n"
		"          [--qps N] [--rate KBPS] [--burst BYTES] [--check]\n",
		prog, prog);
}

struct args {
	const char *role, *config;
	uint16_t tcp;
};

static bool
parse_args(int argc, char **argv, struct args *a, struct pp_opts *o)
{
	static const struct option opts[] = {
		{ "role", required_argument, NULL, 'r' },
		{ "config", required_argument, NULL, 'c' },
		{ "tcp", required_argument, NULL, 'p' },
		{ "suite", required_argument, NULL, 's' },
		{ "json", required_argument, NULL, 'j' },
		{ "window", required_argument, NULL, 'w' },
		{ "windows", required_argument, NULL, 'W' },
		{ "msg", required_argument, NULL, 'm' },
		{ "qps", required_argument, NULL, 'n' },
		{ "rate", required_argument, NULL, 'R' },
		{ "burst", required_argument, NULL, 'b' },
		{ "check", no_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r': a->role = optarg; break;
		case 'c': a->config = optarg; break;
		case 'p': a->tcp = (uint16_t)strtoul(optarg, NULL, 0); break;
		case 's': o->suite = optarg; break;
		case 'j': o->json = optarg; break;
		case 'w': o->window_s = strtod(optarg, NULL); break;
		case 'W': o->windows = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'm': o->msg = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'n': o->nqp = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'R': o->rate_kbps = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'b': o->burst = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'C': o->check = true; break;
		default: return false;
		}
	}
	if (a->role == NULL || a->config == NULL)
		return false;
	if (strcmp(a->role, "server") == 0)
		return true;
	return strcmp(a->role, "client") == 0 && a->tcp != 0 &&
		o->window_s >= 0.01 && o->window_s <= 60 && o->windows >= 2 &&
		o->windows <= 1000 && o->msg >= 1 && o->msg <= (1u << 20) &&
		o->nqp >= 1 && o->nqp <= 20000 &&
		(strcmp(o->suite, "full") == 0 || strcmp(o->suite, "one") == 0);
}

int
main(int argc, char **argv)
{
	struct pp_opts o = { .suite = "full", .window_s = 1.0, .windows = 4,
			     .msg = 65536, .nqp = 1 };
	struct pp_side s = { .fd = -1 };
	char err[512];
	struct args a = { 0 };
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!parse_args(argc, argv, &a, &o)) {
		usage(argv[0]);
		return 2;
	}
	if (uroce_init(a.config, UROCE_INIT_NATIVE, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (strcmp(a.role, "server") == 0) {
		ret = run_server();
	} else {
		s.fd = pp_tcp_connect(a.tcp);
		ret = s.fd < 0 ? 1 : pp_client(&s, &o);
		if (s.fd >= 0)
			close(s.fd);
	}
	port_summary(a.role);
	uroce_fini();
	return ret;
}
