/*
 * compiler/ops/ewfast.c - float32 fast paths of the elementwise kernels:
 * unary math and activations, Clip, the binary arithmetic
 * (Add, Sub, Mul, Div, Max, Min, Pow) and the comparisons to bool, as
 * tight loops over the planned output buffer.
 *
 * They give the exact engine's results (elementwise.c): float Add, Sub,
 * Mul and Div, comparisons, Max/Min and Relu-like selections are exact
 * in float, and other functions are computed in double and rounded once,
 * as the exact engine does.  Broadcasting merges the output's dims into
 * runs the inputs walk with stride 1 or 0, so same-shape, scalar,
 * last-axis and channel broadcasts all become one inner loop.  An output
 * aliased to an input (in place) is fine: element i is read before it is
 * written.  Being the exact engine's results, they serve folding and
 * running alike (opimpl.h: a kernel does not tell the two apart).
 */
#include <math.h>
#include <string.h>

#include "opimpl.h"

/* ---- the broadcast walk -------------------------------------------------- */

void ew_walk_init(EwWalk *w, const Shape *out, int nin,
		  const Shape *const *in)
{
	int64_t st[EW_WALK_IN][MAX_RANK];
	int32_t r = out->rank;
	for (int k = 0; k < nin; k++) {
		int64_t s = 1;
		for (int32_t a = r - 1; a >= 0; a--) {
			int32_t ia = a - (r - in[k]->rank);
			int64_t d = ia >= 0 ? in[k]->dims[ia] : 1;
			st[k][a] = d == 1 ? 0 : s;
			s *= d;
		}
	}
	w->nin = nin;
	w->rank = 0;
	for (int32_t a = 0; a < r; a++) {
		int64_t d = out->dims[a];
		if (d == 1)
			continue;
		int32_t j = w->rank - 1;
		bool merge = j >= 0;
		for (int k = 0; merge && k < nin; k++)
			merge = w->st[k][j] == st[k][a] * d;
		if (merge) {
			w->dims[j] *= d;
			for (int k = 0; k < nin; k++)
				w->st[k][j] = st[k][a];
			continue;
		}
		w->dims[w->rank] = d;
		for (int k = 0; k < nin; k++)
			w->st[k][w->rank] = st[k][a];
		w->rank++;
	}
	if (w->rank == 0) {
		w->rank = 1;
		w->dims[0] = 1;
		for (int k = 0; k < nin; k++)
			w->st[k][0] = 0;
	}
}

/* The inner loop: y[0..n) = a[i*sa] op b[i*sb], sa and sb 0 or 1. */
typedef void (*RunFn)(int64_t n, const float *a, int64_t sa,
		      const float *b, int64_t sb, void *y);

static void walk_run(const EwWalk *w, const float *a, const float *b,
		     void *y, size_t ysize, RunFn fn)
{
	int32_t r = w->rank, last = r - 1;
	int64_t idx[MAX_RANK] = { 0 }, oa = 0, ob = 0, oy = 0;
	int64_t n = w->dims[last], outer = 1;
	for (int32_t k = 0; k < last; k++)
		outer *= w->dims[k];
	for (int64_t o = 0; o < outer; o++) {
		fn(n, a + oa, w->st[0][last], b + ob, w->st[1][last],
		   (char *)y + oy * (int64_t)ysize);
		oy += n;
		for (int32_t k = last - 1; k >= 0; k--) {
			oa += w->st[0][k];
			ob += w->st[1][k];
			if (++idx[k] < w->dims[k])
				break;
			oa -= w->st[0][k] * w->dims[k];
			ob -= w->st[1][k] * w->dims[k];
			idx[k] = 0;
		}
	}
}

/* One binary op as three inner loops the compiler vectorises: both
 * inputs running, or one of them held. */
#define BIN_LOOP(name, T, expr)                                             \
	static void name(int64_t n, const float *a, int64_t sa,             \
			 const float *b, int64_t sb, void *yv)              \
	{                                                                   \
		T *y = yv;                                                  \
		if (sa && sb) {                                             \
			for (int64_t i = 0; i < n; i++) {                   \
				float x = a[i], z = b[i];                   \
				y[i] = (expr);                              \
			}                                                   \
		} else if (sa) {                                            \
			float z = b[0];                                     \
			for (int64_t i = 0; i < n; i++) {                   \
				float x = a[i];                             \
				y[i] = (expr);                              \
			}                                                   \
		} else if (sb) {                                            \
			float x = a[0];                                     \
			for (int64_t i = 0; i < n; i++) {                   \
				float z = b[i];                             \
				y[i] = (expr);                              \
			}                                                   \
		} else {                                                    \
			float x = a[0], z = b[0];                           \
			for (int64_t i = 0; i < n; i++)                     \
				y[i] = (expr);                              \
		}                                                           \
	}

BIN_LOOP(l_add, float, x + z)
BIN_LOOP(l_sub, float, x - z)
BIN_LOOP(l_mul, float, x * z)
BIN_LOOP(l_div, float, x / z)
/* NaN propagates (a + b), else the larger; on a tie the first, as the
 * exact engine does (so max(-0, +0) is -0). */
BIN_LOOP(l_max, float, x != x || z != z ? x + z : x < z ? z : x)
BIN_LOOP(l_min, float, x != x || z != z ? x + z : z < x ? z : x)
BIN_LOOP(l_pow, float, (float)pow(x, z))
BIN_LOOP(l_eq, uint8_t, x == z)
BIN_LOOP(l_gt, uint8_t, x > z)
BIN_LOOP(l_ge, uint8_t, x >= z)
BIN_LOOP(l_lt, uint8_t, x < z)
BIN_LOOP(l_le, uint8_t, x <= z)

static RunFn bin_fn(int op)
{
	switch (op) {
	case OP_Add:
	case OP_Sum: return l_add;
	case OP_Sub: return l_sub;
	case OP_Mul: return l_mul;
	case OP_Div: return l_div;
	case OP_Max: return l_max;
	case OP_Min: return l_min;
	case OP_Equal: return l_eq;
	case OP_Greater: return l_gt;
	case OP_GreaterOrEqual: return l_ge;
	case OP_Less: return l_lt;
	case OP_LessOrEqual: return l_le;
	case OP_Pow: /* b of one dtype with a */
		return l_pow;
	default: return NULL;
	}
}

int ew_fast_binary(OpCtx *c)
{
	const Tensor *a = op_const_in(c, 0), *b = op_const_in(c, 1);
	Value *yv = op_out(c, 0);
	if (!a || !b || !yv || c->opset < 7 ||
	    c->n->ninputs != 2 || a->dtype != DT_FLOAT ||
	    b->dtype != DT_FLOAT)
		return 0;
	RunFn fn = bin_fn(c->n->op);
	int dt = fn == l_eq || fn == l_gt || fn == l_ge || fn == l_lt ||
			 fn == l_le
		 ? DT_BOOL
		 : DT_FLOAT;
	if (!fn || yv->dtype != dt)
		return 0;
	Tensor *y = op_new_output(c, 0, dt, &yv->shape);
	if (!y)
		return -1;
	const Shape *sh[2] = { &a->shape, &b->shape };
	EwWalk w;
	ew_walk_init(&w, &y->shape, 2, sh);
	if (shape_numel(&y->shape) > 0)
		walk_run(&w, a->data, b->data, tensor_mut(y),
			 dtype_size(dt), fn);
	op_set_const(c, 0, y);
	return 1;
}

/* ---- unary ---------------------------------------------------------------- */

/* max(0, min(1, v)), NaN staying NaN */
static double clamp01(double v) { return v < 0 ? 0 : v > 1 ? 1 : v; }

int ew_fast_unary(OpCtx *c, const EwParams *p)
{
	const Tensor *xt = op_const_in(c, 0);
	Value *yv = op_out(c, 0);
	if (!xt || !yv || xt->dtype != DT_FLOAT ||
	    yv->dtype != DT_FLOAT)
		return 0;
	Tensor *yt = op_new_output(c, 0, DT_FLOAT, &xt->shape);
	if (!yt)
		return -1;
	const float *x = xt->data;
	float *y = tensor_mut(yt);
	int64_t n = shape_numel(&xt->shape);
	switch (c->n->op) {
	case OP_Relu:
		for (int64_t i = 0; i < n; i++)
			y[i] = x[i] < 0 ? 0 : x[i];
		break;
	case OP_Neg:
		for (int64_t i = 0; i < n; i++)
			y[i] = -x[i];
		break;
	case OP_Abs:
		for (int64_t i = 0; i < n; i++)
			y[i] = fabsf(x[i]);
		break;
	case OP_Sqrt: /* correctly rounded in float as in double */
		for (int64_t i = 0; i < n; i++)
			y[i] = sqrtf(x[i]);
		break;
	case OP_LeakyRelu:
		for (int64_t i = 0; i < n; i++)
			y[i] = x[i] < 0 ? (float)(p->alpha * x[i]) : x[i];
		break;
	case OP_HardSigmoid:
		for (int64_t i = 0; i < n; i++)
			y[i] = (float)clamp01(p->alpha * x[i] + p->beta);
		break;
	case OP_HardSwish:
		for (int64_t i = 0; i < n; i++)
			y[i] = (float)(x[i] * clamp01(p->alpha * x[i] +
						      p->beta));
		break;
	default:
		if (!p->math && !p->fk)
			return 0;
		if (p->math)
			for (int64_t i = 0; i < n; i++)
				y[i] = (float)p->math(x[i]);
		else
			for (int64_t i = 0; i < n; i++)
				y[i] = (float)p->fk(x[i], p);
	}
	op_set_const(c, 0, yt);
	return 1;
}

/* Clip of a float tensor with float bounds (NaN stays NaN). */
int ew_fast_clip(OpCtx *c, bool has_lo, double lo, bool has_hi, double hi)
{
	const Tensor *xt = op_const_in(c, 0);
	if (!xt || xt->dtype != DT_FLOAT)
		return 0;
	Tensor *yt = op_new_output(c, 0, DT_FLOAT, &xt->shape);
	if (!yt)
		return -1;
	const float *x = xt->data;
	float *y = tensor_mut(yt);
	float l = has_lo ? (float)lo : -INFINITY;
	float h = has_hi ? (float)hi : INFINITY;
	for (int64_t i = 0, n = shape_numel(&xt->shape); i < n; i++) {
		float v = x[i];
		v = v < l ? l : v;
		y[i] = h < v ? h : v;
	}
	op_set_const(c, 0, yt);
	return 1;
}
