/*
 * runtime/dnnl.h - oneDNN fast paths (runtime/dnnl.c): builders of
 * fast.c's registry rows.
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

/* Conv, ConvTranspose, FusedConv. */
int dnnl_fast_conv(gearrt_session *s, Prepared *p, Task *t, FastKernel *k);
/* MatMul, Gemm, FusedMatMul, FusedGemm. */
int dnnl_fast_matmul(gearrt_session *s, Prepared *p, Task *t, FastKernel *k);
/* What a oneDNN kernel does, once finished (runtime/layout.c): the
 * images it runs one at a time (1: the batch at once) and, for a
 * convolution, whether it reorders X in and Y out and oneDNN's name of
 * its implementation ("" for other kernels). */
typedef struct DnnlInfo {
	int64_t images;
	bool x_in, y_out;
	const char *impl;
} DnnlInfo;
/* false (and *info zeroed) if fk is no oneDNN kernel. */
bool dnnl_fast_info(const FastKernel *fk, DnnlInfo *info);
/* LSTM, GRU, RNN: one direction, the default activations, whole
 * sequences, constant weights. */
int dnnl_fast_rnn(gearrt_session *s, Prepared *p, Task *t, FastKernel *k);
/* MaxPool, AveragePool, GlobalAveragePool. */
int dnnl_fast_pool(gearrt_session *s, Prepared *p, Task *t, FastKernel *k);
/* Resize, linear, with half_pixel coordinates and scales of Y over X. */
int dnnl_fast_resize(gearrt_session *s, Prepared *p, Task *t,
		     FastKernel *k);

#endif
