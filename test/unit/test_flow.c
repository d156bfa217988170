/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Flow rules (lib/engine/flow_rule.c, ibv_create_flow(3)): every malformed
 * or unsupported attr is refused with its errno and leaves the output
 * untouched; frames built by hand (uroce_test_frame.h) match exactly the
 * rules they should: MAC, ether_type, VLAN, IPv4 and IPv6 headers, TCP/UDP ports,
 * partial masks, fragments, IPv6, runts, and the DEFAULT kinds; the order.
 */
#include <errno.h>
#include <string.h>

#include "uroce_flow.h"
#include "uroce_test.h"
#include "uroce_test_frame.h"

static const uint8_t mac_b[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0b };
static const uint8_t mac_c[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0c };
static const uint8_t mac_a[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a };

/* Parse f; on failure check that r was not written. */
static int
parse(const struct ut_flow *f, struct uroce_flow_rule *r)
{
	struct uroce_flow_rule sentinel;
	int ret;

	memset(r, 0xa5, sizeof(*r));
	memset(&sentinel, 0xa5, sizeof(sentinel));
	ret = uroce_flow_rule_parse(&f->attr, r);
	if (ret != 0)
		UT_CHECK_MEM(r, &sentinel, sizeof(*r));
	return ret;
}

static void
check_parse_errors(void)
{
	struct uroce_flow_rule r;
	struct ut_flow f;
	struct ibv_flow_spec_eth eth;

	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_eth(&f, mac_b, 0, -1);
	ut_flow_ipv4(&f, 0, 0x0a000002);
	ut_flow_l4(&f, false, 0, 5000);
	UT_CHECK_EQ(parse(&f, &r), 0);
	UT_CHECK_EQ(r.specs, UROCE_FLOW_ETH | UROCE_FLOW_IPV4 | UROCE_FLOW_UDP);
	UT_CHECK_MEM(r.eth.dst_mac, mac_b, 6);
	UT_CHECK_EQ(r.ip.dst_ip, htobe32(0x0a000002));
	UT_CHECK_EQ(r.l4.dst_port, htobe16(5000));

	f.attr.comp_mask = 1;
	UT_CHECK_EQ(parse(&f, &r), -EINVAL);
	f.attr.comp_mask = 0;
	f.attr.port = 2;
	UT_CHECK_EQ(parse(&f, &r), -EINVAL);
	f.attr.port = 1;
	/* attr.size is not read (rdma-core's libibverbs does not read it):
	 * pyverbs leaves it at sizeof(struct ibv_flow_attr), others give
	 * more or less than the specs; the specs decide. */
	{
		const uint16_t sizes[] = {
			(uint16_t)sizeof(f.attr), (uint16_t)(f.attr.size + 4),
			(uint16_t)(f.attr.size - 8),
			(uint16_t)(sizeof(f.attr) - 1), 0,
		};
		unsigned int k;

		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			f.attr.size = sizes[k];
			memset(&r, 0, sizeof(r));
			UT_CHECK_EQ(parse(&f, &r), 0);
			UT_CHECK_EQ(r.specs, UROCE_FLOW_ETH | UROCE_FLOW_IPV4 |
				    UROCE_FLOW_UDP);
			UT_CHECK_EQ(r.l4.dst_port, htobe16(5000));
		}
	}
	f.attr.num_of_specs = 4;	/* more than follow: zeros, no spec */
	UT_CHECK_EQ(parse(&f, &r), -EINVAL);
	f.attr.num_of_specs = 2;	/* fewer: the first two only */
	UT_CHECK_EQ(parse(&f, &r), 0);
	UT_CHECK_EQ(r.specs, UROCE_FLOW_ETH | UROCE_FLOW_IPV4);
	f.attr.num_of_specs = 3;
	f.attr.flags = 0x100;
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	f.attr.flags = 0x100;		/* unknown flag */
	UT_CHECK_EQ(parse(&f, &r), -EINVAL);
	f.attr.flags = IBV_FLOW_ATTR_FLAGS_DONT_TRAP;
	UT_CHECK_EQ(parse(&f, &r), -EOPNOTSUPP);
	f.attr.flags = IBV_FLOW_ATTR_FLAGS_EGRESS;
	UT_CHECK_EQ(parse(&f, &r), -EOPNOTSUPP);
	f.attr.flags = 0;
	f.attr.type = IBV_FLOW_ATTR_SNIFFER;
	UT_CHECK_EQ(parse(&f, &r), -EOPNOTSUPP);
	f.attr.type = (enum ibv_flow_attr_type)9;
	UT_CHECK_EQ(parse(&f, &r), -EINVAL);
	/* No specs: NORMAL matches all, DEFAULT kinds take none. */
	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	UT_CHECK_EQ(parse(&f, &r), 0);
	UT_CHECK_EQ(r.specs, 0);
	ut_flow_init(&f, IBV_FLOW_ATTR_ALL_DEFAULT, 0);
	UT_CHECK_EQ(parse(&f, &r), 0);
	f.attr.size = 0;
	UT_CHECK_EQ(parse(&f, &r), 0);
	ut_flow_init(&f, IBV_FLOW_ATTR_ALL_DEFAULT, 0);
	ut_flow_eth(&f, mac_b, 0, -1);
	UT_CHECK_EQ(parse(&f, &r), -EINVAL);
	ut_flow_init(&f, IBV_FLOW_ATTR_MC_DEFAULT, 0);
	UT_CHECK_EQ(parse(&f, &r), 0);
	ut_flow_l4(&f, true, 0, 1);
	UT_CHECK_EQ(parse(&f, &r), -EINVAL);

	/* Spec errors. */
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_eth(&f, mac_b, 0, -1);
	ut_flow_eth(&f, mac_c, 0, -1);
	UT_CHECK_EQ(parse(&f, &r), -EINVAL);	/* ETH twice */
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_l4(&f, true, 0, 1);
	ut_flow_l4(&f, false, 0, 1);
	UT_CHECK_EQ(parse(&f, &r), -EINVAL);	/* TCP and UDP */
	memset(&eth, 0, sizeof(eth));
	eth.type = IBV_FLOW_SPEC_ETH;
	eth.size = sizeof(eth) - 2;		/* not its type's size */
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_add(&f, &eth, sizeof(eth) - 2);
	UT_CHECK_EQ(parse(&f, &r), -EINVAL);
	eth.size = 2;				/* shorter than a header */
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_add(&f, &eth, sizeof(eth));
	UT_CHECK_EQ(parse(&f, &r), -EINVAL);
	eth.size = sizeof(eth);
	eth.type = (enum ibv_flow_spec_type)0x77;	/* unknown */
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_add(&f, &eth, sizeof(eth));
	UT_CHECK_EQ(parse(&f, &r), -EINVAL);
	eth.type = IBV_FLOW_SPEC_ESP;		/* known, not built */
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_add(&f, &eth, sizeof(eth));
	UT_CHECK_EQ(parse(&f, &r), -EOPNOTSUPP);
	eth.type = IBV_FLOW_SPEC_ETH | IBV_FLOW_SPEC_INNER;
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_add(&f, &eth, sizeof(eth));
	UT_CHECK_EQ(parse(&f, &r), -EOPNOTSUPP);
	eth.type = IBV_FLOW_SPEC_ACTION_DROP;
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_add(&f, &eth, sizeof(eth));
	UT_CHECK_EQ(parse(&f, &r), -EOPNOTSUPP);
	UT_CHECK_EQ(uroce_flow_rule_parse(NULL, &r), -EINVAL);
	UT_NOTE("parse errors");
}

/* Whether the rule of f takes the frame fr. */
static bool
takes(const struct ut_flow *f, const struct ut_frame *fr)
{
	struct uroce_flow_rule r;
	struct uroce_flow_key k;
	uint8_t buf[2048];
	uint32_t len = ut_frame_build(fr, buf, 3);

	if (!UT_CHECK_EQ(uroce_flow_rule_parse(&f->attr, &r), 0))
		return false;
	uroce_flow_key_get(buf, len, &k);
	return uroce_flow_rule_match(&r, &k);
}

static struct ut_frame
udp4(const uint8_t *dmac, uint32_t dip, uint16_t dport)
{
	struct ut_frame fr = {
		.vlan = -1, .ip = 4, .sip = 0x0a000001, .dip = dip,
		.proto = 17, .sport = 1234, .dport = dport, .len = 100,
	};

	memcpy(fr.dmac, dmac, 6);
	memcpy(fr.smac, mac_a, 6);
	return fr;
}

static void
check_match(void)
{
	struct ut_frame fr = udp4(mac_b, 0x0a000002, 5000);
	struct ibv_flow_spec_eth eth;
	struct ut_flow f;

	/* dst MAC */
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_eth(&f, mac_b, 0, -1);
	UT_CHECK(takes(&f, &fr));
	fr.dmac[5] = 0x0c;
	UT_CHECK(!takes(&f, &fr));
	/* a partial mask: only the first byte of the MAC counts */
	memset(&eth, 0, sizeof(eth));
	eth.type = IBV_FLOW_SPEC_ETH;
	eth.size = sizeof(eth);
	eth.val.dst_mac[0] = 0x02;
	eth.val.dst_mac[5] = 0x77;	/* outside the mask: ignored */
	eth.mask.dst_mac[0] = 0xff;
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_add(&f, &eth, sizeof(eth));
	UT_CHECK(takes(&f, &fr));
	fr.dmac[0] = 0x03;
	UT_CHECK(!takes(&f, &fr));
	fr = udp4(mac_b, 0x0a000002, 5000);

	/* ether_type, after a VLAN tag too */
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_eth(&f, NULL, 0x0800, -1);
	UT_CHECK(takes(&f, &fr));
	fr.vlan = 5;
	UT_CHECK(takes(&f, &fr));
	fr.ip = 0;
	fr.ether_type = 0x88b5;
	UT_CHECK(!takes(&f, &fr));
	fr = udp4(mac_b, 0x0a000002, 5000);
	/* VLAN id: untagged or another id do not match */
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_eth(&f, mac_b, 0, 5);
	UT_CHECK(!takes(&f, &fr));
	fr.vlan = 5 | (3 << 13);	/* PCP outside the mask */
	UT_CHECK(takes(&f, &fr));
	fr.vlan = 6;
	UT_CHECK(!takes(&f, &fr));
	fr = udp4(mac_b, 0x0a000002, 5000);

	/* IPv4 addresses */
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_ipv4(&f, 0x0a000001, 0x0a000002);
	UT_CHECK(takes(&f, &fr));
	fr.sip = 0x0a000009;
	UT_CHECK(!takes(&f, &fr));
	fr = udp4(mac_b, 0x0a000003, 5000);
	UT_CHECK(!takes(&f, &fr));
	fr.ip = 6;
	fr.dip = 0x0a000002;
	UT_CHECK(!takes(&f, &fr));		/* IPv6 is not IPv4 */
	fr = udp4(mac_b, 0x0a000002, 5000);

	/* IPV4_EXT: protocol and TTL (perftest's raw_ethernet_* use it) */
	{
		struct ibv_flow_spec_ipv4_ext x;
		struct uroce_flow_rule r;

		memset(&x, 0, sizeof(x));
		x.type = IBV_FLOW_SPEC_IPV4_EXT;
		x.size = sizeof(x);
		x.val.dst_ip = htobe32(0x0a000002);
		x.mask.dst_ip = 0xffffffff;
		x.val.proto = 17;
		x.mask.proto = 0xff;
		x.val.ttl = 64;
		x.mask.ttl = 0xff;
		ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
		ut_flow_add(&f, &x, sizeof(x));
		UT_CHECK(takes(&f, &fr));
		fr.proto = 6;
		UT_CHECK(!takes(&f, &fr));
		fr.proto = 17;
		x.val.ttl = 63;
		ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
		ut_flow_add(&f, &x, sizeof(x));
		UT_CHECK(!takes(&f, &fr));
		ut_flow_ipv4(&f, 0, 0x0a000002);	/* IPV4 and IPV4_EXT */
		UT_CHECK_EQ(parse(&f, &r), -EINVAL);
	}

	/* IPv6 addresses, next header, traffic class, flow label */
	{
		struct ibv_flow_spec_ipv6 x;
		struct uroce_flow_rule r;
		uint8_t buf[256];
		struct uroce_flow_key k;
		uint32_t len;

		fr.ip = 6;
		fr.proto = 6;
		ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
		ut_flow_eth(&f, NULL, 0x86dd, -1);
		ut_flow_ipv6(&f, 0x0a000001, 0x0a000002, 6);
		ut_flow_l4(&f, true, 1234, 5000);
		UT_CHECK(takes(&f, &fr));
		fr.dip = 0x0a000003;
		UT_CHECK(!takes(&f, &fr));		/* another address */
		fr.dip = 0x0a000002;
		fr.proto = 17;
		UT_CHECK(!takes(&f, &fr));		/* next header */
		fr.proto = 6;
		fr.ip = 4;
		UT_CHECK(!takes(&f, &fr));		/* IPv4 is not IPv6 */
		ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
		ut_flow_ipv4(&f, 0, 0x0a000002);
		ut_flow_ipv6(&f, 0, 0x0a000002, 0);
		UT_CHECK_EQ(parse(&f, &r), -EINVAL);	/* IPv4 and IPv6 */
		/* The header's other fields: traffic class 0x12, flow label
		 * 0x34567 (network order in the filter). */
		fr.ip = 6;
		len = ut_frame_build(&fr, buf, 1);
		ut_put32(buf + 14, 0x61234567);
		uroce_flow_key_get(buf, len, &k);
		memset(&x, 0, sizeof(x));
		x.type = IBV_FLOW_SPEC_IPV6;
		x.size = sizeof(x);
		x.val.traffic_class = 0x12;
		x.mask.traffic_class = 0xff;
		x.val.flow_label = htobe32(0x34567);
		x.mask.flow_label = htobe32(0xfffff);
		x.val.hop_limit = 64;
		x.mask.hop_limit = 0xff;
		ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
		ut_flow_add(&f, &x, sizeof(x));
		UT_CHECK_EQ(parse(&f, &r), 0);
		UT_CHECK(uroce_flow_rule_match(&r, &k));
		r.ip6.flow_label = htobe32(0x34566);
		UT_CHECK(!uroce_flow_rule_match(&r, &k));
		r.ip6.flow_label = htobe32(0x34567);
		r.ip6.traffic_class = 0x13;
		UT_CHECK(!uroce_flow_rule_match(&r, &k));
		fr = udp4(mac_b, 0x0a000002, 5000);
	}

	/* UDP/TCP ports and protocol */
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_l4(&f, false, 1234, 5000);
	UT_CHECK(takes(&f, &fr));
	fr.ip = 6;
	UT_CHECK(takes(&f, &fr));		/* UDP over IPv6 too */
	fr.ip = 4;
	fr.proto = 6;
	UT_CHECK(!takes(&f, &fr));		/* TCP is not UDP */
	fr.proto = 17;
	fr.dport = 5001;
	UT_CHECK(!takes(&f, &fr));
	fr.dport = 5000;
	fr.frag_off = 10;			/* not the first fragment */
	UT_CHECK(!takes(&f, &fr));
	fr = udp4(mac_b, 0x0a000002, 80);
	fr.proto = 6;
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	ut_flow_eth(&f, mac_b, 0, -1);
	ut_flow_ipv4(&f, 0, 0x0a000002);
	ut_flow_l4(&f, true, 0, 80);
	UT_CHECK(takes(&f, &fr));
	fr.len = 14 + 20 + 2;			/* ports cut short */
	UT_CHECK(!takes(&f, &fr));

	/* No specs: every Ethernet frame; a runt matches nothing. */
	fr = udp4(mac_c, 1, 2);
	ut_flow_init(&f, IBV_FLOW_ATTR_NORMAL, 0);
	UT_CHECK(takes(&f, &fr));
	fr.ip = 0;
	fr.len = 13;
	UT_CHECK(!takes(&f, &fr));
	fr.len = 14;
	UT_CHECK(takes(&f, &fr));

	/* DEFAULT kinds */
	fr = udp4(mac_c, 1, 2);
	ut_flow_init(&f, IBV_FLOW_ATTR_ALL_DEFAULT, 0);
	UT_CHECK(takes(&f, &fr));
	ut_flow_init(&f, IBV_FLOW_ATTR_MC_DEFAULT, 0);
	UT_CHECK(!takes(&f, &fr));
	fr.dmac[0] = 0x01;			/* group address */
	UT_CHECK(takes(&f, &fr));
	UT_NOTE("match");
}

static void
check_order(void)
{
	struct uroce_flow_rule n0, n9, mc, all;

	memset(&n0, 0, sizeof(n0));
	n9 = mc = all = n0;
	n0.type = n9.type = IBV_FLOW_ATTR_NORMAL;
	n9.priority = 9;
	mc.type = IBV_FLOW_ATTR_MC_DEFAULT;
	all.type = IBV_FLOW_ATTR_ALL_DEFAULT;
	UT_CHECK(uroce_flow_rule_cmp(&n0, &n9) < 0);
	UT_CHECK(uroce_flow_rule_cmp(&n9, &n0) > 0);
	UT_CHECK_EQ(uroce_flow_rule_cmp(&n9, &n9), 0);
	n9.priority = 0xffff;
	UT_CHECK(uroce_flow_rule_cmp(&n9, &mc) < 0);
	UT_CHECK(uroce_flow_rule_cmp(&mc, &all) < 0);
	UT_CHECK(uroce_flow_rule_cmp(&all, &n0) > 0);
	UT_NOTE("order");
}

int
main(void)
{
	check_parse_errors();
	check_match();
	check_order();
	return ut_summary();
}
