/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The tag-matching engine of a TM-SRQ (uroce_tm.h): the tag list and its
 * ops (ADD/DEL/SYNC), matching in posting order, the phase counters, the
 * TMH/RVH headers and the TM completions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include "uroce_tm.h"

#define SLOT_BITS	16
#define SLOT_MASK	((UINT32_C(1) << SLOT_BITS) - 1)
#define MSG_MAX		(UINT32_C(1) << 31)	/* largest message (IBTA) */

static uint32_t
handle_of(const struct uroce_tm *tm, uint32_t slot)
{
	return ((uint32_t)tm->tags[slot].gen << SLOT_BITS) | slot;
}

/* ---------------------------------------------------------------------------
 * Lists: the matching list (doubly linked, posting order) and the free
 * list (FIFO through next: a freed slot is reused as late as possible).
 */
static void
free_push(struct uroce_tm *tm, uint32_t slot)
{
	struct uroce_tm_tag *t = &tm->tags[slot];

	t->state = UROCE_TM_FREE;
	t->next = UROCE_TM_NIL;
	if (tm->free_tail == UROCE_TM_NIL)
		tm->free_head = slot;
	else
		tm->tags[tm->free_tail].next = slot;
	tm->free_tail = slot;
}

static uint32_t
free_pop(struct uroce_tm *tm)
{
	uint32_t slot = tm->free_head;

	if (slot != UROCE_TM_NIL) {
		tm->free_head = tm->tags[slot].next;
		if (tm->free_head == UROCE_TM_NIL)
			tm->free_tail = UROCE_TM_NIL;
	}
	return slot;
}

static void
list_append(struct uroce_tm *tm, uint32_t slot)
{
	struct uroce_tm_tag *t = &tm->tags[slot];

	t->state = UROCE_TM_LISTED;
	t->prev = tm->tail;
	t->next = UROCE_TM_NIL;
	if (tm->tail == UROCE_TM_NIL)
		tm->head = slot;
	else
		tm->tags[tm->tail].next = slot;
	tm->tail = slot;
	tm->n_listed++;
}

static void
list_unlink(struct uroce_tm *tm, uint32_t slot)
{
	struct uroce_tm_tag *t = &tm->tags[slot];

	if (t->prev == UROCE_TM_NIL)
		tm->head = t->next;
	else
		tm->tags[t->prev].next = t->next;
	if (t->next == UROCE_TM_NIL)
		tm->tail = t->prev;
	else
		tm->tags[t->next].prev = t->prev;
	t->prev = t->next = UROCE_TM_NIL;
	tm->n_listed--;
}

int
uroce_tm_create(struct ibv_tm_cap *cap, struct uroce_tm **out)
{
	struct uroce_tm *tm;
	uint32_t i;

	if (cap == NULL || out == NULL ||
	    cap->max_num_tags == 0 || cap->max_num_tags > UROCE_TM_MAX_TAGS ||
	    cap->max_ops == 0 || cap->max_ops > UROCE_TM_MAX_OPS)
		return -EINVAL;
	tm = calloc(1, sizeof(*tm) + cap->max_num_tags * sizeof(tm->tags[0]));
	if (tm == NULL)
		return -ENOMEM;
	tm->max_tags = cap->max_num_tags;
	tm->max_ops = cap->max_ops;
	tm->head = tm->tail = UROCE_TM_NIL;
	tm->free_head = tm->free_tail = UROCE_TM_NIL;
	for (i = 0; i < tm->max_tags; i++)
		free_push(tm, i);
	*out = tm;
	return 0;
}

void
uroce_tm_destroy(struct uroce_tm *tm)
{
	free(tm);
}

/* ---------------------------------------------------------------------------
 * Ops (ibv_post_srq_ops(3)).
 */
#define OPS_FLAGS	(IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC)

/* What would make the op fail at post time; nothing changes. */
static int
op_check(const struct uroce_tm *tm, const struct ibv_ops_wr *wr)
{
	if (wr->flags & ~OPS_FLAGS)
		return -EINVAL;
	switch (wr->opcode) {
	case IBV_WR_TAG_ADD:
		if (wr->tm.add.num_sge < 0 ||
		    (uint32_t)wr->tm.add.num_sge > UROCE_TM_MAX_SGE ||
		    (wr->tm.add.num_sge > 0 && wr->tm.add.sg_list == NULL))
			return -EINVAL;
		return tm->free_head == UROCE_TM_NIL ? -ENOMEM : 0;
	case IBV_WR_TAG_DEL:
		return (wr->tm.handle & SLOT_MASK) < tm->max_tags ? 0 : -EINVAL;
	case IBV_WR_TAG_SYNC:
		return 0;
	default:
		return -EINVAL;
	}
}

static void
op_add(struct uroce_tm *tm, struct ibv_ops_wr *wr)
{
	uint32_t slot = free_pop(tm);
	struct uroce_tm_tag *t = &tm->tags[slot];

	t->tag = wr->tm.add.tag;
	t->mask = wr->tm.add.mask;
	t->wr_id = wr->tm.add.recv_wr_id;
	memset(&t->sge, 0, sizeof(t->sge));
	if (wr->tm.add.num_sge > 0)
		memcpy(&t->sge, wr->tm.add.sg_list, sizeof(t->sge));
	/* Phases: only a tag added in sync may match. */
	t->eligible = !uroce_tm_sync_req(tm);
	list_append(tm, slot);
	wr->tm.handle = handle_of(tm, slot);
	tm->stats.adds++;
}

/* @return whether the tag was there to remove. */
static bool
op_del(struct uroce_tm *tm, const struct ibv_ops_wr *wr)
{
	uint32_t slot = wr->tm.handle & SLOT_MASK;
	struct uroce_tm_tag *t = &tm->tags[slot];

	if (t->state != UROCE_TM_LISTED || handle_of(tm, slot) != wr->tm.handle) {
		tm->stats.del_fail++;
		return false;
	}
	list_unlink(tm, slot);
	t->gen++;
	free_push(tm, slot);
	tm->stats.dels++;
	return true;
}

static const enum ibv_wc_opcode op_wc[] = {
	[IBV_WR_TAG_ADD] = IBV_WC_TM_ADD,
	[IBV_WR_TAG_DEL] = IBV_WC_TM_DEL,
	[IBV_WR_TAG_SYNC] = IBV_WC_TM_SYNC,
};

static void
op_complete(const struct uroce_tm *tm, const struct ibv_ops_wr *wr,
	    enum ibv_wc_status status, uroce_tm_complete_fn done, void *ctx)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = wr->wr_id;
	wc.status = status;
	wc.opcode = op_wc[wr->opcode];
	if (uroce_tm_sync_req(tm))
		wc.wc_flags = IBV_WC_TM_SYNC_REQ;
	if (done != NULL)
		done(ctx, &wc);
}

int
uroce_tm_post_ops(struct uroce_tm *tm, struct ibv_ops_wr *wr,
		  struct ibv_ops_wr **bad_wr, uroce_tm_complete_fn done,
		  void *ctx)
{
	enum ibv_wc_status status;
	uint32_t n;
	int ret = 0;

	for (n = 0; wr != NULL; wr = wr->next, n++) {
		ret = n >= tm->max_ops ? -ENOMEM : op_check(tm, wr);
		if (ret < 0)
			break;
		/* The count rides on any op that asks (ibv_post_srq_ops(3)). */
		if ((wr->flags & IBV_OPS_TM_SYNC) || wr->opcode == IBV_WR_TAG_SYNC)
			tm->unexp_sw = wr->tm.unexpected_cnt;
		status = IBV_WC_SUCCESS;
		if (wr->opcode == IBV_WR_TAG_ADD)
			op_add(tm, wr);
		else if (wr->opcode == IBV_WR_TAG_DEL && !op_del(tm, wr))
			status = IBV_WC_TM_ERR;
		else if (wr->opcode == IBV_WR_TAG_SYNC)
			tm->stats.syncs++;
		if ((wr->flags & IBV_OPS_SIGNALED) || status != IBV_WC_SUCCESS)
			op_complete(tm, wr, status, done, ctx);
	}
	if (ret < 0 && bad_wr != NULL)
		*bad_wr = wr;
	return ret;
}

/* ---------------------------------------------------------------------------
 * Messages.
 */
uint32_t
uroce_tm_hdr_len(uint8_t op)
{
	switch (op) {
	case IBV_TMH_NO_TAG:
		return 1;	/* the opcode alone (tag_matching.md) */
	case IBV_TMH_EAGER:
		return sizeof(struct ibv_tmh);
	case IBV_TMH_RNDV:
	case IBV_TMH_FIN:
		return sizeof(struct ibv_tmh) + sizeof(struct ibv_rvh);
	default:
		return 0;
	}
}

int
uroce_tm_parse(const void *buf, uint32_t len, struct uroce_tm_msg *msg)
{
	const uint8_t *p = buf;
	struct ibv_tmh tmh;
	struct ibv_rvh rvh;
	uint32_t need;

	memset(msg, 0, sizeof(*msg));
	if (len == 0)
		return -EBADMSG;
	need = uroce_tm_hdr_len(p[0]);
	/* FIN is answered in software on the sender: it needs only a TMH. */
	if (p[0] == IBV_TMH_FIN)
		need = sizeof(struct ibv_tmh);
	if (need == 0 || len < need)
		return -EBADMSG;
	msg->op = p[0];
	if (msg->op == IBV_TMH_NO_TAG)
		return 0;
	memcpy(&tmh, p, sizeof(tmh));
	msg->app_ctx = rte_be_to_cpu_32(tmh.app_ctx);
	msg->tag = rte_be_to_cpu_64(tmh.tag);
	if (msg->op != IBV_TMH_RNDV)
		return 0;
	memcpy(&rvh, p + sizeof(tmh), sizeof(rvh));
	msg->va = rte_be_to_cpu_64(rvh.va);
	msg->rkey = rte_be_to_cpu_32(rvh.rkey);
	msg->len = rte_be_to_cpu_32(rvh.len);
	return msg->len > MSG_MAX ? -EBADMSG : 0;
}

void
uroce_tm_build(const struct uroce_tm_msg *msg, void *buf)
{
	struct ibv_tmh tmh;
	struct ibv_rvh rvh;
	uint8_t *p = buf;

	if (msg->op == IBV_TMH_NO_TAG) {
		p[0] = msg->op;
		return;
	}
	memset(&tmh, 0, sizeof(tmh));
	tmh.opcode = msg->op;
	tmh.app_ctx = rte_cpu_to_be_32(msg->app_ctx);
	tmh.tag = rte_cpu_to_be_64(msg->tag);
	memcpy(p, &tmh, sizeof(tmh));
	if (uroce_tm_hdr_len(msg->op) <= sizeof(tmh))
		return;
	rvh.va = rte_cpu_to_be_64(msg->va);
	rvh.rkey = rte_cpu_to_be_32(msg->rkey);
	rvh.len = rte_cpu_to_be_32(msg->len);
	memcpy(p + sizeof(tmh), &rvh, sizeof(rvh));
}

uint32_t
uroce_tm_match(const struct uroce_tm *tm, const struct uroce_tm_msg *msg)
{
	uint32_t slot;

	if (msg->op != IBV_TMH_EAGER && msg->op != IBV_TMH_RNDV)
		return UROCE_TM_NIL;
	for (slot = tm->head; slot != UROCE_TM_NIL; slot = tm->tags[slot].next) {
		const struct uroce_tm_tag *t = &tm->tags[slot];

		if (t->eligible && ((msg->tag ^ t->tag) & t->mask) == 0)
			return slot;
	}
	return UROCE_TM_NIL;
}

struct uroce_tm_tag *
uroce_tm_take(struct uroce_tm *tm, uint32_t slot,
	      const struct uroce_tm_msg *msg)
{
	struct uroce_tm_tag *t = &tm->tags[slot];

	list_unlink(tm, slot);
	t->msg_tag = msg->tag;
	t->msg_priv = msg->app_ctx;
	t->state = UROCE_TM_CONSUMED;
	tm->stats.matched++;
	return t;
}

void
uroce_tm_release(struct uroce_tm *tm, uint32_t slot)
{
	struct uroce_tm_tag *t = &tm->tags[slot];

	if (t->state != UROCE_TM_CONSUMED)
		return;
	t->gen++;
	free_push(tm, slot);
}

void
uroce_tm_unexpected(struct uroce_tm *tm)
{
	tm->unexp_hw++;
	tm->stats.unexpected++;
}

/* ---------------------------------------------------------------------------
 * Completions.
 */
void
uroce_tm_wc_set_info(struct ibv_wc *wc, uint64_t tag, uint32_t priv)
{
	wc->vendor_err = (uint32_t)tag;
	wc->src_qp = (uint32_t)(tag >> 32);
	wc->slid = (uint16_t)(priv >> 16);
	wc->pkey_index = (uint16_t)priv;
}

void
uroce_tm_wc_info(const struct ibv_wc *wc, struct ibv_wc_tm_info *info)
{
	info->tag = ((uint64_t)wc->src_qp << 32) | wc->vendor_err;
	info->priv = ((uint32_t)wc->slid << 16) | wc->pkey_index;
}

void
uroce_tm_wc_recv(const struct uroce_tm_tag *t, enum ibv_wc_status status,
		 unsigned int flags, uint32_t byte_len, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = t->wr_id;
	wc->status = status;
	wc->opcode = IBV_WC_TM_RECV;
	wc->byte_len = byte_len;
	wc->wc_flags = flags;
	/* The tag and user data come with the match; a later DATA_VALID
	 * completion (multi-packet eager, rendezvous) carries none, as
	 * rdma-core's tests expect of it. */
	if (flags & IBV_WC_TM_MATCH)
		uroce_tm_wc_set_info(wc, t->msg_tag, t->msg_priv);
}
