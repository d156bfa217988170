/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_MEMGUARD_H
#define UROCE_MEMGUARD_H

/**
 * @file
 * Fault-safe access to registered memory.
 *
 * The engine reaches a region's memory with the CPU, through the process's
 * own page tables: nothing is pinned. Memory the application unmapped (or
 * made read-only) after registering it, and an on-demand paging region's
 * pages that are not mapped when a peer accesses them, would fault on the
 * engine's thread and kill the process. Every access of the data path to
 * a region's memory goes through these functions instead: a fault inside
 * one is caught and the access returns -EFAULT, which the caller turns
 * into a protection error on its QP (a NAK Remote Access Error at the
 * responder, IBV_WC_LOC_PROT_ERR for a local SGE), as a NIC reports a
 * translation it cannot make (IBTA 10.6.3, C10-11: an access outside what
 * the key maps is a protection violation).
 *
 * How. The thread arms a guard on its stack (sigsetjmp() without the
 * signal mask: no system call) naming the range of application memory it
 * is about to touch, and publishes it in one thread-local pointer. The
 * process's SIGSEGV and SIGBUS handler, installed once, jumps back to the
 * guard when the faulting thread has one armed and the fault address lies
 * in its range; any other fault goes to the handler that was there before
 * (the application's, a sanitizer's) or to the default action. A handler
 * the application installs later without chaining to the one it replaces
 * takes faults in guarded accesses too, and they kill the process as they
 * did before; the install is retried at every registration.
 *
 * Cost: one sigsetjmp() and two thread-local stores an access; nothing
 * more while no fault happens.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Install the handler for SIGSEGV and SIGBUS, once per process (later calls
 * check that it is still there and put it back, chaining what replaced it).
 * @return 0, or -errno of sigaction().
 */
int uroce_memguard_init(void);

/**
 * memcpy(dst, src, n), where user (dst or src) is the application's side:
 * 0, or -EFAULT when an address of [user, user + n) faulted (dst may then
 * be partly written).
 */
int uroce_memguard_copy(void *dst, const void *src, size_t n,
			const void *user);

/** Atomic compare-and-swap on application memory (8-byte aligned):
 *  *orig gets the value found. 0 or -EFAULT. */
int uroce_memguard_cas(uint64_t *p, uint64_t cmp, uint64_t swap,
		       uint64_t *orig);

/** Atomic fetch-and-add on application memory: 0 or -EFAULT. */
int uroce_memguard_fadd(uint64_t *p, uint64_t add, uint64_t *orig);

/** *crc = uroce_crc32_update(*crc, p, n) over application memory: 0 or
 *  -EFAULT (*crc unchanged). */
int uroce_memguard_crc(uint32_t *crc, const void *p, size_t n);

/**
 * Fault [p, p + n) in (ibv_advise_mr(3)'s prefetch), readable, or
 * writable without writing (MADV_POPULATE_READ / _WRITE, Linux 5.14):
 * 0, or -EFAULT when a page is not mapped, or not with that right.
 */
int uroce_memguard_populate(void *p, size_t n, bool write);

/** Faults caught in guarded accesses since the process started. */
uint64_t uroce_memguard_faults(void);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_MEMGUARD_H */
