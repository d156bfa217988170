/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Loading the configuration: scan the syntax (config_scan.c), read the file
 * with rte_cfgfile, walk its sections and keys in file order, apply the
 * environment overrides (config_env.c), then check what only the whole can
 * tell (every port has dev and an address, ports have no gaps). Any error
 * stops the load with one line and leaves a zeroed configuration.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>

#include "config_priv.h"

RTE_LOG_REGISTER_SUFFIX(uroce_config_logtype, config, NOTICE);

/*
 * "uroce: FILE: " and the message, into ld->msg; the first error wins.
 * Control characters (from a value or a variable, even the path) become
 * '?', so that the message stays one line whatever the input.
 */
void
cfg_err(struct cfg_load *ld, const char *fmt, ...)
{
	size_t n;
	char *p;
	va_list ap;

	if (ld->msg[0] != '\0')
		return;
	n = (size_t)snprintf(ld->msg, sizeof(ld->msg), "uroce: %s: ", ld->path);
	if (n < sizeof(ld->msg)) {
		va_start(ap, fmt);
		vsnprintf(ld->msg + n, sizeof(ld->msg) - n, fmt, ap);
		va_end(ap);
	}
	for (p = ld->msg; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	}
}

/* "port" is port 0, as "port0"; "port1" ... "port15", no leading zeros. */
static int
port_section(const char *name, unsigned int *port)
{
	unsigned long n = 0;

	if (strncmp(name, "port", 4) != 0)
		return -EINVAL;
	name += 4;
	if (name[0] == '0' && name[1] != '\0')
		return -EINVAL;
	if (name[0] != '\0' &&
	    cfg_parse_uint(name, 0, UROCE_CONFIG_MAX_PORTS - 1, &n) != 0)
		return -ERANGE;
	*port = (unsigned int)n;
	return 0;
}

/* Kind and port of a section; each section may appear once. */
static int
section_kind(struct cfg_load *ld, const char *name, enum cfg_sect_kind *kind,
	     unsigned int *port)
{
	bool *seen = NULL;
	int ret;

	*port = 0;
	ret = port_section(name, port);
	if (ret == 0) {
		*kind = CFG_SECT_PORT;
		if (ld->port_sect[*port][0] == '\0') {
			memcpy(ld->port_sect[*port], name, strlen(name) + 1);
			ld->cfg->port[*port].mtu = UROCE_CONFIG_MTU_DEFAULT;
			ld->cfg->port[*port].link_wait =
				UROCE_CONFIG_LINK_WAIT_DEFAULT;
			ld->cfg->port[*port].cm_resp_timeout =
				UROCE_CONFIG_CM_RESP_TIMEOUT_DEFAULT;
			ld->cfg->port[*port].cm_max_retries =
				UROCE_CONFIG_CM_RETRIES_DEFAULT;
			ld->cfg->port[*port].cm_ack_timeout =
				UROCE_CONFIG_CM_ACK_TIMEOUT_DEFAULT;
			uroce_config_dcqcn_defaults(&ld->cfg->port[*port].dcqcn);
			return 0;
		}
		cfg_err(ld, "[%s]: port %u is already [%s]", name, *port,
			ld->port_sect[*port]);
		return -EINVAL;
	}
	if (strcmp(name, "eal") == 0) {
		*kind = CFG_SECT_EAL;
		seen = &ld->eal_seen;
	} else if (strcmp(name, "neigh") == 0) {
		*kind = CFG_SECT_NEIGH;
		seen = &ld->neigh_seen;
	} else {
		cfg_err(ld, "[%s]: unknown section (known: port, port1..port%d, eal, neigh)",
			name, UROCE_CONFIG_MAX_PORTS - 1);
		return -EINVAL;
	}
	if (*seen) {
		cfg_err(ld, "[%s]: section given twice", name);
		return -EINVAL;
	}
	*seen = true;
	return 0;
}

static int
load_entry(struct cfg_load *ld, enum cfg_sect_kind kind, unsigned int port,
	   const char *sect, const struct rte_cfgfile_entry *e, uint64_t *seen)
{
	char known[CFG_KNOWN_LEN];
	int idx;

	if (kind == CFG_SECT_NEIGH)
		return cfg_neigh_add(ld, e->name, e->value);
	idx = cfg_key_find(kind, e->name);
	if (idx < 0) {
		cfg_key_list(kind, known, sizeof(known));
		cfg_err(ld, "[%s] %s: unknown key (known: %s)", sect, e->name, known);
		return -EINVAL;
	}
	if (*seen & (UINT64_C(1) << idx)) {
		cfg_err(ld, "[%s] %s: key given twice", sect, e->name);
		return -EINVAL;
	}
	*seen |= UINT64_C(1) << idx;
	return cfg_key_set(ld, kind, port, idx, e->value, NULL);
}

static int
load_section(struct cfg_load *ld, struct rte_cfgfile *cf, int sidx,
	     unsigned int *entries)
{
	char name[CFG_NAME_LEN];
	struct rte_cfgfile_entry *e;
	enum cfg_sect_kind kind;
	unsigned int port;
	uint64_t seen = 0;
	int i, cnt, ret;

	cnt = rte_cfgfile_section_num_entries_by_index(cf, name, sidx);
	if (cnt < 0)
		return -EINVAL;
	ret = section_kind(ld, name, &kind, &port);
	if (ret != 0 || cnt == 0)
		return ret;
	e = calloc((size_t)cnt, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	cnt = rte_cfgfile_section_entries_by_index(cf, sidx, name, e, cnt);
	for (i = 0; ret == 0 && i < cnt; i++)
		ret = load_entry(ld, kind, port, name, &e[i], &seen);
	*entries += (unsigned int)cnt;
	free(e);
	return ret;
}

static int
load_file(struct cfg_load *ld)
{
	struct rte_cfgfile *cf;
	unsigned int entries = 0;
	int i, n, ret = 0;

	/* Empty values are allowed through so that the error can name the
	 * key ("[port] pcap = "": empty value"). */
	cf = rte_cfgfile_load(ld->path, CFG_FLAG_EMPTY_VALUES);
	if (cf == NULL) {
		cfg_err(ld, "rte_cfgfile cannot read it");
		return -EINVAL;
	}
	n = rte_cfgfile_num_sections(cf, NULL, 0);
	for (i = 0; ret == 0 && i < n; i++)
		ret = load_section(ld, cf, i, &entries);
	rte_cfgfile_close(cf);
	if (ret == 0 && ((unsigned int)n != ld->scan_sections ||
			 entries != ld->scan_entries)) {
		cfg_err(ld, "changed while being read");
		ret = -EAGAIN;
	}
	if (ret == -ENOMEM)
		cfg_err(ld, "out of memory");
	return ret;
}

/* The name a vdev or PCI device has in DPDK: the text before ','. A
 * ringlink's two sides are two devices (pmd_glue): the whole string. */
static size_t
dev_name_len(const char *dev)
{
	if (strncmp(dev, "ringlink:", 9) == 0)
		return strlen(dev);
	return strcspn(dev, ",");
}

static int
check_port(struct cfg_load *ld, unsigned int i)
{
	const struct uroce_config_port *p = &ld->cfg->port[i];
	const char *sect = ld->port_sect[i];
	size_t n = dev_name_len(p->dev);
	unsigned int j;

	if (i > 0 && ld->port_sect[i - 1][0] == '\0') {
		cfg_err(ld, "[%s]: ports are numbered without gaps, port %u is missing",
			sect, i - 1);
		return -EINVAL;
	}
	if (p->dev[0] == '\0') {
		cfg_err(ld, "[%s] dev: missing (a DPDK vdev string or PCI address)", sect);
		return -EINVAL;
	}
	/* A kernel interface's own addresses serve when none are given. */
	if (!p->has_ip4 && p->ip6_cnt == 0 && !uroce_config_kernel_iface(p)) {
		cfg_err(ld, "[%s] ip: missing (give ip and/or ip6)", sect);
		return -EINVAL;
	}
	for (j = 0; j < i; j++) {
		const char *other = ld->cfg->port[j].dev;

		if (dev_name_len(other) == n && memcmp(other, p->dev, n) == 0) {
			cfg_err(ld, "[%s] dev: device %.*s is also [%s]'s", sect,
				(int)n, p->dev, ld->port_sect[j]);
			return -EINVAL;
		}
	}
	return 0;
}

static int
check_ports(struct cfg_load *ld)
{
	unsigned int i;
	int ret;

	for (i = 0; i < UROCE_CONFIG_MAX_PORTS; i++) {
		if (ld->port_sect[i][0] == '\0')
			continue;
		ret = check_port(ld, i);
		if (ret != 0)
			return ret;
		ld->cfg->port_cnt = i + 1;
	}
	if (ld->cfg->port_cnt == 0) {
		cfg_err(ld, "[port]: missing (no port configured)");
		return -EINVAL;
	}
	return 0;
}

/* An EAL option of argv, alone or as "--opt=value". */
static bool
args_have(const struct uroce_config *cfg, const char *opt)
{
	size_t n = strlen(opt);
	int i;

	for (i = 0; i < cfg->eal_argc; i++) {
		const char *a = cfg->eal_argv[i];

		if (strncmp(a, opt, n) == 0 && (a[n] == '\0' || a[n] == '='))
			return true;
	}
	return false;
}

bool
uroce_config_args_prefix(const struct uroce_config *cfg)
{
	return args_have(cfg, "--file-prefix") || args_have(cfg, "--in-memory") ||
	       args_have(cfg, "--no-shconf");
}

/* file_prefix and an args --file-prefix would each name the prefix. */
static int
check_eal(struct cfg_load *ld)
{
	if (ld->cfg->file_prefix[0] != '\0' &&
	    args_have(ld->cfg, "--file-prefix")) {
		cfg_err(ld, "[eal] file_prefix = \"%s\": [eal] args give "
			"--file-prefix too (keep one)", ld->cfg->file_prefix);
		return -EINVAL;
	}
	return 0;
}

static int
load(struct cfg_load *ld)
{
	int ret;

	ret = cfg_scan(ld);
	if (ret == 0)
		ret = load_file(ld);
	if (ret == 0)
		ret = cfg_env_apply(ld);
	if (ret == 0)
		ret = check_ports(ld);
	if (ret == 0)
		ret = check_eal(ld);
	if (ret == 0) {
		ld->cfg->path = strdup(ld->path);
		if (ld->cfg->path == NULL) {
			cfg_err(ld, "out of memory");
			ret = -ENOMEM;
		}
	}
	return ret;
}

int
uroce_config_load(const char *path, struct uroce_config *cfg, char *err,
		  size_t errlen)
{
	struct cfg_load ld = { .cfg = cfg, .path = path ? path : "(none)" };
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	cfg->lcores = 1;
	cfg->keeper_us = UROCE_CONFIG_KEEPER_US_DEFAULT;
	cfg->log_level = UROCE_CONFIG_LOG_LEVEL_DEFAULT;
	if (path == NULL) {
		cfg_err(&ld, "no configuration file (use -c FILE or UROCE_CONFIG=FILE)");
		ret = -EINVAL;
	} else {
		ret = load(&ld);
	}
	if (ret != 0) {
		uroce_config_free(cfg);
		/* The caller prints err; without one, the log is all there is. */
		rte_log(err != NULL ? RTE_LOG_DEBUG : RTE_LOG_ERR,
			uroce_config_logtype, "%s\n", ld.msg);
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s", ld.msg);
		return ret;
	}
	rte_log(RTE_LOG_INFO, uroce_config_logtype,
		"%s: %u port(s), %u engine lcore(s)\n", path, cfg->port_cnt,
		cfg->lcores);
	return 0;
}

void
uroce_config_free(struct uroce_config *cfg)
{
	if (cfg == NULL)
		return;
	free(cfg->eal_argv);
	free(cfg->path);
	memset(cfg, 0, sizeof(*cfg));
}

bool
uroce_config_kernel_iface(const struct uroce_config_port *p)
{
	if (strncmp(p->dev, "af_xdp:", 7) == 0)
		return true;
	return (strncmp(p->dev, "net_af_xdp", 10) == 0 ||
		strncmp(p->dev, "net_af_packet", 13) == 0) &&
	       strstr(p->dev, ",iface=") != NULL;
}

const char *
uroce_config_path(void)
{
	const char *p = getenv("UROCE_CONFIG");

	return p != NULL && p[0] != '\0' ? p : NULL;
}
