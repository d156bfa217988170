/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Memory windows (ibv_alloc_mw(3), ibv_bind_mw(3)): slots of the device's
 * key table (uroce_mr.h). A bind is a send WQE, run by the QP's requester
 * in order with the QP's other work (lib/transport/requester.c), for type
 * 1 through ibv_bind_mw() and for type 2 through IBV_WR_BIND_MW; both
 * complete as IBV_WC_BIND_MW.
 */

#include <stdlib.h>

#include "uroce_engine.h"
#include "verbs_priv.h"

struct uroce_vmw {
	struct ibv_mw mw;
};

/* verbs_context ops: "NULL and errno" for alloc. */
struct ibv_mw *
uroce_verbs_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct uroce_vmw *m;
	uint32_t rkey;
	int ret;

	if (pd == NULL)
		return uroce_verbs_null(EINVAL);
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return uroce_verbs_null(ENOMEM);
	ret = uroce_dev_mw_alloc(((struct uroce_vpd *)pd)->upd, type, &rkey);
	if (ret < 0) {
		free(m);
		return uroce_verbs_null(-ret);
	}
	m->mw.context = pd->context;
	m->mw.pd = pd;
	m->mw.rkey = rkey;
	m->mw.handle = rkey >> UROCE_MR_KEY_SHIFT;
	m->mw.type = type;
	return &m->mw;
}

/* "0 on success, or the value of errno"; a bound window is unbound. */
int
uroce_verbs_dealloc_mw(struct ibv_mw *mw)
{
	int ret;

	if (mw == NULL || mw->pd == NULL)
		return EINVAL;
	ret = uroce_dev_mw_dealloc(((struct uroce_vpd *)mw->pd)->upd,
				   mw->rkey);
	if (ret < 0)
		return -ret;
	free((struct uroce_vmw *)mw);
	return 0;
}

/*
 * ibv_bind_mw(): a type 1 bind posted on qp as a BIND_MW WR with the next
 * key (ibv_inc_rkey()), which mw->rkey holds once posted (the man page: the
 * caller keeps the old key in case the completion reports a failure).
 * The inline wrapper has checked the type and the MR's PD.
 */
int
uroce_verbs_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		    struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	int ret;

	if (qp == NULL || mw == NULL || mw_bind == NULL)
		return EINVAL;
	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	ret = uroce_verbs_post_send(qp, &wr, &bad);
	if (ret == 0)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}
