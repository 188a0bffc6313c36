/*
 * compiler/ops/nn.c - convolution and pooling: Conv, ConvInteger,
 * QLinearConv, ConvTranspose, MaxPool, AveragePool, LpPool,
 * GlobalAveragePool, GlobalMaxPool, GlobalLpPool, MaxRoiPool, RoiAlign,
 * MaxUnpool, BatchNormalization; and the helpers the nn family shares
 * (nn_*, declared in opimpl.h).
 *
 * Conv and the pools share the sliding-window arithmetic (Window,
 * window_out): for each spatial axis with input size in, padded size
 * in + pad_begin + pad_end and window extent (kernel - 1) * dilation + 1,
 *   NOTSET, VALID   out = floor((padded - extent) / stride) + 1,
 *                   or ceil(...) + 1 with ceil_mode, where the last window
 *                   must still start inside the input or the left padding;
 *   SAME_UPPER/LOWER out = ceil(in / stride).
 * VALID means no padding.  Explicit pads may not be combined with another
 * auto_pad than NOTSET.
 */
#include <string.h>

#include "opimpl.h"

typedef enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID } AutoPad;

static const char *const auto_pad_names[] = { "NOTSET", "SAME_UPPER",
					      "SAME_LOWER", "VALID" };

/* The sliding window of a conv or pool over nsp spatial axes. */
typedef struct Window {
	int32_t nsp;
	AutoPad auto_pad;
	bool ceil_mode;
	int64_t kernel[MAX_RANK]; /* -1: unknown (a weight dim not known) */
	int64_t stride[MAX_RANK], dilation[MAX_RANK];
	int64_t pads[2 * MAX_RANK]; /* all begins, then all ends */
} Window;

/* Reads ints attribute name into v[0..n): absent, every value is dflt;
 * present, it must have n values, each >= min. */
static int ints_attr(OpCtx *c, const char *name, int32_t n, int64_t dflt,
		     int64_t min, int64_t *v)
{
	const int64_t *a;
	int32_t len = attr_ints(c->n, name, &a);
	if (len < 0) {
		for (int32_t i = 0; i < n; i++)
			v[i] = dflt;
		return 0;
	}
	if (len != n)
		return op_error(c, "%s has %d values, expected %d", name, len,
				n);
	for (int32_t i = 0; i < n; i++) {
		if (a[i] < min)
			return op_error(c, "%s[%d] is %lld, expected >= %lld",
					name, i, (long long)a[i],
					(long long)min);
		v[i] = a[i];
	}
	return 0;
}

/* Reads the window attributes other than kernel_shape. */
static int window_attrs(OpCtx *c, int32_t nsp, Window *w)
{
	const char *ap = attr_str(c->n, "auto_pad", "NOTSET");
	int i;
	w->nsp = nsp;
	for (i = 0; i < (int)ARRAY_SIZE(auto_pad_names); i++)
		if (!strcmp(ap, auto_pad_names[i]))
			break;
	if (i == (int)ARRAY_SIZE(auto_pad_names))
		return op_error(c, "auto_pad is '%s', expected NOTSET, "
				"SAME_UPPER, SAME_LOWER or VALID", ap);
	w->auto_pad = (AutoPad)i;
	w->ceil_mode = attr_int(c->n, "ceil_mode", 0) != 0;
	if (ints_attr(c, "strides", nsp, 1, 1, w->stride) < 0 ||
	    ints_attr(c, "dilations", nsp, 1, 1, w->dilation) < 0 ||
	    ints_attr(c, "pads", 2 * nsp, 0, 0, w->pads) < 0)
		return -1;
	for (i = 0; i < 2 * nsp; i++) {
		if (w->auto_pad != PAD_NOTSET && w->pads[i])
			return op_error(c, "pads cannot be used with "
					"auto_pad=%s", ap);
	}
	return 0;
}

/* Output size of spatial axis i for input size in (-1: unknown). */
static int window_out(OpCtx *c, const Window *w, int32_t i, int64_t in,
		      int64_t *out)
{
	int64_t k = w->kernel[i], s = w->stride[i], pb = w->pads[i];
	int64_t pe = w->pads[w->nsp + i], ext, padded, n, start;
	*out = DIM_UNKNOWN;
	if (in < 0)
		return 0;
	if (w->auto_pad == PAD_SAME_UPPER || w->auto_pad == PAD_SAME_LOWER) {
		*out = in / s + (in % s != 0);
		return 0;
	}
	if (k < 0)
		return 0;
	if (!mul_nonneg_i64(k - 1, w->dilation[i], &ext) ||
	    !add_nonneg_i64(ext, 1, &ext) || !add_nonneg_i64(in, pb, &padded) ||
	    !add_nonneg_i64(padded, pe, &padded))
		return op_error(c, "spatial axis %d: window arithmetic "
				"overflows int64", i);
	if (padded < ext)
		return op_error(c, "spatial axis %d: input size %lld with pads "
				"%lld+%lld is smaller than the window extent "
				"%lld", i, (long long)in, (long long)pb,
				(long long)pe, (long long)ext);
	n = (padded - ext) / s;
	if (w->ceil_mode) {
		n += (padded - ext) % s != 0;
		/* The last window must start inside the input or the left
		 * padding (PyTorch's rule; the ONNX 1.12 shape inference
		 * lacks it and can give one more). */
		if (!mul_nonneg_i64(n, s, &start) || start >= in + pb)
			n--;
	}
	*out = n + 1;
	return 0;
}

/* Fills y->dims[2..] from x's spatial dims. */
static int window_dims(OpCtx *c, const Window *w, const Shape *x, Shape *y)
{
	for (int32_t i = 0; i < w->nsp; i++)
		if (window_out(c, w, i, shape_dim(x, 2 + i), &y->dims[2 + i]) < 0)
			return -1;
	return 0;
}

/* The kernel of a Conv: kernel_shape if given (it must agree with the
 * weight's spatial dims where they are known), else those dims. */
static int conv_kernel(OpCtx *c, const Value *w, Window *win)
{
	if (ints_attr(c, "kernel_shape", win->nsp, -1, 1, win->kernel) < 0)
		return -1;
	for (int32_t i = 0; i < win->nsp; i++) {
		int64_t wd = shape_dim(&w->shape, 2 + i);
		if (win->kernel[i] < 0)
			win->kernel[i] = wd;
		else if (wd >= 0 && wd != win->kernel[i])
			return op_error(c, "kernel_shape[%d] is %lld, but "
					"weight '%s' has %lld",
					i, (long long)win->kernel[i], w->name,
					(long long)wd);
	}
	return 0;
}

/* Checks the channels of a Conv (X [N, C, ...], W [M, C/group, ...],
 * B [M]; bi: B's input index, -1 if the op has none) and sets *m to M
 * (-1 if unknown). */
static int conv_channels(OpCtx *c, const Value *x, const Value *w, int bi,
			 int64_t *m)
{
	int64_t group = attr_int(c->n, "group", 1), per = shape_dim(&w->shape, 1);
	int64_t xc = shape_dim(&x->shape, 1), wc;
	const Value *b = op_in(c, bi);
	int64_t bm = b ? shape_dim(&b->shape, 0) : DIM_UNKNOWN;
	*m = shape_dim(&w->shape, 0);
	if (group < 1)
		return op_error(c, "group is %lld, expected >= 1",
				(long long)group);
	if (op_dim_mul(c, per, group, &wc) < 0)
		return -1;
	if (xc >= 0 && wc >= 0 && xc != wc)
		return op_error(c, "input '%s' has %lld channels, but weight "
				"'%s' expects %lld (%lld per group x group %lld)",
				x->name, (long long)xc, w->name, (long long)wc,
				(long long)per, (long long)group);
	if (*m >= 0 && *m % group)
		return op_error(c, "weight '%s' has %lld output channels, not "
				"a multiple of group %lld",
				w->name, (long long)*m, (long long)group);
	if (bm >= 0 && *m >= 0 && bm != *m)
		return op_error(c, "bias '%s' has %lld values, expected %lld "
				"(output channels)",
				b->name, (long long)bm, (long long)*m);
	if (*m < 0)
		*m = bm;
	return 0;
}

/* The rank of a conv-like op from X (input xi), else W (input wi), else
 * kernel_shape; -1 if none tells.  Checks that they agree. */
static int conv_rank(OpCtx *c, int xi, int wi, int32_t *rank)
{
	const Value *x = op_in(c, xi), *w = op_in(c, wi);
	const int64_t *ks;
	int32_t nks = attr_ints(c->n, "kernel_shape", &ks);
	const Shape *xs = &x->shape, *ws = &w->shape;
	if (op_check_rank(c, xi, 3, MAX_RANK) < 0 ||
	    op_check_rank(c, wi, 3, MAX_RANK) < 0)
		return -1;
	if (xs->rank >= 0 && ws->rank >= 0 && xs->rank != ws->rank)
		return op_error(c, "input %d ('%s') has rank %d, but input %d "
				"('%s') has rank %d; expected the same",
				wi, w->name, ws->rank, xi, x->name, xs->rank);
	if (nks == 0 || nks > MAX_RANK - 2)
		return op_error(c, "kernel_shape has %d values, expected 1 to "
				"%d", nks, MAX_RANK - 2);
	*rank = xs->rank >= 0 ? xs->rank
		: ws->rank >= 0 ? ws->rank
		: nks >= 0     ? nks + 2
			       : -1;
	if (nks >= 0 && nks != *rank - 2)
		return op_error(c, "kernel_shape has %d values, expected %d",
				nks, *rank - 2);
	return 0;
}

/* Conv and its quantized forms: X (input xi) [N, C, D1..Dn], W (input
 * wi) [M, C/group, k1..kn], optional B (input bi) [M] -> Y [N, M,
 * out1..outn] of dtype dt. */
int conv_like(OpCtx *c, int xi, int wi, int bi, int dt)
{
	Value *x = op_in(c, xi), *w = op_in(c, wi);
	Window win;
	int32_t rank;
	int64_t m;
	if (conv_rank(c, xi, wi, &rank) < 0 ||
	    conv_channels(c, x, w, bi, &m) < 0)
		return -1;
	Shape y = { .rank = rank };
	if (rank >= 0) {
		if (window_attrs(c, rank - 2, &win) < 0 ||
		    conv_kernel(c, w, &win) < 0)
			return -1;
		y.dims[0] = shape_dim(&x->shape, 0);
		y.dims[1] = m;
		if (window_dims(c, &win, &x->shape, &y) < 0)
			return -1;
	}
	op_set_out(c, 0, dt, &y);
	return 0;
}

/* Conv: the rank comes from X, else W, else kernel_shape. */
int infer_conv(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *w = x ? op_need_in(c, 1) : NULL;
	if (!w || op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_same_dtype(c, 1, 0) < 0 || op_check_same_dtype(c, 2, 0) < 0 ||
	    op_check_rank(c, 2, 1, 1) < 0)
		return -1;
	return conv_like(c, 0, 1, 2, x->dtype);
}

#define DTS_Q8 (DTS(DT_INT8) | DTS(DT_UINT8))

/* ConvInteger: x, w (u)int8 with optional zero points of their dtypes
 * (x's a scalar, w's a scalar or one per output channel) -> int32. */
int infer_conv_integer(OpCtx *c)
{
	if (!op_need_in(c, 0) || !op_need_in(c, 1) ||
	    op_check_dtype(c, 0, DTS_Q8) < 0 || op_check_dtype(c, 1, DTS_Q8) < 0 ||
	    op_check_same_dtype(c, 2, 0) < 0 || op_check_same_dtype(c, 3, 1) < 0 ||
	    op_check_scalar(c, 2) < 0 || op_check_rank(c, 3, 0, 1) < 0)
		return -1;
	return conv_like(c, 0, 1, -1, DT_INT32);
}

/* QLinearConv: x, x_scale, x_zero_point, w, w_scale, w_zero_point,
 * y_scale, y_zero_point, optional B (int32) -> y of y_zero_point's dtype. */
int infer_qlinear_conv(OpCtx *c)
{
	for (int i = 0; i < 8; i++)
		if (!op_need_in(c, i))
			return -1;
	if (op_check_dtype(c, 0, DTS_Q8) < 0 || op_check_dtype(c, 3, DTS_Q8) < 0 ||
	    op_check_dtype(c, 7, DTS_Q8) < 0 || op_check_same_dtype(c, 2, 0) < 0 ||
	    op_check_same_dtype(c, 5, 3) < 0 ||
	    op_check_dtype(c, 8, DTS(DT_INT32)) < 0 ||
	    op_check_rank(c, 8, 1, 1) < 0)
		return -1;
	return conv_like(c, 0, 3, 8, op_in(c, 7)->dtype);
}

/* ConvTranspose: X [N, C, D1..Dn], W [C, M/group, k1..kn], optional B [M]
 * -> Y [N, M, out1..outn] with, per spatial axis,
 *   output_shape given   out = output_shape[i] (pads are derived from it);
 *   SAME_UPPER/LOWER     out = in * stride;
 *   else                 out = stride * (in - 1) + output_padding
 *                              + (k - 1) * dilation + 1 - pads.
 * output_shape may list the spatial dims only, or all of N, C, D1..Dn. */
int infer_conv_transpose(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *w = x ? op_need_in(c, 1) : NULL;
	const int64_t *os;
	int32_t rank, nos = attr_ints(c->n, "output_shape", &os);
	int64_t group = attr_int(c->n, "group", 1), opad[MAX_RANK];
	Window win;
	if (!w || op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_same_dtype(c, 1, 0) < 0 || op_check_same_dtype(c, 2, 0) < 0 ||
	    op_check_rank(c, 2, 1, 1) < 0 || conv_rank(c, 0, 1, &rank) < 0)
		return -1;
	if (group < 1)
		return op_error(c, "group is %lld, expected >= 1",
				(long long)group);
	int64_t xc = shape_dim(&x->shape, 1), wc = shape_dim(&w->shape, 0), m;
	if (xc >= 0 && wc >= 0 && xc != wc)
		return op_error(c, "input '%s' has %lld channels, but weight "
				"'%s' has %lld (its dim 0)",
				x->name, (long long)xc, w->name, (long long)wc);
	if (wc >= 0 && wc % group)
		return op_error(c, "weight '%s' has %lld input channels, not a "
				"multiple of group %lld",
				w->name, (long long)wc, (long long)group);
	if (op_dim_mul(c, shape_dim(&w->shape, 1), group, &m) < 0)
		return -1;
	const Value *b = op_in(c, 2);
	int64_t bm = b ? shape_dim(&b->shape, 0) : DIM_UNKNOWN;
	if (bm >= 0 && m >= 0 && bm != m)
		return op_error(c, "bias '%s' has %lld values, expected %lld "
				"(output channels)",
				b->name, (long long)bm, (long long)m);
	if (m < 0)
		m = bm;
	Shape y = { .rank = rank };
	if (rank < 0) {
		op_set_out(c, 0, x->dtype, &y);
		return 0;
	}
	int32_t nsp = rank - 2;
	if (window_attrs(c, nsp, &win) < 0 || conv_kernel(c, w, &win) < 0 ||
	    ints_attr(c, "output_padding", nsp, 0, 0, opad) < 0)
		return -1;
	if (nos >= 0 && nos != nsp && nos != rank)
		return op_error(c, "output_shape has %d values, expected %d "
				"(or %d)", nos, nsp, rank);
	y.dims[0] = shape_dim(&x->shape, 0);
	y.dims[1] = m;
	for (int32_t i = 0; i < nsp; i++) {
		int64_t in = shape_dim(&x->shape, 2 + i), s = win.stride[i];
		int64_t k = win.kernel[i], d = win.dilation[i], ext, out;
		if (opad[i] >= s && opad[i] >= d)
			return op_error(c, "output_padding[%d] is %lld, expected "
					"less than the stride (%lld) or the "
					"dilation (%lld)",
					i, (long long)opad[i], (long long)s,
					(long long)d);
		if (nos >= 0) {
			out = os[nos - nsp + i];
			if (out < 0)
				return op_error(c, "output_shape[%d] is %lld, "
						"expected >= 0", nos - nsp + i,
						(long long)out);
		} else if (in < 0) {
			out = DIM_UNKNOWN;
		} else if (win.auto_pad == PAD_SAME_UPPER ||
			   win.auto_pad == PAD_SAME_LOWER) {
			if (op_dim_mul(c, in, s, &out) < 0)
				return -1;
		} else if (k < 0) {
			out = DIM_UNKNOWN;
		} else {
			int64_t pads = 0;
			if (in == 0 || !mul_nonneg_i64(k - 1, d, &ext) ||
			    !add_nonneg_i64(ext, 1, &ext) ||
			    !mul_nonneg_i64(s, in - 1, &out) ||
			    !add_nonneg_i64(out, opad[i], &out) ||
			    !add_nonneg_i64(out, ext, &out) ||
			    !add_nonneg_i64(win.pads[i], win.pads[nsp + i], &pads))
				return op_error(c, "spatial axis %d: input size "
						"%lld gives no valid output size "
						"(zero input or int64 overflow)",
						i, (long long)in);
			if (out < pads)
				return op_error(c, "spatial axis %d: pads %lld+"
						"%lld exceed the full output "
						"size %lld",
						i, (long long)win.pads[i],
						(long long)win.pads[nsp + i],
						(long long)out);
			out -= pads;
		}
		y.dims[2 + i] = out;
	}
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* Floor division (pads derived for ConvTranspose may be negative). */
static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* The begin pad of spatial axis i of a Conv (g->in, g->out known). */
static int64_t conv_pad(const Window *w, const ConvGeom *g, int32_t i)
{
	int64_t ext = (g->kernel[i] - 1) * g->dilation[i] + 1, total;
	switch (w->auto_pad) {
	case PAD_NOTSET: return w->pads[i];
	case PAD_VALID: return 0;
	default:
		total = (g->out[i] - 1) * g->stride[i] + ext - g->in[i];
		total = total > 0 ? total : 0;
		return w->auto_pad == PAD_SAME_UPPER ? total / 2
						     : total - total / 2;
	}
}

/* The begin pad of spatial axis i of a ConvTranspose: given, or derived
 * from output_shape or auto_pad SAME_* as the operator's doc says. */
static int64_t convt_pad(OpCtx *c, const Window *w, const ConvGeom *g,
			 const int64_t *opad, int32_t i)
{
	const int64_t *os;
	int64_t total;
	bool derived = attr_ints(c->n, "output_shape", &os) >= 0 ||
		       w->auto_pad == PAD_SAME_UPPER ||
		       w->auto_pad == PAD_SAME_LOWER;
	if (!derived)
		return w->auto_pad == PAD_VALID ? 0 : w->pads[i];
	total = g->stride[i] * (g->in[i] - 1) + opad[i] +
		(g->kernel[i] - 1) * g->dilation[i] + 1 - g->out[i];
	if (w->auto_pad == PAD_SAME_UPPER)
		return floor_div(total, 2);
	return total - floor_div(total, 2);
}

int nn_conv_geom(OpCtx *c, int xi, int wi, bool transpose, ConvGeom *g)
{
	const Shape *xs = &op_in(c, xi)->shape, *ws = &op_in(c, wi)->shape;
	const Shape *ys = &op_out(c, 0)->shape;
	Window win;
	int64_t opad[MAX_RANK];
	if (xs->rank < 3 || ws->rank != xs->rank || ys->rank != xs->rank)
		return op_error(c, "input, weight and output ranks differ");
	g->nsp = xs->rank - 2;
	g->n = xs->dims[0];
	g->cin = xs->dims[1];
	g->cout = ys->dims[1];
	g->group = attr_int(c->n, "group", 1);
	if (window_attrs(c, g->nsp, &win) < 0 ||
	    conv_kernel(c, op_in(c, wi), &win) < 0 ||
	    ints_attr(c, "output_padding", g->nsp, 0, 0, opad) < 0)
		return -1;
	for (int32_t i = 0; i < g->nsp; i++) {
		g->in[i] = xs->dims[2 + i];
		g->out[i] = ys->dims[2 + i];
		g->kernel[i] = ws->dims[2 + i];
		g->stride[i] = win.stride[i];
		g->dilation[i] = win.dilation[i];
	}
	for (int32_t i = 0; i < g->nsp; i++)
		g->pad[i] = transpose ? convt_pad(c, &win, g, opad, i)
				      : conv_pad(&win, g, i);
	return 0;
}

int nn_pool_dims(OpCtx *c, const Shape *x, Shape *y)
{
	const int64_t *ks;
	int32_t nks = attr_ints(c->n, "kernel_shape", &ks);
	Window win;
	if (nks < 0)
		return op_error(c, "attribute kernel_shape is required");
	if (nks < 1 || nks > MAX_RANK - 2)
		return op_error(c, "kernel_shape has %d values, expected 1 to "
				"%d", nks, MAX_RANK - 2);
	if (x->rank >= 0 && x->rank != nks + 2)
		return op_error(c, "input 0 ('%s') has rank %d, but "
				"kernel_shape has %d values; expected rank %d",
				op_in(c, 0)->name, x->rank, nks, nks + 2);
	if (window_attrs(c, nks, &win) < 0 ||
	    ints_attr(c, "kernel_shape", nks, 1, 1, win.kernel) < 0)
		return -1;
	*y = (Shape){ .rank = nks + 2 };
	y->dims[0] = shape_dim(x, 0);
	y->dims[1] = shape_dim(x, 1);
	return window_dims(c, &win, x, y);
}

/* MaxPool, AveragePool: kernel_shape is required; Y is
 * [N, C, out1..outn]; MaxPool's optional Indices are int64 of Y's shape. */
static int pool(OpCtx *c, uint32_t dts, bool indices)
{
	Value *x = op_need_in(c, 0);
	Shape y;
	if (!x || op_check_dtype(c, 0, dts) < 0 ||
	    nn_pool_dims(c, &x->shape, &y) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &y);
	if (indices)
		op_set_out(c, 1, DT_INT64, &y);
	return 0;
}

int infer_maxpool(OpCtx *c)
{
	return pool(c, DTS_FLOAT | DTS(DT_INT8) | DTS(DT_UINT8), true);
}

int infer_avgpool(OpCtx *c) { return pool(c, DTS_FLOAT, false); }

int infer_lppool(OpCtx *c)
{
	const Attr *pi = nn_attr(c->n, "p", ATTR_INT);
	const Attr *pf = nn_attr(c->n, "p", ATTR_FLOAT); /* opset 1 */
	if ((pi && pi->i < 1) || (pf && !(pf->f > 0)))
		return op_error(c, "p must be positive");
	return pool(c, DTS_FLOAT, false);
}

/* Checks that input i is [n, 4-ish] boxes: rank 2 with dim 1 == width;
 * its dim 0 (the number of boxes) goes to *n if known. */
static int boxes_in(OpCtx *c, int i, int64_t width, int64_t *n)
{
	Value *r = op_in(c, i);
	char buf[128];
	if (op_check_rank(c, i, 2, 2) < 0)
		return -1;
	int64_t d1 = shape_dim(&r->shape, 1), d0 = shape_dim(&r->shape, 0);
	if (d1 >= 0 && d1 != width)
		return op_error(c, "input %d ('%s') has shape %s, expected "
				"[num_rois, %lld]", i, r->name,
				shape_str(&r->shape, buf, sizeof(buf)),
				(long long)width);
	if (d0 >= 0 && *n >= 0 && d0 != *n)
		return op_error(c, "input %d ('%s') has %lld rois, expected "
				"%lld", i, r->name, (long long)d0,
				(long long)*n);
	if (d0 >= 0)
		*n = d0;
	return 0;
}

/* MaxRoiPool: X [N, C, H, W], rois [num_rois, 5] (batch index, x1, y1,
 * x2, y2) -> Y [num_rois, C, pooled_h, pooled_w]. */
int infer_max_roi_pool(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t pooled[2], n = DIM_UNKNOWN;
	if (!x || !op_need_in(c, 1) || op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_same_dtype(c, 1, 0) < 0 || op_check_rank(c, 0, 4, 4) < 0 ||
	    boxes_in(c, 1, 5, &n) < 0)
		return -1;
	if (!nn_attr(c->n, "pooled_shape", ATTR_INTS))
		return op_error(c, "attribute pooled_shape is required");
	if (ints_attr(c, "pooled_shape", 2, 1, 1, pooled) < 0)
		return -1;
	Shape y = shape_of(4, (int64_t[]){ n, shape_dim(&x->shape, 1),
					   pooled[0], pooled[1] });
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* RoiAlign: X [N, C, H, W], rois [num_rois, 4], batch_indices
 * [num_rois] (int64) -> Y [num_rois, C, output_height, output_width]. */
int infer_roi_align(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t n = DIM_UNKNOWN, oh = attr_int(c->n, "output_height", 1);
	int64_t ow = attr_int(c->n, "output_width", 1);
	const char *mode = attr_str(c->n, "mode", "avg");
	if (!x || !op_need_in(c, 1) || !op_need_in(c, 2) ||
	    op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_same_dtype(c, 1, 0) < 0 ||
	    op_check_dtype(c, 2, DTS(DT_INT64) | DTS(DT_INT32)) < 0 ||
	    op_check_rank(c, 0, 4, 4) < 0 || boxes_in(c, 1, 4, &n) < 0 ||
	    op_check_rank(c, 2, 1, 1) < 0)
		return -1;
	int64_t nb = shape_dim(&op_in(c, 2)->shape, 0);
	if (nb >= 0 && n >= 0 && nb != n)
		return op_error(c, "batch_indices has %lld values, but rois has "
				"%lld rows", (long long)nb, (long long)n);
	if (n < 0)
		n = nb;
	if (oh < 1 || ow < 1)
		return op_error(c, "output_height and output_width must be "
				">= 1, not %lld and %lld",
				(long long)oh, (long long)ow);
	if (strcmp(mode, "avg") && strcmp(mode, "max"))
		return op_error(c, "mode is '%s', expected avg or max", mode);
	Shape y = shape_of(4, (int64_t[]){ n, shape_dim(&x->shape, 1), oh, ow });
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* MaxUnpool: X [N, C, D1..Dn] and indices I (int64, X's shape) ->
 * output_shape's values if that input is given, else [N, C, out1..outn]
 * with out = (in - 1) * stride + kernel - pads. */
int infer_max_unpool(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *osv = op_in(c, 2);
	const int64_t *ks;
	int32_t nks = attr_ints(c->n, "kernel_shape", &ks), nos = 0;
	int64_t os[MAX_RANK], stride[MAX_RANK], pads[2 * MAX_RANK];
	char b1[128], b2[128];
	if (!x || !op_need_in(c, 1) || op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_dtype(c, 1, DTS(DT_INT64)) < 0 ||
	    op_check_dtype(c, 2, DTS(DT_INT64)) < 0 ||
	    op_check_rank(c, 2, 1, 1) < 0)
		return -1;
	if (nks < 0)
		return op_error(c, "attribute kernel_shape is required");
	if (nks < 1 || nks > MAX_RANK - 2)
		return op_error(c, "kernel_shape has %d values, expected 1 to "
				"%d", nks, MAX_RANK - 2);
	int32_t rank = nks + 2;
	if (x->shape.rank >= 0 && x->shape.rank != rank)
		return op_error(c, "input 0 ('%s') has rank %d, but "
				"kernel_shape has %d values; expected rank %d",
				x->name, x->shape.rank, nks, rank);
	const Value *iv = op_in(c, 1);
	if (iv->shape.rank >= 0 && x->shape.rank >= 0 &&
	    !nn_shape_compatible(&iv->shape, &x->shape))
		return op_error(c, "indices '%s' have shape %s, expected X's "
				"shape %s", iv->name,
				shape_str(&iv->shape, b1, sizeof(b1)),
				shape_str(&x->shape, b2, sizeof(b2)));
	if (ints_attr(c, "strides", nks, 1, 1, stride) < 0 ||
	    ints_attr(c, "pads", 2 * nks, 0, 0, pads) < 0)
		return -1;
	for (int32_t i = 0; i < nks; i++)
		if (ks[i] < 1)
			return op_error(c, "kernel_shape[%d] is %lld, expected "
					">= 1", i, (long long)ks[i]);
	Shape y = { .rank = rank };
	int rc = osv ? op_const_ints(c, 2, os, &nos, MAX_RANK) : 0;
	if (rc < 0)
		return -1;
	if (osv) {
		int64_t len = shape_dim(&osv->shape, 0);
		if (rc ? nos != rank : len >= 0 && len != rank)
			return op_error(c, "output_shape has %lld values, "
					"expected %d", rc ? (long long)nos
							  : (long long)len,
					rank);
		for (int32_t i = 0; i < rank; i++) {
			y.dims[i] = rc ? os[i] : DIM_UNKNOWN;
			if (rc && os[i] < 0)
				return op_error(c, "output_shape[%d] is %lld, "
						"expected >= 0",
						i, (long long)os[i]);
		}
		op_set_out(c, 0, x->dtype, &y);
		if (!rc)
			nn_mark_dep(c, 0);
		return 0;
	}
	y.dims[0] = shape_dim(&x->shape, 0);
	y.dims[1] = shape_dim(&x->shape, 1);
	for (int32_t i = 0; i < nks; i++) {
		int64_t in = shape_dim(&x->shape, 2 + i), out;
		y.dims[2 + i] = DIM_UNKNOWN;
		if (in < 0)
			continue;
		if (in == 0 || !mul_nonneg_i64(in - 1, stride[i], &out) ||
		    !add_nonneg_i64(out, ks[i], &out))
			return op_error(c, "spatial axis %d: input size %lld "
					"gives no valid output size", i,
					(long long)in);
		if (out < pads[i] || out - pads[i] < pads[nks + i])
			return op_error(c, "spatial axis %d: pads %lld+%lld "
					"exceed the unpooled size %lld", i,
					(long long)pads[i],
					(long long)pads[nks + i], (long long)out);
		y.dims[2 + i] = out - pads[i] - pads[nks + i];
	}
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* ---- helpers shared by the nn family files ------------------------------ */

const Attr *nn_attr(const Node *n, const char *name, int type)
{
	const Attr *a = node_attr(n, name);
	return a && a->type == type ? a : NULL;
}

void nn_mark_dep(OpCtx *c, int i)
{
	Value *v = op_out(c, i);
	if (v)
		v->flags |= VF_DATA_DEP;
}

bool nn_shape_compatible(const Shape *a, const Shape *b)
{
	if (a->rank < 0 || b->rank < 0)
		return true;
	if (a->rank != b->rank)
		return false;
	for (int32_t i = 0; i < a->rank; i++)
		if (a->dims[i] >= 0 && b->dims[i] >= 0 && a->dims[i] != b->dims[i])
			return false;
	return true;
}

/* GlobalAveragePool, GlobalMaxPool: [N, C, D1..Dn] -> [N, C, 1..1]. */
int infer_global_pool(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	if (!x || op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_rank(c, 0, 3, MAX_RANK) < 0)
		return -1;
	Shape y = x->shape;
	for (int32_t i = 2; i < y.rank; i++)
		y.dims[i] = 1;
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* BatchNormalization: Y has X's shape ([N, C, ...]); scale, B, mean and
 * var are [C] (or, with spatial=0 before opset 9, C x D1 x ... x Dn).
 * The optional statistics outputs: before opset 14 mean, var,
 * saved_mean, saved_var of X's dtype; since, running_mean and
 * running_var of mean's dtype, present exactly when training_mode=1. */
int infer_batchnorm(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	char buf[128];
	if (!x || op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_rank(c, 0, 2, MAX_RANK) < 0)
		return -1;
	for (int i = 1; i <= 4; i++) {
		/* Dtype T (X's) for all before opset 14; in 14 scale and B
		 * are T, mean and var another U; since 15 scale and B are
		 * T1, mean and var T2. */
		int like = c->opset < 14 || (c->opset < 15 && i <= 2) ? 0
			   : i <= 2				 ? 1
								 : 3;
		if (!op_need_in(c, i) || op_check_dtype(c, i, DTS_FLOAT) < 0 ||
		    op_check_same_dtype(c, i, like) < 0)
			return -1;
	}
	bool spatial = c->opset >= 9 || attr_int(c->n, "spatial", 1) != 0;
	int64_t ch = shape_dim(&x->shape, 1);
	for (int i = 1; spatial && i <= 4; i++) {
		Value *p = op_in(c, i);
		int64_t d = shape_dim(&p->shape, 0);
		if (op_check_rank(c, i, 1, 1) < 0)
			return -1;
		if (d >= 0 && ch >= 0 && d != ch)
			return op_error(c, "input %d ('%s') has shape %s, "
					"expected [%lld] (channels)",
					i, p->name,
					shape_str(&p->shape, buf, sizeof(buf)),
					(long long)ch);
	}
	Shape stats = op_in(c, 3)->shape;
	if (spatial) {
		stats.rank = 1;
		stats.dims[0] = ch >= 0 ? ch : shape_dim(&op_in(c, 3)->shape, 0);
	}
	op_set_out(c, 0, x->dtype, &x->shape);
	if (c->opset >= 14) {
		bool training = attr_int(c->n, "training_mode", 0) != 0;
		bool extra = op_out(c, 1) || op_out(c, 2);
		if (training && !(op_out(c, 1) && op_out(c, 2)))
			return op_error(c, "training_mode=1 needs the outputs "
					"running_mean and running_var");
		if (!training && extra)
			return op_error(c, "outputs running_mean and "
					"running_var need training_mode=1");
		op_set_out(c, 1, op_in(c, 3)->dtype, &stats);
		op_set_out(c, 2, op_in(c, 3)->dtype, &stats);
		return 0;
	}
	for (int i = 1; i <= 4; i++)
		op_set_out(c, i, x->dtype, &stats);
	return 0;
}
