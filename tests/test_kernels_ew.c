/* tests/test_kernels_ew.c - the float32 fast paths of the elementwise
 * kernels (compiler/ops/ewfast.c) against the exact engine: each node is
 * folded and then run as the runtime runs it, with bound output buffers
 * full of garbage, or aliased to input 0 (in place), and both results
 * are compared with the exact engine's on the inputs widened to float64
 * (which the fast paths do not take), rounded to float32 once as the
 * engine rounds a float32 result.  Both must give the same bits (NaN
 * matching NaN), the run writing straight into the bound buffer (no
 * scratch allocation, which the exact engine needs), on every broadcast
 * pattern and on NaN, inf, denormals and negative zero. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "compiler/ops/opimpl.h"
#include "testutil.h"

enum { NV = 24 };

/* Edge values first, then ordinary ones. */
static float edge(int i)
{
	static const float v[] = { 0.0f,     -0.0f,	 NAN,	   -NAN,
				   INFINITY, -INFINITY,	 1e-40f,   -1e-40f,
				   FLT_MIN,  -3.0f,	 3.0f,	   0.5f,
				   -0.5f,    2.0f,	 -2.5f,	   1e30f,
				   -1e30f,   7.25f,	 -0.125f,  1.0f,
				   -1.0f,    100.0f,	 0.333f,   -6.0f };
	return v[i % NV];
}

static ValId floats(Graph *g, const char *name, Shape s, int shift)
{
	int64_t n = shape_numel(&s);
	float *v = arena_alloc(g->arena, (size_t)n * sizeof(float) + 1);
	for (int64_t i = 0; i < n; i++)
		v[i] = edge((int)(i * 7 + shift));
	return tu_weight_data(g, name, DT_FLOAT, s, v);
}

static bool same_elem(const Tensor *a, const Tensor *b, int64_t i)
{
	if (a->dtype == DT_FLOAT) {
		float x = ((const float *)a->data)[i];
		float y = ((const float *)b->data)[i];
		if (isnan(x) || isnan(y))
			return isnan(x) && isnan(y);
		return !memcmp(&x, &y, sizeof(x));
	}
	size_t sz = dtype_size(a->dtype);
	return !memcmp((const char *)a->data + i * sz,
		       (const char *)b->data + i * sz, sz);
}

/* The exact engine's output for node n of m: n's op folded on its
 * inputs widened to float64, rounded to n's output dtype. */
static Tensor *exact(const Model *m, const Node *n, Arena *a)
{
	Model *d = tu_model(m->opsets[0].version);
	Graph *g = d->graph;
	ValId ids[4] = { -1, -1, -1, -1 };
	cr_assert(n->ninputs <= 4);
	for (int32_t k = 0; k < n->ninputs; k++) {
		if (n->inputs[k] < 0)
			continue;
		const Tensor *t = m->graph->vals[n->inputs[k]].konst;
		int64_t cnt = shape_numel(&t->shape);
		double *v = arena_alloc(g->arena, (size_t)cnt * 8 + 1);
		for (int64_t i = 0; i < cnt; i++)
			v[i] = tensor_get_f64(t, i);
		ids[k] = tu_weight_data(g, t->name ? t->name : "in", DT_DOUBLE,
					t->shape, v);
	}
	Node *e = tu_node(g, n->op_type, "e", ids, n->ninputs, 1);
	e->attrs = n->attrs;
	e->nattrs = n->nattrs;
	infer_ok(d);
	const Tensor *r = g->vals[e->outputs[0]].konst;
	cr_assert_not_null(r, "%s of float64 was not folded", n->op_type);
	int dt = m->graph->vals[n->outputs[0]].dtype;
	Tensor *w = tensor_new(a, NULL, dt, &r->shape, NULL);
	for (int64_t i = 0; i < shape_numel(&r->shape); i++)
		if (dt == DT_FLOAT)
			((float *)tensor_mut(w))[i] =
				(float)((const double *)r->data)[i];
		else
			tensor_set_i64(w, i, tensor_get_i64(r, i));
	model_free(d);
	return w;
}

static void expect_same(const Tensor *got, const Tensor *want,
			const Node *n, const char *how)
{
	cr_assert(shape_equal(&got->shape, &want->shape) &&
		  got->dtype == want->dtype);
	for (int64_t i = 0; i < shape_numel(&want->shape); i++)
		cr_assert(same_elem(got, want, i),
			  "%s %s: element %lld is %g, the exact engine's %g",
			  n->op_type, how, (long long)i,
			  tensor_get_f64(got, i), tensor_get_f64(want, i));
}

/* Runs n as the runtime does; in_place binds the output to a copy of
 * input 0, which also serves as that input. */
static void run_vs_fold(Model *m, Node *n, bool in_place)
{
	Graph *g = m->graph;
	const Tensor *folded = g->vals[n->outputs[0]].konst;
	cr_assert_not_null(folded, "%s was not folded", n->op_type);
	Arena bufs = { 0 }, scratch = { 0 };
	const Tensor *want = exact(m, n, &bufs);
	expect_same(folded, want, n, "folded");
	const Tensor *in[4] = { 0 };
	for (int32_t k = 0; k < n->ninputs; k++)
		in[k] = n->inputs[k] >= 0 ? g->vals[n->inputs[k]].konst : NULL;
	Tensor *out = tensor_new(&bufs, NULL, want->dtype, &want->shape,
				 NULL);
	cr_assert_not_null(out);
	if (in_place) {
		cr_assert(shape_equal(&in[0]->shape, &want->shape) &&
			  in[0]->dtype == want->dtype);
		Tensor *x = tensor_new(&bufs, NULL, in[0]->dtype,
				       &in[0]->shape, in[0]->data);
		out->data = x->data;
		in[0] = x;
	} else {
		memset(tensor_mut(out), 0xA5, out->nbytes);
	}
	size_t used = scratch.used;
	uint8_t set[2] = { 0 };
	Tensor *outs[1] = { out };
	OpBind b = { .in = in, .out = outs, .set = set };
	OpCtx c = { .model = m, .g = g, .n = n, .opset = m->opsets[0].version,
		    .fold_limit = INT64_MAX, .bind = &b, .arena = &scratch };
	cr_assert_eq(op_info[n->op].run(&c), 0, "%s: %s", n->op_type,
		     last_error());
	cr_assert(set[0], "%s set no output", n->op_type);
	cr_assert_eq(scratch.used, used, "%s did not take the fast path",
		     n->op_type);
	expect_same(out, want, n, in_place ? "run in place" : "run");
	arena_release(&scratch);
	arena_release(&bufs);
}

static void check_binary(const char *op, Shape sa, Shape sb)
{
	for (int ip = 0; ip < 2; ip++) {
		Model *m = tu_model(17);
		Graph *g = m->graph;
		ValId a = floats(g, "a", sa, 0), b = floats(g, "b", sb, 5);
		Node *n = tu_node(g, op, "n", IDS(a, b), 1);
		infer_ok(m);
		const Value *y = &g->vals[n->outputs[0]];
		bool can = y->dtype == DT_FLOAT &&
			   shape_equal(&y->shape, &sa);
		if (!ip || can)
			run_vs_fold(m, n, ip);
		model_free(m);
	}
}

static const char *const binary_ops[] = {
	"Add",	 "Sub",	    "Mul",	      "Div",  "Max",	     "Min",
	"Pow",	 "Equal",   "Greater",	      "Less", "GreaterOrEqual",
	"LessOrEqual", "Sum",
};

static void check_all_binary(Shape sa, Shape sb)
{
	for (size_t i = 0; i < ARRAY_SIZE(binary_ops); i++) {
		check_binary(binary_ops[i], sa, sb);
		check_binary(binary_ops[i], sb, sa);
	}
}

Test(kernels_ew, binary_same_shape)
{
	check_all_binary(SHAPE(2, 3, 4), SHAPE(2, 3, 4));
}

Test(kernels_ew, binary_scalar)
{
	check_all_binary(SHAPE(2, 3, 4), SHAPE(1));
	check_all_binary(SHAPE(5), shape_of(0, NULL));
}

Test(kernels_ew, binary_last_axis)
{
	check_all_binary(SHAPE(2, 3, 4), SHAPE(4));
}

Test(kernels_ew, binary_channel)
{
	check_all_binary(SHAPE(2, 3, 2, 2), SHAPE(1, 3, 1, 1));
	check_all_binary(SHAPE(2, 3, 2, 2), SHAPE(3, 1, 1));
}

Test(kernels_ew, binary_general_strided)
{
	check_all_binary(SHAPE(2, 1, 4), SHAPE(3, 1));
	check_all_binary(SHAPE(2, 3, 1, 5), SHAPE(1, 3, 4, 1));
}

static void check_unary(const char *op, float alpha, float beta)
{
	for (int ip = 0; ip < 2; ip++) {
		Model *m = tu_model(17);
		Graph *g = m->graph;
		ValId x = floats(g, "x", SHAPE(3, 16), 0);
		Node *n = tu_node(g, op, "n", IDS(x), 1);
		if (alpha == alpha)
			tu_float(g, n, "alpha", alpha);
		if (beta == beta)
			tu_float(g, n, "beta", beta);
		infer_ok(m);
		run_vs_fold(m, n, ip);
		model_free(m);
	}
}

Test(kernels_ew, unary)
{
	static const char *const ops[] = {
		"Relu", "Neg",	"Abs",	"Sqrt", "Sigmoid", "Tanh",
		"Erf",	"Exp",	"Log",	"Ceil", "Floor",   "Reciprocal",
		"Softplus", "Softsign", "HardSwish", "Elu",
	};
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
		check_unary(ops[i], NAN, NAN);
	check_unary("LeakyRelu", 0.1f, NAN);
	check_unary("HardSigmoid", NAN, NAN);
	check_unary("HardSigmoid", 1.0f / 6, 0.5f);
}

Test(kernels_ew, clip)
{
	for (int ip = 0; ip < 2; ip++) {
		Model *m = tu_model(13);
		Graph *g = m->graph;
		ValId x = floats(g, "x", SHAPE(48), 0);
		ValId lo = floats(g, "lo", shape_of(0, NULL), 20);
		ValId hi = floats(g, "hi", shape_of(0, NULL), 10);
		Node *n = tu_node(g, "Clip", "n", IDS(x, lo, hi), 1);
		infer_ok(m);
		run_vs_fold(m, n, ip);
		Node *o = tu_node(g, "Clip", "o", IDS(x, -1, lo), 1);
		infer_ok(m);
		run_vs_fold(m, o, ip);
		model_free(m);
	}
}
