/*
 * runtime/dnnl.h - oneDNN fast paths (runtime/dnnl.c) for fast.c.
 *
 * Each builder looks at task t's node at its planned shapes and, if
 * oneDNN takes it, creates the primitive once (weights reordered into
 * oneDNN's preferred layout in memory the kernel owns) and fills *k:
 * 1 if so, 0 if the reference kernel must run (another dtype, an
 * attribute oneDNN does not express, a primitive oneDNN refuses), -1
 * with an error.
 */
#ifndef GEARC_RT_DNNL_H
#define GEARC_RT_DNNL_H

#include "rt.h"

/* Conv, ConvTranspose, FusedConv (transpose: ConvTranspose). */
int dnnl_fast_conv(gearrt_session *s, Prepared *p, Task *t, bool transpose,
		   FastKernel *k);
/* MatMul, Gemm, FusedMatMul, FusedGemm (gemm: Gemm's inputs and
 * attributes). */
int dnnl_fast_matmul(gearrt_session *s, Prepared *p, Task *t, bool gemm,
		     FastKernel *k);
/* MaxPool, AveragePool, GlobalAveragePool. */
int dnnl_fast_pool(gearrt_session *s, Prepared *p, Task *t, FastKernel *k);

#endif
