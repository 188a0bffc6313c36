/*
 * tests/conformance.c - gearc's output shapes against ONNX's backend tests.
 *
 * usage: conformance [-v] [-n|-r [-w DIR]] [-k SUBSTRING] TESTDATA_DIR
 *
 * For every test under TESTDATA_DIR/{node,pytorch-converted,
 * pytorch-operator,simple}/ whose graph inputs and outputs are plain
 * tensors and whose nodes are all in the default domain (the "plain"
 * tests), compile model.onnx statically: integer and bool inputs become
 * constants from test_data_set_0/input_N.pb (as shape parameters are in
 * real models), every other input gets its shape from the .pb's dims.
 * Then write the .om in memory, read it back, and compare the output
 * shapes of 'gearc dump --format=json' with the dims of output_N.pb.
 * Prints each failure and the line "conformance: P/N".
 *
 * With -n (values by folding): every input becomes a constant and the
 * whole graph is folded, so each op's kernel (its fold hook) computes the
 * outputs, which are compared with output_N.pb by ONNX's backend
 * tolerance (tensor_close() in tests/tensorcmp.h).  This checks the
 * kernels the runtime runs without going through it.
 *
 * With -r (values through the runtime, the figure `make conformance`
 * gates): every input stays a graph input, the model is compiled
 * statically, written as a .om, loaded by libgearrt, run on input_N.pb,
 * and each output compared with output_N.pb by the same tolerance.  The
 * session's arena is filled with 0xff bytes (NaN as floats) first, so a
 * memory plan that overlaps two live tensors fails a test.  The session
 * then runs twice more: neither run may allocate from the model's arenas
 * (a model is read-only once open: sessions on other threads read it),
 * and, where the graph is planned (every node a kernel), neither may
 * make a heap allocation; a fourth run's outputs must match again.
 *
 * With -r -w DIR, each compiled .om is kept as DIR/SUITE__TEST.om, so
 * tests/om_sums.sh can checksum what the compiler wrote.
 */
#include <dirent.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "compiler/onnx.h"
#include "serializer/om.h"
#include "runtime/gearrt.h"
#include "runtime/rt.h"
#include "tests/tensorcmp.h"
#include <unistd.h>

/* tests/allocount.c: heap allocations by the code linked in (the binary
 * links with malloc, calloc, realloc and aligned_alloc wrapped). */
extern long alloc_count;

static const char *suites[] = { "node", "pytorch-converted",
				 "pytorch-operator", "simple" };

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted subdirectory names of dir (malloc'd, NULL-terminated). */
static char **list_dir(const char *dir)
{
	DIR *d = opendir(dir);
	size_t n = 0, cap = 64;
	char **names = xmalloc(cap * sizeof(char *));
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n + 1 >= cap)
			names = xrealloc(names, (cap *= 2) * sizeof(char *));
		names[n++] = xstrdup(e->d_name);
	}
	if (d)
		closedir(d);
	qsort(names, n, sizeof(char *), by_name);
	names[n] = NULL;
	return names;
}

/* printf into a malloc'd string. */
static char *strf(const char *fmt, ...) PRINTF_LIKE(1, 2);
static char *strf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *p = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static int plain_nodes(Graph *g, void *ctx)
{
	(void)ctx;
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!domain_is_default(g->nodes[i].domain))
			return -1;
	return 0;
}

/* Tensor inputs and outputs, default domain only. */
static bool is_plain(Model *m)
{
	Graph *g = m->graph;
	for (int32_t k = 0; k < g->ninputs; k++)
		if (g->vals[g->inputs[k]].tkind != TK_TENSOR)
			return false;
	for (int32_t k = 0; k < g->noutputs; k++)
		if (g->vals[g->outputs[k]].tkind != TK_TENSOR)
			return false;
	return graph_walk(g, plain_nodes, NULL) == 0;
}

static bool is_integral(int dt)
{
	return dt == DT_BOOL || dt == DT_INT8 || dt == DT_INT16 ||
	       dt == DT_INT32 || dt == DT_INT64 || dt == DT_UINT8 ||
	       dt == DT_UINT16 || dt == DT_UINT32 || dt == DT_UINT64;
}

static bool all_const; /* -n: every input a constant */
static bool runtime;   /* -r: every input a runtime input, run by libgearrt */

/* Binds the graph inputs to test_data_set_0/input_N.pb: integer and bool
 * inputs become weights, the others get the .pb's shape. */
static int bind_inputs(Model *m, const char *dir)
{
	Graph *g = m->graph;
	int32_t kept = 0;
	for (int32_t k = 0; k < g->ninputs; k++) {
		ValId id = g->inputs[k];
		char *path = strf("%s/test_data_set_0/input_%d.pb", dir, k);
		const Tensor *t = onnx_load_tensor(m, path);
		free(path);
		if (!t)
			return -1;
		Value *v = &g->vals[id];
		if (v->dtype == DT_BFLOAT16 && t->dtype == DT_UINT16) {
			/* ONNX 1.12's test data stores bfloat16 as uint16 */
			Tensor *b = tensor_new(&m->arena, t->name, DT_BFLOAT16,
					       &t->shape, t->data);
			t = b;
		}
		if (v->dtype != DT_UNDEFINED && v->dtype != t->dtype)
			return error("input %d '%s' is %s, but its test data "
				     "holds %s",
				     k, v->name, dtype_name(v->dtype),
				     dtype_name(t->dtype));
		v->dtype = t->dtype;
		v->shape = t->shape;
		v->dim_params = NULL;
		if ((is_integral(t->dtype) && !runtime) || all_const) {
			v->kind = VAL_WEIGHT;
			v->konst = t;
		} else {
			g->inputs[kept++] = id;
		}
	}
	g->ninputs = kept;
	return 0;
}

static json_object *jkey(json_object *o, const char *k)
{
	json_object *v = NULL;
	json_object_object_get_ex(o, k, &v);
	return v;
}

static void shape_text(json_object *shape, char *buf, size_t n)
{
	snprintf(buf, n, "%s",
		 shape ? json_object_to_json_string_ext(shape,
							JSON_C_TO_STRING_PLAIN)
		       : "null");
}

/* Compares outputs[] of the dump with output_N.pb; a mismatch is an error
 * naming the output. */
static int check_outputs(Model *m, const char *dir, json_object *outs)
{
	char got[256], want[256];
	size_t n = json_object_array_length(outs);
	for (size_t k = 0; k < n; k++) {
		char *path = strf("%s/test_data_set_0/output_%zu.pb", dir, k);
		const Tensor *t = exists(path) ? onnx_load_tensor(m, path) : NULL;
		if (!t && !*last_error())
			error("no test data for output %zu", k);
		free(path);
		if (!t)
			return -1;
		json_object *o = json_object_array_get_idx(outs, k);
		json_object *shape = jkey(o, "shape");
		bool same = shape && json_object_array_length(shape) ==
					     (size_t)t->shape.rank;
		for (int32_t i = 0; same && i < t->shape.rank; i++)
			same = json_object_get_int64(json_object_array_get_idx(
				       shape, (size_t)i)) == t->shape.dims[i];
		if (!same) {
			shape_text(shape, got, sizeof(got));
			shape_str(&t->shape, want, sizeof(want));
			return error("output %zu '%s': shape %s, expected %s", k,
				     json_object_get_string(jkey(o, "name")),
				     got, want);
		}
	}
	return 0;
}

/* The first node of g with a present output left without contents. */
static const Node *first_unfolded(const Graph *g)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		for (int32_t k = 0; k < g->nodes[i].noutputs; k++) {
			ValId o = g->nodes[i].outputs[k];
			if (o >= 0 && !g->vals[o].konst)
				return &g->nodes[i];
		}
	return NULL;
}

/* -n: folds the whole graph and compares every output's contents. */
static int check_values(Model *m, const char *dir)
{
	Graph *g = m->graph;
	m->fold_limit = INT64_MAX / 4;
	if (infer_graph(m, g) < 0)
		return error_prefix("infer");
	for (int32_t k = 0; k < g->noutputs; k++) {
		const Value *v = &g->vals[g->outputs[k]];
		char *path = strf("%s/test_data_set_0/output_%d.pb", dir, k);
		const Tensor *want = onnx_load_tensor(m, path);
		free(path);
		if (!want)
			return -1;
		if (!v->konst) {
			const Node *n = first_unfolded(g);
			return error("output %d '%s': not computed (first "
				     "node left: '%s' (%s))", k, v->name,
				     n ? n->name : "?", n ? n->op_type : "?");
		}
		if (tensor_close(v->konst, want, 1e-3, 1e-7) < 0)
			return error_prefix("output %d '%s'", k, v->name);
	}
	return 0;
}

/* t as gearrt_run takes it: strings as NUL-terminated char * (in m). */
static gearrt_tensor api_tensor(Model *m, const Tensor *t)
{
	gearrt_tensor a = { .dtype = t->dtype, .rank = t->shape.rank,
			    .data = (void *)t->data, .size = t->nbytes };
	memcpy(a.dims, t->shape.dims, (size_t)t->shape.rank * sizeof(int64_t));
	if (t->dtype != DT_STRING)
		return a;
	size_t n = (size_t)shape_numel(&t->shape);
	const Bytes *b = t->data;
	char **str = arena_array(&m->arena, n + 1, sizeof(char *));
	for (size_t k = 0; k < n; k++)
		str[k] = arena_strndup(&m->arena, (const char *)b[k].data,
				       b[k].len);
	a.data = str;
	a.size = n * sizeof(char *);
	return a;
}

/* Output o of a run as a tensor (strings as the IR's Bytes, in m). */
static Tensor ir_tensor(Model *m, const gearrt_tensor *o)
{
	Tensor t = { .dtype = o->dtype, .shape = shape_of(o->rank, o->dims),
		     .data = o->data, .nbytes = o->size };
	if (o->dtype != DT_STRING)
		return t;
	size_t n = (size_t)shape_numel(&t.shape);
	const char *const *str = o->data;
	Bytes *b = arena_array(&m->arena, n + 1, sizeof(Bytes));
	for (size_t k = 0; k < n; k++)
		b[k] = (Bytes){ strlen(str[k]), (const uint8_t *)str[k] };
	t.data = b;
	t.nbytes = n * sizeof(Bytes);
	return t;
}

/* Runs s on in[0..nin) and compares its nout outputs with output_N.pb. */
static int run_once(Model *m, const char *dir, gearrt_session *s,
		    const gearrt_tensor *in, size_t nin, size_t nout)
{
	gearrt_tensor out[64];
	memset(out, 0, sizeof(out));
	if (gearrt_run(s, in, nin, out, nout) != GEARRT_OK)
		return error_prefix("run");
	for (size_t k = 0; k < nout; k++) {
		char *path = strf("%s/test_data_set_0/output_%zu.pb", dir, k);
		const Tensor *want = onnx_load_tensor(m, path);
		free(path);
		if (!want)
			return -1;
		Tensor got = ir_tensor(m, &out[k]);
		if (tensor_close(&got, want, 1e-3, 1e-7) < 0)
			return error_prefix("output %zu", k);
	}
	return 0;
}

/* Bytes handed out by the arenas of md's model and of its graphs. */
static size_t model_bytes(const gearrt_model *md)
{
	size_t n = md->m->arena.used;
	for (size_t k = 0; k < (md->ngears ? md->ngears : 1); k++)
		if (md->run_graph[k]->arena != &md->m->arena)
			n += md->run_graph[k]->arena->used;
	return n;
}

/* True if s's last run ran a planned graph: every node a kernel on
 * planned buffers, no specialisation by input values.  Only such runs
 * promise no heap allocation (DESIGN.md section 9: nodes evaluated at
 * run time and specialised graphs allocate). */
static bool planned_run(const gearrt_session *s)
{
	int g = gearrt_last_gear(s);
	size_t k = g < 0 ? 0 : (size_t)g;
	return !rt_session_ctx(s)->model->by_value[k] && rt_session_ctx(s)->prep[k] && rt_session_ctx(s)->prep[k]->planned;
}

/* Runs s on test_data_set_0 four times: the first and last runs'
 * outputs must match; the second and third must leave the model's arenas
 * as they were and, on a planned graph, make no heap allocation. */
static int run_outputs(Model *m, const char *dir, gearrt_session *s,
		       size_t nin, size_t nout)
{
	gearrt_tensor in[64], out[64];
	if (nin > 64 || nout > 64)
		return error("more than 64 inputs or outputs");
	for (size_t k = 0; k < nin; k++) {
		char *path = strf("%s/test_data_set_0/input_%zu.pb", dir, k);
		const Tensor *t = onnx_load_tensor(m, path);
		free(path);
		if (!t)
			return -1;
		in[k] = api_tensor(m, t);
		if (in[k].dtype == DT_UINT16 && m->graph->ninputs > (int)k &&
		    m->graph->vals[m->graph->inputs[k]].dtype == DT_BFLOAT16)
			in[k].dtype = DT_BFLOAT16;
	}
	if (run_once(m, dir, s, in, nin, nout) < 0)
		return -1;
	for (int i = 2; i <= 3; i++) {
		memset(out, 0, sizeof(out));
		long before = alloc_count;
		size_t held = model_bytes(rt_session_ctx(s)->model);
		if (gearrt_run(s, in, nin, out, nout) != GEARRT_OK)
			return error_prefix("run %d", i);
		if (alloc_count != before && planned_run(s))
			return error("run %d made %ld heap allocations (a run "
				     "after the first makes none)", i,
				     alloc_count - before);
		if (model_bytes(rt_session_ctx(s)->model) != held)
			return error("run %d allocated %zu bytes from the "
				     "model's arena (a model is read-only once "
				     "open)", i, model_bytes(rt_session_ctx(s)->model) - held);
	}
	return run_once(m, dir, s, in, nin, nout) < 0 ? error_prefix("run 4")
						       : 0;
}

static const char *keep_dir;

/* Where -r writes the .om of the test in dir: kept under keep_dir as
 * SUITE__TEST.om, else a temporary file. */
static char *om_path(const char *dir)
{
	static int seq;
	if (!keep_dir)
		return strf("/tmp/gearc-conformance.%ld.%d.om", (long)getpid(),
			    seq++);
	const char *test = strrchr(dir, '/');
	const char *suite = test;
	while (suite > dir && suite[-1] != '/')
		suite--;
	return strf("%s/%.*s__%s.om", keep_dir, (int)(test - suite), suite,
		    test + 1);
}

/* -r: the compiled model through libgearrt. */
static int check_runtime(Model *m, const char *dir)
{
	char *om = om_path(dir);
	gearrt_model *md = NULL;
	gearrt_session *s = NULL;
	int rc = om_write(m, om);
	if (!rc && gearrt_model_open(om, &md) != GEARRT_OK)
		rc = error_prefix("load");
	if (!rc && gearrt_session_create(md, NULL, &s) != GEARRT_OK)
		rc = -1;
	/* A plan that lets two live tensors share bytes shows up as wrong
	 * values: start from an arena of NaNs (0xff bytes), not zeros. */
	if (!rc)
		memset(rt_session_ctx(s)->arena, 0xff, (size_t)md->arena_bytes);
	if (!rc)
		rc = run_outputs(m, dir, s, gearrt_input_count(md),
				 gearrt_output_count(md));
	gearrt_session_destroy(s);
	gearrt_model_close(md);
	if (!keep_dir)
		unlink(om);
	free(om);
	return rc;
}

/* Compiles one test; 1 if not a plain test, 0 if it passes, -1 with an
 * error saying why it fails. */
static int run_test(const char *dir)
{
	char *path = strf("%s/model.onnx", dir);
	char *data = strf("%s/test_data_set_0", dir);
	Model *m = exists(path) && exists(data) ? onnx_load(path) : NULL;
	bool found = exists(path) && exists(data);
	free(path);
	free(data);
	if (!found)
		return 1;
	if (!m)
		return error_prefix("import");
	int rc = 0;
	if (!is_plain(m)) {
		model_free(m);
		return 1;
	}
	PassOptions o = { .fold_limit = 64 * 1024 };
	uint8_t *bytes = NULL;
	size_t len = 0;
	OmFile f;
	rc = bind_inputs(m, dir);
	if (!rc && all_const) {
		rc = check_values(m, dir);
		model_free(m);
		return rc;
	}
	if (!rc && (rc = run_passes(m, &o)) < 0)
		error_prefix("compile");
	if (!rc && runtime) {
		rc = check_runtime(m, dir);
		model_free(m);
		return rc;
	}
	if (!rc && (rc = om_encode(m, &bytes, &len)) < 0)
		error_prefix("write");
	if (!rc && (rc = om_parse(&f, bytes, len, "memory.om")) < 0)
		error_prefix("read");
	if (!rc) {
		json_object *j = om_json(&f, "memory.om");
		rc = check_outputs(m, dir, jkey(j, "outputs"));
		json_object_put(j);
		om_close(&f);
	}
	free(bytes);
	model_free(m);
	return rc;
}

/* Failures grouped by the op at fault: the op the message's innermost
 * "node '...' (Op)" names, else the test's name ("test_conv_...":
 * "conv"). */
typedef struct Group {
	char key[48];
	int count;
} Group;
static Group groups[256];
static int ngroups;

static void group_failure(const char *test, const char *msg)
{
	char key[48] = "";
	const char *n = NULL;
	for (const char *q = msg; (q = strstr(q, "node '")); q++)
		n = q;
	const char *p = n ? strstr(n, "' (") : NULL;
	if (p) {
		p += 3;
		size_t len = strcspn(p, ")");
		snprintf(key, sizeof(key), "%.*s", (int)(len < 40 ? len : 40), p);
	} else {
		const char *t = strncmp(test, "test_", 5) ? test : test + 5;
		size_t len = strcspn(t, "_");
		snprintf(key, sizeof(key), "%.*s", (int)(len < 40 ? len : 40), t);
	}
	for (int i = 0; i < ngroups; i++)
		if (!strcmp(groups[i].key, key)) {
			groups[i].count++;
			return;
		}
	if (ngroups < (int)ARRAY_SIZE(groups)) {
		memcpy(groups[ngroups].key, key, sizeof(key));
		groups[ngroups++].count = 1;
	}
}

static int by_count(const void *a, const void *b)
{
	const Group *x = a, *y = b;
	return x->count != y->count ? y->count - x->count
				    : strcmp(x->key, y->key);
}

static void print_groups(void)
{
	if (!ngroups)
		return;
	qsort(groups, (size_t)ngroups, sizeof(Group), by_count);
	printf("failures by op:");
	for (int i = 0; i < ngroups; i++)
		printf(" %s %d%s", groups[i].key, groups[i].count,
		       i + 1 < ngroups ? "," : "\n");
}

int main(int argc, char **argv)
{
	const char *root = NULL, *filter = NULL;
	bool verbose = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v"))
			verbose = true;
		else if (!strcmp(argv[i], "-n"))
			all_const = true;
		else if (!strcmp(argv[i], "-r"))
			runtime = true;
		else if (!strcmp(argv[i], "-k") && i + 1 < argc)
			filter = argv[++i];
		else if (!strcmp(argv[i], "-w") && i + 1 < argc)
			keep_dir = argv[++i];
		else
			root = argv[i];
	}
	if (!root) {
		fprintf(stderr, "usage: conformance [-v] [-n|-r [-w DIR]] "
				"[-k SUBSTRING] TESTDATA_DIR\n");
		return 2;
	}
	int pass = 0, total = 0;
	for (size_t s = 0; s < ARRAY_SIZE(suites); s++) {
		char *dir = strf("%s/%s", root, suites[s]);
		char **tests = list_dir(dir);
		for (char **t = tests; *t; t++) {
			char *test = strf("%s/%s", dir, *t);
			if (filter && !strstr(test, filter)) {
				free(test);
				free(*t);
				continue;
			}
			clear_error();
			int rc = run_test(test);
			free(test);
			if (rc == 0) {
				pass++;
				if (verbose)
					printf("ok   %s/%s\n", suites[s], *t);
			} else if (rc < 0) {
				printf("FAIL %s/%s: %s\n", suites[s], *t,
				       last_error());
				group_failure(*t, last_error());
			}
			total += rc <= 0;
			free(*t);
		}
		free(tests);
		free(dir);
	}
	print_groups();
	printf("conformance: %d/%d\n", pass, total);
	return 0;
}
