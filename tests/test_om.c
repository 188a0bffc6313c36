/* tests/test_om.c - the .om writer and checked reader (suite "om"). */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serializer/omimpl.h"
#include "serializer/raise.h"

/* ---- building models --------------------------------------------------- */

static const float wdata[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
static const int64_t t2data[2] = { 7, 9 };
static const int32_t t3data[3] = { -1, 0, 1 };

static Value *val(Graph *g, ValId id, int dt, int32_t rank,
		  const int64_t *dims)
{
	Value *v = &g->vals[id];
	v->dtype = dt;
	v->shape = rank < 0 ? shape_unknown() : shape_of(rank, dims);
	return v;
}

static ValId add_weight(Graph *g, const char *name, const Tensor *t)
{
	ValId id = graph_add_value(g, name, VAL_WEIGHT);
	Value *v = val(g, id, t->dtype, t->shape.rank, t->shape.dims);
	v->konst = t;
	return id;
}

static void set_io(Graph *g, ValId *in, int32_t nin, ValId *out,
		   int32_t nout)
{
	g->ninputs = nin;
	g->inputs = arena_memdup(g->arena, in, (size_t)nin * sizeof(ValId));
	g->noutputs = nout;
	g->outputs = arena_memdup(g->arena, out, (size_t)nout * sizeof(ValId));
}

/* An outer reference in sub to value `outer` of sub's parent. */
static ValId add_outer(Graph *sub, ValId outer)
{
	const Value *pv = &sub->parent->vals[outer];
	ValId id = graph_add_value(sub, pv->name, VAL_OUTER);
	Value *v = val(sub, id, pv->dtype, pv->shape.rank, pv->shape.dims);
	v->outer = outer;
	return id;
}

typedef struct Fixture {
	Model *m;
	Graph *g, *then_g, *else_g, *inner, *body;
	const Tensor *w, *names, *t2, *t3;
} Fixture;

/* main(x, cond) -> (z, names):
 *   0 mm: MatMul(x, W) -> y
 *   1 if: If(cond) then {Identity(y)} else {Add(y, Constant c), Loop
 *         {inner: Identity(c)}} -> z
 *   2 custom: every attribute type, a label, a body subgraph.
 * W is used by two values and an attribute; graphs are numbered
 * main 0, then 1, else 2, inner 3, body 4. */
static Fixture build(void)
{
	Fixture f = { 0 };
	Model *m = f.m = model_new();
	Arena *a = &m->arena;
	m->path = "models/t.onnx";
	m->ir_version = 8;
	m->model_version = 3;
	m->producer_name = "pytorch";
	m->producer_version = "2.1";
	m->domain = "test.domain";
	m->nopsets = 2;
	m->opsets = arena_array(a, 2, sizeof(Opset));
	m->opsets[0] = (Opset){ "", 13 };
	m->opsets[1] = (Opset){ "com.microsoft", 1 };
	model_add_option(m, "model", "t.onnx");
	model_add_option(m, "output", "out");

	Shape s33 = shape_of(2, (int64_t[]){ 3, 3 });
	Shape s2 = shape_of(1, (int64_t[]){ 2 });
	Shape s3 = shape_of(1, (int64_t[]){ 3 });
	f.w = tensor_new(a, "W", DT_FLOAT, &s33, wdata);
	static const char *strs[] = { "ab", "", "hello" };
	Bytes b[3];
	for (int i = 0; i < 3; i++)
		b[i] = (Bytes){ strlen(strs[i]), (const uint8_t *)strs[i] };
	f.names = tensor_new(a, "names", DT_STRING, &s3, b);
	f.t2 = tensor_new(a, "c", DT_INT64, &s2, t2data);
	f.t3 = tensor_new(a, NULL, DT_INT32, &s3, t3data);

	Graph *g = f.g = graph_new(a, "main", NULL);
	m->graph = g;
	int64_t d_n3[] = { -1, 3 };
	ValId x = graph_add_value(g, "x", VAL_INPUT);
	Value *xv = val(g, x, DT_FLOAT, 2, d_n3);
	xv->dim_params = arena_array(a, 2, sizeof(char *));
	xv->dim_params[0] = "N";
	ValId cond = graph_add_value(g, "cond", VAL_INPUT);
	val(g, cond, DT_BOOL, 0, NULL);
	ValId w = add_weight(g, "W", f.w);
	ValId w2 = add_weight(g, "W_alias", f.w);
	ValId y = graph_add_value(g, "y", VAL_NODE);
	val(g, y, DT_FLOAT, 2, d_n3);
	ValId z = graph_add_value(g, "z", VAL_NODE);
	Value *zv = val(g, z, DT_FLOAT, -1, NULL);
	zv->flags = VF_DATA_DEP | VF_GRAPH_OUT;
	zv->tkind = TK_SEQUENCE;
	ValId names = add_weight(g, "names", f.names);
	ValId u = graph_add_value(g, "u", VAL_NODE);
	val(g, u, DT_FLOAT, 2, (int64_t[]){ 3, 3 });

	Node *n = graph_add_node(g, "mm", "MatMul", "", 2, 1);
	n->inputs[0] = x;
	n->inputs[1] = w;
	n->outputs[0] = y;

	/* then: Identity(y) */
	Graph *tg = f.then_g = graph_new(a, "then", g);
	ValId ty = add_outer(tg, y);
	ValId to = graph_add_value(tg, "t_out", VAL_NODE);
	val(tg, to, DT_FLOAT, 2, d_n3);
	n = graph_add_node(tg, "id", "Identity", "", 1, 1);
	n->inputs[0] = ty;
	n->outputs[0] = to;
	set_io(tg, NULL, 0, &to, 1);

	/* else: Add(y, Constant c); Loop with body inner: Identity(c) */
	Graph *eg = f.else_g = graph_new(a, "else", g);
	ValId ey = add_outer(eg, y);
	ValId c = graph_add_value(eg, "c", VAL_NODE);
	val(eg, c, DT_INT64, 1, (int64_t[]){ 2 })->konst = f.t2;
	ValId eo = graph_add_value(eg, "e_out", VAL_NODE);
	val(eg, eo, DT_FLOAT, 2, d_n3);
	ValId lo = graph_add_value(eg, "l_out", VAL_NODE);
	n = graph_add_node(eg, "const", "Constant", "", 0, 1);
	n->outputs[0] = c;
	node_add_attr(eg, n, "value", ATTR_TENSOR)->t = f.t2;
	n = graph_add_node(eg, "add", "Add", "", 2, 1);
	n->inputs[0] = ey;
	n->inputs[1] = c;
	n->outputs[0] = eo;
	Graph *ig = f.inner = graph_new(a, "inner", eg);
	ValId ic = add_outer(ig, c);
	ValId io = graph_add_value(ig, "i_out", VAL_NODE);
	n = graph_add_node(ig, "iid", "Identity", "", 1, 1);
	n->inputs[0] = ic;
	n->outputs[0] = io;
	set_io(ig, NULL, 0, &io, 1);
	n = graph_add_node(eg, "loop", "Loop", "", 3, 1);
	n->outputs[0] = lo;
	Attr *at = node_add_attr(eg, n, "bodies", ATTR_GRAPHS);
	at->n = 1;
	at->graphs = arena_array(a, 1, sizeof(Graph *));
	at->graphs[0] = ig;
	set_io(eg, NULL, 0, &eo, 1);

	n = graph_add_node(g, "if", "If", "", 1, 1);
	n->inputs[0] = cond;
	n->outputs[0] = z;
	node_add_attr(g, n, "then_branch", ATTR_GRAPH)->g = tg;
	node_add_attr(g, n, "else_branch", ATTR_GRAPH)->g = eg;

	/* custom: one attribute of each type */
	Graph *bg = f.body = graph_new(a, "body", g);
	ValId bi = graph_add_value(bg, "b_in", VAL_INPUT);
	val(bg, bi, DT_INT32, 1, (int64_t[]){ 3 });
	set_io(bg, &bi, 1, &bi, 1);
	n = graph_add_node(g, "custom", "Custom", "ai.test", 2, 2);
	n->inputs[0] = -1;
	n->inputs[1] = w2;
	n->outputs[0] = u;
	n->label = "Batch_0";
	node_add_attr(g, n, "f", ATTR_FLOAT)->f = 0.5f;
	node_add_attr(g, n, "i", ATTR_INT)->i = -42;
	at = node_add_attr(g, n, "s", ATTR_STRING);
	at->s = (Bytes){ 5, (const uint8_t *)"hel\0o" };
	node_add_attr(g, n, "t", ATTR_TENSOR)->t = f.t3;
	node_add_attr(g, n, "g", ATTR_GRAPH)->g = bg;
	static const float fl[] = { 1.5f, -2.25f };
	at = node_add_attr(g, n, "floats", ATTR_FLOATS);
	at->n = 2;
	at->floats = fl;
	static const int64_t in[] = { 1, -2, INT64_MAX };
	at = node_add_attr(g, n, "ints", ATTR_INTS);
	at->n = 3;
	at->ints = in;
	static const Bytes sl[] = { { 1, (const uint8_t *)"a" },
				    { 0, (const uint8_t *)"" },
				    { 3, (const uint8_t *)"xyz" } };
	at = node_add_attr(g, n, "strings", ATTR_STRINGS);
	at->n = 3;
	at->strings = sl;
	at = node_add_attr(g, n, "tensors", ATTR_TENSORS);
	at->n = 2;
	at->tensors = arena_array(a, 2, sizeof(Tensor *));
	at->tensors[0] = f.w;
	at->tensors[1] = f.t3;
	node_add_attr(g, n, "graphs_empty", ATTR_GRAPHS);
	node_add_attr(g, n, "sparse", ATTR_SPARSE_TENSOR);

	set_io(g, (ValId[]){ x, cond }, 2, (ValId[]){ z, names }, 2);
	cr_assert_eq(graph_toposort(g), 0, "%s", last_error());
	cr_assert_eq(graph_verify(g), 0, "%s", last_error());
	return f;
}

static void encode(const Model *m, uint8_t **out, size_t *len)
{
	cr_assert_eq(om_encode(m, out, len), 0, "om_encode: %s", last_error());
}

static void parse_ok(OmFile *f, const uint8_t *d, size_t n)
{
	cr_assert_eq(om_parse(f, d, n, "mem.om"), 0, "om_parse: %s",
		     last_error());
}

static void expect_error(const uint8_t *d, size_t n, const char *want)
{
	OmFile f;
	clear_error();
	cr_assert_eq(om_parse(&f, d, n, "mem.om"), -1,
		     "expected failure with '%s'", want);
	cr_assert(f.model == NULL);
	cr_assert(strstr(last_error(), want), "error '%s' lacks '%s'",
		  last_error(), want);
	cr_assert(!strncmp(last_error(), "mem.om: ", 8), "'%s'", last_error());
}

/* ---- round trip -------------------------------------------------------- */

static int collect(Graph *g, void *ctx)
{
	Graph ***p = ctx;
	*(*p)++ = g;
	return 0;
}

static void cmp_dims(const int64_t *a, size_t n, const Shape *s)
{
	cr_assert_eq(n, (size_t)(s->rank < 0 ? 0 : s->rank));
	for (size_t k = 0; k < n; k++)
		cr_assert_eq(a[k], s->dims[k]);
}

static void cmp_weight(const OmFile *f, int32_t wi, const Tensor *t)
{
	cr_assert(wi >= 0 && (size_t)wi < f->model->n_weights);
	const Gearom__Weight *w = f->model->weights[wi];
	cr_assert_str_eq(w->name, t->name ? t->name : "");
	cr_assert_eq(w->dtype, t->dtype);
	cr_assert_eq(w->offset % OM_ALIGN, 0);
	cmp_dims(w->dims, w->n_dims, &t->shape);
	const uint8_t *p = f->weights + w->offset;
	if (t->dtype != DT_STRING) {
		cr_assert_eq(w->size, t->nbytes);
		cr_assert(!memcmp(p, t->data, t->nbytes));
		return;
	}
	const Bytes *b = t->data;
	for (size_t i = 0; i < t->nbytes / sizeof(Bytes); i++) {
		cr_assert_eq(om_get_u64(p), b[i].len);
		cr_assert(!memcmp(p + 8, b[i].data, b[i].len));
		p += 8 + b[i].len;
	}
	cr_assert_eq(p, f->weights + w->offset + w->size);
}

static void cmp_attr(const OmFile *f, Graph **gs, const Attr *a,
		     const Gearom__Attribute *o)
{
	cr_assert_str_eq(o->name, a->name);
	cr_assert_eq(o->type, a->type);
	switch (a->type) {
	case ATTR_FLOAT: cr_assert(o->has_f && o->f == a->f); break;
	case ATTR_INT: cr_assert(o->has_i && o->i == a->i); break;
	case ATTR_STRING:
		cr_assert_eq(o->s.len, a->s.len);
		cr_assert(!memcmp(o->s.data, a->s.data, a->s.len));
		break;
	case ATTR_TENSOR: cmp_weight(f, o->t, a->t); break;
	case ATTR_GRAPH: cr_assert_eq(gs[o->g], a->g); break;
	case ATTR_FLOATS:
		cr_assert_eq(o->n_floats, (size_t)a->n);
		cr_assert(!memcmp(o->floats, a->floats,
				  sizeof(float) * (size_t)a->n));
		break;
	case ATTR_INTS:
		cr_assert_eq(o->n_ints, (size_t)a->n);
		for (int32_t j = 0; j < a->n; j++)
			cr_assert_eq(o->ints[j], a->ints[j]);
		break;
	case ATTR_STRINGS:
		cr_assert_eq(o->n_strings, (size_t)a->n);
		for (int32_t j = 0; j < a->n; j++) {
			cr_assert_eq(o->strings[j].len, a->strings[j].len);
			cr_assert(!a->strings[j].len ||
				  !memcmp(o->strings[j].data,
					  a->strings[j].data,
					  a->strings[j].len));
		}
		break;
	case ATTR_TENSORS:
		cr_assert_eq(o->n_tensors, (size_t)a->n);
		for (int32_t j = 0; j < a->n; j++)
			cmp_weight(f, o->tensors[j], a->tensors[j]);
		break;
	case ATTR_GRAPHS:
		cr_assert_eq(o->n_graphs, (size_t)a->n);
		for (int32_t j = 0; j < a->n; j++)
			cr_assert_eq(gs[o->graphs[j]], a->graphs[j]);
		break;
	default:
		cr_assert(!o->has_f && !o->has_i && !o->has_s &&
			  o->t == -1 && o->g == -1);
	}
}

static void cmp_tensor(const OmFile *f, const Value *v, const Gearom__Tensor *t)
{
	cr_assert_str_eq(t->name, v->name);
	cr_assert_eq(t->dtype, v->dtype);
	cr_assert_eq(t->rank, v->shape.rank);
	cmp_dims(t->dims, t->n_dims, &v->shape);
	cr_assert_eq((int)t->kind, v->kind);
	cr_assert_eq((int)t->type, v->tkind);
	cr_assert_eq(t->flags, v->flags);
	cr_assert_eq(t->outer, v->kind == VAL_OUTER ? v->outer : -1);
	if (v->konst)
		cmp_weight(f, t->weight, v->konst);
	else
		cr_assert_eq(t->weight, -1);
	if (!v->dim_params) {
		cr_assert_eq(t->n_dim_params, 0);
		return;
	}
	cr_assert_eq(t->n_dim_params, (size_t)v->shape.rank);
	for (int32_t k = 0; k < v->shape.rank; k++)
		cr_assert_str_eq(t->dim_params[k],
				 v->dim_params[k] ? v->dim_params[k] : "");
}

static void cmp_ids(const int32_t *a, size_t n, const ValId *b, int32_t nb)
{
	cr_assert_eq(n, (size_t)nb);
	for (size_t k = 0; k < n; k++)
		cr_assert_eq(a[k], b[k]);
}

static void cmp_graph(const OmFile *f, Graph **gs, int32_t gi)
{
	const Graph *g = gs[gi];
	const Gearom__Graph *o = f->model->graphs[gi];
	cr_assert_str_eq(o->name, g->name);
	cr_assert_eq(o->n_tensors, (size_t)g->nvals);
	for (int32_t i = 0; i < g->nvals; i++)
		cmp_tensor(f, &g->vals[i], o->tensors[i]);
	cr_assert_eq(o->n_nodes, (size_t)g->nnodes);
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		const Gearom__Node *on = o->nodes[i];
		cr_assert_str_eq(on->name, n->name);
		cr_assert_str_eq(on->op_type, n->op_type);
		cr_assert_str_eq(on->domain, n->domain);
		if (n->label)
			cr_assert_str_eq(on->label, n->label);
		else
			cr_assert_null(on->label);
		cmp_ids(on->inputs, on->n_inputs, n->inputs, n->ninputs);
		cmp_ids(on->outputs, on->n_outputs, n->outputs, n->noutputs);
		cr_assert_eq(on->n_attrs, (size_t)n->nattrs);
		for (int32_t k = 0; k < n->nattrs; k++)
			cmp_attr(f, gs, &n->attrs[k], on->attrs[k]);
	}
	cmp_ids(o->inputs, o->n_inputs, g->inputs, g->ninputs);
	cmp_ids(o->outputs, o->n_outputs, g->outputs, g->noutputs);
	cr_assert_null(o->plan);
}

Test(om, round_trip)
{
	Fixture fx = build();
	uint8_t *d;
	size_t n;
	OmFile f;
	encode(fx.m, &d, &n);
	parse_ok(&f, d, n);
	const Gearom__Model *m = f.model;

	cr_assert_str_eq(m->producer->name, "gearc");
	cr_assert_str_eq(m->producer->version, GEARC_VERSION);
	cr_assert_str_eq(m->source->file, "models/t.onnx");
	cr_assert_eq(m->source->ir_version, 8);
	cr_assert_eq(m->source->model_version, 3);
	cr_assert_str_eq(m->source->producer_name, "pytorch");
	cr_assert_str_eq(m->source->producer_version, "2.1");
	cr_assert_str_eq(m->source->domain, "test.domain");
	cr_assert_eq(m->source->n_opsets, 2);
	cr_assert_str_eq(m->source->opsets[0]->domain, "");
	cr_assert_eq(m->source->opsets[0]->version, 13);
	cr_assert_str_eq(m->source->opsets[1]->domain, "com.microsoft");
	cr_assert_eq(m->source->opsets[1]->version, 1);
	cr_assert_eq(m->n_options, 2);
	cr_assert_str_eq(m->options[0]->key, "model");
	cr_assert_str_eq(m->options[0]->value, "t.onnx");
	cr_assert_str_eq(m->options[1]->key, "output");
	cr_assert_str_eq(m->options[1]->value, "out");
	cr_assert_eq(m->mode, GEAROM__MODE__MODE_STATIC);
	cr_assert_eq(m->n_gears, 0);
	cr_assert_eq(m->n_gear_inputs, 0);

	/* graphs: depth first in node order, parents first */
	Graph *gs[8], **p = gs;
	graph_walk(fx.g, collect, &p);
	cr_assert_eq(p - gs, 5);
	cr_assert(gs[1] == fx.then_g && gs[2] == fx.else_g &&
		  gs[3] == fx.inner && gs[4] == fx.body);
	cr_assert_eq(m->root, 0);
	cr_assert_eq(m->n_graphs, 5);
	static const int32_t parents[] = { -1, 0, 0, 2, 0 };
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(m->graphs[i]->parent, parents[i], "graph %d", i);
		cmp_graph(&f, gs, i);
	}

	/* weights: W, names, c, t3 in order of first use; W once */
	cr_assert_eq(m->n_weights, 4);
	cmp_weight(&f, 0, fx.w);
	cmp_weight(&f, 1, fx.names);
	cmp_weight(&f, 2, fx.t2);
	cmp_weight(&f, 3, fx.t3);
	cr_assert_eq(m->graphs[0]->tensors[2]->weight, 0);
	cr_assert_eq(m->graphs[0]->tensors[3]->weight, 0);

	/* top-level inputs and outputs */
	cr_assert_eq(m->n_inputs, 2);
	cr_assert_str_eq(m->inputs[0]->name, "x");
	cr_assert_eq(m->inputs[0]->dtype, DT_FLOAT);
	cr_assert_eq(m->inputs[0]->rank, 2);
	cr_assert_eq(m->inputs[0]->n_shape, 2);
	cr_assert_eq(m->inputs[0]->shape[0], -1);
	cr_assert_eq(m->inputs[0]->shape[1], 3);
	cr_assert_eq(m->inputs[0]->n_max_shape, 2);
	cr_assert_eq(m->inputs[1]->rank, 0);
	cr_assert_eq(m->inputs[1]->n_shape, 0);
	cr_assert_eq(m->n_outputs, 2);
	cr_assert_str_eq(m->outputs[0]->name, "z");
	cr_assert_eq(m->outputs[0]->rank, -1);
	cr_assert_eq(m->outputs[0]->n_max_shape, 0);
	cr_assert_str_eq(m->outputs[1]->name, "names");
	cr_assert_eq(m->outputs[1]->dtype, DT_STRING);

	om_close(&f);
	free(d);
	model_free(fx.m);
}

/* Fields whose length takes 2 and 3 bytes, written before their length
 * is known, and a graph that outgrows its first buffer while they are
 * open. */
Test(om, long_fields_round_trip)
{
	Fixture fx = build();
	Arena *a = &fx.m->arena;
	Node *n = NULL;
	for (int32_t i = 0; i < fx.g->nnodes; i++)
		if (!strcmp(fx.g->nodes[i].name, "custom"))
			n = &fx.g->nodes[i];
	cr_assert_not_null(n);
	char *name = arena_alloc(a, 301);
	memset(name, 'n', 300);
	n->name = name;
	uint8_t *big = arena_alloc(a, 70000);
	for (size_t i = 0; i < 70000; i++)
		big[i] = (uint8_t)(i * 7);
	Attr *at = node_add_attr(fx.g, n, "big", ATTR_STRING);
	at->s = (Bytes){ 70000, big };
	int64_t *ints = arena_array(a, 5000, sizeof(int64_t));
	for (int i = 0; i < 5000; i++)
		ints[i] = i % 2 ? -i : (int64_t)i << 40;
	at = node_add_attr(fx.g, n, "many", ATTR_INTS);
	at->n = 5000;
	at->ints = ints;

	uint8_t *d;
	size_t len;
	OmFile f;
	encode(fx.m, &d, &len);
	parse_ok(&f, d, len);
	Graph *gs[8], **p = gs;
	graph_walk(fx.g, collect, &p);
	for (int i = 0; i < 5; i++)
		cmp_graph(&f, gs, i);
	om_close(&f);
	free(d);
	model_free(fx.m);
}

Test(om, deterministic)
{
	Fixture a = build(), b = build();
	uint8_t *d1, *d2, *d3;
	size_t n1, n2, n3;
	encode(a.m, &d1, &n1);
	encode(a.m, &d2, &n2);
	encode(b.m, &d3, &n3); /* a second Model: other addresses */
	cr_assert_eq(n1, n2);
	cr_assert_eq(n1, n3);
	cr_assert(!memcmp(d1, d2, n1));
	cr_assert(!memcmp(d1, d3, n1));
	free(d1);
	free(d2);
	free(d3);
	model_free(a.m);
	model_free(b.m);
}

/* Partitions and weights 64-byte aligned, zero padding between them. */
Test(om, alignment)
{
	Fixture fx = build();
	uint8_t *d;
	size_t n;
	OmFile f;
	encode(fx.m, &d, &n);
	cr_assert(!memcmp(d, OM_MAGIC, 8));
	cr_assert_eq(om_get_u32(d + 8), OM_VERSION);
	cr_assert_eq(om_get_u32(d + 12), OM_HEADER_SIZE);
	cr_assert_eq(om_get_u64(d + 16), n);
	cr_assert_eq(om_get_u32(d + 24), crc32_update(0, d + 64, n - 64));
	cr_assert_eq(om_get_u32(d + 28), 2);
	for (int i = 32; i < 64; i++)
		cr_assert_eq(d[i], 0);
	uint64_t def = om_get_u64(d + 64 + 8), defsz = om_get_u64(d + 64 + 16);
	uint64_t w = om_get_u64(d + 88 + 8), wsz = om_get_u64(d + 88 + 16);
	cr_assert_eq(om_get_u32(d + 64), OM_PART_MODEL_DEF);
	cr_assert_eq(om_get_u32(d + 88), OM_PART_WEIGHTS);
	cr_assert_eq(def % 64, 0);
	cr_assert_eq(w % 64, 0);
	cr_assert_eq(def, 128);
	cr_assert_eq(w, om_align(def + defsz));
	cr_assert_eq(w + wsz, n);
	for (uint64_t i = 64 + 48; i < def; i++)
		cr_assert_eq(d[i], 0);
	for (uint64_t i = def + defsz; i < w; i++)
		cr_assert_eq(d[i], 0);

	parse_ok(&f, d, n);
	cr_assert_eq(f.weights, d + w);
	cr_assert_eq(f.weights_size, wsz);
	uint64_t end = 0;
	for (size_t i = 0; i < f.model->n_weights; i++) {
		const Gearom__Weight *wt = f.model->weights[i];
		cr_assert_eq(wt->offset % 64, 0);
		/* 64-aligned within the file, so within an mmap of it */
		cr_assert_eq((w + wt->offset) % 64, 0);
		cr_assert_geq(wt->offset, end);
		for (uint64_t k = end; k < wt->offset; k++)
			cr_assert_eq(f.weights[k], 0, "padding byte %llu",
				     (unsigned long long)k);
		end = wt->offset + wt->size;
	}
	cr_assert_eq(end, wsz);
	om_close(&f);
	free(d);
	model_free(fx.m);
}

/* A model without weights has no WEIGHTS partition. */
Test(om, no_weights)
{
	Model *m = model_new();
	Graph *g = m->graph = graph_new(&m->arena, "g", NULL);
	ValId x = graph_add_value(g, "x", VAL_INPUT);
	val(g, x, DT_FLOAT, 1, (int64_t[]){ 4 });
	set_io(g, &x, 1, &x, 1);
	uint8_t *d;
	size_t n;
	OmFile f;
	encode(m, &d, &n);
	cr_assert_eq(om_get_u32(d + 28), 1);
	parse_ok(&f, d, n);
	cr_assert_null(f.weights);
	cr_assert_eq(f.weights_size, 0);
	cr_assert_eq(f.model->n_weights, 0);
	om_close(&f);
	free(d);
	model_free(m);
}

/* 100 gear branches sharing one 64 KiB tensor store it once. */
Test(om, weight_sharing)
{
	Model *m = model_new();
	Arena *a = &m->arena;
	Graph *g = m->graph = graph_new(a, "root", NULL);
	Shape s = shape_of(1, (int64_t[]){ 16384 });
	Tensor *t = tensor_new(a, "big", DT_FLOAT, &s, NULL);
	for (int i = 0; i < 16384; i++)
		((float *)(uintptr_t)t->data)[i] = (float)i;
	ValId o = graph_add_value(g, "o", VAL_NODE);
	Node *n = graph_add_node(g, "case", "Case", GEARC_DOMAIN, 0, 1);
	n->outputs[0] = o;
	Attr *at = node_add_attr(g, n, "branches", ATTR_GRAPHS);
	at->n = 100;
	at->graphs = arena_array(a, 100, sizeof(Graph *));
	for (int i = 0; i < 100; i++) {
		char name[32];
		snprintf(name, sizeof(name), "Batch_%d", i);
		Graph *b = at->graphs[i] = graph_new(a, name, g);
		ValId w = add_weight(b, "big", t);
		set_io(b, NULL, 0, &w, 1);
	}
	set_io(g, NULL, 0, &o, 1);
	uint8_t *d;
	size_t len;
	OmFile f;
	encode(m, &d, &len);
	cr_assert_lt(len, 2 * t->nbytes);
	parse_ok(&f, d, len);
	cr_assert_eq(f.model->n_weights, 1);
	cr_assert_eq(f.model->n_graphs, 101);
	for (int i = 1; i <= 100; i++) {
		cr_assert_eq(f.model->graphs[i]->tensors[0]->weight, 0);
		cr_assert_eq(f.model->graphs[i]->parent, 0);
	}
	cmp_weight(&f, 0, t);
	om_close(&f);
	free(d);
	model_free(m);
}

/* ---- gear info --------------------------------------------------------- */

/* --dynamic_dims over a:[-1,3,-1] and b:[2,-1]: three values per gear.
 * Products for a: 10, 8, 40, 40 -> gear 2 (first of the tie);
 * for b: 5, 7, 1, 7 -> gear 1. */
static Model *gear_model(void)
{
	Model *m = model_new();
	Arena *a = &m->arena;
	Graph *g = m->graph = graph_new(a, "main", NULL);
	ValId va = graph_add_value(g, "a", VAL_INPUT);
	val(g, va, DT_FLOAT, 3, (int64_t[]){ 20, 3, 20 });
	ValId vb = graph_add_value(g, "b", VAL_INPUT);
	val(g, vb, DT_INT64, 2, (int64_t[]){ 2, 7 });
	ValId vc = graph_add_value(g, "c", VAL_INPUT);
	val(g, vc, DT_FLOAT, 1, (int64_t[]){ 5 });
	set_io(g, (ValId[]){ va, vb, vc }, 3, &va, 1);

	GearSpec *gs = m->gears = arena_alloc(a, sizeof(*gs));
	gs->mode = m->mode = MODE_DIMS;
	gs->ninputs = 2;
	gs->inputs = arena_array(a, 2, sizeof(GearInput));
	gs->inputs[0] = (GearInput){ .name = "a", .val = va,
				     .shape = shape_of(3, (int64_t[]){ -1, 3, -1 }),
				     .ndyn = 2, .dyn_axes = { 0, 2 }, .first = 0 };
	gs->inputs[1] = (GearInput){ .name = "b", .val = vb,
				     .shape = shape_of(2, (int64_t[]){ 2, -1 }),
				     .ndyn = 1, .dyn_axes = { 1 }, .first = 2 };
	static const int64_t table[] = { 1, 10, 5, 4, 2, 7,
					 2, 20, 1, 20, 2, 7 };
	gs->ngears = 4;
	gs->nvals = 3;
	gs->table = arena_memdup(a, table, sizeof(table));
	model_add_option(m, "dynamic_dims", "1,10,5;4,2,7;2,20,1;20,2,7");
	return m;
}

static void assert_dims(const int64_t *d, size_t n, int32_t rank,
			const int64_t *want, size_t nwant)
{
	cr_assert_eq(n, nwant);
	cr_assert_eq(rank, (int32_t)nwant);
	for (size_t k = 0; k < n; k++)
		cr_assert_eq(d[k], want[k], "dim %zu: %lld, want %lld", k,
			     (long long)d[k], (long long)want[k]);
}

Test(om, gear_info)
{
	Model *mod = gear_model();
	uint8_t *d;
	size_t n;
	OmFile f;
	encode(mod, &d, &n);
	parse_ok(&f, d, n);
	const Gearom__Model *m = f.model;
	cr_assert_eq(m->mode, GEAROM__MODE__MODE_DIMS);

	cr_assert_eq(m->n_gear_inputs, 2);
	cr_assert_str_eq(m->gear_inputs[0]->name, "a");
	assert_dims(m->gear_inputs[0]->shape, m->gear_inputs[0]->n_shape, 3,
		    (int64_t[]){ -1, 3, -1 }, 3);
	cr_assert_eq(m->gear_inputs[0]->n_dyn_axes, 2);
	cr_assert_eq(m->gear_inputs[0]->dyn_axes[0], 0);
	cr_assert_eq(m->gear_inputs[0]->dyn_axes[1], 2);
	cr_assert_str_eq(m->gear_inputs[1]->name, "b");
	cr_assert_eq(m->gear_inputs[1]->n_dyn_axes, 1);
	cr_assert_eq(m->gear_inputs[1]->dyn_axes[0], 1);

	static const int64_t table[4][3] = {
		{ 1, 10, 5 }, { 4, 2, 7 }, { 2, 20, 1 }, { 20, 2, 7 }
	};
	cr_assert_eq(m->n_gears, 4);
	for (int g = 0; g < 4; g++) {
		const Gearom__Gear *gr = m->gears[g];
		char label[16];
		snprintf(label, sizeof(label), "Batch_%d", g);
		cr_assert_eq(gr->index, g);
		cr_assert_str_eq(gr->label, label);
		cr_assert_eq(gr->graph, -1);
		cr_assert_eq(gr->n_outputs, 0);
		assert_dims(gr->dims, gr->n_dims, 3, table[g], 3);
		cr_assert_eq(gr->n_inputs, 2);
		cr_assert_str_eq(gr->inputs[0]->name, "a");
		assert_dims(gr->inputs[0]->dims, gr->inputs[0]->n_dims,
			    gr->inputs[0]->rank,
			    (int64_t[]){ table[g][0], 3, table[g][1] }, 3);
		cr_assert_eq(gr->inputs[0]->bytes,
			     4 * 3 * table[g][0] * table[g][1]);
		cr_assert_str_eq(gr->inputs[1]->name, "b");
		assert_dims(gr->inputs[1]->dims, gr->inputs[1]->n_dims,
			    gr->inputs[1]->rank,
			    (int64_t[]){ 2, table[g][2] }, 2);
		cr_assert_eq(gr->inputs[1]->bytes, 8 * 2 * table[g][2]);
	}

	cr_assert_eq(m->n_inputs, 3);
	const Gearom__IoInfo *a = m->inputs[0], *b = m->inputs[1],
			     *c = m->inputs[2];
	assert_dims(a->shape, a->n_shape, a->rank, (int64_t[]){ -1, 3, -1 }, 3);
	assert_dims(a->max_shape, a->n_max_shape, 3, (int64_t[]){ 2, 3, 20 },
		    3);
	cr_assert_eq(b->dtype, DT_INT64);
	assert_dims(b->shape, b->n_shape, b->rank, (int64_t[]){ 2, -1 }, 2);
	assert_dims(b->max_shape, b->n_max_shape, 2, (int64_t[]){ 2, 7 }, 2);
	assert_dims(c->shape, c->n_shape, c->rank, (int64_t[]){ 5 }, 1);
	assert_dims(c->max_shape, c->n_max_shape, 1, (int64_t[]){ 5 }, 1);
	cr_assert_eq(m->n_options, 1);
	cr_assert_str_eq(m->options[0]->key, "dynamic_dims");

	om_close(&f);
	free(d);
	model_free(mod);
}

/* ---- corruption -------------------------------------------------------- */

/* A small valid file. */
static void small_file(uint8_t **d, size_t *n)
{
	Fixture fx = build();
	encode(fx.m, d, n);
	model_free(fx.m);
}

static void fix_crc(uint8_t *d, size_t n)
{
	om_put_u32(d + 24, crc32_update(0, d + 64, n - 64));
}

Test(om, truncated_at_every_length)
{
	uint8_t *d;
	size_t n;
	small_file(&d, &n);
	for (size_t len = 0; len < n; len++) {
		/* An exact-size copy, so an over-read is an ASan error. */
		uint8_t *c = xmalloc(len);
		memcpy(c, d, len);
		OmFile f;
		clear_error();
		cr_assert_eq(om_parse(&f, c, len, "t.om"), -1, "length %zu",
			     len);
		cr_assert(last_error()[0], "length %zu: no message", len);
		free(c);
	}
	free(d);
}

Test(om, truncation_messages)
{
	uint8_t *d;
	size_t n;
	small_file(&d, &n);
	expect_error(d, 0, "file is empty");
	expect_error(d, 5, "file is truncated: 5 bytes, shorter than the "
			   "64-byte header");
	char want[96];
	snprintf(want, sizeof(want),
		 "file is truncated: header says %zu bytes, file has %zu", n,
		 n - 1);
	expect_error(d, n - 1, want);
	free(d);
}

Test(om, every_byte_flipped)
{
	uint8_t *d;
	size_t n;
	small_file(&d, &n);
	static const uint8_t masks[] = { 0xff, 0x01, 0x80 };
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < ARRAY_SIZE(masks); k++) {
			OmFile f;
			d[i] ^= masks[k];
			clear_error();
			cr_assert_eq(om_parse(&f, d, n, "t.om"), -1,
				     "byte %zu ^ 0x%x accepted", i, masks[k]);
			cr_assert(last_error()[0]);
			if (i >= 64)
				cr_assert(strstr(last_error(),
						 "checksum mismatch"),
					  "byte %zu: %s", i, last_error());
			d[i] ^= masks[k];
		}
	OmFile f;
	parse_ok(&f, d, n);
	om_close(&f);
	free(d);
}

static void expect_error_msg(uint8_t *d, size_t n, const char *want)
{
	expect_error(d, n, want);
}

Test(om, header_checks)
{
	uint8_t *d;
	size_t n;
	small_file(&d, &n);
	uint8_t *c = xmalloc(n + 1);
#define RESET() memcpy(c, d, n)
	RESET();
	c[0] = 'X';
	expect_error_msg(c, n, "not a gearc .om file (bad magic)");
	RESET();
	om_put_u32(c + 8, 2);
	expect_error_msg(c, n, "unsupported .om format version 2 (this gearc "
			       "reads 1)");
	RESET();
	om_put_u32(c + 12, 72);
	expect_error_msg(c, n, "header size is 72, expected 64");
	RESET();
	c[40] = 1;
	expect_error_msg(c, n, "reserved header bytes are not zero");
	RESET();
	c[n] = 0;
	expect_error_msg(c, n + 1, "trailing data");
	RESET();
	om_put_u32(c + 24, om_get_u32(d + 24) ^ 1);
	expect_error_msg(c, n, "mem.om: checksum mismatch: file is corrupt");
	RESET();
	om_put_u32(c + 28, 0);
	expect_error_msg(c, n, "partition count 0 is out of range");
	RESET();
	om_put_u32(c + 28, 17);
	expect_error_msg(c, n, "partition count 17 is out of range");
	RESET();
	om_put_u32(c + 64, 3);
	fix_crc(c, n);
	expect_error_msg(c, n, "partition 0 has unknown type 3");
	RESET();
	om_put_u64(c + 72, 130);
	fix_crc(c, n);
	expect_error_msg(c, n, "partition 0 at offset 130 is not 64-byte "
			       "aligned");
	RESET();
	om_put_u64(c + 72, 64);
	fix_crc(c, n);
	expect_error_msg(c, n, "overlaps the partition table");
	RESET();
	om_put_u64(c + 88 + 8, UINT64_MAX - 63);
	fix_crc(c, n);
	expect_error_msg(c, n, "partition 1 (offset 18446744073709551552, "
			       "size ");
	RESET();
	om_put_u64(c + 72 + 8, UINT64_MAX);
	fix_crc(c, n);
	expect_error_msg(c, n, "runs past the end of the file");
	RESET();
	om_put_u32(c + 88, OM_PART_MODEL_DEF);
	fix_crc(c, n);
	expect_error_msg(c, n, "2 MODEL_DEF partitions, expected one");
	RESET();
	om_put_u32(c + 64, OM_PART_WEIGHTS);
	fix_crc(c, n);
	expect_error_msg(c, n, "0 MODEL_DEF partitions, expected one");
	RESET();
	om_put_u64(c + 88 + 8, om_get_u64(d + 72));
	fix_crc(c, n);
	expect_error_msg(c, n, "partitions 0 and 1 overlap");
	RESET();
	memset(c + 128, 0xff, om_get_u64(d + 80));
	fix_crc(c, n);
	expect_error_msg(c, n, "MODEL_DEF does not decode as a gearom.Model");
#undef RESET
	free(c);
	free(d);
}

/* The file d with MODEL_DEF replaced by msg (weights kept). */
static void rebuild(const uint8_t *d, Gearom__Model *msg, uint8_t **out,
		    size_t *len)
{
	uint32_t nparts = om_get_u32(d + 28);
	uint64_t woff = 0, wsz = 0;
	if (nparts == 2) {
		woff = om_get_u64(d + 88 + 8);
		wsz = om_get_u64(d + 88 + 16);
	}
	size_t defsz = protobuf_c_message_get_packed_size(&msg->base);
	uint64_t nwoff = om_align(128 + defsz);
	*len = (size_t)(nparts == 2 ? nwoff + wsz : 128 + defsz);
	uint8_t *c = *out = xcalloc(*len, 1);
	memcpy(c, d, 64 + 24 * nparts);
	om_put_u64(c + 16, *len);
	om_put_u64(c + 80, defsz);
	protobuf_c_message_pack(&msg->base, c + 128);
	if (nparts == 2) {
		om_put_u64(c + 96, nwoff);
		memcpy(c + nwoff, d + woff, wsz);
	}
	fix_crc(c, *len);
}

typedef void (*Mutate)(Gearom__Model *m, int undo);

static void m_node_input(Gearom__Model *m, int undo)
{
	m->graphs[0]->nodes[0]->inputs[0] = undo ? 0 : 99;
}
static void m_node_output(Gearom__Model *m, int undo)
{
	m->graphs[2]->nodes[1]->outputs[0] = undo ? 2 : -2;
}
static void m_outer(Gearom__Model *m, int undo)
{
	m->graphs[1]->tensors[0]->outer = undo ? 4 : 50;
}
static void m_outer_root(Gearom__Model *m, int undo)
{
	m->graphs[0]->tensors[0]->kind = undo ? GEAROM__TENSOR_KIND__TK_INPUT
					      : GEAROM__TENSOR_KIND__TK_OUTER;
}
static void m_not_outer(Gearom__Model *m, int undo)
{
	m->graphs[0]->tensors[0]->has_outer = !undo;
	m->graphs[0]->tensors[0]->outer = undo ? -1 : 0;
}
static void m_kind(Gearom__Model *m, int undo)
{
	m->graphs[0]->tensors[0]->kind = undo ? 1 : 9;
}
static void m_type(Gearom__Model *m, int undo)
{
	m->graphs[0]->tensors[5]->type = undo ? 1 : 4;
}
static void m_dtype(Gearom__Model *m, int undo)
{
	m->graphs[0]->tensors[0]->dtype = undo ? DT_FLOAT : 17;
}
static void m_rank(Gearom__Model *m, int undo)
{
	m->graphs[0]->tensors[0]->rank = undo ? 2 : 9;
}
static void m_rank_dims(Gearom__Model *m, int undo)
{
	m->graphs[0]->tensors[0]->rank = undo ? 2 : 3;
}
static void m_dim(Gearom__Model *m, int undo)
{
	m->graphs[0]->tensors[0]->dims[1] = undo ? 3 : -2;
}
static void m_dim_params(Gearom__Model *m, int undo)
{
	m->graphs[0]->tensors[0]->n_dim_params = undo ? 2 : 1;
}
static void m_weight(Gearom__Model *m, int undo)
{
	m->graphs[0]->tensors[2]->weight = undo ? 0 : 7;
}
static void m_weight_none(Gearom__Model *m, int undo)
{
	m->graphs[0]->tensors[2]->weight = undo ? 0 : -1;
}
static void m_parent(Gearom__Model *m, int undo)
{
	m->graphs[2]->parent = undo ? 0 : 2;
}
static void m_parent_root(Gearom__Model *m, int undo)
{
	m->graphs[0]->has_parent = !undo;
	m->graphs[0]->parent = undo ? -1 : 0;
}
static void m_root(Gearom__Model *m, int undo) { m->root = undo ? 0 : 5; }
static void m_attr_graph(Gearom__Model *m, int undo)
{
	m->graphs[0]->nodes[1]->attrs[0]->g = undo ? 1 : 40;
}
static void m_attr_parent(Gearom__Model *m, int undo)
{
	m->graphs[0]->nodes[1]->attrs[0]->g = undo ? 1 : 3;
}
static void m_attr_twice(Gearom__Model *m, int undo)
{
	m->graphs[0]->nodes[1]->attrs[1]->g = undo ? 2 : 1;
}
static void m_attr_tensor(Gearom__Model *m, int undo)
{
	m->graphs[0]->nodes[2]->attrs[3]->t = undo ? 3 : 10;
}
static void m_attr_tensors(Gearom__Model *m, int undo)
{
	m->graphs[0]->nodes[2]->attrs[8]->tensors[1] = undo ? 3 : -1;
}
static void m_attr_type(Gearom__Model *m, int undo)
{
	m->graphs[0]->nodes[2]->attrs[0]->type = undo ? ATTR_FLOAT : 20;
}
static void m_graph_input(Gearom__Model *m, int undo)
{
	m->graphs[0]->inputs[1] = undo ? 1 : -1;
}
static void m_w_align(Gearom__Model *m, int undo)
{
	m->weights[0]->offset = undo ? 0 : 4;
}
static void m_w_size(Gearom__Model *m, int undo)
{
	m->weights[0]->size = undo ? 36 : 40;
}
static void m_w_bounds(Gearom__Model *m, int undo)
{
	m->weights[3]->offset += undo ? -64000 : 64000;
}
static void m_w_overflow(Gearom__Model *m, int undo)
{
	m->weights[3]->size = undo ? 12 : UINT64_MAX;
}
static void m_w_strings(Gearom__Model *m, int undo)
{
	m->weights[1]->size += undo ? 1 : -1;
}
static void m_w_dtype(Gearom__Model *m, int undo)
{
	m->weights[0]->dtype = undo ? DT_FLOAT : DT_UNDEFINED;
}
static void m_w_dim(Gearom__Model *m, int undo)
{
	m->weights[0]->dims[0] = undo ? 3 : INT64_MAX;
}
static void m_mode(Gearom__Model *m, int undo) { m->mode = undo ? 0 : 7; }
static void m_node_name(Gearom__Model *m, int undo)
{
	static char *saved;
	char **p = &m->graphs[2]->nodes[0]->op_type;
	if (!undo)
		saved = *p;
	*p = undo ? saved : NULL;
}
static void m_io(Gearom__Model *m, int undo)
{
	m->inputs[0]->rank = undo ? 2 : -1;
}
static void m_plan(Gearom__Model *m, int undo)
{
	static Gearom__MemBlock b = GEAROM__MEM_BLOCK__INIT, *bp = &b;
	static Gearom__MemoryPlan p = GEAROM__MEMORY_PLAN__INIT;
	b.has_tensor = 1;
	b.tensor = 99;
	p.n_blocks = 1;
	p.blocks = &bp;
	m->graphs[0]->plan = undo ? NULL : &p;
}
static void m_plan_overflow(Gearom__Model *m, int undo)
{
	static Gearom__MemBlock b = GEAROM__MEM_BLOCK__INIT, *bp = &b;
	static Gearom__MemoryPlan p = GEAROM__MEMORY_PLAN__INIT;
	b.has_tensor = 1;
	b.tensor = 1;
	b.has_offset = b.has_size = 1;
	b.offset = UINT64_MAX - 10;
	b.size = 64;
	p.n_blocks = 1;
	p.blocks = &bp;
	m->graphs[1]->plan = undo ? NULL : &p;
}
static void m_plan_order(Gearom__Model *m, int undo)
{
	static int32_t order[] = { 0, 3 };
	static Gearom__MemoryPlan p = GEAROM__MEMORY_PLAN__INIT;
	p.n_order = 2;
	p.order = order;
	m->graphs[0]->plan = undo ? NULL : &p;
}

static const struct {
	Mutate fn;
	const char *want;
} model_cases[] = {
	{ m_node_input, "mem.om: graph 0: node 0: input 0 refers to tensor "
			"99 of 8" },
	{ m_node_output, "graph 2: node 1: output 0 refers to tensor -2 of "
			 "4" },
	{ m_outer, "graph 1: tensor 0: outer 50 is out of range (graph 0 "
		   "has 8 tensors)" },
	{ m_outer_root, "graph 0: tensor 0: outer reference in the root "
			"graph" },
	{ m_not_outer, "graph 0: tensor 0: outer is 0 but it is not an "
		       "outer reference" },
	{ m_kind, "graph 0: tensor 0: kind 9 is not a tensor kind" },
	{ m_type, "graph 0: tensor 5: type 4 is not a type kind" },
	{ m_dtype, "graph 0: tensor 0: dtype 17 is not an ONNX data type" },
	{ m_rank, "graph 0: tensor 0: rank 9 is out of range (-1..8)" },
	{ m_rank_dims, "graph 0: tensor 0: rank 3 but 2 dims" },
	{ m_dim, "graph 0: tensor 0: dim 1 is -2" },
	{ m_dim_params, "graph 0: tensor 0: 1 dim_params for rank 2" },
	{ m_weight, "graph 0: tensor 2: weight 7 is out of range (4 "
		    "weights)" },
	{ m_weight_none, "graph 0: tensor 2: is a weight but names none" },
	{ m_parent, "graph 2: parent 2 is not valid for graph 2" },
	{ m_parent_root, "graph 0: parent 0 is not valid for graph 0 "
			 "(root)" },
	{ m_root, "root graph 5 is out of range (5 graphs)" },
	{ m_attr_graph, "graph 0: node 1: attribute 0: subgraph 40 is out of "
			"range (5 graphs)" },
	{ m_attr_parent, "graph 0: node 1: attribute 0: subgraph 3 has "
			 "parent 2, not 0" },
	{ m_attr_twice, "graph 0: node 1: attribute 1: subgraph 1 is used "
			"by two attributes" },
	{ m_attr_tensor, "graph 0: node 2: attribute 3: tensor 10 is out of "
			 "range (4 weights)" },
	{ m_attr_tensors, "graph 0: node 2: attribute 8: tensor -1 is out "
			  "of range" },
	{ m_attr_type, "graph 0: node 2: attribute 0: type 20 is not an "
		       "attribute type" },
	{ m_graph_input, "graph 0: input 1 refers to tensor -1 of 8" },
	{ m_w_align, "weight 0: offset 4 is not 64-byte aligned" },
	{ m_w_size, "weight 0: size is 40 bytes, its dtype and dims need "
		    "36" },
	{ m_w_bounds, "weight 3: bytes [64192, +12) lie outside the" },
	{ m_w_overflow, "weight 3: bytes [192, +18446744073709551615) lie "
			"outside the" },
	{ m_w_strings, "weight 1: string 2 runs past its" },
	{ m_w_dtype, "weight 0: dtype is undefined" },
	{ m_w_dim, "weight 0: element count overflows" },
	{ m_mode, "mode 7 is not a gear mode" },
	{ m_node_name, "graph 2: node 0: name, op_type or domain missing" },
	{ m_io, "input 0: rank -1 but 2 dims" },
	{ m_plan, "graph 0: memory plan: block 0 names tensor 99 of 8" },
	{ m_plan_overflow, "graph 1: memory plan: block 0: offset + size "
			   "overflows" },
	{ m_plan_order, "graph 0: memory plan: order 1 names node 3 of 3" },
};

/* Valid containers (right checksum) around a MODEL_DEF with one bad
 * index or enum each. */
Test(om, bad_model_def)
{
	uint8_t *d;
	size_t n;
	small_file(&d, &n);
	OmFile f;
	parse_ok(&f, d, n);
	Gearom__Model *m = f.model;
	cr_assert_eq(m->graphs[0]->n_tensors, 8);
	cr_assert_eq(m->graphs[2]->n_tensors, 4);
	cr_assert_eq(m->weights[3]->offset, 192);
	for (size_t i = 0; i < ARRAY_SIZE(model_cases); i++) {
		uint8_t *c;
		size_t len;
		model_cases[i].fn(m, 0);
		rebuild(d, m, &c, &len);
		model_cases[i].fn(m, 1);
		expect_error(c, len, model_cases[i].want);
		free(c);
	}
	/* the undo steps restored a valid model (the same message: the
	 * writer packs graphs last, so compare messages, not bytes) */
	uint8_t *c;
	size_t len;
	rebuild(d, m, &c, &len);
	OmFile g;
	parse_ok(&g, c, len);
	size_t p1 = protobuf_c_message_get_packed_size(&m->base);
	size_t p2 = protobuf_c_message_get_packed_size(&g.model->base);
	uint8_t *b1 = malloc(p1), *b2 = malloc(p2);
	protobuf_c_message_pack(&m->base, b1);
	protobuf_c_message_pack(&g.model->base, b2);
	cr_assert(p1 == p2 && !memcmp(b1, b2, p1));
	free(b1);
	free(b2);
	om_close(&g);
	free(c);
	om_close(&f);
	free(d);
}

static void g_graph(Gearom__Model *m, int undo)
{
	m->gears[1]->graph = undo ? -1 : 9;
}
static void g_dims(Gearom__Model *m, int undo)
{
	m->gears[1]->n_dims = undo ? 3 : 2;
}
static void g_index(Gearom__Model *m, int undo)
{
	m->gears[0]->index = undo ? 0 : 5;
}
static void g_axis(Gearom__Model *m, int undo)
{
	m->gear_inputs[0]->dyn_axes[1] = undo ? 2 : 1;
}
static void g_shape(Gearom__Model *m, int undo)
{
	m->gears[2]->inputs[1]->rank = undo ? 2 : 9;
}
static void g_max(Gearom__Model *m, int undo)
{
	m->inputs[0]->n_max_shape = undo ? 3 : 2;
}

static const struct {
	Mutate fn;
	const char *want;
} gear_cases[] = {
	{ g_graph, "gear 1: graph 9 is out of range (1 graphs)" },
	{ g_dims, "gear 1: 2 dims, the gear inputs have 3 -1s" },
	{ g_index, "gear 0: index is 5" },
	{ g_axis, "gear input 0: dynamic axis 1 is not a -1 of its shape" },
	{ g_shape, "gear 2: input 1: rank 9 is out of range" },
	{ g_max, "input 0: max_shape has 2 dims, shape 3" },
};

Test(om, bad_gear_table)
{
	Model *mod = gear_model();
	uint8_t *d;
	size_t n;
	OmFile f;
	encode(mod, &d, &n);
	model_free(mod);
	parse_ok(&f, d, n);
	cr_assert_eq(om_get_u32(d + 28), 1); /* no weights */
	for (size_t i = 0; i < ARRAY_SIZE(gear_cases); i++) {
		uint8_t *c;
		size_t len;
		gear_cases[i].fn(f.model, 0);
		rebuild(d, f.model, &c, &len);
		gear_cases[i].fn(f.model, 1);
		expect_error(c, len, gear_cases[i].want);
		free(c);
	}
	om_close(&f);
	free(d);
}

/* Follows every index a consumer would, relying only on what om.h
 * promises after a successful parse (ASan catches a broken promise). */
static uint64_t touch_model(const OmFile *f)
{
	const Gearom__Model *m = f->model;
	uint64_t h = strlen(m->producer->name) + strlen(m->source->file) +
		     strlen(m->graphs[m->root]->name);
	for (size_t i = 0; i < m->n_weights; i++) {
		const Gearom__Weight *w = m->weights[i];
		h += strlen(w->name) + (uint64_t)w->n_dims;
		if (w->size)
			h += f->weights[w->offset] +
			     f->weights[w->offset + w->size - 1];
	}
	for (size_t gi = 0; gi < m->n_graphs; gi++) {
		const Gearom__Graph *g = m->graphs[gi];
		const Gearom__Graph *parent = g->parent >= 0
						      ? m->graphs[g->parent]
						      : NULL;
		for (size_t k = 0; k < g->n_tensors; k++) {
			const Gearom__Tensor *t = g->tensors[k];
			h += strlen(t->name) + (uint64_t)dtype_size(t->dtype);
			for (int32_t r = 0; r < t->rank; r++)
				h += (uint64_t)t->dims[r];
			if (t->weight >= 0)
				h += m->weights[t->weight]->size;
			if (t->kind == GEAROM__TENSOR_KIND__TK_OUTER)
				h += strlen(parent->tensors[t->outer]->name);
			for (size_t j = 0; j < t->n_dim_params; j++)
				h += strlen(t->dim_params[j]);
		}
		for (size_t k = 0; k < g->n_nodes; k++) {
			const Gearom__Node *n = g->nodes[k];
			h += strlen(n->name) + strlen(n->op_type) +
			     strlen(n->domain);
			for (size_t j = 0; j < n->n_inputs; j++)
				if (n->inputs[j] >= 0)
					h += strlen(g->tensors[n->inputs[j]]->name);
			for (size_t j = 0; j < n->n_outputs; j++)
				if (n->outputs[j] >= 0)
					h += strlen(g->tensors[n->outputs[j]]->name);
			for (size_t j = 0; j < n->n_attrs; j++) {
				const Gearom__Attribute *a = n->attrs[j];
				h += strlen(a->name);
				if (a->type == ATTR_TENSOR)
					h += m->weights[a->t]->size;
				if (a->type == ATTR_GRAPH)
					h += strlen(m->graphs[a->g]->name);
				for (size_t q = 0; q < a->n_tensors; q++)
					h += m->weights[a->tensors[q]]->size;
				for (size_t q = 0; q < a->n_graphs; q++)
					h += m->graphs[a->graphs[q]]->n_nodes;
			}
		}
		for (size_t k = 0; k < g->n_inputs; k++)
			h += g->tensors[g->inputs[k]]->n_dims;
		for (size_t k = 0; k < g->n_outputs; k++)
			h += g->tensors[g->outputs[k]]->n_dims;
	}
	for (size_t k = 0; k < m->n_inputs; k++)
		for (int32_t r = 0; r < m->inputs[k]->rank; r++)
			h += (uint64_t)m->inputs[k]->shape[r];
	for (size_t k = 0; k < m->n_gears; k++)
		if (m->gears[k]->graph >= 0)
			h += strlen(m->graphs[m->gears[k]->graph]->name);
	return h;
}

static int try_parse(const uint8_t *d, size_t n)
{
	OmFile f;
	clear_error();
	if (om_parse(&f, d, n, "t.om") < 0) {
		cr_assert(last_error()[0]);
		return 0;
	}
	touch_model(&f);
	om_close(&f);
	return 1;
}

/* Damage inside a correctly checksummed file: every byte flipped, then
 * random multi-byte damage to MODEL_DEF.  Each is an error or a model
 * that keeps om.h's promises; never a crash. */
Test(om, damaged_but_checksummed)
{
	uint8_t *d;
	size_t n;
	small_file(&d, &n);
	uint8_t *c = xmalloc(n);
	size_t defsz = om_get_u64(d + 80);
	int accepted = 0;
	for (size_t i = 64 + 48; i < n; i++)
		for (int mask = 1; mask < 256; mask <<= 1) {
			memcpy(c, d, n);
			c[i] ^= (uint8_t)mask;
			fix_crc(c, n);
			accepted += try_parse(c, n);
		}
	uint64_t x = 88172645463325252ull;
	for (int iter = 0; iter < 20000; iter++) {
		memcpy(c, d, n);
		int k = 1 + iter % 6;
		for (int j = 0; j < k; j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			c[128 + (x >> 8) % defsz] = (uint8_t)x;
		}
		fix_crc(c, n);
		accepted += try_parse(c, n);
	}
	cr_log_info("%d damaged files still valid", accepted);
	free(c);
	free(d);
}

/* ---- om_write and om_open ---------------------------------------------- */

static char *tmpdir(void)
{
	char *t = xstrdup("/tmp/gearc-om-XXXXXX");
	cr_assert_not_null(mkdtemp(t));
	return t;
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

/* Names in dir other than . and .., joined by spaces. */
static void list_dir(const char *dir, char *out, size_t n)
{
	DIR *d = opendir(dir);
	cr_assert_not_null(d);
	out[0] = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			snprintf(out + strlen(out), n - strlen(out), "%s%s",
				 out[0] ? " " : "", e->d_name);
	closedir(d);
}

static void write_bytes(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(p, 1, n, f), n);
	cr_assert_eq(fclose(f), 0);
}

static void assert_file(const char *path, const void *p, size_t n)
{
	FileMap m;
	cr_assert_eq(filemap_open(&m, path, "file"), 0, "%s", last_error());
	cr_assert_eq(m.size, n);
	cr_assert(!memcmp(m.data, p, n));
	filemap_release(&m);
}

static void rm_rf(const char *dir)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

Test(om, write_and_open)
{
	Fixture fx = build();
	char *dir = tmpdir(), *path = join(dir, "m.om"), names[256];
	uint8_t *d;
	size_t n;
	encode(fx.m, &d, &n);
	cr_assert_eq(om_write(fx.m, path), 0, "%s", last_error());
	assert_file(path, d, n);
	list_dir(dir, names, sizeof(names));
	cr_assert_str_eq(names, "m.om");

	OmFile f;
	cr_assert_eq(om_open(&f, path), 0, "%s", last_error());
	cr_assert_eq(f.size, n);
	cr_assert_eq(f.model->n_graphs, 5);
	cmp_weight(&f, 0, fx.w);
	om_close(&f);

	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	mode_t um = umask(0);
	umask(um);
	cr_assert_eq(st.st_mode & 0777, 0666 & ~um);

	char *missing = join(dir, "nope.om");
	cr_assert_eq(om_open(&f, missing), -1);
	cr_assert(strstr(last_error(), "nope.om': cannot open: No such file"),
		  "%s", last_error());
	cr_assert_eq(truncate(path, 100), 0);
	cr_assert_eq(om_open(&f, path), -1);
	cr_assert(strstr(last_error(), "m.om: file is truncated: header says"),
		  "%s", last_error());
	cr_assert_null(f.model);
	om_close(&f); /* harmless after a failed open */

	free(missing);
	rm_rf(dir);
	free(path);
	free(dir);
	free(d);
	model_free(fx.m);
}

Test(om, write_into_missing_directory)
{
	Fixture fx = build();
	char *dir = tmpdir(), *path = join(dir, "no/such/m.om"), names[256];
	char want[512];
	cr_assert_eq(om_write(fx.m, path), -1);
	snprintf(want, sizeof(want),
		 "--output '%s': cannot create file: No such file or "
		 "directory",
		 path);
	cr_assert_str_eq(last_error(), want);
	list_dir(dir, names, sizeof(names));
	cr_assert_str_eq(names, "");
	rm_rf(dir);
	free(path);
	free(dir);
	model_free(fx.m);
}

/* The "directory" is a regular file: create fails even for root. */
Test(om, write_under_a_file)
{
	Fixture fx = build();
	char *dir = tmpdir(), *file = join(dir, "file"), names[256];
	char *path = join(file, "m.om");
	write_bytes(file, "x", 1);
	cr_assert_eq(om_write(fx.m, path), -1);
	cr_assert(strstr(last_error(), "cannot create file: Not a directory"),
		  "%s", last_error());
	list_dir(dir, names, sizeof(names));
	cr_assert_str_eq(names, "file");
	rm_rf(dir);
	free(path);
	free(file);
	free(dir);
	model_free(fx.m);
}

Test(om, write_replaces_atomically)
{
	Fixture fx = build();
	char *dir = tmpdir(), *path = join(dir, "m.om"), names[256];
	uint8_t *d;
	size_t n;
	encode(fx.m, &d, &n);
	write_bytes(path, "old contents", 12);
	struct stat before, after;
	cr_assert_eq(stat(path, &before), 0);
	int fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);

	cr_assert_eq(om_write(fx.m, path), 0, "%s", last_error());
	assert_file(path, d, n);
	cr_assert_eq(stat(path, &after), 0);
	/* a new inode renamed over the old one, which is intact */
	cr_assert_neq(before.st_ino, after.st_ino);
	char old[32] = { 0 };
	cr_assert_eq(read(fd, old, sizeof(old)), 12);
	cr_assert_str_eq(old, "old contents");
	close(fd);
	list_dir(dir, names, sizeof(names));
	cr_assert_str_eq(names, "m.om");
	rm_rf(dir);
	free(path);
	free(dir);
	free(d);
	model_free(fx.m);
}

/* A write that fails half way (RLIMIT_FSIZE applies to root too) leaves
 * the existing file as it was and no temporary file. */
Test(om, failed_write_keeps_old_file)
{
	Fixture fx = build();
	char *dir = tmpdir(), *path = join(dir, "m.om"), names[256];
	write_bytes(path, "old contents", 12);
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = { 300, 300 };
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	cr_assert_eq(om_write(fx.m, path), -1);
	char want[512];
	snprintf(want, sizeof(want), "--output '%s': cannot write: File too "
				     "large",
		 path);
	cr_assert_str_eq(last_error(), want);
	assert_file(path, "old contents", 12);
	list_dir(dir, names, sizeof(names));
	cr_assert_str_eq(names, "m.om");
	rm_rf(dir);
	free(path);
	free(dir);
	model_free(fx.m);
}

/* Everything written, but the rename fails (the target is a directory):
 * the temporary file is removed. */
/* A directory at the output's path is refused before anything is
 * written; one put there while the file is written is found before the
 * rename, and the temporary file is removed. */
Test(om, failed_rename_cleans_up)
{
	Fixture fx = build();
	char *dir = tmpdir(), *path = join(dir, "m.om"), names[256], *tmp;
	cr_assert_eq(mkdir(path, 0755), 0);
	cr_assert_eq(om_write(fx.m, path), -1);
	cr_assert(strstr(last_error(), "m.om': is a directory; gearc replaces "
					"only a regular file"),
		  "%s", last_error());
	list_dir(dir, names, sizeof(names));
	cr_assert_str_eq(names, "m.om");
	cr_assert_eq(rmdir(path), 0);
	int fd = om_temp_open("--output", path, &tmp);
	cr_assert_geq(fd, 0, "%s", last_error());
	cr_assert_eq(mkdir(path, 0755), 0);
	cr_assert_eq(om_temp_commit(fd, tmp, "--output", path, 0), -1);
	cr_assert(strstr(last_error(), "m.om': is a directory"), "%s",
		  last_error());
	list_dir(dir, names, sizeof(names));
	cr_assert_str_eq(names, "m.om");
	rm_rf(dir);
	free(path);
	free(dir);
	model_free(fx.m);
}

/* Models the writer refuses rather than write a file the reader would
 * reject. */
Test(om, write_rejects_malformed)
{
	Fixture fx = build();
	uint8_t *d = NULL;
	size_t n = 0;
	Node *n2 = &fx.g->nodes[2];
	cr_assert_str_eq(n2->name, "custom");
	Attr *t = &n2->attrs[3];
	cr_assert_eq(t->type, ATTR_TENSOR);
	t->t = NULL;
	cr_assert_eq(om_encode(fx.m, &d, &n), -1);
	cr_assert_null(d);
	cr_assert_str_eq(last_error(),
			 "graph 'main': node 'custom': attribute 't' has no "
			 "tensor");

	Tensor bad = *fx.t3;
	bad.nbytes = 11;
	t->t = &bad;
	cr_assert_eq(om_encode(fx.m, &d, &n), -1);
	cr_assert(strstr(last_error(), "has 11 bytes of data, its dtype and "
				       "shape need 12"),
		  "%s", last_error());

	/* caught by the self-check against what the reader accepts */
	t->t = fx.t3;
	fx.g->nodes[0].inputs[0] = 99;
	cr_assert_eq(om_encode(fx.m, &d, &n), -1);
	cr_assert_str_eq(last_error(), "cannot write a valid .om file: graph "
				       "0: node 0: input 0 refers to tensor "
				       "99 of 8");
	fx.g->nodes[0].inputs[0] = 0;
	fx.g->vals[5].tkind = 9;
	cr_assert_eq(om_encode(fx.m, &d, &n), -1);
	cr_assert(strstr(last_error(), "type 9 is not a type kind"), "%s",
		  last_error());
	fx.g->vals[5].tkind = TK_TENSOR;
	cr_assert_eq(om_encode(fx.m, &d, &n), 0, "%s", last_error());
	free(d);
	model_free(fx.m);
}

/* A bare file name: the temporary file goes in the current directory. */
Test(om, write_relative_path)
{
	Fixture fx = build();
	char *dir = tmpdir(), names[256];
	uint8_t *d;
	size_t n;
	encode(fx.m, &d, &n);
	cr_assert_eq(chdir(dir), 0);
	cr_assert_eq(om_write(fx.m, "rel.om"), 0, "%s", last_error());
	assert_file("rel.om", d, n);
	cr_assert_eq(om_write(fx.m, "rel.om"), 0, "%s", last_error());
	list_dir(".", names, sizeof(names));
	cr_assert_str_eq(names, "rel.om");
	cr_assert_eq(om_write(fx.m, "sub/"), -1);
	cr_assert_str_eq(last_error(), "--output 'sub/': not a file name");
	cr_assert_eq(chdir("/"), 0);
	rm_rf(dir);
	free(dir);
	free(d);
	model_free(fx.m);
}

/* A model whose only weights are empty tensors has no WEIGHTS bytes: the
 * writer once laid out no partition but still padded up to one. */
Test(om, only_empty_weights)
{
	Model *m = model_new();
	Graph *g = m->graph = graph_new(&m->arena, "g", NULL);
	Shape s = shape_of(1, (int64_t[]){ 0 });
	ValId w = graph_add_value(g, "empty", VAL_WEIGHT);
	g->vals[w].dtype = DT_FLOAT;
	g->vals[w].shape = s;
	g->vals[w].konst = tensor_new(&m->arena, "empty", DT_FLOAT, &s, NULL);
	g->outputs = arena_alloc(&m->arena, sizeof(ValId));
	g->outputs[0] = w;
	g->noutputs = 1;
	uint8_t *bytes;
	size_t n;
	cr_assert_eq(om_encode(m, &bytes, &n), 0, "%s", last_error());
	OmFile f;
	cr_assert_eq(om_parse(&f, bytes, n, "e.om"), 0, "%s", last_error());
	cr_expect_eq(f.model->n_weights, 1);
	cr_expect_eq(f.weights_size, 0);
	om_close(&f);
	free(bytes);
	model_free(m);
}

/* ---- what a MODEL_DEF may make the reader allocate ---------------------- */

/* The file d with `extra` appended to its MODEL_DEF (weights kept). */
static void append_to_def(const uint8_t *d, const uint8_t *extra,
			  size_t nextra, uint8_t **out, size_t *len)
{
	uint32_t nparts = om_get_u32(d + 28);
	uint64_t defoff = om_get_u64(d + 72), defsz = om_get_u64(d + 80);
	uint64_t woff = 0, wsz = 0;
	cr_assert_eq(om_get_u32(d + 64), OM_PART_MODEL_DEF);
	if (nparts == 2) {
		woff = om_get_u64(d + 88 + 8);
		wsz = om_get_u64(d + 88 + 16);
	}
	size_t nd = (size_t)defsz + nextra;
	uint64_t nwoff = om_align(defoff + nd);
	*len = (size_t)(nparts == 2 ? nwoff + wsz : defoff + nd);
	uint8_t *c = *out = xcalloc(*len, 1);
	memcpy(c, d, (size_t)defoff + (size_t)defsz);
	memcpy(c + defoff + defsz, extra, nextra);
	om_put_u64(c + 16, *len);
	om_put_u64(c + 80, nd);
	if (nparts == 2) {
		om_put_u64(c + 96, nwoff);
		memcpy(c + nwoff, d + woff, (size_t)wsz);
	}
	fix_crc(c, *len);
}

/* Empty Model.graphs entries (field 7, length 0: two bytes each) cost
 * protobuf-c some 180 bytes each: the reader refuses them before
 * unpacking.  A few empty entries are within the slack and decode (and
 * the model check then says what is wrong). */
Test(om, empty_repeated_entries_are_bounded)
{
	uint8_t *d, *c;
	size_t n, len;
	small_file(&d, &n);
	enum { MANY = 1000000 };
	uint8_t *extra = xmalloc(2 * MANY);
	for (size_t i = 0; i < MANY; i++) {
		extra[2 * i] = 0x3a;
		extra[2 * i + 1] = 0;
	}
	append_to_def(d, extra, 2 * MANY, &c, &len);
	expect_error(c, len, "MODEL_DEF would take ");
	expect_error(c, len, "more than 40 times its ");
	free(c);

	append_to_def(d, extra, 2 * 10, &c, &len);
	OmFile f;
	clear_error();
	cr_assert_eq(om_parse(&f, c, len, "mem.om"), -1);
	cr_expect(!strstr(last_error(), "MODEL_DEF would take"), "%s",
		  last_error());
	free(c);
	free(extra);
	free(d);
}

/* A string field holding a NUL byte would be cut there by protobuf-c:
 * the reader says so instead. */
Test(om, nul_in_a_string_is_an_error)
{
	uint8_t *d, *c;
	size_t n, len;
	small_file(&d, &n);
	/* Model.options += Option { key: "a\0b" } */
	static const uint8_t opt[] = { 0x1a, 0x05, 0x0a, 0x03, 'a', 0, 'b' };
	append_to_def(d, opt, sizeof(opt), &c, &len);
	expect_error(c, len, "MODEL_DEF: field gearom.Option.key holds a NUL "
			     "byte");
	free(c);
	free(d);
}

/* The loader's open (om_open_readonly) gives back the MODEL_DEF bytes
 * once they are unpacked: a constant gearc computed sits there inline,
 * and the runtime kept three copies of it (the file's, the message's,
 * the raised model's).  Now the file's pages are given back (mincore
 * says so) but stay reserved (mappings made since survive om_close), the
 * raised tensor is the message's bytes, and the weights of the WEIGHTS
 * partition still read back. */
Test(om, readonly_open_keeps_one_copy_of_inline_constants)
{
	Model *m = model_new();
	Arena *a = &m->arena;
	Graph *g = m->graph = graph_new(a, "root", NULL);
	Shape s = shape_of(1, (int64_t[]){ 65536 });
	Tensor *t = tensor_new(a, "folded", DT_FLOAT, &s, NULL);
	for (int i = 0; i < 65536; i++)
		((float *)(uintptr_t)t->data)[i] = (float)i;
	t->folded = true;
	Tensor *w = tensor_new(a, "W", DT_FLOAT, &s, t->data);
	ValId vf = add_weight(g, "folded", t), vw = add_weight(g, "W", w);
	ValId outs[2] = { vf, vw };
	set_io(g, NULL, 0, outs, 2);
	char *dir = tmpdir(), *path = join(dir, "m.om");
	cr_assert_eq(om_write(m, path), 0, "%s", last_error());

	OmFile f;
	cr_assert_eq(om_open_readonly(&f, path), 0, "%s", last_error());
	cr_assert_gt(f.def_size, 3 * 4096);
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t mid = ((uintptr_t)f.data + f.def_off + f.def_size / 2) &
			~(uintptr_t)(page - 1);
	unsigned char vec = 1;
	errno = 0;
	int mc = mincore((void *)mid, (size_t)page, &vec);
	/* unmapped (ENOMEM) is not resident either: qemu-user (make
	 * check-arm64) answers so for the pages given back */
	cr_assert(mc == 0 || errno == ENOMEM || errno == ENOSYS,
		  "mincore: %s", strerror(errno));
	if (mc == 0)
		cr_expect_eq(vec & 1, 0, "a page of MODEL_DEF is still resident");
	/* mappings made after the open, which could land where those
	 * pages were, outlive om_close */
	enum { NMAP = 64 };
	uint8_t *maps[NMAP];
	size_t dsz = (size_t)f.def_size;
	for (int i = 0; i < NMAP; i++) {
		maps[i] = mmap(NULL, dsz, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		cr_assert_neq(maps[i], MAP_FAILED);
		memset(maps[i], i, dsz);
	}
	cr_assert_eq(f.weights_size, w->nbytes);
	cr_expect_eq(memcmp(f.weights, w->data, w->nbytes), 0);

	Model *r = om_to_model(&f);
	cr_assert(r, "%s", last_error());
	const Gearom__Weight *x = NULL;
	for (size_t k = 0; k < f.model->n_weights; k++)
		if (f.model->weights[k]->has_data)
			x = f.model->weights[k];
	cr_assert(x);
	const Tensor *rt = NULL;
	for (int32_t i = 0; i < r->graph->nvals; i++)
		if (!strcmp(r->graph->vals[i].name, "folded"))
			rt = r->graph->vals[i].konst;
	cr_assert(rt && rt->folded);
	cr_expect_eq(rt->data, x->data.data, "the constant was copied");
	cr_expect_eq(memcmp(rt->data, t->data, t->nbytes), 0);
	model_free(r);
	om_close(&f);
	for (int i = 0; i < NMAP; i++) {
		cr_expect_eq(maps[i][dsz / 2], (uint8_t)i);
		munmap(maps[i], dsz);
	}
	rm_rf(dir);
	free(path);
	free(dir);
	model_free(m);
}
