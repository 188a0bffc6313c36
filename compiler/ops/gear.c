/*
 * compiler/ops/gear.c - gearc's own ops in the root graph of a gear
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
 *     its body picks a clone by the inputs' shapes).  The body's inputs
 *     take the node's inputs' dtypes and shapes, and the node's outputs
 *     the body's outputs'.
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
	const Attr *br = node_attr(c->n, "branches");
	const Attr *dyn = node_attr(c->n, "dynamic_graph");
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
	const Attr *a = node_attr(c->n, "body");
	if (!a)
		a = node_attr(c->n, "f");
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
