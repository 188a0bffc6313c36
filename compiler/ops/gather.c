/*
 * compiler/ops/gather.c - ops that index a tensor with another: Gather,
 * GatherElements, GatherND, Scatter, ScatterElements, ScatterND, OneHot;
 * and the ops whose output shape depends on data values: Compress,
 * NonZero, Unique.  Those get -1 dims marked VF_DATA_DEP unless the
 * values they depend on are constants, in which case they fold.
 *
 * Indices are checked when folding: an index out of range is an error
 * naming the node (a runtime would fail the same way).
 */
#include <string.h>

#include "opimpl.h"

#define DTS_INDEX (DTS(DT_INT32) | DTS(DT_INT64))

/* Index v into a dim d (negative counts from the end): the index in
 * 0..d-1, or an error naming what. */
static int norm_index(OpCtx *c, const char *what, int64_t v, int64_t d,
		      int64_t *out)
{
	*out = 0;
	if (v < -d || v >= d)
		return op_error(c, "%s %lld is out of range for a dim of %lld",
				what, (long long)v, (long long)d);
	*out = v < 0 ? v + d : v;
	return 0;
}

static int64_t prod(const int64_t *d, int32_t from, int32_t to)
{
	int64_t p = 1;
	for (int32_t i = from; i < to; i++)
		p *= d[i];
	return p;
}

static void copy_elems(Tensor *dst, int64_t di, const Tensor *src,
		       int64_t si, int64_t n)
{
	size_t es = tn_esize(dst->dtype);
	if (n > 0)
		memcpy((uint8_t *)tensor_mut(dst) + (size_t)di * es,
		       (const uint8_t *)src->data + (size_t)si * es,
		       (size_t)n * es);
}

/* ---- Gather ------------------------------------------------------------ */

/* data[:axis] + indices.shape + data[axis+1:] */
int infer_gather(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *ind = op_need_in(c, 1);
	int32_t a;
	if (!x || !ind || op_check_dtype(c, 1, DTS_INDEX) < 0 ||
	    op_check_rank(c, 0, 1, MAX_RANK) < 0)
		return -1;
	int32_t r = x->shape.rank, q = ind->shape.rank;
	Shape y = shape_unknown();
	if (r >= 0 && op_axis(c, "axis", attr_int(c->n, "axis", 0), r, &a) < 0)
		return -1;
	if (r < 0 || q < 0) {
		op_set_out(c, 0, x->dtype, &y);
		return 0;
	}
	if (r - 1 + q > MAX_RANK)
		return op_error(c, "the output would have rank %d, gearc "
				"supports at most %d", r - 1 + q, MAX_RANK);
	y.rank = 0;
	for (int32_t i = 0; i < a; i++)
		y.dims[y.rank++] = x->shape.dims[i];
	for (int32_t i = 0; i < q; i++)
		y.dims[y.rank++] = ind->shape.dims[i];
	for (int32_t i = a + 1; i < r; i++)
		y.dims[y.rank++] = x->shape.dims[i];
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

int run_gather(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *ind = op_const_in(c, 1);
	const Value *y = op_out(c, 0);
	int32_t a;
	if (!x || !ind)
		return 0;
	const int64_t *xd = x->shape.dims;
	if (op_axis(c, "axis", attr_int(c->n, "axis", 0), x->shape.rank,
		    &a) < 0)
		return -1;
	int64_t outer = prod(xd, 0, a), d = xd[a],
		inner = prod(xd, a + 1, x->shape.rank),
		m = shape_numel(&ind->shape);
	Tensor *t = op_new_tensor(c, x->dtype, &y->shape);
	if (!t)
		return -1;
	for (int64_t k = 0; k < m; k++) {
		int64_t v = 0;
		if (norm_index(c, "index", tensor_get_i64(ind, k), d, &v) < 0)
			return -1;
		for (int64_t o = 0; o < outer; o++)
			copy_elems(t, (o * m + k) * inner, x,
				   (o * d + v) * inner, inner);
	}
	op_set_const(c, 0, t);
	return 0;
}

/* ---- GatherElements ---------------------------------------------------- */

/* indices has data's rank; the output has indices' shape. */
int infer_gatherelements(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *ind = op_need_in(c, 1);
	int32_t a;
	if (!x || !ind || op_check_dtype(c, 1, DTS_INDEX) < 0 ||
	    op_check_rank(c, 0, 1, MAX_RANK) < 0)
		return -1;
	int32_t r = x->shape.rank, q = ind->shape.rank;
	if (r >= 0 && q >= 0 && r != q)
		return op_error(c, "indices '%s' has rank %d, but data '%s' "
				"has rank %d", ind->name, q, x->name, r);
	if (r >= 0 && op_axis(c, "axis", attr_int(c->n, "axis", 0), r, &a) < 0)
		return -1;
	Shape y = ind->shape;
	if (y.rank < 0 && r >= 0) { /* the rank is data's */
		y.rank = r;
		for (int32_t i = 0; i < r; i++)
			y.dims[i] = DIM_UNKNOWN;
	}
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* The data offset of element e of indices at multi-index idx, with the
 * axis coordinate replaced by the index value. */
static int elements_offset(OpCtx *c, const Tensor *x, const Tensor *ind,
			   int32_t a, const int64_t *idx, int64_t e,
			   const int64_t *st, int64_t *off)
{
	int64_t v = 0;
	*off = 0;
	for (int32_t i = 0; i < x->shape.rank; i++) {
		if (i != a && idx[i] >= x->shape.dims[i])
			return op_error(c, "indices has dim %d = %lld, but data "
					"has %lld", i,
					(long long)ind->shape.dims[i],
					(long long)x->shape.dims[i]);
		*off += (i == a ? 0 : idx[i]) * st[i];
	}
	if (norm_index(c, "index", tensor_get_i64(ind, e), x->shape.dims[a],
		       &v) < 0)
		return -1;
	*off += v * st[a];
	return 0;
}

int run_gatherelements(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *ind = op_const_in(c, 1);
	const Value *y = op_out(c, 0);
	int64_t st[MAX_RANK], idx[MAX_RANK] = { 0 }, off;
	int32_t a;
	if (!x || !ind)
		return 0;
	if (op_axis(c, "axis", attr_int(c->n, "axis", 0), x->shape.rank,
		    &a) < 0)
		return -1;
	Tensor *t = op_new_tensor(c, x->dtype, &y->shape);
	if (!t)
		return -1;
	tn_strides(&x->shape, st);
	int64_t n = shape_numel(&ind->shape);
	for (int64_t e = 0; e < n; e++) {
		if (elements_offset(c, x, ind, a, idx, e, st, &off) < 0)
			return -1;
		copy_elems(t, e, x, off, 1);
		tn_next(ind->shape.rank, ind->shape.dims, idx);
	}
	op_set_const(c, 0, t);
	return 0;
}

/* ---- GatherND ---------------------------------------------------------- */

/* indices [..., k] picks slices data[b0.., i0, .., ik-1, ...] after
 * batch_dims leading dims shared by both: the output is
 * indices.shape[:-1] + data.shape[batch_dims + k:]. */
int infer_gathernd(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *ind = op_need_in(c, 1);
	int64_t b = attr_int(c->n, "batch_dims", 0);
	char sx[128], si[128];
	if (!x || !ind || op_check_dtype(c, 1, DTS(DT_INT64)) < 0 ||
	    op_check_rank(c, 0, 1, MAX_RANK) < 0 ||
	    op_check_rank(c, 1, 1, MAX_RANK) < 0)
		return -1;
	int32_t r = x->shape.rank, q = ind->shape.rank;
	Shape y = shape_unknown();
	int64_t k = shape_dim(&ind->shape, q - 1);
	if (b < 0 || (r >= 0 && b >= r) || (q >= 0 && b >= q))
		return op_error(c, "batch_dims %lld must be less than the ranks "
				"of data (%d) and indices (%d)",
				(long long)b, r, q);
	if (r >= 0 && k >= 0 && (k < 1 || k > r - b))
		return op_error(c, "indices '%s' %s has tuples of %lld, "
				"expected 1..%lld for data '%s' %s",
				ind->name, shape_str(&ind->shape, si, sizeof(si)),
				(long long)k, (long long)(r - b), x->name,
				shape_str(&x->shape, sx, sizeof(sx)));
	for (int32_t i = 0; r >= 0 && q >= 0 && i < b; i++) {
		int64_t dx = x->shape.dims[i], di = ind->shape.dims[i];
		if (dx >= 0 && di >= 0 && dx != di)
			return op_error(c, "batch dim %d differs: %lld in data, "
					"%lld in indices", i, (long long)dx,
					(long long)di);
	}
	if (r < 0 || q < 0 || k < 0) {
		op_set_out(c, 0, x->dtype, &y);
		return 0;
	}
	if (q - 1 + r - b - k > MAX_RANK)
		return op_error(c, "the output would have rank %lld, gearc "
				"supports at most %d",
				(long long)(q - 1 + r - b - k), MAX_RANK);
	y.rank = 0;
	for (int32_t i = 0; i < q - 1; i++)
		y.dims[y.rank++] = ind->shape.dims[i];
	for (int32_t i = (int32_t)(b + k); i < r; i++)
		y.dims[y.rank++] = x->shape.dims[i];
	for (int32_t i = 0; i < b; i++) /* a batch dim known on one side */
		if (y.dims[i] == DIM_UNKNOWN)
			y.dims[i] = x->shape.dims[i];
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* The data offset of tuple t (of k values) within batch bi. */
static int nd_offset(OpCtx *c, const Tensor *x, const Tensor *ind, int32_t b,
		     int64_t k, int64_t tuple, const int64_t *st, int64_t base,
		     int64_t *off)
{
	*off = base;
	for (int64_t j = 0; j < k; j++) {
		int64_t v = 0;
		if (norm_index(c, "index", tensor_get_i64(ind, tuple * k + j),
			       x->shape.dims[b + j], &v) < 0)
			return -1;
		*off += v * st[b + j];
	}
	return 0;
}

int run_gathernd(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *ind = op_const_in(c, 1);
	const Value *y = op_out(c, 0);
	int64_t st[MAX_RANK], off;
	if (!x || !ind)
		return 0;
	int32_t b = (int32_t)attr_int(c->n, "batch_dims", 0),
		r = x->shape.rank, q = ind->shape.rank;
	int64_t k = ind->shape.dims[q - 1];
	int64_t nb = prod(ind->shape.dims, 0, b),
		per = prod(ind->shape.dims, b, q - 1),
		slice = prod(x->shape.dims, (int32_t)(b + k), r);
	Tensor *t = op_new_tensor(c, x->dtype, &y->shape);
	if (!t)
		return -1;
	tn_strides(&x->shape, st);
	for (int64_t bi = 0; bi < nb; bi++)
		for (int64_t i = 0; i < per; i++) {
			int64_t tuple = bi * per + i;
			if (nd_offset(c, x, ind, b, k, tuple, st,
				      b ? bi * st[b - 1] : 0, &off) < 0)
				return -1;
			copy_elems(t, tuple * slice, x, off, slice);
		}
	op_set_const(c, 0, t);
	return 0;
}

/* ---- Scatter, ScatterElements, ScatterND ------------------------------- */

int scatter_reduction(const char *s, int64_t opset)
{
	return !strcmp(s, "none")		  ? SCATTER_NONE
	       : !strcmp(s, "add")		  ? SCATTER_ADD
	       : !strcmp(s, "mul")		  ? SCATTER_MUL
	       : !strcmp(s, "max") && opset >= 18 ? SCATTER_MAX
	       : !strcmp(s, "min") && opset >= 18 ? SCATTER_MIN
						  : -1;
}

static int reduction(OpCtx *c, ScatterRed *red)
{
	const char *s = attr_str(c->n, "reduction", "none");
	int r = scatter_reduction(s, c->opset);
	*red = r < 0 ? SCATTER_NONE : (ScatterRed)r;
	if (r < 0)
		return op_error(c, "reduction '%s' is not one of %s", s,
				c->opset >= 18 ? "none, add, mul, max, min"
					       : "none, add, mul");
	return 0;
}

void scatter_reduce_into(Tensor *t, int64_t di, const Tensor *u, int64_t ui,
			 ScatterRed red)
{
	if (red == SCATTER_NONE) {
		copy_elems(t, di, u, ui, 1);
	} else if (DTS_FLOAT & DTS(t->dtype)) {
		double a = tensor_get_f64(t, di), b = tensor_get_f64(u, ui);
		double v = red == SCATTER_ADD ? a + b : red == SCATTER_MUL ? a * b
			   : red == SCATTER_MAX ? (a > b ? a : b) : (a < b ? a : b);
		tensor_set_f64(t, di, v);
	} else if (t->dtype == DT_UINT64) {
		uint64_t a = (uint64_t)tensor_get_i64(t, di),
			 b = (uint64_t)tensor_get_i64(u, ui);
		uint64_t v = red == SCATTER_ADD ? a + b : red == SCATTER_MUL ? a * b
			     : red == SCATTER_MAX ? (a > b ? a : b) : (a < b ? a : b);
		tensor_set_i64(t, di, (int64_t)v);
	} else {
		int64_t a = tensor_get_i64(t, di), b = tensor_get_i64(u, ui);
		int64_t v = red == SCATTER_ADD ? (int64_t)((uint64_t)a + (uint64_t)b)
			    : red == SCATTER_MUL ? (int64_t)((uint64_t)a * (uint64_t)b)
			    : red == SCATTER_MAX ? (a > b ? a : b) : (a < b ? a : b);
		tensor_set_i64(t, di, v);
	}
}

bool scatter_reducible(int dt, ScatterRed red)
{
	return red == SCATTER_NONE || (DTS_NUMERIC & DTS(dt));
}

/* Scatter (opsets 9-10) and ScatterElements: data's shape; indices and
 * updates of one shape, of data's rank. */
int infer_scatterelements(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *ind = op_need_in(c, 1),
	      *u = op_need_in(c, 2);
	ScatterRed red;
	int32_t a;
	char s1[128], s2[128];
	if (!x || !ind || !u || op_check_dtype(c, 1, DTS_INDEX) < 0 ||
	    op_check_same_dtype(c, 2, 0) < 0 || reduction(c, &red) < 0 ||
	    op_check_rank(c, 0, 1, MAX_RANK) < 0)
		return -1;
	int32_t r = x->shape.rank;
	for (int i = 1; i <= 2; i++) {
		const Value *v = op_in(c, i);
		if (r >= 0 && v->shape.rank >= 0 && v->shape.rank != r)
			return op_error(c, "input %d ('%s') has rank %d, but "
					"data '%s' has rank %d", i, v->name,
					v->shape.rank, x->name, r);
	}
	for (int32_t i = 0; ind->shape.rank >= 0 && i < u->shape.rank; i++) {
		int64_t di = ind->shape.dims[i], du = u->shape.dims[i];
		if ((di >= 0 && du >= 0 && di != du) ||
		    ind->shape.rank != u->shape.rank)
			return op_error(c, "indices %s and updates %s must have "
					"the same shape",
					shape_str(&ind->shape, s1, sizeof(s1)),
					shape_str(&u->shape, s2, sizeof(s2)));
	}
	if (r >= 0 && op_axis(c, "axis", attr_int(c->n, "axis", 0), r, &a) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

int run_scatterelements(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *ind = op_const_in(c, 1),
		     *u = op_const_in(c, 2);
	int64_t st[MAX_RANK], idx[MAX_RANK] = { 0 }, off;
	ScatterRed red;
	int32_t a;
	if (!x || !ind || !u)
		return 0;
	if (reduction(c, &red) < 0 ||
	    op_axis(c, "axis", attr_int(c->n, "axis", 0), x->shape.rank,
		    &a) < 0)
		return -1;
	if (!scatter_reducible(x->dtype, red))
		return 0;
	Tensor *t = op_new_tensor(c, x->dtype, &x->shape);
	if (!t)
		return -1;
	copy_elems(t, 0, x, 0, shape_numel(&x->shape));
	tn_strides(&x->shape, st);
	int64_t n = shape_numel(&ind->shape);
	for (int64_t e = 0; e < n; e++) {
		if (elements_offset(c, x, ind, a, idx, e, st, &off) < 0)
			return -1;
		scatter_reduce_into(t, off, u, e, red);
		tn_next(ind->shape.rank, ind->shape.dims, idx);
	}
	op_set_const(c, 0, t);
	return 0;
}

/* ScatterND: updates has shape indices.shape[:-1] + data.shape[k:]. */
int infer_scatternd(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *ind = op_need_in(c, 1),
	      *u = op_need_in(c, 2);
	ScatterRed red;
	char s1[128], s2[128];
	if (!x || !ind || !u || op_check_dtype(c, 1, DTS(DT_INT64)) < 0 ||
	    op_check_same_dtype(c, 2, 0) < 0 || reduction(c, &red) < 0 ||
	    op_check_rank(c, 0, 1, MAX_RANK) < 0 ||
	    op_check_rank(c, 1, 1, MAX_RANK) < 0)
		return -1;
	int32_t r = x->shape.rank, q = ind->shape.rank;
	int64_t k = shape_dim(&ind->shape, q - 1);
	if (r >= 0 && k >= 0 && (k < 1 || k > r))
		return op_error(c, "indices '%s' has tuples of %lld, expected "
				"1..%d", ind->name, (long long)k, r);
	if (r >= 0 && k >= 0 && u->shape.rank >= 0) {
		Shape want = { .rank = (int32_t)(q - 1 + r - k) };
		bool ok = want.rank == u->shape.rank;
		for (int32_t i = 0; i < q - 1; i++)
			want.dims[i] = ind->shape.dims[i];
		for (int32_t i = (int32_t)k; i < r; i++)
			want.dims[q - 1 + i - k] = x->shape.dims[i];
		for (int32_t i = 0; ok && i < want.rank; i++)
			ok = want.dims[i] < 0 || u->shape.dims[i] < 0 ||
			     want.dims[i] == u->shape.dims[i];
		if (!ok)
			return op_error(c, "updates '%s' has shape %s, expected "
					"%s", u->name,
					shape_str(&u->shape, s1, sizeof(s1)),
					shape_str(&want, s2, sizeof(s2)));
	}
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

int run_scatternd(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *ind = op_const_in(c, 1),
		     *u = op_const_in(c, 2);
	int64_t st[MAX_RANK], off;
	ScatterRed red;
	if (!x || !ind || !u)
		return 0;
	if (reduction(c, &red) < 0)
		return -1;
	if (!scatter_reducible(x->dtype, red))
		return 0;
	int32_t q = ind->shape.rank;
	int64_t k = ind->shape.dims[q - 1], n = prod(ind->shape.dims, 0, q - 1),
		slice = prod(x->shape.dims, (int32_t)k, x->shape.rank);
	Tensor *t = op_new_tensor(c, x->dtype, &x->shape);
	if (!t)
		return -1;
	copy_elems(t, 0, x, 0, shape_numel(&x->shape));
	tn_strides(&x->shape, st);
	for (int64_t i = 0; i < n; i++) {
		if (nd_offset(c, x, ind, 0, k, i, st, 0, &off) < 0)
			return -1;
		for (int64_t s = 0; s < slice; s++)
			scatter_reduce_into(t, off + s, u, i * slice + s, red);
	}
	op_set_const(c, 0, t);
	return 0;
}

/* ---- OneHot ------------------------------------------------------------ */

/* The depth as an integer (a float depth is truncated, as runtimes do). */
static int onehot_depth(OpCtx *c, int64_t *depth)
{
	const Tensor *d = op_const_in(c, 1);
	if (!d)
		return 0;
	if (shape_numel(&d->shape) != 1)
		return op_error(c, "depth must hold one value");
	if (DTS_FLOAT & DTS(d->dtype)) {
		double v = tensor_get_f64(d, 0);
		if (!(v >= 0 && v < 0x1p62))
			return op_error(c, "depth %g is not a valid dim", v);
		*depth = (int64_t)v;
	} else {
		*depth = tensor_get_i64(d, 0);
	}
	if (*depth < 0)
		return op_error(c, "depth %lld is negative", (long long)*depth);
	return 1;
}

/* indices' shape with a dim of depth inserted at axis (default -1: last);
 * the dtype of values ([off, on]). */
int infer_onehot(OpCtx *c)
{
	Value *ind = op_need_in(c, 0), *v = op_need_in(c, 2);
	int64_t depth = DIM_UNKNOWN;
	int32_t a;
	int known;
	char buf[128];
	if (!ind || !op_need_in(c, 1) || !v ||
	    op_check_dtype(c, 0, DTS_NUMERIC) < 0 ||
	    op_check_dtype(c, 1, DTS_NUMERIC) < 0 || op_check_scalar(c, 1) < 0 ||
	    op_check_rank(c, 2, 1, 1) < 0 || (known = onehot_depth(c, &depth)) < 0)
		return -1;
	if (shape_dim(&v->shape, 0) >= 0 && v->shape.dims[0] != 2)
		return op_error(c, "values '%s' has shape %s, expected [2]",
				v->name, shape_str(&v->shape, buf, sizeof(buf)));
	int32_t r = ind->shape.rank;
	Shape y = shape_unknown();
	if (r < 0) {
		op_set_out(c, 0, v->dtype, &y);
		return 0;
	}
	if (r + 1 > MAX_RANK)
		return op_error(c, "the output would have rank %d, gearc "
				"supports at most %d", r + 1, MAX_RANK);
	if (op_axis(c, "axis", attr_int(c->n, "axis", -1), r + 1, &a) < 0)
		return -1;
	y.rank = r + 1;
	for (int32_t i = 0, j = 0; i < y.rank; i++)
		y.dims[i] = i == a ? depth : ind->shape.dims[j++];
	if (known)
		op_set_out(c, 0, v->dtype, &y);
	else
		tn_set_data_dep(c, 0, v->dtype, &y);
	return 0;
}

int run_onehot(OpCtx *c)
{
	const Tensor *ind = op_const_in(c, 0), *v = op_const_in(c, 2);
	const Value *y = op_out(c, 0);
	int64_t depth;
	int32_t a;
	if (!ind || !v || onehot_depth(c, &depth) <= 0)
		return 0;
	if (op_axis(c, "axis", attr_int(c->n, "axis", -1), y->shape.rank,
		    &a) < 0)
		return -1;
	Tensor *t = op_new_tensor(c, y->dtype, &y->shape);
	if (!t)
		return -1;
	int64_t n = shape_numel(&y->shape), m = shape_numel(&ind->shape);
	int64_t inner = prod(ind->shape.dims, a, ind->shape.rank);
	bool fl = (DTS_FLOAT & DTS(ind->dtype)) != 0;
	for (int64_t e = 0; e < n; e++)
		copy_elems(t, e, v, 0, 1);
	for (int64_t e = 0; e < m; e++) {
		double f = fl ? tensor_get_f64(ind, e) : 0;
		if (fl && !(f > -0x1p62 && f < 0x1p62))
			continue; /* far out of range: all off */
		int64_t k = fl ? (int64_t)f : tensor_get_i64(ind, e);
		if (k < -depth || k >= depth)
			continue;
		k = k < 0 ? k + depth : k;
		int64_t o = e / inner, i = e % inner;
		copy_elems(t, (o * depth + k) * inner + i, v, 1, 1);
	}
	op_set_const(c, 0, t);
	return 0;
}

/* ---- Compress ---------------------------------------------------------- */

/* The number of slices kept: the trues of condition within the first d
 * (the whole condition if d is unknown); a true past d is an error. */
static int compress_count(OpCtx *c, const Tensor *cond, int64_t d,
			  int64_t *count)
{
	int64_t n = shape_numel(&cond->shape);
	*count = 0;
	for (int64_t i = 0; i < n; i++) {
		if (!tensor_get_i64(cond, i))
			continue;
		if (d >= 0 && i >= d)
			return op_error(c, "condition is true at %lld, past the "
					"dim of %lld", (long long)i,
					(long long)d);
		(*count)++;
	}
	return 0;
}

/* Compress: the slices along axis (of the flattened input without one)
 * where condition is true. */
int infer_compress(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	const Tensor *cond = op_const_in(c, 1);
	const Attr *ax = node_attr(c->n, "axis");
	int64_t count = DIM_UNKNOWN, d;
	int32_t a = 0;
	if (!x || !op_need_in(c, 1) || op_check_dtype(c, 1, DTS(DT_BOOL)) < 0 ||
	    op_check_rank(c, 1, 1, 1) < 0)
		return -1;
	Shape y = { .rank = 1, .dims = { DIM_UNKNOWN } };
	if (ax && x->shape.rank < 0) {
		y = shape_unknown();
	} else if (ax) {
		if (op_axis(c, "axis", ax->i, x->shape.rank, &a) < 0)
			return -1;
		y = x->shape;
	}
	d = ax ? shape_dim(&x->shape, a) : shape_numel(&x->shape);
	if (cond && compress_count(c, cond, d, &count) < 0)
		return -1;
	if (y.rank >= 0)
		y.dims[ax ? a : 0] = count;
	if (cond)
		op_set_out(c, 0, x->dtype, &y);
	else
		tn_set_data_dep(c, 0, x->dtype, &y);
	return 0;
}

int run_compress(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *cond = op_const_in(c, 1);
	const Value *y = op_out(c, 0);
	const Attr *ax = node_attr(c->n, "axis");
	int32_t a = 0;
	if (!x || !cond)
		return 0;
	if (ax && op_axis(c, "axis", ax->i, x->shape.rank, &a) < 0)
		return -1;
	int64_t outer = 1, d = shape_numel(&x->shape), inner = 1;
	if (ax) {
		outer = prod(x->shape.dims, 0, a);
		d = x->shape.dims[a];
		inner = prod(x->shape.dims, a + 1, x->shape.rank);
	}
	int64_t n = shape_numel(&cond->shape), pos = 0;
	Tensor *t = op_new_tensor(c, x->dtype, &y->shape);
	if (!t)
		return -1;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t j = 0; j < d && j < n; j++)
			if (tensor_get_i64(cond, j)) {
				copy_elems(t, pos, x, (o * d + j) * inner, inner);
				pos += inner;
			}
	op_set_const(c, 0, t);
	return 0;
}

/* ---- NonZero ----------------------------------------------------------- */

static bool nonzero_at(const Tensor *x, int64_t i)
{
	if (DTS_FLOAT & DTS(x->dtype))
		return tensor_get_f64(x, i) != 0; /* NaN counts */
	return tensor_get_i64(x, i) != 0;
}

/* NonZero: int64 [rank, count] (a scalar counts as rank 1, as numpy's
 * nonzero does). */
int infer_nonzero(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	const Tensor *k = op_const_in(c, 0);
	if (!x || op_check_dtype(c, 0, DTS_NUMERIC | DTS(DT_BOOL)) < 0)
		return -1;
	int32_t r = x->shape.rank;
	Shape y = { .rank = 2, .dims = { r < 0 ? DIM_UNKNOWN : r ? r : 1,
					 DIM_UNKNOWN } };
	if (!k) {
		tn_set_data_dep(c, 0, DT_INT64, &y);
		return 0;
	}
	int64_t n = shape_numel(&k->shape);
	y.dims[1] = 0;
	for (int64_t i = 0; i < n; i++)
		y.dims[1] += nonzero_at(k, i);
	op_set_out(c, 0, DT_INT64, &y);
	return 0;
}

int run_nonzero(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	const Value *y = op_out(c, 0);
	int64_t idx[MAX_RANK] = { 0 }, pos = 0;
	if (!x)
		return 0;
	Tensor *t = op_new_tensor(c, DT_INT64, &y->shape);
	if (!t)
		return -1;
	int32_t r = x->shape.rank;
	int64_t n = shape_numel(&x->shape), cnt = y->shape.dims[1];
	for (int64_t e = 0; e < n; e++) {
		if (nonzero_at(x, e)) {
			for (int32_t i = 0; i < r; i++)
				tensor_set_i64(t, i * cnt + pos, idx[i]);
			pos++; /* a scalar's index is 0: already there */
		}
		tn_next(r, x->shape.dims, idx);
	}
	op_set_const(c, 0, t);
	return 0;
}

/* ---- Unique ------------------------------------------------------------ */

/* The slices Unique compares: slice s is the elements o*d*inner +
 * s*inner + i for o < outer, i < inner. */
typedef struct Slices {
	const Tensor *x;
	int64_t outer, d, inner;
} Slices;

/* Orders two elements of x: numbers by value (NaNs last, all equal),
 * strings by bytes. */
static int elem_cmp(const Tensor *x, int64_t i, int64_t j)
{
	if (x->dtype == DT_STRING) {
		Bytes a, b;
		memcpy(&a, (const Bytes *)x->data + i, sizeof(a));
		memcpy(&b, (const Bytes *)x->data + j, sizeof(b));
		size_t n = a.len < b.len ? a.len : b.len;
		int r = n ? memcmp(a.data, b.data, n) : 0;
		return r ? r : (a.len > b.len) - (a.len < b.len);
	}
	if (DTS_FLOAT & DTS(x->dtype)) {
		double a = tensor_get_f64(x, i), b = tensor_get_f64(x, j);
		if (a != a || b != b)
			return (a != a) - (b != b);
		return (a > b) - (a < b);
	}
	if (x->dtype == DT_UINT64) {
		uint64_t a = (uint64_t)tensor_get_i64(x, i),
			 b = (uint64_t)tensor_get_i64(x, j);
		return (a > b) - (a < b);
	}
	int64_t a = tensor_get_i64(x, i), b = tensor_get_i64(x, j);
	return (a > b) - (a < b);
}

static int slice_cmp(const Slices *s, int64_t p, int64_t q)
{
	for (int64_t o = 0; o < s->outer; o++)
		for (int64_t i = 0; i < s->inner; i++) {
			int64_t base = o * s->d * s->inner + i;
			int r = elem_cmp(s->x, base + p * s->inner,
					 base + q * s->inner);
			if (r)
				return r;
		}
	return 0;
}

/* Stable bottom-up merge sort of a[0..n) by slice; tmp has room for n.
 * Returns the array holding the result. */
static int64_t *sort_slices(const Slices *s, int64_t *a, int64_t *tmp,
			    int64_t n)
{
	for (int64_t w = 1; w < n; w *= 2) {
		for (int64_t lo = 0; lo < n; lo += 2 * w) {
			int64_t mid = lo + w < n ? lo + w : n,
				hi = lo + 2 * w < n ? lo + 2 * w : n;
			int64_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				tmp[k++] = slice_cmp(s, a[i], a[j]) <= 0 ? a[i++]
									 : a[j++];
			while (i < mid)
				tmp[k++] = a[i++];
			while (j < hi)
				tmp[k++] = a[j++];
		}
		int64_t *sw = a;
		a = tmp;
		tmp = sw;
	}
	return a;
}

/* The result of Unique over n slices: u unique ones, in output order;
 * first[k] is the first occurrence of unique k, count[k] its count,
 * inverse[s] the unique of slice s. */
typedef struct UniqueResult {
	int64_t u, *first, *count, *inverse;
} UniqueResult;

static void unique_run(Arena *ar, const Slices *s, bool sorted,
		       UniqueResult *res)
{
	int64_t n = s->d;
	int64_t *a = arena_array(ar, (size_t)n + 1, sizeof(int64_t));
	int64_t *tmp = arena_array(ar, (size_t)n + 1, sizeof(int64_t));
	int64_t *group = arena_array(ar, (size_t)n + 1, sizeof(int64_t));
	res->first = arena_array(ar, (size_t)n + 1, sizeof(int64_t));
	res->count = arena_array(ar, (size_t)n + 1, sizeof(int64_t));
	res->inverse = arena_array(ar, (size_t)n + 1, sizeof(int64_t));
	res->u = 0;
	for (int64_t i = 0; i < n; i++)
		a[i] = i;
	a = sort_slices(s, a, tmp, n);
	/* groups of equal slices, in sorted order; stable, so a group
	 * starts with its first occurrence */
	for (int64_t i = 0; i < n; i++) {
		if (i == 0 || slice_cmp(s, a[i - 1], a[i])) {
			res->first[res->u] = a[i];
			res->count[res->u++] = 0;
		}
		group[a[i]] = res->u - 1;
		res->count[res->u - 1]++;
	}
	if (!sorted) { /* order the groups by first occurrence */
		int64_t *rank = tmp, *first = arena_array(ar, (size_t)res->u + 1,
							   sizeof(int64_t)),
			*count = arena_array(ar, (size_t)res->u + 1,
					     sizeof(int64_t));
		int64_t next = 0;
		for (int64_t i = 0; i < res->u; i++)
			rank[i] = -1;
		for (int64_t i = 0; i < n; i++) {
			int64_t g = group[i];
			if (rank[g] >= 0)
				continue;
			rank[g] = next;
			first[next] = res->first[g];
			count[next++] = res->count[g];
		}
		for (int64_t i = 0; i < n; i++)
			group[i] = rank[group[i]];
		res->first = first;
		res->count = count;
	}
	for (int64_t i = 0; i < n; i++)
		res->inverse[i] = group[i];
}

/* Output shapes of Unique with u unique slices (-1: unknown). */
static void unique_shapes(const Value *x, const Attr *ax, int32_t a,
			  int64_t u, Shape *ys, Shape *us, Shape *inv)
{
	*us = shape_of(1, &u);
	if (ax) {
		*ys = x->shape;
		if (ys->rank >= 0)
			ys->dims[a] = u;
	} else {
		*ys = *us;
	}
	int64_t ni = ax ? shape_dim(&x->shape, a) : shape_numel(&x->shape);
	*inv = shape_of(1, &ni);
}

/* Unique: Y (the unique elements, or slices along axis), indices (first
 * occurrences), inverse_indices and counts.  Folded in this hook when X
 * is a constant, since only then are the shapes known. */
int infer_unique(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	const Tensor *k = op_const_in(c, 0);
	const Attr *ax = node_attr(c->n, "axis");
	int32_t a = 0;
	Shape ys, us, inv;
	if (!x)
		return -1;
	if (ax && x->shape.rank < 0) {
		Shape unk = shape_unknown();
		Shape one = { .rank = 1, .dims = { DIM_UNKNOWN } };
		tn_set_data_dep(c, 0, x->dtype, &unk);
		for (int i = 1; i < 4; i++)
			tn_set_data_dep(c, i, DT_INT64, &one);
		return 0;
	}
	if (ax && op_axis(c, "axis", ax->i, x->shape.rank, &a) < 0)
		return -1;
	if (!k || shape_numel(&k->shape) > c->fold_limit) {
		unique_shapes(x, ax, a, DIM_UNKNOWN, &ys, &us, &inv);
		tn_set_data_dep(c, 0, x->dtype, &ys);
		tn_set_data_dep(c, 1, DT_INT64, &us);
		op_set_out(c, 2, DT_INT64, &inv);
		tn_set_data_dep(c, 3, DT_INT64, &us);
		return 0;
	}
	Slices s = { .x = k, .outer = 1, .d = shape_numel(&k->shape),
		     .inner = 1 };
	if (ax) {
		s.outer = prod(k->shape.dims, 0, a);
		s.d = k->shape.dims[a];
		s.inner = prod(k->shape.dims, a + 1, k->shape.rank);
	}
	UniqueResult res;
	unique_run(c->g->arena, &s, attr_int(c->n, "sorted", 1) != 0, &res);
	unique_shapes(x, ax, a, res.u, &ys, &us, &inv);
	op_set_out(c, 0, x->dtype, &ys);
	op_set_out(c, 1, DT_INT64, &us);
	op_set_out(c, 2, DT_INT64, &inv);
	op_set_out(c, 3, DT_INT64, &us);
	for (int i = 0; i < 4; i++) {
		const Value *v = op_out(c, i);
		if (v && shape_bytes(&v->shape, v->dtype) > c->fold_limit)
			return 0; /* known shapes, too large to fold */
	}
	Tensor *t[4];
	const Shape *sh[4] = { &ys, &us, &inv, &us };
	for (int i = 0; i < 4; i++)
		if (!(t[i] = op_new_tensor(c, i ? DT_INT64 : x->dtype, sh[i])))
			return -1;
	for (int64_t g = 0; g < res.u; g++) {
		for (int64_t o = 0; o < s.outer; o++)
			copy_elems(t[0], (o * res.u + g) * s.inner, k,
				   (o * s.d + res.first[g]) * s.inner, s.inner);
		tensor_set_i64(t[1], g, res.first[g]);
		tensor_set_i64(t[3], g, res.count[g]);
	}
	for (int64_t i = 0; i < s.d; i++)
		tensor_set_i64(t[2], i, res.inverse[i]);
	for (int i = 0; i < 4; i++)
		op_set_const(c, i, t[i]);
	return 0;
}
