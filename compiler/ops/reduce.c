/*
 * compiler/ops/reduce.c - reductions: ReduceL1, ReduceL2, ReduceLogSum,
 * ReduceLogSumExp, ReduceMax, ReduceMean, ReduceMin, ReduceProd,
 * ReduceSum, ReduceSumSquare; ArgMax, ArgMin; TopK.
 *
 * The Reduce ops take their axes from the attribute 'axes' up to opset 17
 * (ReduceSum: 12) and from the optional input 1 since.  No axes (or an
 * empty list) means every axis, unless noop_with_empty_axes=1, which makes
 * the op an identity.  keepdims=1 (the default) keeps reduced axes as 1.
 * An axes input that is not a known constant leaves the reduced dims
 * unknown and marks the output data-dependent.
 *
 * Kernels: reductions compute in double
 * for float types and exactly in 64-bit integers for integer types (sums
 * and products wrap as in the dtype; L2, LogSum and LogSumExp of integers
 * are not computed).  NaN: ReduceMax/ReduceMin and ArgMax/ArgMin take it
 * as their result, the first (select_last_index: the last) NaN, as numpy
 * and ONNX's reference implementation do; TopK orders it above every
 * number.  The same kernels run at run time, on inputs of any size: the
 * bound on what folding reads is the folding driver's (compiler/infer.c).
 */
#include <math.h>
#include <string.h>

#include "opimpl.h"

static bool is_float_dt(int dt) { return (DTS_FLOAT & DTS(dt)) != 0; }

/* ---- Reduce* ------------------------------------------------------------ */

/* The axes of a reduction: known (n values in v) or not. */
typedef struct Axes {
	bool known;
	int32_t n; /* -1: count unknown as well */
	int64_t v[MAX_RANK];
} Axes;

static bool axes_from_input(OpCtx *c)
{
	return c->n->op == OP_ReduceSum ? c->opset >= 13 : c->opset >= 18;
}

static int reduce_axes(OpCtx *c, Axes *ax)
{
	memset(ax, 0, sizeof(*ax));
	if (!axes_from_input(c)) {
		const int64_t *a;
		int32_t n = attr_ints(c->n, "axes", &a);
		ax->known = true;
		if (n > MAX_RANK)
			return op_error(c, "axes has %d values, expected at "
					"most the rank", n);
		for (int32_t i = 0; i < n; i++)
			ax->v[i] = a[i];
		ax->n = n < 0 ? 0 : n;
		return 0;
	}
	Value *in = op_in(c, 1);
	if (node_attr(c->n, "axes"))
		return op_error(c, "axes is an input since opset %d, not an "
				"attribute", c->n->op == OP_ReduceSum ? 13 : 18);
	if (!in) {
		ax->known = true;
		return 0;
	}
	if (op_check_dtype(c, 1, DTS(DT_INT64) | DTS(DT_INT32)) < 0 ||
	    op_check_rank(c, 1, 1, 1) < 0)
		return -1;
	int rc = op_const_ints(c, 1, ax->v, &ax->n, MAX_RANK);
	if (rc < 0)
		return -1;
	if (rc) {
		ax->known = true;
		return 0;
	}
	int64_t len = shape_dim(&in->shape, 0);
	ax->n = len >= 0 && len <= MAX_RANK ? (int32_t)len : -1;
	if (len == 0)
		ax->known = true; /* an empty list, whatever its contents */
	return 0;
}

/* Sets red[i] for the reduced axes of rank r; false if none is listed. */
static int mark_axes(OpCtx *c, const Axes *ax, int32_t r, bool *red)
{
	memset(red, 0, sizeof(bool) * MAX_RANK);
	for (int32_t i = 0; i < ax->n; i++) {
		int32_t a;
		if (op_axis(c, "axes value", ax->v[i], r, &a) < 0)
			return -1;
		if (red[a])
			return op_error(c, "axis %d is listed twice in axes", a);
		red[a] = true;
	}
	if (ax->n == 0)
		for (int32_t i = 0; i < r; i++)
			red[i] = true;
	return 0;
}

int infer_reduce(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	bool keep = attr_int(c->n, "keepdims", 1) != 0, red[MAX_RANK];
	bool noop = attr_int(c->n, "noop_with_empty_axes", 0) != 0;
	uint32_t dts = DTS_NUMERIC;
	Axes ax;
	if (c->n->op == OP_ReduceMax || c->n->op == OP_ReduceMin)
		dts |= DTS(DT_BOOL);
	if (!x || op_check_dtype(c, 0, dts) < 0 || reduce_axes(c, &ax) < 0)
		return -1;
	const Shape *s = &x->shape;
	Shape y = shape_unknown();
	if (ax.known && ax.n == 0 && noop) {
		op_set_out(c, 0, x->dtype, s);
		return 0;
	}
	if (s->rank < 0) {
		/* rank unknown: keepdims keeps it, else unknown */
		op_set_out(c, 0, x->dtype, &y);
		if (!ax.known)
			nn_mark_dep(c, 0);
		return 0;
	}
	if (!ax.known) {
		/* noop_with_empty_axes aside, an axes tensor of unknown
		 * values: each dim may or may not be reduced */
		if (keep) {
			y = *s;
			for (int32_t i = 0; i < y.rank; i++)
				if (y.dims[i] != 1)
					y.dims[i] = DIM_UNKNOWN;
		} else if (ax.n > s->rank) {
			return op_error(c, "axes has %d values, more than the "
					"rank %d", ax.n, s->rank);
		} else if (ax.n > 0) {
			y.rank = s->rank - ax.n;
			for (int32_t i = 0; i < y.rank; i++)
				y.dims[i] = DIM_UNKNOWN;
		}
		op_set_out(c, 0, x->dtype, &y);
		nn_mark_dep(c, 0);
		return 0;
	}
	if (mark_axes(c, &ax, s->rank, red) < 0)
		return -1;
	y.rank = 0;
	for (int32_t i = 0; i < s->rank; i++) {
		if (!red[i])
			y.dims[y.rank++] = s->dims[i];
		else if (keep)
			y.dims[y.rank++] = 1;
	}
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* Flat index of input element i within the keepdims output: the input's
 * coordinates with reduced ones dropped. */
static int64_t out_index(const Shape *s, const bool *red, int64_t i)
{
	int64_t o = 0, mul = 1;
	for (int32_t k = s->rank - 1; k >= 0; k--) {
		int64_t d = s->dims[k], coord = i % d;
		i /= d;
		if (!red[k]) {
			o += coord * mul;
			mul *= d;
		}
	}
	return o;
}

/* Float reductions in double: 1, or -1 on error. */
static int run_reduce_float(OpCtx *c, const Tensor *t, const bool *red,
			     Tensor *y)
{
	int op = c->n->op;
	int64_t n = shape_numel(&t->shape), m = shape_numel(&y->shape);
	double *acc = op_scratch(c, (size_t)m * sizeof(double));
	double *mx = NULL;
	int64_t cnt = m ? n / m : 0;
	if (!acc)
		return -1;
	double init = op == OP_ReduceProd  ? 1
		      : op == OP_ReduceMax ? -INFINITY
		      : op == OP_ReduceMin ? INFINITY
					   : 0;
	for (int64_t j = 0; j < m; j++)
		acc[j] = init;
	if (op == OP_ReduceLogSumExp) {
		/* log(sum(exp(x))) = max + log(sum(exp(x - max))) */
		mx = op_scratch(c, (size_t)m * sizeof(double));
		if (!mx)
			return -1;
		for (int64_t j = 0; j < m; j++)
			mx[j] = -INFINITY;
		for (int64_t i = 0; i < n; i++) {
			int64_t j = out_index(&t->shape, red, i);
			double v = tensor_get_f64(t, i);
			if (v > mx[j] || v != v)
				mx[j] = v;
		}
	}
	for (int64_t i = 0; i < n; i++) {
		int64_t j = out_index(&t->shape, red, i);
		double v = tensor_get_f64(t, i);
		switch (op) {
		case OP_ReduceL1: acc[j] += fabs(v); break;
		case OP_ReduceL2:
		case OP_ReduceSumSquare: acc[j] += v * v; break;
		case OP_ReduceProd: acc[j] *= v; break;
		case OP_ReduceMax: /* NaN wins, as in numpy */
			if (acc[j] == acc[j] && (v != v || v > acc[j]))
				acc[j] = v;
			break;
		case OP_ReduceMin:
			if (acc[j] == acc[j] && (v != v || v < acc[j]))
				acc[j] = v;
			break;
		case OP_ReduceLogSumExp:
			acc[j] += isinf(mx[j]) || mx[j] != mx[j] ? exp(v)
								 : exp(v - mx[j]);
			break;
		default: acc[j] += v; /* Sum, Mean, LogSum */
		}
	}
	for (int64_t j = 0; j < m; j++) {
		double v = acc[j];
		switch (op) {
		case OP_ReduceL2: v = sqrt(v); break;
		case OP_ReduceLogSum: v = log(v); break;
		case OP_ReduceMean: v = cnt ? v / (double)cnt : NAN; break;
		case OP_ReduceLogSumExp:
			v = isinf(mx[j]) || mx[j] != mx[j] ? log(v)
							   : mx[j] + log(v);
			break;
		default: break;
		}
		tensor_set_f64(y, j, v);
	}
	return 1;
}

/* Integer reductions, exact: sums and products wrap modulo 2^64 and are
 * then truncated to the dtype, as a numpy reduction cast back would.
 * Returns 1 if computed, 0 if not (Mean overflowing, an empty Max/Min),
 * -1 on error. */
static int run_reduce_int(OpCtx *c, const Tensor *t, const bool *red,
			   Tensor *y)
{
	int op = c->n->op;
	bool uns = t->dtype == DT_UINT64;
	int64_t n = shape_numel(&t->shape), m = shape_numel(&y->shape);
	int64_t cnt = m ? n / m : 0;
	if (op == OP_ReduceL2 || op == OP_ReduceLogSum ||
	    op == OP_ReduceLogSumExp)
		return 0;
	if ((op == OP_ReduceMax || op == OP_ReduceMin || op == OP_ReduceMean) &&
	    cnt == 0)
		return 0;
	uint64_t *acc = op_scratch(c, (size_t)m * sizeof(uint64_t));
	bool *seen = op_scratch_zeroed(c, (size_t)m * sizeof(bool));
	if (!acc || !seen)
		return -1;
	for (int64_t j = 0; j < m; j++)
		acc[j] = op == OP_ReduceProd;
	for (int64_t i = 0; i < n; i++) {
		int64_t j = out_index(&t->shape, red, i);
		int64_t v = tensor_get_i64(t, i);
		uint64_t u = (uint64_t)v;
		switch (op) {
		case OP_ReduceL1:
			acc[j] += uns || v >= 0 ? u : 0 - u;
			break;
		case OP_ReduceSumSquare: acc[j] += u * u; break;
		case OP_ReduceProd: acc[j] *= u; break;
		case OP_ReduceMax:
		case OP_ReduceMin: {
			bool gt = uns ? u > acc[j] : v > (int64_t)acc[j];
			bool lt = uns ? u < acc[j] : v < (int64_t)acc[j];
			if (!seen[j] || (op == OP_ReduceMax ? gt : lt))
				acc[j] = u;
			seen[j] = true;
			break;
		}
		case OP_ReduceMean: {
			int64_t s = (int64_t)acc[j];
			if (uns ? acc[j] + u < acc[j]
				: __builtin_add_overflow(s, v, &s))
				return 0;
			acc[j] = uns ? acc[j] + u : (uint64_t)s;
			break;
		}
		default: acc[j] += u; /* Sum */
		}
	}
	for (int64_t j = 0; j < m; j++) {
		uint64_t u = acc[j];
		if (op == OP_ReduceMean)
			u = uns ? u / (uint64_t)cnt
				: (uint64_t)((int64_t)u / cnt); /* truncates */
		tensor_set_i64(y, j, (int64_t)u);
	}
	return 1;
}

int run_reduce(OpCtx *c)
{
	const Tensor *t = op_const_in(c, 0);
	const Value *yv = op_out(c, 0);
	bool red[MAX_RANK];
	Axes ax;
	if (!t || !yv || t->dtype == DT_STRING)
		return 0;
	if (reduce_axes(c, &ax) < 0)
		return -1;
	if (!ax.known)
		return 0;
	if (ax.n == 0 && attr_int(c->n, "noop_with_empty_axes", 0)) {
		op_set_const(c, 0, t);
		return 0;
	}
	if (mark_axes(c, &ax, t->shape.rank, red) < 0)
		return -1;
	Tensor *y = op_new_tensor(c, yv->dtype, &yv->shape);
	if (!y)
		return -1;
	int rc = is_float_dt(t->dtype) ? run_reduce_float(c, t, red, y)
				       : run_reduce_int(c, t, red, y);
	if (rc > 0)
		op_set_const(c, 0, y);
	return rc < 0 ? -1 : 0;
}

/* ---- ArgMax, ArgMin ----------------------------------------------------- */

int infer_argminmax(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	bool keep = attr_int(c->n, "keepdims", 1) != 0;
	int32_t axis;
	if (!x || op_check_dtype(c, 0, DTS_NUMERIC | DTS(DT_BOOL)) < 0)
		return -1;
	Shape y = x->shape;
	if (y.rank >= 0) {
		if (op_axis(c, "axis", attr_int(c->n, "axis", 0), y.rank,
			    &axis) < 0)
			return -1;
		if (y.dims[axis] == 0)
			return op_error(c, "axis %d of input '%s' is empty; "
					"there is no arg %s", axis, x->name,
					c->n->op == OP_ArgMax ? "max" : "min");
		if (keep) {
			y.dims[axis] = 1;
		} else {
			for (int32_t i = axis; i + 1 < y.rank; i++)
				y.dims[i] = y.dims[i + 1];
			y.rank--;
		}
	}
	op_set_out(c, 0, DT_INT64, &y);
	return 0;
}

/* Compares elements i and j of t: <0, 0, >0 (uint64 unsigned, floats as
 * doubles, other integers as int64).  A total order: NaN equals NaN and
 * is above every number if nan_hi, else below. */
static int cmp_elems(const Tensor *t, int64_t i, int64_t j, bool nan_hi)
{
	if (is_float_dt(t->dtype)) {
		double a = tensor_get_f64(t, i), b = tensor_get_f64(t, j);
		if (a != a || b != b)
			return ((a != a) - (b != b)) * (nan_hi ? 1 : -1);
		return (a > b) - (a < b);
	}
	if (t->dtype == DT_UINT64) {
		uint64_t a = (uint64_t)tensor_get_i64(t, i);
		uint64_t b = (uint64_t)tensor_get_i64(t, j);
		return (a > b) - (a < b);
	}
	int64_t a = tensor_get_i64(t, i), b = tensor_get_i64(t, j);
	return (a > b) - (a < b);
}

/* The strides of a slice along axis: outer blocks of len * inner. */
static void axis_split(const Shape *s, int32_t axis, int64_t *outer,
		       int64_t *len, int64_t *inner)
{
	*outer = *inner = 1;
	for (int32_t i = 0; i < axis; i++)
		*outer *= s->dims[i];
	for (int32_t i = axis + 1; i < s->rank; i++)
		*inner *= s->dims[i];
	*len = s->dims[axis];
}

int run_argminmax(OpCtx *c)
{
	const Tensor *t = op_const_in(c, 0);
	const Value *yv = op_out(c, 0);
	int64_t outer, len, inner;
	int32_t axis;
	bool last = attr_int(c->n, "select_last_index", 0) != 0;
	int sign = c->n->op == OP_ArgMax ? 1 : -1;
	if (!t || !yv || t->shape.rank < 1)
		return 0;
	if (op_axis(c, "axis", attr_int(c->n, "axis", 0), t->shape.rank,
		    &axis) < 0)
		return -1;
	axis_split(&t->shape, axis, &outer, &len, &inner);
	Tensor *y = op_new_tensor(c, DT_INT64, &yv->shape);
	if (!y)
		return -1;
	for (int64_t o = 0; o < outer; o++) {
		for (int64_t in = 0; in < inner; in++) {
			int64_t base = o * len * inner + in, best = 0;
			for (int64_t k = 1; k < len; k++) {
				int r = sign * cmp_elems(t, base + k * inner,
							 base + best * inner,
							 sign > 0);
				if (r > 0 || (r == 0 && last))
					best = k;
			}
			tensor_set_i64(y, o * inner + in, best);
		}
	}
	op_set_const(c, 0, y);
	return 0;
}

/* ---- TopK --------------------------------------------------------------- */

/* k: the attribute before opset 10, input 1 (a 1-D tensor of one int64)
 * since.  Returns 1 and sets *k if known, 0 if not, -1 on error. */
static int topk_k(OpCtx *c, int64_t *k)
{
	int64_t v[1];
	int32_t n = 0;
	if (c->opset < 10) {
		const Attr *a = nn_attr(c->n, "k", ATTR_INT);
		if (!a)
			return op_error(c, "attribute k is required");
		*k = a->i;
	} else {
		if (!op_need_in(c, 1) ||
		    op_check_dtype(c, 1, DTS(DT_INT64)) < 0 ||
		    op_check_rank(c, 1, 0, 1) < 0 || op_check_scalar(c, 1) < 0)
			return -1;
		int rc = op_const_ints(c, 1, v, &n, 1);
		if (rc <= 0)
			return rc;
		if (n != 1)
			return op_error(c, "K holds %d values, expected 1", n);
		*k = v[0];
	}
	if (*k < 0)
		return op_error(c, "k is %lld, expected >= 0", (long long)*k);
	return 1;
}

/* TopK: Values (X's dtype) and Indices (int64), both X's shape with the
 * axis dim k; an unknown k leaves that dim unknown and data-dependent. */
int infer_topk(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t k = DIM_UNKNOWN;
	int32_t axis;
	int rc;
	if (!x || op_check_dtype(c, 0, DTS_NUMERIC) < 0 ||
	    (rc = topk_k(c, &k)) < 0)
		return -1;
	Shape y = x->shape;
	if (y.rank >= 0) {
		if (op_axis(c, "axis", attr_int(c->n, "axis", -1), y.rank,
			    &axis) < 0)
			return -1;
		if (rc && y.dims[axis] >= 0 && k > y.dims[axis])
			return op_error(c, "k is %lld, but axis %d of input "
					"'%s' has only %lld elements",
					(long long)k, axis, x->name,
					(long long)y.dims[axis]);
		y.dims[axis] = rc ? k : DIM_UNKNOWN;
	}
	op_set_out(c, 0, x->dtype, &y);
	op_set_out(c, 1, DT_INT64, &y);
	if (!rc) {
		nn_mark_dep(c, 0);
		nn_mark_dep(c, 1);
	}
	return 0;
}

/* Orders slice positions a and b (element offsets base + pos * inner):
 * true if a comes first (larger, or smaller, value; ties by index). */
typedef struct TopkOrder {
	const Tensor *t;
	int64_t base, inner;
	int sign;
} TopkOrder;

static bool topk_before(const TopkOrder *o, int64_t a, int64_t b)
{
	int r = o->sign * cmp_elems(o->t, o->base + a * o->inner,
				    o->base + b * o->inner, true);
	return r > 0 || (r == 0 && a < b);
}

/* Stable merge sort of idx[0..n) with tmp as scratch. */
static void topk_sort(const TopkOrder *o, int64_t *idx, int64_t *tmp,
		      int64_t n)
{
	if (n < 2)
		return;
	int64_t h = n / 2, i = 0, j = h, k = 0;
	topk_sort(o, idx, tmp, h);
	topk_sort(o, idx + h, tmp, n - h);
	while (i < h && j < n)
		tmp[k++] = topk_before(o, idx[j], idx[i]) ? idx[j++] : idx[i++];
	while (i < h)
		tmp[k++] = idx[i++];
	while (j < n)
		tmp[k++] = idx[j++];
	memcpy(idx, tmp, (size_t)n * sizeof(int64_t));
}

/* Sorted order (also for sorted=0, where any order is valid), NaN above
 * every number whether largest or not (PyTorch's topk and sort, numpy's
 * sort, ONNX's reference implementation), ties by the lower index. */
int run_topk(OpCtx *c)
{
	const Tensor *t = op_const_in(c, 0);
	const Value *yv = op_out(c, 0), *iv = op_out(c, 1);
	const Shape *ys = yv ? &yv->shape : iv ? &iv->shape : NULL;
	int64_t outer, len, inner, k;
	int32_t axis;
	if (!t || !ys || t->shape.rank < 1 || topk_k(c, &k) <= 0)
		return 0;
	if (op_axis(c, "axis", attr_int(c->n, "axis", -1), t->shape.rank,
		    &axis) < 0)
		return -1;
	axis_split(&t->shape, axis, &outer, &len, &inner);
	Tensor *vals = op_new_tensor(c, t->dtype, ys);
	Tensor *idxs = op_new_tensor(c, DT_INT64, ys);
	if (!vals || !idxs)
		return -1;
	int64_t *idx = op_scratch(c, (size_t)len * sizeof(int64_t));
	int64_t *tmp = op_scratch(c, (size_t)len * sizeof(int64_t));
	if (!idx || !tmp)
		return -1;
	size_t esz = dtype_size(t->dtype);
	TopkOrder o = { .t = t, .inner = inner,
			.sign = attr_int(c->n, "largest", 1) ? 1 : -1 };
	for (int64_t a = 0; a < outer; a++) {
		for (int64_t in = 0; in < inner; in++) {
			o.base = a * len * inner + in;
			for (int64_t p = 0; p < len; p++)
				idx[p] = p;
			topk_sort(&o, idx, tmp, len);
			for (int64_t p = 0; p < k; p++) {
				int64_t dst = a * k * inner + p * inner + in;
				memcpy((char *)tensor_mut(vals) + dst * esz,
				       (const char *)t->data +
					       (o.base + idx[p] * inner) * esz,
				       esz);
				tensor_set_i64(idxs, dst, idx[p]);
			}
		}
	}
	op_set_const(c, 0, vals);
	op_set_const(c, 1, idxs);
	return 0;
}
