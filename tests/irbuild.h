/*
 * tests/irbuild.h - building small graphs by hand: the builders of
 * tests/testutil.h without Criterion, for programs that are no Criterion
 * test (the fuzz harnesses).
 *
 *	Model *m = tu_model(13);
 *	Graph *g = m->graph;
 *	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(1, 3, 224, 224));
 *	ValId w = tu_weight(g, "w", DT_FLOAT, SHAPE(8, 3, 3, 3));
 *	Node *n = tu_node(g, "Conv", "conv", IDS(x, w), 1);
 *	tu_ints(g, n, "pads", INTS(1, 1, 1, 1));
 *
 * Output k of a node named "n" is a value named "n:k".  Everything lives
 * in the model's arena.
 */
#ifndef GEARC_IRBUILD_H
#define GEARC_IRBUILD_H

#include <stdio.h>
#include <string.h>

#include "compiler/ir.h"

/* A list of int64 literals: its pointer and count. */
#define INTS(...)                                                        \
	(const int64_t[]){ __VA_ARGS__ },                                \
		(int32_t)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t))
/* A list of ValIds (-1: omitted): its pointer and count. */
#define IDS(...)                                                          \
	(const ValId[]){ __VA_ARGS__ },                                   \
		(int32_t)(sizeof((ValId[]){ __VA_ARGS__ }) / sizeof(ValId))
/* A shape of the given dims (at least one; see SCALAR, UNKNOWN). */
#define SHAPE(...) tu_shape_of(INTS(__VA_ARGS__))
#define SCALAR (shape_of(0, NULL))
#define UNKNOWN (shape_unknown())

static inline Shape tu_shape_of(const int64_t *dims, int32_t rank)
{
	return shape_of(rank, dims);
}

/* A model with one default-domain opset and an empty main graph. */
static inline Model *tu_model(int64_t opset)
{
	Model *m = model_new();
	m->nopsets = 1;
	m->opsets = arena_alloc(&m->arena, sizeof(Opset));
	m->opsets[0].domain = "";
	m->opsets[0].version = opset;
	m->graph = graph_new(&m->arena, "main", NULL);
	return m;
}

static inline ValId tu_input(Graph *g, const char *name, int dt, Shape s)
{
	ValId id = graph_add_value(g, name, VAL_INPUT);
	g->vals[id].dtype = dt;
	g->vals[id].shape = s;
	g->inputs = arena_grow(g->arena, g->inputs, (size_t)g->ninputs,
			       (size_t)g->ninputs + 1, sizeof(ValId));
	g->inputs[g->ninputs++] = id;
	return id;
}

/* A weight of shape s holding data (NULL: zeros). */
static inline ValId tu_weight_data(Graph *g, const char *name, int dt,
				   Shape s, const void *data)
{
	const Tensor *t = tensor_new(g->arena, name, dt, &s, data);
	ValId id = graph_add_value(g, name, VAL_WEIGHT);
	g->vals[id].dtype = dt;
	g->vals[id].shape = s;
	g->vals[id].konst = t;
	return id;
}

static inline ValId tu_weight(Graph *g, const char *name, int dt, Shape s)
{
	return tu_weight_data(g, name, dt, s, NULL);
}

/* A 1-D int64 weight holding v[0..n). */
static inline ValId tu_weight_ints(Graph *g, const char *name,
				   const int64_t *v, int32_t n)
{
	int64_t d = n;
	return tu_weight_data(g, name, DT_INT64, shape_of(1, &d), v);
}

/* A node with inputs ins[0..nin) and nout fresh outputs "name:k". */
static inline Node *tu_node(Graph *g, const char *op_type, const char *name,
			    const ValId *ins, int32_t nin, int32_t nout)
{
	Node *n = graph_add_node(g, name, op_type, "", nin, nout);
	int32_t idx = (int32_t)(n - g->nodes);
	for (int32_t k = 0; k < nin; k++)
		n->inputs[k] = ins[k];
	for (int32_t k = 0; k < nout; k++) {
		char buf[256];
		snprintf(buf, sizeof(buf), "%s:%d", name, k);
		ValId v = graph_add_value(g, buf, VAL_NODE);
		g->vals[v].producer = idx;
		n = &g->nodes[idx];
		n->outputs[k] = v;
	}
	return n;
}

/* Output k of n; a node pointer stays valid until the next tu_node. */
static inline ValId tu_out(const Node *n, int32_t k) { return n->outputs[k]; }

/* Drops output k of n (an omitted optional output). */
static inline void tu_omit_out(Graph *g, Node *n, int32_t k)
{
	g->vals[n->outputs[k]].producer = -1;
	n->outputs[k] = -1;
}

static inline void tu_int(Graph *g, Node *n, const char *name, int64_t v)
{
	node_add_attr(g, n, name, ATTR_INT)->i = v;
}

static inline void tu_float(Graph *g, Node *n, const char *name, float v)
{
	node_add_attr(g, n, name, ATTR_FLOAT)->f = v;
}

static inline void tu_ints(Graph *g, Node *n, const char *name,
			   const int64_t *v, int32_t count)
{
	Attr *a = node_add_attr(g, n, name, ATTR_INTS);
	a->n = count;
	a->ints = arena_memdup(g->arena, v, (size_t)count * sizeof(int64_t));
}

static inline void tu_floats(Graph *g, Node *n, const char *name,
			     const float *v, int32_t count)
{
	Attr *a = node_add_attr(g, n, name, ATTR_FLOATS);
	a->n = count;
	a->floats = arena_memdup(g->arena, v, (size_t)count * sizeof(float));
}

/* A string attribute, stored NUL-terminated as the importer does. */
static inline void tu_str(Graph *g, Node *n, const char *name, const char *s)
{
	Attr *a = node_add_attr(g, n, name, ATTR_STRING);
	a->s.len = strlen(s);
	a->s.data = (const uint8_t *)arena_strdup(g->arena, s);
}

static inline void tu_tensor(Graph *g, Node *n, const char *name,
			     const Tensor *t)
{
	node_add_attr(g, n, name, ATTR_TENSOR)->t = t;
}

/* "[1,3,-1]" / "[?]" for value v's shape; a ring of buffers, so a few
 * calls may appear in one expression. */
static inline const char *tu_shape(const Graph *g, ValId v)
{
	static char bufs[8][160];
	static int next;
	char *b = bufs[next++ & 7];
	return shape_str(&g->vals[v].shape, b, sizeof(bufs[0]));
}

static inline int tu_dtype(const Graph *g, ValId v) { return g->vals[v].dtype; }

#endif
