/*
 * compiler/ops/signal.c - the kernels of the signal ops DFT, STFT and
 * MelWeightMatrix (their infer hooks are in misc.c).
 *
 * Transforms compute in double, as numpy.fft does for the ONNX
 * reference: a radix-2 FFT when the length is a power of two, else the
 * DFT by its definition, O(n^2), over a table of twiddle factors.
 * X[k] = sum x[n] e^(-2 pi i k n / N); the inverse uses e^(+...) and
 * divides by N.
 */
#include <math.h>
#include <string.h>

#include "opimpl.h"

/* A transform of one length: its twiddle factors e^(-2 pi i j / N). */
typedef struct Fft {
	int64_t n;
	bool pow2;
	double *cs, *sn; /* [n] */
	double *tre, *tim; /* [n] scratch for the O(n^2) DFT */
} Fft;

static int fft_init(OpCtx *c, Fft *f, int64_t n)
{
	f->n = n;
	f->pow2 = (n & (n - 1)) == 0;
	f->cs = op_scratch_zeroed(c, (size_t)n * sizeof(double));
	f->sn = op_scratch_zeroed(c, (size_t)n * sizeof(double));
	f->tre = op_scratch_zeroed(c, (size_t)n * sizeof(double));
	f->tim = op_scratch_zeroed(c, (size_t)n * sizeof(double));
	if (!f->cs || !f->sn || !f->tre || !f->tim)
		return -1;
	for (int64_t j = 0; j < n; j++) {
		double a = -2 * M_PI * (double)j / (double)n;
		f->cs[j] = cos(a);
		f->sn[j] = sin(a);
	}
	return 0;
}

/* In-place iterative radix-2 FFT of re/im (n a power of two). */
static void fft_pow2(const Fft *f, double *re, double *im, double sign)
{
	int64_t n = f->n;
	for (int64_t i = 1, j = 0; i < n; i++) { /* bit reversal */
		int64_t bit = n >> 1;
		for (; j & bit; bit >>= 1)
			j ^= bit;
		j |= bit;
		if (i < j) {
			double t = re[i];
			re[i] = re[j], re[j] = t;
			t = im[i], im[i] = im[j], im[j] = t;
		}
	}
	for (int64_t len = 2; len <= n; len <<= 1) {
		int64_t step = n / len;
		for (int64_t i = 0; i < n; i += len)
			for (int64_t k = 0; k < len / 2; k++) {
				double wr = f->cs[k * step];
				double wi = sign * f->sn[k * step];
				double *ar = re + i + k, *ai = im + i + k;
				double *br = ar + len / 2, *bi = ai + len / 2;
				double xr = *br * wr - *bi * wi;
				double xi = *br * wi + *bi * wr;
				*br = *ar - xr, *bi = *ai - xi;
				*ar += xr, *ai += xi;
			}
	}
}

/* Transforms re/im of length f->n in place (inverse: conjugate twiddles,
 * divided by n). */
static void fft_run(const Fft *f, double *re, double *im, bool inverse)
{
	int64_t n = f->n;
	double sign = inverse ? -1 : 1;
	if (f->pow2) {
		fft_pow2(f, re, im, sign);
	} else {
		for (int64_t k = 0; k < n; k++) {
			double sr = 0, si = 0;
			for (int64_t j = 0, t = 0; j < n; j++) {
				double wr = f->cs[t], wi = sign * f->sn[t];
				sr += re[j] * wr - im[j] * wi;
				si += re[j] * wi + im[j] * wr;
				t += k;
				if (t >= n)
					t -= n;
			}
			f->tre[k] = sr, f->tim[k] = si;
		}
		memcpy(re, f->tre, (size_t)n * sizeof(double));
		memcpy(im, f->tim, (size_t)n * sizeof(double));
	}
	if (inverse)
		for (int64_t k = 0; k < n; k++)
			re[k] /= (double)n, im[k] /= (double)n;
}

/* A constant scalar integer input: 1 and *v, 0 if absent or not
 * constant, -1 on error. */
static int scalar_in(OpCtx *c, int i, int64_t *v)
{
	int64_t buf[1];
	int32_t n = 0;
	int rc = op_const_ints(c, i, buf, &n, 1);
	if (rc <= 0)
		return rc;
	if (n != 1)
		return op_error(c, "input %d holds %d values, expected one", i,
				n);
	*v = buf[0];
	return 1;
}

/* DFT of x [..., L, ..., 1 or 2] along axis into y [..., M, ..., 2]:
 * each line is truncated or zero-padded to the dft length N, and its
 * first M outputs kept (M = N, or N / 2 + 1 with onesided). */
int run_dft(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	const Value *yv = op_out(c, 0);
	int64_t axis = c->opset >= 20 ? -2 : attr_int(c->n, "axis", 1), n;
	bool inverse = attr_int(c->n, "inverse", 0) != 0;
	int32_t a;
	Fft f;
	if (!x || !yv || !shape_is_static(&yv->shape))
		return 0;
	if ((op_in(c, 1) && !op_const_in(c, 1)) ||
	    (c->opset >= 20 && op_in(c, 2) && !op_const_in(c, 2)))
		return 0;
	if (c->opset >= 20 && op_in(c, 2) && scalar_in(c, 2, &axis) < 0)
		return -1;
	const Shape *xs = &x->shape, *ys = &yv->shape;
	int32_t r = xs->rank;
	if (op_axis(c, "axis", axis, r, &a) < 0)
		return -1;
	if (a == r - 1)
		return op_error(c, "axis %lld is the real/imaginary axis, "
				"expected a signal axis", (long long)axis);
	int64_t len = xs->dims[a], m = ys->dims[a], cin = xs->dims[r - 1];
	n = len;
	if (op_in(c, 1) && scalar_in(c, 1, &n) < 0)
		return -1;
	if (n < 1 || m > n)
		return op_error(c, "dft_length %lld cannot give %lld outputs",
				(long long)n, (long long)m);
	int64_t outer = 1, inner = 1;
	for (int32_t k = 0; k < a; k++)
		outer *= xs->dims[k];
	for (int32_t k = a + 1; k < r - 1; k++)
		inner *= xs->dims[k];
	Tensor *y = op_new_output_zeroed(c, 0, yv->dtype, ys);
	double *re = op_scratch_zeroed(c, (size_t)n * sizeof(double));
	double *im = op_scratch_zeroed(c, (size_t)n * sizeof(double));
	if (!y || !re || !im || fft_init(c, &f, n) < 0)
		return -1;
	int64_t keep = len < n ? len : n;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			for (int64_t j = 0; j < n; j++) {
				int64_t e = ((o * len + j) * inner + i) * cin;
				re[j] = j < keep ? tensor_get_f64(x, e) : 0;
				im[j] = j < keep && cin == 2
						? tensor_get_f64(x, e + 1) : 0;
			}
			fft_run(&f, re, im, inverse);
			for (int64_t k = 0; k < m; k++) {
				int64_t e = ((o * m + k) * inner + i) * 2;
				tensor_set_f64(y, e, re[k]);
				tensor_set_f64(y, e + 1, im[k]);
			}
		}
	op_set_const(c, 0, y);
	return 0;
}

/* STFT: signal [B, L, 1 or 2] -> [B, frames, bins, 2]; frame t is
 * signal[t * frame_step ...] times the window (if given), transformed
 * with length frame_length and cut to bins. */
int run_stft(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *w = op_const_in(c, 2);
	const Value *yv = op_out(c, 0);
	int64_t step, flen;
	Fft f;
	if (!x || !yv || !shape_is_static(&yv->shape) ||
	    (op_in(c, 2) && !w) || (op_in(c, 3) && !op_const_in(c, 3)))
		return 0;
	if (scalar_in(c, 1, &step) <= 0)
		return op_const_in(c, 1) ? -1 : 0;
	if (op_in(c, 3)) {
		if (scalar_in(c, 3, &flen) < 0)
			return -1;
	} else {
		flen = shape_numel(&w->shape);
	}
	const Shape *ys = &yv->shape;
	int64_t nb = x->shape.dims[0], len = x->shape.dims[1];
	int64_t cin = x->shape.dims[2], frames = ys->dims[1];
	int64_t bins = ys->dims[2];
	if (step < 1 || flen < 1 || bins > flen ||
	    (frames > 0 && (frames - 1) * step + flen > len))
		return op_error(c, "frame_step %lld and frame_length %lld do "
				"not fit the signal", (long long)step,
				(long long)flen);
	if (w && shape_numel(&w->shape) != flen)
		return op_error(c, "window has %lld values, expected %lld",
				(long long)shape_numel(&w->shape),
				(long long)flen);
	Tensor *y = op_new_output_zeroed(c, 0, yv->dtype, ys);
	double *re = op_scratch_zeroed(c, (size_t)flen * sizeof(double));
	double *im = op_scratch_zeroed(c, (size_t)flen * sizeof(double));
	if (!y || !re || !im || fft_init(c, &f, flen) < 0)
		return -1;
	for (int64_t b = 0; b < nb; b++)
		for (int64_t t = 0; t < frames; t++) {
			for (int64_t j = 0; j < flen; j++) {
				int64_t e = (b * len + t * step + j) * cin;
				double wj = w ? tensor_get_f64(w, j) : 1;
				re[j] = tensor_get_f64(x, e) * wj;
				im[j] = cin == 2 ? tensor_get_f64(x, e + 1) * wj
						 : 0;
			}
			fft_run(&f, re, im, false);
			for (int64_t k = 0; k < bins; k++) {
				int64_t e = ((b * frames + t) * bins + k) * 2;
				tensor_set_f64(y, e, re[k]);
				tensor_set_f64(y, e + 1, im[k]);
			}
		}
	op_set_const(c, 0, y);
	return 0;
}

/* MelWeightMatrix as the ONNX reference (and onnxruntime) compute it:
 * num_mel_bins + 2 points evenly spaced on the mel scale (2595
 * log10(1 + hz / 700)) from lower to upper edge, in steps of (high -
 * low) / (num_mel_bins + 2), mapped to spectrogram bins floor((dft_length
 * + 1) hz / sample_rate); filter i rises from point i to i + 1 and falls
 * to i + 2.  The edges go through float32 as the reference does. */
int run_mel_weight_matrix(OpCtx *c)
{
	const Value *yv = op_out(c, 0);
	const Tensor *lo = op_const_in(c, 3), *hi = op_const_in(c, 4);
	int64_t nmel, dlen, rate;
	if (!yv || !lo || !hi || !shape_is_static(&yv->shape))
		return 0;
	int r0 = scalar_in(c, 0, &nmel), r1 = scalar_in(c, 1, &dlen);
	int r2 = scalar_in(c, 2, &rate);
	if (r0 < 0 || r1 < 0 || r2 < 0)
		return -1;
	if (!r0 || !r1 || !r2)
		return 0;
	if (rate < 1)
		return op_error(c, "sample_rate is %lld, expected >= 1",
				(long long)rate);
	int64_t nspec = yv->shape.dims[0];
	if (nmel != yv->shape.dims[1] || dlen / 2 + 1 != nspec)
		return op_error(c, "num_mel_bins %lld and dft_length %lld do "
				"not match the output's shape", (long long)nmel,
				(long long)dlen);
	float lmel = 2595 * log10f(1 + (float)tensor_get_f64(lo, 0) / 700);
	float hmel = 2595 * log10f(1 + (float)tensor_get_f64(hi, 0) / 700);
	float mstep = (hmel - lmel) / (float)(nmel + 2);
	int64_t *pt = op_scratch_zeroed(c, (size_t)(nmel + 2) * sizeof(int64_t));
	Tensor *y = op_new_output_zeroed(c, 0, yv->dtype, &yv->shape);
	if (!pt || !y)
		return -1;
	for (int64_t i = 0; i < nmel + 2; i++) {
		double hz = (double)i * mstep + lmel;
		hz = 700 * (pow(10, hz / 2595) - 1);
		hz = floor((double)(dlen + 1) * hz / (double)rate);
		pt[i] = hz != hz ? -1 : hz < -1e15 ? -1 : hz > 1e15 ? nspec + 1
							       : (int64_t)hz;
	}
	for (int64_t i = 0; i < nmel; i++) {
		int64_t l = pt[i], m = pt[i + 1], h = pt[i + 2];
		if (m == l && m >= 0 && m < nspec)
			tensor_set_f64(y, m * nmel + i, 1);
		for (int64_t j = l > 0 ? l : 0; m > l && j <= m && j < nspec;
		     j++)
			tensor_set_f64(y, j * nmel + i,
				       (double)(j - l) / (double)(m - l));
		for (int64_t j = m > 0 ? m : 0; h > m && j < h && j < nspec;
		     j++)
			tensor_set_f64(y, j * nmel + i,
				       (double)(h - j) / (double)(h - m));
	}
	op_set_const(c, 0, y);
	return 0;
}
