/*
 * passes/absorb.c - which source values a fusion left inside which node.
 *
 * A fused node computes values of the source model that no longer exist
 * (a FusedConv's Conv output before its Relu, a LayerNormalization's
 * written-out steps).  `gearc run --dump-tensors` writes every value a
 * run has, and must say where the others went rather than leave them
 * out in silence, so each node keeps the names it took in (Node.fused,
 * stored in the .om).
 *
 * Around a round of rewrites that ends in graph_dce() (the fuse pass),
 * absorb_begin() copies the graph's edges as they were and absorb_end()
 * (given graph_dce's old -> new value map; NULL after a failure: it
 * only frees) gives every value that died to the node it flowed into: walking the
 * old nodes from the last, a node lives on as the new producer of one
 * of its outputs, else goes into what its first reader (in node order)
 * went into.  A node's list is then, in the old node order, the lists
 * and dead outputs of the old nodes that went into it, so a list a
 * node had (an earlier round's) stays.  A rewrite that knows what it
 * takes in without a graph_dce() of its own (the qdq pass, which runs
 * before specialise) names it directly, and absorb_prune() drops
 * afterwards the names that a graph still has as a value (a
 * DequantizeLinear another node reads too).
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

struct Absorb {
	int32_t nnodes;
	int32_t *in_at, *ins;   /* node i's inputs: ins[in_at[i]..in_at[i+1]) */
	int32_t *out_at, *outs; /* and outputs */
	const char ***fused;    /* node i's list, and its length */
	int32_t *nfused;
	const char **names;     /* per old value */
	ValId *producer;        /* per old value: its node, or -1 */
	bool *node_value;       /* per old value: a node's output */
};

static int32_t *edges(const Graph *g, bool out, int32_t **at)
{
	int32_t n = 0;
	*at = xmalloc(((size_t)g->nnodes + 1) * sizeof(int32_t));
	for (int32_t i = 0; i < g->nnodes; i++) {
		(*at)[i] = n;
		n += out ? g->nodes[i].noutputs : g->nodes[i].ninputs;
	}
	(*at)[g->nnodes] = n;
	int32_t *e = xmalloc(((size_t)n + 1) * sizeof(int32_t));
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *x = &g->nodes[i];
		memcpy(e + (*at)[i], out ? x->outputs : x->inputs,
		       (size_t)(out ? x->noutputs : x->ninputs) *
			       sizeof(ValId));
	}
	return e;
}

Absorb *absorb_begin(const Graph *g)
{
	Absorb *a = xcalloc(1, sizeof(*a));
	a->nnodes = g->nnodes;
	a->ins = edges(g, false, &a->in_at);
	a->outs = edges(g, true, &a->out_at);
	a->fused = xmalloc(((size_t)g->nnodes + 1) * sizeof(*a->fused));
	a->nfused = xmalloc(((size_t)g->nnodes + 1) * sizeof(int32_t));
	for (int32_t i = 0; i < g->nnodes; i++) {
		a->fused[i] = g->nodes[i].fused;
		a->nfused[i] = g->nodes[i].nfused;
	}
	size_t nv = (size_t)g->nvals + 1;
	a->names = xmalloc(nv * sizeof(*a->names));
	a->producer = xmalloc(nv * sizeof(ValId));
	a->node_value = xcalloc(nv, sizeof(bool));
	for (ValId v = 0; v < g->nvals; v++) {
		a->names[v] = g->vals[v].name;
		a->producer[v] = -1;
	}
	for (int32_t i = 0; i < g->nnodes; i++)
		for (int32_t k = a->out_at[i]; k < a->out_at[i + 1]; k++)
			if (a->outs[k] >= 0 && a->outs[k] < g->nvals) {
				a->producer[a->outs[k]] = i;
				a->node_value[a->outs[k]] =
					g->vals[a->outs[k]].kind == VAL_NODE;
			}
	return a;
}

static void absorb_free(Absorb *a)
{
	free(a->in_at);
	free(a->ins);
	free(a->out_at);
	free(a->outs);
	free(a->fused);
	free(a->nfused);
	free(a->names);
	free(a->producer);
	free(a->node_value);
	free(a);
}

/* The new node old value v lives on as the output of, or -1. */
static int32_t now_made_by(const Graph *g, const ValId *map, ValId v)
{
	ValId w = map[v];
	return w >= 0 && g->vals[w].kind == VAL_NODE ? g->vals[w].producer : -1;
}

/* Per old node, the new node it went into (or -1): see the top. */
static int32_t *destinations(const Absorb *a, const Graph *g,
			     const ValId *map)
{
	int32_t *dest = xmalloc(((size_t)a->nnodes + 1) * sizeof(int32_t));
	/* the first reader of each old node: readers come after it */
	int32_t *reader = xmalloc(((size_t)a->nnodes + 1) * sizeof(int32_t));
	for (int32_t i = 0; i < a->nnodes; i++)
		reader[i] = -1;
	for (int32_t j = a->nnodes - 1; j >= 0; j--)
		for (int32_t k = a->in_at[j]; k < a->in_at[j + 1]; k++) {
			ValId v = a->ins[k];
			int32_t p = v >= 0 ? a->producer[v] : -1;
			if (p >= 0 && p < j)
				reader[p] = j;
		}
	for (int32_t i = a->nnodes - 1; i >= 0; i--) {
		dest[i] = -1;
		for (int32_t k = a->out_at[i]; k < a->out_at[i + 1] &&
					       dest[i] < 0; k++)
			if (a->outs[k] >= 0)
				dest[i] = now_made_by(g, map, a->outs[k]);
		if (dest[i] < 0 && reader[i] >= 0)
			dest[i] = dest[reader[i]];
	}
	free(reader);
	return dest;
}

/* The values of old node i that died (not folded to a weight, which is
 * still there), or only their count with names NULL. */
static int32_t dead_outputs(const Absorb *a, const ValId *map, int32_t i,
			    const char **names)
{
	int32_t n = 0;
	for (int32_t k = a->out_at[i]; k < a->out_at[i + 1]; k++) {
		ValId v = a->outs[k];
		if (v < 0 || !a->node_value[v] || map[v] >= 0)
			continue;
		if (names)
			names[n] = a->names[v];
		n++;
	}
	return n;
}

void absorb_end(Absorb *a, Graph *g, const ValId *map)
{
	if (!map) { /* the round failed: nothing to give */
		absorb_free(a);
		return;
	}
	int32_t *dest = destinations(a, g, map);
	int32_t *count = xcalloc((size_t)g->nnodes + 1, sizeof(int32_t));
	for (int32_t i = 0; i < a->nnodes; i++)
		if (dest[i] >= 0)
			count[dest[i]] += a->nfused[i] +
					  dead_outputs(a, map, i, NULL);
	for (int32_t k = 0; k < g->nnodes; k++) {
		g->nodes[k].fused = count[k] ? arena_array(g->arena,
							   (size_t)count[k],
							   sizeof(char *))
					     : NULL;
		g->nodes[k].nfused = 0;
	}
	for (int32_t i = 0; i < a->nnodes; i++) {
		Node *d = dest[i] >= 0 ? &g->nodes[dest[i]] : NULL;
		if (!d)
			continue;
		for (int32_t k = 0; k < a->nfused[i]; k++)
			d->fused[d->nfused++] = a->fused[i][k];
		if (d->fused) /* no slots: nothing of this node was absorbed */
			d->nfused += dead_outputs(a, map, i,
						  d->fused + d->nfused);
	}
	free(count);
	free(dest);
	absorb_free(a);
}

/* ---- absorb_prune ------------------------------------------------------- */

typedef struct NameSet {
	const char **slot;
	size_t mask;
} NameSet;

static uint64_t name_hash(const char *s)
{
	return hash_bytes(s, strlen(s), 0);
}

static NameSet names_of(const Graph *g)
{
	size_t cap = 16;
	while (cap < 2 * (size_t)g->nvals)
		cap *= 2;
	NameSet s = { xcalloc(cap, sizeof(char *)), cap - 1 };
	for (ValId v = 0; v < g->nvals; v++) {
		size_t h = (size_t)name_hash(g->vals[v].name) & s.mask;
		while (s.slot[h])
			h = (h + 1) & s.mask;
		s.slot[h] = g->vals[v].name;
	}
	return s;
}

static bool has_name(const NameSet *s, const char *name)
{
	for (size_t h = (size_t)name_hash(name) & s->mask; s->slot[h];
	     h = (h + 1) & s->mask)
		if (!strcmp(s->slot[h], name))
			return true;
	return false;
}

void absorb_prune(Graph *g)
{
	bool any = false;
	for (int32_t i = 0; i < g->nnodes && !any; i++)
		any = g->nodes[i].nfused > 0;
	if (!any)
		return;
	NameSet s = names_of(g);
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		/* a new list: gear clones share the one they were cloned with */
		const char **kept = n->nfused ? arena_array(g->arena,
							    (size_t)n->nfused,
							    sizeof(char *))
					      : NULL;
		int32_t nkept = 0;
		for (int32_t k = 0; k < n->nfused; k++)
			if (!has_name(&s, n->fused[k]))
				kept[nkept++] = n->fused[k];
		n->fused = nkept ? kept : NULL;
		n->nfused = nkept;
	}
	free(s.slot);
}
