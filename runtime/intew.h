/*
 * runtime/intew.h - elementwise ops on int8, uint8, int32, int64 and
 * float16 as one pass over memory (runtime/intew.c), each giving the
 * reference kernel's results.
 */
#ifndef GEARC_RT_INTEW_H
#define GEARC_RT_INTEW_H

#include "rt.h"

/* Each: 1 and *k filled if it takes task t's node, 0 if the reference
 * kernel runs it.  Add, Sub, Mul, Div, Max, Min (two inputs), Equal,
 * Less, Greater, numpy-broadcast: */
int intew_binary(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* Relu, Neg, Abs, and Clip (bounds of one element, or absent): */
int intew_unary(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* Where of any dtype of 1, 2, 4 or 8 bytes, numpy-broadcast: */
int intew_where(RunCtx *s, Prepared *p, Task *t, FastKernel *k);

#endif
