/*
 * compiler/act.h - the one activation table: every fact about an
 * activation that the fuse pass (passes/fuse.c), the fused ops'
 * reference kernels (compiler/ops/fused.c), gearc export
 * (passes/unfuse.c), oneDNN's post-ops (runtime/dnnl.c) and the plain-C
 * fast paths (runtime/direct.c) need lives in its line.
 *
 * GEARC_ACTS(X) lists the activations a fused op (FusedConv, FusedGemm,
 * FusedMatMul after its product, FusedActivation alone) applies, one
 * line each:
 *   X(Name, op, aname, adef, bname, bdef, f64, f32, rel, abs, dnnl, dp,
 *     since, written)
 *   Name    its name in the fused op's "activations" attribute;
 *   op      the standard ONNX op it is (fused from it when it follows an
 *           anchor alone, written back as it), or 0 if none;
 *   aname, adef, bname, bdef
 *           the op's attributes that are the activation's two parameters
 *           (alpha, beta in "activation_params"), with the defaults ONNX
 *           gives them, or 0 (a parameter no attribute sets: 0, or
 *           Linear's own);
 *   f64     the reference form in double, an expression of x (double),
 *           a and b (alpha and beta);
 *   f32     the one fp32 form (float x, a, b), branch-free where it is
 *           on a hot path so that the loops calling it vectorise: the
 *           vector forms are loops over it (act_loop_f32 below, which
 *           direct.c's FusedActivation and chanwise.c's 1x1
 *           convolution compile for their ISAs; Sigmoid's and Erf's own),
 *           and rnn.c's cells call it too;
 *   rel, abs
 *           the fp32 form's accuracy: |f32 - f64| <= rel |f64| + abs
 *           over the float inputs (tests/test_act.c sweeps them, with
 *           the defaults or, for Clip and Linear, its own parameters);
 *           where a * x + b cancels, up to half an ulp of b is lost;
 *   dnnl    oneDNN's eltwise algorithm (dnnl_ prefixed by dnnl.c);
 *   dp      how alpha and beta reach it (ActDnnl);
 *   since   the opset from which gearc export writes the op itself
 *           (0: never: the op does not exist, or gearc does not know
 *           it), before which
 *   written names how unfuse.c writes it out in standard ops (its
 *           emit_written_<written>), or none.
 *
 * Adding an activation: one line here; fuse.c matches its op, if any, by
 * this table; a written-out form that exporters emit needs a matcher in
 * fuse.c, and written != none an emit_written_<written> in unfuse.c.
 */
#ifndef GEARC_ACT_H
#define GEARC_ACT_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "compiler/ops.h"

/* How an activation's alpha and beta become oneDNN's. */
typedef enum {
	DP_NONE,   /* alg(0, 0) */
	DP_ALPHA,  /* alg(alpha, 0) */
	DP_BOTH,   /* alg(alpha, beta) */
	DP_ONE,    /* alg(1, 0): swish's sigmoid scale */
	DP_CLIP01, /* alg(alpha, beta), then clip_v2(0, 1) */
	DP_SCALE,  /* alg(alpha, 0), then linear(beta, 0) */
} ActDnnl;

/* Sigmoid in fp32: exp by range reduction to [-ln2/2, ln2/2] and a
 * polynomial fitted to exp's relative error, in branch-free code the
 * compiler vectorises:
 *   - EXP_BIAS: v / ln 2 plus 1.5 * 2^23 + 127 rounds to a float whose
 *     low mantissa bits are k + 127, k = round(v / ln 2): shifted left
 *     23 bits (by the caller) they are 2^k, s;
 *   - EXP_FINISH: r = v - k ln 2 in [-ln2/2, ln2/2] (ln 2 in two
 *     parts) and exp(v) = s + s r (1 + r q(r)), q of degree 3 fitted to
 *     exp's relative error by tests/fit_exp.py (within 1.8e-7 of exp in
 *     double over [-87, 88]).
 * Ten multiply-adds and a shift, where Cephes' expf (degree 6, a float
 * to int conversion) took 15.  The macros take a float or a GCC vector
 * (runtime/direct.c's Softmax). */
#define EXP_MAGIC 12583039.0f /* 1.5 * 2^23 + 127 */
#define EXP_BIAS(v) ((v) * 1.44269504088896341f + EXP_MAGIC)
#define EXP_FINISH(v, fk, s, y)                                           \
	do {                                                              \
		__typeof__(v) k_ = (fk) - EXP_MAGIC;                      \
		__typeof__(v) r_ = (v) - k_ * 0.693359375f -              \
				   k_ * -2.12194440e-4f;                  \
		__typeof__(v) q_ = ((8.312524296e-03f * r_ +              \
				     4.189011455e-02f) * r_ +             \
				    1.666711420e-01f) * r_ +              \
				   4.999923110e-01f;                      \
		(y) = r_ * (s) * (q_ * r_ + 1.0f) + (s);                  \
	} while (0)

/* exp(v) for v in [-87, 88] (2^k stays a normal float). */
static inline __attribute__((always_inline)) float exp_clamped(float v)
{
	float fk = EXP_BIAS(v), s, y;
	uint32_t bits;
	memcpy(&bits, &fk, sizeof(bits));
	bits <<= 23;
	memcpy(&s, &bits, sizeof(s));
	EXP_FINISH(v, fk, s, y);
	return y;
}

/* v clamped to [-87, 88], NaN to -87 (2^k in exp_clamped is a normal
 * float only there; callers find NaN inputs themselves). */
static inline __attribute__((always_inline)) float clamp_exp_arg(float v)
{
	v = v >= -87.0f ? v : -87.0f;
	return v <= 88.0f ? v : 88.0f;
}

/* Below -88 (down to -inf) the sigmoid is under 6.1e-39, and 0: a
 * product x Sigmoid(x) at -inf is then NaN, as ONNX's Sigmoid and Mul
 * compute it (ONNX Runtime's QuickGelu too), not -inf times 1.6e-38. */
static inline __attribute__((always_inline)) float act_sigmoid_f32(float x)
{
	float s = 1.0f / (1.0f + exp_clamped(clamp_exp_arg(-x)));
	s = x < -88.0f ? 0.0f : s;
	return x == x ? s : x; /* NaN stays NaN (the clamp made it -87) */
}

/* tanh in fp32 through exp, several times faster than libm's tanhf
 * (expm1f inside): (1 - e) / (1 + e) with e = exp(-2|x|), its error a few
 * ulp of 1 once |x| >= 1/8; below that the odd Taylor series to x^9,
 * whose first omitted term is under 2e-12 there.  NaN stays NaN. */
static inline __attribute__((always_inline)) float act_tanh_f32(float x)
{
	float ax = fabsf(x);
	if (ax < 0.125f) {
		float x2 = x * x;
		return x * (1 + x2 * (-1.0f / 3 + x2 * (2.0f / 15 +
		       x2 * (-17.0f / 315 + x2 * (62.0f / 2835)))));
	}
	float e = expf(-2 * ax);
	return copysignf((1 - e) / (1 + e), x);
}

/* erf(x) = x P(x^2) / Q(x^2) on [-4, 4] (+-1 outside, within float), the
 * rational form of Eigen's fast erf: within 5e-7 of the double erf. */
static inline __attribute__((always_inline)) float act_erf_f32(float v)
{
	v = v < -4.0f ? -4.0f : v;
	v = v > 4.0f ? 4.0f : v;
	float v2 = v * v;
	float p = -2.72614225801306e-10f;
	p = p * v2 + 2.77068142495902e-08f;
	p = p * v2 - 2.10102402082508e-06f;
	p = p * v2 - 5.69250639462346e-05f;
	p = p * v2 - 7.34990630326855e-04f;
	p = p * v2 - 2.95459980854025e-03f;
	p = p * v2 - 1.60960333262415e-02f;
	float q = -1.45660718464996e-05f;
	q = q * v2 - 2.13374055278905e-04f;
	q = q * v2 - 1.68282697438203e-03f;
	q = q * v2 - 7.37332916720468e-03f;
	q = q * v2 - 1.42647390514189e-02f;
	return v * p / q;
}

static inline double act_sigmoid_f64(double x)
{
	return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
}

static inline double act_softplus_f64(double x)
{
	return (x > 0 ? x : 0) + log1p(exp(-fabs(x)));
}

static inline float act_softplus_f32(float x)
{
	return (x > 0 ? x : 0) + log1pf(expf(-fabsf(x)));
}

/* max(0, min(1, v)), NaN staying NaN */
static inline double act_clamp01(double v) { return v < 0 ? 0 : v > 1 ? 1 : v; }

static inline __attribute__((always_inline)) float act_clamp01f(float v)
{
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* sqrt(2 / pi), GELU's tanh form's scale */
#define ACT_SQRT_2_PI 0.79788456080286535588

#define GEARC_ACTS(X) \
	X(Relu,        OP_Relu,        0,       0.0f,      0,       0.0f, \
	  (x < 0 ? 0 : x), \
	  (x < 0 ? 0 : x), 0, 0, \
	  eltwise_relu, DP_NONE, 1, none) \
	X(LeakyRelu,   OP_LeakyRelu,   "alpha", 0.01f,     0,       0.0f, \
	  (x < 0 ? a * x : x), \
	  (x < 0 ? a * x : x), 6e-8, 1e-45, \
	  eltwise_relu, DP_ALPHA, 1, none) \
	X(Clip,        OP_Clip,        "min",   -FLT_MAX,  "max",   FLT_MAX, \
	  (x < a ? a : x > b ? b : x), \
	  (x < a ? a : x > b ? b : x), 0, 0, \
	  eltwise_clip_v2, DP_BOTH, 1, none) \
	X(Sigmoid,     OP_Sigmoid,     0,       0.0f,      0,       0.0f, \
	  act_sigmoid_f64(x), \
	  act_sigmoid_f32(x), 2.4e-7, 1e-38, \
	  eltwise_logistic, DP_NONE, 1, none) \
	X(HardSigmoid, OP_HardSigmoid, "alpha", 0.2f,      "beta",  0.5f, \
	  act_clamp01(a * x + b), \
	  act_clamp01f(a * x + b), 1.2e-7, 1.5e-8, \
	  eltwise_linear, DP_CLIP01, 1, none) \
	X(HardSwish,   OP_HardSwish,   0,       0.0f,      0,       0.0f, \
	  x * act_clamp01(x / 6 + 0.5), \
	  x * act_clamp01f(x * (1.0f / 6) + 0.5f), 1.2e-7, 1e-7, \
	  eltwise_hardswish, DP_NONE, 14, hardswish) \
	X(Tanh,        OP_Tanh,        0,       0.0f,      0,       0.0f, \
	  tanh(x), \
	  act_tanh_f32(x), 2.5e-7, 0, \
	  eltwise_tanh, DP_NONE, 1, none) \
	X(Gelu,        0,              0,       0.0f,      0,       0.0f, \
	  x * (1 + erf(x * M_SQRT1_2)) * 0.5, \
	  x * (1 + act_erf_f32(x * (float)M_SQRT1_2)) * 0.5f, 1.2e-7, 1.2e-6, \
	  eltwise_gelu_erf, DP_NONE, 0, gelu) \
	X(Linear,      0,              0,       0.0f,      0,       0.0f, \
	  a * x + b, \
	  a * x + b, 1.2e-7, 1.5e-8, \
	  eltwise_linear, DP_BOTH, 0, linear) \
	X(Silu,        0,              0,       0.0f,      0,       0.0f, \
	  x * act_sigmoid_f64(x), \
	  (x < -88 ? -0.0f : x * act_sigmoid_f32(x)), 3e-7, 1e-35, \
	  eltwise_swish, DP_ONE, 0, silu) \
	X(GeluTanh,    0,              0,       0.0f,      0,       0.0f, \
	  0.5 * x * (1 + tanh(ACT_SQRT_2_PI * (x + 0.044715 * x * x * x))), \
	  0.5f * x * (1 + act_tanh_f32((float)ACT_SQRT_2_PI * \
				(x + 0.044715f * x * x * x))), 2.4e-7, 2e-7, \
	  eltwise_gelu_tanh, DP_NONE, 0, gelu_tanh) \
	X(Mish,        OP_Mish,        0,       0.0f,      0,       0.0f, \
	  x * tanh(act_softplus_f64(x)), \
	  x * act_tanh_f32(act_softplus_f32(x)), 4e-7, 1e-43, \
	  eltwise_mish, DP_NONE, 18, mish) \
	X(Softplus,    OP_Softplus,    0,       0.0f,      0,       0.0f, \
	  act_softplus_f64(x), \
	  act_softplus_f32(x), 1.2e-7, 1e-45, \
	  eltwise_soft_relu, DP_NONE, 1, none) \
	X(Elu,         OP_Elu,         "alpha", 1.0f,      0,       0.0f, \
	  (x < 0 ? a * expm1(x) : x), \
	  (x < 0 ? a * expm1f(x) : x), 1.2e-7, 0, \
	  eltwise_elu, DP_ALPHA, 1, none) \
	X(Selu,        OP_Selu,        "alpha", 1.67326319217681884765625f, \
	  "gamma", 1.05070102214813232421875f, \
	  b * (x > 0 ? x : a * expm1(x)), \
	  b * (x > 0 ? x : a * expm1f(x)), 2.4e-7, 1e-44, \
	  eltwise_elu, DP_SCALE, 1, none)

typedef enum {
#define X(nm, ...) ACT_##nm,
	GEARC_ACTS(X)
#undef X
	ACT_COUNT
} ActKind;

typedef struct ActInfo {
	const char *name;
	int op;
	const char *aname, *bname; /* attribute names, or NULL */
	float adef, bdef;	   /* their defaults */
	double rel, abs;	   /* the fp32 form's accuracy */
	int since;		   /* the op in export from this opset, or 0 */
} ActInfo;

extern const ActInfo act_info[ACT_COUNT];

/* The activation named s (s.len bytes), or -1. */
int act_lookup(const char *s, size_t len);

/* "Relu, LeakyRelu, ..." (every name) into buf. */
const char *act_names(char *buf, size_t size);

/* Activation kind of x in double and in fp32 (alpha a, beta b): the
 * table's f64 and f32 columns. */
#define ACT_F64_CASE(nm, op, an, ad, bn, bd, f64, f32, ...) \
	case ACT_##nm:                                      \
		return f64;
#define ACT_F32_CASE(nm, op, an, ad, bn, bd, f64, f32, ...) \
	case ACT_##nm:                                      \
		return f32;
#define ACT_FORM(fn, T, CASE)                                       \
	static inline T fn(int kind, T x, T a, T b)                 \
	{                                                           \
		(void)a, (void)b;                                   \
		switch (kind) { GEARC_ACTS(CASE) }                  \
		return x;                                           \
	}
ACT_FORM(act_f64, double, ACT_F64_CASE)
ACT_FORM(act_f32, float, ACT_F32_CASE)

/* Activation kind of in[0..n) into y (in == y allowed): one loop per
 * kind over the fp32 form, which vectorises in the function (and for
 * the ISA) it is inlined into. */
static inline __attribute__((always_inline)) void
act_loop_f32(int kind, const float *in, float *y, size_t n, float a, float b)
{
	(void)a, (void)b;
	switch (kind) {
#define ACT_LOOP_CASE(nm, op, an, ad, bn, bd, f64, f32, ...) \
	case ACT_##nm:                                      \
		for (size_t i = 0; i < n; i++) {            \
			float x = in[i];                    \
			y[i] = f32;                         \
		}                                           \
		break;
		GEARC_ACTS(ACT_LOOP_CASE)
#undef ACT_LOOP_CASE
	}
}

#endif
