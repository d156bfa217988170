/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * QP counters by name, and a device's totals over its QPs.
 *
 * Who writes what. A QP's counters are written by its owner lcore only,
 * with plain adds (nothing on the data path pays for telemetry). A reader
 * on another thread loads each 64-bit member with one relaxed atomic load:
 * on x86-64 an aligned 64-bit load is never torn, so each value is one the
 * owner wrote, recent but not necessarily the newest.
 *
 * Life time. The engine lock keeps a QP from being freed while a reader
 * walks dev->qps (uroce_dev_qp_destroy() holds it across the owner's
 * destroy). When a QP is destroyed its counters are added to the device's
 * qp_retired on the owner, with the engine lock held by the destroyer: a
 * reader under the lock sees a QP either live or retired, never both.
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>

#include "engine_priv.h"
#include "uroce_stats.h"

#define QP_FIELD(n)	{ #n, offsetof(struct uroce_qp_stats, n) }
/* Element i of array n, named s. */
#define QP_FIELD_AS(s, n, i) \
	{ s, offsetof(struct uroce_qp_stats, n) + (i) * sizeof(uint64_t) }
#define QP_FIELD_I(n, i, s)	QP_FIELD_AS(#n "_" s, n, i)

/* NAK codes as IBTA Table 44 numbers them (the index of naks_*[]). */
const struct uroce_stat_field uroce_qp_stat_fields[] = {
	QP_FIELD(tx_pkts), QP_FIELD(tx_bytes),
	/* pace_wait_cycles: shown as pace_wait_us */
	/* pace_lost_bytes[]: by why the QP had stopped (uroce_qp.h) */
	QP_FIELD_AS("pace_lost_bytes", pace_lost_bytes, 0),
	QP_FIELD_AS("pace_lost_window_bytes", pace_lost_bytes, 1),
	QP_FIELD_AS("pace_lost_turn_bytes", pace_lost_bytes, 2),
	QP_FIELD_AS("pace_idle_bytes", pace_lost_bytes, 3),
	QP_FIELD(rx_pkts), QP_FIELD(rx_bytes),
	QP_FIELD(retransmits), QP_FIELD(timeouts), QP_FIELD(late_timeouts),
	QP_FIELD(acks_tx), QP_FIELD(acks_rx),
	QP_FIELD_I(naks_tx, 0, "psn_seq"), QP_FIELD_I(naks_tx, 1, "inv_req"),
	QP_FIELD_I(naks_tx, 2, "rem_access"), QP_FIELD_I(naks_tx, 3, "rem_op"),
	QP_FIELD_I(naks_rx, 0, "psn_seq"), QP_FIELD_I(naks_rx, 1, "inv_req"),
	QP_FIELD_I(naks_rx, 2, "rem_access"), QP_FIELD_I(naks_rx, 3, "rem_op"),
	QP_FIELD(rnr_naks_tx), QP_FIELD(rnr_naks_rx),
	QP_FIELD(dup_reqs), QP_FIELD(out_of_seq), QP_FIELD(drops),
	QP_FIELD(rnr_retries), QP_FIELD(dup_resps),
	QP_FIELD(drop_state), QP_FIELD(drop_opcode), QP_FIELD(drop_pkey),
	QP_FIELD(drop_qkey), QP_FIELD(drop_no_rwqe),
	QP_FIELD(srq_taken), QP_FIELD(access_denied),
	/* congestion control, as RoCE NICs name them */
	QP_FIELD(np_ecn_marked_roce_packets), QP_FIELD(np_cnp_sent),
	QP_FIELD(rp_cnp_handled), QP_FIELD(rp_cnp_ignored),
	QP_FIELD(pace_ah_waits),
};
const unsigned int uroce_qp_stat_nfields = RTE_DIM(uroce_qp_stat_fields);

/* A counter added to struct uroce_qp_stats needs its name above. */
_Static_assert(RTE_DIM(uroce_qp_stat_fields) ==
	       sizeof(struct uroce_qp_stats) / sizeof(uint64_t) - 1,
	       "every QP counter has a telemetry name");

#define QP_WORDS	(sizeof(struct uroce_qp_stats) / sizeof(uint64_t))

/* sum += st, member by member; st may be written meanwhile by its owner. */
static void
qp_stats_add(struct uroce_qp_stats *sum, const struct uroce_qp_stats *st)
{
	uint64_t *d = (uint64_t *)(void *)sum;
	const uint64_t *s = (const uint64_t *)(const void *)st;
	unsigned int i;

	for (i = 0; i < QP_WORDS; i++)
		d[i] += __atomic_load_n(&s[i], __ATOMIC_RELAXED);
}

/* Owner lcore, engine lock held by the destroyer (ctrl_detach). */
void
eng_stats_retire(struct eng_qp *eq)
{
	qp_stats_add(&eq->dev->qp_retired, &eq->qp->stats);
}

int
uroce_dev_qp_totals(struct uroce_dev *dev, struct uroce_qp_stats *sum,
		    unsigned int *nqp)
{
	struct eng_qp *eq;
	unsigned int n = 0;

	if (eng_g == NULL || dev == NULL || sum == NULL)
		return -EINVAL;
	pthread_mutex_lock(&eng_g->lock);
	*sum = dev->qp_retired;
	TAILQ_FOREACH(eq, &dev->qps, dev_link) {
		qp_stats_add(sum, &eq->qp->stats);
		n++;
	}
	pthread_mutex_unlock(&eng_g->lock);
	if (nqp != NULL)
		*nqp = n;
	return 0;
}

uint64_t
uroce_cycles_to_us(uint64_t cycles, uint64_t tsc_hz)
{
	if (tsc_hz == 0)
		return 0;
	return cycles / tsc_hz * 1000000 +
		cycles % tsc_hz * 1000000 / tsc_hz;
}
