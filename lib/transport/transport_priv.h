/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * What the transport component's files share and nobody else needs.
 */
#ifndef UROCE_TRANSPORT_PRIV_H
#define UROCE_TRANSPORT_PRIV_H

#include <rte_log.h>

/* Log type of the transport component, "uroce.transport" (qp_modify.c). */
extern int uroce_transport_logtype;

#endif /* UROCE_TRANSPORT_PRIV_H */
