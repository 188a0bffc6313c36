/* tests/test_infer.c - shape and dtype inference (compiler/infer.c) and the
 * infer hooks of compiler/ops/. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "compiler/ops/opimpl.h"
#include "testutil.h"

#define BIG (INT64_C(1) << 62)

/* A node op on x, named op (op_K for the K-th node if that is taken);
 * returns its first output. */
static ValId unary(Graph *g, const char *op, ValId x)
{
	char name[64];
	snprintf(name, sizeof(name), "%s", op);
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i].name, op))
			snprintf(name, sizeof(name), "%s_%d", op, g->nnodes);
	return tu_out(tu_node(g, op, name, IDS(x), 1), 0);
}

/* ---- the driver -------------------------------------------------------- */

Test(infer, missing_hook_names_node_and_op)
{
	Model *m = tu_model(13);
	ValId x = tu_input(m->graph, "x", DT_FLOAT, SHAPE(2));
	tu_node(m->graph, "FancyOp", "fancy", IDS(x), 1);
	infer_fails(m, "node 'fancy' (FancyOp): shape inference for FancyOp "
		       "is not supported");
	model_free(m);
}

Test(infer, missing_hook_mentions_foreign_domain)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2));
	Node *n = graph_add_node(g, "ms", "Relu", "com.microsoft", 1, 1);
	n->inputs[0] = x;
	n->outputs[0] = graph_add_value(g, "y", VAL_NODE);
	g->vals[n->outputs[0]].producer = 0;
	infer_fails(m, "node 'ms' (Relu): shape inference for Relu (domain "
		       "'com.microsoft') is not supported");
	model_free(m);
}

Test(infer, input_without_dtype)
{
	Model *m = tu_model(13);
	ValId x = tu_input(m->graph, "x", DT_UNDEFINED, SHAPE(2));
	unary(m->graph, "Relu", x);
	infer_fails(m, "node 'Relu' (Relu): input 0 ('x') has no known dtype");
	model_free(m);
}

Test(infer, missing_required_input)
{
	Model *m = tu_model(13);
	ValId x = tu_input(m->graph, "x", DT_FLOAT, SHAPE(2, 3));
	tu_node(m->graph, "MatMul", "mm", IDS(x, -1), 1);
	infer_fails(m, "node 'mm' (MatMul): required input 1 is missing");
	model_free(m);
}

Test(infer, declared_shapes_are_overridden)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(4, 5));
	ValId y = unary(g, "Relu", x);
	g->vals[y].dtype = DT_DOUBLE; /* as from a stale value_info */
	g->vals[y].shape = SHAPE(1, 1, 1);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[4,5]");
	cr_assert_eq(tu_dtype(g, y), DT_FLOAT);
	model_free(m);
}

Test(infer, unknown_rank_propagates)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, UNKNOWN);
	ValId w = tu_weight(g, "w", DT_FLOAT, SHAPE(8, 3, 3, 3));
	ValId r = unary(g, "Relu", x);
	ValId a = tu_out(tu_node(g, "Add", "add", IDS(x, r), 1), 0);
	ValId cv = tu_out(tu_node(g, "Conv", "conv", IDS(x, w), 1), 0);
	Node *p = tu_node(g, "MaxPool", "pool", IDS(x), 1);
	tu_ints(g, p, "kernel_shape", INTS(2, 2));
	ValId pool = tu_out(p, 0);
	Node *f = tu_node(g, "Flatten", "flat", IDS(x), 1);
	tu_int(g, f, "axis", 0);
	ValId flat = tu_out(f, 0);
	ValId mm = tu_out(tu_node(g, "MatMul", "mm", IDS(x, x), 1), 0);
	ValId gw = tu_weight(g, "gw", DT_FLOAT, SHAPE(4, 5));
	ValId gemm = tu_out(tu_node(g, "Gemm", "gemm", IDS(x, gw), 1), 0);
	Node *t = tu_node(g, "Transpose", "tr", IDS(x), 1);
	tu_ints(g, t, "perm", INTS(2, 0, 1));
	ValId tr = tu_out(t, 0);
	ValId tgt = tu_weight_ints(g, "tgt", INTS(0, -1));
	ValId rs = tu_out(tu_node(g, "Reshape", "rs", IDS(x, tgt), 1), 0);
	Node *cn = tu_node(g, "Concat", "cat", IDS(x, x), 1);
	tu_int(g, cn, "axis", 1);
	ValId cat = tu_out(cn, 0);
	ValId sh = unary(g, "Shape", x);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, r), "[?]");
	cr_assert_str_eq(tu_shape(g, a), "[?]");
	cr_assert_str_eq(tu_shape(g, cv), "[-1,8,-1,-1]");
	cr_assert_str_eq(tu_shape(g, pool), "[-1,-1,-1,-1]");
	cr_assert_str_eq(tu_shape(g, flat), "[1,-1]");
	cr_assert_str_eq(tu_shape(g, mm), "[?]");
	cr_assert_str_eq(tu_shape(g, gemm), "[-1,5]");
	cr_assert_str_eq(tu_shape(g, tr), "[-1,-1,-1]");
	cr_assert_str_eq(tu_shape(g, rs), "[-1,-1]");
	cr_assert_str_eq(tu_shape(g, cat), "[?]");
	cr_assert_str_eq(tu_shape(g, sh), "[-1]");
	cr_assert_null(g->vals[sh].konst);
	cr_assert_eq(tu_dtype(g, sh), DT_INT64);
	cr_assert_eq(tu_dtype(g, cv), DT_FLOAT);
	model_free(m);
}

Test(infer, unknown_dims_stay_unknown)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(-1, 3, -1, 32));
	ValId w = tu_weight(g, "w", DT_FLOAT, SHAPE(8, 3, 3, 3));
	Node *n = tu_node(g, "Conv", "conv", IDS(x, w), 1);
	tu_ints(g, n, "strides", INTS(2, 2));
	ValId y = tu_out(n, 0);
	Node *s = tu_node(g, "Conv", "same", IDS(x, w), 1);
	tu_str(g, s, "auto_pad", "SAME_UPPER");
	ValId z = tu_out(s, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[-1,8,-1,15]");
	cr_assert_str_eq(tu_shape(g, z), "[-1,8,-1,32]");
	model_free(m);
}

Test(infer, absurd_dims_are_errors)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(BIG, 8));
	unary(g, "Relu", x);
	infer_fails(m, "node 'Relu' (Relu): output 0 ('Relu:0') of shape "
		       "[4611686018427387904,8] is too large (its size "
		       "overflows int64)");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(BIG, 2, 3));
	tu_int(g, tu_node(g, "Flatten", "flat", IDS(x), 1), "axis", 2);
	infer_fails(m, "node 'flat' (Flatten): dims 4611686018427387904 x 2 "
		       "overflow int64");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, UNKNOWN);
	ValId t = tu_weight_ints(g, "t", INTS(BIG, 4));
	tu_node(g, "Reshape", "rs", IDS(x, t), 1);
	infer_fails_with(m, "node 'rs' (Reshape): dims 4611686018427387904 x "
			    "4 overflow int64");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 1, INT64_MAX - 1));
	ValId w = tu_weight(g, "w", DT_FLOAT, SHAPE(1, 1, 3));
	Node *n = tu_node(g, "Conv", "conv", IDS(x, w), 1);
	tu_ints(g, n, "pads", INTS(BIG, BIG));
	infer_fails(m, "node 'conv' (Conv): spatial axis 0: window arithmetic "
		       "overflows int64");
	model_free(m);
}

Test(infer, dtype_errors)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_INT64, SHAPE(1, 3, 8, 8));
	ValId w = tu_weight(g, "w", DT_INT64, SHAPE(4, 3, 3, 3));
	tu_node(g, "Conv", "conv", IDS(x, w), 1);
	infer_fails(m, "node 'conv' (Conv): input 0 ('x') has dtype int64, "
		       "expected float32, float16, float64 or bfloat16");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_INT32, SHAPE(3));
	unary(g, "Sigmoid", x);
	infer_fails_with(m, "node 'Sigmoid' (Sigmoid): input 0 ('x') has "
			    "dtype int32, expected");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(3));
	ValId y = tu_input(g, "y", DT_DOUBLE, SHAPE(3));
	tu_node(g, "Add", "add", IDS(x, y), 1);
	infer_fails(m, "node 'add' (Add): input 1 ('y') has dtype float64, "
		       "but input 0 ('x') has float32; expected the same");
	model_free(m);
}

Test(infer, data_dependent_dims_are_marked)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 4));
	ValId t = tu_input(g, "t", DT_INT64, SHAPE(2));
	ValId r = tu_out(tu_node(g, "Reshape", "rs", IDS(x, t), 1), 0);
	ValId y = unary(g, "Relu", r);
	ValId z = unary(g, "Relu", x);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, r), "[-1,-1]");
	cr_assert(g->vals[r].flags & VF_DATA_DEP);
	cr_assert(g->vals[y].flags & VF_DATA_DEP);
	cr_assert_not(g->vals[z].flags & VF_DATA_DEP);
	model_free(m);
}

/* Shape's fold hook makes the Reshape target known in the same walk. */
Test(infer, shape_folds_into_reshape_target)
{
	Model *m = tu_model(15);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 4));
	ValId y = tu_input(g, "y", DT_FLOAT, SHAPE(6, 4));
	ValId s = unary(g, "Shape", x);
	ValId r = tu_out(tu_node(g, "Reshape", "rs", IDS(y, s), 1), 0);
	Node *n = tu_node(g, "Shape", "tail", IDS(x), 1);
	tu_int(g, n, "start", -2);
	ValId tail = tu_out(n, 0);
	n = tu_node(g, "Shape", "head", IDS(x), 1);
	tu_int(g, n, "end", -1);
	ValId head = tu_out(n, 0);
	n = tu_node(g, "Shape", "none", IDS(x), 1);
	tu_int(g, n, "start", 5);
	ValId none = tu_out(n, 0);
	ValId sz = unary(g, "Size", x);
	ValId id = unary(g, "Identity", s);
	infer_ok(m);
	const Tensor *k = g->vals[s].konst;
	cr_assert_not_null(k);
	cr_assert_eq(k->dtype, DT_INT64);
	cr_assert_eq(shape_numel(&k->shape), 3);
	cr_assert_eq(tensor_get_i64(k, 0), 2);
	cr_assert_eq(tensor_get_i64(k, 1), 3);
	cr_assert_eq(tensor_get_i64(k, 2), 4);
	cr_assert_str_eq(tu_shape(g, r), "[2,3,4]");
	cr_assert_not(g->vals[r].flags & VF_DATA_DEP);
	cr_assert_str_eq(tu_shape(g, tail), "[2]");
	cr_assert_eq(tensor_get_i64(g->vals[tail].konst, 0), 3);
	cr_assert_eq(tensor_get_i64(g->vals[tail].konst, 1), 4);
	cr_assert_str_eq(tu_shape(g, head), "[2]");
	cr_assert_eq(tensor_get_i64(g->vals[head].konst, 0), 2);
	cr_assert_eq(tensor_get_i64(g->vals[head].konst, 1), 3);
	cr_assert_str_eq(tu_shape(g, none), "[0]");
	cr_assert_not_null(g->vals[none].konst);
	cr_assert_str_eq(tu_shape(g, sz), "[]");
	cr_assert_eq(tensor_get_i64(g->vals[sz].konst, 0), 24);
	cr_assert_eq(g->vals[id].konst, k);
	cr_assert_eq(graph_verify(g), 0, "%s", last_error());
	model_free(m);
}

Test(infer, fold_limit_is_honoured)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	m->fold_limit = 16;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 4));
	ValId s = unary(g, "Shape", x);      /* 24 bytes: over the limit */
	ValId sz = unary(g, "Size", x);      /* 8 bytes */
	cr_assert_eq(infer_graph(m, g), 0, "%s", last_error());
	cr_assert_null(g->vals[s].konst);
	cr_assert_str_eq(tu_shape(g, s), "[3]");
	cr_assert_not_null(g->vals[sz].konst);
	model_free(m);
}

/* y = Cast(Shape(x)) + z compiled by run_passes with fold limit limit;
 * returns how many Shape nodes are left. */
static int shapes_left_after_compile(int64_t limit)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 4));
	ValId z = tu_input(g, "z", DT_FLOAT, SHAPE(3));
	Node *c = tu_node(g, "Cast", "c", IDS(unary(g, "Shape", x)), 1);
	tu_int(g, c, "to", DT_FLOAT);
	ValId y = tu_out(tu_node(g, "Add", "y", IDS(tu_out(c, 0), z), 1), 0);
	g->outputs = arena_array(g->arena, 1, sizeof(ValId));
	g->outputs[0] = y;
	g->noutputs = 1;
	g->vals[y].flags |= VF_GRAPH_OUT;
	PassOptions o = { .jobs = 1,
			  .fold_limit = limit };
	cr_assert_eq(run_passes(m, &o), 0, "%s", last_error());
	int n = 0;
	for (int32_t i = 0; i < m->graph->nnodes; i++)
		n += m->graph->nodes[i].op == OP_Shape;
	model_free(m);
	return n;
}

/* The pipeline folds with PassOptions.fold_limit, not a limit of its
 * own: Shape's 24 bytes fold at the default 64 KiB, not at 16. */
Test(infer, pipeline_honours_fold_limit)
{
	cr_expect_eq(shapes_left_after_compile(0), 0);
	cr_expect_eq(shapes_left_after_compile(64 * 1024), 0);
	cr_expect_eq(shapes_left_after_compile(16), 1);
}

Test(infer, shape_of_unknown_dims_is_not_folded)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(-1, 3));
	ValId s = unary(g, "Shape", x);
	ValId sz = unary(g, "Size", x);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, s), "[2]");
	cr_assert_null(g->vals[s].konst);
	cr_assert_null(g->vals[sz].konst);
	model_free(m);
}

/* A subgraph's outer references take their parent's dtype, shape and
 * contents; its nodes are then inferred with the caller's settings. */
Test(infer, subgraph_outer_values)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3));
	ValId t = tu_weight_ints(g, "t", INTS(3, 2));
	Node *n = tu_node(g, "Identity", "id", IDS(x), 1);
	Graph *sub = graph_new(g->arena, "body", g);
	node_add_attr(g, n, "body", ATTR_GRAPH)->g = sub;
	ValId ox = graph_add_value(sub, "x", VAL_OUTER);
	sub->vals[ox].outer = x;
	ValId ot = graph_add_value(sub, "t", VAL_OUTER);
	sub->vals[ot].outer = t;
	ValId r = tu_out(tu_node(sub, "Reshape", "inner", IDS(ox, ot), 1), 0);
	infer_ok(m);
	OpCtx c = { .model = m, .g = g, .n = &g->nodes[0], .opset = 13,
		    .fold_limit = 1024, .arena = g->arena };
	cr_assert_eq(op_infer_subgraph(&c, sub), 0, "%s", last_error());
	cr_assert_eq(sub->vals[ox].dtype, DT_FLOAT);
	cr_assert_str_eq(tu_shape(sub, ox), "[2,3]");
	cr_assert_eq(sub->vals[ot].konst, g->vals[t].konst);
	cr_assert_str_eq(tu_shape(sub, r), "[3,2]");

	/* a failure inside names the node that owns the subgraph */
	tu_node(sub, "Softmax", "bad", IDS(ot), 1);
	cr_assert_eq(op_infer_subgraph(&c, sub), -1);
	cr_assert_str_eq(last_error(),
			 "node 'id' (Identity): subgraph 'body': node 'bad' "
			 "(Softmax): input 0 ('t') has dtype int64, expected "
			 "float32, float16, float64 or bfloat16");
	model_free(m);
}

/* ---- elementwise ------------------------------------------------------- */

Test(infer, unary_ops_keep_shape_and_dtype)
{
	static const char *ops[] = { "Relu",  "Sigmoid",  "Tanh",     "LeakyRelu",
				     "Elu",   "Selu",     "Softplus", "Softsign",
				     "Abs",   "Neg",      "Exp",      "Log",
				     "Sqrt",  "Ceil",     "Floor",    "Clip",
				     "Identity", "Softmax", "LogSoftmax" };
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		Model *m = tu_model(13);
		Graph *g = m->graph;
		ValId x = tu_input(g, "x", DT_FLOAT16, SHAPE(2, -1, 5));
		ValId y = unary(g, ops[i], x);
		infer_ok(m);
		cr_assert_str_eq(tu_shape(g, y), "[2,-1,5]", "%s", ops[i]);
		cr_assert_eq(tu_dtype(g, y), DT_FLOAT16, "%s", ops[i]);
		model_free(m);
	}
}

Test(infer, unary_dtype_sets)
{
	Model *m = tu_model(14);
	Graph *g = m->graph;
	ValId i32 = tu_input(g, "i", DT_INT32, SHAPE(3));
	ValId u8 = tu_input(g, "u", DT_UINT8, SHAPE(3));
	ValId relu = unary(g, "Relu", i32);
	ValId abs = unary(g, "Abs", u8);
	ValId clip = unary(g, "Clip", u8);
	infer_ok(m);
	cr_assert_eq(tu_dtype(g, relu), DT_INT32);
	cr_assert_eq(tu_dtype(g, abs), DT_UINT8);
	cr_assert_eq(tu_dtype(g, clip), DT_UINT8);
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	u8 = tu_input(g, "u", DT_UINT8, SHAPE(3));
	unary(g, "Neg", u8);
	infer_fails_with(m, "node 'Neg' (Neg): input 0 ('u') has dtype uint8");
	model_free(m);
}

Test(infer, clip_bounds_must_be_scalars)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(4, 4));
	ValId lo = tu_weight(g, "lo", DT_FLOAT, SCALAR);
	ValId hi = tu_weight(g, "hi", DT_FLOAT, SHAPE(1));
	ValId y = tu_out(tu_node(g, "Clip", "clip", IDS(x, lo, hi), 1), 0);
	ValId z = tu_out(tu_node(g, "Clip", "clip2", IDS(x, -1, hi), 1), 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[4,4]");
	cr_assert_str_eq(tu_shape(g, z), "[4,4]");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(4, 4));
	lo = tu_weight(g, "lo", DT_FLOAT, SHAPE(2));
	tu_node(g, "Clip", "clip", IDS(x, lo), 1);
	infer_fails(m, "node 'clip' (Clip): input 1 ('lo') has shape [2], "
		       "expected a scalar");
	model_free(m);
}

Test(infer, dropout_mask)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(3, 7));
	Node *n = tu_node(g, "Dropout", "drop", IDS(x), 2);
	ValId y = tu_out(n, 0), mask = tu_out(n, 1);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[3,7]");
	cr_assert_eq(tu_dtype(g, y), DT_FLOAT);
	cr_assert_str_eq(tu_shape(g, mask), "[3,7]");
	cr_assert_eq(tu_dtype(g, mask), DT_BOOL);
	model_free(m);

	m = tu_model(7); /* before opset 10 the mask has the input's dtype */
	g = m->graph;
	x = tu_input(g, "x", DT_DOUBLE, SHAPE(3, 7));
	n = tu_node(g, "Dropout", "drop", IDS(x), 2);
	mask = tu_out(n, 1);
	infer_ok(m);
	cr_assert_eq(tu_dtype(g, mask), DT_DOUBLE);
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(3, 7));
	ValId ratio = tu_weight(g, "ratio", DT_FLOAT, SCALAR);
	ValId train = tu_weight(g, "train", DT_FLOAT, SCALAR);
	tu_node(g, "Dropout", "drop", IDS(x, ratio, train), 1);
	infer_fails_with(m, "node 'drop' (Dropout): input 2 ('train') has "
			    "dtype float32, expected bool");
	model_free(m);
}

Test(infer, softmax_axis)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 5));
	Node *n = tu_node(g, "Softmax", "sm", IDS(x), 1);
	tu_int(g, n, "axis", 2);
	infer_fails(m, "node 'sm' (Softmax): axis 2 is out of range for rank "
		       "2 (expected -2..1)");
	model_free(m);

	m = tu_model(11); /* the default axis is 1 before opset 13 */
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(5));
	unary(g, "LogSoftmax", x);
	infer_fails_with(m, "axis 1 is out of range for rank 1");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(5));
	ValId y = unary(g, "LogSoftmax", x);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[5]");
	model_free(m);
}

/* Add of shapes a and b gives want ("error" for a failure). */
static void check_broadcast(Shape a, Shape b, const char *want)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "a", DT_FLOAT, a);
	ValId y = tu_input(g, "b", DT_FLOAT, b);
	ValId z = tu_out(tu_node(g, "Add", "add", IDS(x, y), 1), 0);
	if (!strcmp(want, "error")) {
		cr_assert_eq(infer_graph(m, g), -1, "broadcast succeeded: %s",
			     tu_shape(g, z));
	} else {
		infer_ok(m);
		cr_assert_str_eq(tu_shape(g, z), want);
	}
	model_free(m);
}

Test(infer, broadcasting)
{
	check_broadcast(SHAPE(2, 3, 4), SCALAR, "[2,3,4]");
	check_broadcast(SCALAR, SCALAR, "[]");
	check_broadcast(SHAPE(4), SHAPE(2, 3, 4), "[2,3,4]");
	check_broadcast(SHAPE(3, 1), SHAPE(1, 4), "[3,4]");
	check_broadcast(SHAPE(2, 1, 5), SHAPE(7, 1), "[2,7,5]");
	check_broadcast(SHAPE(2, 1), SHAPE(2, 0), "[2,0]");
	check_broadcast(SHAPE(-1, 3), SHAPE(4, 1), "[4,3]");
	check_broadcast(SHAPE(-1), SHAPE(1), "[-1]");
	check_broadcast(SHAPE(-1, 5), SHAPE(-1, 1), "[-1,5]");
	check_broadcast(UNKNOWN, SHAPE(3), "[?]");
	check_broadcast(SHAPE(2, 3), SHAPE(4), "error");
	check_broadcast(SHAPE(2, 3), SHAPE(3, 3), "error");
	check_broadcast(SHAPE(0), SHAPE(2), "error");
}

Test(infer, broadcast_error_names_node_and_shapes)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "a", DT_FLOAT, SHAPE(2, 3));
	ValId y = tu_input(g, "b", DT_FLOAT, SHAPE(5, 4));
	tu_node(g, "Mul", "mul", IDS(x, y), 1);
	infer_fails(m, "node 'mul' (Mul): shapes [2,3] and [5,4] cannot be "
		       "broadcast: 2 vs 5 at axis 0 of the result");
	model_free(m);
}

Test(infer, legacy_broadcast_before_opset_7)
{
	Model *m = tu_model(6);
	Graph *g = m->graph;
	ValId a = tu_input(g, "a", DT_FLOAT, SHAPE(2, 3, 4));
	ValId b = tu_input(g, "b", DT_FLOAT, SHAPE(3, 4));
	ValId c = tu_input(g, "c", DT_FLOAT, SHAPE(2, 3));
	Node *n = tu_node(g, "Add", "suffix", IDS(a, b), 1);
	tu_int(g, n, "broadcast", 1);
	ValId y = tu_out(n, 0);
	n = tu_node(g, "Sub", "axis0", IDS(a, c), 1);
	tu_int(g, n, "broadcast", 1);
	tu_int(g, n, "axis", 0);
	ValId z = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[2,3,4]");
	cr_assert_str_eq(tu_shape(g, z), "[2,3,4]");
	model_free(m);

	m = tu_model(6);
	g = m->graph;
	a = tu_input(g, "a", DT_FLOAT, SHAPE(2, 3, 4));
	b = tu_input(g, "b", DT_FLOAT, SHAPE(3, 4));
	tu_node(g, "Add", "add", IDS(a, b), 1); /* broadcast=0 */
	infer_fails(m, "node 'add' (Add): input 1 ('b', [3,4]) does not match "
		       "input 0 ('a', [2,3,4]) under opset 6 broadcasting");
	model_free(m);
}

Test(infer, pow_and_prelu)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 8, 4, 4));
	ValId e = tu_input(g, "e", DT_INT64, SCALAR);
	ValId slope = tu_weight(g, "slope", DT_FLOAT, SHAPE(8, 1, 1));
	ValId p = tu_out(tu_node(g, "Pow", "pow", IDS(x, e), 1), 0);
	ValId r = tu_out(tu_node(g, "PRelu", "prelu", IDS(x, slope), 1), 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, p), "[1,8,4,4]");
	cr_assert_eq(tu_dtype(g, p), DT_FLOAT);
	cr_assert_str_eq(tu_shape(g, r), "[1,8,4,4]");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 8, 4, 4));
	slope = tu_weight(g, "slope", DT_FLOAT, SHAPE(8));
	tu_node(g, "PRelu", "prelu", IDS(x, slope), 1);
	infer_fails(m, "node 'prelu' (PRelu): input 1 ('slope') has shape [8], "
		       "which does not broadcast to [1,8,4,4]");
	model_free(m);

	m = tu_model(7); /* the exponent's dtype may differ from opset 12 */
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(3));
	e = tu_input(g, "e", DT_INT64, SCALAR);
	tu_node(g, "Pow", "pow", IDS(x, e), 1);
	infer_fails_with(m, "node 'pow' (Pow): input 1 ('e') has dtype int64");
	model_free(m);
}

/* ---- Conv -------------------------------------------------------------- */

/* Conv of x by w with the attributes set by fn; returns Y's shape. */
typedef void (*AttrFn)(Graph *g, Node *n);

static const char *conv_shape(Shape x, Shape w, AttrFn fn)
{
	static char buf[160];
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId xi = tu_input(g, "x", DT_FLOAT, x);
	ValId wi = tu_weight(g, "w", DT_FLOAT, w);
	Node *n = tu_node(g, "Conv", "conv", IDS(xi, wi), 1);
	ValId y = tu_out(n, 0);
	if (fn)
		fn(g, n);
	if (infer_graph(m, g) < 0)
		snprintf(buf, sizeof(buf), "error: %s", last_error());
	else
		snprintf(buf, sizeof(buf), "%s", tu_shape(g, y));
	model_free(m);
	return buf;
}

static void pads3_stride2(Graph *g, Node *n)
{
	tu_ints(g, n, "pads", INTS(3, 3, 3, 3));
	tu_ints(g, n, "strides", INTS(2, 2));
}

static void dilation2(Graph *g, Node *n)
{
	tu_ints(g, n, "dilations", INTS(2, 2));
}

static void asym_pads(Graph *g, Node *n)
{
	tu_ints(g, n, "pads", INTS(0, 1, 2, 3));
	tu_ints(g, n, "strides", INTS(1, 2));
}

static void depthwise(Graph *g, Node *n)
{
	tu_int(g, n, "group", 32);
	tu_ints(g, n, "pads", INTS(1, 1, 1, 1));
}

static void group4(Graph *g, Node *n) { tu_int(g, n, "group", 4); }

static void same_upper_s2(Graph *g, Node *n)
{
	tu_str(g, n, "auto_pad", "SAME_UPPER");
	tu_ints(g, n, "strides", INTS(2, 2));
}

static void same_lower_s2(Graph *g, Node *n)
{
	tu_str(g, n, "auto_pad", "SAME_LOWER");
	tu_ints(g, n, "strides", INTS(2, 2));
}

static void valid_s2(Graph *g, Node *n)
{
	tu_str(g, n, "auto_pad", "VALID");
	tu_ints(g, n, "strides", INTS(2, 2));
}

static void pads1(Graph *g, Node *n)
{
	tu_ints(g, n, "pads", INTS(1, 1, 1, 1, 1, 1));
}

static void kernel_5x5(Graph *g, Node *n)
{
	tu_ints(g, n, "kernel_shape", INTS(5, 5));
}

static void kernel_3x3(Graph *g, Node *n)
{
	tu_ints(g, n, "kernel_shape", INTS(3, 3));
}

static void same_with_pads(Graph *g, Node *n)
{
	tu_str(g, n, "auto_pad", "SAME_UPPER");
	tu_ints(g, n, "pads", INTS(1, 1, 1, 1));
}

static void bad_auto_pad(Graph *g, Node *n) { tu_str(g, n, "auto_pad", "SAME"); }

static void zero_stride(Graph *g, Node *n)
{
	tu_ints(g, n, "strides", INTS(1, 0));
}

static void short_pads(Graph *g, Node *n) { tu_ints(g, n, "pads", INTS(1, 1)); }

Test(infer, conv_shapes)
{
	/* (224 + 6 - 7) / 2 + 1 = 112 */
	cr_assert_str_eq(conv_shape(SHAPE(1, 3, 224, 224), SHAPE(64, 3, 7, 7),
				    pads3_stride2),
			 "[1,64,112,112]");
	cr_assert_str_eq(conv_shape(SHAPE(2, 3, 32, 32), SHAPE(8, 3, 3, 3), NULL),
			 "[2,8,30,30]");
	/* extent (3 - 1) * 2 + 1 = 5: 32 - 5 + 1 = 28 */
	cr_assert_str_eq(conv_shape(SHAPE(1, 3, 32, 32), SHAPE(8, 3, 3, 3),
				    dilation2),
			 "[1,8,28,28]");
	/* H: 10 + 0 + 2 - 3 + 1 = 10; W: (10 + 1 + 3 - 3) / 2 + 1 = 6 */
	cr_assert_str_eq(conv_shape(SHAPE(1, 3, 10, 10), SHAPE(4, 3, 3, 3),
				    asym_pads),
			 "[1,4,10,6]");
	cr_assert_str_eq(conv_shape(SHAPE(1, 32, 16, 16), SHAPE(32, 1, 3, 3),
				    depthwise),
			 "[1,32,16,16]");
	cr_assert_str_eq(conv_shape(SHAPE(1, 8, 5, 5), SHAPE(12, 2, 1, 1),
				    group4),
			 "[1,12,5,5]");
	/* SAME: ceil(15 / 2) = 8; VALID: (15 - 3) / 2 + 1 = 7 */
	cr_assert_str_eq(conv_shape(SHAPE(1, 3, 15, 15), SHAPE(8, 3, 3, 3),
				    same_upper_s2),
			 "[1,8,8,8]");
	cr_assert_str_eq(conv_shape(SHAPE(1, 3, 15, 16), SHAPE(8, 3, 4, 4),
				    same_lower_s2),
			 "[1,8,8,8]");
	cr_assert_str_eq(conv_shape(SHAPE(1, 3, 15, 16), SHAPE(8, 3, 3, 3),
				    valid_s2),
			 "[1,8,7,7]");
	cr_assert_str_eq(conv_shape(SHAPE(2, 4, 10), SHAPE(6, 4, 3), NULL),
			 "[2,6,8]");
	cr_assert_str_eq(conv_shape(SHAPE(1, 2, 8, 8, 8), SHAPE(4, 2, 3, 3, 3),
				    pads1),
			 "[1,4,8,8,8]");
}

Test(infer, conv_kernel_from_attribute)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 3, 9, 9));
	ValId w = tu_input(g, "w", DT_FLOAT, SHAPE(4, 3, -1, -1));
	Node *n = tu_node(g, "Conv", "conv", IDS(x, w), 1);
	kernel_5x5(g, n);
	ValId y = tu_out(n, 0);
	n = tu_node(g, "Conv", "conv2", IDS(x, w), 1);
	ValId z = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[1,4,5,5]");
	cr_assert_str_eq(tu_shape(g, z), "[1,4,-1,-1]");
	model_free(m);
}

Test(infer, conv_errors)
{
	cr_assert_str_eq(conv_shape(SHAPE(1, 3, 9, 9), SHAPE(4, 3, 3, 3),
				    kernel_5x5),
			 "error: node 'conv' (Conv): kernel_shape[0] is 5, but "
			 "weight 'w' has 3");
	cr_assert_str_eq(conv_shape(SHAPE(1, 4, 9, 9), SHAPE(4, 3, 3, 3), NULL),
			 "error: node 'conv' (Conv): input 'x' has 4 channels, "
			 "but weight 'w' expects 3 (3 per group x group 1)");
	cr_assert_str_eq(conv_shape(SHAPE(1, 8, 5, 5), SHAPE(10, 2, 1, 1),
				    group4),
			 "error: node 'conv' (Conv): weight 'w' has 10 output "
			 "channels, not a multiple of group 4");
	cr_assert_str_eq(conv_shape(SHAPE(1, 3, 2, 9), SHAPE(4, 3, 3, 3), NULL),
			 "error: node 'conv' (Conv): spatial axis 0: input "
			 "size 2 with pads 0+0 is smaller than the window "
			 "extent 3");
	cr_assert_str_eq(conv_shape(SHAPE(1, 3, 9, 9), SHAPE(4, 3, 3), NULL),
			 "error: node 'conv' (Conv): input 1 ('w') has rank 3, "
			 "but input 0 ('x') has rank 4; expected the same");
	cr_assert_str_eq(conv_shape(SHAPE(3, 9), SHAPE(4, 3), NULL),
			 "error: node 'conv' (Conv): input 0 ('x') has rank 2, "
			 "expected 3 to 8");
	cr_assert_str_eq(conv_shape(SHAPE(1, 3, 9, 9), SHAPE(4, 3, 3, 3),
				    same_with_pads),
			 "error: node 'conv' (Conv): pads cannot be used with "
			 "auto_pad=SAME_UPPER");
	cr_assert_str_eq(conv_shape(SHAPE(1, 3, 9, 9), SHAPE(4, 3, 3, 3),
				    bad_auto_pad),
			 "error: node 'conv' (Conv): auto_pad is 'SAME', "
			 "expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");
	cr_assert_str_eq(conv_shape(SHAPE(1, 3, 9, 9), SHAPE(4, 3, 3, 3),
				    zero_stride),
			 "error: node 'conv' (Conv): strides[1] is 0, expected "
			 ">= 1");
	cr_assert_str_eq(conv_shape(SHAPE(1, 3, 9, 9), SHAPE(4, 3, 3, 3),
				    short_pads),
			 "error: node 'conv' (Conv): pads has 2 values, "
			 "expected 4");
	cr_assert_str_eq(conv_shape(SHAPE(1, 3, 9, 9), SHAPE(4, 3, 3, 3),
				    kernel_3x3),
			 "[1,4,7,7]");
}

Test(infer, conv_bias)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 3, 9, 9));
	ValId w = tu_weight(g, "w", DT_FLOAT, SHAPE(4, 3, 3, 3));
	ValId b = tu_weight(g, "b", DT_FLOAT, SHAPE(5));
	tu_node(g, "Conv", "conv", IDS(x, w, b), 1);
	infer_fails(m, "node 'conv' (Conv): bias 'b' has 5 values, expected 4 "
		       "(output channels)");
	model_free(m);
}

/* ---- pooling ----------------------------------------------------------- */

/* pool_shape(op, input, kernel, stride, pads (4 values or NULL),
 * ceil_mode, auto_pad or NULL) for 2-D pools with a square window. */
static const char *pool_shape(const char *op, Shape x, int64_t k, int64_t s,
			      const int64_t *pads, int ceil_mode,
			      const char *auto_pad)
{
	static char buf[160];
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId xi = tu_input(g, "x", DT_FLOAT, x);
	Node *n = tu_node(g, op, "pool", IDS(xi), 1);
	ValId y = tu_out(n, 0);
	tu_ints(g, n, "kernel_shape", INTS(k, k));
	tu_ints(g, n, "strides", INTS(s, s));
	if (pads)
		tu_ints(g, n, "pads", pads, 4);
	if (ceil_mode)
		tu_int(g, n, "ceil_mode", 1);
	if (auto_pad)
		tu_str(g, n, "auto_pad", auto_pad);
	if (infer_graph(m, g) < 0)
		snprintf(buf, sizeof(buf), "error: %s", last_error());
	else
		snprintf(buf, sizeof(buf), "%s", tu_shape(g, y));
	model_free(m);
	return buf;
}

Test(infer, pool_floor_and_ceil)
{
	cr_assert_str_eq(pool_shape("MaxPool", SHAPE(1, 1, 5, 5), 2, 2, NULL,
				    0, NULL),
			 "[1,1,2,2]");
	cr_assert_str_eq(pool_shape("MaxPool", SHAPE(1, 1, 5, 5), 2, 2, NULL,
				    1, NULL),
			 "[1,1,3,3]");
	cr_assert_str_eq(pool_shape("AveragePool", SHAPE(2, 3, 112, 112), 3, 2,
				    (const int64_t[]){ 1, 1, 1, 1 }, 0, NULL),
			 "[2,3,56,56]");
	/* ceil((7 + 1 - 3) / 2) + 1 = 4: the last window starts at 6 < 7 */
	cr_assert_str_eq(pool_shape("AveragePool", SHAPE(1, 1, 7, 7), 3, 2,
				    (const int64_t[]){ 0, 0, 1, 1 }, 1, NULL),
			 "[1,1,4,4]");
	/* ceil((6 + 1 - 2) / 2) + 1 = 4, but that window would start at 6,
	 * in the right padding: 3 */
	cr_assert_str_eq(pool_shape("MaxPool", SHAPE(1, 1, 6, 6), 2, 2,
				    (const int64_t[]){ 0, 0, 1, 1 }, 1, NULL),
			 "[1,1,3,3]");
	/* ceil_mode, padding on both sides: (113 + 2 - 3) / 2 + 1 = 57 */
	cr_assert_str_eq(pool_shape("MaxPool", SHAPE(1, 1, 113, 113), 3, 2,
				    (const int64_t[]){ 1, 1, 1, 1 }, 1, NULL),
			 "[1,1,57,57]");
}

Test(infer, pool_auto_pad)
{
	/* SAME: ceil(7 / 2) = 4; VALID: (7 - 3) / 2 + 1 = 3 */
	cr_assert_str_eq(pool_shape("AveragePool", SHAPE(1, 2, 7, 7), 3, 2,
				    NULL, 0, "SAME_UPPER"),
			 "[1,2,4,4]");
	cr_assert_str_eq(pool_shape("MaxPool", SHAPE(1, 2, 7, 8), 3, 2, NULL, 0,
				    "SAME_LOWER"),
			 "[1,2,4,4]");
	cr_assert_str_eq(pool_shape("MaxPool", SHAPE(1, 2, 7, 8), 3, 2, NULL, 0,
				    "VALID"),
			 "[1,2,3,3]");
	cr_assert_str_eq(pool_shape("MaxPool", SHAPE(1, 2, -1, 8), 3, 2, NULL,
				    0, "SAME_UPPER"),
			 "[1,2,-1,4]");
}

Test(infer, pool_errors)
{
	cr_assert_str_eq(pool_shape("MaxPool", SHAPE(1, 2, 7), 3, 2, NULL, 0,
				    NULL),
			 "error: node 'pool' (MaxPool): input 0 ('x') has rank "
			 "3, but kernel_shape has 2 values; expected rank 4");
	cr_assert_str_eq(pool_shape("MaxPool", SHAPE(1, 2, 2, 7), 3, 2, NULL, 0,
				    NULL),
			 "error: node 'pool' (MaxPool): spatial axis 0: input "
			 "size 2 with pads 0+0 is smaller than the window "
			 "extent 3");
	cr_assert_str_eq(pool_shape("AveragePool", SHAPE(1, 2, 7, 7), 3, 0,
				    NULL, 0, NULL),
			 "error: node 'pool' (AveragePool): strides[0] is 0, "
			 "expected >= 1");

	Model *m = tu_model(13);
	ValId x = tu_input(m->graph, "x", DT_FLOAT, SHAPE(1, 1, 4, 4));
	tu_node(m->graph, "MaxPool", "pool", IDS(x), 1);
	infer_fails(m, "node 'pool' (MaxPool): attribute kernel_shape is "
		       "required");
	model_free(m);
}

Test(infer, maxpool_indices_and_dilations)
{
	Model *m = tu_model(12);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_UINT8, SHAPE(1, 3, 8, 9));
	Node *n = tu_node(g, "MaxPool", "pool", IDS(x), 2);
	tu_ints(g, n, "kernel_shape", INTS(2, 2));
	tu_ints(g, n, "dilations", INTS(2, 3));
	ValId y = tu_out(n, 0), idx = tu_out(n, 1);
	infer_ok(m);
	/* extents 3 and 4: 8 - 3 + 1 = 6, 9 - 4 + 1 = 6 */
	cr_assert_str_eq(tu_shape(g, y), "[1,3,6,6]");
	cr_assert_eq(tu_dtype(g, y), DT_UINT8);
	cr_assert_str_eq(tu_shape(g, idx), "[1,3,6,6]");
	cr_assert_eq(tu_dtype(g, idx), DT_INT64);
	model_free(m);
}

Test(infer, pool_1d_and_3d)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x1 = tu_input(g, "x1", DT_FLOAT, SHAPE(2, 4, 11));
	ValId x3 = tu_input(g, "x3", DT_FLOAT, SHAPE(1, 2, 6, 7, 8));
	Node *n = tu_node(g, "AveragePool", "p1", IDS(x1), 1);
	tu_ints(g, n, "kernel_shape", INTS(3));
	tu_ints(g, n, "strides", INTS(3));
	ValId y1 = tu_out(n, 0);
	n = tu_node(g, "MaxPool", "p3", IDS(x3), 1);
	tu_ints(g, n, "kernel_shape", INTS(2, 2, 2));
	tu_ints(g, n, "strides", INTS(2, 2, 2));
	tu_int(g, n, "ceil_mode", 1);
	ValId y3 = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y1), "[2,4,3]");
	cr_assert_str_eq(tu_shape(g, y3), "[1,2,3,4,4]");
	model_free(m);
}

Test(infer, global_pools)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 16, 7, 7));
	ValId x3 = tu_input(g, "x3", DT_DOUBLE, SHAPE(-1, 4, 3, 5, 6));
	ValId a = unary(g, "GlobalAveragePool", x);
	ValId b = unary(g, "GlobalMaxPool", x3);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, a), "[2,16,1,1]");
	cr_assert_str_eq(tu_shape(g, b), "[-1,4,1,1,1]");
	cr_assert_eq(tu_dtype(g, b), DT_DOUBLE);
	model_free(m);
}

/* ---- BatchNormalization ------------------------------------------------ */

static Node *batchnorm(Graph *g, ValId x, int64_t c, int32_t nout)
{
	ValId p[4];
	static const char *names[] = { "scale", "bias", "mean", "var" };
	for (int i = 0; i < 4; i++)
		p[i] = tu_weight(g, names[i], DT_FLOAT, SHAPE(c));
	return tu_node(g, "BatchNormalization", "bn",
		       IDS(x, p[0], p[1], p[2], p[3]), nout);
}

Test(infer, batchnorm_inference)
{
	Model *m = tu_model(15);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 16, 8, 8));
	ValId y = tu_out(batchnorm(g, x, 16, 1), 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[2,16,8,8]");
	model_free(m);

	m = tu_model(15);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 16, 8, 8));
	batchnorm(g, x, 15, 1);
	infer_fails(m, "node 'bn' (BatchNormalization): input 1 ('scale') has "
		       "shape [15], expected [16] (channels)");
	model_free(m);
}

Test(infer, batchnorm_training_outputs)
{
	Model *m = tu_model(15);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 16, 8, 8));
	Node *n = batchnorm(g, x, 16, 3);
	tu_int(g, n, "training_mode", 1);
	ValId rm = tu_out(n, 1), rv = tu_out(n, 2);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, rm), "[16]");
	cr_assert_str_eq(tu_shape(g, rv), "[16]");
	cr_assert_eq(tu_dtype(g, rv), DT_FLOAT);
	model_free(m);

	m = tu_model(14);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 16, 8, 8));
	batchnorm(g, x, 16, 3);
	infer_fails(m, "node 'bn' (BatchNormalization): outputs running_mean "
		       "and running_var need training_mode=1");
	model_free(m);

	m = tu_model(7); /* mean, var, saved_mean, saved_var */
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(-1, 16, 8));
	n = batchnorm(g, x, 16, 5);
	ValId y = tu_out(n, 0), sv = tu_out(n, 4);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[-1,16,8]");
	cr_assert_str_eq(tu_shape(g, sv), "[16]");
	model_free(m);
}

/* ---- Reshape ----------------------------------------------------------- */

/* Reshape of input shape x to target t[0..n) with allowzero; returns the
 * output shape or "error: <message>". */
static const char *reshape(Shape x, const int64_t *t, int32_t n, int allowzero)
{
	static char buf[256];
	Model *m = tu_model(14);
	Graph *g = m->graph;
	ValId xi = tu_input(g, "x", DT_FLOAT, x);
	ValId ti = tu_weight_ints(g, "t", t, n);
	Node *nd = tu_node(g, "Reshape", "rs", IDS(xi, ti), 1);
	ValId y = tu_out(nd, 0);
	if (allowzero)
		tu_int(g, nd, "allowzero", 1);
	if (infer_graph(m, g) < 0)
		snprintf(buf, sizeof(buf), "error: %s", last_error());
	else
		snprintf(buf, sizeof(buf), "%s", tu_shape(g, y));
	model_free(m);
	return buf;
}

Test(infer, reshape_targets)
{
	cr_assert_str_eq(reshape(SHAPE(2, 3, 4), INTS(0, -1), 0), "[2,12]");
	cr_assert_str_eq(reshape(SHAPE(2, 3, 4), INTS(-1), 0), "[24]");
	cr_assert_str_eq(reshape(SHAPE(2, 3, 4), INTS(4, 0, 2), 0), "[4,3,2]");
	cr_assert_str_eq(reshape(SHAPE(2, 3, 4), INTS(-1, 2, 2), 0), "[6,2,2]");
	cr_assert_str_eq(reshape(SHAPE(1, 1), (const int64_t *)"", 0, 0), "[]");
	cr_assert_str_eq(reshape(SHAPE(0, 3), INTS(0, 3), 1), "[0,3]");
	cr_assert_str_eq(reshape(SHAPE(0, 3), INTS(3, 0), 1), "[3,0]");
	cr_assert_str_eq(reshape(SHAPE(0, 3), INTS(0, -1), 0),
			 "error: node 'rs' (Reshape): cannot reshape input 'x' "
			 "[0,3] into [0,-1]: no size for the -1 fits");
}

Test(infer, reshape_with_unknown_dims)
{
	/* the unknown dim is copied by 0, so it cancels out */
	cr_assert_str_eq(reshape(SHAPE(-1, 3, 4), INTS(0, -1), 0), "[-1,12]");
	cr_assert_str_eq(reshape(SHAPE(-1, 3, 4), INTS(0, 12), 0), "[-1,12]");
	cr_assert_str_eq(reshape(SHAPE(-1, 3, 4), INTS(-1, 4), 0), "[-1,4]");
	cr_assert_str_eq(reshape(SHAPE(2, -1, 4), INTS(0, 0, 2, 2), 0),
			 "[2,-1,2,2]");
	cr_assert_str_eq(reshape(UNKNOWN, INTS(0, 5, -1), 0), "[-1,5,-1]");
	/* the known rest does not fit, whatever the unknown dim is */
	cr_assert_str_eq(reshape(SHAPE(-1, 3, 4), INTS(0, 5), 0),
			 "error: node 'rs' (Reshape): cannot reshape input 'x' "
			 "[-1,3,4] into [0,5]: element counts differ");
}

Test(infer, reshape_bad_targets)
{
	cr_assert_str_eq(reshape(SHAPE(2, 3, 4), INTS(-1, -1), 0),
			 "error: node 'rs' (Reshape): target shape [-1,-1] has "
			 "more than one -1");
	cr_assert_str_eq(reshape(SHAPE(2, 3, 4), INTS(6, -2), 0),
			 "error: node 'rs' (Reshape): target shape [6,-2] has "
			 "dim 1 = -2, expected >= -1");
	cr_assert_str_eq(reshape(SHAPE(2, 3, 4), INTS(5, -1), 0),
			 "error: node 'rs' (Reshape): cannot reshape input 'x' "
			 "[2,3,4] into [5,-1]: no size for the -1 fits");
	cr_assert_str_eq(reshape(SHAPE(2, 3, 4), INTS(2, 3, 5), 0),
			 "error: node 'rs' (Reshape): cannot reshape input 'x' "
			 "[2,3,4] into [2,3,5]: element counts differ");
	cr_assert_str_eq(reshape(SHAPE(6), INTS(2, 0), 0),
			 "error: node 'rs' (Reshape): target shape [2,0] copies "
			 "dim 1 (0), but input 'x' has shape [6]");
	cr_assert_str_eq(reshape(SHAPE(2, 3), INTS(0, 6), 1),
			 "error: node 'rs' (Reshape): cannot reshape input 'x' "
			 "[2,3] into [0,6]: element counts differ");
	cr_assert_str_eq(reshape(SHAPE(2, 3), INTS(0, -1), 1),
			 "error: node 'rs' (Reshape): target shape [0,-1] has "
			 "both 0 and -1, which allowzero=1 forbids");
	cr_assert_str_eq(reshape(SHAPE(2, 3), INTS(1, 1, 1, 1, 1, 1, 2, 3, 1), 0),
			 "error: node 'rs' (Reshape): target shape has 9 dims, "
			 "gearc supports at most 8");
}

Test(infer, reshape_target_dtype_and_legacy_attribute)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3));
	int32_t t32[] = { 3, 2 };
	ValId t = tu_weight_data(g, "t", DT_INT32, SHAPE(2), t32);
	tu_node(g, "Reshape", "rs", IDS(x, t), 1);
	infer_fails(m, "node 'rs' (Reshape): input 1 ('t') has dtype int32, "
		       "expected int64");
	model_free(m);

	m = tu_model(1); /* before opset 5 the target is an attribute */
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 4));
	Node *n = tu_node(g, "Reshape", "rs", IDS(x), 1);
	tu_ints(g, n, "shape", INTS(6, -1));
	ValId y = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[6,4]");
	model_free(m);
}

/* ---- Flatten, Transpose, Concat ---------------------------------------- */

static const char *flatten(Shape x, int64_t axis)
{
	static char buf[256];
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId xi = tu_input(g, "x", DT_FLOAT, x);
	Node *n = tu_node(g, "Flatten", "flat", IDS(xi), 1);
	ValId y = tu_out(n, 0);
	tu_int(g, n, "axis", axis);
	if (infer_graph(m, g) < 0)
		snprintf(buf, sizeof(buf), "error: %s", last_error());
	else
		snprintf(buf, sizeof(buf), "%s", tu_shape(g, y));
	model_free(m);
	return buf;
}

Test(infer, flatten_axes)
{
	cr_assert_str_eq(flatten(SHAPE(2, 3, 4, 5), 1), "[2,60]");
	cr_assert_str_eq(flatten(SHAPE(2, 3, 4, 5), 0), "[1,120]");
	cr_assert_str_eq(flatten(SHAPE(2, 3, 4, 5), 4), "[120,1]");
	cr_assert_str_eq(flatten(SHAPE(2, 3, 4, 5), -1), "[24,5]");
	cr_assert_str_eq(flatten(SHAPE(2, 3, 4, 5), -4), "[1,120]");
	cr_assert_str_eq(flatten(SHAPE(-1, 3, 4), 1), "[-1,12]");
	cr_assert_str_eq(flatten(SHAPE(-1, 0, 4), 2), "[0,4]");
	cr_assert_str_eq(flatten(UNKNOWN, -1), "[-1,-1]");
	cr_assert_str_eq(flatten(SHAPE(2, 3, 4, 5), 5),
			 "error: node 'flat' (Flatten): axis 5 is out of range "
			 "for rank 4 (expected -4..4)");
	cr_assert_str_eq(flatten(SHAPE(2, 3, 4, 5), -5),
			 "error: node 'flat' (Flatten): axis -5 is out of range "
			 "for rank 4 (expected -4..4)");
}

Test(infer, transpose_perms)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 4));
	ValId rev = unary(g, "Transpose", x);
	Node *n = tu_node(g, "Transpose", "t021", IDS(x), 1);
	tu_ints(g, n, "perm", INTS(0, 2, 1));
	ValId y = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, rev), "[4,3,2]");
	cr_assert_str_eq(tu_shape(g, y), "[2,4,3]");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 4));
	n = tu_node(g, "Transpose", "tr", IDS(x), 1);
	tu_ints(g, n, "perm", INTS(0, 0, 1));
	infer_fails(m, "node 'tr' (Transpose): perm is not a permutation of "
		       "0..2 (perm[1] = 0)");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 4));
	n = tu_node(g, "Transpose", "tr", IDS(x), 1);
	tu_ints(g, n, "perm", INTS(1, 0));
	infer_fails(m, "node 'tr' (Transpose): perm has 2 values, but input "
		       "'x' has rank 3");
	model_free(m);
}

/* Concat of a and b on axis: the output shape or "error: ...". */
static const char *concat(Shape a, Shape b, int64_t axis)
{
	static char buf[256];
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "a", DT_FLOAT, a);
	ValId y = tu_input(g, "b", DT_FLOAT, b);
	Node *n = tu_node(g, "Concat", "cat", IDS(x, y), 1);
	ValId z = tu_out(n, 0);
	tu_int(g, n, "axis", axis);
	if (infer_graph(m, g) < 0)
		snprintf(buf, sizeof(buf), "error: %s", last_error());
	else
		snprintf(buf, sizeof(buf), "%s", tu_shape(g, z));
	model_free(m);
	return buf;
}

Test(infer, concat_axes)
{
	cr_assert_str_eq(concat(SHAPE(2, 3), SHAPE(2, 5), 1), "[2,8]");
	cr_assert_str_eq(concat(SHAPE(2, 3), SHAPE(2, 5), -1), "[2,8]");
	cr_assert_str_eq(concat(SHAPE(2, 3), SHAPE(4, 3), -2), "[6,3]");
	cr_assert_str_eq(concat(SHAPE(-1, 3), SHAPE(2, 5), 1), "[2,8]");
	cr_assert_str_eq(concat(SHAPE(2, -1), SHAPE(2, 5), 1), "[2,-1]");
	cr_assert_str_eq(concat(UNKNOWN, SHAPE(2, 5), 0), "[-1,5]");
	cr_assert_str_eq(concat(SHAPE(2, 3), SHAPE(4, 5), 1),
			 "error: node 'cat' (Concat): input 1 ('b') has dim 0 "
			 "= 4, but an earlier input has 2; only axis 1 may "
			 "differ");
	cr_assert_str_eq(concat(SHAPE(2, 3), SHAPE(2, 3, 1), 1),
			 "error: node 'cat' (Concat): input 1 ('b') has rank 3, "
			 "but input 0 ('a') has rank 2");
	cr_assert_str_eq(concat(SHAPE(2, 3), SHAPE(2, 3), 2),
			 "error: node 'cat' (Concat): axis 2 is out of range "
			 "for rank 2 (expected -2..1)");
	cr_assert_str_eq(concat(SHAPE(2, 3), SHAPE(2, 3), -3),
			 "error: node 'cat' (Concat): axis -3 is out of range "
			 "for rank 2 (expected -2..1)");

	Model *m = tu_model(13);
	ValId x = tu_input(m->graph, "x", DT_FLOAT, SHAPE(2));
	tu_node(m->graph, "Concat", "cat", IDS(x, x), 1);
	infer_fails(m, "node 'cat' (Concat): attribute axis is required");
	model_free(m);
}

/* ---- Gemm, MatMul ------------------------------------------------------ */

static const char *gemm(Shape a, Shape b, int ta, int tb, const Shape *c)
{
	static char buf[256];
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "a", DT_FLOAT, a);
	ValId y = tu_weight(g, "b", DT_FLOAT, b);
	ValId z = c ? tu_weight(g, "c", DT_FLOAT, *c) : -1;
	Node *n = tu_node(g, "Gemm", "gemm", IDS(x, y, z), 1);
	ValId out = tu_out(n, 0);
	tu_int(g, n, "transA", ta);
	tu_int(g, n, "transB", tb);
	if (infer_graph(m, g) < 0)
		snprintf(buf, sizeof(buf), "error: %s", last_error());
	else
		snprintf(buf, sizeof(buf), "%s", tu_shape(g, out));
	model_free(m);
	return buf;
}

Test(infer, gemm_transposes)
{
	Shape c5 = SHAPE(5), c41 = SHAPE(4, 1), c3 = SHAPE(3), s = SCALAR;
	cr_assert_str_eq(gemm(SHAPE(4, 3), SHAPE(3, 5), 0, 0, NULL), "[4,5]");
	cr_assert_str_eq(gemm(SHAPE(3, 4), SHAPE(3, 5), 1, 0, NULL), "[4,5]");
	cr_assert_str_eq(gemm(SHAPE(4, 3), SHAPE(5, 3), 0, 1, &c5), "[4,5]");
	cr_assert_str_eq(gemm(SHAPE(3, 4), SHAPE(5, 3), 1, 1, &c41), "[4,5]");
	cr_assert_str_eq(gemm(SHAPE(-1, 3), SHAPE(5, 3), 0, 1, &s), "[-1,5]");
	cr_assert_str_eq(gemm(SHAPE(4, 3), SHAPE(3, 5), 0, 0, &c3),
			 "error: node 'gemm' (Gemm): input 2 ('c') has shape "
			 "[3], which does not broadcast to [4,5]");
	cr_assert_str_eq(gemm(SHAPE(4, 3), SHAPE(3, 5), 1, 0, NULL),
			 "error: node 'gemm' (Gemm): inner dims differ: input 0 "
			 "('a', [4,3]) has 4, input 1 ('b', [3,5]) has 3");
	cr_assert_str_eq(gemm(SHAPE(2, 4, 3), SHAPE(3, 5), 0, 0, NULL),
			 "error: node 'gemm' (Gemm): input 0 ('a') has rank 3, "
			 "expected 2");

	Model *m = tu_model(9); /* C is required before opset 11 */
	ValId a = tu_input(m->graph, "a", DT_FLOAT, SHAPE(4, 3));
	ValId b = tu_input(m->graph, "b", DT_FLOAT, SHAPE(3, 5));
	tu_node(m->graph, "Gemm", "gemm", IDS(a, b), 1);
	infer_fails(m, "node 'gemm' (Gemm): required input 2 is missing");
	model_free(m);
}

static const char *matmul(Shape a, Shape b)
{
	static char buf[256];
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "a", DT_FLOAT, a);
	ValId y = tu_input(g, "b", DT_FLOAT, b);
	ValId z = tu_out(tu_node(g, "MatMul", "mm", IDS(x, y), 1), 0);
	if (infer_graph(m, g) < 0)
		snprintf(buf, sizeof(buf), "error: %s", last_error());
	else
		snprintf(buf, sizeof(buf), "%s", tu_shape(g, z));
	model_free(m);
	return buf;
}

Test(infer, matmul_numpy_semantics)
{
	cr_assert_str_eq(matmul(SHAPE(2, 3), SHAPE(3, 4)), "[2,4]");
	cr_assert_str_eq(matmul(SHAPE(3), SHAPE(3)), "[]");
	cr_assert_str_eq(matmul(SHAPE(3), SHAPE(3, 4)), "[4]");
	cr_assert_str_eq(matmul(SHAPE(2, 3), SHAPE(3)), "[2]");
	cr_assert_str_eq(matmul(SHAPE(4), SHAPE(2, 4, 3)), "[2,3]");
	cr_assert_str_eq(matmul(SHAPE(2, 3, 4), SHAPE(4)), "[2,3]");
	cr_assert_str_eq(matmul(SHAPE(5, 2, 3), SHAPE(3, 4)), "[5,2,4]");
	cr_assert_str_eq(matmul(SHAPE(2, 1, 2, 3), SHAPE(5, 3, 4)),
			 "[2,5,2,4]");
	cr_assert_str_eq(matmul(SHAPE(-1, 7, 3), SHAPE(1, 3, -1)),
			 "[-1,7,-1]");
	cr_assert_str_eq(matmul(SHAPE(2, 3), SHAPE(4, 5)),
			 "error: node 'mm' (MatMul): inner dims differ: input 0 "
			 "('a', [2,3]) has 3, input 1 ('b', [4,5]) has 4");
	cr_assert_str_eq(matmul(SHAPE(2, 2, 3), SHAPE(3, 3, 4)),
			 "error: node 'mm' (MatMul): batch dims of input 0 ('a', "
			 "[2,2,3]) and input 1 ('b', [3,3,4]) cannot be "
			 "broadcast");
	cr_assert_str_eq(matmul(SCALAR, SHAPE(3)),
			 "error: node 'mm' (MatMul): input 0 ('a') has rank 0, "
			 "expected 1 to 8");
}

/* ---- Constant ---------------------------------------------------------- */

Test(infer, constant_values)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	float data[6] = { 1, 2, 3, 4, 5, 6 };
	Shape s23 = SHAPE(2, 3);
	const Tensor *t = tensor_new(g->arena, "c", DT_FLOAT, &s23, data);
	Node *n = tu_node(g, "Constant", "c", NULL, 0, 1);
	tu_tensor(g, n, "value", t);
	ValId c = tu_out(n, 0);
	n = tu_node(g, "Constant", "ints", NULL, 0, 1);
	tu_ints(g, n, "value_ints", INTS(3, -1));
	ValId ints = tu_out(n, 0);
	n = tu_node(g, "Constant", "f", NULL, 0, 1);
	tu_float(g, n, "value_float", 2.5f);
	ValId f = tu_out(n, 0);
	n = tu_node(g, "Constant", "fs", NULL, 0, 1);
	tu_floats(g, n, "value_floats", (const float[]){ 1, 2, 3, 4 }, 4);
	ValId fs = tu_out(n, 0);
	n = tu_node(g, "Constant", "i", NULL, 0, 1);
	tu_int(g, n, "value_int", 7);
	ValId i = tu_out(n, 0);
	n = tu_node(g, "Constant", "s", NULL, 0, 1);
	tu_str(g, n, "value_string", "hello");
	ValId s = tu_out(n, 0);
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 2));
	ValId r = tu_out(tu_node(g, "Reshape", "rs", IDS(x, ints), 1), 0);
	infer_ok(m);
	cr_assert_eq(g->vals[c].konst, t);
	cr_assert_str_eq(tu_shape(g, c), "[2,3]");
	cr_assert_eq(tu_dtype(g, ints), DT_INT64);
	cr_assert_str_eq(tu_shape(g, ints), "[2]");
	cr_assert_eq(tensor_get_i64(g->vals[ints].konst, 1), -1);
	cr_assert_eq(tu_dtype(g, f), DT_FLOAT);
	cr_assert_str_eq(tu_shape(g, f), "[]");
	cr_assert_float_eq(tensor_get_f64(g->vals[f].konst, 0), 2.5, 1e-9);
	cr_assert_str_eq(tu_shape(g, fs), "[4]");
	cr_assert_float_eq(tensor_get_f64(g->vals[fs].konst, 3), 4.0, 1e-9);
	cr_assert_eq(tensor_get_i64(g->vals[i].konst, 0), 7);
	cr_assert_eq(tu_dtype(g, s), DT_STRING);
	const Bytes *b = g->vals[s].konst->data;
	cr_assert_eq(b->len, 5);
	cr_assert_eq(memcmp(b->data, "hello", 5), 0);
	cr_assert_str_eq(tu_shape(g, r), "[3,4]");
	cr_assert_eq(graph_verify(g), 0, "%s", last_error());
	model_free(m);
}

Test(infer, constant_needs_exactly_one_value)
{
	Model *m = tu_model(13);
	tu_node(m->graph, "Constant", "c", NULL, 0, 1);
	infer_fails(m, "node 'c' (Constant): expected exactly one of the "
		       "attributes value, sparse_value, value_float(s), "
		       "value_int(s), value_string(s); found 0");
	model_free(m);

	m = tu_model(13);
	Node *n = tu_node(m->graph, "Constant", "c", NULL, 0, 1);
	tu_int(m->graph, n, "value_int", 1);
	tu_float(m->graph, n, "value_float", 1);
	infer_fails_with(m, "found 2");
	model_free(m);

	m = tu_model(13);
	n = tu_node(m->graph, "Constant", "c", NULL, 0, 1);
	node_add_attr(m->graph, n, "sparse_value", ATTR_SPARSE_TENSOR);
	infer_fails(m, "node 'c' (Constant): sparse_value is not supported");
	model_free(m);
}

/* ---- a whole small network --------------------------------------------- */

/* conv-bn-relu-pool-conv-relu-gap-flatten-gemm-softmax on batch n */
static void small_cnn(int64_t batch, const char *want)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(batch, 3, 32, 32));
	ValId w1 = tu_weight(g, "w1", DT_FLOAT, SHAPE(16, 3, 3, 3));
	ValId w2 = tu_weight(g, "w2", DT_FLOAT, SHAPE(32, 16, 3, 3));
	ValId b2 = tu_weight(g, "b2", DT_FLOAT, SHAPE(32));
	ValId fc = tu_weight(g, "fc", DT_FLOAT, SHAPE(10, 32));
	ValId fcb = tu_weight(g, "fcb", DT_FLOAT, SHAPE(10));
	Node *n = tu_node(g, "Conv", "conv1", IDS(x, w1), 1);
	tu_ints(g, n, "pads", INTS(1, 1, 1, 1));
	ValId v = tu_out(n, 0);
	v = tu_out(batchnorm(g, v, 16, 1), 0);
	v = unary(g, "Relu", v);
	n = tu_node(g, "MaxPool", "pool", IDS(v), 1);
	tu_ints(g, n, "kernel_shape", INTS(2, 2));
	tu_ints(g, n, "strides", INTS(2, 2));
	v = tu_out(n, 0);
	n = tu_node(g, "Conv", "conv2", IDS(v, w2, b2), 1);
	tu_ints(g, n, "pads", INTS(1, 1, 1, 1));
	tu_ints(g, n, "strides", INTS(2, 2));
	v = tu_out(n, 0);
	ValId c2 = v;
	v = unary(g, "GlobalAveragePool", unary(g, "Relu", v));
	v = unary(g, "Flatten", v);
	n = tu_node(g, "Gemm", "fc", IDS(v, fc, fcb), 1);
	tu_int(g, n, "transB", 1);
	v = unary(g, "Softmax", tu_out(n, 0));
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, v), want);
	cr_assert_eq(tu_dtype(g, v), DT_FLOAT);
	cr_assert_eq(g->vals[c2].shape.dims[2], 8);
	cr_assert_eq(graph_verify(g), 0, "%s", last_error());
	model_free(m);
}

Test(infer, small_cnn)
{
	small_cnn(4, "[4,10]");
	small_cnn(-1, "[-1,10]");
}
