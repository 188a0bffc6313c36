/*
 * tests/bench_overhead.c - libgearrt's fixed cost of a run: gearrt_run
 * from entry to exit, less the kernels.
 *
 * usage: bench_overhead [-n RUNS] [-t THREADS] [-P] OM...
 *
 * For each compiled model (tests/gen_small_models.py's chain.onnx, eight
 * trivial nodes on one float, and bench_mlp.onnx, the 3-layer MLP head,
 * compiled with gearc), opens it, makes a session and runs it once (the
 * gear's preparation), then times RUNS runs (default 50000, a tenth
 * for a model whose run takes over 10 us) on one fixed input with a
 * caller's output buffer, in 5 blocks; prints the best block's ns per run
 * and per node.  Then once more with a profile (GEARRT_PROFILE_OPS, whose
 * per-node clock reads add their own cost): the kernels' mean time a run
 * from gearrt_session_profile, and the rest of a run: the fixed cost
 * and the profile's clock reads (the profiled run's time less its
 * kernels' mean, timed over other runs: where the kernels take
 * microseconds, noise of either sign).  The unprofiled time of the chain,
 * kernels included, bounds the fixed cost.  -P: no profiled pass (for
 * perf record).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/gearrt.h"

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef struct Sum {
	double ms;
	int nodes;
} Sum;

static void add_node(void *user, const gearrt_node_time *t)
{
	Sum *s = user;
	s->ms += t->ms;
	s->nodes++;
}

static int die(const char *what)
{
	fprintf(stderr, "bench_overhead: %s: %s\n", what, gearrt_last_error());
	return 1;
}

/* The best of 5 blocks of runs runs: ns a run; the outputs' buffers
 * outs[], sized from a first run. */
static double time_runs(gearrt_session *s, gearrt_tensor *in, size_t nin,
			gearrt_tensor *out, size_t nout, long runs)
{
	double best = 1e300;
	for (int b = 0; b < 5; b++) {
		double t0 = now_ns();
		for (long i = 0; i < runs; i++)
			if (gearrt_run(s, in, nin, out, nout) != GEARRT_OK) {
				die("run");
				exit(1);
			}
		double ns = (now_ns() - t0) / (double)runs;
		best = ns < best ? ns : best;
	}
	return best;
}

static int bench(const char *om, long runs, int threads, int passes)
{
	gearrt_model *m;
	if (gearrt_model_open(om, &m) != GEARRT_OK)
		return die(om);
	size_t nin = gearrt_input_count(m), nout = gearrt_output_count(m);
	gearrt_tensor in[8], out[8];
	void *bufs[16];
	int nb = 0;
	if (nin > 8 || nout > 8)
		return fprintf(stderr, "bench_overhead: too many I/O\n"), 1;
	for (size_t i = 0; i < nin; i++) {
		gearrt_input_info(m, i, &in[i]);
		size_t n = 1;
		for (int d = 0; d < in[i].rank; d++) {
			if (in[i].dims[d] < 0)
				in[i].dims[d] = 1;
			n *= (size_t)in[i].dims[d];
		}
		float *x = aligned_alloc(64, (n * 4 + 63) / 64 * 64);
		for (size_t k = 0; k < n; k++)
			x[k] = (float)((k * 7919) % 200) / 100.0f - 1.0f;
		in[i].data = bufs[nb++] = x;
		in[i].size = n * 4;
		in[i].name = NULL;
	}
	for (int prof = 0; prof < passes; prof++) {
		gearrt_options o = { .threads = threads,
				     .profile = prof ? GEARRT_PROFILE_OPS
						     : GEARRT_PROFILE_OFF };
		gearrt_session *s;
		if (gearrt_session_create(m, &o, &s) != GEARRT_OK)
			return die("session");
		memset(out, 0, sizeof(out));
		if (gearrt_run(s, in, nin, out, nout) != GEARRT_OK)
			return die("first run");
		for (size_t i = 0; i < nout; i++) { /* the caller's buffers */
			void *y = aligned_alloc(64, (out[i].size + 63) / 64 * 64 + 64);
			out[i].data = bufs[nb++] = y;
		}
		long r = runs;
		double t0 = now_ns();
		gearrt_run(s, in, nin, out, nout);
		if (now_ns() - t0 > 10000)
			r = runs / 10;
		double ns = time_runs(s, in, nin, out, nout, r);
		if (!prof) {
			printf("%-16s %8.0f ns a run%s", strrchr(om, '/') ?
			       strrchr(om, '/') + 1 : om, ns,
			       passes == 1 ? "\n" : "");
		} else {
			Sum sum = { 0, 0 };
			gearrt_session_profile(s, add_node, &sum);
			double kns = sum.ms * 1e6;
			printf("  %d nodes, %6.1f ns a node; profiled: %8.0f ns"
			       " a run, kernels %8.0f, the rest %6.0f ns\n",
			       sum.nodes, ns / sum.nodes, ns, kns, ns - kns);
		}
		gearrt_session_destroy(s);
		fflush(stdout);
	}
	for (int i = 0; i < nb; i++)
		free(bufs[i]);
	gearrt_model_close(m);
	return 0;
}

int main(int argc, char **argv)
{
	long runs = 50000;
	int threads = 1, passes = 2, c;
	while ((c = getopt(argc, argv, "n:t:P")) != -1) {
		if (c == 'P')
			passes = 1;
		else if (c == 'n')
			runs = atol(optarg);
		else if (c == 't')
			threads = atoi(optarg);
		else
			return fprintf(stderr, "usage: bench_overhead [-n RUNS]"
				       " [-t THREADS] [-P] OM...\n"), 2;
	}
	for (int i = optind; i < argc; i++)
		if (bench(argv[i], runs, threads, passes))
			return 1;
	return 0;
}
