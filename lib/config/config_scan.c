/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The file's syntax, checked line by line before rte_cfgfile reads it.
 *
 * rte_cfgfile (DPDK 22.11) accepts some mistakes silently and reports
 * others only through rte_log, without saying which file:
 *  - a line that is neither "[section]" nor has a '=' is skipped ("mtu 9000"
 *    would vanish), and so is text after the ']' of a section header;
 *  - keys longer than 63 bytes and values longer than 255 are cut;
 *  - "key = value" before any section fails the load with no message;
 *  - a line over 322 bytes, or a section header without ']', fails with a
 *    log line on stderr;
 *  - a NUL byte ends what it sees of a line, and the rest of an overlong
 *    line becomes the next line;
 *  - "\;" keeps a ';', but then no later ';' on that line starts a comment.
 * This scan refuses all of these with the line number, so that rte_cfgfile
 * only ever sees files it reads exactly, and never logs.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config_priv.h"

/* rte_cfgfile reads a line with fgets() into CFG_NAME_LEN + CFG_VALUE_LEN +
 * 4 bytes and fails when the newline does not fit: with the newline and
 * the NUL, 322 bytes of text remain. */
#define LINE_MAX_LEN	(CFG_NAME_LEN + CFG_VALUE_LEN + 2)
/* A configuration is a few dozen lines; anything this big is a wrong path. */
#define FILE_MAX_LEN	(1 << 20)

struct scan_line {
	const char *s;			/* the text without comment and blanks */
	size_t len;
	unsigned int no;		/* line number, from 1 */
};

static void
strip(struct scan_line *l)
{
	while (l->len > 0 && isspace((unsigned char)l->s[0])) {
		l->s++;
		l->len--;
	}
	while (l->len > 0 && isspace((unsigned char)l->s[l->len - 1]))
		l->len--;
}

/* Length of s[0..n) without blanks at both ends. */
static size_t
stripped_len(const char *s, size_t n)
{
	struct scan_line l = { .s = s, .len = n };

	strip(&l);
	return l.len;
}

static int
scan_section(struct cfg_load *ld, const struct scan_line *l)
{
	const char *close = memchr(l->s, ']', l->len);
	size_t n;

	if (close != l->s + l->len - 1 || memchr(l->s + 1, '[', l->len - 1)) {
		cfg_err(ld, "line %u: expected \"[section]\" alone on the line", l->no);
		return -EINVAL;
	}
	n = stripped_len(l->s + 1, l->len - 2);
	if (n == 0 || n >= CFG_NAME_LEN) {
		cfg_err(ld, "line %u: section name empty or longer than %d bytes",
			l->no, CFG_NAME_LEN - 1);
		return -EINVAL;
	}
	ld->scan_sections++;
	return 0;
}

static int
scan_entry(struct cfg_load *ld, const struct scan_line *l)
{
	const char *eq = memchr(l->s, '=', l->len);
	size_t klen, vlen;

	if (eq == NULL) {
		cfg_err(ld, "line %u: expected \"[section]\" or \"key = value\"", l->no);
		return -EINVAL;
	}
	klen = stripped_len(l->s, (size_t)(eq - l->s));
	vlen = stripped_len(eq + 1, (size_t)(l->s + l->len - eq - 1));
	if (klen == 0 || klen >= CFG_NAME_LEN) {
		cfg_err(ld, "line %u: key empty or longer than %d bytes", l->no,
			CFG_NAME_LEN - 1);
		return -EINVAL;
	}
	if (vlen >= CFG_VALUE_LEN) {
		cfg_err(ld, "line %u: value longer than %d bytes", l->no,
			CFG_VALUE_LEN - 1);
		return -EINVAL;
	}
	if (ld->scan_sections == 0) {
		cfg_err(ld, "line %u: \"key = value\" before the first [section]", l->no);
		return -EINVAL;
	}
	ld->scan_entries++;
	return 0;
}

static int
scan_one(struct cfg_load *ld, const char *text, size_t len, unsigned int no)
{
	struct scan_line l = { .s = text, .len = len, .no = no };
	const char *semi;

	if (memchr(text, '\0', len) != NULL) {
		cfg_err(ld, "line %u: NUL byte (not a text file?)", no);
		return -EINVAL;
	}
	if (l.len > 0 && text[l.len - 1] == '\n')
		l.len--;
	if (l.len > LINE_MAX_LEN) {
		cfg_err(ld, "line %u: longer than %d bytes", no, LINE_MAX_LEN);
		return -EINVAL;
	}
	semi = memchr(l.s, ';', l.len);
	if (semi != NULL && semi > l.s && semi[-1] == '\\') {
		cfg_err(ld, "line %u: \"\\;\" is not supported", no);
		return -EINVAL;
	}
	if (semi != NULL)
		l.len = (size_t)(semi - l.s);
	strip(&l);
	if (l.len == 0)
		return 0;
	if (l.s[0] == '#') {
		cfg_err(ld, "line %u: comments start with ';', not '#'", no);
		return -EINVAL;
	}
	return l.s[0] == '[' ? scan_section(ld, &l) : scan_entry(ld, &l);
}

static int
scan_lines(struct cfg_load *ld, FILE *f)
{
	char *text = NULL, ebuf[64];
	size_t cap = 0;
	ssize_t n;
	unsigned int no = 0;
	int ret = 0;

	while (ret == 0 && (n = getline(&text, &cap, f)) >= 0)
		ret = scan_one(ld, text, (size_t)n, ++no);
	if (ret == 0 && ferror(f)) {
		ret = -EIO;
		cfg_err(ld, "cannot read: %s", strerror_r(EIO, ebuf, sizeof(ebuf)));
	}
	free(text);
	return ret;
}

int
cfg_scan(struct cfg_load *ld)
{
	char ebuf[64];
	struct stat st;
	FILE *f;
	int ret;

	f = fopen(ld->path, "r");
	if (f == NULL) {
		ret = -errno;
		cfg_err(ld, "cannot open: %s", strerror_r(-ret, ebuf, sizeof(ebuf)));
		return ret;
	}
	/* A FIFO or <(...) could not be read twice, a directory not at all. */
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		cfg_err(ld, "not a regular file");
		ret = -EINVAL;
	} else if (st.st_size > FILE_MAX_LEN) {
		cfg_err(ld, "larger than %d bytes", FILE_MAX_LEN);
		ret = -EFBIG;
	} else {
		ret = scan_lines(ld, f);
	}
	fclose(f);
	return ret;
}
