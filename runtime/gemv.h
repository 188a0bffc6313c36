/*
 * runtime/gemv.h - a matrix product of one row by constant weights
 * (runtime/gemv.c) for fast.c: MatMul, Gemm, FusedMatMul and FusedGemm
 * whose A is one row (a batch of one: an MLP head, a decoder step).
 */
#ifndef GEARC_RT_GEMV_H
#define GEARC_RT_GEMV_H

#include "rt.h"

/* MatMul, Gemm, FusedMatMul, FusedGemm of fp32 whose output has one row
 * (every dim but the last 1) and whose B is a weight of the file (one
 * matrix; Gemm's transB either way): 1 with *k filled, 0 if another row
 * must run it, -1 with an error. */
int gemv_match(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* The same ops whose output has more than one row (A's rows contiguous,
 * Gemm's A not transposed, C one value or one a column), on a CPU
 * without AVX-512, where oneDNN's matmul is its sgemm (gemm:jit), which
 * picks its kernels by the thread count: W in the same panels, products
 * of runtime/pw_simd.h's tiles in blocks of K, the same bytes at any
 * thread count. */
int gemm_match(RunCtx *s, Prepared *p, Task *t, FastKernel *k);

/* acc[j] = sum over i < k of x[i] W[i][j] for the columns j of np panels
 * of 16 (W packed [np][k][16], chan_gemm_at's layout with nr 16; wp and
 * acc 64-byte aligned), each sum in order of i: the GEMV of this file's
 * kernel, for the recurrent cells (runtime/small.c). */
void gemv_rows(const float *x, const float *wp, int64_t k, int64_t np,
	       float *acc);

#endif
