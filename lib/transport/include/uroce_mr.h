/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */
#ifndef UROCE_MR_H
#define UROCE_MR_H

/**
 * @file
 * Memory regions and their keys: a per-device table, as a NIC keeps one
 * (IBTA 10.6, memory management; 10.6.3, memory protection and keys).
 *
 * Keys. A 32-bit L_Key/R_Key is (index << 8) | key byte. The index picks a
 * table slot in O(1); the key byte changes at every registration of that
 * slot (it starts from a per-slot value drawn from the device seed and
 * steps by a seed-derived odd stride, so it runs through all 256 values
 * before repeating). A stale key, kept after ibv_dereg_mr() while the slot
 * was registered again, or a forged one, fails the key byte compare. Index 0
 * is never used, so key 0 (a zeroed SGE or RETH) is never valid. As on
 * rxe and mlx5, rkey == lkey; what a key may do is decided by the access
 * flags of the region, not by which of the two it is.
 *
 * Addresses. Every access through a key, local (SGE) or remote (RETH,
 * AtomicETH), names an address in the region's I/O virtual space
 * [iova, iova + length): ibv_reg_mr_iova(3), "the virtual base address of
 * the MR when accessed through a lkey or rkey". ibv_reg_mr() is the case
 * iova == addr. The checks translate it to the host pointer
 * addr + (va - iova).
 *
 * Threads. reg and dereg change the table and must be serialised by the
 * caller (the verbs layer's device lock). The checks take no lock and may
 * run on any number of engine lcores at the same time as reg and dereg: a
 * slot's key word publishes it (RELEASE) and is checked again after the
 * fields are read, so a check never accepts a mix of two registrations.
 * What a check returns is good until the caller's next quiescent point:
 * ibv_dereg_mr() must wait until every engine has passed one (e.g. with
 * rte_rcu_qsbr) before it returns and the application may free the memory.
 *
 * Errors are negative errno; each check failure has its own code so that
 * the caller can pick the NAK (the AETH syndromes, IBTA 9.3.5) or the
 * completion status, see uroce_mr_wc_status().
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bits of a key below the table index. */
#define UROCE_MR_KEY_SHIFT	8
/** Most regions a table can hold: the index has 24 bits, 0 unused. */
#define UROCE_MR_MAX	((UINT32_C(1) << (32 - UROCE_MR_KEY_SHIFT)) - 1)

/**
 * Access flags uroce_mr_reg() accepts. IBV_ACCESS_HUGETLB is accepted
 * without effect (see uroce_mr_reg()), as is anything in the optional
 * range (IBV_ACCESS_RELAXED_ORDERING ...).
 */
#define UROCE_MR_ACCESS_SUPPORTED					\
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |		\
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |		\
	 IBV_ACCESS_HUGETLB | IBV_ACCESS_MW_BIND | IBV_ACCESS_ON_DEMAND)

/** Flags ibv_reg_mr(3) defines that uroce does not do: -EOPNOTSUPP. */
#define UROCE_MR_ACCESS_UNSUPPORTED	IBV_ACCESS_ZERO_BASED

/**
 * On-demand paging (IBV_ACCESS_ON_DEMAND). The engine always reaches a
 * region's memory through the process's page tables, faulting pages in as
 * the CPU does, so a region registered on demand differs from a pinned
 * one only at registration: its pages need not be mapped then (no
 * -EFAULT check), and nothing is charged to RLIMIT_MEMLOCK. A page not
 * mapped when an access reaches it fails that access as memory unmapped
 * after a registration does (uroce_memguard.h).
 *
 * Implicit on-demand paging: addr NULL, len SIZE_MAX, iova 0 with
 * IBV_ACCESS_ON_DEMAND registers the whole address space, each address
 * seen as itself (mlx5's implicit ODP MR, ibv_reg_mr(3)).
 */
static inline bool
uroce_mr_is_implicit(const void *addr, size_t len, uint64_t iova,
		     unsigned int access)
{
	return (access & IBV_ACCESS_ON_DEMAND) && addr == NULL &&
	       len == SIZE_MAX && iova == 0;
}

/** Page size of the iova/addr offset rule in uroce_mr_reg(). */
#define UROCE_MR_PAGE_SIZE	4096u

/** A registered region. Fields are set by uroce_mr_reg() and then fixed. */
struct uroce_mr {
	void *addr;		/**< host address of the first byte */
	size_t length;		/**< bytes, > 0 */
	uint64_t iova;		/**< first byte's address through a key */
	unsigned int access;	/**< enum ibv_access_flags as registered */
	const void *pd;		/**< protection domain, compared as is */
	uint32_t lkey;		/**< for SGEs (ibv_sge.lkey) */
	uint32_t rkey;		/**< for the peer (RETH, AtomicETH) */
};

struct uroce_mr_table;

/**
 * Create an empty table of max_mr regions.
 *
 * @param seed  randomness for the key bytes (e.g. rte_rand() per device);
 *   tests pass a constant to get the same keys every run
 * @return 0 and *out, -EINVAL (max_mr 0 or above UROCE_MR_MAX), -ENOMEM
 */
int uroce_mr_table_create(uint32_t max_mr, uint64_t seed,
			  struct uroce_mr_table **out);

/** Free a table (regions still registered are dropped). NULL is a no-op. */
void uroce_mr_table_free(struct uroce_mr_table *tbl);

/** Number of registered regions. */
uint32_t uroce_mr_table_count(const struct uroce_mr_table *tbl);

/**
 * Register [addr, addr + len) seen through keys as [iova, iova + len):
 * ibv_reg_mr_iova2() semantics. Checked in this order, nothing changes on
 * failure:
 *  - -EINVAL: access has a bit ibv_reg_mr(3) does not define (outside
 *    bits 0..7 and the optional range, IBV_ACCESS_OPTIONAL_RANGE);
 *  - -EINVAL: IBV_ACCESS_REMOTE_WRITE or IBV_ACCESS_REMOTE_ATOMIC without
 *    IBV_ACCESS_LOCAL_WRITE (ibv_reg_mr(3));
 *  - -EINVAL: len 0, or addr + len or iova + len past the end of the
 *    address space (the Linux core's pinning refuses both);
 *  - -EINVAL: addr and iova at different offsets in a 4 KiB page (the
 *    Linux core's rule for ibv_reg_mr_iova; it also keeps an 8-byte
 *    aligned iova 8-byte aligned in host memory, which atomics need);
 *  - -EFAULT: addr NULL (but an implicit on-demand region, above);
 *  - -EOPNOTSUPP: UROCE_MR_ACCESS_UNSUPPORTED: IBV_ACCESS_ZERO_BASED:
 *    providers disagree on it for MRs (rxe ignores it, irdma makes the
 *    region zero-based), so it is refused rather than guessed;
 *    ibv_reg_mr(3) gives the equivalent, ibv_reg_mr_iova() with iova 0,
 *    which works here;
 *  - -EFAULT, without IBV_ACCESS_ON_DEMAND: a page of [addr, addr + len)
 *    is not mapped, or, with IBV_ACCESS_LOCAL_WRITE, _REMOTE_WRITE or
 *    _REMOTE_ATOMIC, not writable, or, without them, not readable (as the
 *    Linux core's pinning);
 *  - -ENOMEM: the table is full.
 * Optional-range bits are hints and are ignored, as libibverbs masks them
 * off on kernels that do not take them. IBV_ACCESS_HUGETLB is a promise
 * that only matters with ODP, where it is accepted without effect too.
 *
 * @return 0 and *out (valid until uroce_mr_dereg()), or a negative errno.
 */
int uroce_mr_reg(struct uroce_mr_table *tbl, const void *pd, void *addr,
		 size_t len, uint64_t iova, unsigned int access,
		 struct uroce_mr **out);

/**
 * Deregister: its keys stop working at once (see Threads above for when
 * the memory may be reused).
 * @return 0, -EINVAL if mr is not a region registered in tbl, -EBUSY while
 *   a memory window is bound to it (the Linux core's answer; nothing
 *   changes).
 */
int uroce_mr_dereg(struct uroce_mr_table *tbl, struct uroce_mr *mr);

/**
 * Re-register mr in place, keeping its keys (ibv_rereg_mr(3); remote
 * peers hold the R_Key). Two steps around a quiescent point of every
 * reader, as a key that stays the same cannot tell two registrations
 * apart (see Threads above):
 *  - begin: the checks of uroce_mr_reg() on the new fields (the same
 *    errors, nothing changed on failure, -EINVAL for an mr not registered
 *    here), then the keys stop working;
 *  - once no reader can still hold a check's result: end writes the new
 *    fields and the same keys work again, for the new region.
 */
int uroce_mr_rereg_begin(struct uroce_mr_table *tbl, struct uroce_mr *mr,
			 void *addr, size_t len, uint64_t iova,
			 unsigned int access);
void uroce_mr_rereg_end(struct uroce_mr_table *tbl, struct uroce_mr *mr,
			const void *pd, void *addr, size_t len, uint64_t iova,
			unsigned int access);

/*
 * Check failures. A key that names no registered region, a stale one or a
 * forged one are all -ENOKEY: telling them apart would only help a forger.
 */
#define UROCE_MR_EKEY	ENOKEY	/**< no live region has the key */
#define UROCE_MR_EPD	EPERM	/**< region of another PD */
#define UROCE_MR_EACCES	EACCES	/**< region lacks the right */
#define UROCE_MR_ERANGE	ERANGE	/**< [va, va + len) outside */
#define UROCE_MR_EALIGN	EINVAL	/**< atomic va not 8-aligned */

/*
 * Memory windows (IBTA 10.6.7). A window is a slot of the same table, so
 * its R_Key lives in the MRs' key space and a check finds it with the same
 * slot load; the slot's kind byte says which it is. A window allocated and
 * not bound publishes no key (every access through it fails -UROCE_MR_EKEY).
 * A bound window's slot holds the bound range as a region of its own:
 * [addr, addr + length) of the MR seen as [iova, iova + length), the
 * window's rights, its PD and, for type 2, the QP it is bound to; an
 * access through it is checked as one through an MR, plus the QP (type 2B:
 * only through that QP). Its key is published like an MR's.
 *
 * Threads. Unlike reg and dereg, bind and invalidate run on engine lcores
 * (a bind or local invalidate is a send WQE, a remote invalidate a
 * received SEND). Every change to the table therefore takes the table's
 * writer lock; the checks still take none.
 *
 * Keys. A window keeps its slot index for life; its key byte is chosen at
 * each bind: by the caller for type 2 (the consumer's ibv_inc_rkey()), by
 * the verbs layer for type 1 (ibv_bind_mw()). The index of a bind's new key
 * must be the window's own.
 */

/** Rights a window can grant (ibv_bind_mw(3)); LOCAL_WRITE is ignored. */
#define UROCE_MW_ACCESS_SUPPORTED					\
	(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |		\
	 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE)

/**
 * Allocate a window of type IBV_MW_TYPE_1 or IBV_MW_TYPE_2 in pd, unbound.
 * @return 0 and *rkey (its initial key: the window's handle for dealloc and
 *   bind), -EINVAL (another type), -ENOMEM (the table is full).
 */
int uroce_mw_alloc(struct uroce_mr_table *tbl, const void *pd,
		   enum ibv_mw_type type, uint32_t *rkey);

/**
 * Free a window (bound or not): its key stops working at once; the caller
 * waits for a quiescent point as after uroce_mr_dereg().
 * @return 0, or -EINVAL if rkey's index is not an allocated window.
 */
int uroce_mw_dealloc(struct uroce_mr_table *tbl, uint32_t rkey);

/** A bind (IBV_WR_BIND_MW, ibv_bind_mw()). */
struct uroce_mw_bind {
	const void *pd;		/**< the QP's PD */
	const void *qp;		/**< the QP that binds it (type 2B) */
	uint32_t mw_key;	/**< any key of the window: its index */
	uint32_t new_key;	/**< the key it gets (same index) */
	uint32_t mr_lkey;	/**< the MR; 0 with length 0 (type 1 unbind) */
	unsigned int access;	/**< mw_access_flags */
	uint64_t addr;		/**< first byte, in the MR's iova space */
	uint64_t length;	/**< 0: type 1 unbinds */
};

/**
 * Bind a window (IBTA 10.6.7.2, ibv_bind_mw(3)), checked in this order,
 * nothing changed on failure (each is IBV_WC_MW_BIND_ERR for the caller):
 *  - -EINVAL: mw_key names no allocated window, or new_key has another
 *    index;
 *  - -EPERM: the window is not of the QP's PD;
 *  - -EBUSY: a type 2 window already bound (it must be invalidated first);
 *  - -EINVAL: access outside UROCE_MW_ACCESS_SUPPORTED;
 *  - type 1 with length 0: the window is unbound, done;
 *  - -ENOKEY: mr_lkey names no live MR; -EPERM: the MR is of another PD;
 *  - -EACCES: the MR was registered without IBV_ACCESS_MW_BIND, or the
 *    window asks remote write or atomic of an MR without local write;
 *  - -ERANGE: [addr, addr + length) outside the MR.
 * A type 1 window bound elsewhere is moved (its old key stops working).
 */
int uroce_mw_bind(struct uroce_mr_table *tbl, const struct uroce_mw_bind *b);

/**
 * Invalidate the type 2 window rkey names (IBV_WR_LOCAL_INV, or a received
 * SEND with Invalidate, IBTA 10.6.7.2.6): it must be bound with that exact
 * key, in pd, to qp. -ENOKEY (no bound window has the key), -EINVAL (a
 * type 1 window or an MR: they cannot be invalidated), -EPERM (another
 * PD), -EACCES (bound to another QP). Nothing changes on failure.
 */
int uroce_mw_invalidate(struct uroce_mr_table *tbl, const void *pd,
			const void *qp, uint32_t rkey);

/** Unbind every type 2 window bound to qp (the QP is destroyed). */
void uroce_mw_unbind_qp(struct uroce_mr_table *tbl, const void *qp);

/** Bound windows in the table (tests). */
uint32_t uroce_mw_bound_count(const struct uroce_mr_table *tbl);

/**
 * Check a local access through an L_Key (an SGE of a posted WR), in this
 * order: the key names a live region (not a window: a window has no
 * L_Key), of pd, that grants IBV_ACCESS_LOCAL_WRITE when need_access has it; [va, va + len) lies
 * inside its iova range. Local read is always granted (ibv_reg_mr(3)), so
 * need_access is 0 for a read; remote bits in it are ignored.
 *
 * A zero-length access touches no memory and succeeds without a key
 * lookup (*host = NULL), as a zero-length SGE does on rxe.
 *
 * @return 0 and *host, or -UROCE_MR_EKEY, -UROCE_MR_EPD, -UROCE_MR_ERANGE,
 *   -UROCE_MR_EACCES.
 */
int uroce_mr_check_local(const struct uroce_mr_table *tbl, const void *pd,
			 uint32_t lkey, uint64_t va, uint64_t len,
			 unsigned int need_access, void **host);

/**
 * Check a remote access through an R_Key (the responder's checks of a RETH
 * or AtomicETH; IBTA 10.6.3), in this order: the key names a live region,
 * of the QP's pd (PD isolation), that grants every bit of need_access
 * (IBV_ACCESS_REMOTE_READ, _WRITE or _ATOMIC); [va, va + len) lies inside
 * [iova, iova + length), computed without overflow; with
 * IBV_ACCESS_REMOTE_ATOMIC, va is 8-byte aligned (IBTA 9.4.5).
 *
 * A zero-length RDMA READ or WRITE needs no R_Key and no address (IBTA
 * C9-88: the responder does not validate them), so len 0 succeeds without
 * a lookup and *host = NULL. An atomic always moves 8 bytes: one with
 * len 0 is checked in full all the same.
 *
 * An R_Key may name a bound window: the same checks against the window's
 * range, rights and PD, and a type 2 window only from the QP it is bound
 * to (-UROCE_MR_EACCES otherwise; qp NULL matches no QP).
 *
 * @return 0 and *host, or -UROCE_MR_EKEY, -UROCE_MR_EPD, -UROCE_MR_ERANGE,
 *   -UROCE_MR_EACCES, -UROCE_MR_EALIGN.
 */
int uroce_mr_check_remote_qp(const struct uroce_mr_table *tbl, const void *pd,
			     const void *qp, uint32_t rkey, uint64_t va,
			     uint64_t len, unsigned int need_access,
			     void **host);

/** uroce_mr_check_remote_qp() from no QP: type 2 windows refuse it. */
int uroce_mr_check_remote(const struct uroce_mr_table *tbl, const void *pd,
			  uint32_t rkey, uint64_t va, uint64_t len,
			  unsigned int need_access, void **host);

/**
 * The checks of ibv_advise_mr(3)'s prefetch on one SGE: lkey names a live
 * MR registered with IBV_ACCESS_ON_DEMAND (-ENOENT otherwise: a window, a
 * pinned region, no region), of pd (-EPERM), writable by the local side
 * when write is asked (-EPERM), and [va, va + len) lies inside it
 * (-EFAULT). @return 0 and *host.
 */
int uroce_mr_check_advise(const struct uroce_mr_table *tbl, const void *pd,
			  uint32_t lkey, uint64_t va, uint64_t len, bool write,
			  void **host);

/**
 * The completion status a check failure leads to.
 *
 * Local (remote == false): IBV_WC_LOC_PROT_ERR for every failure, the
 * requester's or responder's own SGE did not pass protection (IBTA 10.6.3).
 *
 * Remote (remote == true), the status the requester completes with once the
 * responder has NAKed: IBV_WC_REM_INV_REQ_ERR for -UROCE_MR_EALIGN (NAK
 * Invalid Request, as rxe does for a misaligned atomic), else
 * IBV_WC_REM_ACCESS_ERR (NAK Remote Access Error).
 *
 * @param err  a negative value returned by a check; 0 gives IBV_WC_SUCCESS
 */
enum ibv_wc_status uroce_mr_wc_status(int err, bool remote);

#ifdef __cplusplus
}
#endif

#endif /* UROCE_MR_H */
