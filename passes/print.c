/* passes/print.c - the IR as text, for --dump-after and debugging. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

/* A name as the dumps show it: valid UTF-8, control characters escaped. */
static void print_name(FILE *f, const char *s)
{
	char *e = str_escape(s, strlen(s), ESC_CONTROLS, NULL);
	fputs(e, f);
	free(e);
}

/* After memplan: " @offset" (and "=view of"/"=in place of") of a tensor
 * in its graph's arena. */
static void print_place(FILE *f, const Graph *g, ValId id)
{
	const MemPlan *p = g->plan;
	for (int32_t i = 0; p && i < p->nblocks; i++) {
		const MemBlock *b = &p->blocks[i];
		if (b->tensor != id || b->node >= 0)
			continue;
		fprintf(f, "@%llu", (unsigned long long)b->offset);
		if (b->alias_of >= 0 && b->alias_of < g->nvals)
			fprintf(f, "(%s %s)", b->inplace ? "in place of" : "view of",
				g->vals[b->alias_of].name);
		return;
	}
}

static void print_value(FILE *f, const Graph *g, ValId id)
{
	char sh[128];
	if (id < 0) {
		fputs("-", f);
		return;
	}
	const Value *v = &g->vals[id];
	const char *dt = dtype_name(v->dtype);
	print_name(f, v->name);
	fprintf(f, ":%s%s", dt ? dt : "?",
		shape_str(&v->shape, sh, sizeof(sh)));
	if (v->konst)
		fputs("=const", f);
	print_place(f, g, id);
}

void graph_print(FILE *f, const Graph *g, int indent)
{
	fprintf(f, "%*sgraph ", indent, "");
	print_name(f, g->name);
	fprintf(f, " (%d nodes)\n", g->nnodes);
	if (g->plan)
		fprintf(f, "%*s  plan: arena %llu bytes, lower bound %llu\n",
			indent, "", (unsigned long long)g->plan->arena_bytes,
			(unsigned long long)g->plan->lower_bound_bytes);
	fprintf(f, "%*s  inputs:", indent, "");
	for (int32_t k = 0; k < g->ninputs; k++) {
		fputc(' ', f);
		print_value(f, g, g->inputs[k]);
	}
	fputc('\n', f);
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		fprintf(f, "%*s  %%%d ", indent, "", i);
		print_name(f, n->op_type);
		fputs(" '", f);
		print_name(f, n->name);
		fputs("' (", f);
		for (int32_t k = 0; k < n->ninputs; k++) {
			fputs(k ? ", " : "", f);
			print_value(f, g, n->inputs[k]);
		}
		fputs(") -> ", f);
		for (int32_t k = 0; k < n->noutputs; k++) {
			fputs(k ? ", " : "", f);
			print_value(f, g, n->outputs[k]);
		}
		fputc('\n', f);
		for (int32_t k = 0; k < n->nattrs; k++) {
			const Attr *a = &n->attrs[k];
			if (a->type == ATTR_GRAPH)
				graph_print(f, a->g, indent + 4);
			for (int32_t j = 0; a->type == ATTR_GRAPHS && j < a->n;
			     j++)
				graph_print(f, a->graphs[j], indent + 4);
		}
	}
	fprintf(f, "%*s  outputs:", indent, "");
	for (int32_t k = 0; k < g->noutputs; k++) {
		fputc(' ', f);
		print_value(f, g, g->outputs[k]);
	}
	fputc('\n', f);
}
