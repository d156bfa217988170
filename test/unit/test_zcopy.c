/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Zero-copy transmit (lib/transport/zcopy.c): a chain built from
 * registered memory is byte for byte the frame the copy builds (same
 * ICRC), leaves the application's memory untouched, and follows the
 * documented rules when its QP is destroyed or its MR deregistered while
 * the frame is still in flight. With the IPv4 header checksum offload
 * (env.tx_ip_cksum) chains and copies carry the mbuf flags and leave the
 * field to the NIC, and nothing else changes.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_ether.h>

#include "uroce_test.h"
#include "uroce_test_eal.h"
#include "uroce_test_link.h"

#define BUF_LEN		16384
#define NSGE		3
#define MAX_PKTS	8

struct zenv {
	struct ut_link l;
	struct uroce_qp *qa, *qb;
	uint8_t *buf, *ref;		/* A's registered buffer and a copy */
	struct uroce_mr *mr;
};

/* A pair with A sending zero-copy from payloads of zc_min bytes. */
static int
zenv_init(struct zenv *z, uint8_t sgid, uint32_t zc_min)
{
	struct ut_qp_opts o;
	unsigned int i;

	if (ut_link_init(&z->l, 9, IBV_MTU_4096) != 0)
		return -1;
	z->l.node[0].env.tx_extbuf = true;
	z->l.node[0].env.tx_zc_min = zc_min;
	ut_qp_opts_default(&o, IBV_QPT_RC);
	o.sgid_index = sgid;
	z->buf = aligned_alloc(4096, BUF_LEN);
	z->ref = malloc(BUF_LEN);
	if (z->buf == NULL || z->ref == NULL)
		return -1;
	for (i = 0; i < BUF_LEN; i++)
		z->buf[i] = (uint8_t)ut_rand();
	memcpy(z->ref, z->buf, BUF_LEN);
	z->mr = ut_node_reg(&z->l.node[0], z->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (z->mr == NULL)
		return -1;
	return ut_link_pair(&z->l, &o, 0x11, 0x22, &z->qa, &z->qb);
}

static void
zenv_fini(struct zenv *z)
{
	ut_link_fini(&z->l);
	free(z->buf);
	free(z->ref);
}

/* An RDMA WRITE of 700 + 1500 + 1903 bytes at odd offsets: with MTU 1024
 * (the default opts) five packets, pieces across SGE boundaries, a pad. */
static void
post_write(struct zenv *z)
{
	static const uint32_t len[NSGE] = { 700, 1500, 1903 };
	static const uint32_t at[NSGE] = { 3, 5001, 9999 };
	struct ibv_sge sge[NSGE];
	struct ibv_send_wr wr, *bad;
	unsigned int i;

	memset(&wr, 0, sizeof(wr));
	for (i = 0; i < NSGE; i++) {
		sge[i].addr = (uintptr_t)(z->buf + at[i]);
		sge[i].length = len[i];
		sge[i].lkey = z->mr->lkey;
	}
	wr.wr_id = 77;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = sge;
	wr.num_sge = NSGE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = 0x1000;
	wr.wr.rdma.rkey = 0x1234;
	UT_CHECK_EQ(uroce_qp_post_send(z->qa, &wr, &bad), 0);
}

/* The frames A sends now; after the RTO when late (the timer rewinds to
 * una and sends again). */
static unsigned int
take_frames_at(struct zenv *z, struct rte_mbuf **out, bool late)
{
	struct uroce_txb txb;
	unsigned int i;

	ut_txb_init(&txb);
	if (late) {
		z->l.now += ut_link_us(10000000);
		uroce_qp_timer(z->qa, z->l.now, &txb);
	}
	uroce_qp_tx(z->qa, z->l.now, &txb);
	for (i = 0; i < txb.n && i < MAX_PKTS; i++)
		out[i] = txb.pkts[i];
	for (; i < txb.n; i++)
		rte_pktmbuf_free(txb.pkts[i]);
	return RTE_MIN((unsigned int)txb.n, (unsigned int)MAX_PKTS);
}

static unsigned int
take_frames(struct zenv *z, struct rte_mbuf **out)
{
	return take_frames_at(z, out, false);
}

/* The frame's bytes, joined; its length. */
static uint32_t
flat(const struct rte_mbuf *m, uint8_t *out)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	const void *p = rte_pktmbuf_read(m, 0, len, out);

	if (p != out)
		memcpy(out, p, len);
	return len;
}

static bool
parses(const uint8_t *b, uint32_t len)
{
	struct uroce_pkt pkt;

	return uroce_wire_parse(b, len, 0, &pkt) == UROCE_WIRE_OK;
}

/* Zero-copy and copied frames of the same packets: identical bytes. */
static void
test_identical(uint8_t sgid)
{
	static uint8_t a[8192], b[8192];
	struct rte_mbuf *zc[MAX_PKTS], *cp[MAX_PKTS];
	struct zenv z;
	unsigned int nz, nc, i, ext;
	uint32_t la, lb;
	const struct rte_mbuf *s;

	if (!UT_CHECK_EQ(zenv_init(&z, sgid, 1), 0))
		return;
	post_write(&z);
	nz = take_frames(&z, zc);
	UT_CHECK_EQ(nz, 5);
	for (i = 0, ext = 0; i < nz; i++) {
		UT_CHECK(zc[i]->nb_segs >= 3);	/* headers, piece(s), ICRC */
		for (s = zc[i]; s != NULL; s = s->next)
			ext += RTE_MBUF_HAS_EXTBUF(s) ? 1 : 0;
	}
	/* Packets 0..4 cover 700|324, 1024, 152|872, 1024, 1031 - 1024 = 7: seven pieces. */
	UT_CHECK_EQ(ext, 7);
	UT_CHECK_EQ(uroce_qp_zc_inflight(z.qa), 7);
	/* The same packets again, copied (threshold above the MTU). */
	z.l.node[0].env.tx_zc_min = UINT32_MAX;
	nc = take_frames_at(&z, cp, true);
	UT_CHECK_EQ(nc, nz);
	for (i = 0; i < nc && i < nz; i++) {
		UT_CHECK_EQ(cp[i]->nb_segs, 1);
		la = flat(zc[i], a);
		lb = flat(cp[i], b);
		UT_CHECK_EQ(la, lb);
		UT_CHECK_MEM(a, b, la);
		UT_CHECK(parses(a, la));	/* the ICRC of the chain holds */
		UT_NOTE("sgid %u packet %u (%u bytes)", sgid, i, la);
	}
	UT_CHECK_MEM(z.buf, z.ref, BUF_LEN);	/* never written */
	for (i = 0; i < nz; i++)
		rte_pktmbuf_free(zc[i]);
	for (i = 0; i < nc; i++)
		rte_pktmbuf_free(cp[i]);
	UT_CHECK_EQ(uroce_qp_zc_inflight(z.qa), 0);
	zenv_fini(&z);
}

/* Small payloads, inline data and the copy-only ports are copied. */
static void
test_threshold(void)
{
	struct rte_mbuf *m[MAX_PKTS];
	struct zenv z;
	unsigned int n, i;

	if (!UT_CHECK_EQ(zenv_init(&z, 0, 2000), 0))
		return;
	post_write(&z);		/* no packet carries 2000 bytes */
	n = take_frames(&z, m);
	UT_CHECK_EQ(n, 5);
	for (i = 0; i < n; i++) {
		UT_CHECK_EQ(m[i]->nb_segs, 1);
		rte_pktmbuf_free(m[i]);
	}
	UT_CHECK_EQ(uroce_qp_zc_inflight(z.qa), 0);
	zenv_fini(&z);
	/* A port without zero-copy: no state at all. */
	if (!UT_CHECK_EQ(zenv_init(&z, 0, 0), 0))
		return;
	UT_CHECK(z.qa->zc == NULL);
	zenv_fini(&z);
}

/*
 * Rule 4: a QP destroyed with frames in flight. The frames stay intact
 * (their ICRC holds: the memory is the application's until it deregisters)
 * and freeing them afterwards releases the buffer owner (ASan: no
 * use-after-free, no leak).
 */
static void
test_destroy_inflight(void)
{
	static uint8_t a[8192];
	struct rte_mbuf *m[MAX_PKTS];
	struct zenv z;
	unsigned int n, i;
	uint32_t len;

	if (!UT_CHECK_EQ(zenv_init(&z, 0, 1), 0))
		return;
	post_write(&z);
	n = take_frames(&z, m);
	UT_CHECK_EQ(n, 5);
	UT_CHECK_EQ(uroce_qp_zc_inflight(z.qa), 7);
	ut_node_forget_qp(&z.l.node[0], z.qa);
	uroce_qp_destroy(z.qa);
	for (i = 0; i < n; i++) {
		len = flat(m[i], a);
		UT_CHECK(parses(a, len));
		UT_CHECK(RTE_MBUF_HAS_EXTBUF(m[i]->next));
		rte_pktmbuf_free(m[i]);
	}
	UT_CHECK_MEM(z.buf, z.ref, BUF_LEN);
	zenv_fini(&z);
}

/*
 * Rule 3: an MR deregistered with frames in flight. uroce_mr_dereg() does
 * not touch them (the engine's eng_sync() is what waits for them); no frame
 * built after it points into the region: the retransmission fails its key
 * check and the WQE completes with IBV_WC_LOC_PROT_ERR.
 */
static void
test_dereg_inflight(void)
{
	static uint8_t a[8192];
	struct rte_mbuf *m[MAX_PKTS], *again[MAX_PKTS];
	struct ibv_wc wc;
	struct zenv z;
	unsigned int n, i;
	uint32_t len;

	if (!UT_CHECK_EQ(zenv_init(&z, 0, 1), 0))
		return;
	post_write(&z);
	n = take_frames(&z, m);
	UT_CHECK_EQ(n, 5);
	UT_CHECK_EQ(uroce_mr_dereg(z.l.node[0].mrs, z.mr), 0);
	for (i = 0; i < n; i++) {
		len = flat(m[i], a);
		UT_CHECK(parses(a, len));
		rte_pktmbuf_free(m[i]);
	}
	UT_CHECK_EQ(uroce_qp_zc_inflight(z.qa), 0);
	UT_CHECK_EQ(take_frames_at(&z, again, true), 0);
	UT_CHECK_EQ(uroce_qp_zc_inflight(z.qa), 0);
	if (UT_CHECK_EQ(uroce_cq_poll(z.l.node[0].scq, 1, &wc), 1)) {
		UT_CHECK_EQ(wc.wr_id, 77);
		UT_CHECK_EQ(wc.status, IBV_WC_LOC_PROT_ERR);
	}
	UT_CHECK_EQ(z.qa->state, IBV_QPS_ERR);
	zenv_fini(&z);
}

/* The whole message over the link, zero-copy, lands intact at B; with
 * the IPv4 checksum offload (ol, sgid 0) on both sides every frame, the
 * ACKs too, leaves the field to the link's "NIC", which fills it in. */
static bool
acked(struct ut_link *l, void *ctx)
{
	struct ibv_wc *wc = ctx;

	return uroce_cq_poll(l->node[0].scq, 1, wc) == 1;
}

static void
test_end_to_end(uint8_t sgid, bool ol)
{
	static uint8_t dst[8192];
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct uroce_mr *rmr;
	struct ibv_wc wc;
	struct zenv z;

	if (!UT_CHECK_EQ(zenv_init(&z, sgid, 1024), 0))
		return;
	z.l.node[0].env.tx_ip_cksum = ol;
	z.l.node[1].env.tx_ip_cksum = ol;
	memset(dst, 0, sizeof(dst));
	rmr = ut_node_reg(&z.l.node[1], dst, sizeof(dst),
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!UT_CHECK(rmr != NULL))
		goto out;
	memset(&wr, 0, sizeof(wr));
	sge.addr = (uintptr_t)(z.buf + 101);
	sge.length = 7777;
	sge.lkey = z.mr->lkey;
	wr.wr_id = 5;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)dst + 3;
	wr.wr.rdma.rkey = rmr->rkey;
	UT_CHECK_EQ(uroce_qp_post_send(z.qa, &wr, &bad), 0);
	UT_CHECK(ut_link_run(&z.l, acked, &wc, ut_link_us(1000000), 100000));
	UT_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	UT_CHECK_MEM(dst + 3, z.ref + 101, 7777);
	/* 7 full packets go zero-copy, the last 609 bytes are copied. */
	UT_CHECK_EQ(z.l.dir[1].chains, 7);
	UT_CHECK_EQ(uroce_qp_zc_inflight(z.qa), 0);
	UT_CHECK_EQ(z.l.dir[1].ip_cksum_ol, ol ? z.l.dir[1].sent : 0);
	UT_CHECK_EQ(z.l.dir[0].ip_cksum_ol, ol ? z.l.dir[0].sent : 0);
	UT_CHECK(z.l.dir[0].sent >= 1);		/* the ACK(s) */
out:
	zenv_fini(&z);
}

/* The IPv4 (sgid 0) or IPv6 (sgid 1) frame m, built with the checksum
 * offload, against sw, built without: flags and lengths set for IPv4 only,
 * the checksum field 0 and every other byte (the ICRC too) the same. */
static void
check_ol_frame(const struct rte_mbuf *m, const struct rte_mbuf *sw,
	       uint8_t sgid)
{
	static uint8_t a[8192], b[8192];
	const uint64_t want = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
	uint32_t la = flat(m, a), lb = flat(sw, b);
	uint32_t ck = RTE_ETHER_HDR_LEN + 10;	/* IPv4 hdr_checksum */

	UT_CHECK_EQ(sw->ol_flags & want, 0);
	if (!UT_CHECK_EQ(la, lb))
		return;
	if (sgid != 0) {
		UT_CHECK_EQ(m->ol_flags & want, 0);
		UT_CHECK_MEM(a, b, la);
		return;
	}
	UT_CHECK_EQ(m->ol_flags & want, want);
	UT_CHECK_EQ(m->l2_len, RTE_ETHER_HDR_LEN);
	UT_CHECK_EQ(m->l3_len, 20);
	UT_CHECK(a[ck] == 0 && a[ck + 1] == 0);
	UT_CHECK(b[ck] != 0 || b[ck + 1] != 0);
	UT_CHECK(!parses(a, la));	/* left to the NIC indeed */
	UT_CHECK_MEM(a, b, ck);
	UT_CHECK_MEM(a + ck + 2, b + ck + 2, la - ck - 2);
}

/* The same packets as zero-copy chains and as copies, offloaded or not. */
static void
test_ip_cksum_ol(uint8_t sgid)
{
	struct rte_mbuf *zc[MAX_PKTS], *cp[MAX_PKTS], *sw[MAX_PKTS];
	unsigned int nz, nc, ns, i;
	struct zenv z;

	if (!UT_CHECK_EQ(zenv_init(&z, sgid, 1), 0))
		return;
	z.l.node[0].env.tx_ip_cksum = true;
	post_write(&z);
	nz = take_frames(&z, zc);
	z.l.node[0].env.tx_zc_min = UINT32_MAX;
	nc = take_frames_at(&z, cp, true);
	z.l.node[0].env.tx_ip_cksum = false;
	ns = take_frames_at(&z, sw, true);
	UT_CHECK_EQ(nz, 5);
	UT_CHECK_EQ(nc, 5);
	UT_CHECK_EQ(ns, 5);
	for (i = 0; i < ns && i < nz && i < nc; i++) {
		UT_CHECK(zc[i]->nb_segs >= 3);
		UT_CHECK_EQ(cp[i]->nb_segs, 1);
		check_ol_frame(zc[i], sw[i], sgid);
		check_ol_frame(cp[i], sw[i], sgid);
		UT_NOTE("sgid %u packet %u", sgid, i);
	}
	rte_pktmbuf_free_bulk(zc, nz);
	rte_pktmbuf_free_bulk(cp, nc);
	rte_pktmbuf_free_bulk(sw, ns);
	zenv_fini(&z);
}

int
main(int argc, char **argv)
{
	(void)argc;
	if (ut_eal_start(argv[0]) < 0)
		return 1;
	test_identical(0);
	test_identical(1);
	test_threshold();
	test_destroy_inflight();
	test_dereg_inflight();
	test_end_to_end(1, false);
	test_end_to_end(0, true);
	test_ip_cksum_ol(0);
	test_ip_cksum_ol(1);
	return ut_summary();
}
