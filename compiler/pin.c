/*
 * compiler/pin.c - --input_value (compiler/pin.h): each named input of
 * the parsed flag (cli/pinflag.c) turned into a constant of the model's
 * dtype and shape.
 */
#include "pin.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pin_parsed_release(ParsedPins *p)
{
	for (int32_t i = 0; i < p->n; i++) {
		for (int32_t k = 0; k < p->e[i].nvals; k++)
			free(p->e[i].vals[k]);
		free(p->e[i].vals);
		free(p->e[i].name);
	}
	free(p->e);
	free(p->canon);
	memset(p, 0, sizeof(*p));
}

/* ---- values --------------------------------------------------------------- */

static int bad_value(const PinEntry *e, int32_t k, int dt, const char *want)
{
	return error("--input_value: '%s' value %d ('%s') does not fit its "
		     "dtype %s (expected %s)", e->name, k + 1, e->vals[k],
		     dtype_name(dt), want);
}

static bool int_range(int dt, int64_t *lo, uint64_t *hi)
{
	switch (dt) {
	case DT_INT8: *lo = INT8_MIN; *hi = INT8_MAX; return true;
	case DT_UINT8: *lo = 0; *hi = UINT8_MAX; return true;
	case DT_INT16: *lo = INT16_MIN; *hi = INT16_MAX; return true;
	case DT_UINT16: *lo = 0; *hi = UINT16_MAX; return true;
	case DT_INT32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
	case DT_UINT32: *lo = 0; *hi = UINT32_MAX; return true;
	case DT_INT64: *lo = INT64_MIN; *hi = INT64_MAX; return true;
	case DT_UINT64: *lo = 0; *hi = UINT64_MAX; return true;
	}
	return false;
}

/* A whole decimal integer within [lo, hi] into *u (two's complement). */
static bool parse_int(const char *s, int64_t lo, uint64_t hi, uint64_t *u)
{
	char *end;
	errno = 0;
	if (*s == '-') {
		long long v = strtoll(s, &end, 10);
		if (errno || *end || end == s + 1 || v < lo)
			return false;
		*u = (uint64_t)v;
		return true;
	}
	if (*s < '0' || *s > '9')
		return false;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v > hi)
		return false;
	*u = v;
	return true;
}

static bool parse_float(const char *s, double max, double *d)
{
	char *end;
	errno = 0;
	*d = strtod(s, &end);
	return *s && !*end && isfinite(*d) && fabs(*d) <= max;
}

/* Value k of e into element k of t's data. */
static int put_value(const PinEntry *e, int32_t k, int dt, uint8_t *dst)
{
	const char *s = e->vals[k];
	size_t sz = dtype_size(dt);
	int64_t lo;
	uint64_t hi, u;
	double d;
	if (int_range(dt, &lo, &hi)) {
		char want[96];
		snprintf(want, sizeof(want), "an integer from %lld to %llu",
			 (long long)lo, (unsigned long long)hi);
		if (!parse_int(s, lo, hi, &u))
			return bad_value(e, k, dt, want);
		memcpy(dst + (size_t)k * sz, &u, sz); /* little-endian */
		return 0;
	}
	switch (dt) {
	case DT_BOOL:
		if (strcmp(s, "0") && strcmp(s, "1") && strcmp(s, "true") &&
		    strcmp(s, "false"))
			return bad_value(e, k, dt, "0, 1, true or false");
		dst[k] = !strcmp(s, "1") || !strcmp(s, "true");
		return 0;
	case DT_FLOAT: {
		if (!parse_float(s, FLT_MAX, &d))
			return bad_value(e, k, dt, "a finite float32 number");
		float f = (float)d;
		memcpy(dst + (size_t)k * 4, &f, 4);
		return 0;
	}
	case DT_DOUBLE:
		if (!parse_float(s, DBL_MAX, &d))
			return bad_value(e, k, dt, "a finite number");
		memcpy(dst + (size_t)k * 8, &d, 8);
		return 0;
	case DT_FLOAT16:
	case DT_BFLOAT16: {
		bool half = dt == DT_FLOAT16;
		if (!parse_float(s, half ? 65504.0 : 3.3895313892515355e38, &d))
			return bad_value(e, k, dt, half ? "a number within "
					 "+-65504" : "a finite bfloat16 number");
		uint16_t h = minifloat_from(d, half ? 5 : 8, half ? 10 : 7);
		memcpy(dst + (size_t)k * 2, &h, 2);
		return 0;
	}
	}
	return error("--input_value: '%s' is of dtype %s, which cannot be "
		     "pinned (numbers and bool can)", e->name,
		     dtype_name(dt) ? dtype_name(dt) : "?");
}

/* ---- against the model ---------------------------------------------------- */

static ValId find_input(const Graph *g, const char *name)
{
	for (int32_t i = 0; i < g->ninputs; i++)
		if (!strcmp(g->vals[g->inputs[i]].name, name) &&
		    g->vals[g->inputs[i]].kind == VAL_INPUT)
			return g->inputs[i];
	return -1;
}

static int unknown_input(const Graph *g, const char *name)
{
	char list[320];
	size_t k = 0;
	list[0] = 0;
	for (int32_t i = 0; i < g->ninputs && k < 256; i++)
		k += (size_t)snprintf(list + k, sizeof(list) - k, "%s'%s'",
				      i ? ", " : "",
				      g->vals[g->inputs[i]].name);
	return error("--input_value: '%s' is not an input of the model "
		     "(inputs: %s)", name, g->ninputs ? list : "none");
}

/* The constant entry e makes of input v. */
static const Tensor *pin_tensor(Model *m, const Value *v, const PinEntry *e)
{
	char buf[MAX_RANK * 22 + 8];
	int64_t n = shape_numel(&v->shape);
	if (v->tkind != TK_TENSOR)
		return error("--input_value: '%s' is not a tensor input",
			     e->name), NULL;
	if (n < 0)
		return error("--input_value: '%s' has shape %s; give its "
			     "shape with --input_shape ('%s:' for a scalar)",
			     e->name, shape_str(&v->shape, buf, sizeof(buf)),
			     e->name), NULL;
	if (n != e->nvals)
		return error("--input_value: '%s' has %d value%s, but its "
			     "shape %s holds %lld", e->name, e->nvals,
			     e->nvals == 1 ? "" : "s",
			     shape_str(&v->shape, buf, sizeof(buf)),
			     (long long)n), NULL;
	size_t sz = dtype_size(v->dtype);
	uint8_t *data = xcalloc((size_t)n + 1, sz ? sz : 1);
	for (int32_t k = 0; k < e->nvals; k++)
		if (put_value(e, k, v->dtype, data) < 0) {
			free(data);
			return NULL;
		}
	Tensor *t = tensor_new(&m->arena, v->name, v->dtype, &v->shape, data);
	free(data);
	if (t)
		t->folded = true; /* gearc's, not a weight of the model */
	return t;
}

int pin_apply(Model *m, const ParsedPins *p)
{
	Graph *g = m->graph;
	const Tensor **t = xcalloc((size_t)p->n + 1, sizeof(*t));
	ValId *vid = xcalloc((size_t)p->n + 1, sizeof(*vid));
	int rc = 0;
	for (int32_t i = 0; rc == 0 && i < p->n; i++) {
		vid[i] = find_input(g, p->e[i].name);
		if (vid[i] < 0)
			rc = unknown_input(g, p->e[i].name);
		else if (!(t[i] = pin_tensor(m, &g->vals[vid[i]], &p->e[i])))
			rc = -1;
	}
	for (int32_t i = 0; rc == 0 && i < p->n; i++) {
		Value *v = &g->vals[vid[i]];
		v->kind = VAL_WEIGHT;
		v->konst = t[i];
		int32_t k = 0;
		for (int32_t j = 0; j < g->ninputs; j++)
			if (g->inputs[j] != vid[i])
				g->inputs[k++] = g->inputs[j];
		g->ninputs = k;
	}
	if (rc == 0 && p->n)
		model_add_option(m, "input_value", p->canon);
	free(t);
	free(vid);
	return rc;
}
