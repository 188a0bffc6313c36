/*
 * runtime/dnnl.h - oneDNN fast paths (runtime/dnnl.c): the match and
 * build functions of fast.c's registry rows.
 *
 * Each match looks at task t's node at its planned shapes and, if
 * oneDNN takes it, fills *k: 1 if so, 0 if the reference kernel must
 * run (another dtype, an attribute oneDNN does not express, a primitive
 * oneDNN refuses), -1 with an error.  A matmul's or recurrent cell's
 * primitive is created there (its tensors are row-major); a
 * convolution's match creates the primitive's descriptor and records
 * which tensors may be NHWC, and its build (dnnl_conv_build), once
 * runtime/layout.c has decided, the primitive (weights reordered once
 * into oneDNN's preferred layout, in memory the model owns and shares
 * between its sessions and gears) and the
 * reorders its tensors' layouts need; a pooling's or resampling's build
 * (dnnl_xy_build) creates its primitive in its tensors' layout.
 */
#ifndef GEARC_RT_DNNL_H
#define GEARC_RT_DNNL_H

#include "rt.h"

/* Conv, ConvTranspose, FusedConv. */
int dnnl_fast_conv(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* The same in bfloat16 (float32 accumulation and output), for a node
 * marked reduced where the CPU computes bfloat16 (rt_bf16). */
int dnnl_fast_conv_bf16(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
int dnnl_conv_build(RunCtx *s, Prepared *p, Task *t);
/* MatMul, Gemm, FusedMatMul, FusedGemm. */
int dnnl_fast_matmul(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* The same of rows by constant weights on AVX2, as a 1x1 convolution
 * (oneDNN's jit_1x1:avx2), or 0. */
int dnnl_fast_matmul_conv(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
int dnnl_fast_matmul_bf16(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* What a oneDNN kernel does, once built: the
 * images it runs one at a time (1: the batch at once) and, for a
 * convolution, whether it reorders X in and Y out and oneDNN's name of
 * its implementation ("" for other kernels). */
typedef struct DnnlInfo {
	int64_t images;
	bool x_in, y_out;
	const char *impl;
	const void *weights; /* the reordered weights bound, or NULL */
	int tail; /* activations run after the primitive (not post-ops) */
	int mm_rank; /* a matmul's problem rank: its batch dims + 2 */
} DnnlInfo;
/* false (and *info zeroed) if fk is no oneDNN kernel. */
bool dnnl_fast_info(const FastKernel *fk, DnnlInfo *info);
/* LSTM, GRU, RNN: one direction, the default activations, whole
 * sequences, constant weights. */
int dnnl_fast_rnn(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* MaxPool, AveragePool, GlobalAveragePool. */
int dnnl_fast_pool(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* Resize, linear, with half_pixel coordinates and scales of Y over X:
 * dnnl_resize_linear says whether node n is one (its contract, which
 * runtime/chanwise.c's kernel shares; it takes rank 4, this 3 and 5). */
bool dnnl_resize_linear(const RunCtx *s, const Prepared *p,
			const Node *n);
int dnnl_fast_resize(RunCtx *s, Prepared *p, Task *t,
		     FastKernel *k);
/* The build of a pooling's or resize's kernel. */
int dnnl_xy_build(RunCtx *s, Prepared *p, Task *t);
/* Whether oneDNN's post-op of activation kind (compiler/act.h; alpha
 * a, beta b) gives act.h's answer on NaN, +-Inf and +-0 on this CPU: if
 * not, a fused op's activations from it on run after the primitive
 * (act.h's forms, runtime/direct.c direct_act_chain). */
bool dnnl_act_exact(int kind, float a, float b);
/* Frees the reordered weights md's sessions shared (md->dnnl): at
 * gearrt_model_close, when no session is left. */
void dnnl_model_free(gearrt_model *md);

#endif
