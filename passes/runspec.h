/*
 * passes/runspec.h - the runtime's one door into the compiler: a graph
 * specialised at run time, and a node evaluated at run time
 * (passes/runspec.c), and, through passes/constwork.h, work on weights
 * done once.  runtime/ names no other function of passes/ or of the
 * interpreter (compiler/infer.h).
 */
#ifndef GEARC_RUNSPEC_H
#define GEARC_RUNSPEC_H

#include "compiler/infer.h"
#include "passes/constwork.h"

/* Graph src of m (its calls partitions, not scopes) specialised to its
 * inputs' shapes (shapes[i] for input i) and, where values[i] is given,
 * to input i's contents, as a compile does: flattened, inferred, Ifs on
 * constants inlined, dead nodes dropped (graph_flatten, passes/flatten.h),
 * its work on weights alone done (passes/constwork.h), then planned (memplan_graph, passes/memplan.h).  Built in arena a;
 * nothing is written to m or src, so sessions on several threads may
 * call it on one model at once.  NULL with an error. */
Graph *runspec_graph(Model *m, const Graph *src, Arena *a,
		     const Shape *const *shapes, const Tensor *const *values);
/* Node n of g run by evaluation (eval_node, compiler/infer.h): for nodes
 * whose shapes or contents are known only at run time. */
int runspec_node(Model *m, Graph *g, const Node *n, const EvalSource *src,
		 Arena *a, const Tensor **outs);

#endif
