/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Zero-copy transmit (zcopy.c): what qp.c and requester.c call.
 */
#ifndef UROCE_ZCOPY_PRIV_H
#define UROCE_ZCOPY_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "uroce_qp.h"

/** At create: the zero-copy state of an RC QP when env->tx_zc_min != 0.
 *  0 or -ENOMEM. */
int uroce_zc_qp_init(struct uroce_qp *qp);

/** At destroy: the QP lets go of its zero-copy state; frames still in
 *  flight keep it until they are freed. */
void uroce_zc_qp_fini(struct uroce_qp *qp);

/** Whether a request packet of plen payload bytes of w goes zero-copy. */
static inline bool
uroce_zc_wanted(const struct uroce_qp *qp, const struct uroce_send_wqe *w,
		uint32_t plen)
{
	return qp->zc != NULL && plen >= qp->env->tx_zc_min && plen > 0 &&
	       !(w->send_flags & IBV_SEND_INLINE);
}

/**
 * Build the request packet whose payload is bytes [off, off + plen) of w's
 * gather list as a chain (headers, one external-buffer segment per piece
 * of registered memory, pad + ICRC), count it and add it to txb.
 * @return 0; -ENOMEM (no mbufs, nothing sent: try later); or the MR check
 *   failure of a piece (the caller completes with IBV_WC_LOC_PROT_ERR).
 */
int uroce_zc_send(struct uroce_qp *qp, const struct uroce_send_wqe *w,
		  const struct uroce_bth_fields *bth,
		  const struct uroce_ext_fields *ext, uint32_t off,
		  uint32_t plen, struct uroce_txb *txb);

#endif /* UROCE_ZCOPY_PRIV_H */
