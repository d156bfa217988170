/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * RDMA READ: the peer's data area into ours. The data frames are READ
 * responses (BTH + AETH on the first and last); latency is the time to
 * the requester's completion, as ib_read_lat reports it.
 */
#include "perf_priv.h"

static void
read_fill(const struct perf *p, struct ibv_send_wr *wr, uint32_t size,
	  uint64_t roff)
{
	wr->opcode = IBV_WR_RDMA_READ;
	perf_wl_sge(p, wr, 0, size);
	wr->wr.rdma.remote_addr = p->peer.addr + roff;
	wr->wr.rdma.rkey = p->peer.rkey;
}

const struct perf_wl perf_wl_read = {
	.name = "read", .opcode = IBV_WR_RDMA_READ,
	.lat = PERF_LAT_COMPLETION, .frame_overhead = PERF_FRAME_BASE + 4,
	.fill = read_fill,
};
