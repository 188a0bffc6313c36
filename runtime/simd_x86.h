/*
 * runtime/simd_x86.h - the AVX2 pieces that kernels share whether they
 * are written over runtime/simd.h's template (pw_simd.h, wino_simd.h) or
 * not (quant.c's int8 tiles, dq_simd.h): the mask of AVX2's masked loads
 * and stores, and the 8 x 8 transpose of floats.  x86-64 only (RT_X86).
 */
#ifndef GEARC_RUNTIME_SIMD_X86_H
#define GEARC_RUNTIME_SIMD_X86_H

#include <immintrin.h>
#include <stdint.h>

/* AVX2's masked loads and stores take a mask of whole lanes: 8 from
 * simd_mask8 + 8 - n are the first n lanes set. */
static const int32_t simd_mask8[16] __attribute__((aligned(64))) = {
	-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* r's 8 rows of 8 floats, transposed: floats, pairs, then 128-bit
 * halves interleaved.  Inlined into any function whose target has
 * AVX2. */
static inline __attribute__((always_inline, target("avx2"))) void
simd_transpose8(__m256 r[8])
{
	__m256 a[8], b[8];
	for (int i = 0; i < 8; i += 2) {
		a[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
		a[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
	}
	for (int i = 0; i < 8; i += 4)
		for (int j = 0; j < 2; j++) {
			b[i + 2 * j] = _mm256_shuffle_ps(a[i + j], a[i + j + 2],
							 0x44);
			b[i + 2 * j + 1] = _mm256_shuffle_ps(
				a[i + j], a[i + j + 2], 0xee);
		}
	for (int j = 0; j < 4; j++) {
		r[j] = _mm256_permute2f128_ps(b[j], b[4 + j], 0x20);
		r[4 + j] = _mm256_permute2f128_ps(b[j], b[4 + j], 0x31);
	}
}

#endif
