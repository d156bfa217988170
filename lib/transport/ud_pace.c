/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The static rate of a UD address handle (IBTA vol 1, 9.11 static rate
 * control): an AH may name a rate below the port's, the rate of a slower
 * link on the path to that destination, and the packets a QP sends to it
 * are spaced so as not to exceed it. An HCA does this with an
 * inter-packet delay taken from the WQE's address vector: a UD QP's send
 * queue stops until the delay has passed, so later WRs wait behind it
 * (head of line) while other QPs go on. Here each UD QP keeps a token
 * bucket per paced AH it sends to, with the AH's tight profile (its batch
 * and one packet of slack, qp_pace.c), consulted before the QP's own
 * bucket: a datagram goes when both hold its frame, and so the lower of
 * the two rates wins. A WR whose AH bucket is short waits in order; the
 * QP is parked on the timing wheel like any pacing wait.
 *
 * The buckets are the QP's (its owner lcore alone touches them), so an AH
 * shared by QPs on different lcores needs no lock, and each QP's traffic
 * to the destination is held to the rate, as each HCA QP's is. A QP keeps
 * UD_PACE_SLOTS of them, keyed by the AH's id (unique per paced AH, so an
 * AH destroyed and another created at its address do not share a
 * bucket). A new AH takes a free slot or one whose bucket is full (a full
 * bucket is what a new one would start with, so nothing is forgotten);
 * with every slot in use and none full, the WR waits until one is.
 *
 * An AH at the port's rate (static_rate 0, or at or above the line rate)
 * is not paced: its datagrams pay one test of ah->paced.
 */
#include <errno.h>
#include <stdlib.h>

#include <rte_common.h>

#include "qp_priv.h"

#define UD_PACE_SLOTS	8

struct ud_pace_slot {
	uint64_t ah_id;			/* 0: free */
	struct uroce_tb tb;
	struct uroce_tb_profile prof;	/* the AH's, kept: it may go first */
};

struct uroce_ud_pace {
	struct ud_pace_slot slot[UD_PACE_SLOTS];
};

/* Paced AHs get ids from 1; 0 marks a free slot. */
static uint64_t ah_next_id;

/* enum ibv_rate: 0 (port rate) or one of the table's rates. */
int
uroce_ah_static_rate(const struct uroce_qp_env *env, struct uroce_ah *ah)
{
	enum ibv_rate rate = (enum ibv_rate)ah->attr.static_rate;
	uint32_t kbps;
	int ret;

	ah->paced = false;
	if (rate != IBV_RATE_MAX && uroce_rate_find(rate) == NULL)
		return -EINVAL;
	ret = uroce_static_rate_profile(env, rate, &kbps, &ah->pace_prof);
	if (ret < 0 || kbps == 0)
		return ret;
	ah->id = __atomic_add_fetch(&ah_next_id, 1, __ATOMIC_RELAXED);
	ah->paced = true;
	return 0;
}

int
uroce_ud_pace_init(struct uroce_qp *qp)
{
	if (qp->type != IBV_QPT_UD)
		return 0;
	qp->ud_pace = calloc(1, sizeof(*qp->ud_pace));
	return qp->ud_pace == NULL ? -ENOMEM : 0;
}

void
uroce_ud_pace_fini(struct uroce_qp *qp)
{
	free(qp->ud_pace);
	qp->ud_pace = NULL;
}

static bool
slot_full(const struct ud_pace_slot *s, uint64_t now)
{
	return uroce_tb_tokens(&s->tb, &s->prof, now) >=
	       (int64_t)s->prof.burst_bytes;
}

/* The AH's bucket, claiming a slot for it if needed; NULL with *ready the
 * time a slot comes free (its bucket full) when every one is in use. */
static struct ud_pace_slot *
slot_get(struct uroce_ud_pace *up, const struct uroce_ah *ah, uint64_t now,
	 uint64_t *ready)
{
	struct ud_pace_slot *s, *take = NULL;
	unsigned int i;

	*ready = UINT64_MAX;
	for (i = 0; i < UD_PACE_SLOTS; i++) {
		s = &up->slot[i];
		if (s->ah_id == ah->id)
			return s;
		if (take != NULL)
			continue;
		if (s->ah_id == 0 || slot_full(s, now))
			take = s;
		else
			*ready = RTE_MIN(*ready,
					 uroce_tb_ready_at(&s->tb, &s->prof, now,
							   s->prof.burst_bytes));
	}
	if (take == NULL)
		return NULL;
	take->ah_id = ah->id;
	take->prof = ah->pace_prof;
	uroce_tb_init(&take->tb, &take->prof, now);
	return take;
}

/* Bytes the WRs queued right behind the head send to the same AH, added
 * to @bytes and capped at the batch: what a wait for tokens gathers
 * (qp_pace.c, Batching). */
static uint32_t
same_ah_behind(struct uroce_qp *qp, const struct uroce_ah *ah, uint32_t bytes,
	       uint32_t batch)
{
	uint32_t posted = uroce_ring_cons_avail(&qp->sq, UINT32_MAX);
	uint64_t sum = bytes;
	uint32_t i;

	for (i = 1; i < posted && i < UROCE_TXB_MAX && sum < batch; i++) {
		const struct uroce_send_wqe *w = uroce_sq_wqe(qp,
							      qp->sq.tail + i);

		if (w->ah != ah)
			break;
		sum += w->length;
	}
	sum = RTE_MIN(sum, (uint64_t)batch);
	return (uint32_t)RTE_MAX(sum, (uint64_t)bytes);
}

static void
ah_wait(struct uroce_qp *qp, uint64_t now, uint64_t ready)
{
	qp->stats.pace_wait_cycles += ready - now;
	qp->stats.pace_ah_waits++;
	qp->req.wait_at = ready;
	/* Not the QP's own bucket's wait: its lost-rate reasons and its
	 * late wake-ups (uroce_qp_deadline_latest()) do not apply. */
	qp->req.stop = UROCE_REQ_STOP_NONE;
}

struct uroce_tb *
uroce_ud_pace_ah(struct uroce_qp *qp, const struct uroce_ah *ah, uint64_t now,
		 uint32_t bytes)
{
	struct ud_pace_slot *s;
	uint64_t ready;

	s = slot_get(qp->ud_pace, ah, now, &ready);
	if (s == NULL) {
		ah_wait(qp, now, ready);
		return NULL;
	}
	ready = uroce_tb_ready_at(&s->tb, &s->prof, now, bytes);
	if (ready == now)
		return &s->tb;
	ready = uroce_tb_ready_at(&s->tb, &s->prof, now,
				  same_ah_behind(qp, ah, bytes,
						 s->prof.batch_bytes));
	ah_wait(qp, now, ready);
	return NULL;
}

void
uroce_ud_pace_charge(struct uroce_tb *tb, uint64_t now, uint32_t bytes)
{
	struct ud_pace_slot *s = container_of(tb, struct ud_pace_slot, tb);

	/* uroce_ud_pace_ah() found the tokens there at this very now. */
	(void)uroce_tb_consume(&s->tb, &s->prof, now, bytes);
}
