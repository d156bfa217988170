/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Helpers for the port tests over real links (memif, af_packet): a config
 * with one port, RoCEv2 frames with a PSN and seeded payload, bounded
 * polling. Every loop is bounded and sleeps between empty polls, so that
 * two test processes never spin on the two cores.
 */
#ifndef UROCE_PORT_HELPERS_H
#define UROCE_PORT_HELPERS_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "uroce_config.h"
#include "uroce_port.h"
#include "uroce_test.h"
#include "uroce_test_port.h"
#include "uroce_wire.h"

#define PH_POLL_US	200		/* sleep after an empty poll */

static inline void
ph_port_cfg(struct uroce_config *cfg, unsigned int idx, const char *dev,
	    const char *ip, uint16_t mtu)
{
	ut_port_cfg(cfg, idx, dev, ip);
	cfg->port[idx].mtu = mtu;
}

static inline union uroce_gid
ph_gid4(const char *ip)
{
	union uroce_gid g;
	rte_be32_t a;

	inet_pton(AF_INET, ip, &a);
	uroce_gid_from_v4(&g, a);
	return g;
}

/* The payload of frame psn: the same bytes on both sides for a seed. */
static inline void
ph_payload(uint32_t psn, uint8_t *buf, uint32_t len)
{
	uint64_t s = psn * 0x9e3779b97f4a7c15ull + 1;
	uint32_t i;

	for (i = 0; i < len; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		buf[i] = (uint8_t)s;
	}
}

/* An RC SEND ONLY frame from p to (dmac, dip), PSN psn, plen bytes. */
static inline struct rte_mbuf *
ph_frame(struct uroce_port *p, const struct rte_ether_addr *dmac,
	 const union uroce_gid *dgid, uint32_t psn, uint32_t plen)
{
	static uint8_t payload[UROCE_CONFIG_MTU_MAX];
	struct uroce_l2l3 l = { .hop_limit = 64 };
	struct uroce_bth_fields bth = { .opcode = UROCE_OPC_RC_SEND_ONLY,
					.pkey = 0xffff, .dqpn = 17, .psn = psn };
	struct uroce_ext_fields ext = { 0 };
	struct rte_mbuf *m = rte_pktmbuf_alloc(uroce_port_pool(p));
	uint32_t len;
	uint8_t *d;

	if (m == NULL)
		return NULL;
	memcpy(l.smac, uroce_port_mac(p), 6);
	memcpy(l.dmac, dmac, 6);
	uroce_port_gids(p, &l.sgid, 1);
	l.dgid = *dgid;
	l.udp_sport = uroce_wire_udp_sport(17, 18);
	ph_payload(psn, payload, plen);
	len = uroce_wire_hdrs_len(&l, bth.opcode) + plen +
	      uroce_wire_trailer_len(plen);
	d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	if (d == NULL || uroce_wire_build(d, len, &l, &bth, &ext, payload,
					  plen) != len) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	return m;
}

/* Whether m is a good RC SEND ONLY whose payload is ph_payload(psn). */
static inline bool
ph_frame_ok(const struct rte_mbuf *m, uint32_t *psn)
{
	static uint8_t want[UROCE_CONFIG_MTU_MAX];
	struct uroce_pkt pkt;

	if (m->nb_segs != 1 ||
	    uroce_wire_parse(rte_pktmbuf_mtod(m, const uint8_t *),
			     rte_pktmbuf_pkt_len(m), 0, &pkt) != UROCE_WIRE_OK)
		return false;
	*psn = pkt.bth.psn;
	ph_payload(pkt.bth.psn, want, pkt.payload_len);
	return memcmp(uroce_pkt_payload(&pkt), want, pkt.payload_len) == 0;
}

/* Poll rx (and ARP retries) on the ports until resolve answers or the
 * bound passes; an unanswered round (-EHOSTUNREACH: the peer may not run
 * yet) starts another. */
static inline int
ph_resolve(struct uroce_port *p, struct uroce_port *peer,
	   const union uroce_gid *gid, struct rte_ether_addr *mac,
	   unsigned int max_polls)
{
	struct rte_mbuf *pk[32];
	unsigned int i;
	uint16_t k;
	int ret = -EAGAIN;

	for (i = 0; i < max_polls; i++) {
		ret = uroce_port_resolve(p, gid, mac);
		if (ret != -EAGAIN && ret != -EHOSTUNREACH)
			return ret;
		uroce_port_poll_ctrl(p, 0, rte_rdtsc());
		k = uroce_port_rx(p, 0, pk, 32);
		rte_pktmbuf_free_bulk(pk, k);
		if (peer != NULL) {
			k = uroce_port_rx(peer, 0, pk, 32);
			rte_pktmbuf_free_bulk(pk, k);
		}
		usleep(PH_POLL_US);
	}
	return ret;
}

#endif /* UROCE_PORT_HELPERS_H */
