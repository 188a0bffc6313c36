/*
 * compiler/ops/loss.c - the loss kernels: NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (their infer hooks are in misc.c).
 *
 * Both read an input [N, C, d1..dk] as [N, C, D] (D the product of
 * d1..dk, 1 without them) and a target [N, D] of class indices.  Each
 * position gets loss -w[t] * x[n, t, d] (SCE: x is the log-softmax of the
 * scores over C), and weight w[t] (1 without a weight input); a target
 * equal to ignore_index gets loss and weight 0.  Reduction "none" keeps
 * the losses, "sum" adds them, "mean" divides that sum by the sum of the
 * weights (the count of positions without weights and ignore_index), as
 * ONNX's reference does.  Everything is computed in double and rounded
 * once to the output's dtype (float16, float, double or bfloat16).
 */
#include <math.h>
#include <string.h>

#include "opimpl.h"

typedef struct Loss {
	int64_t n, c, d;    /* N, C, D */
	const Tensor *t, *w; /* target, weight (or NULL) */
	int64_t ii;	     /* ignore_index */
	bool has_ii;
	int red; /* LOSS_NONE, LOSS_SUM, LOSS_MEAN */
} Loss;

enum { LOSS_NONE, LOSS_SUM, LOSS_MEAN };

/* Element i of a float tensor (float32 read directly). */
static inline double fget(const Tensor *t, int64_t i)
{
	if (t->dtype == DT_FLOAT)
		return ((const float *)t->data)[i];
	return tensor_get_f64(t, i);
}

static inline void fset(Tensor *t, int64_t i, double v)
{
	if (t->dtype == DT_FLOAT)
		((float *)tensor_mut(t))[i] = (float)v;
	else
		tensor_set_f64(t, i, v);
}

/* Decodes the node's shapes and attributes: 1 if computable, 0 if an
 * input is not constant, -1 on error. */
static int loss_setup(OpCtx *c, Loss *L, const Tensor **x)
{
	const char *red = attr_str(c->n, "reduction", "mean");
	const Attr *ii = node_attr(c->n, "ignore_index");
	*x = op_const_in(c, 0);
	L->t = op_const_in(c, 1);
	L->w = op_const_in(c, 2);
	if (!*x || !L->t || (op_in(c, 2) && !L->w) || !op_out(c, 0))
		return 0;
	const Shape *xs = &(*x)->shape;
	L->n = xs->dims[0];
	L->c = xs->dims[1];
	L->d = 1;
	for (int32_t i = 2; i < xs->rank; i++)
		L->d *= xs->dims[i];
	if (shape_numel(&L->t->shape) != L->n * L->d)
		return op_error(c, "the target holds %lld values, expected "
				"%lld", (long long)shape_numel(&L->t->shape),
				(long long)(L->n * L->d));
	if (L->w && shape_numel(&L->w->shape) != L->c)
		return op_error(c, "the weight holds %lld values, expected %lld",
				(long long)shape_numel(&L->w->shape),
				(long long)L->c);
	L->has_ii = ii != NULL;
	L->ii = ii ? ii->i : 0;
	L->red = !strcmp(red, "none") ? LOSS_NONE
		 : !strcmp(red, "sum") ? LOSS_SUM
				       : LOSS_MEAN;
	return 1;
}

/* Output 0 from the log-probabilities lp (read by get at index
 * (n * C + class) * D + d). */
static int loss_out(OpCtx *c, const Loss *L, const void *lp,
		    double (*get)(const void *, int64_t))
{
	const Value *yv = op_out(c, 0);
	Tensor *y = op_new_output_zeroed(c, 0, yv->dtype, &yv->shape);
	double sum = 0, wsum = 0;
	if (!y)
		return -1;
	for (int64_t n = 0; n < L->n; n++)
		for (int64_t d = 0; d < L->d; d++) {
			int64_t p = n * L->d + d;
			int64_t k = tensor_get_i64(L->t, p);
			double l = 0, w = 0;
			if (!L->has_ii || k != L->ii) {
				if (k < 0 || k >= L->c)
					return op_error(c, "target %lld at "
							"position %lld is not "
							"a class in 0..%lld",
							(long long)k,
							(long long)p,
							(long long)L->c - 1);
				w = L->w ? fget(L->w, k) : 1;
				l = -w * get(lp, (n * L->c + k) * L->d + d);
			}
			if (L->red == LOSS_NONE)
				fset(y, p, l);
			sum += l;
			wsum += w;
		}
	if (L->red == LOSS_SUM)
		fset(y, 0, sum);
	else if (L->red == LOSS_MEAN)
		fset(y, 0, sum / wsum);
	op_set_const(c, 0, y);
	return 0;
}

static double get_tensor(const void *t, int64_t i)
{
	return fget(t, i);
}

static double get_double(const void *p, int64_t i)
{
	return ((const double *)p)[i];
}

int run_nll_loss(OpCtx *c)
{
	const Tensor *x;
	Loss L;
	int rc = loss_setup(c, &L, &x);
	if (rc <= 0)
		return rc;
	return loss_out(c, &L, x, get_tensor);
}

/* The log-softmax of x over axis 1 into lp[N * C * D], streaming x in
 * order: a running max and sum of exponentials per (n, d). */
static void log_softmax(const Tensor *x, const Loss *L, double *lp,
			double *mx, double *se)
{
	for (int64_t n = 0; n < L->n; n++) {
		int64_t base = n * L->c * L->d;
		for (int64_t d = 0; d < L->d; d++) {
			mx[d] = -INFINITY;
			se[d] = 0;
		}
		for (int64_t k = 0; k < L->c; k++)
			for (int64_t d = 0; d < L->d; d++) {
				double v = fget(x, base + k * L->d + d);
				lp[base + k * L->d + d] = v;
				if (v > mx[d])
					mx[d] = v;
			}
		for (int64_t k = 0; k < L->c; k++)
			for (int64_t d = 0; d < L->d; d++)
				se[d] += exp(lp[base + k * L->d + d] - mx[d]);
		for (int64_t d = 0; d < L->d; d++)
			se[d] = mx[d] + log(se[d]);
		for (int64_t k = 0; k < L->c; k++)
			for (int64_t d = 0; d < L->d; d++)
				lp[base + k * L->d + d] -= se[d];
	}
}

int run_sce_loss(OpCtx *c)
{
	const Tensor *x;
	Loss L;
	int rc = loss_setup(c, &L, &x);
	if (rc <= 0)
		return rc;
	int64_t total = shape_numel(&x->shape);
	double *lp = op_scratch_zeroed(c, (size_t)total * sizeof(double));
	double *mx = lp ? op_scratch_zeroed(c, (size_t)L.d * 2 * sizeof(double))
			: NULL;
	if (!mx)
		return -1;
	log_softmax(x, &L, lp, mx, mx + L.d);
	if (op_out(c, 1)) {
		Tensor *o = op_new_output_zeroed(c, 1, x->dtype, &x->shape);
		if (!o)
			return -1;
		for (int64_t i = 0; i < total; i++)
			fset(o, i, lp[i]);
		op_set_const(c, 1, o);
	}
	return loss_out(c, &L, lp, get_double);
}
