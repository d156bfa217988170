/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * RAW_PACKET QPs and flow steering through our libibverbs.so.1
 * (ibv_create_qp(3) IBV_QPT_RAW_PACKET, ibv_create_flow(3)), in one process
 * with two devices joined by a ringlink (uroce0 sends, uroce1 receives):
 *  - a UDP frame steered by an IPv4 + UDP rule arrives byte-exact, with
 *    byte_len the frame's length; the send completes IBV_WC_SEND;
 *  - ibv_destroy_qp is EBUSY while a rule points at the QP;
 *  - after ibv_destroy_flow the frame is not delivered: a frame for a new
 *    rule, sent after it, is the first completion;
 *  - bad attrs (size, SNIFFER, an RC QP, too many WRs) create nothing;
 *  - pacing applies to RAW_PACKET (ibv_modify_qp_rate_limit, caps).
 */

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uroce_test.h"
#include "uroce_test_verbs.h"
#include "uroce_test_frame.h"
#include "verbs_priv.h"

#define BUF_SIZE	8192
#define SLOT		2048
#define WAIT_SEC	10	/* a hang guard, not a performance bound */
#define IP_A		0xc0a85401u	/* 192.168.84.1 */
#define IP_B		0xc0a85402u

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	uint8_t *buf;
};

static bool
wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	double end = ut_now_s() + WAIT_SEC;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n != 0)
			return n == 1;
		usleep(20);
	} while (ut_now_s() < end);
	return false;
}

static int
side_open(struct side *s, struct ibv_context *ctx)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a;

	s->ctx = ctx;
	s->buf = aligned_alloc(4096, BUF_SIZE);
	s->pd = ibv_alloc_pd(ctx);
	s->cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!UT_CHECK(s->buf != NULL && s->pd != NULL && s->cq != NULL))
		return -1;
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	init.send_cq = s->cq;
	init.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &init);
	if (!UT_CHECK(s->mr != NULL && s->qp != NULL))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	UT_CHECK_EQ(ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PORT), 0);
	a.qp_state = IBV_QPS_RTR;
	UT_CHECK_EQ(ibv_modify_qp(s->qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	return UT_CHECK_EQ(ibv_modify_qp(s->qp, &a, IBV_QP_STATE), 0) ? 0 : -1;
}

static void
side_close(struct side *s)
{
	ut_verbs_destroy(s->qp, s->mr, s->cq, s->pd);
	free(s->buf);
}

static void
post_recv(struct side *s, uint64_t slot)
{
	struct ibv_sge sge = {
		(uintptr_t)s->buf + slot * SLOT, SLOT, s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	memset(s->buf + slot * SLOT, 0, SLOT);
	UT_CHECK_EQ(ibv_post_recv(s->qp, &wr, &bad), 0);
}

/* Send a UDP frame to dport from a's slot 3; it completes successfully.
 * @return its length. */
static uint32_t
send_udp(struct side *a, uint16_t dport, uint32_t len, uint8_t seed)
{
	static const uint8_t mac[2][6] = {
		{ 0x02, 0, 0, 0, 0x84, 1 }, { 0x02, 0, 0, 0, 0x84, 2 },
	};
	struct ut_frame fr = {
		.vlan = -1, .ip = 4, .sip = IP_A, .dip = IP_B, .proto = 17,
		.sport = 4000, .dport = dport, .len = len,
	};
	uint8_t *f = a->buf + 3 * SLOT;
	struct ibv_sge sge = { (uintptr_t)f, 0, a->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = dport, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	memcpy(fr.dmac, mac[1], 6);
	memcpy(fr.smac, mac[0], 6);
	sge.length = ut_frame_build(&fr, f, seed);
	UT_CHECK_EQ(ibv_post_send(a->qp, &wr, &bad), 0);
	if (UT_CHECK(wait_wc(a->cq, &wc))) {
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wc.opcode, IBV_WC_SEND);
		UT_CHECK_EQ(wc.wr_id, dport);
	}
	return sge.length;
}

/* attr_only: attr.size left at sizeof(struct ibv_flow_attr), as pyverbs
 * (rdma-core's tests) builds it; rdma-core does not read it. */
static struct ibv_flow *
udp_rule(struct side *b, uint16_t dport, bool attr_only)
{
	struct ut_flow f;

	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_ipv4(&f, 0, IP_B);
	ut_flow_l4(&f, false, 0, dport);
	if (attr_only)
		f.attr.size = sizeof(f.attr);
	return ibv_create_flow(b->qp, &f.attr);
}

/* Steered, byte-exact (the second rule's attr.size as pyverbs leaves it);
 * EBUSY with a rule; destroy_flow stops delivery. */
static void
test_steer(struct side *a, struct side *b)
{
	struct ibv_flow *f1, *f2;
	struct ibv_wc wc;
	uint32_t len;

	f1 = udp_rule(b, 7000, false);
	if (!UT_CHECK(f1 != NULL))
		return;
	post_recv(b, 0);
	len = send_udp(a, 7000, 600, 1);
	if (UT_CHECK(wait_wc(b->cq, &wc))) {
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wc.opcode, IBV_WC_RECV);
		UT_CHECK_EQ(wc.wr_id, 0);
		UT_CHECK_EQ(wc.qp_num, b->qp->qp_num);
		UT_CHECK_EQ(wc.byte_len, len);
		UT_CHECK_MEM(b->buf, a->buf + 3 * SLOT, len);
	}
	/* ibv_destroy_qp(3): EBUSY while flows are attached. */
	UT_CHECK_EQ(ibv_destroy_qp(b->qp), EBUSY);
	UT_CHECK_EQ(ibv_destroy_flow(f1), 0);
	/* 7000 has no rule now; 7001 does. The ringlink keeps order: had
	 * 7000 been delivered, it would be the first completion. */
	f2 = udp_rule(b, 7001, true);
	if (!UT_CHECK(f2 != NULL))
		return;
	post_recv(b, 0);
	post_recv(b, 1);
	send_udp(a, 7000, 300, 2);
	len = send_udp(a, 7001, 1514, 3);
	if (UT_CHECK(wait_wc(b->cq, &wc))) {
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wc.wr_id, 0);
		UT_CHECK_EQ(wc.byte_len, len);
		UT_CHECK_MEM(b->buf, a->buf + 3 * SLOT, len);
	}
	UT_CHECK_EQ(ibv_destroy_flow(f2), 0);
	UT_NOTE("steering, EBUSY, destroy_flow");
}

/* Bad attrs create nothing; errno says why (ibv_create_flow(3)). */
static void
test_bad(struct side *a, struct side *b)
{
	struct ibv_qp_init_attr rc = {
		.qp_type = IBV_QPT_RC, .send_cq = b->cq, .recv_cq = b->cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_init_attr raw = rc;
	struct ibv_device_attr da;
	struct ibv_qp *q;
	struct ut_flow f;

	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_l4(&f, false, 0, 7002);
	f.attr.num_of_specs = 2;	/* the second: zeros, no spec */
	errno = 0;
	UT_CHECK(ibv_create_flow(b->qp, &f.attr) == NULL);
	UT_CHECK_EQ(errno, EINVAL);
	f.attr.num_of_specs = 1;
	f.attr.type = IBV_FLOW_ATTR_SNIFFER;
	errno = 0;
	UT_CHECK(ibv_create_flow(b->qp, &f.attr) == NULL);
	UT_CHECK_EQ(errno, EOPNOTSUPP);
	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	q = ibv_create_qp(b->pd, &rc);
	if (UT_CHECK(q != NULL)) {
		errno = 0;
		UT_CHECK(ibv_create_flow(q, &f.attr) == NULL);
		UT_CHECK_EQ(errno, EINVAL);
		UT_CHECK_EQ(ibv_destroy_qp(q), 0);
	}
	/* A RAW_PACKET QP beyond the device's limits. */
	UT_CHECK_EQ(ibv_query_device(b->ctx, &da), 0);
	raw.qp_type = IBV_QPT_RAW_PACKET;
	raw.cap.max_send_wr = (uint32_t)da.max_qp_wr + 1;
	errno = 0;
	UT_CHECK(ibv_create_qp(b->pd, &raw) == NULL);
	UT_CHECK_EQ(errno, EINVAL);
	/* No rule was made: b's QP goes (side_close checks 0). */
	(void)a;
	UT_NOTE("bad attrs");
}

/* Pacing covers RAW_PACKET through the verbs. */
static void
test_pace(struct side *a)
{
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = 8000 };
	struct ibv_device_attr_ex dx;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr q;

	UT_CHECK_EQ(ibv_query_device_ex(a->ctx, NULL, &dx), 0);
	UT_CHECK(dx.packet_pacing_caps.supported_qpts & 1u << IBV_QPT_RAW_PACKET);
	UT_CHECK_EQ(ibv_modify_qp_rate_limit(a->qp, &rl), 0);
	UT_CHECK_EQ(ibv_query_qp(a->qp, &q, IBV_QP_RATE_LIMIT, &init), 0);
	UT_CHECK_EQ(q.rate_limit, 8000);
	rl.rate_limit = 0;
	UT_CHECK_EQ(ibv_modify_qp_rate_limit(a->qp, &rl), 0);
	UT_NOTE("pacing");
}

int
main(void)
{
	struct ibv_device **list = NULL;
	struct ibv_context *c0 = NULL, *c1 = NULL;
	struct side a, b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (ut_verbs_ringlink_pair("vraw", 84, &list, &c0, &c1) == 0 &&
	    side_open(&a, c0) == 0 && side_open(&b, c1) == 0) {
		test_steer(&a, &b);
		test_bad(&a, &b);
		test_pace(&a);
	}
	side_close(&a);
	side_close(&b);
	ut_verbs_close_pair(list, c0, c1);
	return ut_summary();
}
