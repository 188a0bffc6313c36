/*
 * compiler/ops/pool.h - the windows of MaxPool, AveragePool and LpPool,
 * shared by their reference kernels (pool.c) and the runtime's NHWC
 * kernel (runtime/chanwise.c), which must read the same inputs in the
 * same order to give the same bits.
 *
 * Along each spatial axis, output o's window starts at o * s - pb and
 * reads every d-th input, k of them; its span is the taps that fall in
 * the input (n of them, the first at input index first) and cnt, those
 * in the padded input (AveragePool's count_include_pad divisor).  The
 * pads come from the attributes, or for SAME_UPPER / SAME_LOWER from the
 * output size: total = max(0, (out - 1) * s + (k - 1) d + 1 - in), the
 * odd one at the end (UPPER) or the beginning (LOWER).  The output shape
 * (ceil_mode included) is the inferred one.
 */
#ifndef GEARC_OPS_POOL_H
#define GEARC_OPS_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/ir.h"

typedef struct PoolAxis {
	int64_t k, s, d, pb, pe; /* kernel, stride, dilation, pads */
} PoolAxis;

typedef struct Span {
	int64_t first, n, cnt;
} Span;

/* The outputs [lo, hi) of a row that one tap of the window reads inside
 * the input row: output ow reads input ow * stride + off. */
typedef struct RowTap {
	int64_t lo, hi, off;
} RowTap;

/* A pool as a 3-D pool over nc planes (1-D and 2-D ones with leading
 * spatial axes of size 1). */
typedef struct Pool {
	int64_t nc;
	int64_t in[3], out[3], dil[3];
	Span *span[3]; /* per axis: out[axis] spans */
	int64_t kw, sw; /* the last axis' kernel and stride */
	RowTap *tap;	/* its kw taps */
} Pool;

/* The rank - 2 spatial axes of pool node n from x to y into ax: 0, or
 * -1 with what is wrong in why (len bytes). */
int pool_axes(const Node *n, const Shape *x, const Shape *y, PoolAxis *ax,
	      char *why, size_t len);
/* The spans of the out outputs of axis a, over in inputs, into sp. */
void pool_spans(Span *sp, int64_t in, int64_t out, const PoolAxis *a);

/* The pool of node n from x to y into *p, its spans and taps in one
 * block from alloc(ctx, bytes) (zeroed; p->span[0] is its start): 0, or
 * -1 with what is wrong in why (len bytes). */
int pool_plan(const Node *n, const Shape *x, const Shape *y, Pool *p,
	      void *(*alloc)(void *ctx, size_t bytes), void *ctx, char *why,
	      size_t len);
/* Max (max) or average pooling of p's planes without indices, an output
 * row at a time: each input row a window reads updates the whole output
 * row, one tap after another, each output's taps in the window's order
 * (its rows, then its columns), in float. */
void pool_rows(const Pool *p, const float *x, float *y, bool max,
	       bool count_pad);

/* The max pools' one rule, IEEE 754's maxNum: NaN is passed over unless
 * every value is NaN (from a start of NaN); a window of -inf gives -inf
 * (onnx's reference evaluator). */
static inline float pool_max_num(float m, float v)
{
	return v > m || m != m ? v : m;
}

#endif
