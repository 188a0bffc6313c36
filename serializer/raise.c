/* serializer/raise.c - a checked .om file back into the IR (raise.h). */
#include <stdlib.h>
#include <string.h>

#include "omimpl.h"
#include "omread.h"
#include "raise.h"

typedef struct Raise {
	const OmFile *f;
	const Gearom__Model *msg;
	Model *m;
	Arena *a;
	const Tensor **weights; /* per Model.weights, raised when first used */
	Graph **graphs;		/* per Model.graphs */
	int32_t *gear_of;	/* lazy: per graph, om_graph_gears's gear */
	bool *raised;		/* lazy: per gear, its graphs raised */
} Raise;

/* A string tensor's u64-length layout (checked by the reader) as Bytes
 * pointing into the file. */
static const void *unpack_strings(Raise *R, const uint8_t *p, int64_t numel)
{
	Bytes *b = arena_array(R->a, (size_t)numel, sizeof(Bytes));
	uint64_t at = 0;
	for (int64_t i = 0; i < numel; i++) {
		b[i].len = (size_t)om_get_u64(p + at);
		b[i].data = p + at + 8;
		at += 8 + b[i].len;
	}
	return b;
}

static const Tensor *raise_weight(Raise *R, const Gearom__Weight *w)
{
	Tensor *t = arena_alloc(R->a, sizeof(*t));
	t->name = w->name;
	t->dtype = w->dtype;
	t->shape = shape_of((int32_t)w->n_dims, w->dims);
	int64_t numel = shape_numel(&t->shape);
	if (w->has_data) { /* inline: the message's copy, 16-byte aligned */
		t->folded = true;
		t->nbytes = w->data.len;
		t->data = w->data.len ? w->data.data : (const void *)"";
		if ((uintptr_t)t->data % 16)
			t->data = arena_memdup(R->a, t->data, w->data.len);
	} else if (w->dtype == DT_STRING) {
		t->nbytes = (size_t)numel * sizeof(Bytes);
		t->data = unpack_strings(R, R->f->weights + w->offset, numel);
	} else if (w->has_stored_dtype) { /* float16 bytes, widened */
		float *f = arena_array(R->a, (size_t)numel + 1, sizeof(float));
		const uint16_t *h = numel ? (const void *)(R->f->weights +
							   w->offset)
					  : NULL; /* no bytes: maybe none */
		half_to_float_n(h, f, (size_t)numel);
		t->nbytes = (size_t)numel * sizeof(float);
		t->data = f;
		t->from_half = true;
		/* a runtime's file: the float16 bytes are read for the last
		 * time (no two weights overlap: check.c) */
		if (R->f->in_arena && numel)
			filemap_drop((FileMap *)(uintptr_t)&R->f->map,
				     (size_t)(R->f->weights - R->f->map.data) +
					     (size_t)w->offset,
				     (size_t)w->size);
	} else {
		t->nbytes = (size_t)w->size;
		t->data = w->size ? R->f->weights + w->offset
				  : arena_alloc(R->a, 1);
	}
	return t;
}

/* Weight k, raised on its first use. */
static const Tensor *weight(Raise *R, int32_t k)
{
	if (!R->weights[k])
		R->weights[k] = raise_weight(R, R->msg->weights[k]);
	return R->weights[k];
}

static void raise_value(Raise *R, Graph *g, const Gearom__Tensor *t)
{
	static const ValKind kinds[] = { VAL_NODE, VAL_INPUT, VAL_WEIGHT,
					 VAL_OUTER };
	ValId id = graph_add_value(g, t->name, kinds[t->kind]);
	Value *v = &g->vals[id];
	v->dtype = t->dtype;
	v->tkind = (uint8_t)t->type;
	v->flags = (uint16_t)t->flags;
	v->shape = shape_of(t->rank, t->dims);
	v->outer = t->outer;
	v->konst = t->weight >= 0 ? weight(R, t->weight) : NULL;
	if (t->n_dim_params) {
		const char **dp = arena_array(g->arena, t->n_dim_params,
					      sizeof(char *));
		for (size_t k = 0; k < t->n_dim_params; k++)
			dp[k] = *t->dim_params[k] ? t->dim_params[k] : NULL;
		v->dim_params = dp;
	}
}

static void *dup_or_null(Arena *a, const void *p, size_t n, size_t size)
{
	return n ? arena_memdup(a, p, n * size) : NULL;
}

static void raise_attr(Raise *R, Graph *g, Node *n, const Gearom__Attribute *x)
{
	Attr *a = node_add_attr(g, n, x->name, (AttrType)x->type);
	Arena *ar = g->arena;
	a->f = x->f;
	a->i = x->i;
	if (x->has_s) { /* NUL-terminated, as the importer stores strings */
		char *s = arena_alloc(ar, x->s.len + 1);
		if (x->s.len)
			memcpy(s, x->s.data, x->s.len);
		a->s.len = x->s.len;
		a->s.data = (const uint8_t *)s;
	}
	if (x->t >= 0)
		a->t = weight(R, x->t);
	if (x->g >= 0)
		a->g = R->graphs[x->g];
	switch (a->type) {
	case ATTR_FLOATS:
		a->n = (int32_t)x->n_floats;
		a->floats = dup_or_null(ar, x->floats, x->n_floats, sizeof(float));
		break;
	case ATTR_INTS:
		a->n = (int32_t)x->n_ints;
		a->ints = dup_or_null(ar, x->ints, x->n_ints, sizeof(int64_t));
		break;
	case ATTR_STRINGS: {
		Bytes *b = arena_array(ar, x->n_strings, sizeof(Bytes));
		for (size_t k = 0; k < x->n_strings; k++) {
			b[k].len = x->strings[k].len;
			b[k].data = dup_or_null(ar, x->strings[k].data,
						x->strings[k].len, 1);
		}
		a->n = (int32_t)x->n_strings;
		a->strings = b;
		break;
	}
	case ATTR_TENSORS: {
		const Tensor **ts = arena_array(ar, x->n_tensors, sizeof(*ts));
		for (size_t k = 0; k < x->n_tensors; k++)
			ts[k] = weight(R, x->tensors[k]);
		a->n = (int32_t)x->n_tensors;
		a->tensors = ts;
		break;
	}
	case ATTR_GRAPHS: {
		Graph **gs = arena_array(ar, x->n_graphs, sizeof(*gs));
		for (size_t k = 0; k < x->n_graphs; k++)
			gs[k] = R->graphs[x->graphs[k]];
		a->n = (int32_t)x->n_graphs;
		a->graphs = gs;
		break;
	}
	default: break;
	}
}

static void raise_node(Raise *R, Graph *g, const Gearom__Node *x)
{
	Node *n = graph_add_node(g, x->name, x->op_type, x->domain,
				 (int32_t)x->n_inputs, (int32_t)x->n_outputs);
	int32_t idx = (int32_t)(n - g->nodes);
	for (size_t k = 0; k < x->n_inputs; k++)
		n->inputs[k] = x->inputs[k];
	for (size_t k = 0; k < x->n_outputs; k++)
		n->outputs[k] = x->outputs[k];
	if (x->label)
		n->label = arena_strdup(g->arena, x->label);
	n->reduced = x->has_reduced && x->reduced;
	if (x->n_fused) {
		n->fused = arena_array(g->arena, x->n_fused, sizeof(char *));
		for (size_t k = 0; k < x->n_fused; k++)
			n->fused[k] = arena_strdup(g->arena, x->fused[k]);
		n->nfused = (int32_t)x->n_fused;
	}
	for (size_t k = 0; k < x->n_attrs; k++)
		raise_attr(R, g, n, x->attrs[k]);
	for (size_t k = 0; k < x->n_outputs; k++)
		if (x->outputs[k] >= 0)
			g->vals[x->outputs[k]].producer = idx;
}

static MemPlan *raise_plan(Arena *a, const Gearom__MemoryPlan *x)
{
	MemPlan *p = arena_alloc(a, sizeof(*p));
	p->norder = (int32_t)x->n_order;
	p->order = dup_or_null(a, x->order, x->n_order, sizeof(int32_t));
	p->nblocks = (int32_t)x->n_blocks;
	p->blocks = arena_array(a, x->n_blocks, sizeof(MemBlock));
	for (size_t k = 0; k < x->n_blocks; k++) {
		const Gearom__MemBlock *b = x->blocks[k];
		p->blocks[k] = (MemBlock){ .tensor = b->node >= 0 ? -1 : b->tensor,
					   .node = b->node,
					   .offset = b->offset,
					   .size = b->size,
					   .first = b->first,
					   .last = b->last,
					   .alias_of = b->alias_of,
					   .inplace = b->inplace };
	}
	p->arena_bytes = x->arena_bytes;
	p->lower_bound_bytes = x->lower_bound_bytes;
	p->naive_bytes = x->naive_bytes;
	p->unplanned = (int32_t)x->unplanned;
	return p;
}

static void raise_graph(Raise *R, int32_t gi)
{
	const Gearom__Graph *x = R->msg->graphs[gi];
	Graph *g = R->graphs[gi];
	g->parent = x->parent >= 0 ? R->graphs[x->parent] : NULL;
	for (size_t k = 0; k < x->n_tensors; k++)
		raise_value(R, g, x->tensors[k]);
	for (size_t k = 0; k < x->n_nodes; k++)
		raise_node(R, g, x->nodes[k]);
	g->ninputs = (int32_t)x->n_inputs;
	g->inputs = dup_or_null(g->arena, x->inputs, x->n_inputs, sizeof(ValId));
	g->noutputs = (int32_t)x->n_outputs;
	g->outputs = dup_or_null(g->arena, x->outputs, x->n_outputs,
				 sizeof(ValId));
	if (x->plan)
		g->plan = raise_plan(g->arena, x->plan);
}

static void raise_source(Raise *R)
{
	const Gearom__Model *x = R->msg;
	const Gearom__Source *s = x->source;
	Model *m = R->m;
	m->path = arena_strdup(R->a, s->file);
	m->ir_version = s->ir_version;
	m->model_version = s->model_version;
	m->producer_name = arena_strdup(R->a, s->producer_name);
	m->producer_version = arena_strdup(R->a, s->producer_version);
	m->domain = arena_strdup(R->a, s->domain);
	/* NULL in a file written before it was kept, whose root has it */
	m->graph_name = s->graph ? arena_strdup(R->a, s->graph) : NULL;
	m->sha256 = s->sha256 ? arena_strdup(R->a, s->sha256) : NULL;
	m->nopsets = (int32_t)s->n_opsets;
	m->opsets = arena_array(R->a, s->n_opsets, sizeof(Opset));
	for (size_t k = 0; k < s->n_opsets; k++) {
		m->opsets[k].domain = arena_strdup(R->a, s->opsets[k]->domain);
		m->opsets[k].version = s->opsets[k]->version;
	}
	for (size_t k = 0; k < x->n_options; k++)
		model_add_option(m, x->options[k]->key, x->options[k]->value);
	m->mode = (int32_t)x->mode;
}

/* The root input called name, or -1. */
static ValId root_input(const Graph *g, const char *name)
{
	for (int32_t k = 0; k < g->ninputs; k++)
		if (!strcmp(g->vals[g->inputs[k]].name, name))
			return g->inputs[k];
	return -1;
}

/* Model.gears (the inputs only if they account for every gear value),
 * Model.branches and Model.gear_info. */
static void raise_gears(Raise *R)
{
	const Gearom__Model *x = R->msg;
	Model *m = R->m;
	if (!x->n_gears)
		return;
	GearSpec *gs = arena_alloc(R->a, sizeof(*gs));
	gs->mode = m->mode;
	gs->ngears = (int32_t)x->n_gears;
	gs->nvals = (int32_t)x->gears[0]->n_dims;
	gs->table = arena_array(R->a, x->n_gears * (size_t)gs->nvals,
				sizeof(int64_t));
	m->branches = arena_array(R->a, x->n_gears, sizeof(Graph *));
	for (size_t g = 0; g < x->n_gears; g++) {
		if (gs->nvals)
			memcpy(gs->table + g * (size_t)gs->nvals, x->gears[g]->dims,
			       (size_t)gs->nvals * sizeof(int64_t));
		m->branches[g] = x->gears[g]->graph >= 0
					 ? R->graphs[x->gears[g]->graph]
					 : NULL;
	}
	GearInput *in = arena_array(R->a, x->n_gear_inputs, sizeof(*in));
	int32_t first = 0;
	for (size_t k = 0; k < x->n_gear_inputs; k++) {
		const Gearom__GearInput *gi = x->gear_inputs[k];
		in[k].name = arena_strdup(R->a, gi->name);
		in[k].val = root_input(m->graph, gi->name);
		in[k].shape = shape_of((int32_t)gi->n_shape, gi->shape);
		in[k].ndyn = (int32_t)gi->n_dyn_axes;
		for (size_t j = 0; j < gi->n_dyn_axes && j < MAX_RANK; j++)
			in[k].dyn_axes[j] = gi->dyn_axes[j];
		in[k].first = first;
		first += in[k].ndyn;
	}
	if (first == gs->nvals) {
		gs->ninputs = (int32_t)x->n_gear_inputs;
		gs->inputs = in;
	}
	m->gears = gs;
	/* gear_dims: the root input the model's input list leaves out. */
	const Graph *root = m->graph;
	for (int32_t k = 0; k < root->ninputs; k++) {
		bool listed = false;
		for (size_t i = 0; i < x->n_inputs && !listed; i++)
			listed = !strcmp(x->inputs[i]->name,
					 root->vals[root->inputs[k]].name);
		if (!listed)
			m->gear_info = root->inputs[k];
	}
}

/* A gear branch left to om_raise_gear: a graph holding only its outputs'
 * values (as inputs, so the IR's invariants hold), what a Case choosing
 * it reads. */
static void raise_shell(Raise *R, int32_t gi)
{
	const Gearom__Graph *x = R->msg->graphs[gi];
	Graph *g = R->graphs[gi];
	g->parent = R->graphs[x->parent];
	g->noutputs = (int32_t)x->n_outputs;
	g->outputs = arena_array(g->arena, x->n_outputs + 1, sizeof(ValId));
	for (size_t k = 0; k < x->n_outputs; k++) {
		const Gearom__Tensor *t = x->tensors[x->outputs[k]];
		ValId v = -1;
		for (size_t j = 0; j < k && v < 0; j++)
			if (x->outputs[j] == x->outputs[k])
				v = g->outputs[j];
		if (v < 0) {
			v = graph_add_value(g, t->name, VAL_INPUT);
			g->vals[v].dtype = t->dtype;
			g->vals[v].tkind = (uint8_t)t->type;
			g->vals[v].flags = (uint16_t)t->flags;
			g->vals[v].shape = shape_of(t->rank, t->dims);
		}
		g->outputs[k] = v;
	}
}

static Raise *raise_new(const OmFile *f, bool lazy)
{
	const Gearom__Model *x = f->model;
	Raise *R = xmalloc(sizeof(*R));
	*R = (Raise){ .f = f, .msg = x, .m = model_new() };
	R->a = &R->m->arena;
	R->weights = arena_array(R->a, x->n_weights + 1, sizeof(*R->weights));
	R->graphs = arena_array(R->a, x->n_graphs, sizeof(*R->graphs));
	for (size_t k = 0; k < x->n_graphs; k++)
		R->graphs[k] = graph_new(R->a, x->graphs[k]->name, NULL);
	if (lazy) {
		R->gear_of = om_graph_gears(x);
		R->raised = xcalloc(x->n_gears + 1, sizeof(bool));
	}
	for (size_t k = 0; k < x->n_graphs; k++) {
		int32_t g = lazy ? R->gear_of[k] : -1;
		if (g < 0)
			raise_graph(R, (int32_t)k);
		else if (x->gears[g]->graph == (int32_t)k)
			raise_shell(R, (int32_t)k);
	}
	raise_source(R);
	R->m->graph = R->graphs[x->root];
	raise_gears(R);
	return R;
}

void om_raise_free(Raise *R)
{
	if (!R)
		return;
	free(R->gear_of);
	free(R->raised);
	free(R);
}

Model *om_to_model(const OmFile *f)
{
	Raise *R = raise_new(f, false);
	Model *m = R->m;
	om_raise_free(R);
	if (graph_verify(m->graph) < 0) {
		model_free(m);
		return NULL;
	}
	return m;
}

Model *om_to_model_lazy(const OmFile *f, Raise **r)
{
	Raise *R = raise_new(f, true);
	Model *m = R->m;
	*r = NULL;
	if (graph_verify(m->graph) < 0) {
		model_free(m);
		om_raise_free(R);
		return NULL;
	}
	*r = R;
	return m;
}

int om_raise_gear(Raise *R, size_t g)
{
	const Gearom__Model *x = R->msg;
	int32_t b = x->gears[g]->graph;
	if (b < 0 || R->raised[g])
		return 0;
	Graph *br = R->graphs[b], *parent = br->parent;
	*br = *graph_new(R->a, x->graphs[b]->name, parent); /* the shell's
							   * values go */
	for (size_t k = 0; k < x->n_graphs; k++)
		if (R->gear_of[k] == R->gear_of[b])
			raise_graph(R, (int32_t)k);
	for (size_t k = 0; k < x->n_gears; k++)
		R->raised[k] |= x->gears[k]->graph == b;
	return graph_verify(br);
}
