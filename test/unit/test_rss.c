/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * RSS (lib/engine/rss.c, uroce_rss.h): the Toeplitz hash against the
 * verification values Microsoft publishes with its RSS specification
 * ("Verifying the RSS Hash Calculation": IPv4 and IPv6, addresses alone
 * and with TCP ports), the fields a configuration selects (a frame of
 * another type hashes over what it has), and the configuration's errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "uroce_rss.h"
#include "uroce_test.h"
#include "uroce_test_frame.h"

static uint8_t ms_key[UROCE_RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

struct vec {
	const char *dst, *src;
	uint16_t dport, sport;
	uint32_t ip_only, with_tcp;
};

static const struct vec v4[] = {
	{ "161.142.100.80", "66.9.149.187", 1766, 2794, 0x323e8fc2, 0x51ccc178 },
	{ "65.69.140.83", "199.92.111.2", 4739, 14230, 0xd718262a, 0xc626b0ea },
	{ "12.22.207.184", "24.19.198.95", 38024, 12898, 0xd2d0a5de, 0x5c2b394a },
	{ "209.142.163.6", "38.27.205.30", 2217, 48228, 0x82989176, 0xafc7327f },
	{ "202.188.127.2", "153.39.163.191", 1303, 44251, 0x5d1809c5, 0x10e828a2 },
};

static const struct vec v6[] = {
	{ "3ffe:2501:200:3::1", "3ffe:2501:200:1fff::7", 1766, 2794,
	  0x2cc18cd5, 0x40207d3d },
	{ "ff02::1", "3ffe:501:8::260:97ff:fe40:efab", 4739, 14230,
	  0x0f0c461c, 0xdde51bbf },
	{ "fe80::200:f8ff:fe21:67cf", "3ffe:1900:4545:3:200:f8ff:fe21:67cf",
	  38024, 44251, 0x4b61e985, 0x02d1feef },
};

static struct uroce_rss_conf
conf(uint64_t fields)
{
	struct ibv_rx_hash_conf h = {
		.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
		.rx_hash_key_len = UROCE_RSS_KEY_LEN,
		.rx_hash_key = ms_key,
		.rx_hash_fields_mask = fields,
	};
	struct uroce_rss_conf c;

	memset(&c, 0, sizeof(c));
	UT_CHECK_EQ(uroce_rss_conf_parse(&h, &c), 0);
	return c;
}

static struct uroce_flow_key
key_of(const struct vec *v, int ver)
{
	struct uroce_flow_key k;

	memset(&k, 0, sizeof(k));
	k.eth = true;
	k.ip_ver = (uint8_t)ver;
	if (ver == 4) {
		inet_pton(AF_INET, v->src, &k.ip.src_ip);
		inet_pton(AF_INET, v->dst, &k.ip.dst_ip);
	} else {
		inet_pton(AF_INET6, v->src, k.ip6.src_ip);
		inet_pton(AF_INET6, v->dst, k.ip6.dst_ip);
	}
	k.has_l4 = true;
	k.l4_proto = 6;
	k.l4.src_port = htons(v->sport);
	k.l4.dst_port = htons(v->dport);
	return k;
}

#define IP4	(IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4)
#define IP6	(IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6)
#define TCP	(IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP)
#define UDP	(IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

static void
check_vectors(void)
{
	struct uroce_rss_conf a4 = conf(IP4), t4 = conf(IP4 | TCP);
	struct uroce_rss_conf a6 = conf(IP6), t6 = conf(IP6 | TCP);
	struct uroce_flow_key k;
	size_t i;

	for (i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		k = key_of(&v4[i], 4);
		UT_CHECK_EQ(uroce_rss_hash(&a4, &k), v4[i].ip_only);
		UT_CHECK_EQ(uroce_rss_hash(&t4, &k), v4[i].with_tcp);
		/* UDP ports are not TCP's: a TCP frame hashes its addresses. */
		UT_CHECK_EQ(uroce_rss_hash(&(struct uroce_rss_conf){ 0 }, &k), 0);
	}
	for (i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		k = key_of(&v6[i], 6);
		UT_CHECK_EQ(uroce_rss_hash(&a6, &k), v6[i].ip_only);
		UT_CHECK_EQ(uroce_rss_hash(&t6, &k), v6[i].with_tcp);
	}
	UT_NOTE("Microsoft's verification values, IPv4 and IPv6");
}

/* A frame parsed by the flow code hashes as its fields. */
static void
check_frames(void)
{
	struct ut_frame fr = {
		.vlan = -1, .ip = 4, .proto = 17, .len = 80,
		.sip = 0x420995bb, .dip = 0xa18e6450,	/* v4[0] */
		.sport = 2794, .dport = 1766,
	};
	struct uroce_rss_conf u4 = conf(IP4 | UDP), t4 = conf(IP4 | TCP);
	struct uroce_rss_conf a4 = conf(IP4);
	struct uroce_flow_key k;
	uint8_t buf[128];

	uroce_flow_key_get(buf, ut_frame_build(&fr, buf, 1), &k);
	UT_CHECK_EQ(uroce_rss_hash(&u4, &k), v4[0].with_tcp);
	UT_CHECK_EQ(uroce_rss_hash(&t4, &k), v4[0].ip_only);
	fr.frag_off = 3;		/* a later fragment: no ports */
	uroce_flow_key_get(buf, ut_frame_build(&fr, buf, 1), &k);
	UT_CHECK_EQ(uroce_rss_hash(&u4, &k), v4[0].ip_only);
	fr.frag_off = 0;
	fr.ip = 6;			/* IPv6 under IPv4 fields: ports only */
	uroce_flow_key_get(buf, ut_frame_build(&fr, buf, 1), &k);
	UT_CHECK(uroce_rss_hash(&u4, &k) != 0);
	UT_CHECK_EQ(uroce_rss_hash(&a4, &k), 0);
	UT_NOTE("fields from frames");
}

static void
check_conf_errors(void)
{
	struct ibv_rx_hash_conf h = {
		.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
		.rx_hash_key_len = UROCE_RSS_KEY_LEN,
		.rx_hash_key = ms_key,
		.rx_hash_fields_mask = IP4 | UDP,
	};
	struct uroce_rss_conf c;

	UT_CHECK_EQ(uroce_rss_conf_parse(&h, &c), 0);
	UT_CHECK_EQ(c.fields, IP4 | UDP);
	UT_CHECK_MEM(c.key, ms_key, UROCE_RSS_KEY_LEN);
	h.rx_hash_key_len = 20;
	UT_CHECK_EQ(uroce_rss_conf_parse(&h, &c), -EINVAL);
	h.rx_hash_key_len = UROCE_RSS_KEY_LEN;
	h.rx_hash_function = 2;
	UT_CHECK_EQ(uroce_rss_conf_parse(&h, &c), -EINVAL);
	h.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	h.rx_hash_fields_mask = IP4 | IBV_RX_HASH_SRC_IPV6;
	UT_CHECK_EQ(uroce_rss_conf_parse(&h, &c), -EINVAL);
	h.rx_hash_fields_mask = TCP | IBV_RX_HASH_DST_PORT_UDP;
	UT_CHECK_EQ(uroce_rss_conf_parse(&h, &c), -EINVAL);
	h.rx_hash_fields_mask = IP4 | IBV_RX_HASH_INNER;
	UT_CHECK_EQ(uroce_rss_conf_parse(&h, &c), -EOPNOTSUPP);
	h.rx_hash_fields_mask = IBV_RX_HASH_IPSEC_SPI;
	UT_CHECK_EQ(uroce_rss_conf_parse(&h, &c), -EOPNOTSUPP);
	h.rx_hash_fields_mask = 1u << 20;
	UT_CHECK_EQ(uroce_rss_conf_parse(&h, &c), -EINVAL);
	h.rx_hash_fields_mask = IP4;
	h.rx_hash_key = NULL;
	UT_CHECK_EQ(uroce_rss_conf_parse(&h, &c), -EINVAL);
	UT_NOTE("configuration errors");
}

int
main(void)
{
	check_vectors();
	check_frames();
	check_conf_errors();
	return ut_summary();
}
