/*
 * tests/test_runtime.c - libgearrt through its public API (gearrt.h):
 * describing a model, picking gears, numbers against values computed
 * here, bad arguments and bad files, the no-allocation promise, a
 * poisoned arena, and sessions on two threads.
 */
#include <math.h>
#include <pthread.h>

#include "runtime/gearrt.h"
#include "runtime/rt.h"
#include "omedit.h"
#include "testrun.h"

/* tests/allocount.c: heap allocations by the code linked into the test
 * binary (malloc, calloc, realloc, aligned_alloc wrapped at link time). */
extern long alloc_count;

/* Compiles a fixture with gearc into dir/NAME.om; the path (malloc'd). */
static char *compile(const char *dir, const char *name, const char *model,
		     const char *shape, const char *dims)
{
	char *out = path_in(dir, name);
	char mflag[512], sflag[256], dflag[256], oflag[512];
	snprintf(mflag, sizeof(mflag), "--model=tests/fixtures/%s", model);
	snprintf(sflag, sizeof(sflag), "--input_shape=%s", shape);
	snprintf(dflag, sizeof(dflag), "--dynamic_dims=%s", dims);
	snprintf(oflag, sizeof(oflag), "--output=%s", out);
	Run r = run_gearc(mflag, sflag, dflag, oflag, "-q");
	cr_assert_eq(r.status, 0, "compile %s: %s", model, r.err);
	run_free(&r);
	char *om = malloc(strlen(out) + 4);
	sprintf(om, "%s.om", out);
	free(out);
	return om;
}

/* two_inputs.onnx: out = Relu(a + b), a and b [N,3,H,W]. */
static const char *TWO_SHAPE = "a:-1,3,-1,-1;b:-1,3,-1,-1";
static const char *TWO_DIMS = "1,8,8,1,8,8;2,16,16,2,16,16";

typedef struct Two {
	char *dir, *om;
	gearrt_model *m;
	gearrt_session *s;
} Two;

static Two two_open(void)
{
	Two t = { .dir = temp_dir() };
	t.om = compile(t.dir, "two", "two_inputs.onnx", TWO_SHAPE, TWO_DIMS);
	cr_assert_eq(gearrt_model_open(t.om, &t.m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(t.m, NULL, &t.s), GEARRT_OK);
	return t;
}

static void two_close(Two *t)
{
	gearrt_session_destroy(t->s);
	gearrt_model_close(t->m);
	remove_tree(t->dir);
	free(t->dir);
	free(t->om);
}

static gearrt_tensor ftensor(float *data, int64_t n, int64_t c, int64_t h,
			     int64_t w)
{
	gearrt_tensor t = { .dtype = GEARRT_FLOAT32, .rank = 4,
			    .dims = { n, c, h, w }, .data = data,
			    .size = (size_t)(n * c * h * w) * sizeof(float) };
	return t;
}

static void fill(float *p, size_t n, float scale)
{
	for (size_t i = 0; i < n; i++)
		p[i] = scale * (float)((int)(i % 17) - 8);
}

Test(runtime, describes_inputs_outputs_and_gears)
{
	Two t = two_open();
	cr_assert_eq(gearrt_input_count(t.m), 2);
	cr_assert_eq(gearrt_output_count(t.m), 1);
	gearrt_tensor info;
	cr_assert_eq(gearrt_input_info(t.m, 1, &info), GEARRT_OK);
	cr_expect_str_eq(info.name, "b");
	cr_expect_eq(info.dtype, GEARRT_FLOAT32);
	cr_expect_eq(info.rank, 4);
	cr_expect(info.dims[0] == -1 && info.dims[1] == 3 &&
		  info.dims[2] == -1 && info.dims[3] == -1);
	cr_assert_eq(gearrt_gear_count(t.m), 2);
	const int64_t *dims;
	size_t nd;
	cr_assert_eq(gearrt_gear_dims(t.m, 1, &dims, &nd), GEARRT_OK);
	cr_expect(nd == 6 && dims[0] == 2 && dims[1] == 16 && dims[5] == 16);
	cr_assert_eq(gearrt_gear_output(t.m, 1, 0, &info), GEARRT_OK);
	cr_expect(info.rank == 4 && info.dims[0] == 2 && info.dims[2] == 16);
	cr_expect_eq(gearrt_gear_dims(t.m, 2, &dims, &nd), GEARRT_E_ARG);
	cr_expect(strstr(gearrt_last_error(), "gear 2"));
	two_close(&t);
}

/* Runs gear (n, h) and checks out = Relu(a + b) element by element. */
static void check_two(Two *t, int64_t n, int64_t h, bool caller_buffer)
{
	size_t k = (size_t)(n * 3 * h * h);
	float *a = malloc(k * sizeof(float)), *b = malloc(k * sizeof(float));
	float *o = calloc(k, sizeof(float));
	fill(a, k, 0.5f);
	fill(b, k, -0.25f);
	gearrt_tensor in[2] = { ftensor(a, n, 3, h, h), ftensor(b, n, 3, h, h) };
	gearrt_tensor out = { 0 };
	if (caller_buffer) {
		out.data = o;
		out.size = k * sizeof(float);
	}
	cr_assert_eq(gearrt_run(t->s, in, 2, &out, 1), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(out.rank, 4);
	cr_assert(out.dims[0] == n && out.dims[2] == h && out.dims[3] == h);
	cr_assert_eq(out.size, k * sizeof(float));
	cr_expect(!caller_buffer || out.data == o, "not written in place");
	const float *r = out.data;
	for (size_t i = 0; i < k; i++) {
		float want = a[i] + b[i] > 0 ? a[i] + b[i] : 0;
		cr_assert_eq(r[i], want, "element %zu: %g, expected %g", i,
			     r[i], want);
	}
	free(a);
	free(b);
	free(o);
}

Test(runtime, runs_every_gear_and_picks_it_by_dims)
{
	Two t = two_open();
	check_two(&t, 2, 16, false);
	cr_expect_eq(gearrt_last_gear(t.s), 1);
	check_two(&t, 1, 8, true);
	cr_expect_eq(gearrt_last_gear(t.s), 0);
	check_two(&t, 2, 16, true);
	cr_expect_eq(gearrt_last_gear(t.s), 1);
	two_close(&t);
}

Test(runtime, dims_matching_no_gear_list_the_gears)
{
	Two t = two_open();
	float x[3 * 12 * 12] = { 0 };
	gearrt_tensor in[2] = { ftensor(x, 1, 3, 12, 12),
				ftensor(x, 1, 3, 12, 12) };
	gearrt_tensor out = { 0 };
	cr_assert_eq(gearrt_run(t.s, in, 2, &out, 1), GEARRT_E_NO_GEAR);
	const char *e = gearrt_last_error();
	cr_expect(strstr(e, "1,12,12,1,12,12") && strstr(e, "1,8,8,1,8,8") &&
		  strstr(e, "2,16,16,2,16,16"), "%s", e);
	two_close(&t);
}

Test(runtime, bad_arguments_are_statuses_naming_the_input)
{
	Two t = two_open();
	float x[3 * 8 * 8] = { 0 };
	gearrt_tensor in[2] = { ftensor(x, 1, 3, 8, 8), ftensor(x, 1, 3, 8, 8) };
	gearrt_tensor out = { 0 };
	in[1].dtype = GEARRT_INT32;
	cr_expect_eq(gearrt_run(t.s, in, 2, &out, 1), GEARRT_E_INPUT);
	cr_expect(strstr(gearrt_last_error(), "input 'b': dtype int32, "
					      "expected float32"),
		  "%s", gearrt_last_error());
	in[1] = ftensor(x, 1, 3, 8, 8);
	in[0].rank = 3;
	cr_expect_eq(gearrt_run(t.s, in, 2, &out, 1), GEARRT_E_INPUT);
	cr_expect(strstr(gearrt_last_error(), "input 'a': rank 3"));
	in[0] = ftensor(x, 1, 3, 8, 8);
	in[0].dims[1] = 4;
	cr_expect_eq(gearrt_run(t.s, in, 2, &out, 1), GEARRT_E_INPUT);
	cr_expect(strstr(gearrt_last_error(), "expected [-1,3,-1,-1]"), "%s",
		  gearrt_last_error());
	in[0] = ftensor(x, 1, 3, 8, 8);
	in[0].size = 10;
	cr_expect_eq(gearrt_run(t.s, in, 2, &out, 1), GEARRT_E_INPUT);
	cr_expect(strstr(gearrt_last_error(), "needs 768 bytes, 10 given"));
	in[0] = ftensor(x, 1, 3, 8, 8);
	in[0].data = NULL;
	cr_expect_eq(gearrt_run(t.s, in, 2, &out, 1), GEARRT_E_INPUT);
	in[0] = ftensor(x, 1, 3, 8, 8);
	float small[4];
	out.data = small;
	out.size = sizeof(small);
	cr_expect_eq(gearrt_run(t.s, in, 2, &out, 1), GEARRT_E_OUTPUT);
	cr_expect(strstr(gearrt_last_error(), "output 'out' needs 768 bytes"),
		  "%s", gearrt_last_error());
	cr_expect_eq(gearrt_run(t.s, in, 1, &out, 1), GEARRT_E_ARG);
	cr_expect_eq(gearrt_run(NULL, in, 2, &out, 1), GEARRT_E_ARG);
	cr_expect_eq(gearrt_run(t.s, NULL, 2, &out, 1), GEARRT_E_ARG);
	cr_expect_eq(gearrt_model_open(NULL, &t.m), GEARRT_E_ARG);
	cr_expect_eq(gearrt_input_info(t.m, 5, &out), GEARRT_E_ARG);
	two_close(&t);
}

Test(runtime, corrupt_files_are_refused_never_crash)
{
	Two t = two_open();
	size_t n = 0;
	uint8_t *good = (uint8_t *)read_file(t.om, &n);
	char *bad = path_in(t.dir, "bad.om");
	gearrt_model *m = NULL;
	for (size_t cut = 0; cut < n; cut += 1 + n / 97) {
		write_file(bad, good, cut);
		cr_assert_eq(gearrt_model_open(bad, &m), GEARRT_E_FILE,
			     "truncated at %zu", cut);
		cr_assert(strstr(gearrt_last_error(), bad));
	}
	for (size_t at = 0; at < n; at += 1 + n / 211) {
		good[at] ^= 0x5a;
		write_file(bad, good, n);
		good[at] ^= 0x5a;
		cr_assert_eq(gearrt_model_open(bad, &m), GEARRT_E_FILE,
			     "byte %zu flipped", at);
	}
	cr_expect_eq(gearrt_model_open("/nonexistent/x.om", &m), GEARRT_E_FILE);
	cr_expect(strstr(gearrt_last_error(), "/nonexistent/x.om"));
	free(bad);
	free(good);
	two_close(&t);
}

Test(runtime, a_prepared_gear_runs_without_heap_allocation)
{
	Two t = two_open();
	float a[2 * 3 * 16 * 16], o[2 * 3 * 16 * 16];
	fill(a, ARRAY_SIZE(a), 1);
	gearrt_tensor in[2] = { ftensor(a, 2, 3, 16, 16),
				ftensor(a, 2, 3, 16, 16) };
	gearrt_tensor out = { .data = o, .size = sizeof(o) };
	cr_assert_eq(gearrt_run(t.s, in, 2, &out, 1), GEARRT_OK);
	long before = alloc_count;
	for (int i = 0; i < 10; i++)
		cr_assert_eq(gearrt_run(t.s, in, 2, &out, 1), GEARRT_OK);
	cr_expect_eq(alloc_count, before, "%ld allocations in 10 runs",
		     alloc_count - before);
	cr_expect_eq(o[5], 2 * a[5] > 0 ? 2 * a[5] : 0);
	two_close(&t);
}

Test(runtime, outputs_do_not_depend_on_the_arena_contents)
{
	Two t = two_open();
	check_two(&t, 2, 16, false);
	memset(rt_session_ctx(t.s)->arena, 0xff, (size_t)t.m->arena_bytes);
	check_two(&t, 2, 16, true);
	two_close(&t);
}

typedef struct Worker {
	gearrt_model *m;
	float *out;
	int rc;
} Worker;

static void *worker(void *p)
{
	Worker *w = p;
	gearrt_session *s;
	static float a[2 * 3 * 16 * 16];
	fill(a, ARRAY_SIZE(a), 0.75f);
	w->rc = gearrt_session_create(w->m, NULL, &s);
	for (int i = 0; i < 200 && !w->rc; i++) {
		gearrt_tensor in[2] = { ftensor(a, 2, 3, 16, 16),
					ftensor(a, 2, 3, 16, 16) };
		gearrt_tensor out = { .data = w->out,
				      .size = sizeof(a) };
		w->rc = gearrt_run(s, in, 2, &out, 1);
	}
	gearrt_session_destroy(s);
	return NULL;
}

Test(runtime, sessions_on_two_threads_agree_with_one)
{
	Two t = two_open();
	enum { N = 2 * 3 * 16 * 16 };
	static float o1[N], o2[N], o3[N];
	Worker w[3] = { { t.m, o1, 0 }, { t.m, o2, 0 }, { t.m, o3, 0 } };
	worker(&w[2]);
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, &w[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	cr_assert(!w[0].rc && !w[1].rc && !w[2].rc);
	cr_expect(!memcmp(o1, o3, sizeof(o1)) && !memcmp(o2, o3, sizeof(o2)));
	two_close(&t);
}

/* if_subgraph.onnx: an If on a runtime condition. */
Test(runtime, if_on_a_runtime_condition_runs_the_taken_branch)
{
	char *dir = temp_dir();
	char *om = compile(dir, "ifm", "if_subgraph.onnx", "x:-1,4", "1;4");
	gearrt_model *m;
	gearrt_session *s;
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, NULL, &s), GEARRT_OK);
	float pos[4] = { 1, 2, 3, 4 }, neg[4] = { -1, -2, -3, -4 };
	float r1[4], r2[4];
	gearrt_tensor in = { .dtype = GEARRT_FLOAT32, .rank = 2,
			     .dims = { 1, 4 }, .data = pos, .size = 16 };
	gearrt_tensor out = { .data = r1, .size = 16 };
	cr_assert_eq(gearrt_run(s, &in, 1, &out, 1), GEARRT_OK, "%s",
		     gearrt_last_error());
	in.data = neg;
	out.data = r2;
	cr_assert_eq(gearrt_run(s, &in, 1, &out, 1), GEARRT_OK, "%s",
		     gearrt_last_error());
	/* sum(x) > 0: Relu(x) + 1; else the inner If's else: Relu(x) - 1 */
	for (int i = 0; i < 4; i++) {
		cr_expect_eq(r1[i], pos[i] + 1, "then: element %d is %g", i,
			     r1[i]);
		cr_expect_eq(r2[i], -1.0f, "else: element %d is %g", i, r2[i]);
	}
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	remove_tree(dir);
	free(dir);
	free(om);
}

/* A failed run's status is the class of its error, not read back from
 * its words: a node whose message says what a too-small output buffer's
 * does ("N bytes, its buffer has M") still fails as GEARRT_E_RUN.
 * vad_sr.onnx with its sr a runtime input: sr = 8000 takes a branch
 * compiled as a Fail node, whose message the file holds; edited here. */
Test(runtime, a_failed_run_is_classed_by_status_not_by_message)
{
	Fx x = fx_compile("vad_sr.onnx", "x:1,512;sr:", NULL);
	const char *words = "x needs 8 bytes, its buffer has 4";
	int hits = 0;
	for (size_t gi = 0; gi < x.f.model->n_graphs; gi++) {
		Gearom__Graph *g = x.f.model->graphs[gi];
		for (size_t i = 0; i < g->n_nodes; i++)
			for (size_t k = 0; k < g->nodes[i]->n_attrs; k++) {
				Gearom__Attribute *a = g->nodes[i]->attrs[k];
				if (strcmp(g->nodes[i]->op_type, "Fail") ||
				    strcmp(a->name, "message"))
					continue;
				free(a->s.data); /* om_close frees the copy */
				a->s.data = (uint8_t *)strdup(words);
				a->s.len = strlen(words);
				hits++;
			}
	}
	cr_assert_gt(hits, 0, "no Fail node in the file");
	omedit_write(x.data, x.f.model, x.om);
	gearrt_model *m;
	gearrt_session *s;
	cr_assert_eq(gearrt_model_open(x.om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, NULL, &s), GEARRT_OK);
	float xs[512] = { 0 };
	int64_t mode[2] = { 1, 0 }, sr = 8000;
	gearrt_tensor in[3] = { 0 };
	for (size_t i = 0; i < 3; i++)
		cr_assert_eq(gearrt_input_info(m, i, &in[i]), GEARRT_OK);
	for (size_t i = 0; i < 3; i++) {
		bool isx = !strcmp(in[i].name, "x"), ism = !strcmp(in[i].name,
								   "mode");
		in[i].data = isx ? (void *)xs : ism ? (void *)mode : (void *)&sr;
		in[i].size = isx ? sizeof(xs) : ism ? sizeof(mode) : sizeof(sr);
	}
	gearrt_tensor out[4] = { 0 };
	size_t nout = gearrt_output_count(m);
	cr_expect_eq(gearrt_run(s, in, 3, out, nout), GEARRT_E_RUN, "%s",
		     gearrt_last_error());
	cr_expect(strstr(gearrt_last_error(), words), "%s",
		  gearrt_last_error());
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	fx_free(&x);
}
