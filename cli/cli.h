/*
 * cli/cli.h - the command-line layer: flag parsing, subcommands, help.
 *
 * cli/ is the only place that prints to stdout/stderr for the user and the
 * only place that decides exit statuses (each command returns one and
main() returns it; nothing calls exit()):
 *   0 success, 1 failure (model, file, I/O), 2 usage (bad or conflicting
 *   flags).  Errors print as one line "gearc: error: <message>".
 *
 * Declared here: args.c (args_parse, cmd_args, fail), one cmd_* per
 * command file, help.c, the flag grammars gearflags.c (gear_parse) and
 * pinflag.c (pin_parse), compile.c's CompileOptions, compile_model,
 * compile_pinned and om_output_path, and dump.c's om_json and
 * om_escape_names, which the tests, fuzzers and conformance tool call as
 * the commands do.  The library layers below (compiler/, passes/,
 * serializer/, runtime/) never include this header.
 */
#ifndef GEARC_CLI_H
#define GEARC_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "compiler/edit.h"
#include "compiler/preproc.h"
#include "passes/passes.h"
#include "serializer/verify.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

struct ParsedPins;

/* The gear options as given (compiler/gearspec.h describes them). */
typedef struct GearOptions {
	const char *input_shape; /* NULL when not given */
	const char *dynamic_batch_size;
	const char *dynamic_image_size;
	const char *dynamic_dims;
	const char *input_format; /* NULL: NCHW */
} GearOptions;

/* Parses and checks the gear options alone (cli/gearflags.c; the
 * grammar in compiler/gearspec.h).  Returns 0, or -1 with an error set
 * (a usage error: exit status 2).  On error *p is left empty; either way
 * gear_parsed_release(p) frees everything. */
int gear_parse(ParsedGears *p, const GearOptions *o);

/* One flag of a subcommand.  Names are written with '_' (atc's spelling);
 * on the command line '-' and '_' are interchangeable. */
typedef struct ArgSpec {
	const char *name;   /* without dashes, e.g. "input_shape" */
	char short_name;    /* e.g. 'j', or 0 */
	bool takes_value;   /* else a switch: value set to "1" */
	const char **value; /* where the value goes; NULL until given */
} ArgSpec;

/* Parses argv[0..argc) against spec: "--name=value", "--name value",
 * "-j N", "-jN", switches, "--" ends flags.  The rest go to pos[] (at most
 * maxpos).  A flag given twice, an unknown flag, a missing value or too
 * many positional arguments is a usage error (-1 with the message set;
 * cmd names the command in it). */
int args_parse(int argc, char **argv, const ArgSpec *spec, const char *cmd,
	       const char **pos, int maxpos, int *npos);
/* What every command does first: args_parse, then --help (*help, the
 * value its spec sets).  An exit status to return at once (EXIT_USAGE
 * with the error printed, or EXIT_OK with the command's help printed),
 * or -1 to go on. */
int cmd_args(int argc, char **argv, const ArgSpec *spec, const char *cmd,
	     const char **pos, int maxpos, int *npos, const char *const *help);

/* The directory an output goes in: dir itself if it is one, else created
 * (one level, as mkdir(1) does: a missing parent is an error), *made then
 * set so that a failed command can remove it again.  -1 with an error
 * "FLAG 'DIR': not a directory" or "...: cannot create the directory:
 * REASON". */
int make_output_dir(const char *flag, const char *dir, bool *made);
/* This machine's physical memory in bytes, 0 if unknown. */
uint64_t phys_memory(void);

/* Subcommands: return an exit status. */
int cmd_compare(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_run(int argc, char **argv);

/* Prints help for a command ("" or NULL: the overview) to f; -1 if there
 * is no such command. */
int print_help(FILE *f, const char *cmd);

/* --log's levels (atc's), in order: each prints what the one before it
 * does and more.  LOG_WARNING is the default. */
enum { LOG_NULL, LOG_ERROR, LOG_WARNING, LOG_INFO, LOG_DEBUG };

/* The flags of 'gearc compile': what the passes are told, and the rest. */
typedef struct CompileOptions {
	const char *model;  /* --model */
	const char *output; /* --output, ".om" appended if missing */
	/* --check, --output=- or the null device: compile, write nothing */
	bool no_write;
	GearOptions gear;
	int quiet; /* --quiet, or --log below warning: no warnings, no summary */
	int log;   /* LOG_*: --log, --quiet */
	const ParsedEdits *edits; /* NULL: none */
	const ParsedPre *pre;	  /* NULL: none */
	PassOptions pass;
} CompileOptions;

/* Compiles as the options say and writes the .om.  Returns 0, or -1 with
 * an error set (exit status 1: the options were already parsed). */
int compile_model(const CompileOptions *o, const ParsedGears *pg);
/* The same with inputs pinned by --input_value (compiler/pin.h). */
int compile_pinned(const CompileOptions *o, const ParsedGears *pg,
		   const struct ParsedPins *pins);

/* --out_nodes, --output_type, --input_fp16_nodes (cli/editflags.c; the
 * grammar in compiler/edit.h): NULL for a flag not given.  -1 with a
 * usage error; *p is empty then. */
int edit_parse(ParsedEdits *p, const char *out_nodes, const char *output_type,
	       const char *fp16);

/* The preprocessing flags as given (cli/preflags.c; compiler/preproc.h). */
typedef struct PreFlags {
	const char *aipp; /* --insert_op_conf */
	const char *mean, *scale, *reverse, *layout, *source_layout,
		*target_layout, *source_type;
} PreFlags;
/* Reads them (and the AIPP file) into *p: -1 with an error and *status
 * the exit status (2 for the flags, 1 for the file's contents). */
int pre_parse(ParsedPre *p, const PreFlags *f, int *status);

/* atc's --precision_mode, --keep_dtype and --modify_mixlist
 * (cli/precflags.c): spec.dtype 0 without a mode.  -1 with an error and
 * *status the exit status (a bad flag 2, a bad file 1). */
typedef struct ParsedPrecision {
	Arena arena;
	PrecisionSpec spec;
} ParsedPrecision;
int precision_parse(ParsedPrecision *pp, const char *mode,
		    const char *keep, const char *mixlist, int *status);
/* What the mode cannot do on CPUs (float16: bfloat16 instead). */
void precision_warn(const ParsedPrecision *pp, FILE *f);
void precision_parsed_release(ParsedPrecision *pp);

/* --input_value (cli/pinflag.c; the grammar in compiler/pin.h): s may
 * be NULL (no --input_value), *p is then empty.  pg is the parsed
 * --input_shape, for the gear-input check.  -1 with a usage error; *p
 * is freed by pin_parsed_release either way. */
int pin_parse(struct ParsedPins *p, const char *s, const ParsedGears *pg);

/* "NAME" -> "NAME.om" unless it already ends in ".om"; malloc'd. */
char *om_output_path(const char *output);

/* The JSON document of 'gearc dump --format=json' for a validated file. */
struct json_object;
struct OmFile;
struct json_object *om_json(const struct OmFile *f, const char *path);
/* Writes to out what 'gearc dump --format=json FILE.om' prints (atc's
 * --mode=1); -1 with an error if the file is not a valid .om. */
int om_dump_json(const char *om, FILE *out);
/* Replaces every name in f's model by its str_escape(how) form, as dump
 * shows it: how 0 for JSON, ESC_CONTROLS for text. */
void om_escape_names(struct OmFile *f, unsigned how);

/* ---- atc's NPU-only flags (cli/atcflags.c) ------------------------------ */

enum { ATC_NFLAGS = 22 };
/* Fills spec[0..ATC_NFLAGS) with the flags, values going to vals[];
 * returns ATC_NFLAGS. */
int atc_flags_add(ArgSpec *spec, const char **vals);
/* Each given value against the shape atc documents: -1 with a usage
 * error naming the flag. */
int atc_flags_check(const char **vals);
/* One "gearc: warning: " line per given flag. */
void atc_flags_warn(const char **vals, FILE *f);

/* ---- op histograms (cli/ophist.c) ---------------------------------------- */

typedef struct OpCount {
	char *op, *domain; /* domain "" for ONNX's default */
	int64_t n;
	bool known; /* in gearc's op table (compiler/ops.h) */
} OpCount;
typedef struct OpHist {
	int32_t n, cap;
	OpCount *e; /* sorted by domain, then op */
} OpHist;
/* Counts the nodes of g and its subgraphs into h (g may be NULL). */
void ophist_add(OpHist *h, Graph *g);
int64_t ophist_get(const OpHist *h, const char *domain, const char *op);
void ophist_free(OpHist *h);
/* "3 Conv, 1 Attention (domain com.microsoft)" */
void ophist_print(FILE *f, const OpHist *h);
/* "-3 Conv, -3 Relu, +3 FusedConv (domain ai.gearc)" */
void ophist_print_diff(FILE *f, const OpHist *before, const OpHist *after);
/* Every op of h gearc does not know, in one error: -1, or 0 if none. */
int unsupported_ops_error(const OpHist *h);
/* A JSON string of the name s, its bytes that are no UTF-8 as \xNN (as
 * dump shows names): what run's and compare's JSON write (args.c). */
struct json_object *json_name(const char *s);

/* Prints "gearc: error: <last_error()>" to stderr and returns status
 * (args.c). */
int fail(int status);

#endif
