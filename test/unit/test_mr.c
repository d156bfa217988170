/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The memory region table (lib/transport/mr.c): ibv_reg_mr(3) validation,
 * keys (stale, forged), PD isolation, bounds at the edges and against
 * overflow, atomic alignment, iova translation, a full table, memory that
 * is not mapped or not writable, on-demand and implicit regions, and
 * checks racing with reg/dereg on another thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>

#include <rte_common.h>
#include <rte_pause.h>

#include "uroce_mr.h"
#include "uroce_test.h"

#define SEED	UINT64_C(0x5eed)
#define PAGE	UROCE_MR_PAGE_SIZE
#define RW	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static const int pd_a = 1, pd_b = 2;	/* two protection domains */
#define PD_A	((const void *)&pd_a)
#define PD_B	((const void *)&pd_b)

static uint8_t *
page_buf(size_t pages)
{
	uint8_t *p = aligned_alloc(PAGE, pages * PAGE);

	if (p != NULL)
		memset(p, 0, pages * PAGE);
	return p;
}

static struct uroce_mr_table *
new_table(uint32_t max)
{
	struct uroce_mr_table *tbl = NULL;

	UT_CHECK_EQ(uroce_mr_table_create(max, SEED, &tbl), 0);
	return tbl;
}

/* reg that is expected to fail with err and to leave the table as it was */
static void
expect_reg_fail(struct uroce_mr_table *tbl, void *addr, size_t len,
		uint64_t iova, unsigned int access, int err)
{
	struct uroce_mr *mr = NULL;
	uint32_t before = uroce_mr_table_count(tbl);

	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, addr, len, iova, access, &mr), err);
	UT_CHECK(mr == NULL);
	UT_CHECK_EQ(uroce_mr_table_count(tbl), before);
	UT_NOTE("addr %p len %zu iova 0x%" PRIx64 " access 0x%x", addr, len,
		iova, access);
}

static void
expect_reg_ok(struct uroce_mr_table *tbl, void *addr, size_t len,
	      uint64_t iova, unsigned int access)
{
	struct uroce_mr *mr = NULL;

	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, addr, len, iova, access, &mr), 0);
	if (mr != NULL)
		UT_CHECK_EQ(uroce_mr_dereg(tbl, mr), 0);
	UT_NOTE("access 0x%x", access);
}

static void
test_table_create(void)
{
	struct uroce_mr_table *tbl = NULL;

	UT_CHECK_EQ(uroce_mr_table_create(0, SEED, &tbl), -EINVAL);
	UT_CHECK_EQ(uroce_mr_table_create(UROCE_MR_MAX + 1, SEED, &tbl),
		    -EINVAL);
	UT_CHECK(tbl == NULL);
	uroce_mr_table_free(NULL);
}

static void
test_reg_access(void)
{
	struct uroce_mr_table *tbl = new_table(4);
	uint8_t *buf = page_buf(1);
	uint64_t va = (uintptr_t)buf;
	unsigned int bit;

	/* bits ibv_reg_mr(3) does not define */
	for (bit = 8; bit < 32; bit++) {
		if ((1u << bit) & IBV_ACCESS_OPTIONAL_RANGE)
			continue;
		expect_reg_fail(tbl, buf, 64, va, 1u << bit, -EINVAL);
	}
	/* remote write / atomic need local write */
	expect_reg_fail(tbl, buf, 64, va, IBV_ACCESS_REMOTE_WRITE, -EINVAL);
	expect_reg_fail(tbl, buf, 64, va, IBV_ACCESS_REMOTE_ATOMIC, -EINVAL);
	expect_reg_fail(tbl, buf, 64, va, IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ, -EINVAL);
	/* invalid beats unsupported, as in the Linux core */
	expect_reg_fail(tbl, buf, 64, va, IBV_ACCESS_ON_DEMAND |
			IBV_ACCESS_REMOTE_WRITE, -EINVAL);
	/* defined but not done here */
	expect_reg_fail(tbl, buf, 64, 0, IBV_ACCESS_ZERO_BASED, -EOPNOTSUPP);
	expect_reg_fail(tbl, buf, 64, va, IBV_ACCESS_ON_DEMAND |
			IBV_ACCESS_ZERO_BASED, -EOPNOTSUPP);
	expect_reg_ok(tbl, buf, 64, va, IBV_ACCESS_ON_DEMAND);
	expect_reg_ok(tbl, buf, 64, va, IBV_ACCESS_ON_DEMAND |
		      IBV_ACCESS_HUGETLB);

	expect_reg_ok(tbl, buf, 64, va, 0);
	expect_reg_ok(tbl, buf, 64, va, IBV_ACCESS_REMOTE_READ);
	expect_reg_ok(tbl, buf, 64, va, IBV_ACCESS_LOCAL_WRITE);
	expect_reg_ok(tbl, buf, 64, va, RW);
	expect_reg_ok(tbl, buf, 64, va, IBV_ACCESS_HUGETLB);
	expect_reg_ok(tbl, buf, 64, va, IBV_ACCESS_MW_BIND);
	/* optional-range bits are hints */
	expect_reg_ok(tbl, buf, 64, va, RW | IBV_ACCESS_RELAXED_ORDERING);
	expect_reg_ok(tbl, buf, 64, va, IBV_ACCESS_OPTIONAL_RANGE);
	UT_CHECK_EQ(uroce_mr_table_count(tbl), 0);
	uroce_mr_table_free(tbl);
	free(buf);
}

static void
test_reg_range(void)
{
	struct uroce_mr_table *tbl = new_table(4);
	uint8_t *buf = page_buf(1);
	uint64_t va = (uintptr_t)buf;

	expect_reg_fail(tbl, buf, 0, va, 0, -EINVAL);
	expect_reg_fail(tbl, NULL, 64, 0, 0, -EFAULT);
	/* host range that wraps (same page offset for iova) */
	expect_reg_fail(tbl, (void *)(UINTPTR_MAX - 3), 8, UINT64_MAX - 3, 0,
			-EINVAL);
	/* iova range that wraps, host range fine */
	expect_reg_fail(tbl, buf, 2 * PAGE, UINT64_MAX - PAGE + 1, 0, -EINVAL);
	/* addr and iova at different page offsets */
	expect_reg_fail(tbl, buf, 64, va + 8, 0, -EINVAL);
	expect_reg_fail(tbl, buf + 1, 64, 0, 0, -EINVAL);
	/* same offset, any iova: fine; the last byte may be UINT64_MAX */
	expect_reg_ok(tbl, buf, 64, 0, 0);
	expect_reg_ok(tbl, buf + 8, 64, 8 + 7 * PAGE, 0);
	expect_reg_ok(tbl, buf, PAGE, UINT64_MAX - PAGE + 1, 0);
	uroce_mr_table_free(tbl);
	free(buf);
}

/* Every key byte of a valid key but its own, key 0, an index beyond the
 * table and a free slot's index: all -ENOKEY.
 */
static void
test_forged_keys(void)
{
	struct uroce_mr_table *tbl = new_table(8);
	uint8_t *buf = page_buf(1);
	uint64_t va = (uintptr_t)buf;
	struct uroce_mr *mr = NULL;
	void *host;
	uint32_t k, b;

	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf, 64, va, RW, &mr), 0);
	if (mr == NULL)
		return;
	UT_CHECK_EQ(mr->lkey, mr->rkey);
	UT_CHECK(mr->lkey >> UROCE_MR_KEY_SHIFT != 0);
	UT_CHECK(mr->addr == buf && mr->length == 64 && mr->iova == va);
	UT_CHECK(mr->access == RW && mr->pd == PD_A);
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, mr->rkey, va, 8,
					  IBV_ACCESS_REMOTE_READ, &host), 0);
	for (b = 0; b < 256; b++) {
		k = (mr->rkey & ~UINT32_C(0xff)) | b;
		if (k == mr->rkey)
			continue;
		UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, k, va, 8,
						  IBV_ACCESS_REMOTE_READ,
						  &host), -ENOKEY);
		UT_CHECK(host == NULL);
		UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_A, k, va, 8, 0,
						 &host), -ENOKEY);
		UT_NOTE("key 0x%x", k);
	}
	UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_A, 0, va, 8, 0, &host),
		    -ENOKEY);
	UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_A, 9u << 8, va, 8, 0, &host),
		    -ENOKEY);
	UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_A, UINT32_MAX, va, 8, 0,
					 &host), -ENOKEY);
	k = mr->lkey + (1u << UROCE_MR_KEY_SHIFT);	/* a free slot */
	UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_A, k, va, 8, 0, &host),
		    -ENOKEY);
	UT_CHECK_EQ(uroce_mr_dereg(tbl, mr), 0);
	uroce_mr_table_free(tbl);
	free(buf);
}

/* One slot, registered again and again: the old key dies with its
 * registration, and 256 registrations give 256 different keys.
 */
static void
test_stale_keys(void)
{
	struct uroce_mr_table *tbl = new_table(1);
	uint8_t *buf = page_buf(1);
	uint64_t va = (uintptr_t)buf;
	struct uroce_mr *mr = NULL, *mr2 = NULL;
	bool seen[256] = { false };
	uint32_t old, i, dup = 0;
	void *host;

	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf, 64, va, RW, &mr), 0);
	if (mr == NULL)
		return;
	old = mr->rkey;
	UT_CHECK_EQ(uroce_mr_dereg(tbl, mr), 0);
	UT_CHECK_EQ(uroce_mr_dereg(tbl, mr), -EINVAL);	/* twice */
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, old, va, 8,
					  IBV_ACCESS_REMOTE_READ, &host),
		    -ENOKEY);
	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf, 64, va, RW, &mr2), 0);
	if (mr2 == NULL)
		return;
	UT_CHECK(mr2 == mr);	/* same slot ... */
	UT_CHECK_EQ(mr2->rkey >> 8, old >> 8);	/* ... same index ... */
	UT_CHECK(mr2->rkey != old);		/* ... new key */
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, old, va, 8,
					  IBV_ACCESS_REMOTE_READ, &host),
		    -ENOKEY);
	UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_A, old, va, 8, 0, &host),
		    -ENOKEY);
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, mr2->rkey, va, 8,
					  IBV_ACCESS_REMOTE_READ, &host), 0);
	UT_CHECK_EQ(uroce_mr_dereg(tbl, mr2), 0);

	for (i = 0; i < 256; i++) {
		UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf, 64, va, 0, &mr), 0);
		dup += seen[mr->lkey & 0xff];
		seen[mr->lkey & 0xff] = true;
		UT_CHECK_EQ(uroce_mr_dereg(tbl, mr), 0);
	}
	UT_CHECK_EQ(dup, 0);
	uroce_mr_table_free(tbl);
	free(buf);
}

static void
test_dereg_bogus(void)
{
	struct uroce_mr_table *tbl = new_table(2), *other = new_table(2);
	uint8_t *buf = page_buf(1);
	struct uroce_mr *mr = NULL, fake;

	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf, 64, (uintptr_t)buf, 0, &mr),
		    0);
	if (mr == NULL)
		return;
	fake = *mr;	/* right key, not the table's entry */
	UT_CHECK_EQ(uroce_mr_dereg(tbl, &fake), -EINVAL);
	UT_CHECK_EQ(uroce_mr_dereg(other, mr), -EINVAL);
	fake.lkey = 0;
	UT_CHECK_EQ(uroce_mr_dereg(tbl, &fake), -EINVAL);
	UT_CHECK_EQ(uroce_mr_table_count(tbl), 1);
	UT_CHECK_EQ(uroce_mr_dereg(tbl, mr), 0);
	UT_CHECK_EQ(uroce_mr_table_count(tbl), 0);
	uroce_mr_table_free(tbl);
	uroce_mr_table_free(other);
	free(buf);
}

static void
test_pd_isolation(void)
{
	struct uroce_mr_table *tbl = new_table(4);
	uint8_t *buf = page_buf(1);
	uint64_t va = (uintptr_t)buf;
	struct uroce_mr *mr = NULL;
	void *host = buf;

	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf, 64, va, RW, &mr), 0);
	if (mr == NULL)
		return;
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_B, mr->rkey, va, 8,
					  IBV_ACCESS_REMOTE_WRITE, &host),
		    -EPERM);
	UT_CHECK(host == NULL);
	UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_B, mr->lkey, va, 8, 0, &host),
		    -EPERM);
	UT_CHECK_EQ(uroce_mr_check_local(tbl, NULL, mr->lkey, va, 8, 0, &host),
		    -EPERM);
	UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_A, mr->lkey, va, 8, 0, &host),
		    0);
	UT_CHECK(host == buf);
	uroce_mr_table_free(tbl);
	free(buf);
}

/* Each right on its own: an MR with every right but the one needed fails,
 * the MR with just that one passes.
 */
static void
test_access_rights(void)
{
	static const unsigned int need[] = {
		IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_REMOTE_ATOMIC,
	};
	struct uroce_mr_table *tbl = new_table(8);
	uint8_t *buf = page_buf(1);
	uint64_t va = (uintptr_t)buf;
	struct uroce_mr *lack = NULL, *just = NULL;
	unsigned int i, without;
	void *host;

	for (i = 0; i < RTE_DIM(need); i++) {
		without = RW & ~need[i];
		if (need[i] == IBV_ACCESS_REMOTE_WRITE ||
		    need[i] == IBV_ACCESS_REMOTE_ATOMIC)
			without |= IBV_ACCESS_LOCAL_WRITE;
		UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf, 64, va, without,
					 &lack), 0);
		UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf, 64, va,
					 need[i] | IBV_ACCESS_LOCAL_WRITE,
					 &just), 0);
		if (lack == NULL || just == NULL)
			return;
		UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, lack->rkey, va, 8,
						  need[i], &host), -EACCES);
		UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, just->rkey, va, 8,
						  need[i], &host), 0);
		UT_NOTE("need 0x%x", need[i]);
		uroce_mr_dereg(tbl, lack);
		uroce_mr_dereg(tbl, just);
	}
	/* local: read always, write only with LOCAL_WRITE */
	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf, 64, va,
				 IBV_ACCESS_REMOTE_READ, &lack), 0);
	UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_A, lack->lkey, va, 64, 0,
					 &host), 0);
	UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_A, lack->lkey, va, 64,
					 IBV_ACCESS_LOCAL_WRITE, &host),
		    -EACCES);
	/* remote rights do not count locally, nor the reverse */
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, lack->rkey, va, 8,
					  IBV_ACCESS_REMOTE_WRITE, &host),
		    -EACCES);
	/* order: key, PD, right, range */
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, lack->rkey, va + 4096, 8,
					  IBV_ACCESS_REMOTE_WRITE, &host),
		    -EACCES);
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_B, lack->rkey, va + 4096, 8,
					  IBV_ACCESS_REMOTE_WRITE, &host),
		    -EPERM);
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_B, lack->rkey ^ 1,
					  va + 4096, 8,
					  IBV_ACCESS_REMOTE_WRITE, &host),
		    -ENOKEY);
	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf, 64, va,
				 IBV_ACCESS_LOCAL_WRITE, &just), 0);
	UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_A, just->lkey, va, 64,
					 IBV_ACCESS_LOCAL_WRITE, &host), 0);
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, just->rkey, va, 8,
					  IBV_ACCESS_REMOTE_READ, &host),
		    -EACCES);
	uroce_mr_table_free(tbl);
	free(buf);
}

/* Remote and local agree on bounds; check both at once. */
static void
expect_range(struct uroce_mr_table *tbl, const struct uroce_mr *mr,
	     uint64_t va, uint64_t len, int err, const void *want_host)
{
	void *h1 = (void *)1, *h2 = (void *)1;

	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, mr->rkey, va, len,
					  IBV_ACCESS_REMOTE_READ, &h1), err);
	UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_A, mr->lkey, va, len,
					 IBV_ACCESS_LOCAL_WRITE, &h2), err);
	UT_CHECK(h1 == want_host && h2 == want_host);
	UT_NOTE("va 0x%" PRIx64 " len %" PRIu64 " (mr iova 0x%" PRIx64
		" length %zu)", va, len, mr->iova, mr->length);
}

static void
test_bounds(void)
{
	struct uroce_mr_table *tbl = new_table(4);
	uint8_t *buf = page_buf(2);
	uint64_t base = UINT64_C(0x7000000000) + 0x100, len = 1000;
	struct uroce_mr *mr = NULL, *top = NULL;

	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf + 0x100, len, base, RW, &mr),
		    0);
	if (mr == NULL)
		return;
	expect_range(tbl, mr, base, len, 0, buf + 0x100);
	expect_range(tbl, mr, base + len - 1, 1, 0, buf + 0x100 + len - 1);
	expect_range(tbl, mr, base + 10, len - 10, 0, buf + 0x100 + 10);
	expect_range(tbl, mr, base + len, 1, -ERANGE, NULL);
	expect_range(tbl, mr, base - 1, 1, -ERANGE, NULL);
	expect_range(tbl, mr, base - 1, 2, -ERANGE, NULL);
	expect_range(tbl, mr, base, len + 1, -ERANGE, NULL);
	expect_range(tbl, mr, base + len - 1, 2, -ERANGE, NULL);
	/* sums that would wrap must not pass as short ranges */
	expect_range(tbl, mr, UINT64_MAX - 1, 4, -ERANGE, NULL);
	expect_range(tbl, mr, base + 1, UINT64_MAX, -ERANGE, NULL);
	expect_range(tbl, mr, base, UINT64_MAX, -ERANGE, NULL);
	expect_range(tbl, mr, UINT64_MAX, 1, -ERANGE, NULL);
	/* zero length: no check at all (C9-88 for remote) */
	expect_range(tbl, mr, UINT64_MAX, 0, 0, NULL);

	/* a region whose last byte is at iova UINT64_MAX */
	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf + PAGE - 8, 8, UINT64_MAX - 7,
				 RW, &top), 0);
	if (top == NULL)
		return;
	expect_range(tbl, top, UINT64_MAX - 7, 8, 0, buf + PAGE - 8);
	expect_range(tbl, top, UINT64_MAX - 1, 2, 0, buf + PAGE - 2);
	expect_range(tbl, top, UINT64_MAX, 1, 0, buf + PAGE - 1);
	expect_range(tbl, top, UINT64_MAX - 1, 4, -ERANGE, NULL);
	expect_range(tbl, top, UINT64_MAX, 2, -ERANGE, NULL);
	expect_range(tbl, top, UINT64_MAX - 8, 2, -ERANGE, NULL);
	uroce_mr_table_free(tbl);
	free(buf);
}

static void
test_atomic_align(void)
{
	struct uroce_mr_table *tbl = new_table(2);
	uint8_t *buf = page_buf(1);
	uint64_t va = UINT64_C(0x10000);	/* iova unlike addr */
	struct uroce_mr *mr = NULL;
	void *host;
	int off, ret;

	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf, 64, va, RW, &mr), 0);
	if (mr == NULL)
		return;
	for (off = 0; off <= 56; off++) {
		ret = uroce_mr_check_remote(tbl, PD_A, mr->rkey, va + off, 8,
					    IBV_ACCESS_REMOTE_ATOMIC, &host);
		UT_CHECK_EQ(ret, off % 8 == 0 ? 0 : -EINVAL);
		UT_CHECK(host == (off % 8 == 0 ? buf + off : NULL));
		UT_NOTE("atomic at offset %d", off);
	}
	/* out of range beats misaligned */
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, mr->rkey, va + 60, 8,
					  IBV_ACCESS_REMOTE_ATOMIC, &host),
		    -ERANGE);
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, mr->rkey, va + 64, 8,
					  IBV_ACCESS_REMOTE_ATOMIC, &host),
		    -ERANGE);
	/* no alignment rule for reads and writes */
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, mr->rkey, va + 3, 8,
					  IBV_ACCESS_REMOTE_WRITE, &host), 0);
	/* an atomic of length 0 is still checked */
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, 0, va, 0,
					  IBV_ACCESS_REMOTE_ATOMIC, &host),
		    -ENOKEY);
	UT_CHECK_EQ(uroce_mr_wc_status(-EINVAL, true), IBV_WC_REM_INV_REQ_ERR);
	uroce_mr_table_free(tbl);
	free(buf);
}

/* iova != addr: remote and local addresses are iovas, translated. */
static void
test_iova_mapping(void)
{
	struct uroce_mr_table *tbl = new_table(4);
	uint8_t *buf = page_buf(4);
	uint64_t iova = UINT64_C(0xabcd00000000) + 0x40;
	struct uroce_mr *mr = NULL, *zero = NULL;
	void *host;

	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf + 0x40, 3 * PAGE, iova, RW,
				 &mr), 0);
	/* zero-based, the ibv_reg_mr_iova(..., 0, ...) way */
	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf, PAGE, 0, RW, &zero), 0);
	if (mr == NULL || zero == NULL)
		return;
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, mr->rkey, iova + 5000, 100,
					  IBV_ACCESS_REMOTE_WRITE, &host), 0);
	UT_CHECK(host == buf + 0x40 + 5000);
	UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_A, mr->lkey, iova, 1, 0,
					 &host), 0);
	UT_CHECK(host == buf + 0x40);
	/* the host address itself is not an address of this region */
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, mr->rkey,
					  (uintptr_t)buf + 0x40, 8,
					  IBV_ACCESS_REMOTE_READ, &host),
		    -ERANGE);
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, zero->rkey, 0, 8,
					  IBV_ACCESS_REMOTE_READ, &host), 0);
	UT_CHECK(host == buf);
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, zero->rkey, 4088, 8,
					  IBV_ACCESS_REMOTE_ATOMIC, &host), 0);
	UT_CHECK(host == buf + 4088);
	uroce_mr_table_free(tbl);
	free(buf);
}

static void
test_zero_length(void)
{
	struct uroce_mr_table *tbl = new_table(2);
	void *host = (void *)1;

	/* no region at all, garbage key and address: nothing to check */
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, 0xdeadbeef, UINT64_MAX, 0,
					  IBV_ACCESS_REMOTE_WRITE, &host), 0);
	UT_CHECK(host == NULL);
	host = (void *)1;
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_B, 0, 0, 0,
					  IBV_ACCESS_REMOTE_READ, &host), 0);
	UT_CHECK(host == NULL);
	UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_A, 0, 0, 0,
					 IBV_ACCESS_LOCAL_WRITE, &host), 0);
	uroce_mr_table_free(tbl);
}

static void
test_table_full(void)
{
	struct uroce_mr_table *tbl = new_table(3);
	uint8_t *buf = page_buf(1);
	uint64_t va = (uintptr_t)buf;
	struct uroce_mr *mr[3] = { NULL }, *extra = NULL;
	unsigned int i;
	void *host;

	for (i = 0; i < 3; i++)
		UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf, 64, va, 0, &mr[i]), 0);
	UT_CHECK_EQ(uroce_mr_table_count(tbl), 3);
	UT_CHECK(mr[0] != NULL && mr[1] != NULL && mr[2] != NULL);
	if (mr[0] == NULL || mr[1] == NULL || mr[2] == NULL)
		return;
	UT_CHECK(mr[0]->lkey >> 8 != mr[1]->lkey >> 8);
	UT_CHECK(mr[1]->lkey >> 8 != mr[2]->lkey >> 8);
	expect_reg_fail(tbl, buf, 64, va, 0, -ENOMEM);
	/* invalid beats full */
	expect_reg_fail(tbl, buf, 0, va, 0, -EINVAL);
	UT_CHECK_EQ(uroce_mr_dereg(tbl, mr[1]), 0);
	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf, 64, va, 0, &extra), 0);
	UT_CHECK(extra == mr[1]);
	UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_A, mr[0]->lkey, va, 8, 0,
					 &host), 0);
	expect_reg_fail(tbl, buf, 64, va, 0, -ENOMEM);
	uroce_mr_table_free(tbl);
	free(buf);
}

static void
test_wc_status(void)
{
	UT_CHECK_EQ(uroce_mr_wc_status(0, false), IBV_WC_SUCCESS);
	UT_CHECK_EQ(uroce_mr_wc_status(0, true), IBV_WC_SUCCESS);
	UT_CHECK_EQ(uroce_mr_wc_status(-ENOKEY, false), IBV_WC_LOC_PROT_ERR);
	UT_CHECK_EQ(uroce_mr_wc_status(-ERANGE, false), IBV_WC_LOC_PROT_ERR);
	UT_CHECK_EQ(uroce_mr_wc_status(-EACCES, false), IBV_WC_LOC_PROT_ERR);
	UT_CHECK_EQ(uroce_mr_wc_status(-ENOKEY, true), IBV_WC_REM_ACCESS_ERR);
	UT_CHECK_EQ(uroce_mr_wc_status(-EPERM, true), IBV_WC_REM_ACCESS_ERR);
	UT_CHECK_EQ(uroce_mr_wc_status(-ERANGE, true), IBV_WC_REM_ACCESS_ERR);
	UT_CHECK_EQ(uroce_mr_wc_status(-EACCES, true), IBV_WC_REM_ACCESS_ERR);
}

/* ---------------------------------------------------------------------------
 * Checks on one thread while another registers the same slot over and over
 * with different (addr, iova) pairs: a check that passes must return the
 * host pointer of one registration, never a mix of two. A smoke test, and
 * food for TSan: the window it aims at is a few loads wide, and a table
 * without the re-check of the key passed it too in trials.
 */
#define RACE_REGS	4
#define RACE_ITERS	20000
#define RACE_IOVA(k)	((uint64_t)((k) + 1) << 32)

struct race {
	struct uroce_mr_table *tbl;
	uint8_t *buf[RACE_REGS];
	uint32_t key;		/* latest key, RELAXED; may be stale */
	bool done;
	unsigned long hits, bad;
};

static void *
race_writer(void *arg)
{
	struct race *rc = arg;
	struct uroce_mr *mr;
	unsigned int i, k, spin;

	for (i = 0; i < RACE_ITERS; i++) {
		k = i % RACE_REGS;
		if (uroce_mr_reg(rc->tbl, PD_A, rc->buf[k], 64, RACE_IOVA(k),
				 RW, &mr) != 0)
			break;
		__atomic_store_n(&rc->key, mr->rkey, __ATOMIC_RELAXED);
		/* live for a while, of varying length, so checks land on
		 * live keys and on every moment of a change
		 */
		for (spin = 0; spin < (i * 37) % 256; spin++)
			rte_pause();
		uroce_mr_dereg(rc->tbl, mr);
	}
	__atomic_store_n(&rc->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static void
race_reader(struct race *rc)
{
	uint32_t key;
	void *host;
	unsigned int k;

	while (!__atomic_load_n(&rc->done, __ATOMIC_ACQUIRE)) {
		key = __atomic_load_n(&rc->key, __ATOMIC_RELAXED);
		for (k = 0; k < RACE_REGS; k++) {
			if (uroce_mr_check_remote(rc->tbl, PD_A, key,
						  RACE_IOVA(k) + 8, 8,
						  IBV_ACCESS_REMOTE_READ,
						  &host) != 0)
				continue;
			rc->hits++;
			rc->bad += host != rc->buf[k] + 8;
		}
	}
}

static void
test_check_vs_reg_race(void)
{
	struct race rc = { .key = 0 };
	pthread_t t;
	unsigned int k;

	rc.tbl = new_table(1);
	for (k = 0; k < RACE_REGS; k++)
		rc.buf[k] = page_buf(1);
	if (!UT_CHECK_EQ(pthread_create(&t, NULL, race_writer, &rc), 0))
		return;
	race_reader(&rc);
	pthread_join(t, NULL);
	printf("reg/check race: %lu checks passed, %lu mixed\n", rc.hits,
	       rc.bad);
	UT_CHECK(rc.hits > 0);
	UT_CHECK_EQ(rc.bad, 0);
	UT_CHECK_EQ(uroce_mr_table_count(rc.tbl), 0);
	uroce_mr_table_free(rc.tbl);
	for (k = 0; k < RACE_REGS; k++)
		free(rc.buf[k]);
}

/* The memory must be mapped, readable, and writable for a region that may
 * be written: -EFAULT otherwise, with the table as it was. */
static void
test_reg_mapped(void)
{
	struct uroce_mr_table *tbl = new_table(4);
	size_t big = (size_t)1 << 30;
	uint8_t *m, *h;
	uintptr_t va;

	m = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!UT_CHECK(m != MAP_FAILED) || tbl == NULL)
		return;
	va = (uintptr_t)m;
	/* page 1 unmapped, page 2 read-only, page 3 no access */
	UT_CHECK_EQ(munmap(m + PAGE, PAGE), 0);
	UT_CHECK_EQ(mprotect(m + 2 * PAGE, PAGE, PROT_READ), 0);
	UT_CHECK_EQ(mprotect(m + 3 * PAGE, PAGE, PROT_NONE), 0);
	expect_reg_ok(tbl, m, PAGE, va, RW);
	expect_reg_fail(tbl, m, 2 * PAGE, va, 0, -EFAULT);	/* the hole */
	expect_reg_fail(tbl, m + PAGE - 8, 16, va + PAGE - 8, 0, -EFAULT);
	expect_reg_fail(tbl, m + PAGE, 8, va + PAGE, 0, -EFAULT);
	expect_reg_fail(tbl, m + 2 * PAGE, PAGE, va, IBV_ACCESS_LOCAL_WRITE,
			-EFAULT);
	expect_reg_fail(tbl, m + 2 * PAGE, PAGE, va, RW, -EFAULT);
	expect_reg_ok(tbl, m + 2 * PAGE, PAGE, va, IBV_ACCESS_REMOTE_READ);
	expect_reg_ok(tbl, m + 2 * PAGE, PAGE, va, 0);
	expect_reg_fail(tbl, m + 3 * PAGE, PAGE, va, 0, -EFAULT);
	expect_reg_fail(tbl, m + 2 * PAGE, 2 * PAGE, va, 0, -EFAULT);
	UT_CHECK_EQ(munmap(m, 4 * PAGE), 0);
	/* a refusal changes nothing: the next registration works */
	h = page_buf(1);
	expect_reg_ok(tbl, h, PAGE, (uintptr_t)h, RW);
	free(h);
	/* 1 GiB, never touched: its pages need not be present */
	m = mmap(NULL, big, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (UT_CHECK(m != MAP_FAILED)) {
		expect_reg_ok(tbl, m, big, (uintptr_t)m, RW);
		UT_CHECK_EQ(mprotect(m + big - PAGE, PAGE, PROT_READ), 0);
		expect_reg_fail(tbl, m, big, (uintptr_t)m, RW, -EFAULT);
		expect_reg_ok(tbl, m, big, (uintptr_t)m, IBV_ACCESS_REMOTE_READ);
		UT_CHECK_EQ(munmap(m, big), 0);
	}
	UT_CHECK_EQ(uroce_mr_table_count(tbl), 0);
	uroce_mr_table_free(tbl);
}

/* On demand: memory need not be mapped at registration; the implicit
 * region is the whole address space, each address itself; the prefetch
 * checks of ibv_advise_mr(3). */
static void
test_reg_odp(void)
{
	const unsigned int odp = RW | IBV_ACCESS_ON_DEMAND;
	struct uroce_mr_table *tbl = new_table(4);
	struct uroce_mr *mr = NULL, *pin = NULL;
	uint8_t *m, *buf = page_buf(1);
	void *host;

	m = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!UT_CHECK(m != MAP_FAILED) || tbl == NULL || buf == NULL)
		return;
	UT_CHECK_EQ(munmap(m, 2 * PAGE), 0);
	expect_reg_fail(tbl, m, 2 * PAGE, (uintptr_t)m, RW, -EFAULT);
	expect_reg_ok(tbl, m, 2 * PAGE, (uintptr_t)m, odp);
	/* implicit: NULL, SIZE_MAX, iova 0; at another iova EINVAL; NULL
	 * with another length or without ON_DEMAND stays EFAULT */
	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, NULL, SIZE_MAX, 0, odp, &mr), 0);
	if (UT_CHECK(mr != NULL)) {
		UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, mr->rkey,
						  (uintptr_t)buf, 8,
						  IBV_ACCESS_REMOTE_WRITE,
						  &host), 0);
		UT_CHECK(host == buf);
		UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_A, mr->lkey,
						 (uintptr_t)m, PAGE,
						 IBV_ACCESS_LOCAL_WRITE, &host),
			    0);
		UT_CHECK(host == m);
	}
	expect_reg_fail(tbl, NULL, SIZE_MAX, PAGE, odp, -EINVAL);
	expect_reg_fail(tbl, NULL, PAGE, 0, odp, -EFAULT);
	expect_reg_fail(tbl, NULL, SIZE_MAX, 0, RW, -EFAULT);
	/* advise: ODP regions only (-ENOENT), PD and write right (-EPERM),
	 * bounds (-EFAULT) */
	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf, PAGE, (uintptr_t)buf,
				 IBV_ACCESS_REMOTE_READ, &pin), 0);
	if (UT_CHECK(mr != NULL && pin != NULL)) {
		UT_CHECK_EQ(uroce_mr_check_advise(tbl, PD_A, mr->lkey,
						  (uintptr_t)buf, PAGE, true,
						  &host), 0);
		UT_CHECK(host == buf);
		UT_CHECK_EQ(uroce_mr_check_advise(tbl, PD_A, pin->lkey,
						  (uintptr_t)buf, 8, false,
						  &host), -ENOENT);
		UT_CHECK_EQ(uroce_mr_check_advise(tbl, PD_A, mr->lkey + 1, 0,
						  8, false, &host), -ENOENT);
		UT_CHECK_EQ(uroce_mr_check_advise(tbl, PD_B, mr->lkey,
						  (uintptr_t)buf, 8, false,
						  &host), -EPERM);
		UT_CHECK_EQ(uroce_mr_check_advise(tbl, PD_A, mr->lkey,
						  SIZE_MAX - 4, 8, false,
						  &host), -EFAULT);
		UT_CHECK_EQ(uroce_mr_dereg(tbl, pin), 0);
		UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, buf, PAGE, (uintptr_t)buf,
					 IBV_ACCESS_ON_DEMAND, &pin), 0);
		UT_CHECK_EQ(uroce_mr_check_advise(tbl, PD_A, pin->lkey,
						  (uintptr_t)buf, 8, true,
						  &host), -EPERM);
		UT_CHECK_EQ(uroce_mr_dereg(tbl, pin), 0);
		UT_CHECK_EQ(uroce_mr_dereg(tbl, mr), 0);
	}
	UT_CHECK_EQ(uroce_mr_table_count(tbl), 0);
	uroce_mr_table_free(tbl);
	free(buf);
}

/* Re-registration in place: the same keys, the new fields; refused
 * changes leave the region as it was; the keys fail between the steps. */
static void
test_rereg(void)
{
	struct uroce_mr_table *tbl = new_table(4);
	uint8_t *a = page_buf(2), *b = page_buf(1);
	struct uroce_mr *mr = NULL;
	uint32_t key;
	void *host;

	if (tbl == NULL || a == NULL || b == NULL)
		return;
	UT_CHECK_EQ(uroce_mr_reg(tbl, PD_A, a, 2 * PAGE, (uintptr_t)a,
				 IBV_ACCESS_LOCAL_WRITE, &mr), 0);
	if (mr == NULL)
		return;
	key = mr->rkey;
	/* Refused: remote write without local write; a range that wraps. */
	UT_CHECK_EQ(uroce_mr_rereg_begin(tbl, mr, a, PAGE, (uintptr_t)a,
					 IBV_ACCESS_REMOTE_WRITE), -EINVAL);
	UT_CHECK_EQ(uroce_mr_rereg_begin(tbl, mr, a, SIZE_MAX, (uintptr_t)a,
					 IBV_ACCESS_LOCAL_WRITE), -EINVAL);
	UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_A, key, (uintptr_t)a + PAGE,
					 8, IBV_ACCESS_LOCAL_WRITE, &host), 0);
	/* b, remote write, PD_B, same key. */
	UT_CHECK_EQ(uroce_mr_rereg_begin(tbl, mr, b, PAGE, 0x10000,
					 IBV_ACCESS_LOCAL_WRITE |
					 IBV_ACCESS_REMOTE_WRITE), 0);
	UT_CHECK_EQ(uroce_mr_check_local(tbl, PD_A, key, (uintptr_t)a, 8, 0,
					 &host), -UROCE_MR_EKEY);
	uroce_mr_rereg_end(tbl, mr, PD_B, b, PAGE, 0x10000,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	UT_CHECK_EQ(mr->rkey, key);
	UT_CHECK_EQ(mr->lkey, key);
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_B, key, 0x10000 + 8, 8,
					  IBV_ACCESS_REMOTE_WRITE, &host), 0);
	UT_CHECK(host == b + 8);
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_A, key, 0x10000, 8,
					  IBV_ACCESS_REMOTE_WRITE, &host),
		    -UROCE_MR_EPD);
	UT_CHECK_EQ(uroce_mr_check_remote(tbl, PD_B, key, 0x10000 + PAGE, 8,
					  IBV_ACCESS_REMOTE_WRITE, &host),
		    -UROCE_MR_ERANGE);
	UT_CHECK_EQ(uroce_mr_table_count(tbl), 1);
	UT_CHECK_EQ(uroce_mr_dereg(tbl, mr), 0);
	uroce_mr_table_free(tbl);
	free(a);
	free(b);
}

int
main(void)
{
	test_table_create();
	test_reg_access();
	test_reg_range();
	test_forged_keys();
	test_stale_keys();
	test_dereg_bogus();
	test_pd_isolation();
	test_access_rights();
	test_bounds();
	test_atomic_align();
	test_iova_mapping();
	test_zero_length();
	test_table_full();
	test_reg_mapped();
	test_reg_odp();
	test_wc_status();
	test_check_vs_reg_race();
	test_rereg();
	return ut_summary();
}
