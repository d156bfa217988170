/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * QP1, the GSI (lib/engine/uroce_gsi.h), between two devices joined by a
 * ringlink, frames over the link (UROCE_ENGINE_WIRE_XDEV):
 *  - device A sends a MAD to B's QP1, over IPv4 and IPv6; B's consumer
 *    gets it byte-exact with its source (GID, QP 1, P_Key, UDP port 0xC000
 *    or the folded flow label, B's GID index), its eventfd readable until
 *    the ring is empty, gsi_tx and gsi_rx moved;
 *  - frames to QP1 that are not a valid MAD (Q_Key, length, opcode, P_Key,
 *    MAD version and class) dropped, each by its counter and nothing else,
 *    the consumer receiving nothing; a limited-member P_Key accepted;
 *    a frame to another QPN left to the QPN path (unknown_qpn), and one
 *    to a UD QP's number completed on that QP;
 *  - a full ring drops and counts; no consumer: gsi_drop_noagent; a second
 *    open -EBUSY;
 *  - a send to an address nobody answers: -EHOSTUNREACH, nothing sent;
 *  - QPNs wrap past 0 and 1, which stay the special QPs';
 *  - tshark decodes the capture of port A as InfiniBand with a MAD inside,
 *    nothing malformed (skipped without tshark).
 * Scenarios: native progress, and one background engine lcore (the send a
 * control message to it, the receive on it).
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "engine_priv.h"
#include "uroce_engine.h"
#include "uroce_gsi.h"
#include "uroce_test.h"
#include "uroce_test_eal.h"
#include "uroce_test_engine.h"

#define NET		13	/* 10.9.13.0/24 */

struct scenario {
	const char *name;
	const char *link;
	unsigned int flags;
	unsigned int cfg_lcores;
	const char *pcap;	/* capture of port A, or NULL */
};

static struct uroce_dev *dev_a, *dev_b;

static void
fill(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)ut_rand();
}

/* A CM-looking MAD: base version 1, class 0x07 (CM), version 2, Send. */
static void
mad_fill(uint8_t *mad)
{
	fill(mad, UROCE_MAD_SIZE);
	mad[0] = 1;
	mad[1] = 0x07;
	mad[2] = 2;
	mad[3] = 0x03;
}

static bool
engine_up(const struct scenario *sc)
{
	static struct uroce_config cfg;
	char err[512] = "";
	unsigned int i;
	int ret;

	memset(&cfg, 0, sizeof(cfg));
	cfg.port_cnt = 2;
	cfg.lcores = sc->cfg_lcores;
	for (i = 0; i < 2; i++) {
		snprintf(cfg.port[i].dev, sizeof(cfg.port[i].dev),
			 "ringlink:%s,side=%u", sc->link, i);
		cfg.port[i].has_ip4 = true;
		cfg.port[i].ip4 = rte_cpu_to_be_32(UINT32_C(0x0a090000) |
						   NET << 8 | (i + 1));
		cfg.port[i].ip4_prefix = 24;
		cfg.port[i].mtu = 1500;
	}
	if (sc->pcap != NULL)
		snprintf(cfg.port[0].pcap, sizeof(cfg.port[0].pcap), "%s",
			 sc->pcap);
	ret = uroce_engine_init(&cfg, sc->flags | UROCE_ENGINE_WIRE_XDEV, err,
				sizeof(err));
	if (!UT_CHECK_EQ(ret, 0)) {
		fprintf(stderr, "     %s: %s\n", sc->name, err);
		return false;
	}
	dev_a = uroce_dev_get(0);
	dev_b = uroce_dev_get(1);
	return UT_CHECK(dev_a != NULL && dev_b != NULL);
}

static uint64_t
stat_of(struct uroce_dev *dev, size_t off)
{
	struct uroce_dev_stats st;

	uroce_dev_stats_get(dev, &st);
	return *(uint64_t *)(void *)((uint8_t *)&st + off);
}

/* Progress until a counter of dev reaches want. */
static bool
wait_stat(struct uroce_dev *dev, size_t off, uint64_t want)
{
	double end = ut_now_s() + UT_WAIT_S;

	do {
		if (stat_of(dev, off) >= want)
			return true;
		if (ut_stuck)
			return false;
		ut_progress();
	} while (ut_now_s() < end);
	ut_stuck = true;
	return false;
}

static bool
fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* Progress until fd is readable. */
static bool
wait_fd(int fd)
{
	double end = ut_now_s() + UT_WAIT_S;

	do {
		if (fd_readable(fd))
			return true;
		if (ut_stuck)
			return false;
		ut_progress();
	} while (ut_now_s() < end);
	ut_stuck = true;
	return false;
}

#define GSI_CTR(n)	offsetof(struct uroce_dev_stats, n)

/* The index of env's first IPv6 GID, or -1. */
static int
gid_v6(const struct uroce_qp_env *env)
{
	unsigned int i;

	for (i = 0; i < env->gid_cnt; i++)
		if (!uroce_gid_is_v4(&env->gid[i]))
			return (int)i;
	return -1;
}

/* Over IPv6 (the ports' link-local GIDs): the flow label is in the IPv6
 * header, and folded into the UDP source port. */
static void
check_send_v6(struct uroce_gsi *ga, struct uroce_gsi *gb)
{
	const struct uroce_qp_env *ea = uroce_dev_env(dev_a);
	const struct uroce_qp_env *eb = uroce_dev_env(dev_b);
	int ia = gid_v6(ea), ib = gid_v6(eb);
	struct uroce_mad_tx tx;
	struct uroce_mad_rx rx[2];

	if (!UT_CHECK(ia >= 0 && ib >= 0))
		return;
	memset(&tx, 0, sizeof(tx));
	mad_fill(tx.mad);
	tx.dgid = eb->gid[ib];
	tx.sgid_index = (uint8_t)ia;
	tx.hop_limit = 1;
	tx.flow_label = 0xabcde;
	UT_CHECK_EQ(uroce_gsi_send(ga, &tx), 0);
	UT_CHECK(wait_fd(uroce_gsi_fd(gb)));
	if (!UT_CHECK_EQ(uroce_gsi_recv(gb, rx, 2), 1))
		return;
	UT_CHECK_MEM(rx[0].mad, tx.mad, UROCE_MAD_SIZE);
	UT_CHECK_MEM(rx[0].sgid.raw, ea->gid[ia].raw, 16);
	UT_CHECK_MEM(rx[0].dgid.raw, eb->gid[ib].raw, 16);
	UT_CHECK_EQ(rx[0].gid_index, ib);
	UT_CHECK_EQ(rx[0].src_qp, 1);
	UT_CHECK_EQ(rx[0].flow_label, 0xabcde);
	UT_CHECK_EQ(rx[0].hop_limit, 1);
	UT_CHECK_EQ(rx[0].udp_sport,
		    0xc000 | ((0xabcde ^ (0xabcde >> 14)) & 0x3fff));
}

/* ---------------------------------------------------------------------------
 * A MAD from A to B, through uroce_gsi_send().
 */
static void
check_send_recv(struct uroce_gsi *ga, struct uroce_gsi *gb)
{
	const struct uroce_qp_env *ea = uroce_dev_env(dev_a);
	const struct uroce_qp_env *eb = uroce_dev_env(dev_b);
	struct uroce_dev_stats sa0, sb0, sa1, sb1;
	struct uroce_mad_tx tx;
	struct uroce_mad_rx rx[2];
	int fd = uroce_gsi_fd(gb);

	uroce_dev_stats_get(dev_a, &sa0);
	uroce_dev_stats_get(dev_b, &sb0);
	UT_CHECK(fd >= 0);
	UT_CHECK(!fd_readable(fd));
	memset(&tx, 0, sizeof(tx));
	mad_fill(tx.mad);
	tx.dgid = eb->gid[0];
	tx.sgid_index = 0;
	tx.tclass = 0x68;	/* DSCP 26 */
	UT_CHECK_EQ(uroce_gsi_send(ga, &tx), 0);
	UT_CHECK(wait_fd(fd));
	memset(rx, 0, sizeof(rx));
	if (!UT_CHECK_EQ(uroce_gsi_recv(gb, rx, 2), 1))
		return;
	UT_CHECK_MEM(rx[0].mad, tx.mad, UROCE_MAD_SIZE);
	UT_CHECK_MEM(rx[0].sgid.raw, ea->gid[0].raw, 16);
	UT_CHECK_MEM(rx[0].dgid.raw, eb->gid[0].raw, 16);
	UT_CHECK_EQ(rx[0].src_qp, 1);
	UT_CHECK_EQ(rx[0].pkey, 0xffff);
	UT_CHECK_EQ(rx[0].udp_sport, UROCE_GSI_UDP_SPORT);
	UT_CHECK_EQ(rx[0].port_num, 1);
	UT_CHECK_EQ(rx[0].gid_index, 0);
	UT_CHECK_EQ(rx[0].tclass, 0x68);
	UT_CHECK_EQ(rx[0].hop_limit, 64);
	/* Empty now: the fd was cleared. */
	UT_CHECK(!fd_readable(fd));
	UT_CHECK_EQ(uroce_gsi_recv(gb, rx, 1), 0);
	uroce_dev_stats_get(dev_a, &sa1);
	uroce_dev_stats_get(dev_b, &sb1);
	UT_CHECK_EQ(sa1.gsi_tx, sa0.gsi_tx + 1);
	UT_CHECK_EQ(sb1.gsi_rx, sb0.gsi_rx + 1);
	UT_CHECK_EQ(sb1.unknown_qpn, sb0.unknown_qpn);
	/* Nothing reached A's own consumer. */
	UT_CHECK_EQ(uroce_gsi_recv(ga, rx, 1), 0);

	/* With a flow label: an IPv4 frame has none, the source port
	 * carries it (0xC000 | folded label). */
	tx.flow_label = 0x12345;
	UT_CHECK_EQ(uroce_gsi_send(ga, &tx), 0);
	UT_CHECK(wait_fd(fd));
	if (UT_CHECK_EQ(uroce_gsi_recv(gb, rx, 2), 1)) {
		UT_CHECK_EQ(rx[0].udp_sport,
			    0xc000 | ((0x12345 ^ (0x12345 >> 14)) & 0x3fff));
		UT_CHECK_EQ(rx[0].flow_label, 0);
	}
	check_send_v6(ga, gb);
	UT_NOTE("a MAD from A's QP1 to B's: byte-exact, source GID/QP/P_Key");
}

/* ---------------------------------------------------------------------------
 * Frames injected into B: one field of a valid MAD frame changed.
 */
struct variant {
	const char *what;
	uint8_t opcode;
	uint16_t pkey;
	uint32_t qkey;
	uint32_t dqpn;
	uint32_t len;
	uint8_t base_version, mgmt_class;
	size_t ctr;		/* the counter that must move, alone */
};

static struct rte_mbuf *
frame_to_b(const struct variant *v, uint8_t *mad_out)
{
	const struct uroce_qp_env *ea = uroce_dev_env(dev_a);
	const struct uroce_qp_env *eb = uroce_dev_env(dev_b);
	struct uroce_bth_fields bth = {
		.opcode = v->opcode, .pkey = v->pkey, .dqpn = v->dqpn,
	};
	struct uroce_ext_fields ext;
	uint8_t payload[512];
	struct uroce_l2l3 l;
	struct rte_mbuf *m = rte_pktmbuf_alloc(eb->pool);
	uint32_t len;
	uint8_t *p;

	if (!UT_CHECK(m != NULL))
		return NULL;
	memset(&ext, 0, sizeof(ext));
	ext.deth.qkey = v->qkey;
	ext.deth.sqpn = 1;
	memset(&l, 0, sizeof(l));
	memcpy(l.dmac, eb->mac, 6);
	memcpy(l.smac, ea->mac, 6);
	l.sgid = ea->gid[0];
	l.dgid = eb->gid[0];
	l.hop_limit = 64;
	l.udp_sport = 0xc000;
	mad_fill(payload);
	payload[0] = v->base_version;
	payload[1] = v->mgmt_class;
	if (mad_out != NULL)
		memcpy(mad_out, payload, UROCE_MAD_SIZE);
	p = (uint8_t *)rte_pktmbuf_append(m, 1024);
	len = p != NULL ? uroce_wire_build(p, 1024, &l, &bth, &ext, payload,
					   v->len) : 0;
	if (!UT_CHECK(len > 0)) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	rte_pktmbuf_trim(m, (uint16_t)(1024 - len));
	return m;
}

#define CTR(n)		{ #n, GSI_CTR(n) }
static const struct {
	const char *name;
	size_t off;
} gsi_ctrs[] = {
	CTR(gsi_rx), CTR(gsi_drop_opcode), CTR(gsi_drop_pkey),
	CTR(gsi_drop_qkey), CTR(gsi_drop_len), CTR(gsi_drop_mad),
	CTR(gsi_drop_noagent), CTR(gsi_drop_full), CTR(unknown_qpn),
};

/* Inject v into B: v->ctr moves by one, every other counter stays. */
static void
inject_one(const struct variant *v, uint8_t *mad_out)
{
	uint64_t before[RTE_DIM(gsi_ctrs)], after;
	struct rte_mbuf *m = frame_to_b(v, mad_out);
	unsigned int i;

	if (m == NULL)
		return;
	for (i = 0; i < RTE_DIM(gsi_ctrs); i++)
		before[i] = stat_of(dev_b, gsi_ctrs[i].off);
	UT_CHECK_EQ(uroce_dev_inject(dev_b, m), 0);
	for (i = 0; i < RTE_DIM(gsi_ctrs); i++)
		if (gsi_ctrs[i].off == v->ctr)
			UT_CHECK(wait_stat(dev_b, v->ctr, before[i] + 1));
	for (i = 0; i < RTE_DIM(gsi_ctrs); i++) {
		after = stat_of(dev_b, gsi_ctrs[i].off);
		if (!UT_CHECK_EQ(after, before[i] + (gsi_ctrs[i].off == v->ctr)))
			fprintf(stderr, "     %s: %s\n", v->what,
				gsi_ctrs[i].name);
	}
}

/* A frame to QP1 with one field changed from a valid MAD's: opcode,
 * P_Key, Q_Key, destination QP, payload length, MAD base version and
 * class, and the counter that must move. */
#define UD_SO		UROCE_OPC_UD_SEND_ONLY
#define QK		UROCE_GSI_QKEY
#define MADSZ		UROCE_MAD_SIZE
#define V(what, op, pkey, qkey, dqpn, len, bv, cls, ctr)		\
	{ what, op, pkey, qkey, dqpn, len, bv, cls, GSI_CTR(ctr) }
static const struct variant good_mad =
	V("valid", UD_SO, 0xffff, QK, 1, MADSZ, 1, 0x07, gsi_rx);

static void
check_drops(struct uroce_gsi *gb)
{
	static const struct variant bad[] = {
		V("wrong Q_Key", UD_SO, 0xffff, 0x80010001, 1, MADSZ, 1, 0x07,
		  gsi_drop_qkey),
		V("Q_Key 0", UD_SO, 0xffff, 0, 1, MADSZ, 1, 0x07,
		  gsi_drop_qkey),
		V("252 bytes", UD_SO, 0xffff, QK, 1, 252, 1, 0x07, gsi_drop_len),
		V("260 bytes", UD_SO, 0xffff, QK, 1, 260, 1, 0x07, gsi_drop_len),
		V("SEND_ONLY_IMM", UROCE_OPC_UD_SEND_ONLY_IMM, 0xffff, QK, 1,
		  MADSZ, 1, 0x07, gsi_drop_opcode),
		V("RC SEND_ONLY", UROCE_OPC_RC_SEND_ONLY, 0xffff, QK, 1, MADSZ,
		  1, 0x07, gsi_drop_opcode),
		V("P_Key 0x1234", UD_SO, 0x1234, QK, 1, MADSZ, 1, 0x07,
		  gsi_drop_pkey),
		V("P_Key 0x8001", UD_SO, 0x8001, QK, 1, MADSZ, 1, 0x07,
		  gsi_drop_pkey),
		V("base version 2", UD_SO, 0xffff, QK, 1, MADSZ, 2, 0x07,
		  gsi_drop_mad),
		V("subnet management class 0x81", UD_SO, 0xffff, QK, 1, MADSZ,
		  1, 0x81, gsi_drop_mad),
		V("subnet management class 0x01", UD_SO, 0xffff, QK, 1, MADSZ,
		  1, 0x01, gsi_drop_mad),
		V("a MAD to QPN 0x345678", UD_SO, 0xffff, QK, 0x345678, MADSZ,
		  1, 0x07, unknown_qpn),
	};
	static const struct variant limited =
		V("P_Key 0x7fff (limited member)", UD_SO, 0x7fff, QK, 1, MADSZ,
		  1, 0x07, gsi_rx);
	uint8_t mad[UROCE_MAD_SIZE];
	struct uroce_mad_rx rx;
	unsigned int i;

	for (i = 0; i < RTE_DIM(bad); i++) {
		inject_one(&bad[i], NULL);
		UT_CHECK_EQ(uroce_gsi_recv(gb, &rx, 1), 0);
	}
	UT_CHECK(!fd_readable(uroce_gsi_fd(gb)));
	inject_one(&limited, mad);
	UT_CHECK(wait_fd(uroce_gsi_fd(gb)));
	if (UT_CHECK_EQ(uroce_gsi_recv(gb, &rx, 1), 1)) {
		UT_CHECK_MEM(rx.mad, mad, UROCE_MAD_SIZE);
		UT_CHECK_EQ(rx.pkey, 0x7fff);
	}
	UT_NOTE("%zu malformed frames to QP1 dropped and counted", RTE_DIM(bad));
}

/* A UD QP of B's (Q_Key 0x80010000 too) with one receive posted. */
struct ud_side {
	struct uroce_pd *pd;
	struct uroce_cq *cq;
	struct uroce_qp *qp;
	struct uroce_mr *mr;
	uint8_t buf[UROCE_GRH_LEN + UROCE_MAD_SIZE];
};

static bool
ud_open(struct ud_side *u)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_sge sge = {
		.addr = (uintptr_t)u->buf, .length = sizeof(u->buf),
	};
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad = NULL;
	struct ibv_qp_attr a;

	if (!UT_CHECK_EQ(uroce_pd_alloc(dev_b, &u->pd), 0) ||
	    !UT_CHECK_EQ(uroce_dev_cq_create(dev_b, 8, NULL, &u->cq), 0) ||
	    !UT_CHECK_EQ(uroce_dev_mr_reg(u->pd, u->buf, sizeof(u->buf),
					  (uintptr_t)u->buf,
					  IBV_ACCESS_LOCAL_WRITE, &u->mr), 0) ||
	    !UT_CHECK_EQ(uroce_dev_qp_create(u->pd, u->cq, u->cq, &init, NULL,
					     &u->qp), 0))
		return false;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = UROCE_GSI_QKEY;
	if (!UT_CHECK_EQ(uroce_dev_qp_modify(u->qp, &a, IBV_QP_STATE |
			 IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), 0))
		return false;
	a.qp_state = IBV_QPS_RTR;
	if (!UT_CHECK_EQ(uroce_dev_qp_modify(u->qp, &a, IBV_QP_STATE), 0))
		return false;
	a.qp_state = IBV_QPS_RTS;
	if (!UT_CHECK_EQ(uroce_dev_qp_modify(u->qp, &a, IBV_QP_STATE |
					     IBV_QP_SQ_PSN), 0))
		return false;
	sge.lkey = u->mr->lkey;
	return UT_CHECK_EQ(uroce_qp_post_recv(u->qp, &wr, &bad), 0);
}

static void
ud_close(struct ud_side *u)
{
	if (u->qp != NULL)
		UT_CHECK_EQ(uroce_dev_qp_destroy(u->qp), 0);
	if (u->mr != NULL)
		UT_CHECK_EQ(uroce_dev_mr_dereg(u->mr), 0);
	if (u->cq != NULL)
		UT_CHECK_EQ(uroce_dev_cq_destroy(u->cq), 0);
	if (u->pd != NULL)
		UT_CHECK_EQ(uroce_pd_free(u->pd), 0);
}

/* A MAD-shaped frame to a UD QP's number is the QP's: it completes there
 * byte-exact; the GSI neither counts nor receives it. */
static void
check_other_qp(struct uroce_gsi *gb)
{
	static struct ud_side u;
	struct variant v = good_mad;
	uint8_t mad[UROCE_MAD_SIZE];
	struct uroce_mad_rx rx;
	struct ibv_wc wc;
	uint64_t rx0 = stat_of(dev_b, GSI_CTR(gsi_rx));
	struct rte_mbuf *m;

	memset(&u, 0, sizeof(u));
	if (!ud_open(&u))
		goto out;
	v.dqpn = u.qp->qpn;
	m = frame_to_b(&v, mad);
	if (m == NULL || !UT_CHECK_EQ(uroce_dev_inject(dev_b, m), 0))
		goto out;
	memset(&wc, 0, sizeof(wc));
	if (UT_CHECK(ut_wait_wc(u.cq, &wc))) {
		UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		UT_CHECK_EQ(wc.wr_id, 7);
		UT_CHECK_EQ(wc.src_qp, 1);
		UT_CHECK_EQ(wc.byte_len, UROCE_GRH_LEN + UROCE_MAD_SIZE);
		UT_CHECK_MEM(u.buf + UROCE_GRH_LEN, mad, UROCE_MAD_SIZE);
	}
	UT_CHECK_EQ(stat_of(dev_b, GSI_CTR(gsi_rx)), rx0);
	UT_CHECK_EQ(uroce_gsi_recv(gb, &rx, 1), 0);
	UT_NOTE("a MAD to a UD QP's number reaches that QP, not the GSI");
out:
	ud_close(&u);
}

/* More MADs than the ring holds: the excess dropped as gsi_drop_full, the
 * rest received in order. */
static void
check_full(struct uroce_gsi *gb)
{
	const struct variant *good = &good_mad;
	const unsigned int extra = 5, n = UROCE_GSI_RING_SIZE + extra;
	uint64_t rx0 = stat_of(dev_b, GSI_CTR(gsi_rx));
	uint64_t full0 = stat_of(dev_b, GSI_CTR(gsi_drop_full));
	static uint8_t first[UROCE_MAD_SIZE];
	struct uroce_mad_rx rx[64];
	struct rte_mbuf *m;
	unsigned int i, got = 0;
	int r;

	for (i = 0; i < n; i++) {
		m = frame_to_b(good, i == 0 ? first : NULL);
		/* The loopback queue holds them all (4095). */
		if (m == NULL || !UT_CHECK_EQ(uroce_dev_inject(dev_b, m), 0))
			return;
	}
	UT_CHECK(wait_stat(dev_b, GSI_CTR(gsi_drop_full), full0 + extra));
	UT_CHECK_EQ(stat_of(dev_b, GSI_CTR(gsi_rx)), rx0 + UROCE_GSI_RING_SIZE);
	UT_CHECK_EQ(stat_of(dev_b, GSI_CTR(gsi_drop_full)), full0 + extra);
	UT_CHECK(fd_readable(uroce_gsi_fd(gb)));
	do {
		r = uroce_gsi_recv(gb, rx, RTE_DIM(rx));
		if (got == 0 && r > 0)
			UT_CHECK_MEM(rx[0].mad, first, UROCE_MAD_SIZE);
		got += r > 0 ? (unsigned int)r : 0;
	} while (r > 0);
	UT_CHECK_EQ(r, 0);
	UT_CHECK_EQ(got, UROCE_GSI_RING_SIZE);
	UT_CHECK(!fd_readable(uroce_gsi_fd(gb)));
	UT_NOTE("%u MADs into a ring of %u: %u dropped as full", n,
		UROCE_GSI_RING_SIZE, extra);
}

static void
check_noagent(struct uroce_gsi **gb)
{
	struct variant v = good_mad;
	struct uroce_gsi *again = NULL;

	UT_CHECK_EQ(uroce_gsi_open(dev_b, &again), -EBUSY);
	UT_CHECK(again == NULL);
	uroce_gsi_close(*gb);
	*gb = NULL;
	v.ctr = GSI_CTR(gsi_drop_noagent);
	inject_one(&v, NULL);
	/* Open again: it receives. */
	if (UT_CHECK_EQ(uroce_gsi_open(dev_b, gb), 0)) {
		v.ctr = GSI_CTR(gsi_rx);
		inject_one(&v, NULL);
	}
	UT_NOTE("no consumer: gsi_drop_noagent; a second open: -EBUSY");
}

/* A GID on A's subnet that nobody answers ARP for, and bad arguments. */
static void
check_send_errors(struct uroce_gsi *ga)
{
	const struct uroce_qp_env *ea = uroce_dev_env(dev_a);
	uint64_t tx0 = stat_of(dev_a, GSI_CTR(gsi_tx));
	struct uroce_mad_tx tx;
	unsigned int i;

	memset(&tx, 0, sizeof(tx));
	mad_fill(tx.mad);
	uroce_gid_from_v4(&tx.dgid, rte_cpu_to_be_32(UINT32_C(0x0a090000) |
						      NET << 8 | 77));
	UT_CHECK_EQ(uroce_gsi_send(ga, &tx), -EHOSTUNREACH);
	tx.sgid_index = (uint8_t)ea->gid_cnt;
	UT_CHECK_EQ(uroce_gsi_send(ga, &tx), -EINVAL);
	/* An IPv6 source towards an IPv4 destination has no frame. */
	for (i = 0; i < ea->gid_cnt; i++) {
		if (!uroce_gid_is_v4(&ea->gid[i])) {
			tx.sgid_index = (uint8_t)i;
			UT_CHECK_EQ(uroce_gsi_send(ga, &tx), -EINVAL);
			break;
		}
	}
	UT_CHECK_EQ(uroce_gsi_send(NULL, &tx), -EINVAL);
	UT_CHECK_EQ(uroce_gsi_send(ga, NULL), -EINVAL);
	UT_CHECK_EQ(stat_of(dev_a, GSI_CTR(gsi_tx)), tx0);
	UT_NOTE("send to an address nobody answers: -EHOSTUNREACH");
}

/* QPNs wrap past 0 and 1: the next after 0xffffff is 2. */
static void
check_qpn_wrap(void)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct uroce_qp *qp[3] = { NULL };
	struct uroce_pd *pd = NULL;
	struct uroce_cq *cq = NULL;
	unsigned int i;

	if (!UT_CHECK_EQ(uroce_pd_alloc(dev_a, &pd), 0) ||
	    !UT_CHECK_EQ(uroce_dev_cq_create(dev_a, 8, NULL, &cq), 0))
		goto out;
	pthread_mutex_lock(&eng_g->lock);
	eng_g->qpn_next = UROCE_QPN_MASK;
	pthread_mutex_unlock(&eng_g->lock);
	for (i = 0; i < RTE_DIM(qp); i++)
		UT_CHECK_EQ(uroce_dev_qp_create(pd, cq, cq, &init, NULL,
						&qp[i]), 0);
	if (qp[0] != NULL && qp[1] != NULL && qp[2] != NULL) {
		UT_CHECK_EQ(qp[0]->qpn, UROCE_QPN_MASK);
		UT_CHECK_EQ(qp[1]->qpn, 2);
		UT_CHECK_EQ(qp[2]->qpn, 3);
	}
	for (i = 0; i < RTE_DIM(qp); i++)
		if (qp[i] != NULL)
			UT_CHECK_EQ(uroce_dev_qp_destroy(qp[i]), 0);
out:
	if (cq != NULL)
		UT_CHECK_EQ(uroce_dev_cq_destroy(cq), 0);
	if (pd != NULL)
		UT_CHECK_EQ(uroce_pd_free(pd), 0);
	UT_NOTE("QPNs 0 and 1 skipped when the numbers wrap");
}

/* ---------------------------------------------------------------------------
 * tshark's view of port A's capture: every frame to UDP 4791 decoded as
 * InfiniBand UD SEND_ONLY (100) to QP1 from QP1 with the GSI's Q_Key, a
 * MAD of class 0x07 inside, no malformed mark and no expert finding
 * (the two empty fields at the end), the IPv4 header checksum checked.
 * UDP checksum 0 over IPv6 is what RoCEv2 senders put there (RFC 6935
 * allows it; test/wire/crosscheck_tshark.py tells tshark the same).
 */
#define MAD_LINE	"100,0x000001,0x0000000080010000,0x00000001,0x07,,"

static void
check_capture(const char *pcap)
{
	char cmd[512], line[512];
	unsigned int n = 0, mads = 0;
	FILE *f;

	if (access("/usr/bin/tshark", X_OK) != 0) {
		UT_NOTE("capture: tshark not installed, not checked");
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/tshark -r %s -d udp.port==4791,infiniband "
		 "-o ip.check_checksum:TRUE "
		 "-o udp.ignore_ipv6_zero_checksum:TRUE "
		 "-Y udp.port==4791 -T fields -E separator=, "
		 "-e infiniband.bth.opcode -e infiniband.bth.destqp "
		 "-e infiniband.deth.q_key -e infiniband.deth.srcqp "
		 "-e infiniband.mad.mgmtclass -e _ws.malformed "
		 "-e _ws.expert.severity 2>/dev/null", pcap);
	f = popen(cmd, "r");
	if (!UT_CHECK(f != NULL))
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		n++;
		if (strcmp(line, MAD_LINE) == 0)
			mads++;
		else if (!UT_CHECK(!"a frame decoded otherwise"))
			fprintf(stderr, "     tshark: %s\n", line);
	}
	UT_CHECK_EQ(pclose(f), 0);
	/* A sent three: IPv4, IPv4 with a flow label, IPv6. */
	UT_CHECK_EQ(mads, 3);
	UT_CHECK_EQ(mads, n);
	UT_NOTE("capture: %u MAD frames decoded by tshark, none malformed", mads);
}

static void
run_scenario(const struct scenario *sc)
{
	struct uroce_gsi *ga = NULL, *gb = NULL;

	printf("scenario: %s\n", sc->name);
	ut_stuck = false;
	if (sc->pcap != NULL)
		unlink(sc->pcap);
	if (!engine_up(sc))
		return;
	UT_CHECK_EQ(uroce_gsi_open(NULL, &ga), -EINVAL);
	if (UT_CHECK_EQ(uroce_gsi_open(dev_a, &ga), 0) &&
	    UT_CHECK_EQ(uroce_gsi_open(dev_b, &gb), 0)) {
		UT_CHECK(uroce_gsi_dev(ga) == dev_a);
		check_send_recv(ga, gb);
		check_drops(gb);
		check_other_qp(gb);
		check_full(gb);
		check_noagent(&gb);
		check_send_errors(ga);
	}
	check_qpn_wrap();
	uroce_gsi_close(ga);
	uroce_gsi_close(gb);
	uroce_engine_fini();
	if (sc->pcap != NULL) {
		check_capture(sc->pcap);
		unlink(sc->pcap);
	}
}

int
main(int argc, char **argv)
{
	static const char *const extra[] = { "--lcores", "(0-1)@(0-1)", NULL };
	static char pcap[64];
	struct scenario scs[] = {
		{ .name = "native progress, port A captured", .link = "gsin",
		  .flags = UROCE_ENGINE_NO_LCORES, .cfg_lcores = 1,
		  .pcap = pcap },
		{ .name = "one engine lcore", .link = "gsil", .cfg_lcores = 1 },
	};
	unsigned int i;

	(void)argc;
	ut_srand(0x6510);
	snprintf(pcap, sizeof(pcap), "/tmp/uroce-gsi-%d.pcap", (int)getpid());
	if (!UT_CHECK(ut_eal_init(argv[0], extra) >= 0))
		return ut_summary();
	for (i = 0; i < RTE_DIM(scs); i++)
		run_scenario(&scs[i]);
	rte_eal_cleanup();
	return ut_summary();
}
