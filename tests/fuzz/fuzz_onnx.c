/*
 * tests/fuzz/fuzz_onnx.c - libFuzzer: ONNX import and a whole compile.
 *
 * The input is an ONNX model.  If it imports, its inputs with unknown
 * dims get 2s (unknown rank: left alone), and it is compiled twice: as a
 * static compile, and with batch gears 1,2 on its first input; each .om
 * is encoded, read back and dumped as JSON.  Errors are fine (they must
 * be one line); crashes, leaks, hangs and huge allocations are bugs.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "compiler/onnx.h"
#include "serializer/om.h"

static void check_message(void)
{
	if (!*last_error() || strchr(last_error(), '\n')) {
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

static void compile(const uint8_t *data, size_t size, bool gears)
{
	Model *m = onnx_load_bytes(data, size, "fuzz.onnx");
	if (!m) {
		check_message();
		return;
	}
	CompileOptions o = { .model = "fuzz.onnx", .fold_limit = 64 * 1024,
			     .jobs = 1 };
	char *shape = gears && m->graph->ninputs ? batch_shape(m->graph) : NULL;
	Graph *g = m->graph;
	for (int32_t k = 0; !shape && k < g->ninputs; k++) {
		Shape *s = &g->vals[g->inputs[k]].shape;
		for (int32_t i = 0; i < s->rank; i++)
			if (s->dims[i] < 0)
				s->dims[i] = 2;
	}
	ParsedGears pg;
	o.gear.input_shape = shape;
	o.gear.dynamic_batch_size = shape ? "1,2" : NULL;
	int rc = gear_parse(&pg, &o.gear);
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
