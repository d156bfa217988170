/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/* Someone else's XDP program (af_xdp_veth.sh foreign): passes every frame. */

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int
other_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
