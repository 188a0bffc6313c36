/*
 * compiler/ops/norm.c - normalization: InstanceNormalization,
 * LayerNormalization, LRN, MeanVarianceNormalization, LpNormalization.
 * Each output has the input's shape and dtype; LayerNormalization's
 * optional Mean and InvStdDev keep the dims before 'axis' and have 1 from
 * there on, in the dtype stash_type names (float by default).
 */
#include <string.h>

#include "opimpl.h"

/* Input i (if present and of known shape) is [n] where n is known. */
static int check_vec(OpCtx *c, int i, int64_t n, const char *what)
{
	Value *v = op_in(c, i);
	char buf[128];
	if (op_check_rank(c, i, 1, 1) < 0)
		return -1;
	int64_t d = v ? shape_dim(&v->shape, 0) : DIM_UNKNOWN;
	if (d >= 0 && n >= 0 && d != n)
		return op_error(c, "input %d ('%s') has shape %s, expected "
				"[%lld] (%s)", i, v->name,
				shape_str(&v->shape, buf, sizeof(buf)),
				(long long)n, what);
	return 0;
}

/* InstanceNormalization: input [N, C, D1..Dn], scale [C], B [C]. */
int infer_instance_norm(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	if (!x || !op_need_in(c, 1) || !op_need_in(c, 2) ||
	    op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_same_dtype(c, 1, 0) < 0 || op_check_same_dtype(c, 2, 0) < 0 ||
	    op_check_rank(c, 0, 2, MAX_RANK) < 0)
		return -1;
	int64_t ch = shape_dim(&x->shape, 1);
	if (check_vec(c, 1, ch, "channels") < 0 ||
	    check_vec(c, 2, ch, "channels") < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

/* LayerNormalization (opset 17): X, Scale and optional B, both
 * broadcastable to X's dims from axis on. */
int infer_layer_norm(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t stash = attr_int(c->n, "stash_type", DT_FLOAT);
	int32_t axis;
	if (!x || !op_need_in(c, 1) || op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_same_dtype(c, 1, 0) < 0 || op_check_same_dtype(c, 2, 0) < 0)
		return -1;
	if (stash < 0 || stash >= DT_COUNT || !(DTS_FLOAT & DTS(stash)))
		return op_error(c, "stash_type is %lld, expected a float dtype",
				(long long)stash);
	op_set_out(c, 0, x->dtype, &x->shape);
	Shape st = x->shape;
	if (st.rank >= 0) {
		if (op_axis(c, "axis", attr_int(c->n, "axis", -1), st.rank,
			    &axis) < 0)
			return -1;
		Shape tail = shape_of(st.rank - axis, st.dims + axis);
		if (op_broadcast_to(c, 1, &tail) < 0 ||
		    op_broadcast_to(c, 2, &tail) < 0)
			return -1;
		for (int32_t i = axis; i < st.rank; i++)
			st.dims[i] = 1;
	}
	op_set_out(c, 1, (int)stash, &st);
	op_set_out(c, 2, (int)stash, &st);
	return 0;
}

/* LRN: X [N, C, D1..Dk]; size is required and positive. */
int infer_lrn(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	const Attr *size = nn_attr(c->n, "size", ATTR_INT);
	if (!x || op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_rank(c, 0, 2, MAX_RANK) < 0)
		return -1;
	if (!size)
		return op_error(c, "attribute size is required");
	if (size->i < 1)
		return op_error(c, "size is %lld, expected >= 1",
				(long long)size->i);
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

/* MeanVarianceNormalization: axes (default [0, 2, 3]) must be axes of X. */
int infer_mvn(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	const int64_t *axes;
	int32_t n = attr_ints(c->n, "axes", &axes), a;
	bool seen[MAX_RANK] = { false };
	if (!x || op_check_dtype(c, 0, DTS_FLOAT) < 0)
		return -1;
	if (n < 0) {
		static const int64_t dflt[] = { 0, 2, 3 };
		axes = dflt;
		n = 3;
	}
	for (int32_t i = 0; x->shape.rank >= 0 && i < n; i++) {
		if (op_axis(c, "axes value", axes[i], x->shape.rank, &a) < 0)
			return -1;
		if (seen[a])
			return op_error(c, "axis %d is listed twice in axes", a);
		seen[a] = true;
	}
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

/* LpNormalization: axis (default -1) within X's rank, p 1 or 2. */
int infer_lp_norm(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t p = attr_int(c->n, "p", 2);
	int32_t axis;
	if (!x || op_check_dtype(c, 0, DTS_FLOAT) < 0)
		return -1;
	if (p != 1 && p != 2)
		return op_error(c, "p is %lld, expected 1 or 2", (long long)p);
	if (x->shape.rank >= 0 &&
	    op_axis(c, "axis", attr_int(c->n, "axis", -1), x->shape.rank,
		    &axis) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}
