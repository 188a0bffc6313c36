/* passes/runspec.c - the runtime's door into the compiler (runspec.h). */
#include "flatten.h"
#include "memplan.h"
#include "runspec.h"

Graph *runspec_graph(Model *m, const Graph *src, Arena *a,
		     const Shape *const *shapes, const Tensor *const *values)
{
	Graph *g = graph_flatten(m, src, a, shapes, values);
	if (!g)
		return NULL;
	ConstWork cw;
	constwork_begin(&cw, m, a);
	int rc = constwork_eval(&cw, g);
	constwork_end(&cw);
	return rc < 0 || memplan_graph(m, g, NULL) < 0 ? NULL : g;
}

int runspec_node(Model *m, Graph *g, const Node *n, const EvalSource *src,
		 Arena *a, const Tensor **outs)
{
	return eval_node(m, g, n, src, a, outs);
}
