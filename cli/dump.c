/*
 * cli/dump.c - 'gearc dump': a .om file as text, JSON or Graphviz DOT.
 *
 * The facts are gathered once, into one document: the json-c tree of
 * om_json() (and json_graph_detail() for a graph's nodes and tensors),
 * the contract of --format=json.  The JSON dump prints it; the text dump
 * prints the same document in lines (text_*), never the message, so a
 * new fact is added in one place.  DOT draws the graphs from the message.
 *
 * Everything here reads a Gearom__Model that om_open() has validated, so
 * indices are in range; absent optional parts (no plan yet, no gears) are
 * shown as null / omitted, never invented.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "passes/hybrid.h"
#include "passes/partition.h"
#include "serializer/om.h"
#include "serializer/omread.h"

/* ---- names made printable ------------------------------------------------ */

/* Names in a .om are whatever bytes the ONNX model held.  Before they are
 * shown, every string (and the string attributes' bytes) is replaced, in
 * the unpacked message, by its str_escape() form: invalid UTF-8 as \xNN
 * for JSON (json-c escapes the control characters itself), and control
 * characters too for text and DOT, so that no name can clear a terminal
 * or break a line.  protobuf-c frees the replacements (malloc'd, as
 * what they replace) with the message. */
static void escape_bytes(ProtobufCBinaryData *b, unsigned how)
{
	size_t n;
	char *e = str_escape((const char *)b->data, b->len, how, &n);
	if (n == b->len) {
		free(e);
		return;
	}
	free(b->data);
	b->data = (uint8_t *)e;
	b->len = n;
}

static void escape_string(char **s, const void *dflt, unsigned how)
{
	size_t n, len = *s ? strlen(*s) : 0;
	if (!*s || *s == dflt)
		return;
	char *e = str_escape(*s, len, how, &n);
	if (n == len) {
		free(e);
		return;
	}
	free(*s);
	*s = e;
}

static void escape_message(ProtobufCMessage *msg, unsigned how);

void om_escape_names(OmFile *f, unsigned how)
{
	escape_message(&f->model->base, how);
}

static void escape_message(ProtobufCMessage *msg, unsigned how)
{
	const ProtobufCMessageDescriptor *d = msg->descriptor;
	bool attr = d == &gearom__attribute__descriptor;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		char *at = (char *)msg + f->offset;
		size_t n = 1;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = *(size_t *)((char *)msg + f->quantifier_offset);
			at = *(char **)at;
		}
		for (size_t k = 0; k < n; k++) {
			if (f->type == PROTOBUF_C_TYPE_STRING)
				escape_string((char **)at + k, f->default_value,
					      how);
			else if (f->type == PROTOBUF_C_TYPE_BYTES && attr)
				escape_bytes((ProtobufCBinaryData *)at + k,
					     how);
			else if (f->type == PROTOBUF_C_TYPE_MESSAGE &&
				 ((ProtobufCMessage **)at)[k])
				escape_message(((ProtobufCMessage **)at)[k],
					       how);
		}
	}
}

/* ---- shared helpers ------------------------------------------------------ */

static const char *dt_name(bool has, int32_t dt)
{
	const char *n = has ? dtype_name(dt) : NULL;
	return n ? n : "undefined";
}

static const char *mode_name(const Gearom__Model *m)
{
	return gear_mode_name(m->has_mode ? (int)m->mode : MODE_STATIC);
}

/* Count and bytes of the model's weights (inline == false: in the
 * WEIGHTS partition) or of the constants gearc computed (inline). */
static uint64_t weights_sum(const Gearom__Model *m, bool in_line,
			    size_t *count)
{
	uint64_t sum = 0;
	*count = 0;
	for (size_t i = 0; i < m->n_weights; i++)
		if ((bool)m->weights[i]->has_data == in_line) {
			sum += m->weights[i]->size;
			++*count;
		}
	return sum;
}

/* Nodes of graph gi and of every graph below it. */
static size_t nodes_below(const Gearom__Model *m, size_t gi)
{
	size_t n = m->graphs[gi]->n_nodes;
	for (size_t j = gi + 1; j < m->n_graphs; j++)
		if (m->graphs[j]->has_parent && m->graphs[j]->parent == (int)gi)
			n += nodes_below(m, j);
	return n;
}

static const Gearom__MemoryPlan *gear_plan(const Gearom__Model *m,
					   const Gearom__Gear *g)
{
	if (!g->has_graph || g->graph < 0)
		return NULL;
	return m->graphs[g->graph]->plan;
}

/* What a plan holds, counted. */
typedef struct PlanStats {
	int64_t tensors, views, inplace, workspaces;
} PlanStats;

static PlanStats plan_stats(const Gearom__MemoryPlan *p)
{
	PlanStats st = { 0 };
	for (size_t i = 0; i < p->n_blocks; i++) {
		const Gearom__MemBlock *b = p->blocks[i];
		if (b->node >= 0) {
			st.workspaces++;
			continue;
		}
		st.tensors++;
		if (b->alias_of >= 0 && b->inplace)
			st.inplace++;
		else if (b->alias_of >= 0)
			st.views++;
	}
	return st;
}

/* The model's memory: per figure (arena, lower bound, naive), the max
 * over gears (branches never run together) plus the root's plan; for a
 * static compile, the main graph's plan.  False when no plan is
 * recorded. */
typedef struct ModelMemory {
	uint64_t arena, lower, naive, root;
	int64_t unplanned;
} ModelMemory;

static void take_max(uint64_t *a, uint64_t b)
{
	if (b > *a)
		*a = b;
}

static bool model_memory(const Gearom__Model *m, ModelMemory *mm)
{
	bool any = false;
	memset(mm, 0, sizeof(*mm));
	for (size_t i = 0; i < m->n_gears; i++) {
		const Gearom__MemoryPlan *p = gear_plan(m, m->gears[i]);
		if (!p)
			continue;
		take_max(&mm->arena, p->arena_bytes);
		take_max(&mm->lower, p->lower_bound_bytes);
		take_max(&mm->naive, p->naive_bytes);
		mm->unplanned += p->unplanned;
		any = true;
	}
	const Gearom__Graph *root = m->graphs[m->has_root ? m->root : 0];
	if (root->plan) {
		mm->root = root->plan->arena_bytes;
		mm->arena += root->plan->arena_bytes;
		mm->lower += root->plan->lower_bound_bytes;
		mm->naive += root->plan->naive_bytes;
		mm->unplanned += root->plan->unplanned;
		any = true;
	}
	return any;
}

/* Calls fn on each input --input_value=OPT pinned (OPT may be NULL): its
 * name and value texts. */
static void each_pinned(const char *opt,
			void (*fn)(void *ctx, char *name, char *vals),
			void *ctx)
{
	if (!opt)
		return;
	char *s = xstrdup(opt), *save = NULL;
	for (char *e = strtok_r(s, ";", &save); e; e = strtok_r(NULL, ";", &save)) {
		char *colon = strrchr(e, ':');
		if (!colon)
			continue;
		*colon = 0;
		fn(ctx, e, colon + 1);
	}
	free(s);
}

/* arena / lower bound, 1 when both are 0. */
static double plan_ratio(uint64_t arena, uint64_t lower)
{
	return lower ? (double)arena / (double)lower : arena ? 0.0 : 1.0;
}

/* ---- scopes (passes/scope.h): which graphs every gear runs --------------- */

enum { ROLE_ROOT, ROLE_SUBGRAPH, ROLE_GEAR_BRANCH, ROLE_SCOPE, ROLE_CLONE };
static const char *const role_names[] = { "root", "subgraph", "gear_branch",
					  "scope", "scope_clone" };

/* Per graph: its role, whether every gear runs it (shared), and for a
 * scope's clone its index among the scope's Case branches. */
typedef struct Roles {
	uint8_t *role;
	bool *shared;
	int32_t *clone;
} Roles;

static void roles_release(Roles *r)
{
	free(r->role);
	free(r->shared);
	free(r->clone);
}

/* n is gearc's own op (domain ai.gearc) op. */
static bool pb_own(const Gearom__Node *n, const char *op)
{
	return n->domain && !strcmp(n->domain, GEARC_DOMAIN) && n->op_type &&
	       !strcmp(n->op_type, op);
}

static bool is_scope_call(const Gearom__Node *n)
{
	const Gearom__Attribute *a = om_attr(n, SCOPE_MULTI_DIMS_ATTR);
	return pb_own(n, "PartitionedCall") && a && a->i;
}

/* Parents come before their subgraphs (om.h), so one pass in graph order
 * sees each graph's parent done. */
static void find_roles(const Gearom__Model *m, Roles *r)
{
	size_t n = m->n_graphs + 1;
	r->role = xcalloc(n, 1);
	r->shared = xcalloc(n, sizeof(bool));
	r->clone = xcalloc(n, sizeof(int32_t));
	for (size_t gi = 0; gi < m->n_graphs; gi++) {
		const Gearom__Graph *g = m->graphs[gi];
		if (!g->has_parent || g->parent < 0) {
			r->role[gi] = ROLE_ROOT;
			r->shared[gi] = true;
		}
		for (size_t i = 0; i < g->n_nodes; i++) {
			const Gearom__Node *nd = g->nodes[i];
			for (size_t k = 0; k < nd->n_attrs; k++) {
				const Gearom__Attribute *a = nd->attrs[k];
				size_t cnt = a->n_graphs + (a->g >= 0);
				for (size_t j = 0; j < cnt; j++) {
					int32_t sub = j < a->n_graphs ? a->graphs[j]
								      : a->g;
					uint8_t role = ROLE_SUBGRAPH;
					if (pb_own(nd, "Case"))
						role = r->role[gi] == ROLE_SCOPE
							       ? ROLE_CLONE
							       : ROLE_GEAR_BRANCH;
					else if (is_scope_call(nd))
						role = ROLE_SCOPE;
					r->role[sub] = role;
					r->shared[sub] = r->shared[gi] &&
							 role != ROLE_CLONE &&
							 role != ROLE_GEAR_BRANCH;
					r->clone[sub] = (int32_t)j;
				}
			}
		}
	}
}

/* The scope's PartitionedCall (in its parent) and the Case of its body. */
static const Gearom__Node *scope_call(const Gearom__Model *m, size_t body)
{
	const Gearom__Graph *p = m->graphs[m->graphs[body]->parent];
	for (size_t i = 0; i < p->n_nodes; i++) {
		const Gearom__Attribute *a =
			om_attr(p->nodes[i], SCOPE_BODY_ATTR);
		if (is_scope_call(p->nodes[i]) && a && a->g == (int32_t)body)
			return p->nodes[i];
	}
	return NULL;
}

static const Gearom__Node *scope_case(const Gearom__Model *m, size_t body)
{
	const Gearom__Graph *b = m->graphs[body];
	for (size_t i = 0; i < b->n_nodes; i++)
		if (pb_own(b->nodes[i], "Case"))
			return b->nodes[i];
	return NULL;
}

/* Nodes every gear runs and nodes of gear branches and clones. */
static void scope_counts(const Gearom__Model *m, const Roles *r,
			 size_t *shared, size_t *per_gear)
{
	*shared = *per_gear = 0;
	for (size_t gi = 0; gi < m->n_graphs; gi++)
		*(r->shared[gi] ? shared : per_gear) += m->graphs[gi]->n_nodes;
}

/* What a scope records (passes/scope.h): its call's reason and gear map,
 * its Case's selector inputs, dims table and branches (the clones); NULL
 * where absent. */
typedef struct ScopeAttrs {
	const Gearom__Node *call;
	const Gearom__Attribute *why, *map, *order, *tab, *br;
} ScopeAttrs;

static ScopeAttrs scope_attrs(const Gearom__Model *m, size_t body)
{
	const Gearom__Node *cs = scope_case(m, body);
	ScopeAttrs s = { .call = scope_call(m, body) };
	if (s.call) {
		s.why = om_attr(s.call, SCOPE_WHY_ATTR);
		s.map = om_attr(s.call, SCOPE_GEAR_MAP_ATTR);
	}
	if (cs) {
		s.order = om_attr(cs, CASE_INPUT_ORDER_ATTR);
		s.tab = om_attr(cs, CASE_GEAR_DIMS_ATTR);
		s.br = om_attr(cs, CASE_BRANCHES_ATTR);
	}
	return s;
}

/* The clone scope body runs at gear g, or -1. */
static int32_t scope_clone_at(const Gearom__Model *m, size_t body, size_t g)
{
	ScopeAttrs s = scope_attrs(m, body);
	if (!s.map || !s.br || g >= s.map->n_ints || s.map->ints[g] < 0 ||
	    (size_t)s.map->ints[g] >= s.br->n_graphs)
		return -1;
	return s.br->graphs[s.map->ints[g]];
}

/* Nodes gear g runs in a scope compile: the shared ones and its clones'. */
static int64_t scope_gear_nodes(const Gearom__Model *m, size_t g)
{
	Roles r;
	size_t shared, per;
	find_roles(m, &r);
	scope_counts(m, &r, &shared, &per);
	int64_t n = (int64_t)shared;
	for (size_t gi = 0; gi < m->n_graphs; gi++) {
		int32_t c = r.role[gi] == ROLE_SCOPE && r.shared[gi]
				    ? scope_clone_at(m, gi, g)
				    : -1;
		if (c >= 0)
			n += (int64_t)nodes_below(m, (size_t)c);
	}
	roles_release(&r);
	return n;
}


/* ---- hybrid and partitions (passes/hybrid.h, passes/partition.h) -------- */


/* The root's Case node of a --hybrid file, or NULL. */
static const Gearom__Node *hybrid_case(const Gearom__Model *m)
{
	const Gearom__Graph *root = m->graphs[m->has_root ? m->root : 0];
	for (size_t i = 0; i < root->n_nodes; i++) {
		const Gearom__Attribute *a =
			om_attr(root->nodes[i], HYBRID_GRAPH_ATTR);
		if (op_lookup(root->nodes[i]->domain, root->nodes[i]->op_type) ==
			    OP_Case &&
		    a && a->g >= 0)
			return root->nodes[i];
	}
	return NULL;
}

/* Node n's partition kind ("known", "unknown") and subgraph, or NULL if
 * it is not a partition node. */
static const char *partition_of(const Gearom__Node *n, int32_t *sub,
				char *buf, size_t len)
{
	const Gearom__Attribute *f = om_attr(n, PARTITION_GRAPH_ATTR);
	const char *kind = om_partition_kind(n, buf, len);
	if (!kind || !f || f->g < 0)
		return NULL;
	*sub = f->g;
	return kind;
}

/* Dim k of tensor t: its value, or its symbol where it is -1 and named. */
static const char *dim_symbol(const Gearom__Tensor *t, size_t k)
{
	if (t->dims[k] >= 0 || k >= t->n_dim_params || !*t->dim_params[k])
		return NULL;
	return t->dim_params[k];
}

/* ---- JSON ---------------------------------------------------------------- */

static json_object *jdims(const int64_t *d, size_t n)
{
	json_object *a = json_object_new_array_ext((int)n);
	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_int64(d[i]));
	return a;
}

/* A shape, or null when the rank is unknown. */
static json_object *jshape(bool has_rank, int32_t rank, const int64_t *d,
			   size_t n)
{
	if (has_rank && rank < 0)
		return NULL;
	return jdims(d, n);
}

static void jadd(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

static json_object *jstr(const char *s) { return json_object_new_string(s ? s : ""); }
static json_object *jint(int64_t v) { return json_object_new_int64(v); }
static json_object *juint(uint64_t v) { return json_object_new_uint64(v); }

/* Reading the document back (the text dump, --graph): a missing key or
 * a null is NULL, 0 or "". */
static json_object *jget(json_object *o, const char *k)
{
	json_object *v = NULL;
	return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static const char *jgets(json_object *o, const char *k)
{
	const char *s = json_object_get_string(jget(o, k));
	return s ? s : "";
}

static long long jgeti(json_object *o, const char *k)
{
	return (long long)json_object_get_int64(jget(o, k));
}

static unsigned long long jgetu(json_object *o, const char *k)
{
	return (unsigned long long)json_object_get_uint64(jget(o, k));
}

static size_t jlen(json_object *a)
{
	return json_object_is_type(a, json_type_array)
		       ? json_object_array_length(a)
		       : 0;
}

static json_object *jat(json_object *a, size_t i)
{
	return i < jlen(a) ? json_object_array_get_idx(a, i) : NULL;
}

static json_object *json_io(const Gearom__IoInfo *io, bool input)
{
	json_object *o = json_object_new_object();
	jadd(o, "name", jstr(io->name));
	jadd(o, "dtype", jstr(dt_name(io->has_dtype, io->dtype)));
	jadd(o, "shape", jshape(io->has_rank, io->rank, io->shape, io->n_shape));
	if (input)
		jadd(o, "max_shape",
		     io->n_max_shape ? jdims(io->max_shape, io->n_max_shape)
				     : jshape(io->has_rank, io->rank, io->shape,
					      io->n_shape));
	return o;
}

static json_object *json_shapes(Gearom__ShapeInfo **s, size_t n, bool bytes)
{
	json_object *a = json_object_new_array_ext((int)n);
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_new_object();
		jadd(o, "name", jstr(s[i]->name));
		jadd(o, "shape", jshape(s[i]->has_rank, s[i]->rank, s[i]->dims,
					s[i]->n_dims));
		if (bytes)
			jadd(o, "bytes", s[i]->has_bytes ? juint(s[i]->bytes)
							 : NULL);
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *json_plan(const Gearom__MemoryPlan *p)
{
	json_object *o = json_object_new_object();
	PlanStats st = { 0 };
	if (p)
		st = plan_stats(p);
	jadd(o, "arena_bytes", p ? juint(p->arena_bytes) : NULL);
	jadd(o, "lower_bound_bytes", p ? juint(p->lower_bound_bytes) : NULL);
	jadd(o, "naive_bytes", p ? juint(p->naive_bytes) : NULL);
	jadd(o, "tensors", p ? jint(st.tensors) : NULL);
	/* Extras beyond the contract. */
	jadd(o, "views", p ? jint(st.views) : NULL);
	jadd(o, "inplace", p ? jint(st.inplace) : NULL);
	jadd(o, "workspaces", p ? jint(st.workspaces) : NULL);
	jadd(o, "unplanned", p ? jint(p->unplanned) : NULL);
	return o;
}

static json_object *json_memory(const Gearom__Model *m)
{
	json_object *o = json_object_new_object();
	ModelMemory mm;
	bool has = model_memory(m, &mm);
	jadd(o, "arena_bytes", has ? juint(mm.arena) : NULL);
	/* Extras: the same sums for the other figures. */
	jadd(o, "lower_bound_bytes", has ? juint(mm.lower) : NULL);
	jadd(o, "naive_bytes", has ? juint(mm.naive) : NULL);
	if (m->n_gears)
		jadd(o, "root_arena_bytes", has ? juint(mm.root) : NULL);
	jadd(o, "unplanned", has ? jint(mm.unplanned) : NULL);
	return o;
}

static json_object *json_gear(const Gearom__Model *m, const Gearom__Gear *g)
{
	json_object *o = json_object_new_object();
	jadd(o, "index", jint(g->index));
	jadd(o, "label", jstr(g->label));
	jadd(o, "dims", jdims(g->dims, g->n_dims));
	jadd(o, "inputs", json_shapes(g->inputs, g->n_inputs, false));
	jadd(o, "outputs", json_shapes(g->outputs, g->n_outputs, true));
	jadd(o, "memory", json_plan(gear_plan(m, g)));
	bool has = g->has_graph && g->graph >= 0;
	jadd(o, "nodes", has ? jint((int64_t)nodes_below(m, (size_t)g->graph))
		       : om_option(m, "gear_scope")
			 ? jint(scope_gear_nodes(m, (size_t)g->index))
					 : NULL);
	return o;
}

static json_object *json_source(const Gearom__Source *s)
{
	json_object *o = json_object_new_object(), *ops = json_object_new_object();
	jadd(o, "file", jstr(s ? s->file : ""));
	/* the model's graph's name (the root is "root"), null in a file
	 * written before it was kept */
	jadd(o, "graph", s && s->graph ? jstr(s->graph) : NULL);
	/* the ONNX file's SHA-256, null in a file written before it was
	 * kept */
	jadd(o, "sha256", s && s->sha256 ? jstr(s->sha256) : NULL);
	jadd(o, "ir_version", jint(s ? s->ir_version : 0));
	for (size_t i = 0; s && i < s->n_opsets; i++)
		jadd(ops, s->opsets[i]->domain ? s->opsets[i]->domain : "",
		     jint(s->opsets[i]->version));
	jadd(o, "opsets", ops);
	jadd(o, "producer_name", jstr(s ? s->producer_name : ""));
	jadd(o, "producer_version", jstr(s ? s->producer_version : ""));
	return o;
}

static void json_graph_role(json_object *o, const Roles *r, size_t gi);

static json_object *json_graphs(const Gearom__Model *m)
{
	json_object *a = json_object_new_array_ext((int)m->n_graphs);
	Roles roles;
	find_roles(m, &roles);
	for (size_t i = 0; i < m->n_graphs; i++) {
		const Gearom__Graph *g = m->graphs[i];
		json_object *o = json_object_new_object(),
			    *subs = json_object_new_array();
		for (size_t j = i + 1; j < m->n_graphs; j++)
			if (m->graphs[j]->has_parent &&
			    m->graphs[j]->parent == (int)i)
				json_object_array_add(subs,
						      jstr(m->graphs[j]->name));
		jadd(o, "name", jstr(g->name));
		jadd(o, "nodes", jint((int64_t)g->n_nodes));
		jadd(o, "tensors", jint((int64_t)g->n_tensors));
		jadd(o, "parent", g->has_parent && g->parent >= 0
					  ? jstr(m->graphs[g->parent]->name)
					  : NULL);
		jadd(o, "subgraphs", subs);
		json_graph_role(o, &roles, i);
		json_object_array_add(a, o);
	}
	roles_release(&roles);
	return a;
}

/* ---- JSON: scopes ------------------------------------------------------------ */

static json_object *jnames(const Gearom__Graph *g, const int32_t *t, size_t n)
{
	json_object *a = json_object_new_array_ext((int)n);
	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, jstr(g->tensors[t[i]]->name));
	return a;
}

/* Clone c of a scope: its graph, row of the dims table, gears, size. */
static json_object *json_clone(const Gearom__Model *m, const ScopeAttrs *s,
			       size_t c)
{
	const Gearom__Attribute *map = s->map, *tab = s->tab;
	int32_t gi = s->br->graphs[c];
	json_object *o = json_object_new_object(), *gears = json_object_new_array();
	size_t w = tab && s->br->n_graphs ? tab->n_ints / s->br->n_graphs : 0;
	jadd(o, "graph", jstr(m->graphs[gi]->name));
	jadd(o, "dims", w ? jdims(tab->ints + c * w, w) : NULL);
	for (size_t g = 0; map && g < map->n_ints; g++)
		if (map->ints[g] == (int64_t)c)
			json_object_array_add(gears, jint((int64_t)g));
	jadd(o, "gears", gears);
	jadd(o, "nodes", jint((int64_t)nodes_below(m, (size_t)gi)));
	jadd(o, "memory", json_plan(m->graphs[gi]->plan));
	return o;
}

static json_object *json_scope_region(const Gearom__Model *m, size_t body)
{
	const Gearom__Graph *b = m->graphs[body];
	ScopeAttrs s = scope_attrs(m, body);
	const Gearom__Attribute *why = s.why, *map = s.map, *order = s.order;
	json_object *o = json_object_new_object(), *a;
	jadd(o, "name", jstr(s.call ? s.call->name : b->name));
	jadd(o, "graph", jstr(b->name));
	jadd(o, "scope", why ? json_object_new_string_len(
				       (const char *)why->s.data, (int)why->s.len)
			     : NULL);
	jadd(o, "inputs", jnames(b, b->inputs, b->n_inputs));
	a = json_object_new_array();
	for (size_t i = 0; order && i < order->n_strings; i++)
		json_object_array_add(a, json_object_new_string_len(
			(const char *)order->strings[i].data,
			(int)order->strings[i].len));
	jadd(o, "selector", a);
	jadd(o, "outputs", jnames(b, b->outputs, b->n_outputs));
	jadd(o, "gear_map", map ? jdims(map->ints, map->n_ints) : NULL);
	a = json_object_new_array();
	for (size_t c = 0; s.br && c < s.br->n_graphs; c++)
		json_object_array_add(a, json_clone(m, &s, c));
	jadd(o, "clones", a);
	return o;
}

/* "scope": null without --gear_scope; else the scopes, their tables and
 * clones, and how many nodes are shared by every gear or per gear. */
static json_object *json_scope(const Gearom__Model *m)
{
	const char *opt = om_option(m, "gear_scope");
	Roles r;
	size_t shared, per;
	find_roles(m, &r);
	json_object *o = json_object_new_object(), *regions = json_object_new_array();
	for (size_t gi = 0; gi < m->n_graphs; gi++)
		if (r.role[gi] == ROLE_SCOPE)
			json_object_array_add(regions, json_scope_region(m, gi));
	scope_counts(m, &r, &shared, &per);
	roles_release(&r);
	if (!opt && !json_object_array_length(regions)) {
		json_object_put(o);
		json_object_put(regions);
		return NULL;
	}
	jadd(o, "option", opt ? jstr(opt) : NULL);
	jadd(o, "applied", json_object_new_boolean(
				    json_object_array_length(regions) > 0));
	jadd(o, "nodes", jint((int64_t)(shared + per)));
	jadd(o, "shared_nodes", jint((int64_t)shared));
	jadd(o, "per_gear_nodes", jint((int64_t)per));
	jadd(o, "regions", regions);
	return o;
}

/* A graph's role and whether every gear runs it. */
static void json_graph_role(json_object *o, const Roles *r, size_t gi)
{
	jadd(o, "role", jstr(role_names[r->role[gi]]));
	jadd(o, "shared", json_object_new_boolean(r->shared[gi]));
}

/* A tensor's dims with symbols: [1, 3, 48, "W"]; null for unknown rank. */
static json_object *json_sym_dims(const Gearom__Tensor *t)
{
	if (t->has_rank && t->rank < 0)
		return NULL;
	json_object *a = json_object_new_array_ext((int)t->n_dims);
	for (size_t k = 0; k < t->n_dims; k++) {
		const char *sym = dim_symbol(t, k);
		json_object_array_add(a, sym ? jstr(sym) : jint(t->dims[k]));
	}
	return a;
}

/* A tensor's name, dtype, shape and dims (hybrid's inputs and outputs,
 * and the start of its --detail entry). */
static json_object *json_tensor(const Gearom__Tensor *t)
{
	json_object *o = json_object_new_object();
	jadd(o, "name", jstr(t->name));
	jadd(o, "dtype", jstr(dt_name(t->has_dtype, t->dtype)));
	jadd(o, "shape", jshape(t->has_rank, t->rank, t->dims, t->n_dims));
	jadd(o, "dims", json_sym_dims(t));
	return o;
}

static json_object *json_graph_io(const Gearom__Graph *g, const int32_t *ids,
				  size_t n)
{
	json_object *a = json_object_new_array_ext((int)n);
	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, json_tensor(g->tensors[ids[i]]));
	return a;
}

/* Every partition of the file, graph by graph, in node order. */
/* atc's --precision_mode as compiled: null without one, else {"mode",
 * "dtype": what the nodes marked reduced may compute in (or null),
 * "reduced_nodes": how many, in every graph}. */
static json_object *json_precision(const Gearom__Model *m)
{
	const Gearom__Precision *p = m->precision;
	if (!p)
		return NULL;
	size_t n = 0;
	for (size_t g = 0; g < m->n_graphs; g++)
		for (size_t i = 0; i < m->graphs[g]->n_nodes; i++)
			n += m->graphs[g]->nodes[i]->reduced;
	json_object *o = json_object_new_object();
	jadd(o, "mode", jstr(p->mode ? p->mode : ""));
	jadd(o, "dtype", p->has_dtype && p->dtype ? jstr(dtype_name(p->dtype))
						  : NULL);
	jadd(o, "reduced_nodes", jint((int64_t)n));
	return o;
}

/* Whether the gears' batch may be padded (passes/batchrows.c): null
 * where the compile has no batch, else {"independent": true, "axes": [per
 * output], "input_axes": [per input]} (-1: no batch) or {"independent":
 * false, "mixer": "node 'N' (Op) mixes the rows"}. */
static json_object *json_batch_rows(const Gearom__Model *m)
{
	const Gearom__BatchRows *b = m->batch_rows;
	if (!b)
		return NULL;
	json_object *o = json_object_new_object();
	bool mixed = b->mixer && *b->mixer;
	jadd(o, "independent", json_object_new_boolean(!mixed));
	if (mixed) {
		jadd(o, "mixer", jstr(b->mixer));
		return o;
	}
	json_object *a = json_object_new_array();
	for (size_t k = 0; k < b->n_axis; k++)
		json_object_array_add(a, jint(b->axis[k]));
	jadd(o, "axes", a);
	a = json_object_new_array();
	for (size_t k = 0; k < b->n_input_axis; k++)
		json_object_array_add(a, jint(b->input_axis[k]));
	jadd(o, "input_axes", a);
	return o;
}

static json_object *json_partitions(const Gearom__Model *m)
{
	json_object *a = json_object_new_array();
	char buf[16];
	for (size_t gi = 0; gi < m->n_graphs; gi++) {
		const Gearom__Graph *g = m->graphs[gi];
		for (size_t i = 0; i < g->n_nodes; i++) {
			int32_t s;
			const char *kind = partition_of(g->nodes[i], &s, buf,
							sizeof(buf));
			if (!kind)
				continue;
			const Gearom__Graph *sub = m->graphs[s];
			json_object *o = json_object_new_object();
			jadd(o, "graph", jstr(g->name));
			jadd(o, "name", jstr(sub->name));
			jadd(o, "kind", jstr(kind));
			jadd(o, "nodes", jint((int64_t)sub->n_nodes));
			jadd(o, "inputs", jint((int64_t)sub->n_inputs));
			jadd(o, "outputs", jint((int64_t)sub->n_outputs));
			jadd(o, "memory", sub->plan ? json_plan(sub->plan) : NULL);
			json_object_array_add(a, o);
		}
	}
	return a;
}

/* The hybrid section: null unless the file is a --hybrid compile. */
static json_object *json_hybrid(const Gearom__Model *m)
{
	const Gearom__Node *cs = hybrid_case(m);
	char rule[256];
	if (!cs)
		return NULL;
	int32_t gi = om_attr(cs, HYBRID_GRAPH_ATTR)->g;
	const Gearom__Graph *g = m->graphs[gi];
	json_object *o = json_object_new_object();
	jadd(o, "rule", jstr(om_attr_cstr(om_attr(cs, HYBRID_RULE_ATTR),
				       rule, sizeof(rule))));
	jadd(o, "dynamic_graph", jstr(g->name));
	jadd(o, "inputs", json_graph_io(g, g->inputs, g->n_inputs));
	jadd(o, "outputs", json_graph_io(g, g->outputs, g->n_outputs));
	jadd(o, "nodes", jint((int64_t)nodes_below(m, (size_t)gi)));
	jadd(o, "memory", json_plan(g->plan));
	return o;
}

json_object *om_json(const OmFile *f, const char *path)
{
	const Gearom__Model *m = f->model;
	json_object *o = json_object_new_object(), *a, *p;

	jadd(o, "format", jstr("gearom"));
	jadd(o, "format_version", jint(OM_VERSION));
	p = json_object_new_object();
	jadd(p, "name", jstr(m->producer ? m->producer->name : ""));
	jadd(p, "version", jstr(m->producer ? m->producer->version : ""));
	jadd(o, "producer", p);
	jadd(o, "source", json_source(m->source));
	jadd(o, "mode", jstr(mode_name(m)));
	jadd(o, "gear_count", jint((int64_t)m->n_gears));

	a = json_object_new_array();
	for (size_t i = 0; i < m->n_inputs; i++)
		json_object_array_add(a, json_io(m->inputs[i], true));
	jadd(o, "inputs", a);
	a = json_object_new_array();
	for (size_t i = 0; i < m->n_outputs; i++)
		json_object_array_add(a, json_io(m->outputs[i], false));
	jadd(o, "outputs", a);
	a = json_object_new_array();
	for (size_t i = 0; i < m->n_gears; i++)
		json_object_array_add(a, json_gear(m, m->gears[i]));
	jadd(o, "gears", a);

	jadd(o, "memory", json_memory(m));
	size_t count;
	p = json_object_new_object();
	jadd(p, "bytes", juint(weights_sum(m, false, &count)));
	jadd(p, "count", jint((int64_t)count));
	size_t half = 0;
	for (size_t i = 0; i < m->n_weights; i++)
		half += m->weights[i]->has_stored_dtype;
	jadd(p, "stored_float16", jint((int64_t)half));
	jadd(o, "weights", p);
	jadd(o, "precision", json_precision(m));
	jadd(o, "graphs", json_graphs(m));
	jadd(o, "scope", json_scope(m));
	jadd(o, "hybrid", json_hybrid(m));
	jadd(o, "partitions", json_partitions(m));
	jadd(o, "batch_rows", json_batch_rows(m));

	/* Extras beyond the contract. */
	p = json_object_new_object();
	jadd(p, "bytes", juint(weights_sum(m, true, &count)));
	jadd(p, "count", jint((int64_t)count));
	jadd(o, "constants", p);
	p = json_object_new_object();
	for (size_t i = 0; i < m->n_options; i++)
		jadd(p, m->options[i]->key ? m->options[i]->key : "",
		     jstr(m->options[i]->value));
	jadd(o, "options", p);
	p = json_object_new_object();
	jadd(p, "path", jstr(path));
	jadd(p, "bytes", juint(f->size));
	jadd(o, "file", p);
	return o;
}

/* ---- JSON: --detail and pinned inputs ---------------------------------- */

/* Per tensor of g, its block in g's plan or NULL (malloc'd). */
static const Gearom__MemBlock **blocks_by_tensor(const Gearom__Graph *g)
{
	const Gearom__MemBlock **by = xcalloc(g->n_tensors + 1, sizeof(*by));
	for (size_t i = 0; g->plan && i < g->plan->n_blocks; i++) {
		const Gearom__MemBlock *b = g->plan->blocks[i];
		if (b->node < 0 && b->tensor >= 0)
			by[b->tensor] = b;
	}
	return by;
}

static const char *kind_name(const Gearom__Tensor *t)
{
	static const char *const k[] = { "node", "input", "weight", "outer" };
	int v = t->has_kind ? (int)t->kind : 0;
	return v >= 0 && v < 4 ? k[v] : "?";
}

/* A protobuf bytes field as a JSON string (an empty one has no data). */
static json_object *jbytes(ProtobufCBinaryData b)
{
	return b.len ? json_object_new_string_len((const char *)b.data,
						  (int)b.len)
		     : jstr("");
}

/* An attribute's value as JSON: numbers, strings and lists as they are,
 * a graph by name, a tensor by dtype and dims (its bytes are not shown). */
static json_object *json_attr(const Gearom__Model *m,
			      const Gearom__Attribute *a)
{
	json_object *v;
	switch (a->has_type ? a->type : 0) {
	case 1: return json_object_new_double(a->f);
	case 2: return jint(a->i);
	case 3: return jbytes(a->s);
	case 4:
		v = json_object_new_object();
		if (a->t >= 0 && (size_t)a->t < m->n_weights) {
			const Gearom__Weight *w = m->weights[a->t];
			jadd(v, "dtype", jstr(dt_name(w->has_dtype, w->dtype)));
			jadd(v, "shape", jdims(w->dims, w->n_dims));
		}
		return v;
	case 5: return jstr(a->g >= 0 ? m->graphs[a->g]->name : "");
	case 6:
		v = json_object_new_array();
		for (size_t i = 0; i < a->n_floats; i++)
			json_object_array_add(v,
					      json_object_new_double(a->floats[i]));
		return v;
	case 7: return jdims(a->ints, a->n_ints);
	case 8:
		v = json_object_new_array();
		for (size_t i = 0; i < a->n_strings; i++)
			json_object_array_add(v, jbytes(a->strings[i]));
		return v;
	case 10:
		v = json_object_new_array();
		for (size_t i = 0; i < a->n_graphs; i++)
			json_object_array_add(v,
					      jstr(m->graphs[a->graphs[i]]->name));
		return v;
	}
	return NULL;
}

static json_object *json_refs(const Gearom__Graph *g, const int32_t *t,
			      size_t n)
{
	json_object *a = json_object_new_array_ext((int)n);
	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, t[i] >= 0 ? jstr(g->tensors[t[i]]->name)
						   : NULL);
	return a;
}

static json_object *json_node_detail(const Gearom__Model *m,
				     const Gearom__Graph *g,
				     const Gearom__Node *n)
{
	json_object *o = json_object_new_object(),
		    *at = json_object_new_object();
	jadd(o, "name", jstr(n->name));
	jadd(o, "op", jstr(n->op_type));
	if (n->domain && *n->domain)
		jadd(o, "domain", jstr(n->domain));
	jadd(o, "inputs", json_refs(g, n->inputs, n->n_inputs));
	jadd(o, "outputs", json_refs(g, n->outputs, n->n_outputs));
	for (size_t i = 0; i < n->n_attrs; i++)
		jadd(at, n->attrs[i]->name ? n->attrs[i]->name : "",
		     json_attr(m, n->attrs[i]));
	jadd(o, "attributes", at);
	if (n->label)
		jadd(o, "label", jstr(n->label));
	if (n->n_fused) {
		json_object *f = json_object_new_array_ext((int)n->n_fused);
		for (size_t i = 0; i < n->n_fused; i++)
			json_object_array_add(f, jstr(n->fused[i]));
		jadd(o, "fused", f);
	}
	return o;
}

static json_object *json_tensor_detail(const Gearom__Graph *g, size_t ti,
				       const Gearom__MemBlock *b)
{
	const Gearom__Tensor *t = g->tensors[ti];
	json_object *o = json_tensor(t);
	bool known = !t->has_rank || t->rank >= 0;
	int64_t numel = known ? 1 : -1;
	for (size_t k = 0; known && k < t->n_dims; k++)
		numel = t->dims[k] < 0 || numel < 0 ? -1 : numel * t->dims[k];
	size_t sz = dtype_size(t->has_dtype ? t->dtype : 0);
	jadd(o, "kind", jstr(kind_name(t)));
	jadd(o, "bytes", numel >= 0 && sz ? jint(numel * (int64_t)sz) : NULL);
	jadd(o, "offset", b ? juint(b->offset) : NULL);
	jadd(o, "alias_of", b && b->alias_of >= 0
				    ? jstr(g->tensors[b->alias_of]->name)
				    : NULL);
	jadd(o, "inplace", json_object_new_boolean(b && b->alias_of >= 0 &&
						   b->inplace));
	return o;
}

/* {"nodes": [...], "tensors": [...], "memory": {...}} of graph gi: the
 * --detail contract (man/gearc.1); memory is null without a plan. */
static json_object *json_graph_detail(const Gearom__Model *m, size_t gi)
{
	const Gearom__Graph *g = m->graphs[gi];
	const Gearom__MemBlock **by = blocks_by_tensor(g);
	json_object *o = json_object_new_object(),
		    *nodes = json_object_new_array_ext((int)g->n_nodes),
		    *tensors = json_object_new_array_ext((int)g->n_tensors);
	for (size_t i = 0; i < g->n_nodes; i++)
		json_object_array_add(nodes, json_node_detail(m, g, g->nodes[i]));
	for (size_t t = 0; t < g->n_tensors; t++)
		json_object_array_add(tensors, json_tensor_detail(g, t, by[t]));
	free(by);
	jadd(o, "nodes", nodes);
	jadd(o, "tensors", tensors);
	jadd(o, "memory", g->plan ? json_plan(g->plan) : NULL);
	return o;
}

/* --detail: the entries of the document's "graphs" (sel's, or all) get
 * "index" and "detail". */
static void json_add_detail(json_object *doc, const Gearom__Model *m,
			    const bool *sel)
{
	json_object *graphs = jget(doc, "graphs");
	for (size_t gi = 0; gi < jlen(graphs); gi++) {
		json_object *o = jat(graphs, gi);
		if (sel && !sel[gi])
			continue;
		jadd(o, "index", jint((int64_t)gi));
		jadd(o, "detail", json_graph_detail(m, gi));
	}
}

/* A pinned value as JSON: an integer or a number as written. */
static json_object *json_number(const char *s)
{
	int64_t v;
	char *end;
	if (parse_i64(s, strlen(s), &v))
		return jint(v);
	double d = strtod(s, &end);
	return *s && !*end ? json_object_new_double(d) : jstr(s);
}

static void json_pin(void *ctx, char *name, char *vals)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	char *save = NULL;
	for (char *v = strtok_r(vals, ",", &save); v; v = strtok_r(NULL, ",", &save))
		json_object_array_add(a, json_number(v));
	jadd(o, "name", jstr(name));
	jadd(o, "values", a);
	json_object_array_add(ctx, o);
}

/* "pinned": [{"name": "sr", "values": [16000]}]: inputs --input_value
 * made constants. */
static json_object *json_pinned(const Gearom__Model *m)
{
	json_object *a = json_object_new_array();
	each_pinned(om_option(m, "input_value"), json_pin, a);
	return a;
}

static bool is_container(json_object *v)
{
	return json_object_is_type(v, json_type_object) ||
	       json_object_is_type(v, json_type_array);
}

/* Pretty JSON with two-space indents, but an array holding no objects or
 * arrays (a shape, a gear's dims) stays on one line: [2, 4, 5, 4]. */
static void json_print(FILE *f, json_object *v, int indent)
{
	if (json_object_is_type(v, json_type_object)) {
		int n = 0;
		fputc('{', f);
		json_object_object_foreach(v, key, val)
		{
			json_object *k = json_object_new_string(key);
			fprintf(f, "%s\n%*s%s: ", n++ ? "," : "", indent + 2, "",
				json_object_to_json_string_ext(
					k, JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(k);
			json_print(f, val, indent + 2);
		}
		fprintf(f, n ? "\n%*s}" : "}", indent, "");
		return;
	}
	if (json_object_is_type(v, json_type_array)) {
		size_t n = json_object_array_length(v);
		bool flat = true;
		for (size_t i = 0; i < n && flat; i++)
			flat = !is_container(json_object_array_get_idx(v, i));
		fputc('[', f);
		for (size_t i = 0; i < n; i++) {
			if (flat)
				fputs(i ? ", " : "", f);
			else
				fprintf(f, "%s\n%*s", i ? "," : "", indent + 2, "");
			json_print(f, json_object_array_get_idx(v, i), indent + 2);
		}
		if (!flat && n)
			fprintf(f, "\n%*s", indent, "");
		fputc(']', f);
		return;
	}
	fputs(json_object_to_json_string_ext(v, JSON_C_TO_STRING_NOSLASHESCAPE),
	      f);
}

/* ---- text: the document read back ------------------------------------- */

/* The text dump prints the document the JSON dump prints (om_json() and
 * json_graph_detail(), where the facts are gathered), in lines for
 * people.  Its names were escaped for a terminal (ESC_CONTROLS) before
 * the document was built. */

/* A shape or dims of the document: [1,3,48,W]; null (unknown rank) is
 * [?]. */
static void text_dims(json_object *a)
{
	if (!a) {
		fputs("[?]", stdout);
		return;
	}
	fputc('[', stdout);
	for (size_t i = 0; i < jlen(a); i++) {
		json_object *d = jat(a, i);
		fputs(i ? "," : "", stdout);
		if (json_object_is_type(d, json_type_string))
			fputs(json_object_get_string(d), stdout);
		else
			printf("%lld", (long long)json_object_get_int64(d));
	}
	fputc(']', stdout);
}

static void text_source(json_object *s)
{
	printf("source:    %s (", jgets(s, "file"));
	if (*jgets(s, "graph"))
		printf("graph %s, ", jgets(s, "graph"));
	printf("ir_version %lld", jgeti(s, "ir_version"));
	json_object_object_foreach(jget(s, "opsets"), dom, ver)
		printf(", opset %s %lld", *dom ? dom : "ai.onnx",
		       (long long)json_object_get_int64(ver));
	printf(")\n");
	if (*jgets(s, "sha256"))
		printf("sha256:    %s\n", jgets(s, "sha256"));
}

static void text_pin(void *ctx, char *name, char *vals)
{
	(void)ctx;
	printf("pinned:    %s = %s%s%s\n", name, strchr(vals, ',') ? "[" : "",
	       vals, strchr(vals, ',') ? "]" : "");
}

/* Options, and the inputs pinned as --input_value wrote them. */
static void text_options(json_object *opts)
{
	json_object_object_foreach(opts, key, val)
		printf("option:    --%s=%s\n", key,
		       json_object_get_string(val));
	each_pinned(json_object_get_string(jget(opts, "input_value")),
		    text_pin, NULL);
}

static void text_weights(json_object *doc)
{
	json_object *w = jget(doc, "weights"), *c = jget(doc, "constants");
	printf("weights:   %lld tensors, %llu bytes", jgeti(w, "count"),
	       jgetu(w, "bytes"));
	if (jgeti(w, "stored_float16"))
		printf(" (%lld float32 stored as float16)",
		       jgeti(w, "stored_float16"));
	printf("\n");
	if (jgeti(c, "count"))
		printf("constants: %lld computed by gearc, %llu bytes\n",
		       jgeti(c, "count"), jgetu(c, "bytes"));
}

/* "batch: rows independent", and where the batch is: "axis 0 of x". */
static void text_batch(json_object *axes, json_object *inputs)
{
	printf("batch:     rows independent (a run may pad them to a larger "
	       "gear): axis");
	for (size_t k = 0, n = 0; k < jlen(axes); k++) {
		int64_t a = json_object_get_int64(jat(axes, k));
		if (a >= 0)
			printf("%s %lld of %s", n++ ? "," : "", (long long)a,
			       jgets(jat(inputs, k), "name"));
	}
	printf("\n");
}

/* The model's arena, when a plan is recorded. */
static void text_arena(json_object *doc)
{
	json_object *mm = jget(doc, "memory");
	json_object *g0 = jget(jat(jget(doc, "gears"), 0), "memory");
	unsigned long long a = jgetu(mm, "arena_bytes"),
			   lb = jgetu(mm, "lower_bound_bytes");
	if (!jget(mm, "arena_bytes"))
		return;
	printf("arena:     %llu bytes (lower bound %llu, x%.3f; naive "
	       "%llu)%s\n", a, lb, plan_ratio(a, lb), jgetu(mm, "naive_bytes"),
	       jget(g0, "arena_bytes") ? ", the largest gear's plus the root's"
				       : "");
}

static void text_head(json_object *doc)
{
	json_object *file = jget(doc, "file"), *p = jget(doc, "producer");
	printf("file:      %s (%llu bytes, gearom format %lld)\n",
	       jgets(file, "path"), jgetu(file, "bytes"),
	       jgeti(doc, "format_version"));
	printf("producer:  %s %s\n", jgets(p, "name"), jgets(p, "version"));
	text_source(jget(doc, "source"));
	printf("mode:      %s, %lld gears\n", jgets(doc, "mode"),
	       jgeti(doc, "gear_count"));
	json_object *br = jget(doc, "batch_rows");
	if (br && json_object_get_boolean(jget(br, "independent")))
		text_batch(jget(br, "input_axes"), jget(doc, "inputs"));
	else if (br)
		printf("batch:     rows may not be padded: %s\n",
		       jgets(br, "mixer"));
	text_options(jget(doc, "options"));
	text_weights(doc);
	json_object *pr = jget(doc, "precision");
	if (pr && jget(pr, "dtype"))
		printf("precision: %s: %lld nodes may compute in %s (float32 on "
		       "a CPU without it)\n", jgets(pr, "mode"),
		       jgeti(pr, "reduced_nodes"), jgets(pr, "dtype"));
	else if (pr)
		printf("precision: %s: float32\n", jgets(pr, "mode"));
	text_arena(doc);
}

/* The model's inputs or outputs; an input's max_shape where it is not
 * its shape. */
static void text_io(const char *title, json_object *a)
{
	printf("%s:\n", title);
	for (size_t i = 0; i < jlen(a); i++) {
		json_object *io = jat(a, i), *shape = jget(io, "shape"),
			    *max = jget(io, "max_shape");
		printf("  %-24s %-8s ", jgets(io, "name"), jgets(io, "dtype"));
		text_dims(shape);
		if (max && !json_object_equal(max, shape)) {
			fputs("  max ", stdout);
			text_dims(max);
		}
		fputc('\n', stdout);
	}
}

/* Lines "    in  NAME [dims]" ("out", with bytes where known) of a gear
 * or of the hybrid's dynamic graph; key is "shape" or "dims". */
static void text_shapes(const char *dir, json_object *a, const char *key)
{
	for (size_t i = 0; i < jlen(a); i++) {
		json_object *t = jat(a, i), *bytes = jget(t, "bytes");
		printf("    %s %-20s ", dir, jgets(t, "name"));
		text_dims(jget(t, key));
		if (bytes)
			printf("  %llu bytes", jgetu(t, "bytes"));
		fputc('\n', stdout);
	}
}

static void text_gear(json_object *g)
{
	json_object *mem = jget(g, "memory");
	unsigned long long a = jgetu(mem, "arena_bytes"),
			   lb = jgetu(mem, "lower_bound_bytes");
	printf("  %-10s dims ", jgets(g, "label"));
	text_dims(jget(g, "dims"));
	if (jget(mem, "arena_bytes"))
		printf("  arena %llu bytes (lower bound %llu, x%.3f)", a, lb,
		       plan_ratio(a, lb));
	fputc('\n', stdout);
	text_shapes("in ", jget(g, "inputs"), "shape");
	text_shapes("out", jget(g, "outputs"), "shape");
}

/* What --summary shows: the header, inputs, outputs and gears. */
static void text_summary(json_object *doc)
{
	json_object *gears = jget(doc, "gears");
	text_head(doc);
	text_io("inputs", jget(doc, "inputs"));
	text_io("outputs", jget(doc, "outputs"));
	if (jlen(gears))
		printf("gears:\n");
	for (size_t i = 0; i < jlen(gears); i++)
		text_gear(jat(gears, i));
}

/* One clone of a scope: its dims, gears, nodes and arena. */
static void text_clone(json_object *c)
{
	json_object *dims = jget(c, "dims"), *gears = jget(c, "gears"),
		    *mem = jget(c, "memory");
	printf("    %-20s dims ", jgets(c, "graph"));
	if (dims)
		text_dims(dims);
	else
		fputs("[]", stdout);
	printf("  gears");
	for (size_t g = 0; g < jlen(gears); g++)
		printf(" %lld",
		       (long long)json_object_get_int64(jat(gears, g)));
	printf("  %lld nodes", jgeti(c, "nodes"));
	if (jget(mem, "arena_bytes"))
		printf("  arena %llu bytes", jgetu(mem, "arena_bytes"));
	fputc('\n', stdout);
}

/* A scope (by its body graph's name) and its clones. */
static void text_region(json_object *r)
{
	json_object *clones = jget(r, "clones");
	size_t n = jlen(clones);
	printf("  %s: %zu clone%s\n", jgets(r, "graph"), n, n == 1 ? "" : "s");
	for (size_t c = 0; c < n; c++)
		text_clone(jat(clones, c));
}

/* "scope:" lines: what --gear_scope did, each scope's clones and gears. */
static void text_scope(json_object *s)
{
	json_object *regions = jget(s, "regions");
	size_t n = jlen(regions);
	const char *opt = jgets(s, "option");
	if (!jget(s, "option"))
		return;
	if (!n)
		printf("scope:     --gear_scope=%s kept the full clone (no "
		       "smaller scoping found); %lld nodes\n", opt,
		       jgeti(s, "nodes"));
	else
		printf("scope:     --gear_scope=%s: %zu scope%s; %lld nodes "
		       "shared by every gear, %lld in clones (%lld in all)\n",
		       opt, n, n == 1 ? "" : "s", jgeti(s, "shared_nodes"),
		       jgeti(s, "per_gear_nodes"), jgeti(s, "nodes"));
	for (size_t i = 0; i < n; i++)
		text_region(jat(regions, i));
}

/* "hybrid:" lines: the rule, and the dynamic graph's size, inputs and
 * outputs. */
static void text_hybrid(json_object *h)
{
	json_object *mem = jget(h, "memory");
	if (!h)
		return;
	printf("hybrid:    %s\n", jgets(h, "rule"));
	printf("  dynamic graph %s: %lld nodes", jgets(h, "dynamic_graph"),
	       jgeti(h, "nodes"));
	if (jget(mem, "arena_bytes"))
		printf(", arena %llu bytes", jgetu(mem, "arena_bytes"));
	fputc('\n', stdout);
	text_shapes("in ", jget(h, "inputs"), "dims");
	text_shapes("out", jget(h, "outputs"), "dims");
}

static void text_partitions(json_object *a)
{
	for (size_t i = 0; i < jlen(a); i++) {
		json_object *p = jat(a, i), *mem = jget(p, "memory");
		if (!i)
			printf("partitions:\n");
		printf("  %-10s %-24s %-7s %4lld nodes", jgets(p, "graph"),
		       jgets(p, "name"), jgets(p, "kind"), jgeti(p, "nodes"));
		if (mem)
			printf("  arena %llu bytes", jgetu(mem, "arena_bytes"));
		else
			printf("  dynamic");
		fputc('\n', stdout);
	}
}

/* "  memory: ..." line of a graph's plan (json_plan()). */
static void text_plan(json_object *p)
{
	unsigned long long a = jgetu(p, "arena_bytes"),
			   lb = jgetu(p, "lower_bound_bytes");
	printf("  memory: arena %llu bytes, lower bound %llu (x%.3f), naive "
	       "%llu; tensors %lld (%lld views, %lld in place)", a, lb,
	       plan_ratio(a, lb), jgetu(p, "naive_bytes"), jgeti(p, "tensors"),
	       jgeti(p, "views"), jgeti(p, "inplace"));
	if (jgeti(p, "workspaces"))
		printf(", %lld subgraph workspaces", jgeti(p, "workspaces"));
	if (jgeti(p, "unplanned"))
		printf(", %lld not planned (shapes not static)",
		       jgeti(p, "unplanned"));
	fputc('\n', stdout);
}

/* A graph's detail tensors by name (the first of a name), for the node
 * listing, which names them. */
static json_object *tensors_by_name(json_object *tensors)
{
	json_object *by = json_object_new_object();
	for (size_t i = jlen(tensors); i-- > 0;)
		jadd(by, jgets(jat(tensors, i), "name"),
		     json_object_get(jat(tensors, i)));
	return by;
}

/* " @offset", and what it shares, after a tensor in the node listing. */
static void text_place(json_object *t)
{
	json_object *alias = jget(t, "alias_of");
	bool inplace = json_object_get_boolean(jget(t, "inplace"));
	if (!jget(t, "offset"))
		return;
	printf(" @%llu", jgetu(t, "offset"));
	if (alias)
		printf(" (%s %s)", inplace ? "in place of" : "view of",
		       json_object_get_string(alias));
}

/* A node's inputs or outputs, "-" for an omitted one; with by (the
 * outputs), each one's dims and place. */
static void text_refs(json_object *a, json_object *by)
{
	for (size_t k = 0; k < jlen(a); k++) {
		const char *name = json_object_get_string(jat(a, k));
		fputs(k ? ", " : "", stdout);
		fputs(name ? name : "-", stdout);
		if (!name || !by)
			continue;
		fputc(' ', stdout);
		text_dims(jget(jget(by, name), "dims"));
		text_place(jget(by, name));
	}
}

/* " [Relu, Clip(0,6)]": a fused node's activations, in order, and
 * "+Z" where FusedConv's Z is added after some of them (z_after). */
static void text_fused(json_object *n)
{
	json_object *p = jget(jget(n, "attributes"), FUSED_ACT_PARAMS_ATTR),
		    *a = NULL;
	int64_t zk = json_object_get_int64(
		jget(jget(n, "attributes"), FUSED_Z_AFTER_ATTR));
	if (strcmp(jgets(n, "domain"), GEARC_DOMAIN) ||
	    !json_object_object_get_ex(jget(n, "attributes"), FUSED_ACTS_ATTR,
				       &a))
		return;
	fputs(" [", stdout);
	for (size_t i = 0; i < jlen(a); i++) {
		double x = json_object_get_double(jat(p, 2 * i)),
		       y = json_object_get_double(jat(p, 2 * i + 1));
		printf("%s%s", i ? ", " : "",
		       json_object_get_string(jat(a, i)));
		if (2 * i + 1 < jlen(p) && (x || y))
			printf("(%g,%g)", x, y);
		if (zk > 0 && (size_t)zk == i + 1)
			fputs(", +Z", stdout);
	}
	fputc(']', stdout);
}

/* " [scale 0.125, causal upper-left, q_perm 0,2,1,3]": an Sdpa's
 * attributes (compiler/ops/attention.c), those that are set. */
static void text_sdpa(json_object *n)
{
	static const char *const perms[] = { SDPA_Q_PERM_ATTR,
					     SDPA_K_PERM_ATTR,
					     SDPA_V_PERM_ATTR,
					     SDPA_Y_PERM_ATTR };
	json_object *at = jget(n, "attributes");
	if (strcmp(jgets(n, "domain"), GEARC_DOMAIN) ||
	    strcmp(jgets(n, "op"), "Sdpa"))
		return;
	printf(" [scale %g",
	       json_object_get_double(jget(at, SDPA_SCALE_ATTR)));
	int64_t c = json_object_get_int64(jget(at, SDPA_CAUSAL_ATTR));
	if (c)
		printf(", causal %s", c == 1 ? "upper-left" : "lower-right");
	for (size_t k = 0; k < sizeof(perms) / sizeof(perms[0]); k++) {
		json_object *p = jget(at, perms[k]);
		if (!p)
			continue;
		printf(", %s ", perms[k]);
		for (size_t i = 0; i < jlen(p); i++)
			printf("%s%lld", i ? "," : "",
			       (long long)json_object_get_int64(jat(p, i)));
	}
	fputc(']', stdout);
}

/* A line per node: index, op, name, inputs -> outputs with their dims
 * and places, fused activations, an Sdpa's attributes. */
static void text_nodes(json_object *detail)
{
	json_object *nodes = jget(detail, "nodes"),
		    *by = tensors_by_name(jget(detail, "tensors"));
	for (size_t i = 0; i < jlen(nodes); i++) {
		json_object *n = jat(nodes, i);
		printf("  %4zu  %-20s %-24s ", i, jgets(n, "op"),
		       jgets(n, "name"));
		text_refs(jget(n, "inputs"), NULL);
		fputs(" -> ", stdout);
		text_refs(jget(n, "outputs"), by);
		text_fused(n);
		text_sdpa(n);
		fputc('\n', stdout);
	}
	json_object_put(by);
}

/* A graph (its entry in "graphs" and its detail): header, plan, nodes;
 * in a scope compile, whether every gear runs it. */
static void text_graph(json_object *g, json_object *detail, bool scoped)
{
	json_object *parent = jget(g, "parent"), *mem = jget(detail, "memory");
	printf("\ngraph %s: %lld nodes, %lld tensors", jgets(g, "name"),
	       jgeti(g, "nodes"), jgeti(g, "tensors"));
	if (parent)
		printf(", inside %s", json_object_get_string(parent));
	if (scoped)
		fputs(json_object_get_boolean(jget(g, "shared"))
			      ? " [shared by every gear]"
			      : " [per gear]",
		      stdout);
	fputs("\n", stdout);
	if (mem)
		text_plan(mem);
	text_nodes(detail);
}

/* The document's graphs (sel's, or all).  Each one's detail is built as
 * it is printed, so that a large file's text dump holds one at a time
 * (bench_rec at 100 gears: 46 MB at the peak, 315 MB with all of them). */
static void text_graphs(json_object *doc, const Gearom__Model *m,
			const bool *sel)
{
	json_object *graphs = jget(doc, "graphs");
	bool scoped = jget(jget(doc, "options"), "gear_scope") != NULL;
	for (size_t gi = 0; gi < jlen(graphs); gi++) {
		if (sel && !sel[gi])
			continue;
		json_object *detail = json_graph_detail(m, gi);
		text_graph(jat(graphs, gi), detail, scoped);
		json_object_put(detail);
	}
}

/* ---- DOT ----------------------------------------------------------------- */

/* [1,3,32,32], or [?] if !known. */
static void print_dims(const int64_t *d, size_t n, bool known)
{
	if (!known) {
		fputs("[?]", stdout);
		return;
	}
	fputc('[', stdout);
	for (size_t i = 0; i < n; i++)
		printf("%s%lld", i ? "," : "", (long long)d[i]);
	fputc(']', stdout);
}

/* Prints s as the inside of a DOT string literal. */
static void dot_str(const char *s)
{
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', stdout);
		if (*s == '\n')
			fputs("\\n", stdout);
		else
			fputc(*s, stdout);
	}
}

static void dot_graph(const Gearom__Model *m, size_t gi)
{
	const Gearom__Graph *g = m->graphs[gi];
	printf("  subgraph cluster_%zu {\n    label=\"", gi);
	dot_str(g->name);
	printf("\";\n");
	for (size_t k = 0; k < g->n_inputs; k++) {
		printf("    g%zu_t%d [shape=ellipse, label=\"", gi, g->inputs[k]);
		dot_str(g->tensors[g->inputs[k]]->name);
		printf("\"];\n");
	}
	for (size_t k = 0; k < g->n_outputs; k++) {
		printf("    g%zu_o%zu [shape=ellipse, style=bold, label=\"", gi,
		       k);
		dot_str(g->tensors[g->outputs[k]]->name);
		printf("\"];\n");
	}
	for (size_t i = 0; i < g->n_nodes; i++) {
		printf("    g%zu_n%zu [shape=box, label=\"", gi, i);
		dot_str(g->nodes[i]->op_type);
		printf("\\n");
		dot_str(g->nodes[i]->name);
		printf("\"];\n");
	}
	/* Edges: producer (node or graph input) -> consumer node. */
	int32_t *prod = xmalloc((g->n_tensors + 1) * sizeof(int32_t));
	for (size_t t = 0; t < g->n_tensors; t++)
		prod[t] = -1;
	for (size_t i = 0; i < g->n_nodes; i++)
		for (size_t k = 0; k < g->nodes[i]->n_outputs; k++)
			if (g->nodes[i]->outputs[k] >= 0)
				prod[g->nodes[i]->outputs[k]] = (int32_t)i;
	for (size_t i = 0; i < g->n_nodes; i++)
		for (size_t k = 0; k < g->nodes[i]->n_inputs; k++) {
			int32_t t = g->nodes[i]->inputs[k];
			if (t < 0)
				continue;
			const Gearom__Tensor *x = g->tensors[t];
			if (prod[t] >= 0)
				printf("    g%zu_n%d", gi, prod[t]);
			else if (!x->has_kind || x->kind == GEAROM__TENSOR_KIND__TK_INPUT)
				printf("    g%zu_t%d", gi, t);
			else
				continue; /* weights and outer refs: omitted */
			printf(" -> g%zu_n%zu [label=\"", gi, i);
			print_dims(x->dims, x->n_dims,
				   !x->has_rank || x->rank >= 0);
			printf("\"];\n");
		}
	for (size_t k = 0; k < g->n_outputs; k++)
		if (prod[g->outputs[k]] >= 0)
			printf("    g%zu_n%d -> g%zu_o%zu;\n", gi,
			       prod[g->outputs[k]], gi, k);
	free(prod);
	printf("  }\n");
}

/* DOT: each node holding subgraphs (Case's gear branches, If's then and
 * else, a Loop's body) gets a dashed edge to each subgraph's cluster,
 * labelled with the attribute (compound edges end at the cluster). */
static void dot_subgraph_edges(const Gearom__Model *m, size_t gi,
			       const bool *sel)
{
	const Gearom__Graph *g = m->graphs[gi];
	for (size_t i = 0; i < g->n_nodes; i++)
		for (size_t k = 0; k < g->nodes[i]->n_attrs; k++) {
			const Gearom__Attribute *a = g->nodes[i]->attrs[k];
			bool one = a->has_type && a->type == 5 && a->g >= 0;
			size_t n = one ? 1 : a->n_graphs;
			for (size_t j = 0; j < n; j++) {
				int32_t s = one ? a->g : a->graphs[j];
				const Gearom__Graph *sub = m->graphs[s];
				if (sel && !sel[s])
					continue;
				printf("  g%zu_n%zu -> ", gi, i);
				if (sub->n_nodes)
					printf("g%d_n0", s);
				else if (sub->n_outputs)
					printf("g%d_o0", s);
				else
					continue;
				printf(" [style=dashed, lhead=cluster_%d, "
				       "label=\"", s);
				dot_str(a->name);
				if (!one)
					printf("[%zu]", j);
				printf("\"];\n");
			}
		}
}

static int dump_dot_sel(const OmFile *f, const bool *sel)
{
	const Gearom__Model *m = f->model;
	printf("digraph gearom {\n  rankdir=TB;\n  compound=true;\n"
	       "  node [fontsize=10];\n  edge [fontsize=8];\n");
	for (size_t i = 0; i < m->n_graphs; i++)
		if (!sel || sel[i])
			dot_graph(m, i);
	for (size_t i = 0; i < m->n_graphs; i++)
		if (!sel || sel[i])
			dot_subgraph_edges(m, i, sel);
	printf("}\n");
	return 0;
}

/* ---- what was asked: --graph, --summary, --detail --------------------- */

/* What 'gearc dump' was asked for. */
typedef struct DumpOpts {
	const char *format, *graph;
	bool summary, detail;
} DumpOpts;

/* Graph gi is the one --graph names: "NAME", or "PARENT/NAME" where the
 * same name is used in several places (an If's branches in every gear). */
static bool graph_named(const Gearom__Model *m, size_t gi, const char *name)
{
	const Gearom__Graph *g = m->graphs[gi];
	if (!strcmp(g->name, name))
		return true;
	if (!g->has_parent || g->parent < 0)
		return false;
	const char *p = m->graphs[g->parent]->name;
	size_t n = strlen(p);
	return !strncmp(name, p, n) && name[n] == '/' &&
	       !strcmp(name + n + 1, g->name);
}

/* Marks in sel[] the graphs --graph names; an error listing some names
 * if there is none. */
static int select_graphs(const Gearom__Model *m, const char *name, bool *sel)
{
	size_t n = 0, k = 0;
	char list[400];
	list[0] = 0;
	for (size_t gi = 0; gi < m->n_graphs; gi++)
		n += sel[gi] = graph_named(m, gi, name);
	if (n)
		return 0;
	for (size_t gi = 0; gi < m->n_graphs && k < 300; gi++)
		k += (size_t)snprintf(list + k, sizeof(list) - k, "%s%s",
				      gi ? ", " : "", m->graphs[gi]->name);
	return error("--graph: no graph named '%s' in the file (graphs: "
		     "%s%s)", name, list,
		     k >= 300 ? ", ..." : "");
}

/* The document 'gearc dump' shows: om_json()'s, with "pinned", each
 * graph's "detail" if detail is set (only sel's graphs with sel), less
 * what --summary leaves out. */
static json_object *dump_doc(const OmFile *f, const char *path,
			     const DumpOpts *d, const bool *sel, bool detail)
{
	static const char *const drop[] = { "graphs", "scope", "hybrid",
					    "partitions" };
	json_object *o = om_json(f, path);
	jadd(o, "pinned", json_pinned(f->model));
	if (detail)
		json_add_detail(o, f->model, sel);
	for (size_t i = 0; d->summary && i < ARRAY_SIZE(drop); i++)
		json_object_object_del(o, drop[i]);
	return o;
}

/* --graph's JSON: {"graphs": [sel's entries of the document's]}. */
static json_object *graphs_only(json_object *o, const bool *sel)
{
	json_object *graphs = jget(o, "graphs"), *a = json_object_new_array(),
		    *doc = json_object_new_object();
	for (size_t gi = 0; gi < jlen(graphs); gi++)
		if (sel[gi])
			json_object_array_add(a,
					      json_object_get(jat(graphs, gi)));
	json_object_put(o);
	jadd(doc, "graphs", a);
	return doc;
}

static void dump_json(FILE *out, const OmFile *f, const char *path,
		      const DumpOpts *d, const bool *sel)
{
	json_object *o = dump_doc(f, path, d, sel, d->detail || sel);
	if (sel)
		o = graphs_only(o, sel);
	json_print(out, o, 0);
	fputc('\n', out);
	json_object_put(o);
}

/* The same document as text: the whole file, --summary's part of it, or
 * --graph's graphs. */
static void dump_text(const OmFile *f, const char *path, const DumpOpts *d,
		      const bool *sel)
{
	json_object *doc = dump_doc(f, path, d, sel, false);
	if (!sel) {
		text_summary(doc);
		text_scope(jget(doc, "scope"));
		text_hybrid(jget(doc, "hybrid"));
		text_partitions(jget(doc, "partitions"));
	}
	text_graphs(doc, f->model, sel);
	json_object_put(doc);
}

static int dump_as(const OmFile *f, const char *path, const DumpOpts *d)
{
	bool *sel = NULL;
	int rc = 0;
	if (d->graph) {
		sel = xcalloc(f->model->n_graphs + 1, sizeof(*sel));
		if (select_graphs(f->model, d->graph, sel) < 0) {
			free(sel);
			return -1;
		}
	}
	if (!strcmp(d->format, "json"))
		dump_json(stdout, f, path, d, sel);
	else if (!strcmp(d->format, "dot"))
		rc = dump_dot_sel(f, sel);
	else
		dump_text(f, path, d, sel);
	free(sel);
	return rc;
}

/* ---- command ------------------------------------------------------------- */

/* The flags that go together. */
static int check_dump_opts(const DumpOpts *d)
{
	if (strcmp(d->format, "text") && strcmp(d->format, "json") &&
	    strcmp(d->format, "dot"))
		return error("--format: '%s' is not a dump format (expected "
			     "text, json or dot)", d->format);
	if (d->detail && strcmp(d->format, "json"))
		return error("--detail is for --format=json (text and dot "
			     "always list every node)");
	if (d->summary && !strcmp(d->format, "dot"))
		return error("--summary has no DOT form (it shows no graph); "
			     "use --format=text or json");
	if (d->summary && d->graph)
		return error("--summary and --graph cannot be used together: "
			     "--summary shows no graph");
	if (d->graph && !*d->graph)
		return error("--graph is empty: expected a graph name (see "
			     "the 'graph' lines of gearc dump)");
	return 0;
}

int om_dump_json(const char *om, FILE *out)
{
	OmFile f;
	DumpOpts d = { .format = "json" };
	if (om_open(&f, om) < 0)
		return -1;
	char *path = str_escape(om, strlen(om), 0, NULL);
	om_escape_names(&f, 0);
	dump_json(out, &f, path, &d, NULL);
	free(path);
	om_close(&f);
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	const char *help = NULL, *summary = NULL, *detail = NULL, *quiet = NULL;
	const char *pos[1];
	DumpOpts d = { 0 };
	const ArgSpec spec[] = {
		{ "format", 'f', true, &d.format },
		{ "graph", 'g', true, &d.graph },
		{ "summary", 's', false, &summary },
		{ "detail", 0, false, &detail },
		{ "quiet", 'q', false, &quiet },
		{ "help", 'h', false, &help },
		{ 0 },
	};
	int npos;
	int done = cmd_args(argc, argv, spec, "dump", pos, 1, &npos, &help);
	if (done >= 0)
		return done;
	if (!d.format)
		d.format = "text";
	d.summary = summary != NULL;
	d.detail = detail != NULL;
	if (check_dump_opts(&d) < 0)
		return fail(EXIT_USAGE);
	if (npos != 1) {
		error("dump needs the .om file to show (gearc dump "
		      "[--format=text|json|dot] FILE.om)");
		return fail(EXIT_USAGE);
	}
	OmFile f;
	if (om_open(&f, pos[0]) < 0)
		return fail(EXIT_FAIL);
	bool json = !strcmp(d.format, "json");
	unsigned how = json ? 0 : ESC_CONTROLS;
	char *path = str_escape(pos[0], strlen(pos[0]), how, NULL);
	om_escape_names(&f, how);
	int rc = dump_as(&f, path, &d);
	free(path);
	om_close(&f);
	return rc < 0 ? fail(EXIT_FAIL) : EXIT_OK;
}
