/*
 * tests/testutil.h - building small graphs by hand for unit tests: the
 * builders of tests/irbuild.h and Criterion assertions on inference.
 *
 *	Model *m = tu_model(13);
 *	Graph *g = m->graph;
 *	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 3, 224, 224));
 *	ValId w = tu_weight(g, "w", DT_FLOAT, SHAPE(8, 3, 3, 3));
 *	Node *n = tu_node(g, "Conv", "conv", IDS(x, w), 1);
 *	tu_ints(g, n, "pads", INTS(1, 1, 1, 1));
 *	cr_assert_eq(infer_graph(m, g), 0, "%s", last_error());
 *	cr_assert_str_eq(tu_shape(g, tu_out(n, 0)), "[1,8,224,224]");
 *	model_free(m);
 *
 * Output k of a node named "n" is a value named "n:k".  Everything lives
 * in the model's arena.
 */
#ifndef GEARC_TESTUTIL_H
#define GEARC_TESTUTIL_H

#include <criterion/criterion.h>

#include "irbuild.h"
#include "passes/passes.h"

/* Inference of m's main graph succeeds. */
static inline void infer_ok(Model *m)
{
	cr_assert_eq(infer_graph(m, m->graph), 0, "inference failed: %s",
		     last_error());
}

/* Inference fails with exactly this message. */
static inline void infer_fails(Model *m, const char *msg)
{
	clear_error();
	cr_assert_eq(infer_graph(m, m->graph), -1, "inference succeeded");
	cr_assert_str_eq(last_error(), msg);
}

/* Inference fails with a message containing part. */
static inline void infer_fails_with(Model *m, const char *part)
{
	clear_error();
	cr_assert_eq(infer_graph(m, m->graph), -1, "inference succeeded");
	cr_assert(strstr(last_error(), part), "message '%s' lacks '%s'",
		  last_error(), part);
}

#endif
