/*
 * runtime/simd.h - the vectors of the kernels written once and compiled
 * once per ISA level (runtime/pw_simd.h, wino_simd.h): AVX-512's 16
 * floats, AVX2's 8, and 4 at the baseline (SSE2 on x86-64, NEON on
 * ARM64, scalar code where a CPU has neither), in GCC's vector
 * extension, so that one source is each level's kernel.
 *
 * A template file is included once per level with
 *   SIMD_VL      lanes of a vector: 16, 8 or 4;
 *   SIMD_TARGET  the level's target attribute (empty at the baseline);
 *   SIMD_SFX     the suffix of its functions' names (avx512, avx2, base),
 * and names its functions SF(name); it includes this file first, which
 * defines, per level, V (the vector), VI (its lanes as int32), SIMD_FN
 * (an always-inlined helper of the level) and the helpers below.
 */
#include <string.h>

#include "rt.h"

#ifndef GEARC_RT_SIMD_ONCE
#define GEARC_RT_SIMD_ONCE
#if RT_X86
#include "simd_x86.h"
#endif
typedef float RtV16 __attribute__((vector_size(64)));
typedef float RtV8 __attribute__((vector_size(32)));
typedef float RtV4 __attribute__((vector_size(16)));
typedef int32_t RtI16 __attribute__((vector_size(64)));
typedef int32_t RtI8 __attribute__((vector_size(32)));
typedef int32_t RtI4 __attribute__((vector_size(16)));
#define SIMD_CAT2(a, b) a##b
#define SIMD_CAT(a, b) SIMD_CAT2(a, b)
#define SIMD_CAT3(a, b, c) a##_##b##_##c
#define SIMD_CATU(a, b) SIMD_CAT3(a, b, x)
#endif

#undef V
#undef VI
#undef SF
#undef SIMD_FN
#define V SIMD_CAT(RtV, SIMD_VL)
#define VI SIMD_CAT(RtI, SIMD_VL)
#define SF_2(name, sfx) name##_##sfx
#define SF_1(name, sfx) SF_2(name, sfx)
#define SF(name) SF_1(name, SIMD_SFX)
#define SIMD_FN static inline __attribute__((always_inline)) SIMD_TARGET

/* p[0..VL) */
SIMD_FN V SF(vload)(const float *p)
{
	V v;
	memcpy(&v, p, sizeof(v));
	return v;
}

SIMD_FN void SF(vstore)(float *p, V v) { memcpy(p, &v, sizeof(v)); }

/* p[0..n), 0 < n <= VL, the other lanes 0; nothing past p + n read. */
SIMD_FN V SF(vload_n)(const float *p, int64_t n)
{
#if SIMD_VL == 16 && RT_X86
	return (V)_mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1), p);
#elif SIMD_VL == 8 && RT_X86
	__m256i m;
	memcpy(&m, simd_mask8 + 8 - n, sizeof(m));
	return (V)_mm256_maskload_ps(p, m);
#else
	if (n == SIMD_VL)
		return SF(vload)(p);
	V v = { 0 };
	for (int64_t l = 0; l < n; l++)
		v[l] = p[l];
	return v;
#endif
}

/* p[0..n) = v's first n lanes, nothing past p + n written. */
SIMD_FN void SF(vstore_n)(float *p, V v, int64_t n)
{
#if SIMD_VL == 16 && RT_X86
	_mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1), (__m512)v);
#elif SIMD_VL == 8 && RT_X86
	__m256i m;
	memcpy(&m, simd_mask8 + 8 - n, sizeof(m));
	_mm256_maskstore_ps(p, m, (__m256)v);
#else
	if (n == SIMD_VL) {
		SF(vstore)(p, v);
		return;
	}
	for (int64_t l = 0; l < n; l++)
		p[l] = v[l];
#endif
}

/* x < 0 ? 0 : x per lane, as compiler/act.h's Relu (NaN and -0 kept). */
SIMD_FN V SF(vrelu)(V x)
{
	VI neg = x < (V){ 0 };
	return (V)((VI)x & ~neg);
}

/* Lanes whose |x| is not at most m (above it, or NaN): -1, others 0. */
SIMD_FN VI SF(vnot_within)(V x, float m)
{
	V a = (V)((VI)x & ((VI){ 0 } + 0x7fffffff));
	return ~(a <= (V){ 0 } + m);
}
