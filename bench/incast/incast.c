/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * uroce-incast: N senders into one receiver through a shared bottleneck
 * that marks CE as switches do (switch.h), all in one process: each sender
 * and the receiver is a uroce device on its own ringlink, whose other end
 * is the switch. One busy thread runs it all: the stack of every device
 * with native progress (uroce_poll()), the switch (sw_poll()), and the
 * senders, which keep DEPTH RDMA WRITEs of SIZE in flight on every QP. On
 * a shared 2-core VM whose host takes a busy core away for milliseconds,
 * one thread stops the whole network at once, where two would leave one
 * side running on its own clock (docs/congestion.md). The
 * bottleneck's rate sits well below what this thread can send, so the
 * queue, not the host, is what limits the senders.
 *
 * Prints one JSON object (bench/incast/run.py runs the rounds): bottleneck
 * utilisation, drops, retransmits, Jain's fairness index of the senders'
 * goodput over 1 s windows, queue depth quantiles, the congestion
 * counters, and 10 ms series of the queue and each sender's goodput.
 * --check asserts the mechanisms instead of timing: with cc = dcqcn the
 * queue marked, the receiver's QPs counted the marks and sent CNPs, the
 * senders handled them and were held below the line rate; every WRITE
 * completed and its bytes arrived intact (the integration suite's incast).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include <uroce/uroce.h>

#include "uroce_config.h"
#include "uroce_engine.h"
#include "uroce_port.h"
#include "uroce_qp.h"
#include "uroce_cq.h"
#include "switch.h"

#define MAX_QPS_PER	8
#define POLL		32
#define IP_BASE		"10.77.0."

struct opts {
	unsigned int senders, qps_per, depth;
	uint32_t size;
	const char *cc;
	double rate_mbps, link_mbps, duration, warmup;
	unsigned int qcap, min_th, max_th, maxp_inv, wq_log2;
	const char *sets[32];
	unsigned int nsets;
	const char *eal;
	bool check;
};

struct sqp {
	struct uroce_qp *qp, *rqp;	/* the sender's QP, its receiver peer */
	unsigned int inflight;
	uint64_t posted, done;
	bool dead;
	uint8_t *src, *dst;		/* SIZE bytes each */
};

struct node {				/* a device and its objects */
	struct uroce_dev *dev;
	struct uroce_pd *pd;
	struct uroce_cq *cq;
	struct uroce_mr *mr;
	uint8_t *buf;
};

struct run {
	struct opts o;
	struct uroce_config cfg;
	struct node rx, tx[SW_MAX_SENDERS];
	struct sqp q[SW_MAX_SENDERS][MAX_QPS_PER];
	struct sw sw;
	unsigned int slots;
	uint64_t *bytes;		/* [sender][slot] goodput bytes */
	uint64_t errors, min_rate_kbps, limited_samples;
	char conf[64];
};

static void
usage(void)
{
	fprintf(stderr,
"usage: uroce-incast [options]\n"
"  --senders N        senders, 1..%u (default 2)\n"
"  --qps N            QPs per sender, 1..%u (default 1)\n"
"  --cc off|dcqcn     [port] cc of every device (default off)\n"
"  --rate MBPS        the bottleneck's drain rate, Mbit/s of frames (1000)\n"
"  --link-rate MBPS   each sender's link (default: --rate)\n"
"  --duration S       measured seconds (default 5), after --warmup S (1)\n"
"  --depth N          WRITEs in flight per QP (8), --size B each (65536)\n"
"  --qcap N           frames the queue holds (256)\n"
"  --min-th N --max-th N --maxp-inv N --wq-log2 N\n"
"                     RED: thresholds in frames (16, 64), 1/P at max-th\n"
"                     (10), averaging weight 2^-N (1)\n"
"  --set KEY=VALUE    a [port] key for every device (repeatable)\n"
"  --eal ARGS         EAL arguments (default: $UROCE_TEST_MEM, else\n"
"                     --no-huge -m 1024)\n"
"  --check            assert the mechanisms (CE marks, CNPs, cuts, data)\n",
		SW_MAX_SENDERS, MAX_QPS_PER);
}

static int
parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "senders", 1, NULL, 's' }, { "qps", 1, NULL, 'q' },
		{ "cc", 1, NULL, 'c' }, { "rate", 1, NULL, 'r' },
		{ "duration", 1, NULL, 'D' }, { "warmup", 1, NULL, 'W' },
		{ "depth", 1, NULL, 'd' }, { "size", 1, NULL, 'S' },
		{ "qcap", 1, NULL, 'Q' }, { "min-th", 1, NULL, 'm' },
		{ "max-th", 1, NULL, 'M' }, { "maxp-inv", 1, NULL, 'p' },
		{ "wq-log2", 1, NULL, 'w' }, { "set", 1, NULL, 'k' },
		{ "eal", 1, NULL, 'e' }, { "check", 0, NULL, 'C' },
		{ "link-rate", 1, NULL, 'l' }, { "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	int c;

	*o = (struct opts){ .senders = 2, .qps_per = 1, .depth = 8,
		.size = 65536, .cc = "off", .rate_mbps = 1000, .duration = 5,
		.warmup = 1, .qcap = 256, .min_th = 16, .max_th = 64,
		.maxp_inv = 10, .wq_log2 = 1 };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's': o->senders = (unsigned int)atoi(optarg); break;
		case 'q': o->qps_per = (unsigned int)atoi(optarg); break;
		case 'c': o->cc = optarg; break;
		case 'r': o->rate_mbps = atof(optarg); break;
		case 'l': o->link_mbps = atof(optarg); break;
		case 'D': o->duration = atof(optarg); break;
		case 'W': o->warmup = atof(optarg); break;
		case 'd': o->depth = (unsigned int)atoi(optarg); break;
		case 'S': o->size = (uint32_t)atoi(optarg); break;
		case 'Q': o->qcap = (unsigned int)atoi(optarg); break;
		case 'm': o->min_th = (unsigned int)atoi(optarg); break;
		case 'M': o->max_th = (unsigned int)atoi(optarg); break;
		case 'p': o->maxp_inv = (unsigned int)atoi(optarg); break;
		case 'w': o->wq_log2 = (unsigned int)atoi(optarg); break;
		case 'k':
			if (o->nsets == RTE_DIM(o->sets))
				return -EINVAL;
			o->sets[o->nsets++] = optarg;
			break;
		case 'e': o->eal = optarg; break;
		case 'C': o->check = true; break;
		default: usage(); return -EINVAL;
		}
	}
	if (o->link_mbps == 0)
		o->link_mbps = o->rate_mbps;
	if (o->senders < 1 || o->senders > SW_MAX_SENDERS ||
	    o->qps_per < 1 || o->qps_per > MAX_QPS_PER || o->depth < 1 ||
	    o->size < 1 || o->rate_mbps <= 0 || o->link_mbps <= 0 || o->duration <= 0 ||
	    o->warmup < 0 || (strcmp(o->cc, "off") != 0 &&
			      strcmp(o->cc, "dcqcn") != 0)) {
		usage();
		return -EINVAL;
	}
	return 0;
}

/* The configuration: port 0 the receiver on ringlink icr (side 1), port
 * i the sender i - 1 on ringlink icsI (side 0); the switch holds the other
 * sides' rings. */
static int
write_conf(struct run *r)
{
	const struct opts *o = &r->o;
	const char *eal = o->eal;
	unsigned int i, k;
	FILE *f;

	if (eal == NULL)
		eal = getenv("UROCE_TEST_MEM");
	if (eal == NULL || eal[0] == '\0')
		eal = "--no-huge -m 1024";
	snprintf(r->conf, sizeof(r->conf), "/tmp/uroce-incast-%d.conf",
		 (int)getpid());
	f = fopen(r->conf, "w");
	if (f == NULL)
		return -errno;
	for (i = 0; i <= o->senders; i++) {
		fprintf(f, "[port%u]\n", i);
		if (i == 0)
			fprintf(f, "dev = ringlink:icr,side=1\n");
		else
			fprintf(f, "dev = ringlink:ics%u,side=0\n", i);
		fprintf(f, "ip = " IP_BASE "%u/24\nmtu = 4096\ncc = %s\n",
			i + 1, o->cc);
		for (k = 0; k < o->nsets; k++)
			fprintf(f, "%.*s = %s\n",
				(int)strcspn(o->sets[k], "="), o->sets[k],
				strchr(o->sets[k], '=') != NULL ?
				strchr(o->sets[k], '=') + 1 : "");
	}
	fprintf(f, "[eal]\nlcores = 0\nargs = --no-pci %s\n", eal);
	return fclose(f) == 0 ? 0 : -EIO;
}

static int
node_open(struct node *n, unsigned int idx, size_t len)
{
	unsigned int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	int ret;

	n->dev = uroce_dev_get(idx);
	if (n->dev == NULL)
		return -ENODEV;
	n->buf = aligned_alloc(4096, RTE_ALIGN_CEIL(len, 4096));
	if (n->buf == NULL)
		return -ENOMEM;
	memset(n->buf, 0, len);
	ret = uroce_pd_alloc(n->dev, &n->pd);
	if (ret == 0)
		ret = uroce_dev_mr_reg(n->pd, n->buf, len, (uintptr_t)n->buf,
				       access, &n->mr);
	if (ret == 0)
		ret = uroce_dev_cq_create(n->dev, 4096, n, &n->cq);
	return ret;
}

static int
qp_new(struct node *n, uint32_t depth, struct uroce_qp **qp)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = depth, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return uroce_dev_qp_create(n->pd, n->cq, n->cq, &init, n, qp);
}

/* RESET -> INIT -> RTR -> RTS towards peer (ibv_modify_qp(3) masks). */
static int
qp_connect(struct uroce_qp *qp, struct uroce_dev *self,
	   struct uroce_qp *peer, struct uroce_dev *pdev)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	enum ibv_mtu mtu = RTE_MIN(uroce_dev_env(self)->lim.active_mtu,
				   uroce_dev_env(pdev)->lim.active_mtu);
	int ret;

	ret = uroce_dev_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret < 0)
		return ret;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = mtu,
		.dest_qp_num = peer->qpn, .rq_psn = peer->qpn & UROCE_PSN_MASK,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 1 };
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, uroce_dev_env(pdev)->gid[0].raw, 16);
	ret = uroce_dev_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER);
	if (ret < 0)
		return ret;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS,
		.sq_psn = qp->qpn & UROCE_PSN_MASK, .timeout = 14,
		.retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 1 };
	return uroce_dev_qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
				   IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				   IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int
wait_links(unsigned int n)
{
	uint64_t end = rte_rdtsc() + 10 * rte_get_tsc_hz();
	unsigned int i, up;

	do {
		uroce_poll();
		for (i = 0, up = 0; i < n; i++)
			up += uroce_port_link_up(uroce_dev_port(uroce_dev_get(i)));
		if (up == n)
			return 0;
	} while (rte_rdtsc() < end);
	return -ENOTCONN;
}

static int
setup(struct run *r)
{
	const struct opts *o = &r->o;
	unsigned int s, k, nq = o->qps_per;
	size_t len = (size_t)o->size * nq;
	/* The sender's NIC: its QPs leave at most at its link's rate, as
	 * a NIC's wire holds them, so that nothing waits between a QP's
	 * pacer and the link (a queue DCQCN's cuts could not reach). */
	struct ibv_qp_rate_limit_attr wire = {
		.rate_limit = (uint32_t)(o->link_mbps * 1000 / nq) };
	struct sqp *q;
	int ret;

	ret = wait_links(o->senders + 1);
	if (ret == 0)
		ret = node_open(&r->rx, 0, len * o->senders);
	for (s = 0; ret == 0 && s < o->senders; s++) {
		ret = node_open(&r->tx[s], s + 1, len);
		for (k = 0; ret == 0 && k < nq; k++) {
			q = &r->q[s][k];
			q->src = r->tx[s].buf + (size_t)k * o->size;
			q->dst = r->rx.buf + ((size_t)s * nq + k) * o->size;
			/* A pattern of its own per QP and offset. */
			for (size_t b = 0; b < o->size; b++)
				q->src[b] = (uint8_t)(b * 7 + s * 31 + k * 3 + 1);
			ret = qp_new(&r->tx[s], o->depth, &q->qp);
			if (ret == 0)
				ret = qp_new(&r->rx, 1, &q->rqp);
			if (ret == 0)
				ret = qp_connect(q->qp, r->tx[s].dev, q->rqp,
						 r->rx.dev);
			if (ret == 0)
				ret = qp_connect(q->rqp, r->rx.dev, q->qp,
						 r->tx[s].dev);
			if (ret == 0)
				ret = uroce_dev_qp_rate_limit(q->qp, &wire);
		}
	}
	if (ret < 0)
		fprintf(stderr, "uroce-incast: set-up: %s\n", strerror(-ret));
	return ret;
}

static void
post(struct run *r, unsigned int s, struct sqp *q)
{
	struct ibv_sge sge = { .addr = (uintptr_t)q->src, .length = r->o.size,
			       .lkey = r->tx[s].mr->lkey };
	struct ibv_send_wr wr = { .wr_id = (uintptr_t)q, .sg_list = &sge,
		.num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)q->dst;
	wr.wr.rdma.rkey = r->rx.mr->rkey;
	while (!q->dead && q->inflight < r->o.depth) {
		if (uroce_qp_post_send(q->qp, &wr, &bad) != 0)
			return;
		q->inflight++;
		q->posted++;
	}
}

/* Completions of sender s; slot < 0: not measuring. */
static void
reap(struct run *r, unsigned int s, long slot)
{
	struct ibv_wc wc[POLL];
	struct sqp *q;
	int n, i;

	n = uroce_cq_poll(r->tx[s].cq, POLL, wc);
	for (i = 0; i < n; i++) {
		q = (struct sqp *)(uintptr_t)wc[i].wr_id;
		q->inflight--;
		if (wc[i].status != IBV_WC_SUCCESS) {
			if (!q->dead)
				fprintf(stderr, "uroce-incast: sender %u: completion status %d\n",
					s, (int)wc[i].status);
			q->dead = true;
			r->errors++;
			continue;
		}
		q->done++;
		if (slot >= 0 && (unsigned long)slot < r->slots)
			r->bytes[(size_t)s * r->slots + (size_t)slot] +=
				r->o.size;
	}
}

/* The lowest DCQCN rate any sender QP is held to now. */
static void
rates(struct run *r)
{
	unsigned int s, k;
	uint64_t v;

	for (s = 0; s < r->o.senders; s++) {
		for (k = 0; k < r->o.qps_per; k++) {
			v = __atomic_load_n(&r->q[s][k].qp->cc_rate_kbps,
					    __ATOMIC_RELAXED);
			if (v == 0)
				continue;
			r->limited_samples++;
			if (r->min_rate_kbps == 0 || v < r->min_rate_kbps)
				r->min_rate_kbps = v;
		}
	}
}

static uint64_t
inflight(const struct run *r)
{
	uint64_t n = 0;
	unsigned int s, k;

	for (s = 0; s < r->o.senders; s++)
		for (k = 0; k < r->o.qps_per; k++)
			n += r->q[s][k].dead ? 0 : r->q[s][k].inflight;
	return n;
}

static void
traffic(struct run *r)
{
	uint64_t hz = rte_get_tsc_hz(), now, t_meas, t_end, t_drain,
		slot_cyc = hz / (1000 / SW_SLOT_MS), next_rate = 0;
	unsigned int s, k;
	long slot;

	now = rte_rdtsc();
	t_meas = now + (uint64_t)(r->o.warmup * (double)hz);
	t_end = t_meas + (uint64_t)(r->o.duration * (double)hz);
	r->sw.t0 = t_meas;
	sw_start(&r->sw);
	while ((now = rte_rdtsc()) < t_end) {
		if (now >= t_meas && !r->sw.measuring)
			r->sw.measuring = true;
		slot = now >= t_meas ? (long)((now - t_meas) / slot_cyc) : -1;
		uroce_poll();
		sw_poll(&r->sw);
		for (s = 0; s < r->o.senders; s++) {
			reap(r, s, slot);
			for (k = 0; k < r->o.qps_per; k++)
				post(r, s, &r->q[s][k]);
		}
		if (now >= next_rate) {
			rates(r);
			next_rate = now + hz / 1000;
		}
	}
	r->sw.measuring = false;
	/* Let what is in flight complete (not counted). */
	t_drain = rte_rdtsc() + 5 * hz;
	while (inflight(r) != 0 && rte_rdtsc() < t_drain) {
		uroce_poll();
		sw_poll(&r->sw);
		for (s = 0; s < r->o.senders; s++)
			reap(r, s, -1);
	}
}

static double
jain(const double *x, unsigned int n)
{
	double sum = 0, sq = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		sum += x[i];
		sq += x[i] * x[i];
	}
	return sq > 0 ? sum * sum / ((double)n * sq) : 0;
}

struct totals {
	struct uroce_qp_stats tx, rx;	/* summed over the sender / receiver QPs */
	bool data_ok;
};

static void
stats_add(struct uroce_qp_stats *a, const struct uroce_qp_stats *b)
{
	a->retransmits += b->retransmits;
	a->timeouts += b->timeouts;
	a->np_ecn_marked_roce_packets += b->np_ecn_marked_roce_packets;
	a->np_cnp_sent += b->np_cnp_sent;
	a->rp_cnp_handled += b->rp_cnp_handled;
	a->rp_cnp_ignored += b->rp_cnp_ignored;
	a->tx_pkts += b->tx_pkts;
	a->out_of_seq += b->out_of_seq;
	a->dup_reqs += b->dup_reqs;
}

static void
totals(struct run *r, struct totals *t)
{
	struct uroce_qp_stats st;
	unsigned int s, k;
	struct sqp *q;

	memset(t, 0, sizeof(*t));
	t->data_ok = true;
	for (s = 0; s < r->o.senders; s++) {
		for (k = 0; k < r->o.qps_per; k++) {
			q = &r->q[s][k];
			if (uroce_dev_qp_stats(q->qp, &st) == 0)
				stats_add(&t->tx, &st);
			if (uroce_dev_qp_stats(q->rqp, &st) == 0)
				stats_add(&t->rx, &st);
			if (q->done == 0 || q->dead ||
			    memcmp(q->src, q->dst, r->o.size) != 0)
				t->data_ok = false;
		}
	}
}

/* Frame bytes of one message sent once: a header per packet of the path
 * MTU (Ethernet, IPv4, UDP, BTH, ICRC: 58 B) and the RETH of the first. */
static double
msg_frame_bytes(const struct run *r)
{
	uint32_t mtu = uroce_mtu_bytes(RTE_MIN(
		uroce_dev_env(r->rx.dev)->lim.active_mtu,
		uroce_dev_env(r->tx[0].dev)->lim.active_mtu));
	uint32_t pkts = (r->o.size + mtu - 1) / mtu;

	return (double)r->o.size + 58.0 * pkts + 16.0;
}

static void
print_series(const struct run *r)
{
	unsigned int s, i;

	printf("  \"series\": {\"slot_ms\": %u, \"queue\": [", SW_SLOT_MS);
	for (i = 0; i < r->slots; i++)
		printf("%s%.1f", i ? ", " : "", r->sw.q_series[i]);
	printf("],\n    \"sender_mbps\": [");
	for (s = 0; s < r->o.senders; s++) {
		printf("%s[", s ? ", " : "");
		for (i = 0; i < r->slots; i++)
			printf("%s%.1f", i ? ", " : "",
			       (double)r->bytes[(size_t)s * r->slots + i] * 8 /
			       (SW_SLOT_MS * 1e3));
		printf("]");
	}
	printf("]}\n");
}

/* One JSON object on stdout; returns the failures of --check. */
static int
report(struct run *r)
{
	const struct opts *o = &r->o;
	const struct sw_counters *c = &r->sw.c;
	unsigned int s, i, w, nwin, per = 1000 / SW_SLOT_MS;
	double cap, good = 0;
	double x[SW_MAX_SENDERS], jmin = 1, jsum = 0, gb[SW_MAX_SENDERS];
	struct totals t;
	int fails = 0;

	totals(r, &t);
	nwin = r->slots / per;
	if (nwin == 0) {		/* a short run: one window */
		nwin = 1;
		per = r->slots;
	}
	for (s = 0; s < o->senders; s++) {
		gb[s] = 0;
		for (i = 0; i < r->slots; i++)
			gb[s] += (double)r->bytes[(size_t)s * r->slots + i];
		good += gb[s];
	}
	printf("{\"senders\": %u, \"qps_per_sender\": %u, \"cc\": \"%s\", "
	       "\"rate_mbps\": %.0f, \"link_mbps\": %.0f, \"duration_s\": %.2f, "
	       "\"size\": %u, "
	       "\"depth\": %u,\n  \"qcap\": %u, \"min_th\": %u, \"max_th\": %u, "
	       "\"maxp_inv\": %u, \"wq_log2\": %u,\n", o->senders, o->qps_per,
	       o->cc, o->rate_mbps, o->link_mbps, o->duration, o->size, o->depth, o->qcap,
	       o->min_th, o->max_th, o->maxp_inv, o->wq_log2);
	cap = o->rate_mbps * 1e6 / 8 * o->duration;
	printf("  \"goodput_mbps\": %.1f, \"util\": %.4f, \"goodput_util\": %.4f, "
	       "\"switch_away\": %.4f,\n",
	       good * 8 / o->duration / 1e6, (double)c->busy_bytes / cap,
	       good / o->size * msg_frame_bytes(r) / cap,
	       (double)r->sw.away_cycles / (double)rte_get_tsc_hz() /
	       o->duration);
	printf("  \"sender_mbps\": [");
	for (s = 0; s < o->senders; s++)
		printf("%s%.1f", s ? ", " : "", gb[s] * 8 / o->duration / 1e6);
	printf("],\n  \"jain\": [");
	for (w = 0; w < nwin; w++) {
		for (s = 0; s < o->senders; s++) {
			x[s] = 0;
			for (i = w * per; i < (w + 1) * per && i < r->slots; i++)
				x[s] += (double)r->bytes[(size_t)s * r->slots + i];
		}
		jsum += jain(x, o->senders);
		jmin = RTE_MIN(jmin, jain(x, o->senders));
		printf("%s%.4f", w ? ", " : "", jain(x, o->senders));
	}
	printf("], \"jain_mean\": %.4f, \"jain_min\": %.4f,\n", jsum / nwin, jmin);
	printf("  \"q_p50\": %u, \"q_p99\": %u, \"q_max\": %u,\n",
	       sw_quantile(&r->sw, 0.5), sw_quantile(&r->sw, 0.99),
	       sw_quantile(&r->sw, 1.0));
	printf("  \"arrived\": %" PRIu64 ", \"ect\": %" PRIu64 ", \"marked\": %"
	       PRIu64 ", \"drops\": %" PRIu64 ", \"stalls\": %" PRIu64
	       ", \"stray\": %" PRIu64 ",\n", c->arrived, c->ect, c->marked,
	       c->dropped, c->stalls, c->stray);
	printf("  \"retransmits\": %" PRIu64 ", \"timeouts\": %" PRIu64
	       ", \"tx_pkts\": %" PRIu64 ", \"errors\": %" PRIu64
	       ", \"data_ok\": %s,\n", t.tx.retransmits, t.tx.timeouts,
	       t.tx.tx_pkts, r->errors, t.data_ok ? "true" : "false");
	printf("  \"np_ecn_marked_roce_packets\": %" PRIu64 ", \"np_cnp_sent\": %"
	       PRIu64 ", \"rp_cnp_handled\": %" PRIu64 ", \"rp_cnp_ignored\": %"
	       PRIu64 ", \"min_rate_kbps\": %" PRIu64 ",\n",
	       t.rx.np_ecn_marked_roce_packets, t.rx.np_cnp_sent,
	       t.tx.rp_cnp_handled, t.tx.rp_cnp_ignored, r->min_rate_kbps);
	print_series(r);
	printf("}\n");
	if (!o->check)
		return 0;
#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, \
	"uroce-incast: --check: not so: %s\n", #cond); fails++; } } while (0)
	CHECK(t.data_ok);
	CHECK(r->errors == 0);
	CHECK(c->stray == 0);
	if (strcmp(o->cc, "dcqcn") == 0) {
		CHECK(c->ect > 0);
		CHECK(c->marked > 0);
		CHECK(t.rx.np_ecn_marked_roce_packets > 0);
		CHECK(t.rx.np_ecn_marked_roce_packets <= c->marked);
		CHECK(t.rx.np_cnp_sent > 0);
		CHECK(t.tx.rp_cnp_handled > 0);
		CHECK(t.tx.rp_cnp_handled + t.tx.rp_cnp_ignored <=
		      t.rx.np_cnp_sent);
		CHECK(r->limited_samples > 0);
		CHECK(r->min_rate_kbps > 0 && r->min_rate_kbps <
		      (uint64_t)o->rate_mbps * 1000);
	} else {
		CHECK(c->ect == 0);
		CHECK(c->marked == 0);
		CHECK(t.rx.np_cnp_sent == 0);
		CHECK(t.tx.rp_cnp_handled == 0);
	}
#undef CHECK
	return fails;
}

int
main(int argc, char **argv)
{
	static struct run r;
	char err[UROCE_CONFIG_ERR_LEN];
	const char *links[SW_MAX_SENDERS];
	char names[SW_MAX_SENDERS][16];
	struct sw_params sp;
	unsigned int s;
	int ret, fails = 1;

	if (parse(argc, argv, &r.o) < 0)
		return 2;
	if (write_conf(&r) < 0 ||
	    uroce_config_load(r.conf, &r.cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		unlink(r.conf);
		return 1;
	}
	unlink(r.conf);
	ret = uroce_engine_init(&r.cfg, UROCE_ENGINE_NO_LCORES |
				UROCE_ENGINE_WIRE_XDEV, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	r.slots = (unsigned int)(r.o.duration * 1000 / SW_SLOT_MS);
	r.bytes = calloc((size_t)r.o.senders * (r.slots + 1), sizeof(*r.bytes));
	for (s = 0; s < r.o.senders; s++) {
		snprintf(names[s], sizeof(names[s]), "ics%u", s + 1);
		links[s] = names[s];
	}
	sp = (struct sw_params){ .senders = r.o.senders,
		.rate_bps = r.o.rate_mbps * 1e6, .link_bps = r.o.link_mbps * 1e6, .qcap = r.o.qcap,
		.min_th = r.o.min_th, .max_th = r.o.max_th,
		.maxp_inv = r.o.maxp_inv, .wq_log2 = r.o.wq_log2,
		.slots = r.slots };
	if (r.bytes == NULL || sw_init(&r.sw, &sp, "icr", links) < 0)
		goto out;
	if (setup(&r) == 0) {
		traffic(&r);
		sw_finish(&r.sw);
		fails = report(&r);
	}
out:
	sw_fini(&r.sw);		/* its frames are the ports' mbufs */
	uroce_engine_fini();
	uroce_config_free(&r.cfg);
	free(r.bytes);
	return fails == 0 ? 0 : 1;
}
