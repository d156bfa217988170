/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * ibv_modify_qp() rules as data.
 *
 * One [cur][next] table per QP type says which transitions exist and which
 * attributes each requires and accepts (IBTA Vol. 1, 11.2.5.2 Modify Queue
 * Pair, as tabled in ibv_modify_qp(3) and as the Linux core enforces it).
 * One rule per mask bit checks the range of that attribute's value, and one
 * row per stored field says what uroce_qp_modify_apply() copies.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>

#include "transport_priv.h"
#include "uroce_qp_modify.h"

RTE_LOG_REGISTER_SUFFIX(uroce_transport_logtype, transport, NOTICE);

#define QPS_CNT		(IBV_QPS_ERR + 1)
#define PSN_MAX		0xffffffu	/* 24-bit PSN (IBTA 9.2 BTH) */
#define QPN_MAX		0xffffffu	/* 24-bit QP number */
#define FLOW_LABEL_MAX	0xfffffu	/* 20-bit IPv6/GRH flow label */
#define TIMER_MAX	31		/* 5-bit timeout, min RNR timer codes */
#define RETRY_MAX	7		/* 3-bit retry and RNR retry counts */
#define SL_MAX		7		/* RoCE: SL is the 802.1Q PCP */

/* ---------------------------------------------------------------------------
 * Transitions. IBV_QP_STATE is not listed: it names the next state, so it
 * is present whenever next != cur, and always accepted.
 */
struct qp_trans {
	bool valid;
	uint32_t req;	/* attributes the transition requires */
	uint32_t opt;	/* attributes it accepts besides */
};

#define NOP		{ .valid = true }
#define TRANS(r, o)	{ .valid = true, .req = (r), .opt = (o) }

/* Attribute groups that recur across the tables. */
#define CONN_INIT	(IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define UD_INIT		(IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)
#define CONN_RTR	(IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | \
			 IBV_QP_RQ_PSN)
#define RESP_RES	(IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define REQ_RTS		(IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
			 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)
#define APM		(IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE)
#define CONN_TO_RTS	(IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | APM)
#define CONN_SQD_SQD	(IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT | \
			 IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | \
			 IBV_QP_PKEY_INDEX | IBV_QP_PATH_MIG_STATE)
#define UD_TO_RTS	(IBV_QP_CUR_STATE | IBV_QP_QKEY)

/*
 * Every state but RESET may go to RESET and ERR; RESET->RESET and ERR->ERR
 * are no-ops; RESET->ERR does not exist (Linux ib_modify_qp_is_ok()).
 *
 * IBV_QP_RATE_LIMIT (packet pacing, not IBTA) is accepted on the ways into
 * RTS (and RC INIT->RTR, as Linux accepts it there) for RC, UC, UD and
 * RAW_PACKET: the pacer serves every QP type but XRC.
 */
static const struct qp_trans rc_trans[QPS_CNT][QPS_CNT] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_INIT]  = TRANS(CONN_INIT, 0),
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_INIT]  = TRANS(0, CONN_INIT),
		[IBV_QPS_RTR]   = TRANS(CONN_RTR | RESP_RES,
					IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
					IBV_QP_PKEY_INDEX | IBV_QP_RATE_LIMIT),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(REQ_RTS, CONN_TO_RTS | IBV_QP_MIN_RNR_TIMER |
					IBV_QP_RATE_LIMIT),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(0, CONN_TO_RTS | IBV_QP_MIN_RNR_TIMER |
					IBV_QP_RATE_LIMIT),
		[IBV_QPS_SQD]   = TRANS(0, IBV_QP_EN_SQD_ASYNC_NOTIFY),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(0, CONN_TO_RTS | IBV_QP_MIN_RNR_TIMER |
					IBV_QP_RATE_LIMIT),
		[IBV_QPS_SQD]   = TRANS(0, CONN_SQD_SQD | IBV_QP_RETRY_CNT |
					IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
					RESP_RES),
		[IBV_QPS_ERR]   = NOP,
	},
	/* An RC QP never enters SQE: a send error moves it to ERR. */
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_ERR]   = NOP,
	},
};

static const struct qp_trans uc_trans[QPS_CNT][QPS_CNT] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_INIT]  = TRANS(CONN_INIT, 0),
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_INIT]  = TRANS(0, CONN_INIT),
		[IBV_QPS_RTR]   = TRANS(CONN_RTR, IBV_QP_ALT_PATH |
					IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(IBV_QP_SQ_PSN,
					CONN_TO_RTS | IBV_QP_RATE_LIMIT),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(0, CONN_TO_RTS | IBV_QP_RATE_LIMIT),
		[IBV_QPS_SQD]   = TRANS(0, IBV_QP_EN_SQD_ASYNC_NOTIFY),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(0, CONN_TO_RTS | IBV_QP_RATE_LIMIT),
		[IBV_QPS_SQD]   = TRANS(0, IBV_QP_AV | IBV_QP_ALT_PATH |
					IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX |
					IBV_QP_PATH_MIG_STATE),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(0, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_ERR]   = NOP,
	},
};

static const struct qp_trans ud_trans[QPS_CNT][QPS_CNT] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_INIT]  = TRANS(UD_INIT, 0),
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_INIT]  = TRANS(0, UD_INIT),
		[IBV_QPS_RTR]   = TRANS(0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(IBV_QP_SQ_PSN,
					UD_TO_RTS | IBV_QP_RATE_LIMIT),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(0, UD_TO_RTS | IBV_QP_RATE_LIMIT),
		[IBV_QPS_SQD]   = TRANS(0, IBV_QP_EN_SQD_ASYNC_NOTIFY),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(0, UD_TO_RTS | IBV_QP_RATE_LIMIT),
		[IBV_QPS_SQD]   = TRANS(0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(0, UD_TO_RTS),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_ERR]   = NOP,
	},
};

/* Not an IBTA type: ibv_modify_qp(3) and Linux want only the port. */
static const struct qp_trans raw_trans[QPS_CNT][QPS_CNT] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_INIT]  = TRANS(IBV_QP_PORT, 0),
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_INIT]  = NOP,
		[IBV_QPS_RTR]   = NOP,
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(0, IBV_QP_RATE_LIMIT),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(0, IBV_QP_RATE_LIMIT),
		[IBV_QPS_SQD]   = NOP,
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(0, IBV_QP_RATE_LIMIT),
		[IBV_QPS_SQD]   = NOP,
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = NOP,
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_ERR]   = NOP,
	},
};

/* XRC initiator: the send half of RC, no responder resources. */
static const struct qp_trans xrc_send_trans[QPS_CNT][QPS_CNT] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_INIT]  = TRANS(CONN_INIT, 0),
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_INIT]  = TRANS(0, CONN_INIT),
		[IBV_QPS_RTR]   = TRANS(CONN_RTR, IBV_QP_ALT_PATH |
					IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(REQ_RTS, CONN_TO_RTS),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(0, CONN_TO_RTS),
		[IBV_QPS_SQD]   = TRANS(0, IBV_QP_EN_SQD_ASYNC_NOTIFY),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(0, CONN_TO_RTS),
		[IBV_QPS_SQD]   = TRANS(0, CONN_SQD_SQD | IBV_QP_RETRY_CNT |
					IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_ERR]   = NOP,
	},
};

/* XRC target: the receive half of RC; it still needs timeout and SQ PSN. */
static const struct qp_trans xrc_recv_trans[QPS_CNT][QPS_CNT] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_INIT]  = TRANS(CONN_INIT, 0),
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_INIT]  = TRANS(0, CONN_INIT),
		[IBV_QPS_RTR]   = TRANS(CONN_RTR | RESP_RES, IBV_QP_ALT_PATH |
					IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(IBV_QP_TIMEOUT | IBV_QP_SQ_PSN,
					CONN_TO_RTS | IBV_QP_MIN_RNR_TIMER),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(0, CONN_TO_RTS | IBV_QP_MIN_RNR_TIMER),
		[IBV_QPS_SQD]   = TRANS(0, IBV_QP_EN_SQD_ASYNC_NOTIFY),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_RTS]   = TRANS(0, CONN_TO_RTS | IBV_QP_MIN_RNR_TIMER),
		[IBV_QPS_SQD]   = TRANS(0, CONN_SQD_SQD | RESP_RES),
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_ERR]   = NOP,
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = NOP,
		[IBV_QPS_ERR]   = NOP,
	},
};

struct qp_type_desc {
	const char *name;
	const struct qp_trans (*trans)[QPS_CNT];
};

static const struct qp_type_desc qp_types[IBV_QPT_XRC_RECV + 1] = {
	[IBV_QPT_RC]         = { "RC",         rc_trans },
	[IBV_QPT_UC]         = { "UC",         uc_trans },
	[IBV_QPT_UD]         = { "UD",         ud_trans },
	[IBV_QPT_RAW_PACKET] = { "RAW_PACKET", raw_trans },
	[IBV_QPT_XRC_SEND]   = { "XRC_SEND",   xrc_send_trans },
	[IBV_QPT_XRC_RECV]   = { "XRC_RECV",   xrc_recv_trans },
};

static const struct qp_type_desc *
qp_type_desc(enum ibv_qp_type type)
{
	if ((unsigned int)type >= RTE_DIM(qp_types) ||
	    qp_types[type].trans == NULL)
		return NULL;
	return &qp_types[type];
}

/* ---------------------------------------------------------------------------
 * Names, for logs.
 */
static const char *const state_names[QPS_CNT] = {
	[IBV_QPS_RESET] = "RESET",
	[IBV_QPS_INIT]  = "INIT",
	[IBV_QPS_RTR]   = "RTR",
	[IBV_QPS_RTS]   = "RTS",
	[IBV_QPS_SQD]   = "SQD",
	[IBV_QPS_SQE]   = "SQE",
	[IBV_QPS_ERR]   = "ERR",
};

/* Indexed by bit number; the holes (bits 21-24) were never exposed. */
static const char *const mask_names[] = {
	[0]  = "IBV_QP_STATE",
	[1]  = "IBV_QP_CUR_STATE",
	[2]  = "IBV_QP_EN_SQD_ASYNC_NOTIFY",
	[3]  = "IBV_QP_ACCESS_FLAGS",
	[4]  = "IBV_QP_PKEY_INDEX",
	[5]  = "IBV_QP_PORT",
	[6]  = "IBV_QP_QKEY",
	[7]  = "IBV_QP_AV",
	[8]  = "IBV_QP_PATH_MTU",
	[9]  = "IBV_QP_TIMEOUT",
	[10] = "IBV_QP_RETRY_CNT",
	[11] = "IBV_QP_RNR_RETRY",
	[12] = "IBV_QP_RQ_PSN",
	[13] = "IBV_QP_MAX_QP_RD_ATOMIC",
	[14] = "IBV_QP_ALT_PATH",
	[15] = "IBV_QP_MIN_RNR_TIMER",
	[16] = "IBV_QP_SQ_PSN",
	[17] = "IBV_QP_MAX_DEST_RD_ATOMIC",
	[18] = "IBV_QP_PATH_MIG_STATE",
	[19] = "IBV_QP_CAP",
	[20] = "IBV_QP_DEST_QPN",
	[25] = "IBV_QP_RATE_LIMIT",
};

const char *
uroce_qp_state_name(enum ibv_qp_state state)
{
	if ((unsigned int)state >= QPS_CNT)
		return "UNKNOWN";
	return state_names[state];
}

const char *
uroce_qp_type_name(enum ibv_qp_type type)
{
	const struct qp_type_desc *t = qp_type_desc(type);

	return t != NULL ? t->name : "UNKNOWN";
}

const char *
uroce_qp_attr_mask_name(int bit)
{
	unsigned int b = (unsigned int)bit;
	unsigned int n;

	if (b == 0 || (b & (b - 1)) != 0)
		return NULL;
	n = (unsigned int)__builtin_ctz(b);
	if (n >= RTE_DIM(mask_names))
		return NULL;
	return mask_names[n];
}

/* ---------------------------------------------------------------------------
 * Checking.
 */
struct modify_ctx {
	const struct uroce_qp_limits *lim;
	const struct ibv_qp_attr *attr;
	const char *type_name;
	enum ibv_qp_state cur;
	enum ibv_qp_state next;
	char *why;
	size_t why_len;
};

/* Log what failed, hand it to the caller, and fail with -EINVAL. */
static int __rte_format_printf(2, 3)
reject(const struct modify_ctx *c, const char *fmt, ...)
{
	char buf[UROCE_QP_MODIFY_WHY_LEN];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "%s modify %s->%s: ", c->type_name,
		     uroce_qp_state_name(c->cur), uroce_qp_state_name(c->next));
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	rte_log(RTE_LOG_DEBUG, uroce_transport_logtype, "%s\n", buf);
	if (c->why != NULL && c->why_len > 0)
		snprintf(c->why, c->why_len, "%s", buf);
	return -EINVAL;
}

static const char *
bit_name(uint32_t bits)
{
	const char *name = uroce_qp_attr_mask_name((int)(bits & -bits));

	return name != NULL ? name : "an unknown attr_mask bit";
}

static int
check_max(const struct modify_ctx *c, const char *field, uint64_t v,
	  uint64_t max)
{
	if (v > max)
		return reject(c, "%s %" PRIu64 " above %" PRIu64, field, v, max);
	return 0;
}

static int
check_port_num(const struct modify_ctx *c, const char *field, unsigned int v)
{
	if (v < 1 || v > c->lim->port_cnt)
		return reject(c, "%s %u not a port (1..%u)", field, v,
			      c->lim->port_cnt);
	return 0;
}

static int
check_pkey_index(const struct modify_ctx *c, const char *field,
		 unsigned int v)
{
	if (v >= c->lim->pkey_tbl_len)
		return reject(c, "%s %u beyond the P_Key table (%u)", field, v,
			      c->lim->pkey_tbl_len);
	return 0;
}

/* enum ibv_rate: 0 (port rate) or 2..24; 1 is reserved (IBTA 9.11.1 rates). */
static bool
static_rate_ok(unsigned int r)
{
	return r == IBV_RATE_MAX ||
		(r >= IBV_RATE_2_5_GBPS && r <= IBV_RATE_1200_GBPS);
}

/* An address vector as RoCEv2 needs it: a GRH with a known source GID. */
static int
check_ah(const struct modify_ctx *c, const char *field,
	 const struct ibv_ah_attr *ah)
{
	if (ah->is_global != 1)
		return reject(c, "%s.is_global must be 1 on RoCE", field);
	if (ah->grh.sgid_index >= c->lim->gid_tbl_len)
		return reject(c, "%s.grh.sgid_index %u beyond the GID table (%u)",
			      field, ah->grh.sgid_index, c->lim->gid_tbl_len);
	if (ah->grh.flow_label > FLOW_LABEL_MAX)
		return reject(c, "%s.grh.flow_label 0x%x wider than 20 bits",
			      field, ah->grh.flow_label);
	/* port_num 0 stands for the QP's own port */
	if (ah->port_num > c->lim->port_cnt)
		return reject(c, "%s.port_num %u not a port (0..%u)", field,
			      ah->port_num, c->lim->port_cnt);
	if (!static_rate_ok(ah->static_rate))
		return reject(c, "%s.static_rate %u not an enum ibv_rate",
			      field, ah->static_rate);
	if (ah->sl > SL_MAX)
		return reject(c, "%s.sl %u above %u", field, ah->sl, SL_MAX);
	return 0;
}

/* One rule per attribute bit; bits without a rule take any value. */

static int
rule_cur_state(const struct modify_ctx *c)
{
	if (c->attr->cur_qp_state != c->cur)
		return reject(c, "cur_qp_state %s but the QP is in %s",
			      uroce_qp_state_name(c->attr->cur_qp_state),
			      uroce_qp_state_name(c->cur));
	return 0;
}

static int
rule_access_flags(const struct modify_ctx *c)
{
	/* IBV_ACCESS_ON_DEMAND is a region's flag; programs pass the MR's
	 * flags here (rdma-core's ODP tests do), and the Linux core and
	 * mlx5 ignore it in a QP's: so does uroce. */
	const unsigned int ok = IBV_ACCESS_LOCAL_WRITE |
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ON_DEMAND;

	if (c->attr->qp_access_flags & ~ok)
		return reject(c, "qp_access_flags 0x%x beyond local write and "
			      "remote write/read/atomic",
			      c->attr->qp_access_flags);
	return 0;
}

static int
rule_pkey_index(const struct modify_ctx *c)
{
	return check_pkey_index(c, "pkey_index", c->attr->pkey_index);
}

static int
rule_port(const struct modify_ctx *c)
{
	return check_port_num(c, "port_num", c->attr->port_num);
}

static int
rule_av(const struct modify_ctx *c)
{
	return check_ah(c, "ah_attr", &c->attr->ah_attr);
}

static int
rule_path_mtu(const struct modify_ctx *c)
{
	unsigned int mtu = c->attr->path_mtu;

	if (mtu < IBV_MTU_256 || mtu > (unsigned int)c->lim->active_mtu)
		return reject(c, "path_mtu %u outside %u..%u (active MTU)", mtu,
			      IBV_MTU_256, c->lim->active_mtu);
	return 0;
}

static int
rule_timeout(const struct modify_ctx *c)
{
	return check_max(c, "timeout", c->attr->timeout, TIMER_MAX);
}

static int
rule_retry_cnt(const struct modify_ctx *c)
{
	return check_max(c, "retry_cnt", c->attr->retry_cnt, RETRY_MAX);
}

static int
rule_rnr_retry(const struct modify_ctx *c)
{
	return check_max(c, "rnr_retry", c->attr->rnr_retry, RETRY_MAX);
}

static int
rule_rq_psn(const struct modify_ctx *c)
{
	return check_max(c, "rq_psn", c->attr->rq_psn, PSN_MAX);
}

static int
rule_max_rd_atomic(const struct modify_ctx *c)
{
	return check_max(c, "max_rd_atomic", c->attr->max_rd_atomic,
			 c->lim->max_qp_init_rd_atom);
}

/* Alternate path: rejected as unsupported without APM, else as primary. */
static int
rule_alt_path(const struct modify_ctx *c)
{
	const struct ibv_qp_attr *a = c->attr;
	int ret;

	if (!c->lim->apm)
		return reject(c, "IBV_QP_ALT_PATH not supported (no APM)");
	ret = check_ah(c, "alt_ah_attr", &a->alt_ah_attr);
	if (ret == 0)
		ret = check_port_num(c, "alt_port_num", a->alt_port_num);
	if (ret == 0)
		ret = check_pkey_index(c, "alt_pkey_index", a->alt_pkey_index);
	if (ret == 0)
		ret = check_max(c, "alt_timeout", a->alt_timeout, TIMER_MAX);
	return ret;
}

static int
rule_min_rnr_timer(const struct modify_ctx *c)
{
	return check_max(c, "min_rnr_timer", c->attr->min_rnr_timer, TIMER_MAX);
}

static int
rule_sq_psn(const struct modify_ctx *c)
{
	return check_max(c, "sq_psn", c->attr->sq_psn, PSN_MAX);
}

static int
rule_max_dest_rd_atomic(const struct modify_ctx *c)
{
	return check_max(c, "max_dest_rd_atomic", c->attr->max_dest_rd_atomic,
			 c->lim->max_qp_rd_atom);
}

static int
rule_path_mig_state(const struct modify_ctx *c)
{
	if (!c->lim->apm)
		return reject(c, "IBV_QP_PATH_MIG_STATE not supported (no APM)");
	return check_max(c, "path_mig_state", c->attr->path_mig_state,
			 IBV_MIG_ARMED);
}

static int
rule_dest_qpn(const struct modify_ctx *c)
{
	return check_max(c, "dest_qp_num", c->attr->dest_qp_num, QPN_MAX);
}

/* ibv_modify_qp_rate_limit(3): kbit/s, 0 removes the limit. */
static int
rule_rate_limit(const struct modify_ctx *c)
{
	uint32_t r = c->attr->rate_limit;

	if (r != 0 && (r < c->lim->rate_limit_min || r > c->lim->rate_limit_max))
		return reject(c, "rate_limit %u kbit/s outside %u..%u", r,
			      c->lim->rate_limit_min, c->lim->rate_limit_max);
	return 0;
}

struct attr_rule {
	uint32_t bit;
	int (*check)(const struct modify_ctx *c);
};

/* No rule: IBV_QP_STATE (checked first), EN_SQD_ASYNC_NOTIFY and QKEY (any
 * value), CAP (no transition accepts it).
 */
static const struct attr_rule attr_rules[] = {
	{ IBV_QP_CUR_STATE,		rule_cur_state },
	{ IBV_QP_ACCESS_FLAGS,		rule_access_flags },
	{ IBV_QP_PKEY_INDEX,		rule_pkey_index },
	{ IBV_QP_PORT,			rule_port },
	{ IBV_QP_AV,			rule_av },
	{ IBV_QP_PATH_MTU,		rule_path_mtu },
	{ IBV_QP_TIMEOUT,		rule_timeout },
	{ IBV_QP_RETRY_CNT,		rule_retry_cnt },
	{ IBV_QP_RNR_RETRY,		rule_rnr_retry },
	{ IBV_QP_RQ_PSN,		rule_rq_psn },
	{ IBV_QP_MAX_QP_RD_ATOMIC,	rule_max_rd_atomic },
	{ IBV_QP_ALT_PATH,		rule_alt_path },
	{ IBV_QP_MIN_RNR_TIMER,		rule_min_rnr_timer },
	{ IBV_QP_SQ_PSN,		rule_sq_psn },
	{ IBV_QP_MAX_DEST_RD_ATOMIC,	rule_max_dest_rd_atomic },
	{ IBV_QP_PATH_MIG_STATE,	rule_path_mig_state },
	{ IBV_QP_DEST_QPN,		rule_dest_qpn },
	{ IBV_QP_RATE_LIMIT,		rule_rate_limit },
};

/* The transition exists and the mask has what it requires and no more. */
static int
check_transition(const struct modify_ctx *c, const struct qp_type_desc *t,
		 uint32_t mask)
{
	const struct qp_trans *tr = &t->trans[c->cur][c->next];
	uint32_t attrs = mask & ~(uint32_t)IBV_QP_STATE;
	uint32_t missing, extra;

	if (!tr->valid)
		return reject(c, "no such transition");
	missing = tr->req & ~attrs;
	if (missing != 0)
		return reject(c, "missing required %s", bit_name(missing));
	extra = attrs & ~(tr->req | tr->opt);
	if (extra != 0)
		return reject(c, "%s not allowed", bit_name(extra));
	return 0;
}

static int
check_values(const struct modify_ctx *c, uint32_t mask)
{
	unsigned int i;
	int ret;

	for (i = 0; i < RTE_DIM(attr_rules); i++) {
		if ((mask & attr_rules[i].bit) == 0)
			continue;
		ret = attr_rules[i].check(c);
		if (ret != 0)
			return ret;
	}
	return 0;
}

int
uroce_qp_modify_check_why(const struct uroce_qp_limits *lim,
			  enum ibv_qp_type type, enum ibv_qp_state cur,
			  const struct ibv_qp_attr *attr, int mask,
			  char *why, size_t why_len)
{
	const struct qp_type_desc *t = qp_type_desc(type);
	uint32_t m = (uint32_t)mask;
	struct modify_ctx c = {
		.lim = lim, .attr = attr, .type_name = uroce_qp_type_name(type),
		.cur = cur, .next = cur, .why = why, .why_len = why_len,
	};
	int ret;

	if (why != NULL && why_len > 0)
		why[0] = '\0';
	if (t == NULL)
		return reject(&c, "unsupported QP type %d", (int)type);
	if ((unsigned int)cur >= QPS_CNT)
		return reject(&c, "current state %d out of range", (int)cur);
	if (attr == NULL && m != 0)
		return reject(&c, "attr_mask 0x%x without attributes", m);
	if (m & IBV_QP_STATE) {
		c.next = attr->qp_state;
		if ((unsigned int)c.next >= QPS_CNT)
			return reject(&c, "qp_state %d out of range",
				      (int)c.next);
	}
	ret = check_transition(&c, t, m);
	if (ret == 0)
		ret = check_values(&c, m);
	return ret;
}

int
uroce_qp_modify_check(const struct uroce_qp_limits *lim,
		      enum ibv_qp_type type, enum ibv_qp_state cur,
		      const struct ibv_qp_attr *attr, int mask)
{
	return uroce_qp_modify_check_why(lim, type, cur, attr, mask, NULL, 0);
}

/* ---------------------------------------------------------------------------
 * Applying: one row per stored field; IBV_QP_ALT_PATH covers four fields.
 * The address vectors are copied whole (struct ibv_ah_attr with its GRH).
 */
struct attr_field {
	uint32_t bit;
	uint16_t off;
	uint16_t len;
};

#define FIELD(bit, member) { (bit), offsetof(struct ibv_qp_attr, member), \
	RTE_SIZEOF_FIELD(struct ibv_qp_attr, member) }

static const struct attr_field attr_fields[] = {
	FIELD(IBV_QP_STATE,			qp_state),
	FIELD(IBV_QP_EN_SQD_ASYNC_NOTIFY,	en_sqd_async_notify),
	FIELD(IBV_QP_ACCESS_FLAGS,		qp_access_flags),
	FIELD(IBV_QP_PKEY_INDEX,		pkey_index),
	FIELD(IBV_QP_PORT,			port_num),
	FIELD(IBV_QP_QKEY,			qkey),
	FIELD(IBV_QP_AV,			ah_attr),
	FIELD(IBV_QP_PATH_MTU,			path_mtu),
	FIELD(IBV_QP_TIMEOUT,			timeout),
	FIELD(IBV_QP_RETRY_CNT,			retry_cnt),
	FIELD(IBV_QP_RNR_RETRY,			rnr_retry),
	FIELD(IBV_QP_RQ_PSN,			rq_psn),
	FIELD(IBV_QP_MAX_QP_RD_ATOMIC,		max_rd_atomic),
	FIELD(IBV_QP_ALT_PATH,			alt_ah_attr),
	FIELD(IBV_QP_ALT_PATH,			alt_pkey_index),
	FIELD(IBV_QP_ALT_PATH,			alt_port_num),
	FIELD(IBV_QP_ALT_PATH,			alt_timeout),
	FIELD(IBV_QP_MIN_RNR_TIMER,		min_rnr_timer),
	FIELD(IBV_QP_SQ_PSN,			sq_psn),
	FIELD(IBV_QP_MAX_DEST_RD_ATOMIC,	max_dest_rd_atomic),
	FIELD(IBV_QP_PATH_MIG_STATE,		path_mig_state),
	FIELD(IBV_QP_CAP,			cap),
	FIELD(IBV_QP_DEST_QPN,			dest_qp_num),
	FIELD(IBV_QP_RATE_LIMIT,		rate_limit),
};

void
uroce_qp_modify_apply(struct ibv_qp_attr *stored, enum ibv_qp_state *state,
		      const struct ibv_qp_attr *attr, int mask)
{
	uint32_t m = (uint32_t)mask;
	unsigned int i;

	for (i = 0; i < RTE_DIM(attr_fields); i++) {
		const struct attr_field *f = &attr_fields[i];

		if (m & f->bit)
			memcpy((char *)stored + f->off,
			       (const char *)attr + f->off, f->len);
	}
	/* An address vector's port 0 means the QP's port. */
	if ((m & IBV_QP_AV) && stored->ah_attr.port_num == 0)
		stored->ah_attr.port_num = stored->port_num;
	if ((m & IBV_QP_ALT_PATH) && stored->alt_ah_attr.port_num == 0)
		stored->alt_ah_attr.port_num = stored->alt_port_num;
	if (m & IBV_QP_STATE)
		*state = attr->qp_state;
}
