/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The workload table: each verb's callbacks live in its own wl_*.c, as
 * testpmd's forwarding engines do; --workload picks one by name.
 */
#include <string.h>

#include "perf_priv.h"

extern const struct perf_wl perf_wl_send, perf_wl_write, perf_wl_write_imm,
	perf_wl_read, perf_wl_cas, perf_wl_fadd;

const struct perf_wl *const perf_wls[] = {
	&perf_wl_send, &perf_wl_write, &perf_wl_write_imm, &perf_wl_read,
	&perf_wl_cas, &perf_wl_fadd,
};
const unsigned int perf_nwls = sizeof(perf_wls) / sizeof(perf_wls[0]);

/* The WR's one SGE: size bytes at local offset off. sg_list must point at
 * storage the caller owns (the WR's own sge). */
void
perf_wl_sge(const struct perf *p, struct ibv_send_wr *wr, uint64_t off,
	    uint32_t size)
{
	wr->sg_list->addr = (uintptr_t)p->buf + off;
	wr->sg_list->length = size;
	wr->sg_list->lkey = p->lkey;
	wr->num_sge = 1;
}

/* A completion status by name (the app does not link libibverbs). */
const char *
perf_wc_status(enum ibv_wc_status s)
{
	static const char *const names[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "WR flushed",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_GENERAL_ERR] = "general error",
	};

	if ((unsigned int)s < sizeof(names) / sizeof(names[0]) &&
	    names[s] != NULL)
		return names[s];
	return "other error";
}
