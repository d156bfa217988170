/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Flow steering: ibv_create_flow() and ibv_destroy_flow(), which
 * <infiniband/verbs.h> implements inline through verbs_context's
 * ibv_create_flow and ibv_destroy_flow ops (ibv_create_flow(3)). The rules
 * and their errors are the engine's (lib/engine/include/uroce_flow.h); here only
 * the conventions: create returns NULL with errno, destroy returns the
 * errno value. The kernel asks for CAP_NET_RAW to create RAW_PACKET QPs and
 * their flows; a userspace stack has no such gate.
 */

#include <stdlib.h>

#include "uroce_engine.h"
#include "verbs_priv.h"

struct uroce_vflow {
	struct ibv_flow flow;
	struct uroce_flow *uflow;
};

struct ibv_flow *
uroce_verbs_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr)
{
	struct uroce_vflow *f;
	int ret;

	if (qp == NULL || attr == NULL)
		return uroce_verbs_null(EINVAL);
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return uroce_verbs_null(ENOMEM);
	ret = uroce_dev_flow_create(((struct uroce_vqp *)qp)->uqp, attr,
				    &f->uflow);
	if (ret < 0) {
		free(f);
		return uroce_verbs_null(-ret);
	}
	f->flow.context = qp->context;
	f->flow.handle = qp->qp_num;
	return &f->flow;
}

int
uroce_verbs_destroy_flow(struct ibv_flow *flow)
{
	struct uroce_vflow *f = (struct uroce_vflow *)flow;
	int ret;

	if (flow == NULL)
		return EINVAL;
	ret = uroce_dev_flow_destroy(f->uflow);
	if (ret < 0)
		return -ret;
	free(f);
	return 0;
}
