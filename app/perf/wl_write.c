/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * RDMA WRITE and WRITE with immediate: the local data area into the
 * peer's. With immediate, each message also consumes a receive at the
 * peer and its latency ping-pong waits for that completion.
 */
#include <string.h>

#include "perf_priv.h"

static void
write_fill(const struct perf *p, struct ibv_send_wr *wr, uint32_t size,
	   uint64_t roff)
{
	wr->opcode = IBV_WR_RDMA_WRITE;
	perf_wl_sge(p, wr, 0, size);
	wr->wr.rdma.remote_addr = p->peer.addr + roff;
	wr->wr.rdma.rkey = p->peer.rkey;
}

static void
write_imm_fill(const struct perf *p, struct ibv_send_wr *wr, uint32_t size,
	       uint64_t roff)
{
	write_fill(p, wr, size, roff);
	wr->opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr->imm_data = htobe32(0x75726f63);	/* "uroc" */
}

/* First (or only) packet: BTH + RETH (16), and ImmDt (4). */
const struct perf_wl perf_wl_write = {
	.name = "write", .opcode = IBV_WR_RDMA_WRITE,
	.lat = PERF_LAT_MEMPOLL, .frame_overhead = PERF_FRAME_BASE + 16,
	.fill = write_fill,
};

const struct perf_wl perf_wl_write_imm = {
	.name = "write_imm", .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
	.needs_recv = true, .lat = PERF_LAT_RECV,
	.frame_overhead = PERF_FRAME_BASE + 16 + 4, .fill = write_imm_fill,
};
