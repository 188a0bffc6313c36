/* tests/test_ir.c - graph building, topological order and the verifier. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "compiler/ir.h"

static Model *m;
static Graph *g;

static void setup(void)
{
	m = model_new();
	g = m->graph = graph_new(&m->arena, "main", NULL);
}

static void teardown(void) { model_free(m); }

static ValId input(const char *name)
{
	ValId v = graph_add_value(g, name, VAL_INPUT);
	g->inputs = arena_grow(&m->arena, g->inputs, (size_t)g->ninputs,
			       (size_t)g->ninputs + 1, sizeof(ValId));
	g->inputs[g->ninputs++] = v;
	return v;
}

/* A node "name" of op_type reading a (and b if >= 0), writing a new value
 * named after the node.  Returns the output. */
static ValId unary_in(Graph *gr, const char *name, const char *op, ValId a)
{
	ValId out = graph_add_value(gr, name, VAL_NODE);
	Node *n = graph_add_node(gr, name, op, "", 1, 1);
	n->inputs[0] = a;
	n->outputs[0] = out;
	return out;
}

static ValId unary(const char *name, ValId a)
{
	return unary_in(g, name, "Relu", a);
}

static void expect_fail(int rc, const char *frag)
{
	cr_expect_eq(rc, -1);
	cr_expect(strstr(last_error(), frag), "error '%s' lacks '%s'",
		  last_error(), frag);
}

TestSuite(ir, .init = setup, .fini = teardown);

Test(ir, toposort_keeps_a_valid_order)
{
	ValId x = input("x");
	ValId a = unary("a", x), b = unary("b", a);
	unary("c", b);
	cr_assert_eq(graph_toposort(g), 0, "%s", last_error());
	cr_expect_str_eq(g->nodes[0].name, "a");
	cr_expect_str_eq(g->nodes[1].name, "b");
	cr_expect_str_eq(g->nodes[2].name, "c");
	cr_expect_eq(graph_verify(g), 0, "%s", last_error());
}

Test(ir, toposort_orders_reversed_nodes)
{
	ValId x = input("x");
	ValId va = graph_add_value(g, "a", VAL_NODE);
	ValId vb = graph_add_value(g, "b", VAL_NODE);
	ValId vc = graph_add_value(g, "c", VAL_NODE);
	Node *n = graph_add_node(g, "C", "Add", "", 2, 1); /* c = a + b */
	n->inputs[0] = va;
	n->inputs[1] = vb;
	n->outputs[0] = vc;
	n = graph_add_node(g, "B", "Relu", "", 1, 1); /* b = relu(a) */
	n->inputs[0] = va;
	n->outputs[0] = vb;
	n = graph_add_node(g, "A", "Relu", "", 1, 1); /* a = relu(x) */
	n->inputs[0] = x;
	n->outputs[0] = va;
	cr_expect_eq(graph_verify(g), -1, "unsorted graph passed the verifier");
	cr_assert_eq(graph_toposort(g), 0, "%s", last_error());
	cr_expect_str_eq(g->nodes[0].name, "A");
	cr_expect_str_eq(g->nodes[1].name, "B");
	cr_expect_str_eq(g->nodes[2].name, "C");
	cr_expect_eq(g->vals[vc].producer, 2);
	cr_expect_eq(graph_verify(g), 0, "%s", last_error());
}

Test(ir, toposort_diamond_is_not_a_cycle)
{
	ValId x = input("x");
	ValId a = unary("a", x);
	ValId b = unary("b", a), c = unary("c", a);
	ValId d = graph_add_value(g, "d", VAL_NODE);
	Node *n = graph_add_node(g, "d", "Add", "", 2, 1);
	n->inputs[0] = b;
	n->inputs[1] = c;
	n->outputs[0] = d;
	cr_expect_eq(graph_toposort(g), 0, "%s", last_error());
}

Test(ir, toposort_reports_a_cycle)
{
	ValId va = graph_add_value(g, "a", VAL_NODE);
	ValId vb = graph_add_value(g, "b", VAL_NODE);
	Node *n = graph_add_node(g, "A", "Relu", "", 1, 1);
	n->inputs[0] = vb;
	n->outputs[0] = va;
	n = graph_add_node(g, "B", "Relu", "", 1, 1);
	n->inputs[0] = va;
	n->outputs[0] = vb;
	expect_fail(graph_toposort(g), "cycle through node");
}

Test(ir, toposort_reports_two_producers)
{
	ValId x = input("x");
	ValId a = unary("a", x);
	Node *n = graph_add_node(g, "again", "Relu", "", 1, 1);
	n->inputs[0] = x;
	n->outputs[0] = a;
	expect_fail(graph_toposort(g), "produced by two nodes, 'a' and 'again'");
}

Test(ir, toposort_follows_subgraph_outer_references)
{
	ValId x = input("x");
	ValId cond = graph_add_value(g, "cond", VAL_INPUT);
	/* The If comes first in the file, but its branch reads 'late',
	 * produced after it: the order must put 'late' first. */
	ValId out = graph_add_value(g, "out", VAL_NODE);
	Node *n = graph_add_node(g, "if", "If", "", 1, 1);
	n->inputs[0] = cond;
	n->outputs[0] = out;
	Graph *then = graph_new(&m->arena, "then", g);
	ValId ref = graph_add_value(then, "late", VAL_OUTER);
	then->vals[ref].outer = graph_add_value(g, "late", VAL_NODE);
	ValId r = unary_in(then, "t", "Relu", ref);
	then->outputs = arena_alloc(&m->arena, sizeof(ValId));
	then->outputs[0] = r;
	then->noutputs = 1;
	Attr *a = node_add_attr(g, &g->nodes[0], "then_branch", ATTR_GRAPH);
	a->g = then;
	Node *late = graph_add_node(g, "late", "Relu", "", 1, 1);
	late->inputs[0] = x;
	late->outputs[0] = then->vals[ref].outer;
	cr_assert_eq(graph_toposort(g), 0, "%s", last_error());
	cr_expect_str_eq(g->nodes[0].name, "late");
	cr_expect_str_eq(g->nodes[1].name, "if");
	cr_expect_eq(graph_verify(g), 0, "%s", last_error());
}

Test(ir, toposort_long_chain_does_not_recurse)
{
	ValId v = input("x");
	char name[32];
	for (int i = 0; i < 200000; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		v = unary(name, v);
	}
	/* reverse the nodes: worst case for a depth-first sort */
	for (int32_t i = 0, j = g->nnodes - 1; i < j; i++, j--) {
		Node t = g->nodes[i];
		g->nodes[i] = g->nodes[j];
		g->nodes[j] = t;
	}
	cr_assert_eq(graph_toposort(g), 0, "%s", last_error());
	cr_expect_str_eq(g->nodes[0].name, "n0");
	cr_expect_eq(graph_verify(g), 0, "%s", last_error());
}

/* ---- verifier failure cases ----------------------------------------------- */

Test(ir, verify_rejects_bad_input_index)
{
	ValId x = input("x");
	unary("a", x);
	cr_assert_eq(graph_toposort(g), 0);
	g->nodes[0].inputs[0] = 99;
	expect_fail(graph_verify(g), "refers to tensor 99");
}

Test(ir, verify_rejects_value_without_producer)
{
	input("x");
	graph_add_value(g, "orphan", VAL_NODE);
	expect_fail(graph_verify(g), "'orphan' has no producer");
}

Test(ir, verify_rejects_weight_without_data)
{
	graph_add_value(g, "w", VAL_WEIGHT);
	expect_fail(graph_verify(g), "weight 'w' has no data");
}

Test(ir, verify_rejects_unresolved_outer_reference)
{
	Graph *sub = graph_new(&m->arena, "body", g);
	ValId r = graph_add_value(sub, "y", VAL_OUTER);
	sub->vals[r].outer = 5; /* main has no value 5 */
	ValId x = input("x");
	unary("a", x);
	Attr *a = node_add_attr(g, &g->nodes[0], "body", ATTR_GRAPH);
	a->g = sub;
	cr_assert_eq(graph_toposort(g), 0);
	expect_fail(graph_verify(g), "outer reference 'y' does not resolve");
}

Test(ir, verify_rejects_rank_and_dims)
{
	ValId x = input("x");
	g->vals[x].shape.rank = MAX_RANK + 1;
	expect_fail(graph_verify(g), "rank 9 (max 8)");
	g->vals[x].shape.rank = 2;
	g->vals[x].shape.dims[1] = -7;
	expect_fail(graph_verify(g), "dim 1 = -7");
}

Test(ir, verify_rejects_duplicate_names)
{
	input("x");
	input("x");
	expect_fail(graph_verify(g), "two tensors are named 'x'");
}

Test(ir, verify_rejects_subgraph_with_wrong_parent)
{
	ValId x = input("x");
	unary("a", x);
	Attr *a = node_add_attr(g, &g->nodes[0], "body", ATTR_GRAPH);
	a->g = graph_new(&m->arena, "orphan", NULL);
	cr_assert_eq(graph_toposort(g), 0);
	expect_fail(graph_verify(g), "attribute 'body' has a bad subgraph");
}

Test(ir, verify_rejects_constant_mismatch)
{
	Shape s = shape_of(1, (int64_t[]){ 3 });
	ValId w = graph_add_value(g, "w", VAL_WEIGHT);
	g->vals[w].konst = tensor_new(&m->arena, "w", DT_FLOAT, &s, NULL);
	g->vals[w].dtype = DT_FLOAT;
	g->vals[w].shape = shape_of(1, (int64_t[]){ 4 });
	expect_fail(graph_verify(g), "'w' disagrees with its constant data");
}

/* ---- shapes and tensors --------------------------------------------------- */

Test(ir, shape_helpers)
{
	Shape s = shape_of(3, (int64_t[]){ 2, 3, 4 });
	cr_expect_eq(shape_numel(&s), 24);
	cr_expect_eq(shape_bytes(&s, DT_FLOAT), 96);
	s.dims[1] = -1;
	cr_expect_eq(shape_numel(&s), -1);
	Shape big = shape_of(3, (int64_t[]){ 1LL << 40, 1LL << 40, 2 });
	cr_expect_eq(shape_numel(&big), -1, "overflow not caught");
	char buf[64];
	cr_expect_str_eq(shape_str(&s, buf, sizeof(buf)), "[2,-1,4]");
	Shape u = shape_unknown();
	cr_expect_str_eq(shape_str(&u, buf, sizeof(buf)), "[?]");
	cr_expect_str_eq(dtype_name(DT_FLOAT), "float32");
	cr_expect_str_eq(dtype_name(DT_BOOL), "bool");
	cr_expect_null(dtype_name(99));
	cr_expect_null(tensor_new(&m->arena, "t", DT_FLOAT, &big, NULL));
}

Test(ir, op_table_lookup)
{
	cr_expect_eq(op_lookup("", "Conv"), OP_Conv);
	cr_expect_eq(op_lookup("ai.onnx", "Relu"), OP_Relu);
	cr_expect_eq(op_lookup("", "NoSuchOp"), OP_UNKNOWN);
	cr_expect_eq(op_lookup("com.microsoft", "Conv"), OP_UNKNOWN);
	cr_expect_eq(op_lookup(GEARC_DOMAIN, "Case"), OP_Case);
	cr_expect_eq(op_lookup("", "Case"), OP_UNKNOWN);
	cr_expect_str_eq(op_info[OP_Reshape].name, "Reshape");
	cr_expect_eq(op_info[OP_Reshape].view, VIEW_ALIAS);
	cr_expect_eq(op_info[OP_Conv].view, VIEW_NONE);
}

/* ---- cloning -------------------------------------------------------------- */

Test(ir, clone_shares_tensors_and_renames_nodes)
{
	ValId x = input("x");
	Shape s = shape_of(1, (int64_t[]){ 4 });
	ValId w = graph_add_value(g, "w", VAL_WEIGHT);
	g->vals[w].konst = tensor_new(&m->arena, "w", DT_FLOAT, &s, NULL);
	g->vals[w].dtype = DT_FLOAT;
	g->vals[w].shape = s;
	ValId sum = graph_add_value(g, "sum", VAL_NODE);
	Node *n = graph_add_node(g, "add", "Add", "", 2, 1);
	n->inputs[0] = x;
	n->inputs[1] = w;
	n->outputs[0] = sum;
	/* an If whose branch reads 'sum' from outside */
	ValId out = graph_add_value(g, "out", VAL_NODE);
	n = graph_add_node(g, "if", "If", "", 1, 1);
	n->inputs[0] = x;
	n->outputs[0] = out;
	Graph *then = graph_new(&m->arena, "then", g);
	ValId ref = graph_add_value(then, "sum", VAL_OUTER);
	then->vals[ref].outer = sum;
	unary_in(then, "t", "Relu", ref);
	node_add_attr(g, &g->nodes[1], "then_branch", ATTR_GRAPH)->g = then;
	cr_assert_eq(graph_toposort(g), 0, "%s", last_error());

	Graph *c = graph_clone(&m->arena, g, NULL, "_batch_3", "Batch_3");
	cr_assert_eq(graph_verify(c), 0, "%s", last_error());
	cr_expect_str_eq(c->nodes[0].name, "add_batch_3");
	cr_expect_str_eq(c->nodes[0].label, "Batch_3");
	cr_expect_eq(c->vals[w].konst, g->vals[w].konst, "weight copied");
	Graph *cthen = c->nodes[1].attrs[0].g;
	cr_expect_neq(cthen, then);
	cr_expect_eq(cthen->parent, c);
	cr_expect_str_eq(cthen->nodes[0].name, "t_batch_3");
	cr_expect_str_eq(cthen->nodes[0].label, "Batch_3");
	/* the clone is independent */
	c->nodes[0].inputs[1] = x;
	c->vals[x].shape = s;
	cr_expect_eq(g->nodes[0].inputs[1], w);
	cr_expect_eq(g->vals[x].shape.rank, -1);
	cr_expect_str_eq(g->nodes[0].name, "add");
	cr_expect_null(g->nodes[0].label);
}

/* A value added into a slot a shrunk list left behind (graph_dce
 * renumbers and shrinks it; an export taking a form back truncates it)
 * starts clean: no konst, dtype or flags of the value that was there. */
Test(ir, add_value_reuses_a_slot_clean)
{
	Shape s = shape_of(0, NULL);
	float one = 1;
	Tensor *t = tensor_new(&m->arena, "k", DT_FLOAT, &s, &one);
	ValId w = graph_add_weight(g, "k", t);
	g->vals[w].flags = VF_GRAPH_OUT;
	g->nvals--; /* taken back, its slot kept */
	ValId v = graph_add_value(g, "v", VAL_NODE);
	cr_assert_eq(v, w);
	cr_expect_null(g->vals[v].konst);
	cr_expect_eq(g->vals[v].dtype, DT_UNDEFINED);
	cr_expect_eq(g->vals[v].flags, 0);
	cr_expect_eq(g->vals[v].shape.rank, -1);
}
