/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The modify_qp rules (lib/transport/qp_modify.c) against an expected table
 * written out here on its own: the Reset->Init->RTR->RTS rows of
 * ibv_modify_qp(3), the other rows from the IBTA modify-QP table as the
 * Linux core's ib_modify_qp_is_ok() enforces it, plus uroce's choices
 * (IBV_QP_RATE_LIMIT on the ways into RTS, SQE only for UC/UD/RAW_PACKET).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_log.h>

#include "transport_priv.h"
#include "uroce_qp_modify.h"
#include "uroce_test.h"

#define NSTATES	(IBV_QPS_ERR + 1)

/* Short names for the test's own table. */
#define ST	IBV_QP_STATE
#define CUR	IBV_QP_CUR_STATE
#define NOTIFY	IBV_QP_EN_SQD_ASYNC_NOTIFY
#define ACC	IBV_QP_ACCESS_FLAGS
#define PKEY	IBV_QP_PKEY_INDEX
#define PORT	IBV_QP_PORT
#define QKEY	IBV_QP_QKEY
#define AV	IBV_QP_AV
#define MTU	IBV_QP_PATH_MTU
#define TMO	IBV_QP_TIMEOUT
#define RETRY	IBV_QP_RETRY_CNT
#define RNR	IBV_QP_RNR_RETRY
#define RQPSN	IBV_QP_RQ_PSN
#define RDA	IBV_QP_MAX_QP_RD_ATOMIC
#define ALT	IBV_QP_ALT_PATH
#define MINRNR	IBV_QP_MIN_RNR_TIMER
#define SQPSN	IBV_QP_SQ_PSN
#define DRDA	IBV_QP_MAX_DEST_RD_ATOMIC
#define MIG	IBV_QP_PATH_MIG_STATE
#define DQPN	IBV_QP_DEST_QPN
#define RATE	IBV_QP_RATE_LIMIT

#define RESET	IBV_QPS_RESET
#define INIT	IBV_QPS_INIT
#define RTR	IBV_QPS_RTR
#define RTS	IBV_QPS_RTS
#define SQD	IBV_QPS_SQD
#define SQE	IBV_QPS_SQE
#define ERR	IBV_QPS_ERR

struct row {
	enum ibv_qp_type type;
	enum ibv_qp_state cur, next;
	unsigned int req;	/* with ST when the state changes */
	unsigned int opt;	/* with ST for a same-state modify */
};

/* Everything but "any state -> RESET / ERR", which expect_row() adds. */
static const struct row rows[] = {
	{ IBV_QPT_RC, RESET, INIT, ST | PKEY | PORT | ACC, 0 },
	{ IBV_QPT_RC, INIT, INIT, 0, ST | PKEY | PORT | ACC },
	{ IBV_QPT_RC, INIT, RTR, ST | AV | MTU | DQPN | RQPSN | DRDA | MINRNR,
	  ALT | ACC | PKEY | RATE },
	{ IBV_QPT_RC, RTR, RTS, ST | SQPSN | RDA | RETRY | RNR | TMO,
	  CUR | ALT | ACC | MINRNR | MIG | RATE },
	{ IBV_QPT_RC, RTS, RTS, 0, ST | CUR | ACC | ALT | MIG | MINRNR | RATE },
	{ IBV_QPT_RC, RTS, SQD, ST, NOTIFY },
	{ IBV_QPT_RC, SQD, RTS, ST, CUR | ALT | ACC | MINRNR | MIG | RATE },
	{ IBV_QPT_RC, SQD, SQD, 0, ST | PORT | AV | TMO | RETRY | RNR | RDA |
	  DRDA | ALT | ACC | PKEY | MINRNR | MIG },

	{ IBV_QPT_UC, RESET, INIT, ST | PKEY | PORT | ACC, 0 },
	{ IBV_QPT_UC, INIT, INIT, 0, ST | PKEY | PORT | ACC },
	{ IBV_QPT_UC, INIT, RTR, ST | AV | MTU | DQPN | RQPSN, ALT | ACC | PKEY },
	{ IBV_QPT_UC, RTR, RTS, ST | SQPSN, CUR | ALT | ACC | MIG | RATE },
	{ IBV_QPT_UC, RTS, RTS, 0, ST | CUR | ACC | ALT | MIG | RATE },
	{ IBV_QPT_UC, RTS, SQD, ST, NOTIFY },
	{ IBV_QPT_UC, SQD, RTS, ST, CUR | ALT | ACC | MIG | RATE },
	{ IBV_QPT_UC, SQD, SQD, 0, ST | AV | ALT | ACC | PKEY | MIG },
	{ IBV_QPT_UC, SQE, RTS, ST, CUR | ACC },

	{ IBV_QPT_UD, RESET, INIT, ST | PKEY | PORT | QKEY, 0 },
	{ IBV_QPT_UD, INIT, INIT, 0, ST | PKEY | PORT | QKEY },
	{ IBV_QPT_UD, INIT, RTR, ST, PKEY | QKEY },
	{ IBV_QPT_UD, RTR, RTS, ST | SQPSN, CUR | QKEY | RATE },
	{ IBV_QPT_UD, RTS, RTS, 0, ST | CUR | QKEY | RATE },
	{ IBV_QPT_UD, RTS, SQD, ST, NOTIFY },
	{ IBV_QPT_UD, SQD, RTS, ST, CUR | QKEY | RATE },
	{ IBV_QPT_UD, SQD, SQD, 0, ST | PKEY | QKEY },
	{ IBV_QPT_UD, SQE, RTS, ST, CUR | QKEY },

	{ IBV_QPT_RAW_PACKET, RESET, INIT, ST | PORT, 0 },
	{ IBV_QPT_RAW_PACKET, INIT, INIT, 0, ST },
	{ IBV_QPT_RAW_PACKET, INIT, RTR, ST, 0 },
	{ IBV_QPT_RAW_PACKET, RTR, RTS, ST, RATE },
	{ IBV_QPT_RAW_PACKET, RTS, RTS, 0, ST | RATE },
	{ IBV_QPT_RAW_PACKET, RTS, SQD, ST, 0 },
	{ IBV_QPT_RAW_PACKET, SQD, RTS, ST, RATE },
	{ IBV_QPT_RAW_PACKET, SQD, SQD, 0, ST },
	{ IBV_QPT_RAW_PACKET, SQE, RTS, ST, 0 },

	{ IBV_QPT_XRC_SEND, RESET, INIT, ST | PKEY | PORT | ACC, 0 },
	{ IBV_QPT_XRC_SEND, INIT, INIT, 0, ST | PKEY | PORT | ACC },
	{ IBV_QPT_XRC_SEND, INIT, RTR, ST | AV | MTU | DQPN | RQPSN,
	  ALT | ACC | PKEY },
	{ IBV_QPT_XRC_SEND, RTR, RTS, ST | TMO | RETRY | RNR | SQPSN | RDA,
	  CUR | ALT | ACC | MIG },
	{ IBV_QPT_XRC_SEND, RTS, RTS, 0, ST | CUR | ACC | ALT | MIG },
	{ IBV_QPT_XRC_SEND, RTS, SQD, ST, NOTIFY },
	{ IBV_QPT_XRC_SEND, SQD, RTS, ST, CUR | ALT | ACC | MIG },
	{ IBV_QPT_XRC_SEND, SQD, SQD, 0, ST | PORT | AV | TMO | RETRY | RNR |
	  RDA | ALT | ACC | PKEY | MIG },

	{ IBV_QPT_XRC_RECV, RESET, INIT, ST | PKEY | PORT | ACC, 0 },
	{ IBV_QPT_XRC_RECV, INIT, INIT, 0, ST | PKEY | PORT | ACC },
	{ IBV_QPT_XRC_RECV, INIT, RTR, ST | AV | MTU | DQPN | RQPSN | DRDA |
	  MINRNR, ALT | ACC | PKEY },
	{ IBV_QPT_XRC_RECV, RTR, RTS, ST | TMO | SQPSN,
	  CUR | ALT | ACC | MINRNR | MIG },
	{ IBV_QPT_XRC_RECV, RTS, RTS, 0, ST | CUR | ACC | ALT | MIG | MINRNR },
	{ IBV_QPT_XRC_RECV, RTS, SQD, ST, NOTIFY },
	{ IBV_QPT_XRC_RECV, SQD, RTS, ST, CUR | ALT | ACC | MINRNR | MIG },
	{ IBV_QPT_XRC_RECV, SQD, SQD, 0, ST | PORT | AV | TMO | DRDA | ALT |
	  ACC | PKEY | MINRNR | MIG },
};

static const enum ibv_qp_type types[] = {
	IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_RAW_PACKET,
	IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV,
};

static const struct uroce_qp_limits lim_apm = {
	.port_cnt = 1,
	.pkey_tbl_len = 1,
	.gid_tbl_len = 16,
	.active_mtu = IBV_MTU_1024,
	.max_qp_rd_atom = 16,
	.max_qp_init_rd_atom = 8,
	.rate_limit_min = 1000,
	.rate_limit_max = 100000000,
	.apm = true,
};
static struct uroce_qp_limits lim_noapm;

/* The expected row for (type, cur, next), or false if there is none. */
static bool
expect_row(enum ibv_qp_type type, enum ibv_qp_state cur,
	   enum ibv_qp_state next, struct row *out)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i].type == type && rows[i].cur == cur &&
		    rows[i].next == next) {
			*out = rows[i];
			return true;
		}
	}
	/* Any state to RESET; any but RESET to ERR; X->X needs no ST. */
	if (next == RESET || (next == ERR && cur != RESET)) {
		*out = (struct row){ type, cur, next, ST, 0 };
		if (cur == next)
			*out = (struct row){ type, cur, next, 0, ST };
		return true;
	}
	return false;
}

/* Would the expected table take this mask (attr.qp_state == next)? */
static bool
expect_ok(enum ibv_qp_type type, enum ibv_qp_state cur,
	  enum ibv_qp_state next, unsigned int mask)
{
	struct row r;

	if (!(mask & ST))
		next = cur;
	if (!expect_row(type, cur, next, &r))
		return false;
	return (mask & r.req) == r.req && (mask & ~(r.req | r.opt)) == 0;
}

/* Attributes that pass every range rule under lim_apm. */
static struct ibv_qp_attr
good_attr(enum ibv_qp_state cur, enum ibv_qp_state next)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = next;
	a.cur_qp_state = cur;
	a.path_mtu = IBV_MTU_1024;
	a.path_mig_state = IBV_MIG_MIGRATED;
	a.qkey = 0x11111111;
	a.rq_psn = 0x123456;
	a.sq_psn = 0x654321;
	a.dest_qp_num = 0x12;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.dgid.raw[15] = 2;
	a.alt_ah_attr = a.ah_attr;
	a.en_sqd_async_notify = 1;
	a.max_rd_atomic = 1;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.port_num = 1;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.alt_port_num = 1;
	a.alt_timeout = 14;
	return a;
}

static int
check(const struct uroce_qp_limits *lim, enum ibv_qp_type type,
      enum ibv_qp_state cur, enum ibv_qp_state next, unsigned int mask)
{
	struct ibv_qp_attr a = good_attr(cur, next);

	return uroce_qp_modify_check(lim, type, cur, &a, (int)mask);
}

static void
test_names(void)
{
	static const char *const st[] = {
		"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
	};
	int i;

	for (i = 0; i < NSTATES; i++)
		UT_CHECK(strcmp(uroce_qp_state_name(i), st[i]) == 0);
	UT_CHECK(strcmp(uroce_qp_state_name(IBV_QPS_UNKNOWN), "UNKNOWN") == 0);
	UT_CHECK(strcmp(uroce_qp_state_name(99), "UNKNOWN") == 0);
	UT_CHECK(strcmp(uroce_qp_attr_mask_name(MTU), "IBV_QP_PATH_MTU") == 0);
	UT_CHECK(strcmp(uroce_qp_attr_mask_name(ST), "IBV_QP_STATE") == 0);
	UT_CHECK(strcmp(uroce_qp_attr_mask_name(RATE), "IBV_QP_RATE_LIMIT") == 0);
	for (i = 0; i <= 20; i++)
		UT_CHECK(uroce_qp_attr_mask_name(1 << i) != NULL);
	for (i = 21; i <= 24; i++)
		UT_CHECK(uroce_qp_attr_mask_name(1 << i) == NULL);
	UT_CHECK(uroce_qp_attr_mask_name(0) == NULL);
	UT_CHECK(uroce_qp_attr_mask_name(ST | CUR) == NULL);
	UT_CHECK(uroce_qp_attr_mask_name((int)(1u << 31)) == NULL);
	UT_CHECK(strcmp(uroce_qp_type_name(IBV_QPT_RAW_PACKET), "RAW_PACKET") == 0);
	UT_CHECK(strcmp(uroce_qp_type_name(IBV_QPT_XRC_RECV), "XRC_RECV") == 0);
	UT_CHECK(strcmp(uroce_qp_type_name(IBV_QPT_DRIVER), "UNKNOWN") == 0);
}

/* Required mask alone, with each optional bit, with all of them. */
static void
test_valid_transitions(void)
{
	size_t i;
	int b;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];

		UT_CHECK_EQ(check(&lim_apm, r->type, r->cur, r->next, r->req), 0);
		for (b = 0; b < 32; b++) {
			unsigned int bit = 1u << b;

			if (r->opt & bit)
				UT_CHECK_EQ(check(&lim_apm, r->type, r->cur,
						  r->next, r->req | bit), 0);
		}
		UT_CHECK_EQ(check(&lim_apm, r->type, r->cur, r->next,
				  r->req | r->opt), 0);
		UT_NOTE("%s %s->%s", uroce_qp_type_name(r->type),
			uroce_qp_state_name(r->cur), uroce_qp_state_name(r->next));
	}
}

/* Any state to RESET, any but RESET to ERR, for every type. */
static void
test_reset_err(void)
{
	size_t t;
	int s;

	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		for (s = 0; s < NSTATES; s++) {
			UT_CHECK_EQ(check(&lim_apm, types[t], s, RESET, ST), 0);
			UT_CHECK_EQ(check(&lim_apm, types[t], s, ERR, ST),
				    s == RESET ? -EINVAL : 0);
			/* nothing but the state */
			UT_CHECK_EQ(check(&lim_apm, types[t], s, ERR, ST | ACC),
				    -EINVAL);
		}
	}
}

static void
test_invalid_pairs(void)
{
	const unsigned int all = 0x021fffffu;	/* every defined bit */
	struct row r;
	size_t t;
	int cur, next;

	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		for (cur = 0; cur < NSTATES; cur++) {
			for (next = 0; next < NSTATES; next++) {
				if (expect_row(types[t], cur, next, &r))
					continue;
				UT_CHECK_EQ(check(&lim_apm, types[t], cur, next,
						  ST), -EINVAL);
				UT_CHECK_EQ(check(&lim_apm, types[t], cur, next,
						  all), -EINVAL);
				UT_NOTE("%s %d->%d", uroce_qp_type_name(types[t]),
					cur, next);
			}
		}
	}
}

/*
 * Each required bit removed fails. Without IBV_QP_STATE the request is a
 * cur->cur modify, so it must do what the expected cur->cur row says.
 */
static void
test_required_removed(void)
{
	size_t i;
	int b;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];

		for (b = 0; b < 32; b++) {
			unsigned int bit = 1u << b, m = r->req & ~bit;
			int want;

			if (!(r->req & bit))
				continue;
			want = -EINVAL;
			if (bit == ST && expect_ok(r->type, r->cur, r->cur, m))
				want = 0;
			UT_CHECK_EQ(check(&lim_apm, r->type, r->cur, r->next, m),
				    want);
			UT_NOTE("%s %s->%s without bit %d",
				uroce_qp_type_name(r->type),
				uroce_qp_state_name(r->cur),
				uroce_qp_state_name(r->next), b);
		}
	}
	/* e.g. RESET->INIT minus the state is RESET->RESET with attributes */
	UT_CHECK_EQ(check(&lim_apm, IBV_QPT_RC, RESET, INIT, PKEY | PORT | ACC),
		    -EINVAL);
	/* ... and RAW INIT->RTR minus the state is a no-op INIT->INIT */
	UT_CHECK_EQ(check(&lim_apm, IBV_QPT_RAW_PACKET, INIT, RTR, 0), 0);
}

/* Each bit outside required|optional|STATE, all 32, fails. */
static void
test_extra_bits(void)
{
	size_t i;
	int b;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];

		for (b = 0; b < 32; b++) {
			unsigned int bit = 1u << b;

			if ((r->req | r->opt | ST) & bit)
				continue;
			UT_CHECK_EQ(check(&lim_apm, r->type, r->cur, r->next,
					  r->req | bit), -EINVAL);
			UT_NOTE("%s %s->%s with bit %d",
				uroce_qp_type_name(r->type),
				uroce_qp_state_name(r->cur),
				uroce_qp_state_name(r->next), b);
		}
	}
}

/* Without APM, the alternate path attributes are unsupported: -EINVAL. */
static void
test_no_apm(void)
{
	char why[UROCE_QP_MODIFY_WHY_LEN];
	struct ibv_qp_attr a;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];

		UT_CHECK_EQ(check(&lim_noapm, r->type, r->cur, r->next, r->req), 0);
		if (r->opt & ALT)
			UT_CHECK_EQ(check(&lim_noapm, r->type, r->cur, r->next,
					  r->req | ALT), -EINVAL);
		if (r->opt & MIG)
			UT_CHECK_EQ(check(&lim_noapm, r->type, r->cur, r->next,
					  r->req | MIG), -EINVAL);
	}
	a = good_attr(RTS, RTS);
	UT_CHECK_EQ(uroce_qp_modify_check_why(&lim_noapm, IBV_QPT_RC, RTS, &a,
					      ALT, why, sizeof(why)), -EINVAL);
	UT_CHECK(strstr(why, "APM") != NULL);
}

struct range_case {
	const char *what;
	enum ibv_qp_type type;
	enum ibv_qp_state cur, next;
	unsigned int extra;	/* added to the row's required mask */
	size_t off, size;
	uint64_t ok;		/* accepted (the boundary) */
	uint64_t bad;		/* rejected (one past it) */
	bool has_bad;
};

#define FLD(m)	offsetof(struct ibv_qp_attr, m), \
		sizeof(((struct ibv_qp_attr *)0)->m)
#define RC	IBV_QPT_RC
#define OK_BAD(ok, bad)	(ok), (bad), true
#define ONLY_OK(ok)	(ok), 0, false

/* One case per range rule, at the boundary. Limits: lim_apm. */
static const struct range_case ranges[] = {
	{ "port_num max", RC, RESET, INIT, 0, FLD(port_num), OK_BAD(1, 2) },
	{ "port_num min", RC, RESET, INIT, 0, FLD(port_num), OK_BAD(1, 0) },
	{ "pkey_index", RC, RESET, INIT, 0, FLD(pkey_index), OK_BAD(0, 1) },
	{ "access flags", RC, RESET, INIT, 0, FLD(qp_access_flags),
	  OK_BAD(0xf, IBV_ACCESS_MW_BIND) },
	{ "access none", RC, RESET, INIT, 0, FLD(qp_access_flags),
	  OK_BAD(0, IBV_ACCESS_ZERO_BASED) },
	{ "access odp", RC, INIT, INIT, ACC, FLD(qp_access_flags),
	  OK_BAD(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ON_DEMAND,
		 IBV_ACCESS_HUGETLB) },
	{ "access relaxed", RC, INIT, INIT, ACC, FLD(qp_access_flags),
	  OK_BAD(IBV_ACCESS_REMOTE_WRITE, IBV_ACCESS_RELAXED_ORDERING) },
	{ "qkey", IBV_QPT_UD, RESET, INIT, 0, FLD(qkey), ONLY_OK(0xffffffff) },
	{ "path_mtu max", RC, INIT, RTR, 0, FLD(path_mtu),
	  OK_BAD(IBV_MTU_1024, IBV_MTU_2048) },
	{ "path_mtu min", RC, INIT, RTR, 0, FLD(path_mtu),
	  OK_BAD(IBV_MTU_256, 0) },
	{ "rq_psn", RC, INIT, RTR, 0, FLD(rq_psn), OK_BAD(0xffffff, 0x1000000) },
	{ "dest_qp_num", RC, INIT, RTR, 0, FLD(dest_qp_num),
	  OK_BAD(0xffffff, 0x1000000) },
	{ "min_rnr_timer", RC, INIT, RTR, 0, FLD(min_rnr_timer), OK_BAD(31, 32) },
	{ "max_dest_rd_atomic", RC, INIT, RTR, 0, FLD(max_dest_rd_atomic),
	  OK_BAD(16, 17) },
	{ "ah is_global", RC, INIT, RTR, 0, FLD(ah_attr.is_global),
	  OK_BAD(1, 0) },
	{ "ah is_global 2", RC, INIT, RTR, 0, FLD(ah_attr.is_global),
	  OK_BAD(1, 2) },
	{ "ah sgid_index", RC, INIT, RTR, 0, FLD(ah_attr.grh.sgid_index),
	  OK_BAD(15, 16) },
	{ "ah flow_label", RC, INIT, RTR, 0, FLD(ah_attr.grh.flow_label),
	  OK_BAD(0xfffff, 0x100000) },
	{ "ah port_num", RC, INIT, RTR, 0, FLD(ah_attr.port_num), OK_BAD(1, 2) },
	{ "ah port_num 0", RC, INIT, RTR, 0, FLD(ah_attr.port_num),
	  OK_BAD(0, 255) },
	{ "ah static_rate max", RC, INIT, RTR, 0, FLD(ah_attr.static_rate),
	  OK_BAD(IBV_RATE_1200_GBPS, IBV_RATE_1200_GBPS + 1) },
	{ "ah static_rate 1", RC, INIT, RTR, 0, FLD(ah_attr.static_rate),
	  OK_BAD(IBV_RATE_2_5_GBPS, 1) },
	{ "ah static_rate 0", RC, INIT, RTR, 0, FLD(ah_attr.static_rate),
	  ONLY_OK(IBV_RATE_MAX) },
	{ "ah sl", RC, INIT, RTR, 0, FLD(ah_attr.sl), OK_BAD(7, 8) },
	{ "ah hop_limit", RC, INIT, RTR, 0, FLD(ah_attr.grh.hop_limit),
	  ONLY_OK(255) },
	{ "ah traffic_class", RC, INIT, RTR, 0, FLD(ah_attr.grh.traffic_class),
	  ONLY_OK(255) },
	{ "timeout", RC, RTR, RTS, 0, FLD(timeout), OK_BAD(31, 32) },
	{ "retry_cnt", RC, RTR, RTS, 0, FLD(retry_cnt), OK_BAD(7, 8) },
	{ "rnr_retry", RC, RTR, RTS, 0, FLD(rnr_retry), OK_BAD(7, 8) },
	{ "sq_psn", RC, RTR, RTS, 0, FLD(sq_psn), OK_BAD(0xffffff, 0x1000000) },
	{ "max_rd_atomic", RC, RTR, RTS, 0, FLD(max_rd_atomic), OK_BAD(8, 9) },
	{ "rate_limit max", RC, RTR, RTS, RATE, FLD(rate_limit),
	  OK_BAD(100000000, 100000001) },
	{ "rate_limit min", RC, RTR, RTS, RATE, FLD(rate_limit),
	  OK_BAD(1000, 999) },
	{ "rate_limit off", IBV_QPT_RAW_PACKET, RTS, RTS, RATE, FLD(rate_limit),
	  ONLY_OK(0) },
	{ "alt_timeout", RC, RTR, RTS, ALT, FLD(alt_timeout), OK_BAD(31, 32) },
	{ "alt_port_num", RC, RTR, RTS, ALT, FLD(alt_port_num), OK_BAD(1, 2) },
	{ "alt_pkey_index", RC, RTR, RTS, ALT, FLD(alt_pkey_index),
	  OK_BAD(0, 1) },
	{ "alt ah sgid_index", RC, RTR, RTS, ALT,
	  FLD(alt_ah_attr.grh.sgid_index), OK_BAD(15, 16) },
	{ "alt ah is_global", RC, RTR, RTS, ALT, FLD(alt_ah_attr.is_global),
	  OK_BAD(1, 0) },
	{ "alt ah sl", RC, RTR, RTS, ALT, FLD(alt_ah_attr.sl), OK_BAD(7, 8) },
	{ "path_mig_state", RC, RTR, RTS, MIG, FLD(path_mig_state),
	  OK_BAD(IBV_MIG_ARMED, IBV_MIG_ARMED + 1) },
	{ "cur_qp_state RTS", RC, RTS, RTS, CUR, FLD(cur_qp_state),
	  OK_BAD(RTS, RTR) },
	{ "cur_qp_state SQD", IBV_QPT_UC, SQD, RTS, CUR, FLD(cur_qp_state),
	  OK_BAD(SQD, RTS) },
	{ "cur_qp_state SQE", IBV_QPT_UD, SQE, RTS, CUR, FLD(cur_qp_state),
	  OK_BAD(SQE, RTS) },
	{ "cur_qp_state RTR", IBV_QPT_XRC_RECV, RTR, RTS, CUR,
	  FLD(cur_qp_state), OK_BAD(RTR, 42) },
	{ "qp_state", RC, RTS, ERR, 0, FLD(qp_state),
	  OK_BAD(ERR, IBV_QPS_UNKNOWN) },
	{ "en_sqd_async_notify", RC, RTS, SQD, NOTIFY,
	  FLD(en_sqd_async_notify), ONLY_OK(255) },
};

static void
set_field(struct ibv_qp_attr *a, size_t off, size_t size, uint64_t v)
{
	unsigned char *p = (unsigned char *)a + off;
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	if (size == 1)
		memcpy(p, &v8, 1);
	else if (size == 2)
		memcpy(p, &v16, 2);
	else if (size == 4)
		memcpy(p, &v32, 4);
	else
		UT_CHECK(!"unexpected field size");
}

static void
test_ranges(void)
{
	size_t i;

	for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		const struct range_case *rc = &ranges[i];
		struct ibv_qp_attr a = good_attr(rc->cur, rc->next);
		unsigned int mask;
		struct row r;

		if (!UT_CHECK(expect_row(rc->type, rc->cur, rc->next, &r)))
			continue;
		mask = r.req | rc->extra;
		set_field(&a, rc->off, rc->size, rc->ok);
		UT_CHECK_EQ(uroce_qp_modify_check(&lim_apm, rc->type, rc->cur,
						  &a, (int)mask), 0);
		if (rc->has_bad) {
			set_field(&a, rc->off, rc->size, rc->bad);
			UT_CHECK_EQ(uroce_qp_modify_check(&lim_apm, rc->type,
							  rc->cur, &a,
							  (int)mask), -EINVAL);
		}
		UT_NOTE("range case \"%s\"", rc->what);
	}
}

/* Types, states and pointers the caller got wrong. */
static void
test_bad_inputs(void)
{
	struct ibv_qp_attr a = good_attr(RESET, INIT);
	const int init_mask = ST | PKEY | PORT | ACC;

	UT_CHECK_EQ(uroce_qp_modify_check(&lim_apm, 0, RESET, &a, init_mask),
		    -EINVAL);
	UT_CHECK_EQ(uroce_qp_modify_check(&lim_apm, 5, RESET, &a, init_mask),
		    -EINVAL);
	UT_CHECK_EQ(uroce_qp_modify_check(&lim_apm, IBV_QPT_DRIVER, RESET, &a,
					  init_mask), -EINVAL);
	UT_CHECK_EQ(uroce_qp_modify_check(&lim_apm, IBV_QPT_RC,
					  IBV_QPS_UNKNOWN, &a, init_mask),
		    -EINVAL);
	UT_CHECK_EQ(uroce_qp_modify_check(&lim_apm, IBV_QPT_RC,
					  (enum ibv_qp_state)-1, &a, init_mask),
		    -EINVAL);
	a.qp_state = (enum ibv_qp_state)-1;
	UT_CHECK_EQ(uroce_qp_modify_check(&lim_apm, IBV_QPT_RC, RESET, &a,
					  init_mask), -EINVAL);
	UT_CHECK_EQ(uroce_qp_modify_check(&lim_apm, IBV_QPT_RC, RESET, NULL,
					  init_mask), -EINVAL);
	/* a mask of 0 needs no attributes and is a no-op */
	UT_CHECK_EQ(uroce_qp_modify_check(&lim_apm, IBV_QPT_RC, RESET, NULL, 0),
		    0);
}

/* Mask 0 and attribute-only masks stay in the current state. */
static void
test_same_state(void)
{
	size_t t;
	int s;

	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		for (s = 0; s < NSTATES; s++) {
			UT_CHECK_EQ(check(&lim_apm, types[t], s, s, 0),
				    expect_ok(types[t], s, s, 0) ? 0 : -EINVAL);
			UT_CHECK_EQ(check(&lim_apm, types[t], s, s, RATE),
				    expect_ok(types[t], s, s, RATE) ? 0 : -EINVAL);
		}
	}
	/* ibv_modify_qp_rate_limit() as mlx5 does it: RTS, mask RATE only */
	UT_CHECK_EQ(check(&lim_apm, IBV_QPT_RAW_PACKET, RTS, RTS, RATE), 0);
	/* but RTR->RTR does not exist */
	UT_CHECK_EQ(check(&lim_apm, IBV_QPT_RC, RTR, RTR, 0), -EINVAL);
}

static void
test_why(void)
{
	struct ibv_qp_attr a = good_attr(INIT, RTR);
	const int rtr = ST | AV | DQPN | RQPSN | DRDA | MINRNR;
	char why[UROCE_QP_MODIFY_WHY_LEN];
	char small[8];
	int level = rte_log_get_level(uroce_transport_logtype);

	/* the component's log type, on once to run that path */
	UT_CHECK_EQ(rte_log_register("uroce.transport"), uroce_transport_logtype);
	UT_CHECK(level >= 0);
	rte_log_set_level(uroce_transport_logtype, RTE_LOG_DEBUG);
	UT_CHECK_EQ(uroce_qp_modify_check_why(&lim_apm, IBV_QPT_RC, INIT, &a,
					      rtr, why, sizeof(why)), -EINVAL);
	rte_log_set_level(uroce_transport_logtype, (uint32_t)level);
	UT_CHECK(strcmp(why, "RC modify INIT->RTR: missing required "
			"IBV_QP_PATH_MTU") == 0);
	UT_CHECK_EQ(uroce_qp_modify_check_why(&lim_apm, IBV_QPT_RC, INIT, &a,
					      rtr | MTU, why, sizeof(why)), 0);
	UT_CHECK_EQ(why[0], '\0');
	UT_CHECK_EQ(uroce_qp_modify_check_why(&lim_apm, IBV_QPT_RC, INIT, &a,
					      rtr | MTU | QKEY, small,
					      sizeof(small)), -EINVAL);
	UT_CHECK(strcmp(small, "RC modi") == 0);
	a = good_attr(RESET, ERR);
	UT_CHECK_EQ(uroce_qp_modify_check_why(&lim_apm, IBV_QPT_UD, RESET, &a,
					      ST, why, sizeof(why)), -EINVAL);
	UT_CHECK(strcmp(why, "UD modify RESET->ERR: no such transition") == 0);
}

/* A failed check, with apply not called, leaves the QP as it was. */
static void
test_failed_check_changes_nothing(void)
{
	struct ibv_qp_attr stored, snap, a;
	enum ibv_qp_state state = INIT;
	size_t i;

	memset(&stored, 0x5a, sizeof(stored));
	stored.qp_state = INIT;
	snap = stored;
	for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		const struct range_case *rc = &ranges[i];
		struct row r;
		unsigned int mask;

		if (!rc->has_bad || !expect_row(rc->type, rc->cur, rc->next, &r))
			continue;
		a = good_attr(rc->cur, rc->next);
		set_field(&a, rc->off, rc->size, rc->bad);
		mask = r.req | rc->extra | ST;
		if (uroce_qp_modify_check(&lim_apm, rc->type, rc->cur, &a,
					  (int)mask) == 0)
			uroce_qp_modify_apply(&stored, &state, &a, (int)mask);
	}
	UT_CHECK_MEM(&stored, &snap, sizeof(stored));
	UT_CHECK_EQ(state, INIT);
}

/* Check and apply one step of a QP's life; returns the check's result. */
static int
step(struct ibv_qp_attr *stored, enum ibv_qp_state *state,
     const struct ibv_qp_attr *a, int mask)
{
	int ret = uroce_qp_modify_check(&lim_apm, IBV_QPT_RC, *state, a, mask);

	if (ret == 0)
		uroce_qp_modify_apply(stored, state, a, mask);
	return ret;
}

static void
test_apply(void)
{
	struct ibv_qp_attr stored, a;
	enum ibv_qp_state state = RESET;

	memset(&stored, 0xa5, sizeof(stored));
	a = good_attr(RESET, INIT);
	a.qkey = 0x77;			/* not in the mask: not stored */
	UT_CHECK_EQ(step(&stored, &state, &a, ST | PKEY | PORT | ACC), 0);
	UT_CHECK_EQ(state, INIT);
	UT_CHECK_EQ(stored.qp_state, INIT);
	UT_CHECK_EQ(stored.port_num, 1);
	UT_CHECK_EQ(stored.pkey_index, 0);
	UT_CHECK_EQ(stored.qp_access_flags, a.qp_access_flags);
	UT_CHECK_EQ(stored.qkey, 0xa5a5a5a5);

	a = good_attr(INIT, RTR);
	a.ah_attr.port_num = 0;		/* the QP's port */
	a.ah_attr.grh.dgid.raw[0] = 0xfe;
	UT_CHECK_EQ(step(&stored, &state, &a, ST | AV | MTU | DQPN | RQPSN |
			 DRDA | MINRNR), 0);
	UT_CHECK_EQ(state, RTR);
	UT_CHECK_EQ(stored.ah_attr.port_num, 1);
	UT_CHECK_MEM(&stored.ah_attr.grh, &a.ah_attr.grh, sizeof(a.ah_attr.grh));
	UT_CHECK_EQ(stored.ah_attr.is_global, 1);
	UT_CHECK_EQ(stored.path_mtu, IBV_MTU_1024);
	UT_CHECK_EQ(stored.dest_qp_num, a.dest_qp_num);
	UT_CHECK_EQ(stored.rq_psn, a.rq_psn);
	UT_CHECK_EQ(stored.min_rnr_timer, 12);

	a = good_attr(RTR, RTS);
	a.alt_ah_attr.port_num = 0;
	a.alt_port_num = 1;
	UT_CHECK_EQ(step(&stored, &state, &a, ST | SQPSN | RDA | RETRY | RNR |
			 TMO | CUR | ALT), 0);
	UT_CHECK_EQ(state, RTS);
	UT_CHECK_EQ(stored.sq_psn, a.sq_psn);
	UT_CHECK_EQ(stored.timeout, 14);
	UT_CHECK_EQ(stored.alt_ah_attr.port_num, 1);
	UT_CHECK_EQ(stored.alt_timeout, 14);
	UT_CHECK_EQ((uint32_t)stored.cur_qp_state, 0xa5a5a5a5);	/* not stored */

	/* attributes only: the state stays */
	a = good_attr(RTS, RTS);
	a.qp_state = SQD;		/* ignored without IBV_QP_STATE */
	a.rate_limit = 5000;
	UT_CHECK_EQ(step(&stored, &state, &a, RATE), 0);
	UT_CHECK_EQ(state, RTS);
	UT_CHECK_EQ(stored.qp_state, RTS);
	UT_CHECK_EQ(stored.rate_limit, 5000);

	/* a failing step changes nothing */
	a = good_attr(RTS, SQD);
	UT_CHECK_EQ(step(&stored, &state, &a, ST | NOTIFY | TMO), -EINVAL);
	UT_CHECK_EQ(state, RTS);
	UT_CHECK_EQ(step(&stored, &state, &a, ST | NOTIFY), 0);
	UT_CHECK_EQ(state, SQD);
	UT_CHECK_EQ(stored.en_sqd_async_notify, 1);
	UT_CHECK_EQ(stored.timeout, 14);
	a = good_attr(SQD, ERR);
	UT_CHECK_EQ(step(&stored, &state, &a, ST), 0);
	UT_CHECK_EQ(state, ERR);
	a = good_attr(ERR, RESET);
	UT_CHECK_EQ(step(&stored, &state, &a, ST), 0);
	UT_CHECK_EQ(state, RESET);
}

int
main(void)
{
	lim_noapm = lim_apm;
	lim_noapm.apm = false;

	test_names();
	test_valid_transitions();
	test_reset_err();
	test_invalid_pairs();
	test_required_removed();
	test_extra_bits();
	test_no_apm();
	test_ranges();
	test_bad_inputs();
	test_same_state();
	test_why();
	test_failed_check_changes_nothing();
	test_apply();
	return ut_summary();
}
