/* passes/passes.c - the pass table and the driver that runs it. */
#include <string.h>

#include "passes.h"

static const Pass passes[] = {
	{ "infer", pass_infer, "shape and dtype inference" },
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
		if (p->run(m, o) < 0)
			return error_prefix("model '%s'", o->model);
#ifndef NDEBUG
		if (graph_verify(m->graph) < 0)
			BUG("IR invalid after pass '%s': %s", p->name,
			    last_error());
#endif
		if (o->dump_after && !strcmp(o->dump_after, p->name))
			graph_print(stdout, m->graph, 0);
	}
	return 0;
}
