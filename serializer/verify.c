/*
 * serializer/verify.c - 'gearc verify FILE.om': re-checks what a compile
 * promises, with code of its own rather than the planner's.
 *
 * Plans, for every graph of the file (each must have one):
 *   order     every node exactly once, each after the producers of what it
 *             reads (subgraph outer references included);
 *   blocks    one per tensor at most, only for node outputs that are not
 *             graph outputs or constants and have a static plain-tensor
 *             shape; offset and size multiples of 64, inside arena_bytes,
 *             size >= the tensor's bytes; first = its producer's step,
 *             last >= the step of every use (uses by subgraphs count at
 *             the node owning them);
 *   complete  every such tensor has a block, unless it is a view of
 *             something outside the arena or made from weights alone (the
 *             runtime computes it once: passes/constwork.h); the count of
 *             tensors left out matches the plan's;
 *   sharing   a block with alias_of has the owner's offset, fits in its
 *             size and lifetime; a view is made by a view op from a
 *             tensor of the same buffer; an in-place result is made by an
 *             elementwise op from one input of the buffer with its dtype
 *             and shape, when nothing else of that buffer is used later
 *             (the buffer's tensors by step and a binary search each, so
 *             verify is O(n log n): a 1M-node in-place chain in seconds);
 *   overlap   no two buffers live at the same step overlap in the arena
 *             (a sweep over the steps, the live buffers by offset);
 *   workspace a node running subgraphs has one, live at its step, at
 *             least as large as each subgraph's arena;
 *   figures   arena_bytes, lower_bound_bytes and naive_bytes are what the
 *             blocks give (the arena: the highest block end).
 * Gears: the root's Case chooses the gear branches, which must be the
 * gear table's (a file written before the table was stored once also
 * has the Case state gear_count and gear_dims: they must agree).
 * (serializer/check.c checks at om_open: the mode against the gears,
 * gear values >= 1, one per -1 of the gear inputs, which are the inputs
 * with -1 dims in order,
 * each gear's shapes from the gear inputs', their bytes from shape and
 * dtype, a branch is a graph under the root, an arena no larger than its
 * blocks side by side, unique input and output names, graph inputs that
 * are exactly the graph's input tensors, sizes that fit int64.)
 * I/O table: every graph a run starts at (a static file's root, each
 * gear's branch or the root, the dynamic graph) has the model's inputs
 * and outputs, one to one by name, plain tensors of the table's dtypes,
 * ranks and dims (the gear's at its -1s): what the runtime binds the
 * caller's tensors to.
 * Shapes: the file is raised back into the IR (serializer/raise.h), and
 * for every static graph (the clones of each multi-dims scope, each gear
 * branch, then the root; or the main graph) the node outputs are reset
 * and shape inference re-run; every dtype and shape must come out as the
 * file records it.
 * Partitions (passes/partition.h), in every partitioned graph: each node
 * is a partition, each partition's subgraph is non-empty and bound to its
 * node's inputs and outputs (counts, dtypes, shapes), the partitions'
 * dependencies have no cycle, a known partition holds only static shapes
 * and has a plan, an unknown one (and everything below it) has none: it
 * runs dynamically, so the plan checks skip it.
 * Hybrid (passes/hybrid.h): the dynamic graph's shapes and symbolic dims
 * are re-derived (inference, then the symbolic walk) and compared.
 *
 * The first violation is the error: one line naming the graph and the
 * tensors or node at fault; exit status 1.
 *
 * The file is raised once and the checks' model is what the runtime's
 * loader and export run on (verify_open: re-inference puts back each
 * value's constant and flags as raised).  The loader defers what is each
 * gear's own (the raise, plans and shapes of its branch and the graphs
 * below it) to verify_gear, before the gear's first run.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "omread.h"
#include "verify.h"
#include "compiler/ordset.h"
#include "passes/hybrid.h"
#include "passes/constwork.h"
#include "passes/memplan.h"
#include "passes/partition.h"
#include "serializer/raise.h"

typedef struct Counts {
	int64_t graphs, plans, tensors, shapes, partitions;
	int64_t io; /* graphs checked against the input/output table */
} Counts;

/* One graph's plan under check.  Per node: step; per tensor: producer,
 * last step using it and the node that does, its block. */
typedef struct PlanCheck {
	const Gearom__Model *m;
	const Gearom__Graph *g;
	const Gearom__MemoryPlan *p;
	int32_t *step, *prod, *use, *user, *blk;
	bool *is_out;
	struct Member *mem;	  /* tensor blocks by (owner, step) */
	int32_t *mem_at, *mem_len; /* per owner: its run of mem */
} PlanCheck;

#define TNAME(c, t) ((c)->g->tensors[t]->name)
#define NNAME(c, n) ((c)->g->nodes[n]->name)

static int verr(const PlanCheck *c, const char *fmt, ...) PRINTF_LIKE(2, 3);

static int verr(const PlanCheck *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap); /* all of it: error() shortens */
	va_end(ap);
	error("graph '%s': %s", c->g->name, msg);
	free(msg);
	return -1;
}

/* The subgraph indices of node n: *count of them (malloc'd, NULL if
 * none). */
static int32_t *subgraphs_of(const Gearom__Node *n, size_t *count)
{
	size_t cnt = 0;
	for (size_t k = 0; k < n->n_attrs; k++)
		cnt += n->attrs[k]->n_graphs + (n->attrs[k]->g >= 0);
	*count = cnt;
	if (!cnt)
		return NULL;
	int32_t *subs = xmalloc(cnt * sizeof(int32_t));
	cnt = 0;
	for (size_t k = 0; k < n->n_attrs; k++) {
		const Gearom__Attribute *a = n->attrs[k];
		if (a->g >= 0)
			subs[cnt++] = a->g;
		for (size_t j = 0; j < a->n_graphs; j++)
			subs[cnt++] = a->graphs[j];
	}
	return subs;
}

static bool is_case(const Gearom__Node *n)
{
	return op_lookup(n->domain, n->op_type) == OP_Case;
}

/* ---- order, producers, uses --------------------------------------------- */

static int check_order(PlanCheck *c)
{
	const Gearom__Graph *g = c->g;
	if (c->p->n_order != g->n_nodes)
		return verr(c, "the plan orders %zu nodes, the graph has %zu",
			    c->p->n_order, g->n_nodes);
	for (size_t k = 0; k < c->p->n_order; k++) {
		int32_t n = c->p->order[k];
		if (c->step[n] >= 0)
			return verr(c, "node '%s' is twice in the plan's order",
				    NNAME(c, n));
		c->step[n] = (int32_t)k;
	}
	for (size_t i = 0; i < g->n_nodes; i++)
		for (size_t k = 0; k < g->nodes[i]->n_outputs; k++) {
			int32_t t = g->nodes[i]->outputs[k];
			if (t < 0)
				continue;
			if (c->prod[t] >= 0)
				return verr(c, "tensor '%s' has two producers, "
					    "'%s' and '%s'", TNAME(c, t),
					    NNAME(c, c->prod[t]),
					    g->nodes[i]->name);
			c->prod[t] = (int32_t)i;
		}
	return 0;
}

/* Node n reads tensor t at its step. */
static int use_at(PlanCheck *c, int32_t n, int32_t t)
{
	int32_t s = c->step[n], p = c->prod[t];
	if (p >= 0 && c->step[p] >= s)
		return verr(c, "node '%s' (step %d) reads '%s' before its "
			    "producer '%s' runs (step %d)", NNAME(c, n), s,
			    TNAME(c, t), NNAME(c, p), c->step[p]);
	if (s > c->use[t]) {
		c->use[t] = s;
		c->user[t] = n;
	}
	return 0;
}

/* The outer references of node n's subgraphs, as reads by n. */
static int outer_uses(PlanCheck *c, int32_t n)
{
	size_t nsubs;
	int32_t *subs = subgraphs_of(c->g->nodes[n], &nsubs);
	int rc = 0;
	for (size_t j = 0; j < nsubs && !rc; j++) {
		const Gearom__Graph *s = c->m->graphs[subs[j]];
		for (size_t t = 0; t < s->n_tensors && !rc; t++)
			if (s->tensors[t]->kind == GEAROM__TENSOR_KIND__TK_OUTER)
				rc = use_at(c, n, s->tensors[t]->outer);
	}
	free(subs);
	return rc;
}

static int check_uses(PlanCheck *c)
{
	const Gearom__Graph *g = c->g;
	for (size_t i = 0; i < g->n_nodes; i++) {
		const Gearom__Node *n = g->nodes[i];
		for (size_t k = 0; k < n->n_inputs; k++)
			if (n->inputs[k] >= 0 &&
			    use_at(c, (int32_t)i, n->inputs[k]) < 0)
				return -1;
		if (outer_uses(c, (int32_t)i) < 0)
			return -1;
	}
	for (size_t t = 0; t < g->n_tensors; t++)
		if (c->prod[t] >= 0 && c->use[t] < 0)
			c->use[t] = c->step[c->prod[t]];
	return 0;
}

/* ---- which tensors belong in the arena --------------------------------- */

enum { T_OUTSIDE, T_LEFT_OUT, T_ARENA };

/* Bytes of a static plain tensor, or -1. */
static int64_t tensor_bytes(const Gearom__Tensor *x)
{
	int64_t n = 1;
	size_t es = x->dtype == DT_STRING ? 0 : dtype_size(x->dtype);
	if (x->type != GEAROM__TYPE_KIND__TYPE_TENSOR || !es || x->rank < 0)
		return -1;
	for (size_t k = 0; k < x->n_dims; k++)
		if (x->dims[k] < 0 || !mul_nonneg_i64(n, x->dims[k], &n))
			return -1;
	return mul_nonneg_i64(n, (int64_t)es, &n) ? n : -1;
}

static int tensor_class(const PlanCheck *c, int32_t t)
{
	const Gearom__Tensor *x = c->g->tensors[t];
	if (x->kind != GEAROM__TENSOR_KIND__TK_NODE || c->prod[t] < 0 ||
	    c->is_out[t] || x->weight >= 0)
		return T_OUTSIDE;
	return tensor_bytes(x) < 0 ? T_LEFT_OUT : T_ARENA;
}

/* Why tensor t cannot have a block, or NULL if it can. */
static const char *why_outside(const PlanCheck *c, int32_t t)
{
	const Gearom__Tensor *x = c->g->tensors[t];
	if (c->is_out[t])
		return "is an output of the graph (its caller binds it)";
	if (x->weight >= 0)
		return "is a constant";
	if (x->kind != GEAROM__TENSOR_KIND__TK_NODE || c->prod[t] < 0)
		return "is not made by a node of the graph";
	if (tensor_bytes(x) < 0)
		return "has no static shape";
	return NULL;
}

/* ---- blocks --------------------------------------------------------------- */

static int check_place(const PlanCheck *c, const char *what,
		       const Gearom__MemBlock *b)
{
	uint64_t arena = c->p->arena_bytes;
	if (b->offset % MEM_ALIGN)
		return verr(c, "%s: offset %llu is not a multiple of %d", what,
			    (unsigned long long)b->offset, MEM_ALIGN);
	if (b->size % MEM_ALIGN)
		return verr(c, "%s: size %llu is not a multiple of %d", what,
			    (unsigned long long)b->size, MEM_ALIGN);
	if (b->size > arena || b->offset > arena - b->size)
		return verr(c, "%s: bytes [%llu,%llu) lie past the end of the "
			    "%llu-byte arena", what,
			    (unsigned long long)b->offset,
			    (unsigned long long)(b->offset + b->size),
			    (unsigned long long)arena);
	if (b->first < 0 || b->last < b->first ||
	    (size_t)b->last >= c->g->n_nodes)
		return verr(c, "%s: lifetime [%d,%d] is not within the %zu "
			    "steps", what, b->first, b->last, c->g->n_nodes);
	return 0;
}

static int check_tensor_block(PlanCheck *c, size_t k)
{
	const Gearom__MemBlock *b = c->p->blocks[k];
	int32_t t = b->tensor;
	const Gearom__Tensor *x = c->g->tensors[t];
	char what[300];
	snprintf(what, sizeof(what), "tensor '%s'", x->name);
	if (c->blk[t] >= 0)
		return verr(c, "%s has two blocks", what);
	c->blk[t] = (int32_t)k;
	const char *why = why_outside(c, t);
	if (why)
		return verr(c, "%s has a block in the arena but %s", what, why);
	if (check_place(c, what, b) < 0)
		return -1;
	int64_t bytes = tensor_bytes(x);
	if (b->size < (uint64_t)bytes)
		return verr(c, "%s needs %lld bytes, its block has %llu", what,
			    (long long)bytes, (unsigned long long)b->size);
	int32_t p = c->prod[t];
	if (b->first != c->step[p])
		return verr(c, "%s: the plan starts its life at step %d, its "
			    "producer '%s' runs at step %d", what, b->first,
			    NNAME(c, p), c->step[p]);
	if (b->last < c->use[t])
		return verr(c, "%s: the plan ends its life at step %d, but "
			    "node '%s' reads it at step %d", what, b->last,
			    NNAME(c, c->user[t]), c->use[t]);
	return 0;
}

/* The largest arena among node n's subgraphs; *name the subgraph's. */
static uint64_t subgraph_need(const PlanCheck *c, const Gearom__Node *n,
			      const char **name)
{
	uint64_t need = 0;
	size_t nsubs;
	int32_t *subs = subgraphs_of(n, &nsubs);
	for (size_t j = 0; j < nsubs; j++) {
		const Gearom__Graph *s = c->m->graphs[subs[j]];
		if (s->plan && s->plan->arena_bytes > need) {
			need = s->plan->arena_bytes;
			*name = s->name;
		}
	}
	free(subs);
	return need;
}

static int check_workspace(PlanCheck *c, const Gearom__MemBlock *b, bool *seen)
{
	const Gearom__Node *n = c->g->nodes[b->node];
	char what[300];
	const char *sub = "";
	snprintf(what, sizeof(what), "the workspace of node '%s'", n->name);
	if (seen[b->node])
		return verr(c, "node '%s' has two workspaces", n->name);
	seen[b->node] = true;
	if (check_place(c, what, b) < 0)
		return -1;
	if (b->first != c->step[b->node] || b->last != b->first)
		return verr(c, "%s lives [%d,%d], not at the node's step %d",
			    what, b->first, b->last, c->step[b->node]);
	uint64_t need = subgraph_need(c, n, &sub);
	if (b->size < need)
		return verr(c, "%s has %llu bytes, its subgraph '%s' needs %llu",
			    what, (unsigned long long)b->size, sub,
			    (unsigned long long)need);
	return 0;
}

/* Every node running subgraphs that need arena bytes has a workspace. */
static int check_workspaces_present(const PlanCheck *c, const bool *seen)
{
	for (size_t i = 0; i < c->g->n_nodes; i++) {
		const Gearom__Node *n = c->g->nodes[i];
		const char *sub = "";
		if (is_case(n) || seen[i])
			continue;
		uint64_t need = subgraph_need(c, n, &sub);
		if (need)
			return verr(c, "node '%s' runs subgraph '%s' (a %llu-byte "
				    "arena) but has no workspace", n->name, sub,
				    (unsigned long long)need);
	}
	return 0;
}

/* The tensor owning t's buffer: t itself, its alias_of, or -1 if t has
 * no block. */
static int32_t owner_of(const PlanCheck *c, int32_t t)
{
	if (t < 0 || c->blk[t] < 0)
		return -1;
	int32_t a = c->p->blocks[c->blk[t]]->alias_of;
	return a >= 0 ? a : t;
}

static int check_view(const PlanCheck *c, const Gearom__MemBlock *b)
{
	int32_t t = b->tensor, r = b->alias_of;
	const Gearom__Node *n = c->g->nodes[c->prod[t]];
	int op = op_lookup(n->domain, n->op_type);
	if (op_info[op].view != VIEW_ALIAS)
		return verr(c, "tensor '%s' is a view of '%s', but its producer "
			    "'%s' (%s) is not a view op", TNAME(c, t),
			    TNAME(c, r), n->name, n->op_type);
	int32_t in = n->n_inputs ? n->inputs[0] : -1;
	if (owner_of(c, in) != r)
		return verr(c, "tensor '%s' is a view of '%s', but its producer "
			    "'%s' reads '%s'", TNAME(c, t), TNAME(c, r),
			    n->name, in >= 0 ? TNAME(c, in) : "nothing");
	return 0;
}

/* Tensors a and t have the same dtype and shape. */
static bool same_tensor_type(const PlanCheck *c, int32_t a, int32_t t)
{
	const Gearom__Tensor *x = c->g->tensors[a], *y = c->g->tensors[t];
	return x->dtype == y->dtype && x->rank == y->rank &&
	       x->n_dims == y->n_dims &&
	       (!x->n_dims ||
		!memcmp(x->dims, y->dims, x->n_dims * sizeof(int64_t)));
}

/* The tensors of each buffer by producer's step, each with the latest
 * read of any tensor of the buffer made before it or at its step: one
 * binary search tells whether a buffer is still read after a step. */
typedef struct Member {
	int32_t owner, step, tensor;
	int32_t reader; /* the tensor read last among this one and those
			 * before it (same buffer) */
} Member;

static int cmp_member(const void *x, const void *y)
{
	const Member *a = x, *b = y;
	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	return (a->tensor > b->tensor) - (a->tensor < b->tensor);
}

static void index_members(PlanCheck *c)
{
	size_t n = 0, nt = c->g->n_tensors + 1;
	c->mem = xmalloc((c->p->n_blocks + 1) * sizeof(Member));
	c->mem_at = xmalloc(nt * sizeof(int32_t));
	c->mem_len = xcalloc(nt, sizeof(int32_t));
	for (size_t k = 0; k < c->p->n_blocks; k++) {
		int32_t t = c->p->blocks[k]->tensor;
		if (t >= 0 && c->blk[t] == (int32_t)k)
			c->mem[n++] = (Member){ owner_of(c, t),
						c->step[c->prod[t]], t, t };
	}
	qsort(c->mem, n, sizeof(Member), cmp_member);
	for (size_t i = 0; i < n; i++) {
		Member *x = &c->mem[i];
		if (!i || x[-1].owner != x->owner) {
			c->mem_at[x->owner] = (int32_t)i;
		} else if (c->use[x[-1].reader] > c->use[x->tensor]) {
			x->reader = x[-1].reader;
		}
		c->mem_len[x->owner]++;
	}
}

/* The tensor of buffer r made before step s that is read last; -1. */
static int32_t last_read_before(const PlanCheck *c, int32_t r, int32_t s)
{
	const Member *v = c->mem + (c->mem_len[r] ? c->mem_at[r] : 0);
	int32_t lo = 0, hi = c->mem_len[r]; /* first member made at >= s */
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (v[mid].step < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? v[lo - 1].reader : -1;
}

static int check_inplace(const PlanCheck *c, const Gearom__MemBlock *b)
{
	int32_t t = b->tensor, r = b->alias_of, s = b->first;
	const Gearom__Node *n = c->g->nodes[c->prod[t]];
	int op = op_lookup(n->domain, n->op_type);
	int32_t over = -1, seen = -1;
	for (size_t k = 0; k < n->n_inputs; k++) {
		int32_t in = n->inputs[k];
		if (owner_of(c, in) != r)
			continue;
		if (seen >= 0 && in != seen)
			return verr(c, "tensor '%s' overwrites the buffer of '%s' "
				    "in place, but '%s' reads two tensors of it",
				    TNAME(c, t), TNAME(c, r), n->name);
		if (op > 0 && op_info[op].inplace == INPLACE_DATA && k)
			return verr(c, "tensor '%s' overwrites the buffer of '%s' "
				    "in place, but '%s' (%s) reads it as input "
				    "%zu after writing", TNAME(c, t), TNAME(c, r),
				    n->name, n->op_type, k);
		seen = in;
		if (memplan_inplace_ok(op, (int)k) &&
		    same_tensor_type(c, in, t))
			over = in;
	}
	if (over < 0)
		return verr(c, "tensor '%s' is marked in place of '%s', but its "
			    "producer '%s' (%s) reads no tensor of that buffer it "
			    "may overwrite", TNAME(c, t), TNAME(c, r), n->name,
			    n->op_type);
	int32_t x = last_read_before(c, r, s);
	if (x >= 0 && c->use[x] > s)
		return verr(c, "tensor '%s' overwrites the buffer of '%s' in "
			    "place at step %d, but node '%s' reads '%s' at "
			    "step %d", TNAME(c, t), TNAME(c, r), s,
			    NNAME(c, c->user[x]), TNAME(c, x), c->use[x]);
	return 0;
}

static int check_sharing(PlanCheck *c)
{
	index_members(c);
	for (size_t k = 0; k < c->p->n_blocks; k++) {
		const Gearom__MemBlock *b = c->p->blocks[k];
		int32_t t = b->tensor, r = b->alias_of;
		if (b->node >= 0 || r < 0)
			continue;
		const Gearom__MemBlock *o = r != t && c->blk[r] >= 0
						    ? c->p->blocks[c->blk[r]]
						    : NULL;
		if (!o || o->alias_of >= 0)
			return verr(c, "tensor '%s' shares the buffer of '%s', "
				    "which does not own one", TNAME(c, t),
				    TNAME(c, r));
		if (b->offset != o->offset || b->size > o->size)
			return verr(c, "tensor '%s' shares the buffer of '%s' "
				    "([%llu,%llu)) but lies at [%llu,%llu)",
				    TNAME(c, t), TNAME(c, r),
				    (unsigned long long)o->offset,
				    (unsigned long long)(o->offset + o->size),
				    (unsigned long long)b->offset,
				    (unsigned long long)(b->offset + b->size));
		if (b->first < o->first || b->last > o->last)
			return verr(c, "tensor '%s' lives [%d,%d], outside the "
				    "buffer of '%s' it shares ([%d,%d])",
				    TNAME(c, t), b->first, b->last, TNAME(c, r),
				    o->first, o->last);
		if ((b->inplace ? check_inplace(c, b) : check_view(c, b)) < 0)
			return -1;
	}
	return 0;
}

/* Per tensor (malloc'd): made from weights alone, by a node the runtime
 * runs once when it opens the file (passes/constwork.h), so the plan may
 * leave it out of the arena.  The nodes in the plan's (checked) order. */
static bool *made_once(const PlanCheck *c)
{
	bool *once = xcalloc(c->g->n_tensors + 1, sizeof(bool));
	for (size_t s = 0; s < c->p->n_order; s++) {
		const Gearom__Node *n = c->g->nodes[c->p->order[s]];
		size_t nsub, nin = 0;
		free(subgraphs_of(n, &nsub));
		bool ok = !nsub &&
			  constwork_op(op_lookup(n->domain, n->op_type));
		for (size_t k = 0; k < n->n_inputs; k++) {
			int32_t t = n->inputs[k];
			if (t < 0)
				continue;
			nin++;
			ok &= c->g->tensors[t]->weight >= 0 || once[t];
		}
		for (size_t k = 0; k < n->n_outputs; k++)
			if (n->outputs[k] >= 0)
				once[n->outputs[k]] = ok && nin;
	}
	return once;
}

/* Every tensor that belongs in the arena is there; the plan's count of
 * tensors left out is right. */
static int check_complete(const PlanCheck *c)
{
	uint32_t left = 0;
	bool *once = made_once(c);
	for (size_t t = 0; t < c->g->n_tensors; t++) {
		int cls = tensor_class(c, (int32_t)t);
		left += cls == T_LEFT_OUT;
		if (cls != T_ARENA || c->blk[t] >= 0 || once[t])
			continue;
		const Gearom__Node *n = c->g->nodes[c->prod[t]];
		int32_t in = n->n_inputs ? n->inputs[0] : -1;
		if (op_info[op_lookup(n->domain, n->op_type)].view ==
			    VIEW_ALIAS &&
		    owner_of(c, in) < 0)
			continue; /* a view of something outside the arena */
		free(once);
		return verr(c, "tensor '%s' (made by '%s') has no place in "
			    "the arena", TNAME(c, (int32_t)t), n->name);
	}
	free(once);
	if (left != c->p->unplanned)
		return verr(c, "the plan counts %u tensors left out of the "
			    "arena, the graph has %u", c->p->unplanned, left);
	return 0;
}

/* ---- overlap and figures ------------------------------------------------- */

typedef struct Buf {
	uint64_t off, end;
	int32_t first, last, block;
} Buf;

static int cmp_buf(const void *x, const void *y)
{
	const Buf *a = x, *b = y;
	if (a->off != b->off)
		return a->off < b->off ? -1 : 1;
	return (a->block > b->block) - (a->block < b->block);
}

static void block_name(const PlanCheck *c, const Gearom__MemBlock *b, char *buf,
		       size_t n)
{
	if (b->node >= 0)
		snprintf(buf, n, "the workspace of node '%s'",
			 NNAME(c, b->node));
	else
		snprintf(buf, n, "'%s'", TNAME(c, b->tensor));
}

static int overlap_error(const PlanCheck *c, const Buf *x, const Buf *y)
{
	const Gearom__MemBlock *a = c->p->blocks[x->block],
			       *b = c->p->blocks[y->block];
	char na[300], nb[300];
	block_name(c, a, na, sizeof(na));
	block_name(c, b, nb, sizeof(nb));
	const char *what = a->node < 0 && b->node < 0 ? "tensors " : "";
	return verr(c, "%s%s and %s are live together at step %d and overlap "
		    "in the arena ([%llu,%llu) and [%llu,%llu))", what, na, nb,
		    x->first > y->first ? x->first : y->first,
		    (unsigned long long)x->off, (unsigned long long)x->end,
		    (unsigned long long)y->off, (unsigned long long)y->end);
}

/* By first step, then offset. */
static int cmp_buf_first(const void *x, const void *y)
{
	const Buf *a = x, *b = y;
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return cmp_buf(x, y);
}

/* The buffers bufs[0..n) ordered by last step: by_last[0..n). */
static void buffers_by_last(const Buf *bufs, size_t n, int32_t *by_last)
{
	size_t steps = 0;
	for (size_t i = 0; i < n; i++)
		if ((size_t)bufs[i].last + 1 > steps)
			steps = (size_t)bufs[i].last + 1;
	size_t *at = xcalloc(steps + 1, sizeof(size_t));
	for (size_t i = 0; i < n; i++)
		at[bufs[i].last + 1]++;
	for (size_t s = 1; s <= steps; s++)
		at[s] += at[s - 1];
	for (size_t i = 0; i < n; i++)
		by_last[at[bufs[i].last]++] = (int32_t)i;
	free(at);
}

static OrdKey buf_key(const Buf *b)
{
	return (OrdKey){ b->off, (uint64_t)b->block };
}

/* Buffers (blocks owning their bytes), swept by step: the live ones by
 * offset, each new one against its neighbours there (the live set being
 * disjoint so far, only they can overlap it). */
static int check_overlap(const PlanCheck *c, Buf *bufs, size_t *nbufs)
{
	size_t n = 0;
	for (size_t k = 0; k < c->p->n_blocks; k++) {
		const Gearom__MemBlock *b = c->p->blocks[k];
		if (b->alias_of < 0)
			bufs[n++] = (Buf){ b->offset, b->offset + b->size,
					   b->first, b->last, (int32_t)k };
	}
	*nbufs = n;
	qsort(bufs, n, sizeof(*bufs), cmp_buf_first);
	int32_t *by_last = xmalloc((n + 1) * sizeof(int32_t));
	buffers_by_last(bufs, n, by_last);
	OrdSet live;
	ordset_init(&live, (int32_t)n);
	int rc = 0;
	for (size_t i = 0, r = 0; i < n && !rc; i++) {
		const Buf *b = &bufs[i];
		for (; r < n && bufs[by_last[r]].last < b->first; r++)
			if (bufs[by_last[r]].end > bufs[by_last[r]].off)
				ordset_remove(&live, by_last[r]);
		if (b->end <= b->off)
			continue;
		int32_t lo = ordset_below(&live, buf_key(b));
		int32_t hi = ordset_above(&live, buf_key(b));
		if (lo >= 0 && bufs[lo].end > b->off)
			rc = overlap_error(c, &bufs[lo], b);
		else if (hi >= 0 && bufs[hi].off < b->end)
			rc = overlap_error(c, b, &bufs[hi]);
		else
			ordset_insert(&live, (int32_t)i, buf_key(b), 0);
	}
	ordset_release(&live);
	free(by_last);
	return rc;
}

static int check_figures(const PlanCheck *c, const Buf *bufs, size_t n)
{
	size_t steps = c->g->n_nodes + 1;
	uint64_t *in = xcalloc(steps, sizeof(uint64_t)), most = 0, naive = 0;
	uint64_t *out = xcalloc(steps, sizeof(uint64_t)), live = 0, top = 0;
	for (size_t i = 0; i < n; i++) { /* lifetimes are within the steps */
		in[bufs[i].first] += bufs[i].end - bufs[i].off;
		out[bufs[i].last + 1] += bufs[i].end - bufs[i].off;
	}
	for (size_t s = 0; s < steps; s++) {
		live = live + in[s] - out[s];
		if (live > most)
			most = live;
	}
	free(in);
	free(out);
	for (size_t k = 0; k < c->p->n_blocks; k++) {
		const Gearom__MemBlock *b = c->p->blocks[k];
		naive += b->size;
		if (b->size && b->offset + b->size > top)
			top = b->offset + b->size;
	}
	if (top != c->p->arena_bytes)
		return verr(c, "the plan records an arena of %llu bytes, its "
			    "blocks reach %llu",
			    (unsigned long long)c->p->arena_bytes,
			    (unsigned long long)top);
	if (most != c->p->lower_bound_bytes)
		return verr(c, "the plan records a lower bound of %llu bytes, "
			    "its blocks give %llu",
			    (unsigned long long)c->p->lower_bound_bytes,
			    (unsigned long long)most);
	if (naive != c->p->naive_bytes)
		return verr(c, "the plan records %llu naive bytes, its blocks "
			    "give %llu", (unsigned long long)c->p->naive_bytes,
			    (unsigned long long)naive);
	return 0;
}

/* ---- one plan -------------------------------------------------------------- */

static int check_blocks(PlanCheck *c, Counts *cnt)
{
	bool *seen = xcalloc(c->g->n_nodes + 1, sizeof(bool));
	int rc = 0;
	for (size_t k = 0; k < c->p->n_blocks && !rc; k++) {
		const Gearom__MemBlock *b = c->p->blocks[k];
		if (b->node >= 0) {
			rc = check_workspace(c, b, seen);
		} else {
			rc = check_tensor_block(c, k);
			cnt->tensors++;
		}
	}
	if (!rc)
		rc = check_workspaces_present(c, seen);
	free(seen);
	return rc;
}

static int check_plan(const Gearom__Model *m, size_t gi, Counts *cnt)
{
	const Gearom__Graph *g = m->graphs[gi];
	PlanCheck c = { .m = m, .g = g, .p = g->plan };
	if (!c.p)
		return error("graph '%s' has no memory plan", g->name);
	size_t nn = g->n_nodes + 1, nt = g->n_tensors + 1;
	c.step = xmalloc(nn * sizeof(int32_t));
	c.prod = xmalloc(nt * sizeof(int32_t));
	c.use = xmalloc(nt * sizeof(int32_t));
	c.user = xmalloc(nt * sizeof(int32_t));
	c.blk = xmalloc(nt * sizeof(int32_t));
	c.is_out = xcalloc(nt, sizeof(bool));
	for (size_t i = 0; i < nn; i++)
		c.step[i] = -1;
	for (size_t i = 0; i < nt; i++)
		c.prod[i] = c.use[i] = c.user[i] = c.blk[i] = -1;
	for (size_t k = 0; k < g->n_outputs; k++)
		c.is_out[g->outputs[k]] = true;
	Buf *bufs = xmalloc((c.p->n_blocks + 1) * sizeof(Buf));
	size_t nbufs = 0;
	int rc = check_order(&c);
	if (!rc)
		rc = check_uses(&c);
	if (!rc)
		rc = check_blocks(&c, cnt);
	if (!rc)
		rc = check_sharing(&c);
	if (!rc)
		rc = check_complete(&c);
	if (!rc)
		rc = check_overlap(&c, bufs, &nbufs);
	if (!rc)
		rc = check_figures(&c, bufs, nbufs);
	free(bufs);
	free(c.step);
	free(c.prod);
	free(c.use);
	free(c.user);
	free(c.blk);
	free(c.is_out);
	free(c.mem);
	free(c.mem_at);
	free(c.mem_len);
	cnt->plans += !rc;
	return rc;
}

/* ---- partitions (passes/partition.h) --------------------------------------- */

static bool is_unknown_partition(const Gearom__Node *n)
{
	char buf[16];
	const char *kind = om_partition_kind(n, buf, sizeof(buf));
	return kind && !strcmp(kind, "unknown");
}

/* Per graph of the file: it runs dynamically (it is an unknown
 * partition's subgraph, or below one); parents come before subgraphs. */
static bool *dynamic_graphs(const Gearom__Model *m)
{
	bool *dyn = xcalloc(m->n_graphs + 1, sizeof(bool));
	for (size_t gi = 0; gi < m->n_graphs; gi++) {
		const Gearom__Graph *g = m->graphs[gi];
		for (size_t i = 0; i < g->n_nodes; i++) {
			size_t nsubs;
			int32_t *subs = subgraphs_of(g->nodes[i], &nsubs);
			bool unk = dyn[gi] || is_unknown_partition(g->nodes[i]);
			for (size_t j = 0; j < nsubs; j++)
				dyn[subs[j]] = unk;
			free(subs);
		}
	}
	return dyn;
}

static bool same_type(const Gearom__Tensor *x, const Gearom__Tensor *y)
{
	return x->dtype == y->dtype && x->rank == y->rank &&
	       x->n_dims == y->n_dims &&
	       (!x->n_dims ||
		!memcmp(x->dims, y->dims, x->n_dims * sizeof(int64_t)));
}

/* Graph s is gi or below it. */
static bool graph_below(const Gearom__Model *m, size_t gi, size_t s)
{
	for (int32_t x = (int32_t)gi; x >= 0; x = m->graphs[x]->parent)
		if ((size_t)x == s)
			return true;
	return false;
}

/* A known partition's subgraph s, and everything below it, holds only
 * static, not data-dependent shapes; s has a plan. */
static int check_known(const Gearom__Model *m, const Gearom__Graph *g,
		       size_t s)
{
	const char *name = m->graphs[s]->name;
	char buf[160];
	if (!m->graphs[s]->plan)
		return error("graph '%s': known partition '%s' has no memory "
			     "plan", g->name, name);
	for (size_t gi = s; gi < m->n_graphs; gi++) {
		if (!graph_below(m, gi, s))
			continue;
		const Gearom__Graph *x = m->graphs[gi];
		for (size_t t = 0; t < x->n_tensors; t++) {
			const Gearom__Tensor *v = x->tensors[t];
			Shape sh = shape_of(v->rank, v->dims);
			if (shape_is_static(&sh) && !(v->flags & VF_DATA_DEP))
				continue;
			return error("graph '%s': known partition '%s' holds "
				     "tensor '%s' of shape %s%s", g->name, name,
				     v->name, shape_str(&sh, buf, sizeof(buf)),
				     v->flags & VF_DATA_DEP
					     ? " (data-dependent)" : "");
		}
	}
	return 0;
}

/* Partition node n (index i of g) and its subgraph. */
static int check_partition(const Gearom__Model *m, const Gearom__Graph *g,
			   const Gearom__Node *n)
{
	char buf[16];
	const char *kind = om_partition_kind(n, buf, sizeof(buf));
	const Gearom__Attribute *f = om_attr(n, PARTITION_GRAPH_ATTR);
	int32_t s = f ? f->g : -1;
	if (strcmp(kind, "known") && strcmp(kind, "unknown"))
		return error("graph '%s': partition '%s' is of kind '%s', not "
			     "known or unknown", g->name, n->name, kind);
	if (s < 0)
		return error("graph '%s': partition '%s' has no subgraph '%s'",
			     g->name, n->name, PARTITION_GRAPH_ATTR);
	const Gearom__Graph *sub = m->graphs[s];
	if (!sub->n_nodes)
		return error("graph '%s': partition '%s' is empty", g->name,
			     n->name);
	if (sub->n_inputs != n->n_inputs || sub->n_outputs != n->n_outputs)
		return error("graph '%s': partition '%s' has %zu inputs and "
			     "%zu outputs, its subgraph '%s' %zu and %zu",
			     g->name, n->name, n->n_inputs, n->n_outputs,
			     sub->name, sub->n_inputs, sub->n_outputs);
	for (size_t k = 0; k < n->n_inputs + n->n_outputs; k++) {
		bool in = k < n->n_inputs;
		size_t j = in ? k : k - n->n_inputs;
		int32_t t = in ? n->inputs[j] : n->outputs[j];
		int32_t u = in ? sub->inputs[j] : sub->outputs[j];
		if (t >= 0 && !same_type(g->tensors[t], sub->tensors[u]))
			return error("graph '%s': partition '%s' %s %zu ('%s') "
				     "is not typed as in its subgraph", g->name,
				     n->name, in ? "input" : "output", j,
				     g->tensors[t]->name);
	}
	if (!strcmp(kind, "known"))
		return check_known(m, g, (size_t)s);
	if (sub->plan)
		return error("graph '%s': unknown partition '%s' runs "
			     "dynamically but has a memory plan", g->name,
			     n->name);
	return 0;
}

/* The partitions of g have no cycle: Kahn's algorithm over "partition j
 * makes a tensor partition i reads". */
static int check_acyclic(const Gearom__Graph *g)
{
	size_t nn = g->n_nodes;
	int32_t *prod = xmalloc((g->n_tensors + 1) * sizeof(int32_t));
	int32_t *indeg = xcalloc(nn + 1, sizeof(int32_t));
	int32_t *queue = xmalloc((nn + 1) * sizeof(int32_t));
	for (size_t t = 0; t < g->n_tensors; t++)
		prod[t] = -1;
	for (size_t i = 0; i < nn; i++)
		for (size_t k = 0; k < g->nodes[i]->n_outputs; k++)
			if (g->nodes[i]->outputs[k] >= 0)
				prod[g->nodes[i]->outputs[k]] = (int32_t)i;
	for (size_t i = 0; i < nn; i++)
		for (size_t k = 0; k < g->nodes[i]->n_inputs; k++) {
			int32_t t = g->nodes[i]->inputs[k];
			indeg[i] += t >= 0 && prod[t] >= 0;
		}
	size_t head = 0, tail = 0;
	for (size_t i = 0; i < nn; i++)
		if (!indeg[i])
			queue[tail++] = (int32_t)i;
	while (head < tail) {
		int32_t j = queue[head++];
		for (size_t i = 0; i < nn; i++)
			for (size_t k = 0; k < g->nodes[i]->n_inputs; k++) {
				int32_t t = g->nodes[i]->inputs[k];
				if (t >= 0 && prod[t] == j && !--indeg[i])
					queue[tail++] = (int32_t)i;
			}
	}
	int rc = 0;
	for (size_t i = 0; i < nn && !rc; i++)
		if (indeg[i])
			rc = error("graph '%s': partition '%s' is on a cycle "
				   "of partitions", g->name, g->nodes[i]->name);
	free(prod);
	free(indeg);
	free(queue);
	return rc;
}

static int check_partitions(const Gearom__Model *m, Counts *cnt)
{
	char buf[16];
	for (size_t gi = 0; gi < m->n_graphs; gi++) {
		const Gearom__Graph *g = m->graphs[gi];
		size_t np = 0;
		for (size_t i = 0; i < g->n_nodes; i++)
			np += om_partition_kind(g->nodes[i], buf,
						sizeof(buf)) != NULL;
		if (!np)
			continue;
		for (size_t i = 0; i < g->n_nodes; i++) {
			const Gearom__Node *n = g->nodes[i];
			if (!om_partition_kind(n, buf, sizeof(buf)))
				return error("graph '%s' is partitioned, but node "
					     "'%s' (%s) is in no partition",
					     g->name, n->name, n->op_type);
			if (check_partition(m, g, n) < 0)
				return -1;
		}
		if (check_acyclic(g) < 0)
			return -1;
		cnt->partitions += (int64_t)np;
	}
	return 0;
}

/* ---- shapes ---------------------------------------------------------------- */

typedef struct Saved {
	Graph *g;
	ValId v;
	int32_t dtype;
	Shape shape;
	const Tensor *konst; /* what inference folded is put back as raised */
	uint16_t flags;
} Saved;

typedef struct Snapshot {
	Saved *s;
	size_t n, cap;
} Snapshot;

/* Records and resets the node outputs of g and of its subgraphs (not the
 * gear branches of a Case: they are checked on their own). */
static void snapshot(Snapshot *sn, Graph *g)
{
	for (ValId v = 0; v < g->nvals; v++) {
		Value *x = &g->vals[v];
		if (x->kind != VAL_NODE || x->producer < 0)
			continue;
		if (sn->n == sn->cap) {
			sn->cap = sn->cap ? 2 * sn->cap : 256;
			sn->s = xrealloc(sn->s, sn->cap * sizeof(Saved));
		}
		sn->s[sn->n++] = (Saved){ g, v, x->dtype, x->shape, x->konst,
					  x->flags };
		x->dtype = DT_UNDEFINED;
		x->shape = shape_unknown();
		x->konst = NULL;
		x->flags &= (uint16_t)~VF_DATA_DEP;
	}
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		for (int32_t k = 0; n->op != OP_Case && k < n->nattrs; k++) {
			Attr *a = &n->attrs[k];
			if (a->type == ATTR_GRAPH && a->g)
				snapshot(sn, a->g);
			for (int32_t j = 0; a->type == ATTR_GRAPHS && j < a->n;
			     j++)
				snapshot(sn, a->graphs[j]);
		}
	}
}

/* The re-inferred dtypes and shapes against the recorded ones; each
 * value then holds what the file raised (its constant, flags), so the
 * model checked is the model the runtime runs. */
static int compare(const Snapshot *sn, Counts *cnt)
{
	char a[160], b[160];
	for (size_t i = 0; i < sn->n; i++) {
		const Saved *s = &sn->s[i];
		Value *x = &s->g->vals[s->v];
		x->konst = s->konst;
		x->flags = s->flags;
		if (x->dtype != s->dtype || !shape_equal(&x->shape, &s->shape))
			return error("graph '%s': node '%s' output '%s': the "
				     "file records %s %s, inference gives %s %s",
				     s->g->name, s->g->nodes[x->producer].name,
				     x->name, dtype_name(s->dtype),
				     shape_str(&s->shape, a, sizeof(a)),
				     dtype_name(x->dtype),
				     shape_str(&x->shape, b, sizeof(b)));
		cnt->shapes++;
	}
	return 0;
}

static int reinfer(Model *m, Graph *g, Counts *cnt)
{
	Snapshot sn = { 0 };
	snapshot(&sn, g);
	int rc = infer_graph(m, g);
	if (rc < 0)
		error_prefix("graph '%s': shape inference on what the file holds",
			     g->name);
	else
		rc = compare(&sn, cnt);
	free(sn.s);
	return rc;
}

/* The clones of a multi-dims scope (passes/scope.h) are the branches of
 * a Case inside a subgraph: each is re-inferred on its own, before the
 * graphs that read their outputs. */
static int reinfer_scope_clones(Model *m, Graph *g, Counts *cnt)
{
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		for (int32_t k = 0; k < n->nattrs; k++) {
			Attr *a = &n->attrs[k];
			bool clones = n->op == OP_Case && g->parent &&
				      a->type == ATTR_GRAPHS;
			for (int32_t j = 0; a->type == ATTR_GRAPHS && j < a->n; j++)
				if (reinfer_scope_clones(m, a->graphs[j], cnt) < 0 ||
				    (clones && reinfer(m, a->graphs[j], cnt) < 0))
					return -1;
			if (a->type == ATTR_GRAPH && a->g &&
			    reinfer_scope_clones(m, a->g, cnt) < 0)
				return -1;
		}
	}
	return 0;
}

/* The dim_params of every value of g and below, in walk order. */
typedef struct Names {
	const char ***dp;
	size_t n, cap;
} Names;

static int save_names(Graph *g, void *ctx)
{
	Names *nm = ctx;
	for (ValId v = 0; v < g->nvals; v++) {
		if (nm->n == nm->cap) {
			nm->cap = nm->cap ? 2 * nm->cap : 256;
			nm->dp = xrealloc(nm->dp, nm->cap * sizeof(*nm->dp));
		}
		nm->dp[nm->n++] = g->vals[v].dim_params;
	}
	return 0;
}

typedef struct NameCheck {
	const Names *saved;
	size_t at;
} NameCheck;

static bool same_name(const char *a, const char *b)
{
	return (!a || !*a) ? (!b || !*b) : b && !strcmp(a, b);
}

static int check_names(Graph *g, void *ctx)
{
	NameCheck *nc = ctx;
	for (ValId v = 0; v < g->nvals; v++) {
		const Value *x = &g->vals[v];
		const char **was = nc->saved->dp[nc->at++];
		for (int32_t k = 0; k < x->shape.rank; k++) {
			const char *a = was ? was[k] : NULL;
			const char *b = x->dim_params ? x->dim_params[k] : NULL;
			if (!same_name(a, b))
				return error("graph '%s': tensor '%s' dim %d: the "
					     "file names it '%s', the symbolic "
					     "walk '%s'", g->name, x->name, k,
					     a ? a : "", b ? b : "");
		}
	}
	return 0;
}

/* The dynamic graph of a --hybrid file: inference, then the symbolic
 * walk (passes/hybrid.h), must give the shapes and dim names recorded. */
static int reinfer_dynamic(Model *m, Graph *g, Counts *cnt)
{
	Names saved = { 0 };
	Snapshot sn = { 0 };
	graph_walk(g, save_names, &saved);
	snapshot(&sn, g);
	int rc = infer_graph(m, g);
	if (rc < 0) {
		error_prefix("graph '%s': shape inference on what the file "
			     "holds", g->name);
	} else {
		hybrid_symbols(g, hybrid_opset(m));
		rc = compare(&sn, cnt);
	}
	NameCheck nc = { .saved = &saved };
	if (!rc)
		rc = graph_walk(g, check_names, &nc);
	free(sn.s);
	free(saved.dp);
	return rc;
}

/* Shapes re-inferred on m, the file raised: every static graph, the gear
 * branches only if gears (else verify_gear checks each). */
static int check_shapes(Model *m, bool gears, Counts *cnt)
{
	int rc = reinfer_scope_clones(m, m->graph, cnt);
	for (int32_t i = 0; gears && m->gears && i < m->gears->ngears && !rc;
	     i++)
		if (m->branches[i])
			rc = reinfer(m, m->branches[i], cnt);
	if (!rc && hybrid_graph(m->graph))
		rc = reinfer_dynamic(m, hybrid_graph(m->graph), cnt);
	if (!rc)
		rc = reinfer(m, m->graph, cnt);
	return rc;
}

/* ---- the gear table against the graphs -------------------------------- */

/* The Case choosing the gear branches: its branches are the gears'.
 * A file written before the table was stored once has the Case state it
 * again (gear_count, gear_dims: the gears' dims, row by row): it must
 * agree. */
static int check_case_table(const Gearom__Model *m, const Gearom__Node *n)
{
	const Gearom__Attribute *cnt = om_attr(n, CASE_GEAR_COUNT_ATTR);
	const Gearom__Attribute *dims = om_attr(n, CASE_GEAR_DIMS_ATTR);
	const Gearom__Attribute *br = om_attr(n, CASE_BRANCHES_ATTR);
	size_t at = 0;
	if (cnt && cnt->i != (int64_t)m->n_gears)
		return error("node '%s': gear_count %lld, the gear table has "
			     "%zu gears", n->name, (long long)cnt->i,
			     m->n_gears);
	if (br->n_graphs != m->n_gears)
		return error("node '%s': %zu branches for %zu gears", n->name,
			     br->n_graphs, m->n_gears);
	for (size_t g = 0; g < m->n_gears; g++) {
		const Gearom__Gear *x = m->gears[g];
		if (x->graph != br->graphs[g])
			return error("node '%s': branch %zu is graph %d, gear "
				     "%zu's is %d", n->name, g, br->graphs[g],
				     g, x->graph);
		for (size_t k = 0; dims && k < x->n_dims; k++, at++)
			if (at >= dims->n_ints || dims->ints[at] != x->dims[k])
				return error("node '%s': gear_dims disagree "
					     "with gear %zu's dims", n->name, g);
	}
	if (dims && at != dims->n_ints)
		return error("node '%s': gear_dims has %zu values, the gears "
			     "%zu", n->name, dims->n_ints, at);
	return 0;
}

/* ---- the input/output table against the graphs that run ---------------- */

/* Among g's tensors v[0..n), the one named name; NULL if none. */
static const Gearom__Tensor *io_named(const Gearom__Graph *g,
				      const int32_t *v, size_t n,
				      const char *name)
{
	for (size_t k = 0; k < n; k++)
		if (!strcmp(g->tensors[v[k]]->name, name))
			return g->tensors[v[k]];
	return NULL;
}

/* The model's input or output io as graph tensor x: a plain tensor of
 * its dtype and rank, with the dims want (the gear's shape, or the
 * table's), a -1 of want (an output the table leaves open) taking any
 * dim, and a -1 where the table has one (a graph run at the caller's
 * dims, or the dynamic graph) taking any want. */
static int io_agrees(const char *what, const Gearom__IoInfo *io,
		     const Gearom__Tensor *x, int32_t rank,
		     const int64_t *want)
{
	char a[160], b[160];
	Shape xs = shape_of(x->rank, x->dims), ws = shape_of(rank, want);
	bool ok = x->type == GEAROM__TYPE_KIND__TYPE_TENSOR &&
		  x->dtype == io->dtype && (rank < 0 || x->rank == rank);
	for (int32_t d = 0; ok && rank >= 0 && d < rank; d++)
		ok = x->dims[d] == want[d] || want[d] == -1 ||
		     (x->dims[d] == -1 && io->rank == rank &&
		      io->shape[d] == -1);
	if (ok)
		return 0;
	return error("%s '%s' is %s%s %s, the file's I/O table says %s %s",
		     what, io->name,
		     x->type == GEAROM__TYPE_KIND__TYPE_TENSOR ? "" : "not a "
		     "plain tensor but ", dtype_name(x->dtype),
		     shape_str(&xs, a, sizeof(a)), dtype_name(io->dtype),
		     shape_str(&ws, b, sizeof(b)));
}

/* What the runtime relies on when it binds the caller's tensors to graph
 * gi, which runs for gear x (NULL: a static file's root, or the dynamic
 * graph): its inputs and outputs are the model's, one to one by name,
 * each as io_agrees says, at the gear's shapes. */
static int check_run_io(const Gearom__Model *m, int32_t gi,
			const Gearom__Gear *x)
{
	const Gearom__Graph *g = m->graphs[gi];
	if (g->n_inputs != m->n_inputs || g->n_outputs != m->n_outputs)
		return error("graph '%s' has %zu inputs and %zu outputs, the "
			     "model %zu and %zu", g->name, g->n_inputs,
			     g->n_outputs, m->n_inputs, m->n_outputs);
	for (size_t i = 0; i < m->n_inputs + m->n_outputs; i++) {
		bool in = i < m->n_inputs;
		size_t k = in ? i : i - m->n_inputs;
		const Gearom__IoInfo *io = in ? m->inputs[k] : m->outputs[k];
		const Gearom__Tensor *t =
			in ? io_named(g, g->inputs, g->n_inputs, io->name)
			   : io_named(g, g->outputs, g->n_outputs, io->name);
		const Gearom__ShapeInfo *s = NULL;
		for (size_t j = 0; x && in && j < x->n_inputs && !s; j++)
			if (!strcmp(x->inputs[j]->name, io->name))
				s = x->inputs[j];
		if (x && !in && k < x->n_outputs)
			s = x->outputs[k];
		if (!t)
			return error("graph '%s' has no %s '%s'", g->name,
				     in ? "input" : "output", io->name);
		if (io_agrees(in ? "input" : "output", io, t,
			      s ? s->rank : io->rank, s ? s->dims : io->shape) < 0)
			return error_prefix("graph '%s'", g->name);
	}
	return 0;
}

/* The graph the root's Case runs for inputs that match no gear, or -1. */
static int32_t dynamic_graph(const Gearom__Model *m)
{
	const Gearom__Graph *root = m->graphs[m->root];
	for (size_t i = 0; i < root->n_nodes; i++) {
		const Gearom__Attribute *a = om_attr(root->nodes[i],
						     HYBRID_GRAPH_ATTR);
		if (is_case(root->nodes[i]) && a && a->g >= 0)
			return a->g;
	}
	return -1;
}

/* Every graph a run can start at: each gear's branch (or the root), the
 * dynamic graph, or a static file's root. */
static int check_io_table(const Gearom__Model *m, Counts *cnt)
{
	int32_t dyn = dynamic_graph(m);
	if (!m->n_gears) {
		cnt->io++;
		return check_run_io(m, m->root, NULL);
	}
	bool root = false;
	for (size_t k = 0; k < m->n_gears; k++) {
		const Gearom__Gear *x = m->gears[k];
		cnt->io += x->graph >= 0 || !root;
		root |= x->graph < 0;
		if (check_run_io(m, x->graph >= 0 ? x->graph : m->root, x) < 0)
			return error_prefix("gear %zu", k);
	}
	cnt->io += dyn >= 0;
	return dyn >= 0 ? check_run_io(m, dyn, NULL) : 0;
}

/* One Case of the root chooses the gear branches: it must agree with
 * the gear table. */
static int check_gears(const Gearom__Model *m)
{
	const Gearom__Graph *root = m->graphs[m->root];
	const Gearom__Node *table = NULL;
	for (size_t i = 0; i < root->n_nodes && m->n_gears; i++) {
		const Gearom__Node *n = root->nodes[i];
		if (!is_case(n) || !om_attr(n, CASE_BRANCHES_ATTR))
			continue;
		if (table)
			return error("graph '%s': nodes '%s' and '%s' both "
				     "choose gear branches", root->name,
				     table->name, n->name);
		table = n;
		if (check_case_table(m, n) < 0)
			return error_prefix("graph '%s'", root->name);
	}
	return 0;
}

/* ---- command ------------------------------------------------------------- */

/* The plans of every graph, or, with gear_of (om_graph_gears), of those
 * it puts at gear. */
static int check_plans(const OmFile *f, bool verbose, const int32_t *gear_of,
		       int32_t gear, Counts *cnt)
{
	const Gearom__Model *m = f->model;
	bool *dyn = dynamic_graphs(m);
	for (size_t gi = 0; gi < m->n_graphs; gi++) {
		if (dyn[gi] || (gear_of && gear_of[gi] != gear))
			continue; /* runs dynamically: check_partitions */
		if (check_plan(m, gi, cnt) < 0) {
			free(dyn);
			return -1;
		}
		const Gearom__MemoryPlan *p = m->graphs[gi]->plan;
		if (verbose) {
			const char *name = m->graphs[gi]->name;
			char *e = str_escape(name, strlen(name), ESC_CONTROLS,
					     NULL);
			printf("graph '%s': plan ok: %zu blocks, arena %llu "
			       "bytes, lower bound %llu\n",
			       e, p->n_blocks,
			       (unsigned long long)p->arena_bytes,
			       (unsigned long long)p->lower_bound_bytes);
			free(e);
		}
	}
	free(dyn);
	return 0;
}

int verify_plans(const OmFile *f)
{
	Counts cnt = { 0 };
	return check_plans(f, false, NULL, -1, &cnt);
}

/* Every check but the shapes, in this order; with gear_of, the plans of
 * the graphs under no gear branch only. */
static int check_tables(const OmFile *f, bool verbose, const int32_t *gear_of,
			Counts *cnt)
{
	const Gearom__Model *m = f->model;
	if (check_plans(f, verbose, gear_of, -1, cnt) < 0 || check_gears(m) < 0 ||
	    check_io_table(m, cnt) < 0 || check_partitions(m, cnt) < 0)
		return -1;
	return 0;
}

/* Every check, the file raised once for the shapes': 0, or -1 with the
 * first violation. */
static int check_file(const OmFile *f, bool verbose, Counts *cnt)
{
	if (check_tables(f, verbose, NULL, cnt) < 0)
		return -1;
	Model *m = om_to_model(f);
	if (!m)
		return -1;
	int rc = check_shapes(m, true, cnt);
	model_free(m);
	return rc;
}

int verify_file(const OmFile *f)
{
	Counts cnt = { 0 };
	return check_file(f, false, &cnt);
}

/* verify_open's checks on the open f: the model in *m, and with lazy the
 * gears' own checks left to verify_gear. */
static int open_checked(const OmFile *f, OmRaise **lazy, Model **m)
{
	Counts cnt = { 0 };
	int32_t *gear_of = lazy ? om_graph_gears(f->model) : NULL;
	int rc = check_tables(f, false, gear_of, &cnt);
	free(gear_of);
	if (rc < 0)
		return -1;
	*m = lazy ? om_to_model_lazy(f, lazy) : om_to_model(f);
	if (!*m || check_shapes(*m, !lazy, &cnt) == 0)
		return *m ? 0 : -1;
	model_free(*m);
	*m = NULL;
	if (lazy) {
		om_raise_free(*lazy);
		*lazy = NULL;
	}
	return -1;
}

/* open_checked on f, just opened as name: closed on failure. */
static int checked(OmFile *f, const char *name, OmRaise **lazy, Model **m)
{
	if (open_checked(f, lazy, m) < 0) {
		om_close(f);
		return error_prefix("%s", name);
	}
	return 0;
}

int verify_open(OmFile *f, const char *path, OmRaise **lazy, Model **m)
{
	*m = NULL;
	return om_open_readonly(f, path) < 0 ? -1 : checked(f, path, lazy, m);
}

int verify_open_memory(OmFile *f, const void *data, size_t size,
		       const char *name, OmRaise **lazy, Model **m)
{
	*m = NULL;
	return om_open_memory(f, data, size, name) < 0
		       ? -1
		       : checked(f, name, lazy, m);
}

int verify_gear(const OmFile *f, OmRaise *r, Model *m, size_t g)
{
	Counts cnt = { 0 };
	size_t n = m->gears ? (size_t)m->gears->ngears : 0;
	Graph *b = g < n ? m->branches[g] : NULL;
	if (g < n && !b) /* the gear runs the root, whose Case may take any */
		for (size_t k = 0; k < n; k++)
			if (m->branches[k] && verify_gear(f, r, m, k) < 0)
				return -1;
	if (!b)
		return 0;
	int32_t *gear_of = om_graph_gears(f->model);
	int rc = check_plans(f, false, gear_of,
			     gear_of[f->model->gears[g]->graph], &cnt);
	free(gear_of);
	if (rc < 0 || om_raise_gear(r, g) < 0 ||
	    reinfer_scope_clones(m, b, &cnt) < 0)
		return -1;
	return reinfer(m, b, &cnt);
}

int verify_print(const OmFile *f, bool verbose, bool quiet)
{
	const Gearom__Model *m = f->model;
	Counts cnt = { .graphs = (int64_t)m->n_graphs };
	if (check_file(f, verbose, &cnt) < 0)
		return -1;
	if (quiet) /* --quiet: the exit status says it */
		return 0;
	printf("verify: %lld graphs, ", (long long)cnt.graphs);
	if (cnt.partitions)
		printf("%lld partitions, ", (long long)cnt.partitions);
	printf("%lld plans (%lld tensors), I/O table against %lld graphs, "
	       "%lld shapes: ok\n", (long long)cnt.plans,
	       (long long)cnt.tensors, (long long)cnt.io,
	       (long long)cnt.shapes);
	return 0;
}
