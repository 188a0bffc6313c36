/*
 * tests/test_small.c - the plain-C paths for small graphs
 * (runtime/small.c) against the reference kernels, node by node: data
 * movement replayed as copies (Slice, Concat, Pad, Split, Tile, Expand),
 * the small LSTM cell and depthwise convolution, on random inputs at
 * several shapes, edge cases included (negative steps, clamped ends,
 * negative pads, reflect and edge modes, omitted optional inputs and
 * outputs, int64 elements); and the cases they leave to other paths.
 */
#include <string.h>
#include <math.h>

#include "runtime/rt.h"
#include "runtime/small.h"
#include "testrun.h"
#include "testutil.h"

enum { MAX_IO = 8 };

/* A list of int64 (INTS gives the pointer and the count). */
#define L(...) ((const int64_t[]){ __VA_ARGS__ })

/* Whether fill_random puts NaN, -0, 0 and infinities among the floats
 * (an eighth of them). */
static bool fill_specials;

static void fill_random(Tensor *t, uint32_t seed)
{
	int64_t n = shape_numel(&t->shape);
	uint8_t *b = tensor_mut(t);
	if (t->dtype != DT_FLOAT) { /* moved, not computed: any bytes */
		for (size_t i = 0; i < t->nbytes; i++) {
			seed = seed * 1664525u + 1013904223u;
			b[i] = (uint8_t)(seed >> 24);
		}
		return;
	}
	static const float special[] = { NAN, -0.0f, 0.0f, INFINITY,
					 -INFINITY };
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		((float *)b)[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
		if (fill_specials && (seed >> 4) % 8 == 0)
			((float *)b)[i] = special[(seed >> 12) % 5];
	}
}

static Tensor *new_tensor(Model *m, const Value *v)
{
	Tensor *t = tensor_new(&m->arena, v->name, v->dtype, &v->shape, NULL);
	cr_assert(t, "%s", last_error());
	return t;
}

/* The LSTM cell check_node tries: small_lstm or small_lstm_packed. */
static int (*lstm_kernel)(RunCtx *, Prepared *, Task *,
			  FastKernel *) = small_lstm;

/* Runs node n of m's main graph (inferred here) on random values of its
 * graph inputs, by the reference kernel and by the fast path the runtime
 * picks: that must be runtime/small.c's if small, else one of another
 * path or none.  Outputs within atol + rtol * |reference|, or NaN
 * where it is. */
static void check_node(Model *m, const Node *n, bool small, float atol,
		       float rtol)
{
	infer_ok(m);
	Graph *g = m->graph;
	gearrt_model md = { .m = m };
	RunCtx s = { .model = &md, .threads = 1 };
	Prepared p = { .g = g };
	p.vt = calloc((size_t)g->nvals + 1, sizeof(Tensor));
	p.cur = calloc((size_t)g->nvals + 1, sizeof(*p.cur));
	const Tensor *in[MAX_IO] = { NULL };
	Tensor *ref[MAX_IO] = { NULL }, *got[MAX_IO] = { NULL };
	uint8_t set[MAX_IO] = { 0 };
	cr_assert(n->ninputs <= MAX_IO && n->noutputs <= MAX_IO);
	for (int32_t k = 0; k < n->ninputs; k++) {
		const Value *v = rt_in_val(&p, n, k);
		if (!v)
			continue;
		if (v->kind == VAL_WEIGHT) {
			in[k] = v->konst;
		} else {
			Tensor *t = new_tensor(m, v);
			fill_random(t, 11u + (uint32_t)k);
			in[k] = t;
		}
		p.cur[n->inputs[k]] = in[k];
	}
	for (int32_t k = 0; k < n->noutputs; k++) {
		if (n->outputs[k] < 0)
			continue;
		const Value *v = &g->vals[n->outputs[k]];
		ref[k] = new_tensor(m, v);
		got[k] = new_tensor(m, v);
		p.vt[n->outputs[k]] = *got[k];
		p.cur[n->outputs[k]] = &p.vt[n->outputs[k]];
	}
	Task t = { .n = n, .in = in, .out = got };
	int rc;
	bool took;
	if (n->op == OP_LSTM) {
		/* the registry tries the packed cell, then oneDNN's RNN
		 * (small.lstm takes what it leaves); the cell of the test's
		 * choice is what is tested here */
		rc = lstm_kernel(&s, &p, &t, &t.fast);
		cr_assert_geq(rc, 0, "%s", last_error());
		took = rc == 1;
	} else {
		cr_assert_eq(rt_kernel_choose(&s, &p, &t), 0, "%s",
			     last_error());
		rc = rt_fast(&t);
		took = rc == 1 && !strncmp(rt_kernel_name(&t), "small.", 6);
		if (rc == 1)
			cr_assert_eq(rt_kernel_build(&s, &p, &t), 0, "%s",
				     last_error());
	}
	cr_assert_eq(took, small, "%s: runtime/small.c %s it (%s)",
		     n->op_type, small ? "did not take" : "took",
		     rc == 1 ? rt_kernel_name(&t) : "no fast path");
	if (rc == 1)
		cr_assert_eq(t.fast.run(t.fast.state, in, got), 0, "%s",
			     last_error());
	if (t.fast.free)
		t.fast.free(t.fast.state);
	OpBind b = { .in = in, .out = ref, .set = set };
	OpCtx c = { .model = m, .g = g, .n = (Node *)n,
		    .opset = model_opset(m), .fold_limit = INT64_MAX,
		    .bind = &b, .arena = &s.scratch };
	cr_assert_eq(op_info[n->op].run(&c), 0, "%s", last_error());
	for (int32_t k = 0; rc == 1 && k < n->noutputs; k++) {
		if (!ref[k])
			continue;
		int64_t cnt = shape_numel(&ref[k]->shape);
		for (int64_t i = 0; i < cnt; i++) {
			double x = tensor_get_f64(got[k], i),
			       y = tensor_get_f64(ref[k], i);
			/* no tolerance: the same zero's sign too */
			bool same = isnan(x) || isnan(y) ? isnan(x) && isnan(y)
				    : atol || rtol
					? x == y || fabs(x - y) <=
							    atol + rtol * fabs(y)
					: x == y && signbit(x) == signbit(y);
			cr_assert(same,
				  "%s: output %d element %lld is %g, the "
				  "reference %g", n->op_type, k, (long long)i,
				  x, y);
		}
	}
	arena_release(&s.scratch);
	free(p.vt);
	free(p.cur);
	model_free(m);
}

/* ---- data movement ------------------------------------------------------ */

/* A Slice of x, small.c's kernel taking it if small. */
static void slice_check(int dt, Shape xs, const int64_t *starts,
			const int64_t *ends, const int64_t *axes,
			const int64_t *steps, int32_t k, bool small)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", dt, xs);
	ValId st = tu_weight_ints(g, "starts", starts, k);
	ValId en = tu_weight_ints(g, "ends", ends, k);
	ValId ax = axes ? tu_weight_ints(g, "axes", axes, k) : -1;
	ValId sp = steps ? tu_weight_ints(g, "steps", steps, k) : -1;
	Node *n = tu_node(g, "Slice", "s", IDS(x, st, en, ax, sp), 1);
	check_node(m, n, small, 0, 0);
}

static void slice_case(int dt, Shape xs, const int64_t *starts,
		       const int64_t *ends, const int64_t *axes,
		       const int64_t *steps, int32_t k)
{
	slice_check(dt, xs, starts, ends, axes, steps, k, true);
}

Test(small, slice_matches_reference)
{
	/* Silero VAD v5's weight slice: the first half of the rows */
	slice_case(DT_FLOAT, SHAPE(512, 128), L(256), L(512), L(0),
		   L(1), 1);
	/* the STFT's: a channel range of [1, 258, 4] */
	slice_case(DT_FLOAT, SHAPE(1, 258, 4), L(0), L(129), L(1),
		   NULL, 1);
	/* several axes, a negative step, ends clamped */
	slice_case(DT_FLOAT, SHAPE(4, 6, 5), L(-1, 1, INT64_MAX),
		   L(INT64_MIN, 100, 0), L(0, 1, 2), L(-2, 2, -1), 3);
	/* axes omitted, negative starts; int64 elements */
	slice_case(DT_INT64, SHAPE(3, 7), L(-2, 1), L(3, -1), NULL,
		   NULL, 2);
	/* an empty result: nothing to compute (fast.c's exec.empty) */
	slice_check(DT_FLOAT, SHAPE(3, 4), L(2), L(1), L(1), NULL, 1, false);
	/* PP-OCR rec's attention: q, k, v out of [3,...]; 3600 elements a
	 * slice, a run across the replay's blocks of 2048 */
	slice_case(DT_FLOAT, SHAPE(3, 2, 40, 45), L(1), L(2), L(0), NULL, 1);
	/* every dtype whose elements can hold element numbers, and those
	 * that cannot (a Slice's runs come from what it reads, not from
	 * numbering its input) */
	static const int dts[] = { DT_DOUBLE, DT_INT32,	  DT_UINT32,
				   DT_UINT64, DT_UINT8,	  DT_FLOAT16,
				   DT_BOOL,   DT_INT16 };
	for (size_t i = 0; i < sizeof(dts) / sizeof(*dts); i++)
		slice_case(dts[i], SHAPE(5, 6), L(1, 4), L(4, 0), L(0, 1),
			   L(1, -2), 2);
	/* rec's attention at 64 images: 1.2M elements a slice, more than
	 * replay numbers (MOVE_MAX); one run */
	slice_case(DT_FLOAT, SHAPE(3, 64, 8, 80, 30), L(2), L(3), L(0), NULL,
		   1);
	/* a row of 3 out of each of 2^18 rows: 2^18 runs */
	slice_case(DT_FLOAT, SHAPE(1 << 18, 5), L(1), L(4), L(1), NULL, 1);
}

Test(small, concat_matches_reference)
{
	static const int64_t axes[] = { 0, 1, -1 };
	for (int i = 0; i < 3; i++) {
		Model *m = tu_model(13);
		Graph *g = m->graph;
		float w[2 * 3 * 4];
		for (int j = 0; j < 24; j++)
			w[j] = (float)j;
		ValId a = tu_input(g, "a", DT_FLOAT, SHAPE(2, 3, 4));
		ValId b = tu_weight_data(g, "b", DT_FLOAT, SHAPE(2, 3, 4), w);
		ValId c = tu_input(g, "c", DT_FLOAT, SHAPE(2, 3, 4));
		Node *n = tu_node(g, "Concat", "c", IDS(a, b, c), 1);
		tu_int(g, n, "axis", axes[i]);
		check_node(m, n, true, 0, 0);
	}
}

static void pad_case(const char *mode, Shape xs, const int64_t *pads,
		     int32_t npads, bool value)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	float v = 2.5f;
	ValId x = tu_input(g, "x", DT_FLOAT, xs);
	ValId pd = tu_weight_ints(g, "pads", pads, npads);
	ValId cv = value ? tu_weight_data(g, "v", DT_FLOAT, SCALAR, &v) : -1;
	Node *n = tu_node(g, "Pad", "p", IDS(x, pd, cv), 1);
	if (mode)
		tu_str(g, n, "mode", mode);
	check_node(m, n, true, 0, 0);
}

Test(small, pad_matches_reference)
{
	/* the STFT's reflect padding of a 512-sample step by 64 */
	pad_case("reflect", SHAPE(1, 1, 512), L(0, 0, 64, 0, 0, 64), 6,
		 false);
	pad_case("reflect", SHAPE(4, 1, 512), L(0, 0, 0, 0, 0, 64), 6,
		 false);
	pad_case("edge", SHAPE(2, 3, 4), L(0, 1, 2, 1, 0, 3), 6, false);
	pad_case(NULL, SHAPE(2, 3, 4), L(1, 0, 2, 0, 2, 1), 6, true);
	pad_case("constant", SHAPE(2, 5), L(0, 3, 0, 2), 4, false);
	/* negative pads crop */
	pad_case(NULL, SHAPE(3, 6), L(-1, 2, 0, -3), 4, true);
}

Test(small, split_tile_expand_match_reference)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 7, 3));
	ValId sp = tu_weight_ints(g, "split", INTS(2, 5));
	Node *n = tu_node(g, "Split", "s", IDS(x, sp), 2);
	tu_int(g, n, "axis", 1);
	check_node(m, n, true, 0, 0);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3));
	ValId rep = tu_weight_ints(g, "repeats", INTS(3, 2));
	n = tu_node(g, "Tile", "t", IDS(x, rep), 1);
	check_node(m, n, true, 0, 0);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_INT64, SHAPE(3, 1));
	ValId sh = tu_weight_ints(g, "shape", INTS(2, 3, 4));
	n = tu_node(g, "Expand", "e", IDS(x, sh), 1);
	check_node(m, n, true, 0, 0);
}

Test(small, split_any_size_and_dtype)
{
	/* past the replay's MOVE_MAX (a YOLO CSP block's halves of
	 * [1,64,160,160]: the reference kernel ran them) */
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 64, 160, 160));
	ValId sp = tu_weight_ints(g, "split", INTS(32, 32));
	Node *n = tu_node(g, "Split", "s", IDS(x, sp), 2);
	tu_int(g, n, "axis", 1);
	check_node(m, n, true, 0, 0);
	/* uneven pieces on a negative axis, elements of 1, 2 and 8 bytes
	 * and bool; an empty piece */
	static const int dts[] = { DT_UINT8, DT_FLOAT16, DT_INT64, DT_BOOL };
	for (size_t d = 0; d < sizeof(dts) / sizeof(dts[0]); d++) {
		m = tu_model(13);
		g = m->graph;
		x = tu_input(g, "x", dts[d], SHAPE(3, 5, 7));
		sp = tu_weight_ints(g, "split", INTS(1, 4, 0, 2));
		n = tu_node(g, "Split", "s", IDS(x, sp), 4);
		tu_int(g, n, "axis", -1);
		check_node(m, n, true, 0, 0);
	}
	/* opset 18's num_outputs (3, 3, 2 of 8) and opset 11's attribute */
	m = tu_model(18);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 8, 3));
	n = tu_node(g, "Split", "s", IDS(x), 3);
	tu_int(g, n, "axis", 1);
	tu_int(g, n, "num_outputs", 3);
	check_node(m, n, true, 0, 0);
	m = tu_model(11);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(6, 2));
	n = tu_node(g, "Split", "s", IDS(x), 2);
	tu_ints(g, n, "split", INTS(5, 1));
	check_node(m, n, true, 0, 0);
}

Test(small, pad_and_concat_any_size_and_dtype)
{
	/* past the replay's MOVE_MAX: Swin-T's window padding at batch 2
	 * ([2,56,56,96], here padded on H and W) and its cyclic shift (a
	 * Concat of two slices along W) */
	pad_case(NULL, SHAPE(2, 56, 56, 96), L(0, 0, 1, 0, 0, 3, 2, 0), 8,
		 true);
	pad_case(NULL, SHAPE(2, 56, 56, 96), L(0, 0, 0, 0, 0, 0, 0, 0), 8,
		 false);
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId a = tu_input(g, "a", DT_FLOAT, SHAPE(2, 56, 3, 96));
	ValId b = tu_input(g, "b", DT_FLOAT, SHAPE(2, 56, 53, 96));
	Node *n = tu_node(g, "Concat", "c", IDS(a, b), 1);
	tu_int(g, n, "axis", 2);
	check_node(m, n, true, 0, 0);
	/* elements of 1, 2 and 8 bytes and bool, the first and the last
	 * axis (a node reading an empty tensor runs its reference kernel);
	 * a pad of the first axis alone */
	static const int dts[] = { DT_UINT8, DT_FLOAT16, DT_INT64, DT_BOOL };
	for (size_t d = 0; d < sizeof(dts) / sizeof(dts[0]); d++)
		for (int axis = -1; axis <= 0; axis++) {
			m = tu_model(13);
			g = m->graph;
			a = tu_input(g, "a", dts[d], SHAPE(3, 5, 7));
			b = tu_input(g, "b", dts[d],
				     axis ? SHAPE(3, 5, 1) : SHAPE(1, 5, 7));
			ValId c = tu_input(g, "c", dts[d],
					   axis ? SHAPE(3, 5, 2)
						: SHAPE(4, 5, 7));
			n = tu_node(g, "Concat", "c", IDS(a, b, c), 1);
			tu_int(g, n, "axis", axis);
			check_node(m, n, true, 0, 0);
			m = tu_model(13);
			g = m->graph;
			a = tu_input(g, "x", dts[d], SHAPE(3, 5, 7));
			ValId pd = tu_weight_ints(g, "pads",
						  L(2, 0, 0, 1, 0, 0), 6);
			n = tu_node(g, "Pad", "p", IDS(a, pd), 1);
			check_node(m, n, true, 0, 0);
		}
}

Test(small, move_leaves_what_it_cannot_replay)
{
	/* Slice ends from a graph input: not constant */
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(4, 4));
	ValId st = tu_weight_ints(g, "starts", INTS(1));
	ValId en = tu_input(g, "ends", DT_INT64, SHAPE(1));
	Node *n = tu_node(g, "Slice", "s", IDS(x, st, en), 1);
	g->vals[n->outputs[0]].shape = SHAPE(3, 4);
	gearrt_model md = { .m = m };
	RunCtx s = { .model = &md, .threads = 1 };
	Tensor vt[8] = { 0 }, out = { 0 }, *outs[1] = { &out };
	Prepared p = { .g = g, .vt = vt };
	Task t = { .n = n, .out = outs };
	cr_expect_eq(small_move(&s, &p, &t, &t.fast), 0);
	model_free(m);

	/* Pad before opset 11 with a fill value other than 0 */
	m = tu_model(10);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 2));
	n = tu_node(g, "Pad", "p", IDS(x), 1);
	tu_ints(g, n, "pads", INTS(1, 1, 1, 1));
	tu_float(g, n, "value", 1.5f);
	check_node(m, n, false, 0, 0);
}

/* ---- LSTM ----------------------------------------------------------------- */

typedef struct LstmCase {
	int64_t seq, batch, input, hidden;
	const char *direction; /* NULL: forward by default */
	bool bias, h0, c0, y, states;
	bool clip; /* a clip bound: not this path's */
	bool wbias; /* the bias a weight of the file, not a graph input */
} LstmCase;

static ValId random_weight(Graph *g, const char *name, Shape s, uint32_t seed)
{
	ValId v = tu_weight(g, name, DT_FLOAT, s);
	fill_random((Tensor *)g->vals[v].konst, seed);
	return v;
}

/* W and R divided by sqrt(H), as trained cells' are (uniform within
 * 1/sqrt(H)): random ones of [-1, 1) make a cell chaotic, its float
 * roundings growing without bound over many steps. */
static void trained_scale(Graph *g, ValId w, ValId r, int64_t H)
{
	for (int k = 0; k < 2; k++) {
		Tensor *t = (Tensor *)g->vals[k ? r : w].konst;
		float *f = tensor_mut(t);
		for (int64_t i = 0; i < shape_numel(&t->shape); i++)
			f[i] /= sqrtf((float)H);
	}
}

static void lstm_case(const LstmCase *lc, bool small)
{
	Model *m = tu_model(14);
	Graph *g = m->graph;
	int64_t D = lc->direction && !strcmp(lc->direction, "bidirectional")
			    ? 2 : 1, H = lc->hidden;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(lc->seq, lc->batch,
						  lc->input));
	ValId w = random_weight(g, "w", SHAPE(D, 4 * H, lc->input), 3);
	ValId r = random_weight(g, "r", SHAPE(D, 4 * H, H), 4);
	if (lc->seq > 16)
		trained_scale(g, w, r, H);
	ValId b = lc->wbias  ? random_weight(g, "b", SHAPE(D, 8 * H), 6)
		  : lc->bias ? tu_input(g, "b", DT_FLOAT, SHAPE(D, 8 * H))
			     : -1;
	ValId h0 = lc->h0 ? tu_input(g, "h0", DT_FLOAT,
				     SHAPE(D, lc->batch, H)) : -1;
	ValId c0 = lc->c0 ? random_weight(g, "c0", SHAPE(D, lc->batch, H), 5)
			  : -1;
	Node *n = tu_node(g, "LSTM", "l", IDS(x, w, r, b, -1, h0, c0), 3);
	tu_int(g, n, "hidden_size", H);
	if (lc->direction)
		tu_str(g, n, "direction", lc->direction);
	if (lc->clip)
		tu_float(g, n, "clip", 0.5f);
	if (!lc->y)
		tu_omit_out(g, n, 0);
	if (!lc->states) {
		tu_omit_out(g, n, 1);
		tu_omit_out(g, n, 2);
	}
	/* float32 sums in another order than the reference's compound
	 * through the steps (a cell's output feeds the next) */
	float grow = 1.0f + (float)lc->seq / 10;
	check_node(m, n, small, 1e-5f * grow, 1e-4f * grow);
}

Test(small, lstm_matches_reference)
{
	/* Silero VAD v5 (batch 1 and 4) and legacy */
	lstm_case(&(LstmCase){ 1, 1, 128, 128, NULL, 1, 1, 1, 1, 1, 0, 0 },
		  true);
	lstm_case(&(LstmCase){ 1, 4, 128, 128, NULL, 1, 1, 1, 1, 1, 0, 0 },
		  true);
	lstm_case(&(LstmCase){ 1, 1, 64, 64, NULL, 1, 1, 1, 1, 1, 0, 0 }, true);
	/* several steps, each direction; omitted inputs and outputs */
	lstm_case(&(LstmCase){ 5, 2, 7, 9, "reverse", 1, 0, 1, 1, 1, 0, 0 },
		  true);
	lstm_case(&(LstmCase){ 3, 2, 16, 20, "bidirectional", 1, 1, 1, 1, 1, 0,
				0 }, true);
	lstm_case(&(LstmCase){ 4, 3, 5, 6, "forward", 0, 0, 0, 1, 0, 0, 0 },
		  true);
	lstm_case(&(LstmCase){ 2, 1, 33, 17, NULL, 0, 1, 0, 1, 1, 0, 0 }, true);
}

Test(small, lstm_leaves_other_cells)
{
	/* clip, a hidden size past the limit, many steps */
	lstm_case(&(LstmCase){ 2, 1, 8, 8, NULL, 1, 1, 1, 1, 1, 1, 0 },
		  false);
	lstm_case(&(LstmCase){ 1, 1, 8, 300, NULL, 1, 1, 1, 1, 1, 0, 0 }, false);
	lstm_case(&(LstmCase){ 70, 1, 8, 8, NULL, 1, 1, 1, 1, 1, 0, 0 }, false);
}

Test(small, packed_lstm_matches_reference)
{
	/* constant weights, any steps, a batch of one: a speech model's
	 * layers (100 steps of 40 and of 256 inputs to 128), bidirectional
	 * with 4H not whole panels, reverse from given states, omitted
	 * outputs, Silero VAD's one step */
	lstm_kernel = small_lstm_packed;
	lstm_case(&(LstmCase){ 100, 1, 40, 128, NULL, 0, 0, 0, 1, 1, 0, 1 },
		  true);
	lstm_case(&(LstmCase){ 100, 1, 256, 128, NULL, 0, 0, 0, 1, 1, 0, 1 },
		  true);
	lstm_case(&(LstmCase){ 20, 1, 7, 20, "bidirectional", 0, 1, 1, 1, 1, 0,
				1 }, true);
	lstm_case(&(LstmCase){ 9, 1, 16, 12, "reverse", 0, 1, 1, 0, 1, 0, 1 },
		  true);
	lstm_case(&(LstmCase){ 5, 1, 8, 16, NULL, 0, 0, 0, 1, 0, 0, 0 }, true);
	lstm_case(&(LstmCase){ 1, 1, 128, 128, NULL, 0, 1, 1, 1, 1, 0, 1 },
		  true);
}

Test(small, packed_lstm_batches_match_reference)
{
	/* a batch of rows a step, below AVX-512 (there oneDNN's brgemm RNN
	 * keeps them): the torch recurrent model's 4 x 100 steps of 256 to
	 * 128, bidirectional from given states, reverse with omitted
	 * outputs, a batch of 2 and of RNN_MAX_BATCH */
	bool rows = cpu_isa() < CPU_LEVEL_AVX512;
	lstm_kernel = small_lstm_packed;
	lstm_case(&(LstmCase){ 100, 4, 256, 128, NULL, 0, 0, 0, 1, 1, 0, 1 },
		  rows);
	lstm_case(&(LstmCase){ 20, 3, 7, 20, "bidirectional", 0, 1, 1, 1, 1,
				0, 1 }, rows);
	lstm_case(&(LstmCase){ 9, 5, 16, 12, "reverse", 0, 1, 1, 0, 1, 0, 1 },
		  rows);
	lstm_case(&(LstmCase){ 4, 2, 8, 8, NULL, 0, 1, 1, 1, 1, 0, 1 }, rows);
	lstm_case(&(LstmCase){ 3, 64, 8, 8, NULL, 0, 1, 1, 1, 1, 0, 1 }, rows);
}

Test(small, packed_lstm_leaves_other_cells)
{
	/* a bias computed at run time, clip, a batch past RNN_MAX_BATCH */
	lstm_kernel = small_lstm_packed;
	lstm_case(&(LstmCase){ 4, 1, 8, 8, NULL, 1, 1, 1, 1, 1, 0, 0 }, false);
	lstm_case(&(LstmCase){ 4, 1, 8, 8, NULL, 0, 1, 1, 1, 1, 1, 1 }, false);
	lstm_case(&(LstmCase){ 2, 65, 8, 8, NULL, 0, 1, 1, 1, 1, 0, 1 }, false);
}

/* ---- GRU ------------------------------------------------------------------ */

typedef struct GruCase {
	int64_t seq, batch, input, hidden;
	const char *direction; /* NULL: forward by default */
	bool lbr, bias, h0, y, state;
} GruCase;

static void gru_case(const GruCase *gc, bool small)
{
	Model *m = tu_model(14);
	Graph *g = m->graph;
	int64_t D = gc->direction && !strcmp(gc->direction, "bidirectional")
			    ? 2 : 1, H = gc->hidden;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(gc->seq, gc->batch,
						  gc->input));
	ValId w = random_weight(g, "w", SHAPE(D, 3 * H, gc->input), 3);
	ValId r = random_weight(g, "r", SHAPE(D, 3 * H, H), 4);
	trained_scale(g, w, r, H);
	ValId b = gc->bias ? random_weight(g, "b", SHAPE(D, 6 * H), 6) : -1;
	ValId h0 = gc->h0 ? tu_input(g, "h0", DT_FLOAT,
				     SHAPE(D, gc->batch, H)) : -1;
	Node *n = tu_node(g, "GRU", "gru", IDS(x, w, r, b, -1, h0), 2);
	tu_int(g, n, "hidden_size", H);
	if (gc->direction)
		tu_str(g, n, "direction", gc->direction);
	if (gc->lbr)
		tu_int(g, n, "linear_before_reset", 1);
	if (!gc->y)
		tu_omit_out(g, n, 0);
	if (!gc->state)
		tu_omit_out(g, n, 1);
	float grow = 1.0f + (float)gc->seq / 10;
	check_node(m, n, small, 1e-5f * grow, 1e-4f * grow);
}

Test(small, packed_gru_matches_reference)
{
	/* torch's form (linear_before_reset 1): a speech model's
	 * bidirectional layer; ONNX's default form with 2H whole panels;
	 * reverse from a given state; 3H not whole panels; Y_h omitted, no
	 * bias (an omitted Y leaves every fast path:
	 * fast.c runs only nodes whose first output is planned) */
	gru_case(&(GruCase){ 100, 1, 40, 128, "bidirectional", 1, 1, 0, 1, 1 },
		 true);
	gru_case(&(GruCase){ 30, 1, 24, 64, NULL, 0, 1, 1, 1, 1 }, true);
	gru_case(&(GruCase){ 12, 1, 5, 24, "reverse", 1, 1, 1, 1, 0 }, true);
	gru_case(&(GruCase){ 7, 1, 9, 10, NULL, 1, 0, 0, 1, 0 }, true);
}

Test(small, packed_gru_batches_match_reference)
{
	/* below AVX-512, a batch of rows a step: the torch recurrent model's
	 * bidirectional layer (4 x 100 steps of 40 to 128, torch's
	 * linear_before_reset), the default form from a given state,
	 * reverse without a bias, a batch of RNN_MAX_BATCH */
	bool rows = cpu_isa() < CPU_LEVEL_AVX512;
	gru_case(&(GruCase){ 100, 4, 40, 128, "bidirectional", 1, 1, 0, 1, 1 },
		 rows);
	gru_case(&(GruCase){ 30, 3, 24, 64, NULL, 0, 1, 1, 1, 1 }, rows);
	gru_case(&(GruCase){ 12, 2, 5, 24, "reverse", 1, 0, 1, 1, 0 }, rows);
	gru_case(&(GruCase){ 3, 64, 8, 16, NULL, 0, 1, 1, 1, 1 }, rows);
}

Test(small, packed_gru_leaves_other_cells)
{
	/* the default form with 2H not whole panels of 16, a batch past
	 * RNN_MAX_BATCH */
	gru_case(&(GruCase){ 4, 1, 8, 12, NULL, 0, 1, 1, 1, 1 }, false);
	gru_case(&(GruCase){ 2, 65, 8, 16, NULL, 1, 1, 1, 1, 1 }, false);
}

/* ---- pools ---------------------------------------------------------------- */

/* A 2-D MaxPool or AveragePool of kernel k, stride st, no pads, on
 * row-major x holding NaN, -0, 0 and infinities: chanwise.c's kernel
 * (whole windows: a row at a time, vectorised) bit for bit as the
 * reference (each window's taps in order, NaN never taken over a
 * number, the first of equal values kept). */
static void pool_case(const char *op, Shape xs, int64_t kh, int64_t kw,
		      int64_t sh, int64_t sw)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, xs);
	Node *n = tu_node(g, op, "p", IDS(x), 1);
	int64_t ks[2] = { kh, kw }, st[2] = { sh, sw };
	tu_ints(g, n, "kernel_shape", ks, 2);
	tu_ints(g, n, "strides", st, 2);
	fill_specials = true;
	check_node(m, n, false, 0, 0);
	fill_specials = false;
}

Test(small, whole_window_pools_match_reference)
{
	pool_case("MaxPool", SHAPE(1, 16, 96, 96), 2, 2, 2, 2); /* U-Net */
	pool_case("MaxPool", SHAPE(2, 3, 9, 10), 3, 3, 2, 2);
	pool_case("MaxPool", SHAPE(1, 4, 7, 33), 3, 3, 1, 1);
	pool_case("MaxPool", SHAPE(1, 2, 8, 9), 2, 3, 2, 3);
	pool_case("AveragePool", SHAPE(1, 5, 10, 12), 2, 2, 2, 2);
	pool_case("AveragePool", SHAPE(1, 3, 9, 40), 3, 3, 3, 1);
}

/* ---- depthwise convolution --------------------------------------------- */

static void dw_case(Shape xs, int64_t k, int64_t stride, int64_t pad,
		    int64_t dil, bool bias, int64_t group)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	int32_t sr = xs.rank - 2;
	int64_t c = xs.dims[1], wd[4] = { c, c / group, k, k };
	int64_t ks[2] = { k, k }, st[2] = { stride, stride };
	int64_t dl[2] = { dil, dil }, pads[4] = { pad, pad, pad, pad };
	ValId x = tu_input(g, "x", DT_FLOAT, xs);
	ValId w = random_weight(g, "w", shape_of(2 + sr, wd), 6);
	ValId b = bias ? random_weight(g, "b", SHAPE(c), 7) : -1;
	Node *n = tu_node(g, "Conv", "c", IDS(x, w, b), 1);
	tu_int(g, n, "group", group);
	tu_ints(g, n, "kernel_shape", ks, sr);
	tu_ints(g, n, "strides", st, sr);
	tu_ints(g, n, "dilations", dl, sr);
	tu_ints(g, n, "pads", pads, 2 * sr);
	check_node(m, n, group == c && sr == 1, 1e-5f, 1e-4f);
}

Test(small, depthwise_conv_matches_reference)
{
	/* Silero VAD legacy's 258-channel 1-D filter, and smaller ones */
	dw_case(SHAPE(1, 258, 8), 5, 1, 2, 1, true, 258);
	dw_case(SHAPE(1, 16, 4), 5, 1, 2, 1, true, 16);
	dw_case(SHAPE(2, 6, 11), 3, 2, 1, 2, false, 6);
	dw_case(SHAPE(1, 4, 7, 7), 3, 1, 1, 1, true, 4);
	dw_case(SHAPE(2, 3, 9, 8), 5, 2, 2, 1, false, 3);
	/* 2-D, and two channels a group: oneDNN's */
	dw_case(SHAPE(1, 4, 9), 3, 1, 1, 1, true, 2);
}

/* ---- ReduceMean, ReduceSum ------------------------------------------------ */

/* axes: an attribute before opset 18 (ReduceSum: 13), an input since;
 * NULL: none (every axis). */
static void reduce_case(const char *op, int64_t opset, Shape xs,
			const int64_t *axes, int32_t naxes, int64_t keep,
			bool small)
{
	Model *m = tu_model(opset);
	Graph *g = m->graph;
	bool input = !strcmp(op, "ReduceSum") ? opset >= 13 : opset >= 18;
	ValId x = tu_input(g, "x", DT_FLOAT, xs);
	ValId a = axes && input ? tu_weight_ints(g, "axes", axes, naxes) : -1;
	Node *n = tu_node(g, op, "r", IDS(x, a), 1);
	if (axes && !input)
		tu_ints(g, n, "axes", axes, naxes);
	tu_int(g, n, "keepdims", keep);
	check_node(m, n, small, 1e-6f, 1e-6f);
}

Test(small, reduce_matches_reference)
{
	/* Silero VAD legacy's mean over the frequencies, and its last one */
	reduce_case("ReduceMean", 11, SHAPE(1, 129, 8), L(1), 1, 1, true);
	reduce_case("ReduceMean", 11, SHAPE(1, 2), L(1), 1, 0, true);
	/* several adjacent axes, negative ones, axes of one element
	 * between; every axis; the axes input */
	reduce_case("ReduceMean", 13, SHAPE(2, 3, 1, 4, 5), L(-2, 1), 2, 0,
		    true);
	reduce_case("ReduceSum", 11, SHAPE(3, 4), NULL, 0, 1, true);
	reduce_case("ReduceSum", 13, SHAPE(2, 5, 3), L(0), 1, 1, true);
	reduce_case("ReduceMean", 18, SHAPE(4, 6), L(-1), 1, 0, true);
	/* axes apart: the reference kernel's */
	reduce_case("ReduceSum", 13, SHAPE(2, 3, 4), L(0, 2), 2, 1, false);
}

/* ---- Log, Sqrt, Neg, Abs, Exp ---------------------------------------- */

Test(small, unary_matches_reference)
{
	static const char *ops[] = { "Log", "Sqrt", "Neg", "Abs", "Exp" };
	for (int i = 0; i < 5; i++) {
		Model *m = tu_model(13);
		Graph *g = m->graph;
		ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(3, 43));
		Node *n = tu_node(g, ops[i], ops[i], IDS(x), 1);
		/* Log and Sqrt of negative inputs: NaN on both sides */
		check_node(m, n, true, 1e-6f, 1e-6f);
	}
}

/* ---- views of graph inputs (runtime/exec.c) ------------------------------ */

typedef struct Feeds {
	size_t n;
	gearrt_tensor t[4];
} Feeds;

static Feeds feeds(const gearrt_model *m, uint32_t seed)
{
	Feeds f = { .n = gearrt_input_count(m) };
	cr_assert(f.n <= 4);
	for (size_t i = 0; i < f.n; i++) {
		cr_assert_eq(gearrt_input_info(m, i, &f.t[i]), GEARRT_OK);
		Tensor t = { .dtype = DT_FLOAT,
			     .shape = shape_of(f.t[i].rank, f.t[i].dims) };
		t.nbytes = (size_t)shape_numel(&t.shape) * sizeof(float);
		t.data = malloc(t.nbytes);
		fill_random(&t, seed + (uint32_t)i);
		f.t[i].data = (void *)t.data;
		f.t[i].size = t.nbytes;
	}
	return f;
}

/* Output 0 of a run of s on f, copied. */
static float *run_copy(gearrt_session *s, Feeds *f, size_t *n)
{
	gearrt_tensor out[4];
	memset(out, 0, sizeof(out));
	cr_assert_eq(gearrt_run(s, f->t, f->n, out, 3), GEARRT_OK, "%s",
		     gearrt_last_error());
	*n = out[0].size;
	return memcpy(malloc(*n), out[0].data, *n);
}

Test(small, views_of_inputs_follow_the_callers_buffers)
{
	/* the VAD fixture pinned to sr = 16000: Reshape, Identity and
	 * Unsqueeze of the input head the graph, their outputs not in the
	 * plan (the input's bytes are the caller's) */
	static const char *const flags[] = {
		"--input_shape=input:1,1024;sr:;h:2,1,64;c:2,1,64",
		"--input_value=sr:16000", NULL };
	char *dir = temp_dir(), *om = compile_fixture(dir, "vad", "vad", flags);
	gearrt_model *m;
	gearrt_session *s, *fresh;
	gearrt_options opt = { .threads = 1 };
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, &opt, &s), GEARRT_OK);
	cr_assert_eq(gearrt_session_create(m, &opt, &fresh), GEARRT_OK);
	Feeds a = feeds(m, 1), b = feeds(m, 2);
	size_t na, nb, nf;
	float *ya = run_copy(s, &a, &na);
	const Prepared *p = rt_session_ctx(s)->prep[0];
	int views = 0;
	for (int32_t i = 0; i < p->ntasks; i++) {
		cr_expect(!rt_evaluated(&p->tasks[i]), "node '%s' (%s) is evaluated",
			  p->tasks[i].n->name, p->tasks[i].n->op_type);
		views += op_info[p->tasks[i].n->op].view == VIEW_ALIAS;
	}
	cr_expect_geq(views, 3);
	/* other buffers, other contents: the views read them, not the
	 * first run's */
	float *yb = run_copy(s, &b, &nb), *yf = run_copy(fresh, &b, &nf);
	cr_assert_eq(nb, nf);
	cr_expect_eq(memcmp(yb, yf, nb), 0);
	cr_expect_neq(memcmp(ya, yb, na < nb ? na : nb), 0);
	for (size_t i = 0; i < a.n; i++) {
		free(a.t[i].data);
		free(b.t[i].data);
	}
	free(ya);
	free(yb);
	free(yf);
	gearrt_session_destroy(s);
	gearrt_session_destroy(fresh);
	gearrt_model_close(m);
	remove_tree(dir);
	free(dir);
	free(om);
}
