/*
 * compiler/warn.c - warnings about a model being compiled (model_warn).
 *
 * The compiler never prints: it records what the user should know (a
 * branch that can only fail, a scope that kept the full clone, an arena
 * larger than the machine's memory) and cli/ prints the list.  Gear
 * branches are specialised on several threads, so adding takes a lock,
 * and the list is sorted by key when read, so the output does not depend
 * on which thread came first.
 */
#include "ir.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Warning {
	int64_t key, seq;
	char *text;
} Warning;

typedef struct Warnings {
	Warning *w;
	int32_t n, cap;
	bool sorted;
} Warnings;

static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;

static bool has_text(const Warnings *ws, const char *text)
{
	for (int32_t i = 0; i < ws->n; i++)
		if (!strcmp(ws->w[i].text, text))
			return true;
	return false;
}

void model_warn(Model *m, int64_t key, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&warn_lock);
	if (!m->warnings)
		m->warnings = xcalloc(1, sizeof(*m->warnings));
	Warnings *ws = m->warnings;
	if (!has_text(ws, buf)) {
		if (ws->n == ws->cap) {
			ws->cap = ws->cap ? 2 * ws->cap : 8;
			ws->w = xrealloc(ws->w, (size_t)ws->cap * sizeof(*ws->w));
		}
		ws->w[ws->n] = (Warning){ key, ws->n, xstrdup(buf) };
		ws->n++;
		ws->sorted = false;
	}
	pthread_mutex_unlock(&warn_lock);
}

static int by_key(const void *a, const void *b)
{
	const Warning *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int32_t model_warning_count(const Model *m)
{
	return m->warnings ? m->warnings->n : 0;
}

const char *model_warning(const Model *m, int32_t i)
{
	Warnings *ws = m->warnings;
	ASSERT(ws && i >= 0 && i < ws->n);
	if (!ws->sorted) {
		qsort(ws->w, (size_t)ws->n, sizeof(*ws->w), by_key);
		ws->sorted = true;
	}
	return ws->w[i].text;
}

void model_warnings_free(Model *m)
{
	Warnings *ws = m->warnings;
	if (!ws)
		return;
	for (int32_t i = 0; i < ws->n; i++)
		free(ws->w[i].text);
	free(ws->w);
	free(ws);
	m->warnings = NULL;
}
