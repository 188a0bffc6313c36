/*
 * tests/test_scratch.c - the kernels that take scratch memory at run time
 * (ReduceX float and int, ArgMax/ArgMin, TopK, Split): sessions on eight
 * threads give one thread's outputs, runs after the first allocate
 * nothing and leave the model as it was, reductions of inputs past what
 * folding reads run, and NaN and infinities have one order.  Models:
 * tests/gen_scratch_models.py.
 */
#include <math.h>

#include "runtime/rt.h"
#include "testrun.h"
#include "testutil.h"
#include "tests/scratch_run.h"

/* tests/allocount.c: heap allocations by the code linked in. */
extern long alloc_count;

typedef struct Opened {
	char *dir;
	gearrt_model *m;
	gearrt_session *s;
} Opened;

/* tests/fixtures/NAME.onnx compiled as it is (static) and opened. */
static Opened open_fixture(const char *name)
{
	Opened o = { .dir = temp_dir() };
	char model[256], out[512], om[520];
	snprintf(model, sizeof(model), "--model=tests/fixtures/%s.onnx", name);
	snprintf(out, sizeof(out), "--output=%s/%s", o.dir, name);
	snprintf(om, sizeof(om), "%s/%s.om", o.dir, name);
	Run r = run_gearc(model, out, "-q");
	cr_assert_eq(r.status, 0, "compile %s: %s", name, r.err);
	run_free(&r);
	cr_assert_eq(gearrt_model_open(om, &o.m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(o.m, NULL, &o.s), GEARRT_OK);
	return o;
}

static void close_fixture(Opened *o)
{
	gearrt_session_destroy(o->s);
	gearrt_model_close(o->m);
	remove_tree(o->dir);
	free(o->dir);
}

/* Bytes the model's arena (its graphs, its weights) has handed out. */
static size_t model_bytes(const gearrt_model *m)
{
	return m->m->arena.used;
}

/* Fixture name on 8 sessions on 8 threads, 300 runs each, then 8
 * threads running one session at once (its pool of run contexts, half
 * the runs' outputs left in its memory): every run's outputs are one
 * thread's. */
static void on_eight_threads(const char *name)
{
	Opened o = open_fixture(name);
	ScrIo io;
	cr_assert_eq(scr_open(o.m, &io), 0);
	cr_expect_eq(scr_threads(o.m, &io, 8, 300, false), 0,
		     "runs on 8 threads failed or differed from one thread's");
	cr_expect_eq(scr_threads(o.m, &io, 8, 300, true), 0,
		     "8 threads on one session failed or differed from one "
		     "thread's");
	scr_close(&io);
	close_fixture(&o);
}

Test(scratch, eight_sessions_on_eight_threads_give_one_threads_outputs)
{
	on_eight_threads("scratch_ops");
}

/* A thread's output slot on a shared session goes when the thread
 * exits (a server starting a thread per request keeps none of them),
 * the calling thread's stays until the session goes: three rounds of 8
 * threads at once, 5 runs each, every run's outputs the caller's. */
Test(scratch, a_shared_sessions_threads_leave_nothing_when_they_exit)
{
	Opened o = open_fixture("scratch_ops");
	ScrIo io;
	cr_assert_eq(scr_open(o.m, &io), 0);
	for (int round = 0; round < 3; round++) {
		pthread_t th[8];
		ScrWorker w[8];
		uint8_t *want = malloc(io.out_bytes + 1);
		cr_assert_eq(scr_run(o.s, &io, want), GEARRT_OK);
		for (int i = 0; i < 8; i++) {
			w[i] = (ScrWorker){ .m = o.m, .shared = o.s, .io = &io,
					    .want = want, .runs = 5 };
			pthread_create(&th[i], NULL, scr_worker, &w[i]);
		}
		for (int i = 0; i < 8; i++) {
			pthread_join(th[i], NULL);
			cr_expect_eq(w[i].failed + w[i].differed, 0);
		}
		free(want);
		cr_expect_eq(rt_session_slots(o.s), 1,
			     "round %d: %d slots after 8 threads exited", round,
			     rt_session_slots(o.s));
	}
	scr_close(&io);
	close_fixture(&o);
}

/* String tensors across threads: StringNormalizer (its data-dependent
 * output makes both nodes run by evaluation), its strings and the API's
 * copies of them each session's own. */
Test(scratch, string_sessions_on_eight_threads_give_one_threads_outputs)
{
	on_eight_threads("strings");
}

Test(scratch, runs_after_the_first_allocate_nothing_and_leave_the_model)
{
	Opened o = open_fixture("scratch_ops");
	ScrIo io;
	cr_assert_eq(scr_open(o.m, &io), 0);
	uint8_t *out = malloc(io.out_bytes);
	cr_assert_eq(scr_run(o.s, &io, out), GEARRT_OK, "%s",
		     gearrt_last_error());
	long allocs = alloc_count;
	size_t held = model_bytes(o.m);
	for (int i = 0; i < 500; i++)
		cr_assert_eq(scr_run(o.s, &io, out), GEARRT_OK);
	cr_expect_eq(alloc_count, allocs, "%ld heap allocations in 500 runs",
		     alloc_count - allocs);
	cr_expect_eq(model_bytes(o.m), held, "500 runs took %zu bytes from "
		     "the model's arena", model_bytes(o.m) - held);
	free(out);
	scr_close(&io);
	close_fixture(&o);
}

/* big_reduce: ReduceMean over axis 2 and ReduceSum of [1,2048,1024],
 * twice what folding reads, against sums in double here. */
Test(scratch, reductions_of_two_million_elements_run)
{
	Opened o = open_fixture("big_reduce");
	enum { R = 2048, C = 1024 };
	float *x = malloc(sizeof(float) * R * C), mean[R], sum;
	for (int i = 0; i < R * C; i++)
		x[i] = (float)((unsigned)i * 7919u % 1000) / 250.0f - 2.0f;
	gearrt_tensor in = { .dtype = GEARRT_FLOAT32, .rank = 3,
			     .dims = { 1, R, C }, .data = x,
			     .size = sizeof(float) * R * C };
	gearrt_tensor out[2] = { { .data = mean, .size = sizeof(mean) },
				 { .data = &sum, .size = sizeof(sum) } };
	cr_assert_eq(gearrt_run(o.s, &in, 1, out, 2), GEARRT_OK, "%s",
		     gearrt_last_error());
	double total = 0;
	for (int r = 0; r < R; r++) {
		double s = 0;
		for (int c = 0; c < C; c++)
			s += x[r * C + c];
		total += s;
		cr_assert_float_eq(mean[r], s / C, 1e-6, "row %d", r);
	}
	cr_expect_float_eq(sum, total, 1e-6 * (fabs(total) + 1));
	free(x);
	close_fixture(&o);
}

/* big_argmax: ArgMax (keepdims) and ArgMin over axis 1 of
 * [1,21,256,256], as DeepLab's head does, against a loop here. */
Test(scratch, argmax_over_1x21x256x256_runs)
{
	Opened o = open_fixture("big_argmax");
	enum { K = 21, P = 256 * 256 };
	float *x = malloc(sizeof(float) * K * P);
	int64_t *amax = malloc(sizeof(int64_t) * P);
	int64_t *amin = malloc(sizeof(int64_t) * P);
	for (int i = 0; i < K * P; i++)
		x[i] = (float)((unsigned)i * 2654435761u >> 20 & 63);
	gearrt_tensor in = { .dtype = GEARRT_FLOAT32, .rank = 4,
			     .dims = { 1, K, 256, 256 }, .data = x,
			     .size = sizeof(float) * K * P };
	gearrt_tensor out[2] = { { .data = amax, .size = sizeof(int64_t) * P },
				 { .data = amin, .size = sizeof(int64_t) * P } };
	cr_assert_eq(gearrt_run(o.s, &in, 1, out, 2), GEARRT_OK, "%s",
		     gearrt_last_error());
	for (int p = 0; p < P; p++) {
		int hi = 0, lo = 0;
		for (int k = 1; k < K; k++) {
			hi = x[k * P + p] > x[hi * P + p] ? k : hi;
			lo = x[k * P + p] < x[lo * P + p] ? k : lo;
		}
		cr_assert_eq(amax[p], hi, "pixel %d", p);
		cr_assert_eq(amin[p], lo, "pixel %d", p);
	}
	free(x);
	free(amax);
	free(amin);
	close_fixture(&o);
}

/* NaN sorts above every number in TopK, largest or not (PyTorch's topk,
 * numpy's sort, ONNX's reference implementation); ArgMax and ArgMin take
 * the first NaN (select_last_index: the last), as numpy does. */
Test(scratch, topk_and_argmax_order_nan_and_infinities)
{
	Opened o = open_fixture("topk_nan");
	const float inf = INFINITY, nan = NAN;
	float x[12] = { 1, nan, 3, inf, -inf, nan, /* */
			nan, 2, -1, -inf, 5, inf };
	float hv[12], lv[12];
	int64_t hi[12], li[12], am[2], aml[2], an[2], anl[2];
	gearrt_tensor in = { .dtype = GEARRT_FLOAT32, .rank = 2,
			     .dims = { 2, 6 }, .data = x, .size = sizeof(x) };
	gearrt_tensor out[8] = {
		{ .data = hv, .size = sizeof(hv) },
		{ .data = hi, .size = sizeof(hi) },
		{ .data = lv, .size = sizeof(lv) },
		{ .data = li, .size = sizeof(li) },
		{ .data = am, .size = sizeof(am) },
		{ .data = aml, .size = sizeof(aml) },
		{ .data = an, .size = sizeof(an) },
		{ .data = anl, .size = sizeof(anl) },
	};
	cr_assert_eq(gearrt_run(o.s, &in, 1, out, 8), GEARRT_OK, "%s",
		     gearrt_last_error());
	static const int64_t want_hi[12] = { 1, 5, 3, 2, 0, 4,
					     0, 5, 4, 1, 2, 3 };
	static const int64_t want_li[12] = { 4, 0, 2, 3, 1, 5,
					     3, 2, 1, 4, 5, 0 };
	for (int i = 0; i < 12; i++) {
		int r = i / 6 * 6;
		cr_expect_eq(hi[i], want_hi[i], "largest: index %d", i);
		cr_expect_eq(li[i], want_li[i], "smallest: index %d", i);
		float h = x[r + want_hi[i]], l = x[r + want_li[i]];
		cr_expect(h == hv[i] || (h != h && hv[i] != hv[i]),
			  "largest: value %d", i);
		cr_expect(l == lv[i] || (l != l && lv[i] != lv[i]),
			  "smallest: value %d", i);
	}
	cr_expect(am[0] == 1 && am[1] == 0, "ArgMax %ld %ld", (long)am[0],
		  (long)am[1]);
	cr_expect(aml[0] == 5 && aml[1] == 0, "ArgMax last %ld %ld",
		  (long)aml[0], (long)aml[1]);
	cr_expect(an[0] == 1 && an[1] == 0, "ArgMin %ld %ld", (long)an[0],
		  (long)an[1]);
	cr_expect(anl[0] == 5 && anl[1] == 0, "ArgMin last %ld %ld",
		  (long)anl[0], (long)anl[1]);
	close_fixture(&o);
}

/* The folding driver bounds what a reduction reads at compile time: a
 * constant of 2^20 elements folds, one of 2^20 + 1 does not. */
static bool sum_folds(int64_t n)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId w = tu_weight(g, "w", DT_FLOAT, shape_of(1, &n));
	Node *r = tu_node(g, "ReduceSum", "r", &w, 1, 1);
	ValId y = tu_out(r, 0);
	infer_ok(m);
	bool folded = g->vals[y].konst != NULL;
	model_free(m);
	return folded;
}

Test(scratch, folding_reads_at_most_a_million_elements)
{
	cr_expect(sum_folds(1 << 20));
	cr_expect(!sum_folds((1 << 20) + 1));
}

/* Shape and Size run as the runtime runs a kernel (bound buffers, the
 * session's scratch): nothing comes from the graph's arena. */
Test(scratch, shape_and_size_kernels_leave_the_graph_arena)
{
	static const char *ops[] = { "Shape", "Size" };
	static const int64_t want[2][2] = { { 2, 3 }, { 6, 0 } };
	for (int i = 0; i < 2; i++) {
		Model *m = tu_model(13);
		Graph *g = m->graph;
		int64_t d[2] = { 2, 3 }, got[2] = { 0, 0 };
		ValId x = tu_input(g, "x", DT_FLOAT, shape_of(2, d));
		Node *n = tu_node(g, ops[i], "n", &x, 1, 1);
		ValId y = tu_out(n, 0);
		infer_ok(m);
		float xd[6] = { 0 };
		Tensor xt = { .dtype = DT_FLOAT, .shape = g->vals[x].shape,
			      .data = xd, .nbytes = sizeof(xd) };
		Tensor yt = { .dtype = DT_INT64, .shape = g->vals[y].shape,
			      .data = got,
			      .nbytes = (size_t)shape_bytes(&g->vals[y].shape,
							    DT_INT64) };
		const Tensor *in[1] = { &xt };
		Tensor *out[1] = { &yt };
		uint8_t set[1] = { 0 };
		Arena scratch = { 0 };
		OpBind b = { .in = in, .out = out, .set = set };
		OpCtx c = { .model = m, .g = g, .n = &g->nodes[0], .opset = 13,
			    .fold_limit = INT64_MAX, .bind = &b,
			    .arena = &scratch };
		size_t used = g->arena->used;
		cr_assert_eq(op_info[c.n->op].run(&c), 0, "%s", last_error());
		cr_expect(set[0], "%s set no output", ops[i]);
		cr_expect_eq(g->arena->used, used, "%s took %zu bytes of the "
			     "graph's arena", ops[i], g->arena->used - used);
		cr_expect(got[0] == want[i][0] && got[1] == want[i][1],
			  "%s: %lld %lld", ops[i], (long long)got[0],
			  (long long)got[1]);
		arena_release(&scratch);
		model_free(m);
	}
}
