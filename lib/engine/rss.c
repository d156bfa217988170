/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * RSS: the hash configuration of an RSS QP and the Toeplitz hash of a
 * frame's fields (uroce_rss.h). Pure functions over a parsed frame
 * (uroce_flow_key_get()); the unit tests check them against Microsoft's
 * published RSS verification values.
 */
#include <errno.h>
#include <string.h>
#include <netinet/in.h>

#include <rte_thash.h>

#include "uroce_rss.h"

/* Fields that do not go together: one traffic type per QP (as mlx5). */
static const uint64_t rss_excl[][2] = {
	{ IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4,
	  IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6 },
	{ IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP,
	  IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP },
};

int
uroce_rss_conf_parse(const struct ibv_rx_hash_conf *h,
		     struct uroce_rss_conf *c)
{
	size_t i;

	if (h == NULL || c == NULL ||
	    h->rx_hash_function != IBV_RX_HASH_FUNC_TOEPLITZ ||
	    h->rx_hash_key_len != UROCE_RSS_KEY_LEN || h->rx_hash_key == NULL)
		return -EINVAL;
	if (h->rx_hash_fields_mask & ~(uint64_t)UROCE_RSS_FIELDS)
		return (h->rx_hash_fields_mask &
			(IBV_RX_HASH_IPSEC_SPI | IBV_RX_HASH_INNER)) ?
		       -EOPNOTSUPP : -EINVAL;
	for (i = 0; i < RTE_DIM(rss_excl); i++)
		if ((h->rx_hash_fields_mask & rss_excl[i][0]) &&
		    (h->rx_hash_fields_mask & rss_excl[i][1]))
			return -EINVAL;
	memcpy(c->key, h->rx_hash_key, UROCE_RSS_KEY_LEN);
	c->fields = h->rx_hash_fields_mask;
	return 0;
}

uint32_t
uroce_rss_toeplitz(const struct uroce_rss_conf *c, const uint8_t *in,
		   uint32_t n)
{
	uint32_t words[UROCE_RSS_KEY_LEN / 4 - 1] = { 0 };
	uint32_t i;

	/* rte_softrss() takes the input as host-order 32-bit words; zero
	 * bits past the end add nothing to a Toeplitz hash. */
	n = RTE_MIN(n, (uint32_t)sizeof(words));
	for (i = 0; i < n; i++)
		words[i / 4] |= (uint32_t)in[i] << (24 - 8 * (i % 4));
	return rte_softrss(words, (n + 3) / 4, (const uint8_t *)c->key);
}

/* Append len bytes at src to the input when sel has a bit of mask. */
static uint32_t
put(uint8_t *in, uint32_t n, uint64_t sel, uint64_t mask, const void *src,
    uint32_t len)
{
	if (!(sel & mask))
		return n;
	memcpy(in + n, src, len);
	return n + len;
}

uint32_t
uroce_rss_hash(const struct uroce_rss_conf *c, const struct uroce_flow_key *k)
{
	uint8_t in[UROCE_RSS_KEY_LEN];
	uint64_t f = c->fields;
	uint32_t n = 0;

	if (k->ip_ver == 4) {
		n = put(in, n, f, IBV_RX_HASH_SRC_IPV4, &k->ip.src_ip, 4);
		n = put(in, n, f, IBV_RX_HASH_DST_IPV4, &k->ip.dst_ip, 4);
	} else if (k->ip_ver == 6) {
		n = put(in, n, f, IBV_RX_HASH_SRC_IPV6, k->ip6.src_ip, 16);
		n = put(in, n, f, IBV_RX_HASH_DST_IPV6, k->ip6.dst_ip, 16);
	}
	if (k->has_l4 && k->l4_proto == IPPROTO_TCP) {
		n = put(in, n, f, IBV_RX_HASH_SRC_PORT_TCP, &k->l4.src_port, 2);
		n = put(in, n, f, IBV_RX_HASH_DST_PORT_TCP, &k->l4.dst_port, 2);
	} else if (k->has_l4 && k->l4_proto == IPPROTO_UDP) {
		n = put(in, n, f, IBV_RX_HASH_SRC_PORT_UDP, &k->l4.src_port, 2);
		n = put(in, n, f, IBV_RX_HASH_DST_PORT_UDP, &k->l4.dst_port, 2);
	}
	return uroce_rss_toeplitz(c, in, n);
}
