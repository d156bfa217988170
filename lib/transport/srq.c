/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Shared receive queues: create per type, post, take, resize and the limit
 * event (the rules and the locking are in uroce_srq.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "qp_priv.h"
#include "srq_priv.h"

#define SRQ_LOG(lvl, srq, fmt, ...)					\
	rte_log(RTE_LOG_ ## lvl, uroce_transport_logtype,		\
		"srq %u (%s): " fmt "\n", (srq)->srqn, (srq)->ops->name,	\
		##__VA_ARGS__)

const struct uroce_srq_type uroce_srq_type_basic = {
	.name = "basic",
};

/*
 * The rules of each srq_type. XRC (IBV_SRQT_XRC) and tag matching
 * (IBV_SRQT_TM) put their struct uroce_srq_type here; a NULL entry is a
 * type we do not offer (-EOPNOTSUPP).
 */
static const struct uroce_srq_type *const srq_types[] = {
	[IBV_SRQT_BASIC] = &uroce_srq_type_basic,

	[IBV_SRQT_XRC] = &uroce_srq_type_xrc,

	[IBV_SRQT_TM] = &uroce_srq_type_tm,
};

static uint32_t
srq_slot_size(uint32_t max_sge)
{
	return sizeof(struct uroce_recv_wqe) + max_sge * sizeof(struct ibv_sge);
}

/* Cache-line aligned, zeroed ring memory for nb slots from a
 * (uroce_ring_mem.h), or NULL. */
static void *
srq_ring_mem(const struct uroce_ring_alloc *a, uint32_t nb, uint32_t slot_size,
	     bool *ext)
{
	return uroce_ring_mem_get(a, uroce_ring_mem_size(nb, slot_size),
				  UROCE_RING_SRQ, ext);
}

static int
srq_check(const struct uroce_qp_env *env, const struct uroce_srq_init *init,
	  const struct uroce_srq_type **type)
{
	const struct uroce_srq_type *t;

	if ((unsigned int)init->type >= RTE_DIM(srq_types) ||
	    srq_types[init->type] == NULL)
		return -EOPNOTSUPP;
	t = srq_types[init->type];
	/* Ranges of ibv_modify_srq's notes: max_wr 1..max_srq_wr, max_sge
	 * 1..max_srq_sge; ibv_create_srq(3) fails above the device's. */
	if (init->pd == NULL || init->max_wr == 0 ||
	    init->max_wr > env->max_srq_wr || init->max_sge == 0 ||
	    init->max_sge > env->max_srq_sge)
		return -EINVAL;
	*type = t;
	return t->check != NULL ? t->check(env, init) : 0;
}

int
uroce_srq_create(const struct uroce_qp_env *env,
		 const struct uroce_srq_init *init, struct uroce_srq **out)
{
	const struct uroce_srq_type *type = NULL;
	struct uroce_srq *srq = NULL;
	uint32_t nb;
	int ret;

	if (env == NULL || init == NULL || out == NULL)
		return -EINVAL;
	ret = srq_check(env, init, &type);
	if (ret < 0)
		return ret;
	if (posix_memalign((void **)&srq, RTE_CACHE_LINE_SIZE,
			   RTE_ALIGN_CEIL(sizeof(*srq), RTE_CACHE_LINE_SIZE)) != 0)
		return -ENOMEM;
	memset(srq, 0, sizeof(*srq));
	nb = rte_align32pow2(init->max_wr);
	srq->env = env;
	srq->ops = type;
	srq->type = init->type;
	srq->pd = init->pd;
	srq->cq = init->cq;
	srq->xrcd = init->xrcd;
	srq->srqn = init->srqn;
	srq->max_sge = init->max_sge;
	srq->slot_size = srq_slot_size(init->max_sge);
	srq->max_wr = nb;
	rte_spinlock_init(&srq->prod_lock);
	rte_spinlock_init(&srq->cons_lock);
	if (init->alloc != NULL)
		srq->alloc = *init->alloc;
	srq->mem = srq_ring_mem(&srq->alloc, nb, srq->slot_size, &srq->mem_ext);
	if (srq->mem == NULL) {
		free(srq);
		return -ENOMEM;
	}
	uroce_ring_init(&srq->ring, srq->mem, nb, srq->slot_size);
	ret = type->init != NULL ? type->init(srq, init) : 0;
	if (ret < 0) {
		if (type->fini != NULL)
			type->fini(srq);
		uroce_ring_mem_put(&srq->alloc, srq->mem, UROCE_RING_SRQ,
				   srq->mem_ext);
		free(srq);
		return ret;
	}
	*out = srq;
	return 0;
}

void
uroce_srq_destroy(struct uroce_srq *srq)
{
	if (srq == NULL)
		return;
	if (srq->ops->fini != NULL)
		srq->ops->fini(srq);
	uroce_ring_mem_put(&srq->alloc, srq->mem, UROCE_RING_SRQ, srq->mem_ext);
	free(srq);
}

int
uroce_srq_post_recv(struct uroce_srq *srq, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	uint32_t len;
	int ret = 0;

	rte_spinlock_lock(&srq->prod_lock);
	for (; wr != NULL; wr = wr->next) {
		ret = uroce_recv_wr_check(wr, srq->max_sge, &len);
		if (ret == 0 && uroce_ring_prod_avail(&srq->ring, 1) == 0)
			ret = -ENOMEM;
		if (ret < 0)
			break;
		uroce_recv_wqe_fill(uroce_ring_prod_slot(&srq->ring, 0), wr, len);
		uroce_ring_prod_commit(&srq->ring, 1);
	}
	uroce_spin_unlock(&srq->prod_lock);
	if (ret < 0 && bad_wr != NULL)
		*bad_wr = wr;
	return ret;
}

/* ---------------------------------------------------------------------------
 * The limit.
 */
static void
srq_limit_event(struct uroce_srq *srq)
{
	const struct uroce_qp_env_ops *ops = srq->env->ops;

	SRQ_LOG(DEBUG, srq, "limit reached");
	if (ops != NULL && ops->async_event != NULL)
		ops->async_event(srq->env->ctx, IBV_EVENT_SRQ_LIMIT_REACHED, srq);
}

/* cons_lock held. Fewer WQEs than the armed limit: disarm, and say so
 * (the caller raises the event once the locks are dropped). */
static bool
srq_limit_crossed(struct uroce_srq *srq)
{
	uint32_t head = __atomic_load_n(&srq->ring.head, __ATOMIC_ACQUIRE);

	/* ACQUIRE: the producer's latest head, so the count is not stale. */
	if (srq->limit == 0 || head - srq->ring.tail >= srq->limit)
		return false;
	srq->limit = 0;
	srq->limit_events++;
	return true;
}

bool
uroce_srq_take(struct uroce_srq *srq, struct uroce_recv_wqe *dst)
{
	const struct uroce_recv_wqe *w;
	bool fire;

	rte_spinlock_lock(&srq->cons_lock);
	if (uroce_ring_cons_avail(&srq->ring, 1) == 0) {
		rte_spinlock_unlock(&srq->cons_lock);
		return false;
	}
	w = uroce_ring_cons_slot(&srq->ring, 0);
	/* The SGEs it has, not the slot's max_sge. */
	memcpy(dst, w, sizeof(*w) + w->num_sge * sizeof(w->sge[0]));
	uroce_ring_cons_release(&srq->ring, 1);
	srq->taken++;
	fire = srq_limit_crossed(srq);
	rte_spinlock_unlock(&srq->cons_lock);
	if (fire)
		srq_limit_event(srq);
	return true;
}

/* ---------------------------------------------------------------------------
 * Modify and query.
 */
#define SRQ_MASK_ALL	(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)

/* Both locks held: copy the outstanding WQEs into mem (nb slots), in order. */
static void
srq_ring_swap(struct uroce_srq *srq, void *mem, uint32_t nb)
{
	struct uroce_ring old = srq->ring;
	uint32_t n = old.head - old.tail, i;

	uroce_ring_init(&srq->ring, mem, nb, srq->slot_size);
	for (i = 0; i < n; i++)
		memcpy(uroce_ring_prod_slot(&srq->ring, i),
		       uroce_ring_slot_at(&old, old.tail + i), srq->slot_size);
	uroce_ring_prod_commit(&srq->ring, n);
	srq->max_wr = nb;
}

/* Checks that need no lock (ibv_modify_srq's notes give the ranges). */
static int
srq_modify_check(const struct uroce_srq *srq, const struct ibv_srq_attr *attr,
		 int mask, uint32_t *nb)
{
	uint32_t cap = srq->max_wr;

	if (mask & ~SRQ_MASK_ALL)
		return -EINVAL;
	if (mask & IBV_SRQ_MAX_WR) {
		if (attr->max_wr == 0 || attr->max_wr > srq->env->max_srq_wr)
			return -EINVAL;
		cap = rte_align32pow2(attr->max_wr);
	}
	if ((mask & IBV_SRQ_LIMIT) && attr->srq_limit > cap)
		return -EINVAL;
	*nb = cap;
	return 0;
}

int
uroce_srq_modify(struct uroce_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	void *mem = NULL, *old = NULL;
	bool fire = false, ext = false, old_ext = false;
	uint32_t nb;
	int ret;

	if (srq == NULL || attr == NULL)
		return -EINVAL;
	ret = srq_modify_check(srq, attr, mask, &nb);
	if (ret < 0)
		return ret;
	if ((mask & IBV_SRQ_MAX_WR) && nb != srq->max_wr) {
		/* The default allocator, as a CQ's resize (uroce_ring_mem.h). */
		mem = srq_ring_mem(NULL, nb, srq->slot_size, &ext);
		if (mem == NULL)
			return -ENOMEM;
	}
	rte_spinlock_lock(&srq->prod_lock);
	rte_spinlock_lock(&srq->cons_lock);
	/* Not below what is outstanding now (the verb's EINVAL). */
	if ((mask & IBV_SRQ_MAX_WR) &&
	    attr->max_wr < srq->ring.head - srq->ring.tail) {
		ret = -EINVAL;
	} else {
		if (mem != NULL) {
			old = srq->mem;
			old_ext = srq->mem_ext;
			srq_ring_swap(srq, mem, nb);
			srq->mem = mem;
			srq->mem_ext = ext;
			mem = NULL;
		}
		if (mask & IBV_SRQ_LIMIT) {
			/* Arming above the count raises the event at once. */
			srq->limit = attr->srq_limit;
			fire = srq_limit_crossed(srq);
		}
	}
	rte_spinlock_unlock(&srq->cons_lock);
	rte_spinlock_unlock(&srq->prod_lock);
	free(mem);
	uroce_ring_mem_put(&srq->alloc, old, UROCE_RING_SRQ, old_ext);
	if (ret < 0)
		return ret;
	if (mask & IBV_SRQ_MAX_WR) {
		attr->max_wr = srq->max_wr;
		attr->max_sge = srq->max_sge;
	}
	if (fire)
		srq_limit_event(srq);
	return 0;
}

void
uroce_srq_query(struct uroce_srq *srq, struct ibv_srq_attr *attr)
{
	rte_spinlock_lock(&srq->cons_lock);
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	rte_spinlock_unlock(&srq->cons_lock);
}

uint32_t
uroce_srq_count(struct uroce_srq *srq)
{
	uint32_t n;

	rte_spinlock_lock(&srq->cons_lock);
	n = uroce_ring_count(&srq->ring);
	rte_spinlock_unlock(&srq->cons_lock);
	return n;
}
