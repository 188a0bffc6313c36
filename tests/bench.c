/*
 * tests/bench.c - how long gearc takes to compile a model for 1, 10 and 100
 * gears (`make bench`).
 *
 * usage: bench [--model=FILE] [--input_shape=SPEC] [--step=N]
 *              [--gears=1,10,100] [--runs=N] [--python=PATH]
 *              [--script=FILE] [--no-onnx]
 *
 * Defaults: tests/fixtures/bench_rec.onnx, --input_shape=x:1,3,48,-1,
 * step 16, gears 1,10,100, 7 runs.  For a gear count K the gears are
 * --dynamic_dims="S;2S;...;KS" (S = step; every -1 of --input_shape takes
 * the gear's value); K = 1 is a static compile with S in place of the -1s
 * (a gear option needs at least 2 gears).  E.g. on a CNN with batch gears:
 *
 *   build/bench --model=tests/fixtures/demo_cnn.onnx \
 *               --input_shape=x:-1,3,32,32 --step=1
 *
 * Everything runs in this process, as `gearc compile` does it (see
 * cli/compile.c compile_model): onnx_load, gear_parse + gear_apply,
 * run_passes, then om_encode into memory (no file I/O, so the disk does
 * not add noise).  Each configuration is compiled once to warm up and check
 * it works, then RUNS times; the table shows medians (CLOCK_MONOTONIC):
 *
 *   gears, jobs     gear count; -j1 or the default (0: one thread per core)
 *   total_ms        the whole compile, import to encoded .om, and
 *                   freeing it all
 *   per_gear_ms     total / gears
 *   import/passes/encode_ms   the three phases: onnx_load (with
 *                   gear_parse), gear_apply + run_passes, om_encode
 *   free_ms         model_free and the rest of the teardown
 *   ns/node         passes / (gears x nodes): inference, folding and
 *                   the rest of the pipeline, per node of every gear
 *   om_KiB          size of the .om
 *   peak_MiB        peak resident memory during the configuration's runs
 *                   (VmHWM after resetting it through /proc/self/clear_refs;
 *                   where that is not possible, getrusage's ru_maxrss, the
 *                   peak of the whole process so far)
 *
 * Then, when PYTHON (default /usr/bin/python3) can import onnx, it runs
 * tests/bench_onnx.py, which times onnx.shape_inference.infer_shapes(model,
 * data_prop=True) once per gear with the inputs set to the gear's shapes,
 * and prints one line per gear count:
 *   bench: 100 gears: gearc 0.12 s, onnx 3.4 s, 28x faster
 * Without it: "bench: onnx comparison skipped (...)".
 *
 * Exit status: 0; 1 if gearc cannot compile the model (its error is
 * printed) or the onnx script fails; 2 on a bad option.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "compiler/onnx.h"
#include "passes/passes.h"
#include "serializer/om.h"

#define MAX_COUNTS 16
#define MAX_RUNS 101

typedef struct Opts {
	const char *model, *input_shape, *python, *script;
	int64_t step;
	int counts[MAX_COUNTS], ncounts;
	int runs;
	bool onnx;
} Opts;

typedef struct Times {
	double total, import, passes, encode, teardown; /* seconds */
	size_t om_bytes;
	int64_t nodes;
} Times;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static NORETURN void die(int status, const char *fmt, ...) PRINTF_LIKE(2, 3);
static NORETURN void die(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("bench: error: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(status);
}

/* ---- options --------------------------------------------------------- */

static bool opt(const char *arg, const char *name, const char **val)
{
	size_t n = strlen(name);
	if (strncmp(arg, name, n) || arg[n] != '=')
		return false;
	*val = arg + n + 1;
	return true;
}

static int64_t parse_count(const char *what, const char *s, size_t n,
			   int64_t max)
{
	int64_t v;
	if (!parse_i64(s, n, &v) || v < 1 || v > max)
		die(2, "%s: '%.*s' is not an integer from 1 to %lld", what,
		    (int)n, s, (long long)max);
	return v;
}

static void parse_opts(Opts *o, int argc, char **argv)
{
	*o = (Opts){ .model = "tests/fixtures/bench_rec.onnx",
		     .input_shape = "x:1,3,48,-1",
		     .python = getenv("PYTHON") ? getenv("PYTHON")
						: "/usr/bin/python3",
		     .script = "tests/bench_onnx.py",
		     .step = 16,
		     .counts = { 1, 10, 100 },
		     .ncounts = 3,
		     .runs = 7,
		     .onnx = true };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if (opt(a, "--model", &v))
			o->model = v;
		else if (opt(a, "--input_shape", &v) ||
			 opt(a, "--input-shape", &v))
			o->input_shape = v;
		else if (opt(a, "--python", &v))
			o->python = v;
		else if (opt(a, "--script", &v))
			o->script = v;
		else if (opt(a, "--step", &v))
			o->step = parse_count("--step", v, strlen(v),
					      INT64_MAX / GEAR_MAX);
		else if (opt(a, "--runs", &v))
			o->runs = (int)parse_count("--runs", v, strlen(v),
						   MAX_RUNS);
		else if (opt(a, "--gears", &v)) {
			o->ncounts = 0;
			for (const char *p = v;; p++) {
				size_t n = strcspn(p, ",");
				if (o->ncounts == MAX_COUNTS)
					die(2, "--gears: at most %d counts",
					    MAX_COUNTS);
				o->counts[o->ncounts++] = (int)parse_count(
					"--gears", p, n, GEAR_MAX);
				p += n;
				if (!*p)
					break;
			}
		} else if (!strcmp(a, "--no-onnx"))
			o->onnx = false;
		else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			printf("usage: bench [--model=FILE] [--input_shape=SPEC]"
			       " [--step=N] [--gears=1,10,100] [--runs=N]\n"
			       "             [--python=PATH] [--script=FILE]"
			       " [--no-onnx]\n");
			exit(0);
		} else
			die(2, "unknown option '%s' (try --help)", a);
	}
	if (!strstr(o->input_shape, "-1"))
		die(2, "--input_shape: '%s' has no -1 to vary", o->input_shape);
}

/* ---- the gear options for K gears ------------------------------------ */

static char *strf(const char *fmt, ...) PRINTF_LIKE(1, 2);
static char *strf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *p = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

/* Appends s to the malloc'd *buf. */
static void append(char **buf, const char *s)
{
	size_t a = *buf ? strlen(*buf) : 0, b = strlen(s);
	*buf = xrealloc(*buf, a + b + 1);
	memcpy(*buf + a, s, b + 1);
}

/* The number of -1 dims in spec ("x:1,-1;y:-1,-1" -> 3). */
static int count_dyn(const char *spec)
{
	int n = 0;
	for (const char *p = spec; (p = strstr(p, "-1")); p += 2)
		if ((p == spec || p[-1] == ',' || p[-1] == ':') &&
		    (p[2] == ',' || p[2] == ';' || !p[2]))
			n++;
	return n;
}

/* spec with every -1 dim replaced by value (malloc'd). */
static char *static_spec(const char *spec, int64_t value)
{
	char *out = NULL, num[32];
	snprintf(num, sizeof(num), "%lld", (long long)value);
	for (const char *p = spec; *p;) {
		const char *q = strstr(p, "-1");
		while (q && !((q == spec || q[-1] == ',' || q[-1] == ':') &&
			      (q[2] == ',' || q[2] == ';' || !q[2])))
			q = strstr(q + 2, "-1");
		if (!q) {
			append(&out, p);
			break;
		}
		char *head = strf("%.*s", (int)(q - p), p);
		append(&out, head);
		free(head);
		append(&out, num);
		p = q + 2;
	}
	return out ? out : xstrdup("");
}

/* --dynamic_dims for gears step, 2 step, ... k step, each value repeated
 * for the ndyn -1s. */
static char *dims_list(int k, int64_t step, int ndyn)
{
	char *out = NULL, num[32];
	for (int g = 1; g <= k; g++) {
		for (int d = 0; d < ndyn; d++) {
			snprintf(num, sizeof(num), "%s%lld", d ? "," : "",
				 (long long)(step * g));
			append(&out, num);
		}
		if (g < k)
			append(&out, ";");
	}
	return out;
}

/* ---- one compile ----------------------------------------------------- */

static int count_nodes(Graph *g, void *ctx)
{
	*(int64_t *)ctx += g->nnodes;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Compiles as `gearc compile` would (without writing the file); 0, or -1
 * with the error set. */
static int compile_once(const Opts *o, const GearOptions *go, int jobs,
			Times *t)
{
	PassOptions co = { .jobs = jobs, .fold_limit = 64 * 1024 };
	ParsedGears pg;
	uint8_t *bytes = NULL;
	size_t len = 0;
	double t0 = now();
	if (gear_parse(&pg, go) < 0) {
		gear_parsed_release(&pg);
		return -1;
	}
	Model *m = onnx_load(o->model);
	if (!m) {
		gear_parsed_release(&pg);
		return -1;
	}
	m->path = base_name(o->model);
	m->jobs = jobs;
	t->nodes = 0;
	graph_walk(m->graph, count_nodes, &t->nodes);
	double t1 = now();
	int rc = gear_apply(m, &pg);
	if (!rc)
		rc = run_passes(m, &co);
	double t2 = now();
	if (!rc)
		rc = om_encode(m, &bytes, &len);
	double t3 = now();
	model_free(m);
	gear_parsed_release(&pg);
	free(bytes);
	double t4 = now();
	t->import = t1 - t0;
	t->passes = t2 - t1;
	t->encode = t3 - t2;
	t->teardown = t4 - t3;
	t->total = t4 - t0;
	t->om_bytes = len;
	return rc;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- peak memory ----------------------------------------------------- */

static bool peak_reset(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	if (!f)
		return false;
	bool ok = fputs("5", f) >= 0;
	return fclose(f) == 0 && ok;
}

/* Peak RSS in KiB: VmHWM if reset worked, else ru_maxrss. */
static long peak_kib(bool was_reset)
{
	if (was_reset) {
		FILE *f = fopen("/proc/self/status", "r");
		char line[256];
		long kib = -1;
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "VmHWM:", 6))
				kib = atol(line + 6);
		if (f)
			fclose(f);
		if (kib >= 0)
			return kib;
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* ---- the onnx comparison --------------------------------------------- */

/* s in single quotes for sh (malloc'd). */
static char *shell_quote(const char *s)
{
	char *out = xstrdup("'");
	for (const char *p = s; *p; p++) {
		char c[2] = { *p, 0 };
		append(&out, *p == '\'' ? "'\\''" : c);
	}
	append(&out, "'");
	return out;
}

/* Runs the onnx script; fills secs[i] for counts[i] (-1 if missing).
 * Returns 0, or -1 if it failed (a reason printed). */
static int run_onnx(const Opts *o, double *secs)
{
	char *py = shell_quote(o->python);
	char *check = strf("%s -c 'import onnx' >/dev/null 2>&1", py);
	int st = system(check);
	free(check);
	if (st != 0) {
		printf("bench: onnx comparison skipped (%s cannot import "
		       "onnx; apt-get install python3-onnx)\n",
		       o->python);
		free(py);
		return 1;
	}
	char *counts = xstrdup("");
	for (int i = 0; i < o->ncounts; i++) {
		char num[16];
		snprintf(num, sizeof(num), "%s%d", i ? "," : "", o->counts[i]);
		append(&counts, num);
	}
	int nruns = o->runs < 3 ? o->runs : 3;
	char *script = shell_quote(o->script), *model = shell_quote(o->model),
	     *spec = shell_quote(o->input_shape);
	char *cmd = strf("%s %s --model=%s --input_shape=%s --step=%lld "
			 "--gears=%s --runs=%d",
			 py, script, model, spec, (long long)o->step, counts,
			 nruns);
	free(py);
	free(script);
	free(model);
	free(spec);
	free(counts);
	fflush(stdout);
	FILE *p = popen(cmd, "r");
	free(cmd);
	if (!p) {
		printf("bench: cannot run %s\n", o->script);
		return -1;
	}
	for (int i = 0; i < o->ncounts; i++)
		secs[i] = -1;
	char line[512];
	while (fgets(line, sizeof(line), p)) {
		int k;
		double s;
		if (sscanf(line, "onnx-result gears=%d median_s=%lf", &k, &s) ==
		    2) {
			for (int i = 0; i < o->ncounts; i++)
				if (o->counts[i] == k)
					secs[i] = s;
		} else {
			fputs(line, stdout);
		}
	}
	st = pclose(p);
	if (st != 0) {
		printf("bench: %s failed (status %d)\n", o->script, st);
		return -1;
	}
	return 0;
}

/* "0.12 s", "3.5 ms", "52 us" */
static const char *secs_text(char buf[32], double s)
{
	if (s >= 0.1)
		snprintf(buf, 32, "%.2f s", s);
	else if (s >= 1e-3)
		snprintf(buf, 32, "%.1f ms", s * 1e3);
	else
		snprintf(buf, 32, "%.0f us", s * 1e6);
	return buf;
}

static const char *ratio_text(char buf[32], double r)
{
	snprintf(buf, 32, r >= 10 ? "%.0f" : "%.1f", r);
	return buf;
}

/* ---- main ------------------------------------------------------------ */

int main(int argc, char **argv)
{
	Opts o;
	parse_opts(&o, argc, argv);
	int ndyn = count_dyn(o.input_shape);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	/* median totals per count: default threads, -j1 */
	double best[MAX_COUNTS], best_j1[MAX_COUNTS];
	Times t = { 0 };

	printf("bench: %s, input %s, gears of %lld*k, median of %d runs, "
	       "%ld cores\n",
	       o.model, o.input_shape, (long long)o.step, o.runs, cores);
	bool header = false;
	for (int c = 0; c < o.ncounts; c++) {
		int k = o.counts[c];
		char *spec = NULL, *dims = NULL;
		GearOptions go = { 0 };
		if (k == 1) {
			spec = static_spec(o.input_shape, o.step);
			go.input_shape = spec;
		} else {
			dims = dims_list(k, o.step, ndyn);
			go.input_shape = o.input_shape;
			go.dynamic_dims = dims;
		}
		static const int jobs[] = { 1, 0 };
		for (size_t j = 0; j < ARRAY_SIZE(jobs); j++) {
			bool reset = peak_reset();
			clear_error();
			if (compile_once(&o, &go, jobs[j], &t) < 0) {
				if (k == 1)
					die(1, "compiling with --input_shape=%s: "
					    "%s", spec, last_error());
				die(1, "compiling %d gears (--input_shape=%s "
				    "--dynamic_dims=%lld;...;%lld): %s", k,
				    o.input_shape, (long long)o.step,
				    (long long)(o.step * k), last_error());
			}
			double v[5][MAX_RUNS];
			for (int r = 0; r < o.runs; r++) {
				if (compile_once(&o, &go, jobs[j], &t) < 0)
					die(1, "%s", last_error());
				v[0][r] = t.total;
				v[1][r] = t.import;
				v[2][r] = t.passes;
				v[3][r] = t.encode;
				v[4][r] = t.teardown;
			}
			double total = median(v[0], o.runs);
			double imp = median(v[1], o.runs);
			double passes = median(v[2], o.runs);
			double enc = median(v[3], o.runs);
			double tear = median(v[4], o.runs);
			long kib = peak_kib(reset);
			if (!header) {
				printf("%6s %5s %9s %11s %9s %9s %9s %9s "
				       "%8s %8s %8s\n",
				       "gears", "jobs", "total_ms", "per_gear_ms",
				       "import_ms", "passes_ms", "encode_ms",
				       "free_ms", "ns/node", "om_KiB",
				       "peak_MiB");
				header = true;
			}
			char jt[16];
			if (jobs[j])
				snprintf(jt, sizeof(jt), "%d", jobs[j]);
			else
				snprintf(jt, sizeof(jt), "all%ld", cores);
			printf("%6d %5s %9.2f %11.3f %9.2f %9.2f %9.2f %9.2f "
			       "%8.0f %8.1f %8.1f\n",
			       k, jt, total * 1e3, total * 1e3 / k, imp * 1e3,
			       passes * 1e3, enc * 1e3, tear * 1e3,
			       t.nodes ? passes * 1e9 / ((double)k *
							  (double)t.nodes)
				       : 0.0,
			       (double)t.om_bytes / 1024, (double)kib / 1024);
			fflush(stdout);
			if (jobs[j])
				best_j1[c] = total;
			else
				best[c] = total;
		}
		free(spec);
		free(dims);
	}
	printf("bench: %lld nodes in the model (subgraphs included)\n",
	       (long long)t.nodes);

	if (!o.onnx) {
		printf("bench: onnx comparison skipped (--no-onnx)\n");
		return 0;
	}
	double secs[MAX_COUNTS];
	int rc = run_onnx(&o, secs);
	if (rc)
		return rc < 0 ? 1 : 0;
	for (int c = 0; c < o.ncounts; c++) {
		char g[32], j1[32], x[32];
		printf("bench: %d gear%s: gearc %s", o.counts[c],
		       o.counts[c] == 1 ? "" : "s", secs_text(g, best[c]));
		if (secs[c] < 0)
			printf(", onnx: no result");
		else if (secs[c] >= best[c])
			printf(", onnx %s, %sx faster", secs_text(x, secs[c]),
			       ratio_text(j1, secs[c] / best[c]));
		else
			printf(", onnx %s, %sx slower", secs_text(x, secs[c]),
			       ratio_text(j1, best[c] / secs[c]));
		printf(" (gearc -j1: %s)\n", secs_text(j1, best_j1[c]));
	}
	return 0;
}
