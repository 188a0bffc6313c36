/* tests/test_gear.c - gear compilation: root structure, branches, output
 * tables, weight sharing, thread-count independence. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "compiler/onnx.h"
#include "passes/passes.h"
#include "serializer/om.h"

#define DEMO "tests/fixtures/demo_cnn.onnx"

/* Loads path and compiles it with the given gear options and -j jobs.
 * Asserts success unless want_error is given, which the error must
 * contain (then NULL is returned). */
static Model *compile_opts(const char *path, GearOptions go, int jobs,
			   const char *want_error)
{
	ParsedGears pg;
	PassOptions o = { .jobs = jobs,
			  .fold_limit = 64 * 1024,
			  .no_fuse = 1 /* these test the unfused clone */ };
	Model *m = onnx_load(path);
	cr_assert(m, "%s", last_error());
	cr_assert_eq(gear_parse(&pg, &go), 0, "%s", last_error());
	int rc = gear_apply(m, &pg);
	if (!rc)
		rc = run_passes(m, &o);
	gear_parsed_release(&pg);
	if (want_error) {
		cr_assert_eq(rc, -1, "compiled, expected an error");
		cr_expect(strstr(last_error(), want_error), "error '%s' lacks '%s'",
			  last_error(), want_error);
		model_free(m);
		return NULL;
	}
	cr_assert_eq(rc, 0, "%s", last_error());
	return m;
}

static Model *demo_batch(const char *gears, int jobs)
{
	GearOptions go = { .input_shape = "x:-1,3,32,32",
			   .dynamic_batch_size = gears };
	return compile_opts(DEMO, go, jobs, NULL);
}

static const Value *val(const Graph *g, const char *name)
{
	for (ValId i = 0; i < g->nvals; i++)
		if (!strcmp(g->vals[i].name, name))
			return &g->vals[i];
	cr_assert_fail("graph '%s' has no value '%s'", g->name, name);
	return NULL;
}

static void expect_shape(const Shape *s, const char *want)
{
	char buf[128];
	cr_expect_str_eq(shape_str(s, buf, sizeof(buf)), want);
}

Test(gear, root_structure)
{
	Model *m = demo_batch("1,4,8", 1);
	Graph *root = m->graph;
	cr_assert_eq(root->nnodes, 2);
	cr_expect_eq(root->nodes[0].op, OP_MapIndex);
	cr_expect_str_eq(root->nodes[0].domain, GEARC_DOMAIN);
	cr_expect_eq(root->nodes[1].op, OP_Case);

	/* inputs: x at the max gear, then gear_dims */
	cr_assert_eq(root->ninputs, 2);
	expect_shape(&root->vals[root->inputs[0]].shape, "[8,3,32,32]");
	cr_expect_eq(root->inputs[1], m->gear_info);
	const Value *gd = &root->vals[m->gear_info];
	cr_expect_str_eq(gd->name, "gear_dims");
	cr_expect_eq(gd->dtype, DT_INT64);
	expect_shape(&gd->shape, "[1]");

	/* MapIndex(gear_dims, table) -> branch; the table holds the gears */
	const Node *mi = &root->nodes[0];
	cr_expect_eq(mi->inputs[0], m->gear_info);
	const Tensor *table = root->vals[mi->inputs[1]].konst;
	cr_assert(table);
	cr_assert_eq(shape_numel(&table->shape), 3);
	cr_expect_eq(tensor_get_i64(table, 0), 1);
	cr_expect_eq(tensor_get_i64(table, 1), 4);
	cr_expect_eq(tensor_get_i64(table, 2), 8);
	expect_shape(&root->vals[mi->outputs[0]].shape, "[]");

	/* Case(branch, x) -> probs, with the gear attributes; the gear
	 * count and values are the Model's table, not stated again */
	const Node *cs = &root->nodes[1];
	cr_expect_eq(cs->inputs[0], mi->outputs[0]);
	cr_expect_eq(cs->inputs[1], root->inputs[0]);
	cr_expect_null(node_attr(cs, "gear_count"));
	cr_expect_null(node_attr(cs, "gear_dims"));
	cr_expect_str_eq(attr_str(cs, "dynamic_type", ""), "batch");
	const Attr *order = node_attr(cs, "input_order");
	cr_assert(order && order->type == ATTR_STRINGS && order->n == 1);
	cr_expect_eq(order->strings[0].len, 1);
	cr_expect_eq(order->strings[0].data[0], 'x');
	const Attr *br = node_attr(cs, "branches");
	cr_assert(br && br->type == ATTR_GRAPHS && br->n == 3);
	for (int g = 0; g < 3; g++) {
		char name[16];
		snprintf(name, sizeof(name), "Batch_%d", g);
		cr_expect_str_eq(br->graphs[g]->name, name);
		cr_expect_eq(br->graphs[g]->parent, root);
		cr_expect_eq(br->graphs[g], m->branches[g]);
	}
	cr_assert_eq(root->noutputs, 1);
	cr_expect_str_eq(root->vals[root->outputs[0]].name, "probs");
	expect_shape(&root->vals[root->outputs[0]].shape, "[-1,10]");
	cr_expect_eq(graph_verify(root), 0, "%s", last_error());
	model_free(m);
}

Test(gear, branches_are_specialised_and_share_weights)
{
	Model *m = demo_batch("1,4,8", 2);
	static const char *want[] = { "[1,10]", "[4,10]", "[8,10]" };
	for (int g = 0; g < 3; g++) {
		const Graph *b = m->branches[g];
		char suffix[16], label[16];
		snprintf(suffix, sizeof(suffix), "_batch_%d", g);
		snprintf(label, sizeof(label), "Batch_%d", g);
		expect_shape(&val(b, "probs")->shape, want[g]);
		for (int32_t i = 0; i < b->nnodes; i++) {
			const char *n = b->nodes[i].name;
			size_t ln = strlen(n), ls = strlen(suffix);
			cr_expect(ln > ls && !strcmp(n + ln - ls, suffix),
				  "node '%s' lacks '%s'", n, suffix);
			cr_expect_str_eq(b->nodes[i].label, label);
		}
		for (ValId i = 0; i < b->nvals; i++)
			cr_expect(b->vals[i].kind == VAL_WEIGHT ||
					  shape_is_static(&b->vals[i].shape),
				  "gear %d: '%s' is not static", g,
				  b->vals[i].name);
	}
	/* one Tensor for conv1.W, whatever the gear */
	cr_expect_eq(val(m->branches[0], "conv1.W")->konst,
		     val(m->branches[2], "conv1.W")->konst);
	model_free(m);
}

static uint8_t *encode(Model *m, size_t *n)
{
	uint8_t *bytes;
	cr_assert_eq(om_encode(m, &bytes, n), 0, "%s", last_error());
	return bytes;
}

Test(gear, output_tables)
{
	Model *m = demo_batch("2,16", 1);
	size_t n;
	uint8_t *bytes = encode(m, &n);
	OmFile f;
	cr_assert_eq(om_parse(&f, bytes, n, "t.om"), 0, "%s", last_error());
	const Gearom__Model *om = f.model;
	cr_assert_eq(om->n_gears, 2);
	for (int g = 0; g < 2; g++) {
		const Gearom__Gear *gr = om->gears[g];
		int64_t batch = g ? 16 : 2;
		cr_expect_eq(gr->dims[0], batch);
		cr_assert_eq(gr->n_outputs, 1);
		cr_expect_str_eq(gr->outputs[0]->name, "probs");
		cr_assert_eq(gr->outputs[0]->n_dims, 2);
		cr_expect_eq(gr->outputs[0]->dims[0], batch);
		cr_expect_eq(gr->outputs[0]->dims[1], 10);
		cr_expect_eq(gr->outputs[0]->bytes, (uint64_t)batch * 10 * 4);
		cr_assert_geq(gr->graph, 0);
		cr_expect_str_eq(om->graphs[gr->graph]->name, gr->label);
		cr_expect_eq(gr->inputs[0]->dims[0], batch);
	}
	cr_assert_eq(om->n_inputs, 1, "gear_dims must not be a model input");
	cr_expect_eq(om->inputs[0]->max_shape[0], 16);
	cr_expect_eq(om->inputs[0]->shape[0], -1);
	cr_expect_eq(om->outputs[0]->shape[0], -1);
	om_close(&f);
	free(bytes);
	model_free(m);
}

/* The WEIGHTS partition of an encoded file. */
static void weights_of(const uint8_t *bytes, size_t n, const uint8_t **w,
		       uint64_t *wn)
{
	OmFile f;
	cr_assert_eq(om_parse(&f, bytes, n, "t.om"), 0, "%s", last_error());
	*w = f.weights;
	*wn = f.weights_size;
	om_close(&f);
}

Test(gear, weights_partition_does_not_grow_with_gears)
{
	char hundred[512];
	size_t k = 0;
	for (int g = 1; g <= 100; g++)
		k += (size_t)snprintf(hundred + k, sizeof(hundred) - k, "%s%d",
				      g > 1 ? "," : "", g);
	Model *m2 = demo_batch("1,2", 0), *m100 = demo_batch(hundred, 0);
	size_t n2, n100;
	uint8_t *b2 = encode(m2, &n2), *b100 = encode(m100, &n100);
	const uint8_t *w2, *w100;
	uint64_t wn2, wn100;
	weights_of(b2, n2, &w2, &wn2);
	weights_of(b100, n100, &w100, &wn100);
	cr_assert_eq(wn2, wn100);
	cr_expect(!memcmp(w2, w100, wn2), "WEIGHTS differ for 2 and 100 gears");
	cr_expect_lt(wn2, 8192, "weights partition is %llu bytes",
		     (unsigned long long)wn2);
	free(b2);
	free(b100);
	model_free(m2);
	model_free(m100);
}

Test(gear, output_does_not_depend_on_jobs)
{
	Model *a = demo_batch("1,3,5,7,9,11", 1), *b = demo_batch("1,3,5,7,9,11", 2),
	      *c = demo_batch("1,3,5,7,9,11", 5);
	size_t na, nb, nc;
	uint8_t *ba = encode(a, &na), *bb = encode(b, &nb), *bc = encode(c, &nc);
	cr_assert_eq(na, nb);
	cr_assert_eq(na, nc);
	cr_expect(!memcmp(ba, bb, na), "-j1 and -j2 differ");
	cr_expect(!memcmp(ba, bc, na), "-j1 and -j5 differ");
	free(ba);
	free(bb);
	free(bc);
	model_free(a);
	model_free(b);
	model_free(c);
}

Test(gear, image_size_two_inputs)
{
	GearOptions go = { .input_shape = "a:1,3,-1,-1;b:1,3,-1,-1",
			   .dynamic_image_size = "32,32;64,48" };
	Model *m = compile_opts("tests/fixtures/two_inputs.onnx", go, 2, NULL);
	expect_shape(&val(m->graph, "a")->shape, "[1,3,64,48]");
	expect_shape(&val(m->branches[0], "out")->shape, "[1,3,32,32]");
	expect_shape(&val(m->branches[1], "out")->shape, "[1,3,64,48]");
	expect_shape(&m->graph->vals[m->graph->outputs[0]].shape, "[1,3,-1,-1]");
	const Tensor *table = m->graph->vals[m->graph->nodes[0].inputs[1]].konst;
	cr_assert_eq(shape_numel(&table->shape), 8); /* H,W for a and b */
	cr_expect_eq(tensor_get_i64(table, 4), 64);
	cr_expect_eq(tensor_get_i64(table, 7), 48);
	model_free(m);
}

Test(gear, failing_gear_is_named)
{
	/* a and b get different W in gear 1: Add cannot broadcast them */
	GearOptions go = { .input_shape = "a:1,3,8,-1;b:1,3,8,-1",
			   .dynamic_dims = "4,4;4,5" };
	compile_opts("tests/fixtures/two_inputs.onnx", go, 2,
		     "gear 1 (Batch_1, dims 4,5): node ");
}
