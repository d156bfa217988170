/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * -i: a prompt on DPDK's cmdline library, as testpmd has. The QPs are
 * connected; `start` runs the planned phases on a worker thread (the one
 * busy thread: the prompt thread waits on stdin), `stop` ends the phase
 * under way early and the rest of the plan, `show port stats`, `show qp N`,
 * `set rate N KBPS` and `set fault SPEC` act on the live objects (control
 * verbs take the engine's native lock, and the port's fault setting is
 * taken up by its queues at their next burst, so they are safe beside the
 * worker), `quit` ends.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_num.h>
#include <cmdline_parse_string.h>
#include <cmdline_socket.h>

#include "perf_priv.h"

volatile bool perf_stop;

static struct perf *ip;		/* the run the commands act on */
static pthread_t worker;
static volatile bool running;

static void *
work(void *arg)
{
	struct perf *p = arg;

	if (perf_client_rows(p) < 0)
		printf("uroce-perf: the run failed (see above)\n");
	running = false;
	return NULL;
}

static void
stop_worker(void)
{
	if (worker == 0)
		return;
	perf_stop = true;
	pthread_join(worker, NULL);
	worker = 0;
	perf_stop = false;
}

/* ------------------------------------------------------------------------
 * Commands.
 */
struct cmd_word {
	cmdline_fixed_string_t a, b, c;
	uint32_t n, v;
};

static void
cmd_start(void *res, struct cmdline *cl, void *data)
{
	(void)res, (void)cl, (void)data;
	if (running) {
		printf("a run is under way (stop it first)\n");
		return;
	}
	stop_worker();
	running = true;
	if (pthread_create(&worker, NULL, work, ip) != 0) {
		running = false;
		worker = 0;
		printf("cannot start the worker thread\n");
	}
}

static void
cmd_stop(void *res, struct cmdline *cl, void *data)
{
	(void)res, (void)cl, (void)data;
	stop_worker();
	printf("stopped\n");
}

static void
cmd_quit(void *res, struct cmdline *cl, void *data)
{
	(void)res, (void)data;
	stop_worker();
	cmdline_quit(cl);
}

static void
cmd_port_stats(void *res, struct cmdline *cl, void *data)
{
	struct uroce_port_stats s;
	struct uroce_dev_stats d;

	(void)res, (void)cl, (void)data;
	uroce_port_stats_get(ip->port, &s);
	uroce_dev_stats_get(ip->dev, &d);
	printf("%s: rx %" PRIu64 " pkts %" PRIu64 " B, tx %" PRIu64 " pkts %"
	       PRIu64 " B, tx_full %" PRIu64 ", non-RoCE %" PRIu64 ", rx_err %"
	       PRIu64 "\n  faults: drop %" PRIu64 " reorder %" PRIu64 " dup %"
	       PRIu64 " corrupt %" PRIu64 " ce %" PRIu64 "; unknown QPN %"
	       PRIu64 "\n",
	       uroce_dev_name(ip->dev), s.rx_pkts, s.rx_bytes, s.tx_pkts,
	       s.tx_bytes, s.tx_full, s.non_roce, s.rx_err, s.fault_drop,
	       s.fault_reorder, s.fault_dup, s.fault_corrupt, s.fault_ce,
	       d.unknown_qpn);
}

static void
cmd_show_qp(void *res, struct cmdline *cl, void *data)
{
	struct cmd_word *w = res;
	struct uroce_qp_stats s;
	int ret;

	(void)cl, (void)data;
	if (w->n >= ip->nqp) {
		printf("no QP %u: 0..%u\n", w->n, ip->nqp - 1);
		return;
	}
	ret = uroce_dev_qp_stats(ip->qps[w->n].qp, &s);
	if (ret < 0) {
		printf("QP %u: %s\n", w->n, strerror(-ret));
		return;
	}
	printf("QP %u (0x%06x): tx %" PRIu64 " pkts %" PRIu64 " B, rx %" PRIu64
	       " pkts %" PRIu64 " B, retransmits %" PRIu64 ", timeouts %" PRIu64
	       " (late, none owed: %" PRIu64 "), ACKs tx %" PRIu64 " rx %"
	       PRIu64 ", RNR NAKs tx %" PRIu64 " rx %" PRIu64 ", duplicates %"
	       PRIu64 ", out of sequence %" PRIu64 ", drops %" PRIu64
	       ", pacing wait %" PRIu64 " cycles\n"
	       "  congestion: ECN-marked rx %" PRIu64 ", CNPs sent %" PRIu64
	       ", CNPs handled %" PRIu64 " ignored %" PRIu64
	       ", DCQCN rate %" PRIu64 " kbit/s (0: not limited)\n",
	       w->n, ip->qps[w->n].qpn, s.tx_pkts, s.tx_bytes, s.rx_pkts,
	       s.rx_bytes, s.retransmits, s.timeouts, s.late_timeouts,
	       s.acks_tx, s.acks_rx, s.rnr_naks_tx, s.rnr_naks_rx, s.dup_reqs,
	       s.out_of_seq, s.drops, s.pace_wait_cycles,
	       s.np_ecn_marked_roce_packets, s.np_cnp_sent, s.rp_cnp_handled,
	       s.rp_cnp_ignored, uroce_qp_cc_rate_kbps(ip->qps[w->n].qp));
}

static void
cmd_set_rate(void *res, struct cmdline *cl, void *data)
{
	struct cmd_word *w = res;
	struct ibv_qp_attr a;
	int ret;

	(void)cl, (void)data;
	if (w->n >= ip->nqp) {
		printf("no QP %u: 0..%u\n", w->n, ip->nqp - 1);
		return;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.rate_limit = w->v;
	ret = ip->ops->qp_modify(&ip->qps[w->n], &a,
				 IBV_QP_STATE | IBV_QP_RATE_LIMIT);
	printf("QP %u rate %u kbit/s: %s\n", w->n, w->v,
	       ret < 0 ? strerror(-ret) : "set");
}

/* set fault SPEC: the [port] fault syntax ("drop=1%,reorder=0.001,seed=7"
 * or "none") on this side's port, from its next burst on (both ways). */
static void
cmd_set_fault(void *res, struct cmdline *cl, void *data)
{
	struct cmd_word *w = res;
	struct uroce_config_fault f;
	char why[UROCE_CONFIG_ERR_LEN];
	bool on;

	(void)cl, (void)data;
	if (uroce_config_parse_fault(w->c, &f, &on, why, sizeof(why)) != 0 ||
	    uroce_port_set_fault(ip->port, &f, why, sizeof(why)) != 0) {
		printf("set fault %s: %s\n", w->c, why);
		return;
	}
	if (!on) {
		printf("%s: no faults\n", uroce_dev_name(ip->dev));
		return;
	}
	printf("%s: faults drop %u reorder %u dup %u corrupt %u ppm, seed %"
	       PRIu64 "\n", uroce_dev_name(ip->dev), f.drop_ppm, f.reorder_ppm,
	       f.dup_ppm, f.corrupt_ppm, f.seed);
}

#define WORD(f, s) TOKEN_STRING_INITIALIZER(struct cmd_word, f, s)
#define NUM(f) TOKEN_NUM_INITIALIZER(struct cmd_word, f, RTE_UINT32)

static cmdline_parse_token_string_t t_start = WORD(a, "start");
static cmdline_parse_token_string_t t_stop = WORD(a, "stop");
static cmdline_parse_token_string_t t_quit = WORD(a, "quit");
static cmdline_parse_token_string_t t_show = WORD(a, "show");
static cmdline_parse_token_string_t t_set = WORD(a, "set");
static cmdline_parse_token_string_t t_port = WORD(b, "port");
static cmdline_parse_token_string_t t_stats = WORD(c, "stats");
static cmdline_parse_token_string_t t_qp = WORD(b, "qp");
static cmdline_parse_token_string_t t_rate = WORD(b, "rate");
static cmdline_parse_token_string_t t_fault = WORD(b, "fault");
static cmdline_parse_token_string_t t_any = TOKEN_STRING_INITIALIZER(
	struct cmd_word, c, TOKEN_STRING_MULTI);
static cmdline_parse_token_num_t t_n = NUM(n);
static cmdline_parse_token_num_t t_v = NUM(v);

#define INST(fn, help, ...) { .f = fn, .data = NULL, .help_str = help, \
	.tokens = { __VA_ARGS__, NULL } }

static cmdline_parse_inst_t c_start = INST(cmd_start,
	"start: run the planned phases", &t_start.hdr);
static cmdline_parse_inst_t c_stop = INST(cmd_stop,
	"stop: end the run under way", &t_stop.hdr);
static cmdline_parse_inst_t c_quit = INST(cmd_quit, "quit", &t_quit.hdr);
static cmdline_parse_inst_t c_port = INST(cmd_port_stats,
	"show port stats", &t_show.hdr, &t_port.hdr, &t_stats.hdr);
static cmdline_parse_inst_t c_qp = INST(cmd_show_qp,
	"show qp N: QP N's counters", &t_show.hdr, &t_qp.hdr, &t_n.hdr);
static cmdline_parse_inst_t c_rate = INST(cmd_set_rate,
	"set rate N KBPS: QP N's rate limit (0: none)", &t_set.hdr, &t_rate.hdr, &t_n.hdr,
	&t_v.hdr);
static cmdline_parse_inst_t c_fault = INST(cmd_set_fault,
	"set fault SPEC: faults on this side's port, as [port] fault "
	"(drop=P,reorder=P,dup=P,corrupt=P,seed=S or none)",
	&t_set.hdr, &t_fault.hdr, &t_any.hdr);

static cmdline_parse_ctx_t ctx[] = {
	&c_start, &c_stop, &c_quit, &c_port, &c_qp, &c_rate, &c_fault, NULL,
};

int
perf_interactive(struct perf *p)
{
	struct cmdline *cl;

	ip = p;
	cl = cmdline_stdin_new(ctx, "uroce-perf> ");
	if (cl == NULL) {
		fprintf(stderr, "uroce-perf: -i: cannot open the prompt\n");
		return -ENOMEM;
	}
	cmdline_interact(cl);
	cmdline_stdin_exit(cl);
	stop_worker();
	return 0;
}
