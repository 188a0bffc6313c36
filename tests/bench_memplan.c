/*
 * tests/bench_memplan.c - `make bench`, second part: the memory
 * planner's figures.
 *
 * usage: bench_memplan [TESTDATA_DIR]
 *
 * Compiles the project's fixtures, the synthetic models of tests/synth.h
 * (ResNet-style with 100 batch gears of a ~750-node graph, detector,
 * recognizer, VAD, DenseNet, transformer) and every pytorch-converted
 * backend test that gearc compiles, and prints per model: the static
 * graphs planned, arena / lower bound on average and in the worst graph,
 * naive / arena, and the time planning took against the rest of the
 * compile, writing the .om included (one thread, its CPU time, the median
 * of 3 runs for the timed model).  The last lines sum it up over every
 * graph and check the targets: arena / lower bound <= 1.01 on average
 * and <= 1.05 in the worst graph; planning adds < 20% to the compile of
 * 100 gears of the 750-node model.  Exit status 1 if a target is missed.
 *
 * To add a model: one line in the models[] table below.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "compiler/onnx.h"
#include "serializer/om.h"
#include "synth.h"

typedef struct Entry {
	const char *name;
	const char *path;	    /* an ONNX file, or NULL: synthetic */
	Model *(*build)(void);	    /* the synthetic model */
	const char *input_shape;    /* NULL: as the model says */
	const char *batch, *image, *dims;
	bool timed;		    /* check the 20% compile-time target */
} Entry;

static Model *resnet750(void) { return synth_resnet(106); }

/* "@100" in a gear option: 100 gears, as make bench's first part makes
 * them (batch 1..100; dims 16, 32, ... 1600). */
#define GEARS_100 "@100"

static const char *gears_100(bool batch)
{
	static char buf[2][800];
	char *b = buf[batch];
	size_t k = 0;
	for (int i = 1; i <= 100; i++)
		k += (size_t)snprintf(b + k, sizeof(buf[0]) - k, "%s%d",
				      i > 1 ? (batch ? "," : ";") : "",
				      batch ? i : 16 * i);
	return b;
}

#define FX "tests/fixtures/"

static Entry models[] = {
	{ "demo_cnn static", FX "demo_cnn.onnx", 0, "x:1,3,32,32", 0, 0, 0,
	  false },
	{ "demo_cnn batch", FX "demo_cnn.onnx", 0, "x:-1,3,32,32",
	  "1,2,4,8,16,32", 0, 0, false },
	{ "mlp batch", FX "mlp.onnx", 0, "x:-1,64", "1,8,64", 0, 0, false },
	{ "two_inputs image", FX "two_inputs.onnx", 0, "a:1,3,-1,-1;b:1,3,-1,-1",
	  0, "224,224;320,320;640,480", 0, false },
	/* the real-export fixtures, with expected.json's gears */
	{ "det (DBNet) image", FX "det.onnx", 0, "x:1,3,-1,-1", 0,
	  "640,640;960,960;1280,736", 0, false },
	{ "rec (SVTR) width", FX "rec.onnx", 0, "x:1,3,48,-1", 0, 0,
	  "320;640;1280", false },
	{ "vad (LSTM) time", FX "vad.onnx", 0, "input:1,-1;h:2,1,64;c:2,1,64",
	  0, 0, "512;1024;1536", false },
	{ "vad (LSTM) batch", FX "vad.onnx", 0,
	  "input:-1,512;h:2,-1,64;c:2,-1,64", 0, 0, "1,1,1;4,4,4;8,8,8", false },
	{ "bench_rec-764 x100 width", FX "bench_rec.onnx", 0, "x:1,3,48,-1", 0,
	  0, GEARS_100, true },
	/* synthetic (tests/synth.h) */
	{ "resnet-750 x100 batch", 0, resnet750, SYNTH_RESNET_SHAPE, GEARS_100,
	  0, 0, true },
	{ "detector image", 0, synth_detector, SYNTH_DETECTOR_SHAPE, 0,
	  "320,320;480,480;640,640;960,960;1280,736", 0, false },
	{ "recognizer width", 0, synth_recognizer, SYNTH_RECOGNIZER_SHAPE, 0, 0,
	  "64;128;256;320;640;1280", false },
	{ "vad time", 0, synth_vad, SYNTH_VAD_SHAPE, 0, 0,
	  "100;250;500;1000;3000", false },
	{ "densenet batch", 0, synth_densenet, SYNTH_DENSENET_SHAPE,
	  "1,2,4,8,16,32", 0, 0, false },
	{ "transformer length", 0, synth_transformer, SYNTH_TRANSFORMER_SHAPE, 0,
	  0, "16;32;64;128;256;512", false },
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* one thread: CPU time */
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct Figures {
	int graphs;
	double sum_ratio, worst, sum_naive;
	char worst_at[200];
} Figures;

static void add_plan(Figures *f, const char *model, const Graph *g)
{
	const MemPlan *p = g->plan;
	if (!p)
		return;
	double r = p->lower_bound_bytes
			   ? (double)p->arena_bytes / (double)p->lower_bound_bytes
			   : 1.0;
	double nv = p->arena_bytes ? (double)p->naive_bytes / (double)p->arena_bytes
				   : 1.0;
	f->graphs++;
	f->sum_ratio += r;
	f->sum_naive += nv;
	if (r > f->worst || f->graphs == 1) {
		f->worst = r;
		snprintf(f->worst_at, sizeof(f->worst_at), "%s: %s", model,
			 g->name);
	}
}

static int add_subplans(Graph *g, void *ctx);

typedef struct Walk {
	Figures *f;
	const char *model;
} Walk;

static int add_subplans(Graph *g, void *ctx)
{
	Walk *w = ctx;
	add_plan(w->f, w->model, g);
	return 0;
}

/* Every graph with a plan: the static graphs and their subgraphs, but
 * not the root of a gear compile (its one tensor says nothing). */
static void collect(Figures *f, const char *model, Model *m)
{
	Walk w = { f, model };
	if (!m->gears) {
		graph_walk(m->graph, add_subplans, &w);
		return;
	}
	for (int32_t i = 0; i < m->gears->ngears; i++)
		graph_walk(m->branches[i], add_subplans, &w);
}

/* Runs the passes one by one (one thread): the planner's time and the
 * rest's, including loading and writing the .om. */
static int compile_timed(const Entry *e, Model **out, double *t_plan,
			 double *t_rest)
{
	double t0 = now();
	Model *m = e->path ? onnx_load(e->path) : e->build();
	if (!m)
		return -1;
	GearOptions go = { .input_shape = e->input_shape,
			   .dynamic_batch_size = e->batch,
			   .dynamic_image_size = e->image,
			   .dynamic_dims = e->dims };
	if (go.dynamic_batch_size && !strcmp(go.dynamic_batch_size, GEARS_100))
		go.dynamic_batch_size = gears_100(true);
	if (go.dynamic_dims && !strcmp(go.dynamic_dims, GEARS_100))
		go.dynamic_dims = gears_100(false);
	PassOptions o = { .jobs = 1,
			  .fold_limit = 64 * 1024 };
	ParsedGears pg;
	int rc = gear_parse(&pg, &go);
	if (!rc)
		rc = gear_apply(m, &pg);
	gear_parsed_release(&pg);
	*t_plan = 0;
	char names[256];
	snprintf(names, sizeof(names), "%s", pass_names());
	for (char *save = NULL, *p = strtok_r(names, ", ", &save); p && !rc;
	     p = strtok_r(NULL, ", ", &save)) {
		const Pass *ps = pass_find(p);
		double t = now();
		rc = ps->run ? ps->run(m, &o)
			     : for_each_gear_graph(m, ps->run_graph, &o);
		if (!strcmp(p, "memplan"))
			*t_plan += now() - t;
	}
	uint8_t *bytes = NULL;
	size_t len;
	if (!rc)
		rc = om_encode(m, &bytes, &len);
	free(bytes);
	*t_rest = now() - t0 - *t_plan;
	if (rc < 0) {
		model_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static bool run_entry(const Entry *e, Figures *all, bool *time_ok)
{
	Figures f = { 0 };
	double plan[3], rest[3];
	Model *m = NULL;
	int runs = e->timed ? 3 : 1;
	for (int r = 0; r < runs; r++) {
		if (m)
			model_free(m);
		m = NULL;
		if (compile_timed(e, &m, &plan[r], &rest[r]) < 0) {
			printf("%-26s skipped: %s\n", e->name, last_error());
			return false;
		}
	}
	qsort(plan, (size_t)runs, sizeof(double), cmp_double);
	qsort(rest, (size_t)runs, sizeof(double), cmp_double);
	double tp = plan[runs / 2], tr = rest[runs / 2];
	collect(&f, e->name, m);
	collect(all, e->name, m);
	printf("%-26s %4d  %8.4f  %8.4f  %7.2f  %8.1f  %9.1f  %5.1f%%\n",
	       e->name, f.graphs, f.graphs ? f.sum_ratio / f.graphs : 0,
	       f.worst, f.graphs ? f.sum_naive / f.graphs : 0, tp * 1e3,
	       tr * 1e3, tr > 0 ? 100 * tp / tr : 0);
	if (e->timed)
		*time_ok &= tr > 0 && tp / tr < 0.20;
	model_free(m);
	return true;
}

/* ---- the pytorch-converted backend tests, static ------------------------- */

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_backend(const char *testdata, Figures *all)
{
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/pytorch-converted", testdata);
	DIR *d = opendir(dir);
	char *names[512];
	size_t n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)) && n < 512)
		if (e->d_name[0] != '.')
			names[n++] = xstrdup(e->d_name);
	if (d)
		closedir(d);
	qsort(names, n, sizeof(char *), by_name);
	Figures f = { 0 };
	int ok = 0;
	for (size_t i = 0; i < n; i++) {
		char test[1400];
		snprintf(test, sizeof(test), "%s/%s", dir, names[i]);
		Model *m = backend_compile(test);
		if (m) {
			collect(&f, names[i], m);
			collect(all, names[i], m);
			ok++;
		}
		model_free(m);
		free(names[i]);
	}
	printf("%-26s %4d  %8.4f  %8.4f  %7.2f  (%d of %zu tests compile)\n",
	       "pytorch-converted static", f.graphs,
	       f.graphs ? f.sum_ratio / f.graphs : 0, f.worst,
	       f.graphs ? f.sum_naive / f.graphs : 0, ok, n);
	if (f.graphs && f.worst > 1.0)
		printf("%-26s worst: %s\n", "", f.worst_at);
}

int main(int argc, char **argv)
{
	const char *testdata = argc > 1 ? argv[argc - 1]
					: "/usr/share/libonnx-testdata/data";
	Figures all = { 0 };
	bool time_ok = true;
	printf("%-26s %4s  %8s  %8s  %7s  %8s  %9s  %6s\n", "model", "gphs",
	       "avg a/lb", "worst", "naive/a", "plan ms", "other ms", "plan");
	for (size_t i = 0; i < ARRAY_SIZE(models); i++)
		run_entry(&models[i], &all, &time_ok);
	run_backend(testdata, &all);
	double avg = all.graphs ? all.sum_ratio / all.graphs : 0;
	printf("\nmemplan: %d graphs: arena/lower bound %.4f on average, "
	       "%.4f worst (%s); naive/arena %.2f on average\n",
	       all.graphs, avg, all.worst, all.worst_at,
	       all.graphs ? all.sum_naive / all.graphs : 0);
	bool ok = avg <= 1.01 && all.worst <= 1.05;
	printf("memplan: targets: average <= 1.01 %s, worst <= 1.05 %s, "
	       "planning 100 gears of 750 nodes < 20%% of the compile %s\n",
	       avg <= 1.01 ? "ok" : "MISSED", all.worst <= 1.05 ? "ok" : "MISSED",
	       time_ok ? "ok" : "MISSED");
	return ok && time_ok ? 0 : 1;
}
