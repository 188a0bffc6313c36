/*
 * tests/test_fuse.c - the fuse pass (passes/fuse.c): each pattern of
 * tests/fixtures/fuse/ (made by tests/gen_fuse_models.py) is fused as
 * dumped, computes what the unfused graph computes through libgearrt,
 * stores folded weights once for all gears, and exports back to ONNX
 * that compiles and computes the same; and the same for the written-out
 * activations and LayerNorms of each exporter's spelling, built here
 * (tests/synth.h's helpers, written with onnx_write); and for each
 * precondition of each fusion, a near miss of tests/fixtures/fuse/misses/
 * (tests/gen_fuse_misses.py) that does not fuse and computes what
 * --no-fuse does.
 */
#include <math.h>

#include "runtime/gearrt.h"
#include "serializer/export.h"
#include "synth.h"
#include "testrun.h"

/* Compiles the model at path into dir/OUT.om with --input_shape=shape
 * and --dynamic_batch_size=batches (each unless NULL); extra is a
 * further flag or NULL.  Returns the .om path (malloc'd). */
static char *compile_to(const char *dir, const char *path, const char *out,
			const char *shape, const char *batches,
			const char *extra)
{
	char m[512], s[256], b[256], o[512];
	const char *args[8] = { m, o, "-q" };
	int n = 3;
	char *dst = path_in(dir, out);
	snprintf(m, sizeof(m), "--model=%s", path);
	snprintf(s, sizeof(s), "--input_shape=%s", shape);
	snprintf(b, sizeof(b), "--dynamic_batch_size=%s", batches);
	snprintf(o, sizeof(o), "--output=%s", dst);
	if (shape)
		args[n++] = s;
	if (batches)
		args[n++] = b;
	args[n++] = extra;
	Run r = run_gearcv(args);
	cr_assert_eq(r.status, 0, "compile %s: %s", path, r.err);
	run_free(&r);
	char *om = malloc(strlen(dst) + 4);
	sprintf(om, "%s.om", dst);
	free(dst);
	return om;
}

/* Compiles tests/fixtures/fuse/MODEL.onnx (compile_to). */
static char *fcompile(const char *dir, const char *model, const char *out,
		      const char *shape, const char *batches,
		      const char *extra)
{
	char m[512];
	snprintf(m, sizeof(m), "tests/fixtures/fuse/%s.onnx", model);
	return compile_to(dir, m, out, shape, batches, extra);
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

/* a and b agree within 1e-5, relative where |b| > 1 (oneDNN's post-ops
 * against the unfused ops' kernels). */
static void expect_close(const float *a, const float *b, size_t n,
			 const char *what)
{
	double worst = 0;
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)a[i] - b[i]) / fmax(1, fabs(b[i]));
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

/* ---- exporters' spellings, built here ---------------------------------- */

/* A scalar float constant. */
static ValId sy_k(Synth *s, float v)
{
	return tu_weight_data(s->g, sy_name(s, "k"), DT_FLOAT, SCALAR, &v);
}

/* A float weight of shape sh, of small values that are not all zero. */
static ValId sy_w(Synth *s, Shape sh)
{
	int64_t n = shape_numel(&sh);
	float *v = arena_array(&s->m->arena, (size_t)n, sizeof(float));
	for (int64_t i = 0; i < n; i++)
		v[i] = (float)((i * 37) % 17 - 8) / 16;
	return tu_weight_data(s->g, sy_name(s, "w"), DT_FLOAT, sh, v);
}

#define UN(op, x) sy_unary(s, op, x)
#define BIN(op, a, b) sy_binary(s, op, a, b)

/* ---- the spellings, each of x ------------------------------------------ */

static ValId silu_torch(Synth *s, ValId x)
{
	return BIN("Mul", x, UN("Sigmoid", x));
}

static ValId silu_tf(Synth *s, ValId x)
{
	return BIN("Mul", UN("Sigmoid", x), x);
}

/* torch.onnx: Div by sqrt(2) as a float, 0.5 after the product */
static ValId gelu_erf_div(Synth *s, ValId x)
{
	ValId e = UN("Erf", BIN("Div", x, sy_k(s, 1.4142135f)));
	return BIN("Mul", BIN("Mul", x, BIN("Add", e, sy_k(s, 1))),
		   sy_k(s, 0.5f));
}

/* tf2onnx: Mul by 0.7071 (constant first), 0.5 on x's side */
static ValId gelu_erf_mul(Synth *s, ValId x)
{
	ValId e = UN("Erf", BIN("Mul", sy_k(s, 0.70710677f), x));
	return BIN("Mul", BIN("Add", sy_k(s, 1), e),
		   BIN("Mul", x, sy_k(s, 0.5f)));
}

/* the 0.5 on the erf arm */
static ValId gelu_erf_arm_half(Synth *s, ValId x)
{
	ValId e = UN("Erf", BIN("Mul", x, sy_k(s, 0.70710677f)));
	return BIN("Mul", x,
		   BIN("Mul", BIN("Add", e, sy_k(s, 1)), sy_k(s, 0.5f)));
}

/* torch.onnx's approximate="tanh": Pow(x, 3), constants first, x * 0.5
 * first */
static ValId gelu_tanh_pow(Synth *s, ValId x)
{
	ValId c = BIN("Pow", x, sy_k(s, 3));
	ValId u = BIN("Add", x, BIN("Mul", sy_k(s, 0.044715f), c));
	ValId t = UN("Tanh", BIN("Mul", sy_k(s, 0.7978846f), u));
	return BIN("Mul", BIN("Mul", x, sy_k(s, 0.5f)),
		   BIN("Add", sy_k(s, 1), t));
}

/* x * x * x, the 0.5 after the product (Hugging Face's NewGELU) */
static ValId gelu_tanh_cube(Synth *s, ValId x)
{
	ValId c = BIN("Mul", BIN("Mul", x, x), x);
	ValId u = BIN("Add", BIN("Mul", c, sy_k(s, 0.044715f)), x);
	ValId t = UN("Tanh", BIN("Mul", u, sy_k(s, 0.7978846f)));
	return BIN("Mul", BIN("Mul", x, BIN("Add", t, sy_k(s, 1))),
		   sy_k(s, 0.5f));
}

static ValId mish_op(Synth *s, ValId x)
{
	return BIN("Mul", x, UN("Tanh", UN("Softplus", x)));
}

/* Softplus as Log(1 + Exp(x)) */
static ValId mish_log(Synth *s, ValId x)
{
	ValId sp = UN("Log", BIN("Add", sy_k(s, 1), UN("Exp", x)));
	return BIN("Mul", UN("Tanh", sp), x);
}

/* Paddle2ONNX's HardSwish, x * Clip(x + 3, 0, 6) / 6 */
static ValId hswish_paddle(Synth *s, ValId x)
{
	Node *c = tu_node(s->g, "Clip", sy_name(s, "clip"),
			  IDS(BIN("Add", x, sy_k(s, 3)), sy_k(s, 0), sy_k(s, 6)),
			  1);
	return BIN("Div", BIN("Mul", x, tu_out(c, 0)), sy_k(s, 6));
}

/* Standard ops that are rows of compiler/act.h's table, with an
 * attribute or the defaults: fused from the table. */
static ValId elu_half(Synth *s, ValId x)
{
	Node *n = tu_node(s->g, "Elu", sy_name(s, "elu"), IDS(x), 1);
	tu_float(s->g, n, "alpha", 0.5f);
	return tu_out(n, 0);
}

/* PRelu by one slope of +0 or more: LeakyRelu, to the bit */
static ValId prelu_scalar(Synth *s, ValId x)
{
	return BIN("PRelu", x, sy_k(s, 0.25f));
}

static ValId prelu_one(Synth *s, ValId x)
{
	float v = 0.5f;
	return BIN("PRelu", x, tu_weight_data(s->g, sy_name(s, "k"), DT_FLOAT,
					      SHAPE(1, 1, 1), &v));
}

/* and what stays PRelu: a negative slope (oneDNN's relu would flip the
 * sign of a zero), one per channel */
static ValId prelu_negative(Synth *s, ValId x)
{
	return BIN("PRelu", x, sy_k(s, -0.5f));
}

static ValId prelu_channels(Synth *s, ValId x)
{
	return BIN("PRelu", x, sy_w(s, SHAPE(4, 1, 1)));
}

/* tf2onnx's clamp after a LeakyRelu: Max(x, c), Min(c, x): a Clip */
static ValId leaky_max(Synth *s, ValId x)
{
	Node *n = tu_node(s->g, "LeakyRelu", sy_name(s, "lr"), IDS(x), 1);
	tu_float(s->g, n, "alpha", 0.125f);
	return BIN("Max", tu_out(n, 0), sy_k(s, -0.5f));
}

static ValId relu_min_first(Synth *s, ValId x)
{
	return BIN("Min", sy_k(s, 6.0f), UN("Relu", x));
}

/* Max(0, x): a tie of zeros keeps the constant's sign, Clip x's */
static ValId max_zero_first(Synth *s, ValId x)
{
	return BIN("Max", sy_k(s, 0.0f), x);
}

static ValId selu_softplus(Synth *s, ValId x)
{
	return UN("Softplus", UN("Selu", x));
}

/* ReduceMean over the last axis, dims kept. */
static ValId mean_last(Synth *s, ValId x)
{
	Node *n = tu_node(s->g, "ReduceMean", sy_name(s, "mean"), IDS(x), 1);
	tu_ints(s->g, n, "axes", INTS(-1));
	return tu_out(n, 0);
}

/* LayerNorm with rsqrt by rsqrt(s, v) and Mul (tf2onnx), of x [.., 16]. */
static ValId layernorm(Synth *s, ValId x, ValId (*rsqrt)(Synth *, ValId))
{
	ValId d = BIN("Sub", x, mean_last(s, x));
	ValId v = mean_last(s, BIN("Mul", d, d));
	ValId r = rsqrt(s, BIN("Add", v, sy_k(s, 1e-5f)));
	ValId y = BIN("Mul", BIN("Mul", d, r), sy_w(s, SHAPE(16)));
	return BIN("Add", y, sy_w(s, SHAPE(16)));
}

static ValId rsqrt_reciprocal(Synth *s, ValId v)
{
	return UN("Reciprocal", UN("Sqrt", v));
}

static ValId rsqrt_pow(Synth *s, ValId v)
{
	return BIN("Pow", v, sy_k(s, -0.5f));
}

static ValId ln_reciprocal(Synth *s, ValId x)
{
	return layernorm(s, x, rsqrt_reciprocal);
}

static ValId ln_pow(Synth *s, ValId x)
{
	return layernorm(s, x, rsqrt_pow);
}

/* A residual Add after the activation (U-Net's RSU blocks), of the
 * model's input x (the Conv's, same shape) */
static ValId relu_residual(Synth *s, ValId x)
{
	return BIN("Add", UN("Relu", x), s->g->inputs[0]);
}

/* the residual first, then another activation after the Add */
static ValId relu_residual_relu(Synth *s, ValId x)
{
	return UN("Relu", BIN("Add", s->g->inputs[0], UN("Relu", x)));
}

/* torch.onnx's Dropout in training mode with a ratio of 0 (Swin-T's
 * attention), after a Relu; and one in inference (no training_mode):
 * gone, as the Identity they become */
static ValId dropout_ratio0(Synth *s, ValId x)
{
	static const uint8_t on = 1;
	ValId t = tu_weight_data(s->g, sy_name(s, "train"), DT_BOOL, SCALAR,
				 &on);
	Node *n = tu_node(s->g, "Dropout", sy_name(s, "drop"),
			  IDS(UN("Relu", x), sy_k(s, 0.0f), t), 1);
	return tu_out(n, 0);
}

static ValId dropout_inference(Synth *s, ValId x)
{
	Node *n = tu_node(s->g, "Dropout", sy_name(s, "drop"),
			  IDS(UN("Relu", x)), 1);
	return tu_out(n, 0);
}

/* A Pad of 0 on every side (torch.onnx's before each AvgPool2d), after
 * a Relu: pads as an input (opset 11 on), in reflect mode too, and as
 * the attribute of opset 2 to 10: gone, as the Identity it becomes */
static ValId pad_zero(Synth *s, ValId x, const char *mode)
{
	static const int64_t zeros[6] = { 0 };
	ValId p = tu_weight_data(s->g, sy_name(s, "pads"), DT_INT64,
				 SHAPE(6), zeros);
	Node *n = tu_node(s->g, "Pad", sy_name(s, "pad"), IDS(UN("Relu", x), p),
			  1);
	tu_str(s->g, n, "mode", mode);
	return tu_out(n, 0);
}

static ValId pad_zero_constant(Synth *s, ValId x)
{
	return pad_zero(s, x, "constant");
}

static ValId pad_zero_reflect(Synth *s, ValId x)
{
	return pad_zero(s, x, "reflect");
}

static ValId pad_zero_opset10(Synth *s, ValId x)
{
	s->m->opsets[0].version = 10;
	Node *n = tu_node(s->g, "Pad", sy_name(s, "pad"), IDS(UN("Relu", x)),
			  1);
	tu_ints(s->g, n, "pads", INTS(0, 0, 0, 0, 0, 0));
	return tu_out(n, 0);
}

/* ---- the models ---------------------------------------------------------- */

enum { ANCHOR_MATMUL, ANCHOR_CONV, ANCHOR_NONE };

typedef struct Form {
	const char *name;
	ValId (*spell)(Synth *s, ValId x);
	int anchor;
	const char *expect; /* in the fused dump */
	const char *gone;   /* an op no longer there */
} Form;

static const Form forms[] = {
	{ "silu_torch", silu_torch, ANCHOR_MATMUL, "[Silu]", "Sigmoid" },
	{ "silu_tf", silu_tf, ANCHOR_CONV, "[Silu]", "Sigmoid" },
	{ "gelu_erf_div", gelu_erf_div, ANCHOR_MATMUL, "[Gelu]", "Erf" },
	{ "gelu_erf_mul", gelu_erf_mul, ANCHOR_MATMUL, "[Gelu]", "Erf" },
	{ "gelu_erf_arm_half", gelu_erf_arm_half, ANCHOR_MATMUL, "[Gelu]",
	  "Erf" },
	{ "gelu_tanh_pow", gelu_tanh_pow, ANCHOR_MATMUL, "[GeluTanh]",
	  "Tanh" },
	{ "gelu_tanh_cube", gelu_tanh_cube, ANCHOR_CONV, "[GeluTanh]",
	  "Tanh" },
	{ "mish_op", mish_op, ANCHOR_CONV, "[Mish]", "Softplus" },
	{ "mish_log", mish_log, ANCHOR_MATMUL, "[Mish]", "Exp" },
	{ "elu_half", elu_half, ANCHOR_CONV, "[Elu(0.5,0)]", "Elu" },
	{ "prelu_scalar", prelu_scalar, ANCHOR_CONV, "[LeakyRelu(0.25,0)]",
	  "PRelu" },
	{ "prelu_one", prelu_one, ANCHOR_MATMUL, "[LeakyRelu(0.5,0)]",
	  "PRelu" },
	{ "leaky_max", leaky_max, ANCHOR_CONV, "[LeakyRelu(0.125,0), Clip(-0.5,",
	  "Max" },
	{ "relu_min_first", relu_min_first, ANCHOR_MATMUL,
	  "[Relu, Clip(-inf,6)]", "Min" },
	{ "selu_softplus", selu_softplus, ANCHOR_MATMUL,
	  "[Selu(1.67326,1.0507), Softplus]", "Selu" },
	/* after no Conv/Gemm/MatMul: one FusedActivation */
	{ "silu_alone", silu_tf, ANCHOR_NONE, "[Silu]", "Sigmoid" },
	{ "gelu_erf_alone", gelu_erf_mul, ANCHOR_NONE, "[Gelu]", "Erf" },
	{ "gelu_tanh_alone", gelu_tanh_cube, ANCHOR_NONE, "[GeluTanh]",
	  "Tanh" },
	{ "mish_alone", mish_log, ANCHOR_NONE, "[Mish]", "Exp" },
	{ "hswish_alone", hswish_paddle, ANCHOR_NONE, "[HardSwish]",
	  "Clip" },
	{ "ln_reciprocal", ln_reciprocal, ANCHOR_NONE, "LayerNormalization",
	  "Reciprocal" },
	{ "ln_pow", ln_pow, ANCHOR_NONE, "LayerNormalization", "ReduceMean" },
	{ "relu_residual", relu_residual, ANCHOR_CONV, "[Relu, +Z]", "Add" },
	{ "relu_residual_relu", relu_residual_relu, ANCHOR_CONV,
	  "[Relu, +Z, Relu]", "Add" },
	/* (the Identity makes the graph's output: the Relu writes it) */
	{ "dropout_ratio0", dropout_ratio0, ANCHOR_NONE, " Relu ", "Dropout" },
	{ "dropout_inference", dropout_inference, ANCHOR_NONE, " Relu ",
	  "Dropout" },
	{ "pad_zero_constant", pad_zero_constant, ANCHOR_NONE, " Relu ",
	  "Pad" },
	{ "pad_zero_reflect", pad_zero_reflect, ANCHOR_NONE, " Relu ", "Pad" },
	{ "pad_zero_opset10", pad_zero_opset10, ANCHOR_NONE, " Relu ", "Pad" },
};

/* x [2, 8, 16] through MatMul (+ bias), x [2, 4, 8, 8] through a Conv,
 * or x [2, 8, 16] alone, then f's spelling. */
static Model *form_model(const Form *f)
{
	Synth sy = sy_begin(f->name), *s = &sy;
	ValId x, y;
	if (f->anchor == ANCHOR_CONV) {
		x = tu_input(s->g, "x", DT_FLOAT, SHAPE(2, 4, 8, 8));
		Node *n = tu_node(s->g, "Conv", "conv",
				  IDS(x, sy_w(s, SHAPE(4, 4, 3, 3)),
				      sy_w(s, SHAPE(4))), 1);
		tu_ints(s->g, n, "kernel_shape", INTS(3, 3));
		tu_ints(s->g, n, "pads", INTS(1, 1, 1, 1));
		y = tu_out(n, 0);
	} else {
		x = tu_input(s->g, "x", DT_FLOAT, SHAPE(2, 8, 16));
		y = f->anchor == ANCHOR_NONE
			    ? x
			    : BIN("Add", BIN("MatMul", x, sy_w(s, SHAPE(16, 16))),
				  sy_w(s, SHAPE(16)));
	}
	Model *m = sy_end(s, f->spell(s, y));
	cr_assert(m, "%s: %s", f->name, last_error());
	m->ir_version = 8;
	return m;
}

Test(fuse, exporter_spellings_fuse_compute_the_same_and_export)
{
	char *dir = temp_dir();
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const Form *f = &forms[i];
		bool conv = f->anchor == ANCHOR_CONV;
		const int64_t *dims = conv ? (int64_t[]){ 2, 4, 8, 8 }
					   : (int64_t[]){ 2, 8, 16 };
		int rank = conv ? 4 : 3;
		char *onnx = path_in(dir, "m.onnx");
		Model *m = form_model(f);
		OnnxExport ox = { 0 };
		cr_assert_eq(onnx_write(m, m->graph, &ox, onnx), 0, "%s: %s",
			     f->name, last_error());
		model_free(m);
		char *on = compile_to(dir, onnx, "on", NULL, NULL, NULL);
		char *off = compile_to(dir, onnx, "off", NULL, NULL,
				       "--no-fuse");
		char *t = dump(on, "text"), *t0 = dump(off, "text"), gone[64];
		snprintf(gone, sizeof(gone), " %s ", f->gone); /* the op */
		cr_expect(strstr(t, f->expect) && !strstr(t, gone),
			  "%s: no %s, or %s left, in\n%s", f->name, f->expect,
			  f->gone, t);
		cr_expect(strstr(t0, gone), "%s: --no-fuse fused", f->name);
		size_t n1, n0, nb;
		float *y1 = run_om(on, dims, rank, &n1);
		float *y0 = run_om(off, dims, rank, &n0);
		cr_assert_eq(n1, n0);
		expect_close(y1, y0, n1, f->name);
		/* exported back: standard ONNX, computing the same */
		char *back = path_in(dir, "back.onnx"), o[512];
		snprintf(o, sizeof(o), "--output=%s", back);
		Run r = run_gearc("export", on, o);
		cr_assert_eq(r.status, 0, "export %s: %s", f->name, r.err);
		run_free(&r);
		size_t nbytes = 0;
		char *bytes = read_file(back, &nbytes);
		cr_expect(!has_bytes(bytes, nbytes, "ai.gearc"),
			  "%s: gearc's op exported", f->name);
		free(bytes);
		char *bom = compile_to(dir, back, "back", NULL, NULL,
				       "--no-fuse");
		float *yb = run_om(bom, dims, rank, &nb);
		cr_assert_eq(nb, n0);
		expect_close(yb, y0, nb, f->name);
		free(yb);
		free(bom);
		free(back);
		free(y1);
		free(y0);
		free(t);
		free(t0);
		free(on);
		free(off);
		free(onnx);
	}
	remove_tree(dir);
	free(dir);
}

/* A FusedConv of x [1,2,5,5] with Z, one Relu and z_after k (with_z:
 * Z given). */
static Model *z_after_model(int64_t k, bool with_z)
{
	Model *m = tu_model(17);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 2, 5, 5));
	ValId z = tu_input(g, "z", DT_FLOAT, SHAPE(1, 3, 5, 5));
	ValId w = tu_weight(g, "w", DT_FLOAT, SHAPE(3, 2, 3, 3));
	Node *n = graph_add_node(g, "fc", "FusedConv", GEARC_DOMAIN,
				 with_z ? 4 : 3, 1);
	n->inputs[0] = x, n->inputs[1] = w, n->inputs[2] = -1;
	if (with_z)
		n->inputs[3] = z;
	n->outputs[0] = graph_add_value(g, "y", VAL_NODE);
	g->vals[n->outputs[0]].producer = 0;
	tu_ints(g, n, "pads", INTS(1, 1, 1, 1));
	static const Bytes relu = { 4, (const uint8_t *)"Relu" };
	static const float params[2] = { 0, 0 };
	Attr *a = node_add_attr(g, n, FUSED_ACTS_ATTR, ATTR_STRINGS);
	a->n = 1;
	a->strings = &relu;
	tu_floats(g, n, FUSED_ACT_PARAMS_ATTR, params, 2);
	tu_int(g, n, FUSED_Z_AFTER_ATTR, k);
	return m;
}

Test(fuse, prelu_max_min_stay_where_not_the_same_function)
{
	static const Form keep[] = {
		{ "prelu_negative", prelu_negative, ANCHOR_CONV, " PRelu ", 0 },
		{ "prelu_channels", prelu_channels, ANCHOR_CONV, " PRelu ", 0 },
		{ "max_zero_first", max_zero_first, ANCHOR_CONV, " Max ", 0 },
	};
	char *dir = temp_dir();
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		char *onnx = path_in(dir, "m.onnx");
		Model *m = form_model(&keep[i]);
		OnnxExport ox = { 0 };
		cr_assert_eq(onnx_write(m, m->graph, &ox, onnx), 0, "%s",
			     last_error());
		model_free(m);
		char *on = compile_to(dir, onnx, "on", NULL, NULL, NULL);
		char *t = dump(on, "text");
		cr_expect(strstr(t, keep[i].expect) && !strstr(t, "LeakyRelu") &&
				  !strstr(t, "Clip"),
			  "%s:\n%s", keep[i].name, t);
		free(t);
		free(on);
		free(onnx);
	}
	remove_tree(dir);
	free(dir);
}

Test(fuse, z_after_is_checked)
{
	/* the activations before Z: 0 or 1 of the one Relu, none without
	 * Z; another value is refused, naming the node and what fits */
	Model *ok = z_after_model(1, true);
	infer_ok(ok);
	model_free(ok);
	Model *high = z_after_model(2, true);
	infer_fails_with(high, "z_after is 2, expected an INT from 0 to 1");
	model_free(high);
	Model *noz = z_after_model(1, false);
	infer_fails_with(noz, "0 without Z");
	model_free(noz);
}

/* ---- near misses: every precondition checked ----------------------------
 *
 * tests/fixtures/fuse/misses/ (tests/gen_fuse_misses.py) holds, for each
 * fusion, a model it fuses and, for each precondition of the rewrite, a
 * model differing from that one in the precondition alone.  Each compiles
 * with and without --no-fuse; gearc dump must show the fusion made for
 * the first and not for the others, and libgearrt's outputs of the two
 * compiles must agree: bit for bit where the graphs are the same (nothing
 * fused) or the fused op promises it (the dynamic int8 chain's), else
 * within 1e-5 of the output's largest finite magnitude, NaN and
 * infinities where --no-fuse has them (a QDQ group's (u)int8 within one
 * step, its stated tolerance). */

typedef struct Miss {
	const char *model; /* tests/fixtures/fuse/misses/MODEL.onnx */
	const char *mark;  /* in the fused graph's dump iff it was made */
	bool fuses;	   /* made (the fusable model, or a right fusion) */
	bool inf;	   /* +-inf among the float inputs */
	bool bits;	   /* the fused op's outputs are the graph's bits */
} Miss;

enum { MAX_OUTS = 4 };

typedef struct MissRun {
	size_t n;
	gearrt_tensor t[MAX_OUTS];
} MissRun;

/* Input k's fixed pattern: floats (and doubles) in [-4, 4) (+inf and
 * -inf every seventh with inf), integers of every byte. */
static void miss_fill(gearrt_tensor *t, size_t k, bool inf)
{
	size_t n = t->size / gearrt_dtype_size(t->dtype);
	for (size_t i = 0; i < n; i++) {
		uint32_t h = (uint32_t)(i * 7919 + k * 13);
		float v = (float)(h % 1601) / 200.0f - 4.0f;
		if (inf && i % 7 < 4 && i % 7 % 3 == 0)
			v = i % 7 ? -INFINITY : INFINITY;
		if (t->dtype == GEARRT_FLOAT32)
			((float *)t->data)[i] = v;
		else if (t->dtype == GEARRT_FLOAT64)
			((double *)t->data)[i] = v;
		else
			memset((char *)t->data + i * t->size / n,
			       (uint8_t)((i * 2654435761u + k) >> 3),
			       t->size / n);
	}
}

/* Runs om (static) on the fixed inputs; its outputs, copied. */
static MissRun miss_run(const char *om, bool inf)
{
	MissRun r = { 0 };
	gearrt_model *m;
	gearrt_session *s;
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, NULL, &s), GEARRT_OK);
	size_t nin = gearrt_input_count(m);
	gearrt_tensor in[4];
	cr_assert(nin <= 4);
	for (size_t k = 0; k < nin; k++) {
		cr_assert_eq(gearrt_input_info(m, k, &in[k]), GEARRT_OK);
		size_t e = 1;
		for (int32_t d = 0; d < in[k].rank; d++)
			e *= (size_t)in[k].dims[d];
		in[k].size = e * gearrt_dtype_size(in[k].dtype);
		in[k].data = malloc(in[k].size + 1);
		miss_fill(&in[k], k, inf);
	}
	r.n = gearrt_output_count(m);
	cr_assert(r.n <= MAX_OUTS);
	cr_assert_eq(gearrt_run(s, in, nin, r.t, r.n), GEARRT_OK, "%s: %s", om,
		     gearrt_last_error());
	for (size_t k = 0; k < r.n; k++) {
		void *p = malloc(r.t[k].size + 1);
		memcpy(p, r.t[k].data, r.t[k].size);
		r.t[k].data = p;
	}
	for (size_t k = 0; k < nin; k++)
		free(in[k].data);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	return r;
}

/* Output a of the fused compile against b of --no-fuse's (the comment
 * above says how close). */
static void miss_agree(const gearrt_tensor *a, const gearrt_tensor *b,
		       bool exact, const char *what)
{
	cr_assert(a->dtype == b->dtype && a->rank == b->rank &&
		  a->size == b->size, "%s: outputs of other types", what);
	bool q8 = a->dtype == GEARRT_INT8 || a->dtype == GEARRT_UINT8;
	if (exact || (a->dtype != GEARRT_FLOAT32 && !q8)) {
		cr_expect(!memcmp(a->data, b->data, a->size),
			  "%s: the outputs differ (%s)", what,
			  exact ? "the graphs are the same" : "not float32");
		return;
	}
	size_t n = a->size / gearrt_dtype_size(a->dtype);
	if (q8) {
		bool s = a->dtype == GEARRT_INT8;
		for (size_t i = 0; i < n; i++) {
			int x = s ? ((int8_t *)a->data)[i] : ((uint8_t *)a->data)[i];
			int y = s ? ((int8_t *)b->data)[i] : ((uint8_t *)b->data)[i];
			cr_assert(abs(x - y) <= 1, "%s: element %zu is %d, "
				  "--no-fuse's %d", what, i, x, y);
		}
		return;
	}
	const float *p = a->data, *q = b->data;
	double big = 0;
	for (size_t i = 0; i < n; i++)
		big = isfinite(q[i]) ? fmax(big, fabs(q[i])) : big;
	for (size_t i = 0; i < n; i++) {
		bool special = !isfinite(p[i]) || !isfinite(q[i]);
		cr_assert(special ? (isnan(q[i]) ? isnan(p[i]) : p[i] == q[i])
				  : fabs((double)p[i] - q[i]) <= 1e-5 * big,
			  "%s: element %zu is %g, --no-fuse's %g", what, i, p[i],
			  q[i]);
	}
}

/* The graph part of gearc dump's text of om (its header names the
 * options). */
static char *dump_graph(const char *om)
{
	char *t = dump(om, "text"), *g = strstr(t, "\ngraph ");
	cr_assert(g, "%s: no graph in\n%s", om, t);
	memmove(t, g, strlen(g) + 1);
	return t;
}

static void check_misses(const Miss *ms, size_t n)
{
	char *dir = temp_dir();
	for (const Miss *k = ms; k < ms + n; k++) {
		char model[256];
		snprintf(model, sizeof(model),
			 "tests/fixtures/fuse/misses/%s.onnx", k->model);
		char *on = compile_to(dir, model, "on", NULL, NULL, NULL);
		char *off = compile_to(dir, model, "off", NULL, NULL,
				       "--no-fuse");
		char *t = dump_graph(on), *t0 = dump_graph(off);
		cr_expect(!strstr(t0, k->mark), "%s: '%s' in --no-fuse's\n%s",
			  k->model, k->mark, t0);
		cr_expect(!strstr(t, k->mark) == !k->fuses, "%s: '%s' %s\n%s",
			  k->model, k->mark,
			  k->fuses ? "not made:" : "made, it must not be:", t);
		MissRun a = miss_run(on, k->inf), b = miss_run(off, k->inf);
		cr_assert_eq(a.n, b.n);
		for (size_t i = 0; i < a.n; i++) {
			char what[128];
			snprintf(what, sizeof(what), "%s output %zu", k->model, i);
			miss_agree(&a.t[i], &b.t[i], k->bits || !strcmp(t, t0),
				   what);
			free(a.t[i].data);
			free(b.t[i].data);
		}
		free(t);
		free(t0);
		free(on);
		free(off);
	}
	remove_tree(dir);
	free(dir);
}

#define CHECK_MISSES(ms) check_misses(ms, sizeof(ms) / sizeof(ms[0]))

/* The fusable model, then its near misses, of the fusion mark shows. */
#define FUSES(name, mark) { name, mark, true, false, false }
#define MISS(name, mark) { name, mark, false, false, false }

Test(fuse, batchnorm_folds_only_with_every_precondition)
{
	static const Miss ms[] = {
		FUSES("bn", "cw_bn"),
		MISS("bn_training_mode", "cw_bn"),
		MISS("bn_is_test_0", "cw_bn"),
		MISS("bn_stats_outputs", "cw_bn"),
		MISS("bn_var_eps_zero", "cw_bn"),
		MISS("bn_scale_input", "cw_bn"),
		MISS("bn_conv_read_twice", "cw_bn"),
		MISS("bn_weights_input", "_bn"),
		MISS("bn_after_matmul", "_bn"),
	};
	CHECK_MISSES(ms);
}

Test(fuse, affine_folds_only_with_every_precondition)
{
	static const Miss ms[] = {
		FUSES("affine", "cw_k"),
		MISS("affine_per_pixel", "cw_k"),
		MISS("affine_per_batch", "cw_k"),
		MISS("affine_last_axis", "cw_k"),
		MISS("affine_input", "cw_k"),
		MISS("affine_k_over_x", "cw_k"),
		MISS("affine_div_zero", "cw_k"),
		MISS("affine_conv_read_twice", "cw_k"),
		MISS("affine_gemm_rows", "gw_k"),
		MISS("affine_mul_inf", "cw_k"),
		MISS("affine_div_denormal", "cw_k"),
		MISS("affine_legacy_axis_0", "cw_k"),
	};
	CHECK_MISSES(ms);
}

Test(fuse, residual_and_bias_fuse_only_with_every_precondition)
{
	static const Miss ms[] = {
		FUSES("residual", "FusedConv"),
		MISS("residual_broadcast", "FusedConv"),
		MISS("residual_grows_x", "FusedConv"),
		MISS("residual_conv_read_twice", "FusedConv"),
		FUSES("residual_after", "[Relu, +Z, Relu]"),
		FUSES("residual_of_x", "x, cw, cw_b, x -> y"),
		FUSES("linear_merge", "[Relu, Linear(6,0)]"),
		MISS("linear_merge_across_z", "Linear(6,0)"),
		FUSES("bias", "x, mw, b -> y"),
		MISS("bias_per_row", "FusedMatMul"),
		MISS("bias_input", "FusedMatMul"),
		MISS("bias_legacy_axis_1", "FusedMatMul"),
	};
	CHECK_MISSES(ms);
}

Test(fuse, activation_ops_fuse_only_with_every_precondition)
{
	static const Miss ms[] = {
		FUSES("clip", "[Clip(-1,2)]"),
		MISS("clip_bound_input", "FusedConv"),
		MISS("clip_min_above_max", "FusedConv"),
		/* fused, -inf kept */
		{ "clip_no_min", "[Clip(-inf,2)]", true, true, false },
		{ "clip_no_min_opset_5", "[Clip(-inf,2)]", true, true, false },
		MISS("relu_conv_read_twice", "FusedConv"),
		MISS("relu_float64", "FusedConv"),
		FUSES("linear", "[Linear(0.25,-1)]"),
		MISS("linear_vector", "FusedMatMul"),
		MISS("linear_k_over_x", "FusedMatMul"),
		MISS("linear_k_minus_x", "FusedMatMul"),
		MISS("linear_div_denormal", "FusedMatMul"),
		MISS("linear_merge_overflow", "inf"),
	};
	CHECK_MISSES(ms);
}

Test(fuse, written_hardswish_hardsigmoid_only_with_every_precondition)
{
	static const Miss ms[] = {
		FUSES("hswish", "[HardSwish]"),
		MISS("hswish_offset", "HardSwish"),
		MISS("hswish_clip_min", "HardSwish"),
		MISS("hswish_clip_max", "HardSwish"),
		MISS("hswish_x_read_thrice", "HardSwish"),
		MISS("hswish_clip_read_twice", "HardSwish"),
		MISS("hswish_other_factor", "HardSwish"),
		MISS("hswish_rank_grows", "HardSwish"),
		/* the Div by a [1,C,1,1] six is not taken in: 6 HardSwish */
		FUSES("hswish_six_per_channel", "[HardSwish, Linear(6,0)]"),
		FUSES("hsig", "[HardSigmoid(0.25,0.4)]"),
		MISS("hsig_clip_max", "HardSigmoid"),
		MISS("hsig_clip_min", "HardSigmoid"),
		MISS("hswish_offset_near", "HardSwish"),
		MISS("hsig_clip_max_near", "HardSigmoid"),
		MISS("hsig_merge_overflow", "inf"),
	};
	CHECK_MISSES(ms);
}

Test(fuse, written_gated_activations_only_with_every_precondition)
{
	static const Miss ms[] = {
		FUSES("gelu", "[Gelu]"),
		MISS("gelu_no_half", "Gelu"),
		MISS("gelu_plus_2", "Gelu"),
		MISS("gelu_x_read_thrice", "Gelu"),
		FUSES("gelu_tanh", "[GeluTanh]"),
		MISS("gelu_tanh_cube_coeff", "GeluTanh"),
		MISS("gelu_tanh_square", "GeluTanh"),
		FUSES("silu", "[Silu]"),
		MISS("silu_scaled", "Silu"),
		MISS("silu_other_factor", "Silu"),
		FUSES("mish", "[Mish]"),
		MISS("mish_plus_2", "Mish"),
		MISS("gelu_rsqrt2_near", "Gelu"),
		MISS("gelu_tanh_sqrt_2_pi_near", "GeluTanh"),
	};
	CHECK_MISSES(ms);
}

Test(fuse, written_layernorm_only_with_every_precondition)
{
	static const Miss ms[] = {
		FUSES("layernorm", "LayerNormalization"),
		MISS("layernorm_eps_outside_sqrt", "LayerNormalization"),
		MISS("layernorm_pow_3", "LayerNormalization"),
		MISS("layernorm_axis_1", "LayerNormalization"),
		MISS("layernorm_var_axis_1", "LayerNormalization"),
		MISS("layernorm_keepdims_0", "LayerNormalization"),
		MISS("layernorm_eps_negative", "LayerNormalization"),
		MISS("layernorm_gamma_per_row", "LayerNormalization"),
		MISS("layernorm_mean_minus_x", "LayerNormalization"),
		MISS("layernorm_d_read_thrice", "LayerNormalization"),
		MISS("layernorm_float64", "LayerNormalization"),
		MISS("layernorm_legacy_gamma_axis_1", "LayerNormalization"),
	};
	CHECK_MISSES(ms);
}

Test(fuse, int8_chains_fuse_only_with_every_precondition)
{
	static const Miss ms[] = {
		/* bit for bit, as qfused.c promises */
		{ "dynq", "x, wq, -, ws, bias -> y", true, false, true },
		MISS("dynq_scale_per_row", "DynQuant"),
		{ "dynq_bias_per_row", "ws, bias", false, false, true },
		MISS("dynq_other_zero_point", "DynQuant"),
		MISS("dynq_weights_input", "DynQuant"),
		MISS("dynq_cast_read_twice", "DynQuant"),
		FUSES("qdq", "QLinearConv"),
		MISS("qdq_w_scale_axis_1", "QLinearConv"),
		MISS("qdq_x_scale_per_channel", "QLinearConv"),
		MISS("qdq_bias_scale", "QLinearConv"),
		MISS("qdq_conv_read_twice", "QLinearConv"),
	};
	CHECK_MISSES(ms);
}

/* x [1, 12, 3, 5]: a channel shuffle of g groups as torch.onnx writes
 * it (Reshape, Transpose (0,2,1,3,4), Reshape back), then a Relu; the
 * middle Reshape's output also read by an Add where shared. */
static Model *shuffle_model(int64_t g, bool shared)
{
	Synth sy = sy_begin("shuffle"), *s = &sy;
	ValId x = tu_input(s->g, "x", DT_FLOAT, SHAPE(1, 12, 3, 5));
	int64_t s5[5] = { 1, g, 12 / g, 3, 5 }, s4[4] = { 1, 12, 3, 5 };
	ValId r = BIN("Reshape", x, tu_weight_data(s->g, sy_name(s, "s"),
						   DT_INT64, SHAPE(5), s5));
	Node *t = tu_node(s->g, "Transpose", sy_name(s, "t"), IDS(r), 1);
	tu_ints(s->g, t, "perm", INTS(0, 2, 1, 3, 4));
	ValId b = BIN("Reshape", tu_out(t, 0),
		      tu_weight_data(s->g, sy_name(s, "b"), DT_INT64,
				     SHAPE(4), s4));
	ValId y = UN("Relu", b);
	if (shared) /* r read twice: the rewrite must leave it */
		y = BIN("Add", y, BIN("Reshape", UN("Neg", r),
				      tu_weight_data(s->g, sy_name(s, "c"),
						     DT_INT64, SHAPE(4), s4)));
	Model *m = sy_end(s, y);
	cr_assert(m, "%s", last_error());
	m->ir_version = 8;
	return m;
}

Test(fuse, channel_shuffles_become_gathers)
{
	/* 2 and 3 groups: one Gather of the channels, no Transpose left,
	 * the same bytes as unfused (a permutation), standard ONNX again
	 * on export; a shuffle whose middle value another node reads
	 * stays as written */
	char *dir = temp_dir();
	static const struct {
		int64_t g;
		bool shared;
	} shuf[] = { { 2, false }, { 3, false }, { 2, true } };
	int64_t dims[4] = { 1, 12, 3, 5 };
	for (size_t c = 0; c < sizeof(shuf) / sizeof(shuf[0]); c++) {
		char *onnx = path_in(dir, "m.onnx");
		Model *m = shuffle_model(shuf[c].g, shuf[c].shared);
		OnnxExport ox = { 0 };
		cr_assert_eq(onnx_write(m, m->graph, &ox, onnx), 0, "%s",
			     last_error());
		model_free(m);
		char *on = compile_to(dir, onnx, "on", NULL, NULL, NULL);
		char *off = compile_to(dir, onnx, "off", NULL, NULL,
				       "--no-fuse");
		char *t = dump(on, "text");
		bool fused = !shuf[c].shared;
		cr_expect_eq(count(t, " Gather "), fused, "case %zu:\n%s", c, t);
		cr_expect_eq(count(t, " Transpose "), !fused, "case %zu:\n%s",
			     c, t);
		size_t n1, n0, nb;
		float *y1 = run_om(on, dims, 4, &n1);
		float *y0 = run_om(off, dims, 4, &n0);
		cr_assert_eq(n1, n0);
		cr_expect(!memcmp(y1, y0, n1 * sizeof(float)), "case %zu", c);
		char *back = path_in(dir, "back.onnx"), o[512];
		snprintf(o, sizeof(o), "--output=%s", back);
		Run r = run_gearc("export", on, o);
		cr_assert_eq(r.status, 0, "export: %s", r.err);
		run_free(&r);
		char *bom = compile_to(dir, back, "back", NULL, NULL,
				       "--no-fuse");
		float *yb = run_om(bom, dims, 4, &nb);
		cr_assert_eq(nb, n0);
		cr_expect(!memcmp(yb, y0, nb * sizeof(float)), "case %zu", c);
		free(yb);
		free(bom);
		free(back);
		free(y0);
		free(y1);
		free(t);
		free(on);
		free(off);
		free(onnx);
	}
	remove_tree(dir);
	free(dir);
}
