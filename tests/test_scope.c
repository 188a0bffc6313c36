/* tests/test_scope.c - --gear_scope (passes/scope.h): the structure of a
 * scope compile (root, PartitionedCall, selector, Case over the clones),
 * node counts against the full clone, per-gear output tables, plans,
 * dump and verify, and the errors. */
#include <dirent.h>
#include <json-c/json.h>

#include "testrun.h"

#include "cli/cli.h"

#include "compiler/onnx.h"
#include "passes/passes.h"
#include "passes/partition.h"
#include "passes/scope.h"
#include "serializer/omimpl.h"

#define FX "tests/fixtures/"
#define CLS FX "scope_cls.onnx"
#define ENC FX "scope_enc.onnx"
#define TWO FX "scope_two.onnx"
#define CYCLE FX "scope_cycle.onnx"

#define CLS_SHAPE "x:1,3,-1,-1"
#define CLS_GEARS "224,224;320,320;448,448;640,480"
#define ENC_SHAPE "x:1,-1,16"
#define ENC_GEARS "32;64;128"
#define TWO_SHAPE "a:1,-1,8;b:1,-1,8"
#define TWO_GEARS "16,16;32,16;16,32;32,32;16,64"

/* ---- compiling in the library ------------------------------------------- */

/* Compiles path with the gear options and scope (NULL: none), -j jobs.
 * Asserts success unless want_error is given, which the error must
 * contain (NULL is then returned). */
static Model *compile(const char *path, GearOptions go, const char *scope,
		      int jobs, const char *want_error)
{
	ParsedGears pg;
	PassOptions o = { .jobs = jobs,
			  .fold_limit = 64 * 1024, .gear_scope = scope,
			  .no_fuse = 1 /* node counts of the unfused model */ };
	Model *m = onnx_load(path);
	cr_assert(m, "%s", last_error());
	cr_assert_eq(gear_parse(&pg, &go), 0, "%s", last_error());
	int rc = gear_apply(m, &pg);
	if (!rc)
		rc = run_passes(m, &o);
	gear_parsed_release(&pg);
	if (want_error) {
		cr_assert_eq(rc, -1, "compiled, expected an error");
		cr_expect(strstr(last_error(), want_error),
			  "error '%s' lacks '%s'", last_error(), want_error);
		model_free(m);
		return NULL;
	}
	cr_assert_eq(rc, 0, "%s", last_error());
	return m;
}

static Model *cls(const char *scope)
{
	GearOptions go = { .input_shape = CLS_SHAPE,
			   .dynamic_image_size = CLS_GEARS };
	return compile(CLS, go, scope, 0, NULL);
}

static Model *enc(const char *scope)
{
	GearOptions go = { .input_shape = ENC_SHAPE, .dynamic_dims = ENC_GEARS };
	return compile(ENC, go, scope, 0, NULL);
}

static Model *two(const char *scope)
{
	GearOptions go = { .input_shape = TWO_SHAPE, .dynamic_dims = TWO_GEARS };
	return compile(TWO, go, scope, 0, NULL);
}

static int count(Graph *g, void *ctx)
{
	*(int64_t *)ctx += g->nnodes;
	return 0;
}

static int64_t nodes_in(Graph *g)
{
	int64_t n = 0;
	graph_walk(g, count, &n);
	return n;
}

static const char *str_attr(const Node *n, const char *name)
{
	return attr_str(n, name, "");
}

/* The node called name in g or in the partitions (passes/partition.h) g
 * was split into; *owner (if given) is the graph that holds it. */
static const Node *node_in(const Graph *g, const char *name,
			   const Graph **owner)
{
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		if (!strcmp(n->name, name)) {
			if (owner)
				*owner = g;
			return n;
		}
		const Attr *f = node_attr(n, "f");
		const Node *in = n->op == OP_PartitionedCall && f &&
						 f->type == ATTR_GRAPH
					 ? node_in(f->g, name, owner)
					 : NULL;
		if (in)
			return in;
	}
	return NULL;
}

static const Node *node_named(const Graph *g, const char *name)
{
	return node_in(g, name, NULL);
}

static void expect_shape(const Shape *s, const char *want)
{
	char buf[128];
	cr_expect_str_eq(shape_str(s, buf, sizeof(buf)), want);
}

/* The multi-dims scope calls of the root (and of the partitions it was
 * split into), in order. */
static int32_t scope_calls(const Graph *root, const Node **out, int32_t max)
{
	int32_t n = 0;
	for (int32_t i = 0; i < root->nnodes; i++) {
		const Node *nd = &root->nodes[i];
		const Attr *f = node_attr(nd, "f");
		if (scope_is_call(nd) && n < max)
			out[n++] = nd;
		else if (nd->op == OP_PartitionedCall && f &&
			 f->type == ATTR_GRAPH)
			n += scope_calls(f->g, out + n, max - n);
	}
	return n;
}

static Graph *body_of(const Node *call)
{
	const Attr *a = node_attr(call, "body");
	cr_assert(a && a->type == ATTR_GRAPH && a->g);
	return a->g;
}

static const Node *case_of(const Graph *body)
{
	for (int32_t i = 0; i < body->nnodes; i++)
		if (body->nodes[i].op == OP_Case)
			return &body->nodes[i];
	cr_assert_fail("body '%s' has no Case", body->name);
	return NULL;
}

static bool all_static(Graph *g, void *ctx)
{
	(void)ctx;
	for (ValId v = 0; v < g->nvals; v++)
		if (g->vals[v].tkind == TK_TENSOR &&
		    !shape_is_static(&g->vals[v].shape))
			return false;
	return true;
}

static int static_visit(Graph *g, void *ctx)
{
	if (!all_static(g, NULL))
		*(const char **)ctx = g->name;
	return 0;
}

static void expect_static(Graph *g)
{
	const char *bad = NULL;
	graph_walk(g, static_visit, &bad);
	cr_expect(!bad, "graph '%s' has a tensor that is not static", bad);
}

static int has_plan(Graph *g, void *ctx)
{
	if (!g->plan)
		*(const char **)ctx = g->name;
	return 0;
}

/* o's member at path "gears.1.outputs.0.shape" (asserted present). */
static json_object *at(json_object *o, const char *path)
{
	char buf[256], *save = NULL;
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, (size_t)atoi(k));
		else if (!json_object_object_get_ex(o, k, &o))
			o = NULL;
		cr_assert(o, "no '%s' in the dump", path);
	}
	return o;
}

/* The options an expected.json entry gives (strings point into j). */
static GearOptions entry_options(json_object *e, char *path, size_t n)
{
	json_object *args, *model;
	json_object_object_get_ex(e, "args", &args);
	json_object_object_get_ex(e, "model", &model);
	const char *shape = json_object_get_string(
		json_object_array_get_idx(args, 0));
	const char *gears = json_object_get_string(
		json_object_array_get_idx(args, 1));
	GearOptions go = { .input_shape = strchr(shape, '=') + 1 };
	const char *v = strchr(gears, '=') + 1;
	if (strstr(gears, "image_size"))
		go.dynamic_image_size = v;
	else
		go.dynamic_dims = v;
	snprintf(path, n, FX "%s", json_object_get_string(model));
	return go;
}

/* ---- structure ------------------------------------------------------------ */

Test(scope, auto_keeps_the_head_outside)
{
	Model *m = cls("auto"), *full = cls(NULL);
	Graph *root = m->graph;
	cr_expect_null(m->branches, "a scope compile has no gear branches");
	cr_expect_eq(m->gear_info, -1, "no gear_dims input");
	cr_assert_eq(root->ninputs, 1);
	expect_shape(&root->vals[root->inputs[0]].shape, "[1,3,-1,-1]");

	/* root: one PartitionedCall, then the head, compiled once */
	const Node *calls[4];
	cr_assert_eq(scope_calls(root, calls, 4), 1);
	const Node *pc = calls[0];
	cr_expect_str_eq(pc->name, "scope_0");
	cr_expect_str_eq(pc->domain, GEARC_DOMAIN);
	cr_expect_eq(attr_int(pc, "multi_dims", 0), 1);
	cr_expect_str_eq(str_attr(pc, "scope"), "auto");
	const int64_t *map;
	cr_assert_eq(attr_ints(pc, "gear_map", &map), 4);
	for (int g = 0; g < 4; g++)
		cr_expect_eq(map[g], g, "four gears, four distinct shapes");
	cr_expect_eq(root->vals[pc->inputs[0]].kind, VAL_INPUT);
	cr_assert_eq(pc->noutputs, 1);
	cr_expect_str_eq(root->vals[pc->outputs[0]].name,
			 "/backbone/pool/GlobalAveragePool");
	expect_shape(&root->vals[pc->outputs[0]].shape, "[1,32,1,1]");
	for (int32_t i = 0; i < root->nnodes; i++) {
		const Node *n = &root->nodes[i];
		if (n == pc)
			continue;
		cr_expect(!strncmp(n->name, "/head/", 6) ||
				  !strcmp(n->name, "probs"),
			  "root node '%s' is not of the head", n->name);
		cr_expect_null(n->label, "shared node '%s' has a gear label",
			       n->name);
		for (int32_t k = 0; k < n->noutputs; k++)
			cr_expect(shape_is_static(&root->vals[n->outputs[k]].shape),
				  "head tensor of '%s' is not static", n->name);
	}
	/* the head's shape arithmetic (Shape of a gear-dependent map) is
	 * the same in every gear: a constant */
	const Node *rs = node_named(root, "/head/Reshape");
	cr_assert(rs);
	cr_expect(root->vals[rs->inputs[1]].konst, "the target is a constant");
	expect_shape(&root->vals[root->outputs[0]].shape, "[1,10]");

	/* body: Shape -> Concat -> MapIndex -> Case over four clones */
	Graph *b = body_of(pc);
	cr_expect_eq(b->parent, root);
	cr_assert_eq(b->nnodes, 4);
	cr_expect_eq(b->nodes[0].op, OP_Shape);
	cr_expect_eq(b->nodes[1].op, OP_Concat);
	cr_expect_eq(b->nodes[2].op, OP_MapIndex);
	const Node *cs = case_of(b);
	cr_expect_eq(cs->inputs[0], b->nodes[2].outputs[0]);
	cr_expect_eq(attr_int(cs, "gear_count", 0), 4);
	const int64_t *tab;
	cr_assert_eq(attr_ints(cs, "gear_dims", &tab), 16);
	cr_expect(tab[0] == 1 && tab[1] == 3 && tab[2] == 224 && tab[3] == 224);
	cr_expect(tab[12] == 1 && tab[13] == 3 && tab[14] == 640 &&
		  tab[15] == 480);
	const Tensor *t = b->vals[b->nodes[2].inputs[1]].konst;
	cr_assert(t && shape_numel(&t->shape) == 16);
	const Attr *br = node_attr(cs, "branches");
	cr_assert(br && br->n == 4);
	for (int c = 0; c < 4; c++) {
		Graph *cl = br->graphs[c];
		char name[32];
		snprintf(name, sizeof(name), "scope_0_dims_%d", c);
		cr_expect_str_eq(cl->name, name);
		cr_expect_eq(cl->parent, b);
		expect_static(cl);
		cr_assert(cl->nnodes > 0);
		cr_expect_str_eq(cl->nodes[0].label, name);
		cr_expect_eq(cl->nodes[cl->nnodes - 1].op, OP_GlobalAveragePool);
	}
	expect_shape(&br->graphs[3]->vals[br->graphs[3]->inputs[0]].shape,
		     "[1,3,640,480]");

	/* fewer nodes than the full clone, the same output table */
	int64_t scoped = nodes_in(root), whole = nodes_in(full->graph);
	cr_expect_eq(whole, 2 + 4 * 18, "full clone: %lld", (long long)whole);
	cr_expect_eq(scoped, 10 + 4 + 4 * 9, "scoped: %lld", (long long)scoped);
	cr_assert(m->gear_outputs);
	for (int g = 0; g < 4; g++) {
		Graph *fb = full->branches[g];
		cr_expect(shape_equal(&m->gear_outputs[g],
				      &fb->vals[fb->outputs[0]].shape),
			  "gear %d output", g);
	}
	/* every graph planned; the root has nothing left to the runtime */
	const char *unplanned = NULL;
	graph_walk(root, has_plan, &unplanned);
	cr_expect(!unplanned, "graph '%s' has no plan", unplanned);
	cr_expect_eq(root->plan->unplanned, 0);
	cr_expect(b->plan->arena_bytes >= br->graphs[3]->plan->arena_bytes,
		  "the body's arena holds its largest clone's");
	cr_expect_eq(graph_verify(root), 0, "%s", last_error());
	model_free(m);
	model_free(full);
}

Test(scope, one_clone_per_distinct_combination)
{
	Model *m = two("auto");
	const Node *calls[4];
	cr_assert_eq(scope_calls(m->graph, calls, 4), 2,
		     "each input's branch is a scope of its own");
	const int64_t want_map[2][5] = { { 0, 1, 0, 1, 0 }, { 0, 0, 1, 1, 2 } };
	const int32_t want_clones[2] = { 2, 3 };
	const char *want_sel[2] = { "a", "b" };
	for (int r = 0; r < 2; r++) {
		const int64_t *map;
		cr_assert_eq(attr_ints(calls[r], "gear_map", &map), 5);
		for (int g = 0; g < 5; g++)
			cr_expect_eq(map[g], want_map[r][g], "scope %d gear %d",
				     r, g);
		Graph *b = body_of(calls[r]);
		const Node *cs = case_of(b);
		cr_expect_eq(attr_int(cs, "gear_count", 0), want_clones[r]);
		const Attr *order = node_attr(cs, "input_order");
		cr_assert(order && order->n == 1);
		cr_expect_eq(order->strings[0].data[0], want_sel[r][0]);
		const int64_t *tab;
		cr_assert_eq(attr_ints(cs, "gear_dims", &tab),
			     3 * want_clones[r]);
		for (int c = 0; c < want_clones[r]; c++)
			cr_expect_eq(tab[3 * c + 1], 16 << c,
				     "scope %d clone %d length", r, c);
	}
	/* the head after the two ReduceMeans runs once, static */
	const Node *cc = node_named(m->graph, "/head/Concat");
	cr_assert(cc);
	expect_shape(&m->graph->vals[cc->outputs[0]].shape, "[1,16]");
	model_free(m);
}

Test(scope, input_the_same_in_every_gear_is_compiled_once)
{
	/* b is 16 long in every gear: its branch is not cloned, and the
	 * root knows its shapes */
	GearOptions go = { .input_shape = TWO_SHAPE,
			   .dynamic_dims = "16,16;32,16;64,16" };
	Model *m = compile(TWO, go, "auto", 0, NULL);
	Graph *root = m->graph;
	const Node *calls[4];
	cr_assert_eq(scope_calls(root, calls, 4), 1);
	cr_expect_str_eq(root->vals[calls[0]->inputs[0]].name, "a");
	expect_shape(&root->vals[root->inputs[0]].shape, "[1,-1,8]");
	expect_shape(&root->vals[root->inputs[1]].shape, "[1,16,8]");
	const Node *mm = node_named(root, "/b/MatMul");
	cr_assert(mm, "the b branch is in the root");
	expect_shape(&root->vals[mm->outputs[0]].shape, "[1,16,8]");
	cr_expect_eq(root->plan->unplanned, 0);
	model_free(m);
}

Test(scope, explicit_scope_takes_its_shape_arithmetic)
{
	Model *m = enc("/encoder/");
	Graph *root = m->graph;
	const Node *calls[2];
	cr_assert_eq(scope_calls(root, calls, 2), 1);
	cr_expect_str_eq(str_attr(calls[0], "scope"), "/encoder/");
	/* outside: the embedding (gear-dependent: -1 stays), the pooling
	 * and the head; the top-level /Shape arithmetic that feeds the
	 * encoder's Reshapes went into the scope and folded there */
	cr_expect(node_named(root, "/embed/MatMul"));
	cr_expect(node_named(root, "/pool/ReduceMean"));
	cr_expect(node_named(root, "/head/Gemm"));
	cr_expect_null(node_named(root, "/Shape"));
	cr_expect_null(node_named(root, "/Concat"));
	const Graph *at;
	const Node *add = node_in(root, "/embed/Add", &at);
	cr_assert(add);
	expect_shape(&at->vals[add->outputs[0]].shape, "[1,-1,32]");
	const Node *rm = node_in(root, "/pool/ReduceMean", &at);
	expect_shape(&at->vals[rm->outputs[0]].shape, "[1,32]");
	/* gear-dependent nodes outside scopes run dynamically: they are
	 * an unknown partition, with no plan (passes/partition.h) */
	bool dynamic = false;
	for (int32_t i = 0; i < root->nnodes; i++)
		dynamic |= partition_is_unknown(&root->nodes[i]);
	cr_expect(dynamic, "gear-dependent tensors outside scopes are left to "
		  "the runtime");
	Graph *b = body_of(calls[0]);
	cr_expect_str_eq(b->vals[b->inputs[0]].name, "/embed/Add");
	const Attr *br = node_attr(case_of(b), "branches");
	cr_assert(br && br->n == 3);
	for (int c = 0; c < 3; c++) {
		expect_static(br->graphs[c]);
		cr_expect_null(node_named(br->graphs[c], "/Shape_dims_0"),
			       "shape arithmetic folds in the clones");
	}
	for (int g = 0; g < 3; g++)
		expect_shape(&m->gear_outputs[g], "[1,8]");
	model_free(m);
}

Test(scope, auto_falls_back_when_not_smaller)
{
	/* batch gears: every node depends on the gear */
	GearOptions go = { .input_shape = "x:-1,3,32,32",
			   .dynamic_batch_size = "1,4,8" };
	Model *m = compile(FX "demo_cnn.onnx", go, "auto", 0, NULL);
	Model *full = compile(FX "demo_cnn.onnx", go, NULL, 0, NULL);
	cr_assert(m->branches, "the full clone is kept");
	cr_expect_null(m->gear_outputs);
	cr_expect_eq(m->graph->nodes[0].op, OP_MapIndex);
	cr_expect_eq(m->graph->nodes[1].op, OP_Case);
	cr_expect_eq(nodes_in(m->graph), nodes_in(full->graph));
	bool recorded = false;
	for (int32_t i = 0; i < m->noptions; i++)
		recorded |= !strcmp(m->options[i].key, "gear_scope") &&
			    !strcmp(m->options[i].val, "auto");
	cr_expect(recorded, "the option is recorded");
	model_free(m);
	model_free(full);
}

Test(scope, never_more_nodes_than_the_full_clone)
{
	/* the real-export fixtures: auto either wins or keeps the clone */
	static const char *const keys[] = { "det", "rec", "vad", "vad_batch" };
	size_t n;
	char *doc = read_file(FX "expected.json", &n);
	cr_assert(doc);
	json_object *j = json_tokener_parse(doc);
	free(doc);
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		json_object *e;
		char path[256];
		cr_assert(json_object_object_get_ex(j, keys[k], &e));
		GearOptions go = entry_options(e, path, sizeof(path));
		Model *m = compile(path, go, "auto", 0, NULL);
		Model *full = compile(path, go, NULL, 0, NULL);
		cr_expect(nodes_in(m->graph) <= nodes_in(full->graph), "%s",
			  keys[k]);
		model_free(m);
		model_free(full);
	}
	json_object_put(j);
}


Test(scope, output_tables_match_running_the_models)
{
	/* per gear, the output shapes tests/gen_scope_models.py got by
	 * running each model */
	static const struct { const char *key, *scope; } cases[] = {
		{ "scope_cls", "auto" }, { "scope_enc", "auto" },
		{ "scope_enc", "/encoder/" }, { "scope_two", "auto" },
		{ "scope_cycle", "auto" },
	};
	size_t n;
	char *doc = read_file(FX "scope_expected.json", &n), path[256];
	cr_assert(doc);
	json_object *j = json_tokener_parse(doc);
	free(doc);
	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		json_object *e, *gears;
		cr_assert(json_object_object_get_ex(j, cases[c].key, &e));
		GearOptions go = entry_options(e, path, sizeof(path));
		Model *m = compile(path, go, cases[c].scope, 0, NULL);
		const Graph *root = m->graph;
		json_object_object_get_ex(e, "gears", &gears);
		for (int32_t g = 0; g < m->gears->ngears; g++) {
			json_object *outs = at(json_object_array_get_idx(gears,
									 (size_t)g),
					       "outputs");
			for (int32_t k = 0; k < root->noutputs; k++) {
				const char *name = root->vals[root->outputs[k]].name;
				const Shape *s = m->gear_outputs
							 ? &m->gear_outputs[g * root->noutputs + k]
							 : &m->branches[g]->vals[m->branches[g]->outputs[k]].shape;
				char got[128];
				shape_str(s, got, sizeof(got));
				const char *want = json_object_to_json_string_ext(
					at(outs, name), JSON_C_TO_STRING_PLAIN);
				cr_expect_str_eq(got, want, "%s %s gear %d '%s'",
						 cases[c].key, cases[c].scope, g,
						 name);
			}
		}
		model_free(m);
	}
	json_object_put(j);
}

Test(scope, library_errors)
{
	GearOptions go = { .input_shape = CLS_SHAPE,
			   .dynamic_image_size = CLS_GEARS };
	compile(CLS, go, "/nowhere/", 0,
		"--gear_scope: prefix '/nowhere/' matches no node");
	compile(CLS, go, "/stem/", 0,
		"--gear_scope: node '/stem/Conv' reads graph input 'x' "
		"directly");
	compile(CLS, go, "/head/,probs", 0,
		"--gear_scope: node 'probs' writes graph output 'probs' "
		"directly");
	GearOptions gc = { .input_shape = "x:1,-1", .dynamic_dims = "4;8" };
	compile(CYCLE, gc, "/s/", 0,
		"--gear_scope: node '/o/b' reads from the scope of node "
		"'/s/c' and feeds it");
	GearOptions st = { .input_shape = "x:1,3,224,224" };
	compile(CLS, st, "auto", 0, "--gear_scope needs a gear option");
}

/* ---- through the command line ----------------------------------------- */

static json_object *dump_json(const char *om)
{
	Run r = run_gearc("dump", "--format=json", om);
	cr_assert_eq(r.status, 0, "dump: %s", r.err);
	json_object *j = json_tokener_parse(r.out);
	cr_assert(j, "not JSON: %s", r.out);
	run_free(&r);
	return j;
}


static void expect_json(json_object *j, const char *path, const char *want)
{
	cr_expect_str_eq(json_object_to_json_string_ext(
				 at(j, path), JSON_C_TO_STRING_PLAIN |
						      JSON_C_TO_STRING_NOSLASHESCAPE),
			 want, "%s", path);
}

/* Key k of o is there, and null. */
static void expect_null_key(json_object *o, const char *k)
{
	json_object *v = (json_object *)1;
	cr_expect(json_object_object_get_ex(o, k, &v) && !v, "'%s' is not null",
		  k);
}

static int64_t jint_at(json_object *j, const char *path)
{
	return json_object_get_int64(at(j, path));
}

/* Compiles into dir/name.om; returns the path (malloc'd). */
static char *compile_cli(const char *dir, const char *name, const char *model,
			 const char *shape, const char *gears, const char *scope,
			 const char *jobs)
{
	char *om = path_in(dir, name);
	char a_model[300], a_out[600], a_shape[200], a_gears[200], a_scope[200];
	snprintf(a_model, sizeof(a_model), "--model=%s", model);
	snprintf(a_out, sizeof(a_out), "--output=%s", om);
	snprintf(a_shape, sizeof(a_shape), "--input_shape=%s", shape);
	snprintf(a_gears, sizeof(a_gears), "%s", gears);
	snprintf(a_scope, sizeof(a_scope), "--gear_scope=%s", scope ? scope : "");
	const char *args[10] = { a_model, a_out, a_shape, a_gears,
				 "--no-fuse" };
	int n = 5;
	if (scope)
		args[n++] = a_scope;
	if (jobs)
		args[n++] = jobs;
	args[n] = NULL;
	Run r = run_gearcv(args);
	cr_assert_eq(r.status, 0, "compile %s: %s", name, r.err);
	run_free(&r);
	return om;
}

static void expect_verify_ok(const char *om)
{
	Run r = run_gearc("verify", om);
	cr_expect_eq(r.status, 0, "verify %s: %s", om, r.err);
	cr_expect(strstr(r.out, ": ok\n"), "%s", r.out);
	run_free(&r);
}

Test(scope, cli_auto_dump_and_verify)
{
	char *d = temp_dir();
	char *full = compile_cli(d, "full.om", CLS, CLS_SHAPE,
				 "--dynamic_image_size=" CLS_GEARS, NULL, NULL);
	char *om = compile_cli(d, "auto.om", CLS, CLS_SHAPE,
			       "--dynamic_image_size=" CLS_GEARS, "auto", NULL);
	json_object *f = dump_json(full), *j = dump_json(om);
	/* the contract's keys keep their meaning */
	expect_json(j, "mode", "\"image_size\"");
	expect_json(j, "gear_count", "4");
	expect_json(j, "inputs.0.shape", "[1,3,-1,-1]");
	expect_json(j, "inputs.0.max_shape", "[1,3,640,480]");
	expect_json(j, "outputs.0.shape", "[1,10]");
	for (int g = 0; g < 4; g++) {
		char p[64], q[64];
		snprintf(p, sizeof(p), "gears.%d.outputs", g);
		snprintf(q, sizeof(q), "gears.%d.nodes", g);
		cr_expect_str_eq(json_object_to_json_string(at(j, p)),
				 json_object_to_json_string(at(f, p)), "%s", p);
		/* a gear runs the 14 shared nodes and its 9-node clone */
		cr_expect_eq(jint_at(j, q), 23, "%s", q);
	}
	expect_null_key(f, "scope");
	/* what is shared and what is per gear */
	expect_json(j, "scope.option", "\"auto\"");
	expect_json(j, "scope.applied", "true");
	expect_json(j, "scope.nodes", "50");
	expect_json(j, "scope.shared_nodes", "14");
	expect_json(j, "scope.per_gear_nodes", "36");
	expect_json(j, "scope.regions.0.name", "\"scope_0\"");
	expect_json(j, "scope.regions.0.selector", "[\"x\"]");
	expect_json(j, "scope.regions.0.outputs",
		    "[\"/backbone/pool/GlobalAveragePool\"]");
	expect_json(j, "scope.regions.0.gear_map", "[0,1,2,3]");
	expect_json(j, "scope.regions.0.clones.1.graph", "\"scope_0_dims_1\"");
	expect_json(j, "scope.regions.0.clones.1.dims", "[1,3,320,320]");
	expect_json(j, "scope.regions.0.clones.1.gears", "[1]");
	expect_json(j, "scope.regions.0.clones.1.nodes", "9");
	cr_expect(jint_at(j, "scope.regions.0.clones.3.memory.arena_bytes") > 0);
	expect_json(j, "graphs.0.role", "\"root\"");
	expect_json(j, "graphs.0.shared", "true");
	expect_json(j, "graphs.1.role", "\"scope\"");
	expect_json(j, "graphs.1.shared", "true");
	expect_json(j, "graphs.2.role", "\"scope_clone\"");
	expect_json(j, "graphs.2.shared", "false");
	expect_json(f, "graphs.1.role", "\"gear_branch\"");
	expect_json(f, "graphs.1.shared", "false");
	/* fewer nodes in the file than the full clone's */
	int64_t total = 0, ftotal = 0;
	for (size_t i = 0; i < json_object_array_length(at(j, "graphs")); i++)
		total += json_object_get_int64(at(
			json_object_array_get_idx(at(j, "graphs"), i), "nodes"));
	for (size_t i = 0; i < json_object_array_length(at(f, "graphs")); i++)
		ftotal += json_object_get_int64(at(
			json_object_array_get_idx(at(f, "graphs"), i), "nodes"));
	cr_expect_eq(total, 50);
	cr_expect_eq(ftotal, 74);
	/* the model's arena holds the largest clone's */
	cr_expect(jint_at(j, "memory.arena_bytes") >=
		  jint_at(j, "scope.regions.0.clones.3.memory.arena_bytes"));
	expect_verify_ok(om);

	Run r = run_gearc("dump", om);
	cr_expect_eq(r.status, 0);
	cr_expect(strstr(r.out, "scope:     --gear_scope=auto: 1 scope; 14 "
				"nodes shared by every gear, 36 in clones (50 "
				"in all)"), "%s", r.out);
	cr_expect(strstr(r.out, "scope_0_dims_3       dims [1,3,640,480]  "
				"gears 3  9 nodes"), "%s", r.out);
	cr_expect(strstr(r.out, "graph root: 10 nodes, 20 tensors "
				"[shared by every gear]"), "%s", r.out);
	cr_expect(strstr(r.out, "inside scope_0 [per gear]"), "%s", r.out);
	run_free(&r);
	r = run_gearc("dump", "--format=dot", om);
	cr_expect_eq(r.status, 0);
	cr_expect(strstr(r.out, "scope_0_dims_2"));
	run_free(&r);
	json_object_put(f);
	json_object_put(j);
	free(full);
	free(om);
	remove_tree(d);
	free(d);
}

Test(scope, cli_explicit_scope_compiles_dumps_verifies)
{
	char *d = temp_dir();
	char *om = compile_cli(d, "enc.om", ENC, ENC_SHAPE,
			       "--dynamic_dims=" ENC_GEARS, "/encoder/,/pool/",
			       NULL);
	json_object *j = dump_json(om);
	expect_json(j, "scope.option", "\"/encoder/,/pool/\"");
	expect_json(j, "scope.applied", "true");
	expect_json(j, "scope.regions.0.scope", "\"/encoder/,/pool/\"");
	expect_json(j, "scope.regions.0.inputs", "[\"/embed/Add\"]");
	expect_json(j, "scope.regions.0.outputs", "[\"/pool/ReduceMean\"]");
	expect_json(j, "scope.regions.0.clones.2.dims", "[1,128,32]");
	expect_json(j, "gears.2.outputs.0.shape", "[1,8]");
	expect_json(j, "outputs.0.shape", "[1,8]");
	expect_verify_ok(om);
	json_object_put(j);
	free(om);
	remove_tree(d);
	free(d);
}

Test(scope, cli_output_does_not_depend_on_jobs)
{
	char *d = temp_dir();
	char *a = compile_cli(d, "a.om", TWO, TWO_SHAPE,
			      "--dynamic_dims=" TWO_GEARS, "auto", "-j1");
	char *b = compile_cli(d, "b.om", TWO, TWO_SHAPE,
			      "--dynamic_dims=" TWO_GEARS, "auto", "-j8");
	size_t na = 0, nb = 0;
	char *da = read_file(a, &na), *db = read_file(b, &nb);
	cr_assert(da && db);
	cr_expect(na == nb && !memcmp(da, db, na), "-j1 and -j8 differ");
	expect_verify_ok(a);
	free(da);
	free(db);
	free(a);
	free(b);
	remove_tree(d);
	free(d);
}

Test(scope, cli_errors)
{
	char *d = temp_dir(), *om = path_in(d, "m.om");
	char out[700];
	snprintf(out, sizeof(out), "--output=%s", om);
	const char *m = "--model=" CLS, *s = "--input_shape=" CLS_SHAPE,
		   *g = "--dynamic_image_size=" CLS_GEARS;
	Run r = run_gearc(m, out, "--input_shape=x:1,3,224,224",
			  "--gear_scope=auto");
	expect_error(&r, 2, "--gear_scope needs a gear option");
	run_free(&r);
	r = run_gearc(m, out, s, g, "--gear_scope=");
	expect_error(&r, 2, "--gear_scope is empty");
	run_free(&r);
	r = run_gearc(m, out, s, g, "--gear_scope=/a/,,/b/");
	expect_error(&r, 2, "--gear_scope: '/a/,,/b/' has an empty prefix");
	run_free(&r);
	r = run_gearc(m, out, s, g, "--gear_scope=auto,/head/");
	expect_error(&r, 2, "'auto' cannot be combined with prefixes");
	run_free(&r);
	r = run_gearc(m, out, s, g, "--gear_scope=/head/,/head/");
	expect_error(&r, 2, "prefix '/head/' is given twice");
	run_free(&r);
	r = run_gearc(m, out, s, g, "--gear_scope=/decoder/");
	expect_error(&r, 1, "prefix '/decoder/' matches no node");
	run_free(&r);
	r = run_gearc(m, out, s, g, "--gear_scope=/backbone/,/stem/");
	expect_error(&r, 1, "node '/stem/Conv' reads graph input 'x' directly");
	run_free(&r);
	r = run_gearc("--model=" CYCLE, out, "--input_shape=x:1,-1",
		      "--dynamic_dims=4;8", "--gear_scope=/s/");
	expect_error(&r, 1, "node '/o/b' reads from the scope of node '/s/c' "
			    "and feeds it");
	run_free(&r);
	cr_expect_neq(access(om, F_OK), 0, "a failed compile left %s", om);
	free(om);
	remove_tree(d);
	free(d);
}

/* ---- verify catches a wrong clone --------------------------------------- */

/* path's MODEL_DEF replaced by msg (weights kept, checksum right), as
 * tests/test_verify.c does. */
static void write_mutated(const char *path, const uint8_t *d,
			  Gearom__Model *msg)
{
	uint32_t nparts = om_get_u32(d + 28);
	uint64_t woff = nparts == 2 ? om_get_u64(d + 88 + 8) : 0;
	uint64_t wsz = nparts == 2 ? om_get_u64(d + 88 + 16) : 0;
	size_t defsz = protobuf_c_message_get_packed_size(&msg->base);
	uint64_t nwoff = om_align(128 + defsz);
	size_t len = (size_t)(nparts == 2 ? nwoff + wsz : 128 + defsz);
	uint8_t *c = calloc(len, 1);
	memcpy(c, d, 64 + 24 * nparts);
	om_put_u64(c + 16, len);
	om_put_u64(c + 80, defsz);
	protobuf_c_message_pack(&msg->base, c + 128);
	if (nparts == 2) {
		om_put_u64(c + 96, nwoff);
		memcpy(c + nwoff, d + woff, wsz);
	}
	om_put_u32(c + 24, crc32_update(0, c + 64, len - 64));
	write_file(path, c, len);
	free(c);
}

Test(scope, verify_reinfers_the_clones)
{
	char *d = temp_dir();
	char *om = compile_cli(d, "m.om", TWO, TWO_SHAPE,
			       "--dynamic_dims=" TWO_GEARS, "auto", NULL);
	size_t n = 0;
	uint8_t *data = (uint8_t *)read_file(om, &n);
	OmFile f;
	cr_assert_eq(om_parse(&f, data, n, "m.om"), 0, "%s", last_error());
	Gearom__Model *msg = f.model;
	Gearom__Graph *cl = NULL;
	for (size_t i = 0; i < msg->n_graphs; i++)
		if (!strcmp(msg->graphs[i]->name, "scope_1_dims_2"))
			cl = msg->graphs[i];
	cr_assert(cl);
	Gearom__Tensor *t = NULL;
	for (size_t i = 0; i < cl->n_tensors; i++)
		if (!strcmp(cl->tensors[i]->name, "/b/ReduceMean"))
			t = cl->tensors[i];
	cr_assert(t && t->n_dims == 2 && t->dims[1] == 8);
	t->dims[1] = 4; /* the clone's output: bound by the caller, no block */
	write_mutated(om, data, msg);
	Run r = run_gearc("verify", om);
	expect_error(&r, 1, "graph 'scope_1_dims_2': node "
			    "'/b/ReduceMean_dims_2' output '/b/ReduceMean': the "
			    "file records float32 [1,4], inference gives "
			    "float32 [1,8]");
	run_free(&r);
	om_close(&f);
	free(data);
	free(om);
	remove_tree(d);
	free(d);
}

/* ---- the ONNX backend tests with a gear --------------------------------- */

static bool integral(int dt)
{
	return dt == DT_BOOL || (dt >= DT_UINT8 && dt <= DT_INT64) ||
	       dt == DT_UINT32 || dt == DT_UINT64;
}

/* DIR/model.onnx with its inputs at test_data_set_0's shapes (integer
 * inputs as constants), the first other input's dim ax a gear of two
 * values: its own and twice it.  NULL if that does not apply. */
static Model *backend_gears(const char *dir, int ax, const char *scope)
{
	char path[4096], spec[1024], gears[64];
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	Model *m = onnx_load(path);
	if (!m)
		return NULL;
	Graph *g = m->graph;
	int32_t kept = 0;
	spec[0] = gears[0] = 0;
	for (int32_t k = 0; k < g->ninputs; k++) {
		snprintf(path, sizeof(path), "%s/test_data_set_0/input_%d.pb",
			 dir, k);
		const Tensor *t = onnx_load_tensor(m, path);
		Value *v = &g->vals[g->inputs[k]];
		if (!t) {
			model_free(m);
			return NULL;
		}
		v->dtype = t->dtype;
		v->shape = t->shape;
		v->dim_params = NULL;
		if (integral(t->dtype)) {
			v->kind = VAL_WEIGHT;
			v->konst = t;
			continue;
		}
		if (!kept && t->shape.rank > ax && t->shape.dims[ax] > 0 &&
		    strlen(v->name) < 200) {
			size_t n = (size_t)snprintf(spec, sizeof(spec), "%s:",
						    v->name);
			for (int32_t i = 0; i < t->shape.rank; i++)
				n += (size_t)snprintf(spec + n, sizeof(spec) - n,
						      "%s%lld", i ? "," : "",
						      i == ax ? -1LL
							      : (long long)t->shape.dims[i]);
			snprintf(gears, sizeof(gears), "%lld;%lld",
				 (long long)t->shape.dims[ax],
				 (long long)t->shape.dims[ax] * 2);
			v->shape.dims[ax] = -1;
		}
		g->inputs[kept++] = g->inputs[k];
	}
	g->ninputs = kept;
	ParsedGears pg;
	GearOptions go = { .input_shape = spec, .dynamic_dims = gears };
	PassOptions o = { .jobs = 2,
			  .fold_limit = 64 * 1024, .gear_scope = scope,
			  .no_fuse = 1 };
	int rc = !spec[0] ? -1 : gear_parse(&pg, &go);
	if (spec[0]) {
		if (!rc)
			rc = gear_apply(m, &pg);
		if (!rc)
			rc = run_passes(m, &o);
		gear_parsed_release(&pg);
	}
	if (rc < 0) {
		model_free(m);
		return NULL;
	}
	return m;
}

/* auto on every backend test that compiles with a gear: it compiles
 * too, never has more nodes, gives the same output table, and its file
 * reads back with plans that pass verify's checks. */
static void sweep_backend(const char *set, int *tried, int *applied)
{
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/%s", testdata_dir(), set);
	DIR *dd = opendir(dir);
	cr_assert(dd, "no %s", dir);
	struct dirent *e;
	while ((e = readdir(dd))) {
		char test[2048];
		if (e->d_name[0] == '.')
			continue;
		snprintf(test, sizeof(test), "%s/%s", dir, e->d_name);
		for (int ax = 0; ax < 2; ax++) {
			Model *f = backend_gears(test, ax, NULL);
			if (!f)
				continue;
			Model *s = backend_gears(test, ax, "auto");
			cr_assert(s, "%s dim %d: %s", e->d_name, ax, last_error());
			++*tried;
			cr_expect(nodes_in(s->graph) <= nodes_in(f->graph),
				  "%s dim %d", e->d_name, ax);
			for (int32_t g = 0; !s->branches && g < 2; g++) {
				Graph *b = f->branches[g];
				for (int32_t k = 0; k < b->noutputs; k++)
					cr_expect(shape_equal(
							  &b->vals[b->outputs[k]].shape,
							  &s->gear_outputs[g * b->noutputs + k]),
						  "%s dim %d gear %d output %d",
						  e->d_name, ax, g, k);
			}
			*applied += !s->branches;
			uint8_t *bytes;
			size_t n;
			OmFile om;
			cr_assert_eq(om_encode(s, &bytes, &n), 0, "%s", last_error());
			cr_assert_eq(om_parse(&om, bytes, n, e->d_name), 0, "%s",
				     last_error());
			cr_expect_eq(verify_plans(&om), 0, "%s dim %d: %s",
				     e->d_name, ax, last_error());
			om_close(&om);
			free(bytes);
			model_free(f);
			model_free(s);
		}
	}
	closedir(dd);
}

Test(scope, backend_models_with_a_gear, .timeout = 300)
{
	int tried = 0, applied = 0;
	sweep_backend("node", &tried, &applied);
	sweep_backend("pytorch-converted", &tried, &applied);
	cr_expect_geq(tried, 1000, "only %d backend models compile with a gear",
		      tried);
	cr_expect_geq(applied, 30, "auto found a saving in only %d", applied);
}
