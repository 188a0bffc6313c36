/*
 * runtime/dnnl.h - oneDNN fast paths (runtime/dnnl.c) for fast.c.
 *
 * Each builder looks at task t's node at its planned shapes and, if
 * oneDNN takes it, creates the primitive once (weights reordered into
 * oneDNN's preferred layout in memory the kernel owns; a convolution's
 * reorders and a pooling's primitive wait for its tensors' layouts, its
 * LayoutOps' finish) and fills *k:
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
/* For a convolution kernel, once finished (runtime/layout.c): whether
 * it reorders X in and Y out (false if fk is no oneDNN convolution). */
bool dnnl_fast_reorders(const FastKernel *fk, bool *x_in, bool *y_out);
/* The threads a oneDNN kernel runs on: the session's, or 1 for a
 * primitive of little work; 0 if fk is no oneDNN kernel. */
int dnnl_fast_threads(const FastKernel *fk);
/* LSTM, GRU, RNN: one direction, the default activations, whole
 * sequences, constant weights. */
int dnnl_fast_rnn(gearrt_session *s, Prepared *p, Task *t, FastKernel *k);
/* MaxPool, AveragePool, GlobalAveragePool. */
int dnnl_fast_pool(gearrt_session *s, Prepared *p, Task *t, FastKernel *k);

#endif
