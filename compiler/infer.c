/*
 * compiler/infer.c - the interpreter: shape and dtype inference with
 * folding, and evaluation at run time by the same means (compiler/infer.h).
 *
 * infer_graph() walks a graph's nodes in order (they are sorted
 * topologically) and, for each node:
 *   1. checks that every input it names has a dtype;
 *   2. resets its outputs (no dtype, unknown shape, no contents), since
 *      inference decides them, whatever the model declared;
 *   3. calls the op's infer hook, which sets every output's dtype and
 *      shape (-1 for a dim it cannot know, never a guess);
 *   4. calls the op's kernel (its run hook), if it has one, the node is
 *      deterministic (not a random op without a seed) and every
 *      output is static and at most Model.fold_limit bytes (0: 64 KiB)
 *      and, for ops that read all of a large input to make a small output
 *      (reductions, ArgMax/ArgMin, TopK), that input has at most
 *      FOLD_MAX_IN elements,
 *      to compute the outputs' contents from constant inputs (the hook
 *      leaves them unknown if it cannot), so that shape arithmetic
 *      (Shape -> Gather -> Concat -> Reshape) is known by the time a
 *      later node needs it;
 *   5. checks the outputs (rank, dims, dtype, size within int64) and marks
 *      those with unknown dims as data-dependent if an input was.
 *
 * Subgraphs: a control-flow hook (If, Loop, Scan) sets its subgraph's
 * input shapes and calls op_infer_subgraph(); the subgraph's outer
 * references first take the dtype, shape and contents of the parent's
 * values, which are inferred by then.
 */
#include "infer.h"
#include "ops/opimpl.h"

#include <stdio.h>
#include <string.h>

enum { FOLD_LIMIT_DEFAULT = 64 * 1024, FOLD_MAX_IN = 1 << 20 };

typedef struct Infer {
	Model *m;
	int64_t opset, fold_limit;
} Infer;

static void bind_outer(Graph *g)
{
	for (ValId i = 0; i < g->nvals; i++) {
		Value *v = &g->vals[i];
		if (v->kind != VAL_OUTER || !g->parent || v->outer < 0 ||
		    v->outer >= g->parent->nvals)
			continue;
		const Value *p = &g->parent->vals[v->outer];
		v->dtype = p->dtype;
		v->tkind = p->tkind;
		v->shape = p->shape;
		v->konst = p->konst;
		v->flags = (uint16_t)((v->flags & ~VF_DATA_DEP) |
				      (p->flags & VF_DATA_DEP));
	}
}

static int no_hook(OpCtx *c)
{
	const Node *n = c->n;
	if (domain_is_default(n->domain))
		return op_error(c, "shape inference for %s is not supported",
				n->op_type);
	return op_error(c, "shape inference for %s (domain '%s') is not "
			"supported", n->op_type, n->domain);
}

static int check_inputs(OpCtx *c)
{
	for (int i = 0; i < c->n->ninputs; i++) {
		const Value *v = op_in(c, i);
		if (v && v->tkind != TK_OTHER && !dtype_valid(v->dtype))
			return op_error(c, "input %d ('%s') has no known dtype",
					i, v->name);
	}
	return 0;
}

static void reset_outputs(OpCtx *c)
{
	for (int i = 0; i < c->n->noutputs; i++) {
		Value *v = op_out(c, i);
		if (!v)
			continue;
		v->dtype = DT_UNDEFINED;
		v->tkind = TK_TENSOR;
		v->shape = shape_unknown();
		v->dim_params = NULL; /* they named the declared dims */
		v->konst = NULL;
		v->flags &= (uint16_t)~VF_DATA_DEP;
	}
}

static int check_outputs(OpCtx *c)
{
	char buf[160];
	bool dep_in = false;
	for (int i = 0; i < c->n->ninputs; i++) {
		const Value *v = op_in(c, i);
		dep_in |= v && (v->flags & VF_DATA_DEP);
	}
	for (int i = 0; i < c->n->noutputs; i++) {
		Value *v = op_out(c, i);
		if (!v)
			continue;
		if (v->shape.rank < -1 || v->shape.rank > MAX_RANK)
			return op_error(c, "output %d ('%s') has rank %d; gearc "
					"supports at most %d",
					i, v->name, v->shape.rank, MAX_RANK);
		for (int32_t k = 0; k < v->shape.rank; k++)
			if (v->shape.dims[k] < DIM_UNKNOWN)
				return op_error(c, "output %d ('%s') has dim "
						"%d = %lld",
						i, v->name, k,
						(long long)v->shape.dims[k]);
		if (v->tkind != TK_OTHER && !dtype_valid(v->dtype))
			return op_error(c, "output %d ('%s') got no dtype", i,
					v->name);
		if (shape_is_static(&v->shape) && v->tkind != TK_OTHER &&
		    shape_bytes(&v->shape, v->dtype) < 0)
			return op_error(c, "output %d ('%s') of shape %s is too "
					"large (its size overflows int64)",
					i, v->name,
					shape_str(&v->shape, buf, sizeof(buf)));
		if (dep_in && !shape_is_static(&v->shape))
			v->flags |= VF_DATA_DEP;
	}
	return 0;
}

#define EVAL_NO_LIMIT OP_EVAL_LIMIT

/* Ops whose outputs' shapes come from running a subgraph: at run time
 * (no fold limit) their kernel runs even while inference left the shapes
 * unknown, and sets them. */
static bool shapes_from_kernel(const OpCtx *c)
{
	return c->fold_limit >= EVAL_NO_LIMIT &&
	       (c->n->op == OP_PartitionedCall || c->n->op == OP_Case);
}

/* Ops that read all of input 0 whatever the size of their output (a
 * small result of a large tensor): folding also bounds that input. */
static bool reads_whole_input(int op)
{
	switch (op) {
	case OP_ReduceL1: case OP_ReduceL2: case OP_ReduceLogSum:
	case OP_ReduceLogSumExp: case OP_ReduceMax: case OP_ReduceMean:
	case OP_ReduceMin: case OP_ReduceProd: case OP_ReduceSum:
	case OP_ReduceSumSquare: case OP_ArgMax: case OP_ArgMin:
	case OP_TopK:
		return true;
	default:
		return false;
	}
}

/* False if folding would read more than FOLD_MAX_IN elements of input 0
 * of such an op (evaluation at run time reads any size). */
static bool input_foldable(OpCtx *c)
{
	const Value *x = op_in(c, 0);
	return c->fold_limit >= EVAL_NO_LIMIT || !x ||
	       !reads_whole_input(c->n->op) ||
	       shape_numel(&x->shape) <= FOLD_MAX_IN;
}

/* Random ops without a seed draw anew at every run: their values are not
 * constants, so the interpreter never runs them, whatever the fold limit
 * (a subgraph that folding evaluates runs with none); only the runtime's
 * bound kernel does. */
static bool draws_anew(const OpCtx *c)
{
	switch (c->n->op) {
	case OP_RandomNormal: case OP_RandomNormalLike: case OP_RandomUniform:
	case OP_RandomUniformLike: case OP_Bernoulli: case OP_Multinomial:
		return !node_attr(c->n, "seed");
	default:
		return false;
	}
}

/* Runs c's kernel; inside a run (a trap set, util.h OomTrap) a tensor
 * it cannot allocate is this node's error. */
static int run_kernel(OpCtx *c, OpFn run)
{
	if (!oom_trapped())
		return run(c);
	OomTrap t;
	if (setjmp(t.jb))
		return op_error(c, "cannot allocate %zu bytes", t.bytes);
	oom_trap_push(&t);
	int rc = run(c);
	oom_trap_pop(&t);
	return rc;
}

/* Runs the kernel if every output is static and small enough. */
static int fold_node(OpCtx *c)
{
	OpFn run = op_info[c->n->op].run;
	bool any = false;
	if (!run || !input_foldable(c) || draws_anew(c))
		return 0;
	for (int i = 0; i < c->n->noutputs; i++) {
		const Value *v = op_out(c, i);
		if (!v)
			continue;
		int64_t bytes = shape_bytes(&v->shape, v->dtype);
		if (shapes_from_kernel(c) && !v->konst && v->tkind == TK_TENSOR)
			bytes = 0;
		if (v->konst || v->tkind != TK_TENSOR || bytes < 0 ||
		    bytes > c->fold_limit)
			return 0;
		any = true;
	}
	return any ? run_kernel(c, run) : 0;
}

/* Outputs whose contents the node computed (not passed on from an input,
 * as Identity does, nor taken from an attribute, as Constant does) are
 * marked folded: the serializer keeps the model's own weights apart from
 * what gearc computed per gear. */
static void mark_folded(OpCtx *c)
{
	for (int i = 0; i < c->n->noutputs; i++) {
		Value *v = op_out(c, i);
		bool own = v && v->konst;
		for (int k = 0; own && k < c->n->ninputs; k++)
			own = op_const_in(c, k) != v->konst;
		for (int k = 0; own && k < c->n->nattrs; k++)
			own = c->n->attrs[k].t != v->konst;
		if (own)
			((Tensor *)(uintptr_t)v->konst)->folded = true;
	}
}

static int infer_node(OpCtx *c)
{
	OpFn infer = op_info[c->n->op].infer;
	if (check_inputs(c) < 0)
		return -1;
	reset_outputs(c);
	if (!infer)
		return no_hook(c);
	if (infer(c) < 0 || fold_node(c) < 0)
		return -1;
	mark_folded(c);
	return check_outputs(c);
}

static int infer_nodes(const Infer *st, Graph *g)
{
	OpCtx c = { .model = st->m, .g = g, .opset = st->opset,
		    .fold_limit = st->fold_limit, .arena = g->arena };
	bind_outer(g);
	for (int32_t i = 0; i < g->nnodes; i++) {
		c.n = &g->nodes[i];
		if (infer_node(&c) < 0)
			return -1;
	}
	return 0;
}

static Infer infer_state(Model *m, int64_t fold_limit)
{
	Infer st = { .m = m, .opset = model_opset(m),
		     .fold_limit = fold_limit > 0 ? fold_limit
						  : FOLD_LIMIT_DEFAULT };
	if (st.opset <= 0)
		st.opset = OPSET_NEWEST;
	return st;
}

int infer_graph(Model *m, Graph *g)
{
	Infer st = infer_state(m, m->fold_limit);
	return infer_nodes(&st, g);
}

int op_infer_subgraph(OpCtx *c, Graph *sub)
{
	Infer st = { .m = c->model, .opset = c->opset,
		     .fold_limit = c->fold_limit };
	ASSERT(sub->parent == c->g);
	if (infer_nodes(&st, sub) < 0)
		return error_prefix("node '%s' (%s): subgraph '%s'", c->n->name,
				    c->n->op_type, sub->name);
	return 0;
}

/* ---- evaluation at run time ------------------------------------------------
 *
 * A node whose outputs' shapes or contents need inference at run time
 * (control flow, data-dependent shapes) is run by inference with folding
 * and no size limit, on a frame: a copy of its graph's values in which the
 * node's inputs and its subgraphs' outer references hold the running
 * tensors.  The node's subgraphs are cloned under the frame, so the shared
 * graph is never written. */

static void frame_bind(Graph *frame, ValId v, const Tensor *t)
{
	Value *x = &frame->vals[v];
	if (!t || x->kind == VAL_WEIGHT)
		return;
	x->konst = t;
	x->dtype = t->dtype;
	x->shape = t->shape;
	x->flags &= (uint16_t)~VF_DATA_DEP;
}

/* Binds the outer references of sub (cloned under frame) that name frame
 * values, recursing into sub's own subgraphs for references that pass
 * through. */
static void frame_bind_outer(Graph *frame, const Graph *sub,
			     const EvalSource *src)
{
	for (ValId i = 0; i < sub->nvals; i++) {
		const Value *v = &sub->vals[i];
		if (v->kind == VAL_OUTER && sub->parent == frame &&
		    v->outer >= 0 && v->outer < frame->nvals)
			frame_bind(frame, v->outer, src->value(src->ctx, v->outer));
	}
}

static void clone_node_graphs(Arena *a, Graph *frame, Node *n,
			      const EvalSource *src)
{
	if (!n->nattrs)
		return; /* attrs may be NULL: no memcpy from it */
	Attr *attrs = arena_array(a, (size_t)n->nattrs, sizeof(Attr));
	memcpy(attrs, n->attrs, (size_t)n->nattrs * sizeof(Attr));
	n->attrs = attrs;
	for (int32_t k = 0; k < n->nattrs; k++) {
		Attr *at = &attrs[k];
		if (at->type == ATTR_GRAPH && at->g) {
			at->g = graph_clone(a, at->g, frame, NULL, NULL);
			frame_bind_outer(frame, at->g, src);
		}
		if (at->type == ATTR_GRAPHS && at->n > 0) {
			Graph **gs = arena_array(a, (size_t)at->n,
						 sizeof(Graph *));
			for (int32_t j = 0; j < at->n; j++) {
				gs[j] = graph_clone(a, at->graphs[j], frame,
						    NULL, NULL);
				frame_bind_outer(frame, gs[j], src);
			}
			at->graphs = gs;
		}
	}
}

int eval_node(Model *m, Graph *g, const Node *node, const EvalSource *src,
	      Arena *a, const Tensor **outs)
{
	Graph frame = *g;
	frame.arena = a;
	frame.plan = NULL;
	frame.vals = arena_array(a, (size_t)g->nvals, sizeof(Value));
	memcpy(frame.vals, g->vals, (size_t)g->nvals * sizeof(Value));
	for (ValId i = 0; i < frame.nvals; i++)
		if (frame.vals[i].kind != VAL_WEIGHT)
			frame.vals[i].konst = NULL;
	Node n = *node;
	for (int32_t k = 0; k < n.ninputs; k++)
		if (n.inputs[k] >= 0)
			frame_bind(&frame, n.inputs[k],
				   src->value(src->ctx, n.inputs[k]));
	clone_node_graphs(a, &frame, &n, src);
	Infer st = infer_state(m, EVAL_NO_LIMIT);
	OpCtx c = { .model = m, .g = &frame, .n = &n, .opset = st.opset,
		    .fold_limit = st.fold_limit, .arena = a };
	if (infer_node(&c) < 0)
		return -1;
	for (int32_t k = 0; k < n.noutputs; k++) {
		const Value *v = op_out(&c, k);
		if (v && !v->konst)
			return op_error(&c, "output %d ('%s') could not be "
					"computed", k, v->name);
		outs[k] = v ? v->konst : NULL;
	}
	return 0;
}

/* The error for output k of g left without contents: the first node
 * whose outputs were not all computed is the one to name. */
static int uncomputed(const Graph *g, const char *name, int32_t k)
{
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		for (int32_t j = 0; j < n->noutputs; j++)
			if (n->outputs[j] >= 0 && !g->vals[n->outputs[j]].konst)
				return error("graph '%s': node '%s' (%s): output "
					     "%d ('%s') could not be computed "
					     "(no kernel)", name, n->name,
					     n->op_type, j,
					     g->vals[n->outputs[j]].name);
	}
	return error("graph '%s': output %d ('%s') could not be computed",
		     name, k, g->vals[g->outputs[k]].name);
}

int eval_graph(Model *m, Graph *parent, const EvalSource *src,
	       const Graph *sub, const Tensor *const *in, Arena *a,
	       const Tensor **outs)
{
	Graph frame = { .name = parent->name, .parent = parent->parent,
			.arena = a };
	frame.vals = arena_array(a, (size_t)parent->nvals, sizeof(Value));
	frame.nvals = frame.capvals = parent->nvals;
	memcpy(frame.vals, parent->vals, (size_t)parent->nvals * sizeof(Value));
	for (ValId i = 0; i < frame.nvals; i++)
		if (frame.vals[i].kind != VAL_WEIGHT)
			frame.vals[i].konst = NULL;
	Graph *g = graph_clone(a, sub, &frame, NULL, NULL);
	frame_bind_outer(&frame, g, src);
	for (int32_t k = 0; k < g->ninputs; k++) {
		Value *v = &g->vals[g->inputs[k]];
		if (!in[k])
			return error("graph '%s': input %d ('%s') is not given",
				     sub->name, k, v->name);
		v->konst = in[k];
		v->dtype = in[k]->dtype;
		v->shape = in[k]->shape;
		v->kind = VAL_WEIGHT;
	}
	Infer st = infer_state(m, EVAL_NO_LIMIT);
	if (infer_nodes(&st, g) < 0)
		return error_prefix("graph '%s'", sub->name);
	for (int32_t k = 0; k < g->noutputs; k++) {
		const Value *v = &g->vals[g->outputs[k]];
		if (!v->konst)
			return uncomputed(g, sub->name, k);
		outs[k] = v->konst;
	}
	return 0;
}

/* Values of c's graph: the runtime's tensors, or the folded constants. */
static const Tensor *ctx_value(void *ctx, ValId v)
{
	OpCtx *c = ctx;
	if (c->bind)
		return c->bind->value(c->bind->exec, v);
	return v >= 0 && v < c->g->nvals ? c->g->vals[v].konst : NULL;
}

int op_eval_subgraph(OpCtx *c, const Graph *sub, const Tensor *const *in,
		     const Tensor **outs)
{
	EvalSource src = { ctx_value, c };
	if (eval_graph(c->model, c->g, &src, sub, in, c->arena, outs) < 0)
		return error_prefix("node '%s' (%s)", c->n->name,
				    c->n->op_type);
	return 0;
}
