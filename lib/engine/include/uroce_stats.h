/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_STATS_H
#define UROCE_STATS_H

/**
 * @file
 * Counters for people: names of the QP counters, a device's totals over
 * its QPs, and the DPDK telemetry commands that show them all.
 *
 * Telemetry. Once an engine runs, the process answers on DPDK's
 * telemetry socket, <runtime dir>/dpdk_telemetry.v2 (the runtime dir is
 * /var/run/dpdk/<file-prefix> for root; "rte" is the default prefix; a
 * second process with the same prefix gets dpdk_telemetry.v2:1, ...):
 *
 *   /uroce/info           engine lcores, devices, TSC rate
 *   /uroce/ports          a dict per device (uroce0, ...): port counters,
 *                         engine counters, drops by reason, QP totals
 *   /uroce/qps            the QPNs of every device (at most 512 each)
 *   /uroce/qp,<qpn>       one QP: type, state, owner lcore, counters;
 *   /uroce/qp,<dev>,<qpn> the same, checking the device (qpn decimal or 0x)
 *   /uroce/lcores         each engine lcore's loop counters (struct
 *                         uroce_lcore_stats), by index
 *
 * EAL's --no-telemetry turns the socket off; the commands then just stay
 * unanswered.
 */

#include <stddef.h>
#include <stdint.h>

#include "uroce_qp.h"

#ifdef __cplusplus
extern "C" {
#endif

struct uroce_dev;

/** One counter of struct uroce_qp_stats: its telemetry name and place. */
struct uroce_stat_field {
	const char *name;
	size_t off;			/**< offsetof(struct uroce_qp_stats, ...) */
};

/** Every member of struct uroce_qp_stats except pace_wait_cycles (shown
 *  as pace_wait_us), in struct order. */
extern const struct uroce_stat_field uroce_qp_stat_fields[];
extern const unsigned int uroce_qp_stat_nfields;

/** The value of field f in st. */
static inline uint64_t
uroce_qp_stat(const struct uroce_qp_stats *st, const struct uroce_stat_field *f)
{
	return *(const uint64_t *)(const void *)((const char *)st + f->off);
}

/**
 * The counters of every QP the device has had, summed: the destroyed ones
 * (added up at destroy time) and the live ones (read while their owners
 * run: each value is recent, the sum is not one instant's). Any thread.
 * @param nqp  if not NULL, the live QPs
 * @return 0, -EINVAL (no engine, NULL).
 */
int uroce_dev_qp_totals(struct uroce_dev *dev, struct uroce_qp_stats *sum,
			unsigned int *nqp);

/** Cycles of the TSC (tsc_hz a second) as microseconds, without overflow. */
uint64_t uroce_cycles_to_us(uint64_t cycles, uint64_t tsc_hz);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_STATS_H */
