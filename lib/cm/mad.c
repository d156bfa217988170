/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * CM MADs in and out of 256 bytes: the 24-byte common MAD header (IBTA
 * ch. 13) and each CM message as a table of its fields (IBTA vol. 1
 * Tables 106-120, with the ECE vendor ID bits of IBA comment 9434 that
 * Linux's include/rdma/ibta_vol1_c12.h also lists).
 */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_common.h>

#include "cm_priv.h"

RTE_LOG_REGISTER_SUFFIX(uroce_cm_logtype, cm, NOTICE);

/* ---------------------------------------------------------------------------
 * Big-endian bit fields.
 */
uint64_t
cm_bits_get(const uint8_t *p, unsigned int pos, unsigned int width)
{
	uint64_t v = 0;
	unsigned int i, b;

	for (i = 0; i < width; i++) {
		b = pos + i;
		v = (v << 1) | ((p[b >> 3] >> (7 - (b & 7))) & 1u);
	}
	return v;
}

void
cm_bits_put(uint8_t *p, unsigned int pos, unsigned int width, uint64_t v)
{
	unsigned int i, b;
	uint8_t m;

	for (i = 0; i < width; i++) {
		b = pos + i;
		m = (uint8_t)(1u << (7 - (b & 7)));
		if ((v >> (width - 1 - i)) & 1u)
			p[b >> 3] |= m;
		else
			p[b >> 3] &= (uint8_t)~m;
	}
}

/* ---------------------------------------------------------------------------
 * The field tables. Offsets are the IBTA's, from the end of the MAD header.
 */
#define HDR		UROCE_MAD_HDR_LEN
#define MEMB(T, m)	((uint16_t)offsetof(T, m)), \
			((uint8_t)sizeof(((T *)0)->m))
/* A numeric field: Byte[Bit], width in bits, member. */
#define NUM(n, T, m, byte, bi, w) \
	{ .name = (n), .off = HDR + (byte), .bit = (bi), .width = (w), \
	  .mem = MEMB(T, m) }
/* The same with the valid values lo..hi (a reserved value beyond). */
#define NUMR(n, T, m, byte, bi, w, l, h) \
	{ .name = (n), .off = HDR + (byte), .bit = (bi), .width = (w), \
	  .mem = MEMB(T, m), .lo = (l), .hi = (h) }
/* A byte array (GID, ARI, private data). */
#define BYTES(n, T, m, byte) \
	{ .name = (n), .off = HDR + (byte), .width = 8 * sizeof(((T *)0)->m), \
	  .mem = (uint16_t)offsetof(T, m), .size = 0 }

/* Path MTU codes 1 (256) to 5 (4096), as enum ibv_mtu; 0 and 6-15 reserved. */
#define MTU_MIN		1
#define MTU_MAX		5
#define MSG_TYPE_MAX	2	/* MRAed/REJected: REQ, REP, other; 3 reserved */
#define SIDR_STATUS_MAX	UROCE_CM_SIDR_UNSUPPORTED_VERSION

#define PATH(pfx, m, b) \
	NUM(pfx "_local_lid", struct uroce_cm_req, m.local_lid, (b), 0, 16), \
	NUM(pfx "_remote_lid", struct uroce_cm_req, m.remote_lid, (b) + 2, 0, 16), \
	BYTES(pfx "_local_gid", struct uroce_cm_req, m.local_gid, (b) + 4), \
	BYTES(pfx "_remote_gid", struct uroce_cm_req, m.remote_gid, (b) + 20), \
	NUM(pfx "_flow_label", struct uroce_cm_req, m.flow_label, (b) + 36, 0, 20), \
	NUM(pfx "_packet_rate", struct uroce_cm_req, m.packet_rate, (b) + 39, 2, 6), \
	NUM(pfx "_traffic_class", struct uroce_cm_req, m.traffic_class, (b) + 40, 0, 8), \
	NUM(pfx "_hop_limit", struct uroce_cm_req, m.hop_limit, (b) + 41, 0, 8), \
	NUM(pfx "_sl", struct uroce_cm_req, m.sl, (b) + 42, 0, 4), \
	NUM(pfx "_subnet_local", struct uroce_cm_req, m.subnet_local, (b) + 42, 4, 1), \
	NUM(pfx "_local_ack_timeout", struct uroce_cm_req, m.local_ack_timeout, (b) + 43, 0, 5)

#define R struct uroce_cm_req
/* IBTA Table 106: REQ. */
static const struct cm_field req_fields[] = {
	NUM("local_comm_id", R, local_comm_id, 0, 0, 32),
	NUM("vendor_id", R, vendor_id, 5, 0, 24),
	NUM("service_id", R, service_id, 8, 0, 64),
	NUM("local_ca_guid", R, local_ca_guid, 16, 0, 64),
	NUM("local_qkey", R, local_qkey, 28, 0, 32),
	NUM("local_qpn", R, local_qpn, 32, 0, 24),
	NUM("responder_resources", R, responder_resources, 35, 0, 8),
	NUM("local_eecn", R, local_eecn, 36, 0, 24),
	NUM("initiator_depth", R, initiator_depth, 39, 0, 8),
	NUM("remote_eecn", R, remote_eecn, 40, 0, 24),
	NUM("remote_cm_resp_timeout", R, remote_cm_resp_timeout, 43, 0, 5),
	NUM("transport_type", R, transport_type, 43, 5, 2),
	NUM("e2e_flow_control", R, e2e_flow_control, 43, 7, 1),
	NUM("starting_psn", R, starting_psn, 44, 0, 24),
	NUM("local_cm_resp_timeout", R, local_cm_resp_timeout, 47, 0, 5),
	NUM("retry_count", R, retry_count, 47, 5, 3),
	NUM("pkey", R, pkey, 48, 0, 16),
	NUMR("path_mtu", R, path_mtu, 50, 0, 4, MTU_MIN, MTU_MAX),
	NUM("rdc_exists", R, rdc_exists, 50, 4, 1),
	NUM("rnr_retry_count", R, rnr_retry_count, 50, 5, 3),
	NUM("max_cm_retries", R, max_cm_retries, 51, 0, 4),
	NUM("srq", R, srq, 51, 4, 1),
	NUM("ext_transport", R, ext_transport, 51, 5, 3),
	PATH("primary", primary, 52),
	PATH("alternate", alternate, 96),
	NUM("sap_supported", R, sap_supported, 139, 5, 1),
	BYTES("private_data", R, private_data, 140),
};
#undef R

#define R struct uroce_cm_mra
/* IBTA Table 107: MRA. */
static const struct cm_field mra_fields[] = {
	NUM("local_comm_id", R, local_comm_id, 0, 0, 32),
	NUM("remote_comm_id", R, remote_comm_id, 4, 0, 32),
	NUMR("msg_mraed", R, msg_mraed, 8, 0, 2, 0, MSG_TYPE_MAX),
	NUM("service_timeout", R, service_timeout, 9, 0, 5),
	BYTES("private_data", R, private_data, 10),
};
#undef R

#define R struct uroce_cm_rej
/* IBTA Table 108: REJ. */
static const struct cm_field rej_fields[] = {
	NUM("local_comm_id", R, local_comm_id, 0, 0, 32),
	NUM("remote_comm_id", R, remote_comm_id, 4, 0, 32),
	NUMR("msg_rejected", R, msg_rejected, 8, 0, 2, 0, MSG_TYPE_MAX),
	NUMR("ari_len", R, ari_len, 9, 0, 7, 0, UROCE_CM_ARI_LEN),
	NUM("reason", R, reason, 10, 0, 16),
	BYTES("ari", R, ari, 12),
	BYTES("private_data", R, private_data, 84),
};
#undef R

#define R struct uroce_cm_rep
/* IBTA Table 110: REP. */
static const struct cm_field rep_fields[] = {
	NUM("local_comm_id", R, local_comm_id, 0, 0, 32),
	NUM("remote_comm_id", R, remote_comm_id, 4, 0, 32),
	NUM("local_qkey", R, local_qkey, 8, 0, 32),
	NUM("local_qpn", R, local_qpn, 12, 0, 24),
	NUM("vendor_id_h", R, vendor_id_h, 15, 0, 8),
	NUM("local_eecn", R, local_eecn, 16, 0, 24),
	NUM("vendor_id_m", R, vendor_id_m, 19, 0, 8),
	NUM("starting_psn", R, starting_psn, 20, 0, 24),
	NUM("vendor_id_l", R, vendor_id_l, 23, 0, 8),
	NUM("responder_resources", R, responder_resources, 24, 0, 8),
	NUM("initiator_depth", R, initiator_depth, 25, 0, 8),
	NUM("target_ack_delay", R, target_ack_delay, 26, 0, 5),
	NUM("failover_accepted", R, failover_accepted, 26, 5, 2),
	NUM("e2e_flow_control", R, e2e_flow_control, 26, 7, 1),
	NUM("rnr_retry_count", R, rnr_retry_count, 27, 0, 3),
	NUM("srq", R, srq, 27, 3, 1),
	NUM("local_ca_guid", R, local_ca_guid, 28, 0, 64),
	BYTES("private_data", R, private_data, 36),
};
#undef R

#define R struct uroce_cm_rtu
/* IBTA Table 111: RTU. */
static const struct cm_field rtu_fields[] = {
	NUM("local_comm_id", R, local_comm_id, 0, 0, 32),
	NUM("remote_comm_id", R, remote_comm_id, 4, 0, 32),
	BYTES("private_data", R, private_data, 8),
};
#undef R

#define R struct uroce_cm_dreq
/* IBTA Table 112: DREQ. */
static const struct cm_field dreq_fields[] = {
	NUM("local_comm_id", R, local_comm_id, 0, 0, 32),
	NUM("remote_comm_id", R, remote_comm_id, 4, 0, 32),
	NUM("remote_qpn", R, remote_qpn, 8, 0, 24),
	BYTES("private_data", R, private_data, 12),
};
#undef R

#define R struct uroce_cm_drep
/* IBTA Table 113: DREP. */
static const struct cm_field drep_fields[] = {
	NUM("local_comm_id", R, local_comm_id, 0, 0, 32),
	NUM("remote_comm_id", R, remote_comm_id, 4, 0, 32),
	BYTES("private_data", R, private_data, 8),
};
#undef R

#define R struct uroce_cm_sidr_req
/* IBTA Table 119: SIDR_REQ. */
static const struct cm_field sidr_req_fields[] = {
	NUM("request_id", R, request_id, 0, 0, 32),
	NUM("pkey", R, pkey, 4, 0, 16),
	NUM("service_id", R, service_id, 8, 0, 64),
	BYTES("private_data", R, private_data, 16),
};
#undef R

#define R struct uroce_cm_sidr_rep
/* IBTA Table 120: SIDR_REP. */
static const struct cm_field sidr_rep_fields[] = {
	NUM("request_id", R, request_id, 0, 0, 32),
	NUMR("sidr_status", R, status, 4, 0, 8, 0, SIDR_STATUS_MAX),
	NUMR("info_len", R, info_len, 5, 0, 8, 0, UROCE_CM_ARI_LEN),
	NUM("vendor_id_h", R, vendor_id_h, 6, 0, 16),
	NUM("qpn", R, qpn, 8, 0, 24),
	NUM("vendor_id_l", R, vendor_id_l, 11, 0, 8),
	NUM("service_id", R, service_id, 12, 0, 64),
	NUM("qkey", R, qkey, 20, 0, 32),
	BYTES("info", R, info, 24),
	BYTES("private_data", R, private_data, 96),
};
#undef R

#define DESC(a, n, f, T) { .attr = (a), .name = (n), .fields = (f), \
	.nfields = RTE_DIM(f), .priv_mem = offsetof(T, private_data), \
	.priv_len = sizeof(((T *)0)->private_data) }

static const struct cm_msg_desc msg_descs[] = {
	DESC(UROCE_CM_ATTR_REQ, "REQ", req_fields, struct uroce_cm_req),
	DESC(UROCE_CM_ATTR_MRA, "MRA", mra_fields, struct uroce_cm_mra),
	DESC(UROCE_CM_ATTR_REJ, "REJ", rej_fields, struct uroce_cm_rej),
	DESC(UROCE_CM_ATTR_REP, "REP", rep_fields, struct uroce_cm_rep),
	DESC(UROCE_CM_ATTR_RTU, "RTU", rtu_fields, struct uroce_cm_rtu),
	DESC(UROCE_CM_ATTR_DREQ, "DREQ", dreq_fields, struct uroce_cm_dreq),
	DESC(UROCE_CM_ATTR_DREP, "DREP", drep_fields, struct uroce_cm_drep),
	DESC(UROCE_CM_ATTR_SIDR_REQ, "SIDR_REQ", sidr_req_fields,
	     struct uroce_cm_sidr_req),
	DESC(UROCE_CM_ATTR_SIDR_REP, "SIDR_REP", sidr_rep_fields,
	     struct uroce_cm_sidr_rep),
};

/* Every message fills the 232 bytes after the header exactly. */
_Static_assert(140 + UROCE_CM_REQ_PRIV_LEN == UROCE_CM_DATA_LEN, "REQ");
_Static_assert(10 + UROCE_CM_MRA_PRIV_LEN == UROCE_CM_DATA_LEN, "MRA");
_Static_assert(84 + UROCE_CM_REJ_PRIV_LEN == UROCE_CM_DATA_LEN, "REJ");
_Static_assert(36 + UROCE_CM_REP_PRIV_LEN == UROCE_CM_DATA_LEN, "REP");
_Static_assert(8 + UROCE_CM_RTU_PRIV_LEN == UROCE_CM_DATA_LEN, "RTU");
_Static_assert(12 + UROCE_CM_DREQ_PRIV_LEN == UROCE_CM_DATA_LEN, "DREQ");
_Static_assert(8 + UROCE_CM_DREP_PRIV_LEN == UROCE_CM_DATA_LEN, "DREP");
_Static_assert(16 + UROCE_CM_SIDR_REQ_PRIV_LEN == UROCE_CM_DATA_LEN, "SIDR_REQ");
_Static_assert(96 + UROCE_CM_SIDR_REP_PRIV_LEN == UROCE_CM_DATA_LEN, "SIDR_REP");

const struct cm_msg_desc *
cm_msg_desc(uint16_t attr)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(msg_descs); i++)
		if (msg_descs[i].attr == attr)
			return &msg_descs[i];
	return NULL;
}

const char *
uroce_cm_attr_str(uint16_t attr)
{
	const struct cm_msg_desc *d = cm_msg_desc(attr);

	return d != NULL ? d->name : "?";
}

size_t
uroce_cm_priv_len(uint16_t attr)
{
	const struct cm_msg_desc *d = cm_msg_desc(attr);

	return d != NULL ? d->priv_len : 0;
}

/* The message body: every union member starts at the same place. */
static uint8_t *
msg_body(struct uroce_cm_msg *m)
{
	return (uint8_t *)&m->req;
}

uint8_t *
uroce_cm_priv(struct uroce_cm_msg *m)
{
	const struct cm_msg_desc *d = cm_msg_desc(m->hdr.attr_id);

	return d != NULL ? msg_body(m) + d->priv_mem : NULL;
}

int
uroce_cm_priv_set(struct uroce_cm_msg *m, const void *data, size_t len)
{
	const struct cm_msg_desc *d = cm_msg_desc(m->hdr.attr_id);
	uint8_t *p;

	if (d == NULL || len > d->priv_len || (len > 0 && data == NULL))
		return -EINVAL;
	p = msg_body(m) + d->priv_mem;
	if (len > 0)
		memcpy(p, data, len);
	memset(p + len, 0, d->priv_len - len);
	return 0;
}

void
uroce_cm_msg_init(struct uroce_cm_msg *m, uint16_t attr, uint64_t tid)
{
	memset(m, 0, sizeof(*m));
	m->hdr.base_version = UROCE_MAD_BASE_VERSION;
	m->hdr.mgmt_class = UROCE_MGMT_CLASS_CM;
	m->hdr.class_version = UROCE_CM_CLASS_VERSION;
	m->hdr.method = UROCE_MAD_METHOD_SEND;
	m->hdr.tid = tid;
	m->hdr.attr_id = attr;
}

/* ---------------------------------------------------------------------------
 * Members of any size.
 */
static uint64_t
mem_get(const uint8_t *body, const struct cm_field *f)
{
	const uint8_t *p = body + f->mem;
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (f->size) {
	case 1: memcpy(&v8, p, 1); return v8;
	case 2: memcpy(&v16, p, 2); return v16;
	case 4: memcpy(&v32, p, 4); return v32;
	default: memcpy(&v64, p, 8); return v64;
	}
}

static void
mem_put(uint8_t *body, const struct cm_field *f, uint64_t v)
{
	uint8_t *p = body + f->mem;
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (f->size) {
	case 1: memcpy(p, &v8, 1); break;
	case 2: memcpy(p, &v16, 2); break;
	case 4: memcpy(p, &v32, 4); break;
	default: memcpy(p, &v, 8); break;
	}
}

static bool
field_ok(const struct cm_field *f, uint64_t v)
{
	if (f->width < 64 && (v >> f->width) != 0)
		return false;
	return f->hi == 0 || (v >= f->lo && v <= f->hi);
}

/* ---------------------------------------------------------------------------
 * The common MAD header: versions, class, method, status, class-specific,
 * transaction ID, attribute ID, 2 reserved bytes, attribute modifier.
 */
static void
hdr_put(uint8_t *mad, const struct uroce_mad_hdr *h)
{
	mad[0] = h->base_version;
	mad[1] = h->mgmt_class;
	mad[2] = h->class_version;
	mad[3] = h->method;
	cm_bits_put(mad, 4 * 8, 16, h->status);
	cm_bits_put(mad, 6 * 8, 16, h->class_specific);
	cm_bits_put(mad, 8 * 8, 64, h->tid);
	cm_bits_put(mad, 16 * 8, 16, h->attr_id);
	cm_bits_put(mad, 18 * 8, 16, 0);	/* reserved */
	cm_bits_put(mad, 20 * 8, 32, h->attr_mod);
}

static void
hdr_get(const uint8_t *mad, struct uroce_mad_hdr *h)
{
	h->base_version = mad[0];
	h->mgmt_class = mad[1];
	h->class_version = mad[2];
	h->method = mad[3];
	h->status = (uint16_t)cm_bits_get(mad, 4 * 8, 16);
	h->class_specific = (uint16_t)cm_bits_get(mad, 6 * 8, 16);
	h->tid = cm_bits_get(mad, 8 * 8, 64);
	h->attr_id = (uint16_t)cm_bits_get(mad, 16 * 8, 16);
	h->attr_mod = (uint32_t)cm_bits_get(mad, 20 * 8, 32);
}

int
uroce_cm_encode(const struct uroce_cm_msg *m, uint8_t mad[UROCE_MAD_LEN])
{
	const struct cm_msg_desc *d = cm_msg_desc(m->hdr.attr_id);
	const uint8_t *body = (const uint8_t *)&m->req;
	uint8_t out[UROCE_MAD_LEN];
	const struct cm_field *f;
	unsigned int i;
	uint64_t v;

	if (d == NULL)
		return -EINVAL;
	memset(out, 0, sizeof(out));
	hdr_put(out, &m->hdr);
	for (i = 0; i < d->nfields; i++) {
		f = &d->fields[i];
		if (f->size == 0) {
			memcpy(out + f->off, body + f->mem, f->width / 8);
			continue;
		}
		v = mem_get(body, f);
		if (!field_ok(f, v)) {
			CM_LOG(DEBUG, "encode %s: %s 0x%" PRIx64 " out of range\n",
			       d->name, f->name, v);
			return -EINVAL;
		}
		cm_bits_put(out, f->off * 8u + f->bit, f->width, v);
	}
	memcpy(mad, out, sizeof(out));
	return 0;
}

static int
hdr_check(const struct uroce_mad_hdr *h)
{
	if (h->base_version != UROCE_MAD_BASE_VERSION ||
	    h->mgmt_class != UROCE_MGMT_CLASS_CM ||
	    h->class_version != UROCE_CM_CLASS_VERSION ||
	    h->method != UROCE_MAD_METHOD_SEND)
		return -EPROTO;
	return cm_msg_desc(h->attr_id) != NULL ? 0 : -EPROTO;
}

int
uroce_cm_decode(const uint8_t *buf, size_t len, struct uroce_cm_msg *m)
{
	const struct cm_msg_desc *d;
	const struct cm_field *f;
	uint8_t *body;
	unsigned int i;
	uint64_t v;

	if (buf == NULL || len != UROCE_MAD_LEN)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	hdr_get(buf, &m->hdr);
	if (hdr_check(&m->hdr) != 0) {
		CM_LOG(DEBUG, "decode: not a CM MAD (%u/0x%02x/%u method 0x%02x attr 0x%04x)\n",
		       m->hdr.base_version, m->hdr.mgmt_class, m->hdr.class_version,
		       m->hdr.method, m->hdr.attr_id);
		return -EPROTO;
	}
	d = cm_msg_desc(m->hdr.attr_id);
	body = msg_body(m);
	for (i = 0; i < d->nfields; i++) {
		f = &d->fields[i];
		if (f->size == 0) {
			memcpy(body + f->mem, buf + f->off, f->width / 8);
			continue;
		}
		v = cm_bits_get(buf, f->off * 8u + f->bit, f->width);
		if (!field_ok(f, v)) {
			CM_LOG(DEBUG, "decode %s: reserved %s %" PRIu64 "\n",
			       d->name, f->name, v);
			return -EPROTO;
		}
		mem_put(body, f, v);
	}
	return 0;
}

int
uroce_cm_fields(const struct uroce_cm_msg *m, uroce_cm_field_fn fn, void *arg)
{
	const struct cm_msg_desc *d = cm_msg_desc(m->hdr.attr_id);
	const uint8_t *body = (const uint8_t *)&m->req;
	const struct cm_field *f;
	unsigned int i;

	if (d == NULL)
		return -EINVAL;
	fn(arg, "base_version", m->hdr.base_version, NULL, 0);
	fn(arg, "mgmt_class", m->hdr.mgmt_class, NULL, 0);
	fn(arg, "class_version", m->hdr.class_version, NULL, 0);
	fn(arg, "method", m->hdr.method, NULL, 0);
	fn(arg, "status", m->hdr.status, NULL, 0);
	fn(arg, "class_specific", m->hdr.class_specific, NULL, 0);
	fn(arg, "tid", m->hdr.tid, NULL, 0);
	fn(arg, "attr_id", m->hdr.attr_id, NULL, 0);
	fn(arg, "attr_mod", m->hdr.attr_mod, NULL, 0);
	for (i = 0; i < d->nfields; i++) {
		f = &d->fields[i];
		if (f->size == 0)
			fn(arg, f->name, 0, body + f->mem, f->width / 8u);
		else
			fn(arg, f->name, mem_get(body, f), NULL, 0);
	}
	return 0;
}
