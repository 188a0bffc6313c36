/*
 * compiler/ops/norm.c - normalization: InstanceNormalization,
 * LayerNormalization, LRN, MeanVarianceNormalization, LpNormalization.
 * Each output has the input's shape and dtype; LayerNormalization's
 * optional Mean and InvStdDev keep the dims before 'axis' and have 1 from
 * there on, in the dtype stash_type names (float by default).
 */
#include <math.h>
#include <string.h>

#include "opimpl.h"

/* Input i (if present and of known shape) is [n] where n is known. */
static int check_vec(OpCtx *c, int i, int64_t n, const char *what)
{
	Value *v = op_in(c, i);
	char buf[128];
	if (op_check_rank(c, i, 1, 1) < 0)
		return -1;
	int64_t d = v ? shape_dim(&v->shape, 0) : DIM_UNKNOWN;
	if (d >= 0 && n >= 0 && d != n)
		return op_error(c, "input %d ('%s') has shape %s, expected "
				"[%lld] (%s)", i, v->name,
				shape_str(&v->shape, buf, sizeof(buf)),
				(long long)n, what);
	return 0;
}

/* InstanceNormalization: input [N, C, D1..Dn], scale [C], B [C]. */
int infer_instance_norm(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	if (!x || !op_need_in(c, 1) || !op_need_in(c, 2) ||
	    op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_same_dtype(c, 1, 0) < 0 || op_check_same_dtype(c, 2, 0) < 0 ||
	    op_check_rank(c, 0, 2, MAX_RANK) < 0)
		return -1;
	int64_t ch = shape_dim(&x->shape, 1);
	if (check_vec(c, 1, ch, "channels") < 0 ||
	    check_vec(c, 2, ch, "channels") < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

/* LayerNormalization (opset 17): X, Scale and optional B, both
 * broadcastable to X's dims from axis on. */
int infer_layer_norm(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t stash = attr_int(c->n, "stash_type", DT_FLOAT);
	int32_t axis;
	if (!x || !op_need_in(c, 1) || op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_same_dtype(c, 1, 0) < 0 || op_check_same_dtype(c, 2, 0) < 0)
		return -1;
	if (stash < 0 || stash >= DT_COUNT || !(DTS_FLOAT & DTS(stash)))
		return op_error(c, "stash_type is %lld, expected a float dtype",
				(long long)stash);
	op_set_out(c, 0, x->dtype, &x->shape);
	Shape st = x->shape;
	if (st.rank >= 0) {
		if (op_axis(c, "axis", attr_int(c->n, "axis", -1), st.rank,
			    &axis) < 0)
			return -1;
		Shape tail = shape_of(st.rank - axis, st.dims + axis);
		if (op_broadcast_to(c, 1, &tail) < 0 ||
		    op_broadcast_to(c, 2, &tail) < 0)
			return -1;
		for (int32_t i = axis; i < st.rank; i++)
			st.dims[i] = 1;
	}
	op_set_out(c, 1, (int)stash, &st);
	op_set_out(c, 2, (int)stash, &st);
	return 0;
}

/* LRN: X [N, C, D1..Dk]; size is required and positive. */
int infer_lrn(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	const Attr *size = nn_attr(c->n, "size", ATTR_INT);
	if (!x || op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_rank(c, 0, 2, MAX_RANK) < 0)
		return -1;
	if (!size)
		return op_error(c, "attribute size is required");
	if (size->i < 1)
		return op_error(c, "size is %lld, expected >= 1",
				(long long)size->i);
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

/* MeanVarianceNormalization: axes (default [0, 2, 3]) must be axes of X. */
int infer_mvn(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	const int64_t *axes;
	int32_t n = attr_ints(c->n, "axes", &axes), a;
	bool seen[MAX_RANK] = { false };
	if (!x || op_check_dtype(c, 0, DTS_FLOAT) < 0)
		return -1;
	if (n < 0) {
		static const int64_t dflt[] = { 0, 2, 3 };
		axes = dflt;
		n = 3;
	}
	for (int32_t i = 0; x->shape.rank >= 0 && i < n; i++) {
		if (op_axis(c, "axes value", axes[i], x->shape.rank, &a) < 0)
			return -1;
		if (seen[a])
			return op_error(c, "axis %d is listed twice in axes", a);
		seen[a] = true;
	}
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

/* LpNormalization: axis (default -1) within X's rank, p 1 or 2. */
int infer_lp_norm(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	int64_t p = attr_int(c->n, "p", 2);
	int32_t axis;
	if (!x || op_check_dtype(c, 0, DTS_FLOAT) < 0)
		return -1;
	if (p != 1 && p != 2)
		return op_error(c, "p is %lld, expected 1 or 2", (long long)p);
	if (x->shape.rank >= 0 &&
	    op_axis(c, "axis", attr_int(c->n, "axis", -1), x->shape.rank,
		    &axis) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

/* ---- kernels ------------------------------------------------------------ */

/* The constant inputs 0..n-1 as floats into f[] (absent optional ones
 * NULL); 1 if all the present ones are known, 0 if not, -1 on error. */
static int floats_in(OpCtx *c, int n, const float **f)
{
	for (int i = 0; i < n; i++) {
		f[i] = NULL;
		if (op_in(c, i) && !op_const_in(c, i))
			return 0;
	}
	for (int i = 0; i < n; i++)
		if (op_in(c, i) && !(f[i] = nn_floats(c, op_const_in(c, i))))
			return -1;
	return 1;
}

/* Output i, of its inferred dtype and shape, and its float buffer. */
static Tensor *float_out(OpCtx *c, int i, float **f)
{
	Value *v = op_out(c, i);
	Tensor *t = v ? op_new_output_zeroed(c, i, v->dtype, &v->shape) : NULL;
	*f = t ? nn_out_floats(c, t) : NULL;
	return *f ? t : NULL;
}

/* Mean and population variance of x[0..n). */
static void moments(const float *x, int64_t n, double *mean, double *var)
{
	double s = 0, q = 0;
	for (int64_t i = 0; i < n; i++)
		s += x[i];
	*mean = n ? s / (double)n : 0;
	for (int64_t i = 0; i < n; i++)
		q += (x[i] - *mean) * (x[i] - *mean);
	*var = n ? q / (double)n : 0;
}

/* Mean and population variance of channel k of x, [n, ch, inner]. */
static void channel_moments(const float *x, int64_t n, int64_t ch,
			    int64_t inner, int64_t k, double *mean,
			    double *var)
{
	double s = 0, q = 0, cnt = (double)(n * inner);
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < inner; j++)
			s += x[(i * ch + k) * inner + j];
	*mean = cnt ? s / cnt : 0;
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < inner; j++) {
			double d = x[(i * ch + k) * inner + j] - *mean;
			q += d * d;
		}
	*var = cnt ? q / cnt : 0;
}

/* y = x * a + b over each of nplanes planes of inner values, plane p
 * using a[p % nch], b[p % nch]. */
static void scale_planes(const float *x, float *y, int64_t nplanes,
			 int64_t nch, int64_t inner, const float *a,
			 const float *b)
{
	for (int64_t p = 0; p < nplanes; p++) {
		float aa = a[p % nch], bb = b[p % nch];
		const float *xp = x + p * inner;
		float *yp = y + p * inner;
		for (int64_t i = 0; i < inner; i++)
			yp[i] = xp[i] * aa + bb;
	}
}

void batchnorm_affine(float scale, float bias, double mean, double var,
		      double eps, float *a, float *b)
{
	*a = (float)(scale / sqrt(var + eps));
	*b = (float)(bias - mean * *a);
}

bool batchnorm_training(const Node *n, int64_t opset)
{
	if (opset >= 14)
		return attr_int(n, "training_mode", 0) != 0;
	if (opset < 7)
		return attr_int(n, "is_test", 0) == 0;
	for (int32_t i = 1; i <= 4 && i < n->noutputs; i++)
		if (n->outputs[i] >= 0)
			return true;
	return false;
}

/* BatchNormalization: per channel (with spatial=0 before opset 9, per
 * element of [C, D1..Dn]) y = (x - mean) / sqrt(var + epsilon) * scale
 * + B, with the batch's mean and variance in training mode, which also
 * outputs the running statistics (momentum-weighted) and, before opset
 * 14, the batch's ones. */
int run_batchnorm(OpCtx *c)
{
	const float *in[5];
	int rc = floats_in(c, 5, in);
	if (rc <= 0)
		return rc;
	const Shape *s = &op_const_in(c, 0)->shape;
	bool spatial = c->opset >= 9 || attr_int(c->n, "spatial", 1) != 0;
	double eps = attr_float(c->n, "epsilon", 1e-5f);
	double mom = attr_float(c->n, "momentum", 0.9f);
	int64_t n = s->dims[0], ch = s->dims[1], inner = 1;
	for (int32_t i = 2; i < s->rank; i++)
		inner *= s->dims[i];
	if (!spatial) {
		ch *= inner;
		inner = 1;
	}
	float *a = op_scratch_zeroed(c, 4 * (size_t)ch * sizeof(float));
	float *b = a ? a + ch : NULL, *bm = a ? b + ch : NULL;
	float *bv = a ? bm + ch : NULL, *yf, *st[5] = { 0 };
	Tensor *y = float_out(c, 0, &yf), *ot[5] = { 0 };
	if (!a || !y)
		return -1;
	bool train = batchnorm_training(c->n, c->opset);
	for (int64_t k = 0; k < ch; k++) {
		double m = in[3][k], v = in[4][k];
		if (train)
			channel_moments(in[0], n, ch, inner, k, &m, &v);
		bm[k] = (float)m;
		bv[k] = (float)v;
		batchnorm_affine(in[1][k], in[2][k], m, v, eps, &a[k], &b[k]);
	}
	scale_planes(in[0], yf, n * ch, ch, inner, a, b);
	nn_out_done(c, 0, y, yf);
	for (int i = 1; train && i <= 4; i++) {
		if (!op_out(c, i))
			continue;
		if (!(ot[i] = float_out(c, i, &st[i])))
			return -1;
		for (int64_t k = 0; k < ch; k++) {
			double batch = i % 2 ? bm[k] : bv[k];
			st[i][k] = i <= 2 ? (float)(in[i + 2][k] * mom +
						    batch * (1 - mom))
					  : (float)batch;
		}
		nn_out_done(c, i, ot[i], st[i]);
	}
	return 0;
}

/* InstanceNormalization: each [n, c] plane normalized by its own mean
 * and variance, then scaled by scale[c] and shifted by B[c]. */
int run_instance_norm(OpCtx *c)
{
	const float *in[3];
	int rc = floats_in(c, 3, in);
	if (rc <= 0)
		return rc;
	const Shape *s = &op_const_in(c, 0)->shape;
	double eps = attr_float(c->n, "epsilon", 1e-5f);
	int64_t ch = s->dims[1], planes = s->dims[0] * ch, inner = 1;
	for (int32_t i = 2; i < s->rank; i++)
		inner *= s->dims[i];
	float *a = op_scratch_zeroed(c, 2 * (size_t)planes * sizeof(float)), *yf;
	Tensor *y = float_out(c, 0, &yf);
	if (!a || !y)
		return -1;
	for (int64_t p = 0; p < planes; p++) {
		double m, v;
		moments(in[0] + p * inner, inner, &m, &v);
		a[p] = (float)(in[1][p % ch] / sqrt(v + eps));
		a[planes + p] = (float)(in[2][p % ch] - m * a[p]);
	}
	scale_planes(in[0], yf, planes, planes, inner, a, a + planes);
	nn_out_done(c, 0, y, yf);
	return 0;
}

/* f (floats of shape t) broadcast to the dims tail[0..n) into out[]
 * (f NULL: every value is fill). */
void nn_expand_tail(const float *f, const Shape *t, const int64_t *tail,
			int32_t n, float fill, float *out)
{
	int64_t st[MAX_RANK], idx[MAX_RANK] = { 0 }, total = 1, k = 0;
	int64_t step = 1;
	for (int32_t i = n - 1; f && i >= 0; i--) {
		int32_t ti = i - (n - t->rank);
		int64_t d = ti >= 0 ? t->dims[ti] : 1;
		st[i] = d == 1 ? 0 : step;
		step *= d;
	}
	for (int32_t i = 0; i < n; i++)
		total *= tail[i];
	for (int64_t j = 0; j < total; j++) {
		out[j] = f ? f[k] : fill;
		for (int32_t i = n - 1; f && i >= 0; i--) {
			k += st[i];
			if (++idx[i] < tail[i])
				break;
			k -= st[i] * tail[i];
			idx[i] = 0;
		}
	}
}

/* LayerNormalization: X seen as [rows, cols] split at axis; each row
 * normalized, then scaled and shifted by Scale and B broadcast to the
 * dims from axis on.  Mean and InvStdDev (optional) hold each row's. */
int run_layer_norm(OpCtx *c)
{
	const float *in[3];
	int rc = floats_in(c, 3, in);
	if (rc <= 0)
		return rc;
	const Shape *s = &op_const_in(c, 0)->shape;
	double eps = attr_float(c->n, "epsilon", 1e-5f);
	int32_t axis;
	if (op_axis(c, "axis", attr_int(c->n, "axis", -1), s->rank, &axis) < 0)
		return -1;
	int64_t rows = 1, cols = 1;
	for (int32_t i = 0; i < s->rank; i++)
		*(i < axis ? &rows : &cols) *= s->dims[i];
	float *w = op_scratch_zeroed(c, 2 * (size_t)cols * sizeof(float)), *yf;
	float *mf = NULL, *sf = NULL;
	Tensor *y = float_out(c, 0, &yf), *mt = NULL, *st = NULL;
	if (!w || !y || (op_out(c, 1) && !(mt = float_out(c, 1, &mf))) ||
	    (op_out(c, 2) && !(st = float_out(c, 2, &sf))))
		return -1;
	int32_t nt = s->rank - axis;
	nn_expand_tail(in[1], &op_const_in(c, 1)->shape, s->dims + axis, nt, 1, w);
	nn_expand_tail(in[2], in[2] ? &op_const_in(c, 2)->shape : NULL,
		    s->dims + axis, nt, 0, w + cols);
	for (int64_t r = 0; r < rows; r++) {
		const float *xr = in[0] + r * cols;
		float *yr = yf + r * cols;
		double m, v;
		moments(xr, cols, &m, &v);
		float fm = (float)m, inv = (float)(1 / sqrt(v + eps));
		for (int64_t j = 0; j < cols; j++)
			yr[j] = (xr[j] - fm) * inv * w[j] + w[cols + j];
		if (mf)
			mf[r] = fm;
		if (sf)
			sf[r] = inv;
	}
	nn_out_done(c, 0, y, yf);
	if (mt)
		nn_out_done(c, 1, mt, mf);
	if (st)
		nn_out_done(c, 2, st, sf);
	return 0;
}

/* LRN: y = x / (bias + alpha / size * sum of x^2 over the channels
 * c - floor((size-1)/2) .. c + ceil((size-1)/2))^beta. */
int run_lrn(OpCtx *c)
{
	const float *x;
	int rc = floats_in(c, 1, &x);
	if (rc <= 0)
		return rc;
	const Shape *s = &op_const_in(c, 0)->shape;
	int64_t size = attr_int(c->n, "size", 1), inner = 1;
	double alpha = attr_float(c->n, "alpha", 1e-4f);
	double beta = attr_float(c->n, "beta", 0.75f);
	double bias = attr_float(c->n, "bias", 1.0f);
	int64_t ch = s->dims[1], lo = (size - 1) / 2, hi = size - 1 - lo;
	for (int32_t i = 2; i < s->rank; i++)
		inner *= s->dims[i];
	float *sq = op_scratch_zeroed(c, (size_t)inner * sizeof(float)), *yf;
	Tensor *y = float_out(c, 0, &yf);
	if (!sq || !y)
		return -1;
	for (int64_t p = 0; p < s->dims[0] * ch; p++) {
		int64_t k = p % ch, base = p - k;
		memset(sq, 0, (size_t)inner * sizeof(float));
		for (int64_t j = k - lo; j <= k + hi; j++) {
			if (j < 0 || j >= ch)
				continue;
			const float *xj = x + (base + j) * inner;
			for (int64_t i = 0; i < inner; i++)
				sq[i] += xj[i] * xj[i];
		}
		const float *xp = x + p * inner;
		float *yp = yf + p * inner;
		for (int64_t i = 0; i < inner; i++)
			yp[i] = xp[i] / (float)pow(bias + alpha / (double)size *
							   sq[i], beta);
	}
	nn_out_done(c, 0, y, yf);
	return 0;
}

/* MeanVarianceNormalization: y = (x - mean) / (sqrt(variance) + 1e-9),
 * mean and variance over axes (default 0, 2, 3) for each index of the
 * other axes (its group). */
int run_mvn(OpCtx *c)
{
	const float *x;
	int rc = floats_in(c, 1, &x);
	if (rc <= 0)
		return rc;
	const Shape *s = &op_const_in(c, 0)->shape;
	const int64_t *axes;
	static const int64_t dflt[] = { 0, 2, 3 };
	int32_t na = attr_ints(c->n, "axes", &axes), a;
	bool red[MAX_RANK] = { false };
	if (na < 0) {
		axes = dflt;
		na = 3;
	}
	for (int32_t i = 0; i < na; i++) {
		if (op_axis(c, "axes value", axes[i], s->rank, &a) < 0)
			return -1;
		red[a] = true;
	}
	/* the group of an element: its index over the kept axes */
	int64_t gst[MAX_RANK], ng = 1, n = shape_numel(s);
	for (int32_t i = s->rank - 1; i >= 0; i--) {
		gst[i] = red[i] ? 0 : ng;
		ng *= red[i] ? 1 : s->dims[i];
	}
	int64_t *grp = op_scratch_zeroed(c, (size_t)n * sizeof(int64_t));
	double *sum = op_scratch_zeroed(c, 2 * (size_t)ng * sizeof(double));
	float *yf;
	Tensor *y = float_out(c, 0, &yf);
	if (!grp || !sum || !y)
		return -1;
	int64_t idx[MAX_RANK] = { 0 }, g = 0, per = ng ? n / ng : 0;
	for (int64_t e = 0; e < n; e++) {
		grp[e] = g;
		sum[g] += x[e];
		for (int32_t i = s->rank - 1; i >= 0; i--) {
			g += gst[i];
			if (++idx[i] < s->dims[i])
				break;
			g -= gst[i] * s->dims[i];
			idx[i] = 0;
		}
	}
	for (int64_t k = 0; k < ng; k++)
		sum[k] /= (double)per;
	for (int64_t e = 0; e < n; e++) {
		double d = x[e] - sum[grp[e]];
		sum[ng + grp[e]] += d * d;
	}
	for (int64_t e = 0; e < n; e++)
		yf[e] = (float)((x[e] - sum[grp[e]]) /
				(sqrt(sum[ng + grp[e]] / (double)per) + 1e-9));
	nn_out_done(c, 0, y, yf);
	return 0;
}

/* LpNormalization: x divided by its L1 (p = 1) or L2 norm along axis. */
int run_lp_norm(OpCtx *c)
{
	const float *x;
	int rc = floats_in(c, 1, &x);
	if (rc <= 0)
		return rc;
	const Shape *s = &op_const_in(c, 0)->shape;
	int64_t p = attr_int(c->n, "p", 2), outer = 1, len, inner = 1;
	int32_t axis;
	if (op_axis(c, "axis", attr_int(c->n, "axis", -1), s->rank, &axis) < 0)
		return -1;
	for (int32_t i = 0; i < s->rank; i++)
		if (i != axis)
			*(i < axis ? &outer : &inner) *= s->dims[i];
	len = s->dims[axis];
	float *yf;
	Tensor *y = float_out(c, 0, &yf);
	if (!y)
		return -1;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			const float *xv = x + o * len * inner + i;
			float *yv = yf + o * len * inner + i;
			double norm = 0;
			for (int64_t j = 0; j < len; j++)
				norm += p == 1 ? fabs(xv[j * inner])
					       : (double)xv[j * inner] * xv[j * inner];
			norm = p == 1 ? norm : sqrt(norm);
			for (int64_t j = 0; j < len; j++)
				yv[j * inner] = (float)(xv[j * inner] / norm);
		}
	nn_out_done(c, 0, y, yf);
	return 0;
}
