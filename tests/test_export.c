/* tests/test_export.c - `gearc export` through build/gearc: every gear of
 * every real-export fixture becomes a static ONNX model (read back here
 * with the importer's protobuf-c schema) that gearc re-imports and
 * compiles statically to the output shapes tests/fixtures/expected.json
 * and scope_expected.json give; plus external data, determinism and the
 * errors. */
#include <dirent.h>
#include <json-c/json.h>

#include "compiler/util.h"
#include "onnx/onnx.pb-c.h"
#include "testrun.h"

#define FX "tests/fixtures/"

/* ---- reading an ONNX file ----------------------------------------------- */

static Onnx__ModelProto *load_onnx(const char *path)
{
	size_t n;
	char *buf = read_file(path, &n);
	cr_assert(buf, "cannot read %s", path);
	Onnx__ModelProto *m =
		onnx__model_proto__unpack(NULL, n, (const uint8_t *)buf);
	free(buf);
	cr_assert(m, "%s is not an ONNX model", path);
	return m;
}

typedef struct Count {
	int nodes, shape_ops, gearc_ops;
} Count;

static void count_nodes(const Onnx__GraphProto *g, Count *c)
{
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *n = g->node[i];
		c->nodes++;
		c->shape_ops += !strcmp(n->op_type, "Shape");
		c->gearc_ops += n->domain && !strcmp(n->domain, "ai.gearc");
		for (size_t k = 0; k < n->n_attribute; k++) {
			const Onnx__AttributeProto *a = n->attribute[k];
			if (a->g)
				count_nodes(a->g, c);
			for (size_t j = 0; j < a->n_graphs; j++)
				count_nodes(a->graphs[j], c);
		}
	}
}

/* "[1,3,64,64]"; -1 for a dim without a value; "?" without a shape. */
static void shape_of_vi(const Onnx__ValueInfoProto *v, char *buf, size_t n)
{
	const Onnx__TypeProto *t = v->type;
	if (!t || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
	    !t->tensor_type->shape) {
		snprintf(buf, n, "?");
		return;
	}
	const Onnx__TensorShapeProto *s = t->tensor_type->shape;
	size_t k = (size_t)snprintf(buf, n, "[");
	for (size_t i = 0; i < s->n_dim && k < n; i++) {
		const Onnx__TensorShapeProto__Dimension *d = s->dim[i];
		long long v2 = d->value_case ==
					       ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
				       ? (long long)d->dim_value
				       : -1;
		k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "," : "",
				      v2);
	}
	if (k < n)
		snprintf(buf + k, n - k, "]");
}

static bool is_static(const Onnx__ValueInfoProto *v)
{
	char s[256];
	shape_of_vi(v, s, sizeof(s));
	return s[0] == '[' && !strstr(s, "-1");
}

/* ---- standard ONNX: what onnx.checker and ONNX Runtime refuse ---------- */

typedef struct Names {
	const char **s;
	int n, cap;
} Names;

/* Adds name to l; false if l has it already. */
static bool add_name(Names *l, const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->s[i], name))
			return false;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->s = realloc(l->s, (size_t)l->cap * sizeof(*l->s));
		cr_assert(l->s);
	}
	l->s[l->n++] = name;
	return true;
}

static bool has_opset(const Onnx__ModelProto *m, const char *domain)
{
	for (size_t i = 0; i < m->n_opset_import; i++) {
		const char *d = m->opset_import[i]->domain;
		if (!strcmp(d ? d : "", domain))
			return true;
	}
	return false;
}

static bool made_in(const Onnx__GraphProto *g, const char *name)
{
	for (size_t i = 0; i < g->n_node; i++)
		for (size_t k = 0; k < g->node[i]->n_output; k++)
			if (!strcmp(g->node[i]->output[k], name))
				return true;
	return false;
}

/* Graph g (a subgraph when sub) of m: each node's domain imported, node
 * names given and unique in the model, each value made once in the model,
 * a subgraph's outputs made by its own nodes. */
static void check_graph(const char *what, const Onnx__ModelProto *m,
			const Onnx__GraphProto *g, bool sub, Names *nodes,
			Names *vals)
{
	for (size_t i = 0; i < g->n_input; i++)
		cr_expect(add_name(vals, g->input[i]->name),
			  "%s: value '%s' made twice", what, g->input[i]->name);
	for (size_t i = 0; i < g->n_initializer; i++)
		cr_expect(add_name(vals, g->initializer[i]->name),
			  "%s: value '%s' made twice", what,
			  g->initializer[i]->name);
	for (size_t i = 0; i < g->n_output; i++)
		cr_expect(!sub || made_in(g, g->output[i]->name),
			  "%s: subgraph '%s' returns '%s', which none of its "
			  "nodes makes", what, g->name, g->output[i]->name);
	for (size_t i = 0; i < g->n_node; i++) {
		const Onnx__NodeProto *n = g->node[i];
		const char *dom = n->domain ? n->domain : "";
		cr_expect(has_opset(m, dom), "%s: node '%s' (%s) of domain "
			  "'%s', not imported", what, n->name, n->op_type, dom);
		cr_expect(n->name && n->name[0], "%s: an unnamed %s", what,
			  n->op_type);
		cr_expect(!n->name || add_name(nodes, n->name),
			  "%s: node name '%s' twice", what, n->name);
		for (size_t k = 0; k < n->n_output; k++)
			cr_expect(!n->output[k][0] ||
					  add_name(vals, n->output[k]),
				  "%s: value '%s' made twice", what,
				  n->output[k]);
		for (size_t k = 0; k < n->n_attribute; k++) {
			const Onnx__AttributeProto *a = n->attribute[k];
			if (a->g)
				check_graph(what, m, a->g, true, nodes, vals);
			for (size_t j = 0; j < a->n_graphs; j++)
				check_graph(what, m, a->graphs[j], true, nodes,
					    vals);
		}
	}
}

static void check_standard(const char *what, const Onnx__ModelProto *m)
{
	Names nodes = { 0 }, vals = { 0 };
	check_graph(what, m, m->graph, false, &nodes, &vals);
	free(nodes.s);
	free(vals.s);
}

static const char *meta(const Onnx__ModelProto *m, const char *key)
{
	for (size_t i = 0; i < m->n_metadata_props; i++)
		if (!strcmp(m->metadata_props[i]->key, key))
			return m->metadata_props[i]->value;
	return NULL;
}

/* ---- one fixture -------------------------------------------------------- */

typedef struct Case {
	const char *key, *json, *scope;
	bool data_dep; /* values depending on input data keep unknown dims */
} Case;

static json_object *at(json_object *o, const char *key)
{
	json_object *v = NULL;
	cr_assert(json_object_object_get_ex(o, key, &v), "no '%s'", key);
	return v;
}

/* Compiles the fixture as its expected.json entry says into dir/NAME.om;
 * returns the entry (owned by *doc). */
/* DIR/NAME_SHAPES.onnx, the file export --gear=all writes for gear g of
 * om: the gear inputs' shapes as dump gives them ("_1x3x48x320" each), a
 * static file's inputs' (scalars left out). */
static void gear_onnx(char *buf, size_t n, const char *dir, const char *name,
		      const char *om, int g)
{
	Run r = run_gearc("dump", "--format=json", om);
	cr_assert_eq(r.status, 0, "%s", r.err);
	json_object *d = json_tokener_parse(r.out);
	run_free(&r);
	cr_assert(d);
	json_object *gears = at(d, "gears");
	json_object *ins = json_object_array_length(gears)
				   ? at(json_object_array_get_idx(gears,
								  (size_t)g),
					"inputs")
				   : at(d, "inputs");
	size_t k = (size_t)snprintf(buf, n, "%s/%s", dir, name);
	for (size_t i = 0; i < json_object_array_length(ins); i++) {
		json_object *s = at(json_object_array_get_idx(ins, i), "shape");
		for (size_t j = 0; j < json_object_array_length(s); j++)
			k += (size_t)snprintf(buf + k, n - k, "%s%lld",
					      j ? "x" : "_",
					      (long long)json_object_get_int64(
						      json_object_array_get_idx(
							      s, j)));
	}
	snprintf(buf + k, n - k, ".onnx");
	json_object_put(d);
}

/* The entries of dir but . and .. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	cr_assert(d);
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static json_object *compile_case(const Case *c, const char *dir,
				 json_object **doc, char *om, size_t nom)
{
	char path[256], model[300], out[600], scope[64];
	snprintf(path, sizeof(path), FX "%s", c->json);
	char *text = read_file(path, NULL);
	cr_assert(text);
	*doc = json_tokener_parse(text);
	free(text);
	json_object *e = at(*doc, c->key);
	json_object *args = at(e, "args");
	snprintf(model, sizeof(model), "--model=" FX "%s",
		 json_object_get_string(at(e, "model")));
	snprintf(out, sizeof(out), "--output=%s/%s", dir, c->key);
	snprintf(scope, sizeof(scope), "--gear_scope=%s",
		 c->scope ? c->scope : "auto");
	const char *argv[10] = { model, out };
	int n = 2;
	for (size_t i = 0; i < json_object_array_length(args); i++)
		argv[n++] = json_object_get_string(
			json_object_array_get_idx(args, i));
	if (c->scope)
		argv[n++] = scope;
	argv[n] = NULL;
	Run r = run_gearcv(argv);
	cr_assert_eq(r.status, 0, "compile %s: %s", c->key, r.err);
	run_free(&r);
	snprintf(om, nom, "%s/%s.om", dir, c->key);
	return e;
}

/* The exported gear g: standard ONNX, static, smaller than the source;
 * returns its node count. */
static int check_model(const Case *c, const Onnx__ModelProto *src,
		       const Onnx__ModelProto *m, int g, json_object *gear)
{
	Count cs = { 0 }, cm = { 0 };
	count_nodes(src->graph, &cs);
	count_nodes(m->graph, &cm);
	check_standard(c->key, m);
	cr_expect_eq(m->ir_version, src->ir_version, "%s: ir_version",
		     c->key);
	cr_assert_eq(m->n_opset_import, src->n_opset_import);
	for (size_t i = 0; i < m->n_opset_import; i++)
		cr_expect_eq(m->opset_import[i]->version,
			     src->opset_import[i]->version);
	cr_expect_eq(cm.shape_ops, 0, "%s gear %d: Shape ops left", c->key, g);
	cr_expect_eq(cm.gearc_ops, 0, "%s gear %d: gearc ops left", c->key, g);
	if (cs.shape_ops)
		cr_expect_lt(cm.nodes, cs.nodes, "%s gear %d: %d nodes, source %d",
			     c->key, g, cm.nodes, cs.nodes);
	else
		cr_expect_leq(cm.nodes, cs.nodes, "%s gear %d", c->key, g);
	const Onnx__GraphProto *gr = m->graph;
	for (size_t i = 0; i < gr->n_input; i++)
		cr_expect(is_static(gr->input[i]), "%s gear %d: input %s",
			  c->key, g, gr->input[i]->name);
	json_object *outs = at(gear, "outputs");
	for (size_t i = 0; i < gr->n_output; i++) {
		char s[256];
		shape_of_vi(gr->output[i], s, sizeof(s));
		const char *want = json_object_to_json_string_ext(
			at(outs, gr->output[i]->name), JSON_C_TO_STRING_PLAIN);
		cr_expect_str_eq(s, want, "%s gear %d: output %s", c->key, g,
				 gr->output[i]->name);
	}
	/* every node output described, statically unless data-dependent */
	int described = 0;
	for (size_t i = 0; i < gr->n_value_info; i++) {
		cr_expect(c->data_dep || is_static(gr->value_info[i]),
			  "%s gear %d: %s is not static", c->key, g,
			  gr->value_info[i]->name);
		described++;
	}
	int outputs = 0;
	for (size_t i = 0; i < gr->n_node; i++)
		outputs += (int)gr->node[i]->n_output;
	cr_expect_eq(described + (int)gr->n_output, outputs,
		     "%s gear %d: value_info misses node outputs", c->key, g);
	/* initializers: unique names */
	for (size_t i = 0; i < gr->n_initializer; i++)
		for (size_t j = 0; j < i; j++)
			cr_expect_str_neq(gr->initializer[i]->name,
					  gr->initializer[j]->name);
	char k[16];
	snprintf(k, sizeof(k), "%d", g);
	cr_expect_str_eq(meta(m, "gearc.gear"), k);
	const char *dims = json_object_to_json_string_ext(at(gear, "dims"),
							  JSON_C_TO_STRING_PLAIN);
	char want[128];
	snprintf(want, sizeof(want), "%.*s", (int)strlen(dims) - 2, dims + 1);
	cr_expect_str_eq(meta(m, "gearc.gear_dims"), want);
	return cm.nodes;
}

/* gearc compiles the exported model statically to the gear's outputs. */
static void check_reimport(const Case *c, const char *onnx, const char *dir,
			   int g, json_object *gear)
{
	char model[800], out[600], om[600];
	snprintf(model, sizeof(model), "--model=%s", onnx);
	snprintf(out, sizeof(out), "--output=%s/re", dir);
	snprintf(om, sizeof(om), "%s/re.om", dir);
	Run r = run_gearc(model, out);
	cr_assert_eq(r.status, 0, "%s gear %d: re-import: %s", c->key, g, r.err);
	run_free(&r);
	r = run_gearc("dump", "--format=json", om);
	cr_assert_eq(r.status, 0);
	json_object *d = json_tokener_parse(r.out);
	run_free(&r);
	cr_assert(d);
	cr_expect_str_eq(json_object_get_string(at(d, "mode")), "static");
	json_object *outs = at(d, "outputs"), *want = at(gear, "outputs");
	for (size_t i = 0; i < json_object_array_length(outs); i++) {
		json_object *o = json_object_array_get_idx(outs, i);
		cr_expect_str_eq(json_object_to_json_string_ext(
					 at(o, "shape"), JSON_C_TO_STRING_PLAIN),
				 json_object_to_json_string_ext(
					 at(want, json_object_get_string(
							  at(o, "name"))),
					 JSON_C_TO_STRING_PLAIN),
				 "%s gear %d re-imported", c->key, g);
	}
	json_object_put(d);
}

static void export_case(const Case *c)
{
	char *dir = temp_dir(), om[600], outdir[600], onnx[700];
	json_object *doc;
	json_object *e = compile_case(c, dir, &doc, om, sizeof(om));
	snprintf(outdir, sizeof(outdir), "%s/onnx", dir);
	cr_assert_eq(mkdir(outdir, 0777), 0);
	char gout[700];
	snprintf(gout, sizeof(gout), "--output=%s", outdir);
	Run r = run_gearc("export", om, "--gear=all", gout);
	cr_assert_eq(r.status, 0, "export %s: %s", c->key, r.err);
	cr_expect_eq(r.out[0] + r.err[0], 0, "export is silent: %s%s", r.out,
		     r.err);
	run_free(&r);
	char src_path[256];
	snprintf(src_path, sizeof(src_path), FX "%s",
		 json_object_get_string(at(e, "model")));
	Onnx__ModelProto *src = load_onnx(src_path);
	Count cs = { 0 };
	count_nodes(src->graph, &cs);
	json_object *gears = at(e, "gears");
	int n = (int)json_object_array_length(gears);
	for (int g = 0; g < n; g++) {
		json_object *gear = json_object_array_get_idx(gears, (size_t)g);
		gear_onnx(onnx, sizeof(onnx), outdir, c->key, om, g);
		Onnx__ModelProto *m = load_onnx(onnx);
		int nodes = check_model(c, src, m, g, gear);
		cr_log_info("export %s gear %d: %d nodes (source %d)", c->key,
			    g, nodes, cs.nodes);
		onnx__model_proto__free_unpacked(m, NULL);
		check_reimport(c, onnx, dir, g, gear);
	}
	cr_expect_eq(entries(outdir), n, "not one file a gear");
	onnx__model_proto__free_unpacked(src, NULL);
	json_object_put(doc);
	remove_tree(dir);
	free(dir);
}

#define EXPORT_TEST(name, json, scope, dd)                                  \
	Test(export, name)                                                   \
	{                                                                    \
		const Case c = { #name, json, scope, dd };                   \
		export_case(&c);                                             \
	}

EXPORT_TEST(det, "expected.json", NULL, false)
EXPORT_TEST(rec, "expected.json", NULL, false)
EXPORT_TEST(vad, "expected.json", NULL, true)
EXPORT_TEST(vad_batch, "expected.json", NULL, true)
EXPORT_TEST(bench_rec, "expected.json", NULL, false)
EXPORT_TEST(scope_cls, "scope_expected.json", "auto", false)
EXPORT_TEST(scope_enc, "scope_expected.json", "/encoder/", false)
EXPORT_TEST(scope_two, "scope_expected.json", "auto", false)
EXPORT_TEST(scope_cycle, "scope_expected.json", "auto", false)

/* ---- demo_cnn, static files, external data, errors ---------------------- */

static char *compile_demo(const char *dir, const char *extra)
{
	char out[600];
	snprintf(out, sizeof(out), "--output=%s/demo", dir);
	Run r = extra ? run_gearc("--model=" FX "demo_cnn.onnx", out,
				  "--input_shape=x:-1,3,32,32",
				  "--dynamic_batch_size=1,4,8", extra)
		      : run_gearc("--model=" FX "demo_cnn.onnx", out,
				  "--input_shape=x:-1,3,32,32",
				  "--dynamic_batch_size=1,4,8");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	return path_in(dir, "demo.om");
}

Test(export, demo_cnn_gears_and_scope)
{
	static const int batch[] = { 1, 4, 8 };
	char *dir = temp_dir();
	for (int s = 0; s < 2; s++) {
		char *om = compile_demo(dir, s ? "--gear_scope=auto" : NULL);
		for (int g = 0; g < 3; g++) {
			char gear[16], out[600], model[700], want[32];
			snprintf(gear, sizeof(gear), "--gear=%d", g);
			snprintf(out, sizeof(out), "--output=%s/g.onnx", dir);
			Run r = run_gearc("export", om, gear, out);
			cr_assert_eq(r.status, 0, "%s", r.err);
			run_free(&r);
			snprintf(model, sizeof(model), "%s/g.onnx", dir);
			Onnx__ModelProto *m = load_onnx(model);
			Count cm = { 0 };
			count_nodes(m->graph, &cm);
			cr_expect_leq(cm.nodes, 10, "demo_cnn has 10 nodes");
			cr_expect_eq(cm.shape_ops, 0);
			char shape[64];
			shape_of_vi(m->graph->output[0], shape, sizeof(shape));
			snprintf(want, sizeof(want), "[%d,10]", batch[g]);
			cr_expect_str_eq(shape, want);
			for (size_t i = 0; i < m->graph->n_value_info; i++)
				cr_expect(is_static(m->graph->value_info[i]));
			onnx__model_proto__free_unpacked(m, NULL);
			snprintf(model, sizeof(model), "--model=%s/g.onnx", dir);
			snprintf(out, sizeof(out), "--output=%s/re", dir);
			r = run_gearc(model, out);
			cr_expect_eq(r.status, 0, "%s", r.err);
			run_free(&r);
		}
		free(om);
	}
	remove_tree(dir);
	free(dir);
}

Test(export, same_bytes_every_time_and_static_files)
{
	char *dir = temp_dir(), *om = compile_demo(dir, NULL);
	char a[600], b[600], pa[600], pb[600];
	snprintf(a, sizeof(a), "--output=%s/a.onnx", dir);
	snprintf(b, sizeof(b), "--output=%s/b.onnx", dir);
	Run r = run_gearc("export", om, "--gear=2", a);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	r = run_gearc("export", om, "--gear", "2", b);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	snprintf(pa, sizeof(pa), "%s/a.onnx", dir);
	snprintf(pb, sizeof(pb), "%s/b.onnx", dir);
	size_t na = 0, nb = 1;
	char *da = read_file(pa, &na), *db = read_file(pb, &nb);
	cr_assert(da && db);
	cr_expect(na == nb && !memcmp(da, db, na), "exports differ");
	free(da);
	free(db);
	/* a static compile of the export exports its one graph, --gear or
	 * not, to the same model */
	char model[700], out[600], om2[600];
	snprintf(model, sizeof(model), "--model=%s", pa);
	snprintf(out, sizeof(out), "--output=%s/static", dir);
	r = run_gearc(model, out);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	snprintf(om2, sizeof(om2), "%s/static.om", dir);
	snprintf(b, sizeof(b), "--output=%s/s.onnx", dir);
	r = run_gearc("export", om2, b);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	snprintf(pb, sizeof(pb), "%s/s.onnx", dir);
	Onnx__ModelProto *m = load_onnx(pb), *m0 = load_onnx(pa);
	cr_expect_eq(m->graph->n_node, m0->graph->n_node);
	cr_expect_str_eq(meta(m, "gearc.mode"), "static");
	onnx__model_proto__free_unpacked(m, NULL);
	onnx__model_proto__free_unpacked(m0, NULL);
	r = run_gearc("export", om2, "--gear=1", b);
	expect_error(&r, 1, "has 1 gear (0..0)");
	run_free(&r);
	/* a directory as --output for one gear: DIR/NAME_SHAPES.onnx */
	snprintf(out, sizeof(out), "--output=%s", dir);
	r = run_gearc("export", om, "--gear=1", out);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	gear_onnx(pb, sizeof(pb), dir, "demo", om, 1);
	cr_expect(strstr(pb, "/demo_4x3x32x32.onnx"), "%s", pb);
	cr_expect_eq(access(pb, F_OK), 0);
	free(om);
	remove_tree(dir);
	free(dir);
}

Test(export, external_data)
{
	char *dir = temp_dir(), out[600], path[600], model[700], data[700];
	json_object *doc;
	const Case c = { "det", "expected.json", NULL, false };
	char om[600];
	compile_case(&c, dir, &doc, om, sizeof(om));
	json_object_put(doc);
	snprintf(out, sizeof(out), "--output=%s/det1.onnx", dir);
	Run r = run_gearc("export", om, "--gear=1", "--external-data", out);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	snprintf(path, sizeof(path), "%s/det1.onnx", dir);
	snprintf(data, sizeof(data), "%s/det1.onnx.data", dir);
	struct stat st;
	cr_assert_eq(stat(data, &st), 0, "no external data file");
	Onnx__ModelProto *m = load_onnx(path);
	int external = 0;
	uint64_t end = 0;
	for (size_t i = 0; i < m->graph->n_initializer; i++) {
		const Onnx__TensorProto *t = m->graph->initializer[i];
		if (t->data_location !=
		    ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
			cr_expect(t->raw_data.len < 1024 || !t->has_raw_data);
			continue;
		}
		external++;
		cr_expect(!t->has_raw_data);
		cr_assert_eq(t->n_external_data, 3);
		cr_expect_str_eq(t->external_data[0]->key, "location");
		cr_expect_str_eq(t->external_data[0]->value, "det1.onnx.data");
		uint64_t off = strtoull(t->external_data[1]->value, NULL, 10);
		uint64_t len = strtoull(t->external_data[2]->value, NULL, 10);
		cr_expect_eq(off % 64, 0);
		cr_expect_geq(off, end, "external tensors overlap");
		end = off + len;
	}
	cr_expect_gt(external, 0);
	cr_expect_eq((uint64_t)st.st_size, end);
	onnx__model_proto__free_unpacked(m, NULL);
	snprintf(model, sizeof(model), "--model=%s", path);
	snprintf(out, sizeof(out), "--output=%s/re", dir);
	r = run_gearc(model, out);
	cr_expect_eq(r.status, 0, "re-import with external data: %s", r.err);
	run_free(&r);
	remove_tree(dir);
	free(dir);
}

Test(export, errors)
{
	char *dir = temp_dir(), *om = compile_demo(dir, NULL);
	char out[600], missing[600], file[600];
	snprintf(out, sizeof(out), "--output=%s/x.onnx", dir);
	Run r = run_gearc("export", om, "--gear=3", out);
	expect_error(&r, 1, "--gear=3: ");
	cr_expect(strstr(r.err, "has 3 gears (0..2)"), "%s", r.err);
	run_free(&r);
	r = run_gearc("export", om, out);
	expect_error(&r, 2, "has 3 gears (0..2)");
	run_free(&r);
	r = run_gearc("export", om, "--gear=x", out);
	expect_error(&r, 2, "--gear: 'x' is not a gear number or 'all'");
	run_free(&r);
	r = run_gearc("export", om, "--gear=-1", out);
	expect_error(&r, 2, "not a gear number");
	run_free(&r);
	r = run_gearc("export", om, "--gear=0");
	expect_error(&r, 2, "needs a .om file and --output");
	run_free(&r);
	r = run_gearc("export", FX "demo_cnn.onnx", "--gear=0", out);
	expect_error(&r, 1, "not a gearc .om file");
	run_free(&r);
	snprintf(missing, sizeof(missing), "--output=%s/nowhere/deeper", dir);
	r = run_gearc("export", om, "--gear=all", missing);
	expect_error(&r, 1, "cannot create the directory");
	run_free(&r);
	snprintf(missing, sizeof(missing), "--output=%s/nowhere/x.onnx", dir);
	r = run_gearc("export", om, "--gear=0", missing);
	expect_error(&r, 1, "cannot create file");
	run_free(&r);
	/* nothing written by the failures, an existing file kept */
	snprintf(file, sizeof(file), "%s/x.onnx", dir);
	cr_expect_neq(access(file, F_OK), 0);
	write_file(file, "keep", 4);
	r = run_gearc("export", om, "--gear=all", out);
	expect_error(&r, 1, "not a directory");
	run_free(&r);
	size_t n;
	char *kept = read_file(file, &n);
	cr_expect(n == 4 && !memcmp(kept, "keep", 4));
	free(kept);
	r = run_gearc("help", "export");
	cr_expect_eq(r.status, 0);
	cr_expect(strstr(r.out, "--gear=all"), "%s", r.out);
	run_free(&r);
	free(om);
	remove_tree(dir);
	free(dir);
}

/* ---- gearc's own forms as standard ONNX (issue 25, items 7-9) ----------- */

/* Compiles FX model with the flags into dir/m.om, exports gear k to
 * dir/m_gearK.onnx (every gear) and loads gear k's model. */
static Onnx__ModelProto *compile_export(const char *dir, const char *model,
					const char *shape, const char *dims,
					int k)
{
	char m[800], out[600], om[600], odir[600], onnx[700];
	snprintf(m, sizeof(m), "--model=" FX "%s", model);
	snprintf(out, sizeof(out), "--output=%s/m", dir);
	Run r = dims ? run_gearc(m, out, shape, dims, "-q")
		     : run_gearc(m, out, shape, "-q");
	cr_assert_eq(r.status, 0, "compile %s: %s", model, r.err);
	run_free(&r);
	snprintf(om, sizeof(om), "%s/m.om", dir);
	snprintf(odir, sizeof(odir), "--output=%s", dir);
	r = run_gearc("export", om, "--gear=all", odir);
	cr_assert_eq(r.status, 0, "export %s: %s", model, r.err);
	run_free(&r);
	gear_onnx(onnx, sizeof(onnx), dir, "m", om, k);
	/* gearc reads its own export back */
	snprintf(m, sizeof(m), "--model=%s", onnx);
	snprintf(out, sizeof(out), "--output=%s/re", dir);
	r = run_gearc(m, out, "-q");
	cr_expect_eq(r.status, 0, "re-import %s: %s", onnx, r.err);
	run_free(&r);
	return load_onnx(onnx);
}

static const Onnx__NodeProto *find_node(const Onnx__GraphProto *g,
					const char *op)
{
	for (size_t i = 0; i < g->n_node; i++)
		if (!strcmp(g->node[i]->op_type, op))
			return g->node[i];
	return NULL;
}

static const Onnx__GraphProto *graph_attr(const Onnx__NodeProto *n,
					  const char *name)
{
	for (size_t k = 0; n && k < n->n_attribute; k++)
		if (!strcmp(n->attribute[k]->name, name))
			return n->attribute[k]->g;
	return NULL;
}

static void expect_shape(const Onnx__ValueInfoProto *v, const char *want)
{
	char s[256];
	shape_of_vi(v, s, sizeof(s));
	cr_expect_str_eq(s, want, "'%s'", v->name);
}

Test(export, fail_branch_as_standard_onnx)
{
	char *dir = temp_dir();
	/* T=4: rows of 3 do not fit, the else branch compiles to Fail */
	Onnx__ModelProto *m = compile_export(dir, "export_fail.onnx",
					     "--input_shape=x:1,4;k:", NULL, 0);
	check_standard("export_fail", m);
	const Onnx__GraphProto *el = graph_attr(find_node(m->graph, "If"),
						"else_branch");
	cr_assert(el, "no If with an else branch");
	/* the Reshape that fails if taken carries the Fail's name */
	const Onnx__NodeProto *r = find_node(el, "Reshape");
	cr_assert(r, "no failing Reshape in the else branch");
	cr_expect_str_eq(r->name, "if_k/else_branch/fail");
	cr_assert_eq(el->n_output, 3);
	expect_shape(el->output[0], "[2,2]");
	expect_shape(el->output[1], "[]");
	expect_shape(el->output[2], "[2]");
	cr_expect_eq(el->output[1]->type->tensor_type->elem_type,
		     ONNX__TENSOR_PROTO__DATA_TYPE__INT64);
	cr_expect_eq(el->output[2]->type->tensor_type->elem_type,
		     ONNX__TENSOR_PROTO__DATA_TYPE__BOOL);
	onnx__model_proto__free_unpacked(m, NULL);
	/* Silero VAD's case: 512 samples, the sample rate at run time */
	m = compile_export(dir, "vad_sr.onnx", "--input_shape=x:1,512;sr:",
			   NULL, 0);
	check_standard("vad_sr", m);
	onnx__model_proto__free_unpacked(m, NULL);
	remove_tree(dir);
	free(dir);
}

Test(export, unnamed_nodes_get_unique_names)
{
	char *dir = temp_dir();
	for (int k = 0; k < 2; k++) {
		Onnx__ModelProto *m = compile_export(
			dir, "export_kv.onnx",
			"--input_shape=x:1,-1,8;past_key:1,2,4,4;"
			"use_cache_branch:1",
			"--dynamic_dims=1;2", k);
		check_standard("export_kv", m);
		onnx__model_proto__free_unpacked(m, NULL);
	}
	remove_tree(dir);
	free(dir);
}

Test(export, subgraph_outputs_made_inside)
{
	char *dir = temp_dir();
	/* the body's c_out = Identity(c_in) folds to a constant */
	Onnx__ModelProto *m = compile_export(dir, "export_loop.onnx",
					     "--input_shape=x:2,4", NULL, 0);
	check_standard("export_loop", m);
	const Onnx__GraphProto *body = graph_attr(find_node(m->graph, "Loop"),
						  "body");
	cr_assert(body);
	const Onnx__NodeProto *id = find_node(body, "Identity");
	cr_assert(id, "the folded condition is not given by an Identity");
	cr_expect_str_eq(id->output[0], body->output[0]->name);
	onnx__model_proto__free_unpacked(m, NULL);
	/* the no-cache branch returns a Constant (an empty past) */
	m = compile_export(dir, "export_kv.onnx",
			   "--input_shape=x:1,2,8;past_key:1,2,4,4;"
			   "use_cache_branch:1",
			   NULL, 0);
	check_standard("export_kv", m);
	/* static but for the past's length, which use_cache_branch picks */
	const Onnx__GraphProto *g = m->graph;
	for (size_t i = 0; i < g->n_value_info; i++)
		if (strcmp(g->value_info[i]->name, "past"))
			cr_expect(is_static(g->value_info[i]), "'%s'",
				  g->value_info[i]->name);
		else
			expect_shape(g->value_info[i], "[1,2,-1,4]");
	expect_shape(g->output[0], "[1,2,8]");
	expect_shape(g->output[1], "[1,2,-1,4]");
	onnx__model_proto__free_unpacked(m, NULL);
	remove_tree(dir);
	free(dir);
}
