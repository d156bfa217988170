/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The flow table of each device (ibv_create_flow(3) for RAW_PACKET QPs):
 * which QP a received non-RoCE frame goes to. The rules themselves are in
 * flow_rule.c and uroce_flow.h.
 *
 * No lock on the rx path. A device's rules live in an immutable sorted
 * table; each engine lcore reads its own pointer to the current table
 * (lc->flows[dev]). Creating or destroying a rule (engine lock) builds a
 * new table, hands it to every lcore through a control message (the
 * lcore swaps its pointer between two iterations, ctrl.c), and frees the
 * old table once every lcore has answered: none can still be reading it.
 *
 * A frame that matches a rule of a QP owned by another lcore is handed to
 * that lcore on its hand-off ring, marked as a steered frame
 * (RTE_MBUF_F_RX_FDIR_ID with the QPN in hash.fdir.hi, DPDK's "matched a
 * flow rule" mark); the owner looks the QPN up again, since the QP may be
 * gone by then. A QP with rules cannot be destroyed (-EBUSY, as the
 * kernel's uverbs refuses while flows hold the QP). A rule of an RSS QP
 * steers each frame to one of its WQs, picked here, on the receiving
 * lcore (dev_wq.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "engine_priv.h"
#include "uroce_flow.h"

/* Rules of one device at most. */
#define ENG_MAX_FLOWS	4096

/* A rule as created (engine lock). */
struct uroce_flow {
	struct uroce_flow_rule rule;
	struct uroce_dev *dev;
	struct eng_qp *eq;
	uint64_t seq;			/* creation order among equal ranks */
	TAILQ_ENTRY(uroce_flow) link;	/* dev->flows, sorted */
};

/* ------------------------------------------------------------------------
 * Publishing a device's table.
 */
static struct eng_flow_tbl *
tbl_build(struct uroce_dev *dev)
{
	struct eng_flow_tbl *t;
	struct uroce_flow *f;
	uint32_t i = 0;

	if (dev->n_flow == 0)
		return NULL;
	t = calloc(1, sizeof(*t) + dev->n_flow * sizeof(t->ent[0]));
	if (t == NULL)
		return NULL;
	TAILQ_FOREACH(f, &dev->flows, link) {
		t->ent[i].rule = f->rule;
		t->ent[i].qpn = f->eq->qp->qpn;
		i++;
	}
	t->n = i;
	return t;
}

struct tbl_set_args {
	unsigned int dev;
	struct eng_flow_tbl *tbl;
};

static int
ctrl_tbl_set(struct eng_lcore *lc, void *arg)
{
	const struct tbl_set_args *a = arg;

	lc->flows[a->dev] = a->tbl;
	return 0;
}

/* Engine lock. Every lcore uses tbl from now on; the old table is freed. */
static void
tbl_publish(struct uroce_dev *dev, struct eng_flow_tbl *tbl)
{
	struct tbl_set_args a = { .dev = dev->idx, .tbl = tbl };
	unsigned int i;

	for (i = 0; i < eng_g->nb_ctx; i++)
		eng_ctrl_run(i, ctrl_tbl_set, &a);
	free(dev->flow_tbl);
	dev->flow_tbl = tbl;
}

/* Engine lock. Insert f after every rule it does not precede. */
static void
flow_insert(struct uroce_dev *dev, struct uroce_flow *f)
{
	struct uroce_flow *o;

	TAILQ_FOREACH(o, &dev->flows, link)
		if (uroce_flow_rule_cmp(&f->rule, &o->rule) < 0)
			break;
	if (o != NULL)
		TAILQ_INSERT_BEFORE(o, f, link);
	else
		TAILQ_INSERT_TAIL(&dev->flows, f, link);
}

/* ------------------------------------------------------------------------
 * Create and destroy.
 */
static int
flow_qp_check(const struct uroce_qp *qp)
{
	/* ibv_create_flow(3): UD or RAW_PACKET QPs only; steering to UD QPs
	 * (IPoIB's) is not built. */
	if (qp->type == IBV_QPT_UD)
		return -EOPNOTSUPP;
	return qp->type == IBV_QPT_RAW_PACKET ? 0 : -EINVAL;
}

int
uroce_dev_flow_create(struct uroce_qp *qp, const struct ibv_flow_attr *attr,
		      struct uroce_flow **out)
{
	struct uroce_flow_rule rule;
	struct eng_flow_tbl *tbl;
	struct uroce_dev *dev;
	struct uroce_flow *f;
	int ret;

	if (qp == NULL || qp->engine == NULL || attr == NULL || out == NULL)
		return -EINVAL;
	ret = flow_qp_check(qp);
	if (ret == 0)
		ret = uroce_flow_rule_parse(attr, &rule);
	if (ret < 0)
		return ret;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	f->rule = rule;
	f->eq = qp->engine;
	f->dev = dev = f->eq->dev;
	pthread_mutex_lock(&eng_g->lock);
	if (dev->n_flow >= ENG_MAX_FLOWS) {
		pthread_mutex_unlock(&eng_g->lock);
		free(f);
		return -ENOMEM;
	}
	f->seq = dev->flow_seq++;
	flow_insert(dev, f);
	dev->n_flow++;
	tbl = tbl_build(dev);
	if (tbl == NULL) {
		TAILQ_REMOVE(&dev->flows, f, link);
		dev->n_flow--;
		pthread_mutex_unlock(&eng_g->lock);
		free(f);
		return -ENOMEM;
	}
	f->eq->n_flow++;
	tbl_publish(dev, tbl);
	pthread_mutex_unlock(&eng_g->lock);
	ENG_LOG(DEBUG, "%s: flow (type %d, priority %u, specs 0x%x) -> qp 0x%06x\n",
		dev->name, (int)rule.type, rule.priority, rule.specs, qp->qpn);
	*out = f;
	return 0;
}

int
uroce_dev_flow_destroy(struct uroce_flow *f)
{
	struct uroce_dev *dev;
	struct eng_flow_tbl *tbl;

	if (f == NULL)
		return -EINVAL;
	dev = f->dev;
	pthread_mutex_lock(&eng_g->lock);
	TAILQ_REMOVE(&dev->flows, f, link);
	dev->n_flow--;
	tbl = tbl_build(dev);
	if (tbl == NULL && dev->n_flow > 0) {
		/* Keep the rule rather than leave the lcores on a table that
		 * names a QP the application may destroy next. */
		flow_insert(dev, f);
		dev->n_flow++;
		pthread_mutex_unlock(&eng_g->lock);
		return -ENOMEM;
	}
	f->eq->n_flow--;
	tbl_publish(dev, tbl);
	pthread_mutex_unlock(&eng_g->lock);
	free(f);
	return 0;
}

/* Lcores stopped: free the device's rules and table. */
void
eng_flow_dev_close(struct uroce_dev *dev)
{
	struct uroce_flow *f;

	while ((f = TAILQ_FIRST(&dev->flows)) != NULL) {
		TAILQ_REMOVE(&dev->flows, f, link);
		free(f);
	}
	dev->n_flow = 0;
	free(dev->flow_tbl);
	dev->flow_tbl = NULL;
}

/* ------------------------------------------------------------------------
 * Receive (engine lcores).
 */

/* A steered frame on the QP's owner; m stays the caller's. */
static void
flow_qp_rx(struct eng_lcore *lc, struct uroce_dev *dev, uint32_t qpn,
	   struct rte_mbuf *m)
{
	struct eng_qp *eq = eng_qpn_lookup(qpn);

	if (eq == NULL || eq->dev != dev || eq->qp->lcore != lc->idx ||
	    eq->qp->type != IBV_QPT_RAW_PACKET)
		return;		/* gone since it was steered */
	uroce_qp_raw_rx(eq->qp, m, eng_now(lc));
}

/* Deliver here or hand to the owner; an RSS QP's frame goes to the WQ its
 * hash picks (dev_wq.c). Takes m. */
static void
flow_steer(struct eng_lcore *lc, struct uroce_dev *dev, uint32_t qpn,
	   const struct uroce_flow_key *k, struct rte_mbuf *m)
{
	struct eng_qp *eq = eng_qpn_lookup(qpn);
	struct uroce_dev_stats *ds = &lc->dst[dev->idx];
	unsigned int owner;

	if (eq != NULL && eq->rss != NULL) {
		qpn = eng_rss_pick(eq, k);
		eq = eng_qpn_lookup(qpn);
	}
	if (eq == NULL || eq->qp == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	owner = eq->qp->lcore;
	if (owner == lc->idx) {
		flow_qp_rx(lc, dev, qpn, m);
		rte_pktmbuf_free(m);
		return;
	}
	m->port = dev->idx;
	m->ol_flags |= RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID;
	m->hash.fdir.hi = qpn;
	if (rte_ring_mp_enqueue(eng_g->lc[owner]->ho, m) != 0) {
		ds->handoff_drops++;
		rte_pktmbuf_free(m);
		return;
	}
	ds->handoffs++;
}

bool
eng_flow_rx(void *arg, uint16_t q, struct rte_mbuf *m)
{
	struct uroce_dev *dev = arg;
	struct eng_lcore *lc = eng_g->lc[q];
	const struct eng_flow_tbl *t = lc->flows[dev->idx];
	struct uroce_flow_key k;
	uint32_t i;

	if (t == NULL)
		return false;
	uroce_flow_key_get(rte_pktmbuf_mtod(m, const uint8_t *),
			   rte_pktmbuf_data_len(m), &k);
	for (i = 0; i < t->n; i++) {
		if (uroce_flow_rule_match(&t->ent[i].rule, &k)) {
			flow_steer(lc, dev, t->ent[i].qpn, &k, m);
			return true;
		}
	}
	return false;
}

bool
eng_flow_handoff_rx(struct eng_lcore *lc, struct rte_mbuf *m)
{
	if ((m->ol_flags & RTE_MBUF_F_RX_FDIR_ID) == 0)
		return false;
	flow_qp_rx(lc, eng_g->dev[m->port], m->hash.fdir.hi, m);
	rte_pktmbuf_free(m);
	return true;
}
