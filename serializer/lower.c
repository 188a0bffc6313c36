/*
 * serializer/lower.c - a Model as a gearom.Model message, less its graphs.
 *
 * The graphs are walked once here to number them and the weights they
 * name; serializer/emit.c then writes each graph's bytes.  Graphs are
 * numbered depth first in node order, the root first, so a parent
 * always has a smaller index than its subgraphs.  Weights are
 * numbered the first time the walk meets them (graph by graph: values,
 * then node attributes) and stored once per distinct Tensor pointer.
 * Both orders depend only on the Model, never on addresses.  Gear
 * shapes and labels come from compiler/gearspec.h, each gear's branch
 * graph and output shapes from the passes that made them.
 */
#include "omimpl.h"

#include "compiler/gearspec.h"

#include <stdlib.h>
#include <string.h>

#define NEW(a, T, INIT) ((T *)arena_memdup((a), &(T)INIT, sizeof(T)))
#define UNCONST(p) ((void *)(uintptr_t)(p))

/* ---- pointer -> index (weights, graphs) -------------------------------- */

static uint32_t ptr_slot(const OmIndexMap *w, const void *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
	uint32_t mask = w->cap - 1, i = (uint32_t)(h >> 32) & mask;
	while (w->keys[i] && w->keys[i] != p)
		i = (i + 1) & mask;
	return i;
}

static int32_t index_get(const OmIndexMap *w, const void *p)
{
	if (!w->cap)
		return -1;
	uint32_t i = ptr_slot(w, p);
	return w->keys[i] ? w->vals[i] : -1;
}

/* Maps p to val, replacing what it mapped to. */
static void index_put(OmIndexMap *w, const void *p, int32_t val)
{
	if (2 * (w->len + 1) > w->cap) {
		OmIndexMap n = { 0 };
		n.cap = w->cap ? 2 * w->cap : 64;
		n.keys = xcalloc(n.cap, sizeof(*n.keys));
		n.vals = xcalloc(n.cap, sizeof(*n.vals));
		for (uint32_t i = 0; i < w->cap; i++) {
			if (!w->keys[i])
				continue;
			uint32_t j = ptr_slot(&n, w->keys[i]);
			n.keys[j] = w->keys[i];
			n.vals[j] = w->vals[i];
			n.len++;
		}
		free(w->keys);
		free(w->vals);
		*w = n;
	}
	uint32_t i = ptr_slot(w, p);
	w->len += !w->keys[i];
	w->keys[i] = p;
	w->vals[i] = val;
}

static void index_release(OmIndexMap *w)
{
	free(w->keys);
	free(w->vals);
	memset(w, 0, sizeof(*w));
}

int32_t om_weight_index(const OmLowered *l, const Tensor *t)
{
	int32_t i = index_get(&l->wmap, t);
	ASSERT(i >= 0);
	return i;
}

/* ---- the walk ---------------------------------------------------------- */

typedef struct Lower {
	Arena *a;
	const Model *m;
	OmLowered *l; /* its graphs and weight map */
	int32_t capgraphs;
	OmIndexMap gmap; /* Graph -> index in l->graphs */
	struct {
		const Tensor *t;
		Gearom__Weight *w;
	} *wt; /* in Model.weights order */
	int32_t nw, capw;
	uint64_t wsize;
	/* folded constants by content: hash -> weight index, open addressing */
	uint64_t *chash;
	int32_t *cidx;
	uint32_t ccap, clen;
} Lower;

static char *str(const char *s) { return UNCONST(s ? s : ""); }

static int64_t *dims_dup(Arena *a, const Shape *s, size_t *n)
{
	*n = s->rank > 0 ? (size_t)s->rank : 0;
	return *n ? arena_memdup(a, s->dims, *n * sizeof(int64_t)) : NULL;
}

static int32_t *ids_dup(Arena *a, const int32_t *v, int32_t n, size_t *out)
{
	*out = n > 0 ? (size_t)n : 0;
	return *out ? arena_memdup(a, v, *out * sizeof(int32_t)) : NULL;
}

int om_tensor_size(const Tensor *t, uint64_t *size)
{
	const char *name = t->name ? t->name : "(unnamed)";
	bool rank_ok = t->shape.rank >= 0 && t->shape.rank <= MAX_RANK;
	int64_t numel = rank_ok ? shape_numel(&t->shape) : -1;
	size_t es = t->dtype == DT_STRING ? sizeof(Bytes) : dtype_size(t->dtype);
	size_t want;
	if (numel < 0 || !es || !mul_size((size_t)numel, es, &want))
		return error("weight '%s': bad dtype %d or shape", name,
			     t->dtype);
	if (t->nbytes != want || (want && !t->data))
		return error("weight '%s': has %zu bytes of data, its dtype "
			     "and shape need %zu",
			     name, t->nbytes, want);
	if (t->dtype != DT_STRING) {
		*size = want;
		return 0;
	}
	const Bytes *b = t->data;
	uint64_t n = 0;
	for (int64_t i = 0; i < numel; i++) {
		if (b[i].len && !b[i].data)
			return error("weight '%s': string %lld has no data",
				     name, (long long)i);
		if (__builtin_add_overflow(n, (uint64_t)b[i].len, &n) ||
		    __builtin_add_overflow(n, 8, &n))
			return error("weight '%s': too large", name);
	}
	*size = n;
	return 0;
}

static uint64_t content_hash(const Tensor *t)
{
	uint64_t h = hash_bytes(&t->dtype, sizeof(t->dtype), 0);
	h = hash_bytes(t->shape.dims, (size_t)t->shape.rank * sizeof(int64_t),
		       h ^ (uint64_t)t->shape.rank);
	return hash_bytes(t->data, t->nbytes, h) | 1; /* 0 marks empty */
}

static bool same_content(const Tensor *a, const Tensor *b)
{
	return a->dtype == b->dtype && shape_equal(&a->shape, &b->shape) &&
	       a->nbytes == b->nbytes &&
	       (!a->nbytes || !memcmp(a->data, b->data, a->nbytes));
}

/* The slot of a folded constant equal to t, or the empty slot for it. */
static uint32_t const_slot(const Lower *L, const Tensor *t, uint64_t h)
{
	uint32_t mask = L->ccap - 1, i = (uint32_t)h & mask;
	while (L->chash[i] &&
	       (L->chash[i] != h || !same_content(L->wt[L->cidx[i]].t, t)))
		i = (i + 1) & mask;
	return i;
}

static void const_put(Lower *L, const Tensor *t, uint64_t h, int32_t idx)
{
	if (2 * (L->clen + 1) > L->ccap) {
		uint64_t *oh = L->chash;
		int32_t *oi = L->cidx;
		uint32_t ocap = L->ccap;
		L->ccap = ocap ? 2 * ocap : 64;
		L->chash = xcalloc(L->ccap, sizeof(uint64_t));
		L->cidx = xcalloc(L->ccap, sizeof(int32_t));
		for (uint32_t i = 0; i < ocap; i++)
			if (oh[i]) {
				uint32_t j = const_slot(L, L->wt[oi[i]].t, oh[i]);
				L->chash[j] = oh[i];
				L->cidx[j] = oi[i];
			}
		free(oh);
		free(oi);
	}
	uint32_t i = const_slot(L, t, h);
	L->chash[i] = h;
	L->cidx[i] = idx;
	L->clen++;
}

/* A constant gearc computed: kept inline in MODEL_DEF, once per distinct
 * content, so equal shape constants of many gears cost their bytes once
 * and the WEIGHTS partition does not grow with the gears. */
static int folded_weight_of(Lower *L, const Tensor *t, int32_t *out)
{
	uint64_t h = content_hash(t);
	if (L->ccap) {
		uint32_t i = const_slot(L, t, h);
		if (L->chash[i]) {
			*out = L->cidx[i];
			index_put(&L->l->wmap, t, *out);
			return 0;
		}
	}
	Gearom__Weight *w = NEW(L->a, Gearom__Weight, GEAROM__WEIGHT__INIT);
	w->name = str(t->name);
	w->has_dtype = w->has_size = w->has_data = 1;
	w->dtype = t->dtype;
	w->dims = dims_dup(L->a, &t->shape, &w->n_dims);
	w->size = t->nbytes;
	w->data.len = t->nbytes;
	w->data.data = UNCONST(t->data);
	int32_t i = ARENA_PUSH(L->a, L->wt, L->nw, L->capw);
	L->wt[i].t = t;
	L->wt[i].w = w;
	index_put(&L->l->wmap, t, i);
	const_put(L, t, h, i);
	*out = i;
	return 0;
}

/* Model.weights index of t, adding it the first time. */
static int weight_of(Lower *L, const Tensor *t, int32_t *out)
{
	uint64_t size, off;
	int32_t i = index_get(&L->l->wmap, t);
	if (i >= 0) {
		*out = i;
		return 0;
	}
	if (om_tensor_size(t, &size) < 0)
		return -1;
	if (t->folded && t->dtype != DT_STRING)
		return folded_weight_of(L, t, out);
	bool half = t->from_half && t->dtype == DT_FLOAT; /* as it came */
	if (half)
		size /= 2;
	off = om_align(L->wsize);
	if (off < L->wsize || __builtin_add_overflow(off, size, &L->wsize) ||
	    L->nw == INT32_MAX)
		return error("weights: too large to write");
	Gearom__Weight *w = NEW(L->a, Gearom__Weight, GEAROM__WEIGHT__INIT);
	w->name = str(t->name);
	w->has_dtype = 1;
	w->dtype = t->dtype;
	w->dims = dims_dup(L->a, &t->shape, &w->n_dims);
	w->has_stored_dtype = half;
	w->stored_dtype = half ? DT_FLOAT16 : 0;
	w->has_offset = w->has_size = 1;
	w->offset = off;
	w->size = size;
	i = ARENA_PUSH(L->a, L->wt, L->nw, L->capw);
	L->wt[i].t = t;
	L->wt[i].w = w;
	index_put(&L->l->wmap, t, i);
	*out = i;
	return 0;
}

static int number_graph(Lower *L, const Graph *g, int32_t parent);

static int number_value(Lower *L, const Value *v)
{
	int32_t w;
	if (v->shape.rank < -1 || v->shape.rank > MAX_RANK)
		return error("tensor '%s' has rank %d", v->name, v->shape.rank);
	if (v->kind == VAL_WEIGHT && !v->konst)
		return error("weight '%s' has no data", v->name);
	return v->konst ? weight_of(L, v->konst, &w) : 0;
}

/* The pointers the attribute's type needs are set. */
static bool attr_data_ok(const Attr *at)
{
	const void *p;
	switch (at->type) {
	case ATTR_STRING: return !at->s.len || at->s.data;
	case ATTR_FLOATS: p = at->floats; break;
	case ATTR_INTS: p = at->ints; break;
	case ATTR_STRINGS: p = at->strings; break;
	case ATTR_TENSORS: p = at->tensors; break;
	case ATTR_GRAPHS: p = at->graphs; break;
	default: return true;
	}
	return at->n == 0 || (at->n > 0 && p);
}

static int number_attr(Lower *L, const Attr *at, int32_t gi)
{
	int32_t w;
	if (!attr_data_ok(at))
		return error("attribute '%s' (type %d) has no data", at->name,
			     at->type);
	switch (at->type) {
	case ATTR_TENSOR:
		if (!at->t)
			return error("attribute '%s' has no tensor", at->name);
		return weight_of(L, at->t, &w);
	case ATTR_GRAPH:
		if (!at->g)
			return error("attribute '%s' has no subgraph", at->name);
		return number_graph(L, at->g, gi);
	case ATTR_STRINGS:
		for (int32_t j = 0; j < at->n; j++)
			if (at->strings[j].len && !at->strings[j].data)
				return error("attribute '%s': string %d has "
					     "no data",
					     at->name, j);
		return 0;
	case ATTR_TENSORS:
		for (int32_t j = 0; j < at->n; j++)
			if (!at->tensors[j])
				return error("attribute '%s': tensor %d is "
					     "missing",
					     at->name, j);
			else if (weight_of(L, at->tensors[j], &w) < 0)
				return -1;
		return 0;
	case ATTR_GRAPHS:
		for (int32_t j = 0; j < at->n; j++)
			if (!at->graphs[j])
				return error("attribute '%s': subgraph %d is "
					     "missing",
					     at->name, j);
			else if (number_graph(L, at->graphs[j], gi) < 0)
				return -1;
		return 0;
	default: return 0;
	}
}

/* Numbers g and (depth first, in node order) its subgraphs, and the
 * weights they name, in the order emit.c meets them. */
static int number_graph(Lower *L, const Graph *g, int32_t parent)
{
	OmLowered *l = L->l;
	if (l->ngraphs == INT32_MAX)
		return error("too many graphs");
	int32_t cap = L->capgraphs;
	int32_t gi = ARENA_PUSH(L->a, l->graphs, l->ngraphs, L->capgraphs);
	if (cap != L->capgraphs) { /* grow the others alongside */
		l->parents = arena_grow(L->a, l->parents, (size_t)cap,
					(size_t)L->capgraphs, sizeof(int32_t));
		l->subtree = arena_grow(L->a, l->subtree, (size_t)cap,
					(size_t)L->capgraphs, sizeof(int32_t));
	}
	l->graphs[gi] = g;
	l->parents[gi] = parent;
	index_put(&L->gmap, g, gi);
	for (int32_t i = 0; i < g->nvals; i++)
		if (number_value(L, &g->vals[i]) < 0)
			return error_prefix("graph '%s'", g->name);
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		for (int32_t k = 0; k < n->nattrs; k++)
			if (number_attr(L, &n->attrs[k], gi) < 0)
				return error_prefix("graph '%s': node '%s'",
						    g->name, n->name);
	}
	l->subtree[gi] = l->ngraphs - gi;
	return 0;
}

/* The graphs nest no deeper than the reader takes (serializer/check.c);
 * parents are numbered before their subgraphs. */
static int check_depth(Lower *L)
{
	const OmLowered *l = L->l;
	int32_t *depth = arena_array(L->a, (size_t)l->ngraphs, sizeof(int32_t));
	for (int32_t gi = 0; gi < l->ngraphs; gi++) {
		int32_t p = l->parents[gi];
		depth[gi] = p < 0 ? 0 : depth[p] + 1;
		if (depth[gi] > MAX_OM_GRAPH_DEPTH)
			return error("graph '%s': subgraphs are nested more "
				     "than %d levels deep", l->graphs[gi]->name,
				     MAX_OM_GRAPH_DEPTH);
	}
	return 0;
}

/* ---- source, options, gears, inputs and outputs ----------------------- */

static void lower_source(Lower *L, Gearom__Model *msg)
{
	const Model *m = L->m;
	Gearom__Producer *p = NEW(L->a, Gearom__Producer,
				  GEAROM__PRODUCER__INIT);
	p->name = "gearc";
	p->version = GEARC_VERSION;
	msg->producer = p;

	Gearom__Source *s = NEW(L->a, Gearom__Source, GEAROM__SOURCE__INIT);
	s->file = str(m->path);
	s->has_ir_version = s->has_model_version = 1;
	s->ir_version = m->ir_version;
	s->model_version = m->model_version;
	s->producer_name = str(m->producer_name);
	s->producer_version = str(m->producer_version);
	s->domain = str(m->domain);
	s->graph = m->graph_name ? (char *)m->graph_name : NULL;
	s->sha256 = m->sha256 ? (char *)m->sha256 : NULL;
	s->n_opsets = m->nopsets > 0 ? (size_t)m->nopsets : 0;
	s->opsets = arena_array(L->a, s->n_opsets, sizeof(*s->opsets));
	for (int32_t i = 0; i < m->nopsets; i++) {
		Gearom__Opset *o = NEW(L->a, Gearom__Opset,
				       GEAROM__OPSET__INIT);
		o->domain = str(m->opsets[i].domain);
		o->has_version = 1;
		o->version = m->opsets[i].version;
		s->opsets[i] = o;
	}
	msg->source = s;

	msg->n_options = m->noptions > 0 ? (size_t)m->noptions : 0;
	msg->options = arena_array(L->a, msg->n_options, sizeof(*msg->options));
	for (int32_t i = 0; i < m->noptions; i++) {
		Gearom__Option *o = NEW(L->a, Gearom__Option,
					GEAROM__OPTION__INIT);
		o->key = str(m->options[i].key);
		o->value = str(m->options[i].val);
		msg->options[i] = o;
	}
}

static void check_gearspec(const GearSpec *gs)
{
	if (gs->ngears < 0 || gs->nvals < 0 || gs->ninputs < 0 ||
	    (gs->ngears && gs->nvals && !gs->table))
		BUG("malformed gear spec");
	for (int32_t i = 0; i < gs->ninputs; i++) {
		const GearInput *in = &gs->inputs[i];
		if (in->shape.rank < 0 || in->shape.rank > MAX_RANK ||
		    in->ndyn < 0 || in->ndyn > in->shape.rank ||
		    in->first < 0 || in->first > gs->nvals - in->ndyn)
			BUG("malformed gear input %d", i);
		for (int32_t k = 0; k < in->ndyn; k++)
			if (in->dyn_axes[k] < 0 ||
			    in->dyn_axes[k] >= in->shape.rank ||
			    in->shape.dims[in->dyn_axes[k]] != -1)
				BUG("gear input %d: bad axis %d", i, k);
	}
}

static Gearom__ShapeInfo *shape_info(Lower *L, const char *name,
				     const Shape *s, int dtype)
{
	Gearom__ShapeInfo *o = NEW(L->a, Gearom__ShapeInfo,
				   GEAROM__SHAPE_INFO__INIT);
	o->name = str(name);
	o->has_rank = 1;
	o->rank = s->rank;
	o->dims = dims_dup(L->a, s, &o->n_dims);
	int64_t b = dtype == DT_STRING ? -1 : shape_bytes(s, dtype);
	if (b >= 0) {
		o->has_bytes = 1;
		o->bytes = (uint64_t)b;
	}
	return o;
}

/* The dtype of the root graph input named name, DT_UNDEFINED if none. */
static int root_input_dtype(const Graph *g, const char *name)
{
	for (int32_t k = 0; k < g->ninputs; k++) {
		ValId v = g->inputs[k];
		if (v >= 0 && v < g->nvals && !strcmp(g->vals[v].name, name))
			return g->vals[v].dtype;
	}
	return DT_UNDEFINED;
}

static void lower_gears(Lower *L, Gearom__Model *msg)
{
	const GearSpec *gs = L->m->gears;
	if (!gs)
		return;
	check_gearspec(gs);
	msg->n_gear_inputs = (size_t)gs->ninputs;
	msg->gear_inputs = arena_array(L->a, msg->n_gear_inputs,
				       sizeof(*msg->gear_inputs));
	int *dtype = arena_array(L->a, msg->n_gear_inputs, sizeof(int));
	for (int32_t i = 0; i < gs->ninputs; i++) {
		const GearInput *in = &gs->inputs[i];
		Gearom__GearInput *o = NEW(L->a, Gearom__GearInput,
					   GEAROM__GEAR_INPUT__INIT);
		o->name = str(in->name);
		o->shape = dims_dup(L->a, &in->shape, &o->n_shape);
		o->dyn_axes = ids_dup(L->a, in->dyn_axes, in->ndyn,
				      &o->n_dyn_axes);
		msg->gear_inputs[i] = o;
		dtype[i] = root_input_dtype(L->m->graph, o->name);
	}
	msg->n_gears = (size_t)gs->ngears;
	msg->gears = arena_array(L->a, msg->n_gears, sizeof(*msg->gears));
	for (int32_t g = 0; g < gs->ngears; g++) {
		Gearom__Gear *o = NEW(L->a, Gearom__Gear, GEAROM__GEAR__INIT);
		o->has_index = o->has_graph = 1;
		o->index = g;
		o->graph = -1;
		o->label = arena_printf(L->a, GEAR_LABEL, g);
		o->n_dims = (size_t)gs->nvals;
		o->dims = arena_memdup(L->a,
				       gs->table + (size_t)g * (size_t)gs->nvals,
				       o->n_dims * sizeof(int64_t));
		o->n_inputs = (size_t)gs->ninputs;
		o->inputs = arena_array(L->a, o->n_inputs, sizeof(*o->inputs));
		for (int32_t i = 0; i < gs->ninputs; i++) {
			Shape s = gear_input_shape(gs, i, g);
			o->inputs[i] = shape_info(L, gs->inputs[i].name, &s,
						  dtype[i]);
		}
		msg->gears[g] = o;
	}
}

/* A scope compile's output table (passes/scope.h): the gears have no
 * branch graph, Model.gear_outputs has their output shapes. */
static void lower_scope_outputs(Lower *L, Gearom__Model *msg)
{
	const Model *m = L->m;
	const Graph *root = m->graph;
	for (size_t g = 0; g < msg->n_gears; g++) {
		Gearom__Gear *o = msg->gears[g];
		o->n_outputs = root->noutputs > 0 ? (size_t)root->noutputs : 0;
		o->outputs = arena_array(L->a, o->n_outputs,
					 sizeof(*o->outputs));
		for (int32_t k = 0; k < root->noutputs; k++) {
			const Value *v = &root->vals[root->outputs[k]];
			const Shape *s = &m->gear_outputs[g * o->n_outputs +
							  (size_t)k];
			o->outputs[k] = shape_info(L, v->name, s, v->dtype);
		}
	}
}

/* Gear g's branch graph and its output table, once graphs are lowered. */
static void lower_gear_outputs(Lower *L, Gearom__Model *msg)
{
	const Model *m = L->m;
	if (!m->branches && m->gear_outputs) {
		lower_scope_outputs(L, msg);
		return;
	}
	for (size_t g = 0; m->branches && g < msg->n_gears; g++) {
		const Graph *b = m->branches[g];
		Gearom__Gear *o = msg->gears[g];
		o->graph = index_get(&L->gmap, b);
		if (o->graph < 0)
			BUG("gear %zu's branch is not in the model", g);
		o->n_outputs = b->noutputs > 0 ? (size_t)b->noutputs : 0;
		o->outputs = arena_array(L->a, o->n_outputs,
					 sizeof(*o->outputs));
		for (int32_t k = 0; k < b->noutputs; k++) {
			const Value *v = &b->vals[b->outputs[k]];
			o->outputs[k] = shape_info(L, v->name, &v->shape,
						   v->dtype);
		}
	}
}

/* Index in gs->inputs of the gear input named name, or -1. */
static int32_t gear_input_named(const GearSpec *gs, const char *name)
{
	for (int32_t k = 0; gs && k < gs->ninputs; k++)
		if (!strcmp(str(gs->inputs[k].name), name))
			return k;
	return -1;
}

static Gearom__IoInfo *io_info(Lower *L, const Value *v, bool input)
{
	const GearSpec *gs = L->m->gears;
	int32_t k = input ? gear_input_named(gs, v->name) : -1;
	Gearom__IoInfo *o = NEW(L->a, Gearom__IoInfo, GEAROM__IO_INFO__INIT);
	Shape s = k >= 0 ? gs->inputs[k].shape : v->shape, max = s;
	if (k >= 0 && gs->ngears > 0)
		max = gear_max_shape(gs, k);
	o->name = str(v->name);
	o->has_dtype = o->has_rank = 1;
	o->dtype = v->dtype;
	o->rank = s.rank;
	o->shape = dims_dup(L->a, &s, &o->n_shape);
	if (input)
		o->max_shape = dims_dup(L->a, &max, &o->n_max_shape);
	return o;
}

/* A scope compile's outputs: the gears' shapes merged by the scope pass
 * (Model.merged_outputs), which the root's inference may know less
 * precisely. */
static void scope_io_shapes(Lower *L, Gearom__Model *msg)
{
	for (size_t k = 0; k < msg->n_outputs; k++) {
		const Shape *s = &L->m->merged_outputs[k];
		Gearom__IoInfo *o = msg->outputs[k];
		o->rank = s->rank;
		o->shape = dims_dup(L->a, s, &o->n_shape);
	}
}

static void lower_io(Lower *L, Gearom__Model *msg)
{
	const Graph *g = L->m->graph;
	msg->inputs = arena_array(L->a, g->ninputs > 0 ? (size_t)g->ninputs : 0,
				  sizeof(*msg->inputs));
	for (int32_t k = 0; k < g->ninputs; k++) /* gear_dims is gearc's own */
		if (g->inputs[k] != L->m->gear_info)
			msg->inputs[msg->n_inputs++] =
				io_info(L, &g->vals[g->inputs[k]], true);
	msg->n_outputs = g->noutputs > 0 ? (size_t)g->noutputs : 0;
	msg->outputs = arena_array(L->a, msg->n_outputs, sizeof(*msg->outputs));
	for (int32_t k = 0; k < g->noutputs; k++)
		msg->outputs[k] = io_info(L, &g->vals[g->outputs[k]], false);
	if (!L->m->branches && L->m->gear_outputs)
		scope_io_shapes(L, msg);
}

static int check_root_io(const Graph *g)
{
	for (int32_t k = 0; k < g->ninputs; k++)
		if (g->inputs[k] < 0 || g->inputs[k] >= g->nvals)
			return error("graph '%s': input %d out of range",
				     g->name, k);
	for (int32_t k = 0; k < g->noutputs; k++)
		if (g->outputs[k] < 0 || g->outputs[k] >= g->nvals)
			return error("graph '%s': output %d out of range",
				     g->name, k);
	return 0;
}

static void lower_precision(Lower *L, Gearom__Model *msg)
{
	const Model *m = L->m;
	if (!m->precision_mode)
		return;
	Gearom__Precision *p = NEW(L->a, Gearom__Precision,
				   GEAROM__PRECISION__INIT);
	p->mode = arena_strdup(L->a, m->precision_mode);
	p->has_dtype = m->reduced != 0;
	p->dtype = m->reduced;
	msg->precision = p;
}

static void lower_batch_rows(Lower *L, Gearom__Model *msg)
{
	const BatchRows *br = L->m->batch_rows;
	if (!br)
		return;
	Gearom__BatchRows *o = NEW(L->a, Gearom__BatchRows,
				   GEAROM__BATCH_ROWS__INIT);
	if (br->mixer) {
		o->mixer = arena_strdup(L->a, br->mixer);
	} else {
		o->n_axis = msg->n_outputs;
		o->axis = arena_array(L->a, o->n_axis, sizeof(*o->axis));
		for (size_t k = 0; k < o->n_axis; k++)
			o->axis[k] = br->axis[k];
		o->n_input_axis = msg->n_inputs;
		o->input_axis = arena_array(L->a, o->n_input_axis,
					    sizeof(*o->input_axis));
		for (size_t k = 0; k < o->n_input_axis; k++)
			o->input_axis[k] = br->in_axis[k];
	}
	msg->batch_rows = o;
}

int om_lower(OmLowered *l, const Model *m)
{
	Lower L = { .m = m, .l = l };
	memset(l, 0, sizeof(*l));
	arena_init(&l->arena);
	L.a = &l->arena;
	if (!m->graph)
		return error("the model has no graph");
	if (m->mode < MODE_STATIC || m->mode > MODE_DIMS)
		BUG("bad gear mode %d", m->mode);
	if (check_root_io(m->graph) < 0)
		return -1;

	Gearom__Model *msg = NEW(L.a, Gearom__Model, GEAROM__MODEL__INIT);
	lower_source(&L, msg);
	msg->has_mode = 1;
	msg->mode = (Gearom__Mode)m->mode;
	lower_gears(&L, msg);
	int rc = number_graph(&L, m->graph, -1);
	if (!rc)
		rc = check_depth(&L);
	free(L.chash);
	free(L.cidx);
	if (rc < 0) {
		index_release(&L.gmap);
		return -1;
	}
	msg->has_root = 1;
	msg->root = 0;
	msg->n_weights = (size_t)L.nw;
	msg->weights = arena_array(L.a, msg->n_weights, sizeof(*msg->weights));
	l->weights = arena_array(L.a, msg->n_weights, sizeof(*l->weights));
	for (int32_t i = 0; i < L.nw; i++) {
		msg->weights[i] = L.wt[i].w;
		l->weights[i] = L.wt[i].w->has_data ? NULL : L.wt[i].t;
	}
	lower_io(&L, msg);
	lower_gear_outputs(&L, msg);
	lower_batch_rows(&L, msg);
	lower_precision(&L, msg);
	index_release(&L.gmap);

	l->msg = msg;
	l->nweights = L.nw;
	l->weights_size = L.wsize;
	return 0;
}

void om_lowered_release(OmLowered *l)
{
	index_release(&l->wmap);
	arena_release(&l->arena);
	memset(l, 0, sizeof(*l));
}
