/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Receive work queues, their indirection tables and RSS QPs
 * (ibv_create_wq(3), ibv_create_rwq_ind_table(3), ibv_create_qp_ex(3) with
 * IBV_QP_INIT_ATTR_RX_HASH), as an Ethernet NIC offers them to RAW_PACKET
 * traffic (mlx5 is the model).
 *
 * A WQ is a receive-only RAW_PACKET QP of the engine: its own receive
 * ring, PD and CQ, its number from the QPN space (wc.qp_num of its
 * completions is the WQ number). Its states map onto the QP's: RESET is
 * RESET, RDY is RTR (receives, no send side), ERR is ERR (what is posted
 * is flushed). An RSS QP is a RAW_PACKET QP with no queue of its own
 * (uroce_qp_create_rss()); flow rules steer to it as to any raw QP, and a
 * frame they steer goes to the WQ that the Toeplitz hash of its fields
 * picks in the QP's indirection table (uroce_rss.h), whatever the RSS QP's
 * own state: the WQ's state decides, as on a NIC.
 *
 * Lifetimes hold the rx path's reads (engine lock on every change): a WQ
 * cannot be destroyed while a table names it, a table while an RSS QP uses
 * it, an RSS QP while a flow rule steers to it (flow.c), so the lcore that
 * found an RSS QP through the flow table may read its table. The WQ it
 * picks is looked up again by number, as any steered frame's QP is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine_priv.h"
#include "uroce_rss.h"

/* Tables of one device, and entries of one table, at most. */
#define ENG_MAX_IND_TBL		1024u
#define ENG_IND_TBL_LOG_MAX	12u

/* An indirection table (engine lock; immutable once made). */
struct uroce_ind_tbl {
	struct uroce_dev *dev;
	uint32_t refs;			/* RSS QPs using it */
	uint32_t mask;			/* entries - 1 */
	TAILQ_ENTRY(uroce_ind_tbl) link;
	struct eng_qp **wq;		/* the WQs, for their references */
	uint32_t wqn[];			/* what the rx path reads */
};

/* An RSS QP's configuration (eq->rss). */
struct eng_rss {
	struct uroce_rss_conf conf;
	struct uroce_ind_tbl *tbl;
};

void
uroce_dev_wq_caps(struct uroce_dev_wq_caps *caps)
{
	caps->max_wq = ENG_MAX_QP;
	caps->max_ind_tbl = ENG_MAX_IND_TBL;
	caps->max_ind_tbl_size = 1u << ENG_IND_TBL_LOG_MAX;
	caps->rx_hash_fields = UROCE_RSS_FIELDS;
}

/* ------------------------------------------------------------------------
 * Work queues.
 */
int
uroce_dev_wq_create(struct uroce_pd *pd, struct uroce_cq *cq, uint32_t max_wr,
		    uint32_t max_sge, void *user, struct uroce_qp **out)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_recv_wr = max_wr, .max_recv_sge = max_sge },
	};
	struct eng_cq *ecq;
	struct eng_qp *eq;
	int ret;

	if (pd == NULL || cq == NULL || out == NULL || max_wr == 0 ||
	    max_sge == 0)
		return -EINVAL;
	ecq = eng_cq_of(cq);
	if (ecq->dev != pd->dev)
		return -EINVAL;
	pthread_mutex_lock(&eng_g->lock);
	ret = eng_qp_new(pd->dev, pd, ecq, ecq, NULL, &init, user, NULL, 0,
			 NULL, &eq);
	if (ret == 0)
		eq->is_wq = true;
	pthread_mutex_unlock(&eng_g->lock);
	if (ret == 0)
		*out = eq->qp;
	return ret;
}

/* The engine QP of a WQ, or NULL. */
static struct eng_qp *
wq_eq(const struct uroce_qp *wq)
{
	struct eng_qp *eq = wq != NULL ? wq->engine : NULL;

	return eq != NULL && eq->is_wq ? eq : NULL;
}

/* The QP states a WQ change goes through (IBV_QPS_*; 0 ends), by WQ state
 * from and to: the transitions of an Ethernet NIC's receive queue (RESET
 * to RDY, RDY to ERR or RESET, ERR to RESET; RESET and RDY to themselves
 * change nothing). A zero row with ok false is refused. */
struct wq_trans {
	bool ok;
	uint8_t n;
	enum ibv_qp_state qps[2];
};

static const struct wq_trans wq_trans[IBV_WQS_ERR + 1][IBV_WQS_ERR + 1] = {
	[IBV_WQS_RESET] = {
		[IBV_WQS_RESET] = { true, 0, { 0 } },
		[IBV_WQS_RDY]   = { true, 2, { IBV_QPS_INIT, IBV_QPS_RTR } },
	},
	[IBV_WQS_RDY] = {
		[IBV_WQS_RESET] = { true, 1, { IBV_QPS_RESET } },
		[IBV_WQS_RDY]   = { true, 0, { 0 } },
		[IBV_WQS_ERR]   = { true, 1, { IBV_QPS_ERR } },
	},
	[IBV_WQS_ERR] = {
		[IBV_WQS_RESET] = { true, 1, { IBV_QPS_RESET } },
	},
};

static bool
wq_state_ok(enum ibv_wq_state s)
{
	return (unsigned int)s <= IBV_WQS_ERR;
}

int
uroce_dev_wq_modify(struct uroce_qp *wq, enum ibv_wq_state cur, bool has_cur,
		    enum ibv_wq_state to)
{
	struct ibv_qp_attr attr[2];
	const struct wq_trans *t;
	int mask[2];
	struct eng_qp *eq;
	unsigned int i, done;
	int ret;

	eq = wq_eq(wq);
	if (eq == NULL || !wq_state_ok(to) || (has_cur && !wq_state_ok(cur)))
		return -EINVAL;
	pthread_mutex_lock(&eng_g->lock);
	t = &wq_trans[eq->wq_state][to];
	if ((has_cur && cur != eq->wq_state) || !t->ok) {
		pthread_mutex_unlock(&eng_g->lock);
		return -EINVAL;
	}
	memset(attr, 0, sizeof(attr));
	for (i = 0; i < t->n; i++) {
		attr[i].qp_state = t->qps[i];
		attr[i].port_num = 1;
		mask[i] = IBV_QP_STATE |
			  (t->qps[i] == IBV_QPS_INIT ? IBV_QP_PORT : 0);
	}
	ret = t->n > 0 ? eng_qp_modify_seq(eq, attr, mask, t->n, &done) : 0;
	if (ret == 0)
		eq->wq_state = (uint8_t)to;
	else if (done > 0)	/* RESET -> INIT only: back to RESET */
		eng_qp_modify(eq, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
			      IBV_QP_STATE);
	pthread_mutex_unlock(&eng_g->lock);
	return ret;
}

int
uroce_dev_wq_destroy(struct uroce_qp *wq)
{
	if (wq_eq(wq) == NULL)
		return -EINVAL;
	return uroce_dev_qp_destroy(wq);
}

/* ------------------------------------------------------------------------
 * Indirection tables.
 */
int
uroce_dev_ind_tbl_create(struct uroce_dev *dev, uint32_t log_size,
			 struct uroce_qp *const *wqs, struct uroce_ind_tbl **out)
{
	struct uroce_ind_tbl *t;
	uint32_t i, n;

	if (dev == NULL || wqs == NULL || out == NULL ||
	    log_size > ENG_IND_TBL_LOG_MAX)
		return -EINVAL;
	n = 1u << log_size;
	for (i = 0; i < n; i++)
		if (wq_eq(wqs[i]) == NULL || wq_eq(wqs[i])->dev != dev)
			return -EINVAL;
	t = calloc(1, sizeof(*t) + n * sizeof(t->wqn[0]));
	if (t != NULL)
		t->wq = calloc(n, sizeof(t->wq[0]));
	if (t == NULL || t->wq == NULL) {
		free(t);
		return -ENOMEM;
	}
	t->dev = dev;
	t->mask = n - 1;
	pthread_mutex_lock(&eng_g->lock);
	if (dev->n_ind_tbl >= ENG_MAX_IND_TBL) {
		pthread_mutex_unlock(&eng_g->lock);
		free(t->wq);
		free(t);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		t->wq[i] = wq_eq(wqs[i]);
		t->wqn[i] = wqs[i]->qpn;
		t->wq[i]->n_ind++;
	}
	dev->n_ind_tbl++;
	TAILQ_INSERT_TAIL(&dev->ind_tbls, t, link);
	pthread_mutex_unlock(&eng_g->lock);
	*out = t;
	return 0;
}

static void
ind_tbl_free(struct uroce_ind_tbl *t)
{
	free(t->wq);
	free(t);
}

int
uroce_dev_ind_tbl_destroy(struct uroce_ind_tbl *t)
{
	uint32_t i;

	if (t == NULL)
		return -EINVAL;
	pthread_mutex_lock(&eng_g->lock);
	if (t->refs > 0) {
		pthread_mutex_unlock(&eng_g->lock);
		return -EBUSY;
	}
	for (i = 0; i <= t->mask; i++)
		t->wq[i]->n_ind--;
	t->dev->n_ind_tbl--;
	TAILQ_REMOVE(&t->dev->ind_tbls, t, link);
	pthread_mutex_unlock(&eng_g->lock);
	ind_tbl_free(t);
	return 0;
}

/* ------------------------------------------------------------------------
 * RSS QPs.
 */
int
uroce_dev_rss_qp_create(struct uroce_pd *pd, struct uroce_ind_tbl *t,
			const struct ibv_rx_hash_conf *h, void *user,
			struct uroce_qp **out)
{
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RAW_PACKET };
	struct eng_rss *rss;
	struct eng_qp *eq;
	int ret;

	if (pd == NULL || t == NULL || h == NULL || out == NULL ||
	    t->dev != pd->dev)
		return -EINVAL;
	rss = calloc(1, sizeof(*rss));
	if (rss == NULL)
		return -ENOMEM;
	ret = uroce_rss_conf_parse(h, &rss->conf);
	if (ret < 0) {
		free(rss);
		return ret;
	}
	rss->tbl = t;
	pthread_mutex_lock(&eng_g->lock);
	/* No CQ: eng_qp_new() makes it with uroce_qp_create_rss(). */
	ret = eng_qp_new(pd->dev, pd, NULL, NULL, NULL, &init, user, NULL, 0,
			 NULL, &eq);
	if (ret == 0) {
		t->refs++;
		eq->rss = rss;
	}
	pthread_mutex_unlock(&eng_g->lock);
	if (ret < 0) {
		free(rss);
		return ret;
	}
	*out = eq->qp;
	return 0;
}

/* Engine lock: the QP is being destroyed. */
void
eng_rss_release(struct eng_qp *eq)
{
	if (eq->rss == NULL)
		return;
	eq->rss->tbl->refs--;
	free(eq->rss);
	eq->rss = NULL;
}

uint32_t
eng_rss_pick(const struct eng_qp *eq, const struct uroce_flow_key *k)
{
	const struct uroce_ind_tbl *t = eq->rss->tbl;

	/* The hash's low bits index the table (as a NIC's RETA). */
	return t->wqn[uroce_rss_hash(&eq->rss->conf, k) & t->mask];
}

/* Lcores stopped, QPs freed: the tables left. */
void
eng_wq_dev_close(struct uroce_dev *dev)
{
	struct uroce_ind_tbl *t;

	while ((t = TAILQ_FIRST(&dev->ind_tbls)) != NULL) {
		TAILQ_REMOVE(&dev->ind_tbls, t, link);
		ind_tbl_free(t);
	}
	dev->n_ind_tbl = 0;
}
