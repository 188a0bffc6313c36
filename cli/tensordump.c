/*
 * cli/tensordump.c - `gearc run --dump-tensors=DIR`: every tensor of a
 * run as DIR/NAME.npy and DIR/index.json (cli/tensors.h has the format),
 * written from libgearrt's on_node hook as each node finishes, before
 * the arena reuses its memory.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "npy.h"
#include "serializer/om.h"
#include "tensors.h"

struct TensorDump {
	char *dir;
	bool armed;
	json_object *doc, *list;
	int written, fused, skipped, longs;
};

#define jstr json_name

static void jadd(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

TensorDump *tensor_dump_open(const char *dir, const char *model)
{
	bool made;
	if (make_output_dir("--dump-tensors", dir, &made) < 0)
		return NULL;
	TensorDump *d = xcalloc(1, sizeof(*d));
	d->dir = xstrdup(dir);
	d->doc = json_object_new_object();
	d->list = json_object_new_array();
	jadd(d->doc, "format", json_object_new_string(TENSORS_FORMAT));
	jadd(d->doc, "version", json_object_new_int(TENSORS_VERSION));
	jadd(d->doc, "model", jstr(model));
	return d;
}

/* The file tensor name goes to: npy_file's, or "%longN.npy" past 200
 * bytes (a file name may have 255); malloc'd. */
static char *file_for(TensorDump *d, const char *name)
{
	char *f = npy_file(name);
	if (strlen(f) <= 200)
		return f;
	free(f);
	f = xmalloc(32);
	snprintf(f, 32, "%%long%d.npy", d->longs++);
	return f;
}

static json_object *shape_json(const gearrt_tensor *t)
{
	json_object *a = json_object_new_array();
	for (int32_t k = 0; k < t->rank; k++)
		json_object_array_add(a, json_object_new_int64(t->dims[k]));
	return a;
}

/* The entry of tensor t, written to its file if it has a .npy form
 * (else kind "not_written" with why). */
static json_object *write_tensor(TensorDump *d, const gearrt_tensor *t,
				 const char *kind, const char *why)
{
	json_object *e = json_object_new_object();
	jadd(e, "name", jstr(t->name));
	if (!t->data || !npy_writable(t->dtype)) {
		jadd(e, "kind", json_object_new_string("not_written"));
		jadd(e, "file", NULL);
		jadd(e, "why", json_object_new_string(
				       !t->data ? "not a tensor (a sequence)"
						: "its dtype has no .npy form"));
		if (t->data)
			jadd(e, "dtype", json_object_new_string(
						 gearrt_dtype_name(t->dtype)));
		d->skipped++;
		return e;
	}
	char *file = file_for(d, t->name);
	size_t n = strlen(d->dir) + strlen(file) + 2;
	char *path = xmalloc(n);
	snprintf(path, n, "%s/%s", d->dir, file);
	Shape s = { .rank = t->rank };
	memcpy(s.dims, t->dims, (size_t)t->rank * sizeof(int64_t));
	int rc = npy_write_as("--dump-tensors", path, t->dtype, &s, t->data);
	free(path);
	jadd(e, "kind", json_object_new_string(kind));
	jadd(e, "file", json_object_new_string(file));
	jadd(e, "dtype", json_object_new_string(gearrt_dtype_name(t->dtype)));
	jadd(e, "shape", shape_json(t));
	if (why)
		jadd(e, "why", json_object_new_string(why));
	free(file);
	if (rc < 0) {
		json_object_put(e);
		return NULL;
	}
	d->written++;
	return e;
}

int tensor_dump_inputs(TensorDump *d, const gearrt_tensor *in, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_object *e = write_tensor(d, &in[i], "input", NULL);
		if (!e)
			return -1;
		json_object_array_add(d->list, e);
	}
	return 0;
}

void tensor_dump_arm(TensorDump *d, bool armed)
{
	d->armed = armed;
}

static void add_node_keys(json_object *e, const gearrt_node_info *n,
			  bool kernel)
{
	jadd(e, "graph", jstr(n->graph));
	jadd(e, "node", jstr(n->name));
	jadd(e, "op", jstr(n->op_type));
	if (kernel)
		jadd(e, "kernel", json_object_new_string(n->kernel));
}

/* A node run as a whole by evaluation whose subgraphs' values no hook
 * sees. */
static bool runs_subgraphs(const gearrt_node_info *n)
{
	static const char *const ops[] = { "If", "Loop", "Scan", "Case",
					   "PartitionedCall", "SequenceMap" };
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
		if (!strcmp(n->op_type, ops[i]))
			return !strcmp(n->kernel, "eval");
	return false;
}

int tensor_dump_hook(void *user, const gearrt_node_info *n)
{
	TensorDump *d = user;
	if (!d->armed)
		return 0;
	for (size_t k = 0; k < n->nfused; k++) {
		json_object *e = json_object_new_object();
		jadd(e, "name", jstr(n->fused[k]));
		jadd(e, "kind", json_object_new_string("fused"));
		jadd(e, "file", NULL);
		add_node_keys(e, n, false);
		json_object_array_add(d->list, e);
		d->fused++;
	}
	const char *why = runs_subgraphs(n)
				  ? "evaluated as a whole: the values inside "
				    "its subgraphs are not written"
				  : NULL;
	for (size_t k = 0; k < n->noutputs; k++) {
		json_object *e = write_tensor(d, &n->outputs[k], "node", why);
		if (!e)
			return -1;
		add_node_keys(e, n, true);
		json_object_array_add(d->list, e);
	}
	return 0;
}

/* The index: its keys on one line, then one line per tensor. */
static char *index_text(json_object *doc, json_object *list)
{
	const int how = JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE;
	const char *head = json_object_to_json_string_ext(doc, how);
	size_t n = strlen(head), cap = n + 64, len;
	char *t = xmalloc(cap);
	len = (size_t)snprintf(t, cap, "%.*s, \"tensors\": [\n",
			       (int)(n - 2), head); /* less " }" */
	size_t count = json_object_array_length(list);
	for (size_t i = 0; i < count; i++) {
		const char *e = json_object_to_json_string_ext(
			json_object_array_get_idx(list, i), how);
		size_t need = len + strlen(e) + 8;
		if (need > cap)
			t = xrealloc(t, cap = 2 * need);
		len += (size_t)snprintf(t + len, cap - len, "  %s%s\n", e,
					i + 1 < count ? "," : "");
	}
	if (len + 4 > cap)
		t = xrealloc(t, cap = len + 4);
	snprintf(t + len, cap - len, "]}\n");
	return t;
}

int tensor_dump_close(TensorDump *d, const char *err, char *said, size_t n)
{
	jadd(d->doc, "complete", json_object_new_boolean(!err));
	if (err)
		jadd(d->doc, "error", jstr(err));
	char *text = index_text(d->doc, d->list);
	size_t pn = strlen(d->dir) + sizeof(TENSORS_INDEX) + 2;
	char *path = xmalloc(pn);
	snprintf(path, pn, "%s/%s", d->dir, TENSORS_INDEX);
	const void *parts[] = { text };
	const size_t sizes[] = { strlen(text) };
	int rc = om_write_bytes("--dump-tensors", path, parts, sizes, 1);
	if (said)
		snprintf(said, n, "dump-tensors: %d tensors written to %s; %d "
			 "values fused away, %d not written: see %s",
			 d->written, d->dir, d->fused, d->skipped, path);
	free(path);
	free(text);
	json_object_put(d->list);
	json_object_put(d->doc);
	free(d->dir);
	free(d);
	return rc;
}
