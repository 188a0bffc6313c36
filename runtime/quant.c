/*
 * runtime/quant.c - MatMulInteger, ConvInteger, QLinearMatMul,
 * QLinearConv and the linear (de)quantizations as fast paths
 * (runtime/quant.h).
 *
 * The integer products.  Both ops are one product
 *   Y[m][n] = sum_k (A[m][k] - za) (B[k][n] - zb)
 * of 8-bit operands (a convolution's A is W, its B the im2col of X), the
 * reference kernels computing it in double, exactly.  oneDNN's
 * dnnl_gemm_u8s8s32 computes A (B - bo) for uint8 A and int8 B with one
 * bo in int32; the other signs are moved there exactly, since a - z =
 * (a + 128) - (z + 128):
 *   - int8 A becomes uint8 A + 128 (a copy per run; constant W once) and
 *     its zero point z + 128, which is in 0..255;
 *   - uint8 B becomes int8 B - 128 (constant B once) and its zero point
 *     z - 128, which is in -128..127, B's offset bo;
 *   - A's zero point za is taken away after the product, as za times
 *     B's column sums less bo (summed once for a constant B): oneDNN's
 *     own A offset sums B's columns on every call in plain code;
 *   - per-column zero points of B (per-channel of W) cannot be one
 *     offset: the product runs with bo 0 and each column n then loses
 *     z'[n] * sum_k (A[m][k] - za), the row's sum, computed here.
 * Every term is an integer; the sums wrap in 32 bits as the reference's
 * conversion of its double to int32 does, and are exact when the result
 * fits int32 (|Y| <= 255 * 255 * K, K < 33000).  oneDNN's GEMM is exact
 * only where it multiplies with AVX512-VNNI (vpdpbusd adds four u8 x s8
 * products into an int32 without saturating; the pre-VNNI vpmaddubsw
 * saturates a pair's sum at int16, 2 * 255 * 127 > 32767), so it runs
 * only when oneDNN's effective ISA has VNNI; elsewhere a plain-C loop
 * computes the same product.  dnnl_gemm_u8s8s32 rather than a matmul
 * primitive: it takes the run-time offsets (the zero point of A comes
 * from a DynamicQuantizeLinear in the same run), which oneDNN 2.6's
 * primitives give only for the source, and no weight layout to keep.
 *
 * QLinearMatMul and QLinearConv compute the same sums (at most 33025
 * terms, so that they fit int32 unwrapped as the reference's double
 * does) into a buffer and requantize them as the reference does: the
 * scales' product over Y's scale in float, times the sum (plus the bias)
 * in double, rounded half to even, Y's zero point added, saturated.
 *
 * A convolution is im2col + that product per image, group and tile of
 * output rows (at most QCONV_TILE bytes of columns), its columns being
 * X's int8 form with the taps outside the image set to X's zero point,
 * so that they add 0 as the reference's zero padding of X - zx does.
 *
 * The linear quantizations are passes of float arithmetic rounded as
 * the reference kernels round them (compiler/ops/misc.c): x / scale in
 * float, rintf (half to even), the zero point added in float (exact
 * below 2^24; beyond, both saturate), the bounds; (x - zp) * scale as one
 * float product.  tests/test_quant.c checks each against the reference
 * kernel bit for bit.
 */
#include <dnnl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"

enum { QCONV_TILE = 1 << 20 };

static bool is_q8(const Value *v)
{
	return v && v->tkind == TK_TENSOR && shape_is_static(&v->shape) &&
	       (v->dtype == DT_INT8 || v->dtype == DT_UINT8);
}

static bool is_static(const Value *v, int dtype)
{
	return v && v->tkind == TK_TENSOR && shape_is_static(&v->shape) &&
	       v->dtype == dtype;
}

static const void *weights_of(const Value *v)
{
	return v && v->kind == VAL_WEIGHT && v->konst ? v->konst->data : NULL;
}

/* Zero point i of tensor z (absent: 0). */
static int32_t zp_at(const Tensor *z, int64_t i)
{
	if (!z)
		return 0;
	return z->dtype == DT_INT8 ? ((const int8_t *)z->data)[i]
				   : ((const uint8_t *)z->data)[i];
}

/* y[i] = x[i] ^ flip: int8 <-> uint8 with 128 added or taken away. */
RT_HOT_FN(static, void, flip_copy,
	   (const uint8_t *x, size_t stride, uint8_t flip, uint8_t *y, size_t n),
	   (x, stride, flip, y, n))
{
	if (stride == 1)
		for (size_t i = 0; i < n; i++)
			y[i] = x[i] ^ flip;
	else
		for (size_t i = 0; i < n; i++)
			y[i] = x[i * stride] ^ flip;
}

/* ---- the integer product ------------------------------------------------ */

typedef struct IntGemm {
	bool vnni;   /* oneDNN's GEMM, exact on this CPU */
	int threads; /* its threads */
} IntGemm;

static IntGemm int_gemm_for(const RunCtx *s, double macs)
{
	/* the cap (cpu_has) and oneDNN's own level (ONEDNN_MAX_CPU_ISA
	 * may hold it lower) */
	dnnl_cpu_isa_t isa = cpu_has(CPU_AVX512VNNI)
				     ? dnnl_get_effective_cpu_isa()
				     : dnnl_cpu_isa_all;
	IntGemm g = { cpu_has(CPU_AVX512VNNI) &&
			      (isa & dnnl_cpu_isa_avx512_core_vnni) ==
				      dnnl_cpu_isa_avx512_core_vnni,
		      rt_threads_for(s, 2 * macs) };
	return g;
}

/* C = A (B - bo) in 32 bits, wrapping: A uint8 m x k, B int8 k x n,
 * row strides lda, ldb, ldc. */
RT_HOT_FN(static, void, gemm_loop,
	   (int64_t m, int64_t n, int64_t k, const uint8_t *a, int64_t lda, const int8_t *b, int64_t ldb, int32_t bo, int32_t *c, int64_t ldc),
	   (m, n, k, a, lda, b, ldb, bo, c, ldc))
{
	for (int64_t i = 0; i < m; i++) {
		uint32_t *ci = (uint32_t *)(c + i * ldc);
		memset(ci, 0, (size_t)n * sizeof(*ci));
		for (int64_t l = 0; l < k; l++) {
			int32_t av = a[i * lda + l];
			const int8_t *bl = b + l * ldb;
			for (int64_t j = 0; av && j < n; j++)
				ci[j] += (uint32_t)(av * (bl[j] - bo));
		}
	}
}

/* The same with oneDNN where exact.  No offset of A: oneDNN would sum
 * B's columns for it on every call, in plain code (M16 N512 K128:
 * 0.019 ms without, 0.035 ms with); the callers sum them once (constant
 * B) or vectorised. */
static int int_gemm(const IntGemm *g, int64_t m, int64_t n, int64_t k,
		    const uint8_t *a, int64_t lda, const int8_t *b,
		    int64_t ldb, int32_t bo, int32_t *c, int64_t ldc)
{
	static const int32_t co = 0;
	if (!g->vnni) {
		gemm_loop(m, n, k, a, lda, b, ldb, bo, c, ldc);
		return 0;
	}
	rt_pool_threads(g->threads);
	if (dnnl_gemm_u8s8s32('N', 'N', 'F', m, n, k, 1.0f, a, lda, 0, b,
			      ldb, (int8_t)bo, 0.0f, c, ldc,
			      &co) != dnnl_success)
		return error("oneDNN's integer GEMM (%lld x %lld x %lld) "
			     "failed", (long long)m, (long long)n,
			     (long long)k);
	return 0;
}

/* s[j] = sum over column j of B (k x n) - bo. */
RT_HOT_FN(static, void, col_sums,
	   (int64_t k, int64_t n, const int8_t *b, int32_t bo, int32_t *s),
	   (k, n, b, bo, s))
{
	for (int64_t j = 0; j < n; j++)
		s[j] = (int32_t)(-(uint32_t)bo * (uint32_t)k);
	for (int64_t l = 0; l < k; l++)
		for (int64_t j = 0; j < n; j++)
			s[j] += b[l * n + j];
}

/* The offsets the product A (B - bo) left out: c[i][j] -= za * s[j]
 * (s: B's column sums - bo), and with per-column zero points z (bo 0),
 * z[j] * r[i] (r: A's row sums - za). */
RT_HOT_FN(static, void, mm_offsets,
	   (int64_t m, int64_t n, int32_t za, const int32_t *s, const int32_t *r, const int32_t *z, int32_t *c, int64_t ldc),
	   (m, n, za, s, r, z, c, ldc))
{
	for (int64_t i = 0; i < m; i++) {
		uint32_t *ci = (uint32_t *)(c + i * ldc);
		if (z)
			for (int64_t j = 0; j < n; j++)
				ci[j] -= (uint32_t)za * (uint32_t)s[j] +
					 (uint32_t)z[j] * (uint32_t)r[i];
		else
			for (int64_t j = 0; j < n; j++)
				ci[j] -= (uint32_t)za * (uint32_t)s[j];
	}
}

/* ---- requantization (QLinearMatMul, QLinearConv) ------------------------ */

/* The node inputs an integer product reads: A (X), its zero point, B
 * (W), its; and for the QLinear ops A's, B's and Y's scales, Y's zero
 * point and the bias (-1: none). */
typedef struct QSlots {
	int a, az, b, bz, as, bs, ys, yz, bias;
} QSlots;

static const QSlots integer_slots = { 0, 2, 1, 3, -1, -1, -1, -1, -1 };
static const QSlots qlinear_slots = { 0, 2, 3, 5, 1, 4, 6, 7, 8 };

/* The largest reduction whose integer sums fit int32 (255 * 255 * k <
 * 2^31): the QLinear ops' reference sums in double without wrapping. */
enum { QLINEAR_MAX_K = 33025 };

/* sat(nearbyint(v) + zp) in [lo, hi], NaN to zp, as compiler/ops/conv.c's
 * q8_store rounds (in double, half to even); the NaN test last, so that
 * the loops below vectorise. */
static inline __attribute__((always_inline)) double
requant1(double v, double zp, double lo, double hi)
{
	double q = nearbyint(v) + zp;
	q = q < lo ? lo : q > hi ? hi : q;
	return v != v ? zp : q;
}

/* y[j] = requant1((acc[j] + bias) * mult[j or 0]), mult per element if
 * cols, else one; y uint8 (int8 if s8). */
RT_HOT_FN(static, void, requant,
	   (const int32_t *acc, size_t n, double bias, const double *mult, bool cols, double zp, bool s8, void *y),
	   (acc, n, bias, mult, cols, zp, s8, y))
{
	uint8_t *yu = y;
	int8_t *ys = y;
	double m = mult[0];
	if (s8 && cols)
		for (size_t j = 0; j < n; j++)
			ys[j] = (int8_t)(int32_t)requant1(
				((double)acc[j] + bias) * mult[j], zp, -128, 127);
	else if (s8)
		for (size_t j = 0; j < n; j++)
			ys[j] = (int8_t)(int32_t)requant1(
				((double)acc[j] + bias) * m, zp, -128, 127);
	else if (cols)
		for (size_t j = 0; j < n; j++)
			yu[j] = (uint8_t)(int32_t)requant1(
				((double)acc[j] + bias) * mult[j], zp, 0, 255);
	else
		for (size_t j = 0; j < n; j++)
			yu[j] = (uint8_t)(int32_t)requant1(
				((double)acc[j] + bias) * m, zp, 0, 255);
}

/* One float scale of tensor t: element i, or its only one. */
static float scale_at(const Tensor *t, int64_t i)
{
	return ((const float *)t->data)[shape_numel(&t->shape) > 1 ? i : 0];
}

/* The QLinear ops' scales and Y's zero point: float32 scales of one
 * value (A's, Y's) or of one or n (B's, per column or channel), and a
 * (u)int8 zero point of one value. */
static bool qlinear_params(const Prepared *p, const Node *n, int64_t cols)
{
	const Value *as = rt_in_val(p, n, 1), *bs = rt_in_val(p, n, 4);
	const Value *ys = rt_in_val(p, n, 6), *yz = rt_in_val(p, n, 7);
	int64_t nb = bs ? shape_numel(&bs->shape) : 0;
	return is_static(as, DT_FLOAT) && shape_numel(&as->shape) == 1 &&
	       is_static(bs, DT_FLOAT) && (nb == 1 || nb == cols) &&
	       is_static(ys, DT_FLOAT) && shape_numel(&ys->shape) == 1 &&
	       is_q8(yz) && shape_numel(&yz->shape) == 1;
}

/* ---- MatMulInteger, QLinearMatMul --------------------------------------- */

typedef struct QMatMul {
	IntGemm g;
	int64_t batch, m, n, k;
	bool a_s8, b_u8, b_batched;
	bool za;	   /* A has a zero point */
	int64_t nzb;	   /* B's zero points: 0, 1 or n */
	QSlots in;
	int32_t *acc;	   /* QLinearMatMul: the sums before requantizing */
	double *mult;	   /* QLinearMatMul: per column, a * b / y's scale */
	bool y_s8;
	const int8_t *b;   /* B as int8, constant (NULL: per run) */
	int8_t *b_own;	   /* that, made here, or the per-run copy */
	uint8_t *a;	   /* int8 A as uint8, per run */
	int32_t *rows, *zb; /* per-column zero points: row sums, z - 128 */
	int32_t *sums;	   /* B's column sums (per batch if B is) */
	bool sums_const;   /* summed once, B being constant */
	int32_t *cs;	   /* a run's column sums - bo */
} QMatMul;

static void qmm_free(void *state)
{
	QMatMul *q = state;
	free(q->b_own);
	free(q->a);
	free(q->rows);
	free(q->zb);
	free(q->sums);
	free(q->cs);
	free(q->acc);
	free(q->mult);
	free(q);
}

/* r[i] = sum over row i of A (m x k) - ao. */
RT_HOT_FN(static, void, row_sums,
	   (int64_t m, int64_t k, const uint8_t *a, int32_t ao, int32_t *r),
	   (m, k, a, ao, r))
{
	for (int64_t i = 0; i < m; i++) {
		uint32_t s = 0;
		for (int64_t l = 0; l < k; l++)
			s += a[i * k + l];
		r[i] = (int32_t)(s - (uint32_t)ao * (uint32_t)k);
	}
}

/* QLinearMatMul's y from the sums in q->acc, as run_qlinear_matmul
 * (compiler/ops/misc.c) scales them: a * b / y's scale in float. */
static int qmm_requant(QMatMul *q, const Tensor *const *in,
		       Tensor *const *out)
{
	int64_t rows = q->batch * q->m, n = q->n;
	float sa = scale_at(in[1], 0), sy = scale_at(in[6], 0);
	double zp = zp_at(in[7], 0);
	uint8_t *y = tensor_mut(out[0]);
	for (int64_t j = 0; j < n; j++)
		q->mult[j] = sa * scale_at(in[4], j) / sy;
	for (int64_t i = 0; i < rows; i++)
		requant(q->acc + i * n, (size_t)n, 0, q->mult, true, zp,
			q->y_s8, y + i * n);
	return 0;
}

static int qmm_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	QMatMul *q = state;
	int64_t m = q->m, n = q->n, k = q->k;
	size_t asz = (size_t)(q->batch * m * k);
	size_t bsz = (size_t)((q->b_batched ? q->batch : 1) * k * n);
	const uint8_t *a = in[q->in.a]->data;
	const int8_t *b = q->b;
	int32_t *y = q->acc ? q->acc : tensor_mut(out[0]);
	const Tensor *bz = q->nzb ? in[q->in.bz] : NULL;
	int32_t za = zp_at(q->za ? in[q->in.az] : NULL, 0) +
		     (q->a_s8 ? 128 : 0);
	int32_t bo = q->nzb <= 1 ? zp_at(bz, 0) - (q->b_u8 ? 128 : 0) : 0;
	if (q->a_s8) {
		flip_copy(a, 1, 0x80, q->a, asz);
		a = q->a;
	}
	if (!b && q->b_u8) {
		flip_copy(in[q->in.b]->data, 1, 0x80, (uint8_t *)q->b_own,
			  bsz);
		b = q->b_own;
	} else if (!b) {
		b = in[q->in.b]->data;
	}
	for (int64_t j = 0; q->nzb > 1 && j < n; j++)
		q->zb[j] = zp_at(bz, j) - (q->b_u8 ? 128 : 0);
	for (int64_t i = 0; i < q->batch; i++) {
		const uint8_t *ai = a + i * m * k;
		int64_t bat = q->b_batched ? i : 0;
		const int8_t *bi = b + bat * k * n;
		int32_t *yi = y + i * m * n, *sums = q->sums + bat * n;
		if (int_gemm(&q->g, m, n, k, ai, k, bi, n, bo, yi, n) < 0)
			return -1;
		if (!q->sums_const)
			col_sums(k, n, bi, 0, sums);
		for (int64_t j = 0; j < n; j++)
			q->cs[j] = (int32_t)((uint32_t)sums[j] -
					     (uint32_t)bo * (uint32_t)k);
		if (q->nzb > 1)
			row_sums(m, k, ai, za, q->rows);
		if (za || q->nzb > 1)
			mm_offsets(m, n, za, q->cs, q->rows,
				   q->nzb > 1 ? q->zb : NULL, yi, n);
	}
	return q->acc ? qmm_requant(q, in, out) : 0;
}

/* Zero points z (absent, or of count 1 or n, 1-D): their count, or -1. */
static int64_t zp_count(const Value *z, int64_t n)
{
	if (!z)
		return 0;
	int64_t c = shape_numel(&z->shape);
	return c == 1 ? 1 : c == n && z->shape.rank == 1 ? n : -1;
}

static int dq_qlinear_matmul(RunCtx *s, const Prepared *p, const Node *n,
			     int64_t m, int64_t kk, int64_t nn, FastKernel *k);

int quant_matmul(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	bool ql = n->op == OP_QLinearMatMul;
	const QSlots *in = ql ? &qlinear_slots : &integer_slots;
	const Value *a = rt_in_val(p, n, in->a), *b = rt_in_val(p, n, in->b);
	const Value *az = rt_in_val(p, n, in->az), *bz = rt_in_val(p, n, in->bz);
	const Value *y = &p->g->vals[n->outputs[0]];
	if (!is_q8(a) || !is_q8(b) || a->shape.rank < 1 ||
	    b->shape.rank < 2 || !(ql ? is_q8(y) : is_static(y, DT_INT32)))
		return 0;
	int32_t ra = a->shape.rank, rb = b->shape.rank;
	int64_t kk = a->shape.dims[ra - 1], nn = b->shape.dims[rb - 1];
	int64_t batch = 1, m;
	if (kk < 1 || b->shape.dims[rb - 2] != kk || zp_count(az, 1) < 0 ||
	    zp_count(bz, nn) < 0)
		return 0;
	if (rb == 2) {
		m = shape_numel(&a->shape) / kk;
	} else {
		if (ra != rb)
			return 0;
		for (int32_t d = 0; d < ra - 2; d++) {
			if (a->shape.dims[d] != b->shape.dims[d])
				return 0;
			batch *= a->shape.dims[d];
		}
		m = a->shape.dims[ra - 2];
	}
	if (shape_numel(&y->shape) != batch * m * nn ||
	    (ql && (kk > QLINEAR_MAX_K || !qlinear_params(p, n, nn))))
		return 0;
	int rc = ql && rb == 2 ? dq_qlinear_matmul(s, p, n, m, kk, nn, k) : 0;
	if (rc)
		return rc;
	QMatMul *q = calloc(1, sizeof(*q));
	if (!q)
		return error("out of memory");
	*q = (QMatMul){ .g = int_gemm_for(s, (double)(batch * m * nn * kk)),
			.batch = batch, .m = m, .n = nn, .k = kk,
			.a_s8 = a->dtype == DT_INT8,
			.b_u8 = b->dtype == DT_UINT8, .b_batched = rb > 2,
			.za = az != NULL, .in = *in, .y_s8 = y->dtype == DT_INT8,
			.nzb = zp_count(bz, nn) };
	size_t bsz = (size_t)shape_numel(&b->shape);
	const uint8_t *bw = weights_of(b);
	bool ok = true;
	if (bw && !q->b_u8) {
		q->b = (const int8_t *)bw;
	} else if (bw || q->b_u8) {
		ok = (q->b_own = malloc(bsz)) != NULL;
		if (ok && bw)
			flip_copy(bw, 1, 0x80, (uint8_t *)q->b_own, bsz);
		if (bw)
			q->b = q->b_own;
	}
	if (ok && q->a_s8)
		ok = (q->a = malloc((size_t)shape_numel(&a->shape))) != NULL;
	if (ok && q->nzb > 1)
		ok = (q->rows = malloc((size_t)m * sizeof(int32_t))) &&
		     (q->zb = malloc((size_t)nn * sizeof(int32_t)));
	if (ok)
		ok = (q->sums = malloc(bsz / (size_t)kk * sizeof(int32_t))) &&
		     (q->cs = malloc((size_t)nn * sizeof(int32_t)));
	for (size_t i = 0; ok && q->b && i < bsz / (size_t)(kk * nn); i++)
		col_sums(kk, nn, q->b + i * (size_t)(kk * nn), 0,
			 q->sums + i * (size_t)nn);
	q->sums_const = q->b != NULL;
	if (ok && ql)
		ok = (q->acc = malloc((size_t)(batch * m * nn) *
				      sizeof(int32_t))) &&
		     (q->mult = malloc((size_t)nn * sizeof(double)));
	if (!ok) {
		qmm_free(q);
		return error("out of memory");
	}
	*k = (FastKernel){ .run = qmm_run, .free = qmm_free, .state = q,
			   .threads = q->g.vnni ? q->g.threads : 1 };
	return 1;
}

/* ---- ConvInteger, QLinearConv ------------------------------------------- */

typedef struct QConv {
	IntGemm g;
	int64_t n, cin, cout, group, cg, mg; /* channels of a group: cg, mg */
	int64_t ih, iw, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
	int64_t kk;	 /* a column's taps: cg * kh * kw */
	int64_t rows;	 /* output rows per tile */
	bool x_s8, zx;	 /* X is int8, has a zero point */
	bool direct;	 /* one input channel a group: no im2col, no GEMM */
	int32_t wshift;	 /* 128 if W was int8, else 0 */
	int64_t nzw;	 /* W's zero points: 0, 1 or cout */
	uint8_t *w;	 /* W as uint8, cout x kk */
	int8_t *col;	 /* kk x (rows * ow) */
	int32_t *sums, *zw; /* a tile's column sums - bo; W's zero points */
	QSlots in;
	int32_t *acc;	 /* QLinearConv: a tile's sums before requantizing */
	double *mult;	 /* QLinearConv: per channel, x * w / y's scale */
	bool y_s8;
} QConv;

static void qconv_free(void *state)
{
	QConv *q = state;
	free(q->w);
	free(q->col);
	free(q->sums);
	free(q->zw);
	free(q->acc);
	free(q->mult);
	free(q);
}

/* The columns of output rows [r0, r1) of one image's group of channels
 * x, as int8 (x ^ flip), the taps outside the image at bo. */
static void im2col_q8(const QConv *q, const uint8_t *x, int64_t r0,
		      int64_t r1, int8_t bo, uint8_t flip)
{
	int64_t tile = (r1 - r0) * q->ow;
	for (int64_t c = 0; c < q->cg; c++)
		for (int64_t ky = 0; ky < q->kh; ky++)
			for (int64_t kx = 0; kx < q->kw; kx++) {
				int64_t off = kx * q->dw - q->pw, lo, hi;
				int8_t *d = q->col +
					    ((c * q->kh + ky) * q->kw + kx) * tile;
				conv_range(off, q->sw, q->iw, q->ow, &lo, &hi);
				for (int64_t oy = r0; oy < r1; oy++, d += q->ow) {
					int64_t iy = oy * q->sh - q->ph + ky * q->dh;
					if (iy < 0 || iy >= q->ih) {
						memset(d, bo, (size_t)q->ow);
						continue;
					}
					const uint8_t *src =
						x + (c * q->ih + iy) * q->iw;
					memset(d, bo, (size_t)lo);
					flip_copy(src + lo * q->sw + off,
						  (size_t)q->sw, flip,
						  (uint8_t *)d + lo,
						  (size_t)(hi - lo));
					memset(d + hi, bo, (size_t)(q->ow - hi));
				}
			}
}

/* Per-channel offsets z[i] (i < m) the product left out: c[i][j] -=
 * z[i] * s[j]. */
RT_HOT_FN(static, void, channel_offsets,
	   (int64_t m, int64_t n, const int32_t *z, const int32_t *s, int32_t *c, int64_t ldc),
	   (m, n, z, s, c, ldc))
{
	for (int64_t i = 0; i < m; i++) {
		uint32_t *ci = (uint32_t *)(c + i * ldc);
		for (int64_t j = 0; j < n; j++)
			ci[j] -= (uint32_t)z[i] * (uint32_t)s[j];
	}
}

/* QLinearConv's multipliers, as run_qlinear_conv (compiler/ops/conv.c)
 * makes them: x * w in double rounded to float, over y's scale in
 * float. */
static void qconv_mults(QConv *q, const Tensor *const *in)
{
	double sx = scale_at(in[1], 0);
	float sy = scale_at(in[6], 0);
	for (int64_t m = 0; m < q->cout; m++)
		q->mult[m] = (float)(sx * scale_at(in[4], m)) / sy;
}

/* QLinearConv's y at output channels c0..c0+nc of image img, output
 * pixels p0.. of a tile of n, from the tile's sums in q->acc (a row of n
 * per channel) and the bias. */
static void qconv_requant(const QConv *q, const Tensor *const *in,
			  Tensor *out, int64_t img, int64_t c0, int64_t nc,
			  int64_t p0, int64_t n)
{
	int64_t osz = q->oh * q->ow;
	double zp = zp_at(in[7], 0);
	const Tensor *b = q->in.bias < 0 ? NULL : in[q->in.bias];
	uint8_t *y = tensor_mut(out);
	for (int64_t m = 0; m < nc; m++) {
		int64_t c = c0 + m;
		double bias = b ? ((const int32_t *)b->data)[c] : 0;
		requant(q->acc + m * n, (size_t)n, bias, q->mult + c, false,
			zp, q->y_s8, y + (img * q->cout + c) * osz + p0);
	}
}

/* acc[i] += w * (x[i * stride] - zx), x uint8 (int8 if s8). */
RT_HOT_FN(static, void, dw_taps,
	   (const uint8_t *x, size_t stride, int32_t w, int32_t zx, bool s8, int32_t *acc, size_t n),
	   (x, stride, w, zx, s8, acc, n))
{
	uint32_t *a = (uint32_t *)acc;
	if (s8 && stride == 1)
		for (size_t i = 0; i < n; i++)
			a[i] += (uint32_t)(w * ((int8_t)x[i] - zx));
	else if (stride == 1)
		for (size_t i = 0; i < n; i++)
			a[i] += (uint32_t)(w * (x[i] - zx));
	else if (s8)
		for (size_t i = 0; i < n; i++)
			a[i] += (uint32_t)(w * ((int8_t)x[i * stride] - zx));
	else
		for (size_t i = 0; i < n; i++)
			a[i] += (uint32_t)(w * (x[i * stride] - zx));
}

/* The sums of one output channel whose group has one input channel xc
 * (a depthwise convolution's), directly: W's taps wc (uint8, zero point
 * zw) over X - zx, taps outside the image left out. */
static void qconv_direct(const QConv *q, const uint8_t *xc,
			 const uint8_t *wc, int32_t zw, int32_t zx,
			 int32_t *acc)
{
	memset(acc, 0, (size_t)(q->oh * q->ow) * sizeof(*acc));
	for (int64_t oy = 0; oy < q->oh; oy++)
		for (int64_t ky = 0; ky < q->kh; ky++) {
			int64_t iy = oy * q->sh - q->ph + ky * q->dh;
			if (iy < 0 || iy >= q->ih)
				continue;
			for (int64_t kx = 0; kx < q->kw; kx++) {
				int32_t w = wc[ky * q->kw + kx] - zw;
				int64_t off = kx * q->dw - q->pw, lo, hi;
				conv_range(off, q->sw, q->iw, q->ow, &lo, &hi);
				if (w)
					dw_taps(xc + iy * q->iw + lo * q->sw + off,
						(size_t)q->sw, w, zx, q->x_s8,
						acc + oy * q->ow + lo,
						(size_t)(hi - lo));
			}
		}
}

/* ConvInteger / QLinearConv by qconv_direct, channel by channel. */
static int qconv_direct_run(QConv *q, const Tensor *const *in,
			    Tensor *const *out)
{
	const uint8_t *x = in[q->in.a]->data;
	int32_t zx = zp_at(q->zx ? in[q->in.az] : NULL, 0);
	int64_t osz = q->oh * q->ow;
	for (int64_t img = 0; img < q->n; img++)
		for (int64_t c = 0; c < q->cout; c++) {
			const uint8_t *xc = x + (img * q->cin + c / q->mg) *
						       q->ih * q->iw;
			int32_t *acc = q->acc ? q->acc
					      : (int32_t *)tensor_mut(out[0]) +
							(img * q->cout + c) * osz;
			qconv_direct(q, xc, q->w + c * q->kk, q->zw[c], zx, acc);
			if (q->acc)
				qconv_requant(q, in, out[0], img, c, 1, 0, osz);
		}
	return 0;
}

static int qconv_run(void *state, const Tensor *const *in,
		     Tensor *const *out)
{
	QConv *q = state;
	const uint8_t *x = in[q->in.a]->data;
	int32_t *y = q->acc ? NULL : tensor_mut(out[0]);
	const Tensor *wz = q->nzw ? in[q->in.bz] : NULL;
	int32_t zx = zp_at(q->zx ? in[q->in.az] : NULL, 0);
	int8_t bo = (int8_t)(q->x_s8 ? zx : zx - 128);
	uint8_t flip = q->x_s8 ? 0 : 0x80;
	int64_t osz = q->oh * q->ow;
	bool offsets = false;
	for (int64_t i = 0; i < q->cout; i++) {
		q->zw[i] = zp_at(wz, q->nzw > 1 ? i : 0) + q->wshift;
		offsets |= q->zw[i] != 0;
	}
	if (q->acc)
		qconv_mults(q, in);
	if (q->direct)
		return qconv_direct_run(q, in, out);
	for (int64_t img = 0; img < q->n; img++)
		for (int64_t g = 0; g < q->group; g++) {
			const uint8_t *xg = x + (img * q->cin + g * q->cg) *
						       q->ih * q->iw;
			const uint8_t *wg = q->w + g * q->mg * q->kk;
			int64_t c0 = g * q->mg;
			for (int64_t r0 = 0; r0 < q->oh; r0 += q->rows) {
				int64_t r1 = r0 + q->rows < q->oh ? r0 + q->rows
								  : q->oh;
				int64_t tile = (r1 - r0) * q->ow;
				/* the sums: into Y (ConvInteger) or the
				 * tile's buffer (QLinearConv) */
				int64_t ldc = q->acc ? tile : osz;
				int32_t *yt = q->acc ? q->acc
						     : y + (img * q->cout + c0) *
								   osz +
							   r0 * q->ow;
				im2col_q8(q, xg, r0, r1, bo, flip);
				if (int_gemm(&q->g, q->mg, tile, q->kk, wg,
					     q->kk, q->col, tile, bo, yt,
					     ldc) < 0)
					return -1;
				if (offsets) {
					col_sums(q->kk, tile, q->col, bo,
						 q->sums);
					channel_offsets(q->mg, tile,
							q->zw + c0, q->sums,
							yt, ldc);
				}
				if (q->acc)
					qconv_requant(q, in, out[0], img, c0,
						      q->mg, r0 * q->ow, tile);
			}
		}
	return 0;
}

/* The geometry of ConvInteger node n, 1-D taken as 2-D of height 1:
 * false if it is not one quant_conv runs. */
static bool qconv_geom(RunCtx *s, Prepared *p, const Node *n,
		       const QSlots *in, QConv *q)
{
	ConvGeom g;
	OpCtx c = { .model = s->model->m, .g = p->g, .n = (Node *)n,
		    .opset = model_opset(s->model->m),
		    .fold_limit = INT64_MAX };
	if (nn_conv_geom(&c, in->a, in->b, false, &g) < 0) {
		clear_error();
		return false;
	}
	if ((g.nsp != 1 && g.nsp != 2) || g.group < 1 || g.cin % g.group ||
	    g.cout % g.group)
		return false;
	int a = g.nsp - 1; /* the width's axis */
	*q = (QConv){ .n = g.n, .cin = g.cin, .cout = g.cout,
		      .group = g.group, .cg = g.cin / g.group,
		      .mg = g.cout / g.group,
		      .ih = a ? g.in[0] : 1, .iw = g.in[a],
		      .oh = a ? g.out[0] : 1, .ow = g.out[a],
		      .kh = a ? g.kernel[0] : 1, .kw = g.kernel[a],
		      .sh = a ? g.stride[0] : 1, .sw = g.stride[a],
		      .ph = a ? g.pad[0] : 0, .pw = g.pad[a],
		      .dh = a ? g.dilation[0] : 1, .dw = g.dilation[a] };
	q->kk = q->cg * q->kh * q->kw;
	return q->oh > 0 && q->ow > 0 && q->kk > 0;
}

static int dq_qlinear_conv(RunCtx *s, const Prepared *p,
			   Task *t, const QConv *c, FastKernel *k);

int quant_conv(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	bool ql = n->op == OP_QLinearConv;
	const QSlots *in = ql ? &qlinear_slots : &integer_slots;
	const Value *x = rt_in_val(p, n, in->a), *w = rt_in_val(p, n, in->b);
	const Value *xz = rt_in_val(p, n, in->az), *wz = rt_in_val(p, n, in->bz);
	const Value *b = ql ? rt_in_val(p, n, in->bias) : NULL;
	const Value *y = &p->g->vals[n->outputs[0]];
	const uint8_t *wd = weights_of(w);
	QConv c;
	if (!is_q8(x) || !is_q8(w) || !wd ||
	    !(ql ? is_q8(y) : is_static(y, DT_INT32)) ||
	    zp_count(xz, 1) < 0 || !qconv_geom(s, p, n, in, &c) ||
	    zp_count(wz, c.cout) < 0 ||
	    shape_numel(&w->shape) != c.cout * c.kk ||
	    shape_numel(&y->shape) != c.n * c.cout * c.oh * c.ow ||
	    (ql && (c.kk > QLINEAR_MAX_K || !qlinear_params(p, n, c.cout) ||
		    (b && (!is_static(b, DT_INT32) ||
			   shape_numel(&b->shape) != c.cout)))))
		return 0;
	int rc = ql ? dq_qlinear_conv(s, p, t, &c, k) : 0;
	if (rc)
		return rc;
	QConv *q = malloc(sizeof(*q));
	if (!q)
		return error("out of memory");
	*q = c;
	q->g = int_gemm_for(s, (double)(c.n * c.cout * c.oh * c.ow * c.kk));
	q->x_s8 = x->dtype == DT_INT8;
	q->zx = xz != NULL;
	q->wshift = w->dtype == DT_INT8 ? 128 : 0;
	q->nzw = zp_count(wz, c.cout);
	q->in = *in;
	q->in.bias = b ? in->bias : -1;
	q->y_s8 = y->dtype == DT_INT8;
	q->direct = q->cg == 1;
	int64_t rows = QCONV_TILE / (q->kk * q->ow);
	q->rows = rows < 1 ? 1 : rows > q->oh ? q->oh : rows;
	size_t tile = (size_t)(q->rows * q->ow), wsz = (size_t)(c.cout * c.kk);
	size_t accsz = q->direct ? (size_t)(q->oh * q->ow) : (size_t)q->mg * tile;
	q->w = malloc(wsz);
	q->col = q->direct ? NULL : malloc((size_t)q->kk * tile);
	bool ok = q->w && (q->direct || q->col);
	if (ok)
		ok = (q->sums = malloc(tile * sizeof(int32_t))) &&
		     (q->zw = malloc((size_t)c.cout * sizeof(int32_t)));
	if (ok && ql)
		ok = (q->acc = malloc(accsz * sizeof(int32_t))) &&
		     (q->mult = malloc((size_t)c.cout * sizeof(double)));
	if (!ok) {
		qconv_free(q);
		return error("out of memory");
	}
	flip_copy(wd, 1, q->wshift ? 0x80 : 0, q->w, wsz);
	*k = (FastKernel){ .run = qconv_run, .free = qconv_free, .state = q,
			   .threads = q->g.vnni ? q->g.threads : 1 };
	return 1;
}

/* ---- the linear quantizations ------------------------------------------- */

/* The lowest and highest of x[0..n) and 0, NaNs left out, as the
 * reference's loop finds them (in 16 lanes, which the min and max do not
 * mind: a lane's value only moves to a strictly lower or higher one). */
typedef float MinMaxVec __attribute__((vector_size(8 * sizeof(float))));
typedef int32_t MinMaxInt __attribute__((vector_size(8 * sizeof(int32_t))));

RT_HOT_FN(static, void, min_max,
	   (const float *x, size_t n, float *lo, float *hi),
	   (x, n, lo, hi))
{
	/* in vectors of 8 (arrays of 16 floats GCC left scalar: 5.6% of
	 * an int8 CNN's run on AVX2); the least and the largest are the
	 * same whatever the lanes (a NaN never taken, 0 where all are 0) */
	MinMaxVec l[2] = { { 0 }, { 0 } }, h[2] = { { 0 }, { 0 } };
	float a = 0, b = 0;
	size_t i = 0;
	for (; i + 16 <= n; i += 16)
		for (int j = 0; j < 2; j++) {
			MinMaxVec v;
			memcpy(&v, x + i + 8 * j, sizeof(v));
			MinMaxInt ml = v < l[j], mh = v > h[j];
			l[j] = (MinMaxVec)((ml & (MinMaxInt)v) |
					   (~ml & (MinMaxInt)l[j]));
			h[j] = (MinMaxVec)((mh & (MinMaxInt)v) |
					   (~mh & (MinMaxInt)h[j]));
		}
	for (; i < n; i++) {
		a = x[i] < a ? x[i] : a;
		b = x[i] > b ? x[i] : b;
	}
	for (int j = 0; j < 16; j++) {
		a = l[j / 8][j % 8] < a ? l[j / 8][j % 8] : a;
		b = h[j / 8][j % 8] > b ? h[j / 8][j % 8] : b;
	}
	*lo = a;
	*hi = b;
}

/* y = clamp(rintf(x / scale) + zp, lo, hi) as uint8 (or int8 if s8);
 * false if some x / scale is NaN (those y are lo). */
RT_HOT_FN(static, bool, quantize,
	   (const float *x, size_t n, float scale, float zp, float lo, float hi, bool s8, void *y),
	   (x, n, scale, zp, lo, hi, s8, y))
{
	int bad = 0;
	uint8_t *yu = y;
	int8_t *ys = y;
	for (size_t i = 0; i < n; i++) {
		float q = rintf(x[i] / scale) + zp;
		bad |= q != q;
		q = q > lo ? q : lo;
		q = q < hi ? q : hi;
		if (s8)
			ys[i] = (int8_t)(int32_t)q;
		else
			yu[i] = (uint8_t)(int32_t)q;
	}
	return !bad;
}

/* y = (x - zp) * scale, x uint8 (or int8 if s8). */
RT_HOT_FN(static, void, dequantize,
	   (const void *x, size_t n, int32_t zp, float scale, bool s8, float *y),
	   (x, n, zp, scale, s8, y))
{
	const uint8_t *xu = x;
	const int8_t *xs = x;
	if (s8)
		for (size_t i = 0; i < n; i++)
			y[i] = (float)(xs[i] - zp) * scale;
	else
		for (size_t i = 0; i < n; i++)
			y[i] = (float)(xu[i] - zp) * scale;
}

/* DynamicQuantizeLinear's scale of x[0..n) and its zero point *z (0
 * when the scale is 0), the min and max of chunks of x found on nt
 * threads, then theirs: the same values however x is split (the min
 * and max do not mind the order; NaN is left out, 0 always in). */
static float dql_params(const float *x, size_t n, int nt, float *z)
{
	enum { CHUNKS = 32, CHUNK_MIN = 1 << 14 };
	float lo = 0, hi = 0, cl[CHUNKS], ch[CHUNKS];
	int64_t nc = nt > 1 ? (int64_t)((n + CHUNK_MIN - 1) / CHUNK_MIN) : 1;
	nc = nc < 1 ? 1 : nc > CHUNKS ? CHUNKS : nc;
	size_t per = (n + (size_t)nc - 1) / (size_t)nc;
	RT_PARALLEL_FOR
	for (int64_t c = 0; c < nc; c++) {
		size_t at = (size_t)c * per, end = at + per < n ? at + per : n;
		min_max(x + at, end > at ? end - at : 0, &cl[c], &ch[c]);
	}
	for (int64_t c = 0; c < nc; c++) {
		lo = cl[c] < lo ? cl[c] : lo;
		hi = ch[c] > hi ? ch[c] : hi;
	}
	float scale = (hi - lo) / 255.0f;
	*z = 0;
	if (scale != 0) {
		*z = rintf(0 - lo / scale);
		*z = *z >= 255 ? 255 : *z > 0 ? *z : 0;
	}
	return scale;
}

/* y = x[0..n) quantized with scale and z of dql_params (all 0 if the
 * scale is 0). */
static void dq_fill(const float *x, size_t n, float scale, float z,
			 uint8_t *y)
{
	if (scale != 0)
		quantize(x, n, scale, z, 0, 255, false, y);
	else
		memset(y, 0, n);
}

static int dql_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	(void)state;
	const float *x = in[0]->data;
	size_t n = (size_t)shape_numel(&in[0]->shape);
	uint8_t *y = tensor_mut(out[0]);
	float z, scale = dql_params(x, n, 1, &z);
	dq_fill(x, n, scale, z, y);
	if (out[1])
		*(float *)tensor_mut(out[1]) = scale;
	if (out[2])
		*(uint8_t *)tensor_mut(out[2]) = (uint8_t)z;
	return 0;
}

/* A (de)quantization's blocks: outer x an x inner elements, parameter j
 * for the an rows of each block (an 1: per tensor). */
typedef struct QLinear {
	bool dequant, s8, zp; /* zp: a zero point is given */
	int64_t outer, an, inner;
} QLinear;

static int ql_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const QLinear *q = state;
	const uint8_t *x = in[0]->data;
	uint8_t *y = tensor_mut(out[0]);
	const float *sc = in[1]->data;
	size_t inner = (size_t)q->inner, xs = q->dequant ? 1 : sizeof(float);
	size_t ys = q->dequant ? sizeof(float) : 1;
	for (int64_t j = 0; j < q->an; j++) {
		float s = sc[j];
		int32_t z = zp_at(q->zp ? in[2] : NULL, j);
		if (!q->dequant && (!(s != 0) || isinf(s)))
			return error("the scale is %g, expected a finite "
				     "nonzero number", (double)s);
		for (int64_t o = 0; o < q->outer; o++) {
			size_t at = (size_t)((o * q->an + j)) * inner;
			if (q->dequant)
				dequantize(x + at * xs, inner, z, s, q->s8,
					   (float *)(void *)(y + at * ys));
			else if (!quantize((const float *)(const void *)(x + at * xs),
					   inner, s, (float)z,
					   q->s8 ? -128 : 0, q->s8 ? 127 : 255,
					   q->s8, y + at * ys))
				return error("x / scale is NaN");
		}
	}
	return 0;
}

/* The blocks of node n's per-tensor or per-axis parameters: false if
 * the reference kernel must run it (blocked, or scales of another
 * count). */
static bool ql_blocks(const Prepared *p, const Node *n, QLinear *q)
{
	const Value *x = rt_in_val(p, n, 0), *s = rt_in_val(p, n, 1);
	const Value *z = rt_in_val(p, n, 2);
	int64_t ns = shape_numel(&s->shape);
	int32_t r = x->shape.rank;
	int64_t axis = attr_int(n, "axis", 1);
	q->outer = 1;
	q->an = 1;
	q->inner = shape_numel(&x->shape);
	if (attr_int(n, "block_size", 0) > 0 || !is_static(s, DT_FLOAT) ||
	    (z && (!is_q8(z) || shape_numel(&z->shape) != ns)))
		return false;
	if (s->shape.rank == 0 || ns == 1)
		return true;
	axis += axis < 0 ? r : 0;
	if (s->shape.rank != 1 || axis < 0 || axis >= r ||
	    x->shape.dims[axis] != ns)
		return false;
	q->an = ns;
	q->inner = 1;
	for (int32_t d = 0; d < axis; d++)
		q->outer *= x->shape.dims[d];
	for (int32_t d = (int32_t)axis + 1; d < r; d++)
		q->inner *= x->shape.dims[d];
	return true;
}

int quant_linear(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	if (n->op == OP_DynamicQuantizeLinear) {
		for (int32_t i = 1; i < n->noutputs; i++)
			if (n->outputs[i] >= 0 && !t->out[i])
				return 0;
		if (!is_static(x, DT_FLOAT) || !is_static(y, DT_UINT8))
			return 0;
		*k = (FastKernel){ .run = dql_run };
		return 1;
	}
	bool dq = n->op == OP_DequantizeLinear;
	QLinear q = { .dequant = dq };
	if (!(dq ? is_q8(x) && is_static(y, DT_FLOAT)
		 : is_static(x, DT_FLOAT) && is_q8(y)) ||
	    !ql_blocks(p, n, &q))
		return 0;
	q.s8 = (dq ? x : y)->dtype == DT_INT8;
	q.zp = rt_in_val(p, n, 2) != NULL;
	QLinear *st = malloc(sizeof(*st));
	if (!st)
		return error("out of memory");
	*st = q;
	*k = (FastKernel){ .run = ql_run, .free = free, .state = st };
	return 1;
}

/* ---- DynQuantMatMul, DynQuantConv ---------------------------------------
 *
 * One u8 x s8 product Y[m][n] = sum_k A[m][k] B'[k][n] per run, A the
 * quantized X (a MatMul's rows, a convolution's im2col rows: one output
 * pixel's taps, channels last) and B' the constant weights as int8
 * (uint8 W less 128), packed once at prepare into panels of 16 columns,
 * 4 consecutive k of a column adjacent: the operand layout of
 * AVX512-VNNI's vpdpbusd, which adds four u8 x s8 products into each
 * int32 lane without saturating.  K is padded to a multiple of 4 with
 * zeros in both operands.  The zero points come after, exactly in 32
 * bits (wrapping like the reference's conversion to int32):
 *   sum_k (a - za)(b - zb) = S - za cs[n] - zb'[n] r'[m]
 * with b - zb = b' - zb' (zb' = zb - 128 for uint8 W), cs B's column
 * sums, r' = sum_k (a - za) (a padded tap of a convolution holds za, so
 * it adds nothing).  Then float(sum) * (s * W_scale) [+ Bias], each step
 * rounded in float as the reference rounds it (this file is compiled
 * without contraction into FMA: -std=c11).  Without VNNI (checked at run
 * time) a plain-C loop computes the same sums. */

/* A tile: DQ_MR rows by DQ_NP panels of 16 columns, or, where B has at
 * most 2 panels (32 columns), DQ_MR_MAX rows by 2 panels, which keeps as
 * many accumulators busy per load of B. */
enum { DQ_MR = 6, DQ_NP = 4, DQ_MR_MAX = 12, DQ_ROWS = 192 };

#if defined(__x86_64__) && defined(__GNUC__)
#include "simd_x86.h"
/* Round half to even, no exception: a constant, as clang requires of
 * the rounding argument of the _round_ intrinsics. */
#define DQ_RN (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define DQ_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))
#define DQ_HAVE_VNNI 1
#else
#define DQ_HAVE_VNNI 0
#endif

/* B's packed form: panels of 16 columns x k4 (k padded to 4), column
 * sums and zero points per column (zb'), the scales and bias. */
typedef struct DqPacked {
	int64_t k, k4, n, npan;
	int8_t *b;	/* npan x (k4 / 4) x 16 x 4 */
	int32_t *cs;	/* per column: sum over k of B' */
	int32_t *zb;	/* per column: zb' */
	bool zb0;	/* every zb' 0 (symmetric int8 W): no row sums */
} DqPacked;

static void dq_packed_free(DqPacked *p)
{
	free(p->b);
	free(p->cs);
	free(p->zb);
}

/* Packs B[kk][j] = w[kk * ldk + j * ldn] (k x n, uint8 if u8: less 128)
 * with zero points z (absent, one, or one per column from z0) into p. */
static bool dq_pack(DqPacked *p, const uint8_t *w, int64_t k, int64_t n,
		    int64_t ldk, int64_t ldn, bool u8, const Tensor *z,
		    int64_t z0)
{
	p->k = k;
	p->k4 = (k + 3) & ~(int64_t)3;
	p->n = n;
	p->npan = (n + 15) / 16;
	size_t sz = (size_t)(p->npan * p->k4 * 16);
	p->b = calloc(sz, 1);
	p->cs = calloc((size_t)(p->npan * 16), sizeof(int32_t));
	p->zb = calloc((size_t)(p->npan * 16), sizeof(int32_t));
	if (!p->b || !p->cs || !p->zb)
		return false;
	int64_t nz = z ? shape_numel(&z->shape) : 0;
	p->zb0 = true;
	for (int64_t j = 0; j < n; j++) {
		int8_t *col = p->b + (j / 16) * p->k4 * 16 + (j % 16) * 4;
		int32_t s = 0;
		for (int64_t kk = 0; kk < k; kk++) {
			int8_t v = (int8_t)(w[kk * ldk + j * ldn] ^ (u8 ? 0x80 : 0));
			col[(kk / 4) * 64 + kk % 4] = v;
			s += v;
		}
		p->cs[j] = s;
		p->zb[j] = zp_at(z, nz > 1 ? z0 + j : 0) - (u8 ? 128 : 0);
		p->zb0 &= p->zb[j] == 0;
	}
	return true;
}

/* The epilogue of a tile: per column its scale, bias, cs and zb'. */
typedef struct DqEpi {
	const float *sp, *bias; /* per column (padded to panels) */
	const int32_t *cs, *zb;
	int32_t za;
	const int32_t *r;	/* per row: r' */
	float *y;		/* row-major, ldy; NULL: int32 sums to c */
	int64_t ldy, n;
} DqEpi;

/* y[i][j] = float(S - za cs[j] - zb[j] r[i]) * sp[j] (+ bias[j]). */
static inline float dq_value(uint32_t s, const DqEpi *e, int64_t i,
			     int64_t j)
{
	uint32_t v = s - (uint32_t)e->za * (uint32_t)e->cs[j] -
		     (uint32_t)e->zb[j] * (uint32_t)e->r[i];
	float f = (float)(int32_t)v * e->sp[j];
	return e->bias ? f + e->bias[j] : f;
}

/* The plain-C product of rows i0..i0+mr, panels p0..p0+np. */
static void dq_tile_c(int mr, int np, int64_t kq, const uint8_t *a,
		      int64_t lda, const int8_t *b, int64_t ps, int32_t *c,
		      int64_t ldc)
{
	for (int i = 0; i < mr; i++)
		for (int j = 0; j < np * 16; j++) {
			const int8_t *bj = b + (j / 16) * ps + (j % 16) * 4;
			uint32_t s = 0;
			for (int64_t q = 0; q < kq * 4; q++)
				s += (uint32_t)(a[i * lda + q] *
						bj[(q / 4) * 64 + q % 4]);
			c[i * ldc + j] = (int32_t)s;
		}
}

#if DQ_HAVE_VNNI
/* The same with vpdpbusd, MR x NP accumulators of 16 lanes in
 * registers, over ntap taps: tap t's kq groups of 4 k at a + toff[t]
 * (rows lda apart) against B's next kq groups (toff NULL: one tap at a);
 * sums to c (ldc) or, with e->y, the epilogue's floats (columns past
 * e->n masked off). */
static inline __attribute__((always_inline)) DQ_VNNI_TARGET void
dq_tile_vnni(const int MR, const int NP, int ntap, const int64_t *toff,
	     int64_t kq, const uint8_t *a, int64_t lda, const int8_t *b,
	     int64_t ps, int32_t *c, int64_t ldc, const DqEpi *e, int64_t i0,
	     int64_t j0)
{
	__m512i acc[DQ_MR_MAX][DQ_NP];
#pragma GCC unroll 12
	for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
		for (int j = 0; j < NP; j++)
			acc[i][j] = _mm512_setzero_si512();
	for (int t = 0; t < ntap; t++, b += kq * 64) {
		const uint8_t *at = toff ? a + toff[t] : a;
		for (int64_t q = 0; q < kq; q++) {
			__m512i bv[DQ_NP];
#pragma GCC unroll 4
			for (int j = 0; j < NP; j++)
				bv[j] = _mm512_loadu_si512(b + j * ps + q * 64);
#pragma GCC unroll 12
			for (int i = 0; i < MR; i++) {
				int32_t a4;
				memcpy(&a4, at + i * lda + q * 4, 4);
				__m512i av = _mm512_set1_epi32(a4);
#pragma GCC unroll 4
				for (int j = 0; j < NP; j++)
					acc[i][j] = _mm512_dpbusd_epi32(
						acc[i][j], av, bv[j]);
			}
		}
	}
	if (!e || !e->y) {
#pragma GCC unroll 12
		for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
			for (int j = 0; j < NP; j++)
				_mm512_storeu_si512(c + i * ldc + j * 16,
						    acc[i][j]);
		return;
	}
#pragma GCC unroll 4
	for (int j = 0; j < NP; j++) {
		int64_t col = j0 + j * 16, left = e->n - col;
		__mmask16 mask = left >= 16 ? 0xffff
					    : (__mmask16)((1u << left) - 1);
		__m512i za_cs = _mm512_mullo_epi32(
			_mm512_set1_epi32(e->za),
			_mm512_loadu_si512(e->cs + col));
		__m512i zb = _mm512_loadu_si512(e->zb + col);
		__m512 sp = _mm512_loadu_ps(e->sp + col);
		__m512 bias = e->bias ? _mm512_loadu_ps(e->bias + col)
				      : _mm512_setzero_ps();
#pragma GCC unroll 12
		for (int i = 0; i < MR; i++) {
			__m512i v = _mm512_sub_epi32(
				_mm512_sub_epi32(acc[i][j], za_cs),
				_mm512_mullo_epi32(
					zb, _mm512_set1_epi32(e->r[i0 + i])));
			__m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), sp);
			if (e->bias)
				f = _mm512_add_ps(f, bias);
			_mm512_mask_storeu_ps(e->y + (i0 + i) * e->ldy + col,
					      mask, f);
		}
	}
}

/* r[i] = sum of row i of a (k bytes, row stride lda) - k * za. */
DQ_VNNI_TARGET static void dq_row_sums_vnni(const uint8_t *a, int64_t lda,
					   int64_t m, int64_t k, int32_t za,
					   int32_t *r)
{
	for (int64_t i = 0; i < m; i++) {
		__m512i s = _mm512_setzero_si512();
		for (int64_t l = 0; l < k; l += 64) {
			__mmask64 mask = k - l >= 64 ? ~(__mmask64)0
						     : ((__mmask64)1 << (k - l)) - 1;
			s = _mm512_add_epi64(
				s, _mm512_sad_epu8(_mm512_maskz_loadu_epi8(
							   mask, a + i * lda + l),
						   _mm512_setzero_si512()));
		}
		uint32_t t = (uint32_t)_mm512_reduce_add_epi64(s);
		r[i] = (int32_t)(t - (uint32_t)za * (uint32_t)k);
	}
}

/* y[p][c] = x[c][p] (c < ch, p0 <= p < p1 of np) quantized as
 * quantize() does (rounded half to even, z added, clamped to 0..255,
 * NaN to 0). */
DQ_VNNI_TARGET static void dq_quantize_t_vnni(const float *x, int64_t ch,
					      int64_t np, int64_t p1,
					      float scale, float z, uint8_t *y,
					      int64_t p0)
{
	const __m512 vs = _mm512_set1_ps(scale), vz = _mm512_set1_ps(z);
	const __m512 lo = _mm512_setzero_ps(), hi = _mm512_set1_ps(255);
	uint8_t b[16];
	for (; p0 < p1; p0 += 16) {
		int64_t n = p1 - p0 < 16 ? p1 - p0 : 16;
		__mmask16 mask = (__mmask16)((1u << n) - 1);
		for (int64_t c = 0; c < ch; c++) {
			__m512 v = _mm512_maskz_loadu_ps(mask, x + c * np + p0);
			v = _mm512_add_ps(
				_mm512_roundscale_ps(_mm512_div_ps(v, vs),
						     _MM_FROUND_TO_NEAREST_INT |
							     _MM_FROUND_NO_EXC),
				vz);
			v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
			_mm_storeu_si128((__m128i *)b,
					 _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v)));
			for (int64_t l = 0; l < n; l++)
				y[(p0 + l) * ch + c] = b[l];
		}
	}
}

/* Channel j's outputs y[i] (i < nr) from the sums c[i * ldc + j]. */
DQ_VNNI_TARGET static void dq_channel_vnni(const int32_t *c, int64_t ldc,
					   int64_t nr, const DqEpi *e,
					   int64_t j, float *y)
{
	const __m512i idx = _mm512_mullo_epi32(
		_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
				  14, 15),
		_mm512_set1_epi32((int32_t)ldc));
	const __m512i za_cs = _mm512_set1_epi32(
		(int32_t)((uint32_t)e->za * (uint32_t)e->cs[j]));
	const __m512i zb = _mm512_set1_epi32(e->zb[j]);
	const __m512 sp = _mm512_set1_ps(e->sp[j]);
	const __m512 bias = _mm512_set1_ps(e->bias ? e->bias[j] : 0);
	for (int64_t i = 0; i < nr; i += 16) {
		int64_t n = nr - i < 16 ? nr - i : 16;
		__mmask16 mask = (__mmask16)((1u << n) - 1);
		__m512i s = _mm512_mask_i32gather_epi32(
			_mm512_setzero_si512(), mask, idx, c + i * ldc + j, 4);
		__m512i r = _mm512_maskz_loadu_epi32(mask, e->r + i);
		s = _mm512_sub_epi32(_mm512_sub_epi32(s, za_cs),
				     _mm512_mullo_epi32(zb, r));
		__m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(s), sp);
		if (e->bias)
			f = _mm512_add_ps(f, bias);
		_mm512_mask_storeu_ps(y + i, mask, f);
	}
}

#define DQ_CASE(MR, NP)                                                   \
	case (MR) * 8 + (NP):                                             \
		dq_tile_vnni(MR, NP, ntap, toff, kq, a, lda, b, ps, c, ldc, e, \
			     i0, j0);                                     \
		break;

/* dq_tile_vnni of mr rows (at most DQ_MR_MAX if np <= 2, else DQ_MR)
 * and np panels. */
DQ_VNNI_TARGET static void dq_tile_any(int mr, int np, int ntap,
				       const int64_t *toff, int64_t kq,
				       const uint8_t *a, int64_t lda,
				       const int8_t *b, int64_t ps,
				       int32_t *c, int64_t ldc,
				       const DqEpi *e, int64_t i0, int64_t j0)
{
	switch (mr * 8 + np) {
	DQ_CASE(1, 1) DQ_CASE(1, 2) DQ_CASE(1, 3) DQ_CASE(1, 4)
	DQ_CASE(2, 1) DQ_CASE(2, 2) DQ_CASE(2, 3) DQ_CASE(2, 4)
	DQ_CASE(3, 1) DQ_CASE(3, 2) DQ_CASE(3, 3) DQ_CASE(3, 4)
	DQ_CASE(4, 1) DQ_CASE(4, 2) DQ_CASE(4, 3) DQ_CASE(4, 4)
	DQ_CASE(5, 1) DQ_CASE(5, 2) DQ_CASE(5, 3) DQ_CASE(5, 4)
	DQ_CASE(6, 1) DQ_CASE(6, 2) DQ_CASE(6, 3) DQ_CASE(6, 4)
	DQ_CASE(7, 1) DQ_CASE(7, 2) DQ_CASE(8, 1) DQ_CASE(8, 2)
	DQ_CASE(9, 1) DQ_CASE(9, 2) DQ_CASE(10, 1) DQ_CASE(10, 2)
	DQ_CASE(11, 1) DQ_CASE(11, 2) DQ_CASE(12, 1) DQ_CASE(12, 2)
	}
}
#undef DQ_CASE
#endif

#if DQ_HAVE_VNNI
#define DQ256_VNNI 1
#include "dq_simd.h"
#undef DQ256_VNNI
#define DQ256_VNNI 0
#include "dq_simd.h"
#undef DQ256_VNNI
#endif

/* The tiles the integer products run on, by what the CPU has within the
 * cap: AVX512-VNNI's (16 lanes), AVX-VNNI's or AVX2's (8 lanes,
 * runtime/dq_simd.h), or plain C; every one gives the same bits. */
typedef enum DqIsa { DQ_C, DQ_AVX2, DQ_AVXVNNI, DQ_VNNI512 } DqIsa;

static DqIsa dq_isa(void)
{
#if DQ_HAVE_VNNI
	if (cpu_isa() >= CPU_LEVEL_AVX512 && cpu_has(CPU_AVX512VNNI))
		return DQ_VNNI512;
	if (cpu_isa() >= CPU_LEVEL_AVX2)
		return cpu_has(CPU_AVX_VNNI) ? DQ_AVXVNNI : DQ_AVX2;
#endif
	return DQ_C;
}

/* The profile's name of a kernel on tiles of isa. */
static const char *dq_isa_name(DqIsa isa)
{
	return isa == DQ_VNNI512    ? "avx512vnni"
	       : isa == DQ_AVXVNNI ? "avxvnni"
	       : isa == DQ_AVX2	   ? "avx2"
				   : cpu_isa_name(CPU_LEVEL_BASELINE);
}

/* The rows of a tile of np panels. */
static int64_t dq_tile_rows(int np)
{
	return np <= 2 ? DQ_MR_MAX : DQ_MR;
}

#if DQ_HAVE_VNNI
/* y[i * k + l] = a[i * lda + l] for rows i < m, l < k: the int16 A of
 * the AVX2 tiles. */
__attribute__((target("avx2"))) static void dq_widen(const uint8_t *a,
						    int64_t lda, int64_t m,
						    int64_t k, int16_t *y)
{
	for (int64_t i = 0; i < m; i++, a += lda, y += k) {
		int64_t l = 0;
		for (; l + 16 <= k; l += 16)
			_mm256_storeu_si256(
				(__m256i *)(y + l),
				_mm256_cvtepu8_epi16(_mm_loadu_si128(
					(const __m128i *)(a + l))));
		for (; l < k; l++)
			y[l] = a[l];
	}
}
#endif

/* C (or, with e->y, Y) of rows 0..m of A (lda, k4 bytes a row) against
 * the packed B; c: m x (npan * 16) sums (may be NULL with e->y); a16:
 * room for m x k4 int16, A widened for the AVX2 tiles (NULL with the
 * others). */
static void dq_gemm(DqIsa isa, int64_t m, const uint8_t *a, int64_t lda,
		    const DqPacked *p, int32_t *c, const DqEpi *e,
		    int16_t *a16)
{
	int64_t kq = p->k4 / 4, ps = p->k4 * 16, ldc = p->npan * 16;
#if DQ_HAVE_VNNI
	if (isa == DQ_AVX2)
		dq_widen(a, lda, m, p->k4, a16);
#else
	(void)a16;
#endif
	int npmax = isa == DQ_AVX2 || isa == DQ_AVXVNNI ? 1 : DQ_NP;
	for (int64_t p0 = 0; p0 < p->npan; p0 += npmax) {
		int np = (int)(p->npan - p0 < npmax ? p->npan - p0 : npmax);
		const int8_t *b = p->b + p0 * ps;
		int64_t mt = npmax == 1 && isa != DQ_C ? DQ_MR : dq_tile_rows(np);
		for (int64_t i0 = 0; i0 < m; i0 += mt) {
			int mr = (int)(m - i0 < mt ? m - i0 : mt);
			const uint8_t *ai = a + i0 * lda;
			int32_t *ci = c ? c + i0 * ldc + p0 * 16 : NULL;
#if DQ_HAVE_VNNI
			if (isa == DQ_VNNI512) {
				dq_tile_any(mr, np, 1, NULL, kq, ai, lda, b, ps,
					    ci, ldc, e, i0, p0 * 16);
				continue;
			}
			if (isa == DQ_AVXVNNI) {
				dq_tile_any_avxvnni(mr, 1, NULL, kq, ai, lda, b,
						    ci, ldc, e, i0, p0 * 16);
				continue;
			}
			if (isa == DQ_AVX2) {
				dq_tile_any_avx2(mr, 1, NULL, kq,
						 a16 + i0 * p->k4, p->k4, b, ci,
						 ldc, e, i0, p0 * 16);
				continue;
			}
#endif
			dq_tile_c(mr, np, kq, ai, lda, b, ps, ci, ldc);
			for (int i = 0; e && e->y && i < mr; i++)
				for (int64_t j = p0 * 16;
				     j < e->n && j < (p0 + np) * 16; j++)
					e->y[(i0 + i) * e->ldy + j] = dq_value(
						(uint32_t)ci[i * ldc + j - p0 * 16],
						e, i0 + i, j);
		}
	}
}

/* sp[j] = s * W_scale[j or 0] for the n columns (float, as Mul). */
static void dq_scales(float s, const Tensor *ws, const Tensor *bias,
		      int64_t n, float *sp, float *b)
{
	int64_t nw = shape_numel(&ws->shape);
	int64_t nb = bias ? shape_numel(&bias->shape) : 0;
	for (int64_t j = 0; j < n; j++) {
		sp[j] = s * ((const float *)ws->data)[nw > 1 ? j : 0];
		if (bias)
			b[j] = ((const float *)bias->data)[nb > 1 ? j : 0];
	}
}

/* A kernel's temporaries: written and read within one run of its node,
 * so they live in the context's work (rt_work_reserve), shared with
 * every other node's, at offsets fixed when it is matched and bound to
 * pointers at the start of each run (dq_bind).  Kept per node, an int8
 * ISNet's X copies and blocks took 800 MB beside its 268 MB arena. */
enum { DQB_XQ, DQB_XT, DQB_XT16, DQB_A, DQB_A16, DQB_R, DQB_C, DQB_T,
       DQB_N };

typedef struct DqKernel {
	DqIsa isa;	 /* the tiles (dq_isa) */
	bool conv;
	bool bias_in;	 /* input 4, the bias, is given */
	DqPacked *w;	 /* per group */
	int64_t groups;
	int64_t m, rows; /* MatMul: A's rows; rows per block */
	RunCtx *s;	 /* its work holds the temporaries below */
	size_t need[DQB_N], at[DQB_N]; /* their bytes and offsets there */
	/* the temporaries, bound for a run (dq_bind) */
	uint8_t *xq;	 /* X quantized (MatMul: rows of k4) */
	uint8_t *xt;	 /* Conv: X quantized, channels last */
	uint8_t *a;	 /* Conv: a block of im2col rows */
	int16_t *a16;	 /* AVX2: A's rows widened (dq_gemm) */
	int32_t *r, *c;	 /* per row r'; Conv: a block's sums */
	uint8_t *t;	 /* QLinearConv: a block's y, channels last */
	/* Conv: the threads its blocks of rows are spread over, each with
	 * its own a, r, c and t (dq_block), these many elements apart */
	int threads;
	int64_t a_n, a16_n, c_n, t_n;
	int32_t *bz;	 /* QLinearConv: per channel, bias - za cs */
	bool x_nhwc, y_nhwc; /* QLinearConv: X, Y channels-last */
	/* QLinearConv without im2col (dq_direct): X channels last in q->xt
	 * padded to pih x piw pixels (X's at row ph, column pw), the taps'
	 * offsets there */
	bool direct;
	int64_t pih, piw;
	int64_t *toff;
	int16_t *xt16;	 /* AVX2: q->xt widened */
	float *sp, *bias;
	QConv g;	 /* Conv: the geometry */
} DqKernel;

static void dq_free(void *state)
{
	DqKernel *q = state;
	for (int64_t i = 0; q->w && i < q->groups; i++)
		dq_packed_free(&q->w[i]);
	free(q->w);
	free(q->sp);
	free(q->bias);
	free(q->bz);
	free(q->toff);
	free(q->g.mult);
	free(q);
}

/* Places q's temporaries (q->need) in s's work: false if it cannot
 * grow. */
static bool dq_reserve(DqKernel *q, RunCtx *s)
{
	size_t end = 0;
	for (int i = 0; i < DQB_N; i++) {
		q->at[i] = end;
		end += (q->need[i] + 63) / 64 * 64;
	}
	q->s = s;
	return rt_work_reserve(s, end);
}

/* q's temporaries in its context's work, as it is now. */
static void dq_bind(DqKernel *q)
{
	uint8_t *w = q->s->work;
	void *b[DQB_N];
	for (int i = 0; i < DQB_N; i++)
		b[i] = q->need[i] ? w + q->at[i] : NULL;
	q->xq = b[DQB_XQ];
	q->xt = b[DQB_XT];
	q->xt16 = b[DQB_XT16];
	q->a = b[DQB_A];
	q->a16 = b[DQB_A16];
	q->r = b[DQB_R];
	q->c = b[DQB_C];
	q->t = b[DQB_T];
}

/* r[i] = sum of row i of a (k values) - k * za: on x86-64 16 bytes a
 * step by SSE2's psadbw (the byte loop, which GCC -O2 leaves scalar, was
 * 15% of an int8 ISNet's run on AVX2). */
static void dq_row_sums(const uint8_t *a, int64_t lda, int64_t m, int64_t k,
			int32_t za, int32_t *r)
{
	for (int64_t i = 0; i < m; i++) {
		const uint8_t *row = a + i * lda;
		uint32_t s = 0;
		int64_t l = 0;
#if defined(__x86_64__) && defined(__GNUC__)
		__m128i v = _mm_setzero_si128();
		for (; l + 16 <= k; l += 16)
			v = _mm_add_epi64(v, _mm_sad_epu8(_mm_loadu_si128(
				(const __m128i *)(row + l)),
				_mm_setzero_si128()));
		s = (uint32_t)(_mm_cvtsi128_si64(v) +
			       _mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v)));
#endif
		for (; l < k; l++)
			s += row[l];
		r[i] = (int32_t)(s - (uint32_t)za * (uint32_t)k);
	}
}

/* r' of rows 0..m (dq_row_sums). */
static void dq_rows(DqIsa isa, const uint8_t *a, int64_t lda, int64_t m,
		    int64_t k, int32_t za, int32_t *r)
{
#if DQ_HAVE_VNNI
	if (isa == DQ_VNNI512) {
		dq_row_sums_vnni(a, lda, m, k, za, r);
		return;
	}
#endif
	(void)isa;
	dq_row_sums(a, lda, m, k, za, r);
}

static int dqmm_run(void *state, const Tensor *const *in,
		    Tensor *const *out)
{
	DqKernel *q = state;
	const DqPacked *p = &q->w[0];
	const float *x = in[0]->data;
	float z, s = dql_params(x, (size_t)(q->m * p->k), 1, &z);
	dq_bind(q);
	int32_t za = (int32_t)z;
	for (int64_t i = 0; i < q->m; i++) /* rows of k4, padded with 0 */
		dq_fill(x + i * p->k, (size_t)p->k, s, z,
			     q->xq + i * p->k4);
	dq_rows(q->isa, q->xq, p->k4, q->m, p->k, za, q->r);
	dq_scales(s, in[3], q->bias_in ? in[4] : NULL, p->n, q->sp, q->bias);
	DqEpi e = { .sp = q->sp, .bias = q->bias_in ? q->bias : NULL, .cs = p->cs,
		    .zb = p->zb, .za = za, .r = q->r,
		    .y = tensor_mut(out[0]), .ldy = p->n, .n = p->n };
	dq_gemm(q->isa, q->m, q->xq, p->k4, p, q->c, &e, q->a16);
	return 0;
}

#if DQ_HAVE_VNNI
/* The 16 x 16 bytes r[row] transposed: four perfect shuffles of the rows'
 * bytes (SSE2). */
static inline void dq_t16(__m128i r[16])
{
	for (int k = 0; k < 4; k++) {
		__m128i t[16];
		for (int i = 0; i < 8; i++) {
			t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
			t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
		}
		memcpy(r, t, sizeof(t));
	}
}
#endif

/* y[j * ldy + i] = x[i * ldx + j] ^ flip for i < rows, j < cols: a
 * transpose of bytes, 16 x 16 blocks at a time where the intrinsics are
 * there. */
static void dq_transpose8(const uint8_t *x, int64_t rows, int64_t cols,
			  int64_t ldx, uint8_t flip, uint8_t *y, int64_t ldy)
{
	enum { B = 32 };
	int64_t r16 = 0, c16 = 0;
#if DQ_HAVE_VNNI
	r16 = rows & ~(int64_t)15, c16 = cols & ~(int64_t)15;
	__m128i f = _mm_set1_epi8((char)flip), r[16];
	for (int64_t j0 = 0; j0 < c16; j0 += 16)
		for (int64_t i0 = 0; i0 < r16; i0 += 16) {
			for (int k = 0; k < 16; k++)
				r[k] = _mm_xor_si128(
					_mm_loadu_si128((const __m128i *)(x +
						(i0 + k) * ldx + j0)), f);
			dq_t16(r);
			for (int k = 0; k < 16; k++)
				_mm_storeu_si128((__m128i *)(y + (j0 + k) * ldy +
							     i0), r[k]);
		}
#endif
	for (int64_t j0 = 0; j0 < cols; j0 += B)
		for (int64_t i = 0; i < rows; i++) {
			int64_t j1 = j0 + B < cols ? j0 + B : cols;
			int64_t j = i < r16 && j0 < c16 ? c16 : j0;
			for (; j < j1; j++)
				y[j * ldy + i] = x[i * ldx + j] ^ flip;
		}
}

/* y[p][c] = x[c][p] ^ flip for c < ch, p < np (bytes). */
static void dq_transpose(const uint8_t *x, int64_t ch, int64_t np,
			 uint8_t flip, uint8_t *y)
{
	dq_transpose8(x, ch, np, np, flip, y, ch);
}

/* d[0..n) = s[0..n), inline: im2col copies a group's channels of a tap,
 * often 16 or 32 bytes, where a call to memcpy costs more than the copy. */
static inline void copy_short(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t i = 0;
	for (; i + 16 <= n; i += 16)
		__builtin_memcpy(d + i, s + i, 16);
	for (; i < n; i++)
		d[i] = s[i];
}

/* The im2col rows of output pixels p0..p0+nr of group gi of x (one image
 * channels last), channels last
 * (tap (ky, kx), then channel), rows of k4 bytes; taps outside the image
 * hold the zero point za. */
static inline __attribute__((always_inline)) void
im2col_rows(const DqKernel *q, const uint8_t *x, int64_t gi, int64_t p0,
	    int64_t nr, int32_t za, uint8_t *a, int64_t k4,
	    void (*copy)(uint8_t *, const uint8_t *, size_t))
{
	const QConv *g = &q->g;
	const uint8_t *xt = x + gi * g->cg;
	size_t cg = (size_t)g->cg;
	int64_t oy = p0 / g->ow, ox = p0 % g->ow - 1;
	for (int64_t i = 0; i < nr; i++) {
		if (++ox == g->ow) /* pixel p0 + i, without a division */
			ox = 0, oy++;
		uint8_t *d = a + i * k4;
		int64_t ix0 = ox * g->sw - g->pw;
		bool row = g->cg == g->cin && g->dw == 1 && ix0 >= 0 &&
			   ix0 + g->kw <= g->iw;
		for (int64_t ky = 0; ky < g->kh; ky++) {
			int64_t iy = oy * g->sh - g->ph + ky * g->dh;
			if (row && iy >= 0 && iy < g->ih) {
				/* the taps of this row lie side by side */
				copy(d, xt + (iy * g->iw + ix0) * g->cin,
				     cg * (size_t)g->kw);
				d += cg * (size_t)g->kw;
				continue;
			}
			for (int64_t kx = 0; kx < g->kw; kx++, d += cg) {
				int64_t ix = ox * g->sw - g->pw + kx * g->dw;
				if (iy < 0 || iy >= g->ih || ix < 0 ||
				    ix >= g->iw)
					memset(d, za, cg);
				else
					copy(d, xt + (iy * g->iw + ix) * g->cin, cg);
			}
		}
	}
}

static void dq_im2col_c(const DqKernel *q, const uint8_t *x, int64_t gi,
			int64_t p0, int64_t nr, int32_t za, uint8_t *a,
			int64_t k4)
{
	im2col_rows(q, x, gi, p0, nr, za, a, k4, copy_short);
}

#if DQ_HAVE_VNNI
/* copy_short in 64-byte vectors, the last one masked. */
static inline __attribute__((always_inline)) DQ_VNNI_TARGET void
copy_vec(uint8_t *d, const uint8_t *s, size_t n)
{
	for (; n >= 64; n -= 64, d += 64, s += 64)
		_mm512_storeu_si512(d, _mm512_loadu_si512(s));
	if (n) {
		__mmask64 m = ((__mmask64)1 << n) - 1;
		_mm512_mask_storeu_epi8(d, m, _mm512_maskz_loadu_epi8(m, s));
	}
}

DQ_VNNI_TARGET static void dq_im2col_vnni(const DqKernel *q, const uint8_t *x,
					  int64_t gi, int64_t p0, int64_t nr,
					  int32_t za, uint8_t *a, int64_t k4)
{
	im2col_rows(q, x, gi, p0, nr, za, a, k4, copy_vec);
}
#endif

/* The im2col rows (im2col_rows), in AVX-512 moves with VNNI. */
static void dq_im2col(const DqKernel *q, const uint8_t *x, int64_t gi,
		      int64_t p0, int64_t nr, int32_t za, uint8_t *a,
		      int64_t k4)
{
#if DQ_HAVE_VNNI
	if (q->isa == DQ_VNNI512) {
		dq_im2col_vnni(q, x, gi, p0, nr, za, a, k4);
		return;
	}
#endif
	dq_im2col_c(q, x, gi, p0, nr, za, a, k4);
}

/* A 1x1 convolution of stride 1 without pads over every channel with
 * a row of a multiple of 4 bytes: X channels last is its im2col. */
static bool dq_pointwise(const QConv *g)
{
	return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 &&
	       g->ph == 0 && g->pw == 0 && g->oh == g->ih && g->ow == g->iw &&
	       g->group == 1 && g->cin % 4 == 0;
}

/* One image of X quantized into q->xt, channels last. */
static void dq_x_channels_last(DqKernel *q, const float *x, float s, float z)
{
	const QConv *g = &q->g;
	int64_t isz = g->ih * g->iw;
#if DQ_HAVE_VNNI
	if (q->isa == DQ_VNNI512 && s != 0) {
		enum { PIX = 256 }; /* pixels a thread's item */
		int nt = q->threads;
		RT_PARALLEL_FOR
		for (int64_t p0 = 0; p0 < isz; p0 += PIX)
			dq_quantize_t_vnni(x, g->cin, isz,
					   isz - p0 < PIX ? isz : p0 + PIX, s,
					   z, q->xt, p0);
		return;
	}
#endif
	dq_fill(x, (size_t)(g->cin * isz), s, z, q->xq);
	dq_transpose(q->xq, g->cin, isz, 0, q->xt);
}

/* Channel j's outputs of a block of nr pixels from its sums. */
static void dq_channel(DqIsa isa, const int32_t *c, int64_t ldc, int64_t nr,
		       const DqEpi *e, int64_t j, float *y)
{
#if DQ_HAVE_VNNI
	if (isa == DQ_VNNI512) {
		dq_channel_vnni(c, ldc, nr, e, j, y);
		return;
	}
#endif
	(void)isa;
	for (int64_t i = 0; i < nr; i++)
		y[i] = dq_value((uint32_t)c[i * ldc + j], e, i, j);
}

/* Thread th's block buffers (DqKernel.threads of each, one after
 * another). */
typedef struct DqBlock {
	uint8_t *a, *t;
	int16_t *a16;
	int32_t *r, *c;
} DqBlock;

static DqBlock dq_block(const DqKernel *q, int th)
{
	return (DqBlock){ .a = q->a ? q->a + th * q->a_n : NULL,
			  .a16 = q->a16 ? q->a16 + th * q->a16_n : NULL,
			  .t = q->t ? q->t + th * q->t_n : NULL,
			  .r = q->r + th * q->rows,
			  .c = q->c + th * q->c_n };
}

/* The threads a convolution's blocks of rows are spread over. */
static int dq_conv_threads(const RunCtx *s, const QConv *g)
{
	return rt_threads_for(s, 2.0 * (double)(g->n * g->cout * g->oh *
						 g->ow * g->kk));
}

/* The sums of rows p0..p0+nr of group gi into b->c (im2col rows of X
 * channels last xt, unless X is them), and, if rows, each row's r into
 * b->r. */
static void dq_block_sums(const DqKernel *q, const uint8_t *xt, int64_t gi,
			  int64_t p0, int64_t nr, int32_t za, bool rows,
			  DqBlock *b)
{
	const QConv *g = &q->g;
	const DqPacked *p = &q->w[gi];
	const uint8_t *a = b->a;
	if (dq_pointwise(g))
		a = xt + p0 * g->cin;
	else
		dq_im2col(q, xt, gi, p0, nr, za, b->a, p->k4);
	if (rows)
		dq_rows(q->isa, a, p->k4, nr, p->k, za, b->r);
	dq_gemm(q->isa, nr, a, p->k4, p, b->c, NULL, b->a16);
}

/* Sizes a convolution's block buffers for threads threads of rows
 * rows, im2col rows of k4 bytes (none if k4 is 0) and mg channels. */
static void dq_blocks_size(DqKernel *q, int threads, int64_t k4, int64_t mg,
			   bool requant)
{
	size_t th = (size_t)threads;
	q->threads = threads;
	q->a_n = q->rows * k4;
	q->a16_n = q->isa == DQ_AVX2 ? q->a_n : 0;
	q->c_n = q->rows * ((mg + 15) / 16 * 16);
	q->t_n = requant ? q->rows * mg : 0;
	q->need[DQB_A] = th * (size_t)q->a_n;
	q->need[DQB_A16] = th * (size_t)q->a16_n * sizeof(int16_t);
	q->need[DQB_R] = th * (size_t)q->rows * sizeof(int32_t);
	q->need[DQB_C] = th * (size_t)q->c_n * sizeof(int32_t);
	q->need[DQB_T] = th * (size_t)q->t_n;
}

/* Rows p0.. (q->rows of them at most) of image img, group gi. */
static void dqconv_block(const DqKernel *q, const DqEpi *e, int64_t img,
			 int64_t gi, int64_t p0, float *y, int th)
{
	const QConv *g = &q->g;
	const DqPacked *p = &q->w[gi];
	int64_t osz = g->oh * g->ow, c0 = gi * g->mg, ldc = p->npan * 16;
	int64_t nr = osz - p0 < q->rows ? osz - p0 : q->rows;
	DqBlock b = dq_block(q, th);
	dq_block_sums(q, q->xt, gi, p0, nr, e->za, true, &b);
	DqEpi eb = *e;
	eb.r = b.r;
	float *yb = y + (img * g->cout + c0) * osz + p0;
	int64_t j = 0;
#if DQ_HAVE_VNNI
	if (q->isa == DQ_AVX2 || q->isa == DQ_AVXVNNI)
		for (; j + 8 <= g->mg; j += 8)
			(q->isa == DQ_AVXVNNI ? dq_channels8_avxvnni
					      : dq_channels8_avx2)(
				b.c, ldc, nr, &eb, j, yb + j * osz, osz);
#endif
	for (; j < g->mg; j++)
		dq_channel(q->isa, b.c, ldc, nr, &eb, j, yb + j * osz);
}

static int dqconv_run(void *state, const Tensor *const *in,
		      Tensor *const *out)
{
	DqKernel *q = state;
	const QConv *g = &q->g;
	const float *x = in[0]->data;
	int64_t isz = g->ih * g->iw, osz = g->oh * g->ow;
	int64_t nblk = (osz + q->rows - 1) / q->rows;
	float z, s = dql_params(x, (size_t)(g->n * g->cin * isz), q->threads,
				&z);
	dq_bind(q);
	int32_t za = (int32_t)z;
	float *y = tensor_mut(out[0]);
	int nt = q->threads;
	dq_scales(s, in[3], q->bias_in ? in[4] : NULL, g->cout, q->sp,
		  q->bias);
	for (int64_t img = 0; img < g->n; img++) {
		dq_x_channels_last(q, x + img * g->cin * isz, s, z);
		for (int64_t gi = 0; gi < g->group; gi++) {
			const DqPacked *p = &q->w[gi];
			int64_t c0 = gi * g->mg;
			DqEpi e = { .sp = q->sp + c0,
				    .bias = q->bias_in ? q->bias + c0 : NULL,
				    .cs = p->cs, .zb = p->zb, .za = za };
			RT_PARALLEL_FOR
			for (int64_t bi = 0; bi < nblk; bi++)
				dqconv_block(q, &e, img, gi, bi * q->rows, y,
					     rt_thread());
		}
	}
	return 0;
}

/* W of group gi as B (k = cg * kh * kw rows, channels last, mg
 * columns), packed with its zero points. */
static bool dq_pack_conv(DqKernel *q, const uint8_t *w, bool u8,
			 const Tensor *wz, int64_t gi)
{
	const QConv *g = &q->g;
	int64_t taps = g->kh * g->kw, k = g->cg * taps;
	uint8_t *wt = malloc((size_t)(g->mg * k));
	if (!wt)
		return false;
	for (int64_t j = 0; j < g->mg; j++)
		for (int64_t c = 0; c < g->cg; c++)
			for (int64_t t = 0; t < taps; t++)
				wt[j * k + t * g->cg + c] =
					w[((gi * g->mg + j) * g->cg + c) * taps + t];
	bool ok = dq_pack(&q->w[gi], wt, k, g->mg, 1, k, u8, wz, gi * g->mg);
	free(wt);
	return ok;
}

/* Inputs W (constant, (u)int8), its zero point (constant, 0, 1 or nch
 * values), the scale and bias (float, 1 or nch values), Y float. */
static bool dq_inputs(const Prepared *p, const Node *n, int64_t nch)
{
	const Value *w = rt_in_val(p, n, 1), *wz = rt_in_val(p, n, 2);
	const Value *ws = rt_in_val(p, n, 3), *b = rt_in_val(p, n, 4);
	const Value *x = rt_in_val(p, n, 0), *y = &p->g->vals[n->outputs[0]];
	int64_t nw = ws ? shape_numel(&ws->shape) : 0;
	int64_t nb = b ? shape_numel(&b->shape) : 1;
	return is_static(x, DT_FLOAT) && is_static(y, DT_FLOAT) && is_q8(w) &&
	       weights_of(w) && zp_count(wz, nch) >= 0 &&
	       (!wz || (wz->konst && is_q8(wz))) && is_static(ws, DT_FLOAT) &&
	       (nw == 1 || nw == nch) && (!b || is_static(b, DT_FLOAT)) &&
	       (nb == 1 || nb == nch);
}

int quant_dynquant(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	bool conv = n->op == OP_DynQuantConv;
	const Value *x = rt_in_val(p, n, 0), *w = rt_in_val(p, n, 1);
	const Value *wz = rt_in_val(p, n, 2);
	DqKernel d = { .isa = dq_isa(), .conv = conv, .groups = 1,
		       .bias_in = rt_in_val(p, n, 4) != NULL };
	int64_t nch, kk;
	if (conv) {
		if (!qconv_geom(s, p, n, &integer_slots, &d.g))
			return 0;
		nch = d.g.cout;
		kk = d.g.kk;
		d.groups = d.g.group;
	} else {
		if (!w || w->shape.rank != 2 || !x || x->shape.rank < 1)
			return 0;
		kk = w->shape.dims[0];
		nch = w->shape.dims[1];
		if (kk < 1 || x->shape.dims[x->shape.rank - 1] != kk)
			return 0;
		d.m = shape_numel(&x->shape) / kk;
	}
	if (!dq_inputs(p, n, nch) ||
	    shape_numel(&w->shape) != nch * kk)
		return 0;
	DqKernel *q = calloc(1, sizeof(*q));
	if (!q)
		return error("out of memory");
	*q = d;
	const uint8_t *wd = weights_of(w);
	bool u8 = w->dtype == DT_UINT8;
	const Tensor *zt = wz ? wz->konst : NULL;
	int64_t k4 = (kk + 3) & ~(int64_t)3, cols = (nch + 15) / 16 * 16;
	bool ok = (q->w = calloc((size_t)q->groups, sizeof(DqPacked))) &&
		  (q->sp = malloc((size_t)cols * sizeof(float))) &&
		  (q->bias = malloc((size_t)cols * sizeof(float)));
	if (ok && conv) {
		const QConv *g = &q->g;
		int64_t isz = g->ih * g->iw, osz = g->oh * g->ow;
		int64_t k4g = ((g->kk + 3) & ~(int64_t)3);
		q->rows = DQ_ROWS < osz ? DQ_ROWS : osz;
		q->need[DQB_XQ] = q->need[DQB_XT] = (size_t)(g->cin * isz);
		dq_blocks_size(q, dq_conv_threads(s, g), k4g, g->mg, false);
		for (int64_t gi = 0; ok && gi < g->group; gi++)
			ok = dq_pack_conv(q, wd, u8, zt, gi);
	} else if (ok) {
		size_t m = (size_t)q->m;
		q->need[DQB_XQ] = m * (size_t)k4;
		q->need[DQB_A16] = q->isa == DQ_AVX2 ? m * (size_t)k4 * 2 : 0;
		q->need[DQB_R] = m * sizeof(int32_t);
		q->need[DQB_C] = q->isa == DQ_C ? m * (size_t)cols * 4 : 0;
		ok = dq_pack(&q->w[0], wd, kk, nch, nch, 1, u8, zt, 0);
	}
	ok = ok && dq_reserve(q, s);
	if (!ok) {
		dq_free(q);
		return error("out of memory");
	}
	*k = (FastKernel){ .run = conv ? dqconv_run : dqmm_run,
			   .free = dq_free, .state = q,
			   .threads = q->threads,
			   .variant = dq_isa_name(q->isa) };
	return 1;
}

/* ---- QLinearConv on the same kernel ------------------------------------
 * X's bytes channels last as uint8 (int8 X plus 128, its zero point
 * too), the sums of each channel made exact as above, then requantized
 * as requant() does (compiler/ops/conv.c's rounding), a block of rows at
 * a time into Y channels last: Y's own bytes when the tensor is NHWC
 * (runtime/layout.c: between two such convolutions, neither transposes),
 * else a block transposed into Y's planes.  X channels last is X's own
 * bytes the same way (int8 X flipped to uint8 on the way).  Where each
 * tap's k lie in one pixel (dq_direct), X is copied once per image into
 * a buffer padded with its zero point, and the tiles read their rows
 * there, tap by tap, instead of from im2col rows. */

/* The exact sum of the block's row i, column j: c - za cs[j] - zb[j] r[i],
 * wrapping in 32 bits as the reference's conversion does (r not summed
 * where every zb is 0). */
static inline int32_t dq_exact(const int32_t *c, int64_t ldc, int64_t i,
			       int64_t j, int32_t za, const DqPacked *p,
			       const int32_t *r)
{
	return (int32_t)((uint32_t)c[i * ldc + j] -
			 (uint32_t)za * (uint32_t)p->cs[j] -
			 (p->zb0 ? 0 : (uint32_t)p->zb[j] * (uint32_t)r[i]));
}

/* The requantisation of a block: t[i * ldt + j] for rows 0..nr and
 * columns 0..n = requant1((exact sum + bias[j]) * mult[j]) in double, as
 * requant() computes it; uint8 (int8 if s8).  bias may be NULL. */
typedef struct DqOut {
	const int32_t *bias;
	const double *mult;
	double zp;
	bool s8;
	bool narrow; /* every product rounds into int32 (dq_requant_narrow) */
	uint8_t *t;
	int64_t ldt;
} DqOut;

#if DQ_HAVE_VNNI
/* dq_requant_c 16 columns at a time (AVX512-VL: every CPU with VNNI has
 * it, dq_vnni() checks), where every mult is finite and every exact sum
 * plus its bias fits int32 (dq_requant_exact): then c + bz[j], bz[j] =
 * bias[j] - za cs[j] in 32 bits, is that sum plus the bias, exactly, its
 * double product with mult is requant()'s, finite, and clamping it to
 * the integers lo - zp .. hi - zp before rounding to nearest even gives
 * what rounding and then clamping gives; zp is added last, in int32. */
static __attribute__((target("avx512f,avx512bw,avx512vl"))) void
dq_requant_rows(const int32_t *c, int64_t ldc, int64_t nr, int64_t n,
		const DqPacked *p, const int32_t *bz, const int32_t *r,
		const DqOut *o)
{
	__m512d lo = _mm512_set1_pd((o->s8 ? -128 : 0) - o->zp);
	__m512d hi = _mm512_set1_pd((o->s8 ? 127 : 255) - o->zp);
	__m512i z = _mm512_set1_epi32((int32_t)o->zp);
	__m512i zero = _mm512_setzero_si512();
	for (int64_t j = 0; j < n; j += 16) {
		__mmask16 m = (__mmask16)(n - j >= 16 ? 0xffff
						      : (1u << (n - j)) - 1);
		__m512i b = _mm512_maskz_loadu_epi32(m, bz + j);
		__m512i zb = _mm512_loadu_si512(p->zb + j);
		__m512d m0 = _mm512_maskz_loadu_pd((__mmask8)m, o->mult + j);
		__m512d m1 = _mm512_maskz_loadu_pd((__mmask8)(m >> 8),
						   o->mult + j + 8);
		for (int64_t i = 0; i < nr; i++) {
			__m512i s = _mm512_add_epi32(
				_mm512_loadu_si512(c + i * ldc + j), b);
			if (!p->zb0)
				s = _mm512_sub_epi32(
					s, _mm512_mullo_epi32(
						   zb, _mm512_set1_epi32(r[i])));
			__m512d x0 = _mm512_mul_pd(
				_mm512_cvtepi32_pd(_mm512_castsi512_si256(s)), m0);
			__m512d x1 = _mm512_mul_pd(
				_mm512_cvtepi32_pd(
					_mm512_extracti64x4_epi64(s, 1)),
				m1);
			if (!o->narrow) {
				x0 = _mm512_min_pd(_mm512_max_pd(x0, lo), hi);
				x1 = _mm512_min_pd(_mm512_max_pd(x1, lo), hi);
			}
			__m512i q = _mm512_add_epi32(
				_mm512_inserti64x4(
					_mm512_castsi256_si512(
						_mm512_cvt_roundpd_epi32(x0, DQ_RN)),
					_mm512_cvt_roundpd_epi32(x1, DQ_RN), 1),
				z);
			/* narrow: saturated as it is narrowed */
			__m128i y = o->s8 ? _mm512_cvtsepi32_epi8(q)
				    : o->narrow ? _mm512_cvtusepi32_epi8(
							  _mm512_max_epi32(
								  q, zero))
						: _mm512_cvtepi32_epi8(q);
			_mm_mask_storeu_epi8(o->t + i * o->ldt + j, m, y);
		}
	}
}

/* dq_requant_rows in 8 lanes (AVX2): the same conditions, the same
 * steps (the doubles rounded to nearest even by vroundpd, then
 * converted exactly), narrowed with saturation by packs (int32 to int16
 * to 8 bits: signed, or unsigned from int16, which is what clamping to
 * 0 and saturating gives). */
static __attribute__((target("avx2,fma"))) void
dq_requant_rows_avx2(const int32_t *c, int64_t ldc, int64_t nr, int64_t n,
		     const DqPacked *p, const int32_t *bz, const int32_t *r,
		     const DqOut *o)
{
	__m256d lo = _mm256_set1_pd((o->s8 ? -128 : 0) - o->zp);
	__m256d hi = _mm256_set1_pd((o->s8 ? 127 : 255) - o->zp);
	__m128i z = _mm_set1_epi32((int32_t)o->zp);
	for (int64_t j = 0; j < n; j += 8) {
		int64_t w = n - j < 8 ? n - j : 8;
		int32_t bb[8] = { 0 };
		double mm[8] = { 0 };
		memcpy(bb, bz + j, (size_t)w * sizeof(int32_t));
		memcpy(mm, o->mult + j, (size_t)w * sizeof(double));
		__m256i b = _mm256_loadu_si256((const __m256i *)bb);
		__m256i zb = _mm256_loadu_si256((const __m256i *)(p->zb + j));
		__m256d m0 = _mm256_loadu_pd(mm), m1 = _mm256_loadu_pd(mm + 4);
		for (int64_t i = 0; i < nr; i++) {
			__m256i s = _mm256_add_epi32(
				_mm256_loadu_si256((const __m256i *)(c + i * ldc +
								     j)),
				b);
			if (!p->zb0)
				s = _mm256_sub_epi32(
					s, _mm256_mullo_epi32(
						   zb, _mm256_set1_epi32(r[i])));
			__m256d x0 = _mm256_mul_pd(
				_mm256_cvtepi32_pd(_mm256_castsi256_si128(s)), m0);
			__m256d x1 = _mm256_mul_pd(
				_mm256_cvtepi32_pd(_mm256_extracti128_si256(s, 1)),
				m1);
			if (!o->narrow) {
				x0 = _mm256_min_pd(_mm256_max_pd(x0, lo), hi);
				x1 = _mm256_min_pd(_mm256_max_pd(x1, lo), hi);
			}
			__m128i q0 = _mm_add_epi32(
				_mm256_cvttpd_epi32(_mm256_round_pd(x0, DQ_RN)), z);
			__m128i q1 = _mm_add_epi32(
				_mm256_cvttpd_epi32(_mm256_round_pd(x1, DQ_RN)), z);
			__m128i h = _mm_packs_epi32(q0, q1);
			__m128i y8 = o->s8 ? _mm_packs_epi16(h, h)
					   : _mm_packus_epi16(h, h);
			if (w == 8) { /* not a call to memcpy a row */
				_mm_storel_epi64(
					(__m128i *)(o->t + i * o->ldt + j), y8);
				continue;
			}
			uint8_t out[16];
			_mm_storeu_si128((__m128i *)out, y8);
			memcpy(o->t + i * o->ldt + j, out, (size_t)w);
		}
	}
}
#endif

/* Whether dq_requant_rows computes channels 0..n as requant() does:
 * every multiplier finite, and |exact sum| (at most 255 * 255 * k) plus
 * |bias| within int32. */
static bool dq_requant_exact(const double *mult, const int32_t *bias,
			     int64_t n, int64_t k)
{
	int64_t most = 0;
	for (int64_t j = 0; j < n; j++) {
		int64_t b = bias ? llabs((int64_t)bias[j]) : 0;
		most = b > most ? b : most;
		if (!isfinite(mult[j]))
			return false;
	}
	return 65025 * k + most <= INT32_MAX;
}

/* Whether, beyond dq_requant_exact, every product of a channel's sum
 * (plus bias) and its mult, rounded, plus the zero point zp lies well
 * within int32, so that dq_requant_rows may saturate after rounding, as
 * it narrows to 8 bits, rather than clamp the doubles first: the same
 * result, with fewer operations. */
static bool dq_requant_narrow(const double *mult, const int32_t *bias,
			      int64_t n, int64_t k, double zp)
{
	for (int64_t j = 0; j < n; j++) {
		double b = bias ? fabs((double)bias[j]) : 0;
		if (!((65025.0 * (double)k + b) * fabs(mult[j]) + fabs(zp) <
		      (double)(1 << 30)))
			return false;
	}
	return true;
}

static void dq_requant_c(const int32_t *c, int64_t ldc, int64_t nr,
			 int64_t n, const DqPacked *p, int32_t za,
			 const int32_t *r, const DqOut *o)
{
	double lo = o->s8 ? -128 : 0, hi = o->s8 ? 127 : 255;
	for (int64_t i = 0; i < nr; i++)
		for (int64_t j = 0; j < n; j++) {
			double v = ((double)dq_exact(c, ldc, i, j, za, p, r) +
				    (o->bias ? o->bias[j] : 0)) *
				   o->mult[j];
			o->t[i * o->ldt + j] =
				(uint8_t)(int32_t)requant1(v, o->zp, lo, hi);
		}
}

/* y[j][i] (output channel j's plane, osz pixels apart) = t[i][j]. */
static void dq_untile(const uint8_t *t, int64_t nr, int64_t n, int64_t osz,
		      uint8_t *y)
{
	dq_transpose8(t, nr, n, n, 0, y, osz);
}

/* Image img's X channels last: X's bytes if X is NHWC and uint8, else
 * q->xt. */
static const uint8_t *dq_x_image(DqKernel *q, const uint8_t *x, int64_t img)
{
	QConv *g = &q->g;
	int64_t isz = g->ih * g->iw;
	const uint8_t *xi = x + img * g->cin * isz;
	if (q->x_nhwc && !g->x_s8)
		return xi;
	if (q->x_nhwc)
		flip_copy(xi, 1, 0x80, q->xt, (size_t)(g->cin * isz));
	else
		dq_transpose(xi, g->cin, isz, g->x_s8 ? 0x80 : 0, q->xt);
	return q->xt;
}

/* A QLinearConv dq_direct runs: every group's channels a multiple of 4
 * (a tap's k groups of 4 lie in one pixel), W symmetric (every zb' 0:
 * no row sums), not one dq_pointwise reads in place. */
static bool dq_direct(const DqKernel *q)
{
	for (int64_t gi = 0; gi < q->groups; gi++)
		if (!q->w[gi].zb0)
			return false;
	return q->g.cg % 4 == 0 && !dq_pointwise(&q->g);
}

/* Sizes dq_direct's padded X (q->xt, and widened) and sets its taps'
 * offsets. */
static bool dq_direct_alloc(DqKernel *q)
{
	const QConv *g = &q->g;
	int64_t lh = (g->oh - 1) * g->sh + (g->kh - 1) * g->dh + 1;
	int64_t lw = (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1;
	q->pih = g->ph + g->ih > lh ? g->ph + g->ih : lh;
	q->piw = g->pw + g->iw > lw ? g->pw + g->iw : lw;
	size_t n = (size_t)(q->pih * q->piw * g->cin);
	q->need[DQB_XT] = n;
	q->need[DQB_XT16] = q->isa == DQ_AVX2 ? n * sizeof(int16_t) : 0;
	if (!(q->toff = malloc((size_t)(g->kh * g->kw) * sizeof(int64_t))))
		return false;
	for (int64_t ky = 0; ky < g->kh; ky++)
		for (int64_t kx = 0; kx < g->kw; kx++)
			q->toff[ky * g->kw + kx] =
				(ky * g->dh * q->piw + kx * g->dw) * g->cin;
	return true;
}

/* Image img of X into q->xt channels last, padded (dq_direct_alloc),
 * the pads holding za. */
static const uint8_t *dq_x_padded(DqKernel *q, const uint8_t *x, int64_t img,
				  int32_t za)
{
	const QConv *g = &q->g;
	int64_t isz = g->ih * g->iw, cin = g->cin, row = q->piw * cin;
	const uint8_t *xi = x + img * cin * isz;
	uint8_t flip = g->x_s8 ? 0x80 : 0;
	memset(q->xt, za, (size_t)(g->ph * row));
	for (int64_t iy = 0; iy < g->ih; iy++) {
		uint8_t *d = q->xt + (g->ph + iy) * row;
		memset(d, za, (size_t)(g->pw * cin));
		if (q->x_nhwc)
			flip_copy(xi + iy * g->iw * cin, 1, flip,
				  d + g->pw * cin, (size_t)(g->iw * cin));
		else
			dq_transpose8(xi + iy * g->iw, cin, g->iw, isz, flip,
				      d + g->pw * cin, cin);
		memset(d + (g->pw + g->iw) * cin, za,
		       (size_t)((q->piw - g->pw - g->iw) * cin));
	}
	memset(q->xt + (g->ph + g->ih) * row, za,
	       (size_t)((q->pih - g->ph - g->ih) * row));
#if DQ_HAVE_VNNI
	if (q->xt16)
		dq_widen(q->xt, 0, 1, q->pih * row, q->xt16);
#endif
	return q->xt;
}

#if DQ_HAVE_VNNI
/* The sums of output pixels p0..p0+nr of group gi into c (ldc) straight
 * from the padded X xp: each run of pixels along an output row is tiles
 * whose rows are sw pixels apart in xp, a tap's k at its offset (the
 * AVX-512 or AVX2 tiles: dq_direct is taken with them only). */
static void dq_direct_sums(const DqKernel *q,
					  const uint8_t *xp, int64_t gi,
					  int64_t p0, int64_t nr, int32_t *c,
					  int64_t ldc)
{
	const QConv *g = &q->g;
	const DqPacked *p = &q->w[gi];
	int64_t kq = g->cg / 4, ps = p->k4 * 16, lda = g->sw * g->cin;
	int ntap = (int)(g->kh * g->kw);
	for (int64_t i = 0; i < nr;) {
		int64_t oy = (p0 + i) / g->ow, ox = (p0 + i) % g->ow;
		int64_t run = g->ow - ox < nr - i ? g->ow - ox : nr - i;
		const uint8_t *a = xp + (oy * g->sh * q->piw + ox * g->sw) *
					       g->cin + gi * g->cg;
		int npmax = q->isa == DQ_VNNI512 ? DQ_NP : 1;
		for (int64_t p1 = 0; p1 < p->npan; p1 += npmax) {
			int np = (int)(p->npan - p1 < npmax ? p->npan - p1
							     : npmax);
			int64_t mt = npmax == 1 ? DQ_MR : dq_tile_rows(np);
			for (int64_t i0 = 0; i0 < run; i0 += mt) {
				int mr = (int)(run - i0 < mt ? run - i0 : mt);
				const uint8_t *ai = a + i0 * lda;
				const int8_t *b = p->b + p1 * ps;
				int32_t *ci = c + (i + i0) * ldc + p1 * 16;
				if (q->isa == DQ_VNNI512)
					dq_tile_any(mr, np, ntap, q->toff, kq,
						    ai, lda, b, ps, ci, ldc,
						    NULL, 0, 0);
				else if (q->isa == DQ_AVXVNNI)
					dq_tile_any_avxvnni(mr, ntap, q->toff,
							    kq, ai, lda, b, ci,
							    ldc, NULL, 0, 0);
				else /* the same pixels in q->xt16 */
					dq_tile_any_avx2(
						mr, ntap, q->toff, kq,
						q->xt16 + (ai - q->xt), lda, b,
						ci, ldc, NULL, 0, 0);
			}
		}
		i += run;
	}
}
#endif

/* What a QLinearConv's blocks of one image and group share. */
typedef struct DqqlPart {
	const uint8_t *xt;
	const int32_t *bias;
	int32_t za;
	double zp;
	bool exact, narrow;
	uint8_t *y;
} DqqlPart;

/* Rows p0.. (q->rows of them at most) of image img, group gi. */
static void dqql_block(const DqKernel *q, const DqqlPart *d, int64_t img,
		       int64_t gi, int64_t p0, int th)
{
	const QConv *g = &q->g;
	const DqPacked *p = &q->w[gi];
	int64_t osz = g->oh * g->ow, c0 = gi * g->mg, ldc = p->npan * 16;
	int64_t nr = osz - p0 < q->rows ? osz - p0 : q->rows;
	DqBlock b = dq_block(q, th);
#if DQ_HAVE_VNNI
	if (q->direct)
		dq_direct_sums(q, d->xt, gi, p0, nr, b.c, ldc);
	else
#endif
		dq_block_sums(q, d->xt, gi, p0, nr, d->za, !p->zb0, &b);
	DqOut o = { .bias = d->bias ? d->bias + c0 : NULL,
		    .mult = g->mult + c0,
		    .zp = d->zp,
		    .s8 = g->y_s8,
		    .narrow = d->narrow,
		    .t = q->y_nhwc ? d->y + (img * osz + p0) * g->cout + c0
				   : b.t,
		    .ldt = q->y_nhwc ? g->cout : g->mg };
#if DQ_HAVE_VNNI
	if (q->isa == DQ_VNNI512 && d->exact)
		dq_requant_rows(b.c, ldc, nr, g->mg, p, q->bz + c0, b.r, &o);
	else if (q->isa >= DQ_AVX2 && d->exact)
		dq_requant_rows_avx2(b.c, ldc, nr, g->mg, p, q->bz + c0, b.r,
				     &o);
	else
#endif
		dq_requant_c(b.c, ldc, nr, g->mg, p, d->za, b.r, &o);
	if (!q->y_nhwc)
		dq_untile(b.t, nr, g->mg, osz,
			  d->y + (img * g->cout + c0) * osz + p0);
}

static int dqql_run(void *state, const Tensor *const *in,
		    Tensor *const *out)
{
	DqKernel *q = state;
	QConv *g = &q->g;
	int64_t osz = g->oh * g->ow, nblk = (osz + q->rows - 1) / q->rows;
	int nt = q->threads;
	dq_bind(q);
	DqqlPart d = { .za = zp_at(in[2], 0) + (g->x_s8 ? 128 : 0),
		       .bias = q->bias_in ? in[8]->data : NULL,
		       .zp = zp_at(in[7], 0),
		       .y = tensor_mut(out[0]) };
	qconv_mults(g, in);
	d.exact = dq_requant_exact(g->mult, d.bias, g->cout, g->kk);
	d.narrow = dq_requant_narrow(g->mult, d.bias, g->cout, g->kk, d.zp);
	for (int64_t c = 0; c < g->cout; c++) /* bias - za cs */
		q->bz[c] = (int32_t)((d.bias ? (uint32_t)d.bias[c] : 0u) -
				     (uint32_t)d.za *
					     (uint32_t)q->w[c / g->mg].cs[c % g->mg]);
	for (int64_t img = 0; img < g->n; img++) {
		d.xt = q->direct ? dq_x_padded(q, in[0]->data, img, d.za)
				 : dq_x_image(q, in[0]->data, img);
		/* every group's blocks in one parallel loop */
		RT_PARALLEL_FOR
		for (int64_t bi = 0; bi < g->group * nblk; bi++)
			dqql_block(q, &d, img, bi / nblk, bi % nblk * q->rows,
				   rt_thread());
	}
	return 0;
}

/* QLinearConv on the VNNI kernel (its match recorded slots, t->lay):
 * X and Y as their layouts were decided, each channels-last if so. */
int quant_conv_build(RunCtx *s, Prepared *p, Task *t)
{
	(void)s;
	if (!t->lay)
		return 0; /* the plain-C kernel: row-major */
	DqKernel *q = t->fast.state;
	q->x_nhwc = rt_nhwc(p, t->n->inputs[0]);
	q->y_nhwc = rt_nhwc(p, t->n->outputs[0]);
	return 0;
}

/* QLinearConv node of t of geometry c (a group of more than one input
 * channel) on the VNNI kernel: 1 if taken, 0 if not (no VNNI, a zero
 * point of W not constant), -1 with an error.  X (slot 0) and Y (output
 * 0) may each be channels-last, each sparing a transpose
 * (quant_conv_build). */
static int dq_qlinear_conv(RunCtx *s, const Prepared *p,
			   Task *t, const QConv *c, FastKernel *k)
{
	const Node *n = t->n;
	const Value *w = rt_in_val(p, n, 3), *wz = rt_in_val(p, n, 5);
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	DqIsa isa = dq_isa();
	if (isa < DQ_AVX2 || c->cg < 2 || (wz && !wz->konst))
		return 0;
	DqKernel *q = calloc(1, sizeof(*q));
	if (!q)
		return error("out of memory");
	*q = (DqKernel){ .isa = isa, .conv = true, .groups = c->group,
			 .bias_in = rt_in_val(p, n, 8) != NULL, .g = *c };
	QConv *g = &q->g;
	g->x_s8 = x->dtype == DT_INT8;
	g->y_s8 = y->dtype == DT_INT8;
	g->mult = NULL;
	int64_t isz = g->ih * g->iw, osz = g->oh * g->ow;
	int64_t k4 = (g->kk + 3) & ~(int64_t)3;
	bool ok = (q->w = calloc((size_t)q->groups, sizeof(DqPacked))) &&
		  (g->mult = malloc((size_t)g->cout * sizeof(double))) &&
		  (q->bz = malloc((size_t)g->cout * sizeof(int32_t)));
	for (int64_t gi = 0; ok && gi < g->group; gi++)
		ok = dq_pack_conv(q, weights_of(w), w->dtype == DT_UINT8,
				  wz ? wz->konst : NULL, gi);
	/* blocks of whole output rows for dq_direct, whose tiles do not
	 * cross them */
	q->direct = ok && dq_direct(q);
	int64_t rows = q->direct ? (DQ_ROWS / g->ow > 1 ? DQ_ROWS / g->ow : 1) *
					   g->ow
				 : DQ_ROWS;
	q->rows = rows < osz ? rows : osz;
	if (ok && !q->direct)
		q->need[DQB_XT] = (size_t)(g->cin * isz);
	if (ok) {
		dq_blocks_size(q, dq_conv_threads(s, g), q->direct ? 0 : k4,
			       g->mg, true);
		ok = (!q->direct || dq_direct_alloc(q)) && dq_reserve(q, s);
	}
	if (!ok) {
		dq_free(q);
		return error("out of memory");
	}
	*k = (FastKernel){ .run = dqql_run, .free = dq_free, .state = q,
			   .threads = q->threads,
			   .variant = dq_isa_name(q->isa) };
	rt_task_slots(t);
	*rt_slot(t, 0) = (SlotLayout){ .group = 1, .prefers = true };
	*rt_slot(t, -1) = (SlotLayout){ .group = 2, .prefers = true };
	return 1;
}

/* QLinearMatMul on the same kernel: A's rows (int8 flipped to uint8, or
 * rows whose k is not a multiple of 4, copied into rows of k4 bytes), the
 * GEMM against B packed once, each block requantized into Y's rows as
 * qmm_requant does (the multipliers a * b / y in float). */
static int dqqmm_run(void *state, const Tensor *const *in,
		     Tensor *const *out)
{
	DqKernel *q = state;
	const DqPacked *p = &q->w[0];
	bool s8 = q->g.x_s8;
	const uint8_t *a = in[0]->data;
	int64_t lda = p->k, n = p->n, ldc = p->npan * 16;
	int32_t za = zp_at(in[2], 0) + (s8 ? 128 : 0);
	dq_bind(q);
	float sa = scale_at(in[1], 0), sy = scale_at(in[6], 0);
	uint8_t *y = tensor_mut(out[0]);
	for (int64_t j = 0; j < n; j++) {
		q->g.mult[j] = sa * scale_at(in[4], j) / sy;
		q->bz[j] = (int32_t)(0u - (uint32_t)za * (uint32_t)p->cs[j]);
	}
	double zp = zp_at(in[7], 0);
	bool exact = dq_requant_exact(q->g.mult, NULL, n, p->k);
	(void)exact; /* the vector forms' condition (x86-64) */
	bool narrow = dq_requant_narrow(q->g.mult, NULL, n, p->k, zp);
	for (int64_t r0 = 0; r0 < q->m; r0 += q->rows) {
		int64_t nr = q->m - r0 < q->rows ? q->m - r0 : q->rows;
		const uint8_t *ar = a + r0 * lda;
		int64_t ldr = lda;
		if (s8 || p->k4 != p->k) {
			for (int64_t i = 0; i < nr; i++)
				flip_copy(ar + i * lda, 1, s8 ? 0x80 : 0,
					  q->xq + i * p->k4, (size_t)p->k);
			ar = q->xq;
			ldr = p->k4;
		}
		if (!p->zb0)
			dq_rows(q->isa, ar, ldr, nr, p->k, za, q->r);
		dq_gemm(q->isa, nr, ar, ldr, p, q->c, NULL, q->a16);
		DqOut o = { .mult = q->g.mult, .zp = zp, .s8 = q->g.y_s8,
			    .narrow = narrow, .t = y + r0 * n, .ldt = n };
#if DQ_HAVE_VNNI
		if (q->isa == DQ_VNNI512 && exact)
			dq_requant_rows(q->c, ldc, nr, n, p, q->bz, q->r, &o);
		else if (q->isa >= DQ_AVX2 && exact)
			dq_requant_rows_avx2(q->c, ldc, nr, n, p, q->bz, q->r,
					     &o);
		else
#endif
			dq_requant_c(q->c, ldc, nr, n, p, za, q->r, &o);
	}
	return 0;
}

/* QLinearMatMul node n of A's rows m, a 2-D constant B of k x nn on the
 * VNNI kernel: 1 if taken, 0 if not (no VNNI, a zero point of B not
 * constant), -1 with an error. */
static int dq_qlinear_matmul(RunCtx *s, const Prepared *p, const Node *n,
			     int64_t m, int64_t kk, int64_t nn, FastKernel *k)
{
	const Value *b = rt_in_val(p, n, 3), *bz = rt_in_val(p, n, 5);
	const Value *a = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	const uint8_t *bw = weights_of(b);
	DqIsa isa = dq_isa();
	if (isa < DQ_AVX2 || !bw || b->shape.rank != 2 || (bz && !bz->konst))
		return 0;
	DqKernel *q = calloc(1, sizeof(*q));
	if (!q)
		return error("out of memory");
	*q = (DqKernel){ .isa = isa, .groups = 1, .m = m };
	q->g.x_s8 = a->dtype == DT_INT8;
	q->g.y_s8 = y->dtype == DT_INT8;
	int64_t k4 = (kk + 3) & ~(int64_t)3, ldc = (nn + 15) / 16 * 16;
	q->rows = DQ_ROWS < m ? DQ_ROWS : m;
	size_t rows = (size_t)q->rows;
	q->need[DQB_XQ] = rows * (size_t)k4;
	q->need[DQB_A16] = isa == DQ_AVX2 ? rows * (size_t)k4 * 2 : 0;
	q->need[DQB_R] = rows * sizeof(int32_t);
	q->need[DQB_C] = rows * (size_t)ldc * sizeof(int32_t);
	bool ok = (q->w = calloc(1, sizeof(DqPacked))) &&
		  (q->g.mult = malloc((size_t)nn * sizeof(double))) &&
		  (q->bz = malloc((size_t)nn * sizeof(int32_t))) &&
		  dq_reserve(q, s);
	if (ok)
		ok = dq_pack(&q->w[0], bw, kk, nn, nn, 1,
			     b->dtype == DT_UINT8, bz ? bz->konst : NULL, 0);
	if (!ok) {
		dq_free(q);
		return error("out of memory");
	}
	*k = (FastKernel){ .run = dqqmm_run, .free = dq_free, .state = q,
			   .variant = dq_isa_name(q->isa) };
	return 1;
}
