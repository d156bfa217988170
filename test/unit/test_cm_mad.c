/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The CM MAD codec (lib/cm/mad.c) and the RDMA CM IP layer (lib/cm/cma.c):
 * - every field of every message at its IBTA Byte[Bit] place, from this
 *   file's own reading of vol. 1 Tables 106-120 (not the library's table);
 * - random round trips: every field equal after encode then decode;
 * - a REQ and a REP against bytes written out by hand from the spec;
 * - every malformed MAD rejected, private data and rdma_cm limits.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "uroce_test.h"
#include "uroce_cm.h"

#define H UROCE_MAD_HDR_LEN

/* One field: member, Byte (from the end of the MAD header), Bit (0 = MSB),
 * width; lo..hi when only those values are valid (hi != 0). */
struct tf {
	const char *name;
	uint16_t mem;
	uint8_t size;		/* 0: byte array of width / 8 */
	uint16_t byte;
	uint8_t bit;
	uint16_t width;
	uint8_t lo, hi;
};

#define F(T, m, by, bi, w) { #m, offsetof(T, m), sizeof(((T *)0)->m), by, bi, w, 0, 0 }
#define FR(T, m, by, bi, w, l, h) { #m, offsetof(T, m), sizeof(((T *)0)->m), by, bi, w, l, h }
#define FB(T, m, by) { #m, offsetof(T, m), 0, by, 0, 8 * sizeof(((T *)0)->m), 0, 0 }

#define P(T, p, b) \
	F(T, p.local_lid, b, 0, 16), F(T, p.remote_lid, b + 2, 0, 16), \
	FB(T, p.local_gid, b + 4), FB(T, p.remote_gid, b + 20), \
	F(T, p.flow_label, b + 36, 0, 20), F(T, p.packet_rate, b + 39, 2, 6), \
	F(T, p.traffic_class, b + 40, 0, 8), F(T, p.hop_limit, b + 41, 0, 8), \
	F(T, p.sl, b + 42, 0, 4), F(T, p.subnet_local, b + 42, 4, 1), \
	F(T, p.local_ack_timeout, b + 43, 0, 5)

typedef struct uroce_cm_req REQ;
static const struct tf req_tf[] = {
	F(REQ, local_comm_id, 0, 0, 32), F(REQ, vendor_id, 5, 0, 24),
	F(REQ, service_id, 8, 0, 64), F(REQ, local_ca_guid, 16, 0, 64),
	F(REQ, local_qkey, 28, 0, 32), F(REQ, local_qpn, 32, 0, 24),
	F(REQ, responder_resources, 35, 0, 8), F(REQ, local_eecn, 36, 0, 24),
	F(REQ, initiator_depth, 39, 0, 8), F(REQ, remote_eecn, 40, 0, 24),
	F(REQ, remote_cm_resp_timeout, 43, 0, 5), F(REQ, transport_type, 43, 5, 2),
	F(REQ, e2e_flow_control, 43, 7, 1), F(REQ, starting_psn, 44, 0, 24),
	F(REQ, local_cm_resp_timeout, 47, 0, 5), F(REQ, retry_count, 47, 5, 3),
	F(REQ, pkey, 48, 0, 16), FR(REQ, path_mtu, 50, 0, 4, 1, 5),
	F(REQ, rdc_exists, 50, 4, 1), F(REQ, rnr_retry_count, 50, 5, 3),
	F(REQ, max_cm_retries, 51, 0, 4), F(REQ, srq, 51, 4, 1),
	F(REQ, ext_transport, 51, 5, 3),
	P(REQ, primary, 52), P(REQ, alternate, 96),
	F(REQ, sap_supported, 139, 5, 1), FB(REQ, private_data, 140),
};

typedef struct uroce_cm_mra MRA;
static const struct tf mra_tf[] = {
	F(MRA, local_comm_id, 0, 0, 32), F(MRA, remote_comm_id, 4, 0, 32),
	FR(MRA, msg_mraed, 8, 0, 2, 0, 2), F(MRA, service_timeout, 9, 0, 5),
	FB(MRA, private_data, 10),
};

typedef struct uroce_cm_rej REJ;
static const struct tf rej_tf[] = {
	F(REJ, local_comm_id, 0, 0, 32), F(REJ, remote_comm_id, 4, 0, 32),
	FR(REJ, msg_rejected, 8, 0, 2, 0, 2), FR(REJ, ari_len, 9, 0, 7, 0, 72),
	F(REJ, reason, 10, 0, 16), FB(REJ, ari, 12), FB(REJ, private_data, 84),
};

typedef struct uroce_cm_rep REP;
static const struct tf rep_tf[] = {
	F(REP, local_comm_id, 0, 0, 32), F(REP, remote_comm_id, 4, 0, 32),
	F(REP, local_qkey, 8, 0, 32), F(REP, local_qpn, 12, 0, 24),
	F(REP, vendor_id_h, 15, 0, 8), F(REP, local_eecn, 16, 0, 24),
	F(REP, vendor_id_m, 19, 0, 8), F(REP, starting_psn, 20, 0, 24),
	F(REP, vendor_id_l, 23, 0, 8), F(REP, responder_resources, 24, 0, 8),
	F(REP, initiator_depth, 25, 0, 8), F(REP, target_ack_delay, 26, 0, 5),
	F(REP, failover_accepted, 26, 5, 2), F(REP, e2e_flow_control, 26, 7, 1),
	F(REP, rnr_retry_count, 27, 0, 3), F(REP, srq, 27, 3, 1),
	F(REP, local_ca_guid, 28, 0, 64), FB(REP, private_data, 36),
};

typedef struct uroce_cm_rtu RTU;
static const struct tf rtu_tf[] = {
	F(RTU, local_comm_id, 0, 0, 32), F(RTU, remote_comm_id, 4, 0, 32),
	FB(RTU, private_data, 8),
};

typedef struct uroce_cm_dreq DREQ;
static const struct tf dreq_tf[] = {
	F(DREQ, local_comm_id, 0, 0, 32), F(DREQ, remote_comm_id, 4, 0, 32),
	F(DREQ, remote_qpn, 8, 0, 24), FB(DREQ, private_data, 12),
};

typedef struct uroce_cm_drep DREP;
static const struct tf drep_tf[] = {
	F(DREP, local_comm_id, 0, 0, 32), F(DREP, remote_comm_id, 4, 0, 32),
	FB(DREP, private_data, 8),
};

typedef struct uroce_cm_sidr_req SREQ;
static const struct tf sreq_tf[] = {
	F(SREQ, request_id, 0, 0, 32), F(SREQ, pkey, 4, 0, 16),
	F(SREQ, service_id, 8, 0, 64), FB(SREQ, private_data, 16),
};

typedef struct uroce_cm_sidr_rep SREP;
static const struct tf srep_tf[] = {
	F(SREP, request_id, 0, 0, 32), FR(SREP, status, 4, 0, 8, 0, 5),
	FR(SREP, info_len, 5, 0, 8, 0, 72), F(SREP, vendor_id_h, 6, 0, 16),
	F(SREP, qpn, 8, 0, 24), F(SREP, vendor_id_l, 11, 0, 8),
	F(SREP, service_id, 12, 0, 64), F(SREP, qkey, 20, 0, 32),
	FB(SREP, info, 24), FB(SREP, private_data, 96),
};

struct tmsg {
	uint16_t attr;
	const struct tf *f;
	unsigned int n;
	size_t priv_len;
};

#define TM(a, t, p) { a, t, sizeof(t) / sizeof(t[0]), p }
static const struct tmsg tmsgs[] = {
	TM(UROCE_CM_ATTR_REQ, req_tf, 92), TM(UROCE_CM_ATTR_MRA, mra_tf, 222),
	TM(UROCE_CM_ATTR_REJ, rej_tf, 148), TM(UROCE_CM_ATTR_REP, rep_tf, 196),
	TM(UROCE_CM_ATTR_RTU, rtu_tf, 224), TM(UROCE_CM_ATTR_DREQ, dreq_tf, 220),
	TM(UROCE_CM_ATTR_DREP, drep_tf, 224),
	TM(UROCE_CM_ATTR_SIDR_REQ, sreq_tf, 216),
	TM(UROCE_CM_ATTR_SIDR_REP, srep_tf, 136),
};
#define NMSG (sizeof(tmsgs) / sizeof(tmsgs[0]))

/* ---------------------------------------------------------------------------
 * This file's own big-endian bit access.
 */
static uint64_t
getbits(const uint8_t *p, unsigned int pos, unsigned int w)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < w; i++)
		v = v << 1 | ((p[(pos + i) / 8] >> (7 - (pos + i) % 8)) & 1);
	return v;
}

static uint8_t *
body(struct uroce_cm_msg *m)
{
	return (uint8_t *)&m->req;
}

static void
setmem(struct uroce_cm_msg *m, const struct tf *f, uint64_t v)
{
	uint8_t *p = body(m) + f->mem;
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	if (f->size == 1)
		memcpy(p, &v8, 1);
	else if (f->size == 2)
		memcpy(p, &v16, 2);
	else if (f->size == 4)
		memcpy(p, &v32, 4);
	else
		memcpy(p, &v, 8);
}

/* A random valid value of a field. */
static uint64_t
rnd_value(const struct tf *f)
{
	uint64_t v = ut_rand();

	if (f->hi != 0)
		return f->lo + v % (f->hi - f->lo + 1u);
	return f->width >= 64 ? v : v & ((1ull << f->width) - 1);
}

/* A message whose ranged fields hold their lowest valid value, else 0. */
static void
base_msg(const struct tmsg *t, struct uroce_cm_msg *m)
{
	uroce_cm_msg_init(m, t->attr, 0x0123456789abcdefull);
	for (unsigned int i = 0; i < t->n; i++)
		if (t->f[i].hi != 0)
			setmem(m, &t->f[i], t->f[i].lo);
}

static void
random_msg(const struct tmsg *t, struct uroce_cm_msg *m)
{
	base_msg(t, m);
	m->hdr.tid = ut_rand();
	m->hdr.attr_mod = (uint32_t)ut_rand();
	for (unsigned int i = 0; i < t->n; i++) {
		const struct tf *f = &t->f[i];

		if (f->size == 0)
			ut_fill_rand(body(m) + f->mem, f->width / 8);
		else
			setmem(m, f, rnd_value(f));
	}
}

/* ---------------------------------------------------------------------------
 * Tests.
 */

/* Each field alone: its bits, and only its bits, change in the MAD. */
static void
test_field_places(void)
{
	uint8_t base[UROCE_MAD_LEN], mad[UROCE_MAD_LEN];
	struct uroce_cm_msg m;

	for (unsigned int k = 0; k < NMSG; k++) {
		const struct tmsg *t = &tmsgs[k];
		unsigned int covered = 0;

		base_msg(t, &m);
		UT_CHECK_EQ(uroce_cm_encode(&m, base), 0);
		for (unsigned int i = 0; i < t->n; i++) {
			const struct tf *f = &t->f[i];
			unsigned int pos = (H + f->byte) * 8u + f->bit;
			uint64_t v;

			base_msg(t, &m);
			if (f->size == 0) {
				memset(body(&m) + f->mem, 0xa5, f->width / 8);
				v = 0;
			} else {
				v = f->hi != 0 ? f->hi : (f->width >= 64 ? ~0ull :
							 (1ull << f->width) - 1);
				setmem(&m, f, v);
			}
			UT_CHECK_EQ(uroce_cm_encode(&m, mad), 0);
			for (unsigned int b = 0; b < UROCE_MAD_LEN * 8; b++) {
				bool in = b >= pos && b < pos + f->width;

				if (!in && getbits(mad, b, 1) != getbits(base, b, 1)) {
					UT_CHECK(!"a bit outside the field changed");
					break;
				}
			}
			if (f->size == 0)
				for (unsigned int j = 0; j < f->width / 8; j++)
					UT_CHECK_EQ(mad[pos / 8 + j], 0xa5);
			else
				UT_CHECK_EQ(getbits(mad, pos, f->width), v);
			covered += f->width;
			UT_NOTE("%s field %s", uroce_cm_attr_str(t->attr), f->name);
		}
		/* The fields plus the reserved bits never exceed the 232 bytes. */
		UT_CHECK(covered <= UROCE_CM_DATA_LEN * 8);
		/* Private data ends the message exactly. */
		UT_CHECK_EQ(t->f[t->n - 1].byte + t->f[t->n - 1].width / 8, UROCE_CM_DATA_LEN);
		UT_CHECK_EQ(uroce_cm_priv_len(t->attr), t->priv_len);
	}
}

static void
test_round_trips(void)
{
	struct uroce_cm_msg m, d;
	uint8_t mad[UROCE_MAD_LEN], again[UROCE_MAD_LEN];

	ut_srand(36);
	for (unsigned int k = 0; k < NMSG; k++) {
		for (int it = 0; it < 300; it++) {
			random_msg(&tmsgs[k], &m);
			UT_CHECK_EQ(uroce_cm_encode(&m, mad), 0);
			UT_CHECK_EQ(uroce_cm_decode(mad, sizeof(mad), &d), 0);
			UT_CHECK_MEM(&d, &m, sizeof(m));
			UT_CHECK_EQ(uroce_cm_encode(&d, again), 0);
			UT_CHECK_MEM(again, mad, sizeof(mad));
			UT_NOTE("%s iteration %d", uroce_cm_attr_str(tmsgs[k].attr), it);
		}
	}
}

static const uint8_t mad_hdr_req[H] = {
	0x01, 0x07, 0x02, 0x03,	0x00, 0x00, 0x00, 0x00,	/* versions, Send, status */
	0x00, 0x00, 0x00, 0x2a, 0x11, 0x22, 0x33, 0x44,	/* TID */
	0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,	/* REQ, attr mod 0 */
};

/* A RoCE REQ from 192.168.1.1 port 50000 to 192.168.1.2 port 20000 (TCP
 * port space), as Linux's rdma_cm would fill it, byte by byte. */
static const uint8_t req_body[UROCE_CM_DATA_LEN] = {
	0x11, 0x22, 0x33, 0x44,  0x00, 0x00, 0x00, 0x00,	/* comm ID, vendor 0 */
	0x00, 0x00, 0x00, 0x00,  0x01, 0x06, 0x4e, 0x20,	/* service ID */
	0x00, 0x02, 0xc9, 0xff,  0xfe, 0x00, 0x00, 0x01,	/* CA GUID */
	0x00, 0x00, 0x00, 0x00,  0x00, 0x00, 0x00, 0x00,	/* rsvd, Q_Key 0 */
	0x00, 0x01, 0x23, 0x04,  0x00, 0x00, 0x00, 0x05,	/* QPN, RR 4, EECN, ID 5 */
	0x00, 0x00, 0x00, 0xa1,		/* remote CM timeout 20, RC, e2e 1 */
	0xab, 0xcd, 0xef, 0xa7,		/* PSN, local CM timeout 20, retry 7 */
	0xff, 0xff, 0x37, 0xf0,		/* P_Key, MTU 1024, RNR 7, CM retries 15 */
	0xff, 0xff, 0xff, 0xff,		/* permissive LIDs */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 1,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 2,
	0x12, 0x34, 0x50, 0x03,		/* flow label 0x12345, rate 3 */
	0x68, 0x40, 0x30, 0x90,		/* TC, hop limit 64, SL 3, ACK timeout 18 */
	[96] = 0,			/* no alternate path */
	[140] = 0x00, 0x40, 0xc3, 0x50,	/* CMA: version 0, IPv4, port 50000 */
	[156] = 192, 168, 1, 1,
	[172] = 192, 168, 1, 2,
	[176] = 'h', 'i',
};

static void
test_req_known_answer(void)
{
	struct uroce_cma_hdr ch = { .ip_version = 4, .src_port = 50000 };
	static const uint8_t gid1[16] = { [10] = 0xff, 0xff, 192, 168, 1, 1 };
	static const uint8_t gid2[16] = { [10] = 0xff, 0xff, 192, 168, 1, 2 };
	uint8_t mad[UROCE_MAD_LEN], want[UROCE_MAD_LEN];
	struct uroce_cm_msg m, d;
	struct uroce_cm_req *r = &m.req;

	uroce_cm_msg_init(&m, UROCE_CM_ATTR_REQ, 0x0000002a11223344ull);
	r->local_comm_id = 0x11223344;
	r->service_id = uroce_cma_service_id(UROCE_RDMA_PS_TCP, 20000);
	r->local_ca_guid = 0x0002c9fffe000001ull;
	r->local_qpn = 0x000123;
	r->responder_resources = 4;
	r->initiator_depth = 5;
	r->remote_cm_resp_timeout = 20;
	r->transport_type = UROCE_CM_TST_RC;
	r->e2e_flow_control = 1;
	r->starting_psn = 0xabcdef;
	r->local_cm_resp_timeout = 20;
	r->retry_count = 7;
	r->pkey = 0xffff;
	r->path_mtu = 3;
	r->rnr_retry_count = 7;
	r->max_cm_retries = 15;
	r->primary.local_lid = UROCE_LID_PERMISSIVE;
	r->primary.remote_lid = UROCE_LID_PERMISSIVE;
	memcpy(r->primary.local_gid, gid1, 16);
	memcpy(r->primary.remote_gid, gid2, 16);
	r->primary.flow_label = 0x12345;
	r->primary.packet_rate = 3;
	r->primary.traffic_class = 0x68;
	r->primary.hop_limit = 64;
	r->primary.sl = 3;
	r->primary.local_ack_timeout = 18;
	memcpy(ch.src_addr + 12, gid1 + 12, 4);
	memcpy(ch.dst_addr + 12, gid2 + 12, 4);
	UT_CHECK_EQ(uroce_cma_pack(&m, &ch, "hi", 2), 0);

	memcpy(want, mad_hdr_req, H);
	memcpy(want + H, req_body, sizeof(req_body));
	UT_CHECK_EQ(uroce_cm_encode(&m, mad), 0);
	for (unsigned int i = 0; i < UROCE_MAD_LEN; i++)
		if (!UT_CHECK_EQ(mad[i], want[i]))
			UT_NOTE("REQ byte %u (CM byte %d)", i, (int)i - H);
	UT_CHECK_EQ(uroce_cm_decode(want, sizeof(want), &d), 0);
	UT_CHECK_MEM(&d, &m, sizeof(m));
}

static void
test_rep_known_answer(void)
{
	static const uint8_t want_body[40] = {
		0x55, 0x66, 0x77, 0x88,  0x11, 0x22, 0x33, 0x44,	/* comm IDs */
		0x00, 0x00, 0x00, 0x00,  0x00, 0x04, 0x56, 0x00,	/* Q_Key, QPN */
		0x00, 0x00, 0x00, 0x00,  0x12, 0x34, 0x56, 0x00,	/* EECN, PSN */
		0x04, 0x03, 0x79, 0xf0,		/* RR 4, ID 3, ACK delay 15, e2e;
						 * RNR 7, SRQ 1 */
		0x00, 0x02, 0xc9, 0xff,  0xfe, 0x00, 0x00, 0x02,	/* CA GUID */
		'o', 'k', 0x00, 0x00,
	};
	uint8_t mad[UROCE_MAD_LEN];
	struct uroce_cm_msg m, d;

	uroce_cm_msg_init(&m, UROCE_CM_ATTR_REP, 0x0000002a11223344ull);
	m.rep.local_comm_id = 0x55667788;
	m.rep.remote_comm_id = 0x11223344;
	m.rep.local_qpn = 0x000456;
	m.rep.starting_psn = 0x123456;
	m.rep.responder_resources = 4;
	m.rep.initiator_depth = 3;
	m.rep.target_ack_delay = 15;
	m.rep.e2e_flow_control = 1;
	m.rep.rnr_retry_count = 7;
	m.rep.srq = 1;
	m.rep.local_ca_guid = 0x0002c9fffe000002ull;
	UT_CHECK_EQ(uroce_cma_pack(&m, NULL, "ok", 2), 0);
	UT_CHECK_EQ(uroce_cm_encode(&m, mad), 0);
	UT_CHECK_EQ(mad[16], 0x00);
	UT_CHECK_EQ(mad[17], 0x13);	/* attribute REP */
	UT_CHECK_MEM(mad + H, want_body, sizeof(want_body));
	for (unsigned int i = H + sizeof(want_body); i < UROCE_MAD_LEN; i++)
		UT_CHECK_EQ(mad[i], 0);
	UT_CHECK_EQ(uroce_cm_decode(mad, sizeof(mad), &d), 0);
	UT_CHECK_MEM(&d, &m, sizeof(m));
}

/* A valid MAD of @attr, then one byte or bit-field changed: rejected. */
static void
expect_bad(uint16_t attr, unsigned int pos, unsigned int w, uint64_t v, int err,
	   const char *what)
{
	struct uroce_cm_msg m, d;
	uint8_t mad[UROCE_MAD_LEN];

	for (unsigned int k = 0; k < NMSG; k++)
		if (tmsgs[k].attr == attr)
			base_msg(&tmsgs[k], &m);
	UT_CHECK_EQ(uroce_cm_encode(&m, mad), 0);
	UT_CHECK_EQ(uroce_cm_decode(mad, sizeof(mad), &d), 0);
	for (unsigned int i = 0; i < w; i++) {
		unsigned int b = pos + i;
		uint8_t bit = (uint8_t)(1u << (7 - b % 8));

		if ((v >> (w - 1 - i)) & 1)
			mad[b / 8] |= bit;
		else
			mad[b / 8] &= (uint8_t)~bit;
	}
	UT_CHECK_EQ(uroce_cm_decode(mad, sizeof(mad), &d), err);
	UT_NOTE("%s", what);
}

static void
test_malformed(void)
{
	uint8_t mad[UROCE_MAD_LEN + 1];
	struct uroce_cm_msg m, d;
	const uint16_t other_attrs[] = { 0x0000, 0x0001, 0x0019, 0x001a, 0x001b,
					 0x000f, 0xffff };

	/* Lengths: a MAD is 256 bytes, no more, no less. */
	uroce_cm_msg_init(&m, UROCE_CM_ATTR_RTU, 1);
	UT_CHECK_EQ(uroce_cm_encode(&m, mad), 0);
	mad[UROCE_MAD_LEN] = 0;
	UT_CHECK_EQ(uroce_cm_decode(mad, UROCE_MAD_LEN - 1, &d), -EINVAL);
	UT_CHECK_EQ(uroce_cm_decode(mad, UROCE_MAD_LEN + 1, &d), -EINVAL);
	UT_CHECK_EQ(uroce_cm_decode(mad, 0, &d), -EINVAL);
	UT_CHECK_EQ(uroce_cm_decode(NULL, UROCE_MAD_LEN, &d), -EINVAL);
	UT_CHECK_EQ(uroce_cm_decode(mad, UROCE_MAD_LEN, &d), 0);

	/* Header: base version, class, class version, method, attribute. */
	expect_bad(UROCE_CM_ATTR_RTU, 0, 8, 0, -EPROTO, "base version 0");
	expect_bad(UROCE_CM_ATTR_RTU, 0, 8, 2, -EPROTO, "base version 2");
	expect_bad(UROCE_CM_ATTR_RTU, 8, 8, 0x01, -EPROTO, "class SubnMgmt");
	expect_bad(UROCE_CM_ATTR_RTU, 8, 8, 0x03, -EPROTO, "class SubnAdm");
	expect_bad(UROCE_CM_ATTR_RTU, 8, 8, 0x81, -EPROTO, "class directed route");
	expect_bad(UROCE_CM_ATTR_RTU, 16, 8, 1, -EPROTO, "class version 1");
	expect_bad(UROCE_CM_ATTR_RTU, 16, 8, 3, -EPROTO, "class version 3");
	expect_bad(UROCE_CM_ATTR_RTU, 24, 8, 0x01, -EPROTO, "method Get");
	expect_bad(UROCE_CM_ATTR_RTU, 24, 8, 0x81, -EPROTO, "method GetResp");
	for (unsigned int i = 0; i < sizeof(other_attrs) / sizeof(other_attrs[0]); i++)
		expect_bad(UROCE_CM_ATTR_RTU, 16 * 8, 16, other_attrs[i], -EPROTO,
			   "attribute not a handled CM message");

	/* Reserved values that change the meaning. */
	expect_bad(UROCE_CM_ATTR_MRA, (H + 8) * 8, 2, 3, -EPROTO, "MRA message 3");
	expect_bad(UROCE_CM_ATTR_REJ, (H + 8) * 8, 2, 3, -EPROTO, "REJ message 3");
	expect_bad(UROCE_CM_ATTR_REJ, (H + 9) * 8, 7, 73, -EPROTO, "REJ ARI 73");
	expect_bad(UROCE_CM_ATTR_REJ, (H + 9) * 8, 7, 127, -EPROTO, "REJ ARI 127");
	expect_bad(UROCE_CM_ATTR_REQ, (H + 50) * 8, 4, 0, -EPROTO, "REQ MTU 0");
	expect_bad(UROCE_CM_ATTR_REQ, (H + 50) * 8, 4, 6, -EPROTO, "REQ MTU 6");
	expect_bad(UROCE_CM_ATTR_REQ, (H + 50) * 8, 4, 15, -EPROTO, "REQ MTU 15");
	expect_bad(UROCE_CM_ATTR_SIDR_REP, (H + 4) * 8, 8, 6, -EPROTO, "SIDR status 6");
	expect_bad(UROCE_CM_ATTR_SIDR_REP, (H + 5) * 8, 8, 73, -EPROTO, "SIDR info 73");
	/* ... and the limits themselves are valid. */
	expect_bad(UROCE_CM_ATTR_REJ, (H + 9) * 8, 7, 72, 0, "REJ ARI 72");
	expect_bad(UROCE_CM_ATTR_REQ, (H + 50) * 8, 4, 5, 0, "REQ MTU 5");
	expect_bad(UROCE_CM_ATTR_SIDR_REP, (H + 4) * 8, 8, 5, 0, "SIDR status 5");

	/* The encoder refuses what does not fit and leaves the MAD alone. */
	memset(mad, 0x5a, sizeof(mad));
	uroce_cm_msg_init(&m, UROCE_CM_ATTR_REP, 1);
	m.rep.local_qpn = 0x1000000;
	UT_CHECK_EQ(uroce_cm_encode(&m, mad), -EINVAL);
	m.rep.local_qpn = 0;
	m.rep.target_ack_delay = 32;
	UT_CHECK_EQ(uroce_cm_encode(&m, mad), -EINVAL);
	uroce_cm_msg_init(&m, UROCE_CM_ATTR_REQ, 1);	/* MTU 0 */
	UT_CHECK_EQ(uroce_cm_encode(&m, mad), -EINVAL);
	uroce_cm_msg_init(&m, 0x0019, 1);		/* LAP */
	UT_CHECK_EQ(uroce_cm_encode(&m, mad), -EINVAL);
	for (unsigned int i = 0; i < UROCE_MAD_LEN; i++)
		if (mad[i] != 0x5a)
			UT_CHECK(!"a refused encode wrote the MAD");
}

static void
test_private_data(void)
{
	uint8_t data[UROCE_CM_RTU_PRIV_LEN + 1];
	struct uroce_cm_msg m, before;

	ut_fill_rand(data, sizeof(data));
	for (unsigned int k = 0; k < NMSG; k++) {
		size_t n = tmsgs[k].priv_len;

		uroce_cm_msg_init(&m, tmsgs[k].attr, 7);
		UT_CHECK_EQ(uroce_cm_priv_set(&m, data, n), 0);
		UT_CHECK_MEM(uroce_cm_priv(&m), data, n);
		before = m;
		UT_CHECK_EQ(uroce_cm_priv_set(&m, data, n + 1), -EINVAL);
		UT_CHECK_MEM(&m, &before, sizeof(m));
		/* A shorter one zeroes the rest. */
		UT_CHECK_EQ(uroce_cm_priv_set(&m, data, 3), 0);
		UT_CHECK_EQ(uroce_cm_priv(&m)[3], 0);
		UT_CHECK_EQ(uroce_cm_priv(&m)[n - 1], 0);
		UT_NOTE("%s", uroce_cm_attr_str(tmsgs[k].attr));
	}
}

static void
test_cma(void)
{
	static const struct { uint16_t attr; size_t max; } lim[] = {
		{ UROCE_CM_ATTR_REQ, 56 }, { UROCE_CM_ATTR_REP, 196 },
		{ UROCE_CM_ATTR_REJ, 148 }, { UROCE_CM_ATTR_DREQ, 220 },
		{ UROCE_CM_ATTR_DREP, 224 }, { UROCE_CM_ATTR_MRA, 222 },
		{ UROCE_CM_ATTR_RTU, 224 }, { UROCE_CM_ATTR_SIDR_REQ, 180 },
		{ UROCE_CM_ATTR_SIDR_REP, 136 },
	};
	struct uroce_cma_hdr h6 = { .ip_version = 6, .src_port = 0x1234 }, g;
	uint8_t user[UROCE_CM_RTU_PRIV_LEN + 1];
	struct uroce_cm_msg m, before;
	uint16_t ps, port;
	uint8_t *p;

	/* Service IDs (Linux cma_get_service_id; annex A11 prefix). */
	UT_CHECK_EQ(uroce_cma_service_id(UROCE_RDMA_PS_TCP, 20000), 0x0000000001064e20ull);
	UT_CHECK_EQ(uroce_cma_service_id(UROCE_RDMA_PS_UDP, 7174), 0x0000000001111c06ull);
	UT_CHECK_EQ(uroce_cma_service_id(UROCE_RDMA_PS_IB, 1), 0x00000000013f0001ull);
	UT_CHECK_EQ(uroce_cma_service_parse(0x0000000001064e20ull, &ps, &port), 0);
	UT_CHECK_EQ(ps, UROCE_RDMA_PS_TCP);
	UT_CHECK_EQ(port, 20000);
	UT_CHECK_EQ(uroce_cma_service_parse(0x0000000002064e20ull, &ps, &port), -EINVAL);
	UT_CHECK_EQ(uroce_cma_service_parse(0x1000000001064e20ull, &ps, &port), -EINVAL);

	/* User data limits: the most fits, one more is refused unchanged. */
	ut_fill_rand(user, sizeof(user));
	ut_fill_rand(h6.src_addr, 16);
	ut_fill_rand(h6.dst_addr, 16);
	for (unsigned int i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
		bool hdr = lim[i].attr == UROCE_CM_ATTR_REQ ||
			   lim[i].attr == UROCE_CM_ATTR_SIDR_REQ;
		size_t off = hdr ? UROCE_CMA_HDR_LEN : 0;

		uroce_cm_msg_init(&m, lim[i].attr, 3);
		UT_CHECK_EQ(uroce_cma_user_max(lim[i].attr), lim[i].max);
		UT_CHECK_EQ(uroce_cma_pack(&m, hdr ? &h6 : NULL, user, lim[i].max), 0);
		UT_CHECK_MEM(uroce_cm_priv(&m) + off, user, lim[i].max);
		before = m;
		UT_CHECK_EQ(uroce_cma_pack(&m, hdr ? &h6 : NULL, user, lim[i].max + 1), -EINVAL);
		/* The header belongs to REQ and SIDR_REQ only. */
		UT_CHECK_EQ(uroce_cma_pack(&m, hdr ? NULL : &h6, user, 1), -EINVAL);
		UT_CHECK_MEM(&m, &before, sizeof(m));
		UT_NOTE("%s", uroce_cm_attr_str(lim[i].attr));
	}

	/* IPv6 header: all 16 bytes of each address; round trip. */
	uroce_cm_msg_init(&m, UROCE_CM_ATTR_REQ, 3);
	UT_CHECK_EQ(uroce_cma_pack(&m, &h6, NULL, 0), 0);
	p = uroce_cm_priv(&m);
	UT_CHECK_EQ(p[0], 0x00);
	UT_CHECK_EQ(p[1], 0x60);
	UT_CHECK_EQ(p[2], 0x12);
	UT_CHECK_EQ(p[3], 0x34);
	UT_CHECK_MEM(p + 4, h6.src_addr, 16);
	UT_CHECK_MEM(p + 20, h6.dst_addr, 16);
	UT_CHECK_EQ(uroce_cma_hdr_get(p, UROCE_CM_REQ_PRIV_LEN, &g), 0);
	UT_CHECK_EQ(g.ip_version, 6);
	UT_CHECK_EQ(g.src_port, 0x1234);
	UT_CHECK_MEM(g.src_addr, h6.src_addr, 16);
	UT_CHECK_MEM(g.dst_addr, h6.dst_addr, 16);

	/* IPv4: only the last 4 bytes carry the address, the rest zero. */
	h6.ip_version = 4;
	UT_CHECK_EQ(uroce_cma_pack(&m, &h6, NULL, 0), 0);
	UT_CHECK_EQ(p[1], 0x40);
	for (int i = 4; i < 16; i++)
		UT_CHECK_EQ(p[i] | p[i + 16], 0);
	UT_CHECK_MEM(p + 16, h6.src_addr + 12, 4);
	UT_CHECK_MEM(p + 32, h6.dst_addr + 12, 4);
	UT_CHECK_EQ(uroce_cma_hdr_get(p, UROCE_CMA_HDR_LEN, &g), 0);
	UT_CHECK_EQ(g.ip_version, 4);
	UT_CHECK_MEM(g.src_addr + 12, h6.src_addr + 12, 4);

	/* Bad headers. */
	h6.ip_version = 5;
	UT_CHECK_EQ(uroce_cma_pack(&m, &h6, NULL, 0), -EINVAL);
	UT_CHECK_EQ(uroce_cma_hdr_get(p, UROCE_CMA_HDR_LEN - 1, &g), -EINVAL);
	p[1] = 0x50;
	UT_CHECK_EQ(uroce_cma_hdr_get(p, UROCE_CMA_HDR_LEN, &g), -EPROTO);
	p[1] = 0x40;
	p[0] = 0x01;
	UT_CHECK_EQ(uroce_cma_hdr_get(p, UROCE_CMA_HDR_LEN, &g), -EPROTO);
}

int
main(void)
{
	test_field_places();
	test_round_trips();
	test_req_known_answer();
	test_rep_known_answer();
	test_malformed();
	test_private_data();
	test_cma();
	return ut_summary();
}
