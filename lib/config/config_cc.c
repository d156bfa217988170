/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * [port] cc = dcqcn|off and the DCQCN parameters, one key each, named as
 * the mlx5 driver and NVIDIA's documentation name them (docs/congestion.md
 * says what each does). A table gives each its field, range and default;
 * the setters are generated from it.
 */

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "config_priv.h"

/* 100 Gbit/s, the pacer's highest rate (docs/pacing.md), in Mbit/s. */
#define RATE_MAX	100000
#define US_MAX		1000000
#define BYTES_MAX	(1u << 30)

/*
 * name, default, min, max. Defaults: the reaction point's timers, byte
 * counter, increase steps and minimum rate of mlx5 (ConnectX-4 and later)
 * as NVIDIA documents them; rpg_threshold is the F = 5 of the DCQCN paper
 * (Zhu et al., SIGCOMM 2015) and of mlxconfig's RPG_THRESHOLD; alpha and
 * its gain are in 1/1024 as mlx5 gives them (initial_alpha_value 1023,
 * dce_tcp_g 1019: alpha keeps 1019/1024 each dce_tcp_rtt, a gain near
 * the paper's 1/256). dce_tcp_rtt is the paper's alpha period K, 55 us:
 * with a 1 us period alpha decays about a hundred times between two CNPs
 * 100 us apart, and each CNP adds back only 5/1024, so that a steady
 * train of CNPs leaves alpha near 1% and the cuts near nothing. The CNP
 * interval is the paper's 50 us (mlx5's np_min_time_between_cnps is
 * port-wide, default 0; uroce applies it per QP).
 */
#define DCQCN_KEYS(X)							\
	X(rpg_time_reset, 300, 1, US_MAX)				\
	X(rpg_byte_reset, 32767, 0, BYTES_MAX)				\
	X(rpg_threshold, 5, 1, 31)					\
	X(rpg_ai_rate, 5, 1, RATE_MAX)					\
	X(rpg_hai_rate, 50, 1, RATE_MAX)				\
	X(rpg_min_rate, 1, 1, RATE_MAX)					\
	X(rpg_max_rate, 0, 0, RATE_MAX)					\
	X(rpg_min_dec_fac, 50, 1, 100)					\
	X(rate_reduce_monitor_period, 4, 0, US_MAX)			\
	X(rate_to_set_on_first_cnp, 0, 0, RATE_MAX)			\
	X(dce_tcp_g, 1019, 0, 1023)					\
	X(dce_tcp_rtt, 55, 1, US_MAX)					\
	X(initial_alpha_value, 1023, 0, 1023)				\
	X(np_min_time_between_cnps, 50, 0, US_MAX)

struct dcqcn_key {
	size_t off;
	uint32_t def, min, max;
};

#define DCQCN_ROW(n, d, lo, hi) \
	{ offsetof(struct uroce_config_dcqcn, n), d, lo, hi },
static const struct dcqcn_key dcqcn_keys[] = { DCQCN_KEYS(DCQCN_ROW) };

enum {
#define DCQCN_IDX(n, d, lo, hi) DCQCN_##n,
	DCQCN_KEYS(DCQCN_IDX)
};

void
uroce_config_dcqcn_defaults(struct uroce_config_dcqcn *d)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(dcqcn_keys); i++)
		*(uint32_t *)((char *)d + dcqcn_keys[i].off) = dcqcn_keys[i].def;
}

static int
set_dcqcn(void *obj, unsigned int k, const char *val, char *why, size_t whylen)
{
	struct uroce_config_port *p = obj;
	const struct dcqcn_key *key = &dcqcn_keys[k];
	unsigned long v;

	if (cfg_parse_uint(val, key->min, key->max, &v) != 0) {
		snprintf(why, whylen, "not a number in %u..%u", key->min,
			 key->max);
		return -EINVAL;
	}
	*(uint32_t *)((char *)&p->dcqcn + key->off) = (uint32_t)v;
	return 0;
}

#define DCQCN_SET(n, d, lo, hi)						\
static int								\
set_##n(void *obj, const char *val, char *why, size_t whylen)		\
{									\
	return set_dcqcn(obj, DCQCN_##n, val, why, whylen);		\
}
DCQCN_KEYS(DCQCN_SET)

/* cc = dcqcn|off. */
static int
set_cc(void *obj, const char *val, char *why, size_t whylen)
{
	struct uroce_config_port *p = obj;

	if (strcmp(val, "dcqcn") == 0)
		p->cc = UROCE_CC_DCQCN;
	else if (strcmp(val, "off") == 0)
		p->cc = UROCE_CC_OFF;
	else {
		snprintf(why, whylen, "dcqcn or off");
		return -EINVAL;
	}
	return 0;
}

#define DCQCN_ENTRY(n, d, lo, hi) { #n, set_##n },
const struct cfg_key cfg_cc_keys[] = {
	{ "cc", set_cc },
	DCQCN_KEYS(DCQCN_ENTRY)
};

const unsigned int cfg_cc_key_cnt = RTE_DIM(cfg_cc_keys);
