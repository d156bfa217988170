/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Environment overrides: UROCE_<SECTION>_<KEY>=value, applied after the
 * file. The whole environment is walked (rather than getenv() per known
 * key) so that a misspelt variable in the reserved prefixes is an error
 * instead of an override that silently never happens.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config_priv.h"

#define ENV_PREFIX	"UROCE_"
/* Room for UROCE_PORT<n>_<KEY>; longer names are refused. */
#define ENV_NAME_LEN	64

/* Names starting with these belong to the overrides. */
static const char *const reserved[] = { "UROCE_PORT", "UROCE_EAL_", "UROCE_NEIGH_" };

static bool
is_reserved(const char *name)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(reserved); i++) {
		if (strncmp(name, reserved[i], strlen(reserved[i])) == 0)
			return true;
	}
	return false;
}

/* "EAL" or "PORT", "PORT0" ... "PORT15" (no leading zeros): kind and port,
 * or -EINVAL. */
static int
env_section(const char *sect, enum cfg_sect_kind *kind, unsigned int *port)
{
	unsigned long n = 0;

	if (strcmp(sect, "EAL") == 0) {
		*kind = CFG_SECT_EAL;
		*port = 0;
		return 0;
	}
	if (strncmp(sect, "PORT", 4) != 0)
		return -EINVAL;
	sect += 4;
	if ((sect[0] == '0' && sect[1] != '\0') ||
	    (sect[0] != '\0' && cfg_parse_uint(sect, 0, UROCE_CONFIG_MAX_PORTS - 1, &n) != 0))
		return -EINVAL;
	*kind = CFG_SECT_PORT;
	*port = (unsigned int)n;
	return 0;
}

/* The key part of the name in lower case; "" if it is not [A-Z0-9_]+
 * (keys such as link_wait and zero_copy hold a '_'). */
static void
env_key(const char *s, char *key, size_t len)
{
	size_t i;

	for (i = 0; s[i] != '\0' && i + 1 < len; i++) {
		if (!isupper((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) &&
		    s[i] != '_')
			break;
		key[i] = (char)tolower((unsigned char)s[i]);
	}
	key[s[i] == '\0' ? i : 0] = '\0';
}

/* Which key of which section name (a copy of the variable's name) sets;
 * 0 or -EINVAL with the error written. */
static int
env_target(struct cfg_load *ld, char *name, enum cfg_sect_kind *kind,
	   unsigned int *port, int *idx)
{
	char *sect = name + strlen(ENV_PREFIX);
	char *us = strchr(sect, '_');
	char key[ENV_NAME_LEN], known[CFG_KNOWN_LEN];

	if (us == NULL || strncmp(name, "UROCE_NEIGH_", 12) == 0) {
		cfg_err(ld, "%s: not an override (UROCE_PORT<n>_<KEY> or UROCE_EAL_<KEY>)",
			name);
		return -EINVAL;
	}
	*us = '\0';
	if (env_section(sect, kind, port) != 0) {
		*us = '_';
		cfg_err(ld, "%s: no such section (PORT, PORT0..PORT%d or EAL)", name,
			UROCE_CONFIG_MAX_PORTS - 1);
		return -EINVAL;
	}
	*us = '_';
	env_key(us + 1, key, sizeof(key));
	*idx = cfg_key_find(*kind, key);
	if (*idx < 0) {
		cfg_key_list(*kind, known, sizeof(known));
		cfg_err(ld, "%s: unknown key (known: %s)", name, known);
		return -EINVAL;
	}
	if (*kind == CFG_SECT_PORT && ld->port_sect[*port][0] == '\0') {
		cfg_err(ld, "%s: the file has no section for port %u", name, *port);
		return -EINVAL;
	}
	return 0;
}

static int
env_one(struct cfg_load *ld, const char *entry)
{
	const char *eq = strchr(entry, '=');
	char name[ENV_NAME_LEN];
	enum cfg_sect_kind kind;
	unsigned int port, slot;
	size_t n;
	int idx, ret;

	n = eq != NULL ? (size_t)(eq - entry) : strlen(entry);
	if (n >= sizeof(name)) {
		cfg_err(ld, "%.*s...: name of an override too long", ENV_NAME_LEN, entry);
		return -EINVAL;
	}
	memcpy(name, entry, n);
	name[n] = '\0';
	ret = env_target(ld, name, &kind, &port, &idx);
	if (ret != 0)
		return ret;
	/* [port] and [port0] are one port: two variables for one key clash. */
	slot = kind == CFG_SECT_PORT ? port : UROCE_CONFIG_MAX_PORTS;
	if (ld->env_seen[slot] & (UINT64_C(1) << idx)) {
		cfg_err(ld, "%s: another variable sets [%s] %s too", name,
			kind == CFG_SECT_PORT ? ld->port_sect[port] : "eal",
			cfg_key_name(kind, idx));
		return -EINVAL;
	}
	ld->env_seen[slot] |= UINT64_C(1) << idx;
	return cfg_key_set(ld, kind, port, idx, eq != NULL ? eq + 1 : "", name);
}

int
cfg_env_apply(struct cfg_load *ld)
{
	char **e;
	int ret;

	for (e = environ; e != NULL && *e != NULL; e++) {
		if (!is_reserved(*e))
			continue;
		ret = env_one(ld, *e);
		if (ret != 0)
			return ret;
	}
	return 0;
}
