/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_H
#define UROCE_H

/**
 * @file
 * uroce's public native API: what an application uses besides the verbs.
 * The configuration, start/poll and statistics entry points join it with the
 * transport; for now it carries the version.
 */

/* UROCE_VERSION: the version string, e.g. "0.1.0", from the build. */
#include <uroce/uroce_version.h>

#endif /* UROCE_H */
