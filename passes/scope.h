/*
 * passes/scope.h - scope subgraphs and subgraph multi-dims cloning: clone
 * only what depends on the gear (GE's CreateSubGraphWithScopePass and
 * SubgraphMultiDimsClonePass: the gear-independent nodes run once, in
 * the root, instead of once per gear branch).
 *
 * Without --gear_scope nothing here runs: the root multi-batch clone
 * (passes/gear.c) gives one whole-graph branch per gear.  With it, the
 * pass "gear-scope" (before "gear-clone", which then has nothing to do)
 * turns the model into:
 *
 *   root (the model's graph, compiled once): the model's inputs with -1
 *       at the gear dims that differ across gears (the dims every gear
 *       agrees on are static; no gear_dims input), every node that is not
 *       in a scope, and one node per scope:
 *   PartitionedCall (domain ai.gearc) "scope_N", attributes
 *       body       the scope's graph (below)
 *       multi_dims 1
 *       gear_map   ints, one per model gear: the clone that gear runs
 *       scope      "auto" or the prefixes whose nodes it holds
 *     inputs: the values the scope reads from outside; outputs: the values
 *     it makes that the rest of the graph or the model's outputs read.
 *   body "scope_N": Shape of each selector input -> Concat(axis 0)
 *       -> MapIndex(dims, table "scope_N_table") -> Case(branch, inputs...)
 *       with attributes branches (the clones), gear_count (clones),
 *       gear_dims (the table, row-major), input_order (the selector
 *       inputs), dynamic_type "dims".  The selector inputs are the scope's
 *       inputs whose shapes differ across gears (its first input if none
 *       does); the table holds one row per distinct combination of their
 *       shapes that the model's gears produce, in order of the first gear
 *       giving it.
 *   clones "scope_N_dims_K": the scope's nodes with their inputs at
 *       combination K's exact shapes, specialised like a gear branch
 *       (inferred, folded, If inlined, dead nodes removed); node names get
 *       "_dims_K", every node the label "scope_N_dims_K".
 *
 * Finding the scopes.  The full clone's branches are first made from the
 * model's graph (gear_branches, passes/gear.c) and inferred, on -j
 * threads, and every value of the model's graph is classified by what
 * the gears give it:
 *   const      contents known and identical in every gear (shape
 *              arithmetic on gear-invariant dims): a constant of the
 *              compiled model, since it only ever runs at its gears.  A
 *              node all of whose outputs are const is dropped and its
 *              outputs become weights wherever they are read, so const
 *              values never cross a scope's boundary.
 *   invariant  same dtype and shape in every gear, contents not known.
 *   varying    anything else: the shape differs, or the contents do.
 *   --gear_scope=PREFIX[,PREFIX...]: the (non-const) nodes of the model's
 *       graph whose names start with a prefix are marked; every prefix
 *       must match a node.  Producers of varying contents a marked node
 *       reads from outside (shape arithmetic on gear dims) are marked too,
 *       since a clone is chosen by shapes alone.  Then each connected set
 *       of marked nodes is one scope, which is refused (exit 1, naming the
 *       node) if one of its nodes reads a graph input or writes a graph
 *       output directly (the model's inputs and outputs stay in the root,
 *       bound there by the runtime; use auto for a scope that starts at
 *       the inputs), or if a node outside it both reads from it and feeds
 *       it (the scope would be in a cycle).
 *   --gear_scope=auto: a node is marked if it reads or writes a varying
 *       value, plus every node on a path between two marked nodes, so the
 *       marked set is convex (no cycle can form) and every value crossing
 *       its boundary is the same in every gear, except the model's
 *       outputs: e.g. under --dynamic_image_size the backbone and the
 *       global pooling are cloned, the classifier head after the pooling
 *       stays in the root, compiled once with static shapes.  Each
 *       connected part of the marked set is one scope.  If the result does
 *       not have fewer nodes than the full clone, the full clone is kept
 *       (dump shows "applied": false).
 *
 * Nodes whose outputs nothing live reads are left out of everything.
 * Values in the root take the shapes shape inference gives from its
 * inputs: a scope's outputs the same in every clone are static, the others
 * -1, and with explicit prefixes the nodes left outside that depend on the
 * gear keep -1 dims (their tensors are then not in the memory plan; the
 * runtime allocates them).  The per-gear output table comes from the
 * per-gear inference (Model.gear_outputs, and Model.merged_outputs the
 * .om's output list: -1 where the gears differ); a gear has no branch
 * graph of its own (Gear.graph -1).  Inputs must match one of the gears,
 * as with the full clone: a scope whose selector shapes match no row
 * fails in its MapIndex.
 *
 * Memory: the root graph is planned; a PartitionedCall's workspace holds
 * its body's arena, and the body's Case a workspace as large as its
 * largest clone's arena (passes/memplan.h).  Every clone has a plan of its
 * own.
 *
 * Everything after the per-gear inference (on -j threads, each gear in
 * its own arena) runs on one thread, the clones specialised one after
 * another, and depends only on the model and the options, so the output
 * does not depend on -j.
 */
#ifndef GEARC_SCOPE_H
#define GEARC_SCOPE_H

#include "passes.h"

/* The pass: no-op without o->gear_scope; an error without gears.  Records
 * the option in Model.options as "gear_scope". */
int pass_gear_scope(Model *m, const PassOptions *o);

/* Checks --gear_scope's value alone (usage errors): "auto", or prefixes
 * separated by ',', none empty, none twice, not mixed with "auto". */
int gear_scope_check(const char *spec);

/* n is a multi-dims scope's PartitionedCall: every gear runs one static
 * clone of its body, so it is a known-shape node whatever its -1 dims. */
bool scope_is_call(const Node *n);

#endif
