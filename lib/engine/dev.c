/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Devices and their objects: one device per port, its QP environment, its
 * key table, and PDs, CQs, MRs, AHs and QPs. Object changes hold the
 * engine lock; control verbs of a QP go to its owner (ctrl.c).
 *
 * QPNs live in one table for the process, indexed by the 24-bit QPN in two
 * levels (4096 pages of 4096 entries, a page allocated when first used):
 * the rx path looks a QPN up with two ACQUIRE loads and no lock. A QP is
 * published after it is set up and unpublished before it is destroyed;
 * eng_sync() in between lets the lcores drop what they found.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <rte_cycles.h>
#include <rte_random.h>

#include "engine_priv.h"
#include "uroce_memguard.h"

/* Device limits. */
#define ENG_MAX_SGE		32
#define ENG_MAX_INLINE		256
#define ENG_MAX_QP_WR		16384
#define ENG_MAX_SRQ_WR		65536	/* a power of two: all of it usable */
/* READ/atomic requests a QP may have outstanding, each way: as many as
 * Linux's rdma_rxe offers, so that tools which take the device's limit
 * as their default (perftest) agree with it. A responder resource costs
 * about 80 bytes of the QP's memory. */
#define ENG_MAX_RD_ATOM		128
#define ENG_RATE_MIN_KBPS	1
#define ENG_RATE_MAX_KBPS	100000000u	/* 100 Gbit/s */
/* How long ibv_create_ah() waits for the neighbour (ARP retries 5 x 100ms). */
#define ENG_AH_RESOLVE_MS	2000

/* RoCEv2 bytes around the payload that the IP MTU must hold: IPv6 header
 * (the larger), UDP, BTH, RETH (the largest extension of a data packet)
 * and ICRC. */
#define ENG_ROCE_OVERHEAD	(40 + 8 + UROCE_BTH_LEN + UROCE_RETH_LEN + UROCE_ICRC_LEN)

enum ibv_mtu
uroce_dev_active_mtu(uint16_t ip_mtu)
{
	int m;

	for (m = IBV_MTU_4096; m >= IBV_MTU_256; m--)
		if (uroce_mtu_bytes((enum ibv_mtu)m) + ENG_ROCE_OVERHEAD <= ip_mtu)
			return (enum ibv_mtu)m;
	return (enum ibv_mtu)0;
}

/* ------------------------------------------------------------------------
 * Environment hooks (struct uroce_qp_env_ops), ctx is the device.
 */
static struct uroce_dev *
eng_dev_by_gid(const union uroce_gid *gid)
{
	struct uroce_dev *dev;
	unsigned int d, i;

	for (d = 0; d < eng_g->ndev; d++) {
		dev = eng_g->dev[d];
		for (i = 0; i < dev->env.gid_cnt; i++)
			if (memcmp(&dev->env.gid[i], gid, sizeof(*gid)) == 0)
				return dev;
	}
	return NULL;
}

struct uroce_dev *
eng_dev_by_mac(const uint8_t *mac)
{
	unsigned int d;

	for (d = 0; d < eng_g->ndev; d++)
		if (memcmp(eng_g->dev[d]->mac.addr_bytes, mac,
			   RTE_ETHER_ADDR_LEN) == 0)
			return eng_g->dev[d];
	return NULL;
}

/* A local port's address resolves at once, as a NIC knows its own. */
static int
eng_resolve(void *ctx, struct uroce_l2l3 *l2l3)
{
	struct uroce_dev *dev = ctx, *local = eng_dev_by_gid(&l2l3->dgid);
	struct rte_ether_addr mac;
	int ret;

	if (local != NULL) {
		memcpy(l2l3->dmac, local->mac.addr_bytes, RTE_ETHER_ADDR_LEN);
		return 0;
	}
	ret = uroce_port_resolve(dev->port, &l2l3->dgid, &mac);
	if (ret == 0)
		memcpy(l2l3->dmac, mac.addr_bytes, RTE_ETHER_ADDR_LEN);
	return ret;
}

static void
eng_async_event(void *ctx, enum ibv_event_type ev, void *obj)
{
	struct uroce_dev *dev = ctx;

	if (dev->ev.async_event != NULL)
		dev->ev.async_event(dev->ev_arg, ev, obj);
}

static void
eng_cq_event(void *ctx, struct uroce_cq *cq)
{
	struct uroce_dev *dev = ctx;

	if (dev->ev.cq_event != NULL)
		dev->ev.cq_event(dev->ev_arg, cq);
}

/* XRC targets: an SRQ of this device by number (lock-free, dev_srq.c). */
static struct uroce_srq *
eng_srq_lookup(void *ctx, uint32_t srqn)
{
	struct uroce_dev *dev = ctx;
	struct uroce_srq *srq = uroce_dev_srq_lookup(srqn);

	return srq != NULL && srq->env == &dev->env ? srq : NULL;
}

static const struct uroce_qp_env_ops eng_env_ops = {
	.resolve = eng_resolve,
	.kick = eng_kick,
	.async_event = eng_async_event,
	.cq_event = eng_cq_event,
	.srq_lookup = eng_srq_lookup,
};

/* ------------------------------------------------------------------------
 * Devices.
 */

/* Microseconds in TSC cycles, at least 1 for a non-zero period. */
static uint64_t
us_cycles(uint64_t us)
{
	uint64_t c = us * eng_g->tsc_hz / 1000000;

	return c == 0 && us != 0 ? 1 : c;
}

/* [port] cc and the DCQCN keys (Mbit/s, us, 1/1024) into the QPs'
 * terms (kbit/s, TSC cycles). The line rate is rpg_max_rate, or the most
 * the pacer takes, 100 Gbit/s. */
static void
eng_dev_cc(struct uroce_qp_env *env, const struct uroce_config_port *pc)
{
	const struct uroce_config_dcqcn *c = &pc->dcqcn;
	struct uroce_dcqcn_params *p = &env->dcqcn;

	env->cc = pc->cc == UROCE_CC_DCQCN;
	p->line_kbps = c->rpg_max_rate != 0 ?
		       (uint64_t)c->rpg_max_rate * 1000 : ENG_RATE_MAX_KBPS;
	p->first_kbps = (uint64_t)c->rate_to_set_on_first_cnp * 1000;
	p->min_kbps = (uint64_t)c->rpg_min_rate * 1000;
	p->ai_kbps = (uint64_t)c->rpg_ai_rate * 1000;
	p->hai_kbps = (uint64_t)c->rpg_hai_rate * 1000;
	p->min_dec_fac = c->rpg_min_dec_fac;
	p->threshold = c->rpg_threshold;
	p->byte_reset = c->rpg_byte_reset;
	p->g = c->dce_tcp_g;
	p->initial_alpha = c->initial_alpha_value;
	p->time_reset = us_cycles(c->rpg_time_reset);
	p->alpha_period = us_cycles(c->dce_tcp_rtt);
	p->reduce_period = us_cycles(c->rate_reduce_monitor_period);
	env->cnp_interval = us_cycles(c->np_min_time_between_cnps);
}

static int
eng_dev_env(struct uroce_dev *dev, char *err, size_t err_len)
{
	struct uroce_qp_env *env = &dev->env;
	const struct uroce_qp_limits lim = {
		.port_cnt = 1,
		.pkey_tbl_len = 1,		/* the default P_Key only */
		.max_qp_rd_atom = ENG_MAX_RD_ATOM,
		.max_qp_init_rd_atom = ENG_MAX_RD_ATOM,
		.rate_limit_min = ENG_RATE_MIN_KBPS,
		.rate_limit_max = ENG_RATE_MAX_KBPS,
		.apm = false,
	};
	int ret;

	env->ops = &eng_env_ops;
	env->ctx = dev;
	env->pool = uroce_port_pool(dev->port);
	env->lim = lim;
	env->tsc_hz = eng_g->tsc_hz;
	dev->mac = *uroce_port_mac(dev->port);
	memcpy(env->mac, dev->mac.addr_bytes, RTE_ETHER_ADDR_LEN);
	env->vlan = uroce_port_vlan(dev->port, &env->vlan_id);
	env->gid_cnt = uroce_port_gids(dev->port, env->gid, UROCE_GID_TBL_MAX);
	env->lim.gid_tbl_len = env->gid_cnt;
	env->mtu = uroce_port_mtu(dev->port);
	env->lim.active_mtu = uroce_dev_active_mtu(env->mtu);
	env->tx_extbuf = uroce_port_tx_extbuf(dev->port);
	env->tx_zc_min = env->tx_extbuf ? UROCE_TX_ZC_MIN : 0;
	env->tx_ip_cksum = uroce_port_tx_ip_cksum(dev->port);
	env->max_sge = ENG_MAX_SGE;
	env->max_inline = ENG_MAX_INLINE;
	env->max_qp_wr = ENG_MAX_QP_WR;
	env->max_srq_wr = ENG_MAX_SRQ_WR;
	env->max_srq_sge = ENG_MAX_SGE;
	eng_dev_cc(env, &eng_g->cfg->port[dev->idx]);
	if (env->lim.active_mtu == 0) {
		snprintf(err, err_len,
			 "uroce: %s: [port%u] mtu = %u: too small for RoCEv2 (at least %u)",
			 eng_g->cfg->path ? eng_g->cfg->path : "config", dev->idx,
			 env->mtu, uroce_mtu_bytes(IBV_MTU_256) + ENG_ROCE_OVERHEAD);
		return -EINVAL;
	}
	ret = uroce_mr_table_create(ENG_MAX_MR, rte_rand(), &env->mrs);
	if (ret < 0)
		snprintf(err, err_len, "uroce: %s: key table: %s", dev->name,
			 strerror(-ret));
	return ret;
}

int
eng_dev_open(unsigned int idx, struct uroce_dev **out, char *err,
	     size_t err_len)
{
	struct uroce_dev *dev = calloc(1, sizeof(*dev));
	int ret;

	if (dev == NULL) {
		snprintf(err, err_len, "uroce: out of memory for device %u", idx);
		return -ENOMEM;
	}
	dev->idx = idx;
	snprintf(dev->name, sizeof(dev->name), "uroce%u", idx);
	TAILQ_INIT(&dev->pds);
	TAILQ_INIT(&dev->xrcds);
	TAILQ_INIT(&dev->cqs);
	TAILQ_INIT(&dev->ahs);
	TAILQ_INIT(&dev->qps);
	TAILQ_INIT(&dev->srqs);
	TAILQ_INIT(&dev->flows);
	TAILQ_INIT(&dev->ind_tbls);
	ret = uroce_port_open(eng_g->cfg, idx, eng_g->nb_ctx, &dev->port,
			      err, err_len);
	if (ret == 0)
		ret = eng_dev_env(dev, err, err_len);
	if (ret < 0) {
		eng_dev_close(dev);
		return ret;
	}
	/* Frames the stack does not take go to the flow rules. */
	uroce_port_set_raw(dev->port, eng_flow_rx, dev);
	ENG_LOG(INFO, "%s: mac " RTE_ETHER_ADDR_PRT_FMT " mtu %u active_mtu %u gids %u\n",
		dev->name, RTE_ETHER_ADDR_BYTES(&dev->mac), dev->env.mtu,
		uroce_mtu_bytes(dev->env.lim.active_mtu), dev->env.gid_cnt);
	*out = dev;
	return 0;
}

/* An eng_qp and its timer entry (engine lock, or the lcores stopped). */
static void
eng_qp_free(struct eng_qp *eq)
{
	if (eq != NULL) {
		eng_tmo_put(eng_g, eq->tmo);
		free(eq->rss);
	}
	free(eq);
}

/* Lcores stopped: free what the application left, then the port. */
void
eng_dev_close(struct uroce_dev *dev)
{
	struct uroce_pd *pd;
	struct eng_cq *cq;
	struct eng_ah *ah;
	struct eng_qp *eq;

	if (dev == NULL)
		return;
	eng_gsi_dev_close(dev);
	eng_flow_dev_close(dev);
	while ((eq = TAILQ_FIRST(&dev->qps)) != NULL) {
		TAILQ_REMOVE(&dev->qps, eq, dev_link);
		uroce_qp_destroy(eq->qp);
		eng_qp_free(eq);
	}
	eng_wq_dev_close(dev);
	eng_srq_dev_close(dev);
	while ((ah = TAILQ_FIRST(&dev->ahs)) != NULL) {
		TAILQ_REMOVE(&dev->ahs, ah, link);
		free(ah);
	}
	while ((cq = TAILQ_FIRST(&dev->cqs)) != NULL) {
		TAILQ_REMOVE(&dev->cqs, cq, link);
		uroce_cq_fini(&cq->cq);
		free(cq);
	}
	while ((pd = TAILQ_FIRST(&dev->pds)) != NULL) {
		TAILQ_REMOVE(&dev->pds, pd, link);
		free(pd);
	}
	eng_xrcd_close_all(dev);
	uroce_mr_table_free(dev->env.mrs);
	uroce_port_close(dev->port);
	free(dev);
}

unsigned int
uroce_dev_count(void)
{
	return eng_g != NULL ? eng_g->ndev : 0;
}

struct uroce_dev *
uroce_dev_get(unsigned int idx)
{
	return eng_g != NULL && idx < eng_g->ndev ? eng_g->dev[idx] : NULL;
}

struct uroce_dev *
uroce_dev_by_name(const char *name)
{
	unsigned int d;

	for (d = 0; name != NULL && d < uroce_dev_count(); d++)
		if (strcmp(eng_g->dev[d]->name, name) == 0)
			return eng_g->dev[d];
	return NULL;
}

const char *
uroce_dev_name(const struct uroce_dev *dev)
{
	return dev->name;
}

unsigned int
uroce_dev_index(const struct uroce_dev *dev)
{
	return dev->idx;
}

const struct uroce_qp_env *
uroce_dev_env(const struct uroce_dev *dev)
{
	return &dev->env;
}

struct uroce_port *
uroce_dev_port(const struct uroce_dev *dev)
{
	return dev->port;
}

void
uroce_dev_caps(const struct uroce_dev *dev, struct uroce_dev_caps *caps)
{
	RTE_SET_USED(dev);
	caps->max_qp = ENG_MAX_QP;
	caps->max_cq = ENG_MAX_CQ;
	caps->max_cqe = UROCE_CQ_MAX_CQE;
	caps->max_mr = ENG_MAX_MR;
	caps->max_mw = ENG_MAX_MR;	/* windows share the MRs' key table */
	caps->max_pd = ENG_MAX_PD;
	caps->max_ah = ENG_MAX_AH;
	caps->max_srq = ENG_MAX_SRQ - 1;	/* SRQ number 0 is never given */
	caps->max_mr_size = UINT64_MAX;
}

void
uroce_dev_stats_get(const struct uroce_dev *dev, struct uroce_dev_stats *st)
{
	const struct uroce_dev_stats *s;
	unsigned int i, v;

	memset(st, 0, sizeof(*st));
	for (i = 0; eng_g != NULL && i < eng_g->nb_ctx; i++) {
		s = &eng_g->lc[i]->dst[dev->idx];
		st->rx_pkts += s->rx_pkts;
		st->tx_pkts += s->tx_pkts;
		st->loop_pkts += s->loop_pkts;
		st->loop_drops += s->loop_drops;
		st->unknown_qpn += s->unknown_qpn;
		st->handoffs += s->handoffs;
		st->handoff_drops += s->handoff_drops;
		st->gsi_rx += s->gsi_rx;
		st->gsi_tx += s->gsi_tx;
		st->gsi_drop_opcode += s->gsi_drop_opcode;
		st->gsi_drop_pkey += s->gsi_drop_pkey;
		st->gsi_drop_qkey += s->gsi_drop_qkey;
		st->gsi_drop_len += s->gsi_drop_len;
		st->gsi_drop_mad += s->gsi_drop_mad;
		st->gsi_drop_noagent += s->gsi_drop_noagent;
		st->gsi_drop_full += s->gsi_drop_full;
		st->gsi_noagent_replied += s->gsi_noagent_replied;
		for (v = 0; v < UROCE_WIRE_VERDICT_COUNT; v++)
			st->wire.verdict[v] += s->wire.verdict[v];
	}
	st->mem_faults = uroce_memguard_faults();
}

void
uroce_dev_set_events(struct uroce_dev *dev, const struct uroce_dev_events *ev,
		     void *arg)
{
	pthread_mutex_lock(&eng_g->lock);
	dev->ev_arg = arg;
	if (ev != NULL)
		dev->ev = *ev;
	else
		memset(&dev->ev, 0, sizeof(dev->ev));
	pthread_mutex_unlock(&eng_g->lock);
}

int
uroce_dev_inject(struct uroce_dev *dev, struct rte_mbuf *m)
{
	struct eng_lcore *lc = eng_g->lc[0];

	m->port = dev->idx;
	if (rte_ring_mp_enqueue(lc->lo, m) != 0) {
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * QPN table.
 */
struct eng_qp *
eng_qpn_lookup(uint32_t qpn)
{
	struct eng_qp **page;

	qpn &= UROCE_QPN_MASK;
	page = __atomic_load_n(&eng_g->qpn_page[qpn >> ENG_QPN_PAGE_BITS],
			       __ATOMIC_ACQUIRE);
	if (page == NULL)
		return NULL;
	return __atomic_load_n(&page[qpn & (ENG_QPN_PAGE_SIZE - 1)],
			       __ATOMIC_ACQUIRE);
}

/* Engine lock. The slot of qpn, its page allocated if needed. */
static struct eng_qp **
eng_qpn_slot(uint32_t qpn)
{
	struct eng_qp ***pp = &eng_g->qpn_page[qpn >> ENG_QPN_PAGE_BITS];

	if (*pp == NULL) {
		struct eng_qp **page = calloc(ENG_QPN_PAGE_SIZE, sizeof(*page));

		if (page == NULL)
			return NULL;
		__atomic_store_n(pp, page, __ATOMIC_RELEASE);
	}
	return &(*pp)[qpn & (ENG_QPN_PAGE_SIZE - 1)];
}

/*
 * Engine lock. The next free QPN after the last one given, never 0 or 1
 * (IBTA: QP0 and QP1 are the special QPs). The sequence starts at a random
 * point (engine.c), and a freed QPN comes back only after a lap of 2^24, so
 * late frames of a destroyed QP do not reach its successor.
 */
static uint32_t
eng_qpn_alloc(void)
{
	uint32_t qpn, tries;

	for (tries = 0; tries <= UROCE_QPN_MASK; tries++) {
		qpn = eng_g->qpn_next;
		eng_g->qpn_next = (qpn + 1) & UROCE_QPN_MASK;
		if (qpn >= 2 && eng_qpn_lookup(qpn) == NULL)
			return qpn;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * PDs.
 */
int
uroce_pd_alloc(struct uroce_dev *dev, struct uroce_pd **out)
{
	struct uroce_pd *pd;
	int ret = -ENOMEM;

	if (dev == NULL || out == NULL)
		return -EINVAL;
	pthread_mutex_lock(&eng_g->lock);
	if (dev->n_pd < ENG_MAX_PD && (pd = calloc(1, sizeof(*pd))) != NULL) {
		pd->dev = dev;
		TAILQ_INSERT_TAIL(&dev->pds, pd, link);
		dev->n_pd++;
		*out = pd;
		ret = 0;
	}
	pthread_mutex_unlock(&eng_g->lock);
	return ret;
}

int
uroce_pd_free(struct uroce_pd *pd)
{
	int ret = -EBUSY;

	if (pd == NULL)
		return -EINVAL;
	pthread_mutex_lock(&eng_g->lock);
	if (pd->refs == 0) {
		TAILQ_REMOVE(&pd->dev->pds, pd, link);
		pd->dev->n_pd--;
		free(pd);
		ret = 0;
	}
	pthread_mutex_unlock(&eng_g->lock);
	return ret;
}

struct uroce_dev *
uroce_pd_dev(const struct uroce_pd *pd)
{
	return pd->dev;
}

/* ------------------------------------------------------------------------
 * CQs.
 */
int
uroce_dev_cq_create(struct uroce_dev *dev, uint32_t cqe, void *user,
		    struct uroce_cq **out)
{
	return uroce_dev_cq_create_ex(dev, cqe, 0, NULL, user, out);
}

int
uroce_dev_cq_create_ex(struct uroce_dev *dev, uint32_t cqe, unsigned int flags,
		       const struct uroce_ring_alloc *alloc, void *user,
		       struct uroce_cq **out)
{
	size_t sz = RTE_ALIGN_CEIL(sizeof(struct eng_cq), RTE_CACHE_LINE_SIZE);
	struct eng_cq *cq;
	int ret;

	if (dev == NULL || out == NULL || cqe == 0 || cqe > UROCE_CQ_MAX_CQE)
		return -EINVAL;
	cq = aligned_alloc(RTE_CACHE_LINE_SIZE, sz);
	if (cq == NULL)
		return -ENOMEM;
	memset(cq, 0, sz);
	ret = uroce_cq_init_ex(&cq->cq, cqe, flags, alloc);
	if (ret < 0) {
		free(cq);
		return ret;
	}
	cq->dev = dev;
	cq->user = user;
	cq->owner = -1;
	/* Events are registered before objects (uroce_dev_set_events()):
	 * none now, none ever for this CQ. */
	if (dev->ev.cq_event == NULL)
		uroce_cq_set_no_events(&cq->cq);
	pthread_mutex_lock(&eng_g->lock);
	if (dev->n_cq >= ENG_MAX_CQ) {
		ret = -ENOMEM;
	} else {
		TAILQ_INSERT_TAIL(&dev->cqs, cq, link);
		dev->n_cq++;
	}
	pthread_mutex_unlock(&eng_g->lock);
	if (ret < 0) {
		uroce_cq_fini(&cq->cq);
		free(cq);
		return ret;
	}
	*out = &cq->cq;
	return 0;
}

int
uroce_dev_cq_destroy(struct uroce_cq *ucq)
{
	struct eng_cq *cq = eng_cq_of(ucq);
	int ret = -EBUSY;

	if (ucq == NULL)
		return -EINVAL;
	pthread_mutex_lock(&eng_g->lock);
	if (cq->refs == 0) {
		TAILQ_REMOVE(&cq->dev->cqs, cq, link);
		cq->dev->n_cq--;
		ret = 0;
	}
	pthread_mutex_unlock(&eng_g->lock);
	if (ret == 0) {
		uroce_cq_fini(&cq->cq);
		free(cq);
	}
	return ret;
}

struct cq_resize_msg {
	struct uroce_cq *cq;
	uint32_t cqe;
};

static int
ctrl_cq_resize(struct eng_lcore *lc, void *arg)
{
	struct cq_resize_msg *m = arg;

	(void)lc;
	return uroce_cq_resize(m->cq, m->cqe);
}

static int
ctrl_nop(struct eng_lcore *lc, void *arg)
{
	(void)lc;
	(void)arg;
	return 0;
}

int
uroce_dev_cq_resize(struct uroce_cq *ucq, uint32_t cqe)
{
	struct cq_resize_msg m = { .cq = ucq, .cqe = cqe };
	struct eng_cq *cq = eng_cq_of(ucq);
	int owner, ret = 0;

	if (ucq == NULL || cqe == 0 || cqe > UROCE_CQ_MAX_CQE)
		return -EINVAL;
	/* No lcore produces into an unbound CQ, and none can bind it while
	 * the lock is held: resized here. A bound one on its owner, between
	 * two iterations, while this thread (its consumer) waits. */
	pthread_mutex_lock(&eng_g->lock);
	owner = cq->owner;
	if (owner < 0)
		ret = uroce_cq_resize(ucq, cqe);
	pthread_mutex_unlock(&eng_g->lock);
	if (owner < 0)
		return ret;
	/* An iteration drains control messages before doorbells: the first
	 * message makes the owner take the work posted before this call and
	 * send it in that iteration, so work that completes at once (a UD
	 * send) is on the CQ when the resize, in the next, checks that the
	 * new size holds what is queued (EINVAL otherwise, ibv_resize_cq). */
	ret = eng_ctrl_run((unsigned int)owner, ctrl_nop, NULL);
	if (ret == 0)
		ret = eng_ctrl_run((unsigned int)owner, ctrl_cq_resize, &m);
	return ret;
}

void *
uroce_dev_cq_user(const struct uroce_cq *cq)
{
	return eng_cq_of(cq)->user;
}

int
uroce_dev_cq_lcore(const struct uroce_cq *cq)
{
	int owner;

	pthread_mutex_lock(&eng_g->lock);
	owner = eng_cq_of(cq)->owner;
	pthread_mutex_unlock(&eng_g->lock);
	return owner;
}

/* ------------------------------------------------------------------------
 * MRs.
 */
/*
 * RLIMIT_MEMLOCK, charged as the kernel's pinning charges it (ib_umem_get
 * in drivers/infiniband/core/umem.c): the pages a region spans are added
 * to the process's pinned count, and past the soft limit a process
 * without CAP_IPC_LOCK gets ENOMEM. Nothing is pinned here (the engine
 * reaches memory through the process's page tables), but the limit an
 * administrator sets holds as it would with a NIC, and a program sized
 * for it gets the same answer. Counted under eng_g->lock, for the whole
 * process as the kernel counts its mm.
 */
static uint64_t eng_pinned_pages;

/* An on-demand region pins nothing and is not charged (the kernel's ODP
 * umem is not either). */
static uint64_t
pin_pages(const void *addr, size_t len, unsigned int access)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)addr;

	/* Lengths that wrap are the registration's to refuse (EINVAL). */
	if (len == 0 || len - 1 > UINTPTR_MAX - a ||
	    (access & IBV_ACCESS_ON_DEMAND))
		return 0;
	return ((a + len - 1) / pg) - (a / pg) + 1;
}

static bool
ipc_lock_capable(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &h, d) != 0)
		return false;
	return (d[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &
		CAP_TO_MASK(CAP_IPC_LOCK)) != 0;
}

/* Whether n more pages fit: -ENOMEM past the limit. Under eng_g->lock,
 * which the caller holds until it adds them to eng_pinned_pages. */
static int
pin_check(uint64_t n)
{
	struct rlimit rl;

	if (n != 0 && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY &&
	    eng_pinned_pages + n > rl.rlim_cur / (uint64_t)sysconf(_SC_PAGESIZE) &&
	    !ipc_lock_capable()) {
		ENG_LOG(DEBUG, "reg_mr: %" PRIu64 " more pages pinned than "
			"RLIMIT_MEMLOCK's %" PRIu64 " bytes allow",
			n, (uint64_t)rl.rlim_cur);
		return -ENOMEM;
	}
	return 0;
}

int
uroce_dev_mr_reg(struct uroce_pd *pd, void *addr, size_t len, uint64_t iova,
		 unsigned int access, struct uroce_mr **out)
{
	uint64_t n = pin_pages(addr, len, access);
	int ret;

	if (pd == NULL || out == NULL)
		return -EINVAL;
	pthread_mutex_lock(&eng_g->lock);
	ret = pin_check(n);
	if (ret == 0)
		ret = uroce_mr_reg(pd->dev->env.mrs, pd, addr, len, iova,
				   access, out);
	if (ret == 0) {
		pd->refs++;
		eng_pinned_pages += n;
	}
	pthread_mutex_unlock(&eng_g->lock);
	return ret;
}

int
uroce_dev_mr_dereg(struct uroce_mr *mr)
{
	struct uroce_pd *pd;
	uint64_t n;
	int ret;

	if (mr == NULL)
		return -EINVAL;
	pd = (struct uroce_pd *)(uintptr_t)mr->pd;
	pthread_mutex_lock(&eng_g->lock);
	n = pin_pages(mr->addr, mr->length, mr->access);
	ret = uroce_mr_dereg(pd->dev->env.mrs, mr);
	if (ret == 0) {
		pd->refs--;
		eng_pinned_pages -= n;
	}
	pthread_mutex_unlock(&eng_g->lock);
	/* A check that passed before the dereg may still be copying: the
	 * memory is the application's again only after every lcore moved on
	 * (uroce_mr.h, Threads). */
	if (ret == 0)
		eng_sync();
	return ret;
}

int
uroce_dev_mr_rereg(struct uroce_mr *mr, struct uroce_pd *npd, void *addr,
		   size_t len, uint64_t iova, unsigned int access)
{
	struct uroce_pd *pd;
	bool moved;
	uint64_t n;
	int ret;

	if (mr == NULL || npd == NULL)
		return -EINVAL;
	pd = (struct uroce_pd *)(uintptr_t)mr->pd;
	if (npd->dev != pd->dev)
		return -EINVAL;
	/* A new range is charged while the old one still is, as a rereg
	 * that builds a new umem before it drops the old one; a change of
	 * access or PD alone pins nothing new. */
	moved = addr != mr->addr || len != mr->length ||
		((access ^ mr->access) & IBV_ACCESS_ON_DEMAND);
	n = moved ? pin_pages(addr, len, access) : 0;
	pthread_mutex_lock(&eng_g->lock);
	ret = pin_check(n);
	if (ret == 0)
		ret = uroce_mr_rereg_begin(pd->dev->env.mrs, mr, addr, len,
					   iova, access);
	if (ret == 0)
		eng_pinned_pages += n;
	pthread_mutex_unlock(&eng_g->lock);
	if (ret != 0)
		return ret;
	/* No check that passed under the old fields is still in use. */
	eng_sync();
	pthread_mutex_lock(&eng_g->lock);
	if (moved)
		eng_pinned_pages -= pin_pages(mr->addr, mr->length,
					      mr->access);
	uroce_mr_rereg_end(pd->dev->env.mrs, mr, npd, addr, len, iova,
			   access);
	pd->refs--;
	npd->refs++;
	pthread_mutex_unlock(&eng_g->lock);
	return 0;
}

int
uroce_dev_mw_alloc(struct uroce_pd *pd, enum ibv_mw_type type, uint32_t *rkey)
{
	int ret;

	if (pd == NULL || rkey == NULL)
		return -EINVAL;
	pthread_mutex_lock(&eng_g->lock);
	ret = uroce_mw_alloc(pd->dev->env.mrs, pd, type, rkey);
	if (ret == 0)
		pd->refs++;
	pthread_mutex_unlock(&eng_g->lock);
	return ret;
}

int
uroce_dev_mw_dealloc(struct uroce_pd *pd, uint32_t rkey)
{
	int ret;

	if (pd == NULL)
		return -EINVAL;
	pthread_mutex_lock(&eng_g->lock);
	ret = uroce_mw_dealloc(pd->dev->env.mrs, rkey);
	if (ret == 0)
		pd->refs--;
	pthread_mutex_unlock(&eng_g->lock);
	/* As a dereg: an access through the window may still be copying. */
	if (ret == 0)
		eng_sync();
	return ret;
}

/* ------------------------------------------------------------------------
 * AHs.
 */
static int
eng_ah_l2l3(struct uroce_dev *dev, const struct ibv_ah_attr *attr,
	    struct uroce_l2l3 *l)
{
	int ret;

	/* RoCE addresses are GIDs: an AH without a GRH has no destination. */
	if (!attr->is_global || attr->port_num != 1)
		return -EINVAL;
	ret = uroce_l2l3_from_ah(&dev->env, attr, l);
	if (ret == 0)
		l->udp_sport = UROCE_UDP_SPORT_MIN;
	return ret;
}

/* Resolve the next hop, progressing the engine while ARP is under way
 * (AHs here, the GSI's MADs in gsi.c). */
int
eng_resolve_wait(struct uroce_dev *dev, struct uroce_l2l3 *l)
{
	uint64_t end = rte_get_tsc_cycles() +
		eng_g->tsc_hz / 1000 * ENG_AH_RESOLVE_MS;
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 100000 };
	int ret;

	for (;;) {
		ret = eng_resolve(dev, l);
		if (ret != -EAGAIN)
			return ret;
		if (rte_get_tsc_cycles() > end)
			return -EHOSTUNREACH;
		if (uroce_engine_poll() <= 0)
			nanosleep(&ts, NULL);
	}
}

/*
 * A port gone for good (uroce_port_gone(): its interface deleted, its
 * ethdev removed, or its start failing for good; engine/link.c raises
 * IBV_EVENT_DEVICE_FATAL): what needs the port - an AH's resolution, a
 * new QP, a QP brought towards RTS - fails with -EIO, as rdma-core's
 * verbs do on a device the kernel has disassociated. Destroying objects,
 * and moving a QP to RESET or ERR, still work.
 */
static bool
eng_dev_fatal(const struct uroce_dev *dev)
{
	return uroce_port_gone(dev->port);
}

static bool
eng_modify_needs_port(const struct ibv_qp_attr *attr, int mask)
{
	return !(mask & IBV_QP_STATE) || (attr->qp_state != IBV_QPS_RESET &&
					   attr->qp_state != IBV_QPS_ERR);
}

int
uroce_dev_ah_create(struct uroce_pd *pd, const struct ibv_ah_attr *attr,
		    struct uroce_ah **out)
{
	struct uroce_dev *dev;
	struct eng_ah *ah;
	int ret;

	if (pd == NULL || attr == NULL || out == NULL)
		return -EINVAL;
	dev = pd->dev;
	if (eng_dev_fatal(dev))
		return -EIO;
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL)
		return -ENOMEM;
	ah->dev = dev;
	ah->ah.attr = *attr;
	ah->ah.pd = pd;
	ret = eng_ah_l2l3(dev, attr, &ah->ah.l2l3);
	if (ret == 0)
		ret = uroce_ah_static_rate(&dev->env, &ah->ah);
	if (ret == 0)
		ret = eng_resolve_wait(dev, &ah->ah.l2l3);
	if (ret < 0) {
		free(ah);
		return ret;
	}
	ah->ah.resolved = true;
	pthread_mutex_lock(&eng_g->lock);
	if (dev->n_ah >= ENG_MAX_AH) {
		ret = -ENOMEM;
	} else {
		TAILQ_INSERT_TAIL(&dev->ahs, ah, link);
		dev->n_ah++;
		pd->refs++;
	}
	pthread_mutex_unlock(&eng_g->lock);
	if (ret < 0) {
		free(ah);
		return ret;
	}
	*out = &ah->ah;
	return 0;
}

int
uroce_dev_ah_destroy(struct uroce_ah *uah)
{
	struct eng_ah *ah = container_of(uah, struct eng_ah, ah);
	struct uroce_pd *pd;

	if (uah == NULL)
		return -EINVAL;
	pd = (struct uroce_pd *)(uintptr_t)uah->pd;
	pthread_mutex_lock(&eng_g->lock);
	TAILQ_REMOVE(&ah->dev->ahs, ah, link);
	ah->dev->n_ah--;
	pd->refs--;
	pthread_mutex_unlock(&eng_g->lock);
	free(ah);
	return 0;
}

/* ------------------------------------------------------------------------
 * QPs.
 */

static void
eng_cq_unref(struct eng_cq *cq)
{
	if (--cq->refs == 0)
		cq->owner = -1;
}

/* Engine lock. Take (dir 1) or drop (-1) the references a QP holds on
 * its CQs, PD, SRQ or XRC domain; taking binds the CQs to the QP's owner. */
static void
eng_qp_ref(struct eng_qp *eq, int owner, int dir)
{
	struct eng_cq *cqs[2] = { eq->scq, eq->rcq };
	unsigned int i;

	for (i = 0; i < RTE_DIM(cqs); i++) {
		if (cqs[i] == NULL)
			continue;
		if (dir > 0) {
			cqs[i]->owner = owner;
			cqs[i]->refs++;
		} else {
			eng_cq_unref(cqs[i]);
		}
	}
	if (eq->pd != NULL)
		eq->pd->refs += (uint32_t)dir;
	if (eq->srq != NULL)
		eq->srq->srq->refs += (uint32_t)dir;
	if (eq->xrcd != NULL)
		eq->xrcd->refs += (uint32_t)dir;
}

/* Engine lock. The owner of a new QP: the lcore its CQs are bound to (all
 * must agree: a CQ is written by one lcore only), else round-robin. The
 * CQ of its SRQ (TM) counts too: the QP's receives complete there, and
 * every QP of a TM-SRQ on one lcore makes its matching single-threaded. */
static int
eng_pick_owner(struct eng_cq *scq, struct eng_cq *rcq, struct eng_cq *srq_cq)
{
	struct eng_cq *cqs[3] = { scq, rcq, srq_cq };
	int owner = -1;
	unsigned int i;

	for (i = 0; i < RTE_DIM(cqs); i++) {
		if (cqs[i] == NULL || cqs[i]->owner < 0)
			continue;
		if (owner >= 0 && cqs[i]->owner != owner) {
			ENG_LOG(NOTICE,
				"%s: create_qp: its CQs (send, recv, SRQ's) are on engine lcores %d and %d: a QP's CQs need one owner\n",
				scq->dev->name, owner, cqs[i]->owner);
			return -EINVAL;
		}
		owner = cqs[i]->owner;
	}
	return owner >= 0 ? owner : (int)(eng_g->rr++ % eng_g->nb_ctx);
}

/* Engine lock. The CQ that the QPs of a TM-SRQ complete on. */
static struct eng_cq *
eng_tm_cq_of_init(const struct ibv_qp_init_attr *init)
{
	struct eng_srq *es = eng_srq_of_init(init);

	return es != NULL && es->srq->type == IBV_SRQT_TM ? es->cq : NULL;
}

/* A new QP's first change, @first (NULL: none), made before any lcore or
 * other thread can see the QP: on the creating thread, no control message.
 * Only RESET -> INIT, which touches nothing but the QP (no path, no timer,
 * nothing to send). */
static int
eng_qp_first(struct uroce_qp *qp, struct ibv_qp_attr *first, int mask)
{
	if (first == NULL)
		return 0;
	if (!(mask & IBV_QP_STATE) || first->qp_state != IBV_QPS_INIT)
		return -EINVAL;
	return uroce_qp_modify(qp, first, mask, rte_get_tsc_cycles());
}

/* Engine lock. */
int
eng_qp_new(struct uroce_dev *dev, struct uroce_pd *pd, struct eng_cq *scq,
	   struct eng_cq *rcq, struct uroce_xrcd *xrcd,
	   const struct ibv_qp_init_attr *init, void *user,
	   struct ibv_qp_attr *first, int first_mask,
	   const struct uroce_ring_alloc *alloc, struct eng_qp **out)
{
	struct eng_cq *tm_cq = eng_tm_cq_of_init(init);
	struct eng_qp **slot;
	struct eng_qp *eq;
	struct uroce_qp *qp;
	uint32_t qpn;
	void *mem;
	int owner, ret;

	if (dev->n_qp >= ENG_MAX_QP)
		return -ENOMEM;
	owner = xrcd != NULL ? eng_xrcd_owner(xrcd) :
		eng_pick_owner(scq, rcq, tm_cq);
	if (owner < 0)
		return owner;
	qpn = eng_qpn_alloc();
	slot = qpn != 0 ? eng_qpn_slot(qpn) : NULL;
	/* Aligned: its first line is what a call reads (engine_priv.h). */
	if (posix_memalign(&mem, RTE_CACHE_LINE_SIZE, sizeof(*eq)) == 0) {
		eq = memset(mem, 0, sizeof(*eq));
		eq->tmo = eng_tmo_get(eng_g, eq);
	} else {
		eq = NULL;
	}
	if (slot == NULL || eq == NULL || eq->tmo == NULL) {
		eng_qp_free(eq);
		return -ENOMEM;
	}
	if (init->qp_type == IBV_QPT_RAW_PACKET && scq == NULL && rcq == NULL)
		ret = uroce_qp_create_rss(&dev->env, pd, qpn, &qp);
	else
		ret = uroce_qp_create_ex(&dev->env, pd,
					 scq != NULL ? &scq->cq : NULL,
					 rcq != NULL ? &rcq->cq : NULL, init,
					 qpn, alloc, &qp);
	if (ret < 0) {
		eng_qp_free(eq);
		return ret;
	}
	ret = eng_qp_first(qp, first, first_mask);
	if (ret < 0) {
		uroce_qp_destroy(qp);
		eng_qp_free(eq);
		return ret;
	}
	eq->srq = eng_srq_of_init(init);
	eq->qp = qp;
	eq->dev = dev;
	eq->pd = pd;
	/* What the transport kept: XRC types drop the CQs they have not. */
	eq->scq = qp->send_cq != NULL ? scq : NULL;
	eq->rcq = qp->recv_cq != NULL ? rcq : NULL;
	eq->xrcd = xrcd;
	eq->tmo->qp = qp;
	qp->lcore = (unsigned int)owner;
	qp->user = user;
	qp->engine = eq;
	qp->xrcd = xrcd;
	eng_qp_attach(eq);
	eng_qp_ref(eq, owner, 1);
	if (tm_cq != NULL)
		tm_cq->owner = owner;
	dev->n_qp++;
	TAILQ_INSERT_TAIL(&dev->qps, eq, dev_link);
	__atomic_store_n(slot, eq, __ATOMIC_RELEASE);
	*out = eq;
	return 0;
}

static void
eng_qp_created(struct eng_qp *eq, struct uroce_qp **out)
{
	*out = eq->qp;
	ENG_LOG(DEBUG, "%s: qp 0x%06x (%s) on engine lcore %u\n",
		eq->dev->name, eq->qp->qpn, uroce_qp_type_name(eq->qp->type),
		eq->qp->lcore);
}

int
uroce_dev_qp_create(struct uroce_pd *pd, struct uroce_cq *send_cq,
		    struct uroce_cq *recv_cq,
		    const struct ibv_qp_init_attr *init, void *user,
		    struct uroce_qp **out)
{
	return uroce_dev_qp_create_init(pd, send_cq, recv_cq, init, user,
					NULL, 0, NULL, out);
}

int
uroce_dev_qp_create_init(struct uroce_pd *pd, struct uroce_cq *send_cq,
			 struct uroce_cq *recv_cq,
			 const struct ibv_qp_init_attr *init, void *user,
			 struct ibv_qp_attr *first, int first_mask,
			 const struct uroce_ring_alloc *alloc,
			 struct uroce_qp **out)
{
	struct eng_cq *scq, *rcq;
	struct eng_qp *eq;
	int ret;

	if (pd == NULL || send_cq == NULL || init == NULL || out == NULL ||
	    init->qp_type == IBV_QPT_XRC_RECV)
		return -EINVAL;
	/* XRC_SEND has no receive side: its recv_cq is not looked at. */
	if (init->qp_type == IBV_QPT_XRC_SEND)
		recv_cq = NULL;
	else if (recv_cq == NULL)
		return -EINVAL;
	scq = eng_cq_of(send_cq);
	rcq = recv_cq != NULL ? eng_cq_of(recv_cq) : NULL;
	if (scq->dev != pd->dev || (rcq != NULL && rcq->dev != pd->dev))
		return -EINVAL;
	/* init->srq is the engine's SRQ (uroce_qp_create()), of this device. */
	if (init->srq != NULL && eng_srq_of_init(init)->dev != pd->dev)
		return -EINVAL;
	if (eng_dev_fatal(pd->dev))
		return -EIO;
	pthread_mutex_lock(&eng_g->lock);
	ret = eng_qp_new(pd->dev, pd, scq, rcq, NULL, init, user, first,
			 first_mask, alloc, &eq);
	pthread_mutex_unlock(&eng_g->lock);
	if (ret == 0)
		eng_qp_created(eq, out);
	return ret;
}

int
uroce_dev_xrc_qp_create(struct uroce_xrcd *xrcd,
			const struct ibv_qp_init_attr *init, void *user,
			struct uroce_qp **out)
{
	struct eng_qp *eq;
	int ret;

	if (xrcd == NULL || init == NULL || out == NULL ||
	    init->qp_type != IBV_QPT_XRC_RECV)
		return -EINVAL;
	pthread_mutex_lock(&eng_g->lock);
	ret = eng_qp_new(xrcd->dev, NULL, NULL, NULL, xrcd, init, user, NULL, 0,
			 NULL, &eq);
	pthread_mutex_unlock(&eng_g->lock);
	if (ret == 0)
		eng_qp_created(eq, out);
	return ret;
}

int
uroce_dev_qp_destroy(struct uroce_qp *qp)
{
	struct eng_qp *eq;
	struct uroce_dev *dev;

	if (qp == NULL || qp->engine == NULL)
		return -EINVAL;
	eq = qp->engine;
	dev = eq->dev;
	pthread_mutex_lock(&eng_g->lock);
	if (eq->n_flow > 0 || eq->n_ind > 0) {
		pthread_mutex_unlock(&eng_g->lock);
		return -EBUSY;
	}
	__atomic_store_n(eng_qpn_slot(qp->qpn), NULL, __ATOMIC_RELEASE);
	/* No lcore may still hold eq from a lookup when the owner frees it. */
	eng_sync();
	eng_qp_detach(eq);
	eng_qp_ref(eq, -1, -1);
	dev->n_qp--;
	TAILQ_REMOVE(&dev->qps, eq, dev_link);
	eng_rss_release(eq);
	eng_qp_free(eq);
	pthread_mutex_unlock(&eng_g->lock);
	return 0;
}

int
uroce_dev_qp_modify(struct uroce_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	if (qp == NULL || qp->engine == NULL || attr == NULL)
		return -EINVAL;
	if (eng_dev_fatal(((struct eng_qp *)qp->engine)->dev) &&
	    eng_modify_needs_port(attr, mask))
		return -EIO;
	return eng_qp_modify(qp->engine, attr, mask);
}

int
uroce_dev_qp_modify_seq(struct uroce_qp *qp, struct ibv_qp_attr *attr,
			const int *mask, unsigned int n, unsigned int *done)
{
	if (done != NULL)
		*done = 0;
	if (qp == NULL || qp->engine == NULL || attr == NULL || mask == NULL ||
	    n == 0 || done == NULL)
		return -EINVAL;
	return eng_qp_modify_seq(qp->engine, attr, mask, n, done);
}

int
uroce_dev_qp_rate_limit(struct uroce_qp *qp,
			const struct ibv_qp_rate_limit_attr *attr)
{
	if (qp == NULL || qp->engine == NULL || attr == NULL)
		return -EINVAL;
	return eng_qp_rate_limit(qp->engine, attr);
}

int
uroce_dev_qp_query(struct uroce_qp *qp, struct ibv_qp_attr *attr,
		   struct ibv_qp_init_attr *init)
{
	struct ibv_qp_init_attr scratch;

	if (qp == NULL || qp->engine == NULL || attr == NULL)
		return -EINVAL;
	return eng_qp_query(qp->engine, attr, init != NULL ? init : &scratch);
}

int
uroce_dev_qp_stats(struct uroce_qp *qp, struct uroce_qp_stats *st)
{
	if (qp == NULL || qp->engine == NULL || st == NULL)
		return -EINVAL;
	return eng_qp_stats(qp->engine, st);
}
