/*
 * passes/constwork.c - work on weights alone, done once.
 *
 * A node whose inputs are all weights (a DequantizeLinear of a constant
 * embedding table, the Transpose of that, a Cast of a constant) computes
 * the same tensor on every run.  Inference folds such a node at compile
 * time when its outputs fit Model.fold_limit (passes/infer.c); a larger
 * result would swell the file (a 32768x288 int8 table dequantizes to 36
 * MiB of float), so it is computed instead when the runtime opens the
 * model (runtime/model.c), once, into memory the model owns and its
 * sessions share:
 *   - constwork_values() says which values those are: made by a node of
 *     a deterministic op with a kernel and no subgraph, whose inputs are
 *     weights, folded constants or such values, with static plain-tensor
 *     outputs none of which is a graph output (the caller binds those);
 *   - the memory planner (passes/memplan.c) gives them no arena block;
 *   - constwork_eval() runs those nodes in graph order on the reference
 *     kernels (eval_node) and turns the values that other nodes read into
 *     weights; intermediate results are dropped;
 *   - the runtime makes no task of a node whose outputs are all weights
 *     (constwork_done), so it never runs per run.
 * serializer/verify.c accepts those values without a block, by a check
 * of its own on the file.
 */
#include <stdlib.h>
#include <string.h>

#include "constwork.h"
#include "compiler/ops/opimpl.h"
#include "passes.h"

bool constwork_op(int op)
{
	bool random = op == OP_RandomNormal || op == OP_RandomNormalLike ||
		      op == OP_RandomUniform || op == OP_RandomUniformLike ||
		      op == OP_Bernoulli || op == OP_Multinomial;
	return op > 0 && op < OP_COUNT && op_info[op].run && !random;
}

static bool has_subgraphs(const Node *n)
{
	for (int32_t k = 0; k < n->nattrs; k++)
		if (n->attrs[k].type == ATTR_GRAPH ||
		    n->attrs[k].type == ATTR_GRAPHS)
			return true;
	return false;
}

static bool is_graph_output(const Graph *g, ValId v)
{
	for (int32_t k = 0; k < g->noutputs; k++)
		if (g->outputs[k] == v)
			return true;
	return false;
}

/* An output of a node worth computing once. */
static bool output_ok(const Graph *g, ValId v)
{
	const Value *x = &g->vals[v];
	return x->kind == VAL_NODE && !x->konst && x->tkind == TK_TENSOR &&
	       x->dtype != DT_STRING && shape_is_static(&x->shape) &&
	       shape_bytes(&x->shape, x->dtype) >= 0 && !is_graph_output(g, v);
}

/* Whether node n's work is on weights alone (once[] as far as known). */
static bool node_once(const Graph *g, const Node *n, const uint8_t *once)
{
	bool any_in = false, any_out = false;
	if (!constwork_op(n->op) || has_subgraphs(n))
		return false;
	for (int32_t k = 0; k < n->ninputs; k++) {
		ValId v = n->inputs[k];
		if (v < 0)
			continue;
		const Value *x = &g->vals[v];
		if (!(x->kind == VAL_WEIGHT || x->konst || once[v]))
			return false;
		any_in = true;
	}
	for (int32_t k = 0; k < n->noutputs; k++) {
		if (n->outputs[k] < 0)
			continue;
		if (!output_ok(g, n->outputs[k]))
			return false;
		any_out = true;
	}
	return any_in && any_out;
}

uint8_t *constwork_values(const Graph *g)
{
	uint8_t *once = xcalloc((size_t)g->nvals + 1, 1);
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		if (!node_once(g, n, once))
			continue;
		for (int32_t k = 0; k < n->noutputs; k++)
			if (n->outputs[k] >= 0)
				once[n->outputs[k]] = 1;
	}
	return once;
}

static const Tensor *konst_of(void *ctx, ValId v)
{
	const Graph *g = ctx;
	return v >= 0 && v < g->nvals ? g->vals[v].konst : NULL;
}

/* Whether node n makes values of once[]. */
static bool makes_once(const Node *n, const uint8_t *once)
{
	for (int32_t k = 0; k < n->noutputs; k++)
		if (n->outputs[k] >= 0)
			return once[n->outputs[k]];
	return false;
}

/* Per value of g: read by a node that still runs (any value, if a node
 * holds subgraphs, which may read any). */
static uint8_t *read_at_run(const Graph *g, const uint8_t *once)
{
	uint8_t *read = xcalloc((size_t)g->nvals + 1, 1);
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		if (has_subgraphs(n)) {
			memset(read, 1, (size_t)g->nvals);
			break;
		}
		for (int32_t k = 0; !makes_once(n, once) && k < n->ninputs; k++)
			if (n->inputs[k] >= 0)
				read[n->inputs[k]] = 1;
	}
	return read;
}

/* Node n's outputs as weights of g: from keep where a node that runs
 * reads them, else from mid (dropped at the end). */
static int keep_outputs(Graph *g, const Node *n, const Tensor *const *outs,
			const uint8_t *read, Arena *keep, Arena *mid)
{
	for (int32_t k = 0; k < n->noutputs; k++) {
		ValId v = n->outputs[k];
		if (v < 0)
			continue;
		const Tensor *t = outs[k];
		Value *x = &g->vals[v];
		Tensor *w = tensor_new(read[v] ? keep : mid, x->name, t->dtype,
				       &t->shape, t->data);
		if (!w)
			return -1;
		w->folded = true;
		x->konst = w;
	}
	return 0;
}

/* Runs the nodes making once[] values, each on scratch of its own, and
 * keeps their outputs (keep_outputs): the count, or -1 with an error. */
static int run_once_nodes(Model *m, Graph *g, const uint8_t *once,
			  const uint8_t *read, Arena *keep, Arena *mid)
{
	EvalSource src = { konst_of, g };
	int done = 0;
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		if (!makes_once(n, once))
			continue;
		Arena tmp;
		arena_init(&tmp);
		const Tensor **outs = arena_array(&tmp, (size_t)n->noutputs + 1,
						  sizeof(*outs));
		int rc = eval_node(m, g, n, &src, &tmp, outs);
		if (!rc)
			rc = keep_outputs(g, n, outs, read, keep, mid);
		arena_release(&tmp);
		if (rc < 0)
			return -1;
		n->flags |= NF_CONSTWORK;
		done++;
	}
	return done;
}

int constwork_eval(Model *m, Graph *g, Arena *keep)
{
	uint8_t *once = constwork_values(g), *read = read_at_run(g, once);
	Arena mid;
	arena_init(&mid);
	int done = run_once_nodes(m, g, once, read, keep, &mid);
	for (ValId v = 0; v < g->nvals; v++) {
		Value *x = &g->vals[v];
		if (once[v] && read[v] && x->konst && done >= 0)
			x->kind = VAL_WEIGHT;
		else if (once[v])
			x->konst = NULL; /* in mid, or left by a failure */
	}
	arena_release(&mid);
	free(read);
	free(once);
	return done;
}

bool constwork_done(const Node *n)
{
	return n->flags & NF_CONSTWORK;
}
