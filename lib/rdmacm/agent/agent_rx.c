/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Received MADs: decoded (what is not a CM MAD uroce handles is dropped
 * and counted), matched to a connection, stepped, or answered as Linux's
 * cm.c answers what matches nothing (uroce_cm_unmatched()).
 *
 * Matching (IBTA 12.9.2, 12.9.8.2; Linux cm_req_handler() and friends):
 *  - a REQ or SIDR_REQ by the peer's GID and its comm ID (request ID)
 *    first: a duplicate finds the connection it made, whose state machine
 *    answers it as before; then a REQ by the peer's GID and QPN: one of a
 *    connection still alive or in time-wait is stale (REJ 10); then by
 *    service ID, to a listener; else REJ 8 / SIDR_REP "unsupported";
 *  - every other message by our comm ID (its Remote Communication ID; a
 *    SIDR_REP's request ID), and a REJ whose Remote Communication ID is 0
 *    (an active side that gave up before our REP) by the peer's.
 */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_common.h>

#include "agent_priv.h"

#define RX_BURST	32

static struct cm_conn *
find_local(struct cm_agent *a, uint32_t id)
{
	static const union ibv_gid none;
	uint64_t h = cm_hash_gid(&none, id);
	struct cm_hnode *e = NULL;
	struct cm_conn *c;

	while ((e = cm_htab_next(&a->by_local, h, e)) != NULL) {
		c = container_of(e, struct cm_conn, h_local);
		if (c->fsm.local_comm_id == id)
			return c->fsm.state != UROCE_CM_IDLE ? c : NULL;
	}
	return NULL;
}

static struct cm_conn *
find_remote(struct cm_agent *a, const union ibv_gid *gid, uint32_t id, bool sidr)
{
	uint64_t h = cm_hash_gid(gid, id | (uint64_t)sidr << 32);
	struct cm_hnode *e = NULL;
	struct cm_conn *c;

	while ((e = cm_htab_next(&a->by_remote, h, e)) != NULL) {
		c = container_of(e, struct cm_conn, h_remote);
		if (c->fsm.remote_comm_id == id && c->sidr == sidr &&
		    memcmp(&c->peer.gid, gid, sizeof(*gid)) == 0)
			return c;
	}
	return NULL;
}

static struct cm_conn *
find_qpn(struct cm_agent *a, const union ibv_gid *gid, uint32_t qpn)
{
	uint64_t h = cm_hash_gid(gid, qpn);
	struct cm_hnode *e = NULL;
	struct cm_conn *c;

	while ((e = cm_htab_next(&a->by_qpn, h, e)) != NULL) {
		c = container_of(e, struct cm_conn, h_qpn);
		if (c->fsm.remote_qpn == qpn &&
		    memcmp(&c->peer.gid, gid, sizeof(*gid)) == 0)
			return c;
	}
	return NULL;
}

/* What matches no connection: answered (uroce_cm_unmatched()) or dropped. */
static void
rx_unmatched(struct cm_agent *a, const struct cm_rx *rx, bool stale,
	     struct cm_batch *b)
{
	struct uroce_cm_msg out;

	if (uroce_cm_unmatched(rx->msg, stale, &out) == 1 &&
	    cm_batch_msg(a, b, &out, &rx->from, true) == 0) {
		if (stale)
			a->st.rej_stale++;
		else
			a->st.replied_unmatched++;
		return;
	}
	a->st.drop_unmatched++;
}

/* The input a received message is. */
static const enum uroce_cm_input recv_input[] = {
	[UROCE_CM_ATTR_REQ - UROCE_CM_ATTR_REQ] = UROCE_CM_IN_RECV_REQ,
	[UROCE_CM_ATTR_MRA - UROCE_CM_ATTR_REQ] = UROCE_CM_IN_RECV_MRA,
	[UROCE_CM_ATTR_REJ - UROCE_CM_ATTR_REQ] = UROCE_CM_IN_RECV_REJ,
	[UROCE_CM_ATTR_REP - UROCE_CM_ATTR_REQ] = UROCE_CM_IN_RECV_REP,
	[UROCE_CM_ATTR_RTU - UROCE_CM_ATTR_REQ] = UROCE_CM_IN_RECV_RTU,
	[UROCE_CM_ATTR_DREQ - UROCE_CM_ATTR_REQ] = UROCE_CM_IN_RECV_DREQ,
	[UROCE_CM_ATTR_DREP - UROCE_CM_ATTR_REQ] = UROCE_CM_IN_RECV_DREP,
	[UROCE_CM_ATTR_SIDR_REQ - UROCE_CM_ATTR_REQ] = UROCE_CM_IN_RECV_SIDR_REQ,
	[UROCE_CM_ATTR_SIDR_REP - UROCE_CM_ATTR_REQ] = UROCE_CM_IN_RECV_SIDR_REP,
};

/* A message for a connection: its state machine decides; one it refuses
 * (not allowed now, comm IDs not its own) is dropped and counted. */
static void
rx_step(struct cm_agent *a, struct cm_conn *c, const struct cm_rx *rx,
	struct cm_batch *b)
{
	uint16_t attr = rx->msg->hdr.attr_id;

	if (cm_step(a, c, recv_input[attr - UROCE_CM_ATTR_REQ], NULL, rx, b) != 0) {
		a->st.drop_unmatched++;
		return;
	}
	/* The DREP that answers a DREQ is of its transaction. */
	if (attr == UROCE_CM_ATTR_DREQ)
		c->tid = rx->msg->hdr.tid;
	cm_conn_maybe_free(c);
}

static void
rx_request(struct cm_agent *a, const struct cm_rx *rx, struct cm_batch *b)
{
	const struct uroce_cm_msg *m = rx->msg;
	bool sidr = m->hdr.attr_id == UROCE_CM_ATTR_SIDR_REQ;
	uint32_t id = sidr ? m->sidr_req.request_id : m->req.local_comm_id;
	uint64_t sid = sidr ? m->sidr_req.service_id : m->req.service_id;
	struct cm_listener *l;
	struct cm_conn *c;

	c = find_remote(a, &rx->from.gid, id, sidr);
	if (c != NULL) {
		a->st.duplicates++;
		rx_step(a, c, rx, b);
		return;
	}
	if (!sidr && find_qpn(a, &rx->from.gid, m->req.local_qpn) != NULL) {
		rx_unmatched(a, rx, true, b);
		return;
	}
	l = cm_listener_find(a, sid);
	if (l != NULL)
		cm_listener_request(l, rx, b);
	else
		rx_unmatched(a, rx, false, b);
}

static void
rx_other(struct cm_agent *a, const struct cm_rx *rx, struct cm_batch *b)
{
	const struct uroce_cm_msg *m = rx->msg;
	uint32_t id = m->hdr.attr_id == UROCE_CM_ATTR_SIDR_REP ?
		      m->sidr_rep.request_id : m->rtu.remote_comm_id;
	struct cm_conn *c = find_local(a, id);

	if (c == NULL && m->hdr.attr_id == UROCE_CM_ATTR_REJ && id == 0)
		c = find_remote(a, &rx->from.gid, m->rej.local_comm_id, false);
	if (c != NULL)
		rx_step(a, c, rx, b);
	else
		rx_unmatched(a, rx, false, b);
}

static void
rx_one(struct cm_agent *a, const struct uroce_verbs_mad_rx *r, uint64_t now,
       struct cm_batch *b)
{
	struct uroce_cm_msg msg;
	struct cm_rx rx;
	int ret;

	a->st.rx++;
	ret = uroce_cm_decode(r->mad, sizeof(r->mad), &msg);
	if (ret < 0) {
		a->st.drop_decode++;
		AG_LOG(DEBUG, "%s: a MAD of class 0x%02x dropped (%d)\n",
		       a->dev.name, r->mad[1], ret);
		return;
	}
	if (r->gid_index == UROCE_VERBS_GID_NONE) {
		a->st.drop_addr++;	/* we could not answer from there */
		return;
	}
	memset(&rx, 0, sizeof(rx));
	rx.msg = &msg;
	rx.now_ns = now;
	rx.from.gid = r->sgid;
	rx.from.local_gid = r->dgid;
	rx.from.local_gid_index = r->gid_index;
	rx.from.tclass = r->tclass;
	rx.from.hop_limit = r->hop_limit;
	rx.from.flow_label = r->flow_label;
	AG_LOG(DEBUG, "%s: %s received, TID 0x%016" PRIx64 "\n", a->dev.name,
	       uroce_cm_attr_str(msg.hdr.attr_id), msg.hdr.tid);
	if (msg.hdr.attr_id == UROCE_CM_ATTR_REQ ||
	    msg.hdr.attr_id == UROCE_CM_ATTR_SIDR_REQ)
		rx_request(a, &rx, b);
	else
		rx_other(a, &rx, b);
}

void
cm_rx_all(struct cm_agent *a)
{
	struct uroce_verbs_mad_rx rx[RX_BURST];
	struct cm_batch b;
	uint64_t now;
	int i, n;

	do {
		n = a->glue->gsi_recv(a->gsi, rx, RX_BURST);
		if (n <= 0)
			return;
		memset(&b, 0, sizeof(b));
		now = cm_now_ns();
		pthread_mutex_lock(&a->lock);
		for (i = 0; i < n; i++)
			rx_one(a, &rx[i], now, &b);
		pthread_mutex_unlock(&a->lock);
		cm_batch_send(a, &b);
		cm_deliver(a);
	} while (n == RX_BURST);
}
