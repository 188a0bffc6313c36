/*
 * passes/qfuse.c - dynamic int8 chains into one op, for the fuse pass
 * (passes/fuse.c calls qfuse_graph first on each graph it fuses).
 *
 * onnxruntime's quantize_dynamic writes each MatMul and Conv as
 *   (q, s, z) = DynamicQuantizeLinear(X)
 *   i = MatMulInteger(q, W, z [, W_zero_point])  (or ConvInteger)
 *   f = Cast(i, to = float)
 *   p = Mul(s, W_scale)                          (either order)
 *   y = Mul(f, p)                                (either order)
 *   [y = Add(y, Bias)]                           (either order)
 * W, W_zero_point, W_scale and Bias constants, W_scale and Bias one value
 * or one per output channel (compiler/ops/qfused.c's rule).  Such a
 * chain becomes DynQuantMatMul / DynQuantConv (X, W, W_zero_point,
 * W_scale, Bias) in the slot of its last node, keeping that node's name
 * and output; the integer op keeps its attributes.  i and f must be read
 * by the next step alone; q, s, z and p may have other readers (one
 * DynamicQuantizeLinear often feeds several products: attention's Q, K
 * and V): the fused op quantizes X itself, and graph_dce() drops what
 * no one reads any more.
 */
#include <stdlib.h>

#include "compiler/ops/opimpl.h"
#include "passes.h"

typedef struct QFuse {
	Graph *g;
	int32_t *uses;	/* per value: node inputs, outer refs, graph outputs */
	int32_t *user;	/* per value: a node reading it */
} QFuse;

static void use(QFuse *Q, ValId v, int32_t node)
{
	if (v < 0 || v >= Q->g->nvals)
		return;
	Q->uses[v]++;
	Q->user[v] = node;
}

static void use_outer(QFuse *Q, const Graph *sub, int32_t node)
{
	for (ValId i = 0; i < sub->nvals; i++)
		if (sub->vals[i].kind == VAL_OUTER)
			use(Q, sub->vals[i].outer, node);
}

static void count(QFuse *Q)
{
	Graph *g = Q->g;
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		for (int32_t k = 0; k < n->ninputs; k++)
			use(Q, n->inputs[k], i);
		for (int32_t k = 0; k < n->nattrs; k++) {
			const Attr *a = &n->attrs[k];
			if (a->type == ATTR_GRAPH && a->g)
				use_outer(Q, a->g, i);
			for (int32_t j = 0; a->type == ATTR_GRAPHS && j < a->n;
			     j++)
				use_outer(Q, a->graphs[j], i);
		}
	}
	for (int32_t k = 0; k < g->noutputs; k++)
		use(Q, g->outputs[k], -1);
}

/* The node reading v, if it is v's only reader and has op op. */
static Node *only_reader(QFuse *Q, ValId v, int op)
{
	if (v < 0 || Q->uses[v] != 1 || Q->user[v] < 0)
		return NULL;
	Node *n = &Q->g->nodes[Q->user[v]];
	return n->op == op ? n : NULL;
}

/* The producer of v if it has op op. */
static Node *producer(QFuse *Q, ValId v, int op)
{
	int32_t p = v >= 0 ? Q->g->vals[v].producer : -1;
	Node *n = p >= 0 ? &Q->g->nodes[p] : NULL;
	return n && n->op == op ? n : NULL;
}

/* Binary node n reads x and another value (returned), else -1. */
static ValId other(const Node *n, ValId x)
{
	if (!n || n->ninputs != 2 || n->noutputs != 1)
		return -1;
	return n->inputs[0] == x   ? n->inputs[1]
	       : n->inputs[1] == x ? n->inputs[0]
				   : -1;
}

static bool konst(const QFuse *Q, ValId v, int dtype)
{
	const Value *x = v >= 0 ? &Q->g->vals[v] : NULL;
	return x && x->konst && x->konst->dtype == dtype;
}

/* v is a float constant of one value or one per channel of y. */
static bool per_channel(const QFuse *Q, ValId v, const Value *y, int32_t ax)
{
	return konst(Q, v, DT_FLOAT) &&
	       dynquant_per_channel(&Q->g->vals[v].konst->shape, y->shape.rank,
				    ax, y->shape.dims[ax]);
}

/* The chain from integer product node at i, fused if it is one. */
static void fuse_chain(QFuse *Q, int32_t i)
{
	Graph *g = Q->g;
	Node *mm = &g->nodes[i];
	bool conv = mm->op == OP_ConvInteger;
	if ((!conv && mm->op != OP_MatMulInteger) || mm->ninputs < 3 ||
	    mm->noutputs != 1)
		return;
	Node *dq = producer(Q, mm->inputs[0], OP_DynamicQuantizeLinear);
	ValId wz = mm->ninputs > 3 ? mm->inputs[3] : -1;
	const Value *w = &g->vals[mm->inputs[1]];
	if (!dq || dq->noutputs != 3 || dq->outputs[0] != mm->inputs[0] ||
	    dq->outputs[2] != mm->inputs[2] || dq->outputs[2] < 0 ||
	    dq->outputs[1] < 0 ||
	    !w->konst || (wz >= 0 && !g->vals[wz].konst))
		return;
	Node *cast = only_reader(Q, mm->outputs[0], OP_Cast);
	if (!cast || attr_int(cast, "to", 0) != DT_FLOAT)
		return;
	Node *mul = only_reader(Q, cast->outputs[0], OP_Mul);
	ValId p = other(mul, cast->outputs[0]);
	Node *pm = producer(Q, p, OP_Mul);
	ValId ws = other(pm, dq->outputs[1]);
	const Value *y = mul ? &g->vals[mul->outputs[0]] : NULL;
	if (ws < 0 || y->dtype != DT_FLOAT || !shape_is_static(&y->shape) ||
	    !shape_equal(&y->shape, &g->vals[mm->outputs[0]].shape) ||
	    y->shape.rank < (conv ? 3 : 1))
		return;
	int32_t ax = conv ? 1 : y->shape.rank - 1;
	if (!per_channel(Q, ws, y, ax) ||
	    !shape_equal(&g->vals[ws].konst->shape, &g->vals[p].shape))
		return;
	Node *last = mul;
	Node *add = only_reader(Q, mul->outputs[0], OP_Add);
	ValId bias = other(add, mul->outputs[0]);
	if (bias >= 0 && per_channel(Q, bias, y, ax) &&
	    shape_equal(&g->vals[add->outputs[0]].shape, &y->shape))
		last = add;
	else
		bias = -1;
	Node d = { 0 };
	node_init(g, &d, last->name, conv ? "DynQuantConv" : "DynQuantMatMul",
		  GEARC_DOMAIN, bias >= 0 ? 5 : 4, 1);
	d.op = conv ? OP_DynQuantConv : OP_DynQuantMatMul;
	d.label = last->label;
	d.inputs[0] = dq->inputs[0];
	d.inputs[1] = mm->inputs[1];
	d.inputs[2] = wz;
	d.inputs[3] = ws;
	if (bias >= 0)
		d.inputs[4] = bias;
	d.outputs[0] = last->outputs[0];
	d.nattrs = mm->nattrs;
	d.attrs = mm->nattrs ? arena_memdup(g->arena, mm->attrs,
					    (size_t)mm->nattrs * sizeof(Attr))
			     : NULL;
	/* the chain's values now have no reader but the dead nodes */
	Q->uses[mm->outputs[0]] = Q->uses[cast->outputs[0]] = 0;
	int32_t at = (int32_t)(last - g->nodes);
	g->nodes[at] = d;
	g->vals[d.outputs[0]].producer = at;
}

void qfuse_graph(Graph *g)
{
	QFuse Q = { .g = g };
	Q.uses = xcalloc((size_t)g->nvals + 1, sizeof(int32_t));
	Q.user = xcalloc((size_t)g->nvals + 1, sizeof(int32_t));
	count(&Q);
	for (int32_t i = 0; i < g->nnodes; i++)
		fuse_chain(&Q, i);
	free(Q.uses);
	free(Q.user);
}
