/* tests/test_hybrid.c - hybrid compile mode (passes/hybrid.h): the dynamic
 * graph beside the gears, the gear graph unchanged by it, the selection
 * rule, symbolic dims, the flags, dump and verify. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "testrun.h"
#include "testutil.h"

#include "cli/cli.h"
#include "compiler/onnx.h"
#include "passes/hybrid.h"
#include "passes/partition.h"
#include "serializer/om.h"

#define REC "tests/fixtures/rec.onnx"
#define DET_NMS "tests/fixtures/det_nms.onnx"

static Model *compile_m(Model *m, GearOptions go, bool hybrid, int jobs)
{
	PassOptions o = { .jobs = jobs,
			  .fold_limit = 64 * 1024, .hybrid = hybrid };
	ParsedGears pg;
	cr_assert(m, "%s", last_error());
	cr_assert_eq(gear_parse(&pg, &go), 0, "%s", last_error());
	int rc = gear_apply(m, &pg);
	if (!rc)
		rc = run_passes(m, &o);
	gear_parsed_release(&pg);
	cr_assert_eq(rc, 0, "%s", last_error());
	return m;
}

static Model *rec(bool hybrid, int jobs)
{
	GearOptions go = { .input_shape = "x:1,3,48,-1",
			   .dynamic_dims = "320;640;1280" };
	return compile_m(onnx_load(REC), go, hybrid, jobs);
}

static Model *det_nms(bool hybrid, int jobs)
{
	GearOptions go = { .input_shape = "x:1,3,-1,-1",
			   .dynamic_image_size = "320,320;640,480" };
	return compile_m(onnx_load(DET_NMS), go, hybrid, jobs);
}

static const Value *val(const Graph *g, const char *name)
{
	for (ValId i = 0; i < g->nvals; i++)
		if (!strcmp(g->vals[i].name, name))
			return &g->vals[i];
	cr_assert_fail("graph '%s' has no value '%s'", g->name, name);
	return NULL;
}

/* "[1,3,48,W]": dims, a dim's name where it is -1 and named. */
static const char *sym_shape(const Value *v)
{
	static char bufs[4][256];
	static int next;
	char *b = bufs[next++ & 3];
	size_t k = 0;
	if (v->shape.rank < 0)
		return "[?]";
	k += (size_t)snprintf(b, 256, "[");
	for (int32_t i = 0; i < v->shape.rank; i++) {
		const char *p = v->dim_params && v->shape.dims[i] < 0
					? v->dim_params[i] : NULL;
		if (p)
			k += (size_t)snprintf(b + k, 256 - k, "%s%s",
					      i ? "," : "", p);
		else
			k += (size_t)snprintf(b + k, 256 - k, "%s%lld",
					      i ? "," : "",
					      (long long)v->shape.dims[i]);
	}
	snprintf(b + k, 256 - k, "]");
	return b;
}

/* ---- the dynamic graph and the rule ---------------------------------------- */

Test(hybrid, dynamic_graph_hangs_off_the_case_with_the_rule)
{
	Model *m = rec(true, 2);
	Graph *root = m->graph, *d = m->dynamic;
	cr_assert(d);
	cr_expect_str_eq(d->name, HYBRID_GRAPH_NAME);
	cr_expect_eq(d->parent, root);
	cr_expect_eq(hybrid_graph(root), d);
	const Node *cs = &root->nodes[1];
	cr_assert_eq(cs->op, OP_Case);
	const Attr *br = node_attr(cs, "branches");
	cr_assert(br && br->n == 3);
	/* dynamic_graph and hybrid_rule come after the gear attributes */
	cr_expect_str_eq(cs->attrs[cs->nattrs - 2].name, HYBRID_GRAPH_ATTR);
	cr_expect_eq(cs->attrs[cs->nattrs - 2].g, d);
	cr_expect_str_eq(attr_str(cs, HYBRID_RULE_ATTR, ""), HYBRID_RULE);
	/* the model's outputs take the dynamic graph into account */
	cr_expect_str_eq(sym_shape(&root->vals[root->outputs[0]]),
			 "[1,-1,97]");
	cr_expect_eq(graph_verify(root), 0, "%s", last_error());
	model_free(m);
}

Test(hybrid, width_flows_as_symbols_through_the_recognizer)
{
	Model *m = rec(true, 1);
	Graph *d = m->dynamic;
	/* one unknown partition: every node depends on W */
	cr_assert_eq(d->nnodes, 1);
	cr_assert(partition_is_unknown(&d->nodes[0]));
	Graph *p = partition_subgraph(&d->nodes[0]);
	cr_expect_str_eq(sym_shape(val(d, "x")), "[1,3,48,W]");
	cr_expect_str_eq(sym_shape(val(p, "stem.conv1")), "[1,16,24,(W+1)/2]");
	cr_expect_str_eq(sym_shape(val(p, "stem.conv2")), "[1,32,12,(W+3)/4]");
	cr_expect_str_eq(sym_shape(val(p, "stem.conv3")), "[1,32,6,(W+7)/8]");
	cr_expect_str_eq(sym_shape(val(p, "Transpose_0")), "[1,(W+7)/8,32]");
	cr_expect_str_eq(sym_shape(val(p, "MatMul_0")),
			 "[1,2,(W+7)/8,(W+7)/8]");
	cr_expect_str_eq(sym_shape(val(d, "probs")), "[1,(W+7)/8,97]");
	/* shape arithmetic is not data: the marks are gone */
	cr_expect(!(val(d, "probs")->flags & VF_DATA_DEP));
	for (int32_t i = 0; i < p->nnodes; i++)
		cr_expect_str_eq(p->nodes[i].label, HYBRID_GRAPH_NAME);
	model_free(m);
}

static Gearom__Model *parse(const uint8_t *p, size_t n, OmFile *f)
{
	cr_assert_eq(om_parse(f, p, n, "mem"), 0, "%s", last_error());
	return f->model;
}

/* The gear graph does not change with --hybrid: every branch's serialized
 * graph, and each graph below it, is byte for byte the same. */
static void expect_same_gears(Model *plain, Model *hyb)
{
	uint8_t *pa, *pb;
	size_t na, nb;
	OmFile fa, fb;
	cr_assert_eq(om_encode(plain, &pa, &na), 0, "%s", last_error());
	cr_assert_eq(om_encode(hyb, &pb, &nb), 0, "%s", last_error());
	Gearom__Model *a = parse(pa, na, &fa), *b = parse(pb, nb, &fb);
	cr_assert_eq(a->n_gears, b->n_gears);
	cr_assert_gt(b->n_graphs, a->n_graphs, "the dynamic graph is extra");
	/* the graphs of the gear compile keep their indices, then come the
	 * dynamic graph's */
	for (size_t i = 0; i < a->n_graphs; i++) {
		if ((int32_t)i == a->root)
			continue;
		size_t la = gearom__graph__get_packed_size(a->graphs[i]);
		size_t lb = gearom__graph__get_packed_size(b->graphs[i]);
		uint8_t *xa = malloc(la), *xb = malloc(lb);
		gearom__graph__pack(a->graphs[i], xa);
		gearom__graph__pack(b->graphs[i], xb);
		cr_expect(la == lb && !memcmp(xa, xb, la),
			  "graph %zu ('%s') differs with --hybrid", i,
			  a->graphs[i]->name);
		free(xa);
		free(xb);
	}
	for (size_t g = 0; g < a->n_gears; g++)
		cr_expect_eq(a->gears[g]->graph, b->gears[g]->graph);
	/* and the weights they use are the same, in the same order */
	cr_assert_leq(a->n_weights, b->n_weights);
	for (size_t w = 0; w < a->n_weights; w++)
		cr_expect_str_eq(a->weights[w]->name, b->weights[w]->name);
	om_close(&fa);
	om_close(&fb);
	free(pa);
	free(pb);
}

Test(hybrid, gear_graph_is_byte_for_byte_unchanged)
{
	Model *a = rec(false, 2), *b = rec(true, 2);
	expect_same_gears(a, b);
	model_free(a);
	model_free(b);
	/* partitioned branches too */
	a = det_nms(false, 2);
	b = det_nms(true, 2);
	expect_same_gears(a, b);
	model_free(a);
	model_free(b);
}

Test(hybrid, output_does_not_depend_on_the_thread_count)
{
	Model *a = rec(true, 1), *b = rec(true, 4);
	uint8_t *pa, *pb;
	size_t na, nb;
	cr_assert_eq(om_encode(a, &pa, &na), 0);
	cr_assert_eq(om_encode(b, &pb, &nb), 0);
	cr_expect(na == nb && !memcmp(pa, pb, na), "-j1 and -j4 differ");
	free(pa);
	free(pb);
	model_free(a);
	model_free(b);
}

Test(hybrid, detector_dynamic_graph_keeps_nms_dynamic)
{
	Model *m = det_nms(true, 2);
	Graph *d = m->dynamic;
	cr_assert(d && d->nnodes >= 1);
	cr_expect_str_eq(sym_shape(val(d, "x")), "[1,3,H,W]");
	cr_expect_str_eq(sym_shape(val(d, "boxes")), "[1,-1,4]");
	cr_expect(val(d, "boxes")->flags & VF_DATA_DEP, "NMS: data");
	/* the gear branches are partitioned as without --hybrid */
	for (int g = 0; g < 2; g++)
		cr_expect_eq(m->branches[g]->nnodes, 2);
	model_free(m);
}

/* A model whose input names no dim: the symbol is s<k>, k the position
 * of the -1 in a gear row. */
Test(hybrid, unnamed_gear_dims_get_positional_symbols)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId a = tu_input(g, "a", DT_FLOAT, SHAPE(-1, 4));
	ValId b = tu_input(g, "b", DT_FLOAT, SHAPE(2, -1));
	Node *n = tu_node(g, "Relu", "ra", IDS(a), 1);
	ValId ra = tu_out(n, 0);
	n = tu_node(g, "Relu", "rb", IDS(b), 1);
	ValId rb = tu_out(n, 0);
	g->outputs = arena_array(g->arena, 2, sizeof(ValId));
	g->outputs[0] = ra;
	g->outputs[1] = rb;
	g->noutputs = 2;
	m->path = "unnamed";
	GearOptions go = { .input_shape = "a:-1,4;b:2,-1",
			   .dynamic_dims = "1,8;2,16" };
	compile_m(m, go, true, 1);
	cr_expect_str_eq(sym_shape(val(m->dynamic, "a")), "[s0,4]");
	cr_expect_str_eq(sym_shape(val(m->dynamic, "b")), "[2,s1]");
	cr_expect_str_eq(sym_shape(val(m->dynamic, "ra:0")), "[s0,4]");
	cr_expect_str_eq(sym_shape(val(m->dynamic, "rb:0")), "[2,s1]");
	model_free(m);
}

/* ---- the symbolic walk on hand-built graphs ------------------------------ */

typedef struct S {
	Model *m;
	Graph *g;
	ValId x;
} S;

/* x float [1, 3, W] (or [1, 3, H, W]) */
static S sgraph(int rank)
{
	S s = { .m = tu_model(13) };
	s.g = s.m->graph;
	Shape sh = rank == 3 ? SHAPE(1, 3, -1) : SHAPE(1, 3, -1, -1);
	s.x = tu_input(s.g, "x", DT_FLOAT, sh);
	const char **dp = arena_array(s.g->arena, (size_t)rank, sizeof(char *));
	dp[rank - 1] = "W";
	if (rank == 4)
		dp[2] = "H";
	s.g->vals[s.x].dim_params = dp;
	return s;
}

static const char *walked(S *s, ValId v)
{
	cr_assert_eq(infer_graph(s->m, s->g), 0, "%s", last_error());
	hybrid_symbols(s->g, 13);
	return sym_shape(&s->g->vals[v]);
}

static ValId conv(S *s, const char *name, ValId x, int64_t k, int64_t stride,
		  int64_t pad, int64_t cin, int64_t cout)
{
	ValId w = tu_weight(s->g, name, DT_FLOAT, SHAPE(cout, cin, k, k));
	Node *n = tu_node(s->g, "Conv", name, IDS(x, w), 1);
	tu_ints(s->g, n, "kernel_shape", INTS(k, k));
	tu_ints(s->g, n, "strides", INTS(stride, stride));
	tu_ints(s->g, n, "pads", INTS(pad, pad, pad, pad));
	return tu_out(n, 0);
}

Test(hybrid, conv_and_pool_arithmetic_composes)
{
	S s = sgraph(4);
	ValId c1 = conv(&s, "c1", s.x, 3, 2, 1, 3, 8);  /* (W+1)/2 */
	ValId c2 = conv(&s, "c2", c1, 3, 2, 1, 8, 8);   /* (W+3)/4 */
	ValId c3 = conv(&s, "c3", c2, 1, 1, 0, 8, 8);   /* same */
	Node *p = tu_node(s.g, "MaxPool", "pool", IDS(c3), 1);
	tu_ints(s.g, p, "kernel_shape", INTS(2, 2));
	tu_ints(s.g, p, "strides", INTS(2, 2));
	ValId pool = tu_out(p, 0);                        /* (W+3)/8 */
	p = tu_node(s.g, "MaxPool", "pool_ceil", IDS(c3), 1);
	tu_ints(s.g, p, "kernel_shape", INTS(2, 2));
	tu_ints(s.g, p, "strides", INTS(2, 2));
	tu_int(s.g, p, "ceil_mode", 1);
	ValId ceil = tu_out(p, 0);                        /* (W+7)/8 */
	cr_expect_str_eq(walked(&s, c1), "[1,8,(H+1)/2,(W+1)/2]");
	cr_expect_str_eq(sym_shape(&s.g->vals[c2]), "[1,8,(H+3)/4,(W+3)/4]");
	cr_expect_str_eq(sym_shape(&s.g->vals[c3]), "[1,8,(H+3)/4,(W+3)/4]");
	cr_expect_str_eq(sym_shape(&s.g->vals[pool]), "[1,8,(H+3)/8,(W+3)/8]");
	cr_expect_str_eq(sym_shape(&s.g->vals[ceil]), "[1,8,(H+7)/8,(W+7)/8]");
	model_free(s.m);
}

Test(hybrid, reshape_from_shape_arithmetic)
{
	/* y = Reshape(x, Concat(Shape(x)[0:1], [-1])): [1, 3*W] */
	S s = sgraph(3);
	Graph *g = s.g;
	ValId sh = tu_out(tu_node(g, "Shape", "sh", IDS(s.x), 1), 0);
	ValId st = tu_weight_ints(g, "st", INTS(0));
	ValId en = tu_weight_ints(g, "en", INTS(1));
	ValId n0 = tu_out(tu_node(g, "Slice", "n0", IDS(sh, st, en), 1), 0);
	ValId m1 = tu_weight_ints(g, "m1", INTS(-1));
	Node *c = tu_node(g, "Concat", "cat", IDS(n0, m1), 1);
	tu_int(g, c, "axis", 0);
	ValId t = tu_out(c, 0);
	ValId y = tu_out(tu_node(g, "Reshape", "y", IDS(s.x, t), 1), 0);
	/* z = Reshape(y, [0, W, 3] from Shape(x)[2]) */
	ValId two = tu_weight_ints(g, "two", INTS(2));
	ValId w = tu_out(tu_node(g, "Gather", "w", IDS(sh, two), 1), 0);
	ValId zero = tu_weight_ints(g, "zero", INTS(0));
	ValId three = tu_weight_ints(g, "three", INTS(3));
	c = tu_node(g, "Concat", "cat2", IDS(zero, w, three), 1);
	tu_int(g, c, "axis", 0);
	ValId z = tu_out(tu_node(g, "Reshape", "z", IDS(y, tu_out(c, 0)), 1),
			 0);
	cr_expect_str_eq(walked(&s, y), "[1,3*W]");
	cr_expect_str_eq(sym_shape(&g->vals[z]), "[1,W,3]");
	model_free(s.m);
}

Test(hybrid, elementwise_concat_and_transpose)
{
	S s = sgraph(3);
	Graph *g = s.g;
	ValId r = tu_out(tu_node(g, "Relu", "r", IDS(s.x), 1), 0);
	ValId b = tu_weight(g, "b", DT_FLOAT, SHAPE(3, 1));
	ValId a = tu_out(tu_node(g, "Add", "a", IDS(r, b), 1), 0);
	Node *c = tu_node(g, "Concat", "c", IDS(a, r), 1);
	tu_int(g, c, "axis", 2);
	ValId cat = tu_out(c, 0);
	Node *t = tu_node(g, "Transpose", "t", IDS(cat), 1);
	tu_ints(g, t, "perm", INTS(2, 0, 1));
	ValId tr = tu_out(t, 0);
	cr_expect_str_eq(walked(&s, a), "[1,3,W]");
	cr_expect_str_eq(sym_shape(&g->vals[cat]), "[1,3,2*W]");
	cr_expect_str_eq(sym_shape(&g->vals[tr]), "[2*W,1,3]");
	model_free(s.m);
}

Test(hybrid, the_walk_never_changes_a_known_dim_and_stops_where_it_cannot_tell)
{
	/* Resize by 2 of a floor expression is not one affine floor: -1,
	 * unnamed; NonZero stays data-dependent. */
	S s = sgraph(4);
	Graph *g = s.g;
	ValId c1 = conv(&s, "c1", s.x, 3, 2, 1, 3, 8);
	ValId sc = tu_weight_data(g, "sc", DT_FLOAT, SHAPE(4),
				  (const float[]){ 1, 1, 2, 2 });
	ValId up = tu_out(tu_node(g, "Resize", "up", IDS(c1, -1, sc), 1), 0);
	ValId up2 = tu_out(tu_node(g, "Resize", "up2", IDS(s.x, -1, sc), 1), 0);
	ValId nz = tu_out(tu_node(g, "NonZero", "nz", IDS(s.x), 1), 0);
	cr_expect_str_eq(walked(&s, up), "[1,8,-1,-1]");
	cr_expect_str_eq(sym_shape(&g->vals[up2]), "[1,3,2*H,2*W]");
	cr_expect_str_eq(sym_shape(&g->vals[nz]), "[4,-1]");
	cr_expect(g->vals[nz].flags & VF_DATA_DEP);
	cr_expect_eq(g->vals[c1].shape.dims[1], 8);
	model_free(s.m);
}

/* ---- flags ------------------------------------------------------------------- */

static Run compile_rec(const char *om, const char *extra, const char *extra2)
{
	return run_gearc("--model=" REC, "--input_shape=x:1,3,48,-1",
			 "--dynamic_dims=320;640;1280", "--output", om,
			 extra ? extra : "-q", extra2 ? extra2 : "-j2");
}

Test(hybrid, both_spellings_of_the_flag_give_the_same_file)
{
	char *d = temp_dir(), *a = path_in(d, "a.om"), *b = path_in(d, "b.om");
	char *c = path_in(d, "c.om"), *e = path_in(d, "e.om");
	Run r = compile_rec(a, "--hybrid", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	r = compile_rec(b, "--compile_hybrid_mode=1", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	r = compile_rec(c, "--compile-hybrid-mode", "0");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	r = compile_rec(e, NULL, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	size_t na = 0, nb = 0, nc = 0, ne = 0;
	char *fa = read_file(a, &na), *fb = read_file(b, &nb);
	char *fc = read_file(c, &nc), *fe = read_file(e, &ne);
	cr_expect(na == nb && !memcmp(fa, fb, na),
		  "--hybrid and --compile_hybrid_mode=1 differ");
	cr_expect(nc == ne && !memcmp(fc, fe, nc),
		  "--compile_hybrid_mode=0 is not a plain compile");
	cr_expect(na != ne);
	free(fa);
	free(fb);
	free(fc);
	free(fe);
	remove_tree(d);
	free(a);
	free(b);
	free(c);
	free(e);
	free(d);
}

Test(hybrid, flag_errors)
{
	char *d = temp_dir(), *om = path_in(d, "x.om");
	Run r = run_gearc("--model=" REC, "--input_shape=x:1,3,48,320",
			  "--hybrid", "--output", om);
	expect_error(&r, 2, "--hybrid needs a gear option");
	run_free(&r);
	r = compile_rec(om, "--compile_hybrid_mode=2", NULL);
	expect_error(&r, 2, "--compile_hybrid_mode: '2' is not a mode");
	run_free(&r);
	r = compile_rec(om, "--compile_hybrid_mode=", NULL);
	expect_error(&r, 2, "--compile_hybrid_mode: '' is not a mode");
	run_free(&r);
	r = compile_rec(om, "--hybrid", "--compile_hybrid_mode=0");
	expect_error(&r, 2, "--hybrid and --compile_hybrid_mode=0 disagree");
	run_free(&r);
	r = compile_rec(om, "--hybrid=1", NULL);
	expect_error(&r, 2, "--hybrid takes no value");
	run_free(&r);
	struct stat st;
	cr_expect(stat(om, &st) != 0, "a failed compile left %s", om);
	remove_tree(d);
	free(om);
	free(d);
}

/* ---- dump and verify ------------------------------------------------------- */

static json_object *jget(json_object *o, const char *k)
{
	json_object *v = NULL;
	cr_assert(json_object_object_get_ex(o, k, &v), "no key '%s'", k);
	return v;
}

Test(hybrid, dump_shows_both_graphs)
{
	char *d = temp_dir(), *om = path_in(d, "rec.om");
	Run r = compile_rec(om, "--hybrid", NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	r = run_gearc("dump", "--format=json", om);
	cr_assert_eq(r.status, 0, "%s", r.err);
	json_object *j = json_tokener_parse(r.out);
	cr_assert(j);
	json_object *h = jget(j, "hybrid");
	cr_assert(h, "no hybrid section");
	cr_expect_str_eq(json_object_get_string(jget(h, "rule")), HYBRID_RULE);
	cr_expect_str_eq(json_object_get_string(jget(h, "dynamic_graph")),
			 "Dynamic");
	json_object *in = json_object_array_get_idx(jget(h, "inputs"), 0);
	cr_expect_str_eq(json_object_to_json_string_ext(jget(in, "dims"),
				 JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), "[1,3,48,\"W\"]");
	cr_expect_str_eq(json_object_to_json_string_ext(jget(in, "shape"),
				 JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), "[1,3,48,-1]");
	json_object *out = json_object_array_get_idx(jget(h, "outputs"), 0);
	cr_expect_str_eq(json_object_to_json_string_ext(jget(out, "dims"),
				 JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
			 "[1,\"(W+7)/8\",97]");
	/* the gears are still there, as without --hybrid */
	cr_expect_eq(json_object_get_int(jget(j, "gear_count")), 3);
	json_object *g0 = json_object_array_get_idx(jget(j, "gears"), 0);
	cr_expect_str_eq(json_object_to_json_string_ext(
				 jget(json_object_array_get_idx(
					      jget(g0, "outputs"), 0), "shape"),
				 JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), "[1,40,97]");
	json_object *parts = jget(j, "partitions");
	cr_assert_eq(json_object_array_length(parts), 1);
	cr_expect_str_eq(json_object_get_string(jget(
				 json_object_array_get_idx(parts, 0), "graph")),
			 "Dynamic");
	json_object_put(j);
	run_free(&r);
	r = run_gearc("dump", om);
	cr_expect(strstr(r.out, "option:    --compile_hybrid_mode=1\n"), "%s",
		  r.out);
	cr_expect(strstr(r.out, "hybrid:    " HYBRID_RULE "\n"), "%s", r.out);
	cr_expect(strstr(r.out, "    in  x                    [1,3,48,W]\n"),
		  "%s", r.out);
	cr_expect(strstr(r.out, "    out probs                [1,(W+7)/8,97]\n"),
		  "%s", r.out);
	cr_expect(strstr(r.out, "\ngraph Batch_0: "), "%s", r.out);
	cr_expect(strstr(r.out, "\ngraph Dynamic: "), "%s", r.out);
	cr_expect(strstr(r.out, "-> stem.conv1 [1,16,24,(W+1)/2]\n"), "%s",
		  r.out);
	run_free(&r);
	r = run_gearc("verify", om);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "shapes: ok\n"), "%s", r.out);
	run_free(&r);
	remove_tree(d);
	free(om);
	free(d);
}

Test(hybrid, verify_rederives_the_dynamic_graph)
{
	char *d = temp_dir(), *om = path_in(d, "bad.om");
	/* a dim name the walk does not give */
	Model *m = rec(true, 1);
	Graph *p = partition_subgraph(&m->dynamic->nodes[0]);
	Value *v = (Value *)val(p, "stem.conv2");
	v->dim_params[3] = "W/4";
	cr_assert_eq(om_write(m, om), 0, "%s", last_error());
	Run r = run_gearc("verify", om);
	expect_error(&r, 1, "graph 'Dynamic_p0_unknown': tensor 'stem.conv2' "
			    "dim 3: the file names it 'W/4', the symbolic walk "
			    "'(W+3)/4'");
	run_free(&r);
	model_free(m);
	/* a dim the walk cannot know */
	m = rec(true, 1);
	p = partition_subgraph(&m->dynamic->nodes[0]);
	v = (Value *)val(p, "stem.conv2");
	v->shape.dims[3] = 40;
	cr_assert_eq(om_write(m, om), 0, "%s", last_error());
	r = run_gearc("verify", om);
	expect_error(&r, 1, "graph 'Dynamic_p0_unknown': node "
			    "'stem.conv2_dynamic' output 'stem.conv2': the file "
			    "records float32 [1,32,12,40], inference gives "
			    "float32 [1,32,12,-1]");
	run_free(&r);
	model_free(m);
	remove_tree(d);
	free(om);
	free(d);
}

Test(hybrid, every_fixture_compiles_hybrid_and_verifies)
{
	static const char *const cases[][3] = {
		{ "tests/fixtures/det.onnx", "x:1,3,-1,-1",
		  "--dynamic_image_size=640,640;960,960" },
		{ "tests/fixtures/vad.onnx", "input:1,-1;h:2,1,64;c:2,1,64",
		  "--dynamic_dims=512;1024;1536" },
		{ "tests/fixtures/vad.onnx", "input:-1,512;h:2,-1,64;c:2,-1,64",
		  "--dynamic_dims=1,1,1;4,4,4" },
		{ "tests/fixtures/demo_cnn.onnx", "x:-1,3,32,32",
		  "--dynamic_batch_size=1,8" },
		{ "tests/fixtures/two_inputs.onnx",
		  "a:-1,3,-1,-1;b:-1,3,-1,-1",
		  "--dynamic_dims=1,8,8,1,8,8;2,16,16,2,16,16" },
		{ DET_NMS, "x:1,3,-1,-1", "--dynamic_image_size=320,320" ";640,480" },
	};
	char *d = temp_dir(), *om = path_in(d, "h.om");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char model[256], shape[256];
		snprintf(model, sizeof(model), "--model=%s", cases[i][0]);
		snprintf(shape, sizeof(shape), "--input_shape=%s", cases[i][1]);
		Run r = run_gearc(model, shape, cases[i][2], "--hybrid",
				  "--output", om);
		cr_expect_eq(r.status, 0, "%s: %s", cases[i][0], r.err);
		run_free(&r);
		r = run_gearc("verify", om);
		cr_expect_eq(r.status, 0, "%s: %s", cases[i][0], r.err);
		run_free(&r);
	}
	remove_tree(d);
	free(om);
	free(d);
}

/* --gear_scope replaces the root's gear Case that --hybrid hangs the
 * dynamic graph on: the two together are a usage error, not a crash. */
Test(hybrid, not_with_gear_scope)
{
	char *d = temp_dir(), out[600];
	snprintf(out, sizeof(out), "--output=%s/m", d);
	Run r = run_gearc("--model=tests/fixtures/scope_cls.onnx",
			  "--input_shape=x:1,3,-1,-1",
			  "--dynamic_image_size=224,224;320,320",
			  "--gear_scope=auto", "--hybrid", out);
	expect_error(&r, 2, "--hybrid cannot be used with --gear_scope");
	run_free(&r);
	remove_tree(d);
	free(d);
}
