/*
 * compiler/ops/opimpl.h - what an op hook sees, and every hook's prototype.
 *
 * A hook gets an OpCtx for one node.  infer hooks set the dtype and shape
 * of every output with op_set_out() (a dim they cannot know is -1, and
 * VF_DATA_DEP marks one that depends on data values); fold hooks compute
 * the outputs' contents from constant inputs with op_set_const().  On a
 * user-visible problem a hook returns op_error(c, ...), which names the
 * node and op.
 *
 * The infer pass (passes/infer.c) resets a node's outputs, calls its infer
 * hook and then, if every output is static and at most fold_limit bytes,
 * its fold hook; a fold hook that cannot fold (an input not constant)
 * returns 0 and sets nothing.  Hooks see inputs of unknown rank (-1) and
 * unknown dims (-1) and must pass them on as unknown, never guess.
 */
#ifndef GEARC_OPIMPL_H
#define GEARC_OPIMPL_H

#include "../ir.h"

typedef struct OpCtx {
	Model *model;
	Graph *g;
	Node *n;
	int64_t opset;	    /* default-domain opset version */
	int64_t fold_limit; /* max bytes of a folded output */
} OpCtx;

/* Input i, or NULL if omitted or past the end. */
Value *op_in(OpCtx *c, int i);
/* Constant contents of input i, or NULL if not known. */
const Tensor *op_const_in(OpCtx *c, int i);
/* Output i, or NULL if omitted or past the end. */
Value *op_out(OpCtx *c, int i);
/* Sets output i's dtype and shape (no-op if the output is omitted). */
void op_set_out(OpCtx *c, int i, int dtype, const Shape *s);
/* Sets output i's contents (and so its dtype and shape). */
void op_set_const(OpCtx *c, int i, const Tensor *t);
/* Formats "node 'NAME' (OP): <message>" as the error; returns -1. */
int op_error(OpCtx *c, const char *fmt, ...) PRINTF_LIKE(2, 3);

/* ---- helpers shared by hooks (common.c) ------------------------------- */

/* Sets of dtypes as bit masks, for op_check_dtype(). */
#define DTS(t) (1u << (t))
#define DTS_FLOAT \
	(DTS(DT_FLOAT16) | DTS(DT_FLOAT) | DTS(DT_DOUBLE) | DTS(DT_BFLOAT16))
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

/* A new zero-filled tensor of dtype dt and static shape s for a fold hook
 * to fill and pass to op_set_const().  It is allocated from the graph's
 * arena (c->g->arena): gear branches are specialised on several threads,
 * each with its own arena, so hooks must never allocate elsewhere.  NULL
 * with an error (naming the node) if the size overflows. */
Tensor *op_new_tensor(OpCtx *c, int dt, const Shape *s);
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

/* ---- hooks (one line per hook, grouped by family file) ---------------- */

/* elementwise.c */
int infer_unary_float(OpCtx *c);   /* T in float types */
int infer_unary_signed(OpCtx *c);  /* T in float and signed int types */
int infer_unary_numeric(OpCtx *c); /* T in every numeric type */
int infer_identity(OpCtx *c);
int fold_identity(OpCtx *c);
int infer_clip(OpCtx *c);
int infer_dropout(OpCtx *c);
int infer_softmax(OpCtx *c); /* Softmax, LogSoftmax */
int infer_arith(OpCtx *c);   /* Add, Sub, Mul, Div */
int infer_pow(OpCtx *c);
int infer_prelu(OpCtx *c);

/* nn.c */
int infer_conv(OpCtx *c);
int infer_maxpool(OpCtx *c);
int infer_avgpool(OpCtx *c);
int infer_global_pool(OpCtx *c); /* GlobalAveragePool, GlobalMaxPool */
int infer_batchnorm(OpCtx *c);

/* tensor.c */
int infer_constant(OpCtx *c);
int infer_reshape(OpCtx *c);
int infer_flatten(OpCtx *c);
int infer_transpose(OpCtx *c);
int infer_concat(OpCtx *c);
int infer_shape(OpCtx *c);
int fold_shape(OpCtx *c);
int infer_size(OpCtx *c);
int fold_size(OpCtx *c);

/* math.c */
int infer_gemm(OpCtx *c);
int infer_matmul(OpCtx *c);

/* -- elementwise family: elementwise.c, logic.c --------------------------- */

/* -- tensor family: tensor.c, gather.c ------------------------------------ */

/* -- nn family: nn.c, norm.c, reduce.c, resize.c, rnn.c, misc.c ---------- */

/* nn.c */
int infer_conv_integer(OpCtx *c);
int infer_qlinear_conv(OpCtx *c);
int infer_conv_transpose(OpCtx *c);
int infer_lppool(OpCtx *c);
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
int infer_instance_norm(OpCtx *c);
int infer_layer_norm(OpCtx *c);
int infer_lrn(OpCtx *c);
int infer_mvn(OpCtx *c);
int infer_lp_norm(OpCtx *c);

/* reduce.c */
int infer_reduce(OpCtx *c); /* ReduceL1 ... ReduceSumSquare */
int fold_reduce(OpCtx *c);
int infer_argminmax(OpCtx *c); /* ArgMax, ArgMin */
int fold_argminmax(OpCtx *c);
int infer_topk(OpCtx *c);
int fold_topk(OpCtx *c);

/* resize.c */
int infer_resize(OpCtx *c);
int infer_upsample(OpCtx *c);
int infer_grid_sample(OpCtx *c);

/* rnn.c */
int infer_rnn(OpCtx *c); /* RNN, GRU, LSTM */

/* misc.c */
int infer_quantize_linear(OpCtx *c);
int fold_quantize_linear(OpCtx *c);
int infer_dequantize_linear(OpCtx *c);
int fold_dequantize_linear(OpCtx *c);
int infer_dynamic_quantize_linear(OpCtx *c);
int infer_matmul_integer(OpCtx *c);
int infer_qlinear_matmul(OpCtx *c);
int infer_einsum(OpCtx *c);
int infer_det(OpCtx *c);
int infer_dft(OpCtx *c);
int infer_stft(OpCtx *c);
int infer_window(OpCtx *c); /* HannWindow, HammingWindow, BlackmanWindow */
int fold_window(OpCtx *c);
int infer_mel_weight_matrix(OpCtx *c);
int infer_nll_loss(OpCtx *c);
int infer_sce_loss(OpCtx *c);
int infer_nms(OpCtx *c);

/* -- control flow and sequences: control.c, sequence.c -------------------- */

/* ---- subgraphs (passes/infer.c) ---------------------------------------- */

/* Infers subgraph sub of c's node with c's settings (for If, Loop, Scan
 * hooks): the hook first sets the dtypes and shapes of sub's inputs;
 * outer references take their values from the parent graph. */
int op_infer_subgraph(OpCtx *c, Graph *sub);

#endif
