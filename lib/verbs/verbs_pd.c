/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Protection domains (ibv_alloc_pd(3)): an engine PD behind each ibv_pd.
 */

#include <stdlib.h>

#include "uroce_engine.h"
#include "verbs_priv.h"

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
	pd->pd.handle = 0;
	return &pd->pd;
}

/* "0 on success, or the value of errno": EBUSY while an MR, AH or QP
 * uses the PD, as the kernel refuses it. */
int
ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct uroce_vpd *p = (struct uroce_vpd *)pd;
	int ret;

	if (pd == NULL)
		return EINVAL;
	ret = uroce_pd_free(p->upd);
	if (ret < 0)
		return -ret;
	free(p);
	return 0;
}
