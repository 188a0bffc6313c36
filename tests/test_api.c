/*
 * tests/test_api.c - libgearrt's API at its edges: session options out
 * of range, models with more inputs than any fixed table would hold,
 * and string tensors.
 */
#include <limits.h>
#include <math.h>

#include "runtime/gearrt.h"
#include "testrun.h"

/* Compiles tests/fixtures/MODEL with gearc into dir/NAME.om (extra: one
 * more flag, or NULL); the path (malloc'd). */
static char *compile_fixture(const char *dir, const char *name,
			     const char *model, const char *extra)
{
	char *out = path_in(dir, name);
	char mflag[512], oflag[512];
	snprintf(mflag, sizeof(mflag), "--model=tests/fixtures/%s", model);
	snprintf(oflag, sizeof(oflag), "--output=%s.om", out);
	Run r = extra ? run_gearc(mflag, oflag, extra, "-q")
		      : run_gearc(mflag, oflag, "-q");
	cr_assert_eq(r.status, 0, "compile %s: %s", model, r.err);
	run_free(&r);
	char *om = malloc(strlen(out) + 4);
	sprintf(om, "%s.om", out);
	free(out);
	return om;
}

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
	char *om = compile_fixture(dir, "two", "two_inputs.onnx",
				   "--input_shape=a:1,3,8,8;b:1,3,8,8");
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

/* ---- many inputs -------------------------------------------------------- */

/* sum_1100.onnx: y = Sum(x0..x1099), each float [2].  The runtime's
 * input and output tables were fixed arrays of 1024. */
enum { NSUM = 1100 };

extern long alloc_count; /* tests/allocount.c */

Test(api, a_sum_of_1100_inputs_runs_through_the_api)
{
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "sum", "sum_1100.onnx", NULL);
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
	char *om = compile_fixture(dir, "sum", "sum_1100.onnx", NULL);
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
