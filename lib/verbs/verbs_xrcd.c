/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * XRC (IBTA XRC annex A14): ibv_open_xrcd / ibv_close_xrcd, XRC_RECV QPs
 * (created in a domain, shared with ibv_open_qp).
 *
 * Domains. Each ibv_open_xrcd() returns a handle of its own. With fd -1
 * (and O_CREAT) the handle has a private domain; with a file, every
 * handle of the same inode on the same device shares one engine domain,
 * as the kernel's table of XRCDs by inode does within a process:
 *  - O_CREAT creates the domain when the inode has none; without it a
 *    missing domain is EAGAIN (the kernel's "need O_CREAT");
 *  - O_CREAT | O_EXCL fails with EINVAL when the inode has one already;
 *  - a bad fd is EBADF; flags other than O_CREAT and O_EXCL, fd -1 without
 *    O_CREAT, or a comp_mask without FD and OFLAGS are EINVAL; comp_mask
 *    bits beyond them EOPNOTSUPP (rdma-core's command checks).
 * ibv_close_xrcd() drops its handle; closing the last handle of a domain
 * still used by an XRC_RECV QP or an XRC SRQ fails with EBUSY and changes
 * nothing (ibv_open_xrcd(3), NOTES).
 *
 * Target QPs. ibv_open_qp() gives another handle on an XRC_RECV QP of the
 * domain; ibv_destroy_qp() of any handle closes that handle, and the QP
 * goes with its last one (ibv_open_qp(3)). Async events of the QP are
 * reported on the handle that created it, kept until the last handle goes.
 */

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "uroce_engine.h"
#include "verbs_priv.h"

/* One engine domain and the handles open on it. */
struct uroce_vxrcd_dom {
	struct uroce_xrcd *ux;
	struct uroce_dev *dev;
	bool has_inode;
	dev_t st_dev;
	ino_t st_ino;
	unsigned int handles;
	TAILQ_ENTRY(uroce_vxrcd_dom) link;
};

/* Domains and target QP handles: one lock for the process (control path). */
static pthread_mutex_t xrc_lock = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, uroce_vxrcd_dom) xrc_doms = TAILQ_HEAD_INITIALIZER(xrc_doms);

struct uroce_xrcd *
uroce_verbs_xrcd_engine(struct ibv_xrcd *xrcd)
{
	return ((struct uroce_vxrcd *)xrcd)->dom->ux;
}

/* xrc_lock held. The domain of an inode on dev, or NULL. */
static struct uroce_vxrcd_dom *
dom_find(const struct uroce_dev *dev, const struct stat *st)
{
	struct uroce_vxrcd_dom *d;

	TAILQ_FOREACH(d, &xrc_doms, link)
		if (d->has_inode && d->dev == dev && d->st_dev == st->st_dev &&
		    d->st_ino == st->st_ino)
			return d;
	return NULL;
}

/* xrc_lock held. A new domain (of the inode st, or private with NULL). */
static int
dom_new(struct uroce_dev *dev, const struct stat *st,
	struct uroce_vxrcd_dom **out)
{
	struct uroce_vxrcd_dom *d = calloc(1, sizeof(*d));
	int ret;

	if (d == NULL)
		return ENOMEM;
	ret = uroce_xrcd_alloc(dev, &d->ux);
	if (ret < 0) {
		free(d);
		return -ret;
	}
	d->dev = dev;
	if (st != NULL) {
		d->has_inode = true;
		d->st_dev = st->st_dev;
		d->st_ino = st->st_ino;
	}
	TAILQ_INSERT_TAIL(&xrc_doms, d, link);
	*out = d;
	return 0;
}

static int
xrcd_attr_check(const struct ibv_xrcd_init_attr *a)
{
	const uint32_t need = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;

	if (a->comp_mask & ~(uint32_t)(IBV_XRCD_INIT_ATTR_RESERVED - 1))
		return EOPNOTSUPP;
	if ((a->comp_mask & need) != need ||
	    (a->oflags & ~(O_CREAT | O_EXCL)) != 0 ||
	    (a->fd == -1 && !(a->oflags & O_CREAT)))
		return EINVAL;
	return 0;
}

/* xrc_lock held. The domain the attributes name, created if they say so. */
static int
dom_open(struct uroce_dev *dev, const struct ibv_xrcd_init_attr *a,
	 struct uroce_vxrcd_dom **out)
{
	struct stat st;

	if (a->fd == -1)
		return dom_new(dev, NULL, out);
	if (fstat(a->fd, &st) != 0)
		return EBADF;
	*out = dom_find(dev, &st);
	if (*out != NULL)
		return (a->oflags & O_EXCL) ? EINVAL : 0;
	if (!(a->oflags & O_CREAT))
		return EAGAIN;
	return dom_new(dev, &st, out);
}

struct ibv_xrcd *
uroce_verbs_open_xrcd(struct ibv_context *context,
		      struct ibv_xrcd_init_attr *attr)
{
	struct uroce_vxrcd_dom *d;
	struct uroce_vxrcd *x;
	int ret;

	if (attr == NULL)
		return uroce_verbs_null(EINVAL);
	ret = xrcd_attr_check(attr);
	if (ret != 0)
		return uroce_verbs_null(ret);
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return uroce_verbs_null(ENOMEM);
	pthread_mutex_lock(&xrc_lock);
	ret = dom_open(uroce_vctx_of(context)->dev, attr, &d);
	if (ret == 0)
		d->handles++;
	pthread_mutex_unlock(&xrc_lock);
	if (ret != 0) {
		free(x);
		return uroce_verbs_null(ret);
	}
	x->xrcd.context = context;
	x->dom = d;
	return &x->xrcd;
}

int
uroce_verbs_close_xrcd(struct ibv_xrcd *xrcd)
{
	struct uroce_vxrcd *x = (struct uroce_vxrcd *)xrcd;
	struct uroce_vxrcd_dom *d;
	int ret = 0;

	if (xrcd == NULL)
		return EINVAL;
	d = x->dom;
	pthread_mutex_lock(&xrc_lock);
	if (d->handles == 1) {
		ret = -uroce_xrcd_free(d->ux);
		if (ret == 0) {
			TAILQ_REMOVE(&xrc_doms, d, link);
			free(d);
		}
	} else {
		d->handles--;
	}
	pthread_mutex_unlock(&xrc_lock);
	if (ret == 0)
		free(x);
	return ret;
}

/* ------------------------------------------------------------------------
 * Target QPs shared between handles.
 */
/*
 * ibv_destroy_qp() of an XRC_RECV handle: the handle goes; the QP with the
 * last one. Under xrc_lock throughout, so that ibv_open_qp() never finds
 * a QP on its way out.
 */
int
uroce_verbs_xrc_qp_destroy(struct uroce_vqp *q)
{
	struct uroce_vqp *base = q->xrc_base;
	bool last = false;
	int ret = 0;

	pthread_mutex_lock(&xrc_lock);
	if (base->xrc_handles > 1) {
		base->xrc_handles--;
	} else {
		ret = uroce_verbs_qp_destroy(base);
		last = ret == 0;
	}
	pthread_mutex_unlock(&xrc_lock);
	if (ret != 0)
		return ret;
	/* The creator's handle stays while others use its events. */
	if (q != base)
		uroce_verbs_qp_free(q);
	if (last)
		uroce_verbs_qp_free(base);
	return 0;
}

struct ibv_qp *
uroce_verbs_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr)
{
	const uint32_t need = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			      IBV_QP_OPEN_ATTR_TYPE;
	struct uroce_vqp *q, *base = NULL;
	struct uroce_qp *uqp;
	int ret;

	if (attr == NULL)
		return uroce_verbs_null(EINVAL);
	if (attr->comp_mask & ~(uint32_t)(IBV_QP_OPEN_ATTR_RESERVED - 1))
		return uroce_verbs_null(EOPNOTSUPP);
	if ((attr->comp_mask & need) != need || attr->xrcd == NULL ||
	    attr->xrcd->context->device != context->device ||
	    attr->qp_type != IBV_QPT_XRC_RECV)
		return uroce_verbs_null(EINVAL);
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return uroce_verbs_null(ENOMEM);
	pthread_mutex_lock(&xrc_lock);
	ret = uroce_xrcd_qp_find(uroce_verbs_xrcd_engine(attr->xrcd),
				 attr->qp_num, &uqp);
	if (ret == 0) {
		base = uqp->user;
		base->xrc_handles++;
	}
	pthread_mutex_unlock(&xrc_lock);
	if (ret < 0) {
		free(q);
		return uroce_verbs_null(-ret);
	}
	q->uqp = uqp;
	q->xrc_base = base;
	uroce_verbs_qp_fill(q, context, NULL, attr->qp_context);
	q->qp.qp_type = IBV_QPT_XRC_RECV;
	q->qp.state = base->qp.state;
	return &q->qp;
}
