/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The agents' counters: cm_agent_stats(), and DPDK telemetry's
 * /uroce/cm (one dictionary a device, the same names as struct
 * cm_agent_stats).
 */

#include <stddef.h>
#include <string.h>

#include <rte_common.h>
#include <rte_telemetry.h>

#include "agent_priv.h"

void
cm_agent_stats(const struct cm_agent *a, struct cm_agent_stats *out)
{
	struct cm_agent *m = (struct cm_agent *)(uintptr_t)a;

	if (a == NULL || out == NULL)
		return;
	pthread_mutex_lock(&m->lock);
	*out = a->st;
	out->tx = __atomic_load_n(&a->st.tx, __ATOMIC_RELAXED);
	out->tx_err = __atomic_load_n(&a->st.tx_err, __ATOMIC_RELAXED);
	out->resends = __atomic_load_n(&a->st.resends, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&m->lock);
}

#define STAT(n)	{ #n, offsetof(struct cm_agent_stats, n) }
static const struct {
	const char *name;
	size_t off;
} stat_fields[] = {
	STAT(rx), STAT(tx), STAT(resends), STAT(drop_decode),
	STAT(drop_unmatched), STAT(replied_unmatched), STAT(rej_backlog),
	STAT(conns), STAT(tx_err), STAT(replied), STAT(rej_stale),
	STAT(duplicates), STAT(drop_addr), STAT(events), STAT(ev_lost),
	STAT(drop_backlog),
};

static void
tel_agent(struct cm_agent *a, void *arg)
{
	struct rte_tel_data *d = arg, *sub = rte_tel_data_alloc();
	struct cm_agent_stats st;
	unsigned int i;

	if (sub == NULL)
		return;
	cm_agent_stats(a, &st);
	rte_tel_data_start_dict(sub);
	for (i = 0; i < RTE_DIM(stat_fields); i++)
		rte_tel_data_add_dict_u64(sub, stat_fields[i].name,
			*(const uint64_t *)(const void *)
			((const char *)&st + stat_fields[i].off));
	if (rte_tel_data_add_dict_container(d, a->dev.name, sub, 0) != 0)
		rte_tel_data_free(sub);
}

static int
tel_cm(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_dict(d);
	cm_registry_walk(tel_agent, d);
	return 0;
}

void
cm_telemetry_register(void)
{
	int ret = rte_telemetry_register_cmd("/uroce/cm", tel_cm,
		"uroce CM agent counters per device. No params");

	if (ret != 0)
		AG_LOG(NOTICE, "telemetry command /uroce/cm: %s\n", strerror(-ret));
}
