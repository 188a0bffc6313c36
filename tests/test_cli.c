/* tests/test_cli.c - gearc's command line, run as a user runs it. */
#include <json-c/json.h>

#include "onnx/onnx.pb-c.h"
#include "testrun.h"

#define CONV2D "pytorch-converted/test_Conv2d"

static char *model_path(const char *test)
{
	return path_in(testdata_dir(), test);
}

/* Compiles TESTDATA/test/model.onnx to dir/out.om; returns the .om path. */
static char *compile_test(const char *dir, const char *test)
{
	char *m = model_path(test), *model = path_in(m, "model.onnx");
	char *out = path_in(dir, "out"), arg1[1024], arg2[1024];
	snprintf(arg1, sizeof(arg1), "--model=%s", model);
	snprintf(arg2, sizeof(arg2), "--output=%s", out);
	Run r = run_gearc(arg1, arg2);
	cr_assert_eq(r.status, 0, "%s: exit %d: %s", test, r.status, r.err);
	/* one summary line, nothing else */
	cr_expect(!strncmp(r.err, "gearc: wrote ", 13) &&
			  strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
		  "%s: compile printed: %s", test, r.err);
	run_free(&r);
	free(m);
	free(model);
	free(out);
	return path_in(dir, "out.om");
}

static json_object *dump_json(const char *om)
{
	Run r = run_gearc("dump", "--format=json", om);
	cr_assert_eq(r.status, 0, "dump exit %d: %s", r.status, r.err);
	json_object *j = json_tokener_parse(r.out);
	cr_assert(j, "dump output is not JSON: %s", r.out);
	run_free(&r);
	return j;
}

static json_object *jget(json_object *o, const char *key)
{
	json_object *v = NULL;
	cr_assert(json_object_object_get_ex(o, key, &v), "no key '%s'", key);
	return v;
}

/* ---- help, version, usage errors ---------------------------------------- */

Test(cli, no_arguments_is_usage_error)
{
	Run r = run_gearc(NULL);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "usage: gearc"), "%s", r.err);
	run_free(&r);
}

Test(cli, help_and_version)
{
	Run r = run_gearc("--help");
	cr_expect_eq(r.status, 0);
	cr_expect(strstr(r.out, "usage: gearc"));
	cr_expect(strstr(r.out, "dump"));
	run_free(&r);
	r = run_gearc("--version");
	cr_expect_eq(r.status, 0);
	cr_expect(!strncmp(r.out, "gearc ", 6), "%s", r.out);
	run_free(&r);
}

Test(cli, help_for_every_command)
{
	static const char *cmds[][2] = {
		{ "compile", "--dynamic_batch_size" },
		{ "dump", "--format=json" },
		{ "help", "gearc help [COMMAND]" },
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		Run r = run_gearc("help", cmds[i][0]);
		cr_expect_eq(r.status, 0, "help %s", cmds[i][0]);
		cr_expect(strstr(r.out, cmds[i][1]), "help %s: %s", cmds[i][0],
			  r.out);
		run_free(&r);
		r = run_gearc(cmds[i][0], "--help");
		if (strcmp(cmds[i][0], "help")) {
			cr_expect_eq(r.status, 0, "%s --help", cmds[i][0]);
			cr_expect(strstr(r.out, cmds[i][1]));
		}
		run_free(&r);
	}
	Run r = run_gearc("help", "nosuch");
	expect_error(&r, 2, "no help for 'nosuch'");
	run_free(&r);
}

Test(cli, unknown_command)
{
	Run r = run_gearc("frobnicate");
	expect_error(&r, 2, "'frobnicate' is not a gearc command");
	run_free(&r);
}

Test(cli, flag_errors_are_usage_errors)
{
	Run r = run_gearc("--model=x.onnx", "--output=y", "--bogus=1");
	expect_error(&r, 2, "unknown option '--bogus'");
	run_free(&r);
	r = run_gearc("--model=a.onnx", "--model=b.onnx", "--output=y");
	expect_error(&r, 2, "--model given twice");
	run_free(&r);
	r = run_gearc("--output=y");
	expect_error(&r, 2, "--model is required");
	run_free(&r);
	r = run_gearc("--model=x.onnx");
	expect_error(&r, 2, "--output is required");
	run_free(&r);
	r = run_gearc("--model=x.onnx", "--output=y", "--framework=3");
	expect_error(&r, 2, "--framework: '3' is not supported");
	run_free(&r);
	r = run_gearc("--model=x.onnx", "--output=y", "-j", "0");
	expect_error(&r, 2, "-j/--jobs: '0'");
	run_free(&r);
	r = run_gearc("--model=x.onnx", "--output=y", "--dump-after=nope");
	expect_error(&r, 2, "--dump-after: no pass named 'nope'");
	run_free(&r);
	r = run_gearc("--model=x.onnx", "--output");
	expect_error(&r, 2, "--output needs a value");
	run_free(&r);
	r = run_gearc("compile", "--model=x.onnx", "--output=y", "extra");
	expect_error(&r, 2, "unexpected argument 'extra'");
	run_free(&r);
}

Test(cli, missing_model_is_failure)
{
	char *d = temp_dir(), *out = path_in(d, "o");
	char arg[600];
	snprintf(arg, sizeof(arg), "--output=%s", out);
	Run r = run_gearc("--model=/nonexistent/m.onnx", arg);
	expect_error(&r, 1, "/nonexistent/m.onnx");
	cr_expect(strstr(r.err, "No such file"), "%s", r.err);
	run_free(&r);
	free(out);
	remove_tree(d);
	free(d);
}

/* ---- static compile ------------------------------------------------------ */

Test(cli, static_compile_conv2d)
{
	char *d = temp_dir(), *om = compile_test(d, CONV2D);
	json_object *j = dump_json(om);
	cr_expect_str_eq(json_object_get_string(jget(j, "mode")), "static");
	cr_expect_eq(json_object_get_int(jget(j, "gear_count")), 0);
	cr_expect_eq(json_object_array_length(jget(j, "gears")), 0);
	cr_expect_str_eq(json_object_get_string(jget(j, "format")), "gearom");
	json_object *outs = jget(j, "outputs");
	cr_assert_eq(json_object_array_length(outs), 1);
	json_object *o0 = json_object_array_get_idx(outs, 0);
	cr_expect_str_eq(json_object_get_string(jget(o0, "dtype")), "float32");
	const char *shape = json_object_to_json_string_ext(
		jget(o0, "shape"), JSON_C_TO_STRING_PLAIN);
	cr_expect_str_eq(shape, "[2,4,5,4]");
	json_object *w = jget(j, "weights");
	cr_expect_eq(json_object_get_int(jget(w, "count")), 2);
	cr_expect_eq(json_object_get_int(jget(w, "bytes")), 4 * 3 * 3 * 2 * 4 + 4 * 4);
	json_object_put(j);
	free(om);
	remove_tree(d);
	free(d);
}

Test(cli, flag_value_forms_and_spellings)
{
	char *d = temp_dir(), *out = path_in(d, "o.om");
	char *m = model_path(CONV2D), *model = path_in(m, "model.onnx");
	/* "--flag value", "-" for "_", and an --output already ending .om */
	Run r = run_gearc("compile", "--model", model, "--output", out,
			  "--input-shape", "0:2,3,7,5", "--quiet");
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	struct stat st;
	cr_expect_eq(stat(out, &st), 0, "no %s", out);
	free(m);
	free(model);
	free(out);
	remove_tree(d);
	free(d);
}

Test(cli, compile_is_deterministic)
{
	char *d = temp_dir(), *om = compile_test(d, CONV2D);
	size_t n1 = 0, n2 = 0;
	char *a = read_file(om, &n1);
	free(compile_test(d, CONV2D));
	char *b = read_file(om, &n2);
	cr_assert(a && b);
	cr_expect_eq(n1, n2);
	cr_expect(n1 == n2 && !memcmp(a, b, n1), "two compiles differ");
	free(a);
	free(b);
	free(om);
	remove_tree(d);
	free(d);
}

Test(cli, dump_text_and_dot)
{
	char *d = temp_dir(), *om = compile_test(d, CONV2D);
	Run r = run_gearc("dump", om);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "mode:      static"), "%s", r.out);
	cr_expect(strstr(r.out, "[2,4,5,4]"), "%s", r.out);
	cr_expect(strstr(r.out, "Conv"), "%s", r.out);
	run_free(&r);
	r = run_gearc("dump", "--format", "dot", om);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(!strncmp(r.out, "digraph gearom {", 16), "%s", r.out);
	cr_expect(strstr(r.out, "[label=\"[2,3,7,5]\"]"), "%s", r.out);
	run_free(&r);
	r = run_gearc("dump", "--format=yaml", om);
	expect_error(&r, 2, "--format: 'yaml' is not a dump format");
	run_free(&r);
	r = run_gearc("dump");
	expect_error(&r, 2, "dump needs the .om file");
	run_free(&r);
	free(om);
	remove_tree(d);
	free(d);
}

Test(cli, dump_reports_stdout_write_errors)
{
	char *d = temp_dir(), *om = compile_test(d, CONV2D);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s dump %s > /dev/full 2>%s/err",
		 gearc_bin(), om, d);
	int st = system(cmd);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
	char *errp = path_in(d, "err"), *err = read_file(errp, NULL);
	cr_expect(err && strstr(err, "writing to stdout"), "%s", err);
	free(err);
	free(errp);
	free(om);
	remove_tree(d);
	free(d);
}

/* ---- corrupt .om files --------------------------------------------------- */

Test(cli, dump_rejects_truncated_and_flipped_files)
{
	char *d = temp_dir(), *om = compile_test(d, CONV2D);
	size_t n = 0;
	char *bytes = read_file(om, &n);
	char *bad = path_in(d, "bad.om");
	size_t cuts[] = { 0, 7, 63, 64, n / 2, n - 1 };
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		write_file(bad, bytes, cuts[i]);
		Run r = run_gearc("dump", bad);
		expect_error(&r, 1, "bad.om");
		run_free(&r);
	}
	size_t flips[] = { 0, 9, 20, 70, n / 2, n - 1 };
	for (size_t i = 0; i < sizeof(flips) / sizeof(flips[0]); i++) {
		bytes[flips[i]] ^= 0x40;
		write_file(bad, bytes, n);
		Run r = run_gearc("dump", "--format=json", bad);
		expect_error(&r, 1, "bad.om");
		cr_expect_str_empty(r.out);
		run_free(&r);
		bytes[flips[i]] ^= 0x40;
	}
	free(bad);
	free(bytes);
	free(om);
	remove_tree(d);
	free(d);
}

/* ---- failures leave nothing behind ---------------------------------------- */

Test(cli, failed_compile_keeps_existing_output)
{
	char *d = temp_dir(), *om = path_in(d, "keep.om"), *out = path_in(d, "keep");
	write_file(om, "precious", 8);
	char arg[600];
	snprintf(arg, sizeof(arg), "--output=%s", out);
	Run r = run_gearc("--model=tests/fixtures/bad_cycle.onnx", arg);
	expect_error(&r, 1, "cycle");
	run_free(&r);
	size_t n = 0;
	char *s = read_file(om, &n);
	cr_expect(s && n == 8 && !memcmp(s, "precious", 8));
	free(s);
	/* nothing but keep.om in the directory */
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "test \"$(ls -A %s)\" = keep.om", d);
	cr_expect_eq(system(cmd), 0, "stray files left in %s", d);
	free(om);
	free(out);
	remove_tree(d);
	free(d);
}

Test(cli, output_into_missing_directory)
{
	char *m = model_path(CONV2D), *model = path_in(m, "model.onnx");
	char arg[600];
	snprintf(arg, sizeof(arg), "--model=%s", model);
	Run r = run_gearc(arg, "--output=/nonexistent-dir/x");
	expect_error(&r, 1, "/nonexistent-dir/x.om");
	run_free(&r);
	free(m);
	free(model);
}

/* ---- static compile of backend test models -------------------------------- */

/* The dims of a TensorProto file, or -1 rank on failure. */
static int pb_dims(const char *path, int64_t *dims)
{
	size_t n = 0;
	char *bytes = read_file(path, &n);
	if (!bytes)
		return -1;
	Onnx__TensorProto *t = onnx__tensor_proto__unpack(NULL, n,
							  (uint8_t *)bytes);
	free(bytes);
	if (!t)
		return -1;
	int rank = (int)t->n_dims;
	for (int i = 0; i < rank && i < 8; i++)
		dims[i] = t->dims[i];
	onnx__tensor_proto__free_unpacked(t, NULL);
	return rank;
}

/* Backend tests whose models use only ops gearc infers so far and have
 * static inputs. */
static const char *static_models[] = {
	"pytorch-converted/test_AvgPool2d",
	"pytorch-converted/test_AvgPool2d_stride",
	"pytorch-converted/test_AvgPool3d",
	"pytorch-converted/test_AvgPool3d_stride",
	"pytorch-converted/test_AvgPool3d_stride1_pad0_gpu_input",
	"pytorch-converted/test_BatchNorm1d_3d_input_eval",
	"pytorch-converted/test_BatchNorm2d_eval",
	"pytorch-converted/test_BatchNorm2d_momentum_eval",
	"pytorch-converted/test_BatchNorm3d_eval",
	"pytorch-converted/test_BatchNorm3d_momentum_eval",
	"pytorch-converted/test_Conv1d",
	"pytorch-converted/test_Conv1d_dilated",
	"pytorch-converted/test_Conv1d_groups",
	"pytorch-converted/test_Conv1d_pad1",
	"pytorch-converted/test_Conv1d_pad1size1",
	"pytorch-converted/test_Conv1d_pad2",
	"pytorch-converted/test_Conv1d_pad2size1",
	"pytorch-converted/test_Conv1d_stride",
	"pytorch-converted/test_Conv2d",
	"pytorch-converted/test_Conv2d_depthwise",
	"pytorch-converted/test_Conv2d_depthwise_padded",
	"pytorch-converted/test_Conv2d_depthwise_strided",
	"pytorch-converted/test_Conv2d_depthwise_with_multiplier",
	"pytorch-converted/test_Conv2d_dilated",
	"pytorch-converted/test_Conv2d_groups",
	"pytorch-converted/test_Conv2d_groups_thnn",
	"pytorch-converted/test_Conv2d_no_bias",
	"pytorch-converted/test_Conv2d_padding",
	"pytorch-converted/test_Conv2d_strided",
	"pytorch-converted/test_Conv3d",
	"pytorch-converted/test_Conv3d_dilated",
	"pytorch-converted/test_Conv3d_dilated_strided",
	"pytorch-converted/test_Conv3d_groups",
	"pytorch-converted/test_Conv3d_no_bias",
	"pytorch-converted/test_Conv3d_stride",
	"pytorch-converted/test_Conv3d_stride_padding",
	"pytorch-converted/test_Linear",
	"pytorch-converted/test_Linear_no_bias",
	"pytorch-converted/test_MaxPool1d",
	"pytorch-converted/test_MaxPool1d_stride",
	"pytorch-converted/test_MaxPool1d_stride_padding_dilation",
	"pytorch-converted/test_MaxPool2d",
	"pytorch-converted/test_MaxPool2d_stride_padding_dilation",
	"pytorch-converted/test_MaxPool3d",
	"pytorch-converted/test_MaxPool3d_stride",
	"pytorch-converted/test_MaxPool3d_stride_padding",
	"pytorch-converted/test_PixelShuffle",
	"pytorch-converted/test_ReLU",
	"pytorch-converted/test_Softmax",
	"pytorch-converted/test_softmax_functional_dim3",
	"pytorch-converted/test_softmax_lastdim",
	"pytorch-operator/test_operator_add_broadcast",
	"pytorch-operator/test_operator_addconstant",
	"pytorch-operator/test_operator_addmm",
	"pytorch-operator/test_operator_concat2",
	"pytorch-operator/test_operator_conv",
	"pytorch-operator/test_operator_flatten",
	"pytorch-operator/test_operator_maxpool",
	"pytorch-operator/test_operator_mm",
	"pytorch-operator/test_operator_permute2",
	"pytorch-operator/test_operator_view",
	"simple/test_single_relu_model",
};

static void check_output_shapes(const char *dir, const char *test)
{
	char *om = compile_test(dir, test);
	json_object *j = dump_json(om), *outs = jget(j, "outputs");
	size_t n = json_object_array_length(outs);
	cr_expect_gt(n, 0, "%s: no outputs", test);
	for (size_t k = 0; k < n; k++) {
		char rel[600];
		snprintf(rel, sizeof(rel), "%s/%s/test_data_set_0/output_%zu.pb",
			 testdata_dir(), test, k);
		int64_t want[8];
		int rank = pb_dims(rel, want);
		cr_assert_geq(rank, 0, "%s: cannot read %s", test, rel);
		json_object *shape = jget(json_object_array_get_idx(outs, k),
					  "shape");
		cr_assert(shape, "%s: output %zu has no shape", test, k);
		size_t r = json_object_array_length(shape);
		cr_expect_eq(r, (size_t)rank, "%s: output %zu rank %zu, want %d",
			     test, k, r, rank);
		for (size_t i = 0; i < r && i < (size_t)rank; i++)
			cr_expect_eq(json_object_get_int64(
					     json_object_array_get_idx(shape, i)),
				     want[i], "%s: output %zu dim %zu", test, k,
				     i);
	}
	json_object_put(j);
	free(om);
}

Test(cli, backend_models_output_shapes, .timeout = 900) /* valgrind */
{
	char *d = temp_dir();
	for (size_t i = 0; i < sizeof(static_models) / sizeof(*static_models);
	     i++)
		check_output_shapes(d, static_models[i]);
	remove_tree(d);
	free(d);
}
