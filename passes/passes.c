/* passes/passes.c - the pass table and the driver that runs it. */
#include <string.h>

#include "hybrid.h"
#include "partition.h"
#include "passes.h"
#include "scope.h"

static int infer_one(Model *m, Graph *g, const CompileOptions *o)
{
	(void)o;
	return infer_graph(m, g);
}

static int inline_one(Model *m, Graph *g, const CompileOptions *o)
{
	(void)m;
	(void)o;
	return graph_inline(g);
}

/* Value ids of a gear branch are its own, so renumbering them is safe;
 * a static compile has no gear spec naming them. */
static int dce_one(Model *m, Graph *g, const CompileOptions *o)
{
	(void)m;
	(void)o;
	return graph_dce(g, NULL);
}

static const Pass passes[] = {
	{ "hybrid", pass_hybrid, 0, "cloning the dynamic graph (--hybrid)" },
	{ "gear-clone", pass_gear_clone, 0, "building the gear branches" },
	{ "gear-scope", pass_gear_scope, 0, "cloning only what depends on the gear" },
	{ "infer", 0, infer_one, "shape inference and folding" },
	{ "inline", 0, inline_one, "inlining If nodes with a known condition" },
	{ "dce", 0, dce_one, "removing dead and constant nodes" },
	{ "symbols", 0, symbols_one, "naming the dynamic graph's dims" },
	{ "partition", 0, partition_one, "partitioning unknown-shape nodes" },
	{ "hybrid-root", pass_hybrid_root, 0, "attaching the dynamic graph" },
	{ "gear-root", pass_gear_root, 0, "merging the gears' outputs" },
	{ "memplan", pass_memplan, 0, "planning memory" },
};

const Pass *pass_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(passes); i++)
		if (!strcmp(passes[i].name, name))
			return &passes[i];
	return NULL;
}

const char *pass_names(void)
{
	static char buf[256];
	if (!buf[0]) {
		size_t k = 0;
		for (size_t i = 0; i < ARRAY_SIZE(passes) && k < sizeof(buf); i++)
			k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s",
					      i ? ", " : "", passes[i].name);
	}
	return buf;
}

int run_passes(Model *m, const CompileOptions *o)
{
	int n = (int)ARRAY_SIZE(passes);
	for (int i = 0; i < n; i++) {
		const Pass *p = &passes[i];
		if (o->progress)
			o->progress(p->what, i + 1, n);
		int rc = p->run ? p->run(m, o)
				: for_each_static_graph(m, p->run_graph, o);
		if (rc < 0)
			return error_prefix("model '%s'", o->model);
#ifdef GEARC_DEBUG
		if (graph_verify(m->graph) < 0)
			BUG("IR invalid after pass '%s': %s", p->name,
			    last_error());
#endif
		if (o->dump_after && !strcmp(o->dump_after, p->name))
			graph_print(stdout, m->graph, 0);
	}
	return 0;
}
