/*
 * tests/fuzz/fuzz_options.c - libFuzzer: the gear options.
 *
 * The input is split at NUL bytes into --input_shape, the gear option
 * (which of the three is picked by the first byte) and --input_format;
 * gear_parse and gear_apply run on a fixed three-input model.  Anything
 * but 0 / -1 with a one-line message is a bug; so is a crash or a leak.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "compiler/gearspec.h"

static ValId input(Model *m, const char *name, int dt, int32_t rank,
		   const int64_t *dims)
{
	Graph *g = m->graph;
	ValId v = graph_add_value(g, name, VAL_INPUT);
	g->vals[v].dtype = dt;
	g->vals[v].shape = shape_of(rank, dims);
	g->inputs = arena_grow(&m->arena, g->inputs, (size_t)g->ninputs,
			       (size_t)g->ninputs + 1, sizeof(ValId));
	g->inputs[g->ninputs++] = v;
	return v;
}

static Model *three_inputs(void)
{
	Model *m = model_new();
	m->graph = graph_new(&m->arena, "fuzz", NULL);
	input(m, "tokens", DT_INT64, 2, (int64_t[]){ -1, -1 });
	input(m, "mask", DT_FLOAT, 2, (int64_t[]){ -1, -1 });
	input(m, "image", DT_FLOAT, 4, (int64_t[]){ -1, 3, -1, -1 });
	return m;
}

/* The next NUL-terminated field of [*p, end), copied; NULL when absent. */
static char *field(const uint8_t **p, const uint8_t *end)
{
	if (*p >= end)
		return NULL;
	const uint8_t *z = memchr(*p, 0, (size_t)(end - *p));
	size_t n = z ? (size_t)(z - *p) : (size_t)(end - *p);
	char *s = malloc(n + 1);
	memcpy(s, *p, n);
	s[n] = 0;
	*p += n + (z != NULL);
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const uint8_t *p = data + 1, *end = data + size;
	char *shape = field(&p, end), *gears = field(&p, end),
	     *format = field(&p, end);
	GearOptions o = { .input_shape = shape, .input_format = format };
	switch (data[0] % 4) {
	case 0: o.dynamic_batch_size = gears; break;
	case 1: o.dynamic_image_size = gears; break;
	case 2: o.dynamic_dims = gears; break;
	default: break; /* no gear option */
	}
	ParsedGears pg;
	Model *m = three_inputs();
	int rc = gear_parse(&pg, &o);
	if (rc == 0)
		rc = gear_apply(m, &pg);
	if (rc < 0 && (strncmp(last_error(), "--", 2) || strchr(last_error(), '\n')))
		abort(); /* every message is one line naming the flag */
	if (rc != 0 && rc != -1)
		abort();
	gear_parsed_release(&pg);
	model_free(m);
	free(shape);
	free(gears);
	free(format);
	return 0;
}
