/*
 * passes/hybrid.h - hybrid compile mode (hybrid.c) and its symbolic dims
 * (symbols.c, whose entry points are declared here): the gears, plus the model as one dynamic-shape graph for
 * every input shape that matches no gear.
 *
 * --hybrid (or --compile_hybrid_mode=1) needs a gear option.  The gear
 * compile is unchanged: root, MapIndex, Case, one static branch per gear,
 * each branch's serialized graph byte for byte what a compile without
 * --hybrid writes.  Besides it:
 *
 *   hybrid       (model pass, before gear-clone) clones the model's graph
 *                into its own arena as the dynamic graph "Dynamic": the
 *                gear inputs keep --input_shape's dims with -1 at the gear
 *                dims, each named by a symbol: the model's dim_param for
 *                that axis if it has one, else "s<k>", k the position of
 *                the -1 in a gear row (the order --dynamic_dims lists the
 *                values in).  Node names get "_dynamic", labels "Dynamic".
 *   specialise   runs on it as one more job of the pool the gear branches
 *                run on (for_each_gear_graph), so it compiles
 *                concurrently with them; shapes stay -1 where they depend
 *                on the gear dims.
 *   symbols      (per graph; only the dynamic graph) names the unknown
 *                dims: see "Symbolic dims" below.
 *   partition    (per graph) splits it into known/unknown partitions
 *                (passes/partition.h), like any graph with unknown nodes.
 *   hybrid-root  (model pass, before gear-root) hangs it off the root's
 *                Case node: GRAPH attribute dynamic_graph, and STRING
 *                attribute hybrid_rule, the rule the runtime applies (GE's
 *                SelectExecuteGraph):
 *                  "gear if the input dims match a row of the gear table,
 *                   else dynamic_graph"
 *                i.e. the runtime takes the gear dims of the inputs (the
 *                values at the -1s of --input_shape, in gear-table order);
 *                if MapIndex finds that row, Case runs that gear's branch,
 *                otherwise it runs dynamic_graph on the inputs as they
 *                are.  The Case's outputs (and so the model's) take the
 *                dynamic graph's shapes into account: -1 where any differs.
 *   memplan      plans it like the branches: tensors of static shape
 *                passed between its partitions, and its known partitions.
 *
 * The .om holds the dynamic graph after the gear branches (graphs are
 * numbered depth first, and dynamic_graph is the Case's last attribute),
 * so the branches' graph and weight indices do not move.  The root's
 * inputs keep their max-gear shapes (the gear path's buffers); an input
 * of any other shape goes to the dynamic graph as it is.  A failure to
 * compile the dynamic graph fails the compile, naming it.
 *
 * Symbolic dims (passes/symbols.c).  After dce, one walk over the dynamic
 * graph in node order gives every dim an expression
 *     a constant, or floor((m*S + a) / d) of one symbol S (d >= 1), or
 *     unknown,
 * from its inputs' expressions, for the ops whose shape arithmetic is
 * plain: elementwise ops (broadcasting), Conv/ConvTranspose/pools
 * (floor((S + pads - dilation*(k-1) - 1) / stride) + 1, which composes:
 * three stride-2 3x3 convs make (W+7)/8), Transpose, MatMul/Gemm,
 * reductions, Concat, Flatten, Squeeze/Unsqueeze, Gather/Slice on data,
 * Shape, Reshape, Expand, ...  It also tracks the contents of small
 * integer tensors (shape arithmetic: Shape -> Gather -> Mul -> Unsqueeze
 * -> Concat -> Reshape), so a Reshape whose target is computed from
 * shapes gets its dims, as onnx's data propagation does.  An op without a
 * rule keeps what shape inference gave it.  The walk then writes back:
 *   - a dim inference left -1 that the walk knows as a constant becomes
 *     that constant (only ever -1 -> n; never a changed known dim);
 *   - a dim the walk knows as an expression stays -1 and gets the
 *     expression as its dim_param ("W", "(W+7)/8", "2*W"; '/' is floor
 *     division);
 *   - a value whose dims are all known or named this way loses its
 *     data-dependent mark (its shape follows from the inputs' shapes).
 * Anything else stays -1 with no name.  `gearc verify` re-runs inference
 * and this walk on the dynamic graph and compares.
 * Assumed: a slice of a named dim from start s reaches s (it is not
 * clamped to 0).  Not done: If/Loop bodies are not walked; and since
 * inference folds shape arithmetic only on static shapes, an If on a shape
 * comparison stays an If in the dynamic graph even where the walk knows
 * the compared dims (vad.onnx's chunk-length If with a dynamic batch), so
 * what it makes is unknown.
 */
#ifndef GEARC_HYBRID_H
#define GEARC_HYBRID_H

#include "passes.h"

#define HYBRID_GRAPH_NAME "Dynamic"
#define HYBRID_RULE \
	"gear if the input dims match a row of the gear table, else " \
	"dynamic_graph"

/* The model pass before gear-clone: builds m->dynamic (no-op unless
 * o->hybrid). */
int pass_hybrid(Model *m, const PassOptions *o);
/* The model pass before gear-root: attaches m->dynamic to the Case. */
int pass_hybrid_root(Model *m, const PassOptions *o);

/* The per-graph pass: hybrid_symbols(g) when g is m->dynamic. */
int symbols_one(Model *m, Graph *g, const PassOptions *o);
/* The symbolic walk over g (its partitions included, if it has any),
 * with the rules of the given default-domain opset. */
void hybrid_symbols(Graph *g, int64_t opset);
/* model_opset(m), or the newest opset gearc knows if the model names
 * none (as shape inference does). */
int64_t hybrid_opset(const Model *m);

/* The dynamic graph hung off a Case node of g (g's first such), or NULL. */
Graph *hybrid_graph(const Graph *root);

#endif
