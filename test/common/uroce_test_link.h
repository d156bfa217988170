/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * An in-memory link between two transport endpoints, for tests that run
 * QPs without a NIC (docs/architecture.md, Time and the link as
 * interfaces: the link is an interface, time is an argument). Two nodes, A
 * (0) and B (1), each with a mempool, an MR table, a send and a receive
 * CQ, a PD and stub engine hooks that record what the transport asks
 * (kicks, asynchronous events, CQ events; resolve() fills a fixed MAC, or
 * says -EAGAIN a given number of times).
 *
 * ut_link_run() moves frames A->B and B->A through uroce_wire_parse()
 * (ICRC checked) and uroce_qp_rx(), calls uroce_qp_tx() on every QP, and
 * when nothing moves advances a fake clock to the earliest
 * uroce_qp_deadline() and runs uroce_qp_timer(). Seeded faults per
 * direction: drop, reorder (swap with the frame queued before), duplicate
 * and corrupt (flip one byte after the Ethernet header), in parts per
 * million; ce marks Congestion Experienced on ECN-capable frames (drawn
 * only when set, so that the other faults' draws stay as they were). A tap sees every frame a node sends, before the faults, and may
 * drop it. Everything is deterministic for a seed.
 *
 * Needs EAL (ut_eal_init()) for the mempools.
 */
#ifndef UROCE_TEST_LINK_H
#define UROCE_TEST_LINK_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "uroce_cq.h"
#include "uroce_mr.h"
#include "uroce_qp.h"
#include "uroce_wire.h"

#define UT_LINK_QPS	32
#define UT_LINK_QLEN	8192		/* frames in flight per direction */
#define UT_LINK_EVENTS	32
#define UT_LINK_HZ	UINT64_C(2000000000)	/* fake TSC: 2 GHz */
#define UT_LINK_CQE	8192

struct ut_link;

struct ut_node {
	struct uroce_qp_env env;
	struct uroce_qp_env_ops ops;
	struct uroce_mr_table *mrs;
	struct uroce_cq *scq, *rcq;
	int pd;				/* its address is the PD */
	struct uroce_qp *qps[UT_LINK_QPS];
	unsigned int nqp;
	struct ut_link *link;
	int side;
	/* What the stub hooks saw. */
	unsigned int kicks, cq_events, resolves;
	unsigned int resolve_eagain;	/* answer -EAGAIN this many times */
	int resolve_err;		/* answer this (e.g. -EHOSTUNREACH) */
	unsigned int nev;
	enum ibv_event_type ev[UT_LINK_EVENTS];
	void *ev_obj[UT_LINK_EVENTS];
	bool rx_off;			/* the node receives nothing */
	/* Transmission: tx_held skips the node's QPs in ut_link_step() (an
	 * engine behind its ready list; timers still send), tx_stalled
	 * takes no frame at all (a port that never drains), txb_cap caps
	 * the frames of one call (0: UROCE_TXB_MAX). */
	bool tx_held, tx_stalled;
	unsigned int txb_cap;
	/* Reception: at most rx_cap frames delivered to the node a step (0:
	 * all queued), the rest waiting in the link's queue (a slow link). */
	unsigned int rx_cap;
};

/* Faults in parts per million. */
struct ut_fault {
	uint32_t drop, reorder, dup, corrupt, ce;
};

/* Frames in flight towards one node, and what happened to them. */
struct ut_dir {
	struct rte_mbuf *q[UT_LINK_QLEN];
	unsigned int head, n;
	struct ut_fault f;
	uint64_t sent, delivered, dropped, reordered, duped, corrupted, ce;
	uint64_t bad_parse, no_qp, rx_off, overflow;
	uint64_t chains;		/* zero-copy chains the wire copied */
	uint64_t ip_cksum_ol;		/* IPv4 checksums the "NIC" filled in */
};

/* Sees each frame node `from` sends; false drops it. */
typedef bool (*ut_tap_fn)(struct ut_link *l, int from,
			  const struct uroce_pkt *pkt, void *ctx);

struct ut_link {
	struct ut_node node[2];
	struct ut_dir dir[2];		/* dir[i]: frames towards node i */
	uint64_t now;
	uint64_t rng;
	ut_tap_fn tap;
	void *tap_ctx;
	uint64_t steps, timer_runs;
	/* Run each QP's timer as late as uroce_qp_deadline_latest() lets it
	 * (the engine's wheel may), and timer_delay cycles later still (an
	 * engine behind its work); late_runs counts those past the deadline. */
	bool timers_late;
	uint64_t timer_delay;
	uint64_t late_runs;
};

/* --------------------------------------------------------------------------
 * Stub engine hooks.
 */
static const uint8_t ut_link_mac[2][6] = {
	{ 0x02, 0, 0, 0, 0, 0x0a }, { 0x02, 0, 0, 0, 0, 0x0b },
};

static inline int
ut_stub_resolve(void *ctx, struct uroce_l2l3 *l2l3)
{
	struct ut_node *n = ctx;

	n->resolves++;
	if (n->resolve_err)
		return n->resolve_err;
	if (n->resolve_eagain > 0) {
		n->resolve_eagain--;
		return -EAGAIN;
	}
	memcpy(l2l3->dmac, ut_link_mac[n->side ^ 1], 6);
	return 0;
}

static inline void
ut_stub_kick(void *ctx, struct uroce_qp *qp)
{
	(void)qp;
	((struct ut_node *)ctx)->kicks++;
}

static inline void
ut_stub_async(void *ctx, enum ibv_event_type ev, void *obj)
{
	struct ut_node *n = ctx;

	if (n->nev < UT_LINK_EVENTS) {
		n->ev[n->nev] = ev;
		n->ev_obj[n->nev] = obj;
	}
	n->nev++;
}

static inline void
ut_stub_cq_event(void *ctx, struct uroce_cq *cq)
{
	(void)cq;
	((struct ut_node *)ctx)->cq_events++;
}

/* xorshift64 of the link, separate from ut_rand() so test data and faults
 * do not disturb each other. */
static inline uint64_t
ut_link_rand(struct ut_link *l)
{
	l->rng ^= l->rng << 13;
	l->rng ^= l->rng >> 7;
	l->rng ^= l->rng << 17;
	return l->rng;
}

static inline bool
ut_link_chance(struct ut_link *l, uint32_t ppm)
{
	return ppm != 0 && ut_link_rand(l) % 1000000 < ppm;
}

/* --------------------------------------------------------------------------
 * Set-up.
 */
static inline struct uroce_cq *
ut_cq_new(uint32_t cqe)
{
	struct uroce_cq *cq = NULL;

	if (posix_memalign((void **)&cq, RTE_CACHE_LINE_SIZE,
			   RTE_ALIGN_CEIL(sizeof(*cq), RTE_CACHE_LINE_SIZE)) != 0)
		return NULL;
	memset(cq, 0, sizeof(*cq));
	if (uroce_cq_init(cq, cqe) != 0) {
		free(cq);
		return NULL;
	}
	return cq;
}

static inline void
ut_cq_free(struct uroce_cq *cq)
{
	if (cq == NULL)
		return;
	uroce_cq_fini(cq);
	free(cq);
}

static inline int
ut_node_init(struct ut_link *l, int side, enum ibv_mtu active_mtu)
{
	static unsigned int pool_id;
	struct ut_node *n = &l->node[side];
	struct uroce_qp_env *e = &n->env;
	char name[RTE_MEMPOOL_NAMESIZE];

	memset(n, 0, sizeof(*n));
	n->link = l;
	n->side = side;
	n->ops.resolve = ut_stub_resolve;
	n->ops.kick = ut_stub_kick;
	n->ops.async_event = ut_stub_async;
	n->ops.cq_event = ut_stub_cq_event;
	snprintf(name, sizeof(name), "ut_link_%u", pool_id++);
	e->pool = rte_pktmbuf_pool_create(name, 4095, 128, 0,
					  RTE_PKTMBUF_HEADROOM + 4096 + 256,
					  SOCKET_ID_ANY);
	if (e->pool == NULL || uroce_mr_table_create(64, 0x5eed + side, &n->mrs) != 0)
		return -ENOMEM;
	n->scq = ut_cq_new(UT_LINK_CQE);
	n->rcq = ut_cq_new(UT_LINK_CQE);
	if (n->scq == NULL || n->rcq == NULL)
		return -ENOMEM;
	e->ops = &n->ops;
	e->ctx = n;
	e->mrs = n->mrs;
	e->lim.port_cnt = 1;
	e->lim.pkey_tbl_len = 1;
	e->lim.gid_tbl_len = 2;
	e->lim.active_mtu = active_mtu;
	e->lim.max_qp_rd_atom = 16;
	e->lim.max_qp_init_rd_atom = 16;
	e->tsc_hz = UT_LINK_HZ;
	memcpy(e->mac, ut_link_mac[side], 6);
	e->gid_cnt = 2;
	/* GID 0: 10.0.0.1 / 10.0.0.2; GID 1: fd00::1 / fd00::2 */
	uroce_gid_from_v4(&e->gid[0], rte_cpu_to_be_32(0x0a000001 + side));
	e->gid[1].raw[0] = 0xfd;
	e->gid[1].raw[15] = (uint8_t)(1 + side);
	e->mtu = 4096 + 100;
	e->max_sge = 8;
	e->max_inline = 256;
	e->max_qp_wr = 4096;
	e->max_srq_wr = 4096;
	e->max_srq_sge = 8;
	/* UT_LINK_ZC_MIN=n: RC payloads of n bytes and more go zero-copy. */
	if (getenv("UT_LINK_ZC_MIN") != NULL) {
		e->tx_extbuf = true;
		e->tx_zc_min = (uint32_t)strtoul(getenv("UT_LINK_ZC_MIN"), NULL, 0);
	}
	return 0;
}

static inline int
ut_link_init(struct ut_link *l, uint64_t seed, enum ibv_mtu active_mtu)
{
	memset(l, 0, sizeof(*l));
	l->rng = seed ? seed : 1;
	l->now = UT_LINK_HZ;	/* not 0, so that a zero deadline stands out */
	if (ut_node_init(l, 0, active_mtu) != 0 || ut_node_init(l, 1, active_mtu) != 0)
		return -ENOMEM;
	return 0;
}

static inline void
ut_link_flush_wire(struct ut_link *l)
{
	int d;

	for (d = 0; d < 2; d++) {
		struct ut_dir *dir = &l->dir[d];

		while (dir->n > 0) {
			rte_pktmbuf_free(dir->q[dir->head]);
			dir->head = (dir->head + 1) % UT_LINK_QLEN;
			dir->n--;
		}
	}
}

static inline void
ut_link_fini(struct ut_link *l)
{
	int s;
	unsigned int i;

	ut_link_flush_wire(l);
	for (s = 0; s < 2; s++) {
		struct ut_node *n = &l->node[s];

		for (i = 0; i < n->nqp; i++)
			uroce_qp_destroy(n->qps[i]);
		ut_cq_free(n->scq);
		ut_cq_free(n->rcq);
		uroce_mr_table_free(n->mrs);
		rte_mempool_free(n->env.pool);
	}
}

static inline struct uroce_mr *
ut_node_reg(struct ut_node *n, void *buf, size_t len, unsigned int access)
{
	struct uroce_mr *mr = NULL;

	if (uroce_mr_reg(n->mrs, &n->pd, buf, len, (uintptr_t)buf, access, &mr) != 0)
		return NULL;
	return mr;
}

/* Options of a QP pair, as a test's ibv_create_qp/ibv_modify_qp would give. */
struct ut_qp_opts {
	enum ibv_qp_type type;
	uint32_t max_send_wr, max_recv_wr, max_sge, max_inline;
	bool sq_sig_all;
	enum ibv_mtu path_mtu;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t max_rd_atomic;
	uint32_t psn[2];		/* sq_psn of A and of B */
	uint32_t qkey;
	uint8_t sgid_index;		/* 0: IPv4, 1: IPv6 */
	struct uroce_srq *srq;		/* receives from it (ut_node_qp) */
};

static inline void
ut_qp_opts_default(struct ut_qp_opts *o, enum ibv_qp_type type)
{
	memset(o, 0, sizeof(*o));
	o->type = type;
	o->max_send_wr = 256;
	o->max_recv_wr = 256;
	o->max_sge = 4;
	o->max_inline = 128;
	o->path_mtu = IBV_MTU_1024;
	o->timeout = 14;	/* 67 ms */
	o->retry_cnt = 7;
	o->rnr_retry = 7;
	o->min_rnr_timer = 1;	/* 10 us */
	o->max_rd_atomic = 8;
	o->psn[0] = 0xfffff0;	/* wraps through 0 soon */
	o->psn[1] = 0x123456;
	o->qkey = 0x11111111;
}

static inline int
ut_node_qp(struct ut_node *n, const struct ut_qp_opts *o, uint32_t qpn,
	   struct uroce_qp **qp)
{
	struct ibv_qp_init_attr init;
	int ret;

	memset(&init, 0, sizeof(init));
	init.qp_type = o->type;
	init.sq_sig_all = o->sq_sig_all;
	init.cap.max_send_wr = o->max_send_wr;
	init.cap.max_recv_wr = o->max_recv_wr;
	init.cap.max_send_sge = o->max_sge;
	init.cap.max_recv_sge = o->max_sge;
	init.cap.max_inline_data = o->max_inline;
	init.srq = (struct ibv_srq *)(void *)o->srq;
	ret = uroce_qp_create(&n->env, &n->pd, n->scq, n->rcq, &init, qpn, qp);
	if (ret == 0 && n->nqp < UT_LINK_QPS)
		n->qps[n->nqp++] = *qp;
	return ret;
}

static inline void
ut_node_forget_qp(struct ut_node *n, struct uroce_qp *qp)
{
	unsigned int i;

	for (i = 0; i < n->nqp; i++)
		if (n->qps[i] == qp)
			n->qps[i] = n->qps[--n->nqp];
}

/* RESET -> INIT -> RTR -> RTS for qp (on node side) towards peer_qpn. */
static inline int
ut_qp_up(struct ut_link *l, int side, struct uroce_qp *qp, uint32_t peer_qpn,
	 const struct ut_qp_opts *o)
{
	struct ibv_qp_attr a;
	int ret, mask;
	bool ud = o->type == IBV_QPT_UD;
	/* RC's attributes split between the XRC initiator (requester's)
	 * and target (responder's), as ibv_modify_qp(3)'s tables say. */
	bool resp = o->type == IBV_QPT_RC || o->type == IBV_QPT_XRC_RECV;
	bool req = o->type == IBV_QPT_RC || o->type == IBV_QPT_XRC_SEND;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	a.qkey = o->qkey;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
	ret = uroce_qp_modify(qp, &a, mask, l->now);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (!ud) {
		a.path_mtu = o->path_mtu;
		a.dest_qp_num = peer_qpn;
		a.rq_psn = o->psn[side ^ 1];
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.sgid_index = o->sgid_index;
		a.ah_attr.grh.hop_limit = 64;
		memcpy(a.ah_attr.grh.dgid.raw, l->node[side ^ 1].env.gid[o->sgid_index].raw, 16);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (resp) {
			a.max_dest_rd_atomic = o->max_rd_atomic;
			a.min_rnr_timer = o->min_rnr_timer;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	ret = uroce_qp_modify(qp, &a, mask, l->now);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = o->psn[side];
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (resp || req) {
		a.timeout = o->timeout;
		mask |= IBV_QP_TIMEOUT;
	}
	if (req) {
		a.retry_cnt = o->retry_cnt;
		a.rnr_retry = o->rnr_retry;
		a.max_rd_atomic = o->max_rd_atomic;
		mask |= IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return uroce_qp_modify(qp, &a, mask, l->now);
}

/* Create a QP on each node (QPNs qpn_a, qpn_b) and connect them. */
static inline int
ut_link_pair(struct ut_link *l, const struct ut_qp_opts *o, uint32_t qpn_a,
	     uint32_t qpn_b, struct uroce_qp **qa, struct uroce_qp **qb)
{
	int ret = ut_node_qp(&l->node[0], o, qpn_a, qa);

	if (ret == 0)
		ret = ut_node_qp(&l->node[1], o, qpn_b, qb);
	if (ret == 0)
		ret = ut_qp_up(l, 0, *qa, qpn_b, o);
	if (ret == 0)
		ret = ut_qp_up(l, 1, *qb, qpn_a, o);
	return ret;
}

/* A UD address handle from node side towards the other node. */
static inline void
ut_link_ah(struct ut_link *l, int side, uint8_t sgid_index, struct uroce_ah *ah)
{
	struct uroce_qp_env *e = &l->node[side].env;

	memset(ah, 0, sizeof(*ah));
	ah->attr.is_global = 1;
	ah->attr.grh.sgid_index = sgid_index;
	ah->attr.grh.hop_limit = 64;
	ah->attr.port_num = 1;
	memcpy(ah->attr.grh.dgid.raw, l->node[side ^ 1].env.gid[sgid_index].raw, 16);
	ah->pd = &l->node[side].pd;
	memcpy(ah->l2l3.smac, e->mac, 6);
	memcpy(ah->l2l3.dmac, ut_link_mac[side ^ 1], 6);
	ah->l2l3.sgid = e->gid[sgid_index];
	ah->l2l3.dgid = l->node[side ^ 1].env.gid[sgid_index];
	ah->l2l3.hop_limit = 64;
	ah->resolved = true;
}

/* --------------------------------------------------------------------------
 * The wire.
 */
static inline void
ut_dir_push(struct ut_dir *d, struct rte_mbuf *m)
{
	if (d->n == UT_LINK_QLEN) {
		d->overflow++;
		rte_pktmbuf_free(m);
		return;
	}
	d->q[(d->head + d->n) % UT_LINK_QLEN] = m;
	d->n++;
}

/* Node `from` sends m: tap, then faults, then the queue towards the peer. */
static inline void
ut_wire_put(struct ut_link *l, int from, struct rte_mbuf *m)
{
	struct ut_dir *d = &l->dir[from ^ 1];
	struct uroce_pkt pkt;
	uint8_t *b;

	d->sent++;
	/* The wire copies a chain into one buffer when it is sent, as memif
	 * does: a zero-copy frame is not read after this. */
	if (m->nb_segs > 1 || RTE_MBUF_HAS_EXTBUF(m)) {
		struct rte_mbuf *c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);

		rte_pktmbuf_free(m);
		if (c == NULL || c->nb_segs != 1) {
			d->overflow++;
			rte_pktmbuf_free(c);
			return;
		}
		d->chains++;
		m = c;
	}
	b = rte_pktmbuf_mtod(m, uint8_t *);
	/* The NIC's IPv4 header checksum offload (env.tx_ip_cksum). */
	if (m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM) {
		uroce_wire_ipv4_cksum_fill(b + m->l2_len);
		d->ip_cksum_ol++;
	}
	if (l->tap != NULL &&
	    uroce_wire_parse(b, rte_pktmbuf_data_len(m), 0, &pkt) == UROCE_WIRE_OK &&
	    !l->tap(l, from, &pkt, l->tap_ctx)) {
		d->dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	if (ut_link_chance(l, d->f.drop)) {
		d->dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	if (d->f.ce != 0 && ut_link_chance(l, d->f.ce) &&
	    uroce_wire_mark_ce(b + (b[12] == 0x81 && b[13] == 0 ? 18 : 14)))
		d->ce++;
	if (ut_link_chance(l, d->f.corrupt)) {
		uint32_t len = rte_pktmbuf_data_len(m);

		d->corrupted++;
		b[14 + ut_link_rand(l) % (len - 14)] ^= (uint8_t)(1u << (ut_link_rand(l) % 8));
	}
	if (ut_link_chance(l, d->f.dup)) {
		struct rte_mbuf *c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);

		if (c != NULL) {
			d->duped++;
			ut_dir_push(d, c);
		}
	}
	ut_dir_push(d, m);
	if (d->n >= 2 && ut_link_chance(l, d->f.reorder)) {
		unsigned int a = (d->head + d->n - 1) % UT_LINK_QLEN;
		unsigned int p = (d->head + d->n - 2) % UT_LINK_QLEN;
		struct rte_mbuf *t = d->q[a];

		d->q[a] = d->q[p];
		d->q[p] = t;
		d->reordered++;
	}
}

static inline void
ut_txb_init(struct uroce_txb *b)
{
	b->n = 0;
	b->cap = UROCE_TXB_MAX;
}

/* The batch a call on node n's QPs fills. */
static inline void
ut_node_txb_init(const struct ut_node *n, struct uroce_txb *b)
{
	ut_txb_init(b);
	if (n->tx_stalled)
		b->cap = 0;
	else if (n->txb_cap != 0)
		b->cap = RTE_MIN(n->txb_cap, (unsigned int)UROCE_TXB_MAX);
}

static inline void
ut_txb_send(struct ut_link *l, int from, struct uroce_txb *b)
{
	unsigned int i;

	for (i = 0; i < b->n; i++)
		ut_wire_put(l, from, b->pkts[i]);
	b->n = 0;
}

static inline struct uroce_qp *
ut_node_lookup(struct ut_node *n, uint32_t qpn)
{
	unsigned int i;

	for (i = 0; i < n->nqp; i++)
		if (n->qps[i]->qpn == qpn)
			return n->qps[i];
	return NULL;
}

/* Deliver the frames queued towards node `to` when the call starts (at
 * most its rx_cap). */
static inline unsigned int
ut_link_deliver(struct ut_link *l, int to)
{
	struct ut_dir *d = &l->dir[to];
	struct ut_node *n = &l->node[to];
	unsigned int k, cnt = d->n;
	struct uroce_txb txb;

	if (n->rx_cap != 0 && cnt > n->rx_cap)
		cnt = n->rx_cap;
	ut_txb_init(&txb);
	for (k = 0; k < cnt; k++) {
		struct rte_mbuf *m = d->q[d->head];
		struct uroce_pkt pkt;
		struct uroce_qp *qp;

		d->head = (d->head + 1) % UT_LINK_QLEN;
		d->n--;
		if (n->rx_off) {
			d->rx_off++;
		} else if (uroce_wire_parse(rte_pktmbuf_mtod(m, uint8_t *),
					    rte_pktmbuf_data_len(m), 0, &pkt) != UROCE_WIRE_OK) {
			d->bad_parse++;
		} else if ((qp = ut_node_lookup(n, pkt.bth.dqpn)) == NULL) {
			d->no_qp++;
		} else {
			d->delivered++;
			uroce_qp_rx(qp, &pkt, m, l->now, &txb);
			ut_txb_send(l, to, &txb);
		}
		rte_pktmbuf_free(m);
	}
	return cnt;
}

/* uroce_qp_tx() on every QP of node side until it has nothing more. */
static inline unsigned int
ut_node_tx(struct ut_link *l, int side)
{
	struct ut_node *n = &l->node[side];
	struct uroce_txb txb;
	unsigned int i, sent = 0;

	for (i = 0; i < n->nqp && !n->tx_held; i++) {
		bool more;
		int rounds = 0;

		do {
			ut_node_txb_init(n, &txb);
			more = uroce_qp_tx(n->qps[i], l->now, &txb);
			sent += txb.n;
			ut_txb_send(l, side, &txb);
		} while (more && !n->tx_held && ++rounds < 64);
	}
	return sent;
}

/* One step without time passing. @return frames moved. */
static inline unsigned int
ut_link_step(struct ut_link *l)
{
	unsigned int moved = ut_node_tx(l, 0) + ut_node_tx(l, 1);

	moved += ut_link_deliver(l, 1);
	moved += ut_link_deliver(l, 0);
	l->steps++;
	return moved;
}

/* When the link runs qp's timer. */
static inline uint64_t
ut_link_qp_due(const struct ut_link *l, const struct uroce_qp *qp)
{
	uint64_t dl = uroce_qp_deadline(qp);

	if (l->timers_late)
		dl = uroce_qp_deadline_latest(qp, dl);
	return dl > UINT64_MAX - l->timer_delay ? UINT64_MAX :
	       dl + l->timer_delay;
}

static inline uint64_t
ut_link_deadline(const struct ut_link *l)
{
	uint64_t t = UINT64_MAX;
	unsigned int s, i;

	for (s = 0; s < 2; s++)
		for (i = 0; i < l->node[s].nqp; i++)
			t = RTE_MIN(t, ut_link_qp_due(l, l->node[s].qps[i]));
	return t;
}

/* Jump the clock to the earliest deadline (if any, and not past `limit`)
 * and run the timers that are due. @return false if there was none. */
static inline bool
ut_link_advance(struct ut_link *l, uint64_t limit)
{
	uint64_t t = ut_link_deadline(l);
	struct uroce_txb txb;
	unsigned int s, i;

	if (t == UINT64_MAX || t > limit)
		return false;
	if (t > l->now)
		l->now = t;
	for (s = 0; s < 2; s++) {
		for (i = 0; i < l->node[s].nqp; i++) {
			struct uroce_qp *qp = l->node[s].qps[i];

			if (ut_link_qp_due(l, qp) > l->now)
				continue;
			l->late_runs += uroce_qp_deadline(qp) < l->now;
			ut_node_txb_init(&l->node[s], &txb);
			uroce_qp_timer(qp, l->now, &txb);
			ut_txb_send(l, s, &txb);
			l->timer_runs++;
		}
	}
	return true;
}

typedef bool (*ut_done_fn)(struct ut_link *l, void *ctx);

/*
 * Run until done() says so (checked after every step; NULL: never), or
 * until nothing moves and no deadline is left before now + max_wait cycles,
 * or max_steps steps. @return true if done() said so.
 */
static inline bool
ut_link_run(struct ut_link *l, ut_done_fn done, void *ctx, uint64_t max_wait,
	    unsigned int max_steps)
{
	unsigned int i;

	for (i = 0; i < max_steps; i++) {
		unsigned int moved = ut_link_step(l);

		if (done != NULL && done(l, ctx))
			return true;
		if (moved == 0 && !ut_link_advance(l, l->now + max_wait))
			return false;
	}
	return done != NULL && done(l, ctx);
}

/* Run until quiet: nothing in flight and no deadline within max_wait. */
static inline void
ut_link_settle(struct ut_link *l, uint64_t max_wait)
{
	ut_link_run(l, NULL, NULL, max_wait, 1000000);
}

static inline uint64_t
ut_link_us(uint64_t us)
{
	return us * (UT_LINK_HZ / 1000000);
}

#endif /* UROCE_TEST_LINK_H */
