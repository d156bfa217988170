/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Counters and the DPDK telemetry commands (lib/engine/telemetry.c), with
 * two devices of one process joined by a ringlink (frames cross the link).
 *
 * Native progress (the test thread runs the engine): a post's frame on the
 * link before the post returns; faults made exactly, so that counters
 * move by known amounts:
 *  - a request taken off the link: one timeout, one retransmit;
 *  - its ACK taken off the link: one duplicate request at the responder;
 *  - forged frames: bad ICRC, bad IPv4 checksum, unknown QPN, bad P_Key,
 *    a response in RTR, each one drop with its reason;
 *  - RNR with rnr_retry 1: two RNR NAKs, one retry, RNR_RETRY_EXC_ERR;
 *  - a destroyed QP's counters stay in its device's totals.
 * Then the telemetry socket of this process is queried as
 * dpdk-telemetry.py does (unix seqpacket), and every number of
 * /uroce/qp, /uroce/ports and /uroce/qps equals the C API's.
 *
 * One background lcore: the same comparison once traffic is over, and QPs
 * created and destroyed while another thread keeps querying them (answers
 * are a QP's counters or null, never a crash).
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include <uroce/uroce.h>

#include "uroce_engine.h"
#include "uroce_stats.h"
#include "uroce_test.h"
#include "uroce_test_eal.h"
#include "uroce_test_engine.h"

#define BUF_SIZE	(16 * 1024)
#define JS_MAX		(20 * 1024)	/* > DPDK's 16 KiB answer */

struct side {
	struct uroce_dev *dev;
	struct uroce_pd *pd;
	struct uroce_cq *cq;
	struct uroce_qp *qp;
	struct uroce_mr *mr;
	uint8_t *buf;
};

/* ---------------------------------------------------------------------------
 * Objects.
 */
static bool
side_open(struct side *s, struct uroce_dev *dev)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	unsigned int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	bool ok = true;

	memset(s, 0, sizeof(*s));
	s->dev = dev;
	s->buf = aligned_alloc(4096, BUF_SIZE);
	ok &= UT_CHECK(s->buf != NULL);
	ok &= UT_CHECK_EQ(uroce_pd_alloc(dev, &s->pd), 0);
	ok &= UT_CHECK_EQ(uroce_dev_cq_create(dev, 64, s, &s->cq), 0);
	if (!ok)
		return false;
	ok &= UT_CHECK_EQ(uroce_dev_mr_reg(s->pd, s->buf, BUF_SIZE,
					   (uintptr_t)s->buf, access, &s->mr), 0);
	ok &= UT_CHECK_EQ(uroce_dev_qp_create(s->pd, s->cq, s->cq, &init, s,
					      &s->qp), 0);
	return ok;
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

static bool
qp_to(struct side *s, int mask, struct ibv_qp_attr *a)
{
	return UT_CHECK_EQ(uroce_dev_qp_modify(s->qp, a, mask), 0);
}

/* RESET -> INIT -> RTR (-> RTS) towards peer; timeout 8 (about 1 ms). */
static bool
qp_connect(struct side *s, const struct side *peer, uint8_t rnr_retry,
	   bool rts)
{
	const struct uroce_qp_env *env = uroce_dev_env(s->dev);
	const struct uroce_qp_env *penv = uroce_dev_env(peer->dev);
	struct ibv_qp_attr a;
	bool ok;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	ok = qp_to(s, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		   IBV_QP_ACCESS_FLAGS, &a);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = RTE_MIN(env->lim.active_mtu, penv->lim.active_mtu);
	a.dest_qp_num = peer->qp->qpn;
	a.rq_psn = 500;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, penv->gid[0].raw, 16);
	ok &= qp_to(s, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, &a);
	if (!rts)
		return ok;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 8;
	a.retry_cnt = 7;
	a.rnr_retry = rnr_retry;
	a.sq_psn = 500;
	a.max_rd_atomic = 1;
	ok &= qp_to(s, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		    IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
		    &a);
	return ok;
}

static int
post(struct side *a, enum ibv_wr_opcode op, uint32_t len, const struct side *b)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)a->buf, .length = len, .lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 7;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf + BUF_SIZE / 2;
	wr.wr.rdma.rkey = b->mr->rkey;
	return uroce_qp_post_send(a->qp, &wr, &bad);
}

static bool
done(struct side *a, enum ibv_wc_status status)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	return UT_CHECK(ut_wait_wc(a->cq, &wc)) && UT_CHECK_EQ(wc.status, status);
}

static struct uroce_qp_stats
qst(struct side *s)
{
	struct uroce_qp_stats st;

	memset(&st, 0, sizeof(st));
	UT_CHECK_EQ(uroce_dev_qp_stats(s->qp, &st), 0);
	return st;
}

/* ---------------------------------------------------------------------------
 * Faults, native progress only: the test thread is the only one that runs
 * the engine, so it may take frames off a port's queue between iterations
 * (a frame lost on the wire). Returns how many it took.
 */
static unsigned int
steal(struct uroce_dev *dev)
{
	struct rte_mbuf *pkts[32];
	uint16_t n;

	n = uroce_port_rx(uroce_dev_port(dev), 0, pkts, RTE_DIM(pkts));
	rte_pktmbuf_free_bulk(pkts, n);
	return n;
}

/* Iterate until a frame reaches dev's queue, and take it. A post sends
 * its frames before it returns (native progress), so look first. */
static unsigned int
steal_next(struct uroce_dev *dev)
{
	double end = ut_now_s() + UT_WAIT_S;
	unsigned int n;

	while ((n = steal(dev)) == 0 && ut_now_s() < end)
		uroce_poll();
	return n;
}

static void
check_lost_request(struct side *a, struct side *b)
{
	struct uroce_qp_stats a0 = qst(a), b0 = qst(b), a1, b1;

	UT_CHECK_EQ(post(a, IBV_WR_RDMA_WRITE, 64, b), 0);
	UT_CHECK_EQ(steal_next(b->dev), 1);
	done(a, IBV_WC_SUCCESS);
	a1 = qst(a);
	b1 = qst(b);
	UT_CHECK_EQ(a1.timeouts, a0.timeouts + 1);
	UT_CHECK_EQ(a1.retransmits, a0.retransmits + 1);
	UT_CHECK_EQ(a1.tx_pkts, a0.tx_pkts + 2);
	UT_CHECK_EQ(b1.rx_pkts, b0.rx_pkts + 1);
	UT_CHECK_EQ(b1.dup_reqs, b0.dup_reqs);
	UT_NOTE("a request lost");
}

static void
check_lost_ack(struct side *a, struct side *b)
{
	struct uroce_qp_stats a0 = qst(a), b0 = qst(b), a1, b1;

	UT_CHECK_EQ(post(a, IBV_WR_RDMA_WRITE, 64, b), 0);
	UT_CHECK_EQ(steal_next(a->dev), 1);	/* the ACK */
	done(a, IBV_WC_SUCCESS);
	a1 = qst(a);
	b1 = qst(b);
	UT_CHECK_EQ(a1.retransmits, a0.retransmits + 1);
	UT_CHECK_EQ(b1.dup_reqs, b0.dup_reqs + 1);
	UT_CHECK_EQ(b1.rx_pkts, b0.rx_pkts + 2);
	UT_CHECK_EQ(a1.acks_rx, a0.acks_rx + 1);
	UT_NOTE("an ACK lost");
}

/*
 * Native progress: a post sends its frame before it returns
 * (direct_tx); the poll that receives a WRITE places its data and sends
 * the ACK.
 */
static void
check_native_tx(struct side *a, struct side *b)
{
	struct uroce_port *pa = uroce_dev_port(a->dev);
	struct uroce_qp_stats a0 = qst(a), a1;
	struct uroce_lcore_stats l0, l1;
	struct uroce_port_stats p0, p1, pb0;
	uint8_t *dst = b->buf + BUF_SIZE / 2;

	memset(a->buf, 0x5a, 64);
	memset(dst, 0, 64);
	uroce_port_stats_get(pa, &p0);
	uroce_port_stats_get(uroce_dev_port(b->dev), &pb0);
	UT_CHECK_EQ(uroce_engine_lcore_stats(0, &l0), 0);
	UT_CHECK_EQ(post(a, IBV_WR_RDMA_WRITE, 64, b), 0);
	uroce_port_stats_get(pa, &p1);
	UT_CHECK_EQ(uroce_engine_lcore_stats(0, &l1), 0);
	UT_CHECK_EQ(p1.tx_pkts, p0.tx_pkts + 1);	/* before any poll */
	UT_CHECK_EQ(l1.direct_tx, l0.direct_tx + 1);
	uroce_poll();
	UT_CHECK_MEM(dst, a->buf, 64);
	uroce_port_stats_get(uroce_dev_port(b->dev), &p0);
	UT_CHECK_EQ(p0.tx_pkts, pb0.tx_pkts + 1);	/* the ACK */
	done(a, IBV_WC_SUCCESS);
	a1 = qst(a);
	UT_CHECK_EQ(a1.acks_rx, a0.acks_rx + 1);
	UT_CHECK_EQ(a1.retransmits, a0.retransmits);
	UT_NOTE("a post sends at once");
}

/* A frame from dev to itself for qpn: what is wrong with it is `fault`. */
enum forge { F_GOOD, F_ICRC, F_IPCSUM, F_PKEY, F_ACK };

static struct rte_mbuf *
forge(struct uroce_dev *dev, uint32_t qpn, enum forge fault)
{
	const struct uroce_qp_env *env = uroce_dev_env(dev);
	struct uroce_bth_fields bth = {
		.opcode = UROCE_OPC_RC_SEND_ONLY, .pkey = 0xffff, .dqpn = qpn,
	};
	struct uroce_ext_fields ext;
	struct uroce_l2l3 l;
	uint8_t payload[32] = { 1, 2, 3 };
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
	if (fault == F_PKEY)
		bth.pkey = 0x1234;
	if (fault == F_ACK)
		bth.opcode = UROCE_OPC_RC_ACK;
	p = (uint8_t *)rte_pktmbuf_append(m, 256);
	len = uroce_wire_build(p, 256, &l, &bth, &ext, payload,
			       fault == F_ACK ? 0 : sizeof(payload));
	UT_CHECK(len > 0);
	rte_pktmbuf_trim(m, (uint16_t)(256 - len));
	if (fault == F_ICRC)
		p[len - 10] ^= 0x40;		/* a payload byte */
	if (fault == F_IPCSUM)
		p[14 + 8] ^= 0x01;		/* the IPv4 TTL */
	return m;
}

/* Inject and run the engine until the device counted one more frame. */
static void
inject(struct uroce_dev *dev, struct rte_mbuf *m)
{
	struct uroce_dev_stats s0, s1;
	uint64_t n0 = 0, n1 = 0;
	unsigned int v;
	double end = ut_now_s() + UT_WAIT_S;

	uroce_dev_stats_get(dev, &s0);
	for (v = 0; v < UROCE_WIRE_VERDICT_COUNT; v++)
		n0 += s0.wire.verdict[v];
	UT_CHECK_EQ(uroce_dev_inject(dev, m), 0);
	do {
		ut_progress();
		uroce_dev_stats_get(dev, &s1);
		for (n1 = 0, v = 0; v < UROCE_WIRE_VERDICT_COUNT; v++)
			n1 += s1.wire.verdict[v];
	} while (n1 == n0 && ut_now_s() < end);
	UT_CHECK_EQ(n1, n0 + 1);
	/* Let the owner finish with it (native: done; lcore: soon). */
	ut_progress();
	ut_progress();
}

static void
check_forged(struct side *a, struct side *b)
{
	struct uroce_dev *dev = a->dev;
	struct uroce_dev_stats d0, d1;
	struct uroce_qp_stats a0 = qst(a), a1;
	uint32_t unknown = (a->qp->qpn ^ 0x5a5a5a) & UROCE_QPN_MASK;

	while (unknown < 2 || unknown == a->qp->qpn || unknown == b->qp->qpn)
		unknown = (unknown + 7) & UROCE_QPN_MASK;
	uroce_dev_stats_get(dev, &d0);
	inject(dev, forge(dev, a->qp->qpn, F_ICRC));
	inject(dev, forge(dev, a->qp->qpn, F_IPCSUM));
	inject(dev, forge(dev, unknown, F_GOOD));
	inject(dev, forge(dev, a->qp->qpn, F_PKEY));
	uroce_dev_stats_get(dev, &d1);
	UT_CHECK_EQ(d1.wire.verdict[UROCE_WIRE_DROP_ICRC],
		    d0.wire.verdict[UROCE_WIRE_DROP_ICRC] + 1);
	UT_CHECK_EQ(d1.wire.verdict[UROCE_WIRE_DROP_IP_CSUM],
		    d0.wire.verdict[UROCE_WIRE_DROP_IP_CSUM] + 1);
	UT_CHECK_EQ(d1.unknown_qpn, d0.unknown_qpn + 1);
	UT_CHECK_EQ(d1.wire.verdict[UROCE_WIRE_OK],
		    d0.wire.verdict[UROCE_WIRE_OK] + 2);
	a1 = qst(a);
	UT_CHECK_EQ(a1.drop_pkey, a0.drop_pkey + 1);
	UT_CHECK_EQ(a1.drops, a0.drops + 1);
	UT_CHECK_EQ(a1.rx_pkts, a0.rx_pkts + 1);
	UT_NOTE("forged frames");
}

/* c (RTS, rnr_retry 1) sends to d, which has no receive WQE. */
static void
check_rnr(struct side *c, struct side *d)
{
	struct uroce_qp_stats c1, d1;
	struct ibv_qp_attr attr;

	if (!qp_connect(c, d, 1, true) || !qp_connect(d, c, 1, true))
		return;
	UT_CHECK_EQ(post(c, IBV_WR_SEND, 32, d), 0);
	done(c, IBV_WC_RNR_RETRY_EXC_ERR);
	c1 = qst(c);
	d1 = qst(d);
	UT_CHECK_EQ(c1.rnr_naks_rx, 2);
	UT_CHECK_EQ(c1.rnr_retries, 1);
	UT_CHECK_EQ(c1.retransmits, 1);
	UT_CHECK_EQ(d1.rnr_naks_tx, 2);
	UT_CHECK_EQ(d1.rx_pkts, 2);
	memset(&attr, 0, sizeof(attr));
	UT_CHECK_EQ(uroce_dev_qp_query(c->qp, &attr, NULL), 0);
	UT_CHECK_EQ(attr.qp_state, IBV_QPS_ERR);
	UT_NOTE("RNR");
}

/* d only in RTR: a response for it is dropped as the wrong state. */
static void
check_state_drop(struct side *d)
{
	struct uroce_qp_stats d0 = qst(d), d1;

	inject(d->dev, forge(d->dev, d->qp->qpn, F_ACK));
	d1 = qst(d);
	UT_CHECK_EQ(d1.drop_state, d0.drop_state + 1);
	UT_CHECK_EQ(d1.drops, d0.drops + 1);
	UT_NOTE("state drop");
}

/* ---------------------------------------------------------------------------
 * The telemetry socket, as dpdk-telemetry.py talks to it.
 */
static char tel_path[256];

static int
tel_open(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char buf[1024];
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	if (fd < 0)
		return -1;
	if (strlen(tel_path) >= sizeof(sun.sun_path))
		return -1;
	memcpy(sun.sun_path, tel_path, strlen(tel_path) + 1);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0 ||
	    recv(fd, buf, sizeof(buf), 0) <= 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* cmd's answer into js (a NUL-terminated JSON text). */
static bool
tel_query(int fd, const char *cmd, char *js)
{
	ssize_t n;

	if (send(fd, cmd, strlen(cmd), 0) < 0)
		return false;
	n = recv(fd, js, JS_MAX - 1, 0);
	if (n <= 0)
		return false;
	js[n] = '\0';
	return true;
}

/* The text of the object under "key" (the first one), copied into out. */
static bool
js_obj(const char *js, const char *key, char *out, size_t len)
{
	char pat[128];
	const char *p, *q;
	int depth = 0;

	snprintf(pat, sizeof(pat), "\"%s\":{", key);
	p = strstr(js, pat);
	if (p == NULL)
		return false;
	p += strlen(pat) - 1;
	for (q = p; *q != '\0'; q++) {
		depth += *q == '{' ? 1 : *q == '}' ? -1 : 0;
		if (depth == 0)
			break;
	}
	if (*q == '\0' || (size_t)(q - p + 2) > len)
		return false;
	memcpy(out, p, (size_t)(q - p + 1));
	out[q - p + 1] = '\0';
	return true;
}

static bool
js_u64(const char *obj, const char *key, uint64_t *v)
{
	char pat[128];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(obj, pat);
	if (p == NULL)
		return false;
	*v = strtoull(p + strlen(pat), NULL, 10);
	return true;
}

static bool
js_str(const char *obj, const char *key, const char *want)
{
	char pat[256];

	snprintf(pat, sizeof(pat), "\"%s\":\"%s\"", key, want);
	return strstr(obj, pat) != NULL;
}

/* Every QP counter in obj ("" or "qp_" names) equals st's. */
static void
check_js_qp_stats(const char *obj, const char *prefix,
		  const struct uroce_qp_stats *st)
{
	char name[96];
	uint64_t v = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < uroce_qp_stat_nfields; i++) {
		snprintf(name, sizeof(name), "%s%s", prefix,
			 uroce_qp_stat_fields[i].name);
		UT_CHECK(js_u64(obj, name, &v));
		UT_CHECK_EQ(v, uroce_qp_stat(st, &uroce_qp_stat_fields[i]));
		UT_NOTE("field %s", name);
	}
}

static void
check_js_qp(int fd, struct side *s, const char *state)
{
	static char js[JS_MAX], obj[JS_MAX];
	struct uroce_qp_stats st = qst(s);
	char cmd[64];
	uint64_t v = 0;

	snprintf(cmd, sizeof(cmd), "/uroce/qp,%u", s->qp->qpn);
	if (!UT_CHECK(tel_query(fd, cmd, js)) ||
	    !UT_CHECK(js_obj(js, "/uroce/qp", obj, sizeof(obj))))
		return;
	UT_CHECK(js_u64(obj, "qpn", &v) && v == s->qp->qpn);
	UT_CHECK(js_str(obj, "type", "RC"));
	UT_CHECK(js_str(obj, "state", state));
	UT_CHECK(js_str(obj, "dev", uroce_dev_name(s->dev)));
	UT_CHECK(js_u64(obj, "owner_lcore", &v) && v == s->qp->lcore);
	/* Named ones first, so a failure says which; then all of them. */
	UT_CHECK(js_u64(obj, "retransmits", &v) && v == st.retransmits);
	UT_CHECK(js_u64(obj, "rnr_naks_rx", &v) && v == st.rnr_naks_rx);
	UT_CHECK(js_u64(obj, "drop_pkey", &v) && v == st.drop_pkey);
	UT_CHECK(js_u64(obj, "pace_wait_us", &v) && v == 0);
	check_js_qp_stats(obj, "", &st);
	/* Hex QPN and the device form answer the same QP. */
	snprintf(cmd, sizeof(cmd), "/uroce/qp,%s,0x%x", uroce_dev_name(s->dev),
		 s->qp->qpn);
	UT_CHECK(tel_query(fd, cmd, js) && strstr(js, "\"qpn\":") != NULL);
	UT_NOTE("telemetry qp 0x%x", s->qp->qpn);
}

static void
check_js_port(int fd, struct uroce_dev *dev)
{
	static char js[JS_MAX], obj[JS_MAX];
	struct uroce_port_stats ps;
	struct uroce_dev_stats ds;
	struct uroce_qp_stats qs;
	unsigned int nqp = 0;
	uint64_t v = UINT64_MAX;

	if (!UT_CHECK(tel_query(fd, "/uroce/ports", js)) ||
	    !UT_CHECK(js_obj(js, uroce_dev_name(dev), obj, sizeof(obj))))
		return;
	uroce_port_stats_get(uroce_dev_port(dev), &ps);
	uroce_dev_stats_get(dev, &ds);
	UT_CHECK_EQ(uroce_dev_qp_totals(dev, &qs, &nqp), 0);
	UT_CHECK(js_u64(obj, "rx_pkts", &v) && v == ps.rx_pkts);
	UT_CHECK(js_u64(obj, "tx_bytes", &v) && v == ps.tx_bytes);
	UT_CHECK(js_u64(obj, "eng_tx_pkts", &v) && v == ds.tx_pkts);
	UT_CHECK(js_u64(obj, "drop_unknown_qpn", &v) && v == ds.unknown_qpn);
	UT_CHECK(js_u64(obj, "drop_bad_icrc", &v) &&
		 v == ds.wire.verdict[UROCE_WIRE_DROP_ICRC]);
	UT_CHECK(js_u64(obj, "drop_bad_ipv4_checksum", &v) &&
		 v == ds.wire.verdict[UROCE_WIRE_DROP_IP_CSUM]);
	UT_CHECK(js_u64(obj, "parsed_ok", &v) &&
		 v == ds.wire.verdict[UROCE_WIRE_OK]);
	UT_CHECK(js_u64(obj, "qps", &v) && v == nqp);
	/* QP1's counters, named as in struct uroce_dev_stats. */
	UT_CHECK(js_u64(obj, "gsi_rx", &v) && v == ds.gsi_rx);
	UT_CHECK(js_u64(obj, "gsi_tx", &v) && v == ds.gsi_tx);
	UT_CHECK(js_u64(obj, "gsi_drop_opcode", &v) && v == ds.gsi_drop_opcode);
	UT_CHECK(js_u64(obj, "gsi_drop_pkey", &v) && v == ds.gsi_drop_pkey);
	UT_CHECK(js_u64(obj, "gsi_drop_qkey", &v) && v == ds.gsi_drop_qkey);
	UT_CHECK(js_u64(obj, "gsi_drop_len", &v) && v == ds.gsi_drop_len);
	UT_CHECK(js_u64(obj, "gsi_drop_mad", &v) && v == ds.gsi_drop_mad);
	UT_CHECK(js_u64(obj, "gsi_drop_noagent", &v) &&
		 v == ds.gsi_drop_noagent);
	UT_CHECK(js_u64(obj, "gsi_drop_full", &v) && v == ds.gsi_drop_full);
	check_js_qp_stats(obj, "qp_", &qs);
	UT_NOTE("telemetry port %s", uroce_dev_name(dev));
}

/* The engine lcore's loop counters, read through the API just before and
 * after: the socket's values lie between (the loop runs meanwhile). */
static void
check_js_lcores(int fd)
{
	static char js[JS_MAX], obj[JS_MAX];
	struct uroce_lcore_stats s0, s1;
	uint64_t loops = 0, idle = 0, work = 0, timers = UINT64_MAX;
	uint64_t lcyc = UINT64_MAX, txc = UINT64_MAX;

	UT_CHECK_EQ(uroce_engine_lcore_stats(0, &s0), 0);
	if (!UT_CHECK(tel_query(fd, "/uroce/lcores", js)))
		return;
	UT_CHECK_EQ(uroce_engine_lcore_stats(0, &s1), 0);
	if (!UT_CHECK(js_obj(js, "0", obj, sizeof(obj))))
		return;
	UT_CHECK(js_u64(obj, "loops", &loops));
	UT_CHECK(js_u64(obj, "idle_loops", &idle));
	UT_CHECK(js_u64(obj, "work_cycles", &work));
	UT_CHECK(js_u64(obj, "timers", &timers));
	UT_CHECK(js_u64(obj, "long_cycles", &lcyc));
	UT_CHECK(js_u64(obj, "tx_cycles", &txc));
	UT_CHECK(s0.loops > 0 && loops >= s0.loops && loops <= s1.loops);
	UT_CHECK(idle >= s0.idle_loops && idle <= s1.idle_loops);
	UT_CHECK(work > 0 && work >= s0.work_cycles && work <= s1.work_cycles);
	UT_CHECK(timers >= s0.timers && timers <= s1.timers);
	UT_CHECK(lcyc >= s0.long_cycles && lcyc <= s1.long_cycles);
	UT_CHECK(txc >= s0.tx_cycles && txc <= s1.tx_cycles);
	/* One engine lcore: no second entry. */
	UT_CHECK(!js_obj(js, "1", obj, sizeof(obj)));
	UT_NOTE("telemetry lcores: %" PRIu64 " loops, %" PRIu64 " idle",
		loops, idle);
}

static void
check_js_misc(int fd, struct side *a, struct side *b)
{
	static char js[JS_MAX], obj[JS_MAX];
	char num[16], cmd[64];

	if (UT_CHECK(tel_query(fd, "/uroce/qps", js))) {
		snprintf(num, sizeof(num), "%u", a->qp->qpn);
		UT_CHECK(strstr(js, num) != NULL);
		snprintf(num, sizeof(num), "%u", b->qp->qpn);
		UT_CHECK(strstr(js, num) != NULL);
		UT_CHECK(strstr(js, "\"uroce1\":[") != NULL);
	}
	/* Bad parameters, a QP of another device, no such QP: null. */
	snprintf(cmd, sizeof(cmd), "/uroce/qp,%s,%u", uroce_dev_name(b->dev),
		 a->qp->qpn);
	UT_CHECK(tel_query(fd, cmd, js) && strstr(js, ":null") != NULL);
	UT_CHECK(tel_query(fd, "/uroce/qp,zz", js) && strstr(js, ":null"));
	UT_CHECK(tel_query(fd, "/uroce/qp,uroce9,5", js) && strstr(js, ":null"));
	UT_CHECK(tel_query(fd, "/uroce/qp,-5", js) && strstr(js, ":null"));
	UT_CHECK(tel_query(fd, "/uroce/qp,16777216", js) && strstr(js, ":null"));
	UT_CHECK(tel_query(fd, "/uroce/qp", js) && strstr(js, ":null"));
	UT_CHECK(tel_query(fd, "/uroce/ports,x", js) && strstr(js, ":null"));
	if (UT_CHECK(tel_query(fd, "/uroce/info", js)) &&
	    UT_CHECK(js_obj(js, "/uroce/info", obj, sizeof(obj))))
		UT_CHECK(strstr(obj, "\"devices\":[\"uroce0\",\"uroce1\"]"));
	UT_CHECK(tel_query(fd, "/uroce/lcores,x", js) && strstr(js, ":null"));
	check_js_lcores(fd);
	UT_NOTE("telemetry misc");
}

/* ---------------------------------------------------------------------------
 * Scenarios.
 */
static void
make_cfg(struct uroce_config *cfg, const char *link, uint8_t net)
{
	unsigned int i;

	memset(cfg, 0, sizeof(*cfg));
	cfg->port_cnt = 2;
	cfg->lcores = 1;
	for (i = 0; i < 2; i++) {
		snprintf(cfg->port[i].dev, sizeof(cfg->port[i].dev),
			 "ringlink:%s,side=%u", link, i);
		cfg->port[i].has_ip4 = true;
		cfg->port[i].ip4 = htobe32(UINT32_C(0x0a0a0000) |
					   (uint32_t)net << 8 | (i + 1));
		cfg->port[i].ip4_prefix = 24;
		cfg->port[i].mtu = 1500;
	}
}

static bool
engine_up(struct uroce_config *cfg, unsigned int flags)
{
	char err[512] = "";

	if (!UT_CHECK_EQ(uroce_engine_init(cfg, flags | UROCE_ENGINE_WIRE_XDEV,
					   err, sizeof(err)), 0)) {
		fprintf(stderr, "     %s\n", err);
		return false;
	}
	return true;
}

static void
run_native(void)
{
	struct uroce_config cfg;
	struct uroce_qp_stats t0, t1;
	struct side a, b, c, d;
	int fd;

	printf("scenario: native, faults made exactly\n");
	ut_stuck = false;
	make_cfg(&cfg, "tlmn", 1);
	if (!engine_up(&cfg, UROCE_ENGINE_NO_LCORES))
		return;
	fd = tel_open();
	UT_CHECK(fd >= 0);
	if (side_open(&a, uroce_dev_get(0)) && side_open(&b, uroce_dev_get(1)) &&
	    side_open(&c, uroce_dev_get(0)) && side_open(&d, uroce_dev_get(1)) &&
	    qp_connect(&a, &b, 7, true) && qp_connect(&b, &a, 7, true)) {
		UT_CHECK_EQ(post(&a, IBV_WR_RDMA_WRITE, 3000, &b), 0);
		done(&a, IBV_WC_SUCCESS);
		check_native_tx(&a, &b);
		check_lost_request(&a, &b);
		check_lost_ack(&a, &b);
		check_forged(&a, &b);
		check_rnr(&c, &d);
		if (fd >= 0) {
			check_js_qp(fd, &a, "RTS");
			check_js_qp(fd, &b, "RTS");
			check_js_qp(fd, &c, "ERR");
			check_js_port(fd, a.dev);
			check_js_port(fd, b.dev);
			check_js_misc(fd, &a, &b);
		}
		/* A destroyed QP's counters stay in the device's totals. */
		UT_CHECK_EQ(uroce_dev_qp_totals(c.dev, &t0, NULL), 0);
		UT_CHECK_EQ(uroce_dev_qp_destroy(c.qp), 0);
		c.qp = NULL;
		UT_CHECK_EQ(uroce_dev_qp_totals(c.dev, &t1, NULL), 0);
		UT_CHECK_MEM(&t0, &t1, sizeof(t0));
		UT_CHECK_EQ(t1.rnr_naks_rx, 2);
		/* d back to RESET and INIT..RTR: a response in RTR. */
		{
			struct ibv_qp_attr r = { .qp_state = IBV_QPS_RESET };

			UT_CHECK_EQ(uroce_dev_qp_modify(d.qp, &r, IBV_QP_STATE), 0);
			if (qp_connect(&d, &a, 1, false))
				check_state_drop(&d);
		}
	}
	side_close(&a);
	side_close(&b);
	side_close(&c);
	side_close(&d);
	uroce_engine_fini();
	/* The commands stay registered, and answer null without an engine. */
	if (fd >= 0) {
		static char js[JS_MAX];

		UT_CHECK(tel_query(fd, "/uroce/ports", js) &&
			 strstr(js, ":null") != NULL);
		close(fd);
	}
}

/* Another thread queries QPs while they come and go. */
static uint32_t race_stop;
static uint32_t race_qpn;

static void *
race_reader(void *arg)
{
	static char js[JS_MAX];
	unsigned long *answers = arg;
	char cmd[64];
	int fd = tel_open();

	if (fd < 0)
		return NULL;
	while (!__atomic_load_n(&race_stop, __ATOMIC_ACQUIRE)) {
		snprintf(cmd, sizeof(cmd), "/uroce/qp,%u",
			 __atomic_load_n(&race_qpn, __ATOMIC_ACQUIRE));
		if (!tel_query(fd, cmd, js) || !tel_query(fd, "/uroce/ports", js))
			break;
		(*answers)++;
	}
	close(fd);
	return NULL;
}

static void
run_lcore(void)
{
	struct uroce_config cfg;
	struct side a, b, e;
	unsigned long answers = 0;
	pthread_t th;
	unsigned int i;
	int fd;

	printf("scenario: one lcore\n");
	ut_stuck = false;
	make_cfg(&cfg, "tlml", 2);
	if (!engine_up(&cfg, 0))
		return;
	UT_CHECK_EQ(uroce_engine_lcores(), 1);
	fd = tel_open();
	UT_CHECK(fd >= 0);
	if (side_open(&a, uroce_dev_get(0)) && side_open(&b, uroce_dev_get(1)) &&
	    qp_connect(&a, &b, 7, true) && qp_connect(&b, &a, 7, true)) {
		for (i = 0; i < 20; i++) {
			UT_CHECK_EQ(post(&a, IBV_WR_RDMA_WRITE, 4000, &b), 0);
			done(&a, IBV_WC_SUCCESS);
		}
		inject(a.dev, forge(a.dev, a.qp->qpn, F_ICRC));
		/* Quiet now: the lcore has nothing left to count. */
		usleep(20000);
		if (fd >= 0) {
			check_js_qp(fd, &a, "RTS");
			check_js_port(fd, a.dev);
			check_js_port(fd, b.dev);
		}
		UT_CHECK(pthread_create(&th, NULL, race_reader, &answers) == 0);
		for (i = 0; i < 100 && side_open(&e, uroce_dev_get(0)); i++) {
			__atomic_store_n(&race_qpn, e.qp->qpn, __ATOMIC_RELEASE);
			usleep(200);
			side_close(&e);
		}
		side_close(&e);
		__atomic_store_n(&race_stop, 1, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
		UT_CHECK(answers > 0);
		printf("  %lu answers while 100 QPs came and went\n", answers);
	}
	if (fd >= 0)
		close(fd);
	side_close(&a);
	side_close(&b);
	uroce_engine_fini();
}

/* EAL with telemetry on and a file prefix of our own, so that the socket
 * is this process's: <runtime dir>/dpdk_telemetry.v2. */
static int
eal_start(const char *prog)
{
	static char prefix[64];
	const char *extra[] = { "--lcores", "(0-1)@(0-1)", prefix, NULL };

	snprintf(prefix, sizeof(prefix), "--file-prefix=telem%d", (int)getpid());
	return ut_eal_init(prog, extra);
}

static void
cleanup_runtime_dir(void)
{
	char dir[256];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	unlink(tel_path);
	rmdir(dir);
}

int
main(int argc, char **argv)
{
	(void)argc;
	if (eal_start(argv[0]) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	snprintf(tel_path, sizeof(tel_path), "%s/dpdk_telemetry.v2",
		 rte_eal_get_runtime_dir());
	UT_CHECK(access(tel_path, F_OK) == 0);
	run_native();
	run_lcore();
	cleanup_runtime_dir();
	return ut_summary_named("telemetry");
}
