/* cli/compile.c - 'gearc compile': flags -> gear spec -> passes -> .om. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "compiler/onnx.h"
#include "compiler/pin.h"
#include "passes/partition.h"
#include "passes/scope.h"
#include "serializer/om.h"

char *om_output_path(const char *output)
{
	size_t n = strlen(output);
	if (n >= 3 && !strcmp(output + n - 3, ".om"))
		return xstrdup(output);
	char *p = xmalloc(n + 4);
	memcpy(p, output, n);
	memcpy(p + n, ".om", 4);
	return p;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* The hybrid, partition and pass options used, after the gear options, in the
 * spelling GE's options have. */
static void record_pass_options(Model *m, const CompileOptions *o)
{
	if (o->pass.hybrid)
		model_add_option(m, "compile_hybrid_mode", "1");
	if (o->pass.static_limit_given) {
		char buf[32];
		snprintf(buf, sizeof(buf), "%d", o->pass.static_limit);
		model_add_option(m, "static_model_ops_lower_limit", buf);
	}
	if (o->pass.no_fuse)
		model_add_option(m, "no_fuse", "1");
	if (o->pass.keep_fp16)
		model_add_option(m, "keep_fp16", "1");
}

static int arena_max(Graph *g, void *ctx)
{
	uint64_t *max = ctx;
	if (g->plan && g->plan->arena_bytes > *max)
		*max = g->plan->arena_bytes;
	return 0;
}

/* The largest feature-map arena of any graph in m: what one run of the
 * largest gear needs besides its inputs, outputs and weights. */
static uint64_t largest_arena(Model *m)
{
	uint64_t max = 0;
	graph_walk(m->graph, arena_max, &max);
	if (m->dynamic)
		graph_walk(m->dynamic, arena_max, &max);
	return max;
}

static int plan_too_big(Graph *g, void *ctx)
{
	Model *m = ctx;
	uint64_t phys = phys_memory();
	if (phys && g->plan && g->plan->arena_bytes > phys)
		model_warn(m, INT64_MAX, "graph '%s' needs a %llu-byte arena, "
			   "more than this machine's physical memory (%llu "
			   "bytes): it cannot run here", g->name,
			   (unsigned long long)g->plan->arena_bytes,
			   (unsigned long long)phys);
	return 0;
}

/* Warnings the compiled model as a whole calls for. */
static void warn_model(Model *m)
{
	graph_walk(m->graph, plan_too_big, m);
	if (m->dynamic)
		graph_walk(m->dynamic, plan_too_big, m);
}

/* The model imports no default-domain opset: ONNX requires one, and the
 * op semantics gearc applies (the newest) may not be the exporter's. */
static void warn_opset(Model *m)
{
	if (model_opset(m) <= 0)
		model_warn(m, -2, "model '%s' imports no ai.onnx opset; its "
			   "ops are read with the newest opset's rules",
			   m->path);
}

/* "gearc: warning: ..." lines, after the progress line is cleared (the
 * summary or the error comes after them, so the terminal ends clean). */
static void print_warnings(const Model *m, const CompileOptions *o)
{
	if (o->quiet)
		return;
	if (o->pass.progress)
		fputs("\r\033[K", stderr);
	for (int32_t i = 0; i < model_warning_count(m); i++)
		fprintf(stderr, "gearc: warning: %s\n", model_warning(m, i));
}

/* atc's "ATC run success", with what a build log wants to know: what
 * was written (path, size bytes), or that nothing was (path NULL). */
static void print_summary(Model *m, const CompileOptions *o,
			  const char *path, long long size)
{
	if (o->quiet)
		return;
	if (path)
		fprintf(stderr, "gearc: wrote %s: ", path);
	else
		fprintf(stderr, "gearc: compiled %s, nothing written (%s%s): ",
			o->model, o->output ? "--output=" : "--check",
			o->output ? o->output : "");
	fprintf(stderr, "%s mode, %d gear%s, %lld bytes, largest arena %llu "
		"bytes\n", gear_mode_name(m->mode),
		m->gears ? m->gears->ngears : 0,
		m->gears && m->gears->ngears == 1 ? "" : "s", size,
		(unsigned long long)largest_arena(m));
}

/* The .om's bytes for --check: made and dropped, their count in *size. */
static int encode_only(const Model *m, long long *size)
{
	uint8_t *bytes;
	size_t n;
	if (om_encode(m, &bytes, &n) < 0)
		return -1;
	free(bytes);
	*size = (long long)n;
	return 0;
}

/* SIGTERM, SIGINT or SIGHUP while the .om is written: remove the
 * temporary file, then die of the signal as if not caught. */
static void on_fatal_signal(int sig)
{
	om_remove_temp();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void catch_fatal_signals(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++) {
		struct sigaction sa, old;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_fatal_signal;
		sigemptyset(&sa.sa_mask);
		/* a signal ignored (nohup) stays ignored */
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

int compile_model(const CompileOptions *o, const ParsedGears *pg)
{
	ParsedPins none = { 0 };
	return compile_pinned(o, pg, &none);
}

int compile_pinned(const CompileOptions *o, const ParsedGears *pg,
		   const ParsedPins *pins)
{
	if (!o->no_write) {
		char *out = om_output_path(o->output);
		om_remove_stale_temps(out); /* what killed compiles left there */
		free(out);
	}
	Model *m = onnx_load(o->model);
	if (!m)
		return -1;
	/* Only the file name: the .om must not depend on where it was
	 * built from. */
	m->path = base_name(o->model);
	m->jobs = o->pass.jobs;
	warn_opset(m);
	int rc = gear_apply(m, pg);
	if (!rc)
		rc = pin_apply(m, pins);
	if (!rc)
		record_pass_options(m, o);
	if (!rc && (rc = run_passes(m, &o->pass)) < 0)
		error_prefix("model '%s'", o->model);
	if (!rc)
		warn_model(m);
	char *path = o->no_write ? NULL : om_output_path(o->output);
	long long size = 0;
	struct stat st;
	if (!rc) {
		if (o->pass.progress)
			o->pass.progress(path ? "writing the .om file"
					      : "encoding the .om file", 0, 0);
		rc = path ? om_write(m, path) : encode_only(m, &size);
	}
	print_warnings(m, o);
	if (!rc && path)
		size = stat(path, &st) == 0 ? (long long)st.st_size : 0;
	if (!rc)
		print_summary(m, o, path, size);
	free(path);
	model_free(m);
	return rc;
}

static void progress_tty(const char *what, int step, int nsteps)
{
	if (nsteps)
		fprintf(stderr, "\rgearc: [%d/%d] %-40s", step, nsteps, what);
	else
		fprintf(stderr, "\rgearc: %-46s", what);
	fflush(stderr);
}

static int parse_jobs(const char *s, int *jobs)
{
	int64_t v;
	if (!parse_i64(s, strlen(s), &v) || v < 1 || v > 1024)
		return error("-j/--jobs: '%s' is not a thread count (expected "
			     "an integer from 1 to 1024)",
			     s);
	*jobs = (int)v;
	return 0;
}

/* --hybrid, --compile_hybrid_mode and --static_model_ops_lower_limit
 * (passes/hybrid.h, passes/partition.h). */
typedef struct HybridFlags {
	const char *hybrid, *mode, *limit;
} HybridFlags;

static int check_hybrid_flags(CompileOptions *o, const HybridFlags *h)
{
	int64_t v;
	if (h->mode && strcmp(h->mode, "0") && strcmp(h->mode, "1"))
		return error("--compile_hybrid_mode: '%s' is not a mode "
			     "(expected 0, off, or 1, hybrid)", h->mode);
	if (h->hybrid && h->mode && !strcmp(h->mode, "0"))
		return error("--hybrid and --compile_hybrid_mode=0 disagree "
			     "(give one of them)");
	o->pass.hybrid = h->hybrid || (h->mode && !strcmp(h->mode, "1"));
	if (!h->limit)
		return 0;
	if (!parse_i64(h->limit, strlen(h->limit), &v) || v < -1 ||
	    v > INT32_MAX)
		return error("--static_model_ops_lower_limit: '%s' is not a "
			     "node count (expected an integer >= -1; -1 makes "
			     "every partitioned graph dynamic)", h->limit);
	o->pass.static_limit_given = true;
	o->pass.static_limit = (int32_t)v;
	return 0;
}

/* --hybrid compiles a dynamic graph besides the gears: it needs gears. */
static int check_hybrid_gears(const CompileOptions *o, const ParsedGears *pg)
{
	if (o->pass.hybrid && pg->mode == MODE_STATIC)
		return error("--hybrid needs a gear option (--dynamic_batch_size, "
			     "--dynamic_image_size or --dynamic_dims): it "
			     "compiles a dynamic graph besides the gears");
	if (o->pass.hybrid && o->pass.gear_scope)
		return error("--hybrid cannot be used with --gear_scope: the "
			     "dynamic graph is chosen by the gear Case, which "
			     "--gear_scope replaces by per-scope selection");
	return 0;
}

/* Whether path is the null device (/dev/null, or another name of it). */
static bool null_device(const struct stat *st)
{
	struct stat nul;
	return S_ISCHR(st->st_mode) && stat("/dev/null", &nul) == 0 &&
	       S_ISCHR(nul.st_mode) && st->st_rdev == nul.st_rdev;
}

/* --output names a file: not "dir/" (which would write "dir/.om"), not
 * an existing directory, with or without the ".om" gearc appends; "-"
 * and the null device write nothing (o->no_write), and nothing else
 * but a regular file may be there (else NAME.om would be made beside a
 * device or FIFO: /dev/null.om). */
static int check_output(CompileOptions *o)
{
	struct stat st;
	const char *output = o->output;
	size_t n = strlen(output);
	if (!strcmp(output, "-") || (!stat(output, &st) && null_device(&st))) {
		o->no_write = true;
		return 0;
	}
	if (!stat(output, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return error("--output: '%s' is not a regular file; expected a "
			     "file name for the .om (--output=- or --check "
			     "writes nothing)", output);
	if (output[n - 1] == '/')
		return error("--output: '%s' ends in '/'; expected a file "
			     "name (e.g. --output=%smodel)", output, output);
	if (!stat(output, &st) && S_ISDIR(st.st_mode))
		return error("--output: '%s' is a directory; expected a file "
			     "name (e.g. --output=%s/model)", output, output);
	char *path = om_output_path(output);
	int rc = 0;
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		rc = error("--output: '%s' is a directory; expected a file "
			   "name", path);
	free(path);
	return rc;
}

/* What can be told from the flags alone, before reading the model. */
static int check_flags(CompileOptions *o, const char *framework,
		       const char *jobs)
{
	if (!o->model)
		return error("--model is required: the ONNX file to compile");
	if (!*o->model)
		return error("--model is empty: expected the ONNX file to "
			     "compile");
	if (o->no_write && o->output) /* --check */
		return error("--check writes nothing: give it without --output "
			     "(or --output=- alone)");
	if (!o->no_write && !o->output)
		return error("--output is required: the name of the .om file "
			     "to write (--check compiles without writing one)");
	if (o->output && !*o->output)
		return error("--output is empty: expected the name of the .om "
			     "file");
	if (o->output && check_output(o) < 0)
		return -1;
	if (framework && strcmp(framework, "5") != 0)
		return error("--framework: '%s' is not supported (gearc reads "
			     "ONNX models: --framework=5)",
			     framework);
	if (jobs && parse_jobs(jobs, &o->pass.jobs) < 0)
		return -1;
	const char *dump = o->pass.dump_after;
	const char *bad = dump ? dump_after_check(dump) : NULL;
	if (bad)
		return error("--dump-after: no pass named '%s' (passes: %s)",
			     bad, pass_names());
	if (o->pass.gear_scope && gear_scope_check(o->pass.gear_scope) < 0)
		return -1;
	return 0;
}

/* --gear_scope chooses what to clone per gear: it needs gears. */
static int check_scope(const CompileOptions *o, const ParsedGears *pg)
{
	if (o->pass.gear_scope && pg->mode == MODE_STATIC)
		return error("--gear_scope needs a gear option "
			     "(--dynamic_batch_size, --dynamic_image_size or "
			     "--dynamic_dims): scopes choose what is cloned "
			     "per gear");
	return 0;
}

int cmd_compile(int argc, char **argv)
{
	CompileOptions o = { 0 };
	const char *framework = NULL, *jobs = NULL, *quiet = NULL, *help = NULL;
	const char *input_value = NULL, *no_fuse = NULL, *keep_fp16 = NULL;
	const char *check = NULL;
	HybridFlags hf = { 0 };
	const ArgSpec spec[] = {
		{ "model", 0, true, &o.model },
		{ "output", 0, true, &o.output },
		{ "input_shape", 0, true, &o.gear.input_shape },
		{ "dynamic_batch_size", 0, true, &o.gear.dynamic_batch_size },
		{ "dynamic_image_size", 0, true, &o.gear.dynamic_image_size },
		{ "dynamic_dims", 0, true, &o.gear.dynamic_dims },
		{ "input_format", 0, true, &o.gear.input_format },
		{ "input_value", 0, true, &input_value },
		{ "framework", 0, true, &framework },
		{ "jobs", 'j', true, &jobs },
		{ "dump_after", 0, true, &o.pass.dump_after },
		{ "gear_scope", 0, true, &o.pass.gear_scope },
		{ "hybrid", 0, false, &hf.hybrid },
		{ "compile_hybrid_mode", 0, true, &hf.mode },
		{ "static_model_ops_lower_limit", 0, true, &hf.limit },
		{ "no_fuse", 0, false, &no_fuse },
		{ "keep_fp16", 0, false, &keep_fp16 },
		{ "check", 0, false, &check },
		{ "quiet", 'q', false, &quiet },
		{ "help", 'h', false, &help },
		{ 0 },
	};
	const char *pos[1];
	int npos;
	int done = cmd_args(argc, argv, spec, "compile", pos, 0, &npos, &help);
	if (done >= 0)
		return done;
	o.no_write = check != NULL;
	if (check_flags(&o, framework, jobs) < 0 ||
	    check_hybrid_flags(&o, &hf) < 0)
		return fail(EXIT_USAGE);
	o.quiet = quiet != NULL;
	o.pass.no_fuse = no_fuse != NULL;
	o.pass.keep_fp16 = keep_fp16 != NULL;
	if (!o.quiet && isatty(STDERR_FILENO))
		o.pass.progress = progress_tty;

	ParsedGears pg;
	if (gear_parse(&pg, &o.gear) < 0)
		return fail(EXIT_USAGE);
	if (check_scope(&o, &pg) < 0 || check_hybrid_gears(&o, &pg) < 0) {
		gear_parsed_release(&pg);
		return fail(EXIT_USAGE);
	}
	catch_fatal_signals();
	ParsedPins pins;
	if (pin_parse(&pins, input_value, &pg) < 0) {
		gear_parsed_release(&pg);
		return fail(EXIT_USAGE);
	}
	int rc = compile_pinned(&o, &pg, &pins);
	pin_parsed_release(&pins);
	gear_parsed_release(&pg);
	return rc < 0 ? fail(EXIT_FAIL) : EXIT_OK;
}
