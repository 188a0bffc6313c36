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
 *   - float16 -> float32 is exact (compiler/ir.c's half_to_float_n:
 *     F16C's vcvtph2ps, or minifloat_to);
 *   - float32 -> float16 rounds to nearest even, NaN stays NaN (ir.c's
 *     float_to_half_n: F16C's vcvtps2ph with round-to-nearest, or
 *     minifloat_from of the float's exact double);
 *   - an integer -> float32 rounds once, as the reference kernel's way
 *     through double does: a 32-bit or narrower integer is exact in
 *     double, so converting it straight to float (vcvtdq2ps, vectorised)
 *     gives the same float; int64 goes through double as the reference
 *     does (exact below 2^53, a second rounding above).
 * tests/test_widen.c checks every float16 bit pattern and a sweep of
 * floats against the reference kernel.
 */
#include <stdlib.h>
#include <string.h>

#include "convert.h"

typedef void (*ConvertFn)(const void *x, void *y, size_t n);

static void half_to_float(const void *x, void *y, size_t n)
{
	half_to_float_n(x, y, n);
}

static void float_to_half(const void *x, void *y, size_t n)
{
	float_to_half_n(x, y, n);
}

/* The integer types' loops, converting through V: float (straight) for
 * the types exact in double, double for int64 (see the top). */
#define INT_TO_FLOAT(name, T, V)                                       \
	RT_HOT_FN(static, void, name, (const void *x, void *y, size_t n), \
		  (x, y, n))      \
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

/* Between the integer types, to double, to bool: C's conversions, which
 * are the reference's (an integer wraps to the narrower type, as gcc
 * converts; a value is exact in double below 2^53, the rounding of
 * (double) above, as ew_put's; bool is v != 0, NaN true).  S -> D. */
#define PLAIN(name, S, D, expr)                                        \
	RT_HOT_FN(static, void, name, (const void *x, void *y, size_t n), \
		  (x, y, n))      \
	{                                                              \
		const S *a = x;                                        \
		D *b = y;                                              \
		for (size_t i = 0; i < n; i++)                         \
			b[i] = (D)(expr);                              \
	}
#define TO_INTS(s, S)                                                  \
	PLAIN(s##_to_i8, S, int8_t, a[i])                              \
	PLAIN(s##_to_u8, S, uint8_t, a[i])                             \
	PLAIN(s##_to_i32, S, int32_t, a[i])                            \
	PLAIN(s##_to_i64, S, int64_t, a[i])                            \
	PLAIN(s##_to_f64, S, double, a[i])                             \
	PLAIN(s##_to_bool, S, uint8_t, a[i] != 0)
TO_INTS(i8, int8_t)
TO_INTS(u8, uint8_t)
TO_INTS(i32, int32_t)
TO_INTS(i64, int64_t)
PLAIN(f32_to_f64, float, double, a[i])
PLAIN(f64_to_f32, double, float, a[i])
PLAIN(f32_to_bool, float, uint8_t, a[i] != 0)
PLAIN(f64_to_bool, double, uint8_t, a[i] != 0)
PLAIN(bool_to_f64, uint8_t, double, a[i] != 0)
PLAIN(bool_to_i32, uint8_t, int32_t, a[i] != 0)
PLAIN(bool_to_i64, uint8_t, int64_t, a[i] != 0)
PLAIN(bool_to_u8, uint8_t, uint8_t, a[i] != 0)
PLAIN(bool_to_i8, uint8_t, int8_t, a[i] != 0)
#undef TO_INTS
#undef PLAIN

/* A float or double to an integer type truncates toward zero, as the
 * reference does, which computes nothing if an element is NaN or out of
 * the type's range: the loop counts those instead (0: the result is
 * the reference's). */
typedef size_t (*CheckedFn)(const void *x, void *y, size_t n);

#define TRUNC(name, S, D, lo, hi)                                      \
	RT_HOT_FN(static, size_t, name, (const void *x, void *y, size_t n), \
		  (x, y, n))    \
	{                                                              \
		const S *a = x;                                        \
		D *b = y;                                              \
		size_t bad = 0;                                        \
		for (size_t i = 0; i < n; i++) {                       \
			double d = (double)a[i];                       \
			bool ok = d > (double)(lo) - 1 &&              \
				  d < (double)(hi) + 1;                \
			bad += !ok;                                    \
			b[i] = ok ? (D)a[i] : 0;                       \
		}                                                      \
		return bad;                                            \
	}
TRUNC(f32_to_i8, float, int8_t, INT8_MIN, INT8_MAX)
TRUNC(f32_to_u8, float, uint8_t, 0, UINT8_MAX)
TRUNC(f32_to_i32, float, int32_t, -2147483648.0, 2147483647.0)
TRUNC(f64_to_i8, double, int8_t, INT8_MIN, INT8_MAX)
TRUNC(f64_to_u8, double, uint8_t, 0, UINT8_MAX)
TRUNC(f64_to_i32, double, int32_t, -2147483648.0, 2147483647.0)
#undef TRUNC

/* int64's bounds are not exact as S + 1: [-2^63, 2^63). */
#define TRUNC64(name, S)                                               \
	RT_HOT_FN(static, size_t, name, (const void *x, void *y, size_t n), \
		  (x, y, n))    \
	{                                                              \
		const S *a = x;                                        \
		int64_t *b = y;                                        \
		size_t bad = 0;                                        \
		for (size_t i = 0; i < n; i++) {                       \
			S v = a[i];                                    \
			bool ok = v >= (S)-9223372036854775808.0 &&    \
				  v < (S)9223372036854775808.0;        \
			bad += !ok;                                    \
			b[i] = ok ? (int64_t)v : 0;                    \
		}                                                      \
		return bad;                                            \
	}
TRUNC64(f32_to_i64, float)
TRUNC64(f64_to_i64, double)
#undef TRUNC64
/* The loop to float32 from dtype from, or NULL. */
static ConvertFn to_float(int from)
{
	switch (from) {
	case DT_FLOAT16: return half_to_float;
	case DT_DOUBLE: return f64_to_f32;
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

void convert_half_float(const void *x, float *y, size_t n)
{
	to_float(DT_FLOAT16)(x, y, n);
}

void convert_float_half(const float *x, void *y, size_t n)
{
	float_to_half(x, y, n);
}

/* A Cast's loops: pre (if any) to float32 a block at a time, then
 * plain, or checked counting the elements the reference leaves
 * uncomputed. */
typedef struct Convert {
	ConvertFn pre, plain;
	CheckedFn checked;
} Convert;

/* The loop from float32 (double if dbl) to dtype to, into *c. */
static bool from_float(int to, bool dbl, Convert *c)
{
	switch (to) {
	case DT_DOUBLE: c->plain = dbl ? NULL : f32_to_f64; break;
	case DT_FLOAT: c->plain = dbl ? f64_to_f32 : NULL; break;
	case DT_FLOAT16: c->plain = dbl ? NULL : float_to_half; break;
	case DT_BOOL: c->plain = dbl ? f64_to_bool : f32_to_bool; break;
	case DT_INT8: c->checked = dbl ? f64_to_i8 : f32_to_i8; break;
	case DT_UINT8: c->checked = dbl ? f64_to_u8 : f32_to_u8; break;
	case DT_INT32: c->checked = dbl ? f64_to_i32 : f32_to_i32; break;
	case DT_INT64: c->checked = dbl ? f64_to_i64 : f32_to_i64; break;
	}
	return c->plain || c->checked;
}

/* The loop from an integer type or bool to another, double or bool
 * (bool to bool is the identity, never asked for). */
#define bool_to_bool NULL
static ConvertFn int_to(int from, int to)
{
#define ROW(s, x)                                                      \
	case x:                                                        \
		switch (to) {                                          \
		case DT_INT8: return s##_to_i8;                        \
		case DT_UINT8: return s##_to_u8;                       \
		case DT_INT32: return s##_to_i32;                      \
		case DT_INT64: return s##_to_i64;                      \
		case DT_DOUBLE: return s##_to_f64;                     \
		case DT_BOOL: return s##_to_bool;                      \
		}                                                      \
		return NULL;
	switch (from) {
	ROW(i8, DT_INT8)
	ROW(u8, DT_UINT8)
	ROW(i32, DT_INT32)
	ROW(i64, DT_INT64)
	ROW(bool, DT_BOOL)
	}
	return NULL;
#undef ROW
}
#undef bool_to_bool

/* The loops of a Cast from dtype from to dtype to, into *c: false if
 * the reference kernel runs it.  Through float32 where every value of
 * from is exact in float32, or where the result rounds as the
 * reference's does: integers to float16 (exact below 2^24, infinite in
 * float16 above either way). */
static bool convert_pick(int from, int to, Convert *c)
{
	memset(c, 0, sizeof(*c));
	if (from == to)
		return false;
	if (to == DT_FLOAT)
		return (c->plain = to_float(from)) != NULL;
	if (from == DT_FLOAT || from == DT_DOUBLE)
		return from_float(to, from == DT_DOUBLE, c);
	if ((c->plain = int_to(from, to)))
		return true;
	bool exact = from == DT_FLOAT16 || from == DT_INT8 ||
		     from == DT_UINT8 || from == DT_BOOL;
	if (!(exact || to == DT_FLOAT16) || !(c->pre = to_float(from)))
		return false;
	return from_float(to, false, c);
}

enum { BLOCK = 1024 };

static int convert_run(void *state, const Tensor *const *in,
		       Tensor *const *out)
{
	const Convert *c = state;
	size_t n = (size_t)shape_numel(&out[0]->shape), bad = 0;
	size_t sx = dtype_size(in[0]->dtype), sy = dtype_size(out[0]->dtype);
	const uint8_t *x = in[0]->data;
	uint8_t *y = tensor_mut(out[0]);
	float buf[BLOCK];
	for (size_t i = 0; i < n; i += c->pre ? BLOCK : n) {
		size_t m = c->pre && n - i > BLOCK ? BLOCK : n - i;
		const void *src = x + i * sx;
		if (c->pre) {
			c->pre(src, buf, m);
			src = buf;
		}
		if (c->checked)
			bad += c->checked(src, y + i * sy, m);
		else
			c->plain(src, y + i * sy, m);
	}
	if (bad)
		return error("output 0 ('%s') was not computed: %zu elements "
			     "are NaN or out of the range of %s", out[0]->name,
			     bad, dtype_name(out[0]->dtype));
	return 0;
}

int convert_cast(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	Convert c;
	if (n->op != OP_Cast || !x || x->tkind != TK_TENSOR ||
	    y->tkind != TK_TENSOR || !shape_is_static(&x->shape) ||
	    !shape_equal(&x->shape, &y->shape) ||
	    !convert_pick(x->dtype, y->dtype, &c))
		return 0;
	Convert *st = xmalloc(sizeof(*st));
	*st = c;
	k->run = convert_run;
	k->free = free;
	k->state = st;
	return 1;
}
