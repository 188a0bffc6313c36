/*
 * cli/run.c - `gearc run`: runs a .om on the CPU through libgearrt.
 *
 *   gearc run FILE.om --input NAME=PATH ... [--output-dir DIR]
 *             [--random-inputs] [--gear=K] [--bench=N] [--threads=N]
 *             [--no-gears] [--dump-tensors=DIR]
 *
 * Inputs are .npy files or ONNX TensorProto files (.pb, as in ONNX's
 * backend test data).  Prints the gear chosen and each output's name,
 * dtype and shape; --output-dir writes DIR/NAME.npy per output (NAME with
 * every byte other than a letter, digit, '.', '_' or '-' as %xx; DIR made
 * if missing, one level).  --gear=K runs at gear K's shapes: random inputs
 * take them, given ones must have them.  --dump-tensors writes every
 * tensor of the first run (cli/tensordump.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "compiler/cpu.h"
#include "compiler/onnx.h"
#include "compiler/ops/opimpl.h"
#include "npy.h"
#include "runstats.h"
#include "runtime/gearrt.h"
#include "tensors.h"

enum { MAX_GIVEN = 256 };

typedef struct RunArgs {
	const char *file, *output_dir, *bench, *threads, *gear, *random;
	const char *no_gears, *quiet, *dump_tensors, *pad_batch, *max_isa;
	const char *warmup, *duration, *json, *print, *save_inputs;
	const char *given[MAX_GIVEN]; /* NAME=PATH */
	int ngiven;
	const gearrt_tensor *in; /* the inputs, once gathered */
} RunArgs;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Takes every --input out of argv (it may repeat); the rest is parsed by
 * args_parse. */
static int take_inputs(int *argc, char **argv, RunArgs *ra)
{
	int kept = 0;
	for (int i = 0; i < *argc; i++) {
		const char *a = argv[i];
		const char *v = NULL;
		if (!strcmp(a, "--input") || !strcmp(a, "-i")) {
			if (i + 1 >= *argc)
				return error("run: --input needs NAME=PATH");
			v = argv[++i];
		} else if (!strncmp(a, "--input=", 8)) {
			v = a + 8;
		} else {
			argv[kept++] = argv[i];
			continue;
		}
		if (ra->ngiven == MAX_GIVEN)
			return error("run: more than %d --input flags", MAX_GIVEN);
		if (!strchr(v, '='))
			return error("run: --input '%s': expected NAME=PATH", v);
		ra->given[ra->ngiven++] = v;
	}
	*argc = kept;
	return 0;
}

static int parse_int(const char *flag, const char *s, int lo, int hi, int *v)
{
	char *end;
	errno = 0;
	long x = strtol(s, &end, 10);
	if (!*s || *end || errno || x < lo || x > hi)
		return error("run: --%s '%s': expected an integer %d..%d", flag,
			     s, lo, hi);
	*v = (int)x;
	return 0;
}

/* Reads an input file: .npy, else an ONNX TensorProto. */
static const Tensor *load_input(Model *scratch, const char *path)
{
	size_t n = strlen(path);
	if (n > 4 && !strcmp(path + n - 4, ".npy"))
		return npy_read(&scratch->arena, path);
	return onnx_load_tensor(scratch, path);
}

/* Whether --input value g gives input name. */
static bool gives(const char *g, const char *name)
{
	size_t n = strlen(name);
	return !strncmp(g, name, n) && g[n] == '=';
}

/* The value of input 'name' from --input, or NULL. */
static const char *given_path(const RunArgs *ra, const char *name)
{
	for (int i = 0; i < ra->ngiven; i++)
		if (gives(ra->given[i], name))
			return ra->given[i] + strlen(name) + 1;
	return NULL;
}

/* Every --input names an input of the model, and no input is given twice
 * (a usage error, as for any repeated flag).  An exit status. */
static int check_given(const RunArgs *ra, gearrt_model *m)
{
	for (size_t k = 0; k < gearrt_input_count(m); k++) {
		gearrt_tensor t;
		gearrt_input_info(m, k, &t);
		for (int i = 0, first = -1; i < ra->ngiven; i++) {
			if (!gives(ra->given[i], t.name))
				continue;
			if (first < 0) {
				first = i;
				continue;
			}
			error("run: --input '%s' and --input '%s' both give "
			      "input '%s' (one --input per input)",
			      ra->given[first], ra->given[i], t.name);
			return EXIT_USAGE;
		}
	}
	for (int i = 0; i < ra->ngiven; i++) {
		bool found = false;
		for (size_t k = 0; k < gearrt_input_count(m) && !found; k++) {
			gearrt_tensor t;
			gearrt_input_info(m, k, &t);
			found = gives(ra->given[i], t.name);
		}
		if (!found) {
			error("run: --input '%s': the model has no input of "
			      "that name", ra->given[i]);
			return EXIT_FAIL;
		}
	}
	return EXIT_OK;
}

/* 1 to 8 lowercase letters from the bits of x, in a. */
static Bytes random_word(Arena *a, uint64_t x)
{
	size_t n = 1 + (x & 7);
	uint8_t *w = arena_alloc(a, n + 1);
	for (size_t k = 0; k < n; k++)
		w[k] = (uint8_t)('a' + (x >> (3 + 5 * k)) % 26);
	return (Bytes){ n, w };
}

/* Fills t (dtype, dims set) with a fixed-seed pattern: floats uniform in
 * [-1, 1), integers 0..9, bools alternating, strings of 1 to 8
 * lowercase letters (in a). */
static void fill_random(Arena *a, Tensor *t)
{
	uint64_t x = 0x9E3779B97F4A7C15u;
	int64_t n = shape_numel(&t->shape);
	for (int64_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		double u = (double)(x >> 11) / 9007199254740992.0;
		if (DTS(t->dtype) & (DTS(DT_FLOAT) | DTS(DT_DOUBLE) |
				     DTS(DT_FLOAT16) | DTS(DT_BFLOAT16)))
			tensor_set_f64(t, i, 2 * u - 1);
		else if (t->dtype == DT_BOOL)
			tensor_set_i64(t, i, i & 1);
		else if (t->dtype == DT_STRING)
			((Bytes *)tensor_mut(t))[i] = random_word(a, x);
		else
			tensor_set_i64(t, i, (int64_t)(u * 10));
	}
}

/* The shape of input i at gear 'gear' (-1 dims from its dims). */
static int gear_shape(gearrt_model *m, size_t i, int gear, Shape *s)
{
	gearrt_tensor info;
	gearrt_input_info(m, i, &info);
	const int64_t *dims = NULL;
	size_t nd = 0, at = 0;
	if (gearrt_gear_count(m))
		gearrt_gear_dims(m, (size_t)gear, &dims, &nd);
	for (size_t k = 0; k < i; k++) {
		gearrt_tensor o;
		gearrt_input_info(m, k, &o);
		for (int32_t d = 0; d < o.rank; d++)
			at += o.dims[d] < 0;
	}
	s->rank = info.rank;
	for (int32_t d = 0; d < info.rank; d++) {
		s->dims[d] = info.dims[d];
		if (s->dims[d] < 0) {
			if (at >= nd)
				return error("run: input '%s' has a dim that "
					     "varies, but no gear gives it",
					     info.name);
			s->dims[d] = dims[at++];
		}
	}
	return 0;
}

/* t as gearrt_run takes it: strings as NUL-terminated char * (in a). */
static void api_tensor(Arena *a, const Tensor *t, const char *name,
		       gearrt_tensor *in)
{
	*in = (gearrt_tensor){ .name = name, .dtype = t->dtype,
			       .rank = t->shape.rank, .data = (void *)t->data,
			       .size = t->nbytes };
	memcpy(in->dims, t->shape.dims, (size_t)t->shape.rank * sizeof(int64_t));
	if (t->dtype != DT_STRING)
		return;
	size_t n = (size_t)shape_numel(&t->shape);
	const Bytes *b = t->data;
	char **str = arena_array(a, n + 1, sizeof(char *));
	for (size_t k = 0; k < n; k++)
		str[k] = arena_strndup(a, (const char *)b[k].data, b[k].len);
	in->data = str;
	in->size = n * sizeof(char *);
}

static int gather_inputs(const RunArgs *ra, gearrt_model *m, Model *scratch,
			 int gear, gearrt_tensor *in)
{
	for (size_t i = 0; i < gearrt_input_count(m); i++) {
		gearrt_tensor info;
		gearrt_input_info(m, i, &info);
		const char *path = given_path(ra, info.name);
		const Tensor *t = NULL;
		if (path && !(t = load_input(scratch, path)))
			return error_prefix("run: input '%s'", info.name);
		if (!t && !ra->random)
			return error("run: input '%s' is not given (--input "
				     "%s=FILE.npy, or --random-inputs)",
				     info.name, info.name);
		if (!t) {
			Shape s;
			if (gear_shape(m, i, gear, &s) < 0)
				return -1;
			int64_t bytes = shape_bytes(&s, info.dtype);
			uint64_t phys = phys_memory();
			if (bytes < 0 || (phys && (uint64_t)bytes > phys))
				return error("run: random input '%s' of shape "
					     "%s needs more than this machine's "
					     "memory (%llu bytes)", info.name,
					     shape_str(&s, (char[256]){ 0 }, 256),
					     (unsigned long long)phys);
			Tensor *r = tensor_new(&scratch->arena, NULL, info.dtype,
					       &s, NULL);
			if (!r)
				return -1;
			fill_random(&scratch->arena, r);
			t = r;
		}
		api_tensor(&scratch->arena, t, info.name, &in[i]);
	}
	return 0;
}

/* What the run took, into buf: "gear K (dims D)", "dynamic graph (dims
 * D, rebuilt|cached)" or "static graph". */
static void path_str(const RunArgs *ra, gearrt_model *m, gearrt_session *s,
		     char *buf, size_t n)
{
	int g = gearrt_last_gear(s);
	gearrt_stats st;
	size_t k = 0;
	gearrt_session_stats(s, &st);
	if (st.last_path == GEARRT_PATH_DYNAMIC) {
		k += (size_t)snprintf(buf, n, "dynamic graph (dims");
		for (size_t i = 0, at = 0; i < gearrt_input_count(m); i++)
			for (int32_t d = 0; d < ra->in[i].rank && k < n; d++, at++)
				k += (size_t)snprintf(buf + k, n - k, "%s%lld",
						      at ? "," : " ",
						      (long long)ra->in[i].dims[d]);
		if (k < n)
			snprintf(buf + k, n - k, ", %s)",
				 st.last_rebuilt ? "rebuilt" : "cached");
	} else if (g >= 0) {
		const int64_t *dims;
		size_t nd;
		gearrt_gear_dims(m, (size_t)g, &dims, &nd);
		k += (size_t)snprintf(buf, n, "gear %d (dims", g);
		for (size_t d = 0; d < nd && k < n; d++)
			k += (size_t)snprintf(buf + k, n - k, "%s%lld",
					      d ? "," : " ", (long long)dims[d]);
		/* a padded run: the inputs' batch is not the gear's */
		if (gearrt_find_gear(m, ra->in, gearrt_input_count(m)) != g &&
		    k < n)
			k += (size_t)snprintf(buf + k, n - k,
					      ", batch %lld padded",
					      (long long)ra->in[0].dims[0]);
		if (k < n)
			snprintf(buf + k, n - k, ")");
	} else {
		snprintf(buf, n, "static graph");
	}
}

/* Prints the path and the outputs (not with --quiet; --print's values
 * always) and writes them to --output-dir. */
static int report(const RunArgs *ra, gearrt_model *m, gearrt_session *s,
		  const gearrt_tensor *out, size_t nout)
{
	bool made = false;
	char path[1024];
	if (ra->output_dir &&
	    make_output_dir("--output-dir", ra->output_dir, &made) < 0)
		return -1;
	path_str(ra, m, s, path, sizeof(path));
	if (!ra->quiet)
		printf("%s\n", path);
	for (size_t i = 0; i < nout; i++) {
		Shape sh = { .rank = out[i].rank };
		char buf[160];
		memcpy(sh.dims, out[i].dims, (size_t)sh.rank * sizeof(int64_t));
		if (!ra->quiet || ra->print)
			printf("output '%s' %s %s\n", out[i].name,
			       gearrt_dtype_name(out[i].dtype),
			       shape_str(&sh, buf, sizeof(buf)));
		if (ra->print)
			print_values(&out[i]);
		if (!ra->output_dir)
			continue;
		char *file = npy_path(ra->output_dir, out[i].name);
		int rc = npy_write(file, out[i].dtype, &sh, out[i].data);
		free(file);
		if (rc < 0) {
			if (made)
				rmdir(ra->output_dir); /* if nothing is in it */
			return -1;
		}
	}
	return 0;
}

/* --save-inputs=DIR: every input of the run (made by --random-inputs
 * or given) as DIR/NAME.npy, so that --input NAME=DIR/NAME.npy runs
 * them again. */
static int save_inputs(const char *dir, const gearrt_tensor *in, size_t n)
{
	bool made;
	if (make_output_dir("--save-inputs", dir, &made) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		Shape sh = { .rank = in[i].rank };
		memcpy(sh.dims, in[i].dims, (size_t)sh.rank * sizeof(int64_t));
		char *file = npy_path(dir, in[i].name);
		int rc = npy_write_as("--save-inputs", file, in[i].dtype, &sh,
				      in[i].data);
		free(file);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int run_once(gearrt_session *s, const gearrt_tensor *in, size_t nin,
		    gearrt_tensor *out, size_t nout)
{
	for (size_t i = 0; i < nout; i++)
		out[i].data = NULL;
	/* the runtime's message is the error already (gearrt_last_error) */
	return gearrt_run(s, in, nin, out, nout) == GEARRT_OK ? 0 : -1;
}

/* --bench=N, --warmup=N, --duration=S: runs timed, at least; runs before
 * them, not timed; how long to keep timing runs after the N. */
typedef struct BenchArgs {
	int runs, warmup;
	double duration_ms;
} BenchArgs;

/* The most runs --duration times: their times take 8 bytes each. */
#define MAX_TIMED_RUNS 10000000

static int parse_duration(const char *s, double *ms)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !(v > 0) || v > 86400)
		return error("run: --duration '%s': expected seconds, a number "
			     "above 0 and at most 86400", s);
	*ms = v * 1e3;
	return 0;
}

static int parse_bench(const RunArgs *ra, BenchArgs *b)
{
	*b = (BenchArgs){ 0 };
	if ((ra->bench && parse_int("bench", ra->bench, 1, 1000000, &b->runs) < 0) ||
	    (ra->warmup && parse_int("warmup", ra->warmup, 0, 1000000,
				     &b->warmup) < 0) ||
	    (ra->duration && parse_duration(ra->duration, &b->duration_ms) < 0))
		return -1;
	if (ra->warmup && !ra->bench && !ra->duration)
		return error("run: --warmup=%s needs --bench=N or --duration=S "
			     "(the timed runs it comes before)", ra->warmup);
	if (ra->duration && !b->runs)
		b->runs = 1;
	return 0;
}

/* The warm-up runs, then the timed ones into t. */
static int bench(gearrt_session *s, const gearrt_tensor *in, size_t nin,
		 gearrt_tensor *out, size_t nout, const BenchArgs *b,
		 Timings *t)
{
	for (int i = 0; i < b->warmup; i++)
		if (run_once(s, in, nin, out, nout) < 0)
			return -1;
	t->warmup = b->warmup;
	double start = now_ms(), t0 = start;
	while ((t->n < (size_t)b->runs || t0 - start < b->duration_ms) &&
	       t->n < MAX_TIMED_RUNS) {
		if (run_once(s, in, nin, out, nout) < 0)
			return -1;
		double t1 = now_ms();
		timings_add(t, t1 - t0);
		t0 = t1;
	}
	t->wall_ms = t0 - start;
	return 0;
}

/* After the bench line: the shape cache, if the dynamic graph ran, the
 * CPU, and the session's threads (0 resolved) and how they wait. */
static void print_after_bench(gearrt_model *m, gearrt_session *s,
			      int threads)
{
	gearrt_stats st;
	gearrt_session_stats(s, &st);
	if (st.dynamic_runs)
		printf("shape cache: %llu rebuilds (last %.3f ms), %llu cache "
		       "hits over %llu runs\n",
		       (unsigned long long)st.rebuilds, st.last_rebuild_ms,
		       (unsigned long long)st.cache_hits,
		       (unsigned long long)st.runs);
	printf("cpu: %s\nthreads: %d; waiting, they %s\n",
	       gearrt_cpu_features(), threads, gearrt_wait_policy());
	const char *prec = gearrt_model_precision(m);
	if (strcmp(prec, "float32"))
		printf("precision: %s\n", prec);
}

/* --gear=K: K must be a gear of the file (a static file's one graph is
 * gear 0, as for export). */
static int check_gear(const RunArgs *ra, gearrt_model *m, int gear)
{
	size_t n = gearrt_gear_count(m) ? gearrt_gear_count(m) : 1;
	if ((size_t)gear >= n)
		return error("--gear=%s: %s has %zu gear%s (0..%zu)", ra->gear,
			     ra->file, n, n == 1 ? "" : "s", n - 1);
	return 0;
}

/* Inputs given with --gear=K must have gear K's shapes: --gear never
 * picks a gear the inputs do not select. */
static int check_gear_inputs(const RunArgs *ra, gearrt_model *m, int gear,
			     const gearrt_tensor *in)
{
	for (size_t i = 0; i < gearrt_input_count(m); i++) {
		Shape want, got = { .rank = in[i].rank };
		char a[128], b[128];
		memcpy(got.dims, in[i].dims, (size_t)got.rank * sizeof(int64_t));
		if (gear_shape(m, i, gear, &want) < 0)
			return -1;
		if (!shape_equal(&got, &want))
			return error("--gear=%s: input '%s' is %s, gear %d "
				     "takes %s",
				     ra->gear, in[i].name,
				     shape_str(&got, a, sizeof(a)), gear,
				     shape_str(&want, b, sizeof(b)));
	}
	return 0;
}

/* The first run, with --dump-tensors armed for it: 0, or -1 with the
 * run's error (the dump's index written either way; *said what it
 * wrote). */
static int first_run(gearrt_session *s, const gearrt_tensor *in, size_t nin,
		     gearrt_tensor *out, size_t nout, TensorDump **dump,
		     char *said, size_t n)
{
	if (!*dump)
		return run_once(s, in, nin, out, nout);
	tensor_dump_arm(*dump, true);
	int rc = run_once(s, in, nin, out, nout);
	tensor_dump_arm(*dump, false); /* the first run's tensors only */
	char *err = rc < 0 ? xstrdup(last_error()) : NULL;
	int drc = tensor_dump_close(*dump, err, said, n);
	*dump = NULL;
	if (err) /* the run's error, not the index's */
		error("%s", err);
	free(err);
	return rc < 0 ? rc : drc;
}

static int run_model(RunArgs *ra)
{
	int threads = 1, gear = 0, status = EXIT_FAIL;
	BenchArgs ba;
	if (parse_bench(ra, &ba) < 0 ||
	    (ra->threads && parse_int("threads", ra->threads, 0, GEARRT_THREADS_MAX,
					    &threads) < 0) ||
	    (ra->gear && parse_int("gear", ra->gear, 0, 1000000, &gear) < 0))
		return EXIT_USAGE;
	Load ld = { 0 };
	Timings tm = { 0 };
	double t0 = now_ms();
	gearrt_model *m = NULL;
	gearrt_session *s = NULL;
	Model *scratch = model_new();
	gearrt_tensor *in = NULL, *out = NULL;
	TensorDump *dump = NULL;
	char said[PATH_MAX + 200] = "";
	if (gearrt_model_open(ra->file, &m) != GEARRT_OK)
		goto done;
	ld.open = now_ms() - t0;
	if ((status = check_given(ra, m)) != EXIT_OK)
		goto done;
	status = EXIT_FAIL;
	if (ra->gear && check_gear(ra, m, gear) < 0)
		goto done;
	gearrt_options opt = { .threads = threads,
			       .no_gears = ra->no_gears != NULL,
			       .pad_batch = ra->pad_batch != NULL };
	gearrt_options_from_env(&opt);
	if (ra->max_isa) /* over GEARRT_MAX_ISA (checked by cmd_run) */
		opt.max_isa = GEARRT_ISA_BASELINE + cpu_level_parse(ra->max_isa);
	size_t nin = gearrt_input_count(m), nout = gearrt_output_count(m);
	in = xmalloc((nin + 1) * sizeof(*in));
	out = xmalloc((nout + 1) * sizeof(*out));
	memset(out, 0, (nout + 1) * sizeof(*out));
	for (size_t i = 0; i < nout; i++)
		gearrt_output_info(m, i, &out[i]);
	if (gather_inputs(ra, m, scratch, gear, in) < 0 ||
	    (ra->gear && check_gear_inputs(ra, m, gear, in) < 0) ||
	    (ra->save_inputs && save_inputs(ra->save_inputs, in, nin) < 0))
		goto done;
	if (ra->dump_tensors &&
	    (!(dump = tensor_dump_open(ra->dump_tensors, ra->file)) ||
	     tensor_dump_inputs(dump, in, nin) < 0))
		goto done;
	opt.on_node = dump ? tensor_dump_hook : NULL;
	opt.on_node_user = dump;
	t0 = now_ms();
	if (gearrt_session_create(m, &opt, &s) != GEARRT_OK)
		goto done;
	ld.session = now_ms() - t0;
	/* timing: the inputs' gear prepared ahead (none for the dynamic
	 * graph), as a server would; a lone run prepares it itself, and
	 * ahead it would run twice (prepare's run on zeros) */
	int g = ra->no_gears || !ba.runs ? -1 : gearrt_find_gear(m, in, nin);
	size_t gi = g < 0 ? 0 : (size_t)g;
	t0 = now_ms();
	if (g >= 0 && gearrt_session_prepare(s, &gi, 1) != GEARRT_OK)
		goto done;
	ld.prepare = now_ms() - t0;
	t0 = now_ms();
	int rc = first_run(s, in, nin, out, nout, &dump, said, sizeof(said));
	ld.first = now_ms() - t0;
	if (rc < 0)
		goto done;
	ra->in = in;
	if (report(ra, m, s, out, nout) < 0)
		goto done;
	if (*said && !ra->quiet)
		printf("%s\n", said);
	if (ba.runs) {
		if (bench(s, in, nin, out, nout, &ba, &tm) < 0)
			goto done;
		print_bench(&ld, &tm);
		print_after_bench(m, s, threads ? threads : cpu_usable_cores());
	}
	char path[1024];
	path_str(ra, m, s, path, sizeof(path));
	RunFacts facts = { .model = ra->file, .path = path,
			   .threads = threads ? threads : cpu_usable_cores(),
			   .load = &ld, .t = &tm,
			   .profiled = opt.profile ? s : NULL };
	if (ra->json && write_run_json(ra->json, &facts) < 0)
		goto done;
	status = EXIT_OK;
done:
	if (dump) { /* failed before the run: the index says so */
		char *err = xstrdup(last_error());
		tensor_dump_close(dump, err, NULL, 0);
		error("%s", err);
		free(err);
	}
	timings_free(&tm);
	free(in);
	free(out);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	model_free(scratch);
	return status;
}

/* A directory flag naming something else: a usage error. */
static bool not_a_dir(const char *flag, const char *dir)
{
	struct stat st;
	if (!dir || stat(dir, &st) < 0 || S_ISDIR(st.st_mode))
		return false;
	error("run: %s '%s' is not a directory", flag, dir);
	return true;
}

int cmd_run(int argc, char **argv)
{
	RunArgs ra = { 0 };
	const char *help = NULL, *pos[1];
	const ArgSpec spec[] = {
		{ "output_dir", 'o', true, &ra.output_dir },
		{ "bench", 0, true, &ra.bench },
		{ "threads", 't', true, &ra.threads },
		{ "gear", 0, true, &ra.gear },
		{ "random_inputs", 0, false, &ra.random },
		{ "no_gears", 0, false, &ra.no_gears },
		{ "pad_batch", 0, false, &ra.pad_batch },
		{ "dump_tensors", 0, true, &ra.dump_tensors },
		{ "warmup", 0, true, &ra.warmup },
		{ "duration", 0, true, &ra.duration },
		{ "json", 0, true, &ra.json },
		{ "print", 0, false, &ra.print },
		{ "save_inputs", 0, true, &ra.save_inputs },
		{ "max_isa", 0, true, &ra.max_isa },
		{ "quiet", 'q', false, &ra.quiet },
		{ "help", 'h', false, &help },
		{ 0 },
	};
	int npos;
	if (take_inputs(&argc, argv, &ra) < 0)
		return fail(EXIT_USAGE);
	int done = cmd_args(argc, argv, spec, "run", pos, 1, &npos, &help);
	if (done >= 0)
		return done;
	if (npos != 1) {
		error("run needs the .om file to run (gearc run FILE.om --input "
		      "NAME=FILE.npy ...)");
		return fail(EXIT_USAGE);
	}
	ra.file = pos[0];
	if (not_a_dir("--output-dir", ra.output_dir) ||
	    not_a_dir("--dump-tensors", ra.dump_tensors) ||
	    not_a_dir("--save-inputs", ra.save_inputs))
		return fail(EXIT_USAGE);
	int level = ra.max_isa ? cpu_level_parse(ra.max_isa) : 0;
	if (level < 0 || level == CPU_LEVEL_NATIVE) {
		error("run: --max-isa=%s is not a level: avx512, avx2, avx, "
		      "sse41 or baseline", ra.max_isa);
		return fail(EXIT_USAGE);
	}
	int rc = run_model(&ra);
	return rc == EXIT_OK ? EXIT_OK : fail(rc);
}
