/*
 * tests/test_scatter.c - ScatterND, ScatterElements and Scatter:
 * runtime/small.c's small.scatter against the reference kernel
 * (compiler/ops/gather.c) node by node, the same bytes: every
 * reduction, dtypes of 1 to 8 bytes, negative and duplicate indices,
 * NaN, infinities and -0 in data and updates, no indices at all, the
 * output in place of the data, an index out of range (the reference's
 * error), and the nodes it leaves to the reference kernel.  Then through
 * the compiler: a streaming cache update planned in place of its data,
 * the same bytes as GEARRT_NO_FAST at 1 and 2 threads, the profile
 * naming small.scatter.
 */
#include <float.h>
#include <math.h>

#include "runtime/gearrt.h"
#include "runtime/rt.h"
#include "serializer/export.h"
#include "synth.h"
#include "testrun.h"

/* Edge values first, then ordinary ones. */
static const float edges[] = { 0.0f, -0.0f, NAN, INFINITY, -INFINITY,
			       1e-40f, FLT_MAX, -FLT_MAX, 2.0f, -2.5f,
			       0.5f, 7.25f, -3.0f };
enum { NEDGE = sizeof(edges) / sizeof(edges[0]) };

/* Data or updates: floats cycling through the edges from `from`, other
 * dtypes any bytes (moved, or reduced as the reference does). */
static void fill(Tensor *t, uint32_t seed, int from)
{
	int64_t n = shape_numel(&t->shape);
	uint8_t *b = tensor_mut(t);
	if (t->dtype == DT_FLOAT) {
		for (int64_t i = 0; i < n; i++)
			((float *)b)[i] = edges[(i + from) % NEDGE];
		return;
	}
	for (size_t i = 0; i < t->nbytes; i++) {
		seed = seed * 1664525u + 1013904223u;
		b[i] = (uint8_t)(seed >> 24);
	}
}

/* A model of one node op(x, i, u) at opset, its inputs graph inputs. */
static Model *scatter_model(const char *op, int dt, Shape xs, int idt,
			    Shape is, Shape us, const char *red, int64_t axis,
			    int64_t opset)
{
	Model *m = tu_model(opset);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", dt, xs);
	ValId i = tu_input(g, "i", idt, is);
	ValId u = tu_input(g, "u", dt, us);
	Node *n = tu_node(g, op, "sc", IDS(x, i, u), 1);
	if (red)
		tu_str(g, n, "reduction", red);
	if (axis != INT64_MIN)
		tu_int(g, n, "axis", axis);
	infer_ok(m);
	return m;
}

/* Runs m's node by the kernel the registry picks (small.scatter if
 * fast, else it must be the reference's) and by the reference kernel,
 * on data and updates filled here and indices idx; the fast path's
 * output in place of its data if in_place.  Same bytes; or, with err
 * set, both fail with it (the fast path's message the end of the
 * reference's, which names the node). */
static void check(Model *m, const void *idx, bool fast, bool in_place,
		  const char *err)
{
	Graph *g = m->graph;
	Node *n = &g->nodes[0];
	gearrt_model md = { .m = m };
	RunCtx s = { .model = &md, .threads = 1 };
	Prepared p = { .g = g };
	p.vt = calloc((size_t)g->nvals + 1, sizeof(Tensor));
	p.cur = calloc((size_t)g->nvals + 1, sizeof(*p.cur));
	const Value *xv = &g->vals[n->inputs[0]], *iv = &g->vals[n->inputs[1]];
	const Value *uv = &g->vals[n->inputs[2]], *yv = &g->vals[n->outputs[0]];
	Tensor *x = tensor_new(&m->arena, "x", xv->dtype, &xv->shape, NULL);
	Tensor *u = tensor_new(&m->arena, "u", uv->dtype, &uv->shape, NULL);
	const Tensor *ind = iv->kind == VAL_WEIGHT
				    ? iv->konst
				    : tensor_new(&m->arena, "i", iv->dtype,
						 &iv->shape, idx);
	Tensor *ref = tensor_new(&m->arena, "r", yv->dtype, &yv->shape, NULL);
	Tensor *got = tensor_new(&m->arena, "y", yv->dtype, &yv->shape, NULL);
	cr_assert(x && u && ind && ref && got, "%s", last_error());
	fill(x, 3, 0);
	fill(u, 5, 4);
	Tensor *x0 = tensor_new(&m->arena, "x0", x->dtype, &x->shape, x->data);
	const Tensor *in[3] = { x, ind, u }, *fin[3] = { x, ind, u };
	if (in_place) {
		memcpy(tensor_mut(got), x->data, x->nbytes);
		fin[0] = got;
	} else {
		memset(tensor_mut(got), 0xA5, got->nbytes);
	}
	for (int k = 0; k < 3; k++)
		p.cur[n->inputs[k]] = in[k];
	p.vt[n->outputs[0]] = *got;
	p.cur[n->outputs[0]] = &p.vt[n->outputs[0]];
	Tensor *outs[1] = { got };
	Task t = { .n = n, .in = fin, .out = outs };
	cr_assert_eq(rt_kernel_choose(&s, &p, &t), 0, "%s", last_error());
	const char *name = rt_kernel_name(&t);
	if (!fast) {
		cr_expect_str_eq(name, "ref", "%s", n->op_type);
	} else {
		cr_assert_str_eq(name, "small.scatter", "%s took %s",
				 n->op_type, name);
		cr_assert_eq(rt_kernel_build(&s, &p, &t), 0, "%s",
			     last_error());
		clear_error();
		int rc = t.fast.run(t.fast.state, fin, outs);
		char ferr[512];
		snprintf(ferr, sizeof(ferr), "%s", last_error());
		t.fast.free(t.fast.state);
		uint8_t set[1] = { 0 };
		Tensor *routs[1] = { ref };
		OpBind b = { .in = in, .out = routs, .set = set };
		OpCtx c = { .model = m, .g = g, .n = n,
			    .opset = model_opset(m), .fold_limit = INT64_MAX,
			    .bind = &b, .arena = &s.scratch };
		clear_error();
		int rrc = op_info[n->op].run(&c);
		if (err) {
			cr_expect_neq(rc, 0, "%s: the fast path took it",
				      n->op_type);
			cr_expect_neq(rrc, 0);
			cr_expect(strstr(ferr, err), "%s", ferr);
			const char *re = last_error();
			size_t lr = strlen(re), lf = strlen(ferr);
			cr_expect(lr >= lf && !strcmp(re + lr - lf, ferr),
				  "the reference says '%s', the fast path "
				  "'%s'", re, ferr);
		} else {
			cr_assert_eq(rc, 0, "%s", ferr);
			cr_assert_eq(rrc, 0, "%s", last_error());
			cr_assert(set[0]);
			cr_expect(!memcmp(got->data, ref->data, ref->nbytes),
				  "%s (%s): the fast path differs from the "
				  "reference", n->op_type,
				  dtype_name(x->dtype));
			if (!in_place)
				cr_expect(!memcmp(x->data, x0->data, x->nbytes),
					  "the data was written");
		}
	}
	free(t.lay);
	arena_release(&s.scratch);
	free(p.vt);
	free(p.cur);
	model_free(m);
}

static const char *const reds[] = { "none", "add", "mul", "max", "min" };

Test(scatter, nd_matches_reference)
{
	/* slices of [4,3,5] (k 1), rows (k 2), elements (k 3); negative
	 * and duplicate tuples, the last of duplicates winning (or all
	 * reduced, in order); in place and not */
	static const int64_t k1[] = { 2, -1, 0, 2 }, k2[] = { 1, 2, -4, -3,
							     1, 2 };
	static const int64_t k3[] = { 3, 2, 4, -1, -1, -5, 0, 0, 0,
				      3, 2, 4 };
	for (size_t r = 0; r < sizeof(reds) / sizeof(reds[0]); r++)
		for (int ip = 0; ip < 2; ip++) {
			check(scatter_model("ScatterND", DT_FLOAT,
					    SHAPE(4, 3, 5), DT_INT64,
					    SHAPE(4, 1), SHAPE(4, 3, 5),
					    reds[r], INT64_MIN, 18),
			      k1, true, ip, NULL);
			check(scatter_model("ScatterND", DT_FLOAT,
					    SHAPE(4, 3, 5), DT_INT64,
					    SHAPE(3, 2), SHAPE(3, 5), reds[r],
					    INT64_MIN, 18),
			      k2, true, ip, NULL);
			check(scatter_model("ScatterND", DT_FLOAT,
					    SHAPE(4, 3, 5), DT_INT64,
					    SHAPE(2, 2, 3), SHAPE(2, 2),
					    reds[r], INT64_MIN, 18),
			      k3, true, ip, NULL);
		}
}

Test(scatter, elements_matches_reference)
{
	/* [3,4,5] by indices [2,3,4] on each axis (one negative), int32
	 * and int64 indices; duplicates along the axis */
	int64_t i64[24];
	int32_t i32[24];
	for (int a = 0; a < 3; a++) {
		int64_t len = a == 0 ? 3 : a == 1 ? 4 : 5;
		for (int e = 0; e < 24; e++) {
			i64[e] = (e * 7 + a) % len - (e % 3 == 0 ? len : 0);
			i32[e] = (int32_t)i64[e];
		}
		for (size_t r = 0; r < sizeof(reds) / sizeof(reds[0]); r++)
			for (int ip = 0; ip < 2; ip++) {
				int64_t axis = a == 2 && ip ? -1 : a;
				check(scatter_model("ScatterElements",
						    DT_FLOAT, SHAPE(3, 4, 5),
						    DT_INT64, SHAPE(2, 3, 4),
						    SHAPE(2, 3, 4), reds[r],
						    axis, 18),
				      i64, true, ip, NULL);
				check(scatter_model("ScatterElements",
						    DT_FLOAT, SHAPE(3, 4, 5),
						    DT_INT32, SHAPE(2, 3, 4),
						    SHAPE(2, 3, 4), reds[r],
						    axis, 18),
				      i32, true, ip, NULL);
			}
	}
	/* Scatter (opset 9-10): ScatterElements without reductions */
	check(scatter_model("Scatter", DT_FLOAT, SHAPE(3, 4, 5), DT_INT64,
			    SHAPE(2, 3, 4), SHAPE(2, 3, 4), NULL, 2, 10),
	      i64, true, false, NULL);
}

Test(scatter, any_dtype_and_reduction)
{
	/* 1-, 2-, 4- and 8-byte dtypes, the reductions of the integers
	 * wrapping, float16 and double rounded as the reference rounds */
	static const int dts[] = { DT_UINT8, DT_INT8, DT_BOOL, DT_INT16,
				   DT_FLOAT16, DT_BFLOAT16, DT_INT32,
				   DT_UINT32, DT_INT64, DT_UINT64,
				   DT_DOUBLE };
	static const int64_t nd[] = { 1, 0, -1, 1 };
	int64_t el[12];
	for (int e = 0; e < 12; e++)
		el[e] = (e * 5) % 6 - 3;
	for (size_t d = 0; d < sizeof(dts) / sizeof(dts[0]); d++)
		for (size_t r = 0; r < sizeof(reds) / sizeof(reds[0]); r++) {
			/* a dtype without arithmetic for the reduction:
			 * the reference computes no such node, neither
			 * does the fast path */
			bool ok = scatter_reducible(dts[d], (ScatterRed)r);
			check(scatter_model("ScatterND", dts[d], SHAPE(3, 6),
					    DT_INT64, SHAPE(4, 1),
					    SHAPE(4, 6), reds[r], INT64_MIN,
					    18),
			      nd, ok, r & 1, NULL);
			check(scatter_model("ScatterElements", dts[d],
					    SHAPE(3, 6), DT_INT64,
					    SHAPE(3, 4), SHAPE(3, 4), reds[r],
					    1, 18),
			      el, ok, !(r & 1), NULL);
		}
}

/* op(x, i, u) with i an empty int64 weight of shape is, u one of us. */
static Model *empty_model(const char *op, Shape is, Shape us,
			  const char *red, int64_t axis)
{
	Model *m = tu_model(18);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(4, 3));
	ValId i = tu_weight(g, "i", DT_INT64, is);
	ValId u = tu_weight(g, "u", DT_FLOAT, us);
	Node *n = tu_node(g, op, "sc", IDS(x, i, u), 1);
	if (red)
		tu_str(g, n, "reduction", red);
	if (axis != INT64_MIN)
		tu_int(g, n, "axis", axis);
	infer_ok(m);
	return m;
}

Test(scatter, empty_indices_copy_the_data)
{
	/* constant indices holding none: the data copied (or nothing done
	 * in place) */
	check(empty_model("ScatterND", SHAPE(0, 1), SHAPE(0, 3), NULL,
			  INT64_MIN),
	      NULL, true, false, NULL);
	check(empty_model("ScatterND", SHAPE(0, 1), SHAPE(0, 3), "add",
			  INT64_MIN),
	      NULL, true, true, NULL);
	check(empty_model("ScatterElements", SHAPE(4, 0), SHAPE(4, 0), "mul",
			  0),
	      NULL, true, false, NULL);
	/* no indices: a dim past data's is no error */
	check(empty_model("ScatterElements", SHAPE(0, 7), SHAPE(0, 7), NULL,
			  0),
	      NULL, true, true, NULL);
	/* empty indices the run makes: the reference kernel, which defines
	 * the degenerate cases (fast.c degenerate) */
	check(scatter_model("ScatterND", DT_FLOAT, SHAPE(4, 3), DT_INT64,
			    SHAPE(0, 1), SHAPE(0, 3), NULL, INT64_MIN, 18),
	      NULL, false, false, NULL);
}

Test(scatter, out_of_range_is_the_references_error)
{
	static const int64_t nd[] = { 0, 2, 1, -5 }, nd2[] = { 4, 0 };
	check(scatter_model("ScatterND", DT_FLOAT, SHAPE(4, 3), DT_INT64,
			    SHAPE(2, 2), SHAPE(2), NULL, INT64_MIN, 18),
	      nd, true, false, "index -5 is out of range for a dim of 3");
	check(scatter_model("ScatterND", DT_FLOAT, SHAPE(4, 3), DT_INT64,
			    SHAPE(2, 1), SHAPE(2, 3), "add", INT64_MIN, 18),
	      nd2, true, true, "index 4 is out of range for a dim of 4");
	static const int64_t el[] = { 0, 1, 2, 3, 0, 1 };
	static const int32_t el32[] = { 0, -1, -4, 1, 0, 1 };
	check(scatter_model("ScatterElements", DT_FLOAT, SHAPE(3, 3),
			    DT_INT64, SHAPE(2, 3), SHAPE(2, 3), NULL, 1, 18),
	      el, true, false, "index 3 is out of range for a dim of 3");
	check(scatter_model("ScatterElements", DT_INT8, SHAPE(3, 3),
			    DT_INT32, SHAPE(2, 3), SHAPE(2, 3), "max", 0, 18),
	      el32, true, true, "index -4 is out of range for a dim of 3");
}

Test(scatter, leaves_what_the_reference_refuses)
{
	/* an indices dim past data's (the reference says so), a
	 * reduction of an opset that has none of that name */
	static const int64_t el[8] = { 0 };
	check(scatter_model("ScatterElements", DT_FLOAT, SHAPE(3, 3),
			    DT_INT64, SHAPE(2, 4), SHAPE(2, 4), NULL, 0, 18),
	      el, false, false, NULL);
	check(scatter_model("ScatterND", DT_FLOAT, SHAPE(3, 3), DT_INT64,
			    SHAPE(1, 1), SHAPE(1, 3), NULL, INT64_MIN, 16),
	      el, true, false, NULL);
	Model *m = tu_model(16);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(3, 3));
	ValId i = tu_input(g, "i", DT_INT64, SHAPE(1, 1));
	ValId u = tu_input(g, "u", DT_FLOAT, SHAPE(1, 3));
	Node *n = tu_node(g, "ScatterND", "sc", IDS(x, i, u), 1);
	tu_str(g, n, "reduction", "max"); /* opset 18's */
	g->vals[n->outputs[0]].dtype = DT_FLOAT;
	g->vals[n->outputs[0]].tkind = TK_TENSOR;
	g->vals[n->outputs[0]].shape = SHAPE(3, 3);
	check(m, el, false, false, NULL);
}

/* ---- through the compiler ------------------------------------------------ */

enum { B = 2, C = 4, T = 6 };

/* A streaming cache: state [B,C,T] negated (a tensor dying at the
 * update), its last step set to the frame [B,C,1] (ScatterND, tuples
 * (b, c, -1)), step 0 (index 0, or -T) plus the frame's negation
 * (ScatterElements, add), negated again as the output. */
static Model *cache_model(void)
{
	Synth s = sy_begin("cache");
	s.m->opsets[0].version = 18;
	ValId st = tu_input(s.g, "state", DT_FLOAT, SHAPE(B, C, T));
	ValId fr = tu_input(s.g, "frame", DT_FLOAT, SHAPE(B, C, 1));
	int64_t nd[B * C * 3], el[B * C]; /* tuples [B,C,1,3] */
	for (int i = 0; i < B * C; i++) {
		nd[3 * i] = i / C, nd[3 * i + 1] = i % C, nd[3 * i + 2] = -1;
		el[i] = i % 2 ? -T : 0;
	}
	ValId ind = tu_weight_data(s.g, "nd", DT_INT64, SHAPE(B, C, 1, 3),
				   nd);
	ValId iel = tu_weight_data(s.g, "el", DT_INT64, SHAPE(B, C, 1), el);
	ValId d = sy_unary(&s, "Neg", st);
	ValId a = tu_out(tu_node(s.g, "ScatterND", "upd", IDS(d, ind, fr), 1),
			 0);
	ValId nf = sy_unary(&s, "Neg", fr);
	Node *n = tu_node(s.g, "ScatterElements", "acc", IDS(a, iel, nf), 1);
	tu_int(s.g, n, "axis", 2);
	tu_str(s.g, n, "reduction", "add");
	Model *m = sy_end(&s, sy_unary(&s, "Neg", tu_out(n, 0)));
	cr_assert(m, "%s", last_error());
	m->ir_version = 8;
	return m;
}

/* Output 0 of om on state and frame (edge values), malloc'd. */
static float *run_cache(const char *om, bool no_fast, int threads)
{
	gearrt_model *m;
	gearrt_session *s;
	gearrt_options opt = { .threads = threads, .no_fast = no_fast };
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, &opt, &s), GEARRT_OK);
	static float st[B * C * T], fr[B * C];
	for (int i = 0; i < B * C * T; i++)
		st[i] = edges[i % NEDGE];
	for (int i = 0; i < B * C; i++)
		fr[i] = edges[(i + 5) % NEDGE];
	gearrt_tensor in[2] = {
		{ .dtype = GEARRT_FLOAT32, .rank = 3, .dims = { B, C, T },
		  .data = st, .size = sizeof(st) },
		{ .dtype = GEARRT_FLOAT32, .rank = 3, .dims = { B, C, 1 },
		  .data = fr, .size = sizeof(fr) },
	};
	gearrt_tensor out = { 0 };
	cr_assert_eq(gearrt_run(s, in, 2, &out, 1), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(out.size, sizeof(st));
	float *y = malloc(out.size);
	memcpy(y, out.data, out.size);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	return y;
}

Test(scatter, cache_update_in_place_matches_reference)
{
	char *dir = temp_dir(), *onnx = path_in(dir, "cache.onnx");
	char *out = path_in(dir, "cache"), mflag[512], oflag[512];
	Model *m = cache_model();
	OnnxExport ox = { 0 };
	cr_assert_eq(onnx_write(m, m->graph, &ox, onnx), 0, "%s",
		     last_error());
	model_free(m);
	snprintf(mflag, sizeof(mflag), "--model=%s", onnx);
	snprintf(oflag, sizeof(oflag), "--output=%s", out);
	const char *args[] = { mflag, oflag, "-q", NULL };
	Run r = run_gearcv(args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	char om[600];
	snprintf(om, sizeof(om), "%s.om", out);
	/* both updates write over the negated state's buffer */
	r = run_gearc("dump", om);
	cr_assert_eq(r.status, 0, "%s", r.err);
	int inplace = 0;
	for (const char *q = r.out; (q = strstr(q, "in place of")); q++)
		inplace++;
	cr_expect_geq(inplace, 2, "%s", r.out);
	run_free(&r);
	float *ref = run_cache(om, true, 1), *f1 = run_cache(om, false, 1);
	float *f2 = run_cache(om, false, 2);
	cr_expect(!memcmp(f1, ref, B * C * T * sizeof(float)),
		  "1 thread differs from the reference kernels");
	cr_expect(!memcmp(f2, ref, B * C * T * sizeof(float)),
		  "2 threads differ from the reference kernels");
	/* what the reference computes: the state negated, its last step
	 * the frame, step 0 plus the frame's negation, all negated */
	for (int b = 0; b < B; b++)
		for (int c = 0; c < C; c++)
			for (int t = 0; t < T; t++) {
				int i = (b * C + c) * T + t;
				float f = edges[(b * C + c + 5) % NEDGE];
				float v = -edges[i % NEDGE];
				if (t == T - 1)
					v = f;
				if (t == 0)
					v = v + -f;
				float want = -v;
				cr_expect((isnan(want) && isnan(ref[i])) ||
						  !memcmp(&want, &ref[i], 4),
					  "[%d,%d,%d] is %g, expected %g", b,
					  c, t, ref[i], want);
			}
	free(ref);
	free(f1);
	free(f2);
	/* the profile names the kernel; without fast paths, ref */
	setenv("GEARRT_PROFILE", "nodes", 1);
	unsetenv("GEARRT_NO_FAST");
	r = run_gearc("run", om, "--random-inputs", "--quiet");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "ScatterND/small.scatter") &&
			  strstr(r.err, "ScatterElements/small.scatter"),
		  "%s", r.err);
	run_free(&r);
	setenv("GEARRT_NO_FAST", "1", 1);
	r = run_gearc("run", om, "--random-inputs", "--quiet");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "ScatterND/ref"), "%s", r.err);
	run_free(&r);
	unsetenv("GEARRT_NO_FAST");
	unsetenv("GEARRT_PROFILE");
	remove_tree(dir);
	free(dir);
	free(onnx);
	free(out);
}
