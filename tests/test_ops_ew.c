/* tests/test_ops_ew.c - the elementwise family (compiler/ops/elementwise.c,
 * compiler/ops/logic.c): shape and dtype inference with broadcasting, and
 * constant folding checked value by value. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "compiler/ops/opimpl.h"
#include "testutil.h"

/* A list of doubles: its pointer and count. */
#define DBLS(...)                                                         \
	(const double[]){ __VA_ARGS__ },                                  \
		(int32_t)(sizeof((double[]){ __VA_ARGS__ }) / sizeof(double))

/* A node op on ins named "op_K" (K: its index); returns output 0. */
static Node *node(Graph *g, const char *op, const ValId *ins, int32_t n)
{
	char name[64];
	snprintf(name, sizeof(name), "%s_%d", op, g->nnodes);
	return tu_node(g, op, name, ins, n, 1);
}

#define OP(g, op, ...) tu_out(node((g), (op), IDS(__VA_ARGS__)), 0)

static ValId konst_of(Graph *g, const char *name, int dt, Shape s,
		      const void *data)
{
	return tu_weight_data(g, name, dt, s, data);
}

static const Tensor *folded(Graph *g, ValId v)
{
	const Tensor *t = g->vals[v].konst;
	cr_assert_not_null(t, "'%s' was not folded", g->vals[v].name);
	return t;
}

static void not_folded(Graph *g, ValId v)
{
	cr_assert_null(g->vals[v].konst, "'%s' was folded", g->vals[v].name);
}

/* v is folded to dtype dt holding exactly want[0..n) (as integers). */
static void expect_ints(Graph *g, ValId v, int dt, const int64_t *want,
			int32_t n)
{
	const Tensor *t = folded(g, v);
	cr_assert_eq(t->dtype, dt, "'%s' is %s", g->vals[v].name,
		     dtype_name(t->dtype));
	cr_assert_eq(shape_numel(&t->shape), n, "'%s' has %lld values",
		     g->vals[v].name, (long long)shape_numel(&t->shape));
	for (int32_t i = 0; i < n; i++)
		cr_assert_eq(tensor_get_i64(t, i), want[i],
			     "'%s'[%d] = %lld, expected %lld", g->vals[v].name,
			     i, (long long)tensor_get_i64(t, i),
			     (long long)want[i]);
}

/* v is folded to dtype dt holding exactly want[0..n) (NaN matches NaN). */
static void expect_dbls(Graph *g, ValId v, int dt, const double *want,
			int32_t n)
{
	const Tensor *t = folded(g, v);
	cr_assert_eq(t->dtype, dt, "'%s' is %s", g->vals[v].name,
		     dtype_name(t->dtype));
	cr_assert_eq(shape_numel(&t->shape), n);
	for (int32_t i = 0; i < n; i++) {
		double got = tensor_get_f64(t, i);
		cr_assert(got == want[i] || (isnan(got) && isnan(want[i])),
			  "'%s'[%d] = %.17g, expected %.17g", g->vals[v].name, i,
			  got, want[i]);
	}
}

/* ---- broadcasting --------------------------------------------------------- */

/* op of shapes a and b gives want ("error: ..." for that failure). */
static void bcast(const char *op, Shape a, Shape b, const char *want)
{
	Model *m = tu_model(17);
	Graph *g = m->graph;
	int dt = !strcmp(op, "And") ? DT_BOOL : DT_FLOAT;
	ValId x = tu_input(g, "a", dt, a);
	ValId y = tu_input(g, "b", dt, b);
	ValId z = tu_out(tu_node(g, op, "n", IDS(x, y), 1), 0);
	if (!strncmp(want, "error: ", 7)) {
		infer_fails(m, want + 7);
	} else {
		infer_ok(m);
		cr_assert_str_eq(tu_shape(g, z), want, "%s", op);
		cr_assert_eq(tu_dtype(g, z),
			     strcmp(op, "Add") && strcmp(op, "Max") ? DT_BOOL
								    : DT_FLOAT);
	}
	model_free(m);
}

Test(ops_ew, broadcast_scalar_and_rank_mismatch)
{
	static const char *ops[] = { "Add", "Equal", "And", "Max", "Less" };
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		bcast(ops[i], SHAPE(2, 3, 4), SCALAR, "[2,3,4]");
		bcast(ops[i], SCALAR, SHAPE(5), "[5]");
		bcast(ops[i], SCALAR, SCALAR, "[]");
		bcast(ops[i], SHAPE(4), SHAPE(2, 3, 4), "[2,3,4]");
		bcast(ops[i], SHAPE(3, 1, 4), SHAPE(2, 1, 1, 1), "[2,3,1,4]");
	}
}

Test(ops_ew, broadcast_ones_on_either_side)
{
	bcast("Add", SHAPE(3, 1), SHAPE(1, 4), "[3,4]");
	bcast("Add", SHAPE(1, 4), SHAPE(3, 1), "[3,4]");
	bcast("Add", SHAPE(2, 1, 5), SHAPE(7, 1), "[2,7,5]");
	bcast("Add", SHAPE(1), SHAPE(6), "[6]");
	bcast("Add", SHAPE(1, 1, 1), SHAPE(1), "[1,1,1]");
}

Test(ops_ew, broadcast_zero_size_dims)
{
	bcast("Add", SHAPE(2, 1), SHAPE(2, 0), "[2,0]");
	bcast("Add", SHAPE(0, 3), SHAPE(1, 3), "[0,3]");
	bcast("Add", SHAPE(0), SCALAR, "[0]");
	bcast("Add", SHAPE(0), SHAPE(2),
	      "error: node 'n' (Add): shapes [0] and [2] cannot be broadcast: 0 "
	      "vs 2 at axis 0 of the result");
}

Test(ops_ew, broadcast_incompatible_dims_name_node_and_shapes)
{
	bcast("Add", SHAPE(2, 3), SHAPE(4),
	      "error: node 'n' (Add): shapes [2,3] and [4] cannot be broadcast: "
	      "3 vs 4 at axis 1 of the result");
	bcast("Equal", SHAPE(5, 4), SHAPE(2, 3, 4),
	      "error: node 'n' (Equal): shapes [5,4] and [2,3,4] cannot be "
	      "broadcast: 5 vs 3 at axis 1 of the result");
	bcast("And", SHAPE(2), SHAPE(3),
	      "error: node 'n' (And): shapes [2] and [3] cannot be broadcast: 2 "
	      "vs 3 at axis 0 of the result");
}

Test(ops_ew, broadcast_unknown_dims)
{
	bcast("Add", SHAPE(-1), SHAPE(1), "[-1]");
	bcast("Add", SHAPE(1), SHAPE(-1), "[-1]");
	bcast("Add", SHAPE(-1), SHAPE(5), "[5]");
	bcast("Add", SHAPE(5), SHAPE(-1), "[5]");
	bcast("Add", SHAPE(-1), SHAPE(-1), "[-1]");
	bcast("Add", SHAPE(-1, 3), SHAPE(4, 1), "[4,3]");
	bcast("Add", SHAPE(2, -1), SHAPE(-1), "[2,-1]");
	bcast("Less", SHAPE(-1, 5), SHAPE(-1, 1), "[-1,5]");
	bcast("Add", UNKNOWN, SHAPE(3), "[?]");
	bcast("Equal", SHAPE(3), UNKNOWN, "[?]");
}

Test(ops_ew, where_broadcasts_three_ways)
{
	Model *m = tu_model(16);
	Graph *g = m->graph;
	ValId c = tu_input(g, "c", DT_BOOL, SHAPE(2, 1, -1));
	ValId x = tu_input(g, "x", DT_INT64, SHAPE(3, 1));
	ValId y = tu_input(g, "y", DT_INT64, SHAPE(5));
	ValId w = OP(g, "Where", c, x, y);
	ValId bad = tu_input(g, "bad", DT_INT64, SHAPE(4, 1));
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, w), "[2,3,5]");
	cr_assert_eq(tu_dtype(g, w), DT_INT64);
	OP(g, "Where", c, x, bad);
	infer_fails(m, "node 'Where_1' (Where): shapes [2,3,-1] and [4,1] "
		       "cannot be broadcast: 3 vs 4 at axis 1 of the result");
	model_free(m);
}

Test(ops_ew, variadic_broadcast_and_legacy_same_shape)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId a = tu_input(g, "a", DT_FLOAT, SHAPE(3, 1));
	ValId b = tu_input(g, "b", DT_FLOAT, SHAPE(4));
	ValId c = tu_input(g, "c", DT_FLOAT, SHAPE(2, 1, 1));
	ValId s = OP(g, "Sum", a, b, c);
	ValId one = OP(g, "Max", b);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, s), "[2,3,4]");
	cr_assert_str_eq(tu_shape(g, one), "[4]");
	model_free(m);

	m = tu_model(6); /* opset 6: all inputs of one shape */
	g = m->graph;
	a = tu_input(g, "a", DT_FLOAT, SHAPE(3, -1));
	b = tu_input(g, "b", DT_FLOAT, SHAPE(-1, 4));
	s = OP(g, "Min", a, b);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, s), "[3,4]");
	c = tu_input(g, "c", DT_FLOAT, SHAPE(4));
	OP(g, "Min", a, c);
	infer_fails(m, "node 'Min_1' (Min): input 1 has shape [4], but the "
		       "inputs before have [3,-1]; expected the same before "
		       "opset 8");
	model_free(m);
}

Test(ops_ew, legacy_broadcast_with_ones_and_axis)
{
	Model *m = tu_model(6);
	Graph *g = m->graph;
	ValId a = tu_weight_data(g, "a", DT_INT64, SHAPE(2, 3),
				 (int64_t[]){ 1, 2, 3, 4, 5, 6 });
	ValId b = tu_weight_data(g, "b", DT_INT64, SHAPE(2, 1),
				 (int64_t[]){ 10, 20 });
	ValId c = tu_weight_data(g, "c", DT_INT64, SHAPE(2),
				 (int64_t[]){ 100, 200 });
	Node *n = node(g, "Add", IDS(a, b));
	tu_int(g, n, "broadcast", 1);
	ValId y = tu_out(n, 0);
	n = node(g, "Mul", IDS(a, c)); /* c runs along axis 0 */
	tu_int(g, n, "broadcast", 1);
	tu_int(g, n, "axis", 0);
	ValId z = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, y), "[2,3]");
	expect_ints(g, y, DT_INT64, INTS(11, 12, 13, 24, 25, 26));
	expect_ints(g, z, DT_INT64, INTS(100, 200, 300, 800, 1000, 1200));
	model_free(m);
}

/* ---- dtypes ------------------------------------------------------------- */

Test(ops_ew, comparison_and_logic_dtypes)
{
	Model *m = tu_model(16);
	Graph *g = m->graph;
	ValId f = tu_input(g, "f", DT_FLOAT, SHAPE(2));
	ValId u = tu_input(g, "u", DT_UINT16, SHAPE(2));
	ValId b = tu_input(g, "b", DT_BOOL, SHAPE(2));
	ValId ge = OP(g, "GreaterOrEqual", f, f);
	ValId eqb = OP(g, "Equal", b, b);
	ValId sh = tu_out(tu_node(g, "BitShift", "sh", IDS(u, u), 1), 0);
	tu_str(g, &g->nodes[g->nnodes - 1], "direction", "LEFT");
	ValId nb = OP(g, "Not", b);
	ValId nan = OP(g, "IsNaN", f);
	infer_ok(m);
	cr_assert_eq(tu_dtype(g, ge), DT_BOOL);
	cr_assert_eq(tu_dtype(g, eqb), DT_BOOL);
	cr_assert_eq(tu_dtype(g, sh), DT_UINT16);
	cr_assert_eq(tu_dtype(g, nb), DT_BOOL);
	cr_assert_eq(tu_dtype(g, nan), DT_BOOL);
	model_free(m);

	m = tu_model(16);
	g = m->graph;
	f = tu_input(g, "f", DT_FLOAT, SHAPE(2));
	tu_node(g, "And", "and", IDS(f, f), 1);
	infer_fails(m, "node 'and' (And): input 0 ('f') has dtype float32, "
		       "expected bool");
	model_free(m);

	m = tu_model(16);
	g = m->graph;
	b = tu_input(g, "b", DT_BOOL, SHAPE(2));
	tu_node(g, "Less", "less", IDS(b, b), 1);
	infer_fails(m, "node 'less' (Less): input 0 ('b') has dtype bool, "
		       "expected float32, uint8, int8, uint16, int16, int32, "
		       "int64, float16, float64, uint32, uint64 or bfloat16");
	model_free(m);

	m = tu_model(16);
	g = m->graph;
	ValId i = tu_input(g, "i", DT_INT32, SHAPE(2));
	Node *n = tu_node(g, "BitShift", "sh", IDS(i, i), 1);
	tu_str(g, n, "direction", "LEFT");
	infer_fails(m, "node 'sh' (BitShift): input 0 ('i') has dtype int32, "
		       "expected uint8, uint16, uint32 or uint64");
	model_free(m);

	m = tu_model(16);
	g = m->graph;
	u = tu_input(g, "u", DT_UINT8, SHAPE(2));
	n = tu_node(g, "BitShift", "sh", IDS(u, u), 1);
	tu_str(g, n, "direction", "UP");
	infer_fails(m, "node 'sh' (BitShift): attribute direction is 'UP', "
		       "expected LEFT or RIGHT");
	model_free(m);
}

Test(ops_ew, unary_dtype_table)
{
	static const struct {
		const char *op;
		int dt, out; /* out: DT_UNDEFINED if an error */
	} cases[] = {
		{ "Abs", DT_UINT32, DT_UINT32 },   { "Sign", DT_INT8, DT_INT8 },
		{ "Erf", DT_INT64, DT_INT64 },	   { "Acos", DT_FLOAT16, DT_FLOAT16 },
		{ "Acos", DT_BFLOAT16, 0 },	   { "Acos", DT_INT32, 0 },
		{ "Ceil", DT_BFLOAT16, DT_BFLOAT16 }, { "Round", DT_DOUBLE, DT_DOUBLE },
		{ "Neg", DT_INT16, DT_INT16 },	   { "Neg", DT_UINT16, 0 },
		{ "Celu", DT_FLOAT, DT_FLOAT },	   { "Celu", DT_DOUBLE, 0 },
		{ "Shrink", DT_UINT8, DT_UINT8 },  { "Mish", DT_FLOAT, DT_FLOAT },
		{ "IsInf", DT_DOUBLE, DT_BOOL },   { "IsNaN", DT_FLOAT16, DT_BOOL },
		{ "IsNaN", DT_INT32, 0 },	   { "Not", DT_BOOL, DT_BOOL },
		{ "Not", DT_INT8, 0 },		   { "Reciprocal", DT_INT32, 0 },
		{ "HardSwish", DT_DOUBLE, DT_DOUBLE },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		Model *m = tu_model(18);
		Graph *g = m->graph;
		ValId x = tu_input(g, "x", cases[i].dt, SHAPE(-1, 2));
		ValId y = OP(g, cases[i].op, x);
		int rc = infer_graph(m, g);
		if (cases[i].out) {
			cr_assert_eq(rc, 0, "%s(%s): %s", cases[i].op,
				     dtype_name(cases[i].dt), last_error());
			cr_assert_eq(tu_dtype(g, y), cases[i].out, "%s",
				     cases[i].op);
			cr_assert_str_eq(tu_shape(g, y), "[-1,2]");
		} else {
			cr_assert_eq(rc, -1, "%s(%s) inferred", cases[i].op,
				     dtype_name(cases[i].dt));
			cr_assert(strstr(last_error(), "has dtype"), "%s",
				  last_error());
		}
		model_free(m);
	}
}

Test(ops_ew, mod_fmod_rules)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(3));
	tu_node(g, "Mod", "mod", IDS(x, x), 1);
	infer_fails(m, "node 'mod' (Mod): fmod must be 1 for float32 inputs");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_INT32, SHAPE(3));
	tu_int(g, tu_node(g, "Mod", "mod", IDS(x, x), 1), "fmod", 2);
	infer_fails(m, "node 'mod' (Mod): attribute fmod is 2, expected 0 or 1");
	model_free(m);
}

/* ---- folding: integer arithmetic ------------------------------------------ */

Test(ops_ew, integer_div_truncates_toward_zero)
{
	Model *m = tu_model(14);
	Graph *g = m->graph;
	ValId a = konst_of(g, "a", DT_INT64, SHAPE(4), (int64_t[]){ 7, -7, 7, -7 });
	ValId b = konst_of(g, "b", DT_INT64, SHAPE(4), (int64_t[]){ 2, 2, -2, -2 });
	ValId d = OP(g, "Div", a, b);
	ValId lo = konst_of(g, "lo", DT_INT32, SHAPE(2),
			    (int32_t[]){ INT32_MIN, -9 });
	ValId m1 = konst_of(g, "m1", DT_INT32, SCALAR, (int32_t[]){ -1 });
	ValId w = OP(g, "Div", lo, m1);
	ValId u = konst_of(g, "u", DT_UINT8, SHAPE(2), (uint8_t[]){ 250, 7 });
	ValId u2 = konst_of(g, "u2", DT_UINT8, SHAPE(1), (uint8_t[]){ 4 });
	ValId du = OP(g, "Div", u, u2);
	ValId z = konst_of(g, "z", DT_INT64, SHAPE(4), (int64_t[]){ 1, 1, 0, 1 });
	ValId dz = OP(g, "Div", a, z);
	ValId f = konst_of(g, "f", DT_FLOAT, SHAPE(2), (float[]){ 1, -1 });
	ValId f0 = konst_of(g, "f0", DT_FLOAT, SCALAR, (float[]){ 0 });
	ValId df = OP(g, "Div", f, f0);
	infer_ok(m);
	expect_ints(g, d, DT_INT64, INTS(3, -3, -3, 3));
	expect_ints(g, w, DT_INT32, INTS(INT32_MIN, 9)); /* wraps as in C */
	expect_ints(g, du, DT_UINT8, INTS(62, 1));
	not_folded(g, dz); /* integer division by zero is undefined */
	cr_assert_str_eq(tu_shape(g, dz), "[4]");
	expect_dbls(g, df, DT_FLOAT, DBLS(INFINITY, -INFINITY));
	model_free(m);
}

Test(ops_ew, integer_mod_signs)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId a = konst_of(g, "a", DT_INT32, SHAPE(6),
			   (int32_t[]){ -4, 7, 5, 4, -7, 8 });
	ValId b = konst_of(g, "b", DT_INT32, SHAPE(6),
			   (int32_t[]){ 2, -3, 8, -2, 3, 5 });
	ValId py = OP(g, "Mod", a, b);
	Node *n = node(g, "Mod", IDS(a, b));
	tu_int(g, n, "fmod", 1);
	ValId c = tu_out(n, 0);
	ValId x = konst_of(g, "x", DT_DOUBLE, SHAPE(2), (double[]){ -4.5, 7.5 });
	ValId y = konst_of(g, "y", DT_DOUBLE, SHAPE(2), (double[]){ 2, -2 });
	n = node(g, "Mod", IDS(x, y));
	tu_int(g, n, "fmod", 1);
	ValId fm = tu_out(n, 0);
	ValId u = konst_of(g, "u", DT_UINT64, SHAPE(2),
			   (uint64_t[]){ UINT64_MAX, 10 });
	ValId u7 = konst_of(g, "u7", DT_UINT64, SCALAR, (uint64_t[]){ 7 });
	ValId um = OP(g, "Mod", u, u7);
	infer_ok(m);
	/* fmod=0: the sign of the divisor (Python); fmod=1: of the dividend */
	expect_ints(g, py, DT_INT32, INTS(0, -2, 5, 0, 2, 3));
	expect_ints(g, c, DT_INT32, INTS(0, 1, 5, 0, -1, 3));
	expect_dbls(g, fm, DT_DOUBLE, DBLS(-0.5, 1.5));
	const Tensor *t = folded(g, um);
	cr_assert_eq(((const uint64_t *)t->data)[0], UINT64_MAX % 7);
	cr_assert_eq(((const uint64_t *)t->data)[1], 3);
	model_free(m);
}

Test(ops_ew, integer_add_sub_mul_wrap_and_broadcast)
{
	Model *m = tu_model(14);
	Graph *g = m->graph;
	ValId a = konst_of(g, "a", DT_INT8, SHAPE(2, 1), (int8_t[]){ 100, -100 });
	ValId b = konst_of(g, "b", DT_INT8, SHAPE(3), (int8_t[]){ 27, 28, -29 });
	ValId s = OP(g, "Add", a, b);
	ValId d = OP(g, "Sub", a, b);
	ValId big = konst_of(g, "big", DT_INT64, SHAPE(1), (int64_t[]){ INT64_MAX });
	ValId two = konst_of(g, "two", DT_INT64, SCALAR, (int64_t[]){ 2 });
	ValId p = OP(g, "Mul", big, two);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, s), "[2,3]");
	expect_ints(g, s, DT_INT8, INTS(127, -128, 71, -73, -72, 127));
	expect_ints(g, d, DT_INT8, INTS(73, 72, -127, -127, -128, -71));
	expect_ints(g, p, DT_INT64, INTS(-2));
	model_free(m);
}

Test(ops_ew, pow_integer_and_mixed)
{
	Model *m = tu_model(15);
	Graph *g = m->graph;
	ValId a = konst_of(g, "a", DT_INT64, SHAPE(4), (int64_t[]){ 2, -3, 0, 7 });
	ValId e = konst_of(g, "e", DT_INT64, SHAPE(4), (int64_t[]){ 10, 3, 0, 1 });
	ValId p = OP(g, "Pow", a, e);
	ValId ef = konst_of(g, "ef", DT_FLOAT, SCALAR, (float[]){ 0.5f });
	ValId q = OP(g, "Pow", a, ef); /* sqrt(-3) is NaN: not an int64 */
	ValId a2 = konst_of(g, "a2", DT_INT32, SHAPE(2), (int32_t[]){ 9, 10 });
	ValId h = OP(g, "Pow", a2, ef);
	ValId x = konst_of(g, "x", DT_FLOAT, SHAPE(2), (float[]){ 2, 9 });
	ValId ue = konst_of(g, "ue", DT_UINT8, SCALAR, (uint8_t[]){ 3 });
	ValId r = OP(g, "Pow", x, ue);
	ValId i32 = konst_of(g, "i32", DT_INT32, SCALAR, (int32_t[]){ 2 });
	ValId e31 = konst_of(g, "e31", DT_INT32, SCALAR, (int32_t[]){ 31 });
	ValId o = OP(g, "Pow", i32, e31); /* overflows int32 */
	ValId en = konst_of(g, "en", DT_INT64, SCALAR, (int64_t[]){ -1 });
	ValId neg = OP(g, "Pow", a, en);
	infer_ok(m);
	expect_ints(g, p, DT_INT64, INTS(1024, -27, 1, 7));
	not_folded(g, q);
	expect_ints(g, h, DT_INT32, INTS(3, 3)); /* sqrt(10) truncated */
	expect_dbls(g, r, DT_FLOAT, DBLS(8, 729));
	not_folded(g, o);
	not_folded(g, neg);
	model_free(m);
}

Test(ops_ew, bitshift_and_logic)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = konst_of(g, "x", DT_UINT8, SHAPE(3), (uint8_t[]){ 16, 4, 255 });
	ValId s = konst_of(g, "s", DT_UINT8, SHAPE(3), (uint8_t[]){ 1, 2, 3 });
	Node *n = node(g, "BitShift", IDS(x, s));
	tu_str(g, n, "direction", "LEFT");
	ValId l = tu_out(n, 0);
	n = node(g, "BitShift", IDS(x, s));
	tu_str(g, n, "direction", "RIGHT");
	ValId r = tu_out(n, 0);
	ValId s8 = konst_of(g, "s8", DT_UINT8, SCALAR, (uint8_t[]){ 8 });
	n = node(g, "BitShift", IDS(x, s8));
	tu_str(g, n, "direction", "LEFT");
	ValId w = tu_out(n, 0);
	ValId u = konst_of(g, "u", DT_UINT64, SCALAR, (uint64_t[]){ 1 });
	ValId s63 = konst_of(g, "s63", DT_UINT64, SCALAR, (uint64_t[]){ 63 });
	n = node(g, "BitShift", IDS(u, s63));
	tu_str(g, n, "direction", "LEFT");
	ValId top = tu_out(n, 0);
	ValId p = konst_of(g, "p", DT_BOOL, SHAPE(4), (uint8_t[]){ 0, 0, 1, 1 });
	ValId q = konst_of(g, "q", DT_BOOL, SHAPE(4), (uint8_t[]){ 0, 1, 0, 1 });
	ValId land = OP(g, "And", p, q), lor = OP(g, "Or", p, q);
	ValId lxor = OP(g, "Xor", p, q), lnot = OP(g, "Not", p);
	infer_ok(m);
	expect_ints(g, l, DT_UINT8, INTS(32, 16, 248));
	expect_ints(g, r, DT_UINT8, INTS(8, 1, 31));
	not_folded(g, w); /* a shift by the width is undefined */
	cr_assert_eq(((const uint64_t *)folded(g, top)->data)[0],
		     UINT64_C(1) << 63);
	expect_ints(g, land, DT_BOOL, INTS(0, 0, 0, 1));
	expect_ints(g, lor, DT_BOOL, INTS(0, 1, 1, 1));
	expect_ints(g, lxor, DT_BOOL, INTS(0, 1, 1, 0));
	expect_ints(g, lnot, DT_BOOL, INTS(1, 1, 0, 0));
	model_free(m);
}

/* ---- folding: comparisons, Where, shape vectors ---------------------------- */

Test(ops_ew, equal_on_int64_shape_vectors)
{
	Model *m = tu_model(15);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3, 4));
	ValId s = OP(g, "Shape", x);
	ValId want = tu_weight_ints(g, "want", INTS(2, 1, 4));
	ValId eq = OP(g, "Equal", s, want);
	ValId one = tu_weight_ints(g, "one", INTS(1));
	ValId gt = OP(g, "Greater", s, one);
	ValId le = OP(g, "LessOrEqual", s, want);
	ValId all = OP(g, "Not", eq);
	ValId pick = OP(g, "Where", eq, s, one);
	infer_ok(m);
	expect_ints(g, eq, DT_BOOL, INTS(1, 0, 1));
	expect_ints(g, gt, DT_BOOL, INTS(1, 1, 1));
	expect_ints(g, le, DT_BOOL, INTS(1, 0, 1));
	expect_ints(g, all, DT_BOOL, INTS(0, 1, 0));
	expect_ints(g, pick, DT_INT64, INTS(2, 1, 4));
	model_free(m);

	/* a dynamic dim: Shape and everything after it stays unknown */
	m = tu_model(15);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(-1, 3));
	s = OP(g, "Shape", x);
	want = tu_weight_ints(g, "want", INTS(1, 3));
	eq = OP(g, "Equal", s, want);
	infer_ok(m);
	not_folded(g, eq);
	cr_assert_str_eq(tu_shape(g, eq), "[2]");
	model_free(m);
}

Test(ops_ew, comparisons_with_nan_and_unsigned)
{
	Model *m = tu_model(16);
	Graph *g = m->graph;
	ValId a = konst_of(g, "a", DT_FLOAT, SHAPE(3), (float[]){ NAN, 1, 2 });
	ValId b = konst_of(g, "b", DT_FLOAT, SHAPE(3), (float[]){ NAN, 1, 1 });
	ValId eq = OP(g, "Equal", a, b), ge = OP(g, "GreaterOrEqual", a, b);
	ValId lt = OP(g, "Less", a, b), nan = OP(g, "IsNaN", a);
	ValId u = konst_of(g, "u", DT_UINT64, SHAPE(2),
			   (uint64_t[]){ UINT64_MAX, 1 });
	ValId v = konst_of(g, "v", DT_UINT64, SCALAR, (uint64_t[]){ 2 });
	ValId ugt = OP(g, "Greater", u, v);
	ValId inf = konst_of(g, "inf", DT_DOUBLE, SHAPE(4),
			     (double[]){ -INFINITY, INFINITY, NAN, 1 });
	ValId all = OP(g, "IsInf", inf);
	Node *n = node(g, "IsInf", IDS(inf));
	tu_int(g, n, "detect_positive", 0);
	ValId negonly = tu_out(n, 0);
	infer_ok(m);
	expect_ints(g, eq, DT_BOOL, INTS(0, 1, 0));
	expect_ints(g, ge, DT_BOOL, INTS(0, 1, 1));
	expect_ints(g, lt, DT_BOOL, INTS(0, 0, 0));
	expect_ints(g, nan, DT_BOOL, INTS(1, 0, 0));
	expect_ints(g, ugt, DT_BOOL, INTS(1, 0));
	expect_ints(g, all, DT_BOOL, INTS(1, 1, 0, 0));
	expect_ints(g, negonly, DT_BOOL, INTS(1, 0, 0, 0));
	model_free(m);
}

Test(ops_ew, where_folds_with_broadcast)
{
	Model *m = tu_model(16);
	Graph *g = m->graph;
	ValId c = konst_of(g, "c", DT_BOOL, SHAPE(2, 1), (uint8_t[]){ 1, 0 });
	ValId x = konst_of(g, "x", DT_INT32, SHAPE(1, 3), (int32_t[]){ 1, 2, 3 });
	ValId y = konst_of(g, "y", DT_INT32, SCALAR, (int32_t[]){ -1 });
	ValId w = OP(g, "Where", c, x, y);
	ValId c2 = konst_of(g, "c2", DT_BOOL, SHAPE(3), (uint8_t[]){ 0, 1, 0 });
	ValId fx = konst_of(g, "fx", DT_FLOAT16, SCALAR, (uint16_t[]){ 0x3c00 });
	ValId fy = konst_of(g, "fy", DT_FLOAT16, SHAPE(3),
			    (uint16_t[]){ 0x4000, 0x4200, 0x4400 });
	ValId h = OP(g, "Where", c2, fx, fy);
	ValId e = konst_of(g, "e", DT_BOOL, SHAPE(0, 1), NULL);
	ValId empty = OP(g, "Where", e, x, y);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, w), "[2,3]");
	expect_ints(g, w, DT_INT32, INTS(1, 2, 3, -1, -1, -1));
	expect_dbls(g, h, DT_FLOAT16, DBLS(2, 1, 4));
	cr_assert_str_eq(tu_shape(g, empty), "[0,3]");
	cr_assert_eq(shape_numel(&folded(g, empty)->shape), 0);
	model_free(m);
}

/* ---- folding: Cast -------------------------------------------------------- */

Test(ops_ew, cast_float_to_int_truncates)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId f = konst_of(g, "f", DT_FLOAT, SHAPE(5),
			   (float[]){ -2.7f, -0.5f, 0.5f, 2.9f, 127.99f });
	Node *n = node(g, "Cast", IDS(f));
	tu_int(g, n, "to", DT_INT32);
	ValId i = tu_out(n, 0);
	n = node(g, "Cast", IDS(f));
	tu_int(g, n, "to", DT_INT8);
	ValId i8 = tu_out(n, 0);
	n = node(g, "Cast", IDS(f));
	tu_int(g, n, "to", DT_UINT8); /* -2.7 has no uint8 value */
	ValId u8 = tu_out(n, 0);
	ValId big = konst_of(g, "big", DT_DOUBLE, SHAPE(2), (double[]){ 1e10, 1 });
	n = node(g, "Cast", IDS(big));
	tu_int(g, n, "to", DT_INT32);
	ValId ov = tu_out(n, 0);
	ValId nan = konst_of(g, "nan", DT_FLOAT, SCALAR, (float[]){ NAN });
	n = node(g, "Cast", IDS(nan));
	tu_int(g, n, "to", DT_INT64);
	ValId ni = tu_out(n, 0);
	infer_ok(m);
	expect_ints(g, i, DT_INT32, INTS(-2, 0, 0, 2, 127));
	expect_ints(g, i8, DT_INT8, INTS(-2, 0, 0, 2, 127));
	not_folded(g, u8);
	not_folded(g, ov);
	not_folded(g, ni);
	cr_assert_str_eq(tu_shape(g, ov), "[2]");
	cr_assert_eq(tu_dtype(g, ov), DT_INT32);
	model_free(m);
}

Test(ops_ew, cast_between_ints_bools_and_floats)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId a = konst_of(g, "a", DT_INT64, SHAPE(4), (int64_t[]){ 300, -129, 0, -1 });
	Node *n = node(g, "Cast", IDS(a));
	tu_int(g, n, "to", DT_INT8);
	ValId i8 = tu_out(n, 0);
	n = node(g, "Cast", IDS(a));
	tu_int(g, n, "to", DT_BOOL);
	ValId b = tu_out(n, 0);
	n = node(g, "Cast", IDS(a));
	tu_int(g, n, "to", DT_UINT16);
	ValId u16 = tu_out(n, 0);
	ValId f = konst_of(g, "f", DT_FLOAT, SHAPE(4), (float[]){ 0, -0.0f, 0.25f, NAN });
	n = node(g, "Cast", IDS(f));
	tu_int(g, n, "to", DT_BOOL);
	ValId fb = tu_out(n, 0);
	ValId bb = konst_of(g, "bb", DT_BOOL, SHAPE(2), (uint8_t[]){ 1, 0 });
	n = node(g, "Cast", IDS(bb));
	tu_int(g, n, "to", DT_DOUBLE);
	ValId bd = tu_out(n, 0);
	ValId like = tu_input(g, "like", DT_INT16, SHAPE(7));
	ValId cl = OP(g, "CastLike", f, like);
	infer_ok(m);
	expect_ints(g, i8, DT_INT8, INTS(44, 127, 0, -1));
	expect_ints(g, b, DT_BOOL, INTS(1, 1, 0, 1));
	expect_ints(g, u16, DT_UINT16, INTS(300, 65407, 0, 65535));
	expect_ints(g, fb, DT_BOOL, INTS(0, 0, 1, 1));
	expect_dbls(g, bd, DT_DOUBLE, DBLS(1, 0));
	cr_assert_eq(tu_dtype(g, cl), DT_INT16);
	cr_assert_str_eq(tu_shape(g, cl), "[4]");
	not_folded(g, cl); /* NaN has no int16 value */
	model_free(m);
}

/* Rounding to float16 is to nearest, ties to even, from the exact value. */
Test(ops_ew, cast_to_float16_rounds_half_to_even)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId a = konst_of(g, "a", DT_INT32, SHAPE(6),
			   (int32_t[]){ 2049, 2051, 65504, 65519, 65520, -3 });
	Node *n = node(g, "Cast", IDS(a));
	tu_int(g, n, "to", DT_FLOAT16);
	ValId h = tu_out(n, 0);
	/* 1 + 2^-11 is a tie: stays 1; 1 + 3 * 2^-11 rounds up to 1 + 2^-9 */
	ValId d = konst_of(g, "d", DT_DOUBLE, SHAPE(3),
			   (double[]){ 1 + 0x1p-11, 1 + 3 * 0x1p-11, 0x1p-25 });
	n = node(g, "Cast", IDS(d));
	tu_int(g, n, "to", DT_FLOAT16);
	ValId h2 = tu_out(n, 0);
	n = node(g, "Cast", IDS(d));
	tu_int(g, n, "to", DT_BFLOAT16);
	ValId bf = tu_out(n, 0);
	infer_ok(m);
	const uint16_t *p = folded(g, h)->data;
	cr_assert_eq(p[0], 0x6800); /* 2048 */
	cr_assert_eq(p[1], 0x6802); /* 2052 */
	cr_assert_eq(p[2], 0x7bff); /* 65504, the largest */
	cr_assert_eq(p[3], 0x7bff);
	cr_assert_eq(p[4], 0x7c00); /* inf */
	cr_assert_eq(p[5], 0xc200); /* -3 */
	p = folded(g, h2)->data;
	cr_assert_eq(p[0], 0x3c00);
	cr_assert_eq(p[1], 0x3c02);
	cr_assert_eq(p[2], 0x0000); /* half the smallest subnormal: tie to 0 */
	p = folded(g, bf)->data;
	cr_assert_eq(p[0], 0x3f80);
	cr_assert_eq(p[1], 0x3f80);
	cr_assert_eq(p[2], 0x3300);
	model_free(m);
}

Test(ops_ew, cast_strings_and_bad_targets)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId f = konst_of(g, "f", DT_FLOAT, SHAPE(2), (float[]){ 1, 2 });
	Node *n = node(g, "Cast", IDS(f));
	tu_int(g, n, "to", DT_STRING);
	ValId s = tu_out(n, 0);
	ValId x = tu_input(g, "x", DT_STRING, SHAPE(3, -1));
	n = node(g, "Cast", IDS(x));
	tu_int(g, n, "to", DT_FLOAT);
	ValId y = tu_out(n, 0);
	infer_ok(m);
	cr_assert_eq(tu_dtype(g, s), DT_STRING);
	cr_assert_str_eq(tu_shape(g, s), "[2]");
	const Bytes *str = folded(g, s)->data; /* as numpy's str() */
	cr_assert(str[0].len == 3 && !memcmp(str[0].data, "1.0", 3));
	cr_assert(str[1].len == 3 && !memcmp(str[1].data, "2.0", 3));
	cr_assert_eq(tu_dtype(g, y), DT_FLOAT);
	cr_assert_str_eq(tu_shape(g, y), "[3,-1]");
	model_free(m);

	m = tu_model(1); /* opset 1 names the dtype */
	g = m->graph;
	f = konst_of(g, "f", DT_FLOAT, SHAPE(2), (float[]){ 1.5f, -2.5f });
	n = node(g, "Cast", IDS(f));
	tu_str(g, n, "to", "INT32");
	ValId c1 = tu_out(n, 0);
	infer_ok(m);
	expect_ints(g, c1, DT_INT32, INTS(1, -2));
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2));
	tu_int(g, tu_node(g, "Cast", "cast", IDS(x), 1), "to", 14);
	infer_fails(m, "node 'cast' (Cast): attribute 'to' is 14, which is not a "
		       "dtype Cast supports");
	model_free(m);

	m = tu_model(13);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2));
	tu_node(g, "Cast", "cast", IDS(x), 1);
	infer_fails(m, "node 'cast' (Cast): attribute 'to' is required");
	model_free(m);
}

/* ---- folding: float math -------------------------------------------------- */

Test(ops_ew, unary_float_folds)
{
	Model *m = tu_model(17);
	Graph *g = m->graph;
	ValId x = konst_of(g, "x", DT_FLOAT, SHAPE(6),
			   (float[]){ -2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f });
	ValId round = OP(g, "Round", x);
	ValId floor = OP(g, "Floor", x), ceil = OP(g, "Ceil", x);
	ValId abs = OP(g, "Abs", x), neg = OP(g, "Neg", x);
	ValId sign = OP(g, "Sign", x), relu = OP(g, "Relu", x);
	ValId rec = OP(g, "Reciprocal", x);
	Node *n = node(g, "LeakyRelu", IDS(x));
	tu_float(g, n, "alpha", 0.5f);
	ValId lrelu = tu_out(n, 0);
	n = node(g, "Shrink", IDS(x));
	tu_float(g, n, "lambd", 1.0f);
	tu_float(g, n, "bias", 0.5f);
	ValId shrink = tu_out(n, 0);
	ValId hs = OP(g, "HardSigmoid", x);
	ValId tr = OP(g, "ThresholdedRelu", x);
	ValId sq = konst_of(g, "sq", DT_DOUBLE, SHAPE(2), (double[]){ 2, -1 });
	ValId sqrt = OP(g, "Sqrt", sq);
	infer_ok(m);
	expect_dbls(g, round, DT_FLOAT, DBLS(-2, -2, -0.0, 0, 2, 2));
	expect_dbls(g, floor, DT_FLOAT, DBLS(-3, -2, -1, 0, 1, 2));
	expect_dbls(g, ceil, DT_FLOAT, DBLS(-2, -1, -0.0, 1, 2, 3));
	expect_dbls(g, abs, DT_FLOAT, DBLS(2.5, 1.5, 0.5, 0.5, 1.5, 2.5));
	expect_dbls(g, neg, DT_FLOAT, DBLS(2.5, 1.5, 0.5, -0.5, -1.5, -2.5));
	expect_dbls(g, sign, DT_FLOAT, DBLS(-1, -1, -1, 1, 1, 1));
	expect_dbls(g, relu, DT_FLOAT, DBLS(0, 0, 0, 0.5, 1.5, 2.5));
	expect_dbls(g, rec, DT_FLOAT,
		    DBLS((float)(1 / -2.5), (float)(1 / -1.5), -2, 2,
			 (float)(1 / 1.5), (float)(1 / 2.5)));
	expect_dbls(g, lrelu, DT_FLOAT, DBLS(-1.25, -0.75, -0.25, 0.5, 1.5, 2.5));
	expect_dbls(g, shrink, DT_FLOAT, DBLS(-2, -1, 0, 0, 1, 2));
	expect_dbls(g, hs, DT_FLOAT,
		    DBLS(0, (float)(0.2f * -1.5 + 0.5), (float)(0.2f * -0.5 + 0.5),
			 (float)(0.2f * 0.5 + 0.5), (float)(0.2f * 1.5 + 0.5), 1));
	expect_dbls(g, tr, DT_FLOAT, DBLS(0, 0, 0, 0, 1.5, 2.5));
	expect_dbls(g, sqrt, DT_DOUBLE, DBLS(M_SQRT2, NAN));
	model_free(m);
}

Test(ops_ew, unary_integer_folds)
{
	Model *m = tu_model(14);
	Graph *g = m->graph;
	ValId x = konst_of(g, "x", DT_INT8, SHAPE(4), (int8_t[]){ -128, -3, 0, 5 });
	ValId abs = OP(g, "Abs", x), neg = OP(g, "Neg", x);
	ValId sign = OP(g, "Sign", x), relu = OP(g, "Relu", x);
	ValId u = konst_of(g, "u", DT_UINT32, SHAPE(2), (uint32_t[]){ 0, 7 });
	ValId us = OP(g, "Sign", u);
	Node *n = node(g, "Shrink", IDS(x));
	tu_float(g, n, "lambd", 2.0f);
	tu_float(g, n, "bias", 1.5f);
	ValId sh = tu_out(n, 0);
	infer_ok(m);
	expect_ints(g, abs, DT_INT8, INTS(-128, 3, 0, 5)); /* wraps as numpy */
	expect_ints(g, neg, DT_INT8, INTS(-128, 3, 0, -5));
	expect_ints(g, sign, DT_INT8, INTS(-1, -1, 0, 1));
	expect_ints(g, relu, DT_INT8, INTS(0, 0, 0, 5));
	expect_ints(g, us, DT_UINT32, INTS(0, 1));
	/* -128 + 1.5 -> -126.5 -> -126; -3 + 1.5 -> -1; 5 - 1.5 -> 3 */
	expect_ints(g, sh, DT_INT8, INTS(-126, -1, 0, 3));
	model_free(m);
}

Test(ops_ew, activations_match_their_formulas)
{
	Model *m = tu_model(18);
	Graph *g = m->graph;
	double in[] = { -3, -0.25, 0, 0.5, 4 };
	ValId x = konst_of(g, "x", DT_DOUBLE, SHAPE(5), in);
	ValId sig = OP(g, "Sigmoid", x), sp = OP(g, "Softplus", x);
	ValId ss = OP(g, "Softsign", x), elu = OP(g, "Elu", x);
	ValId selu = OP(g, "Selu", x), hsw = OP(g, "HardSwish", x);
	ValId mish = OP(g, "Mish", x), erf_ = OP(g, "Erf", x);
	ValId tanh_ = OP(g, "Tanh", x);
	ValId xf = konst_of(g, "xf", DT_FLOAT, SHAPE(2), (float[]){ -1, 2 });
	Node *n = node(g, "Celu", IDS(xf));
	tu_float(g, n, "alpha", 2.0f);
	ValId celu = tu_out(n, 0);
	infer_ok(m);
	const Tensor *t[] = { folded(g, sig), folded(g, sp), folded(g, ss),
			      folded(g, elu), folded(g, selu), folded(g, hsw),
			      folded(g, mish), folded(g, erf_), folded(g, tanh_) };
	double sa = 1.67326319217681884765625, sg = 1.05070102214813232421875;
	for (int i = 0; i < 5; i++) {
		double v = in[i], s = log1p(exp(v));
		double want[] = { 1 / (1 + exp(-v)), s, v / (1 + fabs(v)),
				  v < 0 ? expm1(v) : v,
				  sg * (v > 0 ? v : sa * expm1(v)),
				  v * fmax(0, fmin(1, (double)(float)(1.0 / 6) * v + 0.5)),
				  v * tanh(s), erf(v), tanh(v) };
		for (size_t k = 0; k < ARRAY_SIZE(want); k++)
			cr_assert_float_eq(tensor_get_f64(t[k], i), want[k], 4e-15,
					   "op %zu at %g: %.17g vs %.17g", k, v,
					   tensor_get_f64(t[k], i), want[k]);
	}
	expect_dbls(g, celu, DT_FLOAT, DBLS((float)(2 * expm1(-0.5)), 2));
	model_free(m);
}

Test(ops_ew, float16_arithmetic_rounds_once_per_op)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	/* 2048 + 1 ties to 2048, 2048 + 3 ties to 2052 in float16 */
	ValId a = konst_of(g, "a", DT_FLOAT16, SHAPE(2), (uint16_t[]){ 0x6800, 0x6800 });
	ValId b = konst_of(g, "b", DT_FLOAT16, SHAPE(2), (uint16_t[]){ 0x3c00, 0x4200 });
	ValId s = OP(g, "Add", a, b);
	/* Sum rounds after each addition: (2048 + 1) + 1 = 2048 in float16 */
	ValId one = konst_of(g, "one", DT_FLOAT16, SCALAR, (uint16_t[]){ 0x3c00 });
	ValId sum = OP(g, "Sum", a, one, one);
	ValId mean = OP(g, "Mean", a, b);
	infer_ok(m);
	const uint16_t *p = folded(g, s)->data;
	cr_assert_eq(p[0], 0x6800);
	cr_assert_eq(p[1], 0x6802);
	expect_dbls(g, sum, DT_FLOAT16, DBLS(2048, 2048));
	expect_dbls(g, mean, DT_FLOAT16, DBLS(1024, 1026));
	model_free(m);
}

Test(ops_ew, variadic_folds)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId a = konst_of(g, "a", DT_INT32, SHAPE(2, 1), (int32_t[]){ 1, 5 });
	ValId b = konst_of(g, "b", DT_INT32, SHAPE(3), (int32_t[]){ 3, 0, 9 });
	ValId c = konst_of(g, "c", DT_INT32, SCALAR, (int32_t[]){ 4 });
	ValId mx = OP(g, "Max", a, b, c), mn = OP(g, "Min", a, b, c);
	ValId only = OP(g, "Max", b);
	ValId f = konst_of(g, "f", DT_FLOAT, SHAPE(3), (float[]){ NAN, 1, 2 });
	ValId f2 = konst_of(g, "f2", DT_FLOAT, SHAPE(3), (float[]){ 0, 3, 1 });
	ValId fmx = OP(g, "Max", f, f2);
	ValId mean = OP(g, "Mean", f2, f2, f2);
	ValId u = konst_of(g, "u", DT_UINT64, SHAPE(2), (uint64_t[]){ UINT64_MAX, 3 });
	ValId u5 = konst_of(g, "u5", DT_UINT64, SCALAR, (uint64_t[]){ 5 });
	ValId umn = OP(g, "Min", u, u5);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, mx), "[2,3]");
	expect_ints(g, mx, DT_INT32, INTS(4, 4, 9, 5, 5, 9));
	expect_ints(g, mn, DT_INT32, INTS(1, 0, 1, 3, 0, 4));
	cr_assert_eq(folded(g, only), folded(g, b));
	expect_dbls(g, fmx, DT_FLOAT, DBLS(NAN, 3, 2));
	expect_dbls(g, mean, DT_FLOAT, DBLS(0, 3, 1));
	expect_ints(g, umn, DT_UINT64, INTS(5, 3));
	model_free(m);
}

Test(ops_ew, clip_folds_by_opset)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = konst_of(g, "x", DT_INT64, SHAPE(4), (int64_t[]){ -9, 0, 3, 9 });
	ValId lo = konst_of(g, "lo", DT_INT64, SCALAR, (int64_t[]){ -1 });
	ValId hi = konst_of(g, "hi", DT_INT64, SHAPE(1), (int64_t[]){ 5 });
	ValId both = OP(g, "Clip", x, lo, hi);
	ValId nolo = OP(g, "Clip", x, -1, hi);
	ValId none = OP(g, "Clip", x);
	ValId dyn = tu_input(g, "dyn", DT_INT64, SCALAR);
	ValId unk = OP(g, "Clip", x, dyn);
	infer_ok(m);
	expect_ints(g, both, DT_INT64, INTS(-1, 0, 3, 5));
	expect_ints(g, nolo, DT_INT64, INTS(-9, 0, 3, 5));
	expect_ints(g, none, DT_INT64, INTS(-9, 0, 3, 9));
	not_folded(g, unk);
	model_free(m);

	m = tu_model(6); /* attributes; the defaults are the float range */
	g = m->graph;
	x = konst_of(g, "x", DT_FLOAT, SHAPE(3), (float[]){ -INFINITY, 0.5f, 7 });
	Node *n = node(g, "Clip", IDS(x));
	tu_float(g, n, "max", 1.0f);
	ValId y = tu_out(n, 0);
	infer_ok(m);
	expect_dbls(g, y, DT_FLOAT, DBLS(-FLT_MAX, 0.5, 1));
	model_free(m);
}

Test(ops_ew, softmax_family_folds)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	double in[] = { 1, 2, 3, 3, 2, 1 };
	ValId x = konst_of(g, "x", DT_DOUBLE, SHAPE(2, 3), in);
	ValId sm = OP(g, "Softmax", x);
	ValId lsm = OP(g, "LogSoftmax", x);
	Node *n = node(g, "Hardmax", IDS(x));
	tu_int(g, n, "axis", 0);
	ValId hm0 = tu_out(n, 0);
	ValId ties = konst_of(g, "ties", DT_FLOAT, SHAPE(4), (float[]){ 3, 3, 3, 1 });
	ValId hmt = OP(g, "Hardmax", ties);
	infer_ok(m);
	double z = exp(1) + exp(2) + exp(3);
	for (int i = 0; i < 6; i++) {
		cr_assert_float_eq(tensor_get_f64(folded(g, sm), i),
				   exp(in[i]) / z, 1e-15);
		cr_assert_float_eq(tensor_get_f64(folded(g, lsm), i),
				   in[i] - log(z), 1e-14);
	}
	expect_dbls(g, hm0, DT_DOUBLE, DBLS(0, 1, 1, 1, 0, 0));
	expect_dbls(g, hmt, DT_FLOAT, DBLS(1, 0, 0, 0));
	model_free(m);

	/* before opset 13 the input is seen as 2-D from 'axis' on */
	m = tu_model(11);
	g = m->graph;
	x = konst_of(g, "x", DT_FLOAT, SHAPE(1, 2, 2), (float[]){ 4, 1, 2, 4 });
	ValId h = OP(g, "Hardmax", x);
	infer_ok(m);
	expect_dbls(g, h, DT_FLOAT, DBLS(1, 0, 0, 0));
	model_free(m);
}

Test(ops_ew, prelu_folds_and_legacy_channels)
{
	Model *m = tu_model(16);
	Graph *g = m->graph;
	ValId x = konst_of(g, "x", DT_INT32, SHAPE(2, 2), (int32_t[]){ -4, 4, -6, 6 });
	ValId s = konst_of(g, "s", DT_INT32, SHAPE(2), (int32_t[]){ 2, 3 });
	ValId y = OP(g, "PRelu", x, s);
	infer_ok(m);
	expect_ints(g, y, DT_INT32, INTS(-8, 4, -12, 6));
	model_free(m);

	m = tu_model(6); /* a [C] slope is per channel (axis 1) */
	g = m->graph;
	x = konst_of(g, "x", DT_FLOAT, SHAPE(1, 2, 2), (float[]){ -1, -2, -3, 4 });
	s = konst_of(g, "s", DT_FLOAT, SHAPE(2), (float[]){ 0.5f, 2 });
	y = OP(g, "PRelu", x, s);
	ValId xi = tu_input(g, "xi", DT_FLOAT, SHAPE(-1, 2, 5, 5));
	ValId yi = OP(g, "PRelu", xi, s);
	infer_ok(m);
	expect_dbls(g, y, DT_FLOAT, DBLS(-0.5, -1, -6, 4));
	cr_assert_str_eq(tu_shape(g, yi), "[-1,2,5,5]");
	model_free(m);
}

Test(ops_ew, dropout_folds_only_in_inference_mode)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = konst_of(g, "x", DT_FLOAT, SHAPE(2), (float[]){ 1, 2 });
	Node *n = tu_node(g, "Dropout", "d0", IDS(x), 2);
	ValId y0 = tu_out(n, 0), m0 = tu_out(n, 1);
	ValId r = konst_of(g, "r", DT_FLOAT, SCALAR, (float[]){ 0.5f });
	ValId r0 = konst_of(g, "r0", DT_FLOAT, SCALAR, (float[]){ 0 });
	ValId off = konst_of(g, "off", DT_BOOL, SCALAR, (uint8_t[]){ 0 });
	ValId on = konst_of(g, "on", DT_BOOL, SCALAR, (uint8_t[]){ 1 });
	ValId y1 = tu_out(tu_node(g, "Dropout", "d1", IDS(x, r, off), 1), 0);
	ValId y2 = tu_out(tu_node(g, "Dropout", "d2", IDS(x, r, on), 1), 0);
	ValId y3 = tu_out(tu_node(g, "Dropout", "d3", IDS(x, r0, on), 1), 0);
	ValId t = tu_input(g, "t", DT_BOOL, SCALAR);
	ValId y4 = tu_out(tu_node(g, "Dropout", "d4", IDS(x, r, t), 1), 0);
	infer_ok(m);
	expect_dbls(g, y0, DT_FLOAT, DBLS(1, 2));
	expect_ints(g, m0, DT_BOOL, INTS(1, 1));
	expect_dbls(g, y1, DT_FLOAT, DBLS(1, 2));
	not_folded(g, y2); /* training: random */
	expect_dbls(g, y3, DT_FLOAT, DBLS(1, 2));
	not_folded(g, y4);
	model_free(m);

	m = tu_model(6); /* is_test=0 (the default) is training mode */
	g = m->graph;
	x = konst_of(g, "x", DT_FLOAT, SHAPE(2), (float[]){ 1, 2 });
	y0 = tu_out(tu_node(g, "Dropout", "d0", IDS(x), 1), 0);
	n = tu_node(g, "Dropout", "d1", IDS(x), 1);
	tu_int(g, n, "is_test", 1);
	y1 = tu_out(n, 0);
	infer_ok(m);
	not_folded(g, y0);
	expect_dbls(g, y1, DT_FLOAT, DBLS(1, 2));
	model_free(m);
}

Test(ops_ew, folds_respect_zero_size_and_rank_zero)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId e = konst_of(g, "e", DT_INT64, SHAPE(2, 0), NULL);
	ValId s = konst_of(g, "s", DT_INT64, SCALAR, (int64_t[]){ 3 });
	ValId a = OP(g, "Add", e, s);
	ValId b = OP(g, "Mul", s, s);
	ValId n = OP(g, "Neg", e);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, a), "[2,0]");
	cr_assert_eq(shape_numel(&folded(g, a)->shape), 0);
	cr_assert_str_eq(tu_shape(g, b), "[]");
	expect_ints(g, b, DT_INT64, INTS(9));
	cr_assert_eq(shape_numel(&folded(g, n)->shape), 0);
	model_free(m);
}

/* ---- random ops: shapes only ------------------------------------------------ */

Test(ops_ew, random_ops_are_shaped_never_folded)
{
	Model *m = tu_model(15);
	Graph *g = m->graph;
	ValId x = konst_of(g, "x", DT_FLOAT, SHAPE(2, 3), NULL);
	Node *n = node(g, "RandomUniform", NULL, 0);
	tu_ints(g, n, "shape", INTS(4, 0, 2));
	ValId ru = tu_out(n, 0);
	n = node(g, "RandomNormal", NULL, 0);
	tu_ints(g, n, "shape", INTS(3));
	tu_int(g, n, "dtype", DT_DOUBLE);
	ValId rn = tu_out(n, 0);
	ValId rul = OP(g, "RandomUniformLike", x);
	n = node(g, "RandomNormalLike", IDS(x));
	tu_int(g, n, "dtype", DT_FLOAT16);
	ValId rnl = tu_out(n, 0);
	ValId be = OP(g, "Bernoulli", x);
	n = node(g, "Bernoulli", IDS(x));
	tu_int(g, n, "dtype", DT_BOOL);
	ValId beb = tu_out(n, 0);
	n = node(g, "Multinomial", IDS(x));
	tu_int(g, n, "sample_size", 5);
	ValId mn = tu_out(n, 0);
	infer_ok(m);
	cr_assert_str_eq(tu_shape(g, ru), "[4,0,2]");
	cr_assert_eq(tu_dtype(g, ru), DT_FLOAT);
	cr_assert_str_eq(tu_shape(g, rn), "[3]");
	cr_assert_eq(tu_dtype(g, rn), DT_DOUBLE);
	cr_assert_str_eq(tu_shape(g, rul), "[2,3]");
	cr_assert_eq(tu_dtype(g, rnl), DT_FLOAT16);
	cr_assert_eq(tu_dtype(g, be), DT_FLOAT);
	cr_assert_eq(tu_dtype(g, beb), DT_BOOL);
	cr_assert_str_eq(tu_shape(g, mn), "[2,5]");
	cr_assert_eq(tu_dtype(g, mn), DT_INT32);
	ValId all[] = { ru, rn, rul, rnl, be, beb, mn };
	for (size_t i = 0; i < ARRAY_SIZE(all); i++)
		not_folded(g, all[i]);
	model_free(m);

	m = tu_model(15);
	g = m->graph;
	n = tu_node(g, "RandomUniform", "ru", NULL, 0, 1);
	tu_ints(g, n, "shape", INTS(INT64_C(1) << 62, 8));
	infer_fails(m, "node 'ru' (RandomUniform): output 0 ('ru:0') of shape "
		       "[4611686018427387904,8] is too large (its size "
		       "overflows int64)");
	model_free(m);

	m = tu_model(15);
	g = m->graph;
	n = tu_node(g, "RandomNormal", "rn", NULL, 0, 1);
	tu_ints(g, n, "shape", INTS(2, -1));
	infer_fails(m, "node 'rn' (RandomNormal): shape[1] is -1, expected >= 0");
	model_free(m);

	m = tu_model(15);
	g = m->graph;
	x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3));
	n = tu_node(g, "Multinomial", "mn", IDS(x), 1);
	tu_int(g, n, "dtype", DT_FLOAT);
	infer_fails(m, "node 'mn' (Multinomial): output dtype 1 (float32) is not "
		       "allowed");
	model_free(m);
}
