/*
 * passes/unfuse.c - gearc's fused ops back as standard ONNX, for gearc
 * export (passes/flatten.c): FusedConv -> Conv [+ Add Z] + activations,
 * FusedGemm -> Gemm + activations, FusedMatMul -> MatMul [+ Add Bias] +
 * activations, FusedActivation -> the activations, DynQuantMatMul /
 * DynQuantConv -> DynamicQuantizeLinear, MatMulInteger / ConvInteger,
 * Cast, Mul (the scales), Mul [+ Add Bias].  Activations become
 * their ONNX ops from the opset compiler/act.h's table gives (Clip's
 * bounds as inputs from opset 11, attributes before) and are written out
 * in standard ops before it, or where ONNX has no op (emit_written_*:
 * HardSwish as x * HardSigmoid(x; 1/6, 1/2), Gelu as x * (1 + Erf(x /
 * sqrt(2))) * 0.5, Linear as Mul and Add, ...).  Fail (an If branch gearc
 * found invalid at the compiled shapes)
 * -> standard ops that raise an error if the branch is taken.
 * LayerNormalization, which fuse.c makes of the written-out form in a
 * model of any opset, is written out again before opset 17.  Sdpa
 * (passes/attn.c) becomes the attention it was: Transposes, MatMul, Mul
 * by the scale, Where of the causal triangle, Add of the mask, Softmax,
 * MatMul, Transpose.  Yuv420sp (an AIPP YUV420SP_U8 frame,
 * compiler/ops/image.h) becomes Slices of the Y plane and the chroma
 * rows, the chroma upsampled by Reshape and Concat, the U,V order by
 * Gather, then Cast, Sub, MatMul, Floor, Add, Clip and Transpose as
 * compiler/preproc.c writes atc's csc for the RGB formats.
 */
#include <math.h>
#include <string.h>

#include "compiler/act.h"
#include "compiler/ops/image.h"
#include "compiler/ops/opimpl.h"
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
	return graph_add_weight(dst, name,
				tensor_new(dst->arena, name, DT_FLOAT, &s, &x));
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

/* The written-out forms of compiler/act.h's activations (its written
 * column): x is the input, the result in *res (out itself if last). */
typedef void WrittenFn(Graph *dst, const char *name, ValId x, float alpha,
		       float beta, ValId *res, bool last, ValId out);

/* Gelu as torch.onnx writes it: x * (1 + Erf(x / sqrt(2))) * 0.5 (ONNX
 * has a Gelu op only from opset 20). */
static void emit_written_gelu(Graph *dst, const char *name, ValId x,
			      float alpha, float beta, ValId *res, bool last,
			      ValId out)
{
	(void)alpha, (void)beta;
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

/* Linear: Mul by alpha, Add beta if not 0. */
static void emit_written_linear(Graph *dst, const char *name, ValId x,
				float alpha, float beta, ValId *res, bool last,
				ValId out)
{
	ValId m;
	emit_binary(dst, name, beta != 0 ? "_mul" : "", "Mul", x, -1, alpha,
		    &m, last && beta == 0, out);
	if (beta != 0)
		emit_binary(dst, name, "", "Add", m, -1, beta, res, last, out);
	else
		*res = m;
}

/* HardSwish before opset 14: x * HardSigmoid(x; 1/6, 1/2). */
static void emit_written_hardswish(Graph *dst, const char *name, ValId x,
				   float alpha, float beta, ValId *res,
				   bool last, ValId out)
{
	(void)alpha, (void)beta;
	ValId h;
	Node *n = emit(dst, name, "HardSigmoid", 1, x, &h, false, out);
	n->inputs[0] = x;
	float_attr(dst, n, "alpha", 1.0f / 6);
	float_attr(dst, n, "beta", 0.5f);
	n = emit(dst, arena_printf(dst->arena, "%s_mul", name), "Mul", 2, x,
		 res, last, out);
	n->inputs[0] = x;
	n->inputs[1] = h;
}

/* A unary op of x named name+suffix; its output in *res. */
static void emit_unary(Graph *dst, const char *name, const char *suffix,
		       const char *op, ValId x, ValId *res, bool last,
		       ValId out)
{
	Node *n = emit(dst, arena_printf(dst->arena, "%s%s", name, suffix), op,
		       1, x, res, last, out);
	n->inputs[0] = x;
}

/* SiLU (Swish) as torch.onnx writes it: x * Sigmoid(x). */
static void emit_written_silu(Graph *dst, const char *name, ValId x,
			      float alpha, float beta, ValId *res, bool last,
			      ValId out)
{
	(void)alpha, (void)beta;
	ValId s;
	emit_unary(dst, name, "_sigmoid", "Sigmoid", x, &s, false, out);
	emit_binary(dst, name, "", "Mul", x, s, 0, res, last, out);
}

/* Mish before opset 18: x * Tanh(Softplus(x)). */
static void emit_written_mish(Graph *dst, const char *name, ValId x,
			      float alpha, float beta, ValId *res, bool last,
			      ValId out)
{
	(void)alpha, (void)beta;
	ValId sp, t;
	emit_unary(dst, name, "_softplus", "Softplus", x, &sp, false, out);
	emit_unary(dst, name, "_tanh", "Tanh", sp, &t, false, out);
	emit_binary(dst, name, "", "Mul", x, t, 0, res, last, out);
}

/* GELU's tanh form as torch.onnx writes it (ONNX's Gelu with
 * approximate "tanh" only from opset 20):
 * x * (1 + Tanh(sqrt(2 / pi) * (x + 0.044715 * x * x * x))) * 0.5. */
static void emit_written_gelu_tanh(Graph *dst, const char *name, ValId x,
				   float alpha, float beta, ValId *res,
				   bool last, ValId out)
{
	(void)alpha, (void)beta;
	ValId sq, cu, k, u, v, t, a, p;
	emit_binary(dst, name, "_sq", "Mul", x, x, 0, &sq, false, out);
	emit_binary(dst, name, "_cube", "Mul", sq, x, 0, &cu, false, out);
	emit_binary(dst, name, "_k", "Mul", cu, -1, 0.044715f, &k, false, out);
	emit_binary(dst, name, "_inner", "Add", x, k, 0, &u, false, out);
	emit_binary(dst, name, "_scale", "Mul", u, -1, (float)ACT_SQRT_2_PI,
		    &v, false, out);
	emit_unary(dst, name, "_tanh", "Tanh", v, &t, false, out);
	emit_binary(dst, name, "_add", "Add", t, -1, 1.0f, &a, false, out);
	emit_binary(dst, name, "_mul", "Mul", x, a, 0, &p, false, out);
	emit_binary(dst, name, "", "Mul", p, -1, 0.5f, res, last, out);
}

#define emit_written_none NULL
static WrittenFn *const written[ACT_COUNT] = {
#define X(nm, op, an, ad, bn, bd, f64, f32, rel, abs, alg, dp, since, wr) \
	[ACT_##nm] = emit_written_##wr,
	GEARC_ACTS(X)
#undef X
};

/* Appends activation kind (alpha, beta) of x: its op from the opset the
 * table says, else written out; the result in *res. */
static int emit_act(Graph *dst, const char *name, int64_t opset, int kind,
		    float alpha, float beta, ValId x, ValId *res, bool last,
		    ValId out)
{
	const ActInfo *ai = &act_info[kind];
	if (!ai->since || opset < ai->since) {
		if (!written[kind])
			return error("node '%s': activation '%s' has no form "
				     "at opset %lld", name, ai->name,
				     (long long)opset);
		written[kind](dst, name, x, alpha, beta, res, last, out);
		return 0;
	}
	bool clip_in = kind == ACT_Clip && opset >= 11;
	Node *n = emit(dst, name, op_info[ai->op].name, clip_in ? 3 : 1, x,
		       res, last, out);
	n->inputs[0] = x;
	if (clip_in) {
		const char *base = dst->vals[out].name;
		n->inputs[1] = scalar_weight(
			dst, arena_printf(dst->arena, "%s_min", base), alpha);
		n->inputs[2] = scalar_weight(
			dst, arena_printf(dst->arena, "%s_max", base), beta);
		/* scalar_weight may move vals, not nodes */
		return 0;
	}
	if (ai->aname)
		float_attr(dst, n, ai->aname, alpha);
	if (ai->bname)
		float_attr(dst, n, ai->bname, beta);
	return 0;
}

int unfuse_act(Graph *dst, const char *name, int64_t opset, int kind,
	       float alpha, float beta, ValId x, ValId *res, bool last,
	       ValId out)
{
	return emit_act(dst, name, opset, kind, alpha, beta, x, res, last, out);
}

bool unfuse_is_fused(const Node *n, int64_t opset)
{
	return n->op == OP_FusedConv || n->op == OP_FusedGemm ||
	       n->op == OP_FusedMatMul || n->op == OP_FusedActivation ||
	       n->op == OP_DynQuantMatMul || n->op == OP_DynQuantConv ||
	       n->op == OP_Sdpa || n->op == OP_Yuv420sp ||
	       (n->op == OP_LayerNormalization && opset < 17);
}

/* ---- Sdpa ----------------------------------------------------------------- */

/* Attribute name of n, a permutation of r axes, into p (absent: the
 * identity); whether it is the identity. */
static bool sdpa_perm(const Node *n, const char *name, int32_t r,
		      int64_t *p)
{
	const int64_t *v;
	int32_t cnt = attr_ints(n, name, &v);
	bool id = true;
	for (int32_t i = 0; i < r; i++) {
		p[i] = cnt == r ? v[i] : i;
		id &= p[i] == i;
	}
	return id;
}

/* Transpose(x, perm) of dst (x itself for the identity): its output, of
 * shape x's permuted; last: it writes out. */
static ValId emit_transpose(Graph *dst, const char *name, ValId x,
			    const int64_t *perm, bool id, bool last,
			    ValId out)
{
	if (id && !last)
		return x;
	ValId r;
	Shape xs = dst->vals[x].shape;
	int32_t rank = xs.rank;
	Node *n = emit(dst, name, id ? "Identity" : "Transpose", 1, x, &r,
		       last, out);
	n->inputs[0] = x;
	if (!id)
		node_add_ints(dst, n, "perm", perm, rank);
	for (int32_t i = 0; i < rank && !last; i++)
		dst->vals[r].shape.dims[i] = xs.dims[perm[i]];
	dst->vals[r].shape.rank = rank;
	return r;
}

/* The last two dims of s set to (a, b). */
static Shape with_last2(Shape s, int64_t a, int64_t b)
{
	s.dims[s.rank - 2] = a;
	s.dims[s.rank - 1] = b;
	return s;
}

/* Sdpa (compiler/ops/attention.c) as the graph it stands for:
 * S = MatMul(Transpose(Q, q_perm), Transpose(K, k_perm, last two axes
 * swapped)) * scale; S = Where(C, S, causal_fill) with C the kept keys'
 * triangle (from opset 9); S + M; Softmax over the last axis (axis r - 1:
 * the same rows in every opset's reading); MatMul with
 * Transpose(V, v_perm); Transpose by y_perm. */
static int emit_sdpa(Graph *dst, const Node *n, int64_t opset,
		     const ValId *ins, ValId out)
{
	const char *nm = n->name;
	int32_t r = dst->vals[ins[0]].shape.rank;
	int64_t qp[MAX_RANK], kp[MAX_RANK], vp[MAX_RANK], yp[MAX_RANK];
	int64_t kt[MAX_RANK];
	if (r < 2 || r > MAX_RANK)
		return error("node '%s' (Sdpa): Q has rank %d, expected 2 to "
			     "%d", nm, r, MAX_RANK);
	bool qid = sdpa_perm(n, SDPA_Q_PERM_ATTR, r, qp);
	sdpa_perm(n, SDPA_K_PERM_ATTR, r, kp);
	bool vid = sdpa_perm(n, SDPA_V_PERM_ATTR, r, vp);
	bool yid = sdpa_perm(n, SDPA_Y_PERM_ATTR, r, yp);
	memcpy(kt, kp, sizeof(kt));
	kt[r - 2] = kp[r - 1];
	kt[r - 1] = kp[r - 2];
	bool ktid = true;
	for (int32_t i = 0; i < r; i++)
		ktid &= kt[i] == i;
	int causal = (int)attr_int(n, SDPA_CAUSAL_ATTR, 0);
	if (causal && opset < 9)
		return error("node '%s' (Sdpa): its causal mask is written with "
			     "Where, which needs opset 9 (the model has %lld)",
			     nm, (long long)opset);
	ValId q = emit_transpose(dst, arena_printf(dst->arena, "%s_q", nm),
				 ins[0], qp, qid, false, out);
	ValId k = emit_transpose(dst, arena_printf(dst->arena, "%s_kt", nm),
				 ins[1], kt, ktid, false, out);
	ValId v = emit_transpose(dst, arena_printf(dst->arena, "%s_v", nm),
				 ins[2], vp, vid, false, out);
	Shape qs = dst->vals[q].shape, vs = dst->vals[v].shape;
	int64_t sq = qs.dims[r - 2], skv = dst->vals[k].shape.dims[r - 1];
	Shape ss = with_last2(qs, sq, skv);
	ValId s, t;
	Node *mm = emit(dst, arena_printf(dst->arena, "%s_scores", nm),
			"MatMul", 2, q, &s, false, out);
	mm->inputs[0] = q;
	mm->inputs[1] = k;
	dst->vals[s].shape = ss;
	float dflt = qs.dims[r - 1] > 0
			     ? (float)(1 / sqrt((double)qs.dims[r - 1]))
			     : 1.0f;
	emit_binary(dst, nm, "_scale", "Mul", s, -1,
		    attr_float(n, SDPA_SCALE_ATTR, dflt), &t, false, out);
	dst->vals[t].shape = ss;
	s = t;
	if (causal) {
		Shape cs = shape_of(2, (int64_t[]){ sq, skv });
		SdpaGeom g = { .causal = causal, .sq = sq, .skv = skv };
		uint8_t *keep = arena_alloc(dst->arena, (size_t)(sq * skv) + 1);
		for (int64_t i = 0; i < sq; i++)
			for (int64_t j = 0; j < skv; j++)
				keep[i * skv + j] = !sdpa_masked(&g, i, j);
		const char *cn = graph_fresh_name(
			dst, arena_printf(dst->arena, "%s_causal", nm));
		ValId c = graph_add_weight(dst, cn,
					   tensor_new(dst->arena, cn, DT_BOOL,
						      &cs, keep));
		ValId f = scalar_weight(
			dst, arena_printf(dst->arena, "%s_fill", nm),
			attr_float(n, SDPA_CAUSAL_FILL_ATTR, -INFINITY));
		Node *w = emit(dst, arena_printf(dst->arena, "%s_where", nm),
			       "Where", 3, s, &t, false, out);
		w->inputs[0] = c;
		w->inputs[1] = s;
		w->inputs[2] = f;
		dst->vals[t].shape = ss;
		s = t;
	}
	if (n->ninputs > 3 && ins[3] >= 0) {
		emit_binary(dst, nm, "_mask", "Add", s, ins[3], 0, &t, false,
			    out);
		dst->vals[t].shape = ss;
		s = t;
	}
	Node *sm = emit(dst, arena_printf(dst->arena, "%s_softmax", nm),
			"Softmax", 1, s, &t, false, out);
	sm->inputs[0] = s;
	node_add_attr(dst, sm, "axis", ATTR_INT)->i = r - 1;
	dst->vals[t].shape = ss;
	Node *pv = emit(dst, yid ? nm : arena_printf(dst->arena, "%s_out", nm),
			"MatMul", 2, t, &s, yid, out);
	pv->inputs[0] = t;
	pv->inputs[1] = v;
	if (!yid) {
		dst->vals[s].shape = with_last2(qs, sq, vs.dims[r - 1]);
		emit_transpose(dst, nm, s, yp, false, true, out);
	}
	return 0;
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

/* DynQuantMatMul / DynQuantConv (passes/qfuse.c) as the chain it was:
 * DynamicQuantizeLinear, MatMulInteger or ConvInteger (the node's
 * attributes), Cast to float, Mul of the scales, Mul [, Add Bias]. */
static void emit_dynquant(Graph *dst, const Node *n, const ValId *ins,
			  ValId out)
{
	bool conv = n->op == OP_DynQuantConv;
	bool bias = n->ninputs > 4 && ins[4] >= 0;
	const char *nm = n->name;
	Node *d = graph_add_node(dst, arena_printf(dst->arena, "%s_quant", nm),
				 "DynamicQuantizeLinear", "", 1, 3);
	d->op = OP_DynamicQuantizeLinear;
	d->inputs[0] = ins[0];
	static const char *const part[] = { "q", "scale", "zp" };
	Shape scalar = shape_of(0, NULL);
	for (int k = 0; k < 3; k++) {
		const char *base = arena_printf(dst->arena, "%s_%s", nm,
						part[k]);
		ValId v = graph_add_value(dst, graph_fresh_name(dst, base),
					  VAL_NODE);
		dst->vals[v].dtype = k == 1 ? DT_FLOAT : DT_UINT8;
		dst->vals[v].shape = k ? scalar : dst->vals[ins[0]].shape;
		dst->vals[v].producer = dst->nnodes - 1;
		dst->nodes[dst->nnodes - 1].outputs[k] = v;
	}
	const ValId *q = dst->nodes[dst->nnodes - 1].outputs;
	ValId qx = q[0], qs = q[1], qz = q[2], acc, f, sp, y;
	d = emit(dst, arena_printf(dst->arena, "%s_int", nm),
		 conv ? "ConvInteger" : "MatMulInteger", 4, ins[1], &acc,
		 false, out);
	dst->vals[acc].dtype = DT_INT32;
	d->inputs[0] = qx;
	d->inputs[1] = ins[1];
	d->inputs[2] = qz;
	d->inputs[3] = ins[2];
	for (int32_t k = 0; k < n->nattrs; k++)
		*node_add_attr(dst, d, n->attrs[k].name, n->attrs[k].type) =
			n->attrs[k];
	d = emit(dst, arena_printf(dst->arena, "%s_cast", nm), "Cast", 1, out,
		 &f, false, out);
	d->inputs[0] = acc;
	node_add_attr(dst, d, "to", ATTR_INT)->i = DT_FLOAT;
	emit_binary(dst, nm, "_scales", "Mul", qs, ins[3], 0, &sp, false, out);
	dst->vals[sp].shape = dst->vals[ins[3]].shape;
	emit_binary(dst, nm, bias ? "_mul" : "", "Mul", f, sp, 0, &y, !bias,
		    out);
	if (bias)
		emit_binary(dst, nm, "", "Add", y, ins[4], 0, &y, true, out);
}

/* The Add of extra to *cur, the last node if none of n's nacts
 * activations follows it. */
static void emit_extra(Graph *dst, const Node *n, ValId extra, bool last,
		       ValId *cur, ValId out)
{
	ValId x = *cur;
	Node *d = emit(dst, arena_printf(dst->arena, "%s_add", n->name),
		       "Add", 2, x, cur, last, out);
	d->inputs[0] = x;
	d->inputs[1] = extra;
}

/* Fused node n's Z or Bias, or -1. */
static ValId fused_extra(const Node *n, const ValId *ins)
{
	return n->op == OP_FusedConv ? (n->ninputs > 3 ? ins[3] : -1)
	       : n->op == OP_FusedMatMul ? (n->ninputs > 2 ? ins[2] : -1)
					 : -1;
}

/* The Conv, Gemm or MatMul of fused node n [+ Add of Z or Bias, unless
 * it comes after zk > 0 activations], of ins; the last output in *cur
 * (out itself when nothing follows). */
static void emit_anchor(Graph *dst, const Node *n, const ValId *ins,
			int32_t nacts, int32_t zk, ValId *cur, ValId out)
{
	const char *base = n->op == OP_FusedConv   ? "Conv"
			   : n->op == OP_FusedGemm ? "Gemm"
						   : "MatMul";
	int32_t nbase = n->op == OP_FusedMatMul ? 2 : 3;
	ValId extra = fused_extra(n, ins);
	bool more = extra >= 0 || nacts;
	Node *d = emit(dst, n->name, base, nbase, ins[0], cur, !more, out);
	for (int32_t k = 0; k < nbase; k++)
		d->inputs[k] = k < n->ninputs ? ins[k] : -1;
	for (int32_t k = 0; k < n->nattrs; k++) {
		const Attr *a = &n->attrs[k];
		if (strcmp(a->name, FUSED_ACTS_ATTR) &&
		    strcmp(a->name, FUSED_ACT_PARAMS_ATTR) &&
		    strcmp(a->name, FUSED_Z_AFTER_ATTR))
			*node_add_attr(dst, d, a->name, a->type) = *a;
	}
	if (extra >= 0 && !zk)
		emit_extra(dst, n, extra, !nacts, cur, out);
}

static int emit_yuv420sp(Graph *dst, const Node *n, int64_t opset, ValId x,
			 ValId out);

int unfuse_node(Graph *dst, const Node *n, int64_t opset, const ValId *ins,
		ValId out)
{
	if (n->op == OP_LayerNormalization)
		return emit_layernorm(dst, n, ins, out);
	if (n->op == OP_Sdpa)
		return emit_sdpa(dst, n, opset, ins, out);
	if (n->op == OP_Yuv420sp)
		return emit_yuv420sp(dst, n, opset, ins[0], out);
	if (n->op == OP_DynQuantMatMul || n->op == OP_DynQuantConv) {
		emit_dynquant(dst, n, ins, out);
		return 0;
	}
	const Attr *as = node_attr(n, FUSED_ACTS_ATTR);
	const Attr *ps = node_attr(n, FUSED_ACT_PARAMS_ATTR);
	int32_t nacts = as ? as->n : 0;
	if (nacts && (!ps || ps->n != 2 * nacts))
		return error("node '%s' (%s): activation_params does not "
			     "match activations", n->name, n->op_type);
	const Attr *za = node_attr(n, FUSED_Z_AFTER_ATTR);
	int32_t zk = za && za->type == ATTR_INT ? (int32_t)za->i : 0;
	ValId extra = fused_extra(n, ins);
	if (zk < 0 || zk > nacts || (zk && extra < 0))
		return error("node '%s' (%s): z_after %d, expected 0 to %d "
			     "with Z", n->name, n->op_type, zk, nacts);
	ValId cur = ins[0];
	if (n->op != OP_FusedActivation)
		emit_anchor(dst, n, ins, nacts, zk, &cur, out);
	else if (!nacts) /* of no activation */
		emit_unary(dst, n->name, "", "Identity", cur, &cur, true, out);
	for (int32_t i = 0; i < nacts; i++) {
		const Bytes *s = &as->strings[i];
		int kind = act_lookup((const char *)s->data, s->len);
		char names[256];
		if (kind < 0)
			return error("node '%s' (%s): activation '%.*s' is not "
				     "one of %s", n->name, n->op_type,
				     (int)s->len, (const char *)s->data,
				     act_names(names, sizeof(names)));
		const char *name = arena_printf(dst->arena, "%s_%s", n->name,
						act_info[kind].name);
		if (emit_act(dst, name, opset, kind, ps->floats[2 * i],
			     ps->floats[2 * i + 1], cur, &cur,
			     i == nacts - 1 && zk != nacts, out) < 0)
			return -1;
		if (zk && i == zk - 1)
			emit_extra(dst, n, extra, i == nacts - 1, &cur, out);
	}
	return 0;
}

/* ---- Fail --------------------------------------------------------------- */

/* An int64 weight of b: v[0..] in shape s. */
static ValId i64_weight(Graph *b, const char *name, Shape s, const int64_t *v)
{
	name = graph_fresh_name(b, name);
	return graph_add_weight(b, name,
				tensor_new(b->arena, name, DT_INT64, &s, v));
}

/* Appends op(a[, c]) to b, named name; its output is out, or (out < 0) a
 * new value of dtype and shape s. */
static Node *fail_step(Graph *b, const char *name, const char *op, ValId a,
		       ValId c, int32_t dtype, Shape s, ValId out)
{
	if (out < 0) {
		out = graph_add_value(b, graph_fresh_name(b, name), VAL_NODE);
		b->vals[out].dtype = dtype;
		b->vals[out].shape = s;
	}
	Node *n = graph_add_node(b, name, op, "", c >= 0 ? 2 : 1, 1);
	n->inputs[0] = a;
	if (c >= 0)
		n->inputs[1] = c;
	n->outputs[0] = out;
	b->vals[out].producer = b->nnodes - 1;
	return n;
}

static Node *fail_cast(Graph *b, const char *name, ValId a, int32_t dtype,
		       Shape s, ValId out)
{
	Node *n = fail_step(b, name, "Cast", a, -1, dtype, s, out);
	node_add_attr(b, n, "to", ATTR_INT)->i = dtype;
	return n;
}

/* Removes node at of b: the later nodes move down one place. */
static void drop_node(Graph *b, int32_t at)
{
	memmove(&b->nodes[at], &b->nodes[at + 1],
		(size_t)(b->nnodes - at - 1) * sizeof(Node));
	b->nnodes--;
	for (ValId v = 0; v < b->nvals; v++)
		if (b->vals[v].producer > at)
			b->vals[v].producer--;
}

/* Output o of a lowered Fail: the scalar e cast to o's dtype and expanded
 * to its shape (an unknown dim as 1, an unknown rank as the scalar). */
static void fail_output(Graph *b, const char *base, int32_t i, ValId e,
			ValId o)
{
	Shape s = b->vals[o].shape, scalar = shape_of(0, NULL);
	int32_t dtype = b->vals[o].dtype;
	const char *name = arena_printf(b->arena, "%s/out%d", base, i);
	if (s.rank < 0) {
		fail_cast(b, name, e, dtype, scalar, o);
		return;
	}
	ValId c = fail_cast(b, arena_printf(b->arena, "%s/cast%d", base, i),
			    e, dtype, scalar, -1)->outputs[0];
	int64_t dims[MAX_RANK];
	for (int32_t d = 0; d < s.rank; d++)
		dims[d] = s.dims[d] < 0 ? 1 : s.dims[d];
	int64_t r = s.rank;
	ValId sh = i64_weight(b, arena_printf(b->arena, "%s/shape%d", base, i),
			      shape_of(1, &r), dims);
	fail_step(b, name, "Expand", c, sh, dtype, s, o);
}

/* The Fail as
 *   k = Cast(cond, INT64)                     0 or 1
 *   s = Add(k, [2])                           [2] or [3]
 *   r = Reshape([0], s)                       one element into 2 or 3
 *   e = Gather(r, 0)                          never reached
 *   out_i = Expand(Cast(e, dtype_i), shape_i)
 * ONNX makes a Reshape whose element counts differ an error, and no
 * runtime can make its output, so each fails there when the branch runs
 * (ONNX Runtime names the node, which has the Fail's name).  The shape
 * comes from the If's condition, a run-time value: neither onnx's shape
 * inference nor a runtime's constant folding at load sees the error.  The
 * outputs read r, so no runtime may skip it, and have the Fail's dtypes
 * and shapes, as the If's other branch.  (The source branch is not in the
 * .om to be written instead: the compile replaced it.) */
int unfuse_fail(Graph *b, int32_t at, ValId cond, int64_t opset)
{
	const Node *f = &b->nodes[at];
	const char *base = f->name;
	if (opset < 8)
		return error("node '%s': gearc's op Fail is written with "
			     "Expand, which needs opset 8 (the model has %lld)",
			     base, (long long)opset);
	int32_t no = f->noutputs;
	ValId *outs = arena_memdup(b->arena, f->outputs,
				   (size_t)no * sizeof(ValId) + 1);
	Shape scalar = shape_of(0, NULL), one = shape_of(1, (int64_t[]){ 1 });
	Shape unknown1 = shape_of(1, (int64_t[]){ -1 });
	static const int64_t two = 2, zero = 0;
	ValId k = fail_cast(b, arena_printf(b->arena, "%s/cond", base), cond,
			    DT_INT64, scalar, -1)->outputs[0];
	ValId s = fail_step(b, arena_printf(b->arena, "%s/size", base), "Add",
			    k, i64_weight(b, "fail_two", one, &two), DT_INT64,
			    one, -1)->outputs[0];
	ValId r = fail_step(b, base, "Reshape",
			    i64_weight(b, "fail_one_element", one, &zero), s,
			    DT_INT64, unknown1, -1)->outputs[0];
	ValId e = fail_step(b, arena_printf(b->arena, "%s/first", base),
			    "Gather", r, i64_weight(b, "fail_index", scalar,
						    &zero),
			    DT_INT64, scalar, -1)->outputs[0];
	for (int32_t i = 0; i < no; i++)
		if (outs[i] >= 0)
			fail_output(b, base, i, e, outs[i]);
	drop_node(b, at);
	return 0;
}

/* ---- Yuv420sp ------------------------------------------------------------ */

/* A value of name's step: fail_step's node (any op), its output. */
static ValId yuv_step(Graph *b, const char *base, const char *what,
		      const char *op, ValId a, ValId c, int32_t dtype,
		      Shape s, ValId out)
{
	return fail_step(b, arena_printf(b->arena, "%s_%s", base, what), op,
			 a, c, dtype, s, out)
		->outputs[0];
}

static ValId yuv_ints(Graph *b, const char *base, const char *what,
		      const int64_t *v, int64_t n)
{
	return i64_weight(b, arena_printf(b->arena, "%s_%s", base, what),
			  shape_of(1, &n), v);
}

static ValId yuv_floats(Graph *b, const char *base, const char *what,
			const float *v, Shape s)
{
	const char *name = graph_fresh_name(
		b, arena_printf(b->arena, "%s_%s", base, what));
	return graph_add_weight(b, name,
				tensor_new(b->arena, name, DT_FLOAT, &s, v));
}

/* Slice of x along axes 1 and 2 from st to en (inputs from opset 10,
 * attributes before). */
static ValId yuv_slice(Graph *b, const char *base, const char *what,
		       int64_t opset, ValId x, const int64_t *st,
		       const int64_t *en, Shape s)
{
	static const int64_t axes[2] = { 1, 2 };
	const char *nm = arena_printf(b->arena, "%s_%s", base, what);
	if (opset < 10) {
		Node *sl = fail_step(b, nm, "Slice", x, -1, DT_UINT8, s, -1);
		node_add_ints(b, sl, "starts", st, 2);
		node_add_ints(b, sl, "ends", en, 2);
		node_add_ints(b, sl, "axes", axes, 2);
		return sl->outputs[0];
	}
	ValId sv = yuv_ints(b, nm, "starts", st, 2),
	      ev = yuv_ints(b, nm, "ends", en, 2),
	      av = yuv_ints(b, nm, "axes", axes, 2);
	ValId v = graph_add_value(b, graph_fresh_name(b, nm), VAL_NODE);
	b->vals[v].dtype = DT_UINT8;
	b->vals[v].shape = s;
	Node *sl = graph_add_node(b, nm, "Slice", "", 4, 1);
	sl->inputs[0] = x;
	sl->inputs[1] = sv;
	sl->inputs[2] = ev;
	sl->inputs[3] = av;
	sl->outputs[0] = v;
	b->vals[v].producer = b->nnodes - 1;
	return v;
}

static ValId yuv_reshape(Graph *b, const char *base, const char *what,
			 ValId x, const int64_t *dims, int32_t rank)
{
	Shape s = shape_of(rank, dims);
	s.dims[0] = b->vals[x].shape.dims[0];
	return yuv_step(b, base, what, "Reshape", x,
			yuv_ints(b, base, arena_printf(b->arena, "%s_shape",
						       what),
				 dims, rank),
			DT_UINT8, s, -1);
}

/* Concat(x, x) along axis: each element twice. */
static ValId yuv_twice(Graph *b, const char *base, const char *what,
		       ValId x, int64_t axis)
{
	Shape s = b->vals[x].shape;
	s.dims[axis] *= 2;
	Node *c = fail_step(b, arena_printf(b->arena, "%s_%s", base, what),
			    "Concat", x, x, DT_UINT8, s, -1);
	node_add_attr(b, c, "axis", ATTR_INT)->i = axis;
	return c->outputs[0];
}

/* Yuv420sp as standard ONNX (opset 7 on: Reshape's shape input, Cast's
 * integer "to", numpy broadcasting):
 *   Y = Reshape(Slice(X, crop rows and columns), [0, h, w, 1])
 *   C = Slice(X, the chroma rows and pairs of the crop)      [N, ch, 2cw]
 *       Reshape to [0, ch, 1, cw, 1, 2], Concat with itself along 4
 *       and along 2 (each pair over 2x2 pixels), Reshape to
 *       [0, 2ch, 2cw, 2], Slice to [h, w] if odd, Gather [1, 0] on
 *       axis 3 for NV21
 *   P = Concat(Y, C, axis 3)                                 [N, h, w, 3]
 * then without a matrix Cast(Transpose(P, NCHW), float), with one
 * Transpose(Clip(Add(Floor(MatMul(Sub(Cast(P), input_bias), M^T / 256)),
 * output_bias), 0, 255)): exactly the kernel's integers while the sums
 * are exact in float32 (|M (in - bias)| < 2^24, every matrix of atc's
 * tables). */
static int emit_yuv420sp(Graph *dst, const Node *n, int64_t opset, ValId x,
			 ValId out)
{
	const char *nm = n->name;
	Yuv420sp p;
	char buf[160];
	const char *why;
	if (yuv420sp_params(n, &dst->vals[x].shape, &p, buf, sizeof(buf),
			    &why) < 0)
		return error("node '%s' (Yuv420sp): %s", nm, why);
	if (p.h < 0 || p.w < 0)
		return error("node '%s' (Yuv420sp): the frame's size is not "
			     "known", nm);
	if (opset < 7)
		return error("node '%s': gearc's op Yuv420sp is written with "
			     "Reshape, Cast and broadcasting Sub, which need "
			     "opset 7 (the model has %lld)", nm,
			     (long long)opset);
	int64_t N = dst->vals[x].shape.dims[0], ch = (p.oh + 1) / 2,
		cw = (p.ow + 1) / 2;
	int64_t yst[2] = { p.y0, p.x0 }, yen[2] = { p.y0 + p.oh, p.x0 + p.ow };
	ValId y = yuv_slice(dst, nm, "y", opset, x, yst, yen,
			    shape_of(3, (int64_t[]){ N, p.oh, p.ow }));
	y = yuv_reshape(dst, nm, "y4", y, (int64_t[]){ 0, p.oh, p.ow, 1 }, 4);
	int64_t cst[2] = { p.h + p.y0 / 2, p.x0 },
		cen[2] = { p.h + p.y0 / 2 + ch, p.x0 + 2 * cw };
	ValId c = yuv_slice(dst, nm, "uv", opset, x, cst, cen,
			    shape_of(3, (int64_t[]){ N, ch, 2 * cw }));
	c = yuv_reshape(dst, nm, "uv6", c,
			(int64_t[]){ 0, ch, 1, cw, 1, 2 }, 6);
	c = yuv_twice(dst, nm, "uv_w", c, 4);
	c = yuv_twice(dst, nm, "uv_h", c, 2);
	c = yuv_reshape(dst, nm, "uv4", c, (int64_t[]){ 0, 2 * ch, 2 * cw, 2 },
			4);
	if (2 * ch != p.oh || 2 * cw != p.ow)
		c = yuv_slice(dst, nm, "uv_crop", opset, c,
			      (int64_t[]){ 0, 0 }, (int64_t[]){ p.oh, p.ow },
			      shape_of(4, (int64_t[]){ N, p.oh, p.ow, 2 }));
	Shape nhwc = shape_of(4, (int64_t[]){ N, p.oh, p.ow, 3 }),
	      nchw = shape_of(4, (int64_t[]){ N, 3, p.oh, p.ow });
	if (p.vu) {
		static const int64_t vu[2] = { 1, 0 };
		Node *g = fail_step(dst, arena_printf(dst->arena, "%s_vu", nm),
				    "Gather", c, yuv_ints(dst, nm, "vu", vu, 2),
				    DT_UINT8, dst->vals[c].shape, -1);
		node_add_attr(dst, g, "axis", ATTR_INT)->i = 3;
		c = g->outputs[0];
	}
	Node *cat = fail_step(dst, arena_printf(dst->arena, "%s_yuv", nm),
			      "Concat", y, c, DT_UINT8, nhwc, -1);
	node_add_attr(dst, cat, "axis", ATTR_INT)->i = 3;
	ValId v = cat->outputs[0];
	static const int64_t to_nchw[4] = { 0, 3, 1, 2 };
	if (!p.csc) {
		Node *t = fail_step(dst, arena_printf(dst->arena, "%s_nchw", nm),
				    "Transpose", v, -1, DT_UINT8, nchw, -1);
		node_add_ints(dst, t, "perm", to_nchw, 4);
		fail_cast(dst, nm, t->outputs[0], DT_FLOAT, nchw, out);
		return 0;
	}
	v = fail_cast(dst, arena_printf(dst->arena, "%s_float", nm), v,
		      DT_FLOAT, nhwc, -1)->outputs[0];
	float ib[3], ob[3], mt[9];
	bool any_ib = false, any_ob = false;
	for (int r = 0; r < 3; r++) {
		ib[r] = (float)p.ib[r];
		ob[r] = (float)p.ob[r];
		any_ib |= p.ib[r] != 0;
		any_ob |= p.ob[r] != 0;
		for (int k = 0; k < 3; k++) /* exact: a power of two */
			mt[k * 3 + r] = (float)p.m[r][k] / 256.0f;
	}
	Shape three = shape_of(1, (int64_t[]){ 3 });
	if (any_ib)
		v = yuv_step(dst, nm, "in_bias", "Sub", v,
			     yuv_floats(dst, nm, "input_bias", ib, three),
			     DT_FLOAT, nhwc, -1);
	v = yuv_step(dst, nm, "csc", "MatMul", v,
		     yuv_floats(dst, nm, "matrix", mt,
				shape_of(2, (int64_t[]){ 3, 3 })),
		     DT_FLOAT, nhwc, -1);
	v = yuv_step(dst, nm, "shift", "Floor", v, -1, DT_FLOAT, nhwc, -1);
	if (any_ob)
		v = yuv_step(dst, nm, "out_bias", "Add", v,
			     yuv_floats(dst, nm, "output_bias", ob, three),
			     DT_FLOAT, nhwc, -1);
	Node *cl = fail_step(dst, arena_printf(dst->arena, "%s_clip", nm),
			     "Clip", v, -1, DT_FLOAT, nhwc, -1);
	if (opset < 11) {
		node_add_attr(dst, cl, "min", ATTR_FLOAT)->f = 0;
		node_add_attr(dst, cl, "max", ATTR_FLOAT)->f = 255;
	} else {
		ValId lo = scalar_weight(dst, arena_printf(dst->arena,
							   "%s_min", nm), 0),
		      hi = scalar_weight(dst, arena_printf(dst->arena,
							   "%s_max", nm), 255);
		cl = &dst->nodes[dst->nnodes - 1];
		ValId *in = arena_array(dst->arena, 3, sizeof(ValId));
		in[0] = cl->inputs[0];
		in[1] = lo;
		in[2] = hi;
		cl->inputs = in;
		cl->ninputs = 3;
	}
	v = cl->outputs[0];
	Node *t = fail_step(dst, nm, "Transpose", v, -1, DT_FLOAT, nchw, out);
	node_add_ints(dst, t, "perm", to_nchw, 4);
	return 0;
}
