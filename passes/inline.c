/*
 * passes/inline.c - replace each If with a constant condition by the nodes
 * of its taken branch.
 *
 * The branch's nodes move into the If's graph at the If's place, so the
 * order stays topological (the branch only reads values the If could
 * read, which come before it).  Their values get new ids in that graph
 * (names made unique there), outer references become the parent values
 * they stand for, and the node producing a branch output now produces the
 * If's output itself, so the If's output ids (graph outputs, later users,
 * outer references from other subgraphs) stay valid.  A branch output that
 * is not a fresh node output of the branch (an outer value, a weight, one
 * value given twice) is copied into the If's output by an Identity.
 *
 * Inlining recurses: a moved node that is itself an If with a constant
 * condition (computed inside the branch from outer values, as exporters
 * nest shape checks) is inlined in turn, and subgraphs of the remaining
 * nodes (Loop bodies, Ifs whose condition is not known) are inlined
 * inside.  Subgraphs of moved nodes are re-parented to their new graph.
 */
#include <stdio.h>
#include <string.h>

#include "passes.h"

typedef struct Inliner {
	Graph *g;	/* the graph the nodes end up in */
	NameMap names;	/* value names of g */
	Node *nodes;	/* the new node list */
	int32_t nnodes, cap;
	int changed;
} Inliner;

static bool const_cond(const Graph *g, const Node *n)
{
	if (n->op != OP_If || n->ninputs < 1 || n->inputs[0] < 0)
		return false;
	const Tensor *t = g->vals[n->inputs[0]].konst;
	return t && t->dtype == DT_BOOL && shape_numel(&t->shape) == 1;
}

static Graph *branch_of(const Graph *g, const Node *n)
{
	const char *which =
		tensor_get_i64(g->vals[n->inputs[0]].konst, 0) ? "then_branch"
							       : "else_branch";
	const Attr *a = node_attr(n, which);
	return a && a->type == ATTR_GRAPH ? a->g : NULL;
}

static void push(Inliner *in, const Node *n)
{
	int32_t i = ARENA_PUSH(in->g->arena, in->nodes, in->nnodes, in->cap);
	in->nodes[i] = *n;
}

/* A name not yet used in g, based on name. */
static const char *fresh_name(Inliner *in, const char *name)
{
	const char *s = name;
	for (int k = 1; *s && namemap_get(&in->names, s) >= 0; k++)
		s = arena_printf(in->g->arena, "%s__%d", name, k);
	return s;
}

/* A new value of g copying b's type and contents. */
static ValId copy_value(Inliner *in, const Value *b, ValKind kind)
{
	const char *name = fresh_name(in, b->name);
	ValId id = graph_add_value(in->g, name, kind);
	Value *v = &in->g->vals[id];
	value_copy_type(v, b);
	v->flags = (uint16_t)(b->flags & ~VF_GRAPH_OUT);
	v->konst = b->konst;
	if (*v->name)
		namemap_put(&in->names, v->name, id);
	return id;
}

/* Points a moved node's subgraph at its new parent: its outer references
 * named values of the old one, which map[] translates. */
static void reparent(Graph *sub, Graph *g, const ValId *map)
{
	sub->parent = g;
	for (ValId i = 0; i < sub->nvals; i++)
		if (sub->vals[i].kind == VAL_OUTER && sub->vals[i].outer >= 0)
			sub->vals[i].outer = map[sub->vals[i].outer];
}

static int inline_branch(Inliner *in, const Node *ifn, Graph *b,
			 const ValId *pmap);

/* Moves node n of graph b into the new list, with its values mapped by
 * map (NULL: n is already g's and keeps its ids). */
static int move_node(Inliner *in, const Graph *b, const Node *n,
		     const ValId *map)
{
	Node c = *n;
	if (map) {
		c.inputs = arena_array(in->g->arena, (size_t)n->ninputs,
				       sizeof(ValId));
		c.outputs = arena_array(in->g->arena, (size_t)n->noutputs,
					sizeof(ValId));
		for (int32_t k = 0; k < n->ninputs; k++)
			c.inputs[k] = n->inputs[k] < 0 ? -1 : map[n->inputs[k]];
		for (int32_t k = 0; k < n->noutputs; k++)
			c.outputs[k] = n->outputs[k] < 0 ? -1
							  : map[n->outputs[k]];
	}
	if (const_cond(b, n)) {
		Graph *br = branch_of(b, n);
		if (br) {
			in->changed = 1;
			return inline_branch(in, &c, br, map);
		}
	}
	for (int32_t k = 0; map && k < c.nattrs; k++) {
		Attr *a = &c.attrs[k];
		if (a->type == ATTR_GRAPH && a->g)
			reparent(a->g, in->g, map);
		for (int32_t j = 0; a->type == ATTR_GRAPHS && j < a->n; j++)
			reparent(a->graphs[j], in->g, map);
	}
	push(in, &c);
	return 0;
}

/* Inlines branch b of If node ifn (whose ids are already g's); pmap maps
 * the ids of b's parent to g's (NULL: b's parent is g). */
static int inline_branch(Inliner *in, const Node *ifn, Graph *b,
			 const ValId *pmap)
{
	Graph *g = in->g;
	if (ifn->noutputs > b->noutputs)
		return error("graph '%s': node '%s' (If) has %d outputs, its "
			     "branch '%s' %d",
			     g->name, ifn->name, ifn->noutputs, b->name,
			     b->noutputs);
	ValId *map = arena_array(g->arena, (size_t)b->nvals + 1, sizeof(ValId));
	for (ValId i = 0; i < b->nvals; i++)
		map[i] = -1;
	/* branch outputs made by the branch's nodes become the If's outputs */
	for (int32_t k = 0; k < ifn->noutputs; k++) {
		ValId bo = b->outputs[k], o = ifn->outputs[k];
		if (o < 0 || b->vals[bo].kind != VAL_NODE || map[bo] >= 0)
			continue;
		const Value *src = &b->vals[bo];
		Value *v = &g->vals[o];
		map[bo] = o;
		value_copy_type(v, src);
		v->konst = src->konst;
		v->flags = (uint16_t)((v->flags & VF_GRAPH_OUT) |
				      (src->flags & ~VF_GRAPH_OUT));
	}
	for (ValId i = 0; i < b->nvals; i++) {
		const Value *v = &b->vals[i];
		if (map[i] >= 0)
			continue;
		switch (v->kind) {
		case VAL_OUTER:
			if (v->outer < 0)
				return error("graph '%s': outer reference '%s' "
					     "does not resolve",
					     b->name, v->name);
			map[i] = pmap ? pmap[v->outer] : v->outer;
			break;
		case VAL_INPUT:
			return error("graph '%s': branch of node '%s' (If) has "
				     "an input '%s'; branches take none",
				     b->name, ifn->name, v->name);
		default:
			map[i] = copy_value(in, v, (ValKind)v->kind);
		}
	}
	for (int32_t i = 0; i < b->nnodes; i++)
		if (move_node(in, b, &b->nodes[i], map) < 0)
			return -1;
	/* outputs not produced above: copied by an Identity */
	for (int32_t k = 0; k < ifn->noutputs; k++) {
		ValId bo = b->outputs[k], o = ifn->outputs[k];
		if (o < 0 || map[bo] == o)
			continue;
		Node id;
		node_init(g, &id,
			  arena_printf(g->arena, "%s/output_%d", ifn->name, k),
			  "Identity", "", 1, 1);
		id.inputs[0] = map[bo];
		id.outputs[0] = o;
		id.label = ifn->label;
		const Value *src = &g->vals[map[bo]];
		Value *v = &g->vals[o];
		value_copy_type(v, src);
		v->konst = src->konst;
		v->flags = (uint16_t)((v->flags & VF_GRAPH_OUT) |
				      (src->flags & VF_DATA_DEP));
		push(in, &id);
	}
	return 0;
}

int graph_inline(Graph *g);

static int inline_subgraphs(Graph *g)
{
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		for (int32_t k = 0; k < n->nattrs; k++) {
			Attr *a = &n->attrs[k];
			if (a->type == ATTR_GRAPH && a->g &&
			    graph_inline(a->g) < 0)
				return -1;
			for (int32_t j = 0; a->type == ATTR_GRAPHS && j < a->n;
			     j++)
				if (graph_inline(a->graphs[j]) < 0)
					return -1;
		}
	}
	return 0;
}

int graph_inline(Graph *g)
{
	bool any = false;
	for (int32_t i = 0; i < g->nnodes && !any; i++)
		any = const_cond(g, &g->nodes[i]) && branch_of(g, &g->nodes[i]);
	if (any) {
		Inliner in = { .g = g };
		int rc = 0;
		namemap_init(&in.names);
		for (ValId i = 0; i < g->nvals; i++)
			if (g->vals[i].name[0])
				namemap_put(&in.names, g->vals[i].name, i);
		for (int32_t i = 0; i < g->nnodes && !rc; i++)
			rc = move_node(&in, g, &g->nodes[i], NULL);
		namemap_release(&in.names);
		if (rc < 0)
			return -1;
		g->nodes = in.nodes;
		g->nnodes = in.nnodes;
		g->capnodes = in.cap;
		for (ValId i = 0; i < g->nvals; i++)
			if (g->vals[i].kind == VAL_NODE)
				g->vals[i].producer = -1;
		for (int32_t i = 0; i < g->nnodes; i++)
			for (int32_t k = 0; k < g->nodes[i].noutputs; k++)
				if (g->nodes[i].outputs[k] >= 0)
					g->vals[g->nodes[i].outputs[k]].producer = i;
	}
	return inline_subgraphs(g);
}
