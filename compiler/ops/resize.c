/*
 * compiler/ops/resize.c - Resize, Upsample, GridSample.
 *
 * Resize's inputs by opset: 10 (X, scales); 11 (X, roi, scales, sizes;
 * scales required but may be an empty tensor, meaning "use sizes");
 * 13 (roi and scales optional); 18 adds the attributes axes and
 * keep_aspect_ratio_policy; 19 only adds a coordinate mode.
 *
 * Output size per resized axis, as in the ONNX reference:
 *   scales   out = floor(in * scale), the float32 scale times in computed
 *            in double (numpy's float32 * int64);
 *   sizes    out = size with keep_aspect_ratio_policy "stretch"; with
 *            "not_larger" / "not_smaller" scale = the min / max over the
 *            resized axes of size / in, and out = floor(scale * in + 0.5).
 * Axes not in 'axes' keep their size.  Scales or sizes that are not known
 * constants leave the resized dims unknown, marked data-dependent.
 * Upsample (opsets 7-9; deprecated in 10) is Resize with scales: the
 * attribute 'scales' in opset 7, input 1 from opset 9 (opset 1 had
 * height_scale and width_scale for the last two axes of a 4-D X).
 */
#include <math.h>
#include <string.h>

#include "opimpl.h"

/* out = floor(in * scale) with overflow and sanity checks. */
static int scaled_dim(OpCtx *c, int64_t in, double scale, int32_t axis,
		      int64_t *out)
{
	if (!(scale > 0) || isinf(scale))
		return op_error(c, "scale for axis %d is %g, expected a positive "
				"finite number", axis, scale);
	if (in < 0) {
		*out = DIM_UNKNOWN;
		return 0;
	}
	double v = floor((double)in * scale);
	if (v >= 9.2e18)
		return op_error(c, "axis %d: %lld x scale %g overflows int64",
				axis, (long long)in, scale);
	*out = (int64_t)v;
	return 0;
}

/* Reads a constant float input i (scales) into v[0..*n); 1 if constant,
 * 0 if not, -1 if it holds more than max values. */
static int const_floats(OpCtx *c, int i, double *v, int32_t *n, int32_t max)
{
	const Value *in = op_in(c, i);
	const Tensor *t = op_const_in(c, i);
	if (!t)
		return 0;
	int64_t numel = shape_numel(&t->shape);
	if (t->shape.rank > 1 || numel > max)
		return op_error(c, "input %d ('%s') must be a 1-D tensor of at "
				"most %d values", i, in->name, max);
	for (int64_t k = 0; k < numel; k++)
		v[k] = tensor_get_f64(t, k);
	*n = (int32_t)numel;
	return 1;
}

/* Element count of input i if known (-1 if not, or absent: -2). */
static int64_t input_len(OpCtx *c, int i)
{
	const Value *v = op_in(c, i);
	if (!v)
		return -2;
	return v->shape.rank >= 0 ? shape_numel(&v->shape) : -1;
}

typedef struct Resize {
	int32_t naxes;		/* -1: all axes, count unknown (rank unknown) */
	int32_t axes[MAX_RANK]; /* when naxes >= 0 and axes given */
	bool all;		/* no axes attribute: every axis in order */
} Resize;

/* Shape of Y from X's shape s, given either scales (nsc values) or
 * sizes (nsz values) or neither known (then unknown dims on the resized
 * axes). */
static int resize_out(OpCtx *c, const Shape *s, const Resize *rz,
		      const double *scales, int32_t nsc, const int64_t *sizes,
		      int32_t nsz, const char *policy, Shape *y)
{
	int32_t nv = scales ? nsc : sizes ? nsz : -1;
	int32_t rank = s->rank;
	if (rank < 0 && rz->all && nv >= 0)
		rank = nv; /* one scale or size per axis of X */
	if (rank < 0) {
		*y = shape_unknown();
		return 0;
	}
	int32_t naxes = rz->all ? rank : rz->naxes;
	if (nv >= 0 && nv != naxes)
		return op_error(c, "%s has %d values, expected %d (%s)",
				scales ? "scales" : "sizes", nv, naxes,
				rz->all ? "the rank of X" : "the length of axes");
	y->rank = rank;
	for (int32_t i = 0; i < rank; i++)
		y->dims[i] = s->rank >= 0 ? s->dims[i] : DIM_UNKNOWN;
	double keep = -1;
	if (sizes && strcmp(policy, "stretch")) {
		bool larger = !strcmp(policy, "not_smaller");
		for (int32_t i = 0; i < naxes; i++) {
			int32_t a = rz->all ? i : rz->axes[i];
			if (y->dims[a] < 0) {
				keep = -2; /* not known */
				break;
			}
			if (y->dims[a] == 0)
				return op_error(c, "axis %d is empty: no aspect "
						"ratio to keep", a);
			double r = (double)sizes[i] / (double)y->dims[a];
			if (keep == -1 || (larger ? r > keep : r < keep))
				keep = r;
		}
	}
	for (int32_t i = 0; i < naxes; i++) {
		int32_t a = rz->all ? i : rz->axes[i];
		int64_t in = y->dims[a];
		if (scales) {
			if (scaled_dim(c, in, scales[i], a, &y->dims[a]) < 0)
				return -1;
		} else if (sizes) {
			if (sizes[i] < 0)
				return op_error(c, "sizes[%d] is %lld, expected "
						">= 0", i, (long long)sizes[i]);
			if (keep == -1) {
				y->dims[a] = sizes[i];
			} else if (keep < 0 || in < 0) {
				y->dims[a] = DIM_UNKNOWN;
			} else {
				double v = floor(keep * (double)in + 0.5);
				if (v >= 9.2e18)
					return op_error(c, "axis %d: output size "
							"overflows int64", a);
				y->dims[a] = (int64_t)v;
			}
		} else {
			y->dims[a] = DIM_UNKNOWN;
		}
	}
	return 0;
}

static int resize_attrs(OpCtx *c, int32_t rank, Resize *rz)
{
	const int64_t *ax;
	int32_t n = attr_ints(c->n, "axes", &ax);
	bool seen[MAX_RANK] = { false };
	const char *mode = attr_str(c->n, "mode", "nearest");
	if (strcmp(mode, "nearest") && strcmp(mode, "linear") &&
	    strcmp(mode, "cubic") && strcmp(mode, "bilinear") &&
	    strcmp(mode, "trilinear"))
		return op_error(c, "mode is '%s', expected nearest, linear or "
				"cubic", mode);
	rz->all = n < 0 || c->opset < 18;
	rz->naxes = rz->all ? rank : n;
	if (rz->all)
		return 0;
	if (n > MAX_RANK)
		return op_error(c, "axes has %d values, more than %d", n,
				MAX_RANK);
	for (int32_t i = 0; i < n; i++) {
		if (rank < 0) {
			if (ax[i] < 0)
				return 1; /* cannot place a negative axis */
			if (ax[i] >= MAX_RANK)
				return op_error(c, "axes[%d] is %lld, out of "
						"range", i, (long long)ax[i]);
			rz->axes[i] = (int32_t)ax[i];
			continue;
		}
		if (op_axis(c, "axes value", ax[i], rank, &rz->axes[i]) < 0)
			return -1;
		if (seen[rz->axes[i]])
			return op_error(c, "axis %d is listed twice in axes",
					rz->axes[i]);
		seen[rz->axes[i]] = true;
	}
	return 0;
}

int infer_resize(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int si = c->opset < 11 ? 1 : 2, zi = c->opset < 11 ? -1 : 3;
	const char *policy = attr_str(c->n, "keep_aspect_ratio_policy",
				      "stretch");
	double scales[MAX_RANK];
	int64_t sizes[MAX_RANK];
	int32_t nsc = 0, nsz = 0;
	Resize rz;
	int rc;
	if (!x || (c->opset < 13 && !op_need_in(c, si)) ||
	    op_check_dtype(c, si, DTS_FLOAT) < 0 ||
	    op_check_dtype(c, zi, DTS(DT_INT64)) < 0 ||
	    op_check_rank(c, si, 1, 1) < 0 || op_check_rank(c, zi, 1, 1) < 0)
		return -1;
	if (strcmp(policy, "stretch") && strcmp(policy, "not_larger") &&
	    strcmp(policy, "not_smaller"))
		return op_error(c, "keep_aspect_ratio_policy is '%s', expected "
				"stretch, not_larger or not_smaller", policy);
	if ((rc = resize_attrs(c, x->shape.rank, &rz)) < 0)
		return -1;
	Shape y = shape_unknown();
	if (rc > 0) { /* negative axes on an unknown rank */
		op_set_out(c, 0, x->dtype, &y);
		return 0;
	}
	/* An empty scales (or sizes) tensor counts as absent. */
	int64_t lsc = input_len(c, si), lsz = zi >= 0 ? input_len(c, zi) : -2;
	bool use_sc = lsc != -2 && lsc != 0, use_sz = lsz != -2 && lsz != 0;
	if (use_sc && use_sz && lsc > 0 && lsz > 0)
		return op_error(c, "both scales and sizes are given; expected "
				"one of them");
	if (!use_sc && !use_sz)
		return op_error(c, "neither scales nor sizes is given");
	if (use_sc && lsc > 0)
		use_sz = false; /* sizes of unknown length: must be empty */
	else if (use_sz && lsz > 0)
		use_sc = false;
	if (use_sc && use_sz) { /* both of unknown length */
		y.rank = x->shape.rank;
		for (int32_t i = 0; i < y.rank; i++)
			y.dims[i] = DIM_UNKNOWN;
		op_set_out(c, 0, x->dtype, &y);
		nn_mark_dep(c, 0);
		return 0;
	}
	if (use_sc) {
		if ((rc = const_floats(c, si, scales, &nsc, MAX_RANK)) < 0)
			return -1;
		if (resize_out(c, &x->shape, &rz, rc ? scales : NULL, nsc,
			       NULL, 0, policy, &y) < 0)
			return -1;
	} else {
		if ((rc = op_const_ints(c, zi, sizes, &nsz, MAX_RANK)) < 0)
			return -1;
		if (resize_out(c, &x->shape, &rz, NULL, 0, rc ? sizes : NULL,
			       nsz, policy, &y) < 0)
			return -1;
	}
	op_set_out(c, 0, x->dtype, &y);
	if (!rc)
		nn_mark_dep(c, 0);
	return 0;
}

int infer_upsample(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	const char *mode = attr_str(c->n, "mode", "nearest");
	double scales[MAX_RANK];
	int32_t n = 0;
	int rc = 1;
	Resize rz = { .all = true };
	if (!x)
		return -1;
	if (strcmp(mode, "nearest") && strcmp(mode, "linear") &&
	    strcmp(mode, "bilinear"))
		return op_error(c, "mode is '%s', expected nearest or linear",
				mode);
	if (c->opset >= 9) {
		if (!op_need_in(c, 1) || op_check_dtype(c, 1, DTS_FLOAT) < 0 ||
		    op_check_rank(c, 1, 1, 1) < 0 ||
		    (rc = const_floats(c, 1, scales, &n, MAX_RANK)) < 0)
			return -1;
	} else if (c->opset >= 7) {
		const Attr *a = nn_attr(c->n, "scales", ATTR_FLOATS);
		if (!a)
			return op_error(c, "attribute scales is required");
		if (a->n > MAX_RANK)
			return op_error(c, "scales has %d values, more than %d",
					a->n, MAX_RANK);
		for (n = 0; n < a->n; n++)
			scales[n] = a->floats[n];
	} else {
		const Attr *h = nn_attr(c->n, "height_scale", ATTR_FLOAT);
		const Attr *w = nn_attr(c->n, "width_scale", ATTR_FLOAT);
		if (!h || !w)
			return op_error(c, "attributes height_scale and "
					"width_scale are required");
		if (op_check_rank(c, 0, 4, 4) < 0)
			return -1;
		scales[0] = scales[1] = 1;
		scales[2] = h->f;
		scales[3] = w->f;
		n = 4;
	}
	Shape y;
	if (resize_out(c, &x->shape, &rz, rc ? scales : NULL, n, NULL, 0,
		       "stretch", &y) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &y);
	if (!rc)
		nn_mark_dep(c, 0);
	return 0;
}

/* GridSample: X [N, C, D1..Dr], grid [N, O1..Or, r] -> Y [N, C, O1..Or]
 * (r = 2 up to opset 19; any since 20). */
int infer_grid_sample(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *g = x ? op_need_in(c, 1) : NULL;
	const char *pm = attr_str(c->n, "padding_mode", "zeros");
	char b1[128], b2[128];
	if (!g || op_check_dtype(c, 1, DTS_FLOAT) < 0 ||
	    op_check_rank(c, 0, 3, MAX_RANK) < 0 ||
	    op_check_rank(c, 1, 3, MAX_RANK) < 0)
		return -1;
	if (c->opset < 20 && (op_check_rank(c, 0, 4, 4) < 0 ||
			      op_check_rank(c, 1, 4, 4) < 0))
		return -1;
	if (strcmp(pm, "zeros") && strcmp(pm, "border") &&
	    strcmp(pm, "reflection"))
		return op_error(c, "padding_mode is '%s', expected zeros, "
				"border or reflection", pm);
	const Shape *xs = &x->shape, *gs = &g->shape;
	int32_t rank = xs->rank >= 0 ? xs->rank : gs->rank;
	if (xs->rank >= 0 && gs->rank >= 0 && xs->rank != gs->rank)
		return op_error(c, "X '%s' has rank %d but grid '%s' has rank "
				"%d; expected the same", x->name, xs->rank,
				g->name, gs->rank);
	int64_t xn = shape_dim(xs, 0), gn = shape_dim(gs, 0);
	int64_t last = gs->rank >= 0 ? gs->dims[gs->rank - 1] : DIM_UNKNOWN;
	if ((xn >= 0 && gn >= 0 && xn != gn) ||
	    (last >= 0 && rank >= 0 && last != rank - 2))
		return op_error(c, "grid '%s' has shape %s; expected [N, ..., "
				"%d] for X of shape %s", g->name,
				shape_str(gs, b1, sizeof(b1)), rank - 2,
				shape_str(xs, b2, sizeof(b2)));
	Shape y = { .rank = rank };
	if (rank >= 0) {
		y.dims[0] = xn >= 0 ? xn : gn;
		y.dims[1] = shape_dim(xs, 1);
		for (int32_t i = 2; i < rank; i++)
			y.dims[i] = shape_dim(gs, i - 1);
	}
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* ---- kernels ------------------------------------------------------------ */

/*
 * The kernels follow the ONNX reference implementation (and so the
 * backend tests): the value at output index x of an axis comes from the
 * input coordinate x_ori (coordinate_transformation_mode, computed in
 * double with the scale, not the rounded output size); 'nearest' picks
 * one input index by nearest_mode, 'linear' and 'cubic' weigh the 2 or 4
 * input indexes nearest x_ori (ties prefer the lower), clamped to the
 * edge, and with antialias a filter stretched by 1 / scale when
 * downsampling.  Interpolation is separable, so linear and cubic run one
 * pass per resized axis, last axis first (as the reference nests them:
 * an inner axis outside the tf_crop_and_resize box gives
 * extrapolation_value, which the outer axes then weigh).
 *
 * Linear and cubic compute in float (float16, double and integer X are
 * converted; integers truncate toward zero and saturate).  Nearest copies
 * elements, so it is exact for every dtype.
 */

enum { CT_HALF_PIXEL, CT_HALF_SYMMETRIC, CT_PYTORCH, CT_ALIGN_CORNERS,
       CT_ASYMMETRIC, CT_TF_HALF_NN, CT_TF_CROP };
enum { NM_PREFER_FLOOR, NM_PREFER_CEIL, NM_FLOOR, NM_CEIL, NM_SIMPLE };
enum { IM_NEAREST, IM_LINEAR, IM_CUBIC };

typedef struct Interp {
	int mode, coord, nearest;
	bool exclude_outside, antialias;
	double cubic_a, extrapolation;
	int32_t rank;
	int64_t in[MAX_RANK], out[MAX_RANK];
	double scale[MAX_RANK];
	double roi[2 * MAX_RANK]; /* starts [0, rank), ends [rank, 2 rank) */
} Interp;

/* Per output index of one axis: n input indexes and weights (nearest:
 * n = 1, weight unused), and whether it is outside the crop box. */
typedef struct Taps {
	int32_t n;
	int64_t *idx;
	float *w;
	uint8_t *outside;
} Taps;

static int lookup(OpCtx *c, const char *attr, const char *v,
		  const char *const *names, int count)
{
	for (int i = 0; i < count; i++)
		if (names[i] && !strcmp(v, names[i]))
			return i;
	return op_error(c, "%s '%s' is not supported", attr, v);
}

static int interp_attrs(OpCtx *c, Interp *ip)
{
	static const char *const modes[] = { "nearest", "linear", "cubic" };
	static const char *const coords[] = {
		"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
		"align_corners", "asymmetric", "tf_half_pixel_for_nn",
		"tf_crop_and_resize"
	};
	static const char *const nearest[] = { "round_prefer_floor",
		"round_prefer_ceil", "floor", "ceil" };
	const char *m = attr_str(c->n, "mode", "nearest");
	if (!strcmp(m, "bilinear") || !strcmp(m, "trilinear"))
		m = "linear";
	if ((ip->mode = lookup(c, "mode", m, modes, 3)) < 0)
		return -1;
	ip->cubic_a = attr_float(c->n, "cubic_coeff_a", -0.75f);
	ip->exclude_outside = attr_int(c->n, "exclude_outside", 0) != 0;
	ip->extrapolation = attr_float(c->n, "extrapolation_value", 0);
	ip->antialias = c->n->op == OP_Resize && c->opset >= 18 &&
			attr_int(c->n, "antialias", 0) != 0;
	if (c->n->op != OP_Resize || c->opset < 11) {
		/* Upsample and Resize-10 (onnxruntime's behaviour) */
		ip->coord = CT_ASYMMETRIC;
		ip->nearest = NM_SIMPLE;
		return 0;
	}
	const char *ct = attr_str(c->n, "coordinate_transformation_mode",
				  "half_pixel");
	const char *nm = attr_str(c->n, "nearest_mode", "round_prefer_floor");
	if ((ip->coord = lookup(c, "coordinate_transformation_mode", ct,
				coords, 7)) < 0 ||
	    (ip->nearest = lookup(c, "nearest_mode", nm, nearest, 4)) < 0)
		return -1;
	return 0;
}

/* Input coordinate of output index x on axis a; false if outside the
 * tf_crop_and_resize box.  Same operations, in the same order, as the
 * reference, so ties and integer coordinates come out the same. */
static bool src_coord(const Interp *ip, int32_t a, int64_t xi, double *r)
{
	double in = (double)ip->in[a], s = ip->scale[a], ow = s * in;
	double x = (double)xi, r0, r1, adj;
	switch (ip->coord) {
	case CT_ALIGN_CORNERS:
		*r = ow == 1 ? 0 : x * (in - 1) / (ow - 1);
		return true;
	case CT_ASYMMETRIC:
		*r = x / s;
		return true;
	case CT_TF_HALF_NN:
		*r = (x + 0.5) / s;
		return true;
	case CT_PYTORCH:
		*r = ow == 1 ? -0.5 : (x + 0.5) / s - 0.5;
		return true;
	case CT_HALF_SYMMETRIC:
		adj = floor(ow) / ow;
		*r = in / 2 * (1 - adj) + (x + 0.5) / s - 0.5;
		return true;
	case CT_TF_CROP:
		r0 = ip->roi[a], r1 = ip->roi[ip->rank + a];
		if (ow == 1)
			*r = (r1 - r0) * (in - 1) / 2;
		else
			*r = x * (r1 - r0) * (in - 1) / (ow - 1);
		*r += r0 * (in - 1);
		return !(*r < 0 || *r > in - 1);
	default:
		*r = (x + 0.5) / s - 0.5;
		return true;
	}
}

static int64_t clamp_idx(int64_t i, int64_t n)
{
	return i < 0 ? 0 : i >= n ? n - 1 : i;
}

/* The nearest input index of coordinate v on an axis of n elements. */
static int64_t nearest_idx(const Interp *ip, double v, double scale,
			   int64_t n)
{
	double f = floor(v), ratio = v - f;
	int64_t i = (int64_t)f;
	if (ip->nearest == NM_SIMPLE)
		i = scale < 1 ? (int64_t)ceil(v) : (int64_t)v;
	else if (ratio == 0)
		;
	else if (ip->nearest == NM_CEIL ||
		 (ip->nearest == NM_PREFER_FLOOR && ratio > 0.5) ||
		 (ip->nearest == NM_PREFER_CEIL && ratio >= 0.5))
		i++;
	return clamp_idx(i, n);
}

static double cubic_w(double x, double a)
{
	x = fabs(x);
	if (x <= 1)
		return ((a + 2) * x - (a + 3)) * x * x + 1;
	if (x < 2)
		return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
	return 0;
}

/* Taps per output index: 2 (linear) or 4 (cubic), more with antialias
 * when downsampling (the filter's support grows by 1 / scale). */
static int32_t tap_count(const Interp *ip, double scale)
{
	double s = ip->antialias && scale < 1 ? scale : 1;
	double support = ip->mode == IM_CUBIC ? 2 : 1;
	if (ip->mode == IM_NEAREST)
		return 1;
	if (s == 1)
		return (int32_t)(2 * support);
	return (int32_t)(2 - 2 * (floor(-support / s) + 1));
}

/* Weights w[0..n) of the taps at offsets start .. start + n - 1 from
 * floor(v) (v - 1 for an integer v, so that ratio is in (0, 1]). */
static void tap_weights(const Interp *ip, double ratio, double scale,
			int32_t n, double *w)
{
	double s = ip->antialias && scale < 1 ? scale : 1, sum = 0;
	int32_t start = 1 - n / 2;
	if (s == 1 && ip->mode == IM_LINEAR) {
		w[0] = 1 - ratio, w[1] = ratio;
		return;
	}
	for (int32_t k = 0; k < n; k++) {
		double d = (double)(start + k) - ratio;
		if (ip->mode == IM_LINEAR)
			w[k] = fmax(0, 1 - fabs(d * s));
		else
			w[k] = cubic_w(d * s, ip->cubic_a);
		sum += w[k];
	}
	if (s != 1)
		for (int32_t k = 0; k < n; k++)
			w[k] /= sum;
}

/* The taps of axis a, allocated in scratch. */
static int axis_taps(OpCtx *c, const Interp *ip, int32_t a, Taps *t)
{
	int64_t nout = ip->out[a], nin = ip->in[a];
	t->n = tap_count(ip, ip->scale[a]);
	t->idx = op_scratch_zeroed(c, (size_t)(nout * t->n) * sizeof(int64_t));
	t->w = op_scratch_zeroed(c, (size_t)(nout * t->n) * sizeof(float));
	t->outside = op_scratch_zeroed(c, (size_t)nout);
	double *w = op_scratch_zeroed(c, (size_t)t->n * sizeof(double));
	if (!t->idx || !t->w || !t->outside || !w)
		return -1;
	for (int64_t x = 0; x < nout; x++) {
		int64_t *ix = t->idx + x * t->n;
		float *wx = t->w + x * t->n;
		double v;
		if (!src_coord(ip, a, x, &v) || !(fabs(v) < 1e15)) {
			/* outside the crop box, or a NaN/huge roi */
			t->outside[x] = 1;
			continue;
		}
		if (ip->mode == IM_NEAREST) {
			ix[0] = nearest_idx(ip, v, ip->scale[a], nin);
			wx[0] = 1;
			continue;
		}
		double f = floor(v), ratio = v - f, sum = 0;
		if (ratio == 0)
			f -= 1, ratio = 1;
		int64_t left = (int64_t)f + 1 - t->n / 2;
		tap_weights(ip, ratio, ip->scale[a], t->n, w);
		for (int32_t k = 0; k < t->n; k++) {
			int64_t i = left + k;
			if (ip->exclude_outside && (i < 0 || i >= nin))
				w[k] = 0;
			sum += w[k];
			ix[k] = clamp_idx(i, nin);
		}
		double norm = ip->exclude_outside ? sum : 1;
		for (int32_t k = 0; k < t->n; k++)
			wx[k] = (float)(w[k] / norm);
	}
	return 0;
}

/* True if the taps of axis a copy the input unchanged. */
static bool taps_identity(const Interp *ip, int32_t a, const Taps *t)
{
	if (ip->in[a] != ip->out[a])
		return false;
	for (int64_t x = 0; x < ip->out[a]; x++) {
		if (t->outside[x])
			return false;
		for (int32_t k = 0; k < t->n; k++) {
			float w = t->w[x * t->n + k];
			int64_t i = t->idx[x * t->n + k];
			if (ip->mode == IM_NEAREST ? i != x
			    : w != 0 && (w != 1 || i != x))
				return false;
		}
	}
	return true;
}

/* One linear/cubic pass along an axis: src [outer, nin, inner] -> dst
 * [outer, nout, inner]. */
static void interp_pass(const float *src, float *dst, int64_t outer,
			int64_t nin, int64_t nout, int64_t inner,
			const Taps *t, float extra)
{
	for (int64_t o = 0; o < outer && inner == 1; o++) { /* last axis */
		const float *s = src + o * nin;
		float *d = dst + o * nout;
		for (int64_t x = 0; x < nout; x++) {
			const int64_t *ix = t->idx + x * t->n;
			const float *w = t->w + x * t->n;
			float acc = 0;
			for (int32_t j = 0; j < t->n; j++)
				acc += w[j] * s[ix[j]];
			d[x] = t->outside[x] ? extra : acc;
		}
	}
	for (int64_t o = 0; o < outer && inner > 1; o++) {
		const float *s = src + o * nin * inner;
		float *d = dst + o * nout * inner;
		for (int64_t x = 0; x < nout; x++, d += inner) {
			const int64_t *ix = t->idx + x * t->n;
			const float *w = t->w + x * t->n;
			float f = t->outside[x] ? extra : 0;
			for (int64_t k = 0; k < inner; k++)
				d[k] = f;
			if (t->outside[x])
				continue;
			for (int32_t j = 0; j < t->n; j++) {
				const float *sr = s + ix[j] * inner;
				float wj = w[j];
				if (wj == 0)
					continue;
				for (int64_t k = 0; k < inner; k++)
					d[k] += wj * sr[k];
			}
		}
	}
}

/* v truncated toward zero (as numpy's astype in the reference) and
 * saturated to integer dtype dt's range. */
static double int_saturate(int dt, double v)
{
	static const struct { int dt; double lo, hi; } r[] = {
		{ DT_INT8, -128, 127 }, { DT_UINT8, 0, 255 },
		{ DT_INT16, -32768, 32767 }, { DT_UINT16, 0, 65535 },
		{ DT_INT32, -2147483648.0, 2147483647.0 },
		{ DT_UINT32, 0, 4294967295.0 }, { DT_UINT64, 0, 1.8e19 },
	};
	v = trunc(v);
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (r[i].dt == dt)
			return fmin(r[i].hi, fmax(r[i].lo, v));
	return v;
}

const float *nn_floats_in(OpCtx *c, const Tensor *t)
{
	if (t->dtype == DT_FLOAT)
		return t->data;
	int64_t n = shape_numel(&t->shape);
	float *f = op_scratch_zeroed(c, (size_t)n * sizeof(float));
	if (!f)
		return NULL;
	for (int64_t i = 0; i < n; i++)
		f[i] = (float)tensor_get_f64(t, i);
	return f;
}

float *nn_floats_out(OpCtx *c, Tensor *t)
{
	if (t->dtype == DT_FLOAT)
		return tensor_mut(t);
	return op_scratch_zeroed(c, (size_t)shape_numel(&t->shape) * sizeof(float));
}

void nn_floats_store(Tensor *t, const float *f)
{
	if (t->dtype == DT_FLOAT)
		return;
	int64_t n = shape_numel(&t->shape);
	bool is_int = (DTS_INT & DTS(t->dtype)) != 0;
	for (int64_t i = 0; i < n; i++)
		tensor_set_f64(t, i, is_int ? int_saturate(t->dtype, f[i])
					    : (double)f[i]);
}

static int interp_linear(OpCtx *c, const Interp *ip, const Taps *taps,
			 const Tensor *x, Tensor *y)
{
	int32_t order[MAX_RANK], np = 0;
	int64_t dims[MAX_RANK], numel = 1, most = 0;
	for (int32_t a = ip->rank - 1; a >= 0; a--)
		if (taps[a].n)
			order[np++] = a;
	for (int32_t a = 0; a < ip->rank; a++)
		dims[a] = ip->in[a];
	for (int32_t p = 0; p + 1 < np; p++) { /* intermediate sizes */
		numel = 1;
		dims[order[p]] = ip->out[order[p]];
		for (int32_t a = 0; a < ip->rank; a++)
			numel *= dims[a];
		most = numel > most ? numel : most;
	}
	const float *src = nn_floats_in(c, x);
	float *dst = nn_floats_out(c, y);
	float *buf[2] = { NULL, NULL };
	if (!src || !dst)
		return -1;
	if (np > 1 && (!(buf[0] = op_scratch_zeroed(c, (size_t)most * 4)) ||
		       (np > 2 && !(buf[1] = op_scratch_zeroed(c, (size_t)most * 4)))))
		return -1;
	for (int32_t a = 0; a < ip->rank; a++)
		dims[a] = ip->in[a];
	for (int32_t p = 0; p < np; p++) {
		int32_t a = order[p];
		int64_t outer = 1, inner = 1;
		for (int32_t k = 0; k < a; k++)
			outer *= dims[k];
		for (int32_t k = a + 1; k < ip->rank; k++)
			inner *= dims[k];
		float *to = p == np - 1 ? dst : buf[p % 2];
		interp_pass(src, to, outer, ip->in[a], ip->out[a], inner,
			    &taps[a], (float)ip->extrapolation);
		dims[a] = ip->out[a];
		src = to;
	}
	if (np == 0)
		memcpy(dst, src, (size_t)shape_numel(&y->shape) * 4);
	nn_floats_store(y, dst);
	return 0;
}

/* dst[k] = s[idx[k]] for k < n, elements of es bytes (constant-size
 * copies, which compile to plain moves). */
static void gather_row(uint8_t *dst, const uint8_t *s, const int64_t *idx,
		       int64_t n, size_t es)
{
	switch (es) {
	case 1:
		for (int64_t k = 0; k < n; k++)
			dst[k] = s[idx[k]];
		break;
	case 2:
		for (int64_t k = 0; k < n; k++)
			memcpy(dst + 2 * k, s + 2 * idx[k], 2);
		break;
	case 4:
		for (int64_t k = 0; k < n; k++)
			memcpy(dst + 4 * k, s + 4 * idx[k], 4);
		break;
	case 8:
		for (int64_t k = 0; k < n; k++)
			memcpy(dst + 8 * k, s + 8 * idx[k], 8);
		break;
	default:
		for (int64_t k = 0; k < n; k++)
			memcpy(dst + es * (size_t)k, s + es * (size_t)idx[k],
			       es);
	}
}

/* Nearest: every output element is one input element (or the
 * extrapolation value), copied by its byte size. */
static int interp_nearest(OpCtx *c, const Interp *ip, const Taps *taps,
			  const Tensor *x, Tensor *y)
{
	size_t es = tn_esize(x->dtype);
	int64_t st[MAX_RANK], idx[MAX_RANK] = { 0 }, rows = 1;
	int32_t r = ip->rank, last = r - 1;
	Tensor *ext = op_new_tensor(c, x->dtype, &(Shape){ .rank = 0 });
	if (!ext)
		return -1;
	tensor_set_f64(ext, 0, ip->extrapolation);
	tn_strides(&x->shape, st);
	for (int32_t a = 0; a < last; a++)
		rows *= ip->out[a];
	const uint8_t *src = x->data;
	uint8_t *dst = tensor_mut(y);
	const Taps *tl = &taps[last];
	for (int64_t row = 0; row < rows; row++) {
		int64_t base = 0;
		bool outside = false;
		for (int32_t a = 0; a < last; a++) {
			outside |= taps[a].outside[idx[a]] != 0;
			base += taps[a].idx[idx[a]] * st[a];
		}
		const uint8_t *s = src + (size_t)base * es;
		int64_t nl = ip->out[last];
		if (!outside && ip->coord != CT_TF_CROP) {
			gather_row(dst, s, tl->idx, nl, es);
			dst += (size_t)nl * es;
		} else {
			for (int64_t k = 0; k < nl; k++, dst += es) {
				const uint8_t *e = s + (size_t)tl->idx[k] * es;
				if (outside || tl->outside[k])
					e = ext->data;
				memcpy(dst, e, es);
			}
		}
		tn_next(last, ip->out, idx);
	}
	return 0;
}

/* Computes Y from X given the filled Interp. */
static int interp_run(OpCtx *c, Interp *ip, const Tensor *x)
{
	const Value *yv = op_out(c, 0);
	Taps taps[MAX_RANK];
	Tensor *y = op_new_output_zeroed(c, 0, x->dtype, &yv->shape);
	if (!y)
		return -1;
	if (shape_numel(&yv->shape) == 0 || ip->rank == 0) {
		if (ip->rank == 0)
			memcpy(tensor_mut(y), x->data, x->nbytes);
		op_set_const(c, 0, y);
		return 0;
	}
	for (int32_t a = 0; a < ip->rank; a++) {
		if (ip->in[a] == 0)
			return op_error(c, "axis %d of X is empty but the "
					"output's is %lld", a,
					(long long)ip->out[a]);
		if (axis_taps(c, ip, a, &taps[a]) < 0)
			return -1;
		if (ip->mode != IM_NEAREST && taps_identity(ip, a, &taps[a]))
			taps[a].n = 0; /* no pass on this axis */
	}
	int rc = ip->mode == IM_NEAREST ? interp_nearest(c, ip, taps, x, y)
					: interp_linear(c, ip, taps, x, y);
	if (rc < 0)
		return -1;
	op_set_const(c, 0, y);
	return 0;
}

/* Fills ip's shapes from X and Y; 0 if Y's shape is not static. */
static int interp_shapes(OpCtx *c, const Tensor *x, Interp *ip)
{
	const Shape *ys = &op_out(c, 0)->shape;
	if (!shape_is_static(ys))
		return 0;
	if (ys->rank != x->shape.rank)
		return op_error(c, "output has rank %d, X has %d", ys->rank,
				x->shape.rank);
	ip->rank = ys->rank;
	for (int32_t a = 0; a < ip->rank; a++) {
		ip->in[a] = x->shape.dims[a];
		ip->out[a] = ys->dims[a];
		ip->scale[a] = 1;
		ip->roi[a] = 0;
		ip->roi[ip->rank + a] = 1;
	}
	return 1;
}

/* Input i's contents if present and non-empty: 1; 0 if absent or
 * empty; -1 if present but not constant. */
static int opt_input(OpCtx *c, int i, const Tensor **t)
{
	*t = NULL;
	if (i < 0 || !op_in(c, i))
		return 0;
	if (!(*t = op_const_in(c, i)))
		return -1;
	return shape_numel(&(*t)->shape) > 0;
}

/* The scales of the resized axes, from scales or sizes. */
static int resize_scales(OpCtx *c, Interp *ip, const Resize *rz,
			 const Tensor *sc, const Tensor *sz)
{
	int32_t naxes = rz->all ? ip->rank : rz->naxes;
	const Tensor *t = sc ? sc : sz;
	const char *policy = attr_str(c->n, "keep_aspect_ratio_policy",
				      "stretch");
	double keep = -1;
	if (shape_numel(&t->shape) != naxes)
		return op_error(c, "%s has %lld values, expected %d",
				sc ? "scales" : "sizes",
				(long long)shape_numel(&t->shape), naxes);
	bool larger = !strcmp(policy, "not_smaller");
	if (sz && c->opset >= 18 && strcmp(policy, "stretch"))
		for (int32_t i = 0; i < naxes; i++) {
			int32_t a = rz->all ? i : rz->axes[i];
			if (ip->in[a] == 0)
				continue; /* an empty X: nothing to scale */
			double r = (double)tensor_get_i64(sz, i) /
				   (double)ip->in[a];
			if (keep < 0 || (larger ? r > keep : r < keep))
				keep = r;
		}
	for (int32_t i = 0; i < naxes; i++) {
		int32_t a = rz->all ? i : rz->axes[i];
		if (ip->in[a] == 0)
			continue; /* interp_run: empty output or an error */
		if (sc)
			ip->scale[a] = tensor_get_f64(sc, i);
		else if (keep >= 0)
			ip->scale[a] = keep;
		else
			ip->scale[a] = (double)ip->out[a] / (double)ip->in[a];
		if (!(ip->scale[a] > 0) || isinf(ip->scale[a]))
			return op_error(c, "scale of axis %d is %g, expected a "
					"positive finite number", a,
					ip->scale[a]);
	}
	return 0;
}

/* roi for tf_crop_and_resize: starts then ends, of the resized axes. */
static int resize_roi(OpCtx *c, Interp *ip, const Resize *rz,
		      const Tensor *roi)
{
	int32_t naxes = rz->all ? ip->rank : rz->naxes;
	if (!roi)
		return op_error(c, "tf_crop_and_resize needs the roi input");
	if (shape_numel(&roi->shape) != 2 * naxes)
		return op_error(c, "roi has %lld values, expected %d",
				(long long)shape_numel(&roi->shape), 2 * naxes);
	for (int32_t i = 0; i < naxes; i++) {
		int32_t a = rz->all ? i : rz->axes[i];
		ip->roi[a] = tensor_get_f64(roi, i);
		ip->roi[ip->rank + a] = tensor_get_f64(roi, naxes + i);
	}
	return 0;
}

int run_resize(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *roi = NULL, *sc, *sz = NULL;
	int si = c->opset < 11 ? 1 : 2;
	Interp ip;
	Resize rz;
	int rs, rsz = 0, rr = 0, rc;
	if (!x || !op_out(c, 0))
		return 0;
	if ((rs = opt_input(c, si, &sc)) < 0 ||
	    (c->opset >= 11 && ((rr = opt_input(c, 1, &roi)) < 0 ||
				(rsz = opt_input(c, 3, &sz)) < 0)))
		return 0;
	if ((rc = interp_shapes(c, x, &ip)) <= 0)
		return rc;
	if (interp_attrs(c, &ip) < 0 ||
	    resize_attrs(c, x->shape.rank, &rz) < 0)
		return -1;
	if (!rs && !rsz)
		return op_error(c, "neither scales nor sizes is given");
	if (resize_scales(c, &ip, &rz, rs ? sc : NULL, rs ? NULL : sz) < 0)
		return -1;
	if (ip.coord == CT_TF_CROP &&
	    resize_roi(c, &ip, &rz, rr > 0 ? roi : NULL) < 0)
		return -1;
	return interp_run(c, &ip, x);
}

int run_upsample(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *sc = NULL;
	Interp ip;
	int rc;
	if (!x || !op_out(c, 0))
		return 0;
	if (c->opset >= 9 && !(sc = op_const_in(c, 1)))
		return 0;
	if ((rc = interp_shapes(c, x, &ip)) <= 0)
		return rc;
	if (interp_attrs(c, &ip) < 0)
		return -1;
	if (ip.mode == IM_CUBIC)
		return op_error(c, "mode cubic is not an Upsample mode");
	const Attr *a = nn_attr(c->n, "scales", ATTR_FLOATS);
	int32_t n = sc ? (int32_t)shape_numel(&sc->shape) : a ? a->n : 4;
	if (n != ip.rank)
		return op_error(c, "scales has %d values, X has rank %d", n,
				ip.rank);
	for (int32_t i = 0; i < n; i++) {
		if (sc)
			ip.scale[i] = tensor_get_f64(sc, i);
		else if (a)
			ip.scale[i] = a->floats[i];
		else if (i >= 2)
			ip.scale[i] = attr_float(c->n, i == 2 ? "height_scale"
						 : "width_scale", 1);
		if (!(ip.scale[i] > 0) || isinf(ip.scale[i]))
			return op_error(c, "scale of axis %d is %g, expected a "
					"positive finite number", i,
					ip.scale[i]);
	}
	return interp_run(c, &ip, x);
}

/* ---- GridSample kernel ---------------------------------------------------
 *
 * As PyTorch's grid_sample (which the backend tests come from): grid
 * holds normalized coordinates in [-1, 1], its last dim ordered from X's
 * last axis (x = width) inwards; align_corners maps -1 and 1 to the
 * centres (else the outer edges) of the corner pixels.  Linear and
 * nearest first apply the padding to the coordinate (border clamps,
 * reflection reflects then clamps); cubic (A = -0.75) pads each of its 4
 * taps.  With zeros padding a tap outside X reads 0.  Computes in float.
 */

enum { PAD_ZEROS, PAD_BORDER, PAD_REFLECT };

typedef struct Sampler {
	int mode, pad;
	bool align;
} Sampler;

static double gs_reflect(double v, double twice_lo, double twice_hi)
{
	if (twice_lo == twice_hi)
		return 0;
	double lo = twice_lo / 2, span = (twice_hi - twice_lo) / 2;
	v = fabs(v - lo);
	double extra = fmod(v, span), flips = floor(v / span);
	return fmod(flips, 2) == 0 ? extra + lo : span - extra + lo;
}

static double gs_pad(const Sampler *g, double v, int64_t size)
{
	double n = (double)size;
	if (g->pad == PAD_REFLECT)
		v = g->align ? gs_reflect(v, 0, 2 * (n - 1))
			     : gs_reflect(v, -1, 2 * n - 1);
	if (g->pad != PAD_ZEROS)
		v = fmin(n - 1, fmax(v, 0));
	return v;
}

/* The taps of one spatial axis of size n at normalized coordinate u:
 * input indexes (-1: outside, reads 0) and weights; returns their
 * count. */
static int32_t gs_taps(const Sampler *g, double u, int64_t n, int64_t *ix,
		       double *w)
{
	double v = g->align ? (u + 1) / 2 * (double)(n - 1)
			    : ((u + 1) * (double)n - 1) / 2;
	if (v != v) /* NaN grid: treat as outside */
		v = -2;
	if (g->mode == IM_CUBIC) {
		double f = floor(v), t = v - f;
		for (int32_t k = 0; k < 4; k++) {
			double p = gs_pad(g, f - 1 + k, n);
			ix[k] = p >= 0 && p < (double)n ? (int64_t)p : -1;
			w[k] = cubic_w((double)(k - 1) - t, -0.75);
		}
		return 4;
	}
	v = gs_pad(g, v, n);
	if (g->mode == IM_NEAREST) {
		double r = nearbyint(v);
		ix[0] = r >= 0 && r < (double)n ? (int64_t)r : -1;
		w[0] = 1;
		return 1;
	}
	double f = floor(v), t = v - f;
	for (int32_t k = 0; k < 2; k++) {
		double p = f + k;
		ix[k] = p >= 0 && p < (double)n ? (int64_t)p : -1;
		w[k] = k ? t : 1 - t;
	}
	return 2;
}

static int gs_attrs(OpCtx *c, Sampler *g)
{
	static const char *const modes[] = { "nearest", "linear", "cubic" };
	static const char *const pads[] = { "zeros", "border", "reflection" };
	const char *m = attr_str(c->n, "mode", c->opset < 20 ? "bilinear"
								: "linear");
	if (!strcmp(m, "bilinear"))
		m = "linear";
	else if (!strcmp(m, "bicubic"))
		m = "cubic";
	if ((g->mode = lookup(c, "mode", m, modes, 3)) < 0 ||
	    (g->pad = lookup(c, "padding_mode",
			     attr_str(c->n, "padding_mode", "zeros"), pads,
			     3)) < 0)
		return -1;
	g->align = attr_int(c->n, "align_corners", 0) != 0;
	return 0;
}

/* Output position p of batch n: the (offset, weight) pairs of its taps
 * over every spatial axis into *off / *w; returns their count. */
static int64_t gs_point(const Sampler *g, const float *gp, int32_t r,
			const int64_t *sp, const int64_t *st, int64_t *off,
			float *w)
{
	int64_t ix[MAX_RANK][4], cnt = 1, k = 0;
	double wt[MAX_RANK][4];
	int32_t nt[MAX_RANK], at[MAX_RANK] = { 0 };
	for (int32_t s = 0; s < r; s++) {
		nt[s] = gs_taps(g, gp[r - 1 - s], sp[s], ix[s], wt[s]);
		cnt *= nt[s];
	}
	for (int64_t j = 0; j < cnt; j++) {
		int64_t o = 0;
		double ww = 1;
		for (int32_t s = 0; s < r; s++) {
			int64_t i = ix[s][at[s]];
			ww *= wt[s][at[s]];
			o = i < 0 || o < 0 ? -1 : o + i * st[s];
		}
		if (o >= 0 && ww != 0)
			off[k] = o, w[k++] = (float)ww;
		for (int32_t s = r - 1; s >= 0 && ++at[s] == nt[s]; s--)
			at[s] = 0;
	}
	return k;
}

int run_grid_sample(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *gt = op_const_in(c, 1);
	const Value *yv = op_out(c, 0);
	Sampler g;
	if (!x || !gt || !yv || !shape_is_static(&yv->shape))
		return 0;
	if (gs_attrs(c, &g) < 0)
		return -1;
	const Shape *xs = &x->shape;
	int32_t r = xs->rank - 2;
	int64_t nb = xs->dims[0], nc = xs->dims[1], xsz = 1, ysz = 1;
	int64_t st[MAX_RANK], maxt = 1;
	for (int32_t s = r - 1; s >= 0; s--) {
		st[s] = xsz;
		xsz *= xs->dims[s + 2];
		ysz *= yv->shape.dims[s + 2];
		maxt *= g.mode == IM_CUBIC ? 4 : g.mode == IM_LINEAR ? 2 : 1;
	}
	Tensor *y = op_new_output_zeroed(c, 0, x->dtype, &yv->shape);
	const float *xf = y ? nn_floats_in(c, x) : NULL;
	const float *gf = xf ? nn_floats_in(c, gt) : NULL;
	float *yf = gf ? nn_floats_out(c, y) : NULL;
	int64_t *off = yf ? op_scratch_zeroed(c, (size_t)maxt * 8) : NULL;
	float *w = off ? op_scratch_zeroed(c, (size_t)maxt * 4) : NULL;
	if (!w)
		return -1;
	for (int64_t n = 0; n < nb; n++) {
		for (int64_t p = 0; p < ysz; p++) {
			const float *gp = gf + (n * ysz + p) * r;
			int64_t k = gs_point(&g, gp, r, xs->dims + 2, st, off,
					     w);
			for (int64_t ch = 0; ch < nc; ch++) {
				const float *xc = xf + (n * nc + ch) * xsz;
				float acc = 0;
				for (int64_t j = 0; j < k; j++)
					acc += w[j] * xc[off[j]];
				yf[(n * nc + ch) * ysz + p] = acc;
			}
		}
	}
	nn_floats_store(y, yf);
	op_set_const(c, 0, y);
	return 0;
}
