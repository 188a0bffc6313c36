/*
 * tests/test_cli_usable.c - issue 18: gearc as a new user meets it on
 * real exports (tests/fixtures/vad_sr.onnx, made by
 * tests/gen_usable_models.py): a branch invalid only when taken, pinned
 * inputs, atc's scalar syntax, honest warnings, the summary line, and a
 * dump one can navigate; and, at the end, the Fail kernel itself, called
 * as the runtime calls it.
 */
#define _XOPEN_SOURCE 700 /* posix_openpt, for the progress test */
#include <json-c/json.h>

#include "testrun.h"

#define VAD "tests/fixtures/vad_sr.onnx"

static int count_lines(const char *s, const char *prefix)
{
	int n = 0;
	size_t k = strlen(prefix);
	for (const char *p = s; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		n += !strncmp(p, prefix, k);
	return n;
}

/* Runs gearc on VAD writing dir/out.om with the extra flags. */
static Run compile_vad(const char *dir, const char *a, const char *b,
		       const char *c)
{
	char out[512];
	snprintf(out, sizeof(out), "--output=%s/out", dir);
	return run_gearc("--model=" VAD, out, a, b, c);
}

static char *om_in(const char *dir)
{
	return path_in(dir, "out.om");
}

static json_object *dump_json_of(const char *om, const char *extra)
{
	Run r = extra ? run_gearc("dump", "--format=json", extra, om)
		      : run_gearc("dump", "--format=json", om);
	cr_assert_eq(r.status, 0, "dump exit %d: %s", r.status, r.err);
	json_object *j = json_tokener_parse(r.out);
	cr_assert(j, "dump output is not JSON: %.200s", r.out);
	run_free(&r);
	return j;
}

static json_object *jget(json_object *o, const char *key)
{
	json_object *v = NULL;
	cr_assert(json_object_object_get_ex(o, key, &v), "no key '%s'", key);
	return v;
}

/* ---- a branch invalid only when taken ----------------------------------- */

Test(cli_usable, invalid_branch_compiles_with_one_warning)
{
	char *d = temp_dir(), *om = om_in(d);
	Run r = compile_vad(d, "--input_shape=x:1,-1;sr:",
			    "--dynamic_dims=256;512", "-j2");
	cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	/* valid at 256 (both branches fit), invalid at 512: one warning */
	cr_expect_eq(count_lines(r.err, "gearc: warning: "), 1, "%s", r.err);
	cr_expect(strstr(r.err, "gearc: warning: If 'if_sr_batch_1' "
				"(condition 'is16k', from input 'sr'): "
				"else_branch is invalid at gear Batch_1"),
		  "%s", r.err);
	cr_expect(strstr(r.err, "cannot reshape input 'x' [1,512] into "
				"[4,1,64]"), "%s", r.err);
	run_free(&r);
	/* dump shows the Fail node where the else branch was */
	r = run_gearc("dump", om);
	cr_assert_eq(r.status, 0);
	cr_expect(strstr(r.out, "Fail                 if_sr_batch_1/else_branch/"
				"fail"), "%s", r.out);
	cr_expect(!strstr(r.out, "if_sr_batch_0/else_branch/fail"));
	run_free(&r);
	r = run_gearc("verify", om);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	/* --quiet silences the warning and the summary */
	r = compile_vad(d, "--input_shape=x:1,-1;sr:",
			"--dynamic_dims=256;512", "--quiet");
	cr_expect_eq(r.status, 0);
	cr_expect_str_empty(r.err);
	run_free(&r);
	remove_tree(d);
	free(om);
	free(d);
}

Test(cli_usable, invalid_branch_in_a_static_compile)
{
	char *d = temp_dir();
	Run r = compile_vad(d, "--input_shape=x:1,512;sr:", "-j1", "-j1");
	/* -j1 twice is a usage error: the flags are checked */
	cr_expect_eq(r.status, 2);
	run_free(&r);
	r = compile_vad(d, "--input_shape=x:1,512;sr:", "-j1", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "gearc: warning: If 'if_sr' (condition "
				"'is16k', from input 'sr'): else_branch is "
				"invalid at the compiled shapes"), "%s", r.err);
	run_free(&r);
	remove_tree(d);
	free(d);
}

Test(cli_usable, every_branch_invalid_is_an_error)
{
	char *d = temp_dir(), *om = om_in(d);
	Run r = compile_vad(d, "--input_shape=x:1,100;sr:", NULL, NULL);
	expect_error(&r, 1, "node 'if_sr' (If): both branches are invalid at "
			    "these shapes: then_branch: node "
			    "'sr16k_branch/reshape' (Reshape)");
	cr_expect(strstr(r.err, "else_branch: node 'sr8k_branch/reshape'"));
	cr_expect(access(om, F_OK) != 0, "a failed compile left %s", om);
	run_free(&r);
	remove_tree(d);
	free(om);
	free(d);
}

/* ---- atc's scalar syntax ------------------------------------------------ */

Test(cli_usable, scalar_syntax)
{
	char *d = temp_dir(), *om = om_in(d);
	/* sr has no declared shape: a gear compile must list it */
	Run r = compile_vad(d, "--input_shape=x:1,-1", "--dynamic_dims=256;512",
			    NULL);
	expect_error(&r, 1, "model input 'sr' has an unknown shape");
	run_free(&r);
	r = compile_vad(d, "--input_shape=x:1,-1;sr:", "--dynamic_dims=256;512",
			"-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	json_object *j = dump_json_of(om, NULL), *in = jget(j, "inputs");
	json_object *sr = json_object_array_get_idx(in, 1);
	cr_expect_str_eq(json_object_get_string(jget(sr, "name")), "sr");
	cr_expect_eq(json_object_array_length(jget(sr, "shape")), 0);
	json_object_put(j);
	remove_tree(d);
	free(om);
	free(d);
}

/* ---- --output ----------------------------------------------------------- */

Test(cli_usable, output_naming_a_directory)
{
	char *d = temp_dir(), arg[600], *sub = path_in(d, "x.om");
	snprintf(arg, sizeof(arg), "--output=%s/", d);
	Run r = run_gearc("--model=" VAD, arg, "--input_shape=x:1,512;sr:");
	expect_error(&r, 2, "ends in '/'");
	run_free(&r);
	snprintf(arg, sizeof(arg), "--output=%s", d);
	r = run_gearc("--model=" VAD, arg, "--input_shape=x:1,512;sr:");
	expect_error(&r, 2, "is a directory");
	run_free(&r);
	cr_assert_eq(mkdir(sub, 0755), 0);
	snprintf(arg, sizeof(arg), "--output=%s/x", d);
	r = run_gearc("--model=" VAD, arg, "--input_shape=x:1,512;sr:");
	expect_error(&r, 2, "x.om' is a directory");
	run_free(&r);
	char *hidden = path_in(d, ".om");
	cr_expect(access(hidden, F_OK) != 0);
	free(hidden);
	remove_tree(d);
	free(sub);
	free(d);
}

/* ---- the summary line --------------------------------------------------- */

Test(cli_usable, summary_line)
{
	char *d = temp_dir(), *om = om_in(d), want[600];
	Run r = compile_vad(d, "--input_shape=x:1,256;sr:", NULL, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	struct stat st;
	cr_assert_eq(stat(om, &st), 0);
	snprintf(want, sizeof(want), "gearc: wrote %s: static mode, 0 gears, "
		 "%lld bytes, largest arena ", om, (long long)st.st_size);
	cr_expect(!strncmp(r.err, want, strlen(want)), "%s\nwant %s", r.err,
		  want);
	cr_expect_eq(count_lines(r.err, ""), 1, "%s", r.err);
	run_free(&r);
	remove_tree(d);
	free(om);
	free(d);
}

/* ---- --dump-after ------------------------------------------------------- */

Test(cli_usable, dump_after_list_failure_and_offsets)
{
	char *d = temp_dir();
	Run r = compile_vad(d, "--input_shape=x:1,256;sr:",
			    "--dump-after=specialise,memplan", "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "# after pass specialise\n"), "%s", r.out);
	cr_expect(strstr(r.out, "# after pass memplan\n"));
	/* memplan: every planned tensor with its offset */
	const char *mp = strstr(r.out, "# after pass memplan");
	cr_expect(mp && strstr(mp, "plan: arena "), "%s", r.out);
	cr_expect(mp && strstr(mp, "is16k:bool[]@0"), "%s", r.out);
	run_free(&r);
	/* a pass that fails still prints the graph it worked on */
	r = compile_vad(d, "--input_shape=x:1,100;sr:",
			"--dump-after=specialise", NULL);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.out, "# after pass specialise (failed"), "%s",
		  r.out);
	cr_expect(strstr(r.out, "If 'if_sr'"), "%s", r.out);
	run_free(&r);
	r = compile_vad(d, "--input_shape=x:1,100;sr:",
			"--dump-after=specialise,nope", NULL);
	expect_error(&r, 2, "--dump-after: no pass named 'nope'");
	run_free(&r);
	remove_tree(d);
	free(d);
}

/* ---- --input_value ------------------------------------------------------ */

Test(cli_usable, pinned_input_resolves_the_if)
{
	char *d = temp_dir(), *om = om_in(d);
	Run r = compile_vad(d, "--input_shape=x:1,-1;sr:",
			    "--dynamic_dims=256;512",
			    "--input_value=sr:16000; mode: 1,0");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(!strstr(r.err, "warning"), "%s", r.err);
	run_free(&r);
	json_object *j = dump_json_of(om, "--detail");
	/* sr and mode are no longer inputs */
	json_object *in = jget(j, "inputs");
	cr_expect_eq(json_object_array_length(in), 1);
	cr_expect_str_eq(json_object_get_string(
				 jget(json_object_array_get_idx(in, 0), "name")),
			 "x");
	/* the pinned values are recorded */
	json_object *pin = jget(j, "pinned");
	cr_assert_eq(json_object_array_length(pin), 2);
	json_object *p0 = json_object_array_get_idx(pin, 0);
	cr_expect_str_eq(json_object_get_string(jget(p0, "name")), "sr");
	cr_expect_eq(json_object_get_int64(
			     json_object_array_get_idx(jget(p0, "values"), 0)),
		     16000);
	json_object *p1 = json_object_array_get_idx(pin, 1);
	cr_expect_eq(json_object_array_length(jget(p1, "values")), 2);
	/* no If and no Fail left: one branch, inlined */
	const char *all = json_object_to_json_string_ext(
		jget(j, "graphs"), JSON_C_TO_STRING_PLAIN);
	cr_expect(!strstr(all, "\"op\":\"If\""), "%.300s", all);
	cr_expect(!strstr(all, "\"op\":\"Fail\""));
	cr_expect(!strstr(all, "\"op\":\"Equal\""));
	cr_expect(strstr(all, "\"op\":\"LSTM\""));
	json_object_put(j);
	r = run_gearc("dump", om);
	cr_expect(strstr(r.out, "\npinned:    sr = 16000\n"
				"pinned:    mode = [1,0]\n"), "%s", r.out);
	run_free(&r);
	remove_tree(d);
	free(om);
	free(d);
}

Test(cli_usable, pinned_to_the_invalid_branch_is_an_error)
{
	char *d = temp_dir();
	Run r = compile_vad(d, "--input_shape=x:1,512;sr:",
			    "--input_value=sr:8000", NULL);
	expect_error(&r, 1, "cannot reshape input 'x' [1,512] into [4,1,64]");
	run_free(&r);
	remove_tree(d);
	free(d);
}

Test(cli_usable, input_value_errors)
{
	static const struct {
		const char *shape, *value;
		int status;
		const char *msg;
	} cases[] = {
		{ "x:1,512;sr:", "srx:1", 1,
		  "--input_value: 'srx' is not an input of the model "
		  "(inputs: 'x', 'sr', 'mode')" },
		{ "x:1,512;sr:", "mode:1", 1,
		  "--input_value: 'mode' has 1 value, but its shape [2] "
		  "holds 2" },
		{ "x:1,512;sr:", "sr:16000,8000", 1,
		  "'sr' has 2 values, but its shape [] holds 1" },
		{ "x:1,512;sr:", "sr:1.5", 1,
		  "--input_value: 'sr' value 1 ('1.5') does not fit its dtype "
		  "int64 (expected an integer" },
		{ "x:1,512;sr:", "mode:1,99999999999999999999", 1,
		  "'mode' value 2 ('99999999999999999999') does not fit" },
		{ "x:1,512;sr:", "x:abc", 1,
		  "'x' has 1 value, but its shape [1,512] holds 512" },
		{ "x:1,512;sr:", "sr:1;sr:2", 2,
		  "--input_value: 'sr' is given twice (entries 1 and 2)" },
		{ "x:1,512;sr:", "sr:", 2,
		  "--input_value: entry 1 ('sr:') has no values after ':'" },
		{ "x:1,512;sr:", "sr:1,", 2, "value 2 is empty" },
		{ "x:1,512;sr:", "16000", 2, "has no ':' between name" },
		{ "x:1,512;sr:", "sr:1;", 2, "entry 2 is empty" },
	};
	char *d = temp_dir();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char shape[128], value[128];
		snprintf(shape, sizeof(shape), "--input_shape=%s", cases[i].shape);
		snprintf(value, sizeof(value), "--input_value=%s", cases[i].value);
		Run r = compile_vad(d, shape, value, NULL);
		expect_error(&r, cases[i].status, cases[i].msg);
		run_free(&r);
	}
	char out[512];
	snprintf(out, sizeof(out), "--output=%s/out", d);
	Run r = run_gearc("--model=" VAD, out, "--input_shape=x:1,-1;sr:",
			  "--dynamic_dims=256;512", "--input_value=x:1");
	expect_error(&r, 2, "--input_value: 'x' is pinned, but --input_shape "
			    "makes it a gear input (-1 at dim 1)");
	run_free(&r);
	remove_tree(d);
	free(d);
}

/* ---- dump: --graph, --summary, --detail, DOT ---------------------------- */

/* dir/out.om of the VAD with sr at run time, gears 256 and 512. */
static char *vad_gears(const char *d)
{
	Run r = compile_vad(d, "--input_shape=x:1,-1;sr:",
			    "--dynamic_dims=256;512", "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	return om_in(d);
}

Test(cli_usable, dump_graph_and_summary)
{
	char *d = temp_dir(), *om = vad_gears(d);
	Run r = run_gearc("dump", "--graph=Batch_1/sr8k_branch", om);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(!strncmp(r.out, "\ngraph sr8k_branch: 1 nodes", 27), "%s",
		  r.out);
	cr_expect(strstr(r.out, "Fail"));
	cr_expect(!strstr(r.out, "graph Batch_0"));
	cr_expect(!strstr(r.out, "inputs:"));
	run_free(&r);
	/* a name used in two gears gives both */
	json_object *j = dump_json_of(om, "--graph=sr8k_branch");
	json_object *g = jget(j, "graphs");
	cr_assert_eq(json_object_array_length(g), 2);
	json_object *g1 = json_object_array_get_idx(g, 1);
	cr_expect_str_eq(json_object_get_string(jget(g1, "parent")), "Batch_1");
	json_object *n0 = json_object_array_get_idx(
		jget(jget(g1, "detail"), "nodes"), 0);
	cr_expect_str_eq(json_object_get_string(jget(n0, "op")), "Fail");
	cr_expect(strstr(json_object_get_string(
				 jget(jget(n0, "attributes"), "message")),
			 "else_branch of If 'if_sr_batch_1' was taken"));
	json_object_put(j);
	r = run_gearc("dump", "--format=dot", "--graph=Batch_0", om);
	cr_expect_eq(r.status, 0);
	cr_expect(strstr(r.out, "cluster_1"));
	cr_expect(!strstr(r.out, "cluster_0"));
	run_free(&r);
	r = run_gearc("dump", "--graph=nope", om);
	expect_error(&r, 1, "--graph: no graph named 'nope' in the file "
			    "(graphs: root, Batch_0, ");
	run_free(&r);
	/* --summary: header, inputs, outputs, gears, memory; no graph */
	r = run_gearc("dump", "--summary", om);
	cr_expect_eq(r.status, 0);
	cr_expect(strstr(r.out, "\narena:     "));
	cr_expect(strstr(r.out, "\ninputs:\n"));
	cr_expect(strstr(r.out, "\ngears:\n"));
	cr_expect(!strstr(r.out, "\ngraph "), "%s", r.out);
	run_free(&r);
	j = dump_json_of(om, "--summary");
	json_object *v;
	cr_expect(!json_object_object_get_ex(j, "graphs", &v));
	cr_expect(json_object_object_get_ex(j, "gears", &v));
	cr_expect(json_object_object_get_ex(j, "memory", &v));
	json_object_put(j);
	r = run_gearc("dump", "--summary", "--format=dot", om);
	expect_error(&r, 2, "--summary has no DOT form");
	run_free(&r);
	r = run_gearc("dump", "--detail", om);
	expect_error(&r, 2, "--detail is for --format=json");
	run_free(&r);
	remove_tree(d);
	free(om);
	free(d);
}

Test(cli_usable, dump_json_detail)
{
	char *d = temp_dir(), *om = vad_gears(d);
	json_object *j = dump_json_of(om, NULL), *v;
	json_object *g0 = json_object_array_get_idx(jget(j, "graphs"), 0);
	cr_expect(!json_object_object_get_ex(g0, "detail", &v),
		  "detail without --detail");
	json_object_put(j);
	j = dump_json_of(om, "--detail");
	json_object *graphs = jget(j, "graphs");
	json_object *b0 = json_object_array_get_idx(graphs, 1);
	cr_expect_str_eq(json_object_get_string(jget(b0, "name")), "Batch_0");
	cr_expect_eq(json_object_get_int(jget(b0, "index")), 1);
	json_object *nodes = jget(jget(b0, "detail"), "nodes");
	json_object *tensors = jget(jget(b0, "detail"), "tensors");
	cr_expect_eq((int64_t)json_object_array_length(nodes),
		     json_object_get_int64(jget(b0, "nodes")));
	cr_expect_eq((int64_t)json_object_array_length(tensors),
		     json_object_get_int64(jget(b0, "tensors")));
	/* the If: inputs, outputs, graph attributes by name */
	bool seen_if = false, seen_planned = false;
	for (size_t i = 0; i < json_object_array_length(nodes); i++) {
		json_object *n = json_object_array_get_idx(nodes, i);
		if (strcmp(json_object_get_string(jget(n, "op")), "If"))
			continue;
		seen_if = true;
		json_object *at = jget(n, "attributes");
		cr_expect_str_eq(json_object_get_string(jget(at, "else_branch")),
				 "sr8k_branch");
		cr_expect_str_eq(json_object_get_string(json_object_array_get_idx(
					 jget(n, "inputs"), 0)), "is16k");
	}
	cr_expect(seen_if);
	for (size_t i = 0; i < json_object_array_length(tensors); i++) {
		json_object *t = json_object_array_get_idx(tensors, i);
		jget(t, "name"), jget(t, "dtype"), jget(t, "shape");
		jget(t, "bytes"), jget(t, "alias_of"), jget(t, "inplace");
		jget(t, "kind");
		if (json_object_get_type(jget(t, "offset")) == json_type_int)
			seen_planned = true;
		/* dims: the shape, symbols named (null with it) */
		json_object *shape = jget(t, "shape"), *dims = jget(t, "dims");
		cr_expect_eq(!shape, !dims);
		cr_expect(!shape || json_object_array_length(shape) ==
					    json_object_array_length(dims));
	}
	cr_expect(seen_planned, "no tensor has an arena offset");
	/* memory: the graph's plan, here gear 0's */
	json_object *gear0 = json_object_array_get_idx(jget(j, "gears"), 0);
	cr_expect(json_object_equal(jget(jget(b0, "detail"), "memory"),
				    jget(gear0, "memory")),
		  "%s", json_object_to_json_string(jget(b0, "detail")));
	json_object_put(j);
	/* DOT: the Case and the If point at their branches' clusters */
	Run r = run_gearc("dump", "--format=dot", om);
	cr_expect(strstr(r.out, "compound=true"));
	cr_expect(strstr(r.out, "g0_n1 -> g1_n0 [style=dashed, "
				"lhead=cluster_1, label=\"branches[0]\"]"),
		  "%s", r.out);
	cr_expect(strstr(r.out, "label=\"else_branch\""));
	run_free(&r);
	remove_tree(d);
	free(om);
	free(d);
}

/* ---- warnings ----------------------------------------------------------- */

Test(cli_usable, warning_gear_scope_auto_kept_full_clone)
{
	char *d = temp_dir(), out[600];
	snprintf(out, sizeof(out), "--output=%s/m", d);
	Run r = run_gearc("--model=tests/fixtures/mlp.onnx", out,
			  "--input_shape=x:-1,64", "--dynamic_batch_size=1,2",
			  "--gear_scope=auto");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "gearc: warning: --gear_scope=auto kept the "
				"full clone: every node depends on the gear"),
		  "%s", r.err);
	cr_expect_eq(count_lines(r.err, "gearc: warning: "), 1);
	run_free(&r);
	r = run_gearc("--model=tests/fixtures/mlp.onnx", out,
		      "--input_shape=x:-1,64", "--dynamic_batch_size=1,2",
		      "--gear_scope=auto", "-q");
	cr_expect_str_empty(r.err);
	run_free(&r);
	remove_tree(d);
	free(d);
}

Test(cli_usable, warning_prefix_scope_leaves_nodes_outside)
{
	char *d = temp_dir(), out[600];
	snprintf(out, sizeof(out), "--output=%s/e", d);
	Run r = run_gearc("--model=tests/fixtures/scope_enc.onnx", out,
			  "--input_shape=x:1,-1,16", "--dynamic_dims=8;16;32",
			  "--gear_scope=/encoder/");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "gearc: warning: --gear_scope=/encoder/ left 3 "
				"nodes that depend on the gear (input 'x') "
				"outside every scope (the first: "
				"'/embed/MatMul')"), "%s", r.err);
	run_free(&r);
	/* auto scopes everything that depends on the gear: no warning */
	r = run_gearc("--model=tests/fixtures/scope_enc.onnx", out,
		      "--input_shape=x:1,-1,16", "--dynamic_dims=8;16;32",
		      "--gear_scope=auto");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(!strstr(r.err, "warning"), "%s", r.err);
	run_free(&r);
	remove_tree(d);
	free(d);
}

Test(cli_usable, warning_arena_beyond_physical_memory)
{
	char *d = temp_dir(), out[600];
	snprintf(out, sizeof(out), "--output=%s/m", d);
	/* 2^36 rows of 64 floats: 16 TiB per intermediate, planned only */
	Run r = run_gearc("--model=tests/fixtures/mlp.onnx", out,
			  "--input_shape=x:68719476736,64");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "gearc: warning: graph 'root' needs a "),
		  "%s", r.err);
	cr_expect(strstr(r.err, "more than this machine's physical memory"));
	run_free(&r);
	r = run_gearc("--model=tests/fixtures/mlp.onnx", out,
		      "--input_shape=x:4,64");
	cr_expect(!strstr(r.err, "warning"), "%s", r.err);
	run_free(&r);
	remove_tree(d);
	free(d);
}

/* A default-domain node with no ai.onnx opset import has no defined
 * semantics: an error naming the node (issue 19 made it one; a warning
 * would let the compile pick semantics silently). */
Test(cli_usable, no_opset_import_is_an_error)
{
	char *d = temp_dir(), out[600];
	snprintf(out, sizeof(out), "--output=%s/n", d);
	Run r = run_gearc("--model=tests/fixtures/no_opset.onnx", out);
	expect_error(&r, 1, "node 'relu' (Relu) is in the default domain, but "
			    "the model imports no ai.onnx opset");
	run_free(&r);
	remove_tree(d);
	free(d);
}

/* ---- progress on a terminal --------------------------------------------- */

/* Runs gearc with stderr on a pseudo-terminal; returns what it wrote. */
static char *run_on_tty(const char *const *args, int *status)
{
	int mfd = posix_openpt(O_RDWR | O_NOCTTY);
	cr_assert(mfd >= 0 && grantpt(mfd) == 0 && unlockpt(mfd) == 0);
	const char *argv[16] = { gearc_bin() };
	int n = 1;
	for (; args[n - 1]; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int sfd = open(ptsname(mfd), O_RDWR | O_NOCTTY);
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(sfd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	char *buf = calloc(1, 65536);
	size_t len = 0;
	for (;;) {
		ssize_t k = read(mfd, buf + len, 65535 - len);
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	int st;
	waitpid(pid, &st, 0);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	close(mfd);
	return buf;
}

Test(cli_usable, progress_lists_only_passes_that_run)
{
	char *d = temp_dir(), out[600];
	snprintf(out, sizeof(out), "--output=%s/p", d);
	const char *args[] = { "--model=" VAD, out,
			       "--input_shape=x:1,256;sr:", NULL };
	int st;
	char *tty = run_on_tty(args, &st);
	cr_assert_eq(st, 0, "%s", tty);
	/* a static compile: specialise, fuse, partition, memplan */
	cr_expect(strstr(tty, "[1/4] shape inference"), "%s", tty);
	cr_expect(strstr(tty, "[4/4] planning memory"), "%s", tty);
	cr_expect(!strstr(tty, "--hybrid") && !strstr(tty, "gear branches"),
		  "%s", tty);
	/* the progress line is cleared before the summary, which ends it */
	const char *sum = strstr(tty, "\r\033[Kgearc: wrote ");
	cr_expect(sum, "%s", tty);
	cr_expect(sum && !strchr(strchr(sum, '\n') + 1, 'g'),
		  "output after the summary: %s", tty);
	free(tty);
	const char *gear_args[] = { "--model=" VAD, out,
				    "--input_shape=x:1,-1;sr:",
				    "--dynamic_dims=256;512", NULL };
	tty = run_on_tty(gear_args, &st);
	cr_expect(strstr(tty, "[1/7] building the gear branches"), "%s", tty);
	cr_expect(strstr(tty, "[6/7] proving the batch rows independent"),
		  "%s", tty);
	cr_expect(strstr(tty, "[7/7] planning memory"), "%s", tty);
	free(tty);
	remove_tree(d);
	free(d);
}

/* ---- -q and --quiet everywhere ------------------------------------------- */

Test(cli_usable, quiet_in_every_command)
{
	char *d = temp_dir(), *om = vad_gears(d);
	static const char *flags[] = { "-q", "--quiet" };
	for (int i = 0; i < 2; i++) {
		Run r = run_gearc("verify", flags[i], om);
		cr_expect_eq(r.status, 0, "%s", r.err);
		cr_expect_str_empty(r.out, "verify %s printed: %s", flags[i],
				    r.out);
		run_free(&r);
		r = run_gearc("dump", flags[i], "--summary", om);
		cr_expect_eq(r.status, 0, "%s", r.err);
		cr_expect(strstr(r.out, "\ninputs:\n"));
		run_free(&r);
		r = run_gearc("help", flags[i], "dump");
		cr_expect_eq(r.status, 0, "%s", r.err);
		cr_expect(strstr(r.out, "--summary"));
		run_free(&r);
		r = compile_vad(d, "--input_shape=x:1,256;sr:", flags[i], NULL);
		cr_expect_eq(r.status, 0);
		cr_expect_str_empty(r.err);
		run_free(&r);
	}
	Run r = run_gearc("verify", "-q", "-v", om);
	expect_error(&r, 2, "--quiet and --verbose");
	run_free(&r);
	/* help lists it for every command */
	static const char *cmds[] = { "compile", "dump", "verify" };
	for (int i = 0; i < 3; i++) {
		r = run_gearc("help", cmds[i]);
		cr_expect(strstr(r.out, "-q, --quiet"), "help %s", cmds[i]);
		run_free(&r);
	}
	remove_tree(d);
	free(om);
	free(d);
}

/* ---- the Fail kernel ---------------------------------------------------- */

#include "compiler/ops/opimpl.h"
#include "passes/passes.h"

/* A Fail node as control.c makes it: outputs from its attributes; the
 * kernel computes nothing when folding and raises its message when run
 * (the runtime calls it with tensors bound). */
Test(cli_usable, fail_kernel_raises_only_when_run)
{
	Model *m = model_new();
	Graph *g = m->graph = graph_new(&m->arena, "g", NULL);
	Node *n = graph_add_node(g, "b/fail", "Fail", "ai.gearc", 0, 1);
	cr_assert_eq(n->op, OP_Fail);
	int64_t dt = DT_FLOAT, sh[] = { 2, 1, 16 };
	node_add_string(g, n, "message", "else_branch of If 'i' was taken");
	node_add_ints(g, n, "dtypes", &dt, 1);
	node_add_ints(g, n, "shapes", sh, 3);
	ValId y = graph_add_value(g, "y", VAL_NODE);
	g->nodes[0].outputs[0] = y;
	g->outputs = &g->nodes[0].outputs[0];
	g->noutputs = 1;
	cr_assert_eq(graph_toposort(g), 0, "%s", last_error());
	cr_assert_eq(infer_graph(m, g), 0, "%s", last_error());
	cr_expect_eq(g->vals[y].dtype, DT_FLOAT);
	cr_expect_eq(g->vals[y].shape.rank, 2);
	cr_expect_eq(g->vals[y].shape.dims[1], 16);
	cr_expect_null(g->vals[y].konst, "folding computed a Fail");
	OpCtx c = { .model = m, .g = g, .n = &g->nodes[0], .arena = &m->arena };
	cr_expect_eq(op_info[OP_Fail].run(&c), 0);
	Tensor *out[1] = { NULL };
	uint8_t set[1] = { 0 };
	OpBind bind = { .out = out, .set = set };
	c.bind = &bind;
	clear_error();
	cr_expect_eq(op_info[OP_Fail].run(&c), -1);
	cr_expect_str_eq(last_error(), "node 'b/fail' (Fail): else_branch of "
				       "If 'i' was taken");
	/* malformed attributes are an error, not a guess */
	int64_t bad[] = { 3, 1 }; /* rank 3, one dim */
	cr_assert_str_eq(g->nodes[0].attrs[2].name, "shapes");
	g->nodes[0].attrs[2].n = 2;
	g->nodes[0].attrs[2].ints = bad;
	cr_expect_eq(infer_graph(m, g), -1);
	cr_expect(strstr(last_error(), "malformed"), "%s", last_error());
	model_free(m);
}
