/* cli/compile.c - 'gearc compile': flags -> gear spec -> passes -> .om. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "compiler/onnx.h"
#include "passes/partition.h"
#include "passes/scope.h"
#include "serializer/om.h"

int fail(int status)
{
	fprintf(stderr, "gearc: error: %s\n", last_error());
	return status;
}

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

/* The hybrid and partition options used, after the gear options, in the
 * spelling GE's options have. */
static void record_hybrid_options(Model *m, const CompileOptions *o)
{
	if (o->hybrid)
		model_add_option(m, "compile_hybrid_mode", "1");
	if (o->static_limit_given) {
		char buf[32];
		snprintf(buf, sizeof(buf), "%d", o->static_limit);
		model_add_option(m, "static_model_ops_lower_limit", buf);
	}
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
	char *out = om_output_path(o->output);
	om_remove_stale_temps(out); /* what killed compiles left there */
	free(out);
	Model *m = onnx_load(o->model);
	if (!m)
		return -1;
	/* Only the file name: the .om must not depend on where it was
	 * built from. */
	m->path = base_name(o->model);
	m->jobs = o->jobs;
	int rc = gear_apply(m, pg);
	if (!rc)
		record_hybrid_options(m, o);
	if (!rc)
		rc = run_passes(m, o);
	if (!rc) {
		char *path = om_output_path(o->output);
		if (o->progress)
			o->progress("writing the .om file", 0, 0);
		rc = om_write(m, path);
		free(path);
	}
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
	o->hybrid = h->hybrid || (h->mode && !strcmp(h->mode, "1"));
	if (!h->limit)
		return 0;
	if (!parse_i64(h->limit, strlen(h->limit), &v) || v < -1 ||
	    v > INT32_MAX)
		return error("--static_model_ops_lower_limit: '%s' is not a "
			     "node count (expected an integer >= -1; -1 makes "
			     "every partitioned graph dynamic)", h->limit);
	o->static_limit_given = true;
	o->static_limit = (int32_t)v;
	return 0;
}

/* --hybrid compiles a dynamic graph besides the gears: it needs gears. */
static int check_hybrid_gears(const CompileOptions *o, const ParsedGears *pg)
{
	if (o->hybrid && pg->mode == MODE_STATIC)
		return error("--hybrid needs a gear option (--dynamic_batch_size, "
			     "--dynamic_image_size or --dynamic_dims): it "
			     "compiles a dynamic graph besides the gears");
	if (o->hybrid && o->gear_scope)
		return error("--hybrid cannot be used with --gear_scope: the "
			     "dynamic graph is chosen by the gear Case, which "
			     "--gear_scope replaces by per-scope selection");
	return 0;
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
	if (!o->output)
		return error("--output is required: the name of the .om file "
			     "to write");
	if (!*o->output)
		return error("--output is empty: expected the name of the .om "
			     "file");
	if (framework && strcmp(framework, "5") != 0)
		return error("--framework: '%s' is not supported (gearc reads "
			     "ONNX models: --framework=5)",
			     framework);
	if (jobs && parse_jobs(jobs, &o->jobs) < 0)
		return -1;
	if (o->dump_after && !pass_find(o->dump_after))
		return error("--dump-after: no pass named '%s' (passes: %s)",
			     o->dump_after, pass_names());
	if (o->gear_scope && gear_scope_check(o->gear_scope) < 0)
		return -1;
	return 0;
}

/* --gear_scope chooses what to clone per gear: it needs gears. */
static int check_scope(const CompileOptions *o, const ParsedGears *pg)
{
	if (o->gear_scope && pg->mode == MODE_STATIC)
		return error("--gear_scope needs a gear option "
			     "(--dynamic_batch_size, --dynamic_image_size or "
			     "--dynamic_dims): scopes choose what is cloned "
			     "per gear");
	return 0;
}

int cmd_compile(int argc, char **argv)
{
	CompileOptions o = { .fold_limit = 64 * 1024 };
	const char *framework = NULL, *jobs = NULL, *quiet = NULL, *help = NULL;
	HybridFlags hf = { 0 };
	const ArgSpec spec[] = {
		{ "model", 0, true, &o.model },
		{ "output", 0, true, &o.output },
		{ "input_shape", 0, true, &o.gear.input_shape },
		{ "dynamic_batch_size", 0, true, &o.gear.dynamic_batch_size },
		{ "dynamic_image_size", 0, true, &o.gear.dynamic_image_size },
		{ "dynamic_dims", 0, true, &o.gear.dynamic_dims },
		{ "input_format", 0, true, &o.gear.input_format },
		{ "framework", 0, true, &framework },
		{ "jobs", 'j', true, &jobs },
		{ "dump_after", 0, true, &o.dump_after },
		{ "gear_scope", 0, true, &o.gear_scope },
		{ "hybrid", 0, false, &hf.hybrid },
		{ "compile_hybrid_mode", 0, true, &hf.mode },
		{ "static_model_ops_lower_limit", 0, true, &hf.limit },
		{ "quiet", 'q', false, &quiet },
		{ "help", 'h', false, &help },
		{ 0 },
	};
	const char *pos[1];
	int npos;
	if (args_parse(argc, argv, spec, "compile", pos, 0, &npos) < 0)
		return fail(EXIT_USAGE);
	if (help) {
		print_help(stdout, "compile");
		return EXIT_OK;
	}
	if (check_flags(&o, framework, jobs) < 0 ||
	    check_hybrid_flags(&o, &hf) < 0)
		return fail(EXIT_USAGE);
	o.quiet = quiet != NULL;
	if (!o.quiet && isatty(STDERR_FILENO))
		o.progress = progress_tty;

	ParsedGears pg;
	if (gear_parse(&pg, &o.gear) < 0)
		return fail(EXIT_USAGE);
	if (check_scope(&o, &pg) < 0 || check_hybrid_gears(&o, &pg) < 0) {
		gear_parsed_release(&pg);
		return fail(EXIT_USAGE);
	}
	catch_fatal_signals();
	int rc = compile_model(&o, &pg);
	gear_parsed_release(&pg);
	if (o.progress)
		fputs("\r\033[K", stderr);
	return rc < 0 ? fail(EXIT_FAIL) : EXIT_OK;
}
