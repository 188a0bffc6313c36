/*
 * compiler/ops/matmul.c - matrix products: Gemm, MatMul (shape inference
 * and kernels; fp32 runs on sgemm, sgemm.c).
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

/* ---- kernels ------------------------------------------------------------ */

/* A tensor's elements in scratch as doubles (float dtypes) or as uint64
 * (integers: sums wrap as in the output's C type once truncated). */
static void *load_all(OpCtx *c, const Tensor *t, bool ints)
{
	int64_t n = shape_numel(&t->shape);
	void *p = op_scratch_zeroed(c, n * 8);
	for (int64_t i = 0; p && i < n; i++) {
		if (ints)
			((uint64_t *)p)[i] = (uint64_t)tensor_get_i64(t, i);
		else
			((double *)p)[i] = tensor_get_f64(t, i);
	}
	return p;
}

/* y (m x n) = op(a) (m x k) * op(b) (k x n), in double or uint64. */
static void mm_ref(bool ints, bool ta, bool tb, int64_t m, int64_t n,
		   int64_t k, const void *a, const void *b, void *y)
{
	for (int64_t i = 0; i < m; i++) {
		for (int64_t j = 0; j < n; j++) {
			double fs = 0;
			uint64_t us = 0;
			for (int64_t p = 0; p < k; p++) {
				int64_t ia = ta ? p * m + i : i * k + p;
				int64_t ib = tb ? j * k + p : p * n + j;
				if (ints)
					us += ((const uint64_t *)a)[ia] *
					      ((const uint64_t *)b)[ib];
				else
					fs += ((const double *)a)[ia] *
					      ((const double *)b)[ib];
			}
			if (ints)
				((uint64_t *)y)[i * n + j] = us;
			else
				((double *)y)[i * n + j] = fs;
		}
	}
}

static bool is_int(int dt) { return (DTS_INT & DTS(dt)) != 0; }

/* Gemm: Y = alpha * A' * B' + beta * C; C is not read where beta is 0
 * (its NaN and infinities do not reach Y), as BLAS, oneDNN's fast path
 * and ONNX Runtime have it. */
int run_gemm(OpCtx *c)
{
	const Tensor *a = op_const_in(c, 0), *b = op_const_in(c, 1);
	const Tensor *ct = op_const_in(c, 2);
	if (!a || !b || (op_in(c, 2) && !ct))
		return 0;
	bool ta = attr_int(c->n, "transA", 0) != 0;
	bool tb = attr_int(c->n, "transB", 0) != 0;
	float alpha = attr_float(c->n, "alpha", 1);
	float beta = attr_float(c->n, "beta", 1);
	const Shape *ys = &op_out(c, 0)->shape;
	int64_t m = ys->dims[0], n = ys->dims[1];
	int64_t k = a->shape.dims[ta ? 0 : 1];
	Tensor *y = op_new_output_zeroed(c, 0, a->dtype, ys);
	if (!y)
		return -1;
	/* C broadcast: its rows and columns (1: repeated) */
	int32_t cr = ct ? ct->shape.rank : 0;
	int64_t crows = cr == 2 ? ct->shape.dims[0] : 1;
	int64_t ccols = cr >= 1 ? ct->shape.dims[cr - 1] : 1;
	double *yd = NULL;
	if (a->dtype != DT_FLOAT) {
		void *ad = load_all(c, a, false), *bd = load_all(c, b, false);
		yd = op_scratch_zeroed(c, m * n * sizeof(double));
		if (!ad || !bd || !yd)
			return -1;
		mm_ref(false, ta, tb, m, n, k, ad, bd, yd);
	}
	float *yf = a->dtype == DT_FLOAT ? tensor_mut(y) : NULL;
	for (int64_t i = 0; i < m; i++) {
		for (int64_t j = 0; j < n; j++) {
			int64_t ci = (crows == 1 ? 0 : i) * ccols +
				     (ccols == 1 ? 0 : j);
			double cv = ct && beta != 0
					    ? beta * tensor_get_f64(ct, ci)
					    : 0;
			if (yf)
				yf[i * n + j] = (float)cv;
			else
				tensor_set_f64(y, i * n + j,
					       alpha * yd[i * n + j] + cv);
		}
	}
	if (yf) {
		float *pack = op_scratch_zeroed(c, sgemm_scratch(m, n, k));
		if (!pack)
			return -1;
		sgemm(ta, tb, m, n, k, alpha, a->data, ta ? m : k, b->data,
		      tb ? k : n, 1, yf, n, pack);
	}
	op_set_const(c, 0, y);
	return 0;
}

/* Batch offset (in matrices) into an operand of batch dims bd[0..r),
 * right-aligned under the output's batch index idx[0..yr) (dims of 1
 * broadcast). */
static int64_t batch_off(const int64_t *bd, int32_t r, const int64_t *idx,
			 int32_t yr)
{
	int64_t off = 0;
	for (int32_t d = 0; d < r; d++)
		off = off * bd[d] + (bd[d] == 1 ? 0 : idx[yr - r + d]);
	return off;
}

int matmul_batched(OpCtx *c, int kind, const Shape *as, const void *a,
		   const Shape *bs, const void *b, const Shape *ys, void *y)
{
	int32_t ra = as->rank, rb = bs->rank;
	int64_t m = ra >= 2 ? as->dims[ra - 2] : 1, k = as->dims[ra - 1];
	int64_t n = rb >= 2 ? bs->dims[rb - 1] : 1;
	int32_t yr = ys->rank - (ra >= 2) - (rb >= 2);
	int32_t nba = ra >= 2 ? ra - 2 : 0, nbb = rb >= 2 ? rb - 2 : 0;
	int64_t nb = 1, na = 1, idx[MAX_RANK] = { 0 };
	for (int32_t d = 0; d < yr; d++)
		nb *= ys->dims[d];
	for (int32_t d = 0; d < nba; d++)
		na *= as->dims[d];
	/* B shared by every batch and A's batches contiguous: one product
	 * with the batches stacked as rows */
	if (shape_numel(bs) == k * n && na == nb) {
		m *= nb;
		nb = 1;
	}
	float *pack = NULL;
	if (kind == MM_F32 && !(pack = op_scratch_zeroed(c, sgemm_scratch(m, n, k))))
		return -1;
	size_t es = kind == MM_F32 ? sizeof(float) : 8;
	for (int64_t bi = 0; bi < nb; bi++, tn_next(yr, ys->dims, idx)) {
		const char *am = (const char *)a +
				 batch_off(as->dims, nba, idx, yr) * m * k * es;
		const char *bm = (const char *)b +
				 batch_off(bs->dims, nbb, idx, yr) * k * n * es;
		char *ym = (char *)y + bi * m * n * es;
		if (kind == MM_F32)
			sgemm(false, false, m, n, k, 1, (const float *)am, k,
			      (const float *)bm, n, 0, (float *)ym, n, pack);
		else
			mm_ref(kind == MM_U64, false, false, m, n, k, am, bm,
			       ym);
	}
	return 0;
}

/* MatMul: numpy.matmul; fp32 on sgemm, other dtypes in double or, for
 * integers, in wrapping uint64. */
int run_matmul(OpCtx *c)
{
	const Tensor *a = op_const_in(c, 0), *b = op_const_in(c, 1);
	const Shape *ys = &op_out(c, 0)->shape;
	if (!a || !b)
		return 0;
	Tensor *y = op_new_output_zeroed(c, 0, a->dtype, ys);
	if (!y)
		return -1;
	int64_t ny = shape_numel(ys);
	bool ints = is_int(a->dtype);
	int kind = a->dtype == DT_FLOAT ? MM_F32 : ints ? MM_U64 : MM_F64;
	if (kind == MM_F32) {
		if (matmul_batched(c, kind, &a->shape, a->data, &b->shape,
				   b->data, ys, tensor_mut(y)) < 0)
			return -1;
		op_set_const(c, 0, y);
		return 0;
	}
	void *ad = load_all(c, a, ints), *bd = load_all(c, b, ints);
	void *yd = op_scratch_zeroed(c, ny * 8);
	if (!ad || !bd || !yd ||
	    matmul_batched(c, kind, &a->shape, ad, &b->shape, bd, ys, yd) < 0)
		return -1;
	for (int64_t i = 0; i < ny; i++) {
		if (ints)
			tensor_set_i64(y, i, (int64_t)((uint64_t *)yd)[i]);
		else
			tensor_set_f64(y, i, ((double *)yd)[i]);
	}
	op_set_const(c, 0, y);
	return 0;
}
