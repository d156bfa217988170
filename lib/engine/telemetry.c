/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * DPDK telemetry commands (uroce_stats.h lists them): what a running stack
 * counts, for dpdk-telemetry.py or any client of the telemetry socket.
 *
 * The callbacks run on DPDK's telemetry thread. Safety against the engine
 * and its objects going away:
 *  - the commands are registered once per process (DPDK cannot unregister)
 *    and answer only between eng_telemetry_attach() and
 *    eng_telemetry_detach(), which the engine calls after its start and
 *    first thing in its teardown; tel_lock orders them with the callbacks,
 *    so a callback never sees a half-torn-down engine;
 *  - the object lists are walked under the engine lock, which a QP's destroy
 *    holds across the owner's free (stats.c);
 *  - one QP's state and counters are read by its owner lcore, through the
 *    control path (a message, as ibv_query_qp() does), so the answer is one
 *    consistent snapshot. The engine lock is held meanwhile: the QP cannot
 *    be destroyed in between. Owner lcores never take the engine lock, so
 *    this cannot deadlock (uroce_dev_qp_destroy() does the same).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "engine_priv.h"
#include "uroce_stats.h"

static pthread_mutex_t tel_lock = PTHREAD_MUTEX_INITIALIZER;
static bool tel_live;			/* tel_lock */
static pthread_once_t tel_once = PTHREAD_ONCE_INIT;

typedef int (*tel_fn)(const char *params, struct rte_tel_data *d);

/* A counter of a stats struct of uint64_t members, by name. */
struct tel_field {
	const char *name;
	size_t off;
};

#define PORT_FIELD(n)	{ #n, offsetof(struct uroce_port_stats, n) }
static const struct tel_field port_fields[] = {
	PORT_FIELD(rx_pkts), PORT_FIELD(rx_bytes),
	PORT_FIELD(tx_pkts), PORT_FIELD(tx_bytes), PORT_FIELD(tx_full),
	PORT_FIELD(tx_stuck),
	PORT_FIELD(arp_rx), PORT_FIELD(arp_tx), PORT_FIELD(nd_rx),
	PORT_FIELD(nd_tx), PORT_FIELD(nd_bad), PORT_FIELD(non_roce),
	PORT_FIELD(not_ours),
	PORT_FIELD(fault_drop), PORT_FIELD(fault_reorder),
	PORT_FIELD(fault_dup), PORT_FIELD(fault_corrupt), PORT_FIELD(fault_ce),
	PORT_FIELD(pcap_written), PORT_FIELD(pcap_lost), PORT_FIELD(exc_in),
	PORT_FIELD(exc_out), PORT_FIELD(exc_drop), PORT_FIELD(rx_err),
	PORT_FIELD(memif_unmap_waits),
};

/* The engine's view of the device; eng_ tells them from the port's. */
#define DEV_FIELD(n)	{ "eng_" #n, offsetof(struct uroce_dev_stats, n) }
#define GSI_FIELD(n)	{ #n, offsetof(struct uroce_dev_stats, n) }
static const struct tel_field dev_fields[] = {
	DEV_FIELD(rx_pkts), DEV_FIELD(tx_pkts),
	DEV_FIELD(loop_pkts), DEV_FIELD(loop_drops),
	{ "drop_unknown_qpn", offsetof(struct uroce_dev_stats, unknown_qpn) },
	DEV_FIELD(handoffs), DEV_FIELD(handoff_drops),
	/* QP1 (uroce_gsi.h), named as in the struct */
	GSI_FIELD(gsi_rx), GSI_FIELD(gsi_tx), GSI_FIELD(gsi_drop_opcode),
	GSI_FIELD(gsi_drop_pkey), GSI_FIELD(gsi_drop_qkey),
	GSI_FIELD(gsi_drop_len), GSI_FIELD(gsi_drop_mad),
	GSI_FIELD(gsi_drop_noagent), GSI_FIELD(gsi_drop_full),
	GSI_FIELD(gsi_noagent_replied),
	GSI_FIELD(mem_faults),
};

static uint64_t
field_val(const void *st, size_t off)
{
	return *(const uint64_t *)(const void *)((const char *)st + off);
}

static void
add_fields(struct rte_tel_data *d, const char *prefix, const void *st,
	   const struct tel_field *f, unsigned int n)
{
	char name[RTE_TEL_MAX_STRING_LEN];
	unsigned int i;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%s", prefix, f[i].name);
		rte_tel_data_add_dict_u64(d, name, field_val(st, f[i].off));
	}
}

/* Every QP counter, with the prefix ("" or "qp_"), and the pacing time. */
static void
add_qp_stats(struct rte_tel_data *d, const char *prefix,
	     const struct uroce_qp_stats *st)
{
	char name[RTE_TEL_MAX_STRING_LEN];
	unsigned int i;

	for (i = 0; i < uroce_qp_stat_nfields; i++) {
		snprintf(name, sizeof(name), "%s%s", prefix,
			 uroce_qp_stat_fields[i].name);
		rte_tel_data_add_dict_u64(d, name,
			uroce_qp_stat(st, &uroce_qp_stat_fields[i]));
	}
	snprintf(name, sizeof(name), "%space_wait_us", prefix);
	rte_tel_data_add_dict_u64(d, name,
		uroce_cycles_to_us(st->pace_wait_cycles, eng_g->tsc_hz));
}

/* ------------------------------------------------------------------------
 * /uroce/ports
 */
static void
add_port_info(struct rte_tel_data *d, struct uroce_dev *dev)
{
	const struct rte_ether_addr *mac = uroce_port_mac(dev->port);
	char buf[RTE_ETHER_ADDR_FMT_SIZE];

	rte_ether_format_addr(buf, sizeof(buf), mac);
	rte_tel_data_add_dict_string(d, "mac", buf);
	rte_tel_data_add_dict_int(d, "ethdev_port", uroce_port_id(dev->port));
	rte_tel_data_add_dict_u64(d, "mtu", uroce_port_mtu(dev->port));
	rte_tel_data_add_dict_int(d, "link_up", uroce_port_link_up(dev->port));
	rte_tel_data_add_dict_int(d, "gone", uroce_port_gone(dev->port));
}

/* Parse verdicts: parsed_ok, then drop_<reason> (uroce_wire.h). */
static void
add_verdicts(struct rte_tel_data *d, const struct uroce_wire_stats *w)
{
	char name[RTE_TEL_MAX_STRING_LEN];
	unsigned int v;

	rte_tel_data_add_dict_u64(d, "parsed_ok", w->verdict[UROCE_WIRE_OK]);
	for (v = UROCE_WIRE_OK + 1; v < UROCE_WIRE_VERDICT_COUNT; v++) {
		snprintf(name, sizeof(name), "drop_%s",
			 uroce_wire_verdict_name((enum uroce_wire_verdict)v));
		rte_tel_data_add_dict_u64(d, name, w->verdict[v]);
	}
}

static int
port_dict(struct uroce_dev *dev, struct rte_tel_data *d)
{
	struct uroce_port_stats ps;
	struct uroce_dev_stats ds;
	struct uroce_qp_stats qs;
	unsigned int nqp = 0;
	int ret;

	ret = uroce_dev_qp_totals(dev, &qs, &nqp);
	if (ret < 0)
		return ret;
	uroce_port_stats_get(dev->port, &ps);
	uroce_dev_stats_get(dev, &ds);
	rte_tel_data_start_dict(d);
	add_port_info(d, dev);
	add_fields(d, "", &ps, port_fields, RTE_DIM(port_fields));
	add_fields(d, "", &ds, dev_fields, RTE_DIM(dev_fields));
	add_verdicts(d, &ds.wire);
	rte_tel_data_add_dict_u64(d, "qps", nqp);
	add_qp_stats(d, "qp_", &qs);
	return 0;
}

static int
tel_ports(const char *params, struct rte_tel_data *d)
{
	struct rte_tel_data *pd;
	unsigned int i;
	int ret;

	if (params != NULL && *params != '\0')
		return -EINVAL;
	rte_tel_data_start_dict(d);
	for (i = 0; i < eng_g->ndev; i++) {
		pd = rte_tel_data_alloc();
		if (pd == NULL)
			return -ENOMEM;
		ret = port_dict(eng_g->dev[i], pd);
		if (ret < 0 ||
		    rte_tel_data_add_dict_container(d, eng_g->dev[i]->name,
						    pd, 0) != 0) {
			rte_tel_data_free(pd);
			return ret < 0 ? ret : -ENOSPC;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * /uroce/qps: the QPNs of each device, in creation order.
 */
static int
tel_qps(const char *params, struct rte_tel_data *d)
{
	struct rte_tel_data *a;
	struct eng_qp *eq;
	unsigned int i, n;

	if (params != NULL && *params != '\0')
		return -EINVAL;
	rte_tel_data_start_dict(d);
	for (i = 0; i < eng_g->ndev; i++) {
		a = rte_tel_data_alloc();
		if (a == NULL)
			return -ENOMEM;
		rte_tel_data_start_array(a, RTE_TEL_INT_VAL);
		n = 0;
		pthread_mutex_lock(&eng_g->lock);
		TAILQ_FOREACH(eq, &eng_g->dev[i]->qps, dev_link) {
			if (n++ == RTE_TEL_MAX_ARRAY_ENTRIES)
				break;
			rte_tel_data_add_array_int(a, (int)eq->qp->qpn);
		}
		pthread_mutex_unlock(&eng_g->lock);
		if (rte_tel_data_add_dict_container(d, eng_g->dev[i]->name,
						    a, 0) != 0) {
			rte_tel_data_free(a);
			return -ENOSPC;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * /uroce/qp,[<dev>,]<qpn>
 */

/* "<qpn>" or "<dev>,<qpn>" (qpn decimal or 0x hex): 0, or -EINVAL. */
static int
parse_qp_params(const char *params, struct uroce_dev **dev, uint32_t *qpn)
{
	char buf[64], *comma, *num, *end;
	unsigned long v;

	if (params == NULL || strlen(params) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", params);
	*dev = NULL;
	num = buf;
	comma = strchr(buf, ',');
	if (comma != NULL) {
		*comma = '\0';
		*dev = uroce_dev_by_name(buf);
		if (*dev == NULL)
			return -EINVAL;
		num = comma + 1;
	}
	errno = 0;
	v = strtoul(num, &end, 0);
	if (errno != 0 || end == num || *end != '\0' || *num == '-' ||
	    v > UROCE_QPN_MASK)
		return -EINVAL;
	*qpn = (uint32_t)v;
	return 0;
}

static void
qp_dict(struct rte_tel_data *d, const struct eng_qp *eq,
	const struct ibv_qp_attr *a, const struct ibv_qp_init_attr *init,
	const struct uroce_qp_stats *st)
{
	const struct uroce_qp *qp = eq->qp;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "qpn", qp->qpn);
	rte_tel_data_add_dict_string(d, "dev", eq->dev->name);
	rte_tel_data_add_dict_string(d, "type", uroce_qp_type_name(qp->type));
	rte_tel_data_add_dict_string(d, "state",
				     uroce_qp_state_name(a->qp_state));
	rte_tel_data_add_dict_u64(d, "owner_lcore", qp->lcore);
	rte_tel_data_add_dict_u64(d, "dest_qp_num", a->dest_qp_num);
	rte_tel_data_add_dict_u64(d, "sq_psn", a->sq_psn);
	rte_tel_data_add_dict_u64(d, "rq_psn", a->rq_psn);
	rte_tel_data_add_dict_u64(d, "path_mtu",
		a->path_mtu != 0 ? uroce_mtu_bytes(a->path_mtu) : 0);
	rte_tel_data_add_dict_u64(d, "max_send_wr", init->cap.max_send_wr);
	rte_tel_data_add_dict_u64(d, "max_recv_wr", init->cap.max_recv_wr);
	add_qp_stats(d, "", st);
	/* DCQCN's current rate (0: not limited by it, docs/congestion.md). */
	rte_tel_data_add_dict_u64(d, "rp_current_rate_kbps",
				  uroce_qp_cc_rate_kbps(qp));
}

static int
tel_qp(const char *params, struct rte_tel_data *d)
{
	struct ibv_qp_init_attr init;
	struct uroce_qp_stats st;
	struct ibv_qp_attr attr;
	struct uroce_dev *dev;
	struct eng_qp *eq;
	uint32_t qpn;
	int ret;

	ret = parse_qp_params(params, &dev, &qpn);
	if (ret < 0)
		return ret;
	memset(&attr, 0, sizeof(attr));
	memset(&init, 0, sizeof(init));
	pthread_mutex_lock(&eng_g->lock);
	eq = eng_qpn_lookup(qpn);
	if (eq == NULL || (dev != NULL && eq->dev != dev)) {
		ret = -ENOENT;
	} else {
		ret = eng_qp_query(eq, &attr, &init);
		if (ret == 0)
			ret = eng_qp_stats(eq, &st);
		if (ret == 0)
			qp_dict(d, eq, &attr, &init, &st);
	}
	pthread_mutex_unlock(&eng_g->lock);
	return ret;
}

/* ------------------------------------------------------------------------
 * /uroce/lcores: each engine lcore's loop counters (uroce_lcore_stats),
 * by index ("0": native progress when no engine lcore runs).
 */
#define LCORE_FIELD(n)	{ #n, offsetof(struct uroce_lcore_stats, n) }
static const struct tel_field lcore_fields[] = {
	LCORE_FIELD(loops), LCORE_FIELD(idle_loops), LCORE_FIELD(sleeps),
	LCORE_FIELD(ctrl_msgs), LCORE_FIELD(doorbells), LCORE_FIELD(direct_tx),
	LCORE_FIELD(timers), LCORE_FIELD(work_cycles), LCORE_FIELD(long_loops),
	LCORE_FIELD(long_cycles), LCORE_FIELD(gap_loops),
	LCORE_FIELD(gap_cycles), LCORE_FIELD(tx_cycles), LCORE_FIELD(keeper_loops),
};

static int
tel_lcores(const char *params, struct rte_tel_data *d)
{
	struct uroce_lcore_stats st;
	struct rte_tel_data *ld;
	char name[16];
	unsigned int i, n = RTE_MAX(uroce_engine_lcores(), 1u);

	RTE_BUILD_BUG_ON(RTE_DIM(lcore_fields) * sizeof(uint64_t) !=
			 sizeof(struct uroce_lcore_stats));
	if (params != NULL && *params != '\0')
		return -EINVAL;
	rte_tel_data_start_dict(d);
	for (i = 0; i < n; i++) {
		if (uroce_engine_lcore_stats(i, &st) != 0)
			return -ENOENT;
		ld = rte_tel_data_alloc();
		if (ld == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(ld);
		add_fields(ld, "", &st, lcore_fields, RTE_DIM(lcore_fields));
		snprintf(name, sizeof(name), "%u", i);
		if (rte_tel_data_add_dict_container(d, name, ld, 0) != 0) {
			rte_tel_data_free(ld);
			return -ENOSPC;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * /uroce/info
 */
static int
tel_info(const char *params, struct rte_tel_data *d)
{
	struct rte_tel_data *a;
	unsigned int i;

	if (params != NULL && *params != '\0')
		return -EINVAL;
	a = rte_tel_data_alloc();
	if (a == NULL)
		return -ENOMEM;
	rte_tel_data_start_array(a, RTE_TEL_STRING_VAL);
	for (i = 0; i < eng_g->ndev; i++)
		rte_tel_data_add_array_string(a, eng_g->dev[i]->name);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_container(d, "devices", a, 0);
	rte_tel_data_add_dict_u64(d, "engine_lcores", eng_g->nb_bg);
	rte_tel_data_add_dict_int(d, "native_progress", eng_g->nb_bg == 0);
	rte_tel_data_add_dict_u64(d, "tsc_hz", eng_g->tsc_hz);
	return 0;
}

/* ------------------------------------------------------------------------
 * Registration and the gate.
 */

/* Run fn only while an engine is attached. */
static int
tel_gate(tel_fn fn, const char *params, struct rte_tel_data *d)
{
	int ret = -ENODEV;

	pthread_mutex_lock(&tel_lock);
	if (tel_live)
		ret = fn(params, d);
	pthread_mutex_unlock(&tel_lock);
	return ret;
}

#define TEL_CB(fn)							\
static int								\
fn ## _cb(const char *cmd, const char *params, struct rte_tel_data *d)	\
{									\
	RTE_SET_USED(cmd);						\
	return tel_gate(fn, params, d);					\
}
TEL_CB(tel_info)
TEL_CB(tel_ports)
TEL_CB(tel_qps)
TEL_CB(tel_qp)
TEL_CB(tel_lcores)

/* Help texts stay under DPDK's 64 characters. */
static const struct {
	const char *cmd;
	telemetry_cb cb;
	const char *help;
} tel_cmds[] = {
	{ "/uroce/info", tel_info_cb, "uroce engine: devices, lcores. No params" },
	{ "/uroce/ports", tel_ports_cb, "uroce counters per device. No params" },
	{ "/uroce/qps", tel_qps_cb, "QPNs of each uroce device. No params" },
	{ "/uroce/qp", tel_qp_cb, "One QP. Params: [dev,]qpn" },
	{ "/uroce/lcores", tel_lcores_cb,
	  "uroce engine loop counters per lcore. No params" },
};

static void
tel_register(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < RTE_DIM(tel_cmds); i++) {
		ret = rte_telemetry_register_cmd(tel_cmds[i].cmd, tel_cmds[i].cb,
						 tel_cmds[i].help);
		if (ret != 0)
			ENG_LOG(NOTICE, "telemetry command %s: %s\n",
				tel_cmds[i].cmd, strerror(-ret));
	}
}

void
eng_telemetry_attach(void)
{
	pthread_once(&tel_once, tel_register);
	pthread_mutex_lock(&tel_lock);
	tel_live = true;
	pthread_mutex_unlock(&tel_lock);
}

void
eng_telemetry_detach(void)
{
	pthread_mutex_lock(&tel_lock);
	tel_live = false;
	pthread_mutex_unlock(&tel_lock);
}
