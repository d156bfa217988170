/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The static rates of enum ibv_rate (IBTA vol 1, 9.11 "static rate
 * control"): one row per rate, with its multiple of the 2.5 Gb/s SDR lane
 * where it is a whole one, and its Mb/s. The FDR/EDR and later rates have
 * only a Mb/s value, taken from their signalling rate, as rdma-core
 * reports it. The verbs' conversions (ibv_rate_to_mbps() and its kin) and
 * the pacing of a QP by its address vector's static rate (qp_pace.c) both
 * read this table.
 */
#include "uroce_qp.h"

static const struct uroce_rate rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 },
	{ IBV_RATE_5_GBPS, 2, 5000 },
	{ IBV_RATE_10_GBPS, 4, 10000 },
	{ IBV_RATE_20_GBPS, 8, 20000 },
	{ IBV_RATE_30_GBPS, 12, 30000 },
	{ IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 },
	{ IBV_RATE_80_GBPS, 32, 80000 },
	{ IBV_RATE_120_GBPS, 48, 120000 },
	{ IBV_RATE_14_GBPS, -1, 14062 },
	{ IBV_RATE_56_GBPS, -1, 56250 },
	{ IBV_RATE_112_GBPS, -1, 112500 },
	{ IBV_RATE_168_GBPS, -1, 168750 },
	{ IBV_RATE_25_GBPS, -1, 25781 },
	{ IBV_RATE_100_GBPS, -1, 103125 },
	{ IBV_RATE_200_GBPS, -1, 206250 },
	{ IBV_RATE_300_GBPS, -1, 309375 },
	{ IBV_RATE_28_GBPS, 11, 28125 },
	{ IBV_RATE_50_GBPS, 20, 53125 },
	{ IBV_RATE_400_GBPS, 160, 425000 },
	{ IBV_RATE_600_GBPS, 240, 637500 },
	{ IBV_RATE_800_GBPS, 320, 850000 },
	{ IBV_RATE_1200_GBPS, 480, 1275000 },
};

const struct uroce_rate *
uroce_rate_table(size_t *n)
{
	*n = RTE_DIM(rates);
	return rates;
}

const struct uroce_rate *
uroce_rate_find(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < RTE_DIM(rates); i++)
		if (rates[i].rate == rate)
			return &rates[i];
	return NULL;
}
