/*
 * compiler/ops/elementwise.c - ops whose output has the shape of their
 * input (unary math and activations, Clip, Dropout, Softmax, LogSoftmax,
 * Hardmax, Identity, Cast, CastLike) or the broadcast of their inputs
 * (Add, Sub, Mul, Div, Mod, Pow, PRelu and the variadic Max, Min, Mean,
 * Sum), and the random ops' shapes (their kernels are in random.c).
 *
 * Folding goes through one engine: ew_each() walks a broadcast output
 * once and hands a per-op scalar kernel the matching element of every
 * input.  Kernels see EwNum scalars (double, int64 or uint64) and compute
 * the exact function in double for floats; ew_put() rounds the result to
 * nearest even in the output dtype.  Which kernel an op runs is the ew
 * column of its line in the op table (compiler/ops.h): a unary op is one
 * line there plus its kernel here unless libm has the function.
 */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#include <strings.h>

#include "compiler/act.h"
#include "opimpl.h"

/* ---- scalars ------------------------------------------------------------ */

static EwNum num_f(double f)
{
	EwNum r = { .kind = EW_F, .f = f };
	return r;
}

static EwNum num_i(int64_t i)
{
	EwNum r = { .kind = EW_I, .i = i };
	return r;
}

/* A result of kind 'kind' given by its 64 bits (wrapping arithmetic). */
static EwNum num_bits(int kind, uint64_t u)
{
	EwNum r = { .kind = kind, .u = u };
	return r;
}

static double num_to_f(EwNum v)
{
	return v.kind == EW_F ? v.f : v.kind == EW_U ? (double)v.u : (double)v.i;
}

/* An integer as a double that rounds like it to any precision of at most
 * 51 bits: the bits below the 53rd are folded into a sticky bit. */
static double int_to_f_sticky(EwNum v)
{
	if (v.kind == EW_F)
		return v.f;
	bool neg = v.kind == EW_I && v.i < 0;
	uint64_t u = neg ? 0 - v.u : v.u;
	int shift = 0;
	while (u >> shift >= (UINT64_C(1) << 53))
		shift++;
	uint64_t m = u >> shift;
	if (shift && (u & ((UINT64_C(1) << shift) - 1)))
		m |= 1;
	double d = ldexp((double)m, shift);
	return neg ? -d : d;
}

double ew_round(int dt, double v)
{
	switch (dt) {
	case DT_FLOAT: return (float)v;
	case DT_FLOAT16: return minifloat_to(minifloat_from(v, 5, 10), 5, 10);
	case DT_BFLOAT16: return minifloat_to(minifloat_from(v, 8, 7), 8, 7);
	default: return v;
	}
}

EwNum ew_get(const Tensor *t, int64_t i)
{
	if (DTS(t->dtype) & DTS_FLOAT)
		return num_f(tensor_get_f64(t, i));
	if (t->dtype == DT_UINT64)
		return num_bits(EW_U, ((const uint64_t *)t->data)[i]);
	return num_i(tensor_get_i64(t, i));
}

/* [*lo, *hi) is the range of integer dtype dt. */
static void int_range(int dt, double *lo, double *hi)
{
	int bits = (int)dtype_size(dt) * 8;
	bool sgn = (DTS(dt) & DTS_SINT) != 0;
	*lo = sgn ? -ldexp(1, bits - 1) : 0;
	*hi = ldexp(1, sgn ? bits - 1 : bits);
}

bool ew_put(Tensor *t, int64_t i, EwNum v)
{
	void *p = tensor_mut(t);
	switch (t->dtype) {
	case DT_DOUBLE: ((double *)p)[i] = num_to_f(v); return true;
	case DT_FLOAT:
		((float *)p)[i] = v.kind == EW_F   ? (float)v.f
				  : v.kind == EW_U ? (float)v.u
						   : (float)v.i;
		return true;
	case DT_FLOAT16:
		((uint16_t *)p)[i] = minifloat_from(int_to_f_sticky(v), 5, 10);
		return true;
	case DT_BFLOAT16:
		((uint16_t *)p)[i] = minifloat_from(int_to_f_sticky(v), 8, 7);
		return true;
	case DT_BOOL:
		((uint8_t *)p)[i] = v.kind == EW_F ? v.f != 0 : v.u != 0;
		return true;
	default:
		break;
	}
	if (v.kind == EW_F) { /* float to integer truncates, if it fits */
		double lo, hi, d = trunc(v.f);
		int_range(t->dtype, &lo, &hi);
		if (!(d >= lo && d < hi))
			return false;
		if (t->dtype == DT_UINT64)
			((uint64_t *)p)[i] = (uint64_t)d;
		else
			tensor_set_i64(t, i, (int64_t)d);
		return true;
	}
	tensor_set_i64(t, i, v.i); /* wraps to the dtype */
	return true;
}

/* ---- the broadcast walk ------------------------------------------------- */

enum { EW_MAXIN = 3 };

bool ew_each(const Shape *out, int nin, const Shape *const *shapes,
	     EwElemFn fn, void *ctx)
{
	int64_t stride[EW_MAXIN][MAX_RANK], idx[MAX_RANK] = { 0 };
	int64_t off[EW_MAXIN] = { 0 }, n = shape_numel(out);
	int32_t r = out->rank;
	ASSERT(nin >= 1 && nin <= EW_MAXIN && n >= 0);
	for (int k = 0; k < nin; k++) {
		int64_t s = 1;
		ASSERT(shapes[k]->rank <= r);
		for (int32_t a = r - 1; a >= 0; a--) {
			int32_t ia = a - (r - shapes[k]->rank);
			int64_t d = ia >= 0 ? shapes[k]->dims[ia] : 1;
			ASSERT(d == 1 || d == out->dims[a]);
			stride[k][a] = d == 1 ? 0 : s;
			s *= d;
		}
	}
	for (int64_t o = 0; o < n; o++) {
		if (!fn(ctx, o, off))
			return false;
		for (int32_t a = r - 1; a >= 0; a--) {
			for (int k = 0; k < nin; k++)
				off[k] += stride[k][a];
			if (++idx[a] < out->dims[a])
				break;
			for (int k = 0; k < nin; k++)
				off[k] -= stride[k][a] * out->dims[a];
			idx[a] = 0;
		}
	}
	return true;
}

typedef struct Apply {
	const Tensor *a, *b;
	Tensor *y;
	EwUnFn un;
	EwBinFn bin;
	const EwParams *p;
} Apply;

static bool un_elem(void *ctx, int64_t o, const int64_t *in)
{
	Apply *ap = ctx;
	EwNum r;
	return ap->un(ew_get(ap->a, in[0]), &r, ap->p) && ew_put(ap->y, o, r);
}

static bool bin_elem(void *ctx, int64_t o, const int64_t *in)
{
	Apply *ap = ctx;
	EwNum r;
	return ap->bin(ew_get(ap->a, in[0]), ew_get(ap->b, in[1]), &r, ap->p) &&
	       ew_put(ap->y, o, r);
}

/* *res = fn(a, b) (b NULL: fn(a)) of dtype dt and shape out, a and b
 * broadcast from shapes sa and sb.  1 if folded, 0 if a kernel declined,
 * -1 on error. */
static int apply(OpCtx *c, int dt, const Shape *out, const Tensor *a,
		 const Shape *sa, const Tensor *b, const Shape *sb,
		 EwUnFn un, EwBinFn bin, const EwParams *p, Tensor **res)
{
	Tensor *y = op_new_tensor(c, dt, out);
	const Shape *sh[2] = { sa, sb };
	Apply ap = { a, b, y, un, bin, p };
	if (!y)
		return -1;
	if (!ew_each(out, b ? 2 : 1, sh, b ? bin_elem : un_elem, &ap))
		return 0;
	*res = y;
	return 1;
}

int ew_run_unary(OpCtx *c, EwUnFn fn, const EwParams *p)
{
	const Tensor *x = op_const_in(c, 0);
	Value *y = op_out(c, 0);
	Tensor *t;
	if (!x || !y)
		return 0;
	int rc = apply(c, y->dtype, &x->shape, x, &x->shape, NULL, NULL, fn,
		       NULL, p, &t);
	if (rc > 0)
		op_set_const(c, 0, t);
	return rc < 0 ? -1 : 0;
}

void ew_legacy_shape(const Node *n, int64_t opset, const Shape *sa,
		     Shape *sb)
{
	if (opset >= 7)
		return;
	if (shape_numel(sb) == 1) {
		*sb = shape_of(0, NULL);
		return;
	}
	if (!attr_int(n, "broadcast", 0) || sb->rank >= sa->rank)
		return;
	int64_t axis = attr_int(n, "axis", sa->rank - sb->rank);
	int32_t start = (int32_t)(axis < 0 ? axis + sa->rank : axis);
	Shape s = { .rank = sa->rank };
	for (int32_t k = 0; k < s.rank; k++) {
		int32_t j = k - start;
		s.dims[k] = j >= 0 && j < sb->rank ? sb->dims[j] : 1;
	}
	*sb = s;
}

int ew_run_binary(OpCtx *c, EwBinFn fn, const EwParams *p)
{
	const Tensor *a = op_const_in(c, 0), *b = op_const_in(c, 1);
	Value *y = op_out(c, 0);
	Tensor *t;
	if (!a || !b || !y)
		return 0;
	Shape sb = b->shape;
	ew_legacy_shape(c->n, c->opset, &a->shape, &sb);
	int rc = apply(c, y->dtype, &y->shape, a, &a->shape, b, &sb, NULL, fn,
		       p, &t);
	if (rc > 0)
		op_set_const(c, 0, t);
	return rc < 0 ? -1 : 0;
}

/* ---- shape inference shared by the family ------------------------------ */

int ew_infer_unary(OpCtx *c, uint32_t dts, int out_dt)
{
	Value *x = op_need_in(c, 0);
	if (!x || op_check_dtype(c, 0, dts) < 0)
		return -1;
	op_set_out(c, 0, out_dt ? out_dt : x->dtype, &x->shape);
	return 0;
}

/* Before opset 7, B is broadcast to A only with broadcast=1: B is a
 * scalar or matches a contiguous run of A's dims starting at 'axis'
 * (suffix matching without it), where B may also have 1s (as PyTorch's
 * exporter relies on), and the output has A's shape. */
static int legacy_broadcast(OpCtx *c, Value *a, Value *b)
{
	char sa[128], sb[128];
	const Shape *s = &a->shape, *t = &b->shape;
	int32_t start;
	bool bc = attr_int(c->n, "broadcast", 0) != 0;
	if (s->rank < 0 || t->rank < 0 || shape_numel(t) == 1)
		return 0;
	if (!bc) {
		start = 0;
		if (s->rank != t->rank)
			goto bad;
	} else {
		if (t->rank > s->rank)
			goto bad;
		start = s->rank - t->rank;
		if (node_attr(c->n, "axis") &&
		    op_axis(c, "axis", attr_int(c->n, "axis", 0), s->rank,
			    &start) < 0)
			return -1;
		if (start + t->rank > s->rank)
			goto bad;
	}
	for (int32_t k = 0; k < t->rank; k++) {
		int64_t d = t->dims[k], e = s->dims[start + k];
		if (d != e && d != DIM_UNKNOWN && e != DIM_UNKNOWN &&
		    !(bc && d == 1))
			goto bad;
	}
	return 0;
bad:
	return op_error(c, "input 1 ('%s', %s) does not match input 0 ('%s', "
			"%s) under opset %lld broadcasting",
			b->name, shape_str(t, sb, sizeof(sb)), a->name,
			shape_str(s, sa, sizeof(sa)), (long long)c->opset);
}

int ew_infer_binary(OpCtx *c, int out_dt)
{
	Value *a = op_need_in(c, 0), *b = a ? op_need_in(c, 1) : NULL;
	Shape y;
	if (!b)
		return -1;
	if (c->opset < 7) {
		if (legacy_broadcast(c, a, b) < 0)
			return -1;
		y = a->shape;
	} else if (op_broadcast(c, &a->shape, &b->shape, &y) < 0) {
		return -1;
	}
	op_set_out(c, 0, out_dt ? out_dt : a->dtype, &y);
	return 0;
}

/* ---- unary math and activations ----------------------------------------- */

/* Float ops (and Erf, Shrink on integers) via libm or a float kernel. */
static bool k_float(EwNum x, EwNum *r, const EwParams *p)
{
	double v = num_to_f(x);
	*r = num_f(p->math ? p->math(v) : p->fk(v, p));
	return true;
}

static bool k_abs(EwNum x, EwNum *r, const EwParams *p)
{
	(void)p;
	if (x.kind == EW_F)
		*r = num_f(fabs(x.f));
	else
		*r = x.kind == EW_I && x.i < 0 ? num_bits(EW_I, 0 - x.u) : x;
	return true;
}

static bool k_neg(EwNum x, EwNum *r, const EwParams *p)
{
	(void)p;
	*r = x.kind == EW_F ? num_f(-x.f) : num_bits(x.kind, 0 - x.u);
	return true;
}

static bool k_sign(EwNum x, EwNum *r, const EwParams *p)
{
	(void)p;
	if (x.kind == EW_F)
		*r = num_f(isnan(x.f) ? x.f : (x.f > 0) - (x.f < 0));
	else if (x.kind == EW_U)
		*r = num_i(x.u != 0);
	else
		*r = num_i((x.i > 0) - (x.i < 0));
	return true;
}

static bool k_relu(EwNum x, EwNum *r, const EwParams *p)
{
	(void)p;
	if (x.kind == EW_F)
		*r = num_f(x.f < 0 ? 0 : x.f);
	else
		*r = x.kind == EW_I && x.i < 0 ? num_i(0) : x;
	return true;
}

/* Float-only ops compute a double from a double: one line each. */
#define FLOAT_OP(name, expr)                                          \
	static double f_##name(double x, const EwParams *p)           \
	{                                                             \
		(void)p;                                              \
		return (expr);                                        \
	}

/* max(0, min(1, v)), NaN staying NaN */
static double clamp01(double v) { return v < 0 ? 0 : v > 1 ? 1 : v; }

FLOAT_OP(reciprocal, 1 / x)
FLOAT_OP(round, rint(x)) /* the default rounding mode: half to even */
FLOAT_OP(sigmoid, act_sigmoid_f64(x)) /* compiler/act.h */
FLOAT_OP(softplus, act_softplus_f64(x))
FLOAT_OP(softsign, x / (1 + fabs(x)))
FLOAT_OP(hardsigmoid, clamp01(p->alpha * x + p->beta))
FLOAT_OP(hardswish, x * clamp01(p->alpha * x + p->beta))
FLOAT_OP(mish, x * tanh(f_softplus(x, p)))
FLOAT_OP(celu, x > 0 ? x : p->alpha * expm1(x / p->alpha))
FLOAT_OP(elu, x < 0 ? p->alpha * expm1(x) : x)
FLOAT_OP(selu, p->gamma * (x > 0 ? x : p->alpha * expm1(x)))
FLOAT_OP(leakyrelu, x < 0 ? p->alpha * x : x)
FLOAT_OP(thresholdedrelu, x > p->alpha ? x : 0)
/* on integers too: x +- bias in double, truncated back by ew_put */
FLOAT_OP(shrink, x < -p->lambd ? x + p->bias : x > p->lambd ? x - p->bias : 0)

/* The kernels of the unary ops, from the op table's ew column. */
static const struct UnaryOp {
	double (*math)(double); /* libm computes it, or */
	double (*fk)(double, const EwParams *); /* this float kernel, or */
	EwUnFn fn; /* this kernel, for ops with integer cases */
} unary_ops[OP_COUNT] = {
#define EW_NONE { 0 }
#define EW_MATH(dts, f) { f, NULL, NULL }
#define EW_FLOAT(dts, f) { NULL, f, NULL }
#define EW_EXACT(dts, f) { NULL, NULL, f }
#define EW_ARITH(f) { 0 }
#define EW_LOGIC(f) { 0 }
#define X(nm, inf, run, vw, ip, sh, ew) [OP_##nm] = ew,
	GEARC_OPS(X)
#undef X
#undef EW_NONE
#undef EW_MATH
#undef EW_FLOAT
#undef EW_EXACT
#undef EW_ARITH
#undef EW_LOGIC
};

static const struct UnaryOp *unary_op(int op)
{
	if (op_info[op].ew != EW_KIND_UNARY)
		BUG("op %s has no unary kernel in the op table",
		    op_info[op].name);
	return &unary_ops[op];
}

int infer_unary(OpCtx *c)
{
	return ew_infer_unary(c, op_info[c->n->op].ew_dts, 0);
}

/* The attributes of the activations, with their defaults (those of
 * compiler/act.h's rows where there is one). */
static float act_attr(const Node *n, int kind, bool beta)
{
	const ActInfo *ai = &act_info[kind];
	return beta ? attr_float(n, ai->bname, ai->bdef)
		    : attr_float(n, ai->aname, ai->adef);
}

static void unary_params(OpCtx *c, EwParams *p)
{
	const Node *n = c->n;
	switch (n->op) {
	case OP_HardSigmoid:
		p->alpha = act_attr(n, ACT_HardSigmoid, false);
		p->beta = act_attr(n, ACT_HardSigmoid, true);
		break;
	case OP_HardSwish:
		p->alpha = (float)(1.0 / 6);
		p->beta = 0.5;
		break;
	case OP_Elu: p->alpha = act_attr(n, ACT_Elu, false); break;
	case OP_Celu:
	case OP_ThresholdedRelu:
		p->alpha = attr_float(n, "alpha", 1.0f);
		break;
	case OP_LeakyRelu: p->alpha = act_attr(n, ACT_LeakyRelu, false); break;
	case OP_Selu:
		p->alpha = act_attr(n, ACT_Selu, false);
		p->gamma = act_attr(n, ACT_Selu, true);
		break;
	case OP_Shrink:
		p->lambd = attr_float(n, "lambd", 0.5f);
		p->bias = attr_float(n, "bias", 0.0f);
		break;
	default: break;
	}
}

int run_unary(OpCtx *c)
{
	const struct UnaryOp *u = unary_op(c->n->op);
	Value *y = op_out(c, 0);
	EwParams p = { .dtype = y ? y->dtype : 0, .math = u->math, .fk = u->fk };
	unary_params(c, &p);
	int rc = ew_fast_unary(c, &p);
	if (rc)
		return rc < 0 ? -1 : 0;
	return ew_run_unary(c, u->fn ? u->fn : k_float, &p);
}

/* ---- Identity, Clip, Dropout ------------------------------------------- */

/* Identity also passes sequences and optionals through (opsets 14, 16). */
int infer_identity(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *y = op_out(c, 0);
	if (!x)
		return -1;
	op_set_out(c, 0, x->dtype, &x->shape);
	if (y)
		y->tkind = x->tkind;
	return 0;
}

int run_identity(OpCtx *c)
{
	const Tensor *t = op_const_in(c, 0);
	if (t)
		op_set_const(c, 0, t);
	return 0;
}

/* Clip: min and max are attributes before opset 11, optional scalar
 * inputs of the input's dtype since. */
int infer_clip(OpCtx *c)
{
	if (ew_infer_unary(c, c->opset < 12 ? DTS_FLOAT : DTS_NUMERIC, 0) < 0)
		return -1;
	for (int i = 1; i <= 2; i++)
		if (op_check_same_dtype(c, i, 0) < 0 || op_check_scalar(c, i) < 0)
			return -1;
	return 0;
}

static bool num_lt(EwNum a, EwNum b)
{
	return a.kind == EW_F ? a.f < b.f : a.kind == EW_U ? a.u < b.u : a.i < b.i;
}

float clip_attr_bound(const Node *n, int64_t opset, int k)
{
	/* Clip-6 defaults to the float range; Clip-1 has no default */
	float none = opset < 6 ? INFINITY : FLT_MAX;
	return attr_float(n, k ? "max" : "min", k ? none : -none);
}

/* Bound k of Clip (0 min, 1 max): 1 and *v if there is one, 0 if none,
 * -1 if it is not known. */
static int clip_bound(OpCtx *c, int k, EwNum *v)
{
	if (c->opset < 11) {
		*v = num_f(clip_attr_bound(c->n, c->opset, k));
		return 1;
	}
	if (!op_in(c, 1 + k))
		return 0;
	const Tensor *t = op_const_in(c, 1 + k);
	if (!t || shape_numel(&t->shape) != 1)
		return -1;
	*v = ew_get(t, 0);
	return 1;
}

int run_clip(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	EwNum lo, hi;
	if (!x)
		return 0;
	int has_lo = clip_bound(c, 0, &lo), has_hi = clip_bound(c, 1, &hi);
	if (has_lo < 0 || has_hi < 0)
		return 0;
	if (x->dtype == DT_FLOAT) {
		int rc = ew_fast_clip(c, has_lo, has_lo ? lo.f : 0, has_hi,
				      has_hi ? hi.f : 0);
		if (rc)
			return rc < 0 ? -1 : 0;
	}
	Tensor *y = op_new_tensor(c, x->dtype, &x->shape);
	if (!y)
		return -1;
	for (int64_t i = 0, n = shape_numel(&x->shape); i < n; i++) {
		EwNum v = ew_get(x, i);
		if (has_lo && num_lt(v, lo))
			v = lo;
		if (has_hi && num_lt(hi, v))
			v = hi;
		if (!ew_put(y, i, v))
			return 0;
	}
	op_set_const(c, 0, y);
	return 0;
}

/* Dropout: output and an optional mask of the same shape, bool since
 * opset 10 (before, of the input's dtype).  Since opset 12 ratio and
 * training_mode are optional scalar inputs. */
int infer_dropout(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	if (!x || op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_dtype(c, 1, DTS_FLOAT) < 0 ||
	    op_check_dtype(c, 2, DTS(DT_BOOL)) < 0 || op_check_scalar(c, 1) < 0 ||
	    op_check_scalar(c, 2) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &x->shape);
	op_set_out(c, 1, c->opset >= 10 ? DT_BOOL : x->dtype, &x->shape);
	return 0;
}

/* MT19937 seeded and drawn as numpy's legacy RandomState does, so that a
 * seeded training Dropout gives the masks ONNX's tests expect. */
typedef struct Mt19937 {
	uint32_t s[624];
	int i;
} Mt19937;

static void mt_seed(Mt19937 *m, uint32_t seed)
{
	m->s[0] = seed;
	for (int i = 1; i < 624; i++)
		m->s[i] = 1812433253u * (m->s[i - 1] ^ (m->s[i - 1] >> 30)) +
			  (uint32_t)i;
	m->i = 624;
}

static uint32_t mt_next(Mt19937 *m)
{
	if (m->i == 624) {
		for (int i = 0; i < 624; i++) {
			uint32_t y = (m->s[i] & 0x80000000u) |
				     (m->s[(i + 1) % 624] & 0x7fffffffu);
			m->s[i] = m->s[(i + 397) % 624] ^ (y >> 1) ^
				  (y & 1 ? 0x9908b0dfu : 0);
		}
		m->i = 0;
	}
	uint32_t y = m->s[m->i++];
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680u;
	y ^= (y << 15) & 0xefc60000u;
	return y ^ (y >> 18);
}

/* A double in [0, 1) from 53 random bits (numpy's random_sample). */
static double mt_double(Mt19937 *m)
{
	uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;
	return (a * 67108864.0 + b) / 9007199254740992.0;
}

/* Whether Dropout drops: before opset 7 unless is_test=1; from opset 12
 * if training_mode is true (1), else not (0); -1 if not known. */
static int dropout_training(OpCtx *c)
{
	if (c->opset < 7)
		return attr_int(c->n, "is_test", 0) == 0;
	if (c->opset < 12 || !op_in(c, 2))
		return 0;
	const Tensor *t = op_const_in(c, 2);
	if (!t || shape_numel(&t->shape) != 1)
		return -1;
	return tensor_get_i64(t, 0) != 0;
}

/* The drop ratio into *r: the attribute before opset 12, then the
 * input; 0.5 by default.  0 if not known. */
static int dropout_ratio(OpCtx *c, double *r)
{
	*r = 0.5;
	if (c->opset < 12) {
		*r = attr_float(c->n, "ratio", 0.5f);
		return 1;
	}
	if (!op_in(c, 1))
		return 1;
	const Tensor *t = op_const_in(c, 1);
	if (!t || shape_numel(&t->shape) != 1)
		return 0;
	*r = tensor_get_f64(t, 0);
	return 1;
}

int dropout_keeps_all(OpCtx *c)
{
	int train = dropout_training(c);
	double ratio = 0;
	if (train < 0 || (train && !dropout_ratio(c, &ratio)))
		return -1;
	return !train || ratio == 0;
}

/* The seed of a Dropout without one: a new one per run, from a counter
 * (the spec lets an implementation pick it). */
static uint32_t dropout_auto_seed(void)
{
	static atomic_uint runs;
	return (atomic_fetch_add(&runs, 1) + 1) * 2654435761u;
}

/* In inference mode (or with ratio 0) Dropout is the identity and its
 * mask all ones.  In training mode an element is kept, and scaled by
 * 1 / (1 - ratio), where a uniform draw in [0, 1) is >= ratio; the
 * draws come from MT19937 seeded with the seed attribute, in element
 * order, as numpy draws them.  Without a seed the result is random: it
 * is not folded, and each run draws its own seed. */
int run_dropout(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	Value *m = op_out(c, 1);
	int train = dropout_training(c);
	double ratio = 0;
	if (!x || train < 0 || (train && !dropout_ratio(c, &ratio)))
		return 0;
	if (!(ratio >= 0 && ratio < 1))
		return op_error(c, "ratio is %g, expected 0 <= ratio < 1", ratio);
	const Attr *seed = node_attr(c->n, "seed");
	bool drop = train && ratio != 0;
	if (drop && !seed && !op_at_run_time(c))
		return 0;
	int64_t n = shape_numel(&x->shape);
	Tensor *mask =
		m ? op_new_output_zeroed(c, 1, m->dtype, &m->shape) : NULL;
	if (m && !mask)
		return -1;
	if (!drop) {
		for (int64_t i = 0; mask && i < n; i++)
			tensor_set_i64(mask, i, 1);
		if (mask)
			op_set_const(c, 1, mask);
		op_set_const(c, 0, x);
		return 0;
	}
	Tensor *y = op_new_output_zeroed(c, 0, x->dtype, &x->shape);
	if (!y)
		return -1;
	Mt19937 mt;
	float scale = (float)(1 / (1 - (float)ratio));
	mt_seed(&mt, seed ? (uint32_t)seed->i : dropout_auto_seed());
	for (int64_t i = 0; i < n; i++) {
		bool keep = mt_double(&mt) >= ratio;
		if (keep)
			tensor_set_f64(y, i, (float)tensor_get_f64(x, i) * scale);
		if (mask)
			tensor_set_i64(mask, i, keep);
	}
	op_set_const(c, 0, y);
	if (mask)
		op_set_const(c, 1, mask);
	return 0;
}

/* ---- Softmax, LogSoftmax, Hardmax --------------------------------------- */

/* axis defaults to 1 before opset 13, to -1 since. */
int infer_softmax(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int32_t axis;
	if (!x || op_check_dtype(c, 0, DTS_FLOAT) < 0)
		return -1;
	if (x->shape.rank >= 0 &&
	    op_axis(c, "axis", attr_int(c->n, "axis", c->opset < 13 ? 1 : -1),
		    x->shape.rank, &axis) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

/* Before opset 13 the input is seen as 2-D [outer, len] split at axis;
 * since, the op runs along the one axis: groups of len elements inner
 * apart. */
int run_softmax(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	int32_t axis;
	int64_t outer = 1, len = 1, inner = 1;
	if (!x)
		return 0;
	const Shape *s = &x->shape;
	if (op_axis(c, "axis", attr_int(c->n, "axis", c->opset < 13 ? 1 : -1),
		    s->rank, &axis) < 0)
		return -1;
	for (int32_t k = 0; k < s->rank; k++) {
		int64_t *d = k < axis			     ? &outer
			     : k == axis || c->opset < 13 ? &len
							  : &inner;
		*d *= s->dims[k];
	}
	Tensor *y = op_new_tensor(c, x->dtype, s);
	if (!y)
		return -1;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			int64_t base = o * len * inner + i, best = -1;
			double m = -INFINITY, sum = 0, bv = 0;
			for (int64_t j = 0; j < len; j++) {
				double v = tensor_get_f64(x, base + j * inner);
				m = v > m ? v : m;
				/* argmax as numpy's: the first max, NaN above all */
				if (best < 0 || (!isnan(bv) && (isnan(v) || v > bv))) {
					best = j;
					bv = v;
				}
			}
			for (int64_t j = 0; j < len; j++)
				sum += exp(tensor_get_f64(x, base + j * inner) - m);
			for (int64_t j = 0; j < len; j++) {
				int64_t e = base + j * inner;
				double v = tensor_get_f64(x, e), r;
				if (c->n->op == OP_Hardmax)
					r = j == best;
				else if (c->n->op == OP_LogSoftmax)
					r = v - m - log(sum);
				else
					r = exp(v - m) / sum;
				ew_put(y, e, num_f(r));
			}
		}
	op_set_const(c, 0, y);
	return 0;
}

/* ---- arithmetic ---------------------------------------------------------- */

static bool k_add(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	(void)p;
	*r = a.kind == EW_F ? num_f(a.f + b.f) : num_bits(a.kind, a.u + b.u);
	return true;
}

static bool k_sub(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	(void)p;
	*r = a.kind == EW_F ? num_f(a.f - b.f) : num_bits(a.kind, a.u - b.u);
	return true;
}

static bool k_mul(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	(void)p;
	*r = a.kind == EW_F ? num_f(a.f * b.f) : num_bits(a.kind, a.u * b.u);
	return true;
}

/* Integer division truncates toward zero (C, and ONNX's reference); by
 * zero it is undefined, so not folded. */
static bool k_div(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	(void)p;
	if (a.kind == EW_F)
		*r = num_f(a.f / b.f);
	else if (b.u == 0)
		return false;
	else if (a.kind == EW_U)
		*r = num_bits(EW_U, a.u / b.u);
	else if (b.i == -1)
		*r = num_bits(EW_I, 0 - a.u); /* INT64_MIN / -1 wraps */
	else
		*r = num_i(a.i / b.i);
	return true;
}

/* fmod=0: the remainder has the divisor's sign (Python, numpy.mod);
 * fmod=1: the dividend's (C fmod). */
static bool k_mod(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	if (a.kind == EW_F) {
		double m = fmod(a.f, b.f);
		if (!p->mode && m != 0 && (m < 0) != (b.f < 0))
			m += b.f;
		*r = num_f(m);
		return true;
	}
	if (b.u == 0)
		return false;
	if (a.kind == EW_U) {
		*r = num_bits(EW_U, a.u % b.u);
		return true;
	}
	int64_t m = b.i == -1 ? 0 : a.i % b.i;
	if (!p->mode && m != 0 && (m < 0) != (b.i < 0))
		m += b.i;
	*r = num_i(m);
	return true;
}

/* Does integer v fit integer dtype dt? */
static bool fits(int dt, int64_t v)
{
	double lo, hi;
	int_range(dt, &lo, &hi);
	return dt == DT_INT64 || dt == DT_UINT64 ||
	       ((double)v >= lo && (double)v < hi);
}

/* Pow: floats by libm; an integer base to an integer exponent exactly,
 * folded only if the result fits the output dtype and the exponent is
 * not negative (where implementations disagree). */
static bool k_pow(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	if (a.kind == EW_F || b.kind == EW_F) {
		*r = num_f(pow(num_to_f(a), num_to_f(b)));
		return true;
	}
	if (b.kind == EW_I && b.i < 0)
		return false;
	int64_t base = a.i, acc = 1;
	uint64_t e = b.u;
	while (e) {
		if ((e & 1) && __builtin_mul_overflow(acc, base, &acc))
			return false;
		e >>= 1;
		if (e && __builtin_mul_overflow(base, base, &base))
			return false;
	}
	if (!fits(p->dtype, acc))
		return false;
	*r = num_i(acc);
	return true;
}

static bool k_prelu(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	if (a.kind == EW_F)
		*r = num_f(a.f < 0 ? a.f * b.f : a.f);
	else if (a.kind == EW_I && a.i < 0)
		return k_mul(a, b, r, p);
	else
		*r = a;
	return true;
}

/* Max and Min propagate NaN, as numpy.maximum/minimum. */
static bool k_max(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	(void)p;
	if (a.kind == EW_F && (isnan(a.f) || isnan(b.f)))
		*r = num_f(a.f + b.f);
	else
		*r = num_lt(a, b) ? b : a;
	return true;
}

static bool k_min(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	(void)p;
	if (a.kind == EW_F && (isnan(a.f) || isnan(b.f)))
		*r = num_f(a.f + b.f);
	else
		*r = num_lt(b, a) ? b : a;
	return true;
}

/* The kernels of the binary arithmetic, from the op table's ew column. */
static const EwBinFn arith_ops[OP_COUNT] = {
#define EW_NONE NULL
#define EW_MATH(dts, f) NULL
#define EW_FLOAT(dts, f) NULL
#define EW_EXACT(dts, f) NULL
#define EW_ARITH(f) f
#define EW_LOGIC(f) NULL
#define X(nm, inf, run, vw, ip, sh, ew) [OP_##nm] = ew,
	GEARC_OPS(X)
#undef X
#undef EW_NONE
#undef EW_MATH
#undef EW_FLOAT
#undef EW_EXACT
#undef EW_ARITH
#undef EW_LOGIC
};

static EwBinFn arith_fn(int op)
{
	if (!arith_ops[op])
		BUG("op %s has no binary kernel in the op table",
		    op_info[op].name);
	return arith_ops[op];
}

int infer_arith(OpCtx *c)
{
	if (op_check_dtype(c, 0, DTS_NUMERIC) < 0 ||
	    op_check_same_dtype(c, 1, 0) < 0)
		return -1;
	return ew_infer_binary(c, 0);
}

/* Mod: fmod is 0 or 1, and must be 1 for floats. */
int infer_mod(OpCtx *c)
{
	int64_t fm = attr_int(c->n, "fmod", 0);
	Value *a = op_in(c, 0);
	if (fm != 0 && fm != 1)
		return op_error(c, "attribute fmod is %lld, expected 0 or 1",
				(long long)fm);
	if (infer_arith(c) < 0)
		return -1;
	if (!fm && (DTS(a->dtype) & DTS_FLOAT))
		return op_error(c, "fmod must be 1 for %s inputs",
				dtype_name(a->dtype));
	return 0;
}

/* Pow: since opset 12 the exponent may have another numeric dtype. */
int infer_pow(OpCtx *c)
{
	if (op_check_dtype(c, 0, DTS_FLOAT | DTS(DT_INT32) | DTS(DT_INT64)) < 0 ||
	    op_check_dtype(c, 1, DTS_NUMERIC) < 0 ||
	    (c->opset < 12 && op_check_same_dtype(c, 1, 0) < 0))
		return -1;
	return ew_infer_binary(c, 0);
}

/* Before opset 7 a 1-D slope of more than one value is per channel
 * (axis 1), as the PyTorch exporter of the time relied on. */
static bool prelu_per_channel(OpCtx *c, const Shape *x, const Shape *slope)
{
	return c->opset < 7 && slope->rank == 1 && x->rank >= 2 &&
	       slope->dims[0] != 1 &&
	       (slope->dims[0] == x->dims[1] || slope->dims[0] == DIM_UNKNOWN ||
		x->dims[1] == DIM_UNKNOWN);
}

/* PRelu: slope broadcasts to X (unidirectionally); Y has X's shape. */
int infer_prelu(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *s = x ? op_need_in(c, 1) : NULL;
	if (!s || op_check_dtype(c, 0, DTS_NUMERIC) < 0 ||
	    op_check_same_dtype(c, 1, 0) < 0 ||
	    (!prelu_per_channel(c, &x->shape, &s->shape) &&
	     op_broadcast_to(c, 1, &x->shape) < 0))
		return -1;
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

int run_arith(OpCtx *c)
{
	Value *y = op_out(c, 0);
	EwParams p = { .dtype = y ? y->dtype : 0,
		       .mode = attr_int(c->n, "fmod", 0) };
	const Tensor *x = op_const_in(c, 0), *s = op_const_in(c, 1);
	int rc = ew_fast_binary(c);
	if (rc)
		return rc < 0 ? -1 : 0;
	if (c->n->op == OP_PRelu && x && s && y &&
	    prelu_per_channel(c, &x->shape, &s->shape)) {
		Shape ss = { .rank = x->shape.rank };
		Tensor *t;
		for (int32_t k = 0; k < ss.rank; k++)
			ss.dims[k] = k == 1 ? s->shape.dims[0] : 1;
		rc = apply(c, y->dtype, &y->shape, x, &x->shape, s, &ss,
			       NULL, k_prelu, &p, &t);
		if (rc > 0)
			op_set_const(c, 0, t);
		return rc < 0 ? -1 : 0;
	}
	return ew_run_binary(c, arith_fn(c->n->op), &p);
}

/* ---- Max, Min, Mean, Sum ------------------------------------------------- */

/* Before opset 8 the inputs must have one shape; since they broadcast. */
static int same_shape(OpCtx *c, int i, const Shape *a, const Shape *b,
		      Shape *out)
{
	char sa[128], sb[128];
	if (a->rank < 0 || b->rank < 0) {
		*out = a->rank < 0 ? *b : *a;
		return 0;
	}
	bool ok = a->rank == b->rank;
	Shape o = *a;
	for (int32_t k = 0; ok && k < a->rank; k++) {
		int64_t d = a->dims[k], e = b->dims[k];
		ok = d == e || d == DIM_UNKNOWN || e == DIM_UNKNOWN;
		o.dims[k] = d == DIM_UNKNOWN ? e : d;
	}
	if (!ok)
		return op_error(c, "input %d has shape %s, but the inputs before "
				"have %s; expected the same before opset 8",
				i, shape_str(b, sb, sizeof(sb)),
				shape_str(a, sa, sizeof(sa)));
	*out = o;
	return 0;
}

int infer_variadic(OpCtx *c)
{
	int op = c->n->op;
	uint32_t dts = (op == OP_Max || op == OP_Min) && c->opset >= 12
			       ? DTS_NUMERIC
			       : DTS_FLOAT;
	Shape y = shape_unknown();
	if (c->n->ninputs < 1)
		return op_error(c, "expected at least one input");
	for (int i = 0; i < c->n->ninputs; i++) {
		Value *v = op_need_in(c, i);
		if (!v || op_check_dtype(c, i, dts) < 0 ||
		    op_check_same_dtype(c, i, 0) < 0)
			return -1;
		if (i == 0)
			y = v->shape;
		else if (c->opset < 8 ? same_shape(c, i, &y, &v->shape, &y) < 0
				      : op_broadcast(c, &y, &v->shape, &y) < 0)
			return -1;
	}
	op_set_out(c, 0, op_in(c, 0)->dtype, &y);
	return 0;
}

static bool k_div_by(EwNum x, EwNum *r, const EwParams *p)
{
	*r = num_f(x.f / p->alpha);
	return true;
}

/* Folded as numpy does it: left to right, each step rounded to the
 * dtype, Mean dividing the sum by the count at the end. */
int run_variadic(OpCtx *c)
{
	Value *y = op_out(c, 0);
	EwParams p = { .dtype = y ? y->dtype : 0 };
	EwBinFn fn = arith_fn(c->n->op);
	const Tensor *acc = op_const_in(c, 0);
	if (!y || !op_all_const(c))
		return 0;
	if (c->n->op != OP_Mean) {
		int rc = ew_fast_binary(c);
		if (rc)
			return rc < 0 ? -1 : 0;
	}
	for (int i = 1; i < c->n->ninputs; i++) {
		const Tensor *b = op_const_in(c, i);
		Shape s;
		Tensor *t;
		if (op_broadcast(c, &acc->shape, &b->shape, &s) < 0)
			return -1;
		int rc = apply(c, y->dtype, &s, acc, &acc->shape, b, &b->shape,
			       NULL, fn, &p, &t);
		if (rc <= 0)
			return rc;
		acc = t;
	}
	if (c->n->op == OP_Mean && c->n->ninputs > 1) {
		Tensor *t;
		p.alpha = c->n->ninputs;
		int rc = apply(c, y->dtype, &acc->shape, acc, &acc->shape, NULL,
			       NULL, k_div_by, NULL, &p, &t);
		if (rc <= 0)
			return rc;
		acc = t;
	}
	op_set_const(c, 0, acc);
	return 0;
}

/* ---- Cast, CastLike ------------------------------------------------------ */

/* Cast's 'to': a TensorProto dtype (an upper-case name in opset 1). */
static int cast_to(OpCtx *c, int *dt)
{
	static const char *names[] = { "FLOAT",	 "UINT8",     "INT8",
				       "UINT16", "INT16",     "INT32",
				       "INT64",	 "STRING",    "BOOL",
				       "FLOAT16", "DOUBLE",   "UINT32",
				       "UINT64", "COMPLEX64", "COMPLEX128",
				       "BFLOAT16" };
	const Attr *a = node_attr(c->n, "to");
	int64_t to = -1;
	if (!a)
		return op_error(c, "attribute 'to' is required");
	if (a->type == ATTR_STRING) {
		const char *s = attr_str(c->n, "to", "");
		for (size_t i = 0; i < ARRAY_SIZE(names); i++)
			if (!strcasecmp(s, names[i]))
				to = (int64_t)i + 1;
		if (to < 0)
			return op_error(c, "attribute 'to' is '%s', expected a "
					"tensor dtype name", s);
	} else {
		to = a->i;
	}
	if (to < 1 || to >= DT_COUNT || to == DT_COMPLEX64 ||
	    to == DT_COMPLEX128)
		return op_error(c, "attribute 'to' is %lld, which is not a dtype "
				"Cast supports", (long long)to);
	*dt = (int)to;
	return 0;
}

#define DTS_CAST (DTS_NUMERIC | DTS(DT_BOOL) | DTS(DT_STRING))

/* Cast: any dtype to any, strings included (shape only); 'saturate'
 * (opset 19) only concerns float8 dtypes, which gearc does not have. */
int infer_cast(OpCtx *c)
{
	int dt = 0;
	if (cast_to(c, &dt) < 0)
		return -1;
	return ew_infer_unary(c, DTS_CAST, dt);
}

int infer_castlike(OpCtx *c)
{
	Value *like = op_need_in(c, 1);
	if (!like || op_check_dtype(c, 1, DTS_CAST) < 0)
		return -1;
	return ew_infer_unary(c, DTS_CAST, like->dtype);
}

static bool k_cast(EwNum x, EwNum *r, const EwParams *p)
{
	(void)p;
	*r = x;
	return true;
}

/* Float to integer truncates toward zero and is folded only in range;
 * integers wrap; to and from strings and to bfloat16 are in cast.c. */
int run_cast(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	Value *y = op_out(c, 0);
	EwParams p = { .dtype = y ? y->dtype : 0 };
	if (!x || !y)
		return 0;
	if (x->dtype == y->dtype) { /* the identity, strings included */
		op_set_const(c, 0, x);
		return 0;
	}
	if (x->dtype == DT_STRING)
		return cast_from_string(c, x, y->dtype);
	if (y->dtype == DT_STRING)
		return cast_to_string(c, x);
	if (y->dtype == DT_BFLOAT16)
		return cast_to_bfloat16(c, x);
	return ew_run_unary(c, k_cast, &p);
}

/* ---- random ops (shape and dtype; the kernels are in random.c) ---------- */

static int check_dtype_attr(OpCtx *c, int dt, uint32_t dts)
{
	if (dtype_valid(dt) && (dts & DTS(dt)))
		return 0;
	return op_error(c, "output dtype %d (%s) is not allowed", dt,
			dtype_valid(dt) ? dtype_name(dt) : "invalid");
}

/* RandomUniform, RandomNormal: the 'shape' attribute, dtype float32 by
 * default. */
int infer_random(OpCtx *c)
{
	const int64_t *dims;
	int32_t n = attr_ints(c->n, "shape", &dims);
	int dt = (int)attr_int(c->n, "dtype", DT_FLOAT);
	if (n < 0)
		return op_error(c, "attribute 'shape' is required");
	if (n > MAX_RANK)
		return op_error(c, "attribute 'shape' has %d dims; gearc "
				"supports at most %d", n, MAX_RANK);
	if (check_dtype_attr(c, dt, DTS_IEEE) < 0)
		return -1;
	for (int32_t k = 0; k < n; k++)
		if (dims[k] < 0)
			return op_error(c, "shape[%d] is %lld, expected >= 0", k,
					(long long)dims[k]);
	Shape s = shape_of(n, dims);
	op_set_out(c, 0, dt, &s);
	return 0;
}

/* RandomUniformLike, RandomNormalLike, Bernoulli: the input's shape, of
 * the 'dtype' attribute or else the input's dtype. */
int infer_random_like(OpCtx *c)
{
	bool bern = c->n->op == OP_Bernoulli;
	Value *x = op_need_in(c, 0);
	if (!x || (bern && op_check_dtype(c, 0, DTS_IEEE) < 0))
		return -1;
	int dt = (int)attr_int(c->n, "dtype", x->dtype);
	if (check_dtype_attr(c, dt, bern ? DTS_NUMERIC | DTS(DT_BOOL) : DTS_IEEE) < 0)
		return -1;
	op_set_out(c, 0, dt, &x->shape);
	return 0;
}

/* Multinomial: [batch, classes] -> [batch, sample_size] of int32/int64. */
int infer_multinomial(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t n = attr_int(c->n, "sample_size", 1);
	int dt = (int)attr_int(c->n, "dtype", DT_INT32);
	if (!x || op_check_dtype(c, 0, DTS_IEEE) < 0 || op_check_rank(c, 0, 2, 2) < 0 ||
	    check_dtype_attr(c, dt, DTS(DT_INT32) | DTS(DT_INT64)) < 0)
		return -1;
	if (n < 1)
		return op_error(c, "sample_size is %lld, expected >= 1",
				(long long)n);
	int64_t dims[2] = { shape_dim(&x->shape, 0), n };
	Shape s = shape_of(2, dims);
	op_set_out(c, 0, dt, &s);
	return 0;
}
