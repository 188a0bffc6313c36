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
