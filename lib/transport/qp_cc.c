/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Congestion control of a QP ([port] cc = dcqcn; docs/congestion.md):
 * RoCEv2's congestion management (IBTA A17.9) with DCQCN as the reaction
 * (lib/pace/dcqcn.c), on the QP's owner lcore.
 *
 * Notification point. An RC or UC frame received with CE (a switch's mark,
 * or fault ce=P) is counted, and makes the QP owe a CNP to its peer's QP,
 * at most one per np_min_time_between_cnps; the responder sends it with
 * what else it owes (responder.c), Not-ECT.
 *
 * Reaction point. A CNP for the QP feeds DCQCN, whose rate is applied
 * through the QP's token bucket (qp_pace.c, uroce_qp_pace_cc()); the
 * rate-increase timer is one more deadline of the QP
 * (uroce_qp_deadline()), the byte counter runs on the bytes the pacer
 * charges while DCQCN limits the QP. A QP that has had no CNP, or has
 * recovered to the line rate, costs nothing per frame.
 */
#include "qp_priv.h"

/* A CNP makes sense on a QP that sends: RC or UC with a path that asked
 * for ECN, in a state that sends (or drains). */
static bool
cnp_admit(const struct uroce_qp *qp, const struct uroce_pkt *pkt)
{
	return qp->path.ect && (pkt->bth.pkey & 0x7fff) == 0x7fff &&
	       (qp->state == IBV_QPS_RTS || qp->state == IBV_QPS_SQD);
}

void
uroce_qp_cnp_rx(struct uroce_qp *qp, const struct uroce_pkt *pkt,
		uint64_t now)
{
	if (!cnp_admit(qp, pkt)) {
		qp->stats.drops++;
		if (qp->path.ect && (pkt->bth.pkey & 0x7fff) != 0x7fff)
			qp->stats.drop_pkey++;
		else if (qp->path.ect)
			qp->stats.drop_state++;
		else
			qp->stats.drop_opcode++;
		return;
	}
	if (uroce_dcqcn_cnp(&qp->cc_rp, &qp->env->dcqcn, now) ==
	    UROCE_DCQCN_IGNORED) {
		qp->stats.rp_cnp_ignored++;
		return;
	}
	qp->stats.rp_cnp_handled++;
	uroce_qp_pace_cc(qp, now, true);
}

void
uroce_qp_ce_rx(struct uroce_qp *qp, uint64_t now)
{
	qp->stats.np_ecn_marked_roce_packets++;
	if (qp->resp != NULL &&
	    uroce_dcqcn_np_ce(&qp->cc_np, now, qp->env->cnp_interval))
		uroce_resp_owe_cnp(qp);
}

void
uroce_qp_cc_timer(struct uroce_qp *qp, uint64_t now)
{
	enum uroce_dcqcn_event ev;

	ev = uroce_dcqcn_timer(&qp->cc_rp, &qp->env->dcqcn, now);
	if (ev == UROCE_DCQCN_RAISED || ev == UROCE_DCQCN_RELEASED)
		uroce_qp_pace_cc(qp, now, true);
}

void
uroce_qp_cc_sent(struct uroce_qp *qp, uint64_t now, uint32_t bytes)
{
	enum uroce_dcqcn_event ev;

	ev = uroce_dcqcn_sent(&qp->cc_rp, &qp->env->dcqcn, bytes);
	if (ev == UROCE_DCQCN_RAISED || ev == UROCE_DCQCN_RELEASED)
		uroce_qp_pace_cc(qp, now, false);
}

/* RESET: DCQCN starts over, and the address vector's static rate goes
 * with the path; the user's limit, if any, is the profile again (the
 * tokens kept, as a profile change keeps them). */
void
uroce_qp_cc_reset(struct uroce_qp *qp)
{
	const struct uroce_tb_profile *prof;

	uroce_dcqcn_init(&qp->cc_rp);
	qp->cc_np = (struct uroce_dcqcn_np){ 0 };
	qp->cc_active = false;
	qp->static_kbps = 0;
	__atomic_store_n(&qp->cc_rate_kbps, 0, __ATOMIC_RELAXED);
	if (uroce_qp_pace_base(qp, &prof) == 0)
		qp->pace_on = false;
	else
		qp->pace_prof = *prof;
}

uint64_t
uroce_qp_cc_rate_kbps(const struct uroce_qp *qp)
{
	return __atomic_load_n(&qp->cc_rate_kbps, __ATOMIC_RELAXED);
}
