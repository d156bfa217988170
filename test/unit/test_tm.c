/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * The tag-matching engine (lib/transport/tm.c) on plain data: create
 * limits, ibv_post_srq_ops() rules (errors change nothing, handles, stale
 * DEL, max_ops), matching in posting order with masks, the phase rules
 * (tags added out of sync never match, SYNC_REQ on every completion while
 * out of sync), TMH/RVH parse and build with every short length, and the
 * tm_info packing of completions.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>

#include "uroce_test.h"
#include "uroce_tm.h"

/* Completions the ops produce, in order. */
static struct ibv_wc wcs[64];
static unsigned int n_wc;

static void
collect(void *ctx, const struct ibv_wc *wc)
{
	(void)ctx;
	if (n_wc < RTE_DIM(wcs))
		wcs[n_wc] = *wc;
	n_wc++;
}

static struct uroce_tm *
make(uint32_t tags, uint32_t ops)
{
	struct ibv_tm_cap cap = { .max_num_tags = tags, .max_ops = ops };
	struct uroce_tm *tm = NULL;

	UT_CHECK_EQ(uroce_tm_create(&cap, &tm), 0);
	n_wc = 0;
	return tm;
}

static struct ibv_sge sge_buf = { .addr = 0x1000, .length = 64, .lkey = 7 };

/* Post one ADD; @return its handle. */
static uint32_t
add(struct uroce_tm *tm, uint64_t tag, uint64_t mask, uint64_t recv_wr_id,
    int flags, uint32_t cnt)
{
	struct ibv_ops_wr wr = {
		.wr_id = 100 + recv_wr_id, .opcode = IBV_WR_TAG_ADD,
		.flags = flags,
	};
	struct ibv_ops_wr *bad = NULL;

	wr.tm.unexpected_cnt = cnt;
	wr.tm.add.recv_wr_id = recv_wr_id;
	wr.tm.add.sg_list = &sge_buf;
	wr.tm.add.num_sge = 1;
	wr.tm.add.tag = tag;
	wr.tm.add.mask = mask;
	UT_CHECK_EQ(uroce_tm_post_ops(tm, &wr, &bad, collect, NULL), 0);
	UT_CHECK(bad == NULL);
	return wr.tm.handle;
}

static int
del(struct uroce_tm *tm, uint32_t handle, int flags)
{
	struct ibv_ops_wr wr = {
		.wr_id = 555, .opcode = IBV_WR_TAG_DEL, .flags = flags,
	};
	struct ibv_ops_wr *bad = NULL;

	wr.tm.handle = handle;
	return uroce_tm_post_ops(tm, &wr, &bad, collect, NULL);
}

static void
sync_to(struct uroce_tm *tm, uint32_t cnt, int flags)
{
	struct ibv_ops_wr wr = {
		.wr_id = 777, .opcode = IBV_WR_TAG_SYNC, .flags = flags,
	};

	wr.tm.unexpected_cnt = cnt;
	UT_CHECK_EQ(uroce_tm_post_ops(tm, &wr, NULL, collect, NULL), 0);
}

static struct uroce_tm_msg
eager(uint64_t tag)
{
	struct uroce_tm_msg m = { .op = IBV_TMH_EAGER, .tag = tag };

	return m;
}

static uint64_t
match_wr_id(struct uroce_tm *tm, uint64_t tag)
{
	struct uroce_tm_msg m = eager(tag);
	uint32_t slot = uroce_tm_match(tm, &m);

	return slot == UROCE_TM_NIL ? UINT64_MAX : tm->tags[slot].wr_id;
}

/* ---------------------------------------------------------------------------
 */
static void
test_create(void)
{
	struct ibv_tm_cap cap = { .max_num_tags = 0, .max_ops = 1 };
	struct uroce_tm *tm = NULL;

	UT_CHECK_EQ(uroce_tm_create(&cap, &tm), -EINVAL);
	cap.max_num_tags = UROCE_TM_MAX_TAGS + 1;
	UT_CHECK_EQ(uroce_tm_create(&cap, &tm), -EINVAL);
	cap.max_num_tags = 4;
	cap.max_ops = 0;
	UT_CHECK_EQ(uroce_tm_create(&cap, &tm), -EINVAL);
	cap.max_ops = UROCE_TM_MAX_OPS + 1;
	UT_CHECK_EQ(uroce_tm_create(&cap, &tm), -EINVAL);
	UT_CHECK(tm == NULL);
	cap.max_ops = UROCE_TM_MAX_OPS;
	cap.max_num_tags = UROCE_TM_MAX_TAGS;
	UT_CHECK_EQ(uroce_tm_create(&cap, &tm), 0);
	UT_CHECK(tm != NULL && tm->n_listed == 0 && tm->head == UROCE_TM_NIL);
	uroce_tm_destroy(tm);
}

/* Bad ops stop the list at themselves and change nothing. */
static void
test_op_errors(void)
{
	struct uroce_tm *tm = make(2, 3);
	struct ibv_ops_wr w[4], *bad = NULL;
	struct ibv_sge two[2] = { sge_buf, sge_buf };
	unsigned int i;

	memset(w, 0, sizeof(w));
	for (i = 0; i < RTE_DIM(w); i++) {
		w[i].opcode = IBV_WR_TAG_SYNC;
		w[i].next = i + 1 < RTE_DIM(w) ? &w[i + 1] : NULL;
	}
	/* Unknown opcode. */
	w[1].opcode = (enum ibv_ops_wr_opcode)3;
	UT_CHECK_EQ(uroce_tm_post_ops(tm, &w[0], &bad, collect, NULL), -EINVAL);
	UT_CHECK(bad == &w[1]);
	UT_CHECK_EQ(tm->stats.syncs, 1);
	/* Unknown flag. */
	w[1].opcode = IBV_WR_TAG_SYNC;
	w[1].flags = 1 << 5;
	UT_CHECK_EQ(uroce_tm_post_ops(tm, &w[1], &bad, collect, NULL), -EINVAL);
	UT_CHECK(bad == &w[1]);
	w[1].flags = 0;
	/* More than max_ops in one list: -ENOMEM at the fourth. */
	bad = NULL;
	UT_CHECK_EQ(uroce_tm_post_ops(tm, &w[0], &bad, collect, NULL), -ENOMEM);
	UT_CHECK(bad == &w[3]);
	UT_CHECK_EQ(tm->stats.syncs, 4);
	/* ADD: two SGEs, negative, NULL list. */
	w[0].next = NULL;
	w[0].opcode = IBV_WR_TAG_ADD;
	w[0].tm.add.sg_list = two;
	w[0].tm.add.num_sge = 2;
	UT_CHECK_EQ(uroce_tm_post_ops(tm, &w[0], &bad, collect, NULL), -EINVAL);
	w[0].tm.add.num_sge = -1;
	UT_CHECK_EQ(uroce_tm_post_ops(tm, &w[0], &bad, collect, NULL), -EINVAL);
	w[0].tm.add.num_sge = 1;
	w[0].tm.add.sg_list = NULL;
	UT_CHECK_EQ(uroce_tm_post_ops(tm, &w[0], &bad, collect, NULL), -EINVAL);
	UT_CHECK_EQ(tm->n_listed, 0);
	/* Zero SGEs is a tagged buffer of no bytes. */
	w[0].tm.add.num_sge = 0;
	UT_CHECK_EQ(uroce_tm_post_ops(tm, &w[0], &bad, collect, NULL), 0);
	add(tm, 1, ~0ull, 1, 0, 0);
	/* The list is full: ENOMEM, nothing added. */
	w[0].tm.add.num_sge = 1;
	w[0].tm.add.sg_list = &sge_buf;
	UT_CHECK_EQ(uroce_tm_post_ops(tm, &w[0], &bad, collect, NULL), -ENOMEM);
	UT_CHECK_EQ(tm->n_listed, 2);
	/* DEL of a slot outside the table. */
	UT_CHECK_EQ(del(tm, 2, 0), -EINVAL);
	UT_CHECK_EQ(tm->n_listed, 2);
	/* Unsignaled good ops made no completion. */
	UT_CHECK_EQ(n_wc, 0);
	uroce_tm_destroy(tm);
}

static void
test_add_del(void)
{
	struct uroce_tm *tm = make(4, 16);
	uint32_t h1, h2, h3;

	h1 = add(tm, 10, ~0ull, 1, IBV_OPS_SIGNALED, 0);
	h2 = add(tm, 20, ~0ull, 2, 0, 0);
	h3 = add(tm, 30, ~0ull, 3, IBV_OPS_SIGNALED, 0);
	UT_CHECK(h1 != h2 && h2 != h3 && h1 != h3);
	UT_CHECK_EQ(tm->n_listed, 3);
	UT_CHECK_EQ(n_wc, 2);
	UT_CHECK_EQ(wcs[0].opcode, IBV_WC_TM_ADD);
	UT_CHECK_EQ(wcs[0].wr_id, 101);
	UT_CHECK_EQ(wcs[0].status, IBV_WC_SUCCESS);
	UT_CHECK_EQ(wcs[0].wc_flags, 0);
	UT_CHECK_EQ(wcs[1].wr_id, 103);
	/* DEL from the middle: the others still match, in order. */
	n_wc = 0;
	UT_CHECK_EQ(del(tm, h2, IBV_OPS_SIGNALED), 0);
	UT_CHECK_EQ(n_wc, 1);
	UT_CHECK_EQ(wcs[0].opcode, IBV_WC_TM_DEL);
	UT_CHECK_EQ(wcs[0].status, IBV_WC_SUCCESS);
	UT_CHECK_EQ(wcs[0].wr_id, 555);
	UT_CHECK_EQ(tm->n_listed, 2);
	UT_CHECK_EQ(match_wr_id(tm, 20), UINT64_MAX);
	UT_CHECK_EQ(match_wr_id(tm, 10), 1);
	UT_CHECK_EQ(match_wr_id(tm, 30), 3);
	/* DEL again, unsignaled: TM_ERR completes anyway, nothing changes. */
	n_wc = 0;
	UT_CHECK_EQ(del(tm, h2, 0), 0);
	UT_CHECK_EQ(n_wc, 1);
	UT_CHECK_EQ(wcs[0].status, IBV_WC_TM_ERR);
	UT_CHECK_EQ(wcs[0].opcode, IBV_WC_TM_DEL);
	UT_CHECK_EQ(tm->n_listed, 2);
	UT_CHECK_EQ(tm->stats.del_fail, 1);
	/* The freed slot is reused last (FIFO) and under a new handle; the
	 * stale handle never removes the new tag. */
	add(tm, 40, ~0ull, 4, 0, 0);
	h2 = add(tm, 50, ~0ull, 5, 0, 0);
	UT_CHECK_EQ(tm->n_listed, 4);
	n_wc = 0;
	UT_CHECK_EQ(del(tm, h2 ^ (1u << 16), 0), 0);
	UT_CHECK_EQ(n_wc, 1);
	UT_CHECK_EQ(wcs[0].status, IBV_WC_TM_ERR);
	UT_CHECK_EQ(match_wr_id(tm, 50), 5);
	/* Consumed tags cannot be deleted either. */
	{
		struct uroce_tm_msg m = eager(10);
		uint32_t slot = uroce_tm_match(tm, &m);

		UT_CHECK(slot != UROCE_TM_NIL);
		uroce_tm_take(tm, slot, &m);
		n_wc = 0;
		UT_CHECK_EQ(del(tm, h1, IBV_OPS_SIGNALED), 0);
		UT_CHECK_EQ(wcs[0].status, IBV_WC_TM_ERR);
		uroce_tm_release(tm, slot);
		UT_CHECK_EQ(tm->tags[slot].state, UROCE_TM_FREE);
	}
	UT_CHECK_EQ(tm->n_listed, 3);
	uroce_tm_destroy(tm);
}

/* MPI: the oldest posted receive that matches, masks as wildcards. */
static void
test_match_order(void)
{
	struct uroce_tm *tm = make(8, 16);
	struct uroce_tm_msg m;
	uint32_t slot;

	add(tm, 0x1200, 0xff00, 1, 0, 0);	/* any 0x12xx */
	add(tm, 0x1234, ~0ull, 2, 0, 0);	/* exactly 0x1234 */
	add(tm, 0x0, 0, 3, 0, 0);		/* anything */
	add(tm, 0x1234, ~0ull, 4, 0, 0);
	UT_CHECK_EQ(match_wr_id(tm, 0x1234), 1);
	UT_CHECK_EQ(match_wr_id(tm, 0x9999), 3);
	m = eager(0x1234);
	slot = uroce_tm_match(tm, &m);
	uroce_tm_take(tm, slot, &m);
	UT_CHECK_EQ(match_wr_id(tm, 0x1234), 2);
	UT_CHECK_EQ(match_wr_id(tm, 0x12ff), 3);
	slot = uroce_tm_match(tm, &m);
	uroce_tm_take(tm, slot, &m);
	slot = uroce_tm_match(tm, &m);
	UT_CHECK_EQ(tm->tags[slot].wr_id, 3);
	uroce_tm_take(tm, slot, &m);
	UT_CHECK_EQ(match_wr_id(tm, 0x1234), 4);
	UT_CHECK_EQ(match_wr_id(tm, 0x1235), UINT64_MAX);
	/* Only EAGER and RNDV match. */
	m.op = IBV_TMH_RNDV;
	UT_CHECK(uroce_tm_match(tm, &m) != UROCE_TM_NIL);
	m.op = IBV_TMH_FIN;
	UT_CHECK(uroce_tm_match(tm, &m) == UROCE_TM_NIL);
	m.op = IBV_TMH_NO_TAG;
	UT_CHECK(uroce_tm_match(tm, &m) == UROCE_TM_NIL);
	UT_CHECK_EQ(tm->stats.matched, 3);
	uroce_tm_destroy(tm);
}

/* A random mix against a plain array model of the list. */
static void
test_match_model(void)
{
	struct { uint64_t tag, mask, id; uint32_t h; bool live; } mdl[256];
	struct uroce_tm *tm = make(64, 16);
	unsigned int n = 0, i, step, live = 0;

	ut_srand(42);
	for (step = 0; step < 5000; step++) {
		unsigned int r = (unsigned int)(ut_rand() % 3);

		if (r == 0 && live < 64 && n < RTE_DIM(mdl)) {
			mdl[n].tag = ut_rand() % 8;
			mdl[n].mask = (ut_rand() % 4 == 0) ? 0x6 : ~0ull;
			mdl[n].id = n;
			mdl[n].h = add(tm, mdl[n].tag, mdl[n].mask, n, 0, 0);
			mdl[n].live = true;
			n++;
			live++;
		} else if (r == 1 && n > 0) {
			i = (unsigned int)(ut_rand() % n);
			n_wc = 0;
			UT_CHECK_EQ(del(tm, mdl[i].h, 0), 0);
			UT_CHECK_EQ(n_wc, mdl[i].live ? 0u : 1u);
			if (mdl[i].live)
				live--;
			mdl[i].live = false;
		} else {
			uint64_t tag = ut_rand() % 8, want = UINT64_MAX;
			struct uroce_tm_msg m = eager(tag);
			uint32_t slot;

			for (i = 0; i < n; i++)
				if (mdl[i].live && ((tag ^ mdl[i].tag) & mdl[i].mask) == 0) {
					want = mdl[i].id;
					break;
				}
			slot = uroce_tm_match(tm, &m);
			UT_CHECK_EQ(slot == UROCE_TM_NIL ? UINT64_MAX : tm->tags[slot].wr_id, want);
			if (slot != UROCE_TM_NIL) {
				uroce_tm_take(tm, slot, &m);
				uroce_tm_release(tm, slot);
				mdl[want].live = false;
				live--;
			}
		}
		UT_CHECK_EQ(tm->n_listed, live);
		UT_NOTE("step %u", step);
		if (n == RTE_DIM(mdl)) {	/* start over, same engine */
			for (i = 0; i < n; i++)
				if (mdl[i].live)
					del(tm, mdl[i].h, 0);
			n = live = 0;
		}
	}
	uroce_tm_destroy(tm);
}

/* Phases: tag_matching.md's m1/m2/b1/b2 race. */
static void
test_phase(void)
{
	struct uroce_tm *tm = make(8, 16);
	struct uroce_tm_msg m = eager(5);

	add(tm, 1, ~0ull, 1, 0, 0);		/* b1, in sync */
	UT_CHECK(!uroce_tm_sync_req(tm));
	/* m1 (tag 5) matches nothing: unexpected. */
	UT_CHECK(uroce_tm_match(tm, &m) == UROCE_TM_NIL);
	uroce_tm_unexpected(tm);
	UT_CHECK(uroce_tm_sync_req(tm));
	/* b2 for tag 5, posted by software that has not seen m1 yet (count
	 * still 0): m2 with tag 5 must not match it, or m2 would overtake m1. */
	add(tm, 5, ~0ull, 2, IBV_OPS_TM_SYNC | IBV_OPS_SIGNALED, 0);
	UT_CHECK_EQ(wcs[n_wc - 1].wc_flags, IBV_WC_TM_SYNC_REQ);
	UT_CHECK_EQ(match_wr_id(tm, 5), UINT64_MAX);
	/* b1 was posted in sync: it still matches. */
	UT_CHECK_EQ(match_wr_id(tm, 1), 1);
	/* Software reports the one unexpected message: sync, no SYNC_REQ. */
	n_wc = 0;
	sync_to(tm, 1, IBV_OPS_SIGNALED);
	UT_CHECK_EQ(n_wc, 1);
	UT_CHECK_EQ(wcs[0].opcode, IBV_WC_TM_SYNC);
	UT_CHECK_EQ(wcs[0].wc_flags, 0);
	/* b2 stays out of matching (added out of sync); a new tag matches. */
	UT_CHECK_EQ(match_wr_id(tm, 5), UINT64_MAX);
	add(tm, 5, ~0ull, 3, 0, 0);
	UT_CHECK_EQ(match_wr_id(tm, 5), 3);
	/* An ADD carrying the right count syncs too (IBV_OPS_TM_SYNC). */
	uroce_tm_unexpected(tm);
	add(tm, 6, ~0ull, 4, 0, 0);		/* no flag: count stays 1 */
	UT_CHECK_EQ(match_wr_id(tm, 6), UINT64_MAX);
	add(tm, 6, ~0ull, 5, IBV_OPS_TM_SYNC, 2);
	UT_CHECK_EQ(match_wr_id(tm, 6), 5);
	UT_CHECK(!uroce_tm_sync_req(tm));
	/* A signaled op while out of sync says so; SYNC with a wrong count
	 * leaves it out of sync. */
	uroce_tm_unexpected(tm);
	n_wc = 0;
	sync_to(tm, 2, IBV_OPS_SIGNALED);
	UT_CHECK_EQ(wcs[0].wc_flags, IBV_WC_TM_SYNC_REQ);
	UT_CHECK_EQ(tm->stats.unexpected, 3);
	uroce_tm_destroy(tm);
}

static void
test_parse(void)
{
	struct uroce_tm_msg in = {
		.op = IBV_TMH_RNDV, .app_ctx = 0xa1b2c3d4,
		.tag = 0x0102030405060708ull, .va = 0x1122334455667788ull,
		.rkey = 0xdeadbeef, .len = 4096,
	}, out;
	uint8_t buf[64];
	uint32_t len;

	memset(buf, 0xee, sizeof(buf));
	uroce_tm_build(&in, buf);
	/* Wire layout: opcode, reserved zero, then big-endian fields. */
	UT_CHECK_EQ(buf[0], IBV_TMH_RNDV);
	UT_CHECK(buf[1] == 0 && buf[2] == 0 && buf[3] == 0);
	UT_CHECK_EQ(buf[4], 0xa1);
	UT_CHECK_EQ(buf[8], 0x01);
	UT_CHECK_EQ(buf[15], 0x08);
	UT_CHECK_EQ(buf[16], 0x11);
	UT_CHECK_EQ(buf[24], 0xde);
	UT_CHECK_EQ(buf[31], 0x00);
	UT_CHECK_EQ(buf[32], 0xee);
	UT_CHECK_EQ(uroce_tm_parse(buf, 32, &out), 0);
	UT_CHECK(memcmp(&in, &out, sizeof(in)) == 0);
	/* Every length short of the header is refused. */
	for (len = 0; len < 32; len++)
		UT_CHECK_EQ(uroce_tm_parse(buf, len, &out), -EBADMSG);
	/* An RVH length over 2^31. */
	in.len = 0x80000001u;
	uroce_tm_build(&in, buf);
	UT_CHECK_EQ(uroce_tm_parse(buf, 32, &out), -EBADMSG);
	/* EAGER: a TMH. */
	in.op = IBV_TMH_EAGER;
	uroce_tm_build(&in, buf);
	UT_CHECK_EQ(uroce_tm_hdr_len(IBV_TMH_EAGER), 16);
	UT_CHECK_EQ(uroce_tm_parse(buf, 15, &out), -EBADMSG);
	UT_CHECK_EQ(uroce_tm_parse(buf, 16, &out), 0);
	UT_CHECK_EQ(out.tag, in.tag);
	UT_CHECK_EQ(out.app_ctx, in.app_ctx);
	/* FIN needs a TMH at least; NO_TAG its opcode byte only. */
	buf[0] = IBV_TMH_FIN;
	UT_CHECK_EQ(uroce_tm_parse(buf, 16, &out), 0);
	UT_CHECK_EQ(out.op, IBV_TMH_FIN);
	buf[0] = IBV_TMH_NO_TAG;
	UT_CHECK_EQ(uroce_tm_parse(buf, 1, &out), 0);
	UT_CHECK_EQ(out.op, IBV_TMH_NO_TAG);
	/* Unknown opcodes. */
	for (len = 4; len < 256; len++) {
		buf[0] = (uint8_t)len;
		UT_CHECK_EQ(uroce_tm_parse(buf, sizeof(buf), &out), -EBADMSG);
	}
}

static void
test_wc(void)
{
	struct uroce_tm *tm = make(2, 2);
	struct uroce_tm_msg m = eager(0xfedcba9876543210ull);
	struct ibv_wc_tm_info info;
	struct ibv_wc wc;
	uint32_t slot;

	m.app_ctx = 0x89abcdef;
	add(tm, m.tag, ~0ull, 9, 0, 0);
	slot = uroce_tm_match(tm, &m);
	uroce_tm_wc_recv(uroce_tm_take(tm, slot, &m), IBV_WC_SUCCESS,
			 IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID, 100, &wc);
	UT_CHECK_EQ(wc.wr_id, 9);
	UT_CHECK_EQ(wc.opcode, IBV_WC_TM_RECV);
	UT_CHECK_EQ(wc.byte_len, 100);
	UT_CHECK_EQ(wc.wc_flags, IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID);
	uroce_tm_wc_info(&wc, &info);
	UT_CHECK_EQ(info.tag, m.tag);
	UT_CHECK_EQ(info.priv, m.app_ctx);
	/* A DATA_VALID completion after the match: no tag info; receive
	 * completions never ask for a sync (tag operations' do). */
	uroce_tm_unexpected(tm);
	uroce_tm_wc_recv(&tm->tags[slot], IBV_WC_SUCCESS,
			 IBV_WC_TM_DATA_VALID, 0, &wc);
	UT_CHECK_EQ(wc.wc_flags, IBV_WC_TM_DATA_VALID);
	uroce_tm_wc_info(&wc, &info);
	UT_CHECK_EQ(info.tag, 0);
	UT_CHECK_EQ(info.priv, 0);
	uroce_tm_destroy(tm);
}

int
main(void)
{
	test_create();
	test_op_errors();
	test_add_del();
	test_match_order();
	test_match_model();
	test_phase();
	test_parse();
	test_wc();
	return ut_summary();
}
