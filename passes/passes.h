/*
 * passes/passes.h - the compile pipeline.
 *
 * Every pass has one signature and is listed once, in order, in passes.c
 * (QBE's main.c).  A pass returns 0, or -1 with an error set.  In debug
 * builds graph_verify() runs after every pass; --dump-after=PASS prints
 * the graph after the named pass.
 */
#ifndef GEARC_PASSES_H
#define GEARC_PASSES_H

#include "compiler/gearspec.h"
#include "compiler/ir.h"

#include <stdio.h>

typedef void (*ProgressFn)(const char *what, int step, int nsteps);

typedef struct CompileOptions {
	const char *model;  /* --model */
	const char *output; /* --output, ".om" appended if missing */
	GearOptions gear;
	const char *dump_after; /* --dump-after=PASS, or NULL */
	int jobs;		/* -j N; 0: number of cores */
	int quiet;		/* --quiet */
	int64_t fold_limit;	/* max bytes of a folded constant */
	ProgressFn progress;	/* NULL: silent */
} CompileOptions;

typedef int (*PassFn)(Model *m, const CompileOptions *o);

typedef struct Pass {
	const char *name;
	PassFn run;
	const char *what; /* one line for --help */
} Pass;

/* Runs every pass in order on m: verifies the IR after each one (unless
 * built with NDEBUG), prints the graph after o->dump_after, reports
 * progress.  Errors name the model file. */
int run_passes(Model *m, const CompileOptions *o);
/* The pass called name, or NULL. */
const Pass *pass_find(const char *name);
/* "infer, ..." for help texts. */
const char *pass_names(void);

/* Prints g (and its subgraphs, indented) as text: one line per node with
 * its inputs, outputs, dtypes and shapes. */
void graph_print(FILE *f, const Graph *g, int indent);

/* Shape and dtype inference over g and its subgraphs, in topological
 * order, with the op table's infer hooks.  An op with no hook, or one
 * whose inputs it cannot handle, is an error naming the node and op. */
int infer_graph(Model *m, Graph *g);
int pass_infer(Model *m, const CompileOptions *o);

/* Replaces every If whose condition is constant by the nodes of its taken
 * branch, recursively and in every subgraph (passes/inline.c).  Runs
 * after infer; the If's output ids stay valid. */
int pass_inline(Model *m, const CompileOptions *o);
/* Turns nodes whose outputs are all known into weights, removes nodes
 * whose outputs nothing uses and drops the values nothing refers to, in
 * every graph (passes/dce.c).  Runs after inline.  Value ids are
 * renumbered (consistently, the gear spec's included). */
int pass_dce(Model *m, const CompileOptions *o);

#endif
