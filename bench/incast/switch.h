/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The incast's switch (switch.c): the senders' ringlinks and the
 * receiver's meet here, and frames are forwarded by destination MAC. Frames
 * for the receiver wait in one FIFO, the bottleneck, which drains at a fixed
 * rate; DPDK's RED (rte_red, librte_sched) decides on each arrival whether
 * an ECN-capable frame is marked CE, with a probability that rises with the
 * queue between two thresholds, as switches mark for DCQCN (WRED with ECN).
 * A frame is dropped only when the queue is full. Each sender's link runs at
 * a set rate too (a switch's ports are all of one speed): frames wait in
 * the sender's ring, as in a NIC's queue, until their link can carry them.
 * Frames from the receiver (ACKs, NAKs, CNPs) go straight back.
 */
#ifndef INCAST_SWITCH_H
#define INCAST_SWITCH_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_red.h>

#define SW_MAX_SENDERS	15
#define SW_MAX_QUEUE	1024		/* RED's thresholds stay below 1024 */
#define SW_SAMPLE_US	10		/* queue depth sampled this often */
#define SW_SLOT_MS	10		/* time series slots */
#define SW_GAP_US	200		/* a longer gap between polls: away */
#define SW_CATCHUP_US	1000		/* the most a link catches up */

struct sw_params {
	unsigned int senders;
	double rate_bps;		/* drain rate, frame bytes */
	double link_bps;		/* each sender's link, frame bytes */
	unsigned int qcap;		/* frames the queue holds */
	unsigned int min_th, max_th;	/* RED thresholds, frames */
	unsigned int maxp_inv;		/* 1 / marking probability at max_th */
	unsigned int wq_log2;		/* RED's averaging weight 2^-wq_log2 */
	unsigned int slots;		/* time series length */
};

struct sw_counters {
	uint64_t arrived;		/* frames for the receiver */
	uint64_t marked;		/* of them, marked CE */
	uint64_t ect;			/* of them, ECN-capable */
	uint64_t dropped;		/* of them, dropped: queue full */
	uint64_t sent, sent_bytes;	/* drained to the receiver */
	uint64_t busy_bytes;		/* sent_bytes counted from measure_from */
	uint64_t back;			/* frames from the receiver forwarded */
	uint64_t stray;			/* frames for nobody (freed) */
	uint64_t stalls;		/* receiver's ring full at a departure */
};

struct sw {
	struct sw_params p;
	struct rte_ring *s_in[SW_MAX_SENDERS], *s_out[SW_MAX_SENDERS];
	struct rte_ring *r_in, *r_out;
	/* The senders' links: a frame taken from the sender's ring waits
	 * here for its link's credit. */
	struct rte_mbuf *s_next[SW_MAX_SENDERS];
	double s_credit[SW_MAX_SENDERS], link_bytes_per_cycle;
	uint64_t s_last[SW_MAX_SENDERS];
	struct rte_red_config red_cfg;
	struct rte_red red;
	struct rte_mbuf **q;
	unsigned int q_head, q_len;
	double bytes_per_cycle, credit;
	uint64_t last_tsc, next_sample, sample_cycles;
	uint64_t t0, slot_cycles;	/* time series start (TSC), slot length */
	bool measuring;			/* counts busy_bytes and histogram */
	uint64_t prev, gap_cycles;	/* the last poll; a gap that is away */
	struct rte_ether_addr macs[SW_MAX_SENDERS];	/* learnt */
	bool known[SW_MAX_SENDERS];
	uint64_t away_cycles;		/* gaps over SW_GAP_US while measuring */
	double catchup;			/* credit cap, in frames */
	struct sw_counters c;
	uint64_t *hist;			/* [qcap + 1] samples of the depth */
	double *q_series;		/* [slots] mean depth in the slot */
	uint64_t *q_sum, *q_n;		/* [slots] */
};

/* Look the rings up (ringlink names: incast.c), set RED up. */
int sw_init(struct sw *s, const struct sw_params *p, const char *rx_link,
	    const char *const *tx_links);
void sw_fini(struct sw *s);
/* Forwarding: sw_start() once, then sw_poll() in the caller's loop (the
 * thread that runs the stack: one busy thread, so that when the host takes
 * the core, senders, switch and receiver stop together); sw_finish() makes
 * the queue's series. */
void sw_start(struct sw *s);
void sw_poll(struct sw *s);
void sw_finish(struct sw *s);
/* Depth below which fraction f of the samples lie. */
unsigned int sw_quantile(const struct sw *s, double f);

#endif
