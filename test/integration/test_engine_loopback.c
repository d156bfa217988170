/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The engine end to end (lib/engine): RC QP pairs moving SEND, SEND with
 * immediate, WRITE, READ, FETCH_ADD and CMP_SWAP byte-exact
 *  - on one device (internal loopback), native progress (uroce_init() and
 *    uroce_poll()) and with one background lcore;
 *  - between two devices over a ringlink pair, looped back inside the
 *    process, and over the link itself (UROCE_ENGINE_WIRE_XDEV);
 *  - between two engine lcores (frames handed to the owner lcore);
 *  - looped between two devices whose QPs leave the IPv4 header checksum
 *    to the NIC (as on a PMD with the offload): the loop fills it in.
 * Also: unknown QPN and bad ICRC counted, modify errors through the control
 * path change nothing (query), PD/CQ busy, the CQ owner rule, active_mtu,
 * and init errors leaving nothing up; a QP connected with no engine pass
 * between the modifies waits on its port's ready list (back-pressure); a
 * post to a paced QP waiting for its tokens is left to its timer.
 *
 * The test starts EAL with lcores 0-2 floating over the machine's CPUs;
 * the engine joins it. Only one engine lcore busy-polls at a time except in
 * the two-lcore case, where both back off to sleeps when idle.
 */
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <uroce/uroce.h>

#include "engine_priv.h"
#include "uroce_engine.h"
#include "uroce_test.h"
#include "uroce_test_eal.h"
#include "uroce_test_engine.h"

#define BUF_SIZE	(64 * 1024)
#define OFF_SEND	0x0000
#define OFF_RECV	0x4000
#define OFF_WRITE	0x8000
#define OFF_READ	0xc000
#define OFF_ATOMIC	0xfff0

struct side {
	struct uroce_dev *dev;
	struct uroce_pd *pd;
	struct uroce_cq *cq;
	struct uroce_qp *qp;
	struct uroce_mr *mr;
	uint8_t *buf;
};

static void
fill(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)ut_rand();
}

static char conf_path[64];

/* Write a config file; the engine keeps the loaded copy. */
static bool
load_conf(const char *text, struct uroce_config *cfg)
{
	char err[UROCE_CONFIG_ERR_LEN];
	FILE *f;
	int ret;

	snprintf(conf_path, sizeof(conf_path), "/tmp/h4-engine-%d.conf",
		 (int)getpid());
	f = fopen(conf_path, "w");
	if (!UT_CHECK(f != NULL))
		return false;
	fputs(text, f);
	fclose(f);
	ret = uroce_config_load(conf_path, cfg, err, sizeof(err));
	if (!UT_CHECK_EQ(ret, 0))
		fprintf(stderr, "     %s\n", err);
	return ret == 0;
}

/* ---------------------------------------------------------------------------
 * Objects.
 */
static bool
side_open(struct side *s, struct uroce_dev *dev)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
	};
	unsigned int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	bool ok = true;

	memset(s, 0, sizeof(*s));
	s->dev = dev;
	s->buf = aligned_alloc(4096, BUF_SIZE);
	ok &= UT_CHECK(s->buf != NULL);
	ok &= UT_CHECK_EQ(uroce_pd_alloc(dev, &s->pd), 0);
	ok &= UT_CHECK_EQ(uroce_dev_cq_create(dev, 128, s, &s->cq), 0);
	if (!ok)
		return false;
	ok &= UT_CHECK(uroce_dev_cq_user(s->cq) == s);
	ok &= UT_CHECK_EQ(uroce_dev_cq_lcore(s->cq), -1);
	ok &= UT_CHECK_EQ(uroce_dev_mr_reg(s->pd, s->buf, BUF_SIZE,
					   (uintptr_t)s->buf, access, &s->mr), 0);
	ok &= UT_CHECK_EQ(uroce_dev_qp_create(s->pd, s->cq, s->cq, &init, s,
					      &s->qp), 0);
	if (!ok)
		return false;
	UT_CHECK(s->qp->user == s);
	UT_CHECK(s->qp->qpn >= 2 && s->qp->qpn <= UROCE_QPN_MASK);
	UT_CHECK_EQ(uroce_dev_cq_lcore(s->cq), (int)s->qp->lcore);
	/* In use: the PD and the CQ cannot go. */
	UT_CHECK_EQ(uroce_pd_free(s->pd), -EBUSY);
	UT_CHECK_EQ(uroce_dev_cq_destroy(s->cq), -EBUSY);
	return true;
}

static void
side_close(struct side *s)
{
	if (s->qp != NULL)
		UT_CHECK_EQ(uroce_dev_qp_destroy(s->qp), 0);
	if (s->mr != NULL)
		UT_CHECK_EQ(uroce_dev_mr_dereg(s->mr), 0);
	if (s->cq != NULL)
		UT_CHECK_EQ(uroce_dev_cq_destroy(s->cq), 0);
	if (s->pd != NULL)
		UT_CHECK_EQ(uroce_pd_free(s->pd), 0);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

/* Where a QP connects to, and how long it waits for an ACK. */
struct qp_target {
	enum ibv_mtu mtu;
	uint32_t dqpn, sq_psn, rq_psn;
	const union uroce_gid *dgid;
	uint8_t timeout, retry_cnt;
};

/* RESET -> INIT -> RTR -> RTS (ibv_modify_qp(3) masks). */
static bool
qp_connect_to(struct uroce_qp *qp, const struct qp_target *t)
{
	struct ibv_qp_attr a;
	bool ok = true;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_ATOMIC;
	ok &= UT_CHECK_EQ(uroce_dev_qp_modify(qp, &a, IBV_QP_STATE |
			  IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = t->mtu;
	a.dest_qp_num = t->dqpn;
	a.rq_psn = t->rq_psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, t->dgid->raw, 16);
	ok &= UT_CHECK_EQ(uroce_dev_qp_modify(qp, &a, IBV_QP_STATE |
			  IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = t->timeout;
	a.retry_cnt = t->retry_cnt;
	a.rnr_retry = 7;
	a.sq_psn = t->sq_psn;
	a.max_rd_atomic = 4;
	ok &= UT_CHECK_EQ(uroce_dev_qp_modify(qp, &a, IBV_QP_STATE |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC), 0);
	return ok;
}

/* s's QP towards peer's: timeout 14, retry_cnt 7. */
static bool
qp_connect(struct side *s, const struct side *peer, uint32_t sq_psn,
	   uint32_t rq_psn)
{
	const struct uroce_qp_env *env = uroce_dev_env(s->dev);
	const struct uroce_qp_env *penv = uroce_dev_env(peer->dev);
	const struct qp_target t = {
		.mtu = RTE_MIN(env->lim.active_mtu, penv->lim.active_mtu),
		.dqpn = peer->qp->qpn, .sq_psn = sq_psn, .rq_psn = rq_psn,
		.dgid = &penv->gid[0], .timeout = 14, .retry_cnt = 7,
	};

	return qp_connect_to(s->qp, &t);
}

/*
 * Native progress: the modifies ran on this thread with no engine pass
 * between them, so the QP joined the ready lists in INIT (the no-wire
 * list) and is still queued. Now in RTS it must wait on its port's list:
 * only that list stops while the port stalls; from the no-wire list it
 * would build frames the port cannot hold (freed as tx_full, then resent
 * by go-back-N).
 */
static void
check_ready_list(const struct side *s)
{
	const struct eng_qp *eq = s->qp->engine;

	UT_CHECK_EQ(s->qp->state, IBV_QPS_RTS);
	if (UT_CHECK(eq != NULL && eq->ready.queued))
		UT_CHECK_EQ(eq->ready.list, s->dev->idx);
}

/* ---------------------------------------------------------------------------
 * Operations, a -> b.
 */
static int
post_one(struct side *a, enum ibv_wr_opcode op, uint32_t off, uint32_t len,
	 uint64_t raddr, uint32_t rkey, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)a->buf + off, .length = len, .lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return uroce_qp_post_send(a->qp, &wr, &bad);
}

static bool
send_done(struct side *a, uint64_t wr_id, enum ibv_wc_opcode opc)
{
	struct ibv_wc wc;
	bool ok;

	memset(&wc, 0, sizeof(wc));
	ok = UT_CHECK(ut_wait_wc(a->cq, &wc));
	ok &= UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	ok &= UT_CHECK_EQ(wc.wr_id, wr_id);
	ok &= UT_CHECK_EQ(wc.opcode, opc);
	ok &= UT_CHECK_EQ(wc.qp_num, a->qp->qpn);
	return ok;
}

static void
op_send(struct side *a, struct side *b, uint32_t len, bool imm)
{
	struct ibv_sge rsge = {
		.addr = (uintptr_t)b->buf + OFF_RECV, .length = 0x4000,
		.lkey = b->mr->lkey,
	};
	struct ibv_recv_wr rwr = { .wr_id = 77, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_recv_wr *rbad = NULL;
	struct ibv_sge sge = {
		.addr = (uintptr_t)a->buf + OFF_SEND, .length = len,
		.lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_wc wc;

	fill(a->buf + OFF_SEND, len);
	memset(b->buf + OFF_RECV, 0, 0x4000);
	UT_CHECK_EQ(uroce_qp_post_recv(b->qp, &rwr, &rbad), 0);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	wr.imm_data = htobe32(0x12345678);
	wr.send_flags = IBV_SEND_SIGNALED;
	UT_CHECK_EQ(uroce_qp_post_send(a->qp, &wr, &bad), 0);
	send_done(a, 1, IBV_WC_SEND);
	memset(&wc, 0, sizeof(wc));
	if (UT_CHECK(ut_wait_wc(b->cq, &wc))) {
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wc.wr_id, 77);
		UT_CHECK_EQ(wc.opcode, IBV_WC_RECV);
		UT_CHECK_EQ(wc.byte_len, len);
		UT_CHECK_EQ(wc.qp_num, b->qp->qpn);
		UT_CHECK_EQ(!!(wc.wc_flags & IBV_WC_WITH_IMM), imm);
		if (imm)
			UT_CHECK_EQ(wc.imm_data, htobe32(0x12345678));
	}
	UT_CHECK_MEM(b->buf + OFF_RECV, a->buf + OFF_SEND, len);
	UT_NOTE("%s of %u bytes", imm ? "SEND_WITH_IMM" : "SEND", len);
}

static void
op_write(struct side *a, struct side *b, uint32_t len)
{
	fill(a->buf + OFF_SEND, len);
	memset(b->buf + OFF_WRITE, 0, len);
	UT_CHECK_EQ(post_one(a, IBV_WR_RDMA_WRITE, OFF_SEND, len,
			     (uintptr_t)b->buf + OFF_WRITE, b->mr->rkey, 2), 0);
	send_done(a, 2, IBV_WC_RDMA_WRITE);
	UT_CHECK_MEM(b->buf + OFF_WRITE, a->buf + OFF_SEND, len);
	UT_NOTE("WRITE of %u bytes", len);
}

static void
op_read(struct side *a, struct side *b, uint32_t len)
{
	fill(b->buf + OFF_READ, len);
	memset(a->buf + OFF_READ, 0, len);
	UT_CHECK_EQ(post_one(a, IBV_WR_RDMA_READ, OFF_READ, len,
			     (uintptr_t)b->buf + OFF_READ, b->mr->rkey, 3), 0);
	send_done(a, 3, IBV_WC_RDMA_READ);
	UT_CHECK_MEM(a->buf + OFF_READ, b->buf + OFF_READ, len);
	UT_NOTE("READ of %u bytes", len);
}

/* The original value lands in the local buffer in host order (as rxe). */
static void
op_atomics(struct side *a, struct side *b)
{
	uint64_t *remote = (uint64_t *)(void *)(b->buf + OFF_ATOMIC);
	uint64_t *local = (uint64_t *)(void *)(a->buf + OFF_ATOMIC);
	uint64_t orig = ut_rand() & ~UINT64_C(0xff);
	struct ibv_sge sge = {
		.addr = (uintptr_t)local, .length = 8, .lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr, *bad = NULL;

	*remote = orig;
	*local = 0;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 4;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = (uintptr_t)remote;
	wr.wr.atomic.rkey = b->mr->rkey;
	wr.wr.atomic.compare_add = 5;
	UT_CHECK_EQ(uroce_qp_post_send(a->qp, &wr, &bad), 0);
	send_done(a, 4, IBV_WC_FETCH_ADD);
	UT_CHECK_EQ(*local, orig);
	UT_CHECK_EQ(*remote, orig + 5);

	*local = 0;
	wr.wr_id = 5;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = orig + 5;
	wr.wr.atomic.swap = 0xdeadbeefcafef00dULL;
	UT_CHECK_EQ(uroce_qp_post_send(a->qp, &wr, &bad), 0);
	send_done(a, 5, IBV_WC_COMP_SWAP);
	UT_CHECK_EQ(*local, orig + 5);
	UT_CHECK_EQ(*remote, 0xdeadbeefcafef00dULL);

	/* A compare that fails leaves the target alone. */
	*local = 0;
	wr.wr_id = 6;
	wr.wr.atomic.compare_add = 1;
	wr.wr.atomic.swap = 2;
	UT_CHECK_EQ(uroce_qp_post_send(a->qp, &wr, &bad), 0);
	send_done(a, 6, IBV_WC_COMP_SWAP);
	UT_CHECK_EQ(*local, 0xdeadbeefcafef00dULL);
	UT_CHECK_EQ(*remote, 0xdeadbeefcafef00dULL);
	UT_NOTE("atomics");
}

/* Every operation both ways, with lengths around the path MTU. */
static void
traffic(struct side *a, struct side *b)
{
	uint32_t mtu = uroce_mtu_bytes(RTE_MIN(
		uroce_dev_env(a->dev)->lim.active_mtu,
		uroce_dev_env(b->dev)->lim.active_mtu));
	const uint32_t lens[] = { 1, mtu - 1, mtu, 3 * mtu + 17 };
	unsigned int i;

	for (i = 0; i < RTE_DIM(lens); i++) {
		op_send(a, b, lens[i], false);
		op_send(b, a, lens[i], i % 2 == 0);
		op_write(a, b, lens[i]);
		op_write(b, a, lens[i]);
		op_read(a, b, lens[i]);
		op_read(b, a, lens[i]);
	}
	op_atomics(a, b);
	op_atomics(b, a);
}

/* ---------------------------------------------------------------------------
 * Checks of the receive path and of the control path.
 */

/* A frame for qpn from dev to itself, ICRC good or not. */
static struct rte_mbuf *
frame_for(struct uroce_dev *dev, uint32_t qpn, bool bad_icrc)
{
	const struct uroce_qp_env *env = uroce_dev_env(dev);
	struct uroce_bth_fields bth = {
		.opcode = UROCE_OPC_RC_SEND_ONLY, .pkey = 0xffff, .dqpn = qpn,
	};
	struct uroce_ext_fields ext;
	struct uroce_l2l3 l;
	uint8_t payload[32];
	struct rte_mbuf *m = rte_pktmbuf_alloc(env->pool);
	uint32_t len;
	uint8_t *p;

	if (!UT_CHECK(m != NULL))
		return NULL;
	memset(&ext, 0, sizeof(ext));
	memset(&l, 0, sizeof(l));
	memcpy(l.dmac, env->mac, 6);
	memcpy(l.smac, env->mac, 6);
	l.sgid = env->gid[0];
	l.dgid = env->gid[0];
	l.hop_limit = 64;
	l.udp_sport = UROCE_UDP_SPORT_MIN;
	fill(payload, sizeof(payload));
	p = (uint8_t *)rte_pktmbuf_append(m, 256);
	len = uroce_wire_build(p, 256, &l, &bth, &ext, payload, sizeof(payload));
	UT_CHECK(len > 0);
	rte_pktmbuf_trim(m, (uint16_t)(256 - len));
	if (bad_icrc)
		p[len - 10] ^= 0x40;	/* a payload byte */
	return m;
}

/* Wait until a counter of dev moves past old. */
static bool
wait_stat(struct uroce_dev *dev, size_t off, uint64_t old)
{
	double end = ut_now_s() + UT_WAIT_S;
	struct uroce_dev_stats st;

	do {
		uroce_dev_stats_get(dev, &st);
		if (*(uint64_t *)(void *)((uint8_t *)&st + off) > old)
			return true;
		if (ut_stuck)
			return false;
		ut_progress();
	} while (ut_now_s() < end);
	ut_stuck = true;
	return false;
}

static void
check_drops(struct side *a, struct side *b)
{
	struct uroce_dev *dev = a->dev;
	struct uroce_dev_stats st0, st1;
	uint32_t qpn = a->qp->qpn ^ 0x5a5a5a;

	while (qpn < 2 || qpn == a->qp->qpn || qpn == b->qp->qpn)
		qpn = (qpn + 7) & UROCE_QPN_MASK;
	uroce_dev_stats_get(dev, &st0);
	UT_CHECK_EQ(uroce_dev_inject(dev, frame_for(dev, qpn, false)), 0);
	UT_CHECK(wait_stat(dev, offsetof(struct uroce_dev_stats, unknown_qpn),
			   st0.unknown_qpn));
	uroce_dev_stats_get(dev, &st1);
	UT_CHECK_EQ(st1.unknown_qpn, st0.unknown_qpn + 1);
	UT_CHECK_EQ(st1.wire.verdict[UROCE_WIRE_OK],
		    st0.wire.verdict[UROCE_WIRE_OK] + 1);

	/* A bad ICRC is a drop by verdict, before any QPN lookup. */
	UT_CHECK_EQ(uroce_dev_inject(dev, frame_for(dev, a->qp->qpn, true)), 0);
	UT_CHECK(wait_stat(dev, offsetof(struct uroce_dev_stats, wire) +
			   sizeof(uint64_t) * UROCE_WIRE_DROP_ICRC,
			   st1.wire.verdict[UROCE_WIRE_DROP_ICRC]));
	uroce_dev_stats_get(dev, &st0);
	UT_CHECK_EQ(st0.wire.verdict[UROCE_WIRE_DROP_ICRC],
		    st1.wire.verdict[UROCE_WIRE_DROP_ICRC] + 1);
	UT_CHECK_EQ(st0.unknown_qpn, st1.unknown_qpn);
	UT_NOTE("unknown QPN 0x%06x, bad ICRC", qpn);
}

static void
check_modify_errors(struct side *a)
{
	struct ibv_qp_attr before, after, bad;
	struct ibv_qp_init_attr init_b, init_a;
	struct ibv_qp_init_attr cinit = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct uroce_qp *c = NULL;

	memset(&before, 0, sizeof(before));
	memset(&after, 0, sizeof(after));
	UT_CHECK_EQ(uroce_dev_qp_query(a->qp, &before, &init_b), 0);
	UT_CHECK_EQ(before.qp_state, IBV_QPS_RTS);

	/* RTS -> RTR is no transition. */
	memset(&bad, 0, sizeof(bad));
	bad.qp_state = IBV_QPS_RTR;
	bad.path_mtu = IBV_MTU_256;
	bad.dest_qp_num = 3;
	UT_CHECK_EQ(uroce_dev_qp_modify(a->qp, &bad, IBV_QP_STATE |
					IBV_QP_PATH_MTU | IBV_QP_DEST_QPN),
		    -EINVAL);
	/* RTS -> RTS with an attribute that transition does not take. */
	memset(&bad, 0, sizeof(bad));
	bad.qp_state = IBV_QPS_RTS;
	bad.sq_psn = 999;
	bad.path_mtu = IBV_MTU_256;
	UT_CHECK_EQ(uroce_dev_qp_modify(a->qp, &bad, IBV_QP_STATE |
					IBV_QP_SQ_PSN | IBV_QP_PATH_MTU),
		    -EINVAL);
	UT_CHECK_EQ(uroce_dev_qp_query(a->qp, &after, &init_a), 0);
	UT_CHECK_EQ(after.qp_state, IBV_QPS_RTS);
	UT_CHECK_EQ(after.path_mtu, before.path_mtu);
	UT_CHECK_EQ(after.dest_qp_num, before.dest_qp_num);
	UT_CHECK_EQ(after.sq_psn, before.sq_psn);
	UT_CHECK_EQ(after.rq_psn, before.rq_psn);
	UT_CHECK_EQ(after.timeout, before.timeout);
	UT_CHECK_EQ(after.max_rd_atomic, before.max_rd_atomic);
	UT_CHECK_EQ(after.qp_access_flags, before.qp_access_flags);
	UT_CHECK_EQ(init_a.cap.max_send_wr, init_b.cap.max_send_wr);

	/* A fresh QP: INIT -> RTR without its required attributes. */
	if (!UT_CHECK_EQ(uroce_dev_qp_create(a->pd, a->cq, a->cq, &cinit, NULL,
					     &c), 0))
		return;
	UT_CHECK(c->qpn != a->qp->qpn);
	memset(&bad, 0, sizeof(bad));
	bad.qp_state = IBV_QPS_INIT;
	bad.port_num = 1;
	UT_CHECK_EQ(uroce_dev_qp_modify(c, &bad, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	memset(&bad, 0, sizeof(bad));
	bad.qp_state = IBV_QPS_RTR;
	bad.path_mtu = IBV_MTU_1024;
	UT_CHECK_EQ(uroce_dev_qp_modify(c, &bad, IBV_QP_STATE | IBV_QP_PATH_MTU),
		    -EINVAL);
	/* A path MTU above the device's active_mtu. */
	if (uroce_dev_env(a->dev)->lim.active_mtu < IBV_MTU_4096) {
		memset(&bad, 0, sizeof(bad));
		bad.qp_state = IBV_QPS_RTR;
		bad.path_mtu = IBV_MTU_4096;
		bad.dest_qp_num = a->qp->qpn;
		bad.max_dest_rd_atomic = 1;
		bad.ah_attr.is_global = 1;
		bad.ah_attr.port_num = 1;
		bad.ah_attr.grh.hop_limit = 64;
		memcpy(bad.ah_attr.grh.dgid.raw,
		       uroce_dev_env(a->dev)->gid[0].raw, 16);
		UT_CHECK_EQ(uroce_dev_qp_modify(c, &bad, IBV_QP_STATE |
				IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER), -EINVAL);
	}
	memset(&after, 0, sizeof(after));
	UT_CHECK_EQ(uroce_dev_qp_query(c, &after, NULL), 0);
	UT_CHECK_EQ(after.qp_state, IBV_QPS_INIT);
	UT_CHECK_EQ(after.dest_qp_num, 0);
	UT_CHECK_EQ(uroce_dev_qp_destroy(c), 0);
	UT_NOTE("modify errors");
}

static void
check_ah(struct side *a, struct side *b)
{
	struct ibv_ah_attr attr;
	struct uroce_ah *ah = NULL;

	memset(&attr, 0, sizeof(attr));
	attr.is_global = 1;
	attr.port_num = 1;
	attr.grh.hop_limit = 64;
	memcpy(attr.grh.dgid.raw, uroce_dev_env(b->dev)->gid[0].raw, 16);
	if (UT_CHECK_EQ(uroce_dev_ah_create(a->pd, &attr, &ah), 0)) {
		UT_CHECK(ah->resolved);
		UT_CHECK_MEM(ah->l2l3.dmac, uroce_dev_env(b->dev)->mac, 6);
		UT_CHECK_MEM(ah->l2l3.smac, uroce_dev_env(a->dev)->mac, 6);
		UT_CHECK_EQ(uroce_pd_free(a->pd), -EBUSY);
		UT_CHECK_EQ(uroce_dev_ah_destroy(ah), 0);
	}
	/* Nobody answers ARP for .99 of the subnet: resolution gives up
	 * after its retries, as ibv_create_ah() fails without a neighbour. */
	attr.grh.dgid.raw[15] = 99;
	UT_CHECK_EQ(uroce_dev_ah_create(a->pd, &attr, &ah), -EHOSTUNREACH);
	attr.is_global = 0;
	UT_CHECK_EQ(uroce_dev_ah_create(a->pd, &attr, &ah), -EINVAL);
	attr.is_global = 1;
	attr.grh.sgid_index = UROCE_GID_TBL_MAX - 1;
	UT_CHECK_EQ(uroce_dev_ah_create(a->pd, &attr, &ah), -EINVAL);
	UT_NOTE("address handles");
}

/* Loss on the link: the transport retransmitted, and every retransmit
 * timeout was a timer the engine's wheel ran. The frames the link dropped
 * went through the port's transmit bursts, whose cycles are counted. */
static void
check_recovery(struct side *a, struct side *b)
{
	struct uroce_qp_stats qa, qb;
	struct uroce_port_stats pa, pb;
	struct uroce_lcore_stats ls;
	uint64_t timers = 0, tx_cycles = 0;
	unsigned int i;

	UT_CHECK_EQ(uroce_dev_qp_stats(a->qp, &qa), 0);
	UT_CHECK_EQ(uroce_dev_qp_stats(b->qp, &qb), 0);
	uroce_port_stats_get(uroce_dev_port(a->dev), &pa);
	uroce_port_stats_get(uroce_dev_port(b->dev), &pb);
	UT_CHECK(pa.fault_drop + pb.fault_drop > 0);
	UT_CHECK(qa.retransmits + qb.retransmits > 0);
	for (i = 0; uroce_engine_lcore_stats(i, &ls) == 0; i++) {
		timers += ls.timers;
		tx_cycles += ls.tx_cycles;
	}
	UT_CHECK(timers >= qa.timeouts + qb.timeouts);
	UT_CHECK(tx_cycles > 0);
	printf("  link drops %" PRIu64 ", retransmits %" PRIu64
	       ", timeouts %" PRIu64 ", timers %" PRIu64 "\n",
	       pa.fault_drop + pb.fault_drop, qa.retransmits + qb.retransmits,
	       qa.timeouts + qb.timeouts, timers);
	UT_NOTE("recovery");
}

/*
 * Congestion control over the link, a's QP sending to b's through b's
 * port, which marks CE on what it receives (fault ce=P) or not: with
 * marks, b's QP counts them and sends CNPs, a's QP handles them and its
 * DCQCN rate is below the line rate (it cannot recover within the run,
 * make_cfg()); without, no CNP and no limit. The bytes were checked by
 * traffic().
 */
static void
check_cc(struct side *a, struct side *b, bool marks)
{
	struct uroce_qp_stats qa, qb;
	struct uroce_port_stats pb;
	double end = ut_now_s() + UT_WAIT_S;
	uint64_t rate;

	/* The last CNPs may still be on their way to a. */
	do {
		UT_CHECK_EQ(uroce_dev_qp_stats(a->qp, &qa), 0);
		UT_CHECK_EQ(uroce_dev_qp_stats(b->qp, &qb), 0);
		if (qa.rp_cnp_handled + qa.rp_cnp_ignored != qb.np_cnp_sent)
			usleep(1000);
	} while (qa.rp_cnp_handled + qa.rp_cnp_ignored != qb.np_cnp_sent &&
		 ut_now_s() < end);
	uroce_port_stats_get(uroce_dev_port(b->dev), &pb);
	rate = uroce_qp_cc_rate_kbps(a->qp);
	printf("  CE marked %" PRIu64 ", at b's QP %" PRIu64 ", CNPs sent %"
	       PRIu64 ", handled %" PRIu64 ", ignored %" PRIu64 ", a's rate %"
	       PRIu64 " kbit/s\n", pb.fault_ce, qb.np_ecn_marked_roce_packets,
	       qb.np_cnp_sent, qa.rp_cnp_handled, qa.rp_cnp_ignored, rate);
	UT_CHECK(a->qp->path.ect && b->qp->path.ect);
	UT_CHECK_EQ(qa.rp_cnp_handled + qa.rp_cnp_ignored, qb.np_cnp_sent);
	/* a's port marks nothing, and b sends no data that a would mark. */
	UT_CHECK_EQ(qa.np_cnp_sent, 0);
	if (!marks) {
		UT_CHECK_EQ(pb.fault_ce, 0);
		UT_CHECK_EQ(qb.np_ecn_marked_roce_packets, 0);
		UT_CHECK_EQ(qb.np_cnp_sent, 0);
		UT_CHECK_EQ(rate, 0);
		UT_NOTE("cc, no marks");
		return;
	}
	UT_CHECK(pb.fault_ce > 0);
	/* Every mark b's port made on a frame for b's QP reached it (b's
	 * QP is the only one of its port that a sends to). */
	UT_CHECK_EQ(qb.np_ecn_marked_roce_packets, pb.fault_ce);
	UT_CHECK(qb.np_cnp_sent > 0);
	UT_CHECK(qb.np_cnp_sent <= qb.np_ecn_marked_roce_packets);
	UT_CHECK(qa.rp_cnp_handled > 0);
	UT_CHECK(rate > 0 && rate < UINT64_C(100000000));
	UT_NOTE("cc, marks");
}

/* An idle background lcore goes to sleep (counted), rather than spin. */
static void
check_backoff(void)
{
	struct uroce_lcore_stats ls0, ls;
	double end = ut_now_s() + UT_WAIT_S;

	UT_CHECK_EQ(uroce_engine_lcore_stats(0, &ls0), 0);
	do {
		usleep(1000);
		uroce_engine_lcore_stats(0, &ls);
	} while (ls.sleeps == ls0.sleeps && ut_now_s() < end);
	UT_CHECK(ls.sleeps > ls0.sleeps);
	UT_CHECK(ls.idle_loops > ls0.idle_loops);
	UT_NOTE("back-off");
}

/* Native progress: a pause of the polling thread longer than a
 * millisecond is one gap of at least that long, however idle the loop
 * is; the polls around it are not. */
static void
check_gap(void)
{
	struct uroce_lcore_stats ls1, ls2;
	uint64_t hz = rte_get_tsc_hz();

	uroce_engine_poll();
	UT_CHECK_EQ(uroce_engine_lcore_stats(0, &ls1), 0);
	usleep(5000);
	uroce_engine_poll();
	UT_CHECK_EQ(uroce_engine_lcore_stats(0, &ls2), 0);
	UT_CHECK_EQ(ls2.gap_loops, ls1.gap_loops + 1);
	UT_CHECK(ls2.gap_cycles - ls1.gap_cycles >= hz * 5 / 1000);
	UT_CHECK(ls2.long_loops == ls1.long_loops);
	UT_NOTE("gap of 5 ms counted");
}

/*
 * Native progress, a paced QP: a post to it while it waits for its tokens
 * is left to its timer (lib/engine/lcore.c, eng_kick_waits()) rather than
 * served on the posting thread for nothing; lifting the limit sends both
 * WRITEs, byte-exact. At 10 kbit/s the wait for a batch of 7 frames after
 * the 8 of the default burst is seconds long, so the second post comes
 * within it.
 */
static void
check_pace_kick(struct side *a, struct side *b)
{
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = 10 };
	const struct eng_qp *eq = a->qp->engine;
	struct uroce_lcore_stats ls0, ls1, ls2;
	const uint32_t len = 12 * 1024, len2 = 100, off2 = 0x3800;

	if (!UT_CHECK_EQ(uroce_dev_qp_rate_limit(a->qp, &rl), 0))
		return;
	fill(a->buf + OFF_SEND, len);
	fill(a->buf + off2, len2);
	memset(b->buf + OFF_WRITE, 0, len);
	memset(b->buf + OFF_READ, 0, len2);
	UT_CHECK_EQ(uroce_engine_lcore_stats(0, &ls0), 0);
	UT_CHECK_EQ(post_one(a, IBV_WR_RDMA_WRITE, OFF_SEND, len,
			     (uintptr_t)b->buf + OFF_WRITE, b->mr->rkey, 4), 0);
	UT_CHECK_EQ(uroce_engine_lcore_stats(0, &ls1), 0);
	/* Served on this thread, then waiting for tokens on its timer. */
	UT_CHECK_EQ(ls1.direct_tx, ls0.direct_tx + 1);
	UT_CHECK_EQ(a->qp->req.stop, UROCE_REQ_STOP_TOKENS);
	UT_CHECK(uroce_qp_tx_waits(a->qp, rte_get_tsc_cycles()));
	UT_CHECK(uroce_wheel_armed(&eq->tmo->e));
	UT_CHECK_EQ(post_one(a, IBV_WR_RDMA_WRITE, off2, len2,
			     (uintptr_t)b->buf + OFF_READ, b->mr->rkey, 5), 0);
	UT_CHECK_EQ(uroce_engine_lcore_stats(0, &ls2), 0);
	UT_CHECK_EQ(ls2.direct_tx, ls1.direct_tx);
	UT_CHECK(!eq->ready.queued);
	UT_CHECK(uroce_wheel_armed(&eq->tmo->e));
	/* No limit: the rest goes now, in order. */
	rl.rate_limit = 0;
	UT_CHECK_EQ(uroce_dev_qp_rate_limit(a->qp, &rl), 0);
	send_done(a, 4, IBV_WC_RDMA_WRITE);
	send_done(a, 5, IBV_WC_RDMA_WRITE);
	UT_CHECK_MEM(b->buf + OFF_WRITE, a->buf + OFF_SEND, len);
	UT_CHECK_MEM(b->buf + OFF_READ, a->buf + off2, len2);
	UT_NOTE("a post to a QP waiting for tokens left to its timer");
}

/* ---------------------------------------------------------------------------
 * Scenarios.
 */
struct scenario {
	const char *name;
	const char *file;	/* a config file for uroce_init() (public API) */
	const char *link;	/* else ringlink NAME: ports side 0 (and 1) */
	unsigned int ndev;
	uint8_t net;		/* 10.9.<net>.<port + 1>/24 */
	uint16_t mtu;
	unsigned int cfg_lcores;
	unsigned int flags;
	unsigned int lcores;	/* expected background lcores */
	bool xdev_wire;		/* two devices: frames cross the link */
	uint32_t drop_ppm;	/* seeded loss on the link */
	bool busy_workers;	/* the host's workers are taken: native */
	bool ip_cksum_ol;	/* the devices' QPs use the checksum offload */
	bool peer_neigh;	/* [neigh] 10.9.<net>.2 = 02:00:00:00:<net>:02 */
	bool cc;		/* [port] cc = dcqcn on both ports */
	uint32_t ce_ppm;	/* fault ce=P on port 1 (b's receive side) */
};

/* A config built in code: ringlink ports (the file syntax of the config
 * component does not take ringlink dev strings yet). */
static void
make_cfg(const struct scenario *sc, struct uroce_config *cfg)
{
	unsigned int i;

	memset(cfg, 0, sizeof(*cfg));
	cfg->port_cnt = sc->ndev;
	cfg->lcores = sc->cfg_lcores;
	for (i = 0; i < sc->ndev; i++) {
		snprintf(cfg->port[i].dev, sizeof(cfg->port[i].dev),
			 "ringlink:%s,side=%u", sc->link, i);
		cfg->port[i].has_ip4 = true;
		cfg->port[i].ip4 = htobe32(UINT32_C(0x0a090000) |
					   (uint32_t)sc->net << 8 | (i + 1));
		cfg->port[i].ip4_prefix = 24;
		cfg->port[i].mtu = sc->mtu;
		uroce_config_dcqcn_defaults(&cfg->port[i].dcqcn);
		if (sc->cc) {
			/* DCQCN that cannot recover within a run: a 1 s
			 * timer, no byte counter, 1 Mbit/s steps (from a cut
			 * of 100 Gbit/s, tens of thousands of seconds). */
			cfg->port[i].cc = UROCE_CC_DCQCN;
			cfg->port[i].dcqcn.rpg_time_reset = 1000000;
			cfg->port[i].dcqcn.rpg_byte_reset = 0;
			cfg->port[i].dcqcn.rpg_ai_rate = 1;
			cfg->port[i].dcqcn.rpg_hai_rate = 1;
		}
		if (i == 1 && sc->ce_ppm > 0) {
			cfg->port[i].has_fault = true;
			cfg->port[i].fault.ce_ppm = sc->ce_ppm;
			cfg->port[i].fault.seed = 0x5eed;
		}
		if (sc->drop_ppm > 0) {
			cfg->port[i].has_fault = true;
			cfg->port[i].fault.drop_ppm = sc->drop_ppm;
			cfg->port[i].fault.seed = 0x1234 + i;
		}
	}
	if (sc->peer_neigh) {
		cfg->neigh_cnt = 1;
		cfg->neigh[0].ip4 = htobe32(UINT32_C(0x0a090002) |
					    (uint32_t)sc->net << 8);
		cfg->neigh[0].mac = (struct rte_ether_addr){
			{ 0x02, 0x00, 0x00, 0x00, sc->net, 0x02 } };
	}
}

/* Keep the EAL workers taken (sleeping), as a host application would. */
static uint32_t hold;

static int
hold_lcore(void *arg)
{
	(void)arg;
	while (__atomic_load_n(&hold, __ATOMIC_ACQUIRE) != 0)
		usleep(1000);
	return 0;
}

static void
hold_workers(bool on)
{
	unsigned int id;

	__atomic_store_n(&hold, on ? 1 : 0, __ATOMIC_RELEASE);
	RTE_LCORE_FOREACH_WORKER(id) {
		if (on)
			UT_CHECK_EQ(rte_eal_remote_launch(hold_lcore, NULL, id), 0);
		else
			rte_eal_wait_lcore(id);
	}
}

static int
on_caller(void *arg)
{
	*(unsigned int *)arg = rte_lcore_id();
	return 7;
}

/* Native progress: uroce_engine_run_on() runs the function on the caller,
 * under the progress lock; there is no lcore 1. */
static void
run_on_native(void)
{
	unsigned int where = RTE_MAX_LCORE;

	UT_CHECK_EQ(uroce_engine_run_on(0, on_caller, &where), 7);
	UT_CHECK_EQ(where, rte_lcore_id());
	UT_CHECK_EQ(uroce_engine_run_on(1, on_caller, &where), -EINVAL);
}

static bool
engine_up(const struct scenario *sc, struct uroce_config *cfg)
{
	char err[512] = "";
	int ret;

	if (sc->file != NULL) {
		if (!load_conf(sc->file, cfg))
			return false;
		uroce_config_free(cfg);
		ret = uroce_init(conf_path, UROCE_INIT_NATIVE, err, sizeof(err));
		unlink(conf_path);
	} else {
		make_cfg(sc, cfg);
		ret = uroce_engine_init(cfg, sc->flags, err, sizeof(err));
	}
	if (!UT_CHECK_EQ(ret, 0)) {
		fprintf(stderr, "     %s: %s\n", sc->name, err);
		return false;
	}
	UT_CHECK_EQ(uroce_engine_lcores(), sc->lcores);
	if (sc->lcores == 0)
		run_on_native();
	return true;
}

static void
engine_down(const struct scenario *sc)
{
	if (sc->file != NULL)
		uroce_fini();
	else
		uroce_engine_fini();
	UT_CHECK(!uroce_engine_running());
	UT_CHECK_EQ(uroce_dev_count(), 0);
}

static void
run_scenario(const struct scenario *sc)
{
	struct uroce_config cfg;
	struct uroce_dev_stats st0, st1;
	struct uroce_lcore_stats ls;
	struct side a, b;
	struct uroce_dev *da, *db;

	printf("scenario: %s\n", sc->name);
	ut_stuck = false;
	memset(&cfg, 0, sizeof(cfg));
	if (sc->busy_workers)
		hold_workers(true);
	if (!engine_up(sc, &cfg)) {
		if (sc->busy_workers)
			hold_workers(false);
		return;
	}
	da = uroce_dev_get(0);
	db = uroce_dev_count() > 1 ? uroce_dev_get(1) : da;
	UT_CHECK(da != NULL && db != NULL);
	UT_CHECK(uroce_dev_by_name("uroce0") == da);
	{
		char err[128] = "";

		UT_CHECK_EQ(uroce_engine_init(&cfg, sc->flags, err, sizeof(err)),
			    -EALREADY);
		UT_CHECK(err[0] != '\0');
	}
	/* Ring links offer no offload: force it, as a NIC's port would set
	 * it, before any QP exists. Looped frames meet no NIC. */
	if (sc->ip_cksum_ol) {
		((struct uroce_qp_env *)uroce_dev_env(da))->tx_ip_cksum = true;
		((struct uroce_qp_env *)uroce_dev_env(db))->tx_ip_cksum = true;
	}
	if (side_open(&a, da) && side_open(&b, db) &&
	    qp_connect(&a, &b, 100, 0xfffff0) && qp_connect(&b, &a, 0xfffff0, 100)) {
		if (sc->lcores == 0) {
			check_ready_list(&a);
			check_ready_list(&b);
		}
		check_ah(&a, &b);
		traffic(&a, &b);
		if (sc->drop_ppm > 0)
			check_recovery(&a, &b);
		if (sc->cc)
			check_cc(&a, &b, sc->ce_ppm > 0);
		check_drops(&a, &b);
		check_modify_errors(&a);
		if (sc->lcores > 0) {
			check_backoff();
		} else {
			check_gap();
			check_pace_kick(&a, &b);
		}
	}
	UT_NOTE("scenario %s", sc->name);
	uroce_dev_stats_get(da, &st0);
	uroce_dev_stats_get(db, &st1);
	if (da != db && sc->xdev_wire) {
		/* Frames crossed the link both ways, none looped. */
		UT_CHECK(st0.tx_pkts > 0 && st1.tx_pkts > 0);
		UT_CHECK(st0.rx_pkts > 0 && st1.rx_pkts > 0);
		UT_CHECK_EQ(st0.loop_pkts + st1.loop_pkts, 0);
	} else {
		UT_CHECK(st0.loop_pkts > 0 && st1.loop_pkts > 0);
		UT_CHECK_EQ(st0.tx_pkts + st1.tx_pkts, 0);
	}
	UT_CHECK_EQ(st0.handoffs + st0.handoff_drops + st0.loop_drops, 0);
	UT_CHECK_EQ(uroce_engine_lcore_stats(0, &ls), 0);
	UT_CHECK(ls.loops > 0 && ls.idle_loops <= ls.loops);
	UT_NOTE("scenario %s: counters", sc->name);
	side_close(&a);
	side_close(&b);
	engine_down(sc);
	if (sc->busy_workers)
		hold_workers(false);
}

/*
 * Two engine lcores, one device: QPs spread round-robin, a QP's CQs must
 * agree on the owner, and frames between QPs of different lcores are
 * handed to the owner.
 */
static void
run_two_lcores(void)
{
	static const struct scenario sc = {
		.name = "two lcores", .link = "h4two", .ndev = 1, .net = 4,
		.mtu = 1500, .cfg_lcores = 2, .lcores = 2,
	};
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct uroce_config cfg;
	struct uroce_dev_stats st;
	struct uroce_cq *cq3 = NULL;
	struct uroce_qp *q = NULL;
	struct side a, b;

	printf("scenario: %s\n", sc.name);
	ut_stuck = false;
	memset(&cfg, 0, sizeof(cfg));
	if (!engine_up(&sc, &cfg))
		return;
	if (side_open(&a, uroce_dev_get(0)) && side_open(&b, uroce_dev_get(0))) {
		UT_CHECK(a.qp->lcore != b.qp->lcore);
		/* CQs bound to different lcores cannot serve one QP. */
		UT_CHECK_EQ(uroce_dev_qp_create(a.pd, a.cq, b.cq, &init, NULL, &q),
			    -EINVAL);
		/* An unbound CQ follows the bound one. */
		UT_CHECK_EQ(uroce_dev_cq_create(a.dev, 16, NULL, &cq3), 0);
		if (UT_CHECK_EQ(uroce_dev_qp_create(a.pd, cq3, b.cq, &init, NULL,
						    &q), 0)) {
			UT_CHECK_EQ(q->lcore, b.qp->lcore);
			UT_CHECK_EQ(uroce_dev_cq_lcore(cq3), (int)b.qp->lcore);
			UT_CHECK_EQ(uroce_dev_qp_destroy(q), 0);
			UT_CHECK_EQ(uroce_dev_cq_lcore(cq3), -1);
		}
		UT_CHECK_EQ(uroce_dev_cq_destroy(cq3), 0);
		if (qp_connect(&a, &b, 1, 2) && qp_connect(&b, &a, 2, 1)) {
			op_send(&a, &b, 5000, false);
			op_write(&b, &a, 5000);
			op_read(&a, &b, 5000);
			op_atomics(&b, &a);
			check_modify_errors(&b);
		}
		uroce_dev_stats_get(a.dev, &st);
		UT_CHECK(st.handoffs > 0);
		UT_CHECK_EQ(st.handoff_drops, 0);
		UT_NOTE("two lcores");
	}
	side_close(&a);
	side_close(&b);
	engine_down(&sc);
}

/*
 * EAL as ut_eal_init() starts it (UROCE_TEST_MEM, --no-pci), but with
 * lcores 0-2 floating over CPUs 0-1: ut_eal_init() adds "-l 0" unless its
 * extra arguments hold "-l", and EAL refuses -l together with --lcores.
 */
static int
eal_start(const char *prog)
{
	static char prefix[64], mem_buf[256];
	const char *mem = getenv("UROCE_TEST_MEM");
	char *argv[UT_EAL_MAX_ARGS], *tok, *save = NULL;
	int argc = 0;

	argv[argc++] = (char *)(uintptr_t)prog;
	argv[argc++] = (char *)(uintptr_t)"--no-pci";
	argv[argc++] = (char *)(uintptr_t)"--log-level=*:warning";
	argv[argc++] = (char *)(uintptr_t)"--no-telemetry";	/* no socket left */
	argv[argc++] = (char *)(uintptr_t)"--lcores";
	argv[argc++] = (char *)(uintptr_t)"(0-2)@(0-1)";
	if (mem == NULL || *mem == '\0' || strstr(mem, "--no-huge") != NULL) {
		snprintf(mem_buf, sizeof(mem_buf), "%s",
			 mem && *mem ? mem : "--no-huge -m 256");
		for (tok = strtok_r(mem_buf, " ", &save);
		     tok != NULL && argc < UT_EAL_MAX_ARGS - 4;
		     tok = strtok_r(NULL, " ", &save))
			argv[argc++] = tok;
		snprintf(prefix, sizeof(prefix), "--file-prefix=h4e%d",
			 (int)getpid());
		argv[argc++] = prefix;
		argv[argc++] = (char *)(uintptr_t)"--no-shconf";
	} else {
		argv[argc++] = (char *)(uintptr_t)"--in-memory";
	}
	argv[argc] = NULL;
	return rte_eal_init(argc, argv);
}

static void
check_active_mtu(void)
{
	UT_CHECK_EQ(uroce_dev_active_mtu(1500), IBV_MTU_1024);
	UT_CHECK_EQ(uroce_dev_active_mtu(9000), IBV_MTU_4096);
	UT_CHECK_EQ(uroce_dev_active_mtu(4096), IBV_MTU_2048);
	UT_CHECK_EQ(uroce_dev_active_mtu(4176), IBV_MTU_4096);
	UT_CHECK_EQ(uroce_dev_active_mtu(4175), IBV_MTU_2048);
	UT_CHECK_EQ(uroce_dev_active_mtu(336), IBV_MTU_256);
	UT_CHECK_EQ(uroce_dev_active_mtu(335), 0);
	UT_CHECK_EQ(uroce_dev_active_mtu(68), 0);
}

/*
 * A port nobody drains (a ringlink whose side 1 is never opened: its ring
 * fills and the ethdev takes nothing) under NSTUCK RC QPs, each with one
 * 64 KiB WRITE to a peer that does not exist (timeout 8, about 1 ms;
 * retry_cnt 3). The queue is stuck once, for good (tx_stuck 1): from then
 * on it drops what the ethdev refuses and is never busy, so every QP's
 * packets leave into the void, the one that asks for an ACK too, and each
 * QP fails with RETRY_EXC_ERR after its retry_cnt + 1 timeouts. A queue
 * that dropped only what waited and was busy again at once would make the
 * QPs that had sent nothing wait for a turn that each 100 ms drop gave a
 * batch or two of (lib/net/port.c, wait_stuck()), and would be found
 * stuck again every 100 ms.
 */
#define NSTUCK		64
#define STUCK_LEN	(64 * 1024)
#define STUCK_RETRY	3

static void
stuck_traffic(struct side *s, struct uroce_qp **qps)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf, .length = STUCK_LEN,
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr, *bad = NULL;
	struct uroce_qp_stats st;
	bool failed[NSTUCK] = { false };
	struct ibv_wc wc;
	unsigned int i, n;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = 0x10000;
	wr.wr.rdma.rkey = 0x1234;
	for (i = 0; i < NSTUCK; i++) {
		wr.wr_id = i;
		UT_CHECK_EQ(uroce_qp_post_send(qps[i], &wr, &bad), 0);
	}
	for (n = 0; n < NSTUCK; n++) {
		memset(&wc, 0, sizeof(wc));
		if (!UT_CHECK(ut_wait_wc(s->cq, &wc)) ||
		    !UT_CHECK(wc.wr_id < NSTUCK))
			return;
		UT_CHECK(!failed[wc.wr_id]);
		failed[wc.wr_id] = true;
		UT_CHECK_EQ(wc.status, IBV_WC_RETRY_EXC_ERR);
		UT_CHECK_EQ(wc.qp_num, qps[wc.wr_id]->qpn);
	}
	for (i = 0; i < NSTUCK; i++) {
		UT_CHECK_EQ(uroce_dev_qp_stats(qps[i], &st), 0);
		UT_CHECK_EQ(st.timeouts, STUCK_RETRY + 1u);
		UT_CHECK_EQ(qps[i]->state, IBV_QPS_ERR);
	}
}

static void
check_stuck_port(void)
{
	static const struct scenario sc = {
		.name = "a port nobody drains", .link = "h4st", .ndev = 1,
		.net = 12, .mtu = 1500, .cfg_lcores = 1,
		.flags = UROCE_ENGINE_NO_LCORES, .peer_neigh = true,
	};
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct uroce_qp *qps[NSTUCK] = { NULL };
	struct uroce_port_stats ps0, ps1;
	struct uroce_config cfg;
	union uroce_gid dgid;
	/* timeout 8: about 1 ms */
	struct qp_target t = {
		.mtu = IBV_MTU_1024, .dgid = &dgid, .timeout = 8,
		.retry_cnt = STUCK_RETRY,
	};
	struct side s;
	unsigned int i;
	bool ok;

	printf("scenario: %s\n", sc.name);
	ut_stuck = false;
	memset(&cfg, 0, sizeof(cfg));
	/* The peer's MAC is known (peer_neigh): nothing waits for ARP. */
	if (!engine_up(&sc, &cfg))
		return;
	uroce_gid_from_v4(&dgid, cfg.neigh[0].ip4);
	ok = side_open(&s, uroce_dev_get(0));
	for (i = 0; ok && i < NSTUCK; i++) {
		t.dqpn = 0x100 + i;
		ok = UT_CHECK_EQ(uroce_dev_qp_create(s.pd, s.cq, s.cq, &init,
						     NULL, &qps[i]), 0) &&
			qp_connect_to(qps[i], &t);
	}
	uroce_port_stats_get(uroce_dev_port(s.dev), &ps0);
	if (ok)
		stuck_traffic(&s, qps);
	uroce_port_stats_get(uroce_dev_port(s.dev), &ps1);
	UT_CHECK_EQ(ps1.tx_stuck - ps0.tx_stuck, 1);
	UT_CHECK(ps1.tx_full - ps0.tx_full > 0);
	UT_NOTE("a port nobody drains: %u QPs RETRY_EXC_ERR, stuck once, "
		"%" PRIu64 " frames dropped", NSTUCK, ps1.tx_full - ps0.tx_full);
	for (i = 0; i < NSTUCK; i++)
		if (qps[i] != NULL)
			UT_CHECK_EQ(uroce_dev_qp_destroy(qps[i]), 0);
	side_close(&s);
	engine_down(&sc);
}

/* Init errors leave nothing up: a second init then works. */
static void
check_init_errors(void)
{
	static const struct scenario bad = {
		.name = "mtu too small", .link = "h4bad", .ndev = 1, .net = 5,
		.mtu = 300, .cfg_lcores = 1,
	};
	static const struct scenario good = {
		.name = "after an error", .link = "h4bad", .ndev = 1, .net = 5,
		.mtu = 1500, .cfg_lcores = 1, .flags = UROCE_ENGINE_NO_LCORES,
	};
	struct uroce_config cfg;
	char err[512] = "";

	UT_CHECK_EQ(uroce_engine_init(NULL, 0, err, sizeof(err)), -EINVAL);
	UT_CHECK(err[0] != '\0');
	UT_CHECK_EQ(uroce_engine_poll(), -ENODEV);
	UT_CHECK_EQ(uroce_init("/nonexistent/h4.conf", 0, err, sizeof(err)),
		    -ENOENT);
	make_cfg(&bad, &cfg);
	err[0] = '\0';
	UT_CHECK_EQ(uroce_engine_init(&cfg, 0, err, sizeof(err)), -EINVAL);
	UT_CHECK(strstr(err, "mtu") != NULL);
	UT_CHECK(!uroce_engine_running());
	if (engine_up(&good, &cfg)) {
		UT_CHECK_EQ(uroce_dev_count(), 1);
		UT_CHECK_EQ(uroce_dev_env(uroce_dev_get(0))->lim.active_mtu,
			    IBV_MTU_1024);
		engine_down(&good);
	}
	UT_NOTE("init errors");
}

int
main(int argc, char **argv)
{
	static const struct scenario scs[] = {
		{ .name = "one device, native (uroce_init/uroce_poll)",
		  .file = "[port]\ndev = net_ring_h4n1\nip = 10.9.1.1/24\n"
			  "mtu = 1500\n[eal]\nlcores = 1\n",
		  .ndev = 1 },
		{ .name = "one device, one lcore", .link = "h4b1", .ndev = 1,
		  .net = 2, .mtu = 9000, .cfg_lcores = 1, .lcores = 1 },
		{ .name = "two devices, loopback, native, checksum offload",
		  .link = "h4n2", .ndev = 2, .net = 3, .mtu = 1500,
		  .cfg_lcores = 1, .flags = UROCE_ENGINE_NO_LCORES,
		  .ip_cksum_ol = true },
		{ .name = "two devices, over the link, one lcore", .link = "h4b2",
		  .ndev = 2, .net = 6, .mtu = 9000, .cfg_lcores = 1,
		  .flags = UROCE_ENGINE_WIRE_XDEV, .lcores = 1,
		  .xdev_wire = true },
		{ .name = "two devices, over the link, native", .link = "h4n3",
		  .ndev = 2, .net = 7, .mtu = 1500, .cfg_lcores = 1,
		  .flags = UROCE_ENGINE_NO_LCORES | UROCE_ENGINE_WIRE_XDEV,
		  .xdev_wire = true },
		{ .name = "two devices, over a lossy link, one lcore",
		  .link = "h4l1", .ndev = 2, .net = 10, .mtu = 1500,
		  .cfg_lcores = 1, .flags = UROCE_ENGINE_WIRE_XDEV, .lcores = 1,
		  .xdev_wire = true, .drop_ppm = 20000 },
		{ .name = "two devices, over the link, cc = dcqcn, CE marks at b",
		  .link = "h4c1", .ndev = 2, .net = 12, .mtu = 1500,
		  .cfg_lcores = 1, .flags = UROCE_ENGINE_WIRE_XDEV, .lcores = 1,
		  .xdev_wire = true, .cc = true, .ce_ppm = 100000 },
		{ .name = "two devices, over the link, cc = dcqcn, no marks",
		  .link = "h4c2", .ndev = 2, .net = 13, .mtu = 1500,
		  .cfg_lcores = 1, .flags = UROCE_ENGINE_WIRE_XDEV, .lcores = 1,
		  .xdev_wire = true, .cc = true },
		{ .name = "one device, host EAL without idle workers",
		  .link = "h4w1", .ndev = 1, .net = 11, .mtu = 1500,
		  .cfg_lcores = 1, .busy_workers = true },
	};
	char rundir[PATH_MAX];
	unsigned int i;

	(void)argc;
	ut_srand(0x4e6e);
	if (!UT_CHECK(eal_start(argv[0]) >= 0))
		return ut_summary();
	check_active_mtu();
	for (i = 0; i < RTE_DIM(scs); i++)
		run_scenario(&scs[i]);
	run_two_lcores();
	check_stuck_port();
	check_init_errors();
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	/* EAL leaves its empty runtime directory behind: ours has our prefix. */
	if (strstr(rundir, "/h4e") != NULL)
		rmdir(rundir);
	return ut_summary();
}
