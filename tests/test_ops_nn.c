/* tests/test_ops_nn.c - the nn family's hooks (compiler/ops/{nn,norm,
 * reduce,resize,rnn,misc}.c): shapes, dtypes, data dependence, folds and
 * errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "compiler/ops/opimpl.h"
#include "testutil.h"

#define BIG (INT64_C(1) << 62)

static bool dep(const Graph *g, ValId v)
{
	return (g->vals[v].flags & VF_DATA_DEP) != 0;
}

/* A 1-D float weight. */
static ValId weight_floats(Graph *g, const char *name, const float *v,
			   int32_t n)
{
	int64_t d = n;
	return tu_weight_data(g, name, DT_FLOAT, shape_of(1, &d), v);
}

/* A scalar int64 weight. */
static ValId weight_scalar(Graph *g, const char *name, int64_t v)
{
	return tu_weight_data(g, name, DT_INT64, SCALAR, &v);
}

static int64_t ival(const Graph *g, ValId v, int64_t i)
{
	cr_assert_not_null(g->vals[v].konst, "'%s' was not folded",
			   g->vals[v].name);
	return tensor_get_i64(g->vals[v].konst, i);
}

static double fval(const Graph *g, ValId v, int64_t i)
{
	cr_assert_not_null(g->vals[v].konst, "'%s' was not folded",
			   g->vals[v].name);
	return tensor_get_f64(g->vals[v].konst, i);
}

/* ---- ConvTranspose ------------------------------------------------------ */

/* ConvTranspose of x [1, 1, 3, 3] with w [1, 2, 3, 3] (or the given
 * shapes) and the attributes set by the caller through the node. */
static Node *convt(Graph *g, Shape xs, Shape ws)
{
	ValId x = tu_input(g, "x", DT_FLOAT, xs);
	ValId w = tu_weight(g, "w", DT_FLOAT, ws);
	return tu_node(g, "ConvTranspose", "ct", IDS(x, w), 1);
}

Test(ops_nn, convtranspose_explicit_pads)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	Node *n = convt(g, SHAPE(1, 1, 3, 3), SHAPE(1, 2, 3, 3));
	ValId y = tu_out(n, 0);
	infer_ok(m);
	/* 1 * (3 - 1) + 3 = 5 */
	cr_assert_str_eq(tu_shape(g, y), "[1,2,5,5]");
	model_free(m);

	m = tu_model(11);
	g = m->graph;
	n = convt(g, SHAPE(2, 4, 5, 7), SHAPE(4, 3, 3, 2));
	tu_ints(g, n, "strides", INTS(3, 2));
	tu_ints(g, n, "pads", INTS(1, 0, 2, 1));
	tu_ints(g, n, "dilations", INTS(2, 1));
	tu_int(g, n, "group", 2);
	y = tu_out(n, 0);
	infer_ok(m);
	/* H: 3 * 4 + (3 - 1) * 2 + 1 - 1 - 2 = 14; W: 2 * 6 + 2 - 0 - 1 = 13;
	 * channels 3 * group 2 */
	cr_assert_str_eq(tu_shape(g, y), "[2,6,14,13]");
	model_free(m);
}

Test(ops_nn, convtranspose_output_padding)
{
	/* test_convtranspose_pad: strides 3, 2 and output_padding 1, 1 */
	Model *m = tu_model(11);
	Graph *g = m->graph;
	Node *n = convt(g, SHAPE(1, 1, 3, 3), SHAPE(1, 2, 3, 3));
	tu_ints(g, n, "strides", INTS(3, 2));
	tu_ints(g, n, "output_padding", INTS(1, 1));
	ValId y = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[1,2,10,8]");
	model_free(m);

	/* output_padding must be below the stride or the dilation */
	m = tu_model(11);
	g = m->graph;
	n = convt(g, SHAPE(1, 1, 3, 3), SHAPE(1, 2, 3, 3));
	tu_ints(g, n, "strides", INTS(2, 2));
	tu_ints(g, n, "output_padding", INTS(2, 0));
	infer_fails(m, "node 'ct' (ConvTranspose): output_padding[0] is 2, "
		       "expected less than the stride (2) or the dilation (1)");
	model_free(m);
}

Test(ops_nn, convtranspose_output_shape)
{
	/* output_shape wins over the formula (pads are derived from it) */
	Model *m = tu_model(11);
	Graph *g = m->graph;
	Node *n = convt(g, SHAPE(1, 1, 3, 3), SHAPE(1, 2, 3, 3));
	tu_ints(g, n, "strides", INTS(3, 2));
	tu_ints(g, n, "output_shape", INTS(10, 8));
	ValId y = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[1,2,10,8]");
	model_free(m);

	/* ... also for unknown input dims, and given with N and C */
	m = tu_model(11);
	g = m->graph;
	n = convt(g, SHAPE(-1, 1, -1, -1), SHAPE(1, 2, 3, 3));
	tu_ints(g, n, "output_shape", INTS(1, 2, 11, 9));
	y = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[-1,2,11,9]");
	model_free(m);

	m = tu_model(11);
	g = m->graph;
	n = convt(g, SHAPE(1, 1, 3, 3), SHAPE(1, 2, 3, 3));
	tu_ints(g, n, "output_shape", INTS(10, 8, 1));
	infer_fails(m, "node 'ct' (ConvTranspose): output_shape has 3 values, "
		       "expected 2 (or 4)");
	model_free(m);
}

Test(ops_nn, convtranspose_auto_pad)
{
	static const char *const modes[] = { "SAME_UPPER", "SAME_LOWER" };
	for (int i = 0; i < 2; i++) {
		/* SAME_*: in * stride, whatever the kernel */
		Model *m = tu_model(11);
		Graph *g = m->graph;
		Node *n = convt(g, SHAPE(1, 1, 3, 5), SHAPE(1, 2, 3, 4));
		tu_str(g, n, "auto_pad", modes[i]);
		tu_ints(g, n, "strides", INTS(2, 3));
		ValId y = tu_out(n, 0);
		infer_ok(m);
		cr_assert_str_eq(tu_shape(g, y), "[1,2,6,15]", "%s", modes[i]);
		model_free(m);
	}
	/* VALID: no padding, the plain formula */
	Model *m = tu_model(11);
	Graph *g = m->graph;
	Node *n = convt(g, SHAPE(1, 1, 3, 5), SHAPE(1, 2, 3, 4));
	tu_str(g, n, "auto_pad", "VALID");
	tu_ints(g, n, "strides", INTS(2, 3));
	ValId y = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[1,2,7,16]");
	model_free(m);

	m = tu_model(11);
	g = m->graph;
	n = convt(g, SHAPE(1, 1, 3, 5), SHAPE(1, 2, 3, 4));
	tu_str(g, n, "auto_pad", "SAME_UPPER");
	tu_ints(g, n, "pads", INTS(1, 1, 1, 1));
	infer_fails(m, "node 'ct' (ConvTranspose): pads cannot be used with "
		       "auto_pad=SAME_UPPER");
	model_free(m);
}

Test(ops_nn, convtranspose_1d_3d_and_unknowns)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	Node *n = convt(g, SHAPE(1, 1, 3), SHAPE(1, 2, 3));
	ValId y1 = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y1), "[1,2,5]");
	model_free(m);

	m = tu_model(11);
	g = m->graph;
	n = convt(g, SHAPE(1, 1, 3, 4, 5), SHAPE(1, 2, 3, 3, 3));
	tu_ints(g, n, "strides", INTS(2, 1, 3));
	ValId y3 = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y3), "[1,2,7,6,15]");
	model_free(m);

	/* unknown spatial dims stay unknown; the kernel from kernel_shape */
	m = tu_model(11);
	g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(-1, 4, -1, 8));
	ValId w = tu_input(g, "w", DT_FLOAT, SHAPE(4, -1, -1, -1));
	n = tu_node(g, "ConvTranspose", "ct", IDS(x, w), 1);
	tu_ints(g, n, "kernel_shape", INTS(2, 2));
	tu_ints(g, n, "strides", INTS(2, 2));
	ValId y = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[-1,-1,-1,16]");
	cr_assert_not(dep(g, y));
	model_free(m);
}

Test(ops_nn, convtranspose_errors)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	convt(g, SHAPE(1, 3, 3, 3), SHAPE(2, 2, 3, 3));
	infer_fails(m, "node 'ct' (ConvTranspose): input 'x' has 3 channels, "
		       "but weight 'w' has 2 (its dim 0)");
	model_free(m);

	m = tu_model(11);
	g = m->graph;
	Node *n = convt(g, SHAPE(1, 1, 3, 3), SHAPE(1, 2, 3, 3));
	tu_ints(g, n, "pads", INTS(4, 0, 4, 0));
	infer_fails(m, "node 'ct' (ConvTranspose): spatial axis 0: pads 4+4 "
		       "exceed the full output size 5");
	model_free(m);

	m = tu_model(11);
	g = m->graph;
	n = convt(g, SHAPE(1, 1, BIG, 3), SHAPE(1, 2, 3, 3));
	tu_ints(g, n, "strides", INTS(4, 1));
	infer_fails(m, "node 'ct' (ConvTranspose): spatial axis 0: input size "
		       "4611686018427387904 gives no valid output size (zero "
		       "input or int64 overflow)");
	model_free(m);

	m = tu_model(11);
	g = m->graph;
	n = convt(g, SHAPE(1, 1, BIG, 3), SHAPE(1, 2, 3, 3));
	tu_str(g, n, "auto_pad", "SAME_LOWER");
	tu_ints(g, n, "strides", INTS(4, 1));
	infer_fails(m, "node 'ct' (ConvTranspose): dims 4611686018427387904 x "
		       "4 overflow int64");
	model_free(m);
}

/* ---- quantized convolution and matmul ----------------------------------- */

Test(ops_nn, quantized_conv_and_matmul)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_UINT8, SHAPE(1, 1, 5, 5));
	ValId w = tu_weight(g, "w", DT_INT8, SHAPE(2, 1, 3, 3));
	ValId xz = tu_weight(g, "xz", DT_UINT8, SCALAR);
	Node *n = tu_node(g, "ConvInteger", "ci", IDS(x, w, xz), 1);
	tu_ints(g, n, "pads", INTS(1, 1, 1, 1));
	ValId ci = tu_out(n, 0);
	ValId fs = tu_weight(g, "fs", DT_FLOAT, SCALAR);
	ValId wz = tu_weight(g, "wz", DT_INT8, SCALAR);
	ValId yz = tu_weight(g, "yz", DT_INT8, SCALAR);
	ValId b = tu_weight(g, "b", DT_INT32, SHAPE(2));
	ValId qc = tu_out(tu_node(g, "QLinearConv", "qc",
				  IDS(x, fs, xz, w, fs, wz, fs, yz, b), 1),
			  0);
	ValId a = tu_input(g, "a", DT_UINT8, SHAPE(2, 3, 4));
	ValId bm = tu_input(g, "bm", DT_UINT8, SHAPE(4, 5));
	ValId mi = tu_out(tu_node(g, "MatMulInteger", "mi", IDS(a, bm), 1), 0);
	ValId qm = tu_out(tu_node(g, "QLinearMatMul", "qm",
				  IDS(a, fs, xz, bm, fs, xz, fs, yz), 1),
			  0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, ci), "[1,2,5,5]");
	cr_assert_eq(tu_dtype(g, ci), DT_INT32);
	cr_assert_str_eq(tu_shape(g, qc), "[1,2,3,3]");
	cr_assert_eq(tu_dtype(g, qc), DT_INT8);
	cr_assert_str_eq(tu_shape(g, mi), "[2,3,5]");
	cr_assert_eq(tu_dtype(g, mi), DT_INT32);
	cr_assert_str_eq(tu_shape(g, qm), "[2,3,5]");
	cr_assert_eq(tu_dtype(g, qm), DT_INT8);
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	a = tu_input(g, "a", DT_UINT8, SHAPE(3, 4));
	bm = tu_input(g, "bm", DT_UINT8, SHAPE(3, 5));
	tu_node(g, "MatMulInteger", "mi", IDS(a, bm), 1);
	infer_fails(m, "node 'mi' (MatMulInteger): inner dims differ: input 0 "
		       "('a', [3,4]) has 4, input 1 ('bm', [3,5]) has 3");
	model_free(m);
}

Test(ops_nn, quantize_dequantize)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 3, 4));
	ValId s = tu_weight(g, "s", DT_FLOAT, SHAPE(3));
	ValId z = tu_weight(g, "z", DT_INT8, SHAPE(3));
	ValId s1 = tu_weight(g, "s1", DT_FLOAT, SCALAR);
	ValId q = tu_out(tu_node(g, "QuantizeLinear", "q", IDS(x, s, z), 1), 0);
	ValId q8 = tu_out(tu_node(g, "QuantizeLinear", "q8", IDS(x, s1), 1), 0);
	ValId d = tu_out(tu_node(g, "DequantizeLinear", "d", IDS(q, s, z), 1),
			 0);
	Node *n = tu_node(g, "DynamicQuantizeLinear", "dq", IDS(x), 3);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, q), "[1,3,4]");
	cr_assert_eq(tu_dtype(g, q), DT_INT8);
	cr_assert_eq(tu_dtype(g, q8), DT_UINT8);
	cr_assert_str_eq(tu_shape(g, d), "[1,3,4]");
	cr_assert_eq(tu_dtype(g, d), DT_FLOAT);
	cr_assert_str_eq(tu_shape(g, tu_out(n, 0)), "[1,3,4]");
	cr_assert_eq(tu_dtype(g, tu_out(n, 0)), DT_UINT8);
	cr_assert_str_eq(tu_shape(g, tu_out(n, 1)), "[]");
	cr_assert_eq(tu_dtype(g, tu_out(n, 1)), DT_FLOAT);
	cr_assert_str_eq(tu_shape(g, tu_out(n, 2)), "[]");
	cr_assert_eq(tu_dtype(g, tu_out(n, 2)), DT_UINT8);
	model_free(m);

	/* per-axis scale of the wrong length for axis 2 */
	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 3, 4));
	s = tu_weight(g, "s", DT_FLOAT, SHAPE(3));
	n = tu_node(g, "QuantizeLinear", "q", IDS(x, s), 1);
	tu_int(g, n, "axis", 2);
	infer_fails(m, "node 'q' (QuantizeLinear): scale 's' has 3 values, but "
		       "axis 2 of input 'x' has 4");
	model_free(m);
}

/* The backend tests' values (test_quantizelinear*, test_dequantizelinear*)
 * folded: ties to even, saturation, per-axis parameters. */
Test(ops_nn, quantize_dequantize_fold)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	static const float xv[] = { 0, 2, 3, 1000, -254, -1000, 5, -5 };
	static const float two = 2;
	static const uint8_t z128 = 128;
	ValId x = tu_weight_data(g, "x", DT_FLOAT, SHAPE(8), xv);
	ValId s = tu_weight_data(g, "s", DT_FLOAT, SCALAR, &two);
	ValId z = tu_weight_data(g, "z", DT_UINT8, SCALAR, &z128);
	ValId q = tu_out(tu_node(g, "QuantizeLinear", "q", IDS(x, s, z), 1), 0);
	static const uint8_t dv[] = { 0, 3, 128, 255 };
	ValId dx = tu_weight_data(g, "dx", DT_UINT8, SHAPE(4), dv);
	ValId d = tu_out(tu_node(g, "DequantizeLinear", "d", IDS(dx, s, z), 1),
			 0);
	/* per axis 1 of [1, 3, 3, 2] */
	static const float ax[] = { -162, 10,  -100, 232,  -20,	 -50,
				    -76,  0,   0,    252,  32,	 -44,
				    245,  -485, -960, -270, -375, -470 };
	static const float sc[] = { 2, 4, 5 };
	static const uint8_t zp[] = { 84, 24, 196 };
	ValId axx = tu_weight_data(g, "axx", DT_FLOAT, SHAPE(1, 3, 3, 2), ax);
	ValId axs = tu_weight_data(g, "axs", DT_FLOAT, SHAPE(3), sc);
	ValId axz = tu_weight_data(g, "axz", DT_UINT8, SHAPE(3), zp);
	ValId aq = tu_out(tu_node(g, "QuantizeLinear", "aq", IDS(axx, axs, axz),
				  1),
			  0);
	ValId ad = tu_out(tu_node(g, "DequantizeLinear", "ad",
				  IDS(aq, axs, axz), 1),
			  0);
	/* int8 without a zero point: saturates at 127 / -128 */
	static const int8_t i8 = 0;
	ValId z8 = tu_weight_data(g, "z8", DT_INT8, SCALAR, &i8);
	ValId q8 = tu_out(tu_node(g, "QuantizeLinear", "q8", IDS(x, s, z8), 1),
			  0);
	/* an int32 x far from its zero point is left to run time */
	static const int32_t big[] = { 1 << 25, 1 };
	ValId bx = tu_weight_data(g, "bx", DT_INT32, SHAPE(2), big);
	ValId bd = tu_out(tu_node(g, "DequantizeLinear", "bd", IDS(bx, s), 1),
			  0);
	infer_ok(m);
	static const int64_t qx[] = { 128, 129, 130, 255, 1, 0, 130, 126 };
	for (int i = 0; i < 8; i++)
		cr_assert_eq(ival(g, q, i), qx[i], "q[%d]", i);
	static const double dxv[] = { -256, -250, 0, 254 };
	for (int i = 0; i < 4; i++)
		cr_assert_eq(fval(g, d, i), dxv[i], "d[%d]", i);
	static const int64_t aqx[] = { 3,  89, 34,  200, 74, 59, 5,   24,  24,
				       87, 32, 13,  245, 99, 4,  142, 121, 102 };
	for (int i = 0; i < 18; i++) {
		cr_assert_eq(ival(g, aq, i), aqx[i], "aq[%d]", i);
		cr_assert_eq(fval(g, ad, i), ax[i], "ad[%d]", i);
	}
	cr_assert_eq(ival(g, q8, 3), 127);
	cr_assert_eq(ival(g, q8, 5), -128);
	cr_assert_eq(ival(g, q8, 6), 2); /* 2.5 -> 2 */
	cr_assert_eq(ival(g, q8, 7), -2);
	cr_assert_eq(g->vals[q8].konst->dtype, DT_INT8);
	cr_assert_str_eq(tu_shape(g, bd), "[2]");
	cr_assert_null(g->vals[bd].konst);
	model_free(m);
}

/* ---- pools -------------------------------------------------------------- */

Test(ops_nn, lppool_and_global_lppool)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 3, 32, 31));
	Node *n = tu_node(g, "LpPool", "lp", IDS(x), 1);
	tu_ints(g, n, "kernel_shape", INTS(2, 2));
	tu_ints(g, n, "strides", INTS(2, 2));
	ValId y = tu_out(n, 0);
	n = tu_node(g, "LpPool", "lps", IDS(x), 1);
	tu_ints(g, n, "kernel_shape", INTS(3, 3));
	tu_ints(g, n, "strides", INTS(2, 2));
	tu_str(g, n, "auto_pad", "SAME_UPPER");
	ValId ys = tu_out(n, 0);
	ValId gl = tu_out(tu_node(g, "GlobalLpPool", "gl", IDS(x), 1), 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[1,3,16,15]");
	cr_assert_str_eq(tu_shape(g, ys), "[1,3,16,16]");
	cr_assert_str_eq(tu_shape(g, gl), "[1,3,1,1]");
	model_free(m);
}

Test(ops_nn, roi_pools)
{
	Model *m = tu_model(16);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 8, 20, 20));
	ValId r5 = tu_input(g, "r5", DT_FLOAT, SHAPE(7, 5));
	ValId r4 = tu_input(g, "r4", DT_FLOAT, SHAPE(-1, 4));
	ValId bi = tu_input(g, "bi", DT_INT64, SHAPE(7));
	Node *n = tu_node(g, "MaxRoiPool", "mrp", IDS(x, r5), 1);
	tu_ints(g, n, "pooled_shape", INTS(3, 4));
	ValId mrp = tu_out(n, 0);
	n = tu_node(g, "RoiAlign", "ra", IDS(x, r4, bi), 1);
	tu_int(g, n, "output_height", 5);
	tu_int(g, n, "output_width", 6);
	ValId ra = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, mrp), "[7,8,3,4]");
	cr_assert_str_eq(tu_shape(g, ra), "[7,8,5,6]");
	model_free(m);

	m = tu_model(16);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 8, 20, 20));
	r4 = tu_input(g, "r4", DT_FLOAT, SHAPE(7, 4));
	bi = tu_input(g, "bi", DT_INT64, SHAPE(6));
	tu_node(g, "RoiAlign", "ra", IDS(x, r4, bi), 1);
	infer_fails(m, "node 'ra' (RoiAlign): batch_indices has 6 values, but "
		       "rois has 7 rows");
	model_free(m);
}

Test(ops_nn, maxunpool)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 1, 2, 2));
	ValId i = tu_input(g, "i", DT_INT64, SHAPE(1, 1, 2, 2));
	Node *n = tu_node(g, "MaxUnpool", "mu", IDS(x, i), 1);
	tu_ints(g, n, "kernel_shape", INTS(2, 2));
	tu_ints(g, n, "strides", INTS(2, 2));
	ValId plain = tu_out(n, 0);
	ValId os = tu_weight_ints(g, "os", INTS(1, 1, 5, 5));
	n = tu_node(g, "MaxUnpool", "mu2", IDS(x, i, os), 1);
	tu_ints(g, n, "kernel_shape", INTS(2, 2));
	tu_ints(g, n, "strides", INTS(2, 2));
	ValId given = tu_out(n, 0);
	ValId osr = tu_input(g, "osr", DT_INT64, SHAPE(4));
	n = tu_node(g, "MaxUnpool", "mu3", IDS(x, i, osr), 1);
	tu_ints(g, n, "kernel_shape", INTS(2, 2));
	ValId rt = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, plain), "[1,1,4,4]");
	cr_assert_str_eq(tu_shape(g, given), "[1,1,5,5]");
	cr_assert_str_eq(tu_shape(g, rt), "[-1,-1,-1,-1]");
	cr_assert(dep(g, rt));
	cr_assert_not(dep(g, plain));
	model_free(m);
}

/* ---- normalization ------------------------------------------------------ */

Test(ops_nn, layer_normalization_stash_outputs)
{
	Model *m = tu_model(17);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT16, SHAPE(2, 3, 4, 5));
	ValId s = tu_weight(g, "s", DT_FLOAT16, SHAPE(4, 5));
	Node *n = tu_node(g, "LayerNormalization", "ln", IDS(x, s, s), 3);
	tu_int(g, n, "axis", -2);
	Node *d = tu_node(g, "LayerNormalization", "ln2", IDS(x, s), 3);
	tu_int(g, d, "axis", 2);
	tu_int(g, d, "stash_type", DT_DOUBLE);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, tu_out(n, 0)), "[2,3,4,5]");
	cr_assert_eq(tu_dtype(g, tu_out(n, 0)), DT_FLOAT16);
	cr_assert_str_eq(tu_shape(g, tu_out(n, 1)), "[2,3,1,1]");
	cr_assert_str_eq(tu_shape(g, tu_out(n, 2)), "[2,3,1,1]");
	cr_assert_eq(tu_dtype(g, tu_out(n, 1)), DT_FLOAT);
	cr_assert_eq(tu_dtype(g, tu_out(d, 2)), DT_DOUBLE);
	model_free(m);

	m = tu_model(17);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 4, 5));
	s = tu_weight(g, "s", DT_FLOAT, SHAPE(3, 5));
	tu_node(g, "LayerNormalization", "ln", IDS(x, s), 1);
	infer_fails(m, "node 'ln' (LayerNormalization): input 1 ('s') has "
		       "shape [3,5], which does not broadcast to [5]");
	model_free(m);
}

Test(ops_nn, other_normalizations)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 4, 5));
	ValId c3 = tu_weight(g, "c3", DT_FLOAT, SHAPE(3));
	ValId in = tu_out(tu_node(g, "InstanceNormalization", "in",
				  IDS(x, c3, c3), 1),
			  0);
	Node *n = tu_node(g, "LRN", "lrn", IDS(x), 1);
	tu_int(g, n, "size", 3);
	ValId lrn = tu_out(n, 0);
	ValId mvn = tu_out(tu_node(g, "MeanVarianceNormalization", "mvn",
				   IDS(x), 1),
			   0);
	n = tu_node(g, "LpNormalization", "lpn", IDS(x), 1);
	tu_int(g, n, "p", 1);
	ValId lpn = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, in), "[2,3,4,5]");
	cr_assert_str_eq(tu_shape(g, lrn), "[2,3,4,5]");
	cr_assert_str_eq(tu_shape(g, mvn), "[2,3,4,5]");
	cr_assert_str_eq(tu_shape(g, lpn), "[2,3,4,5]");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 4, 5));
	ValId c4 = tu_weight(g, "c4", DT_FLOAT, SHAPE(4));
	tu_node(g, "InstanceNormalization", "in", IDS(x, c4, c4), 1);
	infer_fails(m, "node 'in' (InstanceNormalization): input 1 ('c4') has "
		       "shape [4], expected [3] (channels)");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3));
	tu_node(g, "MeanVarianceNormalization", "mvn", IDS(x), 1);
	infer_fails(m, "node 'mvn' (MeanVarianceNormalization): axes value 2 "
		       "is out of range for rank 2 (expected -2..1)");
	model_free(m);
}

/* ---- reductions --------------------------------------------------------- */

Test(ops_nn, reduce_axes_attribute_and_keepdims)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 4, 5));
	Node *n = tu_node(g, "ReduceMean", "keep", IDS(x), 1);
	tu_ints(g, n, "axes", INTS(1, -1));
	ValId keep = tu_out(n, 0);
	n = tu_node(g, "ReduceL2", "drop", IDS(x), 1);
	tu_ints(g, n, "axes", INTS(-1, 1));
	tu_int(g, n, "keepdims", 0);
	ValId drop = tu_out(n, 0);
	ValId all = tu_out(tu_node(g, "ReduceMax", "all", IDS(x), 1), 0);
	n = tu_node(g, "ReduceLogSumExp", "all0", IDS(x), 1);
	tu_int(g, n, "keepdims", 0);
	ValId all0 = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, keep), "[2,1,4,1]");
	cr_assert_str_eq(tu_shape(g, drop), "[2,4]");
	cr_assert_str_eq(tu_shape(g, all), "[1,1,1,1]");
	cr_assert_str_eq(tu_shape(g, all0), "[]");
	model_free(m);

	m = tu_model(11);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3));
	n = tu_node(g, "ReduceSum", "rs", IDS(x), 1);
	tu_ints(g, n, "axes", INTS(1, -1));
	infer_fails(m, "node 'rs' (ReduceSum): axis 1 is listed twice in axes");
	model_free(m);
}

Test(ops_nn, reduce_axes_input)
{
	/* ReduceSum takes axes as input from opset 13, the others from 18 */
	Model *m = tu_model(18);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 4));
	ValId ax = tu_weight_ints(g, "ax", INTS(0, 2));
	ValId empty = tu_weight_data(g, "empty", DT_INT64, SHAPE(0), NULL);
	ValId rt = tu_input(g, "rt", DT_INT64, SHAPE(2));
	ValId rt0 = tu_input(g, "rt0", DT_INT64, SHAPE(0));
	ValId k = tu_out(tu_node(g, "ReduceProd", "k", IDS(x, ax), 1), 0);
	Node *n = tu_node(g, "ReduceMin", "d", IDS(x, ax), 1);
	tu_int(g, n, "keepdims", 0);
	ValId d = tu_out(n, 0);
	n = tu_node(g, "ReduceSumSquare", "noop", IDS(x, empty), 1);
	tu_int(g, n, "noop_with_empty_axes", 1);
	ValId noop = tu_out(n, 0);
	n = tu_node(g, "ReduceL1", "noaxes", IDS(x), 1);
	tu_int(g, n, "noop_with_empty_axes", 1);
	ValId noaxes = tu_out(n, 0);
	n = tu_node(g, "ReduceL1", "emptyall", IDS(x, empty), 1);
	tu_int(g, n, "keepdims", 0);
	ValId emptyall = tu_out(n, 0);
	ValId rk = tu_out(tu_node(g, "ReduceMean", "rk", IDS(x, rt), 1), 0);
	n = tu_node(g, "ReduceMean", "rd", IDS(x, rt), 1);
	tu_int(g, n, "keepdims", 0);
	ValId rd = tu_out(n, 0);
	n = tu_node(g, "ReduceMean", "rnoop", IDS(x, rt0), 1);
	tu_int(g, n, "noop_with_empty_axes", 1);
	ValId rnoop = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, k), "[1,3,1]");
	cr_assert_str_eq(tu_shape(g, d), "[3]");
	cr_assert_str_eq(tu_shape(g, noop), "[2,3,4]");
	cr_assert_str_eq(tu_shape(g, noaxes), "[2,3,4]");
	cr_assert_str_eq(tu_shape(g, emptyall), "[]");
	/* runtime axes: which dims shrink depends on the data */
	cr_assert_str_eq(tu_shape(g, rk), "[-1,-1,-1]");
	cr_assert(dep(g, rk));
	cr_assert_str_eq(tu_shape(g, rd), "[-1]");
	cr_assert(dep(g, rd));
	/* ... unless it is known to be empty */
	cr_assert_str_eq(tu_shape(g, rnoop), "[2,3,4]");
	cr_assert_not(dep(g, rnoop));
	cr_assert_not(dep(g, k));
	model_free(m);

	/* opset 13: ReduceSum takes the input, ReduceMax the attribute */
	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_INT32, SHAPE(2, 3, 4));
	ax = tu_weight_ints(g, "ax", INTS(-2));
	ValId s = tu_out(tu_node(g, "ReduceSum", "s", IDS(x, ax), 1), 0);
	n = tu_node(g, "ReduceMax", "mx", IDS(x), 1);
	tu_ints(g, n, "axes", INTS(0));
	ValId mx = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, s), "[2,1,4]");
	cr_assert_eq(tu_dtype(g, s), DT_INT32);
	cr_assert_str_eq(tu_shape(g, mx), "[1,3,4]");
	model_free(m);

	m = tu_model(18);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3));
	ax = tu_weight_ints(g, "ax", INTS(2));
	tu_node(g, "ReduceMax", "mx", IDS(x, ax), 1);
	infer_fails(m, "node 'mx' (ReduceMax): axes value 2 is out of range "
		    "for rank 2 (expected -2..1)");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3));
	n = tu_node(g, "ReduceSum", "rs", IDS(x), 1);
	tu_ints(g, n, "axes", INTS(0));
	infer_fails(m, "node 'rs' (ReduceSum): axes is an input since opset 13, "
		       "not an attribute");
	model_free(m);
}

Test(ops_nn, reduce_folds)
{
	Model *m = tu_model(18);
	Graph *g = m->graph;
	static const int32_t d[] = { 1, -2, 3, 4, 5, -6 }; /* [2, 3] */
	ValId x = tu_weight_data(g, "x", DT_INT32, SHAPE(2, 3), d);
	ValId a1 = tu_weight_ints(g, "a1", INTS(1));
	ValId a0 = tu_weight_ints(g, "a0", INTS(0));
	ValId sum = tu_out(tu_node(g, "ReduceSum", "sum", IDS(x, a1), 1), 0);
	ValId prod = tu_out(tu_node(g, "ReduceProd", "prod", IDS(x, a0), 1), 0);
	Node *n = tu_node(g, "ReduceMax", "max", IDS(x), 1);
	tu_int(g, n, "keepdims", 0);
	ValId max = tu_out(n, 0);
	ValId min = tu_out(tu_node(g, "ReduceMin", "min", IDS(x, a1), 1), 0);
	ValId l1 = tu_out(tu_node(g, "ReduceL1", "l1", IDS(x, a1), 1), 0);
	ValId sq = tu_out(tu_node(g, "ReduceSumSquare", "sq", IDS(x, a0), 1), 0);
	ValId mean = tu_out(tu_node(g, "ReduceMean", "mean", IDS(x, a1), 1), 0);
	static const float f[] = { 1, 2, 3, 4 };
	ValId xf = tu_weight_data(g, "xf", DT_FLOAT, SHAPE(4), f);
	ValId l2 = tu_out(tu_node(g, "ReduceL2", "l2", IDS(xf), 1), 0);
	ValId lse = tu_out(tu_node(g, "ReduceLogSumExp", "lse", IDS(xf), 1), 0);
	ValId ls = tu_out(tu_node(g, "ReduceLogSum", "ls", IDS(xf), 1), 0);
	ValId fm = tu_out(tu_node(g, "ReduceMean", "fm", IDS(xf), 1), 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, sum), "[2,1]");
	cr_assert_eq(ival(g, sum, 0), 2);
	cr_assert_eq(ival(g, sum, 1), 3);
	cr_assert_str_eq(tu_shape(g, prod), "[1,3]");
	cr_assert_eq(ival(g, prod, 0), 4);
	cr_assert_eq(ival(g, prod, 1), -10);
	cr_assert_eq(ival(g, prod, 2), -18);
	cr_assert_str_eq(tu_shape(g, max), "[]");
	cr_assert_eq(ival(g, max, 0), 5);
	cr_assert_eq(ival(g, min, 0), -2);
	cr_assert_eq(ival(g, min, 1), -6);
	cr_assert_eq(ival(g, l1, 0), 6);
	cr_assert_eq(ival(g, l1, 1), 15);
	cr_assert_eq(ival(g, sq, 0), 17);
	cr_assert_eq(ival(g, sq, 2), 45);
	cr_assert_eq(ival(g, mean, 0), 0); /* 2 / 3 truncated */
	cr_assert_eq(ival(g, mean, 1), 1);
	cr_assert_eq(g->vals[mean].konst->dtype, DT_INT32);
	cr_assert_float_eq(fval(g, l2, 0), sqrtf(30.0f), 1e-6);
	cr_assert_float_eq(fval(g, lse, 0),
			   (float)log(exp(1) + exp(2) + exp(3) + exp(4)), 1e-6);
	cr_assert_float_eq(fval(g, ls, 0), (float)log(10), 1e-6);
	cr_assert_float_eq(fval(g, fm, 0), 2.5, 1e-9);
	model_free(m);
}

/* Shape -> ReduceProd folds to the element count: shape arithmetic. */
Test(ops_nn, reduce_folds_shape_arithmetic)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 7));
	ValId s = tu_out(tu_node(g, "Shape", "shape", IDS(x), 1), 0);
	Node *n = tu_node(g, "ReduceProd", "numel", IDS(s), 1);
	tu_int(g, n, "keepdims", 0);
	ValId numel = tu_out(n, 0);
	ValId big = tu_out(tu_node(g, "ArgMax", "big", IDS(s), 1), 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, numel), "[]");
	cr_assert_eq(ival(g, numel, 0), 42);
	cr_assert_str_eq(tu_shape(g, big), "[1]");
	cr_assert_eq(ival(g, big, 0), 2);
	model_free(m);
}

Test(ops_nn, argmax_argmin)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	/* [2, 3]: ties at 5 in row 1 */
	static const int64_t d[] = { 1, 9, 3, 5, 0, 5 };
	ValId x = tu_weight_data(g, "x", DT_INT64, SHAPE(2, 3), d);
	Node *n = tu_node(g, "ArgMax", "first", IDS(x), 1);
	tu_int(g, n, "axis", -1);
	ValId first = tu_out(n, 0);
	n = tu_node(g, "ArgMax", "last", IDS(x), 1);
	tu_int(g, n, "axis", 1);
	tu_int(g, n, "keepdims", 0);
	tu_int(g, n, "select_last_index", 1);
	ValId last = tu_out(n, 0);
	ValId amin = tu_out(tu_node(g, "ArgMin", "amin", IDS(x), 1), 0);
	ValId xf = tu_input(g, "xf", DT_FLOAT, SHAPE(4, -1, 6));
	n = tu_node(g, "ArgMin", "rt", IDS(xf), 1);
	tu_int(g, n, "axis", 2);
	tu_int(g, n, "keepdims", 0);
	ValId rt = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, first), "[2,1]");
	cr_assert_eq(tu_dtype(g, first), DT_INT64);
	cr_assert_eq(ival(g, first, 0), 1);
	cr_assert_eq(ival(g, first, 1), 0);
	cr_assert_str_eq(tu_shape(g, last), "[2]");
	cr_assert_eq(ival(g, last, 0), 1);
	cr_assert_eq(ival(g, last, 1), 2);
	cr_assert_str_eq(tu_shape(g, amin), "[1,3]");
	cr_assert_eq(ival(g, amin, 0), 0);
	cr_assert_eq(ival(g, amin, 1), 1);
	cr_assert_eq(ival(g, amin, 2), 0);
	cr_assert_str_eq(tu_shape(g, rt), "[4,-1]");
	cr_assert_null(g->vals[rt].konst);
	model_free(m);
}

Test(ops_nn, topk_shapes_and_runtime_k)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(3, 10, 4));
	ValId k = weight_scalar(g, "k", 3);
	ValId k1 = tu_weight_ints(g, "k1", INTS(4));
	ValId kr = tu_input(g, "kr", DT_INT64, SHAPE(1));
	Node *n = tu_node(g, "TopK", "t", IDS(x, k), 2);
	tu_int(g, n, "axis", 1);
	ValId tv = tu_out(n, 0), ti = tu_out(n, 1);
	ValId t2 = tu_out(tu_node(g, "TopK", "t2", IDS(x, k1), 2), 0);
	n = tu_node(g, "TopK", "rt", IDS(x, kr), 2);
	tu_int(g, n, "axis", -2);
	ValId rv = tu_out(n, 0), ri = tu_out(n, 1);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, tv), "[3,3,4]");
	cr_assert_eq(tu_dtype(g, tv), DT_FLOAT);
	cr_assert_str_eq(tu_shape(g, ti), "[3,3,4]");
	cr_assert_eq(tu_dtype(g, ti), DT_INT64);
	cr_assert_not(dep(g, tv));
	cr_assert_str_eq(tu_shape(g, t2), "[3,10,4]"); /* axis -1, k = 4 */
	cr_assert_str_eq(tu_shape(g, rv), "[3,-1,4]");
	cr_assert_str_eq(tu_shape(g, ri), "[3,-1,4]");
	cr_assert(dep(g, rv));
	cr_assert(dep(g, ri));
	model_free(m);
}

Test(ops_nn, topk_errors_and_opset1)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(3, 4));
	ValId k = tu_weight_ints(g, "k", INTS(5));
	tu_node(g, "TopK", "t", IDS(x, k), 2);
	infer_fails(m, "node 't' (TopK): k is 5, but axis 1 of input 'x' has "
		       "only 4 elements");
	model_free(m);

	m = tu_model(1);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(3, 4));
	Node *n = tu_node(g, "TopK", "t", IDS(x), 2);
	tu_int(g, n, "k", 2);
	tu_int(g, n, "axis", 0);
	ValId v = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, v), "[2,4]");
	model_free(m);
}

Test(ops_nn, topk_folds)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	/* [2, 4] */
	static const int32_t d[] = { 3, 1, 3, 2, -1, 7, 0, 7 };
	ValId x = tu_weight_data(g, "x", DT_INT32, SHAPE(2, 4), d);
	ValId k = tu_weight_ints(g, "k", INTS(2));
	Node *n = tu_node(g, "TopK", "large", IDS(x, k), 2);
	ValId lv = tu_out(n, 0), li = tu_out(n, 1);
	n = tu_node(g, "TopK", "small", IDS(x, k), 2);
	tu_int(g, n, "largest", 0);
	ValId sv = tu_out(n, 0), si = tu_out(n, 1);
	n = tu_node(g, "TopK", "cols", IDS(x, k), 2);
	tu_int(g, n, "axis", 0);
	ValId cv = tu_out(n, 0), ci = tu_out(n, 1);
	infer_ok(m);
	/* ties go to the lower index */
	static const int64_t lvx[] = { 3, 3, 7, 7 }, lix[] = { 0, 2, 1, 3 };
	static const int64_t svx[] = { 1, 2, -1, 0 }, six[] = { 1, 3, 0, 2 };
	static const int64_t cvx[] = { 3, 7, 3, 7 }, cix[] = { 0, 1, 0, 1 };
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(ival(g, lv, i), lvx[i], "large value %d", i);
		cr_assert_eq(ival(g, li, i), lix[i], "large index %d", i);
		cr_assert_eq(ival(g, sv, i), svx[i], "small value %d", i);
		cr_assert_eq(ival(g, si, i), six[i], "small index %d", i);
		cr_assert_eq(ival(g, cv, i), cvx[i], "col value %d", i);
		cr_assert_eq(ival(g, ci, i), cix[i], "col index %d", i);
	}
	cr_assert_eq(g->vals[lv].konst->dtype, DT_INT32);
	cr_assert_str_eq(tu_shape(g, cv), "[2,4]");
	model_free(m);
}

/* ---- Resize and Upsample ------------------------------------------------ */

/* Resize (opset >= 11) of x by scales or sizes weights (NULL: omitted). */
static ValId resize(Graph *g, const char *name, ValId x, ValId scales,
		    ValId sizes)
{
	return tu_out(tu_node(g, "Resize", name, IDS(x, -1, scales, sizes), 1),
		      0);
}

Test(ops_nn, resize_scales)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 3, 5, 7));
	static const float up[] = { 1, 1, 2, 1.5f }, down[] = { 1, 1, 0.6f, 0.3f };
	ValId u = resize(g, "up", x, weight_floats(g, "u", up, 4), -1);
	ValId d = resize(g, "down", x, weight_floats(g, "d", down, 4), -1);
	ValId xu = tu_input(g, "xu", DT_UINT8, SHAPE(1, 3, -1, 7));
	ValId du = resize(g, "du", xu, weight_floats(g, "d2", down, 4), -1);
	ValId sr = tu_input(g, "sr", DT_FLOAT, SHAPE(4));
	ValId rt = resize(g, "rt", x, sr, -1);
	infer_ok(m);
	/* floor(5 * 2), floor(7 * 1.5); floor(5 * 0.6f), floor(7 * 0.3f) */
	cr_assert_str_eq(tu_shape(g, u), "[1,3,10,10]");
	cr_assert_str_eq(tu_shape(g, d), "[1,3,3,2]");
	cr_assert_str_eq(tu_shape(g, du), "[1,3,-1,2]");
	cr_assert_eq(tu_dtype(g, du), DT_UINT8);
	cr_assert_str_eq(tu_shape(g, rt), "[-1,-1,-1,-1]");
	cr_assert(dep(g, rt));
	cr_assert_not(dep(g, d));
	model_free(m);
}

Test(ops_nn, resize_sizes_and_empty_scales)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 3, 5, 7));
	ValId roi = weight_floats(g, "roi", NULL, 0);
	ValId empty = weight_floats(g, "empty", NULL, 0);
	ValId sz = tu_weight_ints(g, "sz", INTS(1, 3, 9, 2));
	/* opset 11: scales is required; an empty one means "use sizes" */
	ValId y = tu_out(tu_node(g, "Resize", "r", IDS(x, roi, empty, sz), 1),
			 0);
	ValId szr = tu_input(g, "szr", DT_INT64, SHAPE(4));
	ValId yr = tu_out(tu_node(g, "Resize", "rr", IDS(x, roi, empty, szr),
				  1),
			  0);
	ValId xu = tu_input(g, "xu", DT_FLOAT, UNKNOWN);
	ValId yu = tu_out(tu_node(g, "Resize", "ru", IDS(xu, roi, empty, sz),
				  1),
			  0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[1,3,9,2]");
	cr_assert_str_eq(tu_shape(g, yr), "[-1,-1,-1,-1]");
	cr_assert(dep(g, yr));
	/* sizes give the rank and every dim, even of an unknown X */
	cr_assert_str_eq(tu_shape(g, yu), "[1,3,9,2]");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 3, 5, 7));
	static const float sc[] = { 1, 1, 2, 2 };
	sz = tu_weight_ints(g, "sz", INTS(1, 3, 9, 2));
	resize(g, "r", x, weight_floats(g, "sc", sc, 4), sz);
	infer_fails(m, "node 'r' (Resize): both scales and sizes are given; "
		       "expected one of them");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 3, 5, 7));
	sz = tu_weight_ints(g, "sz", INTS(9, 2));
	resize(g, "r", x, -1, sz);
	infer_fails(m, "node 'r' (Resize): sizes has 2 values, expected 4 (the "
		       "rank of X)");
	model_free(m);
}

Test(ops_nn, resize_axes_and_aspect_ratio)
{
	Model *m = tu_model(18);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 3, 20, 40));
	ValId sz = tu_weight_ints(g, "sz", INTS(10, 30));
	Node *n = tu_node(g, "Resize", "stretch", IDS(x, -1, -1, sz), 1);
	tu_ints(g, n, "axes", INTS(2, -1));
	ValId st = tu_out(n, 0);
	n = tu_node(g, "Resize", "nl", IDS(x, -1, -1, sz), 1);
	tu_ints(g, n, "axes", INTS(2, 3));
	tu_str(g, n, "keep_aspect_ratio_policy", "not_larger");
	ValId nl = tu_out(n, 0);
	n = tu_node(g, "Resize", "ns", IDS(x, -1, -1, sz), 1);
	tu_ints(g, n, "axes", INTS(2, 3));
	tu_str(g, n, "keep_aspect_ratio_policy", "not_smaller");
	ValId ns = tu_out(n, 0);
	static const float sc[] = { 0.5f, 3 };
	n = tu_node(g, "Resize", "sca", IDS(x, -1, weight_floats(g, "sc", sc, 2)),
		    1);
	tu_ints(g, n, "axes", INTS(3, 1));
	ValId sca = tu_out(n, 0);
	/* not_larger with 5 / 3 and 7 / 4: scale 5/3, 4 * 5/3 + 0.5 = 7.17 */
	ValId x2 = tu_input(g, "x2", DT_FLOAT, SHAPE(3, 4));
	ValId sz2 = tu_weight_ints(g, "sz2", INTS(5, 7));
	n = tu_node(g, "Resize", "nl2", IDS(x2, -1, -1, sz2), 1);
	tu_str(g, n, "keep_aspect_ratio_policy", "not_larger");
	ValId nl2 = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, st), "[1,3,10,30]");
	/* scale min(10/20, 30/40) = 0.5 -> 10, 20 */
	cr_assert_str_eq(tu_shape(g, nl), "[1,3,10,20]");
	/* scale max(0.5, 0.75) = 0.75 -> 15, 30 */
	cr_assert_str_eq(tu_shape(g, ns), "[1,3,15,30]");
	cr_assert_str_eq(tu_shape(g, sca), "[1,9,20,20]");
	cr_assert_str_eq(tu_shape(g, nl2), "[5,7]");
	model_free(m);

	m = tu_model(18);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 3, 20, 40));
	sz = tu_weight_ints(g, "sz", INTS(10, 30));
	n = tu_node(g, "Resize", "r", IDS(x, -1, -1, sz), 1);
	tu_str(g, n, "keep_aspect_ratio_policy", "fit");
	infer_fails(m, "node 'r' (Resize): keep_aspect_ratio_policy is 'fit', "
		       "expected stretch, not_larger or not_smaller");
	model_free(m);
}

Test(ops_nn, resize_opset10_and_upsample)
{
	Model *m = tu_model(10);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 1, 2, 2));
	static const float sc[] = { 1, 1, 2, 3 };
	ValId s = weight_floats(g, "s", sc, 4);
	ValId r = tu_out(tu_node(g, "Resize", "r", IDS(x, s), 1), 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, r), "[1,1,4,6]");
	model_free(m);

	m = tu_model(9);
	g = m->graph;
	x = tu_input(g, "x", DT_INT32, SHAPE(1, 1, 2, 2));
	s = weight_floats(g, "s", sc, 4);
	ValId u = tu_out(tu_node(g, "Upsample", "u", IDS(x, s), 1), 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, u), "[1,1,4,6]");
	cr_assert_eq(tu_dtype(g, u), DT_INT32);
	model_free(m);

	m = tu_model(7);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 1, 3, 2));
	Node *n = tu_node(g, "Upsample", "u", IDS(x), 1);
	tu_floats(g, n, "scales", (const float[]){ 1, 1, 2, 2.5f }, 4);
	u = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, u), "[1,1,6,5]");
	model_free(m);

	m = tu_model(7);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 1, 3, 2));
	n = tu_node(g, "Upsample", "u", IDS(x), 1);
	tu_floats(g, n, "scales", (const float[]){ 1, 1, 2 }, 3);
	infer_fails(m, "node 'u' (Upsample): scales has 3 values, expected 4 "
		       "(the rank of X)");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 1, BIG, 2));
	static const float four[] = { 1, 1, 4, 1 };
	resize(g, "r", x, weight_floats(g, "s", four, 4), -1);
	infer_fails(m, "node 'r' (Resize): axis 2: 4611686018427387904 x scale "
		       "4 overflows int64");
	model_free(m);
}

Test(ops_nn, grid_sample)
{
	Model *m = tu_model(16);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 10, 12));
	ValId gr = tu_input(g, "g", DT_FLOAT, SHAPE(2, 5, 7, 2));
	ValId y = tu_out(tu_node(g, "GridSample", "gs", IDS(x, gr), 1), 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[2,3,5,7]");
	model_free(m);

	m = tu_model(16);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 10, 12));
	gr = tu_input(g, "g", DT_FLOAT, SHAPE(2, 5, 7, 3));
	tu_node(g, "GridSample", "gs", IDS(x, gr), 1);
	infer_fails_with(m, "node 'gs' (GridSample): grid 'g' has shape "
			    "[2,5,7,3]; expected [N, ..., 2]");
	model_free(m);
}

/* ---- recurrent ---------------------------------------------------------- */

/* An LSTM over X with the given layout, bidirectional, hidden 16, input
 * 8, all three outputs. */
static Node *lstm(Graph *g, Shape xs, int64_t layout)
{
	ValId x = tu_input(g, "x", DT_FLOAT, xs);
	ValId w = tu_weight(g, "w", DT_FLOAT, SHAPE(2, 64, 8));
	ValId r = tu_weight(g, "r", DT_FLOAT, SHAPE(2, 64, 16));
	ValId b = tu_weight(g, "b", DT_FLOAT, SHAPE(2, 128));
	Node *n = tu_node(g, "LSTM", "lstm", IDS(x, w, r, b), 3);
	tu_str(g, n, "direction", "bidirectional");
	tu_int(g, n, "hidden_size", 16);
	if (layout >= 0)
		tu_int(g, n, "layout", layout);
	return n;
}

Test(ops_nn, lstm_bidirectional_layouts)
{
	/* layout 0: X [seq 5, batch 3, 8] */
	Model *m = tu_model(14);
	Graph *g = m->graph;
	Node *n = lstm(g, SHAPE(5, 3, 8), 0);
	ValId y = tu_out(n, 0), yh = tu_out(n, 1), yc = tu_out(n, 2);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[5,2,3,16]");
	cr_assert_str_eq(tu_shape(g, yh), "[2,3,16]");
	cr_assert_str_eq(tu_shape(g, yc), "[2,3,16]");
	cr_assert_eq(tu_dtype(g, yc), DT_FLOAT);
	model_free(m);

	/* layout 1: X [batch 3, seq 5, 8] */
	m = tu_model(14);
	g = m->graph;
	n = lstm(g, SHAPE(3, 5, 8), 1);
	y = tu_out(n, 0), yh = tu_out(n, 1), yc = tu_out(n, 2);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[3,5,2,16]");
	cr_assert_str_eq(tu_shape(g, yh), "[3,2,16]");
	cr_assert_str_eq(tu_shape(g, yc), "[3,2,16]");
	model_free(m);

	/* dynamic sequence and batch stay unknown; outputs may be omitted */
	m = tu_model(14);
	g = m->graph;
	n = lstm(g, SHAPE(-1, -1, 8), 0);
	tu_omit_out(g, n, 0);
	yh = tu_out(n, 1), yc = tu_out(n, 2);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, yh), "[2,-1,16]");
	cr_assert_str_eq(tu_shape(g, yc), "[2,-1,16]");
	model_free(m);
}

Test(ops_nn, lstm_hidden_from_weights_and_errors)
{
	/* no hidden_size: from R; initial_h gives the batch */
	Model *m = tu_model(14);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(-1, -1, 4));
	ValId w = tu_weight(g, "w", DT_FLOAT, SHAPE(1, 20, 4));
	ValId r = tu_weight(g, "r", DT_FLOAT, SHAPE(1, 20, 5));
	ValId h = tu_input(g, "h", DT_FLOAT, SHAPE(1, 7, 5));
	Node *n = tu_node(g, "LSTM", "lstm", IDS(x, w, r, -1, -1, h), 3);
	ValId y = tu_out(n, 0), yh = tu_out(n, 1);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[-1,1,7,5]");
	cr_assert_str_eq(tu_shape(g, yh), "[1,7,5]");
	model_free(m);

	m = tu_model(14);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(5, 3, 4));
	w = tu_weight(g, "w", DT_FLOAT, SHAPE(1, 20, 4));
	r = tu_weight(g, "r", DT_FLOAT, SHAPE(1, 20, 5));
	n = tu_node(g, "LSTM", "lstm", IDS(x, w, r), 3);
	tu_str(g, n, "direction", "sideways");
	infer_fails(m, "node 'lstm' (LSTM): direction is 'sideways', expected "
		       "forward, reverse or bidirectional");
	model_free(m);

	m = tu_model(14);
	g = m->graph;
	n = lstm(g, SHAPE(5, 3, 9), 0);
	infer_fails(m, "node 'lstm' (LSTM): input 1 ('w', shape [2,64,8]) "
		       "gives input_size = 8, expected 9");
	model_free(m);

	m = tu_model(14);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(5, 3, 8));
	w = tu_weight(g, "w", DT_FLOAT, SHAPE(1, 64, 8));
	r = tu_weight(g, "r", DT_FLOAT, SHAPE(1, 64, 16));
	n = tu_node(g, "LSTM", "lstm", IDS(x, w, r), 3);
	tu_str(g, n, "direction", "bidirectional");
	infer_fails(m, "node 'lstm' (LSTM): input 1 ('w', shape [1,64,8]) "
		       "gives num_directions = 1, expected 2");
	model_free(m);
}

Test(ops_nn, gru_and_rnn)
{
	Model *m = tu_model(14);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(6, 2, 3));
	ValId w = tu_weight(g, "w", DT_FLOAT, SHAPE(1, 15, 3));
	ValId r = tu_weight(g, "r", DT_FLOAT, SHAPE(1, 15, 5));
	ValId sl = tu_input(g, "sl", DT_INT32, SHAPE(2));
	Node *n = tu_node(g, "GRU", "gru", IDS(x, w, r, -1, sl), 2);
	tu_int(g, n, "hidden_size", 5);
	ValId gy = tu_out(n, 0), gh = tu_out(n, 1);
	ValId w1 = tu_weight(g, "w1", DT_FLOAT, SHAPE(2, 4, 3));
	ValId r1 = tu_weight(g, "r1", DT_FLOAT, SHAPE(2, 4, 4));
	n = tu_node(g, "RNN", "rnn", IDS(x, w1, r1), 2);
	tu_str(g, n, "direction", "bidirectional");
	tu_int(g, n, "layout", 1);
	ValId ry = tu_out(n, 0), rh = tu_out(n, 1);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, gy), "[6,1,2,5]");
	cr_assert_str_eq(tu_shape(g, gh), "[1,2,5]");
	/* layout 1: X is [batch 6, seq 2, 3] */
	cr_assert_str_eq(tu_shape(g, ry), "[6,2,2,4]");
	cr_assert_str_eq(tu_shape(g, rh), "[6,2,4]");
	model_free(m);

	m = tu_model(14);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(6, 2, 3));
	w = tu_weight(g, "w", DT_FLOAT, SHAPE(1, 14, 3));
	r = tu_weight(g, "r", DT_FLOAT, SHAPE(1, 14, 5));
	tu_node(g, "GRU", "gru", IDS(x, w, r), 2);
	infer_fails(m, "node 'gru' (GRU): input 1 ('w') has shape [1,14,3]; "
		       "dim 1 must be a multiple of 3");
	model_free(m);
}

/* ---- misc --------------------------------------------------------------- */

Test(ops_nn, einsum)
{
	Model *m = tu_model(12);
	Graph *g = m->graph;
	ValId a = tu_input(g, "a", DT_FLOAT, SHAPE(2, 3, 4));
	ValId b = tu_input(g, "b", DT_FLOAT, SHAPE(2, 4, 5));
	ValId v = tu_input(g, "v", DT_FLOAT, SHAPE(4));
	ValId d = tu_input(g, "d", DT_FLOAT, SHAPE(7, 1, 3, 3));
	Node *n = tu_node(g, "Einsum", "bmm", IDS(a, b), 1);
	tu_str(g, n, "equation", "bij, bjk -> bik");
	ValId bmm = tu_out(n, 0);
	n = tu_node(g, "Einsum", "impl", IDS(a, b), 1);
	tu_str(g, n, "equation", "bij,bjk");
	ValId impl = tu_out(n, 0);
	n = tu_node(g, "Einsum", "diag", IDS(d), 1);
	tu_str(g, n, "equation", "...ii->...i");
	ValId diag = tu_out(n, 0);
	n = tu_node(g, "Einsum", "dot", IDS(v, v), 1);
	tu_str(g, n, "equation", "i,i");
	ValId dot = tu_out(n, 0);
	n = tu_node(g, "Einsum", "tr", IDS(a), 1);
	tu_str(g, n, "equation", "...ij->...ji");
	ValId tr = tu_out(n, 0);
	n = tu_node(g, "Einsum", "bc", IDS(d, a), 1);
	tu_str(g, n, "equation", "...jk,...kl");
	ValId bc = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, bmm), "[2,3,5]");
	/* implicit: labels used once, sorted: i, k */
	cr_assert_str_eq(tu_shape(g, impl), "[3,5]");
	cr_assert_str_eq(tu_shape(g, diag), "[7,1,3]");
	cr_assert_str_eq(tu_shape(g, dot), "[]");
	cr_assert_str_eq(tu_shape(g, tr), "[2,4,3]");
	/* "..." dims broadcast: [7, 1] with [2] -> [7, 2]; j=3, l=4 */
	cr_assert_str_eq(tu_shape(g, bc), "[7,2,3,4]");
	model_free(m);

	m = tu_model(12);
	g = m->graph;
	a = tu_input(g, "a", DT_FLOAT, SHAPE(2, 3));
	b = tu_input(g, "b", DT_FLOAT, SHAPE(4, 5));
	n = tu_node(g, "Einsum", "e", IDS(a, b), 1);
	tu_str(g, n, "equation", "ij,jk->ik");
	infer_fails(m, "node 'e' (Einsum): label 'j' has dim 4 in input 1 but 3 "
		       "before");
	model_free(m);
}

Test(ops_nn, det_dft_stft)
{
	Model *m = tu_model(17);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 5, 3, 3));
	ValId det = tu_out(tu_node(g, "Det", "det", IDS(x), 1), 0);
	ValId s = tu_input(g, "s", DT_FLOAT, SHAPE(1, 10, 10, 1));
	Node *n = tu_node(g, "DFT", "dft", IDS(s), 1);
	tu_int(g, n, "axis", 2);
	ValId dft = tu_out(n, 0);
	ValId len = weight_scalar(g, "len", 16);
	n = tu_node(g, "DFT", "one", IDS(s, len), 1);
	tu_int(g, n, "onesided", 1);
	ValId one = tu_out(n, 0);
	ValId sig = tu_input(g, "sig", DT_FLOAT, SHAPE(1, 128, 1));
	ValId step = weight_scalar(g, "step", 8);
	ValId fl = weight_scalar(g, "fl", 16);
	ValId st = tu_out(tu_node(g, "STFT", "stft", IDS(sig, step, -1, fl), 1),
			  0);
	ValId win = tu_input(g, "win", DT_FLOAT, SHAPE(20));
	n = tu_node(g, "STFT", "stw", IDS(sig, step, win), 1);
	tu_int(g, n, "onesided", 0);
	ValId stw = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, det), "[2,5]");
	cr_assert_str_eq(tu_shape(g, dft), "[1,10,10,2]");
	/* 16 / 2 + 1 on axis 1 */
	cr_assert_str_eq(tu_shape(g, one), "[1,9,10,2]");
	/* (128 - 16) / 8 + 1 frames, 16 / 2 + 1 bins */
	cr_assert_str_eq(tu_shape(g, st), "[1,15,9,2]");
	cr_assert_str_eq(tu_shape(g, stw), "[1,14,20,2]");
	model_free(m);

	/* DFT opset 20: axis as input 2, default -2 */
	m = tu_model(20);
	g = m->graph;
	s = tu_input(g, "s", DT_FLOAT, SHAPE(2, 6, 8, 2));
	ValId nl = tu_out(tu_node(g, "DFT", "d", IDS(s), 1), 0);
	ValId ax = weight_scalar(g, "ax", 1);
	len = weight_scalar(g, "len", 5);
	ValId a1 = tu_out(tu_node(g, "DFT", "a1", IDS(s, len, ax), 1), 0);
	ValId axr = tu_input(g, "axr", DT_INT64, SCALAR);
	ValId ar = tu_out(tu_node(g, "DFT", "ar", IDS(s, len, axr), 1), 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, nl), "[2,6,8,2]");
	cr_assert_str_eq(tu_shape(g, a1), "[2,5,8,2]");
	cr_assert_str_eq(tu_shape(g, ar), "[2,-1,-1,2]");
	cr_assert(dep(g, ar));
	model_free(m);

	m = tu_model(11);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(3, 4));
	tu_node(g, "Det", "det", IDS(x), 1);
	infer_fails(m, "node 'det' (Det): input 'x' has shape [3,4]; expected "
		       "square matrices");
	model_free(m);
}

Test(ops_nn, windows_fold)
{
	Model *m = tu_model(17);
	Graph *g = m->graph;
	ValId n8 = weight_scalar(g, "n8", 8);
	ValId hann = tu_out(tu_node(g, "HannWindow", "hann", IDS(n8), 1), 0);
	Node *n = tu_node(g, "HammingWindow", "ham", IDS(n8), 1);
	tu_int(g, n, "periodic", 0);
	ValId ham = tu_out(n, 0);
	n = tu_node(g, "BlackmanWindow", "bl", IDS(n8), 1);
	tu_int(g, n, "output_datatype", DT_DOUBLE);
	ValId bl = tu_out(n, 0);
	ValId rt = tu_input(g, "rt", DT_INT32, SCALAR);
	ValId hr = tu_out(tu_node(g, "HannWindow", "hr", IDS(rt), 1), 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, hann), "[8]");
	cr_assert_eq(tu_dtype(g, hann), DT_FLOAT);
	for (int i = 0; i < 8; i++) {
		double hv = 0.5 - 0.5 * cos(2 * M_PI * i / 8);
		double mv = 25.0 / 46 - 21.0 / 46 * cos(2 * M_PI * i / 7);
		double bv = 0.42 - 0.5 * cos(2 * M_PI * i / 8) +
			    0.08 * cos(4 * M_PI * i / 8);
		cr_assert_eq(fval(g, hann, i), (double)(float)hv, "hann %d", i);
		cr_assert_eq(fval(g, ham, i), (double)(float)mv, "hamming %d", i);
		cr_assert_eq(fval(g, bl, i), bv, "blackman %d", i);
	}
	cr_assert_eq(tu_dtype(g, bl), DT_DOUBLE);
	cr_assert_str_eq(tu_shape(g, hr), "[-1]");
	cr_assert(dep(g, hr));
	model_free(m);
}

Test(ops_nn, mel_weight_matrix)
{
	Model *m = tu_model(17);
	Graph *g = m->graph;
	ValId bins = weight_scalar(g, "bins", 8);
	ValId len = weight_scalar(g, "len", 16);
	ValId rate = weight_scalar(g, "rate", 8192);
	ValId lo = tu_input(g, "lo", DT_FLOAT, SCALAR);
	ValId hi = tu_input(g, "hi", DT_FLOAT, SCALAR);
	ValId y = tu_out(tu_node(g, "MelWeightMatrix", "mel",
				 IDS(bins, len, rate, lo, hi), 1),
			 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[9,8]");
	cr_assert_eq(tu_dtype(g, y), DT_FLOAT);
	model_free(m);
}

Test(ops_nn, losses)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(3, 5, 6, 7));
	ValId t = tu_input(g, "t", DT_INT64, SHAPE(3, 6, 7));
	ValId w = tu_input(g, "w", DT_FLOAT, SHAPE(5));
	Node *n = tu_node(g, "NegativeLogLikelihoodLoss", "nll", IDS(x, t, w),
			  1);
	tu_str(g, n, "reduction", "none");
	ValId none = tu_out(n, 0);
	ValId mean = tu_out(tu_node(g, "NegativeLogLikelihoodLoss", "nllm",
				    IDS(x, t), 1),
			    0);
	n = tu_node(g, "SoftmaxCrossEntropyLoss", "sce", IDS(x, t), 2);
	tu_str(g, n, "reduction", "sum");
	ValId sce = tu_out(n, 0), lp = tu_out(n, 1);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, none), "[3,6,7]");
	cr_assert_str_eq(tu_shape(g, mean), "[]");
	cr_assert_str_eq(tu_shape(g, sce), "[]");
	cr_assert_str_eq(tu_shape(g, lp), "[3,5,6,7]");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(3, 5, 6));
	t = tu_input(g, "t", DT_INT64, SHAPE(3, 5));
	tu_node(g, "NegativeLogLikelihoodLoss", "nll", IDS(x, t), 1);
	infer_fails(m, "node 'nll' (NegativeLogLikelihoodLoss): target 't' has "
		       "shape [3,5], but input 'x' has [3,5,6]; expected [N, "
		       "d1..dk] for [N, C, d1..dk]");
	model_free(m);
}

Test(ops_nn, nms_is_data_dependent)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	ValId b = tu_input(g, "b", DT_FLOAT, SHAPE(1, 6, 4));
	ValId s = tu_input(g, "s", DT_FLOAT, SHAPE(1, 2, 6));
	ValId mx = tu_weight_ints(g, "mx", INTS(3));
	ValId y = tu_out(tu_node(g, "NonMaxSuppression", "nms", IDS(b, s, mx),
				 1),
			 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[-1,3]");
	cr_assert_eq(tu_dtype(g, y), DT_INT64);
	cr_assert(dep(g, y));
	model_free(m);
}
