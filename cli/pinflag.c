/*
 * cli/pinflag.c - the grammar of --input_value: pin_parse reads the flag
 * into a ParsedPins (compiler/pin.h), which pin_apply applies to the
 * model.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compiler/pin.h"

static bool blank(char c) { return c == ' ' || c == '\t'; }

/* A malloc'd copy of s[0..n) without blanks at either end. */
static char *trimmed(const char *s, size_t n)
{
	while (n && blank(*s))
		s++, n--;
	while (n && blank(s[n - 1]))
		n--;
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

static const char *find_last(const char *s, size_t n, char c)
{
	for (size_t i = n; i > 0; i--)
		if (s[i - 1] == c)
			return s + i - 1;
	return NULL;
}

/* "a,b,c" into e->vals. */
static int split_values(PinEntry *e, int idx, const char *s, size_t n)
{
	size_t k = 1;
	for (size_t i = 0; i < n; i++)
		k += s[i] == ',';
	e->vals = xcalloc(k, sizeof(*e->vals));
	for (const char *p = s, *end = s + n; e->nvals < (int32_t)k;) {
		const char *q = memchr(p, ',', (size_t)(end - p));
		size_t len = q ? (size_t)(q - p) : (size_t)(end - p);
		char *v = trimmed(p, len);
		if (!*v) {
			free(v);
			return error("--input_value: entry %d ('%s'): value %d "
				     "is empty (stray ',')", idx, e->name,
				     e->nvals + 1);
		}
		e->vals[e->nvals++] = v;
		p = q ? q + 1 : end;
	}
	return 0;
}

static int parse_entry(PinEntry *e, int idx, const char *s, size_t n)
{
	char *t = trimmed(s, n);
	int rc = 0;
	const char *colon = find_last(t, strlen(t), ':');
	if (!*t)
		rc = error("--input_value: entry %d is empty (stray ';')", idx);
	else if (!colon)
		rc = error("--input_value: entry %d ('%s') has no ':' between "
			   "name and values", idx, t);
	else if (!(e->name = trimmed(t, (size_t)(colon - t)))[0])
		rc = error("--input_value: entry %d ('%s') has no name before "
			   "':'", idx, t);
	else if (!colon[1])
		rc = error("--input_value: entry %d ('%s') has no values after "
			   "':'", idx, t);
	else
		rc = split_values(e, idx, colon + 1, strlen(colon + 1));
	free(t);
	return rc;
}

/* Name listed before, or given a -1 in --input_shape. */
static int check_entry(const ParsedPins *p, int32_t i, const ParsedGears *pg)
{
	const PinEntry *e = &p->e[i];
	for (int32_t k = 0; k < i; k++)
		if (!strcmp(p->e[k].name, e->name))
			return error("--input_value: '%s' is given twice "
				     "(entries %d and %d)", e->name, k + 1,
				     i + 1);
	for (int32_t k = 0; pg && k < pg->nshapes; k++) {
		const ShapeEntry *s = &pg->shapes[k];
		if (strcmp(s->name, e->name))
			continue;
		for (int32_t d = 0; d < s->rank; d++)
			if (s->dims[d] == -1)
				return error("--input_value: '%s' is pinned, "
					     "but --input_shape makes it a gear "
					     "input (-1 at dim %d); a pinned "
					     "input has one shape", e->name, d);
	}
	return 0;
}

/* The entries again, trimmed: what the .om records. */
static char *canonical(const ParsedPins *p)
{
	size_t n = 1;
	for (int32_t i = 0; i < p->n; i++) {
		n += strlen(p->e[i].name) + 2;
		for (int32_t k = 0; k < p->e[i].nvals; k++)
			n += strlen(p->e[i].vals[k]) + 1;
	}
	char *s = xmalloc(n), *q = s;
	for (int32_t i = 0; i < p->n; i++) {
		q += sprintf(q, "%s%s:", i ? ";" : "", p->e[i].name);
		for (int32_t k = 0; k < p->e[i].nvals; k++)
			q += sprintf(q, "%s%s", k ? "," : "", p->e[i].vals[k]);
	}
	*q = 0;
	return s;
}

int pin_parse(ParsedPins *p, const char *s, const ParsedGears *pg)
{
	memset(p, 0, sizeof(*p));
	if (!s)
		return 0;
	size_t n = strlen(s), k = 1;
	if (!*s)
		return error("--input_value: empty value; expected "
			     "\"name:v0,v1,...\" entries separated by ';'");
	for (size_t i = 0; i < n; i++)
		k += s[i] == ';';
	p->e = xcalloc(k, sizeof(*p->e));
	for (const char *q = s, *end = s + n; p->n < (int32_t)k;) {
		const char *semi = memchr(q, ';', (size_t)(end - q));
		size_t len = semi ? (size_t)(semi - q) : (size_t)(end - q);
		int rc = parse_entry(&p->e[p->n], p->n + 1, q, len);
		p->n++;
		if (rc < 0 || check_entry(p, p->n - 1, pg) < 0) {
			pin_parsed_release(p);
			return -1;
		}
		q = semi ? semi + 1 : end;
	}
	p->canon = canonical(p);
	return 0;
}
