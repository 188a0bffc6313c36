/*
 * cli/runstats.c - benchmark statistics, --json and --print of `gearc
 * run` (runstats.h).
 *
 * Percentiles are ranks of the sorted times: pQ is the time at rank
 * round(Q/100 (N-1)), so p50 is the bench line's median (rank N/2) and
 * p99 of 100 runs is the 99th fastest, not the slowest.  Throughput is
 * the timed runs over the wall time they took, one after another on one
 * thread, as trtexec reports it with its default of one stream.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "runstats.h"
#include "serializer/om.h"

void timings_add(Timings *t, double ms)
{
	if (t->n == t->cap)
		t->ms = xrealloc(t->ms, (t->cap = t->cap ? 2 * t->cap : 64) *
						sizeof(double));
	t->ms[t->n++] = ms;
}

void timings_free(Timings *t)
{
	free(t->ms);
	*t = (Timings){ 0 };
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double rank(const double *sorted, size_t n, double q)
{
	return sorted[(size_t)floor(q * (double)(n - 1) + 0.5)];
}

Stats timings_stats(const Timings *t)
{
	Stats s = { 0 };
	size_t n = t->n;
	double *v = xmalloc(n * sizeof(double)), sum = 0, sq = 0;
	memcpy(v, t->ms, n * sizeof(double));
	qsort(v, n, sizeof(double), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	s.mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (v[i] - s.mean) * (v[i] - s.mean);
	s.stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
	s.min = v[0];
	s.max = v[n - 1];
	s.p50 = rank(v, n, 0.5);
	s.p90 = rank(v, n, 0.9);
	s.p99 = rank(v, n, 0.99);
	s.throughput = t->wall_ms > 0 ? 1e3 * (double)n / t->wall_ms : 0;
	free(v);
	return s;
}

void print_bench(const Load *ld, const Timings *t)
{
	Stats s = timings_stats(t);
	printf("bench: load %.3f ms (open %.3f, prepare %.3f, first run %.3f), "
	       "run median %.3f ms, min %.3f ms over %zu runs\n",
	       ld->open + ld->session + ld->prepare + ld->first,
	       ld->open + ld->session, ld->prepare, ld->first, s.p50, s.min,
	       t->n);
	printf("latency: mean %.3f ms, stddev %.3f, min %.3f, p50 %.3f, p90 "
	       "%.3f, p99 %.3f, max %.3f\n",
	       s.mean, s.stddev, s.min, s.p50, s.p90, s.p99, s.max);
	printf("throughput: %.1f inferences/s (%zu runs in %.3f s, after %d "
	       "warm-up runs)\n",
	       s.throughput, t->n, t->wall_ms / 1e3, t->warmup);
}

/* ---- --print -------------------------------------------------------------- */

enum { PRINT_FIRST = 8 };

static void print_strings(const gearrt_tensor *o, size_t n)
{
	const char *const *s = o->data;
	printf("  values:");
	for (size_t i = 0; i < n && i < PRINT_FIRST; i++) {
		size_t len;
		char *e = str_escape(s[i], strlen(s[i]), ESC_CONTROLS, &len);
		printf(" \"%s\"", e);
		free(e);
	}
	printf("%s\n", n > PRINT_FIRST ? " ..." : "");
}

void print_values(const gearrt_tensor *o)
{
	Tensor t = { .dtype = o->dtype, .data = o->data,
		     .shape = { .rank = o->rank } };
	memcpy(t.shape.dims, o->dims, (size_t)o->rank * sizeof(int64_t));
	int64_t n = shape_numel(&t.shape);
	if (o->dtype == GEARRT_STRING) {
		print_strings(o, (size_t)n);
		return;
	}
	double lo = INFINITY, hi = -INFINITY, sum = 0;
	int64_t nan = 0;
	printf("  values:");
	for (int64_t i = 0; i < n; i++) {
		double x = tensor_get_f64(&t, i);
		if (i < PRINT_FIRST)
			printf(" %.6g", x);
		if (isnan(x)) {
			nan++;
			continue;
		}
		lo = x < lo ? x : lo;
		hi = x > hi ? x : hi;
		sum += x;
	}
	printf("%s\n", n > PRINT_FIRST ? " ..." : n ? "" : " (none)");
	if (n > nan)
		printf("  min %.6g, max %.6g, mean %.6g (%lld elements", lo,
		       hi, sum / (double)(n - nan), (long long)n);
	else
		printf("  no number (%lld elements", (long long)n);
	if (nan)
		printf(", %lld NaN", (long long)nan);
	printf(")\n");
}

/* ---- --json ---------------------------------------------------------------- */

/* v with that many decimals (json-c would write 0.064000000000000001) */
static json_object *jfixed(double v, int decimals)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return json_object_new_double_s(v, buf);
}

/* milliseconds to the microsecond, as the text gives them */
static json_object *jnum(double v)
{
	return jfixed(v, 3);
}

static void jadd(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

static void add_node_time(void *user, const gearrt_node_time *t)
{
	json_object *e = json_object_new_object();
	jadd(e, "graph", json_name(t->graph));
	jadd(e, "node", json_name(t->name));
	jadd(e, "op", json_name(t->op_type));
	jadd(e, "kernel", json_object_new_string(t->kernel));
	jadd(e, "runs", json_object_new_int64((int64_t)t->runs));
	jadd(e, "first_ms", jfixed(t->first_ms, 6));
	jadd(e, "ms", jfixed(t->ms, 6));
	json_object_array_add(user, e);
}

static json_object *load_json(const Load *ld)
{
	json_object *o = json_object_new_object();
	jadd(o, "total_ms", jnum(ld->open + ld->session + ld->prepare +
				 ld->first));
	jadd(o, "open_ms", jnum(ld->open + ld->session));
	jadd(o, "prepare_ms", jnum(ld->prepare));
	jadd(o, "first_run_ms", jnum(ld->first));
	return o;
}

static json_object *latency_json(const Timings *t)
{
	if (!t->n)
		return NULL;
	Stats s = timings_stats(t);
	json_object *o = json_object_new_object();
	jadd(o, "mean", jnum(s.mean));
	jadd(o, "stddev", jnum(s.stddev));
	jadd(o, "min", jnum(s.min));
	jadd(o, "p50", jnum(s.p50));
	jadd(o, "p90", jnum(s.p90));
	jadd(o, "p99", jnum(s.p99));
	jadd(o, "max", jnum(s.max));
	return o;
}

int write_run_json(const char *file, const RunFacts *f)
{
	json_object *o = json_object_new_object(), *runs = json_object_new_array();
	jadd(o, "format", json_object_new_string("gearc-run"));
	jadd(o, "version", json_object_new_int(1));
	jadd(o, "model", json_name(f->model));
	jadd(o, "ran", json_name(f->path));
	jadd(o, "threads", json_object_new_int(f->threads));
	jadd(o, "gearrt_version", json_object_new_string(gearrt_version()));
	jadd(o, "cpu", json_object_new_string(gearrt_cpu_features()));
	jadd(o, "load", load_json(f->load));
	jadd(o, "warmup_runs", json_object_new_int(f->t->warmup));
	for (size_t i = 0; i < f->t->n; i++)
		json_object_array_add(runs, jnum(f->t->ms[i]));
	jadd(o, "runs_ms", runs);
	jadd(o, "latency_ms", latency_json(f->t));
	jadd(o, "throughput", f->t->n ? jfixed(timings_stats(f->t).throughput, 1)
				      : NULL);
	json_object *prof = NULL;
	if (f->profiled) {
		prof = json_object_new_array();
		gearrt_session_profile(f->profiled, add_node_time, prof);
	}
	jadd(o, "profile", prof);
	const char *text = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
	const void *parts[] = { text, "\n" };
	const size_t sizes[] = { strlen(text), 1 };
	int rc = om_write_bytes("--json", file, parts, sizes, 2);
	json_object_put(o);
	return rc;
}
