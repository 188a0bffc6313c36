/*
 * tests/test_defects.c - issue 39's classes of defect on the fast paths,
 * one test each, on tests/fixtures/defects/ (tests/gen_defect_models.py):
 * each model runs through libgearrt on the fast paths at 1 and 2
 * threads and on the reference kernels (no_fast), on inputs holding the
 * values the defect was about (NaN, +-Inf, -0, 1e37, empty tensors,
 * bool bytes other than 0 and 1), and the answers must agree: NaN and
 * infinities where the reference has them, zeros with its sign where a
 * kernel promises its bits, other values within the kernel's tolerance
 * of the output's largest finite magnitude.  Each test also asks which
 * kernel ran, so it fails if the fast path it is about stops firing.
 */
#include <float.h>
#include <math.h>

#include "compiler/act.h"
#include "runtime/dnnl.h"
#include "runtime/gearrt.h"
#include "runtime/rt.h"
#include "testrun.h"

enum { MAX_IO = 16 };

/* Plants special values in input i (t, its data filled already). */
typedef void (*Plant)(size_t i, gearrt_tensor *t);

typedef struct Outs {
	size_t n;
	gearrt_tensor t[MAX_IO];
	void *data[MAX_IO];   /* copies of the outputs */
	char kernels[2048];   /* "Op/kernel," per task, in run order */
	int nhwc;	      /* tasks whose input 0 is channels-last */
	gearrt_status st;
	char err[512];
} Outs;

static size_t numel(const gearrt_tensor *t)
{
	size_t n = 1;
	for (int32_t d = 0; d < t->rank; d++)
		n *= (size_t)t->dims[d];
	return n;
}

/* Input i's fixed pattern: floats in [-2, 2), integers of every byte. */
static void fill(gearrt_tensor *t, size_t i)
{
	uint64_t seed = 39u + 7u * (uint32_t)i; /* 8 bytes for int64's */
	size_t n = numel(t), es = gearrt_dtype_size(t->dtype);
	for (size_t k = 0; k < n; k++) {
		seed = (uint32_t)(seed * 1664525u + 1013904223u);
		if (t->dtype == GEARRT_FLOAT32)
			((float *)t->data)[k] =
				(float)((seed >> 8) % 4001) / 1000.0f - 2.0f;
		else { /* es up to 8 bytes: the seed's, zero above */
			uint64_t wide = seed;
			memcpy((char *)t->data + k * es, &wide, es);
		}
	}
}

/* Runs om once (static, inputs at their declared shapes) through a
 * session of the given threads, fast paths off if no_fast. */
static Outs run(const char *om, bool no_fast, int threads, Plant plant)
{
	Outs o;
	memset(&o, 0, sizeof(o));
	gearrt_model *m;
	gearrt_session *s;
	gearrt_options opt = { .threads = threads, .no_fast = no_fast };
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, &opt, &s), GEARRT_OK);
	size_t nin = gearrt_input_count(m);
	gearrt_tensor in[MAX_IO];
	cr_assert(nin <= MAX_IO);
	for (size_t i = 0; i < nin; i++) {
		cr_assert_eq(gearrt_input_info(m, i, &in[i]), GEARRT_OK);
		in[i].size = numel(&in[i]) * gearrt_dtype_size(in[i].dtype);
		in[i].data = calloc(1, in[i].size + 1);
		fill(&in[i], i);
		if (plant)
			plant(i, &in[i]);
	}
	o.n = gearrt_output_count(m);
	cr_assert(o.n <= MAX_IO);
	o.st = gearrt_run(s, in, nin, o.t, o.n);
	snprintf(o.err, sizeof(o.err), "%s", gearrt_last_error());
	for (size_t k = 0; !o.st && k < o.n; k++) {
		o.data[k] = malloc(o.t[k].size + 1);
		memcpy(o.data[k], o.t[k].data, o.t[k].size);
		o.t[k].data = o.data[k];
	}
	const Prepared *p = rt_session_ctx(s)->prep[0];
	for (int32_t i = 0; p && i < p->ntasks; i++) {
		const Node *n = p->tasks[i].n;
		o.nhwc += n->ninputs > 0 && n->inputs[0] >= 0 &&
			  rt_nhwc(p, n->inputs[0]);
		snprintf(o.kernels + strlen(o.kernels),
			 sizeof(o.kernels) - strlen(o.kernels), "%s/%s,",
			 n->op_type, rt_kernel_name(&p->tasks[i]));
	}
	for (size_t i = 0; i < nin; i++)
		free(in[i].data);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	return o;
}

static void outs_free(Outs *o)
{
	for (size_t k = 0; k < o->n; k++)
		free(o->data[k]);
}

/* Output k of a against the reference's b: the same dtype and shape;
 * floats with NaN, infinities and (tol 0) every bit where b has them,
 * others within tol of b's largest finite magnitude; other dtypes
 * byte for byte. */
static void expect_output(const Outs *a, const Outs *b, size_t k, double tol,
			  const char *what)
{
	const gearrt_tensor *x = &a->t[k], *y = &b->t[k];
	cr_assert_eq(x->dtype, y->dtype, "%s: output %zu's dtype", what, k);
	cr_assert_eq(x->rank, y->rank, "%s: output %zu's rank", what, k);
	for (int32_t d = 0; d < x->rank; d++)
		cr_assert_eq(x->dims[d], y->dims[d], "%s: output %zu's dims",
			     what, k);
	size_t n = numel(y);
	if (y->dtype != GEARRT_FLOAT32 || tol == 0) {
		const uint8_t *p = x->data, *q = y->data;
		for (size_t i = 0; i < x->size; i++)
			cr_assert_eq(p[i], q[i], "%s: output %zu differs at "
				     "byte %zu", what, k, i);
		return;
	}
	const float *p = x->data, *q = y->data;
	double big = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(q[i]))
			big = fmax(big, fabs(q[i]));
	for (size_t i = 0; i < n; i++) {
		bool special = !isfinite(q[i]) || !isfinite(p[i]);
		cr_assert(special ? (isnan(q[i]) ? isnan(p[i]) : p[i] == q[i])
				  : fabs((double)p[i] - q[i]) <= tol * big,
			  "%s: output %zu element %zu is %g, the reference's "
			  "%g", what, k, i, p[i], q[i]);
	}
}

static void expect_outputs(const Outs *a, const Outs *b, double tol,
			   const char *what)
{
	cr_assert_eq(a->st, GEARRT_OK, "%s: %s", what, a->err);
	cr_assert_eq(b->st, GEARRT_OK, "reference: %s", b->err);
	cr_assert_eq(a->n, b->n);
	for (size_t k = 0; k < a->n; k++)
		expect_output(a, b, k, tol, what);
}

/* om on the fast paths at 1 and 2 threads against the reference (the 2
 * threads' bytes the 1 thread's); the 1-thread run's outputs into *keep
 * if given.  The fixture is tests/fixtures/defects/NAME.onnx. */
static void fast_vs_ref(const char *name, Plant plant, double tol,
			Outs *keep)
{
	char *dir = temp_dir(), model[128];
	snprintf(model, sizeof(model), "defects/%s", name);
	char *om = compile_fixture(dir, name, model, NULL);
	Outs ref = run(om, true, 1, plant), f1 = run(om, false, 1, plant);
	Outs f2 = run(om, false, 2, plant);
	expect_outputs(&f1, &ref, tol, "1 thread");
	expect_outputs(&f2, &f1, 0, "2 threads against 1");
	outs_free(&ref);
	outs_free(&f2);
	if (keep)
		*keep = f1;
	else
		outs_free(&f1);
	remove_tree(dir);
	free(dir);
	free(om);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* n where oneDNN runs, 0 where it does not (below SSE4.1: dnnl.c
 * usable; the cap GEARRT_MAX_ISA=baseline), the reference kernel then
 * taking its nodes: what a test about a oneDNN row expects of it. */
static int dnnl_rows(int n)
{
	return !RT_X86 || cpu_has(CPU_SSE41) ? n : 0;
}

/* The tolerance of the convolutions' and products' float sums (oneDNN's
 * and Winograd's order against the reference's double sums), of the
 * output's largest magnitude. */
#define SUM_TOL 1e-5

/* ---- 1: a Conv to 1x1 from a larger input ------------------------------ */

Test(defects, conv_to_one_pixel_reads_its_input_in_its_layout)
{
	/* oneDNN's [N,C,1,1] rule (the same bytes in NCHW and NHWC) was
	 * applied to X by Y's size: X never reordered, outputs off by
	 * 100-300% */
	Outs f;
	fast_vs_ref("conv_1x1_out", NULL, SUM_TOL, &f);
	cr_expect_eq(count(f.kernels, "Conv/dnnl.conv"), dnnl_rows(2), "%s",
		     f.kernels);
	outs_free(&f);
}

/* ---- 2, 3: products over an empty axis --------------------------------- */

Test(defects, products_over_an_empty_axis_are_zeros_and_bias)
{
	/* oneDNN divided by K = 0 (SIGFPE): the reference kernel runs
	 * them */
	Outs f;
	fast_vs_ref("k_zero", NULL, 0, &f);
	const float *mm = f.t[0].data, *gemm = f.t[1].data,
		    *fused = f.t[2].data;
	for (int i = 0; i < 12; i++)
		cr_expect(mm[i] == 0 && gemm[i] == (float)(i % 4),
			  "element %d: %g, %g", i, mm[i], gemm[i]);
	for (int i = 0; i < 15; i++)
		cr_expect_eq(fused[i], (float)(i % 5) - 2);
	outs_free(&f);
}

Test(defects, integer_products_of_empty_axes)
{
	/* quant.c divided by k * n = 0: N = 0 is nothing to compute, K = 0
	 * zeros */
	Outs f;
	fast_vs_ref("mmint_empty", NULL, 0, &f);
	cr_expect_eq(f.t[0].size, 0);
	for (int i = 0; i < 12; i++)
		cr_expect_eq(((const int32_t *)f.t[1].data)[i], 0);
	cr_expect(strstr(f.kernels, "MatMulInteger/exec.empty"), "%s",
		  f.kernels);
	outs_free(&f);
}

/* ---- 4: linear Resize of an empty axis --------------------------------- */

Test(defects, resize_of_an_empty_axis_is_refused_on_every_path)
{
	/* the fast paths read outside X (garbage changing per run) where
	 * the reference refuses: now every path refuses, as the reference */
	static const char *const names[] = { "resize_empty3", "resize_empty4",
					     "resize_empty5" };
	for (int r = 0; r < 3; r++) {
		char *dir = temp_dir(), model[64];
		snprintf(model, sizeof(model), "defects/%s", names[r]);
		char *om = compile_fixture(dir, names[r], model, NULL);
		for (int fast = 0; fast < 2; fast++) {
			Outs o = run(om, !fast, 1, NULL);
			cr_expect_eq(o.st, GEARRT_E_RUN, "%s", names[r]);
			cr_expect(strstr(o.err, "is empty but the output's is"),
				  "%s: %s", names[r], o.err);
			cr_expect(strstr(o.kernels, "Resize/ref"), "%s: %s",
				  names[r], o.kernels);
			outs_free(&o);
		}
		remove_tree(dir);
		free(dir);
		free(om);
	}
}

/* ---- 5: buffers a kernel writes are 64-byte aligned -------------------- */

Test(defects, outputs_are_written_only_into_aligned_buffers)
{
	/* oneDNN wrote a large resampling with aligned non-temporal stores
	 * into a 16-byte aligned buffer (SIGSEGV; ASan's allocator hides
	 * it): a caller's buffer off 64 bytes is computed into the
	 * session's and copied, and the session's own are aligned */
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "resize_big", "defects/resize_big",
				   NULL);
	Outs ref = run(om, true, 1, NULL);
	cr_assert_eq(ref.st, GEARRT_OK, "%s", ref.err);
	gearrt_model *m;
	gearrt_session *s;
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK);
	cr_assert_eq(gearrt_session_create(m, NULL, &s), GEARRT_OK);
	gearrt_tensor in[2], out[2];
	memset(out, 0, sizeof(out));
	for (size_t i = 0; i < 2; i++) {
		gearrt_input_info(m, i, &in[i]);
		in[i].size = numel(&in[i]) * sizeof(float);
		in[i].data = malloc(in[i].size);
		fill(&in[i], i);
	}
	char *block[2];
	void *first[2];
	for (int pass = 0; pass < 2; pass++) {
		for (size_t k = 0; k < 2; k++) {
			/* pass 0: session-owned; 1: 16 bytes off 64 */
			block[k] = aligned_alloc(64, ref.t[k].size + 64);
			out[k].data = pass ? block[k] + 16 : NULL;
			out[k].size = pass ? ref.t[k].size : 0;
		}
		cr_assert_eq(gearrt_run(s, in, 2, out, 2), GEARRT_OK, "%s",
			     gearrt_last_error());
		const Prepared *p = rt_session_ctx(s)->prep[0];
		for (size_t k = 0; k < 2; k++) {
			const Tensor *t = &p->vt[p->g->outputs[k]];
			cr_expect(rt_aligned(t->data), "output %zu computed at "
				  "%p", k, t->data);
			if (!pass) {
				first[k] = malloc(ref.t[k].size);
				memcpy(first[k], out[k].data, ref.t[k].size);
			} else {
				cr_expect(out[k].data == block[k] + 16);
				cr_expect(!memcmp(out[k].data, first[k],
						  ref.t[k].size),
					  "output %zu: the copy differs", k);
				free(first[k]);
			}
			free(block[k]);
		}
	}
	Outs f = run(om, false, 1, NULL);
	cr_expect_eq(count(f.kernels, "Resize/dnnl.resize"), dnnl_rows(2), "%s",
		     f.kernels);
	expect_outputs(&f, &ref, 1e-6, "resize");
	outs_free(&f);
	for (size_t i = 0; i < 2; i++)
		free(in[i].data);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	outs_free(&ref);
	remove_tree(dir);
	free(dir);
	free(om);
}

/* ---- 6: empty computations --------------------------------------------- */

Test(defects, empty_computations_succeed_on_every_path)
{
	/* QuantizeLinear of nothing by a scale of 0, an integer division
	 * of nothing (by a constant 0 too), QLinearMatMul with B of N = 0:
	 * nothing to compute, on the fast paths as on the reference */
	Outs f;
	fast_vs_ref("empty_compute", NULL, 0, &f);
	for (size_t k = 0; k < f.n; k++)
		cr_expect_eq(f.t[k].size, 0, "output %zu", k);
	cr_expect_eq(count(f.kernels, "/exec.empty"), 4, "%s", f.kernels);
	outs_free(&f);
}

/* ---- 7: activations keep NaN ------------------------------------------- */

/* x [1,16,12,12]: NaN, +-Inf and -0 at a few places, 1e30 at one. */
static void plant_specials(size_t i, gearrt_tensor *t)
{
	(void)i;
	float *x = t->data;
	x[0] = NAN, x[5] = -0.0f, x[17] = INFINITY, x[144 + 40] = -INFINITY;
	x[3 * 144 + 77] = NAN, x[7 * 144 + 100] = -0.0f;
	x[9 * 144 + 143] = 1e30f, x[15 * 144 + 70] = NAN;
	for (size_t k = 2 * 144; k < 2 * 144 + 12; k++)
		x[k] = -0.0f; /* a row of -0: Relu keeps its sign */
}

Test(defects, activations_keep_nan_and_zero_signs_on_every_path)
{
	/* act.h's rule, every path: NaN stays NaN, Relu(-0) is -0.  A Relu
	 * alone (direct.c's loop gave 0 and +0) and oneDNN's max-based
	 * post-ops (Relu, Clip, HardSigmoid) run as act.h's forms after
	 * the primitive (dnnl.c's tail); LeakyRelu's blend stays a
	 * post-op.  Relu alone is compared bit for bit. */
	Outs f, ref;
	fast_vs_ref("act_nan", plant_specials, SUM_TOL, &f);
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "act", "defects/act_nan", NULL);
	ref = run(om, true, 1, plant_specials);
	expect_output(&f, &ref, 0, 0, "Relu alone, bit for bit");
	const float *relu = f.t[0].data;
	cr_expect(isnan(relu[0]) && signbit(relu[5]) && relu[5] == 0);
	for (size_t k = 0; k < f.n; k++) {
		size_t nan = 0;
		for (size_t i = 0; i < numel(&f.t[k]); i++)
			nan += isnan(((const float *)f.t[k].data)[i]);
		cr_expect_gt(nan, 0, "output %zu has no NaN", k);
	}
	cr_expect(strstr(f.kernels, "Relu/direct.relu"), "%s", f.kernels);
	cr_expect_geq(count(f.kernels, "FusedConv/dnnl.conv"), dnnl_rows(5),
		      "%s", f.kernels);
	/* the FusedGemm's A is one row: runtime/gemv.c's, at every level */
	cr_expect_eq(count(f.kernels, "FusedGemm/gemv."), 1, "%s", f.kernels);
	/* its FusedMatMul of many rows: oneDNN's matmul; on AVX2 its 1x1
	 * convolution (dnnl.c dnnl_fast_matmul_conv); below, gearc's gemm
	 * (runtime/gemv.c) */
	bool mmconv = cpu_isa() == CPU_LEVEL_AVX2 && dnnl_rows(1);
	bool gemm = cpu_isa() < CPU_LEVEL_AVX512 && !mmconv;
	cr_expect_eq(count(f.kernels, gemm	   ? "FusedMatMul/gemm."
				      : mmconv ? "FusedMatMul/dnnl.mmconv"
					       : "FusedMatMul/dnnl.matmul"),
		     gemm ? 1 : dnnl_rows(1), "%s", f.kernels);
	/* oneDNN's JIT computes Relu, Clip and HardSigmoid with max and
	 * min, which its reference kernels do not: the check is asked of
	 * the CPU, and LeakyRelu's blend passes everywhere */
	cr_expect(dnnl_act_exact(ACT_LeakyRelu, 0.1f, 0));
	outs_free(&f);
	outs_free(&ref);
	remove_tree(dir);
	free(dir);
	free(om);
}

/* ---- 8: Winograd keeps a non-finite or huge input local ---------------- */

/* x [1,16,40,40] and v [1,32,40,40]: one +Inf, one NaN, one 1e37. */
static void plant_wino(size_t i, gearrt_tensor *t)
{
	float *x = t->data;
	int64_t c = t->dims[1];
	x[(c - 1) * 1600 + 21 * 40 + 9] = INFINITY;
	x[2 * 1600 + 5 * 40 + 30] = i ? NAN : 1e37f;
	x[1 * 1600 + 33 * 40 + 33] = i ? 1e37f : NAN;
}

Test(defects, winograd_keeps_special_inputs_in_their_windows)
{
	/* one Inf input spread NaN to outputs of neighbouring tiles whose
	 * windows hold only finite inputs, and 1e37 overflowed: a tile
	 * whose transformed inputs are not finite or could overflow is
	 * computed by its windows (wino.c wino_direct) */
	Outs f;
	fast_vs_ref("wino_special", plant_wino, SUM_TOL, &f);
	cr_expect_eq(count(f.kernels, "/chan.wino"), 2, "%s", f.kernels);
	outs_free(&f);
}

/* ---- 9: MaxPool of -inf ------------------------------------------------ */

/* x [1,16,8,8]: windows of -inf, of NaN, of -FLT_MAX, one NaN with
 * numbers. */
static void plant_pool(size_t i, gearrt_tensor *t)
{
	(void)i;
	float *x = t->data;
	for (int c = 0; c < 16; c++) {
		float *p = x + c * 64;
		p[0] = p[1] = p[8] = p[9] = -INFINITY;
		p[2] = p[3] = p[10] = p[11] = NAN;
		p[4] = p[5] = p[12] = p[13] = -FLT_MAX;
		p[6] = NAN;
		p[54] = p[55] = p[62] = p[63] = -INFINITY;
	}
}

Test(defects, max_pool_of_minus_infinity_is_minus_infinity)
{
	/* oneDNN starts each window from -FLT_MAX: -inf windows gave
	 * -3.4e38.  The rule, every path (pool.h pool_max_num): maxNum,
	 * NaN passed over unless the window is all NaN; chanwise.c's 2-D
	 * kernel in either layout gives the reference's bits */
	Outs f;
	fast_vs_ref("maxpool_special", plant_pool, 0, &f);
	const float *p = f.t[0].data;
	cr_expect(p[0] == -INFINITY && isnan(p[1]) && p[2] == -FLT_MAX &&
			  isfinite(p[3]) && p[15] == -INFINITY,
		  "%g %g %g %g %g", p[0], p[1], p[2], p[3], p[15]);
	const float *q = f.t[2].data; /* 1-D, pairs of a row */
	cr_expect(q[0] == -INFINITY && isnan(q[1]) && q[2] == -FLT_MAX &&
			  isfinite(q[3]) && q[27] == -INFINITY,
		  "%g %g %g %g %g", q[0], q[1], q[2], q[3], q[27]);
	cr_expect_eq(count(f.kernels, "MaxPool/chan.pool"), 2, "%s",
		     f.kernels);
	cr_expect_eq(count(f.kernels, "MaxPool/dnnl.pool"), dnnl_rows(1), "%s",
		     f.kernels);
	outs_free(&f);
}

/* xt and x, 2 x 20 x 11 x 13 floats: NaN, infinities and -0 among the
 * numbers. */
static void plant_pool_windows(size_t i, gearrt_tensor *t)
{
	float *x = (float *)t->data + i;
	for (int k = 0; k + 11 < 2 * 20 * 11 * 13 - 1; k += 37) {
		x[k] = NAN;
		x[k + 5] = k % 2 ? INFINITY : -INFINITY;
		x[k + 11] = -0.0f;
	}
}

Test(defects, pools_of_any_window_give_the_reference_bits)
{
	/* chanwise.c's MaxPool and AveragePool against pool.c, bit for bit
	 * at 1 and 2 threads: ceil_mode, pads, SAME_UPPER and SAME_LOWER,
	 * dilations, count_include_pad, 20 channels (a tail of 4 lanes),
	 * channels-last behind a Transpose (its 4 pools read NHWC) and
	 * row-major on the graph input */
	Outs f;
	fast_vs_ref("pool_windows", plant_pool_windows, 0, &f);
	cr_expect_eq(count(f.kernels, "Pool/chan.pool"), 6, "%s", f.kernels);
	cr_expect_eq(f.nhwc, 4, "%d tasks read NHWC", f.nhwc);
	outs_free(&f);
}

/* ---- 10: bool inputs of any byte --------------------------------------- */

static const uint8_t bool_bytes[16] = { 0, 255, 1, 2, 0, 128, 7, 0,
					1, 0, 64, 3, 0, 0, 1, 254 };

static void plant_bools(size_t i, gearrt_tensor *t)
{
	(void)i;
	memcpy(t->data, bool_bytes, sizeof(bool_bytes));
}

Test(defects, bool_inputs_are_any_byte_but_zero_true)
{
	/* a fast Cast gave 1 for 255 where the reference gave 255, and
	 * Equal(b, True) was False: any byte but 0 is true, on every path */
	Outs f;
	fast_vs_ref("bool_bytes", plant_bools, 0, &f);
	const uint8_t *u8 = f.t[0].data, *eq = f.t[2].data, *nb = f.t[3].data;
	const float *wh = f.t[4].data;
	for (int i = 0; i < 16; i++) {
		bool want = bool_bytes[i] != 0;
		cr_expect(u8[i] == want && eq[i] == want && nb[i] == !want &&
				  wh[i] == (want ? 1.0f : 2.0f),
			  "element %d: %u %u %u %g", i, u8[i], eq[i], nb[i],
			  wh[i]);
	}
	cr_expect(strstr(f.kernels, "Cast/convert.cast"), "%s", f.kernels);
	outs_free(&f);
}

/* ---- 11: a hostile size is an error, not an abort ---------------------- */

static void plant_huge(size_t i, gearrt_tensor *t)
{
	int64_t *d = t->data;
	if (i == 0)
		d[0] = d[1] = d[2] = 1 << 16; /* 2^48 floats */
	if (i == 2)
		d[0] = d[1] = (int64_t)1 << 24;
}

Test(defects, a_tensor_too_large_is_an_error_naming_its_node)
{
#if defined(__SANITIZE_ADDRESS__)
	/* ASan stops (or warns of) a 2^50-byte request before the runtime
	 * can report it */
	cr_skip_test("the allocation under test is ASan's to refuse");
#endif
	/* ConstantOfShape and Expand asking for 2^48 elements ended in
	 * oom() and abort(): GEARRT_E_RUN naming the node and the size */
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "huge", "defects/huge_alloc", NULL);
	for (int fast = 0; fast < 2; fast++) {
		Outs o = run(om, !fast, 1, plant_huge);
		cr_expect_eq(o.st, GEARRT_E_RUN);
		cr_expect(strstr(o.err, "(ConstantOfShape): cannot allocate "
					"1125899906842624 bytes"),
			  "%s", o.err);
		outs_free(&o);
	}
	remove_tree(dir);
	free(dir);
	free(om);
}

/* ---- 12: QDQ near misses do not fuse ----------------------------------- */

/* The QLinear nodes in om's dump. */
static int qlinear_nodes(const char *om)
{
	Run r = run_gearc("dump", om);
	cr_assert_eq(r.status, 0, "%s", r.err);
	int n = count(r.out, "QLinearConv") + count(r.out, "QLinearMatMul");
	run_free(&r);
	return n;
}

Test(defects, qdq_groups_fuse_only_with_every_precondition)
{
	/* each model differs from qdq_fuses in one precondition of
	 * passes/qfuse.c: it stays as written (its outputs --no-fuse's);
	 * a negative y scale with a Relu fused, dropping the Relu, and
	 * gave 150 of 288 outputs wrong */
	static const char *const misses[] = {
		"qdq_neg_scale_relu", "qdq_matmul_neg_scale_relu",
		"qdq_zero_point_relu", "qdq_zero_scale", "qdq_nan_x_scale",
		"qdq_inf_w_scale",
	};
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "fuses", "defects/qdq_fuses", NULL);
	cr_expect_eq(qlinear_nodes(om), 1, "the fusable group");
	free(om);
	const char *nf[] = { "--no-fuse", NULL };
	for (size_t i = 0; i < sizeof(misses) / sizeof(*misses); i++) {
		char model[96], other[96];
		snprintf(model, sizeof(model), "defects/%s", misses[i]);
		snprintf(other, sizeof(other), "%s_nf", misses[i]);
		char *a = compile_fixture(dir, misses[i], model, NULL);
		char *b = compile_fixture(dir, other, model, nf);
		cr_expect_eq(qlinear_nodes(a), 0, "%s fused", misses[i]);
		Outs x = run(a, false, 1, NULL), y = run(b, false, 1, NULL);
		cr_expect_eq(x.st, y.st, "%s: %s / %s", misses[i], x.err,
			     y.err);
		if (!x.st && !y.st)
			expect_outputs(&x, &y, 0, misses[i]);
		outs_free(&x);
		outs_free(&y);
		free(a);
		free(b);
	}
	remove_tree(dir);
	free(dir);
}

/* ---- found by tests/fuzz/fuzz_diff.c after the twelve ------------------ */

static void plant_huge_row(size_t i, gearrt_tensor *t)
{
	(void)i;
	((float *)t->data)[48 + 7] = -1e37f; /* in row 1 */
}

Test(defects, layernorm_of_a_huge_value_is_normalised)
{
	/* direct.c's vector rows summed squares in float: -1e37 made the
	 * variance infinite and every output of its row B */
	Outs f;
	fast_vs_ref("layernorm_huge", plant_huge_row, 1e-5, &f);
	cr_expect(strstr(f.kernels, "LayerNormalization/direct.layernorm"),
		  "%s", f.kernels);
	outs_free(&f);
}

/* fixture NAME's FusedConv with a sum computes the reference's answer
 * and runs on no oneDNN primitive. */
static void conv_sum_off_onednn(const char *name)
{
	Outs f;
	fast_vs_ref(name, NULL, SUM_TOL, &f);
	cr_expect_eq(count(f.kernels, "FusedConv/dnnl.conv"), 0, "%s",
		     f.kernels);
	outs_free(&f);
}

Test(defects, conv_with_a_sum_where_a_pad_covers_the_window)
{
	/* oneDNN 2.6's brgconv faulted (SIGSEGV) with a sum and an eltwise
	 * post-op where an output row reads only padding, and added Z
	 * wrongly with the sum alone: no such FusedConv runs on oneDNN */
	conv_sum_off_onednn("conv_pad_covers");
}

Test(defects, conv_with_a_sum_where_the_dilation_skips_the_input)
{
	/* the same fault where no pad covers the window, but a 3-D
	 * window's taps, dilated, step over a 1-wide input (fuzz_diff) */
	conv_sum_off_onednn("conv_dilation_skips_input");
}

/* x [1,2,8]: a NaN in each group. */
static void plant_nan_1d(size_t i, gearrt_tensor *t)
{
	(void)i;
	float *x = t->data;
	x[3] = NAN, x[8 + 6] = NAN;
}

Test(defects, gemm_convolution_post_ops_keep_nan)
{
	/* oneDNN's GEMM-based convolution (a grouped 1-D Conv) applies its
	 * post-ops in a pass of its own that made a Sigmoid's NaN 0 and a
	 * Clip's -FLT_MAX: the activations run after it (injector_post_ops) */
	Outs f;
	fast_vs_ref("conv1d_gemm_acts", plant_nan_1d, SUM_TOL, &f);
	for (size_t k = 0; k < 2; k++) {
		const float *y = f.t[k].data;
		size_t nan = 0;
		for (size_t i = 0; i < numel(&f.t[k]); i++)
			nan += isnan(y[i]);
		cr_expect_gt(nan, 0, "output %zu lost its NaN", k);
	}
	cr_expect_eq(count(f.kernels, "FusedConv/dnnl.conv"), dnnl_rows(2),
		     "%s",
		     f.kernels);
	outs_free(&f);
}

static void plant_c(size_t i, gearrt_tensor *t)
{
	if (i == 2)
		((float *)t->data)[1] = NAN, ((float *)t->data)[2] = INFINITY;
}

Test(defects, gemm_with_beta_zero_reads_no_c)
{
	/* beta = 0: C is not read on any path (BLAS and ONNX Runtime; the
	 * reference computed 0 * NaN) */
	Outs f;
	fast_vs_ref("gemm_beta0", plant_c, SUM_TOL, &f);
	const float *y = f.t[0].data;
	for (int i = 0; i < 8; i++)
		cr_expect(isfinite(y[i]), "element %d is %g", i, y[i]);
	cr_expect_eq(count(f.kernels, "Gemm/dnnl.gemm"), dnnl_rows(1), "%s",
		     f.kernels);
	outs_free(&f);
}

Test(defects, legacy_broadcast_runs_as_its_opset_says)
{
	/* Mul(y, K[4,1,1], broadcast=1, axis=0) under opset 6 scales the
	 * batch axis; chan.binary broadcast K as numpy does (channels):
	 * off by 0.84.  Elementwise fast rows take numpy broadcasting
	 * only (fast.c legacy_broadcast) */
	char *dir = temp_dir();
	const char *nf[] = { "--no-fuse", NULL };
	char *om = compile_fixture(dir, "legacy", "fuse/misses/affine_legacy_axis_0",
				   nf);
	Outs ref = run(om, true, 1, NULL), f = run(om, false, 1, NULL);
	expect_outputs(&f, &ref, SUM_TOL, "legacy broadcast");
	cr_expect(strstr(f.kernels, "Mul/ref"), "%s", f.kernels);
	outs_free(&ref);
	outs_free(&f);
	remove_tree(dir);
	free(dir);
	free(om);
}
