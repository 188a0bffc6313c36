/*
 * compiler/infer.h - the interpreter: shape and dtype inference with
 * folding, and evaluation of a node or subgraph by the same means
 * (compiler/infer.c).  It sits beside the op table, below the passes and
 * the runtime: the op hooks reach it through op_infer_subgraph() and
 * op_eval_subgraph() (compiler/ops/opimpl.h), the passes through
 * infer_graph(), the runtime through passes/runspec.h.
 */
#ifndef GEARC_INFER_H
#define GEARC_INFER_H

#include "ir.h"

/* Shape and dtype inference over g and its subgraphs, in topological
 * order, with the op table's infer hooks, folding outputs of at most
 * m->fold_limit bytes (compiler/infer.c).  An op with no hook, or one
 * whose inputs it cannot handle, is an error naming the node and op. */
int infer_graph(Model *m, Graph *g);

/* Where run-time evaluation finds the contents of a graph's values: the
 * runtime's bound tensors (runtime/exec.c), or folded constants. */
typedef struct EvalSource {
	const Tensor *(*value)(void *ctx, ValId v); /* NULL if not known */
	void *ctx;
} EvalSource;
/* Runs node n of g by inference with folding and no size limit, on a
 * copy of g's values in which n's inputs and the outer references of its
 * subgraphs hold src's tensors: for nodes whose shapes or contents need
 * inference at run time (If, Loop, Scan, data-dependent shapes).  outs[k]
 * receives output k (NULL if omitted); everything is allocated from a.
 * -1 with an error naming the node if an output cannot be computed. */
int eval_node(Model *m, Graph *g, const Node *n, const EvalSource *src,
	      Arena *a, const Tensor **outs);
/* Runs subgraph sub of g (a Case branch) on inputs in[] the same way. */
int eval_graph(Model *m, Graph *g, const EvalSource *src, const Graph *sub,
	       const Tensor *const *in, Arena *a, const Tensor **outs);

#endif
