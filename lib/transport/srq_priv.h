/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The per-type rules of SRQs (srq.c's srq_types[]): what each srq_type adds
 * to a basic SRQ. BASIC is srq.c's own; XRC and TM define theirs in their
 * files and take their slot of the table.
 */
#ifndef UROCE_SRQ_PRIV_H
#define UROCE_SRQ_PRIV_H

#include "uroce_srq.h"

struct uroce_srq_type {
	const char *name;		/**< for logs: "basic", "xrc", "tm" */
	/** The type's own fields of init (xrcd, cq, tm_cap ...), before
	 *  anything is allocated: 0, -EINVAL or -EOPNOTSUPP. NULL: none. */
	int (*check)(const struct uroce_qp_env *env,
		     const struct uroce_srq_init *init);
	/** Set up srq->type_priv once the ring exists (srq->pd, cq, xrcd,
	 *  srqn are set). NULL: nothing to do. */
	int (*init)(struct uroce_srq *srq, const struct uroce_srq_init *init);
	/** Undo init (also after a failed init). NULL: nothing to do. */
	void (*fini)(struct uroce_srq *srq);
};

/* The types' rules; a NULL entry of srq_types[] is -EOPNOTSUPP. */
extern const struct uroce_srq_type uroce_srq_type_basic;
extern const struct uroce_srq_type uroce_srq_type_xrc;	/* xrc.c */
extern const struct uroce_srq_type uroce_srq_type_tm;

#endif /* UROCE_SRQ_PRIV_H */
