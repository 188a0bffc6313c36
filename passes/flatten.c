/*
 * passes/flatten.c - one gear of a compiled model as one plain graph
 * (flatten.h): gearc's Case, MapIndex and PartitionedCall inlined away.
 *
 * Values are copied into the new graph through a map per source graph
 * (source ValId -> new ValId, -1 until made): inputs of an inlined graph
 * map to what its caller passes, its outputs then give the caller's
 * outputs, and weights map through one table of Tensors so each is one
 * value however many graphs read it.
 */
#include <stdlib.h>
#include <string.h>

#include "flatten.h"
#include "contrib.h"
#include "partition.h"
#include "scope.h"

typedef struct Flat {
	Model *m;
	Graph *dst;
	int32_t gear;
	/* for export: fused nodes become their ONNX nodes, Fail branches
	 * standard ONNX, every subgraph output a node output of its own */
	bool standard;
	PtrMap weights; /* Tensor -> its weight value in dst */
} Flat;

/* One source graph being copied: its map and its parent's (for outer
 * references), NULL at the top. */
typedef struct Frame {
	const Graph *g;
	ValId *map;
	const struct Frame *up;
} Frame;

static int flat_graph(Flat *F, const Frame *fr);

int32_t gear_count(const Model *m)
{
	return m->gears ? m->gears->ngears : 1;
}

const Graph *gear_source_graph(const Model *m, int32_t gear)
{
	if (gear < 0 || gear >= gear_count(m))
		return NULL;
	if (m->branches && m->branches[gear])
		return m->branches[gear];
	return m->graph;
}

/* ---- weights ------------------------------------------------------------ */

/* The weight value of dst holding t, made on first use from v. */
static ValId weight_of(Flat *F, const Value *v)
{
	ValId id = ptrmap_get(&F->weights, v->konst);
	if (id >= 0)
		return id;
	id = graph_add_value(F->dst, v->name, VAL_WEIGHT);
	Value *w = &F->dst->vals[id];
	w->dtype = v->konst->dtype;
	w->shape = v->konst->shape;
	w->konst = v->konst;
	ptrmap_put(&F->weights, v->konst, id);
	return id;
}

/* ---- values ------------------------------------------------------------- */

/* The new value for v of fr->g: made now for weights and outer
 * references, else what an input binding or producer set. */
static int resolve(Flat *F, const Frame *fr, ValId v, ValId *out)
{
	const Value *x = &fr->g->vals[v];
	if (fr->map[v] < 0 && x->konst && x->kind != VAL_NODE)
		fr->map[v] = weight_of(F, x);
	if (fr->map[v] < 0 && x->kind == VAL_OUTER && fr->up)
		fr->map[v] = fr->up->map[x->outer];
	if (fr->map[v] < 0)
		return error("graph '%s': value '%s' is read before it is "
			     "made (%s)",
			     fr->g->name, x->name,
			     x->kind == VAL_OUTER ? "an outer reference"
						  : "no producer copied");
	*out = fr->map[v];
	return 0;
}

/* A new node output like v of the source graph. */
static ValId copy_value(Flat *F, const Value *v)
{
	ValId id = graph_add_value(F->dst, v->name, VAL_NODE);
	Value *w = &F->dst->vals[id];
	value_copy_type(w, v);
	w->flags = v->flags & ~VF_GRAPH_OUT;
	return id;
}

/* ---- nodes -------------------------------------------------------------- */

/* Copies sub (a subgraph of a node of fr->g) below dst, its outer
 * references re-pointed at dst's values. */
static int copy_subgraph(Flat *F, const Frame *fr, Graph *sub, Graph **out)
{
	Graph *c = graph_clone(F->dst->arena, sub, F->dst, NULL, NULL);
	for (ValId i = 0; i < c->nvals; i++)
		if (c->vals[i].kind == VAL_OUTER &&
		    resolve(F, fr, c->vals[i].outer, &c->vals[i].outer) < 0)
			return -1;
	*out = c;
	return 0;
}

/* A fused node (passes/fuse.c) as its standard ONNX nodes. */
static int copy_fused(Flat *F, const Frame *fr, const Node *n)
{
	ValId ins[8];
	if (n->ninputs > 8 || n->noutputs != 1 || n->outputs[0] < 0)
		return error("node '%s' (%s): unexpected inputs or outputs",
			     n->name, n->op_type);
	for (int32_t k = 0; k < n->ninputs; k++) {
		ins[k] = -1;
		if (n->inputs[k] >= 0 &&
		    resolve(F, fr, n->inputs[k], &ins[k]) < 0)
			return -1;
	}
	ValId v = n->outputs[0];
	fr->map[v] = copy_value(F, &fr->g->vals[v]);
	return unfuse_node(F->dst, n, model_opset(F->m), ins, fr->map[v]);
}

/* A contrib op (passes/contrib.h) as its standard form: 1 if written,
 * 0 if it has none at this gear (its form needs a newer opset; what it
 * began is taken back and the node is copied in its domain), -1 on
 * error. */
static int copy_contrib(Flat *F, const Frame *fr, const Node *n)
{
	ValId ins[32], outs[8];
	if (n->ninputs > 32 || n->noutputs > 8)
		return 0;
	for (int32_t k = 0; k < n->ninputs; k++) {
		ins[k] = -1;
		if (n->inputs[k] >= 0 &&
		    resolve(F, fr, n->inputs[k], &ins[k]) < 0)
			return -1;
	}
	int32_t nn = F->dst->nnodes, nv = F->dst->nvals;
	for (int32_t k = 0; k < n->noutputs; k++) {
		ValId v = n->outputs[k];
		outs[k] = v < 0 ? -1 : (fr->map[v] = copy_value(F, &fr->g->vals[v]));
	}
	if (contrib_lower(F->dst, n, model_opset(F->m), ins, outs) == 0)
		return 1;
	F->dst->nnodes = nn;
	F->dst->nvals = nv;
	for (int32_t k = 0; k < n->noutputs; k++)
		if (n->outputs[k] >= 0)
			fr->map[n->outputs[k]] = -1;
	clear_error();
	return 0;
}

static int copy_node(Flat *F, const Frame *fr, const Node *n)
{
	bool fused = unfuse_is_fused(n, model_opset(F->m));
	if (fused && F->standard)
		return copy_fused(F, fr, n);
	if (F->standard && contrib_has_form(n)) {
		int rc = copy_contrib(F, fr, n);
		if (rc)
			return rc < 0 ? -1 : 0;
	}
	if (!fused && !strcmp(n->domain, GEARC_DOMAIN))
		return error("node '%s': gearc's op %s has no ONNX form here",
			     n->name, n->op_type);
	int32_t at = F->dst->nnodes;
	graph_add_node(F->dst, n->name, n->op_type, n->domain, n->ninputs,
		       n->noutputs);
	for (int32_t k = 0; k < n->ninputs; k++)
		if (n->inputs[k] >= 0 &&
		    resolve(F, fr, n->inputs[k],
			    &F->dst->nodes[at].inputs[k]) < 0)
			return -1;
	for (int32_t k = 0; k < n->noutputs; k++) {
		ValId v = n->outputs[k];
		if (v < 0)
			continue;
		fr->map[v] = copy_value(F, &fr->g->vals[v]);
		F->dst->nodes[at].outputs[k] = fr->map[v];
	}
	Node *d = &F->dst->nodes[at];
	d->nattrs = n->nattrs;
	d->attrs = n->nattrs ? arena_memdup(F->dst->arena, n->attrs,
					    (size_t)n->nattrs * sizeof(Attr))
			     : NULL;
	for (int32_t k = 0; k < d->nattrs; k++) {
		Attr *a = &d->attrs[k];
		if (a->type == ATTR_GRAPH && a->g &&
		    copy_subgraph(F, fr, a->g, &a->g) < 0)
			return -1;
		if (a->type != ATTR_GRAPHS)
			continue;
		Graph **gs = arena_array(F->dst->arena, (size_t)a->n,
					 sizeof(Graph *));
		for (int32_t j = 0; j < a->n; j++)
			if (copy_subgraph(F, fr, a->graphs[j], &gs[j]) < 0)
				return -1;
		a->graphs = gs;
	}
	return 0;
}

/* Runs body in place of a call in fr: body's inputs bound to args (values
 * of fr->g), then *results[k] = the new value of body's output k. */
static int inline_graph(Flat *F, const Frame *fr, const Graph *body,
			const ValId *args, int32_t nargs, ValId *results)
{
	if (nargs != body->ninputs)
		return error("graph '%s': called with %d inputs, has %d",
			     body->name, nargs, body->ninputs);
	ValId *map = xmalloc((size_t)body->nvals * sizeof(ValId) + 1);
	for (ValId i = 0; i < body->nvals; i++)
		map[i] = -1;
	Frame in = { .g = body, .map = map, .up = fr };
	int rc = 0;
	for (int32_t k = 0; k < nargs && rc == 0; k++)
		if (args[k] >= 0)
			rc = resolve(F, fr, args[k], &map[body->inputs[k]]);
	if (rc == 0)
		rc = flat_graph(F, &in);
	for (int32_t k = 0; k < body->noutputs && rc == 0; k++)
		rc = resolve(F, &in, body->outputs[k], &results[k]);
	free(map);
	return rc;
}

static int inline_partition(Flat *F, const Frame *fr, const Node *n)
{
	const Graph *body = partition_subgraph(n);
	if (!body)
		return error("node '%s': a partition without its subgraph",
			     n->name);
	if (body->noutputs != n->noutputs)
		return error("node '%s': %d outputs, its subgraph %d",
			     n->name, n->noutputs, body->noutputs);
	ValId *res = xmalloc((size_t)n->noutputs * sizeof(ValId) + 1);
	int rc = inline_graph(F, fr, body, n->inputs, n->ninputs, res);
	for (int32_t k = 0; k < n->noutputs && rc == 0; k++)
		if (n->outputs[k] >= 0)
			fr->map[n->outputs[k]] = res[k];
	free(res);
	return rc;
}

/* The Case of a scope body: the one node of op Case. */
static const Node *scope_case(const Graph *body)
{
	for (int32_t i = 0; i < body->nnodes; i++)
		if (body->nodes[i].op == OP_Case)
			return &body->nodes[i];
	return NULL;
}

/* Position of v among n's outputs, or -1. */
static int32_t output_index(const Node *n, ValId v)
{
	for (int32_t k = 0; k < n->noutputs; k++)
		if (n->outputs[k] == v)
			return k;
	return -1;
}

/* A multi-dims scope: the clone gear_map gives this gear, run on the
 * scope's inputs as its Case passes them. */
static int inline_scope(Flat *F, const Frame *fr, const Node *n)
{
	const Attr *b = node_attr(n, SCOPE_BODY_ATTR);
	const int64_t *gmap;
	int32_t ng = attr_ints(n, SCOPE_GEAR_MAP_ATTR, &gmap);
	const Graph *body = b && b->type == ATTR_GRAPH ? b->g : NULL;
	const Node *cs = body ? scope_case(body) : NULL;
	const Attr *br = cs ? node_attr(cs, CASE_BRANCHES_ATTR) : NULL;
	if (!cs || !br || br->type != ATTR_GRAPHS || ng <= F->gear ||
	    gmap[F->gear] < 0 || gmap[F->gear] >= br->n)
		return error("node '%s': a scope without a clone for gear %d",
			     n->name, F->gear);
	const Graph *clone = br->graphs[gmap[F->gear]];
	/* args: the scope inputs the Case passes, as values of fr->g */
	ValId *args = xmalloc((size_t)cs->ninputs * sizeof(ValId) + 1);
	ValId *res = xmalloc((size_t)clone->noutputs * sizeof(ValId) + 1);
	int rc = 0;
	for (int32_t k = 1; k < cs->ninputs && rc == 0; k++) {
		int32_t p = -1;
		for (int32_t j = 0; j < body->ninputs && p < 0; j++)
			if (body->inputs[j] == cs->inputs[k])
				p = j;
		if (p < 0)
			rc = error("node '%s': its Case reads '%s', not an "
				   "input of the scope",
				   n->name, body->vals[cs->inputs[k]].name);
		else
			args[k - 1] = n->inputs[p];
	}
	if (rc == 0)
		rc = inline_graph(F, fr, clone, args, cs->ninputs - 1, res);
	for (int32_t k = 0; k < n->noutputs && rc == 0; k++) {
		int32_t p = k < body->noutputs
				    ? output_index(cs, body->outputs[k])
				    : -1;
		if (p < 0)
			rc = error("node '%s': output %d is not its Case's",
				   n->name, k);
		else if (n->outputs[k] >= 0)
			fr->map[n->outputs[k]] = res[p];
	}
	free(args);
	free(res);
	return rc;
}

static int flat_graph(Flat *F, const Frame *fr)
{
	for (int32_t i = 0; i < fr->g->nnodes; i++) {
		const Node *n = &fr->g->nodes[i];
		int rc = partition_is_node(n) ? inline_partition(F, fr, n)
			 : scope_is_call(n)   ? inline_scope(F, fr, n)
					      : copy_node(F, fr, n);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* ---- outputs ------------------------------------------------------------ */

/* Output k of g given by a new Identity of g, output name, when the value
 * is not a node output of g (an input, a weight, an outer reference) or
 * is an earlier output too; returns whether it was. */
static bool own_output(Graph *g, int32_t k, const char *name)
{
	ValId v = g->outputs[k];
	bool taken = g->vals[v].kind != VAL_NODE;
	for (int32_t j = 0; j < k && !taken; j++)
		taken = g->outputs[j] == v;
	if (!taken)
		return false;
	ValId id = graph_add_value(g, name, VAL_NODE);
	value_copy_type(&g->vals[id], &g->vals[v]);
	Node *n = graph_add_node(g, name, "Identity", "", 1, 1);
	n->inputs[0] = v;
	n->outputs[0] = id;
	g->vals[id].producer = g->nnodes - 1;
	g->outputs[k] = id;
	return true;
}

/* Output k of g is named name: renames its value, or adds an Identity. */
static void name_output(Graph *g, int32_t k, const char *name)
{
	if (!own_output(g, k, name))
		g->vals[g->outputs[k]].name = name;
}

/* The output names first, so that no other value is renamed to one. */
static void name_outputs(Graph *g, const char **names)
{
	for (int32_t k = 0; k < g->noutputs; k++)
		for (ValId v = 0; v < g->nvals; v++)
			if (g->vals[v].name == names[k] ||
			    !strcmp(g->vals[v].name, names[k]))
				g->vals[v].name = graph_fresh_name(g, "v");
	for (int32_t k = 0; k < g->noutputs; k++)
		name_output(g, k, names[k]);
	for (int32_t k = 0; k < g->noutputs; k++)
		g->vals[g->outputs[k]].flags |= VF_GRAPH_OUT;
}

/* ---- standard ONNX ------------------------------------------------------ */

/* The value of b (a branch of an If of g) reading g's value v. */
static ValId outer_ref(Graph *b, const Graph *g, ValId v)
{
	for (ValId i = 0; i < b->nvals; i++)
		if (b->vals[i].kind == VAL_OUTER && b->vals[i].outer == v)
			return i;
	ValId id = graph_add_value(b, g->vals[v].name, VAL_OUTER);
	value_copy_type(&b->vals[id], &g->vals[v]);
	b->vals[id].outer = v;
	b->vals[id].producer = -1;
	return id;
}

/* The Fail nodes of the branches of g's If n as standard ONNX
 * (passes/unfuse.c), on the If's condition. */
static int lower_branches(Graph *g, const Node *n, int64_t opset)
{
	for (int32_t k = 0; k < n->nattrs; k++) {
		Graph *b = n->attrs[k].type == ATTR_GRAPH ? n->attrs[k].g : NULL;
		for (int32_t i = 0; b && i < b->nnodes; i++)
			if (b->nodes[i].op == OP_Fail &&
			    unfuse_fail(b, i--, outer_ref(b, g, n->inputs[0]),
					opset) < 0)
				return -1;
	}
	return 0;
}

/* Every Fail of g's If branches lowered before the walk reaches them: a
 * Fail left in g is not a branch's, the gear would always fail. */
static int lower_fails(Graph *g, void *ctx)
{
	const int64_t *opset = ctx;
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		if (n->op == OP_Fail)
			return error("node '%s': this gear always fails: %s",
				     n->name,
				     attr_str(n, FAIL_MESSAGE_ATTR, "Fail"));
		if (n->op == OP_If && lower_branches(g, n, *opset) < 0)
			return -1;
	}
	return 0;
}

/* Every output of subgraph g made by a node of g: ONNX Runtime refuses a
 * subgraph returning an outer value or an initializer (weights of every
 * graph are initializers of the main graph) directly. */
static int own_outputs(Graph *g, void *ctx)
{
	(void)ctx;
	for (int32_t k = 0; g->parent && k < g->noutputs; k++) {
		const char *name = g->vals[g->outputs[k]].name;
		own_output(g, k, graph_fresh_name(g, name));
	}
	return 0;
}

/* g as standard ONNX: its Fail branches lowered (what they leave unused
 * goes), its subgraphs' outputs their own. */
static int standard_onnx(const Model *m, Graph *g)
{
	int64_t opset = model_opset(m);
	if (graph_walk(g, lower_fails, &opset) < 0 ||
	    graph_toposort(g) < 0 || graph_dce(g, NULL) < 0)
		return -1;
	return graph_walk(g, own_outputs, NULL);
}

/* ---- the whole ---------------------------------------------------------- */

static Graph *flatten_top(Flat *F, const Graph *src, const Shape *const *shapes,
			  const Tensor *const *values)
{
	Graph *dst = F->dst;
	ValId *map = xmalloc((size_t)src->nvals * sizeof(ValId) + 1);
	for (ValId i = 0; i < src->nvals; i++)
		map[i] = -1;
	dst->ninputs = src->ninputs;
	dst->inputs = arena_array(dst->arena, (size_t)src->ninputs + 1,
				  sizeof(ValId));
	for (int32_t k = 0; k < src->ninputs; k++) {
		const Value *v = &src->vals[src->inputs[k]];
		ValId id = graph_add_value(dst, v->name, VAL_INPUT);
		Value *w = &dst->vals[id];
		w->dtype = v->dtype;
		w->tkind = v->tkind;
		w->shape = shapes && shapes[k] ? *shapes[k] : v->shape;
		w->konst = values ? values[k] : NULL;
		dst->inputs[k] = map[src->inputs[k]] = id;
	}
	Frame fr = { .g = src, .map = map, .up = NULL };
	int rc = flat_graph(F, &fr);
	dst->noutputs = src->noutputs;
	dst->outputs = arena_array(dst->arena, (size_t)src->noutputs + 1,
				   sizeof(ValId));
	for (int32_t k = 0; k < src->noutputs && rc == 0; k++)
		rc = resolve(F, &fr, src->outputs[k], &dst->outputs[k]);
	free(map);
	return rc < 0 ? NULL : dst;
}

/* src flattened into a new graph of arena a, specialised to shapes and
 * values. */
static Graph *flatten_into(Flat *F, Arena *a, const Graph *src,
			   const Shape *const *shapes,
			   const Tensor *const *values)
{
	Model *m = F->m;
	F->dst = graph_new(a, m->graph_name ? m->graph_name : m->graph->name,
			   NULL);
	Graph *g = flatten_top(F, src, shapes, values);
	ptrmap_release(&F->weights);
	if (!g)
		return NULL;
	const char **names = arena_array(a, (size_t)g->noutputs + 1,
					 sizeof(char *));
	for (int32_t k = 0; k < g->noutputs; k++)
		names[k] = src->vals[src->outputs[k]].name;
	if (graph_toposort(g) < 0 || infer_graph(m, g) < 0 ||
	    graph_inline(g) < 0 || graph_dce(g, NULL) < 0 ||
	    (F->standard && standard_onnx(m, g) < 0))
		return NULL;
	name_outputs(g, names);
	if (graph_toposort(g) < 0 || graph_verify(g) < 0)
		return NULL;
	return g;
}

Graph *gear_flatten(Model *m, int32_t gear, const Shape *const *shapes)
{
	const Graph *src = gear_source_graph(m, gear);
	if (!src) {
		error("gear %d: the model has %d gears", gear, gear_count(m));
		return NULL;
	}
	Flat F = { .m = m, .gear = gear, .standard = true };
	return flatten_into(&F, &m->arena, src, shapes, NULL);
}

Graph *graph_flatten(Model *m, const Graph *src, Arena *a,
		     const Shape *const *shapes, const Tensor *const *values)
{
	Flat F = { .m = m };
	return flatten_into(&F, a, src, shapes, values);
}
