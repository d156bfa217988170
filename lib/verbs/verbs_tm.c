/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Tag-matching SRQs (rdma-core's tag_matching.md): the IBV_SRQT_TM case
 * of ibv_create_srq_ex(), ibv_post_srq_ops() (verbs_context op), and the
 * tm_caps ibv_query_device_ex() reports. The engine side is lib/engine/
 * dev_tm.c, the matching lib/transport/tm.c and tm_rx.c.
 */

#include <string.h>

#include "uroce_engine.h"
#include "uroce_tm.h"
#include "verbs_priv.h"

/* ibv_create_srq_ex(3) IBV_SRQT_TM: its own CQ (comp_mask CQ) and tm_cap
 * (comp_mask TM) are required: EINVAL without them, or with a CQ of
 * another context. tm_cap's ranges are the engine's (EINVAL). */
int
uroce_verbs_srq_init_tm(struct ibv_context *context,
			const struct ibv_srq_init_attr_ex *a,
			struct uroce_srq_init *init)
{
	if (!(a->comp_mask & IBV_SRQ_INIT_ATTR_TM) ||
	    !(a->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || a->cq == NULL ||
	    a->cq->context != context)
		return EINVAL;
	init->cq = ((struct uroce_vcq *)a->cq)->ucq;
	init->tm_cap = a->tm_cap;
	return 0;
}

/* verbs_context.post_srq_ops: "0 on success, or the value of errno". */
int
uroce_verbs_post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *wr,
			 struct ibv_ops_wr **bad_wr)
{
	if (srq == NULL) {
		if (bad_wr != NULL)
			*bad_wr = wr;
		return EINVAL;
	}
	return -uroce_dev_srq_post_ops(((struct uroce_vsrq *)srq)->usrq, wr,
				       bad_wr);
}

/* What ibv_query_device_ex() says of tag matching: RC, the tag list and
 * ops of uroce_tm.h, one SGE per tagged buffer. */
void
uroce_verbs_tm_caps(struct ibv_tm_caps *caps)
{
	memset(caps, 0, sizeof(*caps));
	caps->max_rndv_hdr_size = UROCE_TM_RNDV_HDR_MAX;
	caps->max_num_tags = UROCE_TM_MAX_TAGS;
	caps->flags = IBV_TM_CAP_RC;
	caps->max_ops = UROCE_TM_MAX_OPS;
	caps->max_sge = UROCE_TM_MAX_SGE;
}
