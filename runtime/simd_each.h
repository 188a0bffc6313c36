/*
 * runtime/simd_each.h - a kernel body compiled once per ISA level.
 *
 *   #define SIMD_BODY "pw_simd.h"
 *   #include "simd_each.h"
 *
 * includes SIMD_BODY with SIMD_VL (floats a vector), SIMD_TARGET (the
 * level's target attribute) and SIMD_SFX (its functions' suffix) set for
 * AVX-512 (16, avx512) and AVX2 (8, avx2) on x86-64, and for the base
 * ISA everywhere (4, base: SSE2 or NEON), so the body names each
 * function SF(name) and the caller picks the level cpu_isa() allows.
 */
#define SIMD_VL 16
#define SIMD_TARGET RT_TARGET_AVX512
#define SIMD_SFX avx512
#if RT_X86
#include SIMD_BODY
#endif
#undef SIMD_VL
#undef SIMD_TARGET
#undef SIMD_SFX
#define SIMD_VL 8
#define SIMD_TARGET RT_TARGET_AVX2
#define SIMD_SFX avx2
#if RT_X86
#include SIMD_BODY
#endif
#undef SIMD_VL
#undef SIMD_TARGET
#undef SIMD_SFX
#define SIMD_VL 4
#define SIMD_TARGET
#define SIMD_SFX base
#include SIMD_BODY
#undef SIMD_VL
#undef SIMD_TARGET
#undef SIMD_SFX
#undef SIMD_BODY
