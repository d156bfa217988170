/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_CRC32_H
#define UROCE_CRC32_H

/*
 * The individual CRC-32 implementations behind uroce_crc32_update(), for the
 * unit tests and the benchmark. All compute the same function.
 *
 * uroce_crc32_update_pclmul() may only be called when
 * uroce_crc32_has_pclmul() is true, uroce_crc32_update_vpclmul() only when
 * uroce_crc32_has_vpclmul() is true (otherwise: illegal instruction).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

uint32_t uroce_crc32_update_table(uint32_t crc, const void *buf, size_t len);
uint32_t uroce_crc32_update_pclmul(uint32_t crc, const void *buf, size_t len);
uint32_t uroce_crc32_update_vpclmul(uint32_t crc, const void *buf, size_t len);

/* uroce_crc32_update2() of each implementation, with the same rules. */
uint32_t uroce_crc32_update2_table(uint32_t crc, const void *a, size_t alen,
				   const void *b, size_t blen);
uint32_t uroce_crc32_update2_pclmul(uint32_t crc, const void *a, size_t alen,
				    const void *b, size_t blen);
uint32_t uroce_crc32_update2_vpclmul(uint32_t crc, const void *a, size_t alen,
				     const void *b, size_t blen);

bool uroce_crc32_has_pclmul(void);
bool uroce_crc32_has_vpclmul(void);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_CRC32_H */
