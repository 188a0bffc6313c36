/*
 * compiler/ops/pool.c - the pooling kernels: MaxPool (with Indices),
 * AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool,
 * MaxUnpool, MaxRoiPool and RoiAlign; and the float staging helpers the
 * nn family's kernels share (nn_floats, nn_out_floats, nn_out_done).
 * Their inference hooks are in nn.c.
 *
 * The kernels compute in float: an input of another dtype is converted
 * into scratch memory and the result converted back, which is exact for
 * float16, bfloat16 and the 8-bit integers (double rounds to float).
 *
 * The windowed pools see every input as a 3-D pool [N*C, D, H, W] (1-D
 * and 2-D ones get leading spatial axes of size 1) and precompute, per
 * axis and output index, the taps of the window that fall in the input
 * (Span, pool.h), so the inner loops neither test bounds nor divide.
 * MaxPool without Indices and AveragePool go an output row at a time:
 * each input row a window reads updates the whole output row, one kernel
 * tap (RowTap) after another, in branch-free streaming loops.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "opimpl.h"
#include "pool.h"

/* ---- float staging ------------------------------------------------------ */

const float *nn_floats(OpCtx *c, const Tensor *t)
{
	if (t->dtype == DT_FLOAT)
		return t->data;
	int64_t n = shape_numel(&t->shape);
	float *f = op_scratch_zeroed(c, (size_t)n * sizeof(float));
	for (int64_t i = 0; f && i < n; i++)
		f[i] = (float)tensor_get_f64(t, i);
	return f;
}

float *nn_out_floats(OpCtx *c, Tensor *o)
{
	if (o->dtype == DT_FLOAT)
		return tensor_mut(o);
	return op_scratch_zeroed(c, (size_t)shape_numel(&o->shape) * sizeof(float));
}

void nn_out_done(OpCtx *c, int i, Tensor *o, const float *f)
{
	if (o->dtype != DT_FLOAT)
		for (int64_t k = 0, n = shape_numel(&o->shape); k < n; k++)
			tensor_set_f64(o, k, f[k]);
	op_set_const(c, i, o);
}

/* ---- window geometry ---------------------------------------------------- */

/* Ints attribute name into v[0..n): absent, every value is dflt; -1
 * with why if it has another length. */
static int pool_ints(const Node *n, const char *name, int32_t cnt,
		     int64_t dflt, int64_t *v, char *why, size_t len)
{
	const int64_t *a;
	int32_t got = attr_ints(n, name, &a);
	if (got >= 0 && got != cnt) {
		snprintf(why, len, "%s has %d values, expected %d", name, got,
			 cnt);
		return -1;
	}
	for (int32_t i = 0; i < cnt; i++)
		v[i] = got < 0 ? dflt : a[i];
	return 0;
}

int pool_axes(const Node *n, const Shape *x, const Shape *y, PoolAxis *ax,
	      char *why, size_t len)
{
	int64_t k[MAX_RANK], s[MAX_RANK], d[MAX_RANK], pads[2 * MAX_RANK];
	int32_t nsp = x->rank - 2;
	const char *ap = attr_str(n, "auto_pad", "NOTSET");
	if (nsp < 1 || nsp > 3 || y->rank != x->rank) {
		snprintf(why, len, "pooling needs 1 to 3 spatial axes, not %d",
			 nsp);
		return -1;
	}
	if (pool_ints(n, "kernel_shape", nsp, 1, k, why, len) < 0 ||
	    pool_ints(n, "strides", nsp, 1, s, why, len) < 0 ||
	    pool_ints(n, "dilations", nsp, 1, d, why, len) < 0 ||
	    pool_ints(n, "pads", 2 * nsp, 0, pads, why, len) < 0)
		return -1;
	for (int32_t i = 0; i < nsp; i++) {
		PoolAxis *a = &ax[i];
		*a = (PoolAxis){ k[i], s[i], d[i], pads[i], pads[nsp + i] };
		if (a->k < 1 || a->s < 1 || a->d < 1 || a->pb < 0 || a->pe < 0) {
			snprintf(why, len, "kernel_shape, strides and dilations "
				 "must be >= 1 and pads >= 0");
			return -1;
		}
		if (!strcmp(ap, "VALID")) {
			a->pb = a->pe = 0;
		} else if (!strcmp(ap, "SAME_UPPER") ||
			   !strcmp(ap, "SAME_LOWER")) {
			int64_t tot = (y->dims[2 + i] - 1) * a->s +
				      (a->k - 1) * a->d + 1 - x->dims[2 + i];
			tot = tot > 0 ? tot : 0;
			a->pb = strcmp(ap, "SAME_UPPER") ? tot - tot / 2
							 : tot / 2;
			a->pe = tot - a->pb;
		}
	}
	return 0;
}

void pool_spans(Span *sp, int64_t in, int64_t out, const PoolAxis *a)
{
	int64_t k = a->k, s = a->s, d = a->d, pe = a->pe;
	for (int64_t o = 0; o < out; o++) {
		int64_t start = o * s - a->pb, lo = 0, hi = 0, ph;
		if (start < 0)
			lo = (-start + d - 1) / d;
		if (in - 1 - start >= 0)
			hi = (in - 1 - start) / d + 1;
		hi = hi < k ? hi : k;
		ph = in + pe - 1 - start >= 0 ? (in + pe - 1 - start) / d + 1 : 0;
		sp[o].first = start + lo * d;
		sp[o].n = hi > lo ? hi - lo : 0;
		sp[o].cnt = ph < k ? ph : k;
	}
}

/* The taps of the last axis, for the row kernels, into p->tap. */
static void row_taps(Pool *p, int64_t k, int64_t s, int64_t pb)
{
	int64_t in = p->in[2], out = p->out[2];
	p->kw = k;
	p->sw = s;
	for (int64_t t = 0; t < k; t++) {
		RowTap *r = &p->tap[t];
		r->off = t * p->dil[2] - pb;
		/* lo: the first ow with ow * s + off >= 0; hi: past the last
		 * with ow * s + off < in */
		r->lo = r->off >= 0 ? 0 : (-r->off + s - 1) / s;
		r->hi = in - r->off <= 0 ? 0 : (in - r->off + s - 1) / s;
		r->hi = r->hi < out ? r->hi : out;
		r->lo = r->lo < r->hi ? r->lo : r->hi;
	}
}

int pool_plan(const Node *n, const Shape *x, const Shape *y, Pool *p,
	      void *(*alloc)(void *ctx, size_t bytes), void *ctx, char *why,
	      size_t len)
{
	PoolAxis ax[3], one = { 1, 1, 1, 0, 0 };
	int32_t nsp = x->rank - 2;
	if (pool_axes(n, x, y, ax, why, len) < 0)
		return -1;
	const PoolAxis *pa[3];
	size_t spans = 0;
	p->nc = x->dims[0] * x->dims[1];
	for (int32_t a = 0; a < 3; a++) {
		int32_t i = a - (3 - nsp);
		pa[a] = i < 0 ? &one : &ax[i];
		p->in[a] = i < 0 ? 1 : x->dims[2 + i];
		p->out[a] = i < 0 ? 1 : y->dims[2 + i];
		p->dil[a] = pa[a]->d;
		spans += (size_t)(p->out[a] ? p->out[a] : 1);
	}
	/* a tap a window column: more than the padded row's elements can
	 * only come of attributes no output shape agrees with */
	if (pa[2]->k > (1 << 20) &&
	    (double)pa[2]->k > (double)p->in[2] + (double)pa[2]->pb +
				       (double)pa[2]->pe + (double)pa[2]->s) {
		snprintf(why, len, "kernel_shape %lld is larger than the "
			 "padded input", (long long)pa[2]->k);
		return -1;
	}
	Span *sp = alloc(ctx, spans * sizeof(Span) +
				      (size_t)pa[2]->k * sizeof(RowTap));
	if (!sp) {
		snprintf(why, len, "out of memory for the pool's windows");
		return -1;
	}
	for (int32_t a = 0; a < 3; a++) {
		p->span[a] = sp;
		pool_spans(sp, p->in[a], p->out[a], pa[a]);
		sp += p->out[a] ? p->out[a] : 1;
	}
	p->tap = (RowTap *)(void *)sp;
	row_taps(p, pa[2]->k, pa[2]->s, pa[2]->pb);
	return 0;
}

static void *scratch_alloc(void *ctx, size_t bytes)
{
	return op_scratch_zeroed(ctx, bytes);
}

/* Reads the window attributes of a pool from x to y into *p. */
static int pool_setup(OpCtx *c, const Shape *x, const Shape *y, Pool *p)
{
	char why[160];
	return pool_plan(c->n, x, y, p, scratch_alloc, c, why, sizeof(why)) < 0
		       ? op_error(c, "%s", why)
		       : 0;
}

/* ---- MaxPool, AveragePool, LpPool --------------------------------------- */

/* The index MaxPool reports for offset off of a plane: off itself in row
 * major order, else the column-major offset of the same element. */
static int64_t col_major(const Pool *p, int64_t off)
{
	int64_t w = off % p->in[2], h = off / p->in[2] % p->in[1];
	int64_t dz = off / (p->in[2] * p->in[1]);
	return (w * p->in[1] + h) * p->in[0] + dz;
}

/* The max of the window at spans sd, sh, sw of plane xp; *at gets its
 * plane offset (the first maximum), -1 if the window is empty. */
static inline float window_max(const Pool *p, const float *xp,
			       const Span *sd, const Span *sh, const Span *sw,
			       int64_t *at)
{
	int64_t H = p->in[1], W = p->in[2], dw = p->dil[2];
	float best = 0;
	int64_t pos = -1;
	for (int64_t a = 0; a < sd->n; a++) {
		int64_t zd = (sd->first + a * p->dil[0]) * H + sh->first;
		for (int64_t b = 0; b < sh->n; b++) {
			int64_t row = (zd + b * p->dil[1]) * W + sw->first;
			for (int64_t e = 0; e < sw->n; e++) {
				float v = xp[row + e * dw];
				bool more = pos < 0 || v > best ||
					    (best != best && v == v);
				best = more ? v : best;
				pos = more ? row + e * dw : pos;
			}
		}
	}
	*at = pos;
	return best;
}

/* The sum of |x|^lp over the window. */
static inline float window_sum(const Pool *p, const float *xp,
			       const Span *sd, const Span *sh, const Span *sw,
			       double lp)
{
	int64_t H = p->in[1], W = p->in[2], dw = p->dil[2];
	float sum = 0;
	for (int64_t a = 0; a < sd->n; a++) {
		int64_t zd = (sd->first + a * p->dil[0]) * H + sh->first;
		for (int64_t b = 0; b < sh->n; b++) {
			const float *r = xp + (zd + b * p->dil[1]) * W + sw->first;
			for (int64_t e = 0; e < sw->n; e++)
				sum += lp == 2 ? r[e * dw] * r[e * dw]
					       : (float)pow(fabsf(r[e * dw]), lp);
		}
	}
	return sum;
}

/* yr[ow] = max(yr[ow], the input each tap reads in row xr). */
static void row_max(const Pool *p, const float *xr, float *yr)
{
	int64_t s = p->sw;
	for (int64_t t = 0; t < p->kw; t++) {
		const RowTap *r = &p->tap[t];
		for (int64_t ow = r->lo; ow < r->hi; ow++) {
			yr[ow] = pool_max_num(yr[ow], xr[ow * s + r->off]);
		}
	}
}

/* yr[ow] += the input each tap reads in row xr. */
static void row_sum(const Pool *p, const float *xr, float *yr)
{
	int64_t s = p->sw;
	for (int64_t t = 0; t < p->kw; t++) {
		const RowTap *r = &p->tap[t];
		for (int64_t ow = r->lo; ow < r->hi; ow++)
			yr[ow] += xr[ow * s + r->off];
	}
}

void pool_rows(const Pool *p, const float *x, float *y, bool max,
	       bool count_pad)
{
	int64_t H = p->in[1], W = p->in[2], plane = p->in[0] * H * W;
	int64_t OW = p->out[2];
	const Span *sw = p->span[2];
	for (int64_t nc = 0; nc < p->nc; nc++) {
		const float *xp = x + nc * plane;
		for (int64_t od = 0; od < p->out[0]; od++)
		for (int64_t oh = 0; oh < p->out[1]; oh++, y += OW) {
			const Span *sd = &p->span[0][od], *sh = &p->span[1][oh];
			for (int64_t ow = 0; ow < OW; ow++)
				y[ow] = max ? NAN : 0; /* max_num's start */
			for (int64_t a = 0; a < sd->n; a++) {
				int64_t zd = (sd->first + a * p->dil[0]) * H +
					     sh->first;
				for (int64_t b = 0; b < sh->n; b++) {
					const float *xr =
						xp + (zd + b * p->dil[1]) * W;
					if (max)
						row_max(p, xr, y);
					else
						row_sum(p, xr, y);
				}
			}
			int64_t n = sd->n * sh->n, cnt = sd->cnt * sh->cnt;
			for (int64_t ow = 0; ow < OW; ow++) {
				int64_t k = count_pad ? cnt * sw[ow].cnt
						      : n * sw[ow].n;
				if (!max)
					y[ow] = k ? y[ow] / (float)k : 0;
				else if (!n || !sw[ow].n)
					y[ow] = 0;
			}
		}
	}
}

/* Max over each window, and in ind the flat input index of its first
 * maximum (a window wholly in the padding gives 0 and -1). */
static void max_pool(const Pool *p, const float *x, float *y, int64_t *ind,
		     bool colmajor)
{
	int64_t plane = p->in[0] * p->in[1] * p->in[2], at;
	for (int64_t nc = 0; nc < p->nc; nc++) {
		const float *xp = x + nc * plane;
		for (int64_t od = 0; od < p->out[0]; od++)
		for (int64_t oh = 0; oh < p->out[1]; oh++)
		for (int64_t ow = 0; ow < p->out[2]; ow++) {
			*y++ = window_max(p, xp, &p->span[0][od],
					  &p->span[1][oh], &p->span[2][ow], &at);
			*ind++ = at < 0	     ? -1
				 : colmajor ? nc * plane + col_major(p, at)
					    : nc * plane + at;
		}
	}
}

/* The Lp norm (lp = p) of each window. */
static void lp_pool(const Pool *p, const float *x, float *y, double lp)
{
	int64_t plane = p->in[0] * p->in[1] * p->in[2];
	for (int64_t nc = 0; nc < p->nc; nc++) {
		const float *xp = x + nc * plane;
		for (int64_t od = 0; od < p->out[0]; od++)
		for (int64_t oh = 0; oh < p->out[1]; oh++)
		for (int64_t ow = 0; ow < p->out[2]; ow++) {
			float sum = window_sum(p, xp, &p->span[0][od],
					       &p->span[1][oh], &p->span[2][ow],
					       lp);
			*y++ = lp == 2 ? sqrtf(sum) : (float)pow(sum, 1 / lp);
		}
	}
}

/* The pool kind of a window kernel. */
enum { POOL_MAX, POOL_AVG, POOL_LP };

static int run_window_pool(OpCtx *c, int kind)
{
	const Tensor *x = op_const_in(c, 0);
	Value *yv = op_out(c, 0), *iv = op_out(c, 1);
	Pool p;
	if (!x)
		return 0;
	if (pool_setup(c, &x->shape, &yv->shape, &p) < 0)
		return -1;
	Tensor *y = op_new_output_zeroed(c, 0, x->dtype, &yv->shape);
	Tensor *ind = kind == POOL_MAX && iv
			      ? op_new_output_zeroed(c, 1, DT_INT64, &iv->shape)
			      : NULL;
	if (!y || (kind == POOL_MAX && iv && !ind))
		return -1;
	const float *xf = nn_floats(c, x);
	float *yf = nn_out_floats(c, y);
	if (!xf || !yf)
		return -1;
	if (kind == POOL_MAX) {
		int64_t order = attr_int(c->n, "storage_order", 0);
		if (order != 0 && order != 1)
			return op_error(c, "storage_order is %lld, expected 0 "
					"or 1", (long long)order);
		if (ind)
			max_pool(&p, xf, yf, tensor_mut(ind), order == 1);
		else
			pool_rows(&p, xf, yf, true, false);
	} else if (kind == POOL_AVG) {
		pool_rows(&p, xf, yf, false,
			 attr_int(c->n, "count_include_pad", 0) != 0);
	} else {
		const Attr *pf = nn_attr(c->n, "p", ATTR_FLOAT); /* opset 1 */
		double lp = pf ? pf->f : (double)attr_int(c->n, "p", 2);
		if (!(lp > 0))
			return op_error(c, "p must be positive");
		lp_pool(&p, xf, yf, lp);
	}
	nn_out_done(c, 0, y, yf);
	if (ind)
		op_set_const(c, 1, ind);
	return 0;
}

int nn_avg_pool(OpCtx *c, const Shape *x, const Shape *y, const float *xf,
		float *yf, bool count_pad)
{
	Pool p;
	if (pool_setup(c, x, y, &p) < 0)
		return -1;
	pool_rows(&p, xf, yf, false, count_pad);
	return 0;
}

int run_maxpool(OpCtx *c) { return run_window_pool(c, POOL_MAX); }
int run_avgpool(OpCtx *c) { return run_window_pool(c, POOL_AVG); }
int run_lppool(OpCtx *c) { return run_window_pool(c, POOL_LP); }

/* ---- GlobalAveragePool, GlobalMaxPool, GlobalLpPool --------------------- */

/* One plane's value: its mean, max or Lp norm. */
static float global_one(const float *x, int64_t n, const char *op, double lp)
{
	if (op[6] == 'M') {
		float m = n ? x[0] : 0;
		for (int64_t i = 1; i < n; i++)
			m = pool_max_num(m, x[i]);
		return m;
	}
	double s = 0;
	if (op[6] == 'A') {
		for (int64_t i = 0; i < n; i++)
			s += x[i];
		return n ? (float)(s / (double)n) : 0;
	}
	for (int64_t i = 0; i < n; i++)
		s += lp == 2 ? (double)x[i] * x[i] : pow(fabs(x[i]), lp);
	return (float)(lp == 2 ? sqrt(s) : pow(s, 1 / lp));
}

int run_global_pool(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	const char *op = c->n->op_type;
	if (!x)
		return 0;
	const Shape *s = &x->shape;
	Shape ys = *s;
	int64_t plane = 1;
	for (int32_t i = 2; i < s->rank; i++) {
		plane *= s->dims[i];
		ys.dims[i] = 1;
	}
	const Attr *pf = nn_attr(c->n, "p", ATTR_FLOAT); /* opset 1 */
	double lp = pf ? pf->f : (double)attr_int(c->n, "p", 2);
	if (!(lp > 0))
		return op_error(c, "p must be positive");
	Tensor *y = op_new_output_zeroed(c, 0, x->dtype, &ys);
	if (!y)
		return -1;
	const float *xf = nn_floats(c, x);
	float *yf = nn_out_floats(c, y);
	if (!xf || !yf)
		return -1;
	for (int64_t i = 0, nc = s->dims[0] * s->dims[1]; i < nc; i++)
		yf[i] = global_one(xf + i * plane, plane, op, lp);
	nn_out_done(c, 0, y, yf);
	return 0;
}

/* ---- MaxUnpool ---------------------------------------------------------- */

/* The unpooled dims MaxUnpool has without output_shape, into u. */
static int unpool_dims(OpCtx *c, const Shape *x, int64_t *u)
{
	int32_t nsp = x->rank - 2;
	int64_t k[MAX_RANK], s[MAX_RANK], pads[2 * MAX_RANK];
	char why[160];
	if (pool_ints(c->n, "kernel_shape", nsp, 1, k, why, sizeof(why)) < 0 ||
	    pool_ints(c->n, "strides", nsp, 1, s, why, sizeof(why)) < 0 ||
	    pool_ints(c->n, "pads", 2 * nsp, 0, pads, why, sizeof(why)) < 0)
		return op_error(c, "%s", why);
	u[0] = x->dims[0];
	u[1] = x->dims[1];
	for (int32_t i = 0; i < nsp; i++)
		u[2 + i] = (x->dims[2 + i] - 1) * s[i] + k[i] - pads[i] -
			   pads[nsp + i];
	return 0;
}

/* Y (zeros) gets X's values at the indices I, flat indices into the
 * unpooled shape (what MaxPool's input had); an output_shape larger than
 * that pads it at the end of each axis, as ONNX's tests expect. */
int run_max_unpool(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *ind = op_const_in(c, 1);
	Value *yv = op_out(c, 0);
	int64_t u[MAX_RANK], nu = 1;
	if (!x || !ind || (op_in(c, 2) && !op_const_in(c, 2)))
		return 0;
	const Shape *ys = &yv->shape;
	int64_t n = shape_numel(&x->shape);
	if (shape_numel(&ind->shape) != n)
		return op_error(c, "indices have %lld values, X has %lld",
				(long long)shape_numel(&ind->shape),
				(long long)n);
	if (unpool_dims(c, &x->shape, u) < 0)
		return -1;
	for (int32_t i = 0; i < ys->rank; i++)
		nu *= u[i] > 0 ? u[i] : 0;
	Tensor *y = op_new_output_zeroed(c, 0, x->dtype, ys);
	if (!y)
		return -1;
	size_t es = dtype_size(x->dtype);
	const int64_t *iv = ind->data;
	for (int64_t i = 0; i < n; i++) {
		int64_t rest = iv[i], at = 0, step = 1;
		bool ok = rest >= 0 && rest < nu;
		for (int32_t a = ys->rank - 1; ok && a >= 0; a--) {
			int64_t co = rest % u[a];
			rest /= u[a];
			ok = co < ys->dims[a];
			at += co * step;
			step *= ys->dims[a];
		}
		if (!ok)
			return op_error(c, "index %lld at %lld is outside the "
					"unpooled shape or the output",
					(long long)iv[i], (long long)i);
		memcpy((char *)tensor_mut(y) + (size_t)at * es,
		       (const char *)x->data + (size_t)i * es, es);
	}
	op_set_const(c, 0, y);
	return 0;
}

/* ---- MaxRoiPool --------------------------------------------------------- */

/* Bin [lo, hi) of b bins over a roi of size len starting at start,
 * clipped to [0, lim). */
static void roi_bin(int64_t i, double bin, int64_t start, int64_t lim,
		    int64_t *lo, int64_t *hi)
{
	int64_t a = (int64_t)floor((double)i * bin) + start;
	int64_t b = (int64_t)ceil((double)(i + 1) * bin) + start;
	*lo = a < 0 ? 0 : a > lim ? lim : a;
	*hi = b < 0 ? 0 : b > lim ? lim : b;
}

/* Each roi (batch, x1, y1, x2, y2), scaled by spatial_scale and rounded,
 * is split into pooled_h x pooled_w bins; each output is the max of its
 * bin (0 if the bin is empty). */
int run_max_roi_pool(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *r = op_const_in(c, 1);
	if (!x || !r)
		return 0;
	double scale = attr_float(c->n, "spatial_scale", 1);
	int64_t N = x->shape.dims[0], C = x->shape.dims[1];
	int64_t H = x->shape.dims[2], W = x->shape.dims[3];
	int64_t nr = r->shape.dims[0];
	const Shape *ys = &op_out(c, 0)->shape;
	int64_t PH = ys->dims[2], PW = ys->dims[3];
	Tensor *y = op_new_output_zeroed(c, 0, x->dtype, ys);
	if (!y)
		return -1;
	const float *xf = nn_floats(c, x), *rf = nn_floats(c, r);
	float *yf = nn_out_floats(c, y);
	if (!xf || !rf || !yf)
		return -1;
	for (int64_t k = 0; k < nr; k++) {
		const float *roi = rf + k * 5;
		int64_t b = (int64_t)roi[0];
		if (!(roi[0] >= 0 && roi[0] < (float)N))
			return op_error(c, "roi %lld has batch index %g, "
					"expected 0 to %lld", (long long)k,
					roi[0], (long long)N - 1);
		int64_t x1 = (int64_t)round(roi[1] * scale);
		int64_t y1 = (int64_t)round(roi[2] * scale);
		int64_t x2 = (int64_t)round(roi[3] * scale);
		int64_t y2 = (int64_t)round(roi[4] * scale);
		int64_t rh = y2 - y1 + 1 > 1 ? y2 - y1 + 1 : 1;
		int64_t rw = x2 - x1 + 1 > 1 ? x2 - x1 + 1 : 1;
		double bh = (double)rh / (double)PH, bw = (double)rw / (double)PW;
		for (int64_t ch = 0; ch < C; ch++) {
			const float *xp = xf + (b * C + ch) * H * W;
			float *yp = yf + (k * C + ch) * PH * PW;
			for (int64_t ph = 0; ph < PH; ph++) {
				int64_t h0, h1;
				roi_bin(ph, bh, y1, H, &h0, &h1);
				for (int64_t pw = 0; pw < PW; pw++) {
					int64_t w0, w1;
					roi_bin(pw, bw, x1, W, &w0, &w1);
					float m = h1 > h0 && w1 > w0 ? -FLT_MAX : 0;
					for (int64_t i = h0; i < h1; i++)
						for (int64_t j = w0; j < w1; j++)
							m = xp[i * W + j] > m ? xp[i * W + j] : m;
					yp[ph * PW + pw] = m;
				}
			}
		}
	}
	nn_out_done(c, 0, y, yf);
	return 0;
}

/* ---- RoiAlign ----------------------------------------------------------- */

/* A bilinear sample: four plane offsets and their weights. */
typedef struct Tap {
	int64_t pos[4];
	float w[4];
} Tap;

/* The sample of plane H x W at (y, x): all weights 0 outside
 * [-1, H] x [-1, W], else the border-clamped bilinear taps. */
static Tap roi_tap(double y, double x, int64_t H, int64_t W)
{
	Tap t = { { 0, 0, 0, 0 }, { 0, 0, 0, 0 } };
	if (y < -1.0 || y > (double)H || x < -1.0 || x > (double)W)
		return t;
	y = y > 0 ? y : 0;
	x = x > 0 ? x : 0;
	int64_t yl = (int64_t)y, xl = (int64_t)x, yh = yl + 1, xh = xl + 1;
	if (yl >= H - 1) {
		yl = yh = H - 1;
		y = (double)yl;
	}
	if (xl >= W - 1) {
		xl = xh = W - 1;
		x = (double)xl;
	}
	double ly = y - (double)yl, lx = x - (double)xl, hy = 1 - ly, hx = 1 - lx;
	t.pos[0] = yl * W + xl;
	t.pos[1] = yl * W + xh;
	t.pos[2] = yh * W + xl;
	t.pos[3] = yh * W + xh;
	t.w[0] = (float)(hy * hx);
	t.w[1] = (float)(hy * lx);
	t.w[2] = (float)(ly * hx);
	t.w[3] = (float)(ly * lx);
	return t;
}

/* A roi's geometry: start, bin size and sampling grid per axis. */
typedef struct RoiGeom {
	double y0, x0, bh, bw;
	int64_t gh, gw;
} RoiGeom;

static RoiGeom roi_geom(const float *roi, double scale, bool half_pixel,
			int64_t sampling, int64_t PH, int64_t PW)
{
	double off = half_pixel ? 0.5 : 0;
	RoiGeom g;
	g.x0 = roi[0] * scale - off;
	g.y0 = roi[1] * scale - off;
	double rw = roi[2] * scale - off - g.x0, rh = roi[3] * scale - off - g.y0;
	if (!half_pixel) {
		rw = rw > 1 ? rw : 1;
		rh = rh > 1 ? rh : 1;
	}
	g.bh = rh / (double)PH;
	g.bw = rw / (double)PW;
	g.gh = sampling > 0 ? sampling : (int64_t)ceil(rh / (double)PH);
	g.gw = sampling > 0 ? sampling : (int64_t)ceil(rw / (double)PW);
	g.gh = g.gh > 0 ? g.gh : 0;
	g.gw = g.gw > 0 ? g.gw : 0;
	return g;
}

/* The taps of every output cell of a roi, cell by cell. */
static void roi_taps(const RoiGeom *g, int64_t PH, int64_t PW, int64_t H,
		     int64_t W, Tap *t)
{
	for (int64_t ph = 0; ph < PH; ph++)
		for (int64_t pw = 0; pw < PW; pw++)
			for (int64_t iy = 0; iy < g->gh; iy++) {
				double y = g->y0 + (double)ph * g->bh +
					   ((double)iy + 0.5) * g->bh / (double)g->gh;
				for (int64_t ix = 0; ix < g->gw; ix++) {
					double x = g->x0 + (double)pw * g->bw +
						   ((double)ix + 0.5) * g->bw /
							   (double)g->gw;
					*t++ = roi_tap(y, x, H, W);
				}
			}
}

/* One output cell from its n taps: their mean, or (mode max) the max
 * over the samples of the largest weighted corner, as ONNX defines. */
static float roi_cell(const float *xp, const Tap *t, int64_t n, bool max)
{
	float acc = 0;
	for (int64_t i = 0; i < n; i++, t++) {
		float v[4];
		for (int j = 0; j < 4; j++)
			v[j] = t->w[j] * xp[t->pos[j]];
		if (!max) {
			acc += v[0] + v[1] + v[2] + v[3];
			continue;
		}
		float m = v[0];
		for (int j = 1; j < 4; j++)
			m = v[j] > m ? v[j] : m;
		acc = i == 0 || m > acc ? m : acc;
	}
	return max ? acc : acc / (float)(n > 1 ? n : 1);
}

int run_roi_align(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *r = op_const_in(c, 1);
	const Tensor *bi = op_const_in(c, 2);
	if (!x || !r || !bi)
		return 0;
	const char *ctm = attr_str(c->n, "coordinate_transformation_mode",
				   c->opset >= 16 ? "half_pixel"
						  : "output_half_pixel");
	bool max = !strcmp(attr_str(c->n, "mode", "avg"), "max");
	bool half = !strcmp(ctm, "half_pixel");
	double scale = attr_float(c->n, "spatial_scale", 1);
	int64_t sampling = attr_int(c->n, "sampling_ratio", 0);
	if (!half && strcmp(ctm, "output_half_pixel"))
		return op_error(c, "coordinate_transformation_mode is '%s', "
				"expected half_pixel or output_half_pixel", ctm);
	int64_t N = x->shape.dims[0], C = x->shape.dims[1];
	int64_t H = x->shape.dims[2], W = x->shape.dims[3];
	int64_t nr = r->shape.dims[0];
	const Shape *ys = &op_out(c, 0)->shape;
	int64_t PH = ys->dims[2], PW = ys->dims[3], most = 0;
	Tensor *y = op_new_output_zeroed(c, 0, x->dtype, ys);
	if (!y)
		return -1;
	const float *xf = nn_floats(c, x), *rf = nn_floats(c, r);
	float *yf = nn_out_floats(c, y);
	if (!xf || !rf || !yf)
		return -1;
	for (int64_t k = 0; k < nr; k++) {
		RoiGeom g = roi_geom(rf + 4 * k, scale, half, sampling, PH, PW);
		int64_t b = tensor_get_i64(bi, k);
		if (b < 0 || b >= N)
			return op_error(c, "batch_indices[%lld] is %lld, "
					"expected 0 to %lld", (long long)k,
					(long long)b, (long long)N - 1);
		most = g.gh * g.gw > most ? g.gh * g.gw : most;
	}
	Tap *taps = op_scratch_zeroed(c, (size_t)(most * PH * PW) * sizeof(Tap));
	if (!taps)
		return -1;
	for (int64_t k = 0; k < nr; k++) {
		RoiGeom g = roi_geom(rf + 4 * k, scale, half, sampling, PH, PW);
		int64_t b = tensor_get_i64(bi, k), n = g.gh * g.gw;
		roi_taps(&g, PH, PW, H, W, taps);
		for (int64_t ch = 0; ch < C; ch++) {
			const float *xp = xf + (b * C + ch) * H * W;
			float *yp = yf + (k * C + ch) * PH * PW;
			for (int64_t cell = 0; cell < PH * PW; cell++)
				yp[cell] = roi_cell(xp, taps + cell * n, n, max);
		}
	}
	nn_out_done(c, 0, y, yf);
	return 0;
}
