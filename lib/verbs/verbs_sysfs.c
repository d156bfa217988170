/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The two historical sysfs helpers of IBVERBS_1.0 that tools still import
 * (ibv_devinfo reads a device's board_id through ibv_read_sysfs_file). Our
 * devices live in no sysfs: their paths exist nowhere (verbs_device.c), so
 * reads through them fail with ENOENT as for a file the kernel lacks.
 */

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "verbs_priv.h"

/* rdma-core also honours SYSFS_PATH; nothing of ours reads sysfs. */
const char *
ibv_get_sysfs_path(void)
{
	return "/sys";
}

/*
 * Read dir/file into buf as a string without its trailing newline.
 * Returns the length read (as rdma-core: the newline excluded), 0 for an
 * empty file, or -1 with errno set. Contents that fill buf entirely with
 * no newline to drop cannot be terminated: that is an error (EOVERFLOW).
 */
int
ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
		    size_t size)
{
	char path[IBV_SYSFS_PATH_MAX * 2];
	ssize_t len;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len <= 0)
		return (int)len;
	if (buf[len - 1] == '\n') {
		buf[--len] = '\0';
	} else if ((size_t)len < size) {
		buf[len] = '\0';
	} else {
		errno = EOVERFLOW;
		return -1;
	}
	return (int)len;
}
