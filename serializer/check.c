/*
 * serializer/check.c - trust nothing in an unpacked gearom.Model.
 *
 * protobuf-c guarantees the wire format is well formed; everything it
 * means is checked here: every index is in range, every enum known, every
 * shape consistent, and every weight lies inside WEIGHTS with the size
 * its dtype and dims need.  Each check reports the innermost problem and
 * the callers prefix where it is ("graph 2: node 5: input 1 ...").
 */
#include "omimpl.h"

#include <stdlib.h>
#include <string.h>

typedef struct FileCheck {
	const Gearom__Model *m;
	const uint8_t *w; /* NULL: the bytes are not at hand */
	uint64_t wsize;
	uint8_t *refs; /* per graph: attributes naming it as a subgraph */
	uint8_t *gear_of; /* per graph: gears naming it as their branch */
	int32_t *depth;	  /* per graph: levels below the root */
	NameMap *inputs;  /* model input name -> index */
	size_t nvals;	  /* the gear inputs' -1s: values per gear */
} FileCheck;

#define IN_RANGE(i, n) ((i) >= 0 && (uint64_t)(i) < (uint64_t)(n))
#define MAX_COUNT ((size_t)INT32_MAX)

int om_check_dtype(int32_t dt)
{
	if (dt < 0 || dt >= DT_COUNT)
		return error("dtype %d is not an ONNX data type", dt);
	return 0;
}

int om_check_shape(int32_t rank, size_t n, const int64_t *dims, int64_t min)
{
	if (rank < -1 || rank > MAX_RANK)
		return error("rank %d is out of range (-1..%d)", rank,
			     MAX_RANK);
	if (n != (size_t)(rank < 0 ? 0 : rank))
		return error("rank %d but %zu dims", rank, n);
	for (size_t k = 0; k < n; k++)
		if (dims[k] < min)
			return error("dim %zu is %lld", k, (long long)dims[k]);
	return 0;
}

/* A static shape's bytes fit int64, as inference and the importer make
 * sure of every tensor they shape, so no size computed from it
 * overflows. */
static int check_size(int32_t rank, const int64_t *dims, int32_t dt)
{
	Shape s = shape_of(rank, dims);
	if (rank >= 0 && dt != DT_UNDEFINED && shape_is_static(&s) &&
	    shape_bytes(&s, dt) < 0)
		return error("its size overflows int64");
	return 0;
}

/* ---- weights ----------------------------------------------------------- */

static int check_strings(const uint8_t *p, uint64_t size, int64_t numel)
{
	uint64_t at = 0;
	for (int64_t i = 0; i < numel; i++) {
		if (size - at < 8)
			return error("string %lld runs past its %llu bytes",
				     (long long)i, (unsigned long long)size);
		uint64_t len = om_get_u64(p + at);
		at += 8;
		if (len > size - at)
			return error("string %lld runs past its %llu bytes",
				     (long long)i, (unsigned long long)size);
		at += len;
	}
	if (at != size)
		return error("%llu bytes of strings, size says %llu",
			     (unsigned long long)at, (unsigned long long)size);
	return 0;
}

static int check_weight(const FileCheck *c, const Gearom__Weight *w)
{
	int64_t numel = 1, bytes;
	uint64_t end;
	if (!w->name)
		return error("no name");
	if (om_check_dtype(w->dtype) < 0)
		return -1;
	if (w->dtype == DT_UNDEFINED)
		return error("dtype is undefined");
	if (w->n_dims > MAX_RANK)
		return error("rank %zu is out of range (max %d)", w->n_dims,
			     MAX_RANK);
	if (om_check_shape((int32_t)w->n_dims, w->n_dims, w->dims, 0) < 0)
		return -1;
	if (w->has_stored_dtype &&
	    (w->stored_dtype != DT_FLOAT16 || w->dtype != DT_FLOAT ||
	     w->has_data))
		return error("stored dtype %d for a %s weight: only float32 "
			     "weights in WEIGHTS may be stored as float16",
			     w->stored_dtype, dtype_name(w->dtype));
	if (w->has_data) { /* inline: no place in WEIGHTS */
		if (w->dtype == DT_STRING)
			return error("a string constant cannot be inline");
		if (w->data.len != w->size || w->has_offset)
			return error("inline data of %zu bytes, size says %llu",
				     w->data.len, (unsigned long long)w->size);
	} else {
		if (w->offset % OM_ALIGN)
			return error("offset %llu is not %d-byte aligned",
				     (unsigned long long)w->offset, OM_ALIGN);
		if (__builtin_add_overflow(w->offset, w->size, &end) ||
		    end > c->wsize)
			return error("bytes [%llu, +%llu) lie outside the "
				     "%llu-byte WEIGHTS partition",
				     (unsigned long long)w->offset,
				     (unsigned long long)w->size,
				     (unsigned long long)c->wsize);
	}
	for (size_t k = 0; k < w->n_dims; k++)
		if (!mul_nonneg_i64(numel, w->dims[k], &numel))
			return error("element count overflows");
	if (w->dtype == DT_STRING)
		return c->w ? check_strings(c->w + w->offset, w->size, numel)
			    : 0;
	if (!mul_nonneg_i64(numel,
			    (int64_t)dtype_size(w->has_stored_dtype
						? w->stored_dtype
						: w->dtype),
			    &bytes))
		return error("byte size overflows");
	if ((uint64_t)bytes != w->size)
		return error("size is %llu bytes, its dtype and dims need %lld",
			     (unsigned long long)w->size, (long long)bytes);
	const uint8_t *b = w->has_data ? w->data.data
			   : c->w      ? c->w + w->offset
				       : NULL;
	for (uint64_t k = 0; b && w->dtype == DT_BOOL && k < w->size; k++)
		if (b[k] > 1) /* the compiler writes bools as 0 and 1 */
			return error("bool element %llu is byte %u, expected 0 "
				     "or 1", (unsigned long long)k, b[k]);
	return 0;
}

/* A weight's bytes in WEIGHTS, for the overlap check. */
typedef struct Span {
	uint64_t off, end;
	size_t k;
} Span;

static int by_offset(const void *a, const void *b)
{
	const Span *x = a, *y = b;
	return x->off != y->off ? (x->off > y->off) - (x->off < y->off)
				: (x->k > y->k) - (x->k < y->k);
}

/* No two weights share a byte of WEIGHTS: a reader may release a
 * weight's bytes once it has read them (a float16 weight widened). */
static int check_weight_overlap(const Gearom__Model *m)
{
	Span *sp = xmalloc((m->n_weights + 1) * sizeof(Span));
	size_t n = 0;
	for (size_t k = 0; k < m->n_weights; k++) {
		const Gearom__Weight *w = m->weights[k];
		if (!w->has_data && w->size) /* offset + size: checked */
			sp[n++] = (Span){ w->offset, w->offset + w->size, k };
	}
	qsort(sp, n, sizeof(*sp), by_offset);
	int rc = 0;
	for (size_t i = 1; i < n && !rc; i++)
		if (sp[i].off < sp[i - 1].end)
			rc = error("weights %zu and %zu share bytes of WEIGHTS",
				   sp[i - 1].k, sp[i].k);
	free(sp);
	return rc;
}

/* ---- graphs ------------------------------------------------------------ */

/* x and y have one type: kind of type, dtype, rank and dims. */
static bool same_type(const Gearom__Tensor *x, const Gearom__Tensor *y)
{
	return x->type == y->type && x->dtype == y->dtype &&
	       x->rank == y->rank && x->n_dims == y->n_dims &&
	       (!x->n_dims ||
		!memcmp(x->dims, y->dims, x->n_dims * sizeof(int64_t)));
}

static int check_tensor(const FileCheck *c, const Gearom__Graph *g,
			const Gearom__Tensor *t)
{
	int kind = (int)t->kind, type = (int)t->type;
	if (!t->name)
		return error("no name");
	if (om_check_dtype(t->dtype) < 0 ||
	    om_check_shape(t->rank, t->n_dims, t->dims, -1) < 0 ||
	    check_size(t->rank, t->dims, t->dtype) < 0)
		return -1;
	if (kind < GEAROM__TENSOR_KIND__TK_NODE ||
	    kind > GEAROM__TENSOR_KIND__TK_OUTER)
		return error("kind %d is not a tensor kind", kind);
	if (om_check_type_kind(type) < 0)
		return -1;
	if (t->weight != -1 && !IN_RANGE(t->weight, c->m->n_weights))
		return error("weight %d is out of range (%zu weights)",
			     t->weight, c->m->n_weights);
	if (kind == GEAROM__TENSOR_KIND__TK_WEIGHT && t->weight < 0)
		return error("is a weight but names none");
	if (kind != GEAROM__TENSOR_KIND__TK_OUTER) {
		if (t->outer != -1)
			return error("outer is %d but it is not an outer "
				     "reference",
				     t->outer);
	} else if (g->parent < 0) {
		return error("outer reference in the root graph");
	} else {
		const Gearom__Graph *p = c->m->graphs[g->parent];
		if (!IN_RANGE(t->outer, p->n_tensors))
			return error("outer %d is out of range (graph %d has "
				     "%zu tensors)",
				     t->outer, g->parent, p->n_tensors);
		if (!same_type(t, p->tensors[t->outer]))
			return error("outer reference to '%s' of graph %d is "
				     "not typed as that tensor",
				     p->tensors[t->outer]->name, g->parent);
	}
	if (t->n_dim_params &&
	    (t->rank < 0 || t->n_dim_params != (size_t)t->rank))
		return error("%zu dim_params for rank %d", t->n_dim_params,
			     t->rank);
	for (size_t k = 0; k < t->n_dim_params; k++)
		if (!t->dim_params[k])
			return error("dim_param %zu is missing", k);
	return 0;
}

/* gi's attribute names graph sub as its subgraph. */
static int check_subgraph(const FileCheck *c, int32_t gi, int32_t sub)
{
	if (!IN_RANGE(sub, c->m->n_graphs) || sub == c->m->root)
		return error("subgraph %d is out of range (%zu graphs)", sub,
			     c->m->n_graphs);
	if (c->m->graphs[sub]->parent != gi)
		return error("subgraph %d has parent %d, not %d", sub,
			     c->m->graphs[sub]->parent, gi);
	if (c->refs[sub]++)
		return error("subgraph %d is used by two attributes", sub);
	return 0;
}

static int check_weight_ref(const FileCheck *c, int32_t w)
{
	if (!IN_RANGE(w, c->m->n_weights))
		return error("tensor %d is out of range (%zu weights)", w,
			     c->m->n_weights);
	return 0;
}

static int check_attr(const FileCheck *c, int32_t gi, const Gearom__Attribute *a)
{
	if (!a->name)
		return error("no name");
	if (om_check_attr_type(a->type) < 0)
		return -1;
	if ((a->t != -1 || a->type == ATTR_TENSOR) &&
	    check_weight_ref(c, a->t) < 0)
		return -1;
	if ((a->g != -1 || a->type == ATTR_GRAPH) &&
	    check_subgraph(c, gi, a->g) < 0)
		return -1;
	for (size_t j = 0; j < a->n_tensors; j++)
		if (check_weight_ref(c, a->tensors[j]) < 0)
			return -1;
	for (size_t j = 0; j < a->n_graphs; j++)
		if (check_subgraph(c, gi, a->graphs[j]) < 0)
			return -1;
	if (a->n_floats > MAX_COUNT || a->n_ints > MAX_COUNT ||
	    a->n_strings > MAX_COUNT || a->n_tensors > MAX_COUNT ||
	    a->n_graphs > MAX_COUNT)
		return error("too many elements");
	return 0;
}

int om_check_type_kind(int type)
{
	if (type < GEAROM__TYPE_KIND__TYPE_TENSOR ||
	    type > GEAROM__TYPE_KIND__TYPE_OTHER)
		return error("type %d is not a type kind", type);
	return 0;
}

int om_check_attr_type(int type)
{
	if (type < ATTR_UNDEFINED || type > ATTR_TYPE_PROTOS)
		return error("type %d is not an attribute type", type);
	return 0;
}

int om_check_refs(const char *what, const int32_t *v, size_t n,
		  size_t ntensors, bool optional)
{
	for (size_t k = 0; k < n; k++)
		if (!(optional && v[k] == -1) && !IN_RANGE(v[k], ntensors))
			return error("%s %zu refers to tensor %d of %zu", what,
				     k, v[k], ntensors);
	return 0;
}

static int check_node(const FileCheck *c, int32_t gi, const Gearom__Node *n)
{
	size_t nt = c->m->graphs[gi]->n_tensors;
	if (!n->name || !n->op_type || !n->domain)
		return error("name, op_type or domain missing");
	if (n->n_inputs > MAX_COUNT || n->n_outputs > MAX_COUNT ||
	    n->n_attrs > MAX_COUNT)
		return error("too many inputs, outputs or attributes");
	if (om_check_refs("input", n->inputs, n->n_inputs, nt, true) < 0 ||
	    om_check_refs("output", n->outputs, n->n_outputs, nt, true) < 0)
		return -1;
	for (size_t k = 0; k < n->n_attrs; k++)
		if (check_attr(c, gi, n->attrs[k]) < 0)
			return error_prefix("attribute %zu", k);
	const Gearom__Precision *p = c->m->precision;
	if (n->reduced && (!p || !p->has_dtype || !p->dtype))
		return error("marked reduced, but the file has no "
			     "reduced-precision mode");
	return 0;
}

int om_check_order(const int32_t *order, size_t n, size_t nnodes)
{
	for (size_t k = 0; k < n; k++)
		if (!IN_RANGE(order[k], nnodes))
			return error("order %zu names node %d of %zu", k,
				     order[k], nnodes);
	return 0;
}

int om_check_block(size_t k, int32_t tensor, int32_t node, int32_t alias_of,
		   uint64_t offset, uint64_t size, size_t ntensors,
		   size_t nnodes)
{
	uint64_t end;
	if (node != -1 && !IN_RANGE(node, nnodes))
		return error("block %zu names node %d of %zu", k, node, nnodes);
	if (node != -1 && (tensor != -1 || alias_of != -1))
		return error("block %zu is a workspace but names a tensor", k);
	if (node == -1 && !IN_RANGE(tensor, ntensors))
		return error("block %zu names tensor %d of %zu", k, tensor,
			     ntensors);
	if (alias_of != -1 && !IN_RANGE(alias_of, ntensors))
		return error("block %zu aliases tensor %d of %zu", k, alias_of,
			     ntensors);
	if (__builtin_add_overflow(offset, size, &end))
		return error("block %zu: offset + size overflows", k);
	return 0;
}

/* The runtime allocates arena_bytes: never more than every block side
 * by side (verify checks it is exactly what the blocks reach). */
static int check_plan(const Gearom__Graph *g, const Gearom__MemoryPlan *p)
{
	uint64_t sum = 0;
	if (om_check_order(p->order, p->n_order, g->n_nodes) < 0)
		return -1;
	for (size_t k = 0; k < p->n_blocks; k++) {
		const Gearom__MemBlock *b = p->blocks[k];
		if (om_check_block(k, b->tensor, b->node, b->alias_of, b->offset,
				   b->size, g->n_tensors, g->n_nodes) < 0)
			return -1;
		if (__builtin_add_overflow(sum, b->size, &sum))
			sum = UINT64_MAX;
	}
	if (p->arena_bytes > sum)
		return error("arena_bytes is %llu, more than its blocks' %llu "
			     "bytes side by side",
			     (unsigned long long)p->arena_bytes,
			     (unsigned long long)sum);
	return 0;
}

/* The tree of graphs: parents come first, so it has no cycle, and it is
 * at most MAX_OM_GRAPH_DEPTH deep (compiler/ir.h), so that every walk
 * recursing into subgraphs stays within the stack. */
static int check_parent(const FileCheck *c, int32_t gi)
{
	const Gearom__Graph *g = c->m->graphs[gi];
	if (!g->name)
		return error("no name");
	if (gi == c->m->root ? g->parent != -1
			     : g->parent < 0 || g->parent >= gi)
		return error("parent %d is not valid for graph %d%s",
			     g->parent, gi, gi == c->m->root ? " (root)" : "");
	c->depth[gi] = gi == c->m->root ? 0 : c->depth[g->parent] + 1;
	if (c->depth[gi] > MAX_OM_GRAPH_DEPTH)
		return error("subgraphs are nested more than %d levels deep",
			     MAX_OM_GRAPH_DEPTH);
	return 0;
}

/* The graph's inputs are its TK_INPUT tensors, each once: the runtime
 * gives each input the caller's buffer, and a TK_INPUT tensor it did not
 * would have none. */
static int check_inputs(const Gearom__Graph *g)
{
	uint8_t *listed = xcalloc(g->n_tensors + 1, 1);
	int rc = 0;
	for (size_t k = 0; k < g->n_inputs && !rc; k++) {
		const Gearom__Tensor *t = g->tensors[g->inputs[k]];
		if (t->kind != GEAROM__TENSOR_KIND__TK_INPUT)
			rc = error("input %zu ('%s') is not an input tensor "
				   "(kind %d)", k, t->name, (int)t->kind);
		else if (listed[g->inputs[k]]++)
			rc = error("input %zu ('%s') is listed twice", k,
				   t->name);
	}
	for (size_t k = 0; k < g->n_tensors && !rc; k++)
		if (g->tensors[k]->kind == GEAROM__TENSOR_KIND__TK_INPUT &&
		    !listed[k])
			rc = error("tensor %zu ('%s') is an input tensor but "
				   "not one of the graph's inputs", k,
				   g->tensors[k]->name);
	free(listed);
	return rc;
}

static int check_graph(const FileCheck *c, int32_t gi)
{
	const Gearom__Graph *g = c->m->graphs[gi];
	if (g->n_tensors > MAX_COUNT || g->n_nodes > MAX_COUNT)
		return error("too many tensors or nodes");
	for (size_t k = 0; k < g->n_tensors; k++)
		if (check_tensor(c, g, g->tensors[k]) < 0)
			return error_prefix("tensor %zu", k);
	for (size_t k = 0; k < g->n_nodes; k++)
		if (check_node(c, gi, g->nodes[k]) < 0)
			return error_prefix("node %zu", k);
	if (om_check_refs("input", g->inputs, g->n_inputs, g->n_tensors,
			  false) < 0 ||
	    om_check_refs("output", g->outputs, g->n_outputs, g->n_tensors,
			  false) < 0 ||
	    check_inputs(g) < 0)
		return -1;
	if (g->plan && check_plan(g, g->plan) < 0)
		return error_prefix("memory plan");
	return 0;
}

/* ---- inputs, outputs and gears ----------------------------------------- */

static int check_io(const Gearom__IoInfo *io)
{
	if (!io->name)
		return error("no name");
	if (om_check_dtype(io->dtype) < 0 ||
	    om_check_shape(io->rank, io->n_shape, io->shape, -1) < 0 ||
	    check_size(io->rank, io->shape, io->dtype) < 0)
		return -1;
	if (io->n_max_shape && io->n_max_shape != io->n_shape)
		return error("max_shape has %zu dims, shape %zu",
			     io->n_max_shape, io->n_shape);
	for (size_t k = 0; k < io->n_max_shape; k++)
		if (io->max_shape[k] < -1)
			return error("max_shape dim %zu is %lld", k,
				     (long long)io->max_shape[k]);
	if (io->n_max_shape &&
	    check_size(io->rank, io->max_shape, io->dtype) < 0)
		return error_prefix("max_shape");
	return 0;
}

static int check_gear_input(const Gearom__GearInput *in)
{
	if (!in->name)
		return error("no name");
	if (in->n_shape > MAX_RANK)
		return error("rank %zu is out of range (max %d)", in->n_shape,
			     MAX_RANK);
	if (om_check_shape((int32_t)in->n_shape, in->n_shape, in->shape,
			   -1) < 0)
		return -1;
	for (size_t k = 0; k < in->n_dyn_axes; k++) {
		int32_t ax = in->dyn_axes[k];
		if (!IN_RANGE(ax, in->n_shape) || in->shape[ax] != -1)
			return error("dynamic axis %d is not a -1 of its "
				     "shape",
				     ax);
		if (k && ax <= in->dyn_axes[k - 1])
			return error("dynamic axes are not in increasing "
				     "order");
	}
	size_t ndyn = 0;
	for (size_t k = 0; k < in->n_shape; k++)
		ndyn += in->shape[k] == -1;
	if (ndyn != in->n_dyn_axes)
		return error("%zu dims are -1, %zu dynamic axes", ndyn,
			     in->n_dyn_axes);
	return 0;
}

static int check_shape_info(const Gearom__ShapeInfo *s)
{
	if (!s->name)
		return error("no name");
	return om_check_shape(s->rank, s->n_dims, s->dims, -1);
}

/* ShapeInfo s of a tensor of dtype dt: bytes exactly when the shape is
 * static and dt has a fixed size, and then numel * dtype size. */
static int check_shape_bytes(const Gearom__ShapeInfo *s, int32_t dt)
{
	int64_t n = 1;
	bool fixed = s->rank >= 0 && dt != DT_STRING && dtype_size(dt) > 0;
	for (size_t k = 0; fixed && k < s->n_dims; k++)
		if (s->dims[k] < 0)
			fixed = false;
		else if (!mul_nonneg_i64(n, s->dims[k], &n))
			return error("its element count overflows");
	if (fixed && !mul_nonneg_i64(n, (int64_t)dtype_size(dt), &n))
		return error("its byte size overflows");
	if (!fixed && s->has_bytes)
		return error("bytes %llu for a shape that is not static",
			     (unsigned long long)s->bytes);
	if (fixed && (!s->has_bytes || s->bytes != (uint64_t)n))
		return error("bytes %llu, its shape and dtype need %lld",
			     (unsigned long long)s->bytes, (long long)n);
	return 0;
}

/* Gear input k of gear i: named as the gear input, its shape that one's
 * with the gear's values at the -1s (in gear-input order). */
static int check_gear_shape_in(const FileCheck *c, const Gearom__Gear *g,
			       size_t k, size_t *at)
{
	const Gearom__GearInput *in = c->m->gear_inputs[k];
	const Gearom__ShapeInfo *s = g->inputs[k];
	if (strcmp(s->name, in->name))
		return error("named '%s', gear input %zu is '%s'", s->name, k,
			     in->name);
	if (s->rank != (int32_t)in->n_shape)
		return error("rank %d, gear input '%s' has %zu dims", s->rank,
			     in->name, in->n_shape);
	for (size_t d = 0, j = 0; d < in->n_shape; d++) {
		bool dyn = j < in->n_dyn_axes && (size_t)in->dyn_axes[j] == d;
		int64_t want = dyn ? g->dims[(*at)++] : in->shape[d];
		j += dyn;
		if (s->dims[d] != want)
			return error("dim %zu is %lld, expected %lld", d,
				     (long long)s->dims[d], (long long)want);
	}
	return 0;
}

/* The model input named name; NULL if none. */
static const Gearom__IoInfo *input_named(const FileCheck *c, const char *name)
{
	int32_t k = namemap_get(c->inputs, name);
	return k >= 0 ? c->m->inputs[k] : NULL;
}

static int check_gear_io(const FileCheck *c, const Gearom__Gear *g)
{
	const Gearom__Model *m = c->m;
	size_t at = 0;
	if (g->n_inputs != m->n_gear_inputs ||
	    (g->n_outputs && g->n_outputs != m->n_outputs))
		return error("%zu inputs and %zu outputs, the model has %zu "
			     "gear inputs and %zu outputs", g->n_inputs,
			     g->n_outputs, m->n_gear_inputs, m->n_outputs);
	for (size_t k = 0; k < g->n_inputs; k++) {
		const Gearom__IoInfo *io = input_named(c, g->inputs[k]->name);
		if (check_gear_shape_in(c, g, k, &at) < 0 ||
		    check_shape_bytes(g->inputs[k], io->dtype) < 0)
			return error_prefix("input %zu", k);
	}
	for (size_t k = 0; k < g->n_outputs; k++) {
		const Gearom__ShapeInfo *s = g->outputs[k];
		const Gearom__IoInfo *io = m->outputs[k];
		if (strcmp(s->name, io->name))
			return error("output %zu is named '%s', the model's is "
				     "'%s'", k, s->name, io->name);
		if (check_shape_bytes(s, io->dtype) < 0)
			return error_prefix("output %zu", k);
	}
	return 0;
}

static int check_gear(const FileCheck *c, size_t i)
{
	const Gearom__Gear *g = c->m->gears[i];
	if (!g->label)
		return error("no label");
	if (g->index < 0 || (size_t)g->index != i)
		return error("index is %d", g->index);
	if (g->n_dims != c->nvals)
		return error("%zu dims, the gear inputs have %zu -1s",
			     g->n_dims, c->nvals);
	for (size_t k = 0; k < g->n_dims; k++)
		if (g->dims[k] < 1)
			return error("dim %zu is %lld, expected >= 1", k,
				     (long long)g->dims[k]);
	if (g->graph != -1 && !IN_RANGE(g->graph, c->m->n_graphs))
		return error("graph %d is out of range (%zu graphs)", g->graph,
			     c->m->n_graphs);
	if (g->graph != -1 && (g->graph == c->m->root ||
			       c->m->graphs[g->graph]->parent != c->m->root))
		return error("graph %d is not a branch of the root graph %d",
			     g->graph, c->m->root);
	if (g->graph != -1 && c->gear_of[g->graph]++)
		return error("graph %d is the branch of two gears", g->graph);
	for (size_t k = 0; k < g->n_inputs; k++)
		if (check_shape_info(g->inputs[k]) < 0)
			return error_prefix("input %zu", k);
	for (size_t k = 0; k < g->n_outputs; k++)
		if (check_shape_info(g->outputs[k]) < 0)
			return error_prefix("output %zu", k);
	return check_gear_io(c, g);
}

static int check_output_names(const Gearom__Model *m)
{
	NameMap names;
	namemap_init(&names);
	int rc = 0;
	for (size_t k = 0; k < m->n_outputs && !rc; k++)
		if (namemap_put(&names, m->outputs[k]->name, (int32_t)k) >= 0)
			rc = error("output %zu: the name '%s' is taken by an "
				   "earlier output", k, m->outputs[k]->name);
	namemap_release(&names);
	return rc;
}

static bool has_gear_dim(const Gearom__IoInfo *io)
{
	for (size_t d = 0; d < io->n_shape; d++)
		if (io->shape[d] == -1)
			return true;
	return false;
}

/* In a gear file, the gear inputs are the model inputs with a -1 dim, in
 * the model's order: a gear's values are the inputs' dims at the -1s,
 * inputs in order (gearrt.h), and that is how the runtime picks a gear.
 * (A static file's -1 dims run at the caller's dims.) */
static int check_gear_order(const Gearom__Model *m)
{
	size_t k = 0;
	for (size_t i = 0; m->n_gears && i < m->n_inputs; i++) {
		const Gearom__IoInfo *io = m->inputs[i];
		if (!has_gear_dim(io))
			continue;
		if (k == m->n_gear_inputs ||
		    strcmp(m->gear_inputs[k]->name, io->name))
			return error("input %zu '%s' has a -1 dim, but gear "
				     "input %zu is '%s' (the gear inputs are "
				     "the inputs with -1 dims, in order)", i,
				     io->name, k, k < m->n_gear_inputs
					     ? m->gear_inputs[k]->name : "none");
		k++;
	}
	if (k != m->n_gear_inputs)
		return error("gear input %zu '%s' is not a model input with a "
			     "-1 dim", k, m->gear_inputs[k]->name);
	return 0;
}

/* Mode and gears agree; each gear input is a model input, stated with
 * the same shape; the gear values are one per -1 of the gear inputs. */
static int check_gear_table(FileCheck *c)
{
	const Gearom__Model *m = c->m;
	bool is_static = m->mode == GEAROM__MODE__MODE_STATIC;
	if (is_static && (m->n_gears || m->n_gear_inputs))
		return error("mode is static, but there are %zu gears and %zu "
			     "gear inputs", m->n_gears, m->n_gear_inputs);
	if (!is_static && (!m->n_gears || !m->n_gear_inputs))
		return error("mode %d has %zu gears and %zu gear inputs, "
			     "expected some of each", (int)m->mode, m->n_gears,
			     m->n_gear_inputs);
	for (size_t k = 0; k < m->n_inputs; k++)
		if (namemap_put(c->inputs, m->inputs[k]->name, (int32_t)k) >= 0)
			return error("input %zu: the name '%s' is taken by an "
				     "earlier input", k, m->inputs[k]->name);
	if (check_output_names(m) < 0 || check_gear_order(m) < 0)
		return -1;
	for (size_t k = 0; k < m->n_gear_inputs; k++) {
		const Gearom__GearInput *in = m->gear_inputs[k];
		const Gearom__IoInfo *io = input_named(c, in->name);
		c->nvals += in->n_dyn_axes;
		if (!io)
			return error("gear input %zu '%s' is not an input of the "
				     "model", k, in->name);
		if (io->rank != (int32_t)in->n_shape ||
		    memcmp(io->shape, in->shape, in->n_shape * sizeof(int64_t)))
			return error("gear input %zu '%s': its shape is not the "
				     "model input's", k, in->name);
	}
	return 0;
}

/* ---- the model --------------------------------------------------------- */

/* The precision mode: a name, and bfloat16, float16 or none. */
static int check_precision(const Gearom__Precision *p)
{
	if (!p)
		return 0;
	if (!p->mode || !*p->mode)
		return error("precision: no mode");
	if (p->has_dtype && p->dtype && p->dtype != DT_BFLOAT16 &&
	    p->dtype != DT_FLOAT16)
		return error("precision: dtype %d, expected bfloat16 (16) or "
			     "float16 (10)", p->dtype);
	return 0;
}

static int check_header(const Gearom__Model *m)
{
	const Gearom__Source *s = m->source;
	if (!m->producer || !m->producer->name || !m->producer->version)
		return error("producer is missing");
	if (!s || !s->file || !s->producer_name || !s->producer_version ||
	    !s->domain)
		return error("source is missing");
	for (size_t k = 0; k < s->n_opsets; k++)
		if (!s->opsets[k]->domain)
			return error("source opset %zu has no domain", k);
	if (s->sha256 && (strlen(s->sha256) != 64 ||
			  strspn(s->sha256, "0123456789abcdef") != 64))
		return error("source sha256 is not 64 lower-case hex digits");
	for (size_t k = 0; k < m->n_options; k++)
		if (!m->options[k]->key || !m->options[k]->value)
			return error("option %zu is incomplete", k);
	if ((int)m->mode < GEAROM__MODE__MODE_STATIC ||
	    (int)m->mode > GEAROM__MODE__MODE_DIMS)
		return error("mode %d is not a gear mode", (int)m->mode);
	if (m->n_graphs > MAX_COUNT || m->n_weights > MAX_COUNT ||
	    m->n_gears > MAX_COUNT)
		return error("too many graphs, weights or gears");
	if (!IN_RANGE(m->root, m->n_graphs))
		return error("root graph %d is out of range (%zu graphs)",
			     m->root, m->n_graphs);
	return 0;
}

/* The gear table's column of input name's axis a; -1 if that is no gear
 * axis. */
static int64_t gear_column(const Gearom__Model *m, const char *name, int32_t a)
{
	size_t at = 0;
	for (size_t k = 0; k < m->n_gear_inputs; k++) {
		const Gearom__GearInput *in = m->gear_inputs[k];
		for (size_t d = 0; d < in->n_dyn_axes; d++)
			if (!strcmp(in->name, name) && in->dyn_axes[d] == a)
				return (int64_t)(at + d);
		at += in->n_dyn_axes;
	}
	return -1;
}

/* Whether gear columns a and b hold the same value in every gear. */
static bool same_column(const Gearom__Model *m, size_t a, size_t b)
{
	for (size_t g = 0; g < m->n_gears; g++)
		if (m->gears[g]->dims[a] != m->gears[g]->dims[b])
			return false;
	return true;
}

/* A gear compile's batch rows: a mixer, or an axis per output and per
 * input (-1, or one of its; an input's a gear axis, the same gear column
 * for every input). */
static int check_batch_rows(const Gearom__Model *m)
{
	const Gearom__BatchRows *b = m->batch_rows;
	if (!b)
		return 0;
	if (!m->n_gears)
		return error("batch rows: the file has no gears");
	if (b->mixer && *b->mixer)
		return b->n_axis || b->n_input_axis
			       ? error("batch rows: a mixer and axes")
			       : 0;
	if (b->n_axis != m->n_outputs)
		return error("batch rows: %zu axes for %zu outputs", b->n_axis,
			     m->n_outputs);
	for (size_t k = 0; k < b->n_axis; k++)
		if (b->axis[k] < -1 || b->axis[k] >= m->outputs[k]->rank)
			return error("batch rows: output %zu's axis %d is out "
				     "of range", k, b->axis[k]);
	if (b->n_input_axis != m->n_inputs)
		return error("batch rows: %zu input axes for %zu inputs",
			     b->n_input_axis, m->n_inputs);
	int64_t column = -1; /* the batch's, in the gear table */
	for (size_t k = 0; k < b->n_input_axis; k++) {
		int32_t a = b->input_axis[k];
		if (a == -1)
			continue;
		int64_t c = gear_column(m, m->inputs[k]->name, a);
		if (c < 0)
			return error("batch rows: input %zu's axis %d is no "
				     "gear axis", k, a);
		if (column >= 0 && c != column &&
		    !same_column(m, (size_t)c, (size_t)column))
			return error("batch rows: input %zu's batch is not "
				     "the others'", k);
		column = c;
	}
	return column < 0 ? error("batch rows: no input has the batch") : 0;
}

static int check_all(FileCheck *c)
{
	const Gearom__Model *m = c->m;
	if (check_header(m) < 0)
		return -1;
	for (size_t k = 0; k < m->n_weights; k++)
		if (check_weight(c, m->weights[k]) < 0)
			return error_prefix("weight %zu", k);
	if (check_weight_overlap(m) < 0 || check_precision(m->precision) < 0)
		return -1;
	c->refs = xcalloc(m->n_graphs, 1);
	c->depth = xcalloc(m->n_graphs + 1, sizeof(int32_t));
	for (size_t k = 0; k < m->n_graphs; k++)
		if (check_parent(c, (int32_t)k) < 0)
			return error_prefix("graph %zu", k);
	for (size_t k = 0; k < m->n_graphs; k++)
		if (check_graph(c, (int32_t)k) < 0)
			return error_prefix("graph %zu", k);
	for (size_t k = 0; k < m->n_inputs; k++)
		if (check_io(m->inputs[k]) < 0)
			return error_prefix("input %zu", k);
	for (size_t k = 0; k < m->n_outputs; k++)
		if (check_io(m->outputs[k]) < 0)
			return error_prefix("output %zu", k);
	for (size_t k = 0; k < m->n_gear_inputs; k++)
		if (check_gear_input(m->gear_inputs[k]) < 0)
			return error_prefix("gear input %zu", k);
	if (check_gear_table(c) < 0)
		return -1;
	c->gear_of = xcalloc(m->n_graphs, 1);
	for (size_t k = 0; k < m->n_gears; k++)
		if (check_gear(c, k) < 0)
			return error_prefix("gear %zu", k);
	return check_batch_rows(m);
}

int om_check_model(const Gearom__Model *m, const uint8_t *weights,
		   uint64_t weights_size, bool have_bytes)
{
	static const uint8_t none[1];
	FileCheck c = { .m = m, .w = weights, .wsize = weights_size };
	if (!have_bytes)
		c.w = NULL;
	else if (!c.w)
		c.w = none; /* no WEIGHTS partition: weights_size is 0 */
	NameMap inputs;
	namemap_init(&inputs);
	c.inputs = &inputs;
	int rc = check_all(&c);
	namemap_release(&inputs);
	free(c.refs);
	free(c.depth);
	free(c.gear_of);
	return rc;
}
