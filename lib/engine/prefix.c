/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The EAL file prefix the engine picks when the configuration names none:
 * uroce-<pid>, so that any number of processes with the same configuration
 * run at once. DPDK keeps a runtime directory per prefix (/var/run/dpdk/
 * PREFIX/, with its config lock, memory maps and sockets) and may keep
 * hugepage files named PREFIXmap_<n>; with a prefix per process nobody
 * would reuse them, so the engine removes its own at a clean exit, and at
 * start those of uroce-<pid> prefixes whose process is gone (killed before
 * its exit handlers ran).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <rte_eal.h>

#include "engine_priv.h"

#define PREFIX_HEAD	"uroce-"

void
eng_prefix_make(char *buf, size_t len)
{
	snprintf(buf, len, PREFIX_HEAD "%d", (int)getpid());
}

/* The files directly in dir whose names start with head (all with ""),
 * and dir itself when rmdir_too. */
static void
prefix_unlink_in(const char *dir, const char *head, bool rmdir_too)
{
	char path[PATH_MAX];
	struct dirent *de;
	size_t n = strlen(head);
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strncmp(de->d_name, head, n) != 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) <
		    (int)sizeof(path) && unlink(path) != 0 && errno != ENOENT)
			ENG_LOG(DEBUG, "cannot remove %s: %s\n", path,
				strerror(errno));
	}
	closedir(d);
	if (rmdir_too && rmdir(dir) != 0 && errno != ENOENT)
		ENG_LOG(NOTICE, "cannot remove %s: %s\n", dir, strerror(errno));
}

/* PREFIXmap_<n> in every hugetlbfs mount (EAL's hugepage file names). */
static void
prefix_unlink_huge(const char *prefix)
{
	char head[UROCE_CONFIG_PREFIX_LEN + 8];
	struct mntent *m;
	FILE *f = setmntent("/proc/mounts", "r");

	if (f == NULL)
		return;
	snprintf(head, sizeof(head), "%smap_", prefix);
	while ((m = getmntent(f)) != NULL) {
		if (strcmp(m->mnt_type, "hugetlbfs") == 0)
			prefix_unlink_in(m->mnt_dir, head, false);
	}
	endmntent(f);
}

void
eng_prefix_remove(const char *prefix, const char *rundir)
{
	prefix_unlink_in(rundir, "", true);
	prefix_unlink_huge(prefix);
}

/* Whether a DPDK primary holds the lock on dir/config (EAL takes a write
 * lock on it for the life of the process). */
static bool
prefix_locked(const char *dir)
{
	struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char path[PATH_MAX];
	bool held;
	int fd;

	if (snprintf(path, sizeof(path), "%s/config", dir) >= (int)sizeof(path))
		return true;	/* cannot tell: leave it */
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return false;
	held = fcntl(fd, F_GETLK, &lk) != 0 || lk.l_type != F_UNLCK;
	close(fd);
	return held;
}

/* The uroce-<pid> leftovers beside our runtime dir whose process is gone. */
void
eng_prefix_sweep(const char *rundir)
{
	char parent[PATH_MAX], dir[PATH_MAX], *slash;
	struct dirent *de;
	char *end;
	long pid;
	DIR *d;

	snprintf(parent, sizeof(parent), "%s", rundir);
	slash = strrchr(parent, '/');
	if (slash == NULL)
		return;
	*slash = '\0';
	d = opendir(parent);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, PREFIX_HEAD, strlen(PREFIX_HEAD)) != 0)
			continue;
		errno = 0;
		pid = strtol(de->d_name + strlen(PREFIX_HEAD), &end, 10);
		if (errno != 0 || *end != '\0' || pid <= 0 || pid > INT_MAX ||
		    pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (snprintf(dir, sizeof(dir), "%s/%s", parent, de->d_name) >=
		    (int)sizeof(dir) || prefix_locked(dir))
			continue;
		ENG_LOG(DEBUG, "removing %s, left by a process that is gone\n",
			dir);
		eng_prefix_remove(de->d_name, dir);
	}
	closedir(d);
}
