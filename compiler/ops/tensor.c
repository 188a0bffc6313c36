/*
 * compiler/ops/tensor.c - ops that make or rearrange tensors without
 * arithmetic: Constant, Reshape, Flatten, Transpose, Concat, Shape, Size.
 */
#include <string.h>

#include "opimpl.h"

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

int fold_shape(OpCtx *c)
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
	const Tensor *t = tensor_new(c->g->arena, NULL, DT_INT64, &y, part.dims);
	if (!t)
		return -1;
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

int fold_size(OpCtx *c)
{
	int64_t n = shape_numel(&op_in(c, 0)->shape);
	Shape y = { .rank = 0 };
	if (n < 0)
		return 0;
	const Tensor *t = tensor_new(c->g->arena, NULL, DT_INT64, &y, &n);
	if (!t)
		return -1;
	op_set_const(c, 0, t);
	return 0;
}
