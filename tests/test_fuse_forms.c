/*
 * tests/test_fuse_forms.c - the written-out activations and LayerNorms
 * the fuse pass (passes/fuse.c) recognises, one model per exporter
 * spelling, built here (tests/synth.h's helpers, written with
 * onnx_write): each compiles to the fused activation (gearc dump shows
 * it and none of the ops it was written with), computes what the
 * --no-fuse compile does, and `gearc export` writes it back as standard
 * ONNX that compiles and computes the same.
 */
#include <math.h>

#include "runtime/gearrt.h"
#include "serializer/export.h"
#include "synth.h"
#include "testrun.h"

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

/* Standard ops that are rows of compiler/act.h's table, with an
 * attribute or the defaults: fused from the table. */
static ValId elu_half(Synth *s, ValId x)
{
	Node *n = tu_node(s->g, "Elu", sy_name(s, "elu"), IDS(x), 1);
	tu_float(s->g, n, "alpha", 0.5f);
	return tu_out(n, 0);
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
	{ "selu_softplus", selu_softplus, ANCHOR_MATMUL,
	  "[Selu(1.67326,1.0507), Softplus]", "Selu" },
	{ "ln_reciprocal", ln_reciprocal, ANCHOR_NONE, "LayerNormalization",
	  "Reciprocal" },
	{ "ln_pow", ln_pow, ANCHOR_NONE, "LayerNormalization", "ReduceMean" },
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

static char *om_of(const char *dir, const char *model, const char *out,
		   const char *extra)
{
	char m[512], o[512];
	char *path = path_in(dir, out);
	snprintf(m, sizeof(m), "--model=%s", model);
	snprintf(o, sizeof(o), "--output=%s", path);
	Run r = run_gearc(m, o, "-q", extra);
	cr_assert_eq(r.status, 0, "compile %s: %s", model, r.err);
	run_free(&r);
	char *om = malloc(strlen(path) + 4);
	sprintf(om, "%s.om", path);
	free(path);
	return om;
}

/* Output 0 of om on the fixed input x (malloc'd, *n floats). */
static float *run_om(const char *om, bool conv, size_t *n)
{
	gearrt_model *m;
	gearrt_session *s;
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, NULL, &s), GEARRT_OK);
	gearrt_tensor in = { .dtype = GEARRT_FLOAT32, .rank = conv ? 4 : 3,
			     .dims = { 2, conv ? 4 : 8, conv ? 8 : 16, 8 } };
	size_t k = conv ? 2 * 4 * 8 * 8 : 2 * 8 * 16;
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

/* a and b agree within 1e-5 relative or absolute (oneDNN's post-ops
 * against the unfused ops' kernels). */
static void expect_close(const float *a, const float *b, size_t n,
			 const char *what, const char *how)
{
	double worst = 0;
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)a[i] - b[i]) / fmax(1, fabs(b[i]));
		worst = d > worst ? d : worst;
	}
	cr_expect(worst <= 1e-5, "%s (%s): max difference %g", what, how,
		  worst);
}

static char *dump_text(const char *om)
{
	Run r = run_gearc("dump", "--format=text", om);
	cr_assert_eq(r.status, 0, "dump %s: %s", om, r.err);
	char *out = strdup(r.out);
	run_free(&r);
	return out;
}

Test(fuse_forms, each_spelling_fuses_computes_the_same_and_exports)
{
	char *dir = temp_dir();
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const Form *f = &forms[i];
		bool conv = f->anchor == ANCHOR_CONV;
		char *onnx = path_in(dir, "m.onnx");
		Model *m = form_model(f);
		OnnxExport ox = { 0 };
		cr_assert_eq(onnx_write(m, m->graph, &ox, onnx), 0, "%s: %s",
			     f->name, last_error());
		model_free(m);
		char *on = om_of(dir, onnx, "on", NULL);
		char *off = om_of(dir, onnx, "off", "--no-fuse");
		char *t = dump_text(on), *t0 = dump_text(off), gone[64];
		snprintf(gone, sizeof(gone), " %s ", f->gone); /* the op */
		cr_expect(strstr(t, f->expect) && !strstr(t, gone),
			  "%s: no %s, or %s left, in\n%s", f->name, f->expect,
			  f->gone, t);
		cr_expect(strstr(t0, gone), "%s: --no-fuse fused",
			  f->name);
		size_t n1, n0, nb;
		float *y1 = run_om(on, conv, &n1);
		float *y0 = run_om(off, conv, &n0);
		cr_assert_eq(n1, n0);
		expect_close(y1, y0, n1, f->name, "fused");
		/* exported back: standard ONNX, computing the same */
		char *back = path_in(dir, "back.onnx"), o[512], md[512];
		snprintf(o, sizeof(o), "--output=%s", back);
		Run r = run_gearc("export", on, o);
		cr_assert_eq(r.status, 0, "export %s: %s", f->name, r.err);
		run_free(&r);
		size_t nbytes = 0;
		char *bytes = read_file(back, &nbytes);
		bool gearc_op = false;
		for (size_t b = 0; b + 8 <= nbytes && !gearc_op; b++)
			gearc_op = !memcmp(bytes + b, "ai.gearc", 8);
		cr_expect(!gearc_op,
			  "%s: gearc's op exported", f->name);
		free(bytes);
		snprintf(md, sizeof(md), "%s", back);
		char *bom = om_of(dir, md, "back", "--no-fuse");
		float *yb = run_om(bom, conv, &nb);
		cr_assert_eq(nb, n0);
		expect_close(yb, y0, nb, f->name, "exported");
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
