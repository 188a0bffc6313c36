/* tests/test_ops_tensor.c - the tensor family's infer and fold hooks
 * (compiler/ops/tensor.c, compiler/ops/gather.c): shapes at every opset
 * form, exact folded values, data-dependent marking. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "compiler/ops/opimpl.h"
#include "testutil.h"

#define DBLS(...)                                                       \
	(const double[]){ __VA_ARGS__ },                                \
		(int32_t)(sizeof((double[]){ __VA_ARGS__ }) / sizeof(double))

/* A bare int64 array literal (INTS also gives the count). */
#define V(...) ((const int64_t[]){ __VA_ARGS__ })

/* A weight of dtype dt and shape s holding v[0..n) converted. */
static ValId wi(Graph *g, const char *name, int dt, Shape s,
		const int64_t *v, int32_t n)
{
	Tensor *t = tensor_new(g->arena, name, dt, &s, NULL);
	cr_assert_not_null(t);
	cr_assert_eq(shape_numel(&s), n, "weight '%s': %d values", name, n);
	for (int32_t i = 0; i < n; i++)
		tensor_set_i64(t, i, v[i]);
	ValId id = graph_add_value(g, name, VAL_WEIGHT);
	g->vals[id].dtype = dt;
	g->vals[id].shape = s;
	g->vals[id].konst = t;
	return id;
}

static ValId wf(Graph *g, const char *name, int dt, Shape s, const double *v,
		int32_t n)
{
	Tensor *t = tensor_new(g->arena, name, dt, &s, NULL);
	cr_assert_not_null(t);
	cr_assert_eq(shape_numel(&s), n, "weight '%s': %d values", name, n);
	for (int32_t i = 0; i < n; i++)
		tensor_set_f64(t, i, v[i]);
	ValId id = graph_add_value(g, name, VAL_WEIGHT);
	g->vals[id].dtype = dt;
	g->vals[id].shape = s;
	g->vals[id].konst = t;
	return id;
}

/* A scalar int64 weight. */
static ValId si64(Graph *g, const char *name, int64_t v)
{
	return wi(g, name, DT_INT64, SCALAR, &v, 1);
}

/* 0, 1, ..., n-1 as int64 in a weight of shape s. */
static ValId iota(Graph *g, const char *name, int dt, Shape s)
{
	int64_t n = shape_numel(&s);
	int64_t *v = arena_array(g->arena, (size_t)n + 1, sizeof(int64_t));
	for (int64_t i = 0; i < n; i++)
		v[i] = i;
	return wi(g, name, dt, s, v, (int32_t)n);
}

/* v has shape shape and known contents vals (read as int64). */
static void expect_ints(const Graph *g, ValId v, const char *shape,
			const int64_t *vals, int32_t n)
{
	const Value *val = &g->vals[v];
	cr_assert_str_eq(tu_shape(g, v), shape, "'%s'", val->name);
	cr_assert_not_null(val->konst, "'%s' was not folded", val->name);
	cr_assert_eq(val->konst->dtype, val->dtype);
	cr_assert(shape_equal(&val->konst->shape, &val->shape));
	cr_assert_eq(shape_numel(&val->konst->shape), n,
		     "'%s' has %lld values, expected %d", val->name,
		     (long long)shape_numel(&val->konst->shape), n);
	for (int32_t i = 0; i < n; i++)
		cr_assert_eq(tensor_get_i64(val->konst, i), vals[i],
			     "'%s'[%d] = %lld, expected %lld", val->name, i,
			     (long long)tensor_get_i64(val->konst, i),
			     (long long)vals[i]);
}

static void expect_floats(const Graph *g, ValId v, const char *shape,
			  const double *vals, int32_t n)
{
	const Value *val = &g->vals[v];
	cr_assert_str_eq(tu_shape(g, v), shape, "'%s'", val->name);
	cr_assert_not_null(val->konst, "'%s' was not folded", val->name);
	cr_assert_eq(shape_numel(&val->konst->shape), n);
	for (int32_t i = 0; i < n; i++)
		cr_assert_eq(tensor_get_f64(val->konst, i), vals[i],
			     "'%s'[%d] = %.9g, expected %.9g", val->name, i,
			     tensor_get_f64(val->konst, i), vals[i]);
}

/* v has the shape, no contents, and is (or is not) data-dependent. */
static void expect_runtime(const Graph *g, ValId v, const char *shape,
			   bool data_dep)
{
	const Value *val = &g->vals[v];
	cr_assert_str_eq(tu_shape(g, v), shape, "'%s'", val->name);
	cr_assert_null(val->konst, "'%s' was folded", val->name);
	cr_assert_eq((val->flags & VF_DATA_DEP) != 0, data_dep,
		     "'%s': VF_DATA_DEP is %d", val->name,
		     (val->flags & VF_DATA_DEP) != 0);
}

/* ---- the shape chain the issue names ------------------------------------ */

/* Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as PyTorch exports
 * x.view(x.size(0), -1): every intermediate folds, the Reshape is static. */
static void shape_chain(int64_t opset)
{
	Model *m = tu_model(opset);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 4, 5));
	ValId shp = tu_out(tu_node(g, "Shape", "shape", IDS(x), 1), 0);
	ValId zero = si64(g, "zero", 0);
	ValId dim0 = tu_out(tu_node(g, "Gather", "gather", IDS(shp, zero), 1), 0);
	Node *n;
	if (opset >= 13) {
		ValId axes = tu_weight_ints(g, "axes", INTS(0));
		n = tu_node(g, "Unsqueeze", "unsq", IDS(dim0, axes), 1);
	} else {
		n = tu_node(g, "Unsqueeze", "unsq", IDS(dim0), 1);
		tu_ints(g, n, "axes", INTS(0));
	}
	ValId un = tu_out(n, 0);
	ValId minus = tu_weight_ints(g, "minus1", INTS(-1));
	n = tu_node(g, "Concat", "cat", IDS(un, minus), 1);
	tu_int(g, n, "axis", 0);
	ValId cat = tu_out(n, 0);
	ValId y = tu_out(tu_node(g, "Reshape", "view", IDS(x, cat), 1), 0);
	infer_ok(m);
	expect_ints(g, shp, "[4]", INTS(2, 3, 4, 5));
	expect_ints(g, dim0, "[]", INTS(2));
	expect_ints(g, un, "[1]", INTS(2));
	expect_ints(g, cat, "[2]", INTS(2, -1));
	expect_runtime(g, y, "[2,60]", false);
	cr_assert_eq(tu_dtype(g, y), DT_FLOAT);
	model_free(m);
}

Test(ops_tensor, shape_gather_unsqueeze_concat_reshape_folds)
{
	shape_chain(13);
	shape_chain(11); /* Unsqueeze axes as an attribute */
}

/* With a dynamic batch the chain keeps what is known: the 60. */
Test(ops_tensor, shape_chain_with_unknown_batch)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(-1, 3, 4, 5));
	ValId shp = tu_out(tu_node(g, "Shape", "shape", IDS(x), 1), 0);
	ValId zero = tu_weight_ints(g, "zero", INTS(0));
	ValId three = tu_weight_ints(g, "three", INTS(3));
	Node *n = tu_node(g, "Slice", "tail", IDS(shp, three,
						   tu_weight_ints(g, "big",
								  INTS(INT64_MAX))),
			  1);
	ValId tail = tu_out(n, 0);
	n = tu_node(g, "Concat", "cat", IDS(zero, tu_weight_ints(g, "m",
								     INTS(-1))),
		    1);
	tu_int(g, n, "axis", 0);
	ValId y = tu_out(tu_node(g, "Reshape", "view",
				 IDS(x, tu_out(n, 0)), 1), 0);
	infer_ok(m);
	expect_runtime(g, shp, "[4]", false);
	expect_runtime(g, tail, "[1]", false);
	expect_runtime(g, y, "[-1,60]", false);
	model_free(m);
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze -------------------------------- */

Test(ops_tensor, reshape_folds_with_zero_minus_one_and_allowzero)
{
	Model *m = tu_model(14);
	Graph *g = m->graph;
	ValId x = iota(g, "x", DT_INT32, SHAPE(2, 3, 4));
	ValId t1 = tu_weight_ints(g, "t1", INTS(0, -1));
	ValId t2 = tu_weight_ints(g, "t2", INTS(-1));
	ValId t3 = tu_weight_ints(g, "t3", INTS(4, 0, -1));
	ValId r1 = tu_out(tu_node(g, "Reshape", "r1", IDS(x, t1), 1), 0);
	ValId r2 = tu_out(tu_node(g, "Reshape", "r2", IDS(x, t2), 1), 0);
	ValId r3 = tu_out(tu_node(g, "Reshape", "r3", IDS(x, t3), 1), 0);
	/* allowzero=1: a 0 is a 0 */
	ValId e = wi(g, "e", DT_INT64, SHAPE(0, 3), NULL, 0);
	ValId t4 = tu_weight_ints(g, "t4", INTS(3, 0));
	Node *n = tu_node(g, "Reshape", "r4", IDS(e, t4), 1);
	tu_int(g, n, "allowzero", 1);
	ValId r4 = tu_out(n, 0);
	/* allowzero=0: the same target copies the input's dim */
	ValId f = iota(g, "f", DT_FLOAT, SHAPE(3, 2));
	ValId r5 = tu_out(tu_node(g, "Reshape", "r5", IDS(f, t4), 1), 0);
	infer_ok(m);
	int64_t all[24];
	for (int i = 0; i < 24; i++)
		all[i] = i;
	expect_ints(g, r1, "[2,12]", all, 24);
	expect_ints(g, r2, "[24]", all, 24);
	expect_ints(g, r3, "[4,3,2]", all, 24);
	cr_assert_eq(tu_dtype(g, r3), DT_INT32);
	expect_ints(g, r4, "[3,0]", NULL, 0);
	expect_floats(g, r5, "[3,2]", DBLS(0, 1, 2, 3, 4, 5));
	model_free(m);
}

Test(ops_tensor, flatten_folds)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = iota(g, "x", DT_INT64, SHAPE(2, 3));
	Node *n = tu_node(g, "Flatten", "fl", IDS(x), 1);
	tu_int(g, n, "axis", 0);
	ValId y = tu_out(n, 0);
	infer_ok(m);
	expect_ints(g, y, "[1,6]", INTS(0, 1, 2, 3, 4, 5));
	model_free(m);
}

/* Unsqueeze of x [3,4] at axes (attribute before 13, input since). */
static const char *unsqueeze(int64_t opset, const int64_t *axes, int32_t n,
			     Shape xs)
{
	static char buf[256];
	Model *m = tu_model(opset);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, xs);
	Node *nd;
	if (opset >= 13) {
		nd = tu_node(g, "Unsqueeze", "unsq",
			     IDS(x, tu_weight_ints(g, "axes", axes, n)), 1);
	} else {
		nd = tu_node(g, "Unsqueeze", "unsq", IDS(x), 1);
		tu_ints(g, nd, "axes", axes, n);
	}
	ValId y = tu_out(nd, 0);
	if (infer_graph(m, g) < 0)
		snprintf(buf, sizeof(buf), "error: %s", last_error());
	else
		snprintf(buf, sizeof(buf), "%s", tu_shape(g, y));
	model_free(m);
	return buf;
}

Test(ops_tensor, unsqueeze_axes)
{
	for (int64_t opset = 11; opset <= 13; opset += 2) {
		cr_assert_str_eq(unsqueeze(opset, INTS(0), SHAPE(3, 4)),
				 "[1,3,4]");
		cr_assert_str_eq(unsqueeze(opset, INTS(2, 0), SHAPE(3, 4)),
				 "[1,3,1,4]");
		cr_assert_str_eq(unsqueeze(opset, INTS(-1), SHAPE(3, 4)),
				 "[3,4,1]");
		cr_assert_str_eq(unsqueeze(opset, INTS(1, -1), SHAPE(-1, 4)),
				 "[-1,1,4,1]");
		cr_assert_str_eq(unsqueeze(opset, INTS(0), SCALAR), "[1]");
		cr_assert_str_eq(unsqueeze(opset, INTS(0), UNKNOWN), "[?]");
		cr_assert_str_eq(unsqueeze(opset, INTS(0, -4), SHAPE(3, 4)),
				 "error: node 'unsq' (Unsqueeze): axes has "
				 "axis 0 twice");
		cr_assert_str_eq(unsqueeze(opset, INTS(4), SHAPE(3, 4)),
				 "error: node 'unsq' (Unsqueeze): axes value 4 "
				 "is out of range for rank 3 (expected -3..2)");
	}
}

/* Squeeze of x at axes (NULL: none given). */
static const char *squeeze(int64_t opset, const int64_t *axes, int32_t n,
			   Shape xs)
{
	static char buf[256];
	Model *m = tu_model(opset);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, xs);
	Node *nd;
	if (opset >= 13 && axes) {
		nd = tu_node(g, "Squeeze", "sq",
			     IDS(x, tu_weight_ints(g, "axes", axes, n)), 1);
	} else {
		nd = tu_node(g, "Squeeze", "sq", IDS(x), 1);
		if (axes)
			tu_ints(g, nd, "axes", axes, n);
	}
	ValId y = tu_out(nd, 0);
	if (infer_graph(m, g) < 0)
		snprintf(buf, sizeof(buf), "error: %s", last_error());
	else
		snprintf(buf, sizeof(buf), "%s", tu_shape(g, y));
	model_free(m);
	return buf;
}

Test(ops_tensor, squeeze_axes)
{
	for (int64_t opset = 11; opset <= 13; opset += 2) {
		cr_assert_str_eq(squeeze(opset, INTS(0), SHAPE(1, 3, 1)),
				 "[3,1]");
		cr_assert_str_eq(squeeze(opset, INTS(-1, 0), SHAPE(1, 3, 1)),
				 "[3]");
		cr_assert_str_eq(squeeze(opset, NULL, 0, SHAPE(1, 3, 1, 2)),
				 "[3,2]");
		cr_assert_str_eq(squeeze(opset, NULL, 0, SHAPE(1, 1)), "[]");
		cr_assert_str_eq(squeeze(opset, (const int64_t *)"", 0,
					 SHAPE(1, 3, 1)),
				 "[3]");
		/* an unknown dim might be 1: the rank is unknown */
		cr_assert_str_eq(squeeze(opset, NULL, 0, SHAPE(1, -1)), "[?]");
		/* named, an unknown dim must be 1 */
		cr_assert_str_eq(squeeze(opset, INTS(1), SHAPE(3, -1)), "[3]");
		cr_assert_str_eq(squeeze(opset, INTS(1), SHAPE(1, 3)),
				 "error: node 'sq' (Squeeze): cannot squeeze "
				 "axis 1 of input 'x' [1,3]: its dim is 3, "
				 "not 1");
		cr_assert_str_eq(squeeze(opset, INTS(2), SHAPE(1, 3)),
				 "error: node 'sq' (Squeeze): axes value 2 is "
				 "out of range for rank 2 (expected -2..1)");
	}
}

Test(ops_tensor, squeeze_unsqueeze_fold_and_runtime_axes)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId k = iota(g, "k", DT_UINT8, SHAPE(1, 3, 1));
	ValId sq = tu_out(tu_node(g, "Squeeze", "sq", IDS(k), 1), 0);
	ValId un = tu_out(tu_node(g, "Unsqueeze", "un",
				  IDS(sq, tu_weight_ints(g, "a", INTS(-1))), 1),
			  0);
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3));
	ValId axes = tu_input(g, "axes", DT_INT64, SHAPE(2));
	ValId ru = tu_out(tu_node(g, "Unsqueeze", "ru", IDS(x, axes), 1), 0);
	infer_ok(m);
	expect_ints(g, sq, "[3]", INTS(0, 1, 2));
	expect_ints(g, un, "[3,1]", INTS(0, 1, 2));
	cr_assert_eq(tu_dtype(g, un), DT_UINT8);
	expect_runtime(g, ru, "[-1,-1,-1,-1]", true);
	model_free(m);
}

/* ---- Transpose, Concat ----------------------------------------------------- */

Test(ops_tensor, transpose_folds_any_dtype)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = iota(g, "x", DT_INT16, SHAPE(2, 3, 4));
	Node *n = tu_node(g, "Transpose", "t", IDS(x), 1);
	tu_ints(g, n, "perm", INTS(1, 2, 0));
	ValId t = tu_out(n, 0);
	ValId rev = tu_out(tu_node(g, "Transpose", "rev",
				   IDS(wf(g, "h", DT_FLOAT16, SHAPE(2, 2),
					  DBLS(0.5, 1.5, 2.5, 3.5))),
				   1),
			   0);
	/* strings move as they are */
	Bytes words[] = { { 1, (const uint8_t *)"a" }, { 2, (const uint8_t *)"bb" },
			  { 3, (const uint8_t *)"ccc" } };
	ValId s = tu_weight_data(g, "s", DT_STRING, SHAPE(3, 1), words);
	ValId ts = tu_out(tu_node(g, "Transpose", "ts", IDS(s), 1), 0);
	infer_ok(m);
	expect_ints(g, t, "[3,4,2]",
		    INTS(0, 12, 1, 13, 2, 14, 3, 15, 4, 16, 5, 17, 6, 18, 7,
			 19, 8, 20, 9, 21, 10, 22, 11, 23));
	expect_floats(g, rev, "[2,2]", DBLS(0.5, 2.5, 1.5, 3.5));
	cr_assert_eq(tu_dtype(g, rev), DT_FLOAT16);
	cr_assert_str_eq(tu_shape(g, ts), "[1,3]");
	const Bytes *b = g->vals[ts].konst->data;
	cr_assert_eq(b[2].len, 3);
	cr_assert_eq(memcmp(b[2].data, "ccc", 3), 0);
	model_free(m);
}

Test(ops_tensor, concat_folds)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId a = iota(g, "a", DT_INT64, SHAPE(2, 2));
	ValId b = wi(g, "b", DT_INT64, SHAPE(2, 1), INTS(7, 8));
	ValId e = wi(g, "e", DT_INT64, SHAPE(2, 0), NULL, 0);
	Node *n = tu_node(g, "Concat", "c1", IDS(a, e, b), 1);
	tu_int(g, n, "axis", -1);
	ValId c1 = tu_out(n, 0);
	n = tu_node(g, "Concat", "c0", IDS(a, a), 1);
	tu_int(g, n, "axis", 0);
	ValId c0 = tu_out(n, 0);
	infer_ok(m);
	expect_ints(g, c1, "[2,3]", INTS(0, 1, 7, 2, 3, 8));
	expect_ints(g, c0, "[4,2]", INTS(0, 1, 2, 3, 0, 1, 2, 3));
	model_free(m);
}

/* ---- Expand, Tile ---------------------------------------------------------- */

Test(ops_tensor, expand_is_bidirectional)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId k = wi(g, "k", DT_INT32, SHAPE(3, 1), INTS(1, 2, 3));
	ValId e1 = tu_out(tu_node(g, "Expand", "e1",
				  IDS(k, tu_weight_ints(g, "s1", INTS(2, 1, 2))),
				  1),
			  0);
	/* the shape may be smaller than the input's: [3,1] with [1] */
	ValId e2 = tu_out(tu_node(g, "Expand", "e2",
				  IDS(k, tu_weight_ints(g, "s2", INTS(1))), 1),
			  0);
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(3, 1));
	ValId s = tu_input(g, "s", DT_INT64, SHAPE(3));
	ValId e3 = tu_out(tu_node(g, "Expand", "e3", IDS(x, s), 1), 0);
	ValId e4 = tu_out(tu_node(g, "Expand", "e4",
				  IDS(x, tu_weight_ints(g, "s4", INTS(0))), 1),
			  0);
	infer_ok(m);
	expect_ints(g, e1, "[2,3,2]", INTS(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3));
	expect_ints(g, e2, "[3,1]", INTS(1, 2, 3));
	expect_runtime(g, e3, "[-1,3,-1]", true);
	expect_runtime(g, e4, "[3,0]", false);
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3));
	tu_node(g, "Expand", "ex", IDS(x, tu_weight_ints(g, "s", INTS(4, 3))),
		1);
	infer_fails_with(m, "node 'ex' (Expand): shapes [2,3] and [4,3] "
			    "cannot be broadcast");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3));
	tu_node(g, "Expand", "ex", IDS(x, tu_weight_ints(g, "s",
							 INTS(INT64_C(1) << 62, 4,
							      2, 3))),
		1);
	infer_fails_with(m, "node 'ex' (Expand): output 0 ('ex:0') of shape "
			    "[4611686018427387904,4,2,3] is too large");
	model_free(m);
}

Test(ops_tensor, tile_folds_and_checks)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId k = wi(g, "k", DT_INT64, SHAPE(2, 2), INTS(1, 2, 3, 4));
	ValId t = tu_out(tu_node(g, "Tile", "tile",
				 IDS(k, tu_weight_ints(g, "r", INTS(2, 3))), 1),
			 0);
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 0, -1));
	ValId r = tu_input(g, "r", DT_INT64, SHAPE(3));
	ValId rt = tu_out(tu_node(g, "Tile", "rt", IDS(x, r), 1), 0);
	ValId kt = tu_out(tu_node(g, "Tile", "kt",
				  IDS(x, tu_weight_ints(g, "r3", INTS(3, 2, 2))),
				  1),
			  0);
	infer_ok(m);
	expect_ints(g, t, "[4,6]",
		    INTS(1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,
			 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4));
	expect_runtime(g, rt, "[-1,0,-1]", true);
	expect_runtime(g, kt, "[6,0,-1]", false);
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(4, 3));
	tu_node(g, "Tile", "tile",
		IDS(x, tu_weight_ints(g, "r", INTS(INT64_C(1) << 62, 1))), 1);
	infer_fails_with(m, "node 'tile' (Tile): dims 4 x 4611686018427387904 "
			    "overflow int64");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(4, 3));
	tu_node(g, "Tile", "tile", IDS(x, tu_weight_ints(g, "r", INTS(2))), 1);
	infer_fails_with(m, "node 'tile' (Tile): repeats has 1 values, but "
			    "input 'x' has rank 2");
	model_free(m);
}

/* ---- Slice ------------------------------------------------------------- */

/* Slice of a constant 0..9 (int64), inputs since opset 10. */
static ValId slice10(Graph *g, const char *name, ValId x, const int64_t *s,
		     const int64_t *e, const int64_t *ax, const int64_t *st,
		     int32_t n)
{
	char buf[4][64];
	const char *what[4] = { "starts", "ends", "axes", "steps" };
	const int64_t *v[4] = { s, e, ax, st };
	ValId in[5] = { x, -1, -1, -1, -1 };
	for (int i = 0; i < 4; i++) {
		snprintf(buf[i], sizeof(buf[i]), "%s_%s", name, what[i]);
		if (v[i])
			in[i + 1] = tu_weight_ints(g, buf[i], v[i], n);
	}
	return tu_out(tu_node(g, "Slice", name, in, st ? 5 : ax ? 4 : 3, 1), 0);
}

Test(ops_tensor, slice_negative_steps_and_clamping)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = iota(g, "x", DT_INT64, SHAPE(10));
	int64_t one = 1, mone = -1, minus3 = -3, two = 2, zero = 0;
	int64_t lo = INT64_MIN, hi = INT64_MAX, m1 = -1, s8 = 8, e1 = 1,
		s20 = 20, sm100 = -100, e3 = 3, e5 = 5, m2 = -2;
	ValId rev = slice10(g, "rev", x, &m1, &lo, &zero, &mone, 1);
	ValId step3 = slice10(g, "step3", x, &s8, &e1, NULL, &minus3, 1);
	ValId all2 = slice10(g, "all2", x, &hi, &lo, &zero, &m2, 1);
	ValId clamp = slice10(g, "clamp", x, &sm100, &e3, NULL, NULL, 1);
	ValId past = slice10(g, "past", x, &s20, &hi, NULL, &one, 1);
	ValId back = slice10(g, "back", x, &s20, &e5, &zero, &mone, 1);
	ValId none = slice10(g, "none", x, &e1, &e5, &zero, &mone, 1);
	ValId ev = slice10(g, "ev", x, &zero, &hi, &zero, &two, 1);
	infer_ok(m);
	expect_ints(g, rev, "[10]", INTS(9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
	expect_ints(g, step3, "[3]", INTS(8, 5, 2));
	expect_ints(g, all2, "[5]", INTS(9, 7, 5, 3, 1));
	expect_ints(g, clamp, "[3]", INTS(0, 1, 2));
	expect_ints(g, past, "[0]", NULL, 0);
	expect_ints(g, back, "[4]", INTS(9, 8, 7, 6));
	expect_ints(g, none, "[0]", NULL, 0);
	expect_ints(g, ev, "[5]", INTS(0, 2, 4, 6, 8));
	model_free(m);
}

Test(ops_tensor, slice_2d_axes_and_legacy_attributes)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = iota(g, "x", DT_FLOAT, SHAPE(3, 4));
	ValId a = slice10(g, "a", x, V(-1, 1), V(0, 3), V(-1, 0),
			  NULL, 2);
	(void)a;
	ValId y = tu_input(g, "y", DT_FLOAT, SHAPE(-1, 8, 5));
	ValId b = slice10(g, "b", y, V(1, 0), V(INT64_MAX, 4), V(1, 2),
			  V(2, 1), 2);
	ValId starts = tu_input(g, "starts", DT_INT64, SHAPE(1));
	ValId c = tu_out(tu_node(g, "Slice", "c",
				 IDS(y, starts, tu_weight_ints(g, "ce", INTS(9)),
				     tu_weight_ints(g, "ca", INTS(1))),
				 1),
			 0);
	infer_ok(m);
	/* cols: start -1 is 3, end 0: none; rows 1..3 */
	expect_floats(g, a, "[2,0]", NULL, 0);
	expect_runtime(g, b, "[-1,4,4]", false);
	expect_runtime(g, c, "[-1,-1,5]", true);
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = iota(g, "x", DT_FLOAT, SHAPE(3, 4));
	a = slice10(g, "a", x, V(1, -3), V(3, -1), V(0, 1), NULL, 2);
	infer_ok(m);
	expect_floats(g, a, "[2,2]", DBLS(5, 6, 9, 10));
	model_free(m);

	m = tu_model(9); /* starts/ends/axes as attributes */
	g = m->graph;
	x = iota(g, "x", DT_INT8, SHAPE(3, 4));
	Node *n = tu_node(g, "Slice", "s", IDS(x), 1);
	tu_ints(g, n, "starts", INTS(1));
	tu_ints(g, n, "ends", INTS(1000));
	tu_ints(g, n, "axes", INTS(1));
	ValId s = tu_out(n, 0);
	infer_ok(m);
	expect_ints(g, s, "[3,3]", INTS(1, 2, 3, 5, 6, 7, 9, 10, 11));
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = iota(g, "x", DT_FLOAT, SHAPE(3, 4));
	slice10(g, "z", x, V(0), V(1), NULL, V(0), 1);
	infer_fails_with(m, "node 'z' (Slice): steps[0] is 0");
	model_free(m);
}

/* ---- Split ------------------------------------------------------------- */

Test(ops_tensor, split_every_opset_form)
{
	Model *m = tu_model(11); /* split attribute */
	Graph *g = m->graph;
	ValId x = iota(g, "x", DT_INT64, SHAPE(2, 6));
	Node *n = tu_node(g, "Split", "s", IDS(x), 2);
	tu_int(g, n, "axis", 1);
	tu_ints(g, n, "split", INTS(2, 4));
	ValId a = tu_out(n, 0), b = tu_out(n, 1);
	n = tu_node(g, "Split", "eq", IDS(x), 3);
	tu_int(g, n, "axis", -1);
	ValId e0 = tu_out(n, 0), e2 = tu_out(n, 2);
	infer_ok(m);
	expect_ints(g, a, "[2,2]", INTS(0, 1, 6, 7));
	expect_ints(g, b, "[2,4]", INTS(2, 3, 4, 5, 8, 9, 10, 11));
	expect_ints(g, e0, "[2,2]", INTS(0, 1, 6, 7));
	expect_ints(g, e2, "[2,2]", INTS(4, 5, 10, 11));
	model_free(m);

	m = tu_model(13); /* split input; an omitted output */
	g = m->graph;
	x = iota(g, "x", DT_INT64, SHAPE(5));
	n = tu_node(g, "Split", "s",
		    IDS(x, tu_weight_ints(g, "sp", INTS(1, 0, 4))), 3);
	tu_omit_out(g, n, 0);
	b = tu_out(n, 1);
	ValId c = tu_out(n, 2);
	ValId y = tu_input(g, "y", DT_FLOAT, SHAPE(5));
	ValId sp = tu_input(g, "sp", DT_INT64, SHAPE(2));
	ValId r = tu_out(tu_node(g, "Split", "r", IDS(y, sp), 2), 0);
	infer_ok(m);
	expect_ints(g, b, "[0]", NULL, 0);
	expect_ints(g, c, "[4]", INTS(1, 2, 3, 4));
	expect_runtime(g, r, "[-1]", true);
	model_free(m);

	m = tu_model(18); /* num_outputs: the last part is smaller */
	g = m->graph;
	x = iota(g, "x", DT_INT64, SHAPE(7));
	n = tu_node(g, "Split", "s", IDS(x), 3);
	tu_int(g, n, "num_outputs", 3);
	a = tu_out(n, 0);
	c = tu_out(n, 2);
	infer_ok(m);
	expect_ints(g, a, "[3]", INTS(0, 1, 2));
	expect_ints(g, c, "[1]", INTS(6));
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(7));
	tu_node(g, "Split", "s", IDS(x), 3);
	infer_fails_with(m, "node 's' (Split): cannot split dim 7 into 3 "
			    "equal parts");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(7));
	tu_node(g, "Split", "s", IDS(x, tu_weight_ints(g, "sp", INTS(3, 3))),
		2);
	infer_fails_with(m, "node 's' (Split): the split sizes add up to 6, "
			    "but the dim split is 7");
	model_free(m);
}

/* ---- Pad --------------------------------------------------------------- */

/* Pad of [[1,2,3],[4,5,6]] (int32) in mode with pads (opset 13 inputs). */
static Model *pad_model(const char *mode, const int64_t *pads, int32_t n,
			int64_t opset, ValId *y)
{
	Model *m = tu_model(opset);
	Graph *g = m->graph;
	ValId x = wi(g, "x", DT_INT32, SHAPE(2, 3), INTS(1, 2, 3, 4, 5, 6));
	ValId v = wi(g, "v", DT_INT32, SCALAR, INTS(9));
	Node *nd = tu_node(g, "Pad", "pad",
			   IDS(x, tu_weight_ints(g, "pads", pads, n),
			       !strcmp(mode, "constant") ? v : -1),
			   1);
	tu_str(g, nd, "mode", mode);
	*y = tu_out(nd, 0);
	return m;
}

Test(ops_tensor, pad_modes_fold)
{
	ValId y;
	Model *m = pad_model("constant", INTS(0, 2, 0, 1), 13, &y);
	infer_ok(m);
	expect_ints(m->graph, y, "[2,6]",
		    INTS(9, 9, 1, 2, 3, 9, 9, 9, 4, 5, 6, 9));
	model_free(m);
	m = pad_model("reflect", INTS(0, 2, 0, 1), 13, &y);
	infer_ok(m);
	expect_ints(m->graph, y, "[2,6]",
		    INTS(3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5));
	model_free(m);
	m = pad_model("edge", INTS(0, 2, 0, 1), 13, &y);
	infer_ok(m);
	expect_ints(m->graph, y, "[2,6]",
		    INTS(1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6));
	model_free(m);
	m = pad_model("wrap", INTS(0, 2, 0, 1), 19, &y);
	infer_ok(m);
	expect_ints(m->graph, y, "[2,6]",
		    INTS(2, 3, 1, 2, 3, 1, 5, 6, 4, 5, 6, 4));
	model_free(m);
	/* negative pads crop */
	m = pad_model("constant", INTS(0, -1, 1, 0), 13, &y);
	infer_ok(m);
	expect_ints(m->graph, y, "[3,2]", INTS(2, 3, 5, 6, 9, 9));
	model_free(m);
	m = pad_model("edge", INTS(-1, -1, 1, 0), 13, &y);
	infer_ok(m);
	expect_ints(m->graph, y, "[2,2]", INTS(5, 6, 5, 6));
	model_free(m);
	/* reflect further than the data: numpy's repeated reflection */
	m = tu_model(13);
	Graph *g = m->graph;
	ValId x = wi(g, "x", DT_INT64, SHAPE(3), INTS(1, 2, 3));
	Node *nd = tu_node(g, "Pad", "pad",
			   IDS(x, tu_weight_ints(g, "p", INTS(4, 5))), 1);
	tu_str(g, nd, "mode", "reflect");
	y = tu_out(nd, 0);
	infer_ok(m);
	expect_ints(g, y, "[12]", INTS(1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2));
	model_free(m);
	m = pad_model("wrap", INTS(0, 2, 0, 1), 13, &y);
	infer_fails_with(m, "node 'pad' (Pad): mode 'wrap' is not one of "
			    "constant, reflect, edge");
	model_free(m);
	m = pad_model("constant", INTS(0, -2, 0, -2), 13, &y);
	infer_fails_with(m, "node 'pad' (Pad): pads -2 and -2 make axis 1 of "
			    "dim 3 negative");
	model_free(m);
	m = pad_model("constant", INTS(0, -4, 0, 5), 13, &y);
	infer_fails_with(m, "node 'pad' (Pad): pads -4 and 5 crop more than "
			    "axis 1 of dim 3 holds");
	model_free(m);
	m = pad_model("constant", INTS(0, 0, 0, INT64_MAX), 13, &y);
	infer_fails_with(m, "node 'pad' (Pad): pads of axis 1 overflow int64");
	model_free(m);
}

Test(ops_tensor, pad_attribute_and_axes_forms)
{
	Model *m = tu_model(2); /* pads and value as attributes */
	Graph *g = m->graph;
	ValId x = wf(g, "x", DT_FLOAT, SHAPE(1, 2), DBLS(1.5, 2.5));
	Node *n = tu_node(g, "Pad", "pad", IDS(x), 1);
	tu_ints(g, n, "pads", INTS(1, 0, 0, 1));
	tu_float(g, n, "value", 0.25f);
	ValId y = tu_out(n, 0);
	infer_ok(m);
	expect_floats(g, y, "[2,3]", DBLS(0.25, 0.25, 0.25, 1.5, 2.5, 0.25));
	model_free(m);

	m = tu_model(18); /* axes input */
	g = m->graph;
	ValId in = tu_input(g, "in", DT_FLOAT, SHAPE(1, 3, 4, 4));
	y = tu_out(tu_node(g, "Pad", "pad",
			   IDS(in, tu_weight_ints(g, "p", INTS(1, 2, 3, 4)), -1,
			       tu_weight_ints(g, "a", INTS(-1, 2))),
			   1),
		   0);
	ValId pads = tu_input(g, "pads", DT_INT64, SHAPE(8));
	ValId ry = tu_out(tu_node(g, "Pad", "rpad", IDS(in, pads), 1), 0);
	infer_ok(m);
	expect_runtime(g, y, "[1,3,10,8]", false);
	expect_runtime(g, ry, "[-1,-1,-1,-1]", true);
	model_free(m);
}

/* ---- ConstantOfShape, Range, EyeLike ----------------------------------- */

Test(ops_tensor, constantofshape_folds)
{
	Model *m = tu_model(9);
	Graph *g = m->graph;
	int64_t seven = 7;
	const Tensor *v = tensor_new(g->arena, "v", DT_INT64, &(Shape){ .rank = 1, .dims = { 1 } },
				     &seven);
	Node *n = tu_node(g, "ConstantOfShape", "c",
			  IDS(tu_weight_ints(g, "s", INTS(2, 3))), 1);
	tu_tensor(g, n, "value", v);
	ValId c = tu_out(n, 0);
	ValId z = tu_out(tu_node(g, "ConstantOfShape", "z",
				 IDS(tu_weight_ints(g, "s2", INTS(2))), 1),
			 0);
	ValId e = wi(g, "empty", DT_INT64, SHAPE(0), NULL, 0);
	n = tu_node(g, "ConstantOfShape", "sc", IDS(e), 1);
	tu_tensor(g, n, "value", v);
	ValId sc = tu_out(n, 0);
	ValId rs = tu_input(g, "rs", DT_INT64, SHAPE(3));
	ValId r = tu_out(tu_node(g, "ConstantOfShape", "r", IDS(rs), 1), 0);
	infer_ok(m);
	expect_ints(g, c, "[2,3]", INTS(7, 7, 7, 7, 7, 7));
	cr_assert_eq(tu_dtype(g, c), DT_INT64);
	expect_floats(g, z, "[2]", DBLS(0, 0));
	cr_assert_eq(tu_dtype(g, z), DT_FLOAT);
	expect_ints(g, sc, "[]", INTS(7));
	expect_runtime(g, r, "[-1,-1,-1]", true);
	model_free(m);

	m = tu_model(9);
	g = m->graph;
	tu_node(g, "ConstantOfShape", "c", IDS(tu_weight_ints(g, "s", INTS(2, -1))),
		1);
	infer_fails_with(m, "node 'c' (ConstantOfShape): input 0 ('s') has dim "
			    "1 = -1, expected >= 0");
	model_free(m);
}

Test(ops_tensor, range_folds_int_and_float)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	ValId r1 = tu_out(tu_node(g, "Range", "r1",
				  IDS(si64(g, "a", 0), si64(g, "b", 10),
				      si64(g, "c", 3)),
				  1),
			  0);
	ValId r2 = tu_out(tu_node(g, "Range", "r2",
				  IDS(wi(g, "d", DT_INT32, SCALAR, INTS(10)),
				      wi(g, "e", DT_INT32, SCALAR, INTS(4)),
				      wi(g, "f", DT_INT32, SCALAR, INTS(-2))),
				  1),
			  0);
	ValId r3 = tu_out(tu_node(g, "Range", "r3",
				  IDS(wf(g, "h", DT_FLOAT, SCALAR, DBLS(1)),
				      wf(g, "i", DT_FLOAT, SCALAR, DBLS(2)),
				      wf(g, "j", DT_FLOAT, SCALAR, DBLS(0.25))),
				  1),
			  0);
	ValId r4 = tu_out(tu_node(g, "Range", "r4",
				  IDS(si64(g, "k", 5), si64(g, "l", 1),
				      si64(g, "m", 1)),
				  1),
			  0);
	ValId r5 = tu_out(tu_node(g, "Range", "r5",
				  IDS(si64(g, "n", INT64_MIN + 1),
				      si64(g, "o", INT64_MAX),
				      si64(g, "p", INT64_C(1) << 62)),
				  1),
			  0);
	ValId lim = tu_input(g, "lim", DT_INT64, SCALAR);
	ValId r6 = tu_out(tu_node(g, "Range", "r6",
				  IDS(si64(g, "q", 0), lim, si64(g, "r", 1)), 1),
			  0);
	infer_ok(m);
	expect_ints(g, r1, "[4]", INTS(0, 3, 6, 9));
	expect_ints(g, r2, "[3]", INTS(10, 8, 6));
	cr_assert_eq(tu_dtype(g, r2), DT_INT32);
	expect_floats(g, r3, "[4]", DBLS(1, 1.25, 1.5, 1.75));
	expect_ints(g, r4, "[0]", NULL, 0);
	expect_ints(g, r5, "[4]",
		    INTS(INT64_MIN + 1, INT64_MIN + 1 + (INT64_C(1) << 62),
			 1, 1 + (INT64_C(1) << 62)));
	expect_runtime(g, r6, "[-1]", true);
	model_free(m);

	m = tu_model(11);
	g = m->graph;
	tu_node(g, "Range", "r", IDS(si64(g, "a", INT64_MAX), si64(g, "b", -1),
				      si64(g, "c", -1)),
		1);
	infer_fails_with(m, "node 'r' (Range): Range(9223372036854775807, -1, "
			    "-1) has too many elements");
	model_free(m);
	m = tu_model(11);
	g = m->graph;
	tu_node(g, "Range", "r",
		IDS(si64(g, "a", 0), si64(g, "b", 4), si64(g, "c", 0)), 1);
	infer_fails_with(m, "node 'r' (Range): delta is 0");
	model_free(m);
}

Test(ops_tensor, eyelike_folds_from_the_shape)
{
	Model *m = tu_model(9);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(3, 4));
	Node *n = tu_node(g, "EyeLike", "eye", IDS(x), 1);
	tu_int(g, n, "k", 1);
	tu_int(g, n, "dtype", DT_INT32);
	ValId e = tu_out(n, 0);
	n = tu_node(g, "EyeLike", "low", IDS(x), 1);
	tu_int(g, n, "k", -2);
	ValId l = tu_out(n, 0);
	ValId tall = tu_input(g, "tall", DT_INT64, SHAPE(3, 2));
	n = tu_node(g, "EyeLike", "tl", IDS(tall), 1);
	tu_int(g, n, "k", -2);
	ValId tl = tu_out(n, 0);
	n = tu_node(g, "EyeLike", "far", IDS(tall), 1);
	tu_int(g, n, "k", INT64_MAX);
	ValId far = tu_out(n, 0);
	infer_ok(m);
	expect_ints(g, tl, "[3,2]", INTS(0, 0, 0, 0, 1, 0));
	expect_ints(g, far, "[3,2]", INTS(0, 0, 0, 0, 0, 0));
	expect_ints(g, e, "[3,4]", INTS(0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1));
	cr_assert_eq(tu_dtype(g, e), DT_INT32);
	expect_floats(g, l, "[3,4]", DBLS(0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0));
	model_free(m);
}

/* ---- Trilu, DepthToSpace, SpaceToDepth, ReverseSequence, CumSum ---------- */

Test(ops_tensor, trilu_folds)
{
	Model *m = tu_model(14);
	Graph *g = m->graph;
	ValId x = iota(g, "x", DT_INT64, SHAPE(3, 3));
	ValId up = tu_out(tu_node(g, "Trilu", "up", IDS(x), 1), 0);
	Node *n = tu_node(g, "Trilu", "low", IDS(x, si64(g, "k", -1)), 1);
	tu_int(g, n, "upper", 0);
	ValId low = tu_out(n, 0);
	ValId big = tu_out(tu_node(g, "Trilu", "big",
				   IDS(x, si64(g, "kb", INT64_MIN)), 1),
			   0);
	infer_ok(m);
	expect_ints(g, up, "[3,3]", INTS(0, 1, 2, 0, 4, 5, 0, 0, 8));
	expect_ints(g, low, "[3,3]", INTS(0, 0, 0, 3, 0, 0, 6, 7, 0));
	expect_ints(g, big, "[3,3]", INTS(0, 1, 2, 3, 4, 5, 6, 7, 8));
	model_free(m);
}

Test(ops_tensor, depth_space_fold_both_modes)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = iota(g, "x", DT_INT64, SHAPE(1, 8, 1, 1));
	Node *n = tu_node(g, "DepthToSpace", "dcr", IDS(x), 1);
	tu_int(g, n, "blocksize", 2);
	ValId dcr = tu_out(n, 0);
	n = tu_node(g, "DepthToSpace", "crd", IDS(x), 1);
	tu_int(g, n, "blocksize", 2);
	tu_str(g, n, "mode", "CRD");
	ValId crd = tu_out(n, 0);
	n = tu_node(g, "SpaceToDepth", "s2d", IDS(dcr), 1);
	tu_int(g, n, "blocksize", 2);
	ValId back = tu_out(n, 0);
	ValId y = tu_input(g, "y", DT_FLOAT, SHAPE(-1, 12, 5, -1));
	n = tu_node(g, "DepthToSpace", "d", IDS(y), 1);
	tu_int(g, n, "blocksize", 2);
	ValId d = tu_out(n, 0);
	infer_ok(m);
	/* DCR: out[c][i][j] = in[(i*2 + j)*2 + c] */
	expect_ints(g, dcr, "[1,2,2,2]", INTS(0, 2, 4, 6, 1, 3, 5, 7));
	/* CRD: out[c][i][j] = in[c*4 + i*2 + j] */
	expect_ints(g, crd, "[1,2,2,2]", INTS(0, 1, 2, 3, 4, 5, 6, 7));
	expect_ints(g, back, "[1,8,1,1]", INTS(0, 1, 2, 3, 4, 5, 6, 7));
	expect_runtime(g, d, "[-1,3,10,-1]", false);
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	y = tu_input(g, "y", DT_FLOAT, SHAPE(1, 6, 4, 4));
	n = tu_node(g, "DepthToSpace", "d", IDS(y), 1);
	tu_int(g, n, "blocksize", 2);
	infer_fails_with(m, "node 'd' (DepthToSpace): input 'y' has 6 channels, "
			    "not a multiple of blocksize^2 = 4");
	model_free(m);
}

Test(ops_tensor, reversesequence_folds)
{
	Model *m = tu_model(10);
	Graph *g = m->graph;
	/* time-major [T=3, B=2] */
	ValId x = iota(g, "x", DT_INT64, SHAPE(3, 2));
	ValId l = tu_weight_ints(g, "l", INTS(3, 2));
	ValId r = tu_out(tu_node(g, "ReverseSequence", "rs", IDS(x, l), 1), 0);
	infer_ok(m);
	expect_ints(g, r, "[3,2]", INTS(4, 3, 2, 1, 0, 5));
	model_free(m);
}

Test(ops_tensor, cumsum_exclusive_and_reverse)
{
	static const struct {
		int excl, rev;
		int64_t want[5];
	} cases[] = {
		{ 0, 0, { 1, 3, 6, 10, 15 } },
		{ 1, 0, { 0, 1, 3, 6, 10 } },
		{ 0, 1, { 15, 14, 12, 9, 5 } },
		{ 1, 1, { 14, 12, 9, 5, 0 } },
	};
	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		Model *m = tu_model(14);
		Graph *g = m->graph;
		ValId x = wi(g, "x", DT_INT32, SHAPE(5), INTS(1, 2, 3, 4, 5));
		Node *n = tu_node(g, "CumSum", "cs",
				  IDS(x, wi(g, "a", DT_INT32, SCALAR, INTS(0))), 1);
		tu_int(g, n, "exclusive", cases[k].excl);
		tu_int(g, n, "reverse", cases[k].rev);
		ValId y = tu_out(n, 0);
		infer_ok(m);
		expect_ints(g, y, "[5]", cases[k].want, 5);
		model_free(m);
	}
	Model *m = tu_model(14);
	Graph *g = m->graph;
	ValId x = iota(g, "x", DT_DOUBLE, SHAPE(2, 3));
	ValId y = tu_out(tu_node(g, "CumSum", "cs", IDS(x, si64(g, "a", -2)), 1),
			 0);
	infer_ok(m);
	expect_floats(g, y, "[2,3]", DBLS(0, 1, 2, 3, 5, 7));
	model_free(m);
}

/* ---- Gather family ------------------------------------------------------ */

Test(ops_tensor, gather_shapes_and_folds)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = iota(g, "x", DT_INT64, SHAPE(3, 4));
	ValId i2 = wi(g, "i2", DT_INT32, SHAPE(2, 2), INTS(0, -1, 2, 1));
	Node *n = tu_node(g, "Gather", "g0", IDS(x, i2), 1);
	ValId g0 = tu_out(n, 0);
	n = tu_node(g, "Gather", "g1", IDS(x, si64(g, "i", -1)), 1);
	tu_int(g, n, "axis", 1);
	ValId g1 = tu_out(n, 0);
	ValId y = tu_input(g, "y", DT_FLOAT, SHAPE(5, -1, 7));
	ValId yi = tu_input(g, "yi", DT_INT64, SHAPE(2, 3));
	n = tu_node(g, "Gather", "g2", IDS(y, yi), 1);
	tu_int(g, n, "axis", -2);
	ValId g2 = tu_out(n, 0);
	infer_ok(m);
	expect_ints(g, g0, "[2,2,4]",
		    INTS(0, 1, 2, 3, 8, 9, 10, 11, 8, 9, 10, 11, 4, 5, 6, 7));
	expect_ints(g, g1, "[3]", INTS(3, 7, 11));
	expect_runtime(g, g2, "[5,2,3,7]", false);
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = iota(g, "x", DT_INT64, SHAPE(3));
	tu_node(g, "Gather", "g", IDS(x, si64(g, "i", 3)), 1);
	infer_fails_with(m, "node 'g' (Gather): index 3 is out of range for a "
			    "dim of 3");
	model_free(m);
}

Test(ops_tensor, gatherelements_and_gathernd)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = wi(g, "x", DT_INT64, SHAPE(2, 2), INTS(1, 2, 3, 4));
	ValId ind = wi(g, "ind", DT_INT64, SHAPE(2, 2), INTS(0, 0, 1, -2));
	Node *n = tu_node(g, "GatherElements", "ge", IDS(x, ind), 1);
	tu_int(g, n, "axis", 1);
	ValId ge = tu_out(n, 0);
	/* GatherND with batch_dims=1: data [2,2,2], indices [2,1] */
	ValId d = iota(g, "d", DT_INT32, SHAPE(2, 2, 2));
	ValId ni = wi(g, "ni", DT_INT64, SHAPE(2, 1), INTS(1, 0));
	n = tu_node(g, "GatherND", "nd", IDS(d, ni), 1);
	tu_int(g, n, "batch_dims", 1);
	ValId nd = tu_out(n, 0);
	ValId n2 = tu_out(tu_node(g, "GatherND", "n2",
				  IDS(d, wi(g, "i2", DT_INT64, SHAPE(2, 2),
					    INTS(0, 1, 1, 0))),
				  1),
			  0);
	ValId big = tu_input(g, "big", DT_FLOAT, SHAPE(4, 5, 6, 7));
	ValId bi = tu_input(g, "bi", DT_INT64, SHAPE(4, 3, 2));
	n = tu_node(g, "GatherND", "n3", IDS(big, bi), 1);
	tu_int(g, n, "batch_dims", 1);
	ValId n3 = tu_out(n, 0);
	infer_ok(m);
	expect_ints(g, ge, "[2,2]", INTS(1, 1, 4, 3));
	expect_ints(g, nd, "[2,2]", INTS(2, 3, 4, 5));
	expect_ints(g, n2, "[2,2]", INTS(2, 3, 4, 5));
	expect_runtime(g, n3, "[4,3,7]", false);
	model_free(m);
}

Test(ops_tensor, scatter_family_folds)
{
	Model *m = tu_model(16);
	Graph *g = m->graph;
	ValId x = wi(g, "x", DT_INT64, SHAPE(1, 5), INTS(1, 2, 3, 4, 5));
	ValId ind = wi(g, "ind", DT_INT64, SHAPE(1, 2), INTS(1, -2));
	ValId upd = wi(g, "upd", DT_INT64, SHAPE(1, 2), INTS(10, 20));
	Node *n = tu_node(g, "ScatterElements", "se", IDS(x, ind, upd), 1);
	tu_int(g, n, "axis", 1);
	ValId se = tu_out(n, 0);
	n = tu_node(g, "ScatterElements", "sa", IDS(x, ind, upd), 1);
	tu_int(g, n, "axis", 1);
	tu_str(g, n, "reduction", "add");
	ValId sa = tu_out(n, 0);
	/* ScatterND with duplicate indices and mul */
	ValId d = iota(g, "d", DT_FLOAT, SHAPE(4));
	ValId ni = wi(g, "ni", DT_INT64, SHAPE(3, 1), INTS(1, 3, 1));
	ValId nu = wf(g, "nu", DT_FLOAT, SHAPE(3), DBLS(2, 3, 4));
	n = tu_node(g, "ScatterND", "sn", IDS(d, ni, nu), 1);
	tu_str(g, n, "reduction", "mul");
	ValId sn = tu_out(n, 0);
	infer_ok(m);
	expect_ints(g, se, "[1,5]", INTS(1, 10, 3, 20, 5));
	expect_ints(g, sa, "[1,5]", INTS(1, 12, 3, 24, 5));
	expect_floats(g, sn, "[4]", DBLS(0, 8, 2, 9));
	model_free(m);

	m = tu_model(10); /* the deprecated Scatter */
	g = m->graph;
	x = wi(g, "x", DT_INT32, SHAPE(3), INTS(0, 0, 0));
	n = tu_node(g, "Scatter", "s",
		    IDS(x, wi(g, "i", DT_INT32, SHAPE(1), INTS(2)),
			wi(g, "u", DT_INT32, SHAPE(1), INTS(5))),
		    1);
	ValId s = tu_out(n, 0);
	infer_ok(m);
	expect_ints(g, s, "[3]", INTS(0, 0, 5));
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(4, 4));
	tu_node(g, "ScatterND", "sn",
		IDS(x, tu_input(g, "i", DT_INT64, SHAPE(3, 1)),
		    tu_input(g, "u", DT_FLOAT, SHAPE(3, 5))),
		1);
	infer_fails_with(m, "node 'sn' (ScatterND): updates 'u' has shape "
			    "[3,5], expected [3,4]");
	model_free(m);
}

Test(ops_tensor, onehot_folds_and_depth_is_data)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	ValId ind = wi(g, "ind", DT_INT64, SHAPE(3), INTS(0, -1, 5));
	ValId vals = wi(g, "vals", DT_INT32, SHAPE(2), INTS(0, 7));
	Node *n = tu_node(g, "OneHot", "oh",
			  IDS(ind, si64(g, "depth", 3), vals), 1);
	ValId oh = tu_out(n, 0);
	n = tu_node(g, "OneHot", "oh0",
		    IDS(ind, wf(g, "fd", DT_FLOAT, SCALAR, DBLS(3)), vals), 1);
	tu_int(g, n, "axis", 0);
	ValId oh0 = tu_out(n, 0);
	ValId depth = tu_input(g, "depth", DT_INT64, SCALAR);
	ValId rt = tu_out(tu_node(g, "OneHot", "rt", IDS(ind, depth, vals), 1),
			  0);
	infer_ok(m);
	expect_ints(g, oh, "[3,3]", INTS(7, 0, 0, 0, 0, 7, 0, 0, 0));
	expect_ints(g, oh0, "[3,3]", INTS(7, 0, 0, 0, 0, 0, 0, 7, 0));
	expect_runtime(g, rt, "[3,-1]", true);
	model_free(m);
}

/* ---- data-dependent shapes ---------------------------------------------- */

Test(ops_tensor, nonzero_folds_a_constant)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId k = wi(g, "k", DT_INT32, SHAPE(2, 3), INTS(1, 0, 2, 0, 0, 3));
	ValId nz = tu_out(tu_node(g, "NonZero", "nz", IDS(k), 1), 0);
	ValId b = wi(g, "b", DT_BOOL, SHAPE(2), INTS(0, 0));
	ValId none = tu_out(tu_node(g, "NonZero", "none", IDS(b), 1), 0);
	ValId f = wf(g, "f", DT_FLOAT, SCALAR, DBLS(0.5));
	ValId sc = tu_out(tu_node(g, "NonZero", "sc", IDS(f), 1), 0);
	infer_ok(m);
	expect_ints(g, nz, "[2,3]", INTS(0, 0, 1, 0, 2, 2));
	expect_ints(g, none, "[1,0]", NULL, 0);
	expect_ints(g, sc, "[1,1]", INTS(0));
	model_free(m);
}

Test(ops_tensor, data_dependent_outputs_are_marked)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(3, 4));
	ValId cond = tu_input(g, "cond", DT_BOOL, SHAPE(3));
	ValId nz = tu_out(tu_node(g, "NonZero", "nz", IDS(x), 1), 0);
	Node *n = tu_node(g, "Compress", "cp", IDS(x, cond), 1);
	tu_int(g, n, "axis", 0);
	ValId cp = tu_out(n, 0);
	ValId flat = tu_out(tu_node(g, "Compress", "flat", IDS(x, cond), 1), 0);
	n = tu_node(g, "Unique", "u", IDS(x), 4);
	ValId uy = tu_out(n, 0), ui = tu_out(n, 1), uinv = tu_out(n, 2),
	      uc = tu_out(n, 3);
	n = tu_node(g, "Unique", "ua", IDS(x), 4);
	tu_int(g, n, "axis", -1);
	ValId uay = tu_out(n, 0), uainv = tu_out(n, 2);
	/* downstream of a data-dependent value stays marked */
	ValId after = tu_out(tu_node(g, "Relu", "relu", IDS(nz), 1), 0);
	ValId shp = tu_out(tu_node(g, "Shape", "shape", IDS(cp), 1), 0);
	infer_ok(m);
	expect_runtime(g, nz, "[2,-1]", true);
	cr_assert_eq(tu_dtype(g, nz), DT_INT64);
	expect_runtime(g, cp, "[-1,4]", true);
	expect_runtime(g, flat, "[-1]", true);
	expect_runtime(g, uy, "[-1]", true);
	expect_runtime(g, ui, "[-1]", true);
	expect_runtime(g, uinv, "[12]", false);
	expect_runtime(g, uc, "[-1]", true);
	expect_runtime(g, uay, "[3,-1]", true);
	expect_runtime(g, uainv, "[4]", false);
	expect_runtime(g, after, "[2,-1]", true);
	expect_runtime(g, shp, "[2]", false);
	model_free(m);
}

Test(ops_tensor, compress_folds_with_constant_condition)
{
	Model *m = tu_model(11);
	Graph *g = m->graph;
	ValId x = iota(g, "x", DT_INT64, SHAPE(3, 2));
	ValId cond = wi(g, "cond", DT_BOOL, SHAPE(2), INTS(0, 1));
	Node *n = tu_node(g, "Compress", "c1", IDS(x, cond), 1);
	tu_int(g, n, "axis", 1);
	ValId c1 = tu_out(n, 0);
	ValId c3 = wi(g, "c3", DT_BOOL, SHAPE(5), INTS(1, 0, 0, 1, 1));
	ValId flat = tu_out(tu_node(g, "Compress", "flat", IDS(x, c3), 1), 0);
	/* a constant condition gives a static shape for a runtime input */
	ValId y = tu_input(g, "y", DT_FLOAT, SHAPE(4, 3));
	n = tu_node(g, "Compress", "c2", IDS(y, cond), 1);
	tu_int(g, n, "axis", 0);
	ValId c2 = tu_out(n, 0);
	infer_ok(m);
	expect_ints(g, c1, "[3,1]", INTS(1, 3, 5));
	expect_ints(g, flat, "[3]", INTS(0, 3, 4));
	expect_runtime(g, c2, "[1,3]", false);
	model_free(m);
}

Test(ops_tensor, unique_folds_a_constant)
{
	for (int sorted = 0; sorted <= 1; sorted++) {
		Model *m = tu_model(11);
		Graph *g = m->graph;
		ValId x = wf(g, "x", DT_FLOAT, SHAPE(6), DBLS(2, 1, 1, 3, 4, 3));
		Node *n = tu_node(g, "Unique", "u", IDS(x), 4);
		tu_int(g, n, "sorted", sorted);
		ValId y = tu_out(n, 0), ind = tu_out(n, 1), inv = tu_out(n, 2),
		      cnt = tu_out(n, 3);
		infer_ok(m);
		if (sorted) {
			expect_floats(g, y, "[4]", DBLS(1, 2, 3, 4));
			expect_ints(g, ind, "[4]", INTS(1, 0, 3, 4));
			expect_ints(g, inv, "[6]", INTS(1, 0, 0, 2, 3, 2));
			expect_ints(g, cnt, "[4]", INTS(2, 1, 2, 1));
		} else {
			expect_floats(g, y, "[4]", DBLS(2, 1, 3, 4));
			expect_ints(g, ind, "[4]", INTS(0, 1, 3, 4));
			expect_ints(g, inv, "[6]", INTS(0, 1, 1, 2, 3, 2));
			expect_ints(g, cnt, "[4]", INTS(1, 2, 2, 1));
		}
		model_free(m);
	}
	/* along an axis: rows [1,0,0], [1,0,0], [2,3,4] */
	Model *m = tu_model(11);
	Graph *g = m->graph;
	ValId x = wi(g, "x", DT_INT64, SHAPE(3, 3),
		     INTS(2, 3, 4, 1, 0, 0, 1, 0, 0));
	Node *n = tu_node(g, "Unique", "u", IDS(x), 4);
	tu_int(g, n, "axis", 0);
	tu_omit_out(g, n, 3);
	ValId y = tu_out(n, 0), ind = tu_out(n, 1), inv = tu_out(n, 2);
	infer_ok(m);
	expect_ints(g, y, "[2,3]", INTS(1, 0, 0, 2, 3, 4));
	expect_ints(g, ind, "[2]", INTS(1, 0));
	expect_ints(g, inv, "[3]", INTS(1, 0, 0));
	model_free(m);
}

/* ---- real-model patterns and limits ------------------------------------- */

/* Position ids and masks as exporters write them: Range(0, Shape(x)[1])
 * and ConstantOfShape(Shape(x)), Expand to Shape(y): all static. */
Test(ops_tensor, shape_driven_constants_fold)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 5));
	ValId shp = tu_out(tu_node(g, "Shape", "shape", IDS(x), 1), 0);
	ValId len = tu_out(tu_node(g, "Gather", "len",
				   IDS(shp, si64(g, "one", 1)), 1),
			   0);
	ValId pos = tu_out(tu_node(g, "Range", "pos",
				   IDS(si64(g, "zero", 0), len,
				       si64(g, "step", 1)),
				   1),
			   0);
	ValId mask = tu_out(tu_node(g, "ConstantOfShape", "mask", IDS(shp), 1),
			    0);
	ValId ex = tu_out(tu_node(g, "Expand", "ex", IDS(pos, shp), 1), 0);
	ValId y = tu_input(g, "y", DT_FLOAT, SHAPE(-1, 5));
	ValId ys = tu_out(tu_node(g, "Shape", "ys", IDS(y), 1), 0);
	ValId ey = tu_out(tu_node(g, "Expand", "ey", IDS(pos, ys), 1), 0);
	infer_ok(m);
	expect_ints(g, pos, "[5]", INTS(0, 1, 2, 3, 4));
	expect_floats(g, mask, "[2,5]", DBLS(0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	expect_ints(g, ex, "[2,5]", INTS(0, 1, 2, 3, 4, 0, 1, 2, 3, 4));
	/* the batch of y is not known, but its 5 is; as with Reshape, a
	 * shape input that is not a constant marks the output (in a gear
	 * branch, where y is static, Shape(y) folds and so does this) */
	expect_runtime(g, ey, "[-1,5]", true);
	model_free(m);
}

Test(ops_tensor, fold_limit_applies_to_data_movement)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	m->fold_limit = 64;
	ValId k = iota(g, "k", DT_INT64, SHAPE(4));
	ValId small = tu_out(tu_node(g, "Tile", "small",
				     IDS(k, tu_weight_ints(g, "r2", INTS(2))),
				     1),
			     0);
	ValId big = tu_out(tu_node(g, "Tile", "big",
				   IDS(k, tu_weight_ints(g, "r3", INTS(3))), 1),
			   0);
	ValId u = tu_out(tu_node(g, "Unique", "u", IDS(big), 1), 0);
	cr_assert_eq(infer_graph(m, g), 0, "%s", last_error());
	expect_ints(g, small, "[8]", INTS(0, 1, 2, 3, 0, 1, 2, 3));
	expect_runtime(g, big, "[12]", false); /* 96 bytes: not folded */
	expect_runtime(g, u, "[-1]", true);
	model_free(m);
}

Test(ops_tensor, legacy_tile_split_and_slice_forms)
{
	Model *m = tu_model(1);
	Graph *g = m->graph;
	ValId x = iota(g, "x", DT_INT64, SHAPE(2, 2));
	ValId t = tu_out(tu_node(g, "Tile", "tile",
				 IDS(x, si64(g, "tiles", 2), si64(g, "axis", 1)),
				 1),
			 0);
	Node *n = tu_node(g, "Split", "split",
			  IDS(x, tu_weight_ints(g, "sp", INTS(1, 1))), 2);
	ValId s1 = tu_out(n, 1);
	infer_ok(m);
	expect_ints(g, t, "[2,4]", INTS(0, 1, 0, 1, 2, 3, 2, 3));
	expect_ints(g, s1, "[1,2]", INTS(2, 3));
	model_free(m);

	m = tu_model(13); /* int32 starts and ends */
	g = m->graph;
	x = iota(g, "x", DT_INT64, SHAPE(6));
	ValId s = tu_out(tu_node(g, "Slice", "s",
				 IDS(x, wi(g, "st", DT_INT32, SHAPE(1), INTS(-2)),
				     wi(g, "en", DT_INT32, SHAPE(1),
					INTS(INT32_MAX))),
				 1),
			 0);
	infer_ok(m);
	expect_ints(g, s, "[2]", INTS(4, 5));
	model_free(m);
}
