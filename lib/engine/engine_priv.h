/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * What the engine's files share: the engine, its lcore contexts, devices
 * and objects, and the functions one file offers the others.
 */
#ifndef UROCE_ENGINE_PRIV_H
#define UROCE_ENGINE_PRIV_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_log.h>
#include <rte_per_lcore.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "uroce_engine.h"
#include "uroce_flow.h"
#include "uroce_gsi.h"
#include "uroce_pace.h"

extern int uroce_engine_logtype;

#define ENG_LOG(level, ...)						\
	rte_log(RTE_LOG_ ## level, uroce_engine_logtype, "uroce.engine: " __VA_ARGS__)

/* Sizes. */
#define ENG_RX_BURST		32
/* Receive and transmit in balance: an iteration reads up to ENG_RX_BURSTS
 * bursts and builds up to ENG_TX_BUDGET frames from its timers and as many
 * from its ready lists (neither stage starves the other), so that a lcore
 * busy sending still reads the ACKs its peer sends (which the peer would
 * otherwise drop when its tx queue fills: go-back-N retransmissions). */
#define ENG_RX_BURSTS		4
#define ENG_TX_BUDGET		(ENG_RX_BURSTS * ENG_RX_BURST)
#define ENG_RING_SIZE		4096	/* ctrl, doorbell, loopback, hand-off */
#define ENG_DB_RING_SIZE	16384
#define ENG_TIMER_MAX		64	/* expired per iteration */
#define ENG_PACE_HO_MAX		UROCE_TXB_MAX	/* pending hand-offs */
/* Slots of about 1 us per wheel level: a block of about 0.5 ms, a lap of
 * about 256 ms. A wake-up filed in a later lap waits in the overflow
 * list, which is walked at each lap's start (uroce_pace.h): 512 slots
 * hold the wake-ups of slow paced QPs (every 30-120 ms at 10,000 QPs)
 * within a lap, where 256 (a lap of 64 ms) would send nearly all of them
 * to the overflow list. Two blocks (ENG_RANGE_BLOCKS) are 1 ms, within
 * the 1.5 ms a QP with the default burst may wake up late (qp_pace.c). */
#define ENG_WHEEL_SLOTS		512
/* Wake-up ranges (lcore.c): the shortest one used, in wheel blocks, and
 * the timers armed for any to be used. */
#define ENG_RANGE_BLOCKS	2
#define ENG_RANGE_MIN_TIMERS	2048
/* The ready list of QPs that put nothing on a port (lcore.c). */
#define ENG_SCHED_NOWIRE	UROCE_CONFIG_MAX_PORTS
#define ENG_MAX_QP		(1u << 16)
#define ENG_MAX_CQ		(1u << 16)
#define ENG_MAX_MR		(1u << 16)
#define ENG_MAX_PD		(1u << 16)
#define ENG_MAX_AH		(1u << 16)
#define ENG_MAX_SRQ		(1u << 16)	/* SRQ numbers 1 .. ENG_MAX_SRQ - 1 */
#define ENG_QPN_PAGE_BITS	12
#define ENG_QPN_PAGES		(1u << (24 - ENG_QPN_PAGE_BITS))
#define ENG_QPN_PAGE_SIZE	(1u << ENG_QPN_PAGE_BITS)

struct eng_qp;
TAILQ_HEAD(eng_qp_list, eng_qp);

/* A QP's timer entry, packed with the others' (tmo.c): one cache line,
 * so that the expiry's miss on it brings the QP pointers with it (at 48
 * bytes, every other entry would straddle two lines: a second miss per
 * wake-up, on the prefetch's load of qp). */
struct eng_tmo {
	struct uroce_wheel_entry e;	/* armed at uroce_qp_deadline() */
	union {
		struct eng_qp *eq;
		struct eng_tmo *next_free;	/* not in use (tmo.c) */
	};
	struct uroce_qp *qp;		/* eq->qp, for the prefetch */
} __rte_cache_aligned;
struct eng_tmo_chunk;

/* A device's flow rules as the lcores read them (flow.c): immutable. */
struct eng_flow_tbl {
	uint32_t n;
	struct {
		struct uroce_flow_rule rule;
		uint32_t qpn;
	} ent[];
};

/* A paced QP's frames in a batch, to be handed off with it (lcore.c). */
struct eng_pace_ho {
	struct uroce_qp *qp;
	const struct uroce_txb *txb;
	uint64_t bytes;
};

/* One lcore context: a background lcore, or the native-progress context. */
struct eng_lcore {
	unsigned int idx;		/* engine index, the QP's owner number */
	unsigned int lcore_id;		/* EAL lcore, LCORE_ID_ANY for native */
	uint32_t stop;			/* set by fini (atomic) */
	struct rte_ring *ctrl;		/* MPSC: struct eng_ctrl * */
	struct rte_ring *db;		/* MPSC: struct eng_qp * (doorbells) */
	struct rte_ring *lo;		/* MPSC: mbufs to receive, m->port = dev */
	struct rte_ring *ho;		/* MPSC: hand-offs, parsed, m->port = dev */
	uint32_t db_overflow;		/* a doorbell did not fit (atomic) */
	uint32_t asleep;		/* futex: 1 while idle-sleeping (wake.c) */

	/* Owner-private from here. */
	/* QPs to call uroce_qp_tx() on: a ready list per port, and one
	 * (ENG_SCHED_NOWIRE) for QPs that build no frames (lcore.c). */
	struct uroce_sched ready;
	struct eng_qp_list owned;	/* every QP this lcore owns */
	struct uroce_wheel wheel;
	uint64_t now;			/* TSC of the iteration: eng_now() */
	bool now_read;			/* now was read in this iteration */
	bool worked;			/* the last iteration found work */
	unsigned int idle;		/* consecutive empty iterations */
	uint64_t sleep_ns;		/* current back-off sleep */
	uint64_t loop_start;		/* TSC at the last iteration's start */
	struct uroce_lcore_stats st;
	struct uroce_dev_stats dst[UROCE_CONFIG_MAX_PORTS];
	struct uroce_txb txb[UROCE_CONFIG_MAX_PORTS];
	/* Frames of RAW_PACKET QPs: to the port, never looped back. */
	struct uroce_txb wire_txb[UROCE_CONFIG_MAX_PORTS];
	/* Each device's flow rules (flow.c; swapped by control messages). */
	const struct eng_flow_tbl *flows[UROCE_CONFIG_MAX_PORTS];
	/* Paced QPs whose frames wait in a batch for their hand-off. */
	uint16_t n_pace_ho;
	struct eng_pace_ho pace_ho[ENG_PACE_HO_MAX];
} __rte_cache_aligned;

/* Protection domain. */
struct uroce_pd {
	struct uroce_dev *dev;
	uint32_t refs;			/* MRs, AHs and QPs using it */
	TAILQ_ENTRY(uroce_pd) link;
};

/* An XRC domain (xrcd.c). Its XRC_RECV QPs and the CQs of its XRC SRQs
 * share one owner lcore: a target QP may complete into any SRQ of the
 * domain (the one each request names), and a CQ has one writer. */
struct uroce_xrcd {
	struct uroce_dev *dev;
	int owner;			/* lcore index, -1 while unused */
	uint32_t refs;			/* XRC_RECV QPs and XRC SRQs */
	TAILQ_ENTRY(uroce_xrcd) link;
};

/* A CQ: the transport's CQ first, so that container_of is a cast. */
struct eng_cq {
	struct uroce_cq cq;
	struct uroce_dev *dev;
	void *user;
	int owner;			/* lcore index, -1 while unbound */
	uint32_t refs;			/* QPs using it */
	TAILQ_ENTRY(eng_cq) link;
};

/* The engine's per-SRQ state (srq->engine). */
struct eng_srq {
	struct uroce_srq *srq;
	struct uroce_dev *dev;
	struct uroce_pd *pd;
	struct eng_cq *cq;		/* XRC, TM; NULL for BASIC */
	TAILQ_ENTRY(eng_srq) link;	/* engine lock */
};

struct eng_ah {
	struct uroce_ah ah;
	struct uroce_dev *dev;
	TAILQ_ENTRY(eng_ah) link;
};

/* The engine's per-QP state (qp->engine). */
struct eng_qp {
	/* What every call on the QP reads (eng_timer_call(), eng_tx(),
	 * eng_qp_rearm()): the first line, which a wake-up prefetches. */
	struct uroce_qp *qp;
	struct uroce_dev *dev;
	struct eng_tmo *tmo;		/* its timer (tmo.c) */
	struct uroce_sched_entry ready;	/* on the owner's ready lists */
	uint32_t db_pending;		/* on the owner's doorbell ring (atomic) */
	uint32_t n_flow;		/* flow rules steering to it (engine lock) */
	struct uroce_pd *pd;
	struct eng_cq *scq, *rcq;	/* NULL where the type has none */
	struct eng_srq *srq;		/* receives come from it, or NULL */
	struct uroce_xrcd *xrcd;	/* XRC_RECV */
	/* Receive WQs and RSS (dev_wq.c), engine lock. */
	bool is_wq;			/* a WQ: a receive-only raw QP */
	uint8_t wq_state;		/* enum ibv_wq_state */
	uint32_t n_ind;			/* indirection table entries naming it */
	struct eng_rss *rss;		/* an RSS QP's hash and table, or NULL */
	TAILQ_ENTRY(eng_qp) owned_link;		/* owner */
	TAILQ_ENTRY(eng_qp) dev_link;		/* engine lock */
};

struct uroce_dev {
	unsigned int idx;
	char name[16];
	struct uroce_port *port;
	struct rte_ether_addr mac;
	struct uroce_qp_env env;
	struct uroce_dev_events ev;
	void *ev_arg;
	uint32_t n_qp, n_cq, n_pd, n_ah, n_srq;	/* engine lock */
	uint32_t n_xrcd;
	TAILQ_HEAD(, uroce_pd) pds;
	TAILQ_HEAD(, eng_srq) srqs;
	TAILQ_HEAD(, uroce_xrcd) xrcds;
	TAILQ_HEAD(, eng_cq) cqs;
	TAILQ_HEAD(, eng_ah) ahs;
	struct eng_qp_list qps;
	/* Counters of the destroyed QPs (stats.c; written by the owner with
	 * the engine lock held by the destroyer). */
	struct uroce_qp_stats qp_retired;
	/* Flow steering (flow.c), engine lock. */
	TAILQ_HEAD(, uroce_flow) flows;	/* in the order rules are tried */
	uint32_t n_flow;
	uint64_t flow_seq;
	struct eng_flow_tbl *flow_tbl;	/* what every lcore reads now */
	/* RSS indirection tables (dev_wq.c), engine lock. */
	TAILQ_HEAD(, uroce_ind_tbl) ind_tbls;
	uint32_t n_ind_tbl;
	/* QP1's consumer (gsi.c): RELEASE-published by uroce_gsi_open(),
	 * read by the receiving lcores, unpublished then eng_sync() by
	 * uroce_gsi_close(). */
	struct uroce_gsi *gsi;
};

struct eng {
	const struct uroce_config *cfg;
	unsigned int flags;
	bool eal_ours;			/* we called rte_eal_init() */
	/* The file prefix we picked (prefix.c), "" when the configuration
	 * chose, and its runtime dir, both removed when EAL stops. */
	char prefix[UROCE_CONFIG_PREFIX_LEN + 1];
	char rundir[PATH_MAX];
	/* Link state each port last reported, and the watch (link.c). */
	bool link_up[UROCE_CONFIG_MAX_PORTS];
	bool link_fatal[UROCE_CONFIG_MAX_PORTS];	/* reported gone */
	bool link_watch;
	bool link_stop;
	pthread_t link_thread;
	unsigned int nb_bg;		/* background lcores (0: native) */
	unsigned int nb_ctx;		/* lcore contexts: max(1, nb_bg) */
	struct eng_lcore *lc[UROCE_ENGINE_MAX_LCORES];
	unsigned int ndev;
	struct uroce_dev *dev[UROCE_CONFIG_MAX_PORTS];
	struct rte_rcu_qsbr *qsv;	/* background lcores' quiescent points */
	rte_spinlock_t native_lock;	/* native mode: who runs the loop */
	/* Iterations run by application calls (uroce_engine_poll()),
	 * native lock; the keeper reads it to see them (keeper.c). */
	uint64_t app_iters;
	/* The keeper thread (keeper.c): with no background lcore, under
	 * the verbs, it runs the loop when no application call does. */
	bool keeper;
	uint32_t keeper_stop;		/* atomic */
	uint64_t keeper_ns;		/* [eal] keeper_us */
	pthread_t keeper_thread;
	pthread_mutex_t lock;		/* objects, QPNs, CQ binding */
	uint32_t qpn_next;
	unsigned int rr;		/* round-robin owner */
	uint64_t tsc_hz;
	/* A millisecond of TSC: what makes an iteration long or a gap
	 * (lcore.c), computed once rather than divided out per iteration. */
	uint64_t ms_cycles;
	struct eng_qp **qpn_page[ENG_QPN_PAGES];
	struct eng_tmo_chunk *tmo_chunks;	/* QP timer entries (tmo.c) */
	struct eng_tmo *tmo_free;
	/* SRQ numbers (dev_srq.c): ENG_MAX_SRQ entries, allocated at the first
	 * SRQ (RELEASE-published); rx paths look up without the lock. */
	struct uroce_srq **srqn_tbl;
	uint32_t srqn_next;
};

/* The engine, NULL when none runs. */
extern struct eng *eng_g;

/* The lcore context the calling thread runs (an engine lcore, or a thread
 * inside uroce_engine_poll() or an inline control operation); else NULL. */
RTE_DECLARE_PER_LCORE(struct eng_lcore *, eng_cur);

/*
 * The iteration's clock, read at its first use only: reading the TSC costs
 * about 100 cycles in some VMs, a third of an iteration that finds nothing
 * to do, and such an iteration needs no time unless timers are armed. An
 * empty wheel's cursor follows every read (a jump, uroce_wheel_expire()),
 * so that a timer armed after iterations without a read is placed from the
 * present, not from a stale cursor.
 */
static inline uint64_t
eng_now(struct eng_lcore *lc)
{
	if (!lc->now_read) {
		lc->now = rte_get_tsc_cycles();
		lc->now_read = true;
		if (uroce_wheel_count(&lc->wheel) == 0)
			uroce_wheel_expire(&lc->wheel, lc->now, NULL, 0);
	}
	return lc->now;
}

static inline struct eng_cq *
eng_cq_of(const struct uroce_cq *cq)
{
	return (struct eng_cq *)(uintptr_t)cq;
}

/* The SRQ a QP's init names (uroce_qp_create(): a struct uroce_srq *). */
static inline struct eng_srq *
eng_srq_of_init(const struct ibv_qp_init_attr *init)
{
	return init->srq != NULL ?
	       ((struct uroce_srq *)(void *)init->srq)->engine : NULL;
}

/* lcore.c */
int eng_lcore_setup(struct eng_lcore *lc, unsigned int idx,
		    unsigned int lcore_id);
void eng_lcore_drain(struct eng_lcore *lc);
void eng_lcore_free(struct eng_lcore *lc);
int eng_lcore_main(void *arg);
unsigned int eng_iterate(struct eng_lcore *lc);
void eng_qp_rearm(struct eng_lcore *lc, struct eng_qp *eq);
void eng_qp_activate(struct eng_lcore *lc, struct eng_qp *eq);
void eng_kick(void *ctx, struct uroce_qp *qp);
uint64_t eng_until_timer_ns(const struct eng_lcore *lc);

/* keeper.c: the thread that progresses a native engine nobody polls. */
int eng_keeper_start(struct eng *e);
void eng_keeper_stop(struct eng *e);

/* tmo.c (under the engine lock) */
struct eng_tmo *eng_tmo_get(struct eng *e, struct eng_qp *eq);
void eng_tmo_put(struct eng *e, struct eng_tmo *t);
void eng_tmo_fini(struct eng *e);

/* xrcd.c */
void eng_xrcd_close_all(struct uroce_dev *dev);
int eng_xrcd_owner(struct uroce_xrcd *xrcd);
int eng_xrcd_srq_check(const struct uroce_xrcd *xrcd, const struct uroce_dev *dev,
		       const struct eng_cq *cq);
void eng_xrcd_srq_ref(struct uroce_xrcd *xrcd, struct eng_cq *cq, int dir);

/* wake.c */
void eng_futex_wait(uint32_t *w, uint32_t val, uint64_t ns);
void eng_futex_wake(uint32_t *w);
void eng_lcore_sleep(struct eng_lcore *lc, uint64_t ns);
void eng_lcore_wake(struct eng_lcore *lc);

/* ctrl.c */
typedef int (*eng_ctrl_fn)(struct eng_lcore *lc, void *arg);
int eng_ctrl_run(unsigned int owner, eng_ctrl_fn fn, void *arg);
int eng_ctrl_post(unsigned int owner, eng_ctrl_fn fn, void *arg);
unsigned int eng_ctrl_drain(struct eng_lcore *lc);
void eng_sync(void);
int eng_qp_attach(struct eng_qp *eq);
int eng_qp_detach(struct eng_qp *eq);
int eng_qp_modify(struct eng_qp *eq, struct ibv_qp_attr *attr, int mask);
int eng_qp_modify_seq(struct eng_qp *eq, struct ibv_qp_attr *attr,
		      const int *mask, unsigned int n, unsigned int *done);
int eng_qp_rate_limit(struct eng_qp *eq,
		      const struct ibv_qp_rate_limit_attr *attr);
int eng_qp_query(struct eng_qp *eq, struct ibv_qp_attr *attr,
		 struct ibv_qp_init_attr *init);
int eng_qp_stats(struct eng_qp *eq, struct uroce_qp_stats *st);

/* flow.c */
bool eng_flow_rx(void *arg, uint16_t q, struct rte_mbuf *m);	/* port hook */
/* A hand-off that is a steered frame: run and free it; else false. */
bool eng_flow_handoff_rx(struct eng_lcore *lc, struct rte_mbuf *m);
void eng_flow_dev_close(struct uroce_dev *dev);

/* lcore.c: a frame built outside the transport, sent now (owner of lc). */
void eng_send_frame(struct eng_lcore *lc, struct uroce_dev *dev,
		    struct rte_mbuf *m);

/* gsi.c: a parsed frame to QP1, on the lcore that received it. */
void eng_gsi_rx(struct eng_lcore *lc, struct uroce_dev *dev,
		const struct uroce_pkt *pkt);
void eng_gsi_dev_close(struct uroce_dev *dev);

/* dev.c */
int eng_resolve_wait(struct uroce_dev *dev, struct uroce_l2l3 *l);
int eng_dev_open(unsigned int idx, struct uroce_dev **out, char *err,
		 size_t err_len);
void eng_dev_close(struct uroce_dev *dev);
struct eng_qp *eng_qpn_lookup(uint32_t qpn);
struct uroce_dev *eng_dev_by_mac(const uint8_t *mac);

/* The QP made by every create (engine lock; dev.c). A RAW_PACKET QP with
 * no CQ is an RSS QP (dev_wq.c). Its rings from alloc (NULL: the default
 * allocator; uroce_ring_mem.h). */
int eng_qp_new(struct uroce_dev *dev, struct uroce_pd *pd, struct eng_cq *scq,
	       struct eng_cq *rcq, struct uroce_xrcd *xrcd,
	       const struct ibv_qp_init_attr *init, void *user,
	       struct ibv_qp_attr *first, int first_mask,
	       const struct uroce_ring_alloc *alloc, struct eng_qp **out);

/* dev_wq.c */
struct eng_rss;
/* The WQ number for a frame with fields k steered to RSS QP eq (rx path). */
uint32_t eng_rss_pick(const struct eng_qp *eq, const struct uroce_flow_key *k);
void eng_rss_release(struct eng_qp *eq);
void eng_wq_dev_close(struct uroce_dev *dev);

/* dev_srq.c */
void eng_srq_dev_close(struct uroce_dev *dev);
void eng_srq_fini(struct eng *e);

/* stats.c */
void eng_stats_retire(struct eng_qp *eq);

/* telemetry.c */
void eng_telemetry_attach(void);

/* link.c: the wait for the links at the start, then the watch. */
void eng_link_wait(struct eng *e);
int eng_link_watch_start(struct eng *e);
void eng_link_watch_stop(struct eng *e);

/* prefix.c: the EAL file prefix picked per process and its files. */
void eng_prefix_make(char *buf, size_t len);
void eng_prefix_remove(const char *prefix, const char *rundir);
void eng_prefix_sweep(const char *rundir);
void eng_telemetry_detach(void);

#endif /* UROCE_ENGINE_PRIV_H */
