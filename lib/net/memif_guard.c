/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * A memif peer that dies (SIGKILL, a crash) must not take us with it.
 *
 * The race, in DPDK 22.11's memif PMD: the control socket hangs up, and
 * memif_intr_handler() on the EAL interrupt thread runs memif_disconnect(),
 * which clears ETH_MEMIF_FLAG_CONNECTED, closes the queues' fds and then
 * memif_free_regions(): munmap() of each shared region (region 0, the
 * rings, first) and rte_free() of the region structs. Nothing waits for
 * the pollers: eth_memif_rx() and eth_memif_tx() test CONNECTED once, on
 * entry, and a poller past that test (an engine lcore, or an application
 * thread running the stack inline, preempted there on a small machine)
 * goes on reading and writing rings and buffers that are gone: SIGSEGV in
 * librte_net_memif.so. The PMD sends no link event on a disconnect.
 *
 * The guard, a grace period:
 *  - each thread that bursts on a memif port owns a slot whose sequence is
 *    odd while it is inside rte_eth_rx_burst()/rte_eth_tx_burst() on one
 *    (net_memif_enter()/net_memif_leave(), net_priv.h); other PMDs' ports
 *    skip it;
 *  - the munmap() that librte_net_memif.so calls goes through its own GOT
 *    slot, which memif_guard_install() points at guard_munmap(): that one
 *    waits until every slot that was odd has moved on, then unmaps. The
 *    PMD cleared CONNECTED before, so a burst that starts from then on
 *    returns at once without touching a region; and every burst that may
 *    have passed the test has left. The region structs are freed after
 *    the first munmap(), so they are safe too.
 *
 * Ordering: a poller stores its odd sequence and then loads the PMD's
 * flags; the interrupt thread stores the flags and then loads the
 * sequences. membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) between the
 * interrupt thread's store and load makes every running thread of the
 * process pass a full barrier, so the pollers need only a compiler
 * barrier; a kernel without it makes the pollers use a full fence.
 *
 * Only the PMD's own GOT slot is changed (found through dl_iterate_phdr()
 * and the library's dynamic relocations), not munmap() of the process.
 * Its other munmap() callers (a connect that failed half-way, dev_close
 * and dev_stop on any thread) wait the same way, for bursts that end on
 * their own; a thread's own slot is never waited on, and a thread that
 * exits gives its slot back (even: it is never inside a burst then).
 */

#include <errno.h>
#include <link.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>

#include "net_priv.h"

#define MEMIF_LIB	"librte_net_memif.so"
/* Threads that burst on memif ports at once; more share one counter. */
#define GUARD_SLOTS	128

#if defined(__x86_64__)
#define R_JUMP_SLOT	R_X86_64_JUMP_SLOT
#define R_GLOB_DAT	R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define R_JUMP_SLOT	R_AARCH64_JUMP_SLOT
#define R_GLOB_DAT	R_AARCH64_GLOB_DAT
#endif

struct net_memif_slot net_memif_slots[GUARD_SLOTS];
__thread struct net_memif_slot *net_memif_self;
bool net_memif_fence;

static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t slot_key;
static bool installed, tried;
static uint64_t unmap_waits;
static struct net_memif_slot overflow = { .shared = true };

/* ---------------------------------------------------------------------------
 * Slots.
 */

static void
slot_release(void *arg)
{
	struct net_memif_slot *s = arg;

	if (s != NULL && !s->shared)
		__atomic_store_n(&s->used, false, __ATOMIC_RELEASE);
}

struct net_memif_slot *
net_memif_slot_get(void)
{
	static bool warned;
	unsigned int i;

	for (i = 0; i < GUARD_SLOTS; i++) {
		bool free = false;

		if (__atomic_compare_exchange_n(&net_memif_slots[i].used, &free,
						true, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			net_memif_self = &net_memif_slots[i];
			pthread_setspecific(slot_key, net_memif_self);
			return net_memif_self;
		}
	}
	if (!__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED))
		NET_LOG(WARNING, "more than %u threads burst on memif ports: "
			"the rest share one guard counter\n", GUARD_SLOTS);
	net_memif_self = &overflow;
	return net_memif_self;
}

/* The overflow slot counts the bursts in flight (by 2: odd never). */
void
net_memif_shared_enter(struct net_memif_slot *s)
{
	__atomic_add_fetch(&s->seq, 2, __ATOMIC_SEQ_CST);
}

void
net_memif_shared_leave(struct net_memif_slot *s)
{
	__atomic_sub_fetch(&s->seq, 2, __ATOMIC_RELEASE);
}

/* ---------------------------------------------------------------------------
 * The wait.
 */

static void
barrier_all(void)
{
	if (net_memif_fence ||
	    syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void
pause_a_little(void)
{
	struct timespec ts = { .tv_nsec = 20 * 1000 };

	sched_yield();
	nanosleep(&ts, NULL);
}

/* An unmapping that waits, counted once, when it starts waiting. */
static void
waits_count(bool *counted)
{
	if (!*counted)
		__atomic_add_fetch(&unmap_waits, 1, __ATOMIC_RELAXED);
	*counted = true;
}

/* Until every burst on a memif port that was in flight has left. */
static void
bursts_wait(bool *counted)
{
	uint64_t snap[GUARD_SLOTS];
	const struct net_memif_slot *s;
	unsigned int i;

	barrier_all();
	for (i = 0; i < GUARD_SLOTS; i++) {
		s = &net_memif_slots[i];
		snap[i] = s == net_memif_self ||
			  !__atomic_load_n(&s->used, __ATOMIC_ACQUIRE) ? 0 :
			  __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	}
	for (i = 0; i < GUARD_SLOTS; i++) {
		s = &net_memif_slots[i];
		while ((snap[i] & 1) != 0 &&
		       __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) == snap[i]) {
			waits_count(counted);
			pause_a_little();
		}
	}
}

/* The overflow threads: until none is in a burst. Those that start one
 * now return at once (CONNECTED is clear). */
static void
shared_wait(bool *counted)
{
	if (net_memif_self == &overflow)
		return;		/* ours may be among them: not waited on */
	while (__atomic_load_n(&overflow.seq, __ATOMIC_ACQUIRE) != 0) {
		waits_count(counted);
		pause_a_little();
	}
}

static int
guard_munmap(void *addr, size_t len)
{
	bool waited = false;

	bursts_wait(&waited);
	shared_wait(&waited);
	if (waited)
		NET_LOG(DEBUG, "memif unmaps %p (%zu bytes) after the bursts "
			"in flight left\n", addr, len);
	return munmap(addr, len);
}

uint64_t
net_memif_unmap_waits(void)
{
	return __atomic_load_n(&unmap_waits, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------------
 * The hook: librte_net_memif.so's GOT slot for munmap.
 */

struct dyn {
	uintptr_t base;
	const ElfW(Sym) *symtab;
	const char *strtab;
	const ElfW(Rela) *rela[2];
	size_t relasz[2];
};

/* A dynamic entry's address: glibc relocates them in place (most
 * targets), others leave them relative to the load base. */
static uintptr_t
dyn_ptr(const struct dyn *d, ElfW(Addr) v)
{
	return v < d->base ? d->base + v : v;
}

static void
dyn_read(struct dyn *d, const ElfW(Dyn) *dyn)
{
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			d->symtab = (const void *)dyn_ptr(d, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			d->strtab = (const void *)dyn_ptr(d, dyn->d_un.d_ptr);
			break;
		case DT_JMPREL:
			d->rela[0] = (const void *)dyn_ptr(d, dyn->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			d->relasz[0] = dyn->d_un.d_val;
			break;
		case DT_RELA:
			d->rela[1] = (const void *)dyn_ptr(d, dyn->d_un.d_ptr);
			break;
		case DT_RELASZ:
			d->relasz[1] = dyn->d_un.d_val;
			break;
		default:
			break;
		}
	}
}

#ifdef R_JUMP_SLOT
/* The GOT slot of munmap among d's relocations, or NULL. */
static void **
munmap_slot(const struct dyn *d)
{
	const ElfW(Rela) *r;
	unsigned int k, t;
	size_t i;

	for (k = 0; k < 2; k++) {
		r = d->rela[k];
		for (i = 0; r != NULL && i < d->relasz[k] / sizeof(*r); i++) {
			t = ELF64_R_TYPE(r[i].r_info);
			if ((t == R_JUMP_SLOT || t == R_GLOB_DAT) &&
			    strcmp(d->strtab + d->symtab[ELF64_R_SYM(
				   r[i].r_info)].st_name, "munmap") == 0)
				return (void **)(d->base + r[i].r_offset);
		}
	}
	return NULL;
}
#endif

/* Point *slot at fn, its page made writable (hook() makes a RELRO page
 * read-only again). */
static int
slot_write(void **slot, void *fn)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *page = (void *)((uintptr_t)slot & ~((uintptr_t)pg - 1));

	if (mprotect(page, (size_t)pg, PROT_READ | PROT_WRITE) != 0)
		return -errno;
	__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	/* RELRO pages are read-only; a writable .got.plt (lazy binding) is
	 * in no RELRO segment, and read-only would break the resolver. */
	return 0;
}

struct find {
	void **slot;
	bool relro;		/* the slot is in the PT_GNU_RELRO segment */
	bool found;		/* the library is loaded */
};

static int
phdr_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;
	struct dyn d = { .base = info->dlpi_addr };
	const ElfW(Phdr) *ph = info->dlpi_phdr;
	uintptr_t lo, a;
	unsigned int i;

	RTE_SET_USED(size);
	if (info->dlpi_name == NULL || strstr(info->dlpi_name, MEMIF_LIB) == NULL)
		return 0;
	f->found = true;
	for (i = 0; i < info->dlpi_phnum; i++) {
		if (ph[i].p_type == PT_DYNAMIC)
			dyn_read(&d, (const void *)(d.base + ph[i].p_vaddr));
	}
#ifdef R_JUMP_SLOT
	if (d.symtab != NULL && d.strtab != NULL)
		f->slot = munmap_slot(&d);
#endif
	for (i = 0; f->slot != NULL && i < info->dlpi_phnum; i++) {
		lo = d.base + ph[i].p_vaddr;
		a = (uintptr_t)f->slot;
		if (ph[i].p_type == PT_GNU_RELRO && a >= lo &&
		    a < lo + ph[i].p_memsz)
			f->relro = true;
	}
	return 1;
}

static void
fence_mode(void)
{
	long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	net_memif_fence = cmds < 0 ||
		!(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) ||
		syscall(__NR_membarrier,
			MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0;
	if (net_memif_fence)
		NET_LOG(INFO, "no private expedited membarrier: memif bursts "
			"fence\n");
}

static int
hook(void)
{
	struct find f = { 0 };
	long pg = sysconf(_SC_PAGESIZE);
	int ret;

	dl_iterate_phdr(phdr_visit, &f);
	if (!f.found) {
		NET_LOG(DEBUG, "%s not loaded: no memif unmap guard\n", MEMIF_LIB);
		return -ENOENT;
	}
	if (f.slot == NULL) {
		NET_LOG(WARNING, "%s: no munmap relocation found: a memif peer "
			"that dies may crash this process\n", MEMIF_LIB);
		return -ENOENT;
	}
	ret = pthread_key_create(&slot_key, slot_release);
	if (ret != 0)
		return -ret;
	fence_mode();
	ret = slot_write(f.slot, (void *)guard_munmap);
	if (ret == 0 && f.relro &&
	    mprotect((void *)((uintptr_t)f.slot & ~((uintptr_t)pg - 1)),
		     (size_t)pg, PROT_READ) != 0)
		ret = -errno;
	if (ret != 0) {
		NET_LOG(WARNING, "%s: munmap hook: %s\n", MEMIF_LIB,
			strerror(-ret));
		return ret;
	}
	NET_LOG(DEBUG, "%s: munmap waits for memif bursts in flight\n",
		MEMIF_LIB);
	return 0;
}

bool
net_memif_guard_install(void)
{
	pthread_mutex_lock(&guard_lock);
	if (!tried) {
		tried = true;
		installed = hook() == 0;
	}
	pthread_mutex_unlock(&guard_lock);
	return installed;
}
