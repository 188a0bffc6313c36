/*
 * runtime/chanwise.c - per-channel fast paths in plain C (chanwise.h)
 * that take a rank-4 tensor in either layout runtime/layout.c gives it:
 * row-major NCHW, or channels-last NHWC between oneDNN's convolutions.
 *
 * A PRelu by a slope per channel after a convolution runs so too, in
 * the convolution's layout.
 *
 * Squeeze-and-excite blocks (MobileNetV3, EfficientNet) end in
 * GlobalAveragePool -> 1x1 convolutions -> Mul(X, [N,C,1,1]): without
 * these, the pooled and the scaled tensor would be reordered out of
 * NHWC and back around every block, and the broadcast Mul would run the
 * reference kernel.  A detector's FPN concatenates its levels on the
 * channel axis (Concat: a copy per row, or per pixel in NHWC).  A
 * U-Net upsamples by linear Resize (oneDNN's resampling ran one-channel
 * planes at a fifth of memory's speed), and its side outputs are Conv
 * to one channel from a channels-last backbone (a dot product per output
 * pixel over the window's channels, which oneDNN pads to 16 outputs).
 * Arithmetic is in float as the reference kernels round it (a binary
 * op) or in double (the average, as the reference's sum), so the results
 * match theirs; the Resize's is ONNX Runtime's, to the last bit (below);
 * a Conv's sums are in float in another order (vector lanes), within
 * float rounding of them.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/act.h"
#include "compiler/ops/pool.h"
#include "chanwise.h"
#include "direct.h"
#include "dnnl.h"

/* fk runs run on state (malloc'd): 1. */
static int take(FastKernel *fk, int (*run)(void *, const Tensor *const *,
					   Tensor *const *),
		void *state)
{
	fk->run = run;
	fk->free = free;
	fk->state = state;
	return 1;
}

static bool f32_4d(const Value *v)
{
	return v && v->dtype == DT_FLOAT && v->tkind == TK_TENSOR &&
	       v->shape.rank == 4 && shape_is_static(&v->shape);
}

/* ---- Add, Sub, Mul, Div, PRelu by a per-channel operand --------------- */

typedef struct Chan {
	int op;
	bool swap;		  /* y = b op x */
	int xi;			  /* X's input; B is the other */
	int64_t n, c, hw;	  /* Y [n, c, h, w] */
	int64_t bstep;		  /* B's stride between batches: 0 or c */
	bool nhwc;
	int threads;
} Chan;

/* y[i] = x[i] op b (or b op x) for i < len. */
RT_HOT_FN(static, void, chan_row,
	   (int op, bool swap, const float *x, float b, float *y, int64_t len),
	   (op, swap, x, b, y, len))
{
	rt_arith_loop(op, swap, x, &b, 0, y, (size_t)len);
}

/* y[i] = x[i] op b[i] (or b[i] op x[i]) for i < len: one NHWC pixel. */
RT_HOT_FN(static, void, chan_vec,
	   (int op, bool swap, const float *x, const float *b, float *y, int64_t len),
	   (op, swap, x, b, y, len))
{
	rt_arith_loop(op, swap, x, b, 1, y, (size_t)len);
}

static int chan_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const Chan *k = state;
	const float *x = in[k->xi]->data, *b = in[1 - k->xi]->data;
	float *y = tensor_mut(out[0]);
	/* a row: one pixel's channels (NHWC) or one channel's plane */
	int64_t per = k->nhwc ? k->hw : k->c, rows = k->n * per;
	int64_t len = k->nhwc ? k->c : k->hw;
	int nt = k->threads;
	RT_PARALLEL_ROWS
	for (int64_t r = 0; r < rows; r++) {
		const float *bn = b + r / per * k->bstep;
		if (k->nhwc)
			chan_vec(k->op, k->swap, x + r * len, bn, y + r * len,
				 len);
		else
			chan_row(k->op, k->swap, x + r * len, bn[r % per],
				 y + r * len, len);
	}
	return 0;
}

int chan_binary_build(RunCtx *s, Prepared *p, Task *t)
{
	(void)s;
	((Chan *)t->fast.state)->nhwc = rt_nhwc(p, t->n->outputs[0]);
	return 0;
}

/* B's batch stride if b broadcasts per channel onto y ([C,1,1],
 * [1,C,1,1] or [N,C,1,1]), else -1. */
static int64_t per_channel(const Value *b, const Value *y)
{
	const Shape *s = &b->shape;
	int64_t n = y->shape.dims[0], c = y->shape.dims[1];
	if (b->dtype != DT_FLOAT || b->tkind != TK_TENSOR ||
	    !shape_is_static(s) || s->rank < 3 || s->rank > 4 ||
	    s->dims[s->rank - 1] != 1 || s->dims[s->rank - 2] != 1 ||
	    s->dims[s->rank - 3] != c)
		return -1;
	int64_t bn = s->rank == 4 ? s->dims[0] : 1;
	return bn == n ? (n > 1 ? c : 0) : bn == 1 ? 0 : -1;
}

int chan_binary(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	const Node *n = t->n;
	const Value *a = rt_in_val(p, n, 0), *b = rt_in_val(p, n, 1);
	const Value *y = &p->g->vals[n->outputs[0]];
	if (n->ninputs != 2 || !a || !b || !f32_4d(y) ||
	    shape_numel(&y->shape) == 0)
		return 0;
	int xi = f32_4d(a) && shape_equal(&a->shape, &y->shape) ? 0
		 : f32_4d(b) && shape_equal(&b->shape, &y->shape) &&
				   n->op != OP_PRelu /* its slope is B */
			 ? 1
			 : -1;
	int64_t bstep = xi < 0 ? -1 : per_channel(xi ? a : b, y);
	if (bstep < 0)
		return 0;
	Chan *k = xmalloc(sizeof(*k));
	memset(k, 0, sizeof(*k));
	k->op = n->op;
	k->xi = xi;
	k->swap = xi == 1;
	k->n = y->shape.dims[0], k->c = y->shape.dims[1];
	k->hw = y->shape.dims[2] * y->shape.dims[3];
	k->bstep = bstep;
	k->threads = rt_threads_for(s, (double)shape_numel(&y->shape));
	take(fk, chan_run, k);
	fk->threads = k->threads;
	/* X and Y share a layout; B ([.., C, 1, 1]) has one either way */
	rt_task_slots(t);
	rt_slot(t, -1)->group = rt_slot(t, xi)->group = 1;
	return 1;
}

/* ---- BatchNormalization, inference -------------------------------------- */

/* y = x a[c] + b[c], a and b made as the reference kernel makes them
 * (batchnorm_affine), each product and sum rounded on its own: the
 * reference's bits, in either layout.  A standalone BatchNormalization
 * is one no Conv before it took in: DenseNet's and pre-activation
 * ResNets' before each convolution, after a Concat or an Add. */
typedef struct Bn {
	int64_t n, c, hw; /* Y [n, c, h, w] */
	float *ab;	  /* a [c], then b [c] */
	bool nhwc;
	bool relu;	  /* then Relu (chan_batchnorm_relu) */
	int threads;
} Bn;

static void bn_free(void *state)
{
	Bn *k = state;
	free(k->ab);
	free(k);
}

RT_HOT_EXACT_FN(static, void, bn_plane,
		(const float *x, float a, float b, bool relu, float *y,
		 int64_t len),
		(x, a, b, relu, y, len))
{
	if (relu) /* as Relu's reference kernel: NaN and -0 pass */
		for (int64_t i = 0; i < len; i++) {
			float v = x[i] * a + b;
			y[i] = v < 0 ? 0 : v;
		}
	else
		for (int64_t i = 0; i < len; i++)
			y[i] = x[i] * a + b;
}

RT_HOT_EXACT_FN(static, void, bn_pixel,
		(const float *x, const float *a, const float *b, bool relu,
		 float *y, int64_t len),
		(x, a, b, relu, y, len))
{
	if (relu)
		for (int64_t i = 0; i < len; i++) {
			float v = x[i] * a[i] + b[i];
			y[i] = v < 0 ? 0 : v;
		}
	else
		for (int64_t i = 0; i < len; i++)
			y[i] = x[i] * a[i] + b[i];
}

static int bn_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const Bn *k = state;
	const float *x = in[0]->data, *a = k->ab, *b = k->ab + k->c;
	float *y = tensor_mut(out[0]);
	/* a row: one pixel's channels (NHWC) or one channel's plane */
	int64_t per = k->nhwc ? k->hw : k->c, rows = k->n * per;
	int64_t len = k->nhwc ? k->c : k->hw;
	int nt = k->threads;
	RT_PARALLEL_ROWS
	for (int64_t r = 0; r < rows; r++)
		if (k->nhwc)
			bn_pixel(x + r * len, a, b, k->relu, y + r * len, len);
		else
			bn_plane(x + r * len, a[r % per], b[r % per], k->relu,
				 y + r * len, len);
	return 0;
}

/* A Concat of channels (below).  Where its one reader is a
 * BatchNormalization of chan_batchnorm (DenseNet's Concat ->
 * BatchNormalization -> Relu before each layer), the concatenation takes
 * it (chan_concat_batchnorm): each input's rows go through bn_pixel or
 * bn_plane on their way, a pass over the tensor instead of two, the
 * BatchNormalization's bits. */
typedef struct Cat {
	int nin;
	int64_t n, hw, cout; /* Y [n, cout, h, w] */
	int64_t *c;	     /* per input, its channels */
	bool nhwc;
	Bn *bn;		     /* taken in, or NULL */
} Cat;

static int cat_run(void *state, const Tensor *const *in, Tensor *const *out);

bool chan_batchnorm_relu(FastKernel *k)
{
	Bn *b = k->run == bn_run    ? k->state
		: k->run == cat_run ? ((Cat *)k->state)->bn
				    : NULL;
	if (!b || b->relu)
		return false;
	b->relu = true;
	return true;
}

int chan_batchnorm_build(RunCtx *s, Prepared *p, Task *t)
{
	(void)s;
	((Bn *)t->fast.state)->nhwc = rt_nhwc(p, t->n->outputs[0]);
	return 0;
}

int chan_batchnorm(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	int64_t opset = model_opset(s->model->m);
	if (n->ninputs != 5 || !f32_4d(x) || !f32_4d(y) ||
	    !shape_equal(&x->shape, &y->shape) ||
	    shape_numel(&y->shape) == 0 || opset < 9 ||
	    batchnorm_training(n, opset))
		return 0;
	for (int32_t i = 1; i < n->noutputs; i++)
		if (n->outputs[i] >= 0)
			return 0; /* the running statistics, asked for */
	int64_t c = y->shape.dims[1];
	const float *st[4];
	for (int i = 0; i < 4; i++) {
		const Value *v = rt_in_val(p, n, i + 1);
		if (!v || !v->konst || v->dtype != DT_FLOAT ||
		    shape_numel(&v->shape) != c)
			return 0;
		st[i] = v->konst->data;
	}
	double eps = attr_float(n, "epsilon", 1e-5f);
	Bn *k = xmalloc(sizeof(*k));
	k->n = y->shape.dims[0], k->c = c;
	k->hw = y->shape.dims[2] * y->shape.dims[3];
	k->ab = xmalloc(2 * (size_t)c * sizeof(float));
	for (int64_t ch = 0; ch < c; ch++)
		batchnorm_affine(st[0][ch], st[1][ch], st[2][ch], st[3][ch],
				 eps, &k->ab[ch], &k->ab[c + ch]);
	k->nhwc = k->relu = false;
	k->threads = rt_threads_for(s, (double)shape_numel(&y->shape));
	take(fk, bn_run, k);
	fk->free = bn_free;
	fk->threads = k->threads;
	/* X and Y share a layout; the [C] statistics have none */
	rt_task_slots(t);
	rt_slot(t, -1)->group = rt_slot(t, 0)->group = 1;
	return 1;
}

/* ---- GlobalAveragePool -------------------------------------------------- */

typedef struct Gap {
	int64_t n, c, hw;
	bool nhwc;
} Gap;

/* The mean of x[0..len), summed in double in eight lanes. */
RT_HOT_FN(static, float, mean_row,
	   (const float *x, int64_t len),
	   (x, len))
{
	double s[8] = { 0 };
	int64_t i = 0;
	for (; i + 8 <= len; i += 8)
		for (int l = 0; l < 8; l++)
			s[l] += x[i + l];
	for (; i < len; i++)
		s[0] += x[i];
	double t = ((s[0] + s[1]) + (s[2] + s[3])) +
		   ((s[4] + s[5]) + (s[6] + s[7]));
	return (float)(t / (double)len);
}

enum { GAP_BLOCK = 64 };

/* NHWC: the means of channels c0..c0+cn over hw pixels of stride c. */
RT_HOT_FN(static, void, mean_cols,
	   (const float *x, int64_t hw, int64_t c, int64_t cn, float *y),
	   (x, hw, c, cn, y))
{
	double s[GAP_BLOCK] = { 0 };
	for (int64_t p = 0; p < hw; p++)
		for (int64_t k = 0; k < cn; k++)
			s[k] += x[p * c + k];
	for (int64_t k = 0; k < cn; k++)
		y[k] = (float)(s[k] / (double)hw);
}

static int gap_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const Gap *k = state;
	const float *x = in[0]->data;
	float *y = tensor_mut(out[0]);
	for (int64_t n = 0; n < k->n; n++) {
		const float *xn = x + n * k->c * k->hw;
		float *yn = y + n * k->c;
		for (int64_t c = 0; !k->nhwc && c < k->c; c++)
			yn[c] = mean_row(xn + c * k->hw, k->hw);
		for (int64_t c = 0; k->nhwc && c < k->c; c += GAP_BLOCK)
			mean_cols(xn + c, k->hw, k->c,
				  k->c - c < GAP_BLOCK ? k->c - c : GAP_BLOCK,
				  yn + c);
	}
	return 0;
}

int chan_gap_build(RunCtx *s, Prepared *p, Task *t)
{
	(void)s;
	((Gap *)t->fast.state)->nhwc = rt_nhwc(p, t->n->inputs[0]);
	return 0;
}

int chan_gap(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	(void)s;
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	if (!f32_4d(x) || !f32_4d(y) || shape_numel(&x->shape) == 0 ||
	    y->shape.dims[2] != 1 || y->shape.dims[3] != 1)
		return 0;
	Gap *k = xmalloc(sizeof(*k));
	k->n = x->shape.dims[0], k->c = x->shape.dims[1];
	k->hw = x->shape.dims[2] * x->shape.dims[3];
	k->nhwc = false;
	rt_task_slots(t); /* X may be NHWC; Y ([N,C,1,1]) has one layout */
	rt_slot(t, 0)->group = 1;
	return take(fk, gap_run, k);
}

/* ---- MaxPool and AveragePool of 2-D windows ------------------------------ */

/* The reference kernel's windows (compiler/ops/pool.h): over
 * channels-last X every channel of an output pixel at once, each window's
 * taps read in the reference's order (its rows, then its columns) and
 * compared or summed in float as it does them; over row-major X, the
 * reference's own row loops (pool_rows), planes spread over the threads.
 * Its bits either way, NaN, -0 and all. */
typedef struct Pool2 {
	Pool p; /* 2-D: p.span[1] per output row, p.span[2] per column */
	bool max, count_pad, nhwc;
	int64_t n, c;
	int threads;
	/* every window whole and inside X, taps adjacent: kh x kw, strides
	 * sh, sw (pool_full); else kh 0 */
	int64_t kh, kw, sh, sw;
} Pool2;

static void pool2_free(void *state)
{
	Pool2 *k = state;
	if (k)
		free(k->p.span[0]);
	free(k);
}

/* y[0..nc) from the window (sh, sw) of x: pixels ps floats apart in a
 * row, rows rs apart; the average's divisor div (0: the output is 0). */
RT_HOT_EXACT_FN(static, void, pool_pixel,
		(const float *x, float *y, int64_t nc, int64_t ps, int64_t rs,
		 const Span *sh, const Span *sw, int64_t dh, int64_t dw,
		 bool max, int64_t div),
		(x, y, nc, ps, rs, sh, sw, dh, dw, max, div))
{
	for (int64_t c = 0; c < nc; c++)
		y[c] = max ? NAN : 0; /* maxNum's start */
	for (int64_t b = 0; b < sh->n; b++) {
		const float *row = x + (sh->first + b * dh) * rs;
		for (int64_t e = 0; e < sw->n; e++) {
			const float *v = row + (sw->first + e * dw) * ps;
			if (max)
				for (int64_t c = 0; c < nc; c++)
					y[c] = v[c] > y[c] || y[c] != y[c]
						       ? v[c]
						       : y[c];
			else
				for (int64_t c = 0; c < nc; c++)
					y[c] += v[c];
		}
	}
	if (max && (!sh->n || !sw->n))
		for (int64_t c = 0; c < nc; c++)
			y[c] = 0;
	else if (!max)
		for (int64_t c = 0; c < nc; c++)
			y[c] = div ? y[c] / (float)div : 0;
}

/* Row-major, every window whole (Pool2.kh): output row y[0..ow) from
 * the kh rows at x (iw apart), each output's taps in the reference's
 * order (pool_pixel's, a pixel of one channel), vectorised along the
 * row (pool_rows, the reference's general loop, took a torch U-Net's
 * 2x2 MaxPool of 16 x 96 x 96 in 0.56 ms, 20% of the run). */
RT_HOT_EXACT_FN(static, void, pool_row_full,
		(const float *x, float *restrict y, int64_t ow, int64_t iw,
		 int64_t kh, int64_t kw, int64_t sw, bool max),
		(x, y, ow, iw, kh, kw, sw, max))
{
	for (int64_t o = 0; o < ow; o++)
		y[o] = max ? NAN : 0; /* maxNum's start */
	for (int64_t b = 0; b < kh; b++)
		for (int64_t e = 0; e < kw; e++) {
			const float *v = x + b * iw + e;
			if (max)
				for (int64_t o = 0; o < ow; o++)
					y[o] = v[o * sw] > y[o] || y[o] != y[o]
						       ? v[o * sw]
						       : y[o];
			else
				for (int64_t o = 0; o < ow; o++)
					y[o] += v[o * sw];
		}
	if (!max)
		for (int64_t o = 0; o < ow; o++)
			y[o] = y[o] / (float)(kh * kw);
}

/* Whether axis a's windows are all k taps (dilation 1) from o * st
 * inside the input, k and st then set. */
static bool pool_full(const Pool *p, int a, int64_t *k, int64_t *st)
{
	const Span *sp = p->span[a];
	int64_t n = p->out[a];
	*k = n ? sp[0].n : 0;
	*st = n > 1 ? sp[1].first - sp[0].first : 1;
	if (!n || *k < 1 || *st < 1 || p->dil[a] != 1)
		return false;
	for (int64_t o = 0; o < n; o++)
		if (sp[o].first != o * *st || sp[o].n != *k ||
		    sp[o].cnt != *k)
			return false;
	return true;
}

/* NHWC: output row r (of all images' rows), every channel. */
static void pool2_nhwc_row(const Pool2 *k, const float *x, float *y,
			   int64_t r)
{
	const Pool *p = &k->p;
	int64_t oh = p->out[1], ow = p->out[2], c = k->c;
	const Span *sh = &p->span[1][r % oh];
	const float *xi = x + r / oh * p->in[1] * p->in[2] * c;
	float *yr = y + r * ow * c;
	for (int64_t o = 0; o < ow; o++) {
		const Span *sw = &p->span[2][o];
		int64_t div = k->count_pad ? sh->cnt * sw->cnt : sh->n * sw->n;
		pool_pixel(xi, yr + o * c, c, c, c * p->in[2], sh, sw,
			   p->dil[1], p->dil[2], k->max, div);
	}
}

static int pool2_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const Pool2 *k = state;
	const float *x = in[0]->data;
	float *y = tensor_mut(out[0]);
	const Pool *p = &k->p;
	int nt = k->threads;
	if (k->nhwc) {
		RT_PARALLEL_FOR
		for (int64_t r = 0; r < k->n * p->out[1]; r++)
			pool2_nhwc_row(k, x, y, r);
		return 0;
	}
	int64_t ip = p->in[1] * p->in[2], op = p->out[1] * p->out[2];
	if (k->kh) {
		int64_t oh = p->out[1], ow = p->out[2], iw = p->in[2];
		RT_PARALLEL_ROWS
		for (int64_t r = 0; r < p->nc * oh; r++)
			pool_row_full(x + r / oh * ip + r % oh * k->sh * iw,
				      y + r * ow, ow, iw, k->kh, k->kw, k->sw,
				      k->max);
		return 0;
	}
	RT_PARALLEL_FOR
	for (int64_t pl = 0; pl < p->nc; pl++) {
		Pool one = *p;
		one.nc = 1;
		pool_rows(&one, x + pl * ip, y + pl * op, k->max, k->count_pad);
	}
	return 0;
}

int chan_pool_build(RunCtx *s, Prepared *p, Task *t)
{
	(void)s;
	((Pool2 *)t->fast.state)->nhwc = rt_nhwc(p, t->n->inputs[0]);
	return 0;
}

static void *zeroed(void *ctx, size_t bytes)
{
	(void)ctx;
	return calloc(1, bytes);
}

int chan_pool(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	char why[160];
	if (!f32_4d(x) || !f32_4d(y) || shape_numel(&y->shape) == 0 ||
	    (n->noutputs > 1 && n->outputs[1] >= 0)) /* MaxPool's Indices */
		return 0;
	Pool2 *k = xmalloc(sizeof(*k));
	memset(k, 0, sizeof(*k));
	if (pool_plan(n, &x->shape, &y->shape, &k->p, zeroed, NULL, why,
		      sizeof(why)) < 0) {
		free(k);
		return 0;
	}
	k->max = n->op == OP_MaxPool;
	k->count_pad = !k->max && attr_int(n, "count_include_pad", 0) != 0;
	if (!pool_full(&k->p, 1, &k->kh, &k->sh) ||
	    !pool_full(&k->p, 2, &k->kw, &k->sw))
		k->kh = 0;
	k->n = x->shape.dims[0], k->c = x->shape.dims[1];
	const int64_t *ks; /* pool_plan read 2 of them */
	attr_ints(n, "kernel_shape", &ks);
	k->threads = rt_threads_for(s, (double)shape_numel(&y->shape) *
					       (double)ks[0] * (double)ks[1]);
	fk->run = pool2_run;
	fk->free = pool2_free;
	fk->state = k;
	fk->threads = k->threads;
	rt_task_slots(t); /* X and Y in one layout, NHWC preferred */
	rt_slot(t, 0)->group = rt_slot(t, -1)->group = 1;
	rt_slot(t, 0)->prefers = rt_slot(t, -1)->prefers = true;
	return 1;
}

/* ---- Gather of channels ------------------------------------------------ */

/* Gather on axis 1 of [N,C,H,W] by constant indices (a channel shuffle,
 * passes/fuse.c): channels-last, each pixel's channels gathered;
 * row-major, a plane copied per output channel. */
typedef struct ChanGather {
	int64_t n, c, hw, co; /* X [n, c, hw], Y [n, co, hw] */
	int32_t *idx;	      /* per output channel, in [0, c) */
	bool shuffle2;	      /* idx a shuffle of 2 groups (passes/fuse.c) */
	bool nhwc;
	int threads;
} ChanGather;

static void chan_gather_free(void *state)
{
	ChanGather *k = state;
	if (k)
		free(k->idx);
	free(k);
}

/* np pixels' channels: y[p][j] = x[p][idx[j]] (vector gathers). */
RT_HOT_FN(static, void, gather_pixels,
	   (const float *restrict x, float *restrict y, int64_t np,
	    int64_t c, int64_t co, const int32_t *restrict idx),
	   (x, y, np, c, co, idx))
{
	for (int64_t p = 0; p < np; p++)
		for (int32_t j = 0; j < (int32_t)co; j++)
			y[p * co + j] = x[p * c + idx[j]];
}

/* np pixels' channels shuffled in 2 groups of h: y[p][2b + a] =
 * x[p][a h + b], two streams interleaved (vector permutes). */
RT_HOT_FN(static, void, shuffle2_pixels,
	   (const float *restrict x, float *restrict y, int64_t np,
	    int64_t h),
	   (x, y, np, h))
{
	for (int64_t p = 0; p < np; p++, x += 2 * h, y += 2 * h)
		for (int64_t b = 0; b < h; b++) {
			y[2 * b] = x[b];
			y[2 * b + 1] = x[h + b];
		}
}

static int chan_gather_run(void *state, const Tensor *const *in,
			   Tensor *const *out)
{
	const ChanGather *k = state;
	const float *x = in[0]->data;
	float *y = tensor_mut(out[0]);
	int nt = k->threads;
	if (k->nhwc) {
		enum { PIX = 64 }; /* pixels an item */
		int64_t np = k->n * k->hw;
		RT_PARALLEL_FOR
		for (int64_t p = 0; p < np; p += PIX) {
			int64_t m = np - p < PIX ? np - p : PIX;
			if (k->shuffle2)
				shuffle2_pixels(x + p * k->c, y + p * k->co,
						m, k->c / 2);
			else
				gather_pixels(x + p * k->c, y + p * k->co, m,
					      k->c, k->co, k->idx);
		}
		return 0;
	}
	size_t plane = (size_t)k->hw * sizeof(float);
	RT_PARALLEL_ROWS
	for (int64_t r = 0; r < k->n * k->co; r++)
		memcpy(y + r * k->hw,
		       x + (r / k->co * k->c + k->idx[r % k->co]) * k->hw,
		       plane);
	return 0;
}

int chan_gather_build(RunCtx *s, Prepared *p, Task *t)
{
	(void)s;
	((ChanGather *)t->fast.state)->nhwc = rt_nhwc(p, t->n->inputs[0]);
	return 0;
}

int chan_gather(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0), *iv = rt_in_val(p, n, 1);
	const Value *y = &p->g->vals[n->outputs[0]];
	int64_t axis = attr_int(n, "axis", 0);
	const Tensor *it = iv ? iv->konst : NULL;
	if (!f32_4d(x) || !f32_4d(y) || (axis != 1 && axis != -3) || !it ||
	    (it->dtype != DT_INT64 && it->dtype != DT_INT32) ||
	    it->shape.rank != 1 || shape_numel(&y->shape) == 0 ||
	    y->shape.dims[1] != it->shape.dims[0])
		return 0;
	ChanGather *k = xmalloc(sizeof(*k));
	k->n = x->shape.dims[0], k->c = x->shape.dims[1];
	k->hw = x->shape.dims[2] * x->shape.dims[3];
	k->co = y->shape.dims[1];
	k->nhwc = false;
	k->idx = xmalloc((size_t)k->co * sizeof(int32_t));
	for (int64_t j = 0; j < k->co; j++) {
		int64_t v = tensor_get_i64(it, j);
		v = v < 0 ? v + k->c : v;
		if (v < 0 || v >= k->c) { /* the reference kernel's error */
			chan_gather_free(k);
			return 0;
		}
		k->idx[j] = (int32_t)v;
	}
	k->shuffle2 = k->co == k->c && k->c % 2 == 0;
	for (int64_t j = 0; k->shuffle2 && j < k->co; j++)
		k->shuffle2 = k->idx[j] == j % 2 * (k->c / 2) + j / 2;
	k->threads = rt_threads_for(s, 4.0 * (double)shape_numel(&y->shape));
	fk->run = chan_gather_run;
	fk->free = chan_gather_free;
	fk->state = k;
	fk->threads = k->threads;
	rt_task_slots(t); /* X and Y in one layout */
	rt_slot(t, 0)->group = rt_slot(t, -1)->group = 1;
	return 1;
}

/* ---- Concat of channels ------------------------------------------------ */

static void cat_free(void *state)
{
	Cat *k = state;
	if (k->bn)
		bn_free(k->bn);
	free(k->c);
	free(k);
}

/* Row r of the output (one pixel's channels, or one image's planes),
 * through k->bn where it took one in. */
static void cat_row(const Cat *k, const Tensor *const *in, float *y,
		    int64_t r)
{
	int64_t unit = k->nhwc ? 1 : k->hw; /* floats per channel in a row */
	float *yr = y + r * k->cout * unit;
	const float *a = k->bn ? k->bn->ab : NULL, *b = a ? a + k->cout : NULL;
	int64_t ch = 0; /* the input's first channel in Y */
	for (int i = 0; i < k->nin; i++) {
		int64_t len = k->c[i] * unit;
		const float *x = (const float *)in[i]->data + r * len;
		if (!k->bn)
			memcpy(yr, x, (size_t)len * sizeof(*yr));
		else if (k->nhwc)
			bn_pixel(x, a + ch, b + ch, k->bn->relu, yr, len);
		else
			for (int64_t c = 0; c < k->c[i]; c++)
				bn_plane(x + c * unit, a[ch + c], b[ch + c],
					 k->bn->relu, yr + c * unit, unit);
		yr += len;
		ch += k->c[i];
	}
}

static int cat_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const Cat *k = state;
	float *y = tensor_mut(out[0]);
	int64_t rows = k->nhwc ? k->n * k->hw : k->n;
	int nt = k->bn ? k->bn->threads : 1; /* a copy: one thread */
	RT_PARALLEL_ROWS
	for (int64_t r = 0; r < rows; r++)
		cat_row(k, in, y, r);
	return 0;
}

bool chan_concat_batchnorm(FastKernel *cat, RunCtx *s, Prepared *p, Task *t)
{
	Cat *k = cat->run == cat_run ? cat->state : NULL;
	FastKernel bn = { 0 };
	if (!k || k->bn || !chan_batchnorm(s, p, t, &bn))
		return false;
	Bn *b = bn.state;
	if (b->c != k->cout) {
		bn_free(b);
		return false;
	}
	k->bn = b;
	cat->threads = b->threads;
	cat->variant = "bn";
	return true;
}

int chan_concat_build(RunCtx *s, Prepared *p, Task *t)
{
	(void)s;
	((Cat *)t->fast.state)->nhwc = rt_nhwc(p, t->n->outputs[0]);
	return 0;
}

int chan_concat(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	(void)s;
	const Node *n = t->n;
	const Value *y = &p->g->vals[n->outputs[0]];
	int64_t axis = attr_int(n, "axis", 1);
	if (!f32_4d(y) || (axis != 1 && axis != -3) || n->ninputs < 1 ||
	    shape_numel(&y->shape) == 0)
		return 0;
	for (int32_t i = 0; i < n->ninputs; i++) {
		const Value *x = rt_in_val(p, n, i);
		if (!f32_4d(x) || x->shape.dims[0] != y->shape.dims[0] ||
		    x->shape.dims[2] != y->shape.dims[2] ||
		    x->shape.dims[3] != y->shape.dims[3])
			return 0;
	}
	Cat *k = xmalloc(sizeof(*k));
	k->nin = n->ninputs;
	k->c = xmalloc((size_t)n->ninputs * sizeof(*k->c));
	for (int32_t i = 0; i < n->ninputs; i++)
		k->c[i] = rt_in_val(p, n, i)->shape.dims[1];
	k->n = y->shape.dims[0], k->cout = y->shape.dims[1];
	k->hw = y->shape.dims[2] * y->shape.dims[3];
	k->nhwc = false;
	k->bn = NULL;
	take(fk, cat_run, k);
	fk->free = cat_free;
	SlotLayout *lay = rt_task_slots(t); /* every input and Y: one layout */
	for (int slot = -n->noutputs; slot < n->ninputs; slot++)
		lay[n->noutputs + slot].group = 1;
	return 1;
}

/* ---- linear Resize of H and W ------------------------------------------ */

/* In ONNX Runtime's arithmetic, to the last bit: a quantized model (a
 * U-Net's dynamic-int8 export) turns a last-bit difference before a
 * DynamicQuantizeLinear into a flipped uint8 and percents of its
 * output, so the upsampling between its integer convolutions is done
 * as ONNX Runtime's CPU kernel does it, not as the reference kernel
 * (compiler/ops/resize.c: coordinates in double, a pass per axis), both
 * within float rounding of the exact values.  Per axis, an output
 * index's input coordinate in float, ((o + 0.5) / scale) - 0.5 with
 * scale = out / in in float, clamped to [0, in - 1]; taps i0 = its
 * integer part and i1 = i0 + 1 (clamped), weighted w0 = |v - i1| and
 * w1 = |v - i0| (0.5 each where both taps are the edge); an output is
 * (w0x w0y) a0 + (w1x w0y) a1 + (w0x w1y) b0 + (w1x w1y) b1 (a the
 * input row i0y, b the row i1y), every product and sum rounded in
 * float in that order (RT_HOT_EXACT: no fused multiply-add). */

/* One output index's two taps on an axis: input indices and weights. */
typedef struct Tap {
	int32_t i0, i1;
	float w0, w1;
} Tap;

/* Planes of ih x iw pixels of c floats each: row-major, N x C planes of
 * one float; NHWC, N planes of C. */
typedef struct Lerp {
	int64_t n, ch, ih, iw, oh, ow; /* X [n, ch, ih, iw] */
	int64_t planes, c;	       /* set by the build, from the layout */
	Tap *ty, *tx; /* per output row, per output column */
	float *rows;  /* one-float pixels: per thread, two input rows
		       * gathered at the columns' taps (2 x 2 x ow) */
	int threads;
} Lerp;

static void lerp_free(void *state)
{
	Lerp *k = state;
	free(k->ty);
	free(k->tx);
	free(k->rows);
	free(k);
}

/* The taps of an axis of in -> out (pytorch_half_pixel: out > 1, which
 * dnnl_resize_linear checks), as ONNX Runtime computes them. */
static Tap *axis_taps(int64_t in, int64_t out)
{
	Tap *t = xmalloc((size_t)out * sizeof(*t));
	float scale = (float)out / (float)in, last = (float)(in - 1);
	for (int64_t o = 0; o < out; o++) {
		float v = ((float)o + 0.5f) / scale - 0.5f;
		v = v < 0 ? 0 : v > last ? last : v;
		int64_t i0 = (int64_t)v < in - 1 ? (int64_t)v : in - 1;
		int64_t i1 = i0 + 1 < in - 1 ? i0 + 1 : in - 1;
		t[o].i0 = (int32_t)i0, t[o].i1 = (int32_t)i1;
		t[o].w0 = fabsf(v - (float)i1);
		t[o].w1 = fabsf(v - (float)i0);
		if (i0 == i1)
			t[o].w0 = t[o].w1 = 0.5f;
	}
	return t;
}

/* A row of one-float pixels at the columns' taps: g[2 o] = x[i0],
 * g[2 o + 1] = x[i1]. */
static void lerp_gather(const float *x, const Tap *tx, int64_t ow, float *g)
{
	for (int64_t o = 0; o < ow; o++) {
		g[2 * o] = x[tx[o].i0];
		g[2 * o + 1] = x[tx[o].i1];
	}
}

/* A row of one-float pixels from the gathered input rows a and b. */
RT_HOT_EXACT_FN(static, void, lerp_blend,
	   (const float *a, const float *b, const Tap *tx, Tap ty, float *y, int64_t ow),
	   (a, b, tx, ty, y, ow))
{
	for (int64_t o = 0; o < ow; o++) {
		float w0 = tx[o].w0, w1 = tx[o].w1;
		y[o] = w0 * ty.w0 * a[2 * o] + w1 * ty.w0 * a[2 * o + 1] +
		       w0 * ty.w1 * b[2 * o] + w1 * ty.w1 * b[2 * o + 1];
	}
}

/* A row of pixels of c floats from input rows a and b. */
RT_HOT_EXACT_FN(static, void, lerp_pixels,
	   (const float *a, const float *b, const Tap *tx, Tap ty, int64_t ow, int64_t c, float *y),
	   (a, b, tx, ty, ow, c, y))
{
	for (int64_t o = 0; o < ow; o++, y += c) {
		const float *a0 = a + tx[o].i0 * c, *a1 = a + tx[o].i1 * c;
		const float *b0 = b + tx[o].i0 * c, *b1 = b + tx[o].i1 * c;
		float w00 = tx[o].w0 * ty.w0, w10 = tx[o].w1 * ty.w0;
		float w01 = tx[o].w0 * ty.w1, w11 = tx[o].w1 * ty.w1;
		for (int64_t k = 0; k < c; k++)
			y[k] = w00 * a0[k] + w10 * a1[k] + w01 * b0[k] +
			       w11 * b1[k];
	}
}

/* Output rows q0 .. q1 of one-float pixels: each input row gathered
 * once into r[0] or r[1] (of 2 ow floats), kept while consecutive
 * output rows read it. */
static void lerp_planes(const Lerp *k, const float *x, float *y, int64_t q0,
			int64_t q1, float *r0, float *r1)
{
	float *r[2] = { r0, r1 };
	int64_t have[2] = { -1, -1 }; /* plane * ih + input row */
	for (int64_t q = q0; q < q1; q++) {
		int64_t pl = q / k->oh;
		Tap ty = k->ty[q % k->oh];
		int64_t want[2] = { pl * k->ih + ty.i0, pl * k->ih + ty.i1 };
		if (have[0] != want[0] && have[1] == want[0]) {
			float *tmp = r[0]; /* moving down a row */
			r[0] = r[1], r[1] = tmp;
			have[1] = have[0], have[0] = want[0];
		}
		bool one = want[1] == want[0]; /* a clamped edge */
		for (int j = 0; j < (one ? 1 : 2); j++)
			if (have[j] != want[j]) {
				lerp_gather(x + want[j] * k->iw, k->tx, k->ow,
					    r[j]);
				have[j] = want[j];
			}
		lerp_blend(r[0], one ? r[0] : r[1], k->tx, ty, y + q * k->ow,
			   k->ow);
	}
}

static int lerp_run(void *state, const Tensor *const *in,
		    Tensor *const *out)
{
	const Lerp *k = state;
	const float *x = in[0]->data;
	float *y = tensor_mut(out[0]);
	int64_t rows = k->planes * k->oh, xrow = k->iw * k->c;
	int nt = k->threads;
	/* strips of rows, 4 a thread (RT_PARALLEL_FOR's dynamic taking);
	 * lerp_planes keeps the input rows it gathered across a strip's
	 * rows, in its thread's two row buffers */
	int64_t strips = nt > 1 ? 4 * (int64_t)nt : 1;
	RT_PARALLEL_FOR
	for (int64_t st = 0; st < strips; st++) {
		int64_t q0 = rows * st / strips, q1 = rows * (st + 1) / strips;
		int th = rt_thread();
		if (k->c == 1) {
			lerp_planes(k, x, y, q0, q1,
				    k->rows + 4 * th * k->ow,
				    k->rows + (4 * th + 2) * k->ow);
			continue;
		}
		for (int64_t q = q0; q < q1; q++) {
			int64_t pl = q / k->oh;
			Tap ty = k->ty[q % k->oh];
			lerp_pixels(x + (pl * k->ih + ty.i0) * xrow,
				    x + (pl * k->ih + ty.i1) * xrow, k->tx, ty,
				    k->ow, k->c, y + q * k->ow * k->c);
		}
	}
	return 0;
}

int chan_resize_build(RunCtx *s, Prepared *p, Task *t)
{
	(void)s;
	Lerp *k = t->fast.state;
	bool nhwc = rt_nhwc(p, t->n->outputs[0]);
	k->planes = nhwc ? k->n : k->n * k->ch;
	k->c = nhwc ? k->ch : 1;
	return 0;
}

/* dnnl.c's linear Resize (half_pixel coordinates, scales of Y over X)
 * of [N,C,H,W], in either layout: oneDNN's resampling vectorises over
 * channels, and ran one channel at a fifth of memory's speed. */
int chan_resize(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	if (!dnnl_resize_linear(s, p, n) || !f32_4d(x) ||
	    x->shape.dims[2] > INT32_MAX || x->shape.dims[3] > INT32_MAX)
		return 0;
	Lerp *k = xmalloc(sizeof(*k));
	memset(k, 0, sizeof(*k));
	k->n = x->shape.dims[0], k->ch = x->shape.dims[1];
	k->ih = x->shape.dims[2], k->iw = x->shape.dims[3];
	k->oh = y->shape.dims[2], k->ow = y->shape.dims[3];
	k->ty = axis_taps(k->ih, k->oh);
	k->tx = axis_taps(k->iw, k->ow);
	k->threads = rt_threads_for(s, 4.0 * (double)shape_numel(&y->shape));
	k->rows = xmalloc(4 * (size_t)k->threads * (size_t)k->ow *
			  sizeof(*k->rows));
	take(fk, lerp_run, k);
	fk->free = lerp_free;
	fk->threads = k->threads;
	rt_task_slots(t); /* X and Y share a layout, which may be NHWC */
	rt_slot(t, 0)->group = rt_slot(t, -1)->group = 1;
	return 1;
}

/* ---- Conv with few output channels on channels-last X ------------------- */

/* oneDNN pads output channels to 16: a U-Net's one-channel side output
 * from 64 channels at 512x512 did 16x its work (27 ms).  direct.c's
 * kernel for few output channels reads X row-major; here each output
 * pixel is a dot product over its window's pixels, each pixel's cin
 * floats contiguous in NHWC, in vector lanes (VL, summed at the end).
 * Each output channel reads X again, where direct.c's kernel reads it
 * once after a reorder to row-major: this one is faster only with at
 * least FEW_CIN input channels an output channel.  Measured (3x3 at
 * 160x160, one thread, the whole model of the Conv): 128->1 and 128->2
 * 48 against 52 and 49 against 55 ms, 64->2 15.6 against 16.1, 32->1
 * 6.5 against 6.8; 128->4 equal; 64->4 18.0 against 16.2, 32->2 7.3
 * against 6.2, 16->1 3.3 against 3.1, 16->4 (a text detector's neck at
 * 160x160) 5.9 against 2.9. */
enum { FEW_OUT = 8, FEW_CIN = 32, VL = 16 };

typedef float Vec __attribute__((vector_size(VL * sizeof(float))));

typedef struct FewConv {
	ConvGeom g;
	float *w;	/* [kh][kw][cout][cin] */
	const float *b; /* [cout] or NULL */
	bool nhwc;	/* X channels-last (else row-major) */
	int threads;
} FewConv;

static void few_free(void *state)
{
	FewConv *k = state;
	free(k->w);
	free(k);
}

/* Output (oy, ox) of output channel o, from image x (its pixels'
 * channels cs apart, pixels ps apart): the window's products summed in
 * four vectors of VL lanes (channels that are contiguous, in multiples
 * of VL) and one float (the rest), the lanes added at the end. */
static inline __attribute__((always_inline)) float
few_point(const FewConv *k, const float *x, int64_t cs, int64_t ps,
	  int64_t o, int64_t oy, int64_t ox)
{
	const ConvGeom *g = &k->g;
	int64_t kh = g->kernel[0], kw = g->kernel[1], cin = g->cin;
	int64_t cv = cs == 1 ? cin / VL * VL : 0; /* channels in lanes */
	Vec acc[4] = { { 0 }, { 0 }, { 0 }, { 0 } };
	float rest = 0;
	for (int64_t ky = 0; ky < kh; ky++) {
		int64_t iy = oy * g->stride[0] - g->pad[0] +
			     ky * g->dilation[0];
		if (iy < 0 || iy >= g->in[0])
			continue;
		for (int64_t kx = 0; kx < kw; kx++) {
			int64_t ix = ox * g->stride[1] - g->pad[1] +
				     kx * g->dilation[1];
			if (ix < 0 || ix >= g->in[1])
				continue;
			const float *xp = x + (iy * g->in[1] + ix) * ps;
			const float *w =
				k->w + ((ky * kw + kx) * g->cout + o) * cin;
			int64_t c = 0;
			for (; c + 4 * VL <= cv; c += 4 * VL)
				for (int j = 0; j < 4; j++) {
					Vec a, b;
					memcpy(&a, xp + c + j * VL, sizeof(a));
					memcpy(&b, w + c + j * VL, sizeof(b));
					acc[j] += a * b;
				}
			for (int j = 0; c < cv; c += VL, j++) {
				Vec a, b;
				memcpy(&a, xp + c, sizeof(a));
				memcpy(&b, w + c, sizeof(b));
				acc[j] += a * b;
			}
			for (; c < cin; c++)
				rest += xp[c * cs] * w[c];
		}
	}
	Vec v = (acc[0] + acc[1]) + (acc[2] + acc[3]);
	float sum = k->b ? k->b[o] : 0;
	for (int l = 0; l < VL; l++)
		sum += v[l];
	return sum + rest;
}

/* Output row oy of every output channel into y (row-major planes). */
RT_HOT_FN(static, void, few_row,
	   (const FewConv *k, const float *x, int64_t cs, int64_t ps, int64_t oy, float *y),
	   (k, x, cs, ps, oy, y))
{
	const ConvGeom *g = &k->g;
	int64_t ow = g->out[1], plane = g->out[0] * ow;
	for (int64_t o = 0; o < g->cout; o++)
		for (int64_t ox = 0; ox < ow; ox++)
			y[o * plane + oy * ow + ox] =
				few_point(k, x, cs, ps, o, oy, ox);
}

static int few_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const FewConv *k = state;
	const ConvGeom *g = &k->g;
	int64_t hw = g->in[0] * g->in[1], oh = g->out[0];
	int64_t cs = k->nhwc ? 1 : hw, ps = k->nhwc ? g->cin : 1;
	int64_t rows = g->n * oh;
	int nt = k->threads;
	RT_PARALLEL_FOR
	for (int64_t r = 0; r < rows; r++) {
		int64_t n = r / oh;
		few_row(k, (const float *)in[0]->data + n * g->cin * hw, cs, ps,
			r % oh,
			(float *)tensor_mut(out[0]) +
				n * g->cout * oh * g->out[1]);
	}
	return 0;
}

int chan_few_conv_build(RunCtx *s, Prepared *p, Task *t)
{
	(void)s;
	((FewConv *)t->fast.state)->nhwc = rt_nhwc(p, t->n->inputs[0]);
	return 0;
}

int chan_few_conv(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	const Node *n = t->n;
	const Value *w = rt_in_val(p, n, 1), *b = rt_in_val(p, n, 2);
	ConvGeom cg;
	if (n->op != OP_Conv || !direct_conv_geom(s, p, n, false, &cg) ||
	    cg.nsp != 2 || cg.group != 1 || cg.cout > FEW_OUT ||
	    cg.cin < FEW_CIN * cg.cout || cg.kernel[0] * cg.kernel[1] == 1 ||
	    (b && shape_numel(&b->shape) != cg.cout))
		return 0;
	int64_t taps = cg.cin * cg.kernel[0] * cg.kernel[1];
	const float *wd = w->konst->data;
	FewConv *k = xmalloc(sizeof(*k));
	k->g = cg;
	k->b = b ? b->konst->data : NULL;
	k->nhwc = false;
	k->threads = rt_threads_for(s, rt_conv_flops(&cg, false));
	k->w = xmalloc((size_t)(cg.cout * taps) * sizeof(*k->w));
	int64_t win = cg.kernel[0] * cg.kernel[1];
	for (int64_t o = 0; o < cg.cout; o++) /* [o][ic][i] -> [i][o][ic] */
		for (int64_t ic = 0; ic < cg.cin; ic++)
			for (int64_t i = 0; i < win; i++)
				k->w[(i * cg.cout + o) * cg.cin + ic] =
					wd[(o * cg.cin + ic) * win + i];
	take(fk, few_run, k);
	fk->free = few_free;
	fk->threads = k->threads;
	rt_task_slots(t); /* X may be NHWC; Y row-major */
	rt_slot(t, 0)->group = 1;
	rt_slot(t, 0)->prefers = true;
	return 1;
}

/* ---- Conv of 1x1 windows ------------------------------------------------ */

/* A 1x1 convolution is a matrix product: in NHWC, Y [pixels, Co] =
 * X [pixels, C] W' [C, Co]; row-major, per image, Y [Co, pixels] =
 * W [Co, C] X [C, pixels].  oneDNN compiles a brgemm kernel set for each
 * one, 0.3-0.4 ms of prepare apiece (PP-OCRv4 det has 22: half its
 * prepare), to run what one hand-written tile does about as fast: mr
 * rows by nv vectors of 16 columns of C in registers, each step along K
 * loading nv vectors of B and broadcasting mr values of A.  Panels of
 * B (W' packed once, 64-byte aligned: a vector split over two cache
 * lines cost 14%) are 48 columns wide, in tiles of 8 x 3 vectors (ran
 * 192x192 products at 92% of this CPU's peak), or 64 (6 x 4) where that
 * divides Co and 48 does not (64 channels as 48 + 16 ran 20% slower
 * than oneDNN, as 64 as fast), or 32 (12 x 2).  While a tile computes,
 * the rows of A two tiles on are fetched, and of C too where few input
 * channels make the product a stream of stores larger than the caches
 * (det's 12 -> 96 at 4x160x160: 1.33 of oneDNN's time without, 0.84
 * with; with more, fetching C cost 10-20%).  The bias starts the sums
 * (per column in NHWC, per row row-major); a FusedConv's activations
 * run over each block of outputs while it is in cache.  Every output's
 * sum runs over K in order in one thread: the same result at any thread
 * count.  The figures below are AVX-512's (its 32 registers hold the
 * tile); on AVX2 it takes only the smallest products (PW_TINY_AVX2).
 *
 * Up to PW_CIN input channels (a panel of 48 columns then fits L1 with
 * the tile's rows of A), where it ran as fast as oneDNN's or faster
 * (one thread, sums over each model's 1x1 Convs, oneDNN's first: det
 * at 1x640x640 10.76 / 10.68 ms, 4x640x640 47.5 / 46.3; cls at batch 1
 * 0.216 / 0.187, at 24 4.41 / 4.11; rec at 1x48x320 1.59 / 1.62, at
 * 8x48x640 24.4 / 24.8); from 240 it ran 4-12% slower (rec's 240 ->
 * 240 at 12x80, det's 384 -> 384 at 20x20): those stay oneDNN's. */
#define PW_CIN 192

/* With 16 registers (AVX2: tiles of 6 rows by 2 vectors) the tile fell
 * behind oneDNN's jit_1x1:avx2 on every 1x1 convolution with pixels:
 * each of LR-ASPP's 25 (16 to 160 input channels, 40 to 960 output, 1 to
 * 160x160 pixels, one thread, AMD EPYC) took 1.15-1.25x oneDNN's time,
 * and whole models ran 4-14% faster on oneDNN's (det 640, LR-ASPP,
 * MobileNetV3, EfficientNet-B0).  There it takes only products of at
 * most PW_TINY_AVX2 multiply-adds (squeeze-excitation's 1x1 layers: 72
 * -> 24 at 1x1 in 2 us against oneDNN's 4; 120 -> 480 took 24 against
 * 15), where oneDNN's cost per call is most of the time. */
#define PW_TINY_AVX2 16384
int64_t rt_pw_tiny_avx2 = PW_TINY_AVX2;

enum {
	PW_MR = 12,	     /* rows of a tile, at most (pw_mr) */
	PW_NV = 4,	     /* vectors of a tile, at most */
	PW_MC = 128,	     /* NHWC: pixels a work item, at most */
	PW_NP = 48,	     /* row-major: pixels a work item (3 vectors) */
	PW_CACHED = 2 << 20, /* bytes of a tensor that stay in cache */
};

typedef struct Pw {
	int64_t n, cin, cout, hw; /* images, channels, pixels an image */
	int64_t nr;		  /* columns of a panel of B: 48, 64 or 32 */
	const float *w;		  /* row-major: W [cout][cin] */
	const float *wp;	  /* NHWC: W' in panels [cout / nr][cin][nr]
				   * (rt_derived) */
	void *own;		  /* wp, if this kernel's own */
	const float *b;		  /* [cout] or NULL */
	float *bp;		  /* NHWC: b (or 0) padded to whole panels */
	ActRun *acts;
	bool pfc;     /* NHWC: fetch C's rows ahead too (pw_rows) */
	int64_t mc;   /* NHWC: pixels a work item (pw_item_pixels) */
	float *panel; /* per thread: B's columns at the end of a row */
	bool nhwc;
	int threads;
	/* a work item, NHWC or row-major, of the level chosen (pw_simd.h) */
	void (*nhwc_item)(const struct Pw *k, const float *x, float *y,
			  int64_t r);
	void (*rows_item)(const struct Pw *k, const float *x, float *y,
			  int64_t i, int64_t p0, float *panel);
} Pw;

/* NHWC: the pixels of a work item, of px on threads threads: PW_MC, or
 * on more than one thread fewer, whole tiles of 8 rows, so that there
 * are 4 items a thread: ShuffleNetV2's 1x1 Convs at 14x14 and 7x7 were
 * 2 items and 1 of 128 pixels, and ran as long on 2 threads as on 1. */
static int64_t pw_item_pixels(int64_t px, int threads)
{
	if (threads <= 1)
		return PW_MC;
	int64_t per = (px + 4 * threads - 1) / (4 * threads);
	per = (per + 7) / 8 * 8;
	return per < PW_MC ? per : PW_MC;
}

static void pw_free(void *state)
{
	Pw *k = state;
	if (k) {
		free(k->own);
		free(k->bp);
		free(k->acts);
		free(k->panel);
	}
	free(k);
}

/* The kernels of each ISA level (runtime/pw_simd.h). */
#define SIMD_BODY "pw_simd.h"
#include "simd_each.h"

int64_t chan_gemm_nr(int64_t n)
{
	return !(n % 48) ? 48 : !(n % 64) ? 64 : !(n % 32) ? 32 : 48;
}

ChanGemm chan_gemm_for(CpuLevel isa)
{
#if RT_X86
	if (isa >= CPU_LEVEL_AVX512)
		return chan_gemm_avx512;
	if (isa >= CPU_LEVEL_AVX2)
		return chan_gemm_avx2;
#endif
	(void)isa;
	return chan_gemm_base;
}

ChanGemmPart chan_gemm_part_for(CpuLevel isa)
{
#if RT_X86
	if (isa >= CPU_LEVEL_AVX512)
		return chan_gemm_part_avx512;
	if (isa >= CPU_LEVEL_AVX2)
		return chan_gemm_part_avx2;
#endif
	(void)isa;
	return chan_gemm_part_base;
}

static int pw_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const Pw *k = state;
	const float *x = in[0]->data;
	float *y = tensor_mut(out[0]);
	int64_t per = (k->hw + PW_NP - 1) / PW_NP;
	int64_t items = k->nhwc ? (k->n * k->hw + k->mc - 1) / k->mc
				: k->n * per;
	int nt = k->threads;
	RT_PARALLEL_FOR
	for (int64_t r = 0; r < items; r++) {
		if (k->nhwc)
			k->nhwc_item(k, x, y, r);
		else
			k->rows_item(k, x, y, r / per, r % per * PW_NP,
				      k->panel + (size_t)rt_thread() *
							 (size_t)(k->cin * PW_NP));
	}
	return 0;
}

const void *chan_weights(const FastKernel *fk)
{
	return fk->run == pw_run ? (const void *)((const Pw *)fk->state)->wp
				 : chan_wino_weights(fk);
}

/* W' from k's W [cout][cin], packed for chan_gemm with zero columns up
 * to a whole panel (rt_derived's make). */
static void pw_pack(const void *ctx, void *dst)
{
	const Pw *k = ctx;
	float *wp = dst;
	int64_t nr = k->nr, padded = (k->cout + nr - 1) / nr * nr;
	for (int64_t o = 0; o < padded; o++) /* [o][c] -> [o / nr][c][o % nr] */
		for (int64_t c = 0; c < k->cin; c++)
			wp[chan_gemm_at(o, c, k->cin, nr)] =
				o < k->cout ? k->w[o * k->cin + c] : 0;
}

int chan_pw_conv_build(RunCtx *s, Prepared *p, Task *t)
{
	Pw *k = t->fast.state;
	/* [N,C,1,1] (a squeeze-excite block's): NHWC's bytes, and a product
	 * of the images' rows, W' staying in cache, not one of W's rows
	 * with a column of one pixel */
	k->nhwc = rt_nhwc(p, t->n->inputs[0]) || k->hw == 1;
	if (!k->nhwc)
		return 0; /* the rows read W as it is */
	/* W' depends on W and the panels' width: made once per model */
	int64_t padded = (k->cout + k->nr - 1) / k->nr * k->nr;
	if (!(k->wp = rt_derived(s, p, k->w, RT_DERIVED('P', k->nr),
				 (size_t)(padded * k->cin) * sizeof(float),
				 pw_pack, k, &k->own)))
		return error("out of memory for the 1x1 convolution's packed "
			     "weights");
	return 0;
}

bool chan_simd_conv(RunCtx *s, Prepared *p, const Node *n, bool z_ok,
		    ConvGeom *cg)
{
	const Value *b = rt_in_val(p, n, 2);
	return (n->op == OP_Conv || z_ok || !rt_in_val(p, n, 3)) &&
	       direct_conv_geom(s, p, n, false, cg) && cg->nsp == 2 &&
	       (!b || shape_numel(&b->shape) == cg->cout);
}

int chan_pw_conv(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	const Node *n = t->n;
	const Value *w = rt_in_val(p, n, 1), *b = rt_in_val(p, n, 2);
	ConvGeom cg;
	if (!chan_simd_conv(s, p, n, false, &cg) || cg.group != 1)
		return 0;
	for (int a = 0; a < 2; a++)
		if (cg.kernel[a] != 1 || cg.stride[a] != 1 || cg.pad[a] != 0 ||
		    cg.out[a] != cg.in[a])
			return 0;
	ActRun *acts;
	if (cg.cin > PW_CIN ||
	    (RT_X86 && cpu_isa() < CPU_LEVEL_AVX512 &&
	     cpu_isa() >= CPU_LEVEL_AVX2 &&
	     cg.n * cg.out[0] * cg.out[1] * cg.cin * cg.cout >
		     rt_pw_tiny_avx2) ||
	    !(acts = act_run_of(n)))
		return 0;
	Pw *k = xmalloc(sizeof(*k));
	memset(k, 0, sizeof(*k));
	k->n = cg.n, k->cin = cg.cin, k->cout = cg.cout;
	k->hw = cg.out[0] * cg.out[1];
	k->nr = chan_gemm_nr(cg.cout);
	k->w = w->konst->data;
	k->b = b ? b->konst->data : NULL;
	k->acts = acts;
	k->threads = rt_threads_for(s, rt_conv_flops(&cg, false));
	k->mc = pw_item_pixels(cg.n * k->hw, k->threads);
	int64_t pixels = cg.n * k->hw * (int64_t)sizeof(float);
	k->pfc = pixels * cg.cout > PW_CACHED && cg.cin < 32;
	int64_t nr = k->nr, padded = (cg.cout + nr - 1) / nr * nr;
	/* 64-byte aligned: a vector of B split across two cache lines cost
	 * 14% of a 192x192 product's time */
	size_t panels = (size_t)(k->threads > 1 ? k->threads : 1) *
			(size_t)(cg.cin * PW_NP) * sizeof(float);
	if (!(k->bp = big_alloc((size_t)padded * sizeof(float), NULL)) ||
	    !(k->panel = big_alloc(panels, NULL))) {
		pw_free(k);
		return 0;
	}
	memset(k->bp, 0, (size_t)padded * sizeof(float));
	if (k->b)
		memcpy(k->bp, k->b, (size_t)cg.cout * sizeof(float));
	CpuLevel isa = cpu_isa();
	k->nhwc_item = pw_nhwc_base, k->rows_item = pw_rows_major_base;
#if RT_X86
	if (isa >= CPU_LEVEL_AVX512)
		k->nhwc_item = pw_nhwc_avx512,
		k->rows_item = pw_rows_major_avx512;
	else if (isa >= CPU_LEVEL_AVX2)
		k->nhwc_item = pw_nhwc_avx2, k->rows_item = pw_rows_major_avx2;
#endif
	take(fk, pw_run, k);
	fk->free = pw_free;
	fk->variant = cpu_isa_name(isa);
	fk->threads = k->threads;
	rt_task_slots(t); /* X and Y in one layout, NHWC preferred */
	rt_slot(t, 0)->group = rt_slot(t, -1)->group = 1;
	rt_slot(t, 0)->prefers = rt_slot(t, -1)->prefers = true;
	return 1;
}
