/*
 * cli/inspect.c - 'gearc inspect MODEL.onnx': what a model is, before
 * compiling it: its inputs and outputs with their dims and dim names, the
 * opsets, producer and IR version, the op histogram with the ops gearc
 * does not support, the external data files it reads, and the
 * --input_shape line (and, for named dynamic dims, the --dynamic_dims
 * keys) a compile would need.  Text for people, JSON for scripts; both
 * are built from one document.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compiler/onnx.h"

static json_object *jstr(const char *s)
{
	return json_object_new_string(s ? s : "");
}

static void jadd(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

static json_object *jget(json_object *o, const char *k)
{
	json_object *v = NULL;
	json_object_object_get_ex(o, k, &v);
	return v;
}

static const char *sget(json_object *o, const char *k)
{
	return json_object_get_string(jget(o, k));
}

/* One dim as a model declares it: its size, its dim_param name, or
 * null when it has neither. */
static json_object *json_dim(const Value *v, int32_t d)
{
	if (v->shape.dims[d] >= 0)
		return json_object_new_int64(v->shape.dims[d]);
	if (v->dim_params && v->dim_params[d])
		return jstr(v->dim_params[d]);
	return NULL;
}

static json_object *json_value(const Value *v)
{
	json_object *o = json_object_new_object();
	jadd(o, "name", jstr(v->name));
	jadd(o, "dtype", jstr(dtype_name(v->dtype) ? dtype_name(v->dtype)
						   : "undefined"));
	if (v->shape.rank < 0) {
		jadd(o, "shape", NULL);
		return o;
	}
	json_object *dims = json_object_new_array();
	for (int32_t d = 0; d < v->shape.rank; d++)
		json_object_array_add(dims, json_dim(v, d));
	jadd(o, "shape", dims);
	return o;
}

/* "x:-1,3,-1,-1;mask:-1,-1": every tensor input, -1 where the model
 * leaves a dim open; NULL if an input's rank is unknown. */
static char *suggest_shape(const Graph *g)
{
	size_t cap = 64, n = 0;
	char *s = xmalloc(cap);
	s[0] = 0;
	for (int32_t i = 0; i < g->ninputs; i++) {
		const Value *v = &g->vals[g->inputs[i]];
		if (v->shape.rank < 0) {
			free(s);
			return NULL;
		}
		size_t need = strlen(v->name) + 24 * (size_t)v->shape.rank + 4;
		if (n + need >= cap)
			s = xrealloc(s, cap = 2 * (n + need));
		n += (size_t)sprintf(s + n, "%s%s:", i ? ";" : "", v->name);
		for (int32_t d = 0; d < v->shape.rank; d++)
			n += (size_t)sprintf(s + n, "%s%lld", d ? "," : "",
					     (long long)v->shape.dims[d]);
	}
	return s;
}

/* The dim_param names of open dims, each once, with the inputs and axes
 * that carry it: what --dynamic_dims="NAME:v,...;..." takes. */
static json_object *json_dim_names(const Graph *g)
{
	json_object *a = json_object_new_array();
	for (int32_t i = 0; i < g->ninputs; i++) {
		const Value *v = &g->vals[g->inputs[i]];
		for (int32_t d = 0; v->dim_params && d < v->shape.rank; d++) {
			const char *p = v->dim_params[d];
			if (!p || v->shape.dims[d] >= 0)
				continue;
			json_object *e = NULL;
			for (size_t k = 0; k < json_object_array_length(a); k++)
				if (!strcmp(sget(json_object_array_get_idx(a, k),
						 "name"), p))
					e = json_object_array_get_idx(a, k);
			if (!e) {
				e = json_object_new_object();
				jadd(e, "name", jstr(p));
				jadd(e, "at", json_object_new_array());
				json_object_array_add(a, e);
			}
			json_object *where = json_object_new_object();
			jadd(where, "input", jstr(v->name));
			jadd(where, "axis", json_object_new_int(d));
			json_object_array_add(jget(e, "at"), where);
		}
	}
	return a;
}

static json_object *json_ops(const OpHist *h)
{
	json_object *a = json_object_new_array();
	for (int32_t i = 0; i < h->n; i++) {
		json_object *o = json_object_new_object();
		jadd(o, "op", jstr(h->e[i].op));
		jadd(o, "domain", jstr(h->e[i].domain));
		jadd(o, "count", json_object_new_int64(h->e[i].n));
		jadd(o, "supported", json_object_new_boolean(h->e[i].known));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *inspect_doc(Model *m, const char *path)
{
	Graph *g = m->graph;
	json_object *o = json_object_new_object(), *a;
	jadd(o, "model", jstr(path));
	jadd(o, "ir_version", json_object_new_int64(m->ir_version));
	jadd(o, "producer_name", jstr(m->producer_name));
	jadd(o, "producer_version", jstr(m->producer_version));
	jadd(o, "model_version", json_object_new_int64(m->model_version));
	a = json_object_new_array();
	for (int32_t i = 0; i < m->nopsets; i++) {
		json_object *e = json_object_new_object();
		jadd(e, "domain", jstr(domain_is_default(m->opsets[i].domain)
					       ? "ai.onnx"
					       : m->opsets[i].domain));
		jadd(e, "version", json_object_new_int64(m->opsets[i].version));
		json_object_array_add(a, e);
	}
	jadd(o, "opsets", a);
	a = json_object_new_array();
	for (int32_t i = 0; i < g->ninputs; i++)
		json_object_array_add(a, json_value(&g->vals[g->inputs[i]]));
	jadd(o, "inputs", a);
	a = json_object_new_array();
	for (int32_t i = 0; i < g->noutputs; i++)
		json_object_array_add(a, json_value(&g->vals[g->outputs[i]]));
	jadd(o, "outputs", a);
	a = json_object_new_array();
	for (int32_t i = 0; i < m->nexternal; i++)
		json_object_array_add(a, jstr(m->external[i]));
	jadd(o, "external_data", a);
	OpHist h = { 0 };
	ophist_add(&h, g);
	int64_t nodes = 0;
	for (int32_t i = 0; i < h.n; i++)
		nodes += h.e[i].n;
	jadd(o, "nodes", json_object_new_int64(nodes));
	jadd(o, "ops", json_ops(&h));
	ophist_free(&h);
	char *shape = suggest_shape(g);
	jadd(o, "input_shape", shape ? jstr(shape) : NULL);
	free(shape);
	jadd(o, "dim_names", json_dim_names(g));
	return o;
}

/* ---- text ------------------------------------------------------------------ */

static void text_value(json_object *v)
{
	json_object *dims = jget(v, "shape");
	printf("  %-24s %-8s ", sget(v, "name"), sget(v, "dtype"));
	if (!dims) {
		printf("rank unknown\n");
		return;
	}
	putchar('[');
	for (size_t d = 0; d < json_object_array_length(dims); d++) {
		json_object *x = json_object_array_get_idx(dims, d);
		printf("%s%s", d ? "," : "", x ? json_object_get_string(x)
					       : "?");
	}
	printf("]\n");
}

static void text_list(json_object *a, const char *title)
{
	printf("%s\n", title);
	for (size_t i = 0; i < json_object_array_length(a); i++)
		text_value(json_object_array_get_idx(a, i));
}

static void text_ops(json_object *ops, int64_t nodes)
{
	size_t n = json_object_array_length(ops), bad = 0;
	printf("ops:       %lld nodes, %zu distinct:", (long long)nodes, n);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(ops, i);
		const char *d = sget(e, "domain");
		printf("%s %lld %s%s%s%s", i ? "," : "",
		       (long long)json_object_get_int64(jget(e, "count")),
		       sget(e, "op"), *d ? " (domain " : "", d, *d ? ")" : "");
		bad += !json_object_get_boolean(jget(e, "supported"));
	}
	printf("\nunsupported:");
	for (size_t i = 0, k = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(ops, i);
		const char *d = sget(e, "domain");
		if (!json_object_get_boolean(jget(e, "supported")))
			printf("%s %s%s%s%s", k++ ? "," : "", sget(e, "op"),
			       *d ? " (domain " : "", d, *d ? ")" : "");
	}
	printf("%s\n", bad ? "" : " none");
}

static void text_dim_names(json_object *a)
{
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i), *at =
			jget(e, "at");
		size_t n = json_object_array_length(at);
		printf("  %s: ", sget(e, "name"));
		for (size_t k = 0; k < n && k < 4; k++) {
			json_object *w = json_object_array_get_idx(at, k);
			printf("%s%s[%d]", k ? ", " : "", sget(w, "input"),
			       json_object_get_int(jget(w, "axis")));
		}
		if (n > 4)
			printf(" and %zu more", n - 4);
		putchar('\n');
	}
}

static void inspect_text(json_object *doc)
{
	json_object *a = jget(doc, "opsets"), *ext = jget(doc, "external_data");
	printf("model:     %s\n", sget(doc, "model"));
	const char *pv = sget(doc, "producer_version");
	printf("ir:        %s (producer %s%s%s)\n", sget(doc, "ir_version"),
	       *sget(doc, "producer_name") ? sget(doc, "producer_name") : "?",
	       *pv ? " " : "", pv);
	printf("opsets:   ");
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		printf("%s %s %s", i ? "," : "", sget(e, "domain"),
		       sget(e, "version"));
	}
	putchar('\n');
	text_list(jget(doc, "inputs"), "inputs:");
	text_list(jget(doc, "outputs"), "outputs:");
	printf("external:  ");
	for (size_t i = 0; i < json_object_array_length(ext); i++)
		printf("%s%s", i ? ", " : "",
		       json_object_get_string(json_object_array_get_idx(ext, i)));
	printf("%s\n", json_object_array_length(ext) ? "" : "none");
	text_ops(jget(doc, "ops"), json_object_get_int64(jget(doc, "nodes")));
	if (jget(doc, "input_shape"))
		printf("compile:   --input_shape=\"%s\"\n",
		       sget(doc, "input_shape"));
	if (json_object_array_length(jget(doc, "dim_names"))) {
		printf("dynamic dims (-1 above; --dynamic_dims=\"NAME:v,...;"
		       "...\" takes these names):\n");
		text_dim_names(jget(doc, "dim_names"));
	}
}

int cmd_inspect(int argc, char **argv)
{
	const char *help = NULL, *format = NULL, *quiet = NULL, *pos[1];
	const ArgSpec spec[] = {
		{ "format", 'f', true, &format },
		{ "quiet", 'q', false, &quiet },
		{ "help", 'h', false, &help },
		{ 0 },
	};
	int npos;
	int done = cmd_args(argc, argv, spec, "inspect", pos, 1, &npos,
			    &help);
	if (done >= 0)
		return done;
	if (format && strcmp(format, "text") && strcmp(format, "json")) {
		error("--format: '%s' is not an inspect format (expected text "
		      "or json)", format);
		return fail(EXIT_USAGE);
	}
	if (npos != 1) {
		error("inspect needs the ONNX model to show (gearc inspect "
		      "[--format=text|json] MODEL.onnx)");
		return fail(EXIT_USAGE);
	}
	Model *m = onnx_load(pos[0]);
	if (!m)
		return fail(EXIT_FAIL);
	json_object *doc = inspect_doc(m, pos[0]);
	if (format && !strcmp(format, "json"))
		printf("%s\n", json_object_to_json_string_ext(
				       doc, JSON_C_TO_STRING_PRETTY |
						    JSON_C_TO_STRING_SPACED |
						    JSON_C_TO_STRING_NOSLASHESCAPE));
	else
		inspect_text(doc);
	json_object_put(doc);
	model_free(m);
	return EXIT_OK;
}
