/* tests/test_reader.c - what every command that reads a .om checks first
 * (the reader, `gearc verify`'s checks, the runtime's loader, export):
 * hostile files made by editing a file gearc wrote are refused by each
 * of verify, run, export and gearrt_model_open with one line, never a
 * crash. */
#include "testrun.h"

#include "omedit.h"
#include "runtime/gearrt.h"
#include "synth.h"

/* ---- nesting depth ------------------------------------------------------ */

static Graph *sub_graph(Graph *parent, const char *fmt, int k)
{
	char name[32];
	snprintf(name, sizeof(name), fmt, k);
	return graph_new(parent->arena, arena_strdup(parent->arena, name),
			 parent);
}

/* An outer reference in g to v of g's parent, typed as v. */
static ValId outer(Graph *g, const char *name, ValId v)
{
	ValId o = graph_add_value(g, name, VAL_OUTER);
	g->vals[o].outer = v;
	g->vals[o].dtype = g->parent->vals[v].dtype;
	g->vals[o].shape = g->parent->vals[v].shape;
	return o;
}

static void one_output(Graph *g, ValId v)
{
	g->outputs = arena_alloc(g->arena, sizeof(ValId));
	g->outputs[0] = v;
	g->noutputs = 1;
}

static ValId unary(Graph *g, const char *op, const char *fmt, int k, ValId x)
{
	char name[32];
	snprintf(name, sizeof(name), fmt, k);
	return tu_out(tu_node(g, op, arena_strdup(g->arena, name), IDS(x), 1),
		      0);
}

/* In g: If(cond) whose then branch "gK+1" holds the next level (Relu(x)
 * at the last) and whose else branch "eK" is Neg(x). */
static void nested_if(Graph *g, int k, int levels, ValId cond, ValId x)
{
	char name[32];
	snprintf(name, sizeof(name), "if%d", k);
	ValId y = tu_out(tu_node(g, "If", arena_strdup(g->arena, name),
				 IDS(cond), 1), 0);
	Graph *th = sub_graph(g, "g%d", k + 1), *el = sub_graph(g, "e%d", k);
	ValId tx = outer(th, "x", x);
	if (k + 1 < levels)
		nested_if(th, k + 1, levels, outer(th, "cond", cond), tx);
	else
		one_output(th, unary(th, "Relu", "relu%d", k + 1, tx));
	one_output(el, unary(el, "Neg", "neg%d", k, outer(el, "x", x)));
	node_add_attr(g, &g->nodes[g->nnodes - 1], "then_branch",
		      ATTR_GRAPH)->g = th;
	node_add_attr(g, &g->nodes[g->nnodes - 1], "else_branch",
		      ATTR_GRAPH)->g = el;
	one_output(g, y);
}

/* x float [2,3], cond bool -> Relu -> If nested levels subgraph levels
 * deep (its innermost then branch at depth levels) -> y, compiled. */
static Model *nested_model(int levels)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId cond = tu_input(g, "cond", DT_BOOL, SCALAR);
	ValId x = tu_input(g, "x", DT_FLOAT, SHAPE(2, 3));
	nested_if(g, 0, levels, cond, unary(g, "Relu", "relu%d", 0, x));
	m = synth_compile(m, NULL, NULL, NULL, NULL, 1);
	cr_assert(m, "%s", last_error());
	return m;
}

/* The graph of f named name. */
static int32_t graph_named(const Gearom__Model *m, const char *name)
{
	for (size_t i = 0; i < m->n_graphs; i++)
		if (!strcmp(m->graphs[i]->name, name))
			return (int32_t)i;
	cr_assert_fail("no graph '%s'", name);
	return -1;
}

/* Writes to path a nested_model(3) file f (bytes data) made depth
 * levels deep: between g2 (depth 2) and the innermost g3 go depth - 3
 * copies of g2, each with a copy of its else branch e2.  The copies are
 * shallow (tensors and plans shared; g3 is left unreferenced); the
 * message is put back as it was. */
static void write_deepened(const OmFile *f, const uint8_t *data, int depth,
			   const char *path)
{
	Gearom__Model *m = f->model;
	int32_t g2 = graph_named(m, "g2"), e2 = graph_named(m, "e2");
	int32_t g3 = graph_named(m, "g3"), n0 = (int32_t)m->n_graphs;
	int32_t K = depth - 3, n = n0 + 2 * K + 1;
	Arena a = { 0 };
	Gearom__Graph **gs = arena_array(&a, (size_t)n, sizeof(*gs));
	memcpy(gs, m->graphs, (size_t)n0 * sizeof(*gs));
	for (int32_t k = 0; k < K; k++) {
		Gearom__Graph *c = arena_memdup(&a, m->graphs[g2], sizeof(*c));
		Gearom__Graph *e = arena_memdup(&a, m->graphs[e2], sizeof(*e));
		c->name = arena_printf(&a, "d%d", k);
		c->parent = k ? n0 + 2 * (k - 1) : g2;
		e->name = arena_printf(&a, "f%d", k);
		e->parent = n0 + 2 * k;
		gs[n0 + 2 * k] = c;
		gs[n0 + 2 * k + 1] = e;
	}
	gs[n - 1] = arena_memdup(&a, m->graphs[g3], sizeof(**gs));
	gs[n - 1]->parent = K ? n0 + 2 * (K - 1) : g2;
	/* g2 and each copy: If(then: the next level, else: its own e) */
	Gearom__Node *node = m->graphs[g2]->nodes[0];
	Gearom__Attribute **was = node->attrs;
	for (int32_t k = -1; k < K; k++) {
		int32_t next = n0 + 2 * (k + 1), other = k < 0 ? e2 : n0 + 2 * k + 1;
		Gearom__Node *c = arena_memdup(&a, node, sizeof(*c));
		c->attrs = arena_array(&a, node->n_attrs, sizeof(*c->attrs));
		for (size_t j = 0; j < node->n_attrs; j++) {
			Gearom__Attribute *x = arena_memdup(&a, was[j],
							    sizeof(*x));
			x->g = !strcmp(x->name, "then_branch") ? next : other;
			c->attrs[j] = x;
		}
		if (k < 0) {
			node->attrs = c->attrs;
		} else {
			Gearom__Node **one = arena_array(&a, 1, sizeof(*one));
			one[0] = c;
			gs[n0 + 2 * k]->nodes = one;
		}
	}
	Gearom__Graph **gwas = m->graphs;
	m->graphs = gs;
	m->n_graphs = (size_t)n;
	omedit_write(data, m, path);
	m->graphs = gwas;
	m->n_graphs = (size_t)n0;
	node->attrs = was;
	arena_release(&a);
}

typedef struct Deep {
	char *dir, *om;
	uint8_t *data;
	size_t size;
	OmFile f;
} Deep;

/* nested_model(levels) written to a fresh directory. */
static Deep deep_open(int levels)
{
	Deep d = { .dir = temp_dir() };
	d.om = path_in(d.dir, "deep.om");
	Model *m = nested_model(levels);
	cr_assert_eq(om_encode(m, &d.data, &d.size), 0, "%s", last_error());
	model_free(m);
	write_file(d.om, d.data, d.size);
	cr_assert_eq(om_parse(&d.f, d.data, d.size, "deep.om"), 0, "%s",
		     last_error());
	return d;
}

static void deep_close(Deep *d)
{
	om_close(&d->f);
	free(d->data);
	remove_tree(d->dir);
	free(d->dir);
	free(d->om);
}

/* verify, run (random inputs, and input is an --input flag or NULL),
 * export and gearrt_model_open on path: each works, or each fails with
 * status 1 and one line holding want. */
static void expect_every_reader_with(const char *dir, const char *path,
				     const char *want, const char *input)
{
	char *onnx = path_in(dir, "out.onnx"), out[600];
	snprintf(out, sizeof(out), "--output=%s", onnx);
	Run r[3] = { run_gearc("verify", path),
		     input ? run_gearc("run", path, "--random-inputs", input)
			   : run_gearc("run", path, "--random-inputs"),
		     run_gearc("export", path, "--gear=0", out) };
	cr_expect_eq(access(onnx, F_OK) == 0, !want, "export %s %s",
		     want ? "wrote" : "did not write", onnx);
	unlink(onnx);
	for (int i = 0; i < 3; i++) {
		if (want)
			expect_error(&r[i], 1, want);
		else
			cr_expect_eq(r[i].status, 0, "%s", r[i].err);
		run_free(&r[i]);
	}
	gearrt_model *md = NULL;
	gearrt_status st = gearrt_model_open(path, &md);
	if (want) {
		cr_expect_eq(st, GEARRT_E_FILE, "gearrt_model_open: %d", st);
		cr_expect(strstr(gearrt_last_error(), want), "%s",
			  gearrt_last_error());
		cr_expect_null(md);
	} else {
		cr_expect_eq(st, GEARRT_OK, "%s", gearrt_last_error());
	}
	gearrt_model_close(md);
	free(onnx);
}

static void expect_every_reader(const char *dir, const char *path,
				const char *want)
{
	expect_every_reader_with(dir, path, want, NULL);
}

/* "--input=cond=DIR/true.npy", a numpy bool scalar true written there:
 * every If of nested_model takes its then branch, all the way down. */
static char *cond_true(const char *dir)
{
	static const char hdr[] = "{'descr': '|b1', 'fortran_order': False, "
				  "'shape': (), }";
	char npy[192], *path = path_in(dir, "true.npy");
	char *flag = malloc(strlen(path) + 20);
	size_t n = 10 + sizeof(hdr) - 1, pad = 63 - n % 64;
	memcpy(npy, "\x93NUMPY\x01\x00", 8);
	npy[8] = (char)(n + pad + 1 - 10);
	npy[9] = 0;
	memcpy(npy + 10, hdr, sizeof(hdr) - 1);
	memset(npy + n, ' ', pad);
	npy[n + pad] = '\n';
	npy[n + pad + 1] = 1;
	write_file(path, npy, n + pad + 2);
	sprintf(flag, "--input=cond=%s", path);
	free(path);
	return flag;
}

/* Every walk over subgraphs recurses: a file nested deeper than
 * MAX_OM_GRAPH_DEPTH is refused where it is read, one nested that deep
 * works (under the default 8 MB stack, and ASan's larger frames). */
Test(reader, nesting_depth_is_bounded_where_the_file_is_read, .timeout = 120)
{
	Deep d = deep_open(3);
	char *deep = path_in(d.dir, "deeper.om"), want[80];
	snprintf(want, sizeof(want), "subgraphs are nested more than %d "
		 "levels deep", MAX_OM_GRAPH_DEPTH);
	char *cond = cond_true(d.dir);
	write_deepened(&d.f, d.data, MAX_OM_GRAPH_DEPTH, deep);
	expect_every_reader_with(d.dir, deep, NULL, cond);
	free(cond);
	write_deepened(&d.f, d.data, MAX_OM_GRAPH_DEPTH + 1, deep);
	expect_every_reader(d.dir, deep, want);
	write_deepened(&d.f, d.data, 10000, deep);
	expect_every_reader(d.dir, deep, want);
	free(deep);
	deep_close(&d);
}

/* The writer refuses what the reader would: a model nested one level too
 * deep compiles but is not written. */
Test(reader, the_writer_refuses_a_model_nested_too_deep)
{
	Model *m = nested_model(MAX_OM_GRAPH_DEPTH + 1);
	uint8_t *data;
	size_t size;
	cr_expect_eq(om_encode(m, &data, &size), -1);
	cr_expect(strstr(last_error(), "nested more than"), "%s", last_error());
	model_free(m);
	Deep d = deep_open(MAX_OM_GRAPH_DEPTH);
	char *cond = cond_true(d.dir);
	expect_every_reader_with(d.dir, d.om, NULL, cond);
	free(cond);
	deep_close(&d);
}

/* ---- tensor kinds and the input/output table ----------------------------- */

static Gearom__Graph *root_of(const Fx *x)
{
	return x->f.model->graphs[x->f.model->root];
}

static Gearom__Tensor *tensor_named(const Gearom__Graph *g, const char *name)
{
	for (size_t i = 0; i < g->n_tensors; i++)
		if (!strcmp(g->tensors[i]->name, name))
			return g->tensors[i];
	cr_assert_fail("graph '%s' has no tensor '%s'", g->name, name);
	return NULL;
}

/* Writes x's edited message to x->om and expects every reader to refuse
 * it with want (NULL: to take it). */
static void expect_refused(const Fx *x, const char *want)
{
	omedit_write(x->data, x->f.model, x->om);
	expect_every_reader(x->dir, x->om, want);
}

/* Sets lvalue to v, expects the file refused with want, puts it back. */
#define REFUSED(x, lvalue, v, want)                     \
	do {                                            \
		__typeof__(lvalue) was_ = (lvalue);     \
		(lvalue) = (v);                         \
		expect_refused(x, want);                \
		(lvalue) = was_;                        \
	} while (0)

/* The runtime binds the caller's buffers to the graph's input list: a
 * tensor of input kind outside it would have no data (a NULL read in
 * Gemm's kernel), one listed twice or a node output listed would take a
 * buffer it must not. */
Test(reader, tensor_kinds_agree_with_the_input_list, .timeout = 60)
{
	Fx x = fx_compile("demo_cnn.onnx", "x:2,3,32,32", NULL);
	Gearom__Graph *g = root_of(&x);
	Gearom__Tensor *w = tensor_named(g, "fc.W");
	w->kind = GEAROM__TENSOR_KIND__TK_INPUT;
	REFUSED(&x, w->weight, -1, "'fc.W') is an input tensor but not one "
				  "of the graph's inputs");
	w->kind = GEAROM__TENSOR_KIND__TK_WEIGHT;
	int32_t c1 = -1;
	for (size_t i = 0; i < g->n_tensors; i++)
		if (!strcmp(g->tensors[i]->name, "c1"))
			c1 = (int32_t)i;
	REFUSED(&x, g->inputs[0], c1, "input 0 ('c1') is not an input tensor");
	int32_t two[2] = { g->inputs[0], g->inputs[0] };
	g->n_inputs = 2;
	REFUSED(&x, g->inputs, two, "input 1 ('x') is listed twice");
	g->n_inputs = 1;
	expect_refused(&x, NULL); /* as compiled again */
	fx_free(&x);
}

/* A static file's input/output table against its graph: what the caller
 * is asked for must be what the graph reads (smaller: the kernels read
 * past the caller's buffer; another dtype: they read it as another), and
 * so for outputs. */
Test(reader, a_static_files_io_table_agrees_with_its_graph, .timeout = 60)
{
	Fx x = fx_compile("demo_cnn.onnx", "x:2,3,32,32", NULL);
	Gearom__IoInfo *in = x.f.model->inputs[0];
	Gearom__IoInfo *out = x.f.model->outputs[0];
	REFUSED(&x, in->shape[0], 1, "graph 'root': input 'x' is float32 "
		"[2,3,32,32], the file's I/O table says float32 [1,3,32,32]");
	REFUSED(&x, in->shape[0], (int64_t)1 << 32, "the file's I/O table says "
		"float32 [4294967296,3,32,32]");
	REFUSED(&x, in->dtype, DT_FLOAT16, "input 'x' is float32 [2,3,32,32], "
		"the file's I/O table says float16");
	REFUSED(&x, out->dtype, DT_DOUBLE, "output 'probs' is float32 [2,10], "
		"the file's I/O table says float64 [2,10]");
	REFUSED(&x, out->shape[1], 11, "output 'probs' is float32 [2,10], the "
		"file's I/O table says float32 [2,11]");
	REFUSED(&x, in->name, "y", "graph 'root' has no input 'y'");
	/* sizes that overflow are refused where the file is read */
	in->shape[0] = (int64_t)1 << 62;
	REFUSED(&x, in->shape[1], (int64_t)1 << 62,
		"input 0: its size overflows int64");
	in->shape[0] = 2;
	Gearom__Tensor *t = tensor_named(root_of(&x), "c1");
	REFUSED(&x, t->dims[1], (int64_t)1 << 62,
		"graph 0: tensor 11: its size overflows int64");
	fx_free(&x);
}

Test(reader, input_and_output_names_are_unique, .timeout = 60)
{
	Fx x = fx_compile("two_inputs.onnx", "a:1,3,8,8;b:1,3,8,8", NULL);
	Gearom__Model *m = x.f.model;
	REFUSED(&x, m->inputs[1]->name, "a", "input 1: the name 'a' is taken "
		"by an earlier input");
	Gearom__IoInfo *outs[2] = { m->outputs[0], m->outputs[0] };
	m->n_outputs = 2;
	REFUSED(&x, m->outputs, outs, "output 1: the name 'out' is taken by "
		"an earlier output");
	m->n_outputs = 1;
	fx_free(&x);
}

/* A gear's values are the inputs' dims at their -1s, inputs in order
 * (gearrt.h): the gear inputs must list them so, whatever the order of
 * --input_shape, which the compile now follows. */
Test(reader, gear_inputs_follow_the_model_inputs, .timeout = 60)
{
	Fx x = fx_compile("two_inputs.onnx", "b:-1,3,8,8;a:-1,3,8,8",
			  "--dynamic_dims=1,2;2,1");
	Gearom__Model *m = x.f.model;
	cr_assert_str_eq(m->gear_inputs[0]->name, "a");
	cr_assert_str_eq(m->gear_inputs[1]->name, "b");
	cr_expect_eq(m->gears[0]->dims[0], 2); /* a at gear 0 */
	cr_expect_eq(m->gears[0]->dims[1], 1); /* b at gear 0 */
	expect_every_reader(x.dir, x.om, NULL);
	Gearom__GearInput *swapped[2] = { m->gear_inputs[1],
					  m->gear_inputs[0] };
	REFUSED(&x, m->gear_inputs, swapped, "input 0 'a' has a -1 dim, but "
		"gear input 0 is 'b'");
	fx_free(&x);
}

/* ---- export reads as verify does ------------------------------------------ */

typedef struct Sweep {
	const Fx *x;
	char *dir; /* export's --output, a directory */
	int tried, refused;
} Sweep;

/* Whether `gearc run` refuses x's file with verify's error (line, with
 * its "gearc: error: ") at one of its gears at least: the runtime checks
 * what is each gear's own before that gear's first run, not at open. */
static bool run_refuses(const Fx *x, const char *line)
{
	size_t ngears = x->f.model->n_gears ? x->f.model->n_gears : 1;
	bool refused = false;
	for (size_t k = 0; k < ngears && !refused; k++) {
		char gear[32];
		snprintf(gear, sizeof(gear), "--gear=%zu", k);
		Run r = run_gearc("run", x->om, "--random-inputs", gear);
		refused = r.status == 1 && !strcmp(r.err, line);
		run_free(&r);
	}
	return refused;
}

/* Writes x's edited message; if verify refuses the file, export (every
 * gear) refuses it with the same line and writes nothing, and run
 * refuses it too, at the gear at fault. */
static void same_verdict(Sweep *s)
{
	char out[700];
	snprintf(out, sizeof(out), "--output=%s", s->dir);
	omedit_write(s->x->data, s->x->f.model, s->x->om);
	Run v = run_gearc("verify", "-q", s->x->om);
	s->tried++;
	if (v.status == 0) {
		run_free(&v);
		return;
	}
	s->refused++;
	expect_error(&v, 1, s->x->om);
	Run e = run_gearc("export", s->x->om, "--gear=all", out);
	cr_expect_eq(e.status, 1, "export exit %d: %s", e.status, e.err);
	cr_expect_str_eq(e.err, v.err, "export and verify disagree");
	cr_expect(run_refuses(s->x, v.err), "run did not refuse with %s",
		  v.err);
	char cmd[800];
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s')\"", s->dir);
	cr_expect_eq(system(cmd), 0, "export wrote into %s", s->dir);
	run_free(&v);
	run_free(&e);
}

/* Sets lvalue to v, checks the verdicts, puts it back. */
#define FLIP(s, lvalue, v)                          \
	do {                                        \
		__typeof__(lvalue) was_ = (lvalue); \
		(lvalue) = (v);                     \
		same_verdict(s);                    \
		(lvalue) = was_;                    \
	} while (0)

static void flip_tensors(Sweep *s, Gearom__Graph *g)
{
	for (size_t t = 0; t < g->n_tensors; t++) {
		Gearom__Tensor *x = g->tensors[t];
		if (x->n_dims && x->dims[0] > 0)
			FLIP(s, x->dims[0], x->dims[0] + 1);
		FLIP(s, x->dtype, x->dtype == DT_FLOAT ? DT_INT64 : DT_FLOAT);
	}
}

static void flip_plan(Sweep *s, Gearom__MemoryPlan *p)
{
	for (size_t k = 0; p && k < p->n_blocks; k++) {
		Gearom__MemBlock *b = p->blocks[k];
		FLIP(s, b->offset, b->offset + 64);
		FLIP(s, b->size, b->size + 64);
		FLIP(s, b->last, b->last - 1);
	}
	if (p)
		FLIP(s, p->arena_bytes, p->arena_bytes - 64);
}

static void flip_io(Sweep *s, Gearom__Model *m)
{
	for (size_t i = 0; i < m->n_inputs + m->n_outputs; i++) {
		Gearom__IoInfo *io = i < m->n_inputs
					     ? m->inputs[i]
					     : m->outputs[i - m->n_inputs];
		for (size_t d = 0; d < io->n_shape; d++)
			FLIP(s, io->shape[d], io->shape[d] + 1);
		FLIP(s, io->dtype, DT_FLOAT16);
	}
	for (size_t g = 0; g < m->n_gears; g++)
		for (size_t k = 0; k < m->gears[g]->n_outputs; k++) {
			Gearom__ShapeInfo *o = m->gears[g]->outputs[k];
			FLIP(s, o->dims[0], o->dims[0] + 1);
		}
}

/* One reader and one set of checks for every command: of the files made
 * by changing one field of a gear compile (tensor dims and dtypes, plan
 * blocks, the I/O table, gear shapes), each that verify refuses export
 * and run refuse with the same line, export writing nothing. */
Test(reader, export_refuses_what_verify_refuses, .timeout = 600)
{
	Fx x = fx_compile("demo_cnn.onnx", "x:-1,3,32,32",
			  "--dynamic_batch_size=1,4");
	Sweep s = { .x = &x, .dir = path_in(x.dir, "exported") };
	cr_assert_eq(mkdir(s.dir, 0755), 0);
	Gearom__Model *m = x.f.model;
	for (size_t gi = 0; gi < m->n_graphs; gi++) {
		flip_tensors(&s, m->graphs[gi]);
		flip_plan(&s, m->graphs[gi]->plan);
	}
	flip_io(&s, m);
	cr_log_info("%d of %d edited files refused", s.refused, s.tried);
	cr_expect_gt(s.refused, 100, "only %d of %d refused", s.refused,
		     s.tried);
	free(s.dir);
	fx_free(&x);
}

/* protobuf-c packs an empty string of a STRINGS attribute (raised from
 * the .om as length 0, no data) by appending (0, NULL): export's buffer
 * copies nothing (UBSan, in `make SANITIZE=1`, flagged the memcpy). */
Test(reader, export_of_an_empty_string_in_an_attribute)
{
	Model *m = tu_model(13);
	Graph *g = m->graph;
	ValId x = tu_input(g, "x", DT_STRING, SHAPE(3));
	Node *n = tu_node(g, "StringNormalizer", "norm", IDS(x), 1);
	Attr *a = node_add_attr(g, n, "stopwords", ATTR_STRINGS);
	Bytes *words = arena_array(g->arena, 2, sizeof(Bytes));
	words[0] = (Bytes){ 0, (const uint8_t *)"" };
	words[1] = (Bytes){ 1, (const uint8_t *)"b" };
	a->n = 2;
	a->strings = words;
	one_output(g, tu_out(&g->nodes[0], 0));
	m = synth_compile(m, NULL, NULL, NULL, NULL, 1);
	cr_assert(m, "%s", last_error());
	char *dir = temp_dir(), *om = path_in(dir, "s.om");
	char *onnx = path_in(dir, "s.onnx"), out[700];
	uint8_t *data;
	size_t size;
	cr_assert_eq(om_encode(m, &data, &size), 0, "%s", last_error());
	write_file(om, data, size);
	snprintf(out, sizeof(out), "--output=%s", onnx);
	Run r = run_gearc("export", om, out);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect_eq(access(onnx, F_OK), 0);
	run_free(&r);
	free(data);
	model_free(m);
	remove_tree(dir);
	free(dir);
	free(om);
	free(onnx);
}

/* An outer reference is typed as the tensor it names: a subgraph's
 * kernels read that tensor's buffer. */
Test(reader, outer_references_are_typed_as_their_tensor, .timeout = 60)
{
	Deep d = deep_open(3);
	Gearom__Model *m = d.f.model;
	Gearom__Tensor *x = tensor_named(m->graphs[graph_named(m, "g2")], "x");
	int32_t dt = x->dtype;
	x->dtype = DT_DOUBLE;
	omedit_write(d.data, m, d.om);
	expect_every_reader(d.dir, d.om, "outer reference to 'x' of graph");
	x->dtype = dt;
	x->dims[1] = 4;
	omedit_write(d.data, m, d.om);
	expect_every_reader(d.dir, d.om, "outer reference to 'x' of graph");
	x->dims[1] = 3;
	deep_close(&d);
}
