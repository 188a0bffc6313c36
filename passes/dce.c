/*
 * passes/dce.c - after folding: constants become weights, dead nodes go.
 *
 * In every graph (subgraphs included):
 *  1. a node all of whose outputs have known contents is removed and its
 *     outputs become weights holding those contents (Constant nodes and
 *     folded shape arithmetic alike), the same values turned into weights;
 *  2. a node none of whose outputs is used - by a remaining node, by an
 *     outer reference of a remaining node's subgraph that is itself used
 *     there, or as a graph output - is removed.  Nodes are in topological
 *     order, so one backward sweep finds them all: every user of a value
 *     comes after its producer.  Subgraphs are cleaned before their uses
 *     are counted, so a value only a dead part of a body read dies too.
 *  3. values nothing refers to any more (dead nodes' outputs, weights
 *     and outer references no node reads) are dropped from vals[]: a
 *     node output without its producer would not be valid IR.  The
 *     others keep their order; every ValId is renumbered consistently -
 *     node inputs and outputs, graph inputs and outputs and the outer
 *     references of subgraphs (the caller gets the map, for ids kept
 *     elsewhere: specialise() renumbers the gear spec's).  Graph inputs
 *     always stay.
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

/* Step 1 for node n: true if it folded away. */
static bool fold_to_weights(Graph *g, const Node *n)
{
	int32_t present = 0;
	for (int32_t k = 0; k < n->noutputs; k++) {
		ValId o = n->outputs[k];
		if (o < 0)
			continue;
		const Value *v = &g->vals[o];
		if (!v->konst || v->tkind != TK_TENSOR)
			return false;
		present++;
	}
	if (!present)
		return false;
	for (int32_t k = 0; k < n->noutputs; k++) {
		ValId o = n->outputs[k];
		if (o < 0)
			continue;
		Value *v = &g->vals[o];
		v->kind = VAL_WEIGHT;
		v->producer = -1;
		v->dtype = v->konst->dtype;
		v->shape = v->konst->shape;
		v->dim_params = NULL;
	}
	return true;
}



/* Calls fn on every subgraph of node n. */
static int each_subgraph(Node *n, int (*fn)(Graph *sub, void *ctx), void *ctx)
{
	for (int32_t k = 0; k < n->nattrs; k++) {
		Attr *a = &n->attrs[k];
		if (a->type == ATTR_GRAPH && a->g && fn(a->g, ctx) < 0)
			return -1;
		for (int32_t j = 0; a->type == ATTR_GRAPHS && j < a->n; j++)
			if (fn(a->graphs[j], ctx) < 0)
				return -1;
	}
	return 0;
}

/* Cleans sub, then marks in used[] (of its parent) the values its
 * remaining outer references name: all of them are used after cleaning. */
static int clean_sub(Graph *sub, void *ctx)
{
	uint8_t *used = ctx;
	if (graph_dce(sub, NULL) < 0)
		return -1;
	for (ValId i = 0; i < sub->nvals; i++)
		if (sub->vals[i].kind == VAL_OUTER && sub->vals[i].outer >= 0)
			used[sub->vals[i].outer] = 1;
	return 0;
}

/* Points sub's outer references at the parent's new value ids. */
static int remap_outer(Graph *sub, void *ctx)
{
	const ValId *map = ctx;
	for (ValId i = 0; i < sub->nvals; i++)
		if (sub->vals[i].kind == VAL_OUTER && sub->vals[i].outer >= 0)
			sub->vals[i].outer = map[sub->vals[i].outer];
	return 0;
}

static void remap_ids(ValId *ids, int32_t n, const ValId *map)
{
	for (int32_t k = 0; k < n; k++)
		if (ids[k] >= 0)
			ids[k] = map[ids[k]];
}

/* Drops the values of g nothing refers to (keep[v] == 0), keeping the
 * order of the others; returns the old -> new id map (malloc'd). */
static ValId *compact_values(Graph *g, const uint8_t *keep)
{
	ValId *map = xmalloc(((size_t)g->nvals + 1) * sizeof(ValId));
	ValId nv = 0;
	for (ValId i = 0; i < g->nvals; i++) {
		map[i] = keep[i] ? nv : -1;
		if (keep[i])
			g->vals[nv++] = g->vals[i];
	}
	g->nvals = nv;
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		remap_ids(n->inputs, n->ninputs, map);
		remap_ids(n->outputs, n->noutputs, map);
		each_subgraph(n, remap_outer, map);
	}
	remap_ids(g->inputs, g->ninputs, map);
	remap_ids(g->outputs, g->noutputs, map);
	return map;
}

/* Cleans g and its subgraphs (see the top).  With remap, *remap gets the
 * old -> new value id map (malloc'd). */
int graph_dce(Graph *g, ValId **remap)
{
	uint8_t *dead = xcalloc((size_t)g->nnodes + 1, 1);
	uint8_t *used = xcalloc((size_t)g->nvals + 1, 1);
	int rc = 0;
	for (int32_t i = 0; i < g->nnodes; i++)
		dead[i] = fold_to_weights(g, &g->nodes[i]);
	for (int32_t k = 0; k < g->noutputs; k++)
		if (g->outputs[k] >= 0)
			used[g->outputs[k]] = 1;
	for (int32_t k = 0; k < g->ninputs; k++)
		if (g->inputs[k] >= 0)
			used[g->inputs[k]] = 1;
	for (int32_t i = g->nnodes - 1; i >= 0 && !rc; i--) {
		Node *n = &g->nodes[i];
		bool live = false;
		for (int32_t k = 0; k < n->noutputs && !live && !dead[i]; k++)
			live = n->outputs[k] >= 0 && used[n->outputs[k]];
		if (!live) {
			dead[i] = 1;
			continue;
		}
		for (int32_t k = 0; k < n->ninputs; k++)
			if (n->inputs[k] >= 0)
				used[n->inputs[k]] = 1;
		rc = each_subgraph(n, clean_sub, used);
	}
	if (!rc) {
		int32_t kept = 0;
		for (int32_t i = 0; i < g->nnodes; i++) {
			Node *n = &g->nodes[i];
			if (dead[i])
				continue;
			g->nodes[kept] = *n;
			for (int32_t k = 0; k < n->noutputs; k++)
				if (n->outputs[k] >= 0) {
					used[n->outputs[k]] = 1;
					g->vals[n->outputs[k]].producer = kept;
				}
			kept++;
		}
		g->nnodes = kept;
		for (ValId i = 0; i < g->nvals; i++)
			used[i] |= g->vals[i].kind == VAL_INPUT;
		ValId *map = compact_values(g, used);
		if (remap)
			*remap = map;
		else
			free(map);
	}
	free(used);
	free(dead);
	return rc;
}
