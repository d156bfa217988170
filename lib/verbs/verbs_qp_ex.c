/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The work-request API of QPs created with send_ops_flags
 * (ibv_wr_post(3)): ibv_wr_start(), one builder call per WR
 * (ibv_wr_send(), ibv_wr_rdma_write() ...) followed by its setters
 * (ibv_wr_set_sge(), ibv_wr_set_ud_addr() ...), then ibv_wr_complete().
 *
 * The builders fill a batch of struct ibv_send_wr, as many as the send
 * queue holds, and ibv_wr_complete() posts the batch with
 * uroce_qp_post_send(): one lock, one kick. The builders return nothing,
 * so the first error they meet (batch full, too many SGEs, inline data
 * too long) is kept and returned by ibv_wr_complete(), which then posts
 * nothing. Inline data is copied at the setter, as the man page allows
 * the buffer to be reused as soon as the setter returns.
 *
 * Single-threaded per QP between ibv_wr_start() and ibv_wr_complete(),
 * as ibv_wr_post(3) requires.
 */

#include <stdlib.h>
#include <string.h>

#include "uroce_engine.h"
#include "verbs_priv.h"

struct uroce_vwr {
	uint32_t cap;			/**< WRs a batch holds */
	uint32_t n;			/**< WRs built since wr_start */
	uint32_t max_sge;		/**< SGEs per WR */
	uint32_t max_inline;		/**< inline bytes per WR */
	int err;			/**< first builder error, an errno */
	struct ibv_send_wr *wrs;	/**< cap */
	struct ibv_sge *sges;		/**< cap * max_sge */
	uint8_t *inl;			/**< cap * max_inline */
};

static struct uroce_vqp *
vqp_of_ex(struct ibv_qp_ex *qpx)
{
	return (struct uroce_vqp *)qpx;
}

/* The WR being built, or NULL (and the error kept) when none can be. */
static struct ibv_send_wr *
wr_cur(struct ibv_qp_ex *qpx)
{
	struct uroce_vwr *b = vqp_of_ex(qpx)->wr;

	if (b->n == 0) {
		if (b->err == 0)
			b->err = EINVAL;	/* a setter before a builder */
		return NULL;
	}
	return &b->wrs[b->n - 1];
}

/* A builder: the next WR of the batch, with the QP's wr_id and flags. */
static struct ibv_send_wr *
wr_new(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op)
{
	struct uroce_vwr *b = vqp_of_ex(qpx)->wr;
	struct ibv_send_wr *wr;

	if (b->n == b->cap) {
		if (b->err == 0)
			b->err = ENOMEM;	/* as a full send queue */
		return NULL;
	}
	wr = &b->wrs[b->n++];
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = qpx->wr_id;
	wr->send_flags = qpx->wr_flags;
	wr->opcode = op;
	wr->sg_list = &b->sges[(size_t)(b->n - 1) * b->max_sge];
	return wr;
}

static void
wr_start(struct ibv_qp_ex *qpx)
{
	struct uroce_vwr *b = vqp_of_ex(qpx)->wr;

	b->n = 0;
	b->err = 0;
}

static void
wr_abort(struct ibv_qp_ex *qpx)
{
	wr_start(qpx);
}

static int
wr_complete(struct ibv_qp_ex *qpx)
{
	struct uroce_vqp *q = vqp_of_ex(qpx);
	struct uroce_vwr *b = q->wr;
	struct ibv_send_wr *bad;
	uint32_t i;
	int ret = b->err;

	if (ret == 0 && b->n > 0) {
		for (i = 0; i + 1 < b->n; i++)
			b->wrs[i].next = &b->wrs[i + 1];
		b->wrs[b->n - 1].next = NULL;
		ret = -uroce_qp_post_send(q->uqp, b->wrs, &bad);
	}
	wr_start(qpx);
	return ret;
}

/* ---- builders ---- */

static void
wr_send(struct ibv_qp_ex *qpx)
{
	wr_new(qpx, IBV_WR_SEND);
}

static void
wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct ibv_send_wr *wr = wr_new(qpx, IBV_WR_SEND_WITH_IMM);

	if (wr != NULL)
		wr->imm_data = imm;
}

static void
wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op, uint32_t rkey,
	uint64_t addr, __be32 imm)
{
	struct ibv_send_wr *wr = wr_new(qpx, op);

	if (wr == NULL)
		return;
	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = addr;
	wr->imm_data = imm;
}

static void
wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

static void
wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
		  __be32 imm)
{
	wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void
wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void
wr_atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op, uint32_t rkey,
	  uint64_t addr, uint64_t compare_add, uint64_t swap)
{
	struct ibv_send_wr *wr = wr_new(qpx, op);

	if (wr == NULL)
		return;
	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.remote_addr = addr;
	wr->wr.atomic.compare_add = compare_add;
	wr->wr.atomic.swap = swap;
}

static void
wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
		  uint64_t compare, uint64_t swap)
{
	wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}

static void
wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
		    uint64_t add)
{
	wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

/* Memory windows: a type 2 bind with the consumer's new key, a local
 * invalidate, a SEND that invalidates the peer's window. */
static void
wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
	   const struct ibv_mw_bind_info *bind_info)
{
	struct ibv_send_wr *wr = wr_new(qpx, IBV_WR_BIND_MW);

	if (wr == NULL)
		return;
	wr->bind_mw.mw = mw;
	wr->bind_mw.rkey = rkey;
	if (bind_info != NULL)
		wr->bind_mw.bind_info = *bind_info;
}

static void
wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct ibv_send_wr *wr = wr_new(qpx, IBV_WR_LOCAL_INV);

	if (wr != NULL)
		wr->invalidate_rkey = invalidate_rkey;
}

static void
wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct ibv_send_wr *wr = wr_new(qpx, IBV_WR_SEND_WITH_INV);

	if (wr != NULL)
		wr->invalidate_rkey = invalidate_rkey;
}

/* ---- setters of the current WR ---- */

static void
wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t qpn,
	       uint32_t qkey)
{
	struct ibv_send_wr *wr = wr_cur(qpx);

	if (wr == NULL)
		return;
	/* The transport takes the engine's address handle. */
	wr->wr.ud.ah = ah != NULL ?
		(struct ibv_ah *)((struct uroce_vah *)ah)->uah : NULL;
	wr->wr.ud.remote_qpn = qpn;
	wr->wr.ud.remote_qkey = qkey;
}

/* XRC_SEND: the SRQ of the target the WR goes to (the XRCETH). */
static void
wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct ibv_send_wr *wr = wr_cur(qpx);

	if (wr != NULL)
		wr->qp_type.xrc.remote_srqn = remote_srqn;
}

static void
wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_sge *sge)
{
	struct uroce_vwr *b = vqp_of_ex(qpx)->wr;
	struct ibv_send_wr *wr = wr_cur(qpx);

	if (wr == NULL)
		return;
	if (n > b->max_sge) {
		if (b->err == 0)
			b->err = EINVAL;
		return;
	}
	memcpy(wr->sg_list, sge, n * sizeof(*sge));
	wr->num_sge = (int)n;
}

static void
wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t len)
{
	const struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };

	wr_set_sge_list(qpx, 1, &sge);
}

/* Inline data lands in the WR's own buffer, posted as one SGE. */
static void
wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n,
			const struct ibv_data_buf *buf)
{
	struct uroce_vwr *b = vqp_of_ex(qpx)->wr;
	struct ibv_send_wr *wr = wr_cur(qpx);
	uint8_t *dst;
	size_t i, len = 0;

	if (wr == NULL)
		return;
	dst = &b->inl[(size_t)(b->n - 1) * b->max_inline];
	for (i = 0; i < n; i++) {
		if (buf[i].length > b->max_inline - len) {
			if (b->err == 0)
				b->err = EINVAL;
			return;
		}
		memcpy(dst + len, buf[i].addr, buf[i].length);
		len += buf[i].length;
	}
	wr->sg_list[0].addr = (uintptr_t)dst;
	wr->sg_list[0].length = (uint32_t)len;
	wr->sg_list[0].lkey = 0;
	wr->num_sge = len > 0 && b->max_sge > 0 ? 1 : 0;
	wr->send_flags |= IBV_SEND_INLINE;
}

static void
wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t len)
{
	const struct ibv_data_buf buf = { .addr = addr, .length = len };

	wr_set_inline_data_list(qpx, 1, &buf);
}

/* ---- set up ---- */

static void
qpx_set_ops(struct ibv_qp_ex *x, uint64_t ops)
{
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_xrc_srqn = wr_set_xrc_srqn;
	if (ops & IBV_QP_EX_WITH_SEND)
		x->wr_send = wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		x->wr_send_imm = wr_send_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		x->wr_rdma_write = wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		x->wr_rdma_write_imm = wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		x->wr_rdma_read = wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		x->wr_bind_mw = wr_bind_mw;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		x->wr_local_inv = wr_local_inv;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		x->wr_send_inv = wr_send_inv;
}

int
uroce_verbs_qpx_init(struct uroce_vqp *q, uint64_t send_ops_flags)
{
	const struct uroce_qp_cap *cap = &q->uqp->cap;
	struct uroce_vwr *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return ENOMEM;
	b->cap = cap->max_send_wr;
	/* One SGE at least: inline data is posted as one. */
	b->max_sge = cap->max_send_sge > 0 ? cap->max_send_sge : 1;
	b->max_inline = cap->max_inline_data;
	b->wrs = calloc(b->cap, sizeof(*b->wrs));
	b->sges = calloc((size_t)b->cap * b->max_sge, sizeof(*b->sges));
	b->inl = b->max_inline > 0 ?
		calloc(b->cap, b->max_inline) : NULL;
	if (b->wrs == NULL || b->sges == NULL ||
	    (b->max_inline > 0 && b->inl == NULL)) {
		q->wr = b;
		uroce_verbs_qpx_fini(q);
		return ENOMEM;
	}
	q->wr = b;
	q->is_ex = true;
	q->qpx.comp_mask = 0;
	qpx_set_ops(&q->qpx, send_ops_flags);
	return 0;
}

void
uroce_verbs_qpx_fini(struct uroce_vqp *q)
{
	struct uroce_vwr *b = q->wr;

	if (b == NULL)
		return;
	free(b->wrs);
	free(b->sges);
	free(b->inl);
	free(b);
	q->wr = NULL;
}
