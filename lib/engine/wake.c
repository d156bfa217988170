/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Waking and waiting without a timer's granularity, for control messages
 * (ctrl.c). Both sides of a control message may be asleep: the owner lcore
 * in its idle back-off (lcore.c), the caller until the answer comes. A
 * timed sleep costs its whole length plus the timer slack (50 us by default
 * on an application's thread), twice a message; a futex(2) wait ends when
 * the other side says so, and leaves the CPU to it meanwhile, which on a
 * machine with fewer cores than threads is what lets it run at all.
 *
 * The owner's sleep: lc->asleep is 1 while the lcore sleeps or is about to.
 * The lcore stores it, then looks at its control ring; a caller enqueues,
 * then looks at lc->asleep (a full fence on both sides between the store
 * and the load): at least one of them sees the other, so a message is
 * never left waiting for the whole sleep. The caller takes the flag back
 * to 0 before the wake, and a futex wait on a word no longer 1 returns at
 * once.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine_priv.h"

/* Wait while *w is @val, at most @ns (0: no limit); early and spurious
 * returns are the caller's to sort out (it looks at *w again). */
void
eng_futex_wait(uint32_t *w, uint32_t val, uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000),
		.tv_nsec = (long)(ns % 1000000000),
	};

	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, ns != 0 ? &ts : NULL,
		NULL, 0);
}

/* Wake the waiter of *w. Only the address is used: the word may already
 * be gone (a caller's stack), which at worst wakes another waiter there
 * spuriously, and every futex waiter checks its word again. */
void
eng_futex_wake(uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Owner: sleep at most @ns, or until a control message comes. */
void
eng_lcore_sleep(struct eng_lcore *lc, uint64_t ns)
{
	__atomic_store_n(&lc->asleep, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (rte_ring_count(lc->ctrl) == 0)
		eng_futex_wait(&lc->asleep, 1, ns);
	__atomic_store_n(&lc->asleep, 0, __ATOMIC_RELAXED);
}

/* Caller, after its enqueue: wake the owner if it sleeps. */
void
eng_lcore_wake(struct eng_lcore *lc)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&lc->asleep, __ATOMIC_RELAXED) != 0 &&
	    __atomic_exchange_n(&lc->asleep, 0, __ATOMIC_ACQ_REL) != 0)
		eng_futex_wake(&lc->asleep);
}
