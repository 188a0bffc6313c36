/*
 * passes/infer.c - shape and dtype inference.
 *
 * infer_graph() walks a graph's nodes in order (they are sorted
 * topologically) and, for each node:
 *   1. checks that every input it names has a dtype;
 *   2. resets its outputs (no dtype, unknown shape, no contents), since
 *      inference decides them, whatever the model declared;
 *   3. calls the op's infer hook, which sets every output's dtype and
 *      shape (-1 for a dim it cannot know, never a guess);
 *   4. calls the op's kernel (its run hook), if it has one and every output is static
 *      and at most fold_limit bytes, to compute the outputs' contents from
 *      constant inputs (the hook leaves them unknown if it cannot), so
 *      that shape arithmetic (Shape -> Gather -> Concat -> Reshape) is
 *      known by the time a later node needs it;
 *   5. checks the outputs (rank, dims, dtype, size within int64) and marks
 *      those with unknown dims as data-dependent if an input was.
 *
 * Subgraphs: a control-flow hook (If, Loop, Scan) sets its subgraph's
 * input shapes and calls op_infer_subgraph(); the subgraph's outer
 * references first take the dtype, shape and contents of the parent's
 * values, which are inferred by then.
 */
#include "compiler/ops/opimpl.h"
#include "passes.h"

#include <stdio.h>
#include <string.h>

enum { FOLD_LIMIT_DEFAULT = 64 * 1024 };

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

/* Runs the fold hook if every output is static and small enough. */
static int fold_node(OpCtx *c)
{
	OpFn run = op_info[c->n->op].run;
	bool any = false;
	if (!run)
		return 0;
	for (int i = 0; i < c->n->noutputs; i++) {
		const Value *v = op_out(c, i);
		if (!v)
			continue;
		int64_t bytes = shape_bytes(&v->shape, v->dtype);
		if (v->konst || v->tkind != TK_TENSOR || bytes < 0 ||
		    bytes > c->fold_limit)
			return 0;
		any = true;
	}
	return any ? run(c) : 0;
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
		    .fold_limit = st->fold_limit };
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
	Infer st = infer_state(m, 0);
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

int pass_infer(Model *m, const CompileOptions *o)
{
	Infer st = infer_state(m, o ? o->fold_limit : 0);
	return infer_nodes(&st, m->graph);
}
