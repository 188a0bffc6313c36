/*
 * compiler/ops/misc.c - the rest of the numeric ops:
 *   quantization  QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
 *                 MatMulInteger, QLinearMatMul;
 *   linear algebra Einsum, Det;
 *   signal        DFT, STFT, HannWindow, HammingWindow, BlackmanWindow,
 *                 MelWeightMatrix;
 *   losses        NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss;
 *   detection     NonMaxSuppression (its row count depends on the data).
 * The losses' and NonMaxSuppression's kernels are in loss.c and detect.c.
 * The windows fold (their size is a shape parameter, so it is constant
 * in a specialised gear).  MatMulInteger, QLinearMatMul, Einsum and Det
 * have kernels: the integer products in double (exact for 8-bit
 * operands) through matmul_batched (matmul.c), Einsum as an explicit sum over
 * every label combination, Det by LU with partial pivoting.
 * The kernels of DFT, STFT and MelWeightMatrix are in signal.c.
 */
#include <math.h>
#include <string.h>

#include "opimpl.h"

#define DTS_Q8 (DTS(DT_INT8) | DTS(DT_UINT8))
#define DTS_IDX (DTS(DT_INT32) | DTS(DT_INT64))

/* Reads a constant scalar integer input i (a 0-D or one-element 1-D
 * tensor): 1 and *v if known, 0 if not constant, -1 on error. */
static int const_scalar(OpCtx *c, int i, int64_t *v)
{
	int32_t n = 0;
	int64_t buf[1];
	if (op_check_dtype(c, i, DTS_IDX) < 0 || op_check_scalar(c, i) < 0)
		return -1;
	int rc = op_const_ints(c, i, buf, &n, 1);
	if (rc <= 0)
		return rc;
	if (n != 1)
		return op_error(c, "input %d holds %d values, expected one", i,
				n);
	*v = buf[0];
	return 1;
}

/* ---- quantization ------------------------------------------------------- */

/* The scale (input si) and zero point (zi) of a linear (de)quantization
 * of input 0: scalars, or 1-D of X's dim 'axis' (per-axis), or with
 * block_size > 0, X's rank. */
static int check_qparams(OpCtx *c, int si, int zi)
{
	const Value *x = op_in(c, 0), *s = op_in(c, si), *z = op_in(c, zi);
	char b1[128], b2[128];
	int64_t block = attr_int(c->n, "block_size", 0);
	int32_t axis;
	if (z && s && !nn_shape_compatible(&s->shape, &z->shape))
		return op_error(c, "zero point '%s' has shape %s, but scale "
				"'%s' has %s; expected the same", z->name,
				shape_str(&z->shape, b1, sizeof(b1)), s->name,
				shape_str(&s->shape, b2, sizeof(b2)));
	if (!s || s->shape.rank <= 0 || x->shape.rank < 0 || block > 0)
		return 0;
	if (s->shape.rank == 1 && s->shape.dims[0] == 1 && c->opset < 13)
		return 0;
	if (s->shape.rank != 1)
		return op_error(c, "scale '%s' has shape %s, expected a scalar "
				"or a 1-D tensor", s->name,
				shape_str(&s->shape, b1, sizeof(b1)));
	if (op_axis(c, "axis", attr_int(c->n, "axis", 1), x->shape.rank,
		    &axis) < 0)
		return -1;
	int64_t d = x->shape.dims[axis], n = s->shape.dims[0];
	if (d >= 0 && n >= 0 && d != n && n != 1)
		return op_error(c, "scale '%s' has %lld values, but axis %d of "
				"input '%s' has %lld", s->name, (long long)n,
				axis, x->name, (long long)d);
	return 0;
}

/* QuantizeLinear: y has x's shape and the zero point's dtype; without a
 * zero point, output_dtype (opset 21) or uint8. */
int infer_quantize_linear(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	const Value *z = op_in(c, 2);
	int64_t odt = attr_int(c->n, "output_dtype", 0);
	if (!x || !op_need_in(c, 1) ||
	    op_check_dtype(c, 0, DTS_FLOAT | DTS(DT_INT32)) < 0 ||
	    op_check_dtype(c, 1, DTS_FLOAT | DTS(DT_INT32)) < 0 ||
	    check_qparams(c, 1, 2) < 0)
		return -1;
	if (odt && !dtype_valid((int)odt))
		return op_error(c, "output_dtype is %lld, not a known dtype",
				(long long)odt);
	if (z && odt && z->dtype != odt)
		return op_error(c, "output_dtype is %s, but the zero point is "
				"%s", dtype_name((int)odt), dtype_name(z->dtype));
	int dt = z ? z->dtype : odt ? (int)odt : DT_UINT8;
	op_set_out(c, 0, dt, &x->shape);
	return 0;
}

/* DequantizeLinear: y has x's shape and x_scale's dtype (float32 before
 * opset 19). */
int infer_dequantize_linear(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *s = x ? op_need_in(c, 1) : NULL;
	if (!s || op_check_dtype(c, 0, DTS_INT) < 0 ||
	    op_check_dtype(c, 1, DTS_FLOAT) < 0 ||
	    op_check_same_dtype(c, 2, 0) < 0 || check_qparams(c, 1, 2) < 0)
		return -1;
	op_set_out(c, 0, s->dtype, &x->shape);
	return 0;
}

/* DynamicQuantizeLinear: x (float) -> y (uint8, x's shape), y_scale
 * (float scalar), y_zero_point (uint8 scalar). */
int infer_dynamic_quantize_linear(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	Shape scalar = shape_of(0, NULL);
	if (!x || op_check_dtype(c, 0, DTS(DT_FLOAT)) < 0)
		return -1;
	op_set_out(c, 0, DT_UINT8, &x->shape);
	op_set_out(c, 1, DT_FLOAT, &scalar);
	op_set_out(c, 2, DT_UINT8, &scalar);
	return 0;
}

/* q rounded half to even and clamped to 0..255 (NaN: 0). */
static uint8_t sat_u8(float q)
{
	q = rintf(q);
	return q >= 255 ? 255 : q > 0 ? (uint8_t)q : 0;
}

/* The reference's float32 arithmetic: scale = (max(0, max x) - min(0,
 * min x)) / 255, zero point = sat(round(-min / scale)), y = sat(round(x
 * / scale) + zero point).  An all-zero x has scale 0: y and the zero
 * point are then 0. */
void dql_quantize(const float *x, int64_t n, uint8_t *y, float *scale,
		  uint8_t *zp)
{
	float lo = 0, hi = 0;
	for (int64_t i = 0; i < n; i++) {
		lo = x[i] < lo ? x[i] : lo;
		hi = x[i] > hi ? x[i] : hi;
	}
	float s = (hi - lo) / 255.0f;
	uint8_t z = s != 0 ? sat_u8(0 - lo / s) : 0;
	for (int64_t i = 0; i < n; i++)
		y[i] = s != 0 ? sat_u8(rintf(x[i] / s) + (float)z) : 0;
	*scale = s;
	*zp = z;
}

int run_dynamic_quantize_linear(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	Shape scalar = shape_of(0, NULL);
	if (!x || x->dtype != DT_FLOAT)
		return 0;
	Tensor *y = op_new_output_zeroed(c, 0, DT_UINT8, &x->shape);
	Tensor *ys = op_new_output_zeroed(c, 1, DT_FLOAT, &scalar);
	Tensor *yz = op_new_output_zeroed(c, 2, DT_UINT8, &scalar);
	if (!y || !ys || !yz)
		return -1;
	dql_quantize(x->data, shape_numel(&x->shape), tensor_mut(y),
		     tensor_mut(ys), tensor_mut(yz));
	op_set_const(c, 0, y);
	op_set_const(c, 1, ys);
	op_set_const(c, 2, yz);
	return 0;
}

/* For a fold of a linear (de)quantization: the scale (input si) and zero
 * point (zi, may be absent) as per-element lookups.  *axis_n is 1 for
 * per-tensor parameters, else the length along the axis with *inner the
 * elements after it.  0 if the parameters are not foldable (not
 * constant, a float scale other than float32, blocked). */
static int qparams(OpCtx *c, int si, int zi, const Tensor **s,
		   const Tensor **z, int64_t *axis_n, int64_t *inner)
{
	const Tensor *x = op_const_in(c, 0);
	int32_t axis;
	*s = op_const_in(c, si);
	*z = op_const_in(c, zi);
	if (!x || !*s || (op_in(c, zi) && !*z) || (*s)->dtype != DT_FLOAT ||
	    attr_int(c->n, "block_size", 0) > 0)
		return 0;
	*axis_n = shape_numel(&(*s)->shape);
	*inner = 1;
	if ((*s)->shape.rank == 0 || *axis_n == 1) {
		*axis_n = 1;
		return 1;
	}
	if (op_axis(c, "axis", attr_int(c->n, "axis", 1), x->shape.rank,
		    &axis) < 0)
		return -1;
	if (x->shape.dims[axis] != *axis_n)
		return 0;
	for (int32_t i = axis + 1; i < x->shape.rank; i++)
		*inner *= x->shape.dims[i];
	return 1;
}

/* y = saturate(round_half_even(x / scale) + zero_point): a float32 x is
 * divided in float32 (as the reference does), an int32 x in double.
 * Not folded: NaNs, a zero scale, output types other than (u)int8 and
 * (u)int16. */
int run_quantize_linear(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *s, *z;
	const Value *yv = op_out(c, 0);
	int64_t an, inner, lo, hi;
	int rc = qparams(c, 1, 2, &s, &z, &an, &inner);
	if (rc <= 0 || !yv)
		return rc;
	switch (yv->dtype) {
	case DT_UINT8: lo = 0, hi = UINT8_MAX; break;
	case DT_INT8: lo = INT8_MIN, hi = INT8_MAX; break;
	case DT_UINT16: lo = 0, hi = UINT16_MAX; break;
	case DT_INT16: lo = INT16_MIN, hi = INT16_MAX; break;
	default: return 0;
	}
	if (x->dtype != DT_FLOAT && x->dtype != DT_INT32)
		return 0;
	int64_t n = shape_numel(&x->shape);
	Tensor *y = op_new_tensor(c, yv->dtype, &x->shape);
	if (!y)
		return -1;
	for (int64_t i = 0; i < n; i++) {
		int64_t j = an == 1 ? 0 : (i / inner) % an;
		float sc = ((const float *)s->data)[j];
		double q;
		if (!(sc != 0) || isinf(sc))
			return 0;
		if (x->dtype == DT_FLOAT)
			q = (float)(((const float *)x->data)[i] / sc);
		else
			q = (double)tensor_get_i64(x, i) / sc;
		if (q != q)
			return 0;
		q = rint(q) + (double)(z ? tensor_get_i64(z, j) : 0);
		tensor_set_i64(y, i, q < (double)lo ? lo
				     : q > (double)hi ? hi
						      : (int64_t)q);
	}
	op_set_const(c, 0, y);
	return 0;
}

/* y = (x - zero_point) * scale, folded when x - zero_point is exact in
 * float32 (|x - zp| < 2^24), so the one rounding of the product is the
 * only one, as in float32 arithmetic. */
int run_dequantize_linear(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *s, *z;
	const Value *yv = op_out(c, 0);
	int64_t an, inner;
	int rc = qparams(c, 1, 2, &s, &z, &an, &inner);
	if (rc <= 0 || !yv)
		return rc;
	if (!(DTS_INT & DTS(x->dtype)) || x->dtype == DT_UINT64 ||
	    yv->dtype != DT_FLOAT)
		return 0;
	int64_t n = shape_numel(&x->shape);
	Tensor *y = op_new_tensor(c, DT_FLOAT, &x->shape);
	if (!y)
		return -1;
	for (int64_t i = 0; i < n; i++) {
		int64_t j = an == 1 ? 0 : (i / inner) % an;
		int64_t d = tensor_get_i64(x, i) - (z ? tensor_get_i64(z, j) : 0);
		if (d <= -(INT64_C(1) << 24) || d >= INT64_C(1) << 24)
			return 0;
		tensor_set_f64(y, i, (double)d * ((const float *)s->data)[j]);
	}
	op_set_const(c, 0, y);
	return 0;
}

/* numpy.matmul's shape rule for inputs ai and bi (see matmul.c). */
int matmul_shape(OpCtx *c, int ai, int bi, Shape *y)
{
	const Value *a = op_in(c, ai), *b = op_in(c, bi);
	char sa[128], sb[128];
	if (op_check_rank(c, ai, 1, MAX_RANK) < 0 ||
	    op_check_rank(c, bi, 1, MAX_RANK) < 0)
		return -1;
	const Shape *as = &a->shape, *bs = &b->shape;
	*y = shape_unknown();
	if (as->rank < 0 || bs->rank < 0)
		return 0;
	int32_t ra = as->rank, rb = bs->rank;
	int64_t ka = as->dims[ra - 1], kb = bs->dims[rb >= 2 ? rb - 2 : 0];
	if (ka >= 0 && kb >= 0 && ka != kb)
		return op_error(c, "inner dims differ: input %d ('%s', %s) has "
				"%lld, input %d ('%s', %s) has %lld", ai,
				a->name, shape_str(as, sa, sizeof(sa)),
				(long long)ka, bi, b->name,
				shape_str(bs, sb, sizeof(sb)), (long long)kb);
	Shape ba = shape_of(ra >= 2 ? ra - 2 : 0, as->dims);
	Shape bb = shape_of(rb >= 2 ? rb - 2 : 0, bs->dims);
	if (op_broadcast(c, &ba, &bb, y) < 0)
		return -1;
	if (ra >= 2)
		y->dims[y->rank++] = as->dims[ra - 2];
	if (rb >= 2)
		y->dims[y->rank++] = bs->dims[rb - 1];
	return 0;
}

/* MatMulInteger: A, B (u)int8 with optional zero points -> int32. */
int infer_matmul_integer(OpCtx *c)
{
	Shape y;
	if (!op_need_in(c, 0) || !op_need_in(c, 1) ||
	    op_check_dtype(c, 0, DTS_Q8) < 0 || op_check_dtype(c, 1, DTS_Q8) < 0 ||
	    op_check_same_dtype(c, 2, 0) < 0 || op_check_same_dtype(c, 3, 1) < 0 ||
	    matmul_shape(c, 0, 1, &y) < 0)
		return -1;
	op_set_out(c, 0, DT_INT32, &y);
	return 0;
}

/* QLinearMatMul: a, a_scale, a_zero_point, b, b_scale, b_zero_point,
 * y_scale, y_zero_point -> y of y_zero_point's dtype. */
int infer_qlinear_matmul(OpCtx *c)
{
	Shape y;
	for (int i = 0; i < 8; i++)
		if (!op_need_in(c, i))
			return -1;
	if (op_check_dtype(c, 0, DTS_Q8) < 0 || op_check_dtype(c, 3, DTS_Q8) < 0 ||
	    op_check_dtype(c, 7, DTS_Q8) < 0 || op_check_same_dtype(c, 2, 0) < 0 ||
	    op_check_same_dtype(c, 5, 3) < 0 || matmul_shape(c, 0, 3, &y) < 0)
		return -1;
	op_set_out(c, 0, op_in(c, 7)->dtype, &y);
	return 0;
}

/* A matmul operand t (A if rows, else B) as doubles minus its zero
 * point zp: one value, or one per row of A / column of B. */
static double *mm_operand(OpCtx *c, const Tensor *t, const Tensor *zp,
			  bool rows)
{
	int64_t n = shape_numel(&t->shape), nz = zp ? shape_numel(&zp->shape) : 0;
	int64_t cols = t->shape.dims[t->shape.rank - 1];
	bool vec = t->shape.rank < 2;
	double *d = op_scratch_zeroed(c, n * sizeof(double));
	for (int64_t i = 0; d && i < n; i++) {
		int64_t line = vec ? 0 : rows ? i / cols : i % cols;
		d[i] = tensor_get_f64(t, i) -
		       (nz ? tensor_get_f64(zp, nz > 1 ? line % nz : 0) : 0);
	}
	return d;
}

double *int_matmul_of(OpCtx *c, const Tensor *a, const Tensor *az,
		      const Tensor *b, const Tensor *bz)
{
	const Shape *ys = &op_out(c, 0)->shape;
	double *ad = mm_operand(c, a, az, true);
	double *bd = mm_operand(c, b, bz, false);
	double *yd = op_scratch_zeroed(c, shape_numel(ys) * sizeof(double));
	if (!ad || !bd || !yd ||
	    matmul_batched(c, MM_F64, &a->shape, ad, &b->shape, bd, ys, yd) < 0)
		return NULL;
	return yd;
}

static double *int_matmul(OpCtx *c, int ai, int azi, int bi, int bzi)
{
	return int_matmul_of(c, op_const_in(c, ai), op_const_in(c, azi),
			     op_const_in(c, bi), op_const_in(c, bzi));
}

/* MatMulInteger: int32 Y = (A - a_zero_point) x (B - b_zero_point), the
 * zero points one value or one per row of A / column of B. */
int run_matmul_integer(OpCtx *c)
{
	if (!op_all_const(c))
		return 0;
	double *yd = int_matmul(c, 0, 2, 1, 3);
	return yd ? set_int32_output(c, yd) : -1;
}

/* QLinearMatMul: y = saturate(round((a - a_zp) x (b - b_zp) * a_scale *
 * b_scale / y_scale) + y_zp), a's scale one value or one per row and
 * b's one value or one per column. */
int run_qlinear_matmul(OpCtx *c)
{
	if (!op_all_const(c))
		return 0;
	const Tensor *as = op_const_in(c, 1), *bs = op_const_in(c, 4);
	const Tensor *ys = op_const_in(c, 6), *yz = op_const_in(c, 7);
	const Shape *sh = &op_out(c, 0)->shape;
	int64_t n = sh->rank >= 1 && op_in(c, 3)->shape.rank >= 2
			    ? sh->dims[sh->rank - 1]
			    : 1;
	int64_t m = op_in(c, 0)->shape.rank >= 2
			    ? op_in(c, 0)->shape.dims[op_in(c, 0)->shape.rank - 2]
			    : 1;
	int64_t nas = shape_numel(&as->shape), nbs = shape_numel(&bs->shape);
	double *yd = int_matmul(c, 0, 2, 3, 5);
	Tensor *y = yd ? op_new_output_zeroed(c, 0, yz->dtype, sh) : NULL;
	if (!y)
		return -1;
	float sy = (float)tensor_get_f64(ys, 0);
	int64_t zp = tensor_get_i64(yz, 0);
	for (int64_t i = 0; i < shape_numel(sh); i++) {
		float sa = (float)tensor_get_f64(as, nas > 1 ? i / n % m % nas : 0);
		float sb = (float)tensor_get_f64(bs, nbs > 1 ? i % n % nbs : 0);
		q8_store(y, i, yd[i] * (sa * sb / sy), zp);
	}
	op_set_const(c, 0, y);
	return 0;
}

/* ---- Einsum ------------------------------------------------------------- */

enum { EIN_MAX_TERMS = 64, EIN_LABELS = 128 };

/* One term of an equation: labels in order, ell = index of "..." in it
 * (-1 if none). */
typedef struct Term {
	char lab[MAX_RANK + 1];
	int32_t n, ell;
} Term;

static int parse_term(OpCtx *c, const char *s, size_t len, Term *t)
{
	t->n = 0;
	t->ell = -1;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];
		if (ch == ' ')
			continue;
		if (ch == '.') {
			if (t->ell >= 0 || i + 2 >= len || s[i + 1] != '.' ||
			    s[i + 2] != '.')
				return op_error(c, "equation has a malformed or "
						"repeated '...'");
			t->ell = t->n;
			i += 2;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')))
			return op_error(c, "equation has '%c'; expected letters, "
					"',', '...' and '->'", ch);
		if (t->n >= MAX_RANK)
			return op_error(c, "equation has a term of more than %d "
					"labels", MAX_RANK);
		t->lab[t->n++] = ch;
	}
	return 0;
}

/* Combines two dims of one label: equal, or 1 against any; unknown
 * against a known d gives d (it must be d or 1 to run). */
static bool label_dim(int64_t a, int64_t b, int64_t *r)
{
	if (a == b || b == 1)
		*r = a;
	else if (a == 1 || a == DIM_UNKNOWN)
		*r = b;
	else if (b == DIM_UNKNOWN)
		*r = a;
	else
		return false;
	return true;
}

/* Parses the input terms of the equation eq (one per node input) into
 * terms[0..*nterms); *arrow points at its "->", or is NULL. */
static int parse_inputs(OpCtx *c, const char *eq, Term *terms,
			int32_t *nterms, const char **arrow)
{
	if (!eq)
		return op_error(c, "attribute equation is required");
	if (c->n->ninputs < 1)
		return op_error(c, "expected at least one input");
	*arrow = strstr(eq, "->");
	*nterms = 0;
	const char *end = *arrow ? *arrow : eq + strlen(eq);
	for (const char *p = eq;;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *e = comma ? comma : end;
		if (*nterms == EIN_MAX_TERMS)
			return op_error(c, "equation has more than %d terms",
					EIN_MAX_TERMS);
		if (parse_term(c, p, (size_t)(e - p), &terms[(*nterms)++]) < 0)
			return -1;
		if (!comma)
			break;
		p = comma + 1;
	}
	if (*nterms != c->n->ninputs)
		return op_error(c, "equation '%s' has %d input terms, but the "
				"node has %d inputs", eq, *nterms,
				c->n->ninputs);
	return 0;
}

/* Einsum: the output's labels come from the explicit right-hand side, or
 * (implicit form) the broadcast "..." dims then every label used once, in
 * alphabetical (ASCII) order.  A label's dims must agree across terms (or
 * be 1); the "..." dims broadcast. */
int infer_einsum(OpCtx *c)
{
	const char *eq = attr_str(c->n, "equation", NULL), *arrow;
	Term terms[EIN_MAX_TERMS], out;
	int64_t dim[EIN_LABELS];
	int32_t count[EIN_LABELS] = { 0 }, nterms;
	Shape ell = { .rank = 0 };
	bool ell_known = true;
	char b1[128];
	if (parse_inputs(c, eq, terms, &nterms, &arrow) < 0)
		return -1;
	for (int i = 0; i < EIN_LABELS; i++)
		dim[i] = -2; /* unseen */
	int dt = DT_UNDEFINED;
	for (int k = 0; k < nterms; k++) {
		Value *v = op_need_in(c, k);
		const Term *t = &terms[k];
		if (!v || op_check_dtype(c, k, DTS_NUMERIC) < 0)
			return -1;
		if (k && v->dtype != dt)
			return op_check_same_dtype(c, k, 0);
		dt = v->dtype;
		const Shape *s = &v->shape;
		int32_t extra = s->rank - t->n; /* dims under "..." */
		if (s->rank >= 0 && (t->ell < 0 ? extra != 0 : extra < 0))
			return op_error(c, "input %d ('%s') has shape %s, but "
					"term %d of '%s' has %d labels%s", k,
					v->name, shape_str(s, b1, sizeof(b1)),
					k, eq, t->n,
					t->ell >= 0 ? " and '...'" : "");
		if (t->ell >= 0 && s->rank < 0)
			ell_known = false;
		if (t->ell >= 0 && s->rank >= 0) {
			Shape e = shape_of(extra, s->dims + t->ell);
			if (op_broadcast(c, &ell, &e, &ell) < 0)
				return -1;
		}
		for (int32_t i = 0; i < t->n; i++) {
			int l = t->lab[i];
			int32_t at = t->ell >= 0 && i >= t->ell && s->rank >= 0
					     ? i + extra
					     : i;
			int64_t d = s->rank >= 0 ? s->dims[at] : DIM_UNKNOWN;
			count[l]++;
			if (dim[l] == -2)
				dim[l] = d;
			else if (!label_dim(dim[l], d, &dim[l]))
				return op_error(c, "label '%c' has dim %lld in "
						"input %d but %lld before", l,
						(long long)d, k,
						(long long)dim[l]);
		}
	}
	if (arrow) {
		if (parse_term(c, arrow + 2, strlen(arrow + 2), &out) < 0)
			return -1;
		for (int32_t i = 0; i < out.n; i++) {
			if (dim[(int)out.lab[i]] == -2)
				return op_error(c, "output label '%c' is not in "
						"any input term", out.lab[i]);
			for (int32_t j = 0; j < i; j++)
				if (out.lab[j] == out.lab[i])
					return op_error(c, "output label '%c' "
							"is repeated",
							out.lab[i]);
		}
	} else {
		out.n = 0;
		out.ell = 0;
		for (int l = 0; l < EIN_LABELS; l++) {
			if (count[l] != 1)
				continue;
			if (out.n == MAX_RANK)
				return op_error(c, "output rank exceeds %d",
						MAX_RANK);
			out.lab[out.n++] = (char)l;
		}
	}
	Shape y = { .rank = 0 };
	if (out.ell >= 0 && !ell_known) {
		y = shape_unknown();
		op_set_out(c, 0, dt, &y);
		return 0;
	}
	int32_t rank = out.n + (out.ell >= 0 ? ell.rank : 0);
	if (rank > MAX_RANK)
		return op_error(c, "output rank %d exceeds %d", rank, MAX_RANK);
	for (int32_t i = 0; i <= out.n; i++) {
		if (i == out.ell)
			for (int32_t e = 0; e < ell.rank; e++)
				y.dims[y.rank++] = ell.dims[e];
		if (i < out.n)
			y.dims[y.rank++] = dim[(int)out.lab[i]];
	}
	op_set_out(c, 0, dt, &y);
	return 0;
}

/* The labels of an equation with the "..." dims as labels 1..nell
 * (right-aligned in each term): per input k its labels lab[k][0..rank),
 * and the output's. */
typedef struct EinPlan {
	int32_t nell;
	int32_t n[EIN_MAX_TERMS];
	uint8_t lab[EIN_MAX_TERMS][MAX_RANK];
	int32_t nout;
	uint8_t out[MAX_RANK];
} EinPlan;

/* Term t of a tensor of rank r as labels, "..." as its last labels of
 * 1..nell. */
static int32_t expand_term(const Term *t, int32_t r, int32_t nell,
			   uint8_t *lab)
{
	int32_t extra = t->ell >= 0 ? r - t->n : 0, k = 0;
	for (int32_t i = 0; i <= t->n; i++) {
		if (i == t->ell)
			for (int32_t e = 0; e < extra; e++)
				lab[k++] = (uint8_t)(nell - extra + e + 1);
		if (i < t->n)
			lab[k++] = (uint8_t)t->lab[i];
	}
	return k;
}

static int ein_plan(OpCtx *c, EinPlan *p)
{
	const char *eq = attr_str(c->n, "equation", NULL), *arrow;
	Term terms[EIN_MAX_TERMS], out;
	int32_t nterms, count[EIN_LABELS] = { 0 };
	if (parse_inputs(c, eq, terms, &nterms, &arrow) < 0)
		return -1;
	p->nell = 0;
	for (int32_t k = 0; k < nterms; k++) {
		int32_t extra = op_in(c, k)->shape.rank - terms[k].n;
		if (terms[k].ell >= 0 && extra > p->nell)
			p->nell = extra;
		for (int32_t i = 0; i < terms[k].n; i++)
			count[(int)terms[k].lab[i]]++;
	}
	for (int32_t k = 0; k < nterms; k++)
		p->n[k] = expand_term(&terms[k], op_in(c, k)->shape.rank,
				      p->nell, p->lab[k]);
	if (arrow) {
		if (parse_term(c, arrow + 2, strlen(arrow + 2), &out) < 0)
			return -1;
	} else {
		out.n = 0;
		out.ell = 0;
		for (int l = 0; l < EIN_LABELS && out.n < MAX_RANK; l++)
			if (count[l] == 1)
				out.lab[out.n++] = (char)l;
	}
	if (out.n + (out.ell >= 0 ? p->nell : 0) != op_out(c, 0)->shape.rank)
		return op_error(c, "output rank does not match the equation");
	p->nout = expand_term(&out, out.n + (out.ell >= 0 ? p->nell : 0),
			      p->nell, p->out);
	return 0;
}

/* A copy of input t (strides st per label) with its labels in the order
 * lab[0..n) (dims dim[label]): a label it lacks repeats it (stride 0). */
static Tensor *ein_arrange(OpCtx *c, const Tensor *t, const int64_t *st,
			   const uint8_t *lab, int32_t n, const int64_t *dim)
{
	Shape s = { .rank = n };
	int64_t sst[MAX_RANK];
	for (int32_t i = 0; i < n; i++) {
		s.dims[i] = dim[lab[i]];
		sst[i] = st[lab[i]];
	}
	Tensor *r = op_new_tensor(c, t->dtype, &s);
	if (r)
		tn_copy_strided(r, n, s.dims, t, 0, sst);
	return r;
}

/* Two-input Einsum in float or double as one batched matrix product:
 * the labels split into batch (both inputs and the output), left (A and
 * the output), right (B and the output) and summed (not in the output,
 * absent from one input = a repeat); A is arranged [batch, left, sum],
 * B [batch, sum, right], and the product [batch, left, right] is copied
 * into the output's label order.  Repeated labels of one term read its
 * diagonal through their summed strides. */
static int ein_gemm(OpCtx *c, const EinPlan *p, const int64_t *dim,
		    int64_t (*st)[EIN_LABELS], Tensor *y)
{
	bool in_a[EIN_LABELS] = { false }, in_b[EIN_LABELS] = { false };
	bool in_y[EIN_LABELS] = { false };
	uint8_t la[3 * MAX_RANK], lb[3 * MAX_RANK], ly[3 * MAX_RANK];
	int32_t nbat = 0, nl = 0, nr = 0, nk = 0;
	uint8_t bat[MAX_RANK], left[MAX_RANK], right[MAX_RANK];
	uint8_t sum[2 * MAX_RANK];
	for (int32_t i = 0; i < p->n[0]; i++)
		in_a[p->lab[0][i]] = true;
	for (int32_t i = 0; i < p->n[1]; i++)
		in_b[p->lab[1][i]] = true;
	for (int32_t i = 0; i < p->nout; i++) {
		uint8_t l = p->out[i];
		in_y[l] = true;
		if (in_a[l] && in_b[l])
			bat[nbat++] = l;
		else if (in_a[l])
			left[nl++] = l;
		else
			right[nr++] = l;
	}
	for (int l = 0; l < EIN_LABELS; l++)
		if ((in_a[l] || in_b[l]) && !in_y[l])
			sum[nk++] = (uint8_t)l;
	if (nbat + nl + nk > MAX_RANK || nbat + nk + nr > MAX_RANK)
		return 0; /* not arranged: the explicit sum does it */
	int64_t nb = 1, m = 1, n = 1, k = 1;
	int32_t r = 0;
	for (int32_t i = 0; i < nbat; i++)
		nb *= dim[la[r++] = bat[i]];
	for (int32_t i = 0; i < nl; i++)
		m *= dim[la[r++] = left[i]];
	for (int32_t i = 0; i < nk; i++)
		k *= dim[la[r++] = sum[i]];
	memcpy(lb, bat, (size_t)nbat);
	memcpy(lb + nbat, sum, (size_t)nk);
	memcpy(lb + nbat + nk, right, (size_t)nr);
	for (int32_t i = 0; i < nr; i++)
		n *= dim[right[i]];
	memcpy(ly, bat, (size_t)nbat);
	memcpy(ly + nbat, left, (size_t)nl);
	memcpy(ly + nbat + nl, right, (size_t)nr);
	Tensor *ta = ein_arrange(c, op_const_in(c, 0), st[0], la, r, dim);
	Tensor *tb = ein_arrange(c, op_const_in(c, 1), st[1], lb,
				 nbat + nk + nr, dim);
	Shape s3 = { .rank = 3, .dims = { nb, m, n } };
	Tensor *tp = op_new_tensor(c, y->dtype, &s3);
	if (!ta || !tb || !tp)
		return -1;
	Shape sa = { .rank = 3, .dims = { nb, m, k } };
	Shape sb = { .rank = 3, .dims = { nb, k, n } };
	if (matmul_batched(c, y->dtype == DT_FLOAT ? MM_F32 : MM_F64, &sa,
			   ta->data, &sb, tb->data, &s3, tensor_mut(tp)) < 0)
		return -1;
	/* the product's strides per label, read in the output's order */
	int64_t pst[EIN_LABELS], stride = 1, sst[MAX_RANK];
	for (int32_t i = nbat + nl + nr - 1; i >= 0; i--) {
		pst[ly[i]] = stride;
		stride *= dim[ly[i]];
	}
	for (int32_t i = 0; i < p->nout; i++)
		sst[i] = pst[p->out[i]];
	tn_copy_strided(y, p->nout, y->shape.dims, tp, 0, sst);
	return 1;
}

/* Einsum: two float or double inputs as a matrix product (ein_gemm);
 * otherwise directly: every combination of the labels' values adds the
 * product of the inputs' elements to its output element; floats in
 * double, integers in wrapping uint64. */
int run_einsum(OpCtx *c)
{
	EinPlan p;
	int64_t dim[EIN_LABELS], st[EIN_MAX_TERMS][EIN_LABELS];
	int64_t idx[EIN_LABELS] = { 0 }, ldim[EIN_LABELS];
	uint8_t order[EIN_LABELS];
	int32_t nl = 0, nin = c->n->ninputs;
	bool seen[EIN_LABELS] = { false };
	if (!op_all_const(c))
		return 0;
	if (ein_plan(c, &p) < 0)
		return -1;
	const Value *yv = op_out(c, 0);
	bool ints = (DTS_INT & DTS(yv->dtype)) != 0;
	for (int l = 0; l < EIN_LABELS; l++)
		dim[l] = 1;
	for (int32_t k = 0; k < nin; k++)
		for (int32_t i = 0; i < p.n[k]; i++) {
			int64_t d = op_in(c, k)->shape.dims[i];
			if (d != 1)
				dim[p.lab[k][i]] = d;
		}
	/* the output's labels first, so the output index is the prefix */
	for (int32_t i = 0; i < p.nout; i++)
		if (!seen[p.out[i]]) {
			seen[p.out[i]] = true;
			order[nl++] = p.out[i];
		}
	int32_t nkeep = nl;
	for (int32_t k = 0; k < nin; k++)
		for (int32_t i = 0; i < p.n[k]; i++)
			if (!seen[p.lab[k][i]]) {
				seen[p.lab[k][i]] = true;
				order[nl++] = p.lab[k][i];
			}
	memset(st, 0, sizeof(st));
	for (int32_t k = 0; k < nin; k++) {
		const Shape *s = &op_in(c, k)->shape;
		int64_t stride = 1;
		for (int32_t i = p.n[k] - 1; i >= 0; i--) {
			if (s->dims[i] != 1)
				st[k][p.lab[k][i]] += stride;
			stride *= s->dims[i];
		}
	}
	int64_t total = 1, red = 1;
	for (int32_t i = 0; i < nl; i++) {
		ldim[i] = dim[order[i]];
		total *= ldim[i];
		if (i >= nkeep)
			red *= ldim[i];
	}
	if (nin == 2 && (yv->dtype == DT_FLOAT || yv->dtype == DT_DOUBLE)) {
		Tensor *y = op_new_output_zeroed(c, 0, yv->dtype, &yv->shape);
		int rc = y ? ein_gemm(c, &p, dim, st, y) : -1;
		if (rc < 0)
			return -1;
		if (rc > 0) {
			op_set_const(c, 0, y);
			return 0;
		}
	}
	void *in[EIN_MAX_TERMS];
	for (int32_t k = 0; k < nin; k++) {
		const Tensor *t = op_const_in(c, k);
		int64_t n = shape_numel(&t->shape);
		if (!(in[k] = op_scratch_zeroed(c, n * 8)))
			return -1;
		for (int64_t i = 0; i < n; i++) {
			if (ints)
				((uint64_t *)in[k])[i] = (uint64_t)tensor_get_i64(t, i);
			else
				((double *)in[k])[i] = tensor_get_f64(t, i);
		}
	}
	Tensor *y = op_new_output_zeroed(c, 0, yv->dtype, &yv->shape);
	if (!y)
		return -1;
	double fs = 0;
	uint64_t us = 0;
	for (int64_t t = 0; t < total; t++) {
		double fp = 1;
		uint64_t up = 1;
		for (int32_t k = 0; k < nin; k++) {
			int64_t off = 0;
			for (int32_t i = 0; i < nl; i++)
				off += idx[i] * st[k][order[i]];
			if (ints)
				up *= ((uint64_t *)in[k])[off];
			else
				fp *= ((double *)in[k])[off];
		}
		fs += fp;
		us += up;
		if ((t + 1) % red == 0) {
			if (ints)
				tensor_set_i64(y, t / red, (int64_t)us);
			else
				tensor_set_f64(y, t / red, fs);
			fs = 0;
			us = 0;
		}
		tn_next(nl, ldim, idx);
	}
	op_set_const(c, 0, y);
	return 0;
}

/* ---- Det ---------------------------------------------------------------- */

/* Det: X [*, M, M] -> Y [*]. */
int infer_det(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	char buf[128];
	if (!x || op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_rank(c, 0, 2, MAX_RANK) < 0)
		return -1;
	Shape y = x->shape;
	if (y.rank >= 0) {
		int64_t a = y.dims[y.rank - 2], b = y.dims[y.rank - 1];
		if (a >= 0 && b >= 0 && a != b)
			return op_error(c, "input '%s' has shape %s; expected "
					"square matrices", x->name,
					shape_str(&y, buf, sizeof(buf)));
		y.rank -= 2;
	}
	op_set_out(c, 0, x->dtype, &y);
	return 0;
}

/* The determinant of the m x m matrix a (overwritten): LU with partial
 * pivoting. */
static double det_lu(double *a, int64_t m)
{
	double det = 1;
	for (int64_t j = 0; j < m; j++) {
		int64_t piv = j;
		for (int64_t i = j + 1; i < m; i++)
			if (fabs(a[i * m + j]) > fabs(a[piv * m + j]))
				piv = i;
		if (a[piv * m + j] == 0)
			return 0;
		if (piv != j) {
			det = -det;
			for (int64_t k = 0; k < m; k++) {
				double t = a[j * m + k];
				a[j * m + k] = a[piv * m + k];
				a[piv * m + k] = t;
			}
		}
		det *= a[j * m + j];
		for (int64_t i = j + 1; i < m; i++) {
			double f = a[i * m + j] / a[j * m + j];
			for (int64_t k = j + 1; k < m; k++)
				a[i * m + k] -= f * a[j * m + k];
		}
	}
	return det;
}

int run_det(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	if (!x)
		return 0;
	const Shape *s = &x->shape;
	int64_t m = s->dims[s->rank - 1], mm = m * m;
	int64_t nb = mm ? shape_numel(s) / mm : shape_numel(&op_out(c, 0)->shape);
	Tensor *y = op_new_output_zeroed(c, 0, x->dtype, &op_out(c, 0)->shape);
	double *a = op_scratch_zeroed(c, (mm ? mm : 1) * sizeof(double));
	if (!y || !a)
		return -1;
	for (int64_t b = 0; b < nb; b++) {
		for (int64_t i = 0; i < mm; i++)
			a[i] = tensor_get_f64(x, b * mm + i);
		tensor_set_f64(y, b, det_lu(a, m));
	}
	op_set_const(c, 0, y);
	return 0;
}

/* ---- DFT, STFT ---------------------------------------------------------- */

/* DFT: input [batch, n1..nk, 1 or 2] -> the same with 2 last (complex)
 * and, on the transformed axis, dft_length (input 1) or the input's size,
 * floor(that / 2) + 1 with onesided=1.  The axis is an attribute
 * (default 1) up to opset 19, input 2 (default -2) since. */
int infer_dft(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	bool onesided = attr_int(c->n, "onesided", 0) != 0;
	int64_t len = DIM_UNKNOWN, axis = 1;
	int rc = 1, rl = 0;
	char buf[128];
	if (!x || op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_rank(c, 0, 2, MAX_RANK) < 0)
		return -1;
	if (c->opset >= 20) {
		axis = -2;
		if (op_in(c, 2) && (rc = const_scalar(c, 2, &axis)) < 0)
			return -1;
	} else {
		axis = attr_int(c->n, "axis", 1);
	}
	if (op_in(c, 1) && (rl = const_scalar(c, 1, &len)) < 0)
		return -1;
	if (rl && len < 1)
		return op_error(c, "dft_length is %lld, expected >= 1",
				(long long)len);
	Shape y = x->shape;
	if (y.rank < 0) {
		op_set_out(c, 0, x->dtype, &y);
		return 0;
	}
	int64_t last = y.dims[y.rank - 1];
	if (last >= 0 && last != 1 && last != 2)
		return op_error(c, "input '%s' has shape %s; its last dim must "
				"be 1 (real) or 2 (complex)", x->name,
				shape_str(&y, buf, sizeof(buf)));
	y.dims[y.rank - 1] = 2;
	if (!rc) { /* axis unknown: any signal axis may change */
		for (int32_t i = 1; i < y.rank - 1; i++)
			y.dims[i] = DIM_UNKNOWN;
		op_set_out(c, 0, x->dtype, &y);
		nn_mark_dep(c, 0);
		return 0;
	}
	int32_t a;
	if (op_axis(c, "axis", axis, y.rank, &a) < 0)
		return -1;
	if (a == y.rank - 1)
		return op_error(c, "axis %lld is the real/imaginary axis, "
				"expected a signal axis", (long long)axis);
	int64_t n = op_in(c, 1) ? (rl ? len : DIM_UNKNOWN) : y.dims[a];
	if (onesided && n >= 0)
		n = n / 2 + 1;
	y.dims[a] = n;
	op_set_out(c, 0, x->dtype, &y);
	if (op_in(c, 1) && !rl)
		nn_mark_dep(c, 0);
	return 0;
}

/* STFT: signal [batch, length, 1 or 2], frame_step, optional window
 * [frame_length], optional frame_length -> [batch, frames, bins, 2] with
 * frames = (length - frame_length) / frame_step + 1 and bins =
 * frame_length / 2 + 1 if onesided (the default), else frame_length. */
int infer_stft(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	const Value *w = op_in(c, 2);
	bool onesided = attr_int(c->n, "onesided", 1) != 0;
	int64_t step = DIM_UNKNOWN, flen = DIM_UNKNOWN, wlen = DIM_UNKNOWN;
	int rs, rf = 0;
	char buf[128];
	if (!x || !op_need_in(c, 1) || op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_same_dtype(c, 2, 0) < 0 || op_check_rank(c, 0, 3, 3) < 0 ||
	    op_check_rank(c, 2, 1, 1) < 0 || (rs = const_scalar(c, 1, &step)) < 0 ||
	    (op_in(c, 3) && (rf = const_scalar(c, 3, &flen)) < 0))
		return -1;
	if (rs && step < 1)
		return op_error(c, "frame_step is %lld, expected >= 1",
				(long long)step);
	if (w)
		wlen = shape_dim(&w->shape, 0);
	if (rf && flen < 1)
		return op_error(c, "frame_length is %lld, expected >= 1",
				(long long)flen);
	if (rf && wlen >= 0 && wlen != flen)
		return op_error(c, "window has %lld values, but frame_length is "
				"%lld", (long long)wlen, (long long)flen);
	if (!op_in(c, 3))
		flen = wlen;
	if (!op_in(c, 3) && !w)
		return op_error(c, "needs a window or a frame_length");
	int64_t len = shape_dim(&x->shape, 1), last = shape_dim(&x->shape, 2);
	if (last >= 0 && last != 1 && last != 2)
		return op_error(c, "signal '%s' has shape %s; its last dim must "
				"be 1 (real) or 2 (complex)", x->name,
				shape_str(&x->shape, buf, sizeof(buf)));
	Shape y = shape_of(4, (int64_t[]){ shape_dim(&x->shape, 0), DIM_UNKNOWN,
					   DIM_UNKNOWN, 2 });
	if (len >= 0 && flen >= 0 && step >= 0) {
		if (flen > len)
			return op_error(c, "frame_length %lld exceeds the signal "
					"length %lld", (long long)flen,
					(long long)len);
		y.dims[1] = (len - flen) / step + 1;
	}
	if (flen >= 0)
		y.dims[2] = onesided ? flen / 2 + 1 : flen;
	op_set_out(c, 0, x->dtype, &y);
	if (!rs || (op_in(c, 3) && !rf))
		nn_mark_dep(c, 0);
	return 0;
}

/* ---- windows, MelWeightMatrix -------------------------------------------- */

/* The output dtype named by output_datatype (default float). */
static int out_datatype(OpCtx *c, int *dt)
{
	int64_t v = attr_int(c->n, "output_datatype", DT_FLOAT);
	if (v <= 0 || v >= DT_COUNT || !(DTS_NUMERIC & DTS(v)))
		return op_error(c, "output_datatype is %lld, expected a numeric "
				"dtype", (long long)v);
	*dt = (int)v;
	return 0;
}

/* HannWindow, HammingWindow, BlackmanWindow: size (a scalar) -> [size]. */
int infer_window(OpCtx *c)
{
	int64_t size = DIM_UNKNOWN;
	int dt = DT_FLOAT, rc;
	if (!op_need_in(c, 0) || out_datatype(c, &dt) < 0 ||
	    (rc = const_scalar(c, 0, &size)) < 0)
		return -1;
	if (rc && size < 0)
		return op_error(c, "size is %lld, expected >= 0",
				(long long)size);
	Shape y = shape_of(1, &size);
	op_set_out(c, 0, dt, &y);
	if (!rc)
		nn_mark_dep(c, 0);
	return 0;
}

/* w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size
 * (periodic, the default) or size - 1 (symmetric); Hann a0 = a1 = 0.5,
 * Hamming a0 = 25/46, a1 = 21/46, Blackman 0.42, 0.5, 0.08.  A
 * symmetric window of size 1 (N = 0) is left to run time. */
int run_window(OpCtx *c)
{
	const Value *yv = op_out(c, 0);
	int64_t size;
	if (!yv || const_scalar(c, 0, &size) != 1)
		return 0;
	int64_t den = attr_int(c->n, "periodic", 1) ? size : size - 1;
	double a0 = 0.5, a1 = 0.5, a2 = 0;
	if (c->n->op == OP_HammingWindow) {
		a0 = 25.0 / 46.0;
		a1 = 1 - a0;
	} else if (c->n->op == OP_BlackmanWindow) {
		a0 = 0.42;
		a2 = 0.08;
	}
	if (size > 0 && den == 0)
		return 0;
	Tensor *t = op_new_tensor(c, yv->dtype, &yv->shape);
	if (!t)
		return -1;
	for (int64_t n = 0; n < size; n++) {
		double x = 2 * M_PI * (double)n / (double)den;
		tensor_set_f64(t, n, a0 - a1 * cos(x) + a2 * cos(2 * x));
	}
	op_set_const(c, 0, t);
	return 0;
}

/* MelWeightMatrix: num_mel_bins, dft_length, sample_rate,
 * lower_edge_hertz, upper_edge_hertz -> [dft_length / 2 + 1,
 * num_mel_bins]. */
int infer_mel_weight_matrix(OpCtx *c)
{
	int64_t bins = DIM_UNKNOWN, len = DIM_UNKNOWN, rate;
	int dt = DT_FLOAT, rb, rl;
	for (int i = 0; i < 5; i++)
		if (!op_need_in(c, i))
			return -1;
	if (out_datatype(c, &dt) < 0 || (rb = const_scalar(c, 0, &bins)) < 0 ||
	    (rl = const_scalar(c, 1, &len)) < 0 || const_scalar(c, 2, &rate) < 0 ||
	    op_check_dtype(c, 3, DTS_FLOAT) < 0 ||
	    op_check_same_dtype(c, 4, 3) < 0 || op_check_scalar(c, 3) < 0 ||
	    op_check_scalar(c, 4) < 0)
		return -1;
	if (rb && bins < 1)
		return op_error(c, "num_mel_bins is %lld, expected >= 1",
				(long long)bins);
	if (rl && len < 1)
		return op_error(c, "dft_length is %lld, expected >= 1",
				(long long)len);
	Shape y = shape_of(2, (int64_t[]){ rl ? len / 2 + 1 : DIM_UNKNOWN,
					   rb ? bins : DIM_UNKNOWN });
	op_set_out(c, 0, dt, &y);
	if (!rb || !rl)
		nn_mark_dep(c, 0);
	return 0;
}

/* ---- losses ------------------------------------------------------------- */

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: input (or
 * scores) [N, C, d1..dk], target (labels) [N, d1..dk], optional weight
 * [C] -> loss [N, d1..dk] with reduction "none", else a scalar; SCE's
 * optional log_prob has the input's shape. */
static int loss(OpCtx *c, bool sce)
{
	Value *x = op_need_in(c, 0), *t = x ? op_need_in(c, 1) : NULL;
	const char *red = attr_str(c->n, "reduction", "mean");
	char b1[128], b2[128];
	if (!t || op_check_dtype(c, 0, DTS_FLOAT) < 0 ||
	    op_check_dtype(c, 1, DTS_IDX) < 0 || op_check_same_dtype(c, 2, 0) < 0 ||
	    op_check_rank(c, 0, 2, MAX_RANK) < 0 ||
	    op_check_rank(c, 1, 1, MAX_RANK - 1) < 0 ||
	    op_check_rank(c, 2, 1, 1) < 0)
		return -1;
	bool none = !strcmp(red, "none");
	if (!none && strcmp(red, "sum") && strcmp(red, "mean"))
		return op_error(c, "reduction is '%s', expected none, sum or "
				"mean", red);
	const Shape *xs = &x->shape, *ts = &t->shape;
	/* the target is the input without its class axis */
	Shape exp = { .rank = xs->rank >= 0 ? xs->rank - 1 : -1 };
	for (int32_t i = 0; i < exp.rank; i++)
		exp.dims[i] = xs->dims[i ? i + 1 : 0];
	if (!nn_shape_compatible(&exp, ts))
		return op_error(c, "%s '%s' has shape %s, but input '%s' has "
				"%s; expected [N, d1..dk] for [N, C, d1..dk]",
				sce ? "labels" : "target", t->name,
				shape_str(ts, b1, sizeof(b1)), x->name,
				shape_str(xs, b2, sizeof(b2)));
	const Value *w = op_in(c, 2);
	int64_t ch = shape_dim(xs, 1), wc = w ? shape_dim(&w->shape, 0) : -1;
	if (ch >= 0 && wc >= 0 && ch != wc)
		return op_error(c, "weight '%s' has %lld values, but input has "
				"%lld classes", w->name, (long long)wc,
				(long long)ch);
	Shape y = shape_of(0, NULL);
	if (none) {
		y = exp.rank >= 0 ? exp : *ts;
		for (int32_t i = 0; exp.rank >= 0 && ts->rank >= 0 && i < y.rank;
		     i++)
			if (y.dims[i] < 0)
				y.dims[i] = ts->dims[i];
	}
	op_set_out(c, 0, x->dtype, &y);
	if (sce)
		op_set_out(c, 1, x->dtype, xs);
	return 0;
}

int infer_nll_loss(OpCtx *c) { return loss(c, false); }

int infer_sce_loss(OpCtx *c) { return loss(c, true); }

/* ---- NonMaxSuppression -------------------------------------------------- */

/* NonMaxSuppression: boxes [B, n, 4], scores [B, C, n] -> selected
 * indices [-1, 3] (int64): how many boxes survive depends on the data. */
int infer_nms(OpCtx *c)
{
	Value *b = op_need_in(c, 0), *s = b ? op_need_in(c, 1) : NULL;
	int64_t cpb = attr_int(c->n, "center_point_box", 0);
	char b1[128], b2[128];
	if (!s || op_check_dtype(c, 0, DTS(DT_FLOAT)) < 0 ||
	    op_check_dtype(c, 1, DTS(DT_FLOAT)) < 0 ||
	    op_check_rank(c, 0, 3, 3) < 0 || op_check_rank(c, 1, 3, 3) < 0 ||
	    op_check_dtype(c, 2, DTS(DT_INT64)) < 0 ||
	    op_check_dtype(c, 3, DTS(DT_FLOAT)) < 0 ||
	    op_check_dtype(c, 4, DTS(DT_FLOAT)) < 0 ||
	    op_check_scalar(c, 2) < 0 || op_check_scalar(c, 3) < 0 ||
	    op_check_scalar(c, 4) < 0)
		return -1;
	if (cpb != 0 && cpb != 1)
		return op_error(c, "center_point_box is %lld, expected 0 or 1",
				(long long)cpb);
	const Shape *bs = &b->shape, *ss = &s->shape;
	int64_t bb = shape_dim(bs, 0), sb = shape_dim(ss, 0);
	int64_t bn = shape_dim(bs, 1), sn = shape_dim(ss, 2), four = shape_dim(bs, 2);
	if ((bb >= 0 && sb >= 0 && bb != sb) || (bn >= 0 && sn >= 0 && bn != sn) ||
	    (four >= 0 && four != 4))
		return op_error(c, "boxes '%s' %s and scores '%s' %s; expected "
				"[batch, n, 4] and [batch, classes, n]",
				b->name, shape_str(bs, b1, sizeof(b1)), s->name,
				shape_str(ss, b2, sizeof(b2)));
	Shape y = shape_of(2, (int64_t[]){ DIM_UNKNOWN, 3 });
	/* constant inputs: the kernel's own selection gives the rows */
	int rc = nms_select(c, NULL, 0, &y.dims[0]);
	if (rc < 0)
		return -1;
	op_set_out(c, 0, DT_INT64, &y);
	if (!rc)
		nn_mark_dep(c, 0);
	return 0;
}
