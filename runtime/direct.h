/*
 * runtime/direct.h - fast paths in plain C (runtime/direct.c) for fast.c,
 * where oneDNN is slow or absent: ConvTranspose with few channels (oneDNN
 * pads channels to 16), few-output-channel Conv, Sigmoid and Softmax with
 * a vectorised exp, Erf, scalar arithmetic, arithmetic of same-shaped
 * tensors, LayerNormalization, Gather by constant indices, Transpose,
 * AIPP's YUV420SP frames (Yuv420sp), and views the plan aliased
 * (nothing to do).
 *
 * Each match fills *k and returns 1 if it takes task t's node at its
 * planned shapes, 0 if another path must run it, -1 with an error.
 */
#ifndef GEARC_RT_DIRECT_H
#define GEARC_RT_DIRECT_H

#include "rt.h"

/* The geometry of n, a float32 Conv (transpose false) or ConvTranspose
 * of rank 4 whose weights and bias are in the file and whose only output
 * is output 0: false when n is not one. */
bool direct_conv_geom(RunCtx *s, Prepared *p, const Node *n,
		      bool transpose, ConvGeom *cg);
/* ConvTranspose (2-D, fp32, constant weights) with fewer than 32
 * channels in or out per group. */
int direct_deconv(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* Conv and FusedConv (Relu or no activation, no Z): 2-D, stride 1, one
 * group, at most 8 output channels, a window larger than 1x1. */
int direct_conv(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* Softmax and LogSoftmax of fp32 over any axis (before opset 13, over
 * the axes from its axis on): rows of the last axis in vectors, another
 * axis as strided rows vectorised over the axes after it. */
int direct_softmax(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* Sigmoid of fp32. */
int direct_sigmoid(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* FusedActivation of fp32: each activation's fp32 form (compiler/act.h)
 * in a loop of its own. */
int direct_act(RunCtx *s, Prepared *p, Task *t, FastKernel *k);

/* Erf (within 5e-7 of the double erf), Relu or Pow by a constant 2 of
 * fp32. */
int direct_unary(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* Add, Sub, Mul, Div of fp32 A, of Y's shape, and B, a constant of one
 * element or a tensor of Y's shape. */
int direct_arith(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* LayerNormalization of fp32 (Y alone wanted; Scale and B of the
 * normalized dims): a row of whole vectors in float partial sums, any
 * other in double as the reference kernel. */
int direct_layernorm(RunCtx *s, Prepared *p, Task *t,
		     FastKernel *k);
/* A view op (op table VIEW_ALIAS) whose output the plan put in its
 * input's bytes: a no-op. */
int direct_view(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* A view op whose output the plan gave bytes of its own (a graph
 * output): a copy. */
int direct_copy(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* Gather by constant indices, all in range, or by indices of the run
 * (checked each run as the reference kernel checks them). */
int direct_gather(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* Transpose of 4-byte elements; NCHW to NHWC from a channels-last X, or
 * back into a channels-last Y, a copy of the bytes (the build). */
int direct_transpose(RunCtx *s, Prepared *p, Task *t,
		     FastKernel *k);
int direct_transpose_build(RunCtx *s, Prepared *p, Task *t);
/* Resize, nearest (asymmetric, floor) by whole factors on the last two
 * axes; rank 4 in either layout (its build takes the one decided). */
int direct_resize(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
int direct_resize_build(RunCtx *s, Prepared *p, Task *t);
/* An activation a ConvTranspose of direct_deconv applies to its outputs
 * (fast.c: the node after it, its output's only reader, then does
 * nothing): false if k is no such kernel or has one already. */
enum { DIRECT_RELU = 1, DIRECT_SIGMOID };
bool direct_deconv_act(FastKernel *k, int act);
/* A kernel doing nothing (a node another kernel computed). */
void direct_noop(FastKernel *k);

/* The activations of a fused op or FusedActivation (compiler/act.h),
 * each in a loop that vectorises. */
typedef struct ActRun {
	int n;
	struct {
		int kind;
		float a, b;
	} act[];
} ActRun;
/* Node n's "activations" and "activation_params" (none if it has
 * neither; free() it); NULL if they are not a well-formed list of the
 * table's (the reference kernel says why). */
ActRun *act_run_of(const Node *n);
/* FusedConv n's z_after: how many of its activations come before Z is
 * added (compiler/ops/fused.c). */
int32_t fused_z_after(const Node *n);
/* r's activations in order over y[0..n), z[0..n) added before the one at
 * sum_at (r->n: after the last; -1: none), on threads threads: what
 * oneDNN's post-ops leave to act.h's forms (runtime/dnnl.c make_attr). */
void direct_act_chain(const ActRun *r, int sum_at, const float *z, float *y,
		      size_t n, int threads);

/* Yuv420sp (compiler/ops/image.h): the NV12/NV21 frame to the float
 * NCHW image, row pairs spread over the threads. */
int direct_yuv420sp(RunCtx *s, Prepared *p, Task *t, FastKernel *k);

/* 1 / (1 + exp(-x)) for n floats, within 2e-7 relative of the double
 * result (tests/test_fast.c). */
void direct_sigmoid_run(const float *x, float *y, size_t n);

#endif
