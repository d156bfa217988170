/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_RSS_H
#define UROCE_RSS_H

/**
 * @file
 * Receive-side scaling for RSS QPs (ibv_create_qp_ex(3) with
 * IBV_QP_INIT_ATTR_RX_HASH): the Toeplitz hash of a frame's fields, as a
 * NIC computes it (Microsoft's RSS specification, "RSS hashing types"),
 * which picks the entry of the QP's indirection table.
 *
 * Configuration (struct ibv_rx_hash_conf), checked by uroce_rss_conf_parse():
 *  - rx_hash_function IBV_RX_HASH_FUNC_TOEPLITZ, a key of exactly
 *    UROCE_RSS_KEY_LEN bytes (the length mlx5 takes; it covers the longest
 *    input, 36 bytes of IPv6 addresses and ports);
 *  - rx_hash_fields_mask: any of SRC/DST_IPV4, SRC/DST_IPV6, SRC/DST_PORT_TCP,
 *    SRC/DST_PORT_UDP, not IPv4 and IPv6 fields together, nor TCP and UDP
 *    ports together (as mlx5: one traffic type per RSS QP); 0 hashes
 *    nothing, every frame goes to entry 0.
 * -EINVAL otherwise; -EOPNOTSUPP for IPSEC_SPI and the INNER fields.
 *
 * The input is the selected fields in the order source address,
 * destination address, source port, destination port, each in network
 * order. A field the frame does not carry (an IPv6 frame under IPv4
 * fields, a UDP frame under TCP ports, a fragment after the first) is left
 * out, as a NIC hashes a packet of another type than the one configured
 * over the fields it does have.
 */

#include <stdint.h>

#include <infiniband/verbs.h>

#include "uroce_flow.h"

#ifdef __cplusplus
extern "C" {
#endif

#define UROCE_RSS_KEY_LEN	40

/** The hash fields uroce computes. */
#define UROCE_RSS_FIELDS \
	(IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | \
	 IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6 | \
	 IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP | \
	 IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

/** A checked configuration. */
struct uroce_rss_conf {
	uint32_t key[UROCE_RSS_KEY_LEN / 4];	/**< the key's bytes, aligned */
	uint64_t fields;			/**< IBV_RX_HASH_* */
};

/** Check h. @return 0 and *c, or -EINVAL / -EOPNOTSUPP (file comment). */
int uroce_rss_conf_parse(const struct ibv_rx_hash_conf *h,
			 struct uroce_rss_conf *c);

/**
 * The Toeplitz hash of n bytes at in with the key of c (n at most
 * UROCE_RSS_KEY_LEN - 4).
 */
uint32_t uroce_rss_toeplitz(const struct uroce_rss_conf *c, const uint8_t *in,
			    uint32_t n);

/** The hash of a frame whose fields are k (uroce_flow_key_get()). */
uint32_t uroce_rss_hash(const struct uroce_rss_conf *c,
			const struct uroce_flow_key *k);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_RSS_H */
