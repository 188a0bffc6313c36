/*
 * passes/fuse.c - fusion, planned at compile time (issue 15).
 *
 * In each static graph (a static compile's main graph, each gear branch;
 * not the dynamic graph of --hybrid, nor subgraph bodies), an anchor
 * Conv, ConvTranspose, Gemm or MatMul of fp32 and static shape takes in
 * the nodes after it, each of which must be the only user of the value
 * before it (the written-out HardSwish excepted, below):
 *  1. BatchNormalization (inference form, constant scale, B, mean, var)
 *     after a Conv, ConvTranspose or Gemm is folded into its weights:
 *     W' = W * s, B' = (B - mean) * s + bias with s = scale / sqrt(var +
 *     eps), per output channel; so are, after a Conv, ConvTranspose or
 *     Gemm (or its BatchNormalization), Add, Sub, Mul and Div by a
 *     constant of one value or one per output channel ([C], [1,C,1,1];
 *     K - x too, x / K only): W' = W * m, B' = B * m + a, one step at a
 *     time (Paddle2ONNX writes PP-LCNetV3's learnable affine so; with
 *     the anchor's output then read by the affine alone, the HardSwish
 *     after it sees the folded conv's output as its x); never into W'
 *     or B' that are not finite (match_bn and match_affine say when a
 *     fold is exact).  The new tensors are made once per distinct set of
 *     source tensors for the whole model (a cache shared by the gears,
 *     which are fused on several threads), so the .om stores them once;
 *  2. after a Conv, an Add of a tensor of exactly its output's shape and
 *     dtype (a residual) becomes FusedConv's Z; after a MatMul, an Add of
 *     a constant 1-D bias over the last axis becomes FusedMatMul's Bias;
 *  3. activations, in order: each standard op that is a row of
 *     compiler/act.h's table (Relu, LeakyRelu, Clip with constant
 *     bounds, min <= max, Sigmoid, HardSigmoid, HardSwish, Tanh, Mish,
 *     Softplus, Elu, Selu; its attributes or their defaults as the
 *     parameters), and the written-out forms:
 *       s * Clip(a * x + b, 0, h) with s * h = 1 (HardSigmoid(s a, s b):
 *       Clip(x + 3, 0, 6) / 6, Clip(x * a + b, 0, 1)) and x times such a
 *       chain of x, scaled, with a = h / 6 and b = h / 2 (HardSwish:
 *       x * Clip(x + 3, 0, 6) / 6, x * HardSigmoid-chain(x)), the scale
 *       s h other than 1 a Linear(s h, 0) after it (the next learnable
 *       affine's Mul, in Paddle2ONNX's PP-LCNetV3); there x has exactly
 *       the two users, the chain's start and the Mul;
 *       gated forms x * arm(x), the product's operands in either order
 *       and a scale anywhere (on x's side, at the arm's end, after the
 *       product; Div by c as Mul by 1/c), x again with two users: GELU
 *       (Gelu) x * (1 + Erf(x / sqrt(2))) * 0.5 (torch.onnx; Mul by
 *       0.70710677 for the Div: tf2onnx), SiLU/Swish (Silu)
 *       x * Sigmoid(x), Mish x * Tanh(Softplus(x)) with Softplus as its
 *       op or as Log(1 + Exp(x));
 *       GELU's tanh form (GeluTanh) x * (1 + Tanh(sqrt(2/pi) * (x +
 *       0.044715 * x^3))) * 0.5, x^3 as Pow(x, 3) or x * x * x;
 *     a FusedActivation (the contrib pass writes ONNX Runtime's Gelu,
     FastGelu and BiasGelu as one) adds its activations;
     and Add, Sub, Mul or Div by a constant (Linear(m, a): m * x + a;
 *     successive ones merge: attention's scale after its MatMul; not
 *     across FusedConv's Z, and only into finite floats).
 *     Constants on either side of Add and Mul (K - x and x / K only for
 *     Sub and Div) match alike; every node of a chain keeps x's shape
 *     and dtype; constants are scalars (of one element, any rank), a
 *     written-out form's equal to its own up to float rounding.
 * A Conv, Gemm or MatMul that took in 2 or 3 becomes FusedConv,
 * FusedGemm or FusedMatMul (compiler/ops/fused.c); one that only folded a
 * BatchNormalization stays its op with new weights.  The new node takes
 * the place of the last node taken in (so a residual produced after the
 * anchor is defined before it), the anchor's name and that node's output
 * value: names downstream do not change.  The nodes taken in are then
 * dead and graph_dce() removes them.
 *
 * Then, on what is left, a written-out activation of the list in 3
 * (HardSigmoid, HardSwish, Gelu, Silu, Mish, GeluTanh) after no anchor
 * (after an Add, a Concat, of an input) becomes one FusedActivation(x),
 * the activations after it taken in too, in the slot of its last node.
 *
 * Apart from the anchors, LayerNorm over the last axis written out
 * (ReduceMean, Sub, Pow or Mul, ReduceMean, Add, Sqrt, Div, Mul [, Add]:
 * SVTR's neck from Paddle2ONNX, torch.onnx before opset 17; tf2onnx's
 * Mul by the rsqrt, Reciprocal(Sqrt) or Pow(-0.5), for the Div) becomes one
 * LayerNormalization, whatever the model's opset (gearc export writes it
 * out again before opset 17: passes/unfuse.c).
 *
 * First of all, a Cast to its own dtype, a Dropout that keeps every
 * element (inference, or a ratio of 0) and a Pad of zeros all round
 * become Identity, which the memory plan makes a view, and a channel
 * shuffle (Reshape, Transpose, Reshape) a Gather of the channels.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/act.h"
#include "compiler/ops/opimpl.h"
#include "passes.h"

enum { A_CONV, A_CONVT, A_GEMM, A_MATMUL };

#define MAX_ACTS 16

typedef struct Fuse {
	Model *m;
	Graph *g;
	int64_t opset;
	int32_t *uses;		/* per value: node inputs and outer refs */
	int32_t *user1, *user2; /* per value: the first two user nodes */
	uint8_t *taken;		/* per node: taken into a chain (dead) */
} Fuse;

/* A chain being matched from an anchor. */
typedef struct Chain {
	int kind;
	const Node *anchor;
	ValId cur;    /* the value the chain has reached */
	int32_t last; /* the node producing it */
	ValId w, b;   /* weights (after a BatchNormalization fold) */
	float gemm_beta;
	ValId extra; /* Z or Bias, or -1 */
	int z_after; /* activations before Z is added (FusedConv z_after) */
	int nacts;
	int act[MAX_ACTS]; /* ActKind */
	float par[2 * MAX_ACTS];
	bool changed; /* weights folded */
} Chain;

/* ---- uses --------------------------------------------------------------- */

static void add_use(Fuse *F, ValId v, int32_t node)
{
	if (v < 0 || v >= F->g->nvals)
		return;
	if (!F->uses[v]++)
		F->user1[v] = node;
	else if (F->uses[v] == 2)
		F->user2[v] = node;
}

static void count_outer(Fuse *F, const Graph *sub, int32_t node)
{
	for (ValId i = 0; i < sub->nvals; i++)
		if (sub->vals[i].kind == VAL_OUTER)
			add_use(F, sub->vals[i].outer, node);
}

static void count_uses(Fuse *F)
{
	Graph *g = F->g;
	F->uses = xcalloc((size_t)g->nvals + 1, sizeof(int32_t));
	F->user1 = xcalloc((size_t)g->nvals + 1, sizeof(int32_t));
	F->user2 = xcalloc((size_t)g->nvals + 1, sizeof(int32_t));
	F->taken = xcalloc((size_t)g->nnodes + 1, 1);
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		for (int32_t k = 0; k < n->ninputs; k++)
			add_use(F, n->inputs[k], i);
		for (int32_t k = 0; k < n->nattrs; k++) {
			const Attr *a = &n->attrs[k];
			if (a->type == ATTR_GRAPH && a->g)
				count_outer(F, a->g, i);
			for (int32_t j = 0; a->type == ATTR_GRAPHS && j < a->n; j++)
				count_outer(F, a->graphs[j], i);
		}
	}
	for (int32_t k = 0; k < g->noutputs; k++)
		add_use(F, g->outputs[k], -1); /* never fused away */
}

/* The node that is v's only user, or NULL (or if a chain took it in:
 * its slot is dead, a fused node reads v now). */
static Node *sole_user(Fuse *F, ValId v)
{
	if (F->uses[v] != 1 || F->user1[v] < 0 || F->taken[F->user1[v]])
		return NULL;
	return &F->g->nodes[F->user1[v]];
}

/* ---- matching helpers -------------------------------------------------- */

static bool is_op(const Node *n, int op) { return n && n->op == op; }

/* v holds one constant float value. */
static bool scalar_const(Fuse *F, ValId v, float *out)
{
	if (v < 0)
		return false;
	const Tensor *t = F->g->vals[v].konst;
	if (!t || t->dtype != DT_FLOAT || shape_numel(&t->shape) != 1)
		return false;
	*out = ((const float *)t->data)[0];
	return true;
}

/* n has one output of x's dtype and shape (its constants broadcast into
 * x, not x into them). */
static bool keeps_shape(Fuse *F, const Node *n, ValId x)
{
	if (n->noutputs < 1 || n->outputs[0] < 0)
		return false;
	for (int32_t k = 1; k < n->noutputs; k++)
		if (n->outputs[k] >= 0 && F->uses[n->outputs[k]])
			return false;
	const Value *o = &F->g->vals[n->outputs[0]], *v = &F->g->vals[x];
	return o->dtype == v->dtype && shape_equal(&o->shape, &v->shape);
}

/* v, a parameter computed in double, is finite as a float: affine steps
 * merged into one (m * (p x + q) + a as (m p) x + (m q + a)) are exact in
 * finite arithmetic only ((x + 1) * 1e30 * 1e30 is +-inf where inf x + inf
 * is NaN for x < 0). */
static bool finite_float(double v)
{
	return isfinite((float)v);
}

/* n is Add/Sub/Mul/Div of x and a constant scalar: as y = m * x + a.
 * (How each of these four is an affine map is this pass's own fact, not
 * the op table's.)  x / k is x * (1 / k) within an ulp where 1 / k is a
 * float: not for a denormal k, whose reciprocal overflows to inf (x / k
 * finite for small x, x * inf not). */
static bool affine_step(Fuse *F, const Node *n, ValId x, double *m,
			double *a)
{
	float k;
	if (!n || n->ninputs != 2 || !keeps_shape(F, n, x))
		return false;
	bool first = n->inputs[0] == x && n->inputs[1] != x;
	bool second = n->inputs[1] == x && n->inputs[0] != x;
	if (!(first && scalar_const(F, n->inputs[1], &k)) &&
	    !(second && scalar_const(F, n->inputs[0], &k)))
		return false;
	*m = 1, *a = 0;
	switch (n->op) {
	case OP_Add:
		*a = k;
		return true;
	case OP_Sub:
		if (!first)
			return false;
		*a = -k;
		return true;
	case OP_Mul:
		*m = k;
		return true;
	case OP_Div:
		if (!first || k == 0 || !finite_float(1.0 / k))
			return false;
		*m = 1.0 / k;
		return true;
	}
	return false;
}

/* Scale steps, Mul or Div by a constant, from node n (which reads v)
 * on: their product into *s, the last one's node into *end (-1 if
 * none); the value reached. */
static ValId scale_from(Fuse *F, Node *n, ValId v, double *s, int32_t *end)
{
	double m, a;
	*s = 1, *end = -1;
	for (; (is_op(n, OP_Mul) || is_op(n, OP_Div)) &&
	       affine_step(F, n, v, &m, &a);
	     n = sole_user(F, v)) {
		*s *= m;
		v = n->outputs[0];
		*end = (int32_t)(n - F->g->nodes);
	}
	return v;
}

/* The scale steps after v: scale_from v's only user. */
static ValId scale_after(Fuse *F, ValId v, double *s, int32_t *end)
{
	return scale_from(F, sole_user(F, v), v, s, end);
}

/* Clip's constant bounds as its kernel takes them (absent: +-inf, which
 * keeps infinities, as no bound does); false if not constant or unless
 * min <= max: with min > max Clip is max everywhere (its kernel clamps to
 * min, then to max), the activation's x < min ? min : x > max ? max : x
 * is not; a NaN bound is left to the op too. */
static bool clip_bounds(Fuse *F, const Node *n, float *lo, float *hi)
{
	*lo = -INFINITY, *hi = INFINITY;
	if (F->opset < 11) {
		*lo = clip_attr_bound(n, F->opset, 0);
		*hi = clip_attr_bound(n, F->opset, 1);
	} else if ((n->ninputs > 1 && n->inputs[1] >= 0 &&
		    !scalar_const(F, n->inputs[1], lo)) ||
		   (n->ninputs > 2 && n->inputs[2] >= 0 &&
		    !scalar_const(F, n->inputs[2], hi))) {
		return false;
	}
	return *lo <= *hi;
}

/* x is one of a written-out form's constants, want, as exporters write
 * it: rounded to float, times or over a few others (1 / 6 as 0.16666667,
 * sqrt(2) as 1.4142135, Div by 6 as Mul by 1 / 6): within 4 FLT_EPSILON
 * of it, relative.  Not 0.7071 for 1 / sqrt(2): that is another function
 * (off by 9.6e-6 relative), which the graph computes and the fused form
 * would not. */
static bool near(double x, double want)
{
	return fabs(x - want) <= 4 * FLT_EPSILON * fabs(want);
}

/* A written-out HardSigmoid-like chain from x, starting at node first:
 * affine steps (m, a), Clip(0, h), scale steps s, each merged into finite
 * floats.  *end is its output. */
typedef struct HsChain {
	double m, a, h, s;
	ValId end;
	int32_t endnode;
	bool stepped; /* an affine or scale step besides the Clip */
} HsChain;

static bool hs_chain(Fuse *F, Node *first, ValId x, HsChain *c)
{
	Node *n = first;
	ValId v = x;
	double m, a;
	c->m = 1, c->a = 0, c->stepped = false;
	while (n && affine_step(F, n, v, &m, &a)) {
		c->m *= m, c->a = c->a * m + a;
		v = n->outputs[0], c->stepped = true;
		n = sole_user(F, v);
	}
	float lo, hi;
	if (!finite_float(c->m) || !finite_float(c->a) || !is_op(n, OP_Clip) ||
	    n->inputs[0] != v || !keeps_shape(F, n, v) ||
	    !clip_bounds(F, n, &lo, &hi) || lo != 0 || !(hi > 0) ||
	    hi > 1e30f)
		return false;
	int32_t end;
	c->h = hi;
	c->end = scale_after(F, n->outputs[0], &c->s, &end);
	if (!finite_float(c->s))
		return false;
	c->endnode = end >= 0 ? end : (int32_t)(n - F->g->nodes);
	c->stepped |= end >= 0;
	return true;
}

/* ---- activations -------------------------------------------------------- */

static void push_act(Chain *ch, int kind, float alpha, float beta)
{
	ch->act[ch->nacts] = kind;
	ch->par[2 * ch->nacts] = alpha;
	ch->par[2 * ch->nacts + 1] = beta;
	ch->nacts++;
}

/* y = m * x + a after the chain: a Linear activation, merged into a
 * Linear just before it unless Z is added between them (z_after: the
 * one before Z scales x only, this one x + Z) or the merged parameters
 * are not finite floats. */
static void push_linear(Chain *ch, double m, double a)
{
	int last = ch->nacts - 1;
	if (last >= ch->z_after && last >= 0 && ch->act[last] == ACT_Linear) {
		double mm = m * ch->par[2 * last];
		double aa = m * ch->par[2 * last + 1] + a;
		if (finite_float(mm) && finite_float(aa)) {
			ch->par[2 * last] = (float)mm;
			ch->par[2 * last + 1] = (float)aa;
			return;
		}
	}
	push_act(ch, ACT_Linear, (float)m, (float)a);
}

static void advance(Fuse *F, Chain *ch, ValId end, int32_t node)
{
	F->taken[node] = 1;
	ch->cur = end;
	ch->last = node;
}

/* x has two users, two nodes no chain took in yet. */
static bool two_users(const Fuse *F, ValId x)
{
	return F->uses[x] == 2 && F->user1[x] >= 0 && F->user2[x] >= 0 &&
	       F->user1[x] != F->user2[x] && !F->taken[F->user1[x]] &&
	       !F->taken[F->user2[x]];
}

/* x * (chain of x), times a scale: HardSwish.  x has two users.
 * x * s * Clip(m x + a, 0, h) = s h * x * clamp01(x m / h + a / h) (h > 0)
 * is s h HardSwish(x) when m / h = 1/6 and a / h = 1/2, to float
 * rounding (near), every merged parameter a finite float, every node of
 * x's shape and dtype (the constants scalars), each value read by the
 * next step alone and x by the chain's start and the product alone. */
static bool match_hswish(Fuse *F, Chain *ch)
{
	ValId x = ch->cur;
	if (!two_users(F, x))
		return false;
	for (int pick = 0; pick < 2; pick++) {
		Node *start = &F->g->nodes[pick ? F->user2[x] : F->user1[x]];
		Node *mul = &F->g->nodes[pick ? F->user1[x] : F->user2[x]];
		HsChain c;
		if (!hs_chain(F, start, x, &c) || !is_op(mul, OP_Mul) ||
		    sole_user(F, c.end) != mul || !keeps_shape(F, mul, x))
			continue;
		if (!((mul->inputs[0] == x && mul->inputs[1] == c.end) ||
		      (mul->inputs[1] == x && mul->inputs[0] == c.end)))
			continue;
		double s;
		int32_t end;
		ValId v = scale_after(F, mul->outputs[0], &s, &end);
		s *= c.s;
		if (!near(c.m / c.h, 1.0 / 6) || !near(c.a / c.h, 0.5) ||
		    !finite_float(s * c.h))
			continue;
		push_act(ch, ACT_HardSwish, 0, 0);
		if (!near(s * c.h, 1))
			push_linear(ch, s * c.h, 0);
		advance(F, ch, v, end >= 0 ? end : (int32_t)(mul - F->g->nodes));
		return true;
	}
	return false;
}

/* The other operand of binary op n with x (x on the side first says:
 * 0 first, 1 second, -1 either), or -1. */
static ValId operand(const Node *n, int op, ValId x, int side)
{
	if (!is_op(n, op) || n->ninputs != 2)
		return -1;
	if (side != 1 && n->inputs[0] == x && n->inputs[1] != x)
		return n->inputs[1];
	if (side != 0 && n->inputs[1] == x && n->inputs[0] != x)
		return n->inputs[0];
	return -1;
}

/* Node n is unary op op of v keeping v's shape: its output, or -1. */
static ValId unary_of(Fuse *F, const Node *n, int op, ValId v)
{
	if (!is_op(n, op) || n->ninputs < 1 || n->inputs[0] != v ||
	    n->noutputs != 1 || !keeps_shape(F, n, v))
		return -1;
	for (int32_t k = 1; k < n->ninputs; k++)
		if (n->inputs[k] >= 0)
			return -1;
	return n->outputs[0];
}

/* v + 1 (either order) by v's only user, then scale steps (their
 * product into *s): the value reached, or -1. */
static ValId plus_one(Fuse *F, ValId v, double *s)
{
	double k, a;
	int32_t end;
	Node *n = sole_user(F, v);
	if (!affine_step(F, n, v, &k, &a) || k != 1 || !near(a, 1))
		return -1;
	return scale_after(F, n->outputs[0], s, &end);
}

/* The arm of a gated activation x * arm(x): from node first (a user of
 * x) to the arm's output, or -1; a scale the arm applies last into *s. */
typedef ValId ArmFn(Fuse *F, Node *first, ValId x, double *s);

/* GELU's: (1 + Erf(x / sqrt(2))) (/ sqrt(2) as Div or Mul by 1/sqrt(2)),
 * scaled. */
static ValId gelu_erf_arm(Fuse *F, Node *first, ValId x, double *s)
{
	double m;
	int32_t end;
	ValId v = scale_from(F, first, x, &m, &end);
	Node *n = end >= 0 ? sole_user(F, v) : first;
	if (!near(m, M_SQRT1_2) || (v = unary_of(F, n, OP_Erf, v)) < 0)
		return -1;
	return plus_one(F, v, s);
}

/* SiLU's (Swish): Sigmoid(x), x scaled by 1 or not at all. */
static ValId silu_arm(Fuse *F, Node *first, ValId x, double *s)
{
	double m;
	int32_t end;
	ValId v = scale_from(F, first, x, &m, &end);
	Node *n = end >= 0 ? sole_user(F, v) : first;
	*s = 1;
	return near(m, 1) ? unary_of(F, n, OP_Sigmoid, v) : -1;
}

/* Softplus(x) from node n: the op, or Log(1 + Exp(x)) (as torch.onnx
 * writes it before opset 18 and tf2onnx does); its output or -1. */
static ValId softplus_of(Fuse *F, Node *n, ValId x)
{
	double s;
	ValId v = unary_of(F, n, OP_Softplus, x);
	if (v >= 0)
		return v;
	if ((v = unary_of(F, n, OP_Exp, x)) < 0 ||
	    (v = plus_one(F, v, &s)) < 0 || s != 1)
		return -1;
	return unary_of(F, sole_user(F, v), OP_Log, v);
}

/* Mish's: Tanh(Softplus(x)). */
static ValId mish_arm(Fuse *F, Node *first, ValId x, double *s)
{
	ValId v = softplus_of(F, first, x);
	*s = 1;
	return v < 0 ? -1 : unary_of(F, sole_user(F, v), OP_Tanh, v);
}

/* Mul n of a and b, in either order, keeping a's shape. */
static bool mul_of(Fuse *F, const Node *n, ValId a, ValId b)
{
	return is_op(n, OP_Mul) && n->ninputs == 2 && keeps_shape(F, n, a) &&
	       ((n->inputs[0] == a && n->inputs[1] == b) ||
		(n->inputs[1] == a && n->inputs[0] == b));
}

/* The x side of a gated product from node other (x's other user): x
 * itself if other is the product, else x through scale steps (their
 * product into *s); -1 if neither. */
static ValId gate_x_side(Fuse *F, Node *other, ValId x, ValId e, double *s)
{
	int32_t end;
	*s = 1;
	if (mul_of(F, other, x, e))
		return x;
	ValId v = scale_from(F, other, x, s, &end);
	return end >= 0 ? v : -1;
}

/* From the arm's output e: the product of x's side hx (x, or x scaled
 * by s1) and e, then scale steps; their value, the last node into
 * *end, the whole scale (with the arm's sa) into *s; -1 if no product. */
static ValId gate_product(Fuse *F, ValId hx, ValId x, ValId e, double sa,
			  double s1, double *s, int32_t *end)
{
	double s2;
	Node *mul = sole_user(F, e);
	if (!mul_of(F, mul, hx, e) || (hx != x && sole_user(F, hx) != mul))
		return -1;
	ValId y = scale_after(F, mul->outputs[0], &s2, end);
	if (*end < 0)
		*end = (int32_t)(mul - F->g->nodes);
	*s = sa * s1 * s2;
	return y;
}

/* x * arm(x) times want, the scale anywhere (on x's side, at the arm's
 * end, after the product): activation kind.  x has two users, the arm's
 * start and the product or a scaling of x.  Scales commute with the
 * product, so this is the activation when the arm is its form with its
 * constants (GELU's 1 / sqrt(2) and the 1 of 1 + Erf; SiLU's Sigmoid of
 * x itself; Mish's Log(1 + Exp(x)), the 1 and the scale exact) and the
 * scales multiply to want, to float rounding (near); every node keeps x's
 * shape and dtype (scalar constants) and each value is read by the next
 * step alone. */
static bool match_gated(Fuse *F, Chain *ch, ArmFn *arm_fn, double want,
			int kind)
{
	ValId x = ch->cur;
	if (!two_users(F, x))
		return false;
	for (int pick = 0; pick < 2; pick++) {
		Node *arm = &F->g->nodes[pick ? F->user2[x] : F->user1[x]];
		Node *other = &F->g->nodes[pick ? F->user1[x] : F->user2[x]];
		double sa = 1, s1, s;
		int32_t end;
		ValId e = arm_fn(F, arm, x, &sa);
		ValId hx = e < 0 ? -1 : gate_x_side(F, other, x, e, &s1);
		ValId y = hx < 0 ? -1 : gate_product(F, hx, x, e, sa, s1, &s,
						     &end);
		if (y < 0 || !near(s, want))
			continue;
		push_act(ch, kind, 0, 0);
		advance(F, ch, y, end);
		return true;
	}
	return false;
}

/* x^3 from node n, a user of x: Pow(x, 3) or (x * x) * x; its output,
 * or -1; the uses of x it takes into *refs. */
static ValId cube_of(Fuse *F, Node *n, ValId x, int *refs)
{
	float k;
	ValId e = operand(n, OP_Pow, x, 0);
	if (e >= 0 && scalar_const(F, e, &k) && k == 3 &&
	    keeps_shape(F, n, x)) {
		*refs = 1;
		return n->outputs[0];
	}
	if (!is_op(n, OP_Mul) || n->ninputs != 2 || n->inputs[0] != x ||
	    n->inputs[1] != x || !keeps_shape(F, n, x))
		return -1;
	ValId sq = n->outputs[0];
	Node *m = sole_user(F, sq);
	if (!mul_of(F, m, sq, x))
		return -1;
	*refs = 3;
	return m->outputs[0];
}

/* GELU's tanh form, as torch.onnx (approximate="tanh" before opset 20)
 * and tf2onnx write it:
 *   x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) * 0.5
 * x^3 as Pow(x, 3) (the exponent exactly 3) or x * x * x, the 0.5
 * anywhere a scale goes; x has the cube's, the Add's and the product's
 * (or its scaling's) uses and no other.  It is GeluTanh when 0.044715,
 * sqrt(2/pi), the 1 and the 0.5 are these to float rounding (near), the
 * nodes keep x's shape and dtype and each value is read by the next step
 * alone. */
static bool match_gelu_tanh(Fuse *F, Chain *ch)
{
	ValId x = ch->cur;
	Graph *g = F->g;
	if (F->uses[x] < 3 || F->uses[x] > 5)
		return false;
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		int refs;
		double k, c, sa, s1, s;
		int32_t end;
		ValId v = F->taken[i] ? -1 : cube_of(F, n, x, &refs);
		if (v < 0 || F->uses[x] != refs + 2)
			continue;
		v = scale_after(F, v, &k, &end);
		Node *add = sole_user(F, v);
		if (!near(k, 0.044715) || operand(add, OP_Add, v, -1) != x ||
		    !keeps_shape(F, add, x))
			return false;
		v = scale_after(F, add->outputs[0], &c, &end);
		if (!near(c, ACT_SQRT_2_PI) ||
		    (v = unary_of(F, sole_user(F, v), OP_Tanh, v)) < 0 ||
		    (v = plus_one(F, v, &sa)) < 0)
			return false;
		/* x's one use besides the cube and the Add */
		Node *other = NULL;
		for (int32_t j = 0; j < g->nnodes && !other; j++) {
			Node *o = &g->nodes[j];
			if (o == add || o == n || F->taken[j] ||
			    (refs == 3 && o == sole_user(F, n->outputs[0])))
				continue;
			for (int32_t q = 0; q < o->ninputs; q++)
				if (o->inputs[q] == x)
					other = o;
		}
		ValId hx = other ? gate_x_side(F, other, x, v, &s1) : -1;
		ValId y = hx < 0 ? -1 : gate_product(F, hx, x, v, sa, s1, &s,
						     &end);
		if (y < 0 || !near(s, 0.5))
			return false;
		push_act(ch, ACT_GeluTanh, 0, 0);
		advance(F, ch, y, end);
		return true;
	}
	return false;
}

/* The activation that is standard op op (compiler/act.h), or -1. */
static int act_of_op(int op)
{
	for (int k = 0; op && k < ACT_COUNT; k++)
		if (act_info[k].op == op)
			return k;
	return -1;
}

/* One written-out activation after ch->cur (of several nodes); false if
 * none. */
static bool match_written(Fuse *F, Chain *ch)
{
	if (ch->nacts >= MAX_ACTS - 1) /* HardSwish may push a Linear too */
		return false;
	if (match_hswish(F, ch) ||
	    match_gated(F, ch, gelu_erf_arm, 0.5, ACT_Gelu) ||
	    match_gated(F, ch, silu_arm, 1, ACT_Silu) ||
	    match_gated(F, ch, mish_arm, 1, ACT_Mish) || match_gelu_tanh(F, ch))
		return true;
	/* s Clip(m x + a, 0, h) = clamp01(s m x + s a) when s h = 1 (so s > 0,
	 * which Clip's bounds commute with) */
	Node *n = sole_user(F, ch->cur);
	HsChain c;
	if (n && hs_chain(F, n, ch->cur, &c) && c.stepped &&
	    near(c.s * c.h, 1)) {
		push_act(ch, ACT_HardSigmoid, (float)(c.s * c.m),
			 (float)(c.s * c.a));
		advance(F, ch, c.end, c.endnode);
		return true;
	}
	return false;
}

/* A FusedActivation n after the chain (the contrib pass writes ONNX
 * Runtime's GELU ops so): its activations join the chain's, if they all
 * fit and are the table's. */
static bool take_fused_activation(Fuse *F, Chain *ch, const Node *n)
{
	const Attr *as = node_attr(n, FUSED_ACTS_ATTR);
	const Attr *ps = node_attr(n, FUSED_ACT_PARAMS_ATTR);
	int32_t na = as && as->type == ATTR_STRINGS ? as->n : 0;
	int kinds[MAX_ACTS];
	if (!na || !ps || ps->type != ATTR_FLOATS || ps->n != 2 * na ||
	    ch->nacts + na > MAX_ACTS - 1)
		return false;
	for (int32_t k = 0; k < na; k++)
		if ((kinds[k] = act_lookup((const char *)as->strings[k].data,
					   as->strings[k].len)) < 0)
			return false;
	for (int32_t k = 0; k < na; k++)
		push_act(ch, kinds[k], ps->floats[2 * k], ps->floats[2 * k + 1]);
	advance(F, ch, n->outputs[0], (int32_t)(n - F->g->nodes));
	return true;
}

/* Max(x, c) or Min(x, c) of one constant c after the chain (tf2onnx's
 * clamp after a LeakyRelu, Max(x, 0) for a Relu): Clip(x, c, inf) or
 * Clip(x, -inf, c), the same function to the bit.  Max propagates NaN
 * and keeps x on a tie (max(-0, +0) is -0), as x < c ? c : x does; a
 * NaN c would make every output NaN, so it stays; with c first, a tie
 * of zeros keeps c: only a nonzero c then. */
static bool max_min_clamp(Fuse *F, Chain *ch, const Node *n)
{
	float c;
	if ((n->op != OP_Max && n->op != OP_Min) || n->ninputs != 2 ||
	    F->opset < 8 || !keeps_shape(F, n, ch->cur))
		return false;
	int ci = n->inputs[0] == ch->cur ? 1 : 0;
	if (n->inputs[1 - ci] != ch->cur || n->inputs[ci] == ch->cur ||
	    !scalar_const(F, n->inputs[ci], &c) || c != c ||
	    (ci == 0 && c == 0))
		return false;
	bool max = n->op == OP_Max;
	push_act(ch, ACT_Clip, max ? c : -INFINITY, max ? INFINITY : c);
	advance(F, ch, n->outputs[0], (int32_t)(n - F->g->nodes));
	return true;
}

/* One activation after ch->cur; false if none: a written-out form, an
 * affine step, or a standard op that is a row of compiler/act.h's
 * table (not the op table's unary ops, most of which do not fuse).  The
 * op is its row's activation exactly when it reads ch->cur (read by it
 * alone) as its one input, keeps its shape and dtype, and its attributes
 * (or ONNX's defaults) are the parameters; for Clip, bounds that are
 * constants with min <= max (clip_bounds). */
static bool match_act(Fuse *F, Chain *ch)
{
	if (match_written(F, ch))
		return true;
	Node *n = ch->nacts < MAX_ACTS - 1 ? sole_user(F, ch->cur) : NULL;
	if (!n)
		return false;
	double m, a;
	if (affine_step(F, n, ch->cur, &m, &a)) {
		push_linear(ch, m, a);
		advance(F, ch, n->outputs[0], (int32_t)(n - F->g->nodes));
		return true;
	}
	if (max_min_clamp(F, ch, n))
		return true;
	if (n->inputs[0] != ch->cur || !keeps_shape(F, n, ch->cur))
		return false;
	if (n->op == OP_FusedActivation)
		return take_fused_activation(F, ch, n);
	float slope;
	if (n->op == OP_PRelu && n->ninputs == 2 &&
	    scalar_const(F, n->inputs[1], &slope) && slope == slope &&
	    !signbit(slope)) {
		/* PRelu by one slope s >= +0 is LeakyRelu(s) to the bit:
		 * x < 0 ? s x : x in every form, and oneDNN's relu(alpha),
		 * x > 0 ? x : alpha x, differs only on zeros, whose sign a
		 * slope of +0 or more keeps */
		push_act(ch, ACT_LeakyRelu, slope, 0);
		advance(F, ch, n->outputs[0], (int32_t)(n - F->g->nodes));
		return true;
	}
	int k = act_of_op(n->op);
	float lo = 0, hi = 0;
	if (k < 0 || (k == ACT_Clip && !clip_bounds(F, n, &lo, &hi)))
		return false;
	const ActInfo *ai = &act_info[k];
	if (k != ACT_Clip) {
		lo = ai->aname ? attr_float(n, ai->aname, ai->adef) : 0;
		hi = ai->bname ? attr_float(n, ai->bname, ai->bdef) : 0;
	}
	push_act(ch, k, lo, hi);
	advance(F, ch, n->outputs[0], (int32_t)(n - F->g->nodes));
	return true;
}

/* ---- BatchNormalization folding ----------------------------------------- */

/* What folds into W and B: a BatchNormalization, or one affine step,
 * x * K, x + K, x - K, K - x or x / K, K a scalar or one value per output
 * channel. */
enum { FOLD_BN, FOLD_MUL, FOLD_ADD, FOLD_SUB, FOLD_RSUB, FOLD_DIV };

/* The folded weights of one set of sources, shared by every gear. */
typedef struct FoldEntry {
	struct FoldEntry *next;
	const Model *m;
	const Tensor *src[6]; /* W, B or C, then scale, bias, mean, var or K */
	int how;	      /* FOLD_* */
	int kind;
	int64_t param; /* group, or transB */
	float eps, beta;
	const Tensor *w, *b; /* NULL if refused (fold_make) */
} FoldEntry;

static pthread_mutex_t fold_lock = PTHREAD_MUTEX_INITIALIZER;
static FoldEntry *fold_cache; /* entries of live models, arena-allocated */

/* The output channel of element i of W (shape ws): Conv [M, C/g, k..];
 * ConvTranspose [C, M/g, k..]; Gemm B [K, N] or, transposed, [N, K]. */
static int64_t w_channel(int kind, const Shape *ws, int64_t param,
			 int64_t i)
{
	int64_t inner = 1;
	for (int32_t d = 2; d < ws->rank; d++)
		inner *= ws->dims[d];
	switch (kind) {
	case A_CONV:
		return i / (ws->dims[1] * inner);
	case A_CONVT: {
		int64_t cg = ws->dims[0] / param, mg = ws->dims[1];
		int64_t ci = i / (mg * inner), j = i / inner % mg;
		return ci / cg * mg + j;
	}
	default:
		return param ? i / ws->dims[1] : i % ws->dims[1];
	}
}

/* Output channel c's scale s and shift t of what e folds: y' = s y + t. */
static void fold_affine(const FoldEntry *e, int64_t c, double *s, double *t)
{
	const Tensor *k = e->src[2];
	if (e->how == FOLD_BN) {
		const float *sc = k->data, *bi = e->src[3]->data;
		const float *mean = e->src[4]->data, *var = e->src[5]->data;
		*s = sc[c] / sqrt((double)var[c] + e->eps);
		*t = bi[c] - mean[c] * *s;
		return;
	}
	double v = ((const float *)k->data)[shape_numel(&k->shape) == 1 ? 0 : c];
	*s = e->how == FOLD_MUL ? v : e->how == FOLD_DIV ? 1 / v
	   : e->how == FOLD_RSUB ? -1 : 1;
	*t = e->how == FOLD_ADD || e->how == FOLD_RSUB ? v
	   : e->how == FOLD_SUB ? -v : 0;
}

static bool finite_floats(const float *f, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (!isfinite(f[i]))
			return false;
	return true;
}

/* The folded W and B of e into e->w and e->b: 0; -1 on error; 1, both
 * NULL, if a value of them is not finite (var + eps = 0, K infinite, W / K
 * overflowing): the fold is exact only in finite arithmetic, W * inf
 * making NaN of W's zeros and sums of +inf and -inf where the graph
 * scales one finite sum. */
static int fold_make(Arena *a, FoldEntry *e, int64_t nch)
{
	const Tensor *w = e->src[0], *b = e->src[1];
	double *s = xcalloc((size_t)nch, sizeof(double));
	double *t = xcalloc((size_t)nch, sizeof(double));
	for (int64_t c = 0; c < nch; c++)
		fold_affine(e, c, &s[c], &t[c]);
	bool shift = e->how == FOLD_ADD || e->how == FOLD_SUB;
	Tensor *nw = shift ? NULL :
		tensor_new(a, w->name, DT_FLOAT, &w->shape, NULL);
	Shape bs = shape_of(1, &nch);
	Tensor *nb = tensor_new(a, NULL, DT_FLOAT, &bs, NULL);
	if ((!shift && !nw) || !nb) {
		free(s);
		free(t);
		return -1;
	}
	nb->folded = true;
	if (nw) {
		nw->folded = true;
		float *wd = (float *)nw->data;
		const float *ws = w->data;
		for (int64_t i = 0; i < shape_numel(&w->shape); i++)
			wd[i] = (float)(ws[i] * s[w_channel(e->kind, &w->shape,
							    e->param, i)]);
	}
	float *bd = (float *)nb->data;
	int64_t nb0 = b ? shape_numel(&b->shape) : 0;
	for (int64_t c = 0; c < nch; c++) {
		double b0 = b ? ((const float *)b->data)[nb0 == 1 ? 0 : c] : 0;
		bd[c] = (float)(b0 * e->beta * s[c] + t[c]);
	}
	free(s);
	free(t);
	bool finite = finite_floats(bd, nch) &&
		      (!nw || finite_floats(nw->data, shape_numel(&w->shape)));
	e->w = finite ? (nw ? nw : w) : NULL;
	e->b = finite ? nb : NULL;
	return finite ? 0 : 1;
}

/* The folded W and B of key e (made once per model) into key->w and
 * key->b: 0; 1 if refused (fold_make); -1 on error. */
static int fold_get(Model *m, FoldEntry *key, int64_t nch)
{
	pthread_mutex_lock(&fold_lock);
	for (FoldEntry *e = fold_cache; e; e = e->next)
		if (e->m == m && e->how == key->how && e->kind == key->kind &&
		    e->param == key->param && e->eps == key->eps &&
		    e->beta == key->beta &&
		    !memcmp(e->src, key->src, sizeof(key->src))) {
			key->w = e->w, key->b = e->b;
			pthread_mutex_unlock(&fold_lock);
			return key->w ? 0 : 1;
		}
	int rc = fold_make(&m->arena, key, nch);
	if (rc >= 0) {
		FoldEntry *e = arena_memdup(&m->arena, key, sizeof(*key));
		e->next = fold_cache;
		fold_cache = e;
	}
	pthread_mutex_unlock(&fold_lock);
	return rc;
}

/* Forgets m's entries (its arena goes with it) at the end of the pass,
 * so the cache never outlives a compile. */
static void fold_forget(const Model *m)
{
	pthread_mutex_lock(&fold_lock);
	for (FoldEntry **p = &fold_cache; *p;)
		if ((*p)->m == m)
			*p = (*p)->next;
		else
			p = &(*p)->next;
	pthread_mutex_unlock(&fold_lock);
}

/* A float constant of n values (1-D), or NULL. */
static const Tensor *vec_const(Fuse *F, ValId v, int64_t n)
{
	if (v < 0)
		return NULL;
	const Tensor *t = F->g->vals[v].konst;
	if (!t || t->dtype != DT_FLOAT || t->shape.rank != 1 ||
	    t->shape.dims[0] != n)
		return NULL;
	return t;
}

/* The shape with which k, an input of binary node n whose other input is
 * x, broadcasts into x: its own, but before opset 7 input 1 lines up
 * with x's dims from 'axis' (ew_legacy_shape: b [C] from axis 1 is per
 * channel, not per element of the last axis). */
static Shape bcast_shape(Fuse *F, const Node *n, ValId k, ValId x)
{
	Shape s = F->g->vals[k].shape;
	if (n->inputs[1] == k)
		ew_legacy_shape(n, F->opset, &F->g->vals[x].shape, &s);
	return s;
}

/* Constant k of binary node n (x its other input) as one value per
 * element of x's last axis: a float 1-D constant of that axis' size
 * that broadcasts along it; or NULL. */
static const Tensor *last_axis_const(Fuse *F, const Node *n, ValId k,
				     ValId x)
{
	const Shape *xs = &F->g->vals[x].shape;
	int64_t c = xs->dims[xs->rank - 1];
	Shape s = bcast_shape(F, n, k, x);
	return s.rank >= 1 && s.dims[s.rank - 1] == c ? vec_const(F, k, c)
						      : NULL;
}

/* The output channels of ch's anchor if its W (and B) can take in a
 * per-channel affine map, else 0; the fold's parameter into *param. */
static int64_t fold_channels(Fuse *F, const Chain *ch, int64_t *param)
{
	Graph *g = F->g;
	const Tensor *w = g->vals[ch->w].konst;
	const Tensor *b = ch->b >= 0 ? g->vals[ch->b].konst : NULL;
	const Value *y = &g->vals[ch->cur];
	if (!w || w->dtype != DT_FLOAT || (ch->b >= 0 && !b) ||
	    (b && b->dtype != DT_FLOAT) || y->shape.rank < 2)
		return 0;
	int64_t nch = y->shape.dims[ch->kind == A_GEMM ? y->shape.rank - 1 : 1];
	*param = 0;
	if (ch->kind == A_CONVT) {
		*param = attr_int(ch->anchor, "group", 1);
		if (*param < 1 || w->shape.dims[0] % *param ||
		    w->shape.dims[1] * *param != nch)
			return 0;
	} else if (ch->kind == A_GEMM) {
		*param = attr_int(ch->anchor, "transB", 0) != 0;
		if (b && !(shape_numel(&b->shape) == 1 ||
			   (b->shape.dims[b->shape.rank - 1] == nch &&
			    shape_numel(&b->shape) == nch)))
			return 0;
	} else if (w->shape.dims[0] != nch ||
		   (b && shape_numel(&b->shape) != nch)) {
		return 0;
	}
	return nch;
}

/* Folds key (its how and src[2..5] set) into ch's W and B, taking in
 * node n: 0; 1 if refused (fold_make); -1 on error. */
static int fold_node(Fuse *F, Chain *ch, FoldEntry *key, int64_t nch,
		     const Node *n)
{
	Graph *g = F->g;
	key->m = F->m;
	key->kind = ch->kind;
	key->beta = ch->kind == A_GEMM ? ch->gemm_beta : 1;
	key->src[0] = g->vals[ch->w].konst;
	key->src[1] = ch->b >= 0 ? g->vals[ch->b].konst : NULL;
	int rc = fold_get(F->m, key, nch);
	if (rc)
		return rc;
	const char *wn = g->vals[ch->w].name;
	const char *how = key->how == FOLD_BN ? "bn" : "k";
	if (key->w != key->src[0])
		ch->w = graph_add_weight(
			g, graph_fresh_name(g, arena_printf(g->arena, "%s_%s",
							    wn, how)),
			key->w);
	ch->b = graph_add_weight(
		g, graph_fresh_name(g, arena_printf(g->arena, "%s_%s_bias",
						    wn, how)),
		key->b);
	ch->gemm_beta = 1;
	ch->changed = true;
	advance(F, ch, n->outputs[0], (int32_t)(n - g->nodes));
	return 0;
}

/* A BatchNormalization after the anchor: y = s conv(x) + t per output
 * channel c, s = scale / sqrt(var + eps), t = B - mean s, is the anchor
 * with W' = W s, B' = B s + t, exact up to rounding, when
 *  - it normalizes by its running statistics (batchnorm_training: not
 *    the training form, which takes the batch's own) and per channel
 *    (spatial; scale, B, mean and var float constants of one value per
 *    output channel, 1-D);
 *  - its channels (axis 1) are the anchor's output channels: Conv's and
 *    ConvTranspose's axis 1, Gemm's columns (axis 1 of [M, N]); not a
 *    MatMul's, whose axis 1 is rows;
 *  - the anchor's W (and B) are float constants (fold_channels), its
 *    output read by the BatchNormalization alone, whose statistics
 *    outputs nothing reads;
 *  - W' and B' are finite (var + eps > 0 among them: fold_make). */
static int match_bn(Fuse *F, Chain *ch)
{
	Node *n = sole_user(F, ch->cur);
	int64_t param, nch;
	if (!is_op(n, OP_BatchNormalization) || n->ninputs != 5 ||
	    n->inputs[0] != ch->cur || !keeps_shape(F, n, ch->cur) ||
	    batchnorm_training(n, F->opset) || !attr_int(n, "spatial", 1) ||
	    !(nch = fold_channels(F, ch, &param)))
		return 0;
	FoldEntry key = { .how = FOLD_BN, .param = param,
			  .eps = attr_float(n, "epsilon", 1e-5f) };
	for (int k = 0; k < 4; k++)
		if (!(key.src[2 + k] = vec_const(F, n->inputs[1 + k], nch)))
			return 0;
	return fold_node(F, ch, &key, nch, n) < 0 ? -1 : 0;
}

/* Constant v, an input of binary node op whose other input is y: a
 * float constant, non-zero if nonzero, that broadcasts into y as one value
 * or one per channel (axis ax of y, nch of them), or NULL. */
static const Tensor *chan_const(Fuse *F, const Node *op, ValId v, ValId y,
				int ax, int64_t nch, bool nonzero)
{
	const Tensor *t = v >= 0 ? F->g->vals[v].konst : NULL;
	if (!t || t->dtype != DT_FLOAT)
		return NULL;
	const Shape *ys = &F->g->vals[y].shape;
	Shape s = bcast_shape(F, op, v, y);
	if (s.rank > ys->rank)
		return NULL;
	int64_t n = shape_numel(&t->shape);
	for (int32_t j = 0; n != 1 && j < s.rank; j++)
		if (s.dims[j] != (ys->rank - s.rank + j == ax ? nch : 1))
			return NULL;
	if (n != 1 && n != nch)
		return NULL;
	for (int64_t i = 0; nonzero && i < n; i++)
		if (((const float *)t->data)[i] == 0)
			return NULL;
	return t;
}

/* Add, Sub, Mul or Div of ch->cur and a constant of one value or one
 * per output channel, straight after the anchor: folded into W and B
 * (Paddle2ONNX writes PP-LCNetV3's learnable affine after each conv so).
 * Repeats while there is one; -1 on error.  y op K is s y + t per output
 * channel, exact up to rounding as W' = W s, B' = B s + t, when K is a
 * float constant of one value or one per output channel broadcasting
 * into y along the channel axis alone (not per pixel, not along the
 * batch: chan_const) without growing y (keeps_shape), only y / K of the
 * Divs (K / y is no affine map) and K without zeros, the anchor's output
 * read by the step alone, and W', B' finite (fold_make). */
static int match_affine(Fuse *F, Chain *ch)
{
	for (;;) {
		Node *n = sole_user(F, ch->cur);
		int64_t param, nch;
		if (!n || n->ninputs != 2 || n->noutputs != 1 ||
		    !keeps_shape(F, n, ch->cur) ||
		    !(nch = fold_channels(F, ch, &param)))
			return 0;
		bool first = n->inputs[0] == ch->cur, second = n->inputs[1] == ch->cur;
		if (first == second)
			return 0;
		FoldEntry key = { .param = param };
		switch (n->op) {
		case OP_Add:
			key.how = FOLD_ADD;
			break;
		case OP_Sub:
			key.how = first ? FOLD_SUB : FOLD_RSUB;
			break;
		case OP_Mul:
			key.how = FOLD_MUL;
			break;
		case OP_Div:
			if (!first)
				return 0;
			key.how = FOLD_DIV;
			break;
		default:
			return 0;
		}
		const Value *y = &F->g->vals[ch->cur];
		int ax = ch->kind == A_GEMM ? y->shape.rank - 1 : 1;
		ValId k = n->inputs[first ? 1 : 0];
		if (!(key.src[2] = chan_const(F, n, k, ch->cur, ax, nch,
					      key.how == FOLD_DIV)))
			return 0;
		int rc = fold_node(F, ch, &key, nch, n);
		if (rc)
			return rc < 0 ? -1 : 0;
	}
}

/* ---- residual and bias -------------------------------------------------- */

/* The other operand of Add n with x, or -1. */
static ValId add_other(Fuse *F, const Node *n, ValId x)
{
	if (!is_op(n, OP_Add) || n->ninputs != 2 || !keeps_shape(F, n, x))
		return -1;
	if (n->inputs[0] == x && n->inputs[1] != x)
		return n->inputs[1];
	if (n->inputs[1] == x && n->inputs[0] != x)
		return n->inputs[0];
	return -1;
}

/* An Add after a Conv (or its activations) as FusedConv's Z, y + Z:
 * exact when Z has y's very shape and dtype (no broadcasting of either
 * into the other) and y is read by the Add alone.  Z may be any tensor,
 * the Conv's own input X too: FusedConv writes a buffer of its own
 * (INPLACE_NONE; oneDNN copies Z into it before the convolution), so
 * nothing overwrites X or Z before they are read.  After a MatMul, an
 * Add as FusedMatMul's Bias: exact when it is a float constant, 1-D, of
 * the output's last dim (what the fused op broadcasts), read likewise. */
static void match_add(Fuse *F, Chain *ch)
{
	Node *n = sole_user(F, ch->cur);
	ValId r = add_other(F, n, ch->cur);
	if (r < 0)
		return;
	const Value *x = &F->g->vals[ch->cur], *rv = &F->g->vals[r];
	if (ch->kind == A_CONV) {
		if (rv->tkind != TK_TENSOR || rv->dtype != x->dtype ||
		    !shape_equal(&rv->shape, &x->shape))
			return;
	} else if (!last_axis_const(F, n, r, ch->cur)) {
		return;
	}
	ch->extra = r;
	advance(F, ch, n->outputs[0], (int32_t)(n - F->g->nodes));
}

/* ---- rewriting ---------------------------------------------------------- */

static const char *const fused_name[] = { "FusedConv", NULL, "FusedGemm",
					  "FusedMatMul" };
static const int fused_op[] = { OP_FusedConv, 0, OP_FusedGemm,
				OP_FusedMatMul };

/* d's activations attributes: ch's. */
static void add_acts(Graph *g, Node *d, const Chain *ch)
{
	Attr *s = node_add_attr(g, d, FUSED_ACTS_ATTR, ATTR_STRINGS);
	Bytes *str = arena_array(g->arena, (size_t)ch->nacts + 1,
				 sizeof(Bytes));
	for (int i = 0; i < ch->nacts; i++) {
		const char *nm = act_info[ch->act[i]].name;
		str[i] = (Bytes){ strlen(nm), (const uint8_t *)nm };
	}
	s->n = ch->nacts;
	s->strings = str;
	Attr *p = node_add_attr(g, d, FUSED_ACT_PARAMS_ATTR, ATTR_FLOATS);
	p->n = 2 * ch->nacts;
	p->floats = arena_memdup(g->arena, ch->par,
				 sizeof(float) * (size_t)(2 * ch->nacts + 1));
}

/* Slot ch->last becomes the anchor with the chain folded in. */
static void rewrite(Fuse *F, const Chain *ch)
{
	Graph *g = F->g;
	const Node *a = ch->anchor;
	bool fused = ch->nacts || ch->extra >= 0;
	Node d = { 0 };
	d.name = a->name;
	d.label = a->label;
	d.op_type = fused ? fused_name[ch->kind] : a->op_type;
	d.domain = fused ? GEARC_DOMAIN : a->domain;
	d.op = (uint16_t)(fused ? fused_op[ch->kind] : a->op);
	d.ninputs = ch->kind == A_MATMUL ? (fused ? 3 : 2)
				       : ch->kind == A_CONV && fused ? 4 : 3;
	d.inputs = arena_array(g->arena, (size_t)d.ninputs, sizeof(ValId));
	for (int32_t k = 0; k < d.ninputs; k++)
		d.inputs[k] = k < a->ninputs ? a->inputs[k] : -1;
	if (ch->kind != A_MATMUL) {
		d.inputs[1] = ch->w;
		d.inputs[2] = ch->b;
	}
	if (ch->extra >= 0)
		d.inputs[d.ninputs - 1] = ch->extra;
	d.noutputs = 1;
	d.outputs = arena_array(g->arena, 1, sizeof(ValId));
	d.outputs[0] = ch->cur;
	d.nattrs = a->nattrs;
	d.attrs = a->nattrs ? arena_memdup(g->arena, a->attrs,
					   (size_t)a->nattrs * sizeof(Attr))
			    : NULL;
	for (int32_t k = 0; ch->changed && ch->kind == A_GEMM && k < d.nattrs;
	     k++)
		if (!strcmp(d.attrs[k].name, "beta"))
			d.attrs[k].f = 1;
	if (fused)
		add_acts(g, &d, ch);
	if (ch->z_after)
		node_add_attr(g, &d, FUSED_Z_AFTER_ATTR, ATTR_INT)->i =
			ch->z_after;
	g->nodes[ch->last] = d;
	g->vals[ch->cur].producer = ch->last;
}

static int anchor_kind(const Node *n)
{
	switch (n->op) {
	case OP_Conv:
		return A_CONV;
	case OP_ConvTranspose:
		return A_CONVT;
	case OP_Gemm:
		return A_GEMM;
	case OP_MatMul:
		return A_MATMUL;
	}
	return -1;
}

/* Fuses what follows node i; -1 on error. */
static int fuse_at(Fuse *F, int32_t i)
{
	Graph *g = F->g;
	const Node *a = &g->nodes[i];
	int kind = anchor_kind(a);
	if (kind < 0 || a->noutputs != 1 || a->outputs[0] < 0 ||
	    a->ninputs < 2)
		return 0;
	const Value *y = &g->vals[a->outputs[0]];
	if (y->dtype != DT_FLOAT || !shape_is_static(&y->shape))
		return 0;
	Chain ch = { .kind = kind, .anchor = a, .cur = a->outputs[0],
		     .last = i, .w = a->inputs[1],
		     .b = a->ninputs > 2 ? a->inputs[2] : -1, .extra = -1,
		     .gemm_beta = attr_float(a, "beta", 1) };
	if (kind != A_MATMUL && (match_bn(F, &ch) < 0 ||
				 match_affine(F, &ch) < 0))
		return -1;
	if (kind == A_CONVT) {
		if (ch.changed)
			rewrite(F, &ch);
		return 0;
	}
	if (kind == A_CONV || kind == A_MATMUL)
		match_add(F, &ch);
	while (match_act(F, &ch))
		;
	if (kind == A_CONV && ch.extra < 0 && ch.nacts) {
		/* a residual Add after the activations (U-Net's RSU blocks,
		 * pre-activation ResNets), then any after it */
		int k = ch.nacts;
		match_add(F, &ch);
		if (ch.extra >= 0) {
			ch.z_after = k;
			while (match_act(F, &ch))
				;
		}
	}
	if (ch.last != i)
		rewrite(F, &ch);
	return 0;
}

/* A Cast to its input's own dtype (what widen-fp16 leaves of a float16
 * model's Cast pairs) copies: it becomes an Identity, which the memory
 * plan makes a view. */
static void drop_same_casts(Graph *g)
{
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		if (n->op != OP_Cast || n->ninputs != 1 || n->inputs[0] < 0 ||
		    n->noutputs != 1 || n->outputs[0] < 0)
			continue;
		const Value *x = &g->vals[n->inputs[0]];
		const Value *y = &g->vals[n->outputs[0]];
		if (x->tkind != TK_TENSOR || x->dtype == DT_UNDEFINED ||
		    x->dtype != y->dtype)
			continue;
		n->op = OP_Identity;
		n->op_type = "Identity";
		n->nattrs = 0;
	}
}

/* Whether value v is one of g's outputs. */
static bool is_graph_output(const Graph *g, ValId v)
{
	for (int32_t k = 0; k < g->noutputs; k++)
		if (g->outputs[k] == v)
			return true;
	return false;
}

/* How many nodes of g read value v (a graph output counts one more). */
static int readers(const Graph *g, ValId v)
{
	int k = is_graph_output(g, v);
	for (int32_t i = 0; i < g->nnodes; i++)
		for (int32_t j = 0; j < g->nodes[i].ninputs; j++)
			k += g->nodes[i].inputs[j] == v;
	return k;
}

/* Whether any node of g reads value v, or g outputs it. */
static bool is_read(const Graph *g, ValId v)
{
	return readers(g, v) > 0;
}

/* A Dropout that keeps everything (inference: opsets 7-11, training_mode
 * false or absent; or a ratio of 0: torch.onnx writes Swin-T's
 * attention dropout in training mode with ratio 0) whose mask nobody
 * reads is its input: it becomes an Identity, which the memory plan
 * makes a view (it copied on the reference kernel: 4% of Swin-T's
 * run). */
static void drop_inference_dropouts(Model *m, Graph *g, int64_t opset)
{
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		OpCtx c = { .model = m, .g = g, .n = n, .opset = opset };
		if (n->op != OP_Dropout || n->ninputs < 1 ||
		    n->inputs[0] < 0 || n->noutputs < 1 || n->outputs[0] < 0 ||
		    (n->noutputs > 1 && n->outputs[1] >= 0 &&
		     is_read(g, n->outputs[1])) ||
		    dropout_keeps_all(&c) != 1)
			continue;
		n->op = OP_Identity;
		n->op_type = "Identity";
		n->ninputs = n->noutputs = 1;
		n->nattrs = 0;
	}
}

/* Whether Pad n's pads (input 1, or before opset 11 its attribute) are
 * known and all 0. */
static bool pads_zero(const Graph *g, const Node *n)
{
	const int64_t *a;
	int32_t na = attr_ints(n, "pads", &a);
	if (na >= 0) {
		for (int32_t i = 0; i < na; i++)
			if (a[i])
				return false;
		return n->ninputs == 1;
	}
	const Tensor *t = n->ninputs > 1 && n->inputs[1] >= 0
				  ? g->vals[n->inputs[1]].konst
				  : NULL;
	if (!t || t->dtype != DT_INT64)
		return false;
	for (int64_t i = 0; i < shape_numel(&t->shape); i++)
		if (tensor_get_i64(t, i))
			return false;
	return true;
}

/* A Pad of 0 on every side copies its input, whatever its mode: it
 * becomes an Identity, which the memory plan makes a view (torch.onnx
 * writes one before each AvgPool2d of DenseNet and GoogLeNet, and it
 * held the pool's tensors row-major). */
static void drop_zero_pads(Graph *g)
{
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		if (n->op != OP_Pad || n->ninputs < 1 || n->inputs[0] < 0 ||
		    n->noutputs != 1 || n->outputs[0] < 0 || !pads_zero(g, n))
			continue;
		n->op = OP_Identity;
		n->op_type = "Identity";
		n->ninputs = 1;
		n->nattrs = 0;
	}
}

/* The node producing v if it is op, v its first output, and v read by
 * one node alone (not a graph output); else NULL. */
static const Node *sole(const Graph *g, ValId v, int op)
{
	int32_t i = v >= 0 ? g->vals[v].producer : -1;
	return i >= 0 && g->nodes[i].op == op && g->nodes[i].noutputs >= 1 &&
			       g->nodes[i].outputs[0] == v && readers(g, v) == 1
		       ? &g->nodes[i]
		       : NULL;
}

/* A channel shuffle as torch.onnx writes ShuffleNet's (Reshape x
 * [N,C,H,W] to [N,g,C/g,H,W], Transpose (0,2,1,3,4), Reshape back to
 * [N,C,H,W]) is a permutation of the channels: output channel c reads
 * x's (c % g) C/g + c / g.  It becomes one Gather of those constant
 * indices on axis 1, standard ONNX that runtime kernels take in either
 * layout, where the rank-5 Transpose held every tensor of the network
 * row-major; the Reshape and Transpose go dead. */
static void shuffles_to_gathers(Graph *g)
{
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		if (n->op != OP_Reshape || n->ninputs < 1 || n->noutputs != 1 ||
		    n->outputs[0] < 0)
			continue;
		const Node *t = sole(g, n->inputs[0], OP_Transpose);
		const Node *r = t && t->ninputs == 1 ? sole(g, t->inputs[0],
							    OP_Reshape)
						       : NULL;
		const int64_t *perm = NULL;
		if (!r || r->ninputs < 1 || r->inputs[0] < 0 ||
		    attr_ints(t, "perm", &perm) != 5 || perm[0] != 0 ||
		    perm[1] != 2 || perm[2] != 1 || perm[3] != 3 ||
		    perm[4] != 4)
			continue;
		ValId xv = r->inputs[0];
		const Shape *x = &g->vals[xv].shape;
		const Shape *m = &g->vals[r->outputs[0]].shape;
		const Shape *y = &g->vals[n->outputs[0]].shape;
		if (x->rank != 4 || m->rank != 5 || !shape_is_static(x) ||
		    !shape_is_static(m) || !shape_equal(x, y) ||
		    m->dims[0] != x->dims[0] || m->dims[1] < 1 ||
		    m->dims[1] * m->dims[2] != x->dims[1] ||
		    m->dims[3] != x->dims[2] || m->dims[4] != x->dims[3])
			continue;
		int64_t c = x->dims[1], grp = m->dims[1], per = m->dims[2];
		Shape is = shape_of(1, &c);
		Tensor *idx = tensor_new(g->arena, NULL, DT_INT64, &is, NULL);
		int64_t *ix = tensor_mut(idx);
		for (int64_t k = 0; k < c; k++)
			ix[k] = k % grp * per + k / grp;
		Node d;
		node_init(g, &d, n->name, "Gather", "", 2, 1);
		d.label = n->label;
		d.inputs[0] = xv;
		d.inputs[1] = graph_add_weight(
			g, graph_fresh_name(g, arena_printf(g->arena,
							    "%s_shuffle",
							    n->name)),
			idx);
		d.outputs[0] = n->outputs[0];
		node_add_attr(g, &d, "axis", ATTR_INT)->i = 1;
		g->nodes[i] = d; /* n, the Reshape, is gone */
	}
}

/* An Identity from a node's value x to a graph output y (what
 * drop_same_casts leaves of the Cast a float16 converter puts before
 * each float32 output) would copy x into the output: instead x's
 * producer writes y, and x's readers read y.  The Identity, now reading
 * y and writing x, which nothing reads, goes with the dead nodes.  Left
 * alone where x is not a node's value or is an output itself, and in a
 * graph with subgraphs (they may name x from inside). */
static void fold_output_identities(Graph *g)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		if (node_has_subgraphs(&g->nodes[i]))
			return;
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		if (n->op != OP_Identity || n->ninputs != 1 ||
		    n->noutputs != 1 || n->inputs[0] < 0 || n->outputs[0] < 0)
			continue;
		ValId x = n->inputs[0], y = n->outputs[0];
		Value *vx = &g->vals[x], *vy = &g->vals[y];
		if (vx->kind != VAL_NODE || vx->producer < 0 ||
		    !is_graph_output(g, y) || is_graph_output(g, x) ||
		    vx->dtype != vy->dtype || !shape_equal(&vx->shape, &vy->shape))
			continue;
		Node *p = &g->nodes[vx->producer];
		for (int32_t k = 0; k < p->noutputs; k++)
			if (p->outputs[k] == x)
				p->outputs[k] = y;
		for (int32_t j = 0; j < g->nnodes; j++)
			for (int32_t k = 0; k < g->nodes[j].ninputs; k++)
				if (g->nodes[j].inputs[k] == x)
					g->nodes[j].inputs[k] = y;
		n->inputs[0] = y;
		n->outputs[0] = x;
		vy->producer = vx->producer;
		vx->producer = i;
	}
}

/* ---- LayerNorm written out -------------------------------------------- */

/* n is ReduceMean of x over its last axis alone (an attribute: opset
 * 18's axes input is not matched), dims kept. */
static bool mean_last(Fuse *F, const Node *n, ValId x)
{
	const int64_t *ax = NULL;
	int32_t r = F->g->vals[x].shape.rank;
	if (!is_op(n, OP_ReduceMean) || n->inputs[0] != x ||
	    attr_int(n, "keepdims", 1) != 1 || r < 1 ||
	    (n->ninputs > 1 && n->inputs[1] >= 0))
		return false;
	return attr_ints(n, "axes", &ax) == 1 &&
	       (ax[0] == -1 || ax[0] == r - 1);
}

/* The two nodes that read v, neither taken in by a chain, in u[]
 * (Mul(d, d) reads d twice); 0, or -1 if v has other readers. */
static int two_nodes_read(Fuse *F, ValId v, Node **u)
{
	int n = 0, refs = 0;
	for (int32_t i = 0; i < F->g->nnodes; i++) {
		Node *m = &F->g->nodes[i];
		int r = 0;
		for (int32_t k = 0; k < m->ninputs; k++)
			r += m->inputs[k] == v;
		if (!r)
			continue;
		if (F->taken[i] || n == 2)
			return -1;
		u[n++] = m;
		refs += r;
	}
	return n == 2 && refs == F->uses[v] ? 0 : -1;
}

/* d * d or d ^ 2, n reading d. */
static bool square_of(Fuse *F, const Node *n, ValId d)
{
	float k;
	if (is_op(n, OP_Mul) && n->ninputs == 2)
		return n->inputs[0] == d && n->inputs[1] == d;
	ValId e = operand(n, OP_Pow, d, 0);
	return e >= 0 && scalar_const(F, e, &k) && k == 2;
}

/* Node div is d / sqrt(a) from a on: Sqrt then Div (Paddle2ONNX,
 * torch.onnx), or d times rsqrt(a) (tf2onnx) as Sqrt then Reciprocal,
 * or Pow(a, -0.5); the nodes between a and div into rs[0..1] (NULL
 * where fewer). */
static bool rsqrt_times(Fuse *F, ValId a, ValId d, const Node *div,
			Node **rs)
{
	float k;
	Node *n = sole_user(F, a);
	ValId e = operand(n, OP_Pow, a, 0), r;
	rs[0] = n, rs[1] = NULL;
	if (!keeps_shape(F, div, d))
		return false;
	if (e >= 0 && scalar_const(F, e, &k) && k == -0.5f)
		return sole_user(F, n->outputs[0]) == div &&
		       mul_of(F, div, d, n->outputs[0]);
	if ((r = unary_of(F, n, OP_Sqrt, a)) < 0)
		return false;
	Node *u = sole_user(F, r);
	if (u == div)
		return operand(div, OP_Div, d, 0) == r;
	ValId q = unary_of(F, u, OP_Reciprocal, r);
	rs[1] = u;
	return q >= 0 && sole_user(F, q) == div && mul_of(F, div, d, q);
}

/* LayerNorm over the last axis as Paddle2ONNX and torch.onnx (opset < 17)
 * write it out, from ReduceMean node i:
 *   m = ReduceMean(x), d = x - m, v = ReduceMean(d^2 or d*d),
 *   y = d / Sqrt(v + eps) * gamma [+ beta]
 * gamma and beta constants of the last axis' size (1-D).  Becomes one
 * LayerNormalization(x, gamma, beta; axis -1, epsilon eps) in the slot of
 * the last node, which keeps its output; the others go dead.  That op
 * computes the same, up to rounding, when x is float of static shape;
 * both means are over the last axis alone with dims kept (the
 * normalization axis, statistics per row broadcast back; keepdims 0
 * would broadcast them along another axis); d = x - m (m - x flips the
 * sign); the square is d * d or Pow(d, 2), 2 exactly; eps is a constant
 * >= 0 added inside the square root (d / (Sqrt(v) + eps) is another
 * function), the root divided by or its reciprocal multiplied; gamma and
 * beta are float 1-D constants of the last dim (per row ones are not
 * LayerNormalization's); every node keeps x's shape and dtype and each
 * value is read by the next step alone (d by its square and the Div),
 * none a graph output. */
static void match_layernorm(Fuse *F, int32_t i)
{
	Graph *g = F->g;
	Node *mean = &g->nodes[i];
	if (!is_op(mean, OP_ReduceMean) || F->taken[i] || mean->ninputs < 1)
		return;
	ValId x = mean->inputs[0], m = mean->outputs[0];
	const Value *xv = &g->vals[x];
	if (xv->dtype != DT_FLOAT || !shape_is_static(&xv->shape) ||
	    !mean_last(F, mean, x))
		return;
	Node *sub = sole_user(F, m);
	if (operand(sub, OP_Sub, m, 1) != x || !keeps_shape(F, sub, x))
		return;
	ValId d = sub->outputs[0];
	Node *users[2];
	if (two_nodes_read(F, d, users) < 0)
		return;
	for (int pick = 0; pick < 2; pick++) {
		Node *sq = users[pick], *div = users[!pick];
		if (!square_of(F, sq, d) || !keeps_shape(F, sq, x))
			continue;
		Node *var = sole_user(F, sq->outputs[0]);
		if (!mean_last(F, var, sq->outputs[0]))
			continue;
		Node *add = sole_user(F, var->outputs[0]);
		float eps;
		ValId e = operand(add, OP_Add, var->outputs[0], -1);
		if (e < 0 || !scalar_const(F, e, &eps) || !(eps >= 0))
			continue;
		Node *rs[2];
		if (!rsqrt_times(F, add->outputs[0], d, div, rs))
			continue;
		Node *mul = sole_user(F, div->outputs[0]), *last = mul;
		ValId gm = operand(mul, OP_Mul, div->outputs[0], -1);
		if (gm < 0 || !keeps_shape(F, mul, x) ||
		    !last_axis_const(F, mul, gm, div->outputs[0]))
			continue;
		Node *badd = sole_user(F, mul->outputs[0]);
		ValId bt = operand(badd, OP_Add, mul->outputs[0], -1);
		if (bt >= 0 && keeps_shape(F, badd, x) &&
		    last_axis_const(F, badd, bt, mul->outputs[0]))
			last = badd;
		else
			bt = -1;
		Node ln = { 0 };
		node_init(g, &ln, last->name, "LayerNormalization", "",
			  bt >= 0 ? 3 : 2, 1);
		ln.label = last->label;
		ln.inputs[0] = x;
		ln.inputs[1] = gm;
		if (bt >= 0)
			ln.inputs[2] = bt;
		ln.outputs[0] = last->outputs[0];
		node_add_attr(g, &ln, "axis", ATTR_INT)->i = -1;
		node_add_attr(g, &ln, "epsilon", ATTR_FLOAT)->f = eps;
		const Node *chain[] = { mean, sub, sq, var, add, rs[0], rs[1],
					div, mul };
		for (size_t k = 0; k < sizeof(chain) / sizeof(chain[0]); k++)
			if (chain[k])
				F->taken[chain[k] - g->nodes] = 1;
		int32_t at = (int32_t)(last - g->nodes);
		F->taken[at] = 1;
		g->nodes[at] = ln;
		g->vals[ln.outputs[0]].producer = at;
		return;
	}
}

/* A written-out activation of x (a value no anchor's chain took in:
 * after Add, Concat, an input ...), and the activations after it,
 * become one FusedActivation in the slot of the last node taken in,
 * which keeps its name and output. */
static void fuse_standalone(Fuse *F, ValId x)
{
	Graph *g = F->g;
	const Value *v = &g->vals[x];
	Chain ch = { .kind = -1, .cur = x, .last = -1, .extra = -1 };
	if ((v->kind != VAL_NODE && v->kind != VAL_INPUT) ||
	    v->tkind != TK_TENSOR || v->dtype != DT_FLOAT ||
	    !shape_is_static(&v->shape) || !match_written(F, &ch))
		return;
	while (match_act(F, &ch))
		;
	const Node *last = &g->nodes[ch.last];
	Node d;
	node_init(g, &d, last->name, "FusedActivation", GEARC_DOMAIN, 1, 1);
	d.label = last->label;
	d.inputs[0] = x;
	d.outputs[0] = ch.cur;
	add_acts(g, &d, &ch);
	g->nodes[ch.last] = d;
	g->vals[ch.cur].producer = ch.last;
}

static void free_uses(Fuse *F)
{
	free(F->uses);
	free(F->user1);
	free(F->user2);
	free(F->taken);
}

/* Fuses one static graph (not thread-safe beyond fold_get). */
static int fuse_one(Model *m, Graph *g, const PassOptions *o)
{
	if (o->no_fuse || g == m->dynamic)
		return 0;
	Fuse F = { .m = m, .g = g, .opset = model_opset(m) };
	Absorb *ab = absorb_begin(g);
	ValId *map = NULL;
	drop_same_casts(g);
	drop_inference_dropouts(m, g, F.opset);
	drop_zero_pads(g);
	shuffles_to_gathers(g);
	fold_output_identities(g);
	qfuse_graph(g);
	/* attention in a round of its own: its graph_dce() renumbers the
	 * values, and absorb_end() reads one map from the round's start */
	if (attn_fuse_graph(g, F.opset) > 0) {
		if (graph_dce(g, &map) < 0) {
			absorb_end(ab, g, NULL);
			return -1;
		}
		absorb_end(ab, g, map);
		free(map);
		map = NULL;
		ab = absorb_begin(g);
	}
	count_uses(&F);
	int rc = 0;
	for (int32_t i = 0; i < g->nnodes && !rc; i++) {
		rc = fuse_at(&F, i);
		match_layernorm(&F, i);
	}
	free_uses(&F);
	if (rc < 0 || graph_dce(g, &map) < 0) {
		absorb_end(ab, g, NULL);
		return -1;
	}
	absorb_end(ab, g, map);
	free(map);
	/* then, on what is left, written-out activations after no anchor */
	ab = absorb_begin(g);
	count_uses(&F);
	for (ValId x = 0; x < g->nvals; x++)
		fuse_standalone(&F, x);
	free_uses(&F);
	if (graph_dce(g, &map) < 0) {
		absorb_end(ab, g, NULL);
		return -1;
	}
	absorb_end(ab, g, map);
	free(map);
	absorb_prune(g); /* what the qdq pass named that is still here */
	return 0;
}

static int prune_one(Model *m, Graph *g, const PassOptions *o)
{
	(void)m, (void)o;
	absorb_prune(g);
	return 0;
}

int pass_fuse(Model *m, const PassOptions *o)
{
	int rc = for_each_gear_graph(m, fuse_one, o);
	fold_forget(m);
	/* the dynamic graph is not fused, but the qdq pass ran on it */
	if (!rc && m->dynamic)
		rc = prune_one(m, m->dynamic, o);
	return rc;
}
