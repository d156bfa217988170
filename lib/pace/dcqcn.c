/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The DCQCN reaction point: see uroce_dcqcn.h for the events and
 * docs/congestion.md for the parameters. Integer arithmetic throughout:
 * rates in kbit/s (up to 100 Gbit/s, 10^8), alpha in 1/1024, so every
 * product stays far inside 64 bits.
 */
#include <string.h>

#include "uroce_dcqcn.h"

void
uroce_dcqcn_init(struct uroce_dcqcn *s)
{
	memset(s, 0, sizeof(*s));
}

/* Alpha after the whole periods from alpha_at to now, each with no CNP:
 * alpha g / 1024 a period. Stops at 0, which every g < 1024 reaches
 * within about 1,500 periods from 1024 (the floor takes at least 1 off
 * each time), so a long quiet spell costs no more than that. */
static uint32_t
alpha_at(const struct uroce_dcqcn *s, const struct uroce_dcqcn_params *p,
	 uint64_t now, uint64_t *periods)
{
	uint64_t n = now > s->alpha_at ? (now - s->alpha_at) / p->alpha_period : 0;
	uint32_t a = s->alpha;
	uint64_t i;

	for (i = 0; i < n && a != 0; i++)
		a = (uint32_t)((uint64_t)a * p->g / UROCE_DCQCN_ONE);
	*periods = n;
	return a;
}

uint32_t
uroce_dcqcn_alpha(const struct uroce_dcqcn *s,
		  const struct uroce_dcqcn_params *p, uint64_t now)
{
	uint64_t n;

	return s->active ? alpha_at(s, p, now, &n) : 0;
}

/* Bring alpha up to now's period. */
static void
alpha_update(struct uroce_dcqcn *s, const struct uroce_dcqcn_params *p,
	     uint64_t now)
{
	uint64_t n;

	s->alpha = alpha_at(s, p, now, &n);
	s->alpha_at += n * p->alpha_period;
}

/* The first CNP: the QP becomes limited, from the line rate (or
 * rate_to_set_on_first_cnp), with the initial alpha. */
static void
start(struct uroce_dcqcn *s, const struct uroce_dcqcn_params *p, uint64_t now)
{
	uint64_t r = p->first_kbps != 0 && p->first_kbps < p->line_kbps ?
		     p->first_kbps : p->line_kbps;

	s->active = true;
	s->rc = r;
	s->rt = r;
	s->alpha = p->initial_alpha;
	s->alpha_at = now;
}

enum uroce_dcqcn_event
uroce_dcqcn_cnp(struct uroce_dcqcn *s, const struct uroce_dcqcn_params *p,
		uint64_t now)
{
	uint64_t cut, keep;

	if (!s->active)
		start(s, p, now);
	else if (now - s->cut_at < p->reduce_period)
		return UROCE_DCQCN_IGNORED;
	else
		alpha_update(s, p, now);
	/* Rt = Rc; Rc = Rc (1 - alpha / 2), at least min_dec_fac % of it
	 * and min_kbps. */
	s->rt = s->rc;
	cut = s->rc * (2 * UROCE_DCQCN_ONE - s->alpha) / (2 * UROCE_DCQCN_ONE);
	keep = s->rc * p->min_dec_fac / 100;
	cut = cut > keep ? cut : keep;
	s->rc = cut > p->min_kbps ? cut : p->min_kbps;
	/* alpha = (1 - g') alpha + g', g' = 1 - g / 1024. */
	s->alpha = (uint32_t)(((uint64_t)s->alpha * p->g +
			       (uint64_t)(UROCE_DCQCN_ONE - p->g) * UROCE_DCQCN_ONE) /
			      UROCE_DCQCN_ONE);
	s->t_stage = 0;
	s->b_stage = 0;
	s->bytes = 0;
	s->timer_at = now + p->time_reset;
	s->cut_at = now;
	return UROCE_DCQCN_CUT;
}

/* One increase stage (fast recovery, additive or hyper increase by the
 * two stage counts against F); Rc = (Rt + Rc) / 2, rounded up so that
 * it reaches the line rate, which ends the limit. */
static enum uroce_dcqcn_event
increase(struct uroce_dcqcn *s, const struct uroce_dcqcn_params *p)
{
	uint32_t lo = s->t_stage < s->b_stage ? s->t_stage : s->b_stage;
	uint32_t hi = s->t_stage < s->b_stage ? s->b_stage : s->t_stage;

	if (lo > p->threshold)
		s->rt += p->hai_kbps * (lo - p->threshold);
	else if (hi >= p->threshold)
		s->rt += p->ai_kbps;
	if (s->rt > p->line_kbps)
		s->rt = p->line_kbps;
	s->rc = (s->rt + s->rc + 1) / 2;
	if (s->rc < p->line_kbps)
		return UROCE_DCQCN_RAISED;
	s->active = false;
	return UROCE_DCQCN_RELEASED;
}

enum uroce_dcqcn_event
uroce_dcqcn_timer(struct uroce_dcqcn *s, const struct uroce_dcqcn_params *p,
		  uint64_t now)
{
	if (!s->active || now < s->timer_at)
		return UROCE_DCQCN_NONE;
	s->timer_at += p->time_reset;
	if (s->timer_at <= now)
		s->timer_at = now + p->time_reset;
	alpha_update(s, p, now);
	if (s->t_stage < UINT32_MAX)
		s->t_stage++;
	return increase(s, p);
}

enum uroce_dcqcn_event
uroce_dcqcn_sent(struct uroce_dcqcn *s, const struct uroce_dcqcn_params *p,
		 uint32_t bytes)
{
	uint64_t b;

	if (!s->active || p->byte_reset == 0)
		return UROCE_DCQCN_NONE;
	b = (uint64_t)s->bytes + bytes;
	if (b < p->byte_reset) {
		s->bytes = (uint32_t)b;
		return UROCE_DCQCN_NONE;
	}
	b -= p->byte_reset;
	/* One stage a call: what is left over starts the next one. */
	s->bytes = (uint32_t)(b < p->byte_reset ? b : p->byte_reset - 1);
	if (s->b_stage < UINT32_MAX)
		s->b_stage++;
	return increase(s, p);
}
