/* cli/compile.c - 'gearc compile': flags -> gear spec -> passes -> .om. */
#include <errno.h>
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
	if (o->pass.precision) {
		model_add_option(m, "precision_mode", o->pass.precision->mode);
		m->precision_mode = o->pass.precision->mode;
		m->reduced = o->pass.precision->dtype;
	}
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

/* Every op of the model gearc does not know, in one error (the passes
 * would stop at the first). */
static int check_supported(Model *m, const CompileOptions *o)
{
	OpHist h = { 0 };
	ophist_add(&h, m->graph);
	int rc = unsupported_ops_error(&h);
	if (rc < 0)
		error_prefix("model '%s'", o->model);
	ophist_free(&h);
	return rc;
}

/* --log=info and debug: what the passes did, on stderr. */
typedef struct CompileLog {
	int level;
	OpHist ops; /* after the last pass logged */
	double total;
} CompileLog;

static void log_model(Model *m, CompileLog *log)
{
	int64_t nodes = 0;
	for (int32_t i = 0; i < log->ops.n; i++)
		nodes += log->ops.e[i].n;
	fprintf(stderr, "gearc: info: model '%s': %lld nodes, opset %lld, "
		"%s mode, %d gear%s\n", m->path, (long long)nodes,
		(long long)model_opset(m), gear_mode_name(m->mode),
		m->gears ? m->gears->ngears : 0,
		m->gears && m->gears->ngears == 1 ? "" : "s");
	if (log->level >= LOG_DEBUG) {
		fputs("gearc: debug: ops in: ", stderr);
		ophist_print(stderr, &log->ops);
		fputc('\n', stderr);
	}
}

/* One line per pass: its time and how it changed the op counts over
 * every graph (what fuse made of what); debug adds the counts. */
static void log_pass(Model *m, const char *pass, double secs, void *ctx)
{
	CompileLog *log = ctx;
	OpHist now = { 0 };
	ophist_add(&now, m->graph);
	ophist_add(&now, m->dynamic);
	log->total += secs;
	fprintf(stderr, "gearc: info: pass %-11s %9.2f ms", pass,
		secs * 1e3);
	OpHist *was = &log->ops;
	bool changed = was->n != now.n;
	for (int32_t i = 0; !changed && i < now.n; i++)
		changed = ophist_get(was, now.e[i].domain, now.e[i].op) !=
			  now.e[i].n;
	if (changed) {
		fputs("  ", stderr);
		ophist_print_diff(stderr, was, &now);
	}
	fputc('\n', stderr);
	if (log->level >= LOG_DEBUG) {
		fputs("gearc: debug: ops now: ", stderr);
		ophist_print(stderr, &now);
		fputc('\n', stderr);
	}
	ophist_free(was);
	*was = now;
}

static void log_ops_used(const CompileLog *log)
{
	fprintf(stderr, "gearc: info: passes took %.2f ms; ops used: ",
		log->total * 1e3);
	ophist_print(stderr, &log->ops);
	fputc('\n', stderr);
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
	int rc = check_supported(m, o);
	if (!rc)
		rc = gear_apply(m, pg);
	if (!rc)
		rc = pin_apply(m, pins);
	if (!rc && o->edits)
		rc = edit_apply(m, o->edits);
	char *note = NULL;
	if (!rc && o->pre)
		rc = preproc_apply(m, o->pre, &note);
	if (note && o->log >= LOG_WARNING)
		fprintf(stderr, "gearc: note: %s\n", note);
	free(note);
	if (!rc)
		record_pass_options(m, o);
	CompileLog log = { .level = o->log };
	PassOptions po = o->pass;
	if (o->log >= LOG_INFO) {
		po.pass_done = log_pass;
		po.log_ctx = &log;
		ophist_add(&log.ops, m->graph);
		log_model(m, &log);
	}
	if (!rc && (rc = run_passes(m, &po)) < 0)
		error_prefix("model '%s'", o->model);
	if (!rc && o->log >= LOG_INFO)
		log_ops_used(&log);
	ophist_free(&log.ops);
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
		       const char *jobs, int mode)
{
	if (!o->model)
		return error("--model is required: the ONNX file to compile");
	if (!*o->model)
		return error("--model is empty: expected the ONNX file to "
			     "compile");
	if (mode == 3 && o->output)
		return error("--output: --mode=3 checks the model and writes "
			     "nothing");
	if (mode == 3)
		return 0;
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

/* compile's flags as given, besides those CompileOptions holds. */
typedef struct CompileFlags {
	const char *framework, *jobs, *quiet, *help, *input_value;
	const char *no_fuse, *keep_fp16, *log, *mode, *om, *json;
	const char *out_nodes, *output_type, *fp16, *check;
	const char *precision_mode, *keep_dtype, *modify_mixlist;
	PreFlags pre;
	HybridFlags hf;
	const char *atc[ATC_NFLAGS];
} CompileFlags;

static int compile_spec(ArgSpec *spec, CompileOptions *o, CompileFlags *f)
{
	const ArgSpec base[] = {
		{ "model", 0, true, &o->model },
		{ "output", 0, true, &o->output },
		{ "input_shape", 0, true, &o->gear.input_shape },
		{ "dynamic_batch_size", 0, true, &o->gear.dynamic_batch_size },
		{ "dynamic_image_size", 0, true, &o->gear.dynamic_image_size },
		{ "dynamic_dims", 0, true, &o->gear.dynamic_dims },
		{ "input_format", 0, true, &o->gear.input_format },
		{ "input_value", 0, true, &f->input_value },
		{ "framework", 0, true, &f->framework },
		{ "jobs", 'j', true, &f->jobs },
		{ "dump_after", 0, true, &o->pass.dump_after },
		{ "gear_scope", 0, true, &o->pass.gear_scope },
		{ "hybrid", 0, false, &f->hf.hybrid },
		{ "compile_hybrid_mode", 0, true, &f->hf.mode },
		{ "static_model_ops_lower_limit", 0, true, &f->hf.limit },
		{ "no_fuse", 0, false, &f->no_fuse },
		{ "keep_fp16", 0, false, &f->keep_fp16 },
		{ "check", 0, false, &f->check },
		{ "precision_mode", 0, true, &f->precision_mode },
		{ "keep_dtype", 0, true, &f->keep_dtype },
		{ "modify_mixlist", 0, true, &f->modify_mixlist },
		{ "out_nodes", 0, true, &f->out_nodes },
		{ "output_type", 0, true, &f->output_type },
		{ "input_fp16_nodes", 0, true, &f->fp16 },
		{ "insert_op_conf", 0, true, &f->pre.aipp },
		{ "mean_values", 0, true, &f->pre.mean },
		{ "scale_values", 0, true, &f->pre.scale },
		{ "reverse_input_channels", 0, false, &f->pre.reverse },
		{ "layout", 0, true, &f->pre.layout },
		{ "source_layout", 0, true, &f->pre.source_layout },
		{ "target_layout", 0, true, &f->pre.target_layout },
		{ "source_type", 0, true, &f->pre.source_type },
		{ "log", 0, true, &f->log },
		{ "mode", 0, true, &f->mode },
		{ "om", 0, true, &f->om },
		{ "json", 0, true, &f->json },
		{ "quiet", 'q', false, &f->quiet },
		{ "help", 'h', false, &f->help },
	};
	int n = (int)ARRAY_SIZE(base);
	memcpy(spec, base, sizeof(base));
	n += atc_flags_add(spec + n, f->atc);
	spec[n] = (ArgSpec){ 0 };
	return n;
}

static const char *const log_names[] = { "null", "error", "warning", "info",
					  "debug" };

/* --log and --quiet into o->log (atc's levels; warning, the default, is
 * what gearc printed before --log existed). */
static int check_log(CompileOptions *o, const CompileFlags *f)
{
	o->log = LOG_WARNING;
	if (f->log && f->quiet)
		return error("--quiet and --log=%s disagree (--quiet is "
			     "--log=error; give one of them)", f->log);
	if (f->quiet)
		o->log = LOG_ERROR;
	if (!f->log)
		return 0;
	for (int i = 0; i < (int)ARRAY_SIZE(log_names); i++)
		if (!strcmp(f->log, log_names[i])) {
			o->log = i;
			return 0;
		}
	return error("--log: '%s' is not a log level (expected debug, info, "
		     "warning, error or null)", f->log);
}

/* --mode: 0 compile, 1 .om to JSON, 3 check the ops only (atc's). */
static int check_mode(const CompileFlags *f, int *mode)
{
	*mode = 0;
	if (f->mode && strcmp(f->mode, "0") && strcmp(f->mode, "1") &&
	    strcmp(f->mode, "3"))
		return error("--mode: '%s' is not a mode gearc has (expected 0, "
			     "compile; 1, .om to JSON; 3, check the model's "
			     "ops)", f->mode);
	if (f->mode)
		*mode = f->mode[0] - '0';
	if (*mode != 1 && (f->om || f->json))
		return error("--%s is for --mode=1 (the .om to convert to "
			     "JSON)", f->om ? "om" : "json");
	if (*mode == 1 && (!f->om || !f->json))
		return error("--mode=1 needs --om=FILE.om and --json=FILE.json "
			     "(the .om to convert, the JSON to write)");
	if (*mode == 1 && (*f->om == 0 || *f->json == 0))
		return error("--mode=1: --%s is empty", *f->om ? "json" : "om");
	return 0;
}

/* An exit status, with the error printed unless --log=null. */
static int compile_fail(const CompileOptions *o, int status)
{
	if (o->log == LOG_NULL)
		return status;
	return fail(status);
}

/* --mode=1: FILE.om to FILE.json, as 'gearc dump --format=json' writes
 * it; a partial JSON file is removed. */
static int om_to_json(const CompileFlags *f)
{
	FILE *out = fopen(f->json, "w");
	if (!out)
		return error("--json '%s': cannot create the file: %s",
			     f->json, strerror(errno));
	int rc = om_dump_json(f->om, out);
	if (rc < 0)
		error_prefix("--om '%s'", f->om);
	if (fclose(out) != 0 && rc == 0)
		rc = error("--json '%s': writing: %s", f->json,
			   strerror(errno));
	if (rc < 0)
		remove(f->json);
	return rc;
}

/* --mode=3: atc's pre-check.  Every op gearc does not support, one per
 * line on stdout with its node count, then the error; or one line saying
 * all are.  Writes no file. */
static int check_ops(const CompileOptions *o)
{
	Model *m = onnx_load(o->model);
	if (!m)
		return -1;
	OpHist h = { 0 };
	ophist_add(&h, m->graph);
	int64_t nodes = 0, bad = 0;
	for (int32_t i = 0; i < h.n; i++) {
		nodes += h.e[i].n;
		if (h.e[i].known)
			continue;
		bad++;
		printf("unsupported: %s%s%s%s: %lld node%s\n", h.e[i].op,
		       *h.e[i].domain ? " (domain " : "", h.e[i].domain,
		       *h.e[i].domain ? ")" : "", (long long)h.e[i].n,
		       h.e[i].n == 1 ? "" : "s");
	}
	if (!bad)
		printf("model '%s': %lld nodes, %d distinct ops, all supported\n",
		       o->model, (long long)nodes, h.n);
	int rc = unsupported_ops_error(&h);
	if (rc < 0)
		error_prefix("model '%s'", o->model);
	ophist_free(&h);
	model_free(m);
	return rc;
}

int cmd_compile(int argc, char **argv)
{
	CompileOptions o = { 0 };
	CompileFlags f = { 0 };
	ArgSpec spec[64 + ATC_NFLAGS];
	compile_spec(spec, &o, &f);
	const char *pos[1];
	int npos, mode;
	int done = cmd_args(argc, argv, spec, "compile", pos, 0, &npos,
			    &f.help);
	if (done >= 0)
		return done;
	o.no_write = f.check != NULL;
	if (check_log(&o, &f) < 0 || check_mode(&f, &mode) < 0 ||
	    atc_flags_check(f.atc) < 0)
		return compile_fail(&o, EXIT_USAGE);
	if (mode == 1)
		return om_to_json(&f) < 0 ? compile_fail(&o, EXIT_FAIL)
					  : EXIT_OK;
	if (check_flags(&o, f.framework, f.jobs, mode) < 0 ||
	    check_hybrid_flags(&o, &f.hf) < 0)
		return compile_fail(&o, EXIT_USAGE);
	if (o.log >= LOG_WARNING)
		atc_flags_warn(f.atc, stderr);
	if (mode == 3)
		return check_ops(&o) < 0 ? compile_fail(&o, EXIT_FAIL)
					 : EXIT_OK;
	o.quiet = o.log < LOG_WARNING;
	o.pass.no_fuse = f.no_fuse != NULL;
	o.pass.keep_fp16 = f.keep_fp16 != NULL;
	if (!o.quiet && isatty(STDERR_FILENO))
		o.pass.progress = progress_tty;

	ParsedGears pg;
	if (gear_parse(&pg, &o.gear) < 0)
		return compile_fail(&o, EXIT_USAGE);
	if (check_scope(&o, &pg) < 0 || check_hybrid_gears(&o, &pg) < 0) {
		gear_parsed_release(&pg);
		return compile_fail(&o, EXIT_USAGE);
	}
	catch_fatal_signals();
	ParsedPins pins;
	ParsedEdits edits;
	if (pin_parse(&pins, f.input_value, &pg) < 0) {
		gear_parsed_release(&pg);
		return compile_fail(&o, EXIT_USAGE);
	}
	if (edit_parse(&edits, f.out_nodes, f.output_type, f.fp16) < 0) {
		pin_parsed_release(&pins);
		gear_parsed_release(&pg);
		return compile_fail(&o, EXIT_USAGE);
	}
	o.edits = &edits;
	ParsedPre pre;
	int status;
	if (pre_parse(&pre, &f.pre, &status) < 0) {
		edit_parsed_release(&edits);
		pin_parsed_release(&pins);
		gear_parsed_release(&pg);
		return compile_fail(&o, status);
	}
	o.pre = &pre;
	ParsedPrecision prec;
	if (precision_parse(&prec, f.precision_mode, f.keep_dtype,
			    f.modify_mixlist, &status) < 0) {
		pre_parsed_release(&pre);
		edit_parsed_release(&edits);
		pin_parsed_release(&pins);
		gear_parsed_release(&pg);
		return compile_fail(&o, status);
	}
	if (o.log >= LOG_WARNING)
		precision_warn(&prec, stderr);
	o.pass.precision = f.precision_mode ? &prec.spec : NULL;
	int rc = compile_pinned(&o, &pg, &pins);
	precision_parsed_release(&prec);
	pre_parsed_release(&pre);
	edit_parsed_release(&edits);
	pin_parsed_release(&pins);
	gear_parsed_release(&pg);
	return rc < 0 ? compile_fail(&o, EXIT_FAIL) : EXIT_OK;
}
