/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * rte_flow steering for a port with a kernel exception path: the NIC
 * itself sorts the frames, so the stack's queues see only its own and the
 * kernel's frames never cost an engine lcore a look. Rules, by rte_flow
 * priority (lower first):
 *
 *	0  RoCEv2: [VLAN vid /] IPv4 or IPv6 dst = each GID / UDP dst 4791
 *	   -> the stack's queues (QUEUE 0, or RSS over them)
 *	1  ARP, and IPv6 with next header ICMPv6 (neighbour discovery) on
 *	   the port's VLAN -> queue 0: the stack answers its own and copies
 *	   them to the kernel (exc.c); other ICMPv6 goes on to the kernel
 *	2  everything else -> exc_q, drained to the kernel
 *
 * A PMD that refuses any rule gets none (the ones made are destroyed): the
 * port then dispatches in software (port.c), as steer = auto says.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_ip.h>

#include "net_priv.h"

static const struct net_flow_ops rte_ops = {
	.create = rte_flow_create,
	.destroy = rte_flow_destroy,
};

static const struct net_flow_ops *flow_ops = &rte_ops;

void
net_steer_set_ops(const struct net_flow_ops *ops)
{
	flow_ops = ops != NULL ? ops : &rte_ops;
}

enum rule_kind { RULE_ROCE, RULE_ARP, RULE_ND, RULE_DEFAULT };

static const struct {
	uint32_t prio;
	const char *name;
} rule_kinds[] = {
	[RULE_ROCE] = { 0, "RoCEv2" },
	[RULE_ARP] = { 1, "ARP" },
	[RULE_ND] = { 1, "ICMPv6" },
	[RULE_DEFAULT] = { 2, "default" },
};

/* A pattern and the specs and masks it points to. */
struct rule {
	struct rte_flow_item_eth eth, eth_m;
	struct rte_flow_item_vlan vlan, vlan_m;
	struct rte_flow_item_ipv4 ip4, ip4_m;
	struct rte_flow_item_ipv6 ip6, ip6_m;
	struct rte_flow_item_udp udp, udp_m;
	struct rte_flow_item item[6];
	unsigned int n;
};

static void
push(struct rule *r, enum rte_flow_item_type type, const void *spec,
     const void *mask)
{
	r->item[r->n++] = (struct rte_flow_item){
		.type = type, .spec = spec, .mask = mask };
}

/* ETH [/ VLAN] with the ether type after the tag (or the Ethernet one). */
static void
push_l2(const struct uroce_port *p, struct rule *r, uint16_t ether_type)
{
	if (!p->has_vlan) {
		r->eth.hdr.ether_type = rte_cpu_to_be_16(ether_type);
		r->eth_m.hdr.ether_type = RTE_BE16(0xffff);
		push(r, RTE_FLOW_ITEM_TYPE_ETH, &r->eth, &r->eth_m);
		return;
	}
	push(r, RTE_FLOW_ITEM_TYPE_ETH, NULL, NULL);
	r->vlan.hdr.vlan_tci = rte_cpu_to_be_16(p->vlan);
	r->vlan_m.hdr.vlan_tci = RTE_BE16(0x0fff);	/* the VID, any PCP */
	r->vlan.hdr.eth_proto = rte_cpu_to_be_16(ether_type);
	r->vlan_m.hdr.eth_proto = RTE_BE16(0xffff);
	push(r, RTE_FLOW_ITEM_TYPE_VLAN, &r->vlan, &r->vlan_m);
}

static void
pattern(const struct uroce_port *p, struct rule *r, enum rule_kind kind,
	const union uroce_gid *gid)
{
	memset(r, 0, sizeof(*r));
	switch (kind) {
	case RULE_ROCE:
		push_l2(p, r, uroce_gid_is_v4(gid) ? RTE_ETHER_TYPE_IPV4 :
			RTE_ETHER_TYPE_IPV6);
		if (uroce_gid_is_v4(gid)) {
			r->ip4.hdr.dst_addr = uroce_gid_to_v4(gid);
			r->ip4_m.hdr.dst_addr = RTE_BE32(0xffffffff);
			push(r, RTE_FLOW_ITEM_TYPE_IPV4, &r->ip4, &r->ip4_m);
		} else {
			memcpy(r->ip6.hdr.dst_addr, gid->raw, 16);
			memset(r->ip6_m.hdr.dst_addr, 0xff, 16);
			push(r, RTE_FLOW_ITEM_TYPE_IPV6, &r->ip6, &r->ip6_m);
		}
		r->udp.hdr.dst_port = RTE_BE16(UROCE_UDP_PORT);
		r->udp_m.hdr.dst_port = RTE_BE16(0xffff);
		push(r, RTE_FLOW_ITEM_TYPE_UDP, &r->udp, &r->udp_m);
		break;
	case RULE_ARP:
		push_l2(p, r, RTE_ETHER_TYPE_ARP);
		break;
	case RULE_ND:
		push_l2(p, r, RTE_ETHER_TYPE_IPV6);
		r->ip6.hdr.proto = IPPROTO_ICMPV6;
		r->ip6_m.hdr.proto = 0xff;
		push(r, RTE_FLOW_ITEM_TYPE_IPV6, &r->ip6, &r->ip6_m);
		break;
	case RULE_DEFAULT:
		push(r, RTE_FLOW_ITEM_TYPE_ETH, NULL, NULL);
		break;
	}
	push(r, RTE_FLOW_ITEM_TYPE_END, NULL, NULL);
}

/* Create one rule; the target: the stack's queues, queue 0, or exc_q. */
static int
rule_add(struct uroce_port *p, enum rule_kind kind,
	 const union uroce_gid *gid, char *why, size_t len)
{
	const struct rte_flow_attr attr = {
		.ingress = 1, .priority = rule_kinds[kind].prio };
	uint16_t queues[UROCE_GLUE_MAX_QUEUES], q;
	struct rte_flow_action_queue one = {
		.index = kind == RULE_DEFAULT ? p->exc_q : 0 };
	struct rte_flow_action_rss rss = {
		.types = RTE_ETH_RSS_NONFRAG_IPV4_UDP |
			 RTE_ETH_RSS_NONFRAG_IPV6_UDP,
		.queue_num = p->nb_queues, .queue = queues };
	struct rte_flow_action act[2] = {
		{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &one },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow_error fe = { 0 };
	struct rule r;
	struct rte_flow *f;

	if (kind == RULE_ROCE && p->nb_queues > 1) {
		for (q = 0; q < p->nb_queues; q++)
			queues[q] = q;
		act[0] = (struct rte_flow_action){
			.type = RTE_FLOW_ACTION_TYPE_RSS, .conf = &rss };
	}
	pattern(p, &r, kind, gid);
	f = flow_ops->create(p->port_id, &attr, r.item, act, &fe);
	if (f == NULL) {
		snprintf(why, len, "%s rule: %s", rule_kinds[kind].name,
			 fe.message != NULL ? fe.message : "refused");
		return rte_errno > 0 ? -rte_errno : -ENOTSUP;
	}
	p->flows[p->nb_flows++] = f;
	return 0;
}

int
net_steer_start(struct uroce_port *p, char *why, size_t len)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; ret == 0 && i < p->gid_cnt; i++)
		ret = rule_add(p, RULE_ROCE, &p->gid[i], why, len);
	if (ret == 0)
		ret = rule_add(p, RULE_ARP, NULL, why, len);
	if (ret == 0)
		ret = rule_add(p, RULE_ND, NULL, why, len);
	if (ret == 0)
		ret = rule_add(p, RULE_DEFAULT, NULL, why, len);
	if (ret != 0) {
		net_steer_stop(p);
		return ret;
	}
	p->steer_flow = true;
	return 0;
}

void
net_steer_stop(struct uroce_port *p)
{
	struct rte_flow_error fe;

	while (p->nb_flows > 0)
		flow_ops->destroy(p->port_id, p->flows[--p->nb_flows], &fe);
	p->steer_flow = false;
}
