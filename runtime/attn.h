/*
 * runtime/attn.h - Sdpa, scaled dot-product attention
 * (compiler/ops/attention.c), in plain C (runtime/attn.c) for fast.c.
 */
#ifndef GEARC_RT_ATTN_H
#define GEARC_RT_ATTN_H

#include "rt.h"

/* Sdpa of fp32 at static shapes, none of them empty: per (batch block,
 * tile of queries) the scores, the softmax and the product with V in one
 * pass, spread over the session's threads. */
int attn_sdpa(RunCtx *s, Prepared *p, Task *t, FastKernel *k);

#endif
