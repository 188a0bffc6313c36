/* tests/test_kernels_misc.c - kernels the backend tests leave uncovered:
 * the losses (loss.c), NonMaxSuppression (detect.c), DynamicQuantize-
 * Linear, TfIdfVectorizer, Cast to/from strings and bfloat16 (cast.c),
 * the random ops (random.c) and the sequence kernels at run time
 * (sequence.c), each by folding a small graph or by binding tensors as
 * the runtime does. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "compiler/ops.h"
#include "compiler/ops/opimpl.h"
#include "testutil.h"

#define FLTS(...) (const float[]){ __VA_ARGS__ }

static Node *node(Graph *g, const char *op, const ValId *ins, int32_t n,
		  int32_t nout)
{
	char name[64];
	snprintf(name, sizeof(name), "%s_%d", op, g->nnodes);
	return tu_node(g, op, name, ins, n, nout);
}

static const Tensor *folded(Graph *g, ValId v)
{
	const Tensor *t = g->vals[v].konst;
	cr_assert_not_null(t, "'%s' was not folded", g->vals[v].name);
	return t;
}

/* v is folded to want[0..n) within 1e-5, or 1e-3 for 16-bit floats. */
static void expect_floats(Graph *g, ValId v, const float *want, int n)
{
	const Tensor *t = folded(g, v);
	double eps = dtype_size(t->dtype) == 2 ? 1e-3 : 1e-5;
	cr_assert_eq(shape_numel(&t->shape), n);
	for (int i = 0; i < n; i++)
		cr_assert_float_eq(tensor_get_f64(t, i), want[i], eps,
				   "'%s'[%d] = %g, expected %g",
				   g->vals[v].name, i, tensor_get_f64(t, i),
				   want[i]);
}

static void expect_str(const Tensor *t, int i, const char *want)
{
	const Bytes *b = (const Bytes *)t->data + i;
	cr_assert(b->len == strlen(want) && !memcmp(b->data, want, b->len),
		  "element %d is '%.*s', expected '%s'", i, (int)b->len,
		  (const char *)b->data, want);
}

/* ---- losses ------------------------------------------------------------- */

/* x [2, 3] of log-probabilities, targets {2, 1}: weight 0.5 and 2. */
Test(kernels_misc, nll_loss_weighted_mean_and_ignore_index)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_weight_data(g, "x", DT_DOUBLE, SHAPE(2, 3),
				 (double[]){ -1, -2, -3, -4, -5, -6 });
	ValId t = tu_weight_ints(g, "t", INTS(2, 1));
	ValId w = tu_weight_data(g, "w", DT_DOUBLE, SHAPE(3),
				 (double[]){ 1, 2, 0.5 });
	Node *n = node(g, "NegativeLogLikelihoodLoss", IDS(x, t, w), 1);
	ValId mean = tu_out(n, 0);
	n = node(g, "NegativeLogLikelihoodLoss", IDS(x, t, w), 1);
	tu_int(g, n, "ignore_index", 1);
	tu_str(g, n, "reduction", "sum");
	ValId sum = tu_out(n, 0);
	infer_ok(m);
	/* (0.5 * 3 + 2 * 5) / (0.5 + 2) */
	expect_floats(g, mean, FLTS(11.5 / 2.5), 1);
	cr_assert_eq(folded(g, mean)->dtype, DT_DOUBLE);
	expect_floats(g, sum, FLTS(1.5), 1);
	model_free(m);
}

Test(kernels_misc, nll_loss_target_out_of_range)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_weight_data(g, "x", DT_FLOAT, SHAPE(1, 2),
				 FLTS(-1, -2));
	ValId t = tu_weight_ints(g, "t", INTS(2));
	node(g, "NegativeLogLikelihoodLoss", IDS(x, t), 1);
	infer_fails_with(m, "target 2 at position 0 is not a class in 0..1");
	model_free(m);
}

/* Equal scores: log_prob is -log 2, the loss its negation. */
Test(kernels_misc, sce_float16_log_prob)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	uint16_t h[4] = { 0x3c00, 0x3c00, 0x4000, 0x4000 }; /* 1 1 2 2 */
	ValId x = tu_weight_data(g, "x", DT_FLOAT16, SHAPE(2, 2), h);
	ValId t = tu_weight_ints(g, "t", INTS(0, 1));
	Node *n = node(g, "SoftmaxCrossEntropyLoss", IDS(x, t), 2);
	tu_str(g, n, "reduction", "none");
	ValId y = tu_out(n, 0), lp = tu_out(n, 1);
	infer_ok(m);
	float l2 = (float)log(2.0);
	expect_floats(g, y, FLTS(l2, l2), 2);
	expect_floats(g, lp, FLTS(-l2, -l2, -l2, -l2), 4);
	cr_assert_eq(folded(g, lp)->dtype, DT_FLOAT16);
	model_free(m);
}

/* ---- NonMaxSuppression -------------------------------------------------- */

/* Center-format boxes: 0 and 1 overlap (IOU 0.6), 2 is apart, 3 scores
 * under the threshold.  Constant inputs give an exact row count, others
 * a data-dependent one. */
Test(kernels_misc, nms_center_boxes_exact_rows)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	ValId b = tu_weight_data(g, "b", DT_FLOAT, SHAPE(1, 4, 4),
				 FLTS(0, 0, 2, 2, 0.5f, 0, 2, 2, 10, 10, 2, 2,
				      20, 20, 2, 2));
	ValId s = tu_weight_data(g, "s", DT_FLOAT, SHAPE(1, 1, 4),
				 FLTS(0.8f, 0.9f, 0.7f, 0.1f));
	ValId mx = tu_weight_ints(g, "mx", INTS(10));
	ValId iou = tu_weight_data(g, "iou", DT_FLOAT, SHAPE(1), FLTS(0.5f));
	ValId th = tu_weight_data(g, "th", DT_FLOAT, SHAPE(1), FLTS(0.2f));
	Node *n = node(g, "NonMaxSuppression", IDS(b, s, mx, iou, th), 1);
	tu_int(g, n, "center_point_box", 1);
	ValId y = tu_out(n, 0);
	ValId bx = tu_input(g, "bx", DT_FLOAT, SHAPE(1, 4, 4));
	ValId dep = tu_out(node(g, "NonMaxSuppression", IDS(bx, s), 1), 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[2,3]");
	cr_assert_eq(g->vals[y].flags & VF_DATA_DEP, 0);
	/* boxes not constant: the row count depends on them */
	cr_assert_str_eq(tu_shape(g, dep), "[-1,3]");
	cr_assert_neq(g->vals[dep].flags & VF_DATA_DEP, 0);
	const int64_t *r = folded(g, y)->data;
	int64_t want[] = { 0, 0, 1, 0, 0, 2 };
	for (int i = 0; i < 6; i++)
		cr_assert_eq(r[i], want[i], "row value %d is %lld", i,
			     (long long)r[i]);
	model_free(m);
}

/* ---- DynamicQuantizeLinear, TfIdfVectorizer ----------------------------- */

Test(kernels_misc, dynamic_quantize_all_zero)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	ValId x = tu_weight_data(g, "x", DT_FLOAT, SHAPE(3), FLTS(0, 0, 0));
	Node *n = node(g, "DynamicQuantizeLinear", IDS(x), 3);
	ValId y = tu_out(n, 0), sc = tu_out(n, 1), zp = tu_out(n, 2);
	infer_ok(m);
	const uint8_t *q = folded(g, y)->data;
	cr_assert(q[0] == 0 && q[1] == 0 && q[2] == 0);
	expect_floats(g, sc, FLTS(0), 1);
	cr_assert_eq(*(const uint8_t *)folded(g, zp)->data, 0);
	model_free(m);
}

/* Strings, TFIDF with weights: unigrams "a" (weight 2) and "b", the
 * bigram "a b" (weight 3) skipping at most one token. */
Test(kernels_misc, tfidf_strings_weighted_with_skips)
{
	Model *m = tu_model(9);
	Graph *g = m->graph;
	static const char *words[] = { "a", "c", "b", "a", "b" };
	Bytes w[5];
	for (int i = 0; i < 5; i++)
		w[i] = (Bytes){ strlen(words[i]), (const uint8_t *)words[i] };
	ValId x = tu_weight_data(g, "x", DT_STRING, SHAPE(5), w);
	Node *n = node(g, "TfIdfVectorizer", IDS(x), 1);
	Attr *p = node_add_attr(g, n, "pool_strings", ATTR_STRINGS);
	static const Bytes pool[] = { { 1, (const uint8_t *)"a" },
				      { 1, (const uint8_t *)"b" },
				      { 1, (const uint8_t *)"a" },
				      { 1, (const uint8_t *)"b" } };
	p->n = 4;
	p->strings = pool;
	tu_ints(g, n, "ngram_counts", INTS(0, 2));
	tu_ints(g, n, "ngram_indexes", INTS(0, 1, 2));
	tu_floats(g, n, "weights", FLTS(2, 1, 3), 3);
	tu_int(g, n, "min_gram_length", 1);
	tu_int(g, n, "max_gram_length", 2);
	tu_int(g, n, "max_skip_count", 1);
	tu_str(g, n, "mode", "TFIDF");
	ValId y = tu_out(n, 0);
	infer_ok(m);
	/* "a b" at 0-2 (one skip) and 3-4 (none): 2 counts */
	expect_floats(g, y, FLTS(2 * 2, 1 * 2, 3 * 2), 3);
	model_free(m);
}

/* ---- Cast ----------------------------------------------------------------- */

Test(kernels_misc, cast_to_string_as_numpy)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId f = tu_weight_data(g, "f", DT_FLOAT, SHAPE(7),
				 FLTS(1e-5f, 123456789.0f, -0.0f, NAN,
				      -INFINITY, 0.1f, 1e16f));
	Node *n = node(g, "Cast", IDS(f), 1);
	tu_int(g, n, "to", DT_STRING);
	ValId s = tu_out(n, 0);
	ValId i = tu_weight_ints(g, "i", INTS(-42));
	n = node(g, "Cast", IDS(i), 1);
	tu_int(g, n, "to", DT_STRING);
	ValId si = tu_out(n, 0);
	infer_ok(m);
	const Tensor *t = folded(g, s);
	static const char *want[] = { "1e-05",	"123456790.0", "-0.0", "nan",
				      "-inf",	"0.1",	       "1e+16" };
	for (int k = 0; k < 7; k++)
		expect_str(t, k, want[k]);
	expect_str(folded(g, si), 0, "-42");
	model_free(m);
}

Test(kernels_misc, cast_from_string_and_bad_number)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	Bytes w[3] = { { 4, (const uint8_t *)" -7 " },
		       { 3, (const uint8_t *)"+12" },
		       { 1, (const uint8_t *)"0" } };
	ValId x = tu_weight_data(g, "x", DT_STRING, SHAPE(3), w);
	Node *n = node(g, "Cast", IDS(x), 1);
	tu_int(g, n, "to", DT_INT64);
	ValId y = tu_out(n, 0);
	infer_ok(m);
	const int64_t *v = folded(g, y)->data;
	cr_assert(v[0] == -7 && v[1] == 12 && v[2] == 0);
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	Bytes bad[1] = { { 4, (const uint8_t *)"0x10" } };
	x = tu_weight_data(g, "x", DT_STRING, SHAPE(1), bad);
	n = node(g, "Cast", IDS(x), 1);
	tu_int(g, n, "to", DT_FLOAT);
	infer_fails_with(m, "element 0 ('0x10') is not a number");
	model_free(m);
}

/* Truncation keeps the top 16 bits; a NaN stays a quiet NaN. */
Test(kernels_misc, cast_float_to_bfloat16_truncates)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	uint32_t nan_bits = 0x7f800001; /* a NaN whose top half reads inf */
	float fnan;
	memcpy(&fnan, &nan_bits, sizeof(fnan));
	ValId f = tu_weight_data(g, "f", DT_FLOAT, SHAPE(2),
				 FLTS(0.48033667f, fnan));
	Node *n = node(g, "Cast", IDS(f), 1);
	tu_int(g, n, "to", DT_BFLOAT16);
	ValId y = tu_out(n, 0);
	infer_ok(m);
	const uint16_t *p = folded(g, y)->data;
	cr_assert_eq(p[0], 0x3ef5); /* round-to-nearest would give 0x3ef6 */
	cr_assert_eq(p[1], 0x7fc0);
	model_free(m);
}

/* ---- random ops ------------------------------------------------------------ */

Test(kernels_misc, random_seeded_folds_unseeded_does_not)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId y[3];
	for (int i = 0; i < 3; i++) {
		Node *n = node(g, "RandomUniform", NULL, 0, 1);
		tu_ints(g, n, "shape", INTS(4, 8));
		tu_float(g, n, "low", 2);
		tu_float(g, n, "high", 3);
		if (i < 2)
			tu_float(g, n, "seed", 7);
		y[i] = tu_out(n, 0);
	}
	infer_ok(m);
	const float *a = folded(g, y[0])->data, *b = folded(g, y[1])->data;
	cr_assert_eq(memcmp(a, b, 32 * sizeof(float)), 0);
	for (int i = 0; i < 32; i++)
		cr_assert(a[i] >= 2 && a[i] < 3, "%g", a[i]);
	cr_assert(a[0] != a[1]);
	cr_assert_null(g->vals[y[2]].konst);
	model_free(m);
}

Test(kernels_misc, multinomial_and_bernoulli_draw_valid_values)
{
	Model *m = tu_model(15);
	Graph *g = m->graph;
	/* class 1 has probability 0; class 2 nearly all */
	ValId x = tu_weight_data(g, "x", DT_FLOAT, SHAPE(1, 3),
				 FLTS(0, -INFINITY, 6));
	Node *n = node(g, "Multinomial", IDS(x), 1);
	tu_int(g, n, "sample_size", 50);
	tu_int(g, n, "dtype", DT_INT64);
	tu_float(g, n, "seed", 1);
	ValId y = tu_out(n, 0);
	ValId p = tu_weight_data(g, "p", DT_FLOAT, SHAPE(4), FLTS(0, 1, 0, 1));
	n = node(g, "Bernoulli", IDS(p), 1);
	tu_float(g, n, "seed", 3);
	tu_int(g, n, "dtype", DT_BOOL);
	ValId bern = tu_out(n, 0);
	infer_ok(m);
	const int64_t *v = folded(g, y)->data;
	int twos = 0;
	for (int i = 0; i < 50; i++) {
		cr_assert(v[i] == 0 || v[i] == 2, "drew class %lld",
			  (long long)v[i]);
		twos += v[i] == 2;
	}
	cr_assert_gt(twos, 40);
	const uint8_t *bv = folded(g, bern)->data;
	cr_assert(!bv[0] && bv[1] && !bv[2] && bv[3]);
	model_free(m);
}

/* ---- sequences at run time ------------------------------------------------- */

/* Runs node n's kernel on bound tensors, as the runtime does. */
static void run_bound(Model *m, Graph *g, const Node *n, Arena *scratch,
		      const Tensor **in, Tensor **out)
{
	uint8_t set[4] = { 0 };
	OpBind b = { .in = in, .out = out, .set = set };
	OpCtx c = { .model = m, .g = g, .n = (Node *)n, .opset = 13,
		    .bind = &b, .arena = scratch };
	clear_error();
	cr_assert_eq(op_info[n->op].run(&c), 0, "%s: %s", n->op_type,
		     last_error());
	cr_assert(set[0], "%s set no output", n->op_type);
}

/* SplitToSequence -> SequenceInsert at the front -> SequenceErase of
 * the last -> ConcatFromSequence, on run-time sequence tensors. */
Test(kernels_misc, sequence_kernels_at_run_time)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(3, 2));
	ValId e = tu_input(g, "e", DT_FLOAT, SHAPE(1, 2));
	ValId pos = tu_weight_ints(g, "pos", INTS(0));
	Node *split = node(g, "SplitToSequence", IDS(x), 1);
	ValId s1 = tu_out(split, 0);
	ValId s2 = tu_out(node(g, "SequenceInsert", IDS(s1, e, pos), 1), 0);
	ValId s3 = tu_out(node(g, "SequenceErase", IDS(s2), 1), 0);
	Node *cat = node(g, "ConcatFromSequence", IDS(s3), 1);
	tu_int(g, cat, "axis", 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, tu_out(cat, 0)), "[3,2]");

	Arena scratch;
	arena_init(&scratch);
	const float xv[] = { 1, 2, 3, 4, 5, 6 }, ev[] = { 9, 8 };
	Tensor *tx = tensor_new(&scratch, NULL, DT_FLOAT, &g->vals[x].shape, xv);
	Tensor *te = tensor_new(&scratch, NULL, DT_FLOAT, &g->vals[e].shape, ev);
	const Tensor *tpos = g->vals[pos].konst;
	Tensor q1 = { 0 }, q2 = { 0 }, q3 = { 0 };
	Tensor *y = tensor_new(&scratch, NULL, DT_FLOAT,
			       &g->vals[tu_out(cat, 0)].shape, NULL);
	run_bound(m, g, &g->nodes[0], &scratch, (const Tensor *[]){ tx },
		  (Tensor *[]){ &q1 });
	cr_assert_eq(q1.shape.dims[0], 3);
	run_bound(m, g, &g->nodes[1], &scratch,
		  (const Tensor *[]){ &q1, te, tpos }, (Tensor *[]){ &q2 });
	cr_assert_eq(q2.shape.dims[0], 4);
	run_bound(m, g, &g->nodes[2], &scratch, (const Tensor *[]){ &q2 },
		  (Tensor *[]){ &q3 });
	cr_assert_eq(q3.shape.dims[0], 3);
	run_bound(m, g, &g->nodes[3], &scratch, (const Tensor *[]){ &q3 },
		  (Tensor *[]){ y });
	const float want[] = { 9, 8, 1, 2, 3, 4 };
	cr_assert_eq(memcmp(y->data, want, sizeof(want)), 0);
	arena_release(&scratch);
	model_free(m);
}
