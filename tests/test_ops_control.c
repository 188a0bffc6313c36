/* tests/test_ops_control.c - control flow (If, Loop, Scan), sequences,
 * optionals, the string ops, and the passes that clean up after folding
 * (passes/inline.c, passes/dce.c). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "compiler/ops/opimpl.h"
#include "testutil.h"

/* ---- helpers ----------------------------------------------------------- */

/* infer, inline, dce, each checked, and the IR verified after each. */
static void compile_ok(Model *m)
{
	cr_assert_eq(infer_graph(m, m->graph), 0, "infer: %s", last_error());
	cr_assert_eq(graph_verify(m->graph), 0, "%s", last_error());
	cr_assert_eq(graph_inline(m->graph), 0, "inline: %s", last_error());
	cr_assert_eq(graph_verify(m->graph), 0, "after inline: %s",
		     last_error());
	cr_assert_eq(graph_dce(m->graph, NULL), 0, "dce: %s", last_error());
	cr_assert_eq(graph_verify(m->graph), 0, "after dce: %s", last_error());
}

/* A subgraph hung off node n (index ni of g) as attribute attr. */
static Graph *sub_of(Graph *g, int32_t ni, const char *attr)
{
	Graph *sub = graph_new(g->arena, attr, g);
	node_add_attr(g, &g->nodes[ni], attr, ATTR_GRAPH)->g = sub;
	return sub;
}

/* An outer reference in sub to value pv of its parent. */
static ValId outer(Graph *sub, ValId pv)
{
	ValId v = graph_add_value(sub, sub->parent->vals[pv].name, VAL_OUTER);
	sub->vals[v].outer = pv;
	return v;
}

static void add_output(Graph *g, ValId v)
{
	g->outputs = arena_grow(g->arena, g->outputs, (size_t)g->noutputs,
				(size_t)g->noutputs + 1, sizeof(ValId));
	g->outputs[g->noutputs++] = v;
	g->vals[v].flags |= VF_GRAPH_OUT;
}

static int32_t last_node(const Graph *g) { return g->nnodes - 1; }

static ValId scalar_bool(Graph *g, const char *name, bool v)
{
	uint8_t b = v;
	return tu_weight_data(g, name, DT_BOOL, SCALAR, &b);
}

static ValId scalar_i64(Graph *g, const char *name, int64_t v)
{
	return tu_weight_data(g, name, DT_INT64, SCALAR, &v);
}

static int count_op(const Graph *g, int op)
{
	int k = 0;
	for (int32_t i = 0; i < g->nnodes; i++)
		k += g->nodes[i].op == op;
	return k;
}

static ValId find_val(const Graph *g, const char *name)
{
	for (ValId i = 0; i < g->nvals; i++)
		if (!strcmp(g->vals[i].name, name))
			return i;
	return -1;
}

static bool dep(const Graph *g, ValId v)
{
	return (g->vals[v].flags & VF_DATA_DEP) != 0;
}

/* ---- If: the nested shape check, folded to one branch ------------------- */

/*
 * What exporters emit for "if x.shape[0] == 1: ... else: ...", nested:
 *
 *   main: x[N,3]
 *     c1 = Equal(Gather(Shape(x), 0), 1)
 *     y = If(c1)
 *       then: c2 = Equal(Gather(Shape(x), 1), 3)     (x from outside)
 *             t = If(c2)
 *               then: Add(x, x)
 *               else: Mul(x, x)
 *             -> t
 *       else: Concat(x, x, axis 0)
 */
static Model *nested_shape_if(int64_t n0)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(n0, 3));
	ValId zero = scalar_i64(g, "zero", 0), one = scalar_i64(g, "one", 1);
	ValId s = tu_out(tu_node(g, "Shape", "shape", IDS(x), 1), 0);
	ValId d0 = tu_out(tu_node(g, "Gather", "dim0", IDS(s, zero), 1), 0);
	ValId c1 = tu_out(tu_node(g, "Equal", "is_one", IDS(d0, one), 1), 0);
	ValId y = tu_out(tu_node(g, "If", "if_outer", IDS(c1), 1), 0);
	Graph *th = sub_of(g, last_node(g), "then_branch");
	Graph *el = sub_of(g, last_node(g), "else_branch");
	add_output(g, y);

	ValId tx = outer(th, x);
	ValId t1 = scalar_i64(th, "idx1", 1), t3 = scalar_i64(th, "three", 3);
	ValId ts = tu_out(tu_node(th, "Shape", "shape_in", IDS(tx), 1), 0);
	ValId td = tu_out(tu_node(th, "Gather", "dim1", IDS(ts, t1), 1), 0);
	ValId c2 = tu_out(tu_node(th, "Equal", "is_three", IDS(td, t3), 1), 0);
	ValId t = tu_out(tu_node(th, "If", "if_inner", IDS(c2), 1), 0);
	Graph *ith = sub_of(th, last_node(th), "then_branch");
	Graph *iel = sub_of(th, last_node(th), "else_branch");
	add_output(th, t);

	ValId ix = outer(ith, tx);
	add_output(ith, tu_out(tu_node(ith, "Add", "add", IDS(ix, ix), 1), 0));
	ValId ex = outer(iel, tx);
	add_output(iel, tu_out(tu_node(iel, "Mul", "mul", IDS(ex, ex), 1), 0));

	ValId ox = outer(el, x);
	Node *cat = tu_node(el, "Concat", "cat", IDS(ox, ox), 1);
	tu_int(el, cat, "axis", 0);
	add_output(el, tu_out(cat, 0));
	cr_assert_eq(graph_toposort(g), 0, "%s", last_error());
	cr_assert_eq(graph_verify(g), 0, "%s", last_error());
	return m;
}

/* The shape check needs Gather and Equal to fold (the tensor and
 * elementwise families). */
static bool shape_ops_fold(void)
{
	return op_info[OP_Gather].infer && op_info[OP_Gather].run &&
	       op_info[OP_Equal].infer && op_info[OP_Equal].run;
}

Test(ops_control, nested_shape_if_folds_to_inner_then)
{
	if (!shape_ops_fold())
		cr_skip_test("Gather/Equal do not fold in this tree yet");
	Model *m = nested_shape_if(1);
	Graph *g = m->graph;
	compile_ok(m);
	cr_assert_eq(count_op(g, OP_If), 0);
	cr_assert_eq(g->nnodes, 1, "nodes left: %d", g->nnodes);
	cr_assert_eq(g->nodes[0].op, OP_Add);
	cr_assert_str_eq(tu_shape(g, g->outputs[0]), "[1,3]");
	cr_assert_str_eq(g->vals[g->outputs[0]].name, "if_outer:0");
	model_free(m);
}

Test(ops_control, nested_shape_if_folds_to_outer_else)
{
	if (!shape_ops_fold())
		cr_skip_test("Gather/Equal do not fold in this tree yet");
	Model *m = nested_shape_if(4);
	Graph *g = m->graph;
	compile_ok(m);
	cr_assert_eq(count_op(g, OP_If), 0);
	cr_assert_eq(g->nnodes, 1, "nodes left: %d", g->nnodes);
	cr_assert_eq(g->nodes[0].op, OP_Concat);
	cr_assert_str_eq(tu_shape(g, g->outputs[0]), "[8,3]");
	model_free(m);
}

/* The same nesting with conditions the driver folds today: the outer one
 * a weight, the inner one read from outside through an outer reference
 * (Identity of it, inside the branch), so the inner If's condition is
 * only known once the branch is inferred with the parent's contents. */
static Model *nested_const_if(bool c1v, bool c2v)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3));
	ValId c1 = scalar_bool(g, "c1", c1v), c2 = scalar_bool(g, "c2", c2v);
	ValId y = tu_out(tu_node(g, "If", "if_outer", IDS(c1), 1), 0);
	Graph *th = sub_of(g, 0, "then_branch");
	Graph *el = sub_of(g, 0, "else_branch");
	ValId z = tu_out(tu_node(g, "Relu", "after", IDS(y), 1), 0);
	add_output(g, z);

	ValId tc = outer(th, c2), tx = outer(th, x);
	ValId c = tu_out(tu_node(th, "Identity", "cond_in", IDS(tc), 1), 0);
	ValId t = tu_out(tu_node(th, "If", "if_inner", IDS(c), 1), 0);
	Graph *ith = sub_of(th, 1, "then_branch");
	Graph *iel = sub_of(th, 1, "else_branch");
	add_output(th, t);
	ValId ix = outer(ith, tx);
	Node *tr = tu_node(ith, "Transpose", "tr", IDS(ix), 1);
	tu_ints(ith, tr, "perm", INTS(1, 0));
	add_output(ith, tu_out(tr, 0));
	ValId ex = outer(iel, tx);
	add_output(iel, tu_out(tu_node(iel, "Sigmoid", "sig", IDS(ex), 1), 0));

	ValId ox = outer(el, x);
	Node *cat = tu_node(el, "Concat", "cat", IDS(ox, ox), 1);
	tu_int(el, cat, "axis", 1);
	add_output(el, tu_out(cat, 0));
	cr_assert_eq(graph_verify(g), 0, "%s", last_error());
	return m;
}

Test(ops_control, nested_const_if_inlines_level_by_level)
{
	static const struct {
		bool c1, c2;
		int op;
		const char *shape;
	} cases[] = {
		{ true, true, OP_Transpose, "[3,2]" },
		{ true, false, OP_Sigmoid, "[2,3]" },
		{ false, true, OP_Concat, "[2,6]" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		Model *m = nested_const_if(cases[i].c1, cases[i].c2);
		Graph *g = m->graph;
		compile_ok(m);
		cr_assert_eq(count_op(g, OP_If), 0);
		cr_assert_eq(g->nnodes, 2, "case %zu: %d nodes", i, g->nnodes);
		cr_assert_eq(g->nodes[0].op, cases[i].op, "case %zu", i);
		cr_assert_eq(g->nodes[1].op, OP_Relu);
		cr_assert_str_eq(tu_shape(g, g->outputs[0]), cases[i].shape);
		/* the If's output id is kept: the branch node writes it */
		ValId y = find_val(g, "if_outer:0");
		cr_assert_geq(y, 0);
		cr_assert_eq(g->nodes[0].outputs[0], y);
		cr_assert_eq(g->nodes[1].inputs[0], y);
		cr_assert_str_eq(tu_shape(g, y), cases[i].shape);
		/* the condition weights are gone with their If */
		cr_assert_eq(find_val(g, "c1"), -1);
		cr_assert_eq(find_val(g, "c2"), -1);
		model_free(m);
	}
}

/* ---- If: inference ------------------------------------------------------ */

/* An If on cond with branches giving Relu(a) and Relu(b). */
static Model *if_of(ValId (*mk)(Graph *g, const char *n), Shape sa, Shape sb,
		    int dta, int dtb)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId cond = mk(g, "cond");
	ValId a = tu_input(g, "a", dta, sa), b = tu_input(g, "b", dtb, sb);
	add_output(g, tu_out(tu_node(g, "If", "if", IDS(cond), 1), 0));
	Graph *th = sub_of(g, 0, "then_branch");
	Graph *el = sub_of(g, 0, "else_branch");
	add_output(th, tu_out(tu_node(th, "Relu", "ra", IDS(outer(th, a)), 1), 0));
	add_output(el, tu_out(tu_node(el, "Relu", "rb", IDS(outer(el, b)), 1), 0));
	return m;
}

static ValId runtime_cond(Graph *g, const char *n)
{
	return tu_input(g, n, DT_BOOL, SCALAR);
}

static ValId true_cond(Graph *g, const char *n) { return scalar_bool(g, n, true); }

Test(ops_control, if_runtime_cond_merges_shapes)
{
	Model *m = if_of(runtime_cond, SHAPE(2, 3), SHAPE(2, 5), DT_FLOAT,
			 DT_FLOAT);
	Graph *g = m->graph;
	infer_ok(m);
	ValId y = g->outputs[0];
	cr_assert_str_eq(tu_shape(g, y), "[2,-1]");
	cr_assert_eq(tu_dtype(g, y), DT_FLOAT);
	cr_assert(dep(g, y), "a dim chosen at run time is data-dependent");
	/* both branches were inferred */
	Graph *el = g->nodes[0].attrs[1].g;
	cr_assert_str_eq(tu_shape(el, el->outputs[0]), "[2,5]");
	/* inline leaves it alone; dce keeps it */
	compile_ok(m);
	cr_assert_eq(count_op(g, OP_If), 1);
	cr_assert_str_eq(tu_shape(g, g->outputs[0]), "[2,-1]");
	model_free(m);
}

Test(ops_control, if_runtime_cond_same_shapes_stay_static)
{
	Model *m = if_of(runtime_cond, SHAPE(4, 1), SHAPE(4, 1), DT_FLOAT,
			 DT_FLOAT);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(m->graph, m->graph->outputs[0]), "[4,1]");
	cr_assert_not(dep(m->graph, m->graph->outputs[0]));
	model_free(m);
}

Test(ops_control, if_runtime_cond_rank_differs)
{
	Model *m = if_of(runtime_cond, SHAPE(2, 3), SHAPE(6), DT_FLOAT,
			 DT_FLOAT);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(m->graph, m->graph->outputs[0]), "[?]");
	model_free(m);
}

Test(ops_control, if_branches_disagree_on_dtype)
{
	Model *m = if_of(runtime_cond, SHAPE(2), SHAPE(2), DT_FLOAT,
			 DT_DOUBLE);
	infer_fails(m, "node 'if' (If): output 0: then_branch and else_branch "
		       "disagree: float32 vs float64");
	model_free(m);
}

/* A constant condition: only the taken branch is inferred; the other one
 * (here invalid: Relu of a bool) is not even looked at. */
Test(ops_control, if_const_cond_takes_one_branch)
{
	Model *m = if_of(true_cond, SHAPE(2, 3), SHAPE(7), DT_FLOAT, DT_BOOL);
	Graph *g = m->graph;
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, g->outputs[0]), "[2,3]");
	cr_assert_not(dep(g, g->outputs[0]));
	model_free(m);
}

/* The taken branch's constant output makes the If's output constant; dce
 * turns it into a weight. */
Test(ops_control, if_const_branch_output_is_folded)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 4));
	ValId cond = tu_input(g, "cond", DT_BOOL, SCALAR);
	ValId y = tu_out(tu_node(g, "If", "if", IDS(cond), 1), 0);
	add_output(g, y);
	Graph *th = sub_of(g, 0, "then_branch");
	Graph *el = sub_of(g, 0, "else_branch");
	add_output(th, tu_out(tu_node(th, "Shape", "s1", IDS(outer(th, x)), 1), 0));
	add_output(el, tu_out(tu_node(el, "Shape", "s2", IDS(outer(el, x)), 1), 0));
	infer_ok(m);
	/* both branches give [2,3,4]: known whatever the condition */
	const Tensor *k = g->vals[y].konst;
	cr_assert_not_null(k);
	cr_assert_eq(tensor_get_i64(k, 0), 2);
	cr_assert_eq(tensor_get_i64(k, 2), 4);
	compile_ok(m);
	cr_assert_eq(g->nnodes, 0);
	cr_assert_eq(g->vals[g->outputs[0]].kind, VAL_WEIGHT);
	cr_assert_str_eq(g->vals[g->outputs[0]].name, "if:0");
	model_free(m);
}

Test(ops_control, if_cond_must_be_bool)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId c = tu_input(g, "c", DT_INT64, SCALAR);
	tu_node(g, "If", "if", IDS(c), 1);
	sub_of(g, 0, "then_branch");
	sub_of(g, 0, "else_branch");
	infer_fails(m, "node 'if' (If): input 0 ('c') has dtype int64, "
		       "expected bool");
	model_free(m);
}

Test(ops_control, if_missing_branch)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId c = tu_input(g, "c", DT_BOOL, SCALAR);
	tu_node(g, "If", "if", IDS(c), 1);
	sub_of(g, 0, "then_branch");
	infer_fails(m, "node 'if' (If): attribute else_branch (a graph) is "
		       "required");
	model_free(m);
}

/* ---- inline ------------------------------------------------------------- */

/* A branch output that is an outer value or a weight of the branch, and
 * one given twice: copied into the If's outputs by Identity nodes; branch
 * weights move into the parent under fresh names. */
Test(ops_control, inline_outer_and_weight_outputs)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(3));
	ValId w = tu_weight(g, "w", DT_FLOAT, SHAPE(3)); /* name clash */
	ValId c = scalar_bool(g, "c", true);
	Node *n = tu_node(g, "If", "if", IDS(c), 4);
	ValId o0 = tu_out(n, 0), o1 = tu_out(n, 1), o2 = tu_out(n, 2),
	      o3 = tu_out(n, 3);
	Graph *th = sub_of(g, 0, "then_branch");
	Graph *el = sub_of(g, 0, "else_branch");
	ValId bw = tu_weight(th, "w", DT_FLOAT, SHAPE(3));
	ValId bx = outer(th, x);
	ValId s = tu_out(tu_node(th, "Add", "sum", IDS(bx, bw), 1), 0);
	add_output(th, s);
	add_output(th, bx);
	add_output(th, bw);
	add_output(th, s);
	ValId ex = outer(el, x);
	for (int k = 0; k < 4; k++)
		add_output(el, ex);
	ValId use = tu_out(tu_node(g, "Sum", "use", IDS(o0, o1, o2, o3, w), 1), 0);
	add_output(g, use);
	cr_assert_eq(graph_inline(g), 0, "%s", last_error());
	cr_assert_eq(graph_verify(g), 0, "%s", last_error());
	cr_assert_eq(count_op(g, OP_If), 0);
	/* Add writes o0; Identities copy x, the moved weight and o0 */
	cr_assert_eq(g->nnodes, 5);
	cr_assert_eq(g->nodes[0].op, OP_Add);
	cr_assert_eq(g->nodes[0].outputs[0], o0);
	ValId moved = g->nodes[0].inputs[1];
	cr_assert_eq(g->vals[moved].kind, VAL_WEIGHT);
	cr_assert_str_eq(g->vals[moved].name, "w__1");
	cr_assert_eq(g->nodes[1].inputs[0], x);
	cr_assert_eq(g->nodes[1].outputs[0], o1);
	cr_assert_eq(g->nodes[2].inputs[0], moved);
	cr_assert_eq(g->nodes[2].outputs[0], o2);
	cr_assert_eq(g->nodes[3].inputs[0], o0);
	cr_assert_eq(g->nodes[3].outputs[0], o3);
	cr_assert_str_eq(g->nodes[3].name, "if/output_3");
	cr_assert_eq(g->nodes[4].op, OP_Sum);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(g->vals[g->nodes[i].outputs[0]].producer, i);
	model_free(m);
}

/* Ifs inside a Loop body are inlined there; subgraphs of moved nodes
 * point at their new parent. */
Test(ops_control, inline_inside_subgraphs_and_reparents)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(3));
	ValId c = scalar_bool(g, "c", false);
	ValId y = tu_out(tu_node(g, "If", "if", IDS(c), 1), 0);
	add_output(g, y);
	Graph *th = sub_of(g, 0, "then_branch");
	Graph *el = sub_of(g, 0, "else_branch");
	add_output(th, outer(th, x));
	/* else: an If on a runtime condition, whose branches read x */
	ValId ec = tu_out(tu_node(el, "Identity", "rt", IDS(outer(el, x)), 1), 0);
	ValId ex = find_val(el, "x");
	ValId ey = tu_out(tu_node(el, "If", "rtif", IDS(ec), 1), 0);
	add_output(el, ey);
	Graph *a = sub_of(el, 1, "then_branch");
	Graph *b = sub_of(el, 1, "else_branch");
	add_output(a, outer(a, ex));
	add_output(b, outer(b, ex));
	cr_assert_eq(graph_inline(g), 0, "%s", last_error());
	cr_assert_eq(graph_verify(g), 0, "%s", last_error());
	cr_assert_eq(g->nnodes, 2);
	cr_assert_eq(g->nodes[1].op, OP_If);
	cr_assert_eq(a->parent, g);
	cr_assert_eq(b->parent, g);
	cr_assert_eq(a->vals[0].outer, x);
	cr_assert_eq(g->nodes[1].outputs[0], y);
	model_free(m);
}

/* ---- Loop ---------------------------------------------------------------- */

/*
 * Loop(M, cond, y0) with body (i, c_in, y_in):
 *   c_out = cond_op(c_in)   (Identity, or a runtime input when cond_rt)
 *   y_out = Add(y_in, x)    (x from outside)
 *   scan  = Identity(y_out)
 */
static Model *loop_model(ValId (*m_of)(Graph *), ValId (*c_of)(Graph *),
			 bool cond_rt)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 2));
	ValId y0 = tu_input(g, "y0", DT_FLOAT, SHAPE(1, 2));
	ValId flag = tu_input(g, "flag", DT_BOOL, SCALAR);
	ValId mm = m_of ? m_of(g) : -1, cc = c_of ? c_of(g) : -1;
	Node *n = tu_node(g, "Loop", "loop", IDS(mm, cc, y0), 2);
	ValId y = tu_out(n, 0), s = tu_out(n, 1);
	add_output(g, y);
	add_output(g, s);
	Graph *b = sub_of(g, 0, "body");
	tu_input(b, "i", DT_INT64, SCALAR);
	ValId ci = tu_input(b, "c_in", DT_BOOL, SCALAR);
	ValId yi = tu_input(b, "y_in", DT_FLOAT, SHAPE(1, 2));
	ValId co = cond_rt ? outer(b, flag)
			   : tu_out(tu_node(b, "Identity", "c_out", IDS(ci), 1), 0);
	ValId yo = tu_out(tu_node(b, "Add", "y_out", IDS(yi, outer(b, x)), 1), 0);
	ValId so = tu_out(tu_node(b, "Identity", "scan", IDS(yo), 1), 0);
	add_output(b, co);
	add_output(b, yo);
	add_output(b, so);
	return m;
}

static ValId m5(Graph *g) { return scalar_i64(g, "M", 5); }
static ValId m0(Graph *g) { return scalar_i64(g, "M", 0); }
static ValId m_rt(Graph *g) { return tu_input(g, "M", DT_INT64, SCALAR); }
static ValId c_true(Graph *g) { return scalar_bool(g, "cond", true); }
static ValId c_false(Graph *g) { return scalar_bool(g, "cond", false); }
static ValId c_rt(Graph *g) { return tu_input(g, "cond", DT_BOOL, SCALAR); }

Test(ops_control, loop_const_trip_count_static_scan)
{
	Model *m = loop_model(m5, c_true, false);
	Graph *g = m->graph;
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, g->outputs[0]), "[1,2]");
	cr_assert_str_eq(tu_shape(g, g->outputs[1]), "[5,1,2]");
	cr_assert_not(dep(g, g->outputs[1]));
	cr_assert_eq(tu_dtype(g, g->outputs[1]), DT_FLOAT);
	/* the body's condition input is known true in every iteration */
	Graph *b = g->nodes[0].attrs[0].g;
	cr_assert_not_null(b->vals[b->outputs[0]].konst);
	model_free(m);
}

Test(ops_control, loop_without_cond_input_runs_m_times)
{
	Model *m = loop_model(m5, NULL, false);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(m->graph, m->graph->outputs[1]), "[5,1,2]");
	model_free(m);
}

Test(ops_control, loop_body_cond_may_stop_early)
{
	Model *m = loop_model(m5, c_true, true);
	Graph *g = m->graph;
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, g->outputs[1]), "[-1,1,2]");
	cr_assert(dep(g, g->outputs[1]));
	cr_assert_str_eq(tu_shape(g, g->outputs[0]), "[1,2]");
	/* without the hypothesis the body's condition is not constant */
	Graph *b = g->nodes[0].attrs[0].g;
	cr_assert_null(b->vals[b->inputs[1]].konst);
	model_free(m);
}

Test(ops_control, loop_runtime_cond_or_trip_count)
{
	Model *m = loop_model(m5, c_rt, false);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(m->graph, m->graph->outputs[1]), "[-1,1,2]");
	cr_assert(dep(m->graph, m->graph->outputs[1]));
	model_free(m);
	m = loop_model(m_rt, c_true, false);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(m->graph, m->graph->outputs[1]), "[-1,1,2]");
	model_free(m);
}

Test(ops_control, loop_zero_trips)
{
	Model *m = loop_model(m0, c_true, false);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(m->graph, m->graph->outputs[1]), "[0,1,2]");
	model_free(m);
	m = loop_model(m5, c_false, false);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(m->graph, m->graph->outputs[1]), "[0,1,2]");
	model_free(m);
}

/* A carried value that doubles each iteration: [1,2], [2,2], [4,2] ...;
 * k is loop-invariant; the scan output is Shape(y) of each iteration. */
static Model *growing_loop(ValId (*m_of)(Graph *))
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId y0 = tu_input(g, "y0", DT_FLOAT, SHAPE(1, 2));
	ValId k0 = tu_weight_ints(g, "k0", INTS(7, 8));
	ValId mm = m_of(g);
	Node *n = tu_node(g, "Loop", "loop", IDS(mm, -1, y0, k0), 3);
	add_output(g, tu_out(n, 0));
	add_output(g, tu_out(n, 1));
	add_output(g, tu_out(n, 2));
	Graph *b = sub_of(g, 0, "body");
	tu_input(b, "i", DT_INT64, SCALAR);
	ValId ci = tu_input(b, "c_in", DT_BOOL, SCALAR);
	ValId yi = tu_input(b, "y_in", DT_FLOAT, UNKNOWN);
	ValId ki = tu_input(b, "k_in", DT_INT64, UNKNOWN);
	add_output(b, ci);
	Node *cat = tu_node(b, "Concat", "grow", IDS(yi, yi), 1);
	tu_int(b, cat, "axis", 0);
	add_output(b, tu_out(cat, 0));
	add_output(b, tu_out(tu_node(b, "Identity", "keep", IDS(ki), 1), 0));
	add_output(b, tu_out(tu_node(b, "Shape", "shp", IDS(yi), 1), 0));
	return m;
}

static ValId m3(Graph *g) { return scalar_i64(g, "M", 3); }
static ValId m100(Graph *g) { return scalar_i64(g, "M", 100); }

/* Run at compile time: exact shapes, and the scan of constants folds. */
Test(ops_control, loop_unrolled_exact)
{
	Model *m = growing_loop(m3);
	Graph *g = m->graph;
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, g->outputs[0]), "[8,2]");
	cr_assert_not(dep(g, g->outputs[0]));
	cr_assert_eq(tensor_get_i64(g->vals[g->outputs[1]].konst, 1), 8);
	ValId s = g->outputs[2];
	cr_assert_str_eq(tu_shape(g, s), "[3,2]");
	const Tensor *t = g->vals[s].konst;
	cr_assert_not_null(t);
	static const int64_t want[] = { 1, 2, 2, 2, 4, 2 };
	for (int i = 0; i < 6; i++)
		cr_assert_eq(tensor_get_i64(t, i), want[i], "element %d", i);
	/* the body itself holds for every iteration */
	Graph *b = g->nodes[0].attrs[0].g;
	cr_assert_str_eq(tu_shape(b, b->outputs[1]), "[-1,2]");
	cr_assert_null(b->vals[b->outputs[3]].konst);
	/* the Loop stays for y (dce folds only nodes known entirely) */
	compile_ok(m);
	cr_assert_eq(g->nnodes, 1);
	cr_assert_not_null(g->vals[g->outputs[2]].konst);
	model_free(m);
}

/* Too many iterations to run: a fixed point of the carried shapes. */
Test(ops_control, loop_carried_shape_fixed_point)
{
	Model *m = growing_loop(m100);
	Graph *g = m->graph;
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, g->outputs[0]), "[-1,2]");
	cr_assert(dep(g, g->outputs[0]));
	cr_assert_str_eq(tu_shape(g, g->outputs[1]), "[2]");
	cr_assert_not_null(g->vals[g->outputs[1]].konst);
	cr_assert_eq(tensor_get_i64(g->vals[g->outputs[1]].konst, 1), 8);
	cr_assert_str_eq(tu_shape(g, g->outputs[2]), "[100,2]");
	cr_assert_null(g->vals[g->outputs[2]].konst);
	model_free(m);
	m = growing_loop(m_rt);
	g = m->graph;
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, g->outputs[0]), "[-1,2]");
	cr_assert_str_eq(tu_shape(g, g->outputs[2]), "[-1,2]");
	cr_assert(dep(g, g->outputs[2]));
	model_free(m);
}

/* A while loop whose condition is known each iteration: a = true,
 * z = false; cond_out = a_in, a_out = z_in.  It runs twice. */
Test(ops_control, loop_unrolled_while_stops)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId a0 = scalar_bool(g, "a0", true), z0 = scalar_bool(g, "z0", false);
	Node *n = tu_node(g, "Loop", "loop", IDS(-1, -1, a0, z0), 3);
	add_output(g, tu_out(n, 0));
	add_output(g, tu_out(n, 2));
	Graph *b = sub_of(g, 0, "body");
	tu_input(b, "i", DT_INT64, SCALAR);
	tu_input(b, "c_in", DT_BOOL, SCALAR);
	ValId ai = tu_input(b, "a_in", DT_BOOL, SCALAR);
	ValId zi = tu_input(b, "z_in", DT_BOOL, SCALAR);
	add_output(b, tu_out(tu_node(b, "Identity", "c_out", IDS(ai), 1), 0));
	add_output(b, tu_out(tu_node(b, "Identity", "a_out", IDS(zi), 1), 0));
	add_output(b, zi);
	add_output(b, tu_out(tu_node(b, "Identity", "seen", IDS(ai), 1), 0));
	infer_ok(m);
	const Tensor *a = g->vals[g->outputs[0]].konst;
	cr_assert_not_null(a);
	cr_assert_eq(tensor_get_i64(a, 0), 0);
	ValId s = g->outputs[1];
	cr_assert_str_eq(tu_shape(g, s), "[2]");
	cr_assert_eq(tensor_get_i64(g->vals[s].konst, 0), 1);
	cr_assert_eq(tensor_get_i64(g->vals[s].konst, 1), 0);
	/* every output known: the loop folds away */
	compile_ok(m);
	cr_assert_eq(g->nnodes, 0);
	cr_assert_eq(g->vals[g->outputs[1]].kind, VAL_WEIGHT);
	model_free(m);
}

Test(ops_control, loop_body_input_count)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId y0 = tu_input(g, "y0", DT_FLOAT, SHAPE(1));
	tu_node(g, "Loop", "loop", IDS(-1, -1, y0), 1);
	Graph *b = sub_of(g, 0, "body");
	tu_input(b, "i", DT_INT64, SCALAR);
	infer_fails(m, "node 'loop' (Loop): the body has 1 inputs and 0 "
		       "outputs; with 1 loop-carried values it needs 3 inputs "
		       "and at least 2 outputs");
	model_free(m);
}

Test(ops_control, loop_carried_dtype_must_agree)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId y0 = tu_input(g, "y0", DT_FLOAT, SHAPE(1));
	ValId k = tu_weight_ints(g, "k", INTS(1));
	tu_node(g, "Loop", "loop", IDS(-1, -1, y0), 1);
	Graph *b = sub_of(g, 0, "body");
	tu_input(b, "i", DT_INT64, SCALAR);
	ValId ci = tu_input(b, "c_in", DT_BOOL, SCALAR);
	tu_input(b, "y_in", DT_FLOAT, SHAPE(1));
	add_output(b, ci);
	add_output(b, outer(b, k));
	infer_fails(m, "node 'loop' (Loop): body output 1 ('k') is int64, but "
		       "the loop-carried value it feeds starts as float32");
	model_free(m);
}

/* ---- Scan ---------------------------------------------------------------- */

/* The running sum of the ONNX test: state [2] (+ batch in opset 8), scan
 * input [3,2]. */
static Model *scan_sum(int64_t opset, Shape init, Shape xs)
{
	Model *m = tu_model(opset);
	Graph *g = m->graph;
	ValId s0 = tu_input(g, "initial", DT_FLOAT, init);
	ValId x = tu_input(g, "x", DT_FLOAT, xs);
	Node *n = opset < 9 ? tu_node(g, "Scan", "scan", IDS(-1, s0, x), 2)
			    : tu_node(g, "Scan", "scan", IDS(s0, x), 2);
	tu_int(g, n, "num_scan_inputs", 1);
	add_output(g, tu_out(&g->nodes[0], 0));
	add_output(g, tu_out(&g->nodes[0], 1));
	Graph *b = sub_of(g, 0, "body");
	ValId si = tu_input(b, "sum_in", DT_FLOAT, UNKNOWN);
	ValId nx = tu_input(b, "next", DT_FLOAT, UNKNOWN);
	ValId so = tu_out(tu_node(b, "Add", "sum_out", IDS(si, nx), 1), 0);
	add_output(b, so);
	add_output(b, tu_out(tu_node(b, "Identity", "scan_out", IDS(so), 1), 0));
	return m;
}

/* A random op without a seed in a body that folding evaluates (constant
 * Scan inputs) is not drawn: its values would become constants of the
 * .om. */
Test(ops_control, scan_body_random_is_not_folded)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	ValId s0 = tu_weight(g, "initial", DT_FLOAT, SHAPE(2));
	ValId x = tu_weight(g, "x", DT_FLOAT, SHAPE(3, 2));
	Node *n = tu_node(g, "Scan", "scan", IDS(s0, x), 2);
	tu_int(g, n, "num_scan_inputs", 1);
	add_output(g, tu_out(&g->nodes[0], 0));
	add_output(g, tu_out(&g->nodes[0], 1));
	Graph *b = sub_of(g, 0, "body");
	ValId si = tu_input(b, "sum_in", DT_FLOAT, UNKNOWN);
	ValId nx = tu_input(b, "next", DT_FLOAT, UNKNOWN);
	add_output(b, tu_out(tu_node(b, "Add", "sum_out", IDS(si, nx), 1), 0));
	add_output(b, tu_out(tu_node(b, "RandomUniformLike", "r", IDS(nx), 1),
			     0));
	int rc = infer_graph(m, g);
	cr_assert(rc < 0 || !g->vals[g->outputs[1]].konst,
		  "the body's draws were folded into a constant");
	model_free(m);
}

Test(ops_control, scan9_sum)
{
	Model *m = scan_sum(9, SHAPE(2), SHAPE(3, 2));
	Graph *g = m->graph;
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, g->outputs[0]), "[2]");
	cr_assert_str_eq(tu_shape(g, g->outputs[1]), "[3,2]");
	Graph *b = g->nodes[0].attrs[1].g;
	cr_assert_str_eq(tu_shape(b, b->inputs[1]), "[2]");
	model_free(m);
}

Test(ops_control, scan8_sum_with_batch)
{
	Model *m = scan_sum(8, SHAPE(1, 2), SHAPE(1, 3, 2));
	Graph *g = m->graph;
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, g->outputs[0]), "[1,2]");
	cr_assert_str_eq(tu_shape(g, g->outputs[1]), "[1,3,2]");
	model_free(m);
}

Test(ops_control, scan_axes)
{
	Model *m = scan_sum(11, SHAPE(2), SHAPE(2, 5));
	Graph *g = m->graph;
	tu_ints(g, &g->nodes[0], "scan_input_axes", INTS(-1));
	tu_ints(g, &g->nodes[0], "scan_output_axes", INTS(1));
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, g->outputs[0]), "[2]");
	cr_assert_str_eq(tu_shape(g, g->outputs[1]), "[2,5]");
	model_free(m);
}

Test(ops_control, scan_lengths_must_agree)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	ValId a = tu_input(g, "a", DT_FLOAT, SHAPE(3, 2));
	ValId b = tu_input(g, "b", DT_FLOAT, SHAPE(4, 2));
	Node *n = tu_node(g, "Scan", "scan", IDS(a, b), 1);
	tu_int(g, n, "num_scan_inputs", 2);
	Graph *body = sub_of(g, 0, "body");
	ValId x = tu_input(body, "x", DT_FLOAT, UNKNOWN);
	tu_input(body, "y", DT_FLOAT, UNKNOWN);
	add_output(body, x);
	infer_fails(m, "node 'scan' (Scan): input 1 ('b') has scan length 4, "
		       "but an earlier one has 3");
	model_free(m);
}

Test(ops_control, scan_unknown_length)
{
	Model *m = scan_sum(9, SHAPE(2), SHAPE(-1, 2));
	infer_ok(m);
	cr_assert_str_eq(tu_shape(m->graph, m->graph->outputs[1]), "[-1,2]");
	cr_assert_str_eq(tu_shape(m->graph, m->graph->outputs[0]), "[2]");
	model_free(m);
}

/* ---- sequences ------------------------------------------------------------ */

/* simple/test_sequence_model1: elements of three shapes; SequenceAt at a
 * constant position gets the exact one. */
Test(ops_control, sequence_insert_at)
{
	Model *m = tu_model(12);
	Graph *g = m->graph;
	ValId x = tu_input(g, "X", DT_FLOAT, SHAPE(2, 3, 4));
	ValId y = tu_input(g, "Y", DT_FLOAT, SHAPE(1, 3, 4));
	ValId z = tu_input(g, "Z", DT_FLOAT, SHAPE(3, 3, 4));
	ValId pos = scalar_i64(g, "pos", 1), at = scalar_i64(g, "pos_at", -2);
	ValId e = tu_out(tu_node(g, "SequenceEmpty", "empty", NULL, 0, 1), 0);
	ValId s1 = tu_out(tu_node(g, "SequenceInsert", "s1", IDS(e, x), 1), 0);
	ValId s2 = tu_out(tu_node(g, "SequenceInsert", "s2", IDS(s1, y), 1), 0);
	ValId s3 = tu_out(tu_node(g, "SequenceInsert", "s3", IDS(s2, z, pos), 1), 0);
	ValId o = tu_out(tu_node(g, "SequenceAt", "at", IDS(s3, at), 1), 0);
	ValId len = tu_out(tu_node(g, "SequenceLength", "len", IDS(s3), 1), 0);
	infer_ok(m);
	cr_assert_eq(g->vals[e].tkind, TK_SEQUENCE);
	cr_assert_eq(g->vals[e].dtype, DT_FLOAT);
	cr_assert_str_eq(tu_shape(g, s1), "[2,3,4]");
	cr_assert_str_eq(tu_shape(g, s3), "[-1,3,4]");
	cr_assert_eq(g->vals[s3].tkind, TK_SEQUENCE);
	/* [X, Z, Y]: position -2 is Z */
	cr_assert_str_eq(tu_shape(g, o), "[3,3,4]");
	cr_assert_eq(g->vals[o].tkind, TK_TENSOR);
	cr_assert_not_null(g->vals[len].konst);
	cr_assert_eq(tensor_get_i64(g->vals[len].konst, 0), 3);
	model_free(m);
}

Test(ops_control, sequence_at_runtime_position_merges)
{
	Model *m = tu_model(12);
	Graph *g = m->graph;
	ValId x = tu_input(g, "X", DT_FLOAT, SHAPE(2, 3));
	ValId y = tu_input(g, "Y", DT_FLOAT, SHAPE(2, 5));
	ValId p = tu_input(g, "p", DT_INT64, SCALAR);
	ValId s = tu_out(tu_node(g, "SequenceConstruct", "sc", IDS(x, y), 1), 0);
	ValId o = tu_out(tu_node(g, "SequenceAt", "at", IDS(s, p), 1), 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, o), "[2,-1]");
	cr_assert(dep(g, o));
	model_free(m);
}

Test(ops_control, sequence_erase_and_position_errors)
{
	Model *m = tu_model(12);
	Graph *g = m->graph;
	ValId x = tu_input(g, "X", DT_FLOAT, SHAPE(1));
	ValId y = tu_input(g, "Y", DT_FLOAT, SHAPE(2));
	ValId z = tu_input(g, "Z", DT_FLOAT, SHAPE(3));
	ValId p0 = scalar_i64(g, "p0", 0), p1 = scalar_i64(g, "p1", 1);
	ValId s = tu_out(tu_node(g, "SequenceConstruct", "sc", IDS(x, y, z), 1), 0);
	ValId s2 = tu_out(tu_node(g, "SequenceErase", "er", IDS(s, p0), 1), 0);
	ValId s3 = tu_out(tu_node(g, "SequenceErase", "er2", IDS(s2), 1), 0);
	ValId o = tu_out(tu_node(g, "SequenceAt", "at", IDS(s2, p1), 1), 0);
	ValId o3 = tu_out(tu_node(g, "SequenceAt", "at3", IDS(s3, p0), 1), 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, s2), "[-1]");
	cr_assert_str_eq(tu_shape(g, o), "[3]");
	cr_assert_str_eq(tu_shape(g, s3), "[2]");
	cr_assert_str_eq(tu_shape(g, o3), "[2]");
	ValId p5 = scalar_i64(g, "p5", 5);
	tu_node(g, "SequenceAt", "bad", IDS(s3, p5), 1);
	infer_fails(m, "node 'bad' (SequenceAt): position 5 is out of range "
		       "for a sequence of 1");
	model_free(m);
}

Test(ops_control, sequence_insert_dtype_must_match)
{
	Model *m = tu_model(12);
	Graph *g = m->graph;
	ValId x = tu_input(g, "X", DT_INT32, SHAPE(1));
	ValId e = tu_out(tu_node(g, "SequenceEmpty", "empty", NULL, 0, 1), 0);
	tu_node(g, "SequenceInsert", "ins", IDS(e, x), 1);
	infer_fails(m, "node 'ins' (SequenceInsert): input 1 ('X') has dtype "
		       "int32, but the sequence holds float32");
	model_free(m);
}

Test(ops_control, concat_from_sequence)
{
	Model *m = tu_model(12);
	Graph *g = m->graph;
	ValId x = tu_input(g, "X", DT_FLOAT, SHAPE(2, 3, 4));
	ValId y = tu_input(g, "Y", DT_FLOAT, SHAPE(2, 5, 4));
	ValId s = tu_out(tu_node(g, "SequenceConstruct", "sc", IDS(x, y, x), 1), 0);
	Node *n = tu_node(g, "ConcatFromSequence", "cat", IDS(s), 1);
	tu_int(g, n, "axis", 1);
	ValId c = tu_out(n, 0);
	ValId t = tu_out(tu_node(g, "SequenceConstruct", "sc2", IDS(x, x), 1), 0);
	n = tu_node(g, "ConcatFromSequence", "stack", IDS(t), 1);
	tu_int(g, n, "axis", -1);
	tu_int(g, n, "new_axis", 1);
	ValId st = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, c), "[2,11,4]");
	cr_assert_not(dep(g, c));
	cr_assert_str_eq(tu_shape(g, st), "[2,3,4,2]");
	n = tu_node(g, "ConcatFromSequence", "bad", IDS(s), 1);
	tu_int(g, n, "axis", 0);
	infer_fails(m, "node 'bad' (ConcatFromSequence): sequence elements 0 "
		       "and 1 have shapes [2,3,4] and [2,5,4]; only the axis "
		       "may differ");
	model_free(m);
}

/* A sequence carried through a Loop: its length is not known. */
Test(ops_control, concat_from_unknown_sequence)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "X", DT_FLOAT, SHAPE(2, 3));
	ValId mm = tu_input(g, "M", DT_INT64, SCALAR);
	ValId e = tu_out(tu_node(g, "SequenceEmpty", "empty", NULL, 0, 1), 0);
	ValId l = tu_out(tu_node(g, "Loop", "loop", IDS(mm, -1, e), 1), 0);
	Graph *b = sub_of(g, 1, "body");
	tu_input(b, "i", DT_INT64, SCALAR);
	ValId ci = tu_input(b, "c", DT_BOOL, SCALAR);
	ValId si = tu_input(b, "s", DT_FLOAT, UNKNOWN);
	add_output(b, ci);
	add_output(b, tu_out(tu_node(b, "SequenceInsert", "ins",
				     IDS(si, outer(b, x)), 1), 0));
	Node *n = tu_node(g, "ConcatFromSequence", "cat", IDS(l), 1);
	tu_int(g, n, "axis", 0);
	ValId c = tu_out(n, 0);
	infer_ok(m);
	cr_assert_eq(g->vals[l].tkind, TK_SEQUENCE);
	cr_assert_str_eq(tu_shape(g, l), "[?]");
	cr_assert_str_eq(tu_shape(g, c), "[?]");
	model_free(m);
}

Test(ops_control, split_to_sequence)
{
	Model *m = tu_model(12);
	Graph *g = m->graph;
	ValId x = tu_input(g, "X", DT_DOUBLE, SHAPE(2, 3, 7));
	Node *n = tu_node(g, "SplitToSequence", "s0", IDS(x), 1);
	tu_int(g, n, "axis", 0);
	tu_int(g, n, "keepdims", 0);
	ValId s0 = tu_out(n, 0);
	ValId at = tu_out(tu_node(g, "SequenceAt", "at", IDS(s0, scalar_i64(g, "one", 1)), 1), 0);
	ValId three = scalar_i64(g, "three", 3);
	n = tu_node(g, "SplitToSequence", "s1", IDS(x, three), 1);
	tu_int(g, n, "axis", -1);
	ValId s1 = tu_out(n, 0);
	ValId l1 = tu_out(tu_node(g, "SequenceLength", "l1", IDS(s1), 1), 0);
	ValId last = tu_out(tu_node(g, "SequenceAt", "last", IDS(s1, scalar_i64(g, "m1", -1)), 1), 0);
	ValId parts = tu_weight_ints(g, "parts", INTS(1, 2));
	n = tu_node(g, "SplitToSequence", "s2", IDS(x, parts), 1);
	tu_int(g, n, "axis", 1);
	ValId s2 = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, s0), "[3,7]");
	cr_assert_eq(g->vals[s0].dtype, DT_DOUBLE);
	cr_assert_str_eq(tu_shape(g, at), "[3,7]");
	cr_assert_str_eq(tu_shape(g, s1), "[2,3,-1]");
	cr_assert_eq(tensor_get_i64(g->vals[l1].konst, 0), 3);
	cr_assert_str_eq(tu_shape(g, last), "[2,3,1]");
	cr_assert_str_eq(tu_shape(g, s2), "[2,-1,7]");
	ValId bad = tu_weight_ints(g, "bad", INTS(1, 1));
	n = tu_node(g, "SplitToSequence", "s3", IDS(x, bad), 1);
	tu_int(g, n, "axis", 1);
	infer_fails(m, "node 's3' (SplitToSequence): split sums to 2, but "
		       "input 0 ('X') has 3 along axis 1");
	model_free(m);
}

Test(ops_control, sequence_map_body)
{
	Model *m = tu_model(17);
	Graph *g = m->graph;
	ValId x = tu_input(g, "X", DT_FLOAT, SHAPE(2, 3));
	ValId y = tu_input(g, "Y", DT_FLOAT, SHAPE(4, 3));
	ValId s = tu_out(tu_node(g, "SequenceConstruct", "sc", IDS(x, y), 1), 0);
	ValId o = tu_out(tu_node(g, "SequenceMap", "map", IDS(s), 1), 0);
	Graph *b = sub_of(g, 1, "body");
	ValId e = tu_input(b, "e", DT_FLOAT, UNKNOWN);
	add_output(b, tu_out(tu_node(b, "Shape", "shp", IDS(e), 1), 0));
	infer_ok(m);
	cr_assert_eq(g->vals[o].tkind, TK_SEQUENCE);
	cr_assert_eq(g->vals[o].dtype, DT_INT64);
	cr_assert_str_eq(tu_shape(g, o), "[2]");
	cr_assert_str_eq(tu_shape(b, e), "[-1,3]");
	model_free(m);
}

/* ---- optionals ------------------------------------------------------------- */

Test(ops_control, optional_ops)
{
	Model *m = tu_model(18);
	Graph *g = m->graph;
	ValId x = tu_input(g, "X", DT_FLOAT, SHAPE(4));
	ValId op = tu_out(tu_node(g, "Optional", "opt", IDS(x), 1), 0);
	ValId none = tu_out(tu_node(g, "Optional", "none", NULL, 0, 1), 0);
	ValId h1 = tu_out(tu_node(g, "OptionalHasElement", "h1", IDS(op), 1), 0);
	ValId h2 = tu_out(tu_node(g, "OptionalHasElement", "h2", IDS(none), 1), 0);
	ValId h3 = tu_out(tu_node(g, "OptionalHasElement", "h3", IDS(-1), 1), 0);
	ValId ge = tu_out(tu_node(g, "OptionalGetElement", "get", IDS(op), 1), 0);
	infer_ok(m);
	cr_assert_eq(g->vals[op].tkind, TK_OPTIONAL);
	cr_assert_str_eq(tu_shape(g, op), "[4]");
	cr_assert_eq(g->vals[none].tkind, TK_OTHER);
	cr_assert_eq(tensor_get_i64(g->vals[h1].konst, 0), 1);
	cr_assert_eq(tensor_get_i64(g->vals[h2].konst, 0), 0);
	cr_assert_eq(tensor_get_i64(g->vals[h3].konst, 0), 0);
	cr_assert_eq(g->vals[ge].tkind, TK_TENSOR);
	cr_assert_eq(g->vals[ge].dtype, DT_FLOAT);
	cr_assert_str_eq(tu_shape(g, ge), "[4]");
	model_free(m);
}

/* ---- strings ---------------------------------------------------------------- */

static ValId strings(Graph *g, const char *name, const char **w, int64_t n,
		     bool two_d)
{
	Bytes *b = arena_array(g->arena, (size_t)n, sizeof(Bytes));
	for (int64_t i = 0; i < n; i++) {
		b[i].len = strlen(w[i]);
		b[i].data = (const uint8_t *)w[i];
	}
	int64_t d[2] = { 1, n };
	Shape s = two_d ? shape_of(2, d) : shape_of(1, d + 1);
	return tu_weight_data(g, name, DT_STRING, s, b);
}

static void stopwords(Graph *g, Node *n, const char *w)
{
	Attr *a = node_add_attr(g, n, "stopwords", ATTR_STRINGS);
	Bytes *b = arena_alloc(g->arena, sizeof(Bytes));
	b->len = strlen(w);
	b->data = (const uint8_t *)w;
	a->n = 1;
	a->strings = b;
}

Test(ops_control, string_normalizer)
{
	static const char *days[] = { "Monday", "tuesday", "monday", "Wed" };
	static const char *mon[] = { "monday", "MONDAY" };
	Model *m = tu_model(10);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_STRING, SHAPE(5));
	ValId c = strings(g, "c", days, 4, true);
	ValId c2 = strings(g, "c2", mon, 2, false);
	ValId y0 = tu_out(tu_node(g, "StringNormalizer", "plain", IDS(x), 1), 0);
	Node *n = tu_node(g, "StringNormalizer", "rt", IDS(x), 1);
	stopwords(g, n, "monday");
	ValId y1 = tu_out(n, 0);
	n = tu_node(g, "StringNormalizer", "k", IDS(c), 1);
	stopwords(g, n, "monday");
	tu_str(g, n, "case_change_action", "UPPER");
	ValId y2 = tu_out(n, 0);
	n = tu_node(g, "StringNormalizer", "empty", IDS(c2), 1);
	stopwords(g, n, "monday");
	ValId y3 = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y0), "[5]");
	cr_assert_not(dep(g, y0));
	cr_assert_str_eq(tu_shape(g, y1), "[-1]");
	cr_assert(dep(g, y1), "stopwords removed from data: data-dependent");
	/* case-insensitive by default: both Mondays go */
	cr_assert_str_eq(tu_shape(g, y2), "[1,2]");
	const Tensor *t = g->vals[y2].konst;
	cr_assert_not_null(t);
	const Bytes *b = t->data;
	cr_assert(b[0].len == 7 && !memcmp(b[0].data, "TUESDAY", 7));
	cr_assert(b[1].len == 3 && !memcmp(b[1].data, "WED", 3));
	/* all dropped: one empty string */
	cr_assert_str_eq(tu_shape(g, y3), "[1]");
	cr_assert_eq(((const Bytes *)g->vals[y3].konst->data)[0].len, 0);
	model_free(m);
}

Test(ops_control, tfidf_vectorizer_shape)
{
	Model *m = tu_model(9);
	Graph *g = m->graph;
	ValId x = tu_input(g, "X", DT_INT32, SHAPE(2, 6));
	Node *n = tu_node(g, "TfIdfVectorizer", "tf", IDS(x), 1);
	tu_int(g, n, "max_gram_length", 2);
	tu_int(g, n, "min_gram_length", 2);
	tu_int(g, n, "max_skip_count", 0);
	tu_str(g, n, "mode", "TF");
	tu_ints(g, n, "ngram_counts", INTS(0, 4));
	tu_ints(g, n, "ngram_indexes", INTS(0, 1, 2, 3, 4, 5, 6));
	tu_ints(g, n, "pool_int64s", INTS(2, 3, 5, 4, 5, 6, 7, 8, 6, 7));
	ValId y = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[2,7]");
	cr_assert_eq(tu_dtype(g, y), DT_FLOAT);
	model_free(m);
}

/* ---- dce ------------------------------------------------------------------- */

Test(ops_control, dce_removes_dead_chains_and_folds_to_weights)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3));
	ValId unused_w = tu_weight(g, "unused", DT_FLOAT, SHAPE(4));
	(void)unused_w;
	/* dead chain: Relu -> Sigmoid -> Tanh, nobody reads it */
	ValId r = tu_out(tu_node(g, "Relu", "r", IDS(x), 1), 0);
	ValId s = tu_out(tu_node(g, "Sigmoid", "s", IDS(r), 1), 0);
	tu_out(tu_node(g, "Tanh", "t", IDS(s), 1), 0);
	/* folded: Shape(x) is constant; the Reshape reads it */
	ValId shp = tu_out(tu_node(g, "Shape", "shape", IDS(x), 1), 0);
	ValId y = tu_out(tu_node(g, "Reshape", "reshape", IDS(x, shp), 1), 0);
	add_output(g, y);
	ValId k = tu_out(tu_node(g, "Size", "size", IDS(x), 1), 0);
	add_output(g, k);
	compile_ok(m);
	cr_assert_eq(g->nnodes, 1);
	cr_assert_eq(g->nodes[0].op, OP_Reshape);
	ValId w = g->nodes[0].inputs[1];
	cr_assert_eq(g->vals[w].kind, VAL_WEIGHT);
	cr_assert_str_eq(g->vals[w].name, "shape:0");
	cr_assert_eq(tensor_get_i64(g->vals[w].konst, 1), 3);
	/* a graph output that folded becomes a weight, under its name */
	ValId ko = g->outputs[1];
	cr_assert_eq(g->vals[ko].kind, VAL_WEIGHT);
	cr_assert_str_eq(g->vals[ko].name, "size:0");
	cr_assert_eq(tensor_get_i64(g->vals[ko].konst, 0), 6);
	/* the dead values are gone, the others renumbered consistently */
	cr_assert_eq(find_val(g, "r:0"), -1);
	cr_assert_eq(find_val(g, "t:0"), -1);
	cr_assert_eq(find_val(g, "unused"), -1);
	cr_assert_eq(g->nvals, 4);
	cr_assert_eq(g->inputs[0], find_val(g, "x"));
	cr_assert_eq(g->outputs[0], find_val(g, "reshape:0"));
	cr_assert_eq(g->vals[g->outputs[0]].producer, 0);
	(void)k;
	model_free(m);
}

/* In a body: a dead node goes, and an outer value only it read dies in
 * the parent too; the outer references left are renumbered. */
Test(ops_control, dce_in_subgraphs_and_outer_refs)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2));
	ValId c = tu_input(g, "c", DT_BOOL, SCALAR);
	ValId a = tu_out(tu_node(g, "Relu", "only_dead_reads", IDS(x), 1), 0);
	ValId e = tu_out(tu_node(g, "Sigmoid", "live", IDS(x), 1), 0);
	ValId y = tu_out(tu_node(g, "If", "if", IDS(c), 1), 0);
	add_output(g, y);
	Graph *th = sub_of(g, 2, "then_branch");
	Graph *el = sub_of(g, 2, "else_branch");
	tu_node(th, "Neg", "dead", IDS(outer(th, a)), 1);
	ValId te = outer(th, e);
	add_output(th, tu_out(tu_node(th, "Abs", "abs", IDS(te), 1), 0));
	add_output(el, outer(el, e));
	compile_ok(m);
	cr_assert_eq(g->nnodes, 2);
	cr_assert_eq(g->nodes[0].op, OP_Sigmoid);
	cr_assert_eq(g->nodes[1].op, OP_If);
	cr_assert_eq(th->nnodes, 1);
	cr_assert_eq(th->nodes[0].op, OP_Abs);
	cr_assert_eq(find_val(th, "only_dead_reads:0"), -1);
	cr_assert_eq(find_val(g, "only_dead_reads:0"), -1);
	ValId ne = find_val(g, "live:0");
	cr_assert_eq(th->vals[find_val(th, "live:0")].outer, ne);
	cr_assert_eq(el->vals[find_val(el, "live:0")].outer, ne);
	cr_assert_str_eq(tu_shape(g, g->outputs[0]), "[2]");
	model_free(m);
}

/* specialise keeps the gear spec's input ids pointing at the same
 * inputs when dce renumbers the main graph's values. */
Test(ops_control, specialise_remaps_gear_inputs)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	tu_weight(g, "w", DT_FLOAT, SHAPE(1)); /* unused: dropped */
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2));
	add_output(g, tu_out(tu_node(g, "Relu", "r", IDS(x), 1), 0));
	GearSpec gs = { .ninputs = 1 };
	GearInput gi = { .name = "x", .val = x };
	gs.inputs = &gi;
	m->gears = &gs;
	cr_assert_eq(specialise(m, g), 0, "%s", last_error());
	cr_assert_eq(gi.val, 0);
	cr_assert_str_eq(g->vals[gi.val].name, "x");
	m->gears = NULL;
	model_free(m);
}

/* ---- overflow ---------------------------------------------------------- */

#define BIG (INT64_C(1) << 62)

Test(ops_control, concat_from_sequence_overflow)
{
	Model *m = tu_model(12);
	Graph *g = m->graph;
	ValId x = tu_input(g, "X", DT_UINT8, SHAPE(BIG));
	ValId s = tu_out(tu_node(g, "SequenceConstruct", "sc", IDS(x, x), 1), 0);
	Node *n = tu_node(g, "ConcatFromSequence", "cat", IDS(s), 1);
	tu_int(g, n, "axis", 0);
	infer_fails(m, "node 'cat' (ConcatFromSequence): dims 4611686018427387904 "
		       "+ 4611686018427387904 overflow int64");
	model_free(m);
}

Test(ops_control, loop_scan_output_too_large)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(4));
	ValId mm = scalar_i64(g, "M", BIG);
	tu_node(g, "Loop", "loop", IDS(mm, -1), 1);
	Graph *b = sub_of(g, 0, "body");
	tu_input(b, "i", DT_INT64, SCALAR);
	ValId ci = tu_input(b, "c_in", DT_BOOL, SCALAR);
	add_output(b, ci);
	add_output(b, outer(b, x));
	infer_fails(m, "node 'loop' (Loop): output 0 ('loop:0') of shape "
		       "[4611686018427387904,4] is too large (its size "
		       "overflows int64)");
	model_free(m);
}
