/*
 * runtime/ew.h - float32 elementwise ops at any numpy broadcast and the
 * unary math and activation ops (runtime/ew.c) for fast.c: the nodes
 * direct.c's same-shape and scalar loops and chanwise.c's per-channel
 * ones leave.
 */
#ifndef GEARC_RT_EW_H
#define GEARC_RT_EW_H

#include "rt.h"

/* Add, Sub, Mul, Div, Max, Min, Pow of two fp32 tensors, and Equal,
 * Greater, GreaterOrEqual, Less, LessOrEqual of them (to bool), numpy
 * broadcasting (opset 7 on): the reference's bits. */
int ew_binary(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* A unary fp32 op: the activations of compiler/act.h's table as ops
 * (Tanh, LeakyRelu, Elu, Selu, Softplus, HardSigmoid, HardSwish, Mish,
 * Clip with constant bounds, min <= max) by their fp32 forms, within
 * the table's accuracy; and the math ops Reciprocal, Floor, Ceil,
 * Round, Sign, Softsign, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh,
 * Asinh, Acosh, Atanh, Celu, ThresholdedRelu in float (the rounding ones
 * exact, libm's float forms within an ulp or two). */
int ew_unary(RunCtx *s, Prepared *p, Task *t, FastKernel *k);

#endif
