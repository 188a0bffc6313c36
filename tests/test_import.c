/*
 * tests/test_import.c - the ONNX importer (compiler/onnx.c).
 *
 * Run from the repository root: fixtures are read from tests/fixtures/
 * (made by tests/gen_fixtures.py), the ONNX backend test data from
 * $TESTDATA (default /usr/share/libonnx-testdata/data).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/onnx.h"

#define FIXTURES "tests/fixtures/"

/* ---- helpers ------------------------------------------------------------ */

static Model *load(const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), FIXTURES "%s", name);
	clear_error();
	Model *m = onnx_load(path);
	cr_assert_not_null(m, "loading %s failed: %s", path, last_error());
	return m;
}

static ValId find_value(const Graph *g, const char *name)
{
	for (ValId i = 0; i < g->nvals; i++)
		if (!strcmp(g->vals[i].name, name))
			return i;
	return -1;
}

static const Value *value(const Graph *g, const char *name)
{
	ValId v = find_value(g, name);
	cr_assert_geq(v, 0, "graph '%s' has no value '%s'", g->name, name);
	return &g->vals[v];
}

static const Node *node(const Graph *g, const char *name)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i].name, name))
			return &g->nodes[i];
	cr_assert_fail("graph '%s' has no node '%s'", g->name, name);
	return NULL;
}

static int32_t node_index(const Graph *g, const char *name)
{
	return (int32_t)(node(g, name) - g->nodes);
}

static Graph *subgraph(const Node *n, const char *attr)
{
	const Attr *a = node_attr(n, attr);
	cr_assert_not_null(a, "node '%s' has no attribute '%s'", n->name, attr);
	cr_assert_eq(a->type, ATTR_GRAPH);
	cr_assert_not_null(a->g);
	return a->g;
}

static void assert_shape(const Shape *s, int32_t rank, const int64_t *dims)
{
	char buf[64];
	cr_assert_eq(s->rank, rank, "rank %d, expected %d (%s)", s->rank, rank,
		     shape_str(s, buf, sizeof(buf)));
	for (int32_t i = 0; i < rank; i++)
		cr_assert_eq(s->dims[i], dims[i],
			     "dim %d is %lld, expected %lld", i,
			     (long long)s->dims[i], (long long)dims[i]);
}

static void assert_dim_param(const Value *v, int k, const char *name)
{
	if (!name) {
		cr_assert(!v->dim_params || !v->dim_params[k],
			  "'%s' dim %d has a dim_param", v->name, k);
		return;
	}
	cr_assert_not_null(v->dim_params, "'%s' has no dim_params", v->name);
	cr_assert_not_null(v->dim_params[k]);
	cr_assert_str_eq(v->dim_params[k], name);
}

static const Tensor *weight(const Graph *g, const char *name)
{
	const Value *v = value(g, name);
	cr_assert_eq(v->kind, VAL_WEIGHT, "'%s' is not a weight", name);
	cr_assert_not_null(v->konst);
	return v->konst;
}

static bool points_into(const Model *m, const void *p)
{
	const uint8_t *q = p;
	for (int32_t i = 0; i < m->nmaps; i++) {
		const FileMap *f = &m->maps[i];
		if (q >= f->data && q < f->data + f->size)
			return true;
	}
	return false;
}

/* Loads a malformed fixture and checks the message has every word. */
static void expect_error(const char *name, const char *const *words)
{
	char path[256];
	snprintf(path, sizeof(path), FIXTURES "%s", name);
	clear_error();
	Model *m = onnx_load(path);
	cr_assert_null(m, "%s loaded, but should not", name);
	const char *msg = last_error();
	char prefix[300];
	snprintf(prefix, sizeof(prefix), "model '%s'", path);
	cr_assert(!strncmp(msg, prefix, strlen(prefix)),
		  "message does not start with %s: %s", prefix, msg);
	for (; *words; words++)
		cr_assert(strstr(msg, *words), "message lacks \"%s\": %s",
			  *words, msg);
	cr_assert_null(strchr(msg, '\n'), "message is not one line: %s", msg);
}

#define EXPECT_ERROR(name, ...) \
	expect_error(name, (const char *const[]){ __VA_ARGS__, NULL })

/* ---- valid models ------------------------------------------------------- */

Test(import, demo_cnn_structure)
{
	Model *m = load("demo_cnn.onnx");
	const Graph *g = m->graph;
	static const int ops[] = {
		OP_Conv, OP_BatchNormalization, OP_Relu, OP_MaxPool, OP_Conv,
		OP_Relu, OP_GlobalAveragePool, OP_Flatten, OP_Gemm, OP_Softmax,
	};

	cr_assert_eq(m->ir_version, 8);
	cr_assert_eq(model_opset(m), 13);
	cr_assert_str_eq(m->producer_name, "gearc-fixtures");
	cr_assert_str_eq(m->path, FIXTURES "demo_cnn.onnx");
	cr_assert_eq(g->nnodes, 10);
	for (int i = 0; i < 10; i++)
		cr_assert_eq(g->nodes[i].op, ops[i], "node %d is %s", i,
			     g->nodes[i].op_type);
	cr_assert_str_eq(g->nodes[0].name, "conv1");
	cr_assert_null(g->parent);

	cr_assert_eq(g->ninputs, 1, "weights must not be inputs");
	const Value *x = &g->vals[g->inputs[0]];
	cr_assert_str_eq(x->name, "x");
	cr_assert_eq(x->kind, VAL_INPUT);
	cr_assert_eq(x->dtype, DT_FLOAT);
	assert_shape(&x->shape, 4, (int64_t[]){ -1, 3, 32, 32 });
	assert_dim_param(x, 0, "N");
	assert_dim_param(x, 1, NULL);

	cr_assert_eq(g->noutputs, 1);
	const Value *y = &g->vals[g->outputs[0]];
	cr_assert_str_eq(y->name, "probs");
	cr_assert(y->flags & VF_GRAPH_OUT);
	cr_assert_eq(y->kind, VAL_NODE);
	cr_assert_eq(y->producer, 9);
	assert_shape(&y->shape, 2, (int64_t[]){ -1, 10 });
	assert_dim_param(y, 0, "N");

	const Tensor *w = weight(g, "conv1.W");
	cr_assert_eq(w->dtype, DT_FLOAT);
	assert_shape(&w->shape, 4, (int64_t[]){ 8, 3, 3, 3 });
	cr_assert_eq(w->nbytes, 8 * 27 * 4);
	cr_assert_eq(((const float *)w->data)[0], 0.047143515199422836f);
	cr_assert_eq(crc32_update(0, w->data, w->nbytes), 0xc2b497c5u);
	w = weight(g, "fc.W");
	assert_shape(&w->shape, 2, (int64_t[]){ 10, 16 });
	cr_assert_eq(crc32_update(0, w->data, w->nbytes), 0xa19c4615u);
	w = weight(g, "bn1.var");
	cr_assert_eq(crc32_update(0, w->data, w->nbytes), 0x0f20d721u);

	const Node *conv = node(g, "conv1");
	cr_assert_eq(conv->ninputs, 3);
	cr_assert_eq(conv->inputs[0], g->inputs[0]);
	cr_assert_str_eq(g->vals[conv->inputs[1]].name, "conv1.W");
	const int64_t *v;
	cr_assert_eq(attr_ints(conv, "pads", &v), 4);
	cr_assert_eq(v[0], 1);
	cr_assert_eq(attr_ints(conv, "kernel_shape", &v), 2);
	cr_assert_eq(v[1], 3);
	cr_assert_eq(attr_int(node(g, "fc"), "transB", 0), 1);
	cr_assert_eq(attr_int(node(g, "softmax"), "axis", -1), 1);
	cr_assert_float_eq(attr_float(node(g, "bn1"), "epsilon", 0), 1e-5,
			   1e-9);
	model_free(m);
}

Test(import, mlp_reshape_and_initializer_input)
{
	Model *m = load("mlp.onnx");
	const Graph *g = m->graph;
	cr_assert_eq(g->nnodes, 5);
	/* W1 is listed as a graph input too: it is a weight, not an input */
	cr_assert_eq(g->ninputs, 1);
	cr_assert_str_eq(g->vals[g->inputs[0]].name, "x");
	const Tensor *w1 = weight(g, "W1");
	assert_shape(&w1->shape, 2, (int64_t[]){ 64, 32 });
	cr_assert_eq(crc32_update(0, w1->data, w1->nbytes), 0xf7426079u);

	const Node *r = node(g, "reshape");
	cr_assert_eq(r->op, OP_Reshape);
	const Value *shp = &g->vals[r->inputs[1]];
	cr_assert_str_eq(shp->name, "shape");
	cr_assert_eq(shp->kind, VAL_WEIGHT);
	cr_assert_eq(shp->dtype, DT_INT64);
	cr_assert_eq(shp->konst->nbytes, 16);
	cr_assert_eq(tensor_get_i64(shp->konst, 0), -1);
	cr_assert_eq(tensor_get_i64(shp->konst, 1), 32);
	model_free(m);
}

Test(import, backend_test_conv2d)
{
	const char *dir = getenv("TESTDATA");
	char path[512];
	snprintf(path, sizeof(path),
		 "%s/pytorch-converted/test_Conv2d/model.onnx",
		 dir && *dir ? dir : "/usr/share/libonnx-testdata/data");
	Model *m = onnx_load(path);
	cr_assert_not_null(m, "%s", last_error());
	const Graph *g = m->graph;
	cr_assert_eq(m->ir_version, 3);
	cr_assert_eq(model_opset(m), 6);
	cr_assert_str_eq(m->producer_name, "pytorch");
	cr_assert_eq(g->nnodes, 1);
	const Node *n = &g->nodes[0];
	cr_assert_eq(n->op, OP_Conv);
	cr_assert_eq(attr_int(n, "group", 0), 1);
	const int64_t *ks;
	cr_assert_eq(attr_ints(n, "kernel_shape", &ks), 2);
	cr_assert_eq(ks[0], 3);
	cr_assert_eq(ks[1], 2);

	/* The weights '1' and '2' are inputs and initializers: weights. */
	cr_assert_eq(g->ninputs, 1);
	const Value *x = &g->vals[g->inputs[0]];
	cr_assert_str_eq(x->name, "0");
	assert_shape(&x->shape, 4, (int64_t[]){ 2, 3, 7, 5 });
	cr_assert_null(x->dim_params);
	const Tensor *w = weight(g, "1");
	assert_shape(&w->shape, 4, (int64_t[]){ 4, 3, 3, 2 });
	cr_assert_eq(w->nbytes, 288);
	cr_assert_eq(crc32_update(0, w->data, w->nbytes), 0x8d8b45acu);
	cr_assert_eq(n->inputs[1], find_value(g, "1"));
	cr_assert_eq(crc32_update(0, weight(g, "2")->data, 16), 0xf82fc89eu);
	assert_shape(&value(g, "3")->shape, 4, (int64_t[]){ 2, 4, 5, 4 });
	model_free(m);
}

static void read_file(const char *path, uint8_t **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	*size = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	*data = malloc(*size ? *size : 1);
	cr_assert_eq(fread(*data, 1, *size, f), *size);
	fclose(f);
}

Test(import, external_data_is_mapped)
{
	Model *m = load("external_data.onnx");
	const Graph *g = m->graph;
	uint8_t *bin;
	size_t binsize;
	read_file(FIXTURES "external_data.bin", &bin, &binsize);
	cr_assert_eq(binsize, 544);

	const Tensor *w = weight(g, "W"), *b = weight(g, "b");
	assert_shape(&w->shape, 2, (int64_t[]){ 16, 8 });
	cr_assert_eq(w->nbytes, 512);
	cr_assert_eq(b->nbytes, 32);
	cr_assert(!memcmp(w->data, bin, 512));
	cr_assert(!memcmp(b->data, bin + 512, 32));
	for (int i = 0; i < 128; i++) /* what gen_fixtures.py wrote */
		cr_assert_eq(((const float *)w->data)[i], i * 0.25f - 3.0f);
	cr_assert_eq(((const float *)b->data)[0], -1.0f);
	cr_assert_eq(((const float *)b->data)[7], 1.0f);

	/* one file, mapped once, pointed into */
	cr_assert_eq(m->nmaps, 1);
	cr_assert(points_into(m, w->data), "W was copied");
	cr_assert(points_into(m, b->data), "b was copied");
	cr_assert_eq((const uint8_t *)b->data - (const uint8_t *)w->data, 512);
	cr_assert_eq(g->ninputs, 1);
	free(bin);
	model_free(m);
}

Test(import, external_data_misaligned_is_copied_aligned)
{
	Model *m = load("external_misaligned.onnx");
	const Tensor *k = weight(m->graph, "k"), *f = weight(m->graph, "f");
	static const float want[] = { 1.5f, -2.5f, 3.25f, 4.0f };
	cr_assert(points_into(m, k->data));
	cr_assert_eq(((const int8_t *)k->data)[1], -2);
	cr_assert_eq((uintptr_t)f->data % 4, 0, "float data misaligned");
	cr_assert(!memcmp(f->data, want, sizeof(want)));
	model_free(m);
}

Test(import, if_subgraph_outer_refs)
{
	Model *m = load("if_subgraph.onnx");
	Graph *g = m->graph;
	const Node *if1 = node(g, "if1");
	cr_assert_eq(if1->op, OP_If);
	cr_assert_gt(node_index(g, "if1"), node_index(g, "relu"));
	ValId h = find_value(g, "h"), one = find_value(g, "one");
	cr_assert_eq(g->vals[h].producer, node_index(g, "relu"));

	/* then1: Add(h, one), both from the main graph */
	Graph *then1 = subgraph(if1, "then_branch");
	cr_assert_eq(then1->parent, g);
	cr_assert_str_eq(then1->name, "then1");
	const Value *oh = value(then1, "h");
	cr_assert_eq(oh->kind, VAL_OUTER);
	cr_assert_eq(oh->outer, h);
	const Value *oone = value(then1, "one");
	cr_assert_eq(oone->kind, VAL_OUTER);
	cr_assert_eq(oone->outer, one);
	cr_assert_eq(oone->konst, g->vals[one].konst);
	cr_assert_eq(then1->noutputs, 1);
	cr_assert_str_eq(then1->vals[then1->outputs[0]].name, "t_out");

	/* else1 holds if2; its branches use h: else1 gets a VAL_OUTER 'h'
	 * only to chain the reference up to the main graph. */
	Graph *else1 = subgraph(if1, "else_branch");
	cr_assert_eq(else1->parent, g);
	const Node *if2 = node(else1, "if2");
	ValId cond1 = if2->inputs[0];
	cr_assert_eq(else1->vals[cond1].kind, VAL_OUTER);
	cr_assert_eq(else1->vals[cond1].outer, find_value(g, "cond"));
	ValId eh = find_value(else1, "h");
	cr_assert_geq(eh, 0, "no chained 'h' in else1");
	cr_assert_eq(else1->vals[eh].kind, VAL_OUTER);
	cr_assert_eq(else1->vals[eh].outer, h);

	Graph *then2 = subgraph(if2, "then_branch");
	cr_assert_eq(then2->parent, else1);
	const Node *mul = node(then2, "mul");
	cr_assert_eq(then2->vals[mul->inputs[0]].kind, VAL_OUTER);
	cr_assert_eq(then2->vals[mul->inputs[0]].outer, eh);
	ValId two1 = then2->vals[mul->inputs[1]].outer;
	cr_assert_eq(else1->vals[two1].kind, VAL_OUTER);
	cr_assert_eq(else1->vals[two1].outer, find_value(g, "two"));

	Graph *else2 = subgraph(if2, "else_branch");
	const Value *sh = value(else2, "h");
	cr_assert_eq(sh->kind, VAL_OUTER);
	cr_assert_eq(sh->outer, eh);
	cr_assert_eq(graph_verify(g), 0, "%s", last_error());
	model_free(m);
}

Test(import, loop_body)
{
	Model *m = load("loop_body.onnx");
	Graph *g = m->graph;
	const Node *loop = node(g, "loop");
	cr_assert_eq(loop->op, OP_Loop);
	cr_assert_eq(loop->ninputs, 3);
	cr_assert_str_eq(g->vals[loop->inputs[0]].name, "trip");
	cr_assert_eq(g->vals[loop->inputs[0]].kind, VAL_WEIGHT);
	cr_assert_eq(tensor_get_i64(g->vals[loop->inputs[0]].konst, 0), 3);
	cr_assert_eq(loop->inputs[2], g->inputs[0]);

	Graph *body = subgraph(loop, "body");
	cr_assert_eq(body->parent, g);
	cr_assert_eq(body->ninputs, 3);
	const Value *i = &body->vals[body->inputs[0]];
	cr_assert_str_eq(i->name, "i");
	cr_assert_eq(i->kind, VAL_INPUT);
	cr_assert_eq(i->dtype, DT_INT64);
	assert_shape(&i->shape, 0, NULL);
	cr_assert_eq(body->vals[body->inputs[1]].dtype, DT_BOOL);
	cr_assert_eq(body->noutputs, 2);
	cr_assert_str_eq(body->vals[body->outputs[1]].name, "v_out");
	cr_assert(body->vals[body->outputs[1]].flags & VF_GRAPH_OUT);

	const Node *acc = node(body, "acc");
	const Value *w = &body->vals[acc->inputs[1]];
	cr_assert_str_eq(w->name, "w");
	cr_assert_eq(w->kind, VAL_OUTER);
	cr_assert_eq(w->outer, find_value(g, "w"));
	cr_assert_eq(g->vals[w->outer].producer, node_index(g, "scale"));
	cr_assert_lt(node_index(g, "scale"), node_index(g, "loop"));
	model_free(m);
}

Test(import, three_inputs)
{
	Model *m = load("three_inputs.onnx");
	const Graph *g = m->graph;
	cr_assert_eq(g->ninputs, 3);
	const Value *t = &g->vals[g->inputs[0]], *k = &g->vals[g->inputs[1]],
		    *im = &g->vals[g->inputs[2]];
	cr_assert_str_eq(t->name, "tokens");
	cr_assert_eq(t->dtype, DT_INT64);
	assert_shape(&t->shape, 2, (int64_t[]){ -1, -1 });
	assert_dim_param(t, 0, "B");
	assert_dim_param(t, 1, "T");
	cr_assert_str_eq(k->name, "mask");
	cr_assert_eq(k->dtype, DT_FLOAT);
	assert_dim_param(k, 1, "T");
	cr_assert_str_eq(im->name, "image");
	assert_shape(&im->shape, 4, (int64_t[]){ 1, 3, 224, 224 });
	cr_assert_null(im->dim_params);
	cr_assert_eq(g->noutputs, 2);
	cr_assert_str_eq(g->vals[g->outputs[1]].name, "img_out");
	assert_shape(&g->vals[g->outputs[1]].shape, 2, (int64_t[]){ 1, 4 });
	cr_assert_eq(attr_int(node(g, "cast"), "to", 0), DT_FLOAT);
	model_free(m);
}

Test(import, two_inputs)
{
	Model *m = load("two_inputs.onnx");
	const Graph *g = m->graph;
	cr_assert_eq(g->ninputs, 2);
	for (int k = 0; k < 2; k++) {
		const Value *v = &g->vals[g->inputs[k]];
		cr_assert_str_eq(v->name, k ? "b" : "a");
		assert_shape(&v->shape, 4, (int64_t[]){ -1, 3, -1, -1 });
		assert_dim_param(v, 0, "N");
		assert_dim_param(v, 1, NULL);
		assert_dim_param(v, 2, "H");
		assert_dim_param(v, 3, "W");
	}
	cr_assert_eq(g->nnodes, 2);
	cr_assert_eq(g->nodes[1].op, OP_Relu);
	model_free(m);
}

Test(import, typed_data_fields)
{
	Model *m = load("typed_data.onnx");
	const Graph *g = m->graph;
	const Tensor *t;

	t = weight(g, "f32");
	cr_assert_eq(t->nbytes, 16);
	cr_assert_eq(((const float *)t->data)[1], -2.0f);
	t = weight(g, "i8");
	cr_assert_eq(t->nbytes, 3);
	cr_assert_eq(tensor_get_i64(t, 0), -1);
	cr_assert_eq(tensor_get_i64(t, 2), -128);
	t = weight(g, "u8");
	cr_assert_eq(tensor_get_i64(t, 1), 200);
	cr_assert_eq(tensor_get_i64(t, 2), 255);
	t = weight(g, "i16");
	cr_assert_eq(t->nbytes, 4);
	cr_assert_eq(tensor_get_i64(t, 0), -300);
	cr_assert_eq(tensor_get_i64(t, 1), 32767);
	t = weight(g, "u16");
	cr_assert_eq(tensor_get_i64(t, 1), 65535);
	t = weight(g, "i32");
	cr_assert_eq(tensor_get_i64(t, 0), -70000);
	t = weight(g, "b");
	cr_assert_eq(t->nbytes, 3);
	cr_assert(!memcmp(t->data, "\1\0\1", 3));
	t = weight(g, "f16");
	cr_assert_eq(t->nbytes, 4);
	cr_assert(!memcmp(t->data, "\x00\x3c\x00\xc0", 4));
	cr_assert_eq(tensor_get_f64(t, 1), -2.0);
	t = weight(g, "bf16");
	cr_assert(!memcmp(t->data, "\x80\x3f\x00\xc0", 4));
	cr_assert_eq(tensor_get_f64(t, 0), 1.0);
	t = weight(g, "i64");
	cr_assert_eq(tensor_get_i64(t, 1), (int64_t)1 << 40);
	t = weight(g, "f64");
	cr_assert_eq(tensor_get_f64(t, 1), -1e300);
	t = weight(g, "u32");
	cr_assert_eq(t->nbytes, 8);
	cr_assert_eq(((const uint32_t *)t->data)[1], 4000000000u);
	t = weight(g, "u64");
	cr_assert_eq(((const uint64_t *)t->data)[0], (uint64_t)1 << 63);
	t = weight(g, "str");
	cr_assert_eq(t->dtype, DT_STRING);
	cr_assert_eq(t->nbytes, 2 * sizeof(Bytes));
	const Bytes *s = t->data;
	cr_assert_eq(s[0].len, 2);
	cr_assert(!memcmp(s[0].data, "ab", 2));
	cr_assert_eq(s[1].len, 0);
	t = weight(g, "scalar");
	assert_shape(&t->shape, 0, NULL);
	cr_assert_eq(tensor_get_i64(t, 0), 42);
	t = weight(g, "empty");
	assert_shape(&t->shape, 2, (int64_t[]){ 0, 3 });
	cr_assert_eq(t->nbytes, 0);
	cr_assert_not_null(t->data);
	model_free(m);
}

Test(import, every_attribute_type)
{
	Model *m = load("attrs.onnx");
	Graph *g = m->graph;
	const Node *n = node(g, "all");
	const Attr *a;
	cr_assert_eq(n->op, OP_UNKNOWN);
	cr_assert_str_eq(n->domain, "ai.gearc.test");
	cr_assert_eq(m->nopsets, 2);

	cr_assert_eq(attr_float(n, "f", 0), 1.5f);
	cr_assert_eq(attr_int(n, "i", 0), -7);
	cr_assert_str_eq(attr_str(n, "s", ""), "hello");
	cr_assert_eq(node_attr(n, "s")->s.len, 5);
	a = node_attr(n, "t");
	cr_assert_eq(a->type, ATTR_TENSOR);
	cr_assert_str_eq(a->t->name, "t1");
	cr_assert_eq(tensor_get_i64(a->t, 2), 3);
	a = node_attr(n, "floats");
	cr_assert_eq(a->type, ATTR_FLOATS);
	cr_assert_eq(a->n, 2);
	cr_assert_eq(a->floats[1], 2.0f);
	const int64_t *ints;
	cr_assert_eq(attr_ints(n, "ints", &ints), 3);
	cr_assert_eq(ints[1], -5);
	a = node_attr(n, "strings");
	cr_assert_eq(a->type, ATTR_STRINGS);
	cr_assert_eq(a->n, 2);
	cr_assert_str_eq((const char *)a->strings[1].data, "bc");
	cr_assert_eq(a->strings[1].len, 2);
	a = node_attr(n, "tensors");
	cr_assert_eq(a->type, ATTR_TENSORS);
	cr_assert_eq(a->n, 2);
	cr_assert_eq(a->tensors[1]->dtype, DT_FLOAT);
	cr_assert_eq(tensor_get_f64(a->tensors[1], 0), 9.5);

	Graph *sub = subgraph(n, "g");
	cr_assert_eq(sub->parent, g);
	cr_assert_eq(value(sub, "x")->kind, VAL_OUTER);
	cr_assert_eq(value(sub, "x")->outer, g->inputs[0]);
	a = node_attr(n, "graphs");
	cr_assert_eq(a->type, ATTR_GRAPHS);
	cr_assert_eq(a->n, 2);
	cr_assert_eq(a->graphs[1]->parent, g);
	cr_assert_str_eq(a->graphs[1]->nodes[0].op_type, "Abs");

	const Node *c = node(g, "const");
	cr_assert_eq(c->op, OP_Constant);
	cr_assert_eq(attr_ints(c, "value_ints", &ints), 2);
	cr_assert_eq(ints[1], 20);
	model_free(m);
}

Test(import, deep_nesting_at_the_limit)
{
	Model *m = load("deep_nesting_64.onnx");
	Graph *g = m->graph;
	int depth = 0;
	while (g->nnodes == 1 && g->nodes[0].op == OP_If) {
		g = subgraph(&g->nodes[0], "then_branch");
		depth++;
	}
	cr_assert_eq(depth, 64);
	/* The innermost Identity reads x: an outer reference chained
	 * through all 64 levels to the main graph's input. */
	const Value *x = value(g, "x");
	for (; g->parent; g = g->parent) {
		cr_assert_eq(x->kind, VAL_OUTER);
		x = &g->parent->vals[x->outer];
	}
	cr_assert_eq(x->kind, VAL_INPUT);
	cr_assert_str_eq(x->name, "x");
	model_free(m);
}

Test(import, nodes_sorted_topologically)
{
	Model *m = load("unordered.onnx");
	const Graph *g = m->graph;
	cr_assert_eq(g->nnodes, 3);
	/* the If depends on relu through its branch's outer reference */
	cr_assert_str_eq(g->nodes[0].name, "relu");
	cr_assert_str_eq(g->nodes[1].name, "if");
	cr_assert_str_eq(g->nodes[2].name, "neg");
	cr_assert_eq(g->vals[find_value(g, "t")].producer, 1);
	model_free(m);
}

Test(import, load_bytes_from_memory)
{
	uint8_t *data;
	size_t size;
	read_file(FIXTURES "mlp.onnx", &data, &size);
	Model *m = onnx_load_bytes(data, size, "mem/mlp.onnx");
	cr_assert_not_null(m, "%s", last_error());
	cr_assert_str_eq(m->path, "mem/mlp.onnx");
	cr_assert_eq(m->graph->nnodes, 5);
	cr_assert_eq(weight(m->graph, "W2")->nbytes, 32 * 10 * 4);
	model_free(m);
	free(data);
}

/* ---- malformed models --------------------------------------------------- */

Test(import, bad_dangling_input)
{
	EXPECT_ERROR("bad_dangling_input.onnx",
		     "node 'add1' (Add) input 'ghost' is not produced by any "
		     "node, graph input or initializer");
}

Test(import, bad_dangling_in_subgraph)
{
	EXPECT_ERROR("bad_dangling_subgraph.onnx", "subgraph 'then_g'",
		     "node 'if_g' (If)", "node 'add_g' (Add) input 'ghost'",
		     "not produced");
}

Test(import, bad_two_producers)
{
	EXPECT_ERROR("bad_two_producers.onnx", "'h'", "produced by two nodes",
		     "'r1'", "'r2'");
}

Test(import, bad_cycle)
{
	EXPECT_ERROR("bad_cycle.onnx", "cycle through node");
}

Test(import, bad_dtype_value_info)
{
	EXPECT_ERROR("bad_dtype.onnx", "tensor 'h'", "unknown element type 99");
}

Test(import, bad_dtype_initializer)
{
	EXPECT_ERROR("bad_dtype_init.onnx", "tensor 'W'",
		     "unknown element type 99");
}

Test(import, bad_data_size)
{
	EXPECT_ERROR("bad_data_size.onnx", "tensor 'W'",
		     "12 bytes of raw_data", "[4,4]", "need 64");
}

Test(import, bad_typed_count)
{
	EXPECT_ERROR("bad_typed_count.onnx", "tensor 'W'",
		     "5 values in float_data", "need 6");
}

Test(import, bad_rank9)
{
	EXPECT_ERROR("bad_rank9.onnx", "tensor 'x'", "rank 9", "maximum of 8");
}

Test(import, bad_negative_dim)
{
	EXPECT_ERROR("bad_neg_dim.onnx", "tensor 'x'", "dim 0 is -3");
}

Test(import, bad_huge_tensor)
{
	/* 2^50 floats claimed, 16 bytes given: an error, not an allocation */
	EXPECT_ERROR("bad_huge_tensor.onnx", "tensor 'W'",
		     "16 bytes of raw_data", "need 4503599627370496");
}

Test(import, bad_overflowing_tensor)
{
	EXPECT_ERROR("bad_overflow_tensor.onnx", "tensor 'W'", "overflow");
}

Test(import, bad_sparse)
{
	EXPECT_ERROR("bad_sparse.onnx", "sparse initializer 'S'",
		     "not supported");
}

Test(import, bad_external_escape)
{
	EXPECT_ERROR("bad_external_escape.onnx", "tensor 'W'",
		     "'../external_data.bin'", "escapes the model's directory");
}

Test(import, bad_external_absolute)
{
	EXPECT_ERROR("bad_external_abs.onnx", "tensor 'W'", "'/etc/passwd'",
		     "absolute path");
}

Test(import, bad_external_range)
{
	EXPECT_ERROR("bad_external_range.onnx", "tensor 'W'", "offset 500",
		     "past the end of 'external_data.bin' (544 bytes)");
}

Test(import, bad_deep_nesting)
{
	EXPECT_ERROR("bad_deep_nesting.onnx", "node 'if64' (If)",
		     "subgraphs are nested more than 64 levels deep");
}

Test(import, truncated)
{
	EXPECT_ERROR("truncated.onnx",
		     "not a valid ONNX model (protobuf parse failed)");
}

Test(import, not_onnx)
{
	EXPECT_ERROR("not_onnx.onnx",
		     "not a valid ONNX model (protobuf parse failed)");
}

Test(import, empty_file)
{
	EXPECT_ERROR("empty.onnx", "empty");
}

Test(import, missing_file)
{
	EXPECT_ERROR("no_such_model.onnx", "cannot open");
}

/* Prepends the varint v at *pos (building a message back to front). */
static void put_varint_before(uint8_t *buf, size_t *pos, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;
	do {
		tmp[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	*pos -= n;
	memcpy(buf + *pos, tmp, n);
}

static void wrap(uint8_t *buf, size_t *pos, size_t end, uint8_t tag)
{
	put_varint_before(buf, pos, end - *pos);
	buf[--*pos] = tag;
}

Test(import, deep_protobuf_nesting_is_an_error)
{
	/* model.graph.input[0].type = sequence(sequence(... 100000 deep)):
	 * protobuf-c would recurse once per level and overflow the stack. */
	enum { LEVELS = 100000 };
	size_t cap = LEVELS * 8 + 64, end = cap, pos = cap;
	uint8_t *buf = malloc(cap);
	for (int i = 0; i < LEVELS; i++) {
		wrap(buf, &pos, end, 0x0a); /* Sequence.elem_type = 1 */
		wrap(buf, &pos, end, 0x22); /* TypeProto.sequence_type = 4 */
	}
	wrap(buf, &pos, end, 0x12); /* ValueInfoProto.type = 2 */
	wrap(buf, &pos, end, 0x5a); /* GraphProto.input = 11 */
	wrap(buf, &pos, end, 0x3a); /* ModelProto.graph = 7 */
	clear_error();
	Model *m = onnx_load_bytes(buf + pos, end - pos, "deep.onnx");
	cr_assert_null(m);
	cr_assert(strstr(last_error(), "model 'deep.onnx': not a valid ONNX "
					"model (protobuf messages are nested "
					"more than 256 levels deep)"),
		  "%s", last_error());
	free(buf);
}

/* Every prefix of a valid model and random byte corruptions: each load
 * either succeeds or fails with a message; none may crash (run this under
 * SANITIZE=1). */
Test(import, corrupt_models_do_not_crash)
{
	uint8_t *data, *copy;
	size_t size;
	read_file(FIXTURES "if_subgraph.onnx", &data, &size);
	copy = malloc(size);
	for (size_t n = 0; n < size; n++) {
		clear_error();
		Model *m = onnx_load_bytes(data, n, "cut.onnx");
		cr_assert(m || *last_error(), "no message for a prefix of %zu",
			  n);
		model_free(m);
	}
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	int ok = 0;
	for (int iter = 0; iter < 4000; iter++) {
		memcpy(copy, data, size);
		for (int k = 0; k < 1 + iter % 4; k++) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			copy[(seed >> 8) % size] = (uint8_t)seed;
		}
		clear_error();
		Model *m = onnx_load_bytes(copy, size, "fuzz.onnx");
		cr_assert(m || *last_error(), "no message at iteration %d",
			  iter);
		ok += m != NULL;
		model_free(m);
	}
	cr_log_info("%d of 4000 corrupted models loaded", ok);
	free(copy);
	free(data);
}
