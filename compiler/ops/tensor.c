/*
 * compiler/ops/tensor.c - ops that make or rearrange tensors without
 * arithmetic: Constant, Reshape, Flatten, Transpose, Concat, Shape, Size,
 * Squeeze, Unsqueeze, Expand, Tile, Slice, Split, Pad, ConstantOfShape,
 * Range, EyeLike, Trilu, DepthToSpace, SpaceToDepth, ReverseSequence,
 * CumSum.  (Gather, Scatter and the data-dependent ops are in gather.c.)
 *
 * Folding moves elements by their byte size (tn_esize), so the data
 * movement ops fold every dtype, strings included: a string tensor holds
 * Bytes, which are copied as they are (tensors are immutable).
 */
#include <math.h>
#include <string.h>

#include "opimpl.h"

/* ---- helpers of the tensor family (declared in opimpl.h) -------------- */

size_t tn_esize(int dt)
{
	return dt == DT_STRING ? sizeof(Bytes) : dtype_size(dt);
}

/* Unsigned arithmetic: a shape with a 0 dim may have huge partial
 * products, which are never used. */
void tn_strides(const Shape *s, int64_t *st)
{
	uint64_t acc = 1;
	for (int32_t i = s->rank - 1; i >= 0; i--) {
		st[i] = (int64_t)acc;
		acc *= (uint64_t)s->dims[i];
	}
}

void tn_copy_strided(Tensor *dst, int32_t rank, const int64_t *dims,
		     const Tensor *src, int64_t off, const int64_t *sst)
{
	size_t es = tn_esize(dst->dtype);
	int64_t idx[2 * MAX_RANK] = { 0 }, n = shape_numel(&dst->shape);
	uint64_t si = (uint64_t)off; /* wraps in between, never at a read */
	uint8_t *d = tensor_mut(dst);
	const uint8_t *s = src->data;
	ASSERT(rank <= 2 * MAX_RANK && src->dtype == dst->dtype);
	for (int64_t k = 0; k < n; k++) {
		memcpy(d + (size_t)k * es, s + (size_t)si * es, es);
		for (int32_t i = rank - 1; i >= 0; i--) {
			si += (uint64_t)sst[i];
			if (++idx[i] < dims[i])
				break;
			si -= (uint64_t)sst[i] * (uint64_t)dims[i];
			idx[i] = 0;
		}
	}
}

int tn_copy_input(OpCtx *c, int i, int out)
{
	const Tensor *x = op_const_in(c, i);
	const Value *y = op_out(c, out);
	if (!x || !y)
		return 0;
	Tensor *t = op_new_tensor(c, x->dtype, &y->shape);
	if (!t)
		return -1;
	ASSERT(t->nbytes == x->nbytes);
	if (x->nbytes)
		memcpy(tensor_mut(t), x->data, x->nbytes);
	op_set_const(c, out, t);
	return 0;
}

int tn_int_list(OpCtx *c, const char *attr, int64_t since, int in,
		int64_t *v, int32_t *n, int32_t max)
{
	if (c->opset < since) {
		const int64_t *a;
		*n = attr_ints(c->n, attr, &a);
		if (*n > max)
			return op_error(c, "attribute %s has %d values, gearc "
					"supports at most %d", attr, *n, max);
		if (*n > 0)
			memcpy(v, a, (size_t)*n * sizeof(int64_t));
		return 1;
	}
	*n = -1;
	if (!op_in(c, in))
		return 1;
	return op_const_ints(c, in, v, n, max);
}

int tn_const_scalar(OpCtx *c, int i, int64_t *v)
{
	int64_t buf[1];
	int32_t n = 0;
	int known = op_const_ints(c, i, buf, &n, 1);
	if (known <= 0)
		return known;
	if (n != 1)
		return op_error(c, "input %d ('%s') must hold one value, not "
				"%d", i, op_in(c, i)->name, n);
	*v = buf[0];
	return 1;
}

void tn_set_data_dep(OpCtx *c, int i, int dtype, const Shape *s)
{
	op_set_out(c, i, dtype, s);
	if (op_out(c, i) && !shape_is_static(s))
		op_out(c, i)->flags |= VF_DATA_DEP;
}

/* A shape of rank r (unknown if r < 0) with every dim unknown. */
static Shape unknown_dims(int64_t r)
{
	Shape s = shape_unknown();
	if (r >= 0 && r <= MAX_RANK) {
		s.rank = (int32_t)r;
		for (int32_t i = 0; i < s.rank; i++)
			s.dims[i] = DIM_UNKNOWN;
	}
	return s;
}

/* ---- Constant ---------------------------------------------------------- */

/* The output is the tensor of exactly one of these attributes. */
static const struct {
	const char *name;
	AttrType type;
} const_attrs[] = {
	{ "value", ATTR_TENSOR },	 { "sparse_value", ATTR_SPARSE_TENSOR },
	{ "value_float", ATTR_FLOAT },	 { "value_floats", ATTR_FLOATS },
	{ "value_int", ATTR_INT },	 { "value_ints", ATTR_INTS },
	{ "value_string", ATTR_STRING }, { "value_strings", ATTR_STRINGS },
};

static const Tensor *const_tensor(OpCtx *c, const Attr *a)
{
	Arena *ar = c->g->arena;
	Shape scalar = { .rank = 0 }, vec = { .rank = 1, .dims = { a->n } };
	switch (a->type) {
	case ATTR_TENSOR: return a->t;
	case ATTR_FLOAT: return tensor_new(ar, NULL, DT_FLOAT, &scalar, &a->f);
	case ATTR_FLOATS: return tensor_new(ar, NULL, DT_FLOAT, &vec, a->floats);
	case ATTR_INT: return tensor_new(ar, NULL, DT_INT64, &scalar, &a->i);
	case ATTR_INTS: return tensor_new(ar, NULL, DT_INT64, &vec, a->ints);
	case ATTR_STRING: return tensor_new(ar, NULL, DT_STRING, &scalar, &a->s);
	case ATTR_STRINGS:
		return tensor_new(ar, NULL, DT_STRING, &vec, a->strings);
	default: return NULL;
	}
}

int infer_constant(OpCtx *c)
{
	const Attr *found = NULL;
	int count = 0;
	for (size_t k = 0; k < ARRAY_SIZE(const_attrs); k++) {
		const Attr *a = node_attr(c->n, const_attrs[k].name);
		if (!a)
			continue;
		if (a->type != (int32_t)const_attrs[k].type)
			return op_error(c, "attribute %s has type %d, expected "
					"%d", a->name, a->type,
					const_attrs[k].type);
		found = a;
		count++;
	}
	if (count != 1)
		return op_error(c, "expected exactly one of the attributes "
				"value, sparse_value, value_float(s), "
				"value_int(s), value_string(s); found %d",
				count);
	if (found->type == ATTR_SPARSE_TENSOR)
		return op_error(c, "sparse_value is not supported");
	if (found->type == ATTR_TENSOR && !found->t)
		return op_error(c, "attribute value holds no tensor");
	const Tensor *t = const_tensor(c, found);
	if (!t)
		return error_prefix("node '%s' (%s)", c->n->name,
				    c->n->op_type);
	op_set_const(c, 0, t);
	return 0;
}

/* ---- Reshape ----------------------------------------------------------- */

/* Reshape with a target that is not known: if its length is known, the
 * output has that rank; its dims depend on data. */
static int reshape_unknown(OpCtx *c, const Value *x, const Value *t)
{
	int64_t n = shape_dim(&t->shape, 0);
	Shape y = shape_unknown();
	if (n > MAX_RANK)
		return op_error(c, "target shape '%s' has %lld dims, gearc "
				"supports at most %d",
				t->name, (long long)n, MAX_RANK);
	if (n >= 0) {
		y.rank = (int32_t)n;
		for (int32_t i = 0; i < y.rank; i++)
			y.dims[i] = DIM_UNKNOWN;
	}
	op_set_out(c, 0, x->dtype, &y);
	if (!shape_is_static(&y))
		op_out(c, 0)->flags |= VF_DATA_DEP;
	return 0;
}

/* Reads the target of a Reshape into t[0..*n): the constant int64 input
 * 1 (the attribute 'shape' before opset 5).  Returns 1 if it is known, 0
 * if it is not (a tensor not yet constant), -1 on error. */
static int reshape_target(OpCtx *c, int64_t *t, int32_t *n)
{
	const int64_t *a;
	int64_t len;
	if (c->opset < 5) {
		if ((*n = attr_ints(c->n, "shape", &a)) < 0)
			return op_error(c, "attribute shape is required "
					"before opset 5");
		len = *n;
	} else {
		if (!op_need_in(c, 1) || op_check_dtype(c, 1, DTS(DT_INT64)) < 0 ||
		    op_check_rank(c, 1, 1, 1) < 0)
			return -1;
		const Tensor *k = op_const_in(c, 1);
		if (!k)
			return 0;
		a = k->data;
		len = shape_numel(&k->shape);
	}
	if (len > MAX_RANK)
		return op_error(c, "target shape has %lld dims, gearc supports "
				"at most %d", (long long)len, MAX_RANK);
	*n = (int32_t)len;
	if (len > 0) /* copied: tensor data may be unaligned */
		memcpy(t, a, (size_t)len * sizeof(int64_t));
	return 1;
}

/* A Reshape target being resolved into the output shape y. */
typedef struct Target {
	const int64_t *t; /* as given */
	int32_t n;
	Shape y;
	int32_t minus;		 /* index of the -1, or -1 */
	bool cancel[MAX_RANK];	 /* an unknown input dim copied by 0 */
	char str[128];		 /* t as "[2,0,-1]", for messages */
} Target;

/* Fills y from the target: copies the input dims that 0 stands for
 * (unless allowzero=1) and finds the -1. */
static int reshape_dims(OpCtx *c, const Value *x, Target *r)
{
	const Shape *xs = &x->shape;
	bool allowzero = attr_int(c->n, "allowzero", 0) != 0, zero = false;
	char sx[128];
	for (int32_t i = 0; i < r->n; i++) {
		int64_t d = r->t[i];
		r->y.dims[i] = d;
		if (d < -1)
			return op_error(c, "target shape %s has dim %d = %lld, "
					"expected >= -1",
					r->str, i, (long long)d);
		if (d == -1 && r->minus >= 0)
			return op_error(c, "target shape %s has more than one "
					"-1", r->str);
		if (d == -1)
			r->minus = i;
		zero |= d == 0 && allowzero;
		if (d != 0 || allowzero)
			continue;
		if (xs->rank >= 0 && i >= xs->rank)
			return op_error(c, "target shape %s copies dim %d (0), "
					"but input '%s' has shape %s",
					r->str, i, x->name,
					shape_str(xs, sx, sizeof(sx)));
		r->y.dims[i] = shape_dim(xs, i);
		r->cancel[i] = xs->rank >= 0 && r->y.dims[i] == DIM_UNKNOWN;
	}
	if (zero && r->minus >= 0)
		return op_error(c, "target shape %s has both 0 and -1, which "
				"allowzero=1 forbids", r->str);
	return 0;
}

/* Checks the element counts (what is known of them) and sizes the -1.
 * Dims copied through 0 cancel from both counts, so the -1 is known even
 * when they are not. */
static int reshape_count(OpCtx *c, const Value *x, Target *r)
{
	const Shape *xs = &x->shape;
	int64_t in = 1, out = 1;
	char sx[128];
	for (int32_t i = 0; i < r->n; i++)
		if (i != r->minus && !r->cancel[i] &&
		    op_dim_mul(c, out, r->y.dims[i], &out) < 0)
			return -1;
	if (xs->rank < 0)
		return 0;
	for (int32_t i = 0; i < xs->rank; i++)
		if (!r->cancel[i] && op_dim_mul(c, in, xs->dims[i], &in) < 0)
			return -1;
	if (in < 0)
		return 0;
	if (r->minus >= 0 && (out == 0 || in % out))
		return op_error(c, "cannot reshape input '%s' %s into %s: no "
				"size for the -1 fits",
				x->name, shape_str(xs, sx, sizeof(sx)), r->str);
	if (r->minus < 0 && in != out)
		return op_error(c, "cannot reshape input '%s' %s into %s: "
				"element counts differ",
				x->name, shape_str(xs, sx, sizeof(sx)), r->str);
	if (r->minus >= 0)
		r->y.dims[r->minus] = in / out;
	return 0;
}

/* Reshape: a 0 in the target copies the input dim at that index (with
 * allowzero=1 it is a 0), and one -1 takes the remaining elements. */
int infer_reshape(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t t[MAX_RANK];
	Target r = { .t = t, .minus = -1 };
	int known;
	if (!x || (known = reshape_target(c, t, &r.n)) < 0)
		return -1;
	if (!known)
		return reshape_unknown(c, x, op_in(c, 1));
	Shape ts = shape_of(r.n, t);
	shape_str(&ts, r.str, sizeof(r.str));
	r.y.rank = r.n;
	if (reshape_dims(c, x, &r) < 0 || reshape_count(c, x, &r) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &r.y);
	return 0;
}

/* ---- Flatten, Transpose, Concat ---------------------------------------- */

/* Flatten: [d0..dn) -> [d0 x .. x d(axis-1), d(axis) x .. x d(n-1)], with
 * axis in -r..r. */
int infer_flatten(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t axis = attr_int(c->n, "axis", 1);
	Shape y = { .rank = 2, .dims = { DIM_UNKNOWN, DIM_UNKNOWN } };
	if (!x)
		return -1;
	int32_t r = x->shape.rank;
	if (r < 0) {
		if (axis == 0)
			y.dims[0] = 1;
		op_set_out(c, 0, x->dtype, &y);
		return 0;
	}
	if (axis < -(int64_t)r || axis > r)
		return op_error(c, "axis %lld is out of range for rank %d "
				"(expected %d..%d)",
				(long long)axis, r, -r, r);
	if (axis < 0)
		axis += r;
	if (op_dims_prod(c, &x->shape, 0, (int32_t)axis, &y.dims[0]) < 0 ||
	    op_dims_prod(c, &x->shape, (int32_t)axis, r, &y.dims[1]) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* Transpose: perm (default: the axes reversed) permutes the dims. */
int infer_transpose(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	const int64_t *perm;
	if (!x)
		return -1;
	int32_t r = x->shape.rank, n = attr_ints(c->n, "perm", &perm);
	Shape y = { .rank = n };
	bool seen[MAX_RANK] = { false };
	if (n < 0) {
		y.rank = r;
		for (int32_t i = 0; i < r; i++)
			y.dims[i] = x->shape.dims[r - 1 - i];
		op_set_out(c, 0, x->dtype, &y);
		return 0;
	}
	if (r >= 0 && n != r)
		return op_error(c, "perm has %d values, but input '%s' has "
				"rank %d", n, x->name, r);
	if (n > MAX_RANK)
		return op_error(c, "perm has %d values, gearc supports at most "
				"%d", n, MAX_RANK);
	for (int32_t i = 0; i < n; i++) {
		if (perm[i] < 0 || perm[i] >= n || seen[perm[i]])
			return op_error(c, "perm is not a permutation of "
					"0..%d (perm[%d] = %lld)",
					n - 1, i, (long long)perm[i]);
		seen[perm[i]] = true;
		y.dims[i] = shape_dim(&x->shape, (int32_t)perm[i]);
	}
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* Concat: inputs of one rank and dtype, equal except along axis, where
 * the output dim is their sum. */
int infer_concat(OpCtx *c)
{
	int32_t r = -1, first = -1, axis;
	Shape y;
	if (c->n->ninputs < 1)
		return op_error(c, "expected at least one input");
	if (c->opset >= 4 && !node_attr(c->n, "axis"))
		return op_error(c, "attribute axis is required");
	for (int i = 0; i < c->n->ninputs; i++) {
		Value *v = op_need_in(c, i);
		if (!v || op_check_same_dtype(c, i, 0) < 0)
			return -1;
		if (v->shape.rank < 0)
			continue;
		if (r >= 0 && v->shape.rank != r)
			return op_error(c, "input %d ('%s') has rank %d, but "
					"input %d ('%s') has rank %d",
					i, v->name, v->shape.rank, first,
					op_in(c, first)->name, r);
		r = v->shape.rank;
		if (first < 0)
			first = i;
	}
	Value *x = op_in(c, 0);
	if (r < 0) {
		y = shape_unknown();
		op_set_out(c, 0, x->dtype, &y);
		return 0;
	}
	if (op_axis(c, "axis", attr_int(c->n, "axis", 1), r, &axis) < 0)
		return -1;
	y = op_in(c, first)->shape;
	y.dims[axis] = 0;
	for (int i = 0; i < c->n->ninputs; i++) {
		const Value *v = op_in(c, i);
		if (op_dim_add(c, y.dims[axis], shape_dim(&v->shape, axis),
			       &y.dims[axis]) < 0)
			return -1;
		for (int32_t k = 0; k < v->shape.rank; k++) {
			int64_t d = v->shape.dims[k];
			if (k == axis || d == DIM_UNKNOWN)
				continue;
			if (y.dims[k] >= 0 && y.dims[k] != d)
				return op_error(c, "input %d ('%s') has dim %d "
						"= %lld, but an earlier input "
						"has %lld; only axis %d may "
						"differ",
						i, v->name, k, (long long)d,
						(long long)y.dims[k], axis);
			y.dims[k] = d;
		}
	}
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* Reshape, Flatten, Squeeze, Unsqueeze: the same bytes, a new shape. */
int run_reshape(OpCtx *c) { return tn_copy_input(c, 0, 0); }

int run_transpose(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	const int64_t *perm;
	int64_t st[MAX_RANK], sst[MAX_RANK];
	if (!x)
		return 0;
	const Value *y = op_out(c, 0);
	int32_t r = x->shape.rank, n = attr_ints(c->n, "perm", &perm);
	Tensor *t = op_new_tensor(c, x->dtype, &y->shape);
	if (!t)
		return -1;
	tn_strides(&x->shape, st);
	for (int32_t i = 0; i < r; i++)
		sst[i] = st[n < 0 ? r - 1 - i : perm[i]];
	tn_copy_strided(t, r, y->shape.dims, x, 0, sst);
	op_set_const(c, 0, t);
	return 0;
}

/* Each input is a run of inner elements per outer index, laid side by
 * side along axis. */
int run_concat(OpCtx *c)
{
	const Value *y = op_out(c, 0);
	int32_t r = y->shape.rank, axis;
	if (!op_all_const(c) || r < 1)
		return 0;
	if (op_axis(c, "axis", attr_int(c->n, "axis", 1), r, &axis) < 0)
		return -1;
	Tensor *t = op_new_tensor(c, y->dtype, &y->shape);
	if (!t)
		return -1;
	size_t es = tn_esize(y->dtype);
	int64_t outer = 1, inner = 1, pos = 0;
	for (int32_t i = 0; i < axis; i++)
		outer *= y->shape.dims[i];
	for (int32_t i = axis + 1; i < r; i++)
		inner *= y->shape.dims[i];
	uint8_t *d = tensor_mut(t);
	for (int i = 0; i < c->n->ninputs; i++) {
		const Tensor *x = op_const_in(c, i);
		int64_t run = x->shape.dims[axis] * inner;
		for (int64_t o = 0; run && o < outer; o++)
			memcpy(d + (size_t)((o * y->shape.dims[axis] * inner) +
					    pos) * es,
			       (const uint8_t *)x->data + (size_t)(o * run) * es,
			       (size_t)run * es);
		pos += run;
	}
	op_set_const(c, 0, t);
	return 0;
}

/* ---- Shape, Size ------------------------------------------------------- */

/* The dims Shape returns: start..end (opset 15), clamped to 0..rank. */
static void shape_range(OpCtx *c, int32_t r, int32_t *start, int32_t *end)
{
	int64_t s = attr_int(c->n, "start", 0), e = attr_int(c->n, "end", r);
	s = s < 0 ? s + r : s;
	e = e < 0 ? e + r : e;
	s = s < 0 ? 0 : s > r ? r : s;
	e = e < 0 ? 0 : e > r ? r : e;
	*start = (int32_t)s;
	*end = (int32_t)(e < s ? s : e);
}

int infer_shape(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	Shape y = { .rank = 1, .dims = { DIM_UNKNOWN } };
	int32_t s, e;
	if (!x)
		return -1;
	if (x->shape.rank >= 0) {
		shape_range(c, x->shape.rank, &s, &e);
		y.dims[0] = e - s;
	}
	op_set_out(c, 0, DT_INT64, &y);
	return 0;
}

int run_shape(OpCtx *c)
{
	Value *x = op_in(c, 0);
	int32_t s, e;
	if (x->shape.rank < 0)
		return 0;
	shape_range(c, x->shape.rank, &s, &e);
	Shape part = shape_of(e - s, x->shape.dims + s), y = { .rank = 1 };
	if (!shape_is_static(&part))
		return 0;
	y.dims[0] = part.rank;
	Tensor *t = op_new_output(c, 0, DT_INT64, &y);
	if (!t)
		return -1;
	memcpy(tensor_mut(t), part.dims, (size_t)part.rank * sizeof(int64_t));
	op_set_const(c, 0, t);
	return 0;
}

int infer_size(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	Shape y = { .rank = 0 };
	if (!x)
		return -1;
	op_set_out(c, 0, DT_INT64, &y);
	return 0;
}

int run_size(OpCtx *c)
{
	int64_t n = shape_numel(&op_in(c, 0)->shape);
	Shape y = { .rank = 0 };
	if (n < 0)
		return 0;
	Tensor *t = op_new_output(c, 0, DT_INT64, &y);
	if (!t)
		return -1;
	*(int64_t *)tensor_mut(t) = n;
	op_set_const(c, 0, t);
	return 0;
}

/* ---- Squeeze, Unsqueeze ------------------------------------------------ */

/* Unsqueeze: inserts 1s at axes (an attribute before opset 13, an input
 * since), which index the output: -R..R-1 for output rank R. */
int infer_unsqueeze(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t axes[MAX_RANK];
	int32_t n, r;
	int known;
	if (!x || (known = tn_int_list(c, "axes", 13, 1, axes, &n,
					MAX_RANK)) < 0)
		return -1;
	r = x->shape.rank;
	if (!known) {
		int64_t len = shape_dim(&op_in(c, 1)->shape, 0);
		Shape y = unknown_dims(r >= 0 && len >= 0 ? r + len : -1);
		tn_set_data_dep(c, 0, x->dtype, &y);
		return 0;
	}
	if (n < 0)
		return op_error(c, c->opset < 13 ? "attribute axes is required"
						 : "required input 1 is missing");
	Shape y = shape_unknown();
	if (r < 0) {
		op_set_out(c, 0, x->dtype, &y);
		return 0;
	}
	if (r + n > MAX_RANK)
		return op_error(c, "the output would have rank %d, gearc "
				"supports at most %d", r + n, MAX_RANK);
	bool one[MAX_RANK] = { false };
	y.rank = r + n;
	for (int32_t k = 0; k < n; k++) {
		int32_t a;
		if (op_axis(c, "axes value", axes[k], y.rank, &a) < 0)
			return -1;
		if (one[a])
			return op_error(c, "axes has axis %d twice", a);
		one[a] = true;
	}
	for (int32_t i = 0, j = 0; i < y.rank; i++)
		y.dims[i] = one[i] ? 1 : x->shape.dims[j++];
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* Squeeze: removes the axes listed (each of dim 1), or with no axes every
 * dim that is 1 (then an unknown dim leaves the rank unknown). */
int infer_squeeze(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t axes[MAX_RANK];
	int32_t n, r;
	int known;
	char buf[128];
	if (!x || (known = tn_int_list(c, "axes", 13, 1, axes, &n,
					MAX_RANK)) < 0)
		return -1;
	r = x->shape.rank;
	if (!known) {
		int64_t len = shape_dim(&op_in(c, 1)->shape, 0);
		Shape y = unknown_dims(r >= 0 && len >= 0 && len <= r ? r - len
								      : -1);
		tn_set_data_dep(c, 0, x->dtype, &y);
		return 0;
	}
	Shape y = shape_unknown();
	bool drop[MAX_RANK] = { false };
	if (n == 0) /* empty axes squeeze every 1, as if absent (ORT, onnx) */
		n = -1;
	if (r < 0) {
		op_set_out(c, 0, x->dtype, &y);
		return 0;
	}
	for (int32_t i = 0; n < 0 && i < r; i++) {
		if (x->shape.dims[i] == DIM_UNKNOWN) {
			op_set_out(c, 0, x->dtype, &y);
			return 0;
		}
		drop[i] = x->shape.dims[i] == 1;
	}
	for (int32_t k = 0; k < n; k++) {
		int32_t a;
		if (op_axis(c, "axes value", axes[k], r, &a) < 0)
			return -1;
		if (drop[a])
			return op_error(c, "axes has axis %d twice", a);
		int64_t d = x->shape.dims[a];
		if (d != 1 && d != DIM_UNKNOWN)
			return op_error(c, "cannot squeeze axis %d of input '%s' "
					"%s: its dim is %lld, not 1",
					a, x->name,
					shape_str(&x->shape, buf, sizeof(buf)),
					(long long)d);
		drop[a] = true;
	}
	y.rank = 0;
	for (int32_t i = 0; i < r; i++)
		if (!drop[i])
			y.dims[y.rank++] = x->shape.dims[i];
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* ---- Expand, Tile ------------------------------------------------------ */

/* Expand: the (multidirectional) broadcast of the input's shape and the
 * int64 shape input. */
int infer_expand(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t t[MAX_RANK];
	int32_t n;
	int known;
	if (!x || !op_need_in(c, 1) ||
	    op_check_dtype(c, 1, DTS(DT_INT64)) < 0 ||
	    op_check_rank(c, 1, 1, 1) < 0 ||
	    (known = op_const_ints(c, 1, t, &n, MAX_RANK)) < 0)
		return -1;
	int32_t r = x->shape.rank;
	if (!known) {
		int64_t len = shape_dim(&op_in(c, 1)->shape, 0);
		Shape y = unknown_dims(r < 0 || len < 0 ? -1 : len > r ? len : r);
		/* a known dim other than 1 is kept */
		for (int32_t i = 0; y.rank >= 0 && i < r; i++) {
			int64_t d = x->shape.dims[i];
			if (d != 1)
				y.dims[y.rank - r + i] = d;
		}
		tn_set_data_dep(c, 0, x->dtype, &y);
		return 0;
	}
	for (int32_t i = 0; i < n; i++)
		if (t[i] < 0)
			return op_error(c, "shape input has dim %d = %lld, "
					"expected >= 0", i, (long long)t[i]);
	Shape ts = shape_of(n, t), y;
	if (op_broadcast(c, &x->shape, &ts, &y) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

int run_expand(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	const Value *y = op_out(c, 0);
	int64_t st[MAX_RANK], sst[MAX_RANK];
	if (!x)
		return 0;
	int32_t r = x->shape.rank, R = y->shape.rank;
	Tensor *t = op_new_tensor(c, x->dtype, &y->shape);
	if (!t)
		return -1;
	tn_strides(&x->shape, st);
	for (int32_t i = 0; i < R; i++) {
		int32_t j = i - (R - r);
		sst[i] = j < 0 || x->shape.dims[j] == 1 ? 0 : st[j];
	}
	tn_copy_strided(t, R, y->shape.dims, x, 0, sst);
	op_set_const(c, 0, t);
	return 0;
}

/* Tile: dim i times repeats[i] (int64, one per dim).  Opset 1 had a
 * scalar count 'tiles' for one 'axis' instead. */
int infer_tile(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t rep[MAX_RANK], axis = 0;
	int32_t n = 0, r;
	int known;
	if (!x || !op_need_in(c, 1) || op_check_dtype(c, 1, DTS(DT_INT64)) < 0)
		return -1;
	r = x->shape.rank;
	if (c->opset < 6) {
		known = tn_const_scalar(c, 1, &rep[0]);
		int k2 = op_need_in(c, 2) ? tn_const_scalar(c, 2, &axis) : -1;
		if (known < 0 || k2 < 0)
			return -1;
		known = known && k2;
		if (known && r >= 0) {
			int32_t a;
			if (op_axis(c, "axis", axis, r, &a) < 0)
				return -1;
			int64_t tiles = rep[0];
			for (int32_t i = 0; i < r; i++)
				rep[i] = i == a ? tiles : 1;
			n = r;
		}
	} else {
		if (op_check_rank(c, 1, 1, 1) < 0 ||
		    (known = op_const_ints(c, 1, rep, &n, MAX_RANK)) < 0)
			return -1;
	}
	if (!known) {
		Shape y = unknown_dims(r);
		for (int32_t i = 0; i < r; i++)
			if (x->shape.dims[i] == 0)
				y.dims[i] = 0;
		tn_set_data_dep(c, 0, x->dtype, &y);
		return 0;
	}
	if (r < 0) {
		Shape y = unknown_dims(c->opset >= 6 ? n : -1);
		op_set_out(c, 0, x->dtype, &y);
		return 0;
	}
	if (n != r)
		return op_error(c, "repeats has %d values, but input '%s' has "
				"rank %d", n, x->name, r);
	Shape y = { .rank = r };
	for (int32_t i = 0; i < r; i++) {
		if (rep[i] < 0)
			return op_error(c, "repeats[%d] = %lld, expected >= 0", i,
					(long long)rep[i]);
		if (op_dim_mul(c, x->shape.dims[i], rep[i], &y.dims[i]) < 0)
			return -1;
	}
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* The output as [rep0, d0, rep1, d1, ...]: the repeat index moves no
 * source element. */
int run_tile(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	const Value *y = op_out(c, 0);
	int64_t st[MAX_RANK], dims[2 * MAX_RANK], sst[2 * MAX_RANK];
	if (!x)
		return 0;
	int32_t r = x->shape.rank;
	Tensor *t = op_new_tensor(c, x->dtype, &y->shape);
	if (!t)
		return -1;
	if (shape_numel(&y->shape) == 0) {
		op_set_const(c, 0, t);
		return 0;
	}
	tn_strides(&x->shape, st);
	for (int32_t i = 0; i < r; i++) {
		dims[2 * i] = y->shape.dims[i] / x->shape.dims[i];
		dims[2 * i + 1] = x->shape.dims[i];
		sst[2 * i] = 0;
		sst[2 * i + 1] = st[i];
	}
	tn_copy_strided(t, 2 * r, dims, x, 0, sst);
	op_set_const(c, 0, t);
	return 0;
}

/* ---- Slice ------------------------------------------------------------- */

/* starts, ends, axes and steps of a Slice: attributes before opset 10
 * (no steps), inputs 1..4 since. */
typedef struct SliceArgs {
	int64_t starts[MAX_RANK], ends[MAX_RANK], axes[MAX_RANK],
		steps[MAX_RANK];
	int32_t n, naxes, nsteps;
} SliceArgs;

/* 1 if every argument is known, 0 if not (then naxes >= 0 when the axes
 * are), -1 on error. */
static int slice_args(OpCtx *c, SliceArgs *a)
{
	int32_t ne;
	int k1, k2, k3, k4;
	if (c->opset >= 10 && (!op_need_in(c, 1) || !op_need_in(c, 2)))
		return -1;
	for (int i = 1; c->opset >= 10 && i <= 4; i++)
		if (op_check_dtype(c, i, DTS(DT_INT32) | DTS(DT_INT64)) < 0)
			return -1;
	if ((k1 = tn_int_list(c, "starts", 10, 1, a->starts, &a->n,
			      MAX_RANK)) < 0 ||
	    (k2 = tn_int_list(c, "ends", 10, 2, a->ends, &ne, MAX_RANK)) < 0 ||
	    (k3 = tn_int_list(c, "axes", 10, 3, a->axes, &a->naxes,
			      MAX_RANK)) < 0)
		return -1;
	a->nsteps = -1;
	k4 = 1;
	if (c->opset >= 10 && op_in(c, 4) &&
	    (k4 = op_const_ints(c, 4, a->steps, &a->nsteps, MAX_RANK)) < 0)
		return -1;
	if (!k3)
		a->naxes = -1;
	if (!k1 || !k2 || !k3 || !k4)
		return 0;
	if (a->n < 0 || ne < 0)
		return op_error(c, "attributes starts and ends are required");
	if (ne != a->n || (a->naxes >= 0 && a->naxes != a->n) ||
	    (a->nsteps >= 0 && a->nsteps != a->n))
		return op_error(c, "starts, ends, axes and steps must have the "
				"same length (%d, %d, %d, %d)",
				a->n, ne, a->naxes, a->nsteps);
	return 1;
}

static int64_t clamp_i64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* The first index and the count Slice takes from a dim d (ONNX's
 * clamping: INT64_MIN/MAX ends are "to the end"). */
static void slice_dim(int64_t d, int64_t s, int64_t e, int64_t step,
		      int64_t *first, int64_t *count)
{
	s = s < 0 ? s + d : s;
	e = e < 0 ? e + d : e;
	*first = 0;
	*count = 0;
	if (d == 0)
		return;
	if (step > 0) {
		s = clamp_i64(s, 0, d);
		e = clamp_i64(e, 0, d);
		if (e > s)
			*count = (int64_t)(((uint64_t)(e - s) - 1) /
					   (uint64_t)step + 1);
	} else {
		s = clamp_i64(s, 0, d - 1);
		e = clamp_i64(e, -1, d - 1);
		if (s > e)
			*count = (int64_t)(((uint64_t)(s - e) - 1) /
					   (0 - (uint64_t)step) + 1);
	}
	*first = s;
}

/* Per input axis: first index, step and count (whole axes: 0, 1, d; an
 * unknown dim sliced: count -1). */
static int slice_plan(OpCtx *c, const SliceArgs *a, const Shape *xs,
		      int64_t *first, int64_t *step, int64_t *count)
{
	bool seen[MAX_RANK] = { false };
	for (int32_t i = 0; i < xs->rank; i++) {
		first[i] = 0;
		step[i] = 1;
		count[i] = xs->dims[i];
	}
	for (int32_t k = 0; k < a->n; k++) {
		int32_t ax;
		int64_t sp = a->nsteps >= 0 ? a->steps[k] : 1;
		if (op_axis(c, "axes value", a->naxes >= 0 ? a->axes[k] : k,
			    xs->rank, &ax) < 0)
			return -1;
		if (seen[ax])
			return op_error(c, "axes has axis %d twice", ax);
		seen[ax] = true;
		if (sp == 0)
			return op_error(c, "steps[%d] is 0", k);
		step[ax] = sp;
		if (xs->dims[ax] == DIM_UNKNOWN)
			count[ax] = DIM_UNKNOWN;
		else
			slice_dim(xs->dims[ax], a->starts[k], a->ends[k], sp,
				  &first[ax], &count[ax]);
	}
	return 0;
}

int infer_slice(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	SliceArgs a;
	int64_t first[MAX_RANK], step[MAX_RANK];
	int known;
	if (!x || (known = slice_args(c, &a)) < 0)
		return -1;
	Shape y = x->shape;
	if (y.rank < 0) {
		op_set_out(c, 0, x->dtype, &y);
		return 0;
	}
	if (!known) {
		/* the axes sliced (all if unknown) get unknown dims */
		for (int32_t k = 0; k < (a.naxes >= 0 ? a.naxes : y.rank); k++) {
			int32_t ax = k;
			if (a.naxes >= 0 && op_axis(c, "axes value", a.axes[k],
						    y.rank, &ax) < 0)
				return -1;
			y.dims[ax] = DIM_UNKNOWN;
		}
		tn_set_data_dep(c, 0, x->dtype, &y);
		return 0;
	}
	if (a.n > y.rank)
		return op_error(c, "starts has %d values, but input '%s' has "
				"rank %d", a.n, x->name, y.rank);
	if (slice_plan(c, &a, &x->shape, first, step, y.dims) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

int slice_view(OpCtx *c, const Shape *xs, int64_t *off, int64_t *sst)
{
	SliceArgs a;
	int64_t first[MAX_RANK], step[MAX_RANK], count[MAX_RANK], st[MAX_RANK];
	int known = slice_args(c, &a);
	if (known <= 0)
		return known;
	if (slice_plan(c, &a, xs, first, step, count) < 0)
		return -1;
	tn_strides(xs, st);
	*off = 0;
	for (int32_t i = 0; i < xs->rank; i++) {
		*off += first[i] * st[i];
		sst[i] = (int64_t)((uint64_t)step[i] * (uint64_t)st[i]);
	}
	return 1;
}

int run_slice(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	const Value *y = op_out(c, 0);
	int64_t off, sst[MAX_RANK];
	if (!x)
		return 0;
	int known = slice_view(c, &x->shape, &off, sst);
	if (known <= 0)
		return known;
	Tensor *t = op_new_tensor(c, x->dtype, &y->shape);
	if (!t)
		return -1;
	if (t->nbytes)
		tn_copy_strided(t, y->shape.rank, y->shape.dims, x, off, sst);
	op_set_const(c, 0, t);
	return 0;
}

/* ---- Split ------------------------------------------------------------- */

/* The sizes of the parts: 'split' (an attribute before opset 13, and in
 * opset 1 also an input; an input since), else equal parts (since opset
 * 18 the last may be smaller).  Returns 1 and the sizes if known, 0 if the
 * split input is not a constant, -1 on error. */
static int split_sizes(OpCtx *c, int64_t d, int64_t *sz, int32_t nout)
{
	int32_t n = -1;
	int known = 1;
	if (c->opset < 13 && !(c->opset < 2 && op_in(c, 1))) {
		const int64_t *v;
		if ((n = attr_ints(c->n, "split", &v)) > 0 && n <= nout)
			memcpy(sz, v, (size_t)n * sizeof(int64_t));
	} else if (op_in(c, 1)) {
		if (op_check_dtype(c, 1, DTS(DT_INT64)) < 0 ||
		    (known = op_const_ints(c, 1, sz, &n, nout)) < 0)
			return -1;
	}
	if (!known)
		return 0;
	int64_t num = attr_int(c->n, "num_outputs", nout);
	if (num != nout)
		return op_error(c, "num_outputs is %lld, but the node has %d "
				"outputs", (long long)num, nout);
	if (n >= 0) {
		int64_t sum = 0;
		if (n != nout)
			return op_error(c, "split has %d values, but the node "
					"has %d outputs", n, nout);
		for (int32_t i = 0; i < n; i++) {
			if (sz[i] < 0)
				return op_error(c, "split[%d] = %lld, expected "
						">= 0", i, (long long)sz[i]);
			if (op_dim_add(c, sum, sz[i], &sum) < 0)
				return -1;
		}
		if (d >= 0 && sum != d)
			return op_error(c, "the split sizes add up to %lld, but "
					"the dim split is %lld",
					(long long)sum, (long long)d);
		return 1;
	}
	int64_t part = d < 0 ? DIM_UNKNOWN : d / nout, last = part;
	if (d >= 0 && d % nout) {
		if (c->opset < 18)
			return op_error(c, "cannot split dim %lld into %d equal "
					"parts", (long long)d, nout);
		part = d / nout + 1;
		last = d - part * (nout - 1);
		if (last < 0)
			return op_error(c, "cannot split dim %lld into %d parts "
					"of %lld", (long long)d, nout,
					(long long)part);
	}
	for (int32_t i = 0; i < nout; i++)
		sz[i] = i == nout - 1 ? last : part;
	return 1;
}

int infer_split(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int32_t nout = c->n->noutputs, axis;
	if (!x)
		return -1;
	if (nout < 1)
		return op_error(c, "expected at least one output");
	int64_t *sz = arena_array(c->g->arena, (size_t)nout, sizeof(int64_t));
	Shape y = x->shape;
	if (y.rank < 0) {
		for (int32_t i = 0; i < nout; i++)
			op_set_out(c, i, x->dtype, &y);
		return 0;
	}
	if (op_axis(c, "axis", attr_int(c->n, "axis", 0), y.rank, &axis) < 0)
		return -1;
	int known = split_sizes(c, y.dims[axis], sz, nout);
	if (known < 0)
		return -1;
	for (int32_t i = 0; i < nout; i++) {
		y.dims[axis] = known ? sz[i] : DIM_UNKNOWN;
		tn_set_data_dep(c, i, x->dtype, &y);
	}
	return 0;
}

int run_split(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	int32_t nout = c->n->noutputs, axis;
	int64_t st[MAX_RANK], pos = 0;
	if (!x)
		return 0;
	int64_t *sz = op_scratch(c, (size_t)nout * sizeof(int64_t));
	int known;
	if (!sz)
		return -1;
	if (op_axis(c, "axis", attr_int(c->n, "axis", 0), x->shape.rank,
		    &axis) < 0 ||
	    (known = split_sizes(c, x->shape.dims[axis], sz, nout)) < 0)
		return -1;
	if (!known)
		return 0;
	tn_strides(&x->shape, st);
	for (int32_t i = 0; i < nout; pos += sz[i++]) {
		const Value *y = op_out(c, i);
		if (!y)
			continue;
		Tensor *t = op_new_tensor(c, x->dtype, &y->shape);
		if (!t)
			return -1;
		if (t->nbytes)
			tn_copy_strided(t, y->shape.rank, y->shape.dims, x,
					pos * st[axis], st);
		op_set_const(c, i, t);
	}
	return 0;
}

/* ---- Pad --------------------------------------------------------------- */

typedef enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP } PadMode;

static int pad_mode(OpCtx *c, PadMode *m)
{
	const char *s = attr_str(c->n, "mode", "constant");
	if (!strcmp(s, "constant"))
		*m = PAD_CONSTANT;
	else if (!strcmp(s, "reflect"))
		*m = PAD_REFLECT;
	else if (!strcmp(s, "edge"))
		*m = PAD_EDGE;
	else if (!strcmp(s, "wrap") && c->opset >= 19)
		*m = PAD_WRAP;
	else
		return op_error(c, "mode '%s' is not one of %s", s,
				c->opset >= 19 ? "constant, reflect, edge, wrap"
					       : "constant, reflect, edge");
	return 0;
}

/* The pads before (pb) and after (pe) each of the r axes: 'paddings'
 * (opset 1) or 'pads' attributes before opset 11, the pads input since,
 * over the axes of input 3 (all if absent) since opset 18.  Returns 1 if
 * known, 0 if an input is not a constant, -1 on error. */
static int pad_amounts(OpCtx *c, int32_t r, int64_t *pb, int64_t *pe)
{
	int64_t p[2 * MAX_RANK], axes[MAX_RANK];
	int32_t n, na = -1;
	int known;
	if (c->opset < 11) {
		const char *name = c->opset < 2 ? "paddings" : "pads";
		known = tn_int_list(c, name, 11, 1, p, &n, 2 * MAX_RANK);
		if (known > 0 && n < 0)
			return op_error(c, "attribute %s is required", name);
	} else {
		if (!op_need_in(c, 1) || op_check_dtype(c, 1, DTS(DT_INT64)) < 0)
			return -1;
		known = op_const_ints(c, 1, p, &n, 2 * MAX_RANK);
	}
	if (known > 0 && c->opset >= 18 && op_in(c, 3)) {
		if (op_check_dtype(c, 3, DTS(DT_INT32) | DTS(DT_INT64)) < 0)
			return -1;
		known = op_const_ints(c, 3, axes, &na, MAX_RANK);
	}
	if (known <= 0)
		return known;
	int32_t nax = na >= 0 ? na : r;
	if (n != 2 * nax)
		return op_error(c, "pads has %d values, expected %d (2 per "
				"axis)", n, 2 * nax);
	for (int32_t i = 0; i < r; i++)
		pb[i] = pe[i] = 0;
	for (int32_t k = 0; k < nax; k++) {
		int32_t a = k;
		if (na >= 0 && op_axis(c, "axes value", axes[k], r, &a) < 0)
			return -1;
		pb[a] = p[k];
		pe[a] = p[nax + k];
	}
	return 1;
}

int pad_view(OpCtx *c, int32_t r, int64_t *pb, int64_t *pe)
{
	PadMode mode;
	if (pad_mode(c, &mode) < 0)
		return -1;
	return mode == PAD_CONSTANT ? pad_amounts(c, r, pb, pe) : 0;
}

/* Pad: each dim grows by its pads (negative pads crop). */
int infer_pad(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t pb[MAX_RANK], pe[MAX_RANK];
	PadMode mode;
	int known;
	if (!x || pad_mode(c, &mode) < 0 ||
	    (c->opset >= 11 && (op_check_same_dtype(c, 2, 0) < 0 ||
				op_check_scalar(c, 2) < 0)))
		return -1;
	Shape y = x->shape;
	if (y.rank < 0) {
		op_set_out(c, 0, x->dtype, &y);
		return 0;
	}
	if ((known = pad_amounts(c, y.rank, pb, pe)) < 0)
		return -1;
	if (!known) {
		y = unknown_dims(y.rank);
		tn_set_data_dep(c, 0, x->dtype, &y);
		return 0;
	}
	for (int32_t i = 0; i < y.rank; i++) {
		int64_t d = y.dims[i], sum;
		if (d < 0)
			continue;
		if (mode != PAD_CONSTANT && d == 0 && (pb[i] > 0 || pe[i] > 0))
			return op_error(c, "cannot pad axis %d of input '%s' in "
					"mode %s: it is empty",
					i, x->name, attr_str(c->n, "mode", ""));
		if (pb[i] < -d || pe[i] < -d)
			return op_error(c, "pads %lld and %lld crop more than "
					"axis %d of dim %lld holds",
					(long long)pb[i], (long long)pe[i], i,
					(long long)d);
		if (__builtin_add_overflow(d, pb[i], &sum) ||
		    __builtin_add_overflow(sum, pe[i], &sum))
			return op_error(c, "pads of axis %d overflow int64", i);
		if (sum < 0)
			return op_error(c, "pads %lld and %lld make axis %d of "
					"dim %lld negative",
					(long long)pb[i], (long long)pe[i], i,
					(long long)d);
		y.dims[i] = sum;
	}
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* The source index of padded index s (relative to the data) on an axis
 * of dim d, or -1 for the constant. */
static int64_t pad_source(PadMode m, int64_t s, int64_t d)
{
	if (s >= 0 && s < d)
		return s;
	switch (m) {
	case PAD_EDGE: return s < 0 ? 0 : d - 1;
	case PAD_WRAP: return (s % d + d) % d;
	case PAD_REFLECT: {
		if (d == 1)
			return 0;
		int64_t p = 2 * (d - 1);
		s = (s % p + p) % p;
		return s < d ? s : p - s;
	}
	default: return -1;
	}
}

int run_pad(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *v = NULL;
	const Value *y = op_out(c, 0);
	int64_t pb[MAX_RANK], pe[MAX_RANK], st[MAX_RANK], idx[MAX_RANK] = { 0 };
	PadMode mode;
	if (!x)
		return 0;
	int32_t r = x->shape.rank;
	if (c->opset >= 11 && op_in(c, 2) && !(v = op_const_in(c, 2)))
		return 0;
	if (pad_mode(c, &mode) < 0 || pad_amounts(c, r, pb, pe) <= 0)
		return -1;
	Tensor *t = op_new_tensor(c, x->dtype, &y->shape);
	if (!t)
		return -1;
	size_t es = tn_esize(x->dtype);
	uint8_t value[16] = { 0 };
	if (v && shape_numel(&v->shape) > 0)
		memcpy(value, v->data, es);
	if (c->opset < 11 && x->dtype != DT_STRING) {
		Shape one = { .rank = 0 };
		Tensor *tv = op_new_tensor(c, x->dtype, &one);
		if (!tv)
			return -1;
		tensor_set_f64(tv, 0, attr_float(c->n, "value", 0));
		memcpy(value, tv->data, es);
	}
	tn_strides(&x->shape, st);
	int64_t n = shape_numel(&y->shape);
	uint8_t *d = tensor_mut(t);
	for (int64_t k = 0; k < n; k++) {
		int64_t si = 0;
		for (int32_t i = 0; i < r && si >= 0; i++) {
			int64_t s = pad_source(mode, idx[i] - pb[i],
					       x->shape.dims[i]);
			si = s < 0 ? -1 : si + s * st[i];
		}
		memcpy(d + (size_t)k * es,
		       si < 0 ? value : (const uint8_t *)x->data + (size_t)si * es,
		       es);
		tn_next(y->shape.rank, y->shape.dims, idx);
	}
	op_set_const(c, 0, t);
	return 0;
}

/* ---- ConstantOfShape, Range, EyeLike ----------------------------------- */

/* The 'value' attribute: one element (float32 0 if absent). */
static const Tensor *cos_value(OpCtx *c)
{
	const Attr *a = node_attr(c->n, "value");
	if (!a)
		return NULL;
	if (a->type != ATTR_TENSOR || !a->t || shape_numel(&a->t->shape) != 1)
		return op_error(c, "attribute value must be a tensor of one "
				"element"), NULL;
	return a->t;
}

int infer_constantofshape(OpCtx *c)
{
	Value *s = op_need_in(c, 0);
	const Attr *a = node_attr(c->n, "value");
	const Tensor *v = cos_value(c);
	int64_t t[MAX_RANK];
	int32_t n;
	int known;
	if (!s || (a && !v) || op_check_dtype(c, 0, DTS(DT_INT64)) < 0 ||
	    op_check_rank(c, 0, 1, 1) < 0 ||
	    (known = op_const_ints(c, 0, t, &n, MAX_RANK)) < 0)
		return -1;
	int dt = v ? v->dtype : DT_FLOAT;
	if (!known) {
		Shape y = unknown_dims(shape_dim(&s->shape, 0));
		tn_set_data_dep(c, 0, dt, &y);
		return 0;
	}
	for (int32_t i = 0; i < n; i++)
		if (t[i] < 0)
			return op_error(c, "input 0 ('%s') has dim %d = %lld, "
					"expected >= 0",
					s->name, i, (long long)t[i]);
	Shape y = shape_of(n, t);
	op_set_out(c, 0, dt, &y);
	return 0;
}

int run_constantofshape(OpCtx *c)
{
	const Value *y = op_out(c, 0);
	const Tensor *v = cos_value(c);
	Tensor *t = op_new_tensor(c, y->dtype, &y->shape);
	if (!t)
		return -1;
	size_t es = tn_esize(y->dtype);
	int64_t n = shape_numel(&y->shape);
	for (int64_t k = 0; v && k < n; k++)
		memcpy((uint8_t *)tensor_mut(t) + (size_t)k * es, v->data, es);
	op_set_const(c, 0, t);
	return 0;
}

#define DTS_RANGE \
	(DTS(DT_FLOAT) | DTS(DT_DOUBLE) | DTS(DT_INT16) | DTS(DT_INT32) | \
	 DTS(DT_INT64))

/* The element count of Range(start, limit, delta): max(ceil((limit -
 * start) / delta), 0), exact for integers. */
static int range_count(OpCtx *c, const Tensor *s, const Tensor *l,
		       const Tensor *d, int64_t *count)
{
	if (s->dtype == DT_FLOAT || s->dtype == DT_DOUBLE) {
		double a = tensor_get_f64(s, 0), b = tensor_get_f64(l, 0),
		       step = tensor_get_f64(d, 0);
		double q = step != 0 ? ceil((b - a) / step) : 0;
		if (step == 0 || q != q || q >= 0x1p62)
			return op_error(c, "Range(%g, %g, %g) has no finite "
					"element count", a, b, step);
		*count = q > 0 ? (int64_t)q : 0;
		return 0;
	}
	int64_t a = tensor_get_i64(s, 0), b = tensor_get_i64(l, 0);
	int64_t step = tensor_get_i64(d, 0);
	if (step == 0)
		return op_error(c, "delta is 0");
	*count = 0;
	if (a == b || (b > a) != (step > 0))
		return 0;
	/* |limit - start| and |delta| are exact in uint64 */
	uint64_t diff = b > a ? (uint64_t)b - (uint64_t)a
			      : (uint64_t)a - (uint64_t)b;
	uint64_t ust = step > 0 ? (uint64_t)step : 0 - (uint64_t)step;
	uint64_t q = (diff - 1) / ust + 1;
	if (q > INT64_MAX)
		return op_error(c, "Range(%lld, %lld, %lld) has too many "
				"elements", (long long)a, (long long)b,
				(long long)step);
	*count = (int64_t)q;
	return 0;
}

int infer_range(OpCtx *c)
{
	Value *s = op_need_in(c, 0);
	const Tensor *ks = op_const_in(c, 0), *kl = op_const_in(c, 1),
		     *kd = op_const_in(c, 2);
	Shape y = { .rank = 1, .dims = { DIM_UNKNOWN } };
	if (!s || !op_need_in(c, 1) || !op_need_in(c, 2) ||
	    op_check_dtype(c, 0, DTS_RANGE) < 0)
		return -1;
	for (int i = 1; i <= 2; i++)
		if (op_check_same_dtype(c, i, 0) < 0)
			return -1;
	for (int i = 0; i <= 2; i++)
		if (op_check_scalar(c, i) < 0)
			return -1;
	if (!ks || !kl || !kd) {
		tn_set_data_dep(c, 0, s->dtype, &y);
		return 0;
	}
	for (int i = 0; i <= 2; i++)
		if (shape_numel(&op_const_in(c, i)->shape) != 1)
			return op_error(c, "input %d ('%s') must hold one value",
					i, op_in(c, i)->name);
	if (range_count(c, ks, kl, kd, &y.dims[0]) < 0)
		return -1;
	op_set_out(c, 0, s->dtype, &y);
	return 0;
}

/* output[i] = start + i * delta, in int64 or double, then stored in the
 * dtype. */
int run_range(OpCtx *c)
{
	const Tensor *s = op_const_in(c, 0), *d = op_const_in(c, 2);
	const Value *y = op_out(c, 0);
	Tensor *t = op_new_tensor(c, y->dtype, &y->shape);
	if (!t)
		return -1;
	bool fl = y->dtype == DT_FLOAT || y->dtype == DT_DOUBLE;
	for (int64_t i = 0; i < y->shape.dims[0]; i++) {
		if (fl)
			tensor_set_f64(t, i, tensor_get_f64(s, 0) +
						     (double)i * tensor_get_f64(d, 0));
		else /* in range: it lies between start and limit */
			tensor_set_i64(t, i, (int64_t)((uint64_t)tensor_get_i64(s, 0) +
						       (uint64_t)i * (uint64_t)tensor_get_i64(d, 0)));
	}
	op_set_const(c, 0, t);
	return 0;
}

/* EyeLike: a 2-D tensor of the input's shape with ones on diagonal k; its
 * contents depend only on the shape, so it folds whenever that is static. */
int infer_eyelike(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	if (!x || op_check_rank(c, 0, 2, 2) < 0)
		return -1;
	int64_t dt = attr_int(c->n, "dtype", x->dtype);
	if (!dtype_valid((int)dt) || dt == DT_STRING ||
	    !((DTS_NUMERIC | DTS(DT_BOOL)) & DTS(dt)))
		return op_error(c, "dtype %lld is not a numeric or bool dtype",
				(long long)dt);
	Shape y = x->shape;
	if (y.rank < 0)
		y = unknown_dims(2);
	op_set_out(c, 0, (int)dt, &y);
	return 0;
}

int run_eyelike(OpCtx *c)
{
	const Value *y = op_out(c, 0);
	int64_t k = attr_int(c->n, "k", 0), rows = y->shape.dims[0],
		cols = y->shape.dims[1];
	Tensor *t = op_new_tensor(c, y->dtype, &y->shape);
	if (!t)
		return -1;
	for (int64_t i = 0; k > -rows && k < cols && i < rows; i++)
		if (i + k >= 0 && i + k < cols)
			tensor_set_i64(t, i * cols + i + k, 1);
	op_set_const(c, 0, t);
	return 0;
}

/* ---- Trilu, DepthToSpace, SpaceToDepth --------------------------------- */

int infer_trilu(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	if (!x || op_check_rank(c, 0, 2, MAX_RANK) < 0 ||
	    op_check_dtype(c, 1, DTS(DT_INT64)) < 0 || op_check_scalar(c, 1) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

/* Keeps the elements with j - i >= k (upper) or <= k (lower), zeroes the
 * rest. */
int run_trilu(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	int64_t k = 0;
	int known = op_in(c, 1) ? tn_const_scalar(c, 1, &k) : 1;
	if (known < 0)
		return -1;
	if (!x || !known)
		return 0;
	bool upper = attr_int(c->n, "upper", 1) != 0;
	int32_t r = x->shape.rank;
	int64_t rows = x->shape.dims[r - 2], cols = x->shape.dims[r - 1];
	int64_t n = shape_numel(&x->shape);
	size_t es = tn_esize(x->dtype);
	Tensor *t = op_new_tensor(c, x->dtype, &x->shape);
	if (!t)
		return -1;
	for (int64_t e = 0; e < n; e++) {
		int64_t j = e % cols, i = e / cols % rows;
		bool keep = upper ? j - i >= k : j - i <= k;
		if (keep)
			memcpy((uint8_t *)tensor_mut(t) + (size_t)e * es,
			       (const uint8_t *)x->data + (size_t)e * es, es);
	}
	op_set_const(c, 0, t);
	return 0;
}

/* The block size of DepthToSpace/SpaceToDepth. */
static int block_size(OpCtx *c, int64_t *b)
{
	const Attr *a = node_attr(c->n, "blocksize");
	*b = a ? a->i : 0;
	if (!a || *b < 1)
		return op_error(c, "attribute blocksize is required and must be "
				">= 1");
	return 0;
}

/* DCR (default) or CRD (DepthToSpace since opset 11). */
static int d2s_crd(OpCtx *c, bool *crd)
{
	const char *m = attr_str(c->n, "mode", "DCR");
	*crd = !strcmp(m, "CRD");
	if (!*crd && strcmp(m, "DCR"))
		return op_error(c, "mode '%s' is not DCR or CRD", m);
	return 0;
}

/* [N, C, H, W] -> [N, C / b^2, H * b, W * b]. */
int infer_depthtospace(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t b, bb;
	bool crd;
	if (!x || op_check_rank(c, 0, 4, 4) < 0 || block_size(c, &b) < 0 ||
	    d2s_crd(c, &crd) < 0 || op_dim_mul(c, b, b, &bb) < 0)
		return -1;
	Shape y = x->shape.rank < 0 ? unknown_dims(4) : x->shape;
	if (y.dims[1] >= 0 && y.dims[1] % bb)
		return op_error(c, "input '%s' has %lld channels, not a "
				"multiple of blocksize^2 = %lld",
				x->name, (long long)y.dims[1], (long long)bb);
	if (y.dims[1] >= 0)
		y.dims[1] /= bb;
	if (op_dim_mul(c, y.dims[2], b, &y.dims[2]) < 0 ||
	    op_dim_mul(c, y.dims[3], b, &y.dims[3]) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* The output as [N, C', H, b, W, b]: DCR reads channel (i*b + j)*C' + c,
 * CRD channel c*b*b + i*b + j. */
int run_depthtospace(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	const Value *y = op_out(c, 0);
	int64_t b, st[4];
	bool crd;
	if (!x)
		return 0;
	if (block_size(c, &b) < 0 || d2s_crd(c, &crd) < 0)
		return -1;
	Tensor *t = op_new_tensor(c, x->dtype, &y->shape);
	if (!t)
		return -1;
	tn_strides(&x->shape, st);
	int64_t cc = y->shape.dims[1];
	int64_t dims[6] = { y->shape.dims[0], cc, x->shape.dims[2], b,
			    x->shape.dims[3], b };
	int64_t sst[6] = { st[0], crd ? b * b * st[1] : st[1], st[2],
			   crd ? b * st[1] : b * cc * st[1], st[3],
			   crd ? st[1] : cc * st[1] };
	if (t->nbytes)
		tn_copy_strided(t, 6, dims, x, 0, sst);
	op_set_const(c, 0, t);
	return 0;
}

/* [N, C, H, W] -> [N, C * b^2, H / b, W / b]. */
int infer_spacetodepth(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t b, bb;
	if (!x || op_check_rank(c, 0, 4, 4) < 0 || block_size(c, &b) < 0 ||
	    op_dim_mul(c, b, b, &bb) < 0)
		return -1;
	Shape y = x->shape.rank < 0 ? unknown_dims(4) : x->shape;
	for (int32_t i = 2; i < 4; i++) {
		if (y.dims[i] >= 0 && y.dims[i] % b)
			return op_error(c, "input '%s' has dim %d = %lld, not a "
					"multiple of blocksize %lld",
					x->name, i, (long long)y.dims[i],
					(long long)b);
		if (y.dims[i] >= 0)
			y.dims[i] /= b;
	}
	if (op_dim_mul(c, y.dims[1], bb, &y.dims[1]) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* The output as [N, b, b, C, H', W']: element (n, i, j, c, h, w) is input
 * (n, c, h*b + i, w*b + j). */
int run_spacetodepth(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	const Value *y = op_out(c, 0);
	int64_t b, st[4];
	if (!x)
		return 0;
	if (block_size(c, &b) < 0)
		return -1;
	Tensor *t = op_new_tensor(c, x->dtype, &y->shape);
	if (!t)
		return -1;
	tn_strides(&x->shape, st);
	int64_t dims[6] = { x->shape.dims[0], b, b, x->shape.dims[1],
			    y->shape.dims[2], y->shape.dims[3] };
	int64_t sst[6] = { st[0], st[2], st[3], st[1], b * st[2], b * st[3] };
	if (t->nbytes)
		tn_copy_strided(t, 6, dims, x, 0, sst);
	op_set_const(c, 0, t);
	return 0;
}

/* ---- ReverseSequence, CumSum ------------------------------------------- */

static int revseq_axes(OpCtx *c, int32_t *ba, int32_t *ta)
{
	int64_t b = attr_int(c->n, "batch_axis", 1), t = attr_int(c->n, "time_axis", 0);
	if ((b != 0 && b != 1) || (t != 0 && t != 1) || b == t)
		return op_error(c, "batch_axis %lld and time_axis %lld must be "
				"0 and 1 in some order", (long long)b,
				(long long)t);
	*ba = (int32_t)b;
	*ta = (int32_t)t;
	return 0;
}

int infer_reversesequence(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *l = op_need_in(c, 1);
	int32_t ba, ta;
	char buf[128];
	if (!x || !l || op_check_rank(c, 0, 2, MAX_RANK) < 0 ||
	    op_check_dtype(c, 1, DTS(DT_INT64)) < 0 ||
	    op_check_rank(c, 1, 1, 1) < 0 || revseq_axes(c, &ba, &ta) < 0)
		return -1;
	int64_t nb = shape_dim(&x->shape, ba), nl = shape_dim(&l->shape, 0);
	if (nb >= 0 && nl >= 0 && nb != nl)
		return op_error(c, "sequence_lens has %lld values, but input "
				"'%s' %s has batch dim %lld",
				(long long)nl, x->name,
				shape_str(&x->shape, buf, sizeof(buf)),
				(long long)nb);
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

int run_reversesequence(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *l = op_const_in(c, 1);
	int64_t st[MAX_RANK], idx[MAX_RANK] = { 0 };
	int32_t ba, ta;
	if (!x || !l)
		return 0;
	if (revseq_axes(c, &ba, &ta) < 0)
		return -1;
	int64_t T = x->shape.dims[ta], n = shape_numel(&x->shape);
	for (int64_t b = 0; b < x->shape.dims[ba]; b++)
		if (tensor_get_i64(l, b) < 0 || tensor_get_i64(l, b) > T)
			return op_error(c, "sequence_lens[%lld] = %lld is not in "
					"0..%lld", (long long)b,
					(long long)tensor_get_i64(l, b),
					(long long)T);
	Tensor *t = op_new_tensor(c, x->dtype, &x->shape);
	if (!t)
		return -1;
	size_t es = tn_esize(x->dtype);
	tn_strides(&x->shape, st);
	for (int64_t e = 0; e < n; e++) {
		int64_t len = tensor_get_i64(l, idx[ba]), tt = idx[ta];
		int64_t src = tt < len ? e + (len - 1 - 2 * tt) * st[ta] : e;
		memcpy((uint8_t *)tensor_mut(t) + (size_t)e * es,
		       (const uint8_t *)x->data + (size_t)src * es, es);
		tn_next(x->shape.rank, x->shape.dims, idx);
	}
	op_set_const(c, 0, t);
	return 0;
}

/* CumSum: the input's shape; axis is a scalar int32/int64 input. */
int infer_cumsum(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t axis;
	int32_t a;
	int known;
	if (!x || !op_need_in(c, 1) || op_check_dtype(c, 0, DTS_NUMERIC) < 0 ||
	    op_check_dtype(c, 1, DTS(DT_INT32) | DTS(DT_INT64)) < 0 ||
	    op_check_scalar(c, 1) < 0 || (known = tn_const_scalar(c, 1, &axis)) < 0)
		return -1;
	if (known && x->shape.rank >= 0 &&
	    op_axis(c, "axis", axis, x->shape.rank, &a) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

/* Sums along the axis (reversed if reverse=1; each output leaving out its
 * own element if exclusive=1).  Integers wrap as the dtype does; floats
 * are rounded to the dtype after every addition, as a runtime would. */
int run_cumsum(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	int64_t axis, st[MAX_RANK];
	int32_t a;
	if (!x || tn_const_scalar(c, 1, &axis) <= 0)
		return 0;
	if (op_axis(c, "axis", axis, x->shape.rank, &a) < 0)
		return -1;
	bool excl = attr_int(c->n, "exclusive", 0) != 0;
	bool rev = attr_int(c->n, "reverse", 0) != 0;
	bool fl = (DTS_FLOAT & DTS(x->dtype)) != 0;
	Tensor *t = op_new_tensor(c, x->dtype, &x->shape);
	if (!t)
		return -1;
	tn_strides(&x->shape, st);
	int64_t len = x->shape.dims[a], n = shape_numel(&x->shape);
	int64_t step = rev ? -st[a] : st[a];
	/* every element with index 0 on the axis starts a line */
	for (int64_t e = 0; len > 0 && e < n; e++) {
		if (e / st[a] % len)
			continue;
		int64_t p = rev ? e + (len - 1) * st[a] : e;
		double accf = 0;
		uint64_t acci = 0;
		for (int64_t k = 0; k < len; k++, p += step) {
			if (!excl) {
				accf += fl ? tensor_get_f64(x, p) : 0;
				acci += fl ? 0 : (uint64_t)tensor_get_i64(x, p);
			}
			if (fl) {
				tensor_set_f64(t, p, accf);
				accf = tensor_get_f64(t, p);
			} else {
				tensor_set_i64(t, p, (int64_t)acci);
			}
			if (excl) {
				accf += fl ? tensor_get_f64(x, p) : 0;
				acci += fl ? 0 : (uint64_t)tensor_get_i64(x, p);
			}
		}
	}
	op_set_const(c, 0, t);
	return 0;
}
