/*
 * tests/fuzz/fuzz_diff.c - libFuzzer: libgearrt's fast paths against
 * its reference kernels, a differential target.
 *
 * Each input decodes to a model of one op that has a fast row in the
 * kernel registry (runtime/fast.c), or of a few nodes where a fast path
 * depends on the neighbour or on a fusion (a 1x1 Conv making the tensor
 * before a 3x3 Conv channels-last; a Conv reading that tensor into a 1x1
 * output; a Conv, Gemm or MatMul with the activation, residual or bias
 * the fuse pass takes in; a QDQ group and onnxruntime's dynamic int8
 * chain passes/qfuse.c rewrites; written-out activations), built in
 * memory (tests/irbuild.h), compiled as a static model as gearc compiles
 * it (run_passes, om_write, gearrt_model_open) and run four ways: the
 * reference kernels at 1 thread (gearrt_options.no_fast, the oracle),
 * the fast paths at 1 and at 2 threads, the reference at 2 threads.  A
 * model a fusion may rewrite is also compiled without the fuse and qdq
 * passes (--no-fuse) and run by the reference at 1 thread: the fusions'
 * contract.
 *
 * Decoding.  Every byte string is a model: the model (op, attributes,
 * shapes, dtypes, which inputs are weights, how each tensor's values
 * are drawn) is read from the input's front, byte by byte; the values
 * of the inputs and weights from its back, backwards; a stream that
 * runs out goes on with xorshift64* seeded by a hash of the whole input
 * (so a short input is a whole model too, and the same bytes are always
 * the same model).  The first byte picks the generator (gens[], below),
 * which picks the rest.  Shapes are small (a run well under 10 ms; now
 * and then one large enough, 2^18 flops, for the plain-C kernels to use
 * 2 threads), with 0 dims (empty tensors: one model in 8 draws them
 * often), 1x1 planes and odd sizes.  One model in 4 passes its inputs
 * and outputs in the caller's buffers, one element past a 64-byte
 * boundary.
 * A float tensor's values are drawn one of five ways: a grid of
 * sixteenths in [-8, 8), random mantissas in [-8, 8), either with one
 * value in 64 or one in 4 special (NaN, -NaN, +-Inf, -0, +-1e37,
 * +-FLT_MAX, denormals, FLT_MIN, rounding ties, float16's limits), or
 * raw bits; weights are finite.  Integers take every byte, or small
 * values (divisors, shifts); bools every byte (defect 10 below).
 *
 * Verdicts, each a finding that prints the model, the path, the
 * kernels the fast session ran, the first differing element and both
 * values to stderr and aborts:
 *   - a compile that fails, or a run failing the four ways with a
 *     one-line message, is fine (the model was invalid); a run failing
 *     on some paths only, an empty or multi-line message, a compiled
 *     file gearrt_model_open refuses, is a finding, as is any crash,
 *     sanitizer report or hang (libFuzzer's -timeout);
 *   - outputs' dtypes and dims must agree; fast at 2 threads must be
 *     fast at 1 thread byte for byte, the reference at 2 threads the
 *     reference at 1;
 *   - fast against reference by the tolerance of the output's class
 *     (Tol below): NaN where the other has a number, or an infinity
 *     of another sign, is a finding; -0 equals +0 but where the class
 *     says bits;
 *   - the reference on the --no-fuse compile against the reference on
 *     gearc's, by the same classes; a QDQ group's output may be one
 *     step off (the integer sum requantized once, passes/qfuse.c), as
 *     may fast and reference where the group stays a float Conv or
 *     MatMul before a QuantizeLinear (its rounding lands the other side
 *     of a step); a zero output scale is not compared (it divides by
 *     zero).
 *
 *   class      ops                                   fast == reference
 *   BYTES      integer, bool and quantized outputs,  every byte
 *              moves (Transpose, Gather, Concat,
 *              Slice, Pad, Split, Tile, Expand,
 *              Where, nearest Resize), Cast
 *              (floats: as BITS)
 *   BITS       Relu, Neg, Abs of float               every bit (NaN: any
 *                                                    payload; a Cast
 *                                                    from float16 may
 *                                                    keep it or not)
 *   EXACT      Add, Sub, Mul, Div, Pow(x, 2), Sqrt,  the same value
 *              ReduceSum, ReduceMean (summed in
 *              double), MaxPool, float16 ops (intew),
 *              DequantizeLinear, Cast to a float,
 *              DynQuantMatMul, DynQuantConv
 *   REL r, a   |f - r| <= r |ref| + a:
 *                Exp, Log                            2 ulp (glibc's expf,
 *                                                    logf vs double)
 *                Sigmoid, Tanh, HardSwish,           act.h's table: twice
 *                HardSigmoid, FusedActivation        its rel and abs (+ 4
 *                (written-out HardSwish, SiLU, GELU)  eps, written out)
 *                Erf                                 5e-7 relative (its
 *                                                    contract) + 1 ulp,
 *                                                    1e-40 absolute (a
 *                                                    denormal result)
 *                Softmax                             4e-7 + 2 L eps + 2
 *                                                    |x - max| eps
 *                                                    relative (L the row;
 *                                                    exp's argument
 *                                                    rounded in float)
 *                AveragePool, GlobalAveragePool      2 (w + 1) eps max|X|
 *                                                    (w the window)
 *                linear, cubic Resize                16 eps max|X|
 *                                                    (cubic: 32)
 *                LSTM, GRU, RNN                      1e-5 T (I + H + 2)
 *                                                    (1 + |ref|); with a
 *                                                    finite input beyond
 *                                                    1e30 not compared (a
 *                                                    gate's sum then
 *                                                    rounds by more than
 *                                                    1, overflows in one
 *                                                    order only); R's
 *                                                    entries below 1/H
 *                                                    (a contracting
 *                                                    recurrence)
 *   SUM        Conv, FusedConv, ConvTranspose,       4 K eps S_i L +
 *              MatMul, FusedMatMul, Gemm,            act rel |ref| + act
 *              FusedGemm and the two-node chains     abs, S_i the sum of
 *                                                    |x||w| (+ |bias|,
 *                                                    |Z|) making output
 *                                                    i over its finite
 *                                                    inputs, K the
 *                                                    reduction lengths
 *                                                    summed along the
 *                                                    chain, L the
 *                                                    activations'
 *                                                    Lipschitz bound;
 *                                                    where chan.wino ran,
 *                                                    also 1e-5 max(|ref|,
 *                                                    S L) (its contract:
 *                                                    of the largest
 *                                                    output, before the
 *                                                    activations); + 2
 *                                                    FLT_TRUE_MIN (a
 *                                                    denormal result)
 *   NORM       LayerNormalization                    8 L eps |w_j| inv A
 *                                                    (1 + 2 |x_j - m| A
 *                                                    inv^2) + 4 eps
 *                                                    (|ref| + |b_j|): A
 *                                                    the row's max |x|,
 *                                                    m its mean, inv
 *                                                    1/sqrt(var + eps)
 *                                                    (float partial sums
 *                                                    on the fast path)
 *
 * Exclusions (where the reference's own answer is not fixed by the
 * inputs' finite values):
 *   - SUM: an output whose S_i (in double, finite inputs) exceeds
 *     FLT_MAX / 4 L may overflow in float on one path and not the other
 *     (their sums run in other orders): not compared, nor one whose sum
 *     exceeds it before Gemm's alpha below 1 scales it (the reference
 *     scales the sum, oneDNN the weights).  A non-finite input
 *     makes every output that reads it NaN or infinite in any order of
 *     the sum, so those are compared;
 *   - REL with an input beyond 1e30 (AveragePool, Resize, RNN, the
 *     written-out activations): an element non-finite on one side only
 *     is not compared (a sum in float overflowing; x * 6 of FLT_MAX in
 *     the written-out HardSwish, which its fp32 form does not compute);
 *   - linear and cubic Resize: an output whose taps (the input indices
 *     within 3 of its source coordinate, per axis) hold a non-finite
 *     value: 0 x Inf is NaN where a kernel multiplies a zero-weight
 *     tap, and not where it skips it;
 *   - LayerNormalization's epsilon is never 0 (a constant row is then
 *     0 x Inf: NaN, or +-Inf after the fast path's float mean).
 *
 * Defects, each fixed but 22 (FUZZ_DIFF_SKIP=1,2,... stops the target
 * generating or checking each, to look past one in an older build; by
 * default every one but 22 is generated and checked, FUZZ_DIFF_SKIP=0
 * checks 22 too):
 *    1 Conv with a 1x1 output and a larger input reading X in the wrong
 *      layout (dnnl.c): no such Conv (the first axis longer than 1 read
 *      by a 1-tap window instead);
 *    2 MatMul, Gemm (transA), FusedMatMul with K = 0 (SIGFPE in
 *      oneDNN): no K = 0;
 *    3 MatMulInteger with N = 0 (quant_matmul's B column sums, which
 *      QLinearMatMul of a constant B shares: SIGFPE): no N = 0;
 *    4 linear Resize of an empty spatial axis, sizes given: no empty
 *      spatial axis in a linear Resize;
 *    5 rank 3 and 5 Resize writing a large graph output: no linear
 *      rank 3 or 5 Resize of more than 256 outputs;
 *    6 QuantizeLinear of an empty X with scale 0, integer Div of an
 *      empty tensor, QLinearMatMul of a runtime B with N = 0: none of
 *      those;
 *    7 Relu's fast paths turning NaN into 0: such elements of a model
 *      with a Relu (or a fused one) not compared;
 *    8 Winograd spreading Inf and NaN to the tiles around, overflowing
 *      on 1e37: where chan.wino ran on inputs with a non-finite or huge
 *      value, the values are not compared;
 *    9 MaxPool of a window of -Inf giving -FLT_MAX on oneDNN: such
 *      elements not compared;
 *   10 bool inputs holding bytes other than 0 and 1: bools 0 and 1;
 *   12 the qdq fusion dropping a Relu before a negative output scale:
 *      positive scales after a Relu.
 * Found by this target (the same switch):
 *   13 LayerNormalization's fast path summing squares in float (a row
 *      beyond 1.8e19 overflows): rows beyond 1e18 not compared;
 *   14 FusedConv with a residual and activations (oneDNN post-ops sum +
 *      eltwise) crashing in brgconv where a pad covers the window: pads
 *      below the kernel's size;
 *   15 oneDNN post-ops turning NaN into a number (clip_v2: Clip,
 *      HardSigmoid; logistic on gemm:jit): such elements of a model
 *      with a Clip, HardSigmoid or Sigmoid after an anchor not
 *      compared;
 *   16 nearest Resize by whole factors of an empty leading axis, scales
 *      given (SIGFPE in direct_resize): no empty leading axis;
 *   17 Relu's fast path giving +0 for -0: such elements not compared;
 *   18 nearest Resize by whole factors to an empty axis writing past
 *      the output: no empty output axis;
 *   19 oneDNN's relu post-op giving NaN for -Inf (0 x -Inf): such
 *      elements not compared;
 *   20 Gemm with beta 0 on oneDNN ignoring a NaN or infinite C: a
 *      finite C where beta is 0;
 *   21 MaxPool of a window of padding alone: -FLT_MAX on oneDNN, 0 on
 *      the reference: such elements not compared;
 *   22 oneDNN's convolutions giving other bits at 2 threads (brgconv,
 *      asymmetric pads), and its sgemm (gemm:jit, on CPUs without
 *      AVX-512: the MatMuls and Gemms gearc's gemm leaves, and the
 *      (de)convolutions it runs as products) choosing its kernels by
 *      the thread count: where dnnl.conv or a
 *      gemm:jit ran, fast at 2 threads is held to
 *      the reference's tolerance, not to fast at 1 thread's bytes.
 *
 * Environment:
 *   FUZZ_DIFF_SKIP=1,2,...  the defects above to stay clear of
 *                           (unset: 22 alone; 0: none);
 *   FUZZ_DIFF_DUMP=DIR      write each model decoded as DIR/model.onnx
 *                           (before compiling: gearc compiles it), its
 *                           inputs as DIR/NAME.npy, and DIR/run.sh, the
 *                           gearc command lines comparing the fast
 *                           paths with GEARRT_NO_FAST=1 (replaying one
 *                           input, e.g. a build/fuzz/crash_diff-*:
 *                           build/fuzz/fuzz_diff FILE): a finding
 *                           becomes a regression test;
 *   FUZZ_DIFF_VERBOSE=1     print each model and the kernels that ran.
 *
 * The seed corpus tests/fuzz/corpus_diff/ is made by the harness
 * itself: FUZZ_DIFF_SEEDS=DIR build/fuzz/fuzz_diff writes there, for
 * each generator, a few inputs whose first byte picks it (the rest
 * filled by a fixed pattern), and exits.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/npy.h"
#include "compiler/act.h"
#include "compiler/ops/opimpl.h"
#include "passes/passes.h"
#include "runtime/gearrt.h"
#include "runtime/rt.h"
#include "serializer/export.h"
#include "serializer/om.h"
#include "tests/irbuild.h"

#define countof(a) (sizeof(a) / sizeof((a)[0]))

enum { MAX_IN = 8, MAX_OUT = 8 };

static const double EPS = 1.0 / (1 << 24); /* float's unit roundoff */

/* ---- the known defects (FUZZ_DIFF_SKIP) ---------------------------------- */

/* 22, oneDNN's own work split, stays known (gearc(1), numeric contract):
 * skipped unless FUZZ_DIFF_SKIP names the list (FUZZ_DIFF_SKIP=0 checks
 * every one). */
static uint32_t skip_mask = 1u << 22;

static bool skip(int defect) { return skip_mask >> defect & 1; }

static void read_skip(void)
{
	const char *s = getenv("FUZZ_DIFF_SKIP");
	if (s)
		skip_mask = 0;
	for (char *end; s && *s; s = *end ? end + 1 : end) {
		long k = strtol(s, &end, 10);
		if (end == s || k < 0 || k > 31) {
			fprintf(stderr, "fuzz_diff: FUZZ_DIFF_SKIP: not a list "
					"of defect numbers: '%s'\n", s);
			exit(2);
		}
		skip_mask |= 1u << k;
	}
}

/* ---- the byte streams ---------------------------------------------------- */

/* The input's bytes forwards (the model) or backwards (the values);
 * past the end, xorshift64*. */
typedef struct Rd {
	const uint8_t *p;
	size_t n, at;
	bool back;
	uint64_t x;
} Rd;

static unsigned byte(Rd *r)
{
	if (r->at < r->n) {
		size_t i = r->at++;
		return r->p[r->back ? r->n - 1 - i : i];
	}
	r->x ^= r->x >> 12;
	r->x ^= r->x << 25;
	r->x ^= r->x >> 27;
	return (unsigned)((r->x * 0x2545F4914F6CDD1Dull) >> 56);
}

/* 0 .. n - 1 (n <= 65536). */
static int64_t pick(Rd *r, int64_t n)
{
	unsigned v = byte(r);
	if (n > 256)
		v = v << 8 | byte(r);
	return n > 0 ? (int64_t)(v % (unsigned)n) : 0;
}

static int64_t range(Rd *r, int64_t lo, int64_t hi)
{
	return lo + pick(r, hi - lo + 1);
}

/* true with probability num / 256 */
static bool chance(Rd *r, unsigned num) { return byte(r) < num; }

#define PICK(r, a) ((a)[pick((r), (int64_t)countof(a))])

/* ---- the model being built ----------------------------------------------- */

/* How a tensor's values are drawn (the data stream). */
typedef enum {
	V_GRID,	    /* float: sixteenths in [-8, 8) */
	V_FINE,	    /* float: random mantissas in [-8, 8) */
	V_RARE,	    /* float: V_FINE, 1 in 64 special */
	V_OFTEN,    /* float: V_FINE, 1 in 4 special */
	V_RAW,	    /* float: any bits */
	V_FULL,	    /* integers: every byte */
	V_SMALL,    /* integers: -4 .. 4 */
	V_POS,	    /* integers: 1 .. 4; floats: k / 64, k 1 .. 16 (scales) */
} VMode;

static const char *const vmode_name[] = { "grid", "fine", "rare specials",
					  "often specials", "raw bits",
					  "full range", "small", "positive" };

/* How an output is compared with the reference's (the header's table). */
typedef enum {
	T_BYTES,
	T_BITS,
	T_EXACT,
	T_REL,
	T_SUM,
	T_NORM,
} Tol;

static const char *const tol_name[] = { "BYTES", "BITS", "EXACT", "REL",
					"SUM", "NORM" };

typedef struct OutSpec {
	ValId v;	  /* in the graph as built (compiling renumbers) */
	const char *name; /* its name */
	Tol tol;
	double rel, abs; /* T_REL */
	bool absx;	 /* T_REL: abs is a multiple of max |X| (input 0) */
	bool resize;	 /* T_REL: linear or cubic Resize of input 0 */
	bool ovf;	 /* T_REL: inputs beyond 1e30 (exclusions) */
	int64_t rowlen;	 /* T_REL: a Softmax of input 0 over rows of rowlen */
} OutSpec;

typedef struct In {
	const char *name;
	int dtype;
	Shape shape;
	void *data;
	size_t bytes;
	bool nonfinite, huge; /* a float value NaN or infinite; a finite one
			       * beyond 1e30 */
} In;

typedef struct Gen {
	Rd h, d;   /* the model, the values */
	Model *m;
	Graph *g;
	char desc[4096];
	size_t dlen;
	int names;
	In in[MAX_IN];
	int nin;
	OutSpec out[MAX_OUT];
	int nout;
	bool keep_fp16;
	bool empties; /* 0 dims drawn often */
	/* the inputs and outputs in the caller's buffers, one element past
	 * a 64-byte boundary (else inputs in the model's arena, outputs in
	 * the session's memory) */
	bool offset_bufs;
	bool relu;    /* a Relu, or an activation list with one (defect 7) */
	bool clip;    /* a Clip, HardSigmoid or Sigmoid after an anchor
		       * (defect 15) */
	/* a fusion may rewrite the model (an activation, residual or bias
	 * after an anchor; a QDQ group): also checked against the reference
	 * on the model compiled without the fuse and qdq passes */
	bool fused;
	bool qdq;     /* a QDQ group: its output may be one step off */
	double qdq_slack; /* ... and the bias's rounding, in output steps */
	bool maxpool; /* defect 9 */
	bool huge_in; /* a float input beyond 1e30 or not finite */
	bool big_in;  /* a finite float input beyond 1e30 */
	/* T_NORM: LayerNormalization's X (input 0), Scale and B (NULL:
	 * none), axis and epsilon */
	const float *norm_w, *norm_b;
	int64_t norm_axis;
	float norm_eps;
} Gen;

static void say(Gen *g, const char *fmt, ...) PRINTF_LIKE(2, 3);

static void say(Gen *g, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (g->dlen < sizeof(g->desc)) {
		int k = vsnprintf(g->desc + g->dlen, sizeof(g->desc) - g->dlen,
				  fmt, ap);
		g->dlen += k > 0 ? (size_t)k : 0;
	}
	va_end(ap);
}

static const char *shape_s(const Shape *s)
{
	static char buf[8][128];
	static int k;
	return shape_str(s, buf[k++ & 7], sizeof(buf[0]));
}

static const char *fresh(Gen *g, const char *what)
{
	return arena_printf(&g->m->arena, "%s%d", what, g->names++);
}

/* ---- values ------------------------------------------------------------------ */

static const float specials[] = {
	NAN, -NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e37f, -1e37f, FLT_MAX,
	-FLT_MAX, 1e-40f, -1e-40f, FLT_MIN, FLT_TRUE_MIN, 0.5f, -0.5f, 2.5f,
	-2.5f, 127.5f, -128.5f, 255.5f, 65504.0f, 65520.0f, 3.0f, -3.0f,
	1.0f, -1.0f, 1e-30f,
};

static float fine(Rd *r)
{
	uint32_t v = byte(r) << 16 | byte(r) << 8 | byte(r);
	return (float)((int32_t)v - (1 << 23)) / (float)(1 << 20);
}

static float value_f32(Rd *r, VMode mode)
{
	switch (mode) {
	case V_GRID:
		return (float)(int8_t)byte(r) / 16.0f;
	case V_POS:
		return (float)(1 + byte(r) % 16) / 64.0f;
	case V_RARE:
	case V_OFTEN:
		if (byte(r) < (mode == V_RARE ? 4u : 64u))
			return PICK(r, specials);
		return fine(r);
	case V_RAW: {
		uint32_t b = byte(r) | byte(r) << 8 | byte(r) << 16 |
			     (uint32_t)byte(r) << 24;
		float f;
		memcpy(&f, &b, sizeof(f));
		return f;
	}
	default:
		return fine(r);
	}
}

static int64_t value_int(Rd *r, VMode mode, size_t size)
{
	if (mode == V_SMALL)
		return range(r, -4, 4);
	if (mode == V_POS)
		return range(r, 1, 4);
	uint64_t v = 0;
	for (size_t k = 0; k < size; k++)
		v |= (uint64_t)byte(r) << (8 * k);
	return (int64_t)v;
}

/* n values of dtype dt drawn by mode into p; whether one is non-finite
 * or finite beyond 1e30 into *nf, *huge. */
static void fill(Rd *r, int dt, VMode mode, void *p, int64_t n, bool *nf,
		 bool *huge)
{
	for (int64_t i = 0; i < n; i++) {
		float f;
		switch (dt) {
		case DT_FLOAT:
		case DT_DOUBLE:
		case DT_FLOAT16:
			f = value_f32(r, mode);
			if (dt == DT_FLOAT16 && mode == V_RAW) {
				uint16_t h = (uint16_t)(byte(r) | byte(r) << 8);
				((uint16_t *)p)[i] = h;
				f = (float)minifloat_to(h, 5, 10);
			} else if (dt == DT_FLOAT16) {
				((uint16_t *)p)[i] = minifloat_from(f, 5, 10);
				f = (float)minifloat_to(((uint16_t *)p)[i], 5,
							10);
			} else if (dt == DT_DOUBLE) {
				((double *)p)[i] = f;
			} else {
				((float *)p)[i] = f;
			}
			*nf |= !isfinite(f);
			*huge |= isfinite(f) && fabsf(f) > 1e30f;
			break;
		case DT_BOOL: {
			unsigned b = byte(r);
			((uint8_t *)p)[i] = (uint8_t)(skip(10) ? b & 1 : b);
			break;
		}
		default: {
			size_t es = dtype_size(dt);
			int64_t v = value_int(r, mode, es);
			memcpy((uint8_t *)p + (size_t)i * es, &v, es);
		}
		}
	}
}

static bool is_float(int dt)
{
	return dt == DT_FLOAT || dt == DT_FLOAT16 || dt == DT_DOUBLE;
}

/* A float tensor's mode, from the model stream. */
static VMode float_mode(Gen *g)
{
	static const VMode m[] = { V_GRID, V_FINE, V_FINE, V_RARE, V_RARE,
				   V_OFTEN, V_RAW };
	return PICK(&g->h, m);
}

static VMode int_mode(Gen *g)
{
	return chance(&g->h, 160) ? V_FULL : V_SMALL;
}

/* ---- building ------------------------------------------------------------------- */

/* A graph input of dt and s, its values drawn by mode. */
static ValId input(Gen *g, int dt, Shape s, VMode mode)
{
	const char *name = fresh(g, "x");
	ValId v = tu_input(g->g, name, dt, s);
	In *in = &g->in[g->nin++];
	int64_t n = shape_numel(&s);
	in->name = name;
	in->dtype = dt;
	in->shape = s;
	in->bytes = (size_t)n * dtype_size(dt);
	in->data = arena_alloc(&g->m->arena, in->bytes + 1);
	fill(&g->d, dt, mode, in->data, n, &in->nonfinite, &in->huge);
	g->huge_in |= in->huge || in->nonfinite;
	g->big_in |= in->huge;
	say(g, " %s %s%s (%s)", name, dtype_name(dt), shape_s(&s),
	    is_float(dt) || dt != DT_BOOL ? vmode_name[mode] : "bool");
	return v;
}

/* A float weight of s, V_FINE values times scale (dt: any other, scale
 * 1: drawn by mode). */
static ValId weight_scaled(Gen *g, int dt, Shape s, VMode mode, float scale)
{
	const char *name = fresh(g, "w");
	int64_t n = shape_numel(&s);
	void *p = arena_alloc(&g->m->arena, (size_t)n * dtype_size(dt) + 1);
	bool nf = false, huge = false;
	fill(&g->d, dt, mode, p, n, &nf, &huge);
	for (int64_t i = 0; scale != 1 && i < n; i++)
		((float *)p)[i] *= scale;
	say(g, " %s %s%s", name, dtype_name(dt), shape_s(&s));
	if (scale != 1)
		say(g, " (x%g)", (double)scale);
	return tu_weight_data(g->g, name, dt, s, p);
}

/* A weight of dt and s, its values drawn by mode. */
static ValId weight(Gen *g, int dt, Shape s, VMode mode)
{
	return weight_scaled(g, dt, s, mode, 1);
}

static ValId weight_i64(Gen *g, const int64_t *v, int32_t n)
{
	const char *name = fresh(g, "c");
	say(g, " %s=[", name);
	for (int32_t i = 0; i < n; i++)
		say(g, "%s%lld", i ? "," : "", (long long)v[i]);
	say(g, "]");
	return tu_weight_ints(g->g, name, v, n);
}

static ValId weight_f32s(Gen *g, const float *v, int32_t n)
{
	const char *name = fresh(g, "c");
	int64_t d = n;
	say(g, " %s=[", name);
	for (int32_t i = 0; i < n; i++)
		say(g, "%s%g", i ? "," : "", (double)v[i]);
	say(g, "]");
	return tu_weight_data(g->g, name, DT_FLOAT, shape_of(1, &d), v);
}

/* A scalar (rank 0) weight of dt holding v (an integer, or a float). */
static ValId scalar(Gen *g, int dt, double v)
{
	const char *name = fresh(g, "c");
	uint8_t buf[8];
	switch (dt) {
	case DT_FLOAT: { float f = (float)v; memcpy(buf, &f, 4); break; }
	case DT_DOUBLE: memcpy(buf, &v, 8); break;
	case DT_FLOAT16: {
		uint16_t h = minifloat_from(v, 5, 10);
		memcpy(buf, &h, 2);
		break;
	}
	default: {
		int64_t i = (int64_t)v;
		memcpy(buf, &i, 8); /* little-endian: the low bytes */
	}
	}
	say(g, " %s=%s(%g)", name, dtype_name(dt), v);
	return tu_weight_data(g->g, name, dt, shape_of(0, NULL), buf);
}

/* A node's inputs (-1: omitted), as a value a conditional can pick. */
typedef struct Ids {
	ValId v[9];
	int32_t n;
} Ids;

#define L(...)                                                       \
	((Ids){ { __VA_ARGS__ },                                     \
		(int32_t)(sizeof((ValId[]){ __VA_ARGS__ }) / sizeof(ValId)) })

static Node *node_n(Gen *g, const char *op, const ValId *ins, int32_t nin,
		    int32_t nout)
{
	say(g, "\n  %s(", op);
	for (int32_t i = 0; i < nin; i++)
		say(g, "%s%s", i ? ", " : "",
		    ins[i] < 0 ? "" : g->g->vals[ins[i]].name);
	say(g, ")");
	return tu_node(g->g, op, fresh(g, "n"), ins, nin, nout);
}

static Node *node(Gen *g, const char *op, Ids in, int32_t nout)
{
	return node_n(g, op, in.v, in.n, nout);
}

static void attr_i(Gen *g, Node *n, const char *name, int64_t v)
{
	tu_int(g->g, n, name, v);
	say(g, " %s=%lld", name, (long long)v);
}

static void attr_f(Gen *g, Node *n, const char *name, float v)
{
	tu_float(g->g, n, name, v);
	say(g, " %s=%g", name, (double)v);
}

static void attr_is(Gen *g, Node *n, const char *name, const int64_t *v,
		    int32_t k)
{
	tu_ints(g->g, n, name, v, k);
	say(g, " %s=[", name);
	for (int32_t i = 0; i < k; i++)
		say(g, "%s%lld", i ? "," : "", (long long)v[i]);
	say(g, "]");
}

static void attr_s(Gen *g, Node *n, const char *name, const char *v)
{
	tu_str(g->g, n, name, v);
	say(g, " %s=%s", name, v);
}

static void output(Gen *g, ValId v, Tol tol)
{
	if (g->nout == MAX_OUT)
		return;
	g->out[g->nout++] = (OutSpec){ .v = v, .name = g->g->vals[v].name,
				       .tol = tol };
	g->g->outputs = arena_grow(g->g->arena, g->g->outputs,
				   (size_t)g->g->noutputs,
				   (size_t)g->g->noutputs + 1, sizeof(ValId));
	g->g->outputs[g->g->noutputs++] = v;
	g->g->vals[v].flags |= VF_GRAPH_OUT;
}

/* The last output's tolerance: T_REL of rel and abs. */
static void rel_tol(Gen *g, double rel, double abs)
{
	OutSpec *o = &g->out[g->nout - 1];
	o->tol = T_REL;
	o->rel = rel;
	o->abs = abs;
	o->ovf = g->huge_in;
}

static int64_t dim(Gen *g, int64_t lo, int64_t hi)
{
	return range(&g->h, lo, hi);
}

/* A dim of a data tensor: 0 now and then (often in a model of empty
 * tensors), else lo .. hi. */
static int64_t ddim(Gen *g, int64_t lo, int64_t hi)
{
	return chance(&g->h, g->empties ? 80 : 8) ? 0 : range(&g->h, lo, hi);
}

static Shape shape_n(int32_t rank, const int64_t *d)
{
	return shape_of(rank, d);
}

/* A random shape of rank r, dims from ddim, at most 2^14 elements
 * (its largest dims halved). */
static Shape rand_shape(Gen *g, int32_t r, int64_t hi)
{
	int64_t d[MAX_RANK];
	for (int32_t i = 0; i < r; i++)
		d[i] = ddim(g, 1, hi);
	Shape s = shape_n(r, d);
	while (shape_numel(&s) > (1 << 14)) {
		int32_t big = 0;
		for (int32_t i = 1; i < r; i++)
			big = s.dims[i] > s.dims[big] ? i : big;
		s.dims[big] /= 2;
	}
	return s;
}

/* s broadcast-compatible with t: dims of t, some 1, some leading dims
 * dropped. */
static Shape bcast_of(Gen *g, const Shape *t)
{
	Shape s = *t;
	int32_t drop = chance(&g->h, 64) ? (int32_t)pick(&g->h, t->rank + 1)
					 : 0;
	s.rank = t->rank - drop;
	memmove(s.dims, t->dims + drop, (size_t)s.rank * sizeof(int64_t));
	for (int32_t i = 0; i < s.rank; i++)
		if (chance(&g->h, 80))
			s.dims[i] = 1;
	return s;
}

/* ---- the activations a fused op takes in ---------------------------------- */

/* Appends to x one of the activations of compiler/act.h the fuse pass
 * folds into the node before (or none): its output. */
static ValId activation(Gen *g, ValId x)
{
	static const char *const ops[] = { "Relu", "LeakyRelu", "Clip",
					   "Sigmoid", "HardSigmoid",
					   "HardSwish", "Tanh" };
	if (chance(&g->h, 96))
		return x;
	const char *op = PICK(&g->h, ops);
	Node *n;
	if (!strcmp(op, "Clip")) {
		float lo = (float)range(&g->h, -8, 0) / 2;
		float hi = lo + (float)range(&g->h, 0, 12) / 2;
		ValId a = scalar(g, DT_FLOAT, lo), b = scalar(g, DT_FLOAT, hi);
		n = node(g, op, L(x, a, b), 1);
	} else {
		n = node(g, op, L(x), 1);
	}
	if (!strcmp(op, "LeakyRelu"))
		attr_f(g, n, "alpha", (float)range(&g->h, 0, 16) / 16);
	g->relu |= !strcmp(op, "Relu") || !strcmp(op, "LeakyRelu");
	g->clip |= !strcmp(op, "Clip") || !strcmp(op, "HardSigmoid") ||
		   !strcmp(op, "Sigmoid");
	g->fused = true;
	return tu_out(n, 0);
}

/* ---- the generators ------------------------------------------------------- */

/* Spatial geometry for a Conv family: per axis input, kernel, stride,
 * dilation and pads (the family picks the ranges), auto_pad. */
typedef struct Geo {
	int nsp;
	int64_t n, cin, cout, group;
	int64_t in[3], k[3], st[3], dl[3], pads[6];
	int autopad; /* 0: pads, else 1 + index into autopads[] */
} Geo;

static const char *const autopads[] = { "SAME_UPPER", "SAME_LOWER",
					"VALID" };

/* Output dim a of a (non-transposed) Conv of o; <= 0: none. */
static int64_t geo_out(const Geo *o, int a)
{
	int64_t ext = (o->k[a] - 1) * o->dl[a] + 1;
	if (o->autopad == 1 || o->autopad == 2)
		return (o->in[a] + o->st[a] - 1) / o->st[a];
	int64_t pad = o->autopad ? 0 : o->pads[a] + o->pads[o->nsp + a];
	int64_t span = o->in[a] + pad - ext;
	return span < 0 ? 0 : span / o->st[a] + 1;
}

/* Conv attributes of o on n. */
static void conv_attrs(Gen *g, Node *n, const Geo *o)
{
	bool st = chance(&g->h, 128), dl = chance(&g->h, 64);
	for (int a = 0; a < o->nsp; a++)
		st |= o->st[a] != 1, dl |= o->dl[a] != 1;
	if (st)
		attr_is(g, n, "strides", o->st, o->nsp);
	if (dl)
		attr_is(g, n, "dilations", o->dl, o->nsp);
	if (o->autopad)
		attr_s(g, n, "auto_pad", autopads[o->autopad - 1]);
	else
		attr_is(g, n, "pads", o->pads, 2 * o->nsp);
	if (o->group != 1 || chance(&g->h, 32))
		attr_i(g, n, "group", o->group);
}

/* Input dims of a Conv of g: batch, channels, spatial. */
static Shape geo_x(const Geo *o)
{
	int64_t d[5] = { o->n, o->cin };
	for (int a = 0; a < o->nsp; a++)
		d[2 + a] = o->in[a];
	return shape_n(o->nsp + 2, d);
}

static Shape geo_y(const Geo *o)
{
	int64_t d[5] = { o->n, o->cout };
	for (int a = 0; a < o->nsp; a++)
		d[2 + a] = geo_out(o, a);
	return shape_n(o->nsp + 2, d);
}

static Shape geo_w(const Geo *o, bool transpose)
{
	int64_t d[5] = { transpose ? o->cin : o->cout,
			 transpose ? o->cout / o->group : o->cin / o->group };
	for (int a = 0; a < o->nsp; a++)
		d[2 + a] = o->k[a];
	return shape_n(o->nsp + 2, d);
}

/* The shapes of a Conv: family f (the fast path it aims at). */
static void conv_geo(Gen *g, Geo *o, int f)
{
	memset(o, 0, sizeof(*o));
	o->nsp = 2;
	o->n = chance(&g->h, 200) ? 1 : ddim(g, 1, 2);
	o->group = 1;
	for (int a = 0; a < 3; a++)
		o->st[a] = o->dl[a] = o->k[a] = 1;
	bool big = chance(&g->h, 24); /* 2^18 flops: two threads */
	switch (f) {
	case 0: /* any: oneDNN, or the reference */
		o->nsp = (int)PICK(&g->h, ((int[]){ 1, 2, 2, 2, 3 }));
		o->group = PICK(&g->h, ((int64_t[]){ 1, 1, 1, 2, 3 }));
		o->cin = o->group * dim(g, 1, 4);
		o->cout = o->group * dim(g, 1, 4);
		if (chance(&g->h, 48)) /* depthwise */
			o->group = o->cin, o->cout = o->cin * dim(g, 1, 2);
		for (int a = 0; a < o->nsp; a++) {
			o->in[a] = ddim(g, 1, o->nsp == 3 ? 5 : 9);
			o->k[a] = dim(g, 1, 4);
			o->st[a] = dim(g, 1, 3);
			o->dl[a] = dim(g, 1, 2);
			o->pads[a] = dim(g, 0, 2);
			o->pads[o->nsp + a] = dim(g, 0, 2);
		}
		break;
	case 1: /* direct.conv: <= 8 out, >= 4 in, a window, a row of 32 */
		o->cin = dim(g, 4, 9);
		o->cout = dim(g, 1, 8);
		for (int a = 0; a < 2; a++) {
			o->k[a] = dim(g, a ? 2 : 1, 5);
			o->pads[a] = dim(g, 0, o->k[a] - 1);
			o->pads[2 + a] = dim(g, 0, o->k[a] - 1);
		}
		o->in[0] = dim(g, 1, big ? 24 : 6);
		o->in[1] = dim(g, 32, 70);
		break;
	case 2: /* chan.conv: <= 8 out from >= 32 per output */
		o->cout = dim(g, 1, 2);
		o->cin = 32 * o->cout + dim(g, 0, 8);
		for (int a = 0; a < 2; a++) {
			o->k[a] = dim(g, a ? 2 : 1, 3);
			o->in[a] = ddim(g, 1, big ? 24 : 7);
			o->st[a] = chance(&g->h, 200) ? 1 : 2;
			o->pads[a] = dim(g, 0, 1);
			o->pads[2 + a] = dim(g, 0, 1);
		}
		break;
	case 3: /* chan.pwconv: 1x1, stride 1, no pads */
		o->cin = PICK(&g->h, ((int64_t[]){ 1, 3, 8, 16, 17, 33, 64,
						   192, 193 }));
		o->cout = PICK(&g->h, ((int64_t[]){ 1, 5, 16, 24, 48, 65 }));
		o->in[0] = ddim(g, 1, big ? 20 : 6);
		o->in[1] = ddim(g, 1, big ? 20 : 9);
		break;
	case 4: /* chan.wino: 3x3 stride 1, >= 16 channels a group, U at
		 * most twice Y */
		o->group = chance(&g->h, 220) ? 1 : 2;
		o->cin = o->group * PICK(&g->h, ((int64_t[]){ 16, 16, 17, 32 }));
		o->cout = o->group * PICK(&g->h, ((int64_t[]){ 16, 16, 20, 32 }));
		/* U <= 2 Y: 36 cin / group <= 2 n out[0] out[1], here
		 * with an output at most a few pixels larger */
		for (int a = 0; a < 2; a++) {
			o->k[a] = 3;
			o->dl[a] = chance(&g->h, 200) ? 1 : 2;
			o->pads[a] = dim(g, 0, 2);
			o->pads[2 + a] = dim(g, 0, 2);
		}
		int64_t area = 18 * (o->cin / o->group) / (o->n ? o->n : 1);
		o->in[0] = dim(g, 8, big ? 40 : 20);
		o->in[1] = (area + o->in[0] - 1) / o->in[0] + dim(g, 0, 6);
		break;
	default: /* 5: 1-D depthwise (small.dwconv) */
		o->nsp = 1;
		o->cin = o->cout = o->group = dim(g, 2, 9);
		o->in[0] = ddim(g, 1, big ? 600 : 40);
		o->k[0] = dim(g, 1, 5);
		o->pads[0] = dim(g, 0, 2);
		o->pads[1] = dim(g, 0, 2);
		break;
	}
	if (chance(&g->h, 24))
		o->autopad = (int)range(&g->h, 1, 3);
	/* defect 14: no pad of a kernel's extent (a row of padding alone) */
	for (int a = 0; skip(14) && a < 2 * o->nsp; a++)
		if (o->pads[a] >= o->k[a % o->nsp])
			o->pads[a] = o->k[a % o->nsp] - 1;
	/* defect 1: no 1x1 output of a larger input (an axis longer than 1
	 * read by a 1-tap window, stride 1, no pads) */
	if (skip(1) && o->nsp == 2 && geo_out(o, 0) == 1 &&
	    geo_out(o, 1) == 1 && o->in[0] * o->in[1] > 1) {
		int a = o->in[0] > 1 ? 0 : 1;
		o->k[a] = o->st[a] = 1;
		o->pads[a] = o->pads[2 + a] = 0;
		o->autopad = 0;
	}
}

/* Conv, FusedConv (an activation and or a residual Add after it). */
static void gen_conv(Gen *g)
{
	Geo o;
	int f = (int)pick(&g->h, 6);
	conv_geo(g, &o, f);
	say(g, "Conv family %d:", f);
	ValId x = input(g, DT_FLOAT, geo_x(&o), float_mode(g));
	ValId w = weight(g, DT_FLOAT, geo_w(&o, false),
			 chance(&g->h, 128) ? V_GRID : V_FINE);
	int64_t cout = o.cout;
	ValId b = chance(&g->h, 160)
			  ? weight(g, DT_FLOAT, shape_n(1, &cout), V_FINE)
			  : -1;
	Node *n = node(g, "Conv", b >= 0 ? L(x, w, b) : L(x, w), 1);
	conv_attrs(g, n, &o);
	if (f != 0 && chance(&g->h, 200)) /* kernel_shape given */
		attr_is(g, n, "kernel_shape", o.k, o.nsp);
	ValId y = tu_out(n, 0);
	Shape ys = geo_y(&o);
	if (shape_numel(&ys) >= 0 && chance(&g->h, 40)) {
		/* a residual: FusedConv's Z */
		ValId z = input(g, DT_FLOAT, ys, float_mode(g));
		y = tu_out(node(g, "Add", chance(&g->h, 128) ? L(y, z)
							     : L(z, y), 1),
			   0);
		g->fused = true;
	}
	output(g, activation(g, y), T_SUM);
}

/* Two Convs: 1x1 then 3x3 (the tensor between channels-last), or a Conv
 * then one to a 1x1 output of its larger input. */
static void gen_chain(Gen *g)
{
	bool to1x1 = chance(&g->h, 100) && !skip(1);
	int64_t n = chance(&g->h, 200) ? 1 : 2, c = dim(g, 1, 40);
	int64_t c2 = to1x1 ? dim(g, 1, 24) : PICK(&g->h, ((int64_t[]){ 8, 16, 16, 24, 32 }));
	int64_t h = dim(g, 2, 20), wd = dim(g, 2, 20);
	say(g, "Conv chain%s:", to1x1 ? " to 1x1" : "");
	ValId x = input(g, DT_FLOAT, SHAPE(n, c, h, wd), float_mode(g));
	ValId w1 = weight(g, DT_FLOAT, SHAPE(c2, c, 1, 1), V_FINE);
	Node *a = node(g, "Conv", L(x, w1), 1);
	ValId y = activation(g, tu_out(a, 0));
	int64_t c3 = to1x1 ? dim(g, 1, 16) : PICK(&g->h, ((int64_t[]){ 4, 8, 16, 17, 32 }));
	int64_t kh = to1x1 ? h : 3, kw = to1x1 ? wd : 3;
	if (to1x1 && chance(&g->h, 100)) /* or a stride reaching one pixel */
		kh = kw = 1;
	ValId w2 = weight(g, DT_FLOAT, SHAPE(c3, c2, kh, kw), V_FINE);
	int64_t cb = c3;
	ValId b2 = chance(&g->h, 128)
			   ? weight(g, DT_FLOAT, shape_n(1, &cb), V_FINE)
			   : -1;
	Node *bn = node(g, "Conv", b2 >= 0 ? L(y, w2, b2) : L(y, w2), 1);
	if (to1x1 && kh == 1)
		attr_is(g, bn, "strides", INTS(h, wd));
	else if (!to1x1)
		attr_is(g, bn, "pads", INTS(1, 1, 1, 1));
	if (chance(&g->h, 64))
		output(g, y, T_SUM); /* the tensor between, also an output */
	output(g, activation(g, tu_out(bn, 0)), T_SUM);
}

/* ConvTranspose (direct.deconv below 32 channels, oneDNN above), and the
 * Relu or Sigmoid a plain-C one applies. */
static void gen_deconv(Gen *g)
{
	Geo o;
	memset(&o, 0, sizeof(o));
	o.nsp = (int)PICK(&g->h, ((int[]){ 1, 2, 2, 2, 3 }));
	o.n = chance(&g->h, 200) ? 1 : ddim(g, 1, 2);
	o.group = chance(&g->h, 200) ? 1 : 2;
	bool wide = chance(&g->h, 48);
	o.cin = o.group * (wide ? dim(g, 32, 34) : dim(g, 1, 6));
	o.cout = o.group * (wide ? dim(g, 32, 33) : dim(g, 1, 6));
	int64_t opad[3] = { 0 };
	bool has_opad = chance(&g->h, 48);
	for (int a = 0; a < o.nsp; a++) {
		o.in[a] = ddim(g, 1, o.nsp == 3 ? 4 : 8);
		o.k[a] = dim(g, 1, 4);
		o.st[a] = dim(g, 1, 3);
		o.dl[a] = chance(&g->h, 200) ? 1 : 2;
		o.pads[a] = dim(g, 0, o.k[a] - 1);
		o.pads[o.nsp + a] = dim(g, 0, o.k[a] - 1);
		opad[a] = pick(&g->h, o.st[a]);
	}
	say(g, "ConvTranspose:");
	ValId x = input(g, DT_FLOAT, geo_x(&o), float_mode(g));
	ValId w = weight(g, DT_FLOAT, geo_w(&o, true), V_FINE);
	int64_t cout = o.cout;
	ValId b = chance(&g->h, 160)
			  ? weight(g, DT_FLOAT, shape_n(1, &cout), V_FINE)
			  : -1;
	Node *n = node(g, "ConvTranspose", b >= 0 ? L(x, w, b) : L(x, w),
		       1);
	conv_attrs(g, n, &o);
	if (has_opad)
		attr_is(g, n, "output_padding", opad, o.nsp);
	ValId y = tu_out(n, 0);
	if (chance(&g->h, 96)) {
		bool relu = chance(&g->h, 128);
		y = tu_out(node(g, relu ? "Relu" : "Sigmoid", L(y), 1), 0);
		g->relu |= relu;
	}
	output(g, y, T_SUM);
}

/* MatMul (FusedMatMul with a bias Add and activation). */
static void gen_matmul(Gen *g)
{
	int32_t ra = (int32_t)PICK(&g->h, ((int[]){ 1, 2, 2, 3, 4 }));
	int32_t rb = (int32_t)PICK(&g->h, ((int[]){ 1, 2, 2, 2, 3, 4 }));
	int64_t m = ddim(g, 1, 9), k = ddim(g, 1, 12), n = ddim(g, 1, 12);
	if (chance(&g->h, 24)) /* a larger product: two threads */
		m = dim(g, 32, 70), k = dim(g, 32, 70), n = dim(g, 32, 70);
	if (skip(2) && k == 0)
		k = 1;
	int64_t da[4], db[4];
	int32_t rmax = ra > rb ? ra : rb;
	int64_t batch[2] = { ddim(g, 1, 3), ddim(g, 1, 2) };
	for (int32_t i = 0; i < ra; i++)
		da[i] = i == ra - 1 ? k : i == ra - 2 ? m
			: chance(&g->h, 64) ? 1 : batch[i + rmax - ra];
	for (int32_t i = 0; i < rb; i++)
		db[i] = i == rb - 1 ? n : i == rb - 2 ? k
			: chance(&g->h, 64) ? 1 : batch[i + rmax - rb];
	if (rb == 1)
		db[0] = k;
	bool bconst = chance(&g->h, 150);
	say(g, "MatMul:");
	ValId a = input(g, DT_FLOAT, shape_n(ra, da), float_mode(g));
	ValId b = bconst ? weight(g, DT_FLOAT, shape_n(rb, db), V_FINE)
			 : input(g, DT_FLOAT, shape_n(rb, db), float_mode(g));
	ValId y = tu_out(node(g, "MatMul", L(a, b), 1), 0);
	if (rb >= 2 && chance(&g->h, 80)) {
		ValId c = weight(g, DT_FLOAT, shape_n(1, &n), V_FINE);
		y = tu_out(node(g, "Add", L(y, c), 1), 0);
		g->fused = true;
	}
	output(g, activation(g, y), T_SUM);
}

/* Gemm (FusedGemm with an activation). */
static void gen_gemm(Gen *g)
{
	int64_t m = ddim(g, 1, 9), k = ddim(g, 1, 12), n = ddim(g, 1, 12);
	if (chance(&g->h, 24))
		m = dim(g, 32, 70), k = dim(g, 32, 70), n = dim(g, 32, 70);
	if (skip(2) && k == 0)
		k = 1;
	bool ta = chance(&g->h, 80), tb = chance(&g->h, 128);
	static const float ab[] = { 1, 1, 1, 0, 0.5f, -1, 2, 1e-3f };
	float alpha = PICK(&g->h, ab), beta = PICK(&g->h, ab);
	say(g, "Gemm:");
	ValId a = input(g, DT_FLOAT, ta ? SHAPE(k, m) : SHAPE(m, k),
			float_mode(g));
	Shape bs = tb ? SHAPE(n, k) : SHAPE(k, n);
	ValId b = chance(&g->h, 150) ? weight(g, DT_FLOAT, bs, V_FINE)
				     : input(g, DT_FLOAT, bs, float_mode(g));
	ValId c = -1;
	int cs = (int)pick(&g->h, 7);
	if (cs) {
		Shape s = cs == 1 ? shape_of(0, NULL) : cs == 2 ? SHAPE(n)
			  : cs == 3 ? SHAPE(1, n) : cs == 4 ? SHAPE(m, 1)
						  : SHAPE(m, n);
		VMode cm = float_mode(g);
		if (skip(20) && beta == 0) /* defect 20: C finite */
			cm = V_FINE;
		c = chance(&g->h, 150) ? weight(g, DT_FLOAT, s, V_FINE)
				       : input(g, DT_FLOAT, s, cm);
	}
	Node *nd = node(g, "Gemm", c >= 0 ? L(a, b, c) : L(a, b), 1);
	if (ta || chance(&g->h, 32))
		attr_i(g, nd, "transA", ta);
	if (tb || chance(&g->h, 32))
		attr_i(g, nd, "transB", tb);
	if (alpha != 1 || chance(&g->h, 32))
		attr_f(g, nd, "alpha", alpha);
	if (beta != 1 || chance(&g->h, 32))
		attr_f(g, nd, "beta", beta);
	output(g, activation(g, tu_out(nd, 0)), T_SUM);
}

/* Relu, Sigmoid, Erf, Pow(x, 2), Exp, Log, Sqrt, Neg, Abs, Tanh,
 * HardSwish (FusedActivation) of float. */
static void gen_unary(Gen *g)
{
	static const char *const ops[] = { "Relu", "Sigmoid", "Erf", "Pow",
					   "Exp", "Log", "Sqrt", "Neg", "Abs",
					   "Tanh", "HardSwish", "HardSigmoid",
					   "LeakyRelu" };
	const char *op = PICK(&g->h, ops);
	int32_t r = (int32_t)range(&g->h, 0, 5);
	Shape s = rand_shape(g, r, chance(&g->h, 32) ? 40 : 6);
	say(g, "%s:", op);
	ValId x = input(g, DT_FLOAT, s, float_mode(g));
	ValId y;
	if (!strcmp(op, "Pow")) {
		ValId e = chance(&g->h, 128) ? scalar(g, DT_FLOAT, 2)
					     : weight_f32s(g, (float[]){ 2 }, 1);
		y = tu_out(node(g, op, L(x, e), 1), 0);
	} else {
		Node *n = node(g, op, L(x), 1);
		if (!strcmp(op, "LeakyRelu") && chance(&g->h, 128))
			attr_f(g, n, "alpha", (float)range(&g->h, -8, 8) / 8);
		y = tu_out(n, 0);
	}
	if (!strcmp(op, "HardSwish") && chance(&g->h, 64)) /* two in one */
		y = tu_out(node(g, "HardSwish", L(y), 1), 0);
	g->relu |= !strcmp(op, "Relu");
	bool bits = !strcmp(op, "Relu") || !strcmp(op, "Neg") ||
		    !strcmp(op, "Abs");
	output(g, y, bits ? T_BITS : T_EXACT);
	int k = act_lookup(op, strlen(op));
	if (!strcmp(op, "Exp") || !strcmp(op, "Log"))
		rel_tol(g, 2 * EPS * 2, 0); /* 2 ulp */
	else if (!strcmp(op, "Erf")) /* relative to the normal range */
		rel_tol(g, 5e-7 + 2 * EPS, 1e-40);
	else if (k >= 0 && !bits && strcmp(op, "LeakyRelu"))
		rel_tol(g, 2 * act_info[k].rel + 2 * EPS,
			2 * act_info[k].abs + 1e-45);
	g->out[g->nout - 1].ovf = false;
}

/* Float Add, Sub, Mul, Div: of one shape (direct.arith), by a constant
 * scalar, per channel (chan.binary), or numpy-broadcast (the
 * reference). */
static void gen_arith_f(Gen *g)
{
	static const char *const ops[] = { "Add", "Sub", "Mul", "Div" };
	const char *op = PICK(&g->h, ops);
	int32_t r = (int32_t)range(&g->h, 0, 5);
	int kind = (int)pick(&g->h, 4);
	if (kind == 2)
		r = 4;
	Shape s = rand_shape(g, r, chance(&g->h, 32) ? 40 : 7), t = s;
	if (kind == 1)
		t = chance(&g->h, 128) ? shape_of(0, NULL) : SHAPE(1);
	else if (kind == 2) {
		int64_t c = s.dims[1];
		t = chance(&g->h, 128) ? SHAPE(c, 1, 1)
		    : chance(&g->h, 128) ? SHAPE(1, c, 1, 1)
					 : SHAPE(s.dims[0], c, 1, 1);
	} else if (kind == 3)
		t = bcast_of(g, &s);
	say(g, "%s:", op);
	bool swap = chance(&g->h, 64);
	ValId a = input(g, DT_FLOAT, s, float_mode(g));
	ValId b = chance(&g->h, kind == 1 ? 200 : 100)
			  ? weight(g, DT_FLOAT, t, float_mode(g))
			  : input(g, DT_FLOAT, t, float_mode(g));
	output(g, tu_out(node(g, op, swap ? L(b, a) : L(a, b), 1), 0),
	       T_EXACT);
}

/* Integer and float16 Add, Sub, Mul, Div, Max, Min, Equal, Less,
 * Greater, numpy-broadcast (intew.binary). */
static void gen_arith_i(Gen *g)
{
	static const char *const ops[] = { "Add", "Sub", "Mul", "Div", "Max",
					   "Min", "Equal", "Less",
					   "Greater" };
	static const int dts[] = { DT_INT8, DT_UINT8, DT_INT32, DT_INT64,
				   DT_FLOAT16 };
	const char *op = PICK(&g->h, ops);
	int dt = PICK(&g->h, dts);
	bool cmp = !strcmp(op, "Equal") || !strcmp(op, "Less") ||
		   !strcmp(op, "Greater");
	int32_t r = (int32_t)range(&g->h, 0, 4);
	Shape s = rand_shape(g, r, chance(&g->h, 32) ? 40 : 6);
	Shape t = chance(&g->h, 128) ? s : bcast_of(g, &s);
	if (chance(&g->h, 64)) {
		Shape u = s;
		s = t, t = u;
	}
	bool div = !strcmp(op, "Div");
	if (skip(6) && div && dt != DT_FLOAT16 &&
	    (shape_numel(&s) == 0 || shape_numel(&t) == 0)) {
		s.dims[0] = s.rank ? 1 : 0;
		t = s;
	}
	g->keep_fp16 = dt == DT_FLOAT16 && chance(&g->h, 200);
	say(g, "%s%s:", op, g->keep_fp16 ? " (--keep-fp16)" : "");
	VMode ma = dt == DT_FLOAT16 ? float_mode(g) : int_mode(g);
	VMode mb = dt == DT_FLOAT16 ? float_mode(g)
		   : div && chance(&g->h, 200) ? V_POS : int_mode(g);
	ValId a = input(g, dt, s, ma);
	ValId b = chance(&g->h, 64) ? weight(g, dt, t, mb) : input(g, dt, t, mb);
	ValId y = tu_out(node(g, op, L(a, b), 1), 0);
	output(g, y, cmp || dt != DT_FLOAT16 ? T_BYTES : T_EXACT);
}

/* Relu, Neg, Abs, Clip of integers and float16 (intew.unary). */
static void gen_unary_i(Gen *g)
{
	static const char *const ops[] = { "Relu", "Neg", "Abs", "Clip" };
	static const int dts[] = { DT_INT8, DT_UINT8, DT_INT32, DT_INT64,
				   DT_FLOAT16 };
	const char *op = PICK(&g->h, ops);
	int dt = PICK(&g->h, dts);
	Shape s = rand_shape(g, (int32_t)range(&g->h, 0, 4), 9);
	g->keep_fp16 = dt == DT_FLOAT16 && chance(&g->h, 200);
	say(g, "%s%s:", op, g->keep_fp16 ? " (--keep-fp16)" : "");
	ValId x = input(g, dt, s, dt == DT_FLOAT16 ? float_mode(g)
						   : int_mode(g));
	ValId y;
	if (!strcmp(op, "Clip")) {
		int how = (int)pick(&g->h, 4); /* min, max: 0 none, 1 both,
						* 2 min only, 3 max only */
		double lo = (double)range(&g->h, -100, 50);
		double hi = lo + (double)range(&g->h, -4, 100);
		ValId a = how == 1 || how == 2 ? scalar(g, dt, lo) : -1;
		ValId b = how == 1 || how == 3 ? scalar(g, dt, hi) : -1;
		if (chance(&g->h, 24) && a >= 0) /* a runtime bound */
			a = input(g, dt, shape_of(0, NULL), int_mode(g));
		y = tu_out(node(g, op, b >= 0 ? L(x, a, b)
				   : a >= 0 ? L(x, a) : L(x), 1), 0);
	} else {
		y = tu_out(node(g, op, L(x), 1), 0);
	}
	g->relu |= !strcmp(op, "Relu");
	output(g, y, dt == DT_FLOAT16 ? T_BITS : T_BYTES);
}

static const int any_dts[] = { DT_FLOAT, DT_FLOAT16, DT_DOUBLE, DT_INT8,
			       DT_UINT8, DT_INT16, DT_INT32, DT_INT64,
			       DT_BOOL, DT_UINT32, DT_UINT64, DT_UINT16 };

static VMode mode_for(Gen *g, int dt)
{
	return is_float(dt) ? float_mode(g) : int_mode(g);
}

/* Where, numpy-broadcast, of any dtype (intew.where). */
static void gen_where(Gen *g)
{
	int dt = PICK(&g->h, any_dts);
	Shape s = rand_shape(g, (int32_t)range(&g->h, 0, 4), 6);
	Shape a = chance(&g->h, 128) ? s : bcast_of(g, &s);
	Shape b = chance(&g->h, 128) ? s : bcast_of(g, &s);
	Shape c = chance(&g->h, 128) ? s : bcast_of(g, &s);
	g->keep_fp16 = dt == DT_FLOAT16 && chance(&g->h, 200);
	say(g, "Where%s:", g->keep_fp16 ? " (--keep-fp16)" : "");
	ValId vc = chance(&g->h, 40) ? weight(g, DT_BOOL, c, V_FULL)
				     : input(g, DT_BOOL, c, V_FULL);
	ValId va = input(g, dt, a, mode_for(g, dt));
	ValId vb = chance(&g->h, 64) ? weight(g, dt, b, mode_for(g, dt))
				     : input(g, dt, b, mode_for(g, dt));
	output(g, tu_out(node(g, "Where", L(vc, va, vb), 1), 0), T_BYTES);
}

/* Cast between float32, float16, double, the integers and bool
 * (convert.cast). */
static void gen_cast(Gen *g)
{
	int from = PICK(&g->h, any_dts), to = PICK(&g->h, any_dts);
	Shape s = rand_shape(g, (int32_t)range(&g->h, 0, 4),
			     chance(&g->h, 32) ? 60 : 7);
	g->keep_fp16 = chance(&g->h, 200);
	say(g, "Cast %s to %s%s:", dtype_name(from), dtype_name(to),
	    g->keep_fp16 ? " (--keep-fp16)" : "");
	ValId x = input(g, from, s, mode_for(g, from));
	Node *n = node(g, "Cast", L(x), 1);
	attr_i(g, n, "to", to);
	output(g, tu_out(n, 0), is_float(to) ? T_EXACT : T_BYTES);
}

/* Transpose (direct.transpose of 4-byte elements). */
static void gen_transpose(Gen *g)
{
	static const int dts[] = { DT_FLOAT, DT_INT32, DT_UINT32, DT_INT64,
				   DT_INT8, DT_FLOAT16 };
	int dt = PICK(&g->h, dts);
	int32_t r = (int32_t)range(&g->h, 1, 6);
	Shape s = rand_shape(g, r, r > 4 ? 3 : 6);
	int64_t perm[MAX_RANK];
	for (int32_t i = 0; i < r; i++)
		perm[i] = i;
	for (int32_t i = r - 1; i > 0; i--) {
		int64_t j = pick(&g->h, i + 1), t = perm[i];
		perm[i] = perm[j], perm[j] = t;
	}
	g->keep_fp16 = true;
	say(g, "Transpose:");
	ValId x = input(g, dt, s, dt == DT_FLOAT ? V_RAW : mode_for(g, dt));
	Node *n = node(g, "Transpose", L(x), 1);
	if (chance(&g->h, 220))
		attr_is(g, n, "perm", perm, r);
	output(g, tu_out(n, 0), T_BYTES);
}

/* Gather by constant indices (direct.gather), in range or not. */
static void gen_gather(Gen *g)
{
	int dt = PICK(&g->h, any_dts);
	int32_t r = (int32_t)range(&g->h, 1, 4);
	Shape s = rand_shape(g, r, 6);
	int64_t axis = range(&g->h, -r, r - 1), len = s.dims[(axis + r) % r];
	int32_t ri = (int32_t)range(&g->h, 0, 2);
	Shape is = rand_shape(g, ri, 4);
	int64_t n = shape_numel(&is), idx[64];
	if (n > 64)
		is = SHAPE(4), n = 4;
	for (int64_t i = 0; i < n; i++)
		idx[i] = chance(&g->h, 4) ? range(&g->h, -100, 100)
					  : range(&g->h, -len, len - 1);
	g->keep_fp16 = true;
	say(g, "Gather:");
	ValId x = input(g, dt, s, is_float(dt) ? V_RAW : V_FULL);
	const char *name = fresh(g, "c");
	bool i32 = chance(&g->h, 64);
	int32_t i32s[64];
	for (int64_t i = 0; i < n; i++)
		i32s[i] = (int32_t)idx[i];
	ValId iv = tu_weight_data(g->g, name, i32 ? DT_INT32 : DT_INT64, is,
				  i32 ? (void *)i32s : (void *)idx);
	say(g, " %s%s", name, shape_s(&is));
	for (int64_t i = 0; i < n; i++)
		say(g, "%s%lld", i ? "," : "=", (long long)idx[i]);
	Node *nd = node(g, "Gather", L(x, iv), 1);
	attr_i(g, nd, "axis", axis);
	output(g, tu_out(nd, 0), T_BYTES);
}

/* Concat, Slice, Pad, Split, Tile, Expand (small.move; chan.concat). */
static void gen_move(Gen *g)
{
	int which = (int)pick(&g->h, 6);
	int dt = chance(&g->h, 128) ? DT_FLOAT : PICK(&g->h, any_dts);
	int32_t r = (int32_t)range(&g->h, which == 5 ? 0 : 1, 4);
	Shape s = rand_shape(g, r, 5);
	VMode mode = is_float(dt) ? V_RAW : V_FULL;
	g->keep_fp16 = true;
	Node *n;
	switch (which) {
	case 0: { /* Concat (chan.concat: float, rank 4, the channels) */
		bool chan = dt == DT_FLOAT && chance(&g->h, 100);
		if (chan)
			r = 4, s = rand_shape(g, 4, 5);
		int64_t axis = chan ? 1 : range(&g->h, -r, r - 1);
		int64_t a = (axis + r) % r;
		int k = (int)range(&g->h, 1, 4);
		ValId ins[4];
		say(g, "Concat:");
		for (int i = 0; i < k; i++) {
			Shape t = s;
			t.dims[a] = ddim(g, 1, 4);
			ins[i] = chance(&g->h, 40) ? weight(g, dt, t, mode)
						   : input(g, dt, t, mode);
		}
		n = node_n(g, "Concat", ins, k, 1);
		attr_i(g, n, "axis", axis);
		output(g, tu_out(n, 0), T_BYTES);
		return;
	}
	case 1: { /* Slice */
		int64_t st[4], en[4], ax[4], sp[4];
		int k = (int)range(&g->h, 1, r);
		for (int i = 0; i < k; i++) {
			ax[i] = (i + pick(&g->h, r)) % r;
			for (int j = 0; j < i; j++)
				if (ax[j] == ax[i])
					ax[i] = -1;
			if (ax[i] < 0) {
				k = i;
				break;
			}
			int64_t d = s.dims[ax[i]];
			st[i] = range(&g->h, -d - 2, d + 2);
			en[i] = chance(&g->h, 24) ? INT64_MAX
						  : range(&g->h, -d - 2, d + 2);
			sp[i] = PICK(&g->h, ((int64_t[]){ 1, 1, 1, 2, 3, -1,
							 -2 }));
			if (chance(&g->h, 32))
				ax[i] -= r;
		}
		if (k == 0)
			k = 1, ax[0] = 0, st[0] = 0, en[0] = 1, sp[0] = 1;
		say(g, "Slice:");
		ValId x = input(g, dt, s, mode);
		ValId vs = weight_i64(g, st, k), ve = weight_i64(g, en, k);
		ValId va = weight_i64(g, ax, k), vp = weight_i64(g, sp, k);
		n = node(g, "Slice", chance(&g->h, 200) ? L(x, vs, ve, va, vp)
							: L(x, vs, ve, va), 1);
		break;
	}
	case 2: { /* Pad */
		static const char *const modes[] = { "constant", "constant",
						     "reflect", "edge" };
		int64_t pads[8];
		for (int32_t i = 0; i < 2 * r; i++)
			pads[i] = range(&g->h, -1, 3);
		const char *pm = PICK(&g->h, modes);
		say(g, "Pad:");
		ValId x = input(g, dt, s, mode);
		ValId vp = weight_i64(g, pads, 2 * r);
		ValId cv = !strcmp(pm, "constant") && dt != DT_BOOL &&
				   chance(&g->h, 128)
			   ? scalar(g, dt, (double)range(&g->h, -9, 9))
			   : -1;
		n = node(g, "Pad", cv >= 0 ? L(x, vp, cv) : L(x, vp), 1);
		attr_s(g, n, "mode", pm);
		break;
	}
	case 3: { /* Split (opset 13: sizes as an input) */
		int64_t axis = range(&g->h, -r, r - 1), a = (axis + r) % r;
		int k = (int)range(&g->h, 1, 4);
		int64_t sizes[4], left = s.dims[a];
		for (int i = 0; i < k; i++) {
			sizes[i] = i == k - 1 ? left : range(&g->h, 0, left);
			left -= sizes[i];
		}
		say(g, "Split:");
		ValId x = input(g, dt, s, mode);
		bool given = chance(&g->h, 160);
		ValId vs = given ? weight_i64(g, sizes, k) : -1;
		n = node(g, "Split", given ? L(x, vs) : L(x), k);
		attr_i(g, n, "axis", axis);
		for (int i = 0; i < k; i++)
			output(g, n->outputs[i], T_BYTES);
		return;
	}
	case 4: { /* Tile */
		int64_t rep[4];
		for (int32_t i = 0; i < r; i++)
			rep[i] = range(&g->h, chance(&g->h, 8) ? 0 : 1, 3);
		say(g, "Tile:");
		ValId x = input(g, dt, s, mode);
		n = node(g, "Tile", L(x, weight_i64(g, rep, r)), 1);
		break;
	}
	default: { /* Expand */
		Shape t = bcast_of(g, &s), big = s;
		say(g, "Expand:");
		ValId x = input(g, dt, t, mode);
		if (chance(&g->h, 64) && big.rank < MAX_RANK) {
			memmove(big.dims + 1, big.dims,
				(size_t)big.rank * sizeof(int64_t));
			big.dims[0] = dim(g, 1, 3);
			big.rank++;
		}
		n = node(g, "Expand",
			 L(x, weight_i64(g, big.dims, big.rank)), 1);
	}
	}
	output(g, tu_out(n, 0), T_BYTES);
}

/* ReduceMean, ReduceSum over constant axes (small.reduce). */
static void gen_reduce(Gen *g)
{
	bool mean = chance(&g->h, 128);
	int64_t opset = chance(&g->h, 128) ? 13 : 18;
	int32_t r = (int32_t)range(&g->h, 1, 5);
	Shape s = rand_shape(g, r, 6);
	int64_t axes[5];
	int k = 0;
	int32_t first = (int32_t)pick(&g->h, r), n = (int32_t)range(&g->h, 0, r);
	for (int32_t a = first; a < r && k < n; a++) /* adjacent, mostly */
		if (k == 0 || chance(&g->h, 220))
			axes[k++] = chance(&g->h, 64) ? a - r : a;
	g->m->opsets[0].version = opset;
	say(g, "%s opset %lld:", mean ? "ReduceMean" : "ReduceSum",
	    (long long)opset);
	ValId x = input(g, DT_FLOAT, s, float_mode(g));
	bool input_axes = !mean || opset >= 18;
	Node *nd;
	if (input_axes)
		nd = node(g, mean ? "ReduceMean" : "ReduceSum",
			  k || chance(&g->h, 128)
				  ? L(x, weight_i64(g, axes, k))
				  : L(x), 1);
	else {
		nd = node(g, "ReduceMean", L(x), 1);
		if (k)
			attr_is(g, nd, "axes", axes, k);
	}
	if (chance(&g->h, 64))
		attr_i(g, nd, "keepdims", 0);
	if (chance(&g->h, 16))
		attr_i(g, nd, "noop_with_empty_axes", 1);
	output(g, tu_out(nd, 0), T_EXACT);
}

/* Softmax (direct.softmax over the last axis). */
static void gen_softmax(Gen *g)
{
	int64_t opset = chance(&g->h, 180) ? 13 : 11;
	int32_t r = (int32_t)range(&g->h, 1, 4);
	Shape s = rand_shape(g, r, chance(&g->h, 64) ? 40 : 7);
	g->m->opsets[0].version = opset;
	say(g, "Softmax opset %lld:", (long long)opset);
	ValId x = input(g, DT_FLOAT, s, float_mode(g));
	Node *n = node(g, "Softmax", L(x), 1);
	if (chance(&g->h, 128))
		attr_i(g, n, "axis", range(&g->h, -r, r - 1));
	output(g, tu_out(n, 0), T_REL);
	int64_t axis = attr_int(n, "axis", opset < 13 ? 1 : -1), len = 1;
	axis = axis < 0 ? axis + r : axis;
	for (int32_t a = (int32_t)axis; a < r; a++)
		len *= s.dims[a];
	rel_tol(g, 4e-7 + 2 * (double)len * EPS, 1e-37);
	g->out[g->nout - 1].ovf = false;
	g->out[g->nout - 1].rowlen = len;
}

/* LayerNormalization (direct.layernorm). */
static void gen_layernorm(Gen *g)
{
	int32_t r = (int32_t)range(&g->h, 1, 4);
	Shape s = rand_shape(g, r, 6);
	if (chance(&g->h, 100))
		s.dims[r - 1] = PICK(&g->h, ((int64_t[]){ 16, 32, 48 }));
	int64_t axis = range(&g->h, -r, r - 1), a = (axis + r) % r;
	Shape ws = { .rank = r - (int32_t)a };
	for (int32_t i = 0; i < ws.rank; i++)
		ws.dims[i] = s.dims[a + i];
	g->m->opsets[0].version = 17;
	say(g, "LayerNormalization:");
	ValId x = input(g, DT_FLOAT, s, float_mode(g));
	ValId w = weight(g, DT_FLOAT, ws, V_FINE);
	ValId b = chance(&g->h, 160) ? weight(g, DT_FLOAT, ws, V_FINE) : -1;
	Node *n = node(g, "LayerNormalization",
		       b >= 0 ? L(x, w, b) : L(x, w), 1);
	attr_i(g, n, "axis", axis);
	float eps = PICK(&g->h, ((float[]){ 1e-5f, 1e-5f, 1e-12f, 0.5f }));
	attr_f(g, n, "epsilon", eps);
	(void)x;
	g->norm_w = g->g->vals[w].konst->data;
	g->norm_b = b >= 0 ? g->g->vals[b].konst->data : NULL;
	g->norm_axis = a, g->norm_eps = eps;
	output(g, tu_out(n, 0), T_NORM);
}

/* MaxPool, AveragePool, GlobalAveragePool (dnnl.pool, chan.gap). */
static void gen_pool(Gen *g)
{
	int which = (int)pick(&g->h, 3);
	int nsp = (int)PICK(&g->h, ((int[]){ 1, 2, 2, 3 }));
	int64_t d[5] = { ddim(g, 1, 2), ddim(g, 1, 5) };
	for (int a = 0; a < nsp; a++)
		d[2 + a] = ddim(g, 1, nsp == 3 ? 5 : 9);
	Shape s = shape_n(nsp + 2, d);
	static const char *const ops[] = { "MaxPool", "AveragePool",
					   "GlobalAveragePool" };
	const char *op = ops[which];
	int64_t opset = which == 1 && chance(&g->h, 64) ? 19 : 13;
	g->m->opsets[0].version = opset;
	say(g, "%s opset %lld:", op, (long long)opset);
	ValId x = input(g, DT_FLOAT, s, float_mode(g));
	Node *n = node(g, op, L(x), which == 0 && chance(&g->h, 24) ? 2 : 1);
	int64_t win = 1;
	if (which < 2) {
		int64_t k[3], st[3], dl[3], pads[6];
		bool dil = which == 0 || opset >= 19;
		for (int a = 0; a < nsp; a++) {
			k[a] = dim(g, 1, 4);
			st[a] = dim(g, 1, 3);
			dl[a] = dil && chance(&g->h, 48) ? 2 : 1;
			pads[a] = dim(g, 0, k[a] - 1);
			pads[nsp + a] = dim(g, 0, k[a] - 1);
			win *= k[a];
		}
		attr_is(g, n, "kernel_shape", k, nsp);
		if (chance(&g->h, 160))
			attr_is(g, n, "strides", st, nsp);
		if (dil && chance(&g->h, 64))
			attr_is(g, n, "dilations", dl, nsp);
		if (chance(&g->h, 24))
			attr_s(g, n, "auto_pad", PICK(&g->h, autopads));
		else if (chance(&g->h, 180))
			attr_is(g, n, "pads", pads, 2 * nsp);
		if (chance(&g->h, 80))
			attr_i(g, n, "ceil_mode", 1);
		if (which == 1 && chance(&g->h, 128))
			attr_i(g, n, "count_include_pad", 1);
	} else {
		for (int a = 0; a < nsp; a++)
			win *= d[2 + a];
	}
	g->maxpool = which == 0;
	output(g, tu_out(n, 0), which == 0 ? T_EXACT : T_REL);
	if (which) {
		rel_tol(g, 2 * EPS, 2.0 * (double)(win + 1) * EPS);
		g->out[g->nout - 1].absx = true;
	}
	if (n->noutputs == 2)
		output(g, n->outputs[1], T_BYTES);
}

/* Resize: nearest (direct.resize by whole factors), linear (chan.resize
 * rank 4, dnnl.resize rank 3 and 5), cubic (the reference); scales or
 * sizes; ranks 3 to 5. */
static void gen_resize(Gen *g)
{
	static const char *const modes[] = { "nearest", "linear", "linear",
					     "cubic" };
	static const char *const cts[] = { "half_pixel", "half_pixel",
					   "pytorch_half_pixel",
					   "align_corners", "asymmetric",
					   "asymmetric", "tf_half_pixel_for_nn" };
	static const char *const nms[] = { "round_prefer_floor",
					   "round_prefer_ceil", "floor",
					   "floor", "ceil" };
	const char *mode = PICK(&g->h, modes);
	bool lin = strcmp(mode, "nearest");
	int32_t r = (int32_t)PICK(&g->h, ((int[]){ 3, 4, 4, 4, 5 }));
	int64_t opset = PICK(&g->h, ((int64_t[]){ 11, 13, 13, 18 }));
	int64_t d[5], o[5];
	float sc[5];
	bool whole = chance(&g->h, 128), sizes = chance(&g->h, 100);
	for (int32_t a = 0; a < r; a++) {
		d[a] = a < 2 ? ddim(g, 1, 3) : ddim(g, 1, r == 5 ? 4 : 7);
		int64_t f = dim(g, 1, 3);
		if (a < 2) {
			sc[a] = 1, o[a] = d[a];
		} else if (whole) {
			sc[a] = (float)f, o[a] = d[a] * f;
		} else {
			o[a] = ddim(g, 1, 12);
			sc[a] = d[a] ? (float)o[a] / (float)d[a]
				     : (float)range(&g->h, 1, 16) / 4;
			if (!sizes && chance(&g->h, 64)) /* a scale not Y / X */
				sc[a] = (float)range(&g->h, 1, 16) / 4;
		}
	}
	for (int32_t a = 0; skip(16) && !lin && a < r - 2; a++)
		if (!d[a]) /* defect 16: no empty leading axis */
			d[a] = o[a] = 1;
	for (int32_t a = r - 2; skip(18) && !lin && a < r; a++)
		if (!o[a] && d[a]) /* defect 18: no empty output axis */
			o[a] = d[a], sc[a] = 1;
	if (skip(4) && lin && sizes)
		for (int32_t a = 2; a < r; a++)
			if (!d[a] || !o[a])
				d[a] = d[a] ? d[a] : 1, o[a] = o[a] ? o[a] : 1,
				sc[a] = (float)o[a] / (float)d[a];
	if (skip(5) && lin && r != 4) {
		int64_t n = 1;
		for (int32_t a = 0; a < r; a++)
			n *= sizes ? o[a] : (int64_t)floor((double)d[a] * sc[a]);
		if (n > 256)
			for (int32_t a = 2; a < r; a++)
				o[a] = d[a] = d[a] ? 1 : 0, sc[a] = 1;
	}
	g->m->opsets[0].version = opset;
	say(g, "Resize %s opset %lld:", mode, (long long)opset);
	ValId x = input(g, DT_FLOAT, shape_n(r, d), float_mode(g));
	int64_t none = 0;
	ValId roi = opset < 13 || chance(&g->h, 64)
			    ? tu_weight_data(g->g, fresh(g, "c"), DT_FLOAT,
					     shape_n(1, &none), NULL)
			    : -1;
	ValId vs, vz = -1;
	if (sizes) {
		vs = opset < 13 ? tu_weight_data(g->g, fresh(g, "c"),
						 DT_FLOAT, shape_n(1, &none),
						 NULL)
				: -1;
		vz = weight_i64(g, o, r);
	} else {
		vs = weight_f32s(g, sc, r);
	}
	Node *n = node(g, "Resize", vz >= 0 ? L(x, roi, vs, vz)
						: L(x, roi, vs), 1);
	if (strcmp(mode, "nearest") || chance(&g->h, 128))
		attr_s(g, n, "mode", mode);
	const char *ct = !lin && chance(&g->h, 100) ? "asymmetric"
						   : PICK(&g->h, cts);
	if (strcmp(ct, "half_pixel") || chance(&g->h, 64))
		attr_s(g, n, "coordinate_transformation_mode", ct);
	if (!lin)
		attr_s(g, n, "nearest_mode", chance(&g->h, 100) ? "floor"
							       : PICK(&g->h, nms));
	if (!strcmp(mode, "cubic")) {
		if (chance(&g->h, 64))
			attr_f(g, n, "cubic_coeff_a", -0.5f);
		if (chance(&g->h, 64))
			attr_i(g, n, "exclude_outside", 1);
	}
	if (opset >= 18 && chance(&g->h, 32))
		attr_i(g, n, "antialias", 1);
	output(g, tu_out(n, 0), lin ? T_REL : T_BYTES);
	if (lin) {
		rel_tol(g, 4 * EPS, 0);
		g->out[0].abs = (strcmp(mode, "cubic") ? 16 : 32) * EPS;
		g->out[0].absx = true;
		g->out[0].resize = true;
	}
}

/* LSTM, GRU, RNN (dnnl.rnn: one direction, default activations, whole
 * sequences; small.lstm). */
static void gen_rnn(Gen *g)
{
	static const char *const ops[] = { "LSTM", "GRU", "RNN" };
	const char *op = PICK(&g->h, ops);
	int gates = !strcmp(op, "LSTM") ? 4 : !strcmp(op, "GRU") ? 3 : 1;
	static const char *const dirs[] = { "forward", "forward", "forward",
					    "reverse", "bidirectional" };
	const char *dir = PICK(&g->h, dirs);
	int64_t nd = strcmp(dir, "bidirectional") ? 1 : 2;
	int64_t T = ddim(g, 1, 4), B = ddim(g, 1, 3), I = dim(g, 1, 6);
	int64_t H = chance(&g->h, 32) ? dim(g, 16, 70) : dim(g, 1, 8);
	say(g, "%s %s:", op, dir);
	ValId x = input(g, DT_FLOAT, SHAPE(T, B, I), float_mode(g));
	ValId w = weight(g, DT_FLOAT, SHAPE(nd, gates * H, I), V_FINE);
	/* R's rows sum to less than 1 in magnitude, a recurrence that
	 * contracts as trained ones do: with [-8, 8) entries one step
	 * scales the last one's rounding up to 8 H times, and two float
	 * implementations part by 1e-3 after three steps (fuzz_diff found
	 * a GRU of H 43 so) */
	ValId r = weight_scaled(g, DT_FLOAT, SHAPE(nd, gates * H, H), V_FINE,
				1.0f / (8.0f * (float)H));
	ValId b = chance(&g->h, 160)
			  ? weight(g, DT_FLOAT, SHAPE(nd, 2 * gates * H), V_FINE)
			  : -1;
	ValId sl = -1, h0 = -1, c0 = -1;
	if (chance(&g->h, 48)) {
		int32_t lens[8];
		int64_t nb = B > 8 ? 8 : B;
		for (int64_t i = 0; i < nb; i++)
			lens[i] = (int32_t)(chance(&g->h, 160) ? T
					    : range(&g->h, 0, T));
		const char *name = fresh(g, "c");
		sl = tu_weight_data(g->g, name, DT_INT32, shape_n(1, &nb),
				    lens);
		say(g, " %s (sequence_lens)", name);
	}
	if (chance(&g->h, 100))
		h0 = chance(&g->h, 128) ? input(g, DT_FLOAT, SHAPE(nd, B, H),
						float_mode(g))
					: weight(g, DT_FLOAT, SHAPE(nd, B, H),
						 V_FINE);
	if (gates == 4 && chance(&g->h, 100))
		c0 = input(g, DT_FLOAT, SHAPE(nd, B, H), float_mode(g));
	ValId ins[7] = { x, w, r, b, sl, h0, c0 };
	int32_t nin = c0 >= 0 ? 7 : h0 >= 0 ? 6 : sl >= 0 ? 5 : b >= 0 ? 4 : 3;
	Node *n = node_n(g, op, ins, nin, gates == 4 ? 3 : 2);
	attr_i(g, n, "hidden_size", H);
	if (strcmp(dir, "forward") || chance(&g->h, 32))
		attr_s(g, n, "direction", dir);
	if (gates == 3 && chance(&g->h, 100))
		attr_i(g, n, "linear_before_reset", 1);
	if (chance(&g->h, 16))
		attr_f(g, n, "clip", 2.5f);
	int keep = (int)range(&g->h, 1, 7);
	for (int k = 0; k < n->noutputs; k++)
		if (keep >> k & 1 || k == 0) {
			/* a gate's sum of finite values beyond 1e30 rounds
			 * by more than 1: its value is not compared */
			double t = 1e-5 * (double)(T + 1) * (double)(I + H + 2);
			output(g, n->outputs[k], T_REL);
			rel_tol(g, t, g->big_in ? INFINITY : t);
		} else {
			tu_omit_out(g->g, n, k);
		}
}

/* A quantized tensor's scale: positive, now and then 0 or negative. */
static float qscale(Gen *g)
{
	static const float s[] = { 0.5f, 0.25f, 0.1f, 0.0078125f, 1.0f,
				   3.0f, 0.0f, -0.5f, 1e-3f, 0.0001f };
	return PICK(&g->h, s);
}

static ValId scalar_f(Gen *g, float v) { return scalar(g, DT_FLOAT, v); }

/* A zero point of dt (u8 or s8): a scalar, or n of them (per channel). */
static ValId zp(Gen *g, int dt, int64_t n)
{
	if (n <= 1)
		return scalar(g, dt, (double)(dt == DT_UINT8 ? range(&g->h, 0, 255)
						     : range(&g->h, -128, 127)));
	return weight(g, dt, shape_n(1, &n), V_FULL);
}

/* MatMulInteger, QLinearMatMul (quant.matmul). */
static void gen_qmatmul(Gen *g)
{
	bool ql = chance(&g->h, 128);
	int da = chance(&g->h, 128) ? DT_UINT8 : DT_INT8;
	int db = chance(&g->h, 128) ? DT_INT8 : DT_UINT8;
	int32_t ra = (int32_t)range(&g->h, 1, 3);
	int32_t rb = chance(&g->h, 180) ? 2 : ra < 2 ? 2 : ra;
	int64_t m = ddim(g, 1, 9), k = ddim(g, 1, 40), n = ddim(g, 1, 20);
	if (chance(&g->h, 24))
		m = dim(g, 30, 64), k = dim(g, 30, 80), n = dim(g, 30, 64);
	bool bconst = chance(&g->h, 160);
	if (skip(3) && (!ql || bconst) && n == 0)
		n = 1; /* QLinearMatMul of a constant B: the same division */
	if (skip(6) && ql && !bconst && n == 0)
		n = 1;
	int64_t bt = ddim(g, 1, 3);
	int64_t ad[3], bd[3];
	for (int32_t i = 0; i < ra; i++)
		ad[i] = i == ra - 1 ? k : i == ra - 2 ? m : bt;
	for (int32_t i = 0; i < rb; i++)
		bd[i] = i == rb - 1 ? n : i == rb - 2 ? k : bt;
	say(g, "%s:", ql ? "QLinearMatMul" : "MatMulInteger");
	ValId a = input(g, da, shape_n(ra, ad), V_FULL);
	ValId b = bconst ? weight(g, db, shape_n(rb, bd), V_FULL)
			 : input(g, db, shape_n(rb, bd), V_FULL);
	int64_t nz = chance(&g->h, 180) ? 1 : n;
	if (ql) {
		ValId as = scalar_f(g, qscale(g)), az = zp(g, da, 1);
		ValId bs = nz > 1 ? weight(g, DT_FLOAT, shape_n(1, &n), V_GRID)
				  : scalar_f(g, qscale(g));
		ValId bz = zp(g, db, nz);
		int dy = chance(&g->h, 128) ? DT_UINT8 : DT_INT8;
		ValId ys = scalar_f(g, qscale(g)), yz = zp(g, dy, 1);
		ValId y = tu_out(node(g, "QLinearMatMul",
				      L(a, as, az, b, bs, bz, ys, yz), 1), 0);
		output(g, y, T_BYTES);
		return;
	}
	int how = (int)pick(&g->h, 4); /* zero points: none, A, B, both */
	ValId az = how & 1 ? zp(g, da, 1) : -1;
	ValId bz = how & 2 ? zp(g, db, nz) : -1;
	ValId ins[4] = { a, b, az, bz };
	ValId y = tu_out(node_n(g, "MatMulInteger", ins,
				how & 2 ? 4 : how ? 3 : 2, 1), 0);
	output(g, y, T_BYTES);
}

/* ConvInteger, QLinearConv (quant.conv). */
static void gen_qconv(Gen *g)
{
	bool ql = chance(&g->h, 128);
	int dx = chance(&g->h, 128) ? DT_UINT8 : DT_INT8;
	int dw = chance(&g->h, 128) ? DT_INT8 : DT_UINT8;
	Geo o;
	memset(&o, 0, sizeof(o));
	o.nsp = chance(&g->h, 200) ? 2 : 1;
	o.n = chance(&g->h, 200) ? 1 : ddim(g, 1, 2);
	o.group = chance(&g->h, 200) ? 1 : 2;
	o.cin = o.group * PICK(&g->h, ((int64_t[]){ 1, 2, 3, 4, 8, 16, 17 }));
	o.cout = o.group * dim(g, 1, 8);
	if (chance(&g->h, 32)) /* depthwise */
		o.group = o.cin, o.cout = o.cin;
	for (int a = 0; a < o.nsp; a++) {
		o.in[a] = ddim(g, 1, 9);
		o.k[a] = dim(g, 1, 3);
		o.st[a] = chance(&g->h, 180) ? 1 : 2;
		o.dl[a] = chance(&g->h, 220) ? 1 : 2;
		o.pads[a] = dim(g, 0, 1);
		o.pads[o.nsp + a] = dim(g, 0, 1);
	}
	int64_t cout = o.cout;
	say(g, "%s:", ql ? "QLinearConv" : "ConvInteger");
	ValId x = input(g, dx, geo_x(&o), V_FULL);
	ValId w = weight(g, dw, geo_w(&o, false), V_FULL);
	int64_t nz = chance(&g->h, 180) ? 1 : cout;
	Node *n;
	if (ql) {
		ValId xs = scalar_f(g, qscale(g)), xz = zp(g, dx, 1);
		ValId ws = nz > 1 ? weight(g, DT_FLOAT, shape_n(1, &cout), V_GRID)
				  : scalar_f(g, qscale(g));
		ValId wz = zp(g, dw, nz);
		int dy = chance(&g->h, 128) ? DT_UINT8 : DT_INT8;
		ValId ys = scalar_f(g, qscale(g)), yz = zp(g, dy, 1);
		ValId b = chance(&g->h, 128)
				  ? weight(g, DT_INT32, shape_n(1, &cout), V_SMALL)
				  : -1;
		ValId ins[9] = { x, xs, xz, w, ws, wz, ys, yz, b };
		n = node_n(g, "QLinearConv", ins, b >= 0 ? 9 : 8, 1);
	} else {
		int how = (int)pick(&g->h, 4);
		ValId xz = how & 1 ? zp(g, dx, 1) : -1;
		ValId wz = how & 2 ? zp(g, dw, nz) : -1;
		ValId ins[4] = { x, w, xz, wz };
		n = node_n(g, "ConvInteger", ins, how & 2 ? 4 : how ? 3 : 2, 1);
	}
	conv_attrs(g, n, &o);
	output(g, tu_out(n, 0), T_BYTES);
}

/* QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
 * (quant.quantize, .dequantize, .dynamic_quantize). */
static void gen_qlinear(Gen *g)
{
	int which = (int)pick(&g->h, 3);
	int32_t r = (int32_t)range(&g->h, which == 2 ? 0 : 0, 4);
	Shape s = rand_shape(g, r, chance(&g->h, 32) ? 40 : 7);
	int64_t axis = r ? range(&g->h, -r, r - 1) : 0;
	int64_t na = r ? s.dims[(axis + r) % r] : 1;
	bool per_axis = r && which < 2 && chance(&g->h, 80);
	int dq = chance(&g->h, 128) ? DT_UINT8 : DT_INT8;
	if (which == 0) {
		float sc = qscale(g);
		bool nz = skip(6) && shape_numel(&s) == 0; /* defect 6 */
		if (nz && sc == 0)
			sc = 1;
		say(g, "QuantizeLinear:");
		ValId x = input(g, DT_FLOAT, s, float_mode(g));
		ValId vs = per_axis ? weight(g, DT_FLOAT, shape_n(1, &na),
					     nz ? V_POS : V_GRID)
				    : scalar_f(g, sc);
		ValId vz = chance(&g->h, 200) ? zp(g, dq, per_axis ? na : 1) : -1;
		Node *n = node(g, "QuantizeLinear", vz >= 0 ? L(x, vs, vz)
							   : L(x, vs), 1);
		if (per_axis || chance(&g->h, 32))
			attr_i(g, n, "axis", axis);
		output(g, tu_out(n, 0), T_BYTES);
	} else if (which == 1) {
		if (chance(&g->h, 32))
			dq = DT_INT32;
		say(g, "DequantizeLinear:");
		ValId x = input(g, dq, s, V_FULL);
		ValId vs = per_axis ? weight(g, DT_FLOAT, shape_n(1, &na), V_GRID)
				    : scalar_f(g, qscale(g));
		ValId vz = dq != DT_INT32 && chance(&g->h, 200)
				   ? zp(g, dq, per_axis ? na : 1) : -1;
		Node *n = node(g, "DequantizeLinear", vz >= 0 ? L(x, vs, vz)
							     : L(x, vs), 1);
		if (per_axis || chance(&g->h, 32))
			attr_i(g, n, "axis", axis);
		output(g, tu_out(n, 0), T_EXACT);
	} else {
		say(g, "DynamicQuantizeLinear:");
		ValId x = input(g, DT_FLOAT, s, float_mode(g));
		Node *n = node(g, "DynamicQuantizeLinear", L(x), 3);
		for (int k = 0; k < 3; k++)
			output(g, n->outputs[k], T_BYTES);
	}
}

/* A QDQ group the qdq pass makes one QLinearConv or QLinearMatMul of:
 * DequantizeLinear of X and of a constant W -> Conv or MatMul [-> Relu]
 * -> QuantizeLinear. */
static void gen_qdq(Gen *g)
{
	bool conv = chance(&g->h, 128);
	int dx = chance(&g->h, 128) ? DT_UINT8 : DT_INT8;
	int dw = chance(&g->h, 200) ? DT_INT8 : DT_UINT8;
	int64_t c = dim(g, 1, 8), co = dim(g, 1, 8), h = dim(g, 1, 7);
	int64_t wd = dim(g, 1, 7), k = dim(g, 1, 3);
	say(g, "QDQ %s:", conv ? "Conv" : "MatMul");
	Shape xs = conv ? SHAPE(1, c, h, wd) : SHAPE(h, c);
	ValId x = input(g, dx, xs, V_FULL);
	ValId dqx = tu_out(node(g, "DequantizeLinear",
				chance(&g->h, 200)
					? L(x, scalar_f(g, 0.05f), zp(g, dx, 1))
					: L(x, scalar_f(g, 0.05f)), 1), 0);
	Shape ws = conv ? SHAPE(co, c, k, k) : SHAPE(c, co);
	ValId w = weight(g, dw, ws, V_FULL);
	bool per = chance(&g->h, 64);
	static const float wsc[] = { 0.01f, 0.02f, 0.005f, 0.25f };
	ValId sw = per ? weight(g, DT_FLOAT, SHAPE(co), V_POS)
		       : scalar_f(g, PICK(&g->h, wsc));
	Node *dn = node(g, "DequantizeLinear",
			L(w, sw, per ? weight(g, dw, SHAPE(co), V_SMALL)
				     : scalar(g, dw, 0)), 1);
	if (per)
		attr_i(g, dn, "axis", conv ? 0 : 1);
	ValId dqw = tu_out(dn, 0);
	ValId b = conv && chance(&g->h, 100)
			  ? weight(g, DT_FLOAT, SHAPE(co), V_GRID) : -1;
	Node *cn = node(g, conv ? "Conv" : "MatMul",
			b >= 0 ? L(dqx, dqw, b) : L(dqx, dqw), 1);
	/* defect 1: no 1x1 output of a larger input */
	if (conv && (skip(1) && h == k && wd == k && k > 1))
		attr_is(g, cn, "pads", INTS(1, 1, 1, 1));
	ValId y = tu_out(cn, 0);
	bool relu = chance(&g->h, 128);
	if (relu) {
		y = tu_out(node(g, "Relu", L(y), 1), 0);
		g->relu = true;
	}
	float ys = qscale(g);
	if (skip(12) && relu && ys < 0)
		ys = -ys;
	int dy = chance(&g->h, 128) ? DT_UINT8 : DT_INT8;
	ValId zy = relu && chance(&g->h, 160)
			   ? scalar(g, dy, dy == DT_UINT8 ? 0 : -128)
			   : zp(g, dy, 1);
	y = tu_out(node(g, "QuantizeLinear", L(y, scalar_f(g, ys), zy), 1),
		   0);
	output(g, y, T_BYTES);
	/* a float bias becomes an int32 at scale sx*sw (ONNX Runtime's
	 * rewrite too): up to half a step of it, which an output scale
	 * smaller than sx*sw makes several of the output's steps */
	double swmax = 0;
	const Tensor *swt = g->g->vals[sw].konst;
	for (size_t i = 0; swt && i < swt->nbytes / sizeof(float); i++)
		swmax = fmax(swmax, fabs(((const float *)swt->data)[i]));
	g->qdq_slack = 1 + (b >= 0 && ys != 0 ? 0.5 * 0.05 * swmax /
							fabs(ys)
					      : 0);
	g->qdq = ys != 0; /* a zero scale divides by zero: not compared */
	g->fused = g->qdq;
}

/* onnxruntime's dynamic int8 chain the fuse pass makes one DynQuantMatMul
 * or DynQuantConv of (passes/qfuse.c): DynamicQuantizeLinear(X) ->
 * MatMulInteger or ConvInteger with a constant W -> Cast to float -> Mul
 * by the scale times W's [-> Add of a bias] (quant.dynquant). */
static void gen_dynq(Gen *g)
{
	bool conv = chance(&g->h, 100);
	int dw = chance(&g->h, 200) ? DT_INT8 : DT_UINT8;
	int64_t k = ddim(g, 1, 24), n = dim(g, 1, 20), m = ddim(g, 1, 8);
	int64_t kh = dim(g, 1, 3), h = dim(g, 1, 7), wd = dim(g, 1, 7);
	say(g, "dynamic int8 %s:", conv ? "Conv" : "MatMul");
	Shape xs = conv ? SHAPE(1, k, h, wd)
		      : chance(&g->h, 128) ? SHAPE(m, k) : SHAPE(2, m, k);
	ValId x = input(g, DT_FLOAT, xs, float_mode(g));
	Node *dq = node(g, "DynamicQuantizeLinear", L(x), 3);
	ValId q = dq->outputs[0], s = dq->outputs[1], z = dq->outputs[2];
	ValId w = weight(g, dw, conv ? SHAPE(n, k, kh, kh) : SHAPE(k, n),
			 V_FULL);
	bool wz = chance(&g->h, 128);
	ValId vwz = wz ? scalar(g, dw, (double)range(&g->h, -3, 3)) : -1;
	Node *mm = node(g, conv ? "ConvInteger" : "MatMulInteger",
			wz ? L(q, w, z, vwz) : L(q, w, z), 1);
	if (conv && chance(&g->h, 128))
		attr_is(g, mm, "pads", INTS(1, 1, 1, 1));
	Node *cast = node(g, "Cast", L(tu_out(mm, 0)), 1);
	attr_i(g, cast, "to", DT_FLOAT);
	bool per = chance(&g->h, 80);
	ValId ws = per ? weight(g, DT_FLOAT, conv ? SHAPE(n, 1, 1) : SHAPE(n),
				V_POS)
		       : scalar_f(g, PICK(&g->h, ((float[]){ 0.01f, 0.5f,
							     3e-3f })));
	ValId p = tu_out(node(g, "Mul", chance(&g->h, 128) ? L(s, ws)
							   : L(ws, s), 1), 0);
	ValId y = tu_out(node(g, "Mul", chance(&g->h, 128)
					   ? L(tu_out(cast, 0), p)
					   : L(p, tu_out(cast, 0)), 1), 0);
	if (chance(&g->h, 128)) {
		ValId b = weight(g, DT_FLOAT, conv ? SHAPE(n, 1, 1) : SHAPE(n),
				 V_FINE);
		y = tu_out(node(g, "Add", L(y, b), 1), 0);
	}
	output(g, y, T_EXACT);
	g->fused = true;
}

/* Written-out activations the fuse pass makes one FusedActivation of
 * (direct.act): HardSwish x * Clip(x + 3, 0, 6) / 6, SiLU x *
 * Sigmoid(x), GELU x * (1 + Erf(x / sqrt(2))) * 0.5. */
static void gen_written(Gen *g)
{
	int which = (int)pick(&g->h, 3);
	Shape s = rand_shape(g, (int32_t)range(&g->h, 1, 4), 9);
	say(g, "written-out %s:", which == 0 ? "HardSwish" : which == 1
							   ? "SiLU" : "GELU");
	ValId x = input(g, DT_FLOAT, s, float_mode(g)), y;
	if (which == 0) {
		ValId a = tu_out(node(g, "Add", L(x, scalar_f(g, 3)), 1), 0);
		ValId c = tu_out(node(g, "Clip", L(a, scalar_f(g, 0),
						     scalar_f(g, 6)), 1), 0);
		ValId m = tu_out(node(g, "Mul", L(x, c), 1), 0);
		y = tu_out(node(g, "Div", L(m, scalar_f(g, 6)), 1), 0);
	} else if (which == 1) {
		ValId sg = tu_out(node(g, "Sigmoid", L(x), 1), 0);
		y = tu_out(node(g, "Mul", L(x, sg), 1), 0);
	} else {
		ValId d = tu_out(node(g, "Div", L(x, scalar_f(g, 1.4142135f)),
				      1), 0);
		ValId e = tu_out(node(g, "Erf", L(d), 1), 0);
		ValId a = tu_out(node(g, "Add", L(e, scalar_f(g, 1)), 1), 0);
		ValId m = tu_out(node(g, "Mul", L(x, a), 1), 0);
		y = tu_out(node(g, "Mul", L(m, scalar_f(g, 0.5f)), 1), 0);
	}
	output(g, y, T_REL);
	int k = act_lookup(which == 0 ? "HardSwish" : which == 1 ? "Silu"
								  : "Gelu",
			   which == 0 ? 9 : 4);
	/* ovf: the written-out chain overflows where the one fp32 form
	 * does not (x * 6 of FLT_MAX) */
	rel_tol(g, 2 * act_info[k].rel + 4 * EPS, 2 * act_info[k].abs + 1e-45);
	g->fused = true;
}

typedef struct GenRow {
	const char *name;
	void (*fn)(Gen *g);
} GenRow;

static const GenRow gens[] = {
	{ "conv", gen_conv },	      { "chain", gen_chain },
	{ "deconv", gen_deconv },     { "matmul", gen_matmul },
	{ "gemm", gen_gemm },	      { "unary", gen_unary },
	{ "arith_f", gen_arith_f },   { "arith_i", gen_arith_i },
	{ "unary_i", gen_unary_i },   { "where", gen_where },
	{ "cast", gen_cast },	      { "transpose", gen_transpose },
	{ "gather", gen_gather },     { "move", gen_move },
	{ "reduce", gen_reduce },     { "softmax", gen_softmax },
	{ "layernorm", gen_layernorm }, { "pool", gen_pool },
	{ "resize", gen_resize },     { "rnn", gen_rnn },
	{ "qmatmul", gen_qmatmul },   { "qconv", gen_qconv },
	{ "qlinear", gen_qlinear },   { "qdq", gen_qdq },
	{ "dynq", gen_dynq },	      { "written", gen_written },
};

/* ---- magnitudes: the SUM class's bound ------------------------------------ */

/* Per value of the compiled graph: a bound S on each element's
 * magnitude built from finite inputs (the sum of |x||w| that makes it),
 * the reduction lengths summed along the way (K), the activations'
 * Lipschitz bound (L) and their own rounding (rel, abs); s NULL where
 * unknown (an op this does not follow). */
typedef struct Mag {
	double *s;
	/* NULL, or per element the largest sum before a scale below 1
	 * (Gemm's alpha: a float sum may overflow before it is scaled) */
	double *pre;
	int64_t n;
	double k, lip, rel, abs;
} Mag;

static double fin(double v) { return isfinite(v) ? fabs(v) : 0; }

/* |element i| of t, 0 if not finite (float dtypes; else 0). */
static double abs_at(const Tensor *t, int64_t i)
{
	return t->dtype == DT_FLOAT || t->dtype == DT_DOUBLE ||
			       t->dtype == DT_FLOAT16
		       ? fin(tensor_get_f64(t, i))
		       : 0;
}

static bool mag_of_tensor(Mag *m, const Tensor *t)
{
	m->n = shape_numel(&t->shape);
	m->s = xcalloc((size_t)m->n + 1, sizeof(double));
	for (int64_t i = 0; i < m->n; i++)
		m->s[i] = abs_at(t, i);
	m->k = 0, m->lip = 1, m->rel = 0, m->abs = 0;
	return true;
}

/* Sum of |x||w| over a convolution (or its transpose) of geometry cg:
 * added into y (zeroed, cout planes per image).  The spatial axes are
 * taken as three (missing ones of size 1); a convolution reads input
 * o * stride - pad + k * dilation for output o and tap k, a transposed
 * one writes output i * stride - pad + k * dilation from input i. */
static void abs_conv(const ConvGeom *cg, bool transpose, const double *x,
		     const double *w, double *y)
{
	int64_t in[3] = { 1, 1, 1 }, out[3] = { 1, 1, 1 }, ker[3] = { 1, 1, 1 };
	int64_t st[3] = { 1, 1, 1 }, dl[3] = { 1, 1, 1 }, pad[3] = { 0 };
	int off = 3 - cg->nsp;
	for (int a = 0; a < cg->nsp; a++) {
		in[off + a] = cg->in[a], out[off + a] = cg->out[a];
		ker[off + a] = cg->kernel[a], st[off + a] = cg->stride[a];
		dl[off + a] = cg->dilation[a], pad[off + a] = cg->pad[a];
	}
	/* the loops run over the "from" side: outputs of a convolution,
	 * inputs of a transposed one; "to" is the other */
	const int64_t *from = transpose ? in : out, *to = transpose ? out : in;
	int64_t cgi = cg->cin / cg->group, cgo = cg->cout / cg->group;
	int64_t isz = in[0] * in[1] * in[2], osz = out[0] * out[1] * out[2];
	int64_t ksz = ker[0] * ker[1] * ker[2];
	for (int64_t n = 0; n < cg->n; n++)
	for (int64_t gi = 0; gi < cg->group; gi++)
	for (int64_t oc = 0; oc < cgo; oc++)
	for (int64_t ic = 0; ic < cgi; ic++) {
		int64_t xc = gi * cgi + ic, yc = gi * cgo + oc;
		const double *xp = x + (n * cg->cin + xc) * isz;
		double *yp = y + (n * cg->cout + yc) * osz;
		for (int64_t k0 = 0; k0 < ker[0]; k0++)
		for (int64_t k1 = 0; k1 < ker[1]; k1++)
		for (int64_t k2 = 0; k2 < ker[2]; k2++) {
			int64_t kk = (k0 * ker[1] + k1) * ker[2] + k2;
			double wv = transpose ? w[(xc * cgo + oc) * ksz + kk]
					      : w[(yc * cgi + ic) * ksz + kk];
			for (int64_t f0 = 0; f0 < from[0]; f0++) {
				int64_t t0 = f0 * st[0] - pad[0] + k0 * dl[0];
				if (t0 < 0 || t0 >= to[0])
					continue;
				for (int64_t f1 = 0; f1 < from[1]; f1++) {
					int64_t t1 = f1 * st[1] - pad[1] +
						     k1 * dl[1];
					if (t1 < 0 || t1 >= to[1])
						continue;
					int64_t fr = (f0 * from[1] + f1) * from[2];
					int64_t tr = (t0 * to[1] + t1) * to[2];
					for (int64_t f2 = 0; f2 < from[2]; f2++) {
						int64_t t2 = f2 * st[2] - pad[2] +
							     k2 * dl[2];
						if (t2 < 0 || t2 >= to[2])
							continue;
						if (transpose)
							yp[tr + t2] += xp[fr + f2] * wv;
						else
							yp[fr + f2] += xp[tr + t2] * wv;
					}
				}
			}
		}
	}
}

/* Adds |b| (one per channel of cout, planes of osz) to y. */
static void add_bias(double *y, const Mag *b, int64_t n, int64_t c,
		     int64_t osz)
{
	for (int64_t i = 0; i < n * c * osz && b->n == c; i++)
		y[i] += b->s[i / osz % c];
}

/* Y += |Z| (Z of Y's shape, or one value, or broadcast over the last
 * axis). */
static void add_same(Mag *y, const Mag *z)
{
	for (int64_t i = 0; i < y->n && z->n > 0; i++)
		y->s[i] += z->s[z->n == y->n ? i : i % z->n];
	y->k = y->k > z->k ? y->k : z->k;
}

/* Sum of |a||b| of a MatMul with batch broadcasting: Y of shape ys. */
static void abs_matmul(const Shape *as, const Shape *bs, const Shape *ys,
		       const double *a, const double *b, double *y)
{
	int32_t r = ys->rank;
	if (r < 2 || as->rank < 2 || bs->rank < 2)
		return; /* a 1-D operand: r < 2 or its own case, below */
	int64_t m = ys->dims[r - 2], n = ys->dims[r - 1];
	int64_t k = as->dims[as->rank - 1], batches = 1;
	for (int32_t i = 0; i < r - 2; i++)
		batches *= ys->dims[i];
	for (int64_t bi = 0; bi < batches; bi++) {
		int64_t ao = 0, bo = 0, rest = bi, sa = 1, sb = 1;
		for (int32_t i = r - 3; i >= 0; i--) {
			int64_t yi = rest % ys->dims[i];
			rest /= ys->dims[i];
			int32_t ia = i - (r - as->rank), ib = i - (r - bs->rank);
			if (ia >= 0) {
				ao += (as->dims[ia] == 1 ? 0 : yi) * sa;
				sa *= as->dims[ia];
			}
			if (ib >= 0) {
				bo += (bs->dims[ib] == 1 ? 0 : yi) * sb;
				sb *= bs->dims[ib];
			}
		}
		const double *ab = a + ao * m * k, *bb = b + bo * k * n;
		double *yb = y + bi * m * n;
		for (int64_t i = 0; i < m; i++)
			for (int64_t l = 0; l < k; l++)
				for (int64_t j = 0; j < n; j++)
					yb[i * n + j] += ab[i * k + l] *
							 bb[l * n + j];
	}
}

/* The activations list of a fused op or FusedActivation (or the op of
 * an activation node) applied to m's bound. */
static void mag_act(Mag *m, int kind, float a)
{
	double lip = 1, bound = 0;
	switch (kind) {
	case ACT_LeakyRelu: lip = fabs(a) > 1 ? fabs(a) : 1; break;
	case ACT_HardSwish: lip = 1.5; break;
	case ACT_Sigmoid: case ACT_HardSigmoid: case ACT_Tanh:
		bound = 1;
		break;
	case ACT_Clip: bound = 8; break; /* the generator's bounds */
	default: break;
	}
	if (kind == ACT_HardSigmoid)
		lip = 0.2;
	m->lip *= lip;
	for (int64_t i = 0; i < m->n; i++)
		m->s[i] += bound;
	if (kind >= 0) {
		m->rel += 2 * act_info[kind].rel;
		m->abs += 2 * act_info[kind].abs;
	}
}

static void mag_acts(Mag *m, const Node *n)
{
	const Attr *as = node_attr(n, FUSED_ACTS_ATTR);
	const Attr *ps = node_attr(n, FUSED_ACT_PARAMS_ATTR);
	for (int32_t i = 0; as && as->type == ATTR_STRINGS && i < as->n; i++)
		mag_act(m, act_lookup((const char *)as->strings[i].data,
				      as->strings[i].len),
			ps && ps->n > 2 * i ? ps->floats[2 * i] : 0);
}

/* Output 0 of node n from its inputs' bounds (mags by value): false if
 * n is no op followed here. */
static bool mag_node(Model *md, Graph *gr, Node *n, Mag *mags)
{
	Mag *in[4] = { NULL };
	for (int32_t i = 0; i < n->ninputs && i < 4; i++)
		in[i] = n->inputs[i] >= 0 && mags[n->inputs[i]].s
				? &mags[n->inputs[i]]
				: NULL;
	Mag *y = &mags[n->outputs[0]];
	const Value *yv = &gr->vals[n->outputs[0]];
	if (!in[0] || !shape_is_static(&yv->shape))
		return false;
	y->n = shape_numel(&yv->shape);
	int op = n->op;
	int act = -1;
	for (int k = 0; k < ACT_COUNT; k++)
		if (act_info[k].op && act_info[k].op == op)
			act = k;
	if (act >= 0 || op == OP_FusedActivation) {
		if (y->n != in[0]->n)
			return false;
		y->s = xmalloc(((size_t)y->n + 1) * sizeof(double));
		memcpy(y->s, in[0]->s, (size_t)y->n * sizeof(double));
		if (in[0]->pre) {
			y->pre = xmalloc(((size_t)y->n + 1) * sizeof(double));
			memcpy(y->pre, in[0]->pre,
			       (size_t)y->n * sizeof(double));
		}
		y->k = in[0]->k, y->lip = in[0]->lip;
		y->rel = in[0]->rel, y->abs = in[0]->abs;
		if (op == OP_FusedActivation)
			mag_acts(y, n);
		else
			mag_act(y, act, attr_float(n, "alpha", 0.01f));
		return true;
	}
	bool conv = op == OP_Conv || op == OP_FusedConv,
	     convt = op == OP_ConvTranspose;
	bool mm = op == OP_MatMul || op == OP_FusedMatMul;
	bool gemm = op == OP_Gemm || op == OP_FusedGemm;
	if (!(conv || convt || mm || gemm) || !in[1])
		return false;
	y->s = xcalloc((size_t)y->n + 1, sizeof(double));
	y->lip = in[0]->lip > in[1]->lip ? in[0]->lip : in[1]->lip;
	y->rel = in[0]->rel + in[1]->rel, y->abs = in[0]->abs + in[1]->abs;
	double red = 0;
	if (conv || convt) {
		OpCtx c = { .model = md, .g = gr, .n = n,
			    .opset = model_opset(md), .fold_limit = INT64_MAX };
		ConvGeom cg;
		if (nn_conv_geom(&c, 0, 1, convt, &cg) < 0 || cg.group < 1 ||
		    cg.cin % cg.group || cg.cout % cg.group) {
			clear_error();
			return false;
		}
		abs_conv(&cg, convt, in[0]->s, in[1]->s, y->s);
		red = (double)(convt ? cg.cout : cg.cin) / (double)cg.group;
		int64_t osz = 1;
		for (int a = 0; a < cg.nsp; a++)
			red *= (double)cg.kernel[a], osz *= cg.out[a];
		if (in[2])
			add_bias(y->s, in[2], cg.n, cg.cout, osz);
		if (op == OP_FusedConv && in[3])
			add_same(y, in[3]);
	} else if (mm) {
		/* a 1-D A is [1,K] and a 1-D B [K,1], their 1 in Y too
		 * (the same elements in the same order) */
		Shape as = gr->vals[n->inputs[0]].shape,
		      bs = gr->vals[n->inputs[1]].shape, ys = yv->shape;
		if (as.rank < 1 || bs.rank < 1)
			return false;
		if (as.rank == 1) {
			as = SHAPE(1, as.dims[0]);
			if (bs.rank == 1) {
				ys.dims[ys.rank++] = 1;
			} else {
				ys.dims[ys.rank] = ys.dims[ys.rank - 1];
				ys.dims[ys.rank++ - 1] = 1;
			}
		}
		if (bs.rank == 1) {
			bs = SHAPE(bs.dims[0], 1);
			ys.dims[ys.rank++] = 1;
		}
		abs_matmul(&as, &bs, &ys, in[0]->s, in[1]->s, y->s);
		red = (double)as.dims[as.rank - 1];
		if (op == OP_FusedMatMul && in[2])
			add_same(y, in[2]);
	} else {
		const Shape *as = &gr->vals[n->inputs[0]].shape;
		bool ta = attr_int(n, "transA", 0), tb = attr_int(n, "transB", 0);
		double alpha = fabs(attr_float(n, "alpha", 1));
		double beta = fabs(attr_float(n, "beta", 1));
		int64_t m = yv->shape.dims[0], nn = yv->shape.dims[1];
		int64_t k = as->dims[ta ? 0 : 1];
		for (int64_t i = 0; i < m; i++)
			for (int64_t l = 0; l < k; l++)
				for (int64_t j = 0; j < nn; j++)
					y->s[i * nn + j] +=
						in[0]->s[ta ? l * m + i : i * k + l] *
						in[1]->s[tb ? j * k + l : l * nn + j];
		if (alpha < 1) { /* the sum may overflow before alpha */
			y->pre = xmalloc(((size_t)y->n + 1) * sizeof(double));
			memcpy(y->pre, y->s, (size_t)y->n * sizeof(double));
		}
		for (int64_t i = 0; i < y->n; i++)
			y->s[i] *= alpha;
		red = (double)k;
		if (in[2] && beta > 0) {
			const Shape *cs = &gr->vals[n->inputs[2]].shape;
			int64_t cr = cs->rank >= 2 ? cs->dims[0] : 1;
			int64_t cc = cs->rank >= 1 ? cs->dims[cs->rank - 1] : 1;
			for (int64_t i = 0; i < m; i++)
				for (int64_t j = 0; j < nn; j++)
					y->s[i * nn + j] +=
						beta * in[2]->s[(cr == 1 ? 0 : i) * cc +
								(cc == 1 ? 0 : j)];
			y->k = in[2]->k;
		}
	}
	y->k = (y->k > in[0]->k ? y->k : in[0]->k) + red + 2;
	mag_acts(y, n);
	return true;
}

/* Bounds of every value of the compiled graph gr (m's main graph), the
 * inputs' values from g: mags[v] per value (s NULL where unknown). */
static Mag *mag_graph(const Gen *g, Model *md, Graph *gr)
{
	Mag *mags = xcalloc((size_t)gr->nvals + 1, sizeof(Mag));
	for (ValId v = 0; v < gr->nvals; v++) {
		const Value *val = &gr->vals[v];
		if (val->kind == VAL_WEIGHT && val->konst)
			mag_of_tensor(&mags[v], val->konst);
		for (int i = 0; i < g->nin && val->kind == VAL_INPUT; i++)
			if (!strcmp(g->in[i].name, val->name)) {
				Tensor t = { .dtype = g->in[i].dtype,
					     .shape = g->in[i].shape,
					     .data = g->in[i].data,
					     .nbytes = g->in[i].bytes };
				mag_of_tensor(&mags[v], &t);
			}
	}
	for (int32_t i = 0; i < gr->nnodes; i++) {
		Node *n = &gr->nodes[i];
		if (n->noutputs >= 1 && n->outputs[0] >= 0 &&
		    !mag_node(md, gr, n, mags)) {
			Mag *y = &mags[n->outputs[0]];
			free(y->s), free(y->pre);
			y->s = y->pre = NULL;
		}
	}
	return mags;
}

static void mags_free(Mag *mags, int32_t n)
{
	for (int32_t v = 0; mags && v < n; v++)
		free(mags[v].s), free(mags[v].pre);
	free(mags);
}

/* ---- the four runs ------------------------------------------------------------ */

typedef struct Run {
	const char *what; /* "ref x1", "fast x1", ... */
	bool ran;
	gearrt_status st;
	char msg[512];
	size_t nout;
	gearrt_tensor out[MAX_OUT]; /* data: malloc'd copies */
	char kernels[1024];	    /* op=kernel per task, "/2": on 2 threads */
	bool wino;		    /* a task ran chan.wino */
} Run;

static const Gen *cur; /* the model being checked, for the report */
static Run *cur_runs;

static void run_free(Run *r)
{
	for (size_t k = 0; k < r->nout; k++)
		free(r->out[k].data);
	r->nout = 0;
}

/* Prints the model, the runs and what differs, and aborts. */
static NORETURN void finding(const char *fmt, ...) PRINTF_LIKE(1, 2);

static NORETURN void finding(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "\n==== fuzz_diff: FINDING: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n---- model (opset %lld%s):\n%s\n",
		(long long)(cur ? model_opset(cur->m) : 0),
		cur && cur->keep_fp16 ? ", --keep-fp16" : "",
		cur ? cur->desc : "?");
	for (int i = 0; cur_runs && i < 5; i++)
		if (cur_runs[i].ran)
			fprintf(stderr, "---- %s: %s%s\n", cur_runs[i].what,
				cur_runs[i].st == GEARRT_OK ? "ok" : "failed: ",
				cur_runs[i].st == GEARRT_OK ? "" : cur_runs[i].msg);
	if (cur_runs)
		fprintf(stderr, "---- kernels (fast x2; /2: on 2 threads): %s\n",
			cur_runs[2].kernels);
	fprintf(stderr, "---- replay with FUZZ_DIFF_DUMP=DIR to write the "
			"model, its inputs and the gearc commands\n");
	abort();
}

static void check_message(const char *what, const char *e)
{
	if (!*e || strchr(e, '\n'))
		finding("%s: bad error message: '%s'", what, e);
}

/* The kernels p's tasks ran, as op=kernel. */
static void note_kernels(gearrt_session *s, Run *r)
{
	RunCtx *c = rt_session_ctx(s); /* this thread's: the run's */
	Prepared *p = c && c->prep && c->model->ngears == 0 ? c->prep[0]
							    : NULL;
	size_t at = 0;
	r->kernels[0] = 0;
	for (int32_t i = 0; p && i < p->ntasks; i++) {
		const Task *t = &p->tasks[i];
		const char *k = rt_kernel_name(t);
		r->wino |= !strncmp(k, "chan.wino", 9); /* .avx512 ... */
		int n = snprintf(r->kernels + at, sizeof(r->kernels) - at,
				 "%s%s=%s%s", i ? " " : "", t->n->op_type, k,
				 rt_fast(t) && t->fast.threads > 1 ? "/2" : "");
		at += n > 0 && (size_t)n < sizeof(r->kernels) - at ? (size_t)n
								 : 0;
	}
}

/* A buffer (its allocation in *own) holding bytes of src (or zeros),
 * one element of dtype past a 64-byte boundary. */
static void *offset_copy(void **own, const void *src, size_t bytes,
			 int dtype)
{
	size_t es = gearrt_dtype_size(dtype);
	uint8_t *b = aligned_alloc(64, (bytes + es + 63) / 64 * 64 + 64);
	if (!b)
		abort();
	memset(b, 0, es + bytes);
	if (src)
		memcpy(b + es, src, bytes);
	*own = b;
	return b + es;
}

static void run_model(gearrt_model *md, const Gen *g, bool no_fast,
		      int threads, Run *r)
{
	gearrt_options o = { .threads = threads, .no_fast = no_fast };
	gearrt_session *s;
	static uint8_t empty[8];
	void *bufs[MAX_IN + MAX_OUT];
	int nbufs = 0;
	if (gearrt_session_create(md, &o, &s) != GEARRT_OK)
		finding("%s: gearrt_session_create: %s", r->what,
			gearrt_last_error());
	size_t nin = gearrt_input_count(md);
	gearrt_tensor in[MAX_IN];
	if (nin > MAX_IN)
		finding("%zu inputs, %d built", nin, g->nin);
	for (size_t i = 0; i < nin; i++) {
		gearrt_input_info(md, i, &in[i]);
		const In *x = NULL;
		for (int j = 0; j < g->nin; j++)
			if (!strcmp(g->in[j].name, in[i].name))
				x = &g->in[j];
		if (!x)
			finding("input '%s' is none built", in[i].name);
		in[i].dtype = x->dtype;
		in[i].rank = x->shape.rank;
		memcpy(in[i].dims, x->shape.dims,
		       (size_t)x->shape.rank * sizeof(int64_t));
		in[i].data = x->bytes ? x->data : empty;
		in[i].size = x->bytes;
		if (g->offset_bufs)
			in[i].data = offset_copy(&bufs[nbufs++], in[i].data,
						 in[i].size, x->dtype);
	}
	gearrt_tensor out[MAX_OUT];
	memset(out, 0, sizeof(out));
	r->nout = gearrt_output_count(md);
	if (r->nout > MAX_OUT)
		r->nout = MAX_OUT;
	for (size_t k = 0; g->offset_bufs && k < r->nout; k++) {
		gearrt_output_info(md, k, &out[k]); /* static: exact dims */
		size_t n = gearrt_dtype_size(out[k].dtype);
		for (int32_t d = 0; d < out[k].rank; d++)
			n *= (size_t)out[k].dims[d];
		out[k].data = offset_copy(&bufs[nbufs++], NULL, n,
					  out[k].dtype);
		out[k].size = n;
	}
	r->st = gearrt_run(s, in, nin, out, r->nout);
	r->ran = true;
	if (r->st != GEARRT_OK) {
		snprintf(r->msg, sizeof(r->msg), "%s", gearrt_last_error());
		check_message(r->what, gearrt_last_error());
		r->nout = 0;
	}
	for (size_t k = 0; k < r->nout; k++) {
		r->out[k] = out[k];
		r->out[k].data = xmalloc(out[k].size + 1);
		memcpy(r->out[k].data, out[k].data, out[k].size);
	}
	note_kernels(s, r);
	gearrt_session_destroy(s);
	while (nbufs)
		free(bufs[--nbufs]);
}

/* ---- comparing ----------------------------------------------------------------- */

/* Element i of t as a double (an integer of 64 bits rounded). */
static double elem(const gearrt_tensor *t, size_t i)
{
	Tensor x = { .dtype = t->dtype, .data = t->data, .nbytes = t->size };
	return tensor_get_f64(&x, (int64_t)i);
}

static size_t numel(const gearrt_tensor *t)
{
	size_t es = gearrt_dtype_size(t->dtype);
	return es ? t->size / es : 0;
}

static const char *index_s(const gearrt_tensor *t, size_t i)
{
	static char buf[160];
	size_t at = 0;
	int64_t idx[GEARRT_MAX_RANK];
	for (int32_t a = t->rank - 1; a >= 0; a--) {
		idx[a] = t->dims[a] ? (int64_t)i % t->dims[a] : 0;
		i = t->dims[a] ? i / (size_t)t->dims[a] : 0;
	}
	buf[at++] = '[';
	for (int32_t a = 0; a < t->rank && at < sizeof(buf) - 24; a++)
		at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%lld",
				       a ? "," : "", (long long)idx[a]);
	snprintf(buf + at, sizeof(buf) - at, "]");
	return buf;
}

/* The bits of element i of t, as hex. */
static const char *bits_s(const gearrt_tensor *t, size_t i)
{
	static char buf[2][40];
	static int k;
	char *b = buf[k++ & 1];
	size_t es = gearrt_dtype_size(t->dtype);
	uint64_t v = 0;
	memcpy(&v, (const uint8_t *)t->data + i * es, es < 8 ? es : 8);
	snprintf(b, 40, "0x%0*llx", (int)(2 * es), (unsigned long long)v);
	return b;
}

static void differ(const Run *a, const Run *b, size_t k, size_t i,
		   const char *why)
{
	const gearrt_tensor *x = &a->out[k], *y = &b->out[k];
	finding("output %zu (%s) element %zu %s: %s gives %.9g (%s), %s %.9g "
		"(%s)%s%s", k, cur->out[k].name, i,
		index_s(x, i), a->what, elem(x, i), bits_s(x, i), b->what,
		elem(y, i), bits_s(y, i), why[0] ? ": " : "", why);
}

static void same_bytes(const Run *a, const Run *b)
{
	for (size_t k = 0; k < a->nout; k++) {
		const gearrt_tensor *x = &a->out[k], *y = &b->out[k];
		if (!memcmp(x->data, y->data, x->size))
			continue;
		size_t es = gearrt_dtype_size(x->dtype), i = 0;
		while (i + 1 < numel(x) &&
		       !memcmp((uint8_t *)x->data + i * es,
			       (uint8_t *)y->data + i * es, es))
			i++;
		differ(a, b, k, i, "not the same bytes");
	}
}

/* max |x| over input 0's finite values */
static double max_abs_in0(const Gen *g)
{
	double m = 0;
	Tensor t = { .dtype = g->in[0].dtype, .shape = g->in[0].shape,
		     .data = g->in[0].data, .nbytes = g->in[0].bytes };
	if (!g->nin || !is_float(t.dtype))
		return 0;
	for (int64_t i = 0; i < shape_numel(&t.shape); i++)
		m = fmax(m, abs_at(&t, i));
	return m;
}

/* A linear or cubic Resize's output i reads a non-finite input: its
 * source coordinate, within 3, per axis (any coordinate mode). */
static bool resize_taps_nonfinite(const Gen *g, const gearrt_tensor *y,
				  size_t i)
{
	const In *x = &g->in[0];
	int32_t r = x->shape.rank;
	int64_t lo[MAX_RANK], hi[MAX_RANK];
	for (int32_t a = r - 1; a >= 0; a--) {
		int64_t o = (int64_t)(i % (size_t)y->dims[a]);
		i /= (size_t)y->dims[a];
		double c = ((double)o + 0.5) * (double)x->shape.dims[a] /
				   (double)y->dims[a] - 0.5;
		lo[a] = (int64_t)floor(c) - 3, hi[a] = (int64_t)floor(c) + 4;
		lo[a] = lo[a] < 0 ? 0 : lo[a];
		hi[a] = hi[a] >= x->shape.dims[a] ? x->shape.dims[a] - 1
						    : hi[a];
	}
	int64_t at[MAX_RANK];
	memcpy(at, lo, sizeof(at));
	for (;;) {
		int64_t off = 0;
		bool empty = false;
		for (int32_t a = 0; a < r; a++) {
			empty |= lo[a] > hi[a];
			off = off * x->shape.dims[a] + at[a];
		}
		if (empty)
			return false;
		if (!isfinite(((const float *)x->data)[off]))
			return true;
		int32_t a = r - 1;
		while (a >= 0 && ++at[a] > hi[a])
			at[a] = lo[a], a--;
		if (a < 0)
			return false;
	}
}

/* |x_i - max of its row| of a Softmax's input: exp's argument, which
 * the fast path rounds in float (a relative error of that many eps). */
static double softmax_arg(const Gen *g, const OutSpec *o, size_t i)
{
	const float *x = g->in[0].data;
	size_t row = i / (size_t)o->rowlen * (size_t)o->rowlen;
	float m = x[row];
	for (int64_t j = 0; j < o->rowlen; j++)
		m = x[row + (size_t)j] > m ? x[row + (size_t)j] : m;
	return isfinite(m) ? fabs((double)x[i] - m) : 0;
}

/* LayerNormalization's tolerance for output i (T_NORM, header). */
static double norm_tol(const Gen *g, size_t i, double ref)
{
	const In *x = &g->in[0];
	const float *xd = x->data;
	int64_t cols = 1;
	for (int32_t a = (int32_t)g->norm_axis; a < x->shape.rank; a++)
		cols *= x->shape.dims[a];
	const float *row = xd + i / (size_t)cols * (size_t)cols;
	size_t j = i % (size_t)cols;
	double sum = 0, var = 0, A = 0;
	for (int64_t c = 0; c < cols; c++)
		sum += row[c], A = fmax(A, fabs(row[c]));
	double m = sum / (double)cols;
	for (int64_t c = 0; c < cols; c++)
		var += (row[c] - m) * (row[c] - m);
	if (skip(13) && A > 1e18)
		return INFINITY; /* defect 13 */
	double inv = 1 / sqrt(var / (double)cols + g->norm_eps);
	double w = fabs(g->norm_w[j]), b = g->norm_b ? fabs(g->norm_b[j]) : 0;
	return 8 * (double)cols * EPS * w * inv * A *
		       (1 + 2 * fabs(row[j] - m) * A * inv * inv) +
	       4 * EPS * (fabs(ref) + b) + 1e-37;
}

/* Output k of a and b: integers at most slack apart. */
static void close_ints(const Run *a, const Run *b, size_t k, double slack)
{
	for (size_t i = 0; i < numel(&a->out[k]); i++)
		if (!(fabs(elem(&a->out[k], i) - elem(&b->out[k], i)) <= slack))
			differ(a, b, k, i, "more than a step apart");
}

/* Fast (a) against the reference (b), output k, by its class. */
static void compare_values(const Run *a, const Run *b, size_t k,
			   const Mag *mag)
{
	const OutSpec *o = &cur->out[k];
	const gearrt_tensor *x = &a->out[k], *y = &b->out[k];
	size_t n = numel(x), es = gearrt_dtype_size(x->dtype);
	if (!is_float(x->dtype) && cur->qdq && !strstr(a->kernels, "QLinear")) {
		/* a float Conv or MatMul quantized */
		close_ints(a, b, k, cur->qdq_slack);
		return;
	}
	if (!is_float(x->dtype)) {
		same_bytes(a, b);
		return;
	}
	if (skip(8) && a->wino && cur->huge_in)
		return; /* defect 8 */
	/* chan.wino's contract: within 1e-5 of the convolution's largest
	 * output, which an activation after it may hide: its bound's */
	double maxx = o->absx ? max_abs_in0(cur) : 0, maxr = 0;
	for (size_t i = 0; i < n && a->wino; i++) {
		if (isfinite(elem(y, i)))
			maxr = fmax(maxr, fabs(elem(y, i)));
		if (mag && mag->s && mag->s[i] * mag->lip <= FLT_MAX / 4)
			maxr = fmax(maxr, mag->s[i] * mag->lip);
	}
	for (size_t i = 0; i < n; i++) {
		double f = elem(x, i), r = elem(y, i), tol = 0;
		if (skip(7) && cur->relu && isnan(r) && f == 0)
			continue; /* defect 7 */
		if (skip(15) && cur->clip && isnan(r) && isfinite(f))
			continue; /* defect 15 */
		if (skip(19) && cur->relu && isnan(f) && r == 0)
			continue; /* defect 19 */
		if (skip(9) && cur->maxpool && r == -INFINITY &&
		    f == -FLT_MAX)
			continue; /* defect 9 */
		if (skip(21) && cur->maxpool && r == 0 && f == -FLT_MAX)
			continue; /* defect 21 */
		if (o->tol == T_SUM && mag && mag->s) {
			double s = mag->s[i] * mag->lip;
			/* s before a contracting activation's lip too: the
			 * sum under it may overflow (HardSigmoid of a window
			 * of -Inf and FLT_MAX: NaN or -Inf by the order) */
			if (s > FLT_MAX / 4 || mag->s[i] > FLT_MAX / 4 ||
			    (mag->pre && mag->pre[i] > FLT_MAX / 4))
				continue; /* may overflow in float */
			/* + two of the smallest denormal's steps: a sum
			 * that ends below FLT_MIN rounds by that much, not
			 * by a relative amount (a Gemm's alpha A B + beta C
			 * came out a step apart at -1.9e-40) */
			tol = 4 * EPS * mag->k * s + mag->rel * fabs(r) +
			      mag->abs + 2 * (double)FLT_TRUE_MIN;
			if (a->wino)
				tol += 1e-5 * maxr;
		} else if (o->tol == T_SUM) {
			tol = 1e-4 * (1 + fabs(r)); /* unknown: loose */
		} else if (o->tol == T_REL) {
			tol = o->rel * fabs(r) + o->abs * (o->absx ? maxx : 1);
			if (o->rowlen && r != 0)
				tol += 2 * EPS * fabs(r) * softmax_arg(cur, o, i);
		} else if (o->tol == T_NORM) {
			tol = norm_tol(cur, i, r);
		}
		if (tol == INFINITY)
			continue; /* not compared */
		bool fin = isfinite(f) && isfinite(r);
		if (!fin && o->tol == T_REL && o->ovf &&
		    (isfinite(f) || isfinite(r) || isnan(f) != isnan(r)))
			continue; /* float sums of huge values */
		if (!fin && o->resize && resize_taps_nonfinite(cur, x, i))
			continue; /* 0 x Inf where a tap weighs 0 */
		if (isnan(f) || isnan(r)) {
			if (isnan(f) != isnan(r))
				differ(a, b, k, i, "NaN on one side");
			continue;
		}
		if (!fin) {
			if (f != r)
				differ(a, b, k, i, "an infinity differs");
			continue;
		}
		if (o->tol == T_BITS || o->tol == T_BYTES) {
			if (skip(17) && cur->relu && f == 0 && r == 0)
				continue; /* defect 17 */
			if (memcmp((uint8_t *)x->data + i * es,
				   (uint8_t *)y->data + i * es, es))
				differ(a, b, k, i, "not the same bits");
		} else if (o->tol == T_EXACT) {
			if (f != r)
				differ(a, b, k, i, "not the same value");
		} else if (!(fabs(f - r) <= tol)) {
			char why[80];
			snprintf(why, sizeof(why), "|difference| %.3g > "
				 "tolerance %.3g (%s)", fabs(f - r), tol,
				 tol_name[o->tol]);
			differ(a, b, k, i, why);
		}
	}
}

static bool same_meta(const gearrt_tensor *x, const gearrt_tensor *y)
{
	return x->dtype == y->dtype && x->rank == y->rank &&
	       x->size == y->size &&
	       !memcmp(x->dims, y->dims, (size_t)x->rank * sizeof(int64_t));
}

/* The verdicts of the header on the four runs ref1, fast1, fast2, ref2
 * (r[0..3]). */
static void judge(Run *r, Model *md)
{
	int ok = 0;
	for (int i = 0; i < 4; i++)
		ok += r[i].st == GEARRT_OK;
	if (ok == 0)
		return; /* an invalid model, each saying why */
	if (ok < 4)
		finding("a run fails on some paths only");
	for (int i = 1; i < 4; i++) {
		if (r[i].nout != r[0].nout)
			finding("%s: %zu outputs, %s %zu", r[i].what, r[i].nout,
				r[0].what, r[0].nout);
		for (size_t k = 0; k < r[0].nout; k++)
			if (!same_meta(&r[i].out[k], &r[0].out[k]))
				finding("output %zu: %s gives %s %s (%zu bytes), "
					"%s %s %s", k, r[i].what,
					gearrt_dtype_name(r[i].out[k].dtype),
					index_s(&r[i].out[k], 0),
					r[i].out[k].size, r[0].what,
					gearrt_dtype_name(r[0].out[k].dtype),
					index_s(&r[0].out[k], 0));
	}
	/* determinism; defect 22: oneDNN's convolutions and sgemm at 2
	 * threads are held to the reference's tolerance instead */
	bool threads_differ = skip(22) &&
			      (strstr(r[2].kernels, "dnnl.conv") ||
			       strstr(r[2].kernels, "gemm:jit"));
	if (!threads_differ)
		same_bytes(&r[2], &r[1]);
	same_bytes(&r[3], &r[0]);
	Mag *mags = NULL;
	Graph *gr = md->graph;
	for (size_t k = 0; k < r[0].nout && (int)k < cur->nout; k++) {
		const Mag *mag = NULL;
		if (cur->out[k].tol == T_SUM) {
			if (!mags)
				mags = mag_graph(cur, md, gr);
			int32_t v = rt_graph_output(gr, cur->out[k].name);
			mag = v >= 0 ? &mags[gr->outputs[v]] : NULL;
		}
		compare_values(&r[1], &r[0], k, mag);
		if (threads_differ)
			compare_values(&r[2], &r[0], k, mag);
	}
	mags_free(mags, gr->nvals);
}

/* What the ONNX importer does to a bool initializer (compiler/onnx.c):
 * any byte but 0 is true, stored as 1.  The models here are built as
 * IR, not imported; the bool inputs keep every byte (the runtime's
 * part). */
static void import_bools(Graph *g)
{
	for (ValId v = 0; v < g->nvals; v++) {
		Tensor *t = (Tensor *)g->vals[v].konst;
		if (!t || t->dtype != DT_BOOL)
			continue;
		uint8_t *b = (uint8_t *)t->data;
		for (size_t i = 0; i < t->nbytes; i++)
			b[i] = b[i] != 0;
	}
}

static void build(Gen *g, const uint8_t *data, size_t size);
static char om_path[64], om_unfused[72];

static double ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* The model compiled without the fuse and qdq passes (--no-fuse), run
 * by the reference at 1 thread (un), against the fused model's (ref):
 * the fusions' contract.  A QDQ group's output may be one step off (the
 * integer sum requantized once, passes/qfuse.c). */
static void check_unfused(const uint8_t *data, size_t size, Run *r,
			  Model *fused)
{
	static Gen u;
	build(&u, data, size);
	PassOptions o = { .jobs = 1, .keep_fp16 = u.keep_fp16, .no_fuse = 1 };
	gearrt_model *md;
	Run *un = &r[4];
	clear_error();
	import_bools(u.g);
	if (graph_toposort(u.g) < 0 || run_passes(u.m, &o) < 0 ||
	    om_write(u.m, om_unfused) < 0 ||
	    gearrt_model_open(om_unfused, &md) != GEARRT_OK)
		finding("the model compiles, but not with --no-fuse: %s",
			last_error()[0] ? last_error() : gearrt_last_error());
	run_model(md, &u, true, 1, un);
	gearrt_model_close(md);
	model_free(u.m);
	if (un->st != GEARRT_OK)
		finding("the reference fails on the model compiled with "
			"--no-fuse only: %s", un->msg);
	if (un->nout != r[0].nout)
		finding("--no-fuse: %zu outputs, fused %zu", un->nout, r[0].nout);
	for (size_t k = 0; k < un->nout; k++)
		if (!same_meta(&un->out[k], &r[0].out[k]))
			finding("output %zu: --no-fuse gives %s %s, fused %s %s",
				k, gearrt_dtype_name(un->out[k].dtype),
				index_s(&un->out[k], 0),
				gearrt_dtype_name(r[0].out[k].dtype),
				index_s(&r[0].out[k], 0));
	Mag *mags = mag_graph(cur, fused, fused->graph);
	for (size_t k = 0; k < un->nout && (int)k < cur->nout; k++) {
		int32_t v = rt_graph_output(fused->graph, cur->out[k].name);
		if (cur->qdq && !is_float(un->out[k].dtype))
			close_ints(un, &r[0], k, cur->qdq_slack);
		else
			compare_values(un, &r[0], k,
				       v >= 0 ? &mags[fused->graph->outputs[v]]
					      : NULL);
	}
	mags_free(mags, fused->graph->nvals);
}

/* ---- the model of an input ------------------------------------------------------ */

static void build(Gen *g, const uint8_t *data, size_t size)
{
	memset(g, 0, sizeof(*g));
	uint64_t seed = hash_bytes(data, size, 0x9e3779b97f4a7c15ull) | 1;
	g->h = (Rd){ .p = data, .n = size, .x = seed };
	g->d = (Rd){ .p = data, .n = size, .back = true,
		     .x = seed ^ 0x5851f42d4c957f2dull };
	g->m = tu_model(13);
	g->m->ir_version = 8;
	g->m->path = "fuzz_diff";
	g->g = g->m->graph;
	const GenRow *row = &gens[byte(&g->h) % countof(gens)];
	g->empties = chance(&g->h, 32);
	row->fn(g);
	g->offset_bufs = chance(&g->h, 64);
	if (g->offset_bufs)
		say(g, "\n  (inputs and outputs in the caller's buffers, one "
		       "element past 64-byte alignment)");
	if (model_opset(g->m) >= 19)
		g->m->ir_version = 9;
	/* the outputs' dtypes known, as an ONNX file declares them (the
	 * widen-fp16 pass keeps a float16 output float16); a model it
	 * refuses fails to compile below */
	clear_error();
	if (graph_toposort(g->g) == 0)
		infer_graph(g->m, g->g);
}

/* FUZZ_DIFF_DUMP: the model as ONNX, its inputs as .npy, the commands. */
static void dump(const Gen *g, const char *dir)
{
	char path[4096];
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr, "fuzz_diff: cannot make %s: %s\n", dir,
			strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	OnnxExport x = { .doc = g->desc };
	if (onnx_write(g->m, g->g, &x, path) < 0)
		fprintf(stderr, "fuzz_diff: %s\n", last_error());
	char ins[2048] = "";
	size_t at = 0;
	for (int i = 0; i < g->nin; i++) {
		snprintf(path, sizeof(path), "%s/%s.npy", dir, g->in[i].name);
		if (npy_write(path, g->in[i].dtype, &g->in[i].shape,
			      g->in[i].data) < 0)
			fprintf(stderr, "fuzz_diff: %s\n", last_error());
		int n = snprintf(ins + at, sizeof(ins) - at,
				 " --input %s=%s/%s.npy", g->in[i].name, dir,
				 g->in[i].name);
		at += n > 0 && (size_t)n < sizeof(ins) - at ? (size_t)n : 0;
	}
	snprintf(path, sizeof(path), "%s/run.sh", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "#!/bin/sh\n# fuzz_diff's model (opset %lld):\n# ",
		(long long)model_opset(g->m));
	for (const char *c = g->desc; *c; c++)
		fprintf(f, *c == '\n' ? "\n# " : "%c", *c);
	fprintf(f, "\nset -e\nG=${GEARC:-build/gearc}\n"
		"$G --model=%s/model.onnx --output=%s/m -q%s\n"
		"$G run %s/m.om%s -o %s/out_fast -q\n"
		"$G run %s/m.om%s -o %s/out_fast2 -q --threads=2\n"
		"GEARRT_NO_FAST=1 $G run %s/m.om%s -o %s/out_ref -q\n",
		dir, dir, g->keep_fp16 ? " --keep-fp16" : "", dir, ins, dir,
		dir, ins, dir, dir, ins, dir);
	fclose(f);
	chmod(path, 0755);
}

static void remove_om(void)
{
	unlink(om_path);
	unlink(om_unfused);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

/* FUZZ_DIFF_SEEDS=DIR: the seed corpus, 4 inputs per generator. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	read_skip();
	rt_gear_serial = 0; /* small graphs' kernels at 2 threads too */
	snprintf(om_path, sizeof(om_path), "/tmp/fuzz_diff.%ld.om",
		 (long)getpid());
	snprintf(om_unfused, sizeof(om_unfused), "/tmp/fuzz_diff.%ld.nofuse.om",
		 (long)getpid());
	atexit(remove_om);
	const char *dir = getenv("FUZZ_DIFF_SEEDS");
	if (!dir)
		return 0;
	for (size_t i = 0; i < countof(gens); i++)
		for (uint32_t j = 0; j < 4; j++) {
			uint8_t b[64];
			uint32_t x = (uint32_t)(i * 4 + j) * 2654435761u + 1;
			b[0] = (uint8_t)i;
			for (size_t k = 1; k < sizeof(b); k++) {
				x = x * 1664525u + 1013904223u;
				b[k] = (uint8_t)(x >> 24);
			}
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s-%u", dir,
				 gens[i].name, j);
			FILE *f = fopen(path, "wb");
			if (!f || fwrite(b, 1, sizeof(b), f) != sizeof(b) ||
			    fclose(f)) {
				fprintf(stderr, "fuzz_diff: cannot write %s\n",
					path);
				exit(1);
			}
		}
	exit(0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static Gen gen;
	Gen *g = &gen;
	build(g, data, size);
	const char *dir = getenv("FUZZ_DIFF_DUMP");
	const char *verbose = getenv("FUZZ_DIFF_VERBOSE");
	bool talk = verbose && *verbose && strcmp(verbose, "0");
	if (dir && *dir)
		dump(g, dir);
	if (talk)
		fprintf(stderr, "fuzz_diff: opset %lld%s: %s\n",
			(long long)model_opset(g->m),
			g->keep_fp16 ? " --keep-fp16" : "", g->desc);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	PassOptions o = { .jobs = 1, .keep_fp16 = g->keep_fp16 };
	clear_error();
	import_bools(g->g);
	if (graph_toposort(g->g) < 0 || run_passes(g->m, &o) < 0 ||
	    om_write(g->m, om_path) < 0) {
		if (talk)
			fprintf(stderr, "fuzz_diff: compile: %s\n", last_error());
		model_free(g->m);
		return 0;
	}
	cur = g;
	gearrt_model *md;
	if (gearrt_model_open(om_path, &md) != GEARRT_OK)
		finding("gearrt_model_open refuses what gearc compiled: %s",
			gearrt_last_error());
	Run r[5] = { { .what = "ref x1" }, { .what = "fast x1" },
		     { .what = "fast x2" }, { .what = "ref x2" },
		     { .what = "ref x1 --no-fuse" } };
	cur_runs = r;
	run_model(md, g, true, 1, &r[0]);
	run_model(md, g, false, 1, &r[1]);
	run_model(md, g, false, 2, &r[2]);
	run_model(md, g, true, 2, &r[3]);
	judge(r, g->m);
	if (g->fused && r[0].st == GEARRT_OK)
		check_unfused(data, size, r, g->m);
	if (talk)
		fprintf(stderr, "fuzz_diff: %s, checked in %.1f ms; kernels "
			"(fast x2): %s\n", r[0].st == GEARRT_OK ? "ran" : r[0].msg,
			ms_since(&t0), r[2].kernels);
	for (int i = 0; i < 5; i++)
		run_free(&r[i]);
	gearrt_model_close(md);
	model_free(g->m);
	cur = NULL, cur_runs = NULL;
	return 0;
}
