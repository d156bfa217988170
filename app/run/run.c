/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * uroce-run: run an unmodified verbs program on the uroce stack.
 *
 *	uroce-run -c FILE -- PROGRAM [ARGS...]
 *
 * Like the onload/vma launchers: point the dynamic linker at our
 * libibverbs.so.1 and librdmacm.so.1 (LD_LIBRARY_PATH, which wins since no
 * Debian binary has an RPATH), give the library its configuration (UROCE_CONFIG, made
 * absolute so that a program that changes directory still finds it), then
 * exec the program. Nothing stays running: the library does the rest.
 *
 * The library is looked for relative to the launcher's own executable:
 * first in the install layout (<bindir>/uroce-run -> <libdir>/uroce/, the
 * path meson computed from bindir), so that an installed tree works
 * wherever it is unpacked; then in the build tree (app/run/uroce-run ->
 * lib/verbs/); then at the configured absolute <libdir>/uroce. The
 * install layout comes first because the build tree's relative path,
 * seen from an installed <bindir>, could name an unrelated folder
 * (<prefix>/../lib/verbs). Errors are one line and exit 2.
 */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef UROCE_RUN_LIBDIR_REL
#define UROCE_RUN_LIBDIR_REL "../lib/uroce"	/* from bindir */
#endif
#ifndef UROCE_RUN_LIBDIR_ABS
#define UROCE_RUN_LIBDIR_ABS "/usr/local/lib/uroce"
#endif

#define EXIT_USAGE	2
#define VERBS_LIB	"libibverbs.so.1"
#define RDMACM_LIB	"librdmacm.so.1"

/* Where the library may be, relative to the launcher's directory, in the
 * order tried. */
static const char *const lib_dirs_rel[] = {
	UROCE_RUN_LIBDIR_REL,		/* install layout */
	"../../lib/verbs",		/* build tree */
};
/* librdmacm.so.1: beside libibverbs.so.1 once installed, in its own
 * folder of the build tree (relative to the launcher's directory). */
#define RDMACM_DIR_BUILD	"../../lib/rdmacm"

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fputs("uroce-run: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_USAGE);
}

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: uroce-run [-c FILE] [-v] [--] PROGRAM [ARGS...]\n"
"\n"
"Run an unmodified verbs or rdma_cm program (ibv_rc_pingpong, perftest,\n"
"rping, ...) on the\n"
"uroce userspace RoCEv2 stack instead of an RDMA NIC: uroce-run puts the\n"
"directories of uroce's libibverbs.so.1 and librdmacm.so.1 first in\n"
"LD_LIBRARY_PATH, sets\n"
"UROCE_CONFIG to the absolute path of the configuration file, and execs\n"
"PROGRAM. The devices are uroce0, uroce1, ... one per [port] of the file.\n"
"\n"
"  -c, --config FILE  the INI configuration (see config/*.conf); without\n"
"                     it, the UROCE_CONFIG environment variable is used\n"
"  -v, --verbose      DPDK's log at info ([eal] log_level, default\n"
"                     warning: no start-up lines); -vv at debug\n"
"  -h, --help         this text\n"
"\n"
"Keys of the file can be overridden from the environment, for example\n"
"UROCE_PORT_MTU=1500 or UROCE_EAL_ARGS=\"--no-huge -m 256\".\n"
"\n"
"Example:\n"
"  uroce-run -c config/memif-a.conf -- ibv_rc_pingpong -g 0 -d uroce0\n"
"\n""Live counters: while the program runs, DPDK's telemetry socket answers\n"
"/uroce/info, /uroce/ports, /uroce/qps and /uroce/qp,QPN at\n"
"/var/run/dpdk/PREFIX/dpdk_telemetry.v2 (PREFIX: [eal] file_prefix or the\n"
"--file-prefix of [eal] args, else uroce-PID), e.g. dpdk-telemetry.py -f PREFIX.\n"
"\n"
"A missing configuration file, program or library is reported in one\n"
"line, with exit status 2.\n");
}

/* out[PATH_MAX] = dir, made absolute, if dir holds library @name. */
static int
lib_in(const char *dir, const char *name, char *out)
{
	char lib[PATH_MAX * 2];

	if (snprintf(lib, sizeof(lib), "%s/%s", dir, name) >= (int)sizeof(lib))
		return 0;
	return access(lib, R_OK) == 0 && realpath(dir, out) != NULL;
}

/* The launcher's own directory into exe[PATH_MAX], or die. */
static void
own_dir(char *exe)
{
	ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX - 1);

	if (n <= 0)
		die("cannot find my own location: %s", strerror(errno));
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
}

/* The directory holding our libibverbs.so.1 into out[PATH_MAX], or die. */
static void
find_lib_dir(char *out)
{
	char exe[PATH_MAX], cand[PATH_MAX * 2];
	size_t i;

	own_dir(exe);
	for (i = 0; i < sizeof(lib_dirs_rel) / sizeof(lib_dirs_rel[0]); i++) {
		snprintf(cand, sizeof(cand), "%s/%s", exe, lib_dirs_rel[i]);
		if (lib_in(cand, VERBS_LIB, out))
			return;
	}
	if (lib_in(UROCE_RUN_LIBDIR_ABS, VERBS_LIB, out))
		return;
	die("%s not found beside %s (looked in %s/%s, %s/%s and %s)",
	    VERBS_LIB, exe, exe, lib_dirs_rel[0], exe, lib_dirs_rel[1],
	    UROCE_RUN_LIBDIR_ABS);
}

/* The directory holding our librdmacm.so.1 into out[PATH_MAX]: the verbs
 * library's (installed), else the build tree's lib/rdmacm; or die. */
static void
find_rdmacm_dir(const char *verbs_dir, char *out)
{
	char exe[PATH_MAX], cand[PATH_MAX * 2];

	if (lib_in(verbs_dir, RDMACM_LIB, out))
		return;
	own_dir(exe);
	snprintf(cand, sizeof(cand), "%s/" RDMACM_DIR_BUILD, exe);
	if (lib_in(cand, RDMACM_LIB, out))
		return;
	die("%s not found beside %s nor in %s", RDMACM_LIB, verbs_dir, cand);
}

static void
set_config(const char *file)
{
	char abs[PATH_MAX];

	if (file == NULL || file[0] == '\0')
		die("no configuration: give -c FILE or set UROCE_CONFIG");
	if (realpath(file, abs) == NULL || access(abs, R_OK) != 0)
		die("configuration file %s: %s", file, strerror(errno));
	if (setenv("UROCE_CONFIG", abs, 1) != 0)
		die("setenv: %s", strerror(errno));
}

static void
prepend_library_path(const char *dir)
{
	const char *old = getenv("LD_LIBRARY_PATH");
	char *val;

	if (old != NULL && old[0] != '\0') {
		if (asprintf(&val, "%s:%s", dir, old) < 0)
			die("out of memory");
	} else if ((val = strdup(dir)) == NULL) {
		die("out of memory");
	}
	if (setenv("LD_LIBRARY_PATH", val, 1) != 0)
		die("setenv: %s", strerror(errno));
	free(val);
}

/* The program's path as execv() needs it (a PATH search without '/'). */
static void
find_program(const char *prog, char *out, size_t len)
{
	const char *path = getenv("PATH");
	const char *p, *end;

	if (strchr(prog, '/') != NULL) {
		if (access(prog, X_OK) != 0)
			die("%s: %s", prog, strerror(errno));
		snprintf(out, len, "%s", prog);
		return;
	}
	for (p = path != NULL ? path : "/usr/bin:/bin"; ; p = end + 1) {
		end = strchrnul(p, ':');
		/* An empty PATH element means the current directory. */
		if (end == p)
			snprintf(out, len, "./%s", prog);
		else
			snprintf(out, len, "%.*s/%s", (int)(end - p), p, prog);
		if (access(out, X_OK) == 0)
			return;
		if (*end == '\0')
			break;
	}
	die("%s: program not found in PATH", prog);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL;
	char lib_dir[PATH_MAX], cm_dir[PATH_MAX], prog[PATH_MAX];
	int c, verbose = 0;

	/* '+': stop at the program's name, its options are its own. */
	while ((c = getopt_long(argc, argv, "+c:hv", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:	/* getopt said what is wrong */
			fputs("Try 'uroce-run --help'.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc)
		die("no program to run (uroce-run --help)");
	/* The override of [eal] log_level the library reads. */
	if (verbose > 0 && setenv("UROCE_EAL_LOG_LEVEL",
				  verbose > 1 ? "debug" : "info", 1) != 0)
		die("setenv: %s", strerror(errno));
	set_config(config != NULL ? config : getenv("UROCE_CONFIG"));
	find_lib_dir(lib_dir);
	find_rdmacm_dir(lib_dir, cm_dir);
	/* libibverbs's folder first, then librdmacm's (when another) */
	if (strcmp(cm_dir, lib_dir) != 0)
		prepend_library_path(cm_dir);
	prepend_library_path(lib_dir);
	find_program(argv[optind], prog, sizeof(prog));
	execv(prog, &argv[optind]);
	die("%s: %s", prog, strerror(errno));
}
