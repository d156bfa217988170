/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * CRC-32 with the IEEE 802.3 polynomial in its reflected form, the CRC the
 * RoCEv2 ICRC uses (IBTA A17.3.3). One function, four implementations:
 *
 *  - bit-serial: the definition, for tests;
 *  - slicing-by-8 tables (Kounavis and Berry, "A Systematic Approach to
 *    Building High Performance Software-Based CRC Generators", 2005): the
 *    portable fallback, and the short-buffer path of the others;
 *  - PCLMULQDQ folding (Gopal et al., "Fast CRC Computation for Generic
 *    Polynomials Using PCLMULQDQ Instruction", Intel, 2009);
 *  - the same folding four lanes wide with AVX-512 VPCLMULQDQ.
 *
 * Polynomial arithmetic. The register after a message M of n bytes is
 * R = (I * x^8n + M * x^32) mod P, I being the register before. In the
 * reflected convention the first bit on the wire (bit 0 of byte 0) is the
 * highest power, so a 128-bit little-endian load holds the coefficient of
 * x^k in bit 127 - k. More generally we say a register has "anchor" s when
 * bit t holds the coefficient of x^(s - t). A carry-less product of two
 * 64-bit lanes with anchors s and u has anchor s + u; reading a register
 * at an anchor higher by j than its own multiplies it by x^j. Constants
 * sit in their lanes at the anchor each step needs; crc32_consts_init()
 * derives them from P at start-up, so no magic numbers are copied in (the
 * unit test checks them against their definitions).
 */

#include <pthread.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_debug.h>

#include "uroce_wire.h"
#include "crc32_priv.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CRC32_X86 1
#define CRC32_TGT_PCLMUL __attribute__((target("pclmul,sse4.1")))
#define CRC32_TGT_VPCLMUL \
	__attribute__((target("pclmul,sse4.1,avx512f,vpclmulqdq")))
#else
#define CRC32_X86 0
#endif

#define CRC32_POLY	0x04c11db7u	/* P without its x^32 term */
#define CRC32_POLY_REFL	0xedb88320u	/* the same, bit-reversed */

/* ---------------------------------------------------------------------------
 * Reference: one bit at a time, straight from the definition.
 */
uint32_t
uroce_crc32_update_ref(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	int i;

	while (len-- > 0) {
		crc ^= *p++;
		for (i = 0; i < 8; i++)
			crc = (crc >> 1) ^ (CRC32_POLY_REFL & -(crc & 1u));
	}
	return crc;
}

/* ---------------------------------------------------------------------------
 * Slicing-by-8. tab[0][b] is the register after byte b from register 0;
 * tab[k][b] is that register pushed through k more zero bytes, so eight
 * lookups advance the register over eight bytes at once.
 */
static uint32_t crc32_tab[8][256];

static void
crc32_tables_init(void)
{
	unsigned int k, b;

	for (b = 0; b < 256; b++) {
		uint8_t byte = b;

		crc32_tab[0][b] = uroce_crc32_update_ref(0, &byte, 1);
	}
	for (k = 1; k < 8; k++)
		for (b = 0; b < 256; b++) {
			uint32_t c = crc32_tab[k - 1][b];

			crc32_tab[k][b] = (c >> 8) ^ crc32_tab[0][c & 0xff];
		}
}

static uint32_t
crc32_table_run(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, sizeof(v));
		/* Byte 0 is furthest from the end: it takes 7 more shifts. */
		v = rte_le_to_cpu_64(v) ^ crc;
		crc = crc32_tab[7][v & 0xff] ^
			crc32_tab[6][(v >> 8) & 0xff] ^
			crc32_tab[5][(v >> 16) & 0xff] ^
			crc32_tab[4][(v >> 24) & 0xff] ^
			crc32_tab[3][(v >> 32) & 0xff] ^
			crc32_tab[2][(v >> 40) & 0xff] ^
			crc32_tab[1][(v >> 48) & 0xff] ^
			crc32_tab[0][v >> 56];
		p += 8;
		len -= 8;
	}
	if (len >= 4) {
		uint32_t w;

		memcpy(&w, p, sizeof(w));
		w = rte_le_to_cpu_32(w) ^ crc;
		crc = crc32_tab[3][w & 0xff] ^
			crc32_tab[2][(w >> 8) & 0xff] ^
			crc32_tab[1][(w >> 16) & 0xff] ^
			crc32_tab[0][w >> 24];
		p += 4;
		len -= 4;
	}
	while (len-- > 0)
		crc = (crc >> 8) ^ crc32_tab[0][(crc ^ *p++) & 0xff];
	return crc;
}

/* ---------------------------------------------------------------------------
 * Constants for the carry-less paths.
 */

/* x^n mod P, bit i = coefficient of x^i. */
uint32_t
uroce_crc32_xpow_mod(unsigned int n)
{
	uint32_t r = 1;

	while (n-- > 0)
		r = (r << 1) ^ (CRC32_POLY & -(r >> 31));
	return r;
}

/* floor(x^64 / P) by long division: the Barrett constant. */
uint64_t
uroce_crc32_barrett_mu(void)
{
	/* First step done by hand: x^64 - x^32 * P leaves POLY * x^32. */
	uint64_t r = (uint64_t)CRC32_POLY << 32;
	uint64_t q = UINT64_C(1) << 32;
	int i;

	for (i = 63; i >= 32; i--) {
		if (!((r >> i) & 1))
			continue;
		q |= UINT64_C(1) << (i - 32);
		r ^= (UINT64_C(1) << i) ^ ((uint64_t)CRC32_POLY << (i - 32));
	}
	return q;
}

static uint32_t
crc32_bitrev32(uint32_t v)
{
	uint32_t r = 0;
	int i;

	for (i = 0; i < 32; i++)
		r |= ((v >> i) & 1u) << (31 - i);
	return r;
}

/* A polynomial of degree < 32 in a 64-bit lane with anchor 63. */
static uint64_t
crc32_lane63(uint32_t k)
{
	return (uint64_t)crc32_bitrev32(k) << 32;
}

/* A polynomial of degree <= 32 in a 64-bit lane with anchor 32. */
static uint64_t
crc32_lane32(uint64_t k)
{
	return ((uint64_t)crc32_bitrev32((uint32_t)k) << 1) | ((k >> 32) & 1);
}

/*
 * Folding a 128-bit block X = A * x^64 + B (A = low qword, anchor 63 as a
 * lane; B = high qword, anchor 63 too) forward by d bits:
 *   X * x^d == A * (x^(64+d) mod P) + B * (x^d mod P).
 * Each product of two anchor-63 lanes has anchor 126; read at anchor 127 it
 * gains a factor x, hence the constants are x^(63+d) and x^(d-1) mod P.
 * Stored as {low qword: for A, high qword: for B}.
 */
static void
crc32_fold_k(uint64_t k[2], unsigned int d)
{
	k[0] = crc32_lane63(uroce_crc32_xpow_mod(d + 63));
	k[1] = crc32_lane63(uroce_crc32_xpow_mod(d - 1));
}

static struct {
	uint64_t f128[2];	/* fold by one 128-bit block */
	uint64_t f256[2];
	uint64_t f384[2];
	uint64_t f512[2];	/* by four blocks, or one 512-bit vector */
	uint64_t f2048[2];	/* by four 512-bit vectors */
	uint64_t red[2];	/* x^96, x^64 mod P at anchor 32 */
	uint64_t barrett[2];	/* mu, P at anchor 32 */
} crc32_k __rte_aligned(16);

static void
crc32_consts_init(void)
{
	crc32_fold_k(crc32_k.f128, 128);
	crc32_fold_k(crc32_k.f256, 256);
	crc32_fold_k(crc32_k.f384, 384);
	crc32_fold_k(crc32_k.f512, 512);
	crc32_fold_k(crc32_k.f2048, 2048);
	crc32_k.red[0] = crc32_lane32(uroce_crc32_xpow_mod(96));
	crc32_k.red[1] = crc32_lane32(uroce_crc32_xpow_mod(64));
	crc32_k.barrett[0] = crc32_lane32(uroce_crc32_barrett_mu());
	crc32_k.barrett[1] = crc32_lane32((UINT64_C(1) << 32) | CRC32_POLY);
}

/* ---------------------------------------------------------------------------
 * PCLMULQDQ: fold 4 x 128 bits per step, then down to 128, then reduce.
 */
#if CRC32_X86

static __rte_always_inline CRC32_TGT_PCLMUL __m128i
crc32_k128(const uint64_t k[2])
{
	return _mm_loadu_si128((const __m128i *)(const void *)k);
}

/* X * x^d + data, congruent mod P and again 128 bits wide. */
static __rte_always_inline CRC32_TGT_PCLMUL __m128i
crc32_fold(__m128i x, __m128i k, __m128i data)
{
	__m128i a = _mm_clmulepi64_si128(x, k, 0x00);
	__m128i b = _mm_clmulepi64_si128(x, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(a, b), data);
}

static __rte_always_inline CRC32_TGT_PCLMUL __m128i
crc32_load(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

/*
 * The register (X * x^32) mod P for a 128-bit block X (anchor 127).
 *  1. Y = A * (x^96 mod P) + B * x^32, A/B the low/high qwords of X:
 *     96 bits at anchor 95 (B is X >> 64 read at anchor 95).
 *  2. Z = Yh * (x^64 mod P) + Yl, Yh the low 32 bits of Y: 64 bits at
 *     anchor 63.
 *  3. Barrett: q = floor(Zh * mu / x^32) is the low 32 bits of Zh * mu
 *     (anchors 31 + 32 = 63), and Z mod P = Zl + (q * P mod x^32), which
 *     sits in bits 32..63 with anchor 31 once extracted: the register.
 */
static __rte_always_inline CRC32_TGT_PCLMUL uint32_t
crc32_reduce(__m128i x)
{
	const __m128i mask = _mm_set_epi32(0, 0, 0, -1);
	const __m128i kr = crc32_k128(crc32_k.red);
	const __m128i kb = crc32_k128(crc32_k.barrett);
	__m128i y, z, t;

	y = _mm_xor_si128(_mm_clmulepi64_si128(x, kr, 0x00),
			  _mm_srli_si128(x, 8));
	z = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(y, mask), kr, 0x10),
			  _mm_srli_si128(y, 4));
	t = _mm_clmulepi64_si128(_mm_and_si128(z, mask), kb, 0x00);
	t = _mm_clmulepi64_si128(_mm_and_si128(t, mask), kb, 0x10);
	return (uint32_t)_mm_extract_epi32(_mm_xor_si128(z, t), 1);
}

/*
 * Byte-shift masks for PSHUFB (an index with bit 7 set yields 0):
 * the 16 bytes at CRC32_SHR + r shift a register down by r bytes, those
 * at CRC32_SHL + r up by 16 - r bytes.
 */
static const uint8_t crc32_shuf[48] __rte_aligned(16) = {
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
};
#define CRC32_SHR	(crc32_shuf + 16)
#define CRC32_SHL	(crc32_shuf)

/*
 * The last r (1..15) bytes D after the folded state X: X * x^8r + D is
 * H * x^128 + (L || D) with H the first r bytes of X and L the others, so
 * one more fold of H (as a block ending in H) onto L || D absorbs them.
 * D is the tail of the 16 bytes that end the buffer; they are readable
 * because at least 16 bytes were folded before.
 */
static __rte_always_inline CRC32_TGT_PCLMUL __m128i
crc32_fold_partial(__m128i x, __m128i k1, const uint8_t *end, size_t r)
{
	const __m128i shr = crc32_load(CRC32_SHR + r);
	const __m128i shl = crc32_load(CRC32_SHL + r);
	__m128i h = _mm_shuffle_epi8(x, shl);
	__m128i ld = _mm_blendv_epi8(crc32_load(end - 16),
				     _mm_shuffle_epi8(x, shr), shl);

	return crc32_fold(h, k1, ld);
}

/*
 * Fold the remaining bytes into @x (at least 16 bytes came before @p) and
 * reduce to the register. Always inlined so that in the AVX-512 path it is
 * VEX-encoded too: legacy SSE code after AVX-512 code is penalised.
 */
static __rte_always_inline CRC32_TGT_PCLMUL uint32_t
crc32_fold_rest(__m128i x, const uint8_t *p, size_t len)
{
	const __m128i k1 = crc32_k128(crc32_k.f128);

	for (; len >= 16; p += 16, len -= 16)
		x = crc32_fold(x, k1, crc32_load(p));
	if (len > 0)
		x = crc32_fold_partial(x, k1, p + len, len);
	return crc32_reduce(x);
}

/*
 * Four consecutive blocks to one: x0 * x^384 + x1 * x^256 + x2 * x^128 + x3,
 * the three products side by side rather than one fold after another (the
 * chain of carry-less multiplies is what a short frame waits for).
 */
static __rte_always_inline CRC32_TGT_PCLMUL __m128i
crc32_join4(__m128i x0, __m128i x1, __m128i x2, __m128i x3)
{
	__m128i a = crc32_fold(x0, crc32_k128(crc32_k.f384), x3);
	__m128i b = crc32_fold(x1, crc32_k128(crc32_k.f256), a);

	return crc32_fold(x2, crc32_k128(crc32_k.f128), b);
}

/*
 * The register of the bytes a 128-bit state @x stands for, followed by @len
 * bytes at @p (which need not follow @x in memory). The 16 bytes in front
 * of @p must be readable: a tail shorter than a block is loaded with them
 * (and blended away), as a copy to the stack would stall the load on the
 * copy's narrower stores.
 */
static __rte_always_inline CRC32_TGT_PCLMUL uint32_t
crc32_pclmul_cont(__m128i x, const uint8_t *p, size_t len)
{
	const __m128i k4 = crc32_k128(crc32_k.f512);
	const __m128i k1 = crc32_k128(crc32_k.f128);
	__m128i x1, x2, x3;

	if (len >= 64) {
		x = crc32_fold(x, k1, crc32_load(p));
		x1 = crc32_load(p + 16);
		x2 = crc32_load(p + 32);
		x3 = crc32_load(p + 48);
		for (p += 64, len -= 64; len >= 64; p += 64, len -= 64) {
			x = crc32_fold(x, k4, crc32_load(p));
			x1 = crc32_fold(x1, k4, crc32_load(p + 16));
			x2 = crc32_fold(x2, k4, crc32_load(p + 32));
			x3 = crc32_fold(x3, k4, crc32_load(p + 48));
		}
		x = crc32_join4(x, x1, x2, x3);
	}
	return crc32_fold_rest(x, p, len);
}

static CRC32_TGT_PCLMUL uint32_t
crc32_pclmul_run(uint32_t crc, const uint8_t *p, size_t len)
{
	if (len < 16)
		return crc32_table_run(crc, p, len);
	/* The initial register adds I * x^8n: XOR it into the first 32 bits. */
	return crc32_pclmul_cont(_mm_xor_si128(crc32_load(p),
					       _mm_cvtsi32_si128((int)crc)),
				 p + 16, len - 16);
}

/* The 128-bit state after @alen bytes at @a (a multiple of 16, at least
 * 16). Up to four blocks are joined side by side, as crc32_join4(). */
static __rte_always_inline CRC32_TGT_PCLMUL __m128i
crc32_pclmul_head(uint32_t crc, const uint8_t *a, size_t alen)
{
	const __m128i k1 = crc32_k128(crc32_k.f128);
	__m128i x = _mm_xor_si128(crc32_load(a), _mm_cvtsi32_si128((int)crc));
	size_t i;

	switch (alen) {
	case 16:
		return x;
	case 32:
		return crc32_fold(x, k1, crc32_load(a + 16));
	case 48:
		return crc32_fold(crc32_load(a + 16), k1,
				  crc32_fold(x, crc32_k128(crc32_k.f256),
					     crc32_load(a + 32)));
	case 64:
		return crc32_join4(x, crc32_load(a + 16), crc32_load(a + 32),
				   crc32_load(a + 48));
	}
	for (i = 16; i < alen; i += 16)
		x = crc32_fold(x, k1, crc32_load(a + i));
	return x;
}

/* The register after @a (@alen: a multiple of 16, at least 16) then @b (16
 * readable bytes in front of it): one fold over both and one reduction, so
 * a short @b pays no set-up of its own. */
static CRC32_TGT_PCLMUL uint32_t
crc32_pclmul_run2(uint32_t crc, const uint8_t *a, size_t alen,
		  const uint8_t *b, size_t blen)
{
	return crc32_pclmul_cont(crc32_pclmul_head(crc, a, alen), b, blen);
}

/* ---------------------------------------------------------------------------
 * VPCLMULQDQ: the same folding on four 512-bit vectors (256 bytes) per step.
 * Each 128-bit lane of a vector folds independently with the same constant.
 */
static __rte_always_inline CRC32_TGT_VPCLMUL __m512i
crc32_k512(const uint64_t k[2])
{
	return _mm512_broadcast_i32x4(crc32_k128(k));
}

static __rte_always_inline CRC32_TGT_VPCLMUL __m512i
crc32_fold512(__m512i x, __m512i k, __m512i data)
{
	__m512i a = _mm512_clmulepi64_epi128(x, k, 0x00);
	__m512i b = _mm512_clmulepi64_epi128(x, k, 0x11);

	return _mm512_ternarylogic_epi64(a, b, data, 0x96); /* a ^ b ^ data */
}

static __rte_always_inline CRC32_TGT_VPCLMUL __m512i
crc32_load512(const uint8_t *p)
{
	return _mm512_loadu_si512((const void *)p);
}

/*
 * One 512-bit vector (lanes L0..L3, L0 first on the wire) to 128 bits:
 * L0 * x^384 + L1 * x^256 + L2 * x^128 + L3. Lane 3's constant is zero.
 */
static CRC32_TGT_VPCLMUL __m128i
crc32_fold512_to_128(__m512i z)
{
	const __m512i k = _mm512_inserti32x4(_mm512_inserti32x4(
		_mm512_inserti32x4(_mm512_setzero_si512(),
				   crc32_k128(crc32_k.f384), 0),
		crc32_k128(crc32_k.f256), 1), crc32_k128(crc32_k.f128), 2);
	__m512i t;

	t = _mm512_xor_si512(_mm512_clmulepi64_epi128(z, k, 0x00),
			     _mm512_clmulepi64_epi128(z, k, 0x11));
	return _mm_xor_si128(
		_mm_xor_si128(_mm512_extracti32x4_epi32(t, 0),
			      _mm512_extracti32x4_epi32(t, 1)),
		_mm_xor_si128(_mm512_extracti32x4_epi32(t, 2),
			      _mm512_extracti32x4_epi32(z, 3)));
}

/* @z0: the first vector, folded in; @len: the bytes after it, at least 192. */
static __rte_always_inline CRC32_TGT_VPCLMUL uint32_t
crc32_vpclmul_from(__m512i z0, const uint8_t *p, size_t len)
{
	const __m512i k4 = crc32_k512(crc32_k.f2048);
	const __m512i k1 = crc32_k512(crc32_k.f512);
	__m512i z1, z2, z3;
	uint32_t crc;

	z1 = crc32_load512(p);
	z2 = crc32_load512(p + 64);
	z3 = crc32_load512(p + 128);
	for (p += 192, len -= 192; len >= 256; p += 256, len -= 256) {
		z0 = crc32_fold512(z0, k4, crc32_load512(p));
		z1 = crc32_fold512(z1, k4, crc32_load512(p + 64));
		z2 = crc32_fold512(z2, k4, crc32_load512(p + 128));
		z3 = crc32_fold512(z3, k4, crc32_load512(p + 192));
	}
	z0 = crc32_fold512(z0, k1, z1);
	z0 = crc32_fold512(z0, k1, z2);
	z0 = crc32_fold512(z0, k1, z3);
	for (; len >= 64; p += 64, len -= 64)
		z0 = crc32_fold512(z0, k1, crc32_load512(p));
	crc = crc32_fold_rest(crc32_fold512_to_128(z0), p, len);
	/* Clean upper state, or legacy SSE code that follows is slowed down. */
	_mm256_zeroupper();
	return crc;
}

static CRC32_TGT_VPCLMUL uint32_t
crc32_vpclmul_run(uint32_t crc, const uint8_t *p, size_t len)
{
	/* Below four vectors the 128-bit path is as fast. */
	if (len < 256)
		return crc32_pclmul_run(crc, p, len);
	return crc32_vpclmul_from(_mm512_xor_si512(crc32_load512(p),
			_mm512_zextsi128_si512(_mm_cvtsi32_si128((int)crc))),
				  p + 64, len - 64);
}

/* As crc32_pclmul_run2(); a long @b takes the 512-bit loop, the state
 * after @a folded onto its first block. */
static CRC32_TGT_VPCLMUL uint32_t
crc32_vpclmul_run2(uint32_t crc, const uint8_t *a, size_t alen,
		   const uint8_t *b, size_t blen)
{
	const __m128i k1 = crc32_k128(crc32_k.f128);
	__m128i x = crc32_pclmul_head(crc, a, alen);

	if (blen < 256)
		return crc32_pclmul_cont(x, b, blen);
	x = crc32_fold(x, k1, _mm_setzero_si128());
	return crc32_vpclmul_from(_mm512_xor_si512(crc32_load512(b),
						   _mm512_zextsi128_si512(x)),
				  b + 64, blen - 64);
}

#endif /* CRC32_X86 */

/* ---------------------------------------------------------------------------
 * Set-up and dispatch. A constructor does the work before main(); the
 * first-call stub covers callers that run before it (other constructors).
 */
typedef uint32_t (crc32_fn_t)(uint32_t crc, const void *buf, size_t len);
typedef uint32_t (crc32_fn2_t)(uint32_t crc, const void *a, size_t alen,
			       const void *b, size_t blen);

static crc32_fn_t crc32_first_call;
static crc32_fn2_t crc32_first_call2;
static crc32_fn_t *crc32_fn = crc32_first_call;
static crc32_fn2_t *crc32_fn2 = crc32_first_call2;
static const char *crc32_name = "table";
static bool crc32_pclmul_ok;
static bool crc32_vpclmul_ok;
static pthread_once_t crc32_once = PTHREAD_ONCE_INIT;

/* The dispatch targets: no init check, crc32_init() ran before. */
static uint32_t
crc32_table_fn(uint32_t crc, const void *buf, size_t len)
{
	return crc32_table_run(crc, buf, len);
}

static uint32_t
crc32_table_fn2(uint32_t crc, const void *a, size_t alen, const void *b,
		size_t blen)
{
	return crc32_table_run(crc32_table_run(crc, a, alen), b, blen);
}

#if CRC32_X86
static uint32_t
crc32_pclmul_fn2(uint32_t crc, const void *a, size_t alen, const void *b,
		 size_t blen)
{
	return crc32_pclmul_run2(crc, a, alen, b, blen);
}

static uint32_t
crc32_vpclmul_fn2(uint32_t crc, const void *a, size_t alen, const void *b,
		  size_t blen)
{
	return crc32_vpclmul_run2(crc, a, alen, b, blen);
}

static uint32_t
crc32_pclmul_fn(uint32_t crc, const void *buf, size_t len)
{
	return crc32_pclmul_run(crc, buf, len);
}

static uint32_t
crc32_vpclmul_fn(uint32_t crc, const void *buf, size_t len)
{
	return crc32_vpclmul_run(crc, buf, len);
}
#endif

static void
crc32_init(void)
{
	crc32_fn_t *fn = crc32_table_fn;
	crc32_fn2_t *fn2 = crc32_table_fn2;

	crc32_tables_init();
	crc32_consts_init();
#if CRC32_X86
	__builtin_cpu_init();
	crc32_pclmul_ok = __builtin_cpu_supports("pclmul") &&
		__builtin_cpu_supports("sse4.1");
	crc32_vpclmul_ok = crc32_pclmul_ok &&
		__builtin_cpu_supports("avx512f") &&
		__builtin_cpu_supports("vpclmulqdq");
	/* 4 KiB: table 1.5 GB/s, pclmul 24 GB/s, vpclmul 80 GB/s. */
	if (crc32_vpclmul_ok) {
		fn = crc32_vpclmul_fn;
		fn2 = crc32_vpclmul_fn2;
		crc32_name = "vpclmul";
	} else if (crc32_pclmul_ok) {
		fn = crc32_pclmul_fn;
		fn2 = crc32_pclmul_fn2;
		crc32_name = "pclmul";
	}
#endif
	/* Release: whoever sees a new pointer also sees the tables. */
	__atomic_store_n(&crc32_fn2, fn2, __ATOMIC_RELEASE);
	__atomic_store_n(&crc32_fn, fn, __ATOMIC_RELEASE);
}

static void
crc32_ensure_init(void)
{
	if (unlikely(__atomic_load_n(&crc32_fn, __ATOMIC_ACQUIRE) ==
		     crc32_first_call))
		pthread_once(&crc32_once, crc32_init);
}

RTE_INIT(crc32_ctor)
{
	crc32_ensure_init();
}

static uint32_t
crc32_first_call(uint32_t crc, const void *buf, size_t len)
{
	crc32_ensure_init();
	return __atomic_load_n(&crc32_fn, __ATOMIC_ACQUIRE)(crc, buf, len);
}

static uint32_t
crc32_first_call2(uint32_t crc, const void *a, size_t alen, const void *b,
		  size_t blen)
{
	crc32_ensure_init();
	return __atomic_load_n(&crc32_fn2, __ATOMIC_ACQUIRE)(crc, a, alen, b,
							     blen);
}

uint32_t
uroce_crc32_update(uint32_t crc, const void *buf, size_t len)
{
	return __atomic_load_n(&crc32_fn, __ATOMIC_ACQUIRE)(crc, buf, len);
}

uint32_t
uroce_crc32_update2(uint32_t crc, const void *a, size_t alen, const void *b,
		    size_t blen)
{
	RTE_ASSERT(alen >= 16 && alen % 16 == 0);
	return __atomic_load_n(&crc32_fn2, __ATOMIC_ACQUIRE)(crc, a, alen, b,
							     blen);
}

const char *
uroce_crc32_impl(void)
{
	crc32_ensure_init();
	return crc32_name;
}

bool
uroce_crc32_has_pclmul(void)
{
	crc32_ensure_init();
	return crc32_pclmul_ok;
}

bool
uroce_crc32_has_vpclmul(void)
{
	crc32_ensure_init();
	return crc32_vpclmul_ok;
}

uint32_t
uroce_crc32_update_table(uint32_t crc, const void *buf, size_t len)
{
	crc32_ensure_init();
	return crc32_table_run(crc, buf, len);
}

/* The x86 implementation @x where there is one, else the tables' @t. */
#if CRC32_X86
#define CRC32_X86_OR(x, t) (x)
#else
#define CRC32_X86_OR(x, t) (t)
#endif

uint32_t
uroce_crc32_update_pclmul(uint32_t crc, const void *buf, size_t len)
{
	crc32_ensure_init();
	return CRC32_X86_OR(crc32_pclmul_run(crc, buf, len),
			    crc32_table_run(crc, buf, len));
}

uint32_t
uroce_crc32_update_vpclmul(uint32_t crc, const void *buf, size_t len)
{
	crc32_ensure_init();
	return CRC32_X86_OR(crc32_vpclmul_run(crc, buf, len),
			    crc32_table_run(crc, buf, len));
}

uint32_t
uroce_crc32_update2_table(uint32_t crc, const void *a, size_t alen,
			  const void *b, size_t blen)
{
	crc32_ensure_init();
	return crc32_table_fn2(crc, a, alen, b, blen);
}

uint32_t
uroce_crc32_update2_pclmul(uint32_t crc, const void *a, size_t alen,
			   const void *b, size_t blen)
{
	crc32_ensure_init();
	return CRC32_X86_OR(crc32_pclmul_run2(crc, a, alen, b, blen),
			    crc32_table_fn2(crc, a, alen, b, blen));
}

uint32_t
uroce_crc32_update2_vpclmul(uint32_t crc, const void *a, size_t alen,
			    const void *b, size_t blen)
{
	crc32_ensure_init();
	return CRC32_X86_OR(crc32_vpclmul_run2(crc, a, alen, b, blen),
			    crc32_table_fn2(crc, a, alen, b, blen));
}
