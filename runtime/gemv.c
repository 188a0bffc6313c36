/*
 * runtime/gemv.c - a matrix product of rows by constant weights.
 *
 * An MLP head, or any model run on a batch of one, multiplies one row x
 * [K] by W [K, N]: every weight is read once and used once, so the
 * product runs at the speed its weights stream from cache or memory.
 * oneDNN's matmul primitive makes it a GEMM of one row (brgemm here:
 * 3.8 us for a 256x256 layer, against 1-2 us to stream 256 KiB from L2)
 * with the fixed cost of a primitive on top.  Here W is packed once, at
 * prepare (rt_derived: once per model, shared by its sessions), into
 * panels of 16 columns, [N/16][K][16] (the last panel's missing columns
 * zero), so that a run reads each panel front to back in whole vectors:
 * for each k, 16 columns' multiply-adds with x[k] broadcast.  Four
 * panels at a time (four independent sums in flight), then the
 * epilogue on those 64 columns while they are in registers' reach:
 * Gemm's alpha and beta * C (C read each run, constant or not; not at
 * all where beta is 0), FusedMatMul's Bias, and the fused activations
 * (compiler/act.h's fp32 forms).
 *
 * Each column's sum is over k in order, whatever the threads: a product
 * of 2^18 flops or more (rt_threads_for) spreads its groups of four
 * panels over the session's threads, and gives the same bytes at 1 and
 * at 2.  The hot loop is compiled per ISA level (rt.h RT_HOT_FN), its
 * vector of 16 floats one AVX-512 register, two AVX2 ones or four SSE
 * ones; the sums' rounding differs from the reference GEMM's
 * (compiler/ops/sgemm.c, which sums in blocks of K and rounds
 * alpha * sum into C per block), within the tolerance docs/kernels.md
 * states.
 *
 * Many rows, on a CPU without AVX-512, take the same panels (on AVX2,
 * fewer than 16: more run as oneDNN's 1x1 convolution, dnnl.c
 * dnnl_fast_matmul_conv, faster still): there
 * oneDNN's matmul is its sgemm (gemm:jit), which picks its kernels by
 * the thread count, so that 1 and 2 threads gave other last bits (177
 * of a 64x53x53 product's 3392 values).  Here blocks of rows by groups
 * of panels, each a product of runtime/pw_simd.h's register tiles in
 * blocks of K, are the work items: the same bytes at any thread count,
 * and on AMD Zen 4 at AVX2 0.58-0.84 of oneDNN's time on a transformer's
 * products (128x768 by 768x3072 and 197x768 by 768x768, 1 and 2
 * threads), 1.1-1.3 on a 64x256 by 256x256 one.
 */
#include <stdlib.h>
#include <string.h>

#include "chanwise.h"
#include "compiler/act.h"
#include "direct.h"
#include "gemv.h"

enum { LANES = 16, GROUP = 4 }; /* a panel's columns; panels a piece */

typedef float GemvVec __attribute__((vector_size(LANES * sizeof(float))));

typedef struct Gemv {
	int64_t m, k, n, panels; /* m: rows of A and Y */
	bool gemm;	  /* Y = alpha A B + beta C; else A B + Bias */
	float alpha, beta;
	int cin;	  /* input of C or Bias, or -1 */
	int64_t cstep;	  /* 0: C one value, 1: one a column */
	bool tb;	  /* W is [N, K] (Gemm's transB) */
	const float *w;	  /* the file's weights */
	const float *wp;  /* [panels][K][16] (rt_derived), NULL if K is 0 */
	void *own;	  /* wp, if this kernel owns it */
	ActRun *acts;
	int threads;
	ChanGemmPart part; /* m > 1: the tiles' product (runtime/pw_simd.h) */
	float *bp;	   /* m > 1: a constant Bias or C (alpha and beta
			    * 1) the tiles start from, padded to whole
			    * panels; else NULL */
} Gemv;

/* acc[p * 16 + l] = sum over i < k of x[i] * wp[(p k + i) 16 + l], for
 * panels p < np, each sum in order of i. */
RT_HOT_FN(static, void, gemv_panels,
	  (const float *x, const float *wp, int64_t k, int64_t np,
	   float *acc),
	  (x, wp, k, np, acc))
{
	int64_t p = 0;
	const int64_t step = k * LANES;
	for (; p + GROUP <= np; p += GROUP) {
		const GemvVec *w0 = (const GemvVec *)(wp + p * step);
		const GemvVec *w1 = (const GemvVec *)(wp + (p + 1) * step);
		const GemvVec *w2 = (const GemvVec *)(wp + (p + 2) * step);
		const GemvVec *w3 = (const GemvVec *)(wp + (p + 3) * step);
		GemvVec a0 = { 0 }, a1 = { 0 }, a2 = { 0 }, a3 = { 0 };
		for (int64_t i = 0; i < k; i++) {
			GemvVec xv = (GemvVec){ 0 } + x[i];
			a0 += xv * w0[i];
			a1 += xv * w1[i];
			a2 += xv * w2[i];
			a3 += xv * w3[i];
		}
		GemvVec *o = (GemvVec *)(acc + p * LANES);
		o[0] = a0, o[1] = a1, o[2] = a2, o[3] = a3;
	}
	for (; p < np; p++) {
		const GemvVec *w0 = (const GemvVec *)(wp + p * step);
		GemvVec a0 = { 0 };
		for (int64_t i = 0; i < k; i++)
			a0 += ((GemvVec){ 0 } + x[i]) * w0[i];
		((GemvVec *)acc)[p] = a0;
	}
}

/* gemv_panels below AVX-512, each panel's 16 columns as two vectors of
 * 8: GCC keeps a vector of 16 floats in memory where no register holds
 * it, and broadcast x[i] through 16 stores (AVX2 ran a 2-layer LSTM of
 * 128 at a batch of one 8 times ONNX Runtime's time).  The same sums in
 * the same order. */
typedef float GemvHalf __attribute__((vector_size(LANES / 2 * sizeof(float))));

RT_HOT_FN(static, void, gemv_panels8,
	  (const float *x, const float *wp, int64_t k, int64_t np,
	   float *acc),
	  (x, wp, k, np, acc))
{
	int64_t p = 0;
	const int64_t step = k * LANES;
	for (; p + GROUP <= np; p += GROUP) {
		const GemvHalf *w0 = (const GemvHalf *)(wp + p * step);
		const GemvHalf *w1 = (const GemvHalf *)(wp + (p + 1) * step);
		const GemvHalf *w2 = (const GemvHalf *)(wp + (p + 2) * step);
		const GemvHalf *w3 = (const GemvHalf *)(wp + (p + 3) * step);
		GemvHalf a0 = { 0 }, b0 = { 0 }, a1 = { 0 }, b1 = { 0 };
		GemvHalf a2 = { 0 }, b2 = { 0 }, a3 = { 0 }, b3 = { 0 };
		for (int64_t i = 0; i < k; i++) {
			GemvHalf xv = (GemvHalf){ 0 } + x[i];
			a0 += xv * w0[2 * i], b0 += xv * w0[2 * i + 1];
			a1 += xv * w1[2 * i], b1 += xv * w1[2 * i + 1];
			a2 += xv * w2[2 * i], b2 += xv * w2[2 * i + 1];
			a3 += xv * w3[2 * i], b3 += xv * w3[2 * i + 1];
		}
		GemvHalf *o = (GemvHalf *)(acc + p * LANES);
		o[0] = a0, o[1] = b0, o[2] = a1, o[3] = b1;
		o[4] = a2, o[5] = b2, o[6] = a3, o[7] = b3;
	}
	for (; p < np; p++) {
		const GemvHalf *w0 = (const GemvHalf *)(wp + p * step);
		GemvHalf a0 = { 0 }, b0 = { 0 };
		for (int64_t i = 0; i < k; i++) {
			GemvHalf xv = (GemvHalf){ 0 } + x[i];
			a0 += xv * w0[2 * i], b0 += xv * w0[2 * i + 1];
		}
		GemvHalf *o = (GemvHalf *)(acc + p * LANES);
		o[0] = a0, o[1] = b0;
	}
}

/* The panels' sums by the level's form. */
static void gemv_sums(const float *x, const float *wp, int64_t k, int64_t np,
		      float *acc)
{
	if (cpu_isa() >= CPU_LEVEL_AVX512)
		gemv_panels(x, wp, k, np, acc);
	else
		gemv_panels8(x, wp, k, np, acc);
}

void gemv_rows(const float *x, const float *wp, int64_t k, int64_t np,
	       float *acc)
{
	gemv_sums(x, wp, k, np, acc);
}

/* The activations of r over y[0..n), in place. */
RT_HOT_FN(static, void, gemv_acts, (const ActRun *r, float *y, size_t n),
	  (r, y, n))
{
	for (int j = 0; j < r->n; j++)
		act_loop_f32(r->act[j].kind, y, y, n, r->act[j].a, r->act[j].b);
}

/* Columns [j0, j0 + nj) of a row of Y, at yo, from the sums of their
 * products at acc (which may be yo): alpha, beta C or the Bias, then the
 * activations. */
static void gemv_out(const Gemv *g, const float *acc, const float *c,
		     float *yo, int64_t j0, int64_t nj)
{
	for (int64_t j = 0; j < nj; j++) {
		float v;
		if (g->gemm) { /* as run_gemm: beta C rounded first */
			v = c ? (float)((double)g->beta *
					(double)c[(j0 + j) * g->cstep])
			      : 0.0f;
			if (g->k)
				v += g->alpha * acc[j];
		} else {
			v = g->k ? acc[j] : 0.0f;
			if (c)
				v += c[j0 + j];
		}
		yo[j] = v;
	}
	if (g->acts->n)
		gemv_acts(g->acts, yo, (size_t)nj);
}

/* Columns of piece i (GROUP panels) into y. */
static void gemv_piece(const Gemv *g, const float *x, const float *c,
		       float *y, int64_t i)
{
	float acc[GROUP * LANES] __attribute__((aligned(64)));
	int64_t p0 = i * GROUP, np = g->panels - p0;
	np = np < GROUP ? np : GROUP;
	if (g->k)
		gemv_sums(x, g->wp + p0 * g->k * LANES, g->k, np, acc);
	int64_t j0 = p0 * LANES, nj = g->n - j0;
	nj = nj < np * LANES ? nj : np * LANES;
	gemv_out(g, acc, c, y + j0, j0, nj);
}

/* Many rows: item i, ROWS rows by GROUP panels of Y (the items of a
 * block of rows one after another, which share its rows of A), summed
 * in blocks of DEPTH along K (a panel's block, 16 KiB, stays in cache
 * while the tiles use it) into Y, then the epilogue row by row.  Each
 * sum's order is K's blocks in turn, each over k in order, whatever the
 * items and threads. */
enum { ROWS = 48, DEPTH = 256 };

static void gemm_item(const Gemv *g, const float *x, const float *c,
		      float *y, int64_t i)
{
	int64_t groups = (g->panels + GROUP - 1) / GROUP;
	int64_t r0 = i / groups * ROWS, p0 = i % groups * GROUP;
	int64_t rows = g->m - r0 < ROWS ? g->m - r0 : ROWS;
	int64_t j0 = p0 * LANES, nj = g->n - j0;
	nj = nj < GROUP * LANES ? nj : GROUP * LANES;
	float *yo = y + r0 * g->n + j0;
	for (int64_t k0 = 0; k0 < g->k; k0 += DEPTH)
		g->part(rows, nj, g->k - k0 < DEPTH ? g->k - k0 : DEPTH,
			x + r0 * g->k + k0, g->k,
			g->wp + (p0 * g->k + k0) * LANES, g->k * LANES, LANES,
			yo, g->n, k0 == 0 && g->bp ? g->bp + j0 : NULL, k0 > 0);
	/* gemv's epilogue where there is one to apply (alpha, beta C, or a
	 * Bias the tiles did not begin from); else the activations alone */
	const float *cx = g->bp && g->k ? NULL : c;
	bool out = cx || (g->gemm && g->alpha != 1.0f);
	for (int64_t r = 0; r < rows; r++) {
		float *row = yo + r * g->n;
		if (out)
			gemv_out(g, row, cx, row, j0, nj);
		else if (g->acts->n)
			gemv_acts(g->acts, row, (size_t)nj);
	}
}

static int gemv_run(void *state, const Tensor *const *in,
		    Tensor *const *out)
{
	const Gemv *g = state;
	const float *x = in[0]->data;
	const float *c = g->cin >= 0 ? in[g->cin]->data : NULL;
	float *y = tensor_mut(out[0]);
	int64_t pieces = (g->panels + GROUP - 1) / GROUP;
	if (g->m > 1) {
		pieces *= (g->m + ROWS - 1) / ROWS;
		if (!g->k)
			memset(y, 0, (size_t)(g->m * g->n) * sizeof(float));
	}
	void (*item)(const Gemv *, const float *, const float *, float *,
		     int64_t) = g->m > 1 ? gemm_item : gemv_piece;
	int nt = g->threads;
	if (nt <= 1 || pieces < 2) {
		for (int64_t i = 0; i < pieces; i++)
			item(g, x, c, y, i);
		return 0;
	}
	RT_PARALLEL_FOR
	for (int64_t i = 0; i < pieces; i++)
		item(g, x, c, y, i);
	return 0;
}

static void gemv_free(void *state)
{
	Gemv *g = state;
	free(g->own);
	free(g->acts);
	free(g->bp);
	free(g);
}

/* W into [panels][K][16] (rt_derived's make): a panel's columns from
 * W's rows (copies of 16 floats), or, where W is [N, K] (transB), from
 * 16 of W's rows read in blocks of PACK_K along K (a block of the panel
 * and the rows' lines in L1); columns past N 0.  A float at a time by
 * index, the old loop, took 60 ms of the 129 ConvNeXt-T's gear took to
 * prepare. */
enum { PACK_K = 64 };
static void gemv_pack(const void *ctx, void *dst)
{
	const Gemv *g = ctx;
	int64_t k = g->k;
	for (int64_t p = 0; p < g->panels; p++) {
		float *panel = (float *)dst + p * k * LANES;
		int64_t j0 = p * LANES;
		int64_t cols = g->n - j0 < LANES ? g->n - j0 : LANES;
		if (!g->tb) {
			for (int64_t i = 0; i < k; i++) {
				memcpy(panel + i * LANES, g->w + i * g->n + j0,
				       (size_t)cols * sizeof(float));
				memset(panel + i * LANES + cols, 0,
				       (size_t)(LANES - cols) * sizeof(float));
			}
			continue;
		}
		for (int64_t i0 = 0; i0 < k; i0 += PACK_K) {
			int64_t ie = k - i0 < PACK_K ? k : i0 + PACK_K;
			for (int64_t l = 0; l < LANES; l++) {
				const float *row = l < cols ? g->w + (j0 + l) * k
							    : NULL;
				for (int64_t i = i0; i < ie; i++)
					panel[i * LANES + l] = row ? row[i] : 0.0f;
			}
		}
	}
}

static bool f32_static(const Value *v)
{
	return v && v->tkind == TK_TENSOR && v->dtype == DT_FLOAT &&
	       shape_is_static(&v->shape);
}

/* The dims of s before its last two are 1. */
static bool one_matrix(const Shape *s)
{
	for (int i = 0; i < s->rank - 2; i++)
		if (s->dims[i] != 1)
			return false;
	return true;
}

/* gemv_match and gemm_match: one row of Y, or many (m > 1). */
static int product_match(RunCtx *s, Prepared *p, Task *t, FastKernel *fk,
			 bool many)
{
	const Node *n = t->n;
	bool gemm = n->op == OP_Gemm || n->op == OP_FusedGemm;
	bool fused = n->op == OP_FusedGemm || n->op == OP_FusedMatMul;
	const Value *a = rt_in_val(p, n, 0), *b = rt_in_val(p, n, 1);
	const Value *c = gemm || fused ? rt_in_val(p, n, 2) : NULL;
	const Value *y = &p->g->vals[n->outputs[0]];
	if (n->ninputs > 3 || !f32_static(a) || !f32_static(b) ||
	    !f32_static(y) || (c && !f32_static(c)) || y->shape.rank < 1 ||
	    b->kind != VAL_WEIGHT || !b->konst || !b->konst->data)
		return 0;
	for (int32_t k = 1; k < n->noutputs; k++)
		if (n->outputs[k] >= 0)
			return 0;
	int64_t nn = y->shape.dims[y->shape.rank - 1], kk;
	int64_t m = nn ? shape_numel(&y->shape) / nn : 0;
	if (m < 1 || many != (m > 1))
		return 0;
	bool tb = false;
	float alpha = 1, beta = 1;
	if (gemm) {
		if (a->shape.rank != 2 || b->shape.rank != 2)
			return 0;
		bool ta = attr_int(n, "transA", 0);
		tb = attr_int(n, "transB", 0);
		kk = a->shape.dims[ta ? 0 : 1];
		if (a->shape.dims[ta ? 1 : 0] != m || (ta && m > 1) ||
		    b->shape.dims[tb ? 1 : 0] != kk ||
		    b->shape.dims[tb ? 0 : 1] != nn)
			return 0;
		alpha = attr_float(n, "alpha", 1.0f);
		beta = attr_float(n, "beta", 1.0f);
		if (beta == 0.0f)
			c = NULL; /* not read, as run_gemm */
		/* one value, or one a column ([N, 1] would be one a row) */
		if (c && shape_numel(&c->shape) != 1 &&
		    (shape_numel(&c->shape) != nn || c->shape.rank > 2 ||
		     c->shape.dims[c->shape.rank - 1] != nn))
			return 0;
	} else {
		int rb = b->shape.rank;
		kk = a->shape.dims[a->shape.rank - 1];
		if (a->shape.rank < 1 || shape_numel(&a->shape) != m * kk ||
		    rb < 2 || !one_matrix(&b->shape) ||
		    b->shape.dims[rb - 2] != kk || b->shape.dims[rb - 1] != nn)
			return 0;
		if (c && (c->shape.rank != 1 || c->shape.dims[0] != nn))
			return 0;
	}
	ActRun *acts = act_run_of(n);
	if (!acts)
		return 0;
	Gemv *g = xmalloc(sizeof(*g));
	*g = (Gemv){ .m = m, .k = kk, .n = nn,
		     .panels = (nn + LANES - 1) / LANES,
		     .gemm = gemm, .alpha = alpha, .beta = beta,
		     .cin = c ? 2 : -1,
		     .cstep = c && shape_numel(&c->shape) == nn ? 1 : 0,
		     .tb = tb, .w = b->konst->data, .acts = acts };
	g->threads = rt_threads_for(s, 2.0 * (double)(m * kk) * (double)nn);
	g->part = chan_gemm_part_for(cpu_isa());
	if (m > 1 && c && c->kind == VAL_WEIGHT && c->konst &&
	    c->konst->data && (!gemm || (alpha == 1.0f && beta == 1.0f))) {
		const float *cv = c->konst->data;
		g->bp = calloc((size_t)(g->panels * LANES), sizeof(float));
		if (!g->bp) {
			gemv_free(g);
			return error("out of memory for %s", n->name);
		}
		for (int64_t j = 0; j < nn; j++)
			g->bp[j] = cv[j * g->cstep];
	}
	if (kk && nn &&
	    !(g->wp = rt_derived(s, p, g->w, RT_DERIVED('V', tb),
				 (size_t)(g->panels * kk * LANES) *
					 sizeof(float),
				 gemv_pack, g, &g->own))) {
		gemv_free(g);
		return error("out of memory for the packed weights of %s",
			     n->name);
	}
	fk->run = gemv_run;
	fk->free = gemv_free;
	fk->state = g;
	fk->threads = g->threads;
	fk->variant = RT_ISA_NAME();
	return 1;
}

int gemv_match(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	return product_match(s, p, t, fk, false);
}

int gemm_match(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	return cpu_isa() < CPU_LEVEL_AVX512 ? product_match(s, p, t, fk, true)
					    : 0;
}
