/*
 * tests/test_fast.c - libgearrt's fast paths (runtime/fast.c, dnnl.c, direct.c)
 * against the reference kernels (GEARRT_NO_FAST=1) on
 * tests/fixtures/fast_cnn.onnx, fast_mm.onnx, fast_direct.onnx and
 * fast_rnn.onnx (tests/gen_fast_models.py),
 * at 1 and 2 threads; and the fused ops of the fuse contract (FusedConv,
 * FusedGemm, FusedMatMul) on nodes built here against sums computed here.
 */
#include <dnnl.h>
#include <float.h>
#include <math.h>

#include "cli/npy.h"
#include "compiler/act.h"
#include "runtime/chanwise.h"
#include "runtime/direct.h"
#include "runtime/gemv.h"
#include "runtime/dnnl.h"
#include "runtime/gearrt.h"
#include "runtime/rt.h"
#include "testrun.h"

enum { MAX_OUT = 48 };

/* What differs with the ISA level (compiler/cpu.h; the cap,
 * GEARRT_MAX_ISA, makes this CPU any of them): every fast path matches
 * the reference kernels at every level, but which kernels run, and so
 * which tensors end NHWC and what is reordered, depends on oneDNN's
 * kernels of the level:
 *   LV_512  AVX-512: oneDNN's direct kernels block channels by 16, so a
 *           16-channel stem reads the model's input as it is;
 *   LV_256  AVX2 and AVX: blocks of 8, so that stem reorders x (one
 *           reorder more); NHWC as at AVX-512;
 *   LV_SSE  SSE4.1: oneDNN takes NHWC for some convolutions only, so
 *           fewer tensors are NHWC;
 *   LV_NONE below SSE4.1: oneDNN does not run (dnnl.c usable), its
 *           nodes run gearc's plain-C kernels or the reference ones;
 *   LV_ARM  ARM64 (tested as a Neoverse N1, no SVE): Debian's oneDNN
 *           runs its reference and gemm convolutions, row-major, so
 *           oneDNN takes the nodes it takes on x86 but no tensor is
 *           NHWC and none is reordered (the LV_NONE column's layouts).
 * gearc's own kernels (chanwise.c, wino.c, direct.c) run at every level,
 * their variant the level's. */
typedef enum { LV_512, LV_256, LV_SSE, LV_NONE, LV_ARM } Level;

static Level level(void)
{
	if (!RT_X86)
		return LV_ARM;
	return !cpu_has(CPU_SSE41)	     ? LV_NONE
	       : cpu_isa() >= CPU_LEVEL_AVX512 ? LV_512
	       : cpu_has(CPU_AVX)	     ? LV_256
					     : LV_SSE;
}

/* The expectation of a layout (NHWC tensors, reorders) at this level. */
static int at_level(int a512, int a256, int sse, int none)
{
	int v[] = { a512, a256, sse, none, none };
	return v[level()];
}

/* The same where only oneDNN's absence changes it: the kernels that run
 * (with_dnnl), and the layouts, which at LV_ARM are LV_NONE's
 * (layout_with_dnnl). */
static int with_dnnl(int with, int without)
{
	return level() == LV_NONE ? without : with;
}

static int layout_with_dnnl(int with, int without)
{
	return level() == LV_NONE || level() == LV_ARM ? without : with;
}

typedef struct Outs {
	size_t n;
	float *data[MAX_OUT];
	size_t count[MAX_OUT];
	int fast; /* tasks a fast path took */
	int reorders; /* of oneDNN convolutions' X and Y */
	int direct; /* tasks runtime/direct.c took */
	int chan; /* tasks runtime/chanwise.c took */
	int dnnl; /* tasks oneDNN took */
	int ew; /* tasks runtime/ew.c took */
	int nhwc; /* tensors runtime/layout.c made NHWC */
	int parallel; /* fast kernels on more than one thread */
	int split; /* oneDNN kernels running image by image */
	int wino_parts; /* wino.c's kernels' parts of output channels */
	int cat_bn; /* chan.concat kernels that took a BatchNormalization */
	int bn; /* chan.batchnorm kernels (one no concat took) */
	char impls[512]; /* the convolutions' implementations, in run order */
} Outs;

static void fill(float *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		p[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
	}
}

/* Runs static m once in s on fixed inputs: its outputs into o
 * (malloc'd copies) and what ran them. */
static void run_session(gearrt_model *m, gearrt_session *s, Outs *o)
{
	memset(o, 0, sizeof(*o));
	size_t nin = gearrt_input_count(m);
	gearrt_tensor in[4];
	cr_assert(nin <= 4);
	for (size_t i = 0; i < nin; i++) {
		cr_assert_eq(gearrt_input_info(m, i, &in[i]), GEARRT_OK);
		size_t cnt = 1;
		for (int32_t d = 0; d < in[i].rank; d++)
			cnt *= (size_t)in[i].dims[d];
		in[i].data = malloc(cnt * sizeof(float));
		in[i].size = cnt * sizeof(float);
		fill(in[i].data, cnt, 7u + (uint32_t)i);
	}
	o->n = gearrt_output_count(m);
	cr_assert(o->n <= MAX_OUT);
	gearrt_tensor out[MAX_OUT];
	memset(out, 0, sizeof(out));
	cr_assert_eq(gearrt_run(s, in, nin, out, o->n), GEARRT_OK, "%s",
		     gearrt_last_error());
	for (size_t k = 0; k < o->n; k++) {
		o->count[k] = out[k].size / sizeof(float);
		o->data[k] = malloc(out[k].size + 1);
		memcpy(o->data[k], out[k].data, out[k].size);
	}
	Prepared *p = rt_session_ctx(s)->prep[0];
	for (int32_t i = 0; i < p->ntasks; i++) {
		const Task *t = &p->tasks[i];
		const char *k = rt_kernel_name(t);
		DnnlInfo d = { 0 };
		o->fast += rt_fast(t) && !t->alias; /* a view, not a path */
		o->direct += !strncmp(k, "direct.", 7);
		o->chan += !strncmp(k, "chan.", 5);
		o->dnnl += t->kernel->backend == KB_DNNL;
		o->ew += !strncmp(k, "ew.", 3);
		if (t->kernel->backend == KB_DNNL)
			dnnl_fast_info(&t->fast, &d);
		o->parallel += p->tasks[i].fast.threads > 1;
		o->split += d.images > 1;
		o->wino_parts += (int)chan_wino_parts(&t->fast);
		o->cat_bn += !strcmp(k, "chan.concat.bn");
		o->bn += !strcmp(k, "chan.batchnorm");
		o->reorders += d.x_in + d.y_out;
		if (d.impl && *d.impl)
			snprintf(o->impls + strlen(o->impls),
				 sizeof(o->impls) - strlen(o->impls), "%s,",
				 d.impl);
	}
	for (ValId v = 0; v < p->g->nvals; v++)
		o->nhwc += rt_nhwc(p, v);
	for (size_t i = 0; i < nin; i++)
		free(in[i].data);
}

/* Runs om once on fixed inputs; fast paths off if no_fast. */
static Outs run_om(const char *om, bool no_fast, int threads)
{
	Outs o;
	gearrt_model *m;
	gearrt_session *s;
	gearrt_options opt = { .threads = threads, .no_fast = no_fast };
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, &opt, &s), GEARRT_OK);
	run_session(m, s, &o);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	return o;
}

static void outs_free(Outs *o)
{
	for (size_t k = 0; k < o->n; k++)
		free(o->data[k]);
}

static void expect_close(const Outs *a, const Outs *b, const char *what)
{
	cr_assert_eq(a->n, b->n);
	for (size_t k = 0; k < a->n; k++) {
		cr_assert_eq(a->count[k], b->count[k]);
		for (size_t i = 0; i < a->count[k]; i++) {
			float x = a->data[k][i], y = b->data[k][i];
			cr_assert((isnan(x) && isnan(y)) ||
					  fabsf(x - y) <= 1e-5f + 1e-4f * fabsf(y),
				  "%s: output %zu element %zu is %g, the "
				  "reference %g", what, k, i, x, y);
		}
	}
}

/* Every node of the model is one oneDNN takes (Transpose aside). */
/* want_direct: of them runtime/direct.c's (-1: any number).  keep: the
 * 1-thread run's outputs and counts, or NULL. */
/* On AVX2 oneDNN takes most 1x1 Convs and wino.c more 3x3 ones than
 * elsewhere (chanwise.c PW_TINY_AVX2, wino.c WINO_U_AVX2): tests of
 * other kernels on their fixtures (fast_vs_reference unless
 * avx2_defaults) make the same choices as the other levels, so that
 * chanwise.c's AVX2 tile runs on every fixture. */
static bool avx2_defaults;

static void avx2_as_elsewhere(void)
{
	rt_pw_tiny_avx2 = INT64_MAX;
	rt_wino_u_avx2 = 0;
}

/* Fixture `name` compiled and run on fixed inputs: by the reference
 * kernels (*ref), by the fast paths at 1 thread (*f1) and at 2 (*f2). */
static void run_three(const char *name, Outs *ref, Outs *f1, Outs *f2)
{
	char *dir = temp_dir(), *om = compile_fixture(dir, name, name, NULL);
	*ref = run_om(om, true, 1);
	*f1 = run_om(om, false, 1);
	*f2 = run_om(om, false, 2);
	remove_tree(dir);
	free(dir);
	free(om);
}

static void fast_vs_reference(const char *name, int want_fast,
			      int want_direct, Outs *keep)
{
	if (!avx2_defaults)
		avx2_as_elsewhere();
	Outs ref, f1, f2;
	run_three(name, &ref, &f1, &f2);
	cr_expect_eq(ref.fast + ref.nhwc, 0, "GEARRT_NO_FAST=1 left %d fast "
		     "tasks, %d NHWC tensors", ref.fast, ref.nhwc);
	cr_expect_eq(f1.fast, want_fast, "%s: %d fast tasks, expected %d",
		     name, f1.fast, want_fast);
	cr_expect(want_direct < 0 || f1.direct == want_direct,
		  "%s: %d direct tasks, expected %d", name, f1.direct,
		  want_direct);
	expect_close(&f1, &ref, "1 thread");
	expect_close(&f2, &ref, "2 threads");
	outs_free(&ref);
	outs_free(&f2);
	if (keep)
		*keep = f1;
	else
		outs_free(&f1);
}

Test(fast, cnn_ops_match_reference)
{
	/* 4 Conv (plain, depthwise, grouped SAME, 1-D), 2 ConvTranspose,
	 * MaxPool, 2 AveragePool, GlobalAveragePool (without oneDNN: the
	 * pools, chanwise.c's, and 3 more) */
	fast_vs_reference("fast_cnn", with_dnnl(10, 6), -1, NULL);
}

Test(fast, direct_ops_match_reference)
{
	/* runtime/direct.c: 5 few-channel ConvTranspose, Sigmoid, Softmax,
	 * Conv and FusedConv (Relu) with few output channels, Mul, Div and
	 * Sub by a scalar, Erf, Relu, Pow by 2, 2 Transpose; 2 ConvTranspose
	 * applying the Relu and the Sigmoid after them (those 2 tasks doing
	 * nothing); 2
	 * nearest Resize by whole factors (a third, rounding to nearest,
	 * runs its reference kernel) */
	fast_vs_reference("fast_direct", 23, 23, NULL);
}

static char *profile_at(const char *om, const char *level, bool flag);

Test(fast, upsampling_ops_match_reference)
{
	/* tests/gen_fast_models.py's fast_upsample: 3 ConvTranspose whose
	 * kernel is their stride, each one matrix product (runtime/direct.c
	 * deconv_product), the first two applying the Relu and the Sigmoid
	 * after them (2 tasks doing nothing), the third of one input
	 * channel; a 2x2 MaxPool and AveragePool on row-major X
	 * (chanwise.c's whole-window rows) */
	fast_vs_reference("fast_upsample", 7, 5, NULL);
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "fast_upsample", "fast_upsample",
				   NULL);
	char *err = profile_at(om, "avx512", false); /* the CPU's own */
	cr_expect(strstr(err, "ConvTranspose/direct.deconv.product     3") &&
			  strstr(err, "Relu/direct.deconv_act") &&
			  strstr(err, "Sigmoid/direct.deconv_act") &&
			  strstr(err, "MaxPool/chan.pool"),
		  "%s", err);
	free(err);
	remove_tree(dir);
	free(dir);
	free(om);
}

Test(fast, conv_chain_keeps_blocked_layout)
{
	/* Conv -> 2 Conv: at most the first X and the last two Ys are
	 * reordered (none if oneDNN picks the plain layout), never the
	 * middle tensor, read by both */
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "fast_chain", "fast_chain", NULL);
	Outs ref = run_om(om, true, 1), f1 = run_om(om, false, 1);
	cr_expect_eq(f1.fast, with_dnnl(3, 0));
	cr_expect_leq(f1.reorders, 3, "%d reorders", f1.reorders);
	expect_close(&f1, &ref, "chained");
	outs_free(&ref);
	outs_free(&f1);
	remove_tree(dir);
	free(dir);
	free(om);
}

Test(fast, nhwc_between_convolutions)
{
	/* fast_nhwc: x -> Conv -> depthwise Conv -> squeeze-excite Mul ->
	 * residual Add -> Sub [1,C,1,1] -> MaxPool -> Conv with residual Z
	 * -> Conv -> y.  Every tensor between the first Conv and the last
	 * stays NHWC (the 1x1 ones of the excite branch have one layout),
	 * and y too, delivered row-major once (the last Conv, 1x1, keeps
	 * its X's layout): nothing is reordered between kernels; the first
	 * Conv, to 16 channels, reads x as it is (dnnl.c reads_input_as_is:
	 * where oneDNN blocks channels by 16) */
	Outs f1;
	fast_vs_reference("fast_nhwc", with_dnnl(11, 8), 1, &f1);
	cr_expect_eq(f1.reorders, at_level(0, 1, 1, 0), "%d reorders",
		     f1.reorders);
	/* the first, reading x, and the depthwise one run oneDNN's direct
	 * JIT kernels (dnnl.c direct_jit), the 1x1 one adding Z its brgemm
	 * one (brgemm kernels need AVX-512); the other 1x1 ones, the
	 * excite pair of one pixel and the last, chanwise.c's (on AVX-512),
	 * and the MaxPool chanwise.c's at every level */
	if (strstr(f1.impls, "avx512_core"))
		cr_expect_str_eq(f1.impls, "jit:avx512_core,jit_dw:avx512_core,"
					   "brgconv_1x1:avx512_core,");
	cr_expect_eq(f1.nhwc, layout_with_dnnl(8, 0), "%d NHWC tensors", f1.nhwc);
	cr_expect_eq(f1.chan, 7, "%d chanwise tasks", f1.chan);
	outs_free(&f1);
}

Test(fast, conv_kernels_chosen_by_channels_and_pixels)
{
	/* fast_stems: x [2,3,200,200] -> Conv stride 2 to 16 channels, and
	 * to 32, both to 2x100x100 pixels: the first on oneDNN's direct JIT
	 * kernel (as fast there, built 10 times faster), the second on its
	 * brgemm one (ISNet's 3->64 stem at 1024x1024: 4.9 ms against
	 * 10.1).  From those 32 channels, a window of the whole height to
	 * one row of 50 pixels an image: direct JIT (rec's neck at 8
	 * images: as fast, built 0.3 ms against 2); and 3x3 to 2x50x50:
	 * brgemm (square images in a batch run faster there); dnnl.c
	 * direct_jit */
	Outs f1;
	fast_vs_reference("fast_stems", with_dnnl(4, 0), 0, &f1);
	if (strstr(f1.impls, "avx512_core"))
		cr_expect_str_eq(f1.impls, "jit:avx512_core,"
					   "brgconv:avx512_core,"
					   "jit:avx512_core,"
					   "brgconv:avx512_core,");
	outs_free(&f1);
}

Test(fast, nhwc_through_resize_and_concat)
{
	/* fast_fpn: x -> Conv -> a -> Conv/2 -> b; a + Resize(b, x2);
	 * Concat(a, sum) -> Conv -> y: NHWC through the nearest Resize,
	 * the Add and the Concat, and y, delivered row-major once; nothing
	 * reordered between kernels (x read as it is) */
	Outs f1;
	fast_vs_reference("fast_fpn", with_dnnl(6, 4), -1, &f1);
	cr_expect_eq(f1.reorders, at_level(0, 1, 1, 0), "%d reorders",
		     f1.reorders);
	/* one image of 16x16 and 8x8 pixels: the 3x3 one reading x runs
	 * oneDNN's direct JIT kernel (dnnl.c reads_input_as_is), the other,
	 * square, its brgemm one (dnnl.c direct_jit), the 1x1 one
	 * chanwise.c's (on AVX-512) */
	if (strstr(f1.impls, "avx512_core"))
		cr_expect_str_eq(f1.impls, "jit:avx512_core,brgconv:avx512_core,");
	cr_expect_eq(f1.nhwc, layout_with_dnnl(6, 0), "%d NHWC tensors", f1.nhwc);
	outs_free(&f1);
}

Test(fast, pointwise_conv_in_either_layout)
{
	/* fast_pw: chanwise.c's 1x1 Conv on the row-major input (21 output
	 * channels over 63 pixels: tails of both) and NHWC between two 3x3
	 * Convs (52 and 100 channels: tails of 4 after panels of 48; 126
	 * pixels: a tail of 6 rows), with the HardSwish and LeakyRelu after
	 * them, on 2 images of one pixel for a squeeze-excite pair (Relu,
	 * Sigmoid) after the GlobalAveragePool, and 64 -> 128 channels
	 * NHWC over 25 pixels (panels of 64: a tail of one row) */
	Outs f1;
	fast_vs_reference("fast_pw", with_dnnl(11, 7), 0, &f1);
	cr_expect_eq(f1.chan, 7, "%d chanwise tasks", f1.chan);
	cr_expect_eq(f1.nhwc, at_level(5, 5, 2, 0), "%d NHWC tensors",
		     f1.nhwc);
	outs_free(&f1);
}

Test(fast, pointwise_conv_left_to_onednn_on_avx2)
{
	/* fast_pw as chosen by default: on AVX2 the four 1x1 Convs over
	 * pixels run oneDNN's jit_1x1 (faster there), the squeeze-excite
	 * pair of one pixel chanwise.c's (oneDNN's cost per call is most of
	 * it); elsewhere as pointwise_conv_in_either_layout */
	avx2_defaults = true;
	rt_wino_u_avx2 = 0; /* its 3x3 Convs oneDNN's, as elsewhere */
	Outs f1;
	fast_vs_reference("fast_pw", with_dnnl(11, 7), 0, &f1);
	cr_expect_eq(f1.chan, at_level(7, 3, 7, 7), "%d chanwise tasks",
		     f1.chan);
	outs_free(&f1);
}

Test(fast, winograd_conv_in_either_layout)
{
	/* fast_wino: runtime/wino.c's F(4x4, 3x3) on the row-major input
	 * (20 -> 40 channels, HardSwish: tails of 4 and 8 lanes), NHWC
	 * between (2 groups, dilated 2 down and 1 across, LeakyRelu) and
	 * into the Flatten's row-major input (2 groups, uneven pads, Relu),
	 * over 2 images of 20x19 whose tiles the edges cut: within float
	 * rounding of the reference at 1 and 2 threads; the Flatten, a
	 * graph output, one copy (direct.copy) */
	Outs f1;
	fast_vs_reference("fast_wino", 4, -1, &f1);
	cr_expect_eq(f1.chan, 3, "%d chanwise tasks", f1.chan);
	cr_expect_eq(f1.nhwc, 2, "%d NHWC tensors", f1.nhwc);
	outs_free(&f1);
}

Test(fast, winograd_conv_adds_the_residual)
{
	/* fast_wino_res: six 3x3 Convs, three with a residual Add fused
	 * into them (FusedConv's Z): after the Relu's input (z_after 0, Z
	 * channels-last), after the Relu (z_after 1), and the row-major
	 * graph input as Z of the row-major output; all six wino.c's, no
	 * Add left, within float rounding of the reference at 1 and 2
	 * threads */
	Outs f1;
	fast_vs_reference("fast_wino_res", 6, 0, &f1);
	cr_expect_eq(f1.chan, 6, "%d chanwise tasks", f1.chan);
	cr_expect_str_eq(f1.impls, "", "oneDNN ran");
	outs_free(&f1);
}

Test(fast, winograd_splits_output_channels_for_threads)
{
	/* fast_wino_parts: one image of 16x16 is one item of tiles, so at
	 * 2 threads each item also takes a part of the 100 output channels
	 * (96 and 4: whole panels, then a tail); within float rounding of
	 * the reference, the same bytes at 1 and 2 threads */
	Outs ref, f1, f2;
	run_three("fast_wino_parts", &ref, &f1, &f2);
	cr_expect_eq(f1.chan, 1, "%d chanwise tasks", f1.chan);
	cr_expect_eq(f1.wino_parts, 1, "%d parts at 1 thread", f1.wino_parts);
	cr_expect_eq(f2.wino_parts, 2, "%d parts at 2 threads",
		     f2.wino_parts);
	expect_close(&f1, &ref, "1 thread");
	expect_close(&f2, &ref, "2 threads");
	cr_assert_eq(f1.n, 1);
	cr_expect(!memcmp(f1.data[0], f2.data[0],
			  f1.count[0] * sizeof(float)),
		  "2 threads' bytes differ from 1 thread's");
	outs_free(&ref);
	outs_free(&f1);
	outs_free(&f2);
}

Test(fast, a_concat_takes_its_batchnorm_in)
{
	/* fast_cat_bn: four Concats each read by a BatchNormalization
	 * alone (three with a Relu after): a concat applies them (variant
	 * "bn"), channels-last after Convs, row-major on the graph inputs,
	 * whose outputs are the reference's bits (NaN from a negative
	 * variance, -0 from a -0 scale, infinities from a mean of 1e30),
	 * unless the plan put the BatchNormalization's output over one of
	 * the concat's inputs (the fixture has such a one: its concat would
	 * overwrite an input it has still to read); the same bytes at 2
	 * threads */
	Outs ref, f1, f2;
	run_three("fast_cat_bn", &ref, &f1, &f2);
	cr_expect_geq(f1.cat_bn, 2, "%d concats took theirs", f1.cat_bn);
	cr_expect_geq(f1.bn, 1, "no BatchNormalization was left out");
	cr_expect_eq(f1.cat_bn + f1.bn, 4, "%d + %d", f1.cat_bn, f1.bn);
	cr_expect_eq(f2.cat_bn, f1.cat_bn, "%d at 2 threads", f2.cat_bn);
	expect_close(&f1, &ref, "1 thread");
	cr_assert_eq(f1.n, 4);
	int nan = 0, negzero = 0;
	for (size_t k = 1; k < 3; k++)
		for (size_t i = 0; i < f1.count[k]; i++) {
			float x = f1.data[k][i], y = ref.data[k][i];
			nan += isnan(y);
			negzero += y == 0 && signbit(y);
			cr_assert((isnan(x) && isnan(y)) ||
					  !memcmp(&x, &y, sizeof(x)),
				  "output %zu element %zu is %g, the "
				  "reference's %g", k, i, x, y);
		}
	cr_expect_gt(nan, 0, "no NaN statistics reached the outputs");
	cr_expect_gt(negzero, 0, "no -0 reached the outputs");
	for (size_t k = 0; k < 4; k++)
		cr_expect(!memcmp(f1.data[k], f2.data[k],
				  f1.count[k] * sizeof(float)),
			  "output %zu: 2 threads' bytes differ from 1 "
			  "thread's", k);
	outs_free(&ref);
	outs_free(&f1);
	outs_free(&f2);
}

Test(fast, transposes_between_layouts_copy_bytes)
{
	/* fast_cl: a ConvNeXt block (depthwise Conv, Transpose to NHWC,
	 * LayerNorm, two MatMuls, Transpose back, per-channel scale, the
	 * residual Add, a depthwise Conv): the Convs' tensors and those
	 * between the second Transpose and the last Conv channels-last, each
	 * Transpose a copy of them, so that the only reorders are the
	 * graph input's and output's (6 when the Transposes held their
	 * tensors row-major); within rounding of the reference */
	Outs f1;
	/* without oneDNN, gearc's gemm still runs the two MatMuls */
	fast_vs_reference("fast_cl", with_dnnl(10, 7), -1, &f1);
	cr_expect_eq(f1.reorders, layout_with_dnnl(2, 0), "%d reorders",
		     f1.reorders);
	cr_expect_eq(f1.nhwc, layout_with_dnnl(5, 0), "%d NHWC tensors",
		     f1.nhwc);
	outs_free(&f1);
}

Test(fast, channel_shuffles_slices_and_splits_keep_nhwc)
{
	/* fast_shuffle: a ShuffleNet unit's channel ops between
	 * convolutions: a shuffle of 2 groups (Reshape, Transpose, Reshape,
	 * which the fuse pass makes one Gather of the channels), Slices of
	 * the halves, a Concat, a shuffle of 3 groups, a Split: every
	 * tensor between the first Conv and the last two channels-last
	 * where oneDNN's convolutions take NHWC (the rank-5 Transpose held
	 * them all row-major), reordered only from x and into the two
	 * outputs; the reference's outputs at 1 and 2 threads */
	Outs f1;
	fast_vs_reference("fast_shuffle", with_dnnl(10, 7), -1, &f1);
	cr_expect_eq(f1.nhwc, at_level(9, 9, 0, 0), "%d NHWC tensors",
		     f1.nhwc);
	cr_expect_eq(f1.reorders, at_level(3, 3, 2, 0), "%d reorders",
		     f1.reorders);
	outs_free(&f1);
}

Test(fast, side_outputs_keep_the_backbone_nhwc)
{
	/* fast_side: x -> Conv -> a (an output) -> Identity -> Conv -> b;
	 * b -> one-channel Conv -> side; b -> Conv -> y.  a and b stay NHWC
	 * (a reordered into the caller's buffer once, at delivery), the
	 * side Conv leaves direct.c's row-major kernel for chanwise.c's,
	 * which reads b as it is; b's and y's convolutions are wino.c's,
	 * y's writing row-major y itself: nothing is reordered (x is read
	 * as it is) */
	Outs f1;
	fast_vs_reference("fast_side", with_dnnl(4, 3), 0, &f1);
	cr_expect_eq(f1.chan, 3, "%d chanwise tasks", f1.chan);
	cr_expect_eq(f1.reorders, at_level(0, 1, 1, 0), "%d reorders",
		     f1.reorders);
	cr_expect_eq(f1.nhwc, layout_with_dnnl(3, 1), "%d NHWC tensors", f1.nhwc);
	outs_free(&f1);
}

Test(fast, residual_after_the_activation_is_a_post_op)
{
	/* fast_residual: x -> Conv -> Relu -> + x -> s1 -> Conv -> Relu ->
	 * + s1 -> Relu -> y: two FusedConv (z_after 1), oneDNN's post-ops
	 * in the node's order (Relu, sum of Z, Relu), no Add left */
	Outs f1;
	fast_vs_reference("fast_residual", with_dnnl(2, 0), 0, &f1);
	cr_expect(level() == LV_NONE || *f1.impls, "oneDNN did not run");
	if (strstr(f1.impls, "avx512_core"))
		cr_expect(!strstr(f1.impls, "ref"), "%s", f1.impls);
	outs_free(&f1);
}

Test(fast, weights_keep_their_layout_partners_row_major)
{
	/* fast_pinned: a + Wa and Wm * GAP(a), W of a's shape: the tensors
	 * that share those weights' layout stay row-major (NHWC there would
	 * pair element i of one layout with element i of the other) */
	Outs f1;
	fast_vs_reference("fast_pinned", with_dnnl(6, 5), -1, &f1);
	cr_expect_eq(f1.nhwc, 0, "%d NHWC tensors", f1.nhwc);
	outs_free(&f1);
}

Test(fast, linear_resize_matches_reference)
{
	/* linear half_pixel x2 by scales, by sizes up and
	 * (pytorch_half_pixel) down: runtime/chanwise.c's at rank 4, and
	 * oneDNN's resampling at rank 3 (up by sizes); the 0.6 scale whose
	 * output is not 0.6 of the input runs the reference kernel */
	Outs f1;
	fast_vs_reference("fast_resize", with_dnnl(4, 3), 0, &f1);
	cr_expect_eq(f1.chan, 3, "%d chanwise tasks", f1.chan);
	outs_free(&f1);
}

Test(fast, linear_resize_in_either_layout_matches_reference)
{
	/* fast_lerp: runtime/chanwise.c's linear Resize: 6 of [2,1,7,9]
	 * (up and down by sizes no whole factor apart, pytorch_half_pixel,
	 * x2 by scales, one output row, one split over 2 threads), one of
	 * [1,4,6,5] row-major, and 2 of 32 channels NHWC between 3
	 * convolutions (the second split over 2 threads; the 3x3 one to 1
	 * channel after the first chanwise.c's too, and the 1x1 one after
	 * the second, whose output, NHWC too, is delivered row-major) */
	Outs f1;
	fast_vs_reference("fast_lerp", with_dnnl(12, 11), 0, &f1);
	cr_expect_eq(f1.chan, 11, "%d chanwise tasks", f1.chan);
	cr_expect_eq(f1.nhwc, at_level(4, 4, 0, 0), "%d NHWC tensors",
		     f1.nhwc);
	outs_free(&f1);
}

/* Element i of n floats a and b differs, or -1. */
static int64_t first_difference(const float *a, const float *b, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (memcmp(&a[i], &b[i], sizeof(float)))
			return i;
	return -1;
}

/* om's one output for its one float input x, on one thread, into
 * malloc'd *y of *ny floats. */
static void run_one(const char *om, const Tensor *x, float **y, int64_t *ny)
{
	gearrt_model *m;
	gearrt_session *s;
	gearrt_options opt = { .threads = 1 };
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, &opt, &s), GEARRT_OK);
	gearrt_tensor in, out;
	cr_assert_eq(gearrt_input_info(m, 0, &in), GEARRT_OK);
	in.data = (void *)x->data;
	in.size = (size_t)shape_numel(&x->shape) * sizeof(float);
	memset(&out, 0, sizeof(out));
	cr_assert_eq(gearrt_run(s, &in, 1, &out, 1), GEARRT_OK, "%s",
		     gearrt_last_error());
	*ny = (int64_t)(out.size / sizeof(float));
	*y = malloc(out.size + 1);
	memcpy(*y, out.data, out.size);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
}

Test(fast, linear_resize_is_onnx_runtimes_to_the_bit)
{
	/* tests/fixtures/resize_ort (tests/gen_resize_ort.py): linear
	 * Resize of [N,C,H,W] by chanwise.c gives ONNX Runtime's output
	 * bit for bit, row-major (half_pixel up by no whole factor and by
	 * 2, pytorch_half_pixel down) and channels-last between two
	 * convolutions (oneDNN's, as ONNX Runtime's exact on the identity
	 * window, not wino.c's, which AVX2 would choose) */
	static const char *const cases[] = { "up", "twice", "pytorch",
					     "nhwc" };
	avx2_as_elsewhere();
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char model[128], xpath[160], want_path[160];
		snprintf(model, sizeof(model), "resize_ort/%s/model", cases[c]);
		snprintf(xpath, sizeof(xpath),
			 "tests/fixtures/resize_ort/%s/x.npy", cases[c]);
		snprintf(want_path, sizeof(want_path),
			 "tests/fixtures/resize_ort/%s/y.npy", cases[c]);
		char *dir = temp_dir(), *om = compile_fixture(dir, "m", model,
							      NULL);
		Outs f1 = run_om(om, false, 1);
		cr_expect_eq(f1.chan, 1, "%s: %d chanwise tasks", cases[c],
			     f1.chan);
		cr_expect_eq(f1.nhwc, c == 3 ? layout_with_dnnl(2, 0) : 0,
			     "%s: %d NHWC tensors",
			     cases[c], f1.nhwc);
		outs_free(&f1);
		Arena a;
		arena_init(&a);
		const Tensor *x = npy_read(&a, xpath);
		const Tensor *want = npy_read(&a, want_path);
		cr_assert(x && want, "%s", last_error());
		float *got;
		int64_t n;
		run_one(om, x, &got, &n);
		cr_assert_eq(n, shape_numel(&want->shape), "%s", cases[c]);
		int64_t i = first_difference(got, want->data, n);
		cr_expect_eq(i, -1, "%s: element %lld is %.9g, ONNX Runtime's "
			     "%.9g", cases[c], (long long)i,
			     i < 0 ? 0 : got[i],
			     i < 0 ? 0 : ((const float *)want->data)[i]);
		free(got);
		arena_release(&a);
		remove_tree(dir);
		free(dir);
		free(om);
	}
}

Test(fast, few_output_channels_read_nhwc)
{
	/* fast_fewconv: runtime/chanwise.c's Conv to at most 8 channels,
	 * from at least 32 an output channel: 3 reading NHWC (from 100
	 * channels with stride 2, uneven pads and a bias, and dilation 2;
	 * from 80, split over 2 threads) and one reading the row-major
	 * input with stride 2; 16 channels to 4 is not (chanwise.c's ran a
	 * text detector's at half the speed of the alternatives), nor are
	 * the convolutions to 100, 80 and 16 channels */
	Outs f1;
	fast_vs_reference("fast_fewconv", with_dnnl(8, 4), 0, &f1);
	cr_expect_eq(f1.chan, 4, "%d chanwise tasks", f1.chan);
	outs_free(&f1);
}

Test(fast, gathers_and_views_match_reference)
{
	/* runtime/direct.c: a Gather of constant indices, the Relu before
	 * the Reshape the plan aliased (a no-op), the Sigmoid after it;
	 * chanwise.c: the other Gather, of channels of a rank-4 tensor */
	fast_vs_reference("fast_views", 5, 4, NULL);
}

Test(fast, rows_and_pairs_match_reference)
{
	/* runtime/direct.c: 2 LayerNormalization (last axis with B; the
	 * last two, no B), Add, Sub, Mul, Div of same shapes, Softmax of
	 * rows of 48 and 37 */
	fast_vs_reference("fast_rows", 8, 8, NULL);
}

/* fast_threads at 2 threads: its 6 plain-C kernels, parallel of them
 * on 2 threads, the reference kernels' outputs. */
static void threads_fixture(int parallel)
{
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "fast_threads", "fast_threads", NULL);
	Outs ref = run_om(om, true, 1), f2 = run_om(om, false, 2);
	cr_expect_eq(f2.parallel, parallel, "%d parallel", f2.parallel);
	cr_expect_eq(f2.direct + f2.chan, 6);
	expect_close(&f2, &ref, "2 threads");
	outs_free(&ref);
	outs_free(&f2);
	remove_tree(dir);
	free(dir);
	free(om);
}

Test(fast, plain_c_paths_split_rows_over_threads)
{
	/* fast_threads at 2 threads: the few-channel ConvTranspose and
	 * Conv, Softmax, LayerNormalization, nearest Resize and per-channel
	 * Mul (each of 2^18 or more) run on both, and compute the reference
	 * kernels' outputs */
	rt_gear_serial = 0; /* each kernel's own choice */
	threads_fixture(6);
}

Test(fast, a_small_gear_runs_on_one_thread)
{
	/* fast_threads' kernels of 2^18 flops or more would run on 2
	 * threads (above), but its whole gear is less work than
	 * rt_gear_serial: every kernel on one, the same outputs */
	threads_fixture(0);
}

Test(fast, a_gear_of_small_nodes_runs_on_one_thread)
{
	/* the same with the total's bound at 1 flop and the average's at
	 * 2^22 flops, above fast_threads' nodes': every kernel still on
	 * one thread */
	rt_gear_serial = 1;
	rt_node_serial = 4.0 * (1 << 20);
	threads_fixture(0);
}

Test(fast, small_primitives_run_on_one_thread)
{
	/* at 2 threads: fast_chain's three 16-channel 3x3 convolutions of
	 * 12x12 (663k flops each) are parallel, fast_mm's MatMul and Gemm
	 * (a few thousand flops each) on one */
	rt_gear_serial = 0; /* each kernel's own choice */
	char *dir = temp_dir();
	char *chain = compile_fixture(dir, "fast_chain", "fast_chain", NULL);
	char *mm = compile_fixture(dir, "fast_mm", "fast_mm", NULL);
	Outs c = run_om(chain, false, 2), m = run_om(mm, false, 2);
	cr_expect_eq(c.parallel, with_dnnl(3, 0), "%d parallel", c.parallel);
	cr_expect_eq(m.parallel, 0, "%d parallel", m.parallel);
	outs_free(&c);
	outs_free(&m);
	remove_tree(dir);
	free(dir);
	free(chain);
	free(mm);
}

Test(fast, large_input_convolution_runs_image_by_image)
{
	/* fast_batch: x [4,8,96,96] (1.2 MB) -> Conv to 24 channels + Relu
	 * -> Conv + x: the first convolution reorders x image by image; the
	 * second, reading a planned tensor, takes the batch at once */
	Outs f1;
	fast_vs_reference("fast_batch", with_dnnl(2, 0), 0, &f1);
	cr_expect_eq(f1.split, with_dnnl(1, 0), "%d kernels split", f1.split);
	outs_free(&f1);
}

Test(fast, detector_stem_and_head_match_reference)
{
	/* fast_heads: x [1,3,24,76] -> Conv to 8 channels, stride 2, Relu
	 * -> Conv to 16 -> c16; the first reads x as it is (written blocked
	 * by 8 channels, NHWC's bytes), so only c16 is reordered and the
	 * stem's output is NHWC.  A ConvTranspose of strides 2 x 3 and odd
	 * widths (runtime/direct.c) */
	Outs f1;
	fast_vs_reference("fast_heads", with_dnnl(3, 1), 1, &f1);
	cr_expect_eq(f1.reorders, layout_with_dnnl(1, 0), "%d reorders", f1.reorders);
	cr_expect_eq(f1.nhwc, layout_with_dnnl(1, 0), "%d NHWC tensors", f1.nhwc);
	outs_free(&f1);
}

Test(fast, channel_operand_first_matches_reference)
{
	/* fast_chan: c - x and c / x by per-channel constants (chanwise.c's
	 * swapped operands), on the graph input (row-major) and between two
	 * convolutions (NHWC: the outputs of the first, with its Sigmoid
	 * fused, of the Div and of the Sub, whose operand is [2,C,1,1]; the
	 * second, 32 channels to 1, chanwise.c's too) */
	Outs f1;
	fast_vs_reference("fast_chan", with_dnnl(6, 5), -1, &f1);
	cr_expect_eq(f1.chan, 5, "%d chanwise tasks", f1.chan);
	cr_expect_eq(f1.nhwc, at_level(3, 3, 0, 0), "%d NHWC tensors",
		     f1.nhwc);
	outs_free(&f1);
}

Test(fast, matmul_gemm_match_reference)
{
	/* 3 MatMul (constant, batched constant, two variables), 2 Gemm;
	 * the Transpose (runtime/direct.c); without oneDNN, gearc's gemm
	 * still runs two products by a constant matrix */
	fast_vs_reference("fast_mm", with_dnnl(6, 3), 1, NULL);
}

Test(fast, rnn_ops_match_reference)
{
	/* oneDNN's cells: 1 LSTM (whole sequence_lens), 2 GRU
	 * (linear_before_reset 0, 1; below AVX-512 small.c's packed cells),
	 * RNN; runtime/small.c's: 3 LSTM (states and bias, reverse,
	 * bidirectional); the one with clip runs its reference kernel */
	fast_vs_reference("fast_rnn", with_dnnl(7, 5), 0, NULL);
}

Test(fast, bidirectional_rnn_ops_match_reference)
{
	/* bidirectional GRU (linear_before_reset 1 with initial state and
	 * bias; 0 with its Y read by nothing), LSTM (both initial states,
	 * every output) and RNN, a batch of 3: on AVX-512 each one oneDNN
	 * primitive; below it the GRUs and the LSTM small.c's packed cells
	 * (a batch of rows), the RNN oneDNN's or, without it, its
	 * reference kernel */
	Outs f1;
	bool avx512 = cpu_isa() >= CPU_LEVEL_AVX512;
	fast_vs_reference("fast_birnn", with_dnnl(4, 3), 0, &f1);
	cr_expect_eq(f1.dnnl, avx512 ? 4 : with_dnnl(1, 0), "%d oneDNN tasks",
		     f1.dnnl);
	outs_free(&f1);
}

/* ---- the fused ops, on nodes built here -------------------------------- */

typedef struct Fixture {
	Model *m;
	Graph *g;
	gearrt_model md;
	RunCtx s;
	Prepared p;
	Tensor vt[8];
	const Tensor *cur[8];
} Fixture;

static void fixture_init(Fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->m = model_new();
	f->g = graph_new(&f->m->arena, "fused", NULL);
	f->md.m = f->m;
	f->s.model = &f->md;
	f->s.threads = 1;
	f->p.g = f->g;
	f->p.vt = f->vt;
	f->p.cur = f->cur;
}

/* A float value of shape dims; a weight holding data if data is set. */
static ValId add_value(Fixture *f, const char *name, int rank,
		       const int64_t *dims, float *data)
{
	ValId v = graph_add_value(f->g, name, data ? VAL_WEIGHT : VAL_NODE);
	Value *x = &f->g->vals[v];
	x->dtype = DT_FLOAT;
	x->tkind = TK_TENSOR;
	x->shape.rank = rank;
	memcpy(x->shape.dims, dims, (size_t)rank * sizeof(int64_t));
	if (data)
		x->konst = tensor_new(&f->m->arena, name, DT_FLOAT, &x->shape,
				      data);
	return v;
}

static void set_acts(Fixture *f, Node *n, int count, const char **names,
		     const float *params)
{
	Attr *a = node_add_attr(f->g, n, "activations", ATTR_STRINGS);
	Bytes *b = arena_array(&f->m->arena, (size_t)count, sizeof(Bytes));
	for (int i = 0; i < count; i++)
		b[i] = (Bytes){ strlen(names[i]), (const uint8_t *)names[i] };
	a->n = count;
	a->strings = b;
	Attr *pa = node_add_attr(f->g, n, "activation_params", ATTR_FLOATS);
	pa->n = 2 * count;
	pa->floats = params;
}

/* What the last run_fused's oneDNN kernel did (dnnl_fast_info). */
static DnnlInfo fused_info;

/* Runs node n through the kernel registry (its tensors row-major): a
 * fast path must take it (oneDNN's: without it, LV_NONE, the reference
 * kernel must, and the node is not run: false); in[] the tensors of its
 * inputs. */
static bool run_fused(Fixture *f, Node *n, const Tensor **in, float *y,
		      size_t ny)
{
	ValId yo = n->outputs[0];
	Tensor out = { .dtype = DT_FLOAT, .shape = f->g->vals[yo].shape,
		       .data = y, .nbytes = ny * sizeof(float) };
	Tensor *outs[1] = { &out };
	Task t = { .n = n, .out = outs };
	f->cur[yo] = &out;
	cr_assert_eq(rt_kernel_choose(&f->s, &f->p, &t), 0, "%s",
		     last_error());
	if (level() == LV_NONE && !rt_fast(&t)) {
		cr_expect_str_eq(rt_kernel_name(&t), "ref");
		return false;
	}
	cr_assert(rt_fast(&t), "no fast path took %s: %s runs it",
		  n->op_type, rt_kernel_name(&t));
	cr_assert_eq(rt_kernel_build(&f->s, &f->p, &t), 0, "%s",
		     last_error());
	cr_assert_eq(t.fast.run(t.fast.state, in, outs), 0, "%s",
		     last_error());
	dnnl_fast_info(&t.fast, &fused_info);
	t.fast.free(t.fast.state);
	free(t.lay);
	return true;
}

static float act(const char *name, float a, float b, float x)
{
	if (!strcmp(name, "Relu"))
		return x > 0 ? x : 0;
	if (!strcmp(name, "LeakyRelu"))
		return x > 0 ? x : a * x;
	if (!strcmp(name, "Clip"))
		return x < a ? a : x > b ? b : x;
	if (!strcmp(name, "Sigmoid"))
		return 1 / (1 + expf(-x));
	if (!strcmp(name, "HardSigmoid"))
		return fmaxf(0, fminf(1, a * x + b));
	if (!strcmp(name, "HardSwish"))
		return x * fmaxf(0, fminf(1, x / 6 + 0.5f));
	if (!strcmp(name, "Gelu"))
		return 0.5f * x * (1 + erff(x / sqrtf(2)));
	if (!strcmp(name, "Linear"))
		return a * x + b;
	return tanhf(x);
}

static float acts(int count, const char **names, const float *params,
		  float x)
{
	for (int i = 0; i < count; i++)
		x = act(names[i], params[2 * i], params[2 * i + 1], x);
	return x;
}

static void expect_floats(const float *got, const float *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cr_assert(fabsf(got[i] - want[i]) <=
				  1e-5f + 1e-4f * fabsf(want[i]),
			  "element %zu is %g, expected %g", i, got[i],
			  want[i]);
}

/* Conv of X [1,2,5,5] by W [3,2,3,3] + B, pads 1: Y[0][o][i][j]. */
static float conv_at(const float *x, const float *w, const float *b, int o,
		     int i, int j)
{
	float s = b[o];
	for (int c = 0; c < 2; c++)
		for (int k = 0; k < 9; k++) {
			int ii = i + k / 3 - 1, jj = j + k % 3 - 1;
			if (ii >= 0 && ii < 5 && jj >= 0 && jj < 5)
				s += x[c * 25 + ii * 5 + jj] *
				     w[(o * 2 + c) * 9 + k];
		}
	return s;
}

Test(fast, fused_conv_sum_and_activations)
{
	/* X [1,2,5,5], W [3,2,3,3], pads 1: Y [1,3,5,5]; + Z; then
	 * HardSwish, LeakyRelu(0.1), Clip(-0.5, 2), HardSigmoid(0.3, 0.4) */
	static const char *names[] = { "HardSwish", "LeakyRelu", "Clip",
				       "HardSigmoid" };
	static const float params[] = { 0, 0, 0.1f, 0, -0.5f, 2, 0.3f, 0.4f };
	float x[50], w[54], b[3], z[75], y[75], want[75];
	fill(x, 50, 1), fill(w, 54, 2), fill(b, 3, 3), fill(z, 75, 4);
	Fixture f;
	fixture_init(&f);
	int64_t xd[] = { 1, 2, 5, 5 }, wd[] = { 3, 2, 3, 3 }, bd[] = { 3 };
	int64_t yd[] = { 1, 3, 5, 5 };
	ValId vx = add_value(&f, "x", 4, xd, NULL);
	ValId vw = add_value(&f, "w", 4, wd, w);
	ValId vb = add_value(&f, "b", 1, bd, b);
	ValId vz = add_value(&f, "z", 4, yd, NULL);
	ValId vy = add_value(&f, "y", 4, yd, NULL);
	Node *n = graph_add_node(f.g, "fc", "FusedConv", "ai.gearc", 4, 1);
	n->inputs[0] = vx, n->inputs[1] = vw, n->inputs[2] = vb;
	n->inputs[3] = vz, n->outputs[0] = vy;
	node_add_ints(f.g, n, "pads", (int64_t[]){ 1, 1, 1, 1 }, 4);
	set_acts(&f, n, 4, names, params);
	for (int o = 0; o < 3; o++)
		for (int at = 0; at < 25; at++)
			want[o * 25 + at] = acts(4, names, params,
						 conv_at(x, w, b, o, at / 5,
							 at % 5) +
							 z[o * 25 + at]);
	Tensor tx = { .data = x }, tz = { .data = z };
	const Tensor *in[4] = { &tx, f.g->vals[vw].konst, f.g->vals[vb].konst,
				&tz };
	if (run_fused(&f, n, in, y, 75))
		expect_floats(y, want, 75);
	arena_release(&f.s.scratch);
	model_free(f.m);
}

Test(fast, fused_gemm_and_matmul)
{
	/* FusedGemm: A [4,6]^T... transB: Y = Sigmoid(Linear(3, -0.5)(0.5
	 * A B^T + 2 C)) (values outside [0, 1] before the Sigmoid);
	 * FusedMatMul: Y = Gelu(Tanh(Relu(A [2,4,6] x B [6,5] + Bias [5]))) */
	static const char *gn[] = { "Linear", "Sigmoid" },
			  *mn[] = { "Relu", "Tanh", "Gelu" };
	static const float gp[] = { 3, -0.5f, 0, 0 },
			   mp[] = { 0, 0, 0, 0, 0, 0 };
	float a[48], bg[30], c[5], bm[30], bias[5], y[40], want[40];
	fill(a, 48, 5), fill(bg, 30, 6), fill(c, 5, 7), fill(bm, 30, 8);
	fill(bias, 5, 9);
	Fixture f;
	fixture_init(&f);
	int64_t ad[] = { 4, 6 }, bd[] = { 5, 6 }, cd[] = { 5 }, yd[] = { 4, 5 };
	ValId va = add_value(&f, "a", 2, ad, NULL);
	ValId vb = add_value(&f, "b", 2, bd, bg);
	ValId vc = add_value(&f, "c", 1, cd, c);
	ValId vy = add_value(&f, "y", 2, yd, NULL);
	Node *n = graph_add_node(f.g, "fg", "FusedGemm", "ai.gearc", 3, 1);
	n->inputs[0] = va, n->inputs[1] = vb, n->inputs[2] = vc;
	n->outputs[0] = vy;
	node_add_attr(f.g, n, "transB", ATTR_INT)->i = 1;
	node_add_attr(f.g, n, "alpha", ATTR_FLOAT)->f = 0.5f;
	node_add_attr(f.g, n, "beta", ATTR_FLOAT)->f = 2.0f;
	set_acts(&f, n, 2, gn, gp);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 5; j++) {
			float s = 0;
			for (int k = 0; k < 6; k++)
				s += a[i * 6 + k] * bg[j * 6 + k];
			want[i * 5 + j] = acts(2, gn, gp, 0.5f * s + 2 * c[j]);
		}
	Tensor ta = { .data = a };
	const Tensor *in[3] = { &ta, f.g->vals[vb].konst, f.g->vals[vc].konst };
	if (run_fused(&f, n, in, y, 20))
		expect_floats(y, want, 20);

	int64_t a3[] = { 2, 4, 6 }, b2[] = { 6, 5 }, y3[] = { 2, 4, 5 };
	ValId ma = add_value(&f, "ma", 3, a3, NULL);
	ValId mb = add_value(&f, "mb", 2, b2, bm);
	ValId mc = add_value(&f, "mbias", 1, cd, bias);
	ValId my = add_value(&f, "my", 3, y3, NULL);
	Node *mm = graph_add_node(f.g, "fm", "FusedMatMul", "ai.gearc", 3, 1);
	mm->inputs[0] = ma, mm->inputs[1] = mb, mm->inputs[2] = mc;
	mm->outputs[0] = my;
	set_acts(&f, mm, 3, mn, mp);
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 5; j++) {
			float s = bias[j];
			for (int k = 0; k < 6; k++)
				s += a[i * 6 + k] * bm[k * 5 + j];
			want[i * 5 + j] = acts(3, mn, mp, s);
		}
	const Tensor *min[3] = { &ta, f.g->vals[mb].konst,
				 f.g->vals[mc].konst };
	if (run_fused(&f, mm, min, y, 40))
		expect_floats(y, want, 40);
	arena_release(&f.s.scratch);
	model_free(f.m);
}

Test(fast, matmul_by_one_matrix_is_one_product)
{
	/* torch's sequence-first [S, N, E] x W [E, N'] with N = 1 (ViT's
	 * and nn.TransformerEncoder's in-projection), and [2,3,4,6] x [1,6,5]:
	 * B one matrix, so oneDNN runs one [S N, E] x [E, N'] product
	 * (rank 2), not a batch of one-row ones (8x slower), with the
	 * reference's result; below AVX-512 gearc's gemm does, every row
	 * one product (runtime/gemv.c) */
	static const int64_t ad[2][4] = { { 7, 1, 6 }, { 2, 3, 4, 6 } };
	static const int ar[2] = { 3, 4 };
	float a[144], w[30], y[120], want[120];
	fill(a, 144, 11), fill(w, 30, 12);
	for (int c = 0; c < 2; c++) {
		Fixture f;
		fixture_init(&f);
		int64_t bd[3] = { 1, 6, 5 }, yd[4];
		memcpy(yd, ad[c], sizeof(yd));
		yd[ar[c] - 1] = 5;
		ValId va = add_value(&f, "a", ar[c], ad[c], NULL);
		ValId vb = add_value(&f, "b", c ? 3 : 2, c ? bd : bd + 1, w);
		ValId vy = add_value(&f, "y", ar[c], yd, NULL);
		Node *n = graph_add_node(f.g, "mm", "MatMul", "", 2, 1);
		n->op = OP_MatMul;
		n->inputs[0] = va, n->inputs[1] = vb, n->outputs[0] = vy;
		int64_t rows = 1;
		for (int i = 0; i < ar[c] - 1; i++)
			rows *= ad[c][i];
		for (int64_t i = 0; i < rows; i++)
			for (int j = 0; j < 5; j++) {
				float s = 0;
				for (int k = 0; k < 6; k++)
					s += a[i * 6 + k] * w[k * 5 + j];
				want[i * 5 + j] = s;
			}
		Tensor ta = { .data = a };
		const Tensor *in[2] = { &ta, f.g->vals[vb].konst };
		/* without oneDNN (LV_NONE) the reference runs it */
		if (run_fused(&f, n, in, y, (size_t)rows * 5)) {
			expect_floats(y, want, (size_t)rows * 5);
			cr_expect_eq(fused_info.mm_rank,
				     cpu_isa() < CPU_LEVEL_AVX512 ? 0 : 2,
				     "case %d: rank %d", c,
				     fused_info.mm_rank);
		}
		arena_release(&f.s.scratch);
		model_free(f.m);
	}
}

Test(fast, unsupported_activation_falls_back)
{
	static const char *names[] = { "Softsign" };
	static const float params[] = { 0, 0 };
	float w[30];
	fill(w, 30, 3);
	Fixture f;
	fixture_init(&f);
	int64_t ad[] = { 4, 6 }, bd[] = { 6, 5 }, yd[] = { 4, 5 };
	ValId va = add_value(&f, "a", 2, ad, NULL);
	ValId vb = add_value(&f, "b", 2, bd, w);
	ValId vy = add_value(&f, "y", 2, yd, NULL);
	Node *n = graph_add_node(f.g, "fm", "FusedMatMul", "ai.gearc", 2, 1);
	n->inputs[0] = va, n->inputs[1] = vb, n->outputs[0] = vy;
	set_acts(&f, n, 1, names, params);
	Tensor out = { 0 };
	Tensor *outs[1] = { &out };
	Task t = { .n = n, .out = outs };
	f.cur[vy] = &out;
	cr_assert_eq(rt_kernel_choose(&f.s, &f.p, &t), 0);
	cr_expect_str_eq(rt_kernel_name(&t), "ref");
	cr_assert_null(t.fast.run);
	arena_release(&f.s.scratch);
	model_free(f.m);
}

Test(fast, direct_sigmoid_softmax_edge_values)
{
	/* Sigmoid: NaN stays NaN, +-inf and +-100 saturate; Softmax (rows
	 * of 20: a vector and a tail of 4): a row with a NaN is all NaN, a
	 * -inf element gets 0, a row near -1000 is the same as near 0 */
	float x[8] = { NAN, INFINITY, -INFINITY, 100, -100, 0, 3, -3 }, y[8];
	direct_sigmoid_run(x, y, 8);
	cr_expect(isnan(y[0]));
	for (int i = 1; i < 8; i++)
		cr_expect(fabsf(y[i] - 1 / (1 + expf(-x[i]))) <= 1e-7f,
			  "sigmoid(%g) = %g", x[i], y[i]);
	Fixture f;
	fixture_init(&f);
	Opset os = { "", 17 };
	f.m->nopsets = 1;
	f.m->opsets = &os;
	int64_t d[] = { 3, 20 };
	ValId vx = add_value(&f, "x", 2, d, NULL);
	ValId vy = add_value(&f, "y", 2, d, NULL);
	Node *n = graph_add_node(f.g, "sm", "Softmax", "", 1, 1);
	n->op = OP_Softmax;
	n->inputs[0] = vx, n->outputs[0] = vy;
	float in[60], out[60];
	double want[60];
	fill(in, 60, 11);
	in[7] = NAN;
	in[20 + 5] = in[40 + 5] = -INFINITY;
	for (int i = 0; i < 20; i++)
		in[40 + i] -= 1000;
	for (int r = 1; r < 3; r++) {
		double mx = -INFINITY, sum = 0;
		for (int i = 0; i < 20; i++) /* (fmax's reduction: an
					      * aarch64 gcc 12 ICE) */
			mx = in[20 * r + i] > mx ? in[20 * r + i] : mx;
		for (int i = 0; i < 20; i++)
			sum += (want[20 * r + i] = exp(in[20 * r + i] - mx));
		for (int i = 0; i < 20; i++)
			want[20 * r + i] /= sum;
	}
	Tensor tx = { .data = in };
	const Tensor *tin[1] = { &tx };
	run_fused(&f, n, tin, out, 60);
	for (int i = 0; i < 20; i++) {
		cr_expect(isnan(out[i]), "row 0 element %d: %g", i, out[i]);
		for (int r = 1; r < 3; r++)
			cr_expect(fabs(out[20 * r + i] - want[20 * r + i]) <=
					  1e-6 * want[20 * r + i] + 1e-9,
				  "row %d element %d: %g, expected %g", r, i,
				  out[20 * r + i], want[20 * r + i]);
	}
	model_free(f.m);
}

Test(fast, softmax_any_axis_matches_reference)
{
	/* Softmax and LogSoftmax over the last axis, axis 1 and 2 (floats
	 * inner to each element) and axis 0, at opset 13; and at opset 11,
	 * where the axes from axis on are one row */
	fast_vs_reference("fast_softmax", 7, 7, NULL);
	fast_vs_reference("fast_softmax11", 7, 7, NULL);
}

Test(fast, broadcast_and_unary_ops_match_reference)
{
	/* runtime/ew.c: Add, Sub (a scalar first), Mul, Div, Max, Min, Pow,
	 * Greater, LessOrEqual at numpy broadcasts of [2,3,4,5], [3,1,5]
	 * and [5]; 23 unary math and activation ops, Floor and Ceil of 3x,
	 * Clip: 35 nodes (the Casts of the comparisons and the Mul by 3 are
	 * convert.c's and direct.c's) */
	Outs f1;
	fast_vs_reference("fast_ew", 38, 1, &f1);
	cr_expect_eq(f1.ew, 35, "%d ew tasks", f1.ew);
	outs_free(&f1);
}

/* Node n's reference kernel (its run hook) on in[] into y (ny bytes,
 * of output 0's dtype and shape). */
static void run_reference_node(Fixture *f, Node *n, const Tensor **in,
			       void *y, size_t ny)
{
	const Value *yv = &f->g->vals[n->outputs[0]];
	Tensor out = { .dtype = yv->dtype, .shape = yv->shape, .data = y,
		       .nbytes = ny };
	Tensor *outs[1] = { &out };
	uint8_t set[1] = { 0 };
	Arena scratch = { 0 };
	OpBind b = { .in = in, .out = outs, .set = set };
	OpCtx c = { .model = f->m, .g = f->g, .n = n, .opset = 17,
		    .fold_limit = INT64_MAX, .bind = &b, .arena = &scratch };
	cr_assert_eq(op_info[n->op].run(&c), 0, "%s", last_error());
	cr_assert(set[0], "%s set no output", n->op_type);
	arena_release(&scratch);
}

/* Edge values first, then ordinary ones. */
static const float edges[] = { 0.0f, -0.0f, NAN, INFINITY, -INFINITY,
			       1e-40f, -1e-40f, FLT_MAX, -FLT_MAX, 2.0f,
			       -2.5f, 0.5f, -0.5f, 1.0f, -1.0f, 100.0f,
			       -100.0f, 7.25f, 0.999f, -3.0f };
enum { NEDGE = sizeof(edges) / sizeof(edges[0]) };

Test(fast, elementwise_edge_values_match_reference)
{
	/* runtime/ew.c on NaN, +-inf, +-0, denormals, +-FLT_MAX: the binary
	 * ops (a [20, 20] against b [20] broadcast, every pair of edges) and
	 * the exact unary ops give the reference's bits; the activations
	 * its values within act.h's accuracy, NaN where it is NaN */
	static const char *const bin[] = { "Add", "Sub", "Mul", "Div", "Max",
					   "Min", "Pow", "PRelu", "Greater",
					   "Equal", "LessOrEqual" };
	static const char *const exact[] = { "Reciprocal", "Softsign",
					     "Floor", "Ceil", "Round", "Sign",
					     "Sin", "Cosh", "Atanh", "Celu",
					     "ThresholdedRelu" };
	static const char *const acts_[] = { "Tanh", "LeakyRelu", "Elu",
					     "Selu", "Softplus", "HardSigmoid",
					     "HardSwish", "Mish" };
	float a[NEDGE * NEDGE], b[NEDGE], y[NEDGE * NEDGE];
	float want[NEDGE * NEDGE];
	for (int i = 0; i < NEDGE * NEDGE; i++)
		a[i] = edges[i / NEDGE];
	memcpy(b, edges, sizeof(b));
	int64_t ad[] = { NEDGE, NEDGE }, bd[] = { NEDGE };
	for (size_t o = 0; o < sizeof(bin) / sizeof(bin[0]); o++) {
		Fixture f;
		fixture_init(&f);
		Opset os = { "", 17 };
		f.m->nopsets = 1;
		f.m->opsets = &os;
		ValId va = add_value(&f, "a", 2, ad, NULL);
		ValId vb = add_value(&f, "b", 1, bd, NULL);
		ValId vy = add_value(&f, "y", 2, ad, NULL);
		bool cmp = o >= 8;
		f.g->vals[vy].dtype = cmp ? DT_BOOL : DT_FLOAT;
		Node *n = graph_add_node(f.g, "n", bin[o], "", 2, 1);
		n->op = (uint16_t)op_lookup("", bin[o]);
		n->inputs[0] = va, n->inputs[1] = vb, n->outputs[0] = vy;
		Tensor ta = { .dtype = DT_FLOAT, .shape = f.g->vals[va].shape,
			      .data = a, .nbytes = sizeof(a) };
		Tensor tb = { .dtype = DT_FLOAT, .shape = f.g->vals[vb].shape,
			      .data = b, .nbytes = sizeof(b) };
		const Tensor *in[2] = { &ta, &tb };
		size_t ny = NEDGE * NEDGE * (cmp ? 1 : 4);
		run_reference_node(&f, n, in, want, ny);
		memset(y, 0xA5, sizeof(y));
		run_fused(&f, n, in, y, ny / 4);
		cr_expect(!memcmp(y, want, ny), "%s differs from the reference",
			  bin[o]);
		model_free(f.m);
	}
	for (int pass = 0; pass < 2; pass++) {
		const char *const *ops = pass ? acts_ : exact;
		size_t nops = pass ? sizeof(acts_) / sizeof(acts_[0])
				   : sizeof(exact) / sizeof(exact[0]);
		for (size_t o = 0; o < nops; o++) {
			Fixture f;
			fixture_init(&f);
			Opset os = { "", 17 };
			f.m->nopsets = 1;
			f.m->opsets = &os;
			ValId vx = add_value(&f, "x", 1, bd, NULL);
			ValId vy = add_value(&f, "y", 1, bd, NULL);
			Node *n = graph_add_node(f.g, "n", ops[o], "", 1, 1);
			n->op = (uint16_t)op_lookup("", ops[o]);
			n->inputs[0] = vx, n->outputs[0] = vy;
			Tensor tx = { .dtype = DT_FLOAT,
				      .shape = f.g->vals[vx].shape, .data = b,
				      .nbytes = sizeof(b) };
			const Tensor *in[1] = { &tx };
			run_reference_node(&f, n, in, want, sizeof(b));
			run_fused(&f, n, in, y, NEDGE);
			for (int i = 0; i < NEDGE; i++) {
				bool same = !memcmp(&y[i], &want[i], 4) ||
					    (isnan(y[i]) && isnan(want[i]));
				if (!pass) {
					cr_expect(same, "%s(%g) = %g, the "
						  "reference %g", ops[o], b[i],
						  y[i], want[i]);
					continue;
				}
				cr_expect(same || fabsf(y[i] - want[i]) <=
							  3e-7f * fabsf(want[i]) +
								  1e-6f,
					  "%s(%g) = %g, the reference %g",
					  ops[o], b[i], y[i], want[i]);
			}
			model_free(f.m);
		}
	}
}

Test(fast, prelu_slopes_match_reference)
{
	/* ew.binary's PRelu, x [2,3,4,5] of edge values by a slope that
	 * is one value, one per channel ([3,1,1] and [1,3,1,1]), one per
	 * element (negative, NaN and -0 among them): the reference's
	 * bits, at 1 and 2 threads */
	static const int64_t sd[][4] = { { 1 }, { 3, 1, 1 }, { 1, 3, 1, 1 },
					 { 2, 3, 4, 5 } };
	static const int sr[] = { 1, 3, 4, 4 };
	float x[120], sl[120], y[120], want[120];
	for (int i = 0; i < 120; i++) {
		x[i] = edges[i % NEDGE];
		sl[i] = edges[(i * 7 + 3) % NEDGE];
	}
	sl[0] = 0.25f;
	int64_t xd[] = { 2, 3, 4, 5 };
	for (int k = 0; k < 4; k++)
		for (int threads = 1; threads <= 2; threads++) {
			Fixture f;
			fixture_init(&f);
			f.s.threads = threads;
			Opset os = { "", 16 };
			f.m->nopsets = 1;
			f.m->opsets = &os;
			ValId vx = add_value(&f, "x", 4, xd, NULL);
			ValId vs = add_value(&f, "s", sr[k], sd[k], NULL);
			ValId vy = add_value(&f, "y", 4, xd, NULL);
			Node *n = graph_add_node(f.g, "p", "PRelu", "", 2, 1);
			n->op = OP_PRelu;
			n->inputs[0] = vx, n->inputs[1] = vs, n->outputs[0] = vy;
			Tensor tx = { .dtype = DT_FLOAT,
				      .shape = f.g->vals[vx].shape, .data = x,
				      .nbytes = sizeof(x) };
			Tensor ts = { .dtype = DT_FLOAT,
				      .shape = f.g->vals[vs].shape, .data = sl,
				      .nbytes = shape_numel(&f.g->vals[vs].shape) *
						sizeof(float) };
			const Tensor *in[2] = { &tx, &ts };
			run_reference_node(&f, n, in, want, sizeof(want));
			memset(y, 0xA5, sizeof(y));
			run_fused(&f, n, in, y, 120);
			cr_expect(!memcmp(y, want, sizeof(y)),
				  "slope %d at %d threads differs from the "
				  "reference", k, threads);
			model_free(f.m);
		}
}

Test(fast, batchnorm_matches_reference)
{
	/* chan.batchnorm of x [2,3,4,5] of edge values, by statistics with
	 * a -0 scale, a huge mean and a negative variance (NaN), epsilon
	 * 1e-3: the reference's bits (-0 and infinities included); then with Relu taken in
	 * (chan_batchnorm_relu, the Relu after it folded) those bits
	 * through Relu's reference rule (NaN and -0 pass); at 1 and 2
	 * threads */
	static float st[4][3] = { { 0.5f, -0.0f, 3.0f },   /* scale */
				  { 1.0f, -2.0f, 0.0f },   /* B */
				  { 0.25f, 1e30f, -1.0f }, /* mean */
				  { 4.0f, 0.0f, -1.0f } }; /* var */
	float x[120], y[120], want[120];
	for (int i = 0; i < 120; i++)
		x[i] = edges[(i * 3) % NEDGE];
	int64_t xd[] = { 2, 3, 4, 5 }, cd[] = { 3 };
	for (int relu = 0; relu <= 1; relu++)
		for (int threads = 1; threads <= 2; threads++) {
			Fixture f;
			fixture_init(&f);
			f.s.threads = threads;
			Opset os = { "", 15 };
			f.m->nopsets = 1;
			f.m->opsets = &os;
			Node *n = graph_add_node(f.g, "bn", "BatchNormalization",
						 "", 5, 1);
			n->op = OP_BatchNormalization;
			node_add_attr(f.g, n, "epsilon", ATTR_FLOAT)->f = 1e-3f;
			n->inputs[0] = add_value(&f, "x", 4, xd, NULL);
			static const char *names[] = { "scale", "B", "mean",
						       "var" };
			Tensor tv[5] = { { .dtype = DT_FLOAT,
					   .shape = f.g->vals[n->inputs[0]].shape,
					   .data = x, .nbytes = sizeof(x) } };
			for (int i = 0; i < 4; i++) {
				n->inputs[i + 1] =
					add_value(&f, names[i], 1, cd, st[i]);
				tv[i + 1] = (Tensor){
					.dtype = DT_FLOAT,
					.shape = f.g->vals[n->inputs[i + 1]].shape,
					.data = st[i], .nbytes = sizeof(st[i])
				};
			}
			n->outputs[0] = add_value(&f, "y", 4, xd, NULL);
			const Tensor *in[5] = { &tv[0], &tv[1], &tv[2], &tv[3],
						&tv[4] };
			run_reference_node(&f, n, in, want, sizeof(want));
			for (int i = 0; relu && i < 120; i++)
				want[i] = want[i] < 0 ? 0 : want[i];
			Tensor out = { .dtype = DT_FLOAT, .shape = tv[0].shape,
				       .data = y, .nbytes = sizeof(y) };
			Tensor *outs[1] = { &out };
			Task t = { .n = n, .out = outs };
			f.cur[n->outputs[0]] = &out;
			cr_assert_eq(rt_kernel_choose(&f.s, &f.p, &t), 0, "%s",
				     last_error());
			cr_assert_str_eq(rt_kernel_name(&t), "chan.batchnorm");
			if (relu) {
				cr_assert(chan_batchnorm_relu(&t.fast));
				cr_assert(!chan_batchnorm_relu(&t.fast),
					  "Relu taken in twice");
			}
			cr_assert_eq(rt_kernel_build(&f.s, &f.p, &t), 0);
			memset(y, 0xA5, sizeof(y));
			cr_assert_eq(t.fast.run(t.fast.state, in, outs), 0);
			t.fast.free(t.fast.state);
			free(t.lay);
			int nan = 0;
			for (int i = 0; i < 120; i++)
				nan += isnan(want[i]);
			cr_expect_gt(nan, 12, "the NaN statistics made none");
			/* (a NaN x by a NaN scale: either NaN, IEEE 754
			 * says not which) */
			for (int i = 0; i < 120; i++)
				cr_expect((isnan(y[i]) && isnan(want[i])) ||
						  !memcmp(&y[i], &want[i],
							  sizeof(y[i])),
					  "relu %d at %d threads: element %d "
					  "is %g, the reference's %g",
					  relu, threads, i, y[i], want[i]);
			model_free(f.m);
		}
}

/* Reference kernel of op(a, b) on float edges[] (b a weight of one
 * value if scalar_b, else a the weight) into y. */
static void reference_pair(const char *op, float k, bool k_first, float *y)
{
	Fixture f;
	fixture_init(&f);
	Opset os = { "", 17 };
	f.m->nopsets = 1;
	f.m->opsets = &os;
	int64_t d[] = { NEDGE }, one[] = { 1 };
	float kv[1] = { k }, xs[NEDGE];
	memcpy(xs, edges, sizeof(xs));
	ValId vx = add_value(&f, "x", 1, d, NULL);
	ValId vk = add_value(&f, "k", 1, one, kv);
	ValId vy = add_value(&f, "y", 1, d, NULL);
	Node *n = graph_add_node(f.g, "n", op, "", 2, 1);
	n->op = (uint16_t)op_lookup("", op);
	n->inputs[k_first ? 1 : 0] = vx, n->inputs[k_first ? 0 : 1] = vk;
	n->outputs[0] = vy;
	Tensor tx = { .dtype = DT_FLOAT, .shape = f.g->vals[vx].shape,
		      .data = xs, .nbytes = sizeof(xs) };
	const Tensor *in[2] = { &tx, f.g->vals[vk].konst };
	if (k_first)
		in[0] = f.g->vals[vk].konst, in[1] = &tx;
	run_reference_node(&f, n, in, y, NEDGE * sizeof(float));
	model_free(f.m);
}

Test(fast, prelu_and_clamps_fuse_as_the_same_function)
{
	/* passes/fuse.c's rewrites: PRelu by one slope >= +0 is
	 * LeakyRelu(slope), Max(x, c) Clip(x, c, inf), Min(x, c) Clip(x,
	 * -inf, c) (c first only when nonzero): act.h's fp32 form, which
	 * every gearc tail runs, gives the reference kernels' bits on every
	 * edge value (oneDNN's post-op runs them only where dnnl.c's probe
	 * finds it gives act.h's answer) */
	static const float slopes[] = { 0.0f, 1e-40f, 0.25f, 1.0f, 3.0f };
	static const float consts[] = { -0.5f, 0.0f, -0.0f, 6.0f, 1e-40f,
					INFINITY, -INFINITY };
	float y[NEDGE], want[NEDGE];
	for (size_t i = 0; i < sizeof(slopes) / sizeof(slopes[0]); i++) {
		reference_pair("PRelu", slopes[i], false, want);
		act_loop_f32(ACT_LeakyRelu, edges, y, NEDGE, slopes[i], 0);
		cr_expect(!memcmp(y, want, sizeof(y)), "PRelu by %g", slopes[i]);
	}
	for (size_t i = 0; i < sizeof(consts) / sizeof(consts[0]); i++) {
		float c = consts[i];
		for (int first = 0; first < 2; first++) {
			if (first && c == 0)
				continue; /* a tie keeps c's sign: not fused */
			reference_pair("Max", c, first, want);
			act_loop_f32(ACT_Clip, edges, y, NEDGE, c, INFINITY);
			cr_expect(!memcmp(y, want, sizeof(y)), "Max by %g%s", c,
				  first ? " first" : "");
			reference_pair("Min", c, first, want);
			act_loop_f32(ACT_Clip, edges, y, NEDGE, -INFINITY, c);
			cr_expect(!memcmp(y, want, sizeof(y)), "Min by %g%s", c,
				  first ? " first" : "");
		}
	}
}

Test(fast, gather_by_run_indices)
{
	/* an embedding: Gather of a [6, 3] table by int64 indices the run
	 * gives, negative ones counting from the end; one out of range
	 * fails the run with the reference kernel's error */
	Fixture f;
	fixture_init(&f);
	Opset os = { "", 17 };
	f.m->nopsets = 1;
	f.m->opsets = &os;
	float table[18], y[12];
	fill(table, 18, 3);
	int64_t td[] = { 6, 3 }, id[] = { 2, 2 }, yd[] = { 2, 2, 3 };
	ValId vt = add_value(&f, "table", 2, td, table);
	ValId vi = add_value(&f, "ids", 2, id, NULL);
	f.g->vals[vi].dtype = DT_INT64;
	ValId vy = add_value(&f, "y", 3, yd, NULL);
	Node *n = graph_add_node(f.g, "g", "Gather", "", 2, 1);
	n->op = OP_Gather;
	n->inputs[0] = vt, n->inputs[1] = vi, n->outputs[0] = vy;
	int64_t ids[4] = { 5, 0, -1, 2 };
	Tensor ti = { .dtype = DT_INT64, .data = ids };
	const Tensor *in[2] = { f.g->vals[vt].konst, &ti };
	run_fused(&f, n, in, y, 12);
	for (int k = 0; k < 4; k++)
		for (int j = 0; j < 3; j++)
			cr_expect_eq(y[k * 3 + j],
				     table[(ids[k] < 0 ? ids[k] + 6 : ids[k]) *
					   3 + j]);
	ids[2] = 6;
	Tensor out = { .dtype = DT_FLOAT, .shape = f.g->vals[vy].shape,
		       .data = y, .nbytes = sizeof(y) };
	Tensor *outs[1] = { &out };
	Task t = { .n = n, .out = outs };
	f.cur[vy] = &out;
	cr_assert_eq(rt_kernel_choose(&f.s, &f.p, &t), 0);
	cr_assert_str_eq(rt_kernel_name(&t), "direct.gather");
	cr_expect_neq(t.fast.run(t.fast.state, in, outs), 0);
	cr_expect(strstr(last_error(), "index 6 is out of range for a dim "
			 "of 6"), "%s", last_error());
	t.fast.free(t.fast.state);
	free(t.lay);
	model_free(f.m);
}

/* The max of n floats step apart and the sum of exp(x - max).  Not
 * vectorised: Debian 12's aarch64 gcc 12 stops with an internal error
 * vectorising these two reductions (vect_transform_reduction). */
__attribute__((optimize("no-tree-vectorize"))) static void
max_sum(const float *x, int n, int step, double *mx, double *sum)
{
	*mx = -INFINITY, *sum = 0;
	for (int j = 0; j < n; j++)
		*mx = fmax(*mx, x[j * step]);
	for (int j = 0; j < n; j++)
		*sum += exp(x[j * step] - *mx);
}

Test(fast, softmax_columns_edge_values)
{
	/* Softmax and LogSoftmax over axis 0 of [5, 3]: column 0 holds a
	 * NaN (all NaN), column 1 -inf and a value 200 above the rest (0
	 * and -inf where exp underflows, (x - max) - log(sum) of the
	 * others), column 2 is all -inf (NaN); a LogSoftmax row of 20 with
	 * +inf (NaN) and one near 1e3 */
	Fixture f;
	fixture_init(&f);
	Opset os = { "", 17 };
	f.m->nopsets = 1;
	f.m->opsets = &os;
	int64_t d[] = { 5, 3 }, rd[] = { 2, 20 };
	ValId vx = add_value(&f, "x", 2, d, NULL);
	ValId vy = add_value(&f, "y", 2, d, NULL);
	ValId vr = add_value(&f, "r", 2, rd, NULL);
	ValId vz = add_value(&f, "z", 2, rd, NULL);
	float in[15] = { NAN, 1, -INFINITY, 2, -INFINITY, -INFINITY,
			 3, 201, -INFINITY, 4, 0.5f, -INFINITY, 5, -3,
			 -INFINITY };
	float row[40], out[40];
	fill(row, 40, 13);
	row[3] = INFINITY;
	for (int i = 20; i < 40; i++)
		row[i] += 1000;
	for (int lg = 0; lg < 2; lg++) {
		Node *n = graph_add_node(f.g, "sm", lg ? "LogSoftmax" : "Softmax",
					 "", 1, 1);
		n->op = lg ? OP_LogSoftmax : OP_Softmax;
		n->inputs[0] = vx, n->outputs[0] = vy;
		node_add_attr(f.g, n, "axis", ATTR_INT)->i = 0;
		Tensor tx = { .data = in };
		const Tensor *tin[1] = { &tx };
		run_fused(&f, n, tin, out, 15);
		for (int c = 0; c < 3; c++) {
			double mx, sum;
			max_sum(in + c, 5, 3, &mx, &sum);
			for (int j = 0; j < 5; j++) {
				float got = out[j * 3 + c];
				double v = in[j * 3 + c] - mx;
				double want = lg ? v - log(sum) : exp(v) / sum;
				if (c != 1) {
					cr_expect(isnan(got), "%d col %d row %d: "
						  "%g", lg, c, j, got);
					continue;
				}
				cr_expect(want == -INFINITY ? got == want
					  : fabs(got - want) <=
						    1e-6 * fabs(want) + 1e-9,
					  "%d col %d row %d: %g, expected %g",
					  lg, c, j, got, want);
			}
		}
		if (!lg)
			continue;
		n = graph_add_node(f.g, "lsm", "LogSoftmax", "", 1, 1);
		n->op = OP_LogSoftmax;
		n->inputs[0] = vr, n->outputs[0] = vz;
		Tensor tr = { .data = row };
		const Tensor *rin[1] = { &tr };
		run_fused(&f, n, rin, out, 40);
		double mx, sum;
		max_sum(row + 20, 20, 1, &mx, &sum);
		for (int j = 0; j < 20; j++) {
			double want = row[20 + j] - mx - log(sum);
			cr_expect(isnan(out[j]), "row 0 element %d: %g", j,
				  out[j]);
			cr_expect(fabs(out[20 + j] - want) <= 1e-5,
				  "row 1 element %d: %g, expected %g", j,
				  out[20 + j], want);
		}
	}
	arena_release(&f.s.scratch);
	free(f.s.work);
	model_free(f.m);
}

/* GEARRT_PROFILE=nodes and GEARRT_NO_FAST=1 to gearc run: the profile
 * names each node's kernel by its registry row; reference kernels only
 * with GEARRT_NO_FAST. */
Test(fast, profile_names_the_kernels)
{
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "fast_direct", "fast_direct", NULL);
	setenv("GEARRT_PROFILE", "nodes", 1);
	unsetenv("GEARRT_NO_FAST");
	Run r = run_gearc("run", om, "--random-inputs", "--quiet");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "ConvTranspose/direct.deconv") &&
			  strstr(r.err, "Relu/direct.deconv_act") &&
			  strstr(r.err, "Softmax/direct.softmax"),
		  "%s", r.err);
	run_free(&r);
	setenv("GEARRT_NO_FAST", "1", 1);
	r = run_gearc("run", om, "--random-inputs", "--quiet");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "ConvTranspose/ref") &&
			  !strstr(r.err, "/direct.") && !strstr(r.err, "/dnnl."),
		  "%s", r.err);
	run_free(&r);
	/* a Split: runtime/small.c's copies */
	char *chain = compile_fixture(dir, "cli_chain", "cli_chain", NULL);
	unsetenv("GEARRT_NO_FAST");
	r = run_gearc("run", chain, "--random-inputs", "--quiet");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "Split/small.split"), "%s", r.err);
	run_free(&r);
	unsetenv("GEARRT_PROFILE");
	free(chain);
	remove_tree(dir);
	free(dir);
	free(om);
}

/* The profile of `gearc run om` at level (GEARRT_MAX_ISA, or --max-isa
 * if flag): its standard error, malloc'd. */
static char *profile_at(const char *om, const char *level, bool flag)
{
	char arg[64];
	snprintf(arg, sizeof(arg), "--max-isa=%s", level);
	setenv("GEARRT_PROFILE", "1", 1);
	unsetenv("GEARRT_NO_FAST");
	setenv("GEARRT_MAX_ISA", flag ? "avx512" : level, 1);
	Run r = flag ? run_gearc("run", om, "--random-inputs", "--quiet", arg)
		     : run_gearc("run", om, "--random-inputs", "--quiet");
	unsetenv("GEARRT_MAX_ISA");
	unsetenv("GEARRT_PROFILE");
	cr_expect_eq(r.status, 0, "%s: %s", level, r.err);
	char *err = strdup(r.err);
	run_free(&r);
	return err;
}

/* At every level up to this CPU's (GEARRT_MAX_ISA, gearc run --max-isa),
 * each hand-written kernel runs its variant of that level and the
 * profile names it: chan.pwconv, chan.wino and the direct.c loops
 * (avx512, avx2, sse2), quant.conv (avx512vnni, avxvnni or avx2, and
 * below AVX2 the plain loop), oneDNN's convolutions at that level
 * (none below SSE4.1). */
Test(fast, capped_paths_run_their_variants)
{
	char *dir = temp_dir();
	char *pw = compile_fixture(dir, "pw", "fast_pw", NULL);
	char *wino = compile_fixture(dir, "wino", "fast_wino", NULL);
	char *chain = compile_fixture(dir, "chain", "fast_chain", NULL);
	char *qdq = compile_fixture(dir, "qdq", "qdq_cnn", NULL);
	CpuLevel was = cpu_level();
	cpu_cap(CPU_LEVEL_NATIVE); /* what the CPU has */
	bool avx512 = cpu_isa() >= CPU_LEVEL_AVX512, avx2 = cpu_isa() >= CPU_LEVEL_AVX2;
	bool vnni512 = cpu_has(CPU_AVX512VNNI), avxvnni = cpu_has(CPU_AVX_VNNI);
	cpu_cap(was);
	static const struct {
		const char *level, *v, *dnnl;
	} lv[] = {
		{ "avx512", "avx512", "avx512" },
		{ "avx2", "avx2", ":avx2" },
		{ "sse41", "sse2", ":sse41" },
		{ "baseline", "sse2", NULL },
	};
	for (size_t i = 0; RT_X86 && i < sizeof(lv) / sizeof(lv[0]); i++) {
		if ((i == 0 && !avx512) || (i == 1 && !avx2))
			continue;
		char want[64];
		const char *level = lv[i].level;
		char *e = profile_at(pw, level, i % 2);
		snprintf(want, sizeof(want), "/chan.pwconv.%s ", lv[i].v);
		cr_expect(strstr(e, want), "%s: no %s in\n%s", level, want, e);
		free(e);
		e = profile_at(wino, level, false);
		snprintf(want, sizeof(want), "/chan.wino.%s ", lv[i].v);
		cr_expect(strstr(e, want), "%s: no %s in\n%s", level, want, e);
		free(e);
		/* fast_chain's 3x3 Convs of 12x12: wino.c's on AVX2
		 * (WINO_U_AVX2), oneDNN's elsewhere */
		e = profile_at(chain, level, true);
		if (i == 1)
			cr_expect(strstr(e, "Conv/chan.wino.avx2 ") &&
					  !strstr(e, "/dnnl."),
				  "%s: not wino.c's in\n%s", level, e);
		else if (lv[i].dnnl)
			cr_expect(strstr(e, "Conv/dnnl.conv.") &&
					  strstr(strstr(e, "Conv/dnnl.conv."),
						 lv[i].dnnl),
				  "%s: oneDNN not at %s in\n%s", level,
				  lv[i].dnnl, e);
		else
			cr_expect(!strstr(e, "/dnnl."), "%s: oneDNN ran:\n%s",
				  level, e);
		free(e);
		e = profile_at(qdq, level, false);
		const char *qv = i == 0 && vnni512 ? "avx512vnni"
				 : i <= 1 && avxvnni ? "avxvnni"
				 : i <= 1	     ? "avx2"
						     : NULL;
		snprintf(want, sizeof(want), "QLinearConv/quant.conv.%s ",
			 qv ? qv : "");
		if (qv)
			cr_expect(strstr(e, want), "%s: no %s in\n%s", level,
				  want, e);
		else
			cr_expect(strstr(e, "QLinearConv/quant.conv ") ||
					  strstr(e, "QLinearConv/quant.conv.sse2"),
				  "%s: %s", level, e);
		free(e);
	}
	Run r = run_gearc("run", pw, "--random-inputs", "--max-isa=avx3");
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--max-isa=avx3 is not a level"), "%s", r.err);
	run_free(&r);
	setenv("GEARRT_MAX_ISA", "avx3", 1);
	r = run_gearc("run", pw, "--random-inputs");
	unsetenv("GEARRT_MAX_ISA");
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "GEARRT_MAX_ISA takes"), "%s", r.err);
	run_free(&r);
	remove_tree(dir);
	free(dir);
	free(pw);
	free(wino);
	free(chain);
	free(qdq);
}

/* The profile's times a run leave the first run out (it touches its
 * memory for the first time: ISNet's took 2.8 s against 1.8 s a run
 * later); that one has a figure of its own.  Its op rows add up to the
 * time a run. */
Test(fast, profile_times_the_runs_after_the_first)
{
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "fast_direct", "fast_direct", NULL);
	setenv("GEARRT_PROFILE", "1", 1);
	unsetenv("GEARRT_NO_FAST");
	Run r = run_gearc("run", om, "--random-inputs", "--quiet",
			  "--bench=3");
	cr_assert_eq(r.status, 0, "%s", r.err);
	const char *h = strstr(r.err, "first run ");
	double first, run, sum = 0, ms;
	unsigned long long after;
	int nodes;
	cr_assert(h && sscanf(h, "first run %lf ms, %llu runs after it, %lf "
			      "ms a run in %d nodes", &first, &after, &run,
			      &nodes) == 4, "%s", r.err);
	cr_expect_eq(after, 3);
	for (const char *l = strchr(h, '\n'); l && *l; l = strchr(l + 1, '\n'))
		if (sscanf(l, " %*s %*d nodes %lf ms", &ms) == 1)
			sum += ms;
	cr_expect(fabs(sum - run) <= 0.002 * nodes + 1e-3,
		  "rows add up to %g ms, the header says %g", sum, run);
	run_free(&r);
	unsetenv("GEARRT_PROFILE");
	remove_tree(dir);
	free(dir);
	free(om);
}

/* The library reads no environment: GEARRT_NO_FAST matters only
 * through gearrt_options (gearrt_options_from_env). */
Test(fast, no_fast_is_an_option)
{
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "fast_direct", "fast_direct", NULL);
	setenv("GEARRT_NO_FAST", "1", 1);
	Outs o = run_om(om, false, 1);
	cr_expect_eq(o.fast, 23, "%d fast tasks", o.fast);
	outs_free(&o);
	gearrt_options opt = { .threads = 3 };
	gearrt_options_from_env(&opt);
	cr_expect(opt.no_fast && !opt.profile && opt.threads == 3);
	setenv("GEARRT_NO_FAST", "0", 1);
	setenv("GEARRT_PROFILE", "nodes", 1);
	gearrt_options_from_env(&opt);
	cr_expect(!opt.no_fast && opt.profile == GEARRT_PROFILE_NODES);
	setenv("GEARRT_PROFILE", "yes", 1);
	gearrt_options_from_env(&opt);
	cr_expect_eq(opt.profile, GEARRT_PROFILE_OPS);
	remove_tree(dir);
	free(dir);
	free(om);
}

/* Runs static m in s on fixed inputs (run_session), and the weights
 * each oneDNN, 1x1 or Winograd task binds into w (want of them, at most
 * RUN_WEIGHTS). */
enum { RUN_WEIGHTS = 16 };
static void run_binding(gearrt_model *m, gearrt_session *s, Outs *o,
			const void **w, int want)
{
	run_session(m, s, o);
	Prepared *p = rt_session_ctx(s)->prep[0];
	int n = 0;
	for (int32_t i = 0; i < p->ntasks; i++) {
		DnnlInfo d = { 0 };
		const FastKernel *fk = &p->tasks[i].fast;
		const void *at = NULL;
		if (p->tasks[i].kernel->backend == KB_DNNL &&
		    dnnl_fast_info(fk, &d))
			at = d.weights;
		else if (p->tasks[i].kernel->backend == KB_PLAIN)
			at = chan_weights(fk);
		if (at && n < RUN_WEIGHTS)
			w[n] = at;
		n += at != NULL;
	}
	cr_assert_eq(n, want, "%d tasks with weights, expected %d", n, want);
}

/* Two sessions of fixture name's model bind the same copy of the
 * weights of its want convolutions (reordered for oneDNN, packed for
 * the 1x1 kernel or transformed for wino.c once per model), with outputs
 * bit for bit the same. */
static void sessions_share(const char *name, int want)
{
	char *dir = temp_dir();
	char *om = compile_fixture(dir, name, name, NULL);
	gearrt_model *m;
	gearrt_session *a, *b;
	gearrt_options opt = { .threads = 1 };
	avx2_as_elsewhere(); /* as fast_vs_reference */
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, &opt, &a), GEARRT_OK);
	cr_assert_eq(gearrt_session_create(m, &opt, &b), GEARRT_OK);
	Outs oa, ob;
	const void *wa[RUN_WEIGHTS], *wb[RUN_WEIGHTS];
	cr_assert_leq(want, RUN_WEIGHTS);
	run_binding(m, a, &oa, wa, want);
	run_binding(m, b, &ob, wb, want);
	for (int i = 0; i < want; i++)
		cr_expect_eq(wa[i], wb[i], "%s conv %d: session b made its "
			     "weights again", name, i);
	cr_assert_eq(oa.n, ob.n);
	for (size_t k = 0; k < oa.n; k++)
		cr_expect(oa.count[k] == ob.count[k] &&
			  !memcmp(oa.data[k], ob.data[k],
				  oa.count[k] * sizeof(float)),
			  "%s: output %zu differs between sessions", name, k);
	outs_free(&oa);
	outs_free(&ob);
	gearrt_session_destroy(a);
	gearrt_session_destroy(b);
	gearrt_model_close(m);
	remove_tree(dir);
	free(dir);
	free(om);
}

Test(fast, sessions_share_reordered_weights)
{
	/* fast_chain's three Convs, oneDNN's (without it, the reference
	 * kernel's: none) */
	sessions_share("fast_chain", with_dnnl(3, 0));
}

Test(fast, sessions_share_packed_and_winograd_weights)
{
	/* fast_wino's three Convs, wino.c's, and fast_pw's nine: 5 of the
	 * 1x1 kernel's (its sixth, on row-major x, reads W as it is and
	 * packs none), 4 of oneDNN's (rt_derived makes the first two
	 * kinds), at every level; where fewer tensors are NHWC (LV_SSE, at
	 * the top), 2 more 1x1 Convs read W as it is; without oneDNN, only
	 * the squeeze-excite pair of one pixel packs; at LV_ARM oneDNN's 4
	 * and that pair */
	sessions_share("fast_wino", 3);
	sessions_share("fast_pw", RT_X86 ? at_level(9, 9, 7, 2) : 6);
}

/* ---- rows by constant weights (runtime/gemv.c) ------------------------- */

/* A product of m rows (0: one): op ("Gemm", "FusedGemm", "MatMul",
 * "FusedMatMul"), A [m, K] ([1, m, K] for MatMul), W [K, N] ([N, K]
 * with tb), C or Bias of cn elements (0: none; cconst: a weight) with
 * Gemm's alpha and beta, activations acts; specials puts NaN, +-inf, +-0
 * and denormals in A's first row and W.  One row is gemv's; more are
 * gemm's below AVX-512. */
typedef struct GemvCase {
	const char *op;
	int64_t m, k, n;
	bool tb;
	float alpha, beta;
	int64_t cn;
	bool cconst;
	int nacts;
	bool specials;
} GemvCase;

static Tensor gemv_tensor(Fixture *f, ValId v, float *data)
{
	const Value *x = &f->g->vals[v];
	return (Tensor){ .dtype = DT_FLOAT, .shape = x->shape, .data = data,
			 .nbytes = (size_t)shape_numel(&x->shape) *
				   sizeof(float) };
}

static void gemv_case(const GemvCase *gc, const char *what)
{
	static const char *names[] = { "LeakyRelu", "Sigmoid" };
	static const float params[] = { 0.1f, 0, 0, 0 };
	int64_t k = gc->k, nn = gc->n, m = gc->m ? gc->m : 1;
	bool gemm = !strcmp(gc->op, "Gemm") || !strcmp(gc->op, "FusedGemm");
	size_t nw = (size_t)(k * nn), ny = (size_t)(m * nn);
	float *a = calloc((size_t)(m * k) + 1, sizeof(float));
	float *w = calloc(nw + 1, sizeof(float));
	float *c = calloc((size_t)gc->cn + 1, sizeof(float));
	float *y1 = calloc(ny + 1, sizeof(float));
	float *y2 = calloc(ny + 1, sizeof(float));
	float *want = calloc(ny + 1, sizeof(float));
	fill(a, (size_t)(m * k), 21), fill(w, nw, 22);
	fill(c, (size_t)gc->cn, 23);
	/* W[i][j], whichever way it is stored */
#define W_AT(i, j) w[gc->tb ? (j) * k + (i) : (i) * nn + (j)]
	if (gc->specials && k >= 8 && nn >= 12) {
		W_AT(3, 5) = NAN;			/* one column NaN */
		W_AT(1, 7) = INFINITY;			/* +inf */
		W_AT(1, 9) = INFINITY, W_AT(4, 9) = -INFINITY; /* NaN */
		a[2] = 0.0f, W_AT(2, 11) = INFINITY;	/* 0 inf: NaN */
		a[4] = -0.0f, a[5] = 1e-40f, W_AT(5, 3) = -1e-40f;
		W_AT(6, 0) = 0.0f;
		a[6] = -INFINITY; /* every column +-inf, but NaN above */
		if (gc->cn > 1)
			c[1] = NAN, c[2] = -INFINITY;
	}
	Fixture f;
	fixture_init(&f);
	bool mm3 = !strcmp(gc->op, "MatMul");
	int64_t ad[3] = { 1, m, k }, wd[2] = { gc->tb ? nn : k,
					       gc->tb ? k : nn };
	int64_t yd[3] = { 1, m, nn }, cd[2] = { 1, gc->cn };
	ValId va = add_value(&f, "a", mm3 ? 3 : 2, mm3 ? ad : ad + 1, NULL);
	ValId vw = add_value(&f, "w", 2, wd, w);
	ValId vc = gc->cn ? add_value(&f, "c", gemm ? 2 : 1,
				      gemm ? cd : cd + 1,
				      gc->cconst ? c : NULL)
			  : -1;
	ValId vy = add_value(&f, "y", mm3 ? 3 : 2, mm3 ? yd : yd + 1, NULL);
	bool fused = gc->op[0] == 'F';
	Node *n = graph_add_node(f.g, "p", gc->op, fused ? "ai.gearc" : "",
				 gc->cn ? 3 : 2, 1);
	n->op = !strcmp(gc->op, "Gemm")	   ? OP_Gemm
		: !strcmp(gc->op, "FusedGemm") ? OP_FusedGemm
		: mm3			       ? OP_MatMul
					       : OP_FusedMatMul;
	n->inputs[0] = va, n->inputs[1] = vw, n->outputs[0] = vy;
	if (gc->cn)
		n->inputs[2] = vc;
	if (gemm) {
		node_add_attr(f.g, n, "transB", ATTR_INT)->i = gc->tb;
		node_add_attr(f.g, n, "alpha", ATTR_FLOAT)->f = gc->alpha;
		node_add_attr(f.g, n, "beta", ATTR_FLOAT)->f = gc->beta;
	}
	if (fused)
		set_acts(&f, n, gc->nacts, names, params);
	Tensor ta = gemv_tensor(&f, va, a), tc = { 0 };
	if (gc->cn)
		tc = gemv_tensor(&f, vc, c);
	const Tensor *in[3] = { &ta, f.g->vals[vw].konst,
				gc->cn ? (gc->cconst ? f.g->vals[vc].konst
						     : &tc)
				       : NULL };
	run_reference_node(&f, n, in, want, ny * sizeof(float));
	for (int threads = 1; threads <= 2; threads++) {
		f.s.threads = threads;
		float *y = threads == 1 ? y1 : y2;
		ValId yo = n->outputs[0];
		Tensor out = gemv_tensor(&f, yo, y);
		Tensor *outs[1] = { &out };
		Task t = { .n = n, .out = outs };
		f.cur[yo] = &out;
		cr_assert_eq(rt_kernel_choose(&f.s, &f.p, &t), 0, "%s",
			     last_error());
		char name[64];
		snprintf(name, sizeof(name), "%s.%s", m > 1 ? "gemm" : "gemv",
			 cpu_isa_name(cpu_isa()));
		/* many rows on AVX2: oneDNN's 1x1 convolution (dnnl.c
		 * dnnl_fast_matmul_conv; A row-major, C none or a row of
		 * N; one value of C stays gemm's) */
		if (m >= rt_mmconv_min_m && cpu_isa() == CPU_LEVEL_AVX2 &&
		    (gc->cn == 0 || gc->cn == gc->n || gc->beta == 0))
			snprintf(name, sizeof(name), "dnnl.mmconv.jit_1x1");
		if (k == 0) {
			/* a sum over an empty axis: the registry gives it
			 * to the reference kernel (fast.c degenerate); the
			 * product's own answer, asked directly, is the same */
			cr_expect_str_eq(rt_kernel_name(&t), "ref", "%s", what);
			cr_assert_eq((m > 1 ? gemm_match : gemv_match)(
					     &f.s, &f.p, &t, &t.fast),
				     1);
			cr_assert_str_eq(t.fast.variant,
					 cpu_isa_name(cpu_isa()));
		} else {
			cr_assert(!strncmp(rt_kernel_name(&t), name,
					   strlen(name)) &&
					  (rt_kernel_name(&t)[strlen(name)] ==
						   0 ||
					   rt_kernel_name(&t)[strlen(name)] ==
						   ':'),
				  "%s: %s, not %s", what, rt_kernel_name(&t),
				  name);
			cr_assert_eq(rt_kernel_build(&f.s, &f.p, &t), 0);
		}
		cr_assert_eq(t.fast.run(t.fast.state, in, outs), 0);
		t.fast.free(t.fast.state);
		free(t.lay);
	}
	cr_expect_eq(memcmp(y1, y2, ny * sizeof(float)), 0,
		     "%s: 1 and 2 threads differ", what);
	for (int64_t j = 0; j < m * nn; j++) {
		const float *ar = a + j / nn * k;
		double scale = 0; /* sum of |a_i w_ij|: the products' size */
		for (int64_t i = 0; i < k; i++)
			scale += fabs((double)ar[i] * (double)W_AT(i, j % nn));
		if (gemm)
			scale *= fabs(gc->alpha);
		float g = y1[j], r = want[j];
		bool ok = isnan(r)   ? isnan(g)
			  : isinf(r) ? g == r
				     : !isnan(g) && !isinf(g) &&
					       fabs((double)g - r) <=
						       1e-4 * fabs(r) +
							       1e-6 * (1 + scale);
		cr_expect(ok, "%s: element %lld is %g, the reference's %g",
			  what, (long long)j, g, r);
	}
#undef W_AT
	arena_release(&f.s.scratch);
	model_free(f.m);
	free(a), free(w), free(c), free(y1), free(y2), free(want);
}

static void gemv_run(const GemvCase *cs, size_t n, const char *level)
{
	for (size_t i = 0; i < n; i++) {
		char what[96];
		snprintf(what, sizeof(what), "%s: case %zu (%s %lldx%lldx%lld)",
			 level, i, cs[i].op, (long long)(cs[i].m ? cs[i].m : 1),
			 (long long)cs[i].k, (long long)cs[i].n);
		gemv_case(&cs[i], what);
	}
}

static void gemv_cases(const char *level)
{
	static const GemvCase cases[] = {
		/* torch's Linear: transB, C [N]; alpha, beta */
		{ "Gemm", 0, 37, 45, true, 0.5f, 2.0f, 45, true, 0, true },
		{ "Gemm", 0, 256, 256, true, 1, 1, 256, true, 0, false },
		/* C one value given at run time; two activations; large
		 * enough to run on 2 threads */
		{ "FusedGemm", 0, 300, 500, false, 1, 1, 1, false, 2, true },
		{ "FusedGemm", 0, 20, 70, true, 1.5f, -1, 70, false, 1, true },
		/* beta 0: C, NaN and all, not read */
		{ "Gemm", 0, 12, 16, false, 1, 0, 16, true, 0, true },
		{ "MatMul", 0, 19, 16, false, 1, 1, 0, false, 0, true },
		{ "MatMul", 0, 64, 1, false, 1, 1, 0, false, 0, false },
		{ "FusedMatMul", 0, 64, 33, false, 1, 1, 33, true, 1, true },
		{ "FusedMatMul", 0, 9, 130, false, 1, 1, 0, false, 2, true },
		/* K = 0: C, or nothing, then the activations */
		{ "Gemm", 0, 0, 20, true, 3, 2, 20, true, 0, false },
		{ "FusedMatMul", 0, 0, 17, false, 1, 1, 17, false, 2, false },
	};
	/* many rows: K in blocks (300), a part panel (37), blocks of rows
	 * (97); C one value (at run time or a weight; 20 rows and more are
	 * oneDNN's on AVX2, which must not read it as a row of N) or a
	 * column; beta 0; K = 0 */
	static const GemvCase rows[] = {
		{ "MatMul", 50, 300, 37, false, 1, 1, 0, false, 0, true },
		{ "Gemm", 5, 37, 45, true, 0.5f, 2.0f, 45, true, 0, true },
		{ "FusedGemm", 3, 300, 500, false, 1, 1, 1, false, 2, true },
		{ "Gemm", 32, 42, 58, false, -1, 1, 1, false, 0, true },
		{ "Gemm", 20, 16, 40, true, 1, 0.5f, 1, true, 1, false },
		{ "FusedMatMul", 97, 64, 33, false, 1, 1, 33, true, 1, true },
		{ "Gemm", 6, 12, 16, false, 1, 0, 16, true, 0, true },
		{ "FusedMatMul", 4, 0, 17, false, 1, 1, 17, false, 2, false },
	};
	gemv_run(cases, sizeof(cases) / sizeof(cases[0]), level);
	if (cpu_isa() < CPU_LEVEL_AVX512)
		gemv_run(rows, sizeof(rows) / sizeof(rows[0]), level);
}

Test(fast, gemv_matches_reference_at_every_isa)
{
	/* A of one row by constant weights: gemv.<isa>, not oneDNN; of
	 * many rows, below AVX-512: gemm.<isa>, not oneDNN's sgemm, whose
	 * bits change with the threads; the reference's values (NaN and
	 * infinities where it has them), the same bytes at 1 and 2
	 * threads, at this CPU's level and capped at AVX2 and the baseline
	 * (compiler/cpu.h); gearc's tiles of many rows on AVX2 too
	 * (mmconv_matches_reference_on_avx2 checks oneDNN's there) */
	rt_mmconv_min_m = INT64_MAX;
	gemv_cases("native");
	if (!RT_X86)
		return;
	cpu_cap(CPU_LEVEL_AVX2);
	gemv_cases("avx2");
	cpu_cap(CPU_LEVEL_BASELINE);
	gemv_cases("baseline");
	cpu_cap(CPU_LEVEL_NATIVE);
}

Test(fast, mmconv_matches_reference_on_avx2)
{
	/* the same cases as chosen by default: on AVX2 the products of 16
	 * rows or more run as oneDNN's 1x1 convolution (jit_1x1), with the
	 * reference's values, NaN and infinities, bias and activations, the
	 * same bytes at 1 and 2 threads; not where oneDNN runs below AVX2
	 * (GEARRT_MAX_ISA=sse41 in make check-isa), whose 1x1 kernels are
	 * others */
	if (!RT_X86 || !cpu_has(CPU_AVX2) ||
	    (dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx2) !=
		    dnnl_cpu_isa_avx2)
		return;
	cpu_cap(CPU_LEVEL_AVX2);
	gemv_cases("avx2, mmconv");
	cpu_cap(CPU_LEVEL_NATIVE);
}

Test(fast, profile_names_the_gemv_at_each_level)
{
	/* prec_cnn at batch 1: its hidden and head MatMuls have one row, so
	 * gearc run's profile names gemv and the variant of each level */
	char *dir = temp_dir();
	const char *one[] = { "--input_shape=x:1,32,16,16", NULL };
	char *om = compile_fixture(dir, "one", "prec_cnn", one);
	CpuLevel was = cpu_level();
	cpu_cap(CPU_LEVEL_NATIVE);
	bool avx512 = cpu_isa() >= CPU_LEVEL_AVX512;
	bool avx2 = cpu_isa() >= CPU_LEVEL_AVX2;
	cpu_cap(was);
	static const struct {
		const char *level, *v;
	} lv[] = { { "avx512", "avx512" }, { "avx2", "avx2" },
		   { "baseline", "sse2" } };
	for (size_t i = 0; RT_X86 && i < 3; i++) {
		if ((i == 0 && !avx512) || (i == 1 && !avx2))
			continue;
		char want[64];
		snprintf(want, sizeof(want), "MatMul/gemv.%s ", lv[i].v);
		char *err = profile_at(om, lv[i].level, false);
		cr_expect(strstr(err, want), "%s: no %s in %s", lv[i].level,
			  want, err);
		free(err);
	}
	remove_tree(dir);
	free(dir);
	free(om);
}
