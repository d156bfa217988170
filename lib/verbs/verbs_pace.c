/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * ibv_modify_qp_rate_limit(3): a static inline in <infiniband/verbs.h> that
 * calls verbs_context->modify_qp_rate_limit. The token bucket behind it is
 * lib/transport/qp_pace.c; the device's limits are in ibv_query_device_ex's
 * packet_pacing_caps.
 */
#include <errno.h>

#include "uroce_engine.h"
#include "verbs_priv.h"

/* "0 on success, or the value of errno"; a failure changes nothing. */
int
uroce_verbs_modify_qp_rate_limit(struct ibv_qp *qp,
				 struct ibv_qp_rate_limit_attr *attr)
{
	int ret;

	if (qp == NULL || attr == NULL)
		return EINVAL;
	ret = uroce_dev_qp_rate_limit(((struct uroce_vqp *)qp)->uqp, attr);
	return ret < 0 ? -ret : 0;
}
