/*
 * passes/scope.c - scope subgraphs and subgraph multi-dims cloning
 * (passes/scope.h has the design).
 *
 * The pass runs on the model's graph, before the root multi-batch clone.
 * It
 *   1. copies the model's graph (source_copy) and clones one branch per
 *      gear from it (gear_branches, passes/gear.c);
 *   2. infers every branch, on threads, and classifies every value of the
 *      model's graph as const, invariant or varying across the gears;
 *   3. marks the scopes' nodes (prefixes or auto) and splits them into
 *      connected regions, checking each;
 *   4. finds each region's inputs, outputs, selector inputs and the
 *      distinct combinations of their shapes over the gears;
 *   5. builds the root graph (the model's graph with each region replaced
 *      by a PartitionedCall), each region's body and its clones, and
 *      specialises the clones (the pipeline's pass "specialise" does the
 *      root);
 *   6. keeps that (m->graph the root, no branches), or (auto, when it is
 *      not smaller) the model's graph and the branches, which
 *      pass_gear_clone then puts under the root of the full clone.
 * Steps 3 to 6 run on one thread and depend only on the model.
 */
#include <stdlib.h>
#include <string.h>

#include "scope.h"

enum { VC_CONST = 1, VC_INVARIANT, VC_VARYING };

typedef struct Region {
	const char *name; /* "scope_N": its PartitionedCall and body */
	const char *why;  /* "auto", or the prefixes marking its nodes */
	int32_t nnodes, *nodes; /* src nodes, in order */
	int32_t nin, *in;	/* src values it reads from outside */
	int32_t nout, *out;	/* src values it gives the rest */
	int32_t nsel, *sel;	/* indices into in[]: the selector inputs */
	int32_t ncols;		/* values per table row */
	int32_t ncombos;
	int32_t *first;	 /* per combination: the first gear giving it */
	int32_t *map;	 /* per gear: its combination */
	int64_t *table;	 /* ncombos * ncols */
} Region;

typedef struct Scope {
	Model *m;
	const PassOptions *o;
	bool is_auto;
	Graph *src; /* the model's graph, value ids as in every branch */
	int32_t ngears, nv, nn;
	uint8_t *cls;	    /* per value: VC_* (0: weights, unused) */
	bool *kvary;	    /* per value: contents known, not const */
	const Tensor **kt;  /* per value: its const contents, once copied */
	bool *cnode;	    /* per node: every output const */
	bool *live;	    /* per node: not const, and what it makes is
			     * read (by a live node, or as a graph output) */
	int32_t *rstart, *reads; /* node i reads reads[rstart[i]..rstart[i+1]) */
	int32_t *ustart, *users; /* live readers of each value */
	int32_t *mark;	    /* per node: 1 + prefix index, or 0 */
	bool *in_scope;	    /* per node */
	bool *is_out;	    /* per value: a graph output */
	int32_t *region;    /* per node: its region, or -1 */
	int32_t nregions;
	Region *regions;
	char **prefixes;
	int32_t nprefixes;
	Arena scratch; /* every array above, the regions' too */
} Scope;

/* n zeroed elements of type from s's scratch arena. */
#define SCRATCH(s, n, type) ARENA_ARRAY(&(s)->scratch, n, type)

/* End of node i's reads in s->reads. */
#define RD_END(s, i) ((s)->rstart[(i) + 1])

/* ---- the option ---------------------------------------------------------- */

/* Splits spec at ',' into strings in a; -1 on an empty one. */
static int split_prefixes(Arena *a, const char *spec, char ***out, int32_t *n)
{
	int32_t cap = 0;
	*out = NULL;
	*n = 0;
	for (const char *p = spec;;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (!len)
			return error("--gear_scope: '%s' has an empty prefix "
				     "(expected auto or PREFIX[,PREFIX...])",
				     spec);
		int32_t i = ARENA_PUSH(a, *out, *n, cap);
		(*out)[i] = arena_strndup(a, p, len);
		if (!e)
			return 0;
		p = e + 1;
	}
}

int gear_scope_check(const char *spec)
{
	Arena a;
	char **v;
	int32_t n;
	if (!*spec)
		return error("--gear_scope is empty: expected auto or "
			     "PREFIX[,PREFIX...] (node name prefixes)");
	arena_init(&a);
	int rc = split_prefixes(&a, spec, &v, &n);
	for (int32_t i = 0; !rc && i < n; i++) {
		if (!strcmp(v[i], "auto") && n > 1)
			rc = error("--gear_scope: 'auto' cannot be combined "
				   "with prefixes ('%s')", spec);
		for (int32_t j = 0; !rc && j < i; j++)
			if (!strcmp(v[i], v[j]))
				rc = error("--gear_scope: prefix '%s' is given "
					   "twice", v[i]);
	}
	arena_release(&a);
	return rc;
}

/* ---- the model's graph and its branches --------------------------------- */

/* A copy of the model's graph (the regions' nodes move out of it, their
 * subgraphs re-parented), its gear inputs at their declared shapes. */
static Graph *source_copy(Model *m)
{
	const GearSpec *gs = m->gears;
	Graph *src = graph_clone(&m->arena, m->graph, NULL, NULL, NULL);
	for (int32_t k = 0; k < gs->ninputs; k++) {
		Value *v = &src->vals[gs->inputs[k].val];
		v->shape = gs->inputs[k].shape;
		v->dim_params = NULL;
	}
	return src;
}

/* Classifying needs each gear's shapes and contents, with the model's
 * value ids: the branches inferred, not yet inlined or cleaned (the rest
 * of specialise(), which then does not infer them again). */
static int infer_branch(Model *m, Graph *g, const PassOptions *o)
{
	(void)o;
	if (infer_graph(m, g) < 0)
		return -1;
	g->specialised = SPEC_INFERRED;
	return 0;
}

static int count_nodes(Graph *g, void *ctx)
{
	*(int64_t *)ctx += g->nnodes;
	return 0;
}

static int64_t nodes_in(Graph *g)
{
	int64_t n = 0;
	graph_walk(g, count_nodes, &n);
	return n;
}

/* ---- what each node reads ------------------------------------------------ */

/* A growing list of ids in a's arena. */
typedef struct IdVec {
	Arena *a;
	int32_t *v;
	int32_t n, cap;
} IdVec;

static void push_id(IdVec *l, int32_t x)
{
	int32_t i = ARENA_PUSH(l->a, l->v, l->n, l->cap);
	l->v[i] = x;
}

/* The outer references of sub and of the graphs below it that name values
 * of src, as src ids. */
static void outer_reads(const Graph *src, const Graph *sub, IdVec *out)
{
	for (ValId v = 0; v < sub->nvals; v++) {
		const Graph *g = sub;
		ValId id = v;
		while (g != src && id >= 0) {
			const Value *x = &g->vals[id];
			id = x->kind == VAL_OUTER && g->parent ? x->outer : -1;
			g = g->parent;
		}
		if (id >= 0)
			push_id(out, id);
	}
	for (int32_t i = 0; i < sub->nnodes; i++) {
		const Node *n = &sub->nodes[i];
		for (int32_t k = 0; k < n->nattrs; k++) {
			const Attr *a = &n->attrs[k];
			if (a->type == ATTR_GRAPH && a->g)
				outer_reads(src, a->g, out);
			for (int32_t j = 0; a->type == ATTR_GRAPHS && j < a->n; j++)
				outer_reads(src, a->graphs[j], out);
		}
	}
}

/* reads[]: per node its inputs and the outer references of its
 * subgraphs. */
static void index_reads(Scope *s)
{
	const Graph *g = s->src;
	IdVec rd = { .a = &s->scratch };
	s->rstart = SCRATCH(s, s->nn + 1, int32_t);
	for (int32_t i = 0; i < s->nn; i++) {
		const Node *n = &g->nodes[i];
		s->rstart[i] = rd.n;
		for (int32_t k = 0; k < n->ninputs; k++)
			if (n->inputs[k] >= 0)
				push_id(&rd, n->inputs[k]);
		for (int32_t k = 0; k < n->nattrs; k++) {
			const Attr *a = &n->attrs[k];
			if (a->type == ATTR_GRAPH && a->g)
				outer_reads(g, a->g, &rd);
			for (int32_t j = 0; a->type == ATTR_GRAPHS && j < a->n; j++)
				outer_reads(g, a->graphs[j], &rd);
		}
	}
	s->rstart[s->nn] = rd.n;
	s->reads = rd.v;
}

/* Live nodes, in one backward sweep: the graph is in topological order. */
static void find_live(Scope *s)
{
	bool *need = SCRATCH(s, s->nv + 1, bool);
	memcpy(need, s->is_out, (size_t)s->nv * sizeof(bool));
	for (int32_t i = s->nn - 1; i >= 0; i--) {
		const Node *n = &s->src->nodes[i];
		for (int32_t k = 0; !s->cnode[i] && k < n->noutputs; k++)
			s->live[i] = s->live[i] ||
				     (n->outputs[k] >= 0 && need[n->outputs[k]]);
		for (int32_t k = s->rstart[i]; s->live[i] && k < RD_END(s, i); k++)
			need[s->reads[k]] = true;
	}
}

static void index_users(Scope *s)
{
	int32_t *cnt = SCRATCH(s, s->nv + 1, int32_t);
	s->ustart = SCRATCH(s, s->nv + 1, int32_t);
	s->users = SCRATCH(s, s->rstart[s->nn] + 1, int32_t);
	for (int32_t i = 0; i < s->nn; i++)
		for (int32_t k = s->rstart[i]; s->live[i] && k < RD_END(s, i); k++)
			cnt[s->reads[k]]++;
	for (ValId v = 0; v < s->nv; v++)
		s->ustart[v + 1] = s->ustart[v] + cnt[v];
	memcpy(cnt, s->ustart, (size_t)s->nv * sizeof(int32_t));
	for (int32_t i = 0; i < s->nn; i++)
		for (int32_t k = s->rstart[i]; s->live[i] && k < RD_END(s, i); k++)
			s->users[cnt[s->reads[k]]++] = i;
}

/* The live node producing v, or -1 (inputs, weights, consts). */
static int32_t producer(const Scope *s, ValId v)
{
	const Value *x = &s->src->vals[v];
	if (x->kind != VAL_NODE || x->producer < 0 || !s->live[x->producer])
		return -1;
	return x->producer;
}

/* ---- classifying values over the gears ----------------------------------- */

static bool same_tensor(const Tensor *a, const Tensor *b)
{
	if (a == b)
		return true;
	if (a->dtype != b->dtype || a->dtype == DT_STRING ||
	    !shape_equal(&a->shape, &b->shape) || a->nbytes != b->nbytes)
		return false;
	return !a->nbytes || !memcmp(a->data, b->data, a->nbytes);
}

static void classify_value(Scope *s, ValId v)
{
	Graph **br = s->m->branches;
	const Value *a = &br[0]->vals[v];
	bool same = true, konst_same = a->konst != NULL;
	int32_t nk = 0;
	for (int32_t g = 0; g < s->ngears; g++) {
		const Value *b = &br[g]->vals[v];
		nk += b->konst != NULL;
		same = same && b->dtype == a->dtype && b->tkind == a->tkind &&
		       shape_equal(&b->shape, &a->shape);
		konst_same = konst_same && b->konst &&
			     same_tensor(a->konst, b->konst);
	}
	if (nk == s->ngears && konst_same && a->tkind == TK_TENSOR)
		s->cls[v] = VC_CONST;
	else
		s->cls[v] = same && !nk ? VC_INVARIANT : VC_VARYING;
	s->kvary[v] = nk > 0 && s->cls[v] != VC_CONST;
}

static void classify(Scope *s)
{
	const Graph *g = s->src;
	for (ValId v = 0; v < s->nv; v++)
		if (g->vals[v].kind == VAL_NODE || g->vals[v].kind == VAL_INPUT)
			classify_value(s, v);
	for (int32_t i = 0; i < s->nn; i++) {
		const Node *n = &g->nodes[i];
		int32_t present = 0, nconst = 0;
		for (int32_t k = 0; k < n->noutputs; k++)
			if (n->outputs[k] >= 0) {
				present++;
				nconst += s->cls[n->outputs[k]] == VC_CONST;
			}
		s->cnode[i] = present && nconst == present;
	}
}

/* ---- marking ------------------------------------------------------------- */

static int mark_prefixes(Scope *s)
{
	const Graph *g = s->src;
	for (int32_t p = 0; p < s->nprefixes; p++) {
		size_t len = strlen(s->prefixes[p]);
		bool any = false;
		for (int32_t i = 0; i < s->nn; i++) {
			if (strncmp(g->nodes[i].name, s->prefixes[p], len))
				continue;
			any = true;
			if (s->live[i] && !s->mark[i])
				s->mark[i] = 1 + p;
		}
		if (!any)
			return error("--gear_scope: prefix '%s' matches no node "
				     "of graph '%s'", s->prefixes[p], g->name);
	}
	return 0;
}

/* A clone is chosen by its inputs' shapes alone, so contents that differ
 * across gears (shape arithmetic) must be computed inside the scope: their
 * producers join it, transitively. */
static void absorb_shape_arithmetic(Scope *s)
{
	IdVec work = { .a = &s->scratch };
	for (int32_t i = 0; i < s->nn; i++)
		if (s->in_scope[i])
			push_id(&work, i);
	while (work.n) {
		int32_t i = work.v[--work.n];
		for (int32_t k = s->rstart[i]; k < RD_END(s, i); k++) {
			ValId v = s->reads[k];
			int32_t p = producer(s, v);
			if (p >= 0 && !s->in_scope[p] && s->kvary[v]) {
				s->in_scope[p] = true;
				push_id(&work, p);
			}
		}
	}
}

static bool touches_varying(const Scope *s, int32_t i)
{
	const Node *n = &s->src->nodes[i];
	for (int32_t k = s->rstart[i]; k < RD_END(s, i); k++)
		if (s->cls[s->reads[k]] == VC_VARYING)
			return true;
	for (int32_t k = 0; k < n->noutputs; k++)
		if (n->outputs[k] >= 0 && s->cls[n->outputs[k]] == VC_VARYING)
			return true;
	return false;
}

/* auto: the nodes touching a varying value, and every node on a path
 * between two of them (nodes are in topological order: one sweep each
 * way). */
static void mark_auto(Scope *s)
{
	const Graph *g = s->src;
	bool *fwd = SCRATCH(s, s->nn + 1, bool);
	bool *bwd = SCRATCH(s, s->nn + 1, bool);
	for (int32_t i = 0; i < s->nn; i++)
		s->in_scope[i] = s->live[i] && touches_varying(s, i);
	for (int32_t i = 0; i < s->nn; i++)
		for (int32_t k = s->rstart[i]; s->live[i] && k < RD_END(s, i); k++) {
			int32_t p = producer(s, s->reads[k]);
			if (p >= 0 && (s->in_scope[p] || fwd[p]))
				fwd[i] = true;
		}
	for (int32_t i = s->nn - 1; i >= 0; i--) {
		const Node *n = &g->nodes[i];
		for (int32_t k = 0; s->live[i] && k < n->noutputs; k++) {
			ValId v = n->outputs[k];
			for (int32_t u = v >= 0 ? s->ustart[v] : 0;
			     v >= 0 && u < s->ustart[v + 1]; u++) {
				int32_t j = s->users[u];
				if (s->in_scope[j] || bwd[j])
					bwd[i] = true;
			}
		}
	}
	for (int32_t i = 0; i < s->nn; i++)
		s->in_scope[i] = s->in_scope[i] || (fwd[i] && bwd[i]);
}

/* ---- regions ------------------------------------------------------------- */

static int32_t uf_find(int32_t *p, int32_t x)
{
	while (p[x] != x)
		x = p[x] = p[p[x]];
	return x;
}

/* Connected parts of the marked nodes, numbered by their first node. */
static void split_regions(Scope *s)
{
	int32_t *p = SCRATCH(s, s->nn + 1, int32_t);
	int32_t *id = SCRATCH(s, s->nn + 1, int32_t);
	for (int32_t i = 0; i < s->nn; i++) {
		p[i] = i;
		id[i] = -1;
		s->region[i] = -1;
	}
	for (int32_t i = 0; i < s->nn; i++)
		for (int32_t k = s->rstart[i]; s->in_scope[i] && k < RD_END(s, i);
		     k++) {
			int32_t q = producer(s, s->reads[k]);
			if (q >= 0 && s->in_scope[q])
				p[uf_find(p, i)] = uf_find(p, q);
		}
	for (int32_t i = 0; i < s->nn; i++) {
		if (!s->in_scope[i])
			continue;
		int32_t r = uf_find(p, i);
		if (id[r] < 0)
			id[r] = s->nregions++;
		s->region[i] = id[r];
	}
	s->regions = SCRATCH(s, s->nregions + 1, Region);
	for (int32_t i = 0; i < s->nn; i++)
		if (s->region[i] >= 0)
			s->regions[s->region[i]].nnodes++;
	for (int32_t r = 0; r < s->nregions; r++) {
		Region *R = &s->regions[r];
		R->nodes = SCRATCH(s, R->nnodes, int32_t);
		R->nnodes = 0;
	}
	for (int32_t i = 0; i < s->nn; i++)
		if (s->region[i] >= 0) {
			Region *R = &s->regions[s->region[i]];
			R->nodes[R->nnodes++] = i;
		}
}

static int io_error(const Node *n, const char *what, const char *name)
{
	return error("--gear_scope: node '%s' %s '%s' directly; a scope may "
		     "not contain the graph's inputs or outputs (leave the "
		     "node out of it, or use --gear_scope=auto)",
		     n->name, what, name);
}

/* Explicit scopes hold no graph input or output directly. */
static int check_io(const Scope *s)
{
	const Graph *g = s->src;
	for (int32_t i = 0; i < s->nn; i++) {
		const Node *n = &g->nodes[i];
		if (s->region[i] < 0)
			continue;
		for (int32_t k = s->rstart[i]; k < RD_END(s, i); k++) {
			const Value *v = &g->vals[s->reads[k]];
			if (v->kind == VAL_INPUT)
				return io_error(n, "reads graph input", v->name);
		}
		for (int32_t k = 0; k < n->noutputs; k++) {
			ValId v = n->outputs[k];
			if (v >= 0 && s->is_out[v])
				return io_error(n, "writes graph output",
						g->vals[v].name);
		}
	}
	return 0;
}

/* A node outside region r that depends on r and feeds r would put the
 * region's node in a cycle. */
static int check_cycle(Scope *s, int32_t r)
{
	const Graph *g = s->src;
	bool *reach = SCRATCH(s, s->nn + 1, bool);
	int rc = 0;
	for (int32_t i = 0; i < s->nn && !rc; i++) {
		for (int32_t k = s->rstart[i]; k < RD_END(s, i) && !rc; k++) {
			int32_t p = producer(s, s->reads[k]);
			if (p < 0)
				continue;
			bool from_r = s->region[p] == r || reach[p];
			if (s->region[i] != r) {
				reach[i] = reach[i] || from_r;
			} else if (s->region[p] != r && reach[p]) {
				rc = error("--gear_scope: node '%s' reads from the "
					   "scope of node '%s' and feeds it, so "
					   "the scope would be in a cycle (add "
					   "'%s' to the scope, or take '%s' out "
					   "of it)", g->nodes[p].name,
					   g->nodes[i].name, g->nodes[p].name,
					   g->nodes[i].name);
			}
		}
	}
	return rc;
}

/* "auto", or the prefixes that marked a node of R, in option order. */
static const char *region_why(Scope *s, const Region *R)
{
	if (s->is_auto)
		return "auto";
	const char *why = NULL;
	for (int32_t p = 0; p < s->nprefixes; p++) {
		bool any = false;
		for (int32_t k = 0; k < R->nnodes && !any; k++)
			any = s->mark[R->nodes[k]] == 1 + p;
		if (any)
			why = why ? arena_printf(&s->scratch, "%s,%s", why,
						 s->prefixes[p])
				  : s->prefixes[p];
	}
	return arena_strdup(&s->m->arena, why ? why : "");
}

/* R's inputs (read from outside: graph inputs and values of nodes
 * outside it) and outputs (read outside, or graph outputs), in order. */
static void region_io(Scope *s, int32_t r)
{
	const Graph *g = s->src;
	Region *R = &s->regions[r];
	uint8_t *seen = SCRATCH(s, s->nv + 1, uint8_t);
	IdVec in = { .a = &s->scratch }, out = { .a = &s->scratch };
	for (int32_t j = 0; j < R->nnodes; j++) {
		int32_t i = R->nodes[j];
		for (int32_t k = s->rstart[i]; k < RD_END(s, i); k++) {
			ValId v = s->reads[k];
			int32_t p = producer(s, v);
			bool outside = g->vals[v].kind == VAL_INPUT ||
				       (p >= 0 && s->region[p] != r);
			if (outside && !seen[v]) {
				seen[v] = 1;
				push_id(&in, v);
			}
		}
	}
	for (int32_t j = 0; j < R->nnodes; j++) {
		const Node *n = &g->nodes[R->nodes[j]];
		for (int32_t k = 0; k < n->noutputs; k++) {
			ValId v = n->outputs[k];
			bool used = v >= 0 && s->is_out[v];
			for (int32_t u = v >= 0 ? s->ustart[v] : 0;
			     v >= 0 && u < s->ustart[v + 1] && !used; u++)
				used = s->region[s->users[u]] != r;
			if (used)
				push_id(&out, v);
		}
	}
	R->in = in.v;
	R->nin = in.n;
	R->out = out.v;
	R->nout = out.n;
}

static const Value *gear_val(const Scope *s, int32_t g, ValId v)
{
	return &s->m->branches[g]->vals[v];
}

/* The selector inputs: those whose shape differs across gears (the first
 * input if none does); each needs a known rank and dims in every gear. */
static int region_selector(Scope *s, Region *R)
{
	char buf[160];
	IdVec sel = { .a = &s->scratch };
	for (int32_t k = 0; k < R->nin; k++)
		if (s->cls[R->in[k]] == VC_VARYING)
			push_id(&sel, k);
	if (!sel.n && R->nin)
		push_id(&sel, 0);
	R->sel = sel.v;
	R->nsel = sel.n;
	R->ncols = 0;
	for (int32_t j = 0; j < R->nsel; j++) {
		ValId v = R->in[R->sel[j]];
		int32_t rank = gear_val(s, 0, v)->shape.rank;
		for (int32_t g = 0; g < s->ngears; g++) {
			const Value *x = gear_val(s, g, v);
			if (!shape_is_static(&x->shape) || x->shape.rank != rank)
				return error("--gear_scope: scope %s: its input "
					     "'%s' has shape %s at gear %d, "
					     "%s; the clone to run cannot be "
					     "told from its shape",
					     R->name, x->name,
					     shape_str(&x->shape, buf, sizeof(buf)),
					     g, x->shape.rank != rank
						     ? "a rank that differs "
						       "across gears"
						     : "not static");
		}
		R->ncols += rank;
	}
	return 0;
}

/* Gear g's row of R's table into row[]. */
static void gear_row(const Scope *s, const Region *R, int32_t g, int64_t *row)
{
	int32_t c = 0;
	for (int32_t j = 0; j < R->nsel; j++) {
		const Shape *sh = &gear_val(s, g, R->in[R->sel[j]])->shape;
		for (int32_t d = 0; d < sh->rank; d++)
			row[c++] = sh->dims[d];
	}
}

/* The distinct rows over the gears, in order of the first gear giving
 * each; gears giving one row must agree on R's outputs. */
static int region_combos(Scope *s, Region *R)
{
	char a[160], b[160];
	size_t w = (size_t)R->ncols;
	size_t rb = w * sizeof(int64_t);
	int64_t *row = SCRATCH(s, w + 1, int64_t);
	R->table = SCRATCH(s, (size_t)s->ngears * w + 1, int64_t);
	R->first = SCRATCH(s, s->ngears, int32_t);
	R->map = SCRATCH(s, s->ngears, int32_t);
	for (int32_t g = 0; g < s->ngears; g++) {
		gear_row(s, R, g, row);
		int32_t c = 0;
		while (c < R->ncombos &&
		       (w && memcmp(R->table + (size_t)c * w, row, rb)))
			c++;
		if (c == R->ncombos) {
			memcpy(R->table + (size_t)c * w, row, rb);
			R->first[R->ncombos++] = g;
		}
		R->map[g] = c;
	}
	for (int32_t g = 0; g < s->ngears; g++)
		for (int32_t k = 0; k < R->nout; k++) {
			int32_t f = R->first[R->map[g]];
			const Value *x = gear_val(s, g, R->out[k]);
			const Value *y = gear_val(s, f, R->out[k]);
			if (x->dtype != y->dtype ||
			    !shape_equal(&x->shape, &y->shape))
				return error("--gear_scope: scope %s: gears %d "
					     "and %d give its inputs the same "
					     "shapes but its output '%s' %s "
					     "and %s",
					     R->name, R->first[R->map[g]], g,
					     x->name,
					     shape_str(&y->shape, a, sizeof(a)),
					     shape_str(&x->shape, b, sizeof(b)));
		}
	return 0;
}

static int find_regions(Scope *s)
{
	if (s->is_auto) {
		mark_auto(s);
	} else {
		if (mark_prefixes(s) < 0)
			return -1;
		for (int32_t i = 0; i < s->nn; i++)
			s->in_scope[i] = s->mark[i] > 0;
		absorb_shape_arithmetic(s);
	}
	split_regions(s);
	if (!s->is_auto && check_io(s) < 0)
		return -1;
	for (int32_t r = 0; r < s->nregions; r++) {
		Region *R = &s->regions[r];
		R->name = arena_printf(&s->m->arena, "scope_%d", r);
		if (!s->is_auto && check_cycle(s, r) < 0)
			return -1;
		R->why = region_why(s, R);
		region_io(s, r);
		if (region_selector(s, R) < 0 || region_combos(s, R) < 0)
			return -1;
	}
	return 0;
}

/* ---- building graphs ----------------------------------------------------- */

/* Copies values of the model's graph into g: map[] gives their ids. */
typedef struct Build {
	Scope *s;
	Graph *g;
	ValId *map;
} Build;

static void build_init(Build *b, Scope *s, Graph *g)
{
	b->s = s;
	b->g = g;
	b->map = SCRATCH(s, s->nv + 1, ValId);
	for (ValId v = 0; v < s->nv; v++)
		b->map[v] = -1;
}

static ValId add_copy(Build *b, ValId v, ValKind kind)
{
	const Value *x = &b->s->src->vals[v];
	ValId id = graph_add_value(b->g, x->name, kind);
	Value *y = &b->g->vals[id];
	value_copy_type(y, x);
	y->flags = (uint16_t)(x->flags & ~VF_GRAPH_OUT);
	if (kind == VAL_WEIGHT)
		y->konst = x->konst;
	b->map[v] = id;
	return id;
}

/* The contents of const value v, in m->arena: the branches' own tensor
 * if they share one (a model constant), else a copy of gear 0's. */
static const Tensor *const_tensor(Scope *s, ValId v)
{
	if (s->kt[v])
		return s->kt[v];
	const Tensor *t = gear_val(s, 0, v)->konst;
	bool shared = true;
	for (int32_t g = 1; g < s->ngears; g++)
		shared = shared && gear_val(s, g, v)->konst == t;
	if (!shared) {
		Tensor *c = tensor_new(&s->m->arena, s->src->vals[v].name,
				       t->dtype, &t->shape, t->data);
		ASSERT(c);
		c->folded = t->folded;
		t = c;
	}
	return s->kt[v] = t;
}

/* v as read in b->g: its copy there, made on demand for weights and
 * const values (which become weights). */
static ValId use_val(Build *b, ValId v)
{
	if (v < 0)
		return -1;
	if (b->map[v] >= 0)
		return b->map[v];
	const Value *x = &b->s->src->vals[v];
	if (x->kind == VAL_WEIGHT)
		return add_copy(b, v, VAL_WEIGHT);
	if (x->kind == VAL_NODE && x->producer >= 0 &&
	    b->s->cnode[x->producer]) {
		const Tensor *t = const_tensor(b->s, v);
		ValId id = add_copy(b, v, VAL_WEIGHT);
		Value *y = &b->g->vals[id];
		y->konst = t;
		y->dtype = t->dtype;
		y->tkind = TK_TENSOR;
		y->shape = t->shape;
		y->dim_params = NULL;
		y->flags = 0;
		return id;
	}
	BUG("scope: value '%s' read before it is defined", x->name);
}

static void def_outputs(Build *b, const Node *n)
{
	for (int32_t k = 0; k < n->noutputs; k++)
		if (n->outputs[k] >= 0 && b->map[n->outputs[k]] < 0)
			add_copy(b, n->outputs[k], VAL_NODE);
}

/* Hangs n's subgraphs under b->g, their outer references renumbered. */
static void move_subgraphs(Build *b, Node *n)
{
	for (int32_t k = 0; k < n->nattrs; k++) {
		Attr *a = &n->attrs[k];
		int32_t cnt = a->type == ATTR_GRAPH ? (a->g != NULL)
			      : a->type == ATTR_GRAPHS ? a->n : 0;
		for (int32_t j = 0; j < cnt; j++) {
			Graph *sub = a->type == ATTR_GRAPH ? a->g : a->graphs[j];
			sub->parent = b->g;
			for (ValId v = 0; v < sub->nvals; v++)
				if (sub->vals[v].kind == VAL_OUTER)
					sub->vals[v].outer =
						use_val(b, sub->vals[v].outer);
		}
	}
}

/* Moves node i of the model's graph into b->g (its outputs defined). */
static void move_node(Build *b, int32_t i)
{
	const Node *sn = &b->s->src->nodes[i];
	Node *n = graph_add_node(b->g, sn->name, sn->op_type, sn->domain,
				 sn->ninputs, sn->noutputs);
	n->flags = sn->flags;
	n->nattrs = sn->nattrs;
	n->attrs = sn->attrs;
	for (int32_t k = 0; k < sn->noutputs; k++)
		n->outputs[k] = sn->outputs[k] >= 0 ? b->map[sn->outputs[k]] : -1;
	for (int32_t k = 0; k < sn->ninputs; k++) {
		ValId id = use_val(b, sn->inputs[k]);
		b->g->nodes[b->g->nnodes - 1].inputs[k] = id;
	}
	move_subgraphs(b, &b->g->nodes[b->g->nnodes - 1]);
}

static void push_io(Graph *g, ValId **ids, int32_t *n, ValId v)
{
	*ids = arena_grow(g->arena, *ids, (size_t)*n, (size_t)*n + 1,
			  sizeof(ValId));
	(*ids)[(*n)++] = v;
}

/* The region's nodes as a graph of their own (the clones' template):
 * inputs R->in, outputs R->out. */
static Graph *build_template(Scope *s, const Region *R, Graph *parent)
{
	Graph *t = graph_new(&s->m->arena, R->name, parent);
	Build b;
	build_init(&b, s, t);
	for (int32_t k = 0; k < R->nin; k++)
		push_io(t, &t->inputs, &t->ninputs,
			add_copy(&b, R->in[k], VAL_INPUT));
	for (int32_t j = 0; j < R->nnodes; j++) {
		def_outputs(&b, &s->src->nodes[R->nodes[j]]);
		move_node(&b, R->nodes[j]);
	}
	for (int32_t k = 0; k < R->nout; k++) {
		ValId id = b.map[R->out[k]];
		t->vals[id].flags |= VF_GRAPH_OUT;
		push_io(t, &t->outputs, &t->noutputs, id);
	}
	/* in order already; this sets the producers */
	if (graph_toposort(t) < 0)
		BUG("scope: template %s: %s", R->name, last_error());
	return t;
}

/* Clone c of R: the template with its inputs at the shapes of the first
 * gear giving combination c, then specialised. */
static Graph *make_clone(Scope *s, const Region *R, const Graph *tmpl,
			 Graph *body, int32_t c)
{
	Arena *a = &s->m->arena;
	const char *label = arena_printf(a, "%s_dims_%d", R->name, c);
	Graph *cl = graph_clone(a, tmpl, body, arena_printf(a, "_dims_%d", c),
				label);
	cl->name = label;
	for (int32_t k = 0; k < R->nin; k++) {
		const Value *x = gear_val(s, R->first[c], R->in[k]);
		Value *v = &cl->vals[cl->inputs[k]];
		v->dtype = x->dtype;
		v->tkind = x->tkind;
		v->shape = x->shape;
		v->dim_params = NULL;
		v->flags = (uint16_t)((v->flags & ~VF_DATA_DEP) |
				      (x->flags & VF_DATA_DEP));
	}
	if (specialise(s->m, cl) < 0) {
		error_prefix("scope %s, clone %s (gear %d)", R->name, label,
			     R->first[c]);
		return NULL;
	}
	return cl;
}

static ValId new_value(Graph *g, const char *base, ValKind kind)
{
	return graph_add_value(g, graph_fresh_name(g, base), kind);
}

/* A constant branch 0, for a scope with no inputs (nodes too large to
 * fold, reading only weights): one clone, nothing to select. */
static ValId const_branch(Scope *s, const Region *R, Graph *b)
{
	Shape scalar = { .rank = 0 };
	int32_t zero = 0;
	ValId v = new_value(b, arena_printf(&s->m->arena, "%s_branch", R->name),
			    VAL_WEIGHT);
	Tensor *t = tensor_new(&s->m->arena, b->vals[v].name, DT_INT32,
			       &scalar, &zero);
	ASSERT(t);
	t->folded = true;
	b->vals[v].konst = t;
	b->vals[v].dtype = DT_INT32;
	b->vals[v].shape = scalar;
	return v;
}

/* The selector: Shape of each selector input -> Concat -> MapIndex over
 * the table; returns the branch index value. */
static ValId build_selector(Scope *s, const Region *R, Graph *b)
{
	Arena *a = &s->m->arena;
	if (!R->nsel)
		return const_branch(s, R, b);
	ValId *shapes = arena_array(a, (size_t)R->nsel, sizeof(ValId));
	for (int32_t j = 0; j < R->nsel; j++) {
		shapes[j] = new_value(b, arena_printf(a, "%s_shape_%d", R->name,
						      j), VAL_NODE);
		Node *n = graph_add_node(b, arena_printf(a, "%s_get_shape_%d",
							 R->name, j),
					 "Shape", "", 1, 1);
		n->inputs[0] = b->inputs[R->sel[j]];
		n->outputs[0] = shapes[j];
	}
	ValId dims = new_value(b, arena_printf(a, "%s_dims", R->name), VAL_NODE);
	Node *cc = graph_add_node(b, arena_printf(a, "%s_concat", R->name),
				  "Concat", "", R->nsel, 1);
	memcpy(cc->inputs, shapes, (size_t)R->nsel * sizeof(ValId));
	cc->outputs[0] = dims;
	node_add_attr(b, cc, "axis", ATTR_INT)->i = 0;

	int64_t n = (int64_t)R->ncombos * R->ncols;
	Shape ts = shape_of(1, &n);
	ValId table = new_value(b, arena_printf(a, "%s_table", R->name),
				VAL_WEIGHT);
	Tensor *t = tensor_new(a, b->vals[table].name, DT_INT64, &ts, R->table);
	ASSERT(t);
	t->folded = true;
	b->vals[table].konst = t;
	b->vals[table].dtype = DT_INT64;
	b->vals[table].shape = ts;

	ValId branch = new_value(b, arena_printf(a, "%s_branch", R->name),
				 VAL_NODE);
	Node *mi = graph_add_node(b, arena_printf(a, "%s_mapindex", R->name),
				  "MapIndex", GEARC_DOMAIN, 2, 1);
	mi->inputs[0] = dims;
	mi->inputs[1] = table;
	mi->outputs[0] = branch;
	return branch;
}

static void case_attrs(Scope *s, const Region *R, Graph *b, Node *cs,
		       Graph **clones)
{
	Attr *a = node_add_attr(b, cs, CASE_BRANCHES_ATTR, ATTR_GRAPHS);
	a->n = R->ncombos;
	a->graphs = clones;
	node_add_attr(b, cs, CASE_GEAR_COUNT_ATTR, ATTR_INT)->i = R->ncombos;
	node_add_ints(b, cs, CASE_GEAR_DIMS_ATTR, R->table,
		      R->ncombos * R->ncols);
	a = node_add_attr(b, cs, CASE_INPUT_ORDER_ATTR, ATTR_STRINGS);
	a->n = R->nsel;
	Bytes *names = arena_array(&s->m->arena, (size_t)R->nsel, sizeof(Bytes));
	for (int32_t j = 0; j < R->nsel; j++) {
		const char *nm = b->vals[b->inputs[R->sel[j]]].name;
		names[j].len = strlen(nm);
		names[j].data = (const uint8_t *)nm;
	}
	a->strings = names;
	node_add_string(b, cs, CASE_DYNAMIC_TYPE_ATTR, "dims");
}

/* Region r's body (parent: the root graph): the selector and a Case over
 * its specialised clones. */
static Graph *build_body(Scope *s, int32_t r, Graph *root)
{
	const Region *R = &s->regions[r];
	Graph *b = graph_new(&s->m->arena, R->name, root);
	Graph *tmpl = build_template(s, R, b);
	Graph **clones = arena_array(&s->m->arena, (size_t)R->ncombos,
				     sizeof(Graph *));
	for (int32_t c = 0; c < R->ncombos; c++)
		if (!(clones[c] = make_clone(s, R, tmpl, b, c)))
			return NULL;
	for (int32_t k = 0; k < R->nin; k++) {
		const Value *x = gear_val(s, 0, R->in[k]);
		ValId v = graph_add_value(b, x->name, VAL_INPUT);
		b->vals[v].dtype = x->dtype;
		b->vals[v].tkind = x->tkind;
		push_io(b, &b->inputs, &b->ninputs, v);
	}
	ValId *ov = arena_array(&s->m->arena, (size_t)R->nout, sizeof(ValId));
	for (int32_t k = 0; k < R->nout; k++) {
		ov[k] = graph_add_value(b, s->src->vals[R->out[k]].name,
					VAL_NODE);
		b->vals[ov[k]].flags |= VF_GRAPH_OUT;
	}
	ValId branch = build_selector(s, R, b);
	Node *cs = graph_add_node(b, arena_printf(&s->m->arena, "%s_case",
						  R->name),
				  "Case", GEARC_DOMAIN, 1 + R->nin, R->nout);
	cs->inputs[0] = branch;
	for (int32_t k = 0; k < R->nin; k++)
		cs->inputs[1 + k] = b->inputs[k];
	memcpy(cs->outputs, ov, (size_t)R->nout * sizeof(ValId));
	case_attrs(s, R, b, cs, clones);
	b->outputs = ov;
	b->noutputs = R->nout;
	return b;
}

/* The PartitionedCall standing for region r in the root graph. */
static int add_call(Build *b, int32_t r)
{
	Scope *s = b->s;
	const Region *R = &s->regions[r];
	Graph *body = build_body(s, r, b->g);
	if (!body)
		return -1;
	Node *n = graph_add_node(b->g, R->name, "PartitionedCall",
				 GEARC_DOMAIN, R->nin, R->nout);
	for (int32_t k = 0; k < R->nout; k++)
		n->outputs[k] = b->map[R->out[k]];
	for (int32_t k = 0; k < R->nin; k++) {
		ValId id = use_val(b, R->in[k]);
		b->g->nodes[b->g->nnodes - 1].inputs[k] = id;
	}
	n = &b->g->nodes[b->g->nnodes - 1];
	node_add_attr(b->g, n, SCOPE_BODY_ATTR, ATTR_GRAPH)->g = body;
	node_add_attr(b->g, n, SCOPE_MULTI_DIMS_ATTR, ATTR_INT)->i = 1;
	int64_t *map = arena_array(&s->m->arena, (size_t)s->ngears,
				   sizeof(int64_t));
	for (int32_t g = 0; g < s->ngears; g++)
		map[g] = R->map[g];
	node_add_ints(b->g, n, SCOPE_GEAR_MAP_ATTR, map, s->ngears);
	node_add_string(b->g, n, SCOPE_WHY_ATTR, R->why);
	return 0;
}

/* v's shapes over the gears merged: a dim they all agree on is static,
 * the others -1. */
static Shape merged_shape(const Scope *s, ValId v)
{
	Shape m = gear_val(s, 0, v)->shape;
	for (int32_t g = 1; g < s->ngears; g++) {
		const Shape *t = &gear_val(s, g, v)->shape;
		if (t->rank != m.rank)
			return shape_unknown();
		for (int32_t d = 0; d < m.rank; d++)
			if (t->dims[d] != m.dims[d])
				m.dims[d] = DIM_UNKNOWN;
	}
	return m;
}

/* The root graph: the model's graph, its const nodes gone (their values
 * weights), each region a PartitionedCall at its first node's place.  Its
 * inputs have the dims every gear agrees on, -1 at the others. */
static Graph *build_root(Scope *s, ValId **map)
{
	const Graph *src = s->src;
	Graph *root = graph_new(&s->m->arena, src->name, NULL);
	Build b;
	build_init(&b, s, root);
	for (int32_t k = 0; k < src->ninputs; k++) {
		ValId id = add_copy(&b, src->inputs[k], VAL_INPUT);
		root->vals[id].shape = merged_shape(s, src->inputs[k]);
		push_io(root, &root->inputs, &root->ninputs, id);
	}
	/* Every node output first: a region may read what a later node
	 * outside it makes. */
	for (int32_t i = 0; i < s->nn; i++) {
		int32_t r = s->region[i];
		if (!s->live[i])
			continue;
		if (r < 0) {
			def_outputs(&b, &src->nodes[i]);
		} else if (s->regions[r].nodes[0] == i) {
			for (int32_t k = 0; k < s->regions[r].nout; k++)
				add_copy(&b, s->regions[r].out[k], VAL_NODE);
		}
	}
	for (int32_t i = 0; i < s->nn; i++) {
		int32_t r = s->region[i];
		if (!s->live[i])
			continue;
		if (r < 0)
			move_node(&b, i);
		else if (s->regions[r].nodes[0] == i && add_call(&b, r) < 0)
			goto fail;
	}
	for (int32_t k = 0; k < src->noutputs; k++) {
		ValId id = use_val(&b, src->outputs[k]);
		root->vals[id].flags |= VF_GRAPH_OUT;
		push_io(root, &root->outputs, &root->noutputs, id);
	}
	if (graph_toposort(root) < 0)
		goto fail;
	*map = b.map;
	return root;
fail:
	return NULL;
}

/* ---- the pass ------------------------------------------------------------ */

/* Every gear's output shapes, from the inferred branches. */
static Shape *gear_outputs(Scope *s)
{
	int32_t nout = s->src->noutputs;
	Shape *t = arena_array(&s->m->arena, (size_t)s->ngears * (size_t)nout + 1,
			       sizeof(Shape));
	for (int32_t g = 0; g < s->ngears; g++)
		for (int32_t k = 0; k < nout; k++)
			t[(size_t)g * (size_t)nout + (size_t)k] =
				gear_val(s, g, s->src->outputs[k])->shape;
	return t;
}

/* The model's output shapes merged over the gears (what the .om's output
 * list shows). */
static Shape *merged_outputs(Scope *s)
{
	int32_t nout = s->src->noutputs;
	Shape *t = arena_array(&s->m->arena, (size_t)nout + 1, sizeof(Shape));
	for (int32_t k = 0; k < nout; k++)
		t[k] = merged_shape(s, s->src->outputs[k]);
	return t;
}

static void drop_branches(Model *m)
{
	for (int32_t g = 0; g < m->gears->ngears; g++) {
		arena_release(m->arenas[g]);
		free(m->arenas[g]);
	}
	m->arenas = NULL;
	m->branches = NULL;
}

/* ---- warnings: what --gear_scope could not do ---------------------------- */

/* The gear input node i depends on: the first varying graph input found
 * walking back through what it reads (seen: per node, visited). */
static const char *gear_source(const Scope *s, int32_t i, bool *seen)
{
	if (seen[i])
		return NULL;
	seen[i] = true;
	for (int32_t k = s->rstart[i]; k < RD_END(s, i); k++) {
		ValId v = s->reads[k];
		if (s->src->vals[v].kind == VAL_INPUT &&
		    s->cls[v] == VC_VARYING)
			return s->src->vals[v].name;
		int32_t p = producer(s, v);
		const char *r = p >= 0 ? gear_source(s, p, seen) : NULL;
		if (r)
			return r;
	}
	return NULL;
}

/* Prefixes: live nodes outside every scope that touch a varying value
 * keep -1 dims in the root, so they have no memory plan. */
static void warn_outside(Scope *s)
{
	int32_t n = 0, first = -1;
	for (int32_t i = 0; i < s->nn; i++)
		if (s->live[i] && !s->in_scope[i] && touches_varying(s, i)) {
			first = first < 0 ? i : first;
			n++;
		}
	if (!n)
		return;
	const char *in = gear_source(s, first, SCRATCH(s, s->nn + 1, bool));
	model_warn(s->m, -1, "--gear_scope=%s left %d node%s that depend on "
		   "the gear%s%s%s outside every scope (the first: '%s'); they "
		   "keep -1 dims in the root and get no memory plan (the "
		   "runtime allocates them); add their prefix or use "
		   "--gear_scope=auto", s->o->gear_scope, n, n == 1 ? "" : "s",
		   in ? " (input '" : "", in ? in : "", in ? "')" : "",
		   s->src->nodes[first].name);
}

/* auto, not applied: why the full clone was kept. */
static void warn_full_clone(Scope *s, int64_t scoped, int64_t full)
{
	int32_t live = 0, marked = 0;
	for (int32_t i = 0; i < s->nn; i++) {
		live += s->live[i];
		marked += s->live[i] && s->in_scope[i];
	}
	if (marked == live)
		model_warn(s->m, -1, "--gear_scope=auto kept the full clone: "
			   "every node depends on the gear, so there is "
			   "nothing to compile once");
	else
		model_warn(s->m, -1, "--gear_scope=auto kept the full clone: "
			   "with scopes the model would have %lld nodes, not "
			   "fewer than the full clone's %lld (%d of %d nodes "
			   "depend on the gear)", (long long)scoped,
			   (long long)full, marked, live);
}

/* The scoped model from the classified, inferred branches. */
/* auto keeps the full clone unless the scopes are smaller: both counted
 * as the pipeline leaves them, root (now m->graph) and branches
 * specialised; the full clone's root adds its MapIndex and Case. */
static int scopes_smaller(Scope *s, Graph *root)
{
	Model *m = s->m;
	if (specialise(m, root) < 0 ||
	    for_each_gear_graph(m, pass_specialise, s->o) < 0)
		return -1;
	int64_t scoped = nodes_in(root), full = GEAR_ROOT_NODES;
	for (int32_t g = 0; g < s->ngears; g++)
		full += nodes_in(m->branches[g]);
	if (scoped >= full)
		warn_full_clone(s, scoped, full);
	return scoped < full;
}

/* The scoped model from the classified, inferred branches: m->graph
 * becomes its root, which the pipeline specialises, and the branches
 * go; or (auto, not smaller) m->graph stays and the branches are left
 * to pass_gear_clone. */
static int build_scoped(Scope *s)
{
	Model *m = s->m;
	GearSpec *gs = m->gears;
	if (find_regions(s) < 0)
		return -1;
	/* read from the branches before they are specialised */
	Shape *outs = gear_outputs(s), *merged = merged_outputs(s);
	ValId *map = NULL;
	Graph *root = build_root(s, &map);
	if (!root)
		return -1;
	Graph *model = m->graph;
	ValId *ids = SCRATCH(s, gs->ninputs + 1, ValId);
	for (int32_t k = 0; k < gs->ninputs; k++) {
		ids[k] = gs->inputs[k].val;
		gs->inputs[k].val = map[ids[k]];
	}
	m->graph = root;
	int rc = s->is_auto ? scopes_smaller(s, root) : 1;
	if (rc > 0) {
		if (!s->is_auto)
			warn_outside(s);
		m->gear_outputs = outs;
		m->merged_outputs = merged;
		drop_branches(m);
	} else {
		m->graph = model;
		for (int32_t k = 0; k < gs->ninputs; k++)
			gs->inputs[k].val = ids[k];
	}
	return rc < 0 ? -1 : 0;
}

/* The pass's work, its arrays in s->scratch. */
static int scope_model(Scope *s)
{
	Model *m = s->m;
	s->is_auto = !strcmp(s->o->gear_scope, "auto");
	if (!s->is_auto && split_prefixes(&s->scratch, s->o->gear_scope,
					  &s->prefixes, &s->nprefixes) < 0)
		return -1;
	s->src = source_copy(m);
	s->nv = s->src->nvals;
	s->nn = s->src->nnodes;
	gear_branches(m, s->o);
	if (for_each_gear_graph(m, infer_branch, s->o) < 0)
		return -1;
	s->cls = SCRATCH(s, s->nv + 1, uint8_t);
	s->kvary = SCRATCH(s, s->nv + 1, bool);
	s->kt = SCRATCH(s, s->nv + 1, const Tensor *);
	s->cnode = SCRATCH(s, s->nn + 1, bool);
	s->live = SCRATCH(s, s->nn + 1, bool);
	s->mark = SCRATCH(s, s->nn + 1, int32_t);
	s->in_scope = SCRATCH(s, s->nn + 1, bool);
	s->region = SCRATCH(s, s->nn + 1, int32_t);
	s->is_out = SCRATCH(s, s->nv + 1, bool);
	for (int32_t k = 0; k < s->src->noutputs; k++)
		if (s->src->outputs[k] >= 0)
			s->is_out[s->src->outputs[k]] = true;
	classify(s);
	index_reads(s);
	find_live(s);
	index_users(s);
	return build_scoped(s);
}

int pass_gear_scope(Model *m, const PassOptions *o)
{
	if (!o || !o->gear_scope)
		return 0;
	if (!m->gears)
		return error("--gear_scope needs a gear option "
			     "(--dynamic_batch_size, --dynamic_image_size or "
			     "--dynamic_dims)");
	if (gear_scope_check(o->gear_scope) < 0)
		return -1;
	model_add_option(m, "gear_scope", o->gear_scope);
	Scope s = { .m = m, .o = o, .ngears = m->gears->ngears };
	arena_init(&s.scratch);
	int rc = scope_model(&s);
	arena_release(&s.scratch);
	return rc;
}

bool scope_is_call(const Node *n)
{
	return n->op == OP_PartitionedCall &&
	       attr_int(n, SCOPE_MULTI_DIMS_ATTR, 0) != 0;
}
