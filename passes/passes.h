/*
 * passes/passes.h - the compile pipeline (passes.c) and the entry points
 * of the passes without a header of their own: gear.c, print.c,
 * inline.c, dce.c, fuse.c and memplan.c's pass (each section names its
 * file).  scope.h, partition.h, hybrid.h and memplan.h own the rest.
 *
 * Every pass has one signature and is listed once, in order, in passes.c
 * (QBE's main.c).  A pass returns 0, or -1 with an error set.  In debug
 * and sanitizer builds (make DEBUG=1, make SANITIZE=1: GEARC_DEBUG)
 * graph_verify() runs after every pass; --dump-after=PASS[,PASS...] prints
 * the graph after each named pass, and after it fails (that is when it
 * helps).  Progress counts only the passes that apply to the compile.
 */
#ifndef GEARC_PASSES_H
#define GEARC_PASSES_H

#include "compiler/gearspec.h"
#include "compiler/infer.h"
#include "compiler/ir.h"

#include <stdio.h>

typedef void (*ProgressFn)(const char *what, int step, int nsteps);
struct Model;
/* Called after each pass that applies, with its wall time (--log=info). */
typedef void (*PassDoneFn)(struct Model *m, const char *pass, double secs,
			   void *ctx);

/* atc's --precision_mode and its lists (passes/precision.c). */
typedef struct PrecisionSpec {
	const char *mode; /* the flag's value */
	int32_t dtype;	  /* DT_BFLOAT16, DT_FLOAT16, or 0: full precision */
	/* op types kept in float32 (--modify_mixlist's black list and
	 * white-list removals, --keep_dtype's OpType:: lines), and node
	 * names (--keep_dtype's other lines) */
	const char **deny, **keep;
	int32_t ndeny, nkeep;
} PrecisionSpec;

/* What the passes and their driver are told (cli/cli.h's
 * PassOptions holds the rest of a compile's flags: files, gear
 * options, --quiet). */
typedef struct PassOptions {
	const char *dump_after; /* --dump-after=PASS, or NULL */
	int jobs;		/* -j N; 0: number of cores */
	int64_t fold_limit;	/* max bytes of a folded constant, 0: 64 KiB */
	ProgressFn progress;	/* NULL: silent */
	const char *gear_scope; /* --gear_scope (passes/scope.h), or NULL */
	/* Hybrid mode and partitions (passes/hybrid.h, passes/partition.h). */
	int hybrid; /* --hybrid, --compile_hybrid_mode=1 */
	bool static_limit_given; /* --static_model_ops_lower_limit given: */
	int32_t static_limit;	 /* its value (>= -1); else the default 4 */
	int no_fuse; /* --no-fuse: skip the fuse pass (passes/fuse.c) */
	int keep_fp16; /* --keep-fp16: float16 values rounded (widen.c) */
	const PrecisionSpec *precision; /* NULL: full precision */
	PassDoneFn pass_done; /* NULL: none */
	void *log_ctx;	      /* pass_done's ctx */
} PassOptions;

typedef int (*PassFn)(Model *m, const PassOptions *o);
/* A pass over one static graph (the main graph of a static compile, or
 * one gear branch); it may run on any thread and must touch nothing but g
 * and g->arena. */
typedef int (*GraphPassFn)(Model *m, Graph *g, const PassOptions *o);

/* A pass is either model-wide (run) or per static graph (run_graph). */
typedef struct Pass {
	const char *name;
	PassFn run;
	GraphPassFn run_graph;
	const char *what; /* one line for --help */
} Pass;

/* Runs every pass in order on m, o->fold_limit set as m->fold_limit:
 * verifies the IR after each one (GEARC_DEBUG builds), prints the graph
 * after o->dump_after, reports progress.  Errors name the pass's node or
 * graph; the caller names the model. */
int run_passes(Model *m, const PassOptions *o);
/* The pass called name, or NULL. */
const Pass *pass_find(const char *name);
/* --dump-after=PASS[,PASS...]: NULL if every name is a pass, else the
 * first that is not (a static buffer). */
const char *dump_after_check(const char *list);
/* "hybrid, gear-scope, ..." for help texts. */
const char *pass_names(void);

/* ---- batch rows (passes/batchrows.c) ------------------------------------- */

/* For a gear compile whose inputs have a gear dim at axis 0: whether
 * every output row depends on its own batch index's input rows alone
 * (m->batch_rows), so that a run may pad the batch to a larger gear. */
int pass_batch_rows(Model *m, const PassOptions *o);

/* ---- precision (passes/precision.c) -------------------------------------- */

/* Marks the nodes of g (and its subgraphs) that may compute in
 * o->precision's reduced dtype (Node.reduced). */
int pass_precision(Model *m, Graph *g, const PassOptions *o);

/* ---- gear compilation (passes/gear.c) ------------------------------------ */

/* Root multi-batch clone: m->graph becomes the root (gear inputs at their
 * max shape, gear_dims, gear table, MapIndex, Case) with one branch per
 * gear, each with its inputs at the gear's exact shapes.  No-op for a
 * static compile, or when gear-scope made scopes (Model.gear_outputs). */
int pass_gear_clone(Model *m, const PassOptions *o);
/* The nodes pass_gear_clone adds to the root: MapIndex and Case. */
enum { GEAR_ROOT_NODES = 2 };
/* The branches alone, from m->graph (the model's), unless m->branches
 * exist: gear-scope (passes/scope.h) infers them to find its scopes, and
 * keeps them for the root clone when it makes none. */
void gear_branches(Model *m, const PassOptions *o);
/* Runs fn on every graph compiled on its own: each gear branch and the
 * dynamic graph of a --hybrid compile (one more job, last), on o->jobs
 * threads (0: the number of cores), or the main graph of a static
 * compile.  On failure the error names the first failing gear (or the
 * dynamic graph). */
int for_each_gear_graph(Model *m, GraphPassFn fn, const PassOptions *o);
/* Infers the root graph once the branches are specialised: the Case's
 * outputs take the branches' shapes, -1 where gears differ. */
int pass_gear_root(Model *m, const PassOptions *o);

/* passes/print.c: prints g (and its subgraphs, indented) as text: one line per node with
 * its inputs, outputs, dtypes and shapes. */
void graph_print(FILE *f, const Graph *g, int indent);

/* Replaces every If of g whose condition is constant by the nodes of its
 * taken branch, recursively and in every subgraph (passes/inline.c).
 * Runs after inference; the If's output ids stay valid. */
int graph_inline(Graph *g);
/* Turns nodes of g whose outputs are all known into weights, removes
 * nodes whose outputs nothing uses and drops the values nothing refers
 * to, in g and its subgraphs (passes/dce.c).  Runs after inlining.  Value
 * ids are renumbered consistently; *remap (if remap is given) receives
 * the old -> new map (malloc'd). */
int graph_dce(Graph *g, ValId **remap);

/* Which source values a fusion left inside which node (Node.fused;
 * passes/absorb.c): absorb_begin() before a round of rewrites, then
 * graph_dce(g, &map) and absorb_end(), which frees what absorb_begin
 * made.  absorb_prune() drops from g's lists the names g still has a
 * value of (for a rewrite that named what it took in itself). */
typedef struct Absorb Absorb;
Absorb *absorb_begin(const Graph *g);
void absorb_end(Absorb *a, Graph *g, const ValId *map);
void absorb_prune(Graph *g);

/* The pass "specialise", and what a scope does to each clone and to its
 * root (passes/scope.h): infer_graph, graph_inline, graph_dce on g, once
 * (Graph.specialised: SPEC_DONE; SPEC_INFERRED if gear-scope inferred it
 * already).  On m->graph it renumbers the gear spec's input ids with the
 * graph's. */
enum { SPEC_INFERRED = 1, SPEC_DONE };
int specialise(Model *m, Graph *g);
/* specialise as a GraphPassFn, for the pass table and
 * for_each_gear_graph: what it does depends on no option (the fold limit
 * is m->fold_limit, which run_passes sets). */
int pass_specialise(Model *m, Graph *g, const PassOptions *o);

/* Widens a float16 model to float32 inside, keeping its float16 inputs
 * and outputs with a Cast at each (passes/widen.c).  Runs first, so the
 * gears share the widened weights; no-op with o->keep_fp16 or when the
 * model has no float16. */
int pass_widen_fp16(Model *m, const PassOptions *o);
/* Whether it has anything to do: float16 somewhere. */
bool widen_applies(const Model *m, const PassOptions *o);
/* --keep-fp16, after fuse: each float32 value of g that m->half_values
 * names is rounded to float16 where it is made (passes/widen.c). */
int keep_fp16_round(Model *m, Graph *g, const PassOptions *o);

/* Folds BatchNormalization into the Conv/ConvTranspose/Gemm before it
 * and fuses residual Adds, biases and activation chains into FusedConv,
 * FusedGemm and FusedMatMul in every static graph but the dynamic one
 * (passes/fuse.c).  Runs after specialise; no-op with o->no_fuse. */
int pass_fuse(Model *m, const PassOptions *o);
/* passes/attn.c: attention as exporters write it (MatMul, scale, causal
 * Where, mask Add, Softmax, MatMul, with the head Transposes around)
 * into Sdpa, in g (the fuse pass's step before its anchors; graph_dce()
 * after it); opset is the model's.  Returns how many it rewrote. */
int attn_fuse_graph(Graph *g, int64_t opset);
/* passes/qfuse.c: dynamic int8 chains of g into DynQuantMatMul and
 * DynQuantConv (the fuse pass's first step; graph_dce() after it). */
void qfuse_graph(Graph *g);
/* passes/qfuse.c: static QDQ groups (DequantizeLinear -> Conv/MatMul
 * [-> Relu] -> QuantizeLinear) into QLinearConv and QLinearMatMul, before
 * specialise folds the weights' DequantizeLinear; no-op with o->no_fuse. */
int pass_qdq(Model *m, const PassOptions *o);
/* Whether it has anything to do: a QuantizeLinear, no --no-fuse. */
bool qdq_applies(const Model *m, const PassOptions *o);

/* The memory plan of every static graph, then of the root of a gear
 * compile (passes/memplan.h). */
int pass_memplan(Model *m, const PassOptions *o);

#endif
