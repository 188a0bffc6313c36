/*
 * runtime/convert.h - Cast as one pass over memory (runtime/convert.c):
 * float16 <-> float32 (F16C where the CPU has it) and the integer types
 * and bool -> float32, each rounded once as the reference kernel rounds.
 */
#ifndef GEARC_RT_CONVERT_H
#define GEARC_RT_CONVERT_H

#include "rt.h"

/* Cast of a static tensor between those dtypes: 1 and *k filled if it
 * takes task t's node, 0 if the reference kernel runs it. */
int convert_cast(RunCtx *s, Prepared *p, Task *t, FastKernel *k);

/* n float16 values to float32 (exact), and float32 to float16 (rounded
 * to nearest even), with F16C where the CPU has it. */
void convert_half_float(const void *x, float *y, size_t n);
void convert_float_half(const float *x, void *y, size_t n);

#endif
