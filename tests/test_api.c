/*
 * tests/test_api.c - libgearrt's API at its edges: session options out
 * of range, models with more inputs than any fixed table would hold,
 * and string tensors.
 */
#include <limits.h>
#include <math.h>

#include "runtime/gearrt.h"
#include "runtime/rt.h"
#include "testrun.h"

/* ---- options ------------------------------------------------------------ */

static gearrt_status create_with(gearrt_model *m, gearrt_options o)
{
	gearrt_session *s = NULL;
	gearrt_status st = gearrt_session_create(m, &o, &s);
	gearrt_session_destroy(s);
	return st;
}

/* threads = 100000 crashed in GOMP_parallel, shape_cache = INT_MAX
 * aborted on a 223 GB allocation: out of range is a status. */
Test(api, options_out_of_range_are_statuses)
{
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "two", "two_inputs",
				   (const char *[]){ "--input_shape=a:1,3,8,8;"
						     "b:1,3,8,8", NULL });
	gearrt_model *m;
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	static const struct {
		gearrt_options o;
		const char *msg;
	} bad[] = {
		{ { .threads = 100000 }, "threads 100000 is out of range (0..256)" },
		{ { .threads = GEARRT_THREADS_MAX + 1 }, "threads 257" },
		{ { .threads = -1 }, "threads -1 is out of range" },
		{ { .threads = INT_MIN }, "threads -2147483648" },
		{ { .shape_cache = INT_MAX }, "shape_cache 2147483647 is out of "
					      "range (at most 1024" },
		{ { .shape_cache = GEARRT_SHAPE_CACHE_MAX + 1 }, "shape_cache 1025" },
		{ { .profile = GEARRT_PROFILE_NODES + 1 }, "profile 3 is out of "
							   "range (0..2)" },
		{ { .profile = -1 }, "profile -1" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(create_with(m, bad[i].o), GEARRT_E_ARG, "case %zu",
			     i);
		const char *e = gearrt_last_error();
		cr_expect(strstr(e, bad[i].msg) && !strchr(e, '\n'),
			  "case %zu: %s", i, e);
	}
	static const gearrt_options good[] = {
		{ .threads = GEARRT_THREADS_MAX }, { .threads = 0 },
		{ .shape_cache = GEARRT_SHAPE_CACHE_MAX },
		{ .shape_cache = INT_MIN }, { .no_gears = -7 },
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		cr_expect_eq(create_with(m, good[i]), GEARRT_OK, "case %zu: %s",
			     i, gearrt_last_error());
	/* the most threads run */
	gearrt_session *s;
	gearrt_options o = { .threads = GEARRT_THREADS_MAX };
	cr_assert_eq(gearrt_session_create(m, &o, &s), GEARRT_OK);
	float x[3 * 8 * 8];
	for (int i = 0; i < 3 * 8 * 8; i++)
		x[i] = (float)(i % 7) - 3;
	gearrt_tensor in[2];
	for (int k = 0; k < 2; k++)
		in[k] = (gearrt_tensor){ .dtype = GEARRT_FLOAT32, .rank = 4,
					 .dims = { 1, 3, 8, 8 }, .data = x,
					 .size = sizeof(x) };
	gearrt_tensor out = { 0 };
	cr_assert_eq(gearrt_run(s, in, 2, &out, 1), GEARRT_OK, "%s",
		     gearrt_last_error());
	const float *y = out.data;
	for (int i = 0; i < 3 * 8 * 8; i++)
		cr_assert_eq(y[i], x[i] > 0 ? 2 * x[i] : 0, "at %d", i);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	remove_tree(dir);
	free(dir);
	free(om);
}

/* ---- the ISA cap ---------------------------------------------------------- */

/* gearrt_options.max_isa: one cap a process (gearc's kernels and
 * oneDNN's, which takes one, once, before its first primitive); another
 * level later, or a level below what oneDNN already runs at, is a
 * status naming the level in force, never a silent other ISA. */
Test(api, one_isa_cap_a_process)
{
	if (getenv("GEARRT_MAX_ISA"))
		cr_skip_test("this test caps its process itself");
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "two", "two_inputs",
				   (const char *[]){ "--input_shape=a:1,3,8,8;"
						     "b:1,3,8,8", NULL });
	gearrt_model *m;
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_expect_eq(create_with(m, (gearrt_options){ .max_isa = 9 }),
		     GEARRT_E_ARG);
	cr_expect(strstr(gearrt_last_error(), "max_isa 9 is not a level") &&
			  strstr(gearrt_last_error(), "GEARRT_MAX_ISA takes"),
		  "%s", gearrt_last_error());
	cr_expect_eq(create_with(m, (gearrt_options){ .max_isa = -1 }),
		     GEARRT_E_ARG);
	char all[512];
	snprintf(all, sizeof(all), "%s", gearrt_cpu_features());
	cr_assert_eq(create_with(m, (gearrt_options){ .max_isa =
							      GEARRT_ISA_SSE41 }),
		     GEARRT_OK, "%s", gearrt_last_error());
	cr_expect(!strstr(gearrt_cpu_features(), "avx"), "capped: %s (was %s)",
		  gearrt_cpu_features(), all);
	/* the same level again, or none: the process's */
	cr_expect_eq(create_with(m, (gearrt_options){ .max_isa =
							      GEARRT_ISA_SSE41 }),
		     GEARRT_OK, "%s", gearrt_last_error());
	cr_expect_eq(create_with(m, (gearrt_options){ 0 }), GEARRT_OK);
	cr_expect_eq(create_with(m, (gearrt_options){ .max_isa =
							      GEARRT_ISA_AVX2 }),
		     GEARRT_E_ARG);
	const char *e = gearrt_last_error();
	cr_expect(strstr(e, "max_isa avx2: this process's kernels are capped "
			    "at sse41 already") && !strchr(e, '\n'), "%s", e);
	gearrt_model_close(m);
	remove_tree(dir);
	free(dir);
	free(om);
}

Test(api, a_cap_after_onednn_ran_uncapped_is_refused)
{
	if (getenv("GEARRT_MAX_ISA"))
		cr_skip_test("this test caps its process itself");
	if (!RT_X86 || !cpu_has(CPU_AVX2))
		cr_skip_test("no level above sse41 for oneDNN to run at");
	/* fast_chain's convolutions are oneDNN's: once they ran at the
	 * CPU's level, oneDNN cannot be capped below it (on AVX2 too:
	 * not wino.c's) */
	rt_wino_u_avx2 = 0;
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "chain", "fast_chain", NULL);
	gearrt_model *m;
	gearrt_session *s;
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, NULL, &s), GEARRT_OK);
	cr_assert_eq(gearrt_session_prepare(s, NULL, 0), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_expect_eq(create_with(m, (gearrt_options){ .max_isa =
							      GEARRT_ISA_SSE41 }),
		     GEARRT_E_ARG);
	const char *e = gearrt_last_error();
	cr_expect(strstr(e, "max_isa sse41: oneDNN runs at") &&
			  strstr(e, "cap before the first session runs"),
		  "%s", e);
	/* a cap above what oneDNN runs at is within it */
	cr_expect_eq(create_with(m, (gearrt_options){ .max_isa =
							      GEARRT_ISA_AVX512 }),
		     GEARRT_OK, "%s", gearrt_last_error());
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	remove_tree(dir);
	free(dir);
	free(om);
}

/* GEARRT_MAX_ISA reaches a session only through gearrt_options_from_env;
 * a value that is no level makes the session's creation fail. */
Test(api, max_isa_from_the_environment)
{
	gearrt_options o = { 0 };
	setenv("GEARRT_MAX_ISA", "avx2", 1);
	gearrt_options_from_env(&o);
	cr_expect_eq(o.max_isa, GEARRT_ISA_AVX2);
	setenv("GEARRT_MAX_ISA", "baseline", 1);
	gearrt_options_from_env(&o);
	cr_expect_eq(o.max_isa, GEARRT_ISA_BASELINE);
	setenv("GEARRT_MAX_ISA", "native", 1);
	gearrt_options_from_env(&o);
	cr_expect_eq(o.max_isa, 0);
	setenv("GEARRT_MAX_ISA", "AVX2", 1);
	gearrt_options_from_env(&o);
	cr_expect_eq(o.max_isa, -1);
	o.max_isa = GEARRT_ISA_AVX;
	setenv("GEARRT_MAX_ISA", "", 1);
	gearrt_options_from_env(&o);
	cr_expect_eq(o.max_isa, GEARRT_ISA_AVX, "an empty value leaves it");
	unsetenv("GEARRT_MAX_ISA");
}

/* ---- many inputs -------------------------------------------------------- */

/* sum_1100.onnx: y = Sum(x0..x1099), each float [2].  The runtime's
 * input and output tables were fixed arrays of 1024. */
enum { NSUM = 1100 };

extern long alloc_count; /* tests/allocount.c */

Test(api, a_sum_of_1100_inputs_runs_through_the_api)
{
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "sum", "sum_1100", NULL);
	gearrt_model *m;
	gearrt_session *s;
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_input_count(m), NSUM);
	cr_assert_eq(gearrt_session_create(m, NULL, &s), GEARRT_OK);
	static float x[NSUM][2];
	static gearrt_tensor in[NSUM];
	float want[2] = { 0, 0 };
	for (int i = 0; i < NSUM; i++) {
		x[i][0] = (float)(i % 13) - 6; /* exact in float: sums too */
		x[i][1] = (float)(i % 7) * 2;
		want[0] += x[i][0];
		want[1] += x[i][1];
		gearrt_input_info(m, (size_t)i, &in[i]);
		in[i].data = x[i];
		in[i].size = sizeof(x[i]);
	}
	float y[2];
	gearrt_tensor out = { .data = y, .size = sizeof(y) };
	cr_assert_eq(gearrt_run(s, in, NSUM, &out, 1), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_expect(y[0] == want[0] && y[1] == want[1], "y = %g %g, want %g %g",
		  y[0], y[1], want[0], want[1]);
	long before = alloc_count;
	x[NSUM - 1][0] += 1;
	cr_assert_eq(gearrt_run(s, in, NSUM, &out, 1), GEARRT_OK);
	cr_expect_eq(alloc_count, before, "a second run allocated");
	cr_expect_eq(y[0], want[0] + 1);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	remove_tree(dir);
	free(dir);
	free(om);
}

/* The value gearc run --random-inputs gives element 0 and 1 of a float
 * input (cli/run.c fill_random: xorshift64 from a fixed seed, uniform in
 * [-1, 1)). */
static void random_floats(float *v, int n)
{
	uint64_t x = 0x9E3779B97F4A7C15u;
	for (int i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		v[i] = (float)(2 * ((double)(x >> 11) / 9007199254740992.0) - 1);
	}
}

Test(api, a_sum_of_1100_inputs_runs_in_gearc_run)
{
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "sum", "sum_1100", NULL);
	char odir[512];
	snprintf(odir, sizeof(odir), "--output-dir=%s", dir);
	Run r = run_gearc("run", om, "--random-inputs", odir);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "output 'y' float32 [2]"), "%s", r.out);
	run_free(&r);
	char *y = path_in(dir, "y.npy");
	size_t n = 0;
	char *b = read_file(y, &n);
	cr_assert(b && n > 8);
	float got[2], r1[2];
	memcpy(got, b + n - 8, 8);
	random_floats(r1, 2);
	for (int k = 0; k < 2; k++)
		cr_expect(fabsf(got[k] - NSUM * r1[k]) <= 1e-3f * NSUM,
			  "y[%d] = %g, want %g", k, got[k], NSUM * r1[k]);
	free(b);
	free(y);
	remove_tree(dir);
	free(dir);
	free(om);
}

/* ---- strings ------------------------------------------------------------ */

/* strings.onnx: text string [3] -> upper (UPPER, stopword "monday",
 * case-insensitive; shape from the data) and lower (LOWER, [3]). */
typedef struct Str {
	char *dir, *om;
	gearrt_model *m;
	gearrt_session *s;
} Str;

static Str str_open(void)
{
	Str t = { .dir = temp_dir() };
	t.om = compile_fixture(t.dir, "strings", "strings", NULL);
	cr_assert_eq(gearrt_model_open(t.om, &t.m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(t.m, NULL, &t.s), GEARRT_OK);
	return t;
}

static void str_close(Str *t)
{
	gearrt_session_destroy(t->s);
	gearrt_model_close(t->m);
	remove_tree(t->dir);
	free(t->dir);
	free(t->om);
}

static gearrt_tensor text(const char **words)
{
	return (gearrt_tensor){ .dtype = GEARRT_STRING, .rank = 1,
				.dims = { 3 }, .data = words,
				.size = 3 * sizeof(char *) };
}

static void expect_words(const gearrt_tensor *o, const char *const *want,
			 int64_t n)
{
	cr_assert_eq(o->dtype, GEARRT_STRING);
	cr_assert(o->rank == 1 && o->dims[0] == n, "%s: rank %d, dims[0] %lld",
		  o->name, o->rank, (long long)o->dims[0]);
	const char *const *got = o->data;
	for (int64_t k = 0; k < n; k++)
		cr_expect_str_eq(got[k], want[k], "%s[%lld]", o->name,
				 (long long)k);
}

Test(api, string_tensors_cross_the_api_as_char_pointers)
{
	Str t = str_open();
	gearrt_tensor info;
	cr_assert_eq(gearrt_input_info(t.m, 0, &info), GEARRT_OK);
	cr_expect_eq(info.dtype, GEARRT_STRING);
	cr_expect_eq(gearrt_dtype_size(GEARRT_STRING), sizeof(char *));
	cr_expect_str_eq(gearrt_dtype_name(GEARRT_STRING), "string");
	char mon[] = "Monday"; /* the caller's own buffers */
	const char *words[3] = { mon, "tuesday", "Wed" };
	gearrt_tensor in = text(words), out[2] = { { 0 }, { 0 } };
	cr_assert_eq(gearrt_run(t.s, &in, 1, out, 2), GEARRT_OK, "%s",
		     gearrt_last_error());
	expect_words(&out[0], (const char *[]){ "TUESDAY", "WED" }, 2);
	expect_words(&out[1], (const char *[]){ "monday", "tuesday", "wed" }, 3);
	cr_expect_eq(out[1].size, 3 * sizeof(char *));
	/* the outputs are the session's copies: the caller's strings may
	 * change; a caller's buffer gets the pointers */
	mon[0] = 'S';
	const char *lower[3] = { 0 };
	out[0] = (gearrt_tensor){ 0 };
	out[1] = (gearrt_tensor){ .data = lower, .size = sizeof(lower) };
	cr_assert_eq(gearrt_run(t.s, &in, 1, out, 2), GEARRT_OK, "%s",
		     gearrt_last_error());
	expect_words(&out[0], (const char *[]){ "SONDAY", "TUESDAY", "WED" }, 3);
	cr_expect_eq(out[1].data, (void *)lower);
	cr_expect_str_eq(lower[0], "sonday");
	cr_expect_str_eq(lower[2], "wed");
	/* every word a stopword: one empty string */
	const char *mondays[3] = { "monday", "MONDAY", "Monday" };
	in = text(mondays);
	out[0] = out[1] = (gearrt_tensor){ 0 };
	cr_assert_eq(gearrt_run(t.s, &in, 1, out, 2), GEARRT_OK, "%s",
		     gearrt_last_error());
	expect_words(&out[0], (const char *[]){ "" }, 1);
	str_close(&t);
}

Test(api, malformed_string_tensors_are_statuses)
{
	Str t = str_open();
	const char *words[3] = { "a", "b", "c" };
	gearrt_tensor in = text(words), out[2] = { { 0 }, { 0 } };
	in.data = NULL;
	cr_expect_eq(gearrt_run(t.s, &in, 1, out, 2), GEARRT_E_INPUT);
	in = text(words);
	in.size = 2 * sizeof(char *);
	cr_expect_eq(gearrt_run(t.s, &in, 1, out, 2), GEARRT_E_INPUT);
	cr_expect(strstr(gearrt_last_error(), "input 'text': shape [3] needs "
					      "24 bytes, 16 given"),
		  "%s", gearrt_last_error());
	in.size = 0; /* the old contract's "size 0" */
	cr_expect_eq(gearrt_run(t.s, &in, 1, out, 2), GEARRT_E_INPUT);
	in = text(words);
	words[1] = NULL;
	cr_expect_eq(gearrt_run(t.s, &in, 1, out, 2), GEARRT_E_INPUT);
	cr_expect(strstr(gearrt_last_error(), "input 'text': string element 1 "
					      "is NULL"),
		  "%s", gearrt_last_error());
	words[1] = "b";
	float f[3] = { 0 };
	in = (gearrt_tensor){ .dtype = GEARRT_FLOAT32, .rank = 1, .dims = { 3 },
			      .data = f, .size = sizeof(f) };
	cr_expect_eq(gearrt_run(t.s, &in, 1, out, 2), GEARRT_E_INPUT);
	cr_expect(strstr(gearrt_last_error(), "dtype float32, expected string"),
		  "%s", gearrt_last_error());
	in = text(words);
	const char *small[1];
	out[1] = (gearrt_tensor){ .data = small, .size = sizeof(small) };
	cr_expect_eq(gearrt_run(t.s, &in, 1, out, 2), GEARRT_E_OUTPUT);
	cr_expect(strstr(gearrt_last_error(), "output 'lower' needs 24 bytes, "
					      "its buffer has 8"),
		  "%s", gearrt_last_error());
	cr_expect_eq(out[1].data, (void *)small, "the caller's buffer is kept");
	out[1] = (gearrt_tensor){ 0 };
	cr_expect_eq(gearrt_run(t.s, &in, 1, out, 2), GEARRT_OK, "%s",
		     gearrt_last_error());
	str_close(&t);
}

/* gearc run aborted on --random-inputs for a string input ("BUG ...
 * tensor_set_i64 on string") and refused to write string outputs. */
Test(api, gearc_run_reads_and_writes_string_npy)
{
	Str t = str_open();
	char odir[512], cmd[2048];
	snprintf(odir, sizeof(odir), "--output-dir=%s", t.dir);
	Run r = run_gearc("run", t.om, "--random-inputs", odir);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "output 'lower' string [3]"), "%s", r.out);
	run_free(&r);
	snprintf(cmd, sizeof(cmd), "cd '%s' && /usr/bin/python3 -c \""
		 "import numpy; u = numpy.load('upper.npy'); "
		 "l = numpy.load('lower.npy'); "
		 "assert l.dtype.kind == 'U' and len(l) == 3, l; "
		 "assert all(w.isalpha() and w.islower() for w in l), l; "
		 "assert list(u) == [w.upper() for w in l if w != 'monday'], u\"",
		 t.dir);
	cr_expect_eq(system(cmd), 0, "numpy disagrees with %s", t.dir);
	/* a <U input numpy wrote */
	snprintf(cmd, sizeof(cmd), "cd '%s' && /usr/bin/python3 -c \""
		 "import numpy; numpy.save('text.npy', numpy.array(['MONDAY', "
		 "'Friday', 'x']))\"", t.dir);
	cr_assert_eq(system(cmd), 0);
	char in[600];
	snprintf(in, sizeof(in), "text=%s/text.npy", t.dir);
	r = run_gearc("run", t.om, "--input", in, odir);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "output 'upper' string [2]"), "%s", r.out);
	run_free(&r);
	snprintf(cmd, sizeof(cmd), "cd '%s' && /usr/bin/python3 -c \""
		 "import numpy; u = numpy.load('upper.npy'); "
		 "assert list(u) == ['FRIDAY', 'X'] and u.dtype == '<U6', u\"",
		 t.dir);
	cr_expect_eq(system(cmd), 0, "upper.npy is not ['FRIDAY', 'X']");
	str_close(&t);
}

/* ---- sizes -------------------------------------------------------------- */

/* Dims whose byte size overflows said "needs -1 bytes". */
Test(api, an_input_shape_too_large_for_64_bits_says_so)
{
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "two", "two_inputs", (const char *[]){
		"--input_shape=a:-1,3,-1,-1;b:-1,3,-1,-1",
		"--dynamic_dims=1,8,8,1,8,8;2,8,8,2,8,8", NULL });
	gearrt_model *m;
	gearrt_session *s;
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, NULL, &s), GEARRT_OK);
	float x[4];
	gearrt_tensor in[2] = {
		{ .dtype = GEARRT_FLOAT32, .rank = 4,
		  .dims = { INT64_C(1) << 40, 3, INT64_C(1) << 40, 1 },
		  .data = x, .size = sizeof(x) },
		{ .dtype = GEARRT_FLOAT32, .rank = 4, .dims = { 1, 3, 8, 8 },
		  .data = x, .size = sizeof(x) },
	};
	gearrt_tensor out = { 0 };
	cr_expect_eq(gearrt_run(s, in, 2, &out, 1), GEARRT_E_INPUT);
	cr_expect_str_eq(gearrt_last_error(),
			 "input 'a': shape [1099511627776,3,1099511627776,1] "
			 "holds more than 2^63 bytes");
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	remove_tree(dir);
	free(dir);
	free(om);
}

/* ---- what the file keeps of the source ------------------------------------ */

/* vad.onnx says producer pytorch 1.13.1 and names its dims batch and
 * samples; a --hybrid compile keeps the names (its dynamic graph has
 * them), a plain gear compile does not. */
Test(api, model_meta_and_dim_names)
{
	char *dir = temp_dir();
	const char *shape = "--input_shape=input:-1,-1;h:2,-1,64;c:2,-1,64";
	const char *dims = "--dynamic_dims=1,512,1,1;4,512,4,4";
	char *gear = compile_fixture(dir, "gear", "vad",
				     (const char *[]){ shape, dims, NULL });
	char *hyb = compile_fixture(dir, "hyb", "vad",
				    (const char *[]){ shape, dims, "--hybrid",
						      NULL });
	gearrt_model *m, *h;
	cr_assert_eq(gearrt_model_open(gear, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_model_open(hyb, &h), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_expect_str_eq(gearrt_model_meta(m, "producer_name"), "pytorch");
	cr_expect_str_eq(gearrt_model_meta(m, "producer_version"), "1.13.1");
	cr_expect_str_eq(gearrt_model_meta(m, "domain"), "");
	cr_expect_str_eq(gearrt_model_meta(m, "model_version"), "0");
	cr_expect_str_eq(gearrt_model_meta(m, "graph_name"), "vad");
	cr_expect_str_eq(gearrt_model_meta(m, "source_file"),
			 "vad.onnx");
	cr_expect_null(gearrt_model_meta(m, "description"));
	cr_expect_null(gearrt_model_meta(m, NULL));
	cr_expect_null(gearrt_model_meta(NULL, "domain"));
	/* input (0): [batch, samples]; sr (1): a scalar; h (2): [2, batch, 64] */
	cr_expect_str_eq(gearrt_input_dim_name(h, 0, 0), "batch");
	cr_expect_str_eq(gearrt_input_dim_name(h, 0, 1), "samples");
	cr_expect_str_eq(gearrt_input_dim_name(h, 2, 1), "batch");
	cr_expect_null(gearrt_input_dim_name(h, 2, 0)); /* a fixed dim */
	cr_expect_null(gearrt_input_dim_name(h, 2, 3));
	cr_expect_null(gearrt_input_dim_name(h, 1, 0));
	cr_expect_null(gearrt_input_dim_name(h, 4, 0));
	cr_expect_null(gearrt_input_dim_name(h, 0, -1));
	cr_expect_null(gearrt_input_dim_name(m, 0, 0));
	cr_expect_null(gearrt_input_dim_name(NULL, 0, 0));
	gearrt_model_close(m);
	gearrt_model_close(h);
	remove_tree(dir);
	free(dir);
	free(gear);
	free(hyb);
}
