/*
 * tests/test_fuse.c - the fuse pass (passes/fuse.c): each pattern of
 * tests/fixtures/fuse/ (made by tests/gen_fuse_models.py) is fused as
 * dumped, computes what the unfused graph computes through libgearrt,
 * stores folded weights once for all gears, and exports back to ONNX
 * that compiles and computes the same.
 */
#include <math.h>

#include "runtime/gearrt.h"
#include "testrun.h"

/* Compiles tests/fixtures/fuse/MODEL.onnx into dir/OUT.om; extra is a
 * further flag or NULL.  Returns the .om path (malloc'd). */
static char *fcompile(const char *dir, const char *model, const char *out,
		      const char *shape, const char *batches,
		      const char *extra)
{
	char m[512], s[256], b[256], o[512];
	char *path = path_in(dir, out);
	snprintf(m, sizeof(m), "--model=tests/fixtures/fuse/%s.onnx", model);
	snprintf(s, sizeof(s), "--input_shape=%s", shape);
	snprintf(b, sizeof(b), "--dynamic_batch_size=%s", batches);
	snprintf(o, sizeof(o), "--output=%s", path);
	Run r = batches ? run_gearc(m, s, b, o, "-q", extra)
			: run_gearc(m, s, o, "-q", extra);
	cr_assert_eq(r.status, 0, "compile %s: %s", model, r.err);
	run_free(&r);
	char *om = malloc(strlen(path) + 4);
	sprintf(om, "%s.om", path);
	free(path);
	return om;
}

/* Runs om on x (shape dims[0..rank)) and returns output 0 (malloc'd,
 * *n floats). */
static float *run_om(const char *om, const int64_t *dims, int rank,
		     size_t *n)
{
	gearrt_model *m;
	gearrt_session *s;
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, NULL, &s), GEARRT_OK);
	gearrt_tensor in = { .dtype = GEARRT_FLOAT32, .rank = rank };
	size_t k = 1;
	for (int i = 0; i < rank; i++)
		k *= (size_t)(in.dims[i] = dims[i]);
	float *x = malloc(k * sizeof(float));
	for (size_t i = 0; i < k; i++)
		x[i] = (float)((int)(i * 7 % 23) - 11) / 5.0f;
	in.data = x;
	in.size = k * sizeof(float);
	gearrt_tensor out = { 0 };
	cr_assert_eq(gearrt_run(s, &in, 1, &out, 1), GEARRT_OK, "%s: %s", om,
		     gearrt_last_error());
	*n = out.size / sizeof(float);
	float *y = malloc(out.size);
	memcpy(y, out.data, out.size);
	free(x);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	return y;
}

static void expect_close(const float *a, const float *b, size_t n,
			 const char *what)
{
	double worst = 0;
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)a[i] - b[i]);
		worst = d > worst ? d : worst;
	}
	cr_expect(worst <= 1e-5, "%s: max difference %g", what, worst);
}

static char *dump(const char *om, const char *fmt)
{
	char f[64];
	snprintf(f, sizeof(f), "--format=%s", fmt);
	Run r = run_gearc("dump", f, om);
	cr_assert_eq(r.status, 0, "dump %s: %s", om, r.err);
	char *out = strdup(r.out);
	run_free(&r);
	return out;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* needle's bytes occur in p[0..n). */
static bool has_bytes(const char *p, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; i + k <= n; i++)
		if (!memcmp(p + i, needle, k))
			return true;
	return false;
}

typedef struct Case {
	const char *model, *shape;
	int rank;
	int64_t dims[4]; /* batch 2 */
	const char *expect[3]; /* in the fused dump, per gear branch */
	const char *gone;      /* op no longer in the fused graphs */
} Case;

static const Case cases[] = {
	{ "conv_bn_relu", "x:-1,4,8,8", 4, { 2, 4, 8, 8 },
	  { "FusedConv", "[Relu]", "c1.w_bn, c1.w_bn_bias" }, "BatchNormalization" },
	{ "conv_res_hswish", "x:-1,4,8,8", 4, { 2, 4, 8, 8 },
	  { "x, c1.w, -, x -> y", "[HardSwish]", NULL }, "Clip" },
	{ "conv_hsig_forms", "x:-1,4,8,8", 4, { 2, 4, 8, 8 },
	  { "-> h", "[HardSwish]", "c2.w_k, c2.w_k_k_bias, - -> y" },
	  "Add" },
	{ "conv_acts17", "x:-1,4,8,8", 4, { 2, 4, 8, 8 },
	  { "[HardSigmoid(0.166667,0), LeakyRelu(0.2,0), Tanh]",
	    "[HardSwish]", NULL }, "Div" },
	{ "matmul_bias", "x:-1,6,16", 3, { 2, 6, 16 },
	  { "FusedMatMul", "x, mw, mb -> y", "[Sigmoid]" }, "Add" },
	{ "gemm_bn", "x:-1,6,16", 3, { 2, 6, 16 },
	  { "FusedGemm", "gw_bn, gw_bn_bias", "[HardSigmoid(0.3,0.6)]" },
	  "BatchNormalization" },
	{ "convt_bn", "x:-1,4,8,8", 4, { 2, 4, 8, 8 },
	  { "ConvTranspose", "tw_bn, tw_bn_bias", NULL }, "BatchNormalization" },
	{ "matmul_gelu", "x:-1,6,16", 3, { 2, 6, 16 },
	  { "x, gm, gb -> g", "g, gm2, - -> y", NULL }, "Erf" },
	{ "matmul_linear", "x:-1,6,16", 3, { 2, 6, 16 },
	  { "[Linear(0.25,-1)]", "x, xt, - -> y", NULL }, "Div" },
	{ "conv_res_shortcut_bn", "x:-1,4,8,8", 4, { 2, 4, 8, 8 },
	  { "x, c3.w_bn, c3.w_bn_bias -> f", "c2.w_bn_bias, f -> y",
	    NULL }, "BatchNormalization" },
	{ "conv_paddle_hswish", "x:-1,4,8,8", 4, { 2, 4, 8, 8 },
	  { "x, c1.w_k, c1.w_k_k_bias, - -> y", "[HardSwish, Linear(0.17,0.2)]",
	    NULL }, "Clip" },
	{ "conv_chan_affine", "x:-1,4,8,8", 4, { 2, 4, 8, 8 },
	  { "x, c1.w_k_k, c1.w_k_k_bias_2, - -> r", "[Relu]",
	    "r, c2.w_k, c2.w_k_bias -> y" }, "Sub" },
	{ "matmul_layernorm", "x:-1,6,16", 3, { 2, 6, 16 },
	  { "LayerNormalization", "r, gamma, beta -> ln", NULL },
	  "ReduceMean" },
	{ "layernorm_muls", "x:-1,6,16", 3, { 2, 6, 16 },
	  { "LayerNormalization", "x, gamma -> y", NULL }, "ReduceMean" },
};

Test(fuse, patterns_fuse_and_compute_the_same)
{
	char *dir = temp_dir();
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const Case *k = &cases[c];
		char *on = fcompile(dir, k->model, "on", k->shape, "1,2", NULL);
		char *off = fcompile(dir, k->model, "off", k->shape, "1,2",
				     "--no-fuse");
		char *t = dump(on, "text"), *t0 = dump(off, "text");
		for (int i = 0; i < 3; i++)
			cr_expect(!k->expect[i] || count(t, k->expect[i]) == 2,
				  "%s: '%s' not once per gear in\n%s", k->model,
				  k->expect[i], t);
		cr_expect(!strstr(t, k->gone), "%s: %s left in\n%s", k->model,
			  k->gone, t);
		cr_expect(strstr(t0, k->gone) && !strstr(t0, "Fused"),
			  "%s: --no-fuse fused", k->model);
		size_t n1, n0;
		float *y1 = run_om(on, k->dims, k->rank, &n1);
		float *y0 = run_om(off, k->dims, k->rank, &n0);
		cr_assert_eq(n1, n0);
		expect_close(y1, y0, n1, k->model);
		free(y1);
		free(y0);
		free(t);
		free(t0);
		free(on);
		free(off);
	}
	remove_tree(dir);
	free(dir);
}

/* The number after "key" after "section" in gearc dump's JSON. */
static long json_num(const char *om, const char *section, const char *key)
{
	char *j = dump(om, "json"), sk[64], kk[64];
	snprintf(sk, sizeof(sk), "\"%s\"", section);
	snprintf(kk, sizeof(kk), "\"%s\"", key);
	const char *w = strstr(j, sk);
	cr_assert(w, "%s: no %s", om, sk);
	const char *c = strstr(w, kk);
	cr_assert(c);
	long n = atol(strchr(c, ':') + 1);
	free(j);
	return n;
}

Test(fuse, folded_weights_are_stored_once_for_all_gears)
{
	char *dir = temp_dir();
	char *one = fcompile(dir, "conv_bn_relu", "one", "x:1,4,8,8", NULL,
			     NULL);
	char *four = fcompile(dir, "conv_bn_relu", "four", "x:-1,4,8,8",
			      "1,2,4,8", "-j2");
	char *off = fcompile(dir, "conv_bn_relu", "off", "x:-1,4,8,8",
			     "1,2,4,8", "--no-fuse");
	/* c1.w and c1.b become the folded c1.w_bn and its bias (computed
	 * constants, no weight left); the four gears store them once: the
	 * gear compile's constants are those two and the gear table the
	 * unfused compile has too */
	cr_expect_eq(json_num(one, "weights", "count"), 0);
	cr_expect_eq(json_num(one, "constants", "count"), 2);
	cr_expect_eq(json_num(four, "weights", "count"), 0);
	cr_expect_eq(json_num(four, "constants", "count"),
		     2 + json_num(off, "constants", "count"));
	cr_expect_eq(json_num(four, "constants", "bytes"),
		     json_num(one, "constants", "bytes") +
			     json_num(off, "constants", "bytes"));
	cr_expect_eq(json_num(off, "weights", "count"), 6);
	char *again = fcompile(dir, "conv_bn_relu", "again", "x:-1,4,8,8",
			       "1,2,4,8", "-j1");
	size_t na = 0, nb = 0;
	char *a = read_file(four, &na), *b = read_file(again, &nb);
	cr_expect(na == nb && !memcmp(a, b, na), "-j2 and -j1 differ");
	free(a);
	free(b);
	free(again);
	free(one);
	free(four);
	free(off);
	remove_tree(dir);
	free(dir);
}

Test(fuse, export_lowers_fused_ops_to_onnx)
{
	char *dir = temp_dir();
	const char *models[] = { "conv_res_hswish", "conv_acts17",
				 "conv_hsig_forms", "matmul_bias", "gemm_bn",
				 "matmul_gelu", "matmul_linear",
				 "conv_paddle_hswish", "conv_chan_affine",
				 "matmul_layernorm", "layernorm_muls" };
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		const Case *k = NULL;
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
			if (!strcmp(cases[c].model, models[i]))
				k = &cases[c];
		char *on = fcompile(dir, k->model, "on", k->shape, "1,2", NULL);
		char *onnx = path_in(dir, "g1.onnx"), o[512], s[256], m[512];
		snprintf(o, sizeof(o), "--output=%s", onnx);
		Run r = run_gearc("export", on, "--gear=1", o);
		cr_assert_eq(r.status, 0, "export %s: %s", k->model, r.err);
		run_free(&r);
		size_t n = 0;
		char *bytes = read_file(onnx, &n);
		cr_expect(!has_bytes(bytes, n, "Fused") &&
			  !has_bytes(bytes, n, "ai.gearc"),
			  "%s: gearc's op exported", k->model);
		/* the models' opsets are all before 17, the fused
		 * LayerNormalization's: written out again */
		cr_expect(!has_bytes(bytes, n, "LayerNormalization"),
			  "%s: LayerNormalization exported before opset 17",
			  k->model);
		free(bytes);
		/* the exported gear compiles as a static model and computes
		 * what the fused .om does */
		char *back = path_in(dir, "back");
		snprintf(m, sizeof(m), "--model=%s", onnx);
		snprintf(o, sizeof(o), "--output=%s", back);
		snprintf(s, sizeof(s), "--input_shape=x:2,%s",
			 k->rank == 4 ? "4,8,8" : "6,16");
		r = run_gearc(m, s, o, "-q", "--no-fuse");
		cr_assert_eq(r.status, 0, "compile export of %s: %s", k->model,
			     r.err);
		run_free(&r);
		char *bom = malloc(strlen(back) + 4);
		sprintf(bom, "%s.om", back);
		size_t n1, n0;
		float *y1 = run_om(on, k->dims, k->rank, &n1);
		float *y0 = run_om(bom, k->dims, k->rank, &n0);
		cr_assert_eq(n1, n0);
		expect_close(y1, y0, n1, k->model);
		free(y1);
		free(y0);
		free(bom);
		free(back);
		free(onnx);
		free(on);
	}
	remove_tree(dir);
	free(dir);
}
