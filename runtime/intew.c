/*
 * runtime/intew.c - the elementwise ops on int8, uint8, int32, int64 and
 * float16 as one pass over memory (runtime/intew.h): Add, Sub, Mul, Div,
 * Max, Min, Equal, Less, Greater (numpy broadcasting), Relu, Neg, Abs,
 * Clip (constant bounds) and Where (any dtype of 1, 2, 4 or 8 bytes).
 *
 * The reference kernels (compiler/ops/elementwise.c, logic.c) take every
 * element through a 64-bit scalar and cost 20-50 ns each; these loops
 * are the same functions, one row of the broadcast output at a time,
 * with the inputs' steps 0 or 1 known to the compiler (RT_HOT: built for
 * AVX-512 and AVX2 too).  They give the reference's results:
 *   - integers wrap (Add, Sub, Mul, Neg, Abs of the minimum, as the
 *     reference's 64-bit arithmetic truncated to the dtype); Div
 *     truncates toward zero, MIN / -1 wraps, and a zero divisor fails
 *     the run as the reference's uncomputed output does; int8 and uint8
 *     divide in float, int32 (and int64 below 2^52) in double, which
 *     vectorises and is exact: the quotient of two integers below 2^22
 *     (2^52) in magnitude never rounds across an integer in float
 *     (double);
 *   - float16 is widened to float32 a block at a time and the result
 *     rounded once to float16: float32 (24 bits) holds more than twice
 *     float16's 11 bits plus 2, so +, -, *, / rounded twice round as the
 *     reference's exact double result rounded once; Max and Min
 *     propagate NaN, Clip and Relu keep it, comparisons with NaN are
 *     false, as the reference's.
 * tests/test_intew.c checks each against the reference kernel.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "intew.h"

/* One row: y[i] = f(a[i * sa], b[i * sb]) for i < n, sa and sb 0 or 1. */
typedef void (*Row)(const void *a, size_t sa, const void *b, size_t sb,
		    void *y, size_t n);

/* The row kernel name over T to R of expression expr in x and z, with
 * its steps made constants for the vectoriser. */
#define ROW(name, T, R, expr)                                              \
	static inline __attribute__((always_inline)) void name##_at(      \
		const T *a, size_t sa, const T *b, size_t sb, R *y, size_t n) \
	{                                                                  \
		for (size_t i = 0; i < n; i++) {                           \
			T x = a[i * sa], z = b[i * sb];                    \
			y[i] = (R)(expr);                                  \
		}                                                          \
	}                                                                  \
	RT_HOT_FN(static, void, name, \
		(const void *a, size_t sa, const void *b, size_t sb, void *y, size_t n), \
		(a, sa, b, sb, y, n))              \
	{                                                                  \
		if (sa && sb)                                              \
			name##_at(a, 1, b, 1, y, n);                       \
		else if (sa)                                               \
			name##_at(a, 1, b, 0, y, n);                       \
		else if (sb)                                               \
			name##_at(a, 0, b, 1, y, n);                       \
		else                                                       \
			name##_at(a, 0, b, 0, y, n);                       \
	}

/* The binary ops on integer type T (U: its unsigned twin), Div by
 * expression div: the narrow types divide in float or double (see the
 * top), MIN / -1 wrapping to MIN; int64 divides exactly, MIN / -1
 * wrapping (div_i64_row below picks double where that is exact). */
#define INT_ROWS(s, T, U, div)                                             \
	ROW(add_##s, T, T, (U)x + (U)z)                                    \
	ROW(sub_##s, T, T, (U)x - (U)z)                                    \
	ROW(mul_##s, T, T, (U)x * (U)z)                                    \
	ROW(div_##s, T, T, div)                                            \
	ROW(max_##s, T, T, x < z ? z : x)                                  \
	ROW(min_##s, T, T, z < x ? z : x)                                  \
	ROW(eq_##s, T, uint8_t, x == z)                                    \
	ROW(lt_##s, T, uint8_t, x < z)                                     \
	ROW(gt_##s, T, uint8_t, z < x)
/* No branch around the division: the loop vectorises. */
#define DIV_IN(D, lo, hi)                                                  \
	((D)x / (D)z > (D)(hi) ? (D)(lo) : (D)x / (D)z)
INT_ROWS(i8, int8_t, uint8_t, DIV_IN(float, INT8_MIN, INT8_MAX))
INT_ROWS(u8, uint8_t, uint8_t, (float)x / (float)z)
INT_ROWS(i32, int32_t, uint32_t, DIV_IN(double, INT32_MIN, INT32_MAX))
INT_ROWS(i64, int64_t, uint64_t, z == -1 ? (int64_t)(0 - (uint64_t)x) : x / z)
#undef INT_ROWS
#undef DIV_IN

/* int64 Div in double (vectorised) when every operand of the row is
 * below 2^52 in magnitude, where the quotient never rounds across an
 * integer; else div_i64's exact division. */
ROW(divd_i64, int64_t, int64_t, (double)x / (double)z)

RT_HOT_FN(static, bool, below_2_52,
	   (const int64_t *a, size_t n),
	   (a, n))
{
	bool ok = true;
	for (size_t i = 0; i < n; i++)
		ok &= a[i] > -(INT64_C(1) << 52) && a[i] < INT64_C(1) << 52;
	return ok;
}

static void div_i64_row(const void *a, size_t sa, const void *b, size_t sb,
			void *y, size_t n)
{
	if (below_2_52(a, sa ? n : 1) && below_2_52(b, sb ? n : 1))
		divd_i64(a, sa, b, sb, y, n);
	else
		div_i64(a, sa, b, sb, y, n);
}

/* float32 for float16 (NaN in Max and Min: x + z, a NaN). */
ROW(add_f, float, float, x + z)
ROW(sub_f, float, float, x - z)
ROW(mul_f, float, float, x * z)
ROW(div_f, float, float, x / z)
ROW(max_f, float, float, x != x || z != z ? x + z : x < z ? z : x)
ROW(min_f, float, float, x != x || z != z ? x + z : z < x ? z : x)
ROW(eq_f, float, uint8_t, x == z)
ROW(lt_f, float, uint8_t, x < z)
ROW(gt_f, float, uint8_t, z < x)
#undef ROW

enum { B_ADD, B_SUB, B_MUL, B_DIV, B_MAX, B_MIN, B_EQ, B_LT, B_GT, NBIN };
enum { T_I8, T_U8, T_I32, T_I64, T_F16, NTYPES };

static const Row rows[NBIN][NTYPES] = {
#define OPS(o) { o##_i8, o##_u8, o##_i32, o##_i64, o##_f }
	OPS(add), OPS(sub), OPS(mul),
	{ div_i8, div_u8, div_i32, div_i64_row, div_f }, OPS(max),
	OPS(min), OPS(eq), OPS(lt), OPS(gt),
#undef OPS
};

static int type_of(int dt)
{
	switch (dt) {
	case DT_INT8: return T_I8;
	case DT_UINT8: return T_U8;
	case DT_INT32: return T_I32;
	case DT_INT64: return T_I64;
	case DT_FLOAT16: return T_F16;
	}
	return -1;
}

static int bin_of(int op)
{
	switch (op) {
	case OP_Add: return B_ADD;
	case OP_Sub: return B_SUB;
	case OP_Mul: return B_MUL;
	case OP_Div: return B_DIV;
	case OP_Max: return B_MAX;
	case OP_Min: return B_MIN;
	case OP_Equal: return B_EQ;
	case OP_Less: return B_LT;
	case OP_Greater: return B_GT;
	}
	return -1;
}

/* ---- the broadcast walk ------------------------------------------------- */

enum { MAXIN = EW_WALK_IN, BLOCK = 512 };

/* Calls row(ctx, off, n) for each row of the walk: off[k] the element
 * offset of input k (the output's is off[nin]), n the row's length. */
typedef void (*RowFn)(const void *ctx, const int64_t *off, size_t n);

static void walk_rows(const EwWalk *w, RowFn row, const void *ctx)
{
	int64_t idx[MAX_RANK] = { 0 }, off[MAXIN + 1] = { 0 };
	int32_t r = w->rank - 1;
	int64_t nrows = 1, len = w->dims[r];
	for (int32_t a = 0; a < r; a++)
		nrows *= w->dims[a];
	for (int64_t i = 0; i < nrows; i++) {
		off[w->nin] = i * len;
		row(ctx, off, (size_t)len);
		for (int32_t a = r - 1; a >= 0; a--) {
			for (int k = 0; k < w->nin; k++)
				off[k] += w->st[k][a];
			if (++idx[a] < w->dims[a])
				break;
			for (int k = 0; k < w->nin; k++)
				off[k] -= w->st[k][a] * w->dims[a];
			idx[a] = 0;
		}
	}
}

/* ---- binary ops ------------------------------------------------------------ */

typedef struct Bin {
	EwWalk w;
	Row row;
	int type, op;
	size_t es, ey; /* bytes of an input, an output element */
	/* a run's tensors */
	const uint8_t *a, *b;
	uint8_t *y;
} Bin;

/* A float16 row: blocks widened to float32, computed, narrowed. */
static void half_row(const Bin *b, const uint16_t *x, size_t sx,
		     const uint16_t *z, size_t sz, uint8_t *y, size_t n)
{
	float fx[BLOCK], fz[BLOCK], fy[BLOCK];
	uint8_t *yb = y;
	bool to_bool = b->op >= B_EQ;
	for (size_t i = 0; i < n; i += BLOCK) {
		size_t m = n - i < BLOCK ? n - i : BLOCK;
		convert_half_float(x + i * sx, fx, sx ? m : 1);
		convert_half_float(z + i * sz, fz, sz ? m : 1);
		if (to_bool) {
			b->row(fx, sx, fz, sz, yb + i, m);
			continue;
		}
		b->row(fx, sx, fz, sz, fy, m);
		convert_float_half(fy, (uint16_t *)(void *)y + i, m);
	}
}

static void bin_row(const void *ctx, const int64_t *off, size_t n)
{
	const Bin *b = ctx;
	size_t sa = b->w.st[0][b->w.rank - 1] != 0;
	size_t sb = b->w.st[1][b->w.rank - 1] != 0;
	const uint8_t *x = b->a + (size_t)off[0] * b->es;
	const uint8_t *z = b->b + (size_t)off[1] * b->es;
	uint8_t *y = b->y + (size_t)off[2] * b->ey;
	if (b->type == T_F16)
		half_row(b, (const uint16_t *)(const void *)x, sa,
			 (const uint16_t *)(const void *)z, sb, y, n);
	else
		b->row(x, sa, z, sb, y, n);
}

/* Whether integer tensor t holds a zero. */
static bool has_zero(const Tensor *t)
{
	size_t n = (size_t)shape_numel(&t->shape), es = dtype_size(t->dtype);
	const uint8_t *p = t->data;
	static const uint8_t zero[8];
	for (size_t i = 0; i < n; i++)
		if (!memcmp(p + i * es, zero, es))
			return true;
	return false;
}

static int bin_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	Bin *b = state;
	if (b->op == B_DIV && b->type != T_F16 && has_zero(in[1]))
		return error("output 0 ('%s') was not computed: a divisor is "
			     "0", out[0]->name);
	b->a = in[0]->data;
	b->b = in[1]->data;
	b->y = tensor_mut(out[0]);
	walk_rows(&b->w, bin_row, b);
	return 0;
}

/* A static plain tensor of value v, or NULL. */
static const Value *static_val(const Value *v)
{
	return v && v->tkind == TK_TENSOR && shape_is_static(&v->shape) &&
			       v->shape.rank <= MAX_RANK
		       ? v
		       : NULL;
}

int intew_binary(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *a = static_val(rt_in_val(p, n, 0));
	const Value *b = static_val(rt_in_val(p, n, 1));
	const Value *y = static_val(&p->g->vals[n->outputs[0]]);
	int op = bin_of(n->op), type = a ? type_of(a->dtype) : -1;
	if (op < 0 || type < 0 || n->ninputs != 2 || !b || !y ||
	    b->dtype != a->dtype || model_opset(s->model->m) < 7 ||
	    y->dtype != (op >= B_EQ ? DT_BOOL : a->dtype))
		return 0;
	Bin *st = xmalloc(sizeof(*st));
	memset(st, 0, sizeof(*st));
	const Shape *sh[2] = { &a->shape, &b->shape };
	ew_walk_init(&st->w, &y->shape, 2, sh);
	st->row = rows[op][type];
	st->type = type;
	st->op = op;
	st->es = dtype_size(a->dtype);
	st->ey = dtype_size(y->dtype);
	k->run = bin_run;
	k->free = free;
	k->state = st;
	return 1;
}

/* ---- unary ops and Clip -------------------------------------------------- */

/* y[i] = f(x[i]) for i < n; lo and hi Clip's bounds (NULL: none). */
typedef void (*Unary)(const void *x, void *y, size_t n, const void *lo,
		      const void *hi);

#define UNARY(name, T, expr)                                               \
	RT_HOT_FN(static, void, name, \
		(const void *xp, void *yp, size_t n, const void *lo, const void *hi), \
		(xp, yp, n, lo, hi))            \
	{                                                                  \
		const T *a = xp;                                           \
		T *b = yp;                                                 \
		(void)lo;                                                  \
		(void)hi;                                                  \
		for (size_t i = 0; i < n; i++) {                           \
			T x = a[i];                                        \
			b[i] = (T)(expr);                                  \
		}                                                          \
	}

/* Clip: each bound a scalar of T, or none. */
#define CLIP(name, T)                                                      \
	RT_HOT_FN(static, void, name, \
		(const void *xp, void *yp, size_t n, const void *lo, const void *hi), \
		(xp, yp, n, lo, hi))            \
	{                                                                  \
		const T *a = xp;                                           \
		T *b = yp;                                                 \
		T l = lo ? *(const T *)lo : 0, h = hi ? *(const T *)hi : 0; \
		bool hl = lo, hh = hi;                                     \
		for (size_t i = 0; i < n; i++) {                           \
			T v = a[i];                                        \
			v = hl && v < l ? l : v;                           \
			b[i] = hh && h < v ? h : v;                        \
		}                                                          \
	}

#define INT_UNARY(s, T, U)                                                 \
	UNARY(relu_##s, T, x < 0 ? 0 : x)                                  \
	UNARY(neg_##s, T, 0 - (U)x)                                        \
	UNARY(abs_##s, T, x < 0 ? (T)(0 - (U)x) : x)                       \
	CLIP(clip_##s, T)
INT_UNARY(i8, int8_t, uint8_t)
INT_UNARY(i32, int32_t, uint32_t)
INT_UNARY(i64, int64_t, uint64_t)
#undef INT_UNARY
UNARY(relu_u8, uint8_t, x)
UNARY(neg_u8, uint8_t, 0 - x)
UNARY(abs_u8, uint8_t, x)
CLIP(clip_u8, uint8_t)
/* float16 bits: negative, not NaN and not -0 -> +0; the sign flipped;
 * the sign cleared. */
UNARY(relu_h, uint16_t,
      (x & 0x8000) && (x & 0x7fff) && (x & 0x7fff) <= 0x7c00 ? 0 : x)
UNARY(neg_h, uint16_t, x ^ 0x8000)
UNARY(abs_h, uint16_t, x & 0x7fff)
CLIP(clip_f, float)
#undef UNARY
#undef CLIP

/* Clip of float16: blocks widened, clipped in float32 (exact), narrowed;
 * the bounds float16 too. */
static void clip_h(const void *xp, void *yp, size_t n, const void *lo,
		   const void *hi)
{
	const uint16_t *x = xp;
	uint16_t *y = yp;
	float fx[BLOCK], l, h;
	if (lo)
		convert_half_float(lo, &l, 1);
	if (hi)
		convert_half_float(hi, &h, 1);
	for (size_t i = 0; i < n; i += BLOCK) {
		size_t m = n - i < BLOCK ? n - i : BLOCK;
		convert_half_float(x + i, fx, m);
		clip_f(fx, fx, m, lo ? &l : NULL, hi ? &h : NULL);
		convert_float_half(fx, y + i, m);
	}
}

enum { U_RELU, U_NEG, U_ABS, U_CLIP, NUN };

static const Unary unaries[NUN][NTYPES] = {
#define OPS(o) { o##_i8, o##_u8, o##_i32, o##_i64, o##_h }
	OPS(relu), OPS(neg), OPS(abs), OPS(clip),
#undef OPS
};

typedef struct Un {
	Unary fn;
	int nin; /* the node's inputs: Clip's bounds are 1 and 2 */
} Un;

static int unary_run(void *state, const Tensor *const *in,
		     Tensor *const *out)
{
	const Un *u = state;
	const void *lo = u->nin > 1 && in[1] ? in[1]->data : NULL;
	const void *hi = u->nin > 2 && in[2] ? in[2]->data : NULL;
	u->fn(in[0]->data, tensor_mut(out[0]),
	      (size_t)shape_numel(&out[0]->shape), lo, hi);
	return 0;
}

/* Clip's bounds: absent, or one element of x's dtype (Clip-11 on). */
static bool clip_bounds_ok(RunCtx *s, Prepared *p, const Node *n,
			   int dt)
{
	if (model_opset(s->model->m) < 11)
		return false;
	for (int k = 1; k < 3; k++) {
		const Value *b = static_val(rt_in_val(p, n, k));
		if (rt_in_val(p, n, k) &&
		    (!b || b->dtype != dt || shape_numel(&b->shape) != 1))
			return false;
	}
	return true;
}

int intew_unary(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *x = static_val(rt_in_val(p, n, 0));
	const Value *y = static_val(&p->g->vals[n->outputs[0]]);
	int type = x ? type_of(x->dtype) : -1;
	int op = n->op == OP_Relu ? U_RELU : n->op == OP_Neg ? U_NEG
	       : n->op == OP_Abs  ? U_ABS  : n->op == OP_Clip ? U_CLIP : -1;
	if (op < 0 || type < 0 || !y || y->dtype != x->dtype ||
	    !shape_equal(&x->shape, &y->shape) ||
	    (op == U_CLIP && !clip_bounds_ok(s, p, n, x->dtype)))
		return 0;
	Un *st = xmalloc(sizeof(*st));
	st->fn = unaries[op][type];
	st->nin = n->ninputs;
	k->run = unary_run;
	k->free = free;
	k->state = st;
	return 1;
}

/* ---- Where ------------------------------------------------------------------ */

#define WHERE(name, T)                                                     \
	static inline __attribute__((always_inline)) void name##_at(      \
		const uint8_t *c, size_t sc, const T *a, size_t sa,        \
		const T *b, size_t sb, T *y, size_t n)                     \
	{                                                                  \
		for (size_t i = 0; i < n; i++)                             \
			y[i] = c[i * sc] ? a[i * sa] : b[i * sb];          \
	}                                                                  \
	RT_HOT_FN(static, void, name, \
		(const uint8_t *c, size_t sc, const void *a, size_t sa, const void *b, size_t sb, void *y, size_t n), \
		(c, sc, a, sa, b, sb, y, n))                         \
	{                                                                  \
		if (sc && sa && sb)                                        \
			name##_at(c, 1, a, 1, b, 1, y, n);                 \
		else                                                       \
			name##_at(c, sc, a, sa, b, sb, y, n);              \
	}
WHERE(where_1, uint8_t)
WHERE(where_2, uint16_t)
WHERE(where_4, uint32_t)
WHERE(where_8, uint64_t)
#undef WHERE

typedef void (*WhereRow)(const uint8_t *c, size_t sc, const void *a,
			 size_t sa, const void *b, size_t sb, void *y,
			 size_t n);

typedef struct Where {
	EwWalk w;
	WhereRow row;
	size_t es;
	const Tensor *const *in;
	uint8_t *y;
} Where;

static void where_row(const void *ctx, const int64_t *off, size_t n)
{
	const Where *w = ctx;
	int32_t r = w->w.rank - 1;
	const uint8_t *c = w->in[0]->data, *a = w->in[1]->data;
	const uint8_t *b = w->in[2]->data;
	w->row(c + off[0], w->w.st[0][r] != 0, a + (size_t)off[1] * w->es,
	       w->w.st[1][r] != 0, b + (size_t)off[2] * w->es,
	       w->w.st[2][r] != 0, w->y + (size_t)off[3] * w->es, n);
}

static int where_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	Where *w = state;
	w->in = in;
	w->y = tensor_mut(out[0]);
	walk_rows(&w->w, where_row, w);
	return 0;
}

int intew_where(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	const Value *c = static_val(rt_in_val(p, n, 0));
	const Value *a = static_val(rt_in_val(p, n, 1));
	const Value *b = static_val(rt_in_val(p, n, 2));
	const Value *y = static_val(&p->g->vals[n->outputs[0]]);
	if (n->op != OP_Where || !c || !a || !b || !y ||
	    c->dtype != DT_BOOL || a->dtype == DT_STRING ||
	    b->dtype != a->dtype || y->dtype != a->dtype)
		return 0;
	size_t es = dtype_size(a->dtype);
	WhereRow row = es == 1 ? where_1 : es == 2 ? where_2
		     : es == 4 ? where_4 : es == 8 ? where_8 : NULL;
	if (!row)
		return 0;
	Where *st = xmalloc(sizeof(*st));
	memset(st, 0, sizeof(*st));
	const Shape *sh[3] = { &c->shape, &a->shape, &b->shape };
	ew_walk_init(&st->w, &y->shape, 3, sh);
	st->row = row;
	st->es = es;
	k->run = where_run;
	k->free = free;
	k->state = st;
	return 1;
}
