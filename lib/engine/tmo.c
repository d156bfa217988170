/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The QPs' timer entries, packed. The wheel (lib/pace) links its entries
 * into lists: filing one touches the list's last entry, moving a level-2
 * list down a level (a slow paced QP's wake-up 20 ms ahead lands there)
 * walks every entry in it, and expiring one touches its neighbour. With
 * the entry inside each eng_qp, each of those would be a cache miss on a
 * cold QP, several per wake-up of 10,000 paced QPs. Packed in chunks,
 * 10,000 entries are 640 KB, a line each, rather than a line in each of
 * 10,000 QPs; the entry also holds the QP pointers, so that an expiry
 * can prefetch the QP without loading its eng_qp first (engine_priv.h:
 * in the entry's line).
 *
 * Entries are handed out and returned under the engine lock (QP create and
 * destroy); chunks are freed with the engine.
 */
#include <errno.h>
#include <stdlib.h>

#include <rte_common.h>

#include "engine_priv.h"

#define ENG_TMO_CHUNK	1024

struct eng_tmo_chunk {
	struct eng_tmo_chunk *next;
	struct eng_tmo ent[ENG_TMO_CHUNK];
};

/* A new chunk's entries go on the free list in address order, so that QPs
 * created one after another get neighbouring entries. */
static int
tmo_grow(struct eng *e)
{
	struct eng_tmo_chunk *c;
	unsigned int i;

	if (posix_memalign((void **)&c, RTE_CACHE_LINE_SIZE, sizeof(*c)) != 0)
		return -ENOMEM;
	c->next = e->tmo_chunks;
	e->tmo_chunks = c;
	for (i = ENG_TMO_CHUNK; i-- > 0;) {
		c->ent[i].next_free = e->tmo_free;
		e->tmo_free = &c->ent[i];
	}
	return 0;
}

struct eng_tmo *
eng_tmo_get(struct eng *e, struct eng_qp *eq)
{
	struct eng_tmo *t;

	if (e->tmo_free == NULL && tmo_grow(e) != 0)
		return NULL;
	t = e->tmo_free;
	e->tmo_free = t->next_free;
	uroce_wheel_entry_init(&t->e);
	t->eq = eq;
	t->qp = NULL;
	return t;
}

void
eng_tmo_put(struct eng *e, struct eng_tmo *t)
{
	if (t == NULL)
		return;
	t->next_free = e->tmo_free;
	e->tmo_free = t;
}

void
eng_tmo_fini(struct eng *e)
{
	struct eng_tmo_chunk *c;

	while ((c = e->tmo_chunks) != NULL) {
		e->tmo_chunks = c->next;
		free(c);
	}
	e->tmo_free = NULL;
}
