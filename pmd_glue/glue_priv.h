/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_GLUE_PRIV_H
#define UROCE_GLUE_PRIV_H

#include <rte_log.h>

#include "uroce_glue.h"

extern int uroce_glue_logtype;

#define GLUE_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, uroce_glue_logtype, "uroce.glue: " __VA_ARGS__)

#define RINGLINK_PREFIX		"ringlink:"

/* ringlink.c: the in-process link (see uroce_glue.h). */
int glue_ringlink_attach(const char *dev, uint16_t nb_queues,
			 struct uroce_glue_link *link, char *err,
			 size_t err_len);
void glue_ringlink_detach(struct uroce_glue_link *link);

#endif /* UROCE_GLUE_PRIV_H */
