/*
 * tests/scratch_run.h - runs a static model through libgearrt on fixed
 * inputs, on one thread or several, for tests/test_scratch.c and
 * tests/scratch_soak.c.  Only gearrt.h: the soak binary links
 * libgearrt.a alone, so valgrind's tools see the library as users do.
 *
 * Inputs are filled from their index (floats in [-4, 4) with ties, small
 * integers, words); outputs go to caller buffers, one after another in
 * out[], a string output as the FNV-1a hash of its strings (their
 * pointers differ from session to session).
 */
#ifndef GEARC_SCRATCH_RUN_H
#define GEARC_SCRATCH_RUN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gearrt.h"

typedef struct ScrIo {
	size_t nin, nout;
	gearrt_tensor in[16];
	gearrt_tensor out_info[16];
	size_t out_bytes; /* all outputs, one after another */
} ScrIo;

static inline size_t scr_bytes(const gearrt_tensor *t)
{
	size_t n = gearrt_dtype_size(t->dtype);
	for (int32_t k = 0; k < t->rank; k++)
		n *= (size_t)t->dims[k];
	return n;
}

static inline void scr_fill(gearrt_tensor *t)
{
	size_t n = scr_bytes(t) / gearrt_dtype_size(t->dtype);
	for (size_t i = 0; i < n; i++) {
		uint32_t h = (uint32_t)i * 2654435761u;
		if (t->dtype == GEARRT_FLOAT32)
			((float *)t->data)[i] = (float)(h >> 22) / 128.0f - 4;
		else if (t->dtype == GEARRT_INT32)
			((int32_t *)t->data)[i] = (int32_t)(h >> 24) - 128;
		else if (t->dtype == GEARRT_STRING) {
			static const char *const words[] = {
				"monday", "Tuesday", "the", "WEDNESDAY", "",
				"a", "ete", "thursday"
			};
			((const char **)t->data)[i] = words[(h >> 24) % 8];
		}
	}
}

/* An output's room in out[]: its bytes, or a string output's hash (its
 * length may depend on the data). */
static inline size_t scr_out_bytes(const gearrt_tensor *t)
{
	return t->dtype == GEARRT_STRING ? sizeof(uint64_t) : scr_bytes(t);
}

/* The model's inputs (malloc'd, filled) and outputs; -1 with a message
 * on stderr if an input is not float32, int32 or a string or a dim is
 * not static. */
static inline int scr_open(const gearrt_model *m, ScrIo *io)
{
	memset(io, 0, sizeof(*io));
	io->nin = gearrt_input_count(m);
	io->nout = gearrt_output_count(m);
	if (io->nin > 16 || io->nout > 16)
		return fprintf(stderr, "more than 16 inputs or outputs\n"), -1;
	for (size_t i = 0; i < io->nin; i++) {
		gearrt_tensor *t = &io->in[i];
		gearrt_input_info(m, i, t);
		t->name = NULL;
		for (int32_t k = 0; k < t->rank; k++)
			if (t->dims[k] < 0)
				return fprintf(stderr, "input %zu: a dynamic "
					       "dim\n", i), -1;
		if (t->dtype != GEARRT_FLOAT32 && t->dtype != GEARRT_INT32 &&
		    t->dtype != GEARRT_STRING)
			return fprintf(stderr, "input %zu: %s, expected "
				       "float32, int32 or string\n", i,
				       gearrt_dtype_name(t->dtype)), -1;
		t->size = scr_bytes(t);
		t->data = malloc(t->size ? t->size : 1);
		scr_fill(t);
	}
	for (size_t i = 0; i < io->nout; i++) {
		gearrt_output_info(m, i, &io->out_info[i]);
		io->out_bytes += scr_out_bytes(&io->out_info[i]);
	}
	return 0;
}

static inline void scr_close(ScrIo *io)
{
	for (size_t i = 0; i < io->nin; i++)
		free(io->in[i].data);
}

/* FNV-1a over n strings, each with its NUL. */
static inline uint64_t scr_hash(const char *const *str, size_t n)
{
	uint64_t h = 14695981039346656037u;
	for (size_t i = 0; i < n; i++)
		for (const char *c = str[i];; c++) {
			h = (h ^ (uint8_t)*c) * 1099511628211u;
			if (!*c)
				break;
		}
	return h;
}

/* One run of s, its outputs into out[0..io->out_bytes): written there
 * by the run, or, if mine is false, left in the session's memory and
 * copied from it (a string output always: its hash). */
static inline gearrt_status scr_run_as(gearrt_session *s, const ScrIo *io,
				       uint8_t *out, bool mine)
{
	gearrt_tensor o[16];
	for (size_t i = 0, at = 0; i < io->nout; i++) {
		bool str = io->out_info[i].dtype == GEARRT_STRING;
		size_t n = scr_out_bytes(&io->out_info[i]);
		o[i] = (gearrt_tensor){ .data = str || !mine ? NULL : out + at,
					.size = str || !mine ? 0 : n };
		at += n;
	}
	gearrt_status st = gearrt_run(s, io->in, io->nin, o, io->nout);
	for (size_t i = 0, at = 0; i < io->nout; i++) {
		size_t n = scr_out_bytes(&io->out_info[i]);
		if (st == GEARRT_OK && o[i].dtype == GEARRT_STRING) {
			uint64_t h = scr_hash(o[i].data,
					      o[i].size / sizeof(char *));
			memcpy(out + at, &h, sizeof(h));
		} else if (st == GEARRT_OK && !mine) {
			memcpy(out + at, o[i].data, o[i].size);
		}
		at += n;
	}
	return st;
}

static inline gearrt_status scr_run(gearrt_session *s, const ScrIo *io,
				    uint8_t *out)
{
	return scr_run_as(s, io, out, true);
}

typedef struct ScrWorker {
	gearrt_model *m;
	gearrt_session *shared; /* the session all workers run, or NULL:
				   each its own */
	const ScrIo *io;
	const uint8_t *want; /* the one-thread outputs */
	int runs;
	int failed;	/* runs that failed */
	int differed;	/* runs whose outputs differ from want */
} ScrWorker;

static inline void *scr_worker(void *p)
{
	ScrWorker *w = p;
	gearrt_session *s = w->shared;
	uint8_t *got = malloc(w->io->out_bytes + 1);
	if (!s && gearrt_session_create(w->m, NULL, &s) != GEARRT_OK) {
		w->failed = w->runs;
		free(got);
		return NULL;
	}
	for (int i = 0; i < w->runs; i++) {
		/* a shared session: every other run's outputs left in its
		 * memory, which another thread's run must not overwrite */
		memset(got, 0xa5, w->io->out_bytes);
		if (scr_run_as(s, w->io, got, !w->shared || i % 2) !=
		    GEARRT_OK)
			w->failed++;
		else if (memcmp(got, w->want, w->io->out_bytes))
			w->differed++;
	}
	if (!w->shared)
		gearrt_session_destroy(s);
	free(got);
	return NULL;
}

/* threads sessions on as many threads, runs runs each, against the
 * outputs of one session's one run: the runs that failed or differed
 * (-1 if the reference run fails). */
static inline int scr_threads(gearrt_model *m, const ScrIo *io, int threads,
			      int runs, bool shared)
{
	uint8_t *want = malloc(io->out_bytes + 1);
	ScrWorker w[64];
	pthread_t th[64];
	gearrt_session *s;
	int bad = 0;
	if (threads > 64)
		threads = 64;
	if (gearrt_session_create(m, NULL, &s) != GEARRT_OK ||
	    scr_run(s, io, want) != GEARRT_OK) {
		fprintf(stderr, "one-thread run: %s\n", gearrt_last_error());
		free(want);
		return -1;
	}
	if (!shared)
		gearrt_session_destroy(s);
	for (int i = 0; i < threads; i++) {
		w[i] = (ScrWorker){ .m = m, .shared = shared ? s : NULL,
				    .io = io, .want = want, .runs = runs };
		pthread_create(&th[i], NULL, scr_worker, &w[i]);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		bad += w[i].failed + w[i].differed;
	}
	if (shared)
		gearrt_session_destroy(s);
	free(want);
	return bad;
}

#endif
