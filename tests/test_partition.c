/* tests/test_partition.c - the dynamic/static partition (passes/partition.h):
 * each merge rule (unknown absorption, known merge, small-cluster
 * downgrade: partition.h) on hand-built graphs, the
 * cycle check, the small-cluster downgrade, the PartitionedCall wrapping,
 * and the detector whose backbone must be one known partition. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testrun.h"
#include "testutil.h"

#include "cli/cli.h"
#include "compiler/onnx.h"
#include "passes/memplan.h"
#include "passes/partition.h"
#include "serializer/om.h"

#define DET_NMS "tests/fixtures/det_nms.onnx"

/* ---- hand-built graphs -------------------------------------------------- */

/* K nodes are Relus on [2,3] floats; U nodes the same with
 * _force_unknown_shape, so their outputs stay static and whatever reads
 * them is known: the merge rules alone decide. */
typedef struct T {
	Model *m;
	Graph *g;
	ValId x;
} T;

static T build(void)
{
	T t = { .m = tu_model(13) };
	t.g = t.m->graph;
	t.x = tu_input(t.g, "x", DT_FLOAT, SHAPE(2, 3));
	return t;
}

static void force(T *t, Node *n, bool unknown)
{
	if (unknown)
		tu_int(t->g, n, FORCE_UNKNOWN_ATTR, 1);
}

static ValId K(T *t, const char *name, ValId a)
{
	return tu_out(tu_node(t->g, "Relu", name, IDS(a), 1), 0);
}

static ValId U(T *t, const char *name, ValId a)
{
	Node *n = tu_node(t->g, "Relu", name, IDS(a), 1);
	force(t, n, true);
	return tu_out(n, 0);
}

static ValId add(T *t, const char *name, ValId a, ValId b, bool unknown)
{
	Node *n = tu_node(t->g, "Add", name, IDS(a, b), 1);
	force(t, n, unknown);
	return tu_out(n, 0);
}

static void output(T *t, ValId v)
{
	Graph *g = t->g;
	g->outputs = arena_grow(g->arena, g->outputs, (size_t)g->noutputs,
				(size_t)g->noutputs + 1, sizeof(ValId));
	g->outputs[g->noutputs++] = v;
	g->vals[v].flags |= VF_GRAPH_OUT;
}

static void infer(T *t)
{
	cr_assert_eq(infer_graph(t->m, t->g), 0, "%s", last_error());
	cr_assert_eq(graph_verify(t->g), 0, "%s", last_error());
}

static int32_t node_index(const Graph *g, const char *name)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i].name, name))
			return i;
	cr_assert_fail("no node '%s'", name);
	return -1;
}

static Clusters cluster(T *t, int32_t limit)
{
	Clusters c;
	infer(t);
	partition_cluster(t->g, limit, &c);
	cr_assert_eq(c.nnodes, t->g->nnodes);
	return c;
}

/* The named nodes are exactly one cluster, of the given kind. */
static void expect_cluster(const Graph *g, const Clusters *c, bool unknown,
			   const char *const *names)
{
	int32_t k = c->of[node_index(g, names[0])], n = 0;
	for (; names[n]; n++)
		cr_expect_eq(c->of[node_index(g, names[n])], k,
			     "'%s' is not with '%s'", names[n], names[0]);
	cr_expect_eq(c->size[k], n, "the cluster of '%s' has %d nodes, not %d",
		     names[0], c->size[k], n);
	cr_expect_eq(c->unknown[k], unknown, "the cluster of '%s' is %s",
		     names[0], c->unknown[k] ? "unknown" : "known");
}

#define CLUSTER(g, c, unk, ...) \
	expect_cluster((g), (c), (unk), (const char *const[]){ __VA_ARGS__, NULL })

/* Cluster numbers follow a topological order of the cluster graph. */
static void expect_topological(const Graph *g, const Clusters *c)
{
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		for (int32_t k = 0; k < n->ninputs; k++) {
			int32_t p = n->inputs[k] >= 0
					    ? g->vals[n->inputs[k]].producer
					    : -1;
			if (p >= 0)
				cr_expect_leq(c->of[p], c->of[i],
					      "'%s' (cluster %d) feeds '%s' "
					      "(cluster %d)",
					      g->nodes[p].name, c->of[p], n->name,
					      c->of[i]);
		}
	}
}

/* ---- which nodes are unknown ---------------------------------------------- */

Test(partition, unknown_nodes)
{
	T t = build();
	ValId k = K(&t, "k", t.x);
	ValId u = U(&t, "u", k);
	Node *nz = tu_node(t.g, "NonZero", "nz", IDS(u), 1);
	ValId z = tu_out(nz, 0);
	ValId r = tu_out(tu_node(t.g, "Transpose", "after", IDS(z), 1), 0);
	ValId s = tu_out(tu_node(t.g, "Shape", "shape", IDS(r), 1), 0);
	output(&t, s);
	infer(&t);
	const Graph *g = t.g;
	cr_expect(!partition_node_unknown(g, &g->nodes[0]), "static Relu");
	cr_expect(partition_node_unknown(g, &g->nodes[1]), "forced");
	cr_expect(partition_node_unknown(g, &g->nodes[2]),
		  "NonZero: data-dependent output");
	cr_expect(partition_node_unknown(g, &g->nodes[3]), "-1 input and output");
	cr_expect(partition_node_unknown(g, &g->nodes[4]),
		  "Shape: static output, but its input is not");
	model_free(t.m);
}

/* An If whose branch holds something unknown is unknown (rule 6 of
 * 5.2.1); with static branches it is known. */
static Graph *branch(T *t, const char *name, bool unknown)
{
	Graph *b = graph_new(&t->m->arena, name, t->g);
	ValId o = graph_add_value(b, "x", VAL_OUTER);
	b->vals[o].outer = t->x;
	char nn[64];
	snprintf(nn, sizeof(nn), "%s/relu", name);
	Node *n = tu_node(b, "Relu", nn, IDS(o), 1);
	if (unknown)
		tu_int(b, n, FORCE_UNKNOWN_ATTR, 1);
	b->outputs = arena_array(b->arena, 1, sizeof(ValId));
	b->outputs[0] = tu_out(&b->nodes[0], 0);
	b->noutputs = 1;
	return b;
}

static Node *if_node(T *t, const char *name, ValId cond, bool unknown)
{
	char a[64], b[64];
	snprintf(a, sizeof(a), "%s.then", name);
	snprintf(b, sizeof(b), "%s.else", name);
	Graph *then = branch(t, a, unknown), *els = branch(t, b, false);
	Node *n = tu_node(t->g, "If", name, IDS(cond), 1);
	node_add_attr(t->g, n, "then_branch", ATTR_GRAPH)->g = then;
	node_add_attr(t->g, n, "else_branch", ATTR_GRAPH)->g = els;
	return n;
}

Test(partition, control_flow_with_unknown_inside_is_unknown)
{
	T t = build();
	ValId c = tu_input(t.g, "c", DT_BOOL, SCALAR);
	output(&t, tu_out(if_node(&t, "if_static", c, false), 0));
	output(&t, tu_out(if_node(&t, "if_dynamic", c, true), 0));
	infer(&t);
	cr_expect(!partition_node_unknown(t.g, &t.g->nodes[0]));
	cr_expect(partition_node_unknown(t.g, &t.g->nodes[1]));
	model_free(t.m);
}

/* ---- rule 1: unknown clusters absorb what lies between them ------------- */

Test(partition, unknown_absorbs_every_node_on_a_path_between_unknowns)
{
	/* x -> a -> u1 -> k1 -> k2 -> u2 -> b */
	T t = build();
	ValId a = K(&t, "a", t.x), u1 = U(&t, "u1", a);
	ValId k2 = K(&t, "k2", K(&t, "k1", u1));
	output(&t, K(&t, "b", U(&t, "u2", k2)));
	Clusters c = cluster(&t, 0);
	cr_expect_eq(c.nclusters, 3);
	CLUSTER(t.g, &c, false, "a");
	CLUSTER(t.g, &c, true, "u1", "k1", "k2", "u2");
	CLUSTER(t.g, &c, false, "b");
	cr_expect_eq(c.of[node_index(t.g, "a")], 0);
	cr_expect_eq(c.of[node_index(t.g, "u1")], 1);
	cr_expect_eq(c.of[node_index(t.g, "b")], 2);
	expect_topological(t.g, &c);
	clusters_release(&c);
	model_free(t.m);
}

Test(partition, unknown_absorbs_side_paths_but_not_off_path_nodes)
{
	/* u1 -> k1 ------------> u2 = Add(k1, k3)
	 * u1 -> k2 -> k3 ---------^
	 * u1 -> k4 -> k5 (an output; reaches no unknown)
	 * x  -> k6 -> u2' = Add(k6, u2) */
	T t = build();
	ValId u1 = U(&t, "u1", t.x);
	ValId k1 = K(&t, "k1", u1), k3 = K(&t, "k3", K(&t, "k2", u1));
	ValId u2 = add(&t, "u2", k1, k3, true);
	output(&t, K(&t, "k5", K(&t, "k4", u1)));
	output(&t, add(&t, "u3", K(&t, "k6", t.x), u2, true));
	Clusters c = cluster(&t, 0);
	CLUSTER(t.g, &c, true, "u1", "k1", "k2", "k3", "u2", "u3");
	CLUSTER(t.g, &c, false, "k4", "k5");
	CLUSTER(t.g, &c, false, "k6");
	cr_expect_eq(c.nclusters, 3);
	expect_topological(t.g, &c);
	clusters_release(&c);
	model_free(t.m);
}

Test(partition, unknowns_sharing_a_descendant_merge_and_feeders_stay_known)
{
	/* u1 -> k1 -> v = Add(k1, k2) <- k2 <- u2: u1 and u2 are unrelated
	 * but both reach v, so all five are one cluster; f -> k1 feeds the
	 * path but no unknown reaches f, so f stays known. */
	T t = build();
	ValId f = K(&t, "f", t.x);
	ValId k1 = add(&t, "k1", U(&t, "u1", t.x), f, false);
	ValId k2 = K(&t, "k2", U(&t, "u2", t.x));
	output(&t, add(&t, "v", k1, k2, true));
	Clusters c = cluster(&t, 0);
	cr_expect_eq(c.nclusters, 2);
	CLUSTER(t.g, &c, true, "u1", "k1", "u2", "k2", "v");
	CLUSTER(t.g, &c, false, "f");
	expect_topological(t.g, &c);
	clusters_release(&c);
	model_free(t.m);
}

Test(partition, unrelated_unknown_clusters_stay_apart)
{
	/* two unknown nodes with no path between them */
	T t = build();
	output(&t, U(&t, "u1", t.x));
	output(&t, U(&t, "u2", t.x));
	Clusters c = cluster(&t, 0);
	cr_expect_eq(c.nclusters, 2);
	CLUSTER(t.g, &c, true, "u1");
	CLUSTER(t.g, &c, true, "u2");
	clusters_release(&c);
	model_free(t.m);
}

/* ---- rule 2: known clusters merge along single paths ------------------- */

Test(partition, known_clusters_merge_along_a_chain_and_a_diamond)
{
	/* k1 -> k2 -> {k3, k4} -> k5 = Add(k3, k4) -> u */
	T t = build();
	ValId k2 = K(&t, "k2", K(&t, "k1", t.x));
	ValId k5 = add(&t, "k5", K(&t, "k3", k2), K(&t, "k4", k2), false);
	output(&t, U(&t, "u", k5));
	Clusters c = cluster(&t, 0);
	cr_expect_eq(c.nclusters, 2);
	CLUSTER(t.g, &c, false, "k1", "k2", "k3", "k4", "k5");
	CLUSTER(t.g, &c, true, "u");
	clusters_release(&c);
	model_free(t.m);
}

Test(partition, known_merge_never_makes_a_cycle)
{
	/* k1 -> u -> k2 = Add(u, k1): merging k1 and k2 would put u on a
	 * cycle, so they stay apart. */
	T t = build();
	ValId k1 = K(&t, "k1", t.x);
	output(&t, add(&t, "k2", U(&t, "u", k1), k1, false));
	Clusters c = cluster(&t, 0);
	cr_expect_eq(c.nclusters, 3);
	CLUSTER(t.g, &c, false, "k1");
	CLUSTER(t.g, &c, true, "u");
	CLUSTER(t.g, &c, false, "k2");
	expect_topological(t.g, &c);
	clusters_release(&c);
	model_free(t.m);
}

Test(partition, known_merge_stops_only_where_a_second_path_exists)
{
	/* k1 -> k2 -> k3 = Add(k2, u), k1 -> u: {k1, k2} merge (one path);
	 * k3 joins neither ({k1,k2} -> u -> k3 is a second path). */
	T t = build();
	ValId k1 = K(&t, "k1", t.x);
	ValId k2 = K(&t, "k2", k1);
	output(&t, add(&t, "k3", k2, U(&t, "u", k1), false));
	Clusters c = cluster(&t, 0);
	cr_expect_eq(c.nclusters, 3);
	CLUSTER(t.g, &c, false, "k1", "k2");
	CLUSTER(t.g, &c, true, "u");
	CLUSTER(t.g, &c, false, "k3");
	expect_topological(t.g, &c);
	clusters_release(&c);
	model_free(t.m);
}

Test(partition, cycle_check_sees_paths_through_merged_clusters)
{
	/* k1 -> u1 -> u2 -> k3 = Add(k2, u2), k1 -> k2: rule 1 makes
	 * {u1, u2}; k1 and k2 merge; k3 cannot join them, the second path
	 * runs through the merged unknown cluster. */
	T t = build();
	ValId k1 = K(&t, "k1", t.x);
	ValId u2 = U(&t, "u2", U(&t, "u1", k1));
	output(&t, add(&t, "k3", K(&t, "k2", k1), u2, false));
	Clusters c = cluster(&t, 0);
	cr_expect_eq(c.nclusters, 3);
	CLUSTER(t.g, &c, false, "k1", "k2");
	CLUSTER(t.g, &c, true, "u1", "u2");
	CLUSTER(t.g, &c, false, "k3");
	expect_topological(t.g, &c);
	clusters_release(&c);
	model_free(t.m);
}

/* ---- rule 3: small known clusters become unknown ----------------------- */

/* k1 -> k2 -> k3 -> u -> k4 -> k5 -> k6 -> k7 */
static T chain3_u_chain4(void)
{
	T t = build();
	ValId v = t.x;
	v = K(&t, "k1", v);
	v = K(&t, "k2", v);
	v = K(&t, "k3", v);
	v = U(&t, "u", v);
	v = K(&t, "k4", v);
	v = K(&t, "k5", v);
	v = K(&t, "k6", v);
	output(&t, K(&t, "k7", v));
	return t;
}

Test(partition, small_known_clusters_are_downgraded)
{
	T t = chain3_u_chain4();
	Clusters c = cluster(&t, 4); /* 3 < 4: downgraded, joins u */
	cr_expect_eq(c.nclusters, 2);
	CLUSTER(t.g, &c, true, "k1", "k2", "k3", "u");
	CLUSTER(t.g, &c, false, "k4", "k5", "k6", "k7");
	clusters_release(&c);
	partition_cluster(t.g, 5, &c); /* both downgraded: one cluster */
	cr_expect_eq(c.nclusters, 1);
	cr_expect(c.unknown[0]);
	clusters_release(&c);
	partition_cluster(t.g, 3, &c); /* nothing below 3 */
	cr_expect_eq(c.nclusters, 3);
	CLUSTER(t.g, &c, false, "k1", "k2", "k3");
	CLUSTER(t.g, &c, true, "u");
	CLUSTER(t.g, &c, false, "k4", "k5", "k6", "k7");
	clusters_release(&c);
	model_free(t.m);
}

Test(partition, limit_zero_keeps_and_minus_one_makes_everything_dynamic)
{
	T t = chain3_u_chain4();
	Clusters c = cluster(&t, 0);
	cr_expect_eq(c.nclusters, 3);
	cr_expect(!c.unknown[0] && c.unknown[1] && !c.unknown[2]);
	clusters_release(&c);
	partition_cluster(t.g, -1, &c);
	cr_expect_eq(c.nclusters, 1);
	cr_expect(c.unknown[0]);
	cr_expect_eq(c.size[0], 8);
	clusters_release(&c);
	model_free(t.m);
}

Test(partition, downgraded_fragment_joins_its_unknown_neighbour_only)
{
	/* k1 -> u -> b1 = Add(u, k1) -> b2 -> b3 -> b4: k1 cannot join the
	 * b's (second path through u), so it is a 1-node known cluster;
	 * downgraded, it merges with u; the 4 b's stay known. */
	T t = build();
	ValId k1 = K(&t, "k1", t.x);
	ValId b = add(&t, "b1", U(&t, "u", k1), k1, false);
	b = K(&t, "b2", b);
	b = K(&t, "b3", b);
	output(&t, K(&t, "b4", b));
	Clusters c = cluster(&t, 4);
	cr_expect_eq(c.nclusters, 2);
	CLUSTER(t.g, &c, true, "k1", "u");
	CLUSTER(t.g, &c, false, "b1", "b2", "b3", "b4");
	clusters_release(&c);
	model_free(t.m);
}

/* ---- wrapping ------------------------------------------------------------ */

Test(partition, static_graph_is_left_alone)
{
	T t = build();
	output(&t, K(&t, "k2", K(&t, "k1", t.x)));
	infer(&t);
	cr_expect_eq(graph_partition(t.g, 4), 0);
	cr_expect_eq(t.g->nnodes, 2);
	cr_expect_eq(t.g->nodes[0].op, OP_Relu);
	model_free(t.m);
}

/* The graph's partition nodes: their kinds, in order ("KU" ...). */
static void expect_kinds(const Graph *g, const char *want)
{
	cr_assert_eq(g->nnodes, (int32_t)strlen(want));
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		cr_assert(partition_is_node(n), "node %d is not a partition", i);
		cr_expect_str_eq(n->domain, GEARC_DOMAIN);
		cr_expect_eq(partition_is_unknown(n), want[i] == 'U',
			     "partition %d", i);
		cr_assert(partition_subgraph(n));
		cr_expect_eq(partition_subgraph(n)->parent, g);
	}
}

/* x -> k1..k4 (k4 also an output) -> NonZero -> Transpose -> out */
static T static_then_nonzero(void)
{
	T t = build();
	ValId v = t.x;
	v = K(&t, "k1", v);
	v = K(&t, "k2", v);
	v = K(&t, "k3", v);
	v = K(&t, "k4", v);
	output(&t, v);
	ValId z = tu_out(tu_node(t.g, "NonZero", "nz", IDS(v), 1), 0);
	output(&t, tu_out(tu_node(t.g, "Transpose", "tr", IDS(z), 1), 0));
	return t;
}

Test(partition, wrapping_binds_partitions_and_keeps_the_graph_interface)
{
	T t = static_then_nonzero();
	infer(&t);
	Graph *g = t.g;
	cr_assert_eq(graph_partition(g, 4), 2);
	cr_assert_eq(graph_verify(g), 0, "%s", last_error());
	expect_kinds(g, "KU");
	Graph *k = partition_subgraph(&g->nodes[0]);
	Graph *u = partition_subgraph(&g->nodes[1]);
	cr_expect_str_eq(k->name, "main_p0_known");
	cr_expect_str_eq(u->name, "main_p1_unknown");
	cr_expect_eq(k->nnodes, 4);
	cr_expect_eq(u->nnodes, 2);
	/* the known one reads x, makes k4 (an output, and read by nz) */
	cr_assert_eq(g->nodes[0].ninputs, 1);
	cr_expect_str_eq(g->vals[g->nodes[0].inputs[0]].name, "x");
	cr_assert_eq(g->nodes[0].noutputs, 1);
	cr_expect_str_eq(g->vals[g->nodes[0].outputs[0]].name, "k4:0");
	cr_expect_str_eq(g->vals[g->nodes[1].inputs[0]].name, "k4:0");
	/* graph inputs and outputs: same names, same order */
	cr_assert_eq(g->ninputs, 1);
	cr_expect_str_eq(g->vals[g->inputs[0]].name, "x");
	cr_assert_eq(g->noutputs, 2);
	cr_expect_str_eq(g->vals[g->outputs[0]].name, "k4:0");
	cr_expect_str_eq(g->vals[g->outputs[1]].name, "tr:0");
	cr_expect_str_eq(tu_shape(g, g->outputs[1]), "[-1,2]");
	/* the parent keeps only what crosses partitions */
	cr_expect_eq(g->nvals, 3);
	/* subgraph bindings */
	cr_expect_str_eq(k->vals[k->inputs[0]].name, "x");
	cr_expect_eq(k->vals[k->inputs[0]].kind, VAL_INPUT);
	cr_expect_str_eq(k->vals[k->outputs[0]].name, "k4:0");
	cr_expect_str_eq(attr_str(&g->nodes[0], PARTITION_ATTR, ""), "known");
	cr_expect_str_eq(attr_str(&g->nodes[1], PARTITION_ATTR, ""), "unknown");
	cr_expect_str_eq(g->nodes[1].name, "partition_1");
	model_free(t.m);
}

Test(partition, partitioned_graph_reinfers_to_the_same_shapes)
{
	T t = static_then_nonzero();
	infer(&t);
	Graph *g = t.g;
	cr_assert_eq(graph_partition(g, 4), 2);
	char before[8][64];
	for (ValId v = 0; v < g->nvals && v < 8; v++)
		snprintf(before[v], sizeof(before[v]), "%s", tu_shape(g, v));
	for (ValId v = 0; v < g->nvals; v++)
		if (g->vals[v].kind == VAL_NODE)
			g->vals[v].shape = shape_unknown();
	cr_assert_eq(infer_graph(t.m, g), 0, "%s", last_error());
	for (ValId v = 0; v < g->nvals && v < 8; v++)
		cr_expect_str_eq(tu_shape(g, v), before[v], "'%s'",
				 g->vals[v].name);
	model_free(t.m);
}

Test(partition, known_partitions_are_planned_unknown_ones_are_not)
{
	T t = static_then_nonzero();
	infer(&t);
	Graph *g = t.g;
	cr_assert_eq(graph_partition(g, 4), 2);
	cr_assert_eq(memplan_graph(t.m, g, NULL), 0, "%s", last_error());
	Graph *k = partition_subgraph(&g->nodes[0]);
	Graph *u = partition_subgraph(&g->nodes[1]);
	cr_assert(k->plan, "the known partition has a plan");
	cr_expect_eq(k->plan->unplanned, 0);
	cr_expect_gt(k->plan->arena_bytes, 0); /* k1..k3 are intermediate */
	cr_expect_null(u->plan, "the unknown partition runs dynamically");
	int ws = 0;
	for (int32_t b = 0; b < g->plan->nblocks; b++)
		if (g->plan->blocks[b].tensor < 0) {
			cr_expect_eq(g->plan->blocks[b].node, 0);
			cr_expect_geq(g->plan->blocks[b].size,
				      k->plan->arena_bytes);
			ws++;
		}
	cr_expect_eq(ws, 1, "one workspace: the known partition's");
	model_free(t.m);
}

Test(partition, subgraphs_move_with_their_node_and_read_through_the_partition)
{
	/* k1..k4 known; an If reading k4 from its branches (outer
	 * reference) with something unknown inside: the If's partition must
	 * take k4 as an input and its branches must point at it. */
	T t = build();
	ValId v = t.x;
	v = K(&t, "k1", v);
	v = K(&t, "k2", v);
	v = K(&t, "k3", v);
	t.x = K(&t, "k4", v); /* the branches read "x" = k4's output */
	ValId c = tu_input(t.g, "c", DT_BOOL, SCALAR);
	Node *n = if_node(&t, "if", c, true);
	output(&t, tu_out(n, 0));
	infer(&t);
	Graph *g = t.g;
	cr_assert_eq(graph_partition(g, 4), 2);
	cr_assert_eq(graph_verify(g), 0, "%s", last_error());
	expect_kinds(g, "KU");
	Graph *u = partition_subgraph(&g->nodes[1]);
	cr_assert_eq(u->nnodes, 1);
	const Attr *then = node_attr(&u->nodes[0], "then_branch");
	cr_assert(then && then->g);
	cr_expect_eq(then->g->parent, u);
	ValId o = -1;
	for (ValId i = 0; i < then->g->nvals; i++)
		if (then->g->vals[i].kind == VAL_OUTER)
			o = then->g->vals[i].outer;
	cr_assert_geq(o, 0);
	cr_expect_eq(u->vals[o].kind, VAL_INPUT);
	cr_expect_str_eq(u->vals[o].name, "k4:0");
	model_free(t.m);
}

/* A ResNet-like chain of n nodes (an Add every third node, reading the
 * previous Add) whose last tail nodes are unknown. */
static T resnet_chain(int n, int tail)
{
	T t = build();
	ValId x = t.x, skip = t.x;
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "n%d", i);
		Node *nd = i % 3 == 2 ? tu_node(t.g, "Add", name, IDS(x, skip), 1)
				      : tu_node(t.g, "Relu", name, IDS(x), 1);
		if (i >= n - tail)
			tu_int(t.g, nd, FORCE_UNKNOWN_ATTR, 1);
		x = tu_out(&t.g->nodes[t.g->nnodes - 1], 0);
		if (i % 3 == 2)
			skip = x;
	}
	output(&t, x);
	return t;
}

Test(partition, large_graphs_partition_in_about_linear_time, .timeout = 60)
{
	T t = resnet_chain(30000, 3000);
	infer(&t);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	cr_assert_eq(graph_partition(t.g, 4), 2);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double s = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec);
	expect_kinds(t.g, "KU");
	cr_expect_eq(partition_subgraph(&t.g->nodes[0])->nnodes, 27000);
	cr_expect_lt(s, 2.0, "%.3f s for 30000 nodes", s);
	model_free(t.m);
}

/* ---- the detector: backbone known, NMS and after unknown ------------------ */

static Model *compile_det_nms(int jobs, int32_t limit)
{
	GearOptions go = { .input_shape = "x:1,3,-1,-1",
			   .dynamic_image_size = "320,320;640,480" };
	PassOptions o = { .jobs = jobs,
			  .fold_limit = 64 * 1024, .no_fuse = 1,
			  .static_limit_given = limit != PARTITION_LIMIT_DEFAULT,
			  .static_limit = limit };
	ParsedGears pg;
	Model *m = onnx_load(DET_NMS);
	cr_assert(m, "%s", last_error());
	cr_assert_eq(gear_parse(&pg, &go), 0, "%s", last_error());
	int rc = gear_apply(m, &pg);
	if (!rc)
		rc = run_passes(m, &o);
	gear_parsed_release(&pg);
	cr_assert_eq(rc, 0, "%s", last_error());
	return m;
}

static bool has_op(const Graph *g, int op)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		if (g->nodes[i].op == op)
			return true;
	return false;
}

Test(partition, detector_backbone_is_one_known_partition_with_a_plan)
{
	Model *m = compile_det_nms(2, PARTITION_LIMIT_DEFAULT);
	for (int32_t gi = 0; gi < 2; gi++) {
		Graph *b = m->branches[gi];
		expect_kinds(b, "KU");
		Graph *k = partition_subgraph(&b->nodes[0]);
		Graph *u = partition_subgraph(&b->nodes[1]);
		/* every node before NonMaxSuppression, nothing after */
		int convs = 0;
		for (int32_t i = 0; i < k->nnodes; i++)
			convs += k->nodes[i].op == OP_Conv;
		cr_expect_eq(convs, 7, "the backbone and heads: 7 Convs");
		cr_expect(has_op(k, OP_TopK) && has_op(k, OP_BatchNormalization));
		cr_expect(!has_op(k, OP_NonMaxSuppression));
		cr_expect_eq(k->nnodes, 22);
		cr_expect(has_op(u, OP_NonMaxSuppression));
		cr_expect_eq(u->nnodes, 5);
		for (ValId v = 0; v < k->nvals; v++)
			cr_expect(shape_is_static(&k->vals[v].shape), "'%s'",
				  k->vals[v].name);
		cr_assert(k->plan);
		cr_expect_eq(k->plan->unplanned, 0);
		cr_expect_gt(k->plan->arena_bytes, 0);
		cr_expect_null(u->plan);
		cr_assert(b->plan);
	}
	model_free(m);
}

Test(partition, limit_minus_one_makes_the_detector_one_dynamic_partition)
{
	Model *m = compile_det_nms(1, -1);
	expect_kinds(m->branches[0], "U");
	cr_expect_eq(partition_subgraph(&m->branches[0]->nodes[0])->nnodes, 27);
	model_free(m);
}

static uint8_t *encode(Model *m, size_t *n)
{
	uint8_t *p;
	cr_assert_eq(om_encode(m, &p, n), 0, "%s", last_error());
	return p;
}

Test(partition, output_does_not_depend_on_the_thread_count)
{
	Model *a = compile_det_nms(1, PARTITION_LIMIT_DEFAULT);
	Model *b = compile_det_nms(4, PARTITION_LIMIT_DEFAULT);
	size_t na, nb;
	uint8_t *pa = encode(a, &na), *pb = encode(b, &nb);
	cr_expect_eq(na, nb);
	cr_expect(na == nb && !memcmp(pa, pb, na), "-j1 and -j4 differ");
	free(pa);
	free(pb);
	model_free(a);
	model_free(b);
}

/* ---- through the CLI: dump and verify ------------------------------------ */

static json_object *jget(json_object *o, const char *k)
{
	json_object *v = NULL;
	cr_assert(json_object_object_get_ex(o, k, &v), "no key '%s'", k);
	return v;
}

Test(partition, dump_lists_partitions_and_verify_checks_them)
{
	char *d = temp_dir(), *om = path_in(d, "dn.om");
	Run r = run_gearc("--model=" DET_NMS, "--input_shape=x:1,3,-1,-1",
			  "--dynamic_image_size=320,320;640,480", "--output",
			  om, "--no-fuse");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	r = run_gearc("dump", "--format=json", om);
	cr_assert_eq(r.status, 0, "%s", r.err);
	json_object *j = json_tokener_parse(r.out);
	cr_assert(j);
	json_object *parts = jget(j, "partitions");
	cr_assert_eq(json_object_array_length(parts), 4);
	static const char *want[][3] = { { "Batch_0", "known", "22" },
					 { "Batch_0", "unknown", "5" },
					 { "Batch_1", "known", "22" },
					 { "Batch_1", "unknown", "5" } };
	for (size_t i = 0; i < 4; i++) {
		json_object *p = json_object_array_get_idx(parts, i);
		cr_expect_str_eq(json_object_get_string(jget(p, "graph")),
				 want[i][0]);
		cr_expect_str_eq(json_object_get_string(jget(p, "kind")),
				 want[i][1]);
		cr_expect_eq(json_object_get_int(jget(p, "nodes")),
			     atoi(want[i][2]));
		json_object *mem = jget(p, "memory");
		if (!strcmp(want[i][1], "known"))
			cr_expect_gt(json_object_get_int64(
					     jget(mem, "arena_bytes")), 0);
		else
			cr_expect_null(mem);
	}
	cr_expect_null(jget(j, "hybrid"));
	json_object_put(j);
	run_free(&r);
	r = run_gearc("dump", om);
	cr_expect(strstr(r.out, "partitions:\n  Batch_0    Batch_0_p0_known"),
		  "%s", r.out);
	cr_expect(strstr(r.out, "Batch_0_p1_unknown       unknown    5 nodes  "
				"dynamic"), "%s", r.out);
	run_free(&r);
	r = run_gearc("verify", om);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "4 partitions"), "%s", r.out);
	run_free(&r);
	remove_tree(d);
	free(om);
	free(d);
}

Test(partition, static_model_ops_lower_limit_flag)
{
	char *d = temp_dir(), *om = path_in(d, "dn.om");
	Run r = run_gearc("--model=" DET_NMS, "--input_shape=x:1,3,-1,-1",
			  "--dynamic_image_size=320,320;640,480",
			  "--static_model_ops_lower_limit=-1", "--output", om,
			  "--no-fuse");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	r = run_gearc("dump", om);
	cr_expect(strstr(r.out, "option:    --static_model_ops_lower_limit=-1"),
		  "%s", r.out);
	cr_expect(strstr(r.out, "Batch_0_p0_unknown       unknown   27 nodes"),
		  "%s", r.out);
	run_free(&r);
	/* 23 > 22: the backbone is downgraded too */
	r = run_gearc("--model=" DET_NMS, "--input_shape=x:1,3,-1,-1",
		      "--dynamic_image_size=320,320;640,480",
		      "--static_model_ops_lower_limit", "23", "--output", om,
		      "--no-fuse");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	r = run_gearc("dump", om);
	cr_expect(!strstr(r.out, "known     22"), "%s", r.out);
	run_free(&r);
	static const char *bad[] = { "-2", "x", "", "1.5", "99999999999" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char flag[64];
		snprintf(flag, sizeof(flag), "--static_model_ops_lower_limit=%s",
			 bad[i]);
		r = run_gearc("--model=" DET_NMS, "--output", om, flag);
		expect_error(&r, 2, "--static_model_ops_lower_limit: '");
		run_free(&r);
	}
	remove_tree(d);
	free(om);
	free(d);
}

/* A file whose partitions break the invariants is refused by verify. */
static void expect_verify_error(Model *m, const char *om, const char *want)
{
	cr_assert_eq(om_write(m, om), 0, "%s", last_error());
	Run r = run_gearc("verify", om);
	expect_error(&r, 1, want);
	run_free(&r);
	model_free(m);
}

Test(partition, verify_refuses_broken_partitions)
{
	char *d = temp_dir(), *om = path_in(d, "bad.om");
	/* a known partition holding an unknown shape (replanned, so the
	 * plans themselves are right) */
	Model *m = compile_det_nms(1, PARTITION_LIMIT_DEFAULT);
	Graph *b = m->branches[0];
	Graph *k = partition_subgraph(&b->nodes[0]);
	k->vals[k->outputs[0]].shape.dims[0] = -1;
	b->vals[b->nodes[0].outputs[0]].shape.dims[0] = -1;
	cr_assert_eq(memplan_graph(m, b, NULL), 0, "%s", last_error());
	expect_verify_error(m, om, "graph 'Batch_0': known partition "
				   "'Batch_0_p0_known' holds tensor 'TopK_0.0' "
				   "of shape [-1,1,100]");
	/* an unknown partition with a plan */
	m = compile_det_nms(1, PARTITION_LIMIT_DEFAULT);
	Graph *u = partition_subgraph(&m->branches[1]->nodes[1]);
	cr_assert_eq(memplan_graph(m, u, NULL), 0, "%s", last_error());
	expect_verify_error(m, om, "graph 'Batch_1': unknown partition "
				   "'partition_1' runs dynamically but has a "
				   "memory plan");
	/* a node left outside the partitions */
	m = compile_det_nms(1, PARTITION_LIMIT_DEFAULT);
	b = m->branches[0];
	ValId o = graph_add_value(b, "stray_out", VAL_NODE);
	b->vals[o].dtype = DT_FLOAT;
	b->vals[o].shape = b->vals[b->inputs[0]].shape;
	Node *n = graph_add_node(b, "stray", "Identity", "", 1, 1);
	n->inputs[0] = b->inputs[0];
	n->outputs[0] = o;
	b->vals[o].producer = b->nnodes - 1;
	cr_assert_eq(memplan_graph(m, b, NULL), 0, "%s", last_error());
	expect_verify_error(m, om, "graph 'Batch_0' is partitioned, but node "
				   "'stray' (Identity) is in no partition");
	/* a partition whose subgraph is typed unlike its node */
	m = compile_det_nms(1, PARTITION_LIMIT_DEFAULT);
	b = m->branches[0];
	u = partition_subgraph(&b->nodes[1]);
	u->vals[u->inputs[0]].shape.dims[1] = 99;
	expect_verify_error(m, om, "graph 'Batch_0': partition 'partition_1' "
				   "input 0 ('Gather_3') is not typed as in its "
				   "subgraph");
	remove_tree(d);
	free(om);
	free(d);
}
