/*
 * tests/test_hybrid_run.c - hybrid execution (runtime/hybrid.c): a
 * --hybrid file runs its dynamic graph at dims no gear matches; the same
 * answer through a gear and through the dynamic graph; ONNX Runtime's
 * outputs at shapes that are not gears; the shape cache (hit, miss,
 * eviction, sessions apart, off); no heap allocation on a cache hit; the
 * error listing the gears on a file without a dynamic graph; and
 * `gearc run --no-gears`.
 */
#include <math.h>
#include <pthread.h>

#include "cli/npy.h"
#include "runtime/gearrt.h"
#include "runtime/rt.h"
#include "testrun.h"

extern long alloc_count; /* tests/allocount.c */

/* Compiles tests/fixtures/MODEL into dir/NAME.om with the given shape and
 * gear flag (NULL: a static compile), --hybrid unless plain; the .om path
 * (malloc'd). */
static char *compile_h(const char *dir, const char *name, const char *model,
		       const char *shape, const char *gears, bool hybrid)
{
	char *out = path_in(dir, name);
	char mflag[512], sflag[256], oflag[512];
	snprintf(mflag, sizeof(mflag), "--model=tests/fixtures/%s", model);
	snprintf(sflag, sizeof(sflag), "--input_shape=%s", shape);
	snprintf(oflag, sizeof(oflag), "--output=%s", out);
	const char *args[] = { mflag, sflag, oflag, "-q",
			       hybrid ? "--hybrid" : NULL, NULL, NULL };
	args[hybrid ? 5 : 4] = gears;
	Run r = run_gearcv(args);
	cr_assert_eq(r.status, 0, "compile %s: %s", model, r.err);
	run_free(&r);
	char *om = malloc(strlen(out) + 4);
	sprintf(om, "%s.om", out);
	free(out);
	return om;
}

typedef struct Fix {
	char *dir, *om;
	gearrt_model *m;
} Fix;

static Fix fix_open(const char *model, const char *shape, const char *gears,
		    bool hybrid)
{
	Fix f = { .dir = temp_dir() };
	f.om = compile_h(f.dir, "m", model, shape, gears, hybrid);
	cr_assert_eq(gearrt_model_open(f.om, &f.m), GEARRT_OK, "%s",
		     gearrt_last_error());
	return f;
}

static void fix_close(Fix *f)
{
	gearrt_model_close(f->m);
	remove_tree(f->dir);
	free(f->dir);
	free(f->om);
}

static gearrt_session *session(gearrt_model *m, int cache, bool no_gears)
{
	gearrt_options o = { .shape_cache = cache, .no_gears = no_gears };
	gearrt_session *s;
	cr_assert_eq(gearrt_session_create(m, &o, &s), GEARRT_OK, "%s",
		     gearrt_last_error());
	return s;
}

/* A fixed pattern in [-0.5, 0.5) for x [1,3,h,w]. */
static gearrt_tensor image(int64_t h, int64_t w)
{
	size_t n = (size_t)(3 * h * w);
	float *p = malloc(n * sizeof(float));
	for (size_t i = 0; i < n; i++)
		p[i] = (float)((i * 7919u) % 1000u) / 1000.0f - 0.5f;
	gearrt_tensor t = { .dtype = GEARRT_FLOAT32, .rank = 4,
			    .dims = { 1, 3, h, w }, .data = p,
			    .size = n * sizeof(float) };
	return t;
}

enum { NOUT = 4 };

/* Runs x and returns copies of the outputs (out[k].data malloc'd). */
static void run_copy(gearrt_session *s, gearrt_model *m, gearrt_tensor *x,
		     gearrt_tensor *out)
{
	size_t nout = gearrt_output_count(m);
	cr_assert(nout <= NOUT);
	memset(out, 0, NOUT * sizeof(*out));
	cr_assert_eq(gearrt_run(s, x, 1, out, nout), GEARRT_OK, "%s",
		     gearrt_last_error());
	for (size_t k = 0; k < nout; k++) {
		void *d = malloc(out[k].size + 1);
		memcpy(d, out[k].data, out[k].size);
		out[k].data = d;
	}
}

static void free_outs(gearrt_tensor *out)
{
	for (int k = 0; k < NOUT; k++)
		free(out[k].data);
}

static void expect_same(const gearrt_tensor *a, const gearrt_tensor *b,
			size_t nout, const char *what)
{
	for (size_t k = 0; k < nout; k++) {
		cr_assert_eq(a[k].rank, b[k].rank, "%s: output %zu", what, k);
		for (int32_t d = 0; d < a[k].rank; d++)
			cr_assert_eq(a[k].dims[d], b[k].dims[d],
				     "%s: output %zu dim %d", what, k, d);
		cr_assert_eq(a[k].size, b[k].size);
		const float *x = a[k].data, *y = b[k].data;
		for (size_t i = 0; i < a[k].size / sizeof(float); i++)
			cr_assert(fabsf(x[i] - y[i]) <=
					  1e-5f + 1e-4f * fabsf(y[i]),
				  "%s: output %zu [%zu]: %g vs %g", what, k, i,
				  (double)x[i], (double)y[i]);
	}
}

typedef struct Hyb {
	const char *model, *shape, *gears;
	int64_t hw[4][2]; /* shapes to run: gears first, then others */
	int ngear, nshape;
} Hyb;

static const Hyb HYBRIDS[] = {
	{ "rec.onnx", "x:1,3,48,-1", "--dynamic_dims=320;640;1280",
	  { { 48, 320 }, { 48, 640 }, { 48, 100 }, { 48, 488 } }, 2, 4 },
	{ "det_nms.onnx", "x:1,3,-1,-1",
	  "--dynamic_image_size=320,320;640,480",
	  { { 320, 320 }, { 256, 384 }, { 96, 160 } }, 1, 3 },
};

/* Gear shapes through the gear and through the dynamic graph give the
 * same outputs; other shapes run on the dynamic graph. */
Test(hybrid_run, every_fixture_at_gear_and_other_shapes)
{
	for (size_t f = 0; f < sizeof(HYBRIDS) / sizeof(HYBRIDS[0]); f++) {
		const Hyb *h = &HYBRIDS[f];
		Fix x = fix_open(h->model, h->shape, h->gears, true);
		cr_assert(gearrt_has_dynamic(x.m));
		gearrt_session *sg = session(x.m, 0, false);
		gearrt_session *sd = session(x.m, 0, true);
		size_t nout = gearrt_output_count(x.m);
		for (int i = 0; i < h->nshape; i++) {
			gearrt_tensor in = image(h->hw[i][0], h->hw[i][1]);
			gearrt_tensor a[NOUT], b[NOUT];
			gearrt_stats st;
			run_copy(sg, x.m, &in, a);
			gearrt_session_stats(sg, &st);
			bool gear = i < h->ngear;
			cr_expect_eq(st.last_path, gear ? GEARRT_PATH_GEAR
							: GEARRT_PATH_DYNAMIC,
				     "%s %lldx%lld", h->model,
				     (long long)h->hw[i][0],
				     (long long)h->hw[i][1]);
			cr_expect_eq(gearrt_last_gear(sg), gear ? i : -1);
			run_copy(sd, x.m, &in, b);
			gearrt_session_stats(sd, &st);
			cr_expect_eq(st.last_path, GEARRT_PATH_DYNAMIC);
			cr_expect_eq(st.last_rebuilt, 1);
			expect_same(b, a, nout, h->model);
			for (size_t k = 0; k < nout; k++)
				cr_expect(a[k].size > 0 || k > 0);
			free_outs(a);
			free_outs(b);
			free(in.data);
		}
		gearrt_session_destroy(sg);
		gearrt_session_destroy(sd);
		fix_close(&x);
	}
}

/* ONNX Runtime's outputs of the source model (tests/fixtures/ort, written
 * by tests/check_export_ort.mjs) at shapes the hybrid file has no gear
 * for: they run on the dynamic graph. */
static void check_ort(const char *model, const char *shape, const char *gears,
		      const char *ortdir, const char *out_name)
{
	Fix x = fix_open(model, shape, gears, true);
	gearrt_session *s = session(x.m, 0, false);
	Arena a;
	arena_init(&a);
	char p[512];
	snprintf(p, sizeof(p), "tests/fixtures/ort/%s/input_x.npy", ortdir);
	Tensor *tin = npy_read(&a, p);
	cr_assert(tin, "%s", last_error());
	snprintf(p, sizeof(p), "tests/fixtures/ort/%s/output_%s.npy", ortdir,
		 out_name);
	Tensor *want = npy_read(&a, p);
	cr_assert(want, "%s", last_error());
	gearrt_tensor in = { .dtype = tin->dtype, .rank = tin->shape.rank,
			     .data = (void *)tin->data, .size = tin->nbytes };
	memcpy(in.dims, tin->shape.dims, (size_t)in.rank * sizeof(int64_t));
	gearrt_tensor got[NOUT];
	run_copy(s, x.m, &in, got);
	gearrt_stats st;
	gearrt_session_stats(s, &st);
	cr_expect_eq(st.last_path, GEARRT_PATH_DYNAMIC, "%s", ortdir);
	gearrt_tensor w = { .dtype = want->dtype, .rank = want->shape.rank,
			    .data = (void *)want->data, .size = want->nbytes };
	memcpy(w.dims, want->shape.dims, (size_t)w.rank * sizeof(int64_t));
	expect_same(got, &w, 1, ortdir);
	free_outs(got);
	arena_release(&a);
	gearrt_session_destroy(s);
	fix_close(&x);
}

Test(hybrid_run, matches_onnx_runtime_off_the_gears)
{
	/* rec at width 64 and det at 96x128 and 160x96: none is a gear */
	check_ort("rec.onnx", "x:1,3,48,-1", "--dynamic_dims=32;96",
		  "rec/gear1", "probs");
	check_ort("det.onnx", "x:1,3,-1,-1", "--dynamic_image_size=64,64;128,128",
		  "det/gear1", "maps");
	check_ort("det.onnx", "x:1,3,-1,-1", "--dynamic_image_size=64,64;128,128",
		  "det/gear2", "maps");
}

static Fix rec_hybrid(void)
{
	return fix_open("rec.onnx", "x:1,3,48,-1",
			"--dynamic_dims=320;640", true);
}

static gearrt_stats run_w(gearrt_session *s, gearrt_model *m, int64_t w)
{
	gearrt_tensor in = image(48, w), out[NOUT];
	run_copy(s, m, &in, out);
	cr_expect_eq(out[0].dims[1], (w + 7) / 8, "width %lld",
		     (long long)w);
	free_outs(out);
	free(in.data);
	gearrt_stats st;
	cr_assert_eq(gearrt_session_stats(s, &st), GEARRT_OK);
	return st;
}

Test(hybrid_run, cache_hits_misses_and_evicts_least_recently_used)
{
	Fix x = rec_hybrid();
	gearrt_session *s = session(x.m, 2, false);
	gearrt_stats st = run_w(s, x.m, 100); /* miss */
	cr_expect(st.rebuilds == 1 && st.cache_hits == 0 && st.last_rebuilt);
	st = run_w(s, x.m, 100); /* hit */
	cr_expect(st.rebuilds == 1 && st.cache_hits == 1 && !st.last_rebuilt);
	st = run_w(s, x.m, 320); /* a gear: no cache involved */
	cr_expect(st.rebuilds == 1 && st.cache_hits == 1 &&
		  st.last_path == GEARRT_PATH_GEAR && st.gear_runs == 1);
	st = run_w(s, x.m, 200); /* miss */
	cr_expect(st.rebuilds == 2 && st.cached == 2 && st.evictions == 0);
	st = run_w(s, x.m, 100); /* hit: 100 is now the most recent */
	cr_expect(st.rebuilds == 2 && st.cache_hits == 2);
	st = run_w(s, x.m, 150); /* miss: evicts 200, the least recent */
	cr_expect(st.rebuilds == 3 && st.evictions == 1 && st.cached == 2);
	st = run_w(s, x.m, 100); /* still cached */
	cr_expect(st.rebuilds == 3 && st.cache_hits == 3);
	st = run_w(s, x.m, 200); /* was evicted */
	cr_expect(st.rebuilds == 4 && st.evictions == 2 && st.last_rebuilt);
	cr_expect(st.runs == 8 && st.dynamic_runs == 7);
	gearrt_session_destroy(s);
	fix_close(&x);
}

Test(hybrid_run, sessions_keep_their_own_caches)
{
	Fix x = rec_hybrid();
	gearrt_session *a = session(x.m, 0, false), *b = session(x.m, 0, false);
	gearrt_stats sa = run_w(a, x.m, 100);
	gearrt_stats sb = run_w(b, x.m, 100);
	cr_expect(sa.rebuilds == 1 && sb.rebuilds == 1 && sb.last_rebuilt);
	sa = run_w(a, x.m, 100);
	cr_expect(sa.cache_hits == 1 && sa.rebuilds == 1);
	gearrt_session_destroy(a);
	sb = run_w(b, x.m, 100); /* b's entry outlives a */
	cr_expect(sb.cache_hits == 1 && sb.rebuilds == 1);
	gearrt_session_destroy(b);
	fix_close(&x);
}

Test(hybrid_run, cache_off_rebuilds_every_run)
{
	Fix x = rec_hybrid();
	gearrt_session *s = session(x.m, GEARRT_SHAPE_CACHE_OFF, false);
	run_w(s, x.m, 100);
	gearrt_stats st = run_w(s, x.m, 100);
	cr_expect(st.rebuilds == 2 && st.cache_hits == 0 && st.cached == 0);
	gearrt_session_destroy(s);
	fix_close(&x);
}

/* A cache hit on a shape whose every node is planned allocates nothing. */
Test(hybrid_run, cache_hit_makes_no_heap_allocation)
{
	Fix x = rec_hybrid();
	gearrt_session *s = session(x.m, 0, false);
	gearrt_tensor in = image(48, 100);
	float *o = malloc(1 << 20);
	gearrt_tensor out = { .data = o, .size = 1 << 20 };
	cr_assert_eq(gearrt_run(s, &in, 1, &out, 1), GEARRT_OK, "%s",
		     gearrt_last_error());
	long before = alloc_count;
	for (int i = 0; i < 5; i++)
		cr_assert_eq(gearrt_run(s, &in, 1, &out, 1), GEARRT_OK);
	cr_expect_eq(alloc_count, before, "%ld allocations in 5 cache hits",
		     alloc_count - before);
	gearrt_stats st;
	gearrt_session_stats(s, &st);
	cr_expect(st.cache_hits == 5 && st.rebuilds == 1);
	free(o);
	free(in.data);
	gearrt_session_destroy(s);
	fix_close(&x);
}

Test(hybrid_run, without_a_dynamic_graph_dims_off_the_gears_fail)
{
	Fix x = fix_open("rec.onnx", "x:1,3,48,-1", "--dynamic_dims=320;640",
			 false);
	cr_expect(!gearrt_has_dynamic(x.m));
	gearrt_session *s = session(x.m, 0, false);
	gearrt_tensor in = image(48, 100), out = { 0 };
	cr_expect_eq(gearrt_run(s, &in, 1, &out, 1), GEARRT_E_NO_GEAR);
	cr_expect(strstr(gearrt_last_error(), "(100) match no gear") &&
		  strstr(gearrt_last_error(), "gears are: 320; 640"),
		  "%s", gearrt_last_error());
	gearrt_session_destroy(s);
	s = session(x.m, 0, true);
	free(in.data);
	in = image(48, 320);
	cr_expect_eq(gearrt_run(s, &in, 1, &out, 1), GEARRT_E_NO_GEAR);
	cr_expect(strstr(gearrt_last_error(), "no dynamic graph"), "%s",
		  gearrt_last_error());
	free(in.data);
	gearrt_session_destroy(s);
	fix_close(&x);
}

Test(hybrid_run, gearc_run_says_which_path_ran)
{
	Fix x = rec_hybrid();
	Run r = run_gearc("run", x.om, "--random-inputs");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "gear 0 (dims 320)\n"), "%s", r.out);
	run_free(&r);
	r = run_gearc("run", x.om, "--random-inputs", "--no-gears", "--bench=3");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "dynamic graph (dims 1,3,48,320, rebuilt)\n"),
		  "%s", r.out);
	cr_expect(strstr(r.out, "shape cache: 1 rebuilds"), "%s", r.out);
	cr_expect(strstr(r.out, "3 cache hits over 4 runs"), "%s", r.out);
	run_free(&r);
	/* an .npy input at a width no gear has */
	char *np = path_in(x.dir, "x100.npy");
	gearrt_tensor in = image(48, 100);
	Shape sh = { .rank = 4, .dims = { 1, 3, 48, 100 } };
	cr_assert_eq(npy_write(np, GEARRT_FLOAT32, &sh, in.data), 0);
	char flag[600];
	snprintf(flag, sizeof(flag), "x=%s", np);
	r = run_gearc("run", x.om, "--input", flag);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "dynamic graph (dims 1,3,48,100, rebuilt)\n"),
		  "%s", r.out);
	cr_expect(strstr(r.out, "output 'probs' float32 [1,13,97]"), "%s",
		  r.out);
	run_free(&r);
	free(in.data);
	free(np);
	fix_close(&x);
}

/* Sessions on two threads specialise one model's dynamic graph at once
 * (nothing shared is written) and get what one thread gets. */
typedef struct Job {
	gearrt_model *m;
	int64_t w;
	gearrt_tensor out[NOUT];
} Job;

static void *job_run(void *arg)
{
	Job *j = arg;
	gearrt_session *s;
	gearrt_options o = { 0 };
	gearrt_tensor in = image(48, j->w);
	memset(j->out, 0, sizeof(j->out));
	if (gearrt_session_create(j->m, &o, &s) == GEARRT_OK) {
		for (int i = 0; i < 3; i++)
			if (gearrt_run(s, &in, 1, j->out, 1) != GEARRT_OK)
				j->out[0].data = NULL;
		if (j->out[0].data) {
			void *d = malloc(j->out[0].size);
			memcpy(d, j->out[0].data, j->out[0].size);
			j->out[0].data = d;
		}
		gearrt_session_destroy(s);
	}
	free(in.data);
	return NULL;
}

Test(hybrid_run, two_threads_build_and_run_at_once)
{
	Fix x = rec_hybrid();
	Job j[4] = { { x.m, 100, { { 0 } } }, { x.m, 200, { { 0 } } },
		     { x.m, 100, { { 0 } } }, { x.m, 200, { { 0 } } } };
	job_run(&j[2]);
	job_run(&j[3]);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, job_run, &j[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++) {
		cr_assert(j[i].out[0].data && j[i + 2].out[0].data);
		cr_expect_eq(j[i].out[0].size, j[i + 2].out[0].size);
		cr_expect(!memcmp(j[i].out[0].data, j[i + 2].out[0].data,
				  j[i].out[0].size),
			  "width %lld differs on a thread", (long long)j[i].w);
		free(j[i].out[0].data);
		free(j[i + 2].out[0].data);
	}
	fix_close(&x);
}

/* ---- gears specialised to an input's value ------------------------------- */

typedef struct Vad {
	float x[1024], h[128], c[128];
	int64_t sr;
	gearrt_tensor in[4];
	float y[1], hn[128], cn[128];
	gearrt_tensor out[3];
} Vad;

/* vad.onnx's inputs at n samples and sample rate sr; outputs into v. */
static void vad_io(Vad *v, int64_t n, int64_t sr)
{
	for (int i = 0; i < 1024; i++)
		v->x[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
	for (int i = 0; i < 128; i++)
		v->h[i] = v->c[i] = (float)(i % 7) / 14.0f;
	v->sr = sr;
	gearrt_tensor in[4] = {
		{ .name = "input", .dtype = GEARRT_FLOAT32, .rank = 2,
		  .dims = { 1, n }, .data = v->x, .size = sizeof(v->x) },
		{ .name = "sr", .dtype = GEARRT_INT64, .rank = 0,
		  .data = &v->sr, .size = sizeof(v->sr) },
		{ .name = "h", .dtype = GEARRT_FLOAT32, .rank = 3,
		  .dims = { 2, 1, 64 }, .data = v->h, .size = sizeof(v->h) },
		{ .name = "c", .dtype = GEARRT_FLOAT32, .rank = 3,
		  .dims = { 2, 1, 64 }, .data = v->c, .size = sizeof(v->c) },
	};
	gearrt_tensor out[3] = {
		{ .data = v->y, .size = sizeof(v->y) },
		{ .data = v->hn, .size = sizeof(v->hn) },
		{ .data = v->cn, .size = sizeof(v->cn) },
	};
	memcpy(v->in, in, sizeof(in));
	memcpy(v->out, out, sizeof(out));
}

static void vad_run(gearrt_session *s, Vad *v)
{
	cr_assert_eq(gearrt_run(s, v->in, 4, v->out, 3), GEARRT_OK, "sr %lld: %s",
		     (long long)v->sr, gearrt_last_error());
}

static void expect_close(const float *a, const float *b, int n,
			 const char *what)
{
	for (int i = 0; i < n; i++)
		cr_expect(fabsf(a[i] - b[i]) <= 1e-5f + 1e-4f * fabsf(b[i]),
			  "%s[%d]: %g, evaluated %g", what, i, a[i], b[i]);
}

/* What the gear computes by evaluating its partition (the cache off keeps
 * gears as compiled) at n samples and sample rate sr. */
static void vad_evaluated(gearrt_model *m, int64_t n, int64_t sr, Vad *ref)
{
	gearrt_session *r = session(m, GEARRT_SHAPE_CACHE_OFF, false);
	vad_io(ref, n, sr);
	vad_run(r, ref);
	gearrt_stats st;
	gearrt_session_stats(r, &st);
	cr_assert_eq(st.rebuilds, 0, "the reference must not specialise");
	gearrt_session_destroy(r);
}

static void vad_expect(const Vad *v, const Vad *ref)
{
	expect_close(v->y, ref->y, 1, "output");
	expect_close(v->hn, ref->hn, 128, "hn");
	expect_close(v->cn, ref->cn, 128, "cn");
}

/* vad.onnx's gears hold an If on the sample rate, an input: compiled,
 * the gear is one partition evaluated node by node.  A session
 * specialises the gear to sr's value (the If keeps one branch, the whole
 * gear is planned), once per value, and gives what evaluation gives. */
Test(hybrid_run, a_gear_is_specialised_to_a_key_inputs_value)
{
	Fix f = fix_open("vad.onnx", "input:1,-1;h:2,1,64;c:2,1,64",
			 "--dynamic_dims=512;1024", false);
	gearrt_session *s = session(f.m, 0, false);
	gearrt_stats st;
	Vad v, ref;
	static const int64_t rates[] = { 16000, 16000, 32000, 16000 };
	static const int builds[] = { 1, 1, 2, 2 };
	for (int k = 0; k < 4; k++) {
		vad_io(&v, 1024, rates[k]);
		vad_run(s, &v);
		gearrt_session_stats(s, &st);
		cr_expect_eq(st.rebuilds, builds[k], "run %d: %llu builds", k,
			     (unsigned long long)st.rebuilds);
		cr_expect_eq(st.last_path, GEARRT_PATH_GEAR);
		cr_expect_eq(gearrt_last_gear(s), 1);
		vad_evaluated(f.m, 1024, rates[k], &ref);
		vad_expect(&v, &ref);
	}
	cr_expect_eq(st.cache_hits, 2);
	gearrt_session_destroy(s);
	fix_close(&f);
}

/* A key input whose value changes every run would rebuild every run: past
 * twice the cache's size in builds, more built than reused, the session
 * runs the gear as compiled, still right. */
Test(hybrid_run, a_key_input_that_keeps_changing_stops_specialising)
{
	Fix f = fix_open("vad.onnx", "input:1,-1;h:2,1,64;c:2,1,64",
			 "--dynamic_dims=512;1024", false);
	gearrt_session *s = session(f.m, 1, false);
	gearrt_stats st;
	Vad v, ref;
	for (int k = 0; k < 8; k++) {
		int64_t sr = k % 2 ? 16000 : 32000;
		vad_io(&v, 512, sr);
		vad_run(s, &v);
		vad_evaluated(f.m, 512, sr, &ref);
		vad_expect(&v, &ref);
	}
	gearrt_session_stats(s, &st);
	cr_expect_eq(st.rebuilds, 3, "%llu builds",
		     (unsigned long long)st.rebuilds);
	cr_expect_eq(st.gear_runs, 8);
	gearrt_session_destroy(s);
	fix_close(&f);
}

/* vad_sr.onnx's inputs (x at 512 samples, sr, mode) and outputs. */
typedef struct VadSr {
	float x[512], prob[16];
	int64_t sr, mode[2], mode_out[2];
	gearrt_tensor in[3], out[2];
} VadSr;

static void vad_sr_io(VadSr *v, int64_t sr)
{
	for (int i = 0; i < 512; i++)
		v->x[i] = (float)(i % 13) / 13.0f;
	v->sr = sr;
	v->mode[0] = 1, v->mode[1] = 0;
	gearrt_tensor in[3] = {
		{ .name = "x", .dtype = GEARRT_FLOAT32, .rank = 2,
		  .dims = { 1, 512 }, .data = v->x, .size = sizeof(v->x) },
		{ .name = "sr", .dtype = GEARRT_INT64, .rank = 0,
		  .data = &v->sr, .size = sizeof(v->sr) },
		{ .name = "mode", .dtype = GEARRT_INT64, .rank = 1,
		  .dims = { 2 }, .data = v->mode, .size = sizeof(v->mode) },
	};
	gearrt_tensor out[2] = {
		{ .data = v->prob, .size = sizeof(v->prob) },
		{ .data = v->mode_out, .size = sizeof(v->mode_out) },
	};
	memcpy(v->in, in, sizeof(in));
	memcpy(v->out, out, sizeof(out));
}

/* Silero VAD v5 compiled statically with sr a runtime input: no unknown
 * partition, only If(Equal(sr, 16000)) at the graph's top, which ran by
 * evaluation every run (the real model's whole gear as If/eval).  A key
 * input read by an evaluated node now specialises the static graph too:
 * once per value, as evaluation computes it; sr = 8000 still takes the
 * branch that does not fit 512 samples and fails. */
Test(hybrid_run, a_static_if_on_a_key_input_is_specialised)
{
	Fix f = fix_open("vad_sr.onnx", "x:1,512;sr:", NULL, false);
	gearrt_session *s = session(f.m, 0, false);
	gearrt_session *r = session(f.m, GEARRT_SHAPE_CACHE_OFF, false);
	gearrt_stats st;
	VadSr v, ref;
	for (int k = 0; k < 2; k++) {
		vad_sr_io(&v, 16000);
		cr_assert_eq(gearrt_run(s, v.in, 3, v.out, 2), GEARRT_OK,
			     "%s", gearrt_last_error());
		gearrt_session_stats(s, &st);
		cr_expect(st.rebuilds == 1 && st.cache_hits == (uint64_t)k,
			  "run %d: %llu builds, %llu hits", k,
			  (unsigned long long)st.rebuilds,
			  (unsigned long long)st.cache_hits);
		cr_expect_eq(st.last_path, GEARRT_PATH_STATIC);
	}
	vad_sr_io(&ref, 16000);
	cr_assert_eq(gearrt_run(r, ref.in, 3, ref.out, 2), GEARRT_OK, "%s",
		     gearrt_last_error());
	expect_close(v.prob, ref.prob, 16, "prob");
	cr_expect(v.mode_out[0] == 11 && v.mode_out[1] == 20);
	vad_sr_io(&v, 8000);
	cr_expect_eq(gearrt_run(s, v.in, 3, v.out, 2), GEARRT_E_RUN);
	cr_expect(strstr(gearrt_last_error(),
			 "cannot reshape input 'x' [1,512] into [4,1,64]"),
		  "%s", gearrt_last_error());
	gearrt_session_destroy(r);
	gearrt_session_destroy(s);
	fix_close(&f);
}
