/*
 * compiler/ops/math.c - matrix products: Gemm, MatMul.
 */
#include "opimpl.h"

#define DTS_MATMUL \
	(DTS_FLOAT | DTS(DT_INT32) | DTS(DT_INT64) | DTS(DT_UINT32) | \
	 DTS(DT_UINT64))

/* The inner dims ka (of A) and kb (of B) must agree where known. */
static int check_inner(OpCtx *c, int64_t ka, int64_t kb)
{
	char sa[128], sb[128];
	Value *a = op_in(c, 0), *b = op_in(c, 1);
	if (ka < 0 || kb < 0 || ka == kb)
		return 0;
	return op_error(c, "inner dims differ: input 0 ('%s', %s) has %lld, "
			"input 1 ('%s', %s) has %lld",
			a->name, shape_str(&a->shape, sa, sizeof(sa)),
			(long long)ka, b->name,
			shape_str(&b->shape, sb, sizeof(sb)), (long long)kb);
}

/* Gemm: A' [M, K] x B' [K, N] (' = transposed if transA/transB) + C,
 * where C broadcasts to [M, N] (before opset 7, only with broadcast=1;
 * it is optional since opset 11). */
int infer_gemm(OpCtx *c)
{
	Value *a = op_need_in(c, 0), *b = a ? op_need_in(c, 1) : NULL;
	char sc[128], sy[128];
	if (!b || (c->opset < 11 && !op_need_in(c, 2)) ||
	    op_check_dtype(c, 0, DTS_MATMUL) < 0 ||
	    op_check_same_dtype(c, 1, 0) < 0 || op_check_same_dtype(c, 2, 0) < 0 ||
	    op_check_rank(c, 0, 2, 2) < 0 || op_check_rank(c, 1, 2, 2) < 0)
		return -1;
	bool ta = attr_int(c->n, "transA", 0) != 0;
	bool tb = attr_int(c->n, "transB", 0) != 0;
	Shape y = { .rank = 2 };
	y.dims[0] = shape_dim(&a->shape, ta ? 1 : 0);
	y.dims[1] = shape_dim(&b->shape, tb ? 0 : 1);
	if (check_inner(c, shape_dim(&a->shape, ta ? 0 : 1),
			shape_dim(&b->shape, tb ? 1 : 0)) < 0)
		return -1;
	Value *cv = op_in(c, 2);
	if (cv && c->opset < 7 && !attr_int(c->n, "broadcast", 0) &&
	    cv->shape.rank >= 0) {
		bool same = cv->shape.rank == 2;
		for (int32_t k = 0; same && k < 2; k++)
			same = cv->shape.dims[k] == y.dims[k] ||
			       cv->shape.dims[k] < 0 || y.dims[k] < 0;
		if (!same)
			return op_error(c, "input 2 ('%s') has shape %s, "
					"expected %s (broadcast=0)",
					cv->name,
					shape_str(&cv->shape, sc, sizeof(sc)),
					shape_str(&y, sy, sizeof(sy)));
	} else if (op_broadcast_to(c, 2, &y) < 0) {
		return -1;
	}
	op_set_out(c, 0, a->dtype, &y);
	return 0;
}

/* MatMul as numpy.matmul: a 1-D A is [1, K] and a 1-D B is [K, 1], with
 * that 1 dropped from the result; the batch dims (all but the last two)
 * broadcast. */
int infer_matmul(OpCtx *c)
{
	Value *a = op_need_in(c, 0), *b = a ? op_need_in(c, 1) : NULL;
	char sa[128], sb[128];
	if (!b || op_check_dtype(c, 0, DTS_MATMUL) < 0 ||
	    op_check_same_dtype(c, 1, 0) < 0 ||
	    op_check_rank(c, 0, 1, MAX_RANK) < 0 ||
	    op_check_rank(c, 1, 1, MAX_RANK) < 0)
		return -1;
	const Shape *as = &a->shape, *bs = &b->shape;
	Shape y = shape_unknown();
	if (as->rank < 0 || bs->rank < 0) {
		op_set_out(c, 0, a->dtype, &y);
		return 0;
	}
	int32_t ra = as->rank, rb = bs->rank;
	if (check_inner(c, as->dims[ra - 1], bs->dims[rb >= 2 ? rb - 2 : 0]) < 0)
		return -1;
	Shape ba = shape_of(ra >= 2 ? ra - 2 : 0, as->dims);
	Shape bb = shape_of(rb >= 2 ? rb - 2 : 0, bs->dims);
	if (op_broadcast(c, &ba, &bb, &y) < 0)
		return op_error(c, "batch dims of input 0 ('%s', %s) and input "
				"1 ('%s', %s) cannot be broadcast",
				a->name, shape_str(as, sa, sizeof(sa)), b->name,
				shape_str(bs, sb, sizeof(sb)));
	if (ra >= 2)
		y.dims[y.rank++] = as->dims[ra - 2];
	if (rb >= 2)
		y.dims[y.rank++] = bs->dims[rb - 1];
	op_set_out(c, 0, a->dtype, &y);
	return 0;
}
