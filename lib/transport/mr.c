/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * The memory region table: slots indexed by the upper 24 bits of a key,
 * a FIFO free list, and lock-free checks for the engines.
 *
 * Publishing. A slot's key word is 0 while the slot is free and the live
 * key while registered. reg writes the fields, then stores the key with
 * RELEASE; dereg stores 0 first. A check loads the key (ACQUIRE), loads the
 * fields (ACQUIRE each), then loads the key again: if a reg or dereg ran in
 * between, the second load cannot still see the old key (a field store that
 * the check observed was ordered after the key change by its RELEASE), so
 * the check fails instead of mixing two registrations. Fields are written
 * with RELEASE stores for that reason.
 *
 * Windows (uroce_mr.h) are slots of the same table: their kind byte and,
 * for type 2, their QP are fields like the others, so a check of an MR's
 * key pays one more load in the slot it already reads. Every change to the
 * table takes the writer lock, since binds and invalidations come from
 * engine lcores.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_spinlock.h>

#include "uroce_memguard.h"
#include "uroce_mr.h"
#include "transport_priv.h"

#define KEY_BYTE_MASK	((UINT32_C(1) << UROCE_MR_KEY_SHIFT) - 1)
#define PAGE_OFF(x)	((uint64_t)(x) & (UROCE_MR_PAGE_SIZE - 1))
/* Atomic operands are 8 bytes at an 8-byte aligned va (IBTA 9.4.5). */
#define ATOMIC_ALIGN	8u

/* What a slot holds; readers load it with ACQUIRE. */
enum slot_kind {
	SLOT_FREE,
	SLOT_MR,
	SLOT_MW1,	/* type 1 window */
	SLOT_MW2,	/* type 2 window, bound to one QP (type 2B) */
};

/* What a check reads: one cache line a slot (the array is aligned). */
struct mr_slot {
	struct uroce_mr mr;	/* fields readers load with ACQUIRE */
	const void *qp;		/* type 2 window: its QP (readers ACQUIRE) */
	uint32_t key;		/* live key or 0; the publish word */
	uint8_t kind;		/* enum slot_kind (readers ACQUIRE) */
	uint8_t key_byte;	/* last key byte handed out (writer only) */
} __attribute__((aligned(64)));

/* The writer's bookkeeping of a slot, apart from what checks read. */
struct slot_wr {
	uint32_t next_free;	/* free list link, 0 = end */
	uint32_t mr_idx;	/* window: the MR it is bound to, 0 none */
	uint32_t mw_bound;	/* MR: windows bound to it */
};

struct uroce_mr_table {
	rte_spinlock_t lock;	/* every change: reg, dereg, windows */
	uint32_t max_mr;
	uint32_t count;
	uint32_t mw_bound;	/* bound windows */
	uint32_t mw2_bound;	/* of them type 2 (uroce_mw_unbind_qp()) */
	uint32_t free_head;	/* oldest freed slot, 0 = none */
	uint32_t free_tail;	/* newest freed slot */
	uint8_t stride;		/* odd: key bytes take all 256 values */
	struct mr_slot *slot;	/* max_mr + 1 slots, slot 0 unused */
	void *slot_mem;		/* what slot was carved from */
	struct slot_wr *wr;	/* max_mr + 1, the writer's */
};

/* splitmix64: spreads one seed over every slot's first key byte. */
static uint64_t
seed_mix(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/* A slot to the tail of the free list: FIFO, so that a freed index is
 * reused as late as possible and a stale key needs 256 reuses of one index
 * (every free slot's worth each time) before its key byte comes back.
 */
static void
free_push(struct uroce_mr_table *tbl, uint32_t idx)
{
	tbl->wr[idx].next_free = 0;
	if (tbl->free_head == 0)
		tbl->free_head = idx;
	else
		tbl->wr[tbl->free_tail].next_free = idx;
	tbl->free_tail = idx;
}

static uint32_t
free_pop(struct uroce_mr_table *tbl)
{
	uint32_t idx = tbl->free_head;

	if (idx != 0)
		tbl->free_head = tbl->wr[idx].next_free;
	return idx;
}

int
uroce_mr_table_create(uint32_t max_mr, uint64_t seed,
		      struct uroce_mr_table **out)
{
	struct uroce_mr_table *tbl;
	uint32_t i;

	if (max_mr == 0 || max_mr > UROCE_MR_MAX)
		return -EINVAL;
	/* Accesses to the regions' memory are fault-safe from now on. */
	if (uroce_memguard_init() != 0)
		rte_log(RTE_LOG_WARNING, uroce_transport_logtype, "mr: no "
			"SIGSEGV/SIGBUS handler: memory unmapped after its "
			"registration is fatal\n");
	tbl = calloc(1, sizeof(*tbl));
	if (tbl == NULL)
		return -ENOMEM;
	/* calloc (lazily zeroed pages for a large table), aligned by hand
	 * so that a slot is one cache line. */
	tbl->slot_mem = calloc((size_t)max_mr + 2, sizeof(*tbl->slot));
	tbl->wr = calloc((size_t)max_mr + 1, sizeof(*tbl->wr));
	if (tbl->slot_mem == NULL || tbl->wr == NULL) {
		free(tbl->slot_mem);
		free(tbl->wr);
		free(tbl);
		return -ENOMEM;
	}
	tbl->slot = (struct mr_slot *)RTE_PTR_ALIGN_CEIL(tbl->slot_mem,
							 sizeof(*tbl->slot));
	rte_spinlock_init(&tbl->lock);
	tbl->max_mr = max_mr;
	tbl->stride = (uint8_t)(seed_mix(seed) | 1);
	for (i = 1; i <= max_mr; i++) {
		tbl->slot[i].key_byte = (uint8_t)seed_mix(seed ^ i);
		free_push(tbl, i);
	}
	*out = tbl;
	return 0;
}

void
uroce_mr_table_free(struct uroce_mr_table *tbl)
{
	if (tbl == NULL)
		return;
	free(tbl->slot_mem);
	free(tbl->wr);
	free(tbl);
}

uint32_t
uroce_mr_table_count(const struct uroce_mr_table *tbl)
{
	return tbl->count;
}

/* ---------------------------------------------------------------------------
 * Registration.
 */

/* Log why a registration is refused and return err. */
static int __rte_format_printf(2, 3)
reg_reject(int err, const char *fmt, ...)
{
	char buf[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	rte_log(RTE_LOG_DEBUG, uroce_transport_logtype, "reg_mr: %s\n", buf);
	return err;
}

/* Access flags per ibv_reg_mr(3); the order of the checks is the Linux
 * core's, so that a request with several faults fails the same way.
 */
static int
check_reg_access(unsigned int access)
{
	const unsigned int known = UROCE_MR_ACCESS_SUPPORTED |
		UROCE_MR_ACCESS_UNSUPPORTED | IBV_ACCESS_OPTIONAL_RANGE;
	const unsigned int needs_lw = IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_ATOMIC;

	if (access & ~known)
		return reg_reject(-EINVAL, "unknown access bits 0x%x",
				  access & ~known);
	if ((access & needs_lw) && !(access & IBV_ACCESS_LOCAL_WRITE))
		return reg_reject(-EINVAL, "remote write/atomic access 0x%x "
				  "without local write", access);
	return 0;
}

/* The range checks of pinning, done without pinning anything. */
static int
check_reg_range(const void *addr, size_t len, uint64_t iova)
{
	uintptr_t a = (uintptr_t)addr;

	if (len == 0)
		return reg_reject(-EINVAL, "length 0");
	if (len - 1 > UINTPTR_MAX - a)
		return reg_reject(-EINVAL, "addr %p + length %zu wraps", addr,
				  len);
	if ((uint64_t)len - 1 > UINT64_MAX - iova)
		return reg_reject(-EINVAL, "iova 0x%" PRIx64 " + length %zu "
				  "wraps", iova, len);
	if (PAGE_OFF(a) != PAGE_OFF(iova))
		return reg_reject(-EINVAL, "addr %p and iova 0x%" PRIx64
				  " at different page offsets", addr, iova);
	if (addr == NULL)
		return reg_reject(-EFAULT, "addr NULL");
	return 0;
}

/* An implicit on-demand region (uroce_mr.h), or its near misses: mlx5
 * refuses a whole-space registration at another iova with EINVAL. */
static int
check_reg_implicit(const void *addr, size_t len, uint64_t iova,
		   unsigned int access)
{
	if (addr != NULL || len != SIZE_MAX || !(access & IBV_ACCESS_ON_DEMAND))
		return 1;
	if (iova != 0)
		return reg_reject(-EINVAL, "implicit on-demand region at iova "
				  "0x%" PRIx64, iova);
	return 0;
}

/*
 * The memory must be there, as the Linux core's pinning requires: every
 * page of [addr, addr + len) mapped, and writable when the region may be
 * written (local write, remote write or atomic; the pages a write pins),
 * else readable; -EFAULT otherwise. An engine lcore that later copied into
 * a hole or a read-only page would take the whole process down (SIGSEGV).
 *
 * /proc/self/maps answers both in one pass over the process's mappings,
 * in address order: the cost grows with the number of mappings, not with
 * the region's length, so a 1 GiB region costs what a 4 KiB one does.
 * This checks the registration only: nothing is pinned, and memory the
 * application unmaps later is not caught here.
 */
static int
maps_cover(FILE *f, uintptr_t a, uintptr_t last, bool write)
{
	char *line = NULL;
	size_t cap = 0;
	int ret = -EFAULT;

	while (getline(&line, &cap, f) > 0) {
		unsigned long lo, hi;
		char perm[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perm) != 3 || hi <= a)
			continue;
		/* A hole before a, or a mapping without the right asked. */
		if (lo > a || (write ? perm[1] != 'w' : perm[0] != 'r'))
			break;
		if (hi - 1 >= last) {
			ret = 0;
			break;
		}
		a = hi;
	}
	free(line);
	return ret;
}

/* Without /proc: mincore() fails with ENOMEM on an unmapped page, one
 * call per 64 MiB; read-only mappings pass unnoticed. */
static int
mincore_cover(uintptr_t a, uintptr_t last)
{
	enum { CHUNK_PAGES = 16384 };
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	unsigned char *vec = malloc(CHUNK_PAGES);
	uintptr_t p = a & ~(pg - 1);
	int ret = 0;

	if (vec == NULL)
		return -ENOMEM;
	for (;;) {
		uintptr_t pages = (last - p) / pg + 1;
		size_t n = pages > CHUNK_PAGES ? CHUNK_PAGES : (size_t)pages;

		if (mincore((void *)p, n * pg, vec) != 0) {
			ret = errno == ENOMEM ? -EFAULT : -errno;
			break;
		}
		if (n == pages)
			break;
		p += n * pg;
	}
	free(vec);
	return ret;
}

static int
check_reg_mapped(void *addr, size_t len, unsigned int access)
{
	const unsigned int writes = IBV_ACCESS_LOCAL_WRITE |
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
	uintptr_t a = (uintptr_t)addr, last = a + (len - 1);
	bool write = (access & writes) != 0;
	FILE *f = fopen("/proc/self/maps", "re");
	int ret;

	if (f != NULL) {
		ret = maps_cover(f, a, last, write);
		fclose(f);
	} else {
		ret = mincore_cover(a, last);
	}
	if (ret == -EFAULT)
		return reg_reject(ret, "[%p, +%zu) not all mapped%s", addr, len,
				  write ? " and writable" : "");
	return ret;
}

/* The next key for slot idx; never the slot's previous one. */
static uint32_t
next_key(struct uroce_mr_table *tbl, uint32_t idx)
{
	struct mr_slot *s = &tbl->slot[idx];

	s->key_byte = (uint8_t)(s->key_byte + tbl->stride);
	return (idx << UROCE_MR_KEY_SHIFT) | s->key_byte;
}

/* Every check of a registration, in the Linux core's order. */
static int
check_reg(void *addr, size_t len, uint64_t iova, unsigned int access)
{
	int ret;

	ret = check_reg_access(access);
	if (ret == 0)
		ret = check_reg_implicit(addr, len, iova, access);
	if (ret == 1)
		ret = check_reg_range(addr, len, iova);
	if (ret != 0)
		return ret;
	if (access & UROCE_MR_ACCESS_UNSUPPORTED)
		return reg_reject(-EOPNOTSUPP, "access 0x%x not supported "
				  "(zero-based)",
				  access & UROCE_MR_ACCESS_UNSUPPORTED);
	/* On demand: pages come when accessed, none needs to be there. */
	if (access & IBV_ACCESS_ON_DEMAND)
		return 0;
	return check_reg_mapped(addr, len, access);
}

/* A region's fields, each a RELEASE store before the key that publishes
 * them (see the top of this file). */
static void
slot_set_region(struct mr_slot *s, const void *pd, void *addr, size_t len,
		uint64_t iova, unsigned int access)
{
	__atomic_store_n(&s->mr.addr, addr, __ATOMIC_RELEASE);
	__atomic_store_n(&s->mr.length, len, __ATOMIC_RELEASE);
	__atomic_store_n(&s->mr.iova, iova, __ATOMIC_RELEASE);
	__atomic_store_n(&s->mr.access, access, __ATOMIC_RELEASE);
	__atomic_store_n(&s->mr.pd, pd, __ATOMIC_RELEASE);
}

int
uroce_mr_reg(struct uroce_mr_table *tbl, const void *pd, void *addr,
	     size_t len, uint64_t iova, unsigned int access,
	     struct uroce_mr **out)
{
	struct mr_slot *s;
	uint32_t idx, key;
	int ret;

	ret = check_reg(addr, len, iova, access);
	if (ret != 0)
		return ret;
	/* A handler the application installed since is chained, ours put
	 * back (uroce_memguard.h). */
	uroce_memguard_init();
	rte_spinlock_lock(&tbl->lock);
	idx = free_pop(tbl);
	if (idx == 0) {
		rte_spinlock_unlock(&tbl->lock);
		return reg_reject(-ENOMEM, "all %u regions in use",
				  tbl->max_mr);
	}

	s = &tbl->slot[idx];
	key = next_key(tbl, idx);
	tbl->wr[idx].mw_bound = 0;
	__atomic_store_n(&s->kind, SLOT_MR, __ATOMIC_RELEASE);
	__atomic_store_n(&s->qp, NULL, __ATOMIC_RELEASE);
	slot_set_region(s, pd, addr, len, iova, access);
	__atomic_store_n(&s->mr.lkey, key, __ATOMIC_RELEASE);
	__atomic_store_n(&s->mr.rkey, key, __ATOMIC_RELEASE);
	__atomic_store_n(&s->key, key, __ATOMIC_RELEASE);
	tbl->count++;
	rte_spinlock_unlock(&tbl->lock);
	*out = &s->mr;
	return 0;
}

int
uroce_mr_dereg(struct uroce_mr_table *tbl, struct uroce_mr *mr)
{
	uint32_t idx = mr->lkey >> UROCE_MR_KEY_SHIFT;
	struct mr_slot *s;

	if (idx == 0 || idx > tbl->max_mr)
		return -EINVAL;
	s = &tbl->slot[idx];
	rte_spinlock_lock(&tbl->lock);
	if (&s->mr != mr || s->kind != SLOT_MR || s->key == 0 ||
	    s->key != mr->lkey) {
		rte_spinlock_unlock(&tbl->lock);
		return -EINVAL;
	}
	if (tbl->wr[idx].mw_bound != 0) {
		rte_spinlock_unlock(&tbl->lock);
		return -EBUSY;
	}
	/* Unpublish first; the RELEASE field stores of the next reg of this
	 * slot keep this store ahead of them.
	 */
	__atomic_store_n(&s->key, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->kind, SLOT_FREE, __ATOMIC_RELAXED);
	free_push(tbl, idx);
	tbl->count--;
	rte_spinlock_unlock(&tbl->lock);
	return 0;
}

int
uroce_mr_rereg_begin(struct uroce_mr_table *tbl, struct uroce_mr *mr,
		     void *addr, size_t len, uint64_t iova,
		     unsigned int access)
{
	uint32_t idx = mr->lkey >> UROCE_MR_KEY_SHIFT;
	struct mr_slot *s;
	int ret;

	ret = check_reg(addr, len, iova, access);
	if (ret != 0)
		return ret;
	if (idx == 0 || idx > tbl->max_mr)
		return -EINVAL;
	s = &tbl->slot[idx];
	rte_spinlock_lock(&tbl->lock);
	if (&s->mr != mr || s->kind != SLOT_MR || s->key == 0 ||
	    s->key != mr->lkey)
		ret = -EINVAL;
	else if (tbl->wr[idx].mw_bound != 0)
		ret = -EBUSY;	/* windows lean on the old fields */
	else
		__atomic_store_n(&s->key, 0, __ATOMIC_RELAXED);
	rte_spinlock_unlock(&tbl->lock);
	return ret;
}

void
uroce_mr_rereg_end(struct uroce_mr_table *tbl, struct uroce_mr *mr,
		   const void *pd, void *addr, size_t len, uint64_t iova,
		   unsigned int access)
{
	struct mr_slot *s = &tbl->slot[mr->lkey >> UROCE_MR_KEY_SHIFT];

	rte_spinlock_lock(&tbl->lock);
	slot_set_region(s, pd, addr, len, iova, access);
	__atomic_store_n(&s->key, mr->lkey, __ATOMIC_RELEASE);
	rte_spinlock_unlock(&tbl->lock);
}

/* ---------------------------------------------------------------------------
 * Checks: engine lcores, any number at once, no lock.
 */

/* The fields a check needs, read as one registration. */
struct mr_view {
	uintptr_t addr;
	uint64_t length;
	uint64_t iova;
	unsigned int access;
	const void *pd;
	const void *qp;
	uint8_t kind;
};

static int
mr_lookup(const struct uroce_mr_table *tbl, uint32_t key, struct mr_view *v)
{
	uint32_t idx = key >> UROCE_MR_KEY_SHIFT;
	const struct mr_slot *s;

	if (idx == 0 || idx > tbl->max_mr)
		return -UROCE_MR_EKEY;
	s = &tbl->slot[idx];
	if (__atomic_load_n(&s->key, __ATOMIC_ACQUIRE) != key)
		return -UROCE_MR_EKEY;
	v->addr = (uintptr_t)__atomic_load_n(&s->mr.addr, __ATOMIC_ACQUIRE);
	v->length = __atomic_load_n(&s->mr.length, __ATOMIC_ACQUIRE);
	v->iova = __atomic_load_n(&s->mr.iova, __ATOMIC_ACQUIRE);
	v->access = __atomic_load_n(&s->mr.access, __ATOMIC_ACQUIRE);
	v->pd = __atomic_load_n(&s->mr.pd, __ATOMIC_ACQUIRE);
	v->kind = __atomic_load_n(&s->kind, __ATOMIC_ACQUIRE);
	v->qp = v->kind == SLOT_MW2 ?
		__atomic_load_n(&s->qp, __ATOMIC_ACQUIRE) : NULL;
	/* Still the same registration? (see the top of this file) */
	if (__atomic_load_n(&s->key, __ATOMIC_RELAXED) != key)
		return -UROCE_MR_EKEY;
	return 0;
}

/* [va, va + len) inside [iova, iova + length), in offsets: no sum that
 * could wrap (va = UINT64_MAX - 1, len 4 must not pass as a short range).
 */
static int
mr_bounds(const struct mr_view *v, uint64_t va, uint64_t len, void **host)
{
	uint64_t off;

	if (va < v->iova)
		return -UROCE_MR_ERANGE;
	off = va - v->iova;
	if (off > v->length || len > v->length - off)
		return -UROCE_MR_ERANGE;
	*host = (void *)(v->addr + (uintptr_t)off);
	return 0;
}

/* Key, then protection domain (PD isolation), then rights; the caller
 * checks the range last. The most basic fault is the one reported.
 */
static int
mr_check(const struct uroce_mr_table *tbl, const void *pd, uint32_t key,
	 unsigned int need, struct mr_view *v)
{
	int ret = mr_lookup(tbl, key, v);

	if (ret != 0)
		return ret;
	if (v->pd != pd)
		return -UROCE_MR_EPD;
	if ((v->access & need) != need)
		return -UROCE_MR_EACCES;
	return 0;
}

int
uroce_mr_check_local(const struct uroce_mr_table *tbl, const void *pd,
		     uint32_t lkey, uint64_t va, uint64_t len,
		     unsigned int need_access, void **host)
{
	struct mr_view v;
	int ret;

	*host = NULL;
	if (len == 0)
		return 0;
	/* Local read is always allowed: only LOCAL_WRITE is a right here. */
	ret = mr_check(tbl, pd, lkey, need_access & IBV_ACCESS_LOCAL_WRITE, &v);
	if (ret != 0)
		return ret;
	if (v.kind != SLOT_MR)
		return -UROCE_MR_EKEY;	/* a window has no L_Key */
	return mr_bounds(&v, va, len, host);
}

int
uroce_mr_check_remote(const struct uroce_mr_table *tbl, const void *pd,
		      uint32_t rkey, uint64_t va, uint64_t len,
		      unsigned int need_access, void **host)
{
	return uroce_mr_check_remote_qp(tbl, pd, NULL, rkey, va, len,
					need_access, host);
}

int
uroce_mr_check_remote_qp(const struct uroce_mr_table *tbl, const void *pd,
			 const void *qp, uint32_t rkey, uint64_t va,
			 uint64_t len, unsigned int need_access, void **host)
{
	const unsigned int remote = IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
	bool atomic = need_access & IBV_ACCESS_REMOTE_ATOMIC;
	struct mr_view v;
	int ret;

	*host = NULL;
	/* C9-88: a zero-length RDMA READ/WRITE's R_Key and VA are not
	 * validated. An atomic always moves 8 bytes; len 0 there is the
	 * caller's bug, so it gets the full check.
	 */
	if (len == 0 && !atomic)
		return 0;
	ret = mr_check(tbl, pd, rkey, need_access & remote, &v);
	if (ret != 0)
		return ret;
	/* A type 2B window answers only the QP it is bound to (IBTA
	 * 10.6.7.2.4): a remote access error from any other. */
	if (v.kind == SLOT_MW2 && (qp == NULL || v.qp != qp))
		return -UROCE_MR_EACCES;
	ret = mr_bounds(&v, va, len, host);
	if (ret == 0 && atomic && (va & (ATOMIC_ALIGN - 1)) != 0) {
		*host = NULL;
		ret = -UROCE_MR_EALIGN;
	}
	return ret;
}

int
uroce_mr_check_advise(const struct uroce_mr_table *tbl, const void *pd,
		      uint32_t lkey, uint64_t va, uint64_t len, bool write,
		      void **host)
{
	struct mr_view v;

	*host = NULL;
	if (mr_lookup(tbl, lkey, &v) != 0 || v.kind != SLOT_MR ||
	    !(v.access & IBV_ACCESS_ON_DEMAND))
		return -ENOENT;
	if (v.pd != pd || (write && !(v.access & IBV_ACCESS_LOCAL_WRITE)))
		return -EPERM;
	return mr_bounds(&v, va, len, host) == 0 ? 0 : -EFAULT;
}

enum ibv_wc_status
uroce_mr_wc_status(int err, bool remote)
{
	if (err == 0)
		return IBV_WC_SUCCESS;
	if (!remote)
		return IBV_WC_LOC_PROT_ERR;
	if (err == -UROCE_MR_EALIGN)
		return IBV_WC_REM_INV_REQ_ERR;
	return IBV_WC_REM_ACCESS_ERR;
}

/* ---------------------------------------------------------------------------
 * Memory windows (IBTA 10.6.7). Every function here holds the lock.
 */

static bool
is_window(uint8_t kind)
{
	return kind == SLOT_MW1 || kind == SLOT_MW2;
}

/* The allocated window whose index key carries, or NULL. */
static struct mr_slot *
window_of(struct uroce_mr_table *tbl, uint32_t key)
{
	uint32_t idx = key >> UROCE_MR_KEY_SHIFT;

	if (idx == 0 || idx > tbl->max_mr || !is_window(tbl->slot[idx].kind))
		return NULL;
	return &tbl->slot[idx];
}

/* Unpublish a bound window; the MR it was bound to may go again. */
static void
window_unbind(struct uroce_mr_table *tbl, struct mr_slot *w)
{
	struct slot_wr *ww = &tbl->wr[w - tbl->slot];

	if (ww->mr_idx == 0)
		return;
	__atomic_store_n(&w->key, 0, __ATOMIC_RELAXED);
	tbl->wr[ww->mr_idx].mw_bound--;
	ww->mr_idx = 0;
	tbl->mw_bound--;
	if (w->kind == SLOT_MW2)
		tbl->mw2_bound--;
}

int
uroce_mw_alloc(struct uroce_mr_table *tbl, const void *pd,
	       enum ibv_mw_type type, uint32_t *rkey)
{
	struct mr_slot *s;
	uint32_t idx;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)
		return -EINVAL;
	rte_spinlock_lock(&tbl->lock);
	idx = free_pop(tbl);
	if (idx == 0) {
		rte_spinlock_unlock(&tbl->lock);
		return -ENOMEM;
	}
	s = &tbl->slot[idx];
	tbl->wr[idx].mr_idx = 0;
	tbl->wr[idx].mw_bound = 0;
	__atomic_store_n(&s->mr.pd, pd, __ATOMIC_RELEASE);
	__atomic_store_n(&s->kind, type == IBV_MW_TYPE_1 ? SLOT_MW1 : SLOT_MW2,
			 __ATOMIC_RELEASE);
	*rkey = next_key(tbl, idx);
	s->mr.rkey = *rkey;
	tbl->count++;
	rte_spinlock_unlock(&tbl->lock);
	return 0;
}

int
uroce_mw_dealloc(struct uroce_mr_table *tbl, uint32_t rkey)
{
	struct mr_slot *w;

	rte_spinlock_lock(&tbl->lock);
	w = window_of(tbl, rkey);
	if (w == NULL) {
		rte_spinlock_unlock(&tbl->lock);
		return -EINVAL;
	}
	window_unbind(tbl, w);
	__atomic_store_n(&w->kind, SLOT_FREE, __ATOMIC_RELAXED);
	free_push(tbl, rkey >> UROCE_MR_KEY_SHIFT);
	tbl->count--;
	rte_spinlock_unlock(&tbl->lock);
	return 0;
}

/* The MR side of a bind (IBTA 10.6.7.2, ibv_bind_mw(3)): a live MR of the
 * window's PD, registered with IBV_ACCESS_MW_BIND, with local write when
 * the window grants remote write or atomics, covering the window's range.
 * v->addr becomes the host address of the window's first byte. */
static int
bind_check_mr(struct uroce_mr_table *tbl, const struct uroce_mw_bind *b,
	      const void *pd, struct mr_view *v)
{
	const unsigned int lw_needed = IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_ATOMIC;
	void *host;
	int ret;

	ret = mr_lookup(tbl, b->mr_lkey, v);
	if (ret == 0 && v->kind != SLOT_MR)
		ret = -UROCE_MR_EKEY;
	if (ret != 0)
		return ret;
	if (v->pd != pd)
		return -UROCE_MR_EPD;
	if (!(v->access & IBV_ACCESS_MW_BIND) ||
	    ((b->access & lw_needed) && !(v->access & IBV_ACCESS_LOCAL_WRITE)))
		return -UROCE_MR_EACCES;
	ret = mr_bounds(v, b->addr, b->length, &host);
	if (ret != 0)
		return ret;
	v->addr = (uintptr_t)host;
	return 0;
}

/* Publish w as the bound window v describes, under key. */
static void
window_publish(struct uroce_mr_table *tbl, struct mr_slot *w,
	       const struct uroce_mw_bind *b, uint32_t mr_idx, uintptr_t host)
{
	__atomic_store_n(&w->mr.addr, (void *)host, __ATOMIC_RELEASE);
	__atomic_store_n(&w->mr.length, (size_t)b->length, __ATOMIC_RELEASE);
	__atomic_store_n(&w->mr.iova, b->addr, __ATOMIC_RELEASE);
	__atomic_store_n(&w->mr.access, b->access & ~IBV_ACCESS_LOCAL_WRITE,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&w->qp, w->kind == SLOT_MW2 ? b->qp : NULL,
			 __ATOMIC_RELEASE);
	w->mr.rkey = b->new_key;
	w->key_byte = (uint8_t)b->new_key;
	tbl->wr[w - tbl->slot].mr_idx = mr_idx;
	tbl->wr[mr_idx].mw_bound++;
	tbl->mw_bound++;
	if (w->kind == SLOT_MW2)
		tbl->mw2_bound++;
	__atomic_store_n(&w->key, b->new_key, __ATOMIC_RELEASE);
}

static int
mw_bind_locked(struct uroce_mr_table *tbl, const struct uroce_mw_bind *b)
{
	struct mr_slot *w = window_of(tbl, b->mw_key);
	struct mr_view v;
	int ret;

	if (w == NULL || (b->new_key >> UROCE_MR_KEY_SHIFT) !=
			 (b->mw_key >> UROCE_MR_KEY_SHIFT))
		return -EINVAL;
	if (w->mr.pd != b->pd)
		return -EPERM;
	/* A type 2 window is bound from the free state only; a bound one
	 * must be invalidated first (IBTA 10.6.7.2). */
	if (w->kind == SLOT_MW2 && tbl->wr[w - tbl->slot].mr_idx != 0)
		return -EBUSY;
	if (b->access & ~UROCE_MW_ACCESS_SUPPORTED)
		return -EINVAL;
	if (w->kind == SLOT_MW1 && b->length == 0) {
		window_unbind(tbl, w);	/* ibv_bind_mw(3): unbind */
		return 0;
	}
	ret = bind_check_mr(tbl, b, w->mr.pd, &v);
	if (ret != 0)
		return ret;
	window_unbind(tbl, w);		/* type 1: moved */
	window_publish(tbl, w, b, b->mr_lkey >> UROCE_MR_KEY_SHIFT, v.addr);
	return 0;
}

int
uroce_mw_bind(struct uroce_mr_table *tbl, const struct uroce_mw_bind *b)
{
	int ret;

	rte_spinlock_lock(&tbl->lock);
	ret = mw_bind_locked(tbl, b);
	rte_spinlock_unlock(&tbl->lock);
	return ret;
}

int
uroce_mw_invalidate(struct uroce_mr_table *tbl, const void *pd,
		    const void *qp, uint32_t rkey)
{
	uint32_t idx = rkey >> UROCE_MR_KEY_SHIFT;
	struct mr_slot *w;
	int ret = 0;

	if (idx == 0 || idx > tbl->max_mr)
		return -ENOKEY;
	w = &tbl->slot[idx];
	rte_spinlock_lock(&tbl->lock);
	if (w->key != rkey || w->kind == SLOT_FREE)
		ret = -ENOKEY;
	else if (w->kind != SLOT_MW2)
		ret = -EINVAL;
	else if (w->mr.pd != pd)
		ret = -EPERM;
	else if (w->qp != qp)
		ret = -EACCES;
	else
		window_unbind(tbl, w);
	rte_spinlock_unlock(&tbl->lock);
	return ret;
}

void
uroce_mw_unbind_qp(struct uroce_mr_table *tbl, const void *qp)
{
	uint32_t i;

	rte_spinlock_lock(&tbl->lock);
	for (i = 1; i <= tbl->max_mr && tbl->mw2_bound > 0; i++) {
		struct mr_slot *w = &tbl->slot[i];

		if (w->kind == SLOT_MW2 && tbl->wr[i].mr_idx != 0 &&
		    w->qp == qp)
			window_unbind(tbl, w);
	}
	rte_spinlock_unlock(&tbl->lock);
}

uint32_t
uroce_mw_bound_count(const struct uroce_mr_table *tbl)
{
	return __atomic_load_n(&tbl->mw_bound, __ATOMIC_RELAXED);
}
