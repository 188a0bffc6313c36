/*
 * tests/test_constwork.c - work on weights alone is done once, when the
 * model opens (passes/constwork.c), on tests/fixtures/const_decoder.onnx
 * (tests/gen_const_models.py): the dequantized table and its transpose
 * get no arena block and no task, the int32 bias Cast (below the fold
 * limit) folds at compile time, and the logits are those of the graph
 * computed here from its weights.
 */
#include <math.h>

#include "runtime/gearrt.h"
#include "runtime/rt.h"
#include "testrun.h"

enum { VOCAB = 512, DIM = 64, TOKENS = 4 };

/* The weight of g called name. */
static const Tensor *weight(const Graph *g, const char *name)
{
	for (ValId v = 0; v < g->nvals; v++)
		if (g->vals[v].kind == VAL_WEIGHT && g->vals[v].name &&
		    !strcmp(g->vals[v].name, name))
			return g->vals[v].konst;
	cr_assert_fail("no weight '%s'", name);
	return NULL;
}

/* logits = (x + dq[ids]) dq^T + bias, dq = (table - 3) 0.02. */
static double expected(const Graph *g, const int64_t *ids, const float *x,
		       int t, int v)
{
	const int8_t *tab = weight(g, "table")->data;
	const Tensor *bias = weight(g, "bias");
	double s = ((const float *)bias->data)[v];
	for (int d = 0; d < DIM; d++) {
		double e = (tab[ids[t] * DIM + d] - 3) * 0.02f;
		double w = (tab[v * DIM + d] - 3) * 0.02f;
		s += ((double)x[t * DIM + d] + e) * w;
	}
	return s;
}

/* The tasks of p running op. */
static int tasks_of(const Prepared *p, int op)
{
	int n = 0;
	for (int32_t i = 0; i < p->ntasks; i++)
		n += p->tasks[i].n->op == op;
	return n;
}

static const char *const at4[] = { "--input_shape=ids:1,4;x:1,4,64",
				     NULL };

static void decoder_once(bool no_fast)
{
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "dec", "const_decoder", at4);
	gearrt_model *m;
	gearrt_session *s;
	setenv("GEARRT_NO_FAST", no_fast ? "1" : "0", 1);
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_lt(m->arena_bytes, (uint64_t)VOCAB * DIM * sizeof(float),
		     "the plan holds the dequantized table (%llu bytes)",
		     (unsigned long long)m->arena_bytes);
	cr_assert_eq(gearrt_session_create(m, NULL, &s), GEARRT_OK);
	int64_t ids[TOKENS] = { 0, 7, 511, 300 };
	float x[TOKENS * DIM];
	for (int i = 0; i < TOKENS * DIM; i++)
		x[i] = (float)((i * 37) % 201 - 100) / 100.0f;
	gearrt_tensor in[2] = {
		{ .name = "ids", .dtype = GEARRT_INT64, .rank = 2,
		  .dims = { 1, TOKENS }, .data = ids, .size = sizeof(ids) },
		{ .name = "x", .dtype = GEARRT_FLOAT32, .rank = 3,
		  .dims = { 1, TOKENS, DIM }, .data = x, .size = sizeof(x) },
	};
	gearrt_tensor out = { 0 };
	for (int run = 0; run < 2; run++)
		cr_assert_eq(gearrt_run(s, in, 2, &out, 1), GEARRT_OK, "%s",
			     gearrt_last_error());
	const Prepared *p = rt_session_ctx(s)->prep[0];
	cr_expect_eq(tasks_of(p, OP_DequantizeLinear), 0,
		     "the table is dequantized per run");
	cr_expect_eq(tasks_of(p, OP_Transpose), 0,
		     "the table is transposed per run");
	cr_expect_eq(tasks_of(p, OP_Cast), 0, "the bias is cast per run");
	cr_expect_eq(tasks_of(p, OP_Gather), 1);
	const Graph *g = m->run_graph[0];
	const float *y = out.data;
	cr_assert_eq(out.size, (size_t)TOKENS * VOCAB * sizeof(float));
	for (int t = 0; t < TOKENS; t++)
		for (int v = 0; v < VOCAB; v++) {
			double e = expected(g, ids, x, t, v);
			cr_assert(fabs(y[t * VOCAB + v] - e) <=
					  1e-4 + 1e-5 * fabs(e),
				  "logits[%d][%d] = %g, expected %g", t, v,
				  y[t * VOCAB + v], e);
		}
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	remove_tree(dir);
	free(om);
	free(dir);
}

Test(constwork, decoder_table_made_once_fast) { decoder_once(false); }
Test(constwork, decoder_table_made_once_reference) { decoder_once(true); }

/* Each gear's branch clones the DequantizeLinear and the Transpose: the
 * work is done once for all, the branches share the results. */
Test(constwork, gears_share_the_work)
{
	static const char *const gears[] = {
		"--input_shape=ids:1,-1;x:1,-1,64",
		"--dynamic_dims=4,4;8,8", NULL
	};
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "decg", "const_decoder", gears);
	gearrt_model *m;
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(m->ngears, 2);
	const Tensor *emb_t[2] = { NULL, NULL };
	double ms = 0;
	for (size_t g = 0; g < 2; g++) /* a gear is raised at its first run */
		cr_assert_eq(rt_check_gear(m, g, &ms), GEARRT_OK, "%s",
			     gearrt_last_error());
	for (int g = 0; g < 2; g++) {
		const Graph *b = m->run_graph[g];
		for (ValId v = 0; v < b->nvals; v++)
			if (!strncmp(b->vals[v].name, "emb_t", 5))
				emb_t[g] = b->vals[v].konst;
	}
	cr_assert(emb_t[0] && emb_t[0]->data, "emb_t was not made when its gear was raised");
	cr_expect_eq(emb_t[0], emb_t[1], "each gear made its own emb_t");
	gearrt_model_close(m);
	remove_tree(dir);
	free(om);
	free(dir);
}
