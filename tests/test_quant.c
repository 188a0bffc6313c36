/*
 * tests/test_quant.c - the integer and quantization fast paths
 * (runtime/quant.c) against the reference kernels (GEARRT_NO_FAST=1),
 * bit for bit, at 1 and 2 threads, on tests/fixtures/quant_mm.onnx,
 * quant_conv.onnx, quant_qlinear.onnx and quant_mlp.onnx
 * (tests/gen_quant_models.py) and quant_fused.onnx
 * (tests/gen_qbench_models.py): every MatMulInteger, ConvInteger,
 * QLinearMatMul, QLinearConv, DynamicQuantizeLinear, QuantizeLinear,
 * DequantizeLinear, DynQuantMatMul and DynQuantConv of them must take
 * its fast path.
 */
#include <dnnl.h>
#include <math.h>

#include "cli/npy.h"
#include "runtime/gearrt.h"
#include "runtime/rt.h"
#include "tests/tensorcmp.h"
#include "testrun.h"

enum { MAX_OUT = 16 };

typedef struct Outs {
	size_t n;
	void *data[MAX_OUT];
	size_t size[MAX_OUT];
	int fast[OP_COUNT]; /* per op: tasks a fast path took */
	char kernels[512];  /* the quant.* kernels' names, one each */
	int ref[OP_COUNT];  /* per op: tasks left to the reference kernel */
	int parallel;	    /* fast kernels on more than one thread */
	int nhwc8;	    /* 8-bit tensors kept channels-last */
} Outs;

/* Floats in [-1, 1] from seed. */
static void fill(float *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		p[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
	}
}

static Outs run_om(const char *om, bool no_fast, int threads)
{
	Outs o = { 0 };
	gearrt_model *m;
	gearrt_session *s;
	gearrt_options opt = { .threads = threads, .no_fast = no_fast };
	gearrt_tensor in[4], out[MAX_OUT];
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, &opt, &s), GEARRT_OK);
	size_t nin = gearrt_input_count(m);
	cr_assert(nin <= 4);
	for (size_t i = 0; i < nin; i++) {
		cr_assert_eq(gearrt_input_info(m, i, &in[i]), GEARRT_OK);
		size_t cnt = 1;
		for (int32_t d = 0; d < in[i].rank; d++)
			cnt *= (size_t)in[i].dims[d];
		in[i].data = malloc(cnt * sizeof(float));
		in[i].size = cnt * sizeof(float);
		fill(in[i].data, cnt, 11u + (uint32_t)i);
	}
	o.n = gearrt_output_count(m);
	cr_assert(o.n <= MAX_OUT);
	memset(out, 0, sizeof(out));
	cr_assert_eq(gearrt_run(s, in, nin, out, o.n), GEARRT_OK, "%s",
		     gearrt_last_error());
	for (size_t k = 0; k < o.n; k++) {
		o.size[k] = out[k].size;
		o.data[k] = malloc(out[k].size + 1);
		memcpy(o.data[k], out[k].data, out[k].size);
	}
	Prepared *p = rt_session_ctx(s)->prep[0];
	for (int32_t i = 0; i < p->ntasks; i++) {
		const Task *t = &p->tasks[i];
		if (rt_fast(t))
			o.fast[t->n->op]++;
		else
			o.ref[t->n->op]++;
		const char *k = rt_kernel_name(t);
		size_t at = strlen(o.kernels);
		if (!strncmp(k, "quant.", 6) && !strstr(o.kernels, k))
			snprintf(o.kernels + at, sizeof(o.kernels) - at, "%s,",
				 k);
		o.parallel += t->fast.threads > 1;
	}
	for (ValId v = 0; v < p->g->nvals; v++)
		o.nhwc8 += rt_nhwc(p, v) && (p->g->vals[v].dtype == DT_UINT8 ||
					  p->g->vals[v].dtype == DT_INT8);
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

/* a's outputs are b's, byte for byte (int32, uint8 and float alike). */
static void expect_same(const Outs *a, const Outs *b, const char *what)
{
	cr_assert_eq(a->n, b->n);
	for (size_t k = 0; k < a->n; k++) {
		cr_assert_eq(a->size[k], b->size[k]);
		const uint8_t *x = a->data[k], *y = b->data[k];
		size_t i = 0;
		while (i < a->size[k] && x[i] == y[i])
			i++;
		cr_expect_eq(i, a->size[k], "%s: output %zu differs from the "
			     "reference kernel's at byte %zu of %zu", what, k,
			     i, a->size[k]);
	}
}

/* Whether oneDNN multiplies with VNNI here (the CPU has it within the
 * cap, and oneDNN's level too), so that quant.c runs MatMulInteger's and
 * ConvInteger's product on its GEMM (on the session's threads) rather
 * than the plain loop. */
static bool vnni(void)
{
	if (!cpu_has(CPU_AVX512VNNI))
		return false;
	dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
	return (isa & dnnl_cpu_isa_avx512_core_vnni) ==
	       dnnl_cpu_isa_avx512_core_vnni;
}

/* Whether quant.c's own tiles take the QLinear ops (AVX2 and up, within
 * the cap: runtime/dq_simd.h, AVX512-VNNI's), or the plain loop does. */
static bool dq_tiles(void)
{
	return RT_X86 && cpu_isa() >= CPU_LEVEL_AVX2;
}

/* The ops runtime/quant.c runs. */
static const int quant_ops[] = { OP_MatMulInteger, OP_ConvInteger,
				 OP_QLinearMatMul, OP_QLinearConv,
				 OP_DynamicQuantizeLinear, OP_QuantizeLinear,
				 OP_DequantizeLinear, OP_DynQuantMatMul,
				 OP_DynQuantConv };

/* The quant.* kernels of quant_vs_reference's last 1-thread run. */
static char last_kernels[512];

/* name's fixture: every quant op fast (want of them), the outputs those
 * of the reference kernels at 1 and 2 threads; *parallel: the 2-thread
 * run's kernels on 2 threads (however small the whole gear). */
static void quant_vs_reference(const char *name, int want, int *parallel,
			       int *fused)
{
	rt_gear_serial = 0; /* each kernel's own thread count */
	char *dir = temp_dir(), *om = compile_fixture(dir, name, name, NULL);
	Outs ref = run_om(om, true, 1), f1 = run_om(om, false, 1);
	Outs f2 = run_om(om, false, 2);
	int fast = 0;
	for (size_t i = 0; i < sizeof(quant_ops) / sizeof(*quant_ops); i++) {
		int op = quant_ops[i];
		cr_expect_eq(ref.fast[op], 0);
		cr_expect_eq(f1.ref[op], 0, "%s: %d %s nodes on the reference "
			     "kernel", name, f1.ref[op], op_info[op].name);
		fast += f1.fast[op];
	}
	cr_expect_eq(fast, want, "%s: %d fast quant nodes, expected %d", name,
		     fast, want);
	expect_same(&f1, &ref, "1 thread");
	expect_same(&f2, &ref, "2 threads");
	*parallel = f2.parallel;
	*fused = f1.fast[OP_DynQuantMatMul] + f1.fast[OP_DynQuantConv];
	snprintf(last_kernels, sizeof(last_kernels), "%s", f1.kernels);
	outs_free(&ref);
	outs_free(&f1);
	outs_free(&f2);
	remove_tree(dir);
	free(dir);
	free(om);
}

Test(quant, matmul_integer_exact)
{
	/* 6 MatMulInteger (uint8 and int8 A and B, per-tensor, per-column
	 * and absent zero points, saturated operands, a batched product of
	 * run-time operands), DynamicQuantizeLinear, 4 QuantizeLinear (one
	 * per axis), 2 DequantizeLinear (one per axis) */
	int parallel, fused;
	quant_vs_reference("quant_mm", 13, &parallel, &fused);
	cr_expect_geq(parallel, vnni() ? 5 : 0, "%d kernels on 2 threads",
		      parallel);
}

Test(quant, conv_integer_exact)
{
	/* 5 ConvInteger: 3x3 uint8 W padded, int8 W per-channel zero
	 * points strided, int8 X into 2 groups dilated, depthwise with
	 * asymmetric pads, 1-D without a W zero point, one in 3 tiles of
	 * output rows; 3 DynamicQuantizeLinear, QuantizeLinear */
	int parallel, fused;
	quant_vs_reference("quant_conv", 10, &parallel, &fused);
	cr_expect_geq(parallel, vnni() ? 3 : 0, "%d kernels on 2 threads",
		      parallel);
}

Test(quant, dynamic_mlp_exact)
{
	/* quantize_dynamic's chain, 3 layers, each fused into one
	 * DynQuantMatMul (DynamicQuantizeLinear, MatMulInteger, Cast, the
	 * scales' Mul, Mul, Add) */
	int parallel, fused;
	quant_vs_reference("quant_mlp", 3, &parallel, &fused);
	cr_expect_eq(fused, 3);
}

Test(quant, dynamic_fused_exact)
{
	/* tests/gen_qbench_models.py's quant_fused: 2 DynQuantMatMul (K 50,
	 * N 37 and 40, 3-D x, swapped operands, per-column scales and zero
	 * points), 5 DynQuantConv (padded, strided per-channel int8, 2
	 * groups dilated, pointwise, 1-D), a chain left unfused (its
	 * MatMulInteger's sums are an output: MatMulInteger fast) and the
	 * DynamicQuantizeLinear it reads */
	int parallel, fused;
	quant_vs_reference("quant_fused", 9, &parallel, &fused);
	cr_expect_eq(fused, 7);
}

Test(quant, qlinear_exact)
{
	/* 3 QLinearMatMul (uint8 per-tensor scales, int8 per-column B
	 * scales, int8 with results on rounding ties), 3 QLinearConv
	 * (uint8 with a bias, int8 strided with per-channel W scales, int8
	 * on ties, uint8 in 3 tiles of output rows, int8 depthwise
	 * strided), saturating both ways; 5 QuantizeLinear.  Where the
	 * CPU has VNNI the QLinearMatMul (2-D constant B) and the grouped
	 * QLinearConv run on gearc's own kernel, allocating nothing per
	 * run, the 4 QLinearConv on it splitting their blocks of rows over
	 * both threads (bit-exact there too); the depthwise one on its
	 * direct loop */
	int parallel, fused;
	quant_vs_reference("quant_qlinear", 13, &parallel, &fused);
	cr_expect_eq(parallel, dq_tiles() ? 4 : 0, "%d kernels on 2 threads",
		     parallel);
}

Test(quant, qdq_groups_exact_channels_last)
{
	/* tests/gen_qbench_models.py's quant_qdq: passes/qfuse.c rewrites
	 * its QDQ groups into 3 QLinearConv (float bias quantized, uint8 W
	 * per tensor in 2 groups, int32 bias; Relus into the saturation)
	 * and a QLinearMatMul; a Conv -> Relu -> QuantizeLinear whose zero
	 * point is above the lowest stays float.  Every quant node (those 4,
	 * 3 QuantizeLinear, 4 DequantizeLinear) fast and bit-exact with
	 * the reference kernels; the 2 tensors between the QLinearConvs
	 * channels-last (runtime/layout.c), one of them int8; and
	 * qdq_cnn's (QuantizeLinear, 6 QLinearConv, DequantizeLinear) at
	 * full size: blocks of 16 x 16 bytes transposed in and out */
	int parallel, fused;
	quant_vs_reference("quant_qdq", 11, &parallel, &fused);
	quant_vs_reference("qdq_cnn", 8, &parallel, &fused);
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "qdq", "quant_qdq", NULL);
	Outs f = run_om(om, false, 1);
	cr_expect_eq(f.fast[OP_QLinearConv], 3);
	cr_expect_eq(f.fast[OP_QLinearMatMul], 1);
	/* the float Conv is oneDNN's (none below SSE4.1) */
	cr_expect_eq(f.fast[OP_Conv] + f.fast[OP_FusedConv],
		     !RT_X86 || cpu_has(CPU_SSE41) ? 1 : 0);
	cr_expect_eq(f.nhwc8, dq_tiles() ? 2 : 0, "%d 8-bit tensors NHWC",
		     f.nhwc8);
	outs_free(&f);
	remove_tree(dir);
	free(dir);
	free(om);
}

Test(quant, qlinear_conv_direct_exact)
{
	/* tests/gen_qbench_models.py's quant_direct: 6 QLinearConv that
	 * runtime/quant.c's VNNI kernel computes from X padded channels
	 * last, tap by tap, without im2col (12 to 24 channels a group,
	 * partial panels of 16 columns, tiles of 12 rows cut at a row of
	 * 13 or 6 pixels, 3x5 and 1x1 kernels, strides, asymmetric pads,
	 * dilation, 3 groups, int8 X flipped as it is padded, uint8 W at
	 * 128, rows longer than a block; one whose products overflow
	 * int32, saturating); 2 QuantizeLinear and 3 DequantizeLinear;
	 * bit-exact with the reference kernels at 1 and 2 threads */
	int parallel, fused;
	quant_vs_reference("quant_direct", 11, &parallel, &fused);
}

Test(quant, qdq_groups_stay_with_no_fuse)
{
	/* --no-fuse keeps the QDQ graph's own float definition: no QLinear
	 * op in the dump */
	char *dir = temp_dir();
	const char *nf[] = { "--no-fuse", NULL };
	char *om = compile_fixture(dir, "qdq", "quant_qdq", nf);
	const char *dump[] = { "dump", om, NULL };
	Run r = run_gearcv(dump);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(!strstr(r.out, "QLinear") && strstr(r.out, "Conv"),
		  "dump:\n%s", r.out);
	run_free(&r);
	remove_tree(dir);
	free(dir);
	free(om);
}

Test(quant, plain_loop_exact)
{
	/* gearc's kernels capped at SSE4.1 (compiler/cpu.h; oneDNN's
	 * product needs AVX512-VNNI within the cap too): quant.c's plain-C
	 * product, on the same fixtures */
	cpu_cap(CPU_LEVEL_SSE41);
	int parallel, fused;
	quant_vs_reference("quant_mm", 13, &parallel, &fused);
	quant_vs_reference("quant_conv", 10, &parallel, &fused);
	quant_vs_reference("quant_qlinear", 13, &parallel, &fused);
	quant_vs_reference("quant_fused", 9, &parallel, &fused);
	/* the plain-C DynQuantConv split their rows over 2 threads too */
	cr_expect_geq(parallel, 1, "%d kernels on 2 threads", parallel);
	cr_expect(strstr(last_kernels, "quant.dynquant.sse2") ||
			  strstr(last_kernels, "quant.dynquant.neon"),
		  "%s", last_kernels);
}

/* The fixtures of the fused and QLinear kernels, bit for bit with the
 * reference kernels on tiles of level want (quant.c dq_isa), whose name
 * the kernels must bear. */
static void tiles_exact(const char *want)
{
	int parallel, fused;
	char name[64];
	snprintf(name, sizeof(name), "quant.dynquant.%s", want);
	quant_vs_reference("quant_fused", 9, &parallel, &fused);
	cr_expect(strstr(last_kernels, name), "%s: %s", want, last_kernels);
	snprintf(name, sizeof(name), "quant.conv.%s", want);
	quant_vs_reference("quant_qlinear", 13, &parallel, &fused);
	cr_expect(strstr(last_kernels, name), "%s: %s", want, last_kernels);
	quant_vs_reference("quant_direct", 11, &parallel, &fused);
	cr_expect(strstr(last_kernels, name), "%s: %s", want, last_kernels);
	quant_vs_reference("qdq_cnn", 8, &parallel, &fused);
	cr_expect(strstr(last_kernels, name), "%s: %s", want, last_kernels);
}

Test(quant, every_tile_level_exact)
{
	/* each level of quant.c's tiles this CPU has, under the cap:
	 * AVX512-VNNI, AVX-VNNI, AVX2 alone (AVX-VNNI hidden), each named
	 * in the profile and bit-exact */
	if (!RT_X86 || cpu_isa() < CPU_LEVEL_AVX2)
		cr_skip_test("no AVX2 within the cap: plain_loop_exact");
	if (cpu_isa() >= CPU_LEVEL_AVX512 && cpu_has(CPU_AVX512VNNI))
		tiles_exact("avx512vnni");
	cpu_cap(CPU_LEVEL_AVX2);
	if (cpu_has(CPU_AVX_VNNI))
		tiles_exact("avxvnni");
	cpu_hide(CPU_AVX_VNNI, true);
	tiles_exact("avx2");
	cpu_hide(CPU_AVX_VNNI, false);
}

/* tests/check_qbench_ort.mjs's inputs: seed 1, s = s * 1664525 +
 * 1013904223, x = (s >> 8) / 2^24 - 0.5. */
static void ort_fill(float *p, size_t n)
{
	uint32_t seed = 1;
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		p[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
	}
}

/* sqrt(sum (a - b)^2 / sum b^2) over n floats. */
static double rel_l2(const float *a, const float *b, size_t n)
{
	double num = 0, den = 0;
	for (size_t i = 0; i < n; i++) {
		num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
		den += (double)b[i] * b[i];
	}
	return sqrt(num / den);
}

/* name's output on check_qbench_ort.mjs's input against ONNX Runtime's
 * (tests/fixtures/qbench/NAME.npy): within relative L2 0.05 if dynamic
 * quantisation is in the graph (one uint8 rounding apart moves the
 * output, issue 28), else rtol 1e-3 / atol 1e-4; its fused ops
 * (DynQuant*, and the QLinear ops passes/qfuse.c makes of QDQ groups)
 * fast.  qdq_cnn's expected output is ONNX Runtime's with graph
 * optimizations on, which rewrites the QDQ groups into QLinearConv as
 * gearc does: the last uint8 tensor then differs from ONNX Runtime's in
 * 0.13% of its elements, by one step (0.02; ONNX Runtime requantizes in
 * float, gearc in double as its reference kernel), each moving a logit,
 * a mean of 784 of them, by 2.6e-5.  (From the float QDQ definition,
 * optimizations off, 5.1% of them are a step apart: relative L2 1.6e-3
 * on the logits, tests/check_qbench_ort.mjs prints it.) */
static void qbench_vs_ort(const char *name, bool dynamic, int fused)
{
	char *dir = temp_dir(), *om = compile_fixture(dir, name, name, NULL);
	char want_path[256];
	snprintf(want_path, sizeof(want_path), "tests/fixtures/qbench/%s.npy",
		 name);
	Arena a = { 0 };
	Tensor *want = npy_read(&a, want_path);
	cr_assert(want, "%s", last_error());
	gearrt_model *m;
	gearrt_session *s;
	gearrt_tensor in, out;
	setenv("GEARRT_NO_FAST", "0", 1);
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK);
	cr_assert_eq(gearrt_session_create(m, NULL, &s), GEARRT_OK);
	cr_assert_eq(gearrt_input_info(m, 0, &in), GEARRT_OK);
	size_t cnt = 1;
	for (int32_t d = 0; d < in.rank; d++)
		cnt *= (size_t)in.dims[d];
	in.data = malloc(cnt * sizeof(float));
	in.size = cnt * sizeof(float);
	ort_fill(in.data, cnt);
	memset(&out, 0, sizeof(out));
	cr_assert_eq(gearrt_run(s, &in, 1, &out, 1), GEARRT_OK, "%s",
		     gearrt_last_error());
	Tensor got = { .dtype = out.dtype, .shape = shape_of(out.rank, out.dims),
		       .data = out.data, .nbytes = out.size };
	cr_assert(shape_equal(&got.shape, &want->shape));
	if (dynamic) {
		double d = rel_l2(out.data, want->data,
				  (size_t)shape_numel(&want->shape));
		cr_expect_leq(d, 0.05, "%s: relative L2 %g from ONNX Runtime",
			      name, d);
	} else {
		cr_expect_eq(tensor_close(&got, want, 1e-3, 1e-4), 0, "%s: %s",
			     name, last_error());
	}
	int n = 0;
	const RunCtx *ctx = rt_session_ctx(s);
	const Prepared *p = ctx->prep[0];
	size_t most = 0, all = 0; /* the convolutions' X bytes */
	for (int32_t i = 0; i < p->ntasks; i++) {
		const Task *t = &p->tasks[i];
		n += (t->n->op == OP_DynQuantMatMul ||
		      t->n->op == OP_DynQuantConv ||
		      t->n->op == OP_QLinearConv ||
		      t->n->op == OP_QLinearMatMul) &&
		     t->fast.run;
		if (t->n->op == OP_DynQuantConv && t->fast.run) {
			size_t x = (size_t)shape_numel(
				&p->g->vals[t->n->inputs[0]].shape);
			most = x > most ? x : most;
			all += x;
		}
	}
	cr_expect_eq(n, fused, "%s: %d fused int8 ops fast, expected %d", name,
		     n, fused);
	/* each convolution's X quantized and channels last (2 bytes an
	 * element) are temporaries in the context's work, which every
	 * node shares: as large as the largest's, not the sum */
	if (most) {
		cr_expect_geq(ctx->work_bytes, 2 * most, "%s: work %zu bytes",
			      name, ctx->work_bytes);
		cr_expect_lt(ctx->work_bytes, 2 * all, "%s: work %zu bytes",
			     name, ctx->work_bytes);
	}
	free(in.data);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	arena_release(&a);
	remove_tree(dir);
	free(dir);
	free(om);
}

Test(quant, bench_models_match_onnxruntime)
{
	/* tests/gen_qbench_models.py: quantize_dynamic's CNN (6 ConvInteger
	 * chains and a MatMulInteger head) and encoder layer (6
	 * MatMulInteger chains), a static QDQ CNN (6 Conv groups, each a
	 * QLinearConv) */
	qbench_vs_ort("qdyn_cnn", true, 7);
	qbench_vs_ort("qdyn_enc", true, 6);
	qbench_vs_ort("qdq_cnn", false, 6);
}

Test(quant, dynamic_chain_dumps_fused_and_exports_back)
{
	/* quant_mlp: gearc dump lists the fused ops; gearc export writes
	 * the chain back as standard ONNX (no ai.gearc op, which gearc
	 * compiles unfused with --no-fuse), and that runs to the same
	 * bytes as the fused file */
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "mlp", "quant_mlp", NULL);
	char *onnx = path_in(dir, "mlp_export.onnx");
	char *back = path_in(dir, "back"), mflag[600], oflag[600];
	const char *dump[] = { "dump", om, NULL };
	Run r = run_gearcv(dump);
	cr_assert_eq(r.status, 0, "%s", r.err);
	int fused = 0;
	for (const char *p = r.out; (p = strstr(p, "DynQuantMatMul")); p++)
		fused++;
	cr_expect_eq(fused, 3, "dump:\n%s", r.out);
	run_free(&r);
	const char *exp[] = { "export", om, "-o", onnx, NULL };
	r = run_gearcv(exp);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	snprintf(mflag, sizeof(mflag), "--model=%s", onnx);
	snprintf(oflag, sizeof(oflag), "--output=%s", back);
	const char *comp[] = { mflag, oflag, "--no-fuse", "-q", NULL };
	r = run_gearcv(comp);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	char *back_om = path_in(dir, "back.om");
	const char *dump2[] = { "dump", back_om, NULL };
	r = run_gearcv(dump2);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(!strstr(r.out, "DynQuant") &&
			  strstr(r.out, "DynamicQuantizeLinear") &&
			  strstr(r.out, "MatMulInteger"),
		  "export's graph:\n%s", r.out);
	run_free(&r);
	Outs a = run_om(om, false, 1), b = run_om(back_om, true, 1);
	expect_same(&a, &b, "export");
	outs_free(&a);
	outs_free(&b);
	remove_tree(dir);
	free(dir);
	free(om);
	free(onnx);
	free(back);
	free(back_om);
}

Test(quant, a_dynamic_int8_gear_is_not_small)
{
	/* qdyn_cnn (onnxruntime's quantize_dynamic of a CNN: 6
	 * DynQuantConv, 0.4 GFLOP) at 2 threads under the default limits
	 * of a gear that runs on one thread (rt_gear_serial): its work
	 * counts its convolutions' multiply-adds, so they run on both (the
	 * gear was taken for 4 flops an output element, and ran on one),
	 * the input's min and max (200K floats, in chunks of 16K) and its
	 * quantized copy too, giving the reference's bytes */
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "qdyn_cnn", "qdyn_cnn", NULL);
	Outs ref = run_om(om, true, 1), f2 = run_om(om, false, 2);
	cr_expect_geq(f2.parallel, dq_tiles() ? 6 : 0,
		      "%d kernels on 2 threads: %s", f2.parallel, f2.kernels);
	expect_same(&f2, &ref, "2 threads");
	outs_free(&ref);
	outs_free(&f2);
	remove_tree(dir);
	free(dir);
	free(om);
}
