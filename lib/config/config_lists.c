/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Values that are lists: the fault spec "drop=P,reorder=P,dup=P,corrupt=P,
 * ce=P,seed=S" and the EAL argument string.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_priv.h"

enum fault_field { F_DROP, F_REORDER, F_DUP, F_CORRUPT, F_CE, F_SEED, F_COUNT };

static const char *const fault_names[F_COUNT] = {
	[F_DROP] = "drop", [F_REORDER] = "reorder", [F_DUP] = "dup",
	[F_CORRUPT] = "corrupt", [F_CE] = "ce", [F_SEED] = "seed",
};

/* Blanks around a comma-separated item are allowed: cut them in place. */
static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int
fault_field(char *item, struct uroce_config_fault *f, unsigned int *seen,
	    char *why, size_t whylen)
{
	char *eq = strchr(item, '=');
	uint32_t *ppm[F_COUNT] = {
		&f->drop_ppm, &f->reorder_ppm, &f->dup_ppm, &f->corrupt_ppm,
		&f->ce_ppm, NULL,
	};
	unsigned int i;
	const char *val;

	if (eq != NULL)
		*eq = '\0';
	item = trim(item);
	for (i = 0; i < F_COUNT && strcmp(item, fault_names[i]) != 0; i++)
		;
	if (eq == NULL || i == F_COUNT) {
		snprintf(why, whylen, "\"%s\": expected drop=P, reorder=P, dup=P, corrupt=P, ce=P or seed=S",
			 item);
		return -EINVAL;
	}
	if (*seen & (1u << i)) {
		snprintf(why, whylen, "%s given twice", item);
		return -EINVAL;
	}
	*seen |= 1u << i;
	val = trim(eq + 1);
	if (i == F_SEED ? cfg_parse_u64(val, &f->seed) != 0 :
			  cfg_parse_ppm(val, ppm[i]) != 0) {
		snprintf(why, whylen, i == F_SEED ?
			 "%s=%s: not a 64-bit number" :
			 "%s=%s: not a probability in 0..1 (like 0.01 or 1%%)",
			 item, val);
		return -EINVAL;
	}
	return 0;
}

int
cfg_parse_fault(const char *s, struct uroce_config_fault *f, bool *on,
		char *why, size_t whylen)
{
	struct uroce_config_fault nf = { .seed = UROCE_CONFIG_FAULT_SEED_DEFAULT };
	char buf[UROCE_CONFIG_STR_LEN];
	unsigned int seen = 0;
	char *item, *save = NULL;
	int ret;

	if (strcmp(s, "none") == 0) {
		memset(f, 0, sizeof(*f));
		*on = false;
		return 0;
	}
	if (strlen(s) >= sizeof(buf)) {
		snprintf(why, whylen, "too long");
		return -EINVAL;
	}
	memcpy(buf, s, strlen(s) + 1);
	/* strtok_r would skip an empty item (",,"), strsep returns it. */
	save = buf;
	while ((item = strsep(&save, ",")) != NULL) {
		ret = fault_field(item, &nf, &seen, why, whylen);
		if (ret != 0)
			return ret;
	}
	*f = nf;
	*on = true;
	return 0;
}

int
uroce_config_parse_fault(const char *spec, struct uroce_config_fault *f,
			 bool *on, char *why, size_t whylen)
{
	if (spec == NULL || f == NULL || on == NULL) {
		snprintf(why, whylen, "no spec");
		return -EINVAL;
	}
	return cfg_parse_fault(spec, f, on, why, whylen);	/* all or nothing */
}

/* One argument from *pp into out: blanks end it unless inside "...", a
 * quote only groups (it is not copied). Returns the end of out. */
static char *
one_arg(const char **pp, char *out, bool *open_quote)
{
	const char *p = *pp;
	bool quoted = false;

	for (; *p != '\0' && (quoted || !isspace((unsigned char)*p)); p++) {
		if (*p == '"')
			quoted = !quoted;
		else
			*out++ = *p;
	}
	*out++ = '\0';
	*pp = p;
	*open_quote = quoted;
	return out;
}

/*
 * Split on blanks into a NULL-terminated argv, honouring double quotes
 * (no escapes). One allocation: the pointer array, then the strings, which
 * are never longer than the input (a quote or blank gives way to a NUL).
 */
int
cfg_split_args(const char *s, char ***argvp, int *argcp, char *why, size_t whylen)
{
	size_t ptrs = (UROCE_CONFIG_MAX_EAL_ARGS + 1) * sizeof(char *);
	char **argv = malloc(ptrs + strlen(s) + 1);
	char *out;
	bool open_quote;
	int argc = 0;

	if (argv == NULL) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	out = (char *)argv + ptrs;
	for (;;) {
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '\0')
			break;
		if (argc == UROCE_CONFIG_MAX_EAL_ARGS) {
			snprintf(why, whylen, "more than %d arguments",
				 UROCE_CONFIG_MAX_EAL_ARGS);
			goto fail;
		}
		argv[argc] = out;
		out = one_arg(&s, out, &open_quote);
		if (open_quote || argv[argc][0] == '\0') {
			snprintf(why, whylen, open_quote ? "unterminated \"" :
				 "empty argument \"\"");
			goto fail;
		}
		argc++;
	}
	argv[argc] = NULL;
	*argvp = argv;
	*argcp = argc;
	return 0;
fail:
	free(argv);
	return -EINVAL;
}
