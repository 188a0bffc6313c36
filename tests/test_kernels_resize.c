/*
 * tests/test_kernels_resize.c - the kernels of resize.c, rnn.c and
 * signal.c (Resize, Upsample, GridSample, RNN, GRU, LSTM, DFT, STFT,
 * MelWeightMatrix) beyond what ONNX's backend tests check.
 *
 * cross_check folds every case of tests/fixtures/kernels/node/ (made by
 * tests/gen_kernel_cases.py, expected values from ONNX Runtime and
 * numpy.fft) and compares the outputs; the other tests cover dtypes,
 * documented edge behaviour and errors with values worked out by hand.
 * Run from the repository root.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/onnx.h"
#include "compiler/ops/opimpl.h"
#include "testutil.h"

#define CASES "tests/fixtures/kernels/node"

/* got matches want: same dtype and shape, floats within ONNX's rtol
 * 1e-3 (atol 1e-5: the fixtures are float32 noise around 0), integers
 * exactly.  Returns NULL or what differs, in buf. */
static const char *mismatch(const Tensor *got, const Tensor *want,
			    char *buf, size_t n)
{
	bool flt = want->dtype == DT_FLOAT || want->dtype == DT_DOUBLE ||
		   want->dtype == DT_FLOAT16;
	if (got->dtype != want->dtype ||
	    !shape_equal(&got->shape, &want->shape)) {
		char a[64], b[64];
		snprintf(buf, n, "%s %s, expected %s %s",
			 dtype_name(got->dtype), shape_str(&got->shape, a, 64),
			 dtype_name(want->dtype),
			 shape_str(&want->shape, b, 64));
		return buf;
	}
	for (int64_t i = 0; i < shape_numel(&want->shape); i++) {
		double g = tensor_get_f64(got, i), w = tensor_get_f64(want, i);
		if (flt ? fabs(g - w) <= 1e-5 + 1e-3 * fabs(w) : g == w)
			continue;
		snprintf(buf, n, "element %lld is %.9g, expected %.9g",
			 (long long)i, g, w);
		return buf;
	}
	return NULL;
}

/* Folds the case in dir with every input constant; NULL if every
 * output matches, else why not (in buf). */
static const char *run_backend_case(const char *dir, char *buf, size_t n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	Model *m = onnx_load(path);
	if (!m) {
		snprintf(buf, n, "load: %s", last_error());
		return buf;
	}
	Graph *g = m->graph;
	for (int32_t k = 0; k < g->ninputs; k++) {
		Value *v = &g->vals[g->inputs[k]];
		snprintf(path, sizeof(path), "%s/test_data_set_0/input_%d.pb",
			 dir, k);
		const Tensor *t = onnx_load_tensor(m, path);
		cr_assert_not_null(t, "%s: %s", path, last_error());
		v->kind = VAL_WEIGHT, v->konst = t;
		v->dtype = t->dtype, v->shape = t->shape;
	}
	g->ninputs = 0;
	const char *why = NULL;
	if (infer_graph(m, g) < 0) {
		snprintf(buf, n, "%s", last_error());
		why = buf;
	}
	for (int32_t k = 0; !why && k < g->noutputs; k++) {
		const Value *v = &g->vals[g->outputs[k]];
		snprintf(path, sizeof(path), "%s/test_data_set_0/output_%d.pb",
			 dir, k);
		const Tensor *want = onnx_load_tensor(m, path);
		cr_assert_not_null(want, "%s: %s", path, last_error());
		if (!v->konst)
			why = "not computed";
		else
			why = mismatch(v->konst, want, buf, n);
	}
	model_free(m);
	return why;
}

Test(kernels_resize, cross_check_cases)
{
	DIR *d = opendir(CASES);
	struct dirent *e;
	int ran = 0, failed = 0;
	cr_assert_not_null(d, "no %s (run from the repository root)", CASES);
	while ((e = readdir(d))) {
		char dir[300], buf[256];
		if (e->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), CASES "/%s", e->d_name);
		const char *why = run_backend_case(dir, buf, sizeof(buf));
		if (why) {
			cr_log_error("%s: %s", e->d_name, why);
			failed++;
		}
		ran++;
	}
	closedir(d);
	cr_assert_geq(ran, 30, "only %d cases", ran);
	cr_assert_eq(failed, 0, "%d of %d cases fail", failed, ran);
}

/* ---- helpers ------------------------------------------------------------ */

static ValId weight(Graph *g, const char *name, int dt, Shape s,
		    const double *v)
{
	Tensor *t = (Tensor *)tensor_new(g->arena, name, dt, &s, NULL);
	for (int64_t i = 0; i < shape_numel(&s); i++)
		tensor_set_f64(t, i, v[i]);
	ValId id = graph_add_value(g, name, VAL_WEIGHT);
	g->vals[id].dtype = dt;
	g->vals[id].shape = s;
	g->vals[id].konst = t;
	return id;
}

#define VALS(...) ((const double[]){ __VA_ARGS__ })

static void expect_vals(const Graph *g, ValId v, const double *want,
			int64_t n, double tol)
{
	const Tensor *t = g->vals[v].konst;
	cr_assert_not_null(t, "'%s' was not computed", g->vals[v].name);
	cr_assert_eq(shape_numel(&t->shape), n);
	for (int64_t i = 0; i < n; i++)
		cr_assert(fabs(tensor_get_f64(t, i) - want[i]) <= tol,
			  "'%s'[%lld] is %.9g, expected %.9g", g->vals[v].name,
			  (long long)i, tensor_get_f64(t, i), want[i]);
}

static void strings_attr(Graph *g, Node *n, const char *name, int count,
			 const char *const *s)
{
	Attr *a = node_add_attr(g, n, name, ATTR_STRINGS);
	Bytes *b = arena_alloc(g->arena, (size_t)count * sizeof(Bytes));
	for (int i = 0; i < count; i++)
		b[i] = (Bytes){ strlen(s[i]), (const uint8_t *)s[i] };
	a->n = count;
	a->strings = b;
}

/* ---- Resize ------------------------------------------------------------- */

Test(kernels_resize, resize_linear_float16)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = weight(g, "x", DT_FLOAT16, SHAPE(1, 1, 1, 2), VALS(0, 1));
	ValId s = weight(g, "s", DT_FLOAT, SHAPE(4), VALS(1, 1, 1, 2));
	Node *n = tu_node(g, "Resize", "r", IDS(x, -1, s), 1);
	tu_str(g, n, "mode", "linear");
	infer_ok(m);
	cr_assert_eq(g->vals[tu_out(n, 0)].konst->dtype, DT_FLOAT16);
	/* half_pixel: x_ori = (x + 0.5) / 2 - 0.5, clamped at the edges */
	expect_vals(g, tu_out(n, 0), VALS(0, 0.25, 0.75, 1), 4, 0);
	model_free(m);
}

Test(kernels_resize, resize_cubic_int8_truncates_and_saturates)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = weight(g, "x", DT_INT8, SHAPE(1, 4),
			 VALS(-128, 127, -100, 50));
	ValId sz = tu_weight_ints(g, "sz", INTS(1, 8));
	Node *n = tu_node(g, "Resize", "r", IDS(x, -1, -1, sz), 1);
	tu_str(g, n, "mode", "cubic");
	infer_ok(m);
	/* the reference's floats: -154.89 -62.25 93.17 97.19 -55.43 -89.96
	 * 8.04 65.82 */
	expect_vals(g, tu_out(n, 0), VALS(-128, -62, 93, 97, -55, -89, 8, 65),
		    8, 0);
	model_free(m);
}

Test(kernels_resize, resize_nearest_int64_is_exact)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	int64_t big = (INT64_C(1) << 62) + 1;
	ValId x = tu_weight_data(g, "x", DT_INT64, SHAPE(2),
				 (const int64_t[]){ big, -3 });
	ValId s = weight(g, "s", DT_FLOAT, SHAPE(1), VALS(2));
	Node *n = tu_node(g, "Resize", "r", IDS(x, -1, s), 1);
	tu_str(g, n, "coordinate_transformation_mode", "asymmetric");
	infer_ok(m);
	const Tensor *y = g->vals[tu_out(n, 0)].konst;
	cr_assert_not_null(y);
	const int64_t *v = y->data;
	cr_assert(v[0] == big && v[1] == big && v[2] == -3 && v[3] == -3);
	model_free(m);
}

Test(kernels_resize, resize_crop_needs_roi)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = weight(g, "x", DT_FLOAT, SHAPE(1, 2), VALS(1, 2));
	ValId s = weight(g, "s", DT_FLOAT, SHAPE(2), VALS(1, 2));
	Node *n = tu_node(g, "Resize", "r", IDS(x, -1, s), 1);
	tu_str(g, n, "coordinate_transformation_mode", "tf_crop_and_resize");
	infer_fails_with(m, "tf_crop_and_resize needs the roi input");
	model_free(m);
}

/* ---- RNN family ---------------------------------------------------------- */

/* RNN with I = H = 1, W = 2, R = 0.5, Affine (identity) activations:
 * forward h = 2, 5, 8.5 over x = 1, 2, 3; reverse 5.5, 7, 6. */
Test(kernels_resize, rnn_bidirectional_double)
{
	Model *m = tu_model(14);
	Graph *g = m->graph;
	ValId x = weight(g, "x", DT_DOUBLE, SHAPE(3, 1, 1), VALS(1, 2, 3));
	ValId w = weight(g, "w", DT_DOUBLE, SHAPE(2, 1, 1), VALS(2, 2));
	ValId r = weight(g, "r", DT_DOUBLE, SHAPE(2, 1, 1), VALS(0.5, 0.5));
	Node *n = tu_node(g, "RNN", "rnn", IDS(x, w, r), 2);
	tu_int(g, n, "hidden_size", 1);
	tu_str(g, n, "direction", "bidirectional");
	strings_attr(g, n, "activations", 2,
		     (const char *const[]){ "Affine", "affine" });
	infer_ok(m);
	cr_assert_eq(g->vals[tu_out(n, 0)].konst->dtype, DT_DOUBLE);
	expect_vals(g, tu_out(n, 0), VALS(2, 5.5, 5, 7, 8.5, 6), 6, 1e-6);
	expect_vals(g, tu_out(n, 1), VALS(8.5, 5.5), 2, 1e-6);
	model_free(m);
}

Test(kernels_resize, rnn_unknown_activation)
{
	Model *m = tu_model(14);
	Graph *g = m->graph;
	ValId x = weight(g, "x", DT_FLOAT, SHAPE(1, 1, 1), VALS(1));
	ValId w = weight(g, "w", DT_FLOAT, SHAPE(1, 1, 1), VALS(1));
	ValId r = weight(g, "r", DT_FLOAT, SHAPE(1, 1, 1), VALS(1));
	Node *n = tu_node(g, "RNN", "rnn", IDS(x, w, r), 2);
	strings_attr(g, n, "activations", 1, (const char *const[]){ "Swish" });
	infer_fails_with(m, "activation 'Swish' is not supported");
	model_free(m);
}

/* An empty sequence leaves its batch entry's Y, Y_h and Y_c at 0. */
Test(kernels_resize, lstm_empty_sequence)
{
	Model *m = tu_model(14);
	Graph *g = m->graph;
	ValId x = weight(g, "x", DT_FLOAT, SHAPE(2, 2, 1), VALS(1, 1, 1, 1));
	ValId w = weight(g, "w", DT_FLOAT, SHAPE(1, 4, 1), VALS(1, 1, 1, 1));
	ValId r = weight(g, "r", DT_FLOAT, SHAPE(1, 4, 1), VALS(1, 1, 1, 1));
	ValId sl = tu_weight_data(g, "sl", DT_INT32, SHAPE(2),
				  (const int32_t[]){ 2, 0 });
	ValId h0 = weight(g, "h0", DT_FLOAT, SHAPE(1, 2, 1), VALS(0.5, 0.5));
	Node *n = tu_node(g, "LSTM", "lstm", IDS(x, w, r, -1, sl, h0), 3);
	tu_int(g, n, "hidden_size", 1);
	infer_ok(m);
	const Tensor *y = g->vals[tu_out(n, 0)].konst;
	const Tensor *yh = g->vals[tu_out(n, 1)].konst;
	const Tensor *yc = g->vals[tu_out(n, 2)].konst;
	cr_assert(y && yh && yc);
	/* Y [2, 1, 2, 1]: batch 1 (elements 1 and 3) stays 0 */
	cr_assert(tensor_get_f64(y, 0) > 0 && tensor_get_f64(y, 2) > 0);
	cr_assert_eq(tensor_get_f64(y, 1), 0);
	cr_assert_eq(tensor_get_f64(y, 3), 0);
	cr_assert_eq(tensor_get_f64(yh, 1), 0);
	cr_assert_eq(tensor_get_f64(yc, 1), 0);
	cr_assert_eq(tensor_get_f64(yh, 0), tensor_get_f64(y, 2));
	model_free(m);
}

/* ---- signal -------------------------------------------------------------- */

/* A length-3 DFT (the direct path) of 1, 2, 3: 6, -1.5 +- 0.866i. */
Test(kernels_resize, dft_odd_length)
{
	Model *m = tu_model(17);
	Graph *g = m->graph;
	ValId x = weight(g, "x", DT_FLOAT, SHAPE(1, 3, 1), VALS(1, 2, 3));
	Node *n = tu_node(g, "DFT", "dft", IDS(x), 1);
	infer_ok(m);
	double s = sqrt(3) / 2;
	expect_vals(g, tu_out(n, 0), VALS(6, 0, -1.5, s, -1.5, -s), 6, 1e-6);
	model_free(m);
}

Test(kernels_resize, dft_rejects_complex_axis)
{
	Model *m = tu_model(17);
	Graph *g = m->graph;
	ValId x = weight(g, "x", DT_FLOAT, SHAPE(1, 3, 1), VALS(1, 2, 3));
	Node *n = tu_node(g, "DFT", "dft", IDS(x), 1);
	tu_int(g, n, "axis", 2);
	infer_fails_with(m, "real/imaginary axis");
	model_free(m);
}

/* An empty X resizes to an empty Y (no scale of an empty axis). */
Test(kernels_resize, resize_empty_input)
{
	Model *m = tu_model(18);
	Graph *g = m->graph;
	ValId x = weight(g, "x", DT_FLOAT, SHAPE(0, 2), VALS(0));
	ValId sz = tu_weight_ints(g, "sz", INTS(0, 4));
	Node *n = tu_node(g, "Resize", "r", IDS(x, -1, -1, sz), 1);
	tu_str(g, n, "mode", "linear");
	infer_ok(m);
	const Tensor *y = g->vals[tu_out(n, 0)].konst;
	cr_assert_not_null(y, "an empty Resize was not computed");
	cr_assert_eq(shape_numel(&y->shape), 0);
	model_free(m);
}

/* Upsample-7 takes its scales from the attribute. */
Test(kernels_resize, upsample7_scales_attribute)
{
	Model *m = tu_model(7);
	Graph *g = m->graph;
	ValId x = weight(g, "x", DT_FLOAT, SHAPE(1, 2), VALS(3, 5));
	Node *n = tu_node(g, "Upsample", "u", IDS(x), 1);
	tu_floats(g, n, "scales", (const float[]){ 1, 2 }, 2);
	infer_ok(m);
	expect_vals(g, tu_out(n, 0), VALS(3, 3, 5, 5), 4, 0);
	model_free(m);
}
