/*
 * runtime/ew.c - float32 elementwise ops in plain C (runtime/ew.h).
 *
 * Binary ops at any numpy broadcast: the output's dims merged where both
 * inputs step alike (compiler/ops/ewfast.c's EwWalk), so same-shape,
 * scalar, last-axis, per-channel and outer-product broadcasts all become
 * inner loops over contiguous runs with each input running or held, the
 * loops the compiler vectorises; the runs are split over the session's
 * threads in pieces of whole runs.  Each op is the reference kernel's
 * arithmetic (ewfast.c's, which the reference runs): the same bits,
 * NaN and -0 included (Max and Min propagate NaN as a + b; Pow as
 * pow in double rounded, x * x where the exponent is a constant 2, the
 * same value; PRelu x < 0 ? x * slope : x, the slope broadcast to x,
 * the reference's product in double rounded being the float product).
 *
 * Unary ops: the activations of compiler/act.h's table, when written as
 * their own ops (Tanh, LeakyRelu, Elu, Selu, Softplus, HardSigmoid,
 * HardSwish, Mish, Clip), by the table's fp32 forms (what FusedActivation
 * runs, within the accuracy the table states; NaN stays NaN); Reciprocal,
 * Softsign, Floor, Ceil, Round and Sign with the reference's bits (the
 * first two in double, as it computes them); the trigonometric and
 * hyperbolic ops, Celu and ThresholdedRelu as the reference computes
 * them (libm in double, rounded), in a loop of their own on the
 * session's threads.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/act.h"
#include "ew.h"

static bool static_f32(const Value *v)
{
	return v && v->dtype == DT_FLOAT && v->tkind == TK_TENSOR &&
	       shape_is_static(&v->shape);
}

/* Pieces a loop of n elements is cut into for threads threads: a few a
 * thread, so one descheduled thread holds up a little. */
static int64_t pieces(int64_t n, int threads)
{
	int64_t p = threads > 1 ? 4 * (int64_t)threads : 1;
	return p < n ? p : n > 0 ? n : 1;
}

/* ---- binary ---------------------------------------------------------------- */

enum { B_ADD, B_SUB, B_MUL, B_DIV, B_MAX, B_MIN, B_POW, B_SQUARE,
       B_PRELU, B_EQ, B_GT, B_GE, B_LT, B_LE };

typedef struct Binary {
	EwWalk w;
	int op; /* B_* */
	int threads;
	int64_t runs; /* inner runs: the product of the walk's outer dims */
} Binary;

/* y[0..n) = a op b, a and b stepping sa and sb (0 or 1) a step. */
#define LOOP(T, expr)                                                     \
	do {                                                              \
		T *y_ = y;                                                \
		if (sa && sb)                                             \
			for (int64_t i = 0; i < n; i++) {                 \
				float x = a[i], z = b[i];                 \
				(void)x, (void)z;                         \
				y_[i] = (expr);                           \
			}                                                 \
		else if (sa)                                              \
			for (int64_t i = 0, z0 = 0; i < n; i++) {         \
				float x = a[i], z = b[z0];                \
				(void)x, (void)z;                         \
				y_[i] = (expr);                           \
			}                                                 \
		else if (sb)                                              \
			for (int64_t i = 0, x0 = 0; i < n; i++) {         \
				float x = a[x0], z = b[i];                \
				(void)x, (void)z;                         \
				y_[i] = (expr);                           \
			}                                                 \
		else                                                      \
			for (int64_t i = 0; i < n; i++) {                 \
				float x = a[0], z = b[0];                 \
				(void)x, (void)z;                         \
				y_[i] = (expr);                           \
			}                                                 \
	} while (0)

RT_HOT_FN(static, void, bin_run,
	  (int op, int64_t n, const float *a, int64_t sa, const float *b, int64_t sb, void *y),
	  (op, n, a, sa, b, sb, y))
{
	switch (op) {
	case B_ADD: LOOP(float, x + z); break;
	case B_SUB: LOOP(float, x - z); break;
	case B_MUL: LOOP(float, x * z); break;
	case B_DIV: LOOP(float, x / z); break;
	/* NaN propagates (a + b), else the larger; on a tie the first, as
	 * the reference (max(-0, +0) is -0) */
	case B_MAX: LOOP(float, x != x || z != z ? x + z : x < z ? z : x);
		break;
	case B_MIN: LOOP(float, x != x || z != z ? x + z : z < x ? z : x);
		break;
	case B_POW: LOOP(float, (float)pow(x, z)); break;
	case B_SQUARE: LOOP(float, x * x); break;
	/* the slope only below 0: NaN and -0 pass as they are */
	case B_PRELU: LOOP(float, x < 0 ? x * z : x); break;
	case B_EQ: LOOP(uint8_t, x == z); break;
	case B_GT: LOOP(uint8_t, x > z); break;
	case B_GE: LOOP(uint8_t, x >= z); break;
	case B_LT: LOOP(uint8_t, x < z); break;
	default: LOOP(uint8_t, x <= z); break;
	}
}

/* Runs [r0, r1) of the walk (each w->dims[last] outputs). */
static void bin_runs(const Binary *k, const float *a, const float *b,
		     uint8_t *y, size_t ysize, int64_t r0, int64_t r1)
{
	const EwWalk *w = &k->w;
	int32_t last = w->rank - 1;
	int64_t n = w->dims[last], idx[MAX_RANK] = { 0 }, oa = 0, ob = 0;
	int64_t rem = r0;
	for (int32_t d = last - 1; d >= 0; d--) {
		idx[d] = rem % w->dims[d];
		rem /= w->dims[d];
		oa += idx[d] * w->st[0][d];
		ob += idx[d] * w->st[1][d];
	}
	for (int64_t r = r0; r < r1; r++) {
		bin_run(k->op, n, a + oa, w->st[0][last], b + ob,
			w->st[1][last], y + (size_t)(r * n) * ysize);
		for (int32_t d = last - 1; d >= 0; d--) {
			oa += w->st[0][d];
			ob += w->st[1][d];
			if (++idx[d] < w->dims[d])
				break;
			oa -= w->st[0][d] * w->dims[d];
			ob -= w->st[1][d] * w->dims[d];
			idx[d] = 0;
		}
	}
}

static int binary_run(void *state, const Tensor *const *in,
		      Tensor *const *out)
{
	const Binary *k = state;
	size_t ysize = k->op >= B_EQ ? 1 : sizeof(float);
	uint8_t *y = tensor_mut(out[0]);
	int nt = k->threads;
	int64_t np = pieces(k->runs, nt);
	RT_PARALLEL_FOR
	for (int64_t i = 0; i < np; i++)
		bin_runs(k, in[0]->data, in[1]->data, y, ysize,
			 k->runs * i / np, k->runs * (i + 1) / np);
	return 0;
}

/* The B_* of n (input 1 value b), or -1. */
static int bin_op(const Node *n, const Value *b)
{
	const Tensor *e = b->kind == VAL_WEIGHT ? b->konst : NULL;
	switch (n->op) {
	case OP_Add: return B_ADD;
	case OP_Sub: return B_SUB;
	case OP_Mul: return B_MUL;
	case OP_Div: return B_DIV;
	case OP_Max: return B_MAX;
	case OP_Min: return B_MIN;
	case OP_Pow:
		/* (float)pow(x, 2.0) is x * x exactly rounded: x * x */
		return e && shape_numel(&e->shape) == 1 &&
		       ((const float *)e->data)[0] == 2.0f
		       ? B_SQUARE
		       : B_POW;
	case OP_PRelu: return B_PRELU;
	case OP_Equal: return B_EQ;
	case OP_Greater: return B_GT;
	case OP_GreaterOrEqual: return B_GE;
	case OP_Less: return B_LT;
	case OP_LessOrEqual: return B_LE;
	}
	return -1;
}

int ew_binary(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	const Node *n = t->n;
	const Value *a = rt_in_val(p, n, 0), *b = rt_in_val(p, n, 1);
	const Value *y = &p->g->vals[n->outputs[0]];
	int op = n->ninputs == 2 && static_f32(a) && static_f32(b)
			 ? bin_op(n, b)
			 : -1;
	if (op < 0 || model_opset(s->model->m) < 7 ||
	    y->dtype != (op >= B_EQ ? DT_BOOL : DT_FLOAT) ||
	    !shape_is_static(&y->shape) || !shape_numel(&y->shape))
		return 0;
	Binary *k = xmalloc(sizeof(*k));
	const Shape *sh[2] = { &a->shape, &b->shape };
	ew_walk_init(&k->w, &y->shape, 2, sh);
	k->op = op;
	k->runs = shape_numel(&y->shape) / k->w.dims[k->w.rank - 1];
	k->threads = rt_threads_for(s, (double)shape_numel(&y->shape) *
					       (op == B_POW ? 20 : 1));
	fk->run = binary_run;
	fk->free = free;
	fk->state = k;
	fk->threads = k->threads;
	return 1;
}

/* ---- unary ----------------------------------------------------------------- */

/* Math ops the reference computes in double, rounded: the same. */
enum { U_ACT, U_RECIPROCAL, U_SOFTSIGN, U_FLOOR, U_CEIL, U_ROUND, U_SIGN,
       U_CELU, U_THRESHOLDED, U_LIBM };

typedef struct Unary {
	int kind;     /* U_* */
	int act;      /* U_ACT: ActKind */
	float a, b;   /* its parameters; Celu's, ThresholdedRelu's alpha */
	double (*math)(double); /* U_LIBM */
	int threads;
	int64_t n;
} Unary;

RT_HOT_FN(static, void, un_run,
	  (const Unary *k, const float *x, float *y, int64_t n),
	  (k, x, y, n))
{
	double a = k->a;
	switch (k->kind) {
	case U_ACT:
		act_loop_f32(k->act, x, y, (size_t)n, k->a, k->b);
		break;
	case U_RECIPROCAL:
		for (int64_t i = 0; i < n; i++)
			y[i] = (float)(1 / (double)x[i]);
		break;
	case U_SOFTSIGN:
		for (int64_t i = 0; i < n; i++)
			y[i] = (float)(x[i] / (1 + fabs((double)x[i])));
		break;
	case U_FLOOR:
		for (int64_t i = 0; i < n; i++)
			y[i] = floorf(x[i]);
		break;
	case U_CEIL:
		for (int64_t i = 0; i < n; i++)
			y[i] = ceilf(x[i]);
		break;
	case U_ROUND: /* half to even, the default rounding mode */
		for (int64_t i = 0; i < n; i++)
			y[i] = rintf(x[i]);
		break;
	case U_SIGN:
		for (int64_t i = 0; i < n; i++)
			y[i] = x[i] != x[i] ? x[i]
					    : (float)((x[i] > 0) - (x[i] < 0));
		break;
	case U_CELU:
		for (int64_t i = 0; i < n; i++) {
			double v = x[i];
			y[i] = (float)(v > 0 ? v : a * expm1(v / a));
		}
		break;
	case U_THRESHOLDED:
		for (int64_t i = 0; i < n; i++)
			y[i] = (double)x[i] > a ? x[i] : 0;
		break;
	default:
		for (int64_t i = 0; i < n; i++)
			y[i] = (float)k->math(x[i]);
	}
}

/* y may be x (in place): element i is read before it is written. */
static int unary_run(void *state, const Tensor *const *in,
		     Tensor *const *out)
{
	const Unary *k = state;
	const float *x = in[0]->data;
	float *y = tensor_mut(out[0]);
	int nt = k->threads;
	int64_t np = pieces(k->n, nt);
	RT_PARALLEL_FOR
	for (int64_t i = 0; i < np; i++) {
		int64_t lo = k->n * i / np, hi = k->n * (i + 1) / np;
		un_run(k, x + lo, y + lo, hi - lo);
	}
	return 0;
}

/* libm's double function of a unary math op, or NULL. */
static double (*libm_of(int op))(double)
{
	switch (op) {
	case OP_Sin: return sin;
	case OP_Cos: return cos;
	case OP_Tan: return tan;
	case OP_Asin: return asin;
	case OP_Acos: return acos;
	case OP_Atan: return atan;
	case OP_Sinh: return sinh;
	case OP_Cosh: return cosh;
	case OP_Asinh: return asinh;
	case OP_Acosh: return acosh;
	case OP_Atanh: return atanh;
	}
	return NULL;
}

/* Clip's bounds when constant (absent: +-inf), as the reference takes
 * them: attributes before opset 11, inputs since. */
static bool clip_bounds(const Prepared *p, const Node *n, int64_t opset,
			float *lo, float *hi)
{
	*lo = -INFINITY, *hi = INFINITY;
	if (opset < 11) {
		*lo = clip_attr_bound(n, opset, 0);
		*hi = clip_attr_bound(n, opset, 1);
		return true;
	}
	for (int i = 1; i < 3; i++) {
		const Value *v = rt_in_val(p, n, i);
		if (!v)
			continue;
		const Tensor *c = v->kind == VAL_WEIGHT ? v->konst : NULL;
		if (!c || c->dtype != DT_FLOAT || shape_numel(&c->shape) != 1)
			return false;
		*(i == 1 ? lo : hi) = ((const float *)c->data)[0];
	}
	return true;
}

/* The kind of unary op n into k: false if none here. */
static bool un_kind(const Prepared *p, const Node *n, int64_t opset,
		    Unary *k)
{
	static const struct { int op, kind; } math[] = {
		{ OP_Reciprocal, U_RECIPROCAL }, { OP_Softsign, U_SOFTSIGN },
		{ OP_Floor, U_FLOOR }, { OP_Ceil, U_CEIL },
		{ OP_Round, U_ROUND }, { OP_Sign, U_SIGN },
		{ OP_Celu, U_CELU }, { OP_ThresholdedRelu, U_THRESHOLDED },
	};
	for (size_t i = 0; i < sizeof(math) / sizeof(math[0]); i++)
		if (math[i].op == n->op) {
			k->kind = math[i].kind;
			k->a = attr_float(n, "alpha", 1.0f);
			return true;
		}
	if ((k->math = libm_of(n->op))) {
		k->kind = U_LIBM;
		return true;
	}
	for (int a = 0; a < ACT_COUNT; a++) {
		const ActInfo *ai = &act_info[a];
		if (ai->op != n->op)
			continue;
		k->kind = U_ACT;
		k->act = a;
		if (a == ACT_Clip)
			return clip_bounds(p, n, opset, &k->a, &k->b) &&
			       k->a <= k->b;
		k->a = ai->aname ? attr_float(n, ai->aname, ai->adef) : 0;
		k->b = ai->bname ? attr_float(n, ai->bname, ai->bdef) : 0;
		return true;
	}
	return false;
}

int ew_unary(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	Unary u = { 0 };
	if (!static_f32(x) || !static_f32(y) ||
	    !shape_equal(&x->shape, &y->shape) ||
	    !un_kind(p, n, model_opset(s->model->m), &u))
		return 0;
	Unary *k = xmalloc(sizeof(*k));
	*k = u;
	k->n = shape_numel(&y->shape);
	k->threads = rt_threads_for(s, 20.0 * (double)k->n);
	fk->run = unary_run;
	fk->free = free;
	fk->state = k;
	fk->threads = k->threads;
	return 1;
}
