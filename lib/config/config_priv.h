/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_CONFIG_PRIV_H
#define UROCE_CONFIG_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_cfgfile.h>
#include <rte_common.h>

#include "uroce_config.h"

/* Log type of the config component, "uroce.config" (config.c). */
extern int uroce_config_logtype;

/* Room for the reason a value is refused ("not a number in 68..9000"). */
#define CFG_WHY_LEN	160
/* Room for the list of a section's keys (cfg_key_list()). */
#define CFG_KNOWN_LEN	512

enum cfg_sect_kind {
	CFG_SECT_PORT,
	CFG_SECT_EAL,
	CFG_SECT_NEIGH,
};

/* State of one uroce_config_load() call. */
struct cfg_load {
	struct uroce_config *cfg;
	const char *path;
	char msg[UROCE_CONFIG_ERR_LEN];		/* the error, once there is one */
	/* What cfg_scan() counted, to check rte_cfgfile read the same. */
	unsigned int scan_sections;
	unsigned int scan_entries;
	/* Section name each port has in the file ("port", "port0" ...);
	 * "" for a port the file does not have. */
	char port_sect[UROCE_CONFIG_MAX_PORTS][CFG_NAME_LEN];
	bool eal_seen;
	bool neigh_seen;
	/* Keys set by environment variables: [port] 0..15, then [eal]. */
	uint64_t env_seen[UROCE_CONFIG_MAX_PORTS + 1];
};

/* Sets one key of a port (obj: struct uroce_config_port) or of [eal]
 * (obj: struct uroce_config) from its non-empty value. On failure returns
 * a negative errno and says why, without naming the key. */
typedef int (*cfg_set_fn)(void *obj, const char *val, char *why, size_t whylen);

struct cfg_key {
	const char *name;
	cfg_set_fn set;
};

/* config.c */
void cfg_err(struct cfg_load *ld, const char *fmt, ...)
	__rte_format_printf(2, 3);

/* config_keys.c: the keys of [port] and [eal]. */
int cfg_key_find(enum cfg_sect_kind kind, const char *name);
const char *cfg_key_name(enum cfg_sect_kind kind, int idx);
void cfg_key_list(enum cfg_sect_kind kind, char *buf, size_t len);
int cfg_key_set(struct cfg_load *ld, enum cfg_sect_kind kind, unsigned int port,
		int idx, const char *val, const char *var);
int cfg_neigh_add(struct cfg_load *ld, const char *key, const char *val);

/* config_cc.c: cc and the DCQCN keys of [port]. */
extern const struct cfg_key cfg_cc_keys[];
extern const unsigned int cfg_cc_key_cnt;

/* config_scan.c: the file's syntax, checked before rte_cfgfile reads it. */
int cfg_scan(struct cfg_load *ld);

/* config_env.c: UROCE_<SECTION>_<KEY> overrides. */
int cfg_env_apply(struct cfg_load *ld);

/* config_values.c: value syntax; 0 or -EINVAL (-ERANGE for a number out
 * of its range, -ENOMEM). */
int cfg_parse_uint(const char *s, unsigned long min, unsigned long max,
		   unsigned long *out);
int cfg_parse_ppm(const char *s, uint32_t *ppm);
int cfg_parse_u64(const char *s, uint64_t *out);
int cfg_parse_ip4(const char *s, rte_be32_t *ip);
int cfg_parse_ip6(const char *s, uint8_t ip6[16]);
int cfg_parse_ip4_prefix(const char *s, rte_be32_t *ip, uint8_t *plen,
			 char *why, size_t whylen);
int cfg_parse_ip6_prefix(const char *s, struct uroce_config_ip6 *a,
			 char *why, size_t whylen);
int cfg_parse_mac(const char *s, struct rte_ether_addr *mac);
int cfg_check_dev(const char *s, bool *is_pci, char *why, size_t whylen);
int cfg_parse_fault(const char *s, struct uroce_config_fault *f, bool *on,
		    char *why, size_t whylen);
int cfg_split_args(const char *s, char ***argvp, int *argcp,
		   char *why, size_t whylen);

#endif /* UROCE_CONFIG_PRIV_H */
