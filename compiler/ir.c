/* compiler/ir.c - building, ordering and checking the graph IR. */
#include "ir.h"
#include "cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

/* ---- dtypes ------------------------------------------------------------ */

static const struct {
	const char *name;
	size_t size;
} dtypes[DT_COUNT] = {
	[DT_UNDEFINED] = { "undefined", 0 }, [DT_FLOAT] = { "float32", 4 },
	[DT_UINT8] = { "uint8", 1 },	     [DT_INT8] = { "int8", 1 },
	[DT_UINT16] = { "uint16", 2 },	     [DT_INT16] = { "int16", 2 },
	[DT_INT32] = { "int32", 4 },	     [DT_INT64] = { "int64", 8 },
	[DT_STRING] = { "string", 0 },	     [DT_BOOL] = { "bool", 1 },
	[DT_FLOAT16] = { "float16", 2 },     [DT_DOUBLE] = { "float64", 8 },
	[DT_UINT32] = { "uint32", 4 },	     [DT_UINT64] = { "uint64", 8 },
	[DT_COMPLEX64] = { "complex64", 8 }, [DT_COMPLEX128] = { "complex128", 16 },
	[DT_BFLOAT16] = { "bfloat16", 2 },
};

const char *dtype_name(int dt)
{
	return dt >= 0 && dt < DT_COUNT ? dtypes[dt].name : NULL;
}

size_t dtype_size(int dt)
{
	return dt >= 0 && dt < DT_COUNT ? dtypes[dt].size : 0;
}

bool dtype_valid(int dt) { return dt > DT_UNDEFINED && dt < DT_COUNT; }

const char *gear_mode_name(int mode)
{
	static const char *names[] = { "static", "batch", "image_size", "dims" };
	return mode >= 0 && mode < (int)ARRAY_SIZE(names) ? names[mode] : "?";
}

/* ---- shapes ------------------------------------------------------------ */

Shape shape_unknown(void)
{
	Shape s = { .rank = -1 };
	return s;
}

Shape shape_of(int32_t rank, const int64_t *dims)
{
	Shape s = { .rank = rank };
	ASSERT(rank >= -1 && rank <= MAX_RANK);
	for (int32_t i = 0; i < rank; i++)
		s.dims[i] = dims[i];
	return s;
}

bool shape_is_static(const Shape *s)
{
	if (s->rank < 0)
		return false;
	for (int32_t i = 0; i < s->rank; i++)
		if (s->dims[i] < 0)
			return false;
	return true;
}

bool shape_equal(const Shape *a, const Shape *b)
{
	if (a->rank != b->rank)
		return false;
	for (int32_t i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

int64_t shape_numel(const Shape *s)
{
	int64_t n = 1;
	if (!shape_is_static(s))
		return -1;
	for (int32_t i = 0; i < s->rank; i++)
		if (!mul_nonneg_i64(n, s->dims[i], &n))
			return -1;
	return n;
}

int64_t shape_bytes(const Shape *s, int dt)
{
	int64_t n = shape_numel(s), b;
	size_t es = dt == DT_STRING ? sizeof(Bytes) : dtype_size(dt);
	if (n < 0 || !es || !mul_nonneg_i64(n, (int64_t)es, &b))
		return -1;
	return b;
}

const char *shape_str(const Shape *s, char *buf, size_t n)
{
	size_t k = 0;
	if (s->rank < 0) {
		snprintf(buf, n, "[?]");
		return buf;
	}
	k += (size_t)snprintf(buf, n, "[");
	for (int32_t i = 0; i < s->rank && k < n; i++)
		k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "," : "",
				      (long long)s->dims[i]);
	if (k < n)
		snprintf(buf + k, n - k, "]");
	return buf;
}

/* ---- tensors ----------------------------------------------------------- */

Tensor *tensor_new(Arena *a, const char *name, int dt, const Shape *s,
		   const void *data)
{
	int64_t nb = shape_bytes(s, dt);
	if (nb < 0)
		return error("tensor '%s': shape is not static or its size "
			     "overflows", name ? name : "(unnamed)"),
		       NULL;
	Tensor *t = arena_alloc(a, sizeof(*t));
	t->name = name ? arena_strdup(a, name) : NULL;
	t->dtype = dt;
	t->shape = *s;
	t->nbytes = (size_t)nb;
	void *p = arena_alloc(a, t->nbytes);
	if (data && t->nbytes)
		memcpy(p, data, t->nbytes);
	t->data = p;
	return t;
}

int64_t tensor_get_i64(const Tensor *t, int64_t i)
{
	const unsigned char *p = t->data;
	switch (t->dtype) {
	case DT_BOOL:
	case DT_UINT8: return p[i];
	case DT_INT8: return ((const int8_t *)p)[i];
	case DT_UINT16: return ((const uint16_t *)p)[i];
	case DT_INT16: return ((const int16_t *)p)[i];
	case DT_INT32: return ((const int32_t *)p)[i];
	case DT_INT64: return ((const int64_t *)p)[i];
	case DT_UINT32: return ((const uint32_t *)p)[i];
	case DT_UINT64: return (int64_t)((const uint64_t *)p)[i];
	case DT_FLOAT: return (int64_t)((const float *)p)[i];
	case DT_DOUBLE: return (int64_t)((const double *)p)[i];
	default: BUG("tensor_get_i64 on %s", dtype_name(t->dtype));
	}
}

/* d rounded to nearest even in a binary format with ebits of exponent and
 * mbits of stored mantissa (float16: 5, 10; bfloat16: 8, 7). */
uint16_t minifloat_from(double d, int ebits, int mbits)
{
	int bias = (1 << (ebits - 1)) - 1, e;
	uint32_t sign = signbit(d) ? 1u << (ebits + mbits) : 0;
	uint32_t inf = ((1u << ebits) - 1) << mbits;
	if (isnan(d))
		return (uint16_t)(sign | inf | (1u << (mbits - 1)));
	d = fabs(d);
	if (isinf(d))
		return (uint16_t)(sign | inf);
	if (d == 0)
		return (uint16_t)sign;
	frexp(d, &e);
	e = e - 1 < 1 - bias ? 1 - bias : e - 1; /* subnormals: lowest binade */
	double n = rint(ldexp(d, mbits - e));    /* in units of the last place */
	if (n >= ldexp(1, mbits + 1)) {          /* rounding carried */
		n /= 2;
		e++;
	}
	if (e > bias)
		return (uint16_t)(sign | inf);
	uint32_t q = (uint32_t)n;
	if (q < (1u << mbits)) /* subnormal */
		return (uint16_t)(sign | q);
	return (uint16_t)(sign | ((uint32_t)(e + bias) << mbits) |
			  (q - (1u << mbits)));
}

double minifloat_to(uint16_t h, int ebits, int mbits)
{
	int bias = (1 << (ebits - 1)) - 1;
	int e = (h >> mbits) & ((1 << ebits) - 1);
	uint32_t m = h & ((1u << mbits) - 1);
	double v = e == 0 ? ldexp(m, 1 - bias - mbits)
		   : e == (1 << ebits) - 1
			   ? (m ? NAN : INFINITY)
			   : ldexp(m + (1u << mbits), e - bias - mbits);
	return (h >> (ebits + mbits)) & 1 ? -v : v;
}

static void half_to_float_c(const uint16_t *h, float *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		f[i] = (float)minifloat_to(h[i], 5, 10);
}

static void float_to_half_c(const float *f, uint16_t *h, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h[i] = minifloat_from((double)f[i], 5, 10);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_F16C_PATH 1
__attribute__((target("avx,f16c"))) static void
half_to_float_f16c(const uint16_t *h, float *f, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(f + i, _mm256_cvtph_ps(_mm_loadu_si128(
						(const __m128i *)(h + i))));
	half_to_float_c(h + i, f + i, n - i);
}

__attribute__((target("avx,f16c"))) static void
float_to_half_f16c(const float *f, uint16_t *h, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm_storeu_si128((__m128i *)(h + i),
				 _mm256_cvtps_ph(_mm256_loadu_ps(f + i),
						 _MM_FROUND_TO_NEAREST_INT));
	float_to_half_c(f + i, h + i, n - i);
}

/* F16C within the ISA cap (compiler/cpu.h: the avx2 level). */
static bool has_f16c(void)
{
	return cpu_has(CPU_F16C) && cpu_has(CPU_AVX);
}
#endif

void half_to_float_n(const uint16_t *h, float *f, size_t n)
{
	if (!n)
		return; /* h may be NULL: no bytes */
#ifdef HAVE_F16C_PATH
	if (has_f16c()) {
		half_to_float_f16c(h, f, n);
		return;
	}
#endif
	half_to_float_c(h, f, n);
}

void float_to_half_n(const float *f, uint16_t *h, size_t n)
{
	if (!n)
		return;
#ifdef HAVE_F16C_PATH
	if (has_f16c()) {
		float_to_half_f16c(f, h, n);
		return;
	}
#endif
	float_to_half_c(f, h, n);
}

double tensor_get_f64(const Tensor *t, int64_t i)
{
	switch (t->dtype) {
	case DT_FLOAT: return ((const float *)t->data)[i];
	case DT_DOUBLE: return ((const double *)t->data)[i];
	case DT_FLOAT16: return minifloat_to(((const uint16_t *)t->data)[i], 5, 10);
	case DT_BFLOAT16: return minifloat_to(((const uint16_t *)t->data)[i], 8, 7);
	case DT_UINT64: return (double)((const uint64_t *)t->data)[i];
	default: return (double)tensor_get_i64(t, i);
	}
}

/* ---- building ---------------------------------------------------------- */

Model *model_new(void)
{
	Model *m = xcalloc(1, sizeof(*m));
	arena_init(&m->arena);
	m->producer_name = m->producer_version = m->domain = "";
	m->path = "";
	m->gear_info = -1;
	return m;
}

void model_free(Model *m)
{
	if (!m)
		return;
	for (int32_t i = 0; i < m->nmaps; i++)
		filemap_release(&m->maps[i]);
	for (int32_t i = 0; m->arenas && m->gears && i < m->gears->ngears; i++)
		if (m->arenas[i]) {
			arena_release(m->arenas[i]);
			free(m->arenas[i]);
		}
	if (m->dynamic_arena) {
		arena_release(m->dynamic_arena);
		free(m->dynamic_arena);
	}
	model_warnings_free(m);
	if (m->half_values) /* in the arena, its table on the heap */
		namemap_release(m->half_values);
	arena_release(&m->arena);
	free(m);
}

int64_t model_opset(const Model *m)
{
	for (int32_t i = 0; i < m->nopsets; i++) {
		if (domain_is_default(m->opsets[i].domain))
			return m->opsets[i].version;
	}
	return 0;
}

void model_add_option(Model *m, const char *key, const char *val)
{
	int32_t i = ARENA_PUSH(&m->arena, m->options, m->noptions,
			       m->capoptions);
	m->options[i].key = arena_strdup(&m->arena, key);
	m->options[i].val = arena_strdup(&m->arena, val);
}

Graph *graph_new(Arena *a, const char *name, Graph *parent)
{
	Graph *g = arena_alloc(a, sizeof(*g));
	g->name = arena_strdup(a, name ? name : "");
	g->parent = parent;
	g->arena = a;
	return g;
}

ValId graph_add_value(Graph *g, const char *name, ValKind kind)
{
	ValId id = ARENA_PUSH(g->arena, g->vals, g->nvals, g->capvals);
	Value *v = &g->vals[id];
	/* a slot graph_dce (or a pass taking values back) left behind
	 * still holds that value's konst, dtype and flags */
	*v = (Value){ 0 };
	v->name = arena_strdup(g->arena, name ? name : "");
	v->kind = (uint8_t)kind;
	v->shape = shape_unknown();
	v->producer = -1;
	v->outer = -1;
	return id;
}

ValId graph_add_weight(Graph *g, const char *name, const Tensor *t)
{
	ValId id = graph_add_value(g, name, VAL_WEIGHT);
	Value *v = &g->vals[id];
	v->dtype = t->dtype;
	v->shape = t->shape;
	v->konst = t;
	return id;
}

void value_copy_type(Value *dst, const Value *src)
{
	dst->dtype = src->dtype;
	dst->tkind = src->tkind;
	dst->shape = src->shape;
	dst->dim_params = src->dim_params;
}

const char *graph_fresh_name(Graph *g, const char *base)
{
	const char *name = base;
	for (int n = 2;; n++) {
		bool used = false;
		for (ValId i = 0; i < g->nvals && !used; i++)
			used = !strcmp(g->vals[i].name, name);
		if (!used)
			return name;
		name = arena_printf(g->arena, "%s_%d", base, n);
	}
}

Node *graph_add_node(Graph *g, const char *name, const char *op_type,
		     const char *domain, int32_t nin, int32_t nout)
{
	int32_t i = ARENA_PUSH(g->arena, g->nodes, g->nnodes, g->capnodes);
	node_init(g, &g->nodes[i], name, op_type, domain, nin, nout);
	return &g->nodes[i];
}

void node_init(Graph *g, Node *n, const char *name, const char *op_type,
	       const char *domain, int32_t nin, int32_t nout)
{
	*n = (Node){ 0 };
	n->name = arena_strdup(g->arena, name ? name : "");
	n->op_type = arena_strdup(g->arena, op_type);
	n->domain = arena_strdup(g->arena, domain ? domain : "");
	n->op = (uint16_t)op_lookup(n->domain, n->op_type);
	n->ninputs = nin;
	n->noutputs = nout;
	n->inputs = arena_array(g->arena, (size_t)nin, sizeof(ValId));
	n->outputs = arena_array(g->arena, (size_t)nout, sizeof(ValId));
	for (int32_t k = 0; k < nin; k++)
		n->inputs[k] = -1;
	for (int32_t k = 0; k < nout; k++)
		n->outputs[k] = -1;
}

Attr *node_add_attr(Graph *g, Node *n, const char *name, AttrType type)
{
	/* Attribute lists are short and built once: grow by one. */
	n->attrs = arena_grow(g->arena, n->attrs, (size_t)n->nattrs,
			      (size_t)n->nattrs + 1, sizeof(Attr));
	Attr *a = &n->attrs[n->nattrs++];
	a->name = arena_strdup(g->arena, name);
	a->type = type;
	return a;
}

void node_add_ints(Graph *g, Node *n, const char *name, const int64_t *v,
		   int32_t count)
{
	Attr *a = node_add_attr(g, n, name, ATTR_INTS);
	a->n = count;
	a->ints = arena_memdup(g->arena, v, (size_t)count * sizeof(int64_t));
}

void node_add_string(Graph *g, Node *n, const char *name, const char *s)
{
	Attr *a = node_add_attr(g, n, name, ATTR_STRING);
	a->s.len = strlen(s);
	a->s.data = (const uint8_t *)arena_strdup(g->arena, s);
}

/* ---- reading ----------------------------------------------------------- */

const Attr *node_attr(const Node *n, const char *name)
{
	for (int32_t i = 0; i < n->nattrs; i++)
		if (!strcmp(n->attrs[i].name, name))
			return &n->attrs[i];
	return NULL;
}

int64_t attr_int(const Node *n, const char *name, int64_t dflt)
{
	const Attr *a = node_attr(n, name);
	return a && a->type == ATTR_INT ? a->i : dflt;
}

float attr_float(const Node *n, const char *name, float dflt)
{
	const Attr *a = node_attr(n, name);
	return a && a->type == ATTR_FLOAT ? a->f : dflt;
}

const char *attr_str(const Node *n, const char *name, const char *dflt)
{
	const Attr *a = node_attr(n, name);
	/* Strings are stored NUL-terminated (see the importer). */
	return a && a->type == ATTR_STRING ? (const char *)a->s.data : dflt;
}

int32_t attr_ints(const Node *n, const char *name, const int64_t **v)
{
	const Attr *a = node_attr(n, name);
	if (!a || a->type != ATTR_INTS)
		return -1;
	*v = a->ints;
	return a->n;
}

/* ---- walking ----------------------------------------------------------- */

int graph_walk(Graph *g, GraphVisitor fn, void *ctx)
{
	if (fn(g, ctx) < 0)
		return -1;
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		for (int32_t k = 0; k < n->nattrs; k++) {
			Attr *a = &n->attrs[k];
			if (a->type == ATTR_GRAPH && a->g &&
			    graph_walk(a->g, fn, ctx) < 0)
				return -1;
			if (a->type == ATTR_GRAPHS)
				for (int32_t j = 0; j < a->n; j++)
					if (graph_walk(a->graphs[j], fn, ctx) < 0)
						return -1;
		}
	}
	return 0;
}

/* ---- topological order ------------------------------------------------- */

/* Calls fn for every value of g that node n depends on: its inputs, and
 * the values of g its subgraphs reach through outer references. */
typedef void (*DepFn)(ValId v, void *ctx);

static void subgraph_deps(const Graph *sub, DepFn fn, void *ctx)
{
	for (int32_t i = 0; i < sub->nvals; i++)
		if (sub->vals[i].kind == VAL_OUTER && sub->vals[i].outer >= 0)
			fn(sub->vals[i].outer, ctx);
}

static void node_deps(const Node *n, DepFn fn, void *ctx)
{
	for (int32_t k = 0; k < n->ninputs; k++)
		if (n->inputs[k] >= 0)
			fn(n->inputs[k], ctx);
	for (int32_t k = 0; k < n->nattrs; k++) {
		const Attr *a = &n->attrs[k];
		if (a->type == ATTR_GRAPH && a->g)
			subgraph_deps(a->g, fn, ctx);
		else if (a->type == ATTR_GRAPHS)
			for (int32_t j = 0; j < a->n; j++)
				subgraph_deps(a->graphs[j], fn, ctx);
	}
}

/* Dependency lists in CSR form: deps[first[i] .. first[i+1]) are the
 * producers of node i's dependencies, in input order. */
typedef struct {
	const Graph *g;
	int32_t *first, *deps;
	int32_t n, cap;
} DepList;

static void add_dep(ValId v, void *ctx)
{
	DepList *d = ctx;
	if (v < 0 || v >= d->g->nvals || d->g->vals[v].producer < 0)
		return;
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 64;
		d->deps = xrealloc(d->deps, (size_t)d->cap * sizeof(int32_t));
	}
	d->deps[d->n++] = d->g->vals[v].producer;
}

static int set_producers(Graph *g)
{
	for (int32_t i = 0; i < g->nvals; i++)
		if (g->vals[i].kind == VAL_NODE)
			g->vals[i].producer = -1;
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		for (int32_t k = 0; k < n->noutputs; k++) {
			ValId o = n->outputs[k];
			if (o < 0)
				continue;
			if (o >= g->nvals)
				return error("graph '%s': node '%s' output %d "
					     "out of range",
					     g->name, n->name, k);
			Value *v = &g->vals[o];
			if (v->kind != VAL_NODE)
				return error("graph '%s': node '%s' writes "
					     "'%s', which is a graph input "
					     "or weight",
					     g->name, n->name, v->name);
			if (v->producer >= 0)
				return error("graph '%s': tensor '%s' is "
					     "produced by two nodes, '%s' and "
					     "'%s'",
					     g->name, v->name,
					     g->nodes[v->producer].name,
					     n->name);
			v->producer = i;
		}
	}
	return 0;
}

/* Depth-first post-order from each node in file order: a valid order is
 * kept as it is; dependencies are pulled in front where needed.  Iterative,
 * so a long chain cannot overflow the C stack. */
static int toposort_one(Graph *g)
{
	int32_t nn = g->nnodes;
	if (set_producers(g) < 0)
		return -1;
	DepList d = { .g = g };
	d.first = xmalloc(((size_t)nn + 1) * sizeof(int32_t));
	for (int32_t i = 0; i < nn; i++) {
		d.first[i] = d.n;
		node_deps(&g->nodes[i], add_dep, &d);
	}
	d.first[nn] = d.n;

	uint8_t *state = xcalloc((size_t)nn + 1, 1); /* 0 new, 1 on path, 2 done */
	int32_t *stack = xmalloc(((size_t)nn + 1) * sizeof(int32_t));
	int32_t *next = xmalloc(((size_t)nn + 1) * sizeof(int32_t));
	int32_t *order = xmalloc(((size_t)nn + 1) * sizeof(int32_t));
	int32_t top = 0, norder = 0, cycle_at = -1;
	for (int32_t root = 0; root < nn && cycle_at < 0; root++) {
		if (state[root])
			continue;
		state[root] = 1;
		next[root] = d.first[root];
		stack[top++] = root;
		while (top > 0 && cycle_at < 0) {
			int32_t i = stack[top - 1];
			if (next[i] == d.first[i + 1]) {
				top--;
				state[i] = 2;
				order[norder++] = i;
				continue;
			}
			int32_t p = d.deps[next[i]++];
			if (state[p] == 1)
				cycle_at = p;
			else if (state[p] == 0) {
				state[p] = 1;
				next[p] = d.first[p];
				stack[top++] = p;
			}
		}
	}
	int rc = 0;
	if (cycle_at >= 0) {
		const Node *n = &g->nodes[cycle_at];
		rc = error("graph '%s': cycle through node '%s' (%s)", g->name,
			   n->name, n->op_type);
	} else {
		Node *sorted = arena_array(g->arena, (size_t)nn, sizeof(Node));
		for (int32_t i = 0; i < nn; i++)
			sorted[i] = g->nodes[order[i]];
		g->nodes = sorted;
		g->capnodes = nn;
		rc = set_producers(g);
	}
	free(order);
	free(next);
	free(stack);
	free(state);
	free(d.deps);
	free(d.first);
	return rc;
}

static int toposort_visit(Graph *g, void *ctx)
{
	(void)ctx;
	return toposort_one(g);
}

int graph_toposort(Graph *g) { return graph_walk(g, toposort_visit, NULL); }

/* ---- verifier ---------------------------------------------------------- */

static int verify_value(const Graph *g, ValId id)
{
	const Value *v = &g->vals[id];
	if (!v->name)
		return error("graph '%s': value %d has no name", g->name, id);
	if (v->shape.rank < -1 || v->shape.rank > MAX_RANK)
		return error("graph '%s': tensor '%s' has rank %d (max %d)",
			     g->name, v->name, v->shape.rank, MAX_RANK);
	for (int32_t k = 0; k < v->shape.rank; k++)
		if (v->shape.dims[k] < -1)
			return error("graph '%s': tensor '%s' has dim %d = "
				     "%lld",
				     g->name, v->name, k,
				     (long long)v->shape.dims[k]);
	if (v->dtype < 0 || v->dtype >= DT_COUNT)
		return error("graph '%s': tensor '%s' has unknown dtype %d",
			     g->name, v->name, v->dtype);
	switch (v->kind) {
	case VAL_NODE:
		if (v->producer < 0 || v->producer >= g->nnodes)
			return error("graph '%s': tensor '%s' has no "
				     "producer",
				     g->name, v->name);
		break;
	case VAL_WEIGHT:
		if (!v->konst)
			return error("graph '%s': weight '%s' has no data",
				     g->name, v->name);
		/* fall through */
	case VAL_INPUT:
		if (v->producer != -1)
			return error("graph '%s': input or weight '%s' has a "
				     "producer",
				     g->name, v->name);
		break;
	case VAL_OUTER:
		if (!g->parent || v->outer < 0 || v->outer >= g->parent->nvals)
			return error("graph '%s': outer reference '%s' does "
				     "not resolve",
				     g->name, v->name);
		break;
	default:
		return error("graph '%s': tensor '%s' has bad kind %d", g->name,
			     v->name, v->kind);
	}
	if (v->konst && v->kind != VAL_OUTER &&
	    (v->konst->dtype != v->dtype ||
	     !shape_equal(&v->konst->shape, &v->shape)))
		return error("graph '%s': tensor '%s' disagrees with its "
			     "constant data",
			     g->name, v->name);
	return 0;
}

static int verify_ref(const Graph *g, const Node *n, ValId v, int32_t at,
		      const char *what, int k)
{
	if (v < -1 || v >= g->nvals)
		return error("graph '%s': node '%s' %s %d refers to tensor %d "
			     "of %d",
			     g->name, n->name, what, k, v, g->nvals);
	if (v >= 0 && g->vals[v].kind == VAL_NODE && g->vals[v].producer >= at)
		return error("graph '%s': node '%s' uses '%s' before it is "
			     "produced",
			     g->name, n->name, g->vals[v].name);
	return 0;
}

static int verify_one(Graph *g, void *ctx)
{
	(void)ctx;
	NameMap names;
	int rc = 0;
	namemap_init(&names);
	for (ValId i = 0; i < g->nvals && !rc; i++) {
		rc = verify_value(g, i);
		if (!rc && g->vals[i].name[0] &&
		    namemap_put(&names, g->vals[i].name, i) >= 0)
			rc = error("graph '%s': two tensors are named '%s'",
				   g->name, g->vals[i].name);
	}
	namemap_release(&names);
	for (int32_t i = 0; i < g->nnodes && !rc; i++) {
		const Node *n = &g->nodes[i];
		if (!n->name || !n->op_type || n->op >= OP_COUNT)
			return error("graph '%s': node %d is malformed",
				     g->name, i);
		for (int32_t k = 0; k < n->ninputs && !rc; k++)
			rc = verify_ref(g, n, n->inputs[k], i, "input", k);
		for (int32_t k = 0; k < n->noutputs && !rc; k++) {
			ValId o = n->outputs[k];
			if (o < -1 || o >= g->nvals)
				rc = error("graph '%s': node '%s' output %d "
					   "out of range",
					   g->name, n->name, k);
			else if (o >= 0 && g->vals[o].producer != i)
				rc = error("graph '%s': node '%s' output '%s' "
					   "records another producer",
					   g->name, n->name, g->vals[o].name);
		}
		for (int32_t k = 0; k < n->nattrs && !rc; k++) {
			const Attr *a = &n->attrs[k];
			if (a->type == ATTR_GRAPH && (!a->g || a->g->parent != g))
				rc = error("graph '%s': node '%s' attribute "
					   "'%s' has a bad subgraph",
					   g->name, n->name, a->name);
			for (int32_t j = 0; a->type == ATTR_GRAPHS && j < a->n;
			     j++)
				if (!a->graphs[j] || a->graphs[j]->parent != g)
					rc = error("graph '%s': node '%s' "
						   "attribute '%s' has a bad "
						   "subgraph",
						   g->name, n->name, a->name);
		}
	}
	for (int32_t k = 0; k < g->ninputs && !rc; k++)
		if (g->inputs[k] < 0 || g->inputs[k] >= g->nvals)
			rc = error("graph '%s': input %d out of range", g->name,
				   k);
	for (int32_t k = 0; k < g->noutputs && !rc; k++)
		if (g->outputs[k] < 0 || g->outputs[k] >= g->nvals)
			rc = error("graph '%s': output %d out of range",
				   g->name, k);
	return rc;
}

int graph_verify(const Graph *g)
{
	return graph_walk((Graph *)g, verify_one, NULL);
}
