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
#define XDP_PREFIX		"af_xdp:"
/* A dev string with the devargs pmd_glue adds (xdp_prog=PATH ...). */
#define UROCE_GLUE_DEVARGS_LEN	1024

/* glue.c: the value of devarg key= in dev into val (len bytes); false if
 * absent, empty or too long. */
bool glue_devarg(const char *dev, const char *key, char *val, size_t len);
/* glue.c: rte_dev_probe() dev, or find the ethdev EAL made already. */
int glue_probe(const char *dev, struct uroce_glue_link *link, char *err,
	       size_t len);

/* memif.c: a memif server port's listener (see memif.c): noted at attach
 * (its socket= path from dev), dropped at detach, closed before the last
 * port on it stops. */
void glue_memif_server_add(struct uroce_glue_link *link, const char *dev);
void glue_memif_server_del(const struct uroce_glue_link *link);
void glue_memif_unlisten(const struct uroce_glue_link *link);

/* xdp.c: AF_XDP ports with our XDP program (see uroce_glue.h). */
int glue_xdp_attach(const char *dev, uint16_t nb_queues,
		    struct uroce_glue_link *link, char *err, size_t len);
void glue_xdp_detach(struct uroce_glue_link *link);

/* ringlink.c: the in-process link (see uroce_glue.h). */
int glue_ringlink_attach(const char *dev, uint16_t nb_queues,
			 struct uroce_glue_link *link, char *err,
			 size_t err_len);
void glue_ringlink_detach(struct uroce_glue_link *link);

#endif /* UROCE_GLUE_PRIV_H */
