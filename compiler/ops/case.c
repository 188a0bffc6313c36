/*
 * compiler/ops/case.c - gearc's own ops in the root graph of a gear
 * compile (domain ai.gearc):
 *
 *   MapIndex(gear_dims int64[V], table int64[G*V]) -> branch int32 scalar
 *     the index of the table row equal to gear_dims (the gear to run).
 *   Case(branch, inputs...) -> outputs...
 *     runs subgraph branches[branch] on the inputs; attribute "branches"
 *     holds one already specialised graph per gear.  Its outputs have the
 *     branches' dtypes and shapes, with -1 where the gears differ.  In a
 *     --hybrid model (passes/hybrid.h) the GRAPH attribute dynamic_graph
 *     runs when no gear matches, and its outputs count too.
 *   PartitionedCall(inputs...) -> outputs...
 *     runs subgraph body on the inputs (a multi-dims scope, passes/scope.h:
 *     its body picks a clone by the inputs' shapes), or subgraph f (a
 *     partition, passes/partition.h).  The subgraph's inputs take the
 *     node's inputs' dtypes and shapes (not their contents: a constant
 *     input folds through the run hook, not inside the subgraph), and
 *     the node's outputs the subgraph's outputs'.  This is the one
 *     inference of both: `gearc verify` re-infers partitioned graphs
 *     with it too.
 */
#include "opimpl.h"

int infer_mapindex(OpCtx *c)
{
	const Value *dims = op_need_in(c, 0), *table = op_need_in(c, 1);
	if (!dims || !table || op_check_dtype(c, 0, DTS(DT_INT64)) < 0 ||
	    op_check_dtype(c, 1, DTS(DT_INT64)) < 0 ||
	    op_check_rank(c, 0, 1, 1) < 0 || op_check_rank(c, 1, 1, 1) < 0)
		return -1;
	Shape scalar = { .rank = 0 };
	op_set_out(c, 0, DT_INT32, &scalar);
	return 0;
}

int run_mapindex(OpCtx *c)
{
	const Tensor *dims = op_const_in(c, 0), *table = op_const_in(c, 1);
	if (!dims || !table)
		return 0;
	int64_t nv = shape_numel(&dims->shape), nt = shape_numel(&table->shape);
	if (nv <= 0 || nt % nv)
		return op_error(c, "the gear table holds %lld values, not a "
				"multiple of %lld gear dims",
				(long long)nt, (long long)nv);
	for (int64_t g = 0; g < nt / nv; g++) {
		int64_t k = 0;
		while (k < nv && tensor_get_i64(table, g * nv + k) ==
					 tensor_get_i64(dims, k))
			k++;
		if (k == nv) {
			Shape scalar = { .rank = 0 };
			Tensor *t = op_new_tensor(c, DT_INT32, &scalar);
			if (!t)
				return -1;
			tensor_set_i64(t, 0, g);
			op_set_const(c, 0, t);
			return 0;
		}
	}
	return op_error(c, "the gear dims match no gear of the table");
}

/* Merges shape b into a: ranks must agree, differing dims become -1. */
static void merge_shape(Shape *a, const Shape *b)
{
	if (a->rank != b->rank) {
		*a = shape_unknown();
		return;
	}
	for (int32_t k = 0; k < a->rank; k++)
		if (a->dims[k] != b->dims[k])
			a->dims[k] = DIM_UNKNOWN;
}

int infer_case(OpCtx *c)
{
	const Attr *br = node_attr(c->n, CASE_BRANCHES_ATTR);
	const Attr *dyn = node_attr(c->n, HYBRID_GRAPH_ATTR);
	const Graph *dg = dyn && dyn->type == ATTR_GRAPH ? dyn->g : NULL;
	if (!br || br->type != ATTR_GRAPHS || br->n < 1)
		return op_error(c, "needs attribute 'branches' with at least "
				"one graph");
	for (int i = 0; i < c->n->noutputs; i++) {
		Value *out = op_out(c, i);
		if (!out)
			continue;
		uint16_t dep = 0;
		for (int32_t b = 0; b < br->n + (dg != NULL); b++) {
			const Graph *g = b < br->n ? br->graphs[b] : dg;
			if (g->noutputs != c->n->noutputs)
				return op_error(c, "branch '%s' has %d outputs, "
						"the node %d", g->name,
						g->noutputs, c->n->noutputs);
			const Value *v = &g->vals[g->outputs[i]];
			if (b == 0) {
				out->dtype = v->dtype;
				out->tkind = v->tkind;
				out->shape = v->shape;
			} else if (v->dtype != out->dtype) {
				return op_error(c, "output %d is %s in branch "
						"'%s' but %s in branch '%s'",
						i, dtype_name(v->dtype), g->name,
						dtype_name(out->dtype),
						br->graphs[0]->name);
			} else {
				merge_shape(&out->shape, &v->shape);
			}
			dep |= v->flags & VF_DATA_DEP;
		}
		out->flags |= dep;
	}
	return 0;
}

int infer_partitioned_call(OpCtx *c)
{
	/* "body": a multi-dims scope (passes/scope.h); "f": a partition
	 * (passes/partition.h).  Both bind the subgraph's inputs and outputs
	 * to the node's by position. */
	const Attr *a = node_attr(c->n, SCOPE_BODY_ATTR);
	if (!a)
		a = node_attr(c->n, PARTITION_GRAPH_ATTR);
	if (!a || a->type != ATTR_GRAPH || !a->g)
		return op_error(c, "needs attribute 'body' or 'f' with a graph");
	Graph *b = a->g;
	if (b->ninputs != c->n->ninputs || b->noutputs != c->n->noutputs)
		return op_error(c, "the node has %d inputs and %d outputs, its "
				"body '%s' %d and %d", c->n->ninputs,
				c->n->noutputs, b->name, b->ninputs,
				b->noutputs);
	for (int i = 0; i < c->n->ninputs; i++) {
		const Value *in = op_need_in(c, i);
		if (!in)
			return -1;
		Value *bi = &b->vals[b->inputs[i]];
		bi->dtype = in->dtype;
		bi->tkind = in->tkind;
		bi->shape = in->shape;
		bi->flags = (uint16_t)((bi->flags & ~VF_DATA_DEP) |
				       (in->flags & VF_DATA_DEP));
	}
	if (op_infer_subgraph(c, b) < 0)
		return -1;
	for (int i = 0; i < c->n->noutputs; i++) {
		Value *out = op_out(c, i);
		const Value *v = &b->vals[b->outputs[i]];
		if (!out)
			continue;
		op_set_out(c, i, v->dtype, &v->shape);
		out->tkind = v->tkind;
		out->flags |= v->flags & VF_DATA_DEP;
	}
	return 0;
}

/* Output k of the node gets the contents outs[k]. */
static void set_all(OpCtx *c, const Tensor **outs)
{
	for (int k = 0; k < c->n->noutputs; k++)
		if (outs[k] && op_out(c, k))
			op_set_const(c, k, outs[k]);
}

/* Runs graph g on the node's inputs from input 'first' on. */
static int run_body(OpCtx *c, const Graph *g, int first)
{
	if (g->ninputs != c->n->ninputs - first ||
	    g->noutputs != c->n->noutputs)
		return op_error(c, "graph '%s' has %d inputs and %d outputs, "
				"the node passes %d and takes %d", g->name,
				g->ninputs, g->noutputs, c->n->ninputs - first,
				c->n->noutputs);
	const Tensor **in = op_scratch_zeroed(c, (size_t)(g->ninputs + 1) *
						  sizeof(*in));
	const Tensor **outs = op_scratch_zeroed(c, (size_t)(g->noutputs + 1) *
						    sizeof(*outs));
	if (!in || !outs)
		return -1;
	for (int k = 0; k < g->ninputs; k++)
		if (!(in[k] = op_const_in(c, first + k)))
			return 0;
	if (op_eval_subgraph(c, g, in, outs) < 0)
		return -1;
	set_all(c, outs);
	return 0;
}

int run_case(OpCtx *c)
{
	const Attr *br = node_attr(c->n, CASE_BRANCHES_ATTR);
	const Attr *dyn = node_attr(c->n, HYBRID_GRAPH_ATTR);
	const Tensor *idx = op_const_in(c, 0);
	if (!idx || !br || br->type != ATTR_GRAPHS)
		return 0;
	if (shape_numel(&idx->shape) != 1 ||
	    !(DTS(idx->dtype) & (DTS(DT_INT32) | DTS(DT_INT64))))
		return op_error(c, "the branch index must be one int32 or "
				"int64 value");
	int64_t b = tensor_get_i64(idx, 0);
	if (b >= 0 && b < br->n)
		return run_body(c, br->graphs[b], 1);
	if (dyn && dyn->type == ATTR_GRAPH && dyn->g)
		return run_body(c, dyn->g, 1);
	return op_error(c, "branch index %lld is outside 0..%d", (long long)b,
			br->n - 1);
}

int run_partitioned_call(OpCtx *c)
{
	const Attr *a = node_attr(c->n, SCOPE_BODY_ATTR);
	if (!a)
		a = node_attr(c->n, PARTITION_GRAPH_ATTR);
	if (!a || a->type != ATTR_GRAPH || !a->g)
		return op_error(c, "needs attribute 'body' or 'f' with a graph");
	return run_body(c, a->g, 0);
}
