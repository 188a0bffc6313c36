/*
 * compiler/ir.h - gearc's graph IR.
 *
 * A Model owns one Arena; its graphs, values, nodes, names, attributes and
 * any tensor data copied out of the ONNX file live there and are freed at
 * once by model_free().  Weight bytes that come from the ONNX file or an
 * external data file are not copied: Tensor.data points into the FileMaps
 * the Model keeps open.
 *
 * Values by index (QBE's Ref): a Node names its tensors by ValId, an index
 * into its Graph's vals[].  -1 stands for an omitted optional input or
 * output (ONNX's "").  Every value has at most one producer; graph inputs,
 * weights and outer-scope references have none.
 *
 * Subgraphs (the bodies of If/Loop/Scan, and later the gear branches of a
 * Case) are Graphs hung off node attributes of type ATTR_GRAPH(S).  A name
 * a subgraph uses but does not define is a VAL_OUTER value whose .outer is
 * the ValId of the same tensor in the parent graph.
 *
 * Shapes: rank -1 means unknown rank; a dim of -1 means unknown.  Ranks
 * above MAX_RANK are rejected at import.
 */
#ifndef GEARC_IR_H
#define GEARC_IR_H

#include "util.h"
#include "ops.h"
#include "ownattrs.h"

#define MAX_RANK 8
#define DIM_UNKNOWN (-1)

/* How deep subgraphs nest: every walk over subgraphs (inference,
 * evaluation, the planner, the runtime, export) recurses once per level,
 * so a bound where a model enters keeps them all off the end of the
 * stack.  The ONNX importer refuses a model whose subgraphs nest more
 * than MAX_GRAPH_DEPTH levels below its main graph.  A compile adds at
 * most GRAPH_LEVELS_ADDED levels above them (a gear or hybrid Case's
 * branch, a partition, a gear scope's body and its Case of clones), and
 * the .om reader (serializer/check.c) and writer refuse a file whose
 * graphs nest deeper than MAX_OM_GRAPH_DEPTH below the root. */
#define MAX_GRAPH_DEPTH 64
#define GRAPH_LEVELS_ADDED 4
#define MAX_OM_GRAPH_DEPTH (MAX_GRAPH_DEPTH + GRAPH_LEVELS_ADDED)

typedef int32_t ValId;

/* ONNX TensorProto.DataType numbering. */
typedef enum {
	DT_UNDEFINED = 0,
	DT_FLOAT = 1,
	DT_UINT8 = 2,
	DT_INT8 = 3,
	DT_UINT16 = 4,
	DT_INT16 = 5,
	DT_INT32 = 6,
	DT_INT64 = 7,
	DT_STRING = 8,
	DT_BOOL = 9,
	DT_FLOAT16 = 10,
	DT_DOUBLE = 11,
	DT_UINT32 = 12,
	DT_UINT64 = 13,
	DT_COMPLEX64 = 14,
	DT_COMPLEX128 = 15,
	DT_BFLOAT16 = 16,
	DT_COUNT
} DType;

/* "float32", "int64", "bool", ...; NULL for an out-of-range value. */
const char *dtype_name(int dt);
/* Bytes per element; 0 for DT_UNDEFINED, DT_STRING and unknown values. */
size_t dtype_size(int dt);
bool dtype_valid(int dt); /* 1..16 */

typedef struct Shape {
	int32_t rank; /* -1: unknown rank */
	int64_t dims[MAX_RANK];
} Shape;

Shape shape_unknown(void);
Shape shape_of(int32_t rank, const int64_t *dims);
bool shape_is_static(const Shape *s);
bool shape_equal(const Shape *a, const Shape *b);
/* Element count of a static shape; -1 if not static or it overflows. */
int64_t shape_numel(const Shape *s);
/* Bytes of a static shape of dtype dt; -1 if unknown or overflowing. */
int64_t shape_bytes(const Shape *s, int dt);
/* "[2,3,-1]" into buf (always terminated). */
const char *shape_str(const Shape *s, char *buf, size_t n);

typedef struct Bytes {
	size_t len;
	const uint8_t *data;
} Bytes;

/* A tensor with known contents: a weight, a Constant, a folded value.
 * data is little-endian, densely packed; for DT_STRING it is an array of
 * numel Bytes and nbytes = numel * sizeof(Bytes).  Tensors are immutable
 * once made, so graphs cloned per gear share them. */
typedef struct Tensor {
	const char *name; /* initializer name, or NULL */
	int32_t dtype;
	bool folded; /* computed by gearc (folding), not read from the model */
	Shape shape; /* always static */
	const void *data;
	size_t nbytes;
	/* How its bytes are ordered: TENSOR_ROWS (row-major, as shape
	 * reads), or TENSOR_NHWC (a rank-4 tensor channels-last).  Only
	 * libgearrt sets NHWC, on a tensor between kernels that take it
	 * (runtime/layout.c); gearc's tensors and the .om are row-major. */
	uint8_t layout;
	/* A float32 tensor whose values are float16 numbers, widened from
	 * a float16 weight (passes/widen.c): the .om stores them as float16,
	 * half the size, widened again when the file is read. */
	bool from_half;
} Tensor;

enum { TENSOR_ROWS, TENSOR_NHWC };

/* Builds a tensor in the arena; data is copied (NULL: zero-filled).
 * Returns NULL with an error set if the shape is not static or its byte
 * size overflows. */
Tensor *tensor_new(Arena *a, const char *name, int dt, const Shape *s,
		   const void *data);
/* Element i of an integer or bool tensor as int64 (no bounds check). */
int64_t tensor_get_i64(const Tensor *t, int64_t i);
/* Element i of a numeric tensor as double (no bounds check). */
double tensor_get_f64(const Tensor *t, int64_t i);
/* 16-bit floats with ebits of exponent and mbits of stored mantissa
 * (float16: 5, 10; bfloat16: 8, 7): d rounded to nearest even, and back. */
uint16_t minifloat_from(double d, int ebits, int mbits);
double minifloat_to(uint16_t h, int ebits, int mbits);
/* f[i] = float16 h[i] for i < n, exactly: F16C's vcvtph2ps where the CPU
 * has it within the ISA cap (compiler/cpu.h), else minifloat_to.  The
 * loader's and widen's float16 weights (ISNet's 44M of them: most of its
 * 1 s open through minifloat_to) and runtime/convert.c's Cast. */
void half_to_float_n(const uint16_t *h, float *f, size_t n);
/* h[i] = f[i] rounded to the nearest float16, ties to even, NaN staying
 * NaN: F16C's vcvtps2ph, else minifloat_from of the float's exact
 * double (runtime/convert.c's Cast). */
void float_to_half_n(const float *f, uint16_t *h, size_t n);

typedef enum {
	VAL_NODE = 0, /* produced by a node */
	VAL_INPUT,    /* graph input, bound by the caller */
	VAL_WEIGHT,   /* initializer: .konst holds its data */
	VAL_OUTER,    /* outer-scope reference from a subgraph */
} ValKind;

typedef enum {
	TK_TENSOR = 0,
	TK_SEQUENCE, /* dtype/shape describe the element */
	TK_OPTIONAL, /* dtype/shape describe the contained tensor */
	TK_OTHER,    /* maps, sparse tensors, nested types: opaque */
} TypeKind;

enum {
	VF_DATA_DEP = 1 << 0,  /* some dim depends on data values */
	VF_GRAPH_OUT = 1 << 1, /* listed in its graph's outputs */
};

typedef struct Value {
	const char *name;
	int32_t dtype; /* DType; DT_UNDEFINED while unknown */
	uint8_t kind;  /* ValKind */
	uint8_t tkind; /* TypeKind */
	uint16_t flags;
	Shape shape;
	const char **dim_params; /* NULL, or rank entries (NULL = none) */
	int32_t producer;        /* node index, -1 if none */
	ValId outer;             /* VAL_OUTER: ValId in parent graph */
	const Tensor *konst;     /* known contents, or NULL */
} Value;

/* ONNX AttributeProto.AttributeType numbering. */
typedef enum {
	ATTR_UNDEFINED = 0,
	ATTR_FLOAT = 1,
	ATTR_INT = 2,
	ATTR_STRING = 3,
	ATTR_TENSOR = 4,
	ATTR_GRAPH = 5,
	ATTR_FLOATS = 6,
	ATTR_INTS = 7,
	ATTR_STRINGS = 8,
	ATTR_TENSORS = 9,
	ATTR_GRAPHS = 10,
	ATTR_SPARSE_TENSOR = 11,
	ATTR_SPARSE_TENSORS = 12,
	ATTR_TYPE_PROTO = 13,
	ATTR_TYPE_PROTOS = 14,
} AttrType;

struct Graph;

typedef struct Attr {
	const char *name;
	int32_t type; /* AttrType */
	int32_t n;    /* element count of the list types */
	float f;
	int64_t i;
	Bytes s;
	const Tensor *t;
	struct Graph *g;
	const float *floats;
	const int64_t *ints;
	const Bytes *strings;
	const Tensor **tensors;
	struct Graph **graphs;
} Attr;

typedef struct Node {
	const char *name;
	const char *op_type;
	const char *domain; /* "" for the default ONNX domain */
	uint16_t op;        /* Op, OP_UNKNOWN if not in the op table */
	uint16_t flags;
	int32_t ninputs, noutputs, nattrs;
	ValId *inputs;  /* -1: omitted optional input */
	ValId *outputs; /* -1: omitted optional output */
	Attr *attrs;
	const char *label; /* gear branch label ("Batch_3"), or NULL */
	/* Values of the source model this node computes inside and that no
	 * longer exist (fused away into it: passes/absorb.c), nfused of
	 * them, or NULL: what `gearc run --dump-tensors` names as absent
	 * rather than leaving out in silence. */
	const char **fused;
	int32_t nfused;
	/* May compute in the model's reduced precision (Model.reduced:
	 * bfloat16, float16) where the CPU can (passes/precision.c). */
	bool reduced;
} Node;

typedef struct Graph {
	const char *name;
	struct Graph *parent; /* enclosing graph of a subgraph, or NULL */
	Arena *arena;
	Value *vals;
	int32_t nvals, capvals;
	Node *nodes; /* in topological order after graph_toposort() */
	int32_t nnodes, capnodes;
	ValId *inputs;
	int32_t ninputs;
	ValId *outputs;
	int32_t noutputs;
	struct MemPlan *plan; /* memory plan (passes/memplan.c), or NULL */
	/* How far specialise() (passes/passes.c) has taken it: 0, or
	 * SPEC_INFERRED, or SPEC_DONE (passes.h). */
	uint8_t specialised;
} Graph;

typedef struct Opset {
	const char *domain;
	int64_t version;
} Opset;

typedef enum {
	MODE_STATIC = 0,
	MODE_BATCH,
	MODE_IMAGE_SIZE,
	MODE_DIMS,
} GearMode;

const char *gear_mode_name(int mode); /* "static", "batch", ... */

/* One input of the gear spec: a graph input with at least one -1 in
 * --input_shape. */
typedef struct GearInput {
	const char *name;
	ValId val;   /* in the model's main graph */
	Shape shape; /* as given by --input_shape, -1 at gear dims */
	int32_t ndyn;
	int32_t dyn_axes[MAX_RANK];
	int32_t first; /* index of its first value within a gear row */
} GearInput;

/* The validated gear options: ngears rows of nvals values each; row g
 * gives the values of every -1, inputs in order, axes in order. */
typedef struct GearSpec {
	int32_t mode; /* GearMode */
	int32_t ninputs;
	GearInput *inputs;
	int32_t ngears, nvals;
	int64_t *table; /* ngears * nvals, row-major */
} GearSpec;

typedef struct KeyVal {
	const char *key, *val;
} KeyVal;

#define ROOT_GRAPH "root"

typedef struct Model {
	Arena arena;
	Graph *graph; /* the main (root) graph */
	const char *path; /* the ONNX file as the user named it */
	/* The source model's graph's name: the root graph, which a gear
	 * compile makes (MapIndex -> Case), is named ROOT_GRAPH in the
	 * .om, so that every file's root is called the same (run_passes). */
	const char *graph_name;
	/* The source file's SHA-256 as 64 lower-case hex digits (its
	 * bytes as read, not its external data), or NULL (a model built
	 * in memory; a .om written before it was kept). */
	const char *sha256;
	int64_t ir_version, model_version;
	const char *producer_name, *producer_version, *domain;
	int32_t nopsets;
	Opset *opsets;
	/* Files whose bytes tensors point into; unmapped by model_free. */
	int32_t nmaps, capmaps;
	FileMap *maps;
	/* The external data files' locations as the model names them, in
	 * the order they are first used (what 'gearc inspect' lists). */
	int32_t nexternal, capexternal;
	const char **external;
	/* Filled in by the compiler for the serializer. */
	int32_t mode; /* GearMode */
	GearSpec *gears; /* NULL for a static compile */
	int32_t noptions, capoptions;
	KeyVal *options; /* the options used, in the order given */
	int jobs; /* threads the writer may use (-j); 0: one per core */
	/* The largest output, in bytes, whose contents shape inference
	 * computes at compile time (PassOptions.fold_limit, which
	 * run_passes puts here); 0: 64 KiB. */
	int64_t fold_limit;
	/* Gear compile (passes/gear.c); NULL/-1 for a static compile.  The
	 * root graph's Case node holds the branches; branches[i] is gear i's,
	 * allocated from arenas[i] so gears can be specialised in parallel. */
	Graph **branches;
	Arena **arenas;
	ValId gear_info; /* root input with the gear's dim values, or -1 */
	/* Scope compile (passes/scope.h): gears have no branch graph, so
	 * every gear's output shapes are kept here, ngears * noutputs,
	 * row-major, and merged_outputs has them merged (noutputs: a dim
	 * every gear agrees on, else -1); NULL otherwise. */
	Shape *gear_outputs, *merged_outputs;
	/* --hybrid (passes/hybrid.h): the dynamic graph, the model with the
	 * gear dims left unknown, from its own arena; NULL otherwise. */
	Graph *dynamic;
	Arena *dynamic_arena;
	/* Warnings (model_warn); NULL until the first. */
	struct Warnings *warnings;
	/* A gear compile with a batch (passes/batchrows.c): whether its
	 * rows may be padded; NULL otherwise. */
	struct BatchRows *batch_rows;
	/* atc's --precision_mode (NULL: none given) and the dtype the nodes
	 * marked reduced may compute in (DT_BFLOAT16, DT_FLOAT16; 0: none). */
	const char *precision_mode;
	int32_t reduced;
	/* --keep-fp16: the names of the values the source model computes in
	 * float16 (passes/widen.c), rounded to float16 where they are made;
	 * NULL otherwise. */
	NameMap *half_values;
} Model;

/* Whether a gear compile's batch may be padded (passes/batchrows.c):
 * mixer NULL and, per graph output, the axis its batch is on (-1: none
 * reaches it); else mixer names the first node that mixes the rows.
 * in_axis: per graph input, the axis of it that is the batch (-1: none),
 * a run pads. */
typedef struct BatchRows {
	int32_t *axis, *in_axis;
	const char *mixer;
} BatchRows;

/* ---- warnings ---------------------------------------------------------- */

/* Records a one-line warning about m (what was accepted, and why it may
 * not be what the user wants); cli/ prints each as "gearc: warning: ..."
 * unless --quiet.  Safe from any thread.  A text already recorded is not
 * added again.  Warnings come out ordered by key (e.g. the gear index,
 * so the order does not depend on threads), then as they were added. */
void model_warn(Model *m, int64_t key, const char *fmt, ...) PRINTF_LIKE(3, 4);
/* The number of warnings, and warning i of that order. */
int32_t model_warning_count(const Model *m);
const char *model_warning(const Model *m, int32_t i);
/* Frees the list (model_free does). */
void model_warnings_free(Model *m);

/* ---- building ---------------------------------------------------------- */

Model *model_new(void);
void model_free(Model *m);
/* Version of the default ONNX domain ("" or "ai.onnx"); 0 if absent. */
int64_t model_opset(const Model *m);
/* The newest ai.onnx opset gearc has rules for: the import refuses a
 * newer one; a model without a default-domain import (only nodes of other
 * domains) is inferred by these rules. */
enum { OPSET_NEWEST = 23 };
void model_add_option(Model *m, const char *key, const char *val);

Graph *graph_new(Arena *a, const char *name, Graph *parent);
/* Appends a value (name copied); returns its id.  The Value* of earlier
 * ids may move: re-fetch after adding. */
ValId graph_add_value(Graph *g, const char *name, ValKind kind);
/* Appends a weight named name holding t (its dtype and shape). */
ValId graph_add_weight(Graph *g, const char *name, const Tensor *t);
/* Copies src's type to dst: dtype, tensor kind, shape and dim_params
 * (contents, flags and kind are the caller's to decide). */
void value_copy_type(Value *dst, const Value *src);
/* base, or base_2, base_3 ...: the first name no value of g has yet
 * (allocated in g's arena when it is not base). */
const char *graph_fresh_name(Graph *g, const char *base);
/* Appends a node with room for nin inputs and nout outputs (all -1). */
Node *graph_add_node(Graph *g, const char *name, const char *op_type,
		     const char *domain, int32_t nin, int32_t nout);
/* The same node made in *n (zeroed first, strings and arrays from g's
 * arena) for a pass that builds a new node list before it replaces g's. */
void node_init(Graph *g, Node *n, const char *name, const char *op_type,
	       const char *domain, int32_t nin, int32_t nout);
/* Appends an attribute slot to n (name copied) and returns it. */
Attr *node_add_attr(Graph *g, Node *n, const char *name, AttrType type);
/* Adds an INTS attribute holding a copy of v[0..count). */
void node_add_ints(Graph *g, Node *n, const char *name, const int64_t *v,
		   int32_t count);
/* Adds a STRING attribute holding a copy of s. */
void node_add_string(Graph *g, Node *n, const char *name, const char *s);

/* Whether node n holds subgraphs (If, Loop, Scan bodies), which may read
 * any value of its graph. */
static inline bool node_has_subgraphs(const Node *n)
{
	for (int32_t k = 0; k < n->nattrs; k++)
		if (n->attrs[k].type == ATTR_GRAPH ||
		    n->attrs[k].type == ATTR_GRAPHS)
			return true;
	return false;
}

/* Deep-copies src (values, nodes, attributes, subgraphs) into a, as a
 * child of parent.  Tensors (weights, constants), names of values and
 * dim_params are shared, not copied: they are immutable.  When suffix is
 * given, every node name gets it appended; when label is given, every
 * node (subgraphs included) gets it as its label. */
Graph *graph_clone(Arena *a, const Graph *src, Graph *parent,
		   const char *suffix, const char *label);

/* ---- reading ----------------------------------------------------------- */

const Attr *node_attr(const Node *n, const char *name);
int64_t attr_int(const Node *n, const char *name, int64_t dflt);
float attr_float(const Node *n, const char *name, float dflt);
/* The string attribute as a NUL-terminated arena string, or dflt. */
const char *attr_str(const Node *n, const char *name, const char *dflt);
/* Ints attribute: returns its count and sets *v, or -1 if absent. */
int32_t attr_ints(const Node *n, const char *name, const int64_t **v);

/* ---- order and checks -------------------------------------------------- */

/* Sorts g->nodes topologically (stable: keeps the file order where it is
 * already valid), fixes Value.producer, and recurses into subgraphs.  A
 * cycle is a user error naming a node on it. */
int graph_toposort(Graph *g);
/* Checks the structural invariants of g and its subgraphs: indices in
 * range, one producer per value and producer fields consistent, inputs
 * defined before use, outer references resolvable, ranks <= MAX_RANK.
 * Returns 0, or -1 with an error naming the graph and node at fault. */
int graph_verify(const Graph *g);

/* Visits g and every subgraph below it, depth first, g first. */
typedef int (*GraphVisitor)(Graph *g, void *ctx);
int graph_walk(Graph *g, GraphVisitor fn, void *ctx);

/* ---- memory plans (passes/memplan.c) ---------------------------------- */

/* One block of a graph's feature-map arena: a tensor's buffer, a view or
 * in-place result sharing another tensor's buffer (alias_of), or the
 * workspace of a node's subgraphs (tensor -1, node set).  Steps index
 * MemPlan.order; [first, last] is the block's lifetime, both included. */
typedef struct MemBlock {
	ValId tensor;	 /* -1: a workspace */
	int32_t node;	 /* workspace: the If/Loop/Scan node; else -1 */
	uint64_t offset; /* from the arena start, a multiple of 64 */
	uint64_t size;	 /* bytes, a multiple of 64 */
	int32_t first, last;
	ValId alias_of; /* the tensor owning the buffer, or -1 */
	bool inplace;	/* alias_of is an input this elementwise op overwrote */
} MemBlock;

typedef struct MemPlan {
	int32_t norder;
	int32_t *order; /* node indices in execution order */
	int32_t nblocks;
	MemBlock *blocks; /* tensors in ValId order, then workspaces */
	uint64_t arena_bytes;
	uint64_t lower_bound_bytes; /* most bytes live at one step */
	uint64_t naive_bytes;	    /* every block its own buffer */
	int32_t unplanned; /* node outputs left out: shapes not static ... */
} MemPlan;

#endif
