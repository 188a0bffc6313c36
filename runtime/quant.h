/*
 * runtime/quant.h - the integer and quantization ops as fast paths
 * (runtime/quant.c) for fast.c: MatMulInteger, ConvInteger,
 * QLinearMatMul and QLinearConv (requantized in double as the reference
 * kernels do) on oneDNN's u8 x s8 integer GEMM (exact with AVX512-VNNI,
 * a plain-C loop elsewhere); DynamicQuantizeLinear, QuantizeLinear and
 * DequantizeLinear as vector passes.  Each is bit-exact with the op's
 * reference kernel.
 *
 * Each builder fills *k and returns 1 if it takes task t's node at its
 * planned shapes, 0 if the reference kernel must run it, -1 with an
 * error.
 */
#ifndef GEARC_RT_QUANT_H
#define GEARC_RT_QUANT_H

#include "rt.h"

/* MatMulInteger: (u)int8 A of any rank against a 2-D B or a B of A's
 * batch dims, per-tensor A zero point, B's per tensor or per column;
 * QLinearMatMul the same with A's and Y's scales per tensor, B's per
 * tensor or per column, inner dim at most 33025 (its sums fit int32);
 * with VNNI and a constant 2-D B, on the kernel of DynQuantMatMul. */
int quant_matmul(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* ConvInteger: 1-D or 2-D, constant W, per-tensor X zero point, W's per
 * tensor or per output channel; QLinearConv the same with scales as
 * QLinearMatMul's and an int32 bias per output channel (with VNNI and
 * more than one input channel a group, on the kernel of DynQuantConv,
 * X and Y NHWC where runtime/layout.c chooses). */
int quant_conv(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* Its build: the VNNI QLinearConv takes X and Y channels-last. */
int quant_conv_build(RunCtx *s, Prepared *p, Task *t);
/* DynamicQuantizeLinear, QuantizeLinear (float32 to (u)int8) and
 * DequantizeLinear ((u)int8 to float32), per tensor or per axis. */
int quant_linear(RunCtx *s, Prepared *p, Task *t, FastKernel *k);

/* DynQuantMatMul (X of any rank against a 2-D W) and DynQuantConv (1-D
 * or 2-D): X quantized, the u8 x s8 product (AVX512-VNNI where the CPU
 * has it, else plain C) and the float scales and bias of the reference
 * kernel (compiler/ops/qfused.c), bit for bit; constant W and zero
 * points, packed once. */
int quant_dynquant(RunCtx *s, Prepared *p, Task *t, FastKernel *k);

#endif
