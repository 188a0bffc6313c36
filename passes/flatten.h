/*
 * passes/flatten.h - one gear of a compiled model as one plain ONNX graph,
 * for `gearc export`.
 *
 * gear_flatten() takes a Model raised from a .om (serializer/raise.h) and
 * builds, in the Model's arena, the graph gear `gear` runs, with nothing
 * of gearc's own left in it:
 *   - a gear compile: the gear's branch (Batch_K), not the root's
 *     MapIndex and Case;
 *   - a --gear_scope compile: the root graph, each multi-dims scope's
 *     PartitionedCall replaced by the nodes of the clone its gear_map
 *     gives this gear (its body's Shape, Concat, MapIndex and Case go);
 *   - a static compile: the main graph (gear 0);
 *   - every partition (PartitionedCall with a "partition" attribute,
 *     passes/partition.h) replaced by the nodes of its subgraph.
 * Subgraphs of If, Loop and Scan are copied with their outer references
 * re-pointed.  A weight read in several places (the partitions of one
 * gear share Tensors) becomes one weight value.  The graph inputs take
 * the given shapes (shapes[i] for input i; NULL: as they are), then the
 * graph is inferred, Ifs on constants inlined and dead nodes dropped as in
 * a compile, so what the gear computes is folded into weights.  Every
 * graph output keeps the name it has in the model; an output that would
 * be an input, a weight or another output is given by an Identity.
 * Then, as ONNX Runtime wants it:
 *   - a Fail node of an If branch (the branch is invalid at these shapes,
 *     compiler/ops/control.c) becomes standard ONNX that fails if the
 *     branch is taken (unfuse_fail below); a Fail anywhere else is an
 *     error (the gear could only fail);
 *   - each subgraph output that is not a node output of its subgraph (a
 *     body input, an outer value, or a weight: weights are written as
 *     initializers of the main graph) or that is an earlier output too is
 *     given by an Identity inside the subgraph.
 *
 * Returns the graph (parent NULL, named like the model's main graph) or
 * NULL with an error naming the node that could not be lowered.
 */
#ifndef GEARC_FLATTEN_H
#define GEARC_FLATTEN_H

#include "passes.h"

/* The graph gear runs as it stands in m (before flattening): the branch,
 * or the root of a scope or static compile; NULL if gear is out of
 * range. */
const Graph *gear_source_graph(const Model *m, int32_t gear);
/* Gear count of m: its gear table's, 1 for a static compile. */
int32_t gear_count(const Model *m);

Graph *gear_flatten(Model *m, int32_t gear, const Shape *const *shapes);

/* The same for any graph src of m whose calls are partitions (not
 * scopes), for the runtime's specialisations (runtime/hybrid.c): the
 * result is built in arena a and nothing is written to m or src, so
 * sessions on several threads may call it on one model at once.  Fused
 * nodes stay fused (the runtime runs them).  values[i] (values NULL, or
 * an entry NULL: none) fixes input i's contents: the input stays, but
 * inference folds what depends on it as on a constant, so an If on it
 * keeps one branch; the caller must run the graph on those contents
 * only. */
Graph *graph_flatten(Model *m, const Graph *src, Arena *a,
		     const Shape *const *shapes, const Tensor *const *values);

/* passes/unfuse.c: whether n is FusedConv, FusedGemm or FusedMatMul, or
 * a LayerNormalization before opset 17 (fuse.c makes them in any); and n
 * (its inputs ins[], already values of dst) appended to dst as standard
 * ONNX nodes for opset, the last writing out. */
bool unfuse_is_fused(const Node *n, int64_t opset);
int unfuse_node(Graph *dst, const Node *n, int64_t opset, const ValId *ins,
		ValId out);
/* passes/unfuse.c: activation kind (compiler/act.h) of x as standard
 * ONNX for opset appended to dst, its op or its written-out form; the
 * result in *res, which is out when last. */
int unfuse_act(Graph *dst, const char *name, int64_t opset, int kind,
	       float alpha, float beta, ValId x, ValId *res, bool last,
	       ValId out);
/* passes/unfuse.c: node at of b, a Fail (an If branch invalid at the
 * compiled shapes), replaced by standard ONNX nodes that fail at run time
 * and otherwise write its outputs (same values, dtypes and shapes); cond
 * is the If's condition as a value of b, a run-time value whatever the
 * branch: it keeps every runtime from computing the failure at load.  The
 * Reshape that fails takes the Fail's name. */
int unfuse_fail(Graph *b, int32_t at, ValId cond, int64_t opset);

#endif
