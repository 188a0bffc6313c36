/*
 * compiler/ops/nn.c - convolution, pooling and normalization: Conv,
 * MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool,
 * BatchNormalization.
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
 * B [M]) and sets *m to M (-1 if unknown). */
static int conv_channels(OpCtx *c, const Value *x, const Value *w,
			 int64_t *m)
{
	int64_t group = attr_int(c->n, "group", 1), per = shape_dim(&w->shape, 1);
	int64_t xc = shape_dim(&x->shape, 1), wc;
	const Value *b = op_in(c, 2);
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

/* Conv: X [N, C, D1..Dn], W [M, C/group, k1..kn], optional B [M] ->
 * Y [N, M, out1..outn].  The rank comes from X, else W, else
 * kernel_shape. */
int infer_conv(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *w = x ? op_need_in(c, 1) : NULL;
	const int64_t *ks;
	int32_t nks = attr_ints(c->n, "kernel_shape", &ks);
	Window win;
	int64_t m;
	if (!w || op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_same_dtype(c, 1, 0) < 0 || op_check_same_dtype(c, 2, 0) < 0 ||
	    op_check_rank(c, 0, 3, MAX_RANK) < 0 ||
	    op_check_rank(c, 1, 3, MAX_RANK) < 0 || op_check_rank(c, 2, 1, 1) < 0)
		return -1;
	const Shape *xs = &x->shape, *ws = &w->shape;
	if (xs->rank >= 0 && ws->rank >= 0 && xs->rank != ws->rank)
		return op_error(c, "input 1 ('%s') has rank %d, but input 0 "
				"('%s') has rank %d; expected the same",
				w->name, ws->rank, x->name, xs->rank);
	if (nks == 0 || nks > MAX_RANK - 2)
		return op_error(c, "kernel_shape has %d values, expected 1 to "
				"%d", nks, MAX_RANK - 2);
	int32_t rank = xs->rank >= 0 ? xs->rank
		       : ws->rank >= 0 ? ws->rank
		       : nks >= 0     ? nks + 2
				      : -1;
	if (nks >= 0 && nks != rank - 2)
		return op_error(c, "kernel_shape has %d values, expected %d",
				nks, rank - 2);
	if (conv_channels(c, x, w, &m) < 0)
		return -1;
	Shape y = { .rank = rank };
	if (rank >= 0) {
		if (window_attrs(c, rank - 2, &win) < 0 ||
		    conv_kernel(c, w, &win) < 0)
			return -1;
		y.dims[0] = shape_dim(xs, 0);
		y.dims[1] = m;
		if (window_dims(c, &win, xs, &y) < 0)
			return -1;
	}
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* MaxPool, AveragePool: kernel_shape is required; Y is
 * [N, C, out1..outn]; MaxPool's optional Indices are int64 of Y's shape. */
static int pool(OpCtx *c, uint32_t dts, bool indices)
{
	Value *x = op_need_in(c, 0);
	const int64_t *ks;
	int32_t nks = attr_ints(c->n, "kernel_shape", &ks);
	Window win;
	if (!x || op_check_dtype(c, 0, dts) < 0)
		return -1;
	if (nks < 0)
		return op_error(c, "attribute kernel_shape is required");
	if (nks < 1 || nks > MAX_RANK - 2)
		return op_error(c, "kernel_shape has %d values, expected 1 to "
				"%d", nks, MAX_RANK - 2);
	if (x->shape.rank >= 0 && x->shape.rank != nks + 2)
		return op_error(c, "input 0 ('%s') has rank %d, but "
				"kernel_shape has %d values; expected rank %d",
				x->name, x->shape.rank, nks, nks + 2);
	if (window_attrs(c, nks, &win) < 0 ||
	    ints_attr(c, "kernel_shape", nks, 1, 1, win.kernel) < 0)
		return -1;
	Shape y = { .rank = nks + 2 };
	y.dims[0] = shape_dim(&x->shape, 0);
	y.dims[1] = shape_dim(&x->shape, 1);
	if (window_dims(c, &win, &x->shape, &y) < 0)
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
