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
 * no one reads any more.  The fused op computes the chain bit for bit
 * (compiler/ops/qfused.c) when q and z are the integer op's own X and X
 * zero point and s is of the same DynamicQuantizeLinear, the Cast is to
 * float, p is s * W_scale of W_scale's shape and y of the product's
 * (neither Mul broadcasts), W_scale and Bias per channel along the
 * output's channel axis (Conv: 1, MatMul: the last), and the Add of the
 * Bias keeps y's shape.
 */
#include <math.h>
#include <stdlib.h>

#include "compiler/ops/opimpl.h"
#include "passes.h"

typedef struct QFuse {
	Graph *g;
	int32_t *uses;	/* per value: node inputs, outer refs, graph outputs */
	int32_t *user;	/* per value: a node reading it */
	int32_t nvals;	/* values counted (a rewrite may add more) */
} QFuse;

static void use(QFuse *Q, ValId v, int32_t node)
{
	if (v < 0 || v >= Q->nvals)
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
	if (v < 0 || v >= Q->nvals || Q->uses[v] != 1 || Q->user[v] < 0)
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

static void qfuse_open(QFuse *Q, Graph *g)
{
	*Q = (QFuse){ .g = g, .nvals = g->nvals };
	Q->uses = xcalloc((size_t)g->nvals + 1, sizeof(int32_t));
	Q->user = xcalloc((size_t)g->nvals + 1, sizeof(int32_t));
	count(Q);
}

static void qfuse_close(QFuse *Q)
{
	free(Q->uses);
	free(Q->user);
}

void qfuse_graph(Graph *g)
{
	QFuse Q;
	qfuse_open(&Q, g);
	for (int32_t i = 0; i < g->nnodes; i++)
		fuse_chain(&Q, i);
	qfuse_close(&Q);
}

/* ---- static QDQ pairs into QLinearConv / QLinearMatMul -------------------
 *
 * onnxruntime's quantize_static (QDQ format) writes each Conv and MatMul
 * between DequantizeLinear and QuantizeLinear nodes:
 *   x = DequantizeLinear(x_q, sx, zx)       per tensor
 *   w = DequantizeLinear(W_q, sw, zw)       W_q constant; per tensor, or
 *                                           per output channel (Conv:
 *                                           axis 0; MatMul: column, axis 1)
 *   [b = DequantizeLinear(B_i32, sx*sw, 0)] or a float constant b
 *   u = Conv(x, w [, b]) or MatMul(x, w)
 *   [u = Relu(u)]                           when zy is its type's lowest
 *   y_q = QuantizeLinear(u, sy, zy)         per tensor
 * Such a group becomes QLinearConv(x_q, sx, zx, W_q, sw, zw, sy, zy
 * [, B_i32]) or QLinearMatMul(x_q, sx, zx, W_q, sw, zw, sy, zy) in the
 * slot of the QuantizeLinear, keeping its name and output; the Conv keeps
 * its attributes.  A float bias is quantized as ONNX Runtime's
 * BiasQuantization does, in float32: round_half_even(b / (sx * sw)).
 * The Relu goes because QuantizeLinear's saturation at zy (the lowest
 * value of its type) clamps what Relu would.  This is the rewrite ONNX
 * Runtime makes with graph optimizations on (its QDQ transformers): the
 * integer sum is requantized once, so an output may differ from the
 * float definition of the QDQ graph by one step of y_q.  Within that
 * step when: x per tensor and W per tensor or per output channel (the
 * DequantizeLinear's axis that one), (u)int8 with constant scales and
 * zero points, the scales finite and y's not 0 (QuantizeLinear refuses
 * those unfused), y per tensor; an int32 bias at scale sx * sw exactly
 * and zero point 0 (a float one rounded as ORT does); the Conv's or
 * MatMul's output (and the Relu's) read by the next node alone; the Relu
 * only with zy its type's lowest and sy > 0.  It runs before
 * specialise folds the weight's DequantizeLinear into float32; the
 * DequantizeLinear and Conv left without readers go with graph_dce().
 */

/* v is a constant of one element or, per > 0, of per elements in one
 * dimension (a 1-D tensor); dtype as given or, dt < 0, any. */
static bool const_of(const QFuse *Q, ValId v, int dt, int64_t per)
{
	const Tensor *t = v >= 0 ? Q->g->vals[v].konst : NULL;
	if (!t || (dt >= 0 && t->dtype != dt))
		return false;
	int64_t n = shape_numel(&t->shape);
	return n == 1 ? t->shape.rank <= 1 || per > 0
		      : per > 0 && t->shape.rank == 1 && n == per;
}

static bool is_q8_type(int dt)
{
	return dt == DT_INT8 || dt == DT_UINT8;
}

/* A new weight of g named after base holding t. */
static ValId new_const(Graph *g, const char *base, const Tensor *t)
{
	return graph_add_weight(g, graph_fresh_name(g, base), t);
}

/* A new constant 0 of type dt, one value: an omitted zero point. */
static ValId zero_const(Graph *g, int dt)
{
	Shape s = shape_of(0, NULL);
	Tensor *t = tensor_new(g->arena, NULL, dt, &s, NULL);
	return t ? new_const(g, "qdq_zero", t) : -1;
}

/* Every value of float constant v is finite (an integer product's
 * requantization has no NaN or infinity to give). */
static bool all_finite(const QFuse *Q, ValId v)
{
	const Tensor *t = Q->g->vals[v].konst;
	const float *f = t->data;
	for (int64_t i = 0; i < shape_numel(&t->shape); i++)
		if (!isfinite(f[i]))
			return false;
	return true;
}

/* The DequantizeLinear producing v if its scale is a float constant, its
 * zero point (when given) a constant and it has no block_size; else
 * NULL. */
static Node *dq_of(QFuse *Q, ValId v)
{
	Node *d = producer(Q, v, OP_DequantizeLinear);
	if (!d || d->ninputs < 2 || d->noutputs != 1 ||
	    attr_int(d, "block_size", 0) || !konst(Q, d->inputs[1], DT_FLOAT))
		return NULL;
	ValId z = d->ninputs > 2 ? d->inputs[2] : -1;
	if (z >= 0 && !Q->g->vals[z].konst)
		return NULL;
	return d;
}

static ValId dq_zero(const Node *d)
{
	return d->ninputs > 2 ? d->inputs[2] : -1;
}

/* The activation's DequantizeLinear: (u)int8 x_q, scale and zero point
 * one value each. */
static bool activation_dq(QFuse *Q, const Node *d)
{
	ValId z = dq_zero(d);
	int dt = z >= 0 ? Q->g->vals[z].konst->dtype : -1;
	return const_of(Q, d->inputs[1], DT_FLOAT, 0) &&
	       (z < 0 || (is_q8_type(dt) && const_of(Q, z, dt, 0)));
}

/* The weight's DequantizeLinear: constant (u)int8 W_q, scale and zero
 * point one value or one per channel (dimension axis of W_q, the
 * DequantizeLinear's own axis). */
static bool weight_dq(QFuse *Q, const Node *d, int32_t axis)
{
	const Tensor *w = Q->g->vals[d->inputs[0]].konst;
	if (!w || !is_q8_type(w->dtype) || axis >= w->shape.rank)
		return false;
	int64_t per = w->shape.dims[axis];
	int64_t at = attr_int(d, "axis", 1);
	bool one = const_of(Q, d->inputs[1], DT_FLOAT, 0);
	ValId z = dq_zero(d);
	if (!one && at != axis && at != axis - w->shape.rank)
		return false;
	return const_of(Q, d->inputs[1], DT_FLOAT, per) &&
	       (z < 0 || const_of(Q, z, w->dtype, one ? 0 : per));
}

/* b (a float constant, or the DequantizeLinear of an int32 constant at
 * scale sx * sw and zero point 0) as an int32 constant per output
 * channel; -1 if it is not one. */
static ValId int_bias(QFuse *Q, ValId b, ValId sx, ValId sw, int64_t cout)
{
	Graph *g = Q->g;
	const Tensor *tx = g->vals[sx].konst, *tw = g->vals[sw].konst;
	int64_t nw = shape_numel(&tw->shape);
	Node *d = producer(Q, b, OP_DequantizeLinear);
	ValId src = d ? d->inputs[0] : b;
	if (!const_of(Q, src, d ? DT_INT32 : DT_FLOAT, cout) ||
	    (d && (d->ninputs < 2 || attr_int(d, "block_size", 0) ||
		   !const_of(Q, d->inputs[1], DT_FLOAT, cout) ||
		   (dq_zero(d) >= 0 &&
		    !const_of(Q, dq_zero(d), DT_INT32, cout)))))
		return -1;
	const Tensor *t = g->vals[src].konst;
	int64_t nb = shape_numel(&t->shape);
	Shape s = shape_of(1, &cout);
	Tensor *q = tensor_new(g->arena, NULL, DT_INT32, &s, NULL);
	if (!q)
		return -1;
	int32_t *out = (int32_t *)(uintptr_t)q->data;
	for (int64_t c = 0; c < cout; c++) {
		float scale = ((const float *)tx->data)[0] *
			      ((const float *)tw->data)[nw == 1 ? 0 : c];
		if (d) { /* already int32: its scale must be sx * sw */
			const Tensor *ts = g->vals[d->inputs[1]].konst;
			int64_t ns = shape_numel(&ts->shape);
			ValId z = dq_zero(d);
			if (((const float *)ts->data)[ns == 1 ? 0 : c] != scale ||
			    (z >= 0 && tensor_get_i64(g->vals[z].konst, c %
					shape_numel(&g->vals[z].konst->shape))))
				return -1;
			out[c] = (int32_t)tensor_get_i64(t, nb == 1 ? 0 : c);
			continue;
		}
		float r = nearbyintf(((const float *)t->data)[nb == 1 ? 0 : c] /
				     scale);
		if (!(r >= -2147483648.0f && r < 2147483648.0f))
			return -1; /* also NaN: a zero scale */
		out[c] = (int32_t)r;
	}
	return new_const(g, "qdq_bias", q);
}

/* The zero point z of type dt, or a new 0 of it where z is omitted. */
static ValId zero_or(Graph *g, ValId z, int dt)
{
	return z >= 0 ? z : zero_const(g, dt);
}

/* The QDQ group ending in the QuantizeLinear at i, rewritten if it is
 * one. */
/* The node values of took[] (-1: none) as d's fused list: what it
 * computes inside.  This pass runs before specialise, whose graph_dce
 * drops the dead nodes; absorb_prune, in the fuse pass, then drops a
 * name still there (a DequantizeLinear another node reads too). */
static void name_taken(Graph *g, Node *d, const ValId *took, size_t n)
{
	d->fused = arena_array(g->arena, n, sizeof(char *));
	for (size_t k = 0; k < n; k++)
		if (took[k] >= 0 && g->vals[took[k]].kind == VAL_NODE)
			d->fused[d->nfused++] = g->vals[took[k]].name;
}

static void rewrite_qdq(QFuse *Q, int32_t i)
{
	Graph *g = Q->g;
	Node *q = &g->nodes[i];
	if (q->op != OP_QuantizeLinear || q->ninputs < 2 || q->noutputs != 1)
		return;
	ValId zy = q->ninputs > 2 ? q->inputs[2] : -1;
	int yd = zy >= 0 && g->vals[zy].konst
			 ? g->vals[zy].konst->dtype
			 : (int)attr_int(q, "output_dtype", DT_UINT8);
	if (!is_q8_type(yd) || !const_of(Q, q->inputs[1], DT_FLOAT, 0) ||
	    (zy >= 0 && !const_of(Q, zy, yd, 0)))
		return;
	/* a scale of 0 or not finite: QuantizeLinear refuses it unfused */
	float sy = ((const float *)g->vals[q->inputs[1]].konst->data)[0];
	if (!isfinite(sy) || sy == 0)
		return;
	ValId u = q->inputs[0];
	Node *relu = producer(Q, u, OP_Relu);
	if (relu) { /* saturation at zy = the type's lowest clamps as Relu,
		     * u <= 0 going to round(u / sy) + zy <= zy if sy > 0 */
		int64_t lo = yd == DT_INT8 ? -128 : 0;
		if (!only_reader(Q, u, OP_QuantizeLinear) || !(sy > 0) ||
		    (zy >= 0 ? tensor_get_i64(g->vals[zy].konst, 0) : 0) != lo)
			return;
		u = relu->inputs[0];
	}
	Node *op = producer(Q, u, OP_Conv);
	op = op ? op : producer(Q, u, OP_MatMul);
	if (!op || op->ninputs < 2 || op->noutputs != 1 ||
	    !only_reader(Q, u, relu ? OP_Relu : OP_QuantizeLinear))
		return;
	bool conv = op->op == OP_Conv;
	Node *dx = dq_of(Q, op->inputs[0]), *dw = dq_of(Q, op->inputs[1]);
	if (!dx || !dw || !activation_dq(Q, dx) ||
	    !weight_dq(Q, dw, conv ? 0 : 1) || !all_finite(Q, dx->inputs[1]) ||
	    !all_finite(Q, dw->inputs[1]))
		return;
	const Tensor *w = g->vals[dw->inputs[0]].konst;
	int xd = dq_zero(dx) >= 0 ? g->vals[dq_zero(dx)].konst->dtype
				  : g->vals[dx->inputs[0]].dtype;
	if ((conv ? w->shape.rank < 3 : w->shape.rank != 2) ||
	    !is_q8_type(xd))
		return;
	int64_t cout = w->shape.dims[conv ? 0 : 1];
	ValId bias = conv && op->ninputs > 2 ? op->inputs[2] : -1;
	ValId took[] = { op->inputs[0], op->inputs[1], bias, op->outputs[0],
			 relu ? relu->outputs[0] : -1 };
	if (bias >= 0 &&
	    (bias = int_bias(Q, bias, dx->inputs[1], dw->inputs[1], cout)) < 0)
		return;
	Node d = { 0 };
	node_init(g, &d, q->name, conv ? "QLinearConv" : "QLinearMatMul", "",
		  bias >= 0 ? 9 : 8, 1);
	d.op = conv ? OP_QLinearConv : OP_QLinearMatMul;
	d.label = q->label;
	ValId in[9] = { dx->inputs[0], dx->inputs[1],
			zero_or(g, dq_zero(dx), xd), dw->inputs[0],
			dw->inputs[1], zero_or(g, dq_zero(dw), w->dtype),
			q->inputs[1], zero_or(g, zy, yd), bias };
	for (int32_t k = 0; k < d.ninputs; k++)
		if ((d.inputs[k] = in[k]) < 0)
			return; /* a zero point not made: left as it is */
	d.outputs[0] = q->outputs[0];
	name_taken(g, &d, took, ARRAY_SIZE(took));
	if (conv && op->nattrs) {
		d.nattrs = op->nattrs;
		d.attrs = arena_memdup(g->arena, op->attrs,
				       (size_t)op->nattrs * sizeof(Attr));
	}
	g->nodes[i] = d;
}

static int qdq_one(Graph *g, void *ctx)
{
	(void)ctx;
	QFuse Q;
	if (graph_toposort(g) < 0) /* nodes in order, producers known */
		return -1;
	qfuse_open(&Q, g);
	for (int32_t i = 0; i < g->nnodes; i++)
		rewrite_qdq(&Q, i);
	qfuse_close(&Q);
	return 0;
}

static int find_quantize(Graph *g, void *ctx)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		*(bool *)ctx |= g->nodes[i].op == OP_QuantizeLinear;
	return 0;
}

bool qdq_applies(const Model *m, const PassOptions *o)
{
	bool found = false;
	if (!o->no_fuse)
		graph_walk(m->graph, find_quantize, &found);
	return found;
}

int pass_qdq(Model *m, const PassOptions *o)
{
	return o->no_fuse ? 0 : graph_walk(m->graph, qdq_one, NULL);
}
