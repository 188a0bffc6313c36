/*
 * passes/unfuse.c - gearc's fused ops back as standard ONNX, for gearc
 * export (passes/flatten.c): FusedConv -> Conv [+ Add Z] + activations,
 * FusedGemm -> Gemm + activations, FusedMatMul -> MatMul [+ Add Bias] +
 * activations.  Activations become their ONNX ops: Clip's bounds as
 * inputs from opset 11 (attributes before), HardSwish as its op from
 * opset 14 and written out as x * HardSigmoid(x; 1/6, 1/2) before, Gelu
 * written out as x * (1 + Erf(x / sqrt(2))) * 0.5, Linear as Mul (and
 * Add).  LayerNormalization, which fuse.c makes of the written-out form in
 * a model of any opset, is written out again before opset 17.
 */
#include <math.h>
#include <string.h>

#include "flatten.h"

/* A new node of dst with one output: a fresh value like out's, or out
 * itself when last. */
static Node *emit(Graph *dst, const char *name, const char *op, int32_t nin,
		  ValId like, ValId *res, bool last, ValId out)
{
	ValId v = out;
	if (!last) {
		const char *base = arena_printf(dst->arena, "%s_%s",
						dst->vals[out].name, op);
		v = graph_add_value(dst, graph_fresh_name(dst, base), VAL_NODE);
		Value *w = &dst->vals[v];
		w->dtype = dst->vals[like].dtype;
		w->shape = dst->vals[out].shape;
	}
	Node *n = graph_add_node(dst, name, op, "", nin, 1);
	n->op = op_lookup("", op);
	n->outputs[0] = v;
	dst->vals[v].producer = dst->nnodes - 1;
	*res = v;
	return n;
}

static ValId scalar_weight(Graph *dst, const char *base, float x)
{
	Shape s = shape_of(0, NULL);
	const char *name = graph_fresh_name(dst, base);
	Tensor *t = tensor_new(dst->arena, name, DT_FLOAT, &s, &x);
	ValId id = graph_add_value(dst, name, VAL_WEIGHT);
	Value *v = &dst->vals[id];
	v->dtype = DT_FLOAT;
	v->shape = s;
	v->konst = t;
	v->producer = -1;
	return id;
}

static void float_attr(Graph *g, Node *n, const char *name, float f)
{
	node_add_attr(g, n, name, ATTR_FLOAT)->f = f;
}

/* A binary node named name+suffix of a and a scalar constant k (or of
 * a and b if b >= 0); its output in *res. */
static void emit_binary(Graph *dst, const char *name, const char *suffix,
			const char *op, ValId a, ValId b, float k, ValId *res,
			bool last, ValId out)
{
	if (b < 0)
		b = scalar_weight(dst, arena_printf(dst->arena, "%s_%s",
						    dst->vals[out].name,
						    suffix),
				  k);
	Node *n = emit(dst, arena_printf(dst->arena, "%s%s", name, suffix),
		       op, 2, a, res, last, out);
	n->inputs[0] = a;
	n->inputs[1] = b;
}

/* Gelu written out as torch.onnx does: x * (1 + Erf(x / sqrt(2))) * 0.5
 * (ONNX has a Gelu op only from opset 20). */
static void emit_gelu(Graph *dst, const char *name, ValId x, ValId *res,
		      bool last, ValId out)
{
	ValId d, e, a, p;
	emit_binary(dst, name, "_div", "Div", x, -1, (float)M_SQRT2, &d, false,
		    out);
	Node *n = emit(dst, arena_printf(dst->arena, "%s_erf", name), "Erf",
		       1, x, &e, false, out);
	n->inputs[0] = d;
	emit_binary(dst, name, "_add", "Add", e, -1, 1.0f, &a, false, out);
	emit_binary(dst, name, "_mul", "Mul", x, a, 0, &p, false, out);
	emit_binary(dst, name, "", "Mul", p, -1, 0.5f, res, last, out);
}

/* Appends activation (act, alpha, beta) of x; the result in *res. */
static int emit_act(Graph *dst, const char *name, int64_t opset,
		    const char *act, float alpha, float beta, ValId x,
		    ValId *res, bool last, ValId out)
{
	Node *n;
	if (!strcmp(act, "Gelu")) {
		emit_gelu(dst, name, x, res, last, out);
		return 0;
	}
	if (!strcmp(act, "Linear")) { /* Mul by alpha, Add beta if not 0 */
		ValId m;
		emit_binary(dst, name, beta != 0 ? "_mul" : "", "Mul", x, -1,
			    alpha, &m, last && beta == 0, out);
		if (beta != 0)
			emit_binary(dst, name, "", "Add", m, -1, beta, res,
				    last, out);
		else
			*res = m;
		return 0;
	}
	if (!strcmp(act, "HardSwish") && opset < 14) {
		ValId h;
		n = emit(dst, name, "HardSigmoid", 1, x, &h, false, out);
		n->inputs[0] = x;
		float_attr(dst, n, "alpha", 1.0f / 6);
		float_attr(dst, n, "beta", 0.5f);
		n = emit(dst, arena_printf(dst->arena, "%s_mul", name), "Mul",
			 2, x, res, last, out);
		n->inputs[0] = x;
		n->inputs[1] = h;
		return 0;
	}
	bool clip_in = !strcmp(act, "Clip") && opset >= 11;
	n = emit(dst, name, act, clip_in ? 3 : 1, x, res, last, out);
	if (!n->op)
		return error("node '%s': activation '%s' is not an ONNX op",
			     name, act);
	n->inputs[0] = x;
	if (!strcmp(act, "LeakyRelu"))
		float_attr(dst, n, "alpha", alpha);
	if (!strcmp(act, "HardSigmoid")) {
		float_attr(dst, n, "alpha", alpha);
		float_attr(dst, n, "beta", beta);
	}
	if (!strcmp(act, "Clip") && !clip_in) {
		float_attr(dst, n, "min", alpha);
		float_attr(dst, n, "max", beta);
	}
	if (clip_in) {
		const char *base = dst->vals[out].name;
		n->inputs[1] = scalar_weight(
			dst, arena_printf(dst->arena, "%s_min", base), alpha);
		n->inputs[2] = scalar_weight(
			dst, arena_printf(dst->arena, "%s_max", base), beta);
		/* scalar_weight may move vals, not nodes */
	}
	return 0;
}

bool unfuse_is_fused(const Node *n, int64_t opset)
{
	return n->op == OP_FusedConv || n->op == OP_FusedGemm ||
	       n->op == OP_FusedMatMul ||
	       (n->op == OP_LayerNormalization && opset < 17);
}

/* ReduceMean of x over its last axis, dims kept (axes an attribute: the
 * opsets before 17 that need this). */
static ValId emit_mean_last(Graph *dst, const char *name, ValId x, ValId out)
{
	ValId r;
	Node *n = emit(dst, name, "ReduceMean", 1, x, &r, false, out);
	n->inputs[0] = x;
	int64_t ax = -1;
	node_add_ints(dst, n, "axes", &ax, 1);
	Shape *s = &dst->vals[r].shape;
	s->dims[s->rank - 1] = 1;
	return r;
}

/* LayerNormalization over the last axis (fuse.c makes no other) written
 * out for an opset without the op, as Paddle2ONNX and torch.onnx write
 * it: d = x - ReduceMean(x); d / Sqrt(ReduceMean(d * d) + eps) * Scale
 * [+ B]. */
static int emit_layernorm(Graph *dst, const Node *n, const ValId *ins,
			  ValId out)
{
	int32_t rank = dst->vals[ins[0]].shape.rank;
	int64_t axis = attr_int(n, "axis", -1);
	if (axis != -1 && axis != rank - 1)
		return error("node '%s': LayerNormalization over axis %lld "
			     "has no form before opset 17", n->name,
			     (long long)axis);
	const char *nm = n->name;
	bool bias = n->ninputs > 2 && ins[2] >= 0;
	ValId x = ins[0], m, d, q, v, e, r, y, g;
	m = emit_mean_last(dst, arena_printf(dst->arena, "%s_mean", nm), x,
			   out);
	emit_binary(dst, nm, "_sub", "Sub", x, m, 0, &d, false, out);
	emit_binary(dst, nm, "_sq", "Mul", d, d, 0, &q, false, out);
	v = emit_mean_last(dst, arena_printf(dst->arena, "%s_var", nm), q,
			   out);
	emit_binary(dst, nm, "_eps", "Add", v, -1,
		    attr_float(n, "epsilon", 1e-5f), &e, false, out);
	dst->vals[e].shape = dst->vals[v].shape;
	Node *sq = emit(dst, arena_printf(dst->arena, "%s_sqrt", nm), "Sqrt",
			1, e, &r, false, out);
	sq->inputs[0] = e;
	dst->vals[r].shape = dst->vals[v].shape;
	emit_binary(dst, nm, "_div", "Div", d, r, 0, &y, false, out);
	emit_binary(dst, nm, bias ? "_scale" : "", "Mul", y, ins[1], 0, &g,
		    !bias, out);
	if (bias)
		emit_binary(dst, nm, "", "Add", g, ins[2], 0, &y, true, out);
	return 0;
}

int unfuse_node(Graph *dst, const Node *n, int64_t opset, const ValId *ins,
		ValId out)
{
	if (n->op == OP_LayerNormalization)
		return emit_layernorm(dst, n, ins, out);
	const Attr *as = node_attr(n, FUSED_ACTS_ATTR);
	const Attr *ps = node_attr(n, FUSED_ACT_PARAMS_ATTR);
	int32_t nacts = as ? as->n : 0;
	if (nacts && (!ps || ps->n != 2 * nacts))
		return error("node '%s' (%s): activation_params does not "
			     "match activations", n->name, n->op_type);
	const char *base = n->op == OP_FusedConv   ? "Conv"
			   : n->op == OP_FusedGemm ? "Gemm"
						   : "MatMul";
	int32_t nbase = n->op == OP_FusedMatMul ? 2 : 3;
	ValId extra = n->op == OP_FusedConv ? (n->ninputs > 3 ? ins[3] : -1)
		      : n->op == OP_FusedMatMul ? (n->ninputs > 2 ? ins[2] : -1)
						: -1;
	bool more = extra >= 0 || nacts;
	ValId cur;
	Node *d = emit(dst, n->name, base, nbase, ins[0], &cur, !more, out);
	for (int32_t k = 0; k < nbase; k++)
		d->inputs[k] = k < n->ninputs ? ins[k] : -1;
	for (int32_t k = 0; k < n->nattrs; k++) {
		const Attr *a = &n->attrs[k];
		if (strcmp(a->name, FUSED_ACTS_ATTR) &&
		    strcmp(a->name, FUSED_ACT_PARAMS_ATTR))
			*node_add_attr(dst, d, a->name, a->type) = *a;
	}
	if (extra >= 0) {
		ValId x = cur;
		d = emit(dst, arena_printf(dst->arena, "%s_add", n->name),
			 "Add", 2, x, &cur, !nacts, out);
		d->inputs[0] = x;
		d->inputs[1] = extra;
	}
	for (int32_t i = 0; i < nacts; i++) {
		const Bytes *s = &as->strings[i];
		const char *act = arena_strndup(dst->arena,
						(const char *)s->data, s->len);
		const char *name = arena_printf(dst->arena, "%s_%s", n->name,
						act);
		if (emit_act(dst, name, opset, act, ps->floats[2 * i],
			     ps->floats[2 * i + 1], cur, &cur, i == nacts - 1,
			     out) < 0)
			return -1;
	}
	return 0;
}
