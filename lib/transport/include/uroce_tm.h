/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_TM_H
#define UROCE_TM_H

/**
 * @file
 * The tag-matching engine of a tag-matching SRQ (IBV_SRQT_TM), as rdma-core's
 * "Hardware tag matching" document (tag_matching.md) and ibv_post_srq_ops(3)
 * define it. It plays the part of the NIC: it holds the tagged buffers the
 * application added with ibv_post_srq_ops(), matches incoming tag-matching
 * messages (RC SENDs that start with a struct ibv_tmh) against them, and
 * keeps the phase counters that keep software and "hardware" coherent.
 *
 * Tag list. Entries live in a table of max_num_tags slots; a handle names
 * a slot (low 16 bits) and its generation (high 16 bits), so ADD and DEL
 * are O(1) and a DEL with the handle of a tag that was consumed (and maybe
 * reused) fails with IBV_WC_TM_ERR instead of removing someone else's tag.
 * Listed tags are linked in the order they were added: a message matches
 * the oldest listed tag whose mask selects the same bits (MPI's rule:
 * receives are associated with messages in the order they were posted).
 * A tag matches when (TMH.tag & mask) == (tag & mask).
 *
 * Phases (tag_matching.md, "Consequently, whenever HW deems a message
 * unexpected, tag matching must be disabled for new tags until SW and HW
 * synchronize"). unexp_hw counts the tagged messages delivered unexpected
 * to the SRQ's plain receives (IBV_WC_TM_RECV completions without MATCH;
 * IBV_WC_TM_NO_TAG
 * ones do not count). unexp_sw is the last unexpected_cnt software
 * reported (an op with IBV_OPS_TM_SYNC, or IBV_WR_TAG_SYNC). A tag takes
 * part in matching only if the two were equal when it was added: a tag
 * added while software had not yet seen every unexpected message might
 * otherwise overtake one of them. Such a tag stays listed (DEL removes
 * it) but never matches. Every completion of a tag operation (ADD, DEL,
 * SYNC) carries IBV_WC_TM_SYNC_REQ while the two differ.
 *
 * Threads: everything here runs on the one thread that owns the SRQ's CQ
 * (the engine lcore; the verbs layer sends ibv_post_srq_ops() there as a
 * control message). No locks.
 *
 * Errors are negative errno.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/tm_types.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Device limits (ibv_query_device_ex() tm_caps). */
#define UROCE_TM_MAX_TAGS	1024u	/**< max_num_tags */
#define UROCE_TM_MAX_OPS	256u	/**< max_ops (ops in one post call) */
#define UROCE_TM_MAX_SGE	1u	/**< max_sge of a tagged buffer */
/** max_rndv_hdr_size: TMH + RVH + meta-data of a rendezvous request. It
 *  fits the smallest path MTU, so the request is always one packet. */
#define UROCE_TM_RNDV_HDR_MAX	256u

/** No slot. */
#define UROCE_TM_NIL		UINT32_MAX

enum uroce_tm_tag_state {
	UROCE_TM_FREE,		/**< on the free list */
	UROCE_TM_LISTED,	/**< in the matching list */
	UROCE_TM_CONSUMED,	/**< matched, data still to land */
};

struct uroce_tm_tag {
	uint64_t tag, mask;
	uint64_t wr_id;		/**< recv_wr_id of the ADD */
	struct ibv_sge sge;	/**< the buffer (length 0 without one) */
	uint32_t prev, next;	/**< list links (posting order, or free) */
	uint64_t msg_tag;	/**< CONSUMED: the message's TMH tag */
	uint32_t msg_priv;	/**< CONSUMED: its TMH user data */
	uint16_t gen;		/**< bumped when the slot is freed */
	uint8_t state;		/**< enum uroce_tm_tag_state */
	bool eligible;		/**< added in sync: may match (see Phases) */
};

/** Counters of one TM-SRQ (owner thread writes them). */
struct uroce_tm_stats {
	uint64_t adds, dels, syncs;
	uint64_t del_fail;	/**< DEL of a tag no longer listed (TM_ERR) */
	uint64_t matched;	/**< messages matched to a tagged buffer */
	uint64_t unexpected;	/**< tagged messages to a plain receive */
	uint64_t no_tag;	/**< IBV_TMH_NO_TAG messages */
	uint64_t bad_hdr;	/**< malformed TMH/RVH (request NAKed) */
};

struct uroce_tm {
	uint32_t max_tags;
	uint32_t max_ops;
	uint32_t n_listed;		/**< tags in the list */
	uint32_t head, tail;		/**< matching list, oldest first */
	uint32_t free_head, free_tail;	/**< FIFO: a slot rests before reuse */
	uint32_t unexp_hw;		/**< the phase (see Phases) */
	uint32_t unexp_sw;
	struct uroce_tm_stats stats;
	struct uroce_tm_tag tags[];
};

/**
 * Allocate an empty engine for a TM-SRQ created with tm_cap (ibv_tm_cap):
 * max_num_tags 1..UROCE_TM_MAX_TAGS, max_ops 1..UROCE_TM_MAX_OPS, else
 * -EINVAL. cap comes back with what was created (the values asked for).
 */
int uroce_tm_create(struct ibv_tm_cap *cap, struct uroce_tm **out);
void uroce_tm_destroy(struct uroce_tm *tm);

/** Called for each completion an op list produces. */
typedef void (*uroce_tm_complete_fn)(void *ctx, const struct ibv_wc *wc);

/**
 * ibv_post_srq_ops(3): apply the list in order. An op that cannot be
 * posted stops the list with *bad_wr set to it (the ones before it are
 * applied): -EINVAL (unknown opcode or flags, ADD with num_sge < 0 or >
 * UROCE_TM_MAX_SGE or a NULL sg_list, DEL of a handle outside the table),
 * -ENOMEM (the tag list is full, or more than max_ops ops in the list).
 * ADD writes the new handle into wr->tm.handle. Signaled ops (IBV_OPS_
 * SIGNALED) complete through done with IBV_WC_TM_ADD/DEL/SYNC; a DEL of a
 * tag that was consumed or deleted completes with IBV_WC_TM_ERR whether
 * signaled or not (an error always completes).
 * @return 0 or the first error.
 */
int uroce_tm_post_ops(struct uroce_tm *tm, struct ibv_ops_wr *wr,
		      struct ibv_ops_wr **bad_wr, uroce_tm_complete_fn done,
		      void *ctx);

/* ------------------------------------------------------------------------
 * Messages.
 */

/** A tag-matching message's headers, host order. */
struct uroce_tm_msg {
	uint8_t op;		/**< enum ibv_tmh_op */
	uint32_t app_ctx;	/**< TMH user data (ibv_wc_tm_info.priv) */
	uint64_t tag;
	/* RVH (IBV_TMH_RNDV, IBV_TMH_FIN) */
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
};

/** Bytes of the headers a message of op starts with (TMH, TMH + RVH). */
uint32_t uroce_tm_hdr_len(uint8_t op);

/**
 * Parse the start of a SEND's first packet (len bytes). IBV_TMH_NO_TAG
 * needs its opcode byte only; EAGER and FIN a whole TMH; RNDV a TMH and
 * an RVH, and an RVH length of at most 2^31 (the largest message).
 * @return 0, or -EBADMSG (empty, too short, unknown opcode, RVH length):
 *   the responder NAKs the request (Invalid Request, IBTA 9.9.3) and
 *   counts it in stats.bad_hdr.
 */
int uroce_tm_parse(const void *buf, uint32_t len, struct uroce_tm_msg *msg);

/** Build the headers of msg (TMH, plus RVH for RNDV/FIN) into buf, which
 *  has uroce_tm_hdr_len(msg->op) bytes. */
void uroce_tm_build(const struct uroce_tm_msg *msg, void *buf);

/**
 * The slot of the oldest eligible listed tag msg matches, or UROCE_TM_NIL
 * (unexpected). Only EAGER and RNDV messages match. Changes nothing.
 */
uint32_t uroce_tm_match(const struct uroce_tm *tm,
			const struct uroce_tm_msg *msg);

/** Take the matched tag out of the list (LISTED -> CONSUMED); it keeps
 *  msg's tag and user data for its completions. */
struct uroce_tm_tag *uroce_tm_take(struct uroce_tm *tm, uint32_t slot,
				   const struct uroce_tm_msg *msg);

/** Free a consumed tag once its last completion is out. */
void uroce_tm_release(struct uroce_tm *tm, uint32_t slot);

/** A tagged message went to a plain receive: the phase advances. */
void uroce_tm_unexpected(struct uroce_tm *tm);

/** Whether software must report its unexpected count (IBV_WC_TM_SYNC_REQ). */
static inline bool
uroce_tm_sync_req(const struct uroce_tm *tm)
{
	return tm->unexp_sw != tm->unexp_hw;
}

/* ------------------------------------------------------------------------
 * Completions. The CQ stores struct ibv_wc, which has no room for
 * ibv_wc_tm_info; an IBV_WC_TM_RECV completion of a QP on a TM-SRQ (RC
 * only, where these fields mean nothing: ibv_poll_cq(3) defines src_qp,
 * slid and pkey_index for UD and GSI QPs) carries the tag in
 * vendor_err (low 32 bits) and src_qp (high 32 bits), and the TMH user
 * data in slid (high 16 bits) and pkey_index (low 16 bits).
 * ibv_wc_read_tm_info() reads them back.
 */
void uroce_tm_wc_set_info(struct ibv_wc *wc, uint64_t tag, uint32_t priv);
void uroce_tm_wc_info(const struct ibv_wc *wc, struct ibv_wc_tm_info *info);

/**
 * An IBV_WC_TM_RECV completion of the consumed tag t: wc_flags flags
 * (IBV_WC_TM_MATCH, IBV_WC_TM_DATA_VALID), the message's tag info when
 * flags has MATCH (else 0), status and byte_len as given. qp_num is
 * left 0.
 */
void uroce_tm_wc_recv(const struct uroce_tm_tag *t, enum ibv_wc_status status,
		      unsigned int flags, uint32_t byte_len, struct ibv_wc *wc);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_TM_H */
