/*
 * runtime/contrib.h - fast paths of ONNX Runtime's contrib ops
 * (runtime/contrib.c) for fast.c, the ones whose standard form would
 * not be as fast (passes/contrib.c writes the others out at compile
 * time): each computes the reference kernel's result
 * (compiler/ops/contrib*.c) in fp32 on the session's threads.
 *
 * Each match fills *k and returns 1 if it takes task t's node at its
 * planned shapes, 0 if the reference kernel must run it, -1 with an
 * error.
 */
#ifndef GEARC_RT_CONTRIB_H
#define GEARC_RT_CONTRIB_H

#include "rt.h"

/* SkipLayerNormalization, SkipSimplifiedLayerNormalization and
 * SimplifiedLayerNormalization over the last axis, any of their
 * outputs. */
int contrib_norm(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* Attention and MultiHeadAttention (every form the op takes): the
 * projection and the heads on the threads. */
int contrib_attention(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* EmbedLayerNormalization: rows on the threads. */
int contrib_embed(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* RotaryEmbedding: rows on the threads. */
int contrib_rotary(RunCtx *s, Prepared *p, Task *t, FastKernel *k);

/* QLinearAdd and QLinearMul of per-tensor constant parameters, B (or A)
 * C's shape, one value or C's trailing dims; float math as the
 * reference's, bit for bit. */
int contrib_qlinear_binary(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* QLinearSigmoid and QLinearLeakyRelu of constant parameters: a table. */
int contrib_qlinear_table(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* QLinearConcat of constant parameters: a table per input. */
int contrib_qlinear_concat(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* QLinearGlobalAveragePool (either layout): integer sums. */
int contrib_qlinear_gap(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* QLinearSoftmax: ONNX Runtime's table, rows on the threads. */
int contrib_qlinear_softmax(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* QLinearAveragePool, 2-D, explicit pads or VALID: integer window
 * sums. */
int contrib_qlinear_avgpool(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* QGemm of a constant B (K at most 4096): int16 dot products, rows on
 * the threads. */
int contrib_qgemm(RunCtx *s, Prepared *p, Task *t, FastKernel *k);

/* MatMulIntegerToFloat of a constant 2-D B: QGemm's kernel. */
int contrib_mm_int_float(RunCtx *s, Prepared *p, Task *t, FastKernel *k);

#endif
