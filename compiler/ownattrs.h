/*
 * compiler/ownattrs.h - the names of the attributes gearc's own ops
 * (ops.h GEARC_OWN_OPS, domain ai.gearc) carry: one place for the passes
 * that set them, the ops that read them and the .om readers (dump,
 * verify, the runtime).  They are part of the .om format: renaming one
 * changes every file gearc writes.
 */
#ifndef GEARC_OWNATTRS_H
#define GEARC_OWNATTRS_H

/* Case: the gear selector of the root (passes/gear.c) or of a multi-dims
 * scope's body (passes/scope.c). */
#define CASE_BRANCHES_ATTR "branches"	    /* GRAPHS: one per gear */
#define CASE_GEAR_COUNT_ATTR "gear_count"   /* INT: how many */
#define CASE_GEAR_DIMS_ATTR "gear_dims"	    /* INTS: the table, by row */
#define CASE_INPUT_ORDER_ATTR "input_order" /* STRINGS: the gear inputs */
#define CASE_DYNAMIC_TYPE_ATTR "dynamic_type" /* STRING: mode, or "dims" */
/* A --hybrid Case (passes/hybrid.h): the graph run when no gear matches,
 * and the rule in words. */
#define HYBRID_GRAPH_ATTR "dynamic_graph" /* GRAPH */
#define HYBRID_RULE_ATTR "hybrid_rule"	  /* STRING */

/* PartitionedCall holding a multi-dims scope (passes/scope.h). */
#define SCOPE_BODY_ATTR "body"		  /* GRAPH: the scope's body */
#define SCOPE_MULTI_DIMS_ATTR "multi_dims" /* INT 1: it is a scope */
#define SCOPE_GEAR_MAP_ATTR "gear_map"	  /* INTS: per gear, its clone */
#define SCOPE_WHY_ATTR "scope"		  /* STRING: why it was scoped */
/* PartitionedCall holding a partition (passes/partition.h). */
#define PARTITION_GRAPH_ATTR "f"	  /* GRAPH: the partition */
#define PARTITION_ATTR "partition"	  /* STRING: "known", "unknown" */

/* FusedConv, FusedGemm, FusedMatMul (compiler/ops/fused.c). */
#define FUSED_ACTS_ATTR "activations"		 /* STRINGS, in order */
#define FUSED_ACT_PARAMS_ATTR "activation_params" /* FLOATS: 2 per act */
/* FusedConv: how many of the activations come before Z is added (absent:
 * 0, Y = acts(Conv + Z)). */
#define FUSED_Z_AFTER_ATTR "z_after" /* INT */

/* Sdpa (compiler/ops/attention.c states their meaning). */
#define SDPA_SCALE_ATTR "scale"		  /* FLOAT */
#define SDPA_CAUSAL_ATTR "causal"	  /* INT: 0, 1 or 2 */
#define SDPA_CAUSAL_FILL_ATTR "causal_fill" /* FLOAT */
#define SDPA_Q_PERM_ATTR "q_perm"	  /* INTS, each a permutation */
#define SDPA_K_PERM_ATTR "k_perm"
#define SDPA_V_PERM_ATTR "v_perm"
#define SDPA_Y_PERM_ATTR "y_perm"

/* Fail: an If branch invalid at the compiled shapes (ops/control.c). */
#define FAIL_MESSAGE_ATTR "message" /* STRING: the error if run */
#define FAIL_DTYPES_ATTR "dtypes"   /* INTS: per output */
#define FAIL_SHAPES_ATTR "shapes"   /* INTS: rank then dims, per output */

#endif
