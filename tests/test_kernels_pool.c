/* tests/test_kernels_pool.c - the pooling and normalization kernels
 * (compiler/ops/pool.c, norm.c) and Dropout's training mode, run by
 * folding constant inputs: what ONNX's backend tests do not cover (other
 * dtypes, storage_order, count_include_pad with ceil_mode, dilations,
 * LpPool, MaxRoiPool, RoiAlign's max mode, spatial=0, broadcast scales,
 * seeded masks) and the errors on bad indices. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "compiler/ops/opimpl.h"
#include "testutil.h"

#define FLTS(...)                                                          \
	(const float[]){ __VA_ARGS__ },                                    \
		(int32_t)(sizeof((float[]){ __VA_ARGS__ }) / sizeof(float))

static ValId floats(Graph *g, const char *name, Shape s, const float *v,
		    int32_t n)
{
	cr_assert_eq(shape_numel(&s), n, "'%s': %d values for its shape",
		     name, n);
	return tu_weight_data(g, name, DT_FLOAT, s, v);
}

static Node *op(Graph *g, const char *type, const ValId *ins, int32_t n,
		int32_t nout)
{
	char name[64];
	snprintf(name, sizeof(name), "%s_%d", type, g->nnodes);
	return tu_node(g, type, name, ins, n, nout);
}

static const Tensor *folded(Graph *g, ValId v)
{
	const Tensor *t = g->vals[v].konst;
	cr_assert_not_null(t, "'%s' was not computed", g->vals[v].name);
	return t;
}

/* v holds want[0..n) to within 1e-6 (relative) or exactly if exact. */
static void expect(Graph *g, ValId v, int dt, const float *want, int32_t n)
{
	const Tensor *t = folded(g, v);
	cr_assert_eq(t->dtype, dt, "'%s' is %s", g->vals[v].name,
		     dtype_name(t->dtype));
	cr_assert_eq(shape_numel(&t->shape), n, "'%s' has %lld values",
		     g->vals[v].name, (long long)shape_numel(&t->shape));
	for (int32_t i = 0; i < n; i++) {
		double got = tensor_get_f64(t, i);
		cr_assert(fabs(got - want[i]) <= 1e-6 * (1 + fabs(want[i])),
			  "'%s'[%d] = %.9g, expected %.9g", g->vals[v].name,
			  i, got, (double)want[i]);
	}
}

static void expect_ints(Graph *g, ValId v, int dt, const int64_t *want,
			int32_t n)
{
	const Tensor *t = folded(g, v);
	cr_assert_eq(t->dtype, dt);
	cr_assert_eq(shape_numel(&t->shape), n);
	for (int32_t i = 0; i < n; i++)
		cr_assert_eq(tensor_get_i64(t, i), want[i],
			     "'%s'[%d] = %lld, expected %lld", g->vals[v].name,
			     i, (long long)tensor_get_i64(t, i),
			     (long long)want[i]);
}

/* ---- pools ---------------------------------------------------------------- */

/* int8 through the float path: negatives stay negative, the end padding
 * never wins, and storage_order=1 numbers the input column by column. */
Test(kernels_pool, maxpool_int8_indices_column_major)
{
	Model *m = tu_model(12);
	Graph *g = m->graph;
	static const int8_t xv[] = { -5, 3, -1, 7, -8, 2, 0, 4, -9 };
	ValId x = tu_weight_data(g, "x", DT_INT8, SHAPE(1, 1, 3, 3), xv);
	Node *n = op(g, "MaxPool", IDS(x), 2);
	tu_ints(g, n, "kernel_shape", INTS(2, 2));
	tu_ints(g, n, "pads", INTS(0, 0, 1, 1));
	tu_int(g, n, "storage_order", 1);
	ValId y = tu_out(n, 0), ind = tu_out(n, 1);
	infer_ok(m);
	expect_ints(g, y, DT_INT8, INTS(7, 3, 2, 7, 4, 2, 4, 4, -9));
	expect_ints(g, ind, DT_INT64, INTS(1, 3, 7, 1, 5, 7, 5, 5, 8));
	model_free(m);
}

/* With ceil_mode the last window runs past the end padding: those taps
 * count neither as input nor as padding; dilation spreads the taps. */
Test(kernels_pool, avgpool_count_include_pad_ceil_and_dilation)
{
	Model *m = tu_model(19);
	Graph *g = m->graph;
	ValId x = floats(g, "x", SHAPE(1, 1, 5), FLTS(1, 2, 3, 4, 5));
	Node *a = op(g, "AveragePool", IDS(x), 1);
	tu_ints(g, a, "kernel_shape", INTS(3));
	tu_ints(g, a, "strides", INTS(2));
	tu_ints(g, a, "pads", INTS(1, 0));
	tu_int(g, a, "ceil_mode", 1);
	tu_int(g, a, "count_include_pad", 1);
	ValId ya = tu_out(a, 0);
	Node *d = op(g, "AveragePool", IDS(x), 1);
	tu_ints(g, d, "kernel_shape", INTS(2));
	tu_ints(g, d, "dilations", INTS(2));
	ValId yd = tu_out(d, 0);
	infer_ok(m);
	expect(g, ya, DT_FLOAT, FLTS(1, 3, 4.5f));
	expect(g, yd, DT_FLOAT, FLTS(2, 3, 4));
	model_free(m);
}

Test(kernels_pool, avgpool_float16)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	uint16_t h[4];
	for (int i = 0; i < 4; i++)
		h[i] = minifloat_from(i + 1, 5, 10);
	ValId x = tu_weight_data(g, "x", DT_FLOAT16, SHAPE(1, 1, 4), h);
	Node *n = op(g, "AveragePool", IDS(x), 1);
	tu_ints(g, n, "kernel_shape", INTS(2));
	tu_ints(g, n, "strides", INTS(2));
	infer_ok(m);
	expect(g, tu_out(n, 0), DT_FLOAT16, FLTS(1.5f, 3.5f));
	model_free(m);
}

Test(kernels_pool, lppool_and_global_lppool)
{
	Model *m = tu_model(18);
	Graph *g = m->graph;
	ValId x = floats(g, "x", SHAPE(1, 1, 2, 2), FLTS(3, -4, 0, 0));
	ValId x3 = floats(g, "x3", SHAPE(1, 2, 2), FLTS(-1, 2, -3, 4));
	Node *l = op(g, "LpPool", IDS(x), 1);
	tu_ints(g, l, "kernel_shape", INTS(2, 2));
	ValId yl = tu_out(l, 0);
	Node *gl = op(g, "GlobalLpPool", IDS(x3), 1);
	tu_int(g, gl, "p", 1);
	ValId yg = tu_out(gl, 0);
	infer_ok(m);
	expect(g, yl, DT_FLOAT, FLTS(5));
	expect(g, yg, DT_FLOAT, FLTS(3, 7));
	model_free(m);
}

Test(kernels_pool, pool_over_four_spatial_axes_is_an_error)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_weight(g, "x", DT_FLOAT, SHAPE(1, 1, 2, 2, 2, 2));
	Node *n = op(g, "MaxPool", IDS(x), 1);
	tu_ints(g, n, "kernel_shape", INTS(1, 1, 1, 1));
	infer_fails_with(m, "1 to 3 spatial axes, not 4");
	model_free(m);
}

/* Rois scaled by spatial_scale 0.5: the whole 4x4 map in 2x2 bins, and
 * its centre 2x2 one value per bin. */
Test(kernels_pool, max_roi_pool)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	float xv[16];
	for (int i = 0; i < 16; i++)
		xv[i] = (float)i;
	ValId x = floats(g, "x", SHAPE(1, 1, 4, 4), xv, 16);
	ValId r = floats(g, "r", SHAPE(2, 5),
			 FLTS(0, 0, 0, 6, 6, 0, 2, 2, 4, 4));
	Node *n = op(g, "MaxRoiPool", IDS(x, r), 1);
	tu_ints(g, n, "pooled_shape", INTS(2, 2));
	tu_float(g, n, "spatial_scale", 0.5f);
	infer_ok(m);
	expect(g, tu_out(n, 0), DT_FLOAT, FLTS(5, 7, 13, 15, 5, 6, 9, 10));
	model_free(m);
}

/* One 2x2 bin sampled 2x2 over a 3x3 ramp: avg is the mean of the
 * bilinear samples (2, 3, 5, 6), max the largest weighted corner of any
 * sample (0.25 * 8). */
Test(kernels_pool, roi_align_avg_and_max)
{
	Model *m = tu_model(16);
	Graph *g = m->graph;
	ValId x = floats(g, "x", SHAPE(1, 1, 3, 3),
			 FLTS(0, 1, 2, 3, 4, 5, 6, 7, 8));
	ValId r = floats(g, "r", SHAPE(1, 4), FLTS(0, 0, 2, 2));
	ValId b = tu_weight_ints(g, "b", INTS(0));
	ValId y[2];
	for (int k = 0; k < 2; k++) {
		Node *n = op(g, "RoiAlign", IDS(x, r, b), 1);
		tu_str(g, n, "coordinate_transformation_mode",
		       "output_half_pixel");
		tu_int(g, n, "sampling_ratio", 2);
		tu_str(g, n, "mode", k ? "max" : "avg");
		y[k] = tu_out(n, 0);
	}
	infer_ok(m);
	expect(g, y[0], DT_FLOAT, FLTS(4));
	expect(g, y[1], DT_FLOAT, FLTS(2));
	model_free(m);
}

Test(kernels_pool, roi_align_bad_batch_index)
{
	Model *m = tu_model(16);
	Graph *g = m->graph;
	ValId x = tu_weight(g, "x", DT_FLOAT, SHAPE(1, 1, 3, 3));
	ValId r = floats(g, "r", SHAPE(1, 4), FLTS(0, 0, 2, 2));
	ValId b = tu_weight_ints(g, "b", INTS(1));
	op(g, "RoiAlign", IDS(x, r, b), 1);
	infer_fails_with(m, "batch_indices[0] is 1, expected 0 to 0");
	model_free(m);
}

Test(kernels_pool, max_unpool_index_out_of_range)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	ValId x = floats(g, "x", SHAPE(1, 1, 1, 2), FLTS(1, 2));
	ValId i = tu_weight_data(g, "i", DT_INT64, SHAPE(1, 1, 1, 2),
				 (int64_t[]){ 1, 4 });
	Node *n = op(g, "MaxUnpool", IDS(x, i), 1);
	tu_ints(g, n, "kernel_shape", INTS(1, 2));
	tu_ints(g, n, "strides", INTS(1, 2));
	infer_fails_with(m, "index 4 at 1 is outside");
	model_free(m);
}

/* ---- normalizations -------------------------------------------------------- */

/* spatial=0 (opset 7): statistics per element of [C, D]. */
Test(kernels_pool, batchnorm_not_spatial)
{
	Model *m = tu_model(7);
	Graph *g = m->graph;
	ValId x = floats(g, "x", SHAPE(1, 2, 2), FLTS(1, 1, 4, 7));
	ValId s = floats(g, "s", SHAPE(2, 2), FLTS(1, 1, 1, 2));
	ValId b = floats(g, "b", SHAPE(2, 2), FLTS(0, 0, 0, 1));
	ValId mean = floats(g, "mean", SHAPE(2, 2), FLTS(0, 1, 2, 3));
	ValId var = floats(g, "var", SHAPE(2, 2), FLTS(1, 1, 4, 4));
	Node *n = op(g, "BatchNormalization", IDS(x, s, b, mean, var), 1);
	tu_int(g, n, "spatial", 0);
	tu_float(g, n, "epsilon", 0);
	infer_ok(m);
	expect(g, tu_out(n, 0), DT_FLOAT, FLTS(1, 0, 1, 5));
	model_free(m);
}

/* Scale [2] broadcasts over the normalized [2, 2]; no B; the statistics
 * outputs hold the row's mean and 1 / stddev. */
Test(kernels_pool, layer_norm_broadcast_scale_and_stats)
{
	Model *m = tu_model(17);
	Graph *g = m->graph;
	ValId x = floats(g, "x", SHAPE(1, 2, 2), FLTS(1, 3, 2, 6));
	ValId s = floats(g, "s", SHAPE(2), FLTS(1, 2));
	Node *n = op(g, "LayerNormalization", IDS(x, s), 3);
	tu_int(g, n, "axis", 1);
	tu_float(g, n, "epsilon", 0);
	ValId y = tu_out(n, 0), mean = tu_out(n, 1), inv = tu_out(n, 2);
	infer_ok(m);
	float r = 1 / sqrtf(3.5f);
	expect(g, y, DT_FLOAT, FLTS(-2 * r, 0, -r, 6 * r));
	expect(g, mean, DT_FLOAT, FLTS(3));
	expect(g, inv, DT_FLOAT, FLTS(r));
	model_free(m);
}

Test(kernels_pool, lp_normalization_l1_axis0)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = floats(g, "x", SHAPE(2, 2), FLTS(1, -3, 3, 1));
	Node *n = op(g, "LpNormalization", IDS(x), 1);
	tu_int(g, n, "p", 1);
	tu_int(g, n, "axis", 0);
	infer_ok(m);
	expect(g, tu_out(n, 0), DT_FLOAT, FLTS(0.25f, -0.75f, 0.75f, 0.25f));
	model_free(m);
}

/* MVN over axes [1] only: each row of a [2, 2] map on its own. */
Test(kernels_pool, mvn_custom_axes)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = floats(g, "x", SHAPE(2, 2), FLTS(1, 3, 10, 10));
	Node *n = op(g, "MeanVarianceNormalization", IDS(x), 1);
	tu_ints(g, n, "axes", INTS(1));
	infer_ok(m);
	float one = (float)(1 / (1 + 1e-9));
	expect(g, tu_out(n, 0), DT_FLOAT, FLTS(-one, one, 0, 0));
	model_free(m);
}

/* ---- Dropout -------------------------------------------------------------- */

/* seed 42 draws what numpy's np.random.seed(42); np.random.uniform(0, 1,
 * 6) does: .375 .951 .732 .599 .156 .156, kept where >= 0.5, scaled by
 * 2. */
Test(kernels_pool, dropout_training_seeded_like_numpy)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = floats(g, "x", SHAPE(6), FLTS(1, 2, 3, 4, 5, 6));
	ValId r = floats(g, "r", SCALAR, FLTS(0.5f));
	ValId t = tu_weight_data(g, "t", DT_BOOL, SCALAR, (uint8_t[]){ 1 });
	Node *n = op(g, "Dropout", IDS(x, r, t), 2);
	tu_int(g, n, "seed", 42);
	ValId y = tu_out(n, 0), mask = tu_out(n, 1);
	infer_ok(m);
	expect(g, y, DT_FLOAT, FLTS(0, 4, 6, 8, 0, 0));
	expect_ints(g, mask, DT_BOOL, INTS(0, 1, 1, 1, 0, 0));
	model_free(m);
}

/* Runs node n's kernel as the runtime does, on its inputs' contents
 * and into fresh buffers of its outputs' inferred shapes (out[k]). */
static int run_bound(Model *m, Node *n, Tensor **out, Arena *scratch)
{
	Graph *g = m->graph;
	const Tensor *in[8] = { 0 };
	uint8_t set[4] = { 0 };
	cr_assert(n->ninputs <= 8 && n->noutputs <= 4);
	for (int32_t i = 0; i < n->ninputs; i++)
		in[i] = n->inputs[i] >= 0 ? g->vals[n->inputs[i]].konst : NULL;
	for (int32_t k = 0; k < n->noutputs; k++) {
		const Value *v = &g->vals[n->outputs[k]];
		out[k] = tensor_new(&m->arena, NULL, v->dtype, &v->shape, NULL);
	}
	OpBind b = { .in = in, .out = out, .set = set };
	OpCtx c = { .model = m, .g = g, .n = n, .opset = 13, .bind = &b,
		    .arena = scratch };
	return op_info[n->op].run(&c);
}

/* Without a seed a training Dropout is random: not folded, but run,
 * each run with a seed of its own. */
Test(kernels_pool, dropout_without_seed_runs_with_fresh_masks)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	float xv[64];
	for (int i = 0; i < 64; i++)
		xv[i] = (float)(i + 1);
	ValId x = floats(g, "x", SHAPE(64), xv, 64);
	ValId r = floats(g, "r", SCALAR, FLTS(0.5f));
	ValId t = tu_weight_data(g, "t", DT_BOOL, SCALAR, (uint8_t[]){ 1 });
	Node *n = op(g, "Dropout", IDS(x, r, t), 2);
	infer_ok(m);
	cr_assert_null(g->vals[n->outputs[0]].konst, "a random mask was folded");
	Arena scratch;
	arena_init(&scratch);
	Tensor *o1[2], *o2[2];
	cr_assert_eq(run_bound(m, n, o1, &scratch), 0, "%s", last_error());
	cr_assert_eq(run_bound(m, n, o2, &scratch), 0, "%s", last_error());
	const float *y1 = o1[0]->data, *y2 = o2[0]->data;
	const uint8_t *k1 = o1[1]->data, *k2 = o2[1]->data;
	int kept = 0, same = 0;
	for (int i = 0; i < 64; i++) {
		cr_assert_eq(y1[i], k1[i] ? 2 * xv[i] : 0, "y[%d] = %g", i,
			     y1[i]);
		cr_assert_eq(y2[i], k2[i] ? 2 * xv[i] : 0);
		kept += k1[i];
		same += k1[i] == k2[i];
	}
	cr_assert(kept > 8 && kept < 56, "kept %d of 64 at ratio 0.5", kept);
	cr_assert(same < 64, "two runs drew the same mask");
	arena_release(&scratch);
	model_free(m);
}

Test(kernels_pool, dropout_ratio_one_is_an_error)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = floats(g, "x", SHAPE(2), FLTS(1, 2));
	ValId r = floats(g, "r", SCALAR, FLTS(1));
	ValId t = tu_weight_data(g, "t", DT_BOOL, SCALAR, (uint8_t[]){ 1 });
	op(g, "Dropout", IDS(x, r, t), 1);
	infer_fails_with(m, "ratio is 1, expected 0 <= ratio < 1");
	model_free(m);
}
