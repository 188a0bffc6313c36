/*
 * compiler/ops/random.c - the random ops' kernels: RandomUniform,
 * RandomNormal, RandomUniformLike, RandomNormalLike, Bernoulli and
 * Multinomial (their infer hooks are in elementwise.c).
 *
 * Values come from a counter-based generator: draw k of a node is
 * splitmix64(key + k), so a kernel needs no state and element i's value
 * does not depend on how the work is split.  The key is the seed
 * attribute's when the node has one: such a node gives the same values
 * at every run (and is folded to those values when compiling).  Without
 * a seed the values must differ between runs, so the interpreter never
 * runs the node (compiler/infer.c) and the kernel, run by the runtime,
 * takes a fresh key from a process-wide atomic counter at each run.
 *
 * The values cannot match ONNX's backend test data, which numpy's own
 * generator drew: those tests check dtypes and shapes only.
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "opimpl.h"

static uint64_t splitmix64(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/* Draw k as a double in [0, 1) with 53 random bits. */
static double uniform(uint64_t key, uint64_t k)
{
	return (double)(splitmix64(key + k) >> 11) * 0x1.0p-53;
}

/* Draw k as a standard normal (Box-Muller over draws 2k and 2k + 1). */
static double normal(uint64_t key, uint64_t k)
{
	double u = 1 - uniform(key, 2 * k), v = uniform(key, 2 * k + 1);
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* The node's key: from its seed, else a new one per run (the interpreter
 * never runs a random op without a seed: compiler/infer.c). */
static uint64_t rng_key(const OpCtx *c)
{
	static _Atomic uint64_t runs;
	const Attr *s = node_attr(c->n, "seed");
	if (s) {
		double d = s->type == ATTR_INT ? (double)s->i : s->f;
		uint64_t bits;
		memcpy(&bits, &d, sizeof(bits));
		return splitmix64(bits);
	}
	return splitmix64(atomic_fetch_add(&runs, 1) ^ UINT64_C(0x5eed));
}

/* RandomUniform(Like): low + (high - low) * u; RandomNormal(Like):
 * mean + scale * n.  The output's dtype and shape are inferred. */
int run_random(OpCtx *c)
{
	const Value *yv = op_out(c, 0);
	if (!yv)
		return 0;
	uint64_t key = rng_key(c);
	bool norm = c->n->op == OP_RandomNormal ||
		    c->n->op == OP_RandomNormalLike;
	double a = attr_float(c->n, norm ? "mean" : "low", 0);
	double b = attr_float(c->n, norm ? "scale" : "high", 1);
	Tensor *y = op_new_output_zeroed(c, 0, yv->dtype, &yv->shape);
	if (!y)
		return -1;
	int64_t n = shape_numel(&yv->shape);
	for (int64_t i = 0; i < n; i++) {
		double v = norm ? a + b * normal(key, (uint64_t)i)
				: a + (b - a) * uniform(key, (uint64_t)i);
		if (y->dtype == DT_FLOAT)
			((float *)tensor_mut(y))[i] = (float)v;
		else
			tensor_set_f64(y, i, v);
	}
	op_set_const(c, 0, y);
	return 0;
}

/* Bernoulli: 1 where a uniform draw is below the probability x. */
int run_bernoulli(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	const Value *yv = op_out(c, 0);
	if (!x || !yv)
		return 0;
	uint64_t key = rng_key(c);
	Tensor *y = op_new_output_zeroed(c, 0, yv->dtype, &yv->shape);
	if (!y)
		return -1;
	int64_t n = shape_numel(&x->shape);
	for (int64_t i = 0; i < n; i++) {
		double p = tensor_get_f64(x, i);
		if (!(p >= 0 && p <= 1))
			return op_error(c, "probability %g at element %lld is "
					"not in [0, 1]", p, (long long)i);
		tensor_set_i64(y, i, uniform(key, (uint64_t)i) < p);
	}
	op_set_const(c, 0, y);
	return 0;
}

/* Multinomial: x [batch, classes] holds unnormalised log-probabilities;
 * each of sample_size draws per row picks class k with probability
 * exp(x[k]) / sum exp(x). */
int run_multinomial(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	const Value *yv = op_out(c, 0);
	if (!x || !yv)
		return 0;
	uint64_t key = rng_key(c);
	int64_t rows = x->shape.dims[0], k = x->shape.dims[1];
	int64_t m = yv->shape.dims[1];
	if (k < 1 && rows > 0)
		return op_error(c, "input 0 has no classes to draw from");
	Tensor *y = op_new_output_zeroed(c, 0, yv->dtype, &yv->shape);
	double *cum = op_scratch_zeroed(c, (size_t)(k + 1) * sizeof(double));
	if (!y || !cum)
		return -1;
	for (int64_t r = 0; r < rows; r++) {
		double mx = -INFINITY, sum = 0;
		for (int64_t j = 0; j < k; j++)
			mx = fmax(mx, tensor_get_f64(x, r * k + j));
		for (int64_t j = 0; j < k; j++) {
			sum += exp(tensor_get_f64(x, r * k + j) - mx);
			cum[j] = sum;
		}
		for (int64_t s = 0; s < m; s++) {
			double u = uniform(key, (uint64_t)(r * m + s)) * sum;
			int64_t j = 0;
			while (j < k - 1 && !(u < cum[j]))
				j++;
			tensor_set_i64(y, r * m + s, j);
		}
	}
	op_set_const(c, 0, y);
	return 0;
}
