/*
 * compiler/ops/contrib.c - ONNX Runtime's contrib ops (domain
 * com.microsoft, ops.h GEARC_MS_OPS) of the elementwise, normalization
 * and matrix-product families, with ONNX Runtime's semantics (its
 * docs/ContribOperators.md and CPU kernels):
 *
 *   Gelu X                      x (1 + erf(x / sqrt 2)) / 2
 *   BiasGelu A, B               Gelu(A + B), B 1-D over the last axis
 *   FastGelu X, bias?           GELU's tanh form of X (+ bias)
 *   QuickGelu X (alpha 1.702)   x sigmoid(alpha x)
 *   BiasAdd X, bias, skip       X + bias + skip, X and skip [N, S, C]
 *   SkipLayerNormalization input, skip, gamma, beta?, bias?
 *   SkipSimplifiedLayerNormalization input, skip, gamma, bias?
 *                               s = input + skip (+ bias) over rows of the
 *                               last axis, LayerNorm or RMS-norm of s;
 *                               outputs Y, mean, inv_std_var ([..., 1]),
 *                               s (ONNX Runtime writes the simplified
 *                               form's mean as 0, and so does gearc)
 *   SimplifiedLayerNormalization X, scale (default domain: ONNX Runtime
 *                               registers it there) RMS-norm from axis
 *   FusedMatMul A, B            alpha op(A) op(B) as numpy.matmul, op
 *                               transposing the last two dims (transA,
 *                               transB) after moving dim 0 next to them
 *                               (transBatchA, transBatchB)
 *
 * and contrib_import, which gives ONNX Runtime's FusedConv and FusedGemm
 * gearc's own attributes (ops.h).  Every kernel computes in fp32 from
 * float inputs (other float dtypes converted), the transcendental parts
 * in double, as ONNX Runtime's CPU kernels compute in fp32.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compiler/act.h"
#include "opimpl.h"

/* ---- ONNX Runtime's FusedConv and FusedGemm as gearc's ------------------ */

/* ONNX Runtime's fused activation names and how their parameters come:
 * FusedConv's "activation_params" (a list) or FusedGemm's
 * "activation_alpha", "activation_beta", "activation_gamma". */
typedef struct MsAct {
	const char *name;
	int kind;	   /* ActKind */
	int nparams;	   /* FusedConv: activation_params' length */
	const char *a, *b; /* FusedGemm: the attributes of alpha, beta */
	bool conv, gemm;   /* which op takes it */
} MsAct;

static const MsAct ms_acts[] = {
	{ "Relu", ACT_Relu, 0, NULL, NULL, true, true },
	{ "Tanh", ACT_Tanh, 0, NULL, NULL, true, true },
	{ "Sigmoid", ACT_Sigmoid, 0, NULL, NULL, true, true },
	{ "LeakyRelu", ACT_LeakyRelu, 1, "activation_alpha", NULL, true,
	  true },
	{ "Clip", ACT_Clip, 2, NULL, NULL, true, false },
	{ "HardSigmoid", ACT_HardSigmoid, 2, "activation_alpha",
	  "activation_beta", true, true },
	{ "Elu", ACT_Elu, 0, "activation_alpha", NULL, false, true },
	{ "Selu", ACT_Selu, 0, "activation_alpha", "activation_gamma", false,
	  true },
	{ "Softplus", ACT_Softplus, 0, NULL, NULL, false, true },
};

static const char *ms_act_names(bool conv, char *buf, size_t size)
{
	size_t at = 0;
	*buf = 0;
	for (size_t k = 0; k < sizeof(ms_acts) / sizeof(*ms_acts); k++)
		if ((conv ? ms_acts[k].conv : ms_acts[k].gemm) && at < size)
			at += (size_t)snprintf(buf + at, size - at, "%s%s",
					       at ? ", " : "", ms_acts[k].name);
	return buf;
}

/* Drops attribute name of n (if present). */
static void drop_attr(Node *n, const char *name)
{
	for (int32_t k = 0; k < n->nattrs; k++)
		if (!strcmp(n->attrs[k].name, name)) {
			memmove(&n->attrs[k], &n->attrs[k + 1],
				(size_t)(n->nattrs - k - 1) * sizeof(Attr));
			n->nattrs--;
			return;
		}
}

/* A FLOAT attribute of n, or dflt. */
static float float_attr_or(const Node *n, const char *name, float dflt)
{
	const Attr *a = node_attr(n, name);
	return a && a->type == ATTR_FLOAT ? a->f : dflt;
}

int contrib_import(Graph *g, Node *n)
{
	if (!domain_is_ms(n->domain) ||
	    (n->op != OP_FusedConv && n->op != OP_FusedGemm))
		return 0;
	bool conv = n->op == OP_FusedConv;
	char names[160];
	const char *what = conv ? "FusedConv" : "FusedGemm";
	const Attr *act = node_attr(n, "activation");
	if (node_attr(n, FUSED_ACTS_ATTR) || node_attr(n, FUSED_Z_AFTER_ATTR))
		return error("node '%s' (%s): attribute '%s' is gearc's, not "
			     "ONNX Runtime's (activation, activation_params)",
			     n->name, what,
			     node_attr(n, FUSED_ACTS_ATTR) ? FUSED_ACTS_ATTR
							   : FUSED_Z_AFTER_ATTR);
	const MsAct *m = NULL;
	if (act && act->type != ATTR_STRING)
		return error("node '%s' (%s): activation is not a string",
			     n->name, what);
	for (size_t k = 0; act && k < sizeof(ms_acts) / sizeof(*ms_acts); k++)
		if ((conv ? ms_acts[k].conv : ms_acts[k].gemm) &&
		    strlen(ms_acts[k].name) == act->s.len &&
		    !memcmp(ms_acts[k].name, act->s.data, act->s.len))
			m = &ms_acts[k];
	if (act && !m)
		return error("node '%s' (%s): activation '%.*s' is not "
			     "supported; expected one of %s", n->name, what,
			     (int)act->s.len, (const char *)act->s.data,
			     ms_act_names(conv, names, sizeof(names)));
	float par[2] = { 0, 0 };
	if (m) {
		const ActInfo *ai = &act_info[m->kind];
		par[0] = ai->adef, par[1] = ai->bdef;
	}
	const Attr *ps = node_attr(n, "activation_params");
	if (conv && m && m->nparams) {
		if (!ps || ps->type != ATTR_FLOATS || ps->n != m->nparams)
			return error("node '%s' (FusedConv): activation '%s' "
				     "takes %d activation_params, the node has "
				     "%d", n->name, m->name, m->nparams,
				     ps && ps->type == ATTR_FLOATS ? ps->n : 0);
		for (int k = 0; k < m->nparams; k++)
			par[k] = ps->floats[k];
	}
	if (!conv && m) {
		if (m->a)
			par[0] = float_attr_or(n, m->a, par[0]);
		if (m->b)
			par[1] = float_attr_or(n, m->b, par[1]);
	}
	static const char *const ort_attrs[] = {
		"activation", "activation_params", "activation_alpha",
		"activation_beta", "activation_gamma"
	};
	for (size_t k = 0; k < sizeof(ort_attrs) / sizeof(*ort_attrs); k++)
		drop_attr(n, ort_attrs[k]);
	if (m) {
		Attr *as = node_add_attr(g, n, FUSED_ACTS_ATTR, ATTR_STRINGS);
		Bytes *s = arena_alloc(g->arena, sizeof(Bytes));
		s->len = strlen(act_info[m->kind].name);
		s->data = (const uint8_t *)arena_strdup(g->arena,
							act_info[m->kind].name);
		as->n = 1;
		as->strings = s;
		Attr *ap = node_add_attr(g, n, FUSED_ACT_PARAMS_ATTR,
					 ATTR_FLOATS);
		ap->n = 2;
		ap->floats = arena_memdup(g->arena, par, sizeof(par));
	}
	n->domain = GEARC_DOMAIN;
	return 0;
}

/* ---- shared ------------------------------------------------------------ */

/* Input i (if present and of known shape) is 1-D of n values (n -1:
 * any); what names it in the error. */
static int check_vector(OpCtx *c, int i, int64_t n, const char *what)
{
	Value *v = op_in(c, i);
	char s[128];
	if (!v || v->shape.rank < 0)
		return 0;
	if (v->shape.rank != 1 ||
	    (n >= 0 && v->shape.dims[0] >= 0 && v->shape.dims[0] != n))
		return op_error(c, "input %d (%s, '%s') has shape %s, expected "
				"[%lld] (the last dim of input 0)", i, what,
				v->name, shape_str(&v->shape, s, sizeof(s)),
				(long long)n);
	return 0;
}

/* Input i is a float tensor of input 0's dtype. */
static int check_float_like0(OpCtx *c, int i)
{
	return i == 0 ? op_check_dtype(c, 0, DTS_FLOAT)
		      : op_check_same_dtype(c, i, 0);
}

/* Output o of dtype dt and shape s as floats to fill: *f (converted by
 * nn_out_done when o is not float). */
static Tensor *floats_out(OpCtx *c, int o, int dt, const Shape *s, float **f)
{
	Tensor *t = op_new_output(c, o, dt, s);
	*f = t ? nn_out_floats(c, t) : NULL;
	return t && *f ? t : NULL;
}

/* ---- the GELU family, BiasAdd ----------------------------------------- */

int infer_ms_gelu(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int op = c->n->op;
	if (!x || check_float_like0(c, 0) < 0 ||
	    (op == OP_MS_BiasGelu && !op_need_in(c, 1)) ||
	    check_float_like0(c, 1) < 0)
		return -1;
	if ((op == OP_MS_Gelu || op == OP_MS_QuickGelu) && op_in(c, 1))
		return op_error(c, "takes one input, the node has %d",
				c->n->ninputs);
	if (check_vector(c, 1, shape_dim(&x->shape, x->shape.rank - 1),
			 "bias") < 0)
		return -1;
	if (op_in(c, 1) && x->shape.rank == 0)
		return op_error(c, "input 0 ('%s') is a scalar, expected a "
				"last axis for the bias", x->name);
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

static double gelu_of(int op, double v, double alpha)
{
	switch (op) {
	case OP_MS_FastGelu:
		return 0.5 * v *
		       (1 + tanh(ACT_SQRT_2_PI * (v + 0.044715 * v * v * v)));
	case OP_MS_QuickGelu:
		return v * act_sigmoid_f64(alpha * v);
	default: /* Gelu, BiasGelu */
		return 0.5 * v * (1 + erf(v * M_SQRT1_2));
	}
}

int run_ms_gelu(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *b = op_const_in(c, 1);
	if (!x || (op_in(c, 1) && !b))
		return 0;
	const float *xf = nn_floats(c, x), *bf = b ? nn_floats(c, b) : NULL;
	float *yf;
	Tensor *y = floats_out(c, 0, x->dtype, &x->shape, &yf);
	if (!xf || (b && !bf) || !y)
		return -1;
	int64_t n = shape_numel(&x->shape), per = b ? shape_numel(&b->shape)
						     : 0;
	double alpha = attr_float(c->n, "alpha", 1.702f);
	for (int64_t i = 0; i < n; i++) {
		float v = bf ? xf[i] + bf[i % per] : xf[i];
		yf[i] = (float)gelu_of(c->n->op, v, alpha);
	}
	nn_out_done(c, 0, y, yf);
	return 0;
}

int infer_ms_bias_add(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	if (!x || !op_need_in(c, 1) || !op_need_in(c, 2) ||
	    check_float_like0(c, 0) < 0 || check_float_like0(c, 1) < 0 ||
	    check_float_like0(c, 2) < 0 || op_check_rank(c, 0, 3, 3) < 0 ||
	    check_vector(c, 1, shape_dim(&x->shape, 2), "bias") < 0)
		return -1;
	Value *s = op_in(c, 2);
	char a[128], b[128];
	if (x->shape.rank >= 0 && s->shape.rank >= 0 &&
	    !nn_shape_compatible(&x->shape, &s->shape))
		return op_error(c, "input 2 (skip, '%s') has shape %s, expected "
				"input 0's %s", s->name,
				shape_str(&s->shape, a, sizeof(a)),
				shape_str(&x->shape, b, sizeof(b)));
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

int run_ms_bias_add(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *b = op_const_in(c, 1);
	const Tensor *s = op_const_in(c, 2);
	if (!x || !b || !s)
		return 0;
	const float *xf = nn_floats(c, x), *bf = nn_floats(c, b);
	const float *sf = nn_floats(c, s);
	float *yf;
	Tensor *y = floats_out(c, 0, x->dtype, &x->shape, &yf);
	if (!xf || !bf || !sf || !y)
		return -1;
	int64_t n = shape_numel(&x->shape), per = shape_numel(&b->shape);
	for (int64_t i = 0; i < n; i++)
		yf[i] = xf[i] + bf[i % per] + sf[i];
	nn_out_done(c, 0, y, yf);
	return 0;
}

/* ---- normalizations ---------------------------------------------------- */

/* Skip*Normalization's inputs: the bias' and beta's index (-1: none). */
static int skip_bias_in(const Node *n)
{
	return n->op == OP_MS_SkipLayerNormalization ? 4 : 3;
}

static int skip_beta_in(const Node *n)
{
	return n->op == OP_MS_SkipLayerNormalization ? 3 : -1;
}

/* skip's shape s is x's, or x's without its first dim, or x's with a
 * first dim of 1: a whole number of rows that repeats over x's. */
static bool skip_shape_ok(const Shape *s, const Shape *x)
{
	if (s->rank < 0 || x->rank < 0)
		return true;
	int32_t off = x->rank - s->rank;
	if (off < 0 || off > 1)
		return false;
	for (int32_t i = 0; i < s->rank; i++) {
		int64_t a = s->dims[i], b = x->dims[i + off];
		if (a >= 0 && b >= 0 && a != b && !(i == 0 && !off && a == 1))
			return false;
	}
	return true;
}

int infer_ms_skip_norm(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *s = x ? op_need_in(c, 1) : NULL;
	int bi = skip_bias_in(c->n), be = skip_beta_in(c->n);
	char a[128], b[128];
	if (!s || !op_need_in(c, 2) || check_float_like0(c, 0) < 0 ||
	    check_float_like0(c, 1) < 0 || check_float_like0(c, 2) < 0 ||
	    (be >= 0 && check_float_like0(c, be) < 0) ||
	    check_float_like0(c, bi) < 0 || op_check_rank(c, 0, 2, 3) < 0)
		return -1;
	if (c->n->ninputs > bi + 1)
		return op_error(c, "has %d inputs, at most %d expected",
				c->n->ninputs, bi + 1);
	if (!skip_shape_ok(&s->shape, &x->shape))
		return op_error(c, "input 1 (skip, '%s') has shape %s, expected "
				"input 0's %s, or it without its first dim "
				"or with a first dim of 1", s->name,
				shape_str(&s->shape, a, sizeof(a)),
				shape_str(&x->shape, b, sizeof(b)));
	int64_t h = shape_dim(&x->shape, x->shape.rank - 1);
	if (check_vector(c, 2, h, "gamma") < 0 ||
	    (be >= 0 && check_vector(c, be, h, "beta") < 0) ||
	    check_vector(c, bi, h, "bias") < 0)
		return -1;
	Shape st = x->shape;
	if (st.rank > 0)
		st.dims[st.rank - 1] = 1;
	op_set_out(c, 0, x->dtype, &x->shape);
	op_set_out(c, 1, DT_FLOAT, &st);
	op_set_out(c, 2, DT_FLOAT, &st);
	op_set_out(c, 3, x->dtype, &x->shape);
	return 0;
}

/* Row r of n values s normalized into y: LayerNorm with gamma and beta
 * (NULL: 0), or RMS-norm (rms) with gamma; its mean (0 for RMS) and
 * inverse deviation into *mean, *inv.  Moments in double. */
static void norm_row(const float *s, int64_t n, bool rms, double eps,
		     const float *gamma, const float *beta, float *y,
		     float *mean, float *inv)
{
	double m = 0, v = 0;
	for (int64_t j = 0; j < n; j++)
		m += s[j];
	m = rms || !n ? 0 : m / (double)n;
	for (int64_t j = 0; j < n; j++)
		v += (s[j] - m) * (s[j] - m);
	v = n ? v / (double)n : 0;
	float fm = (float)m, fi = (float)(1 / sqrt(v + eps));
	for (int64_t j = 0; j < n; j++)
		y[j] = (s[j] - fm) * fi * gamma[j] + (beta ? beta[j] : 0.0f);
	*mean = fm;
	*inv = fi;
}

int run_ms_skip_norm(OpCtx *c)
{
	int bi = skip_bias_in(c->n), be = skip_beta_in(c->n);
	const Tensor *x = op_const_in(c, 0), *s = op_const_in(c, 1);
	const Tensor *g = op_const_in(c, 2);
	const Tensor *b = be >= 0 ? op_const_in(c, be) : NULL;
	const Tensor *bias = op_const_in(c, bi);
	if (!x || !s || !g || (be >= 0 && op_in(c, be) && !b) ||
	    (op_in(c, bi) && !bias))
		return 0;
	bool rms = c->n->op == OP_MS_SkipSimplifiedLayerNormalization;
	double eps = attr_float(c->n, "epsilon", 1e-12f);
	const Shape *xs = &x->shape;
	int64_t cols = xs->dims[xs->rank - 1];
	int64_t rows = cols ? shape_numel(xs) / cols : 0;
	int64_t srows = cols ? shape_numel(&s->shape) / cols : 0;
	Shape st = *xs;
	st.dims[st.rank - 1] = 1;
	const float *xf = nn_floats(c, x), *sf = nn_floats(c, s);
	const float *gf = nn_floats(c, g), *bf = b ? nn_floats(c, b) : NULL;
	const float *kf = bias ? nn_floats(c, bias) : NULL;
	float *yf, *mf = NULL, *vf = NULL, *uf = NULL;
	Tensor *y = floats_out(c, 0, x->dtype, xs, &yf), *mt = NULL;
	Tensor *vt = NULL, *ut = NULL;
	if (!xf || !sf || !gf || (b && !bf) || (bias && !kf) || !y ||
	    (op_out(c, 1) && !(mt = floats_out(c, 1, DT_FLOAT, &st, &mf))) ||
	    (op_out(c, 2) && !(vt = floats_out(c, 2, DT_FLOAT, &st, &vf))) ||
	    (op_out(c, 3) && !(ut = floats_out(c, 3, x->dtype, xs, &uf))))
		return -1;
	float *sum = uf ? uf : op_scratch(c, (size_t)cols * sizeof(float));
	if (!sum)
		return -1;
	for (int64_t r = 0; r < rows; r++) {
		float *sr = uf ? sum + r * cols : sum, m, inv;
		const float *xr = xf + r * cols, *kr = sf + (r % srows) * cols;
		for (int64_t j = 0; j < cols; j++)
			sr[j] = kf ? xr[j] + kr[j] + kf[j] : xr[j] + kr[j];
		norm_row(sr, cols, rms, eps, gf, bf, yf + r * cols, &m, &inv);
		if (mf)
			mf[r] = m;
		if (vf)
			vf[r] = inv;
	}
	nn_out_done(c, 0, y, yf);
	if (mt)
		nn_out_done(c, 1, mt, mf);
	if (vt)
		nn_out_done(c, 2, vt, vf);
	if (ut)
		nn_out_done(c, 3, ut, uf);
	return 0;
}

/* SimplifiedLayerNormalization: LayerNormalization's inputs, attributes
 * and outputs less B and Mean (its output 1 is inv_std_var). */
int infer_ms_rms_norm(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t stash = attr_int(c->n, "stash_type", DT_FLOAT);
	int32_t axis;
	if (!x || !op_need_in(c, 1) || check_float_like0(c, 0) < 0 ||
	    check_float_like0(c, 1) < 0)
		return -1;
	if (c->n->ninputs > 2)
		return op_error(c, "has %d inputs, expected 2 (X, scale)",
				c->n->ninputs);
	if (stash != DT_FLOAT && stash != DT_DOUBLE)
		return op_error(c, "stash_type is %lld, expected 1 (float) or "
				"11 (double)", (long long)stash);
	op_set_out(c, 0, x->dtype, &x->shape);
	Shape st = x->shape;
	if (st.rank >= 0) {
		if (op_axis(c, "axis", attr_int(c->n, "axis", -1), st.rank,
			    &axis) < 0)
			return -1;
		Shape tail = shape_of(st.rank - axis, st.dims + axis);
		if (op_broadcast_to(c, 1, &tail) < 0)
			return -1;
		for (int32_t i = axis; i < st.rank; i++)
			st.dims[i] = 1;
	}
	op_set_out(c, 1, DT_FLOAT, &st);
	return 0;
}

int run_ms_rms_norm(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *g = op_const_in(c, 1);
	if (!x || !g)
		return 0;
	const Shape *xs = &x->shape;
	int32_t axis;
	if (op_axis(c, "axis", attr_int(c->n, "axis", -1), xs->rank, &axis) < 0)
		return -1;
	int64_t rows = 1, cols = 1;
	for (int32_t i = 0; i < xs->rank; i++)
		*(i < axis ? &rows : &cols) *= xs->dims[i];
	Shape st = *xs;
	for (int32_t i = axis; i < st.rank; i++)
		st.dims[i] = 1;
	double eps = attr_float(c->n, "epsilon", 1e-5f);
	const float *xf = nn_floats(c, x), *gf = nn_floats(c, g);
	float *w = op_scratch(c, (size_t)cols * sizeof(float)), *yf, *vf = NULL;
	Tensor *y = floats_out(c, 0, x->dtype, xs, &yf), *vt = NULL;
	if (!xf || !gf || !w || !y ||
	    (op_out(c, 1) && !(vt = floats_out(c, 1, DT_FLOAT, &st, &vf))))
		return -1;
	nn_expand_tail(gf, &g->shape, xs->dims + axis, xs->rank - axis, 1, w);
	for (int64_t r = 0; r < rows; r++) {
		float m, inv;
		norm_row(xf + r * cols, cols, true, eps, w, NULL,
			 yf + r * cols, &m, &inv);
		if (vf)
			vf[r] = inv;
	}
	nn_out_done(c, 0, y, yf);
	if (vt)
		nn_out_done(c, 1, vt, vf);
	return 0;
}

/* ---- FusedMatMul --------------------------------------------------------- */

bool fused_matmul_perm(const Node *n, int k, int32_t r, int32_t *perm)
{
	bool tbatch = attr_int(n, k ? "transBatchB" : "transBatchA", 0) != 0;
	bool t = attr_int(n, k ? "transB" : "transA", 0) != 0, same = true;
	for (int32_t i = 0; i < r; i++)
		perm[i] = i;
	if (tbatch && r >= 3) {
		for (int32_t i = 0; i < r - 2; i++)
			perm[i] = i + 1;
		perm[r - 2] = 0;
	}
	if (t && r >= 2) {
		int32_t d = perm[r - 1];
		perm[r - 1] = perm[r - 2];
		perm[r - 2] = d;
	}
	for (int32_t i = 0; i < r; i++)
		same = same && perm[i] == i;
	return same;
}

/* The view FusedMatMul multiplies of its operand k, of shape s: *v its
 * shape, perm[i] the dim of s it reads; true if that is s itself. */
static bool fm_view(const Node *n, int k, const Shape *s, Shape *v,
		    int32_t *perm)
{
	bool same = fused_matmul_perm(n, k, s->rank, perm);
	v->rank = s->rank;
	for (int32_t i = 0; i < s->rank; i++)
		v->dims[i] = s->dims[perm[i]];
	return same;
}

int infer_ms_fused_matmul(OpCtx *c)
{
	Value *a = op_need_in(c, 0), *b = a ? op_need_in(c, 1) : NULL;
	char sa[128], sb[128];
	if (!b || check_float_like0(c, 0) < 0 || check_float_like0(c, 1) < 0 ||
	    op_check_rank(c, 0, 1, MAX_RANK) < 0 ||
	    op_check_rank(c, 1, 1, MAX_RANK) < 0)
		return -1;
	Shape y = shape_unknown(), av, bv;
	if (a->shape.rank < 0 || b->shape.rank < 0) {
		op_set_out(c, 0, a->dtype, &y);
		return 0;
	}
	int32_t perm[MAX_RANK], ra = a->shape.rank, rb = b->shape.rank;
	fm_view(c->n, 0, &a->shape, &av, perm);
	fm_view(c->n, 1, &b->shape, &bv, perm);
	int64_t ka = av.dims[ra - 1], kb = bv.dims[rb >= 2 ? rb - 2 : 0];
	if (ka >= 0 && kb >= 0 && ka != kb)
		return op_error(c, "inner dims differ: input 0 ('%s') read as "
				"%s has %lld, input 1 ('%s') read as %s has "
				"%lld", a->name, shape_str(&av, sa, sizeof(sa)),
				(long long)ka, b->name,
				shape_str(&bv, sb, sizeof(sb)), (long long)kb);
	Shape ba = shape_of(ra >= 2 ? ra - 2 : 0, av.dims);
	Shape bb = shape_of(rb >= 2 ? rb - 2 : 0, bv.dims);
	if (op_broadcast(c, &ba, &bb, &y) < 0)
		return -1;
	if (ra >= 2)
		y.dims[y.rank++] = av.dims[ra - 2];
	if (rb >= 2)
		y.dims[y.rank++] = bv.dims[rb - 1];
	op_set_out(c, 0, a->dtype, &y);
	return 0;
}

/* Operand k of the node as the view it multiplies, materialised. */
static const Tensor *fm_operand(OpCtx *c, int k)
{
	const Tensor *x = op_const_in(c, k);
	int32_t perm[MAX_RANK];
	int64_t st[MAX_RANK], vst[MAX_RANK];
	Shape v;
	if (fm_view(c->n, k, &x->shape, &v, perm))
		return x;
	Tensor *r = op_new_tensor(c, x->dtype, &v);
	if (!r)
		return NULL;
	tn_strides(&x->shape, st);
	for (int32_t i = 0; i < v.rank; i++)
		vst[i] = st[perm[i]];
	tn_copy_strided(r, v.rank, v.dims, x, 0, vst);
	return r;
}

int run_ms_fused_matmul(OpCtx *c)
{
	if (!op_const_in(c, 0) || !op_const_in(c, 1))
		return 0;
	const Tensor *a = fm_operand(c, 0), *b = a ? fm_operand(c, 1) : NULL;
	const Shape *ys = &op_out(c, 0)->shape;
	if (!b)
		return -1;
	int dt = a->dtype;
	double alpha = attr_float(c->n, "alpha", 1.0f);
	Tensor *y = op_new_output(c, 0, dt, ys);
	if (!y)
		return -1;
	int64_t n = shape_numel(ys);
	if (dt == DT_DOUBLE) {
		if (matmul_batched(c, MM_F64, &a->shape, a->data, &b->shape,
				   b->data, ys, tensor_mut(y)) < 0)
			return -1;
		double *yd = tensor_mut(y);
		for (int64_t i = 0; i < n; i++)
			yd[i] *= alpha;
		op_set_const(c, 0, y);
		return 0;
	}
	const float *af = nn_floats(c, a), *bf = nn_floats(c, b);
	float *yf = nn_out_floats(c, y);
	if (!af || !bf || !yf ||
	    matmul_batched(c, MM_F32, &a->shape, af, &b->shape, bf, ys, yf) < 0)
		return -1;
	for (int64_t i = 0; i < n; i++)
		yf[i] *= (float)alpha;
	nn_out_done(c, 0, y, yf);
	return 0;
}
