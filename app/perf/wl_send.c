/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * SEND: each message consumes a receive at the peer (the server keeps
 * depth receives posted per QP); the latency ping-pong waits for them.
 */
#include "perf_priv.h"

static void
send_fill(const struct perf *p, struct ibv_send_wr *wr, uint32_t size,
	  uint64_t roff)
{
	(void)roff;
	wr->opcode = IBV_WR_SEND;
	perf_wl_sge(p, wr, 0, size);
}

const struct perf_wl perf_wl_send = {
	.name = "send", .opcode = IBV_WR_SEND, .needs_recv = true,
	.lat = PERF_LAT_RECV, .frame_overhead = PERF_FRAME_BASE,
	.fill = send_fill,
};
