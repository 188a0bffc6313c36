/*
 * tests/bench_run.c - `make bench`, part 3: libgearrt's figures on the
 * real-export fixtures, and its side of tests/bench_ort.mjs (-s).
 *
 * usage: bench_run [-n RUNS] [-t THREADS] [-k NAME] FIXTURES_DIR GEARC
 *
 * For every model of FIXTURES_DIR/expected.json, compiles it with GEARC
 * and the recorded options into build/bench_om/NAME.om, then for every gear:
 * load (open with its checks, session, first run: the preparation of that
 * gear) and the median and minimum of RUNS runs (default 50) on a
 * fixed-seed input (floats in [-1, 1); an int64 scalar input, a sample
 * rate, gets 16000; other int64 inputs, token ids and attention masks,
 * 0 or 1: an index every table has, a mask's values).  One line per gear, then the file's load alone.
 *
 * usage: bench_run -s [-t THREADS] OM GEAR DIR
 *
 * The libgearrt side of tests/bench_ort.mjs (ONNX Runtime against
 * libgearrt): opens OM, prepares GEAR with a first run on the same
 * fixed-seed inputs, writes them as DIR/input_K.npy (K the input's index,
 * for the other engine) and prints one JSON line: the load time (open +
 * session + first run, the inputs' generation left out) and the inputs'
 * names, dtypes and dims and the outputs' names.  Then one command a line
 * on stdin: "r" runs once and prints the run's milliseconds; "q" writes
 * the outputs as DIR/gearrt_K.npy and prints {"rss_kb": peak RSS}.
 *
 * usage: bench_run -p
 *
 * Prints this CPU's fp32 multiply-add peak of one thread in GFLOP/s, as
 * measured: independent vector FMAs (AVX-512 where the CPU has it, else
 * AVX2 and FMA, else none: 0) for about 50 ms.  tests/bench_ort.mjs
 * gives GFLOP/s as a share of it.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/npy.h"
#include "compiler/cpu.h"
#include "compiler/ir.h"
#include "runtime/gearrt.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int compile(const char *gearc, const char *dir, json_object *e,
		   const char *out)
{
	const char *argv[16];
	char model[1024], output[1024];
	json_object *args = json_object_object_get(e, "args");
	snprintf(model, sizeof(model), "--model=%s/%s", dir,
		 json_object_get_string(json_object_object_get(e, "model")));
	snprintf(output, sizeof(output), "--output=%s", out);
	int n = 0;
	argv[n++] = gearc;
	argv[n++] = model;
	for (size_t i = 0; i < json_object_array_length(args) && n < 12; i++)
		argv[n++] = json_object_get_string(
			json_object_array_get_idx(args, i));
	argv[n++] = output;
	argv[n++] = "-q";
	argv[n] = NULL;
	pid_t pid = fork();
	if (pid == 0) {
		execv(gearc, (char *const *)argv);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Inputs at gear g, filled; returns their count. */
static size_t make_inputs(gearrt_model *m, size_t g, gearrt_tensor *in)
{
	const int64_t *dims = NULL;
	size_t nd = 0, at = 0, nin = gearrt_input_count(m);
	uint64_t x = 0x9E3779B97F4A7C15u;
	if (gearrt_gear_count(m))
		gearrt_gear_dims(m, g, &dims, &nd);
	for (size_t i = 0; i < nin; i++) {
		gearrt_input_info(m, i, &in[i]);
		size_t n = 1;
		for (int32_t d = 0; d < in[i].rank; d++) {
			if (in[i].dims[d] < 0)
				in[i].dims[d] = dims[at++];
			n *= (size_t)in[i].dims[d];
		}
		in[i].size = n * gearrt_dtype_size(in[i].dtype);
		in[i].data = calloc(1, in[i].size + 1);
		for (size_t k = 0; k < n; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			if (in[i].dtype == GEARRT_FLOAT32)
				((float *)in[i].data)[k] =
					(float)((x >> 40) / 8388608.0 - 1);
			else if (in[i].dtype == GEARRT_INT64)
				((int64_t *)in[i].data)[k] =
					in[i].rank ? (int64_t)(x >> 63) : 16000;
		}
	}
	return nin;
}

static void bench_gear(const char *name, const char *om, size_t g, int runs,
		       int threads)
{
	gearrt_tensor in[16], out[16];
	double t0 = now_ms();
	gearrt_model *m;
	gearrt_session *s;
	gearrt_options opt = { .threads = threads };
	gearrt_options_from_env(&opt);
	if (gearrt_model_open(om, &m) || gearrt_session_create(m, &opt, &s)) {
		printf("%-10s gear %zu: %s\n", name, g, gearrt_last_error());
		return;
	}
	size_t nin = make_inputs(m, g, in), nout = gearrt_output_count(m);
	memset(out, 0, sizeof(out));
	int rc = gearrt_run(s, in, nin, out, nout);
	double load = now_ms() - t0;
	double *t = malloc((size_t)runs * sizeof(double));
	for (int i = 0; i < runs && !rc; i++) {
		double a = now_ms();
		rc = gearrt_run(s, in, nin, out, nout);
		t[i] = now_ms() - a;
	}
	char dims[64] = "static";
	if (gearrt_gear_count(m)) {
		const int64_t *d;
		size_t nd, at = 0;
		gearrt_gear_dims(m, g, &d, &nd);
		for (size_t k = 0; k < nd && at < sizeof(dims) - 24; k++)
			at += (size_t)snprintf(dims + at, sizeof(dims) - at,
					       "%s%lld", k ? "," : "",
					       (long long)d[k]);
	}
	if (rc) {
		printf("%-10s %-12s %s\n", name, dims, gearrt_last_error());
	} else {
		qsort(t, (size_t)runs, sizeof(double), cmp_double);
		printf("%-10s %-12s %9.2f %11.3f %9.3f\n", name, dims, load,
		       t[runs / 2], t[0]);
	}
	free(t);
	for (size_t i = 0; i < nin; i++)
		free(in[i].data);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
}

/* Peak resident set of this process in kB (VmHWM), -1 if unknown. */
static long peak_rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kb = atol(line + 6);
	fclose(f);
	return kb;
}

static int write_npy(const char *dir, const char *what, size_t k,
		     const gearrt_tensor *t)
{
	char path[1024];
	Shape sh = shape_of(t->rank, t->dims);
	snprintf(path, sizeof(path), "%s/%s_%zu.npy", dir, what, k);
	if (npy_write(path, t->dtype, &sh, t->data) < 0) {
		fprintf(stderr, "bench_run: cannot write %s\n", path);
		return -1;
	}
	return 0;
}

static void print_tensors(const char *key, const gearrt_tensor *t, size_t n,
			  int with_dims)
{
	printf("\"%s\": [", key);
	for (size_t i = 0; i < n; i++) {
		printf("%s{\"name\": \"%s\"", i ? ", " : "", t[i].name);
		if (with_dims) {
			printf(", \"dtype\": %d, \"dims\": [", t[i].dtype);
			for (int32_t d = 0; d < t[i].rank; d++)
				printf("%s%lld", d ? ", " : "",
				       (long long)t[i].dims[d]);
			printf("]");
		}
		printf("}");
	}
	printf("]");
}

/* bench_run -s: one (model, gear) driven run by run over stdin. */
static int serve(const char *om, size_t g, const char *dir, int threads)
{
	gearrt_tensor in[16], out[16];
	gearrt_model *m;
	gearrt_session *s;
	gearrt_options opt = { .threads = threads };
	gearrt_options_from_env(&opt);
	double t0 = now_ms();
	if (gearrt_model_open(om, &m) || gearrt_session_create(m, &opt, &s)) {
		printf("{\"error\": \"%s\"}\n", gearrt_last_error());
		return 1;
	}
	double open_ms = now_ms() - t0;
	size_t nin = gearrt_input_count(m), nout = gearrt_output_count(m);
	if (nin > 16 || nout > 16 || (gearrt_gear_count(m) &&
				      g >= gearrt_gear_count(m))) {
		printf("{\"error\": \"%s: too many inputs or no gear %zu\"}\n",
		       om, g);
		return 1;
	}
	make_inputs(m, g, in);
	memset(out, 0, sizeof(out));
	t0 = now_ms();
	int rc = gearrt_run(s, in, nin, out, nout);
	double first = now_ms() - t0;
	gearrt_stats st;
	if (rc || gearrt_session_stats(s, &st)) {
		printf("{\"error\": \"%s\"}\n", gearrt_last_error());
		return 1;
	}
	for (size_t i = 0; i < nin; i++)
		if (write_npy(dir, "input", i, &in[i]) < 0)
			return 1;
	/* ready: the file opened, the session made and the gear's kernels
	 * prepared (in the first run), as ORT's session creation */
	printf("{\"load_ms\": %.3f, \"ready_ms\": %.3f, ", open_ms + first,
	       open_ms + st.prepare_ms);
	print_tensors("inputs", in, nin, 1);
	printf(", ");
	print_tensors("outputs", out, nout, 0);
	printf("}\n");
	fflush(stdout);
	char cmd[64];
	while (fgets(cmd, sizeof(cmd), stdin) && cmd[0] == 'r') {
		double a = now_ms();
		rc = gearrt_run(s, in, nin, out, nout);
		double t = now_ms() - a;
		if (rc) {
			printf("{\"error\": \"%s\"}\n", gearrt_last_error());
			return 1;
		}
		printf("%.4f\n", t);
		fflush(stdout);
	}
	for (size_t i = 0; i < nout; i++)
		if (write_npy(dir, "gearrt", i, &out[i]) < 0)
			return 1;
	printf("{\"rss_kb\": %ld}\n", peak_rss_kb());
	fflush(stdout);
	for (size_t i = 0; i < nin; i++)
		free(in[i].data);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	return 0;
}

/* Multiply-adds on 24 independent vectors of VL floats, reps times:
 * flops a second. */
#define FMA_LOOP(name, VL, isa)                                              \
	isa __attribute__((optimize("O3", "fp-contract=fast")))             \
	static double name(long reps)                                         \
	{                                                                     \
		typedef float V __attribute__((vector_size(VL * 4)));        \
		V a[24], x = (V){ 0 } + 1.0000001f, y = (V){ 0 } + 1e-9f;   \
		for (int i = 0; i < 24; i++)                                  \
			a[i] = (V){ 0 } + (float)i;                           \
		double t0 = now_ms();                                         \
		for (long k = 0; k < reps; k++) {                             \
			_Pragma("GCC unroll 24")                              \
			for (int i = 0; i < 24; i++)                          \
				a[i] = a[i] * x + y;                          \
		}                                                             \
		double ms = now_ms() - t0;                                    \
		volatile float keep = 0;                                      \
		for (int i = 0; i < 24; i++)                                  \
			keep += a[i][0];                                      \
		(void)keep;                                                   \
		return reps * 24.0 * VL * 2 / (ms / 1e3);                     \
	}
#if defined(__x86_64__)
FMA_LOOP(fma512, 16, __attribute__((target("avx512f,fma"))))
FMA_LOOP(fma256, 8, __attribute__((target("avx2,fma"))))
#elif defined(__aarch64__)
FMA_LOOP(fma128, 4, ) /* NEON */
#endif

/* The level's loop, within the cap (NULL: no FMA at this level). */
static double (*peak_loop(void))(long)
{
#if defined(__x86_64__)
	return cpu_isa() >= CPU_LEVEL_AVX512 ? fma512
	       : cpu_isa() >= CPU_LEVEL_AVX2 ? fma256
					     : NULL;
#elif defined(__aarch64__)
	return fma128;
#else
	return NULL;
#endif
}

static int print_peak(void)
{
	double (*loop)(long) = peak_loop();
	double best = 0;
	for (int i = 0; loop && i < 5; i++) { /* the best of 5 of ~10 ms */
		double f = loop(1 << 19);
		best = f > best ? f : best;
	}
	printf("%.1f\n", best / 1e9);
	return 0;
}

int main(int argc, char **argv)
{
	int runs = 50, threads = 1, opt;
	int server = 0;
	const char *only = NULL;
	gearrt_wait_policy_exec(argv); /* as gearc run's threads wait */
	while ((opt = getopt(argc, argv, "n:t:k:sp")) != -1) {
		if (opt == 'n')
			runs = atoi(optarg);
		else if (opt == 't')
			threads = atoi(optarg);
		else if (opt == 'k')
			only = optarg;
		else if (opt == 's')
			server = 1;
		else if (opt == 'p') {
			/* the peak of the cap's level (GEARRT_MAX_ISA) */
			gearrt_options o = { 0 };
			gearrt_options_from_env(&o);
			if (o.max_isa > 0)
				cpu_cap((CpuLevel)(o.max_isa -
						   GEARRT_ISA_BASELINE));
			return print_peak();
		}
	}
	if (server && argc - optind == 3)
		return serve(argv[optind], (size_t)atol(argv[optind + 1]),
			     argv[optind + 2], threads);
	if (argc - optind != 2 || runs < 1) {
		fprintf(stderr,
			"usage: bench_run [-n RUNS] [-t THREADS] [-k NAME] "
			"FIXTURES_DIR GEARC\n"
			"       bench_run -s [-t THREADS] OM GEAR DIR\n"
			"       bench_run -p\n");
		return 2;
	}
	const char *dir = argv[optind], *gearc = argv[optind + 1];
	char path[512];
	snprintf(path, sizeof(path), "%s/expected.json", dir);
	json_object *root = json_object_from_file(path);
	if (!root) {
		fprintf(stderr, "bench_run: cannot read %s\n", path);
		return 1;
	}
	mkdir("build", 0777);
	mkdir("build/bench_om", 0777);
	gearrt_options env = { 0 };
	gearrt_options_from_env(&env);
	printf("libgearrt, %s, %d thread(s), %d runs a gear\n",
	       env.no_fast ? "reference kernels" : "oneDNN fast paths",
	       threads, runs);
	printf("%-10s %-12s %9s %11s %9s\n", "model", "gear", "load ms",
	       "median ms", "min ms");
	json_object_object_foreach(root, name, e) {
		if (only && strcmp(only, name))
			continue;
		char om[512];
		snprintf(om, sizeof(om), "build/bench_om/%s.om", name);
		if (compile(gearc, dir, e, om) < 0) {
			printf("%-10s compile failed\n", name);
			continue;
		}
		size_t ng = json_object_array_length(
			json_object_object_get(e, "gears"));
		for (size_t g = 0; g < (ng ? ng : 1); g++)
			bench_gear(name, om, g, runs, threads);
	}
	json_object_put(root);
	return 0;
}
