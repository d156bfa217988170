/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/* Placeholder of the CM agent: every entry point fails with -ENOSYS. */

#include <errno.h>

#include "cm_agent.h"

int cm_agent_get(struct ibv_context *ctx, struct cm_agent **out) { return -ENOSYS; }
void cm_agent_put(struct cm_agent *a) { }
int cm_listen(struct cm_agent *a, uint64_t service_id, int backlog,
	      cm_event_fn fn, void *owner, struct cm_listener **out) { return -ENOSYS; }
void cm_unlisten(struct cm_listener *l) { }
int cm_conn_create(struct cm_agent *a, cm_event_fn fn, void *owner,
		   struct cm_conn **out) { return -ENOSYS; }
void cm_conn_own(struct cm_conn *c, cm_event_fn fn, void *owner) { }
int cm_conn_send(struct cm_conn *c, enum uroce_cm_input in,
		 struct uroce_cm_msg *msg, const struct cm_peer *to) { return -ENOSYS; }
enum uroce_cm_state cm_conn_state(const struct cm_conn *c) { return UROCE_CM_IDLE; }
const struct cm_peer *cm_conn_peer(const struct cm_conn *c) { return 0; }
void cm_conn_release(struct cm_conn *c) { }
void cm_agent_stats(const struct cm_agent *a, struct cm_agent_stats *out) { }
