/*
 * passes/memplan.h - the static memory plan of every static graph
 * (as GE's static executor plans one feature-map arena per graph ahead of
 * time, so a run allocates nothing).
 *
 * For a graph g the plan gives an execution order (g's node order, which
 * is topological), and for every intermediate tensor a block of one
 * feature-map arena: offset, size (its bytes rounded up to 64) and
 * lifetime [first, last] in steps of the order, such that no two buffers
 * live at the same step overlap.
 *
 * What is in the arena.  A tensor produced by a node of g whose shape is
 * static, that is a plain tensor (not a sequence, optional, map or
 * string), has no known contents (konst: folded constants live with the
 * weights) and is not one of g's outputs.  Not in the arena: g's inputs
 * and outputs (bound by the caller; for a subgraph, by the node running
 * it), weights and constants, outer references (they live in the parent).
 * A node output with a shape that is not static (data-dependent, unknown)
 * or that is not a plain tensor is left out and counted in
 * MemPlan.unplanned: the runtime allocates it.
 *
 * Lifetimes.  first is the producer's step; last the step of the last
 * node using it, a use inside a subgraph (an outer reference, at any
 * depth) counting as a use by the node that owns the subgraph; a tensor
 * nobody uses lives at its producer's step only.  Nodes whose outputs
 * were all folded still count as uses (the plan never assumes a node is
 * skipped).
 *
 * Sharing buffers (union of lifetimes, one block owns the buffer):
 *   views     output 0 of an op with op_info[op].view == VIEW_ALIAS
 *             (Reshape, Flatten, Squeeze, Unsqueeze, Identity) shares the
 *             buffer of input 0; a view of a view shares the first one's.
 *             A view of something not in the arena (a graph input, a
 *             weight) is not in the arena either; a view that is a graph
 *             output is caller-bound and its input keeps its own buffer.
 *   in place  an elementwise op (memplan_inplace_ok) writes its output
 *             over input k when that input's buffer dies at this node,
 *             input k has the output's dtype and shape exactly, and no
 *             other input of the node reads the same buffer; so does a
 *             Scatter over its data (INPLACE_DATA) when no other input
 *             reads that buffer, not even as the same tensor.
 * A sharing block has alias_of = the tensor owning the buffer, the same
 * offset, its own size and lifetime; the owner's block spans the union of
 * the lifetimes of everything sharing it.
 *
 * Subgraphs.  Each If/Loop/Scan subgraph gets a plan of its own; the node
 * running it gets a workspace block (tensor -1) as large as the largest of
 * its subgraphs' arenas, live at its step.  The gear branches of the
 * root's Case are not workspaces: they are static graphs planned on their
 * own, and the model's arena is the largest branch arena plus the root's.
 * A Case inside a subgraph (the clones of a multi-dims scope,
 * passes/scope.h) is planned like an If: its branches are its subgraphs,
 * its workspace the largest of their arenas.
 *
 * Placement.  Greedy over the buffers in an ordering, each at the offset
 * that fits best among the already placed buffers whose lifetimes overlap
 * its own (TFLite's ArenaPlanner, XNNPACK's memory planner); orderings by
 * size, by first use, by lifetime length and by size x length, each with
 * best fit and lowest fit, stopping at the first that reaches the lower
 * bound; the smallest arena wins.  If it is still above the bound, a local
 * search moves the buffer at the arena's top earlier in the winning
 * ordering (a run of neighbour swaps; positions from a fixed-seed
 * generator) and keeps every ordering that is no worse, for a fixed
 * amount of work (never wall-clock), so the plan depends only on the
 * graph.  Placed buffers are indexed by slices of steps, so placing one
 * looks only at the buffers live near it: about linear in the graph for
 * the short lifetimes of real networks, quadratic at worst.  So the
 * whole placement has a budget of work, a fixed part and so much per
 * buffer and step: an ordering that would exceed it is abandoned.  The
 * ordering by first use never is: in that order the placed buffers that
 * overlap a new one are the ones live at its first step, so a sweep over
 * the steps keeping the live buffers by offset and the gaps between them
 * by size (compiler/ordset.h) places each in O(log n), with the offsets
 * the greedy rule gives.  Every graph plans in O(n log n) in its buffers
 * (200,000 tensors live at once: well under a second), and the real
 * networks of the test suite never reach the budget, so their plans are
 * the greedy's best.
 *
 * lower_bound_bytes is the largest total of block sizes live at one step,
 * after sharing; naive_bytes is the total as if every block had its own
 * buffer.
 */
#ifndef GEARC_MEMPLAN_H
#define GEARC_MEMPLAN_H

#include "passes.h"

#define MEM_ALIGN 64

/* A buffer to place: size bytes live during steps [first, last]. */
typedef struct MemInterval {
	uint64_t size;
	int32_t first, last;
} MemInterval;

/* Places n buffers: offsets[i] for each, multiples of MEM_ALIGN if the
 * sizes are; returns the arena size (the largest offset + size). */
uint64_t mem_place(const MemInterval *iv, int32_t n, uint64_t *offsets);
/* One greedy pass alone (mem_place tries them all, then searches):
 * ordering MEM_BY_*, best fit or lowest fit; without mem_place's budget
 * (quadratic at worst but for MEM_BY_FIRST, which sweeps). */
enum { MEM_BY_SIZE, MEM_BY_FIRST, MEM_BY_LENGTH, MEM_BY_AREA, MEM_ORDERINGS };
uint64_t mem_place_greedy(const MemInterval *iv, int32_t n, int ordering,
			  bool best_fit, uint64_t *offsets);
/* The largest total size of the buffers live at one step. */
uint64_t mem_lower_bound(const MemInterval *iv, int32_t n);

/* x rounded up to MEM_ALIGN; UINT64_MAX if that overflows. */
uint64_t mem_align(uint64_t x);

/* Whether op may write its output over input k (an elementwise op whose
 * output element i depends on element i of that input only): the inplace
 * column of the op table (compiler/ops.h). */
bool memplan_inplace_ok(int op, int k);

/* Plans g and its subgraphs (not the branches of a Case) into g->plan,
 * allocated from g->arena.  Returns 0, or -1 with an error naming the
 * graph. */
int memplan_graph(Model *m, Graph *g, const PassOptions *o);
/* The pass: every static graph (each gear branch, on threads), then the
 * root of a gear compile. */
int pass_memplan(Model *m, const PassOptions *o);

#endif
