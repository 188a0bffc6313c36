/* tests/test_op_table.c - the op table's columns (compiler/ops.h) agree
 * with each other and with the hooks they describe: the unary math ops
 * have their kernel, in-place ops keep a shape, shape rules match what
 * inference computes, and every op the memory plan may run in place
 * gives, run in place on each input it may overwrite, the bits it gives
 * folded. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "compiler/ops/opimpl.h"
#include "passes/memplan.h"
#include "testutil.h"

/* Columns that imply one another. */
Test(op_table, columns_agree)
{
	for (int op = 1; op < OP_COUNT; op++) {
		const OpInfo *o = &op_info[op];
		bool unary_hooks = o->infer == infer_unary || o->run == run_unary;
		cr_expect_eq(unary_hooks, o->ew == EW_KIND_UNARY,
			     "%s: infer_unary/run_unary iff an EW_MATH, EW_FLOAT "
			     "or EW_EXACT kernel", o->name);
		cr_expect_eq(o->ew_dts != 0, o->ew == EW_KIND_UNARY,
			     "%s: dtypes iff unary", o->name);
		if (o->ew == EW_KIND_UNARY)
			cr_expect(o->shape == SHAPE_SAME &&
					  o->inplace == INPLACE_IN0 &&
					  (o->ew_dts & ~DTS_NUMERIC) == 0,
				  "%s: a unary op keeps input 0's shape and "
				  "may overwrite it", o->name);
		if (o->ew == EW_KIND_BINARY)
			cr_expect(o->shape == SHAPE_BCAST,
				  "%s: a binary op broadcasts", o->name);
		if (o->run == run_arith || o->run == run_logic2)
			cr_expect_eq(o->ew, EW_KIND_BINARY,
				     "%s: run_arith/run_logic2 need an EW_ARITH "
				     "or EW_LOGIC kernel", o->name);
		if (o->inplace != INPLACE_NONE)
			cr_expect(o->shape != SHAPE_OWN && o->view == VIEW_NONE,
				  "%s: in place needs an output shaped like "
				  "its inputs, and no view", o->name);
		if (o->inplace == INPLACE_DATA)
			cr_expect(o->shape == SHAPE_SAME,
				  "%s: overwrites its data, which the output "
				  "is shaped like", o->name);
		if (o->inplace == INPLACE_IN0)
			cr_expect(o->shape == SHAPE_SAME || op == OP_PRelu,
				  "%s: overwrites input 0 only, which the "
				  "output is shaped like", o->name);
		if (o->view == VIEW_ALIAS)
			cr_expect(o->run && o->inplace == INPLACE_NONE,
				  "%s: a view", o->name);
	}
}

/* A tensor of dtype dt and shape s with small values valid for any op
 * (positive, so divisors are not zero and shifts are small). */
static ValId operand(Graph *g, const char *name, int dt, Shape s, int seed)
{
	int64_t n = shape_numel(&s);
	Tensor *t = (Tensor *)tensor_new(g->arena, name, dt, &s, NULL);
	for (int64_t i = 0; i < n; i++) {
		int64_t k = (i * 5 + seed) % 7;
		if (dt == DT_BOOL)
			tensor_set_i64(t, i, k & 1);
		else if (DTS(dt) & DTS_FLOAT)
			tensor_set_f64(t, i, 0.375 * (double)k - 0.75);
		else
			tensor_set_i64(t, i, 1 + k % 3);
	}
	ValId id = graph_add_value(g, name, VAL_WEIGHT);
	g->vals[id].dtype = dt;
	g->vals[id].shape = s;
	g->vals[id].konst = t;
	return id;
}

/* Inputs an in-place op takes: Where and the Scatters 3 (a bool
 * condition; indices and updates), a broadcasting op 2, others 1. */
static int arity(int op)
{
	return op_info[op].inplace == INPLACE_IN12 ||
			       op_info[op].inplace == INPLACE_DATA
		       ? 3
	       : op_info[op].shape == SHAPE_BCAST ? 2
						  : 1;
}

/* op on [2,3] operands of dtype dt, folded; NULL if inference rejects
 * the dtype or nothing was folded. */
static Node *folded_node(Model *m, int op, int dt)
{
	Graph *g = m->graph;
	ValId in[3];
	Shape s = SHAPE(2, 3);
	for (int k = 0; k < arity(op); k++) {
		char name[8] = { 'x', (char)('0' + k), 0 };
		int kdt = op == OP_Where && k == 0 ? DT_BOOL : dt;
		in[k] = operand(g, name, kdt, s, k);
	}
	if (op_info[op].inplace == INPLACE_DATA) { /* indices into [2,3] */
		bool nd = op == OP_ScatterND;
		static const int64_t rows[] = { 1, 0 },
				     elems[] = { 1, 0, 1, 0, 1, -2 };
		in[1] = tu_weight_data(g, "i", DT_INT64,
				       nd ? SHAPE(2, 1) : s, nd ? rows : elems);
	}
	Node *n = tu_node(g, op_info[op].name, "n", in, arity(op), 1);
	if (op == OP_BitShift) /* its one required attribute */
		tu_str(g, n, "direction", "LEFT");
	if (domain_is_ms(op_info[op].domain)) { /* ONNX Runtime's */
		n->domain = MS_DOMAIN;
		n->op = (uint16_t)op;
	}
	if (op == OP_FusedActivation) { /* gearc's, of one activation */
		static const float par[2] = { 0, 0 };
		static const Bytes silu = { 4, (const uint8_t *)"Silu" };
		Attr *a = node_add_attr(g, n, FUSED_ACTS_ATTR, ATTR_STRINGS);
		a->n = 1;
		a->strings = &silu;
		tu_floats(g, n, FUSED_ACT_PARAMS_ATTR, par, 2);
		n->domain = GEARC_DOMAIN;
		n->op = (uint16_t)op;
	}
	clear_error();
	if (infer_graph(m, g) < 0 || !g->vals[n->outputs[0]].konst)
		return NULL;
	return &g->nodes[0];
}

/* Runs n as the runtime does with its output bound to a copy of input
 * k, and expects the folded bits. */
static void expect_in_place(Model *m, Node *n, int k)
{
	Graph *g = m->graph;
	const Tensor *want = g->vals[n->outputs[0]].konst;
	const Tensor *in[3] = { 0 };
	for (int32_t i = 0; i < n->ninputs; i++)
		in[i] = g->vals[n->inputs[i]].konst;
	cr_assert(in[k]->dtype == want->dtype &&
			  shape_equal(&in[k]->shape, &want->shape),
		  "%s: output is not shaped like input %d", n->op_type, k);
	Arena bufs = { 0 }, scratch = { 0 };
	Tensor *x = tensor_new(&bufs, NULL, in[k]->dtype, &in[k]->shape,
			       in[k]->data);
	Tensor *out = tensor_new(&bufs, NULL, want->dtype, &want->shape, NULL);
	out->data = x->data;
	in[k] = x;
	uint8_t set[1] = { 0 };
	Tensor *outs[1] = { out };
	OpBind b = { .in = in, .out = outs, .set = set };
	OpCtx c = { .model = m, .g = g, .n = n,
		    .opset = m->opsets[0].version, .fold_limit = INT64_MAX,
		    .bind = &b, .arena = &scratch };
	cr_assert_eq(op_info[n->op].run(&c), 0, "%s: %s", n->op_type,
		     last_error());
	cr_assert(set[0], "%s set no output", n->op_type);
	size_t es = dtype_size(want->dtype);
	for (int64_t i = 0; i < shape_numel(&want->shape); i++) {
		const char *p = (const char *)out->data + i * (int64_t)es;
		const char *q = (const char *)want->data + i * (int64_t)es;
		bool nan = want->dtype == DT_FLOAT && isnan(((float *)p)[0]) &&
			   isnan(((const float *)q)[0]);
		cr_assert(nan || !memcmp(p, q, es),
			  "%s in place of input %d: element %lld is %g, "
			  "folded %g", n->op_type, k, (long long)i,
			  tensor_get_f64(out, i), tensor_get_f64(want, i));
	}
	arena_release(&scratch);
	arena_release(&bufs);
}

/* Every op marked in place, on the first dtype it takes of float,
 * int32, bool, uint8, run in place on each input it may overwrite. */
Test(op_table, in_place_runs_match_folds)
{
	static const int dts[] = { DT_FLOAT, DT_INT32, DT_BOOL, DT_UINT8 };
	int checked = 0;
	for (int op = 1; op < OP_COUNT; op++) {
		if (op_info[op].inplace == INPLACE_NONE)
			continue;
		bool done = false;
		for (size_t d = 0; d < ARRAY_SIZE(dts) && !done; d++) {
			Model *m = tu_model(18);
			Node *n = folded_node(m, op, dts[d]);
			for (int k = 0; n && k < n->ninputs; k++)
				if (memplan_inplace_ok(op, k))
					expect_in_place(m, n, k);
			done = n != NULL;
			model_free(m);
		}
		cr_expect(done, "%s: no dtype to check in place on",
			  op_info[op].name);
		checked++;
	}
	cr_expect_gt(checked, 50);
}

/* SHAPE_SAME ops give input 0's shape, SHAPE_BCAST ones the broadcast:
 * checked on the ops folded_node() can build (one or two inputs of one
 * dtype), [2,1] against [3] for the broadcast. */
Test(op_table, shape_rules_match_inference)
{
	int checked = 0;
	for (int op = 1; op < OP_COUNT; op++) {
		ShapeRule r = op_info[op].shape;
		if (r == SHAPE_OWN || (r == SHAPE_SAME && arity(op) != 1) ||
		    op == OP_Where)
			continue;
		Model *m = tu_model(18);
		Graph *g = m->graph;
		ValId a = tu_input(g, "a", DT_FLOAT, SHAPE(2, 1));
		ValId b = tu_input(g, "b", DT_FLOAT, SHAPE(3));
		ValId ins[2] = { a, b };
		Node *n = tu_node(g, op_info[op].name, "n", ins,
				  r == SHAPE_BCAST ? 2 : 1, 1);
		ValId y = tu_out(n, 0);
		if (infer_graph(m, g) == 0) {
			cr_expect_str_eq(tu_shape(g, y),
					 r == SHAPE_BCAST ? "[2,3]" : "[2,1]",
					 "%s", op_info[op].name);
			checked++;
		}
		model_free(m);
	}
	cr_expect_gt(checked, 40);
}
