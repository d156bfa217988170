/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * Memory windows in the key table (lib/transport/mr.c): alloc, bind,
 * unbind, invalidate, stale keys, a type 2 window bound to one QP, the
 * bind errors, dereg of a bound MR, and checks racing with binds on
 * another thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_pause.h>

#include "uroce_mr.h"
#include "uroce_test.h"

#define PAGE	UROCE_MR_PAGE_SIZE
#define RW	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ)
#define BINDABLE (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND)

static const int pd_a = 1, pd_b = 2, qp_x = 3, qp_y = 4;
#define PD_A	((const void *)&pd_a)
#define PD_B	((const void *)&pd_b)
#define QP_X	((const void *)&qp_x)
#define QP_Y	((const void *)&qp_y)

struct fix {
	struct uroce_mr_table *tbl;
	uint8_t *buf;
	uint64_t iova;
	struct uroce_mr *mr;
};

static void
fix_init(struct fix *f, unsigned int access)
{
	f->buf = aligned_alloc(PAGE, 4 * PAGE);
	memset(f->buf, 0, 4 * PAGE);
	f->iova = 0x100000;
	UT_CHECK_EQ(uroce_mr_table_create(16, 7, &f->tbl), 0);
	UT_CHECK_EQ(uroce_mr_reg(f->tbl, PD_A, f->buf, 4 * PAGE, f->iova,
				 access, &f->mr), 0);
}

static void
fix_fini(struct fix *f)
{
	uroce_mr_table_free(f->tbl);
	free(f->buf);
}

static struct uroce_mw_bind
bind_of(const struct fix *f, uint32_t mw_key, uint64_t off, uint64_t len,
	unsigned int access, const void *qp)
{
	struct uroce_mw_bind b = {
		.pd = PD_A, .qp = qp, .mw_key = mw_key,
		.new_key = ibv_inc_rkey(mw_key), .mr_lkey = f->mr->lkey,
		.access = access, .addr = f->iova + off, .length = len,
	};
	return b;
}

static int
remote(const struct fix *f, const void *qp, uint32_t key, uint64_t off,
       uint64_t len, unsigned int need, void **host)
{
	return uroce_mr_check_remote_qp(f->tbl, PD_A, qp, key, f->iova + off,
					len, need, host);
}

/* Type 1: unbound keys fail, a bound window reaches the MR's bytes in its
 * range with its rights, a rebind moves it (old key dead), length 0
 * unbinds. */
static void
test_type1(void)
{
	struct fix f;
	struct uroce_mw_bind b;
	uint32_t k0;
	void *host;

	fix_init(&f, BINDABLE);
	UT_CHECK_EQ(uroce_mw_alloc(f.tbl, PD_A, IBV_MW_TYPE_1, &k0), 0);
	UT_CHECK((k0 >> UROCE_MR_KEY_SHIFT) != (f.mr->lkey >> UROCE_MR_KEY_SHIFT));
	UT_CHECK_EQ(remote(&f, NULL, k0, 0, 8, IBV_ACCESS_REMOTE_READ, &host),
		    -UROCE_MR_EKEY);
	b = bind_of(&f, k0, PAGE, 256, IBV_ACCESS_REMOTE_READ, QP_X);
	UT_CHECK_EQ(uroce_mw_bind(f.tbl, &b), 0);
	UT_CHECK_EQ(uroce_mw_bound_count(f.tbl), 1);
	UT_CHECK_EQ(remote(&f, NULL, b.new_key, PAGE + 8, 8,
			   IBV_ACCESS_REMOTE_READ, &host), 0);
	UT_CHECK(host == f.buf + PAGE + 8);
	/* any QP, its range, its rights */
	UT_CHECK_EQ(remote(&f, QP_Y, b.new_key, PAGE, 256,
			   IBV_ACCESS_REMOTE_READ, &host), 0);
	UT_CHECK_EQ(remote(&f, NULL, b.new_key, PAGE, 257,
			   IBV_ACCESS_REMOTE_READ, &host), -UROCE_MR_ERANGE);
	UT_CHECK_EQ(remote(&f, NULL, b.new_key, PAGE - 1, 2,
			   IBV_ACCESS_REMOTE_READ, &host), -UROCE_MR_ERANGE);
	UT_CHECK_EQ(remote(&f, NULL, b.new_key, PAGE, 8,
			   IBV_ACCESS_REMOTE_WRITE, &host), -UROCE_MR_EACCES);
	UT_CHECK_EQ(uroce_mr_check_remote_qp(f.tbl, PD_B, NULL, b.new_key,
					     f.iova + PAGE, 8,
					     IBV_ACCESS_REMOTE_READ, &host),
		    -UROCE_MR_EPD);
	/* a window has no L_Key */
	UT_CHECK_EQ(uroce_mr_check_local(f.tbl, PD_A, b.new_key, f.iova + PAGE,
					 8, 0, &host), -UROCE_MR_EKEY);
	/* the MR cannot go while a window is bound to it */
	UT_CHECK_EQ(uroce_mr_dereg(f.tbl, f.mr), -EBUSY);
	UT_CHECK_EQ(remote(&f, NULL, f.mr->rkey, 0, 8, 0, &host), 0);
	/* rebind: moved, the old key dead */
	{
		struct uroce_mw_bind b2 = bind_of(&f, b.new_key, 0, 64,
						  IBV_ACCESS_REMOTE_WRITE, QP_X);

		UT_CHECK_EQ(uroce_mw_bind(f.tbl, &b2), 0);
		UT_CHECK_EQ(remote(&f, NULL, b.new_key, PAGE, 8,
				   IBV_ACCESS_REMOTE_READ, &host),
			    -UROCE_MR_EKEY);
		UT_CHECK_EQ(remote(&f, NULL, b2.new_key, 0, 64,
				   IBV_ACCESS_REMOTE_WRITE, &host), 0);
		UT_CHECK_EQ(uroce_mw_bound_count(f.tbl), 1);
		/* type 1 cannot be invalidated */
		UT_CHECK_EQ(uroce_mw_invalidate(f.tbl, PD_A, QP_X, b2.new_key),
			    -EINVAL);
		/* length 0 unbinds */
		b = bind_of(&f, b2.new_key, 0, 0, 0, QP_X);
		b.mr_lkey = 0;
		UT_CHECK_EQ(uroce_mw_bind(f.tbl, &b), 0);
		UT_CHECK_EQ(remote(&f, NULL, b2.new_key, 0, 8,
				   IBV_ACCESS_REMOTE_WRITE, &host),
			    -UROCE_MR_EKEY);
	}
	UT_CHECK_EQ(uroce_mw_bound_count(f.tbl), 0);
	UT_CHECK_EQ(uroce_mr_dereg(f.tbl, f.mr), 0);
	UT_CHECK_EQ(uroce_mw_dealloc(f.tbl, k0), 0);
	UT_CHECK_EQ(uroce_mw_dealloc(f.tbl, k0), -EINVAL);
	UT_CHECK_EQ(uroce_mr_table_count(f.tbl), 0);
	fix_fini(&f);
}

/* Type 2B: only through its QP; bound once; invalidated by key, by its QP
 * and PD only; the invalidated key is dead; dealloc of a bound one. */
static void
test_type2(void)
{
	struct fix f;
	struct uroce_mw_bind b, b2;
	uint32_t k0;
	void *host;

	fix_init(&f, BINDABLE);
	UT_CHECK_EQ(uroce_mw_alloc(f.tbl, PD_A, IBV_MW_TYPE_2, &k0), 0);
	b = bind_of(&f, k0, 0, PAGE, IBV_ACCESS_REMOTE_WRITE, QP_X);
	UT_CHECK_EQ(uroce_mw_bind(f.tbl, &b), 0);
	UT_CHECK_EQ(remote(&f, QP_X, b.new_key, 0, PAGE,
			   IBV_ACCESS_REMOTE_WRITE, &host), 0);
	UT_CHECK(host == f.buf);
	UT_CHECK_EQ(remote(&f, QP_Y, b.new_key, 0, 8, IBV_ACCESS_REMOTE_WRITE,
			   &host), -UROCE_MR_EACCES);
	UT_CHECK_EQ(uroce_mr_check_remote(f.tbl, PD_A, b.new_key, f.iova, 8,
					  IBV_ACCESS_REMOTE_WRITE, &host),
		    -UROCE_MR_EACCES);
	/* bound: no second bind */
	b2 = bind_of(&f, b.new_key, 0, 8, IBV_ACCESS_REMOTE_WRITE, QP_X);
	UT_CHECK_EQ(uroce_mw_bind(f.tbl, &b2), -EBUSY);
	/* invalidate: wrong key, QP, PD, then right */
	UT_CHECK_EQ(uroce_mw_invalidate(f.tbl, PD_A, QP_X, k0), -ENOKEY);
	UT_CHECK_EQ(uroce_mw_invalidate(f.tbl, PD_A, QP_Y, b.new_key), -EACCES);
	UT_CHECK_EQ(uroce_mw_invalidate(f.tbl, PD_B, QP_X, b.new_key), -EPERM);
	UT_CHECK_EQ(uroce_mw_invalidate(f.tbl, PD_A, QP_X, f.mr->rkey), -EINVAL);
	UT_CHECK_EQ(uroce_mw_invalidate(f.tbl, PD_A, QP_X, b.new_key), 0);
	UT_CHECK_EQ(remote(&f, QP_X, b.new_key, 0, 8, IBV_ACCESS_REMOTE_WRITE,
			   &host), -UROCE_MR_EKEY);
	UT_CHECK_EQ(uroce_mw_invalidate(f.tbl, PD_A, QP_X, b.new_key), -ENOKEY);
	UT_CHECK_EQ(uroce_mw_bound_count(f.tbl), 0);
	/* bound again, then the QP goes: unbound */
	UT_CHECK_EQ(uroce_mw_bind(f.tbl, &b2), 0);
	uroce_mw_unbind_qp(f.tbl, QP_Y);
	UT_CHECK_EQ(uroce_mw_bound_count(f.tbl), 1);
	uroce_mw_unbind_qp(f.tbl, QP_X);
	UT_CHECK_EQ(uroce_mw_bound_count(f.tbl), 0);
	/* dealloc of a bound window frees the MR */
	b = bind_of(&f, b2.new_key, 0, 8, IBV_ACCESS_REMOTE_WRITE, QP_X);
	UT_CHECK_EQ(uroce_mw_bind(f.tbl, &b), 0);
	UT_CHECK_EQ(uroce_mr_dereg(f.tbl, f.mr), -EBUSY);
	UT_CHECK_EQ(uroce_mw_dealloc(f.tbl, k0), 0);
	UT_CHECK_EQ(remote(&f, QP_X, b.new_key, 0, 8, IBV_ACCESS_REMOTE_WRITE,
			   &host), -UROCE_MR_EKEY);
	UT_CHECK_EQ(uroce_mr_dereg(f.tbl, f.mr), 0);
	fix_fini(&f);
}

/* Bind errors, each leaving the window unbound. */
static void
test_bind_errors(void)
{
	struct fix f;
	struct uroce_mr *plain, *ro;
	struct uroce_mw_bind b;
	uint32_t k, kb;
	void *host;

	fix_init(&f, BINDABLE);
	UT_CHECK_EQ(uroce_mr_reg(f.tbl, PD_A, f.buf, PAGE, 0x900000, RW,
				 &plain), 0);
	UT_CHECK_EQ(uroce_mr_reg(f.tbl, PD_A, f.buf, PAGE, 0xa00000,
				 IBV_ACCESS_MW_BIND, &ro), 0);
	UT_CHECK_EQ(uroce_mw_alloc(f.tbl, PD_A, 3, &k), -EINVAL);
	UT_CHECK_EQ(uroce_mw_alloc(f.tbl, PD_A, IBV_MW_TYPE_2, &k), 0);
	UT_CHECK_EQ(uroce_mw_alloc(f.tbl, PD_B, IBV_MW_TYPE_2, &kb), 0);
	b = bind_of(&f, k, 0, 64, IBV_ACCESS_REMOTE_READ, QP_X);
	b.new_key = k + (1u << UROCE_MR_KEY_SHIFT);	/* another index */
	UT_CHECK_EQ(uroce_mw_bind(f.tbl, &b), -EINVAL);
	b = bind_of(&f, f.mr->lkey, 0, 64, IBV_ACCESS_REMOTE_READ, QP_X);
	UT_CHECK_EQ(uroce_mw_bind(f.tbl, &b), -EINVAL);	/* an MR, not a window */
	b = bind_of(&f, kb, 0, 64, IBV_ACCESS_REMOTE_READ, QP_X);
	UT_CHECK_EQ(uroce_mw_bind(f.tbl, &b), -EPERM);	/* window of PD B */
	b = bind_of(&f, k, 0, 64, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND,
		    QP_X);
	UT_CHECK_EQ(uroce_mw_bind(f.tbl, &b), -EINVAL);
	b = bind_of(&f, k, 0, 64, IBV_ACCESS_REMOTE_READ, QP_X);
	b.mr_lkey = plain->lkey;
	b.addr = 0x900000;
	UT_CHECK_EQ(uroce_mw_bind(f.tbl, &b), -EACCES);	/* MR without MW_BIND */
	b.mr_lkey = ro->lkey;
	b.addr = 0xa00000;
	b.access = IBV_ACCESS_REMOTE_WRITE;
	UT_CHECK_EQ(uroce_mw_bind(f.tbl, &b), -EACCES);	/* no local write */
	b.access = IBV_ACCESS_REMOTE_READ;
	b.length = PAGE + 1;
	UT_CHECK_EQ(uroce_mw_bind(f.tbl, &b), -ERANGE);
	b.mr_lkey = 0x12345600;
	UT_CHECK_EQ(uroce_mw_bind(f.tbl, &b), -ENOKEY);
	UT_CHECK_EQ(uroce_mw_bound_count(f.tbl), 0);
	UT_CHECK_EQ(remote(&f, QP_X, ibv_inc_rkey(k), 0, 8,
			   IBV_ACCESS_REMOTE_READ, &host), -UROCE_MR_EKEY);
	/* LOCAL_WRITE in the window's flags is ignored (pyverbs passes it) */
	b = bind_of(&f, k, 0, 64, IBV_ACCESS_REMOTE_READ |
		    IBV_ACCESS_LOCAL_WRITE, QP_X);
	UT_CHECK_EQ(uroce_mw_bind(f.tbl, &b), 0);
	fix_fini(&f);
}

/* Checks racing with binds and invalidations of one window on another
 * thread: a check that passes sees one binding whole (the host address
 * matches the range its key was bound to). */
#define RACE_ITERS	20000u

struct race {
	struct fix f;
	uint32_t mw;
	uint32_t key;
	bool done;
	unsigned long hits, bad;
};

static void *
race_writer(void *arg)
{
	struct race *rc = arg;
	uint32_t key = rc->mw;
	unsigned int i, spin;

	for (i = 0; i < RACE_ITERS; i++) {
		struct uroce_mw_bind b = bind_of(&rc->f, key, (i % 4) * PAGE,
						 PAGE, IBV_ACCESS_REMOTE_READ,
						 QP_X);

		if (uroce_mw_bind(rc->f.tbl, &b) != 0)
			break;
		key = b.new_key;
		__atomic_store_n(&rc->key, key, __ATOMIC_RELAXED);
		for (spin = 0; spin < (i * 37) % 256; spin++)
			rte_pause();
		if (uroce_mw_invalidate(rc->f.tbl, PD_A, QP_X, key) != 0)
			break;
	}
	__atomic_store_n(&rc->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static void
test_bind_vs_check_race(void)
{
	struct race rc;
	pthread_t t;
	void *host;

	memset(&rc, 0, sizeof(rc));
	fix_init(&rc.f, BINDABLE);
	UT_CHECK_EQ(uroce_mw_alloc(rc.f.tbl, PD_A, IBV_MW_TYPE_2, &rc.mw), 0);
	if (!UT_CHECK_EQ(pthread_create(&t, NULL, race_writer, &rc), 0))
		return;
	while (!__atomic_load_n(&rc.done, __ATOMIC_ACQUIRE)) {
		uint32_t key = __atomic_load_n(&rc.key, __ATOMIC_RELAXED);
		unsigned int k;

		for (k = 0; k < 4; k++) {
			if (remote(&rc.f, QP_X, key, k * PAGE + 8, 8,
				   IBV_ACCESS_REMOTE_READ, &host) != 0)
				continue;
			rc.hits++;
			rc.bad += host != rc.f.buf + k * PAGE + 8;
		}
	}
	pthread_join(t, NULL);
	printf("bind/check race: %lu checks passed, %lu mixed\n", rc.hits,
	       rc.bad);
	UT_CHECK(rc.hits > 0);
	UT_CHECK_EQ(rc.bad, 0);
	UT_CHECK_EQ(uroce_mw_bound_count(rc.f.tbl), 0);
	fix_fini(&rc.f);
}

int
main(void)
{
	test_type1();
	test_type2();
	test_bind_errors();
	test_bind_vs_check_race();
	return ut_summary();
}
