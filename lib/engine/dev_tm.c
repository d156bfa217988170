/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * ibv_post_srq_ops() of tag-matching SRQs. The tag list of a TM-SRQ
 * (lib/transport/include/uroce_tm.h) belongs to the engine lcore that owns the
 * SRQ's CQ, which also owns every QP on the SRQ (dev.c, eng_pick_owner):
 * the ops run there as a control message, so matching and list changes
 * never race, and their completions are pushed by the CQ's one producer.
 * A CQ no QP has bound yet is bound here (round-robin), and stays bound
 * while the SRQ holds it.
 */
#include <errno.h>

#include "engine_priv.h"
#include "uroce_srq.h"

struct tm_ops_msg {
	struct uroce_srq *srq;
	struct ibv_ops_wr *wr;
	struct ibv_ops_wr **bad_wr;
};

static int
ctrl_tm_ops(struct eng_lcore *lc, void *arg)
{
	struct tm_ops_msg *m = arg;

	(void)lc;
	return uroce_srq_post_ops(m->srq, m->wr, m->bad_wr);
}

int
uroce_dev_srq_post_ops(struct uroce_srq *srq, struct ibv_ops_wr *wr,
		       struct ibv_ops_wr **bad_wr)
{
	struct tm_ops_msg m = { .srq = srq, .wr = wr, .bad_wr = bad_wr };
	struct eng_srq *es;
	int owner;

	if (srq == NULL || srq->engine == NULL)
		return -EINVAL;
	es = srq->engine;
	if (srq->type != IBV_SRQT_TM || es->cq == NULL) {
		if (bad_wr != NULL)
			*bad_wr = wr;
		return -EINVAL;
	}
	if (wr == NULL)
		return 0;
	pthread_mutex_lock(&eng_g->lock);
	if (es->cq->owner < 0)
		es->cq->owner = (int)(eng_g->rr++ % eng_g->nb_ctx);
	owner = es->cq->owner;
	pthread_mutex_unlock(&eng_g->lock);
	return eng_ctrl_run((unsigned int)owner, ctrl_tm_ops, &m);
}
