/*
 * passes/partition.h - dynamic/static graph partition (GE's
 * DynamicShapePartitioner).
 *
 * A graph that still has nodes of unknown shape once it is specialised
 * (the dynamic graph of a --hybrid compile; a gear branch or a static
 * graph with data-dependent ops such as NonZero or NonMaxSuppression) is
 * split into partitions: known-shape ones, which get a static memory plan
 * like any static graph, and unknown-shape ones, which the runtime runs
 * dynamically.  A graph with no unknown node is left exactly as it is.
 *
 * Unknown nodes (GE's further rules are about Ascend engines and have no
 * counterpart here).  A node is unknown if
 *   - one of its inputs or outputs has an unknown rank or a -1 dim, or is
 *     marked data-dependent (VF_DATA_DEP);
 *   - it has the INT attribute _force_unknown_shape != 0;
 *   - it runs subgraphs (If, Loop, Scan, ...) holding a value of unknown
 *     shape or a forced node, at any depth.
 * Sequences count by their element shape, as elsewhere in gearc.
 *
 * Clusters.  Every node starts as its own cluster;
 * clusters are linked by data dependencies (inputs, and values a node's
 * subgraphs read from the graph).  Then, in this order:
 *   1. unknown absorption: for every pair of unknown clusters A, B with a
 *      path A ~> B, A, B and every cluster on a path between them merge
 *      into one unknown cluster (the dynamic chain stays whole);
 *   2. known merge: walking the nodes in order, a known cluster merges
 *      with a known cluster feeding it when the direct edge is the only
 *      path between them (otherwise merging would make a cycle; checked by
 *      reachability over the cluster graph, pruned by node positions);
 *   3. small-cluster downgrade: a known cluster of fewer than `limit`
 *      nodes (--static_model_ops_lower_limit, default 4) becomes unknown;
 *      then unknown clusters merge with an unknown neighbour by rule 2's
 *      test (a single path), so a downgraded fragment joins the dynamic
 *      part next to it instead of standing alone.  Known clusters are
 *      never absorbed at this step.
 * limit 0 downgrades nothing; limit -1 makes the whole graph one unknown
 * partition ("everything dynamic").  Every merge joins a set closed under
 * paths, so the cluster graph stays acyclic; clusters are then ordered
 * topologically (ties: the one whose first node comes first).
 * Rules 4 and 5 of 5.2.2 (control-flow groups, RefVariables) have no
 * counterpart in ONNX graphs.
 * Cost: rule 1 is two sweeps and a union-find; the single-path test
 * searches from both ends and stops when the smaller side runs dry, so a
 * 100000-node graph partitions in about 0.1 s.
 *
 * Wrapping (GE's BuildPartitionFrame .. BuildPartitionSubgraph).
 * Each cluster becomes one node of the graph:
 *
 *   PartitionedCall (domain ai.gearc)
 *     inputs   the values its nodes read from outside it (graph inputs,
 *              other partitions' outputs), in first-use order
 *     outputs  the values it makes that another partition reads or that
 *              are graph outputs, in the order they are made
 *     f        GRAPH: the partition subgraph "<graph>_p<k>_<kind>", a
 *              child of the graph; its inputs and outputs bind the node's
 *              positionally (GE's InnerData / InnerNetOutput); weights it
 *              reads are its own weight values (the same Tensors)
 *     partition STRING "known" or "unknown"
 *
 * The node keeps the label of the graph's nodes ("Batch_3").  The graph
 * keeps its inputs and outputs (same names, same order); its other values
 * are the ones passed between partitions, renumbered in their old order.
 * Nodes move with their attributes; subgraphs below them are re-parented
 * and their outer references re-pointed.
 *
 * Memory.  The memory planner (passes/memplan.c) plans a known
 * partition's subgraph like an If body (its arena is the node's
 * workspace) and the tensors passed between partitions in the graph's own
 * arena when their shapes are static.  An unknown partition is marked for
 * dynamic execution: partition = "unknown", no plan, no workspace.
 */
#ifndef GEARC_PARTITION_H
#define GEARC_PARTITION_H

#include "passes.h"

#define PARTITION_LIMIT_DEFAULT 4
#define FORCE_UNKNOWN_ATTR "_force_unknown_shape"

/* The limit the options ask for: --static_model_ops_lower_limit, or
 * PARTITION_LIMIT_DEFAULT when it was not given. */
int32_t partition_limit(const PassOptions *o);

/* Whether node n of g is unknown by the rules above. */
bool partition_node_unknown(const Graph *g, const Node *n);

/* The clusters of g, before wrapping (for tests and dump figures). */
typedef struct Clusters {
	int32_t nnodes, nclusters;
	int32_t *of;	/* per node: its cluster, 0..nclusters-1 */
	bool *unknown;	/* per cluster */
	int32_t *size;	/* per cluster: its node count */
	int32_t *first; /* per cluster: its first node */
} Clusters;

/* Clusters g's nodes by rules 1-3 with the given limit (>= -1), whether
 * or not g has an unknown node; clusters are numbered in their
 * topological order.  g must be valid and sorted. */
void partition_cluster(const Graph *g, int32_t limit, Clusters *c);
void clusters_release(Clusters *c);

/* Partitions g if it has an unknown node: clusters it and wraps every
 * cluster in a PartitionedCall.  Returns the number of partitions made
 * (0: g had no unknown node and is unchanged).  Allocates from g->arena
 * only, so gear branches can be partitioned on their own threads. */
int32_t graph_partition(Graph *g, int32_t limit);

/* n is a partition node (a PartitionedCall with a "partition" attribute),
 * and which kind. */
bool partition_is_node(const Node *n);
bool partition_is_unknown(const Node *n);
/* The subgraph of partition node n, or NULL. */
Graph *partition_subgraph(const Node *n);

/* The per-graph pass: graph_partition(g, partition_limit(o)). */
int partition_one(Model *m, Graph *g, const PassOptions *o);

#endif
