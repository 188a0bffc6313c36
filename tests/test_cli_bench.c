/*
 * tests/test_cli_bench.c - `gearc run`'s benchmark statistics (as
 * trtexec and benchmark_app give them), --json, --print and
 * --save-inputs, and the errors of their flags.
 */
#include <json-c/json.h>
#include <math.h>
#include <string.h>

#include "cli/npy.h"
#include "testrun.h"

static char *demo(const char *dir)
{
	return compile_fixture(dir, "demo", "demo_cnn",
			       (const char *[]){ "--input_shape=x:-1,3,32,32",
						 "--dynamic_batch_size=1,4",
						 NULL });
}

static char *cat(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 1;
	char *s = malloc(n);
	snprintf(s, n, "%s%s", a, b);
	return s;
}

Test(cli_bench, statistics_after_the_unchanged_bench_line)
{
	char *dir = temp_dir(), *om = demo(dir);
	Run r = run_gearc("run", om, "--random-inputs", "--gear=1",
			  "--bench=30", "--warmup=4", "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	double ld, op, pr, fr, med, mn;
	int n;
	cr_assert_eq(sscanf(r.out, "bench: load %lf ms (open %lf, prepare %lf, "
			    "first run %lf), run median %lf ms, min %lf ms "
			    "over %d runs\n", &ld, &op, &pr, &fr, &med, &mn,
			    &n), 7, "%s", r.out);
	cr_expect_eq(n, 30);
	const char *l = strstr(r.out, "\nlatency: ");
	double mean, sd, lo, p50, p90, p99, hi;
	cr_assert(l && sscanf(l, "\nlatency: mean %lf ms, stddev %lf, min %lf, "
				 "p50 %lf, p90 %lf, p99 %lf, max %lf\n", &mean,
			      &sd, &lo, &p50, &p90, &p99, &hi) == 7, "%s", r.out);
	cr_expect(lo <= p50 && p50 <= p90 && p90 <= p99 && p99 <= hi, "%s",
		  l);
	cr_expect(lo <= mean && mean <= hi && sd >= 0, "%s", l);
	cr_expect_eq(p50, med, "p50 %g is not the bench line's median %g", p50,
		     med);
	cr_expect_eq(lo, mn);
	const char *t = strstr(r.out, "\nthroughput: ");
	double ips, secs;
	int runs, warm;
	cr_assert(t && sscanf(t, "\nthroughput: %lf inferences/s (%d runs in "
				 "%lf s, after %d warm-up runs)\n", &ips, &runs,
			      &secs, &warm) == 4, "%s", r.out);
	cr_expect(runs == 30 && warm == 4 && ips > 0, "%s", t);
	cr_expect(strstr(r.out, "\ncpu: "), "%s", r.out);
	run_free(&r);
	remove_tree(dir);
	free(dir), free(om);
}

/* --duration keeps timing runs until that long, and at least --bench's
 * count of them; alone, it benchmarks. */
Test(cli_bench, duration_runs_at_least_that_long)
{
	char *dir = temp_dir(), *om = demo(dir);
	Run r = run_gearc("run", om, "--random-inputs", "--duration=0.3", "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	const char *t = strstr(r.out, "\nthroughput: ");
	double ips, secs;
	int runs, warm;
	cr_assert(t && sscanf(t, "\nthroughput: %lf inferences/s (%d runs in "
				 "%lf s, after %d warm-up runs)\n", &ips, &runs,
			      &secs, &warm) == 4, "%s", r.out);
	cr_expect(secs >= 0.3 && runs > 1, "%s", t);
	run_free(&r);
	r = run_gearc("run", om, "--random-inputs", "--duration=0.001",
		      "--bench=50", "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, " over 50 runs\n") || strstr(r.out, " runs\n"),
		  "%s", r.out);
	int over = 0;
	const char *b = strstr(r.out, " over ");
	cr_assert(b && sscanf(b, " over %d runs", &over) == 1);
	cr_expect_geq(over, 50);
	run_free(&r);
	remove_tree(dir);
	free(dir), free(om);
}

static json_object *load_json(const char *path)
{
	json_object *o = json_object_from_file(path);
	cr_assert(o, "%s is not JSON", path);
	return o;
}

static json_object *key(json_object *o, const char *k)
{
	json_object *v = NULL;
	cr_assert(json_object_object_get_ex(o, k, &v), "no key '%s'", k);
	return v;
}

Test(cli_bench, json_has_every_run_the_load_and_the_profile)
{
	char *dir = temp_dir(), *om = demo(dir);
	char *jf = path_in(dir, "run.json"), *fj = cat("--json=", jf);
	Run r = run_gearc("run", om, "--random-inputs", "--gear=1",
			  "--bench=12", "--warmup=2", fj, "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	json_object *o = load_json(jf);
	cr_expect_str_eq(json_object_get_string(key(o, "format")), "gearc-run");
	cr_expect_str_eq(json_object_get_string(key(o, "ran")),
			 "gear 1 (dims 4)");
	cr_expect_eq(json_object_get_int(key(o, "threads")), 1);
	cr_expect(strlen(json_object_get_string(key(o, "cpu"))) > 0);
	json_object *ld = key(o, "load");
	double total = json_object_get_double(key(ld, "total_ms"));
	double sum = json_object_get_double(key(ld, "open_ms")) +
		     json_object_get_double(key(ld, "prepare_ms")) +
		     json_object_get_double(key(ld, "first_run_ms"));
	cr_expect(fabs(total - sum) < 0.01, "%g vs %g", total, sum);
	cr_expect_eq(json_object_get_int(key(o, "warmup_runs")), 2);
	cr_expect_eq(json_object_array_length(key(o, "runs_ms")), 12);
	cr_expect(json_object_get_double(key(key(o, "latency_ms"), "p99")) > 0);
	cr_expect(json_object_get_double(key(o, "throughput")) > 0);
	cr_expect(json_object_is_type(key(o, "profile"), json_type_null));
	json_object_put(o);
	/* with GEARRT_PROFILE: a row per node, each of the 13 runs timed */
	setenv("GEARRT_PROFILE", "1", 1);
	r = run_gearc("run", om, "--random-inputs", "--gear=1", "--bench=12",
		      fj, "-q");
	unsetenv("GEARRT_PROFILE");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	o = load_json(jf);
	json_object *p = key(o, "profile");
	cr_assert_eq(json_object_array_length(p), 7);
	json_object *row = json_object_array_get_idx(p, 0);
	cr_expect_str_eq(json_object_get_string(key(row, "node")),
			 "conv1_batch_1");
	/* dnnl.conv, then oneDNN's implementation: dnnl.conv.jit:avx2 */
	cr_expect(!strncmp(json_object_get_string(key(row, "kernel")),
			   "dnnl.conv", 9));
	cr_expect_eq(json_object_get_int(key(row, "runs")), 13);
	cr_expect(json_object_get_double(key(row, "ms")) > 0);
	json_object_put(o);
	/* without --bench: the load and no runs */
	r = run_gearc("run", om, "--random-inputs", fj, "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_str_empty(r.out);
	run_free(&r);
	o = load_json(jf);
	cr_expect_eq(json_object_array_length(key(o, "runs_ms")), 0);
	cr_expect(json_object_is_type(key(o, "latency_ms"), json_type_null));
	json_object_put(o);
	remove_tree(dir);
	free(dir), free(om), free(jf), free(fj);
}

Test(cli_bench, print_and_save_inputs)
{
	char *dir = temp_dir(), *om = demo(dir);
	char *si = path_in(dir, "in"), *fs = cat("--save-inputs=", si);
	char *o1 = path_in(dir, "o1"), *o2 = path_in(dir, "o2");
	char *fo1 = cat("--output-dir=", o1), *fo2 = cat("--output-dir=", o2);
	Run r = run_gearc("run", om, "--random-inputs", "--gear=1", "--print",
			  fs, fo1);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "output 'probs' float32 [4,10]\n  values: "),
		  "%s", r.out);
	cr_expect(strstr(r.out, " ...\n  min ") &&
		  strstr(r.out, ", mean 0.1 (40 elements)\n"), "%s", r.out);
	run_free(&r);
	/* -q keeps --print's lines */
	r = run_gearc("run", om, "--random-inputs", "--print", "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(!strncmp(r.out, "output 'probs' float32 [1,10]\n  values: ",
			   40), "%s", r.out);
	run_free(&r);
	/* the saved inputs run again give the same outputs */
	char *x = npy_path(si, "x"), *fx = cat("x=", x);
	r = run_gearc("run", om, "--input", fx, fo2, "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	char *p1 = npy_path(o1, "probs"), *p2 = npy_path(o2, "probs");
	size_t n1 = 0, n2 = 0;
	char *a = read_file(p1, &n1), *b = read_file(p2, &n2);
	cr_assert(a && b);
	cr_expect(n1 == n2 && !memcmp(a, b, n1));
	free(a), free(b);
	remove_tree(dir);
	free(dir), free(om), free(si), free(fs), free(o1), free(o2);
	free(fo1), free(fo2), free(x), free(fx), free(p1), free(p2);
}

Test(cli_bench, errors_name_the_flag)
{
	char *dir = temp_dir(), *om = demo(dir);
	Run r = run_gearc("run", om, "--random-inputs", "--bench=3",
			  "--warmup=-1");
	expect_error(&r, 2, "--warmup '-1': expected an integer 0..1000000");
	run_free(&r);
	r = run_gearc("run", om, "--random-inputs", "--warmup=3");
	expect_error(&r, 2, "--warmup=3 needs --bench=N or --duration=S");
	run_free(&r);
	r = run_gearc("run", om, "--random-inputs", "--duration=0");
	expect_error(&r, 2, "--duration '0': expected seconds");
	run_free(&r);
	r = run_gearc("run", om, "--random-inputs", "--duration=1s");
	expect_error(&r, 2, "--duration '1s': expected seconds");
	run_free(&r);
	r = run_gearc("run", om, "--random-inputs", "--print=1");
	expect_error(&r, 2, "--print takes no value");
	run_free(&r);
	char *fj = cat("--json=", dir);
	r = run_gearc("run", om, "--random-inputs", fj);
	expect_error(&r, 1, "--json '");
	run_free(&r);
	r = run_gearc("run", om, "--random-inputs", "--json=/nonexistent/r.json");
	expect_error(&r, 1, "--json '/nonexistent/r.json'");
	run_free(&r);
	char *file = path_in(dir, "f"), *fs = cat("--save-inputs=", file);
	write_file(file, "x", 1);
	r = run_gearc("run", om, "--random-inputs", fs);
	expect_error(&r, 2, "run: --save-inputs '");
	cr_expect(strstr(r.err, "' is not a directory"), "%s", r.err);
	run_free(&r);
	remove_tree(dir);
	free(dir), free(om), free(fj), free(file), free(fs);
}
