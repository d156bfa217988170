/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Ports of a test's own configuration (lib/net): a [port] section filled
 * in place, opened with the error printed on failure, counters read.
 */
#ifndef UROCE_TEST_PORT_H
#define UROCE_TEST_PORT_H

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "uroce_config.h"
#include "uroce_port.h"
#include "uroce_test.h"

/* Port idx of cfg: dev, IPv4 ip/24, MTU 1500, nothing else. */
static inline void
ut_port_cfg(struct uroce_config *cfg, unsigned int idx, const char *dev,
	    const char *ip)
{
	struct uroce_config_port *pc = &cfg->port[idx];

	memset(pc, 0, sizeof(*pc));
	snprintf(pc->dev, sizeof(pc->dev), "%s", dev);
	pc->has_ip4 = true;
	inet_pton(AF_INET, ip, &pc->ip4);
	pc->ip4_prefix = 24;
	pc->mtu = 1500;
	if (idx >= cfg->port_cnt)
		cfg->port_cnt = idx + 1;
}

/* Open port idx with nq queue pairs; NULL (a failed check) on error. */
static inline struct uroce_port *
ut_port_open(const struct uroce_config *cfg, unsigned int idx, uint16_t nq)
{
	struct uroce_port *p = NULL;
	char err[256] = "";
	int ret;

	ret = uroce_port_open(cfg, idx, nq, &p, err, sizeof(err));
	if (!UT_CHECK_EQ(ret, 0))
		fprintf(stderr, "     open %s: %s\n", cfg->port[idx].dev, err);
	return ret == 0 ? p : NULL;
}

static inline struct uroce_port_stats
ut_port_stats(const struct uroce_port *p)
{
	struct uroce_port_stats st;

	uroce_port_stats_get(p, &st);
	return st;
}

#endif /* UROCE_TEST_PORT_H */
