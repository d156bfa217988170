/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * RAW_PACKET QPs and flow steering end to end (lib/transport/raw.c,
 * lib/engine/flow.c): two devices joined by a ringlink, a raw QP on A and
 * two on B. A sends UDP, TCP and other frames with various MACs, addresses
 * and ports; B's rules steer them. Checked: exactly the matching frames
 * arrive, byte-exact, in order, with byte_len the frame's length, in the
 * QP the highest-priority rule names; the others are counted (non_roce);
 * destroy_flow stops delivery; no receive WQE is a counted drop; a buffer
 * too small is IBV_WC_LOC_LEN_ERR; raw sends of 14 bytes .. MTU + 14 (+4
 * tagged) go, shorter or longer ones complete with IBV_WC_LOC_LEN_ERR and
 * stop the send queue (SQE); a frame to the other local device's MAC takes
 * the link, never the RoCE loopback; RoCEv2 frames never reach raw rules;
 * bad attrs create nothing; a QP with rules cannot be destroyed.
 *
 * Scenarios: native progress, and two engine lcores with B's QPs owned by
 * the lcore that does not receive the frames (hand-offs).
 */
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "uroce_engine.h"
#include "uroce_test.h"
#include "uroce_test_eal.h"
#include "uroce_test_engine.h"
#include "uroce_test_frame.h"

#define SLOT		2048
#define NSLOT		32
#define BUF_SIZE	(SLOT * NSLOT)
#define MTU		1500

struct rq {			/* a raw QP with its own CQ and buffers */
	struct uroce_cq *cq;
	struct uroce_qp *qp;
	struct uroce_mr *mr;
	uint8_t *buf;
	unsigned int next;	/* next receive slot */
};

struct side {
	struct uroce_dev *dev;
	struct uroce_pd *pd;
	uint8_t mac[6];
};

static uint64_t
non_roce(const struct side *s)
{
	struct uroce_port_stats ps;

	uroce_port_stats_get(uroce_dev_port(s->dev), &ps);
	return ps.non_roce;
}

static uint64_t
qp_drops(struct rq *q)
{
	struct uroce_qp_stats st;

	uroce_dev_qp_stats(q->qp, &st);
	return st.drops;
}

/* Wait until fn(arg) reaches want. */
static bool
wait_count(uint64_t (*fn)(void *), void *arg, uint64_t want)
{
	double end = ut_now_s() + UT_WAIT_S;

	while (fn(arg) < want && ut_now_s() < end && !ut_stuck)
		ut_progress();
	return fn(arg) == want;
}

static uint64_t non_roce_fn(void *s) { return non_roce(s); }
static uint64_t drops_fn(void *q) { return qp_drops(q); }

static bool
rq_open(struct rq *q, struct side *s)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
	};
	struct ibv_qp_attr a;
	bool ok = true;

	memset(q, 0, sizeof(*q));
	q->buf = aligned_alloc(4096, BUF_SIZE);
	ok &= UT_CHECK(q->buf != NULL);
	ok &= UT_CHECK_EQ(uroce_dev_cq_create(s->dev, 256, q, &q->cq), 0);
	ok &= UT_CHECK_EQ(uroce_dev_mr_reg(s->pd, q->buf, BUF_SIZE,
					   (uintptr_t)q->buf,
					   IBV_ACCESS_LOCAL_WRITE, &q->mr), 0);
	ok &= UT_CHECK_EQ(uroce_dev_qp_create(s->pd, q->cq, q->cq, &init, q,
					      &q->qp), 0);
	if (!ok)
		return false;
	/* RAW_PACKET: RESET->INIT takes the port, then state only. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	ok &= UT_CHECK_EQ(uroce_dev_qp_modify(q->qp, &a, IBV_QP_STATE | IBV_QP_PORT), 0);
	a.qp_state = IBV_QPS_RTR;
	ok &= UT_CHECK_EQ(uroce_dev_qp_modify(q->qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	ok &= UT_CHECK_EQ(uroce_dev_qp_modify(q->qp, &a, IBV_QP_STATE), 0);
	return ok;
}

static void
rq_close(struct rq *q)
{
	if (q->qp != NULL)
		UT_CHECK_EQ(uroce_dev_qp_destroy(q->qp), 0);
	if (q->mr != NULL)
		UT_CHECK_EQ(uroce_dev_mr_dereg(q->mr), 0);
	if (q->cq != NULL)
		UT_CHECK_EQ(uroce_dev_cq_destroy(q->cq), 0);
	free(q->buf);
	memset(q, 0, sizeof(*q));
}

/* Post a receive of len bytes into the next slot; wr_id is the slot. */
static void
post_recv(struct rq *q, uint32_t len)
{
	unsigned int slot = q->next++ % NSLOT;
	struct ibv_sge sge = {
		.addr = (uintptr_t)q->buf + slot * SLOT, .length = len,
		.lkey = q->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	UT_CHECK_EQ(uroce_qp_post_recv(q->qp, &wr, &bad), 0);
}

/* Send len bytes from slot 0 of q (two SGEs when long enough). */
static void
post_send(struct rq *q, uint32_t len, uint64_t wr_id)
{
	uint32_t l1 = len > 40 ? 30 : len;
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)q->buf, .length = l1, .lkey = q->mr->lkey },
		{ .addr = (uintptr_t)q->buf + l1, .length = len - l1,
		  .lkey = q->mr->lkey },
	};
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = sge;
	wr.num_sge = len > 40 ? 2 : 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	UT_CHECK_EQ(uroce_qp_post_send(q->qp, &wr, &bad), 0);
}

/* Send frame fr from a; expect it in dst (NULL: dropped, counted). */
static void
send_expect(struct rq *a, const struct ut_frame *fr, struct rq *dst,
	    struct side *b, uint8_t seed)
{
	uint64_t nr0 = non_roce(b);
	uint32_t len = ut_frame_build(fr, a->buf, seed);
	struct ibv_wc wc;
	unsigned int slot;

	if (dst != NULL) {
		slot = dst->next % NSLOT;
		memset(dst->buf + slot * SLOT, 0, SLOT);
		post_recv(dst, SLOT);
	}
	post_send(a, len, 1000 + seed);
	if (UT_CHECK(ut_wait_wc(a->cq, &wc))) {
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wc.opcode, IBV_WC_SEND);
		UT_CHECK_EQ(wc.wr_id, 1000 + seed);
	}
	if (dst == NULL) {
		UT_CHECK(wait_count(non_roce_fn, b, nr0 + 1));
		return;
	}
	if (UT_CHECK(ut_wait_wc(dst->cq, &wc))) {
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wc.opcode, IBV_WC_RECV);
		UT_CHECK_EQ(wc.qp_num, dst->qp->qpn);
		UT_CHECK_EQ(wc.wr_id, slot);
		UT_CHECK_EQ(wc.byte_len, len);
		UT_CHECK_MEM(dst->buf + slot * SLOT, a->buf, len);
	}
	UT_CHECK_EQ(non_roce(b), nr0);
}

static struct uroce_flow *
flow(struct rq *q, const struct ut_flow *f)
{
	struct uroce_flow *fl = NULL;

	UT_CHECK_EQ(uroce_dev_flow_create(q->qp, &f->attr, &fl), 0);
	return fl;
}

static struct ut_frame
frame(const uint8_t *dmac, const uint8_t *smac, uint8_t proto, uint32_t dip,
      uint16_t dport, uint32_t len)
{
	struct ut_frame fr = {
		.vlan = -1, .ip = 4, .sip = 0x0a000001, .dip = dip,
		.proto = proto, .sport = 4321, .dport = dport, .len = len,
	};

	memcpy(fr.dmac, dmac, 6);
	memcpy(fr.smac, smac, 6);
	return fr;
}

/* Steering: which frames arrive where; priority; destroy_flow. */
static void
check_steering(struct side *sa, struct side *sb, struct rq *a, struct rq *b1,
	       struct rq *b2)
{
	struct uroce_flow *f1, *f2, *f3, *f4, *fv;
	static const uint8_t other[6] = { 0x02, 0x55, 0, 0, 0, 0x99 };
	struct ut_frame fr;
	struct ut_flow f;

	/* f1: B's MAC, 10.0.0.2, UDP 5000 -> b1 (priority 5) */
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 5);
	ut_flow_eth(&f, sb->mac, 0, -1);
	ut_flow_ipv4(&f, 0, 0x0a000002);
	ut_flow_l4(&f, false, 0, 5000);
	f1 = flow(b1, &f);
	/* f2: B's MAC, TCP 80 -> b2 (priority 1) */
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 1);
	ut_flow_eth(&f, sb->mac, 0, -1);
	ut_flow_l4(&f, true, 0, 80);
	f2 = flow(b2, &f);
	/* Overlapping on UDP 6000: f3 (priority 0) -> b2 beats f4 (7) -> b1. */
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 7);
	ut_flow_l4(&f, false, 0, 6000);
	f4 = flow(b1, &f);
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_l4(&f, false, 0, 6000);
	f3 = flow(b2, &f);
	/* VLAN 5 frames of any kind -> b1 */
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 3);
	ut_flow_eth(&f, NULL, 0, 5);
	fv = flow(b1, &f);

	fr = frame(sb->mac, sa->mac, 17, 0x0a000002, 5000, 100);
	send_expect(a, &fr, b1, sb, 1);
	fr.len = 60;
	send_expect(a, &fr, b1, sb, 2);
	fr.dport = 5001;			/* port differs */
	send_expect(a, &fr, NULL, sb, 3);
	fr = frame(sb->mac, sa->mac, 17, 0x0a000003, 5000, 200);
	send_expect(a, &fr, NULL, sb, 4);	/* address differs */
	fr = frame(other, sa->mac, 17, 0x0a000002, 5000, 200);
	send_expect(a, &fr, NULL, sb, 5);	/* MAC differs */
	fr = frame(sb->mac, sa->mac, 6, 0x0a000002, 80, 300);
	send_expect(a, &fr, b2, sb, 6);		/* TCP 80 */
	fr.proto = 17;
	send_expect(a, &fr, NULL, sb, 7);	/* UDP 80 */
	fr = frame(sb->mac, sa->mac, 6, 0x0a000002, 5000, 300);
	send_expect(a, &fr, NULL, sb, 8);	/* TCP 5000 */
	fr = frame(other, sa->mac, 17, 0x0a0000fe, 6000, 700);
	send_expect(a, &fr, b2, sb, 9);		/* priority 0 wins */
	fr = frame(sb->mac, sa->mac, 17, 0x0a000002, 5000, MTU + 14);
	send_expect(a, &fr, b1, sb, 10);	/* full size */
	fr.vlan = 5;
	fr.dport = 1;
	fr.len = MTU + 18;
	send_expect(a, &fr, b1, sb, 11);	/* tagged, full size */
	fr.vlan = 6;
	send_expect(a, &fr, NULL, sb, 12);
	fr = frame(sb->mac, sa->mac, 0, 0, 0, 14);
	fr.ip = 0;
	fr.ether_type = 0x88b5;
	send_expect(a, &fr, NULL, sb, 13);	/* a bare header */
	UT_NOTE("steering");

	UT_CHECK_EQ(uroce_dev_flow_destroy(f3), 0);
	fr = frame(other, sa->mac, 17, 0x0a0000fe, 6000, 700);
	send_expect(a, &fr, b1, sb, 14);	/* now f4 */
	UT_CHECK_EQ(uroce_dev_flow_destroy(f4), 0);
	send_expect(a, &fr, NULL, sb, 15);
	UT_CHECK_EQ(uroce_dev_flow_destroy(f1), 0);
	fr = frame(sb->mac, sa->mac, 17, 0x0a000002, 5000, 100);
	send_expect(a, &fr, NULL, sb, 16);
	/* b1 still has fv: it cannot go. */
	UT_CHECK_EQ(uroce_dev_qp_destroy(b1->qp), -EBUSY);
	UT_CHECK_EQ(uroce_dev_flow_destroy(fv), 0);
	UT_CHECK_EQ(uroce_dev_flow_destroy(f2), 0);
	fr = frame(sb->mac, sa->mac, 6, 0x0a000002, 80, 300);
	send_expect(a, &fr, NULL, sb, 17);
	UT_NOTE("destroy_flow");
}

/* ALL_DEFAULT catches what nothing else took, but never RoCEv2. */
static void
check_defaults(struct side *sa, struct side *sb, struct rq *a, struct rq *b2)
{
	struct uroce_dev_stats d0, d1;
	struct uroce_flow *fd, *fm;
	struct ut_frame fr;
	struct ut_flow f;
	uint64_t nr0;

	ut_flow_init(&f, IBV_FLOW_ATTR_ALL_DEFAULT, 0);
	fd = flow(b2, &f);
	fr = frame(sb->mac, sa->mac, 17, 0x0a000002, 9999, 128);
	send_expect(a, &fr, b2, sb, 20);
	/* UDP 4791 is the stack's: parsed as RoCEv2, never steered. */
	uroce_dev_stats_get(sb->dev, &d0);
	nr0 = non_roce(sb);
	fr.dport = 4791;
	post_send(a, ut_frame_build(&fr, a->buf, 21), 21);
	{
		struct ibv_wc wc;

		UT_CHECK(ut_wait_wc(a->cq, &wc) && wc.status == IBV_WC_SUCCESS);
	}
	{
		double end = ut_now_s() + UT_WAIT_S;

		do {
			ut_progress();
			uroce_dev_stats_get(sb->dev, &d1);
		} while (d1.rx_pkts == d0.rx_pkts && ut_now_s() < end);
	}
	UT_CHECK_EQ(d1.rx_pkts, d0.rx_pkts + 1);
	UT_CHECK(d1.wire.verdict[UROCE_WIRE_OK] == d0.wire.verdict[UROCE_WIRE_OK]);
	UT_CHECK_EQ(non_roce(sb), nr0);
	UT_CHECK_EQ(uroce_cq_poll(b2->cq, 1, &(struct ibv_wc){ 0 }), 0);
	UT_CHECK_EQ(uroce_dev_flow_destroy(fd), 0);
	/* MC_DEFAULT: multicast only. */
	ut_flow_init(&f, IBV_FLOW_ATTR_MC_DEFAULT, 0);
	fm = flow(b2, &f);
	fr = frame(sb->mac, sa->mac, 17, 0x0a000002, 9999, 128);
	send_expect(a, &fr, NULL, sb, 22);
	fr.dmac[0] = 0x01;
	send_expect(a, &fr, b2, sb, 23);
	UT_CHECK_EQ(uroce_dev_flow_destroy(fm), 0);
	UT_NOTE("default rules");
}

/* No WQE: dropped and counted; a short buffer: IBV_WC_LOC_LEN_ERR. */
static void
check_recv_errors(struct side *sa, struct side *sb, struct rq *a,
		  struct rq *b1)
{
	struct uroce_flow *fl;
	struct ut_frame fr;
	struct ut_flow f;
	struct ibv_wc wc;
	uint64_t d0 = qp_drops(b1);

	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_eth(&f, sb->mac, 0, -1);
	fl = flow(b1, &f);
	fr = frame(sb->mac, sa->mac, 17, 0x0a000002, 5000, 100);
	post_send(a, ut_frame_build(&fr, a->buf, 30), 30);
	UT_CHECK(ut_wait_wc(a->cq, &wc) && wc.status == IBV_WC_SUCCESS);
	UT_CHECK(wait_count(drops_fn, b1, d0 + 1));
	post_recv(b1, 99);			/* one byte short */
	post_send(a, ut_frame_build(&fr, a->buf, 31), 31);
	UT_CHECK(ut_wait_wc(a->cq, &wc) && wc.status == IBV_WC_SUCCESS);
	if (UT_CHECK(ut_wait_wc(b1->cq, &wc))) {
		UT_CHECK_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
		UT_CHECK_EQ(wc.opcode, IBV_WC_RECV);
	}
	UT_CHECK_EQ(uroce_dev_flow_destroy(fl), 0);
	UT_NOTE("receive errors");
}

/* Raw sends out of bounds: LOC_LEN_ERR, SQE, and SQE -> RTS goes on. */
static void
check_send_lengths(struct side *sa, struct side *sb, struct rq *a,
		   struct rq *b1)
{
	static const uint32_t bad[] = { 0, 13, MTU + 15, MTU + 18 };
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ut_frame fr;
	struct ibv_wc wc;
	unsigned int i;

	fr = frame(sb->mac, sa->mac, 17, 0x0a000002, 5000, 200);
	for (i = 0; i < RTE_DIM(bad); i++) {
		ut_frame_build(&fr, a->buf, 40);	/* untagged */
		post_send(a, bad[i], 40 + i);
		if (UT_CHECK(ut_wait_wc(a->cq, &wc))) {
			UT_CHECK_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
			UT_CHECK_EQ(wc.wr_id, 40 + i);
		}
		UT_CHECK_EQ(uroce_dev_qp_query(a->qp, &qa, &qi), 0);
		UT_CHECK_EQ(qa.qp_state, IBV_QPS_SQE);
		memset(&qa, 0, sizeof(qa));
		qa.qp_state = IBV_QPS_RTS;
		UT_CHECK_EQ(uroce_dev_qp_modify(a->qp, &qa, IBV_QP_STATE), 0);
		UT_NOTE("raw send of %u bytes", bad[i]);
	}
	/* A frame to the other local device's MAC still crosses the link,
	 * and the minimum frame works: send_expect() proved both above. */
	(void)b1;
}

/* Bad attrs and QP types create nothing. */
static void
check_flow_errors(struct side *sa, struct side *sb, struct rq *a,
		  struct rq *b1)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct uroce_flow *fl = NULL;
	struct uroce_qp *rc = NULL;
	struct ut_frame fr;
	struct ut_flow f;

	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_eth(&f, sb->mac, 0, -1);
	f.attr.num_of_specs = 2;	/* the second: zeros, no spec */
	UT_CHECK_EQ(uroce_dev_flow_create(b1->qp, &f.attr, &fl), -EINVAL);
	f.attr.num_of_specs = 1;
	f.attr.type = IBV_FLOW_ATTR_SNIFFER;
	UT_CHECK_EQ(uroce_dev_flow_create(b1->qp, &f.attr, &fl), -EOPNOTSUPP);
	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	if (UT_CHECK_EQ(uroce_dev_qp_create(sb->pd, b1->cq, b1->cq, &init,
					    NULL, &rc), 0)) {
		UT_CHECK_EQ(uroce_dev_flow_create(rc, &f.attr, &fl), -EINVAL);
		UT_CHECK_EQ(uroce_dev_qp_destroy(rc), 0);
	}
	UT_CHECK(fl == NULL);
	/* Had any of them been created, this frame would have arrived. */
	fr = frame(sb->mac, sa->mac, 17, 0x0a000002, 5000, 100);
	send_expect(a, &fr, NULL, sb, 50);
	UT_CHECK_EQ(uroce_dev_qp_destroy(b1->qp), 0);	/* no rules left */
	b1->qp = NULL;
	UT_NOTE("flow errors");
}

static bool
side_open(struct side *s, unsigned int idx)
{
	s->dev = uroce_dev_get(idx);
	if (!UT_CHECK(s->dev != NULL))
		return false;
	memcpy(s->mac, uroce_dev_env(s->dev)->mac, 6);
	return UT_CHECK_EQ(uroce_pd_alloc(s->dev, &s->pd), 0);
}

static void
run(const char *name, const char *link, unsigned int lcores,
    unsigned int flags)
{
	struct uroce_config cfg;
	struct uroce_dev_stats da0, da1;
	struct side sa, sb;
	struct rq a, b1, b2;
	char err[512] = "";
	unsigned int i;

	printf("scenario: %s\n", name);
	ut_stuck = false;
	memset(&cfg, 0, sizeof(cfg));
	cfg.port_cnt = 2;
	cfg.lcores = lcores;
	for (i = 0; i < 2; i++) {
		snprintf(cfg.port[i].dev, sizeof(cfg.port[i].dev),
			 "ringlink:%s,side=%u", link, i);
		cfg.port[i].has_ip4 = true;
		cfg.port[i].ip4 = htobe32(UINT32_C(0x0a000001) + i);
		cfg.port[i].ip4_prefix = 24;
		cfg.port[i].mtu = MTU;
	}
	if (!UT_CHECK_EQ(uroce_engine_init(&cfg, flags, err, sizeof(err)), 0)) {
		fprintf(stderr, "     %s\n", err);
		return;
	}
	memset(&sa, 0, sizeof(sa));
	memset(&sb, 0, sizeof(sb));
	memset(&a, 0, sizeof(a));
	memset(&b1, 0, sizeof(b1));
	memset(&b2, 0, sizeof(b2));
	if (side_open(&sa, 0) && side_open(&sb, 1) && rq_open(&a, &sa) &&
	    rq_open(&b1, &sb) && rq_open(&b2, &sb)) {
		if (lcores == 2) {
			/* Frames from A's lcore land on that lcore's queue
			 * of B: B's QPs on the other lcore get hand-offs. */
			UT_CHECK(b1.qp->lcore != a.qp->lcore ||
				 b2.qp->lcore != a.qp->lcore);
		}
		uroce_dev_stats_get(sa.dev, &da0);
		check_steering(&sa, &sb, &a, &b1, &b2);
		check_defaults(&sa, &sb, &a, &b2);
		check_recv_errors(&sa, &sb, &a, &b1);
		check_send_lengths(&sa, &sb, &a, &b1);
		uroce_dev_stats_get(sa.dev, &da1);
		/* Raw frames to B's MAC took the link, not the loopback. */
		UT_CHECK_EQ(da1.loop_pkts, da0.loop_pkts);
		UT_CHECK(da1.tx_pkts > da0.tx_pkts);
		check_flow_errors(&sa, &sb, &a, &b1);
	}
	rq_close(&a);
	rq_close(&b1);
	rq_close(&b2);
	if (sa.pd != NULL)
		UT_CHECK_EQ(uroce_pd_free(sa.pd), 0);
	if (sb.pd != NULL)
		UT_CHECK_EQ(uroce_pd_free(sb.pd), 0);
	uroce_engine_fini();
}

int
main(int argc, char **argv)
{
	static const char *const extra[] = { "--lcores", "(0-2)@(0-1)",
					     "--no-telemetry", NULL };
	char rundir[PATH_MAX];

	(void)argc;
	if (!UT_CHECK(ut_eal_init(argv[0], extra) >= 0))
		return ut_summary();
	run("raw, native", "rawn", 1, UROCE_ENGINE_NO_LCORES);
	run("raw, two lcores", "raw2", 2, 0);
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	if (strstr(rundir, "/ut") != NULL)
		rmdir(rundir);
	return ut_summary();
}
