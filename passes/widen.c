/*
 * passes/widen.c - float16 graphs computed in float32.
 *
 * A CPU without float16 arithmetic (every one gearrt runs on today)
 * computes a float16 graph by converting around each op; ONNX Runtime's
 * CPU provider inserts such casts.  gearc instead widens the graph once,
 * before anything is cloned per gear:
 *   - every float16 weight (and Constant/ConstantOfShape value) becomes
 *     a float32 tensor holding exactly the same numbers, made once and
 *     shared by every gear, so the .om stores it once;
 *   - every float16 value inside the model becomes float32, and the
 *     attributes that name float16 as an op's output type (Cast's to,
 *     the dtype of EyeLike and the random ops) name float32;
 *   - the model's float16 inputs and outputs stay float16: a Cast after
 *     each such input and before each such output converts at the edge.
 * A Cast pair the widening makes redundant (float32 -> float16 -> float32
 * now reads float32 -> float32 -> float32) is a Cast to its own input's
 * dtype, which the fuse pass turns into an Identity, a view.
 *
 * The numbers: the ops compute in float32 where a strict float16
 * evaluation rounds every intermediate result to float16, so results
 * may be more precise than that evaluation's (man gearc, "Float16
 * models").
 *
 * --keep-fp16 keeps the float16 evaluation's numbers on the same fast
 * float32 kernels: the graph is widened the same way, the values the
 * source computes in float16 are noted by name (half_values: a float16
 * input, weight or Cast, and what ops make from them), and once the
 * gears are fused (pass keep-fp16, keep_fp16_round) every such float32
 * value a node makes is rounded to float16 there, by a Cast to float16
 * and one back: each op reads float16 numbers and its result is rounded
 * to float16, as ONNX Runtime's CPU provider converts around each
 * float16 op (a value fused into its consumer is not rounded).
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

static bool is_half(int32_t dt)
{
	return dt == DT_FLOAT16;
}

/* The attributes that name an output dtype. */
static bool is_dtype_attr(const Attr *a)
{
	return a->type == ATTR_INT &&
	       (!strcmp(a->name, "to") || !strcmp(a->name, "dtype"));
}

/* A float32 copy of a float16 tensor, exact. */
static const Tensor *widen_tensor(Arena *a, const Tensor *t)
{
	if (!t || !is_half(t->dtype))
		return t;
	Tensor *w = tensor_new(a, t->name, DT_FLOAT, &t->shape, NULL);
	if (!w)
		return NULL;
	const uint16_t *src = t->data;
	float *dst = (float *)(uintptr_t)w->data;
	int64_t n = shape_numel(&t->shape);
	half_to_float_n(src, dst, (size_t)n);
	w->folded = t->folded;
	w->from_half = true; /* the .om stores it so (Weight.stored_dtype) */
	return w;
}

/* ---- finding float16 ------------------------------------------------------ */

static int find_half(Graph *g, void *ctx)
{
	bool *found = ctx;
	for (ValId v = 0; v < g->nvals && !*found; v++)
		*found = is_half(g->vals[v].dtype) ||
			 (g->vals[v].konst && is_half(g->vals[v].konst->dtype));
	for (int32_t i = 0; i < g->nnodes && !*found; i++)
		for (int32_t k = 0; k < g->nodes[i].nattrs && !*found; k++) {
			const Attr *a = &g->nodes[i].attrs[k];
			*found = (is_dtype_attr(a) && a->i == DT_FLOAT16) ||
				 (a->type == ATTR_TENSOR && a->t &&
				  is_half(a->t->dtype));
		}
	return 0;
}

/* ---- widening inside the model -------------------------------------------- */

typedef struct Widen {
	Model *m;
	uint8_t *edge; /* per value of the main graph: a float16 input/output */
} Widen;

static int widen_attr(Arena *a, Attr *at)
{
	if (is_dtype_attr(at) && at->i == DT_FLOAT16)
		at->i = DT_FLOAT;
	if (at->type == ATTR_TENSOR && at->t &&
	    !(at->t = widen_tensor(a, at->t)))
		return -1;
	for (int32_t j = 0; at->type == ATTR_TENSORS && j < at->n; j++)
		if (!(at->tensors[j] = widen_tensor(a, at->tensors[j])))
			return -1;
	return 0;
}

static int widen_graph(Graph *g, void *ctx)
{
	Widen *W = ctx;
	Arena *a = &W->m->arena;
	for (ValId v = 0; v < g->nvals; v++) {
		Value *val = &g->vals[v];
		if (g == W->m->graph && W->edge[v])
			continue;
		if (is_half(val->dtype))
			val->dtype = DT_FLOAT;
		if (val->konst && !(val->konst = widen_tensor(a, val->konst)))
			return -1;
	}
	for (int32_t i = 0; i < g->nnodes; i++)
		for (int32_t k = 0; k < g->nodes[i].nattrs; k++)
			if (widen_attr(a, &g->nodes[i].attrs[k]) < 0)
				return -1;
	return 0;
}

/* ---- the edges ------------------------------------------------------------ */

/* Every reference to from in g's nodes (inputs, and outputs when outs)
 * and in its subgraphs' outer references becomes to. */
static void redirect(Graph *g, ValId from, ValId to, bool outs)
{
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		for (int32_t k = 0; k < n->ninputs; k++)
			if (n->inputs[k] == from)
				n->inputs[k] = to;
		for (int32_t k = 0; outs && k < n->noutputs; k++)
			if (n->outputs[k] == from)
				n->outputs[k] = to;
		for (int32_t k = 0; k < n->nattrs; k++) {
			Attr *at = &n->attrs[k];
			int32_t ng = at->type == ATTR_GRAPH ? 1
				     : at->type == ATTR_GRAPHS ? at->n : 0;
			for (int32_t j = 0; j < ng; j++) {
				Graph *s = at->type == ATTR_GRAPH ? at->g
								  : at->graphs[j];
				for (ValId v = 0; s && v < s->nvals; v++)
					if (s->vals[v].kind == VAL_OUTER &&
					    s->vals[v].outer == from)
						s->vals[v].outer = to;
			}
		}
	}
}

/* A float32 twin of main-graph value v, named after it. */
static ValId add_twin(Graph *g, ValId v, const char *suffix)
{
	const char *name = arena_printf(g->arena, "%s_%s", g->vals[v].name,
					suffix);
	ValId t = graph_add_value(g, graph_fresh_name(g, name), VAL_NODE);
	value_copy_type(&g->vals[t], &g->vals[v]);
	g->vals[t].dtype = DT_FLOAT;
	return t;
}

static void add_cast(Graph *g, ValId in, ValId out, int32_t to)
{
	const char *name = arena_printf(g->arena, "%s_cast", g->vals[out].name);
	Node *n = graph_add_node(g, name, "Cast", "", 1, 1);
	n->inputs[0] = in;
	n->outputs[0] = out;
	node_add_attr(g, n, "to", ATTR_INT)->i = to;
}

/* Input v stays float16; its users read a float32 copy. */
static void widen_input(Graph *g, ValId v)
{
	ValId t = add_twin(g, v, "fp32");
	redirect(g, v, t, false);
	add_cast(g, v, t, DT_FLOAT);
}

/* Output v stays float16, made by a Cast from the float32 value that
 * takes v's place (its producer, its users, its contents if a weight). */
static int widen_output(Model *m, Graph *g, ValId v)
{
	ValId t = add_twin(g, v, "fp32");
	Value *src = &g->vals[v], *dst = &g->vals[t];
	dst->kind = src->kind;
	dst->konst = widen_tensor(&m->arena, src->konst);
	if (src->konst && !dst->konst)
		return -1;
	redirect(g, v, t, true);
	src->kind = VAL_NODE;
	src->konst = NULL;
	add_cast(g, t, v, DT_FLOAT16);
	return 0;
}

static bool main_edge(const Graph *g, ValId v)
{
	return v >= 0 && is_half(g->vals[v].dtype);
}

bool widen_applies(const Model *m, const PassOptions *o)
{
	(void)o;
	bool found = false;
	graph_walk(m->graph, find_half, &found);
	return found;
}

/* --keep-fp16: the names of main-graph values the source computes in
 * float16, before widening: float16 inputs and weights, a Cast's output
 * to float16, and every output of a node (but a Cast) reading one.
 * Nodes are in the source's (topological) order.  Integer outputs get
 * in too (a Shape of a float16 value); keep_fp16_round rounds only
 * float values. */
static NameMap *half_values(Model *m)
{
	Graph *g = m->graph;
	uint8_t *h = xcalloc((size_t)g->nvals + 1, 1);
	for (ValId v = 0; v < g->nvals; v++)
		h[v] = is_half(g->vals[v].dtype) ||
		       (g->vals[v].konst && is_half(g->vals[v].konst->dtype));
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		bool any = false;
		if (n->op == OP_Cast)
			any = attr_int(n, "to", 0) == DT_FLOAT16;
		else
			for (int32_t k = 0; k < n->ninputs && !any; k++)
				any = n->inputs[k] >= 0 && h[n->inputs[k]];
		for (int32_t k = 0; k < n->noutputs; k++)
			if (n->outputs[k] >= 0)
				h[n->outputs[k]] |= any;
	}
	NameMap *names = arena_alloc(&m->arena, sizeof(*names));
	namemap_init(names);
	for (ValId v = 0; v < g->nvals; v++)
		if (h[v])
			namemap_put(names, g->vals[v].name, 1);
	free(h);
	return names;
}

/* An output of g (rounded by its own Cast to float16, if it is one). */
static bool is_output(const Graph *g, ValId v)
{
	for (int32_t k = 0; k < g->noutputs; k++)
		if (g->outputs[k] == v)
			return true;
	return false;
}

int keep_fp16_round(Model *m, Graph *g, const PassOptions *o)
{
	(void)o;
	if (!m->half_values)
		return 0;
	int32_t nvals = g->nvals, rounded = 0;
	for (ValId v = 0; v < nvals; v++) {
		const Value *x = &g->vals[v];
		if (x->dtype != DT_FLOAT || x->tkind != TK_TENSOR ||
		    x->producer < 0 || is_output(g, v) ||
		    g->nodes[x->producer].op == OP_Cast ||
		    namemap_get(m->half_values, x->name) < 0)
			continue;
		/* producer -> made (float32) -> half -> v: v keeps its users */
		ValId made = add_twin(g, v, "f32");
		ValId half = add_twin(g, v, "f16");
		g->vals[half].dtype = DT_FLOAT16;
		Node *p = &g->nodes[g->vals[v].producer];
		for (int32_t k = 0; k < p->noutputs; k++)
			if (p->outputs[k] == v)
				p->outputs[k] = made;
		add_cast(g, made, half, DT_FLOAT16);
		add_cast(g, half, v, DT_FLOAT);
		rounded++;
	}
	return rounded ? graph_toposort(g) : 0;
}

int pass_widen_fp16(Model *m, const PassOptions *o)
{
	Graph *g = m->graph;
	if (!widen_applies(m, o))
		return 0;
	for (int32_t k = 0; k < g->ninputs + g->noutputs; k++) {
		ValId v = k < g->ninputs ? g->inputs[k] : g->outputs[k - g->ninputs];
		if (main_edge(g, v) && g->vals[v].tkind != TK_TENSOR)
			return error("%s: '%s' is a float16 %s: gearc widens "
				     "float16 graphs to float32 at their edges, "
				     "which needs a tensor there; compile with "
				     "--keep-fp16", m->path, g->vals[v].name,
				     g->vals[v].tkind == TK_SEQUENCE ? "sequence"
								     : "optional");
	}
	if (o->keep_fp16)
		m->half_values = half_values(m);
	Widen W = { m, xcalloc((size_t)g->nvals + 1, 1) };
	for (int32_t k = 0; k < g->ninputs; k++)
		if (main_edge(g, g->inputs[k]))
			W.edge[g->inputs[k]] = 1;
	for (int32_t k = 0; k < g->noutputs; k++)
		if (main_edge(g, g->outputs[k]))
			W.edge[g->outputs[k]] = 1;
	int32_t nvals = g->nvals;
	int rc = graph_walk(g, widen_graph, &W);
	for (int32_t k = 0; rc == 0 && k < g->ninputs; k++)
		if (W.edge[g->inputs[k]])
			widen_input(g, g->inputs[k]);
	for (int32_t k = 0; rc == 0 && k < g->noutputs; k++) {
		ValId v = g->outputs[k];
		if (v < nvals && W.edge[v] && g->vals[v].kind != VAL_INPUT)
			rc = widen_output(m, g, v);
		if (v < nvals)
			W.edge[v] = 0; /* an output listed twice: once */
	}
	free(W.edge);
	return rc < 0 ? -1 : graph_toposort(g);
}
