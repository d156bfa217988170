/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Static rate conversions (enum ibv_rate <-> multiple of 2.5 Gb/s <->
 * Mb/s). One row per rate. The multiple exists only for the rates that are
 * whole multiples of the 2.5 Gb/s SDR lane (IBTA vol 1, 9.11 "static rate
 * control"); the FDR/EDR and later rates have only a Mb/s value, taken from
 * their signalling rate, as rdma-core reports it.
 */

#include "verbs_priv.h"

struct rate_row {
	enum ibv_rate rate;
	int mult;	/**< of 2.5 Gb/s, -1: none */
	int mbps;
};

static const struct rate_row rate_rows[] = {
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

#define RATE_ROWS (sizeof(rate_rows) / sizeof(rate_rows[0]))

static const struct rate_row *
row_of_rate(enum ibv_rate rate)
{
	for (size_t i = 0; i < RATE_ROWS; i++)
		if (rate_rows[i].rate == rate)
			return &rate_rows[i];
	return NULL;
}

int
ibv_rate_to_mult(enum ibv_rate rate)
{
	const struct rate_row *r = row_of_rate(rate);

	return r != NULL ? r->mult : -1;
}

enum ibv_rate
mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; i < RATE_ROWS; i++)
		if (mult > 0 && rate_rows[i].mult == mult)
			return rate_rows[i].rate;
	return IBV_RATE_MAX;
}

int
ibv_rate_to_mbps(enum ibv_rate rate)
{
	const struct rate_row *r = row_of_rate(rate);

	return r != NULL ? r->mbps : -1;
}

enum ibv_rate
mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < RATE_ROWS; i++)
		if (rate_rows[i].mbps == mbps)
			return rate_rows[i].rate;
	return IBV_RATE_MAX;
}
