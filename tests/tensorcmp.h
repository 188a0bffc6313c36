/*
 * tests/tensorcmp.h - comparing a computed tensor with an expected one,
 * by ONNX's backend-test rule.
 *
 * Floats (float16, bfloat16, float32, float64) agree when
 * |got - want| <= atol + rtol * |want| element by element, NaN equals NaN
 * and infinities must match in sign; integers, bools and strings must be
 * equal.  dtype and shape must be the same (ONNX 1.12's test data stores
 * bfloat16 as uint16: that pair counts as the same dtype).
 */
#ifndef GEARC_TENSORCMP_H
#define GEARC_TENSORCMP_H

#include "compiler/ir.h"

/* 0 if got matches want; else -1 with an error naming the first element
 * that differs, its values and the largest error over the tensor. */
int tensor_close(const Tensor *got, const Tensor *want, double rtol,
		 double atol);

#endif
