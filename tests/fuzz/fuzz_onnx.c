/*
 * tests/fuzz/fuzz_onnx.c - libFuzzer: ONNX import and a whole compile.
 *
 * The input is an ONNX model.  If it imports, its inputs with unknown
 * dims get 2s (unknown rank: left alone), and it is compiled twice: as a
 * static compile, and with batch gears 1,2 on its first input; each .om
 * is encoded, read back and dumped as JSON.  Errors are fine (they must
 * be one line of valid UTF-8); crashes, leaks, hangs and huge allocations
 * are bugs.
 *
 * The model is loaded as DIR/fuzz.onnx from a scratch directory where
 * external data can find data.bin (a file), link.bin (a symbolic link to
 * a file outside DIR), fifo.bin (a FIFO) and dirlink (a symbolic link to
 * a directory outside, holding outside.bin): reading a byte from outside
 * DIR, or waiting on the FIFO, is a bug.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "compiler/onnx.h"
#include "serializer/om.h"

static bool utf8_ok(const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0, k; i < n; i += k)
		if (!(k = utf8_char_len((const unsigned char *)s + i, n - i)))
			return false;
	return true;
}

static void check_message(void)
{
	if (!*last_error() || strchr(last_error(), '\n') ||
	    !utf8_ok(last_error())) {
		fprintf(stderr, "bad error message: '%s'\n", last_error());
		abort();
	}
}

static void round_trip(Model *m)
{
	uint8_t *bytes;
	size_t n;
	OmFile f;
	if (om_encode(m, &bytes, &n) < 0) {
		check_message();
		return;
	}
	if (om_parse(&f, bytes, n, "fuzz.om") < 0)
		abort(); /* gearc must read what it writes */
	json_object_put(om_json(&f, "fuzz.om"));
	om_close(&f);
	free(bytes);
}

/* "name:d,d,..." of input 0 with dim 0 as -1, unknown dims as 2. */
static char *batch_shape(const Graph *g)
{
	const Value *v = &g->vals[g->inputs[0]];
	if (v->shape.rank < 1 || v->tkind != TK_TENSOR)
		return NULL;
	size_t cap = strlen(v->name) + 32 * (size_t)v->shape.rank + 8, k;
	char *s = malloc(cap);
	k = (size_t)snprintf(s, cap, "%s:-1", v->name);
	for (int32_t i = 1; i < v->shape.rank; i++)
		k += (size_t)snprintf(s + k, cap - k, ",%lld",
				      (long long)(v->shape.dims[i] < 0
							  ? 2
							  : v->shape.dims[i]));
	return s;
}

/* ---- the scratch directory ------------------------------------------- */

static const char MARK[] = "GEARC-OUTSIDE-THE-MODEL-DIRECTORY";
static char scratch[64], outside[64], model_path[96];

static void fill(const char *path, const char *s)
{
	FILE *f = fopen(path, "wb");
	for (int i = 0; f && i < 4096 / 32; i++)
		fwrite(s, 1, 32, f);
	if (f)
		fclose(f);
}

static void remove_scratch(void)
{
	const char *names[] = { "data.bin", "link.bin", "fifo.bin", "dirlink" };
	char p[160];
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		snprintf(p, sizeof(p), "%s/%s", scratch, names[i]);
		unlink(p);
	}
	snprintf(p, sizeof(p), "%s/outside.bin", outside);
	unlink(p);
	rmdir(scratch);
	rmdir(outside);
}

static void make_scratch(void)
{
	char p[160], q[160];
	strcpy(scratch, "/tmp/gearc-fuzz-XXXXXX");
	strcpy(outside, "/tmp/gearc-fuzz-XXXXXX");
	if (!mkdtemp(scratch) || !mkdtemp(outside))
		abort();
	snprintf(model_path, sizeof(model_path), "%s/fuzz.onnx", scratch);
	snprintf(p, sizeof(p), "%s/data.bin", scratch);
	fill(p, "0123456789abcdef0123456789abcdef");
	snprintf(q, sizeof(q), "%s/outside.bin", outside);
	fill(q, MARK); /* 33 bytes: the first 32 of them */
	snprintf(p, sizeof(p), "%s/link.bin", scratch);
	snprintf(q, sizeof(q), "%s/outside.bin", outside);
	if (symlink(q, p) < 0)
		abort();
	snprintf(p, sizeof(p), "%s/dirlink", scratch);
	if (symlink(outside, p) < 0)
		abort();
	snprintf(p, sizeof(p), "%s/fifo.bin", scratch);
	if (mkfifo(p, 0600) < 0)
		abort();
	atexit(remove_scratch);
}

/* Aborts if a file the model mapped holds bytes from outside. */
static void check_maps(const Model *m)
{
	for (int32_t i = 0; i < m->nmaps; i++)
		if (m->maps[i].size >= 16 &&
		    !memcmp(m->maps[i].data, MARK, 16)) {
			fprintf(stderr, "external data read from outside the "
					"model's directory\n");
			abort();
		}
}

static void compile(const uint8_t *data, size_t size, bool gears)
{
	if (!*scratch)
		make_scratch();
	Model *m = onnx_load_bytes(data, size, model_path);
	if (!m) {
		check_message();
		return;
	}
	check_maps(m);
	PassOptions o = { .fold_limit = 64 * 1024, .jobs = 1 };
	char *shape = gears && m->graph->ninputs ? batch_shape(m->graph) : NULL;
	Graph *g = m->graph;
	for (int32_t k = 0; !shape && k < g->ninputs; k++) {
		Shape *s = &g->vals[g->inputs[k]].shape;
		for (int32_t i = 0; i < s->rank; i++)
			if (s->dims[i] < 0)
				s->dims[i] = 2;
	}
	ParsedGears pg;
	GearOptions go = { .input_shape = shape,
			   .dynamic_batch_size = shape ? "1,2" : NULL };
	int rc = gear_parse(&pg, &go);
	if (!rc) {
		rc = gear_apply(m, &pg);
		gear_parsed_release(&pg);
	}
	if (!rc)
		rc = run_passes(m, &o);
	if (rc < 0)
		check_message();
	else
		round_trip(m);
	free(shape);
	model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	compile(data, size, false);
	compile(data, size, true);
	return 0;
}
