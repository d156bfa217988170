/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_CM_PRIV_H
#define UROCE_CM_PRIV_H

/*
 * Internals of lib/cm: the field tables the MAD codec walks.
 *
 * Every CM message is a table of fields in the IBTA's Byte[Bit] notation
 * (vol. 1 Tables 106-120): byte offset from the end of the MAD header, bit
 * offset counted from the most significant bit of that byte, width in bits.
 * A field is read and written big-endian across byte boundaries.
 */

#include <stddef.h>
#include <stdint.h>

#include <rte_log.h>

#include "uroce_cm.h"

extern int uroce_cm_logtype;
#define CM_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, uroce_cm_logtype, "cm: " __VA_ARGS__)

struct cm_field {
	const char *name;
	uint16_t off;		/* byte offset in the MAD */
	uint8_t bit;		/* first bit, 0 = MSB of that byte */
	uint16_t width;		/* bits (a byte array: 8 x its length) */
	uint16_t mem;		/* offset of the member in the message struct */
	uint8_t size;		/* member size: 1, 2, 4, 8; 0 for a byte array */
	uint8_t lo, hi;		/* valid values lo..hi when hi != 0 */
};

struct cm_msg_desc {
	uint16_t attr;
	const char *name;
	const struct cm_field *fields;
	unsigned int nfields;
	uint16_t priv_mem;	/* offset of private_data in the struct */
	uint16_t priv_len;
};

/* The descriptor of a CM attribute, NULL if uroce does not handle it. */
const struct cm_msg_desc *cm_msg_desc(uint16_t attr);

/* Big-endian bit-field access at bit @pos of @p (width 1..64). */
uint64_t cm_bits_get(const uint8_t *p, unsigned int pos, unsigned int width);
void cm_bits_put(uint8_t *p, unsigned int pos, unsigned int width, uint64_t v);

#endif /* UROCE_CM_PRIV_H */
