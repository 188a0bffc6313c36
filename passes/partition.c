/*
 * passes/partition.c - dynamic/static partition (partition.h says what
 * and why; this file is how).
 *
 *   1. which nodes are unknown (partition_node_unknown);
 *   2. a cluster per node, linked by data dependencies (init_clusters);
 *   3. merges: unknown absorption, known merge, downgrade (merge_*);
 *   4. the clusters in topological order (number_clusters);
 *   5. one PartitionedCall and subgraph per cluster (wrap_*).
 *
 * Clusters are a union-find over node indices; a cluster's representative
 * is its smallest node index, and its neighbour lists hold representatives
 * as they were when the list was last rebuilt (find() resolves them).
 * Reachability is searched over the cluster graph, never bounded by node
 * positions: after merges a path between clusters need not be a path
 * between nodes.
 */
#include <stdlib.h>
#include <string.h>

#include "partition.h"
#include "scope.h"

/* ---- unknown nodes -------------------------------------------------------- */

static bool value_unknown(const Value *v)
{
	return !shape_is_static(&v->shape) || (v->flags & VF_DATA_DEP);
}

static bool forced(const Node *n)
{
	const Attr *a = node_attr(n, FORCE_UNKNOWN_ATTR);
	return a && a->type == ATTR_INT && a->i != 0;
}

static bool graph_has_unknown(const Graph *g);

static bool subgraphs_unknown(const Node *n)
{
	for (int32_t k = 0; k < n->nattrs; k++) {
		const Attr *a = &n->attrs[k];
		if (a->type == ATTR_GRAPH && a->g && graph_has_unknown(a->g))
			return true;
		for (int32_t j = 0; a->type == ATTR_GRAPHS && j < a->n; j++)
			if (a->graphs[j] && graph_has_unknown(a->graphs[j]))
				return true;
	}
	return false;
}

/* A value of unknown shape or a forced node in g, at any depth. */
static bool graph_has_unknown(const Graph *g)
{
	for (ValId v = 0; v < g->nvals; v++)
		if (g->vals[v].kind != VAL_WEIGHT && value_unknown(&g->vals[v]))
			return true;
	for (int32_t i = 0; i < g->nnodes; i++)
		if (forced(&g->nodes[i]) || subgraphs_unknown(&g->nodes[i]))
			return true;
	return false;
}

bool partition_node_unknown(const Graph *g, const Node *n)
{
	if (forced(n))
		return true;
	if (scope_is_call(n)) /* static per gear (passes/scope.h) */
		return false;
	for (int32_t k = 0; k < n->ninputs; k++)
		if (n->inputs[k] >= 0 && value_unknown(&g->vals[n->inputs[k]]))
			return true;
	for (int32_t k = 0; k < n->noutputs; k++)
		if (n->outputs[k] >= 0 &&
		    value_unknown(&g->vals[n->outputs[k]]))
			return true;
	return subgraphs_unknown(n);
}

/* ---- clusters ------------------------------------------------------------- */

typedef struct Cl {
	int32_t *in, *out; /* neighbours, maybe stale: malloc'd, as each
			    * merge replaces them (an arena would keep
			    * every list a growing cluster ever had) */
	int32_t nin, nout;
	int32_t size;
	bool unknown;
} Cl;

typedef struct Part {
	const Graph *g;
	int32_t n;
	int32_t *up; /* union-find parent, per node */
	Cl *c;	     /* per representative */
	int32_t *pfirst, *preds; /* node predecessors, CSR */
	uint32_t *mark, epoch;	 /* scratch marks: mark[x] == epoch */
	uint32_t *mark2, epoch2; /* a second set */
	int32_t *queue, *set;
	Arena scratch; /* every array above but the neighbour lists */
} Part;

static int32_t find(Part *P, int32_t x)
{
	while (P->up[x] != x) {
		P->up[x] = P->up[P->up[x]];
		x = P->up[x];
	}
	return x;
}

static uint32_t tick(uint32_t *marks, uint32_t *epoch, int32_t n)
{
	if (++*epoch == 0) { /* wrapped: clear and start again */
		memset(marks, 0, (size_t)n * sizeof(uint32_t));
		*epoch = 1;
	}
	return *epoch;
}

/* The producer in g of value v read by a node, or -1. */
static int32_t producer_of(const Graph *g, ValId v)
{
	if (v < 0 || v >= g->nvals || g->vals[v].kind != VAL_NODE)
		return -1;
	return g->vals[v].producer;
}

/* Calls fn(ctx, v) for every value of g node n reads: its inputs, then
 * the outer references of its subgraphs (each subgraph names the values
 * of g that any depth below it reads, level by level). */
typedef void (*ReadFn)(void *ctx, ValId v);

static void sub_reads(const Graph *sub, ReadFn fn, void *ctx)
{
	for (ValId v = 0; v < sub->nvals; v++)
		if (sub->vals[v].kind == VAL_OUTER && sub->vals[v].outer >= 0)
			fn(ctx, sub->vals[v].outer);
}

static void node_reads(const Node *n, ReadFn fn, void *ctx)
{
	for (int32_t k = 0; k < n->ninputs; k++)
		if (n->inputs[k] >= 0)
			fn(ctx, n->inputs[k]);
	for (int32_t k = 0; k < n->nattrs; k++) {
		const Attr *a = &n->attrs[k];
		if (a->type == ATTR_GRAPH && a->g)
			sub_reads(a->g, fn, ctx);
		for (int32_t j = 0; a->type == ATTR_GRAPHS && j < a->n; j++)
			if (a->graphs[j])
				sub_reads(a->graphs[j], fn, ctx);
	}
}

typedef struct PredCtx {
	Part *P;
	int32_t node, n, cap;
} PredCtx;

static void add_pred(void *ctx, ValId v)
{
	PredCtx *pc = ctx;
	Part *P = pc->P;
	int32_t p = producer_of(P->g, v);
	if (p < 0 || p == pc->node || P->mark[p] == (uint32_t)pc->node + 1)
		return;
	P->mark[p] = (uint32_t)pc->node + 1;
	int32_t k = ARENA_PUSH(&P->scratch, P->preds, pc->n, pc->cap);
	P->preds[k] = p;
}

/* Node predecessors (distinct, in read order) and one cluster per node
 * with its neighbour lists. */
static void init_clusters(Part *P)
{
	const Graph *g = P->g;
	int32_t n = P->n;
	PredCtx pc = { .P = P };
	for (int32_t i = 0; i < n; i++) {
		P->pfirst[i] = pc.n;
		pc.node = i;
		node_reads(&g->nodes[i], add_pred, &pc);
	}
	P->pfirst[n] = pc.n;
	memset(P->mark, 0, (size_t)n * sizeof(uint32_t));
	int32_t *nsucc = ARENA_ARRAY(&P->scratch, n + 1, int32_t);
	for (int32_t k = 0; k < pc.n; k++)
		nsucc[P->preds[k]]++;
	for (int32_t i = 0; i < n; i++) {
		Cl *c = &P->c[i];
		P->up[i] = i;
		c->size = 1;
		c->unknown = partition_node_unknown(g, &g->nodes[i]);
		c->nin = P->pfirst[i + 1] - P->pfirst[i];
		c->in = xmalloc(((size_t)c->nin + 1) * sizeof(int32_t));
		if (c->nin)
			memcpy(c->in, P->preds + P->pfirst[i],
			       (size_t)c->nin * sizeof(int32_t));
		c->out = xmalloc(((size_t)nsucc[i] + 1) * sizeof(int32_t));
	}
	for (int32_t i = 0; i < n; i++)
		for (int32_t k = P->pfirst[i]; k < P->pfirst[i + 1]; k++) {
			Cl *c = &P->c[P->preds[k]];
			c->out[c->nout++] = i;
		}
}

/* The representatives in list[0..n), without r and duplicates, into a
 * fresh list; *count gets its length. */
static int32_t *compact(Part *P, int32_t r, const int32_t *const *lists,
			const int32_t *lens, int32_t nlists, int32_t *count)
{
	uint32_t e = tick(P->mark, &P->epoch, P->n);
	int32_t total = 0, k = 0;
	for (int32_t l = 0; l < nlists; l++)
		total += lens[l];
	int32_t *out = xmalloc(((size_t)total + 1) * sizeof(int32_t));
	for (int32_t l = 0; l < nlists; l++)
		for (int32_t j = 0; j < lens[l]; j++) {
			int32_t x = find(P, lists[l][j]);
			if (x != r && P->mark[x] != e) {
				P->mark[x] = e;
				out[k++] = x;
			}
		}
	*count = k;
	return out;
}

/* Merges the clusters set[0..n) (representatives, distinct) into one;
 * returns its representative (the smallest). */
static int32_t merge_set(Part *P, const int32_t *set, int32_t n)
{
	int32_t r = set[0];
	for (int32_t k = 1; k < n; k++)
		if (set[k] < r)
			r = set[k];
	const int32_t **ins = ARENA_ARRAY(&P->scratch, n, const int32_t *);
	const int32_t **outs = ARENA_ARRAY(&P->scratch, n, const int32_t *);
	int32_t *nins = ARENA_ARRAY(&P->scratch, n, int32_t);
	int32_t *nouts = ARENA_ARRAY(&P->scratch, n, int32_t);
	Cl m = { 0 };
	for (int32_t k = 0; k < n; k++) {
		Cl *c = &P->c[set[k]];
		ins[k] = c->in;
		outs[k] = c->out;
		nins[k] = c->nin;
		nouts[k] = c->nout;
		m.size += c->size;
		m.unknown |= c->unknown;
		P->up[set[k]] = r;
	}
	m.in = compact(P, r, ins, nins, n, &m.nin);
	m.out = compact(P, r, outs, nouts, n, &m.nout);
	for (int32_t k = 0; k < n; k++) {
		Cl *c = &P->c[set[k]];
		free(c->in);
		free(c->out);
		memset(c, 0, sizeof(*c));
	}
	P->c[r] = m;
	return r;
}

static int32_t merge2(Part *P, int32_t a, int32_t b)
{
	int32_t set[2] = { a, b };
	return merge_set(P, set, 2);
}

/* One search frontier: queue[head..tail) of clusters to expand. */
typedef struct Side {
	uint32_t *mark, e; /* mark[x] == e: reached from this side */
	uint32_t *other, oe; /* the other side's marks */
	int32_t *queue, head, tail;
	bool fwd;
} Side;

/* Adds the neighbours of x on s's side; true if one is on the other side
 * (the two searches met). */
static bool expand(Part *P, Side *s, int32_t x)
{
	const Cl *c = &P->c[x];
	const int32_t *nb = s->fwd ? c->out : c->in;
	int32_t n = s->fwd ? c->nout : c->nin;
	for (int32_t k = 0; k < n; k++) {
		int32_t y = find(P, nb[k]);
		if (s->other[y] == s->oe)
			return true;
		if (s->mark[y] != s->e) {
			s->mark[y] = s->e;
			s->queue[s->tail++] = y;
		}
	}
	return false;
}

/* Whether b can be reached from a other than by the direct edge a -> b:
 * a search forward from a's other successors and one backward from b's
 * other predecessors, expanding the smaller frontier, until they meet
 * (a path) or one runs dry (none).  Cost: about twice the smaller of the
 * two reachable sets, not the size of the graph. */
static bool other_path(Part *P, int32_t a, int32_t b)
{
	Side f = { .mark = P->mark, .other = P->mark2, .queue = P->queue,
		   .fwd = true };
	Side r = { .mark = P->mark2, .other = P->mark, .queue = P->set };
	f.e = r.oe = tick(P->mark, &P->epoch, P->n);
	r.e = f.oe = tick(P->mark2, &P->epoch2, P->n);
	f.mark[a] = f.e;
	r.mark[b] = r.e;
	/* the direct edge does not count: seed each side past it */
	for (int32_t k = 0; k < P->c[a].nout; k++) {
		int32_t y = find(P, P->c[a].out[k]);
		if (y != b && f.mark[y] != f.e) {
			f.mark[y] = f.e;
			f.queue[f.tail++] = y;
		}
	}
	for (int32_t k = 0; k < P->c[b].nin; k++) {
		int32_t y = find(P, P->c[b].in[k]);
		if (y == a || r.mark[y] == r.e)
			continue;
		if (f.mark[y] == f.e)
			return true;
		r.mark[y] = r.e;
		r.queue[r.tail++] = y;
	}
	while (f.head < f.tail && r.head < r.tail) {
		Side *s = f.tail - f.head <= r.tail - r.head ? &f : &r;
		if (expand(P, s, s->queue[s->head++]))
			return true;
	}
	return false;
}

/* ---- rule 1: unknown absorption -------------------------------------------- */

static int32_t uf_find(int32_t *up, int32_t x)
{
	while (up[x] != x) {
		up[x] = up[up[x]];
		x = up[x];
	}
	return x;
}

/* Rule 1, on the initial clusters (one per node), in linear time.  Node x
 * lies on a path between two unknown nodes iff an unknown node reaches it
 * (or it is one) and it reaches an unknown node (or is one); call such
 * nodes "between".  Every path between two unknown nodes runs through
 * between nodes only, and two between nodes joined by an edge must end in
 * one cluster (an unknown node reaching the first reaches one the second
 * reaches, through that edge), so the clusters are the connected groups of
 * between nodes.  A path between two groups would make its nodes between
 * nodes too, so the groups are closed under paths: no cycle, and no two
 * unknown clusters are left with a path between them. */
static void merge_unknown(Part *P)
{
	int32_t n = P->n;
	bool *from = ARENA_ARRAY(&P->scratch, n + 1, bool);
	bool *to = ARENA_ARRAY(&P->scratch, n + 1, bool);
	int32_t *grp = ARENA_ARRAY(&P->scratch, n + 1, int32_t);
	for (int32_t i = 0; i < n; i++) { /* predecessors come first */
		from[i] = P->c[i].unknown;
		for (int32_t k = P->pfirst[i]; k < P->pfirst[i + 1] && !from[i];
		     k++)
			from[i] = from[P->preds[k]];
	}
	for (int32_t i = n - 1; i >= 0; i--) {
		to[i] = P->c[i].unknown;
		for (int32_t k = 0; k < P->c[i].nout && !to[i]; k++)
			to[i] = to[P->c[i].out[k]];
	}
	for (int32_t i = 0; i < n; i++)
		grp[i] = i;
	for (int32_t i = 0; i < n; i++)
		for (int32_t k = P->pfirst[i]; k < P->pfirst[i + 1]; k++) {
			int32_t p = P->preds[k];
			if (from[p] && to[p] && from[i] && to[i])
				grp[uf_find(grp, p)] = uf_find(grp, i);
		}
	/* members of each group, gathered by group root: counting sort */
	int32_t *first = ARENA_ARRAY(&P->scratch, n + 2, int32_t);
	for (int32_t i = 0; i < n; i++) {
		grp[i] = uf_find(grp, i);
		first[grp[i] + 1]++;
	}
	for (int32_t i = 0; i < n; i++)
		first[i + 1] += first[i];
	int32_t *at = ARENA_ARRAY(&P->scratch, n + 1, int32_t);
	memcpy(at, first, (size_t)n * sizeof(int32_t));
	for (int32_t i = 0; i < n; i++)
		P->set[at[grp[i]]++] = i;
	for (int32_t r = 0; r < n; r++)
		if (first[r + 1] - first[r] > 1)
			merge_set(P, P->set + first[r], first[r + 1] - first[r]);
}

/* ---- rules 2 and 3: known merge, downgrade ---------------------------------- */

/* Walking the nodes in order, merges the cluster of each node with the
 * cluster of each predecessor when both are of the given kind and the
 * edge is the only path between them. */
static void merge_single_paths(Part *P, bool unknown)
{
	for (int32_t i = 0; i < P->n; i++)
		for (int32_t k = P->pfirst[i]; k < P->pfirst[i + 1]; k++) {
			int32_t a = find(P, P->preds[k]), b = find(P, i);
			if (a == b || P->c[a].unknown != unknown ||
			    P->c[b].unknown != unknown || other_path(P, a, b))
				continue;
			merge2(P, a, b);
		}
}

static void downgrade(Part *P, int32_t limit)
{
	for (int32_t i = 0; i < P->n; i++)
		if (P->up[i] == i && !P->c[i].unknown && P->c[i].size < limit)
			P->c[i].unknown = true;
}

/* limit -1: every node in one unknown cluster. */
static void merge_all(Part *P)
{
	for (int32_t i = 0; i < P->n; i++)
		P->set[i] = i;
	merge_set(P, P->set, P->n);
	P->c[0].unknown = true;
}

/* ---- numbering --------------------------------------------------------------- */

/* A binary min-heap of representatives: the ready clusters. */
typedef struct Heap {
	int32_t *v, n;
} Heap;

static void heap_push(Heap *h, int32_t x)
{
	int32_t i = h->n++;
	while (i > 0 && h->v[(i - 1) / 2] > x) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = x;
}

static int32_t heap_pop(Heap *h)
{
	int32_t top = h->v[0], x = h->v[--h->n], i = 0;
	for (;;) {
		int32_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1] < h->v[c])
			c++;
		if (x <= h->v[c])
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = x;
	return top;
}

/* Rebuilds cluster r's neighbour lists (they may name merged clusters). */
static void refresh(Part *P, int32_t r)
{
	Cl *cl = &P->c[r];
	const int32_t *l[1] = { cl->in };
	int32_t n = cl->nin;
	int32_t *in = compact(P, r, l, &n, 1, &cl->nin);
	free(cl->in);
	cl->in = in;
	l[0] = cl->out;
	n = cl->nout;
	int32_t *out = compact(P, r, l, &n, 1, &cl->nout);
	free(cl->out);
	cl->out = out;
}

/* Numbers the clusters in a topological order of the cluster graph, the
 * ready cluster with the smallest first node first (Kahn's algorithm; a
 * representative is its cluster's first node), into c. */
static void number_clusters(Part *P, Clusters *c)
{
	int32_t n = P->n, k = 0;
	int32_t *indeg = ARENA_ARRAY(&P->scratch, n + 1, int32_t);
	int32_t *num = ARENA_ARRAY(&P->scratch, n + 1, int32_t);
	Heap h = { .v = ARENA_ARRAY(&P->scratch, n + 1, int32_t) };
	memset(c, 0, sizeof(*c));
	c->nnodes = n;
	for (int32_t i = 0; i < n; i++) {
		num[i] = -1;
		if (P->up[i] != i)
			continue;
		refresh(P, i);
		indeg[i] = P->c[i].nin;
		c->nclusters++;
	}
	for (int32_t i = 0; i < n; i++)
		if (P->up[i] == i && !indeg[i])
			heap_push(&h, i);
	c->unknown = xcalloc((size_t)c->nclusters + 1, sizeof(bool));
	c->size = xcalloc((size_t)c->nclusters + 1, sizeof(int32_t));
	c->first = xcalloc((size_t)c->nclusters + 1, sizeof(int32_t));
	c->of = xmalloc(((size_t)n + 1) * sizeof(int32_t));
	while (h.n) {
		int32_t r = heap_pop(&h);
		num[r] = k;
		c->unknown[k] = P->c[r].unknown;
		c->size[k] = P->c[r].size;
		c->first[k] = r;
		for (int32_t j = 0; j < P->c[r].nout; j++)
			if (!--indeg[P->c[r].out[j]])
				heap_push(&h, P->c[r].out[j]);
		k++;
	}
	if (k != c->nclusters)
		BUG("partition: the cluster graph has a cycle");
	for (int32_t i = 0; i < n; i++)
		c->of[i] = num[find(P, i)];
}

void partition_cluster(const Graph *g, int32_t limit, Clusters *c)
{
	Part P = { .g = g, .n = g->nnodes };
	Arena *a = &P.scratch;
	arena_init(a);
	memset(c, 0, sizeof(*c));
	P.up = ARENA_ARRAY(a, P.n + 1, int32_t);
	P.c = ARENA_ARRAY(a, P.n + 1, Cl);
	P.pfirst = ARENA_ARRAY(a, P.n + 2, int32_t);
	P.mark = ARENA_ARRAY(a, P.n + 1, uint32_t);
	P.mark2 = ARENA_ARRAY(a, P.n + 1, uint32_t);
	P.queue = ARENA_ARRAY(a, P.n + 1, int32_t);
	P.set = ARENA_ARRAY(a, P.n + 1, int32_t);
	init_clusters(&P);
	if (limit < 0 && P.n > 0) {
		merge_all(&P);
	} else {
		merge_unknown(&P);
		merge_single_paths(&P, false);
		downgrade(&P, limit);
		merge_single_paths(&P, true);
	}
	number_clusters(&P, c);
	for (int32_t i = 0; i < P.n; i++) {
		free(P.c[i].in);
		free(P.c[i].out);
	}
	arena_release(a);
}

void clusters_release(Clusters *c)
{
	free(c->of);
	free(c->unknown);
	free(c->size);
	free(c->first);
	memset(c, 0, sizeof(*c));
}

/* ---- wrapping ----------------------------------------------------------------- */

typedef struct Wrap {
	Graph *g;
	Node *old; /* g's nodes before wrapping */
	const Clusters *cl;
	int32_t *nfirst, *nodes; /* per cluster, its nodes in order (CSR) */
	bool *escapes;		 /* per value: read by another cluster or
				  * a graph output */
	ValId *local;		 /* per value: its id in the current
				  * subgraph, or -1 */
	ValId *touched;		 /* values with local set, to reset */
	int32_t ntouched;
	Graph *sub;
	ValId *pin, *pout; /* the current partition node's inputs and
			    * outputs (ids in g) */
	int32_t npin, npout;
	int32_t cluster; /* escapes: the reading node's cluster */
	Arena scratch;	 /* every array above */
} Wrap;

bool partition_is_node(const Node *n)
{
	return n->op == OP_PartitionedCall && node_attr(n, PARTITION_ATTR);
}

bool partition_is_unknown(const Node *n)
{
	const char *kind = attr_str(n, PARTITION_ATTR, NULL);
	return n->op == OP_PartitionedCall && kind && !strcmp(kind, "unknown");
}

Graph *partition_subgraph(const Node *n)
{
	const Attr *a = node_attr(n, PARTITION_GRAPH_ATTR);
	return a && a->type == ATTR_GRAPH ? a->g : NULL;
}

static void mark_escape(void *ctx, ValId v)
{
	Wrap *W = ctx;
	int32_t p = producer_of(W->g, v);
	if (p >= 0 && W->cl->of[p] != W->cluster)
		W->escapes[v] = true;
}

static void find_escapes(Wrap *W)
{
	Graph *g = W->g;
	for (int32_t i = 0; i < g->nnodes; i++) {
		W->cluster = W->cl->of[i];
		node_reads(&g->nodes[i], mark_escape, W);
	}
	for (int32_t k = 0; k < g->noutputs; k++)
		W->escapes[g->outputs[k]] = true;
}

/* A copy of x in sub, of the given kind. */
static ValId copy_value(Graph *sub, const Value *x, ValKind kind)
{
	ValId id = graph_add_value(sub, x->name, kind);
	Value *v = &sub->vals[id];
	value_copy_type(v, x);
	v->flags = (uint16_t)(x->flags & ~VF_GRAPH_OUT);
	v->konst = x->konst;
	return id;
}

static void set_local(Wrap *W, ValId v, ValId id)
{
	W->local[v] = id;
	W->touched[W->ntouched++] = v;
}

/* Value v of the graph, read inside the current partition: its id there.
 * A weight becomes a weight of the subgraph; anything made outside the
 * partition becomes one of its inputs. */
static ValId map_read(Wrap *W, ValId v)
{
	if (W->local[v] >= 0)
		return W->local[v];
	const Value *x = &W->g->vals[v];
	Graph *sub = W->sub;
	if (x->kind == VAL_WEIGHT) {
		set_local(W, v, copy_value(sub, x, VAL_WEIGHT));
		return W->local[v];
	}
	ASSERT(x->kind != VAL_NODE || W->escapes[v]);
	ValId id = copy_value(sub, x, VAL_INPUT);
	sub->inputs = arena_grow(sub->arena, sub->inputs, (size_t)sub->ninputs,
				 (size_t)sub->ninputs + 1, sizeof(ValId));
	sub->inputs[sub->ninputs++] = id;
	W->pin[W->npin++] = v;
	set_local(W, v, id);
	return id;
}

/* Re-parents subgraph c of a moved node and re-points its outer
 * references into the partition. */
static void move_subgraph(Wrap *W, Graph *c)
{
	c->parent = W->sub;
	for (ValId v = 0; v < c->nvals; v++)
		if (c->vals[v].kind == VAL_OUTER && c->vals[v].outer >= 0)
			c->vals[v].outer = map_read(W, c->vals[v].outer);
}

/* Moves node n (a copy of the graph's, whose input and output arrays it
 * rewrites) into the partition. */
static void move_node(Wrap *W, Node n)
{
	Graph *sub = W->sub;
	int32_t at = sub->nnodes++;
	for (int32_t k = 0; k < n.ninputs; k++)
		if (n.inputs[k] >= 0)
			n.inputs[k] = map_read(W, n.inputs[k]);
	for (int32_t k = 0; k < n.nattrs; k++) {
		Attr *a = &n.attrs[k];
		if (a->type == ATTR_GRAPH && a->g)
			move_subgraph(W, a->g);
		for (int32_t j = 0; a->type == ATTR_GRAPHS && j < a->n; j++)
			if (a->graphs[j])
				move_subgraph(W, a->graphs[j]);
	}
	for (int32_t k = 0; k < n.noutputs; k++) {
		ValId v = n.outputs[k];
		if (v < 0)
			continue;
		ValId id = copy_value(sub, &W->g->vals[v], VAL_NODE);
		sub->vals[id].producer = at;
		set_local(W, v, id);
		if (W->escapes[v])
			W->pout[W->npout++] = v;
		n.outputs[k] = id;
	}
	sub->nodes[at] = n;
}

/* The partition of cluster k: its subgraph; the node's inputs and
 * outputs go to W->pin and W->pout. */
static Graph *wrap_cluster(Wrap *W, int32_t k)
{
	Graph *g = W->g;
	int32_t from = W->nfirst[k], to = W->nfirst[k + 1];
	const char *kind = W->cl->unknown[k] ? "unknown" : "known";
	Graph *sub = graph_new(g->arena,
			       arena_printf(g->arena, "%s_p%d_%s", g->name, k,
					    kind),
			       g);
	W->sub = sub;
	W->npin = W->npout = 0;
	sub->nodes = arena_array(g->arena, (size_t)(to - from), sizeof(Node));
	sub->capnodes = to - from;
	for (int32_t j = from; j < to; j++)
		move_node(W, W->old[W->nodes[j]]);
	sub->noutputs = W->npout;
	sub->outputs = arena_array(g->arena, (size_t)W->npout, sizeof(ValId));
	for (int32_t o = 0; o < W->npout; o++) {
		sub->outputs[o] = W->local[W->pout[o]];
		sub->vals[sub->outputs[o]].flags |= VF_GRAPH_OUT;
	}
	for (int32_t t = 0; t < W->ntouched; t++)
		W->local[W->touched[t]] = -1;
	W->ntouched = 0;
	return sub;
}

/* One partition node per cluster, in cluster order, replacing g's nodes;
 * then g keeps only its inputs, outputs, outer references and the
 * values passed between partitions, renumbered in their old order. */
static void wrap_all(Wrap *W)
{
	Graph *g = W->g;
	int32_t nc = W->cl->nclusters, nv = g->nvals;
	bool *keep = ARENA_ARRAY(&W->scratch, nv + 1, bool);
	W->old = g->nodes;
	g->nodes = arena_array(g->arena, (size_t)nc, sizeof(Node));
	g->nnodes = 0;
	g->capnodes = nc;
	for (int32_t k = 0; k < nc; k++) {
		const char *label = W->old[W->nodes[W->nfirst[k]]].label;
		Graph *sub = wrap_cluster(W, k);
		Node *pn = graph_add_node(g,
					  arena_printf(g->arena, "partition_%d",
						       k),
					  "PartitionedCall", GEARC_DOMAIN,
					  W->npin, W->npout);
		memcpy(pn->inputs, W->pin, (size_t)W->npin * sizeof(ValId));
		memcpy(pn->outputs, W->pout, (size_t)W->npout * sizeof(ValId));
		pn->label = label;
		node_add_attr(g, pn, PARTITION_GRAPH_ATTR, ATTR_GRAPH)->g = sub;
		node_add_string(g, pn, PARTITION_ATTR,
			W->cl->unknown[k] ? "unknown" : "known");
		for (int32_t j = 0; j < W->npin; j++)
			keep[W->pin[j]] = true;
		for (int32_t j = 0; j < W->npout; j++)
			keep[W->pout[j]] = true;
	}
	for (int32_t k = 0; k < g->ninputs; k++)
		keep[g->inputs[k]] = true;
	for (int32_t k = 0; k < g->noutputs; k++)
		keep[g->outputs[k]] = true;
	ValId *id = ARENA_ARRAY(&W->scratch, nv + 1, ValId);
	int32_t n = 0;
	for (ValId v = 0; v < nv; v++) {
		keep[v] |= g->vals[v].kind == VAL_OUTER;
		id[v] = keep[v] ? n++ : -1;
	}
	Value *vals = arena_array(g->arena, (size_t)n, sizeof(Value));
	for (ValId v = 0; v < nv; v++)
		if (keep[v]) {
			vals[id[v]] = g->vals[v];
			if (vals[id[v]].kind == VAL_NODE)
				vals[id[v]].producer = -1;
		}
	g->vals = vals;
	g->nvals = g->capvals = n;
	for (int32_t k = 0; k < g->ninputs; k++)
		g->inputs[k] = id[g->inputs[k]];
	for (int32_t k = 0; k < g->noutputs; k++)
		g->outputs[k] = id[g->outputs[k]];
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *pn = &g->nodes[i];
		for (int32_t k = 0; k < pn->ninputs; k++)
			pn->inputs[k] = id[pn->inputs[k]];
		for (int32_t k = 0; k < pn->noutputs; k++) {
			pn->outputs[k] = id[pn->outputs[k]];
			g->vals[pn->outputs[k]].producer = i;
		}
	}
}

static bool any_unknown(const Graph *g)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		if (partition_node_unknown(g, &g->nodes[i]))
			return true;
	return false;
}

int32_t graph_partition(Graph *g, int32_t limit)
{
	if (!any_unknown(g))
		return 0;
	Clusters cl;
	partition_cluster(g, limit, &cl);
	int32_t nc = cl.nclusters, nv = g->nvals;
	Wrap W = { .g = g, .cl = &cl };
	Arena *a = &W.scratch;
	arena_init(a);
	W.nfirst = ARENA_ARRAY(a, nc + 2, int32_t);
	W.nodes = ARENA_ARRAY(a, g->nnodes + 1, int32_t);
	W.escapes = ARENA_ARRAY(a, nv + 1, bool);
	W.local = ARENA_ARRAY(a, nv + 1, ValId);
	W.touched = ARENA_ARRAY(a, nv + 1, ValId);
	W.pin = ARENA_ARRAY(a, nv + 1, ValId);
	W.pout = ARENA_ARRAY(a, nv + 1, ValId);
	for (ValId v = 0; v < nv; v++)
		W.local[v] = -1;
	for (int32_t i = 0; i < g->nnodes; i++)
		W.nfirst[cl.of[i] + 1]++;
	for (int32_t k = 0; k < nc; k++)
		W.nfirst[k + 1] += W.nfirst[k];
	int32_t *at = ARENA_ARRAY(a, nc + 1, int32_t);
	memcpy(at, W.nfirst, (size_t)nc * sizeof(int32_t));
	for (int32_t i = 0; i < g->nnodes; i++)
		W.nodes[at[cl.of[i]]++] = i;
	find_escapes(&W);
	wrap_all(&W);
	arena_release(a);
	clusters_release(&cl);
	return nc;
}

int32_t partition_limit(const PassOptions *o)
{
	return o && o->static_limit_given ? o->static_limit
					  : PARTITION_LIMIT_DEFAULT;
}

int partition_one(Model *m, Graph *g, const PassOptions *o)
{
	(void)m;
	graph_partition(g, partition_limit(o));
	return 0;
}
