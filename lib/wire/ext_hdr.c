/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Extension headers (IBTA 9.3): one encoder and one decoder per header, in a
 * table indexed by enum uroce_hdr. The packed wire structs hide byte order
 * and alignment; the opcode table says which headers a packet has and where.
 */
#include <string.h>

#include "uroce_wire.h"
#include "wire_priv.h"

#define U24(v)	((v) & 0x00ffffffu)

static void
put_xrceth(void *p, const struct uroce_ext_fields *e)
{
	((struct uroce_xrceth *)p)->srqn = rte_cpu_to_be_32(U24(e->xrc_srqn));
}

static void
get_xrceth(const void *p, struct uroce_ext_fields *e)
{
	e->xrc_srqn = U24(rte_be_to_cpu_32(((const struct uroce_xrceth *)p)->srqn));
}

static void
put_deth(void *p, const struct uroce_ext_fields *e)
{
	struct uroce_deth *h = p;

	h->qkey = rte_cpu_to_be_32(e->deth.qkey);
	h->sqpn = rte_cpu_to_be_32(U24(e->deth.sqpn));
}

static void
get_deth(const void *p, struct uroce_ext_fields *e)
{
	const struct uroce_deth *h = p;

	e->deth.qkey = rte_be_to_cpu_32(h->qkey);
	e->deth.sqpn = U24(rte_be_to_cpu_32(h->sqpn));
}

static void
put_reth(void *p, const struct uroce_ext_fields *e)
{
	struct uroce_reth *h = p;

	h->va = rte_cpu_to_be_64(e->reth.va);
	h->rkey = rte_cpu_to_be_32(e->reth.rkey);
	h->dmalen = rte_cpu_to_be_32(e->reth.len);
}

static void
get_reth(const void *p, struct uroce_ext_fields *e)
{
	const struct uroce_reth *h = p;

	e->reth.va = rte_be_to_cpu_64(h->va);
	e->reth.rkey = rte_be_to_cpu_32(h->rkey);
	e->reth.len = rte_be_to_cpu_32(h->dmalen);
}

static void
put_atmeth(void *p, const struct uroce_ext_fields *e)
{
	struct uroce_atmeth *h = p;

	h->va = rte_cpu_to_be_64(e->atmeth.va);
	h->rkey = rte_cpu_to_be_32(e->atmeth.rkey);
	h->swap_add = rte_cpu_to_be_64(e->atmeth.swap_add);
	h->cmp = rte_cpu_to_be_64(e->atmeth.cmp);
}

static void
get_atmeth(const void *p, struct uroce_ext_fields *e)
{
	const struct uroce_atmeth *h = p;

	e->atmeth.va = rte_be_to_cpu_64(h->va);
	e->atmeth.rkey = rte_be_to_cpu_32(h->rkey);
	e->atmeth.swap_add = rte_be_to_cpu_64(h->swap_add);
	e->atmeth.cmp = rte_be_to_cpu_64(h->cmp);
}

static void
put_aeth(void *p, const struct uroce_ext_fields *e)
{
	((struct uroce_aeth *)p)->smsn =
		rte_cpu_to_be_32((uint32_t)e->aeth.syndrome << 24 | U24(e->aeth.msn));
}

static void
get_aeth(const void *p, struct uroce_ext_fields *e)
{
	uint32_t v = rte_be_to_cpu_32(((const struct uroce_aeth *)p)->smsn);

	e->aeth.syndrome = (uint8_t)(v >> 24);
	e->aeth.msn = U24(v);
}

static void
put_atmack(void *p, const struct uroce_ext_fields *e)
{
	((struct uroce_atmack *)p)->orig = rte_cpu_to_be_64(e->atmack_orig);
}

static void
get_atmack(const void *p, struct uroce_ext_fields *e)
{
	e->atmack_orig = rte_be_to_cpu_64(((const struct uroce_atmack *)p)->orig);
}

/* Immediate data is opaque: it travels and is delivered in network order. */
static void
put_immdt(void *p, const struct uroce_ext_fields *e)
{
	memcpy(p, &e->imm, UROCE_IMMDT_LEN);
}

static void
get_immdt(const void *p, struct uroce_ext_fields *e)
{
	memcpy(&e->imm, p, UROCE_IMMDT_LEN);
}

static void
put_ieth(void *p, const struct uroce_ext_fields *e)
{
	rte_be32_t v = rte_cpu_to_be_32(e->ieth_rkey);

	memcpy(p, &v, UROCE_IETH_LEN);
}

static void
get_ieth(const void *p, struct uroce_ext_fields *e)
{
	rte_be32_t v;

	memcpy(&v, p, UROCE_IETH_LEN);
	e->ieth_rkey = rte_be_to_cpu_32(v);
}

/* A CNP's 16 bytes are reserved: sent as zero, ignored on receipt (A17.9.3). */
static void
put_cnp(void *p, const struct uroce_ext_fields *e)
{
	RTE_SET_USED(e);
	memset(p, 0, UROCE_CNP_RSVD_LEN);
}

static void
get_cnp(const void *p, struct uroce_ext_fields *e)
{
	RTE_SET_USED(p);
	RTE_SET_USED(e);
}

static const struct {
	void (*put)(void *p, const struct uroce_ext_fields *e);
	void (*get)(const void *p, struct uroce_ext_fields *e);
} ext_codec[UROCE_HDR_COUNT] = {
	[UROCE_HDR_XRCETH] = { put_xrceth, get_xrceth },
	[UROCE_HDR_DETH] = { put_deth, get_deth },
	[UROCE_HDR_RETH] = { put_reth, get_reth },
	[UROCE_HDR_ATMETH] = { put_atmeth, get_atmeth },
	[UROCE_HDR_AETH] = { put_aeth, get_aeth },
	[UROCE_HDR_ATMACK] = { put_atmack, get_atmack },
	[UROCE_HDR_IMMDT] = { put_immdt, get_immdt },
	[UROCE_HDR_IETH] = { put_ieth, get_ieth },
	[UROCE_HDR_CNP] = { put_cnp, get_cnp },
};

void
uroce_ext_put(uint8_t *bth, const struct uroce_opcode_info *op,
	      const struct uroce_ext_fields *ext)
{
	unsigned int h;

	for (h = 0; h < UROCE_HDR_COUNT; h++)
		if (op->hdrs & UROCE_HDR_BIT(h))
			ext_codec[h].put(bth + op->off[h], ext);
}

void
uroce_wire_ext_get(const struct uroce_pkt *pkt, struct uroce_ext_fields *ext)
{
	unsigned int h;

	memset(ext, 0, sizeof(*ext));
	for (h = 0; h < UROCE_HDR_COUNT; h++)
		if (pkt->op->hdrs & UROCE_HDR_BIT(h))
			ext_codec[h].get(uroce_pkt_hdr(pkt, h), ext);
}
