/*
 * runtime/small.h - fast paths in plain C (runtime/small.c) for the ops
 * of small graphs (a voice-activity detector's 512-sample step), where
 * a reference kernel's or a oneDNN primitive's fixed cost is most of a
 * node's time: data movement (Slice, Concat, Pad, Split, Tile, Expand)
 * replayed as copies, an LSTM cell of small hidden size, depthwise
 * convolution, ReduceMean/ReduceSum over adjacent axes, Log, Sqrt,
 * Neg, Abs, Exp, and ScatterND/ScatterElements (a streaming model's
 * cache update).
 *
 * Each builder fills *k and returns 1 if it takes task t's node at its
 * planned shapes, 0 if another path must run it, -1 with an error.
 */
#ifndef GEARC_RT_SMALL_H
#define GEARC_RT_SMALL_H

#include "rt.h"

/* Slice, Concat, Pad, Split, Tile, Expand of any fixed-size dtype, every
 * input but the moved data constant: the reference kernel moves element
 * numbers once, when the gear is prepared; a run copies the runs of
 * consecutive elements that it found. */
int small_move(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* Pad of mode constant by pads of at least 0, any size and fixed-size
 * dtype, its pads constant: fill, then a memcpy per row of X. */
int small_pad(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* LSTM of fp32, default activations, no clip, peepholes, input_forget or
 * sequence_lens; hidden size at most 256 and few timesteps. */
int small_lstm(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* The same of constant weights, any number of timesteps and a batch of
 * one, on packed weights (a GEMM for the inputs, one streaming of R a
 * step): ahead of oneDNN's RNN. */
int small_lstm_packed(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* GRU of fp32 (either linear_before_reset; the default activations, no
 * clip or sequence_lens), constant weights, hidden size up to 256, a
 * batch of one, on packed weights as the LSTM's. */
int small_gru_packed(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* 1-D Conv of fp32 with one input and one output channel per group
 * (every channel its own filter), constant weights and bias. */
int small_dwconv(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* ReduceMean and ReduceSum of fp32 over adjacent axes (constant axes),
 * summed in double as the reference kernel sums. */
int small_reduce(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* Log, Sqrt, Neg, Abs and Exp of fp32. */
int small_unary(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* ScatterND and ScatterElements (and Scatter) of any dtype of 1 to 8
 * bytes: the data copied once (not at all in place), the updates
 * written a slice or an element at a time, reduced as the reference
 * kernel reduces; its errors for an index out of range. */
int small_scatter(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* Split of any size and dtype along any axis, the split constant or
 * even: a memcpy per output and index before the axis. */
int small_split(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* Concat of any size and dtype along any axis: a memcpy per input and
 * index before the axis. */
int small_concat(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* Slice of a rank-4 float tensor's channels (every other axis whole,
 * step 1): a memcpy per image. */
int small_chan_slice(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* The build of the three above: along the channels of a channels-last
 * tensor, a memcpy per pixel. */
int small_pieces_build(RunCtx *s, Prepared *p, Task *t);

#endif
