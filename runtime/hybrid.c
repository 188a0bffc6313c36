/*
 * runtime/hybrid.c - graphs specialised at run time, and the per-session
 * cache of those specialisations (as ggml rebuilds its graph for a new
 * shape and reuses it while the shape stays).  Two kinds of run take
 * them:
 *   - a hybrid file's dynamic graph at dims that match no gear (GE's
 *     dynamic-shape fallback: a shape outside the gears runs, slower,
 *     instead of failing);
 *   - a gear (or static) graph holding a node that would run by
 *     evaluation (an unknown partition, an If) reading inputs whose
 *     contents key specialisations (model.c value_key: a few integers,
 *     such as a VAD's sample rate that an If reads): specialised to those
 *     contents, the If keeps one branch and the whole gear is planned.
 *
 * A specialisation (an Entry) is the graph cloned into the entry's own
 * IR arena with its partitions inlined, its inputs given the run's shapes
 * and the key inputs' contents, inferred with folding, constant Ifs
 * inlined, dead nodes dropped and planned as a compile does
 * (passes/runspec.h runspec_graph), and prepared like a gear
 * (rt_prepare_in): in the session's arena when its plan fits there, else
 * in an arena of its own.  What stays
 * data-dependent is left out of the plan and evaluated at run time by
 * exec.c.
 *
 * The cache is an array of entries searched linearly (it is small) by
 * graph, the inputs' dims and the key inputs' bytes; the least recently
 * used entry makes room.  Nothing here allocates on a hit.  A session
 * whose key contents change more often than the cache can hold (most
 * value specialisations built and few reused) stops specialising gears
 * and runs them as compiled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt.h"

typedef struct Entry {
	bool used;
	uint64_t tick;	   /* last use, for LRU */
	int32_t graph;	   /* index into run_graph, or -1: the dynamic one */
	int64_t *dims;	   /* every input's dims, inputs in model order */
	size_t ndims;
	uint8_t *vals;	   /* the key inputs' bytes, in model order */
	size_t nvals;
	Arena ir;	   /* the specialised graph */
	uint8_t *mem;	   /* its own feature-map arena, or NULL */
	Prepared *p;
} Entry;

struct ShapeCache {
	int size;	/* entries kept; 0: none */
	uint64_t tick;
	Entry *e;	/* size of them */
	Entry tmp;	/* the uncached run's */
	uint64_t vbuilt, vreused; /* value specialisations of gears */
	bool voff;	/* gears run as compiled from now on */
};

struct ShapeCache *rt_cache_new(int size)
{
	struct ShapeCache *c = xcalloc(1, sizeof(*c));
	c->size = size > 0 ? size : 0;
	c->e = xcalloc((size_t)c->size + 1, sizeof(Entry));
	return c;
}

static void entry_free(Entry *e)
{
	if (!e->used)
		return;
	rt_prepared_free(e->p);
	arena_release(&e->ir);
	free(e->mem);
	free(e->dims);
	free(e->vals);
	memset(e, 0, sizeof(*e));
}

void rt_cache_free(struct ShapeCache *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->size; i++)
		entry_free(&c->e[i]);
	entry_free(&c->tmp);
	free(c->e);
	free(c);
}

int32_t rt_cache_count(const struct ShapeCache *c)
{
	int32_t n = 0;
	for (int i = 0; c && i < c->size; i++)
		n += c->e[i].used;
	return n;
}

/* Bytes of input t (checked against the model: its shape's). */
static size_t input_bytes(const gearrt_tensor *t)
{
	size_t n = gearrt_dtype_size(t->dtype);
	for (int32_t k = 0; k < t->rank; k++)
		n *= (size_t)t->dims[k];
	return n;
}

static bool entry_fits(const Entry *e, const gearrt_model *md, int32_t graph,
		       const gearrt_tensor *in)
{
	size_t at = 0, vat = 0;
	if (!e->used || e->graph != graph)
		return false;
	for (size_t i = 0; i < md->nin; i++) {
		for (int32_t k = 0; k < in[i].rank; k++)
			if (at >= e->ndims || e->dims[at++] != in[i].dims[k])
				return false;
		if (!md->value_key[i])
			continue;
		size_t n = input_bytes(&in[i]);
		if (vat + n > e->nvals || memcmp(e->vals + vat, in[i].data, n))
			return false;
		vat += n;
	}
	return at == e->ndims && vat == e->nvals;
}

/* The slot a new specialisation goes to: a free one, else the least
 * recently used (evicted), else (no cache) the temporary one. */
static Entry *slot(RunCtx *s)
{
	struct ShapeCache *c = s->cache;
	if (!c->size) {
		entry_free(&c->tmp); /* the last run's outputs go now */
		return &c->tmp;
	}
	Entry *best = &c->e[0];
	for (int i = 0; i < c->size; i++) {
		if (!c->e[i].used)
			return &c->e[i];
		if (c->e[i].tick < best->tick)
			best = &c->e[i];
	}
	entry_free(best);
	s->st.evictions++;
	return best;
}

/* "1,3,48,100" of the inputs' dims, for messages. */
static const char *dims_text(const gearrt_model *md, const gearrt_tensor *in,
			     char *buf, size_t n)
{
	size_t at = 0;
	buf[0] = 0;
	for (size_t i = 0; i < md->nin && at + 24 < n; i++)
		for (int32_t k = 0; k < in[i].rank && at + 24 < n; k++)
			at += (size_t)snprintf(buf + at, n - at, "%s%lld",
					       at ? "," : "",
					       (long long)in[i].dims[k]);
	return buf;
}

/* The key: graph, every input's dims, the key inputs' bytes. */
static void entry_key(Entry *e, const gearrt_model *md, int32_t graph,
		      const gearrt_tensor *in)
{
	e->graph = graph;
	for (size_t i = 0; i < md->nin; i++) {
		e->ndims += (size_t)in[i].rank;
		e->nvals += md->value_key[i] ? input_bytes(&in[i]) : 0;
	}
	e->dims = xmalloc((e->ndims + 1) * sizeof(int64_t));
	e->vals = xmalloc(e->nvals + 1);
	size_t at = 0, vat = 0;
	for (size_t i = 0; i < md->nin; i++) {
		for (int32_t k = 0; k < in[i].rank; k++)
			e->dims[at++] = in[i].dims[k];
		if (!md->value_key[i])
			continue;
		size_t n = input_bytes(&in[i]);
		memcpy(e->vals + vat, in[i].data, n);
		vat += n;
	}
}

/* Graph src's input k as the run gives it: *sh its shape; its contents
 * in e's arena if a key input's, else NULL. */
static int bind_input(const gearrt_model *md, const Graph *src, int32_t k,
		      const gearrt_tensor *in, Entry *e, Shape *sh,
		      const Tensor **val)
{
	const char *name = src->vals[src->inputs[k]].name;
	for (size_t i = 0; i < md->nin; i++) {
		if (strcmp(md->in_info[i].name, name))
			continue;
		sh->rank = in[i].rank;
		memcpy(sh->dims, in[i].dims,
		       (size_t)in[i].rank * sizeof(int64_t));
		*val = md->value_key[i] ? tensor_new(&e->ir, name,
						     in[i].dtype, sh,
						     in[i].data)
					: NULL;
		return 0;
	}
	return error("the graph's input '%s' is not the model's", name);
}

/* The graph specialised to the inputs' dims and key contents, planned,
 * prepared. */
static int build(RunCtx *s, int32_t graph, const gearrt_tensor *in,
		 Entry *e)
{
	const gearrt_model *md = s->model;
	const Graph *src = graph < 0 ? md->dynamic : md->run_graph[graph];
	e->used = true;
	arena_init(&e->ir);
	entry_key(e, md, graph, in);
	size_t n = (size_t)src->ninputs + 1;
	Shape *sh = arena_array(&e->ir, n, sizeof(Shape));
	const Shape **shp = arena_array(&e->ir, n, sizeof(Shape *));
	const Tensor **val = arena_array(&e->ir, n, sizeof(Tensor *));
	for (int32_t k = 0; k < src->ninputs; k++) {
		if (bind_input(md, src, k, in, e, &sh[k], &val[k]) < 0)
			return -1;
		shp[k] = &sh[k];
	}
	Graph *g = runspec_graph(md->m, src, &e->ir, shp, val);
	if (!g)
		return -1;
	uint8_t *mem = s->arena;
	uint64_t bytes = md->arena_bytes;
	if (g->plan && g->plan->arena_bytes > bytes) {
		bytes = g->plan->arena_bytes;
		e->mem = big_alloc((size_t)bytes, NULL);
		if (!e->mem)
			return error("cannot allocate the %llu-byte arena",
				     (unsigned long long)bytes);
		mem = e->mem;
	}
	e->p = rt_prepare_in(s, g, mem, bytes);
	return e->p ? 0 : -1;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* The cached specialisation for these dims, or a new one (*built). */
static Entry *specialisation(RunCtx *s, int32_t graph,
			     const gearrt_tensor *in, bool *built)
{
	struct ShapeCache *c = s->cache;
	*built = false;
	for (int i = 0; i < c->size; i++)
		if (entry_fits(&c->e[i], s->model, graph, in))
			return &c->e[i];
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	Entry *e = slot(s);
	if (build(s, graph, in, e) < 0) {
		entry_free(e);
		return NULL;
	}
	s->st.last_rebuild_ms = ms_since(&t0);
	s->st.rebuilds++;
	*built = true;
	return e;
}

/* Runs e on the caller's tensors: a status as rt_exec's. */
static gearrt_status run_entry(RunCtx *s, Entry *e,
			       const gearrt_tensor *inputs,
			       gearrt_tensor *outputs, size_t nout, bool built)
{
	e->tick = ++s->cache->tick;
	gearrt_status st = rt_run_prepared(s, e->p, inputs, outputs, nout);
	if (st)
		return st;
	s->st.cache_hits += !built;
	s->st.last_rebuilt = built;
	return GEARRT_OK;
}

gearrt_status rt_run_dynamic(RunCtx *s, const gearrt_tensor *inputs,
			     gearrt_tensor *outputs, size_t nout)
{
	const gearrt_model *md = s->model;
	char d[256];
	bool built;
	Entry *e = specialisation(s, -1, inputs, &built);
	gearrt_status st = e ? run_entry(s, e, inputs, outputs, nout, built)
			     : GEARRT_E_RUN;
	if (st) {
		error_prefix("dynamic graph (dims %s)",
			     dims_text(md, inputs, d, sizeof(d)));
		return st;
	}
	s->st.dynamic_runs++;
	s->st.last_path = GEARRT_PATH_DYNAMIC;
	return GEARRT_OK;
}

/* A session whose key contents keep changing builds more than it
 * reuses: past twice the cache's size in builds, with fewer reuses
 * than builds, gears go back to running as compiled. */
static void watch_thrash(struct ShapeCache *c, bool built)
{
	c->vbuilt += built;
	c->vreused += !built;
	if (c->vbuilt > 2 * (uint64_t)c->size && c->vreused < c->vbuilt)
		c->voff = true;
}

gearrt_status rt_run_by_value(RunCtx *s, size_t graph,
			      const gearrt_tensor *inputs,
			      gearrt_tensor *outputs, size_t nout, bool *ran)
{
	struct ShapeCache *c = s->cache;
	bool built;
	*ran = false;
	if (!s->model->by_value[graph] || !c->size || c->voff)
		return GEARRT_OK;
	Entry *e = specialisation(s, (int32_t)graph, inputs, &built);
	if (!e) { /* cannot specialise (an input the graph rejects): this
		   * run as compiled, which reports what is wrong */
		watch_thrash(c, true);
		clear_error();
		return GEARRT_OK;
	}
	watch_thrash(c, built);
	*ran = true;
	return run_entry(s, e, inputs, outputs, nout, built);
}
