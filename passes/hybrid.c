/*
 * passes/hybrid.c - hybrid compile mode: the dynamic graph beside the
 * gears (hybrid.h says what it is; this file builds and attaches it).
 * The symbolic walk is in passes/symbols.c.
 */
#include <string.h>

#include "compiler/gearspec.h"
#include "hybrid.h"

/* The symbol of gear input k's j-th gear dim: the model's dim_param
 * there, else "s<position in the gear row>". */
static const char *gear_symbol(Arena *a, const GearSpec *gs, int32_t k,
			       int32_t j, const Value *src)
{
	int32_t axis = gs->inputs[k].dyn_axes[j];
	const char *p = src->dim_params && axis < src->shape.rank
				? src->dim_params[axis]
				: NULL;
	if (p && *p)
		return p;
	return arena_printf(a, "s%d", gs->inputs[k].first + j);
}

int pass_hybrid(Model *m, const PassOptions *o)
{
	const GearSpec *gs = m->gears;
	if (!o || !o->hybrid)
		return 0;
	if (!gs)
		return error("--hybrid needs a gear option (--dynamic_batch_size, "
			     "--dynamic_image_size or --dynamic_dims)");
	Arena *a = m->dynamic_arena = xmalloc(sizeof(Arena));
	arena_init(a);
	Graph *d = graph_clone(a, m->graph, NULL, "_dynamic", HYBRID_GRAPH_NAME);
	d->name = HYBRID_GRAPH_NAME;
	for (int32_t k = 0; k < gs->ninputs; k++) {
		const GearInput *in = &gs->inputs[k];
		Value *v = &d->vals[in->val];
		const char **dp = arena_array(a, (size_t)in->shape.rank,
					      sizeof(char *));
		for (int32_t j = 0; j < in->ndyn; j++)
			dp[in->dyn_axes[j]] = gear_symbol(a, gs, k, j,
							  &m->graph->vals[in->val]);
		v->shape = in->shape;
		v->dim_params = dp;
	}
	m->dynamic = d;
	return 0;
}

int pass_hybrid_root(Model *m, const PassOptions *o)
{
	(void)o;
	Graph *root = m->graph;
	if (!m->dynamic)
		return 0;
	for (int32_t i = 0; i < root->nnodes; i++) {
		Node *n = &root->nodes[i];
		if (n->op != OP_Case)
			continue;
		m->dynamic->parent = root;
		node_add_attr(root, n, HYBRID_GRAPH_ATTR, ATTR_GRAPH)->g =
			m->dynamic;
		node_add_string(root, n, HYBRID_RULE_ATTR, HYBRID_RULE);
		return 0;
	}
	BUG("--hybrid: the root graph has no Case node");
}

Graph *hybrid_graph(const Graph *root)
{
	for (int32_t i = 0; root && i < root->nnodes; i++) {
		const Node *n = &root->nodes[i];
		const Attr *a = node_attr(n, HYBRID_GRAPH_ATTR);
		if (n->op == OP_Case && a && a->type == ATTR_GRAPH && a->g)
			return a->g;
	}
	return NULL;
}

int symbols_one(Model *m, Graph *g, const PassOptions *o)
{
	(void)o;
	if (g == m->dynamic)
		hybrid_symbols(g, hybrid_opset(m));
	return 0;
}

int64_t hybrid_opset(const Model *m)
{
	int64_t v = model_opset(m);
	return v > 0 ? v : OPSET_NEWEST;
}
