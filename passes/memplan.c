/*
 * passes/memplan.c - the memory plan of every static graph (memplan.h
 * says what it holds and why; this file is how).
 *
 * Per graph:
 *   1. plan the subgraphs of If/Loop/Scan nodes, for their workspaces;
 *   2. lifetimes: first = producer's step, last = the last use (subgraph
 *      outer references count as uses by the node owning the subgraph);
 *   3. which node outputs go in the arena, which are left out;
 *   4. buffers: walking the nodes in order, a view joins its input's
 *      buffer and an elementwise output may take over a dying input's;
 *   5. place the buffers (mem_place), compute the bounds, write g->plan.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/ordset.h"
#include "constwork.h"
#include "memplan.h"
#include "partition.h"

uint64_t mem_align(uint64_t x)
{
	if (x > UINT64_MAX - (MEM_ALIGN - 1))
		return UINT64_MAX;
	return (x + (MEM_ALIGN - 1)) & ~(uint64_t)(MEM_ALIGN - 1);
}

/* ---- placing intervals ---------------------------------------------------- */

/* Sort keys: ascending in (a, b, c, idx); descending fields are stored
 * complemented. */
typedef struct SortKey {
	uint64_t a, b, c;
	int32_t idx;
} SortKey;

static bool key_less(const SortKey *p, const SortKey *q)
{
	if (p->a != q->a)
		return p->a < q->a;
	if (p->b != q->b)
		return p->b < q->b;
	if (p->c != q->c)
		return p->c < q->c;
	return p->idx < q->idx;
}

/* Bottom-up merge sort of v[0..n) (tmp as large): the comparison inlined,
 * as this runs for every graph. */
static void sort_keys(SortKey *v, SortKey *tmp, int32_t n)
{
	for (int32_t w = 1; w < n; w *= 2) {
		for (int32_t lo = 0; lo < n; lo += 2 * w) {
			int32_t mid = lo + w < n ? lo + w : n;
			int32_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			int32_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				tmp[k++] = key_less(&v[j], &v[i]) ? v[j++] : v[i++];
			while (i < mid)
				tmp[k++] = v[i++];
			while (j < hi)
				tmp[k++] = v[j++];
		}
		memcpy(v, tmp, (size_t)n * sizeof(SortKey));
	}
}

/* The buffers in ordering kind: by size (largest first), by first use
 * (lifetime-first, the larger first on ties), by lifetime length, or by
 * size times length. */
static void make_order(const MemInterval *iv, int32_t n, int kind,
		       int32_t *order, SortKey *keys /* 2 * n */)
{
	for (int32_t i = 0; i < n; i++) {
		uint64_t size = ~iv[i].size;
		uint64_t len = ~(uint64_t)(iv[i].last - iv[i].first);
		uint64_t first = (uint64_t)iv[i].first;
		SortKey k = { size, len, first, i };
		uint64_t area;
		if (__builtin_mul_overflow(iv[i].size,
					   (uint64_t)(iv[i].last - iv[i].first) + 1,
					   &area))
			area = UINT64_MAX;
		if (kind == MEM_BY_FIRST)
			k = (SortKey){ first, size, len, i };
		else if (kind == MEM_BY_LENGTH)
			k = (SortKey){ len, size, first, i };
		else if (kind == MEM_BY_AREA)
			k = (SortKey){ ~area, size, first, i };
		keys[i] = k;
	}
	sort_keys(keys, keys + n, n);
	for (int32_t i = 0; i < n; i++)
		order[i] = keys[i].idx;
}

/* The buffers placed so far, indexed by time: steps are cut into slices
 * of SLICE steps, and each slice lists the placed buffers live in it.  A
 * new buffer looks only at the slices of its lifetime, so a placement
 * costs about the buffers live near it, not all placed so far. */
enum { SLICE = 16 };

typedef struct Span {
	uint64_t off, end;
} Span;

typedef struct Placer {
	const MemInterval *iv;
	int32_t n, nslices;
	const uint64_t *off; /* offsets of the placed buffers */
	int32_t **slice;     /* per slice: placed buffers live in it */
	int32_t *len, *cap;
	uint32_t *seen, stamp; /* per buffer: last query that met it */
	Span *near;	       /* the buffers live with the new one */
	uint64_t work;	       /* slice entries read: the search budget */
	uint64_t spent, budget; /* all the work done, and allowed */
} Placer;

static void placer_init(Placer *P, const MemInterval *iv, int32_t n)
{
	int32_t steps = 1;
	for (int32_t i = 0; i < n; i++)
		if (iv[i].last + 1 > steps)
			steps = iv[i].last + 1;
	*P = (Placer){ .iv = iv, .n = n, .nslices = steps / SLICE + 1,
		       .budget = UINT64_MAX };
	P->slice = xcalloc((size_t)P->nslices, sizeof(int32_t *));
	P->len = xcalloc((size_t)P->nslices, sizeof(int32_t));
	P->cap = xcalloc((size_t)P->nslices, sizeof(int32_t));
	P->seen = xcalloc((size_t)n, sizeof(uint32_t));
	P->near = xmalloc((size_t)n * sizeof(Span));
}

static void placer_release(Placer *P)
{
	for (int32_t k = 0; k < P->nslices; k++)
		free(P->slice[k]);
	free(P->slice);
	free(P->len);
	free(P->cap);
	free(P->seen);
	free(P->near);
}

static int cmp_span(const void *x, const void *y)
{
	const Span *a = x, *b = y;
	if (a->off != b->off)
		return a->off < b->off ? -1 : 1;
	return (a->end > b->end) - (a->end < b->end);
}

/* By offset: insertion sort for the few spans a placement usually
 * meets, qsort beyond. */
static void sort_spans(Span *v, int32_t n)
{
	if (n > 24) {
		qsort(v, (size_t)n, sizeof(Span), cmp_span);
		return;
	}
	for (int32_t i = 1; i < n; i++) {
		Span x = v[i];
		int32_t j = i;
		for (; j > 0 && cmp_span(&v[j - 1], &x) > 0; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* The placed buffers live together with b, by offset; their count. */
static int32_t gather(Placer *P, const MemInterval *b)
{
	int32_t n = 0;
	if (++P->stamp == 0) { /* wrapped: forget every mark */
		memset(P->seen, 0, (size_t)P->n * sizeof(uint32_t));
		P->stamp = 1;
	}
	for (int32_t k = b->first / SLICE; k <= b->last / SLICE; k++) {
		P->work += (uint64_t)P->len[k];
		P->spent += (uint64_t)P->len[k] + 1;
		for (int32_t j = 0; j < P->len[k]; j++) {
			int32_t p = P->slice[k][j];
			const MemInterval *q = &P->iv[p];
			if (P->seen[p] == P->stamp || q->first > b->last ||
			    q->last < b->first)
				continue;
			P->seen[p] = P->stamp;
			P->near[n++] = (Span){ P->off[p], P->off[p] + q->size };
		}
	}
	sort_spans(P->near, n);
	return n;
}

/* The offset for b: the smallest gap between the buffers live with it
 * that holds it (best fit) or the lowest (first fit); above them all if
 * none does. */
static uint64_t find_offset(Placer *P, const MemInterval *b, bool best_fit)
{
	uint64_t size = b->size, top = 0, best = UINT64_MAX;
	uint64_t best_gap = UINT64_MAX;
	int32_t n = gather(P, b);
	for (int32_t j = 0; j < n; j++) {
		if (P->near[j].off > top) {
			uint64_t gap = P->near[j].off - top;
			if (gap >= size && gap < best_gap) {
				best = top;
				best_gap = gap;
				if (!best_fit || gap == size)
					break;
			}
		}
		if (P->near[j].end > top)
			top = P->near[j].end;
	}
	return best != UINT64_MAX ? best : top;
}

static void insert_placed(Placer *P, int32_t b)
{
	for (int32_t k = P->iv[b].first / SLICE; k <= P->iv[b].last / SLICE;
	     k++) {
		P->spent++;
		if (P->len[k] == P->cap[k]) {
			P->cap[k] = P->cap[k] ? 2 * P->cap[k] : 16;
			P->slice[k] = xrealloc(P->slice[k], (size_t)P->cap[k] *
								sizeof(int32_t));
		}
		P->slice[k][P->len[k]++] = b;
	}
}

/* Places the buffers in order; returns the arena size.  *top is the
 * position in order of the first buffer reaching the arena's end.
 * UINT64_MAX if the planner's budget runs out first. */
static uint64_t place(Placer *P, const int32_t *order, bool best_fit,
		      uint64_t *off, int32_t *top)
{
	uint64_t arena = 0;
	P->off = off;
	memset(P->len, 0, (size_t)P->nslices * sizeof(int32_t));
	*top = -1;
	for (int32_t k = 0; k < P->n; k++) {
		int32_t b = order[k];
		const MemInterval *x = &P->iv[b];
		if (++P->spent > P->budget)
			return UINT64_MAX;
		if (!x->size) {
			off[b] = 0;
			continue;
		}
		off[b] = find_offset(P, x, best_fit);
		insert_placed(P, b);
		if (off[b] + x->size > arena) {
			arena = off[b] + x->size;
			*top = k;
		}
	}
	return arena;
}

/* ---- placing in order of first use: a sweep ------------------------------ */

/* In lifetime-first order (MEM_BY_FIRST) the placed buffers live with b
 * are exactly those live at b's first step.  So a sweep over the steps
 * that keeps the live buffers by offset, each weighted by the gap below
 * it, and the gaps by (size, start), finds the offsets place() would, in
 * O(log n) a buffer whatever the lifetimes: the planner's fallback when
 * the other orderings cost too much. */
typedef struct Sweep {
	const MemInterval *iv;
	const uint64_t *off;
	OrdSet live; /* by offset; weight: the free bytes just below */
	OrdSet gaps; /* those with free bytes below: by (bytes, start) */
} Sweep;

static uint64_t end_of(const Sweep *S, int32_t b)
{
	return S->off[b] + S->iv[b].size;
}

static void sweep_add(Sweep *S, int32_t b, uint64_t gap)
{
	ordset_insert(&S->live, b, (OrdKey){ S->off[b], 0 }, gap);
	if (gap)
		ordset_insert(&S->gaps, b, (OrdKey){ gap, S->off[b] - gap }, 0);
}

static void sweep_drop(Sweep *S, int32_t b)
{
	if (ordset_weight(&S->live, b))
		ordset_remove(&S->gaps, b);
	ordset_remove(&S->live, b);
}

/* The live buffer above offset off (if any) now has free bytes down to
 * below_end. */
static void regap_above(Sweep *S, uint64_t off, uint64_t below_end)
{
	int32_t hi = ordset_above(&S->live, (OrdKey){ off, 0 });
	if (hi < 0)
		return;
	sweep_drop(S, hi);
	sweep_add(S, hi, S->off[hi] - below_end);
}

static uint64_t below_end(const Sweep *S, uint64_t off)
{
	int32_t lo = ordset_below(&S->live, (OrdKey){ off, 0 });
	return lo >= 0 ? end_of(S, lo) : 0;
}

static void sweep_insert(Sweep *S, int32_t b)
{
	uint64_t under = below_end(S, S->off[b]);
	regap_above(S, S->off[b], end_of(S, b));
	sweep_add(S, b, S->off[b] - under);
}

static void sweep_remove(Sweep *S, int32_t b)
{
	uint64_t under = below_end(S, S->off[b]);
	sweep_drop(S, b);
	regap_above(S, S->off[b], under);
}

/* find_offset over the live set: the smallest gap that holds size, the
 * lowest on ties (best fit), or the lowest gap that does; else the top. */
static uint64_t sweep_offset(const Sweep *S, uint64_t size, bool best_fit)
{
	int32_t j = best_fit ? ordset_ceil(&S->gaps, (OrdKey){ size, 0 })
			     : ordset_first_heavy(&S->live, size);
	if (j >= 0)
		return S->off[j] - ordset_weight(&S->live, j);
	j = ordset_last(&S->live);
	return j >= 0 ? end_of(S, j) : 0;
}

/* place() for an order by first use (by_last: the buffers by last use). */
static uint64_t sweep_place(const MemInterval *iv, int32_t n,
			    const int32_t *order, const int32_t *by_last,
			    bool best_fit, uint64_t *off, int32_t *top)
{
	Sweep S = { .iv = iv, .off = off };
	uint64_t arena = 0;
	ordset_init(&S.live, n);
	ordset_init(&S.gaps, n);
	*top = -1;
	for (int32_t k = 0, r = 0; k < n; k++) {
		int32_t b = order[k];
		for (; r < n && iv[by_last[r]].last < iv[b].first; r++)
			if (iv[by_last[r]].size)
				sweep_remove(&S, by_last[r]);
		off[b] = 0;
		if (!iv[b].size)
			continue;
		off[b] = sweep_offset(&S, iv[b].size, best_fit);
		sweep_insert(&S, b);
		if (off[b] + iv[b].size > arena) {
			arena = off[b] + iv[b].size;
			*top = k;
		}
	}
	ordset_release(&S.live);
	ordset_release(&S.gaps);
	return arena;
}

/* Work allowed to the local search, in scan steps (a few milliseconds at
 * most), and the most placements it may try. */
enum { SEARCH_WORK = 1 << 21, SEARCH_TRIES = 256 };

/* Moves order[from] to position to (< from), shifting the rest up. */
static void move_earlier(int32_t *order, int32_t from, int32_t to)
{
	int32_t b = order[from];
	memmove(order + to + 1, order + to, (size_t)(from - to) * sizeof(int32_t));
	order[to] = b;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Local search from the best ordering: move the buffer that reaches the
 * arena's end to an earlier position (a run of neighbour swaps; if it is
 * first already, swap two neighbours), keep the new ordering if its
 * arena is no larger (so the search can cross plateaus), until the lower
 * bound is reached or the budget is spent.  Deterministic: the positions
 * come from a fixed-seed generator and the budget counts scan steps,
 * never time. */
static uint64_t local_search(Placer *P, int32_t *order, bool best_fit,
			     uint64_t arena, int32_t top, uint64_t lower,
			     uint64_t *off)
{
	int32_t n = P->n, ctop;
	int32_t *cand = xmalloc((size_t)n * sizeof(int32_t));
	uint64_t *coff = xmalloc((size_t)n * sizeof(uint64_t));
	uint64_t limit = P->work + SEARCH_WORK, seed = 0x9e3779b97f4a7c15ull;
	for (int tries = 0; arena > lower && n > 1 && tries < SEARCH_TRIES &&
			    P->work < limit && P->spent < P->budget;
	     tries++) {
		uint64_t r = xorshift(&seed);
		memcpy(cand, order, (size_t)n * sizeof(int32_t));
		if (top > 0) {
			move_earlier(cand, top, (int32_t)(r % (uint64_t)top));
		} else {
			int32_t i = (int32_t)(r % (uint64_t)(n - 1)), b = cand[i];
			cand[i] = cand[i + 1];
			cand[i + 1] = b;
		}
		uint64_t a = place(P, cand, best_fit, coff, &ctop);
		if (a > arena)
			continue;
		memcpy(order, cand, (size_t)n * sizeof(int32_t));
		memcpy(off, coff, (size_t)n * sizeof(uint64_t));
		arena = a;
		top = ctop;
	}
	free(cand);
	free(coff);
	return arena;
}

uint64_t mem_lower_bound(const MemInterval *iv, int32_t n)
{
	int32_t steps = 0;
	for (int32_t i = 0; i < n; i++)
		if (iv[i].last + 2 > steps)
			steps = iv[i].last + 2;
	uint64_t *delta = xcalloc((size_t)steps + 1, sizeof(uint64_t));
	uint64_t *minus = xcalloc((size_t)steps + 1, sizeof(uint64_t));
	for (int32_t i = 0; i < n; i++) {
		delta[iv[i].first] += iv[i].size;
		minus[iv[i].last + 1] += iv[i].size;
	}
	uint64_t live = 0, most = 0;
	for (int32_t s = 0; s < steps; s++) {
		live = live + delta[s] - minus[s];
		if (live > most)
			most = live;
	}
	free(delta);
	free(minus);
	return most;
}

/* The buffers by last use. */
static void order_by_last(const MemInterval *iv, int32_t n, int32_t *by_last,
			  SortKey *keys /* 2 * n */)
{
	for (int32_t i = 0; i < n; i++)
		keys[i] = (SortKey){ (uint64_t)iv[i].last, 0, 0, i };
	sort_keys(keys, keys + n, n);
	for (int32_t i = 0; i < n; i++)
		by_last[i] = keys[i].idx;
}

/* One greedy pass: the sweep for an order by first use, else place()
 * (which gives up when the budget is spent). */
static uint64_t place_ordered(Placer *P, int kind, const int32_t *order,
			      const int32_t *by_last, bool best_fit,
			      uint64_t *off, int32_t *top)
{
	if (kind == MEM_BY_FIRST)
		return sweep_place(P->iv, P->n, order, by_last, best_fit, off,
				   top);
	return place(P, order, best_fit, off, top);
}

uint64_t mem_place_greedy(const MemInterval *iv, int32_t n, int ordering,
			  bool best_fit, uint64_t *offsets)
{
	ASSERT(ordering >= 0 && ordering < MEM_ORDERINGS);
	if (n <= 0)
		return 0;
	Placer P;
	placer_init(&P, iv, n);
	int32_t *order = xmalloc((size_t)n * sizeof(int32_t)), top;
	int32_t *by_last = xmalloc((size_t)n * sizeof(int32_t));
	SortKey *keys = xmalloc(2 * (size_t)n * sizeof(SortKey));
	make_order(iv, n, ordering, order, keys);
	order_by_last(iv, n, by_last, keys);
	uint64_t arena = place_ordered(&P, ordering, order, by_last, best_fit,
				       offsets, &top);
	free(keys);
	free(by_last);
	free(order);
	placer_release(&P);
	return arena;
}

/* The work mem_place may do beyond the sweep, in slice entries read or
 * written and buffers placed: a fixed part (far more than any real
 * network of the test suite needs), then so much per buffer and step. */
enum { PLACE_BUDGET_BASE = 1 << 24, PLACE_BUDGET_PER = 64 };

uint64_t mem_place(const MemInterval *iv, int32_t n, uint64_t *offsets)
{
	if (n <= 0)
		return 0;
	Placer P;
	placer_init(&P, iv, n);
	P.budget = PLACE_BUDGET_BASE +
		   PLACE_BUDGET_PER * ((uint64_t)n + (uint64_t)P.nslices * SLICE);
	int32_t *order = xmalloc((size_t)n * sizeof(int32_t));
	int32_t *best_order = xmalloc((size_t)n * sizeof(int32_t));
	int32_t *by_last = xmalloc((size_t)n * sizeof(int32_t));
	uint64_t *off = xmalloc((size_t)n * sizeof(uint64_t));
	SortKey *keys = xmalloc(2 * (size_t)n * sizeof(SortKey));
	uint64_t lower = mem_lower_bound(iv, n), best = UINT64_MAX;
	int32_t best_top = -1, top;
	bool best_fit = true;
	order_by_last(iv, n, by_last, keys);
	for (int kind = 0; kind < MEM_ORDERINGS && best > lower; kind++) {
		make_order(iv, n, kind, order, keys);
		for (int fit = 1; fit >= 0 && best > lower; fit--) {
			uint64_t a = place_ordered(&P, kind, order, by_last,
						   fit, off, &top);
			if (a < best) {
				best = a;
				best_top = top;
				best_fit = fit;
				memcpy(best_order, order, (size_t)n * sizeof(int32_t));
				memcpy(offsets, off, (size_t)n * sizeof(uint64_t));
			}
		}
	}
	if (best > lower)
		best = local_search(&P, best_order, best_fit, best, best_top,
				    lower, offsets);
	free(keys);
	free(off);
	free(by_last);
	free(best_order);
	free(order);
	placer_release(&P);
	return best;
}

/* ---- lifetimes and buffers of a graph ------------------------------------ */

bool memplan_inplace_ok(int op, int k)
{
	switch (op_info[op].inplace) {
	case INPLACE_IN0:
	case INPLACE_DATA: return k == 0;
	case INPLACE_ANY: return true;
	case INPLACE_IN12: return k == 1 || k == 2;
	default: return false;
	}
}

enum { ST_NONE, ST_UNPLANNED, ST_ARENA, ST_EXTVIEW };
enum { SHARE_OWN, SHARE_VIEW, SHARE_INPLACE };

typedef struct Plan {
	Graph *g;
	int32_t nn, nv;
	int32_t *first, *last; /* per value */
	uint8_t *state;	       /* ST_* per value */
	uint8_t *share;	       /* SHARE_* per value */
	ValId *owner;	       /* the value owning its buffer (ST_ARENA) */
	uint64_t *size;	       /* aligned bytes per value */
	uint64_t *offset;      /* per owner: its buffer's offset */
	int32_t *gfirst, *glast; /* per owner: the buffer's lifetime */
	uint64_t *gsize;	 /* per owner: the buffer's size */
	uint64_t *ws;		 /* per node: workspace bytes */
	int32_t *reader_step, *shared; /* per owner: mark_shared_reads */
	ValId *reader;
	int32_t unplanned;
	Arena scratch; /* every array above; released when the plan is made */
} Plan;

static void use(Plan *p, ValId v, int32_t step)
{
	if (v >= 0 && v < p->nv && step > p->last[v])
		p->last[v] = step;
}

/* Whether n, a node of g, may run subgraphs: only these ops have graph
 * attributes.  The gear branches of the root's Case are not its subgraphs
 * here: they take the Case's inputs as their own (pass_gear_clone) and are
 * planned as gears.  A Case inside a subgraph (a multi-dims scope's,
 * passes/scope.h) runs its clones in a workspace, as If does.  An unknown
 * partition runs dynamically: no plan, no workspace (passes/partition.h). */
static bool runs_subgraphs(const Graph *g, const Node *n)
{
	if (partition_is_unknown(n))
		return false;
	switch (n->op) {
	case OP_Case:
		return g->parent && n->nattrs > 0;
	case OP_If: case OP_Loop: case OP_Scan: case OP_SequenceMap:
	case OP_PartitionedCall: case OP_UNKNOWN:
		return n->nattrs > 0;
	default:
		return false;
	}
}

static int plan_graph(Model *m, Graph *g);

/* Plans subgraph sub of node i: its arena sizes i's workspace, its outer
 * references are reads by i. */
static int plan_sub(Model *m, Plan *p, int32_t i, Graph *sub)
{
	if (plan_graph(m, sub) < 0)
		return -1;
	if (sub->plan->arena_bytes > p->ws[i])
		p->ws[i] = sub->plan->arena_bytes;
	for (ValId v = 0; v < sub->nvals; v++)
		if (sub->vals[v].kind == VAL_OUTER)
			use(p, sub->vals[v].outer, i);
	return 0;
}

static int plan_subgraphs(Model *m, Plan *p, int32_t i)
{
	Node *n = &p->g->nodes[i];
	for (int32_t k = 0; k < n->nattrs; k++) {
		Attr *a = &n->attrs[k];
		if (a->type == ATTR_GRAPH && a->g && plan_sub(m, p, i, a->g) < 0)
			return -1;
		for (int32_t j = 0; a->type == ATTR_GRAPHS && j < a->n; j++)
			if (a->graphs[j] && plan_sub(m, p, i, a->graphs[j]) < 0)
				return -1;
	}
	return 0;
}

/* Lifetimes, planning the subgraphs on the way. */
static int lifetimes(Model *m, Plan *p)
{
	Graph *g = p->g;
	for (ValId v = 0; v < p->nv; v++)
		p->first[v] = p->last[v] = -1;
	for (int32_t i = 0; i < p->nn; i++) {
		Node *n = &g->nodes[i];
		for (int32_t k = 0; k < n->noutputs; k++)
			if (n->outputs[k] >= 0)
				p->first[n->outputs[k]] = i;
		for (int32_t k = 0; k < n->ninputs; k++)
			use(p, n->inputs[k], i);
		if (runs_subgraphs(g, n) && plan_subgraphs(m, p, i) < 0)
			return -1;
	}
	for (ValId v = 0; v < p->nv; v++)
		if (p->first[v] >= 0 && p->last[v] < p->first[v])
			p->last[v] = p->first[v];
	return 0;
}

/* Which node outputs get a place in the arena (ST_ARENA), which are left
 * out (ST_UNPLANNED); everything else is ST_NONE. */
static void classify(Plan *p)
{
	Graph *g = p->g;
	bool *is_out = xcalloc((size_t)p->nv + 1, sizeof(bool));
	uint8_t *once = constwork_values(g); /* made when the model opens */
	for (int32_t k = 0; k < g->noutputs; k++)
		if (g->outputs[k] >= 0 && g->outputs[k] < p->nv)
			is_out[g->outputs[k]] = true;
	for (ValId v = 0; v < p->nv; v++) {
		const Value *x = &g->vals[v];
		p->state[v] = ST_NONE;
		if (x->kind != VAL_NODE || p->first[v] < 0 || is_out[v] ||
		    x->konst || once[v])
			continue;
		int64_t bytes = shape_bytes(&x->shape, x->dtype);
		if (x->tkind != TK_TENSOR || x->dtype == DT_STRING ||
		    bytes < 0) {
			p->state[v] = ST_UNPLANNED;
			p->unplanned++;
			continue;
		}
		p->state[v] = ST_ARENA;
		p->owner[v] = v;
		p->size[v] = mem_align((uint64_t)bytes);
		p->gfirst[v] = p->first[v];
		p->glast[v] = p->last[v];
		p->gsize[v] = p->size[v];
	}
	free(is_out);
	free(once);
}

static void join(Plan *p, ValId v, ValId in, int how)
{
	ValId o = p->owner[in];
	p->owner[v] = o;
	p->share[v] = (uint8_t)how;
	if (p->glast[v] > p->glast[o])
		p->glast[o] = p->glast[v];
	if (p->gsize[v] > p->gsize[o])
		p->gsize[o] = p->gsize[v];
}

/* Output 0 of a view op: its input's buffer, or none if the input has
 * none in the arena. */
static void share_view(Plan *p, const Node *n)
{
	ValId v = n->outputs[0], in = n->ninputs > 0 ? n->inputs[0] : -1;
	if (v < 0 || p->state[v] != ST_ARENA || in < 0)
		return;
	if (p->state[in] == ST_ARENA)
		join(p, v, in, SHARE_VIEW);
	else
		p->state[v] = ST_EXTVIEW;
}

/* Marks the buffers node i reads through more than one tensor
 * (p->shared[owner] == i), in one pass over its inputs. */
static void mark_shared_reads(Plan *p, const Node *n, int32_t i)
{
	for (int32_t k = 0; k < n->ninputs; k++) {
		ValId x = n->inputs[k];
		if (x < 0 || p->state[x] != ST_ARENA)
			continue;
		ValId o = p->owner[x];
		if (p->reader_step[o] != i) {
			p->reader_step[o] = i;
			p->reader[o] = x;
		} else if (p->reader[o] != x) {
			p->shared[o] = i;
		}
	}
}

/* Input k can take the output of elementwise node n (at step i) in
 * place: same dtype and shape, its buffer dies here, no other input
 * reads that buffer (mark_shared_reads; for a Scatter's data, not even
 * the same tensor read again as its indices or updates). */
static bool can_overwrite(const Plan *p, const Node *n, int32_t k, int32_t i)
{
	const Graph *g = p->g;
	ValId v = n->outputs[0], in = n->inputs[k];
	if (in < 0 || p->state[in] != ST_ARENA || !memplan_inplace_ok(n->op, k))
		return false;
	const Value *a = &g->vals[in], *b = &g->vals[v];
	if (op_info[n->op].inplace == INPLACE_DATA)
		for (int32_t j = 0; j < n->ninputs; j++) {
			ValId x = n->inputs[j];
			if (j != k && x >= 0 && p->state[x] == ST_ARENA &&
			    p->owner[x] == p->owner[in])
				return false; /* read after the writes begin */
		}
	return a->dtype == b->dtype && shape_equal(&a->shape, &b->shape) &&
	       p->glast[p->owner[in]] == i && p->shared[p->owner[in]] != i;
}

static void share_inplace(Plan *p, const Node *n, int32_t i)
{
	ValId v = n->outputs[0];
	if (v < 0 || p->state[v] != ST_ARENA || n->noutputs != 1)
		return;
	mark_shared_reads(p, n, i);
	for (int32_t k = 0; k < n->ninputs; k++)
		if (can_overwrite(p, n, k, i)) {
			join(p, v, n->inputs[k], SHARE_INPLACE);
			return;
		}
}

static void share_buffers(Plan *p)
{
	for (int32_t i = 0; i < p->nn; i++) {
		const Node *n = &p->g->nodes[i];
		if (n->noutputs < 1)
			continue;
		if (op_info[n->op].view == VIEW_ALIAS)
			share_view(p, n);
		else
			share_inplace(p, n, i);
	}
}

/* ---- the plan -------------------------------------------------------------- */

/* Buffers to place: each owner, then each workspace; who[b] is the
 * owner's ValId, or -1 - node for a workspace. */
static int32_t collect(const Plan *p, MemInterval *iv, int32_t *who)
{
	int32_t nb = 0;
	for (ValId v = 0; v < p->nv; v++)
		if (p->state[v] == ST_ARENA && p->owner[v] == v) {
			iv[nb] = (MemInterval){ p->gsize[v], p->gfirst[v],
						p->glast[v] };
			who[nb++] = v;
		}
	for (int32_t i = 0; i < p->nn; i++)
		if (p->ws[i]) {
			iv[nb] = (MemInterval){ p->ws[i], i, i };
			who[nb++] = -1 - i;
		}
	return nb;
}

/* *sum += x, or an error if the total does not fit in 64 bits. */
static int add_bytes(const Graph *g, uint64_t *sum, uint64_t x)
{
	if (__builtin_add_overflow(*sum, x, sum))
		return error("graph '%s': its tensors need more than 2^64 "
			     "bytes", g->name);
	return 0;
}

/* The block of arena tensor v, its buffer's owner placed at offset. */
static MemBlock tensor_block(const Plan *p, ValId v, uint64_t offset)
{
	ValId o = p->owner[v];
	MemBlock k = { .tensor = v, .node = -1, .offset = offset,
		       .size = p->size[v], .first = p->first[v],
		       .last = p->last[v], .alias_of = -1 };
	if (o == v) { /* the owner's block spans the whole buffer */
		k.size = p->gsize[v];
		k.last = p->glast[v];
	} else {
		k.alias_of = o;
		k.inplace = p->share[v] == SHARE_INPLACE;
	}
	return k;
}

/* g->plan from the placed buffers: a block per arena tensor (ValId
 * order), then one per workspace (node order). */
static int write_plan(Plan *p, const MemInterval *iv, const int32_t *who,
		      int32_t nb, const uint64_t *off, uint64_t arena)
{
	Graph *g = p->g;
	MemPlan *mp = arena_alloc(g->arena, sizeof(*mp));
	int32_t nblocks = nb;
	for (int32_t b = 0; b < nb; b++)
		if (who[b] >= 0)
			p->offset[who[b]] = off[b];
	for (ValId v = 0; v < p->nv; v++)
		nblocks += p->state[v] == ST_ARENA && p->owner[v] != v;
	mp->norder = p->nn;
	mp->order = arena_array(g->arena, (size_t)p->nn, sizeof(int32_t));
	for (int32_t i = 0; i < p->nn; i++)
		mp->order[i] = i;
	mp->blocks = arena_array(g->arena, (size_t)nblocks, sizeof(MemBlock));
	for (ValId v = 0; v < p->nv; v++)
		if (p->state[v] == ST_ARENA)
			mp->blocks[mp->nblocks++] =
				tensor_block(p, v, p->offset[p->owner[v]]);
	for (int32_t b = 0; b < nb; b++)
		if (who[b] < 0)
			mp->blocks[mp->nblocks++] = (MemBlock){
				.tensor = -1, .node = -1 - who[b],
				.offset = off[b], .size = iv[b].size,
				.first = iv[b].first, .last = iv[b].last,
				.alias_of = -1 };
	ASSERT(mp->nblocks == nblocks);
	for (int32_t k = 0; k < nblocks; k++)
		if (add_bytes(g, &mp->naive_bytes, mp->blocks[k].size) < 0)
			return -1;
	mp->arena_bytes = arena;
	mp->lower_bound_bytes = mem_lower_bound(iv, nb);
	mp->unplanned = p->unplanned;
	g->plan = mp;
	return 0;
}

static int place_and_write(Plan *p)
{
	int32_t cap = p->nv + p->nn + 1;
	MemInterval *iv = xmalloc((size_t)cap * sizeof(MemInterval));
	int32_t *who = xmalloc((size_t)cap * sizeof(int32_t));
	uint64_t *off = xmalloc((size_t)cap * sizeof(uint64_t));
	int32_t nb = collect(p, iv, who);
	uint64_t sum = 0;
	int rc = 0;
	for (int32_t b = 0; b < nb && !rc; b++) /* offsets cannot overflow */
		rc = add_bytes(p->g, &sum, iv[b].size);
	if (!rc)
		rc = write_plan(p, iv, who, nb, off, mem_place(iv, nb, off));
	free(iv);
	free(who);
	free(off);
	return rc;
}

/* n zeroed elements of type from p's scratch arena. */
#define SCRATCH(p, n, type) ARENA_ARRAY(&(p)->scratch, n, type)

static int plan_graph(Model *m, Graph *g)
{
	Plan p = { .g = g, .nn = g->nnodes, .nv = g->nvals };
	size_t nv = (size_t)p.nv + 1, nn = (size_t)p.nn + 1;
	arena_init(&p.scratch);
	p.first = SCRATCH(&p, nv, int32_t);
	p.last = SCRATCH(&p, nv, int32_t);
	p.state = SCRATCH(&p, nv, uint8_t);
	p.share = SCRATCH(&p, nv, uint8_t);
	p.owner = SCRATCH(&p, nv, ValId);
	p.size = SCRATCH(&p, nv, uint64_t);
	p.offset = SCRATCH(&p, nv, uint64_t);
	p.gfirst = SCRATCH(&p, nv, int32_t);
	p.glast = SCRATCH(&p, nv, int32_t);
	p.gsize = SCRATCH(&p, nv, uint64_t);
	p.ws = SCRATCH(&p, nn, uint64_t);
	p.reader_step = SCRATCH(&p, nv, int32_t);
	p.shared = SCRATCH(&p, nv, int32_t);
	p.reader = SCRATCH(&p, nv, ValId);
	for (size_t v = 0; v < nv; v++)
		p.reader_step[v] = p.shared[v] = -1;
	g->plan = NULL;
	int rc = lifetimes(m, &p);
	if (!rc) {
		classify(&p);
		share_buffers(&p);
		rc = place_and_write(&p);
	}
	arena_release(&p.scratch);
	return rc;
}

int memplan_graph(Model *m, Graph *g, const PassOptions *o)
{
	(void)o;
	return plan_graph(m, g);
}

int pass_memplan(Model *m, const PassOptions *o)
{
	if (for_each_gear_graph(m, memplan_graph, o) < 0)
		return -1;
	if (m->gears && m->branches)
		return plan_graph(m, m->graph);
	return 0;
}
