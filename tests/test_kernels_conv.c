/* tests/test_kernels_conv.c - the matrix product and convolution kernels
 * (compiler/ops/sgemm.c, conv.c, matmul.c and the matmul/Einsum/Det part of
 * misc.c) on what the ONNX backend tests leave out: sgemm's blocking
 * edges and transposes, grouped, dilated, strided and depthwise convs
 * against a naive loop, other dtypes, broadcasting, per-row/column
 * quantization parameters and an error path.  Kernels run by folding
 * constant inputs during inference. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/ops/opimpl.h"
#include "testutil.h"

/* Deterministic values in [-1, 1). */
static float val(int64_t i) { return (float)((i * 7919 + 13) % 200) / 100 - 1; }

static const Tensor *folded(Graph *g, ValId v)
{
	const Tensor *t = g->vals[v].konst;
	cr_assert_not_null(t, "'%s' was not folded", g->vals[v].name);
	return t;
}

/* v holds want[0..n) within tolerance tol (relative and absolute). */
static void expect_near(Graph *g, ValId v, const double *want, int64_t n,
			double tol)
{
	const Tensor *t = folded(g, v);
	cr_assert_eq(shape_numel(&t->shape), n, "'%s' has %lld values",
		     g->vals[v].name, (long long)shape_numel(&t->shape));
	for (int64_t i = 0; i < n; i++) {
		double got = tensor_get_f64(t, i);
		cr_assert(fabs(got - want[i]) <= tol * (1 + fabs(want[i])),
			  "'%s'[%lld] = %.9g, expected %.9g", g->vals[v].name,
			  (long long)i, got, want[i]);
	}
}

static void expect_ints(Graph *g, ValId v, int dt, const int64_t *want,
			int64_t n)
{
	const Tensor *t = folded(g, v);
	cr_assert_eq(t->dtype, dt);
	cr_assert_eq(shape_numel(&t->shape), n);
	for (int64_t i = 0; i < n; i++)
		cr_assert_eq(tensor_get_i64(t, i), want[i],
			     "'%s'[%lld] = %lld, expected %lld", g->vals[v].name,
			     (long long)i, (long long)tensor_get_i64(t, i),
			     (long long)want[i]);
}

/* A constant of shape s and dtype dt filled with val(i) (rounded). */
static ValId filled(Graph *g, const char *name, int dt, Shape s)
{
	ValId id = tu_weight(g, name, dt, s);
	Tensor *t = (Tensor *)g->vals[id].konst;
	for (int64_t i = 0; i < shape_numel(&s); i++)
		tensor_set_f64(t, i, val(i));
	return id;
}

static double at(Graph *g, ValId v, int64_t i)
{
	return tensor_get_f64(g->vals[v].konst, i);
}

/* ---- sgemm ----------------------------------------------------------------- */

/* sgemm against a double loop on sizes that cross every block edge
 * (KC = 256, partial MR and NR tiles), with a row stride past n. */
static void sgemm_case(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
		       float alpha, float beta)
{
	int64_t ldc = n + 3;
	float *a = malloc((size_t)(m * k) * sizeof(float));
	float *b = malloc((size_t)(k * n) * sizeof(float));
	float *c = malloc((size_t)(m * ldc) * sizeof(float));
	float *pack = malloc(sgemm_scratch(m, n, k));
	for (int64_t i = 0; i < m * k; i++)
		a[i] = val(i);
	for (int64_t i = 0; i < k * n; i++)
		b[i] = val(i + 5);
	for (int64_t i = 0; i < m * ldc; i++)
		c[i] = beta == 0 ? NAN : val(i + 9);
	float *c0 = malloc((size_t)(m * ldc) * sizeof(float));
	memcpy(c0, c, (size_t)(m * ldc) * sizeof(float));
	sgemm(ta, tb, m, n, k, alpha, a, ta ? m : k, b, tb ? k : n, beta, c,
	      ldc, pack);
	for (int64_t i = 0; i < m; i++) {
		for (int64_t j = 0; j < ldc; j++) {
			if (j >= n) {
				cr_assert(c[i * ldc + j] == c0[i * ldc + j] ||
					  isnan(c[i * ldc + j]));
				continue;
			}
			double s = 0;
			for (int64_t p = 0; p < k; p++)
				s += (double)a[ta ? p * m + i : i * k + p] *
				     b[tb ? j * k + p : p * n + j];
			s = alpha * s + (beta == 0 ? 0 : beta * c0[i * ldc + j]);
			cr_assert(fabs(c[i * ldc + j] - s) < 1e-4 * (1 + fabs(s)),
				  "ta %d tb %d: c[%lld][%lld] = %g, expected %g",
				  ta, tb, (long long)i, (long long)j,
				  c[i * ldc + j], s);
		}
	}
	free(a);
	free(b);
	free(c);
	free(c0);
	free(pack);
}

Test(kernels_conv, sgemm_block_edges_and_transposes)
{
	for (int t = 0; t < 4; t++)
		sgemm_case(t & 1, t & 2, 13, 37, 300, 1, 0);
	sgemm_case(false, true, 100, 20, 5, 0.5f, 2);
	sgemm_case(true, false, 7, 2100, 3, -1, 1);
	sgemm_case(false, false, 1, 1, 1, 1, 0);
}

/* ---- Conv ------------------------------------------------------------------- */

/* A naive 2-D Conv of x [n, c, h, w] and w [m, c/group, kh, kw] with
 * bias b (or none) into want. */
typedef struct Conv2 {
	int64_t n, c, h, w, m, kh, kw, group;
	int64_t sh, sw, dh, dw, pt, pl, oh, ow;
} Conv2;

static void conv2_ref(const Conv2 *p, Graph *g, ValId x, ValId w, ValId b,
		      double *want)
{
	int64_t cg = p->c / p->group, mg = p->m / p->group;
	for (int64_t n = 0; n < p->n; n++)
	for (int64_t m = 0; m < p->m; m++)
	for (int64_t oy = 0; oy < p->oh; oy++)
	for (int64_t ox = 0; ox < p->ow; ox++) {
		double s = b >= 0 ? at(g, b, m) : 0;
		for (int64_t ci = 0; ci < cg; ci++)
		for (int64_t ky = 0; ky < p->kh; ky++)
		for (int64_t kx = 0; kx < p->kw; kx++) {
			int64_t iy = oy * p->sh - p->pt + ky * p->dh;
			int64_t ix = ox * p->sw - p->pl + kx * p->dw;
			if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w)
				continue;
			int64_t c = m / mg * cg + ci;
			s += at(g, x, ((n * p->c + c) * p->h + iy) * p->w + ix) *
			     at(g, w, ((m * cg + ci) * p->kh + ky) * p->kw + kx);
		}
		*want++ = s;
	}
}

/* Builds Conv(x, w[, b]) with attributes, folds it and compares. */
static void conv2_case(const Conv2 *p, int dt, const int64_t *pads,
		       const char *auto_pad, bool bias)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = filled(g, "x", dt, SHAPE(p->n, p->c, p->h, p->w));
	ValId w = filled(g, "w", dt, SHAPE(p->m, p->c / p->group, p->kh, p->kw));
	ValId b = bias ? filled(g, "b", dt, SHAPE(p->m)) : -1;
	ValId ins[3] = { x, w, b };
	Node *nd = tu_node(g, "Conv", "conv", ins, bias ? 3 : 2, 1);
	tu_int(g, nd, "group", p->group);
	tu_ints(g, nd, "strides", INTS(p->sh, p->sw));
	tu_ints(g, nd, "dilations", INTS(p->dh, p->dw));
	if (pads)
		tu_ints(g, nd, "pads", pads, 4);
	if (auto_pad)
		tu_str(g, nd, "auto_pad", auto_pad);
	ValId y = tu_out(nd, 0);
	infer_ok(m);
	int64_t ny = p->n * p->m * p->oh * p->ow;
	double *want = malloc((size_t)ny * sizeof(double));
	conv2_ref(p, g, x, w, b, want);
	cr_assert_eq(tu_dtype(g, y), dt);
	expect_near(g, y, want, ny, dt == DT_FLOAT16 ? 4e-3 : 1e-5);
	free(want);
	model_free(m);
}

Test(kernels_conv, conv_grouped_dilated_strided_asymmetric_pads)
{
	Conv2 p = { .n = 2, .c = 4, .h = 9, .w = 11, .m = 6, .kh = 3, .kw = 2,
		    .group = 2, .sh = 2, .sw = 1, .dh = 2, .dw = 3, .pt = 2,
		    .pl = 0, .oh = 4, .ow = 9 };
	/* h: (9 + 2 + 1 - 5) / 2 + 1 = 4; w: (11 + 0 + 1 - 4) / 1 + 1 = 9 */
	conv2_case(&p, DT_FLOAT, (int64_t[]){ 2, 0, 1, 1 }, NULL, true);
	conv2_case(&p, DT_DOUBLE, (int64_t[]){ 2, 0, 1, 1 }, NULL, false);
}

Test(kernels_conv, conv_depthwise_with_multiplier_stride_and_pad)
{
	Conv2 p = { .n = 1, .c = 3, .h = 8, .w = 7, .m = 6, .kh = 3, .kw = 3,
		    .group = 3, .sh = 2, .sw = 2, .dh = 1, .dw = 2, .pt = 1,
		    .pl = 1, .oh = 4, .ow = 3 };
	/* h: (8 + 2 - 3) / 2 + 1 = 4; w: (7 + 2 - 5) / 2 + 1 = 3 */
	conv2_case(&p, DT_FLOAT, (int64_t[]){ 1, 1, 1, 1 }, NULL, true);
}

Test(kernels_conv, conv_pointwise_and_float16)
{
	Conv2 p = { .n = 2, .c = 5, .h = 3, .w = 4, .m = 7, .kh = 1, .kw = 1,
		    .group = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .oh = 3,
		    .ow = 4 };
	conv2_case(&p, DT_FLOAT, NULL, NULL, true);
	conv2_case(&p, DT_FLOAT16, NULL, NULL, true);
}

Test(kernels_conv, conv_same_upper_and_lower_pad_differently)
{
	/* in 6, stride 2, kernel 3: out 3 and a total pad of 2 * 2 + 3 - 6
	 * = 1, which goes after (SAME_UPPER) or before (SAME_LOWER) */
	Conv2 p = { .n = 1, .c = 2, .h = 6, .w = 6, .m = 2, .kh = 3, .kw = 3,
		    .group = 1, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .oh = 3,
		    .ow = 3 };
	conv2_case(&p, DT_FLOAT, NULL, "SAME_UPPER", false);
	p.pt = p.pl = 1;
	conv2_case(&p, DT_FLOAT, NULL, "SAME_LOWER", false);
}

Test(kernels_conv, conv_3d_matches_2d_with_unit_depth)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = filled(g, "x", DT_FLOAT, SHAPE(1, 2, 1, 5, 5));
	ValId w = filled(g, "w", DT_FLOAT, SHAPE(3, 2, 1, 3, 3));
	ValId x2 = filled(g, "x2", DT_FLOAT, SHAPE(1, 2, 5, 5));
	ValId w2 = filled(g, "w2", DT_FLOAT, SHAPE(3, 2, 3, 3));
	Node *n3 = tu_node(g, "Conv", "c3", IDS(x, w), 1);
	tu_ints(g, n3, "pads", INTS(0, 1, 1, 0, 1, 1));
	ValId y3 = tu_out(n3, 0);
	Node *n2 = tu_node(g, "Conv", "c2", IDS(x2, w2), 1);
	tu_ints(g, n2, "pads", INTS(1, 1, 1, 1));
	ValId y2 = tu_out(n2, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y3), "[1,3,1,5,5]");
	double want[75];
	for (int i = 0; i < 75; i++)
		want[i] = at(g, y2, i);
	expect_near(g, y3, want, 75, 1e-6);
	model_free(m);
}

/* ---- ConvTranspose ------------------------------------------------------------ */

/* ConvTranspose 1-D, groups 2, stride 3, dilation 2, pads 1/2 and bias
 * against the scatter definition. */
Test(kernels_conv, conv_transpose_grouped_dilated)
{
	int64_t n = 2, c = 4, l = 5, mg = 3, k = 3, s = 3, d = 2, pb = 1;
	int64_t out = s * (l - 1) + (k - 1) * d + 1 - 1 - 2;
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = filled(g, "x", DT_FLOAT, SHAPE(n, c, l));
	ValId w = filled(g, "w", DT_FLOAT, SHAPE(c, mg, k));
	ValId b = filled(g, "b", DT_FLOAT, SHAPE(2 * mg));
	Node *nd = tu_node(g, "ConvTranspose", "ct", IDS(x, w, b), 1);
	tu_int(g, nd, "group", 2);
	tu_ints(g, nd, "strides", INTS(s));
	tu_ints(g, nd, "dilations", INTS(d));
	tu_ints(g, nd, "pads", INTS(pb, 2));
	ValId y = tu_out(nd, 0);
	infer_ok(m);
	double want[2 * 6 * 14];
	cr_assert_eq(out, 14);
	cr_assert_str_eq(tu_shape(g, y), "[2,6,14]");
	for (int64_t i = 0; i < n * 2 * mg * out; i++)
		want[i] = at(g, b, i / out % (2 * mg));
	for (int64_t bn = 0; bn < n; bn++)
		for (int64_t ci = 0; ci < c; ci++)
			for (int64_t i = 0; i < l; i++)
				for (int64_t mm = 0; mm < mg; mm++)
					for (int64_t kk = 0; kk < k; kk++) {
						int64_t o = i * s - pb + kk * d;
						int64_t mo = ci / 2 * mg + mm;
						if (o < 0 || o >= out)
							continue;
						want[(bn * 2 * mg + mo) * out + o] +=
							at(g, x, (bn * c + ci) * l + i) *
							at(g, w, (ci * mg + mm) * k + kk);
					}
	expect_near(g, y, want, n * 2 * mg * out, 1e-5);
	model_free(m);
}

/* ---- Gemm, MatMul --------------------------------------------------------------- */

Test(kernels_conv, gemm_column_bias_and_double)
{
	for (int dt = DT_FLOAT; dt <= DT_DOUBLE; dt += DT_DOUBLE - DT_FLOAT) {
		Model *m = tu_model(13);
		Graph *g = m->graph;
		ValId a = filled(g, "a", dt, SHAPE(3, 2));
		ValId b = filled(g, "b", dt, SHAPE(4, 3));
		ValId c = filled(g, "c", dt, SHAPE(2, 1));
		Node *nd = tu_node(g, "Gemm", "gemm", IDS(a, b, c), 1);
		tu_int(g, nd, "transA", 1);
		tu_int(g, nd, "transB", 1);
		tu_float(g, nd, "alpha", 0.5f);
		tu_float(g, nd, "beta", -2);
		ValId y = tu_out(nd, 0);
		infer_ok(m);
		double want[8];
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 4; j++) {
				double s = 0;
				for (int p = 0; p < 3; p++)
					s += at(g, a, p * 2 + i) * at(g, b, j * 3 + p);
				want[i * 4 + j] = 0.5 * s - 2 * at(g, c, i);
			}
		expect_near(g, y, want, 8, 1e-6);
		model_free(m);
	}
}

Test(kernels_conv, matmul_broadcast_batches_and_vectors)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId a = filled(g, "a", DT_FLOAT, SHAPE(2, 1, 3, 4));
	ValId b = filled(g, "b", DT_FLOAT, SHAPE(3, 4, 5));
	ValId v = filled(g, "v", DT_FLOAT, SHAPE(4));
	ValId y = tu_out(tu_node(g, "MatMul", "mm", IDS(a, b), 1), 0);
	ValId yv = tu_out(tu_node(g, "MatMul", "mv", IDS(v, b), 1), 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[2,3,3,5]");
	cr_assert_str_eq(tu_shape(g, yv), "[3,5]");
	double want[90], wv[15];
	for (int i = 0; i < 90; i++) {
		int j = i % 5, r = i / 5 % 3, bb = i / 15 % 3, ba = i / 45;
		want[i] = 0;
		for (int p = 0; p < 4; p++)
			want[i] += at(g, a, (ba * 3 + r) * 4 + p) *
				   at(g, b, (bb * 4 + p) * 5 + j);
	}
	for (int i = 0; i < 15; i++) {
		wv[i] = 0;
		for (int p = 0; p < 4; p++)
			wv[i] += at(g, v, p) * at(g, b, (i / 5 * 4 + p) * 5 + i % 5);
	}
	expect_near(g, y, want, 90, 1e-6);
	expect_near(g, yv, wv, 15, 1e-6);
	model_free(m);
}

Test(kernels_conv, matmul_integers_wrap)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId a = tu_weight_data(g, "a", DT_INT32, SHAPE(1, 2),
				 (int32_t[]){ 65536, 3 });
	ValId b = tu_weight_data(g, "b", DT_INT32, SHAPE(2, 1),
				 (int32_t[]){ 65536, -5 });
	ValId u = tu_weight_data(g, "u", DT_UINT64, SHAPE(2),
				 (uint64_t[]){ UINT64_MAX, 2 });
	ValId y = tu_out(tu_node(g, "MatMul", "mi", IDS(a, b), 1), 0);
	ValId yu = tu_out(tu_node(g, "MatMul", "mu", IDS(u, u), 1), 0);
	infer_ok(m);
	/* 2^32 wraps to 0 in int32 */
	expect_ints(g, y, DT_INT32, (int64_t[]){ -15 }, 1);
	/* (2^64 - 1)^2 + 4 = 5 mod 2^64 */
	expect_ints(g, yu, DT_UINT64, (int64_t[]){ 5 }, 1);
	model_free(m);
}

/* ---- quantized products ------------------------------------------------------------ */

Test(kernels_conv, matmul_integer_per_row_and_column_zero_points)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId a = tu_weight_data(g, "a", DT_INT8, SHAPE(2, 2),
				 (int8_t[]){ -128, 127, 5, 6 });
	ValId b = tu_weight_data(g, "b", DT_UINT8, SHAPE(2, 2),
				 (uint8_t[]){ 255, 0, 10, 20 });
	ValId az = tu_weight_data(g, "az", DT_INT8, SHAPE(2),
				  (int8_t[]){ 1, -1 });
	ValId bz = tu_weight_data(g, "bz", DT_UINT8, SHAPE(2),
				  (uint8_t[]){ 5, 10 });
	ValId y = tu_out(tu_node(g, "MatMulInteger", "mi", IDS(a, b, az, bz), 1),
			 0);
	infer_ok(m);
	/* rows of A - az: [-129, 126], [6, 7]; B - bz: [250, -10], [5, 10] */
	expect_ints(g, y, DT_INT32,
		    (int64_t[]){ -129 * 250 + 126 * 5, 1290 + 1260,
				 6 * 250 + 35, -60 + 70 },
		    4);
	model_free(m);
}

Test(kernels_conv, qlinear_matmul_saturates_and_rounds_half_even)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId a = tu_weight_data(g, "a", DT_INT8, SHAPE(1, 3),
				 (int8_t[]){ 100, 1, 3 });
	ValId b = tu_weight_data(g, "b", DT_INT8, SHAPE(3, 3),
				 (int8_t[]){ 100, 0, 0, 0, 1, 0, 0, 0, 1 });
	ValId s1 = tu_weight_data(g, "s1", DT_FLOAT, SCALAR, (float[]){ 1 });
	ValId sh = tu_weight_data(g, "sh", DT_FLOAT, SCALAR, (float[]){ 2 });
	ValId z = tu_weight_data(g, "z", DT_INT8, SCALAR, (int8_t[]){ 0 });
	ValId y = tu_out(tu_node(g, "QLinearMatMul", "q",
				 IDS(a, s1, z, b, s1, z, sh, z), 1),
			 0);
	infer_ok(m);
	/* 10000 / 2 saturates; 1 / 2 = 0.5 -> 0; 3 / 2 = 1.5 -> 2 */
	expect_ints(g, y, DT_INT8, (int64_t[]){ 127, 0, 2 }, 3);
	model_free(m);
}

Test(kernels_conv, qlinear_conv_rejects_a_bad_weight_scale_count)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_weight(g, "x", DT_UINT8, SHAPE(1, 1, 3, 3));
	ValId w = tu_weight(g, "w", DT_UINT8, SHAPE(2, 1, 1, 1));
	ValId s = tu_weight_data(g, "s", DT_FLOAT, SCALAR, (float[]){ 1 });
	ValId ws = tu_weight_data(g, "ws", DT_FLOAT, SHAPE(3),
				  (float[]){ 1, 1, 1 });
	ValId z = tu_weight(g, "z", DT_UINT8, SCALAR);
	tu_node(g, "QLinearConv", "qc", IDS(x, s, z, w, ws, z, s, z), 1);
	infer_fails_with(m, "w_scale has 3 values, expected 1 or 2");
	model_free(m);
}

/* ---- Einsum, Det --------------------------------------------------------------------- */

Test(kernels_conv, einsum_implicit_ellipsis_and_trace)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId a = filled(g, "a", DT_DOUBLE, SHAPE(2, 1, 2, 3));
	ValId b = filled(g, "b", DT_DOUBLE, SHAPE(3, 3, 2));
	ValId t = tu_weight_data(g, "t", DT_INT64, SHAPE(2, 2),
				 (int64_t[]){ 4, 9, 9, -6 });
	Node *n1 = tu_node(g, "Einsum", "e1", IDS(a, b), 1);
	tu_str(g, n1, "equation", "...ij,...jk");
	ValId y = tu_out(n1, 0);
	Node *n2 = tu_node(g, "Einsum", "e2", IDS(t), 1);
	tu_str(g, n2, "equation", "ii->");
	ValId tr = tu_out(n2, 0);
	infer_ok(m);
	/* implicit output: "..." then i, k (j is summed) */
	cr_assert_str_eq(tu_shape(g, y), "[2,3,2,2]");
	double want[24];
	for (int e = 0; e < 24; e++) {
		int k = e % 2, i = e / 2 % 2, bb = e / 4 % 3, ba = e / 12;
		want[e] = 0;
		for (int j = 0; j < 3; j++)
			want[e] += at(g, a, (ba * 2 + i) * 3 + j) *
				   at(g, b, (bb * 3 + j) * 2 + k);
	}
	expect_near(g, y, want, 24, 1e-12);
	expect_ints(g, tr, DT_INT64, (int64_t[]){ -2 }, 1);
	model_free(m);
}

Test(kernels_conv, det_pivots_and_singular)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_weight_data(g, "x", DT_FLOAT, SHAPE(2, 3, 3),
				 (float[]){ 0, 2, 1, 3, 0, 4, 1, 5, 0,
					    1, 2, 3, 2, 4, 6, 7, 8, 9 });
	ValId y = tu_out(tu_node(g, "Det", "det", IDS(x), 1), 0);
	infer_ok(m);
	/* 0(0-20) - 2(0-4) + 1(15-0) = 23; rows 1, 2 dependent: 0 */
	expect_near(g, y, (double[]){ 23, 0 }, 2, 1e-6);
	model_free(m);
}

/* Two fp32 inputs run as a batched sgemm: attention-like scores with a
 * broadcast batch, and labels summed from one input only. */
Test(kernels_conv, einsum_float_as_matrix_product)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId q = filled(g, "q", DT_FLOAT, SHAPE(2, 3, 4));
	ValId k = filled(g, "k", DT_FLOAT, SHAPE(1, 5, 4));
	ValId a = filled(g, "a", DT_FLOAT, SHAPE(3, 2));
	ValId v = filled(g, "v", DT_FLOAT, SHAPE(4));
	Node *n1 = tu_node(g, "Einsum", "e1", IDS(q, k), 1);
	tu_str(g, n1, "equation", "bid,bjd->bji");
	ValId y = tu_out(n1, 0);
	Node *n2 = tu_node(g, "Einsum", "e2", IDS(a, v), 1);
	tu_str(g, n2, "equation", "ij,k->i");
	ValId y2 = tu_out(n2, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[2,5,3]");
	double want[30], w2[3], vs = 0;
	for (int e = 0; e < 30; e++) {
		int i = e % 3, j = e / 3 % 5, b = e / 15;
		want[e] = 0;
		for (int d = 0; d < 4; d++)
			want[e] += at(g, q, (b * 3 + i) * 4 + d) *
				   at(g, k, j * 4 + d);
	}
	for (int d = 0; d < 4; d++)
		vs += at(g, v, d);
	for (int i = 0; i < 3; i++)
		w2[i] = (at(g, a, 2 * i) + at(g, a, 2 * i + 1)) * vs;
	expect_near(g, y, want, 30, 1e-6);
	expect_near(g, y2, w2, 3, 1e-6);
	model_free(m);
}
