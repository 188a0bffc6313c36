/*
 * runtime/dq_simd.h - the u8 x s8 tile of runtime/quant.c's integer
 * products (dq_tile_vnni's) for AVX2, included by quant.c twice: with
 * DQ256_VNNI 1, AVX-VNNI's vpdpbusd on 8 lanes (4 products of a u8 and
 * an s8 added into each int32 lane, no saturation: the AVX-512 tile's
 * instruction on half the lanes); with 0, AVX2 alone, exactly: A's
 * bytes widened to int16 before (dq_widen: a row of 4 k is then one
 * broadcast load, where widening it here took a shuffle a row and k
 * quad, a quarter of the tile's vector work), B's here, multiplied in
 * pairs into int32 by vpmaddwd (255 * 128 * 2 fits; vpmaddubsw would
 * saturate a pair's sum at int16).
 *
 * B is the packed form every level shares (DqPacked: panels of 16
 * columns, 4 consecutive k of a column adjacent).  A tile is 6 rows by
 * one panel (12 accumulators of 8 lanes, 2 of B, one of A: AVX2's 16
 * registers); without VNNI, by half a panel, each accumulator holding 4
 * columns' sums of k pairs (added pairwise at the end).  The sums wrap
 * in 32 bits as every level's do, so every level gives the same bits.
 */
#undef D2
#undef DQ256_TARGET
#undef DQ256_A
#if DQ256_VNNI
#define D2(name) name##_avxvnni
#define DQ256_TARGET __attribute__((target("avx2,fma,avxvnni")))
#define DQ256_A uint8_t /* A's element */
#else
#define D2(name) name##_avx2
#define DQ256_TARGET __attribute__((target("avx2,fma")))
#define DQ256_A int16_t
#endif

/* y[col..col+8) of row i from 8 columns' exact sums s (the epilogue of
 * dq_value, 8 lanes at a time; columns past e->n not stored). */
static inline __attribute__((always_inline)) DQ256_TARGET void
D2(dq_epi)(__m256i s, const DqEpi *e, int64_t i, int64_t col)
{
	__m256i v = _mm256_sub_epi32(
		_mm256_sub_epi32(s, _mm256_mullo_epi32(
					    _mm256_set1_epi32(e->za),
					    _mm256_loadu_si256((const __m256i *)(
						    e->cs + col)))),
		_mm256_mullo_epi32(_mm256_loadu_si256((const __m256i *)(e->zb +
									col)),
				   _mm256_set1_epi32(e->r[i])));
	__m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(v),
				 _mm256_loadu_ps(e->sp + col));
	if (e->bias)
		f = _mm256_add_ps(f, _mm256_loadu_ps(e->bias + col));
	float *at = e->y + i * e->ldy + col;
	int64_t left = e->n - col;
	if (left >= 8) {
		_mm256_storeu_ps(at, f);
	} else if (left > 0) {
		__m256i m = _mm256_loadu_si256(
			(const __m256i *)(simd_mask8 + 8 - left));
		_mm256_maskstore_ps(at, m, f);
	}
}

/* C (or Y through the epilogue) of MR rows by 16 columns (one panel at
 * b, column j0 of the product) over ntap taps (as dq_tile_vnni; lda and
 * toff count A's elements). */
static inline __attribute__((always_inline)) DQ256_TARGET void
D2(dq_tile)(const int MR, int ntap, const int64_t *toff, int64_t kq,
	    const DQ256_A *a, int64_t lda, const int8_t *b, int32_t *c,
	    int64_t ldc, const DqEpi *e, int64_t i0, int64_t j0)
{
#if DQ256_VNNI
	__m256i acc[DQ_MR][2];
#pragma GCC unroll 6
	for (int i = 0; i < MR; i++)
		acc[i][0] = acc[i][1] = _mm256_setzero_si256();
	for (int t = 0; t < ntap; t++, b += kq * 64) {
		const uint8_t *at = toff ? a + toff[t] : a;
		for (int64_t q = 0; q < kq; q++) {
			__m256i b0 = _mm256_loadu_si256(
				(const __m256i *)(b + q * 64));
			__m256i b1 = _mm256_loadu_si256(
				(const __m256i *)(b + q * 64 + 32));
#pragma GCC unroll 6
			for (int i = 0; i < MR; i++) {
				int32_t a4;
				memcpy(&a4, at + i * lda + q * 4, 4);
				__m256i av = _mm256_set1_epi32(a4);
				acc[i][0] = _mm256_dpbusd_avx_epi32(acc[i][0],
								    av, b0);
				acc[i][1] = _mm256_dpbusd_avx_epi32(acc[i][1],
								    av, b1);
			}
		}
	}
#pragma GCC unroll 2
	for (int h = 0; h < 2; h++)
#pragma GCC unroll 6
		for (int i = 0; i < MR; i++) {
			if (e && e->y)
				D2(dq_epi)(acc[i][h], e, i0 + i, j0 + 8 * h);
			else
				_mm256_storeu_si256(
					(__m256i *)(c + i * ldc + 8 * h),
					acc[i][h]);
		}
#else
	for (int h = 0; h < 2; h++) { /* half a panel: 8 columns */
		__m256i lo[DQ_MR], hi[DQ_MR];
#pragma GCC unroll 6
		for (int i = 0; i < MR; i++)
			lo[i] = hi[i] = _mm256_setzero_si256();
		const int8_t *bt = b + 32 * h;
		for (int t = 0; t < ntap; t++, bt += kq * 64) {
			const int16_t *at = toff ? a + toff[t] : a;
			for (int64_t q = 0; q < kq; q++) {
				/* columns 0-3 and 4-7 of the half, 4 k each */
				__m256i w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(
					(const __m128i *)(bt + q * 64)));
				__m256i w1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(
					(const __m128i *)(bt + q * 64 + 16)));
#pragma GCC unroll 6
				for (int i = 0; i < MR; i++) {
					int64_t a4;
					memcpy(&a4, at + i * lda + q * 4, 8);
					/* a's 4 int16, 4 times */
					__m256i av = _mm256_set1_epi64x(a4);
					lo[i] = _mm256_add_epi32(
						lo[i], _mm256_madd_epi16(av, w0));
					hi[i] = _mm256_add_epi32(
						hi[i], _mm256_madd_epi16(av, w1));
				}
			}
		}
#pragma GCC unroll 6
		for (int i = 0; i < MR; i++) {
			/* pairs added: columns 0, 1, 4, 5 | 2, 3, 6, 7 */
			__m256i s = _mm256_permute4x64_epi64(
				_mm256_hadd_epi32(lo[i], hi[i]), 0xd8);
			if (e && e->y)
				D2(dq_epi)(s, e, i0 + i, j0 + 8 * h);
			else
				_mm256_storeu_si256(
					(__m256i *)(c + i * ldc + 8 * h), s);
		}
	}
#endif
}

/* Columns j0..j0+8 of C (rows ldc apart, nr of them) through the
 * epilogue, as dq_value, column j to y + (j - j0) ys (a channel of NCHW
 * Y): 8 rows by 8 columns a step, computed along the columns and
 * transposed in registers (the scalar loop was 15% of an int8 CNN's run,
 * a gather a column 13%). */
DQ256_TARGET static void D2(dq_channels8)(const int32_t *c, int64_t ldc,
					  int64_t nr, const DqEpi *e,
					  int64_t j0, float *y, int64_t ys)
{
	const __m256i za_cs = _mm256_mullo_epi32(
		_mm256_set1_epi32(e->za),
		_mm256_loadu_si256((const __m256i *)(e->cs + j0)));
	const __m256i zb = _mm256_loadu_si256((const __m256i *)(e->zb + j0));
	const __m256 sp = _mm256_loadu_ps(e->sp + j0);
	const __m256 bias = e->bias ? _mm256_loadu_ps(e->bias + j0)
				    : _mm256_setzero_ps();
	int64_t i = 0;
	for (; i + 8 <= nr; i += 8) {
		__m256 v[8];
		for (int r = 0; r < 8; r++) {
			__m256i s = _mm256_loadu_si256(
				(const __m256i *)(c + (i + r) * ldc + j0));
			s = _mm256_sub_epi32(
				_mm256_sub_epi32(s, za_cs),
				_mm256_mullo_epi32(
					zb, _mm256_set1_epi32(e->r[i + r])));
			v[r] = _mm256_mul_ps(_mm256_cvtepi32_ps(s), sp);
			if (e->bias)
				v[r] = _mm256_add_ps(v[r], bias);
		}
		simd_transpose8(v); /* v[q]: column j0 + q's 8 rows */
		for (int q = 0; q < 8; q++)
			_mm256_storeu_ps(y + q * ys + i, v[q]);
	}
	for (; i < nr; i++)
		for (int64_t j = j0; j < j0 + 8; j++)
			y[(j - j0) * ys + i] =
				dq_value((uint32_t)c[i * ldc + j], e, i, j);
}

/* D2(dq_tile) of mr rows (1..DQ_MR). */
DQ256_TARGET static void D2(dq_tile_any)(int mr, int ntap, const int64_t *toff,
					 int64_t kq, const DQ256_A *a,
					 int64_t lda, const int8_t *b,
					 int32_t *c, int64_t ldc,
					 const DqEpi *e, int64_t i0, int64_t j0)
{
	switch (mr) {
#define DQ2_CASE(M)                                                          \
	case M:                                                              \
		D2(dq_tile)(M, ntap, toff, kq, a, lda, b, c, ldc, e, i0, j0); \
		break;
		DQ2_CASE(1) DQ2_CASE(2) DQ2_CASE(3) DQ2_CASE(4) DQ2_CASE(5)
		DQ2_CASE(6)
#undef DQ2_CASE
	}
}
