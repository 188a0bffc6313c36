/*
 * tests/test_cli_atc.c - compile's command line as atc users write it:
 * atc's NPU-only flags (accepted, warned about), --log, --mode, near-miss
 * suggestions, and a model's unsupported ops named all at once.
 * Fixtures: tests/gen_cli_models.py.
 */
#include "testrun.h"

#define CNN "--model=tests/fixtures/demo_cnn.onnx"
#define SHAPE "--input_shape=x:1,3,32,32"

static int count_lines(const char *s, const char *prefix)
{
	int n = 0;
	for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		n += !strncmp(p, prefix, strlen(prefix));
	return n;
}

Test(cli_atc, npu_flags_warn_once_each)
{
	char *dir = temp_dir(), *out = path_in(dir, "m"), oflag[512];
	snprintf(oflag, sizeof(oflag), "--output=%s", out);
	Run r = run_gearc(CNN, oflag, SHAPE, "--soc_version=Ascend310P3",
			  "--core_type=VectorCore", "--aicore_num=2",
			  "--op_select_implmode=high_precision",
			  "--optypelist_for_implmode=Pooling,SoftmaxV2",
			  "--enable_small_channel=1",
			  "--buffer_optimize=off_optimize",
			  "--fusion_switch_file=fusion.cfg", "--virtual_type=0",
			  "--host_env_os=linux", "--host_env_cpu=aarch64",
			  "--display_model_info=1",
			  "--enable_compress_weight=false",
			  "--compress_weight_conf=w.cfg", "--dump_mode=1",
			  "--status_check=0", "--op_debug_level=3",
			  "--debug_dir=dbg", "--op_compiler_cache_mode=force",
			  "--op_compiler_cache_dir=cache",
			  "--is_input_adjust_hw_layout=true",
			  "--is_output_adjust_hw_layout=false,true");
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect_eq(count_lines(r.err, "gearc: warning: --"), 22, "%s", r.err);
	cr_expect(strstr(r.err, "gearc: warning: --soc_version=Ascend310P3 is "
			 "an Ascend NPU setting, ignored on the CPU"), "%s",
		  r.err);
	cr_expect(strstr(r.err, "--fusion_switch_file=fusion.cfg is an Ascend "
			 "NPU setting, ignored on the CPU (--no-fuse"), "%s",
		  r.err);
	cr_expect(strstr(r.err, "gearc: wrote "), "%s", r.err);
	run_free(&r);
	/* -q silences them */
	r = run_gearc(CNN, oflag, SHAPE, "--soc_version=Ascend910B", "-q");
	cr_expect_eq(r.status, 0);
	cr_expect_str_eq(r.err, "");
	run_free(&r);
	remove_tree(dir);
	free(out);
	free(dir);
}

Test(cli_atc, npu_flag_values_are_checked)
{
	static const char *bad[][2] = {
		{ "--core_type=GPU", "--core_type: 'GPU' is not one of AiCore|VectorCore" },
		{ "--aicore_num=0", "--aicore_num: '0' is not a positive integer" },
		{ "--buffer_optimize=fast", "--buffer_optimize: 'fast' is not one of" },
		{ "--op_debug_level=7", "--op_debug_level: '7' is not one of 0|1|2|3|4" },
		{ "--soc_version=", "--soc_version is empty" },
		{ "--is_input_adjust_hw_layout=yes", "--is_input_adjust_hw_layout: 'yes' is not a list of true and false" },
		{ "--enable_compress_weight=1", "--enable_compress_weight: '1' is not one of true|false" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		Run r = run_gearc(CNN, "--output=/tmp/never", bad[i][0]);
		expect_error(&r, 2, bad[i][1]);
		run_free(&r);
	}
}

Test(cli_atc, near_misses_are_named)
{
	static const char *cases[][2] = {
		{ "--input_shap=x:1", "did you mean --input_shape?" },
		{ "--input-shpae=x:1", "did you mean --input_shape?" },
		{ "--soc=Ascend310", "did you mean --soc_version?" },
		{ "--dynamic_batch=1,2", "did you mean --dynamic_batch_size?" },
		{ "--outptu=x", "did you mean --output?" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		Run r = run_gearc(CNN, cases[i][0]);
		expect_error(&r, 2, cases[i][1]);
		run_free(&r);
	}
	Run r = run_gearc(CNN, "--output=x", "--frobnicate=1");
	expect_error(&r, 2, "unknown option '--frobnicate' for 'gearc compile' "
		     "(see 'gearc help compile')");
	run_free(&r);
}

Test(cli_atc, log_levels)
{
	char *dir = temp_dir(), *out = path_in(dir, "m"), oflag[512];
	snprintf(oflag, sizeof(oflag), "--output=%s", out);
	Run r = run_gearc(CNN, oflag, SHAPE, "--log=info");
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "gearc: info: model 'demo_cnn.onnx': 10 nodes"),
		  "%s", r.err);
	cr_expect(strstr(r.err, "gearc: info: pass fuse "), "%s", r.err);
	cr_expect(strstr(r.err, "-2 Conv, -2 Relu, +2 FusedConv (domain "
			 "ai.gearc)"), "%s", r.err);
	cr_expect(strstr(r.err, "; ops used: "), "%s", r.err);
	cr_expect(!strstr(r.err, "gearc: debug:"), "%s", r.err);
	run_free(&r);
	r = run_gearc(CNN, oflag, SHAPE, "--log=debug");
	cr_expect_eq(r.status, 0);
	cr_expect(strstr(r.err, "gearc: debug: ops now: "), "%s", r.err);
	run_free(&r);
	r = run_gearc(CNN, oflag, SHAPE, "--log=warning", "--soc_version=x");
	cr_expect_eq(count_lines(r.err, "gearc: "), 2, "%s", r.err);
	run_free(&r);
	r = run_gearc(CNN, oflag, SHAPE, "--log=error", "--soc_version=x");
	cr_expect_eq(r.status, 0);
	cr_expect_str_eq(r.err, "");
	run_free(&r);
	/* null: not even the error */
	r = run_gearc("--model=tests/fixtures/none.onnx", oflag, "--log=null");
	cr_expect_eq(r.status, 1);
	cr_expect_str_eq(r.err, "");
	run_free(&r);
	r = run_gearc(CNN, oflag, "--log=verbose");
	expect_error(&r, 2, "--log: 'verbose' is not a log level (expected "
		     "debug, info, warning, error or null)");
	run_free(&r);
	r = run_gearc(CNN, oflag, "--log=info", "-q");
	expect_error(&r, 2, "--quiet and --log=info disagree");
	run_free(&r);
	remove_tree(dir);
	free(out);
	free(dir);
}

Test(cli_atc, mode_1_writes_dump_json)
{
	char *dir = temp_dir();
	const char *extra[] = { SHAPE, NULL };
	char *om = compile_fixture(dir, "cnn", "demo_cnn", extra);
	char *json = path_in(dir, "cnn.json"), of[512], jf[512];
	snprintf(of, sizeof(of), "--om=%s", om);
	snprintf(jf, sizeof(jf), "--json=%s", json);
	Run r = run_gearc("--mode=1", of, jf);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	r = run_gearc("dump", "--format=json", om);
	size_t n;
	char *got = read_file(json, &n);
	cr_assert(got);
	cr_expect_str_eq(got, r.out);
	free(got);
	run_free(&r);
	r = run_gearc("--mode=1", of);
	expect_error(&r, 2, "--mode=1 needs --om=FILE.om and --json=FILE.json");
	run_free(&r);
	r = run_gearc("--mode=1", "--om=tests/fixtures/demo_cnn.onnx", jf);
	expect_error(&r, 1, "--om 'tests/fixtures/demo_cnn.onnx'");
	run_free(&r);
	r = run_gearc("--mode=2", of, jf);
	expect_error(&r, 2, "--mode: '2' is not a mode gearc has");
	run_free(&r);
	r = run_gearc(CNN, "--output=x", of);
	expect_error(&r, 2, "--om is for --mode=1");
	run_free(&r);
	remove_tree(dir);
	free(om);
	free(json);
	free(dir);
}

Test(cli_atc, mode_3_checks_ops)
{
	Run r = run_gearc("--mode=3", CNN);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "10 nodes, 8 distinct ops, all supported"),
		  "%s", r.out);
	run_free(&r);
	r = run_gearc("--mode=3", "--model=tests/fixtures/cli_unsupported.onnx");
	expect_error(&r, 1, "3 ops are not supported: NoSuchOp, FancyOp "
		     "(domain com.example), NotAnOp (domain com.microsoft)");
	cr_expect(strstr(r.out, "unsupported: NoSuchOp: 2 nodes\n"), "%s",
		  r.out);
	cr_expect(strstr(r.out, "unsupported: NotAnOp (domain com.microsoft): "
			 "1 node\n"), "%s", r.out);
	run_free(&r);
	r = run_gearc("--mode=3", CNN, "--output=x");
	expect_error(&r, 2, "--output: --mode=3 checks the model and writes "
		     "nothing");
	run_free(&r);
}

Test(cli_atc, unsupported_ops_all_at_once)
{
	Run r = run_gearc("--model=tests/fixtures/cli_unsupported.onnx",
			  "--output=/tmp/never");
	expect_error(&r, 1, "model 'tests/fixtures/cli_unsupported.onnx': 3 "
		     "ops are not supported: NoSuchOp, FancyOp (domain "
		     "com.example), NotAnOp (domain com.microsoft) (see "
		     "'gearc help ops')");
	run_free(&r);
}

/* ---- inspect and help ops ------------------------------------------------ */

Test(cli_atc, inspect_text)
{
	Run r = run_gearc("inspect", "tests/fixtures/cli_kv.onnx");
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "  past_key_0               float32  "
			 "[batch,2,past_sequence_length,4]\n"), "%s", r.out);
	cr_expect(strstr(r.out, "opsets:    ai.onnx 13\n"), "%s", r.out);
	cr_expect(strstr(r.out, "ops:       12 nodes, 6 distinct: 7 Concat, "),
		  "%s", r.out);
	cr_expect(strstr(r.out, "unsupported: none\n"), "%s", r.out);
	cr_expect(strstr(r.out, "compile:   --input_shape=\"input_ids:-1,-1;"
			 "past_key_0:-1,2,-1,4;"), "%s", r.out);
	cr_expect(strstr(r.out, "  past_sequence_length: past_key_0[2], "
			 "past_key_1[2], past_key_2[2], past_value_0[2] and "
			 "2 more\n"), "%s", r.out);
	run_free(&r);
	r = run_gearc("inspect", "tests/fixtures/cli_unsupported.onnx");
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "unsupported: NoSuchOp, FancyOp (domain "
			 "com.example), NotAnOp (domain com.microsoft)\n"),
		  "%s", r.out);
	cr_expect(strstr(r.out, "opsets:    ai.onnx 13, com.microsoft 1, "
			 "com.example 1\n"), "%s", r.out);
	run_free(&r);
}

Test(cli_atc, inspect_json)
{
	Run r = run_gearc("inspect", "--format=json",
			  "tests/fixtures/external_data.onnx");
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"external_data\": [\n    \"external_data.bin\""),
		  "%s", r.out);
	cr_expect(strstr(r.out, "\"shape\": [\n        \"N\",\n        16\n"),
		  "%s", r.out);
	cr_expect(strstr(r.out, "\"input_shape\": \"x:-1,16\""), "%s", r.out);
	run_free(&r);
	r = run_gearc("inspect", "--format=json",
		      "tests/fixtures/cli_unsupported.onnx");
	cr_expect(strstr(r.out, "\"op\": \"NotAnOp\",\n      \"domain\": "
			 "\"com.microsoft\",\n      \"count\": 1,\n      "
			 "\"supported\": false"), "%s", r.out);
	run_free(&r);
}

Test(cli_atc, inspect_errors)
{
	Run r = run_gearc("inspect");
	expect_error(&r, 2, "inspect needs the ONNX model to show");
	run_free(&r);
	r = run_gearc("inspect", "--format=dot", "x.onnx");
	expect_error(&r, 2, "--format: 'dot' is not an inspect format");
	run_free(&r);
	r = run_gearc("inspect", "tests/fixtures/not_onnx.onnx");
	cr_expect_eq(r.status, 1);
	run_free(&r);
}

Test(cli_atc, help_ops_lists_the_op_table)
{
	Run r = run_gearc("help", "ops");
	cr_expect_eq(r.status, 0);
	cr_expect(strstr(r.out, "ai.onnx (default) ("), "%s", r.out);
	cr_expect(strstr(r.out, " Conv ") || strstr(r.out, " Conv\n"), "%s", r.out);
	cr_expect(strstr(r.out, "ai.gearc ("), "%s", r.out);
	cr_expect(!strstr(r.out, "NoSuchOp"));
	run_free(&r);
	r = run_gearc("help", "inspect");
	cr_expect_eq(r.status, 0);
	cr_expect(strstr(r.out, "usage: gearc inspect"));
	run_free(&r);
}

/* ---- shapes as trtexec and OpenVINO write them; named gear dims ---------- */

/* The --input_shape option the .om records (dump's "option:" line). */
static void expect_recorded(const char *om, const char *line)
{
	Run r = run_gearc("dump", "--summary", om);
	cr_expect(strstr(r.out, line), "no '%s' in: %s", line, r.out);
	run_free(&r);
}

Test(cli_atc, shapes_in_three_forms)
{
	static const char *forms[] = { "--input_shape=x:1,3,32,32",
				       "--input_shape=x:1x3x32x32",
				       "--input_shape=x[1,3,32,32]",
				       "--input_shape=x[1 3 32 32]" };
	char *dir = temp_dir();
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const char *extra[] = { forms[i], NULL };
		char *om = compile_fixture(dir, "m", "demo_cnn", extra);
		expect_recorded(om, "option:    --input_shape=x:1,3,32,32\n");
		free(om);
	}
	const char *dyn[] = { "--input_shape=x[-1,3,32,32]",
			      "--dynamic_batch_size=1,2", NULL };
	char *om = compile_fixture(dir, "m", "demo_cnn", dyn);
	expect_recorded(om, "option:    --input_shape=x:-1,3,32,32\n");
	free(om);
	const char *q[] = { "--input_shape=x[?,3,32,32]",
			    "--dynamic_batch_size=1,2", NULL };
	om = compile_fixture(dir, "m", "demo_cnn", q);
	expect_recorded(om, "option:    --input_shape=x:-1,3,32,32\n");
	free(om);
	/* trtexec and OpenVINO separate inputs with ',' */
	const char *two[] = { "--input_shape=tokens:2x8,mask:2x8",
			      NULL };
	om = compile_fixture(dir, "m", "three_inputs", two);
	expect_recorded(om, "option:    --input_shape=tokens:2,8;mask:2,8\n");
	free(om);
	const char *two_ov[] = { "--input_shape=tokens[2,8],mask[2,8]", NULL };
	om = compile_fixture(dir, "m", "three_inputs", two_ov);
	expect_recorded(om, "option:    --input_shape=tokens:2,8;mask:2,8\n");
	free(om);
	remove_tree(dir);
	free(dir);
}

Test(cli_atc, shape_form_errors)
{
	static const char *bad[][2] = {
		{ "x:1x3,32x32", "entry 1 (\"x:1x3,32x32\") mixes 'x' and ','" },
		{ "x[1,3,32", "entry 1 (\"x[1,3,32\") has unbalanced brackets" },
		{ "x[1,3,32,32]y", "entry 1 (\"x[1,3,32,32]y\") has text after ']'" },
		{ "x:1,3,32,32;y[1,2]", "entry 2 (\"y[1,2]\") is in OpenVINO's (x[1,3,224,224]) form but entry 1 in atc's" },
		{ "x:1x3x32x32;y:1,2", "entry 2 (\"y:1,2\") is in atc's (x:1,3,224,224) form but entry 1 in trtexec's" },
		{ "x[1,3,1..10,32]", "dim \"1..10\" is a range" },
		{ "[1,3,32,32]", "has no input name before '['" },
		{ "x[1,3,3a,32]", "dim 2 (\"3a\") must be an integer >= 0 or -1" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char flag[128];
		snprintf(flag, sizeof(flag), "--input_shape=%s", bad[i][0]);
		Run r = run_gearc(CNN, "--output=/tmp/never", flag);
		expect_error(&r, 2, bad[i][1]);
		cr_expect(strstr(r.err, "--input_shape: "), "%s", r.err);
		run_free(&r);
	}
}

Test(cli_atc, named_dynamic_dims_for_a_kv_cache)
{
	char *dir = temp_dir();
	const char *extra[] = {
		"--dynamic_dims=batch:1,2;seq:1;past_sequence_length:16,32",
		NULL
	};
	char *om = compile_fixture(dir, "kv", "cli_kv", extra);
	Run r = run_gearc("dump", om);
	/* seq has one value: static; batch x past length: 4 gears */
	cr_expect(strstr(r.out, "mode:      dims, 4 gears"), "%s", r.out);
	cr_expect(strstr(r.out, "  input_ids                int64    "
			 "[-1,1]  max [2,1]\n"), "%s", r.out);
	cr_expect(strstr(r.out, "  past_value_2             float32  "
			 "[-1,2,-1,4]  max [2,2,32,4]\n"), "%s", r.out);
	/* input_ids' batch, then each past tensor's batch and length */
	cr_expect(strstr(r.out, "Batch_1    dims [1,1,32,1,32,1,32,1,32,1,32,"
			 "1,32]"), "%s", r.out);
	cr_expect(strstr(r.out, "Batch_2    dims [2,2,16,2,16,2,16,2,16,2,16,"
			 "2,16]"), "%s", r.out);
	run_free(&r);
	r = run_gearc("run", om, "--random-inputs", "--gear=3");
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "output 'present_key_0' float32 [2,2,33,4]"),
		  "%s", r.out);
	run_free(&r);
	free(om);
	/* --input_shape pins what the names leave open */
	const char *pinned[] = { "--input_shape=input_ids:1,1",
				 "--dynamic_dims=batch:1;past_sequence_length:8,16",
				 NULL };
	om = compile_fixture(dir, "kv", "cli_kv", pinned);
	free(om);
	remove_tree(dir);
	free(dir);
}

Test(cli_atc, named_dynamic_dims_errors)
{
	static const char *usage[][2] = {
		{ "batch:1,2;batch:4", "--dynamic_dims: 'batch' is named twice (entries 1 and 2)" },
		{ "batch:1,1", "--dynamic_dims: entry 1 (\"batch:1,1\") gives 1 twice" },
		{ "batch:1", "the named values make 1 gear, but at least 2 are needed" },
		{ "batch:", "entry 1 (\"batch:\") has no values after ':'" },
		{ ":1,2", "entry 1 (\":1,2\") has no dim name before ':'" },
		{ "batch:1,x", "value 2 (\"x\") must be a positive integer" },
		{ "batch:1,2;;seq:1", "entry 2 is empty" },
		{ "batch:1,2,3,4,5,6,7,8,9,10,11;seq:1,2,3,4,5,6,7,8,9,10", "more than 100 gears" },
	};
	for (size_t i = 0; i < sizeof(usage) / sizeof(usage[0]); i++) {
		char flag[160];
		snprintf(flag, sizeof(flag), "--dynamic_dims=%s", usage[i][0]);
		Run r = run_gearc("--model=tests/fixtures/cli_kv.onnx",
				  "--output=/tmp/never", flag);
		expect_error(&r, 2, usage[i][1]);
		run_free(&r);
	}
	static const char *model[][3] = {
		{ "--dynamic_dims=batch:1,2;seq:1;past_sequence_lenght:4", NULL,
		  "--dynamic_dims: input 'past_key_0' dim 2 ('past_sequence_length') is open, but no value is named for it" },
		{ "--dynamic_dims=batch:1,2;seq:1;past_sequence_length:4;beam:2", NULL,
		  "--dynamic_dims: no input dim is named 'beam'" },
		{ "--dynamic_dims=batch:1,2;past_sequence_length:4",
		  "--input_shape=input_ids:-1,-1",
		  "--input_shape: 'input_ids' dim 1 is -1, but --dynamic_dims does not name its dim 'seq'" },
	};
	for (size_t i = 0; i < sizeof(model) / sizeof(model[0]); i++) {
		Run r = model[i][1]
				? run_gearc("--model=tests/fixtures/cli_kv.onnx",
					    "--output=/tmp/never", model[i][0],
					    model[i][1])
				: run_gearc("--model=tests/fixtures/cli_kv.onnx",
					    "--output=/tmp/never", model[i][0]);
		expect_error(&r, 1, model[i][2]);
		run_free(&r);
	}
}
