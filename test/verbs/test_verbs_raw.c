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
 *  - an IPv6 + TCP rule takes its frame, not one to another IPv6 address
 *    nor the IPv4 frame with the same ports;
 *  - RSS: UDP frames of different 5-tuples steered to an RSS QP land on
 *    the WQ (and its CQ) that the Toeplitz hash, computed here from its
 *    definition, and the indirection table pick, byte-exact; the objects'
 *    EBUSY order, WQ states (what is posted flushed in ERR), bad
 *    configurations;
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

static const uint8_t mac[2][6] = {
	{ 0x02, 0, 0, 0, 0x84, 1 }, { 0x02, 0, 0, 0, 0x84, 2 },
};

/* A UDP frame from a to b's address (dport, sport 4000, len bytes). */
static struct ut_frame
udp_frame(uint16_t dport, uint32_t len)
{
	struct ut_frame fr = {
		.vlan = -1, .ip = 4, .sip = IP_A, .dip = IP_B, .proto = 17,
		.sport = 4000, .dport = dport, .len = len,
	};

	memcpy(fr.dmac, mac[1], 6);
	memcpy(fr.smac, mac[0], 6);
	return fr;
}

/* Send fr from a's slot 3; it completes successfully. @return its length. */
static uint32_t
send_frame(struct side *a, const struct ut_frame *fr, uint8_t seed)
{
	uint8_t *f = a->buf + 3 * SLOT;
	struct ibv_sge sge = { (uintptr_t)f, 0, a->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = fr->dport, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	sge.length = ut_frame_build(fr, f, seed);
	UT_CHECK_EQ(ibv_post_send(a->qp, &wr, &bad), 0);
	if (UT_CHECK(wait_wc(a->cq, &wc))) {
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wc.opcode, IBV_WC_SEND);
		UT_CHECK_EQ(wc.wr_id, fr->dport);
	}
	return sge.length;
}

static uint32_t
send_udp(struct side *a, uint16_t dport, uint32_t len, uint8_t seed)
{
	struct ut_frame fr = udp_frame(dport, len);

	return send_frame(a, &fr, seed);
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

/* An IPv6 + TCP rule takes only its frames; the ringlink keeps order, so a
 * frame wrongly taken would be the first completion. */
static void
test_ipv6(struct side *a, struct side *b)
{
	struct ut_frame fr = udp_frame(7300, 200);
	struct ibv_flow *flow;
	struct ut_flow f;
	struct ibv_wc wc;
	uint32_t len;

	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_eth(&f, NULL, 0x86dd, -1);
	ut_flow_ipv6(&f, 0, IP_B, 6);
	ut_flow_l4(&f, true, 0, 7300);
	/* Drop the WQE test_steer left: RESET, then up again. */
	UT_CHECK_EQ(ibv_modify_qp(b->qp, &(struct ibv_qp_attr){
		.qp_state = IBV_QPS_RESET }, IBV_QP_STATE), 0);
	UT_CHECK_EQ(ibv_modify_qp(b->qp, &(struct ibv_qp_attr){
		.qp_state = IBV_QPS_INIT, .port_num = 1 },
		IBV_QP_STATE | IBV_QP_PORT), 0);
	UT_CHECK_EQ(ibv_modify_qp(b->qp, &(struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR }, IBV_QP_STATE), 0);
	flow = ibv_create_flow(b->qp, &f.attr);
	if (!UT_CHECK(flow != NULL))
		return;
	post_recv(b, 0);
	post_recv(b, 1);
	fr.proto = 6;
	send_frame(a, &fr, 4);			/* IPv4: not taken */
	fr.ip = 6;
	fr.dip = IP_B + 1;
	send_frame(a, &fr, 5);			/* another address */
	fr.dip = IP_B;
	fr.len = 300;
	len = send_frame(a, &fr, 6);
	if (UT_CHECK(wait_wc(b->cq, &wc))) {
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wc.wr_id, 0);
		UT_CHECK_EQ(wc.byte_len, len);
		UT_CHECK_MEM(b->buf, a->buf + 3 * SLOT, len);
	}
	UT_CHECK_EQ(ibv_destroy_flow(flow), 0);
	UT_NOTE("IPv6 + TCP rule");
}

/* ---- RSS ---- */
#define RSS_WQS		4	/* log 2 */
#define RSS_WRS		8	/* WQEs per WQ */
#define RSS_SLOT	128
#define RSS_FRAMES	8
#define RSS_LEN		96
#define RSS_PORT	7200

static uint8_t rss_key[40] = {	/* rdma-core's tests' key */
	0x2c, 0xc6, 0x81, 0xd1, 0x5b, 0xdb, 0xf4, 0xf7, 0xfc, 0xa2,
	0x83, 0x19, 0xdb, 0x1a, 0x3e, 0x94, 0x6b, 0x9e, 0x38, 0xd9,
	0x2c, 0x9c, 0x03, 0xd1, 0xad, 0x99, 0x44, 0xa7, 0xd9, 0x56,
	0x3d, 0x59, 0x06, 0x3c, 0x25, 0xf3, 0xfc, 0x1f, 0xdc, 0x2a,
};

/* Toeplitz from its definition: for each set bit i of the input, XOR in
 * the 32 key bits starting at bit i. */
static uint32_t
toeplitz(const uint8_t *in, uint32_t n)
{
	uint32_t h = 0, i, k;
	uint64_t w;

	for (i = 0; i < n * 8; i++) {
		if (!(in[i / 8] >> (7 - i % 8) & 1))
			continue;
		for (w = 0, k = 0; k < 5; k++)
			w = w << 8 | rss_key[i / 8 + k];
		h ^= (uint32_t)(w >> (8 - i % 8));
	}
	return h;
}

struct rss {
	struct ibv_cq *cq[2];
	struct ibv_wq *wq[RSS_WQS];
	struct ibv_rwq_ind_table *tbl;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

static void
rss_post(struct rss *r, unsigned int w, unsigned int slot)
{
	uint8_t *p = r->buf + (w * RSS_WRS + slot) * RSS_SLOT;
	struct ibv_sge sge = { (uintptr_t)p, RSS_SLOT, r->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = w * RSS_WRS + slot,
				  .sg_list = &sge, .num_sge = 1 }, *bad;

	UT_CHECK_EQ(ibv_post_wq_recv(r->wq[w], &wr, &bad), 0);
}

static struct ibv_qp *
rss_qp(struct side *b, struct rss *r, uint8_t key_len, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex x = {
		.qp_type = IBV_QPT_RAW_PACKET, .send_cq = cq,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.pd = b->pd, .rwq_ind_tbl = r->tbl,
		.rx_hash_conf = {
			.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
			.rx_hash_key_len = key_len, .rx_hash_key = rss_key,
			.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 |
				IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_PORT_UDP |
				IBV_RX_HASH_DST_PORT_UDP,
		},
	};

	return ibv_create_qp_ex(b->ctx, &x);
}

static int
rss_open(struct side *b, struct rss *r)
{
	struct ibv_wq_attr rdy = { .attr_mask = IBV_WQ_ATTR_STATE,
				   .wq_state = IBV_WQS_RDY };
	struct ibv_rwq_ind_table_init_attr ti = { .log_ind_tbl_size = 2,
						  .ind_tbl = r->wq };
	struct ibv_wq_init_attr wi = { .wq_type = IBV_WQT_RQ,
				       .max_wr = RSS_WRS, .max_sge = 1,
				       .pd = b->pd };
	unsigned int i;

	r->buf = calloc(RSS_WQS * RSS_WRS, RSS_SLOT);
	r->cq[0] = ibv_create_cq(b->ctx, 64, NULL, NULL, 0);
	r->cq[1] = ibv_create_cq(b->ctx, 64, NULL, NULL, 0);
	if (!UT_CHECK(r->buf && r->cq[0] && r->cq[1]))
		return -1;
	r->mr = ibv_reg_mr(b->pd, r->buf, RSS_WQS * RSS_WRS * RSS_SLOT,
			   IBV_ACCESS_LOCAL_WRITE);
	for (i = 0; i < RSS_WQS; i++) {
		wi.cq = r->cq[i % 2];
		r->wq[i] = ibv_create_wq(b->ctx, &wi);
		if (!UT_CHECK(r->wq[i] != NULL))
			return -1;
		UT_CHECK(wi.max_wr >= RSS_WRS);
		/* RESET to ERR is not a receive queue's transition. */
		if (i == 0) {
			struct ibv_wq_attr err = { .attr_mask = IBV_WQ_ATTR_STATE,
						   .wq_state = IBV_WQS_ERR };

			UT_CHECK_EQ(ibv_modify_wq(r->wq[i], &err), EINVAL);
		}
		UT_CHECK_EQ(ibv_modify_wq(r->wq[i], &rdy), 0);
		UT_CHECK_EQ(r->wq[i]->state, IBV_WQS_RDY);
	}
	r->tbl = ibv_create_rwq_ind_table(b->ctx, &ti);
	if (!UT_CHECK(r->mr != NULL && r->tbl != NULL))
		return -1;
	/* A key shorter than 40 bytes, a CQ on an RSS QP: EINVAL. */
	errno = 0;
	UT_CHECK(rss_qp(b, r, 20, NULL) == NULL);
	UT_CHECK_EQ(errno, EINVAL);
	errno = 0;
	UT_CHECK(rss_qp(b, r, 40, r->cq[0]) == NULL);
	UT_CHECK_EQ(errno, EINVAL);
	r->qp = rss_qp(b, r, 40, NULL);
	return UT_CHECK(r->qp != NULL) ? 0 : -1;
}

/* The WQ index the hash of fr's fields picks. */
static unsigned int
rss_expect(const struct ut_frame *fr)
{
	uint8_t in[12];

	ut_put32(in, fr->sip);
	ut_put32(in + 4, fr->dip);
	ut_put16(in + 8, fr->sport);
	ut_put16(in + 10, fr->dport);
	return toeplitz(in, sizeof(in)) & (RSS_WQS - 1);
}

/* Collect RSS_FRAMES completions from both CQs; check each against the
 * frame its bytes carry (by source port). */
static void
rss_check(struct rss *r, const struct ut_frame *frs)
{
	unsigned int got = 0, c, i, w;
	double end = ut_now_s() + WAIT_SEC;
	uint8_t want[RSS_SLOT];
	struct ibv_wc wc;

	while (got < RSS_FRAMES && ut_now_s() < end) {
		for (c = 0; c < 2; c++) {
			if (ibv_poll_cq(r->cq[c], 1, &wc) != 1)
				continue;
			got++;
			w = (unsigned int)wc.wr_id / RSS_WRS;
			UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
			UT_CHECK_EQ(wc.byte_len, RSS_LEN);
			UT_CHECK_EQ(w % 2, c);		/* the WQ's own CQ */
			UT_CHECK_EQ(wc.qp_num, r->wq[w]->wq_num);
			i = (unsigned int)(((r->buf[wc.wr_id * RSS_SLOT + 34] << 8) |
				r->buf[wc.wr_id * RSS_SLOT + 35]) - 5000) / 37;
			if (!UT_CHECK(i < RSS_FRAMES))
				continue;
			UT_CHECK_EQ(w, rss_expect(&frs[i]));
			ut_frame_build(&frs[i], want, (uint8_t)i);
			UT_CHECK_MEM(r->buf + wc.wr_id * RSS_SLOT, want, RSS_LEN);
		}
	}
	UT_CHECK_EQ(got, RSS_FRAMES);
}

static bool
rss_wait_any(struct rss *r, struct ibv_wc *wc)
{
	double end = ut_now_s() + WAIT_SEC;

	do {
		if (ibv_poll_cq(r->cq[0], 1, wc) == 1 ||
		    ibv_poll_cq(r->cq[1], 1, wc) == 1)
			return true;
		usleep(20);
	} while (ut_now_s() < end);
	return false;
}

static void
rss_close(struct rss *r)
{
	unsigned int i;

	if (r->qp != NULL)
		UT_CHECK_EQ(ibv_destroy_qp(r->qp), 0);
	if (r->tbl != NULL)
		UT_CHECK_EQ(ibv_destroy_rwq_ind_table(r->tbl), 0);
	for (i = 0; i < RSS_WQS; i++)
		if (r->wq[i] != NULL)
			UT_CHECK_EQ(ibv_destroy_wq(r->wq[i]), 0);
	if (r->mr != NULL)
		UT_CHECK_EQ(ibv_dereg_mr(r->mr), 0);
	for (i = 0; i < 2; i++)
		if (r->cq[i] != NULL)
			UT_CHECK_EQ(ibv_destroy_cq(r->cq[i]), 0);
	free(r->buf);
}

/* An RSS QP has no queue to post to, in any state; it goes through the
 * states of a raw QP all the same (and back to RESET). */
static void
rss_no_post(struct rss *r)
{
	static const enum ibv_qp_state up[] = {
		IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_RESET,
	};
	struct ibv_send_wr sw = { .opcode = IBV_WR_SEND }, *sbad;
	struct ibv_recv_wr rw = { .num_sge = 0 }, *rbad;
	struct ibv_qp_attr qa = { .port_num = 1 };
	unsigned int i;

	for (i = 0; i < sizeof(up) / sizeof(up[0]); i++) {
		qa.qp_state = up[i];
		UT_CHECK_EQ(ibv_modify_qp(r->qp, &qa, IBV_QP_STATE |
			    (up[i] == IBV_QPS_INIT ? IBV_QP_PORT : 0)), 0);
		UT_CHECK_EQ(ibv_post_send(r->qp, &sw, &sbad), EINVAL);
		UT_CHECK_EQ(ibv_post_recv(r->qp, &rw, &rbad), EINVAL);
	}
}

static void
test_rss(struct side *a, struct side *b)
{
	struct ibv_wq_attr st = { .attr_mask = IBV_WQ_ATTR_STATE };
	struct ut_frame frs[RSS_FRAMES];
	struct ibv_device_attr_ex dx;
	unsigned int i, w, hit = 0;
	struct ibv_flow *flow;
	struct ut_flow f;
	struct ibv_wc wc;
	struct rss r;

	UT_CHECK_EQ(ibv_query_device_ex(b->ctx, NULL, &dx), 0);
	UT_CHECK_EQ(dx.rss_caps.supported_qpts, 1u << IBV_QPT_RAW_PACKET);
	UT_CHECK_EQ(dx.rss_caps.rx_hash_function, IBV_RX_HASH_FUNC_TOEPLITZ);
	UT_CHECK(dx.rss_caps.max_rwq_indirection_table_size >= RSS_WQS);
	UT_CHECK(dx.max_wq_type_rq > 0);
	memset(&r, 0, sizeof(r));
	if (rss_open(b, &r) != 0) {
		rss_close(&r);
		return;
	}
	rss_no_post(&r);
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_l4(&f, false, 0, RSS_PORT);
	flow = ibv_create_flow(r.qp, &f.attr);
	for (w = 0; w < RSS_WQS; w++)
		for (i = 0; i < RSS_WRS; i++)
			rss_post(&r, w, i);
	for (i = 0; i < RSS_FRAMES; i++) {
		frs[i] = udp_frame(RSS_PORT, RSS_LEN);
		frs[i].sip = IP_A + i * 0x01010101u;
		frs[i].sport = (uint16_t)(5000 + 37 * i);
		hit |= 1u << rss_expect(&frs[i]);
	}
	/* The tuples are chosen to spread: the test means nothing if all
	 * frames hash to one WQ. */
	UT_CHECK(__builtin_popcount(hit) >= 3);
	if (UT_CHECK(flow != NULL)) {
		for (i = 0; i < RSS_FRAMES; i++)
			send_frame(a, &frs[i], (uint8_t)i);
		rss_check(&r, frs);
		/* Each object is busy while another uses it. */
		UT_CHECK_EQ(ibv_destroy_wq(r.wq[0]), EBUSY);
		UT_CHECK_EQ(ibv_destroy_rwq_ind_table(r.tbl), EBUSY);
		UT_CHECK_EQ(ibv_destroy_qp(r.qp), EBUSY);
		UT_CHECK_EQ(ibv_destroy_flow(flow), 0);
	}
	/* ERR flushes what is posted (the WQEs no frame took); then RESET. */
	st.wq_state = IBV_WQS_ERR;
	for (w = 0; w < RSS_WQS; w++)
		UT_CHECK_EQ(ibv_modify_wq(r.wq[w], &st), 0);
	for (i = 0; i < RSS_WQS * RSS_WRS - RSS_FRAMES; i++) {
		if (!UT_CHECK(rss_wait_any(&r, &wc)))
			break;
		UT_CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	}
	st.wq_state = IBV_WQS_RESET;
	for (w = 0; w < RSS_WQS; w++)
		UT_CHECK_EQ(ibv_modify_wq(r.wq[w], &st), 0);
	rss_close(&r);
	UT_NOTE("RSS: WQ by Toeplitz hash and table, busy order, states");
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
		test_ipv6(&a, &b);
		test_rss(&a, &b);
		test_pace(&a);
	}
	side_close(&a);
	side_close(&b);
	ut_verbs_close_pair(list, c0, c1);
	return ut_summary();
}
