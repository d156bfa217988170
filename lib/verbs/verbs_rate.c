/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Static rate conversions (enum ibv_rate <-> multiple of 2.5 Gb/s <->
 * Mb/s), on the transport's table of rates (lib/transport/rate.c), which
 * also paces a QP by its address vector's static rate.
 */

#include "verbs_priv.h"
#include "uroce_qp.h"

int
ibv_rate_to_mult(enum ibv_rate rate)
{
	const struct uroce_rate *r = uroce_rate_find(rate);

	return r != NULL ? r->mult : -1;
}

enum ibv_rate
mult_to_ibv_rate(int mult)
{
	size_t i, n;
	const struct uroce_rate *rows = uroce_rate_table(&n);

	for (i = 0; i < n; i++)
		if (mult > 0 && rows[i].mult == mult)
			return rows[i].rate;
	return IBV_RATE_MAX;
}

int
ibv_rate_to_mbps(enum ibv_rate rate)
{
	const struct uroce_rate *r = uroce_rate_find(rate);

	return r != NULL ? r->mbps : -1;
}

enum ibv_rate
mbps_to_ibv_rate(int mbps)
{
	size_t i, n;
	const struct uroce_rate *rows = uroce_rate_table(&n);

	for (i = 0; i < n; i++)
		if (rows[i].mbps == mbps)
			return rows[i].rate;
	return IBV_RATE_MAX;
}
