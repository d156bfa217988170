/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The keys of [port] and [eal] as tables of setters, shared by the file and
 * the environment overrides, and the entries of [neigh].
 *
 * A setter stores a value in place: a key set again (by an override)
 * replaces what was there. A setter that fails may leave its field half
 * written; uroce_config_load() then zeroes the whole configuration.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_priv.h"

static int
set_dev(void *obj, const char *val, char *why, size_t whylen)
{
	struct uroce_config_port *p = obj;
	int ret;

	ret = cfg_check_dev(val, &p->is_pci, why, whylen);
	if (ret != 0)
		return ret;
	/* cfg_key_set() let only values shorter than dev through. */
	memcpy(p->dev, val, strlen(val) + 1);
	return 0;
}

static int
set_ip(void *obj, const char *val, char *why, size_t whylen)
{
	struct uroce_config_port *p = obj;
	int ret;

	ret = cfg_parse_ip4_prefix(val, &p->ip4, &p->ip4_prefix, why, whylen);
	p->has_ip4 = ret == 0;
	return ret;
}

/* A list separated by commas and/or blanks. */
static int
set_ip6(void *obj, const char *val, char *why, size_t whylen)
{
	static const char seps[] = ", \t";
	struct uroce_config_port *p = obj;
	char buf[UROCE_CONFIG_STR_LEN];
	char *item, *save = NULL;
	uint8_t n = 0;
	int ret;

	memcpy(buf, val, strlen(val) + 1);
	for (item = strtok_r(buf, seps, &save); item != NULL;
	     item = strtok_r(NULL, seps, &save)) {
		if (n == UROCE_CONFIG_MAX_IP6) {
			snprintf(why, whylen, "more than %d addresses",
				 UROCE_CONFIG_MAX_IP6);
			return -EINVAL;
		}
		ret = cfg_parse_ip6_prefix(item, &p->ip6[n], why, whylen);
		if (ret != 0)
			return ret;
		n++;
	}
	if (n == 0) {
		snprintf(why, whylen, "no address");
		return -EINVAL;
	}
	p->ip6_cnt = n;
	return 0;
}

/* A whole number in [min, max], or -EINVAL with the range as the reason. */
static int
parse_range(const char *val, unsigned long min, unsigned long max,
	    unsigned long *v, char *why, size_t whylen)
{
	if (cfg_parse_uint(val, min, max, v) == 0)
		return 0;
	snprintf(why, whylen, "not a number in %lu..%lu", min, max);
	return -EINVAL;
}

static int
set_mtu(void *obj, const char *val, char *why, size_t whylen)
{
	struct uroce_config_port *p = obj;
	unsigned long v;
	int ret;

	ret = parse_range(val, UROCE_CONFIG_MTU_MIN, UROCE_CONFIG_MTU_MAX, &v,
			  why, whylen);
	if (ret == 0) {
		p->mtu = (uint16_t)v;
		p->has_mtu = true;
	}
	return ret;
}

static int
set_mac(void *obj, const char *val, char *why, size_t whylen)
{
	struct uroce_config_port *p = obj;

	if (cfg_parse_mac(val, &p->mac) != 0) {
		snprintf(why, whylen, "not a unicast MAC address xx:xx:xx:xx:xx:xx");
		return -EINVAL;
	}
	p->has_mac = true;
	return 0;
}

static int
set_pcap(void *obj, const char *val, char *why, size_t whylen)
{
	struct uroce_config_port *p = obj;

	memcpy(p->pcap, val, strlen(val) + 1);
	return 0;
}

static int
set_vlan(void *obj, const char *val, char *why, size_t whylen)
{
	struct uroce_config_port *p = obj;
	unsigned long v;
	int ret;

	ret = parse_range(val, 0, UROCE_CONFIG_VLAN_MAX, &v, why, whylen);
	if (ret == 0) {
		p->vlan = (uint16_t)v;
		p->has_vlan = true;
	}
	return ret;
}

static int
set_fault(void *obj, const char *val, char *why, size_t whylen)
{
	struct uroce_config_port *p = obj;

	return cfg_parse_fault(val, &p->fault, &p->has_fault, why, whylen);
}

/* on|off into *off. */
static int
parse_on_off(const char *val, bool *off, char *why, size_t whylen)
{
	if (strcmp(val, "on") == 0 || strcmp(val, "off") == 0) {
		*off = strcmp(val, "off") == 0;
		return 0;
	}
	snprintf(why, whylen, "on or off");
	return -EINVAL;
}

/* zero_copy = on|off (docs/configuration.md); on by default. */
static int
set_zero_copy(void *obj, const char *val, char *why, size_t whylen)
{
	struct uroce_config_port *p = obj;

	return parse_on_off(val, &p->zero_copy_off, why, whylen);
}

/* csum_offload = on|off: the IPv4 header checksum left to a NIC that
 * offers it (docs/plain-nics.md); on by default. */
static int
set_csum_offload(void *obj, const char *val, char *why, size_t whylen)
{
	struct uroce_config_port *p = obj;

	return parse_on_off(val, &p->csum_offload_off, why, whylen);
}

/* exception = DEV | off: the kernel's interface for the frames that are
 * not the stack's (docs/plain-nics.md). */
static int
set_exception(void *obj, const char *val, char *why, size_t whylen)
{
	struct uroce_config_port *p = obj;
	bool pci;
	int ret;

	if (strcmp(val, "off") == 0) {
		p->exception[0] = '\0';
		p->exception_set = true;
		return 0;
	}
	ret = cfg_check_dev(val, &pci, why, whylen);
	if (ret == 0 && pci) {
		snprintf(why, whylen, "a vdev (net_tap..., net_virtio_user...), "
			 "not a PCI address");
		ret = -EINVAL;
	}
	if (ret != 0)
		return ret;
	memcpy(p->exception, val, strlen(val) + 1);
	p->exception_set = true;
	return 0;
}

/* steer = auto|flow|soft: how RoCEv2 is told from the rest. */
static int
set_steer(void *obj, const char *val, char *why, size_t whylen)
{
	static const char *const names[] = {
		[UROCE_STEER_AUTO] = "auto",
		[UROCE_STEER_FLOW] = "flow",
		[UROCE_STEER_SOFT] = "soft",
	};
	struct uroce_config_port *p = obj;
	unsigned int i;

	for (i = 0; i < RTE_DIM(names); i++) {
		if (strcmp(val, names[i]) == 0) {
			p->steer = (enum uroce_config_steer)i;
			return 0;
		}
	}
	snprintf(why, whylen, "auto, flow or soft");
	return -EINVAL;
}

/* One main lcore besides the engine lcores; 0: inline progress. */
#define LCORES_MAX (RTE_MAX_LCORE - 1)

static int
set_lcores(void *obj, const char *val, char *why, size_t whylen)
{
	struct uroce_config *cfg = obj;
	unsigned long v;
	int ret;

	ret = parse_range(val, 0, LCORES_MAX, &v, why, whylen);
	if (ret == 0)
		cfg->lcores = (unsigned int)v;
	return ret;
}

/* keeper_us = MICROSECONDS: with lcores = 0, how long no application call
 * runs the stack before the keeper thread does (lib/engine/keeper.c). */
static int
set_keeper_us(void *obj, const char *val, char *why, size_t whylen)
{
	struct uroce_config *cfg = obj;
	unsigned long v;
	int ret;

	ret = parse_range(val, 1, UROCE_CONFIG_KEEPER_US_MAX, &v, why, whylen);
	if (ret == 0)
		cfg->keeper_us = (unsigned int)v;
	return ret;
}

static int
set_args(void *obj, const char *val, char *why, size_t whylen)
{
	struct uroce_config *cfg = obj;
	char **argv;
	int argc, ret;

	ret = cfg_split_args(val, &argv, &argc, why, whylen);
	if (ret != 0)
		return ret;
	free(cfg->eal_argv);
	cfg->eal_argv = argv;
	cfg->eal_argc = argc;
	return 0;
}

/* neigh = kernel|own: where MACs come from (uroce_config.h). */
static int
set_neigh(void *obj, const char *val, char *why, size_t whylen)
{
	struct uroce_config_port *p = obj;

	if (strcmp(val, "kernel") == 0)
		p->neigh = UROCE_CONFIG_NEIGH_KERNEL;
	else if (strcmp(val, "own") == 0)
		p->neigh = UROCE_CONFIG_NEIGH_OWN;
	else {
		snprintf(why, whylen, "not kernel or own");
		return -EINVAL;
	}
	return 0;
}

/* link_wait = SECONDS: how long the open waits for the link. */
static int
set_link_wait(void *obj, const char *val, char *why, size_t whylen)
{
	struct uroce_config_port *p = obj;
	unsigned long v;
	int ret;

	ret = parse_range(val, 0, UROCE_CONFIG_LINK_WAIT_MAX, &v, why, whylen);
	if (ret == 0)
		p->link_wait = (uint16_t)v;
	return ret;
}

/* A one-byte field's whole number in [min, max], as parse_range(). */
static int
parse_u8(const char *val, uint8_t min, uint8_t max, uint8_t *out, char *why,
	 size_t whylen)
{
	unsigned long v;
	int ret = parse_range(val, min, max, &v, why, whylen);

	if (ret == 0)
		*out = (uint8_t)v;
	return ret;
}

/* cm_response_timeout = EXP: the CM response timeout, 4.096 us x 2^EXP. */
static int
set_cm_resp_timeout(void *obj, const char *val, char *why, size_t whylen)
{
	return parse_u8(val, 0, UROCE_CONFIG_CM_RESP_TIMEOUT_MAX,
			&((struct uroce_config_port *)obj)->cm_resp_timeout,
			why, whylen);
}

/* cm_max_retries = N: resends of an unanswered CM message (4 bits). */
static int
set_cm_max_retries(void *obj, const char *val, char *why, size_t whylen)
{
	return parse_u8(val, 0, UROCE_CONFIG_CM_RETRIES_MAX,
			&((struct uroce_config_port *)obj)->cm_max_retries,
			why, whylen);
}

/* cm_ack_timeout = N: rdma_cm's local ACK timeout exponent. 0 (no timer)
 * is refused: a lost last packet would then wait for ever. */
static int
set_cm_ack_timeout(void *obj, const char *val, char *why, size_t whylen)
{
	return parse_u8(val, UROCE_CONFIG_CM_ACK_TIMEOUT_MIN,
			UROCE_CONFIG_CM_ACK_TIMEOUT_MAX,
			&((struct uroce_config_port *)obj)->cm_ack_timeout,
			why, whylen);
}

/* file_prefix = NAME: it becomes /var/run/dpdk/NAME/ and the hugepage
 * files NAMEmap_<n>, so one path component of a few safe characters. */
static int
set_file_prefix(void *obj, const char *val, char *why, size_t whylen)
{
	struct uroce_config *cfg = obj;
	size_t n = strlen(val);

	if (n > UROCE_CONFIG_PREFIX_LEN || val[0] == '.' ||
	    strspn(val, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		   "0123456789._-") != n) {
		snprintf(why, whylen, "letters, digits, '.', '_' and '-', "
			 "not starting with '.', at most %d",
			 UROCE_CONFIG_PREFIX_LEN);
		return -EINVAL;
	}
	memcpy(cfg->file_prefix, val, n + 1);
	return 0;
}

/* log_level = LEVEL: RTE_LOG_EMERG (1) .. RTE_LOG_DEBUG (8) by name or
 * number, as EAL's --log-level takes them (but whole names only). */
static int
set_log_level(void *obj, const char *val, char *why, size_t whylen)
{
	static const char *const names[] = {
		"emergency", "alert", "critical", "error",
		"warning", "notice", "info", "debug",
	};
	struct uroce_config *cfg = obj;
	unsigned long v;
	unsigned int i;

	for (i = 0; i < RTE_DIM(names); i++) {
		if (strcmp(val, names[i]) == 0) {
			cfg->log_level = (uint8_t)(i + 1);
			return 0;
		}
	}
	if (cfg_parse_uint(val, 1, RTE_DIM(names), &v) == 0) {
		cfg->log_level = (uint8_t)v;
		return 0;
	}
	snprintf(why, whylen, "emergency, alert, critical, error, warning, "
		 "notice, info, debug or 1..8");
	return -EINVAL;
}

static const struct cfg_key port_keys[] = {
	{ "dev", set_dev },
	{ "ip", set_ip },
	{ "ip6", set_ip6 },
	{ "mtu", set_mtu },
	{ "mac", set_mac },
	{ "vlan", set_vlan },
	{ "pcap", set_pcap },
	{ "fault", set_fault },
	{ "zero_copy", set_zero_copy },
	{ "csum_offload", set_csum_offload },
	{ "neigh", set_neigh },
	{ "exception", set_exception },
	{ "steer", set_steer },
	{ "link_wait", set_link_wait },
	{ "cm_response_timeout", set_cm_resp_timeout },
	{ "cm_max_retries", set_cm_max_retries },
	{ "cm_ack_timeout", set_cm_ack_timeout },
};

static const struct cfg_key eal_keys[] = {
	{ "lcores", set_lcores },
	{ "keeper_us", set_keeper_us },
	{ "args", set_args },
	{ "file_prefix", set_file_prefix },
	{ "log_level", set_log_level },
};

/* The keys of a section: [port]'s own, then cc and the DCQCN keys
 * (config_cc.c); an index runs over both. */
static int
key_cnt(enum cfg_sect_kind kind)
{
	if (kind == CFG_SECT_PORT)
		return (int)(RTE_DIM(port_keys) + cfg_cc_key_cnt);
	return kind == CFG_SECT_EAL ? (int)RTE_DIM(eal_keys) : 0;
}

static const struct cfg_key *
key_at(enum cfg_sect_kind kind, int idx)
{
	if (kind != CFG_SECT_PORT)
		return &eal_keys[idx];
	if (idx < (int)RTE_DIM(port_keys))
		return &port_keys[idx];
	return &cfg_cc_keys[idx - (int)RTE_DIM(port_keys)];
}

/* Index of a key in its section's table, or -1. */
int
cfg_key_find(enum cfg_sect_kind kind, const char *name)
{
	int i, cnt = key_cnt(kind);

	for (i = 0; i < cnt; i++) {
		if (strcmp(key_at(kind, i)->name, name) == 0)
			return i;
	}
	return -1;
}

const char *
cfg_key_name(enum cfg_sect_kind kind, int idx)
{
	return key_at(kind, idx)->name;
}

/* "dev, ip, ip6, ..." for the message about an unknown key. */
void
cfg_key_list(enum cfg_sect_kind kind, char *buf, size_t len)
{
	size_t used = 0;
	int i, cnt = key_cnt(kind), n;

	buf[0] = '\0';
	for (i = 0; i < cnt && used < len; i++) {
		n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
			     key_at(kind, i)->name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

/*
 * Set key idx of port `port` or of [eal] from val. var names the
 * environment variable the value came from, NULL for the file. On failure,
 * the one-line error names the file, section, key, value (cut to 80 bytes)
 * and the variable.
 */
int
cfg_key_set(struct cfg_load *ld, enum cfg_sect_kind kind, unsigned int port,
	    int idx, const char *val, const char *var)
{
	const char *sect = kind == CFG_SECT_PORT ? ld->port_sect[port] : "eal";
	void *obj = kind == CFG_SECT_PORT ? (void *)&ld->cfg->port[port] :
					    (void *)ld->cfg;
	char why[CFG_WHY_LEN] = "";
	int ret;

	if (*val == '\0') {
		snprintf(why, sizeof(why), "empty value");
		ret = -EINVAL;
	} else if (strlen(val) >= UROCE_CONFIG_STR_LEN) {
		snprintf(why, sizeof(why), "longer than %d bytes",
			 UROCE_CONFIG_STR_LEN - 1);
		ret = -EINVAL;
	} else {
		ret = key_at(kind, idx)->set(obj, val, why, sizeof(why));
	}
	if (ret == 0)
		return 0;
	cfg_err(ld, "[%s] %s = \"%.80s%s\"%s%s%s: %s", sect,
		cfg_key_name(kind, idx), val, strlen(val) > 80 ? "..." : "",
		var ? " (from " : "", var ? var : "", var ? ")" : "", why);
	return ret;
}

static bool
neigh_same(const struct uroce_config_neigh *a, const struct uroce_config_neigh *b)
{
	if (a->is_ip6 != b->is_ip6)
		return false;
	return a->is_ip6 ? memcmp(a->ip6, b->ip6, sizeof(a->ip6)) == 0 :
			   a->ip4 == b->ip4;
}

/* One [neigh] entry: IPv4 or IPv6 address = MAC. */
int
cfg_neigh_add(struct cfg_load *ld, const char *key, const char *val)
{
	struct uroce_config *cfg = ld->cfg;
	struct uroce_config_neigh *n = &cfg->neigh[cfg->neigh_cnt];
	const char *why = NULL;
	unsigned int i;

	if (cfg->neigh_cnt == UROCE_CONFIG_MAX_NEIGH) {
		why = "more than " RTE_STR(UROCE_CONFIG_MAX_NEIGH) " neighbours";
	} else if (cfg_parse_ip4(key, &n->ip4) != 0) {
		n->is_ip6 = true;
		if (cfg_parse_ip6(key, n->ip6) != 0)
			why = "the key is not an IPv4 or IPv6 address";
	}
	if (why == NULL && cfg_parse_mac(val, &n->mac) != 0)
		why = "not a unicast MAC address xx:xx:xx:xx:xx:xx";
	for (i = 0; why == NULL && i < cfg->neigh_cnt; i++) {
		if (neigh_same(&cfg->neigh[i], n))
			why = "address given twice";
	}
	if (why != NULL) {
		cfg_err(ld, "[neigh] %.64s = \"%.80s\": %s", key, val, why);
		return -EINVAL;
	}
	cfg->neigh_cnt++;
	return 0;
}
