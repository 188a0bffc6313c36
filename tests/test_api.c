/*
 * tests/test_api.c - libgearrt's API at its edges: session options out
 * of range, models with more inputs than any fixed table would hold,
 * and string tensors.
 */
#include <limits.h>

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
