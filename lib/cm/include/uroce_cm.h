/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_CM_H
#define UROCE_CM_H

/*
 * The InfiniBand communication manager (IBTA vol. 1 ch. 12) as RoCE uses it:
 * the CM MADs (REQ, MRA, REJ, REP, RTU, DREQ, DREP, SIDR_REQ, SIDR_REP) in and
 * out of 256-byte MADs, the RDMA CM IP layer on top of them (annex A11 as
 * Linux's rdma_cm fills it in), and the state machine of one connection as a
 * pure function of (state, event, message, time). No I/O: the caller sends
 * and receives the MADs on QP1 and runs the timers the effects ask for.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------------------
 * MADs (IBTA vol. 1 ch. 13) on the GSI, QP1 (ch. 13, RoCE annexes A16/A17).
 */
#define UROCE_MAD_LEN			256
#define UROCE_MAD_HDR_LEN		24
#define UROCE_CM_DATA_LEN		(UROCE_MAD_LEN - UROCE_MAD_HDR_LEN)

#define UROCE_MAD_BASE_VERSION		1
#define UROCE_MGMT_CLASS_CM		0x07
#define UROCE_CM_CLASS_VERSION		2
#define UROCE_MAD_METHOD_SEND		0x03

#define UROCE_GSI_QPN			1
#define UROCE_GSI_QKEY			0x80010000u	/* the GSI's well-known Q_Key */
#define UROCE_DEFAULT_PKEY		0xffff
#define UROCE_LID_PERMISSIVE		0xffff

/* CM attribute IDs (IBTA ch. 12; LAP 0x19 and APR 0x1A are not handled). */
enum uroce_cm_attr {
	UROCE_CM_ATTR_REQ = 0x0010,
	UROCE_CM_ATTR_MRA = 0x0011,
	UROCE_CM_ATTR_REJ = 0x0012,
	UROCE_CM_ATTR_REP = 0x0013,
	UROCE_CM_ATTR_RTU = 0x0014,
	UROCE_CM_ATTR_DREQ = 0x0015,
	UROCE_CM_ATTR_DREP = 0x0016,
	UROCE_CM_ATTR_SIDR_REQ = 0x0017,
	UROCE_CM_ATTR_SIDR_REP = 0x0018,
};

/* Private data bytes each message carries (IBTA Tables 106-120). */
#define UROCE_CM_REQ_PRIV_LEN		92
#define UROCE_CM_MRA_PRIV_LEN		222
#define UROCE_CM_REJ_PRIV_LEN		148
#define UROCE_CM_REP_PRIV_LEN		196
#define UROCE_CM_RTU_PRIV_LEN		224
#define UROCE_CM_DREQ_PRIV_LEN		220
#define UROCE_CM_DREP_PRIV_LEN		224
#define UROCE_CM_SIDR_REQ_PRIV_LEN	216
#define UROCE_CM_SIDR_REP_PRIV_LEN	136
#define UROCE_CM_ARI_LEN		72	/* REJ ARI, SIDR_REP additional info */

/* The common MAD header, host order. */
struct uroce_mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint32_t attr_mod;	/* REQ/REP: Linux's ECE attr_mod, else 0 */
};

/* A REQ path (primary or alternate). On RoCE the GIDs are the IP addresses
 * (IPv4-mapped for IPv4) and the LIDs are 0xFFFF (permissive) when the hop
 * limit is over 1, as Linux's cm.c fills them. */
struct uroce_cm_path {
	uint16_t local_lid;
	uint16_t remote_lid;
	uint8_t local_gid[16];
	uint8_t remote_gid[16];
	uint32_t flow_label;		/* 20 bits */
	uint8_t packet_rate;		/* 6 bits */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;			/* 4 bits */
	uint8_t subnet_local;		/* 1 bit */
	uint8_t local_ack_timeout;	/* 5 bits */
};

/* REQ transport service types (IBTA Table 106). */
#define UROCE_CM_TST_RC		0
#define UROCE_CM_TST_UC		1
#define UROCE_CM_TST_RD		2
#define UROCE_CM_TST_EXT	3	/* extended: XRC when ext_transport is 1 */

struct uroce_cm_req {
	uint32_t local_comm_id;
	uint32_t vendor_id;		/* 24 bits, ECE (IBA comment 9434) */
	uint64_t service_id;
	uint64_t local_ca_guid;
	uint32_t local_qkey;
	uint32_t local_qpn;		/* 24 bits */
	uint8_t responder_resources;
	uint32_t local_eecn;		/* 24 bits */
	uint8_t initiator_depth;
	uint32_t remote_eecn;		/* 24 bits */
	uint8_t remote_cm_resp_timeout;	/* 5 bits: 4.096 us x 2^n */
	uint8_t transport_type;		/* 2 bits */
	uint8_t e2e_flow_control;	/* 1 bit */
	uint32_t starting_psn;		/* 24 bits */
	uint8_t local_cm_resp_timeout;	/* 5 bits */
	uint8_t retry_count;		/* 3 bits */
	uint16_t pkey;
	uint8_t path_mtu;		/* 4 bits, IBV_MTU_256 (1) .. 4096 (5) */
	uint8_t rdc_exists;		/* 1 bit */
	uint8_t rnr_retry_count;	/* 3 bits */
	uint8_t max_cm_retries;		/* 4 bits */
	uint8_t srq;			/* 1 bit */
	uint8_t ext_transport;		/* 3 bits */
	struct uroce_cm_path primary;
	struct uroce_cm_path alternate;
	uint8_t sap_supported;		/* 1 bit */
	uint8_t private_data[UROCE_CM_REQ_PRIV_LEN];
};

/* Which message an MRA or REJ answers (IBTA Tables 107, 108). */
#define UROCE_CM_MSG_REQ	0
#define UROCE_CM_MSG_REP	1
#define UROCE_CM_MSG_OTHER	2	/* REJ only; for an MRA, 2 is LAP */

struct uroce_cm_mra {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t msg_mraed;		/* 2 bits */
	uint8_t service_timeout;	/* 5 bits */
	uint8_t private_data[UROCE_CM_MRA_PRIV_LEN];
};

struct uroce_cm_rej {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t msg_rejected;		/* 2 bits */
	uint8_t ari_len;		/* 7 bits, at most 72 */
	uint16_t reason;		/* enum uroce_cm_rej_reason */
	uint8_t ari[UROCE_CM_ARI_LEN];
	uint8_t private_data[UROCE_CM_REJ_PRIV_LEN];
};

struct uroce_cm_rep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qkey;
	uint32_t local_qpn;		/* 24 bits */
	uint8_t vendor_id_h;		/* ECE vendor ID, high/mid/low bytes */
	uint32_t local_eecn;		/* 24 bits */
	uint8_t vendor_id_m;
	uint32_t starting_psn;		/* 24 bits */
	uint8_t vendor_id_l;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;	/* 5 bits */
	uint8_t failover_accepted;	/* 2 bits */
	uint8_t e2e_flow_control;	/* 1 bit */
	uint8_t rnr_retry_count;	/* 3 bits */
	uint8_t srq;			/* 1 bit */
	uint64_t local_ca_guid;
	uint8_t private_data[UROCE_CM_REP_PRIV_LEN];
};

struct uroce_cm_rtu {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[UROCE_CM_RTU_PRIV_LEN];
};

struct uroce_cm_dreq {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn;		/* 24 bits: the QPN/EECN being disconnected */
	uint8_t private_data[UROCE_CM_DREQ_PRIV_LEN];
};

struct uroce_cm_drep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[UROCE_CM_DREP_PRIV_LEN];
};

struct uroce_cm_sidr_req {
	uint32_t request_id;
	uint16_t pkey;
	uint64_t service_id;
	uint8_t private_data[UROCE_CM_SIDR_REQ_PRIV_LEN];
};

/* SIDR_REP status (IBTA Table 120). */
enum uroce_cm_sidr_status {
	UROCE_CM_SIDR_SUCCESS = 0,
	UROCE_CM_SIDR_UNSUPPORTED = 1,	/* service ID not supported */
	UROCE_CM_SIDR_REJECT = 2,
	UROCE_CM_SIDR_NO_QP = 3,
	UROCE_CM_SIDR_REDIRECT = 4,
	UROCE_CM_SIDR_UNSUPPORTED_VERSION = 5,
};

struct uroce_cm_sidr_rep {
	uint32_t request_id;
	uint8_t status;
	uint8_t info_len;		/* at most 72 */
	uint16_t vendor_id_h;		/* ECE vendor ID, high 16 bits */
	uint32_t qpn;			/* 24 bits */
	uint8_t vendor_id_l;
	uint64_t service_id;
	uint32_t qkey;
	uint8_t info[UROCE_CM_ARI_LEN];
	uint8_t private_data[UROCE_CM_SIDR_REP_PRIV_LEN];
};

/* One CM MAD: the header (hdr.attr_id says which member is valid). */
struct uroce_cm_msg {
	struct uroce_mad_hdr hdr;
	union {
		struct uroce_cm_req req;
		struct uroce_cm_mra mra;
		struct uroce_cm_rej rej;
		struct uroce_cm_rep rep;
		struct uroce_cm_rtu rtu;
		struct uroce_cm_dreq dreq;
		struct uroce_cm_drep drep;
		struct uroce_cm_sidr_req sidr_req;
		struct uroce_cm_sidr_rep sidr_rep;
	};
};

/* REJ reasons (IBTA ch. 12; the values of Linux's enum ib_cm_rej_reason). */
enum uroce_cm_rej_reason {
	UROCE_CM_REJ_NO_QP = 1,
	UROCE_CM_REJ_NO_EEC = 2,
	UROCE_CM_REJ_NO_RESOURCES = 3,
	UROCE_CM_REJ_TIMEOUT = 4,
	UROCE_CM_REJ_UNSUPPORTED = 5,
	UROCE_CM_REJ_INVALID_COMM_ID = 6,
	UROCE_CM_REJ_INVALID_COMM_INSTANCE = 7,
	UROCE_CM_REJ_INVALID_SERVICE_ID = 8,
	UROCE_CM_REJ_INVALID_TRANSPORT_TYPE = 9,
	UROCE_CM_REJ_STALE_CONN = 10,
	UROCE_CM_REJ_RDC_NOT_EXIST = 11,
	UROCE_CM_REJ_INVALID_GID = 12,
	UROCE_CM_REJ_INVALID_LID = 13,
	UROCE_CM_REJ_INVALID_SL = 14,
	UROCE_CM_REJ_INVALID_TRAFFIC_CLASS = 15,
	UROCE_CM_REJ_INVALID_HOP_LIMIT = 16,
	UROCE_CM_REJ_INVALID_PACKET_RATE = 17,
	UROCE_CM_REJ_PORT_CM_REDIRECT = 24,
	UROCE_CM_REJ_PORT_REDIRECT = 25,
	UROCE_CM_REJ_INVALID_MTU = 26,
	UROCE_CM_REJ_INSUFFICIENT_RESP_RESOURCES = 27,
	UROCE_CM_REJ_CONSUMER_DEFINED = 28,
	UROCE_CM_REJ_INVALID_RNR_RETRY = 29,
	UROCE_CM_REJ_DUPLICATE_LOCAL_COMM_ID = 30,
	UROCE_CM_REJ_INVALID_CLASS_VERSION = 31,
	UROCE_CM_REJ_INVALID_FLOW_LABEL = 32,
	UROCE_CM_REJ_INVALID_ALT_FLOW_LABEL = 33,
	UROCE_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED = 35,
};

/* Size of the private data of message @attr, 0 for an unknown attribute. */
size_t uroce_cm_priv_len(uint16_t attr);

/* The private data of @m (uroce_cm_priv_len(m->hdr.attr_id) bytes), or NULL. */
uint8_t *uroce_cm_priv(struct uroce_cm_msg *m);

/*
 * Copy @len bytes of private data into @m and zero the rest.
 * -EINVAL if @len exceeds the message's private data (nothing is changed).
 */
int uroce_cm_priv_set(struct uroce_cm_msg *m, const void *data, size_t len);

/*
 * A message of type @attr with a CM header (base version 1, class 0x07,
 * class version 2, method Send) and transaction ID @tid, every field 0.
 */
void uroce_cm_msg_init(struct uroce_cm_msg *m, uint16_t attr, uint64_t tid);

/*
 * Encode @m into @mad (UROCE_MAD_LEN bytes), big-endian, reserved bits 0.
 * -EINVAL when a field does not fit its width or the attribute is unknown
 * (then @mad is left unchanged).
 */
int uroce_cm_encode(const struct uroce_cm_msg *m, uint8_t mad[UROCE_MAD_LEN]);

/*
 * Decode the CM MAD of @len bytes at @buf into @m. Never reads past @len.
 * -EINVAL: @len is not UROCE_MAD_LEN; -EPROTO: not a CM MAD uroce handles
 * (base/class version, class, method, attribute) or a field with a
 * reserved value (MRA/REJ message type 3, path MTU 0 or over 5, REJ ARI or
 * SIDR info length over 72, SIDR_REP status over 5). @m is then unspecified.
 */
int uroce_cm_decode(const uint8_t *buf, size_t len, struct uroce_cm_msg *m);

/* Name of a CM attribute ("REQ", ...), "?" if unknown. */
const char *uroce_cm_attr_str(uint16_t attr);

/* Field table walk, for tools and tests: calls @fn for every field of the
 * message @m (name as in the IBTA tables, value; byte fields as @bytes). */
typedef void (*uroce_cm_field_fn)(void *arg, const char *name, uint64_t value,
				  const uint8_t *bytes, size_t nbytes);
int uroce_cm_fields(const struct uroce_cm_msg *m, uroce_cm_field_fn fn, void *arg);

/* ---------------------------------------------------------------------------
 * RDMA CM IP addressing (IBTA annex A11, as Linux's rdma_cm uses it).
 */
#define UROCE_RDMA_PS_IPOIB		0x0002
#define UROCE_RDMA_PS_TCP		0x0106
#define UROCE_RDMA_PS_UDP		0x0111
#define UROCE_RDMA_PS_IB		0x013f
#define UROCE_CMA_SERVICE_PREFIX	0x0000000001000000ull

#define UROCE_CMA_VERSION		0x00
#define UROCE_CMA_HDR_LEN		36

/* User private data after the CMA header (rdma_cm's limits). */
#define UROCE_CMA_REQ_USER_MAX		(UROCE_CM_REQ_PRIV_LEN - UROCE_CMA_HDR_LEN)	/* 56 */
#define UROCE_CMA_SIDR_REQ_USER_MAX	(UROCE_CM_SIDR_REQ_PRIV_LEN - UROCE_CMA_HDR_LEN) /* 180 */

/* ps << 16 | port: for the RDMA IP port spaces (0x01xx) that is
 * 0x0000000001000000 | (ps & 0xff) << 16 | port, annex A11's form. */
uint64_t uroce_cma_service_id(uint16_t ps, uint16_t port);

/* Port space and port of an RDMA CM IP service ID; -EINVAL when
 * @sid is not one (prefix other than 0x00000000_01). */
int uroce_cma_service_parse(uint64_t sid, uint16_t *ps, uint16_t *port);

/* The CMA header (Linux's struct cma_hdr): IPv4 addresses are stored in
 * the last 4 bytes of each 16-byte field, the first 12 zero. */
struct uroce_cma_hdr {
	uint8_t ip_version;		/* 4 or 6 */
	uint16_t src_port;
	uint8_t src_addr[16];
	uint8_t dst_addr[16];
};

/*
 * Write the CMA header and @len bytes of user data into the private data of
 * @m (a REQ or SIDR_REQ; others carry no header: pass @hdr NULL). -EINVAL
 * when @len exceeds the room left or @hdr is present/absent wrongly or has a
 * bad IP version; @m is then unchanged.
 */
int uroce_cma_pack(struct uroce_cm_msg *m, const struct uroce_cma_hdr *hdr,
		   const void *user, size_t len);

/* Read the CMA header at the start of @priv (@len bytes). -EINVAL if too
 * short; -EPROTO if the version is not 0 or the IP version not 4 or 6. */
int uroce_cma_hdr_get(const uint8_t *priv, size_t len, struct uroce_cma_hdr *hdr);

/* Most user private data rdma_cm carries in message @attr (after the CMA
 * header for REQ/SIDR_REQ; DREQ/DREP at 220 as the kernel's rdma_cm). */
size_t uroce_cma_user_max(uint16_t attr);

/* ---------------------------------------------------------------------------
 * The connection state machine (IBTA 12.9), table-driven.
 */
enum uroce_cm_state {
	UROCE_CM_IDLE,
	UROCE_CM_LISTEN,
	UROCE_CM_REQ_SENT,
	UROCE_CM_REQ_RCVD,
	UROCE_CM_MRA_REQ_SENT,
	UROCE_CM_MRA_REQ_RCVD,
	UROCE_CM_REP_SENT,
	UROCE_CM_REP_RCVD,
	UROCE_CM_MRA_REP_SENT,
	UROCE_CM_MRA_REP_RCVD,
	UROCE_CM_ESTABLISHED,
	UROCE_CM_DREQ_SENT,
	UROCE_CM_DREQ_RCVD,
	UROCE_CM_TIMEWAIT,
	UROCE_CM_SIDR_REQ_SENT,
	UROCE_CM_SIDR_REQ_RCVD,
	UROCE_CM_STATE_COUNT
};

/* What happens to a connection. */
enum uroce_cm_input {
	/* local actions: @msg is the message being sent */
	UROCE_CM_IN_LISTEN,
	UROCE_CM_IN_SEND_REQ,
	UROCE_CM_IN_SEND_MRA,
	UROCE_CM_IN_SEND_REJ,
	UROCE_CM_IN_SEND_REP,
	UROCE_CM_IN_SEND_RTU,
	UROCE_CM_IN_SEND_DREQ,
	UROCE_CM_IN_SEND_DREP,
	UROCE_CM_IN_SEND_SIDR_REQ,
	UROCE_CM_IN_SEND_SIDR_REP,
	UROCE_CM_IN_COMM_EST,	/* the QP received before the RTU came */
	/* received messages: @msg is the decoded MAD */
	UROCE_CM_IN_RECV_REQ,
	UROCE_CM_IN_RECV_MRA,
	UROCE_CM_IN_RECV_REJ,
	UROCE_CM_IN_RECV_REP,
	UROCE_CM_IN_RECV_RTU,
	UROCE_CM_IN_RECV_DREQ,
	UROCE_CM_IN_RECV_DREP,
	UROCE_CM_IN_RECV_SIDR_REQ,
	UROCE_CM_IN_RECV_SIDR_REP,
	/* the deadline of the last effects has passed (@msg NULL) */
	UROCE_CM_IN_TIMEOUT,
	/* the user has no room for a received request (@msg NULL): it is
	 * forgotten with nothing sent, as Linux's cm_destroy_id() does after
	 * a handler's -ENOMEM, so that the peer's resend is a new request */
	UROCE_CM_IN_FORGET,
	UROCE_CM_IN_COUNT
};

/* What the user of a connection is told. */
enum uroce_cm_event {
	UROCE_CM_EV_NONE,
	UROCE_CM_EV_REQ_RCVD,		/* a connection request (passive side) */
	UROCE_CM_EV_REP_RCVD,		/* the reply (active side) */
	UROCE_CM_EV_ESTABLISHED,
	UROCE_CM_EV_REJECTED,		/* effects.rej_reason says why */
	UROCE_CM_EV_UNREACHABLE,	/* MaxCMRetries + 1 sends unanswered */
	UROCE_CM_EV_DREQ_RCVD,		/* the peer disconnects */
	UROCE_CM_EV_DISCONNECTED,	/* DREP received, or the DREQ unanswered */
	UROCE_CM_EV_TIMEWAIT_EXIT,	/* comm ID and QPN may be reused */
	UROCE_CM_EV_SIDR_REQ_RCVD,
	UROCE_CM_EV_SIDR_REP_RCVD,
	UROCE_CM_EV_LISTEN_REQ,		/* a listener got a REQ/SIDR_REQ: make a
					 * new connection, step it with the message */
	UROCE_CM_EV_COUNT
};

/* Effects of one step, for the caller to carry out. */
#define UROCE_CM_FX_SEND	(1u << 0)	/* send @send_attr (this step's message) */
#define UROCE_CM_FX_RESEND	(1u << 1)	/* send the last message again, same bytes */
#define UROCE_CM_FX_TIMER	(1u << 2)	/* (re)arm the timer for @deadline_ns */
#define UROCE_CM_FX_STOP	(1u << 3)	/* stop the timer */
#define UROCE_CM_FX_EVENT	(1u << 4)	/* tell the user @event */
#define UROCE_CM_FX_REPLY	(1u << 5)	/* answer the received message with a
						 * fresh @send_attr (REJ @rej_reason,
						 * DREP) built by uroce_cm_reply() */

struct uroce_cm_effects {
	unsigned int fx;
	uint16_t send_attr;
	enum uroce_cm_event event;
	uint16_t rej_reason;
	uint64_t deadline_ns;
};

/* Timing of a connection, as IBTA exponents: 4.096 us x 2^n. */
struct uroce_cm_timing {
	uint8_t cm_resp_timeout;	/* default response timeout (SIDR) */
	uint8_t max_cm_retries;		/* default retries (SIDR) */
	uint8_t packet_life;		/* path packet life time */
};

/* rdma_cm's defaults: CM response timeout 20, 15 retries, and Linux's
 * packet life time for RoCE paths (CMA_IBOE_PACKET_LIFETIME; 18 in older
 * kernels). */
#define UROCE_CM_DEFAULT_RESP_TIMEOUT	20
#define UROCE_CM_DEFAULT_RETRIES	15
#define UROCE_CM_DEFAULT_PACKET_LIFE	16

struct uroce_cm_conn {
	enum uroce_cm_state state;
	bool active;			/* sent the REQ / SIDR_REQ */
	uint32_t local_comm_id;
	uint32_t remote_comm_id;	/* 0 until known */
	uint32_t local_qpn;		/* from the REQ or REP this side sent */
	uint32_t remote_qpn;
	struct uroce_cm_timing timing;
	uint8_t max_cm_retries;		/* this connection's, from its REQ */
	uint64_t wait_ns;		/* wait for an answer after a send */
	uint8_t sends;			/* sends of the message awaiting an answer */
	uint16_t last_sent;		/* attribute of the last message sent */
	uint64_t deadline_ns;		/* armed timer, 0 when none */
};

/* 4.096 us x 2^@exp in nanoseconds (@exp 0..31). */
static inline uint64_t
uroce_cm_time_ns(uint8_t exp)
{
	return 4096ull << (exp & 31);
}

/* Time-wait: the packet life time doubled, as Linux's cm_enter_timewait()
 * waits (4.096 us x 2^(life + 1)). */
static inline uint64_t
uroce_cm_timewait_ns(const struct uroce_cm_timing *t)
{
	return uroce_cm_time_ns((uint8_t)(t->packet_life + 1));
}

void uroce_cm_conn_init(struct uroce_cm_conn *c, uint32_t local_comm_id,
			const struct uroce_cm_timing *t);

/*
 * One step of the state machine at time @now_ns. On success fills @fx and
 * returns 0. The (state, input) pairs the table does not list, a message
 * whose type does not match @in, and a received message whose comm IDs are
 * not this connection's return an error with @c and @fx unchanged:
 * -EINVAL (forbidden in this state or malformed input), -ENOENT (comm IDs).
 */
int uroce_cm_step(struct uroce_cm_conn *c, enum uroce_cm_input in,
		  const struct uroce_cm_msg *msg, uint64_t now_ns,
		  struct uroce_cm_effects *fx);

/*
 * The fresh answer the effects ask for with UROCE_CM_FX_REPLY, to the
 * received @rcv (a REQ, REP or DREQ): a REJ with @reason (Message REJected
 * by @rcv's type) or, to a DREQ, a DREP; with the transaction ID of @rcv and
 * the comm IDs of @c, or swapped from @rcv when @c is NULL. -EINVAL if @rcv
 * cannot be answered that way.
 */
int uroce_cm_reply(const struct uroce_cm_conn *c, const struct uroce_cm_msg *rcv,
		   uint16_t attr, uint16_t reason, struct uroce_cm_msg *out);

/*
 * The answer to a received message that matches no connection, as Linux's
 * cm.c gives it: a REQ for a service nobody listens on gets a REJ "invalid
 * service ID" (8), a REQ or REP from a QP still in time-wait (@stale) a REJ
 * "stale connection" (10); a DREQ gets a DREP (the peer lost ours); a
 * SIDR_REQ a SIDR_REP "service ID not supported" (1).
 * Returns 1 with @out filled, 0 when the message is dropped silently (MRA,
 * REJ, RTU, DREP, SIDR_REP, a REP not stale), -EINVAL on bad input.
 */
int uroce_cm_unmatched(const struct uroce_cm_msg *rcv, bool stale,
		       struct uroce_cm_msg *out);

const char *uroce_cm_state_str(enum uroce_cm_state s);
const char *uroce_cm_input_str(enum uroce_cm_input in);
const char *uroce_cm_event_str(enum uroce_cm_event ev);

#endif /* UROCE_CM_H */
