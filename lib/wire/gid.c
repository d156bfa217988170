/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * GIDs of RoCEv2 are IP addresses: IPv6 as they are, IPv4 as the
 * IPv4-mapped IPv6 address ::ffff:a.b.c.d (IBTA A17.8, RFC 4291 2.5.5.2).
 */
#include <string.h>

#include "uroce_wire.h"

uint16_t
uroce_wire_udp_sport(uint32_t src_qpn, uint32_t dst_qpn)
{
	uint64_t v = ((uint64_t)(src_qpn & UROCE_QPN_MASK) << 24) |
		     (dst_qpn & UROCE_QPN_MASK);
	uint32_t h;

	v *= UINT64_C(0x9e3779b97f4a7c15);
	h = (uint32_t)(v >> 32) ^ (uint32_t)v;
	h ^= h >> 14;
	return (uint16_t)(UROCE_UDP_SPORT_MIN | (h & 0x3fff));
}

/*
 * The IP TOS / IPv6 traffic class byte for a GRH traffic class: DSCP (the
 * upper six bits) as given, as RoCE NICs map it (A17.4.3: the GRH's
 * TClass becomes the IP header's). ECN (the lower two) is Not-ECT: only a
 * sender that slows down on congestion marks may send ECT (RFC 3168 5,
 * A17.9), which a path with congestion control asks for per frame
 * (uroce_l2l3.ect, uroce_wire_frame_tclass()); CE is a switch's mark,
 * never a sender's.
 */
uint8_t
uroce_wire_tclass(uint8_t grh_tclass)
{
	return grh_tclass & (uint8_t)~UROCE_ECN_MASK;
}
