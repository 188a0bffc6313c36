/*
 * runtime/wino.c - 3x3 convolutions of stride 1 by Winograd's minimal
 * filtering F(4x4, 3x3) (Lavin and Gray, "Fast Algorithms for
 * Convolutional Neural Networks", 2015), in plain C, once per ISA level
 * (runtime/wino_simd.h: AVX-512, AVX2, SSE2 or NEON).
 *
 * A 4x4 block of outputs of one channel o is A^T [U_o,c (.) V_c] A
 * summed over the input channels c, where V_c = B^T d_c B transforms
 * the 6x6 block of input d_c the outputs read, U_o,c = G g_o,c G^T the
 * 3x3 window g_o,c, and (.) multiplies element by element.  The sum over
 * c of each of the 36 elements is a matrix product: M_e [tiles][Co] =
 * V_e [tiles][C] U_e [C][Co].  So a block of 36 output values costs 36
 * multiply-adds per input channel where the window costs 144: 4 times
 * fewer, for the transforms' additions (one 6x6 per input and per output
 * channel of each tile) and 4 times the weights (U, once, at prepare).
 *
 * A work item is WTB tiles of one image and one group: their inputs
 * transformed into V, the 36 products by chanwise.c's tiles (chan_gemm)
 * into M, the outputs transformed back, the bias added, the activations
 * run, and written.  V and M are the session's work (rt_work_reserve),
 * per thread; U is made once per model and shared by its sessions
 * (rt_derived).  A dilated window reads its inputs d apart: a tile is
 * then 4x4 outputs d apart, of one residue mod d, reading 6x6 inputs d
 * apart.  X may be row-major (put in NHWC first, 16 channels of 16
 * pixels a transpose: 16 gathers of a pixel's channels ran 1.5 times as
 * long) or NHWC; Y either (row-major, a store per element).
 *
 * It takes a Conv where U is at most twice the bytes of Y (36 C <= 2 N
 * H W): there it ran 1.2-2.1 times as fast as oneDNN's direct kernels
 * (one thread, a node's run, 16 -> 32 channels at 256x256 to 512 -> 512
 * at 32x32; 16 -> 16 at 256x256 as fast); and up to 8 times Y's bytes
 * over 256 output pixels or more, where U, streamed once a work item,
 * still meets 32 of the window's multiply-adds a byte: ResNet-18's 128
 * channels at 28x28 ran 0.75-0.79 ms a Conv against oneDNN's 1.19-1.24
 * (U 6 times Y), but its 256 channels at 14x14 (U 47 times Y) 1.42
 * against 1.23.  A larger U would also cost more memory than the
 * activations it computes (ISNet's 512-channel layers at 32x32: 37 MB of
 * U for a 2 MB output).  On AVX2 oneDNN's direct kernel (jit:avx2) is
 * the weaker one: one thread, AMD EPYC, a Conv and Relu, oneDNN against
 * this file, 64 channels at 14x14 (U 12 times Y) 0.22 against 0.10 ms,
 * 256 at 14x14 (47) 3.6 against 2.2, 512 at 28x28 (24) 56 against 26,
 * 384 at 13x13 (82) 7.1 against 4.9, 512 at 14x14 (94) 12.8 against
 * 11.1, 256 at 7x7 (188) 1.2 against 1.1, 512 at 7x7 (376) 5.1 against
 * 5.6: there U may be up to WINO_U_AVX2 times one image's Y, whatever
 * the pixels.  One image's: an item's tiles are of one image, each item
 * streams U, so a batch does not make small images' products larger
 * (ResNet-18's 512 channels at 7x7, 4 images: 19.6 ms against oneDNN's
 * 16.4, and 28 MB of U a Conv).
 *
 * A work item is WTB tiles and, where those items are fewer than the
 * threads (small images), a part of the output channels (wino_parts).
 *
 * A FusedConv's Z (a residual) is added to each output row as it is
 * written, after the activations before it (z_after): read where Y is
 * written, so Y may be Z's buffer.
 *
 * The sums are in float in another order than the window's, with the
 * transforms' roundings on top: against the reference's double sums,
 * relative L2 errors of 0.4-2.4e-6 and every error within 7e-6 of the
 * output's largest magnitude (fast_wino, and 64 to 128 channels at
 * 64x64 and 128x128).  Each output is computed in one thread in a fixed
 * order: the same bytes at any thread count.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/act.h"
#include "chanwise.h"
#include "direct.h"

enum {
	WA = 6,		/* alpha: inputs (transformed values) across a tile */
	WE = WA * WA,	/* elements of a transformed tile */
	WM = 4,		/* outputs across a tile */
	WL = 16,	/* V's and M's rows are padded to this many floats */
	WTB = 24,	/* tiles a work item: whole tiles of chan_gemm's rows */
	WINO_PIXELS = 256, /* outputs (of all images) U may be 8 times Y at */
	WINO_U_AVX2 = 96,  /* times one image's Y U may be on AVX2 */
};

/* A work item: tiles [t0, t0 + nt) of image i, group gi, its output
 * channels [o0, o1). */
typedef struct WinoItem {
	int64_t i, gi, t0, nt, o0, o1;
} WinoItem;

typedef struct Wino {
	ConvGeom g;
	int64_t cg, og;	  /* input, output channels of a group */
	int64_t cgp, ogp; /* the same, whole vectors: V's, M's row strides */
	int64_t nr;	  /* columns of a panel of U (chan_gemm_nr) */
	int64_t th, tw;	  /* tiles down and across an image */
	int64_t usz;	  /* floats of U for one group and element */
	const float *u;	  /* [group][WE] panels of [cg][og] (rt_derived) */
	void *own;	  /* u, if this kernel's own */
	const float *w;	  /* W [cout][cg][3][3] */
	const float *b;	  /* [cout] or NULL */
	ActRun *acts;
	bool with_z;	  /* a FusedConv's Z, added after acts [0, za) */
	int za;
	RunCtx *s; /* its work: X in NHWC if it is row-major, then
			      per thread V [WTB][WE][cgp], M [WTB][WE][ogp] */
	int64_t xsz;	   /* floats of X in NHWC, 0 if X is NHWC */
	int64_t ssz;	   /* floats of V and M */
	float vmax;	   /* the largest |V| no sum of products overflows at */
	bool xnhwc, ynhwc;
	int threads;
	int64_t oparts;	   /* parts of a group's output channels an item
			      takes (more than 1 where tiles are too few
			      to give each thread work) */
	int64_t ochunk;	   /* channels a part: whole panels of nr */
	/* the level's work (wino_simd.h) */
	void (*item)(const struct Wino *k, const float *x, const float *z,
		     float *y, const struct WinoItem *it, float *scratch);
	void (*to_nhwc)(const float *x, float *xt, int64_t c, int64_t hw,
			int64_t p0, int64_t np);
} Wino;

static void wino_free(void *state)
{
	Wino *k = state;
	if (k) {
		free(k->own);
		free(k->acts);
	}
	free(k);
}

/* ---- the transforms ------------------------------------------------------ */

/* U = G g G^T for one 3x3 window g, in double. */
static void wino_weight(const float *g, double u[WE])
{
	static const double G[WA][3] = {
		{ 1.0 / 4, 0, 0 },
		{ -1.0 / 6, -1.0 / 6, -1.0 / 6 },
		{ -1.0 / 6, 1.0 / 6, -1.0 / 6 },
		{ 1.0 / 24, 1.0 / 12, 1.0 / 6 },
		{ 1.0 / 24, -1.0 / 12, 1.0 / 6 },
		{ 0, 0, 1 },
	};
	double t[WA][3];
	for (int e = 0; e < WA; e++)
		for (int v = 0; v < 3; v++)
			t[e][v] = G[e][0] * g[v] + G[e][1] * g[3 + v] +
				  G[e][2] * g[6 + v];
	for (int e = 0; e < WA; e++)
		for (int f = 0; f < WA; f++)
			u[e * WA + f] = t[e][0] * G[f][0] + t[e][1] * G[f][1] +
					t[e][2] * G[f][2];
}

/* ---- a work item ------------------------------------------------------- */

/* The first output row (or column) of tile t along an axis of nt tiles
 * per residue of dilation d. */
static inline int64_t tile_origin(int64_t t, int64_t d)
{
	return t % d + t / d * WM * d;
}

/* Which of a tile's 6 inputs along an axis of size n lie inside it
 * (bit e), the first at i0, d apart. */
static inline unsigned inside(int64_t i0, int64_t d, int64_t n)
{
	unsigned m = 0;
	for (int e = 0; e < WA; e++)
		m |= (unsigned)(i0 + e * d >= 0 && i0 + e * d < n) << e;
	return m;
}

/* The outputs of the tile at output (oy, ox) of image xi (NHWC, at the
 * group's first channel), group gi, with zi's (Y's layout and offset, or
 * NULL) added, into yi as wino_out writes them, by
 * the window in double as the reference kernel sums it: for a tile whose
 * V failed wino_in's test, so that an input not finite or huge reaches
 * the outputs whose windows hold it and no others, as the window's sums
 * do. */
static void wino_direct(const Wino *k, const float *xi, const float *zi,
			float *yi, const WinoItem *it, int64_t oy, int64_t ox)
{
	int64_t gi = it->gi;
	const ConvGeom *g = &k->g;
	int64_t h = g->in[0], w = g->in[1], oh = g->out[0], ow = g->out[1];
	int64_t dy = g->dilation[0], dx = g->dilation[1];
	for (int e = 0; e < WM && oy + e * dy < oh; e++)
	for (int f = 0; f < WM && ox + f * dx < ow; f++) {
		int64_t ry = oy + e * dy, rx = ox + f * dx;
		for (int64_t o = it->o0; o < it->o1; o++) {
			int64_t oc = gi * k->og + o;
			const float *wo = k->w + oc * k->cg * 9;
			double sum = k->b ? k->b[oc] : 0;
			for (int ky = 0; ky < 3; ky++)
			for (int kx = 0; kx < 3; kx++) {
				int64_t iy = ry - g->pad[0] + ky * dy;
				int64_t ix = rx - g->pad[1] + kx * dx;
				if (iy < 0 || iy >= h || ix < 0 || ix >= w)
					continue;
				const float *xp = xi + (iy * w + ix) * g->cin;
				for (int64_t c = 0; c < k->cg; c++)
					sum += (double)xp[c] *
					       wo[c * 9 + ky * 3 + kx];
			}
			float v = (float)sum;
			int64_t at = k->ynhwc ? (ry * ow + rx) * g->cout + o
					      : o * oh * ow + ry * ow + rx;
			for (int j = 0; j <= k->acts->n; j++) {
				if (zi && j == k->za)
					v += zi[at];
				if (j < k->acts->n)
					v = act_f32(k->acts->act[j].kind, v,
						    k->acts->act[j].a,
						    k->acts->act[j].b);
			}
			yi[at] = v;
		}
	}
}

/* The work of each ISA level (runtime/wino_simd.h). */
#define SIMD_BODY "wino_simd.h"
#include "simd_each.h"

/* Work items of tiles an image and group has (WTB tiles an item). */
static int64_t tile_items(const Wino *k)
{
	return (k->th * k->tw + WTB - 1) / WTB;
}

static int wino_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const Wino *k = state;
	const ConvGeom *g = &k->g;
	const float *x = in[0]->data, *z = k->with_z ? in[3]->data : NULL;
	float *y = tensor_mut(out[0]), *work = k->s->work;
	int nt = k->threads;
	if (!k->xnhwc) {
		int64_t hw = g->in[0] * g->in[1], per = (hw + 63) / 64;
		RT_PARALLEL_FOR
		for (int64_t r = 0; r < g->n * per; r++) {
			int64_t i = r / per, p0 = r % per * 64;
			int64_t np = hw - p0 < 64 ? hw - p0 : 64;
			k->to_nhwc(x + i * g->cin * hw,
				     work + i * g->cin * hw, g->cin, hw, p0,
				     np);
		}
		x = work;
	}
	int64_t tiles = k->th * k->tw, per = tile_items(k);
	int64_t items = g->n * g->group * per * k->oparts;
	RT_PARALLEL_FOR
	for (int64_t r = 0; r < items; r++) {
		int64_t part = r % k->oparts, rest = r / k->oparts;
		int64_t t0 = rest % per * WTB, o0 = part * k->ochunk;
		WinoItem it = {
			.i = rest / per / g->group,
			.gi = rest / per % g->group,
			.t0 = t0,
			.nt = tiles - t0 < WTB ? tiles - t0 : WTB,
			.o0 = o0,
			.o1 = k->og - o0 < k->ochunk ? k->og : o0 + k->ochunk,
		};
		k->item(k, x, z, y, &it,
			work + k->xsz + (size_t)rt_thread() * (size_t)k->ssz);
	}
	return 0;
}

const void *chan_wino_weights(const FastKernel *fk)
{
	return fk->run == wino_run ? ((const Wino *)fk->state)->u : NULL;
}

int64_t chan_wino_parts(const FastKernel *fk)
{
	return fk->run == wino_run ? ((const Wino *)fk->state)->oparts : 0;
}

/* ---- matching ---------------------------------------------------------- */

int chan_wino_conv_build(RunCtx *s, Prepared *p, Task *t)
{
	Wino *k = t->fast.state;
	k->xnhwc = rt_nhwc(p, t->n->inputs[0]);
	k->ynhwc = rt_nhwc(p, t->n->outputs[0]);
	/* a row-major X is put in NHWC first, at the start of the work */
	int64_t xn = k->g.n * k->g.cin * k->g.in[0] * k->g.in[1];
	k->xsz = k->xnhwc ? 0 : (xn + WL - 1) / WL * WL;
	size_t threads = (size_t)(k->threads > 1 ? k->threads : 1);
	if (!rt_work_reserve(s, ((size_t)k->xsz + threads * (size_t)k->ssz) *
					sizeof(float)))
		return error("out of memory for the Winograd convolution's "
			     "temporaries");
	return 0;
}

/* Tiles along an axis of n outputs, dilation d: per residue mod d, its
 * ceil(n / d) outputs (at most) in tiles of WM. */
static int64_t tiles_along(int64_t n, int64_t d)
{
	return d * (((n + d - 1) / d + WM - 1) / WM);
}

/* U of k's groups from W [cout][cg][3][3], packed for chan_gemm. */
static void wino_pack(const void *ctx, void *dst)
{
	const Wino *k = ctx;
	const float *w = k->w;
	float *to = dst;
	int64_t op = k->usz / k->cg;
	for (int64_t gi = 0; gi < k->g.group; gi++)
		for (int64_t o = 0; o < op; o++)
			for (int64_t c = 0; c < k->cg; c++) {
				double u[WE] = { 0 };
				if (o < k->og)
					wino_weight(w + ((gi * k->og + o) *
								 k->cg +
							 c) * 9,
						    u);
				for (int e = 0; e < WE; e++)
					to[(gi * WE + e) * k->usz +
					   chan_gemm_at(o, c, k->cg, k->nr)] =
						(float)u[e];
			}
}

int64_t rt_wino_u_avx2 = WINO_U_AVX2;

/* Where the tiles' items are fewer than the threads (small images), each
 * also takes a part of the output channels, whole panels, so that every
 * thread has work: each part transforms the tiles' inputs again (36
 * additions an input against 36 multiply-adds an input and output
 * channel).  An output's sums are the same whichever part computes it. */
static void wino_parts(Wino *k)
{
	int64_t items = k->g.n * k->g.group * tile_items(k);
	int64_t panels = (k->og + k->nr - 1) / k->nr, parts = 1;
	if (items < k->threads)
		parts = (k->threads + items - 1) / items;
	parts = parts < panels ? parts : panels;
	k->ochunk = (panels + parts - 1) / parts * k->nr;
	k->oparts = (k->og + k->ochunk - 1) / k->ochunk;
}

int chan_wino_conv(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	const Node *n = t->n;
	const Value *w = rt_in_val(p, n, 1), *b = rt_in_val(p, n, 2);
	ConvGeom cg;
	if (!chan_simd_conv(s, p, n, true, &cg))
		return 0;
	for (int a = 0; a < 2; a++)
		if (cg.kernel[a] != 3 || cg.stride[a] != 1)
			return 0;
	int64_t ci = cg.cin / cg.group, co = cg.cout / cg.group;
	/* U is 4 times W: at most twice the bytes of Y, or 8 times over
	 * WINO_PIXELS outputs; on AVX2, WINO_U_AVX2 times one image's
	 * (the file comment) */
	int64_t px = cg.n * cg.out[0] * cg.out[1], ulim;
	if (cpu_isa() == CPU_LEVEL_AVX2 && rt_wino_u_avx2 > 0)
		px = cg.out[0] * cg.out[1], ulim = rt_wino_u_avx2;
	else
		ulim = px >= WINO_PIXELS ? 8 : 2;
	if (ci < 16 || co < 16 || WE * ci > ulim * px)
		return 0;
	/* |U| <= max |w| (G's rows sum to at most 1 in magnitude) */
	const float *wd = w->konst->data;
	float wmax = 0;
	for (int64_t i = 0; i < shape_numel(&w->shape); i++)
		wmax = fabsf(wd[i]) > wmax || wd[i] != wd[i] ? fabsf(wd[i])
							      : wmax;
	ActRun *acts;
	if (!(wmax <= FLT_MAX) || !(acts = act_run_of(n)))
		return 0;
	Wino *k = xmalloc(sizeof(*k));
	memset(k, 0, sizeof(*k));
	k->g = cg;
	k->cg = ci, k->og = co;
	k->cgp = (ci + WL - 1) / WL * WL, k->ogp = (co + WL - 1) / WL * WL;
	k->nr = chan_gemm_nr(co);
	k->th = tiles_along(cg.out[0], cg.dilation[0]);
	k->tw = tiles_along(cg.out[1], cg.dilation[1]);
	k->usz = (co + k->nr - 1) / k->nr * k->nr * ci;
	k->b = b ? b->konst->data : NULL;
	k->acts = acts;
	k->with_z = n->op == OP_FusedConv && rt_in_val(p, n, 3);
	k->za = k->with_z ? fused_z_after(n) : acts->n;
	k->threads = rt_threads_for(s, rt_conv_flops(&cg, false));
	wino_parts(k);
	k->ssz = WE * WTB * (k->cgp + k->ogp);
	/* |M| <= ci max|V| max|U|, then A^T M A at most 19^2 times that */
	k->vmax = (float)(FLT_MAX / 2 / (19.0 * 19.0 * (double)ci *
					 (wmax > 1 ? wmax : 1)));
	k->s = s;
	k->w = w->konst->data;
	/* U depends on W, its groups and the panels' width */
	uint64_t key = RT_DERIVED('W', (uint64_t)(cg.group << 8 | k->nr));
	size_t bytes = (size_t)(cg.group * WE * k->usz) * sizeof(float);
	if (!(k->u = rt_derived(s, p, k->w, key, bytes, wino_pack, k,
				&k->own))) {
		wino_free(k);
		return 0;
	}
	CpuLevel isa = cpu_isa();
	k->item = wino_item_base, k->to_nhwc = rows_to_nhwc_base;
#if RT_X86
	if (isa >= CPU_LEVEL_AVX512)
		k->item = wino_item_avx512, k->to_nhwc = rows_to_nhwc_avx512;
	else if (isa >= CPU_LEVEL_AVX2)
		k->item = wino_item_avx2, k->to_nhwc = rows_to_nhwc_avx2;
#endif
	fk->run = wino_run;
	fk->free = wino_free;
	fk->variant = cpu_isa_name(isa);
	fk->state = k;
	fk->threads = k->threads;
	rt_task_slots(t); /* X and Y each in either layout, NHWC preferred */
	rt_slot(t, 0)->group = 1;
	rt_slot(t, -1)->group = 2;
	rt_slot(t, 0)->prefers = rt_slot(t, -1)->prefers = true;
	if (k->with_z) /* read where Y is written, in its layout */
		rt_slot(t, 3)->group = 2, rt_slot(t, 3)->prefers = true;
	return 1;
}
