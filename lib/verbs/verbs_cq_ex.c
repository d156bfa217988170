/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Extended CQs (ibv_create_cq_ex(3)) and their polling API:
 * ibv_start_poll() / ibv_next_poll() / ibv_end_poll() and the
 * ibv_wc_read_*() accessors.
 *
 * The CQ is the same engine CQ as ibv_create_cq()'s, whose entries are
 * struct ibv_wc (lib/transport/include/uroce_cq.h): start_poll and next_poll move
 * the oldest entry into the CQ's "current" completion (one 48-byte copy,
 * as ibv_poll_cq() does) and the accessors read its fields. The entry
 * leaves the ring at once, so end_poll has nothing to release, and
 * ibv_poll_cq() on ibv_cq_ex_to_cq() of the same CQ keeps working between
 * two batches. Under inline progress ([eal] lcores = 0) start_poll runs
 * an iteration of the stack first, as ibv_poll_cq() does (verbs_cq.c);
 * next_poll reads on in the batch. Like ibv_poll_cq(), a CQ is polled by one thread at a time
 * (the ring has a single consumer): IBV_CREATE_CQ_ATTR_SINGLE_THREADED is
 * then what we always are, and is accepted.
 *
 * Completion timestamps: a CQ asked for IBV_WC_EX_WITH_COMPLETION_TIMESTAMP
 * or _WALLCLOCK is an engine CQ with UROCE_CQ_TIMESTAMP, whose entries
 * carry the TSC read as the engine queued them (uroce_cq.h). The TSC is
 * the device's clock: hca_core_clock is its rate in kHz,
 * completion_timestamp_mask all 64 bits, ibv_query_rt_values_ex() reads
 * it (verbs_context.c). ibv_wc_read_completion_ts() gives the TSC value,
 * ibv_wc_read_completion_wallclock_ns() that instant on CLOCK_REALTIME,
 * converted as it is read (now, less the TSC ticks since, in ns).
 *
 * What the completion entry does not carry is refused with EOPNOTSUPP at
 * creation, as rdma-core's providers refuse the wc_flags their hardware
 * lacks (rxe: anything beyond IBV_WC_STANDARD_FLAGS): CVLAN, flow tags
 * (no flow tag actions). Tag matching info (IBV_WC_EX_WITH_TM_INFO) is
 * carried by the IBV_WC_TM_RECV entries of TM-SRQs in fields RC does not
 * use (lib/transport/include/uroce_tm.h); ibv_wc_read_tm_info() unpacks it.
 * Accessors are set for the wc_flags asked for only, as the providers do;
 * the others stay NULL.
 */

#include <stddef.h>

#include "uroce_engine.h"
#include "uroce_tm.h"
#include "verbs_priv.h"

/* The completion clock's two views. */
#define CQX_WC_TS	((uint64_t)IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |	\
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
/* The wc_flags whose fields an engine completion carries. */
#define CQX_WC_FLAGS	((uint64_t)IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO | \
			 CQX_WC_TS)
/* ibv_create_cq_ex(3): the comp_mask bits rdma-core 44 knows. */
#define CQX_COMP_MASK	(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD)
/* Creation flags: single-threaded is what every CQ of ours is; an
 * overrun always puts the CQ in error (uroce_cq.h), so no
 * IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN. */
#define CQX_FLAGS	IBV_CREATE_CQ_ATTR_SINGLE_THREADED

static struct uroce_vcq *
vcq_of(struct ibv_cq_ex *cqx)
{
	return (struct uroce_vcq *)cqx;	/* cqx is the first member */
}

/* ------------------------------------------------------------------------
 * The iterator. Errors are returned, not only put in errno (the man page:
 * "returns 0 on success or an error code otherwise"); rxe sets both.
 */

/* Move the oldest completion into cur: 0, ENOENT when empty, EIO once an
 * overrun put the CQ in error and nothing genuine is left (uroce_cq.h). */
static int
cqx_fetch(struct uroce_vcq *cq)
{
	int n = uroce_cq_poll_ts(cq->ucq, 1, &cq->cur, &cq->cur_tsc);

	if (n <= 0) {
		errno = n == 0 ? ENOENT : EIO;
		return errno;
	}
	cq->cqx.wr_id = cq->cur.wr_id;
	cq->cqx.status = cq->cur.status;
	return 0;
}

/* "attr is given in order to make this function easily extensible":
 * its comp_mask must be 0 (rdma-core's providers reject the rest). */
static int
cqx_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	if (attr != NULL && attr->comp_mask != 0) {
		errno = EINVAL;
		return EINVAL;
	}
	uroce_engine_poll();	/* inline progress (verbs_cq.c) */
	return cqx_fetch(vcq_of(cqx));
}

static int
cqx_next_poll(struct ibv_cq_ex *cqx)
{
	return cqx_fetch(vcq_of(cqx));
}

/* The entries already left the ring: nothing to give back. */
static void
cqx_end_poll(struct ibv_cq_ex *cqx)
{
	(void)cqx;
}

/* ------------------------------------------------------------------------
 * Accessors of the current completion.
 */
static enum ibv_wc_opcode
cqx_read_opcode(struct ibv_cq_ex *cqx)
{
	return vcq_of(cqx)->cur.opcode;
}

static uint32_t
cqx_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return vcq_of(cqx)->cur.vendor_err;
}

static unsigned int
cqx_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return vcq_of(cqx)->cur.wc_flags;
}

static uint32_t
cqx_read_byte_len(struct ibv_cq_ex *cqx)
{
	return vcq_of(cqx)->cur.byte_len;
}

/* Also ibv_wc_read_invalidated_rkey(): the same word of struct ibv_wc. */
static __be32
cqx_read_imm_data(struct ibv_cq_ex *cqx)
{
	return vcq_of(cqx)->cur.imm_data;
}

static uint32_t
cqx_read_qp_num(struct ibv_cq_ex *cqx)
{
	return vcq_of(cqx)->cur.qp_num;
}

static uint32_t
cqx_read_src_qp(struct ibv_cq_ex *cqx)
{
	return vcq_of(cqx)->cur.src_qp;
}

static uint32_t
cqx_read_slid(struct ibv_cq_ex *cqx)
{
	return vcq_of(cqx)->cur.slid;
}

static uint8_t
cqx_read_sl(struct ibv_cq_ex *cqx)
{
	return vcq_of(cqx)->cur.sl;
}

static uint8_t
cqx_read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return vcq_of(cqx)->cur.dlid_path_bits;
}

static void
cqx_read_tm_info(struct ibv_cq_ex *cqx, struct ibv_wc_tm_info *tm_info)
{
	uroce_tm_wc_info(&vcq_of(cqx)->cur, tm_info);
}

static uint64_t
cqx_read_completion_ts(struct ibv_cq_ex *cqx)
{
	return vcq_of(cqx)->cur_tsc;
}

static uint64_t
cqx_read_completion_wallclock_ns(struct ibv_cq_ex *cqx)
{
	return uroce_verbs_clock_to_ns(vcq_of(cqx)->cur_tsc);
}

/* The accessors each wc_flag asks for. */
static void
cqx_set_readers(struct ibv_cq_ex *cqx, uint64_t wc_flags)
{
	cqx->start_poll = cqx_start_poll;
	cqx->next_poll = cqx_next_poll;
	cqx->end_poll = cqx_end_poll;
	/* Always there (ibv_create_cq_ex(3) lists no flag for them). */
	cqx->read_opcode = cqx_read_opcode;
	cqx->read_vendor_err = cqx_read_vendor_err;
	cqx->read_wc_flags = cqx_read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cqx->read_byte_len = cqx_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		cqx->read_imm_data = cqx_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cqx->read_qp_num = cqx_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		cqx->read_src_qp = cqx_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		cqx->read_slid = cqx_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		cqx->read_sl = cqx_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cqx->read_dlid_path_bits = cqx_read_dlid_path_bits;
	if (wc_flags & IBV_WC_EX_WITH_TM_INFO)
		cqx->read_tm_info = cqx_read_tm_info;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		cqx->read_completion_ts = cqx_read_completion_ts;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		cqx->read_completion_wallclock_ns =
			cqx_read_completion_wallclock_ns;
}

/* ------------------------------------------------------------------------
 * Creation.
 */

/*
 * The checks before anything is made, in rdma-core's order: comp_mask
 * bits it does not know: EOPNOTSUPP (its check_comp_mask()); wc_flags or
 * flags we cannot honour: EOPNOTSUPP (as rxe's and mlx5's providers);
 * IBV_CQ_INIT_ATTR_MASK_PD without a parent domain of this context:
 * EINVAL (as mlx5's). cqe, comp_vector and channel: uroce_verbs_cq_new().
 */
static int
cqx_check(struct ibv_context *context, const struct ibv_cq_init_attr_ex *attr)
{
	if (attr->comp_mask & ~(uint32_t)CQX_COMP_MASK)
		return EOPNOTSUPP;
	if (attr->wc_flags & ~CQX_WC_FLAGS)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)CQX_FLAGS))
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (attr->parent_domain == NULL ||
	     attr->parent_domain->context != context ||
	     !uroce_verbs_pd_is_parent(attr->parent_domain)))
		return EINVAL;
	return 0;
}

struct ibv_cq_ex *
uroce_verbs_create_cq_ex(struct ibv_context *context,
			 struct ibv_cq_init_attr_ex *attr)
{
	struct uroce_vcq *cq;
	int err;

	if (context == NULL || attr == NULL)
		return uroce_verbs_null(EINVAL);
	err = cqx_check(context, attr);
	if (err != 0)
		return uroce_verbs_null(err);
	cq = uroce_verbs_cq_new(context, (int)attr->cqe, attr->cq_context,
				attr->channel, (int)attr->comp_vector,
				(attr->wc_flags & CQX_WC_TS) ? UROCE_CQ_TIMESTAMP : 0,
				(attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) ?
				attr->parent_domain : NULL);
	if (cq == NULL)
		return NULL;
	cqx_set_readers(&cq->cqx, attr->wc_flags);
	return &cq->cqx;
}
