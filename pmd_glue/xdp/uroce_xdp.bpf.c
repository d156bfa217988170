/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * uroce's XDP program for AF_XDP ports (pmd_glue/xdp.c attaches it through
 * net_af_xdp's xdp_prog= devarg). It takes only RoCEv2 for us: an IPv4 or
 * IPv6 UDP datagram to port 4791 (IBTA RoCEv2 Annex A17.2.3) whose
 * destination address is in uroce_addrs, untagged or behind one 802.1Q
 * tag, and redirects it to the AF_XDP socket of its rx queue (xsks_map,
 * the name net_af_xdp looks for). Every other frame (ARP, ICMP, TCP, other
 * UDP, IP fragments, IPv6 with extension headers) goes on to the kernel
 * with XDP_PASS, and so does RoCEv2 on a queue without a socket.
 *
 * uroce_addrs keys are 16 bytes, IPv4 as ::ffff:a.b.c.d (as a RoCEv2 GID);
 * the port fills it after the program is attached. Until the port has
 * written its pid into uroce_owner, the program passes everything. The program's name (uroce_xdp) and uroce_owner (the pid and
 * start time of the process that attached it) are how a later run tells a
 * stale program of ours, left by a killed process, from a live one.
 */

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define ROCEV2_UDP_PORT		4791
#define MAX_QUEUES		64
#define MAX_ADDRS		16
#define IP_MF			0x2000
#define IP_OFFMASK		0x1fff

struct vlan_hdr {
	__be16 tci;
	__be16 proto;
};

struct addr_key {
	__u8 addr[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_ADDRS);
	__type(key, struct addr_key);
	__type(value, __u8);
} uroce_addrs SEC(".maps");

struct owner {
	__u32 pid;
	__u32 pad;
	__u64 start_time;		/* /proc/PID/stat field 22 */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct owner);
} uroce_owner SEC(".maps");

/* The UDP header after an IPv4 header at l3, or NULL; *key gets the
 * destination as an IPv4-mapped address. Fragments are not ours. */
static __always_inline struct udphdr *
udp_of_ipv4(void *l3, void *end, struct addr_key *key)
{
	struct iphdr *ip = l3;

	if ((void *)(ip + 1) > end || ip->ihl < 5 ||
	    ip->protocol != IPPROTO_UDP ||
	    (ip->frag_off & bpf_htons(IP_MF | IP_OFFMASK)) != 0)
		return NULL;
	key->addr[10] = 0xff;
	key->addr[11] = 0xff;
	__builtin_memcpy(&key->addr[12], &ip->daddr, 4);
	return (struct udphdr *)((__u8 *)ip + ip->ihl * 4);
}

static __always_inline struct udphdr *
udp_of_ipv6(void *l3, void *end, struct addr_key *key)
{
	struct ipv6hdr *ip = l3;

	if ((void *)(ip + 1) > end || ip->nexthdr != IPPROTO_UDP)
		return NULL;
	__builtin_memcpy(key->addr, &ip->daddr, 16);
	return (struct udphdr *)(ip + 1);
}

SEC("xdp")
int
uroce_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct addr_key key = { 0 };
	struct owner *own;
	struct udphdr *udp;
	__u32 zero = 0;
	void *l3;
	__be16 proto;

	/* Unclaimed (the port is still starting): everything to the kernel. */
	own = bpf_map_lookup_elem(&uroce_owner, &zero);
	if (own == NULL || own->pid == 0 || (void *)(eth + 1) > end)
		return XDP_PASS;
	proto = eth->h_proto;
	l3 = eth + 1;
	if (proto == bpf_htons(ETH_P_8021Q)) {
		struct vlan_hdr *vh = l3;

		if ((void *)(vh + 1) > end)
			return XDP_PASS;
		proto = vh->proto;
		l3 = vh + 1;
	}
	if (proto == bpf_htons(ETH_P_IP))
		udp = udp_of_ipv4(l3, end, &key);
	else if (proto == bpf_htons(ETH_P_IPV6))
		udp = udp_of_ipv6(l3, end, &key);
	else
		return XDP_PASS;
	if (udp == NULL || (void *)(udp + 1) > end ||
	    udp->dest != bpf_htons(ROCEV2_UDP_PORT) ||
	    bpf_map_lookup_elem(&uroce_addrs, &key) == NULL)
		return XDP_PASS;
	/* No socket on this queue: the kernel gets it (flags = default). */
	return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "Dual BSD/GPL";
