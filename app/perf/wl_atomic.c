/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Atomics, 8 bytes each: compare-and-swap and fetch-and-add on a counter in
 * the peer's slot page, the old value into ours. Latency is the time to
 * the requester's completion (ib_atomic_lat).
 */
#include "perf_priv.h"

/* The slot page follows the data area (setup.c). */
static uint64_t
slot_off(const struct perf *p)
{
	return p->buf_len - 4096;
}

static void
atomic_fill(const struct perf *p, struct ibv_send_wr *wr, uint32_t size,
	    uint64_t roff)
{
	(void)size;
	(void)roff;
	perf_wl_sge(p, wr, slot_off(p) + 64, 8);
	wr->wr.atomic.remote_addr = p->peer.addr + slot_off(p);
	wr->wr.atomic.rkey = p->peer.rkey;
}

static void
cas_fill(const struct perf *p, struct ibv_send_wr *wr, uint32_t size,
	 uint64_t roff)
{
	atomic_fill(p, wr, size, roff);
	wr->opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr->wr.atomic.compare_add = 0;
	wr->wr.atomic.swap = 0;		/* the counter stays 0: every CAS hits */
}

static void
fadd_fill(const struct perf *p, struct ibv_send_wr *wr, uint32_t size,
	  uint64_t roff)
{
	atomic_fill(p, wr, size, roff);
	wr->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr->wr.atomic.compare_add = 1;
}

/* Request: BTH + AtomicETH (28); the response is BTH + AETH + AtomicAckETH. */
const struct perf_wl perf_wl_cas = {
	.name = "cas", .opcode = IBV_WR_ATOMIC_CMP_AND_SWP, .fixed_size = 8,
	.lat = PERF_LAT_COMPLETION, .frame_overhead = PERF_FRAME_BASE + 28 - 8,
	.fill = cas_fill,
};

const struct perf_wl perf_wl_fadd = {
	.name = "fadd", .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .fixed_size = 8,
	.lat = PERF_LAT_COMPLETION, .frame_overhead = PERF_FRAME_BASE + 28 - 8,
	.fill = fadd_fill,
};
