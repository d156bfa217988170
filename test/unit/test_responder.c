/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The responder against hostile requests built with uroce_wire_build():
 * bad R_Key, address outside the region, missing access rights, misaligned
 * atomic, PSN ahead and duplicate, opcode sequence errors, bad P_Key, a
 * WRITE longer than its RETH.len, a SEND longer than the receive, no
 * receive WQE (RNR). Each must give the right NAK (parsed from the frame
 * the responder emits) or a drop, move the right counter, and leave the
 * guard bytes around the region alone. Each NAK that moves the QP to ERR
 * without a completion raises one affiliated error naming the responder's
 * QP: IBV_EVENT_QP_ACCESS_ERR for Remote Access Error, QP_REQ_ERR for
 * Invalid Request; a SEND too long for its receive completes in error and
 * raises none, and a READ whose region went before its response raises
 * QP_ACCESS_ERR. A QP in RTR raises IBV_EVENT_COMM_EST at its first request,
 * once. Then UC (a PSN gap drops the message) and UD (GRH, src_qp, Q_Key)
 * over the in-memory link.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_test.h"
#include "uroce_test_eal.h"
#include "uroce_test_link.h"

#define MEM_LEN		(64 * 1024)
#define PAT		0xa5

static uint8_t raw_rw[MEM_LEN + 8192] __rte_aligned(4096);
static uint8_t raw_ro[MEM_LEN + 8192] __rte_aligned(4096);
static uint8_t raw_wo[MEM_LEN + 8192] __rte_aligned(4096);
static uint8_t *mem_rw = raw_rw + 4096, *mem_ro = raw_ro + 4096, *mem_wo = raw_wo + 4096;

static struct ut_link *L;
static struct uroce_mr *mr_rw, *mr_ro, *mr_wo, *mr_ro_a;
static uint32_t next_qpn = 0x1000;

/* The frames a responder emitted, parsed. */
struct out {
	unsigned int n;
	struct {
		uint8_t opcode, syn;
		uint32_t psn, msn;
		uint64_t orig;
	} f[16];
};

static bool
guards_ok(void)
{
	int i;

	for (i = 0; i < 4096; i++)
		if (raw_rw[i] != PAT || raw_rw[4096 + MEM_LEN + i] != PAT ||
		    raw_ro[i] != PAT || raw_wo[i] != PAT)
			return false;
	return true;
}

static void
collect(struct uroce_txb *txb, struct out *o)
{
	unsigned int i;

	for (i = 0; i < txb->n; i++) {
		struct rte_mbuf *m = txb->pkts[i];
		struct uroce_ext_fields ext;
		struct uroce_pkt pkt;

		if (UT_CHECK_EQ(uroce_wire_parse(rte_pktmbuf_mtod(m, uint8_t *),
						 rte_pktmbuf_data_len(m), 0, &pkt),
				UROCE_WIRE_OK) && o->n < RTE_DIM(o->f)) {
			uroce_wire_ext_get(&pkt, &ext);
			o->f[o->n].opcode = pkt.bth.opcode;
			o->f[o->n].psn = pkt.bth.psn;
			o->f[o->n].syn = ext.aeth.syndrome;
			o->f[o->n].msn = ext.aeth.msn;
			o->f[o->n].orig = ext.atmack_orig;
			o->n++;
		}
		rte_pktmbuf_free(m);
	}
	txb->n = 0;
}

/* A fresh RC pair; the tests talk to B (qb) as A would. */
static struct uroce_qp *
fresh(enum ibv_qp_type type, struct uroce_qp **qa)
{
	struct ut_qp_opts o;
	struct uroce_qp *a = NULL, *b = NULL;

	ut_qp_opts_default(&o, type);
	o.min_rnr_timer = 9;
	o.max_rd_atomic = 2;
	if (!UT_CHECK_EQ(ut_link_pair(L, &o, next_qpn, next_qpn + 1, &a, &b), 0))
		return NULL;
	next_qpn += 2;
	if (qa != NULL)
		*qa = a;
	return b;
}

/* Build a request from A's side and hand it to qb; collect what it says. */
static void
inject(struct uroce_qp *qb, struct uroce_qp *qa, uint8_t opcode, uint32_t psn,
       const struct uroce_ext_fields *ext, const void *payload, uint32_t plen,
       uint16_t pkey, bool ackreq, struct out *o)
{
	static uint8_t frame[9000];
	struct uroce_bth_fields bth = {
		.opcode = opcode, .pkey = pkey, .dqpn = qb->qpn, .psn = psn,
		.ackreq = ackreq,
	};
	struct uroce_ext_fields e0;
	struct uroce_txb txb;
	struct uroce_pkt pkt;
	uint32_t len;

	if (ext == NULL) {
		memset(&e0, 0, sizeof(e0));
		ext = &e0;
	}
	len = uroce_wire_build(frame, sizeof(frame), &qa->path, &bth, ext, payload, plen);
	if (!UT_CHECK(len > 0) ||
	    !UT_CHECK_EQ(uroce_wire_parse(frame, len, 0, &pkt), UROCE_WIRE_OK))
		return;
	ut_txb_init(&txb);
	uroce_qp_rx(qb, &pkt, NULL, L->now, &txb);
	collect(&txb, o);
	while (uroce_qp_tx(qb, L->now, &txb))
		collect(&txb, o);
	collect(&txb, o);
}

static struct uroce_ext_fields
reth(uint64_t va, uint32_t rkey, uint32_t len)
{
	struct uroce_ext_fields e;

	memset(&e, 0, sizeof(e));
	e.reth.va = va;
	e.reth.rkey = rkey;
	e.reth.len = len;
	return e;
}

#define SYN_ACK		0x1f
#define SYN_NAK(code)	(0x60 | (code))

/* The async events B's node saw since the last events_clear(). */
static void
events_clear(void)
{
	L->node[1].nev = 0;
}

/* Exactly one event since events_clear(): ev, naming obj. */
static bool
one_event(enum ibv_event_type ev, const void *obj)
{
	const struct ut_node *n = &L->node[1];

	return UT_CHECK_EQ(n->nev, 1) && UT_CHECK_EQ(n->ev[0], ev) &&
	       UT_CHECK(n->ev_obj[0] == obj);
}

/* One request that must draw one NAK with code at epsn and move qb to ERR,
 * with the affiliated error of that code naming qb (IBTA 11.6.3). */
static void
expect_nak(const char *what, uint8_t opcode, const struct uroce_ext_fields *ext,
	   uint32_t plen, uint8_t code)
{
	static uint8_t data[4096];
	struct uroce_qp *qa, *qb = fresh(IBV_QPT_RC, &qa);
	struct out o = { 0 };
	uint32_t epsn;

	if (qb == NULL)
		return;
	events_clear();
	epsn = qb->attr.rq_psn;
	memset(data, 0x5a, sizeof(data));
	inject(qb, qa, opcode, epsn, ext, data, plen, 0xffff, true, &o);
	UT_CHECK_EQ(o.n, 1);
	UT_CHECK_EQ(o.f[0].opcode, UROCE_OPC_RC_ACK);
	UT_CHECK_EQ(o.f[0].syn, SYN_NAK(code));
	UT_CHECK_EQ(o.f[0].psn, epsn);
	UT_CHECK_EQ(qb->stats.naks_tx[code], 1);
	UT_CHECK_EQ(qb->state, IBV_QPS_ERR);
	one_event(code == 2 ? IBV_EVENT_QP_ACCESS_ERR : IBV_EVENT_QP_REQ_ERR, qb);
	UT_CHECK(guards_ok());
	UT_NOTE("%s", what);
}

static void
test_access(void)
{
	uint64_t rw = (uintptr_t)mem_rw, ro = (uintptr_t)mem_ro, wo = (uintptr_t)mem_wo;
	struct uroce_ext_fields e;
	uint8_t before[64];

	memcpy(before, mem_rw, sizeof(before));
	e = reth(rw, mr_rw->rkey ^ 0x01, 16);
	expect_nak("bad rkey byte", UROCE_OPC_RC_WRITE_ONLY, &e, 16, 2);
	e = reth(rw, mr_rw->rkey + 0x300, 16);
	expect_nak("bad rkey index", UROCE_OPC_RC_WRITE_ONLY, &e, 16, 2);
	e = reth(rw + MEM_LEN - 8, mr_rw->rkey, 16);
	expect_nak("past the end", UROCE_OPC_RC_WRITE_ONLY, &e, 16, 2);
	e = reth(rw - 8, mr_rw->rkey, 16);
	expect_nak("before the start", UROCE_OPC_RC_WRITE_ONLY, &e, 16, 2);
	e = reth(ro, mr_ro->rkey, 16);
	expect_nak("write without REMOTE_WRITE", UROCE_OPC_RC_WRITE_ONLY, &e, 16, 2);
	e = reth(wo, mr_wo->rkey, 16);
	expect_nak("read without REMOTE_READ", UROCE_OPC_RC_READ_REQ, &e, 0, 2);
	e = reth(rw + MEM_LEN - 100, mr_rw->rkey, 200);
	expect_nak("read past the end", UROCE_OPC_RC_READ_REQ, &e, 0, 2);
	memset(&e, 0, sizeof(e));
	e.atmeth.va = rw + 4;
	e.atmeth.rkey = mr_rw->rkey;
	expect_nak("misaligned atomic", UROCE_OPC_RC_FETCH_ADD, &e, 0, 1);
	e.atmeth.va = ro;
	e.atmeth.rkey = mr_ro->rkey;
	expect_nak("atomic without REMOTE_ATOMIC", UROCE_OPC_RC_CMP_SWAP, &e, 0, 2);
	/* opcode sequences */
	e = reth(rw, mr_rw->rkey, 16);
	expect_nak("WRITE MIDDLE first", UROCE_OPC_RC_WRITE_MIDDLE, NULL, 1024, 1);
	expect_nak("SEND LAST first", UROCE_OPC_RC_SEND_LAST, NULL, 16, 1);
	expect_nak("SEND LAST with invalidate first", UROCE_OPC_RC_SEND_LAST_INV,
		   NULL, 16, 1);
	/* a WRITE whose packet is longer than RETH.len */
	e = reth(rw, mr_rw->rkey, 8);
	expect_nak("write longer than RETH", UROCE_OPC_RC_WRITE_ONLY, &e, 16, 1);
	UT_CHECK_MEM(mem_rw, before, sizeof(before));
}

/* WRITE FIRST within RETH.len, then a LAST that runs past it. */
static void
test_write_overrun(void)
{
	static uint8_t data[1024];
	struct uroce_qp *qa, *qb = fresh(IBV_QPT_RC, &qa);
	struct uroce_ext_fields e = reth((uintptr_t)mem_rw, mr_rw->rkey, 1024 + 10);
	struct out o = { 0 };
	uint32_t psn;

	if (qb == NULL)
		return;
	psn = qb->attr.rq_psn;
	memset(mem_rw, PAT, 4096);
	memset(data, 0x77, sizeof(data));
	inject(qb, qa, UROCE_OPC_RC_WRITE_FIRST, psn, &e, data, 1024, 0xffff, false, &o);
	UT_CHECK_EQ(o.n, 0);
	inject(qb, qa, UROCE_OPC_RC_WRITE_LAST, psn + 1, NULL, data, 1024, 0xffff, true, &o);
	UT_CHECK_EQ(o.n, 1);
	UT_CHECK_EQ(o.f[0].syn, SYN_NAK(1));
	UT_CHECK_EQ(o.f[0].psn, psn + 1);
	UT_CHECK_MEM(mem_rw, data, 1024);
	UT_CHECK_EQ(mem_rw[1024], PAT);		/* nothing past RETH.len */
	UT_CHECK_EQ(mem_rw[1024 + 9], PAT);
	UT_CHECK_EQ(mem_rw[2047], PAT);
	UT_CHECK_EQ(qb->state, IBV_QPS_ERR);
	UT_CHECK(guards_ok());
}

/* PSN ahead: one NAK, then silence until epsn; duplicates: re-ACKed, not
 * executed again. Bad P_Key: dropped. */
static void
test_psn(void)
{
	static uint8_t d1[32], d2[32];
	struct uroce_qp *qa, *qb = fresh(IBV_QPT_RC, &qa);
	struct uroce_ext_fields e = reth((uintptr_t)mem_rw + 100, mr_rw->rkey, 32);
	struct out o = { 0 };
	uint32_t epsn;

	if (qb == NULL)
		return;
	events_clear();
	epsn = qb->attr.rq_psn;
	memset(d1, 1, sizeof(d1));
	memset(d2, 2, sizeof(d2));
	memset(mem_rw + 100, 0, 32);
	inject(qb, qa, UROCE_OPC_RC_WRITE_ONLY, epsn + 5, &e, d2, 32, 0xffff, true, &o);
	inject(qb, qa, UROCE_OPC_RC_WRITE_ONLY, epsn + 6, &e, d2, 32, 0xffff, true, &o);
	UT_CHECK_EQ(o.n, 1);
	UT_CHECK_EQ(o.f[0].syn, SYN_NAK(0));
	UT_CHECK_EQ(o.f[0].psn, epsn);
	UT_CHECK_EQ(qb->stats.out_of_seq, 2);
	UT_CHECK_EQ(qb->stats.naks_tx[0], 1);
	UT_CHECK_EQ(mem_rw[100], 0);
	/* epsn: executed and ACKed */
	o.n = 0;
	inject(qb, qa, UROCE_OPC_RC_WRITE_ONLY, epsn, &e, d1, 32, 0xffff, true, &o);
	UT_CHECK_EQ(o.n, 1);
	UT_CHECK_EQ(o.f[0].syn & 0xe0, 0);
	UT_CHECK_EQ(o.f[0].psn, epsn);
	UT_CHECK_EQ(o.f[0].msn, 1);
	UT_CHECK_MEM(mem_rw + 100, d1, 32);
	/* the same PSN again with other data: ACKed, memory unchanged */
	o.n = 0;
	inject(qb, qa, UROCE_OPC_RC_WRITE_ONLY, epsn, &e, d2, 32, 0xffff, true, &o);
	UT_CHECK_EQ(o.n, 1);
	UT_CHECK_EQ(o.f[0].syn & 0xe0, 0);
	UT_CHECK_EQ(o.f[0].psn, epsn);
	UT_CHECK_EQ(qb->stats.dup_reqs, 1);
	UT_CHECK_MEM(mem_rw + 100, d1, 32);
	/* ahead again after progress: a new NAK is allowed */
	o.n = 0;
	inject(qb, qa, UROCE_OPC_RC_WRITE_ONLY, epsn + 3, &e, d2, 32, 0xffff, true, &o);
	UT_CHECK_EQ(o.n, 1);
	UT_CHECK_EQ(o.f[0].psn, epsn + 1);
	/* a P_Key of another partition: dropped, counted, no answer */
	o.n = 0;
	inject(qb, qa, UROCE_OPC_RC_WRITE_ONLY, epsn + 1, &e, d2, 32, 0x1234, true, &o);
	UT_CHECK_EQ(o.n, 0);
	UT_CHECK_EQ(qb->stats.drops, 1);
	UT_CHECK_MEM(mem_rw + 100, d1, 32);
	/* the limited member of the default partition is accepted */
	inject(qb, qa, UROCE_OPC_RC_WRITE_ONLY, epsn + 1, &e, d2, 32, 0x7fff, true, &o);
	UT_CHECK_EQ(o.n, 1);
	UT_CHECK_MEM(mem_rw + 100, d2, 32);
	UT_CHECK_EQ(qb->state, IBV_QPS_RTS);
	/* a zero-length WRITE needs no key (C9-88) */
	e = reth(0, 0, 0);
	o.n = 0;
	inject(qb, qa, UROCE_OPC_RC_WRITE_ONLY, epsn + 2, &e, NULL, 0, 0xffff, true, &o);
	UT_CHECK_EQ(o.n, 1);
	UT_CHECK_EQ(o.f[0].syn & 0xe0, 0);
	UT_CHECK_EQ(L->node[1].nev, 0);	/* sequence NAKs, drops: no event */
	UT_CHECK(guards_ok());
}

/* SEND: RNR NAK without a receive (PSN not advanced), too long for the
 * receive: NAK invalid request and IBV_WC_LOC_LEN_ERR. */
static void
test_send(void)
{
	static uint8_t data[100];
	struct uroce_qp *qa, *qb = fresh(IBV_QPT_RC, &qa);
	struct ibv_sge sge = { (uintptr_t)mem_rw, 16, 0 };
	struct ibv_recv_wr rwr = { .wr_id = 42, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct out o = { 0 };
	struct ibv_wc wc;
	uint32_t epsn;

	if (qb == NULL)
		return;
	sge.lkey = mr_rw->lkey;
	events_clear();
	epsn = qb->attr.rq_psn;
	inject(qb, qa, UROCE_OPC_RC_SEND_ONLY, epsn, NULL, data, 100, 0xffff, true, &o);
	UT_CHECK_EQ(o.n, 1);
	UT_CHECK_EQ(o.f[0].syn, 0x20 | 9);	/* RNR NAK, min_rnr_timer */
	UT_CHECK_EQ(o.f[0].psn, epsn);
	UT_CHECK_EQ(qb->stats.rnr_naks_tx, 1);
	UT_CHECK_EQ(qb->state, IBV_QPS_RTS);
	UT_CHECK_EQ(uroce_qp_post_recv(qb, &rwr, &bad), 0);
	o.n = 0;
	inject(qb, qa, UROCE_OPC_RC_SEND_ONLY, epsn, NULL, data, 100, 0xffff, true, &o);
	UT_CHECK_EQ(o.n, 1);
	UT_CHECK_EQ(o.f[0].syn, SYN_NAK(1));
	UT_CHECK_EQ(uroce_cq_poll(qb->recv_cq, 1, &wc), 1);
	UT_CHECK_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
	UT_CHECK_EQ(wc.wr_id, 42);
	UT_CHECK_EQ(qb->state, IBV_QPS_ERR);
	UT_CHECK_EQ(L->node[1].nev, 0);	/* the completion reports it */
	UT_CHECK(guards_ok());
}

/* A READ accepted while its region was registered, whose response finds
 * the region gone (IBTA 10.6.3: the key is checked again as the data is
 * read): NAK Remote Access Error, the QP to ERR, IBV_EVENT_QP_ACCESS_ERR
 * naming it. */
static void
test_read_gone(void)
{
	static uint8_t frame[256];
	struct uroce_qp *qa, *qb = fresh(IBV_QPT_RC, &qa);
	struct uroce_ext_fields e;
	struct uroce_bth_fields bth;
	struct uroce_mr *mr;
	struct uroce_txb txb;
	struct uroce_pkt pkt;
	struct out o = { 0 };
	uint32_t len;

	if (qb == NULL)
		return;
	mr = ut_node_reg(&L->node[1], mem_rw + 8192, 4096, IBV_ACCESS_REMOTE_READ);
	if (!UT_CHECK(mr != NULL))
		return;
	events_clear();
	e = reth((uintptr_t)mem_rw + 8192, mr->rkey, 512);
	bth = (struct uroce_bth_fields){ .opcode = UROCE_OPC_RC_READ_REQ,
		.pkey = 0xffff, .dqpn = qb->qpn, .psn = qb->attr.rq_psn };
	len = uroce_wire_build(frame, sizeof(frame), &qa->path, &bth, &e, NULL, 0);
	if (!UT_CHECK(len > 0) ||
	    !UT_CHECK_EQ(uroce_wire_parse(frame, len, 0, &pkt), UROCE_WIRE_OK))
		return;
	/* a full batch: the response waits */
	ut_txb_init(&txb);
	txb.cap = 0;
	uroce_qp_rx(qb, &pkt, NULL, L->now, &txb);
	UT_CHECK_EQ(txb.n, 0);
	UT_CHECK_EQ(L->node[1].nev, 0);
	UT_CHECK_EQ(uroce_mr_dereg(L->node[1].mrs, mr), 0);
	ut_txb_init(&txb);
	while (uroce_qp_tx(qb, L->now, &txb))
		collect(&txb, &o);
	collect(&txb, &o);
	if (UT_CHECK_EQ(o.n, 1))
		UT_CHECK_EQ(o.f[0].syn, SYN_NAK(2));
	UT_CHECK_EQ(qb->state, IBV_QPS_ERR);
	one_event(IBV_EVENT_QP_ACCESS_ERR, qb);
}

/* B taken to RTR only (its side of ut_qp_up() without the RTS step). */
static struct uroce_qp *
fresh_rtr(struct uroce_qp **qa)
{
	struct ut_qp_opts o;
	struct ibv_qp_attr a;
	struct uroce_qp *b = NULL;

	ut_qp_opts_default(&o, IBV_QPT_RC);
	if (!UT_CHECK_EQ(ut_node_qp(&L->node[0], &o, next_qpn, qa), 0) ||
	    !UT_CHECK_EQ(ut_node_qp(&L->node[1], &o, next_qpn + 1, &b), 0) ||
	    !UT_CHECK_EQ(ut_qp_up(L, 0, *qa, next_qpn + 1, &o), 0))
		return NULL;
	next_qpn += 2;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (!UT_CHECK_EQ(uroce_qp_modify(b, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, L->now), 0))
		return NULL;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = o.path_mtu;
	a.dest_qp_num = (*qa)->qpn;
	a.rq_psn = o.psn[0];
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, L->node[0].env.gid[0].raw, 16);
	if (!UT_CHECK_EQ(uroce_qp_modify(b, &a, IBV_QP_STATE | IBV_QP_AV |
					 IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					 IBV_QP_MIN_RNR_TIMER, L->now), 0))
		return NULL;
	return b;
}

/* IBV_EVENT_COMM_EST: the first request a QP in RTR receives raises it,
 * naming the QP; the next request, and those after RTS, raise nothing. A
 * QP in RTR answers as one in RTS does. */
static void
test_comm_est(void)
{
	static uint8_t data[16];
	struct uroce_qp *qa, *qb = fresh_rtr(&qa);
	struct uroce_ext_fields e = reth((uintptr_t)mem_rw + 200, mr_rw->rkey, 16);
	struct ibv_qp_attr a;
	struct out o = { 0 };
	uint32_t epsn;

	if (qb == NULL)
		return;
	events_clear();
	UT_CHECK_EQ(qb->state, IBV_QPS_RTR);
	epsn = qb->attr.rq_psn;
	memset(data, 0x3c, sizeof(data));
	inject(qb, qa, UROCE_OPC_RC_WRITE_ONLY, epsn, &e, data, 16, 0xffff, true, &o);
	UT_CHECK_EQ(o.n, 1);
	UT_CHECK_EQ(o.f[0].syn & 0xe0, 0);
	UT_CHECK_MEM(mem_rw + 200, data, 16);
	one_event(IBV_EVENT_COMM_EST, qb);
	inject(qb, qa, UROCE_OPC_RC_WRITE_ONLY, epsn + 1, &e, data, 16, 0xffff, true, &o);
	UT_CHECK_EQ(o.n, 2);
	UT_CHECK_EQ(L->node[1].nev, 1);		/* not again */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	UT_CHECK_EQ(uroce_qp_modify(qb, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
				    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC,
				    L->now), 0);
	inject(qb, qa, UROCE_OPC_RC_WRITE_ONLY, epsn + 2, &e, data, 16, 0xffff, true, &o);
	UT_CHECK_EQ(o.n, 3);
	UT_CHECK_EQ(L->node[1].nev, 1);
	UT_CHECK_EQ(qb->state, IBV_QPS_RTS);
}

/* READ and atomics through the responder alone: responses, the limit of
 * max_dest_rd_atomic, an atomic duplicate answered from the cache. */
static void
test_read_atomic(void)
{
	struct uroce_qp *qa, *qb = fresh(IBV_QPT_RC, &qa);
	struct uroce_ext_fields e;
	struct out o = { 0 };
	uint64_t *tgt = (uint64_t *)(mem_rw + 4096);
	uint32_t epsn;

	if (qb == NULL)
		return;
	epsn = qb->attr.rq_psn;
	*tgt = 10;
	memset(&e, 0, sizeof(e));
	e.atmeth.va = (uintptr_t)tgt;
	e.atmeth.rkey = mr_rw->rkey;
	e.atmeth.swap_add = 3;
	inject(qb, qa, UROCE_OPC_RC_FETCH_ADD, epsn, &e, NULL, 0, 0xffff, false, &o);
	inject(qb, qa, UROCE_OPC_RC_FETCH_ADD, epsn, &e, NULL, 0, 0xffff, false, &o);
	UT_CHECK_EQ(o.n, 2);
	UT_CHECK_EQ(o.f[0].opcode, UROCE_OPC_RC_ATOMIC_ACK);
	UT_CHECK_EQ(o.f[0].orig, 10);
	UT_CHECK_EQ(o.f[1].orig, 10);
	UT_CHECK_EQ(*tgt, 13);
	/* a READ of 2.5 MTU: FIRST, MIDDLE, LAST */
	e = reth((uintptr_t)mem_rw, mr_rw->rkey, 2560);
	o.n = 0;
	inject(qb, qa, UROCE_OPC_RC_READ_REQ, epsn + 1, &e, NULL, 0, 0xffff, false, &o);
	UT_CHECK_EQ(o.n, 3);
	UT_CHECK_EQ(o.f[0].opcode, UROCE_OPC_RC_READ_RESP_FIRST);
	UT_CHECK_EQ(o.f[1].opcode, UROCE_OPC_RC_READ_RESP_MIDDLE);
	UT_CHECK_EQ(o.f[2].opcode, UROCE_OPC_RC_READ_RESP_LAST);
	UT_CHECK_EQ(o.f[2].psn, epsn + 3);
	/* the READ took 3 PSNs: the next request is epsn + 4 */
	e = reth(0, 0, 0);
	o.n = 0;
	inject(qb, qa, UROCE_OPC_RC_WRITE_ONLY, epsn + 4, &e, NULL, 0, 0xffff, true, &o);
	UT_CHECK_EQ(o.n, 1);
	UT_CHECK_EQ(o.f[0].syn & 0xe0, 0);
	UT_CHECK_EQ(o.f[0].psn, epsn + 4);
	UT_CHECK_EQ(qb->stats.out_of_seq, 0);
	UT_CHECK_EQ(qb->state, IBV_QPS_RTS);
}

/* ---------------------------------------------------------------------------
 * UC and UD over the link.
 */
struct drop_nth {
	int from;
	uint32_t psn;
	unsigned int dropped;
};

static bool
drop_psn(struct ut_link *l, int from, const struct uroce_pkt *pkt, void *ctx)
{
	struct drop_nth *d = ctx;

	(void)l;
	if (from == d->from && pkt->bth.psn == d->psn && d->dropped == 0) {
		d->dropped++;
		return false;
	}
	return true;
}

static void
test_uc(void)
{
	static uint8_t src1[3000], src2[500];
	struct uroce_qp *qa, *qb = fresh(IBV_QPT_UC, &qa);
	struct drop_nth d = { .from = 0 };
	struct ibv_sge sge[2], rsge[2];
	struct ibv_send_wr wr[2], *bad;
	struct ibv_recv_wr rwr[2], *rbad;
	struct ibv_wc wc[4];
	int i, n;

	if (qb == NULL)
		return;
	d.psn = (qa->attr.sq_psn + 1) & 0xffffff;	/* SEND_MIDDLE of message 1 */
	memset(src1, 0x11, sizeof(src1));
	memset(src2, 0x22, sizeof(src2));
	memcpy(mem_ro, src1, sizeof(src1));
	memcpy(mem_ro + 4096, src2, sizeof(src2));
	memset(mem_rw, 0, 8192);
	for (i = 0; i < 2; i++) {
		memset(&wr[i], 0, sizeof(wr[i]));
		sge[i].addr = (uintptr_t)mem_ro + 4096 * i;
		sge[i].length = i ? sizeof(src2) : sizeof(src1);
		sge[i].lkey = mr_ro_a->lkey;
		wr[i].wr_id = 1 + i;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i ? NULL : &wr[1];
		memset(&rwr[i], 0, sizeof(rwr[i]));
		rsge[i].addr = (uintptr_t)mem_rw + 4096 * i;
		rsge[i].length = 4096;
		rsge[i].lkey = mr_rw->lkey;
		rwr[i].wr_id = 10 + i;
		rwr[i].sg_list = &rsge[i];
		rwr[i].num_sge = 1;
		rwr[i].next = i ? NULL : &rwr[1];
	}
	UT_CHECK_EQ(uroce_qp_post_recv(qb, rwr, &rbad), 0);
	L->tap = drop_psn;
	L->tap_ctx = &d;
	UT_CHECK_EQ(uroce_qp_post_send(qa, wr, &bad), 0);
	ut_link_settle(L, ut_link_us(1000));
	L->tap = NULL;
	UT_CHECK_EQ(d.dropped, 1);
	n = uroce_cq_poll(qa->send_cq, 4, wc);
	UT_CHECK_EQ(n, 2);	/* UC completes when sent */
	for (i = 0; i < n; i++)
		UT_CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
	n = uroce_cq_poll(qb->recv_cq, 4, wc);
	UT_CHECK_EQ(n, 1);
	UT_CHECK_EQ(wc[0].wr_id, 10);	/* the first WQE, used again */
	UT_CHECK_EQ(wc[0].byte_len, sizeof(src2));
	UT_CHECK_MEM(mem_rw, src2, sizeof(src2));
	UT_CHECK(qb->stats.drops >= 1);
	UT_CHECK_EQ(qb->stats.acks_tx + qb->stats.naks_tx[0], 0);
	UT_CHECK_EQ(qb->state, IBV_QPS_RTS);
	UT_CHECK(guards_ok());
}

static void
ud_case(uint8_t sgid)
{
	static uint8_t src[100];
	struct ut_qp_opts o;
	struct uroce_qp *qa, *qb;
	struct uroce_ah ah;
	struct ibv_sge sge = { (uintptr_t)mem_ro, sizeof(src), 0 };
	struct ibv_sge rsge[3];
	struct ibv_send_wr wr[4], *bad;
	struct ibv_recv_wr rwr[3], *rbad;
	struct ibv_wc wc[4];
	const struct uroce_qp_env *eb;
	uint8_t *g;
	int i, n;

	ut_qp_opts_default(&o, IBV_QPT_UD);
	o.qkey = 0x22222222;
	if (!UT_CHECK_EQ(ut_link_pair(L, &o, next_qpn, next_qpn + 1, &qa, &qb), 0))
		return;
	next_qpn += 2;
	eb = qb->env;
	ut_link_ah(L, 0, sgid, &ah);
	for (i = 0; i < (int)sizeof(src); i++)
		src[i] = (uint8_t)(i * 7);
	memcpy(mem_ro, src, sizeof(src));
	memset(mem_rw, 0, 3 * 1024);
	sge.lkey = mr_ro_a->lkey;
	for (i = 0; i < 3; i++) {
		memset(&rwr[i], 0, sizeof(rwr[i]));
		rsge[i] = (struct ibv_sge){ (uintptr_t)mem_rw + 1024 * i, 200, mr_rw->lkey };
		rwr[i].wr_id = 20 + i;
		rwr[i].sg_list = &rsge[i];
		rwr[i].num_sge = 1;
		rwr[i].next = i < 2 ? &rwr[i + 1] : NULL;
	}
	UT_CHECK_EQ(uroce_qp_post_recv(qb, rwr, &rbad), 0);
	for (i = 0; i < 3; i++) {
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = 1 + i;
		wr[i].opcode = IBV_WR_SEND_WITH_IMM;
		wr[i].imm_data = rte_cpu_to_be_32(0xabc0 + i);
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.ud.ah = (struct ibv_ah *)&ah;
		wr[i].wr.ud.remote_qpn = qb->qpn;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[0].wr.ud.remote_qkey = o.qkey;
	wr[1].wr.ud.remote_qkey = o.qkey + 1;	/* wrong: dropped */
	wr[2].wr.ud.remote_qkey = 0x80000000;	/* the sender's own */
	UT_CHECK_EQ(uroce_qp_post_send(qa, wr, &bad), 0);
	ut_link_settle(L, ut_link_us(1000));
	UT_CHECK_EQ(uroce_cq_poll(qa->send_cq, 4, wc), 3);
	n = uroce_cq_poll(qb->recv_cq, 4, wc);
	UT_CHECK_EQ(n, 2);
	UT_CHECK_EQ(qb->stats.drops, 1);
	for (i = 0; i < n; i++) {
		UT_CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wc[i].wr_id, 20u + i);
		UT_CHECK_EQ(wc[i].byte_len, 40 + sizeof(src));
		UT_CHECK_EQ(wc[i].src_qp, qa->qpn);
		UT_CHECK_EQ(wc[i].wc_flags, IBV_WC_GRH | IBV_WC_WITH_IMM);
		UT_CHECK_EQ(wc[i].imm_data, rte_cpu_to_be_32(0xabc0 + 2 * i));
		UT_CHECK_MEM(mem_rw + 1024 * i + 40, src, sizeof(src));
	}
	g = mem_rw;
	if (sgid == 0) {
		static const uint8_t zero[20];

		UT_CHECK_MEM(g, zero, 20);
		UT_CHECK_EQ(g[20], 0x45);
		UT_CHECK_MEM(g + 20 + 12, &qa->env->gid[0].raw[12], 4);
		UT_CHECK_MEM(g + 20 + 16, &eb->gid[0].raw[12], 4);
	} else {
		UT_CHECK_EQ(g[0] >> 4, 6);
		UT_CHECK_MEM(g + 8, qa->env->gid[1].raw, 16);
		UT_CHECK_MEM(g + 24, eb->gid[1].raw, 16);
	}
	/* longer than the port MTU: IBV_WC_LOC_LEN_ERR, the SQ in error */
	sge.length = uroce_mtu_bytes(eb->lim.active_mtu) + 1;
	wr[0].next = NULL;
	UT_CHECK_EQ(uroce_qp_post_send(qa, wr, &bad), 0);
	ut_link_settle(L, ut_link_us(1000));
	UT_CHECK_EQ(uroce_cq_poll(qa->send_cq, 4, wc), 1);
	UT_CHECK_EQ(wc[0].status, IBV_WC_LOC_LEN_ERR);
	UT_CHECK_EQ(qa->state, IBV_QPS_SQE);
	UT_CHECK(guards_ok());
	UT_NOTE("UD over %s", sgid ? "IPv6" : "IPv4");
}

int
main(int argc, char **argv)
{
	(void)argc;
	if (ut_eal_start(argv[0]) < 0)
		return 1;
	L = calloc(1, sizeof(*L));
	if (L == NULL || ut_link_init(L, 77, IBV_MTU_1024) != 0)
		return 1;
	memset(raw_rw, PAT, sizeof(raw_rw));
	memset(raw_ro, PAT, sizeof(raw_ro));
	memset(raw_wo, PAT, sizeof(raw_wo));
	mr_rw = ut_node_reg(&L->node[1], mem_rw, MEM_LEN, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC);
	mr_ro = ut_node_reg(&L->node[1], mem_ro, MEM_LEN, IBV_ACCESS_REMOTE_READ);
	mr_wo = ut_node_reg(&L->node[1], mem_wo, MEM_LEN,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!UT_CHECK(mr_rw && mr_ro && mr_wo))
		return ut_summary();
	/* A's side sends from the same memory in the UC/UD tests: register
	 * it there too (same PD rules, its own table). */
	mr_ro_a = ut_node_reg(&L->node[0], mem_ro, MEM_LEN, IBV_ACCESS_REMOTE_READ);
	test_access();
	UT_NOTE("access");
	test_write_overrun();
	UT_NOTE("write overrun");
	test_psn();
	UT_NOTE("psn");
	test_send();
	UT_NOTE("send");
	test_comm_est();
	UT_NOTE("comm_est");
	test_read_gone();
	UT_NOTE("read response after the region went");
	test_read_atomic();
	UT_NOTE("read/atomic");
	test_uc();
	UT_NOTE("uc");
	ud_case(0);
	ud_case(1);
	ut_link_fini(L);
	free(L);
	return ut_summary();
}
