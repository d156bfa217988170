/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Protection domains (ibv_alloc_pd(3)): an engine PD behind each ibv_pd.
 *
 * Thread domains and parent domains (ibv_alloc_td(3),
 * ibv_alloc_parent_domain(3)). A parent domain is a uroce_vpd on its PD's
 * engine PD, so that every verb taking a PD takes it as it is (MRs,
 * windows, AHs, QPs, SRQs land in that PD). What it adds:
 *  - its allocators: the rings of a QP (send and receive queue), a CQ
 *    (ibv_create_cq_ex() with IBV_CQ_INIT_ATTR_MASK_PD) and an SRQ made on
 *    it come from the application's alloc, which may answer
 *    IBV_ALLOCATOR_USE_DEFAULT; resource_type is the ring's kind
 *    (enum uroce_ring_kind: 1 send queue, 2 receive queue, 3 CQ, 4 SRQ;
 *    no driver id in the upper 32 bits). Frees reach the application on
 *    the thread of the verb that gave the memory up (uroce_vbufs).
 *  - a thread domain: accepted and held. Every object is safe for
 *    concurrent use already; a thread domain changes no locking here.
 * ibv_dealloc_pd() of a parent domain is EBUSY while a QP, CQ or SRQ made
 * on it lives (they name it, and hold its allocator); of a PD, while a parent domain
 * is on it; ibv_dealloc_td() while a parent domain holds it.
 */

#include <stdlib.h>
#include <string.h>

#include "uroce_engine.h"
#include "verbs_priv.h"

struct uroce_vparent {
	struct uroce_vpd vpd;		/**< what the application gets */
	struct uroce_vpd *base;		/**< the PD it extends */
	struct uroce_vtd *td;		/**< NULL: none */
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
	uint32_t users;			/**< objects holding its allocator */
};

struct uroce_vtd {
	struct ibv_td td;
	uint32_t users;			/**< parent domains holding it */
};

#define PARENT_MASK	(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |	\
			 IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)

struct ibv_pd *
ibv_alloc_pd(struct ibv_context *context)
{
	struct uroce_vpd *pd;
	int ret;

	if (context == NULL)
		return uroce_verbs_null(EINVAL);
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL)
		return uroce_verbs_null(ENOMEM);
	ret = uroce_pd_alloc(uroce_vctx_of(context)->dev, &pd->upd);
	if (ret < 0) {
		free(pd);
		return uroce_verbs_null(-ret);
	}
	pd->pd.context = context;
	pd->pd.handle = uroce_verbs_handle_add(context, UROCE_VH_PD, pd->upd);
	return &pd->pd;
}

/* A parent domain goes when no object uses its allocator. Context mutex. */
static int
parent_free(struct uroce_vparent *p)
{
	if (__atomic_load_n(&p->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	p->base->parents--;
	if (p->td != NULL)
		p->td->users--;
	free(p);
	return 0;
}

/* "0 on success, or the value of errno": EBUSY while an MR, AH or QP
 * uses the PD, as the kernel refuses it, or a parent domain is on it. */
int
ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct uroce_vpd *p = (struct uroce_vpd *)pd;
	struct ibv_context *ctx;
	int ret;

	if (pd == NULL)
		return EINVAL;
	ctx = pd->context;
	pthread_mutex_lock(&ctx->mutex);
	if (p->parent != NULL) {
		ret = parent_free(p->parent);	/* p with it */
	} else {
		/* An imported PD's too: the object goes (verbs_import.c). */
		ret = p->parents != 0 ? EBUSY : -uroce_pd_free(p->upd);
		if (ret == 0) {
			uroce_verbs_handle_del(pd->handle);
			free(p);
		}
	}
	pthread_mutex_unlock(&ctx->mutex);
	return ret;
}

bool
uroce_verbs_pd_is_parent(const struct ibv_pd *pd)
{
	return ((const struct uroce_vpd *)pd)->parent != NULL;
}

/* ------------------------------------------------------------------------
 * Thread domains.
 */
struct ibv_td *
uroce_verbs_alloc_td(struct ibv_context *context,
		     struct ibv_td_init_attr *init_attr)
{
	struct uroce_vtd *td;

	if (init_attr == NULL || init_attr->comp_mask != 0)
		return uroce_verbs_null(EINVAL);
	td = calloc(1, sizeof(*td));
	if (td == NULL)
		return uroce_verbs_null(ENOMEM);
	td->td.context = context;
	return &td->td;
}

/* "0 on success, or the value of errno": EBUSY while a parent domain
 * holds it. */
int
uroce_verbs_dealloc_td(struct ibv_td *ibtd)
{
	struct uroce_vtd *td = (struct uroce_vtd *)ibtd;
	int ret = 0;

	pthread_mutex_lock(&ibtd->context->mutex);
	if (td->users != 0)
		ret = EBUSY;
	pthread_mutex_unlock(&ibtd->context->mutex);
	if (ret == 0)
		free(td);
	return ret;
}

/* ------------------------------------------------------------------------
 * Parent domains.
 */

/* EINVAL: no PD, a parent domain as PD, a PD or thread domain of another
 * context, ALLOCATORS without both functions; unknown comp_mask bits. */
static int
parent_check(struct ibv_context *context,
	     const struct ibv_parent_domain_init_attr *a)
{
	if (a == NULL || a->pd == NULL || a->pd->context != context ||
	    uroce_verbs_pd_is_parent(a->pd) ||
	    (a->td != NULL && a->td->context != context) ||
	    (a->comp_mask & ~(uint32_t)PARENT_MASK))
		return EINVAL;
	if ((a->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	    (a->alloc == NULL || a->free == NULL))
		return EINVAL;
	return 0;
}

struct ibv_pd *
uroce_verbs_alloc_parent_domain(struct ibv_context *context,
				struct ibv_parent_domain_init_attr *attr)
{
	struct uroce_vparent *p;
	int ret = parent_check(context, attr);

	if (ret != 0)
		return uroce_verbs_null(ret);
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return uroce_verbs_null(ENOMEM);
	p->base = (struct uroce_vpd *)attr->pd;
	p->td = (struct uroce_vtd *)attr->td;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		p->alloc = attr->alloc;
		p->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		p->pd_context = attr->pd_context;
	p->vpd.upd = p->base->upd;
	p->vpd.parent = p;
	p->vpd.pd.context = context;
	p->vpd.pd.handle = p->base->pd.handle;
	pthread_mutex_lock(&context->mutex);
	p->base->parents++;
	if (p->td != NULL)
		p->td->users++;
	pthread_mutex_unlock(&context->mutex);
	return &p->vpd.pd;
}

/* ------------------------------------------------------------------------
 * Rings from a parent domain's allocator.
 */
static int
bufs_alloc(void *arg, size_t size, size_t align, enum uroce_ring_kind kind,
	   void **out)
{
	struct uroce_vbufs *b = arg;
	struct uroce_vparent *p = b->parent;
	void *m = p->alloc(&p->vpd.pd, p->pd_context, size, align, kind);

	if (m == IBV_ALLOCATOR_USE_DEFAULT)
		return 1;
	if (m == NULL)
		return -ENOMEM;
	*out = m;
	return 0;
}

/* Any thread, engine lcores included: queued for uroce_verbs_bufs_flush(). */
static void
bufs_free(void *arg, void *ptr, enum uroce_ring_kind kind)
{
	struct uroce_vbufs *b = arg;
	struct uroce_vparent *p = b->parent;

	if (b->n == UROCE_VBUFS_MAX) {	/* not reached: flushed per verb */
		p->free(&p->vpd.pd, p->pd_context, ptr, kind);
		return;
	}
	b->freed[b->n].ptr = ptr;
	b->freed[b->n].type = kind;
	b->n++;
}

const struct uroce_ring_alloc *
uroce_verbs_bufs_init(struct uroce_vbufs *b, struct ibv_pd *pd)
{
	struct uroce_vparent *p;

	memset(b, 0, sizeof(*b));
	if (pd == NULL || !uroce_verbs_pd_is_parent(pd))
		return NULL;
	/* Held whether or not it has allocators: the object names it. */
	p = ((struct uroce_vpd *)pd)->parent;
	__atomic_fetch_add(&p->users, 1, __ATOMIC_RELAXED);
	b->parent = p;
	if (p->alloc == NULL)
		return NULL;
	b->alloc.alloc = bufs_alloc;
	b->alloc.free = bufs_free;
	b->alloc.arg = b;
	return &b->alloc;
}

void
uroce_verbs_bufs_flush(struct uroce_vbufs *b)
{
	struct uroce_vparent *p = b->parent;
	unsigned int i;

	for (i = 0; p != NULL && i < b->n; i++)
		p->free(&p->vpd.pd, p->pd_context, b->freed[i].ptr,
			b->freed[i].type);
	b->n = 0;
}

void
uroce_verbs_bufs_fini(struct uroce_vbufs *b)
{
	uroce_verbs_bufs_flush(b);
	if (b->parent != NULL)
		__atomic_fetch_sub(&b->parent->users, 1, __ATOMIC_RELEASE);
	b->parent = NULL;
}
