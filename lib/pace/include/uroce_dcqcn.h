/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_DCQCN_H
#define UROCE_DCQCN_H

/**
 * @file
 * The DCQCN reaction point (Zhu et al., "Congestion Control for Large-Scale
 * RDMA Deployments", SIGCOMM 2015; RoCEv2 congestion management, IBTA
 * A17.9) as RoCE NICs run it, per QP, as a pure function of (state, event,
 * time): no clock is read and nothing but the state changes, so a test
 * drives it on a fake clock. Time is in any unit the caller picks (the
 * engine: TSC cycles; tests: microseconds); the periods in the parameters
 * are in the same unit. Rates are in kbit/s, alpha in 1/1024.
 *
 * Events and what they do (docs/congestion.md):
 *  - a CNP (uroce_dcqcn_cnp()): the first one starts the QP limited at the
 *    line rate (or rate_to_set_on_first_cnp) with alpha = initial_alpha;
 *    each one then sets the target rate to the current rate, cuts the
 *    current rate by alpha/2 (keeping at least min_dec_fac percent and
 *    min_kbps), raises alpha (alpha = alpha g + (1 - g)) and restarts the
 *    increase stages. A CNP within reduce_period of the last cut is
 *    ignored.
 *  - alpha's period passing with no CNP: alpha = alpha g, applied when
 *    alpha is next used (each period multiplies it by g/1024).
 *  - the rate-increase timer expiring (uroce_dcqcn_timer(), every
 *    time_reset) and the byte counter reaching byte_reset bytes sent
 *    (uroce_dcqcn_sent()) each add a stage, and each stage raises the rate:
 *    while both counts are below F (threshold), fast recovery (current =
 *    (target + current) / 2); once either reaches F, additive increase
 *    (target += ai first); once both exceed F, hyper increase (target +=
 *    hai x (min(counts) - F) first). The current rate reaching the line
 *    rate ends the limit (uroce_dcqcn_rate() 0).
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Alpha and the gain g are fixed point, 1 = 1024 (as mlx5 gives them). */
#define UROCE_DCQCN_ONE		1024u

struct uroce_dcqcn_params {
	uint64_t line_kbps;	/**< the rate a QP recovers to (> 0) */
	uint64_t first_kbps;	/**< rate at the first CNP; 0: line_kbps */
	uint64_t min_kbps;	/**< no cut below it */
	uint64_t ai_kbps;	/**< additive increase step */
	uint64_t hai_kbps;	/**< hyper increase step */
	uint32_t min_dec_fac;	/**< a cut keeps at least this %, 1..100 */
	uint32_t threshold;	/**< F, >= 1 */
	uint32_t byte_reset;	/**< bytes a byte-counter stage; 0: none */
	uint32_t g;		/**< alpha kept per period, < UROCE_DCQCN_ONE */
	uint32_t initial_alpha;	/**< <= UROCE_DCQCN_ONE */
	uint64_t time_reset;	/**< rate-increase timer period, > 0 */
	uint64_t alpha_period;	/**< alpha update period, > 0 */
	uint64_t reduce_period;	/**< least time between two cuts */
};

struct uroce_dcqcn {
	bool active;		/**< limited: rc < line rate */
	uint64_t rc;		/**< current rate, kbit/s */
	uint64_t rt;		/**< target rate, kbit/s */
	uint32_t alpha;		/**< as of alpha_at */
	uint32_t t_stage;	/**< timer stages since the last cut */
	uint32_t b_stage;	/**< byte-counter stages since the last cut */
	uint32_t bytes;		/**< sent since the last byte stage */
	uint64_t alpha_at;	/**< start of alpha's current period */
	uint64_t timer_at;	/**< when the rate-increase timer expires */
	uint64_t cut_at;	/**< time of the last cut */
};

/** What an event did. */
enum uroce_dcqcn_event {
	UROCE_DCQCN_NONE,	/**< nothing changed the rate */
	UROCE_DCQCN_CUT,	/**< a CNP cut the rate */
	UROCE_DCQCN_IGNORED,	/**< a CNP within reduce_period of the last cut */
	UROCE_DCQCN_RAISED,	/**< an increase stage raised the rate */
	UROCE_DCQCN_RELEASED,	/**< the rate is back at the line rate */
};

/** A QP that has seen no CNP: not limited. */
void uroce_dcqcn_init(struct uroce_dcqcn *s);

/** A CNP for the QP at @now: CUT or IGNORED. */
enum uroce_dcqcn_event uroce_dcqcn_cnp(struct uroce_dcqcn *s,
				       const struct uroce_dcqcn_params *p,
				       uint64_t now);

/** The rate-increase timer: call at or after s->timer_at while active.
 *  One stage per call; the next expiry is a period later (from @now if
 *  the call came a period or more late). */
enum uroce_dcqcn_event uroce_dcqcn_timer(struct uroce_dcqcn *s,
					 const struct uroce_dcqcn_params *p,
					 uint64_t now);

/** @bytes sent while active: a byte-counter stage when they fill
 *  byte_reset (at most one stage per call). */
enum uroce_dcqcn_event uroce_dcqcn_sent(struct uroce_dcqcn *s,
					const struct uroce_dcqcn_params *p,
					uint32_t bytes);

/** Alpha at @now (the periods since the last update applied). */
uint32_t uroce_dcqcn_alpha(const struct uroce_dcqcn *s,
			   const struct uroce_dcqcn_params *p, uint64_t now);

/** The rate to hold the QP to, kbit/s; 0 when not limited. */
static inline uint64_t
uroce_dcqcn_rate(const struct uroce_dcqcn *s)
{
	return s->active ? s->rc : 0;
}

/**
 * The notification point of one QP: a frame received with CE makes the QP
 * send a CNP, at most one per @interval (np_min_time_between_cnps).
 */
struct uroce_dcqcn_np {
	bool sent;		/**< a CNP has been sent */
	uint64_t last;		/**< when the last one was */
};

/** A CE-marked frame at @now: true if a CNP is to be sent (and noted). */
static inline bool
uroce_dcqcn_np_ce(struct uroce_dcqcn_np *np, uint64_t now, uint64_t interval)
{
	if (np->sent && now - np->last < interval)
		return false;
	np->sent = true;
	np->last = now;
	return true;
}

#ifdef __cplusplus
}
#endif

#endif /* UROCE_DCQCN_H */
