/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * RAW_PACKET QPs (ibv_create_qp(3), IBV_QPT_RAW_PACKET): no transport
 * headers at all. A send's gathered bytes ARE the Ethernet frame (from the
 * destination MAC on, without the FCS), put on the wire as given; a receive
 * gets a whole frame that the device's flow rules (ibv_create_flow(3),
 * lib/engine/flow.c) steered to the QP.
 *
 * Rules, as an Ethernet NIC applies them to raw QPs (mlx5 is the model):
 *  - send: IBV_WR_SEND only (qp.c checks the opcode at post time); the
 *    frame is at least the 14-byte Ethernet header and at most the port's
 *    MTU plus that header (plus 4 when the frame carries an 802.1Q tag).
 *    Outside those bounds the WR completes with IBV_WC_LOC_LEN_ERR, as a
 *    NIC reports a WQE it cannot put on the wire. A send error stops the
 *    send queue (SQE, which RAW_PACKET can leave with SQE->RTS), as for UD.
 *    Short frames are not padded to 60 bytes here: a physical port pads on
 *    the wire, software links carry the frame as it is.
 *  - a send completes once the frame is built (there is no ACK).
 *  - receive in RTR, RTS, SQD and SQE (IBTA 10.3.1: the receive side works
 *    from RTR on); a frame with no receive WQE posted is dropped and
 *    counted in stats.drops: raw QPs have no RNR.
 *  - the whole frame is scattered; byte_len is the frame's length; a
 *    buffer too small completes with IBV_WC_LOC_LEN_ERR.
 */
#include <errno.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "qp_priv.h"

/* Largest frame the port takes: the MTU plus the Ethernet header, and the
 * 802.1Q tag when the frame has one. */
static uint32_t
raw_frame_max(const struct uroce_qp *qp, const uint8_t *frame)
{
	uint32_t max = (uint32_t)qp->env->mtu + RTE_ETHER_HDR_LEN;

	if (frame[12] == 0x81 && frame[13] == 0x00)	/* RTE_ETHER_TYPE_VLAN */
		max += RTE_VLAN_HLEN;
	return max;
}

/* One frame. @return 1 sent (or failed and completed), 0 wait. */
static int
raw_send_one(struct uroce_qp *qp, struct uroce_send_wqe *w, uint64_t now,
	     struct uroce_txb *txb)
{
	uint32_t len = w->length;
	struct rte_mbuf *m;
	uint8_t *frame;

	if (len < RTE_ETHER_HDR_LEN ||
	    len > (uint32_t)qp->env->mtu + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN) {
		uroce_dgram_complete(qp, w, IBV_WC_LOC_LEN_ERR);
		return 1;
	}
	if (!uroce_qp_pace(qp, now, len)) {
		uroce_qp_pace_wait(qp, now, len,
				   uroce_qp_pace_behind(qp, qp->sq.tail, 0));
		return 0;
	}
	m = rte_pktmbuf_alloc(qp->env->pool);
	if (m == NULL) {
		uroce_req_retry_wait(qp, now);
		return 0;
	}
	/* len <= 9000 + 18 here: it fits the 16-bit mbuf length. */
	frame = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	if (frame == NULL) {
		/* The pool's buffers hold MTU + 128 bytes: cannot happen
		 * within the bounds above, but never write past the mbuf. */
		rte_pktmbuf_free(m);
		uroce_dgram_complete(qp, w, IBV_WC_LOC_LEN_ERR);
		return 1;
	}
	if (uroce_wqe_gather(qp, w, 0, frame, len) < 0) {
		rte_pktmbuf_free(m);
		uroce_dgram_complete(qp, w, IBV_WC_LOC_PROT_ERR);
		return 1;
	}
	if (len > raw_frame_max(qp, frame)) {
		rte_pktmbuf_free(m);
		uroce_dgram_complete(qp, w, IBV_WC_LOC_LEN_ERR);
		return 1;
	}
	qp->stats.tx_pkts++;
	qp->stats.tx_bytes += len;
	uroce_txb_add(txb, m);
	uroce_dgram_complete(qp, w, IBV_WC_SUCCESS);
	return 1;
}

bool
uroce_raw_tx(struct uroce_qp *qp, uint64_t now, struct uroce_txb *txb)
{
	return uroce_dgram_tx(qp, now, txb, raw_send_one);
}

/* ---------------------------------------------------------------------------
 * Receive.
 */

/* States in which a raw QP takes frames (IBTA 10.3.1: RTR and beyond). */
static const bool raw_rx_state_ok[IBV_QPS_ERR + 1] = {
	[IBV_QPS_RTR] = true,
	[IBV_QPS_RTS] = true,
	[IBV_QPS_SQD] = true,
	[IBV_QPS_SQE] = true,
};

static void
raw_recv_complete(struct uroce_qp *qp, const struct uroce_recv_wqe *rw,
		  enum ibv_wc_status status, uint32_t len)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = rw->wr_id;
	wc.status = status;
	wc.opcode = IBV_WC_RECV;
	wc.qp_num = qp->qpn;
	if (status == IBV_WC_SUCCESS)
		wc.byte_len = len;
	uroce_qp_rwqe_done(qp);
	uroce_qp_complete(qp, qp->recv_cq, &wc, false);
}

/* Copy every segment of m into the receive WQE's scatter list. */
static int
raw_scatter(struct uroce_qp *qp, const struct uroce_recv_wqe *rw,
	    const struct rte_mbuf *m)
{
	uint32_t off = 0;
	int ret;

	for (; m != NULL; m = m->next) {
		ret = uroce_rwqe_scatter(qp, rw, off,
					 rte_pktmbuf_mtod(m, const void *),
					 m->data_len);
		if (ret < 0)
			return ret;
		off += m->data_len;
	}
	return 0;
}

void
uroce_qp_raw_rx(struct uroce_qp *qp, struct rte_mbuf *m, uint64_t now)
{
	const struct uroce_recv_wqe *rw;
	uint32_t len = rte_pktmbuf_pkt_len(m);

	(void)now;
	qp->stats.rx_pkts++;
	qp->stats.rx_bytes += len;
	if (qp->type != IBV_QPT_RAW_PACKET ||
	    (unsigned int)qp->state > IBV_QPS_ERR ||
	    !raw_rx_state_ok[qp->state] ||
	    (rw = uroce_qp_rwqe(qp)) == NULL) {
		qp->stats.drops++;
		return;
	}
	if (len > rw->length) {
		raw_recv_complete(qp, rw, IBV_WC_LOC_LEN_ERR, 0);
		return;
	}
	if (raw_scatter(qp, rw, m) < 0) {
		raw_recv_complete(qp, rw, IBV_WC_LOC_PROT_ERR, 0);
		return;
	}
	raw_recv_complete(qp, rw, IBV_WC_SUCCESS, len);
}
