/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * libFuzzer target for the transport's receive side: arbitrary frames,
 * parsed with the ICRC check off (so that mutations reach the transport
 * headers), fed to an RC QP and a UD QP in RTS (and to the RC QP's
 * completer), whose one registered region has PROT_NONE guard pages on
 * both sides: any access outside the region faults. What the QPs answer
 * is built and freed.
 *
 * Both nodes run congestion control (cc = dcqcn), so that CE marks and
 * CNPs in the input reach lib/transport/qp_cc.c and DCQCN.
 *
 * Input: up to 8 frames, each a 2-byte little-endian length then the
 * frame, so that multi-packet messages can be found. Every input starts
 * from the same state (the QPs are reset and brought up again), so runs
 * are reproducible.
 *
 * FUZZ_RESPONDER_SEEDS=<dir> writes seed inputs (requests of each kind
 * with the real keys and PSNs) to dir and exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "uroce_test_eal.h"
#include "uroce_test_link.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PAGE		4096
#define REGION		(4 * PAGE)
#define RQ_DEPTH	4
#define RC_QPN		0x10
#define UD_QPN		0x20
#define RQ_PSN		0x100

static struct ut_link *L;
static struct uroce_qp *rc_a, *rc, *ud_a, *ud;
static struct ut_qp_opts rc_opts, ud_opts;
static uint8_t *region;
static struct uroce_mr *mr;

static void
post_recvs(struct uroce_qp *qp)
{
	struct ibv_sge sge[2] = {
		{ (uintptr_t)region, 100, mr->lkey },
		{ (uintptr_t)region + PAGE, 2 * PAGE, mr->lkey },
	};
	struct ibv_recv_wr wr = { .sg_list = sge, .num_sge = 2 }, *bad;
	int i;

	for (i = 0; i < RQ_DEPTH; i++)
		uroce_qp_post_recv(qp, &wr, &bad);
}

/* cc = dcqcn with the default parameters (config_cc.c) in cycles of the
 * link's fake clock. */
static void
cc_on(struct uroce_qp_env *e)
{
	struct uroce_dcqcn_params *p = &e->dcqcn;

	e->cc = true;
	p->line_kbps = 100000000;
	p->first_kbps = 0;
	p->min_kbps = 1000;
	p->ai_kbps = 5000;
	p->hai_kbps = 50000;
	p->min_dec_fac = 50;
	p->threshold = 5;
	p->byte_reset = 32767;
	p->g = 1019;
	p->initial_alpha = 1023;
	p->time_reset = ut_link_us(300);
	p->alpha_period = ut_link_us(55);
	p->reduce_period = ut_link_us(4);
	e->cnp_interval = ut_link_us(50);
}

/* RESET, then up again: every input sees the same QPs. */
static void
qp_fresh(struct uroce_qp *qp, uint32_t peer, const struct ut_qp_opts *o)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct ibv_wc wc[16];

	uroce_qp_modify(qp, &a, IBV_QP_STATE, L->now);
	ut_qp_up(L, 1, qp, peer, o);
	while (uroce_cq_poll(qp->send_cq, 16, wc) > 0)
		;
	while (uroce_cq_poll(qp->recv_cq, 16, wc) > 0)
		;
	post_recvs(qp);
}

static void
drain(struct uroce_txb *txb)
{
	unsigned int i;

	for (i = 0; i < txb->n; i++)
		rte_pktmbuf_free(txb->pkts[i]);
	txb->n = 0;
}

static int
setup(void)
{
	uint8_t *map;

	if (ut_eal_init("fuzz_responder", NULL) < 0)
		return -1;
	map = mmap(NULL, REGION + 2 * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return -1;
	mprotect(map, PAGE, PROT_NONE);
	mprotect(map + PAGE + REGION, PAGE, PROT_NONE);
	region = map + PAGE;
	L = calloc(1, sizeof(*L));
	if (L == NULL || ut_link_init(L, 1, IBV_MTU_1024) != 0)
		return -1;
	cc_on(&L->node[0].env);
	cc_on(&L->node[1].env);
	mr = ut_node_reg(&L->node[1], region, REGION, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			 IBV_ACCESS_REMOTE_ATOMIC);
	ut_qp_opts_default(&rc_opts, IBV_QPT_RC);
	rc_opts.path_mtu = IBV_MTU_256;
	rc_opts.max_rd_atomic = 2;
	rc_opts.psn[0] = RQ_PSN;
	ut_qp_opts_default(&ud_opts, IBV_QPT_UD);
	if (mr == NULL ||
	    ut_link_pair(L, &rc_opts, RC_QPN + 1, RC_QPN, &rc_a, &rc) != 0 ||
	    ut_link_pair(L, &ud_opts, UD_QPN + 1, UD_QPN, &ud_a, &ud) != 0)
		return -1;
	return 0;
}

/* Requests of the RC QP's own, so that responses reach its completer:
 * SEND (PSNs +0, +1), READ (+2 .. +4), FETCH_ADD (+5) from SQ_PSN. */
#define SQ_PSN		0x123456

static void
post_requests(struct uroce_qp *qp)
{
	struct ibv_sge sge[3] = {
		{ (uintptr_t)region, 300, mr->lkey },
		{ (uintptr_t)region + 2 * PAGE, 600, mr->lkey },
		{ (uintptr_t)region + 16, 8, mr->lkey },
	};
	struct ibv_send_wr wr[3], *bad;
	int i;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = (uint64_t)i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[0].opcode = IBV_WR_SEND;
	wr[1].opcode = IBV_WR_RDMA_READ;
	wr[1].wr.rdma.remote_addr = 0x1000;
	wr[1].wr.rdma.rkey = 0x100;
	wr[2].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr[2].wr.atomic.remote_addr = 0x2000;
	wr[2].wr.atomic.rkey = 0x100;
	wr[2].wr.atomic.compare_add = 1;
	uroce_qp_post_send(qp, wr, &bad);
}

/* ---------------------------------------------------------------------------
 * Seeds.
 */
static size_t
put_frame(uint8_t *out, size_t off, const struct uroce_l2l3 *p, uint8_t opcode,
	  uint32_t dqpn, uint32_t psn, const struct uroce_ext_fields *ext, uint32_t plen)
{
	static uint8_t payload[1024];
	struct uroce_bth_fields bth = {
		.opcode = opcode, .pkey = 0xffff, .dqpn = dqpn, .psn = psn, .ackreq = true,
	};
	uint32_t len;

	memset(payload, 0x42, sizeof(payload));
	len = uroce_wire_build(out + off + 2, 9000, p, &bth, ext, payload, plen);
	out[off] = (uint8_t)len;
	out[off + 1] = (uint8_t)(len >> 8);
	return off + 2 + len;
}

static void
write_seed(const char *dir, const char *name, const uint8_t *b, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL)
		return;
	fwrite(b, 1, n, f);
	fclose(f);
}

static void
seeds(const char *dir)
{
	static uint8_t b[4 * 9100];
	const struct uroce_l2l3 *p = &rc_a->path;
	struct uroce_ext_fields e;
	uint64_t va = (uintptr_t)region;
	size_t n;

	memset(&e, 0, sizeof(e));
	e.reth.va = va;
	e.reth.rkey = mr->rkey;
	e.reth.len = 64;
	n = put_frame(b, 0, p, UROCE_OPC_RC_WRITE_ONLY, RC_QPN, RQ_PSN, &e, 64);
	write_seed(dir, "write-only", b, n);
	e.reth.len = 600;
	n = put_frame(b, 0, p, UROCE_OPC_RC_WRITE_FIRST, RC_QPN, RQ_PSN, &e, 256);
	n = put_frame(b, n, p, UROCE_OPC_RC_WRITE_MIDDLE, RC_QPN, RQ_PSN + 1, NULL, 256);
	n = put_frame(b, n, p, UROCE_OPC_RC_WRITE_LAST_IMM, RC_QPN, RQ_PSN + 2, &e, 88);
	write_seed(dir, "write-3", b, n);
	e.reth.len = 700;
	write_seed(dir, "read", b, put_frame(b, 0, p, UROCE_OPC_RC_READ_REQ, RC_QPN, RQ_PSN, &e, 0));
	n = put_frame(b, 0, p, UROCE_OPC_RC_SEND_FIRST, RC_QPN, RQ_PSN, NULL, 256);
	n = put_frame(b, n, p, UROCE_OPC_RC_SEND_LAST_IMM, RC_QPN, RQ_PSN + 1, &e, 20);
	n = put_frame(b, n, p, UROCE_OPC_RC_SEND_ONLY, RC_QPN, RQ_PSN + 2, NULL, 30);
	write_seed(dir, "send-2", b, n);
	memset(&e, 0, sizeof(e));
	e.atmeth.va = va + 8;
	e.atmeth.rkey = mr->rkey;
	e.atmeth.swap_add = 5;
	n = put_frame(b, 0, p, UROCE_OPC_RC_FETCH_ADD, RC_QPN, RQ_PSN, &e, 0);
	n = put_frame(b, n, p, UROCE_OPC_RC_CMP_SWAP, RC_QPN, RQ_PSN + 1, &e, 0);
	n = put_frame(b, n, p, UROCE_OPC_RC_CMP_SWAP, RC_QPN, RQ_PSN + 1, &e, 0);
	write_seed(dir, "atomics", b, n);
	memset(&e, 0, sizeof(e));
	e.aeth.syndrome = 0x1f;
	n = put_frame(b, 0, p, UROCE_OPC_RC_ACK, RC_QPN, SQ_PSN + 1, &e, 0);
	n = put_frame(b, n, p, UROCE_OPC_RC_READ_RESP_FIRST, RC_QPN, SQ_PSN + 2, &e, 256);
	n = put_frame(b, n, p, UROCE_OPC_RC_READ_RESP_MIDDLE, RC_QPN, SQ_PSN + 3, &e, 256);
	n = put_frame(b, n, p, UROCE_OPC_RC_READ_RESP_LAST, RC_QPN, SQ_PSN + 4, &e, 88);
	e.atmack_orig = 77;
	n = put_frame(b, n, p, UROCE_OPC_RC_ATOMIC_ACK, RC_QPN, SQ_PSN + 5, &e, 0);
	write_seed(dir, "responses", b, n);
	e.aeth.syndrome = 0x60;	/* NAK PSN sequence error */
	n = put_frame(b, 0, p, UROCE_OPC_RC_ACK, RC_QPN, SQ_PSN + 1, &e, 0);
	e.aeth.syndrome = 0x21;	/* RNR NAK */
	n = put_frame(b, n, p, UROCE_OPC_RC_ACK, RC_QPN, SQ_PSN + 1, &e, 0);
	e.aeth.syndrome = 0x62;	/* NAK remote access */
	n = put_frame(b, n, p, UROCE_OPC_RC_ACK, RC_QPN, SQ_PSN + 2, &e, 0);
	write_seed(dir, "naks", b, n);
	e.deth.qkey = ud_opts.qkey;
	e.deth.sqpn = UD_QPN + 1;
	write_seed(dir, "ud", b, put_frame(b, 0, p, UROCE_OPC_UD_SEND_ONLY_IMM, UD_QPN, 0, &e, 200));
}

/* ---------------------------------------------------------------------------
 * The target.
 */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("FUZZ_RESPONDER_SEEDS");

	(void)argc;
	(void)argv;
	if (setup() != 0) {
		fprintf(stderr, "fuzz_responder: set-up failed\n");
		exit(1);
	}
	if (dir != NULL) {
		seeds(dir);
		exit(0);
	}
	return 0;
}

static void
feed(const uint8_t *frame, uint32_t len, struct uroce_txb *txb)
{
	struct uroce_pkt pkt;
	struct uroce_qp *qp;

	if (uroce_wire_parse(frame, len, UROCE_PARSE_NO_ICRC, &pkt) != UROCE_WIRE_OK)
		return;
	qp = pkt.op->transport == UROCE_TR_UD ? ud : rc;
	uroce_qp_rx(qp, &pkt, NULL, L->now, txb);
	drain(txb);
	while (uroce_qp_tx(qp, L->now, txb))
		drain(txb);
	drain(txb);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uroce_txb txb;
	size_t off = 0;
	int k;

	qp_fresh(rc, RC_QPN + 1, &rc_opts);
	qp_fresh(ud, UD_QPN + 1, &ud_opts);
	/* the RC QP has requests of its own outstanding, for the completer */
	ut_txb_init(&txb);
	post_requests(rc);
	while (uroce_qp_tx(rc, L->now, &txb))
		drain(&txb);
	drain(&txb);
	for (k = 0; k < 8 && off + 2 <= size; k++) {
		uint32_t len = data[off] | (uint32_t)data[off + 1] << 8;
		uint8_t *copy;

		off += 2;
		if (len > size - off)
			len = (uint32_t)(size - off);
		/* an exact-size copy: ASan sees a read past the frame */
		copy = malloc(len ? len : 1);
		if (copy == NULL)
			break;
		memcpy(copy, data + off, len);
		feed(copy, len, &txb);
		free(copy);
		off += len;
	}
	/* timers: whatever is due (retransmit, RNR, pacing) */
	L->now += ut_link_us(1000);
	uroce_qp_timer(rc, L->now, &txb);
	drain(&txb);
	return 0;
}
