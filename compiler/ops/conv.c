/*
 * compiler/ops/conv.c - the convolution kernels: Conv, ConvTranspose,
 * ConvInteger, QLinearConv (their shape inference is in nn.c, which also
 * gives their geometry, nn_conv_geom).
 *
 * fp32 runs on the blocked sgemm (sgemm.c): Conv as im2col + sgemm per
 * image and group, with no im2col for 1x1 stride-1 unpadded convs and a
 * loop of its own for 2-D depthwise ones; ConvTranspose as sgemm + col2im.
 * The other dtypes (double, float16, bfloat16) and the integer forms run
 * a reference loop in double, which is exact for the integer
 * sums (below 2^53).
 */
#include <math.h>
#include <string.h>

#include "opimpl.h"

/* Element counts of a geometry's image, column and kernel spaces. */
typedef struct ConvSizes {
	int64_t isz, osz, ksz; /* X spatial, Y spatial, kernel */
	int64_t cg, mg;	       /* channels of X and of Y per group */
} ConvSizes;

static ConvSizes conv_sizes(const ConvGeom *g)
{
	ConvSizes z = { 1, 1, 1, g->cin / g->group, g->cout / g->group };
	for (int32_t d = 0; d < g->nsp; d++) {
		z.isz *= g->in[d];
		z.osz *= g->out[d];
		z.ksz *= g->kernel[d];
	}
	return z;
}

/* The geometry, checked against what the kernels index: channels that
 * split into groups and a weight of the expected size. */
static int geom(OpCtx *c, int xi, int wi, bool transpose, ConvGeom *g)
{
	if (nn_conv_geom(c, xi, wi, transpose, g) < 0)
		return -1;
	const Tensor *w = op_const_in(c, wi);
	ConvSizes z;
	if (g->group < 1 || g->cin % g->group || g->cout % g->group)
		return op_error(c, "channels %lld -> %lld do not split into %lld "
				"groups", (long long)g->cin,
				(long long)g->cout, (long long)g->group);
	z = conv_sizes(g);
	if (shape_numel(&w->shape) != z.cg * z.mg * g->group * z.ksz)
		return op_error(c, "weight has %lld values, expected %lld",
				(long long)shape_numel(&w->shape),
				(long long)(z.cg * z.mg * g->group * z.ksz));
	return 0;
}

/* y[n][m][...] = b[m] (or 0) for fp32 and double outputs. */
static void fill_bias_f32(const ConvGeom *g, int64_t osz, const float *b,
			  float *y)
{
	for (int64_t i = 0; i < g->n * g->cout; i++)
		for (int64_t j = 0; j < osz; j++)
			y[i * osz + j] = b ? b[i % g->cout] : 0;
}

/* ---- fp32 ----------------------------------------------------------------- */

/* 2-D conv with one input channel per group: per output channel and
 * kernel tap, a row-wise multiply-add over the valid output columns. */
static void depthwise_f32(const ConvGeom *g, const ConvSizes *z,
			  const float *x, const float *w, float *y)
{
	int64_t ih = g->in[0], iw = g->in[1], oh = g->out[0], ow = g->out[1];
	int64_t kh = g->kernel[0], kw = g->kernel[1], sw = g->stride[1];
	for (int64_t n = 0; n < g->n; n++) {
		for (int64_t m = 0; m < g->cout; m++) {
			const float *xp = x + (n * g->cin + m / z->mg) * z->isz;
			const float *wp = w + m * kh * kw;
			float *yp = y + (n * g->cout + m) * z->osz;
			for (int64_t ky = 0; ky < kh; ky++) {
				for (int64_t kx = 0; kx < kw; kx++) {
					float wv = wp[ky * kw + kx];
					int64_t off = kx * g->dilation[1] -
						      g->pad[1], lo, hi;
					conv_range(off, sw, iw, ow, &lo, &hi);
					for (int64_t oy = 0; oy < oh; oy++) {
						int64_t iy = oy * g->stride[0] -
							     g->pad[0] +
							     ky * g->dilation[0];
						if (iy < 0 || iy >= ih)
							continue;
						const float *row = xp + iy * iw;
						float *yr = yp + oy * ow;
						for (int64_t ox = lo; ox < hi; ox++)
							yr[ox] += wv *
								  row[ox * sw + off];
					}
				}
			}
		}
	}
}

static bool is_pointwise(const ConvGeom *g)
{
	for (int32_t d = 0; d < g->nsp; d++)
		if (g->kernel[d] != 1 || g->stride[d] != 1 || g->pad[d] ||
		    g->in[d] != g->out[d])
			return false;
	return true;
}

/* Y[n, group gi] = W[gi] (mg x cg*K) * im2col(X[n, gi]) (cg*K x O),
 * added onto the bias (or zeros) fill_bias_f32 writes first. */
static int conv_f32(OpCtx *c, const ConvGeom *g, const float *x,
		    const float *w, const float *b, float *y)
{
	ConvSizes z = conv_sizes(g);
	int64_t kc = z.cg * z.ksz;
	bool pointwise = is_pointwise(g);
	fill_bias_f32(g, z.osz, b, y);
	if (g->nsp == 2 && z.cg == 1 && !pointwise) {
		depthwise_f32(g, &z, x, w, y);
		return 0;
	}
	/* im2col and sgemm's packing write every element they read */
	float *col = pointwise ? NULL
				: op_scratch(c, kc * z.osz * sizeof(float));
	float *pack = op_scratch(c, sgemm_scratch(z.mg, z.osz, kc));
	if ((!pointwise && !col) || !pack)
		return -1;
	for (int64_t n = 0; n < g->n; n++) {
		for (int64_t gi = 0; gi < g->group; gi++) {
			const float *xg = x + (n * g->cin + gi * z.cg) * z.isz;
			if (!pointwise)
				im2col(g, g->in, g->out, z.cg, xg, col);
			sgemm(false, false, z.mg, z.osz, kc, 1,
			      w + gi * z.mg * kc, kc, pointwise ? xg : col,
			      z.osz, 1, y + (n * g->cout + gi * z.mg) * z.osz,
			      z.osz, pack);
		}
	}
	return 0;
}

/* col (mg*K x I) = W[gi]^T * X[n, gi], then added into Y[n, gi]. */
static int convt_f32(OpCtx *c, const ConvGeom *g, const float *x,
		     const float *w, const float *b, float *y)
{
	ConvSizes z = conv_sizes(g);
	int64_t rows = z.mg * z.ksz;
	float *col = op_scratch_zeroed(c, rows * z.isz * sizeof(float));
	float *pack = op_scratch_zeroed(c, sgemm_scratch(rows, z.isz, z.cg));
	if (!col || !pack)
		return -1;
	fill_bias_f32(g, z.osz, b, y);
	for (int64_t n = 0; n < g->n; n++) {
		for (int64_t gi = 0; gi < g->group; gi++) {
			const float *xg = x + (n * g->cin + gi * z.cg) * z.isz;
			sgemm(true, false, rows, z.isz, z.cg, 1,
			      w + gi * z.cg * rows, rows, xg, z.isz, 0, col,
			      z.isz, pack);
			col2im(g, g->out, g->in, z.mg, col,
			       y + (n * g->cout + gi * z.mg) * z.osz);
		}
	}
	return 0;
}

/* ---- reference loops in double ------------------------------------------- */

/* The elements of t minus its zero point zp (NULL: none; one value, or
 * one per block of numel / numel(zp) elements), as doubles in scratch. */
static double *load_f64(OpCtx *c, const Tensor *t, const Tensor *zp)
{
	int64_t n = shape_numel(&t->shape);
	int64_t nz = zp ? shape_numel(&zp->shape) : 0;
	double *d = op_scratch_zeroed(c, n * sizeof(double));
	if (!d)
		return NULL;
	if (nz > 1 && n % nz) {
		op_error(c, "%lld zero points do not divide %lld values",
			 (long long)nz, (long long)n);
		return NULL;
	}
	for (int64_t i = 0; i < n; i++)
		d[i] = tensor_get_f64(t, i) -
		       (nz ? tensor_get_f64(zp, nz > 1 ? i / (n / nz) : 0) : 0);
	return d;
}

/* Index in an image of dims img of the point column position o and
 * kernel offset k meet; -1 if outside. */
static int64_t tap(const ConvGeom *g, const int64_t *img, const int64_t *o,
		   const int64_t *k)
{
	int64_t at = 0;
	for (int32_t d = 0; d < g->nsp; d++) {
		int64_t p = o[d] * g->stride[d] - g->pad[d] + k[d] * g->dilation[d];
		if (p < 0 || p >= img[d])
			return -1;
		at = at * img[d] + p;
	}
	return at;
}

/* y += conv(x, w), every operand in double. */
static void conv_ref(const ConvGeom *g, const double *x, const double *w,
		     double *y)
{
	ConvSizes z = conv_sizes(g);
	int64_t o[MAX_RANK] = { 0 }, k[MAX_RANK] = { 0 };
	for (int64_t n = 0; n < g->n; n++) {
		for (int64_t m = 0; m < g->cout; m++) {
			const double *xg = x + (n * g->cin + m / z.mg * z.cg) *
						       z.isz;
			double *yp = y + (n * g->cout + m) * z.osz;
			for (int64_t of = 0; of < z.osz;
			     of++, tn_next(g->nsp, g->out, o)) {
				double acc = 0;
				for (int64_t kf = 0; kf < z.cg * z.ksz;
				     kf++, tn_next(g->nsp, g->kernel, k)) {
					int64_t at = tap(g, g->in, o, k);
					if (at >= 0)
						acc += xg[kf / z.ksz * z.isz + at] *
						       w[m * z.cg * z.ksz + kf];
				}
				yp[of] += acc;
			}
		}
	}
}

/* y += conv_transpose(x, w), every operand in double. */
static void convt_ref(const ConvGeom *g, const double *x, const double *w,
		      double *y)
{
	ConvSizes z = conv_sizes(g);
	int64_t o[MAX_RANK] = { 0 }, k[MAX_RANK] = { 0 };
	for (int64_t n = 0; n < g->n; n++) {
		for (int64_t ci = 0; ci < g->cin; ci++) {
			const double *xp = x + (n * g->cin + ci) * z.isz;
			int64_t m0 = ci / z.cg * z.mg;
			for (int64_t i = 0; i < z.isz;
			     i++, tn_next(g->nsp, g->in, o)) {
				for (int64_t kf = 0; kf < z.ksz;
				     kf++, tn_next(g->nsp, g->kernel, k)) {
					int64_t at = tap(g, g->out, o, k);
					for (int64_t mm = 0; at >= 0 && mm < z.mg;
					     mm++)
						y[(n * g->cout + m0 + mm) * z.osz +
						  at] += xp[i] *
							 w[(ci * z.mg + mm) *
								   z.ksz +
							   kf];
				}
			}
		}
	}
}

/* Output 0 of a Conv or ConvTranspose in double: Y = bias + op(X, W). */
static double *conv_f64(OpCtx *c, const ConvGeom *g, bool transpose,
			const double *x, const double *w, const Tensor *b)
{
	int64_t osz = conv_sizes(g).osz, ny = g->n * g->cout * osz;
	double *y = op_scratch_zeroed(c, ny * sizeof(double));
	if (!y || !x || !w)
		return NULL;
	for (int64_t i = 0; b && i < ny; i++)
		y[i] = tensor_get_f64(b, i / osz % g->cout);
	(transpose ? convt_ref : conv_ref)(g, x, w, y);
	return y;
}

/* ---- hooks ------------------------------------------------------------------ */

static int run_float_conv(OpCtx *c, bool transpose)
{
	const Tensor *x = op_const_in(c, 0), *w = op_const_in(c, 1);
	const Tensor *b = op_const_in(c, 2);
	ConvGeom g;
	if (!x || !w || (op_in(c, 2) && !b))
		return 0;
	if (geom(c, 0, 1, transpose, &g) < 0)
		return -1;
	Tensor *y = op_new_output(c, 0, x->dtype, &op_out(c, 0)->shape);
	if (!y)
		return -1;
	if (x->dtype == DT_FLOAT) {
		const float *bf = b ? b->data : NULL;
		if ((transpose ? convt_f32 : conv_f32)(c, &g, x->data, w->data,
						       bf, tensor_mut(y)) < 0)
			return -1;
	} else {
		double *yd = conv_f64(c, &g, transpose, load_f64(c, x, NULL),
				      load_f64(c, w, NULL), b);
		if (!yd)
			return -1;
		for (int64_t i = 0; i < shape_numel(&y->shape); i++)
			tensor_set_f64(y, i, yd[i]);
	}
	op_set_const(c, 0, y);
	return 0;
}

int run_conv(OpCtx *c) { return run_float_conv(c, false); }

int run_conv_transpose(OpCtx *c) { return run_float_conv(c, true); }

/* ConvInteger: int32 Y = conv(X - x_zero_point, W - w_zero_point), the
 * W zero point one value or one per output channel. */
int run_conv_integer(OpCtx *c)
{
	if (!op_all_const(c))
		return 0;
	double *yd = conv_integer_of(c, op_const_in(c, 0), op_const_in(c, 2),
				     op_const_in(c, 3));
	return yd ? set_int32_output(c, yd) : -1;
}

double *conv_integer_of(OpCtx *c, const Tensor *x, const Tensor *xz,
			const Tensor *wz)
{
	ConvGeom g;
	if (geom(c, 0, 1, false, &g) < 0)
		return NULL;
	return conv_f64(c, &g, false, load_f64(c, x, xz),
			load_f64(c, op_const_in(c, 1), wz), NULL);
}

int set_int32_output(OpCtx *c, const double *yd)
{
	Tensor *y = op_new_output_zeroed(c, 0, DT_INT32, &op_out(c, 0)->shape);
	if (!y)
		return -1;
	for (int64_t i = 0; i < shape_numel(&y->shape); i++)
		tensor_set_i64(y, i, (int64_t)yd[i]);
	op_set_const(c, 0, y);
	return 0;
}

void q8_store(Tensor *y, int64_t i, double v, int64_t zp)
{
	double lo = y->dtype == DT_UINT8 ? 0 : -128;
	double hi = y->dtype == DT_UINT8 ? 255 : 127;
	double q = isnan(v) ? (double)zp : nearbyint(v) + (double)zp;
	tensor_set_i64(y, i, (int64_t)(q < lo ? lo : q > hi ? hi : q));
}

/* QLinearConv: y = saturate(round((conv(x - x_zp, w - w_zp) + B) *
 * x_scale * w_scale / y_scale) + y_zp), w's scale and zero point one
 * value or one per output channel. */
int run_qlinear_conv(OpCtx *c)
{
	ConvGeom g;
	if (!op_all_const(c))
		return 0;
	if (geom(c, 0, 3, false, &g) < 0)
		return -1;
	const Tensor *xs = op_const_in(c, 1), *ws = op_const_in(c, 4);
	const Tensor *ys = op_const_in(c, 6), *yz = op_const_in(c, 7);
	int64_t nws = shape_numel(&ws->shape), osz = conv_sizes(&g).osz;
	if (nws != 1 && nws != g.cout)
		return op_error(c, "w_scale has %lld values, expected 1 or %lld",
				(long long)nws, (long long)g.cout);
	double *yd = conv_f64(c, &g, false,
			      load_f64(c, op_const_in(c, 0), op_const_in(c, 2)),
			      load_f64(c, op_const_in(c, 3), op_const_in(c, 5)),
			      op_const_in(c, 8));
	Tensor *y = yd ? op_new_output_zeroed(c, 0, yz->dtype, &op_out(c, 0)->shape)
		       : NULL;
	if (!y)
		return -1;
	double sx = tensor_get_f64(xs, 0), sy = tensor_get_f64(ys, 0);
	int64_t zp = tensor_get_i64(yz, 0);
	for (int64_t i = 0; i < shape_numel(&y->shape); i++) {
		int64_t m = i / osz % g.cout;
		float scale = (float)(sx * tensor_get_f64(ws, nws > 1 ? m : 0)) /
			      (float)sy;
		q8_store(y, i, yd[i] * scale, zp);
	}
	op_set_const(c, 0, y);
	return 0;
}
