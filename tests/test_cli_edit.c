/*
 * tests/test_cli_edit.c - atc's edits of a model's inputs and outputs:
 * --out_nodes, --output_type, --input_fp16_nodes (compiler/edit.h), and
 * the preprocessing flags (compiler/preproc.h), run as a user runs them.
 * Fixtures: tests/gen_cli_models.py.
 */
#include <math.h>

#include "cli/npy.h"
#include "testrun.h"

#define CHAIN "--model=tests/fixtures/cli_chain.onnx"

/* Compiles with the given flags (NULL ended) to dir/m.om; asserts
 * success. */
static char *compile_with(const char *dir, const char *model,
			  const char *const *extra)
{
	return compile_fixture(dir, "m", model, extra);
}

/* Runs om with input NAME=file and returns output out's tensor. */
static Tensor *run_one(Arena *a, const char *dir, const char *om,
		       const char *input, const char *out)
{
	char *odir = path_in(dir, "out"), oflag[600];
	snprintf(oflag, sizeof(oflag), "--output-dir=%s", odir);
	Run r = run_gearc("run", om, "--input", input, oflag, "-q");
	cr_assert_eq(r.status, 0, "run: %s", r.err);
	run_free(&r);
	char name[256];
	snprintf(name, sizeof(name), "%s.npy", out);
	char *p = path_in(odir, name);
	Tensor *t = npy_read(a, p);
	cr_assert(t, "%s", last_error());
	free(p);
	free(odir);
	return t;
}

static char *write_npy(const char *dir, const char *name, int dt,
		       const Shape *s, const void *data)
{
	char *p = path_in(dir, name);
	cr_assert_eq(npy_write(p, dt, s, data), 0, "%s", last_error());
	return p;
}

Test(cli_edit, out_nodes_pick_outputs_and_drop_the_rest)
{
	char *dir = temp_dir();
	const char *extra[] = { "--out_nodes=/n:0;/s:1", NULL };
	char *om = compile_with(dir, "cli_chain", extra);
	Run r = run_gearc("dump", om);
	cr_expect(strstr(r.out, "outputs:\n  n                        float32  "
			 "[1,4]\n  s1                       float32  [1,2]\n"),
		  "%s", r.out);
	/* Abs, Exp, Concat no longer reach an output */
	cr_expect(strstr(r.out, "graph chain: 3 nodes"), "%s", r.out);
	cr_expect(strstr(r.out, "option:    --out_nodes=/n:0;/s:1\n"), "%s",
		  r.out);
	run_free(&r);
	free(om);
	const char *tensors[] = { "--out_nodes=r;e", NULL };
	om = compile_with(dir, "cli_chain", tensors);
	r = run_gearc("dump", om);
	cr_expect(strstr(r.out, "outputs:\n  r  "), "%s", r.out);
	run_free(&r);
	free(om);
	remove_tree(dir);
	free(dir);
}

Test(cli_edit, out_nodes_errors)
{
	static const char *usage[][2] = {
		{ "--out_nodes=", "--out_nodes is empty" },
		{ "--out_nodes=/n:0;;/r:0", "--out_nodes: entry 2 is empty" },
		{ "--out_nodes=/n:0;r", "--out_nodes: entry 2 ('r') is a tensor name, but entry 1 a node output" },
		{ "--out_nodes=/n:0;/n:0", "--out_nodes: entry 2 repeats entry 1" },
	};
	for (size_t i = 0; i < sizeof(usage) / sizeof(usage[0]); i++) {
		Run r = run_gearc(CHAIN, "--output=/tmp/never", usage[i][0]);
		expect_error(&r, 2, usage[i][1]);
		run_free(&r);
	}
	static const char *model[][2] = {
		{ "--out_nodes=/nope:0", "--out_nodes: the model has no node named '/nope'" },
		{ "--out_nodes=/s:2", "--out_nodes: node '/s' (Split) has 2 outputs; '/s:2' is out of range" },
		{ "--out_nodes=zz", "--out_nodes: the model has no tensor named 'zz'" },
		{ "--out_nodes=/n:0;n", "--out_nodes: entry 2 ('n') is a tensor name" },
	};
	for (size_t i = 0; i < sizeof(model) / sizeof(model[0]); i++) {
		Run r = run_gearc(CHAIN, "--output=/tmp/never", model[i][0]);
		expect_error(&r, i == 3 ? 2 : 1, model[i][1]);
		run_free(&r);
	}
}

Test(cli_edit, output_type_uint8_rounds_half_to_even)
{
	char *dir = temp_dir();
	const char *extra[] = { "--output_type=UINT8", NULL };
	char *om = compile_with(dir, "cli_chain", extra);
	/* y = [|-relu(x0)|, |-relu(x1)|, exp(-relu(x2)), exp(-relu(x3))] */
	float x[4] = { 2.5f, 3.5f, 0, 400 };
	Shape s = { .rank = 2, .dims = { 1, 4 } };
	char *in = write_npy(dir, "x.npy", DT_FLOAT, &s, x), flag[600];
	snprintf(flag, sizeof(flag), "x=%s", in);
	Arena a = { 0 };
	Tensor *y = run_one(&a, dir, om, flag, "y");
	cr_assert_eq(y->dtype, DT_UINT8);
	const uint8_t *v = y->data;
	cr_expect(v[0] == 2 && v[1] == 4 && v[2] == 1 && v[3] == 0,
		  "%d %d %d %d", v[0], v[1], v[2], v[3]);
	arena_release(&a);
	free(in);
	free(om);
	/* FP16 per output keeps the name */
	const char *fp16[] = { "--output_type=/c:0:FP16", NULL };
	om = compile_with(dir, "cli_chain", fp16);
	Run r = run_gearc("dump", om);
	cr_expect(strstr(r.out, "outputs:\n  y                        float16"),
		  "%s", r.out);
	run_free(&r);
	free(om);
	remove_tree(dir);
	free(dir);
}

Test(cli_edit, output_type_errors)
{
	static const char *cases[][3] = {
		{ "--output_type=INT8", "2", "--output_type: 'INT8' is not an output type (expected FP32, FP16 or UINT8)" },
		{ "--output_type=/c:0:FP64", "2", "--output_type: 'FP64' is not an output type" },
		{ "--output_type=/c:FP16", "2", "--output_type: entry 1 ('/c') has no output index; expected NODE:INDEX:TYPE" },
		{ "--output_type=", "2", "--output_type is empty" },
		{ "--output_type=/n:0:FP16", "1", "--output_type: '/n:0' (tensor 'n') is not an output of the model" },
		{ "--output_type=/zz:0:FP16", "1", "--output_type: the model has no node named '/zz'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		Run r = run_gearc(CHAIN, "--output=/tmp/never", cases[i][0]);
		expect_error(&r, atoi(cases[i][1]), cases[i][2]);
		run_free(&r);
	}
}

Test(cli_edit, input_fp16_nodes)
{
	char *dir = temp_dir();
	const char *extra[] = { "--input_shape=x:-1,3,32,32",
				"--dynamic_batch_size=1,2",
				"--input_fp16_nodes=x", NULL };
	char *om = compile_with(dir, "demo_cnn", extra);
	Run r = run_gearc("dump", om);
	cr_expect(strstr(r.out, "  x                        float16  "
			 "[-1,3,32,32]"), "%s", r.out);
	cr_expect(strstr(r.out, "  probs                    float32"), "%s",
		  r.out);
	run_free(&r);
	r = run_gearc("run", om, "--random-inputs", "--gear=1");
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	free(om);
	remove_tree(dir);
	free(dir);
	r = run_gearc(CHAIN, "--output=/tmp/never", "--input_fp16_nodes=y");
	expect_error(&r, 1, "--input_fp16_nodes: 'y' is not an input of the "
		     "model");
	run_free(&r);
	r = run_gearc("--model=tests/fixtures/cli_kv.onnx",
		      "--output=/tmp/never", "--input_fp16_nodes=input_ids",
		      "--dynamic_dims=batch:1,2;seq:1;past_sequence_length:4");
	expect_error(&r, 1, "--input_fp16_nodes: input 'input_ids' is int64; "
		     "only float32 inputs can take float16");
	run_free(&r);
	r = run_gearc(CHAIN, "--output=/tmp/never", "--input_fp16_nodes=x;x");
	expect_error(&r, 2, "--input_fp16_nodes: 'x' is given twice");
	run_free(&r);
}
