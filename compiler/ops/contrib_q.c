/*
 * compiler/ops/contrib_q.c - ONNX Runtime's quantized contrib ops
 * (com.microsoft), with its semantics.  A quantized value q of scale s
 * and zero point z stands for s (q - z), computed in float as ONNX
 * Runtime's kernels do; a result v is stored as rint(v / s') + z'
 * (half to even, float division), saturated to the 8-bit range:
 *
 *   QLinearAdd, QLinearMul   A, A_scale, A_zp?, B, B_scale, B_zp?,
 *                            C_scale, C_zp?: C = A + B, A * B, numpy
 *                            broadcast, per-tensor parameters
 *   QLinearSigmoid, QLinearLeakyRelu (alpha 0.01)
 *                            X, X_scale, X_zp?, Y_scale, Y_zp?: a table
 *                            of the 256 values, as ONNX Runtime builds
 *   QLinearConcat            Y_scale, Y_zp, then (X, X_scale, X_zp) per
 *                            input; axis: each input requantized
 *   QLinearGlobalAveragePool X, x_scale, x_zp, y_scale, y_zp;
 *                            channels_last: the sum of x - x_zp over
 *                            the spatial dims times x_scale / (y_scale
 *                            n), the window's n
 *   QLinearAveragePool       X, x_scale, x_zp?, y_scale, y_zp?;
 *                            AveragePool's attributes and channels_last:
 *                            AveragePool of the dequantized X, quantized
 *   QLinearSoftmax           X, X_scale, x_zp?, y_scale, y_zp?; axis,
 *                            opset (Softmax's semantics of that opset):
 *                            ONNX Runtime's table of exp((x - max +
 *                            shift) x_scale) in float, summed in order,
 *                            times floor(1 / y_scale) over the sum (its
 *                            whole algorithm: results are ONNX
 *                            Runtime's bit for bit but for int8 outputs
 *                            above 127, which ONNX Runtime wraps and
 *                            gearc saturates)
 *   QGemm                    A, a_scale, a_zp, B, b_scale, b_zp, C?,
 *                            y_scale?, y_zp?; alpha, transA, transB: the
 *                            integer product plus C (int32), times
 *                            alpha a_scale b_scale [/ y_scale]: float Y
 *                            without y_scale, else quantized
 *   DynamicQuantizeMatMul    A (float), B, b_scale, b_zp?, bias?: A
 *                            quantized as DynamicQuantizeLinear does
 *   MatMulIntegerToFloat     A, B, a_scale, b_scale, a_zp?, b_zp?, bias?
 *                            float Y = (A - a_zp)(B - b_zp) a_scale
 *                            b_scale + bias; b's scale and zero point
 *                            one value or one per column
 * The products are exact (in double, as misc.c's MatMulInteger).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "opimpl.h"

#define DTS_Q8 (DTS(DT_INT8) | DTS(DT_UINT8))

/* ---- parameters --------------------------------------------------------- */

/* Input i (if present and of known shape) holds one value. */
static int check_one(OpCtx *c, int i, const char *what)
{
	Value *v = op_in(c, i);
	char s[128];
	if (!v || v->shape.rank < 0 || !shape_is_static(&v->shape) ||
	    shape_numel(&v->shape) == 1)
		return 0;
	return op_error(c, "input %d (%s, '%s') has shape %s, expected one "
			"value", i, what, v->name,
			shape_str(&v->shape, s, sizeof(s)));
}

/* A float scale (input si) and the zero point (input zi, absent: 0) of
 * 8-bit input qi: dtypes and single values checked. */
static int check_qparams(OpCtx *c, int qi, int si, int zi)
{
	if ((qi >= 0 && op_check_dtype(c, qi, DTS_Q8) < 0) ||
	    !op_need_in(c, si) || op_check_dtype(c, si, DTS(DT_FLOAT)) < 0 ||
	    check_one(c, si, "scale") < 0 ||
	    (qi >= 0 && op_check_same_dtype(c, zi, qi) < 0) ||
	    op_check_dtype(c, zi, DTS_Q8) < 0 ||
	    check_one(c, zi, "zero point") < 0)
		return -1;
	return 0;
}

/* The per-tensor scale of input i, the zero point of input j (0 if
 * absent). */
static float q_scale(OpCtx *c, int i)
{
	return (float)tensor_get_f64(op_const_in(c, i), 0);
}

static int32_t q_zero(OpCtx *c, int j)
{
	const Tensor *z = op_const_in(c, j);
	return z && shape_numel(&z->shape) ? (int32_t)tensor_get_i64(z, 0) : 0;
}

/* Whether the present inputs among idx[0..n) are all known. */
static bool known(OpCtx *c, const int *idx, int n)
{
	for (int k = 0; k < n; k++)
		if (op_in(c, idx[k]) && !op_const_in(c, idx[k]))
			return false;
	return true;
}

#define q_store ms_q_store

static int32_t q_get(const Tensor *t, int64_t i)
{
	return t->dtype == DT_UINT8 ? ((const uint8_t *)t->data)[i]
				    : ((const int8_t *)t->data)[i];
}

static void q_put(Tensor *t, int64_t i, int32_t v)
{
	if (t->dtype == DT_UINT8)
		((uint8_t *)tensor_mut(t))[i] = (uint8_t)v;
	else
		((int8_t *)tensor_mut(t))[i] = (int8_t)v;
}

/* ---- QLinearAdd, QLinearMul -------------------------------------------- */

int infer_ms_qlinear_binary(OpCtx *c)
{
	Value *a = op_need_in(c, 0), *b = a ? op_need_in(c, 3) : NULL;
	Shape y;
	if (!b || check_qparams(c, 0, 1, 2) < 0 ||
	    check_qparams(c, 3, 4, 5) < 0 || check_qparams(c, -1, 6, 7) < 0 ||
	    op_check_same_dtype(c, 3, 0) < 0 || op_check_same_dtype(c, 7, 0) < 0 ||
	    op_broadcast(c, &a->shape, &b->shape, &y) < 0)
		return -1;
	op_set_out(c, 0, a->dtype, &y);
	return 0;
}

/* The offsets into inputs of shapes a and b (numpy-broadcast to y) of
 * output element o. */
static void bcast_offsets(const Shape *y, const Shape *a, const Shape *b,
			  int64_t o, int64_t *ia, int64_t *ib)
{
	int64_t sa = 1, sb = 1;
	*ia = *ib = 0;
	for (int32_t k = y->rank - 1; k >= 0; k--) {
		int64_t i = o % y->dims[k];
		o /= y->dims[k];
		int32_t ka = k - (y->rank - a->rank), kb = k - (y->rank - b->rank);
		if (ka >= 0) {
			*ia += a->dims[ka] == 1 ? 0 : i * sa;
			sa *= a->dims[ka];
		}
		if (kb >= 0) {
			*ib += b->dims[kb] == 1 ? 0 : i * sb;
			sb *= b->dims[kb];
		}
	}
}

int run_ms_qlinear_binary(OpCtx *c)
{
	static const int all[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	if (!known(c, all, 8))
		return 0;
	const Tensor *a = op_const_in(c, 0), *b = op_const_in(c, 3);
	const Shape *ys = &op_out(c, 0)->shape;
	Tensor *y = op_new_output(c, 0, a->dtype, ys);
	if (!y)
		return -1;
	float as = q_scale(c, 1), bs = q_scale(c, 4), cs = q_scale(c, 6);
	int32_t az = q_zero(c, 2), bz = q_zero(c, 5), cz = q_zero(c, 7);
	bool mul = c->n->op == OP_MS_QLinearMul;
	for (int64_t o = 0, n = shape_numel(ys); o < n; o++) {
		int64_t ia, ib;
		bcast_offsets(ys, &a->shape, &b->shape, o, &ia, &ib);
		float va = as * (float)(q_get(a, ia) - az);
		float vb = bs * (float)(q_get(b, ib) - bz);
		q_put(y, o, q_store((mul ? va * vb : va + vb) / cs, cz,
				    y->dtype));
	}
	op_set_const(c, 0, y);
	return 0;
}

/* ---- QLinearSigmoid, QLinearLeakyRelu: tables --------------------------- */

int infer_ms_qlinear_unary(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	if (!x || check_qparams(c, 0, 1, 2) < 0 ||
	    check_qparams(c, -1, 3, 4) < 0 || op_check_same_dtype(c, 4, 0) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

void ms_qlinear_table_of(int op, int dt, float xs, int32_t xz, float ys,
			 int32_t yz, float alpha, uint8_t *table)
{
	for (int32_t i = 0; i < 256; i++) {
		int32_t q = dt == DT_UINT8 ? i : (int8_t)i;
		float v = xs * (float)(q - xz), f = v;
		if (op == OP_MS_QLinearSigmoid)
			f = (float)(1 / (1 + exp(-(double)v)));
		else if (op == OP_MS_QLinearLeakyRelu)
			f = v >= 0 ? v : alpha * v;
		table[i] = (uint8_t)q_store(f / ys, yz, dt);
	}
}

int ms_qlinear_table(OpCtx *c, uint8_t *table)
{
	static const int params[] = { 1, 2, 3, 4 };
	if (!known(c, params, 4))
		return 0;
	ms_qlinear_table_of(c->n->op, op_in(c, 0)->dtype, q_scale(c, 1),
			    q_zero(c, 2), q_scale(c, 3), q_zero(c, 4),
			    attr_float(c->n, "alpha", 0.01f), table);
	return 1;
}

int run_ms_qlinear_unary(OpCtx *c)
{
	uint8_t table[256];
	const Tensor *x = op_const_in(c, 0);
	if (!x)
		return 0;
	int rc = ms_qlinear_table(c, table);
	if (rc <= 0)
		return rc;
	Tensor *y = op_new_output(c, 0, x->dtype, &x->shape);
	if (!y)
		return -1;
	const uint8_t *xp = x->data;
	uint8_t *yp = tensor_mut(y);
	for (int64_t i = 0, n = shape_numel(&x->shape); i < n; i++)
		yp[i] = table[xp[i]];
	op_set_const(c, 0, y);
	return 0;
}

/* ---- QLinearConcat ------------------------------------------------------ */

int infer_ms_qlinear_concat(OpCtx *c)
{
	int n = c->n->ninputs;
	char sa[128], sb[128];
	if (n < 5 || (n - 2) % 3)
		return op_error(c, "has %d inputs, expected Y_scale, "
				"Y_zero_point and 3 per input (X, X_scale, "
				"X_zero_point)", n);
	Value *z = op_need_in(c, 1), *x0 = op_need_in(c, 2);
	if (!z || !x0 || check_qparams(c, -1, 0, 1) < 0)
		return -1;
	int32_t axis, rank = x0->shape.rank;
	for (int i = 2; i < n; i += 3) {
		if (!op_need_in(c, i) || check_qparams(c, i, i + 1, i + 2) < 0 ||
		    op_check_same_dtype(c, i, 1) < 0)
			return -1;
		if (op_in(c, i)->shape.rank >= 0)
			rank = op_in(c, i)->shape.rank;
	}
	Shape y = shape_unknown();
	if (rank >= 0) {
		if (op_axis(c, "axis", attr_int(c->n, "axis", 0), rank,
			    &axis) < 0)
			return -1;
		y.rank = rank;
		for (int32_t k = 0; k < rank; k++)
			y.dims[k] = k == axis ? 0 : DIM_UNKNOWN;
		for (int i = 2; i < n; i += 3) {
			const Shape *s = &op_in(c, i)->shape;
			if (s->rank < 0) {
				y.dims[axis] = DIM_UNKNOWN;
				continue;
			}
			if (s->rank != rank)
				return op_error(c, "input %d ('%s') has rank "
						"%d, input 2 rank %d", i,
						op_in(c, i)->name, s->rank,
						rank);
			for (int32_t k = 0; k < rank; k++) {
				if (k == axis) {
					if (op_dim_add(c, y.dims[k], s->dims[k],
						       &y.dims[k]) < 0)
						return -1;
					continue;
				}
				if (y.dims[k] < 0)
					y.dims[k] = s->dims[k];
				else if (s->dims[k] >= 0 &&
					 s->dims[k] != y.dims[k])
					return op_error(
						c, "input %d ('%s') has shape "
						"%s, unlike the others' %s "
						"but at axis %d", i,
						op_in(c, i)->name,
						shape_str(s, sa, sizeof(sa)),
						shape_str(&y, sb, sizeof(sb)),
						axis);
			}
		}
	}
	op_set_out(c, 0, z->dtype, &y);
	return 0;
}

int run_ms_qlinear_concat(OpCtx *c)
{
	if (!op_all_const(c))
		return 0;
	const Shape *ys = &op_out(c, 0)->shape;
	int dt = op_in(c, 1)->dtype;
	int32_t axis;
	if (op_axis(c, "axis", attr_int(c->n, "axis", 0), ys->rank, &axis) < 0)
		return -1;
	Tensor *y = op_new_output(c, 0, dt, ys);
	if (!y)
		return -1;
	int64_t outer = 1, inner = 1, at = 0;
	for (int32_t k = 0; k < axis; k++)
		outer *= ys->dims[k];
	for (int32_t k = axis + 1; k < ys->rank; k++)
		inner *= ys->dims[k];
	float ysc = q_scale(c, 0);
	int32_t yz = q_zero(c, 1);
	for (int i = 2; i < c->n->ninputs; i += 3) {
		const Tensor *x = op_const_in(c, i);
		uint8_t table[256];
		ms_qlinear_table_of(OP_MS_QLinearConcat, dt, q_scale(c, i + 1),
				    q_zero(c, i + 2), ysc, yz, 0, table);
		int64_t len = x->shape.dims[axis] * inner;
		const uint8_t *xp = x->data;
		uint8_t *yp = tensor_mut(y);
		for (int64_t o = 0; o < outer; o++)
			for (int64_t j = 0; j < len; j++)
				yp[o * ys->dims[axis] * inner + at + j] =
					table[xp[o * len + j]];
		at += len;
	}
	op_set_const(c, 0, y);
	return 0;
}

/* ---- QLinearGlobalAveragePool, QLinearAveragePool ---------------------- */

int infer_ms_qlinear_gap(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	bool last = attr_int(c->n, "channels_last", 0) != 0;
	if (!x || !op_need_in(c, 2) || !op_need_in(c, 4) ||
	    check_qparams(c, 0, 1, 2) < 0 || check_qparams(c, -1, 3, 4) < 0 ||
	    op_check_same_dtype(c, 4, 0) < 0 ||
	    op_check_rank(c, 0, 3, MAX_RANK) < 0)
		return -1;
	Shape y = x->shape;
	for (int32_t i = last ? 1 : 2; i < y.rank - (last ? 1 : 0); i++)
		y.dims[i] = 1;
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

int run_ms_qlinear_gap(OpCtx *c)
{
	if (!op_all_const(c))
		return 0;
	const Tensor *x = op_const_in(c, 0);
	const Shape *s = &x->shape;
	bool last = attr_int(c->n, "channels_last", 0) != 0;
	int64_t n = s->dims[0], ch = last ? s->dims[s->rank - 1] : s->dims[1];
	int64_t img = n && ch ? shape_numel(s) / (n * ch) : 0;
	Tensor *y = op_new_output(c, 0, x->dtype, &op_out(c, 0)->shape);
	if (!y)
		return -1;
	float xs = q_scale(c, 1), ys = q_scale(c, 3);
	int32_t xz = q_zero(c, 2), yz = q_zero(c, 4);
	float scale = xs / (ys * (float)img);
	for (int64_t b = 0; b < n; b++)
		for (int64_t k = 0; k < ch; k++) {
			int64_t sum = 0;
			for (int64_t p = 0; p < img; p++)
				sum += q_get(x, last ? (b * img + p) * ch + k
						     : (b * ch + k) * img + p) -
				       xz;
			q_put(y, b * ch + k,
			      q_store((float)sum * scale, yz, x->dtype));
		}
	op_set_const(c, 0, y);
	return 0;
}

/* x's shape channels-first: [N, C, spatial...] of [N, spatial..., C]. */
static Shape to_nchw(const Shape *x)
{
	Shape r = *x;
	if (x->rank < 3)
		return r;
	r.dims[1] = x->dims[x->rank - 1];
	for (int32_t i = 2; i < x->rank; i++)
		r.dims[i] = x->dims[i - 1];
	return r;
}

static Shape to_nhwc(const Shape *x)
{
	Shape r = *x;
	if (x->rank < 3)
		return r;
	r.dims[x->rank - 1] = x->dims[1];
	for (int32_t i = 2; i < x->rank; i++)
		r.dims[i - 1] = x->dims[i];
	return r;
}

int infer_ms_qlinear_avgpool(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	bool last = attr_int(c->n, "channels_last", 0) != 0;
	if (!x || check_qparams(c, 0, 1, 2) < 0 ||
	    check_qparams(c, -1, 3, 4) < 0 || op_check_same_dtype(c, 4, 0) < 0)
		return -1;
	Shape xs = last ? to_nchw(&x->shape) : x->shape, y;
	if (nn_pool_dims(c, &xs, &y) < 0)
		return -1;
	if (last)
		y = to_nhwc(&y);
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* The elements of a channels-last tensor of NCHW shape s in NCHW order
 * (back: the other way). */
static void nhwc_copy(const float *src, float *dst, const Shape *s, bool back)
{
	int64_t n = s->dims[0], ch = s->dims[1];
	int64_t img = n && ch ? shape_numel(s) / (n * ch) : 0;
	for (int64_t b = 0; b < n; b++)
		for (int64_t k = 0; k < ch; k++)
			for (int64_t p = 0; p < img; p++) {
				int64_t f = (b * ch + k) * img + p;
				int64_t l = (b * img + p) * ch + k;
				dst[back ? l : f] = src[back ? f : l];
			}
}

int run_ms_qlinear_avgpool(OpCtx *c)
{
	static const int all[] = { 0, 1, 2, 3, 4 };
	if (!known(c, all, 5))
		return 0;
	const Tensor *x = op_const_in(c, 0);
	const Shape *yshape = &op_out(c, 0)->shape;
	bool last = attr_int(c->n, "channels_last", 0) != 0;
	Shape xs = last ? to_nchw(&x->shape) : x->shape;
	Shape ys = last ? to_nchw(yshape) : *yshape;
	int64_t nx = shape_numel(&xs), ny = shape_numel(&ys);
	float *xf = op_scratch(c, 2 * (size_t)nx * sizeof(float));
	float *yf = op_scratch_zeroed(c, 2 * (size_t)ny * sizeof(float));
	Tensor *y = op_new_output(c, 0, x->dtype, yshape);
	if (!xf || !yf || !y)
		return -1;
	float s = q_scale(c, 1), ysc = q_scale(c, 3);
	int32_t z = q_zero(c, 2), yz = q_zero(c, 4);
	for (int64_t i = 0; i < nx; i++)
		xf[nx + i] = s * (float)(q_get(x, i) - z);
	if (last)
		nhwc_copy(xf + nx, xf, &xs, false);
	else
		memcpy(xf, xf + nx, (size_t)nx * sizeof(float));
	if (nn_avg_pool(c, &xs, &ys, xf, yf,
			attr_int(c->n, "count_include_pad", 0) != 0) < 0)
		return -1;
	if (last)
		nhwc_copy(yf, yf + ny, &ys, true);
	const float *r = last ? yf + ny : yf;
	for (int64_t i = 0; i < ny; i++)
		q_put(y, i, q_store(r[i] / ysc, yz, x->dtype));
	op_set_const(c, 0, y);
	return 0;
}

/* ---- QLinearSoftmax ----------------------------------------------------- */

/* Softmax's axis of node n (its opset attribute: 1 before 13, else -1,
 * when absent) normalized for rank r; its rows: the dims from the axis
 * on before opset 13, the axis alone since. */
static int qsm_axis(OpCtx *c, int32_t r, int32_t *axis, bool *coerce)
{
	int64_t opset = attr_int(c->n, "opset", -1);
	*coerce = opset < 13;
	return op_axis(c, "axis", attr_int(c->n, "axis", *coerce ? 1 : -1), r,
		       axis);
}

int infer_ms_qlinear_softmax(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int32_t axis;
	bool coerce;
	if (!x || check_qparams(c, 0, 1, 2) < 0 ||
	    check_qparams(c, -1, 3, 4) < 0 || op_check_same_dtype(c, 4, 0) < 0)
		return -1;
	if (!node_attr(c->n, "opset"))
		return op_error(c, "attribute opset (the Softmax opset whose "
				"axis rule applies) is required");
	if (x->shape.rank >= 0 && qsm_axis(c, x->shape.rank, &axis, &coerce) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

/* ONNX Runtime's table: entry (uint8) i - 128 for int8 or i for uint8
 * holds exp((i - 255 + shift) x_scale) as a float, shift keeping the
 * sum of d of them below FLT_MAX. */
void ms_qsoftmax_table(float x_scale, int64_t d, bool is_signed,
		       float *table)
{
	double shift = log((double)FLT_MAX / (double)(d ? d : 1)) - 5;
	shift = (shift > 0 ? shift : 0) / x_scale;
	for (int32_t i = 0; i < 256; i++) {
		double e = exp(((double)i - 255 + shift) * (double)x_scale);
		table[(uint8_t)(is_signed ? i - 128 : i)] = (float)e;
	}
}

/* One row x[0..d) of stride st into y: the table read at x - max + 255
 * (uint8) or x - max + 127 (int8), summed in float in order, each
 * entry times ys (floor(1 / y_scale)) over the sum, rounded, plus yz. */
void ms_qsoftmax_row(const uint8_t *x, uint8_t *y, int64_t d, int64_t st,
		     const float *table, bool is_signed, float ys, int32_t yz)
{
	int32_t m = is_signed ? -128 : 0;
	for (int64_t j = 0; j < d; j++) {
		int32_t v = is_signed ? (int8_t)x[j * st] : x[j * st];
		m = v > m ? v : m;
	}
	int32_t adj = is_signed ? 127 - m : 255 - m;
	float sum = 0;
	for (int64_t j = 0; j < d; j++) {
		int32_t v = is_signed ? (int8_t)x[j * st] : x[j * st];
		sum += table[(uint8_t)(v + adj)];
	}
	for (int64_t j = 0; j < d; j++) {
		int32_t v = is_signed ? (int8_t)x[j * st] : x[j * st];
		float q = sum == 0 ? 0 : rintf(table[(uint8_t)(v + adj)] * ys /
					       sum);
		int32_t r = (int32_t)q + yz;
		int32_t hi = is_signed ? 127 : 255;
		y[j * st] = (uint8_t)(r > hi ? hi : r);
	}
}

int run_ms_qlinear_softmax(OpCtx *c)
{
	static const int all[] = { 0, 1, 3, 4 };
	if (!known(c, all, 4))
		return 0;
	const Tensor *x = op_const_in(c, 0);
	const Shape *s = &x->shape;
	int32_t axis;
	bool coerce;
	if (qsm_axis(c, s->rank, &axis, &coerce) < 0)
		return -1;
	Tensor *y = op_new_output(c, 0, x->dtype, s);
	if (!y)
		return -1;
	int64_t outer = 1, d = 1, inner = 1;
	for (int32_t k = 0; k < s->rank; k++)
		*(k < axis ? &outer : k == axis || coerce ? &d : &inner) *=
			s->dims[k];
	bool is_signed = x->dtype == DT_INT8;
	float table[256];
	ms_qsoftmax_table(q_scale(c, 1), d, is_signed, table);
	float ys = floorf(1.0f / q_scale(c, 3));
	int32_t yz = q_zero(c, 4);
	const uint8_t *xp = x->data;
	uint8_t *yp = tensor_mut(y);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++)
			ms_qsoftmax_row(xp + o * d * inner + i,
					yp + o * d * inner + i, d, inner, table,
					is_signed, ys, yz);
	op_set_const(c, 0, y);
	return 0;
}

/* ---- QGemm -------------------------------------------------------------- */

/* B's scale (input si) and zero point (zi) one value or n values. */
static int check_per_column(OpCtx *c, int si, int zi, int64_t n)
{
	char s[128];
	for (int k = 0; k < 2; k++) {
		int i = k ? zi : si;
		Value *v = op_in(c, i);
		if (!v || v->shape.rank < 0 || !shape_is_static(&v->shape))
			continue;
		int64_t e = shape_numel(&v->shape);
		if (v->shape.rank > 1 || (e != 1 && n >= 0 && e != n))
			return op_error(c, "input %d (%s, '%s') has shape %s, "
					"expected one value or %lld (one per "
					"column of B)", i,
					k ? "b zero point" : "b scale", v->name,
					shape_str(&v->shape, s, sizeof(s)),
					(long long)n);
	}
	return 0;
}

int infer_ms_qgemm(OpCtx *c)
{
	Value *a = op_need_in(c, 0), *b = a ? op_need_in(c, 3) : NULL;
	Value *ysc = op_in(c, 7);
	if (!b || !op_need_in(c, 1) || !op_need_in(c, 2) || !op_need_in(c, 4) ||
	    !op_need_in(c, 5) || op_check_dtype(c, 0, DTS_Q8) < 0 ||
	    op_check_dtype(c, 3, DTS_Q8) < 0 ||
	    op_check_dtype(c, 1, DTS(DT_FLOAT)) < 0 ||
	    op_check_dtype(c, 4, DTS(DT_FLOAT)) < 0 ||
	    op_check_same_dtype(c, 2, 0) < 0 || op_check_same_dtype(c, 5, 3) < 0 ||
	    check_one(c, 1, "a scale") < 0 || check_one(c, 2, "a zero point") < 0 ||
	    op_check_dtype(c, 6, DTS(DT_INT32)) < 0 ||
	    op_check_rank(c, 0, 2, 2) < 0 || op_check_rank(c, 3, 2, 2) < 0 ||
	    (ysc && check_qparams(c, -1, 7, 8) < 0))
		return -1;
	if (op_in(c, 8) && !ysc)
		return op_error(c, "has y_zero_point without y_scale");
	bool ta = attr_int(c->n, "transA", 0) != 0;
	bool tb = attr_int(c->n, "transB", 0) != 0;
	Shape y = { .rank = 2 };
	y.dims[0] = shape_dim(&a->shape, ta ? 1 : 0);
	y.dims[1] = shape_dim(&b->shape, tb ? 0 : 1);
	int64_t ka = shape_dim(&a->shape, ta ? 0 : 1);
	int64_t kb = shape_dim(&b->shape, tb ? 1 : 0);
	if (ka >= 0 && kb >= 0 && ka != kb)
		return op_error(c, "inner dims differ: A gives %lld, B %lld",
				(long long)ka, (long long)kb);
	if (check_per_column(c, 4, 5, y.dims[1]) < 0 ||
	    op_broadcast_to(c, 6, &y) < 0)
		return -1;
	int dt = !ysc ? DT_FLOAT
	       : op_in(c, 8) ? op_in(c, 8)->dtype
			     : a->dtype;
	op_set_out(c, 0, dt, &y);
	return 0;
}

/* Element (i, j) of 2-D t, transposed if tr. */
static int32_t at2(const Tensor *t, bool tr, int64_t i, int64_t j)
{
	return q_get(t, tr ? j * t->shape.dims[1] + i
			   : i * t->shape.dims[1] + j);
}

int run_ms_qgemm(OpCtx *c)
{
	if (!op_all_const(c))
		return 0;
	const Tensor *a = op_const_in(c, 0), *b = op_const_in(c, 3);
	const Tensor *bs = op_const_in(c, 4), *bz = op_const_in(c, 5);
	const Tensor *cc = op_const_in(c, 6);
	const Shape *s = &op_out(c, 0)->shape;
	bool ta = attr_int(c->n, "transA", 0) != 0;
	bool tb = attr_int(c->n, "transB", 0) != 0;
	bool quant = op_in(c, 7) != NULL;
	int dt = op_out(c, 0)->dtype;
	int64_t m = s->dims[0], n = s->dims[1];
	int64_t k = a->shape.dims[ta ? 0 : 1];
	int64_t nbs = shape_numel(&bs->shape), nbz = shape_numel(&bz->shape);
	float alpha = attr_float(c->n, "alpha", 1.0f), as = q_scale(c, 1);
	float ys = quant ? q_scale(c, 7) : 1;
	int32_t az = q_zero(c, 2), yz = quant ? q_zero(c, 8) : 0;
	Tensor *y = op_new_output(c, 0, dt, s);
	if (!y)
		return -1;
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			int32_t zb = (int32_t)tensor_get_i64(bz, nbz > 1 ? j : 0);
			int64_t acc = 0;
			for (int64_t p = 0; p < k; p++)
				acc += (int64_t)(at2(a, ta, i, p) - az) *
				       (at2(b, tb, p, j) - zb);
			if (cc) {
				int64_t ci = 0, cr = cc->shape.rank;
				if (cr >= 1 && cc->shape.dims[cr - 1] != 1)
					ci += j;
				if (cr == 2 && cc->shape.dims[0] != 1)
					ci += i * cc->shape.dims[1];
				acc += tensor_get_i64(cc, ci);
			}
			float sc = alpha * as *
				   (float)tensor_get_f64(bs, nbs > 1 ? j : 0);
			if (quant)
				sc /= ys;
			float v = (float)(int32_t)acc * sc;
			if (quant)
				q_put(y, i * n + j, q_store(v, yz, dt));
			else
				((float *)tensor_mut(y))[i * n + j] = v;
		}
	op_set_const(c, 0, y);
	return 0;
}

/* ---- DynamicQuantizeMatMul, MatMulIntegerToFloat ------------------------ */

/* Float Y of the integer product ia x ib (inputs), B's scale (input bsi)
 * and zero point (bzi, may be absent) one value or per column, A's
 * scale asi (-1: a_scale given) and zero point azi, bias (input bi, may
 * be absent) per column. */
static int mm_to_float(OpCtx *c, const Tensor *a, const Tensor *az,
		       float a_scale, int bsi, int bzi, int bi)
{
	const Tensor *b = op_const_in(c, 1), *bs = op_const_in(c, bsi);
	const Tensor *bz = op_const_in(c, bzi), *bias = op_const_in(c, bi);
	const Shape *s = &op_out(c, 0)->shape;
	double *yd = int_matmul_of(c, a, az, b, bz);
	Tensor *y = yd ? op_new_output(c, 0, DT_FLOAT, s) : NULL;
	if (!y)
		return -1;
	int64_t n = s->rank ? s->dims[s->rank - 1] : 1;
	int64_t nbs = shape_numel(&bs->shape);
	float *yf = tensor_mut(y);
	for (int64_t i = 0, e = shape_numel(s); i < e; i++) {
		int64_t j = n ? i % n : 0;
		float sc = a_scale * (float)tensor_get_f64(bs, nbs > 1 ? j : 0);
		yf[i] = (float)(int32_t)yd[i] * sc;
		if (bias)
			yf[i] += (float)tensor_get_f64(bias, j);
	}
	op_set_const(c, 0, y);
	return 0;
}

/* The shared checks: B (input 1) 8-bit; its scale bsi and zero point bzi
 * and the bias bi one value or one per column (bias: per column). */
static int mm_float_checks(OpCtx *c, int bsi, int bzi, int bi, Shape *y)
{
	if (!op_need_in(c, 0) || !op_need_in(c, 1) || !op_need_in(c, bsi) ||
	    op_check_dtype(c, 1, DTS_Q8) < 0 ||
	    op_check_dtype(c, bsi, DTS(DT_FLOAT)) < 0 ||
	    op_check_same_dtype(c, bzi, 1) < 0 ||
	    op_check_dtype(c, bi, DTS(DT_FLOAT)) < 0 ||
	    matmul_shape(c, 0, 1, y) < 0)
		return -1;
	int64_t n = op_in(c, 1)->shape.rank >= 2 && y->rank >= 1
			    ? y->dims[y->rank - 1]
			    : 1;
	char s[128];
	Value *bias = op_in(c, bi);
	if (bias && bias->shape.rank >= 0 &&
	    (bias->shape.rank != 1 ||
	     (n >= 0 && bias->shape.dims[0] >= 0 && bias->shape.dims[0] != n)))
		return op_error(c, "input %d (bias, '%s') has shape %s, "
				"expected [%lld]", bi, bias->name,
				shape_str(&bias->shape, s, sizeof(s)),
				(long long)n);
	return check_per_column(c, bsi, bzi, n);
}

int infer_ms_dynquant_matmul(OpCtx *c)
{
	Shape y;
	if (op_check_dtype(c, 0, DTS(DT_FLOAT)) < 0 ||
	    mm_float_checks(c, 2, 3, 4, &y) < 0)
		return -1;
	op_set_out(c, 0, DT_FLOAT, &y);
	return 0;
}

int run_ms_dynquant_matmul(OpCtx *c)
{
	if (!op_all_const(c))
		return 0;
	const Tensor *a = op_const_in(c, 0);
	Shape one = shape_of(0, NULL);
	Tensor *q = op_new_tensor(c, DT_UINT8, &a->shape);
	Tensor *z = op_new_tensor(c, DT_UINT8, &one);
	float scale;
	if (!q || !z)
		return -1;
	dql_quantize(a->data, shape_numel(&a->shape), tensor_mut(q), &scale,
		     tensor_mut(z));
	return mm_to_float(c, q, z, scale, 2, 3, 4);
}

int infer_ms_matmul_int_to_float(OpCtx *c)
{
	Shape y;
	if (op_check_dtype(c, 0, DTS_Q8) < 0 || !op_need_in(c, 2) ||
	    op_check_dtype(c, 2, DTS(DT_FLOAT)) < 0 ||
	    check_one(c, 2, "a scale") < 0 || op_check_same_dtype(c, 4, 0) < 0 ||
	    check_one(c, 4, "a zero point") < 0 ||
	    mm_float_checks(c, 3, 5, 6, &y) < 0)
		return -1;
	op_set_out(c, 0, DT_FLOAT, &y);
	return 0;
}

int run_ms_matmul_int_to_float(OpCtx *c)
{
	if (!op_all_const(c))
		return 0;
	return mm_to_float(c, op_const_in(c, 0), op_const_in(c, 4),
			   q_scale(c, 2), 3, 5, 6);
}
