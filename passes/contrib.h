/*
 * passes/contrib.h - ONNX Runtime's contrib ops (compiler/ops/contrib*.c)
 * as standard ONNX (passes/contrib.c): gearc export writes them so, and
 * the pass "contrib" writes the ones whose standard form is their fast
 * path (the fuse pass and the kernels of the standard ops take it).
 */
#ifndef GEARC_PASSES_CONTRIB_H
#define GEARC_PASSES_CONTRIB_H

#include "passes.h"

/* Whether contrib op n has a standard ONNX form (contrib_lower). */
bool contrib_has_form(const Node *n);
/* n's standard form for opset appended to dst: ins[k] are its inputs as
 * values of dst (-1 where omitted), outs[k] its outputs (-1 where
 * omitted), each written by the last node computing it.  0, or -1 with
 * an error naming the node (a form that needs static shapes, at
 * dynamic ones). */
int contrib_lower(Graph *dst, const Node *n, int64_t opset, const ValId *ins,
		  const ValId *outs);
/* The pass "contrib", on one specialised graph (after specialise, before
 * fuse; not with --no-fuse): the GELU family and BiasAdd of float32,
 * FusedMatMul and DynamicQuantizeMatMul written as
 * standard ONNX, which the fuse pass and the fast paths take; the graph
 * inferred again. */
int pass_contrib(Model *m, Graph *g, const PassOptions *o);
/* Whether the model has an op pass_contrib writes out (progress lists
 * the pass only then). */
bool contrib_applies(const Model *m, const PassOptions *o);

#endif
