/* tests/test_verify.c - 'gearc verify': clean files pass; plans and shapes
 * corrupted on purpose (then re-encoded with a correct checksum, so only
 * verify can tell) fail with exit 1 and a message naming the culprits. */
#include "testrun.h"

#include <dirent.h>

#include "cli/cli.h"
#include "omedit.h"
#include "runtime/rt.h"
#include "synth.h"

#define DEMO "--model=tests/fixtures/demo_cnn.onnx"

/* demo_cnn with batch gears 1,4,8 compiled into a fresh directory. */
static Fx compile_demo(void)
{
	return fx_compile("demo_cnn.onnx", "x:-1,3,32,32",
			  "--dynamic_batch_size=1,4,8");
}

/* Writes x's file with MODEL_DEF replaced by its (mutated) message. */
static void write_mutated(const Fx *x)
{
	omedit_write(x->data, x->f.model, x->om);
}

static Gearom__Graph *gear_graph(const Fx *x, int gear)
{
	const Gearom__Model *m = x->f.model;
	return m->graphs[m->gears[gear]->graph];
}

static int32_t tensor(const Gearom__Graph *g, const char *name)
{
	for (size_t i = 0; i < g->n_tensors; i++)
		if (!strcmp(g->tensors[i]->name, name))
			return (int32_t)i;
	cr_assert_fail("graph '%s' has no tensor '%s'", g->name, name);
	return -1;
}

static Gearom__MemBlock *block(const Gearom__Graph *g, const char *name)
{
	int32_t t = tensor(g, name);
	for (size_t i = 0; i < g->plan->n_blocks; i++)
		if (g->plan->blocks[i]->tensor == t)
			return g->plan->blocks[i];
	cr_assert_fail("tensor '%s' has no block", name);
	return NULL;
}

static void expect_verify_error(const Fx *x, const char *frag)
{
	write_mutated(x);
	Run r = run_gearc("verify", x->om);
	expect_error(&r, 1, frag);
	cr_expect(strstr(r.err, x->om), "the error names the file: %s", r.err);
	cr_expect_str_empty(r.out);
	run_free(&r);
}

Test(verify, clean_files_pass)
{
	Fx x = compile_demo();
	Run r = run_gearc("verify", x.om);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "verify: 4 graphs, 4 plans (28 tensors), I/O "
				"table against 3 graphs, 32 shapes: ok\n");
	cr_expect_str_empty(r.err);
	run_free(&r);
	r = run_gearc("verify", "-v", x.om);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "graph 'Batch_2': plan ok: 9 blocks, arena "
				"524288 bytes, lower bound 524288\n"),
		  "%s", r.out);
	run_free(&r);
	/* a static compile too */
	char out[700];
	snprintf(out, sizeof(out), "--output=%s/s", x.dir);
	r = run_gearc(DEMO, out, "--input_shape=x:2,3,32,32", "--no-fuse");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	char *s = path_in(x.dir, "s.om");
	r = run_gearc("verify", s);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "verify: 1 graphs, 1 plans (9 tensors), I/O "
				"table against 1 graphs, 10 shapes: ok\n");
	run_free(&r);
	free(s);
	fx_free(&x);
}

Test(verify, usage_and_corrupt_files)
{
	Run r = run_gearc("verify");
	expect_error(&r, 2, "verify needs the .om file(s) to check");
	run_free(&r);
	r = run_gearc("verify", "a.om", "b.om"); /* two files, neither there */
	cr_expect_eq(r.status, 1);
	run_free(&r);
	r = run_gearc("verify", "--help");
	cr_expect_eq(r.status, 0);
	cr_expect(strstr(r.out, "usage: gearc verify"), "%s", r.out);
	run_free(&r);
	r = run_gearc("verify", "/nonexistent/x.om");
	cr_expect_eq(r.status, 1);
	run_free(&r);
	Fx x = compile_demo();
	x.data[x.size / 2] ^= 0x55; /* caught by the reader: checksum */
	write_file(x.om, x.data, x.size);
	x.data[x.size / 2] ^= 0x55;
	r = run_gearc("verify", x.om);
	expect_error(&r, 1, "checksum mismatch");
	run_free(&r);
	fx_free(&x);
}

Test(verify, overlapping_live_tensors)
{
	Fx x = compile_demo();
	Gearom__Graph *g = gear_graph(&x, 1);
	/* c1 (conv1) and b1 (bn1) are both live at step 1 */
	block(g, "c1")->offset = block(g, "b1")->offset;
	char want[200];
	snprintf(want, sizeof(want), "graph 'Batch_1': tensors 'c1' and 'b1' "
		 "are live together at step 1 and overlap in the arena "
		 "([%llu,%llu) and [%llu,%llu))",
		 (unsigned long long)block(g, "c1")->offset,
		 (unsigned long long)(block(g, "c1")->offset + 131072),
		 (unsigned long long)block(g, "b1")->offset,
		 (unsigned long long)(block(g, "b1")->offset + 131072));
	expect_verify_error(&x, want);
	fx_free(&x);
}

Test(verify, misaligned_offset)
{
	Fx x = compile_demo();
	Gearom__MemBlock *b = block(gear_graph(&x, 2), "c1");
	b->offset += 32;
	char want[200];
	snprintf(want, sizeof(want), "graph 'Batch_2': tensor 'c1': offset "
		 "%llu is not a multiple of 64", (unsigned long long)b->offset);
	expect_verify_error(&x, want);
	fx_free(&x);
}

Test(verify, offset_past_the_arena)
{
	Fx x = compile_demo();
	Gearom__Graph *g = gear_graph(&x, 0);
	block(g, "p1")->offset = g->plan->arena_bytes;
	expect_verify_error(&x, "graph 'Batch_0': tensor 'p1': bytes [65536,"
				"73728) lie past the end of the 65536-byte arena");
	fx_free(&x);
}

Test(verify, block_too_small_for_the_shape)
{
	Fx x = compile_demo();
	block(gear_graph(&x, 0), "p1")->size = 64;
	expect_verify_error(&x, "graph 'Batch_0': tensor 'p1' needs 8192 bytes, "
				"its block has 64");
	fx_free(&x);
}

Test(verify, lifetime_cut_short)
{
	Fx x = compile_demo();
	block(gear_graph(&x, 1), "c1")->last = 0;
	expect_verify_error(&x, "graph 'Batch_1': tensor 'c1': the plan ends "
				"its life at step 0, but node 'bn1_batch_1' "
				"reads it at step 1");
	fx_free(&x);
}

Test(verify, view_with_a_buffer_of_its_own)
{
	Fx x = compile_demo();
	Gearom__Graph *g = gear_graph(&x, 1);
	Gearom__MemBlock *f = block(g, "f");
	cr_assert_eq(f->alias_of, tensor(g, "g"));
	f->offset += 64;
	expect_verify_error(&x, "graph 'Batch_1': tensor 'f' shares the buffer "
				"of 'g' (");
	fx_free(&x);
}

Test(verify, in_place_marked_as_a_view)
{
	Fx x = compile_demo();
	Gearom__MemBlock *r = block(gear_graph(&x, 1), "r1");
	cr_assert(r->inplace);
	r->inplace = 0;
	expect_verify_error(&x, "tensor 'r1' is a view of 'b1', but its "
				"producer 'relu1_batch_1' (Relu) is not a view "
				"op");
	fx_free(&x);
}

Test(verify, tensor_missing_from_the_plan)
{
	Fx x = compile_demo();
	Gearom__MemoryPlan *p = gear_graph(&x, 2)->plan;
	Gearom__MemBlock *b = block(gear_graph(&x, 2), "p1");
	size_t i = 0;
	while (p->blocks[i] != b)
		i++;
	memmove(p->blocks + i, p->blocks + i + 1,
		(p->n_blocks - i - 1) * sizeof(*p->blocks));
	p->n_blocks--;
	expect_verify_error(&x, "graph 'Batch_2': tensor 'p1' (made by "
				"'pool1_batch_2') has no place in the arena");
	p->blocks[p->n_blocks++] = b; /* for om_close */
	fx_free(&x);
}

Test(verify, order_that_reads_before_writing)
{
	Fx x = compile_demo();
	Gearom__MemoryPlan *p = gear_graph(&x, 0)->plan;
	int32_t t = p->order[0];
	p->order[0] = p->order[1];
	p->order[1] = t;
	expect_verify_error(&x, "graph 'Batch_0': node 'bn1_batch_0' (step 0) "
				"reads 'c1' before its producer 'conv1_batch_0' "
				"runs (step 1)");
	fx_free(&x);
}

Test(verify, wrong_figures_and_missing_plan)
{
	Fx x = compile_demo();
	gear_graph(&x, 0)->plan->lower_bound_bytes += 64;
	expect_verify_error(&x, "graph 'Batch_0': the plan records a lower "
				"bound of 65600 bytes, its blocks give 65536");
	gear_graph(&x, 0)->plan->lower_bound_bytes -= 64;
	Gearom__Graph *root = x.f.model->graphs[x.f.model->root];
	Gearom__MemoryPlan *p = root->plan;
	root->plan = NULL;
	expect_verify_error(&x, "graph 'root' has no memory plan");
	root->plan = p;
	fx_free(&x);
}

Test(verify, shape_that_inference_disagrees_with)
{
	Fx x = compile_demo();
	Gearom__Graph *g = gear_graph(&x, 1);
	Gearom__Tensor *t = g->tensors[tensor(g, "p1")];
	cr_assert_eq(t->n_dims, 4);
	t->dims[3] = 8; /* [4,8,16,16] -> [4,8,16,8]: its block still fits */
	expect_verify_error(&x, "graph 'Batch_1': node 'pool1_batch_1' output "
				"'p1': the file records float32 [4,8,16,8], "
				"inference gives float32 [4,8,16,16]");
	fx_free(&x);
}

/* ---- subgraph workspaces (plans only: If has no shape inference yet) ---- */

static void set_output(Graph *g, ValId v)
{
	g->outputs = arena_alloc(g->arena, sizeof(ValId));
	g->outputs[0] = v;
	g->noutputs = 1;
}

static void set_type(Graph *g, ValId v, Shape s)
{
	g->vals[v].dtype = DT_FLOAT;
	g->vals[v].shape = s;
}

/* A branch reading h from its parent through a n-float intermediate. */
static Graph *if_branch(Graph *parent, const char *name, ValId h, int64_t n)
{
	Graph *b = graph_new(parent->arena, name, parent);
	ValId o = graph_add_value(b, "h", VAL_OUTER);
	b->vals[o].outer = h;
	set_type(b, o, SHAPE(4));
	char nm[64];
	snprintf(nm, sizeof(nm), "%s_sig", name);
	ValId t = tu_out(tu_node(b, "Sigmoid", nm, IDS(o), 1), 0);
	set_type(b, t, SHAPE(n));
	snprintf(nm, sizeof(nm), "%s_relu", name);
	ValId y = tu_out(tu_node(b, "Relu", nm, IDS(t), 1), 0);
	set_type(b, y, SHAPE(4));
	set_output(b, y);
	return b;
}

/* h = Sigmoid(x), u = Tanh(x), y = If(cond) reading h, z = y + u. */
static Model *if_model(void)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(4));
	ValId cond = tu_input(g, "cond", DT_BOOL, SCALAR);
	ValId h = tu_out(tu_node(g, "Sigmoid", "sig", IDS(x), 1), 0);
	ValId u = tu_out(tu_node(g, "Tanh", "tanh", IDS(x), 1), 0);
	ValId y = tu_out(tu_node(g, "If", "if", IDS(cond), 1), 0);
	node_add_attr(g, &g->nodes[2], "then_branch", ATTR_GRAPH)->g =
		if_branch(g, "then", h, 16);
	node_add_attr(g, &g->nodes[2], "else_branch", ATTR_GRAPH)->g =
		if_branch(g, "else", h, 32);
	ValId z = tu_out(tu_node(g, "Add", "add", IDS(y, u), 1), 0);
	ValId vs[] = { h, u, y, z };
	for (int k = 0; k < 4; k++)
		set_type(g, vs[k], SHAPE(4));
	set_output(g, z);
	return m;
}

static void expect_plan_error(const OmFile *f, const char *want)
{
	cr_expect_eq(verify_plans(f), -1, "verify took a bad plan (%s)", want);
	cr_expect(strstr(last_error(), want), "'%s' lacks '%s'", last_error(),
		  want);
}

Test(verify, subgraph_workspaces)
{
	Model *m = if_model();
	cr_assert_eq(graph_verify(m->graph), 0, "%s", last_error());
	PassOptions o = { .jobs = 1 };
	cr_assert_eq(pass_memplan(m, &o), 0, "%s", last_error());
	uint8_t *d;
	size_t n;
	cr_assert_eq(om_encode(m, &d, &n), 0, "%s", last_error());
	OmFile f;
	cr_assert_eq(om_parse(&f, d, n, "if.om"), 0, "%s", last_error());
	cr_expect_eq(verify_plans(&f), 0, "%s", last_error());

	Gearom__Graph *g = f.model->graphs[f.model->root];
	Gearom__MemoryPlan *p = g->plan;
	Gearom__MemBlock *ws = p->blocks[p->n_blocks - 1];
	cr_assert_eq(ws->node, 2);
	cr_assert_eq(ws->tensor, -1);
	cr_expect_eq(ws->size, 128);
	ws->size = 64;
	expect_plan_error(&f, "graph 'main': the workspace of node 'if' has 64 "
			      "bytes, its subgraph 'else' needs 128");
	ws->size = 128;
	uint64_t off = ws->offset;
	ws->offset = p->blocks[0]->offset; /* h's block, 'sig:0' */
	char want[200];
	snprintf(want, sizeof(want), "graph 'main': 'sig:0' and the workspace of "
		 "node 'if' are live together at step 2 and overlap in the "
		 "arena ([%llu,%llu)",
		 (unsigned long long)ws->offset,
		 (unsigned long long)ws->offset + 64);
	cr_assert_str_eq(g->tensors[p->blocks[0]->tensor]->name, "sig:0");
	expect_plan_error(&f, want);
	ws->offset = off;
	p->n_blocks--;
	expect_plan_error(&f, "graph 'main': node 'if' runs subgraph 'else' (a "
			      "128-byte arena) but has no workspace");
	p->n_blocks++;
	cr_expect_eq(verify_plans(&f), 0, "%s", last_error());
	om_close(&f);
	free(d);
	model_free(m);
}

/* ---- every model gearc compiles verifies ---------------------------------- */

static void expect_verifies(Model *m, const char *dir, const char *name)
{
	cr_assert(m, "%s: %s", name, last_error());
	char *om = path_in(dir, "v.om");
	cr_assert_eq(om_write(m, om), 0, "%s: %s", name, last_error());
	model_free(m);
	Run r = run_gearc("verify", om);
	cr_expect_eq(r.status, 0, "%s: %s", name, r.err);
	cr_expect(strstr(r.out, "shapes: ok\n"), "%s: %s", name, r.out);
	run_free(&r);
	free(om);
}

Test(verify, synthetic_and_backend_models, .timeout = 300)
{
	char *d = temp_dir();
	expect_verifies(synth_compile(synth_resnet(8), SYNTH_RESNET_SHAPE,
				      "1,2,7", 0, 0, 2), d, "resnet");
	expect_verifies(synth_compile(synth_detector(), SYNTH_DETECTOR_SHAPE, 0,
				      "320,320;640,480", 0, 2), d, "detector");
	expect_verifies(synth_compile(synth_recognizer(), SYNTH_RECOGNIZER_SHAPE,
				      0, 0, "64;320", 2), d, "recognizer");
	expect_verifies(synth_compile(synth_vad(), SYNTH_VAD_SHAPE, 0, 0,
				      "100;1000", 2), d, "vad");
	expect_verifies(synth_compile(onnx_load("tests/fixtures/det.onnx"),
				      "x:1,3,-1,-1", 0, "640,640;1280,736", 0,
				      2), d, "det.onnx");
	expect_verifies(synth_compile(onnx_load("tests/fixtures/rec.onnx"),
				      "x:1,3,48,-1", 0, 0, "320;1280", 2), d,
			"rec.onnx");
	expect_verifies(synth_compile(onnx_load("tests/fixtures/vad.onnx"),
				      "input:1,-1;h:2,1,64;c:2,1,64", 0, 0,
				      "512;1536", 2), d, "vad.onnx");
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/pytorch-converted", testdata_dir());
	DIR *dd = opendir(dir);
	cr_assert(dd, "no %s", dir);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(dd))) {
		char test[2048];
		snprintf(test, sizeof(test), "%s/%s", dir, e->d_name);
		Model *m = e->d_name[0] != '.' ? backend_compile(test) : NULL;
		if (m) {
			expect_verifies(m, d, e->d_name);
			n++;
		}
	}
	closedir(dd);
	cr_expect_geq(n, 50, "only %d backend models compile", n);
	remove_tree(d);
	free(d);
}

/* ---- in place, by binary search (issue 19) -------------------------------- */

static OmFile encode_parse(Model *m, uint8_t **d)
{
	size_t n;
	OmFile f;
	cr_assert_eq(om_encode(m, d, &n), 0, "%s", last_error());
	cr_assert_eq(om_parse(&f, *d, n, "chain.om"), 0, "%s", last_error());
	return f;
}

static int32_t tensor_named(const Gearom__Graph *g, const char *name)
{
	for (size_t t = 0; t < g->n_tensors; t++)
		if (!strcmp(g->tensors[t]->name, name))
			return (int32_t)t;
	cr_assert_fail("no tensor '%s'", name);
	return -1;
}

/* A chain x -> Relu0 -> ... -> Relu5 -> y: every Relu output in place of
 * the one before.  A later node made to read an early tensor of the
 * buffer is a read after the buffer was overwritten. */
Test(verify, read_after_an_in_place_overwrite)
{
	Model *m = synth_compile(synth_chain(6), NULL, 0, 0, 0, 1);
	cr_assert(m, "%s", last_error());
	uint8_t *d;
	OmFile f = encode_parse(m, &d);
	cr_expect_eq(verify_plans(&f), 0, "%s", last_error());
	Gearom__Graph *g = f.model->graphs[f.model->root];
	int32_t a = tensor_named(g, "Relu1:0"), last = g->n_nodes - 1;
	cr_assert_eq(g->nodes[last]->n_inputs, 1);
	int32_t was = g->nodes[last]->inputs[0];
	g->nodes[last]->inputs[0] = a;
	Gearom__MemBlock *b = NULL;
	for (size_t k = 0; k < g->plan->n_blocks; k++)
		if (g->plan->blocks[k]->tensor == a)
			b = g->plan->blocks[k];
	cr_assert(b);
	b->last = last; /* within its buffer's lifetime */
	expect_plan_error(&f, "graph 'root': tensor 'Relu2:0' overwrites the "
			      "buffer of 'Relu0:0' in place at step 2, but node "
			      "'Relu5' reads 'Relu1:0' at step 5");
	g->nodes[last]->inputs[0] = was;
	cr_expect_eq(verify_plans(&f), 0, "%s", last_error());
	om_close(&f);
	free(d);
	model_free(m);
}

/* ScatterElements(a, i, a): its updates are its data again, read after
 * the writes begin, so the planner gives it a buffer of its own; a plan
 * putting it in place of a is refused. */
Test(verify, scatter_in_place_of_data_it_reads_again)
{
	Model *m = tu_model(13);
	Graph *mg = m->graph;
	ValId x = tu_input(mg, "x", DT_FLOAT, SHAPE(4, 8));
	ValId a = tu_out(tu_node(mg, "Neg", "neg", IDS(x), 1), 0);
	ValId i = tu_weight(mg, "i", DT_INT64, SHAPE(4, 8));
	ValId sc = tu_out(tu_node(mg, "ScatterElements", "sc", IDS(a, i, a), 1),
			  0);
	ValId y = tu_out(tu_node(mg, "Softmax", "sm", IDS(sc), 1), 0);
	mg->outputs = arena_alloc(&m->arena, sizeof(ValId));
	mg->outputs[0] = y;
	mg->noutputs = 1;
	mg->vals[y].flags |= VF_GRAPH_OUT;
	m = synth_compile(m, NULL, 0, 0, 0, 1);
	cr_assert(m, "%s", last_error());
	uint8_t *d;
	OmFile f = encode_parse(m, &d);
	cr_expect_eq(verify_plans(&f), 0, "%s", last_error());
	Gearom__Graph *g = f.model->graphs[f.model->root];
	int32_t ta = tensor_named(g, "neg:0"), ts = tensor_named(g, "sc:0");
	Gearom__MemBlock *ba = NULL, *bs = NULL;
	for (size_t k = 0; k < g->plan->n_blocks; k++) {
		if (g->plan->blocks[k]->tensor == ta)
			ba = g->plan->blocks[k];
		if (g->plan->blocks[k]->tensor == ts)
			bs = g->plan->blocks[k];
	}
	cr_assert(ba && bs);
	cr_assert(bs->alias_of < 0, "the planner put it in place");
	bs->alias_of = ta;
	bs->has_alias_of = true;
	bs->inplace = true;
	bs->has_inplace = true;
	bs->offset = ba->offset;
	ba->last = bs->last;
	expect_plan_error(&f, "tensor 'sc:0' overwrites the buffer of 'neg:0' "
			      "in place, but 'sc' (ScatterElements) reads it as "
			      "input 2 after writing");
	om_close(&f);
	free(d);
	model_free(m);
}

/* ---- lying gear tables and figures (issue 19, item 10) ---------------- */

/* A new attribute of the root's Case (malloc'd: om_close frees it). */
static Gearom__Attribute *case_add(const Fx *x, const char *name, int type)
{
	const Gearom__Graph *g = x->f.model->graphs[x->f.model->root];
	for (size_t i = 0; i < g->n_nodes; i++) {
		Gearom__Node *n = g->nodes[i];
		if (strcmp(n->op_type, "Case"))
			continue;
		n->attrs = realloc(n->attrs, (n->n_attrs + 1) * sizeof(*n->attrs));
		Gearom__Attribute *a = malloc(sizeof(*a));
		gearom__attribute__init(a);
		a->name = strdup(name);
		a->has_type = true;
		a->type = type;
		n->attrs[n->n_attrs++] = a;
		return a;
	}
	cr_assert_fail("no Case");
	return NULL;
}

/* The Case of the root: its attribute named name. */
static Gearom__Attribute *case_attr(const Fx *x, const char *name)
{
	const Gearom__Graph *g = x->f.model->graphs[x->f.model->root];
	for (size_t i = 0; i < g->n_nodes; i++)
		for (size_t k = 0; !strcmp(g->nodes[i]->op_type, "Case") &&
				   k < g->nodes[i]->n_attrs; k++)
			if (!strcmp(g->nodes[i]->attrs[k]->name, name))
				return g->nodes[i]->attrs[k];
	cr_assert_fail("no Case attribute '%s'", name);
	return NULL;
}

Test(verify, lying_arena_and_shape_figures)
{
	Fx x = compile_demo();
	Gearom__MemoryPlan *p = gear_graph(&x, 0)->plan;
	uint64_t arena = p->arena_bytes;
	p->arena_bytes = UINT64_MAX;
	expect_verify_error(&x, "graph 1: memory plan: arena_bytes is "
				"18446744073709551615, more than its blocks'");
	p->arena_bytes = arena + 64;
	char want[200];
	snprintf(want, sizeof(want), "graph 'Batch_0': the plan records an "
		 "arena of %llu bytes, its blocks reach %llu",
		 (unsigned long long)arena + 64, (unsigned long long)arena);
	expect_verify_error(&x, want);
	p->arena_bytes = arena;

	Gearom__ShapeInfo *out = x.f.model->gears[0]->outputs[0];
	out->bytes = UINT64_MAX;
	expect_verify_error(&x, "gear 0: output 0: bytes 18446744073709551615, "
				"its shape and dtype need 40");
	out->bytes = 44;
	expect_verify_error(&x, "gear 0: output 0: bytes 44, its shape and "
				"dtype need 40");
	out->bytes = 40;
	out->dims[0] = 2; /* as the branch does not give it */
	out->bytes = 80;
	expect_verify_error(&x, "gear 0: graph 'Batch_0': output 'probs' is "
				"float32 [1,10], the file's I/O table says "
				"float32 [2,10]");
	out->dims[0] = 1;
	out->bytes = 40;
	fx_free(&x);
}

Test(verify, lying_gear_tables)
{
	Fx x = compile_demo();
	Gearom__Model *m = x.f.model;
	int32_t graph = m->gears[0]->graph;
	m->gears[0]->graph = m->root;
	expect_verify_error(&x, "gear 0: graph 0 is not a branch of the root "
				"graph 0");
	m->gears[0]->graph = graph;

	m->gears[1]->dims[0] = -1;
	expect_verify_error(&x, "gear 1: dim 0 is -1, expected >= 1");
	m->gears[1]->dims[0] = 4;

	m->mode = GEAROM__MODE__MODE_STATIC;
	expect_verify_error(&x, "mode is static, but there are 3 gears and 1 "
				"gear inputs");
	m->mode = GEAROM__MODE__MODE_BATCH;
	size_t ngears = m->n_gears;
	m->n_gears = 0;
	expect_verify_error(&x, "mode 1 has 0 gears and 1 gear inputs");
	m->n_gears = ngears;

	Gearom__Attribute *br = case_attr(&x, "branches");
	int32_t b1 = br->graphs[1];
	br->graphs[1] = br->graphs[2];
	br->graphs[2] = b1;
	expect_verify_error(&x, "node 'gear_case': branch 1 is graph");
	br->graphs[2] = br->graphs[1];
	br->graphs[1] = b1;

	int64_t big = (int64_t)1 << 62;
	m->gear_inputs[0]->shape[1] = big;
	expect_verify_error(&x, "gear input 0 'x': its shape is not the model "
				"input's");
	m->gear_inputs[0]->shape[1] = 3;
	m->gears[2]->inputs[0]->dims[1] = big;
	expect_verify_error(&x, "gear 2: input 0: dim 1 is 4611686018427387904, "
				"expected 3");
	m->gears[2]->inputs[0]->dims[1] = 3;
	Gearom__Graph *b = gear_graph(&x, 0);
	b->tensors[tensor(b, "x")]->dims[0] = 2;
	expect_verify_error(&x, "gear 0: graph 'Batch_0': input 'x' is float32 "
				"[2,3,32,32], the file's I/O table says "
				"float32 [1,3,32,32]");
	b->tensors[tensor(b, "x")]->dims[0] = 1;
	write_mutated(&x);
	Run r = run_gearc("verify", x.om);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	fx_free(&x);
}

/* The file's bytes with the checksum made right again. */
static void write_raw(const Fx *x, uint8_t *c, size_t len)
{
	om_put_u64(c + 16, len);
	om_put_u32(c + 24, crc32_update(0, c + 64, len - 64));
	write_file(x->om, c, len);
}

Test(verify, reserved_fields_and_trailing_bytes)
{
	Fx x = compile_demo();
	uint8_t *c = calloc(x.size + 64, 1);
	memcpy(c, x.data, x.size);
	c[64 + 4] = 1; /* partition 0's reserved u32 */
	write_raw(&x, c, x.size);
	Run r = run_gearc("verify", x.om);
	expect_error(&r, 1, "partition 0: reserved field is 1, expected 0");
	run_free(&r);
	c[64 + 4] = 0;
	write_raw(&x, c, x.size + 64); /* 64 zero bytes after WEIGHTS */
	r = run_gearc("verify", x.om);
	expect_error(&r, 1, "64 bytes after the last partition");
	run_free(&r);
	write_raw(&x, c, x.size);
	r = run_gearc("verify", x.om);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	free(c);
	fx_free(&x);
}

/* The runtime's loader leaves each gear's shape check to its first run
 * (a file of many gears opens without re-inferring them all), and still
 * makes it before the gear runs: a gear whose recorded shapes inference
 * disagrees with is GEARRT_E_FILE on every run of it, naming the file;
 * the other gears run.  Export checks every gear first. */
Test(verify, a_gear_is_checked_before_its_first_run)
{
	Fx x = compile_demo();
	Gearom__Graph *g = gear_graph(&x, 1);
	g->tensors[tensor(g, "p1")]->dims[3] = 8;
	write_mutated(&x);
	gearrt_model *m;
	gearrt_session *s;
	cr_assert_eq(gearrt_model_open(x.om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, NULL, &s), GEARRT_OK);
	static float in[8 * 3 * 32 * 32];
	for (int b = 1; b <= 8; b += 3 + (b == 4)) { /* 1, 4, 8; 4: gear 1 */
		gearrt_tensor t = { .dtype = GEARRT_FLOAT32, .rank = 4,
				    .dims = { b, 3, 32, 32 }, .data = in,
				    .size = sizeof(in) };
		gearrt_tensor out = { 0 };
		for (int k = 0; k < 2; k++) {
			gearrt_status st = gearrt_run(s, &t, 1, &out, 1);
			if (b != 4) {
				cr_expect_eq(st, GEARRT_OK, "batch %d: %s", b,
					     gearrt_last_error());
				continue;
			}
			cr_expect_eq(st, GEARRT_E_FILE);
			cr_expect(strstr(gearrt_last_error(), x.om) &&
				  strstr(gearrt_last_error(),
					 "graph 'Batch_1': node 'pool1_batch_1' "
					 "output 'p1': the file records float32 "
					 "[4,8,16,8], inference gives float32 "
					 "[4,8,16,16]"),
				  "%s", gearrt_last_error());
		}
	}
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	char out[700];
	snprintf(out, sizeof(out), "--output=%s/e.onnx", x.dir);
	Run r = run_gearc("export", x.om, "--gear=0", out);
	expect_error(&r, 1, "graph 'Batch_1': node 'pool1_batch_1' output");
	run_free(&r);
	fx_free(&x);
}

/* What is a gear's own (its branch raised into the IR, its plan checked)
 * waits for its first run: a file of many gears opens without them.  A
 * block of gear 2 past the arena: the file opens with no branch raised,
 * gear 0 runs (only its branch is raised then), gear 2 is GEARRT_E_FILE
 * with verify's message. */
Test(verify, a_gears_raise_and_plans_wait_for_its_first_run)
{
	Fx x = compile_demo();
	Gearom__Graph *g = gear_graph(&x, 2);
	block(g, "p1")->offset = g->plan->arena_bytes;
	write_mutated(&x);
	gearrt_model *m;
	gearrt_session *s;
	cr_assert_eq(gearrt_model_open(x.om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	for (size_t k = 0; k < 3; k++)
		cr_expect_eq(m->m->branches[k]->nnodes, 0, "gear %zu raised "
			     "at open", k);
	cr_assert_eq(gearrt_session_create(m, NULL, &s), GEARRT_OK);
	static float in[8 * 3 * 32 * 32];
	gearrt_tensor t = { .dtype = GEARRT_FLOAT32, .rank = 4,
			    .dims = { 1, 3, 32, 32 }, .data = in,
			    .size = sizeof(in) };
	gearrt_tensor out = { 0 };
	cr_expect_eq(gearrt_run(s, &t, 1, &out, 1), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_expect_gt(m->m->branches[0]->nnodes, 0);
	cr_expect_eq(m->m->branches[1]->nnodes, 0);
	t.dims[0] = 8;
	cr_expect_eq(gearrt_run(s, &t, 1, &out, 1), GEARRT_E_FILE);
	cr_expect(strstr(gearrt_last_error(), x.om) &&
		  strstr(gearrt_last_error(), "graph 'Batch_2': tensor 'p1': "
					      "bytes [524288,"),
		  "%s", gearrt_last_error());
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	fx_free(&x);
}

/* The gear table is stored once: the root's Case no longer states the
 * gear count and values again.  A file written before, whose Case has
 * gear_count and gear_dims, still verifies, runs, and has them checked
 * against the table. */
Test(verify, the_gear_table_is_stored_once_old_files_still_read)
{
	Fx x = compile_demo();
	const Gearom__Graph *root = x.f.model->graphs[x.f.model->root];
	for (size_t i = 0; i < root->n_nodes; i++)
		for (size_t k = 0; k < root->nodes[i]->n_attrs; k++) {
			const char *a = root->nodes[i]->attrs[k]->name;
			cr_expect(strcmp(a, "gear_count") && strcmp(a, "gear_dims"),
				  "node '%s' states %s", root->nodes[i]->name, a);
		}
	Gearom__Attribute *cnt = case_add(&x, "gear_count", ATTR_INT);
	cnt->has_i = true;
	cnt->i = 3;
	Gearom__Attribute *dims = case_add(&x, "gear_dims", ATTR_INTS);
	int64_t rows[] = { 1, 4, 8 };
	dims->ints = malloc(sizeof(rows));
	memcpy(dims->ints, rows, sizeof(rows));
	dims->n_ints = 3;
	write_mutated(&x);
	Run r = run_gearc("verify", x.om);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	r = run_gearc("run", x.om, "--random-inputs", "--gear=2");
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	cnt->i = 1000000000;
	expect_verify_error(&x, "node 'gear_case': gear_count 1000000000, the "
				"gear table has 3 gears");
	cnt->i = 3;
	dims->ints[1] = 5;
	expect_verify_error(&x, "node 'gear_case': gear_dims disagree with "
				"gear 1's dims");
	dims->ints[1] = 4;
	dims->n_ints = 2;
	expect_verify_error(&x, "node 'gear_case': gear_dims disagree with "
				"gear 2's dims");
	fx_free(&x);
}

/* Several files: each checked and reported on a line of its own, an
 * error line for each that fails (a plan verify refuses, a file that
 * cannot be opened), exit 1 if any does. */
Test(verify, several_files_each_reported)
{
	Fx x = compile_demo(), y = compile_demo();
	Gearom__MemBlock *b = block(gear_graph(&y, 2), "c1");
	b->offset += 32;
	write_mutated(&y);
	char *missing = path_in(x.dir, "missing.om");
	Run r = run_gearc("verify", x.om, y.om, missing, x.om);
	cr_expect_eq(r.status, 1, "%s", r.err);
	char want[2048];
	snprintf(want, sizeof(want),
		 "%s: verify: 4 graphs, 4 plans (28 tensors), I/O table "
		 "against 3 graphs, 32 shapes: ok\n%s: failed\n%s: failed\n"
		 "%s: verify: 4 graphs, 4 plans (28 tensors), I/O table "
		 "against 3 graphs, 32 shapes: ok\n",
		 x.om, y.om, missing, x.om);
	cr_expect_str_eq(r.out, want);
	const char *e1 = strstr(r.err, "gearc: error: "),
		   *e2 = e1 ? strstr(e1 + 1, "gearc: error: ") : NULL;
	cr_expect(e1 && e2 && !strstr(e2 + 1, "gearc: error: "), "%s", r.err);
	cr_expect(e1 && strstr(e1, y.om) && strstr(e1, "is not a multiple of "
						       "64"), "%s", r.err);
	cr_expect(e2 && strstr(e2, missing), "%s", r.err);
	run_free(&r);
	r = run_gearc("verify", "-q", x.om, x.om);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect_str_empty(r.out);
	run_free(&r);
	r = run_gearc("verify");
	expect_error(&r, 2, "verify needs the .om file(s) to check");
	run_free(&r);
	free(missing);
	fx_free(&x);
	fx_free(&y);
}
