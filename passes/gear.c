/*
 * passes/gear.c - gear compilation (GE's MultiBatchClonePass: one
 * specialised copy of the graph per gear under a root that picks it).
 *
 * pass_gear_clone turns the model's graph into a root graph:
 *
 *   inputs:  the model's inputs, gear inputs at their max-gear shape,
 *            and gear_dims (int64[V]): the running gear's dim values
 *   weight:  gear_table (int64[G*V]): every gear's values, row-major
 *   nodes:   MapIndex(gear_dims, gear_table) -> branch
 *            Case(branch, inputs...) -> the model's outputs
 *   Case.branches: G graphs Batch_0 .. Batch_{G-1}, each the model's graph
 *            with its inputs at that gear's exact shapes
 *
 * Branch i is cloned into its own arena (m->arenas[i]) so the per-graph
 * passes can then specialise the branches on several threads
 * (for_each_gear_graph), with byte-identical results whatever the
 * thread count: every branch is computed alone, from the same inputs.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/gearspec.h"
#include "passes.h"

static ValId add_input(Graph *g, const char *name, int dtype, const Shape *s)
{
	ValId v = graph_add_value(g, name, VAL_INPUT);
	g->vals[v].dtype = dtype;
	g->vals[v].shape = *s;
	g->inputs = arena_grow(g->arena, g->inputs, (size_t)g->ninputs,
			       (size_t)g->ninputs + 1, sizeof(ValId));
	g->inputs[g->ninputs++] = v;
	return v;
}

/* The gear table as a constant: folded (gearc's, not the model's), so it
 * is kept with the graphs, not in the WEIGHTS partition. */
static ValId add_table(Graph *g, const GearSpec *gs, const char *name)
{
	int64_t n = (int64_t)gs->ngears * gs->nvals;
	Shape s = shape_of(1, &n);
	Tensor *t = tensor_new(g->arena, name, DT_INT64, &s, gs->table);
	t->folded = true;
	return graph_add_weight(g, name, t);
}

/* Branch `gear`: touches only its own slots of m->arenas and m->branches,
 * so the branches clone on several threads. */
static int clone_branch(void *ctx, int32_t gear)
{
	Model *m = ctx;
	const GearSpec *gs = m->gears;
	Arena *a = m->arenas[gear] = xmalloc(sizeof(Arena));
	arena_init(a);
	const char *label = arena_printf(a, GEAR_LABEL, gear);
	Graph *b = graph_clone(a, m->graph, NULL,
			       arena_printf(a, "_batch_%d", gear), label);
	b->name = label;
	for (int32_t k = 0; k < gs->ninputs; k++) {
		Value *v = &b->vals[gs->inputs[k].val];
		v->shape = gear_input_shape(gs, k, gear);
		v->dim_params = NULL;
	}
	m->branches[gear] = b;
	return 0;
}

/* Case attributes: the branches, the input order and the dynamic type
 * (the gear count and values are the Model's gear table, stored once in
 * the file's). */
static void case_attrs(Model *m, Graph *root, Node *cs)
{
	const GearSpec *gs = m->gears;
	Attr *a = node_add_attr(root, cs, CASE_BRANCHES_ATTR, ATTR_GRAPHS);
	a->n = gs->ngears;
	a->graphs = m->branches;
	a = node_add_attr(root, cs, CASE_INPUT_ORDER_ATTR, ATTR_STRINGS);
	a->n = gs->ninputs;
	Bytes *names = arena_array(root->arena, (size_t)gs->ninputs,
				   sizeof(Bytes));
	for (int32_t k = 0; k < gs->ninputs; k++) {
		names[k].len = strlen(gs->inputs[k].name);
		names[k].data = (const uint8_t *)gs->inputs[k].name;
	}
	a->strings = names;
	node_add_string(root, cs, CASE_DYNAMIC_TYPE_ATTR,
			gear_mode_name(gs->mode));
}

void gear_branches(Model *m, const PassOptions *o)
{
	int32_t ngears = m->gears->ngears;
	if (m->branches)
		return;
	m->arenas = arena_array(&m->arena, (size_t)ngears, sizeof(Arena *));
	m->branches = arena_array(&m->arena, (size_t)ngears, sizeof(Graph *));
	(void)parallel_for(ngears, thread_count(o ? o->jobs : 0), clone_branch,
			   m);
}

int pass_gear_clone(Model *m, const PassOptions *o)
{
	const GearSpec *gs = m->gears;
	if (!gs || m->gear_outputs) /* static, or scopes instead */
		return 0;
	Graph *src = m->graph, *root = graph_new(&m->arena, src->name, NULL);
	int32_t ngears = gs->ngears;

	/* Inputs: the model's (gear inputs at the max gear), gear_dims. */
	for (int32_t k = 0; k < src->ninputs; k++) {
		const Value *v = &src->vals[src->inputs[k]];
		int32_t gk = gear_input_index(gs, src->inputs[k]);
		Shape s = gk < 0 ? v->shape : gear_max_shape(gs, gk);
		ValId r = add_input(root, v->name, v->dtype, &s);
		root->vals[r].tkind = v->tkind;
	}
	int64_t nv = gs->nvals;
	Shape dims_shape = shape_of(1, &nv);
	const char *dims_name = graph_fresh_name(root, "gear_dims");
	m->gear_info = add_input(root, dims_name, DT_INT64, &dims_shape);
	ValId table = add_table(root, gs, graph_fresh_name(root, "gear_table"));
	ValId branch = graph_add_value(
		root, graph_fresh_name(root, "gear_branch"), VAL_NODE);

	Node *mi = graph_add_node(root, "gear_mapindex", "MapIndex",
				  GEARC_DOMAIN, 2, 1);
	mi->inputs[0] = m->gear_info;
	mi->inputs[1] = table;
	mi->outputs[0] = branch;

	gear_branches(m, o);
	for (int32_t g = 0; g < ngears; g++)
		m->branches[g]->parent = root;

	Node *cs = graph_add_node(root, "gear_case", "Case", GEARC_DOMAIN,
				  1 + src->ninputs, src->noutputs);
	cs->inputs[0] = branch;
	for (int32_t k = 0; k < src->ninputs; k++)
		cs->inputs[1 + k] = root->inputs[k];
	root->outputs = arena_array(&m->arena, (size_t)src->noutputs,
				    sizeof(ValId));
	root->noutputs = src->noutputs;
	for (int32_t k = 0; k < src->noutputs; k++) {
		const Value *v = &src->vals[src->outputs[k]];
		ValId r = graph_add_value(root, v->name, VAL_NODE);
		root->vals[r].flags = VF_GRAPH_OUT;
		cs->outputs[k] = r; /* adding values never moves nodes */
		root->outputs[k] = r;
	}
	case_attrs(m, root, cs);
	/* Built in order: MapIndex, then Case.  (graph_toposort would walk
	 * every branch, which are sorted already.) */
	root->vals[branch].producer = 0;
	for (int32_t k = 0; k < cs->noutputs; k++)
		root->vals[cs->outputs[k]].producer = 1;
	m->graph = root;
	return 0;
}

/* ---- running a per-graph pass over every gear ---------------------------- */

typedef struct Job {
	Model *m;
	const PassOptions *o;
	GraphPassFn fn;
} Job;

/* Job i: gear branch i, then the dynamic graph of a --hybrid compile. */
static int run_job(void *ctx, int32_t i)
{
	Job *j = ctx;
	Model *m = j->m;
	return j->fn(m, i < m->gears->ngears ? m->branches[i] : m->dynamic,
		     j->o);
}

/* Prefixes the error with "gear 3 (Batch_3, dims 8,640): ". */
static int gear_error(const GearSpec *gs, int32_t g)
{
	char dims[256];
	size_t k = 0;
	dims[0] = 0;
	for (int32_t i = 0; i < gs->nvals && k < sizeof(dims); i++)
		k += (size_t)snprintf(dims + k, sizeof(dims) - k, "%s%lld",
				      i ? "," : "",
				      (long long)gs->table[(size_t)g * gs->nvals + i]);
	return error_prefix("gear %d (" GEAR_LABEL ", dims %s)", g, g, dims);
}

int for_each_gear_graph(Model *m, GraphPassFn fn, const PassOptions *o)
{
	if (!m->gears || !m->branches)
		return fn(m, m->graph, o);
	Job j = { .m = m, .o = o, .fn = fn };
	int32_t n = m->gears->ngears + (m->dynamic != NULL);
	int32_t bad = parallel_for(n, thread_count(o ? o->jobs : 0), run_job, &j);
	if (bad < 0)
		return 0;
	return bad < m->gears->ngears
		       ? gear_error(m->gears, bad)
		       : error_prefix("the dynamic graph (--hybrid)");
}

int pass_gear_root(Model *m, const PassOptions *o)
{
	(void)o;
	if (!m->gears)
		return 0;
	return infer_graph(m, m->graph);
}
