/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Token bucket per QP, in exact integer TSC arithmetic. The token unit
 * (1/tsc_hz of a byte) and the ranges that keep it inside int64_t are
 * explained in uroce_pace.h.
 */

#include <errno.h>
#include <stddef.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>

#include "uroce_pace.h"

/* Bytes per second in one kbit/s (ibv_qp_rate_limit_attr.rate_limit). */
#define BYTES_PER_KBIT	125

int
uroce_tb_profile_init(struct uroce_tb_profile *p, uint64_t tsc_hz,
		      uint64_t rate_kbps, uint32_t burst_bytes)
{
	struct uroce_tb_profile np;
	uint64_t span;

	if (p == NULL || tsc_hz == 0 || tsc_hz > UROCE_TB_HZ_MAX ||
	    rate_kbps == 0 || rate_kbps > UROCE_TB_RATE_MAX_KBPS ||
	    burst_bytes == 0 || burst_bytes > UROCE_TB_CAP_MAX / tsc_hz)
		return -EINVAL;

	np.tsc_hz = tsc_hz;
	np.refill = rate_kbps * BYTES_PER_KBIT;
	np.cap = (int64_t)(burst_bytes * tsc_hz);
	/*
	 * A bucket never drops below -UROCE_TB_MAX_BYTES * tsc_hz (the largest
	 * packet sent from a full bucket, or debt converted from another
	 * tsc_hz), so after this many cycles any bucket is full. Clamping the
	 * elapsed time to it bounds elapsed * refill by cap + 2^60 + refill,
	 * which is below 2^62.
	 */
	span = (uint64_t)np.cap + (uint64_t)UROCE_TB_MAX_BYTES * tsc_hz;
	np.fill_cycles = (span + np.refill - 1) / np.refill;
	np.rate_kbps = rate_kbps;
	np.burst_bytes = burst_bytes;
	np.batch_bytes = 0;	/* the user's (uroce_pace.h) */
	*p = np;
	return 0;
}

void
uroce_tb_init(struct uroce_tb *tb, const struct uroce_tb_profile *p,
	      uint64_t now)
{
	tb->tokens = p->cap;
	tb->time = now;
}

/* True if now is after the bucket's time (modulo 2^64, read as signed). */
static inline bool
tb_later(const struct uroce_tb *tb, uint64_t now)
{
	return (int64_t)(now - tb->time) > 0;
}

/* Tokens the bucket holds at now, without changing it. */
static inline int64_t
tb_level(const struct uroce_tb *tb, const struct uroce_tb_profile *p,
	 uint64_t now)
{
	uint64_t elapsed = now - tb->time;
	int64_t t;

	if (!tb_later(tb, now))
		return tb->tokens;
	if (elapsed >= p->fill_cycles)
		return p->cap;
	/* < 2^61 + (2^61 + 2^60 + 2^47): no overflow, see profile_init. */
	t = tb->tokens + (int64_t)(elapsed * p->refill);
	return RTE_MIN(t, p->cap);
}

/* Bring the bucket up to now. Exact, so it may be done at any time. */
static inline int64_t
tb_refill(struct uroce_tb *tb, const struct uroce_tb_profile *p, uint64_t now)
{
	if (tb_later(tb, now)) {
		tb->tokens = tb_level(tb, p, now);
		tb->time = now;
	}
	return tb->tokens;
}

/* A packet may go when the bucket holds it, or is full if it is bigger. */
static inline int64_t
tb_need(const struct uroce_tb_profile *p, uint32_t bytes)
{
	return (int64_t)RTE_MIN(bytes, p->burst_bytes) * (int64_t)p->tsc_hz;
}

bool
uroce_tb_consume(struct uroce_tb *tb, const struct uroce_tb_profile *p,
		 uint64_t now, uint32_t bytes)
{
	int64_t tokens = tb_refill(tb, p, now);

	if (unlikely(bytes > UROCE_TB_MAX_BYTES))
		bytes = UROCE_TB_MAX_BYTES;
	if (tokens < tb_need(p, bytes))
		return false;
	tb->tokens = tokens - (int64_t)bytes * (int64_t)p->tsc_hz;
	return true;
}

uint64_t
uroce_tb_ready_at(const struct uroce_tb *tb, const struct uroce_tb_profile *p,
		  uint64_t now, uint32_t bytes)
{
	/* A clock behind the bucket waits from the bucket's own time. */
	uint64_t from = tb_later(tb, now) ? now : tb->time;
	int64_t tokens = tb_level(tb, p, from);
	int64_t need = tb_need(p, bytes);
	uint64_t deficit;

	if (tokens >= need)
		return now;
	/* need <= cap and tokens >= -2^60: deficit < 2^62. */
	deficit = (uint64_t)(need - tokens);
	return from + (deficit + p->refill - 1) / p->refill;
}

/* a / b rounded towards minus infinity (b > 0). */
static int64_t
floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && a < 0) ? q - 1 : q;
}

void
uroce_tb_set_profile(struct uroce_tb *tb, const struct uroce_tb_profile *old_p,
		     const struct uroce_tb_profile *new_p, uint64_t now)
{
	int64_t tokens = tb_refill(tb, old_p, now);
	int64_t bytes;

	if (unlikely(old_p->tsc_hz != new_p->tsc_hz)) {
		/* Rounding down never credits what was not earned. */
		bytes = floor_div(tokens, (int64_t)old_p->tsc_hz);
		bytes = RTE_MIN(bytes, (int64_t)new_p->burst_bytes);
		tokens = bytes * (int64_t)new_p->tsc_hz;
	}
	tb->tokens = RTE_MIN(tokens, new_p->cap);
}

/* Refill up to now and keep at most most tokens (at most the cap).
 * @return the whole bytes dropped: those the refill brings beyond the
 * burst (uroce_tb_excess()) and those beyond most. */
static uint64_t
tb_keep(struct uroce_tb *tb, const struct uroce_tb_profile *p, uint64_t now,
	int64_t most)
{
	/* What the refill drops at the burst is dropped too: counted first. */
	uint64_t over = uroce_tb_excess(tb, p, now);
	int64_t tokens = tb_refill(tb, p, now);

	tb->tokens = RTE_MIN(tokens, most);
	/* Both within [-2^60, 2^61]: the difference fits. The two parts are
	 * rounded down apart, so the sum may be a byte short. */
	return over + (tokens > most ? (uint64_t)(tokens - most) / p->tsc_hz :
		       0);
}

uint64_t
uroce_tb_handoff(struct uroce_tb *tb, const struct uroce_tb_profile *p,
		 uint64_t now, uint64_t bytes)
{
	/* bytes < 2^61 / tsc_hz keeps the product in range; more than the
	 * burst leaves nothing but what debt there is. */
	bytes = RTE_MIN(bytes, (uint64_t)p->burst_bytes);
	return tb_keep(tb, p, now, p->cap - (int64_t)bytes * (int64_t)p->tsc_hz);
}

uint64_t
uroce_tb_resume(struct uroce_tb *tb, const struct uroce_tb_profile *p,
		uint64_t now, uint32_t floor)
{
	/* What it held at its last update: never above the cap. */
	int64_t held = tb->tokens;
	int64_t most = (int64_t)RTE_MIN(floor, p->burst_bytes) *
		       (int64_t)p->tsc_hz;

	return tb_keep(tb, p, now, RTE_MAX(held, most));
}

uint64_t
uroce_tb_excess(const struct uroce_tb *tb, const struct uroce_tb_profile *p,
		uint64_t now)
{
	unsigned __int128 level;

	if (!tb_later(tb, now))
		return 0;
	/* elapsed * refill can pass 2^64 (a long gap): in 128 bits, with
	 * the tokens (>= -2^60) added after. */
	level = (unsigned __int128)(now - tb->time) * p->refill;
	if (tb->tokens >= 0)
		level += (uint64_t)tb->tokens;
	else if (level > (uint64_t)-tb->tokens)
		level -= (uint64_t)-tb->tokens;
	else
		return 0;
	if (level <= (uint64_t)p->cap)
		return 0;
	level = (level - (uint64_t)p->cap) / p->tsc_hz;
	return level > UINT64_MAX ? UINT64_MAX : (uint64_t)level;
}

int64_t
uroce_tb_tokens(const struct uroce_tb *tb, const struct uroce_tb_profile *p,
		uint64_t now)
{
	return floor_div(tb_level(tb, p, now), (int64_t)p->tsc_hz);
}
