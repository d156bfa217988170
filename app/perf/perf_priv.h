/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_PERF_PRIV_H
#define UROCE_PERF_PRIV_H

/*
 * uroce-perf: the benchmark app. Two processes (--server, --connect ADDR)
 * over one port each; the client drives a list of phases and the server
 * follows them through the TCP control connection. Every transport phase
 * has a raw phase (plain DPDK tx/rx bursts of frames of the same length on
 * the same port, no transport) run just before it, so each figure comes
 * with its ceiling from the same run. A row alternates the two in rounds
 * (ceiling, transport, ceiling, transport, ...) and reports the median
 * round of each, their spread, and whether the ceiling moved between
 * rounds by more than --moved (the machine changed speed meanwhile).
 *
 * Roles of the files:
 *   options.c    command line
 *   ctl.c        TCP control connection: hello, QP details, phases
 *   setup.c      device objects, QPs brought to RTS (through the backend)
 *   native.c     backend: liburoce's own calls, progress on this thread
 *   verbs.c      backend (--verbs): the verbs library, progress by the
 *                engine lcore
 *   wl_*.c       workloads (struct perf_wl, like testpmd's fwd engines)
 *   bw.c         bandwidth / message-rate loop on the transport
 *   lat.c        latency ping-pong on the transport
 *   raw.c        the raw ceiling: bandwidth, packet rate, ping-pong
 *   hist.c       latency histogram
 *   rounds.c     medians, spreads and the moved rule of a row's rounds
 *   report.c     live line, final table, JSON
 *   plot.c       gnuplot output
 *   pace.c       per-QP rates and pacing measured in windows (--window)
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#include "uroce_engine.h"

#define PERF_EXIT_USAGE		2
#define PERF_MAX_SIZES		32
#define PERF_MAX_QPS		10000
#define PERF_DEF_PORT		18515	/* perftest's default */
#define PERF_WAIT_S		30.0	/* bound of every wait without progress */
#define PERF_FAIL_WAIT_S	5.0	/* for the server's result after a failed
					 * phase: the server may be why */
#define PERF_MAX_ROUNDS		25
/* Rounds of a row: three give a median that one slow spell of the host
 * cannot move, and keep the demo's sweep (21 rows) at its 30 s since -D
 * is split over the rounds. */
#define PERF_DEF_ROUNDS		3
/* A ceiling that moved by more than 15% between two rounds flags its row:
 * on a quiet 2-vCPU VM the unpaced ceiling varies by up to that much from
 * one run to the next; bench/pace/run.sh applies the same limit
 * (PACE_MOVED) to the ceilings around a paced run. */
#define PERF_DEF_MOVED		0.15

/* ------------------------------------------------------------------------
 * Options.
 */
enum perf_mode {
	PERF_MODE_BW = 0x1,	/* goodput */
	PERF_MODE_RATE = 0x2,	/* message rate (small messages) */
	PERF_MODE_LAT = 0x4,	/* ping-pong latency */
};

struct perf_opts {
	const char *config;
	bool server;
	const char *connect;		/* client: the server's address */
	uint16_t tcp_port;
	int core;			/* -1: do not pin; -2: default */
	unsigned int wl;		/* index in perf_wls[] */
	unsigned int modes;		/* PERF_MODE_* */
	uint32_t sizes[PERF_MAX_SIZES];	/* bw/rate message sizes */
	unsigned int nsizes;
	uint32_t lat_size;
	uint32_t max_size;		/* buffer size (largest message) */
	uint32_t depth;			/* outstanding WRs per QP */
	double duration;		/* seconds of a row's figure, split over
					 * its rounds (0: iterations) */
	uint64_t iters;			/* messages per phase, every round */
	unsigned int rounds;		/* ceiling/transport rounds of a row */
	double moved;			/* fraction: the ceiling moved limit */
	uint32_t qps;
	uint32_t inflight;		/* messages in flight, all QPs (0: qps x depth) */
	uint32_t rate_kbps;		/* per QP, 0: none */
	uint64_t rate_total_kbps;	/* split 1:2:3:4 over the QPs (pace.c) */
	uint32_t burst;			/* max_burst_sz, 0: the default */
	double window_s;		/* pacing windows (pace.c), 0: none */
	bool raw_only, no_raw;
	const char *json, *plot;
	bool quiet;			/* no live line */
	bool loop;			/* both ends in one process */
	bool bidir;			/* bw: both sides send */
	bool interactive;		/* -i */
	bool verbs;			/* --verbs: the verbs backend */
	bool srq;			/* every QP receives from one SRQ */
};

int perf_opts_parse(int argc, char **argv, struct perf_opts *o);
/* --srq: receives the SRQ holds: twice the messages that can be in
 * flight, at most qps x depth; 0 without --srq. */
uint32_t perf_srq_wr(const struct perf_opts *o);

/* ------------------------------------------------------------------------
 * The run's state, the same shape on both sides.
 */
/* The transport counters a phase reports, summed over the device's QPs. */
struct perf_qp_ctr {
	uint64_t retransmits;
	uint64_t timeouts;		/* local ACK timeouts, an ACK owed */
	uint64_t late_timeouts;		/* expiries with none owed */
};

struct perf_bw_res {
	uint64_t msgs, bytes, frames, errors;
	uint64_t failed_qps;		/* QPs with an error completion */
	double secs;
	uint64_t cycles;		/* of the busy loop */
	/* CPU time of this thread in the loop, in TSC cycles: unlike
	 * cycles, it leaves out the time other processes had the core. */
	uint64_t cpu_cycles;
	struct perf_qp_ctr qc;		/* the QPs' counters over the phase */
	/* The engine loop's gaps over 1 ms in the phase (uroce_lcore_stats,
	 * lcore 0), in TSC cycles: the server sends its own to the client. */
	uint64_t gap_cycles;
};

struct perf_peer_info {
	uint32_t active_mtu;		/* enum ibv_mtu */
	uint32_t rkey;
	uint64_t addr;
	uint8_t gid[16];
	uint8_t mac[6];
	uint16_t pad;
};

struct perf_qp {
	struct uroce_qp *qp;		/* the stack's QP (verbs: behind vqp,
					 * for its counters only) */
	struct ibv_qp *vqp;		/* verbs backend */
	uint32_t qpn;
	uint32_t rqpn, rpsn;		/* the peer's QP */
	uint32_t outstanding;		/* send WRs posted, not completed */
	uint32_t recvs;			/* receives posted */
};

struct perf_ops;
struct perf_bw_half;
struct perf_raw_half;

struct perf {
	struct perf_opts *o;
	const struct perf_ops *ops;	/* the backend */
	int fd;				/* control connection */
	uint64_t hz;
	struct uroce_dev *dev;
	struct uroce_port *port;
	struct uroce_pd *pd;
	struct uroce_mr *mr;
	struct uroce_cq *scq, *rcq;
	uint32_t scq_size;
	uint32_t lkey, rkey, max_inline; /* of the MR; of every QP */
	struct uroce_srq *srq;		/* native --srq: the QPs' receives */
	/* The verbs backend's objects (verbs.c). */
	struct ibv_context *vctx;
	struct ibv_pd *vpd;
	struct ibv_mr *vmr;
	struct ibv_cq *vscq, *vrcq;
	struct ibv_srq *vsrq;
	/* --srq (either backend): receives the SRQ is kept filled with, 0
	 * without one; receives posted to it. */
	uint32_t srq_wr;
	uint32_t srq_recvs;
	/* Receives kept posted on each QP without an SRQ: PERF_RX_DEPTH x
	 * depth. A receive is taken when its message arrives but posted again
	 * only when this thread polls its completion, and the sender may
	 * already have the next depth messages in flight: a queue of only
	 * depth receives runs dry (RNR NAK, then go-back-N of everything
	 * after it). perftest keeps 512 receives for 128 sends the same way. */
	uint32_t rx_depth;
	struct perf_qp *qps;
	uint32_t nqp;
	/* The buffer: the target area [0, area) (WRITEs and receives land
	 * there, READs read it), the latency source area [area, 2 area),
	 * then a page of atomic slots. */
	uint8_t *buf;
	size_t buf_len;
	uint32_t area;
	struct perf_peer_info me, peer;
	enum ibv_mtu path_mtu;
	uint32_t mtu;			/* path MTU bytes */
	bool rate_warned;
	unsigned int dev_idx;		/* device uroce<dev_idx> */
	/* --loop: both ends in this process. The client's twin is the
	 * server side, stepped from the client's loops (loop.c). */
	struct perf *twin;
	uint32_t twin_kind;		/* the phase the twin serves */
	struct perf_bw_res twin_res;	/* what it counted */
	uint64_t twin_first, twin_last;	/* raw: first and last frame */
	void *twin_lat;			/* lat.c's server state */
	/* --bidir: this side also serves the peer's messages (receives) in
	 * its progress calls, counting them here; and its raw loop counts
	 * what arrives (twin_first/last: the window) instead of dropping. */
	struct perf_bw_res *self_srv;
	struct perf_bw_res *raw_rx;
	struct perf_bw_res bidir_rx;	/* client: its half received */
	/* --loop --bidir: the twin's own sending half (bw.c, raw.c). */
	struct perf_bw_half *bw_half;
	struct perf_raw_half *raw_half;
	struct perf_pace *pace;		/* client with --window etc. (pace.c) */
};

/* ------------------------------------------------------------------------
 * Backends: how the workloads reach the stack, like testpmd's forwarding
 * engines a struct of callbacks. native.c calls liburoce and progresses
 * the stack on the benchmark's thread (uroce_poll()); verbs.c goes through
 * the verbs library (ibv_post_send(), ibv_poll_cq() on the same objects
 * libibverbs.so.1 is built from) while the engine lcore progresses, to
 * show what the layer costs. Errors are negative errno.
 */
struct perf_ops {
	const char *name;
	/* The stack up from the config, then p->dev; and down again. */
	int (*start)(struct perf *p, const char *config);
	void (*stop)(struct perf *p);
	/* --loop: the second device (tw->dev_idx) of the started stack,
	 * for the twin; and closed again, before stop. */
	int (*open_twin)(struct perf *tw);
	void (*close_twin)(struct perf *tw);
	/* PD and MR over p->buf (p->lkey, p->rkey); the CQs
	 * (p->scq_size); one QP (q->qpn, p->max_inline); modify. */
	int (*pd_mr)(struct perf *p, unsigned int access);
	int (*cqs)(struct perf *p, uint32_t cqe_s, uint32_t cqe_r);
	int (*qp_create)(struct perf *p, struct perf_qp *q,
			 struct ibv_qp_init_attr *init);
	int (*qp_modify)(struct perf_qp *q, struct ibv_qp_attr *a, int mask);
	int (*rate_limit)(struct perf_qp *q, struct ibv_qp_rate_limit_attr *a);
	/* Every object (any of them may be missing). */
	void (*close)(struct perf *p);
	int (*post_send)(struct perf_qp *q, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad);
	int (*post_recv)(struct perf_qp *q, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad);
	/* --srq: one SRQ of max_wr receives (before the QPs, which
	 * qp_create then attaches to it; close destroys it); its
	 * receives. */
	int (*srq_create)(struct perf *p, uint32_t max_wr);
	int (*post_srq_recv)(struct perf *p, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad);
	/* The send CQ, or the receive CQ: completions, < 0 overrun. */
	int (*poll_cq)(struct perf *p, bool recv, int n, struct ibv_wc *wc);
	/* fn(arg) where the port's queue is fn's alone (the raw ceiling). */
	int (*on_port)(struct perf *p, int (*fn)(void *arg), void *arg);
};

extern const struct perf_ops perf_native_ops, perf_verbs_ops;

/* ------------------------------------------------------------------------
 * Workloads: what one WR is, for each verb.
 */
enum perf_lat_kind {
	PERF_LAT_MEMPOLL,	/* ping-pong by writes; each side polls memory */
	PERF_LAT_RECV,		/* ping-pong by messages; each side polls its CQ */
	PERF_LAT_COMPLETION,	/* one-sided: the requester's completion time */
};

struct perf_wl {
	const char *name;
	enum ibv_wr_opcode opcode;
	bool needs_recv;		/* the responder consumes receives */
	uint32_t fixed_size;		/* atomics: 8, else 0 */
	enum perf_lat_kind lat;
	/* Bytes of a frame besides its payload: Ethernet, IPv4, UDP, BTH,
	 * the first packet's extension headers, ICRC. */
	uint32_t frame_overhead;
	/* Fill wr (and sge) for one message of size bytes to peer buffer
	 * offset roff. wr is zeroed, sg_list points at sge. */
	void (*fill)(const struct perf *p, struct ibv_send_wr *wr,
		     uint32_t size, uint64_t roff);
};

extern const struct perf_wl *const perf_wls[];
extern const unsigned int perf_nwls;
const char *perf_wc_status(enum ibv_wc_status s);
/* Headers of every frame: Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4. */
#define PERF_FRAME_BASE		58u
void perf_wl_sge(const struct perf *p, struct ibv_send_wr *wr, uint64_t off,
		 uint32_t size);

/* ------------------------------------------------------------------------
 * Results.
 */
struct perf_hist {
	uint64_t count, max, min, sum;
	uint64_t b[2304];		/* log-linear buckets of nanoseconds */
};

/* Nanoseconds of cycles / div. */
uint64_t perf_cyc_ns(const struct perf *p, uint64_t cycles, unsigned int div);
void perf_hist_reset(struct perf_hist *h);
void perf_hist_add(struct perf_hist *h, uint64_t ns);
uint64_t perf_hist_pct(const struct perf_hist *h, double pct);
/* Each non-empty bucket's value and cumulative fraction, for the CDF. */
void perf_hist_cdf(const struct perf_hist *h, FILE *f);

enum perf_phase_kind {
	PH_RAW_BW = 1, PH_BW, PH_RAW_LAT, PH_LAT, PH_QUIT,
};

struct perf_lat_res {
	struct perf_hist h;
	uint64_t errors;
};

/* A row: raw, tp, rlat and tlat are its median round's (by the figure
 * the row is judged by), except the trouble counters (errors, failed QPs,
 * retransmits, timeouts), which are summed over all its rounds. */
struct perf_row {
	enum perf_mode mode;
	uint32_t size, frame_len;
	bool has_raw, has_tp;
	struct perf_bw_res raw, tp;	/* bw, rate */
	struct perf_lat_res *rlat, *tlat; /* lat */
	/* Each round's figure: Gbit/s (bw), Mmsg/s or Mpps (rate), p50 ns
	 * (lat); nraw, ntp of them measured. */
	double raw_fig[PERF_MAX_ROUNDS], tp_fig[PERF_MAX_ROUNDS];
	unsigned int nraw, ntp;
	bool moved;			/* the ceiling moved between rounds */
};

/* rounds.c: the round whose figure is the median of v[0..n) (the lower
 * one of the middle two for an even n); the smallest and largest. */
unsigned int perf_median_round(const double *v, unsigned int n);
void perf_spread(const double *v, unsigned int n, double *min, double *max);
/* Whether a figure moved from a to b by more than the fraction lim of a:
 * the rule for a ceiling measured twice. */
bool perf_moved(double a, double b, double lim);
/* Whether the row's ceiling moved between any two of its rounds. */
bool perf_row_moved(const struct perf_row *w, double lim);

/* ------------------------------------------------------------------------
 * Control connection (ctl.c).
 */
struct perf_phase {
	uint32_t kind;			/* enum perf_phase_kind */
	uint32_t size;			/* message bytes, or frame bytes (raw) */
	uint64_t iters;
	double duration;
	uint32_t round;			/* of the row, 0 .. hello rounds - 1 */
	uint32_t pad;
};

struct perf_hello {
	uint32_t magic;
	uint32_t wl, nqp, depth, max_size, rate_kbps, bidir;
	uint32_t srq_wr;		/* --srq: receives the SRQ holds; 0: none */
	uint32_t rounds;		/* phases of a row come in that many */
	uint32_t pad;
	struct perf_peer_info info;
};

int perf_ctl_listen(uint16_t port);
int perf_ctl_accept(int lfd);
int perf_ctl_connect(const char *host, uint16_t port);
bool perf_ctl_send(int fd, const void *m, size_t len);
/* 1: got len bytes; 0: nothing within wait_s; -1: EOF or error */
int perf_ctl_recv(int fd, void *m, size_t len, double wait_s);
/* Non-blocking: whether a message is waiting. */
bool perf_ctl_ready(int fd);
/* Whether a message is waiting, or comes within ms milliseconds. */
bool perf_ctl_wait(int fd, int ms);

/* ------------------------------------------------------------------------
 * Phases.
 */
struct perf_hello;
int perf_setup(struct perf *p, const struct perf_hello *h);
int perf_connect_qps(struct perf *p, const struct perf_hello *h);
void perf_teardown(struct perf *p);
/* Receives (the whole target area each) for QP qi: on its RQ, or on the
 * SRQ all QPs share. fill tops its queue up to want (the SRQ: srq_wr);
 * taken counts one that completed. 0 or a negative errno. */
int perf_recvs_fill(struct perf *p, uint32_t qi, uint32_t want);
void perf_recv_taken(struct perf *p, uint32_t qi);
/* Receive WQEs the run keeps posted, over all QPs. */
uint64_t perf_recvs_total(const struct perf *p);

#define PERF_RX_DEPTH	4

int perf_bw_client(struct perf *p, const struct perf_phase *ph,
		   struct perf_bw_res *r);
int perf_bw_server(struct perf *p, const struct perf_phase *ph,
		   struct perf_bw_res *r);
int perf_lat_run(struct perf *p, const struct perf_phase *ph,
		 struct perf_lat_res *r);
int perf_raw_bw_client(struct perf *p, const struct perf_phase *ph,
		       struct perf_bw_res *r);
int perf_raw_bw_server(struct perf *p, const struct perf_phase *ph,
		       struct perf_bw_res *r);
int perf_raw_lat(struct perf *p, const struct perf_phase *ph,
		 struct perf_lat_res *r);

/* Server halves that loop.c steps (the two-process server loops on them). */
int perf_bw_server_begin(struct perf *p);
int perf_bw_server_step(struct perf *p, struct perf_bw_res *r);
int perf_lat_server_begin(struct perf *p, const struct perf_phase *ph);
int perf_lat_server_step(struct perf *p, struct perf_lat_res *r);
void perf_lat_server_end(struct perf *p);
void perf_raw_bw_server_step(struct perf *p, struct perf_bw_res *r);
void perf_raw_pong_step(struct perf *p, struct perf_lat_res *r);

/* --bidir, on the client: serve the server's half of ph too (main.c). */
int perf_bidir_begin(struct perf *p, const struct perf_phase *ph);
/* --loop --bidir: the twin's own half of a bw or raw bw phase, stepped
 * from perf_twin_step() until done; close gives what it did. */
int perf_bw_half_open(struct perf *tw, const struct perf_phase *ph);
void perf_bw_half_step(struct perf *tw);
bool perf_bw_half_done(const struct perf *tw);
int perf_bw_half_close(struct perf *tw, struct perf_bw_res *r);
int perf_raw_half_open(struct perf *tw, const struct perf_phase *ph);
void perf_raw_half_step(struct perf *tw);
bool perf_raw_half_done(const struct perf *tw);
void perf_raw_half_close(struct perf *tw);

/* Progress: the stack, and in --loop the twin's half of the phase. */
void perf_progress(struct perf *p);
void perf_twin_step(struct perf *p);
int perf_loop_run(struct perf *client, struct perf *server);
/* loop.c's phase: both halves; *srv what the server half counted. */
int perf_loop_phase(struct perf *p, const struct perf_phase *ph, void *res,
		    struct perf_bw_res *srv, uint64_t *srv_lat_errors);
int perf_client_rows(struct perf *p);
int perf_interactive(struct perf *p);
/* -i's stop: the loops under way end early, no further phase starts. */
extern volatile bool perf_stop;

/* Frame length of a message of size bytes: the largest frame it makes. */
uint32_t perf_frame_len(const struct perf *p, uint32_t size);
/* Payload bytes of that frame. */
uint32_t perf_frame_payload(const struct perf *p, uint32_t size);

double perf_now(void);
/* Seconds of CPU time of the calling thread. */
double perf_thread_cpu(void);
void perf_qp_counters(struct perf *p, struct perf_qp_ctr *c);
void perf_qp_counters_since(struct perf *p, const struct perf_qp_ctr *c0,
			    struct perf_qp_ctr *c);

/* ------------------------------------------------------------------------
 * Output (report.c, plot.c).
 */
struct perf_live {
	uint64_t next, last_tsc, last_msgs, last_bytes, last_pkts;
};
void perf_live_start(struct perf *p, struct perf_live *l, uint64_t now);
void perf_live_tick(struct perf *p, struct perf_live *l, uint64_t now,
		    uint64_t msgs, uint64_t bytes);

void perf_report_table(const struct perf *p, const struct perf_row *rows,
		       unsigned int n, FILE *f);
int perf_report_json(const struct perf *p, const struct perf_row *rows,
		     unsigned int n, const char *path);
int perf_plot(const struct perf *p, const struct perf_row *rows,
	      unsigned int n, const char *path);

/* pace.c: set-up after the QPs are connected, the bw phase's hooks. */
struct perf_pace;
int perf_pace_setup(struct perf *p);
void perf_pace_free(struct perf *p);
void perf_pace_begin(struct perf *p, double duration);
void perf_pace_tick(struct perf *p, uint64_t now);
/* The server's result of the paced phase: its loop's gaps. */
void perf_pace_peer(struct perf *p, const struct perf_bw_res *srv);
void perf_pace_report(const struct perf *p, FILE *f);
void perf_pace_json(const struct perf *p, FILE *f);

double perf_gbps(const struct perf_bw_res *r);
double perf_mps(const struct perf_bw_res *r);	/* messages (frames) / s */

#endif /* UROCE_PERF_PRIV_H */
