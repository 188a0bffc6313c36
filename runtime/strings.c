/*
 * runtime/strings.c - string tensors across the API (gearrt.h "Strings"),
 * and bool inputs.
 *
 * The caller's strings are arrays of const char * (gearrt.h); the graph's
 * are the IR's Bytes.  A session with string inputs or outputs keeps,
 * per input, the Bytes pointing at the caller's strings, and per output
 * the strings copied NUL-terminated and the pointers to them: buffers
 * grown when a run needs more, so runs of the sizes seen before make no
 * heap allocation.
 *
 * A bool the kernels read is a byte of 0 or 1 (a fast Cast copies it, a
 * reference Cast converts it, Equal compares it); a caller's bool input
 * may hold any byte (a uint8 mask of 0 and 255 handed over as bool).
 * Any byte but 0 is true: an input holding one other than 1 is taken
 * from a copy of 0s and 1s, the same on every path.
 */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

struct Strings {
	gearrt_tensor *in;  /* the run's inputs, string ones as Bytes */
	Grow *bytes;	    /* per input: its Bytes */
	Grow *ptrs, *chars; /* per output: the pointers, the strings */
	gearrt_tensor *given; /* per output: the caller's data and size */
};

void *rt_grow(Grow *g, size_t n)
{
	if (n > g->cap) {
		free(g->p);
		g->p = xmalloc(n);
		g->cap = n;
	}
	return g->p;
}

static bool has_strings(const gearrt_model *md)
{
	for (size_t i = 0; i < md->nin; i++)
		if (md->in_info[i].dtype == GEARRT_STRING ||
		    md->in_info[i].dtype == GEARRT_BOOL)
			return true;
	for (size_t i = 0; i < md->nout; i++)
		if (md->out_info[i].dtype == GEARRT_STRING)
			return true;
	return false;
}

struct Strings *rt_strings_new(const gearrt_model *md)
{
	if (!has_strings(md))
		return NULL;
	struct Strings *x = xcalloc(1, sizeof(*x));
	x->in = xcalloc(md->nin + 1, sizeof(*x->in));
	x->bytes = xcalloc(md->nin + 1, sizeof(Grow));
	x->ptrs = xcalloc(md->nout + 1, sizeof(Grow));
	x->chars = xcalloc(md->nout + 1, sizeof(Grow));
	x->given = xcalloc(md->nout + 1, sizeof(*x->given));
	return x;
}

void rt_strings_free(const gearrt_model *md, struct Strings *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < md->nin; i++)
		free(x->bytes[i].p);
	for (size_t i = 0; i < md->nout; i++) {
		free(x->ptrs[i].p);
		free(x->chars[i].p);
	}
	free(x->in);
	free(x->bytes);
	free(x->ptrs);
	free(x->chars);
	free(x->given);
	free(x);
}

static size_t numel(const gearrt_tensor *t)
{
	size_t n = 1;
	for (int32_t k = 0; k < t->rank; k++)
		n *= (size_t)t->dims[k];
	return n;
}

/* Bool input t's bytes, or, if one is not 0 or 1, a copy of 0s and 1s
 * in g. */
static void *bools(Grow *g, const gearrt_tensor *t)
{
	size_t n = numel(t);
	uint8_t *b = t->data;
	uint8_t any = 0;
	for (size_t k = 0; k < n; k++)
		any |= b[k];
	if (any <= 1)
		return b;
	uint8_t *c = rt_grow(g, n);
	for (size_t k = 0; k < n; k++)
		c[k] = b[k] != 0;
	return c;
}

const gearrt_tensor *rt_strings_in(RunCtx *s,
				   const gearrt_tensor *inputs)
{
	struct Strings *x = s->strings;
	for (size_t i = 0; i < s->model->nin; i++) {
		x->in[i] = inputs[i];
		if (inputs[i].dtype == GEARRT_BOOL)
			x->in[i].data = bools(&x->bytes[i], &inputs[i]);
		if (inputs[i].dtype != GEARRT_STRING)
			continue;
		size_t n = numel(&inputs[i]);
		const char *const *str = inputs[i].data;
		Bytes *b = rt_grow(&x->bytes[i], (n + 1) * sizeof(Bytes));
		for (size_t k = 0; k < n; k++)
			b[k] = (Bytes){ strlen(str[k]), (const uint8_t *)str[k] };
		x->in[i].data = b;
		x->in[i].size = n * sizeof(Bytes);
	}
	return x->in;
}

void rt_strings_before(RunCtx *s, gearrt_tensor *out, size_t nout)
{
	for (size_t i = 0; i < nout; i++) {
		if (s->model->out_info[i].dtype != GEARRT_STRING)
			continue;
		s->strings->given[i] = out[i];
		out[i].data = NULL;
	}
}

/* Output o's Bytes as NUL-terminated strings in the session's buffers
 * (x's for output i), their pointers in the caller's buffer if it gave
 * one; -1 with an error. */
static int string_out(struct Strings *x, size_t i, gearrt_tensor *o)
{
	const gearrt_tensor *g = &x->given[i];
	size_t n = numel(o), need = n * sizeof(char *), chars = 0;
	const Bytes *b = o->data;
	if (g->data && g->size < need)
		return error("output '%s' needs %zu bytes, its buffer has %zu",
			     o->name, need, g->size);
	for (size_t k = 0; k < n; k++) {
		if (b[k].len && memchr(b[k].data, 0, b[k].len))
			return error("output '%s': string element %zu holds a "
				     "NUL byte, which a C string cannot",
				     o->name, k);
		chars += b[k].len + 1;
	}
	const char **p = rt_grow(&x->ptrs[i], need + sizeof(char *));
	char *c = rt_grow(&x->chars[i], chars + 1);
	for (size_t k = 0; k < n; k++) {
		if (b[k].len)
			memcpy(c, b[k].data, b[k].len);
		c[b[k].len] = 0;
		p[k] = c;
		c += b[k].len + 1;
	}
	if (g->data && need)
		memcpy(g->data, p, need);
	o->data = g->data ? g->data : (void *)p;
	o->size = g->data ? g->size : need;
	return 0;
}

gearrt_status rt_strings_after(RunCtx *s, gearrt_tensor *out,
				size_t nout, bool ok)
{
	struct Strings *x = s->strings;
	gearrt_status st = GEARRT_OK;
	for (size_t i = 0; i < nout; i++) {
		if (s->model->out_info[i].dtype != GEARRT_STRING)
			continue;
		if (ok && !st && string_out(x, i, &out[i]) < 0)
			st = GEARRT_E_OUTPUT;
		if (!ok || st) {
			out[i].data = x->given[i].data;
			out[i].size = x->given[i].size;
		}
	}
	return st;
}
