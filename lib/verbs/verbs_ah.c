/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Address handles (ibv_create_ah(3)): RoCEv2 destinations, resolved to a
 * next-hop MAC by the engine when created.
 */

#include <endian.h>
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
 * The sender of a UD receive, from the 40 bytes before the payload
 * (ibv_poll_cq(3), IBV_WC_GRH): for RoCEv2 over IPv4 20 zero bytes then
 * the IPv4 header, as the transport and RoCE providers lay it out; else
 * the IPv6 header, which is the GRH. Returns whether it was IPv4.
 */
static bool
grh_source(const struct ibv_grh *grh, union ibv_gid *sgid, uint8_t *tclass)
{
	static const uint8_t zero[20];
	const uint8_t *b = (const uint8_t *)grh;

	if (memcmp(b, zero, sizeof(zero)) == 0 && (b[20] >> 4) == 4) {
		memset(sgid, 0, sizeof(*sgid));
		sgid->raw[10] = 0xff;
		sgid->raw[11] = 0xff;
		memcpy(&sgid->raw[12], b + 20 + 12, 4);	/* IPv4 source */
		*tclass = b[21];
		return true;
	}
	*sgid = grh->sgid;
	*tclass = (uint8_t)((be32toh(grh->version_tclass_flow) >> 20) & 0xff);
	return false;
}

static bool
gid_is_v4(const union ibv_gid *gid)
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(gid->raw, prefix, sizeof(prefix)) == 0;
}

/*
 * The address vector that answers a UD receive (ibv_init_ah_from_wc(3)):
 * RoCE always has a GRH, whose source becomes the destination; the source
 * GID index is our first of the sender's address family.
 * "0 on success, -1 on error".
 */
int
ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
		    struct ibv_wc *wc, struct ibv_grh *grh,
		    struct ibv_ah_attr *ah_attr)
{
	union ibv_gid gid;
	bool v4;
	int i;

	if (context == NULL || wc == NULL || grh == NULL || ah_attr == NULL ||
	    port_num != 1 || !(wc->wc_flags & IBV_WC_GRH)) {
		errno = EINVAL;
		return -1;
	}
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->is_global = 1;
	ah_attr->port_num = port_num;
	ah_attr->sl = wc->sl;
	ah_attr->grh.hop_limit = 0xff;
	v4 = grh_source(grh, &ah_attr->grh.dgid, &ah_attr->grh.traffic_class);
	for (i = 0; i < UROCE_GID_TBL_MAX; i++) {
		if (ibv_query_gid(context, port_num, i, &gid) != 0)
			break;
		if (gid.global.interface_id != 0 && gid_is_v4(&gid) == v4) {
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
