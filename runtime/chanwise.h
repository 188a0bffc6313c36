/*
 * runtime/chanwise.h - per-channel fast paths in plain C
 * (runtime/chanwise.c) for fast.c, on rank-4 fp32 tensors in either
 * layout (row-major, or channels-last as runtime/layout.c decides).
 *
 * Each match fills *k, records which slots may be channels-last
 * (rt_task_slots) and returns 1 if it takes task t's node at its planned
 * shapes, else 0; its build (*_build) takes the layouts runtime/layout.c
 * decided: 0.
 */
#ifndef GEARC_RT_CHANWISE_H
#define GEARC_RT_CHANWISE_H

#include "rt.h"

/* Add, Sub, Mul, Div of X [N,C,H,W] and B broadcast per channel
 * ([C,1,1], [1,C,1,1] or [N,C,1,1]), either order. */
int chan_binary(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
int chan_binary_build(RunCtx *s, Prepared *p, Task *t);
/* BatchNormalization in inference (constant scale, B, mean and var of
 * [C]) of X [N,C,H,W]: the reference kernel's bits. */
int chan_batchnorm(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
int chan_batchnorm_build(RunCtx *s, Prepared *p, Task *t);
/* Makes a chan_batchnorm kernel, or a chan_concat that took one in
 * (chan_concat_batchnorm), apply Relu after it (true), if k is one that
 * does not yet. */
bool chan_batchnorm_relu(FastKernel *k);
/* GlobalAveragePool of X [N,C,H,W]. */
int chan_gap(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
int chan_gap_build(RunCtx *s, Prepared *p, Task *t);
/* MaxPool (no Indices) and AveragePool of X [N,C,H,W], any window: the
 * reference kernel's bits. */
int chan_pool(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
int chan_pool_build(RunCtx *s, Prepared *p, Task *t);
/* Gather on the channel axis of [N,C,H,W] by constant indices (a
 * channel shuffle). */
int chan_gather(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
int chan_gather_build(RunCtx *s, Prepared *p, Task *t);
/* Concat of [N,C_i,H,W] on the channel axis (an FPN's levels). */
int chan_concat(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
int chan_concat_build(RunCtx *s, Prepared *p, Task *t);
/* Makes a chan_concat kernel apply the BatchNormalization of task t (as
 * chan_batchnorm runs it, on the concat's output) to what it writes:
 * true if cat is one that has none yet and chan_batchnorm takes t. */
bool chan_concat_batchnorm(FastKernel *cat, RunCtx *s, Prepared *p, Task *t);
/* Linear Resize (runtime/dnnl.c's contract) of [N,C,H,W]. */
int chan_resize(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
int chan_resize_build(RunCtx *s, Prepared *p, Task *t);
/* Conv (not fused) of at most 8 output channels, one group, 2-D, X in
 * either layout (channels-last is its reason: direct.c's kernel reads
 * row-major), Y row-major. */
int chan_few_conv(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
int chan_few_conv_build(RunCtx *s, Prepared *p, Task *t);
/* Whether n is a Conv, or a FusedConv (with no Z unless z_ok), of 2
 * spatial axes with its weights (and a bias of cout, if any) in the
 * file, its geometry in *cg: what the two below first ask. */
bool chan_simd_conv(RunCtx *s, Prepared *p, const Node *n, bool z_ok,
		    ConvGeom *cg);
/* Conv and FusedConv (any activations, no Z) of 1x1 windows, stride 1,
 * no padding, one group, X and Y in either layout; each ISA level's
 * variant (runtime/pw_simd.h: AVX-512, AVX2, SSE2 or NEON), as
 * cpu_isa() says when matched. */
int chan_pw_conv(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
int chan_pw_conv_build(RunCtx *s, Prepared *p, Task *t);
/* Conv and FusedConv (any activations, no Z) of 3x3 windows, stride 1,
 * 2-D, by Winograd's F(4x4, 3x3) (runtime/wino.c); X and Y in either
 * layout. */
int chan_wino_conv(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
int chan_wino_conv_build(RunCtx *s, Prepared *p, Task *t);
/* The packed or transformed weights a chan_pw_conv or chan_wino_conv
 * kernel runs on (for tests: the model's, shared by its sessions; a
 * row-major 1x1 Conv's too, unused), or NULL for another kernel. */
const void *chan_weights(const FastKernel *k);
const void *chan_wino_weights(const FastKernel *k);
/* The parts of its output channels a wino.c kernel's items take (1: all
 * at once); 0 for another kernel. */
int64_t chan_wino_parts(const FastKernel *k);

/* The matrix product of the 1x1 Conv's tiles, for wino.c: C [m][n]
 * (row stride ldc) = A [m][K] (row stride lda) B [K][n], B packed in
 * panels of nr columns (chan_gemm_nr), zero past n up to a whole panel:
 * element (k, j) at chan_gemm_at(j, k, K, nr).  chan_gemm_for(isa) is
 * the variant of ISA level isa (cpu_isa()). */
int64_t chan_gemm_nr(int64_t n);
static inline int64_t chan_gemm_at(int64_t j, int64_t k, int64_t K,
				   int64_t nr)
{
	return (j / nr * K + k) * nr + j % nr;
}
typedef void (*ChanGemm)(int64_t m, int64_t n, int64_t K, const float *a,
			 int64_t lda, const float *bp, int64_t nr, float *c,
			 int64_t ldc);
ChanGemm chan_gemm_for(CpuLevel isa);
void chan_gemm_avx512(int64_t m, int64_t n, int64_t K, const float *a,
		      int64_t lda, const float *bp, int64_t nr, float *c,
		      int64_t ldc);
void chan_gemm_avx2(int64_t m, int64_t n, int64_t K, const float *a,
		    int64_t lda, const float *bp, int64_t nr, float *c,
		    int64_t ldc);
void chan_gemm_base(int64_t m, int64_t n, int64_t K, const float *a,
		    int64_t lda, const float *bp, int64_t nr, float *c,
		    int64_t ldc);

/* chan_gemm on rows [k0, k0 + K) of B's panels, which are ps floats
 * apart (a product in blocks of K): each sum starts from bcol[j] (whole
 * panels of it readable) if not NULL, and runs over k in order; add,
 * C's values before are added to it last. */
typedef void (*ChanGemmPart)(int64_t m, int64_t n, int64_t K,
			     const float *a, int64_t lda, const float *bp,
			     int64_t ps, int64_t nr, float *c, int64_t ldc,
			     const float *bcol, bool add);
ChanGemmPart chan_gemm_part_for(CpuLevel isa);
void chan_gemm_part_avx512(int64_t m, int64_t n, int64_t K, const float *a,
			   int64_t lda, const float *bp, int64_t ps,
			   int64_t nr, float *c, int64_t ldc,
			   const float *bcol, bool add);
void chan_gemm_part_avx2(int64_t m, int64_t n, int64_t K, const float *a,
			 int64_t lda, const float *bp, int64_t ps, int64_t nr,
			 float *c, int64_t ldc, const float *bcol, bool add);
void chan_gemm_part_base(int64_t m, int64_t n, int64_t K, const float *a,
			 int64_t lda, const float *bp, int64_t ps, int64_t nr,
			 float *c, int64_t ldc, const float *bcol, bool add);

#endif
