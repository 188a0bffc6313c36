/*
 * runtime/direct.c - fast paths in plain C (runtime/direct.h).
 *
 * ConvTranspose with few channels: oneDNN pads its channels to 16 and
 * runs the few-channel upsampling heads of detectors 10-30x slower than
 * the arithmetic needs.  Here each output row is split into its stride
 * phases (the outputs px, px + s, px + 2s, ...), every phase being an
 * ordinary stride-1 correlation of input rows with the kernel taps that
 * land on it: a contiguous multiply-add over the input row into a phase
 * accumulator; the phases are then interleaved into the output row with
 * the bias.
 *
 * Sigmoid and Softmax: exp by range reduction to [-ln2/2, ln2/2] and a
 * polynomial fitted to exp's relative error (compiler/act.h's EXP_BIAS,
 * EXP_FINISH), in branch-free loops the compiler vectorises; Sigmoid is
 * act.h's fp32 form, of the accuracy its table states.
 *
 * Yuv420sp (atc's YUV420SP_U8 AIPP): compiler/ops/image.h's loop, the
 * reference kernel's, compiled per ISA here and spread over the threads
 * by pairs of output rows (each pair its own bytes; integer arithmetic:
 * the same result at any thread count).
 *
 * The hot loops are compiled for AVX-512 and AVX2 as well as the base
 * ISA, picked once by the loader (target_clones).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/act.h"
#include "compiler/ops/image.h"
#include "chanwise.h"
#include "direct.h"

static bool static_f32(const Value *v)
{
	return v && v->dtype == DT_FLOAT && v->tkind == TK_TENSOR &&
	       shape_is_static(&v->shape);
}

static const float *weights_of(const Value *v)
{
	return v && v->kind == VAL_WEIGHT && v->konst ? v->konst->data : NULL;
}

/* ---- ConvTranspose -------------------------------------------------- */

typedef struct Deconv {
	ConvGeom g;
	const float *w, *b; /* [cin, cout/group, kh, kw]; bias or NULL */
	float *acc;	    /* per thread: one phase of an output row; or
			     * the product's block (deconv_product) */
	int act;	    /* DIRECT_RELU, DIRECT_SIGMOID after it, or 0 */
	int threads;
	/* the kernel its stride, unpadded: W^T [cout kh kw][cin], blocks
	 * of rows input rows (ld floats a channel's, whole vectors) */
	float *wt;
	ChanGemmPart gemm;
	int64_t rows, ld;
} Deconv;

static void deconv_free(void *state)
{
	Deconv *d = state;
	if (d) {
		free(d->acc);
		free(d->wt);
	}
	free(d);
}

/* acc[j] += w * x[j + off] for j in [lo, hi). */
RT_HOT_FN(static, void, madd,
	   (float *restrict acc, const float *restrict x, float w, int64_t lo, int64_t hi, int64_t off),
	   (acc, x, w, lo, hi, off))
{
	for (int64_t j = lo; j < hi; j++)
		acc[j] += w * x[j + off];
}

/* One phase px of output row oy of channel oc (group grp, batch n). */
static void deconv_phase(const Deconv *d, const float *x, int64_t oc,
			 int64_t oy, int64_t px, int64_t nj, float *acc)
{
	const ConvGeom *g = &d->g;
	int64_t cin = g->cin / g->group, cout = g->cout / g->group;
	int64_t kh = g->kernel[0], kw = g->kernel[1];
	int64_t ih = g->in[0], iw = g->in[1];
	int64_t grp = oc / cout, o = oc % cout;
	memset(acc, 0, (size_t)nj * sizeof(*acc));
	for (int64_t ky = 0; ky < kh; ky++) {
		int64_t ty = oy + g->pad[0] - ky * g->dilation[0];
		if (ty < 0 || ty % g->stride[0] || ty / g->stride[0] >= ih)
			continue;
		int64_t iy = ty / g->stride[0];
		for (int64_t kx = 0; kx < kw; kx++) {
			int64_t u = px + g->pad[1] - kx * g->dilation[1];
			int64_t sx = g->stride[1];
			if (((u % sx) + sx) % sx)
				continue;
			int64_t off = u / sx; /* exact */
			int64_t lo = off < 0 ? -off : 0;
			int64_t hi = iw - off < nj ? iw - off : nj;
			if (lo >= hi)
				continue;
			for (int64_t i = 0; i < cin; i++) {
				int64_t ic = grp * cin + i;
				float w = d->w[((ic * cout + o) * kh + ky) * kw +
					       kx];
				madd(acc, x + (ic * ih + iy) * iw, w, lo, hi,
				     off);
			}
		}
	}
}

static void act_row(int act, float *y, int64_t n);

/* y[j] = the phases' outputs interleaved (a phase's output j goes to
 * y[px + j sx]) plus the bias; phases of nj outputs each, phase px at
 * acc + px nj.  Stride 2, the heads' common case, in one loop the
 * compiler vectorises. */
RT_HOT_FN(static, void, interleave,
	   (float *restrict y, const float *restrict acc, int64_t ow, int64_t sx, int64_t nj, float bias),
	   (y, acc, ow, sx, nj, bias))
{
	if (sx == 2) {
		const float *a0 = acc, *a1 = acc + nj;
		int64_t pairs = ow / 2;
		for (int64_t j = 0; j < pairs; j++) {
			y[2 * j] = a0[j] + bias;
			y[2 * j + 1] = a1[j] + bias;
		}
		if (ow % 2)
			y[ow - 1] = a0[pairs] + bias;
		return;
	}
	for (int64_t x = 0; x < ow; x++)
		y[x] = acc[x % sx * nj + x / sx] + bias;
}

/* Output row oy of channel oc of image n: each phase into its part of
 * acc (room for the row rounded up to whole phases), then interleaved. */
static void deconv_row(const Deconv *d, const float *xb, float *yb,
		       int64_t n, int64_t oc, int64_t oy, float *acc)
{
	const ConvGeom *g = &d->g;
	int64_t oh = g->out[0], ow = g->out[1], sx = g->stride[1];
	int64_t nj = (ow + sx - 1) / sx;
	const float *x = xb + n * g->cin * g->in[0] * g->in[1];
	float *y = yb + ((n * g->cout + oc) * oh + oy) * ow;
	for (int64_t px = 0; px < sx && px < ow; px++)
		deconv_phase(d, x, oc, oy, px, (ow - px + sx - 1) / sx,
			     acc + px * nj);
	interleave(y, acc, ow, sx, nj, d->b ? d->b[oc] : 0.0f);
	act_row(d->act, y, ow);
}

/* A thread's accumulator: a row rounded up to whole phases. */
static int64_t deconv_room(const ConvGeom *g)
{
	return (g->out[1] + g->stride[1] - 1) / g->stride[1] * g->stride[1];
}

static int deconv_run(void *state, const Tensor *const *in,
		      Tensor *const *out)
{
	const Deconv *d = state;
	const ConvGeom *g = &d->g;
	const float *xb = in[0]->data;
	float *yb = tensor_mut(out[0]);
	int64_t oh = g->out[0], rows = g->n * g->cout * oh;
	int nt = d->threads;
	RT_PARALLEL_ROWS
	for (int64_t r = 0; r < rows; r++)
		deconv_row(d, xb, yb, r / oh / g->cout, r / oh % g->cout,
			   r % oh, d->acc + rt_thread() * deconv_room(g));
	return 0;
}

/* ConvTranspose whose kernel is its stride, unpadded, one group (the
 * 2x2 stride-2 upsampling of U-Nets and detection heads): each output
 * takes one tap of one input pixel, so the op is one matrix product,
 * C = W^T [cout kh kw][cin] by X [cin][pixels] (a 1x1 convolution to
 * cout kh kw channels), each of C's rows then the taps (ky, kx) of one
 * output channel: row (oc, ky, kx) interleaved with its kx siblings
 * into output rows ky of the pixels' rows.  The phases above ran a torch
 * U-Net's 32-to-16-channel layer at 2 GMAC/s (a multiply-add pass over a
 * row per input channel and tap): 80% of ONNX Runtime's whole run.  A
 * work item is a block of input rows: X's rows copied into whole
 * vectors, multiplied on chanwise.c's tiles (each sum over cin in order,
 * the bias after it, as the phases sum), interleaved, then the
 * activation over the block's output rows.  (C as X^T W, pixels by
 * taps, scattered its outputs a float or two a cache line: PP-OCRv4
 * det's 24-to-24 layer at 640x640 took 7 ms.) */
static void deconv_block(const Deconv *d, const float *xb, float *yb,
			 int64_t i, float *work)
{
	const ConvGeom *g = &d->g;
	int64_t ih = g->in[0], iw = g->in[1], kh = g->kernel[0];
	int64_t kw = g->kernel[1], oh = g->out[0], ow = g->out[1];
	int64_t blocks = (ih + d->rows - 1) / d->rows, img = i / blocks;
	int64_t iy0 = i % blocks * d->rows, ld = d->ld;
	int64_t rows = ih - iy0 < d->rows ? ih - iy0 : d->rows;
	int64_t np = rows * iw, ncol = g->cout * kh * kw;
	const float *x = xb + (img * g->cin * ih + iy0) * iw;
	float *xr = work, *c = work + g->cin * ld;
	for (int64_t ci = 0; ci < g->cin; ci++) {
		memcpy(xr + ci * ld, x + ci * ih * iw,
		       (size_t)np * sizeof(float));
		memset(xr + ci * ld + np, 0, (size_t)(ld - np) * sizeof(float));
	}
	d->gemm(ncol, np, g->cin, d->wt, g->cin, xr, 0, ld, c, ld, NULL,
		false);
	for (int64_t oc = 0; oc < g->cout; oc++) {
		float bias = d->b ? d->b[oc] : 0.0f;
		float *y = yb + ((img * g->cout + oc) * oh + iy0 * kh) * ow;
		for (int64_t r = 0; r < rows; r++)
			for (int64_t ky = 0; ky < kh; ky++)
				interleave(y + (r * kh + ky) * ow,
					   c + (oc * kh + ky) * kw * ld + r * iw,
					   ow, kw, ld, bias);
		for (int64_t r = 0; r < rows * kh && d->act; r++)
			act_row(d->act, y + r * ow, ow);
	}
}

static int deconv_product_run(void *state, const Tensor *const *in,
			      Tensor *const *out)
{
	const Deconv *d = state;
	const ConvGeom *g = &d->g;
	int64_t items = g->n * ((g->in[0] + d->rows - 1) / d->rows);
	int64_t room = d->ld * (g->cin + g->cout * g->kernel[0] *
						 g->kernel[1]);
	const float *xb = in[0]->data;
	float *yb = tensor_mut(out[0]);
	int nt = d->threads;
	RT_PARALLEL_FOR
	for (int64_t i = 0; i < items; i++)
		deconv_block(d, xb, yb, i, d->acc + rt_thread() * room);
	return 0;
}

/* Pixels a block of deconv_product about takes: its rows of C (cout kh
 * kw of them) stay in L2. */
enum { DECONV_PIXELS = 256 };

/* Whether d's geometry is deconv_product's, which it then takes: 1, 0,
 * or -1 (out of memory, with an error). */
static int deconv_product(Deconv *d, const char *name)
{
	const ConvGeom *g = &d->g;
	for (int a = 0; a < 2; a++)
		if (g->kernel[a] != g->stride[a] || g->dilation[a] != 1 ||
		    g->pad[a] != 0 || g->out[a] != g->in[a] * g->stride[a])
			return 0;
	int64_t ncol = g->cout * g->kernel[0] * g->kernel[1];
	if (g->group != 1 || g->cin < 1 || g->in[0] < 1 || g->in[1] < 1 ||
	    ncol < 1)
		return 0;
	d->gemm = chan_gemm_part_for(cpu_isa());
	d->rows = DECONV_PIXELS / g->in[1] > 1 ? DECONV_PIXELS / g->in[1] : 1;
	d->rows = d->rows < g->in[0] ? d->rows : g->in[0];
	d->ld = (d->rows * g->in[1] + 15) / 16 * 16;
	int64_t room = d->ld * (g->cin + ncol);
	d->wt = malloc((size_t)(ncol * g->cin) * sizeof(float));
	d->acc = malloc((size_t)(d->threads * room) * sizeof(float));
	if (!d->wt || !d->acc)
		return error("node '%s' (ConvTranspose): out of memory for "
			     "its weights and blocks", name);
	for (int64_t ci = 0; ci < g->cin; ci++)
		for (int64_t j = 0; j < ncol; j++)
			d->wt[j * g->cin + ci] = d->w[ci * ncol + j];
	return 1;
}

bool direct_conv_geom(RunCtx *s, Prepared *p, const Node *n,
		      bool transpose, ConvGeom *cg)
{
	const Value *x = rt_in_val(p, n, 0), *w = rt_in_val(p, n, 1);
	const Value *b = rt_in_val(p, n, 2);
	const Value *y = &p->g->vals[n->outputs[0]];
	for (int32_t i = 1; i < n->noutputs; i++)
		if (n->outputs[i] >= 0)
			return false;
	if (!static_f32(x) || !static_f32(w) || !static_f32(y) ||
	    (b && !static_f32(b)) || !weights_of(w) ||
	    (b && !weights_of(b)) || x->shape.rank != 4)
		return false;
	OpCtx c = { .model = s->model->m, .g = p->g, .n = (Node *)n,
		    .opset = model_opset(s->model->m),
		    .fold_limit = INT64_MAX };
	if (nn_conv_geom(&c, 0, 1, transpose, cg) < 0) {
		clear_error();
		return false;
	}
	return true;
}

/* Channels in and out per group from which oneDNN's ConvTranspose takes
 * over: below, it pads channels to a multiple of 16 and reorders in and
 * out (PP-OCRv4 det's 24-channel 2x2 upsampling head: 2x this path's
 * time). */
enum { DECONV_CH = 32 };

int direct_deconv(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *w = rt_in_val(p, n, 1), *b = rt_in_val(p, n, 2);
	ConvGeom cg;
	if (!direct_conv_geom(s, p, n, true, &cg))
		return 0;
	if (cg.nsp != 2 || cg.group < 1 || cg.cin % cg.group ||
	    cg.cout % cg.group ||
	    (cg.cin / cg.group >= DECONV_CH &&
	     cg.cout / cg.group >= DECONV_CH) ||
	    (b && shape_numel(&b->shape) != cg.cout))
		return 0;
	for (int a = 0; a < 2; a++)
		if (cg.stride[a] < 1 || cg.dilation[a] < 1)
			return 0;
	Deconv *d = xmalloc(sizeof(*d));
	memset(d, 0, sizeof(*d));
	d->g = cg;
	d->w = weights_of(w);
	d->b = b ? weights_of(b) : NULL;
	d->threads = rt_threads_for(s, rt_conv_flops(&cg, true));
	int rc = deconv_product(d, n->name);
	if (rc < 0) {
		deconv_free(d);
		return -1;
	}
	if (!rc)
		d->acc = xmalloc((size_t)(d->threads * deconv_room(&cg)) *
				 sizeof(float));
	k->run = rc ? deconv_product_run : deconv_run;
	k->variant = rc ? "product" : NULL;
	k->free = deconv_free;
	k->state = d;
	k->threads = d->threads;
	return 1;
}

/* ---- Conv with few output channels ------------------------------------ */

/* oneDNN pads a convolution's output channels to 16: a head producing 4
 * maps does 4x the work.  Here output channels go in blocks of OCB, each
 * a vector of VL outputs along a row: every input value loaded feeds OCB
 * multiply-adds.  Stride 1, no dilation, one group; border outputs (taps
 * outside the row) are computed one at a time. */
enum { OCB = 4, VL = 16 };

typedef float Vec __attribute__((vector_size(VL * sizeof(float))));

typedef struct SmallConv {
	ConvGeom g;
	float *w;	 /* [cout/OCB rounded up][cin][kh][kw][OCB] */
	const float *b;	 /* [cout] or NULL */
	bool relu;
	int threads;
} SmallConv;

static void small_conv_free(void *state)
{
	SmallConv *c = state;
	if (c)
		free(c->w);
	free(c);
}

/* Output (oy, x) of block ob, taps checked against the input. */
static void conv_point(const SmallConv *c, const float *x, int64_t ob,
		       int64_t oy, int64_t ox, float *acc)
{
	const ConvGeom *g = &c->g;
	int64_t kh = g->kernel[0], kw = g->kernel[1];
	int64_t ih = g->in[0], iw = g->in[1];
	for (int64_t ic = 0; ic < g->cin; ic++)
		for (int64_t ky = 0; ky < kh; ky++) {
			int64_t iy = oy - g->pad[0] + ky;
			if (iy < 0 || iy >= ih)
				continue;
			for (int64_t kx = 0; kx < kw; kx++) {
				int64_t ix = ox - g->pad[1] + kx;
				if (ix < 0 || ix >= iw)
					continue;
				float v = x[(ic * ih + iy) * iw + ix];
				const float *w =
					c->w + (((ob * g->cin + ic) * kh + ky) *
							kw +
						kx) * OCB;
				for (int l = 0; l < OCB; l++)
					acc[l] += w[l] * v;
			}
		}
}

/* Outputs [ox, ox + 2 VL) of row oy, block ob, every tap inside: OCB x 2
 * vector accumulators, enough independent sums to keep the FMA units
 * busy. */
RT_HOT_FN(static, void, conv_vec,
	   (const SmallConv *c, const float *x, int64_t ob, int64_t oy, int64_t ox, Vec *acc),
	   (c, x, ob, oy, ox, acc))
{
	const ConvGeom *g = &c->g;
	int64_t kh = g->kernel[0], kw = g->kernel[1];
	int64_t ih = g->in[0], iw = g->in[1];
	Vec a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
	Vec b0 = acc[4], b1 = acc[5], b2 = acc[6], b3 = acc[7];
	for (int64_t ic = 0; ic < g->cin; ic++)
		for (int64_t ky = 0; ky < kh; ky++) {
			int64_t iy = oy - g->pad[0] + ky;
			if (iy < 0 || iy >= ih)
				continue;
			const float *row =
				x + (ic * ih + iy) * iw + ox - g->pad[1];
			const float *w =
				c->w + ((ob * g->cin + ic) * kh + ky) * kw * OCB;
			for (int64_t kx = 0; kx < kw; kx++, w += OCB) {
				Vec u, v;
				memcpy(&u, row + kx, sizeof(u));
				memcpy(&v, row + kx + VL, sizeof(v));
				a0 += w[0] * u, b0 += w[0] * v;
				a1 += w[1] * u, b1 += w[1] * v;
				a2 += w[2] * u, b2 += w[2] * v;
				a3 += w[3] * u, b3 += w[3] * v;
			}
		}
	acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
	acc[4] = b0, acc[5] = b1, acc[6] = b2, acc[7] = b3;
}

static void conv_store(const SmallConv *c, float *y, int64_t ob, int64_t at,
		       const float *acc, int64_t stride, int64_t count)
{
	const ConvGeom *g = &c->g;
	int64_t plane = g->out[0] * g->out[1];
	for (int l = 0; l < OCB && ob * OCB + l < g->cout; l++)
		for (int64_t i = 0; i < count; i++) {
			float v = acc[l * stride + i];
			y[(ob * OCB + l) * plane + at + i] =
				c->relu && v < 0 ? 0 : v;
		}
}

/* The outputs [lo, hi) of a row whose taps all fall inside it. */
static void inner_range(const ConvGeom *g, int64_t *lo, int64_t *hi)
{
	int64_t ow = g->out[1];
	*lo = g->pad[1];
	*hi = g->in[1] - g->kernel[1] + 1 + g->pad[1];
	*hi = *hi > ow ? ow : *hi;
	*lo = *lo > *hi ? *hi : *lo;
}

/* Row oy of block ob: pairs of vectors over [lo, hi) (the last pair moved
 * back to end at hi, recomputing a few outputs to the same values), the
 * borders one output at a time. */
static void conv_row(const SmallConv *c, const float *x, float *y,
		     int64_t ob, int64_t oy, const float *bias)
{
	const ConvGeom *g = &c->g;
	int64_t ow = g->out[1], lo, hi;
	inner_range(g, &lo, &hi);
	for (int64_t ox = 0; ox < ow; ox++) {
		if (ox == lo) {
			for (int64_t at = lo; at < hi; at += 2 * VL) {
				at = at + 2 * VL > hi ? hi - 2 * VL : at;
				Vec acc[2 * OCB]; /* [l], [OCB + l]: halves */
				float a[OCB][2 * VL];
				for (int l = 0; l < OCB; l++)
					for (int i = 0; i < VL; i++)
						acc[l][i] = acc[OCB + l][i] =
							bias[l];
				conv_vec(c, x, ob, oy, at, acc);
				for (int l = 0; l < OCB; l++) {
					memcpy(a[l], &acc[l], sizeof(Vec));
					memcpy(a[l] + VL, &acc[OCB + l],
					       sizeof(Vec));
				}
				conv_store(c, y, ob, oy * ow + at, a[0],
					   2 * VL, 2 * VL);
			}
			ox = hi - 1;
			continue;
		}
		float acc[OCB];
		memcpy(acc, bias, sizeof(acc));
		conv_point(c, x, ob, oy, ox, acc);
		conv_store(c, y, ob, oy * ow + ox, acc, 1, 1);
	}
}

static int small_conv_run(void *state, const Tensor *const *in,
			  Tensor *const *out)
{
	const SmallConv *c = state;
	const ConvGeom *g = &c->g;
	int64_t oh = g->out[0], ow = g->out[1];
	int64_t nb = (g->cout + OCB - 1) / OCB, rows = g->n * nb * oh;
	int nt = c->threads;
	RT_PARALLEL_ROWS
	for (int64_t r = 0; r < rows; r++) {
		int64_t n = r / oh / nb, ob = r / oh % nb, oy = r % oh;
		const float *x = (const float *)in[0]->data +
				 n * g->cin * g->in[0] * g->in[1];
		float *y = (float *)tensor_mut(out[0]) + n * g->cout * oh * ow;
		float bias[OCB];
		for (int l = 0; l < OCB; l++)
			bias[l] = c->b && ob * OCB + l < g->cout
					  ? c->b[ob * OCB + l]
					  : 0;
		conv_row(c, x, y, ob, oy, bias);
	}
	return 0;
}

static bool relu_only(const Node *n, bool *relu)
{
	const Attr *a = node_attr(n, FUSED_ACTS_ATTR);
	*relu = false;
	if (!a)
		return true;
	if (a->type != ATTR_STRINGS || a->n > 1)
		return false;
	if (a->n == 0)
		return true;
	*relu = act_lookup((const char *)a->strings[0].data,
			   a->strings[0].len) == ACT_Relu;
	return *relu;
}

int direct_conv(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	bool fused = n->op != OP_Conv, relu = false;
	const Value *w = rt_in_val(p, n, 1), *b = rt_in_val(p, n, 2);
	ConvGeom cg;
	if ((fused && (rt_in_val(p, n, 3) || !relu_only(n, &relu))) ||
	    !direct_conv_geom(s, p, n, false, &cg))
		return 0;
	/* few outputs, enough inputs and row to fill the vectors; a window
	 * (a 1x1 convolution is oneDNN's, which keeps NHWC around it) */
	int64_t lo, hi;
	inner_range(&cg, &lo, &hi);
	if (cg.nsp != 2 || cg.group != 1 || cg.cout > 8 || cg.cin < 4 ||
	    cg.kernel[0] * cg.kernel[1] == 1 ||
	    hi - lo < 2 * VL || (b && shape_numel(&b->shape) != cg.cout))
		return 0;
	for (int a = 0; a < 2; a++)
		if (cg.stride[a] != 1 || cg.dilation[a] != 1)
			return 0;
	int64_t nb = (cg.cout + OCB - 1) / OCB;
	int64_t taps = cg.cin * cg.kernel[0] * cg.kernel[1];
	SmallConv *sc = xmalloc(sizeof(*sc));
	sc->g = cg;
	sc->threads = rt_threads_for(s, rt_conv_flops(&cg, false));
	sc->b = b ? weights_of(b) : NULL;
	sc->relu = relu;
	sc->w = xmalloc((size_t)(nb * taps * OCB) * sizeof(float));
	const float *wd = weights_of(w);
	for (int64_t ob = 0; ob < nb; ob++)
		for (int64_t i = 0; i < taps; i++)
			for (int l = 0; l < OCB; l++) {
				int64_t o = ob * OCB + l;
				sc->w[(ob * taps + i) * OCB + l] =
					o < cg.cout ? wd[o * taps + i] : 0;
			}
	k->run = small_conv_run;
	k->free = small_conv_free;
	k->state = sc;
	k->threads = sc->threads;
	return 1;
}

/* ---- exp, Sigmoid, Softmax -------------------------------------------- */

/* exp and Sigmoid are compiler/act.h's (EXP_BIAS, EXP_FINISH,
 * exp_clamped, act_sigmoid_f32); here in loops, each ISA's clone
 * vectorising them. */
RT_HOT_FN(, void, direct_sigmoid_run,
	   (const float *x, float *y, size_t n),
	   (x, y, n))
{
	for (size_t i = 0; i < n; i++)
		y[i] = act_sigmoid_f32(x[i]);
}

/* Softmax of one row of len (> 0) floats; a row with a NaN or whose max
 * is infinite gives NaN everywhere, as the reference kernel does.  In
 * GCC's vectors of VL floats (one register on AVX-512, two on AVX2): the
 * max and the sum go through VL partial results in a fixed order (the
 * same at any thread count); the tail of a row, under VL, one at a
 * time. */
typedef int32_t IVec __attribute__((vector_size(VL * sizeof(int32_t))));
typedef uint32_t UVec __attribute__((vector_size(VL * sizeof(uint32_t))));

/* exp_clamped of each lane of *v (already clamped), in place (vectors
 * go by pointer: returning one would change the ABI between clones). */
static inline __attribute__((always_inline)) void vec_exp(Vec *v)
{
	Vec fk = EXP_BIAS(*v), y;
	Vec scale = (Vec)((UVec)fk << 23);
	EXP_FINISH(*v, fk, scale, y);
	*v = y;
}

#include "vec16.h"

/* exp(v - m) in each lane, v - m (never above 0 here) clamped to -87 at
 * the least. */
static inline __attribute__((always_inline)) void vec_exp_from(Vec *v,
							       float m)
{
	*v -= m; /* <= 0: m is the row's largest, the row has no NaN */
	*v = VEC_PICK(*v >= -87.0f, *v, (Vec){ 0 } - 87.0f);
	vec_exp(v);
}

/* A row of fewer than VL floats, one at a time. */
static void softmax_short(const float *x, float *y, int64_t len)
{
	float m = x[0], sum = 0;
	bool nan = false;
	for (int64_t j = 0; j < len; j++) {
		m = x[j] > m ? x[j] : m;
		nan |= x[j] != x[j];
	}
	for (int64_t j = 0; j < len; j++)
		y[j] = nan || m == INFINITY || m == -INFINITY
			       ? NAN
			       : exp_clamped(clamp_exp_arg(x[j] - m));
	for (int64_t j = 0; j < len; j++)
		sum += y[j];
	for (int64_t j = 0; j < len; j++)
		y[j] /= sum;
}

/* A row of len >= VL: whole vectors, and where len is no multiple of VL
 * one more ending at the row's end (overlapping the one before; its
 * overlapped lanes are left out of the sum). */
RT_HOT_FN(static, void, softmax_row,
	   (const float *x, float *y, int64_t len),
	   (x, y, len))
{
	static const IVec lane = { 0, 1, 2,  3,	 4,  5,	 6,  7,
				   8, 9, 10, 11, 12, 13, 14, 15 };
	if (len < VL) {
		softmax_short(x, y, len);
		return;
	}
	int64_t full = len / VL * VL, last = len - VL;
	int32_t over = (int32_t)(VL - (len - full)); /* lanes to leave out */
	Vec vm, v, acc = { 0 };
	IVec vnan = { 0 };
	memcpy(&vm, x + last, sizeof(vm));
	vnan |= vm != vm;
	for (int64_t j = 0; j < full; j += VL) {
		memcpy(&v, x + j, sizeof(v));
		vm = VEC_PICK(v > vm, v, vm);
		vnan |= v != v;
	}
	float m = vec_max(&vm);
	if (ivec_any(&vnan) || m == INFINITY || m == -INFINITY) {
		for (int64_t j = 0; j < len; j++)
			y[j] = NAN;
		return;
	}
	for (int64_t j = 0; j < full; j += VL) {
		memcpy(&v, x + j, sizeof(v));
		vec_exp_from(&v, m);
		acc += v;
		memcpy(y + j, &v, sizeof(v));
	}
	if (full < len) {
		memcpy(&v, x + last, sizeof(v));
		vec_exp_from(&v, m);
		acc += VEC_PICK(lane >= over, v, (Vec){ 0 });
		memcpy(y + last, &v, sizeof(v));
	}
	float inv = 1.0f / vec_sum(&acc);
	for (int64_t j = 0; j < len; j++)
		y[j] *= inv;
}

/* softmax_row on 8 lanes, for AVX2 and the baseline: a vector of 16
 * floats there is split in pieces, and GCC lowered its lane shuffles
 * and compares to scalar code (the avx2 clone of softmax_row took 7
 * times the AVX-512 time on PP-OCRv4 rec).  The same steps, the max and
 * the sum over 8 partial results in a fixed order. */
typedef float Vec8 __attribute__((vector_size(8 * sizeof(float))));
typedef int32_t IVec8 __attribute__((vector_size(8 * sizeof(int32_t))));
typedef uint32_t UVec8 __attribute__((vector_size(8 * sizeof(uint32_t))));
#define VEC8_PICK(mask, a, b) \
	((Vec8)(((mask) & (IVec8)(a)) | (~(mask) & (IVec8)(b))))

/* vec_exp_from on 8 lanes (by pointer, as vec_exp). */
static inline __attribute__((always_inline)) void vec8_exp_from(Vec8 *p,
								float m)
{
	Vec8 v = *p - m;
	v = VEC8_PICK(v >= -87.0f, v, (Vec8){ 0 } - 87.0f);
	Vec8 fk = EXP_BIAS(v), y;
	Vec8 scale = (Vec8)((UVec8)fk << 23);
	EXP_FINISH(v, fk, scale, y);
	*p = y;
}

RT_HOT_FN(static, void, softmax_row8,
	  (const float *x, float *y, int64_t len),
	  (x, y, len))
{
	static const IVec8 lane = { 0, 1, 2, 3, 4, 5, 6, 7 };
	if (len < 8) {
		softmax_short(x, y, len);
		return;
	}
	int64_t full = len / 8 * 8, last = len - 8;
	int32_t over = (int32_t)(8 - (len - full)); /* lanes to leave out */
	Vec8 vm, v, acc = { 0 };
	IVec8 vnan = { 0 };
	memcpy(&vm, x + last, sizeof(vm));
	vnan |= vm != vm;
	for (int64_t j = 0; j < full; j += 8) {
		memcpy(&v, x + j, sizeof(v));
		vm = VEC8_PICK(v > vm, v, vm);
		vnan |= v != v;
	}
	float m = vm[0];
	int32_t any = vnan[0];
	for (int l = 1; l < 8; l++) {
		m = vm[l] > m ? vm[l] : m;
		any |= vnan[l];
	}
	if (any || m == INFINITY || m == -INFINITY) {
		for (int64_t j = 0; j < len; j++)
			y[j] = NAN;
		return;
	}
	for (int64_t j = 0; j < full; j += 8) {
		memcpy(&v, x + j, sizeof(v));
		vec8_exp_from(&v, m);
		acc += v;
		memcpy(y + j, &v, sizeof(v));
	}
	if (full < len) {
		memcpy(&v, x + last, sizeof(v));
		vec8_exp_from(&v, m);
		acc += VEC8_PICK(lane >= over, v, (Vec8){ 0 });
		memcpy(y + last, &v, sizeof(v));
	}
	float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) +
		    ((acc[4] + acc[5]) + (acc[6] + acc[7]));
	float inv = 1.0f / sum;
	for (int64_t j = 0; j < len; j++)
		y[j] *= inv;
}

/* LogSoftmax of one row of len (> 0) floats: (x - max) - log(sum of
 * exp(x - max)), the sum as softmax_row's (its exp in vectors, one
 * logf); NaN where softmax_row gives NaN.  y may be x. */
RT_HOT_FN(static, void, log_softmax_row,
	  (const float *x, float *y, int64_t len),
	  (x, y, len))
{
	float m = x[0], sum = 0;
	bool nan = false;
	for (int64_t j = 0; j < len; j++) {
		m = x[j] > m ? x[j] : m;
		nan |= x[j] != x[j];
	}
	if (nan || m == INFINITY || m == -INFINITY) {
		for (int64_t j = 0; j < len; j++)
			y[j] = NAN;
		return;
	}
	int64_t full = len / VL * VL;
	Vec acc = { 0 }, v;
	for (int64_t j = 0; j < full; j += VL) {
		memcpy(&v, x + j, sizeof(v));
		vec_exp_from(&v, m);
		acc += v;
	}
	sum = vec_sum(&acc);
	for (int64_t j = full; j < len; j++)
		sum += exp_clamped(clamp_exp_arg(x[j] - m));
	float ls = logf(sum); /* x - m first: exact where x is near m */
	for (int64_t j = 0; j < len; j++)
		y[j] = (x[j] - m) - ls;
}

/* Softmax (or LogSoftmax, log) along an axis that is not the last: len
 * rows of inner floats, the axis stepping inner apart; per element of a
 * row its own max, sum and result, each loop over a row's inner
 * contiguous floats, which vectorises.  w: 2 inner floats and inner
 * bytes of scratch. */
RT_HOT_FN(static, void, softmax_cols,
	  (const float *x, float *y, int64_t len, int64_t inner, bool log, float *w),
	  (x, y, len, inner, log, w))
{
	float *m = w, *sum = w + inner;
	uint8_t *bad = (uint8_t *)(w + 2 * inner);
	for (int64_t i = 0; i < inner; i++) {
		m[i] = x[i], sum[i] = 0;
		bad[i] = 0;
	}
	for (int64_t j = 0; j < len; j++)
		for (int64_t i = 0; i < inner; i++) {
			float v = x[j * inner + i];
			m[i] = v > m[i] ? v : m[i];
			bad[i] |= v != v;
		}
	for (int64_t i = 0; i < inner; i++)
		bad[i] |= m[i] == INFINITY || m[i] == -INFINITY;
	for (int64_t j = 0; j < len; j++)
		for (int64_t i = 0; i < inner; i++) {
			float e = exp_clamped(
				clamp_exp_arg(x[j * inner + i] - m[i]));
			sum[i] += e;
			if (!log)
				y[j * inner + i] = e;
		}
	for (int64_t i = 0; i < inner; i++)
		sum[i] = bad[i] ? NAN : log ? logf(sum[i]) : 1.0f / sum[i];
	for (int64_t j = 0; j < len; j++)
		for (int64_t i = 0; i < inner; i++)
			y[j * inner + i] =
				log ? (x[j * inner + i] - m[i]) - sum[i]
				    : y[j * inner + i] * sum[i];
}

typedef struct Rows {
	int64_t len;   /* floats a row */
	int64_t inner; /* their distance (1: the last axis) */
	bool log;      /* LogSoftmax */
	int threads;
	RunCtx *s;     /* its work: softmax_cols' scratch, a slice a thread */
	size_t per_thread;
} Rows;

static int softmax_run(void *state, const Tensor *const *in,
		       Tensor *const *out)
{
	const Rows *rs = state;
	int64_t len = rs->len, inner = rs->inner, block = len * inner;
	const float *x = in[0]->data;
	float *y = tensor_mut(out[0]);
	int64_t rows = (int64_t)(out[0]->nbytes / sizeof(float)) / block;
	int nt = rs->threads;
	if (inner > 1) {
		float *w = rs->s->work;
		RT_PARALLEL_FOR
		for (int64_t r = 0; r < rows; r++)
			softmax_cols(x + r * block, y + r * block, len, inner,
				     rs->log, w + (size_t)rt_thread() *
						      rs->per_thread);
	} else if (rs->log) {
		RT_PARALLEL_ROWS
		for (int64_t r = 0; r < rows; r++)
			log_softmax_row(x + r * len, y + r * len, len);
	} else {
		bool wide = cpu_isa() >= CPU_LEVEL_AVX512;
		RT_PARALLEL_ROWS
		for (int64_t r = 0; r < rows; r++)
			if (wide)
				softmax_row(x + r * len, y + r * len, len);
			else
				softmax_row8(x + r * len, y + r * len, len);
	}
	return 0;
}

int direct_softmax(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	int64_t opset = model_opset(s->model->m);
	if (!static_f32(x) || !static_f32(y) || x->shape.rank < 1 ||
	    !shape_equal(&x->shape, &y->shape) || !shape_numel(&x->shape))
		return 0;
	int64_t r = x->shape.rank;
	int64_t axis = attr_int(n, "axis", opset > 0 && opset < 13 ? 1 : -1);
	axis = axis < 0 ? axis + r : axis;
	if (axis < 0 || axis >= r || opset <= 0)
		return 0;
	Rows *rs = xmalloc(sizeof(*rs));
	memset(rs, 0, sizeof(*rs));
	/* before opset 13 the axes from axis on are one row; since, the
	 * axis alone, the axes after it inner to each element */
	rs->len = 1, rs->inner = 1;
	for (int64_t a = axis; a < r; a++)
		*(a == axis || opset < 13 ? &rs->len : &rs->inner) *=
			x->shape.dims[a];
	rs->log = n->op == OP_LogSoftmax;
	rs->threads = rt_threads_for(s, 16.0 * (double)shape_numel(&x->shape));
	rs->s = s;
	rs->per_thread = (size_t)(3 * rs->inner + 16);
	if (rs->inner > 1 &&
	    !rt_work_reserve(s, rs->per_thread * sizeof(float) *
					(size_t)(rs->threads > 1 ? rs->threads
								 : 1))) {
		free(rs);
		return error("node '%s' (%s): out of memory for its "
			     "temporaries", n->name, n->op_type);
	}
	k->run = softmax_run;
	k->free = free;
	k->state = rs;
	k->threads = rs->threads;
	return 1;
}

static int sigmoid_run(void *state, const Tensor *const *in,
		       Tensor *const *out)
{
	(void)state;
	direct_sigmoid_run(in[0]->data, tensor_mut(out[0]),
			   out[0]->nbytes / sizeof(float));
	return 0;
}

int direct_sigmoid(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	if (!static_f32(x) || !static_f32(y) ||
	    !shape_equal(&x->shape, &y->shape))
		return 0;
	k->run = sigmoid_run;
	k->free = NULL;
	k->state = NULL;
	return 1;
}

/* ---- FusedActivation ---------------------------------------------------- */

/* act.h's loops, compiled for each ISA. */
RT_HOT_FN(static, void, act_loop,
	   (int kind, const float *in, float *y, size_t n, float a, float b),
	   (kind, in, y, n, a, b))
{
	act_loop_f32(kind, in, y, n, a, b);
}

ActRun *act_run_of(const Node *n)
{
	const Attr *as = node_attr(n, FUSED_ACTS_ATTR);
	const Attr *ps = node_attr(n, FUSED_ACT_PARAMS_ATTR);
	int32_t na = as ? as->n : 0;
	if ((as && as->type != ATTR_STRINGS) ||
	    (na && (!ps || ps->type != ATTR_FLOATS || ps->n != 2 * na)) ||
	    (!na && ps && ps->n))
		return NULL;
	ActRun *r = xmalloc(sizeof(*r) + (size_t)na * sizeof(r->act[0]));
	r->n = na;
	for (int32_t i = 0; i < na; i++) {
		r->act[i].kind = act_lookup((const char *)as->strings[i].data,
					    as->strings[i].len);
		r->act[i].a = ps->floats[2 * i];
		r->act[i].b = ps->floats[2 * i + 1];
		if (r->act[i].kind < 0) {
			free(r);
			return NULL;
		}
	}
	return r;
}

int32_t fused_z_after(const Node *n)
{
	const Attr *a = node_attr(n, FUSED_Z_AFTER_ATTR);
	return a && a->type == ATTR_INT ? (int32_t)a->i : 0;
}

static int act_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const ActRun *r = state;
	size_t n = out[0]->nbytes / sizeof(float);
	const float *x = in[0]->data;
	float *y = tensor_mut(out[0]);
	for (int k = 0; k < r->n; k++, x = y)
		act_loop(r->act[k].kind, x, y, n, r->act[k].a, r->act[k].b);
	return 0;
}

int direct_act(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	ActRun *r;
	if (!static_f32(x) || !static_f32(y) ||
	    !shape_equal(&x->shape, &y->shape) || !(r = act_run_of(n)))
		return 0;
	if (r->n < 1) {
		free(r);
		return 0;
	}
	k->run = act_run;
	k->free = free;
	k->state = r;
	return 1;
}

RT_HOT_FN(static, void, add_loop,
	   (float *y, const float *z, size_t n),
	   (y, z, n))
{
	for (size_t i = 0; i < n; i++)
		y[i] += z[i];
}

void direct_act_chain(const ActRun *r, int sum_at, const float *z, float *y,
		      size_t n, int threads)
{
	enum { CHUNK = 1 << 14 }; /* floats: in L1 and L2 across the chain */
	int64_t chunks = (int64_t)((n + CHUNK - 1) / CHUNK);
	int nt = threads > chunks ? (int)chunks : threads;
	RT_PARALLEL_FOR
	for (int64_t c = 0; c < chunks; c++) {
		size_t at = (size_t)c * CHUNK, len = n - at;
		len = len < CHUNK ? len : CHUNK;
		for (int k = 0; k <= r->n; k++) {
			if (k == sum_at)
				add_loop(y + at, z + at, len);
			if (k < r->n)
				act_loop(r->act[k].kind, y + at, y + at, len,
					 r->act[k].a, r->act[k].b);
		}
	}
}

/* ---- Erf ---------------------------------------------------------------- */

/* erf in fp32: compiler/act.h's act_erf_f32, here in a loop. */
RT_HOT_FN(static, void, erf_loop,
	   (const float *x, float *y, size_t n),
	   (x, y, n))
{
	for (size_t i = 0; i < n; i++)
		y[i] = act_erf_f32(x[i]);
}

static int erf_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	(void)state;
	erf_loop(in[0]->data, tensor_mut(out[0]),
		 out[0]->nbytes / sizeof(float));
	return 0;
}

/* ---- Relu --------------------------------------------------------------- */

static int relu_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	(void)state;
	act_loop(ACT_Relu, in[0]->data, tensor_mut(out[0]),
		 out[0]->nbytes / sizeof(float), 0, 0);
	return 0;
}

/* ---- Pow by 2 ------------------------------------------------------------ */

/* x * x: one rounding of the exact square, which is what a correctly
 * rounded pow(x, 2) gives too. */
RT_HOT_FN(static, void, square_loop,
	   (const float *x, float *y, size_t n),
	   (x, y, n))
{
	for (size_t i = 0; i < n; i++)
		y[i] = x[i] * x[i];
}

static int square_run(void *state, const Tensor *const *in,
		      Tensor *const *out)
{
	(void)state;
	square_loop(in[0]->data, tensor_mut(out[0]),
		    out[0]->nbytes / sizeof(float));
	return 0;
}

/* Pow's exponent is the constant 2 (a scalar or of one element). */
static bool pow_by_two(Prepared *p, const Node *n)
{
	const Value *e = n->ninputs == 2 ? rt_in_val(p, n, 1) : NULL;
	return e && static_f32(e) && shape_numel(&e->shape) == 1 &&
	       weights_of(e) && weights_of(e)[0] == 2.0f;
}

/* ---- Add, Sub, Mul, Div by a constant scalar or a tensor of one shape --- */

typedef struct Scalar {
	int op;
	float c;
} Scalar;

/* Each ISA's x op c and a op b (rt_arith_loop). */
RT_HOT_FN(static, void, scalar_loop,
	   (int op, const float *x, float c, float *y, size_t n),
	   (op, x, c, y, n))
{
	rt_arith_loop(op, false, x, &c, 0, y, n);
}

RT_HOT_FN(static, void, pair_loop,
	   (int op, const float *a, const float *b, float *y, size_t n),
	   (op, a, b, y, n))
{
	rt_arith_loop(op, false, a, b, 1, y, n);
}

static int scalar_run(void *state, const Tensor *const *in,
		      Tensor *const *out)
{
	const Scalar *sc = state;
	scalar_loop(sc->op, in[0]->data, sc->c, tensor_mut(out[0]),
		    out[0]->nbytes / sizeof(float));
	return 0;
}

static int pair_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	pair_loop(((const Scalar *)state)->op, in[0]->data, in[1]->data,
		  tensor_mut(out[0]), out[0]->nbytes / sizeof(float));
	return 0;
}

/* Erf, Relu or Pow by 2 of fp32. */
int direct_unary(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	if ((n->op != OP_Erf && n->op != OP_Relu &&
	     !(n->op == OP_Pow && pow_by_two(p, n))) ||
	    !static_f32(x) || !static_f32(y) ||
	    !shape_equal(&x->shape, &y->shape))
		return 0;
	k->run = n->op == OP_Erf ? erf_run
		 : n->op == OP_Relu ? relu_run : square_run;
	k->free = NULL;
	k->state = NULL;
	return 1;
}

/* Add, Sub, Mul, Div of fp32 A (Y's shape) and B, a constant of one
 * element or a tensor of Y's shape. */
int direct_arith(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	const Value *a = rt_in_val(p, n, 0), *b = rt_in_val(p, n, 1);
	const Value *y = &p->g->vals[n->outputs[0]];
	if (n->ninputs != 2 || !static_f32(a) || !static_f32(b) ||
	    !static_f32(y) || !shape_equal(&a->shape, &y->shape))
		return 0;
	bool pair = shape_equal(&b->shape, &y->shape);
	if (!pair && (!weights_of(b) || shape_numel(&b->shape) != 1))
		return 0;
	Scalar *sc = xmalloc(sizeof(*sc));
	sc->op = n->op;
	sc->c = pair ? 0 : weights_of(b)[0];
	k->run = pair ? pair_run : scalar_run;
	k->free = free;
	k->state = sc;
	return 1;
}

/* ---- LayerNormalization --------------------------------------------------- */

typedef struct LayerNorm {
	int64_t rows, cols;
	float eps;
	bool bias;
	int threads;
} LayerNorm;

/* The mean and variance of x[0..n) (n > 0), in double in eight lanes,
 * two passes as the reference kernel. */
RT_HOT_FN(static, void, row_moments,
	   (const float *x, int64_t n, double *mean, double *var),
	   (x, n, mean, var))
{
	double s[8] = { 0 }, q[8] = { 0 }, m = 0, v = 0;
	int64_t full = n / 8 * 8;
	for (int64_t i = 0; i < full; i += 8)
		for (int l = 0; l < 8; l++)
			s[l] += x[i + l];
	for (int64_t i = full; i < n; i++)
		m += x[i];
	for (int l = 0; l < 8; l++)
		m += s[l];
	m /= (double)n;
	for (int64_t i = 0; i < full; i += 8)
		for (int l = 0; l < 8; l++)
			q[l] += (x[i + l] - m) * (x[i + l] - m);
	for (int64_t i = full; i < n; i++)
		v += (x[i] - m) * (x[i] - m);
	for (int l = 0; l < 8; l++)
		v += q[l];
	*mean = m;
	*var = v / (double)n;
}

RT_HOT_FN(static, void, norm_row,
	   (const float *x, float *y, int64_t n, float m, float inv, const float *w, const float *b),
	   (x, y, n, m, inv, w, b))
{
	for (int64_t j = 0; j < n; j++)
		y[j] = (x[j] - m) * inv * w[j] + (b ? b[j] : 0.0f);
}

/* The row normalised by its float moments m and var, or where var is not
 * finite by row_moments' double ones.  Inlined into each variant. */
static inline __attribute__((always_inline)) void
norm_finish(const float *x, float *y, int64_t n, float eps, float m,
	    float var, const float *w, const float *b)
{
	float inv = 1.0f / sqrtf(var + eps);
	if (!isfinite(var)) {
		double md, vd;
		row_moments(x, n, &md, &vd);
		m = (float)md;
		inv = (float)(1 / sqrt(vd + eps));
	}
	norm_row(x, y, n, m, inv, w, b);
}

/* A row of whole vectors: the mean and the variance (two passes) in VL
 * float partial sums, then the row normalised, in one function.  Where
 * a float sum is not finite (a value beyond about sqrt(FLT_MAX), 1.8e19,
 * whose square overflows; an Inf or NaN) the moments are row_moments'
 * double ones, as the reference kernel's: a row holding -1e37 is
 * normalised, not made B. */
RT_HOT_FN(static, void, norm_row_vec,
	   (const float *x, float *y, int64_t n, float eps, const float *w, const float *b),
	   (x, y, n, eps, w, b))
{
	Vec s = { 0 }, q = { 0 }, v;
	for (int64_t j = 0; j < n; j += VL) {
		memcpy(&v, x + j, sizeof(v));
		s += v;
	}
	float m = vec_sum(&s) / (float)n;
	for (int64_t j = 0; j < n; j += VL) {
		memcpy(&v, x + j, sizeof(v));
		v -= m;
		q += v * v;
	}
	norm_finish(x, y, n, eps, m, vec_sum(&q) / (float)n, w, b);
}

/* norm_row_vec for CPUs below AVX-512: lanes 0-7 and 8-15 of its VL
 * partial sums as two vectors of 8, the same lanes and the same sums
 * (GCC keeps 16-float vectors on AVX2's stack: LayerNorm ran 7 times its
 * AVX-512 time; on AVX-512 the halves ran twice as long as one vector). */
RT_HOT_FN(static, void, norm_row_vec8,
	   (const float *x, float *y, int64_t n, float eps, const float *w, const float *b),
	   (x, y, n, eps, w, b))
{
	Vec8 s0 = { 0 }, s1 = { 0 }, q0 = { 0 }, q1 = { 0 }, lo, hi;
	Vec sum;
	for (int64_t j = 0; j < n; j += VL) {
		memcpy(&lo, x + j, sizeof(lo));
		memcpy(&hi, x + j + 8, sizeof(hi));
		s0 += lo;
		s1 += hi;
	}
	memcpy(&sum, &s0, sizeof(s0));
	memcpy((char *)&sum + sizeof(s0), &s1, sizeof(s1));
	float m = vec_sum(&sum) / (float)n;
	for (int64_t j = 0; j < n; j += VL) {
		memcpy(&lo, x + j, sizeof(lo));
		memcpy(&hi, x + j + 8, sizeof(hi));
		lo -= m;
		hi -= m;
		q0 += lo * lo;
		q1 += hi * hi;
	}
	memcpy(&sum, &q0, sizeof(q0));
	memcpy((char *)&sum + sizeof(q0), &q1, sizeof(q1));
	norm_finish(x, y, n, eps, m, vec_sum(&sum) / (float)n, w, b);
}

static int layernorm_run(void *state, const Tensor *const *in,
			 Tensor *const *out)
{
	const LayerNorm *ln = state;
	const float *x = in[0]->data, *w = in[1]->data;
	const float *b = ln->bias ? in[2]->data : NULL;
	float *y = tensor_mut(out[0]);
	void (*row_vec)(const float *, float *, int64_t, float, const float *,
			const float *) = cpu_isa() >= CPU_LEVEL_AVX512
						 ? norm_row_vec
						 : norm_row_vec8;
	int nt = ln->threads;
	RT_PARALLEL_ROWS
	for (int64_t r = 0; r < ln->rows; r++) {
		double m, v;
		if (ln->cols % VL == 0) {
			row_vec(x + r * ln->cols, y + r * ln->cols, ln->cols,
				ln->eps, w, b);
			continue;
		}
		row_moments(x + r * ln->cols, ln->cols, &m, &v);
		norm_row(x + r * ln->cols, y + r * ln->cols, ln->cols, (float)m,
			 (float)(1 / sqrt(v + ln->eps)), w, b);
	}
	return 0;
}

/* v holds cols floats laid out as the dims from axis on (any leading
 * 1s). */
static bool row_param(const Value *v, const Shape *x, int32_t axis,
		      int64_t cols)
{
	if (!static_f32(v) || shape_numel(&v->shape) != cols)
		return false;
	for (int32_t i = 0; i < v->shape.rank; i++) {
		int32_t xi = x->rank - v->shape.rank + i;
		if (v->shape.dims[i] != (xi >= axis ? x->dims[xi] : 1))
			return false;
	}
	return true;
}

/* LayerNormalization of fp32 with Y alone wanted, Scale and B of the
 * normalized dims. */
int direct_layernorm(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0), *w = rt_in_val(p, n, 1);
	const Value *b = rt_in_val(p, n, 2);
	const Value *y = &p->g->vals[n->outputs[0]];
	if (!static_f32(x) || !static_f32(y) || x->shape.rank < 1 ||
	    !shape_equal(&x->shape, &y->shape) || !shape_numel(&x->shape))
		return 0;
	for (int32_t o = 1; o < n->noutputs; o++)
		if (n->outputs[o] >= 0)
			return 0;
	int32_t r = x->shape.rank;
	int64_t axis = attr_int(n, "axis", -1), cols = 1;
	axis = axis < 0 ? axis + r : axis;
	if (axis < 0 || axis >= r)
		return 0;
	for (int32_t i = (int32_t)axis; i < r; i++)
		cols *= x->shape.dims[i];
	if (!row_param(w, &x->shape, (int32_t)axis, cols) ||
	    (b && !row_param(b, &x->shape, (int32_t)axis, cols)))
		return 0;
	LayerNorm *ln = xmalloc(sizeof(*ln));
	ln->cols = cols;
	ln->rows = shape_numel(&x->shape) / cols;
	ln->eps = attr_float(n, "epsilon", 1e-5f);
	ln->bias = b != NULL;
	ln->threads = rt_threads_for(s, 8.0 * (double)shape_numel(&x->shape));
	k->run = layernorm_run;
	k->free = free;
	k->state = ln;
	k->threads = ln->threads;
	return 1;
}

/* ---- views, Gather of constant indices ------------------------------------ */

/* A view op (the op table's VIEW_ALIAS) whose output the plan put in its
 * input's bytes: nothing to do. */
int direct_view(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	ValId x = n->ninputs > 0 ? n->inputs[0] : -1;
	if (op_info[n->op].view != VIEW_ALIAS || x < 0 || !t->out[0] ||
	    !p->vt[x].data ||
	    p->vt[x].data != t->out[0]->data ||
	    p->vt[x].nbytes != t->out[0]->nbytes)
		return 0;
	direct_noop(k);
	if (shape_equal(&p->vt[x].shape, &t->out[0]->shape)) {
		/* the same bytes read the same way: either layout */
		rt_task_slots(t);
		rt_slot(t, 0)->group = rt_slot(t, -1)->group = 1;
	}
	return 1;
}

static int copy_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	(void)state;
	if (in[0]->data != out[0]->data)
		memcpy(tensor_mut(out[0]), in[0]->data, out[0]->nbytes);
	return 0;
}

/* A view op whose output has bytes of its own (a graph output, the
 * caller's buffer): one copy of its input's bytes. */
int direct_copy(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0);
	if (op_info[n->op].view != VIEW_ALIAS || !x || !t->out[0] ||
	    x->tkind != TK_TENSOR || !shape_is_static(&x->shape) ||
	    x->dtype == DT_STRING || !dtype_size(x->dtype) ||
	    x->dtype != p->g->vals[n->outputs[0]].dtype ||
	    shape_bytes(&x->shape, x->dtype) != (int64_t)t->out[0]->nbytes)
		return 0;
	k->run = copy_run;
	k->free = NULL;
	k->state = NULL;
	return 1;
}

typedef struct Gather {
	int64_t outer, axis_len, nidx;
	size_t inner; /* bytes of one slice */
	int64_t *idx; /* nidx, each in [0, axis_len); NULL: read per run */
	int idx_dt;   /* the indices' dtype, read per run */
} Gather;

static void gather_free(void *state)
{
	Gather *g = state;
	free(g->idx);
	free(g);
}

static int gather_run(void *state, const Tensor *const *in,
		      Tensor *const *out)
{
	const Gather *g = state;
	const uint8_t *x = in[0]->data;
	uint8_t *y = tensor_mut(out[0]);
	for (int64_t o = 0; o < g->outer; o++)
		for (int64_t k = 0; k < g->nidx; k++, y += g->inner)
			memcpy(y, x + (size_t)(o * g->axis_len + g->idx[k]) *
					      g->inner,
			       g->inner);
	return 0;
}

/* Gather by indices the run gives (an embedding's token ids): each
 * checked as the reference kernel checks it, its error if out of
 * range. */
static int gather_idx_run(void *state, const Tensor *const *in,
			  Tensor *const *out)
{
	const Gather *g = state;
	const uint8_t *x = in[0]->data;
	uint8_t *y = tensor_mut(out[0]);
	const int64_t *i64 = in[1]->data;
	const int32_t *i32 = in[1]->data;
	for (int64_t k = 0; k < g->nidx; k++) {
		int64_t v = g->idx_dt == DT_INT64 ? i64[k] : i32[k];
		if (v < -g->axis_len || v >= g->axis_len)
			return error("index %lld is out of range for a dim "
				     "of %lld", (long long)v,
				     (long long)g->axis_len);
		v = v < 0 ? v + g->axis_len : v;
		for (int64_t o = 0; o < g->outer; o++)
			memcpy(y + (size_t)(o * g->nidx + k) * g->inner,
			       x + (size_t)(o * g->axis_len + v) * g->inner,
			       g->inner);
	}
	return 0;
}

/* Gather by constant indices, all in range (an index out of range is
 * the reference kernel's error to give), or by the run's. */
int direct_gather(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0), *iv = rt_in_val(p, n, 1);
	const Tensor *it = iv && iv->kind == VAL_WEIGHT ? iv->konst : NULL;
	size_t es = x ? dtype_size(x->dtype) : 0;
	int32_t r = x ? x->shape.rank : 0;
	int64_t axis = attr_int(n, "axis", 0);
	axis = axis < 0 ? axis + r : axis;
	if (!es || x->tkind != TK_TENSOR || !shape_is_static(&x->shape) ||
	    !iv || iv->tkind != TK_TENSOR || !shape_is_static(&iv->shape) ||
	    (iv->dtype != DT_INT64 && iv->dtype != DT_INT32) ||
	    axis < 0 || axis >= r || !t->out[0])
		return 0;
	Gather *g = xmalloc(sizeof(*g));
	memset(g, 0, sizeof(*g));
	g->outer = 1, g->inner = es;
	for (int32_t a = 0; a < r; a++)
		if (a < axis)
			g->outer *= x->shape.dims[a];
		else if (a > axis)
			g->inner *= (size_t)x->shape.dims[a];
	g->axis_len = x->shape.dims[axis];
	g->nidx = shape_numel(&iv->shape);
	if (!it) {
		g->idx_dt = iv->dtype;
		k->run = gather_idx_run;
		k->free = gather_free;
		k->state = g;
		return 1;
	}
	g->idx = xmalloc(((size_t)g->nidx + 1) * sizeof(*g->idx));
	for (int64_t i = 0; i < g->nidx; i++) {
		int64_t v = tensor_get_i64(it, i);
		g->idx[i] = v < 0 ? v + g->axis_len : v;
		if (g->idx[i] < 0 || g->idx[i] >= g->axis_len) {
			gather_free(g);
			return 0;
		}
	}
	k->run = gather_run;
	k->free = gather_free;
	k->state = g;
	return 1;
}

/* ---- Transpose ---------------------------------------------------------- */

typedef struct Perm {
	int rank;
	int64_t dims[MAX_RANK]; /* of Y */
	int64_t st[MAX_RANK];	/* X's stride of Y's axis */
} Perm;

/* The last axis: a copy if X's stride along it is 1, else a gather. */
RT_HOT_FN(static, void, gather_row,
	   (const uint32_t *x, uint32_t *y, int64_t n, int64_t st),
	   (x, y, n, st))
{
	if (st == 1) {
		memcpy(y, x, (size_t)n * sizeof(*y));
		return;
	}
	for (int64_t i = 0; i < n; i++)
		y[i] = x[i * st];
}

static int transpose_run(void *state, const Tensor *const *in,
			 Tensor *const *out)
{
	const Perm *pm = state;
	const uint32_t *x = in[0]->data;
	uint32_t *y = tensor_mut(out[0]);
	int r = pm->rank;
	int64_t idx[MAX_RANK] = { 0 }, last = pm->dims[r - 1];
	size_t rows = out[0]->nbytes / sizeof(*y) / (size_t)last;
	int64_t off = 0;
	for (size_t row = 0; row < rows; row++) {
		gather_row(x + off, y + row * (size_t)last, last,
			   pm->st[r - 1]);
		for (int a = r - 2; a >= 0; a--) { /* the next row's start */
			off += pm->st[a];
			if (++idx[a] < pm->dims[a])
				break;
			off -= pm->st[a] * pm->dims[a];
			idx[a] = 0;
		}
	}
	return 0;
}

/* Whether perm (np axes) takes NCHW to NHWC (1) or NHWC to NCHW (-1),
 * or neither (0). */
static int nhwc_perm(const int64_t *perm, int32_t np)
{
	static const int64_t in[4] = { 0, 2, 3, 1 }, out[4] = { 0, 3, 1, 2 };
	if (!perm || np != 4)
		return 0;
	return !memcmp(perm, in, sizeof(in))	? 1
	       : !memcmp(perm, out, sizeof(out)) ? -1
						 : 0;
}

/* Transpose of 4-byte elements (fp32, int32) at static shapes: a
 * gather, or a copy where the layouts make it one
 * (direct_transpose_build). */
int direct_transpose(RunCtx *s, Prepared *p, Task *t,
		     FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	int r = x ? x->shape.rank : 0;
	const int64_t *perm = NULL;
	int32_t np = attr_ints(n, "perm", &perm);
	if (!x || x->tkind != TK_TENSOR || dtype_size(x->dtype) != 4 ||
	    y->dtype != x->dtype || !shape_is_static(&x->shape) ||
	    !shape_is_static(&y->shape) || r < 1 || r > MAX_RANK ||
	    (perm && np != r) || shape_numel(&y->shape) == 0)
		return 0;
	Perm *pm = xmalloc(sizeof(*pm));
	int64_t xst[MAX_RANK], step = 1;
	for (int a = r - 1; a >= 0; a--) {
		xst[a] = step;
		step *= x->shape.dims[a];
	}
	pm->rank = r;
	for (int a = 0; a < r; a++) {
		int64_t src = perm ? perm[a] : r - 1 - a;
		if (src < 0 || src >= r ||
		    y->shape.dims[a] != x->shape.dims[src]) {
			free(pm);
			return 0;
		}
		pm->dims[a] = y->shape.dims[a];
		pm->st[a] = xst[src];
	}
	k->run = transpose_run;
	k->free = free;
	k->state = pm;
	/* NCHW to NHWC (perm 0,2,3,1) from a channels-last X, and back
	 * (0,3,1,2) into a channels-last Y, copy bytes as they are (a
	 * ConvNeXt block's around its LayerNorm); other Transposes keep
	 * their rank-4 tensors row-major */
	rt_task_slots(t);
	int to = r == 4 ? nhwc_perm(perm, np) : 0;
	if (to) {
		rt_slot(t, to > 0 ? 0 : -1)->group = 1;
		rt_slot(t, to > 0 ? 0 : -1)->prefers = true;
	}
	return 1;
}

int direct_transpose_build(RunCtx *s, Prepared *p, Task *t)
{
	(void)s;
	const Node *n = t->n;
	const int64_t *perm = NULL;
	int32_t np = attr_ints(n, "perm", &perm);
	int to = nhwc_perm(perm, np);
	if ((to > 0 && rt_nhwc(p, n->inputs[0])) ||
	    (to < 0 && rt_nhwc(p, n->outputs[0])))
		t->fast.run = copy_run;
	return 0;
}

/* ---- Resize: nearest, integer factors ------------------------------------ */

typedef struct Upsample {
	int64_t planes, ih, iw, fy, fx; /* Y: planes x ih fy x iw fx */
	int64_t c;   /* rank 4: channels, each plane one (n, c) */
	bool nhwc;   /* rank 4: X and Y channels-last */
	int threads;
} Upsample;

RT_HOT_FN(static, void, upsample_row,
	   (const float *x, float *y, int64_t iw, int64_t fx),
	   (x, y, iw, fx))
{
	if (fx == 2) {
		for (int64_t i = 0; i < iw; i++)
			y[2 * i] = y[2 * i + 1] = x[i];
		return;
	}
	for (int64_t i = 0; i < iw; i++)
		for (int64_t k = 0; k < fx; k++)
			y[i * fx + k] = x[i];
}

/* NHWC: each pixel's channels repeated fx times along the row, each
 * row fy times. */
static void upsample_nhwc(const Upsample *u, const float *x, float *y)
{
	int64_t c = u->c, ow = u->iw * u->fx, rows = u->planes / c * u->ih;
	int nt = u->threads;
	RT_PARALLEL_ROWS
	for (int64_t r = 0; r < rows; r++) {
		float *row = y + r * u->fy * ow * c;
		for (int64_t i = 0; i < u->iw; i++)
			for (int64_t k = 0; k < u->fx; k++)
				memcpy(row + (i * u->fx + k) * c,
				       x + (r * u->iw + i) * c,
				       (size_t)c * sizeof(*row));
		for (int64_t k = 1; k < u->fy; k++)
			memcpy(row + k * ow * c, row,
			       (size_t)(ow * c) * sizeof(*row));
	}
}

static int upsample_run(void *state, const Tensor *const *in,
			Tensor *const *out)
{
	const Upsample *u = state;
	if (u->nhwc) {
		upsample_nhwc(u, in[0]->data, tensor_mut(out[0]));
		return 0;
	}
	const float *x = in[0]->data;
	float *y = tensor_mut(out[0]);
	int64_t ow = u->iw * u->fx, rows = u->planes * u->ih;
	int nt = u->threads;
	RT_PARALLEL_ROWS
	for (int64_t r = 0; r < rows; r++) { /* input row r of all planes */
		float *row = y + r * u->fy * ow;
		upsample_row(x + r * u->iw, row, u->iw, u->fx);
		for (int64_t k = 1; k < u->fy; k++)
			memcpy(row + k * ow, row, (size_t)ow * sizeof(*row));
	}
	return 0;
}

int direct_resize_build(RunCtx *s, Prepared *p, Task *t)
{
	(void)s;
	((Upsample *)t->fast.state)->nhwc = rt_nhwc(p, t->n->outputs[0]);
	return 0;
}

/* Nearest Resize whose output is the input times whole factors on the
 * last two axes, with asymmetric coordinates and floor rounding: each
 * input value repeated fy x fx times (as the reference kernel's
 * floor(o / f) picks it). */
int direct_resize(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0), *sc = rt_in_val(p, n, 2);
	const Value *y = &p->g->vals[n->outputs[0]];
	if (model_opset(s->model->m) < 11 || !static_f32(x) ||
	    !static_f32(y) || x->shape.rank < 2 ||
	    y->shape.rank != x->shape.rank ||
	    strcmp(attr_str(n, "mode", "nearest"), "nearest") ||
	    strcmp(attr_str(n, "coordinate_transformation_mode", ""),
		   "asymmetric") ||
	    strcmp(attr_str(n, "nearest_mode", ""), "floor") ||
	    node_attr(n, "axes") || node_attr(n, "antialias") ||
	    node_attr(n, "keep_aspect_ratio_policy"))
		return 0;
	int r = x->shape.rank;
	const int64_t *xd = x->shape.dims, *yd = y->shape.dims;
	for (int a = 0; a < r - 2; a++)
		if (xd[a] != yd[a])
			return 0;
	for (int a = r - 2; a < r; a++)
		if (xd[a] < 1 || yd[a] % xd[a])
			return 0;
	/* given scales must be those whole factors exactly */
	const float *sv = sc && shape_numel(&sc->shape) ? weights_of(sc)
							: NULL;
	if (sc && shape_numel(&sc->shape)) {
		if (!sv || !static_f32(sc) || shape_numel(&sc->shape) != r)
			return 0;
		for (int a = 0; a < r; a++)
			if (sv[a] != (float)(yd[a] / xd[a]))
				return 0;
	}
	Upsample *u = xmalloc(sizeof(*u));
	u->planes = 1;
	for (int a = 0; a < r - 2; a++)
		u->planes *= xd[a];
	u->ih = xd[r - 2], u->iw = xd[r - 1];
	u->fy = yd[r - 2] / xd[r - 2], u->fx = yd[r - 1] / xd[r - 1];
	u->c = r == 4 ? xd[1] : 0;
	u->nhwc = false;
	u->threads = rt_threads_for(s, (double)shape_numel(&y->shape));
	k->run = upsample_run;
	k->free = free;
	k->state = u;
	k->threads = u->threads;
	if (r == 4) { /* X and Y share a layout, which may be NHWC */
		rt_task_slots(t);
		rt_slot(t, 0)->group = rt_slot(t, -1)->group = 1;
	}
	return 1;
}

/* ---- activations taken into the ConvTranspose before them ------------- */

static void act_row(int act, float *y, int64_t n)
{
	if (act == DIRECT_RELU)
		act_loop(ACT_Relu, y, y, (size_t)n, 0, 0);
	else if (act == DIRECT_SIGMOID)
		direct_sigmoid_run(y, y, (size_t)n);
}

bool direct_deconv_act(FastKernel *k, int act)
{
	Deconv *d = k->run == deconv_run || k->run == deconv_product_run
			    ? k->state : NULL;
	if (!d || d->act)
		return false;
	d->act = act;
	return true;
}

static int noop_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	(void)state, (void)in, (void)out;
	return 0;
}

void direct_noop(FastKernel *k)
{
	k->run = noop_run;
	k->free = NULL;
	k->state = NULL;
}

/* ---- Yuv420sp ----------------------------------------------------------- */

typedef struct YuvRun {
	Yuv420sp p;
	int threads;
} YuvRun;

RT_HOT_FN(static, void, yuv420sp_range,
	  (const Yuv420sp *p, const uint8_t *x, float *y, int64_t lo,
	   int64_t hi),
	  (p, x, y, lo, hi))
{
	for (int64_t t = lo; t < hi; t++)
		yuv420sp_step(p, x, y, t);
}

enum { YUV_PAIRS = 8 }; /* row pairs a thread takes at a time */

static int yuv420sp_run(void *state, const Tensor *const *in,
			Tensor *const *out)
{
	const YuvRun *r = state;
	const uint8_t *x = in[0]->data;
	float *y = tensor_mut(out[0]);
	int64_t pairs = yuv420sp_pairs(&r->p);
	int64_t chunks = (pairs + YUV_PAIRS - 1) / YUV_PAIRS;
	int nt = r->threads;
	RT_PARALLEL_FOR
	for (int64_t c = 0; c < chunks; c++) {
		int64_t lo = c * YUV_PAIRS;
		yuv420sp_range(&r->p, x, y, lo,
			       pairs - lo < YUV_PAIRS ? pairs : lo + YUV_PAIRS);
	}
	return 0;
}

int direct_yuv420sp(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	YuvRun r;
	char buf[160];
	const char *why;
	if (!x || x->tkind != TK_TENSOR || x->dtype != DT_UINT8 ||
	    !shape_is_static(&x->shape) || !static_f32(y) ||
	    yuv420sp_params(n, &x->shape, &r.p, buf, sizeof(buf), &why) < 0)
		return 0; /* the reference kernel says what is wrong */
	Shape ys = { 4, { r.p.n, 3, r.p.oh, r.p.ow } };
	if (!shape_equal(&ys, &y->shape) || !shape_numel(&ys))
		return 0;
	/* some 8 integer operations an output */
	r.threads = rt_threads_for(s, 8.0 * (double)shape_numel(&ys));
	YuvRun *st = xmalloc(sizeof(*st));
	*st = r;
	k->run = yuv420sp_run;
	k->free = free;
	k->state = st;
	k->threads = r.threads;
	return 1;
}
