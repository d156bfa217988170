/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Whether malloc() hands back a recycled heap block zeroed in the
 * environment it runs in: check_iser.py runs it with the environment of
 * its iSER initiator tools, which must give zeroed blocks (why: the
 * INITIATOR_HEAP comment there).
 *
 * A block of libiscsi 1.19's struct iser_conn size is written with a
 * pattern and freed, with a live block after it so that it does not fall
 * back into the top of the heap; the next malloc() of that size takes it
 * from glibc's unsorted bin (its exact fit), or from ASan's allocator
 * with the block in quarantine. Every byte must read 0.
 *
 * Exit 0: zeroed; 1: not (the first byte that is not 0 printed).
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sizeof(struct iser_conn) in libiscsi 1.19 on x86-64; its last field,
 * the tx descriptor list head, at 4272. */
#define PROBE_SIZE 4280u

/* Keep the compiler from folding the pattern, the free and the read:
 * the read is of memory C calls indeterminate. */
static void
opaque(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

int
main(void)
{
	unsigned char *old = malloc(PROBE_SIZE);
	void *after = malloc(64);
	volatile unsigned char *blk;
	uintptr_t old_addr = (uintptr_t)old;
	size_t i;

	if (old == NULL || after == NULL) {
		fprintf(stderr, "heap_probe: out of memory\n");
		return 1;
	}
	memset(old, 0x5a, PROBE_SIZE);
	opaque(old);
	free(old);
	blk = malloc(PROBE_SIZE);
	if (blk == NULL) {
		fprintf(stderr, "heap_probe: out of memory\n");
		return 1;
	}
	opaque((void *)blk);
	for (i = 0; i < PROBE_SIZE; i++) {
		if (blk[i] != 0) {
			printf("heap_probe: byte %zu of a %u-byte block from "
			       "malloc() is %#x, not 0 (%s block)\n", i,
			       PROBE_SIZE, blk[i],
			       (uintptr_t)blk == old_addr ? "the freed" :
			       "another");
			return 1;
		}
	}
	printf("heap_probe: a %u-byte block from malloc() after a free "
	       "reads 0\n", PROBE_SIZE);
	free((void *)blk);
	free(after);
	return 0;
}
