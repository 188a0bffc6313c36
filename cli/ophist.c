/*
 * cli/ophist.c - how many nodes of each op a model has, in its graphs and
 * subgraphs: what 'gearc inspect' lists, what --log=info prints per pass
 * (the difference a fuse pass makes) and at the end (the ops used), and
 * where a compile finds every op gearc does not support at once.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static OpCount *find(OpHist *h, const char *domain, const char *op)
{
	for (int32_t i = 0; i < h->n; i++)
		if (!strcmp(h->e[i].op, op) && !strcmp(h->e[i].domain, domain))
			return &h->e[i];
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 32;
		h->e = xrealloc(h->e, (size_t)h->cap * sizeof(*h->e));
	}
	OpCount *c = &h->e[h->n++];
	*c = (OpCount){ xstrdup(op), xstrdup(domain), 0, false };
	return c;
}

static int count_graph(Graph *g, void *ctx)
{
	OpHist *h = ctx;
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		const char *d = domain_is_default(n->domain) ? "" : n->domain;
		OpCount *c = find(h, d, n->op_type);
		c->n++;
		c->known = n->op != OP_UNKNOWN;
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	const OpCount *x = a, *y = b;
	int d = strcmp(x->domain, y->domain);
	return d ? d : strcmp(x->op, y->op);
}

void ophist_add(OpHist *h, Graph *g)
{
	if (g)
		graph_walk(g, count_graph, h);
	qsort(h->e, (size_t)h->n, sizeof(*h->e), by_name);
}

int64_t ophist_get(const OpHist *h, const char *domain, const char *op)
{
	for (int32_t i = 0; i < h->n; i++)
		if (!strcmp(h->e[i].op, op) && !strcmp(h->e[i].domain, domain))
			return h->e[i].n;
	return 0;
}

void ophist_free(OpHist *h)
{
	for (int32_t i = 0; i < h->n; i++) {
		free(h->e[i].op);
		free(h->e[i].domain);
	}
	free(h->e);
	memset(h, 0, sizeof(*h));
}

/* "Attention (domain com.microsoft)" or "Conv". */
static size_t op_label(char *buf, size_t n, const OpCount *c)
{
	int w = *c->domain ? snprintf(buf, n, "%s (domain %s)", c->op, c->domain)
			   : snprintf(buf, n, "%s", c->op);
	return w < 0 ? 0 : (size_t)w < n ? (size_t)w : n - 1;
}

int unsupported_ops_error(const OpHist *h)
{
	char list[1024];
	size_t k = 0;
	int32_t bad = 0;
	list[0] = 0;
	for (int32_t i = 0; i < h->n; i++) {
		const OpCount *c = &h->e[i];
		if (c->known)
			continue;
		if (bad++ && k + 2 < sizeof(list))
			k += (size_t)snprintf(list + k, sizeof(list) - k, ", ");
		if (k + 1 < sizeof(list))
			k += op_label(list + k, sizeof(list) - k, c);
	}
	if (!bad)
		return 0;
	if (bad == 1)
		return error("op %s is not supported (see 'gearc help ops')",
			     list);
	return error("%d ops are not supported: %s (see 'gearc help ops')",
		     bad, list);
}

void ophist_print(FILE *f, const OpHist *h)
{
	for (int32_t i = 0; i < h->n; i++) {
		char label[256];
		op_label(label, sizeof(label), &h->e[i]);
		fprintf(f, "%s%lld %s", i ? ", " : "", (long long)h->e[i].n,
			label);
	}
}

void ophist_print_diff(FILE *f, const OpHist *before, const OpHist *after)
{
	int k = 0;
	for (int32_t i = 0; i < before->n; i++) {
		const OpCount *c = &before->e[i];
		int64_t d = ophist_get(after, c->domain, c->op) - c->n;
		char label[256];
		op_label(label, sizeof(label), c);
		if (d)
			fprintf(f, "%s%+lld %s", k++ ? ", " : "", (long long)d,
				label);
	}
	for (int32_t i = 0; i < after->n; i++) {
		const OpCount *c = &after->e[i];
		char label[256];
		op_label(label, sizeof(label), c);
		if (!ophist_get(before, c->domain, c->op))
			fprintf(f, "%s+%lld %s", k++ ? ", " : "",
				(long long)c->n, label);
	}
}
