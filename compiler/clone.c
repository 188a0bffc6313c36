/* compiler/clone.c - deep copies of graphs that share what cannot change. */
#include <string.h>

#include "ir.h"

static void *dup_array(Arena *a, const void *p, size_t n, size_t size)
{
	return n ? arena_memdup(a, p, n * size) : NULL;
}

static const char *node_name(Arena *a, const char *name, const char *suffix)
{
	if (!suffix)
		return name;
	size_t n = strlen(name), k = strlen(suffix);
	char *s = arena_alloc(a, n + k + 1);
	memcpy(s, name, n);
	memcpy(s + n, suffix, k + 1);
	return s;
}

static void clone_attrs(Arena *a, Node *dst, Graph *owner, const char *suffix,
			const char *label)
{
	dst->attrs = dup_array(a, dst->attrs, (size_t)dst->nattrs, sizeof(Attr));
	for (int32_t k = 0; k < dst->nattrs; k++) {
		Attr *at = &dst->attrs[k];
		if (at->type == ATTR_GRAPH && at->g)
			at->g = graph_clone(a, at->g, owner, suffix, label);
		if (at->type == ATTR_GRAPHS) {
			Graph **gs = arena_array(a, (size_t)at->n, sizeof(Graph *));
			for (int32_t j = 0; j < at->n; j++)
				gs[j] = graph_clone(a, at->graphs[j], owner,
						    suffix, label);
			at->graphs = gs;
		}
	}
}

Graph *graph_clone(Arena *a, const Graph *src, Graph *parent,
		   const char *suffix, const char *label)
{
	Graph *g = graph_new(a, NULL, parent);
	g->name = src->name;
	g->vals = dup_array(a, src->vals, (size_t)src->nvals, sizeof(Value));
	g->nvals = g->capvals = src->nvals;
	g->nodes = dup_array(a, src->nodes, (size_t)src->nnodes, sizeof(Node));
	g->nnodes = g->capnodes = src->nnodes;
	g->inputs = dup_array(a, src->inputs, (size_t)src->ninputs,
			      sizeof(ValId));
	g->ninputs = src->ninputs;
	g->outputs = dup_array(a, src->outputs, (size_t)src->noutputs,
			       sizeof(ValId));
	g->noutputs = src->noutputs;
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		n->name = node_name(a, n->name, suffix);
		n->inputs = dup_array(a, n->inputs, (size_t)n->ninputs,
				      sizeof(ValId));
		n->outputs = dup_array(a, n->outputs, (size_t)n->noutputs,
				       sizeof(ValId));
		n->fused = dup_array(a, n->fused, (size_t)n->nfused,
				     sizeof(char *));
		if (label)
			n->label = label;
		if (n->nattrs)
			clone_attrs(a, n, g, suffix, label);
	}
	return g;
}
