/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * A timing wheel of three aligned levels (level 1, level 2, overflow) with
 * intrusive FIFO lists and an occupancy bitmap per level. The layout and why
 * it keeps arrival order are described at uroce_wheel_init() in uroce_pace.h.
 *
 * Slot numbers are absolute (deadline >> slot_shift, rounded up); a block is
 * slot >> order and a lap is slot >> 2 * order. Lists are numbered
 * [0, n) level 1 by slot, [n, 2n) level 2 by block, [2n, 3n) the heads of
 * the lap's blocks, 3n overflow. A block's head list holds the entries due
 * at its first slot, from the time they are filed until they leave: it is
 * level 1's first slot while the cursor is in that block (level 1's own
 * list 0 stays empty), so entries due at a block's start never move down,
 * and uroce_wheel_add_range() files what it can there.
 */

#include <errno.h>
#include <stdlib.h>

#include <rte_common.h>

#include "uroce_pace.h"

#define WORD_BITS	64

static inline uint32_t
wheel_n(const struct uroce_wheel *w)
{
	return UINT32_C(1) << w->order;
}

static inline uint64_t
wheel_mask(const struct uroce_wheel *w)
{
	return wheel_n(w) - 1;
}

static inline uint32_t
wheel_ovf(const struct uroce_wheel *w)
{
	return 3 * wheel_n(w);
}

static inline struct uroce_wheel_link *
wheel_overflow(const struct uroce_wheel *w)
{
	return &w->lists[wheel_ovf(w)];
}

/* The head list of the block holding slot (in the cursor's lap). */
static inline uint32_t
wheel_head(const struct uroce_wheel *w, uint64_t slot)
{
	return 2 * wheel_n(w) + (uint32_t)((slot >> w->order) & wheel_mask(w));
}

/* ---------------------------------------------------------------------------
 * Occupancy bitmaps: level 0 (level 1 slots) and level 1 (level 2 blocks).
 */
static inline uint64_t *
bm_words(const struct uroce_wheel *w, unsigned int lvl)
{
	return &w->bits[lvl * (wheel_n(w) / WORD_BITS)];
}

static inline void
bm_set(struct uroce_wheel *w, unsigned int lvl, uint32_t i)
{
	bm_words(w, lvl)[i / WORD_BITS] |= UINT64_C(1) << (i % WORD_BITS);
	w->summary[lvl] |= UINT64_C(1) << (i / WORD_BITS);
}

static inline void
bm_clear(struct uroce_wheel *w, unsigned int lvl, uint32_t i)
{
	uint64_t *word = &bm_words(w, lvl)[i / WORD_BITS];

	*word &= ~(UINT64_C(1) << (i % WORD_BITS));
	if (*word == 0)
		w->summary[lvl] &= ~(UINT64_C(1) << (i / WORD_BITS));
}

/* First set bit at or after from, or n if none: two word looks at most. */
static uint32_t
bm_next(const struct uroce_wheel *w, unsigned int lvl, uint32_t from)
{
	const uint64_t *words = bm_words(w, lvl);
	uint32_t wi = from / WORD_BITS;
	uint64_t bits, later;

	if (from >= wheel_n(w))
		return wheel_n(w);
	bits = words[wi] & (~UINT64_C(0) << (from % WORD_BITS));
	if (bits != 0)
		return wi * WORD_BITS + rte_bsf64(bits);
	later = wi + 1 < WORD_BITS ? w->summary[lvl] >> (wi + 1) << (wi + 1) : 0;
	if (later == 0)
		return wheel_n(w);
	wi = rte_bsf64(later);
	return wi * WORD_BITS + rte_bsf64(words[wi]);
}

/* ---------------------------------------------------------------------------
 * Lists. Each is circular around a sentinel in w->lists.
 */
static inline bool
list_empty(const struct uroce_wheel_link *head)
{
	return head->next == head;
}

static inline struct uroce_wheel_entry *
list_first(const struct uroce_wheel_link *head)
{
	return container_of(head->next, struct uroce_wheel_entry, link);
}

/* Append e to list l, keeping the bitmap in step: level 1's bit i for its
 * list i; level 2's bit b while block b's list or head list holds entries
 * (the cursor's own block's bit is not looked at). */
static void
wheel_link(struct uroce_wheel *w, struct uroce_wheel_entry *e, uint32_t l)
{
	struct uroce_wheel_link *head = &w->lists[l];
	uint32_t n = wheel_n(w);

	e->link.prev = head->prev;
	e->link.next = head;
	head->prev->next = &e->link;
	head->prev = &e->link;
	e->list = l;
	if (l < 3 * n)
		bm_set(w, l >= n, l % n);
}

static void
wheel_unlink(struct uroce_wheel *w, struct uroce_wheel_entry *e)
{
	uint32_t l = e->list, n = wheel_n(w);

	e->link.prev->next = e->link.next;
	e->link.next->prev = e->link.prev;
	e->list = UROCE_WHEEL_UNARMED;
	if (l >= 3 * n || !list_empty(&w->lists[l]))
		return;
	if (l < n)
		bm_clear(w, 0, l);
	else if (list_empty(&w->lists[n + l % n]) &&
		 list_empty(&w->lists[2 * n + l % n]))
		bm_clear(w, 1, l % n);
}

/* The slot of a deadline: rounded up, so that a slot is due at its start. */
static inline uint64_t
wheel_slot(const struct uroce_wheel *w, uint64_t deadline)
{
	uint64_t low = deadline & ((UINT64_C(1) << w->slot_shift) - 1);

	return (deadline >> w->slot_shift) + (low != 0);
}

/* The lowest level that may hold slot (slot >= cursor). */
static uint32_t
wheel_list_of(const struct uroce_wheel *w, uint64_t slot)
{
	unsigned int o = w->order;

	if (slot >> 2 * o != w->cur >> 2 * o)
		return wheel_ovf(w);
	if ((slot & wheel_mask(w)) == 0)
		return wheel_head(w, slot);
	if (slot >> o == w->cur >> o)
		return (uint32_t)(slot & wheel_mask(w));
	return wheel_n(w) + (uint32_t)((slot >> o) & wheel_mask(w));
}

/* The list of the cursor's slot: its block's head list at the first. */
static inline struct uroce_wheel_link *
wheel_cur_list(struct uroce_wheel *w)
{
	uint32_t i = (uint32_t)(w->cur & wheel_mask(w));

	return &w->lists[i == 0 ? wheel_head(w, w->cur) : i];
}

/* The first occupied slot of the cursor's block at or after the cursor's,
 * as an index in the block, or n if none. */
static uint32_t
wheel_block_next(const struct uroce_wheel *w)
{
	uint32_t i = (uint32_t)(w->cur & wheel_mask(w));

	if (i == 0 && !list_empty(&w->lists[wheel_head(w, w->cur)]))
		return 0;
	return bm_next(w, 0, RTE_MAX(i, 1u));
}

/* ---------------------------------------------------------------------------
 * API: set-up, add, del.
 */
int
uroce_wheel_init(struct uroce_wheel *w, unsigned int slot_shift,
		 unsigned int nslots_pow2, uint64_t now)
{
	uint32_t i, nlists;

	if (w == NULL || slot_shift > UROCE_WHEEL_SHIFT_MAX ||
	    nslots_pow2 < UROCE_WHEEL_SLOTS_MIN ||
	    nslots_pow2 > UROCE_WHEEL_SLOTS_MAX ||
	    !rte_is_power_of_2(nslots_pow2))
		return -EINVAL;
	nlists = 3 * nslots_pow2 + 1;
	w->lists = malloc(nlists * sizeof(*w->lists));
	w->bits = calloc(2 * nslots_pow2 / WORD_BITS, sizeof(*w->bits));
	if (w->lists == NULL || w->bits == NULL) {
		free(w->lists);
		free(w->bits);
		w->lists = NULL;
		w->bits = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < nlists; i++)
		w->lists[i].next = w->lists[i].prev = &w->lists[i];
	w->slot_shift = (uint8_t)slot_shift;
	w->order = (uint8_t)rte_log2_u32(nslots_pow2);
	w->cur = now >> slot_shift;
	w->ovf_min = UINT64_MAX;
	w->count = 0;
	w->summary[0] = w->summary[1] = 0;
	w->visits = 0;
	return 0;
}

void
uroce_wheel_fini(struct uroce_wheel *w)
{
	free(w->lists);
	free(w->bits);
	w->lists = NULL;
	w->bits = NULL;
	w->count = 0;
}

void
uroce_wheel_add(struct uroce_wheel *w, struct uroce_wheel_entry *e,
		uint64_t deadline)
{
	uint64_t slot = RTE_MAX(wheel_slot(w, deadline), w->cur);
	uint32_t l;

	if (uroce_wheel_armed(e))
		uroce_wheel_del(w, e);
	e->deadline = deadline;
	l = wheel_list_of(w, slot);
	if (l == wheel_ovf(w))
		w->ovf_min = RTE_MIN(w->ovf_min, slot);
	wheel_link(w, e, l);
	w->count++;
}

void
uroce_wheel_add_range(struct uroce_wheel *w, struct uroce_wheel_entry *e,
		      uint64_t deadline, uint64_t latest)
{
	uint64_t slot = wheel_slot(w, deadline);
	uint64_t start = (slot | wheel_mask(w)) + 1;	/* the next block's */

	/* Not when due already: that goes into the current slot. */
	if (slot > w->cur && (slot & wheel_mask(w)) != 0 && start != 0 &&
	    start <= latest >> w->slot_shift)
		deadline = start << w->slot_shift;
	uroce_wheel_add(w, e, deadline);
}

int
uroce_wheel_del(struct uroce_wheel *w, struct uroce_wheel_entry *e)
{
	if (!uroce_wheel_armed(e))
		return -ENOENT;
	/* A stale (too low) ovf_min only costs one early look at the list. */
	wheel_unlink(w, e);
	w->count--;
	return 0;
}

/* ---------------------------------------------------------------------------
 * Moving the cursor. Invariants: level-1 slots before the cursor are empty;
 * level 1 holds only the cursor's block, level 2 only later blocks of the
 * cursor's lap, the overflow list only later laps.
 */

/* Move every entry of list l to the lowest level it now fits, in order. */
static void
wheel_refile(struct uroce_wheel *w, uint32_t l)
{
	struct uroce_wheel_link *head = &w->lists[l], *pos, *next;
	struct uroce_wheel_entry *e;
	uint64_t slot, ovf_min = UINT64_MAX;
	uint32_t to;

	for (pos = head->next; pos != head; pos = next) {
		next = pos->next;
		/* A list is a chain of loads: start the next one now, while
		 * this entry is filed (which reads its new list's tail). */
		__builtin_prefetch(next);
		e = container_of(pos, struct uroce_wheel_entry, link);
		slot = wheel_slot(w, e->deadline);
		to = wheel_list_of(w, slot);
		if (to == l) {
			ovf_min = RTE_MIN(ovf_min, slot);
			continue;
		}
		wheel_unlink(w, e);
		wheel_link(w, e, to);
	}
	if (l == wheel_ovf(w))
		w->ovf_min = ovf_min;
}

/* The overflow list's earliest lap is due by target: enter it. */
static bool
wheel_next_lap(struct uroce_wheel *w, uint64_t target)
{
	unsigned int o2 = 2 * w->order;
	uint64_t lap = w->cur >> o2, first;

	/* An entry in the overflow list is in a later lap: lap + 1 fits. */
	if (list_empty(wheel_overflow(w)))
		goto idle;
	first = RTE_MAX(w->ovf_min >> o2, lap + 1) << o2;
	if (first > target)
		goto idle;
	w->cur = first;
	wheel_refile(w, wheel_ovf(w));
	return true;
idle:
	w->cur = target;
	return false;
}

/* Level 1 is empty from the cursor on: enter the next occupied block. */
static bool
wheel_next_block(struct uroce_wheel *w, uint64_t target)
{
	uint64_t block = w->cur >> w->order, first;
	uint32_t nb;

	if ((w->cur | wheel_mask(w)) >= target) {
		w->cur = target;	/* target is in this block */
		return false;
	}
	nb = bm_next(w, 1, (uint32_t)(block & wheel_mask(w)) + 1);
	if (nb == wheel_n(w))
		return wheel_next_lap(w, target);
	first = ((block & ~wheel_mask(w)) | nb) << w->order;
	if (first > target) {
		w->cur = target;	/* blocks up to target are empty */
		return false;
	}
	w->cur = first;
	/* The block's head list stays where it is (its first slot). */
	wheel_refile(w, wheel_n(w) + nb);
	return true;
}

/*
 * Put the cursor on the first occupied slot due by target and return true;
 * or, if none is, put it on target (never back) and return false. Each pass
 * finds the slot, or moves a list down a level, or stops.
 */
static bool
wheel_seek(struct uroce_wheel *w, uint64_t target)
{
	uint64_t slot;
	uint32_t i;

	for (;;) {
		w->visits++;
		if (w->cur > target)
			return false;
		i = wheel_block_next(w);
		if (i < wheel_n(w)) {
			slot = (w->cur & ~wheel_mask(w)) | i;
			w->cur = RTE_MIN(slot, target);
			return slot <= target;
		}
		if (!wheel_next_block(w, target))
			return false;
	}
}

unsigned int
uroce_wheel_expire(struct uroce_wheel *w, uint64_t now,
		   struct uroce_wheel_entry **out, unsigned int max)
{
	uint64_t target = now >> w->slot_shift;
	struct uroce_wheel_link *head;
	struct uroce_wheel_entry *e;
	unsigned int n = 0;

	if (w->count == 0) {
		/* Nothing to keep in order: jump, whatever the distance. */
		w->visits++;
		w->cur = RTE_MAX(w->cur, target);
		return 0;
	}
	while (n < max && wheel_seek(w, target)) {
		head = wheel_cur_list(w);
		do {
			e = list_first(head);
			wheel_unlink(w, e);
			w->count--;
			out[n++] = e;
		} while (n < max && !list_empty(head));
	}
	/* A list is a chain of loads: start the next one, so that a caller
	 * that takes a few at a time, with work between, finds it there. */
	if (n != 0 && w->count != 0)
		__builtin_prefetch(head->next);
	return n;
}

uint64_t
uroce_wheel_next_due(const struct uroce_wheel *w)
{
	uint64_t slot;
	uint32_t i;

	if (w->count == 0)
		return UINT64_MAX;
	/* Level-1 slots before the cursor are empty; later levels hold
	 * only later blocks. */
	i = wheel_block_next(w);
	if (i < wheel_n(w))
		slot = (w->cur & ~wheel_mask(w)) | i;
	else
		slot = ((w->cur >> w->order) + 1) << w->order;
	if (slot > (UINT64_MAX >> w->slot_shift))
		return UINT64_MAX;
	return slot << w->slot_shift;
}
