/*
 * compiler/ops/qfused.c - gearc's dynamic int8 ops (domain ai.gearc),
 * made by passes/qfuse.c of the chain onnxruntime's quantize_dynamic
 * writes:
 *
 *   DynQuantMatMul X, B, B_zero_point?, W_scale, Bias?
 *   DynQuantConv   X, W, W_zero_point?, W_scale, Bias?  (ConvInteger's
 *                                                        attributes)
 *
 * both Y = Cast<float>(Op(q, W, z, W_zero_point)) * (s * W_scale)
 * [+ Bias] with (q, s, z) = DynamicQuantizeLinear(X) and Op MatMulInteger
 * or ConvInteger: the integer product exact, then each float step
 * rounded as the unfused ops round it (the scale product s * W_scale,
 * the product with the sum, the bias added).  W_scale and Bias hold one
 * value or one per output channel (MatMul: the last axis, Conv: axis 1),
 * in any shape that broadcasts so (gearc export writes them back
 * unchanged: passes/unfuse.c).  These are the reference kernels; the
 * fast path (runtime/quant.c) implements the same contract.
 */
#include "opimpl.h"

bool dynquant_per_channel(const Shape *s, int32_t rank, int32_t axis,
			  int64_t ch)
{
	bool ok = s->rank <= rank;
	for (int32_t d = 0; ok && d < s->rank; d++) {
		int64_t k = s->dims[d];
		ok = k == 1 || (rank - s->rank + d == axis && k == ch);
	}
	return ok;
}

/* Input i (if present) holds one value or ch values along axis (of an
 * output of rank rank) and broadcasts into that output; its count, 0 if
 * absent, -1 with an error. */
static int64_t chan_count(OpCtx *c, int i, int32_t rank, int32_t axis,
			  int64_t ch)
{
	Value *v = op_in(c, i);
	if (!v)
		return 0;
	if (op_check_dtype(c, i, DTS(DT_FLOAT)) < 0)
		return -1;
	if (!shape_is_static(&v->shape) || rank < 0 || ch < 0)
		return 1;
	if (!dynquant_per_channel(&v->shape, rank, axis, ch))
		return op_error(c, "input %d ('%s') is not one value or %lld "
				"along axis %d of the output", i, v->name,
				(long long)ch, axis),
		       -1;
	return shape_numel(&v->shape);
}

/* The checks both ops share, output 0 set: input 0 float32, 1 (u)int8,
 * 2 its zero point, 3 the scale, 4 the bias (channel axis axis). */
static int check_dynquant(OpCtx *c, int32_t axis)
{
	Value *y = op_out(c, 0);
	if (!y || op_check_dtype(c, 0, DTS(DT_FLOAT)) < 0 ||
	    op_check_dtype(c, 1, DTS(DT_INT8) | DTS(DT_UINT8)) < 0 ||
	    op_check_same_dtype(c, 2, 1) < 0 || op_check_rank(c, 2, 0, 1) < 0 ||
	    !op_need_in(c, 3))
		return -1;
	int32_t r = y->shape.rank, ax = axis < 0 ? r + axis : axis;
	int64_t ch = r >= 0 && ax >= 0 && ax < r ? y->shape.dims[ax] : -1;
	if (chan_count(c, 3, r, ax, ch) < 0 || chan_count(c, 4, r, ax, ch) < 0)
		return -1;
	return 0;
}

int infer_dynquant_matmul(OpCtx *c)
{
	Shape y;
	if (!op_need_in(c, 0) || !op_need_in(c, 1) ||
	    matmul_shape(c, 0, 1, &y) < 0)
		return -1;
	op_set_out(c, 0, DT_FLOAT, &y);
	return check_dynquant(c, -1);
}

int infer_dynquant_conv(OpCtx *c)
{
	if (!op_need_in(c, 0) || !op_need_in(c, 1) ||
	    op_check_dtype(c, 0, DTS(DT_FLOAT)) < 0 ||
	    conv_like(c, 0, 1, -1, DT_FLOAT) < 0)
		return -1;
	return check_dynquant(c, 1);
}

/* Both kernels: X quantized, the integer product, then per element
 * float(sum) * (s * W_scale[ch]) [+ Bias[ch]], ch the element's channel
 * (i / inner % nch). */
static int run_dynquant(OpCtx *c, bool conv)
{
	if (!op_all_const(c))
		return 0;
	const Tensor *x = op_const_in(c, 0), *ws = op_const_in(c, 3);
	const Tensor *b = op_const_in(c, 4);
	const Shape *ys = &op_out(c, 0)->shape;
	Shape scalar = shape_of(0, NULL);
	Tensor *q = op_new_tensor(c, DT_UINT8, &x->shape);
	Tensor *z = op_new_tensor(c, DT_UINT8, &scalar);
	if (!q || !z)
		return -1;
	float s;
	dql_quantize(x->data, shape_numel(&x->shape), tensor_mut(q), &s,
		     tensor_mut(z));
	double *acc = conv ? conv_integer_of(c, q, z, op_const_in(c, 2))
			   : int_matmul_of(c, q, z, op_const_in(c, 1),
					   op_const_in(c, 2));
	Tensor *y = acc ? op_new_output(c, 0, DT_FLOAT, ys) : NULL;
	if (!y)
		return -1;
	int32_t r = ys->rank, ax = conv ? 1 : r - 1;
	int64_t nch = ys->dims[ax], inner = 1;
	for (int32_t d = ax + 1; d < r; d++)
		inner *= ys->dims[d];
	int64_t nws = shape_numel(&ws->shape);
	int64_t nb = b ? shape_numel(&b->shape) : 0;
	const float *wp = ws->data, *bp = b ? b->data : NULL;
	float *yp = tensor_mut(y);
	for (int64_t i = 0; i < shape_numel(ys); i++) {
		int64_t ch = i / inner % nch;
		float v = (float)(int32_t)(int64_t)acc[i] *
			  (s * wp[nws > 1 ? ch : 0]);
		yp[i] = bp ? v + bp[nb > 1 ? ch : 0] : v;
	}
	op_set_const(c, 0, y);
	return 0;
}

int run_dynquant_matmul(OpCtx *c) { return run_dynquant(c, false); }

int run_dynquant_conv(OpCtx *c) { return run_dynquant(c, true); }
