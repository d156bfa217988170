/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * SRQs of a device: create, destroy, and their numbers. An SRQ belongs to
 * no lcore: the QPs that take from it may be owned by several, and its
 * own locks (lib/transport/include/uroce_srq.h) serialise them, so modify and
 * query run on the caller's thread, without a control message.
 *
 * SRQ numbers index one table for the process (ENG_MAX_SRQ entries, set
 * up at the first SRQ), so that a receive path (XRC's XRCETH names the
 * SRQ) finds one with one ACQUIRE load and no lock. An SRQ is published
 * once set up and unpublished before it is freed, with eng_sync() in
 * between, as QPNs are (dev.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "engine_priv.h"

/* Engine lock. The table, set up when first needed. */
static struct uroce_srq **
eng_srqn_tbl(void)
{
	struct uroce_srq **t = eng_g->srqn_tbl;

	if (t == NULL) {
		t = calloc(ENG_MAX_SRQ, sizeof(*t));
		if (t != NULL)
			__atomic_store_n(&eng_g->srqn_tbl, t, __ATOMIC_RELEASE);
	}
	return t;
}

/* Engine lock. A free SRQ number after the last one given (never 0), or 0. */
static uint32_t
eng_srqn_alloc(struct uroce_srq **t)
{
	uint32_t i, n;

	for (i = 0; i < ENG_MAX_SRQ; i++) {
		n = eng_g->srqn_next;
		eng_g->srqn_next = (n + 1) % ENG_MAX_SRQ;
		if (n != 0 && t[n] == NULL)
			return n;
	}
	return 0;
}

struct uroce_srq *
uroce_dev_srq_lookup(uint32_t srqn)
{
	struct uroce_srq **t;

	if (eng_g == NULL || srqn == 0 || srqn >= ENG_MAX_SRQ)
		return NULL;
	t = __atomic_load_n(&eng_g->srqn_tbl, __ATOMIC_ACQUIRE);
	return t != NULL ? __atomic_load_n(&t[srqn], __ATOMIC_ACQUIRE) : NULL;
}

/* Engine lock. */
static int
eng_srq_new(struct uroce_pd *pd, struct uroce_srq_init *init, void *user,
	    struct eng_srq *es)
{
	struct uroce_dev *dev = pd->dev;
	struct uroce_srq **t = eng_srqn_tbl();
	struct uroce_srq *srq;
	int ret;

	if (t == NULL)
		return -ENOMEM;
	init->srqn = eng_srqn_alloc(t);
	if (init->srqn == 0)
		return -ENOMEM;
	init->pd = pd;
	if (init->type == IBV_SRQT_XRC) {
		ret = eng_xrcd_srq_check(init->xrcd, dev, es->cq);
		if (ret < 0)
			return ret;
	}
	ret = uroce_srq_create(&dev->env, init, &srq);
	if (ret < 0)
		return ret;
	if (init->type == IBV_SRQT_XRC)
		eng_xrcd_srq_ref((struct uroce_xrcd *)(uintptr_t)init->xrcd,
				 es->cq, 1);
	srq->user = user;
	srq->engine = es;
	es->srq = srq;
	es->dev = dev;
	es->pd = pd;
	pd->refs++;
	if (es->cq != NULL)
		es->cq->refs++;
	dev->n_srq++;
	TAILQ_INSERT_TAIL(&dev->srqs, es, link);
	__atomic_store_n(&t[srq->srqn], srq, __ATOMIC_RELEASE);
	return 0;
}

int
uroce_dev_srq_create(struct uroce_pd *pd, struct uroce_srq_init *init,
		     void *user, struct uroce_srq **out)
{
	struct eng_srq *es;
	int ret;

	if (pd == NULL || init == NULL || out == NULL)
		return -EINVAL;
	es = calloc(1, sizeof(*es));
	if (es == NULL)
		return -ENOMEM;
	if (init->cq != NULL) {
		es->cq = eng_cq_of(init->cq);
		if (es->cq->dev != pd->dev) {
			free(es);
			return -EINVAL;
		}
	}
	pthread_mutex_lock(&eng_g->lock);
	ret = eng_srq_new(pd, init, user, es);
	pthread_mutex_unlock(&eng_g->lock);
	if (ret < 0) {
		free(es);
		return ret;
	}
	*out = es->srq;
	ENG_LOG(DEBUG, "%s: srq %u (type %d, max_wr %u, max_sge %u)\n",
		pd->dev->name, es->srq->srqn, (int)es->srq->type,
		es->srq->max_wr, es->srq->max_sge);
	return 0;
}

/* Engine lock. Forget es (no QP uses it, nobody finds it any more). */
static void
eng_srq_unlink(struct eng_srq *es)
{
	es->pd->refs--;
	if (es->srq->type == IBV_SRQT_XRC)
		eng_xrcd_srq_ref((struct uroce_xrcd *)(uintptr_t)es->srq->xrcd,
				 es->cq, -1);
	if (es->cq != NULL)
		es->cq->refs--;
	es->dev->n_srq--;
	TAILQ_REMOVE(&es->dev->srqs, es, link);
}

int
uroce_dev_srq_destroy(struct uroce_srq *srq)
{
	struct eng_srq *es;

	if (srq == NULL || srq->engine == NULL)
		return -EINVAL;
	es = srq->engine;
	pthread_mutex_lock(&eng_g->lock);
	/* ibv_destroy_srq(3): fails while any QP is associated with it. */
	if (srq->refs > 0) {
		pthread_mutex_unlock(&eng_g->lock);
		return -EBUSY;
	}
	__atomic_store_n(&eng_g->srqn_tbl[srq->srqn], NULL, __ATOMIC_RELEASE);
	eng_srq_unlink(es);
	pthread_mutex_unlock(&eng_g->lock);
	/* A lookup made before the unpublish may still be in use. */
	eng_sync();
	uroce_srq_destroy(srq);
	free(es);
	return 0;
}

int
uroce_dev_srq_modify(struct uroce_srq *srq, struct ibv_srq_attr *attr,
		     int mask)
{
	if (srq == NULL || attr == NULL)
		return -EINVAL;
	return uroce_srq_modify(srq, attr, mask);
}

int
uroce_dev_srq_query(struct uroce_srq *srq, struct ibv_srq_attr *attr)
{
	if (srq == NULL || attr == NULL)
		return -EINVAL;
	uroce_srq_query(srq, attr);
	return 0;
}

/* Lcores stopped, the device's QPs gone: free its SRQs. */
void
eng_srq_dev_close(struct uroce_dev *dev)
{
	struct eng_srq *es;

	while ((es = TAILQ_FIRST(&dev->srqs)) != NULL) {
		eng_g->srqn_tbl[es->srq->srqn] = NULL;
		eng_srq_unlink(es);
		uroce_srq_destroy(es->srq);
		free(es);
	}
}

void
eng_srq_fini(struct eng *e)
{
	free(e->srqn_tbl);
	e->srqn_tbl = NULL;
}
