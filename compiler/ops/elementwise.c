/*
 * compiler/ops/elementwise.c - ops whose output has the shape of their
 * input (unary activations and math, Clip, Dropout, Softmax, Identity) or
 * the broadcast of their inputs (Add, Sub, Mul, Div, Pow, PRelu).
 */
#include "opimpl.h"

/* Output 0 is input 0, whose dtype must be in dts. */
static int same_as_input(OpCtx *c, uint32_t dts)
{
	Value *x = op_need_in(c, 0);
	if (!x || op_check_dtype(c, 0, dts) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

int infer_unary_float(OpCtx *c) { return same_as_input(c, DTS_FLOAT); }

int infer_unary_signed(OpCtx *c)
{
	return same_as_input(c, DTS_FLOAT | DTS_SINT);
}

int infer_unary_numeric(OpCtx *c) { return same_as_input(c, DTS_NUMERIC); }

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

int fold_identity(OpCtx *c)
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
	if (same_as_input(c, DTS_NUMERIC) < 0)
		return -1;
	for (int i = 1; i <= 2; i++)
		if (op_check_same_dtype(c, i, 0) < 0 || op_check_scalar(c, i) < 0)
			return -1;
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

/* Softmax, LogSoftmax: axis defaults to 1 before opset 13, to -1 since. */
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

/* Before opset 7, B is broadcast to A only with broadcast=1: B is a
 * scalar or matches a contiguous run of A's dims starting at 'axis'
 * (suffix matching without it), and the output has A's shape. */
static int legacy_broadcast(OpCtx *c, Value *a, Value *b)
{
	char sa[128], sb[128];
	const Shape *s = &a->shape, *t = &b->shape;
	int32_t start;
	if (s->rank < 0 || t->rank < 0 || shape_numel(t) == 1)
		return 0;
	if (!attr_int(c->n, "broadcast", 0)) {
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
		if (d != e && d != DIM_UNKNOWN && e != DIM_UNKNOWN)
			goto bad;
	}
	return 0;
bad:
	return op_error(c, "input 1 ('%s', %s) does not match input 0 ('%s', "
			"%s) under opset %lld broadcasting",
			b->name, shape_str(t, sb, sizeof(sb)), a->name,
			shape_str(s, sa, sizeof(sa)), (long long)c->opset);
}

/* A binary op with the shape of broadcasting its inputs, of A's dtype. */
static int binary(OpCtx *c)
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
	op_set_out(c, 0, a->dtype, &y);
	return 0;
}

int infer_arith(OpCtx *c)
{
	if (op_check_dtype(c, 0, DTS_NUMERIC) < 0 ||
	    op_check_same_dtype(c, 1, 0) < 0)
		return -1;
	return binary(c);
}

/* Pow: since opset 12 the exponent may have another numeric dtype. */
int infer_pow(OpCtx *c)
{
	if (op_check_dtype(c, 0, DTS_FLOAT | DTS(DT_INT32) | DTS(DT_INT64)) < 0 ||
	    op_check_dtype(c, 1, DTS_NUMERIC) < 0 ||
	    (c->opset < 12 && op_check_same_dtype(c, 1, 0) < 0))
		return -1;
	return binary(c);
}

/* PRelu: slope broadcasts to X (unidirectionally); Y has X's shape. */
int infer_prelu(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	if (!x || !op_need_in(c, 1) || op_check_dtype(c, 0, DTS_NUMERIC) < 0 ||
	    op_check_same_dtype(c, 1, 0) < 0 ||
	    op_broadcast_to(c, 1, &x->shape) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}
