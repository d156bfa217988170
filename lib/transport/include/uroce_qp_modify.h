/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_QP_MODIFY_H
#define UROCE_QP_MODIFY_H

/**
 * @file
 * The QP state machine's modify rules, as data: which ibv_modify_qp()
 * transitions exist for each QP type, which attributes each one requires and
 * which it accepts, and the range of every attribute value.
 *
 * A modify is two steps, so that a failed verb changes nothing
 * (ibv_modify_qp(3), NOTES):
 *
 *	ret = uroce_qp_modify_check(&lim, qp_type, state, attr, mask);
 *	if (ret == 0)
 *		uroce_qp_modify_apply(&stored, &state, attr, mask);
 *
 * The check is pure: it reads only its arguments. The apply cannot fail.
 *
 * Conventions, as the Linux core and rdma-core's providers implement them:
 *  - A mask without IBV_QP_STATE modifies attributes in place: the next state
 *    is the current one, and the cur->cur transition must exist (RTS->RTS,
 *    INIT->INIT ...). So a state change always carries IBV_QP_STATE, and a
 *    mask of 0 is a no-op where cur->cur exists.
 *  - IBV_QP_CUR_STATE, where a transition accepts it, must name the state the
 *    QP is in.
 *  - RESET->ERR is not a transition (Linux ib_modify_qp_is_ok); any other
 *    state may go to RESET or ERR.
 *
 * References: IBTA Vol. 1 rel. 1.4, 10.3.1 (QP state diagram) and 11.2.5.2
 * (Modify QP), the tables in ibv_modify_qp(3).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What the device and its port allow; filled once from the port's state. */
struct uroce_qp_limits {
	uint8_t port_cnt;		/**< ports are 1..port_cnt */
	uint16_t pkey_tbl_len;		/**< pkey_index < pkey_tbl_len */
	uint16_t gid_tbl_len;		/**< ah_attr.grh.sgid_index < gid_tbl_len */
	enum ibv_mtu active_mtu;	/**< path_mtu <= active_mtu */
	/** Responder resources: max_dest_rd_atomic <= max_qp_rd_atom. */
	uint32_t max_qp_rd_atom;
	/** Initiator depth: max_rd_atomic <= max_qp_init_rd_atom. */
	uint32_t max_qp_init_rd_atom;
	uint32_t rate_limit_min;	/**< kbit/s; a rate_limit of 0 = no limit */
	uint32_t rate_limit_max;	/**< kbit/s; 0 = pacing not supported */
	bool apm;			/**< alternate paths (IBV_QP_ALT_PATH ...) */
};

/** Longest reason text uroce_qp_modify_check_why() writes, with its NUL. */
#define UROCE_QP_MODIFY_WHY_LEN 128

/**
 * Validate an ibv_modify_qp() request against the QP's type and state.
 *
 * @param lim   the device's limits
 * @param type  IBV_QPT_RC, UC, UD, RAW_PACKET, XRC_SEND or XRC_RECV
 * @param cur   the state the QP is in
 * @param attr  the caller's attributes (read only where mask says)
 * @param mask  the caller's attr_mask
 * @return 0, or -EINVAL (bad state, transition, mask or value; an attribute
 *   the device does not support, such as an alternate path without APM).
 *   A failure is logged at DEBUG on the "uroce.transport" log type.
 */
int uroce_qp_modify_check(const struct uroce_qp_limits *lim,
			  enum ibv_qp_type type, enum ibv_qp_state cur,
			  const struct ibv_qp_attr *attr, int mask);

/**
 * uroce_qp_modify_check() that also says why it failed: when why is not NULL
 * it receives the log text, e.g. "RC modify INIT->RTR: missing required
 * IBV_QP_PATH_MTU" (truncated to why_len - 1 characters), or "" on success.
 */
int uroce_qp_modify_check_why(const struct uroce_qp_limits *lim,
			      enum ibv_qp_type type, enum ibv_qp_state cur,
			      const struct ibv_qp_attr *attr, int mask,
			      char *why, size_t why_len);

/**
 * Store the attributes of a checked modify: copy every attribute in mask
 * into the QP's stored attributes (what ibv_query_qp() returns) and, with
 * IBV_QP_STATE, set *state and stored->qp_state. An address vector with
 * port_num 0 gets the QP's port (stored->port_num, or alt_port_num for the
 * alternate path). IBV_QP_CUR_STATE is not stored.
 *
 * Call only after uroce_qp_modify_check() returned 0 for the same arguments.
 */
void uroce_qp_modify_apply(struct ibv_qp_attr *stored, enum ibv_qp_state *state,
			   const struct ibv_qp_attr *attr, int mask);

/** "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"; "UNKNOWN" otherwise. */
const char *uroce_qp_state_name(enum ibv_qp_state state);

/** "RC", "UC", "UD", "RAW_PACKET", "XRC_SEND", "XRC_RECV"; "UNKNOWN". */
const char *uroce_qp_type_name(enum ibv_qp_type type);

/**
 * Name of one IBV_QP_* mask bit, e.g. "IBV_QP_PATH_MTU"; NULL when bit is not
 * exactly one bit of enum ibv_qp_attr_mask.
 */
const char *uroce_qp_attr_mask_name(int bit);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_QP_MODIFY_H */
