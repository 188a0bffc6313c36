/*
 * passes/contrib.c - ONNX Runtime's contrib ops (compiler/ops/contrib*.c)
 * written as standard ONNX: for gearc export (passes/flatten.c), and,
 * before the gear passes, for the ops whose standard form runs as fast
 * as they could (the pass "contrib").
 *
 * The forms (each op's semantics as its kernel computes them, the
 * written-out activations of compiler/act.h's table, unfuse_act):
 *   Gelu, BiasGelu     [Add B] x (1 + Erf(x / sqrt 2)) / 2
 *   FastGelu           [Add bias] GELU's tanh form
 *   QuickGelu          x Sigmoid(alpha x)
 *   BiasAdd            Add, Add
 *   FusedMatMul        [Transpose A] [Transpose B] MatMul [Mul alpha]
 *   SkipLayerNormalization  Add [Add bias] LayerNormalization (opset 17
 *                      on, else written out), the sum its 4th output
 *   Skip/SimplifiedLayerNormalization (RMS): x Reciprocal(Sqrt(
 *                      ReduceMean(x x) + eps)) scale, its mean output 0
 *   MatMulIntegerToFloat  MatMulInteger, Cast, Mul (the scales) [, Add]
 *   DynamicQuantizeMatMul DynamicQuantizeLinear, then as above (the
 *                      chain passes/qfuse.c fuses into DynQuantMatMul)
 *   QLinearAdd, -Mul, -Sigmoid, -LeakyRelu, -Concat, -AveragePool,
 *   -GlobalAveragePool, -Softmax   DequantizeLinear, the float op,
 *                      QuantizeLinear (channels_last: Transposes around
 *                      the pool; Softmax's opset 12 rule by Reshapes)
 *   QGemm              DequantizeLinear of A and B, C as float times
 *                      alpha a_scale b_scale, Gemm [, QuantizeLinear]
 *   EmbedLayerNormalization  Gathers, Adds, LayerNormalization, the
 *                      mask's ReduceSum
 *   RotaryEmbedding    Gathers of the caches, Slices, Mul, Sub, Add,
 *                      Concat (as Reshapes per head)
 *   Attention, MultiHeadAttention  MatMul (the projection), Reshape and
 *                      Transpose per head, MatMul, Mul by the scale, Add
 *                      of the mask (built from mask_index by Greater or
 *                      Less and Where), Softmax, MatMul, Transpose,
 *                      Reshape; past and present by Concat
 * Quantized forms round as the standard ops do (x / scale, half to
 * even): within one unit of ONNX Runtime's kernels, as gearc's own are.
 * The forms of the transformer ops use the node's static shapes (export
 * has them); the compile pass writes only the ops of the first block.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/act.h"
#include "compiler/ops/opimpl.h"
#include "contrib.h"
#include "flatten.h"

typedef struct Low {
	Graph *g;
	const Node *n;
	int64_t opset;
	int k;	  /* nodes made, for their names */
	bool own; /* gearc's own ops allowed (a compile, not export) */
} Low;

/* ---- building ------------------------------------------------------------ */

static const char *base_name(const Low *L)
{
	return *L->n->name ? L->n->name : L->n->op_type;
}

static ValId fresh(Low *L, const char *what)
{
	const char *b = arena_printf(L->g->arena, "%s_%s", base_name(L), what);
	return graph_add_value(L->g, graph_fresh_name(L->g, b), VAL_NODE);
}

/* Node op of inputs in[0..nin) writing outputs out[0..nout), each -1
 * made fresh (and stored back); valid until the next node is added. */
static Node *mk_n(Low *L, const char *op, int32_t nin, const ValId *in,
		  int32_t nout, ValId *out)
{
	for (int32_t k = 0; k < nout; k++)
		if (out[k] < 0)
			out[k] = fresh(L, op);
	const char *name = arena_printf(L->g->arena, "%s_%s_%d", base_name(L),
					op, L->k++);
	Node *n = graph_add_node(L->g, name, op, "", nin, nout);
	n->op = (uint16_t)op_lookup("", op);
	for (int32_t k = 0; k < nin; k++)
		n->inputs[k] = in[k];
	for (int32_t k = 0; k < nout; k++) {
		n->outputs[k] = out[k];
		L->g->vals[out[k]].producer = L->g->nnodes - 1;
	}
	return n;
}

/* The one-output form: writes out (-1: a fresh value), returns it. */
static ValId mk1(Low *L, const char *op, int32_t nin, const ValId *in,
		 ValId out)
{
	mk_n(L, op, nin, in, 1, &out);
	return out;
}

#define OP1(L, op, out, ...) \
	mk1(L, op, sizeof((ValId[]){ __VA_ARGS__ }) / sizeof(ValId), \
	    (ValId[]){ __VA_ARGS__ }, out)

/* The node just made. */
static Node *last_node(Low *L) { return &L->g->nodes[L->g->nnodes - 1]; }

static void attr_i(Low *L, const char *name, int64_t v)
{
	node_add_attr(L->g, last_node(L), name, ATTR_INT)->i = v;
}

static void attr_f(Low *L, const char *name, float v)
{
	node_add_attr(L->g, last_node(L), name, ATTR_FLOAT)->f = v;
}

static void attr_is(Low *L, const char *name, const int64_t *v, int32_t n)
{
	node_add_ints(L->g, last_node(L), name, v, n);
}

static ValId konst(Low *L, int dt, const Shape *s, const void *data)
{
	const char *nm = graph_fresh_name(L->g, arena_printf(L->g->arena,
					  "%s_const", base_name(L)));
	Tensor *t = tensor_new(L->g->arena, nm, dt, s, data);
	return t ? graph_add_weight(L->g, nm, t) : -1;
}

static ValId cf(Low *L, float v)
{
	return konst(L, DT_FLOAT, &(Shape){ 0 }, &v);
}

static ValId ci64(Low *L, const int64_t *v, int64_t n)
{
	return konst(L, DT_INT64, &(Shape){ 1, { n } }, v);
}

/* Unsqueeze x at axes (an attribute before opset 13, an input since). */
static ValId unsq(Low *L, ValId x, const int64_t *axes, int32_t n, ValId out)
{
	if (L->opset >= 13)
		return OP1(L, "Unsqueeze", out, x, ci64(L, axes, n));
	out = OP1(L, "Unsqueeze", out, x);
	attr_is(L, "axes", axes, n);
	return out;
}

static ValId reshape(Low *L, ValId x, const int64_t *dims, int32_t n,
		     ValId out)
{
	return OP1(L, "Reshape", out, x, ci64(L, dims, n));
}

static ValId transpose(Low *L, ValId x, const int64_t *perm, int32_t n,
		       ValId out)
{
	out = OP1(L, "Transpose", out, x);
	attr_is(L, "perm", perm, n);
	return out;
}

/* Elements [lo, hi) of x along axis (opset 10 on: inputs). */
static ValId slice(Low *L, ValId x, int64_t axis, int64_t lo, int64_t hi)
{
	if (L->opset >= 10)
		return OP1(L, "Slice", -1, x, ci64(L, &lo, 1), ci64(L, &hi, 1),
			   ci64(L, &axis, 1));
	ValId out = OP1(L, "Slice", -1, x);
	attr_is(L, "starts", &lo, 1);
	attr_is(L, "ends", &hi, 1);
	attr_is(L, "axes", &axis, 1);
	return out;
}

static ValId concat(Low *L, const ValId *in, int32_t n, int64_t axis,
		    ValId out)
{
	out = mk1(L, "Concat", n, in, out);
	attr_i(L, "axis", axis);
	return out;
}

/* ReduceMean (or ReduceSum) of x over axes, dims kept (the axes an
 * attribute before opset 18, 13 for ReduceSum; an input since). */
static ValId reduce(Low *L, const char *op, ValId x, const int64_t *axes,
		    int32_t n, ValId out)
{
	int64_t since = !strcmp(op, "ReduceSum") ? 13 : 18;
	if (L->opset >= since)
		return OP1(L, op, out, x, ci64(L, axes, n));
	out = OP1(L, op, out, x);
	attr_is(L, "axes", axes, n);
	return out;
}

static ValId cast(Low *L, ValId x, int to, ValId out)
{
	out = OP1(L, "Cast", out, x);
	attr_i(L, "to", to);
	return out;
}

/* x's shape in dst (static in export). */
static const Shape *shp(Low *L, ValId x) { return &L->g->vals[x].shape; }

static int need_static(Low *L, ValId x)
{
	if (x < 0 || shape_is_static(shp(L, x)))
		return 0;
	return error("node '%s' (%s): its standard form needs static shapes",
		     L->n->name, L->n->op_type);
}

/* ---- activations, BiasAdd, FusedMatMul ------------------------------------ */

static int low_gelu(Low *L, const ValId *in, const ValId *out)
{
	ValId x = in[0];
	int op = L->n->op;
	if (L->n->ninputs > 1 && in[1] >= 0)
		x = OP1(L, "Add", -1, x, in[1]);
	if (op == OP_MS_QuickGelu) {
		float a = attr_float(L->n, "alpha", 1.702f);
		ValId s = OP1(L, "Sigmoid", -1, OP1(L, "Mul", -1, x, cf(L, a)));
		OP1(L, "Mul", out[0], x, s);
		return 0;
	}
	int kind = op == OP_MS_FastGelu ? ACT_GeluTanh : ACT_Gelu;
	ValId r;
	if (L->own) { /* one node, which the fuse pass takes further */
		Node *d = mk_n(L, "FusedActivation", 1, &x, 1,
			       (ValId[]){ out[0] });
		d->domain = GEARC_DOMAIN;
		d->op = OP_FusedActivation;
		Attr *as = node_add_attr(L->g, d, FUSED_ACTS_ATTR, ATTR_STRINGS);
		Bytes *nm = arena_alloc(L->g->arena, sizeof(Bytes));
		nm->data = (const uint8_t *)act_info[kind].name;
		nm->len = strlen(act_info[kind].name);
		as->n = 1;
		as->strings = nm;
		Attr *ps = node_add_attr(L->g, d, FUSED_ACT_PARAMS_ATTR,
					 ATTR_FLOATS);
		ps->n = 2;
		ps->floats = arena_alloc(L->g->arena, 2 * sizeof(float));
		return 0;
	}
	return unfuse_act(L->g, arena_printf(L->g->arena, "%s_gelu",
					     base_name(L)),
			  L->opset, kind, 0, 0, x, &r, true, out[0]);
}

static int low_bias_add(Low *L, const ValId *in, const ValId *out)
{
	OP1(L, "Add", out[0], OP1(L, "Add", -1, in[0], in[1]), in[2]);
	return 0;
}

/* FusedMatMul: its operand k's transposes as one Transpose (none if the
 * identity); its rank must be known. */
static ValId fm_operand(Low *L, int k, ValId x)
{
	int32_t r = shp(L, x)->rank, p[MAX_RANK];
	int64_t perm[MAX_RANK];
	if (fused_matmul_perm(L->n, k, r, p))
		return x;
	for (int32_t i = 0; i < r; i++)
		perm[i] = p[i];
	return transpose(L, x, perm, r, -1);
}

static int low_fused_matmul(Low *L, const ValId *in, const ValId *out)
{
	const Node *n = L->n;
	if (shp(L, in[0])->rank < 0 || shp(L, in[1])->rank < 0)
		return error("node '%s' (FusedMatMul): its standard form needs "
			     "the operands' ranks", n->name);
	ValId a = fm_operand(L, 0, in[0]), b = fm_operand(L, 1, in[1]);
	float alpha = attr_float(n, "alpha", 1.0f);
	if (alpha == 1.0f) {
		OP1(L, "MatMul", out[0], a, b);
		return 0;
	}
	OP1(L, "Mul", out[0], OP1(L, "MatMul", -1, a, b), cf(L, alpha));
	return 0;
}

/* ---- normalizations ------------------------------------------------------ */

/* x normalized over its axes from axis on (rank r): RMS (rms) or
 * LayerNorm (with beta, -1: none), scaled by gamma, into y; its mean
 * (0 for RMS, written where mean >= 0) and inverse deviation (inv) as
 * [..., 1] outputs. */
static int norm(Low *L, ValId x, ValId gamma, ValId beta, int32_t r,
		int32_t axis, float eps, bool rms, ValId y, ValId mean,
		ValId inv)
{
	if (!rms && L->opset >= 17) {
		ValId o[3] = { y, mean, inv };
		int32_t no = inv >= 0 ? 3 : mean >= 0 ? 2 : 1;
		for (int32_t k = 1; k < no; k++)
			if (o[k] < 0)
				o[k] = fresh(L, "stat");
		Node *d = mk_n(L, "LayerNormalization", beta >= 0 ? 3 : 2,
			       (ValId[]){ x, gamma, beta }, no, o);
		(void)d;
		attr_i(L, "axis", axis);
		attr_f(L, "epsilon", eps);
		return 0;
	}
	int64_t axes[MAX_RANK];
	for (int32_t i = axis; i < r; i++)
		axes[i - axis] = i;
	ValId d = x, m = -1;
	if (!rms) {
		m = reduce(L, "ReduceMean", x, axes, r - axis,
			   mean >= 0 ? mean : -1);
		d = OP1(L, "Sub", -1, x, m);
	}
	ValId v = reduce(L, "ReduceMean", OP1(L, "Mul", -1, d, d), axes,
			 r - axis, -1);
	ValId is = OP1(L, "Reciprocal", inv,
		       OP1(L, "Sqrt", -1, OP1(L, "Add", -1, v, cf(L, eps))));
	ValId sc = OP1(L, "Mul", -1, OP1(L, "Mul", -1, d, is), gamma);
	if (beta >= 0)
		OP1(L, "Add", y, sc, beta);
	else
		OP1(L, "Identity", y, sc);
	if (rms && mean >= 0) /* ONNX Runtime writes the RMS mean as 0 */
		OP1(L, "Mul", mean, is, cf(L, 0.0f));
	return 0;
}

static int low_skip_norm(Low *L, const ValId *in, const ValId *out)
{
	bool rms = L->n->op == OP_MS_SkipSimplifiedLayerNormalization;
	int bi = rms ? 3 : 4, be = rms ? -1 : 3;
	ValId bias = L->n->ninputs > bi ? in[bi] : -1;
	ValId beta = be >= 0 && L->n->ninputs > be ? in[be] : -1;
	ValId o[4];
	for (int k = 0; k < 4; k++)
		o[k] = k < L->n->noutputs ? out[k] : -1;
	int32_t r = shp(L, in[0])->rank;
	if (r < 1)
		return error("node '%s' (%s): its standard form needs the "
			     "input's rank", L->n->name, L->n->op_type);
	ValId s = OP1(L, "Add", bias >= 0 ? -1 : o[3], in[0], in[1]);
	if (bias >= 0)
		s = OP1(L, "Add", o[3], s, bias);
	return norm(L, s, in[2], beta, r, r - 1,
		    attr_float(L->n, "epsilon", 1e-12f), rms, o[0], o[1],
		    o[2]);
}

static int low_rms_norm(Low *L, const ValId *in, const ValId *out)
{
	int32_t r = shp(L, in[0])->rank;
	int64_t a = attr_int(L->n, "axis", -1);
	if (r < 1)
		return error("node '%s' (%s): its standard form needs the "
			     "input's rank", L->n->name, L->n->op_type);
	a += a < 0 ? r : 0;
	return norm(L, in[0], in[1], -1, r, (int32_t)a,
		    attr_float(L->n, "epsilon", 1e-5f), true, out[0], -1,
		    L->n->noutputs > 1 ? out[1] : -1);
}

/* ---- integer products ------------------------------------------------------ */

/* Cast(i) * scale [+ bias] into out. */
static void scaled(Low *L, ValId i, ValId scale, ValId bias, ValId out)
{
	ValId f = cast(L, i, DT_FLOAT, -1);
	ValId y = OP1(L, "Mul", bias >= 0 ? -1 : out, f, scale);
	if (bias >= 0)
		OP1(L, "Add", out, y, bias);
}

static int low_mm_int_float(Low *L, const ValId *in, const ValId *out)
{
	int32_t ni = L->n->ninputs;
	ValId az = ni > 4 ? in[4] : -1, bz = ni > 5 ? in[5] : -1;
	ValId bias = ni > 6 ? in[6] : -1;
	ValId i = OP1(L, "MatMulInteger", -1, in[0], in[1], az, bz);
	if (az < 0 && bz >= 0) /* MatMulInteger's zero points by position */
		last_node(L)->inputs[2] = -1;
	scaled(L, i, OP1(L, "Mul", -1, in[2], in[3]), bias, out[0]);
	return 0;
}

static int low_dynquant_matmul(Low *L, const ValId *in, const ValId *out)
{
	int32_t ni = L->n->ninputs;
	ValId bz = ni > 3 ? in[3] : -1, bias = ni > 4 ? in[4] : -1;
	ValId q[3] = { -1, -1, -1 };
	mk_n(L, "DynamicQuantizeLinear", 1, in, 3, q);
	ValId i = OP1(L, "MatMulInteger", -1, q[0], in[1], q[2], bz);
	scaled(L, i, OP1(L, "Mul", -1, q[1], in[2]), bias, out[0]);
	return 0;
}

/* ---- quantized ops ------------------------------------------------------- */

/* DequantizeLinear of x (scale s, zero point z, -1: none). */
static ValId dq(Low *L, ValId x, ValId s, ValId z)
{
	return OP1(L, "DequantizeLinear", -1, x, s, z);
}

/* QuantizeLinear of y into out, of 8-bit dtype dt: the zero point z, or
 * a 0 of dt when absent (QuantizeLinear's default is uint8). */
static void qz(Low *L, ValId y, ValId s, ValId z, int dt, ValId out)
{
	if (z < 0) {
		int8_t zero = 0;
		z = konst(L, dt, &(Shape){ 0 }, &zero);
	}
	OP1(L, "QuantizeLinear", out, y, s, z);
}

/* Input i of the node, or -1. */
static ValId opt(Low *L, const ValId *in, int i)
{
	return i < L->n->ninputs ? in[i] : -1;
}

/* QLinearSoftmax's softmax of x (rank r) by the rule of its opset
 * attribute (before 13: over the dims from axis on) in the model's
 * opset. */
static int low_softmax(Low *L, ValId x, int32_t r, ValId *y)
{
	int64_t nop = attr_int(L->n, "opset", 13);
	int64_t axis = attr_int(L->n, "axis", nop < 13 ? 1 : -1);
	axis += axis < 0 ? r : 0;
	if (axis == r - 1 || (nop < 13) == (L->opset < 13)) {
		*y = OP1(L, "Softmax", -1, x);
		attr_i(L, "axis", axis);
		return 0;
	}
	if (nop < 13) { /* the dims from axis on as one */
		ValId f = OP1(L, "Flatten", -1, x);
		attr_i(L, "axis", axis);
		ValId s = OP1(L, "Softmax", -1, f);
		attr_i(L, "axis", 1);
		*y = OP1(L, "Reshape", -1, s, OP1(L, "Shape", -1, x));
		return 0;
	}
	/* one axis in a model before opset 13: moved last and back */
	int64_t perm[MAX_RANK];
	for (int32_t i = 0; i < r; i++)
		perm[i] = i;
	perm[axis] = r - 1;
	perm[r - 1] = axis;
	ValId s = OP1(L, "Softmax", -1, transpose(L, x, perm, r, -1));
	attr_i(L, "axis", r - 1);
	*y = transpose(L, s, perm, r, -1);
	return 0;
}

static int low_qlinear(Low *L, const ValId *in, const ValId *out)
{
	const Node *n = L->n;
	int dt = L->g->vals[in[0]].dtype;
	if (n->op == OP_MS_QLinearConcat) {
		ValId xs[64];
		int32_t k = 0;
		if ((n->ninputs - 2) / 3 > 64)
			return error("node '%s' (QLinearConcat): more than 64 "
				     "inputs", n->name);
		for (int32_t i = 2; i + 2 < n->ninputs; i += 3)
			xs[k++] = dq(L, in[i], in[i + 1], in[i + 2]);
		ValId c = concat(L, xs, k, attr_int(n, "axis", 0), -1);
		qz(L, c, in[0], in[1], L->g->vals[in[1]].dtype, out[0]);
		return 0;
	}
	if (n->op == OP_MS_QLinearAdd || n->op == OP_MS_QLinearMul) {
		ValId a = dq(L, in[0], in[1], opt(L, in, 2));
		ValId b = dq(L, in[3], in[4], opt(L, in, 5));
		ValId y = OP1(L, n->op == OP_MS_QLinearAdd ? "Add" : "Mul", -1,
			      a, b);
		qz(L, y, in[6], opt(L, in, 7), dt, out[0]);
		return 0;
	}
	ValId x = dq(L, in[0], in[1], opt(L, in, 2)), y;
	int32_t r = shp(L, in[0])->rank;
	bool last = attr_int(n, "channels_last", 0) != 0;
	int64_t to_f[MAX_RANK], to_l[MAX_RANK];
	if (last) {
		/* NHWC -> NCHW: 0, r-1, 1..r-2; and back */
		to_f[0] = to_l[0] = 0;
		to_f[1] = r - 1;
		to_l[r - 1] = 1;
		for (int32_t i = 2; i < r; i++)
			to_f[i] = i - 1, to_l[i - 1] = i;
		if (r < 3)
			return error("node '%s' (%s): channels_last needs rank "
				     "3 or more", n->name, n->op_type);
		x = transpose(L, x, to_f, r, -1);
	}
	switch (n->op) {
	case OP_MS_QLinearSigmoid:
		y = OP1(L, "Sigmoid", -1, x);
		break;
	case OP_MS_QLinearLeakyRelu:
		y = OP1(L, "LeakyRelu", -1, x);
		attr_f(L, "alpha", attr_float(n, "alpha", 0.01f));
		break;
	case OP_MS_QLinearGlobalAveragePool:
		y = OP1(L, "GlobalAveragePool", -1, x);
		break;
	case OP_MS_QLinearAveragePool: {
		y = OP1(L, "AveragePool", -1, x);
		static const char *const keep[] = { "auto_pad", "ceil_mode",
			"count_include_pad", "kernel_shape", "pads", "strides" };
		for (size_t i = 0; i < sizeof(keep) / sizeof(*keep); i++) {
			const Attr *a = node_attr(n, keep[i]);
			if (a)
				*node_add_attr(L->g, last_node(L), a->name,
					       (AttrType)a->type) = *a;
		}
		break;
	}
	default: /* QLinearSoftmax */
		if (low_softmax(L, x, r, &y) < 0)
			return -1;
	}
	if (last)
		y = transpose(L, y, to_l, r, -1);
	qz(L, y, in[3], opt(L, in, 4), dt, out[0]);
	return 0;
}

static int low_qgemm(Low *L, const ValId *in, const ValId *out)
{
	const Node *n = L->n;
	bool tb = attr_int(n, "transB", 0) != 0;
	float alpha = attr_float(n, "alpha", 1.0f);
	ValId a = dq(L, in[0], in[1], in[2]);
	ValId b = dq(L, in[3], in[4], in[5]);
	if (shape_numel(shp(L, in[4])) > 1) {
		if (L->opset < 13)
			return error("node '%s' (QGemm): per-column B scales "
				     "need opset 13", n->name);
		attr_i(L, "axis", tb ? 0 : 1);
	}
	ValId c = opt(L, in, 6), ys = opt(L, in, 7);
	if (c >= 0) {
		ValId k = OP1(L, "Mul", -1, OP1(L, "Mul", -1, cf(L, alpha),
						in[1]), in[4]);
		c = OP1(L, "Mul", -1, cast(L, c, DT_FLOAT, -1), k);
	}
	ValId y = c >= 0 ? OP1(L, "Gemm", ys >= 0 ? -1 : out[0], a, b, c)
			 : OP1(L, "Gemm", ys >= 0 ? -1 : out[0], a, b);
	attr_f(L, "alpha", alpha);
	attr_i(L, "transA", attr_int(n, "transA", 0));
	attr_i(L, "transB", tb);
	if (ys >= 0)
		qz(L, y, ys, opt(L, in, 8), L->g->vals[out[0]].dtype, out[0]);
	return 0;
}

/* ---- transformer ops ------------------------------------------------------ */

static int low_embed_ln(Low *L, const ValId *in, const ValId *out)
{
	const Node *n = L->n;
	ValId ids = in[0], seg = opt(L, in, 1), mask = opt(L, in, 7);
	ValId pids = opt(L, in, 8);
	if (need_static(L, ids) < 0)
		return -1;
	int64_t B = shp(L, ids)->dims[0], S = shp(L, ids)->dims[1];
	ValId e = OP1(L, "Gather", -1, in[2], ids), p;
	if (pids >= 0) {
		p = OP1(L, "Gather", -1, in[3], pids);
	} else {
		int64_t pos[1024];
		if (S > 1024)
			return error("node '%s' (EmbedLayerNormalization): "
				     "sequence of %lld, at most 1024 in its "
				     "standard form", n->name, (long long)S);
		for (int64_t i = 0; i < S; i++)
			pos[i] = i;
		p = OP1(L, "Gather", -1, in[3], ci64(L, pos, S));
	}
	ValId sum = OP1(L, "Add", seg >= 0 ? -1 : (n->noutputs > 2 ? out[2] : -1),
			e, p);
	if (seg >= 0)
		sum = OP1(L, "Add", n->noutputs > 2 ? out[2] : -1, sum,
			  OP1(L, "Gather", -1, in[4], seg));
	if (norm(L, sum, in[5], in[6], 3, 2, attr_float(n, "epsilon", 1e-12f),
		 false, out[0], -1, -1) < 0)
		return -1;
	if (n->noutputs < 2 || out[1] < 0)
		return 0;
	if (mask >= 0) {
		int64_t ax = 1;
		reduce(L, "ReduceSum", mask, &ax, 1, out[1]);
		attr_i(L, "keepdims", 0);
		return 0;
	}
	int32_t zeros[1024] = { 0 };
	if (B > 1024)
		return error("node '%s': batch of %lld, at most 1024 in its "
			     "standard form", n->name, (long long)B);
	OP1(L, "Identity", out[1],
	    konst(L, DT_INT32, &(Shape){ 1, { B } }, zeros));
	return 0;
}

static int low_rotary(Low *L, const ValId *in, const ValId *out)
{
	const Node *n = L->n;
	ValId x = in[0], pid = in[1];
	if (need_static(L, x) < 0 || need_static(L, pid) < 0 ||
	    need_static(L, in[2]) < 0)
		return -1;
	const Shape *xs = shp(L, x);
	bool bnsh = xs->rank == 4, inter = attr_int(n, "interleaved", 0);
	int64_t B = xs->dims[0], S = xs->dims[bnsh ? 2 : 1];
	int64_t nh = attr_int(n, "num_heads", 0), rd;
	int64_t half = shp(L, in[2])->dims[1], N, h;
	if (bnsh)
		N = xs->dims[1], h = xs->dims[3];
	else if (nh > 0)
		N = nh, h = xs->dims[2] / nh;
	else
		h = 2 * half, N = xs->dims[2] / h;
	rd = 2 * half;
	/* the positions, the caches' rows: [S] or [B, S] */
	ValId pos = pid;
	if (shape_numel(shp(L, pid)) == 1) {
		int64_t r[1024];
		if (S > 1024)
			return error("node '%s' (RotaryEmbedding): sequence of "
				     "%lld, at most 1024 in its standard form",
				     n->name, (long long)S);
		for (int64_t i = 0; i < S; i++)
			r[i] = i;
		pos = OP1(L, "Add", -1, reshape(L, pid, (int64_t[]){ 1 }, 1, -1),
			  ci64(L, r, S));
	}
	/* cos and sin as [B|1, S, 1, half] (by heads) or [B|1, 1, S, half] */
	int64_t cb = shape_numel(shp(L, pid)) == 1 ? 1 : B;
	int64_t cs4[4] = { cb, bnsh ? 1 : S, bnsh ? S : 1, half };
	int64_t cs5[5] = { cb, bnsh ? 1 : S, bnsh ? S : 1, half, 1 };
	ValId co = OP1(L, "Gather", -1, in[2], pos);
	ValId si = OP1(L, "Gather", -1, in[3], pos);
	co = reshape(L, co, inter ? cs5 : cs4, inter ? 5 : 4, -1);
	si = reshape(L, si, inter ? cs5 : cs4, inter ? 5 : 4, -1);
	ValId xh = bnsh ? x : reshape(L, x, (int64_t[]){ B, S, N, h }, 4, -1);
	ValId xr = rd < h ? slice(L, xh, 3, 0, rd) : xh, y;
	if (inter) {
		ValId p = reshape(L, xr, (int64_t[]){ cs4[0] == 1 ? B : B,
						      bnsh ? N : S,
						      bnsh ? S : N, half, 2 },
				  5, -1);
		ValId a = slice(L, p, 4, 0, 1), b = slice(L, p, 4, 1, 2);
		ValId y1 = OP1(L, "Sub", -1, OP1(L, "Mul", -1, a, co),
			       OP1(L, "Mul", -1, b, si));
		ValId y2 = OP1(L, "Add", -1, OP1(L, "Mul", -1, b, co),
			       OP1(L, "Mul", -1, a, si));
		y = reshape(L, concat(L, (ValId[]){ y1, y2 }, 2, 4, -1),
			    (int64_t[]){ B, bnsh ? N : S, bnsh ? S : N, rd }, 4,
			    -1);
	} else {
		ValId a = slice(L, xr, 3, 0, half), b = slice(L, xr, 3, half, rd);
		ValId y1 = OP1(L, "Sub", -1, OP1(L, "Mul", -1, a, co),
			       OP1(L, "Mul", -1, b, si));
		ValId y2 = OP1(L, "Add", -1, OP1(L, "Mul", -1, b, co),
			       OP1(L, "Mul", -1, a, si));
		y = concat(L, (ValId[]){ y1, y2 }, 2, 3, -1);
	}
	if (rd < h)
		y = concat(L, (ValId[]){ y, slice(L, xh, 3, rd, h) }, 2, 3, -1);
	if (bnsh)
		OP1(L, "Identity", out[0], y);
	else
		reshape(L, y, xs->dims, 3, out[0]);
	return 0;
}

/* x [B, S, N h] as heads [B, N, S, h]. */
static ValId heads(Low *L, ValId x, int64_t nh, int64_t h)
{
	ValId r = reshape(L, x, (int64_t[]){ 0, 0, nh, h }, 4, -1);
	return transpose(L, r, (int64_t[]){ 0, 2, 1, 3 }, 4, -1);
}

/* The additive mask of mask_index m (-1: none) and unidirectional, for
 * scores [B, N, S, T] (P keys of the past), broadcastable to them; -1 if
 * none. */
static ValId add_mask(Low *L, ValId m, int64_t B, int64_t S, int64_t T,
		      int64_t P, bool causal, float filter)
{
	ValId add = -1;
	if (m >= 0) {
		const Shape *ms = shp(L, m);
		int32_t zero = 0;
		ValId attend;
		if (ms->rank == 1) {
			int32_t pos[4096];
			if (T > 4096)
				return error("node '%s': %lld keys, at most 4096 "
					     "in the standard form of its mask",
					     L->n->name, (long long)T);
			for (int64_t j = 0; j < T; j++)
				pos[j] = (int32_t)j;
			ValId pv = konst(L, DT_INT32, &(Shape){ 2, { 1, T } },
					 pos);
			bool two = ms->dims[0] == 2 * B;
			ValId ends = two ? slice(L, m, 0, 0, B) : m;
			ends = unsq(L, ends, (int64_t[]){ 1 }, 1, -1);
			attend = OP1(L, "Less", -1, pv, ends);
			if (two) {
				ValId st = unsq(L, slice(L, m, 0, B, 2 * B),
						(int64_t[]){ 1 }, 1, -1);
				ValId early = OP1(L, "Less", -1, pv, st);
				attend = OP1(L, "And", -1, attend,
					     OP1(L, "Not", -1, early));
			}
		} else {
			attend = OP1(L, "Greater", -1, m,
				     konst(L, DT_INT32, &(Shape){ 0 }, &zero));
		}
		add = OP1(L, "Where", -1, attend, cf(L, 0.0f), cf(L, filter));
		add = ms->rank == 3 ? unsq(L, add, (int64_t[]){ 1 }, 1, -1)
				    : unsq(L, add, (int64_t[]){ 1, 2 }, 2, -1);
	}
	if (causal) {
		if (S * T > (1 << 22))
			return error("node '%s': its causal mask of %lld x %lld "
				     "is too large for its standard form",
				     L->n->name, (long long)S, (long long)T);
		int64_t st = S * T;
		float *c = arena_alloc(L->g->arena,
				       (size_t)(st > 0 ? st : 1) * sizeof(float));
		for (int64_t s = 0; s < S; s++)
			for (int64_t j = 0; j < T; j++)
				c[s * T + j] = j > P + s ? filter : 0.0f;
		ValId cv = konst(L, DT_FLOAT, &(Shape){ 2, { S, T } }, c);
		add = add >= 0 ? OP1(L, "Add", -1, add, cv) : cv;
	}
	return add;
}

/* softmax(scale q k^T + mask + bias) v of heads q [B, N, S, h], k [B,
 * N, T, h], v [B, N, T, hv] into out [B, S, N hv]. */
static void attend(Low *L, ValId q, ValId k, ValId v, float scale,
		   ValId mask, ValId bias, ValId out)
{
	ValId kt = transpose(L, k, (int64_t[]){ 0, 1, 3, 2 }, 4, -1);
	ValId s = OP1(L, "Mul", -1, OP1(L, "MatMul", -1, q, kt), cf(L, scale));
	if (mask >= 0)
		s = OP1(L, "Add", -1, s, mask);
	if (bias >= 0)
		s = OP1(L, "Add", -1, s, bias);
	ValId p = OP1(L, "Softmax", -1, s);
	attr_i(L, "axis", 3);
	ValId o = transpose(L, OP1(L, "MatMul", -1, p, v),
			    (int64_t[]){ 0, 2, 1, 3 }, 4, -1);
	reshape(L, o, (int64_t[]){ 0, 0, -1 }, 3, out);
}

static float low_scale(const Node *n, int64_t h)
{
	float s = attr_float(n, "scale", 0.0f);
	return s != 0 ? s : (float)(1 / sqrt((double)h));
}

static int low_attention(Low *L, const ValId *in, const ValId *out)
{
	const Node *n = L->n;
	ValId x = in[0], w = in[1], bias = opt(L, in, 2), m = opt(L, in, 3);
	ValId past = opt(L, in, 4), ab = opt(L, in, 5);
	if (need_static(L, x) < 0 || need_static(L, w) < 0 ||
	    need_static(L, past) < 0 || need_static(L, m) < 0)
		return -1;
	int64_t nh = attr_int(n, "num_heads", 1), W = shp(L, w)->dims[1];
	int64_t hq = W / 3, hk = W / 3, hv = W / 3;
	const int64_t *sz;
	if (attr_ints(n, "qkv_hidden_sizes", &sz) == 3)
		hq = sz[0], hk = sz[1], hv = sz[2];
	int64_t B = shp(L, x)->dims[0], S = shp(L, x)->dims[1];
	int64_t P = past >= 0 ? shp(L, past)->dims[3] : 0, h = hq / nh;
	ValId qkv = OP1(L, "MatMul", -1, x, w);
	if (bias >= 0)
		qkv = OP1(L, "Add", -1, qkv, bias);
	ValId q = heads(L, slice(L, qkv, 2, 0, hq), nh, h);
	ValId k = heads(L, slice(L, qkv, 2, hq, hq + hk), nh, hk / nh);
	ValId v = heads(L, slice(L, qkv, 2, hq + hk, W), nh, hv / nh);
	if (past >= 0) {
		int64_t kv[4] = { B, nh, P, h };
		ValId pk = reshape(L, slice(L, past, 0, 0, 1), kv, 4, -1);
		ValId pv = reshape(L, slice(L, past, 0, 1, 2), kv, 4, -1);
		k = concat(L, (ValId[]){ pk, k }, 2, 2, -1);
		v = concat(L, (ValId[]){ pv, v }, 2, 2, -1);
	}
	if (n->noutputs > 1 && out[1] >= 0)
		concat(L, (ValId[]){ unsq(L, k, (int64_t[]){ 0 }, 1, -1),
				     unsq(L, v, (int64_t[]){ 0 }, 1, -1) },
		       2, 0, out[1]);
	ValId mask = add_mask(L, m, B, S, P + S, P,
			      attr_int(n, "unidirectional", 0),
			      attr_float(n, "mask_filter_value", -10000.0f));
	if ((m >= 0 || attr_int(n, "unidirectional", 0)) && mask < 0)
		return -1;
	attend(L, q, k, v, low_scale(n, h), mask, ab, out[0]);
	return 0;
}

static int low_mha(Low *L, const ValId *in, const ValId *out)
{
	const Node *n = L->n;
	ValId q = in[0], k = in[1], v = in[2], bias = opt(L, in, 3);
	ValId m = opt(L, in, 4), ab = opt(L, in, 5);
	ValId pk = opt(L, in, 6), pv = opt(L, in, 7);
	if (need_static(L, q) < 0 || need_static(L, k) < 0 ||
	    need_static(L, v) < 0 || need_static(L, pk) < 0 ||
	    need_static(L, m) < 0)
		return -1;
	int64_t nh = attr_int(n, "num_heads", 1), hq = shp(L, q)->dims[2];
	int64_t B = shp(L, q)->dims[0], S = shp(L, q)->dims[1], h = hq / nh;
	bool split = shp(L, k)->rank == 4;
	int64_t L_ = split ? shp(L, k)->dims[2] : shp(L, k)->dims[1];
	int64_t P = pk >= 0 ? shp(L, pk)->dims[2] : 0;
	if (bias >= 0) {
		int64_t hv = shp(L, v)->dims[2];
		q = OP1(L, "Add", -1, q, slice(L, bias, 0, 0, hq));
		k = OP1(L, "Add", -1, k, slice(L, bias, 0, hq, 2 * hq));
		v = OP1(L, "Add", -1, v, slice(L, bias, 0, 2 * hq,
					      2 * hq + hv));
	}
	q = heads(L, q, nh, h);
	if (!split) {
		k = heads(L, k, nh, h);
		v = heads(L, v, nh, shp(L, in[2])->dims[2] / nh);
		if (pk >= 0) {
			k = concat(L, (ValId[]){ pk, k }, 2, 2,
				   n->noutputs > 1 ? out[1] : -1);
			v = concat(L, (ValId[]){ pv, v }, 2, 2,
				   n->noutputs > 2 ? out[2] : -1);
		} else {
			if (n->noutputs > 1 && out[1] >= 0)
				k = OP1(L, "Identity", out[1], k);
			if (n->noutputs > 2 && out[2] >= 0)
				v = OP1(L, "Identity", out[2], v);
		}
	}
	ValId mask = add_mask(L, m, B, S, P + L_, P,
			      attr_int(n, "unidirectional", 0),
			      attr_float(n, "mask_filter_value", -10000.0f));
	if ((m >= 0 || attr_int(n, "unidirectional", 0)) && mask < 0)
		return -1;
	attend(L, q, k, v, low_scale(n, h), mask, ab, out[0]);
	return 0;
}

/* ---- dispatch --------------------------------------------------------------- */

typedef int LowFn(Low *L, const ValId *in, const ValId *out);

static LowFn *lowering(int op)
{
	switch (op) {
	case OP_MS_Gelu:
	case OP_MS_FastGelu:
	case OP_MS_BiasGelu:
	case OP_MS_QuickGelu:
		return low_gelu;
	case OP_MS_BiasAdd:
		return low_bias_add;
	case OP_MS_FusedMatMul:
		return low_fused_matmul;
	case OP_MS_SkipLayerNormalization:
	case OP_MS_SkipSimplifiedLayerNormalization:
		return low_skip_norm;
	case OP_MS_SimplifiedLayerNormalization:
		return low_rms_norm;
	case OP_MS_MatMulIntegerToFloat:
		return low_mm_int_float;
	case OP_MS_DynamicQuantizeMatMul:
		return low_dynquant_matmul;
	case OP_MS_QLinearAdd:
	case OP_MS_QLinearMul:
	case OP_MS_QLinearSigmoid:
	case OP_MS_QLinearLeakyRelu:
	case OP_MS_QLinearConcat:
	case OP_MS_QLinearGlobalAveragePool:
	case OP_MS_QLinearAveragePool:
	case OP_MS_QLinearSoftmax:
		return low_qlinear;
	case OP_MS_QGemm:
		return low_qgemm;
	case OP_MS_EmbedLayerNormalization:
		return low_embed_ln;
	case OP_MS_RotaryEmbedding:
		return low_rotary;
	case OP_MS_Attention:
		return low_attention;
	case OP_MS_MultiHeadAttention:
		return low_mha;
	default:
		return NULL;
	}
}

bool contrib_has_form(const Node *n) { return lowering(n->op) != NULL; }

static int lower(Graph *dst, const Node *n, int64_t opset, const ValId *ins,
		 const ValId *outs, bool own)
{
	Low L = { .g = dst, .n = n, .opset = opset, .own = own };
	LowFn *f = lowering(n->op);
	if (!f)
		return error("node '%s' (%s): no standard ONNX form", n->name,
			     n->op_type);
	return f(&L, ins, outs);
}

int contrib_lower(Graph *dst, const Node *n, int64_t opset, const ValId *ins,
		  const ValId *outs)
{
	return lower(dst, n, opset, ins, outs, false);
}

/* ---- the pass ------------------------------------------------------------------ */

/* The ops whose standard form runs as fast as a kernel of their own
 * would: elementwise chains the fuse pass takes into the MatMul or Conv
 * before them (GELU, the bias), products the fast paths of MatMul and
 * the integer ops run (FusedMatMul, and DynamicQuantizeMatMul, which
 * passes/qfuse.c makes one op again); of float32 (the forms' constants
 * are).  MatMulIntegerToFloat keeps its node: its scales and bias per
 * column after a MatMulInteger would run on the reference Mul and Add,
 * where runtime/contrib.c's kernel takes it whole. */
static bool lowered_for_speed(const Graph *g, const Node *n)
{
	ValId x = n->ninputs > 0 ? n->inputs[0] : -1;
	if (x < 0)
		return false;
	switch (n->op) {
	case OP_MS_Gelu:
	case OP_MS_FastGelu:
	case OP_MS_BiasGelu:
	case OP_MS_QuickGelu:
	case OP_MS_BiasAdd:
	case OP_MS_DynamicQuantizeMatMul:
		return g->vals[x].dtype == DT_FLOAT;
	case OP_MS_FusedMatMul:
		return g->vals[x].dtype == DT_FLOAT &&
		       g->vals[x].shape.rank >= 0 &&
		       g->vals[n->inputs[1]].shape.rank >= 0;
	default:
		return false;
	}
}

typedef struct LowerPass {
	int64_t opset;
	int32_t done; /* nodes written out */
} LowerPass;

static int lower_graph(Graph *g, void *ctx)
{
	LowerPass *P = ctx;
	const int64_t *opset = &P->opset;
	int32_t n0 = g->nnodes, done = 0;
	uint8_t *gone = xcalloc((size_t)n0 + 1, 1);
	int rc = 0;
	for (int32_t i = 0; i < n0 && !rc; i++) {
		Node n = g->nodes[i]; /* graph_add_node may move the array */
		if (!lowered_for_speed(g, &n))
			continue;
		rc = lower(g, &n, *opset, n.inputs, n.outputs, true);
		gone[i] = 1;
		done++;
	}
	if (!rc && done) {
		int32_t k = 0;
		for (int32_t i = 0; i < g->nnodes; i++)
			if (i >= n0 || !gone[i])
				g->nodes[k++] = g->nodes[i];
		g->nnodes = k;
	}
	free(gone);
	P->done += done;
	return rc < 0 ? -1 : done ? graph_toposort(g) : 0;
}

static int find_lowered(Graph *g, void *ctx)
{
	for (int32_t i = 0; i < g->nnodes; i++) {
		int op = g->nodes[i].op;
		*(bool *)ctx |= op == OP_MS_Gelu || op == OP_MS_FastGelu ||
				op == OP_MS_BiasGelu || op == OP_MS_QuickGelu ||
				op == OP_MS_BiasAdd || op == OP_MS_FusedMatMul ||
				op == OP_MS_DynamicQuantizeMatMul;
	}
	return 0;
}

bool contrib_applies(const Model *m, const PassOptions *o)
{
	bool found = false;
	if (!o->no_fuse && model_opset(m) > 0)
		graph_walk(m->graph, find_lowered, &found);
	return found;
}

int pass_contrib(Model *m, Graph *g, const PassOptions *o)
{
	LowerPass P = { .opset = model_opset(m) };
	if (o->no_fuse || P.opset <= 0)
		return 0;
	if (graph_walk(g, lower_graph, &P) < 0)
		return -1;
	if (!P.done)
		return 0;
	/* the new values' types; the weights' transposes folded */
	return infer_graph(m, g) < 0 || graph_dce(g, NULL) < 0 ? -1 : 0;
}
