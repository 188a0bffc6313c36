/*
 * cli/runstats.h - what `gearc run` reports beyond the outputs' shapes
 * (cli/runstats.c): benchmark statistics as trtexec and OpenVINO's
 * benchmark_app give them, the --json document, --print's values.
 */
#ifndef GEARC_RUNSTATS_H
#define GEARC_RUNSTATS_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/gearrt.h"

/* How long the model took before its runs: opening it (with its
 * checks), the session, preparing the inputs' gear
 * (gearrt_session_prepare), the first run after it (which prepares a
 * specialisation of the dynamic graph, if one runs). */
typedef struct Load {
	double open, session, prepare, first;
} Load;

/* The timed runs, in milliseconds, in the order they ran. */
typedef struct Timings {
	double *ms;
	size_t n, cap;
	int warmup;	/* runs before them, not timed */
	double wall_ms; /* from the first timed run's start to the last's end */
} Timings;

void timings_add(Timings *t, double ms);
void timings_free(Timings *t);

/* The statistics of t (n > 0): p50 is the `bench:` line's median. */
typedef struct Stats {
	double mean, stddev, min, p50, p90, p99, max, throughput;
} Stats;

Stats timings_stats(const Timings *t);

/* The `bench:` line (scripts parse it: never change it), then
 * `latency:` and `throughput:` (--bench, --duration). */
void print_bench(const Load *ld, const Timings *t);

/* --print: an output's first values, then its min, max and mean. */
void print_values(const gearrt_tensor *out);

/* --json=FILE: the run's facts as one JSON object (gearc(1), RUN
 * OPTIONS): model, path, threads, cpu, load, warmup, runs_ms, latency,
 * throughput, profile (session s's, if it has one; NULL: null).
 * 0, or -1 with an error naming --json. */
typedef struct RunFacts {
	const char *model, *path; /* path: "gear 1 (dims 4)", ... */
	int threads;
	const Load *load;
	const Timings *t;
	const gearrt_session *profiled;
} RunFacts;

int write_run_json(const char *file, const RunFacts *f);

#endif
