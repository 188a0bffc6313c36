/*
 * compiler/ops/opimpl.h - what an op hook sees, and every hook's prototype.
 *
 * A hook gets an OpCtx for one node.  infer hooks set the dtype and shape
 * of every output with op_set_out() (a dim they cannot know is -1, and
 * VF_DATA_DEP marks one that depends on data values); run hooks (kernels)
 * compute the outputs' contents from the inputs' contents: they read
 * inputs with op_const_in(), get an output buffer with op_new_output()
 * (or a tensor from op_new_tensor()) and publish it with op_set_const().
 * On a user-visible problem a hook returns op_error(c, ...), which names
 * the node and op.
 *
 * A kernel runs in one of two places, and must not tell them apart:
 *   - folding (compiler/infer.c): after the infer hook, if every output is
 *     static and at most fold_limit bytes; inputs are the graph values'
 *     konst, NULL where not known, and a kernel that cannot compute (an
 *     input not constant, a result not exactly defined) returns 0 and
 *     sets nothing;
 *   - execution (runtime/): c->bind holds the node's input tensors (none
 *     NULL but omitted ones) and its output buffers, already sized from
 *     the memory plan; op_new_output() hands out those buffers, so a
 *     kernel that uses it writes in place and op_set_const() copies
 *     nothing.  A kernel that sets no output fails the run.
 * Only the accessors below (ops.c) look at c->bind; a hook never does.
 * What differs between the two places is a property of a value, asked
 * the same way in both: whether an input is constant (op_const_in),
 * whether a sequence has a tensor form (op_seq_in, op_seq_out), whether
 * the node must not fold (compiler/infer.c: random ops without a seed).
 * Kernels allocate only through op_new_output(), op_new_tensor() and
 * op_scratch(), which take memory from c->arena: the graph's arena when
 * folding, the session's (reused run after run) when running.  A kernel
 * never allocates from c->g->arena: at run time the graph is the open
 * model's, which sessions on other threads read at the same time and
 * which must not grow with every run.  They read node
 * attributes, input shapes (op_in(c, i)->shape) and output shapes
 * (op_out(c, i)->shape), which are the running shapes in both places.
 *
 * Hooks see inputs of unknown rank (-1) and unknown dims (-1) in infer and
 * must pass them on as unknown, never guess.
 */
#ifndef GEARC_OPIMPL_H
#define GEARC_OPIMPL_H

#include <math.h>

#include "../ir.h"

/* A node's tensors at run time (runtime/exec.c fills it). */
typedef struct OpBind {
	const Tensor *const *in; /* per node input, NULL if omitted */
	Tensor *const *out;	 /* per node output, NULL if omitted; dtype,
				    shape and a buffer of nbytes */
	uint8_t *set;		 /* per output: set by op_set_const */
	/* Per output the runtime did not plan (out[i] NULL): the tensor the
	 * kernel published, kept where op_new_tensor put it; NULL if the
	 * runtime takes no such outputs. */
	const Tensor **result;
	/* The running contents of any value of the graph (control flow
	 * reads outer references through it); exec is its context. */
	const Tensor *(*value)(void *exec, ValId v);
	void *exec;
} OpBind;

/* The fold limit of evaluation at run time (compiler/infer.c eval_node):
 * inference with folding standing in for execution. */
#define OP_EVAL_LIMIT (INT64_MAX / 4)

typedef struct OpCtx {
	Model *model;
	Graph *g;
	Node *n;
	int64_t opset;	    /* default-domain opset version */
	int64_t fold_limit; /* max bytes of a folded output */
	OpBind *bind;	    /* execution; NULL when folding */
	/* What op_new_tensor, op_scratch and op_eval_subgraph allocate from,
	 * chosen by the driver: the graph's arena when folding (a folded
	 * result joins the graph), the session's scratch when running (reset
	 * after the node, or after the run for tensors that outlive it). */
	Arena *arena;
} OpCtx;

/* True when the node runs for real (bound tensors, or evaluation at run
 * time), not when the compiler folds: only Fail, whose effect differs (it
 * raises), asks. */
static inline bool op_at_run_time(const OpCtx *c)
{
	return c->bind || c->fold_limit >= OP_EVAL_LIMIT;
}

/* Input i, or NULL if omitted or past the end. */
Value *op_in(OpCtx *c, int i);
/* Constant contents of input i, or NULL if not known. */
const Tensor *op_const_in(OpCtx *c, int i);
/* Output i, or NULL if omitted or past the end. */
Value *op_out(OpCtx *c, int i);
/* Sets output i's dtype and shape (no-op if the output is omitted). */
void op_set_out(OpCtx *c, int i, int dtype, const Shape *s);
/* Sets output i's contents (and so its dtype and shape).  At run time
 * the contents go to the bound buffer (copied unless t is that buffer);
 * t must then have the output's dtype and shape. */
void op_set_const(OpCtx *c, int i, const Tensor *t);
/* The tensor to fill for output i, of dtype dt and shape s: at run time
 * the bound buffer (no copy on op_set_const), when folding a new tensor as
 * op_new_tensor gives.  NULL with an error if s overflows.  The bound
 * buffer holds garbage (maybe an input's data, when the plan runs the
 * node in place): a kernel that accumulates uses op_new_output_zeroed. */
Tensor *op_new_output(OpCtx *c, int i, int dt, const Shape *s);
/* op_new_output, zero-filled. */
Tensor *op_new_output_zeroed(OpCtx *c, int i, int dt, const Shape *s);
/* Output i's contents as the kernel set them (op_set_const), NULL if
 * it set none: for a kernel that finishes what another one computed (the
 * fused ops' post-ops, in place). */
Tensor *op_out_result(OpCtx *c, int i);
/* Sequences (compiler/ops/sequence.c).  A sequence in tensor form is a
 * Tensor of the element dtype, shape [n], data n element pointers.  A
 * graph value never holds a sequence's contents (the chain that made it
 * is replayed instead), so these are NULL / no-ops there; the runtime's
 * bound values have that form.
 * op_seq_in: input i in tensor form, or NULL.
 * op_seq_out: the tensor output i is built into, or NULL if the output
 * keeps no contents (then a kernel making a sequence has nothing to do).
 * op_set_seq: output i becomes the sequence of dtype dt holding
 * els[0..n) (owned by it). */
const Tensor *op_seq_in(OpCtx *c, int i);
Tensor *op_seq_out(OpCtx *c, int i);
void op_set_seq(OpCtx *c, int i, int dt, const Tensor **els, int64_t n);
/* Formats "node 'NAME' (OP): <message>" as the error; returns -1. */
int op_error(OpCtx *c, const char *fmt, ...) PRINTF_LIKE(2, 3);

/* ---- helpers shared by hooks (common.c) ------------------------------- */

/* Sets of dtypes as bit masks, for op_check_dtype(). */
#define DTS(t) (1u << (t))
#define DTS_FLOAT \
	(DTS(DT_FLOAT16) | DTS(DT_FLOAT) | DTS(DT_DOUBLE) | DTS(DT_BFLOAT16))
/* The IEEE floats: no bfloat16 (ops whose newest version omits it). */
#define DTS_IEEE (DTS(DT_FLOAT16) | DTS(DT_FLOAT) | DTS(DT_DOUBLE))
#define DTS_SINT (DTS(DT_INT8) | DTS(DT_INT16) | DTS(DT_INT32) | DTS(DT_INT64))
#define DTS_UINT \
	(DTS(DT_UINT8) | DTS(DT_UINT16) | DTS(DT_UINT32) | DTS(DT_UINT64))
#define DTS_INT (DTS_SINT | DTS_UINT)
#define DTS_NUMERIC (DTS_FLOAT | DTS_INT)

/* Dim i of s, or -1 if the rank is unknown or too small. */
static inline int64_t shape_dim(const Shape *s, int32_t i)
{
	return i >= 0 && i < s->rank ? s->dims[i] : DIM_UNKNOWN;
}

/* Input i, which the op requires: NULL with an error if omitted. */
Value *op_need_in(OpCtx *c, int i);
/* Input i (if present) has a dtype in the set; else an error listing it. */
int op_check_dtype(OpCtx *c, int i, uint32_t allowed);
/* Input i (if present) has the dtype of input j. */
int op_check_same_dtype(OpCtx *c, int i, int j);
/* Input i (if present and of known rank) has rank lo..hi. */
int op_check_rank(OpCtx *c, int i, int32_t lo, int32_t hi);
/* Input i (if present and of known shape) holds one element. */
int op_check_scalar(OpCtx *c, int i);
/* Normalizes axis (what: the attribute's name) into 0..rank-1. */
int op_axis(OpCtx *c, const char *what, int64_t axis, int32_t rank,
	    int32_t *out);
/* *r = a * b for dims: 0 if either is 0, else -1 if either is unknown;
 * an error if the product overflows int64. */
int op_dim_mul(OpCtx *c, int64_t a, int64_t b, int64_t *r);
/* *r = a + b for dims: -1 if either is unknown; errors on overflow. */
int op_dim_add(OpCtx *c, int64_t a, int64_t b, int64_t *r);
/* *r = the product of s->dims[from..to) by op_dim_mul (s of known rank). */
int op_dims_prod(OpCtx *c, const Shape *s, int32_t from, int32_t to,
		 int64_t *r);
/* Multidirectional (numpy) broadcast of a and b into *out; unknown rank
 * if either rank is unknown; an error naming both shapes if they clash. */
int op_broadcast(OpCtx *c, const Shape *a, const Shape *b, Shape *out);
/* Unidirectional broadcast: input i must broadcast to shape *to. */
int op_broadcast_to(OpCtx *c, int i, const Shape *to);

/* ---- folding helpers (common.c) ---------------------------------------- */

/* A new zero-filled tensor of dtype dt and static shape s for a kernel
 * to fill and pass to op_set_const().  It is allocated from c->arena
 * (gear branches are specialised on several threads, each graph with its
 * own arena; sessions run on several threads, each with its own scratch),
 * so hooks must never allocate elsewhere.  NULL with an error (naming the
 * node) if the size overflows. */
Tensor *op_new_tensor(OpCtx *c, int dt, const Shape *s);
/* bytes of temporary memory (not zeroed), 16-byte aligned, valid until
 * the kernel returns; NULL with an error if too large. */
void *op_scratch(OpCtx *c, size_t bytes);
/* op_scratch, zero-filled. */
void *op_scratch_zeroed(OpCtx *c, size_t bytes);
/* Writable data of a tensor made by op_new_tensor. */
static inline void *tensor_mut(Tensor *t) { return (void *)t->data; }
/* Stores v at element i, converted to t's dtype (numeric or bool). */
void tensor_set_i64(Tensor *t, int64_t i, int64_t v);
void tensor_set_f64(Tensor *t, int64_t i, double v);
/* True if every present input of the node has known contents. */
bool op_all_const(OpCtx *c);
/* Reads a constant 1-D (or scalar) integer input i into v[0..*n) (at most
 * max values): for Reshape/Slice/Pad/Resize/... parameters.  Returns 1 if
 * the input is present and constant, 0 if absent or not constant, -1 with
 * an error if it is not an integer tensor or holds more than max values. */
int op_const_ints(OpCtx *c, int i, int64_t *v, int32_t *n, int32_t max);

/* -- elementwise family: elementwise.c, logic.c --------------------------- */

/* Folding engine.  A scalar of a fold: float dtypes compute in double
 * (EW_F), uint64 in uint64 (EW_U), every other integer and bool in int64
 * (EW_I); integer results wrap to the output dtype as in C and numpy. */
enum { EW_F, EW_I, EW_U };
typedef struct EwNum {
	int kind;
	union {
		double f;
		int64_t i;
		uint64_t u;
	};
} EwNum;

/* What a kernel may need besides its operands. */
typedef struct EwParams EwParams;
struct EwParams {
	int dtype; /* the output's dtype (precision, bit width) */
	double alpha, beta, gamma, lambd, bias;
	int64_t mode; /* Mod: fmod; BitShift: 1 left; IsInf: 1 neg | 2 pos */
	double (*math)(double); /* unary ops that libm computes, */
	double (*fk)(double, const EwParams *); /* or a float kernel */
};

/* Kernels return false when the result is not exactly defined (integer
 * division by zero, ...): the node is then not folded. */
typedef bool (*EwUnFn)(EwNum x, EwNum *r, const EwParams *p);
typedef bool (*EwBinFn)(EwNum a, EwNum b, EwNum *r, const EwParams *p);

EwNum ew_get(const Tensor *t, int64_t i);
/* Stores v rounded to nearest even in t's dtype; false if v is a float
 * that an integer dtype cannot hold (NaN, out of range). */
bool ew_put(Tensor *t, int64_t i, EwNum v);
/* v rounded to the precision of float dtype dt (double: unchanged). */
double ew_round(int dt, double v);
/* Calls fn(ctx, o, in) for every element o of static shape out, in[k]
 * being the element of input k (shape shapes[k], numpy-broadcast to out;
 * at most 3 inputs); stops with false as soon as fn returns false. */
typedef bool (*EwElemFn)(void *ctx, int64_t o, const int64_t *in);
/* A numpy broadcast of up to EW_WALK_IN inputs to static shape out, for
 * the loops of compiler/ops/ewfast.c and runtime/intew.c: out's dims
 * merged where every input steps alike (dims of 1 dropped; at least one
 * dim), per input its step in elements along each (0 where broadcast). */
enum { EW_WALK_IN = 3 };
typedef struct EwWalk {
	int nin;
	int32_t rank;
	int64_t dims[MAX_RANK];
	int64_t st[EW_WALK_IN][MAX_RANK];
} EwWalk;
void ew_walk_init(EwWalk *w, const Shape *out, int nin,
		  const Shape *const *in);
/* Float32 fast paths (ewfast.c), with the exact engine's results: 1 if
 * the op was computed, 0 if not handled (other dtypes: use the exact
 * engine), -1 on error.  Binary covers Add, Sub, Mul, Div, Max, Min, Pow and the
 * comparisons; unary the unary ops of the op table given p. */
int ew_fast_binary(OpCtx *c);
int ew_fast_unary(OpCtx *c, const EwParams *p);
int ew_fast_clip(OpCtx *c, bool has_lo, double lo, bool has_hi, double hi);
/* Before opset 7, B (input 1) of a broadcast=1 binary node n lines up
 * with A's dims from 'axis' (or as a suffix): *sb becomes B's shape at
 * A's rank sa with 1s around, so that numpy broadcasting lays it out the
 * same way; from opset 7 (numpy's rule) it stays as it is. */
void ew_legacy_shape(const Node *n, int64_t opset, const Shape *sa,
		     Shape *sb);
/* Bound k (0 min, 1 max) of Clip node n before opset 11, from its
 * attributes: +-inf where it has none (Clip-1), their defaults +-FLT_MAX
 * from Clip-6. */
float clip_attr_bound(const Node *n, int64_t opset, int k);
bool ew_each(const Shape *out, int nin, const Shape *const *shapes,
	     EwElemFn fn, void *ctx);
/* Output 0 has input 0's shape and dtype out_dt (0: input 0's); input 0's
 * dtype must be in dts. */
int ew_infer_unary(OpCtx *c, uint32_t dts, int out_dt);
/* Output 0 is the broadcast of inputs 0 and 1 (legacy broadcast=1/axis
 * rules before opset 7), of dtype out_dt (0: input 0's). */
int ew_infer_binary(OpCtx *c, int out_dt);
/* Fold output 0 = fn(input 0) elementwise, or fn(input 0, input 1)
 * broadcast, if the inputs are constant; 0 also when not folded. */
int ew_run_unary(OpCtx *c, EwUnFn fn, const EwParams *p);
int ew_run_binary(OpCtx *c, EwBinFn fn, const EwParams *p);

/* elementwise.c */
int infer_identity(OpCtx *c);
int run_identity(OpCtx *c);
int infer_clip(OpCtx *c);
int infer_dropout(OpCtx *c);
int infer_softmax(OpCtx *c); /* Softmax, LogSoftmax */
int infer_arith(OpCtx *c);   /* Add, Sub, Mul, Div */
int infer_pow(OpCtx *c);
int infer_prelu(OpCtx *c);
int infer_unary(OpCtx *c); /* the unary math and activation table */
int run_unary(OpCtx *c);
int run_clip(OpCtx *c);
int run_dropout(OpCtx *c);
int run_softmax(OpCtx *c); /* Softmax, LogSoftmax, Hardmax */
int run_arith(OpCtx *c);   /* Add, Sub, Mul, Div, Mod, Pow, PRelu */
int infer_mod(OpCtx *c);
int infer_variadic(OpCtx *c); /* Max, Min, Mean, Sum */
int run_variadic(OpCtx *c);
int infer_cast(OpCtx *c);
int infer_castlike(OpCtx *c);
int run_cast(OpCtx *c); /* Cast, CastLike */
/* cast.c: run_cast's conversions of x (constant input 0) to output 0:
 * to bfloat16 by truncation, to string as numpy's str(), from string
 * to dtype dt. */
int cast_to_bfloat16(OpCtx *c, const Tensor *x);
int cast_to_string(OpCtx *c, const Tensor *x);
int cast_from_string(OpCtx *c, const Tensor *x, int dt);
int infer_random(OpCtx *c);      /* RandomUniform, RandomNormal */
int infer_random_like(OpCtx *c); /* Random*Like, Bernoulli */
int infer_multinomial(OpCtx *c);
/* random.c: fold only with a seed attribute (else run time only) */
int run_random(OpCtx *c); /* RandomUniform, RandomNormal, their *Like */
int run_bernoulli(OpCtx *c);
int run_multinomial(OpCtx *c);

/* logic.c */
int infer_logical(OpCtx *c); /* And, Or, Xor */
int infer_compare(OpCtx *c); /* Equal, Greater(OrEqual), Less(OrEqual) */
int run_logic2(OpCtx *c);   /* those and BitShift */
int infer_bitshift(OpCtx *c);
int infer_not(OpCtx *c);
int infer_isnan(OpCtx *c);
int infer_isinf(OpCtx *c);
int run_logic1(OpCtx *c); /* Not, IsNaN, IsInf */
int infer_where(OpCtx *c);
int run_where(OpCtx *c);

/* -- tensor family: tensor.c, gather.c ------------------------------------ */

/* Helpers the family shares (tensor.c). */
/* Bytes per element, sizeof(Bytes) for strings: folds move elements. */
size_t tn_esize(int dt);
/* Row-major element strides of a static shape. */
void tn_strides(const Shape *s, int64_t *st);
/* Advances the row-major multi-index idx over dims; false after the last. */
static inline bool tn_next(int32_t rank, const int64_t *dims, int64_t *idx)
{
	for (int32_t i = rank - 1; i >= 0; i--) {
		if (++idx[i] < dims[i])
			return true;
		idx[i] = 0;
	}
	return false;
}
/* Fills dst (of src's dtype) in order over the virtual shape dims[0..rank)
 * (rank <= 2 * MAX_RANK, same element count as dst): the element at
 * multi-index o is src's element off + sum o[k] * sst[k]. */
void tn_copy_strided(Tensor *dst, int32_t rank, const int64_t *dims,
		     const Tensor *src, int64_t off, const int64_t *sst);
/* Output out gets input i's contents in its own (static) shape. */
int tn_copy_input(OpCtx *c, int i, int out);
/* An int list: attribute attr before opset since, else input in (absent:
 * *n = -1).  1 if known, 0 if the input is not a constant, -1 on error. */
int tn_int_list(OpCtx *c, const char *attr, int64_t since, int in,
		int64_t *v, int32_t *n, int32_t max);
/* A constant integer input of one value: 1, 0 if not constant, -1. */
int tn_const_scalar(OpCtx *c, int i, int64_t *v);
/* Sets output i; marks it VF_DATA_DEP if s is not static. */
void tn_set_data_dep(OpCtx *c, int i, int dtype, const Shape *s);

/* Hooks (tensor.c). */
int infer_constant(OpCtx *c);
int infer_reshape(OpCtx *c);
int infer_flatten(OpCtx *c);
int infer_transpose(OpCtx *c);
int infer_concat(OpCtx *c);
int infer_shape(OpCtx *c);
int run_shape(OpCtx *c);
int infer_size(OpCtx *c);
int run_size(OpCtx *c);
int run_reshape(OpCtx *c); /* Reshape, Flatten, Squeeze, Unsqueeze */
int run_transpose(OpCtx *c);
int run_concat(OpCtx *c);
int infer_unsqueeze(OpCtx *c);
int infer_squeeze(OpCtx *c);
int infer_expand(OpCtx *c);
int run_expand(OpCtx *c);
int infer_tile(OpCtx *c);
int run_tile(OpCtx *c);
int infer_slice(OpCtx *c);
int run_slice(OpCtx *c);
/* What a Slice of an input of shape xs reads, as a strided view: output
 * element (i_0, ..., i_r-1) is input element off + sum i_k sst[k].  1 if
 * its arguments are known, 0 if one is not constant, -1 on error. */
int slice_view(OpCtx *c, const Shape *xs, int64_t *off, int64_t *sst);
/* A Pad of mode constant: its pads before (pb) and after (pe) each of
 * its input's r axes, as its reference kernel reads them; 1 if known, 0
 * if another mode or not known, -1 on error. */
int pad_view(OpCtx *c, int32_t r, int64_t *pb, int64_t *pe);
int infer_split(OpCtx *c);
int run_split(OpCtx *c);
int infer_pad(OpCtx *c);
int run_pad(OpCtx *c);
int infer_constantofshape(OpCtx *c);
int run_constantofshape(OpCtx *c);
int infer_range(OpCtx *c);
int run_range(OpCtx *c);
int infer_eyelike(OpCtx *c);
int run_eyelike(OpCtx *c);
int infer_trilu(OpCtx *c);
int run_trilu(OpCtx *c);
int infer_depthtospace(OpCtx *c);
int run_depthtospace(OpCtx *c);
int infer_spacetodepth(OpCtx *c);
int run_spacetodepth(OpCtx *c);
int infer_reversesequence(OpCtx *c);
int run_reversesequence(OpCtx *c);
int infer_cumsum(OpCtx *c);
int run_cumsum(OpCtx *c);

/* Hooks (gather.c). */
int infer_gather(OpCtx *c);
int run_gather(OpCtx *c);
int infer_gatherelements(OpCtx *c);
int run_gatherelements(OpCtx *c);
int infer_gathernd(OpCtx *c);
int run_gathernd(OpCtx *c);
int infer_scatterelements(OpCtx *c); /* Scatter, ScatterElements */
int run_scatterelements(OpCtx *c);
int infer_scatternd(OpCtx *c);
int run_scatternd(OpCtx *c);
/* Scatter's reductions (its "reduction" attribute), as the kernels above
 * and runtime/small.c's fast path apply them: scatter_reduction, the one
 * named s at opset, or -1 if none; scatter_reduce_into, t[di] =
 * red(t[di], u[ui]) in t's dtype (floats computed in double, integers
 * wrapping); scatter_reducible, whether dt has arithmetic for red (no
 * kernel computes the node otherwise). */
typedef enum {
	SCATTER_NONE, SCATTER_ADD, SCATTER_MUL, SCATTER_MAX, SCATTER_MIN
} ScatterRed;
int scatter_reduction(const char *s, int64_t opset);
void scatter_reduce_into(Tensor *t, int64_t di, const Tensor *u, int64_t ui,
			 ScatterRed red);
bool scatter_reducible(int dt, ScatterRed red);
int infer_onehot(OpCtx *c);
int run_onehot(OpCtx *c);
int infer_compress(OpCtx *c);
int run_compress(OpCtx *c);
int infer_nonzero(OpCtx *c);
int run_nonzero(OpCtx *c);
int infer_unique(OpCtx *c); /* folds too: its shapes need the values */

/* -- nn family: nn.c, norm.c, reduce.c, resize.c, rnn.c, misc.c ---------- */

/* nn.c */
int infer_conv(OpCtx *c);
int infer_maxpool(OpCtx *c);
int infer_avgpool(OpCtx *c);
int infer_global_pool(OpCtx *c); /* GlobalAveragePool, GlobalMaxPool */
int infer_batchnorm(OpCtx *c);
int infer_conv_integer(OpCtx *c);
/* Sets output 0 (dtype dt) of a Conv-like node: X input xi, W wi, bias
 * bi (-1: none). */
int conv_like(OpCtx *c, int xi, int wi, int bi, int dt);
int infer_qlinear_conv(OpCtx *c);
int infer_conv_transpose(OpCtx *c);
int infer_lppool(OpCtx *c);
/* MaxPool's and AveragePool's output shape *y for an input of shape x
 * ([N, C, spatial...]) from the node's window attributes. */
int nn_pool_dims(OpCtx *c, const Shape *x, Shape *y);
int infer_max_roi_pool(OpCtx *c);
int infer_roi_align(OpCtx *c);
int infer_max_unpool(OpCtx *c);
/* Attribute name if present with type t (an AttrType), else NULL. */
const Attr *nn_attr(const Node *n, const char *name, int type);
/* Marks output i (if present) as data-dependent (VF_DATA_DEP). */
void nn_mark_dep(OpCtx *c, int i);
/* Same rank (or either unknown) and equal dims where both are known. */
bool nn_shape_compatible(const Shape *a, const Shape *b);

/* norm.c */
/* Whether BatchNormalization node n computes the batch's statistics: the
 * training_mode attribute since opset 14; before opset 7 is_test=0 (its
 * default); in between, when the statistics outputs are asked for. */
bool batchnorm_training(const Node *n, int64_t opset);
/* Whether the Dropout of c keeps every element as it is (1: inference,
 * or training with a ratio of 0, as run_dropout reads them), drops some
 * (0), or its inputs do not say (-1). */
int dropout_keeps_all(OpCtx *c);
/* BatchNormalization's y = x a + b of one channel, from its scale, bias
 * and statistics (run_batchnorm, the fast path chan_batchnorm): then
 * y is x * a + b rounded after the product and after the sum. */
void batchnorm_affine(float scale, float bias, double mean, double var,
		      double eps, float *a, float *b);
int infer_instance_norm(OpCtx *c);
int infer_layer_norm(OpCtx *c);
int infer_lrn(OpCtx *c);
int infer_mvn(OpCtx *c);
int infer_lp_norm(OpCtx *c);

/* pool.c, norm.c: the pooling and normalization kernels */
int run_maxpool(OpCtx *c);
int run_avgpool(OpCtx *c);
int run_lppool(OpCtx *c);
int run_global_pool(OpCtx *c); /* GlobalAveragePool, -MaxPool, -LpPool */
int run_max_unpool(OpCtx *c);
int run_max_roi_pool(OpCtx *c);
int run_roi_align(OpCtx *c);
int run_batchnorm(OpCtx *c);
int run_instance_norm(OpCtx *c);
int run_layer_norm(OpCtx *c);
int run_lrn(OpCtx *c);
int run_mvn(OpCtx *c);
int run_lp_norm(OpCtx *c);
/* AveragePool of the node's window attributes on floats xf of shape x
 * into yf (zeroed) of shape y. */
int nn_avg_pool(OpCtx *c, const Shape *x, const Shape *y, const float *xf,
		float *yf, bool count_pad);
/* f (floats of shape t) broadcast to the dims tail[0..n) into out[]
 * (f NULL: every value is fill): LayerNormalization's Scale and B. */
void nn_expand_tail(const float *f, const Shape *t, const int64_t *tail,
		    int32_t n, float fill, float *out);
/* Tensor t as floats: its data if float, else a converted copy in
 * scratch memory; NULL with an error if out of memory. */
const float *nn_floats(OpCtx *c, const Tensor *t);
/* The float buffer a kernel fills for output tensor o: o's data if o is
 * float, else scratch memory that nn_out_done() then converts into o. */
float *nn_out_floats(OpCtx *c, Tensor *o);
/* Output i of c's node is the constant o, its values f (nn_out_floats'
 * buffer, converted into o unless o is float). */
void nn_out_done(OpCtx *c, int i, Tensor *o, const float *f);
/* FusedMatMul (com.microsoft): perm[i], the dim of its operand k (0 or
 * 1, of rank r) that dim i of the view it multiplies reads (transBatch:
 * dim 0 moved next to the last two; trans: those two swapped); true if
 * the view is the operand itself. */
bool fused_matmul_perm(const Node *n, int k, int32_t r, int32_t *perm);

/* reduce.c */
int infer_reduce(OpCtx *c); /* ReduceL1 ... ReduceSumSquare */
int run_reduce(OpCtx *c);
int infer_argminmax(OpCtx *c); /* ArgMax, ArgMin */
int run_argminmax(OpCtx *c);
int infer_topk(OpCtx *c);
int run_topk(OpCtx *c);

/* resize.c */
int infer_resize(OpCtx *c);
int infer_upsample(OpCtx *c);
int infer_grid_sample(OpCtx *c);
int run_resize(OpCtx *c);
int run_upsample(OpCtx *c);
int run_grid_sample(OpCtx *c);
/* A float tensor's elements as floats: its data, or a converted copy in
 * scratch memory.  NULL with an error if out of memory. */
const float *nn_floats_in(OpCtx *c, const Tensor *t);
/* Where a kernel writes output t's elements as floats: its data (float)
 * or scratch; then nn_floats_store(t, f) converts them into t (integers
 * truncated toward zero and saturated). */
float *nn_floats_out(OpCtx *c, Tensor *t);
void nn_floats_store(Tensor *t, const float *f);

/* rnn.c */
int infer_rnn(OpCtx *c); /* RNN, GRU, LSTM */
int run_rnn(OpCtx *c);

/* misc.c */
int infer_quantize_linear(OpCtx *c);
int run_quantize_linear(OpCtx *c);
int infer_dequantize_linear(OpCtx *c);
int run_dequantize_linear(OpCtx *c);
int infer_dynamic_quantize_linear(OpCtx *c);
int infer_matmul_integer(OpCtx *c);
int infer_qlinear_matmul(OpCtx *c);
int infer_einsum(OpCtx *c);
int infer_det(OpCtx *c);
int infer_dft(OpCtx *c);
int infer_stft(OpCtx *c);
int infer_window(OpCtx *c); /* HannWindow, HammingWindow, BlackmanWindow */
int run_window(OpCtx *c);
int infer_mel_weight_matrix(OpCtx *c);
int infer_nll_loss(OpCtx *c);
int infer_sce_loss(OpCtx *c);
int infer_nms(OpCtx *c);

/* -- matrix product and convolution kernels: sgemm.c, matmul.c, conv.c,
 *    misc.c, with nn_conv_geom in nn.c ------------------------------------ */

/* The geometry of a Conv or ConvTranspose node at its running shapes:
 * a position o of the columns side (Conv: Y, ConvTranspose: X) and a
 * kernel offset k meet the image side (Conv: X, ConvTranspose: Y) at
 * o * stride - pad + k * dilation on each spatial axis. */
typedef struct ConvGeom {
	int32_t nsp;	     /* spatial axes */
	int64_t n;	     /* batch */
	int64_t cin, cout;   /* channels of X and of Y */
	int64_t group;
	int64_t in[MAX_RANK], out[MAX_RANK]; /* spatial dims of X and Y */
	int64_t kernel[MAX_RANK], stride[MAX_RANK], dilation[MAX_RANK];
	int64_t pad[MAX_RANK]; /* begin pads (ConvTranspose: may be < 0) */
} ConvGeom;

/* nn.c: fills g for the node (X input xi, W input wi, Y output 0). */
int nn_conv_geom(OpCtx *c, int xi, int wi, bool transpose, ConvGeom *g);

/* sgemm.c */
/* Bytes of scratch memory sgemm needs for an m x n x k product. */
size_t sgemm_scratch(int64_t m, int64_t n, int64_t k);
/* C = alpha * op(A) * op(B) + beta * C, op(A) m x k and op(B) k x n,
 * op(X) = X transposed if tx; lda, ldb, ldc are row strides; beta 0
 * does not read C.  pack: sgemm_scratch(m, n, k) bytes. */
void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
	   const float *a, int64_t lda, const float *b, int64_t ldb,
	   float beta, float *c, int64_t ldc, float *pack);
/* im2col: col[(ch * K + k) * O + o] = img[ch][o * stride - pad + k *
 * dilation] (0 outside), for ch < channels, K = prod g->kernel, O = prod
 * cols[] (positions), img of spatial dims img[].  col2im adds col back
 * into img (the adjoint). */
void im2col(const ConvGeom *g, const int64_t *img, const int64_t *cols,
	    int64_t channels, const float *x, float *col);
void col2im(const ConvGeom *g, const int64_t *img, const int64_t *cols,
	    int64_t channels, const float *col, float *x);
/* The positions o in [*lo, *hi) of 0..n-1 with 0 <= o * s + off < in. */
static inline void conv_range(int64_t off, int64_t s, int64_t in, int64_t n,
			      int64_t *lo, int64_t *hi)
{
	int64_t l = off >= 0 ? 0 : (-off + s - 1) / s;
	int64_t h = off >= in ? 0 : (in - off + s - 1) / s;
	*hi = h < n ? h : n;
	*lo = l < *hi ? l : *hi;
}

/* matmul.c */
int infer_gemm(OpCtx *c);
int infer_matmul(OpCtx *c);
/* y = numpy.matmul(a, b) for a of shape as, b of bs, y of ys (their
 * dtypes by kind: fp32 on sgemm; double; uint64, wrapping). */
enum { MM_F32, MM_F64, MM_U64 };
int matmul_batched(OpCtx *c, int kind, const Shape *as, const void *a,
		   const Shape *bs, const void *b, const Shape *ys, void *y);
int run_gemm(OpCtx *c);
int run_matmul(OpCtx *c);

/* conv.c */
/* Element i of (u)int8 y = v rounded half to even, plus zp, saturated. */
void q8_store(Tensor *y, int64_t i, double v, int64_t zp);
/* Output 0 (int32) from the exact integer results yd: ConvInteger's and
 * MatMulInteger's last step. */
int set_int32_output(OpCtx *c, const double *yd);
int run_conv(OpCtx *c);
int run_conv_transpose(OpCtx *c);
int run_conv_integer(OpCtx *c);
/* ConvInteger of node c's geometry (X's shape input 0, W input 1) on
 * the operands x (its zero point xz) and W (wz), exact in double; NULL
 * on error. */
double *conv_integer_of(OpCtx *c, const Tensor *x, const Tensor *xz,
			const Tensor *wz);
int run_qlinear_conv(OpCtx *c);

/* misc.c */
int run_matmul_integer(OpCtx *c);
int run_qlinear_matmul(OpCtx *c);
int run_einsum(OpCtx *c);
int run_det(OpCtx *c);

/* signal.c: kernels of the signal ops of misc.c */
int run_dft(OpCtx *c);
int run_stft(OpCtx *c);
int run_mel_weight_matrix(OpCtx *c);

/* loss.c, detect.c: the k4misc kernels */
int run_nll_loss(OpCtx *c);
int run_sce_loss(OpCtx *c);
int run_dynamic_quantize_linear(OpCtx *c); /* misc.c */
/* NonMaxSuppression's selection when its inputs are constant: 1 with
 * *count rows (the first cap written to rows[3 * cap] if rows is not
 * NULL), 0 if an input is not constant, -1 on error. */
int nms_select(OpCtx *c, int64_t *rows, int64_t cap, int64_t *count);
int run_nms(OpCtx *c);

/* -- control flow and sequences: control.c, sequence.c -------------------- */

/* control.c */
int infer_if(OpCtx *c);
int infer_fail(OpCtx *c);
int run_fail(OpCtx *c);
int infer_loop(OpCtx *c);
int infer_scan(OpCtx *c);
int run_scan(OpCtx *c);

/* sequence.c */
/* Sequence kernels: a sequence value at run time is a tensor of element
 * pointers (see sequence.c's header); those making a sequence only run
 * at run time, folding replays the graph instead. */
int run_sequence_empty(OpCtx *c);
int run_sequence_construct(OpCtx *c);
int run_sequence_insert(OpCtx *c);
int run_sequence_erase(OpCtx *c);
int run_split_to_sequence(OpCtx *c);
int run_concat_from_sequence(OpCtx *c);
int infer_sequence_empty(OpCtx *c);
int infer_sequence_construct(OpCtx *c);
int infer_sequence_insert(OpCtx *c);
int infer_sequence_erase(OpCtx *c);
int infer_sequence_at(OpCtx *c);
int run_sequence_at(OpCtx *c);
int infer_sequence_length(OpCtx *c);
int run_sequence_length(OpCtx *c);
int infer_sequence_map(OpCtx *c);
int infer_split_to_sequence(OpCtx *c);
int infer_concat_from_sequence(OpCtx *c);
int infer_optional(OpCtx *c);
int infer_optional_has_element(OpCtx *c);
int run_optional_has_element(OpCtx *c);
int infer_optional_get_element(OpCtx *c);
int infer_string_normalizer(OpCtx *c);
int run_string_normalizer(OpCtx *c);
int infer_tfidf_vectorizer(OpCtx *c);
int run_tfidf_vectorizer(OpCtx *c);

/* -- gearc's own ops: case.c, fused.c ------------------------------------ */

/* case.c */
int infer_mapindex(OpCtx *c);
int run_mapindex(OpCtx *c);
int infer_case(OpCtx *c);
int run_case(OpCtx *c);
int infer_partitioned_call(OpCtx *c);
int run_partitioned_call(OpCtx *c);

/* misc.c: DynamicQuantizeLinear of x[0..n) into y, its scale and zero
 * point; numpy.matmul's shape rule for inputs ai and bi; numpy.matmul of
 * 8-bit a and b less their zero points (of output 0's shape), exact in
 * double, NULL on error. */
void dql_quantize(const float *x, int64_t n, uint8_t *y, float *scale,
		  uint8_t *zp);
int matmul_shape(OpCtx *c, int ai, int bi, Shape *y);
double *int_matmul_of(OpCtx *c, const Tensor *a, const Tensor *az,
		      const Tensor *b, const Tensor *bz);

/* qfused.c: the dynamic int8 ops passes/qfuse.c makes */
int infer_dynquant_matmul(OpCtx *c);
int run_dynquant_matmul(OpCtx *c);
int infer_dynquant_conv(OpCtx *c);
int run_dynquant_conv(OpCtx *c);
/* Shape s broadcasts into an output of rank rank as one value or ch
 * values along axis (W_scale's and Bias's rule). */
bool dynquant_per_channel(const Shape *s, int32_t rank, int32_t axis,
			  int64_t ch);

/* attention.c: Sdpa, scaled dot-product attention (its header states
 * the contract).  SdpaGeom is a node's geometry at its running shapes,
 * for the reference kernel and runtime/attn.c's: per tensor (SDPA_Q, K,
 * V, M, Y) the element stride of each logical axis ([N..., S, D]; M's 0
 * where it broadcasts; O's for Y, through y_perm). */
enum { SDPA_Q, SDPA_K, SDPA_V, SDPA_M, SDPA_Y, SDPA_TENSORS };
enum { SDPA_CAUSAL_UPPER_LEFT = 1, SDPA_CAUSAL_LOWER_RIGHT = 2 };
typedef struct SdpaGeom {
	int32_t rank, nlead;	/* r, and its r - 2 batch dims */
	int64_t lead[MAX_RANK]; /* the batch dims */
	int64_t nblocks;	/* their product */
	int64_t sq, skv, d, dv;
	float scale;
	int causal; /* 0, SDPA_CAUSAL_* */
	float fill; /* causal_fill */
	bool mask;  /* M present */
	int64_t st[SDPA_TENSORS][MAX_RANK];
	Shape yshape;
} SdpaGeom;
/* c's node's geometry at its (static) shapes: 0, or -1 with an error. */
int sdpa_geom(OpCtx *c, SdpaGeom *g);
/* Whether the causal mask of g masks key j of query i. */
bool sdpa_masked(const SdpaGeom *g, int64_t i, int64_t j);
/* The element offset of batch block b (0 .. nblocks-1, row-major over
 * the batch dims) in tensor t (SDPA_*). */
int64_t sdpa_block_offset(const SdpaGeom *g, int t, int64_t b);
int infer_sdpa(OpCtx *c);
int run_sdpa(OpCtx *c);

/* image.c */
int infer_yuv420sp(OpCtx *c);
int run_yuv420sp(OpCtx *c);

/* fused.c: the fused ops passes/fuse.c makes */
int infer_fused_conv(OpCtx *c);
int run_fused_conv(OpCtx *c);
int infer_fused_gemm(OpCtx *c);
int run_fused_gemm(OpCtx *c);
int infer_fused_matmul(OpCtx *c);
int run_fused_matmul(OpCtx *c);
int infer_fused_activation(OpCtx *c);
int run_fused_activation(OpCtx *c);

/* -- ONNX Runtime's contrib ops (ops.h GEARC_MS_OPS): contrib.c ---------- */

/* Node n, just imported (its attributes read): ONNX Runtime's FusedConv
 * or FusedGemm gets gearc's attributes (activations, activation_params)
 * and domain; other nodes are left as they are.  -1 with an error
 * naming the node if its activation is not one gearc has. */
int contrib_import(Graph *g, Node *n);
int infer_ms_gelu(OpCtx *c); /* Gelu, BiasGelu, FastGelu, QuickGelu */
int run_ms_gelu(OpCtx *c);
int infer_ms_bias_add(OpCtx *c);
int run_ms_bias_add(OpCtx *c);
/* SkipLayerNormalization, SkipSimplifiedLayerNormalization */
int infer_ms_skip_norm(OpCtx *c);
int run_ms_skip_norm(OpCtx *c);
int infer_ms_rms_norm(OpCtx *c); /* SimplifiedLayerNormalization */
int run_ms_rms_norm(OpCtx *c);
int infer_ms_fused_matmul(OpCtx *c);
int run_ms_fused_matmul(OpCtx *c);

/* contrib_q.c: the quantized contrib ops */
int infer_ms_qlinear_binary(OpCtx *c); /* QLinearAdd, QLinearMul */
int run_ms_qlinear_binary(OpCtx *c);
int infer_ms_qlinear_unary(OpCtx *c); /* QLinearSigmoid, QLinearLeakyRelu */
int run_ms_qlinear_unary(OpCtx *c);
/* The 256 entries of a QLinearSigmoid or QLinearLeakyRelu node's table
 * (entry (uint8) q for the 8-bit value q): 1, or 0 if its scales or zero
 * points are not known.  ms_qlinear_table_of: the table of op (those,
 * or QLinearConcat's requantization, any other op) for 8-bit dtype dt,
 * x and y's scale and zero point. */
int ms_qlinear_table(OpCtx *c, uint8_t *table);
void ms_qlinear_table_of(int op, int dt, float xs, int32_t xz, float ys,
			 int32_t yz, float alpha, uint8_t *table);
/* v, a value over the output's scale, stored as 8-bit dtype dt with zero
 * point z: rounded half to even, saturated (NaN as z). */
static inline int32_t ms_q_store(float v, int32_t z, int dt)
{
	int32_t lo = dt == DT_UINT8 ? 0 : -128, hi = dt == DT_UINT8 ? 255 : 127;
	if (v != v)
		return z;
	float q = rintf(v) + (float)z;
	return q < (float)lo ? lo : q > (float)hi ? hi : (int32_t)q;
}
int infer_ms_qlinear_concat(OpCtx *c);
int run_ms_qlinear_concat(OpCtx *c);
int infer_ms_qlinear_gap(OpCtx *c); /* QLinearGlobalAveragePool */
int run_ms_qlinear_gap(OpCtx *c);
int infer_ms_qlinear_avgpool(OpCtx *c);
int run_ms_qlinear_avgpool(OpCtx *c);
int infer_ms_qlinear_softmax(OpCtx *c);
int run_ms_qlinear_softmax(OpCtx *c);
/* QLinearSoftmax's table of exponentials for x_scale and rows of d, and
 * one row x[0..d) (stride st) into y: ONNX Runtime's algorithm. */
void ms_qsoftmax_table(float x_scale, int64_t d, bool is_signed,
		       float *table);
void ms_qsoftmax_row(const uint8_t *x, uint8_t *y, int64_t d, int64_t st,
		     const float *table, bool is_signed, float ys, int32_t yz);
int infer_ms_qgemm(OpCtx *c);
int run_ms_qgemm(OpCtx *c);
int infer_ms_dynquant_matmul(OpCtx *c); /* DynamicQuantizeMatMul */
int run_ms_dynquant_matmul(OpCtx *c);
int infer_ms_matmul_int_to_float(OpCtx *c);
int run_ms_matmul_int_to_float(OpCtx *c);

/* contrib_attn.c: the transformer contrib ops */
int infer_ms_attention(OpCtx *c);
int run_ms_attention(OpCtx *c);
int infer_ms_mha(OpCtx *c); /* MultiHeadAttention */
int run_ms_mha(OpCtx *c);
int infer_ms_embed_layer_norm(OpCtx *c);
int run_ms_embed_layer_norm(OpCtx *c);
int infer_ms_rotary(OpCtx *c); /* RotaryEmbedding */
int run_ms_rotary(OpCtx *c);
/* One attention of Attention or MultiHeadAttention: per batch row b and
 * head n, out = softmax(scale Q K^T + mask + bias) V, Q [S, h], K [T,
 * h], V [T, hv] read at the given strides (elements; rows contiguous),
 * mask [B][S][T] (NULL: none), bias planes [S][T] at b * bias_b + n *
 * bias_n (NULL: none). */
typedef struct MsAttn {
	int64_t B, N, S, T, h, hv;
	float scale;
	const float *q, *k, *v;
	int64_t q_b, q_n, q_s, k_b, k_n, k_t, v_b, v_n, v_t;
	float *out;
	int64_t out_b, out_n, out_s;
	const float *mask, *bias;
	int64_t bias_b, bias_n;
} MsAttn;
/* Head (b, n) of a, with work: ms_attention_work(a) bytes of scratch. */
void ms_attention_head(const MsAttn *a, int64_t b, int64_t n, float *work);
size_t ms_attention_work(const MsAttn *a);
/* The forms of an attention mask (mask_index, key_padding_mask): ends
 * [B], ends and starts [2B], [B, T] and [B, S, T] of 1s and 0s. */
enum { MS_MASK_NONE, MS_MASK_END, MS_MASK_END_START, MS_MASK_2D,
       MS_MASK_3D };
/* The additive mask [B][S][T] of mask mi of that kind (NULL for none),
 * unidirectional (causal) with past keys before the current ones. */
void ms_attention_mask(float *mask, const int32_t *mi, int kind, int64_t b,
		       int64_t s, int64_t t, int64_t past, bool causal,
		       float filter);
/* K (or V) of each batch row and head into present [B, N, P + L, h]: the
 * past's P rows ([B, N, P, h], NULL if P is 0), then L rows of cur (row
 * l of head n of batch row b at cur + b cb + n cn + l cs). */
void ms_concat_kv(float *present, const float *past, int64_t B, int64_t N,
		  int64_t P, int64_t L, int64_t h, const float *cur,
		  int64_t cb, int64_t cn, int64_t cs);

/* ---- subgraphs (compiler/infer.c) -------------------------------------- */

/* Infers subgraph sub of c's node with c's settings (for If, Loop, Scan
 * hooks): the hook first sets the dtypes and shapes of sub's inputs;
 * outer references take their values from the parent graph. */
int op_infer_subgraph(OpCtx *c, Graph *sub);
/* Runs subgraph sub of c's node on inputs in[] (one per sub input) and
 * sets outs[] to its outputs' contents: for kernels of ops that run a
 * subgraph (Case).  Works when folding and at run time. */
int op_eval_subgraph(OpCtx *c, const Graph *sub, const Tensor *const *in,
		     const Tensor **outs);

#endif
