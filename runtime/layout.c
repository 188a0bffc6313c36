/*
 * runtime/layout.c - which tensors of a prepared graph are channels-last.
 *
 * oneDNN's convolutions compute in NHWC here (their primitives choose it
 * for fp32 on AVX-512), so a tensor kept row-major (NCHW) between two of
 * them costs a reorder out and a reorder in.  Once every task of a gear
 * is matched to its kernel's registry row, before any kernel is built
 * (runtime/fast.c), this file decides, per rank-4 float tensor, which
 * layout its bytes hold, the way ONNX Runtime's NCHWc transformer
 * rewrites a session's graph, but once per gear at prepare time:
 *
 *   - tensors joined by a task that needs one layout for them form a
 *     component (union-find): the input and output of an elementwise op
 *     (the op table's ew column; same shapes, or a one-element operand:
 *     any kernel computes element i from element i, whatever the order),
 *     and the slots a kernel's match groups together (rt.h SlotLayout: a
 *     pooling's X and Y, a per-channel Mul's X and Y, a view's X and Y
 *     of one shape);
 *   - a component stays row-major if any of its tensors is a graph
 *     input, evaluated, or touched by a task that cannot take NHWC (its
 *     registry row takes LAY_ROWS alone: a reshaping view, a softmax; a
 *     reference kernel other than an elementwise one), or shares a
 *     task's layout with a row-major value (a weight of its shape, an
 *     integer tensor);
 *   - else it is NHWC if that spares convolutions more reorders (slots
 *     preferring NHWC) than it costs graph outputs, each then computed
 *     in a buffer of its own and reordered into the caller's once, at
 *     delivery (rt_nhwc_to_rows; ONNX Runtime's NCHWc transformer puts
 *     such a reorder before each output).
 *
 * A task whose fast kernel keeps its tensors row-major where a later
 * registry row would take NHWC (direct.conv before dnnl.conv) does not
 * hold its component row-major by itself: decide() first moves it to
 * that row, and back where its tensors all end row-major.
 *
 * A tensor whose spatial size is 1 ([N,C,1,1]) has the same bytes either
 * way and is left out.  A graph holding subgraphs keeps every tensor
 * row-major (a subgraph may read any of them).  Then every kernel is
 * built for the layouts decided (rt_kernel_build, rt_nhwc).
 */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

typedef struct Comp {
	int32_t *up;	/* union-find parent per value */
	uint8_t *plain; /* per root: must stay row-major */
	int32_t *gain;	/* per root: the reorders NHWC spares kernels */
	int32_t *cost;	/* per root: the graph outputs reordered if NHWC */
} Comp;

static int32_t find(Comp *c, int32_t v)
{
	while (c->up[v] != v)
		v = c->up[v] = c->up[c->up[v]];
	return v;
}

static void join(Comp *c, int32_t a, int32_t b)
{
	a = find(c, a), b = find(c, b);
	if (a == b)
		return;
	c->up[b] = a;
	c->plain[a] |= c->plain[b];
	c->gain[a] += c->gain[b];
	c->cost[a] += c->cost[b];
}

/* A value whose bytes have a layout to speak of: a static rank-4
 * tensor of spatial size above 1 ([N,C,1,1] reads the same either
 * way). */
static bool laid_out(const Prepared *p, ValId v)
{
	if (v < 0)
		return false;
	const Value *x = &p->g->vals[v];
	return x->tkind == TK_TENSOR && x->shape.rank == 4 &&
	       shape_is_static(&x->shape) &&
	       x->shape.dims[2] * x->shape.dims[3] > 1;
}

/* One whose layout is to be decided here: a planned float or 8-bit
 * integer (QLinearConv's) tensor of a node.  Any other laid-out value (a
 * weight, a graph input, another integer tensor) is row-major, and so
 * are the slots that share its layout. */
static bool candidate(const Prepared *p, ValId v)
{
	const Value *x = v >= 0 ? &p->g->vals[v] : NULL;
	return laid_out(p, v) && x->kind == VAL_NODE &&
	       (x->dtype == DT_FLOAT || x->dtype == DT_UINT8 ||
		x->dtype == DT_INT8) &&
	       p->cur[v] == &p->vt[v];
}

static ValId slot_val(const Node *n, int slot)
{
	if (slot >= 0)
		return slot < n->ninputs ? n->inputs[slot] : -1;
	return -1 - slot < n->noutputs ? n->outputs[-1 - slot] : -1;
}

static void force_plain(Comp *c, const Prepared *p, const Node *n)
{
	for (int slot = -n->noutputs; slot < n->ninputs; slot++) {
		ValId v = slot_val(n, slot);
		if (candidate(p, v))
			c->plain[find(c, v)] = 1;
	}
}

/* Elementwise (the op table's ew column) with one output whose shape
 * every other input has or has one element of. */
static bool elementwise(const Prepared *p, const Node *n)
{
	if (op_info[n->op].ew == EW_KIND_NONE || n->noutputs != 1 ||
	    n->outputs[0] < 0)
		return false;
	const Shape *y = &p->g->vals[n->outputs[0]].shape;
	for (int32_t k = 0; k < n->ninputs; k++) {
		const Value *x = n->inputs[k] >= 0 ? &p->g->vals[n->inputs[k]]
						   : NULL;
		if (x && !shape_equal(&x->shape, y) &&
		    (!shape_is_static(&x->shape) ||
		     shape_numel(&x->shape) != 1))
			return false;
	}
	return true;
}

static void join_slots(Comp *c, const Prepared *p, const Node *n)
{
	ValId first = -1;
	for (int slot = -n->noutputs; slot < n->ninputs; slot++) {
		ValId v = slot_val(n, slot);
		if (laid_out(p, v) && !candidate(p, v)) {
			force_plain(c, p, n); /* x + a weight of x's shape */
			return;
		}
	}
	for (int slot = -n->noutputs; slot < n->ninputs; slot++) {
		ValId v = slot_val(n, slot);
		if (!candidate(p, v))
			continue;
		if (first < 0)
			first = v;
		else
			join(c, first, v);
	}
}

enum { MAX_GROUPS = 8 };

/* The slots of a kernel whose match recorded their layouts (t->lay), by
 * its groups; a group holding a row-major value (a weight, a graph
 * input) stays row-major. */
static void group_slots(Comp *c, const Prepared *p, const Task *t)
{
	const Node *n = t->n;
	ValId rep[MAX_GROUPS];
	bool pinned[MAX_GROUPS] = { false };
	for (int i = 0; i < MAX_GROUPS; i++)
		rep[i] = -1;
	for (int slot = -n->noutputs; slot < n->ninputs; slot++) {
		ValId v = slot_val(n, slot);
		if (!laid_out(p, v))
			continue;
		bool prefers = rt_slot(t, slot)->prefers;
		int grp = rt_slot(t, slot)->group;
		bool ok = grp > 0 && grp < MAX_GROUPS;
		if (!candidate(p, v)) {
			pinned[ok ? grp : 0] = true;
			continue;
		}
		if (!ok) {
			c->plain[find(c, v)] = 1;
			continue;
		}
		c->gain[find(c, v)] += prefers;
		if (rep[grp] < 0)
			rep[grp] = v;
		else
			join(c, rep[grp], v);
	}
	for (int i = 1; i < MAX_GROUPS; i++)
		if (pinned[i] && rep[i] >= 0)
			c->plain[find(c, rep[i])] = 1;
}

static void classify(Comp *c, const Prepared *p, const Task *t)
{
	if (rt_evaluated(t) || t->seq || !(t->kernel->layouts & LAY_NHWC))
		force_plain(c, p, t->n);
	else if (t->lay)
		group_slots(c, p, t);
	else if (elementwise(p, t->n))
		join_slots(c, p, t->n);
	else
		force_plain(c, p, t->n);
}

static bool holds_subgraphs(const Graph *g)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		if (node_has_subgraphs(&g->nodes[i]))
			return true;
	return false;
}

/* The components of p's tensors. */
static Comp components(const Prepared *p)
{
	const Graph *g = p->g;
	size_t n = (size_t)g->nvals + 1;
	Comp c = { xmalloc(n * sizeof(int32_t)), xcalloc(n, 1),
		   xcalloc(n, sizeof(int32_t)), xcalloc(n, sizeof(int32_t)) };
	for (ValId v = 0; v < g->nvals; v++)
		c.up[v] = v;
	for (int32_t k = 0; k < g->ninputs; k++)
		if (candidate(p, g->inputs[k]))
			c.plain[g->inputs[k]] = 1;
	for (int32_t k = 0; k < g->noutputs; k++)
		if (candidate(p, g->outputs[k]))
			c.cost[g->outputs[k]]++;
	for (int32_t i = 0; i < p->ntasks; i++)
		classify(&c, p, &p->tasks[i]);
	return c;
}

static void comp_free(Comp *c)
{
	free(c->up);
	free(c->plain);
	free(c->gain);
	free(c->cost);
}

static bool comp_nhwc(Comp *c, const Prepared *p, ValId v)
{
	int32_t r = candidate(p, v) ? find(c, v) : -1;
	return r >= 0 && !c->plain[r] && c->gain[r] > c->cost[r];
}

static bool touches_candidate(const Prepared *p, const Task *t)
{
	for (int slot = -t->n->noutputs; slot < t->n->ninputs; slot++)
		if (candidate(p, slot_val(t->n, slot)))
			return true;
	return false;
}

/* Whether t's fast kernel keeps its tensors row-major, so that a later
 * row taking either layout might run it instead (direct.conv, before
 * dnnl.conv).  Not if a later task's match took its kernel in (writes
 * to another output: an activation folded into direct.deconv). */
static bool movable(const Prepared *p, const Task *t)
{
	for (int32_t k = 0; k < t->n->noutputs; k++)
		if (t->out[k] && t->out[k] != &p->vt[t->n->outputs[k]])
			return false;
	return rt_fast(t) && !t->alias && t->kernel->layouts == LAY_ROWS &&
	       touches_candidate(p, t);
}

/* Whether a tensor of t is channels-last. */
static bool touches_nhwc(const Prepared *p, const Task *t)
{
	for (int slot = -t->n->noutputs; slot < t->n->ninputs; slot++)
		if (rt_nhwc(p, slot_val(t->n, slot)))
			return true;
	return false;
}

/* The layout of every value's planned tensor.  A task whose kernel keeps
 * tensors row-major (movable) first moves to the next row that takes
 * channels-last where one takes it (rt_kernel_move), so that its
 * tensors' layouts are decided with the kernel that would prefer NHWC;
 * one moved whose tensors all end row-major goes back to its first row
 * (its row-major tensors stay so: nothing else changes). */
static int decide(RunCtx *s, Prepared *p)
{
	int32_t nt = p->ntasks;
	uint8_t *moved = xcalloc((size_t)nt + 1, 1);
	int rc = 0;
	for (int32_t i = 0; i < nt && rc >= 0; i++)
		if (movable(p, &p->tasks[i]))
			moved[i] = (rc = rt_kernel_move(s, p, &p->tasks[i])) > 0;
	if (rc >= 0) {
		Comp c = components(p);
		for (ValId v = 0; v < p->g->nvals; v++)
			if (comp_nhwc(&c, p, v))
				p->vt[v].layout = TENSOR_NHWC;
		comp_free(&c);
		rc = 0;
	}
	for (int32_t i = 0; i < nt && !rc; i++)
		if (moved[i] && !touches_nhwc(p, &p->tasks[i]))
			rc = rt_kernel_choose(s, p, &p->tasks[i]);
	free(moved);
	return rc;
}

int rt_layout(RunCtx *s, Prepared *p)
{
	return holds_subgraphs(p->g) ? 0 : decide(s, p);
}

/* BLOCK pixels at a time: each pixel's channels are read in one run,
 * each channel's run of BLOCK pixels written in one. */
enum { BLOCK = 64 };

#define NHWC_TO_ROWS(name, T)                                             \
	static void name(const T *x, T *y, int64_t c, int64_t hw)         \
	{                                                                 \
		for (int64_t p0 = 0; p0 < hw; p0 += BLOCK) {              \
			int64_t p1 = p0 + BLOCK < hw ? p0 + BLOCK : hw;   \
			for (int64_t ch = 0; ch < c; ch++)                \
				for (int64_t px = p0; px < p1; px++)      \
					y[ch * hw + px] = x[px * c + ch]; \
		}                                                         \
	}

NHWC_TO_ROWS(nhwc_to_rows_4, uint32_t)
NHWC_TO_ROWS(nhwc_to_rows_1, uint8_t)

/* The tensors layouts are decided for (candidate) are 4- or 1-byte. */
void rt_nhwc_to_rows(const Tensor *t, void *dst)
{
	const int64_t *d = t->shape.dims;
	int64_t c = d[1], hw = d[2] * d[3];
	size_t es = dtype_size(t->dtype), img = (size_t)(c * hw) * es;
	for (int64_t n = 0; n < d[0]; n++) {
		const uint8_t *x = (const uint8_t *)t->data + (size_t)n * img;
		uint8_t *y = (uint8_t *)dst + (size_t)n * img;
		if (es == 4)
			nhwc_to_rows_4((const uint32_t *)x, (uint32_t *)y, c,
				       hw);
		else
			nhwc_to_rows_1(x, y, c, hw);
	}
}
