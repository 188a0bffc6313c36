/* runtime/model.c - opening and describing a .om (gearrt.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "compiler/cpu.h"
#include "dnnl.h"
#include "passes/hybrid.h"
#include "passes/partition.h"
#include "rt.h"
#include "serializer/verify.h"

const char *gearrt_last_error(void) { return last_error(); }

const char *gearrt_version(void) { return GEARC_VERSION; }

const char *gearrt_cpu_features(void)
{
	static _Thread_local char buf[256];
	return cpu_features(buf, sizeof(buf));
}

/* How libgomp waits, as it read the environment: oneDNN's threads'
 * policy where rt_pool_adopt_dnnl could not take oneDNN over. */
static const char *libgomp_policy(char *buf, size_t size)
{
	const char *spin = getenv("GOMP_SPINCOUNT");
	const char *policy = getenv("OMP_WAIT_POLICY");
	if (spin && *spin)
		snprintf(buf, size,
			 "spin %.40s times, then sleep (GOMP_SPINCOUNT)", spin);
	else if (policy && !strcasecmp(policy, "passive"))
		snprintf(buf, size, "sleep at once (OMP_WAIT_POLICY=passive)");
	else if (policy && !strcasecmp(policy, "active"))
		snprintf(buf, size,
			 "spin for minutes (OMP_WAIT_POLICY=active)");
	else
		snprintf(buf, size, "spin 300000 times, then sleep "
				    "(libgomp's default)");
	return buf;
}

const char *gearrt_wait_policy(void)
{
	static _Thread_local char buf[320];
	char gomp[128];
	if (rt_pool_adopt_dnnl())
		snprintf(buf, sizeof(buf), "%s, oneDNN's on it too",
			 rt_pool_policy());
	else
		snprintf(buf, sizeof(buf), "%s; oneDNN's threads, on libgomp, %s",
			 rt_pool_policy(), libgomp_policy(gomp, sizeof(gomp)));
	return buf;
}

int gearrt_wait_policy_exec(char **argv)
{
	/* libgomp runs nothing of ours where oneDNN is on gearrt's pool */
	if (rt_pool_adopt_dnnl() || getenv("GOMP_SPINCOUNT") ||
	    getenv("OMP_WAIT_POLICY"))
		return 0;
	/* the path, not /proc/self/exe itself: under valgrind that is
	 * valgrind, while readlink gives the program it runs */
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (!argv || !argv[0] || n <= 0 || (size_t)n >= sizeof(exe) - 1)
		return -1;
	exe[n] = '\0';
	if (setenv("GOMP_SPINCOUNT", GEARRT_SPINCOUNT, 0) < 0)
		return -1;
	execv(exe, argv);
	unsetenv("GOMP_SPINCOUNT"); /* it did not take: say so */
	return -1;
}

/* Nodes of the file marked reduced, in every graph. */
static size_t reduced_nodes(const Gearom__Model *m)
{
	size_t n = 0;
	for (size_t g = 0; g < m->n_graphs; g++)
		for (size_t i = 0; i < m->graphs[g]->n_nodes; i++)
			n += m->graphs[g]->nodes[i]->reduced;
	return n;
}

const char *gearrt_model_precision(const gearrt_model *md)
{
	static _Thread_local char buf[256];
	const Gearom__Precision *p = md ? md->f.model->precision : NULL;
	if (!p || !p->has_dtype || !p->dtype) {
		snprintf(buf, sizeof(buf), "%s%sfloat32",
			 p && p->mode ? p->mode : "", p ? ": " : "");
		return buf;
	}
	size_t n = reduced_nodes(md->f.model);
	const char *half = p->dtype == DT_FLOAT16
				   ? ", float16 asked: oneDNN 2.6 computes "
				     "none on CPUs"
				   : "";
	if (rt_bf16(md))
		snprintf(buf, sizeof(buf), "%s: bfloat16 on this CPU (%s%s%s) for "
			 "the %zu nodes marked, where a kernel gains by it",
			 p->mode, cpu_has(CPU_AVX512BF16) ? "avx512_bf16" : "",
			 cpu_has(CPU_AVX512BF16) && cpu_has(CPU_AMX_BF16) ? " "
									  : "",
			 cpu_has(CPU_AMX_BF16) ? "amx_bf16" : "", n);
	else
		snprintf(buf, sizeof(buf), "%s: float32 (this CPU has no "
			 "AVX512_BF16 or AMX-BF16)", p->mode);
	if (*half && strlen(buf) + strlen(half) + 1 < sizeof(buf))
		strcat(buf, half);
	return buf;
}

bool rt_bf16(const gearrt_model *md)
{
	const Gearom__Precision *p = md->f.model->precision;
	return p && p->has_dtype &&
	       (p->dtype == DT_BFLOAT16 || p->dtype == DT_FLOAT16) &&
	       (cpu_has(CPU_AVX512BF16) || cpu_has(CPU_AMX_BF16));
}

const char *gearrt_dtype_name(int32_t dtype)
{
	return dtype_valid(dtype) ? dtype_name(dtype) : NULL;
}

size_t gearrt_dtype_size(int32_t dtype)
{
	if (dtype == GEARRT_STRING)
		return sizeof(const char *);
	return dtype_valid(dtype) ? dtype_size(dtype) : 0;
}

int32_t rt_graph_input(const Graph *g, const char *name)
{
	for (int32_t k = 0; k < g->ninputs; k++)
		if (!strcmp(g->vals[g->inputs[k]].name, name))
			return k;
	return -1;
}

int32_t rt_graph_output(const Graph *g, const char *name)
{
	for (int32_t k = 0; k < g->noutputs; k++)
		if (!strcmp(g->vals[g->outputs[k]].name, name))
			return k;
	return -1;
}

static void io_info(gearrt_tensor *t, const Gearom__IoInfo *x)
{
	memset(t, 0, sizeof(*t));
	t->name = x->name;
	t->dtype = x->dtype;
	t->rank = x->rank < 0 ? -1 : (int32_t)x->n_shape;
	for (size_t k = 0; k < x->n_shape && k < GEARRT_MAX_RANK; k++)
		t->dims[k] = x->shape[k];
}

/* Whether input i's contents may key a specialisation: a few integers or
 * booleans of a fixed shape (a sample rate, a mode flag), the kind of
 * input an If or a shape computation reads. */
static bool value_key(const gearrt_tensor *t)
{
	enum { MAX_KEY_VALUES = 8 };
	int64_t n = 1;
	if (t->rank < 0 || !(DTS(t->dtype) & (DTS_INT | DTS(DT_BOOL))))
		return false;
	for (int32_t k = 0; k < t->rank; k++) {
		if (t->dims[k] < 0 || t->dims[k] > MAX_KEY_VALUES)
			return false;
		n *= t->dims[k];
	}
	return n <= MAX_KEY_VALUES;
}

/* Whether node n runs by evaluation: an unknown partition, or control
 * flow (If, Loop, Scan bodies; a gear Case and a known partition are
 * planned). */
static bool evaluated(const Node *n)
{
	return partition_is_unknown(n) ||
	       (node_has_subgraphs(n) && n->op != OP_Case &&
		!partition_is_node(n));
}

/* Whether g holds a node that runs by evaluation and reads, through its
 * inputs, a key input's contents (an unknown partition given sr, an If
 * on Equal(sr, 16000)): specialised to those contents, it folds away. */
static bool evaluates_a_key(const gearrt_model *md, const Graph *g)
{
	bool *keyed = xcalloc((size_t)g->nvals + 1, sizeof(bool)), hit = false;
	for (int32_t k = 0; k < g->ninputs; k++)
		for (size_t i = 0; i < md->nin; i++)
			if (md->value_key[i] &&
			    !strcmp(md->in_info[i].name,
				    g->vals[g->inputs[k]].name))
				keyed[g->inputs[k]] = true;
	for (int32_t i = 0; i < g->nnodes && !hit; i++) {
		const Node *n = &g->nodes[i];
		bool reads = false;
		for (int32_t k = 0; k < n->ninputs; k++)
			reads |= n->inputs[k] >= 0 && keyed[n->inputs[k]];
		hit = reads && evaluated(n);
		for (int32_t k = 0; reads && k < n->noutputs; k++)
			if (n->outputs[k] >= 0)
				keyed[n->outputs[k]] = true;
	}
	free(keyed);
	return hit;
}

/* Whether run_graph[g] runs specialised to the key inputs' contents. */
static bool takes_value_keys(const gearrt_model *md, size_t g)
{
	bool any = false;
	for (size_t i = 0; i < md->nin; i++)
		any |= md->value_key[i];
	return any && evaluates_a_key(md, md->run_graph[g]);
}

/* Which inputs key value specialisations, and which raised graphs take
 * them (a gear's branch: when rt_check_gear raises it). */
static void setup_value_keys(gearrt_model *md)
{
	size_t n = md->ngears ? md->ngears : 1;
	md->value_key = xcalloc(md->nin + 1, sizeof(bool));
	md->by_value = xcalloc(n, sizeof(bool));
	for (size_t i = 0; i < md->nin; i++)
		md->value_key[i] = value_key(&md->in_info[i]);
	for (size_t g = 0; g < n; g++)
		if (md->run_graph[g] == md->m->graph)
			md->by_value[g] = takes_value_keys(md, g);
}

/* The graphs a run can start at: each gear's branch, or the root
 * (verify_open checked their inputs and outputs against the model's);
 * the arena, the largest of their plans (the file's: a branch is raised
 * at its first run). */
static void setup_graphs(gearrt_model *md)
{
	Model *m = md->m;
	const Gearom__Model *x = md->f.model;
	md->ngears = m->gears ? (size_t)m->gears->ngears : 0;
	size_t n = md->ngears ? md->ngears : 1;
	md->run_graph = xmalloc(n * sizeof(Graph *));
	for (size_t g = 0; g < n; g++) {
		bool br = md->ngears && m->branches[g];
		const Gearom__MemoryPlan *p =
			x->graphs[br ? x->gears[g]->graph : x->root]->plan;
		md->run_graph[g] = br ? m->branches[g] : m->graph;
		if (p && p->arena_bytes > md->arena_bytes)
			md->arena_bytes = p->arena_bytes;
	}
	md->dynamic = md->ngears ? hybrid_graph(m->graph) : NULL;
	setup_value_keys(md);
}

/* The work on weights alone (passes/constwork.h) of the graphs a run
 * starts at that are raised at open (the root, for a file without gear
 * branches), done now in memory the model owns, shared by its sessions;
 * a gear's branch has its done by rt_check_gear when it is raised. */
static int constwork_raised(gearrt_model *md)
{
	for (size_t g = 0; g < (md->ngears ? md->ngears : 1); g++)
		if (md->run_graph[g] == md->m->graph)
			return constwork_eval(&md->cw, md->m->graph) < 0 ? -1 : 0;
	return 0;
}

/* The model in the file at path, or (data not NULL) in size bytes at
 * data, named path in messages. */
static gearrt_model *model_load(const char *path, const void *data,
				size_t size)
{
	gearrt_model *md = xmalloc(sizeof(*md));
	memset(md, 0, sizeof(*md));
	if ((data ? verify_open_memory(&md->f, data, size, path, &md->lazy,
				       &md->m)
		  : verify_open(&md->f, path, &md->lazy, &md->m)) < 0) {
		free(md);
		return NULL;
	}
	const Gearom__Model *x = md->f.model;
	md->path = xstrdup(path);
	pthread_mutex_init(&md->lock, NULL);
	md->nin = x->n_inputs;
	md->nout = x->n_outputs;
	md->in_info = xmalloc((md->nin + 1) * sizeof(gearrt_tensor));
	md->out_info = xmalloc((md->nout + 1) * sizeof(gearrt_tensor));
	for (size_t i = 0; i < md->nin; i++)
		io_info(&md->in_info[i], x->inputs[i]);
	for (size_t i = 0; i < md->nout; i++)
		io_info(&md->out_info[i], x->outputs[i]);
	setup_graphs(md);
	snprintf(md->model_version, sizeof(md->model_version), "%lld",
		 (long long)md->m->model_version);
	md->gear_checked = xcalloc(md->ngears + 1, sizeof(atomic_schar));
	md->gear_error = xcalloc(md->ngears + 1, sizeof(char *));
	constwork_begin(&md->cw, md->m, &md->m->arena);
	if (constwork_raised(md) < 0) {
		error_prefix("%s", path);
		gearrt_model_close(md);
		return NULL;
	}
	return md;
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

gearrt_status rt_check_gear(gearrt_model *md, size_t g, double *ms)
{
	if (g >= md->ngears || atomic_load(&md->gear_checked[g]) > 0)
		return GEARRT_OK;
	pthread_mutex_lock(&md->lock);
	if (!atomic_load(&md->gear_checked[g])) {
		double t0 = now_ms();
		bool ok = verify_gear(&md->f, md->lazy, md->m, g) == 0 &&
			  (md->run_graph[g] == md->m->graph ||
			   constwork_eval(&md->cw, md->run_graph[g]) >= 0);
		if (ok)
			md->by_value[g] = takes_value_keys(md, g);
		else
			md->gear_error[g] = xstrdup(last_error());
		atomic_store(&md->gear_checked[g], ok ? 1 : -1);
		*ms += now_ms() - t0;
	}
	pthread_mutex_unlock(&md->lock);
	if (atomic_load(&md->gear_checked[g]) > 0)
		return GEARRT_OK;
	error("%s: %s", md->path, md->gear_error[g]);
	return GEARRT_E_FILE;
}

gearrt_status gearrt_model_open(const char *path, gearrt_model **model)
{
	clear_error();
	if (!model || !path) {
		error("gearrt_model_open: path and model must not be NULL");
		return GEARRT_E_ARG;
	}
	double t0 = now_ms();
	*model = model_load(path, NULL, 0);
	if (*model)
		(*model)->open_ms = now_ms() - t0;
	return *model ? GEARRT_OK : GEARRT_E_FILE;
}

gearrt_status gearrt_model_open_memory(const void *data, size_t size,
				       gearrt_model **model)
{
	clear_error();
	if (!model || (!data && size)) {
		error("gearrt_model_open_memory: data and model must not be "
		      "NULL");
		return GEARRT_E_ARG;
	}
	double t0 = now_ms();
	*model = model_load("<memory>", data ? data : "", size);
	if (*model)
		(*model)->open_ms = now_ms() - t0;
	return *model ? GEARRT_OK : GEARRT_E_FILE;
}

typedef struct Derived {
	struct Derived *next;
	const void *src;
	uint64_t key;
	size_t bytes;
	void *data;
} Derived;

bool rt_model_graph(const gearrt_model *md, const Graph *g)
{
	for (size_t i = 0; md->run_graph && i < (md->ngears ? md->ngears : 1);
	     i++)
		if (md->run_graph[i] == g)
			return true;
	return false;
}

const void *rt_derived(RunCtx *s, const Prepared *p, const void *src,
		       uint64_t key, size_t bytes,
		       void (*make)(const void *ctx, void *dst),
		       const void *ctx, void **own)
{
	gearrt_model *md = s->model;
	*own = NULL;
	if (!rt_model_graph(md, p->g)) {
		if ((*own = big_alloc(bytes, NULL)))
			make(ctx, *own);
		return *own;
	}
	pthread_mutex_lock(&md->lock);
	Derived *d = md->derived;
	while (d && (d->src != src || d->key != key || d->bytes != bytes))
		d = d->next;
	void *data = d ? d->data : big_alloc(bytes, NULL);
	if (!d && data) {
		make(ctx, data);
		d = xmalloc(sizeof(*d));
		*d = (Derived){ .next = md->derived, .src = src, .key = key,
				.bytes = bytes, .data = data };
		md->derived = d;
	}
	pthread_mutex_unlock(&md->lock);
	return data;
}

static void derived_free(gearrt_model *md)
{
	for (Derived *d = md->derived, *next; d; d = next) {
		next = d->next;
		free(d->data);
		free(d);
	}
	md->derived = NULL;
}

void gearrt_model_close(gearrt_model *md)
{
	if (!md)
		return;
	dnnl_model_free(md);
	derived_free(md);
	if (md->m)
		model_free(md->m);
	if (md->cw.m)
		constwork_end(&md->cw);
	om_raise_free(md->lazy);
	om_close(&md->f);
	for (size_t g = 0; md->gear_error && g < md->ngears; g++)
		free(md->gear_error[g]);
	free(md->gear_error);
	free((void *)md->gear_checked);
	if (md->path)
		pthread_mutex_destroy(&md->lock);
	free(md->path);
	free(md->in_info);
	free(md->out_info);
	free(md->run_graph);
	free(md->value_key);
	free(md->by_value);
	free(md);
}

size_t gearrt_input_count(const gearrt_model *md) { return md ? md->nin : 0; }

size_t gearrt_output_count(const gearrt_model *md)
{
	return md ? md->nout : 0;
}

static gearrt_status bad_index(const char *what, size_t i, size_t n)
{
	error("%s %zu is out of range (the model has %zu)", what, i, n);
	return GEARRT_E_ARG;
}

gearrt_status gearrt_input_info(const gearrt_model *md, size_t i,
				gearrt_tensor *info)
{
	if (!md || !info)
		return bad_index("input", i, 0);
	if (i >= md->nin)
		return bad_index("input", i, md->nin);
	*info = md->in_info[i];
	return GEARRT_OK;
}

gearrt_status gearrt_output_info(const gearrt_model *md, size_t i,
				 gearrt_tensor *info)
{
	if (!md || !info)
		return bad_index("output", i, 0);
	if (i >= md->nout)
		return bad_index("output", i, md->nout);
	*info = md->out_info[i];
	return GEARRT_OK;
}

int gearrt_has_dynamic(const gearrt_model *md)
{
	return md && md->dynamic ? 1 : 0;
}

size_t gearrt_gear_count(const gearrt_model *md)
{
	return md ? md->ngears : 0;
}

gearrt_status gearrt_gear_dims(const gearrt_model *md, size_t g,
			       const int64_t **dims, size_t *count)
{
	if (!md || !dims || !count)
		return bad_index("gear", g, 0);
	if (g >= md->ngears)
		return bad_index("gear", g, md->ngears);
	const Gearom__Gear *x = md->f.model->gears[g];
	*dims = x->dims;
	*count = x->n_dims;
	return GEARRT_OK;
}

gearrt_status gearrt_gear_output(const gearrt_model *md, size_t g, size_t i,
				 gearrt_tensor *info)
{
	if (!md || !info)
		return bad_index("gear", g, 0);
	if (g >= md->ngears)
		return bad_index("gear", g, md->ngears);
	if (i >= md->nout)
		return bad_index("output", i, md->nout);
	const Gearom__Gear *x = md->f.model->gears[g];
	if (i >= x->n_outputs) {
		error("gear %zu: the file has no output table entry %zu", g, i);
		return GEARRT_E_FILE;
	}
	const Gearom__ShapeInfo *si = x->outputs[i];
	memset(info, 0, sizeof(*info));
	info->name = md->out_info[i].name;
	info->dtype = md->out_info[i].dtype;
	info->rank = si->rank < 0 ? -1 : (int32_t)si->n_dims;
	for (size_t k = 0; k < si->n_dims && k < GEARRT_MAX_RANK; k++)
		info->dims[k] = si->dims[k];
	return GEARRT_OK;
}

const char *gearrt_input_dim_name(const gearrt_model *md, size_t i,
				  int32_t axis)
{
	/* Only a hybrid file's dynamic graph keeps the source's names: the
	 * gear branches and the root are written with the gears' numbers. */
	if (!md || !md->dynamic || i >= md->nin || axis < 0 ||
	    axis >= md->in_info[i].rank || md->in_info[i].dims[axis] >= 0)
		return NULL;
	const Graph *g = md->dynamic;
	int32_t k = rt_graph_input(g, md->in_info[i].name);
	if (k < 0)
		return NULL;
	const Value *v = &g->vals[g->inputs[k]];
	if (!v->dim_params || axis >= v->shape.rank)
		return NULL;
	return v->dim_params[axis];
}

const char *gearrt_model_meta(const gearrt_model *md, const char *key)
{
	if (!md || !key)
		return NULL;
	const Model *m = md->m;
	const struct {
		const char *key, *val;
	} meta[] = {
		{ "producer_name", m->producer_name },
		{ "producer_version", m->producer_version },
		{ "domain", m->domain },
		{ "model_version", md->model_version },
		/* the root is "root" in a file that keeps the source's graph
		 * name apart; before that the root bore it */
		{ "graph_name", m->graph_name ? m->graph_name
			      : m->graph    ? m->graph->name
					    : NULL },
		{ "source_file", m->path },
	};
	for (size_t k = 0; k < sizeof(meta) / sizeof(meta[0]); k++)
		if (!strcmp(key, meta[k].key))
			return meta[k].val ? meta[k].val : "";
	return NULL;
}
