/*
 * tests/test_emit.c - serializer/emit.c against protobuf-c (suite "emit").
 *
 * emit.c writes the gearom.Graph messages (Graph, Tensor, Node,
 * Attribute, MemoryPlan, MemBlock, each as a Model.graphs entry) by hand;
 * the rest of MODEL_DEF is packed by protobuf-c itself.  Here a model
 * sets every field of those messages to a value that is not its default
 * and differs from its neighbours', its graphs are emitted, and
 * protobuf-c's generated unpacker must read back each field as the IR
 * has it; protobuf-c's packer must then give the same bytes.  A field
 * under a wrong number or wire type fails one of the two.
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "serializer/omimpl.h"

/* ---- a model with every field set --------------------------------------- */

static const float wdata[6] = { 1, 2, 3, 4, 5, 6 };
static const int64_t idata[2] = { 7, 9 };
static const int32_t jdata[3] = { -1, 0, 1 };
static const float floats[] = { 1.5f, -2.25f };
static const int64_t ints[] = { 1, -2, INT64_MAX };
static const Bytes strings[] = { { 1, (const uint8_t *)"a" },
				 { 0, (const uint8_t *)"" },
				 { 3, (const uint8_t *)"xyz" } };

static ValId value(Graph *g, const char *name, ValKind kind, int dt,
		   int32_t rank, const int64_t *dims)
{
	ValId id = graph_add_value(g, name, kind);
	g->vals[id].dtype = dt;
	g->vals[id].shape = rank < 0 ? shape_unknown() : shape_of(rank, dims);
	return id;
}

static void set_io(Graph *g, const ValId *in, int32_t nin, const ValId *out,
		   int32_t nout)
{
	g->ninputs = nin;
	g->inputs = arena_memdup(g->arena, in, (size_t)nin * sizeof(ValId));
	g->noutputs = nout;
	g->outputs = arena_memdup(g->arena, out, (size_t)nout * sizeof(ValId));
}

/* sub(parent main): an outer reference with every Tensor field set, and
 * a Loop whose body is inner (so a parent other than the root). */
static Graph *sub_graph(Arena *a, Graph *main, ValId outer, const Tensor *t)
{
	Graph *g = graph_new(a, "sub", main);
	ValId o = value(g, "o", VAL_OUTER, DT_FLOAT, 1, (int64_t[]){ 5 });
	Value *v = &g->vals[o];
	v->outer = outer;
	v->konst = t;
	v->flags = VF_DATA_DEP;
	v->tkind = TK_OPTIONAL;
	v->dim_params = arena_array(a, 1, sizeof(char *));
	v->dim_params[0] = "L";
	ValId r = value(g, "r", VAL_NODE, DT_FLOAT, 1, (int64_t[]){ 5 });
	Graph *inner = graph_new(a, "inner", g);
	ValId i = value(inner, "i", VAL_INPUT, DT_INT32, 0, NULL);
	set_io(inner, &i, 1, &i, 1);
	Node *n = graph_add_node(g, "loop", "Loop", "", 1, 1);
	n->inputs[0] = o;
	n->outputs[0] = r;
	node_add_attr(g, n, "body", ATTR_GRAPH)->g = inner;
	set_io(g, &o, 1, &r, 1);
	return g;
}

/* Node 0 "custom": one attribute of each type. */
static void custom_attrs(Graph *g, Node *n, Graph **subs, const Tensor **ts)
{
	Arena *a = g->arena;
	node_add_attr(g, n, "f", ATTR_FLOAT)->f = 0.5f;
	node_add_attr(g, n, "i", ATTR_INT)->i = -42;
	Attr *at = node_add_attr(g, n, "s", ATTR_STRING);
	at->s = (Bytes){ 5, (const uint8_t *)"hel\0o" };
	node_add_attr(g, n, "t", ATTR_TENSOR)->t = ts[1];
	node_add_attr(g, n, "g", ATTR_GRAPH)->g = subs[0];
	at = node_add_attr(g, n, "floats", ATTR_FLOATS);
	at->n = 2;
	at->floats = floats;
	at = node_add_attr(g, n, "ints", ATTR_INTS);
	at->n = 3;
	at->ints = ints;
	at = node_add_attr(g, n, "strings", ATTR_STRINGS);
	at->n = 3;
	at->strings = strings;
	at = node_add_attr(g, n, "tensors", ATTR_TENSORS);
	at->n = 2;
	at->tensors = arena_array(a, 2, sizeof(Tensor *));
	at->tensors[0] = ts[2];
	at->tensors[1] = ts[0];
	at = node_add_attr(g, n, "graphs", ATTR_GRAPHS);
	at->n = 2;
	at->graphs = arena_array(a, 2, sizeof(Graph *));
	at->graphs[0] = subs[1];
	at->graphs[1] = subs[2];
}

/* Two blocks between them set every MemBlock field: a tensor written in
 * place over another's buffer, and a workspace. */
static MemPlan *plan(Arena *a)
{
	MemPlan *p = arena_alloc(a, sizeof(*p));
	p->norder = 2;
	p->order = arena_memdup(a, (int32_t[]){ 1, 0 }, 2 * sizeof(int32_t));
	p->nblocks = 2;
	p->blocks = arena_array(a, 2, sizeof(MemBlock));
	p->blocks[0] = (MemBlock){ .tensor = 3, .node = -1, .offset = 64,
				   .size = 128, .first = 1, .last = 2,
				   .alias_of = 2, .inplace = true };
	p->blocks[1] = (MemBlock){ .tensor = -1, .node = 1, .offset = 192,
				   .size = 256, .first = 3, .last = 4,
				   .alias_of = -1 };
	p->arena_bytes = 448;
	p->lower_bound_bytes = 320;
	p->naive_bytes = 512;
	p->unplanned = 5;
	return p;
}

/* main(x) -> z: custom(x, -1, w) -> (y, u), id(y) -> z; graphs main 0,
 * sub 1, inner 2, empty_a 3, empty_b 4. */
static Model *build(void)
{
	Model *m = model_new();
	Arena *a = &m->arena;
	Shape s23 = shape_of(2, (int64_t[]){ 2, 3 });
	Shape s2 = shape_of(1, (int64_t[]){ 2 });
	Shape s3 = shape_of(1, (int64_t[]){ 3 });
	const Tensor *ts[4] = {
		tensor_new(a, "w", DT_FLOAT, &s23, wdata),
		tensor_new(a, "i", DT_INT64, &s2, idata),
		tensor_new(a, "j", DT_INT32, &s3, jdata),
		tensor_new(a, "k", DT_INT64, &s2, idata),
	};
	Graph *g = m->graph = graph_new(a, "main", NULL);
	ValId x = value(g, "x", VAL_INPUT, DT_FLOAT, 2, (int64_t[]){ -1, 3 });
	g->vals[x].dim_params = arena_array(a, 2, sizeof(char *));
	g->vals[x].dim_params[0] = "N";
	ValId w = value(g, "w", VAL_WEIGHT, DT_FLOAT, 2, s23.dims);
	g->vals[w].konst = ts[0];
	ValId y = value(g, "y", VAL_NODE, DT_FLOAT, 2, (int64_t[]){ -1, 3 });
	ValId u = value(g, "u", VAL_NODE, DT_FLOAT, -1, NULL);
	g->vals[u].tkind = TK_SEQUENCE;
	ValId z = value(g, "z", VAL_NODE, DT_FLOAT, 2, (int64_t[]){ -1, 3 });
	g->vals[z].flags = VF_GRAPH_OUT;

	Graph *subs[3] = { sub_graph(a, g, y, ts[3]),
			   graph_new(a, "empty_a", g),
			   graph_new(a, "empty_b", g) };
	Node *n = graph_add_node(g, "custom", "Custom", "ai.test", 3, 2);
	n->inputs[0] = x;
	n->inputs[1] = -1;
	n->inputs[2] = w;
	n->outputs[0] = y;
	n->outputs[1] = u;
	n->label = "Batch_7";
	static const char *fused[] = { "conv_out", "bn_out" };
	n->fused = fused;
	n->nfused = 2;
	n->reduced = true;
	custom_attrs(g, n, subs, ts);
	n = graph_add_node(g, "id", "Identity", "", 1, 1);
	n->inputs[0] = y;
	n->outputs[0] = z;
	set_io(g, &x, 1, &z, 1);
	g->plan = plan(a);
	return m;
}

/* The lowered model's graphs, emitted: a Model with only graphs. */
typedef struct Emitted {
	OmLowered l;
	uint8_t *p;
	size_t n;
} Emitted;

static void emit_all(Emitted *e, const Model *m)
{
	memset(e, 0, sizeof(*e));
	cr_assert_eq(om_lower(&e->l, m), 0, "om_lower: %s", last_error());
	for (int32_t i = 0; i < e->l.ngraphs; i++) {
		OmBuf b = { 0 };
		cr_assert_eq(om_emit_graph(&e->l, i, &b), 0, "graph %d: %s", i,
			     last_error());
		e->p = realloc(e->p, e->n + b.n - b.start);
		memcpy(e->p + e->n, b.p + b.start, b.n - b.start);
		e->n += b.n - b.start;
		free(b.p);
	}
}

static void emitted_release(Emitted *e)
{
	om_lowered_release(&e->l);
	free(e->p);
}

/* ---- field by field ----------------------------------------------------- */

static int32_t graph_index(const OmLowered *l, const Graph *g)
{
	for (int32_t i = 0; i < l->ngraphs; i++)
		if (l->graphs[i] == g)
			return i;
	cr_assert_fail("graph '%s' was not lowered", g->name);
	return -1;
}

static void cmp_i64s(const int64_t *a, size_t n, const int64_t *b,
		     int32_t nb)
{
	cr_assert_eq(n, (size_t)(nb > 0 ? nb : 0));
	for (size_t k = 0; k < n; k++)
		cr_assert_eq(a[k], b[k], "entry %zu", k);
}

static void cmp_i32s(const int32_t *a, size_t n, const int32_t *b,
		     int32_t nb)
{
	cr_assert_eq(n, (size_t)(nb > 0 ? nb : 0));
	for (size_t k = 0; k < n; k++)
		cr_assert_eq(a[k], b[k], "entry %zu", k);
}

static void cmp_tensor(const OmLowered *l, const Value *v,
		       const Gearom__Tensor *o)
{
	cr_assert_str_eq(o->name, v->name);
	cr_assert(o->has_dtype && o->dtype == v->dtype, "%s", v->name);
	cr_assert(o->has_rank && o->rank == v->shape.rank, "%s", v->name);
	cmp_i64s(o->dims, o->n_dims, v->shape.dims, v->shape.rank);
	cr_assert(o->has_kind && (int)o->kind == v->kind, "%s", v->name);
	cr_assert_eq(o->has_weight, v->konst != NULL, "%s", v->name);
	if (v->konst)
		cr_assert_eq(o->weight, om_weight_index(l, v->konst));
	cr_assert_eq(o->has_outer, v->kind == VAL_OUTER, "%s", v->name);
	if (v->kind == VAL_OUTER)
		cr_assert_eq(o->outer, v->outer);
	cr_assert_eq(o->has_flags, v->flags != 0, "%s", v->name);
	cr_assert_eq(o->flags, v->flags, "%s", v->name);
	cr_assert_eq(o->has_type, v->tkind != 0, "%s", v->name);
	cr_assert_eq((int)o->type, v->tkind, "%s", v->name);
	cr_assert_eq(o->n_dim_params,
		     v->dim_params ? (size_t)v->shape.rank : 0);
	for (size_t k = 0; k < o->n_dim_params; k++)
		cr_assert_str_eq(o->dim_params[k],
				 v->dim_params[k] ? v->dim_params[k] : "");
}

static void cmp_bytes(const ProtobufCBinaryData *o, const Bytes *b)
{
	cr_assert_eq(o->len, b->len);
	cr_assert(!b->len || !memcmp(o->data, b->data, b->len));
}

/* The value fields of an attribute of type at->type; the others unset. */
static void cmp_attr(const OmLowered *l, const Attr *at,
		     const Gearom__Attribute *o)
{
	cr_assert_str_eq(o->name, at->name);
	cr_assert(o->has_type && o->type == (int32_t)at->type, "%s", at->name);
	cr_assert_eq(o->has_f, at->type == ATTR_FLOAT, "%s", at->name);
	cr_assert_eq(o->has_i, at->type == ATTR_INT, "%s", at->name);
	cr_assert_eq(o->has_s, at->type == ATTR_STRING, "%s", at->name);
	cr_assert_eq(o->has_t, at->type == ATTR_TENSOR, "%s", at->name);
	cr_assert_eq(o->has_g, at->type == ATTR_GRAPH, "%s", at->name);
	size_t n = at->n > 0 ? (size_t)at->n : 0;
	cr_assert_eq(o->n_floats, at->type == ATTR_FLOATS ? n : 0);
	cr_assert_eq(o->n_ints, at->type == ATTR_INTS ? n : 0);
	cr_assert_eq(o->n_strings, at->type == ATTR_STRINGS ? n : 0);
	cr_assert_eq(o->n_tensors, at->type == ATTR_TENSORS ? n : 0);
	cr_assert_eq(o->n_graphs, at->type == ATTR_GRAPHS ? n : 0);
	switch (at->type) {
	case ATTR_FLOAT: cr_assert_eq(o->f, at->f); break;
	case ATTR_INT: cr_assert_eq(o->i, at->i); break;
	case ATTR_STRING: cmp_bytes(&o->s, &at->s); break;
	case ATTR_TENSOR: cr_assert_eq(o->t, om_weight_index(l, at->t)); break;
	case ATTR_GRAPH: cr_assert_eq(o->g, graph_index(l, at->g)); break;
	case ATTR_FLOATS:
		cr_assert(!memcmp(o->floats, at->floats, n * sizeof(float)));
		break;
	case ATTR_INTS: cmp_i64s(o->ints, o->n_ints, at->ints, at->n); break;
	case ATTR_STRINGS:
		for (size_t j = 0; j < n; j++)
			cmp_bytes(&o->strings[j], &at->strings[j]);
		break;
	case ATTR_TENSORS:
		for (size_t j = 0; j < n; j++)
			cr_assert_eq(o->tensors[j],
				     om_weight_index(l, at->tensors[j]));
		break;
	case ATTR_GRAPHS:
		for (size_t j = 0; j < n; j++)
			cr_assert_eq(o->graphs[j],
				     graph_index(l, at->graphs[j]));
		break;
	default: cr_assert_fail("attribute type %d", at->type);
	}
}

static void cmp_node(const OmLowered *l, const Node *n, const Gearom__Node *o)
{
	cr_assert_str_eq(o->name, n->name);
	cr_assert_str_eq(o->op_type, n->op_type);
	cr_assert_str_eq(o->domain, n->domain);
	cmp_i32s(o->inputs, o->n_inputs, n->inputs, n->ninputs);
	cmp_i32s(o->outputs, o->n_outputs, n->outputs, n->noutputs);
	cr_assert_eq(o->n_attrs, (size_t)n->nattrs);
	for (int32_t k = 0; k < n->nattrs; k++)
		cmp_attr(l, &n->attrs[k], o->attrs[k]);
	if (n->label)
		cr_assert_str_eq(o->label, n->label);
	else
		cr_assert_null(o->label);
	cr_assert_eq(o->n_fused, (size_t)n->nfused);
	for (int32_t k = 0; k < n->nfused; k++)
		cr_assert_str_eq(o->fused[k], n->fused[k]);
}

static void cmp_block(const MemBlock *b, const Gearom__MemBlock *o)
{
	cr_assert(o->has_tensor && o->tensor == b->tensor);
	cr_assert(o->has_offset && o->offset == b->offset);
	cr_assert(o->has_size && o->size == b->size);
	cr_assert(o->has_first && o->first == b->first);
	cr_assert(o->has_last && o->last == b->last);
	cr_assert_eq(o->has_alias_of, b->alias_of >= 0);
	cr_assert_eq(o->alias_of, b->alias_of);
	cr_assert_eq(o->has_node, b->node >= 0);
	cr_assert_eq(o->node, b->node);
	cr_assert_eq(o->has_inplace, b->inplace);
	cr_assert_eq(o->inplace, b->inplace);
}

static void cmp_plan(const MemPlan *p, const Gearom__MemoryPlan *o)
{
	if (!p) {
		cr_assert_null(o);
		return;
	}
	cr_assert_not_null(o);
	cmp_i32s(o->order, o->n_order, p->order, p->norder);
	cr_assert_eq(o->n_blocks, (size_t)p->nblocks);
	for (int32_t k = 0; k < p->nblocks; k++)
		cmp_block(&p->blocks[k], o->blocks[k]);
	cr_assert(o->has_arena_bytes && o->arena_bytes == p->arena_bytes);
	cr_assert(o->has_lower_bound_bytes &&
		  o->lower_bound_bytes == p->lower_bound_bytes);
	cr_assert(o->has_naive_bytes && o->naive_bytes == p->naive_bytes);
	cr_assert(o->has_unplanned && o->unplanned == (uint32_t)p->unplanned);
}

static void cmp_graph(const OmLowered *l, int32_t gi, const Gearom__Graph *o)
{
	const Graph *g = l->graphs[gi];
	cr_assert_str_eq(o->name, g->name);
	cr_assert_eq(o->has_parent, l->parents[gi] >= 0, "graph %d", gi);
	cr_assert_eq(o->parent, l->parents[gi], "graph %d", gi);
	cr_assert_eq(o->n_tensors, (size_t)g->nvals);
	for (int32_t i = 0; i < g->nvals; i++)
		cmp_tensor(l, &g->vals[i], o->tensors[i]);
	cr_assert_eq(o->n_nodes, (size_t)g->nnodes);
	for (int32_t i = 0; i < g->nnodes; i++)
		cmp_node(l, &g->nodes[i], o->nodes[i]);
	cmp_i32s(o->inputs, o->n_inputs, g->inputs, g->ninputs);
	cmp_i32s(o->outputs, o->n_outputs, g->outputs, g->noutputs);
	cmp_plan(g->plan, o->plan);
}

/* ---- every field seen --------------------------------------------------- */

/* The fields set in some message of each type met. */
typedef struct Seen {
	const ProtobufCMessageDescriptor *d[16];
	uint64_t set[16];
	int n;
} Seen;

static uint64_t *seen_of(Seen *s, const ProtobufCMessageDescriptor *d)
{
	for (int i = 0; i < s->n; i++)
		if (s->d[i] == d)
			return &s->set[i];
	cr_assert_lt(s->n, 16);
	s->d[s->n] = d;
	return &s->set[s->n++];
}

static bool field_set(const ProtobufCMessage *m,
		      const ProtobufCFieldDescriptor *f)
{
	const char *p = (const char *)m;
	if (f->label == PROTOBUF_C_LABEL_REPEATED)
		return *(const size_t *)(p + f->quantifier_offset) > 0;
	if (f->type == PROTOBUF_C_TYPE_STRING ||
	    f->type == PROTOBUF_C_TYPE_MESSAGE)
		return *(const void *const *)(p + f->offset) != NULL;
	return *(const protobuf_c_boolean *)(p + f->quantifier_offset);
}

static void walk(Seen *s, const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	uint64_t *set = seen_of(s, d);
	cr_assert_lt(d->n_fields, 64);
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (!field_set(m, f))
			continue;
		*set |= 1ull << i;
		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		const char *p = (const char *)m;
		ProtobufCMessage *const *v =
			(ProtobufCMessage *const *)(p + f->offset);
		size_t n = 1;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			v = *(ProtobufCMessage *const *const *)v;
			n = *(const size_t *)(p + f->quantifier_offset);
		}
		for (size_t k = 0; k < n; k++)
			walk(s, v[k]);
	}
}

/* Every field of d was set somewhere. */
static void all_seen(Seen *s, const ProtobufCMessageDescriptor *d)
{
	uint64_t set = *seen_of(s, d);
	for (unsigned i = 0; i < d->n_fields; i++)
		cr_assert(set >> i & 1, "no %s had %s set", d->name,
			  d->fields[i].name);
}

/* ---- tests -------------------------------------------------------------- */

Test(emit, every_field_unpacks)
{
	Model *m = build();
	Emitted e;
	emit_all(&e, m);
	cr_assert_eq(e.l.ngraphs, 5);
	Gearom__Model *o = gearom__model__unpack(NULL, e.n, e.p);
	cr_assert_not_null(o, "protobuf-c cannot unpack what emit.c wrote");
	cr_assert_eq(o->n_graphs, (size_t)e.l.ngraphs);
	for (int32_t i = 0; i < e.l.ngraphs; i++)
		cmp_graph(&e.l, i, o->graphs[i]);

	Seen s = { 0 };
	walk(&s, &o->base);
	const ProtobufCMessageDescriptor *md = &gearom__model__descriptor;
	const ProtobufCFieldDescriptor *graphs =
		protobuf_c_message_descriptor_get_field_by_name(md, "graphs");
	cr_assert_eq(*seen_of(&s, md), 1ull << (graphs - md->fields),
		     "emit.c writes Model.graphs alone");
	all_seen(&s, &gearom__graph__descriptor);
	all_seen(&s, &gearom__tensor__descriptor);
	all_seen(&s, &gearom__node__descriptor);
	all_seen(&s, &gearom__attribute__descriptor);
	all_seen(&s, &gearom__memory_plan__descriptor);
	all_seen(&s, &gearom__mem_block__descriptor);

	gearom__model__free_unpacked(o, NULL);
	emitted_release(&e);
	model_free(m);
}

/* Fields in number order, packed repeated scalars, minimal lengths:
 * protobuf-c packs what it unpacked to the bytes emit.c wrote. */
Test(emit, same_bytes_as_protobuf_c)
{
	Model *m = build();
	Emitted e;
	emit_all(&e, m);
	Gearom__Model *o = gearom__model__unpack(NULL, e.n, e.p);
	cr_assert_not_null(o);
	size_t n = gearom__model__get_packed_size(o);
	cr_assert_eq(n, e.n);
	uint8_t *p = malloc(n);
	cr_assert_eq(gearom__model__pack(o, p), n);
	size_t k = 0;
	while (k < n && p[k] == e.p[k])
		k++;
	cr_assert_eq(k, n, "protobuf-c and emit.c differ at byte %zu", k);
	free(p);
	gearom__model__free_unpacked(o, NULL);
	emitted_release(&e);
	model_free(m);
}
