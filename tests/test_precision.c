/*
 * tests/test_precision.c - atc's --precision_mode (passes/precision.c,
 * cli/precflags.c, runtime/dnnl.c's bf16 rows) on
 * tests/fixtures/prec_cnn.onnx (tests/gen_precision_models.py): which
 * nodes the compile marks and the flags that change it, the file's
 * checks, and the runtime's choice: bfloat16 where the CPU has it (within
 * the tolerance of the man page's contract), float32 where it does not,
 * byte for byte the file compiled without a mode.
 */
#include <math.h>

#include "compiler/cpu.h"
#include "omedit.h"
#include "runtime/gearrt.h"
#include "testrun.h"

static char *compile_prec(const char *dir, const char *name,
			  const char *const *flags)
{
	const char *extra[8] = { "--input_shape=x:-1,32,16,16",
				 "--dynamic_batch_size=1,4" };
	int n = 2;
	for (; flags && *flags && n < 7; flags++)
		extra[n++] = *flags;
	extra[n] = NULL;
	return compile_fixture(dir, name, "prec_cnn", extra);
}

/* gearc dump --format=json's precision.reduced_nodes, -1 for none. */
static long reduced_nodes(const char *om)
{
	Run r = run_gearc("dump", "--format=json", om);
	cr_assert_eq(r.status, 0, "%s", r.err);
	const char *p = strstr(r.out, "\"reduced_nodes\":");
	long n = p ? strtol(p + 16, NULL, 10) : -1;
	run_free(&r);
	return n;
}

Test(precision, the_compile_marks_the_white_list_but_the_last_layer)
{
	char *dir = temp_dir();
	write_file(path_in(dir, "keep.txt"), "# keep these\nconv2\n\n", 20);
	char *keep = path_in(dir, "keep.txt");
	const char *mix = "{\"black-list\": {\"to-add\": [\"MatMul\"]},"
			  " \"gray-list\": {\"to-add\": [\"Relu\"]}}";
	write_file(path_in(dir, "mix.json"), mix, strlen(mix));
	char *mixp = path_in(dir, "mix.json");
	char kflag[1100], mflag[1100];
	snprintf(kflag, sizeof(kflag), "--keep_dtype=%s", keep);
	snprintf(mflag, sizeof(mflag), "--modify_mixlist=%s", mixp);
	static const struct {
		const char *flags[3];
		long want; /* per gear: 2 gears */
	} cases[] = {
		/* conv1, conv2, dwconv, mm_hidden; not head (the last) */
		{ { "--precision_mode=allow_mix_precision_bf16" }, 4 },
		{ { "--precision_mode=allow_fp32_to_bf16" }, 4 },
		{ { "--precision_mode=allow_mix_precision" }, 4 },
		{ { "--precision_mode=force_fp32" }, 0 },
		{ { "--precision_mode=allow_mix_precision_bf16", NULL, "k" }, 3 },
		{ { "--precision_mode=allow_mix_precision_bf16", NULL, "m" }, 3 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const char *f[3] = { cases[i].flags[0], NULL, NULL };
		if (cases[i].flags[2])
			f[1] = cases[i].flags[2][0] == 'k' ? kflag : mflag;
		char *om = compile_prec(dir, "p", f);
		cr_expect_eq(reduced_nodes(om), 2 * cases[i].want,
			     "case %zu: %ld nodes marked", i, reduced_nodes(om));
		free(om);
	}
	/* without a mode: no precision at all */
	char *om = compile_prec(dir, "p", NULL);
	cr_expect_eq(reduced_nodes(om), -1);
	free(om);
	free(keep);
	free(mixp);
	remove_tree(dir);
	free(dir);
}

Test(precision, flag_errors_name_the_flag_and_what_was_expected)
{
	char *dir = temp_dir();
	char *out = path_in(dir, "x"), oflag[1100];
	snprintf(oflag, sizeof(oflag), "--output=%s", out);
	Run r = run_gearc("--model=tests/fixtures/prec_cnn.onnx", oflag,
			  "--input_shape=x:1,32,16,16",
			  "--precision_mode=allow_bf16");
	expect_error(&r, 2, "--precision_mode: 'allow_bf16' is not one of "
			    "force_fp32");
	run_free(&r);
	r = run_gearc("--model=tests/fixtures/prec_cnn.onnx", oflag,
		      "--input_shape=x:1,32,16,16", "--keep_dtype=k.txt");
	expect_error(&r, 2, "--keep_dtype needs --precision_mode");
	run_free(&r);
	r = run_gearc("--model=tests/fixtures/prec_cnn.onnx", oflag,
		      "--input_shape=x:1,32,16,16",
		      "--precision_mode=allow_mix_precision_bf16",
		      "--keep_dtype=/nonexistent/k.txt");
	expect_error(&r, 1, "--keep_dtype: cannot open '/nonexistent/k.txt'");
	run_free(&r);
	write_file(path_in(dir, "bad.json"), "{\"white-list\": [1]}", 19);
	char *bad = path_in(dir, "bad.json"), mflag[1100];
	snprintf(mflag, sizeof(mflag), "--modify_mixlist=%s", bad);
	r = run_gearc("--model=tests/fixtures/prec_cnn.onnx", oflag,
		      "--input_shape=x:1,32,16,16",
		      "--precision_mode=allow_mix_precision_bf16", mflag);
	expect_error(&r, 1, "\"white-list\" is not an object");
	run_free(&r);
	/* float16 modes: bfloat16 on the CPU, said at compile time */
	r = run_gearc("--model=tests/fixtures/prec_cnn.onnx", oflag,
		      "--input_shape=x:1,32,16,16",
		      "--precision_mode=force_fp16");
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "oneDNN 2.6 computes no float16 on CPUs"),
		  "%s", r.err);
	run_free(&r);
	free(bad);
	free(out);
	remove_tree(dir);
	free(dir);
}

/* Runs om at gear 1 (batch 4) on a fixed input: output y, malloc'd. */
static float *run_y(const char *om, size_t *n)
{
	gearrt_model *m;
	gearrt_session *s;
	gearrt_options o = { .threads = 1 };
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, &o, &s), GEARRT_OK);
	static float x[4 * 32 * 16 * 16];
	for (size_t i = 0; i < sizeof(x) / sizeof(*x); i++)
		x[i] = (float)((i * 2654435761u) % 1000) / 500.0f - 1.0f;
	gearrt_tensor in = { .dtype = GEARRT_FLOAT32, .rank = 4,
			     .dims = { 4, 32, 16, 16 }, .data = x,
			     .size = sizeof(x) };
	gearrt_tensor out = { 0 };
	cr_assert_eq(gearrt_run(s, &in, 1, &out, 1), GEARRT_OK, "%s",
		     gearrt_last_error());
	*n = out.size / sizeof(float);
	float *y = malloc(out.size);
	memcpy(y, out.data, out.size);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	return y;
}

/* bfloat16 where the CPU has it: the softmax within relative L2 1e-2 of
 * float32's (man gearc, PRECISION), and gearrt_model_precision says so;
 * on a CPU without it, float32 and said so. */
Test(precision, the_runtime_computes_bfloat16_where_the_cpu_can)
{
	char *dir = temp_dir();
	const char *bf[] = { "--precision_mode=allow_mix_precision_bf16",
			     NULL };
	char *a = compile_prec(dir, "bf", bf), *b = compile_prec(dir, "f", NULL);
	size_t na, nb;
	float *ya = run_y(a, &na), *yb = run_y(b, &nb);
	cr_assert_eq(na, nb);
	double d = 0, s = 0;
	for (size_t i = 0; i < na; i++)
		d += (ya[i] - yb[i]) * (double)(ya[i] - yb[i]),
			s += yb[i] * (double)yb[i];
	cr_expect_leq(sqrt(d / s), 1e-2, "relative L2 %g", sqrt(d / s));
	gearrt_model *m;
	cr_assert_eq(gearrt_model_open(a, &m), GEARRT_OK);
	const char *p = gearrt_model_precision(m);
	bool bf16 = cpu_has(CPU_AVX512BF16) || cpu_has(CPU_AMX_BF16);
	cr_expect(strstr(p, bf16 ? "bfloat16 on this CPU" : ": float32 (this "
			 "CPU has no AVX512_BF16"), "%s", p);
	gearrt_model_close(m);
	/* the kernels that ran: the profile names them */
	setenv("GEARRT_PROFILE", "nodes", 1);
	Run r = run_gearc("run", a, "--random-inputs", "--gear=1", "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(!bf16 || (strstr(r.err, "conv2_batch_1 ") &&
			    strstr(strstr(r.err, "conv2_batch_1 "),
				   "dnnl.conv.bf16")), "%s", r.err);
	cr_expect(!bf16 || strstr(r.err, "MatMul/dnnl.matmul.bf16"), "%s",
		  r.err);
	/* never the last layer (oneDNN's float32 product, or gearc's gemm
	 * below AVX-512), nor a depthwise convolution */
	const char *head = strstr(r.err, "head_batch_1 ");
	head = head ? strstr(head, "MatMul/") : NULL;
	cr_expect(head && (!strncmp(head + 7, "gemm.", 5) ||
			   (!strncmp(head + 7, "dnnl.matmul", 11) &&
			    strncmp(head + 18, ".bf16", 5))),
		  "%s", r.err);
	cr_expect(!strstr(r.err, "dwconv_batch_1  ") ||
			  !strstr(strstr(r.err, "dwconv_batch_1 "), ".bf16\n"),
		  "%s", r.err);
	run_free(&r);
	unsetenv("GEARRT_PROFILE");
	free(ya);
	free(yb);
	free(a);
	free(b);
	remove_tree(dir);
	free(dir);
}

/* The ISA capped below AVX-512 (as a CPU without bfloat16): the same
 * file computes in float32, the bytes of the file compiled without a
 * mode, and says so. */
Test(precision, without_bfloat16_the_file_runs_in_float32)
{
	char *dir = temp_dir();
	const char *bf[] = { "--precision_mode=allow_mix_precision_bf16",
			     NULL };
	char *a = compile_prec(dir, "bf", bf), *b = compile_prec(dir, "f", NULL);
	cpu_cap(CPU_LEVEL_AVX2);
	size_t na, nb;
	float *ya = run_y(a, &na), *yb = run_y(b, &nb);
	cr_assert_eq(na, nb);
	cr_expect(!memcmp(ya, yb, na * sizeof(float)),
		  "capped, the bfloat16 file's outputs are float32's");
	gearrt_model *m;
	cr_assert_eq(gearrt_model_open(a, &m), GEARRT_OK);
	cr_expect_str_eq(gearrt_model_precision(m),
			 "allow_mix_precision_bf16: float32 (this CPU has no "
			 "AVX512_BF16 or AMX-BF16)");
	gearrt_model_close(m);
	free(ya);
	free(yb);
	free(a);
	free(b);
	remove_tree(dir);
	free(dir);
}

/* A node marked reduced in a file without a reduced mode is refused. */
Test(precision, a_reduced_node_needs_a_reduced_mode)
{
	Fx x = fx_compile("prec_cnn.onnx", "x:1,32,16,16", NULL);
	Gearom__Graph *g = x.f.model->graphs[x.f.model->root];
	g->nodes[0]->has_reduced = g->nodes[0]->reduced = 1;
	omedit_write(x.data, x.f.model, x.om);
	gearrt_model *m = NULL;
	cr_expect_eq(gearrt_model_open(x.om, &m), GEARRT_E_FILE);
	cr_expect(strstr(gearrt_last_error(), "marked reduced, but the file "
			 "has no reduced-precision mode"),
		  "%s", gearrt_last_error());
	gearrt_model_close(m);
	g->nodes[0]->has_reduced = g->nodes[0]->reduced = 0;
	fx_free(&x);
}
