/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Address handles (ibv_create_ah(3)): RoCEv2 destinations, resolved to a
 * next-hop MAC by the engine when created.
 */

#include <endian.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "uroce_engine.h"
#include "verbs_priv.h"

struct ibv_ah *
ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct uroce_vah *ah;
	int ret;

	if (pd == NULL || attr == NULL)
		return uroce_verbs_null(EINVAL);
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL)
		return uroce_verbs_null(ENOMEM);
	ret = uroce_dev_ah_create(((struct uroce_vpd *)pd)->upd, attr,
				  &ah->uah);
	if (ret < 0) {
		free(ah);
		return uroce_verbs_null(-ret);
	}
	ah->ah.context = pd->context;
	ah->ah.pd = pd;
	return &ah->ah;
}

int
ibv_destroy_ah(struct ibv_ah *ah)
{
	struct uroce_vah *a = (struct uroce_vah *)ah;
	int ret;

	if (ah == NULL)
		return EINVAL;
	ret = uroce_dev_ah_destroy(a->uah);
	if (ret < 0)
		return -ret;
	free(a);
	return 0;
}

/*
 * The 40 bytes before a UD receive's payload (ibv_poll_cq(3),
 * IBV_WC_GRH): for RoCEv2 over IPv4 20 bytes (zero here) then the IPv4
 * header, as the transport and RoCE providers lay it out; else the IPv6
 * header, which is the GRH. What an answer needs of it, with the GIDs of
 * IPv4 addresses IPv4-mapped.
 */
struct grh_fields {
	union ibv_gid src, dst;
	uint32_t flow_label;
	uint8_t tclass, hop_limit;
};

static void
gid_of_v4(union ibv_gid *gid, const uint8_t *addr)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], addr, 4);
}

/* rdma-core's checksum of the 20 bytes at ip4 with the check field taken
 * as zero: its words summed, folded once, complemented, 16 bits kept. */
static uint16_t
ip4_cksum(const uint8_t *ip4)
{
	uint16_t w[10];
	uint32_t sum = 0;
	unsigned int i;

	memcpy(w, ip4, sizeof(w));
	w[5] = 0;
	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * Which header the 40 bytes hold, by rdma-core's rule (libibverbs,
 * ibv_init_ah_from_wc(), the one every provider's receives go through):
 * without an IPv6 version in the first word, IPv4 if the bytes at 20 say
 * version 4, else not RoCEv2; with it, IPv4 only if the bytes at 20 are
 * an IPv4 header of 5 words whose checksum is right (a provider that
 * leaves the first 20 bytes as they were), else IPv6.
 */
static int
grh_version(const struct ibv_grh *grh)
{
	const uint8_t *ip4 = (const uint8_t *)grh + 20;
	uint16_t check;

	if ((be32toh(grh->version_tclass_flow) >> 28) != 6)
		return (ip4[0] >> 4) == 4 ? 4 : -EPROTONOSUPPORT;
	if ((ip4[0] & 0xf) != 5)
		return 6;
	memcpy(&check, ip4 + 10, sizeof(check));
	return check == ip4_cksum(ip4) ? 4 : 6;
}

static int
grh_parse(const struct ibv_grh *grh, struct grh_fields *f)
{
	const uint8_t *ip4 = (const uint8_t *)grh + 20;
	uint32_t vtf = be32toh(grh->version_tclass_flow);
	int ver = grh_version(grh);

	memset(f, 0, sizeof(*f));
	/* From the first word whatever the version, as rdma-core does. */
	f->flow_label = vtf & 0xfffff;
	if (ver < 0)
		return ver;
	if (ver == 4) {
		f->tclass = ip4[1];
		f->hop_limit = ip4[8];			/* TTL */
		gid_of_v4(&f->src, ip4 + 12);
		gid_of_v4(&f->dst, ip4 + 16);
		/* A multicast group has no GID of ours to answer from. */
		return (ip4[16] & 0xf0) == 0xe0 ? -EINVAL : 0;
	}
	/* A multicast destination first, then the next header: RoCEv2
	 * carries UDP; RoCE v1's IB next header names GIDs of a type this
	 * port has none of. */
	if (grh->dgid.raw[0] == 0xff)
		return -EINVAL;
	if (grh->next_hdr != IPPROTO_UDP)
		return -EPROTONOSUPPORT;
	f->src = grh->sgid;
	f->dst = grh->dgid;
	f->tclass = (uint8_t)(vtf >> 20);
	f->hop_limit = grh->hop_limit;
	return 0;
}

/*
 * The address vector that answers a UD receive (ibv_init_ah_from_wc(3)),
 * as rdma-core's libibverbs builds it: the receive's source is the
 * destination, its traffic class, flow label and hop limit (IPv4: TTL)
 * are kept, and the source GID is the one the datagram was sent to, so
 * the answer leaves from the address that was asked (a port has GIDs of
 * both families, and may have several of one). Without IBV_WC_GRH the
 * vector is not global, as on InfiniBand, and a RoCE AH refuses it.
 * "0 on success, -1 on error" with errno: EINVAL (an argument, a
 * multicast destination), EPROTONOSUPPORT (not a RoCEv2 header), ENOENT
 * (the destination is none of the port's GIDs).
 */
int
ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
		    struct ibv_wc *wc, struct ibv_grh *grh,
		    struct ibv_ah_attr *ah_attr)
{
	struct grh_fields f;
	union ibv_gid gid;
	int i, ret;

	if (context == NULL || wc == NULL || ah_attr == NULL ||
	    port_num != 1 || (grh == NULL && (wc->wc_flags & IBV_WC_GRH))) {
		errno = EINVAL;
		return -1;
	}
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->port_num = port_num;
	ah_attr->sl = wc->sl;
	ah_attr->dlid = wc->slid;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	ret = grh_parse(grh, &f);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	ah_attr->is_global = 1;
	ah_attr->grh.dgid = f.src;
	ah_attr->grh.flow_label = f.flow_label;
	ah_attr->grh.traffic_class = f.tclass;
	ah_attr->grh.hop_limit = f.hop_limit;
	for (i = 0; i < UROCE_GID_TBL_MAX; i++) {
		if (ibv_query_gid(context, port_num, i, &gid) != 0)
			break;
		if (gid.global.interface_id != 0 &&
		    memcmp(gid.raw, f.dst.raw, sizeof(gid.raw)) == 0) {
			ah_attr->grh.sgid_index = (uint8_t)i;
			return 0;
		}
	}
	errno = ENOENT;
	return -1;
}

struct ibv_ah *
ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
		      struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (pd == NULL)
		return uroce_verbs_null(EINVAL);
	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr) != 0)
		return NULL;
	return ibv_create_ah(pd, &attr);
}
