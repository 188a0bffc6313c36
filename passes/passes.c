/* passes/passes.c - the pass table, the driver that runs it, and
 * specialise(), the step every graph compiled on its own goes through. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contrib.h"
#include "hybrid.h"
#include "partition.h"
#include "passes.h"
#include "scope.h"

/* Once per graph: gear-scope infers the branches to classify their values
 * and specialises what it must count before the pass would.  Specialising
 * a gear branch renumbers its own value ids (the gear spec names the
 * root's); the main graph's renumber the spec's ids too. */
int specialise(Model *m, Graph *g)
{
	ValId *map = NULL;
	if (g->specialised == SPEC_DONE)
		return 0;
	if ((g->specialised != SPEC_INFERRED && infer_graph(m, g) < 0) ||
	    graph_inline(g) < 0 ||
	    graph_dce(g, g == m->graph ? &map : NULL) < 0)
		return -1;
	for (int32_t k = 0; map && m->gears && k < m->gears->ninputs; k++)
		if (m->gears->inputs[k].val >= 0)
			m->gears->inputs[k].val = map[m->gears->inputs[k].val];
	free(map);
	g->specialised = SPEC_DONE;
	return 0;
}

static double seconds_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int pass_specialise(Model *m, Graph *g, const PassOptions *o)
{
	(void)o;
	return specialise(m, g);
}

static const Pass passes[] = {
	{ "widen-fp16", pass_widen_fp16, 0, "computing float16 in float32" },
	{ "qdq", pass_qdq, 0, "rewriting QDQ groups into QLinearConv/QLinearMatMul" },
	{ "hybrid", pass_hybrid, 0, "cloning the dynamic graph (--hybrid)" },
	{ "gear-scope", pass_gear_scope, 0, "cloning only what depends on the gear" },
	{ "gear-clone", pass_gear_clone, 0, "building the gear branches" },
	{ "specialise", 0, pass_specialise,
	  "shape inference, folding, If inlining and dead-node removal" },
	{ "contrib", 0, pass_contrib, "writing ONNX Runtime's contrib ops as standard ops where those run fast" },
	{ "fuse", pass_fuse, 0, "fusing BatchNormalization, bias, residual and activations" },
	{ "keep-fp16", 0, keep_fp16_round,
	  "rounding float16 values where they are made (--keep-fp16)" },
	{ "precision", 0, pass_precision,
	  "marking the nodes that may compute in bfloat16" },
	{ "symbols", 0, symbols_one, "naming the dynamic graph's dims" },
	{ "partition", 0, partition_one, "partitioning unknown-shape nodes" },
	{ "hybrid-root", pass_hybrid_root, 0, "attaching the dynamic graph" },
	{ "gear-root", pass_gear_root, 0, "merging the gears' outputs" },
	{ "batch-rows", pass_batch_rows, 0, "proving the batch rows independent" },
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

/* Whether pass p has anything to do in this compile: progress lists only
 * those (a static compile has no gear or hybrid passes). */
static bool pass_applies(const Pass *p, const Model *m,
			 const PassOptions *o)
{
	if (!strcmp(p->name, "hybrid") || !strcmp(p->name, "symbols") ||
	    !strcmp(p->name, "hybrid-root"))
		return o->hybrid;
	if (!strcmp(p->name, "fuse"))
		return !o->no_fuse;
	if (!strcmp(p->name, "contrib"))
		return contrib_applies(m, o);
	if (!strcmp(p->name, "qdq"))
		return qdq_applies(m, o);
	if (!strcmp(p->name, "widen-fp16"))
		return widen_applies(m, o);
	if (!strcmp(p->name, "keep-fp16"))
		return o->keep_fp16 && m->half_values;
	if (!strcmp(p->name, "precision"))
		return o->precision && o->precision->dtype;
	if (!strcmp(p->name, "gear-scope"))
		return o->gear_scope != NULL;
	if (!strcmp(p->name, "gear-clone") || !strcmp(p->name, "gear-root") ||
	    !strcmp(p->name, "batch-rows"))
		return m->gears != NULL;
	return true;
}

/* Whether name is in --dump-after's comma list. */
static bool dump_listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *s = list; s && *s;) {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (len == n && !strncmp(s, name, n))
			return true;
		s = e ? e + 1 : NULL;
	}
	return false;
}

const char *dump_after_check(const char *list)
{
	static _Thread_local char bad[64];
	for (const char *s = list; s;) {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		bool found = false;
		for (size_t i = 0; i < ARRAY_SIZE(passes) && !found; i++)
			found = strlen(passes[i].name) == len &&
				!strncmp(passes[i].name, s, len);
		if (!found) {
			snprintf(bad, sizeof(bad), "%.*s",
				 (int)(len < 60 ? len : 60), s);
			return bad;
		}
		s = e ? e + 1 : NULL;
	}
	return NULL;
}

/* --dump-after: the graph after pass p, also when p failed (then it
 * shows what the pass was working on). */
static void dump_after(const Model *m, const Pass *p, bool failed)
{
	printf("# after pass %s%s\n", p->name,
	       failed ? " (failed: the graph as the pass left it)" : "");
	graph_print(stdout, m->graph, 0);
	fflush(stdout);
}

int run_passes(Model *m, const PassOptions *o)
{
	int n = 0, step = 0;
	m->fold_limit = o->fold_limit;
	for (size_t i = 0; i < ARRAY_SIZE(passes); i++)
		n += pass_applies(&passes[i], m, o);
	for (size_t i = 0; i < ARRAY_SIZE(passes); i++) {
		const Pass *p = &passes[i];
		bool listed = o->dump_after && dump_listed(o->dump_after, p->name);
		if (o->progress && pass_applies(p, m, o))
			o->progress(p->what, ++step, n);
		double t0 = o->pass_done ? seconds_now() : 0;
		int rc = p->run ? p->run(m, o)
				: for_each_gear_graph(m, p->run_graph, o);
		if (rc < 0) {
			if (listed)
				dump_after(m, p, true);
			return -1;
		}
#ifdef GEARC_DEBUG
		if (graph_verify(m->graph) < 0)
			BUG("IR invalid after pass '%s': %s", p->name,
			    last_error());
#endif
		if (listed)
			dump_after(m, p, false);
		if (o->pass_done && pass_applies(p, m, o))
			o->pass_done(m, p->name, seconds_now() - t0, o->log_ctx);
	}
	/* the root's name in the file: the source's is m->graph_name */
	m->graph->name = ROOT_GRAPH;
	return 0;
}
