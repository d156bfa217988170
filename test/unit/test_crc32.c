/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 *
 * CRC-32: known answers (from zlib's crc32()), the derived constants, and
 * every implementation against the bit-serial reference over all lengths
 * 0..1100 and many up to 9000 at every alignment, plus streaming splits.
 * Each buffer ends at the end of its own allocation, so ASan sees overreads.
 */
#include <stdlib.h>

#include "uroce_wire.h"
#include "crc32_priv.h"
#include "uroce_test.h"

typedef uint32_t (crc_fn)(uint32_t crc, const void *buf, size_t len);

struct impl {
	const char *name;
	crc_fn *fn;
	bool usable;
};

static struct impl impls[] = {
	{ "dispatch", uroce_crc32_update, true },
	{ "table", uroce_crc32_update_table, true },
	{ "pclmul", uroce_crc32_update_pclmul, false },
	{ "vpclmul", uroce_crc32_update_vpclmul, false },
};

#define NB_IMPLS RTE_DIM(impls)

static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);

/* xorshift64*: fixed seed, so a failure reproduces. */
static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(0x2545f4914f6cdd1d);
}

static uint32_t
zlib_crc(crc_fn *fn, const void *buf, size_t len)
{
	return ~fn(UROCE_CRC32_INIT, buf, len);
}

/* (i * 7 + 3) & 0xff: the same pattern the Python side generated. */
static void
fill_pattern(uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + 3);
}

static void
test_known_answers(void)
{
	/* zlib.crc32() of each, computed with Python's zlib. */
	static const struct {
		const char *data;
		uint32_t crc;
	} kat[] = {
		{ "", 0x00000000 },
		{ "a", 0xe8b7be43 },
		{ "abc", 0x352441c2 },
		{ "123456789", 0xcbf43926 },
		{ "The quick brown fox jumps over the lazy dog", 0x414fa339 },
	};
	/* Pattern buffers: len, zlib.crc32(bytes((i*7+3)&0xff ...)). */
	static const struct {
		size_t len;
		uint32_t crc;
	} pat[] = {
		{ 1000, 0x17bc2a46 },
		{ 4096, 0x5e4e1995 },
		{ 9000, 0x3182588b },
	};
	static uint8_t buf[9000];
	uint8_t b256[256], zero[32], ones[32];
	unsigned int i, j;

	for (i = 0; i < 256; i++)
		b256[i] = i;
	memset(zero, 0, sizeof(zero));
	memset(ones, 0xff, sizeof(ones));
	fill_pattern(buf, sizeof(buf));

	for (j = 0; j < NB_IMPLS; j++) {
		crc_fn *fn = impls[j].fn;

		if (!impls[j].usable)
			continue;
		for (i = 0; i < RTE_DIM(kat); i++)
			UT_CHECK_EQ(zlib_crc(fn, kat[i].data, strlen(kat[i].data)),
				    kat[i].crc);
		UT_CHECK_EQ(zlib_crc(fn, b256, sizeof(b256)), 0x29058c73);
		UT_CHECK_EQ(zlib_crc(fn, zero, sizeof(zero)), 0x190a55ad);
		UT_CHECK_EQ(zlib_crc(fn, ones, sizeof(ones)), 0xff6cab0b);
		for (i = 0; i < RTE_DIM(pat); i++)
			UT_CHECK_EQ(zlib_crc(fn, buf, pat[i].len), pat[i].crc);
		/* Length 0 leaves the register alone, even with a NULL buffer. */
		UT_CHECK_EQ(fn(0x12345678, NULL, 0), 0x12345678);
		UT_NOTE("implementation %s", impls[j].name);
	}
	UT_CHECK_EQ(zlib_crc(uroce_crc32_update_ref, "123456789", 9), 0xcbf43926);
}

/* Carry-less product of a (deg < 64) and b (deg < 64), as hi:lo. */
static void
clmul64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
	int i;

	*hi = 0;
	*lo = 0;
	for (i = 0; i < 64; i++) {
		if (!((b >> i) & 1))
			continue;
		*lo ^= a << i;
		if (i)
			*hi ^= a >> (64 - i);
	}
}

static uint32_t
bitrev32(uint32_t v)
{
	uint32_t r = 0;
	int i;

	for (i = 0; i < 32; i++)
		r |= ((v >> i) & 1u) << (31 - i);
	return r;
}

static void
test_constants(void)
{
	const uint64_t p = UINT64_C(0x104c11db7);
	uint64_t mu = uroce_crc32_barrett_mu();
	uint64_t hi, lo;
	uint8_t msg[300];
	unsigned int l;

	UT_CHECK_EQ(uroce_crc32_xpow_mod(0), 1);
	UT_CHECK_EQ(uroce_crc32_xpow_mod(31), 0x80000000u);
	UT_CHECK_EQ(uroce_crc32_xpow_mod(32), 0x04c11db7u);

	/* mu * P = x^64 + r with deg r < 32 defines mu = floor(x^64 / P). */
	UT_CHECK_EQ(mu >> 32, 1);
	clmul64(mu, p, &hi, &lo);
	UT_CHECK_EQ(hi, 1);
	UT_CHECK_EQ(lo >> 32, 0);
	UT_CHECK_EQ(mu, UINT64_C(0x104d101df));

	/*
	 * A message of l bytes whose first bit is 1 is x^(8l - 1); its
	 * register from 0 is x^(8l + 31) mod P, bit-reversed.
	 */
	memset(msg, 0, sizeof(msg));
	msg[0] = 1;
	for (l = 1; l <= sizeof(msg); l++) {
		uint32_t reg = uroce_crc32_update_ref(0, msg, l);

		if (!UT_CHECK_EQ(bitrev32(reg), uroce_crc32_xpow_mod(8 * l + 31)))
			break;
	}
}

/* Copy @len bytes of @src to the end of a fresh allocation, @align into it. */
static uint8_t *
tail_copy(const uint8_t *src, size_t len, unsigned int align, void **mem)
{
	uint8_t *m = malloc(align + len + 1);

	*mem = m;
	if (m == NULL)
		abort();
	memcpy(m + align, src, len);
	return m + align;
}

static bool
check_one(const uint8_t *src, size_t len, unsigned int align)
{
	uint32_t init = (uint32_t)rng();
	void *mem;
	const uint8_t *p = tail_copy(src, len, align, &mem);
	uint32_t want = uroce_crc32_update_ref(init, p, len);
	bool ok = true;
	unsigned int j;

	for (j = 0; j < NB_IMPLS; j++) {
		if (!impls[j].usable)
			continue;
		if (!UT_CHECK_EQ(impls[j].fn(init, p, len), want)) {
			UT_NOTE("%s len %zu align %u", impls[j].name, len, align);
			ok = false;
		}
	}
	free(mem);
	return ok;
}

static void
test_lengths(const uint8_t *rnd)
{
	static const size_t special[] = {
		1535, 1536, 1537, 2047, 2048, 2049, 4095, 4096, 4097,
		4111, 4112, 4351, 4352, 8191, 8192, 8193, 8999, 9000,
	};
	unsigned int align, i;
	size_t len;

	for (align = 0; align < 16; align++) {
		for (len = 0; len <= 1100; len++)
			if (!check_one(rnd, len, align))
				return;
		for (i = 0; i < RTE_DIM(special); i++)
			if (!check_one(rnd, special[i], align))
				return;
		for (i = 0; i < 150; i++)
			if (!check_one(rnd, 1101 + rng() % (9000 - 1100), align))
				return;
	}
}

/* update(update(c, a), b) == update(c, a || b) at random split points. */
static void
test_streaming(const uint8_t *rnd)
{
	unsigned int t, j, k;

	for (t = 0; t < 400; t++) {
		size_t len = rng() % 9001;
		size_t cut[4], prev;
		uint32_t init = (uint32_t)rng();
		uint32_t want = uroce_crc32_update_ref(init, rnd, len);

		for (k = 0; k < RTE_DIM(cut); k++)
			cut[k] = len ? rng() % (len + 1) : 0;
		/* Sort the cuts: small insertion sort. */
		for (k = 1; k < RTE_DIM(cut); k++) {
			size_t v = cut[k];
			unsigned int m = k;

			for (; m > 0 && cut[m - 1] > v; m--)
				cut[m] = cut[m - 1];
			cut[m] = v;
		}
		for (j = 0; j < NB_IMPLS; j++) {
			uint32_t c = init;

			if (!impls[j].usable)
				continue;
			prev = 0;
			for (k = 0; k < RTE_DIM(cut); k++) {
				c = impls[j].fn(c, rnd + prev, cut[k] - prev);
				prev = cut[k];
			}
			c = impls[j].fn(c, rnd + prev, len - prev);
			if (!UT_CHECK_EQ(c, want)) {
				UT_NOTE("%s len %zu cuts %zu %zu %zu %zu",
					impls[j].name, len, cut[0], cut[1],
					cut[2], cut[3]);
				return;
			}
		}
	}
}

typedef uint32_t (crc_fn2)(uint32_t crc, const void *a, size_t alen,
			  const void *b, size_t blen);

static crc_fn2 *const impls2[NB_IMPLS] = {
	uroce_crc32_update2, uroce_crc32_update2_table,
	uroce_crc32_update2_pclmul, uroce_crc32_update2_vpclmul,
};

/*
 * update2(c, a, b) == update(c, a || b) with a (16 to 64 bytes, as the
 * ICRC's masked headers) and b in separate allocations, each ending at its
 * own end, b with the 16 bytes in front of it that the function may read
 * (garbage: they must not count): every b length up to 1100, then lengths
 * that reach the 512-bit loop.
 */
static void
test_two_buffers(const uint8_t *rnd)
{
	static const size_t special[] = { 1535, 2048, 2061, 4096, 4109, 9000 - 64 };
	unsigned int alen, j;
	size_t blen, i;

	for (alen = 16; alen <= 64; alen += 16) {
		for (i = 0; i <= 1100 + RTE_DIM(special); i++) {
			uint32_t init = (uint32_t)rng(), want;
			void *ma, *mb;
			const uint8_t *a, *b;

			blen = i <= 1100 ? i : special[i - 1101];
			a = tail_copy(rnd, alen, 0, &ma);
			b = tail_copy(rnd + alen, blen, 16 + (unsigned int)i % 16,
				      &mb);
			memset(mb, (int)i, 16);
			want = uroce_crc32_update_ref(init, rnd, alen + blen);
			for (j = 0; j < NB_IMPLS; j++) {
				if (!impls[j].usable)
					continue;
				if (!UT_CHECK_EQ(impls2[j](init, a, alen, b, blen),
						 want))
					UT_NOTE("%s alen %u blen %zu",
						impls[j].name, alen, blen);
			}
			free(ma);
			free(mb);
		}
	}
}

static void
test_impl_name(void)
{
	const char *name = uroce_crc32_impl();

	UT_CHECK(name != NULL);
	if (name == NULL)
		return;
	UT_CHECK(strcmp(name, "table") == 0 || strcmp(name, "pclmul") == 0 ||
		 strcmp(name, "vpclmul") == 0);
	if (uroce_crc32_has_pclmul())
		UT_CHECK(strcmp(name, "table") != 0);
	else
		UT_CHECK(strcmp(name, "table") == 0);
	if (uroce_crc32_has_vpclmul())
		UT_CHECK(uroce_crc32_has_pclmul());
}

int
main(void)
{
	static uint8_t rnd[9000];
	size_t i;

	impls[2].usable = uroce_crc32_has_pclmul();
	impls[3].usable = uroce_crc32_has_vpclmul();
	printf("crc32: dispatch uses %s; pclmul %s, vpclmul %s\n",
	       uroce_crc32_impl(), impls[2].usable ? "tested" : "not on this CPU",
	       impls[3].usable ? "tested" : "not on this CPU");

	for (i = 0; i < sizeof(rnd); i++)
		rnd[i] = (uint8_t)rng();

	test_known_answers();
	test_constants();
	test_impl_name();
	test_lengths(rnd);
	test_streaming(rnd);
	test_two_buffers(rnd);
	return ut_summary();
}
