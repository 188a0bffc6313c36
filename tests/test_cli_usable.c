/*
 * tests/test_cli_usable.c - issue 18: gearc as a new user meets it on
 * real exports (tests/fixtures/vad_sr.onnx, made by
 * tests/gen_usable_models.py): a branch invalid only when taken, pinned
 * inputs, atc's scalar syntax, honest warnings, the summary line, and a
 * dump one can navigate.
 */
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

Test(usable, invalid_branch_compiles_with_one_warning)
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

Test(usable, invalid_branch_in_a_static_compile)
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

Test(usable, every_branch_invalid_is_an_error)
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

Test(usable, scalar_syntax)
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

Test(usable, output_naming_a_directory)
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

Test(usable, summary_line)
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

Test(usable, dump_after_list_failure_and_offsets)
{
	char *d = temp_dir();
	Run r = compile_vad(d, "--input_shape=x:1,256;sr:",
			    "--dump-after=infer,memplan", "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "# after pass infer\n"), "%s", r.out);
	cr_expect(strstr(r.out, "# after pass memplan\n"));
	/* memplan: every planned tensor with its offset */
	const char *mp = strstr(r.out, "# after pass memplan");
	cr_expect(mp && strstr(mp, "plan: arena "), "%s", r.out);
	cr_expect(mp && strstr(mp, "is16k:bool[]@0"), "%s", r.out);
	run_free(&r);
	/* a pass that fails still prints the graph it worked on */
	r = compile_vad(d, "--input_shape=x:1,100;sr:", "--dump-after=infer",
			NULL);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.out, "# after pass infer (failed"), "%s", r.out);
	cr_expect(strstr(r.out, "If 'if_sr'"), "%s", r.out);
	run_free(&r);
	r = compile_vad(d, "--input_shape=x:1,100;sr:",
			"--dump-after=infer,nope", NULL);
	expect_error(&r, 2, "--dump-after: no pass named 'nope'");
	run_free(&r);
	remove_tree(d);
	free(d);
}
