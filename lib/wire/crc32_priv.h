/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_CRC32_PRIV_H
#define UROCE_CRC32_PRIV_H

#include <stdint.h>

#include "uroce_crc32.h"

#ifdef __cplusplus
extern "C" {
#endif

/* x^n mod P with bit i the coefficient of x^i (not reflected). */
uint32_t uroce_crc32_xpow_mod(unsigned int n);

/* floor(x^64 / P), 33 bits, not reflected. */
uint64_t uroce_crc32_barrett_mu(void);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_CRC32_PRIV_H */
