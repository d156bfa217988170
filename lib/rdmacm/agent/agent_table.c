/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The agent's containers: hash chains that find a connection by comm ID
 * (and by peer and comm ID, by peer and QPN), grown by doubling so that
 * 10,000 connections cost a few entries a chain; and a binary min-heap of
 * the connections' deadlines, whose top arms the timerfd.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent_priv.h"

#define HTAB_MIN_BUCKETS	256u

int
cm_htab_init(struct cm_htab *t)
{
	t->b = calloc(HTAB_MIN_BUCKETS, sizeof(*t->b));
	t->mask = HTAB_MIN_BUCKETS - 1;
	t->n = 0;
	return t->b != NULL ? 0 : -ENOMEM;
}

void
cm_htab_fini(struct cm_htab *t)
{
	free(t->b);
	t->b = NULL;
}

/* Double the buckets when the chains average over 2; a failed allocation
 * keeps the old ones (longer chains, nothing lost). */
static void
htab_grow(struct cm_htab *t)
{
	uint32_t nb = (t->mask + 1) * 2, i;
	struct cm_hnode **b, *e, *next;

	if (t->n <= 2 * (t->mask + 1) || nb == 0)
		return;
	b = calloc(nb, sizeof(*b));
	if (b == NULL)
		return;
	for (i = 0; i <= t->mask; i++) {
		for (e = t->b[i]; e != NULL; e = next) {
			next = e->next;
			e->next = b[e->h & (nb - 1)];
			b[e->h & (nb - 1)] = e;
		}
	}
	free(t->b);
	t->b = b;
	t->mask = nb - 1;
}

void
cm_htab_add(struct cm_htab *t, struct cm_hnode *e, uint64_t h)
{
	e->h = h;
	e->next = t->b[h & t->mask];
	t->b[h & t->mask] = e;
	t->n++;
	htab_grow(t);
}

void
cm_htab_del(struct cm_htab *t, struct cm_hnode *e)
{
	struct cm_hnode **p;

	for (p = &t->b[e->h & t->mask]; *p != NULL; p = &(*p)->next) {
		if (*p == e) {
			*p = e->next;
			e->next = NULL;
			t->n--;
			return;
		}
	}
}

struct cm_hnode *
cm_htab_next(const struct cm_htab *t, uint64_t h, struct cm_hnode *from)
{
	struct cm_hnode *e = from != NULL ? from->next : t->b[h & t->mask];

	while (e != NULL && e->h != h)
		e = e->next;
	return e;
}

/* FNV-1a over the GID, then @v mixed in (splitmix64's finaliser). */
uint64_t
cm_hash_gid(const union ibv_gid *gid, uint64_t v)
{
	uint64_t h = 0xcbf29ce484222325ull;
	unsigned int i;

	for (i = 0; i < sizeof(gid->raw); i++)
		h = (h ^ gid->raw[i]) * 0x100000001b3ull;
	h ^= v + 0x9e3779b97f4a7c15ull;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

/* ------------------------------------------------------------------------
 * The timer heap: v[0] has the smallest heap_key.
 */
static void
heap_put(struct cm_heap *hp, size_t i, struct cm_conn *c)
{
	hp->v[i] = c;
	c->heap_idx = i;
}

static void
heap_up(struct cm_heap *hp, size_t i)
{
	struct cm_conn *c = hp->v[i];

	while (i > 0 && hp->v[(i - 1) / 2]->heap_key > c->heap_key) {
		heap_put(hp, i, hp->v[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_put(hp, i, c);
}

static void
heap_down(struct cm_heap *hp, size_t i)
{
	struct cm_conn *c = hp->v[i];
	size_t k;

	for (;;) {
		k = 2 * i + 1;
		if (k >= hp->n)
			break;
		if (k + 1 < hp->n && hp->v[k + 1]->heap_key < hp->v[k]->heap_key)
			k++;
		if (hp->v[k]->heap_key >= c->heap_key)
			break;
		heap_put(hp, i, hp->v[k]);
		i = k;
	}
	heap_put(hp, i, c);
}

static void
heap_remove(struct cm_heap *hp, struct cm_conn *c)
{
	size_t i = c->heap_idx;
	struct cm_conn *last = hp->v[--hp->n];

	c->heap_key = 0;
	if (last == c)
		return;
	heap_put(hp, i, last);
	heap_up(hp, i);
	heap_down(hp, last->heap_idx);
}

static int
heap_add(struct cm_heap *hp, struct cm_conn *c, uint64_t key)
{
	struct cm_conn **v;
	size_t cap;

	if (hp->n == hp->cap) {
		cap = hp->cap != 0 ? hp->cap * 2 : 64;
		v = realloc(hp->v, cap * sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		hp->v = v;
		hp->cap = cap;
	}
	c->heap_key = key;
	heap_put(hp, hp->n++, c);
	heap_up(hp, c->heap_idx);
	return 0;
}

int
cm_heap_set(struct cm_heap *hp, struct cm_conn *c, uint64_t key)
{
	if (c->heap_key == key)
		return 0;
	if (c->heap_key != 0)
		heap_remove(hp, c);
	return key != 0 ? heap_add(hp, c, key) : 0;
}

struct cm_conn *
cm_heap_top(const struct cm_heap *hp)
{
	return hp->n > 0 ? hp->v[0] : NULL;
}

void
cm_heap_fini(struct cm_heap *hp)
{
	free(hp->v);
	hp->v = NULL;
	hp->n = hp->cap = 0;
}
