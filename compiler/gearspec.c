/*
 * compiler/gearspec.c - --input_shape and the gear options.
 *
 * gear_parse() (cli/gearflags.c) reads the option strings into a
 * ParsedGears (malloc'd, so the CLI can parse before it has a model);
 * gear_apply() checks them against the model and builds m->gears from
 * the model's arena.  Messages name the flag, then the input, the
 * offending text quoted (gear_quote), then what was expected.
 */
#include "gearspec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const opt_keys[GOPT_COUNT] = {
	"input_shape", "input_format", "dynamic_batch_size",
	"dynamic_image_size", "dynamic_dims",
};

const char *gear_option_key(int gopt)
{
	return gopt >= 0 && gopt < GOPT_COUNT ? opt_keys[gopt] : NULL;
}

/* ---- shared with the flag grammar (cli/gearflags.c) -------------------- */

const char *gear_quote(Quote *q, const char *p, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = len, k = 0;
	if (n > QUOTE_MAX) {
		n = QUOTE_MAX;
		while (n > 0 && ((unsigned char)p[n] & 0xc0) == 0x80)
			n--;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c == '"' || c == '\'' || c == '\\') {
			q->s[k++] = '\\';
			q->s[k++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			q->s[k++] = '\\';
			q->s[k++] = 'x';
			q->s[k++] = hex[c >> 4];
			q->s[k++] = hex[c & 15];
		} else {
			q->s[k++] = (char)c;
		}
	}
	if (n < len) {
		memcpy(q->s + k, "...", 3);
		k += 3;
	}
	q->s[k] = 0;
	return q->s;
}

static const char *quotes(Quote *q, const char *s)
{
	return gear_quote(q, s, strlen(s));
}

int32_t gear_count_dyn(const ShapeEntry *e)
{
	int32_t k = 0;
	for (int32_t d = 0; d < e->rank; d++)
		k += e->dims[d] == -1;
	return k;
}

/* A growable string, for lists of unbounded length. */
typedef struct StrBuf {
	char *s;
	size_t n, cap;
} StrBuf;

static void sb_add(StrBuf *b, const char *s)
{
	size_t n = strlen(s);
	if (b->n + n + 1 > b->cap) {
		b->cap = 2 * (b->n + n + 1);
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->n, s, n + 1);
	b->n += n;
}

void gear_parsed_release(ParsedGears *p)
{
	for (int32_t i = 0; i < p->nshapes; i++)
		free(p->shapes[i].name);
	free(p->shapes);
	free(p->table);
	for (int i = 0; i < GOPT_COUNT; i++)
		free(p->given[i]);
	for (int32_t i = 0; i < p->nnamed; i++) {
		free(p->named[i].name);
		free(p->named[i].vals);
	}
	free(p->named);
	memset(p, 0, sizeof(*p));
}

/* ---- gear_apply ---------------------------------------------------------- */

static bool is_weight(const Graph *g, const char *name)
{
	for (ValId v = 0; v < g->nvals; v++)
		if (g->vals[v].kind == VAL_WEIGHT &&
		    !strcmp(g->vals[v].name, name))
			return true;
	return false;
}

/* "x, mask" - the graph's inputs, cut short past a few hundred bytes. */
static char *input_list(const Graph *g)
{
	StrBuf b = { 0 };
	int32_t shown = 0, total = 0;
	for (int32_t i = 0; i < g->ninputs; i++) {
		const Value *v = &g->vals[g->inputs[i]];
		Quote q;
		if (v->kind != VAL_INPUT)
			continue;
		total++;
		if (b.n > 300)
			continue;
		if (shown++)
			sb_add(&b, ", ");
		sb_add(&b, quotes(&q, v->name));
	}
	if (shown < total) {
		char more[48];
		snprintf(more, sizeof(more), ", ... (%d more)", total - shown);
		sb_add(&b, more);
	}
	if (!b.s)
		sb_add(&b, "");
	return b.s;
}

static int unknown_input(const Graph *g, const char *name)
{
	Quote q;
	char *list = input_list(g);
	if (*list)
		error("--input_shape: '%s' is not an input of the model "
		      "(inputs: %s)", quotes(&q, name), list);
	else
		error("--input_shape: '%s' is not an input of the model "
		      "(it has no inputs)", quotes(&q, name));
	free(list);
	return -1;
}

static int find_input(const Graph *g, const NameMap *inputs,
		      const ShapeEntry *e, ValId *out)
{
	Quote q;
	ValId v = namemap_get(inputs, e->name);
	if (v < 0 || g->vals[v].kind != VAL_INPUT) {
		if (v >= 0 || is_weight(g, e->name))
			return error("--input_shape: '%s' is an initializer "
				     "(a weight) of the model, not an input",
				     quotes(&q, e->name));
		return unknown_input(g, e->name);
	}
	if (g->vals[v].tkind != TK_TENSOR)
		return error("--input_shape: '%s' is not a tensor input (a "
			     "sequence, optional or map); --input_shape "
			     "gives tensor shapes only", quotes(&q, e->name));
	*out = v;
	return 0;
}

/* e against the model's declared shape ms. */
static int check_against_model(const ShapeEntry *e, const Shape *ms)
{
	Quote q;
	char buf[MAX_RANK * 22 + 8];
	const char *name = quotes(&q, e->name);
	if (ms->rank < 0)
		return 0;
	shape_str(ms, buf, sizeof(buf));
	if (ms->rank != e->rank)
		return error("--input_shape: '%s' has %d %s, but the model "
			     "declares rank %d (%s)%s%s%s", name, e->rank,
			     e->rank == 1 ? "dim" : "dims", ms->rank, buf,
			     ms->rank ? "" : "; write '",
			     ms->rank ? "" : name,
			     ms->rank ? "" : ":' for a scalar");
	for (int32_t d = 0; d < e->rank; d++) {
		int64_t md = ms->dims[d];
		if (md < 0 || e->dims[d] == md)
			continue;
		if (e->dims[d] == -1)
			return error("--input_shape: '%s' dim %d is -1, but "
				     "the model fixes it to %lld (%s); only "
				     "dims the model leaves dynamic can be "
				     "gear dims", name, d, (long long)md, buf);
		return error("--input_shape: '%s' dim %d is %lld, but the "
			     "model declares %lld (%s)", name, d,
			     (long long)e->dims[d], (long long)md, buf);
	}
	return 0;
}

/* Every tensor input with unknown dims must be listed. */
static int check_all_listed(const Graph *g, const NameMap *listed)
{
	for (int32_t i = 0; i < g->ninputs; i++) {
		const Value *v = &g->vals[g->inputs[i]];
		Quote q;
		char buf[MAX_RANK * 22 + 8];
		if (v->kind != VAL_INPUT || v->tkind != TK_TENSOR ||
		    shape_is_static(&v->shape) ||
		    namemap_get(listed, v->name) >= 0)
			continue;
		if (v->shape.rank < 0)
			return error("--input_shape: model input '%s' has an "
				     "unknown shape; give it in --input_shape",
				     quotes(&q, v->name));
		return error("--input_shape: model input '%s' has dynamic "
			     "shape %s; give it in --input_shape",
			     quotes(&q, v->name),
			     shape_str(&v->shape, buf, sizeof(buf)));
	}
	return 0;
}

static int check_model(const Model *m, const ParsedGears *p, ValId *vid)
{
	const Graph *g = m->graph;
	NameMap inputs, listed;
	int rc = 0;
	namemap_init(&inputs);
	namemap_init(&listed);
	for (int32_t i = 0; i < g->ninputs; i++)
		if (namemap_get(&inputs, g->vals[g->inputs[i]].name) < 0)
			namemap_put(&inputs, g->vals[g->inputs[i]].name,
				    g->inputs[i]);
	for (int32_t i = 0; rc == 0 && i < p->nshapes; i++) {
		const ShapeEntry *e = &p->shapes[i];
		rc = find_input(g, &inputs, e, &vid[i]);
		if (rc == 0)
			rc = check_against_model(e, &g->vals[vid[i]].shape);
		namemap_put(&listed, e->name, i);
	}
	if (rc == 0)
		rc = check_all_listed(g, &listed);
	namemap_release(&inputs);
	namemap_release(&listed);
	return rc;
}

/* The input's shape becomes e's; symbolic dim names stay at gear dims. */
static void set_shape(Graph *g, Value *v, const ShapeEntry *e)
{
	const char **dp = NULL;
	if (v->dim_params && v->shape.rank == e->rank) {
		dp = arena_array(g->arena, (size_t)e->rank, sizeof(*dp));
		for (int32_t d = 0; d < e->rank; d++)
			dp[d] = e->dims[d] == -1 ? v->dim_params[d] : NULL;
	}
	v->dim_params = dp;
	v->shape = shape_of(e->rank, e->dims);
}

/* The position of input v among g's inputs. */
static int32_t input_pos(const Graph *g, ValId v)
{
	int32_t k = 0;
	while (k < g->ninputs && g->inputs[k] != v)
		k++;
	return k;
}

/* The gear inputs are the inputs with -1 dims in the model's order,
 * whatever the order of --input_shape, since a gear's values are the
 * inputs' dims at their -1s, inputs in order (runtime/gearrt.h): the
 * table's columns are permuted to follow. */
static GearSpec *build_spec(Model *m, const ParsedGears *p, const ValId *vid)
{
	GearSpec *s = arena_alloc(&m->arena, sizeof(*s));
	int32_t n = 0, first = 0;
	int32_t *ord = arena_array(&m->arena, (size_t)p->nshapes + 1,
				   sizeof(int32_t));
	int32_t *pfirst = arena_array(&m->arena, (size_t)p->nshapes + 1,
				      sizeof(int32_t));
	for (int32_t i = 0; i < p->nshapes; i++) {
		pfirst[i] = first;
		first += gear_count_dyn(&p->shapes[i]);
		if (!gear_count_dyn(&p->shapes[i]))
			continue;
		int32_t j = n++; /* insertion by input position */
		for (; j > 0 && input_pos(m->graph, vid[ord[j - 1]]) >
				       input_pos(m->graph, vid[i]); j--)
			ord[j] = ord[j - 1];
		ord[j] = i;
	}
	ASSERT(first == p->nvals);
	s->mode = p->mode;
	s->ninputs = n;
	s->inputs = arena_array(&m->arena, (size_t)n, sizeof(*s->inputs));
	s->ngears = p->ngears;
	s->nvals = p->nvals;
	s->table = arena_array(&m->arena, (size_t)p->ngears * (size_t)p->nvals,
			       sizeof(int64_t));
	first = 0;
	for (int32_t k = 0; k < n; k++) {
		const ShapeEntry *e = &p->shapes[ord[k]];
		GearInput *in = &s->inputs[k];
		in->name = m->graph->vals[vid[ord[k]]].name;
		in->val = vid[ord[k]];
		in->shape = shape_of(e->rank, e->dims);
		for (int32_t d = 0; d < e->rank; d++)
			if (e->dims[d] == -1)
				in->dyn_axes[in->ndyn++] = d;
		in->first = first;
		for (int32_t g = 0; g < p->ngears; g++)
			memcpy(s->table + (size_t)g * (size_t)p->nvals + first,
			       p->table + (size_t)g * (size_t)p->nvals +
				       pfirst[ord[k]],
			       (size_t)in->ndyn * sizeof(int64_t));
		first += in->ndyn;
	}
	return s;
}

/* ---- the named --dynamic_dims form ---------------------------------------- */

/* The key of p's named entries that input v's dim d carries, or -1. */
static int32_t named_key(const ParsedGears *p, const Value *v, int32_t d)
{
	if (!v->dim_params || d >= v->shape.rank || !v->dim_params[d] ||
	    v->shape.dims[d] >= 0)
		return -1;
	for (int32_t k = 0; k < p->nnamed; k++)
		if (!strcmp(p->named[k].name, v->dim_params[d]))
			return k;
	return -1;
}

static const ShapeEntry *listed_entry(const ParsedGears *p, const char *name)
{
	for (int32_t i = 0; i < p->nshapes; i++)
		if (!strcmp(p->shapes[i].name, name))
			return &p->shapes[i];
	return NULL;
}

/* An --input_shape entry's -1s must sit on named dims. */
static int check_listed_named(const ParsedGears *p, const ShapeEntry *e,
			      const Value *v)
{
	Quote q;
	for (int32_t d = 0; d < e->rank; d++) {
		if (e->dims[d] != -1 || named_key(p, v, d) >= 0)
			continue;
		const char *dp = v->dim_params && d < v->shape.rank
					 ? v->dim_params[d]
					 : NULL;
		if (dp)
			return error("--input_shape: '%s' dim %d is -1, but "
				     "--dynamic_dims does not name its dim "
				     "'%s'", quotes(&q, e->name), d, dp);
		return error("--input_shape: '%s' dim %d is -1, but the model "
			     "gives that dim no name for --dynamic_dims to "
			     "key; use the positional form (\"1,32;1,64\")",
			     quotes(&q, e->name), d);
	}
	return 0;
}

/* The model's shape of an input --input_shape does not list, with -1 at
 * the named dims; -1 (no entry) for an input with none. */
static int model_entry(const ParsedGears *p, const Value *v, ShapeEntry *e)
{
	Quote q;
	bool any = false;
	if (v->shape.rank < 0)
		return 1; /* check_all_listed names it */
	e->rank = v->shape.rank;
	for (int32_t d = 0; d < v->shape.rank; d++) {
		e->dims[d] = v->shape.dims[d];
		if (named_key(p, v, d) >= 0)
			any = true;
		else if (e->dims[d] < 0)
			return error("--dynamic_dims: input '%s' dim %d (%s%s%s) "
				     "is open, but no value is named for it; "
				     "add its name to --dynamic_dims or give "
				     "its size in --input_shape",
				     quotes(&q, v->name), d,
				     v->dim_params && v->dim_params[d] ? "'"
									: "",
				     v->dim_params && v->dim_params[d]
					     ? v->dim_params[d]
					     : "unnamed",
				     v->dim_params && v->dim_params[d] ? "'"
									: "");
	}
	return any ? 0 : 1;
}

/* r's shapes: p's, then each unlisted input with a named dim. */
static int named_shapes(const Graph *g, const ParsedGears *p,
			ParsedGears *r, bool *used)
{
	r->shapes = xcalloc((size_t)(p->nshapes + g->ninputs) + 1,
			    sizeof(*r->shapes));
	for (int32_t i = 0; i < p->nshapes; i++) {
		r->shapes[r->nshapes] = p->shapes[i];
		r->shapes[r->nshapes++].name = xstrdup(p->shapes[i].name);
	}
	for (int32_t i = 0; i < g->ninputs; i++) {
		const Value *v = &g->vals[g->inputs[i]];
		const ShapeEntry *e = listed_entry(p, v->name);
		int rc = e ? check_listed_named(p, e, v)
			   : model_entry(p, v, &r->shapes[r->nshapes]);
		if (rc < 0)
			return -1;
		if (!e && rc == 0)
			r->shapes[r->nshapes++].name = xstrdup(v->name);
		for (int32_t d = 0; d < v->shape.rank; d++) {
			int32_t k = named_key(p, v, d);
			if (k >= 0 && (!e || e->dims[d] == -1))
				used[k] = true;
		}
	}
	return 0;
}

/* The gear table of the named form: gear g's value of key k by mixed
 * radix over the entries, the last fastest. */
static void named_table(const Graph *g, const ParsedGears *p, ParsedGears *r)
{
	r->nvals = 0;
	for (int32_t i = 0; i < r->nshapes; i++)
		r->nvals += gear_count_dyn(&r->shapes[i]);
	r->table = xcalloc((size_t)r->ngears * (size_t)r->nvals + 1,
			   sizeof(int64_t));
	for (int32_t gi = 0; gi < r->ngears; gi++) {
		int32_t idx[64] = { 0 }, rest = gi;
		for (int32_t k = p->nnamed - 1; k >= 0; k--) {
			idx[k] = rest % p->named[k].n;
			rest /= p->named[k].n;
		}
		int64_t *row = r->table + (size_t)gi * (size_t)r->nvals;
		int32_t c = 0;
		for (int32_t i = 0; i < r->nshapes; i++) {
			const ShapeEntry *e = &r->shapes[i];
			const Value *v = NULL;
			for (int32_t j = 0; j < g->ninputs && !v; j++)
				if (!strcmp(g->vals[g->inputs[j]].name, e->name))
					v = &g->vals[g->inputs[j]];
			for (int32_t d = 0; d < e->rank; d++) {
				if (e->dims[d] != -1)
					continue;
				int32_t k = v ? named_key(p, v, d) : -1;
				row[c++] = k >= 0 ? p->named[k].vals[idx[k]] : 1;
			}
		}
	}
}

/* A name with one value is the same in every gear: its dims become
 * static, not gear dims. */
static void fix_single(const Graph *g, const ParsedGears *p, ParsedGears *r)
{
	for (int32_t i = 0; i < r->nshapes; i++) {
		ShapeEntry *e = &r->shapes[i];
		for (int32_t j = 0; j < g->ninputs; j++) {
			const Value *v = &g->vals[g->inputs[j]];
			if (strcmp(v->name, e->name))
				continue;
			for (int32_t d = 0; d < e->rank; d++) {
				int32_t k = named_key(p, v, d);
				if (e->dims[d] == -1 && k >= 0 &&
				    p->named[k].n == 1)
					e->dims[d] = p->named[k].vals[0];
			}
		}
	}
}

/* The named --dynamic_dims form made positional against the model:
 * r gets p's mode and gear count, the shapes and the table. */
static int resolve_named(const Model *m, const ParsedGears *p, ParsedGears *r)
{
	const Graph *g = m->graph;
	bool *used = xcalloc((size_t)p->nnamed + 1, sizeof(bool));
	memset(r, 0, sizeof(*r));
	r->mode = p->mode;
	r->format = p->format;
	r->ngears = p->ngears;
	int rc = named_shapes(g, p, r, used);
	for (int32_t k = 0; rc == 0 && k < p->nnamed; k++)
		if (!used[k]) {
			Quote q;
			rc = error("--dynamic_dims: no input dim is named '%s' "
				   "(see 'gearc inspect' for the model's dim "
				   "names)", quotes(&q, p->named[k].name));
		}
	free(used);
	if (rc == 0)
		fix_single(g, p, r);
	if (rc == 0)
		named_table(g, p, r);
	return rc;
}

int gear_apply(Model *m, const ParsedGears *p0)
{
	Graph *g = m->graph;
	ParsedGears named = { 0 };
	const ParsedGears *p = p0;
	ASSERT(g);
	if (p0->nnamed) {
		if (resolve_named(m, p0, &named) < 0) {
			gear_parsed_release(&named);
			return -1;
		}
		p = &named;
	}
	ValId *vid = xcalloc((size_t)p->nshapes + 1, sizeof(*vid));
	if (check_model(m, p, vid) < 0) {
		free(vid);
		gear_parsed_release(&named);
		return -1;
	}
	for (int32_t i = 0; i < p->nshapes; i++)
		set_shape(g, &g->vals[vid[i]], &p->shapes[i]);
	m->mode = p->mode;
	m->gears = p->mode == MODE_STATIC ? NULL : build_spec(m, p, vid);
	for (int i = 0; i < GOPT_COUNT; i++)
		if (p0->given[i])
			model_add_option(m, opt_keys[i], p0->given[i]);
	free(vid);
	gear_parsed_release(&named);
	return 0;
}

/* ---- queries ------------------------------------------------------------- */

Shape gear_input_shape(const GearSpec *s, int32_t k, int32_t g)
{
	ASSERT(k >= 0 && k < s->ninputs && g >= 0 && g < s->ngears);
	const GearInput *in = &s->inputs[k];
	const int64_t *row = s->table + (size_t)g * s->nvals + in->first;
	Shape sh = in->shape;
	for (int32_t j = 0; j < in->ndyn; j++)
		sh.dims[in->dyn_axes[j]] = row[j];
	return sh;
}

int32_t gear_max_index(const GearSpec *s, int32_t k)
{
	ASSERT(k >= 0 && k < s->ninputs && s->ngears > 0);
	const GearInput *in = &s->inputs[k];
	int32_t best = 0;
	int64_t bestp = -1;
	for (int32_t g = 0; g < s->ngears; g++) {
		const int64_t *row = s->table + (size_t)g * s->nvals + in->first;
		int64_t prod = 1;
		for (int32_t j = 0; j < in->ndyn; j++)
			if (!mul_nonneg_i64(prod, row[j], &prod))
				prod = INT64_MAX;
		if (prod > bestp) {
			bestp = prod;
			best = g;
		}
	}
	return best;
}

Shape gear_max_shape(const GearSpec *s, int32_t k)
{
	return gear_input_shape(s, k, gear_max_index(s, k));
}

int32_t gear_input_index(const GearSpec *s, ValId v)
{
	for (int32_t k = 0; s && k < s->ninputs; k++)
		if (s->inputs[k].val == v)
			return k;
	return -1;
}
