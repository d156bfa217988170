/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * XRC domains (IBTA XRC annex A14; ibv_open_xrcd(3)): the engine's object
 * behind an ibv_xrcd, the owner lcore its target QPs share, and the lookup
 * of a target QP by number for ibv_open_qp(3). Sharing a domain through a
 * file is the verbs layer's (one engine domain per inode).
 */
#include <errno.h>
#include <stdlib.h>

#include "engine_priv.h"

/* Most XRC domains of a device. */
#define ENG_MAX_XRCD	(1u << 12)

int
uroce_xrcd_alloc(struct uroce_dev *dev, struct uroce_xrcd **out)
{
	struct uroce_xrcd *x;
	int ret = -ENOMEM;

	if (dev == NULL || out == NULL)
		return -EINVAL;
	pthread_mutex_lock(&eng_g->lock);
	if (dev->n_xrcd < ENG_MAX_XRCD && (x = calloc(1, sizeof(*x))) != NULL) {
		x->dev = dev;
		x->owner = -1;
		TAILQ_INSERT_TAIL(&dev->xrcds, x, link);
		dev->n_xrcd++;
		*out = x;
		ret = 0;
	}
	pthread_mutex_unlock(&eng_g->lock);
	return ret;
}

int
uroce_xrcd_free(struct uroce_xrcd *xrcd)
{
	int ret = -EBUSY;

	if (xrcd == NULL)
		return -EINVAL;
	pthread_mutex_lock(&eng_g->lock);
	if (xrcd->refs == 0) {
		TAILQ_REMOVE(&xrcd->dev->xrcds, xrcd, link);
		xrcd->dev->n_xrcd--;
		free(xrcd);
		ret = 0;
	}
	pthread_mutex_unlock(&eng_g->lock);
	return ret;
}

struct uroce_dev *
uroce_xrcd_dev(const struct uroce_xrcd *xrcd)
{
	return xrcd->dev;
}

/* Engine lock. The lcore of the domain's target QPs and SRQ CQs: the
 * first user picks it round-robin, the others follow. */
int
eng_xrcd_owner(struct uroce_xrcd *xrcd)
{
	if (xrcd->owner < 0 || xrcd->refs == 0)
		xrcd->owner = (int)(eng_g->rr++ % eng_g->nb_ctx);
	return xrcd->owner;
}

int
uroce_xrcd_qp_find(struct uroce_xrcd *xrcd, uint32_t qpn,
		   struct uroce_qp **out)
{
	struct eng_qp *eq;
	int ret = -EINVAL;

	if (xrcd == NULL || out == NULL)
		return -EINVAL;
	pthread_mutex_lock(&eng_g->lock);
	eq = qpn <= UROCE_QPN_MASK ? eng_qpn_lookup(qpn) : NULL;
	/* ibv_open_qp(3): only a QP of this domain, of the type asked. */
	if (eq != NULL && eq->xrcd == xrcd) {
		*out = eq->qp;
		ret = 0;
	}
	pthread_mutex_unlock(&eng_g->lock);
	return ret;
}

/* Lcores stopped, QPs freed: free the domains the application left. */
void
eng_xrcd_close_all(struct uroce_dev *dev)
{
	struct uroce_xrcd *x;

	while ((x = TAILQ_FIRST(&dev->xrcds)) != NULL) {
		TAILQ_REMOVE(&dev->xrcds, x, link);
		free(x);
	}
	dev->n_xrcd = 0;
}

/*
 * Engine lock. Whether an XRC SRQ with this CQ may join the domain: its
 * CQ gets completions from the domain's target QPs, so it must be free or
 * bound to the domain's lcore already (a CQ has one writer). -EINVAL with
 * a log line otherwise.
 */
int
eng_xrcd_srq_check(const struct uroce_xrcd *xrcd, const struct uroce_dev *dev,
		   const struct eng_cq *cq)
{
	if (xrcd == NULL || cq == NULL || xrcd->dev != dev)
		return -EINVAL;
	if (cq->owner >= 0 && xrcd->refs > 0 && cq->owner != xrcd->owner) {
		ENG_LOG(NOTICE,
			"%s: create_srq: the CQ is on engine lcore %d, the XRC domain's QPs on %d\n",
			dev->name, cq->owner, xrcd->owner);
		return -EINVAL;
	}
	return 0;
}

/* Engine lock. An XRC SRQ joins (dir 1) or leaves (-1) its domain; joining
 * binds its CQ to the domain's lcore (the CQ's, if the domain has none). */
void
eng_xrcd_srq_ref(struct uroce_xrcd *xrcd, struct eng_cq *cq, int dir)
{
	if (dir > 0) {
		if (xrcd->refs == 0 && cq->owner >= 0)
			xrcd->owner = cq->owner;
		cq->owner = eng_xrcd_owner(xrcd);
	}
	xrcd->refs += (uint32_t)dir;
}
