/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Ready lists (uroce_pace.h, uroce_sched_init()): one circular FIFO per
 * output around a sentinel, a bit per non-empty list, and a turn that
 * moves on after every entry taken, so outputs alternate.
 */

#include <errno.h>

#include <rte_common.h>

#include "uroce_pace.h"

int
uroce_sched_init(struct uroce_sched *s, unsigned int nlists)
{
	unsigned int l;

	if (s == NULL || nlists == 0 || nlists > UROCE_SCHED_MAX_LISTS)
		return -EINVAL;
	for (l = 0; l < UROCE_SCHED_MAX_LISTS; l++)
		s->head[l].next = s->head[l].prev = &s->head[l];
	s->nonempty = 0;
	s->count = 0;
	s->nlists = nlists;
	s->turn = 0;
	return 0;
}

bool
uroce_sched_add(struct uroce_sched *s, struct uroce_sched_entry *e)
{
	struct uroce_wheel_link *head = &s->head[e->list];

	if (e->queued)
		return false;
	e->link.prev = head->prev;
	e->link.next = head;
	head->prev->next = &e->link;
	head->prev = &e->link;
	e->queued = true;
	s->nonempty |= UINT32_C(1) << e->list;
	s->count++;
	return true;
}

int
uroce_sched_del(struct uroce_sched *s, struct uroce_sched_entry *e)
{
	if (!e->queued)
		return -ENOENT;
	e->link.prev->next = e->link.next;
	e->link.next->prev = e->link.prev;
	e->queued = false;
	if (s->head[e->list].next == &s->head[e->list])
		s->nonempty &= ~(UINT32_C(1) << e->list);
	s->count--;
	return 0;
}

/* The first set bit of m at or after bit from, wrapping; m != 0. */
static unsigned int
sched_pick(uint32_t m, unsigned int from)
{
	uint32_t later = from < 32 ? m & (~UINT32_C(0) << from) : 0;

	return rte_bsf32(later != 0 ? later : m);
}

struct uroce_sched_entry *
uroce_sched_next(struct uroce_sched *s, uint32_t busy)
{
	uint32_t ready = s->nonempty & ~busy;
	struct uroce_sched_entry *e;
	unsigned int l;

	if (ready == 0)
		return NULL;
	l = sched_pick(ready, s->turn);
	e = container_of(s->head[l].next, struct uroce_sched_entry, link);
	uroce_sched_del(s, e);
	s->turn = l + 1 == s->nlists ? 0 : l + 1;
	return e;
}
