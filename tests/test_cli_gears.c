/* tests/test_cli_gears.c - the gear options through the command line:
 * exit statuses, messages, and what dump shows of the gear spec. */
#include <json-c/json.h>

#include "testrun.h"

#define DEMO "--model=tests/fixtures/demo_cnn.onnx"
#define TWO "--model=tests/fixtures/two_inputs.onnx"
#define THREE "--model=tests/fixtures/three_inputs.onnx"

static char *out_arg(const char *dir)
{
	size_t n = strlen(dir) + 16;
	char *s = malloc(n);
	snprintf(s, n, "--output=%s/m", dir);
	return s;
}

static json_object *dump_json(const char *dir)
{
	char om[600];
	snprintf(om, sizeof(om), "%s/m.om", dir);
	Run r = run_gearc("dump", "--format=json", om);
	cr_assert_eq(r.status, 0, "dump: %s", r.err);
	json_object *j = json_tokener_parse(r.out);
	cr_assert(j, "not JSON: %s", r.out);
	run_free(&r);
	return j;
}

static json_object *at(json_object *o, const char *path)
{
	/* "gears.1.outputs.0.shape" */
	char buf[256], *save = NULL;
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, (size_t)atoi(k));
		else if (!json_object_object_get_ex(o, k, &o))
			o = NULL;
		cr_assert(o, "no '%s' in the dump", path);
	}
	return o;
}

static void expect_json(json_object *j, const char *path, const char *want)
{
	cr_expect_str_eq(json_object_to_json_string_ext(at(j, path),
							JSON_C_TO_STRING_PLAIN),
			 want, "%s", path);
}

Test(cli_gears, syntax_errors_exit_2)
{
	char *d = temp_dir(), *out = out_arg(d);
	Run r = run_gearc(DEMO, out, "--input_shape=x:-1,3,32,32",
			  "--dynamic_batch_size=1,0");
	expect_error(&r, 2, "--dynamic_batch_size: value 2 (\"0\") must be a "
			    "positive integer");
	run_free(&r);
	r = run_gearc(DEMO, out, "--input_shape=x:-1,3,32,32",
		      "--dynamic_batch_size=1,8", "--dynamic_dims=1;8");
	expect_error(&r, 2, "cannot be used together");
	run_free(&r);
	r = run_gearc(DEMO, out, "--dynamic_dims=1;8");
	expect_error(&r, 2, "--dynamic_dims needs --input_shape");
	run_free(&r);
	r = run_gearc(DEMO, out, "--input_shape=x:-1,3,32,32");
	expect_error(&r, 2, "no gear option is given");
	run_free(&r);
	r = run_gearc(THREE, out,
		      "--input_shape=tokens:-1,-1;mask:-1,-1;image:1,3,224,224",
		      "--dynamic_dims=1,32,1,32;4,64,4");
	expect_error(&r, 2, "--dynamic_dims: gear 2 (\"4,64,4\") has 3 values, "
			    "but --input_shape has 4 dynamic dims (-1)");
	run_free(&r);
	/* nothing written */
	char om[600];
	snprintf(om, sizeof(om), "%s/m.om", d);
	cr_expect_neq(access(om, F_OK), 0, "a failed compile left %s", om);
	free(out);
	remove_tree(d);
	free(d);
}

Test(cli_gears, model_disagreements_exit_1)
{
	char *d = temp_dir(), *out = out_arg(d);
	Run r = run_gearc(THREE, out, "--input_shape=imgs:-1,3,224,224",
			  "--dynamic_batch_size=1,2");
	expect_error(&r, 1, "--input_shape: 'imgs' is not an input of the model "
			    "(inputs: tokens, mask, image)");
	run_free(&r);
	r = run_gearc(DEMO, out, "--input_shape=x:-1,4,32,32",
		      "--dynamic_batch_size=1,2");
	expect_error(&r, 1, "--input_shape: 'x' dim 1 is 4, but the model "
			    "declares 3");
	run_free(&r);
	r = run_gearc(DEMO, out, "--input_shape=x:-1,3,32",
		      "--dynamic_batch_size=1,2");
	expect_error(&r, 1, "'x' has 3 dims, but the model declares rank 4");
	run_free(&r);
	r = run_gearc(TWO, out, "--input_shape=a:1,3,-1,-1",
		      "--dynamic_image_size=32,32;64,64");
	expect_error(&r, 1, "model input 'b' has dynamic shape");
	run_free(&r);
	free(out);
	remove_tree(d);
	free(d);
}

Test(cli_gears, batch_mode_dump)
{
	char *d = temp_dir(), *out = out_arg(d);
	Run r = run_gearc(DEMO, out, "--input_shape", "x:-1,3,32,32",
			  "--dynamic_batch_size", "1,8,16", "-j", "2");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	json_object *j = dump_json(d);
	expect_json(j, "mode", "\"batch\"");
	expect_json(j, "gear_count", "3");
	expect_json(j, "inputs.0.shape", "[-1,3,32,32]");
	expect_json(j, "inputs.0.max_shape", "[16,3,32,32]");
	expect_json(j, "outputs.0.shape", "[-1,10]");
	expect_json(j, "gears.1.label", "\"Batch_1\"");
	expect_json(j, "gears.1.dims", "[8]");
	expect_json(j, "gears.1.inputs.0.shape", "[8,3,32,32]");
	expect_json(j, "gears.2.outputs.0.shape", "[16,10]");
	expect_json(j, "gears.2.outputs.0.bytes", "640");
	/* 10 nodes unfused; the fuse pass makes each Conv+Relu one node */
	expect_json(j, "gears.2.nodes", "7");
	expect_json(j, "options.dynamic_batch_size", "\"1,8,16\"");
	json_object_put(j);
	free(out);
	remove_tree(d);
	free(d);
}

Test(cli_gears, image_size_mode_dump)
{
	char *d = temp_dir(), *out = out_arg(d);
	Run r = run_gearc(TWO, out, "--input_shape=a:1,3,-1,-1;b:1,3,-1,-1",
			  "--dynamic_image_size=224,224;448,320");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	json_object *j = dump_json(d);
	expect_json(j, "mode", "\"image_size\"");
	expect_json(j, "inputs.1.shape", "[1,3,-1,-1]");
	expect_json(j, "inputs.1.max_shape", "[1,3,448,320]");
	expect_json(j, "gears.1.dims", "[448,320,448,320]");
	expect_json(j, "gears.1.outputs.0.shape", "[1,3,448,320]");
	expect_json(j, "outputs.0.shape", "[1,3,-1,-1]");
	json_object_put(j);
	free(out);
	remove_tree(d);
	free(d);
}

Test(cli_gears, dims_mode_three_inputs)
{
	char *d = temp_dir(), *out = out_arg(d);
	Run r = run_gearc(THREE, out,
			  "--input_shape=tokens:-1,-1;mask:-1,-1;image:1,3,224,224",
			  "--dynamic_dims=1,32,1,32;4,64,4,64");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	json_object *j = dump_json(d);
	expect_json(j, "mode", "\"dims\"");
	expect_json(j, "gear_count", "2");
	expect_json(j, "inputs.0.shape", "[-1,-1]");
	expect_json(j, "inputs.0.max_shape", "[4,64]");
	expect_json(j, "inputs.2.shape", "[1,3,224,224]");
	expect_json(j, "gears.0.dims", "[1,32,1,32]");
	expect_json(j, "gears.1.inputs.1.shape", "[4,64]");
	json_object_put(j);
	free(out);
	remove_tree(d);
	free(d);
}
