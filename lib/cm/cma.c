/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The RDMA CM IP layer over the IB CM (IBTA annex A11, as Linux's rdma_cm
 * puts it on the wire): service IDs 0x0000000001000000 | port space << 16 |
 * port, and the 36-byte CMA header that opens a REQ's or SIDR_REQ's private
 * data: version 0x00, IP version in the high nibble, source port, source
 * and destination address (16 bytes each, IPv4 in the last 4).
 */

#include <errno.h>
#include <string.h>

#include "cm_priv.h"

#define CMA_OFF_VERSION		0
#define CMA_OFF_IP_VERSION	1
#define CMA_OFF_PORT		2
#define CMA_OFF_SRC		4
#define CMA_OFF_DST		20
#define CMA_IPV4_OFF		12	/* an IPv4 address: last 4 of 16 bytes */

_Static_assert(CMA_OFF_DST + 16 == UROCE_CMA_HDR_LEN, "CMA header is 36 bytes");

#define SID_PREFIX_MASK		0xffffffffff000000ull

/* Linux's cma_get_service_id(): ps << 16 | port. The RDMA IP port spaces
 * are 0x01xx, so the result carries annex A11's prefix 0x0000000001. */
uint64_t
uroce_cma_service_id(uint16_t ps, uint16_t port)
{
	return (uint64_t)ps << 16 | port;
}

int
uroce_cma_service_parse(uint64_t sid, uint16_t *ps, uint16_t *port)
{
	if ((sid & SID_PREFIX_MASK) != UROCE_CMA_SERVICE_PREFIX)
		return -EINVAL;
	*ps = (uint16_t)(sid >> 16);
	*port = (uint16_t)sid;
	return 0;
}

/* User data limits of the kernel's rdma_cm (IB_CM_*_PRIVATE_DATA_SIZE, the
 * CMA header taken off the REQ and SIDR_REQ). */
size_t
uroce_cma_user_max(uint16_t attr)
{
	switch (attr) {
	case UROCE_CM_ATTR_REQ:
		return UROCE_CMA_REQ_USER_MAX;
	case UROCE_CM_ATTR_SIDR_REQ:
		return UROCE_CMA_SIDR_REQ_USER_MAX;
	default:
		return uroce_cm_priv_len(attr);
	}
}

static bool
has_cma_hdr(uint16_t attr)
{
	return attr == UROCE_CM_ATTR_REQ || attr == UROCE_CM_ATTR_SIDR_REQ;
}

static void
cma_hdr_put(uint8_t *p, const struct uroce_cma_hdr *h)
{
	memset(p, 0, UROCE_CMA_HDR_LEN);
	p[CMA_OFF_VERSION] = UROCE_CMA_VERSION;
	p[CMA_OFF_IP_VERSION] = (uint8_t)(h->ip_version << 4);
	p[CMA_OFF_PORT] = (uint8_t)(h->src_port >> 8);
	p[CMA_OFF_PORT + 1] = (uint8_t)h->src_port;
	if (h->ip_version == 4) {
		memcpy(p + CMA_OFF_SRC + CMA_IPV4_OFF, h->src_addr + CMA_IPV4_OFF, 4);
		memcpy(p + CMA_OFF_DST + CMA_IPV4_OFF, h->dst_addr + CMA_IPV4_OFF, 4);
	} else {
		memcpy(p + CMA_OFF_SRC, h->src_addr, 16);
		memcpy(p + CMA_OFF_DST, h->dst_addr, 16);
	}
}

int
uroce_cma_pack(struct uroce_cm_msg *m, const struct uroce_cma_hdr *hdr,
	       const void *user, size_t len)
{
	uint16_t attr = m->hdr.attr_id;
	size_t hlen = hdr != NULL ? UROCE_CMA_HDR_LEN : 0;
	uint8_t buf[UROCE_CM_RTU_PRIV_LEN];	/* the largest private data */

	if (uroce_cm_priv_len(attr) == 0 || has_cma_hdr(attr) != (hdr != NULL))
		return -EINVAL;
	if (len > uroce_cma_user_max(attr) || (len > 0 && user == NULL))
		return -EINVAL;
	if (hdr != NULL && hdr->ip_version != 4 && hdr->ip_version != 6)
		return -EINVAL;
	if (hdr != NULL)
		cma_hdr_put(buf, hdr);
	if (len > 0)
		memcpy(buf + hlen, user, len);
	return uroce_cm_priv_set(m, buf, hlen + len);
}

int
uroce_cma_hdr_get(const uint8_t *priv, size_t len, struct uroce_cma_hdr *hdr)
{
	uint8_t ipv;

	if (priv == NULL || len < UROCE_CMA_HDR_LEN)
		return -EINVAL;
	ipv = priv[CMA_OFF_IP_VERSION] >> 4;
	if (priv[CMA_OFF_VERSION] != UROCE_CMA_VERSION || (ipv != 4 && ipv != 6))
		return -EPROTO;
	memset(hdr, 0, sizeof(*hdr));
	hdr->ip_version = ipv;
	hdr->src_port = (uint16_t)(priv[CMA_OFF_PORT] << 8 | priv[CMA_OFF_PORT + 1]);
	if (ipv == 4) {
		memcpy(hdr->src_addr + CMA_IPV4_OFF, priv + CMA_OFF_SRC + CMA_IPV4_OFF, 4);
		memcpy(hdr->dst_addr + CMA_IPV4_OFF, priv + CMA_OFF_DST + CMA_IPV4_OFF, 4);
	} else {
		memcpy(hdr->src_addr, priv + CMA_OFF_SRC, 16);
		memcpy(hdr->dst_addr, priv + CMA_OFF_DST, 16);
	}
	return 0;
}
