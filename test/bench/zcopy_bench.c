/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * uroce-zcopy-bench: TSC cycles to build and free one RC WRITE request
 * frame, payload copied into the mbuf vs zero-copy chain from the MR
 * (lib/transport/zcopy.c), for payloads of 256 B .. 4 KiB. Frames are
 * built by uroce_qp_tx() on a QP of the in-memory test link (no wire);
 * each round resets the QP and posts 192 one-packet WRITEs from a 16 MiB
 * buffer (larger than the caches). Best of 5 rounds per row; the ratio is
 * zero-copy / copy measured in the same run. Indicative on a shared machine.
 *
 *	uroce-zcopy-bench [EAL args]   (e.g. --no-pci --in-memory)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>

#include "uroce_test_link.h"

#define BUF_LEN		(16u << 20)
#define NWR		192
#define ROUNDS		5

static struct ut_link link;
static struct uroce_qp *qa, *qb;
static struct ut_qp_opts opts;

static int
qp_reset_up(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (uroce_qp_modify(qa, &a, IBV_QP_STATE, link.now) != 0)
		return -1;
	return ut_qp_up(&link, 0, qa, qb->qpn, &opts);
}

/* Cycles per frame of one round (post NWR WRITEs of len, build, free). */
static double
round_cycles(uint8_t *buf, uint32_t lkey, uint32_t len, size_t *at)
{
	struct ibv_send_wr wr[NWR], *bad;
	struct ibv_sge sge[NWR];
	struct uroce_txb txb;
	uint64_t t0, cyc = 0;
	unsigned int i, n = 0;
	bool more;

	if (qp_reset_up() != 0)
		return -1;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < NWR; i++) {
		if (*at + len > BUF_LEN)
			*at = 0;
		sge[i] = (struct ibv_sge){ (uintptr_t)(buf + *at), len, lkey };
		*at += len;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].wr.rdma.remote_addr = 0x10000;
		wr[i].wr.rdma.rkey = 0x100;
		wr[i].next = i + 1 < NWR ? &wr[i + 1] : NULL;
	}
	if (uroce_qp_post_send(qa, wr, &bad) != 0)
		return -1;
	do {
		ut_txb_init(&txb);
		t0 = rte_rdtsc_precise();
		more = uroce_qp_tx(qa, link.now, &txb);
		rte_pktmbuf_free_bulk(txb.pkts, txb.n);
		cyc += rte_rdtsc_precise() - t0;
		n += txb.n;
	} while (more);
	return n == NWR ? (double)cyc / n : -1;
}

static double
best(uint8_t *buf, uint32_t lkey, uint32_t len, uint32_t zc_min)
{
	double b = 1e18, c;
	size_t at = 0;
	int r;

	link.node[0].env.tx_zc_min = zc_min;
	for (r = 0; r < ROUNDS; r++) {
		c = round_cycles(buf, lkey, len, &at);
		if (c < 0)
			return -1;
		b = RTE_MIN(b, c);
	}
	return b;
}

int
main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 256, 512, 1024, 2048, 4096 };
	struct uroce_mr *mr;
	uint8_t *buf;
	unsigned int i;
	double cp, zc;

	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	buf = aligned_alloc(4096, BUF_LEN);
	if (buf == NULL || ut_link_init(&link, 1, IBV_MTU_4096) != 0)
		return 1;
	memset(buf, 0x5a, BUF_LEN);
	link.node[0].env.tx_extbuf = true;
	link.node[0].env.tx_zc_min = 1;		/* QP gets zero-copy state */
	mr = ut_node_reg(&link.node[0], buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	ut_qp_opts_default(&opts, IBV_QPT_RC);
	opts.path_mtu = IBV_MTU_4096;
	opts.max_send_wr = 256;
	opts.timeout = 0;
	if (mr == NULL || ut_link_pair(&link, &opts, 0x10, 0x20, &qa, &qb) != 0) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	printf("%-8s %14s %14s %8s\n", "payload", "copy cyc/frm", "zcopy cyc/frm",
	       "zc/copy");
	for (i = 0; i < RTE_DIM(sizes); i++) {
		cp = best(buf, mr->lkey, sizes[i], UINT32_MAX);
		zc = best(buf, mr->lkey, sizes[i], 1);
		if (cp <= 0 || zc <= 0) {
			fprintf(stderr, "round failed\n");
			return 1;
		}
		printf("%-8u %14.0f %14.0f %8.2f\n", sizes[i], cp, zc, zc / cp);
	}
	ut_link_fini(&link);
	free(buf);
	rte_eal_cleanup();
	return 0;
}
