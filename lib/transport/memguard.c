/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Fault-safe access to registered memory (uroce_memguard.h): a guard on the
 * accessing thread's stack, one thread-local pointer to it, and a SIGSEGV
 * and SIGBUS handler that jumps back to an armed guard whose range holds
 * the fault address and chains every other fault.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "uroce_wire.h"
#include "uroce_memguard.h"

/* An armed access: its return point and the application range
 * [lo, lo + len) whose faults it takes. */
struct guard {
	sigjmp_buf jb;
	uintptr_t lo;
	size_t len;
};

/*
 * The thread's armed guard, NULL when none. Initial-exec TLS: the handler
 * reads it with a plain load (no __tls_get_addr(), which is not
 * async-signal-safe), and it costs one word of the static TLS block.
 */
static __thread struct guard *cur_guard
	__attribute__((tls_model("initial-exec")));
/* Set while this thread runs a chained handler: a handler that chains
 * back to ours does not loop. */
static __thread int in_chain __attribute__((tls_model("initial-exec")));

static const int guard_sigs[] = { SIGSEGV, SIGBUS };
static struct sigaction prev_sa[2];	/* what each replaced */
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t fault_count;

/* x86-64: above this, an address is not canonical and a fault on it is a
 * general protection fault, reported with si_code SI_KERNEL and no
 * address (an implicit ODP region covers such addresses). */
#define USER_VA_TOP	UINT64_C(0x00007fffffffffff)

static bool
guard_takes(const struct guard *g, const siginfo_t *si)
{
	uintptr_t a = (uintptr_t)si->si_addr;

#ifdef __x86_64__
	if (si->si_code == SI_KERNEL)
		return (uint64_t)g->lo + (g->len - 1) > USER_VA_TOP;
#endif
	return si->si_code > 0 && a >= g->lo && a - g->lo < g->len;
}

/* The fault is not ours: what was installed before, else the default
 * action (restored; the faulting instruction runs again and the fault
 * ends the process as it would have without us). */
static void
chain(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *p = &prev_sa[sig == SIGBUS];
	struct sigaction dfl;

	if (!in_chain) {
		in_chain = 1;
		if ((p->sa_flags & SA_SIGINFO) && p->sa_sigaction != NULL) {
			p->sa_sigaction(sig, si, uc);
			in_chain = 0;
			return;
		}
		if (!(p->sa_flags & SA_SIGINFO) && p->sa_handler != SIG_DFL &&
		    p->sa_handler != SIG_IGN) {
			p->sa_handler(sig);
			in_chain = 0;
			return;
		}
		in_chain = 0;
	}
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	if (si->si_code <= 0)	/* sent, not a fault: it will not recur */
		raise(sig);
}

static void
on_fault(int sig, siginfo_t *si, void *uc)
{
	struct guard *g = cur_guard;
	sigset_t s;

	if (g == NULL || !guard_takes(g, si)) {
		chain(sig, si, uc);
		return;
	}
	cur_guard = NULL;
	__atomic_fetch_add(&fault_count, 1, __ATOMIC_RELAXED);
	/* The guard saved no mask (no system call an access); the kernel
	 * blocked sig for this handler, which siglongjmp() will not undo. */
	sigemptyset(&s);
	sigaddset(&s, sig);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	siglongjmp(g->jb, 1);
}

static bool
is_ours(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_fault;
}

int
uroce_memguard_init(void)
{
	struct sigaction sa, now;
	unsigned int i;
	int ret = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	pthread_mutex_lock(&install_lock);
	for (i = 0; i < 2 && ret == 0; i++) {
		if (sigaction(guard_sigs[i], NULL, &now) != 0)
			ret = -errno;
		else if (!is_ours(&now) &&
			 sigaction(guard_sigs[i], &sa, &prev_sa[i]) != 0)
			ret = -errno;
	}
	pthread_mutex_unlock(&install_lock);
	return ret;
}

uint64_t
uroce_memguard_faults(void)
{
	return __atomic_load_n(&fault_count, __ATOMIC_RELAXED);
}

/* Arm and disarm around the access; the fences keep the compiler from
 * moving the access outside. */
static inline void
arm(struct guard *g, const void *lo, size_t len)
{
	g->lo = (uintptr_t)lo;
	g->len = len;
	cur_guard = g;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void
disarm(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	cur_guard = NULL;
}

int
uroce_memguard_copy(void *dst, const void *src, size_t n, const void *user)
{
	struct guard g;

	if (n == 0)
		return 0;
	if (sigsetjmp(g.jb, 0) != 0)
		return -EFAULT;
	arm(&g, user, n);
	memcpy(dst, src, n);
	disarm();
	return 0;
}

int
uroce_memguard_cas(uint64_t *p, uint64_t cmp, uint64_t swap, uint64_t *orig)
{
	struct guard g;
	uint64_t v = cmp;

	if (sigsetjmp(g.jb, 0) != 0)
		return -EFAULT;
	arm(&g, p, sizeof(*p));
	__atomic_compare_exchange_n(p, &v, swap, false, __ATOMIC_SEQ_CST,
				    __ATOMIC_SEQ_CST);
	disarm();
	*orig = v;
	return 0;
}

int
uroce_memguard_fadd(uint64_t *p, uint64_t add, uint64_t *orig)
{
	struct guard g;
	uint64_t v;

	if (sigsetjmp(g.jb, 0) != 0)
		return -EFAULT;
	arm(&g, p, sizeof(*p));
	v = __atomic_fetch_add(p, add, __ATOMIC_SEQ_CST);
	disarm();
	*orig = v;
	return 0;
}

int
uroce_memguard_crc(uint32_t *crc, const void *p, size_t n)
{
	struct guard g;
	uint32_t c;

	if (n == 0)
		return 0;
	if (sigsetjmp(g.jb, 0) != 0)
		return -EFAULT;
	arm(&g, p, n);
	c = uroce_crc32_update(*crc, p, n);
	disarm();
	*crc = c;
	return 0;
}

int
uroce_memguard_populate(void *p, size_t n, bool write)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p & ~(pg - 1);
	uintptr_t end = ((uintptr_t)p + n + pg - 1) & ~(pg - 1);

	if (n == 0)
		return 0;
	if (end <= a)		/* the last page of the address space */
		return -EFAULT;
	/* ENOMEM: a hole; EFAULT: a page could not come in; EINVAL: a
	 * mapping without the right (or a kernel before 5.14). */
	if (madvise((void *)a, end - a, write ? MADV_POPULATE_WRITE :
		    MADV_POPULATE_READ) != 0)
		return -EFAULT;
	return 0;
}
