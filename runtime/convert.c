/*
 * runtime/convert.c - Cast between the float types and from the integer
 * types to float32 as one pass over memory (runtime/convert.h).
 *
 * A float16 model widened by gearc (passes/widen.c) converts its inputs
 * and outputs with a Cast at each edge, and integer-to-float Casts sit
 * at the front of detectors and after quantized ops; the reference
 * kernel takes every element through double and costs ~20 ns each.
 *
 * Each conversion rounds once, as the reference kernel does:
 *   - float16 -> float32 is exact (F16C's vcvtph2ps, or minifloat_to);
 *   - float32 -> float16 rounds to nearest even, NaN stays NaN (F16C's
 *     vcvtps2ph with round-to-nearest, or minifloat_from of the float's
 *     exact double);
 *   - an integer -> float32 rounds once, as the reference kernel's way
 *     through double does: a 32-bit or narrower integer is exact in
 *     double, so converting it straight to float (vcvtdq2ps, vectorised)
 *     gives the same float; int64 goes through double as the reference
 *     does (exact below 2^53, a second rounding above).
 * tests/test_widen.c checks every float16 bit pattern and a sweep of
 * floats against the reference kernel.
 */
#include <string.h>

#include "convert.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_F16C_PATH 1
#endif

typedef void (*ConvertFn)(const void *x, void *y, size_t n);

static void half_to_float_c(const void *x, void *y, size_t n)
{
	const uint16_t *a = x;
	float *b = y;
	for (size_t i = 0; i < n; i++)
		b[i] = (float)minifloat_to(a[i], 5, 10);
}

static void float_to_half_c(const void *x, void *y, size_t n)
{
	const float *a = x;
	uint16_t *b = y;
	for (size_t i = 0; i < n; i++)
		b[i] = minifloat_from((double)a[i], 5, 10);
}

#ifdef HAVE_F16C_PATH
__attribute__((target("avx,f16c"))) static void
half_to_float_f16c(const void *x, void *y, size_t n)
{
	const uint16_t *a = x;
	float *b = y;
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(b + i, _mm256_cvtph_ps(_mm_loadu_si128(
						(const __m128i *)(a + i))));
	half_to_float_c(a + i, b + i, n - i);
}

__attribute__((target("avx,f16c"))) static void
float_to_half_f16c(const void *x, void *y, size_t n)
{
	const float *a = x;
	uint16_t *b = y;
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm_storeu_si128((__m128i *)(b + i),
				 _mm256_cvtps_ph(_mm256_loadu_ps(a + i),
						 _MM_FROUND_TO_NEAREST_INT));
	float_to_half_c(a + i, b + i, n - i);
}

/* Every CPU with AVX2 has F16C (and clang's __builtin_cpu_supports
 * knows no "f16c"). */
static bool has_f16c(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}
#endif

/* The integer types' loops, converting through V: float (straight) for
 * the types exact in double, double for int64 (see the top). */
#define INT_TO_FLOAT(name, T, V)                                       \
	RT_HOT static void name(const void *x, void *y, size_t n)      \
	{                                                              \
		const T *a = x;                                        \
		float *b = y;                                          \
		for (size_t i = 0; i < n; i++)                         \
			b[i] = (float)(V)a[i];                         \
	}
INT_TO_FLOAT(i8_to_float, int8_t, float)
INT_TO_FLOAT(u8_to_float, uint8_t, float)
INT_TO_FLOAT(i16_to_float, int16_t, float)
INT_TO_FLOAT(u16_to_float, uint16_t, float)
INT_TO_FLOAT(i32_to_float, int32_t, float)
INT_TO_FLOAT(u32_to_float, uint32_t, float)
INT_TO_FLOAT(i64_to_float, int64_t, double)
#undef INT_TO_FLOAT

static void bool_to_float(const void *x, void *y, size_t n)
{
	const uint8_t *a = x;
	float *b = y;
	for (size_t i = 0; i < n; i++)
		b[i] = a[i] ? 1.0f : 0.0f;
}

/* The conversion from dtype from to dtype to, or NULL. */
static ConvertFn convert_fn(int from, int to)
{
	if (from == DT_FLOAT16 && to == DT_FLOAT) {
#ifdef HAVE_F16C_PATH
		if (has_f16c())
			return half_to_float_f16c;
#endif
		return half_to_float_c;
	}
	if (from == DT_FLOAT && to == DT_FLOAT16) {
#ifdef HAVE_F16C_PATH
		if (has_f16c())
			return float_to_half_f16c;
#endif
		return float_to_half_c;
	}
	if (to != DT_FLOAT)
		return NULL;
	switch (from) {
	case DT_INT8: return i8_to_float;
	case DT_UINT8: return u8_to_float;
	case DT_INT16: return i16_to_float;
	case DT_UINT16: return u16_to_float;
	case DT_INT32: return i32_to_float;
	case DT_UINT32: return u32_to_float;
	case DT_INT64: return i64_to_float;
	case DT_BOOL: return bool_to_float;
	}
	return NULL;
}

static int convert_run(void *state, const Tensor *const *in,
		       Tensor *const *out)
{
	ConvertFn fn = (ConvertFn)(uintptr_t)state;
	size_t n = (size_t)shape_numel(&out[0]->shape);
	fn(in[0]->data, tensor_mut(out[0]), n);
	return 0;
}

int convert_cast(gearrt_session *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	if (n->op != OP_Cast || !x || x->tkind != TK_TENSOR ||
	    y->tkind != TK_TENSOR || !shape_is_static(&x->shape) ||
	    !shape_equal(&x->shape, &y->shape))
		return 0;
	ConvertFn fn = convert_fn(x->dtype, y->dtype);
	if (!fn)
		return 0;
	k->run = convert_run;
	k->free = NULL;
	k->state = (void *)(uintptr_t)fn;
	return 1;
}
