/*
 * tests/test_cli_run.c - `gearc run` as a user runs it: inputs from .npy
 * and .pb files, outputs written as .npy (names escaped), --bench's line,
 * and the errors for what a user gets wrong.
 */
#include "cli/npy.h"
#include <math.h>

#include "runtime/gearrt.h"
#include "testrun.h"

static char *compile_two(const char *dir)
{
	char *out = path_in(dir, "two"), oflag[512];
	snprintf(oflag, sizeof(oflag), "--output=%s", out);
	Run r = run_gearc("--model=tests/fixtures/two_inputs.onnx",
			  "--input_shape=a:-1,3,-1,-1;b:-1,3,-1,-1",
			  "--dynamic_dims=1,8,8,1,8,8;2,16,16,2,16,16", oflag,
			  "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	char *om = path_in(dir, "two.om");
	free(out);
	return om;
}

/* Writes a [n,3,h,h] float32 .npy of value v + i % 5 at dir/name. */
static char *write_input(const char *dir, const char *name, int64_t n,
			 int64_t h, float v)
{
	Shape s = { .rank = 4, .dims = { n, 3, h, h } };
	int64_t k = shape_numel(&s);
	float *p = malloc((size_t)k * sizeof(float));
	for (int64_t i = 0; i < k; i++)
		p[i] = v + (float)(i % 5);
	char *path = path_in(dir, name);
	cr_assert_eq(npy_write(path, DT_FLOAT, &s, p), 0, "%s", last_error());
	free(p);
	return path;
}

static char *flag(const char *name, const char *path)
{
	size_t n = strlen(name) + strlen(path) + 2;
	char *f = malloc(n);
	snprintf(f, n, "%s=%s", name, path);
	return f;
}

Test(cli_run, runs_npy_inputs_and_writes_npy_outputs)
{
	char *dir = temp_dir(), *om = compile_two(dir);
	char *a = write_input(dir, "a.npy", 2, 16, -2), *b =
		write_input(dir, "b.npy", 2, 16, 0.5f);
	char *fa = flag("a", a), *fb = flag("b", b), *od = flag("--output-dir", dir);
	Run r = run_gearc("run", om, "--input", fa, "-i", fb, od, "--bench=3");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "gear 1 (dims 2,16,16,2,16,16)\n"), "%s", r.out);
	cr_expect(strstr(r.out, "output 'out' float32 [2,3,16,16]\n"), "%s",
		  r.out);
	const char *bl = strstr(r.out, "\nbench: load ");
	cr_expect(bl && strstr(bl, " ms (open ") && strstr(bl, ", prepare ") &&
		  strstr(bl, ", first run ") && strstr(bl, "), run median ") &&
		  strstr(bl, " ms over 3 runs\n"), "%s", r.out);
	/* load = open + prepare + first run, each a figure of its own */
	double ld, op, pr, fr;
	cr_expect(bl && sscanf(bl, "\nbench: load %lf ms (open %lf, prepare "
				   "%lf, first run %lf)", &ld, &op, &pr, &fr) == 4,
		  "%s", bl);
	cr_expect(op > 0 && pr > 0 && fr >= 0 &&
		  fabs(ld - (op + pr + fr)) < 0.01, "%s", bl);
	Arena ar = { 0 };
	char *outp = path_in(dir, "out.npy");
	Tensor *t = npy_read(&ar, outp);
	cr_assert(t, "%s", last_error());
	cr_assert_eq(t->dtype, DT_FLOAT);
	cr_assert_eq(shape_numel(&t->shape), 2 * 3 * 16 * 16);
	const float *o = t->data;
	for (int i = 0; i < 2 * 3 * 16 * 16; i++) {
		float s = -1.5f + 2 * (float)(i % 5);
		cr_assert_eq(o[i], s > 0 ? s : 0, "element %d", i);
	}
	arena_release(&ar);
	run_free(&r);
	remove_tree(dir);
	free(dir), free(om), free(a), free(b), free(fa), free(fb), free(od);
	free(outp);
}

/* -q, as every command takes it: no gear or output lines, the bench line
 * and the --output-dir files kept; export accepts it too. */
Test(cli_run, quiet_keeps_only_what_was_asked_for)
{
	char *dir = temp_dir(), *om = compile_two(dir);
	char *od = flag("--output-dir", dir);
	Run r = run_gearc("run", om, "--random-inputs", "--gear=1", od,
			  "--bench=2", "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(!strstr(r.out, "gear ") && !strstr(r.out, "output "), "%s",
		  r.out);
	cr_expect(!strncmp(r.out, "bench: load ", 12), "%s", r.out);
	char *outp = path_in(dir, "out.npy");
	cr_expect(access(outp, F_OK) == 0);
	run_free(&r);
	char *eo = flag("--output", dir);
	r = run_gearc("export", om, "--gear=all", eo, "--quiet");
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect_str_empty(r.out);
	run_free(&r);
	remove_tree(dir);
	free(dir), free(om), free(od), free(outp), free(eo);
}

Test(cli_run, errors_name_what_to_fix)
{
	char *dir = temp_dir(), *om = compile_two(dir);
	char *a = write_input(dir, "a.npy", 1, 12, 0), *fa = flag("a", a);
	Run r = run_gearc("run", om, "--input", fa);
	expect_error(&r, 1, "input 'b' is not given");
	run_free(&r);
	r = run_gearc("run", om, "--input", fa, "--input", "zz=x.npy");
	expect_error(&r, 1, "--input 'zz=x.npy': the model has no input");
	run_free(&r);
	char *fb = flag("b", a);
	r = run_gearc("run", om, "--input", fa, "--input", fb);
	expect_error(&r, 1, "match no gear; the model's gears are: "
			    "1,8,8,1,8,8; 2,16,16,2,16,16");
	run_free(&r);
	char *junk = path_in(dir, "junk.npy");
	write_file(junk, "not numpy", 9);
	char *fj = flag("b", junk);
	r = run_gearc("run", om, "--input", fa, "--input", fj);
	expect_error(&r, 1, "not a .npy file");
	run_free(&r);
	r = run_gearc("run", om, "--random-inputs", "--bench=x");
	expect_error(&r, 2, "--bench 'x': expected an integer");
	run_free(&r);
	char *fo = flag("--output-dir", junk);
	r = run_gearc("run", om, "--random-inputs", fo);
	expect_error(&r, 2, "junk.npy' is not a directory");
	run_free(&r);
	free(fo);
	r = run_gearc("run", om, "--random-inputs", "--gear=7");
	expect_error(&r, 1, "--gear=7: ");
	cr_expect(strstr(r.err, "two.om has 2 gears (0..1)"), "%s", r.err);
	run_free(&r);
	r = run_gearc("run");
	expect_error(&r, 2, "run needs the .om file");
	run_free(&r);
	remove_tree(dir);
	free(dir), free(om), free(a), free(fa), free(fb), free(junk), free(fj);
}

/* An input given twice is a usage error, as any repeated flag is (the
 * first was taken); the check is against the model's names, so a name
 * holding '=' is told apart. */
Test(cli_run, an_input_given_twice_is_a_usage_error)
{
	char *dir = temp_dir(), *om = compile_two(dir);
	char *a = write_input(dir, "a.npy", 1, 8, 0), *b =
		write_input(dir, "b.npy", 1, 8, 1);
	char *fa = flag("a", a), *fa2 = flag("a", b), *fb = flag("b", b);
	Run r = run_gearc("run", om, "-i", fa, "--input", fa2, "-i", fb);
	expect_error(&r, 2, "both give input 'a' (one --input per input)");
	run_free(&r);
	r = run_gearc("run", om, "-i", fa, "--input", fb, "-q");
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	remove_tree(dir);
	free(dir), free(om), free(a), free(b), free(fa), free(fa2), free(fb);
}

/* --gear=K runs at gear K's shapes: random inputs take them, and inputs
 * given must have them (it never silently runs another gear).  A gear the
 * file lacks exits 1 in run as in export; a static file's graph is gear
 * 0 in both. */
Test(cli_run, gear_and_given_inputs_must_agree)
{
	char *dir = temp_dir(), *om = compile_two(dir);
	char *a = write_input(dir, "a.npy", 2, 16, 0), *b =
		write_input(dir, "b.npy", 2, 16, 1);
	char *fa = flag("a", a), *fb = flag("b", b);
	Run r = run_gearc("run", om, "-i", fa, "-i", fb, "--gear=0");
	expect_error(&r, 1, "--gear=0: input 'a' is [2,3,16,16], gear 0 "
			    "takes [1,3,8,8]");
	run_free(&r);
	r = run_gearc("run", om, "-i", fa, "-i", fb, "--gear=1");
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "gear 1 (dims 2,16,16,2,16,16)\n"), "%s",
		  r.out);
	run_free(&r);
	/* one input given, the other random at the gear's shape */
	r = run_gearc("run", om, "-i", fa, "--random-inputs", "--gear=1", "-q");
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	char *eo = path_in(dir, "x.onnx"), *fe = flag("--output", eo);
	r = run_gearc("run", om, "--random-inputs", "--gear=2");
	expect_error(&r, 1, "--gear=2: ");
	cr_expect(strstr(r.err, "has 2 gears (0..1)"), "%s", r.err);
	run_free(&r);
	r = run_gearc("export", om, "--gear=2", fe);
	expect_error(&r, 1, "--gear=2: ");
	cr_expect(strstr(r.err, "has 2 gears (0..1)"), "%s", r.err);
	run_free(&r);
	char *so = path_in(dir, "s"), *fs = flag("--output", so);
	r = run_gearc("--model=tests/fixtures/two_inputs.onnx",
		      "--input_shape=a:1,3,8,8;b:1,3,8,8", fs, "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	char *som = path_in(dir, "s.om");
	r = run_gearc("run", som, "--random-inputs", "--gear=0", "-q");
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	r = run_gearc("run", som, "--random-inputs", "--gear=1");
	expect_error(&r, 1, "s.om has 1 gear (0..0)");
	run_free(&r);
	r = run_gearc("export", som, "--gear=1", fe);
	expect_error(&r, 1, "s.om has 1 gear (0..0)");
	run_free(&r);
	remove_tree(dir);
	free(dir), free(om), free(a), free(b), free(fa), free(fb), free(eo);
	free(fe), free(so), free(fs), free(som);
}

/* Zero-size tensors (a 0 in --input_shape, valid in ONNX) compile, verify,
 * run, write and read as .npy, and export. */
Test(cli_run, zero_size_tensors_end_to_end)
{
	char *dir = temp_dir(), *out = path_in(dir, "z");
	char *fo = flag("--output", out), *om = path_in(dir, "z.om");
	Run r = run_gearc("--model=tests/fixtures/demo_cnn.onnx",
			  "--input_shape=x:0,3,32,32", fo, "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	r = run_gearc("verify", om);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	char *fd = flag("--output-dir", dir);
	r = run_gearc("run", om, "--random-inputs", fd);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "output 'probs' float32 [0,10]\n"), "%s",
		  r.out);
	run_free(&r);
	Arena ar = { 0 };
	char *probs = path_in(dir, "probs.npy");
	Tensor *t = npy_read(&ar, probs);
	cr_assert(t, "%s", last_error());
	cr_expect(t->shape.rank == 2 && t->shape.dims[0] == 0 &&
		  t->shape.dims[1] == 10 && t->nbytes == 0);
	arena_release(&ar);
	char *x = path_in(dir, "x.npy"), *fx;
	Shape s = { .rank = 4, .dims = { 0, 3, 32, 32 } };
	cr_assert_eq(npy_write(x, DT_FLOAT, &s, NULL), 0, "%s", last_error());
	fx = flag("x", x);
	r = run_gearc("run", om, "-i", fx, "-q");
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	char *onnx = path_in(dir, "z.onnx"), *fe = flag("--output", onnx);
	r = run_gearc("export", om, fe);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	char *fm = flag("--model", onnx), *fo2 = flag("--output", out);
	r = run_gearc(fm, fo2, "-q");
	cr_expect_eq(r.status, 0, "re-import of the export: %s", r.err);
	run_free(&r);
	remove_tree(dir);
	free(dir), free(out), free(fo), free(om), free(fd), free(probs);
	free(x), free(fx), free(onnx), free(fe), free(fm), free(fo2);
}

Test(cli_run, backend_test_pb_inputs)
{
	char *dir = temp_dir(), *out = path_in(dir, "relu"), of[512], mf[512];
	char in[512];
	snprintf(mf, sizeof(mf), "--model=%s/node/test_relu/model.onnx",
		 testdata_dir());
	snprintf(of, sizeof(of), "--output=%s", out);
	Run r = run_gearc(mf, of, "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	snprintf(in, sizeof(in), "x=%s/node/test_relu/test_data_set_0/"
		 "input_0.pb", testdata_dir());
	char *om = path_in(dir, "relu.om");
	r = run_gearc("run", om, "--input", in);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "static graph\noutput 'y' float32 [3,4,5]\n"),
		  "%s", r.out);
	run_free(&r);
	remove_tree(dir);
	free(dir), free(out), free(om);
}

Test(cli_run, output_names_are_escaped)
{
	char *dir = temp_dir(), *out = path_in(dir, "odd"), of[512];
	snprintf(of, sizeof(of), "--output=%s", out);
	Run r = run_gearc("--model=tests/fixtures/odd_names.onnx", of, "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	char *om = path_in(dir, "odd.om"), *od = flag("--output-dir", dir);
	r = run_gearc("run", om, "--random-inputs", od);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	char *want = path_in(dir, "y%2frelu%3a0%20%c3%a9.npy");
	struct stat st;
	cr_expect_eq(stat(want, &st), 0, "no %s", want);
	remove_tree(dir);
	free(dir), free(out), free(om), free(od), free(want);
}

Test(cli_run, npy_round_trip)
{
	char *dir = temp_dir(), *out = path_in(dir, "x");
	Shape s = { .rank = 1, .dims = { 3 } };
	float v[3] = { 1, 2, 3 };
	cr_assert_eq(npy_write(out, DT_FLOAT, &s, v), 0);
	Arena a = { 0 };
	Tensor *t = npy_read(&a, out);
	cr_assert(t && t->shape.rank == 1 && t->shape.dims[0] == 3);
	cr_expect(!memcmp(t->data, v, sizeof(v)));
	arena_release(&a);
	remove_tree(dir);
	free(dir), free(out);
}

/* Issue 18's pattern at run time: vad_sr.onnx compiled with its scalar
 * sr left a runtime input; If(Equal(sr, 16000)) has an else branch that
 * does not fit 512 samples, compiled as a Fail node.  sr = 16000 runs;
 * sr = 8000 takes the Fail branch and is an error naming the node and the
 * reason, not a crash. */
Test(cli_run, a_branch_invalid_at_the_gear_fails_only_when_taken)
{
	char *dir = temp_dir(), *out = path_in(dir, "vad"), of[512];
	snprintf(of, sizeof(of), "--output=%s", out);
	Run r = run_gearc("--model=tests/fixtures/vad_sr.onnx",
			  "--input_shape=x:1,512;sr:", of, "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	char *om = path_in(dir, "vad.om");
	Shape xs = { .rank = 2, .dims = { 1, 512 } }, ss = { .rank = 0 };
	Shape ms = { .rank = 1, .dims = { 2 } };
	float x[512];
	for (int i = 0; i < 512; i++)
		x[i] = (float)(i % 13) / 13.0f;
	int64_t mode[2] = { 1, 0 }, sr16 = 16000, sr8 = 8000;
	char *xp = path_in(dir, "x.npy"), *mp = path_in(dir, "mode.npy");
	char *s16 = path_in(dir, "sr16.npy"), *s8 = path_in(dir, "sr8.npy");
	cr_assert_eq(npy_write(xp, DT_FLOAT, &xs, x), 0);
	cr_assert_eq(npy_write(mp, DT_INT64, &ms, mode), 0);
	cr_assert_eq(npy_write(s16, DT_INT64, &ss, &sr16), 0);
	cr_assert_eq(npy_write(s8, DT_INT64, &ss, &sr8), 0);
	char *fx = flag("x", xp), *fm = flag("mode", mp);
	char *f16 = flag("sr", s16), *f8 = flag("sr", s8);
	r = run_gearc("run", om, "-i", fx, "-i", fm, "-i", f16);
	cr_expect_eq(r.status, 0, "sr=16000: %s", r.err);
	cr_expect(strstr(r.out, "output 'prob' float32"), "%s", r.out);
	run_free(&r);
	r = run_gearc("run", om, "-i", fx, "-i", fm, "-i", f8);
	expect_error(&r, 1, "cannot reshape input 'x' [1,512] into [4,1,64]");
	run_free(&r);
	remove_tree(dir);
	free(dir), free(out), free(om), free(xp), free(mp), free(s16);
	free(s8), free(fx), free(fm), free(f16), free(f8);
}

/* A random input larger than the machine's memory aborted gearc run
 * (exit 134, "out of memory allocating ..."): now one line, exit 1. */
Test(cli_run, a_random_input_larger_than_memory_is_an_error)
{
	char *d = temp_dir(), out[600], om[600];
	snprintf(out, sizeof(out), "--output=%s/huge", d);
	snprintf(om, sizeof(om), "%s/huge.om", d);
	Run r = run_gearc("--model=tests/fixtures/mlp.onnx",
			  "--input_shape=x:4294967296,64", out, "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	r = run_gearc("run", om, "--random-inputs");
	expect_error(&r, 1, "random input 'x' of shape [4294967296,64] needs "
		     "more than this machine's memory");
	run_free(&r);
	remove_tree(d);
	free(d);
}

/* gearc run's threads are gearrt's pool, oneDNN's regions on it too,
 * whatever libgomp's environment says; GEARRT_DNNL_LIBGOMP=1 leaves
 * oneDNN on libgomp, whose policy gearc then sets as before
 * (gearrt_wait_policy_exec: GOMP_SPINCOUNT=GEARRT_SPINCOUNT unless the
 * environment chose); --bench says which. */
Test(cli_run, threads_wait_on_gearrt_s_pool)
{
	static const struct {
		const char *var, *value, *says;
	} cases[] = {
		{ NULL, NULL, "(gearrt's pool), oneDNN's on it too" },
		{ "OMP_WAIT_POLICY", "active", "(gearrt's pool), oneDNN's on "
					       "it too" },
		{ "GEARRT_DNNL_LIBGOMP", "1", "oneDNN's threads, on libgomp, "
					      "spin " GEARRT_SPINCOUNT " times"
					      ", then sleep (GOMP_SPINCOUNT)" },
	};
	char *dir = temp_dir(), *om = compile_two(dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		unsetenv("GOMP_SPINCOUNT");
		unsetenv("OMP_WAIT_POLICY");
		if (cases[i].var)
			setenv(cases[i].var, cases[i].value, 1);
		Run r = run_gearc("run", om, "--random-inputs", "--bench=1",
				  "--threads=2", "-q");
		cr_assert_eq(r.status, 0, "%s", r.err);
		cr_expect(strstr(r.out, "threads: 2; waiting, they spin while "
					"a run is under way and 1 ms after, "
					"then sleep; "),
			  "%s", r.out);
		cr_expect(strstr(r.out, cases[i].says), "%zu: %s", i, r.out);
		run_free(&r);
		if (cases[i].var)
			unsetenv(cases[i].var);
	}
	remove_tree(dir);
	free(dir), free(om);
}
