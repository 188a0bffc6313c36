/*
 * tests/test_padbatch.c - padding a batch to a larger gear
 * (gearrt_options.pad_batch; passes/batchrows.c's proof that no node mixes
 * the batch rows) on tests/fixtures/padbatch/ (tests/gen_padbatch_models.py):
 * what the compile records, a padded run's outputs against the rows run
 * alone, and the refusals.
 */
#include <math.h>

#include "omedit.h"
#include "runtime/gearrt.h"
#include "testrun.h"

/* Compiles padbatch/NAME with x's dims (N at axis 0) and batch gears
 * 1, 4, 8 into dir: the .om's path. */
static char *compile_pb(const char *dir, const char *name, const char *shape)
{
	char model[64], flag[128];
	snprintf(model, sizeof(model), "padbatch/%s", name);
	snprintf(flag, sizeof(flag), "--input_shape=x:%s", shape);
	const char *extra[] = { flag, "--dynamic_batch_size=1,4,8", NULL };
	return compile_fixture(dir, name, model, extra);
}

static char *dump_json(const char *om)
{
	Run r = run_gearc("dump", "--format=json", om);
	cr_assert_eq(r.status, 0, "%s", r.err);
	char *s = strdup(r.out);
	run_free(&r);
	return s;
}

Test(padbatch, the_compile_records_whether_rows_are_independent)
{
	static const struct {
		const char *name, *shape, *want;
	} cases[] = {
		{ "cnn", "-1,3,8,8", "\"axes\": [0]" },
		{ "attention", "-1,6,16", "\"axes\": [0, 1]" },
		{ "mix_reduce", "-1,4,8", "(ReduceMean)" },
		{ "mix_reshape", "-1,4,8", "(Reshape)" },
		{ "mix_dynq", "-1,4,8", "(DynamicQuantizeLinear)" },
		{ "mix_matmul", "-1,8", "(MatMul)" },
		{ "mix_reduceall", "-1,4,8", "(ReduceMean)" },
		{ "mix_slice", "-1,4,8", "(Slice)" },
		{ "mix_slice9", "-1,4,8", "(Slice)" },
		{ "transpose_default", "-1,4,8", "\"axes\": [2]" },
	};
	char *dir = temp_dir();
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *om = compile_pb(dir, cases[i].name, cases[i].shape);
		char *j = dump_json(om);
		cr_expect(strstr(j, cases[i].want), "%s: %s", cases[i].name,
			  strstr(j, "batch_rows") ? strstr(j, "batch_rows") : j);
		cr_expect(strstr(j, strncmp(cases[i].name, "mix", 3)
					    ? "\"independent\": true"
					    : "\"independent\": false"),
			  "%s", cases[i].name);
		free(j);
		free(om);
	}
	remove_tree(dir);
	free(dir);
}

static float *values(size_t n, uint32_t seed)
{
	float *v = malloc(n * sizeof(float));
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		v[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
	}
	return v;
}

/* A padded run of rows batch items of om (x's row of row floats, its
 * dims[1..rank)) against each row run alone at gear 1: the same outputs
 * within 1e-5 of their largest magnitude, each output sliced along the
 * axis its batch is on (axis[k]). */
static void padded_equals_rows(const char *om, int rank, const int64_t *dims,
			       int batch, const int *axis, size_t nout)
{
	gearrt_model *m;
	gearrt_session *s;
	gearrt_options o = { .threads = 1, .pad_batch = 1 };
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK);
	cr_assert_eq(gearrt_session_create(m, &o, &s), GEARRT_OK);
	size_t row = 1;
	for (int d = 1; d < rank; d++)
		row *= (size_t)dims[d];
	float *x = values(row * (size_t)batch, 41);
	gearrt_tensor in = { .dtype = GEARRT_FLOAT32, .rank = rank,
			     .data = x, .size = row * batch * sizeof(float) };
	memcpy(in.dims, dims, (size_t)rank * sizeof(int64_t));
	in.dims[0] = batch;
	gearrt_tensor out[4] = { 0 }, one[4] = { 0 };
	cr_assert_eq(gearrt_run(s, &in, 1, out, nout), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_expect_eq(gearrt_last_gear(s), 1, "batch %d runs gear 1 (4)",
		     batch);
	float *keep[4];
	for (size_t k = 0; k < nout; k++) {
		cr_assert_eq(out[k].dims[axis[k]], batch, "output %zu", k);
		keep[k] = malloc(out[k].size);
		memcpy(keep[k], out[k].data, out[k].size);
	}
	for (int b = 0; b < batch; b++) {
		gearrt_tensor xb = in;
		xb.dims[0] = 1;
		xb.data = x + (size_t)b * row;
		xb.size = row * sizeof(float);
		cr_assert_eq(gearrt_run(s, &xb, 1, one, nout), GEARRT_OK, "%s",
			     gearrt_last_error());
		for (size_t k = 0; k < nout; k++) {
			size_t outer = 1, inner = one[k].size / sizeof(float);
			for (int d = 0; d < axis[k]; d++)
				outer *= (size_t)one[k].dims[d];
			inner /= outer;
			const float *y = one[k].data;
			double big = 0;
			for (size_t i = 0; i < outer * inner; i++)
				big = fmax(big, fabs(y[i]));
			for (size_t i = 0; i < outer; i++)
				for (size_t e = 0; e < inner; e++) {
					float want = y[i * inner + e];
					float got = keep[k][(i * batch + b) *
								inner + e];
					cr_assert(fabs(got - want) <=
							  1e-5 * big + 1e-7,
						  "output %zu row %d: %g, alone "
						  "%g", k, b, got, want);
				}
		}
	}
	for (size_t k = 0; k < nout; k++)
		free(keep[k]);
	free(x);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
}

Test(padbatch, a_padded_batch_gives_each_row_its_own_outputs)
{
	char *dir = temp_dir();
	char *cnn = compile_pb(dir, "cnn", "-1,3,8,8");
	padded_equals_rows(cnn, 4, (const int64_t[]){ 0, 3, 8, 8 }, 3,
			   (const int[]){ 0 }, 1);
	char *att = compile_pb(dir, "attention", "-1,6,16");
	/* yt's batch is on axis 1: sliced there */
	padded_equals_rows(att, 3, (const int64_t[]){ 0, 6, 16 }, 2,
			   (const int[]){ 0, 1 }, 2);
	free(cnn);
	free(att);
	remove_tree(dir);
	free(dir);
}

/* A recurrent step whose state's batch is its axis 1 (tied to x's in
 * every gear): a batch of 3 padded to the gear of 4, x along axis 0 and
 * h along axis 1, gives each row what it gives alone at gear 1. */
Test(padbatch, a_state_whose_batch_is_axis_1_is_padded_there)
{
	char *dir = temp_dir();
	const char *extra[] = { "--input_shape=x:-1,8;h:1,-1,16",
				"--dynamic_dims=1,1;4,4;8,8", NULL };
	char *om = compile_fixture(dir, "rnn_state", "padbatch/rnn_state",
				   extra);
	char *j = dump_json(om);
	cr_expect(strstr(j, "\"input_axes\": [0, 1]"), "%s", j);
	free(j);
	gearrt_model *m;
	gearrt_session *s;
	gearrt_options o = { .threads = 1, .pad_batch = 1 };
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK);
	cr_assert_eq(gearrt_session_create(m, &o, &s), GEARRT_OK);
	enum { N = 3 };
	float *x = values(N * 8, 7), *h = values(N * 16, 8);
	gearrt_tensor in[2] = {
		{ .dtype = GEARRT_FLOAT32, .rank = 2, .dims = { N, 8 },
		  .data = x, .size = N * 8 * sizeof(float) },
		{ .dtype = GEARRT_FLOAT32, .rank = 3, .dims = { 1, N, 16 },
		  .data = h, .size = N * 16 * sizeof(float) },
	};
	gearrt_tensor out[2] = { 0 }, one[2] = { 0 };
	cr_assert_eq(gearrt_run(s, in, 2, out, 2), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_expect_eq(gearrt_last_gear(s), 1);
	cr_assert_eq(out[0].dims[1], N);
	cr_assert_eq(out[1].dims[0], N);
	float hn[N * 16], y[N * 4];
	memcpy(hn, out[0].data, sizeof(hn));
	memcpy(y, out[1].data, sizeof(y));
	for (int b = 0; b < N; b++) {
		gearrt_tensor row[2] = { in[0], in[1] };
		row[0].dims[0] = 1, row[1].dims[1] = 1;
		row[0].data = x + b * 8, row[1].data = h + b * 16;
		row[0].size = 8 * sizeof(float);
		row[1].size = 16 * sizeof(float);
		cr_assert_eq(gearrt_run(s, row, 2, one, 2), GEARRT_OK, "%s",
			     gearrt_last_error());
		cr_assert_eq(gearrt_last_gear(s), 0);
		const float *hb = one[0].data, *yb = one[1].data;
		for (int e = 0; e < 16; e++)
			cr_expect(fabsf(hn[b * 16 + e] - hb[e]) <= 1e-6f,
				  "row %d state %d: %g, alone %g", b, e,
				  hn[b * 16 + e], hb[e]);
		for (int e = 0; e < 4; e++)
			cr_expect(fabsf(y[b * 4 + e] - yb[e]) <= 1e-5f,
				  "row %d y %d: %g, alone %g", b, e,
				  y[b * 4 + e], yb[e]);
	}
	free(x);
	free(h);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	free(om);
	remove_tree(dir);
	free(dir);
}

Test(padbatch, refusals_name_the_node_or_the_gears)
{
	char *dir = temp_dir();
	char *om = compile_pb(dir, "mix_reduce", "-1,4,8");
	char *cnn = compile_pb(dir, "cnn", "-1,3,8,8");
	gearrt_model *m, *mc;
	gearrt_session *s, *sc, *plain;
	gearrt_options o = { .threads = 1, .pad_batch = 1 };
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK);
	cr_assert_eq(gearrt_session_create(m, &o, &s), GEARRT_OK);
	float x[3 * 3 * 8 * 8] = { 0 };
	gearrt_tensor in = { .dtype = GEARRT_FLOAT32, .rank = 3,
			     .dims = { 3, 4, 8 }, .data = x,
			     .size = 3 * 4 * 8 * sizeof(float) };
	gearrt_tensor out = { 0 };
	cr_expect_eq(gearrt_run(s, &in, 1, &out, 1), GEARRT_E_NO_GEAR);
	cr_expect(strstr(gearrt_last_error(),
			 "pad_batch: the batch may not be padded (node "
			 "'reducemean_0_batch_1' (ReduceMean) mixes the rows)"),
		  "%s", gearrt_last_error());
	/* a batch no gear holds, and pad_batch off: the gears listed */
	cr_assert_eq(gearrt_model_open(cnn, &mc), GEARRT_OK);
	cr_assert_eq(gearrt_session_create(mc, &o, &sc), GEARRT_OK);
	cr_assert_eq(gearrt_session_create(mc, NULL, &plain), GEARRT_OK);
	float *big = calloc(9 * 3 * 8 * 8, sizeof(float));
	gearrt_tensor x9 = { .dtype = GEARRT_FLOAT32, .rank = 4,
			     .dims = { 9, 3, 8, 8 }, .data = big,
			     .size = 9 * 3 * 8 * 8 * sizeof(float) };
	cr_expect_eq(gearrt_run(sc, &x9, 1, &out, 1), GEARRT_E_NO_GEAR);
	cr_expect(strstr(gearrt_last_error(), "gears are: 1; 4; 8"), "%s",
		  gearrt_last_error());
	gearrt_tensor x3 = x9;
	x3.dims[0] = 3;
	cr_expect_eq(gearrt_run(plain, &x3, 1, &out, 1), GEARRT_E_NO_GEAR);
	/* a caller's buffer too small for the sliced output */
	float tiny[2];
	gearrt_tensor small = { .data = tiny, .size = sizeof(tiny) };
	cr_expect_eq(gearrt_run(sc, &x3, 1, &small, 1), GEARRT_E_OUTPUT);
	cr_expect(strstr(gearrt_last_error(), "needs 60 bytes"), "%s",
		  gearrt_last_error());
	free(big);
	gearrt_session_destroy(s);
	gearrt_session_destroy(sc);
	gearrt_session_destroy(plain);
	gearrt_model_close(m);
	gearrt_model_close(mc);
	free(om);
	free(cnn);
	remove_tree(dir);
	free(dir);
}

/* A file whose batch rows say what cannot be (an input axis list of the
 * wrong length, an axis that is no gear axis, no input with the batch):
 * refused on open, naming it. */
Test(padbatch, the_files_batch_rows_are_checked)
{
	static const struct {
		int32_t n, a0, a1;
		const char *want;
	} cases[] = {
		{ 1, 0, 1, "batch rows: 1 input axes for 2 inputs" },
		{ 2, 0, 2, "input 1's axis 2 is no gear axis" },
		{ 2, 1, 1, "input 0's axis 1 is no gear axis" },
		{ 2, -1, -1, "no input has the batch" },
	};
	Fx x = fx_compile("padbatch/rnn_state.onnx", "x:-1,8;h:1,-1,16",
			  "--dynamic_dims=1,1;4,4;8,8");
	Gearom__BatchRows *b = x.f.model->batch_rows;
	cr_assert(b && b->n_input_axis == 2);
	int32_t axes[2];
	int32_t *keep = b->input_axis;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		b->n_input_axis = (size_t)cases[i].n;
		axes[0] = cases[i].a0, axes[1] = cases[i].a1;
		b->input_axis = axes;
		omedit_write(x.data, x.f.model, x.om);
		gearrt_model *m = NULL;
		cr_expect_eq(gearrt_model_open(x.om, &m), GEARRT_E_FILE,
			     "case %zu opened", i);
		cr_expect(strstr(gearrt_last_error(), cases[i].want),
			  "case %zu: %s", i, gearrt_last_error());
		gearrt_model_close(m);
	}
	b->input_axis = keep;
	b->n_input_axis = 2;
	fx_free(&x);
}
