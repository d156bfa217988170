/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * For in-tree tools that link the verbs layer's objects beside liburoce
 * (uroce-perf --verbs): the stack's objects behind verbs handles, to read
 * what the verbs API does not report (per-QP counters). Not exported from
 * libibverbs.so.1.
 */
#ifndef UROCE_VERBS_H
#define UROCE_VERBS_H

#include <infiniband/verbs.h>

struct uroce_qp;

/** The stack's QP behind a QP of our verbs layer (not one of another
 *  provider's). */
struct uroce_qp *uroce_verbs_qp_uqp(struct ibv_qp *qp);

/** More uroce_engine_init() flags for the engine that the first
 *  ibv_open_device() starts; before it only (uroce-perf --loop --verbs:
 *  UROCE_ENGINE_WIRE_XDEV, so that its two devices talk over their link). */
void uroce_verbs_engine_flags(unsigned int flags);

#endif /* UROCE_VERBS_H */
