/*
 * runtime/fast.c - the kernel registry: which kernel runs each node
 * (rt.h KernelRow).  The rows are tried in order when a gear is
 * prepared; the first whose op and input-0 dtype match and whose
 * match takes the node at its planned shapes runs it.  The plain-C
 * kernels (runtime/direct.c, chanwise.c, quant.c, convert.c) come
 * first, then oneDNN's (runtime/dnnl.c), then the reference kernels
 * (the op table's run hook) and evaluation, which take every node the
 * others leave.  A fast path is one row here: its match, its build if
 * it has one (what depends on its tensors' layouts), the layouts it
 * takes, its name (what GEARRT_PROFILE prints and tests ask for).
 * Neighbours may share work: a ConvTranspose applies the activation
 * after it (fold_into_deconv).  Every task is matched, then
 * runtime/layout.c decides the layouts tensors take between kernels,
 * then every task is built (exec.c rt_prepare).  gearrt_options.no_fast (GEARRT_NO_FAST=1 to
 * gearc run and the Python module) leaves only the reference rows: the
 * test oracle (tests/test_fast.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "chanwise.h"
#include "contrib.h"
#include "convert.h"
#include "direct.h"
#include "dnnl.h"
#include "ew.h"
#include "intew.h"
#include "quant.h"
#include "rt.h"
#include "gemv.h"
#include "small.h"

/* Value v is read by node n alone and is no graph output. */
static bool read_by_only(const Graph *g, ValId v, const Node *n)
{
	for (int32_t k = 0; k < g->noutputs; k++)
		if (g->outputs[k] == v)
			return false;
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *m = &g->nodes[i];
		if (node_has_subgraphs(m))
			return false; /* a subgraph may read v */
		for (int32_t k = 0; k < m->ninputs; k++)
			if (m->inputs[k] == v && m != n)
				return false;
	}
	return true;
}

/* The task before t whose first output is value v (t's input 0), of
 * t's output's shape and dtype, read by t alone; else NULL.  Tasks are
 * matched in run order, so its kernel is matched when t's rows look. */
static Task *producer_of_first(Prepared *p, Task *t, ValId v)
{
	const Node *n = t->n;
	if (v < 0 || !p->tasks || t < p->tasks ||
	    t >= p->tasks + p->ntasks || n->noutputs != 1 || !t->out[0] ||
	    t->out[0]->dtype != p->vt[v].dtype ||
	    !shape_equal(&t->out[0]->shape, &p->vt[v].shape))
		return NULL;
	Task *u = t;
	while (u-- > p->tasks)
		if (u->n->noutputs > 0 && u->n->outputs[0] == v)
			break;
	return u >= p->tasks && u->out[0] && read_by_only(p->g, v, n) ? u
									: NULL;
}

/* producer_of_first of t's one input. */
static Task *sole_producer(Prepared *p, Task *t)
{
	const Node *n = t->n;
	return producer_of_first(p, t, n->ninputs == 1 ? n->inputs[0] : -1);
}

/* t's activation taken by its producer u, which writes t's output
 * tensor instead of its own (never read now); t does nothing. */
static int folded(Task *u, Task *t, FastKernel *k)
{
	u->out[0] = t->out[0];
	direct_noop(k);
	return 1;
}

/* A Relu or Sigmoid after a plain-C ConvTranspose (a row-major kernel,
 * which has no build): 1 if that kernel applies it, else 0. */
static int fold_into_deconv(RunCtx *s, Prepared *p, Task *t,
			    FastKernel *k)
{
	(void)s;
	Task *u = sole_producer(p, t);
	return u && direct_deconv_act(&u->fast, t->n->op == OP_Relu
							 ? DIRECT_RELU
							 : DIRECT_SIGMOID)
		       ? folded(u, t, k)
		       : 0;
}

/* A Relu after a BatchNormalization of chan_batchnorm (DenseNet's and
 * pre-activation ResNets' BatchNormalization -> Relu -> Conv): its
 * elementwise row joins its input's layout and its output's, so the
 * producer writes the output in the layout it writes its own. */
static int fold_into_batchnorm(RunCtx *s, Prepared *p, Task *t,
			       FastKernel *k)
{
	(void)s;
	Task *u = sole_producer(p, t);
	return u && chan_batchnorm_relu(&u->fast) ? folded(u, t, k) : 0;
}

/* Whether the planned bytes of value w overlap those of an input of u's
 * node: the plan may put a tensor where an input that dies at u was,
 * which u must not write while it reads its inputs in another order. */
static bool overlaps_inputs(const Prepared *p, const Task *u, ValId w)
{
	const uint8_t *a = p->vt[w].data;
	for (int32_t i = 0; a && i < u->n->ninputs; i++) {
		ValId v = u->n->inputs[i];
		const uint8_t *b = v >= 0 ? p->vt[v].data : NULL;
		if (b && a < b + p->vt[v].nbytes && b < a + p->vt[w].nbytes)
			return true;
	}
	return false;
}

/* A BatchNormalization of chan_batchnorm after a chan_concat that only
 * it reads (DenseNet's Concat -> BatchNormalization -> Relu): the concat
 * takes it in (chan_concat_batchnorm), where its output is not planned
 * over one of the concat's inputs. */
static int fold_into_concat(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	Task *u = t->n->ninputs > 0 ? producer_of_first(p, t, t->n->inputs[0])
				    : NULL;
	return u && !overlaps_inputs(p, u, t->n->outputs[0]) &&
		       chan_concat_batchnorm(&u->fast, s, p, t)
		       ? folded(u, t, k) : 0;
}

/* A Relu after a BatchNormalization a chan_concat took in: the concat
 * applies it. */
static int fold_into_concat_bn(RunCtx *s, Prepared *p, Task *t,
			       FastKernel *k)
{
	(void)s;
	Task *bn = sole_producer(p, t);
	Task *u = bn && bn->n->op == OP_BatchNormalization
			  ? producer_of_first(p, bn, bn->n->inputs[0]) : NULL;
	return u && u->out[0] == bn->out[0] &&
		       !overlaps_inputs(p, u, t->n->outputs[0]) &&
		       chan_batchnorm_relu(&u->fast)
		       ? folded(u, t, k) : 0;
}

/* Whether value v is a tensor of no elements. */
static bool empty_tensor(const Prepared *p, ValId v)
{
	const Value *x = &p->g->vals[v];
	return x->tkind == TK_TENSOR && shape_is_static(&x->shape) &&
	       shape_numel(&x->shape) == 0;
}

/* Ops whose reference kernel checks values it reads against the dims
 * (indices, k, a resize's scales, sizes of 0 for a non-empty axis among
 * them) and fails the run as ONNX Runtime does, also where the output is
 * empty: such a node runs its reference kernel, on every path. */
static bool checks_values(const Node *n)
{
	switch (n->op) {
	case OP_Gather: case OP_GatherElements: case OP_GatherND:
	case OP_Scatter: case OP_ScatterElements: case OP_ScatterND:
	case OP_OneHot: case OP_TopK: case OP_Resize: case OP_Upsample:
		return true;
	default:
		return false;
	}
}

/* Every output of t is a planned tensor of no elements: there is
 * nothing to compute, whatever the inputs hold (an empty x quantized
 * with a scale of 0, an integer division of nothing), so no kernel runs.
 * 1 if so, else 0. */
static int empty_outputs(RunCtx *s, Prepared *p, Task *t,
			 FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	if (checks_values(n)) /* its reference runs (degenerate) */
		return 0;
	for (int32_t i = 0; i < n->noutputs; i++)
		if (n->outputs[i] >= 0 &&
		    (!t->out[i] || !empty_tensor(p, n->outputs[i])))
			return 0;
	direct_noop(k);
	return 1;
}

/* Whether t computes something from a tensor of no elements that the
 * run makes (not a weight: an empty constant is how ONNX spells an
 * absent roi or scales): a sum over an empty axis (MatMul with K = 0), a
 * resize of an empty axis.  The fast kernels are made for the general
 * case and oneDNN divides by such lengths; the reference kernel defines
 * the degenerate one (zeros and a bias, or its refusal), so it runs such
 * a node. */
static bool degenerate(const Prepared *p, const Task *t)
{
	const Node *n = t->n;
	for (int32_t i = 0; i < n->ninputs; i++)
		if (n->inputs[i] >= 0 &&
		    p->g->vals[n->inputs[i]].kind != VAL_WEIGHT &&
		    empty_tensor(p, n->inputs[i]))
			return true;
	for (int32_t i = 0; checks_values(n) && i < n->noutputs; i++)
		if (n->outputs[i] >= 0 && empty_tensor(p, n->outputs[i]))
			return true;
	return false;
}

/* Whether t is a binary op broadcasting B the way opsets before 7 do
 * (broadcast=1: B aligned at 'axis', not at the end as numpy's): the
 * fast elementwise kernels broadcast as numpy, so its reference kernel
 * runs it. */
static bool legacy_broadcast(const RunCtx *s, const Task *t)
{
	int64_t opset = model_opset(s->model->m);
	return opset > 0 && opset < 7 && attr_int(t->n, "broadcast", 0);
}

/* The op's run hook computes the node on planned buffers (a Case or a
 * PartitionedCall runs its subgraph itself). */
static int reference(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s, (void)k;
	const Node *n = t->n;
	if (!n->op || !op_info[n->op].run ||
	    (node_has_subgraphs(n) && n->op != OP_Case &&
	     n->op != OP_PartitionedCall))
		return 0;
	for (int32_t i = 0; i < n->noutputs; i++)
		if (n->outputs[i] >= 0 && !p->cur[n->outputs[i]] && !t->seq)
			return 0;
	return 1;
}

/* Every node can be evaluated (passes/infer.c eval_node): the last row. */
static int evaluate(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s, (void)p, (void)t, (void)k;
	return 1;
}

/* Layouts: ROWS, a kernel of row-major tensors; EITHER, one whose match
 * records per slot which layouts it takes (rt.h SlotLayout), or, with
 * none recorded, an elementwise one (it computes element i from element
 * i in any order: layout.c joins its tensors into one layout). */
enum {
	F32 = KR_DT(DT_FLOAT),
	Q8 = KR_DT(DT_INT8) | KR_DT(DT_UINT8),
	U8 = KR_DT(DT_UINT8),
	B32 = KR_DT(DT_FLOAT) | KR_DT(DT_INT32) | KR_DT(DT_UINT32),
	IW = KR_DT(DT_INT8) | KR_DT(DT_UINT8) | KR_DT(DT_INT32) |
	     KR_DT(DT_INT64) | KR_DT(DT_FLOAT16),
	ANY = 0,
	ROWS = LAY_ROWS,
	EITHER = LAY_ROWS | LAY_NHWC,
};

/* A row whose kernel is whole once matched; the _B forms add a build. */
#define PLAIN(op, dt, lay, match, name) \
	{ OP_##op, KB_PLAIN, dt, lay, match, NULL, name }
#define PLAIN_B(op, dt, lay, match, build, name) \
	{ OP_##op, KB_PLAIN, dt, lay, match, build, name }
#define DNNL(op, dt, lay, match, name) \
	{ OP_##op, KB_DNNL, dt, lay, match, NULL, name }
#define DNNL_B(op, dt, lay, match, build, name) \
	{ OP_##op, KB_DNNL, dt, lay, match, build, name }

/* In order: the first row that takes a node runs it. */
static const KernelRow rows[] = {
	{ KR_ANY_OP, KB_PLAIN, ANY, EITHER, rt_alias_build, NULL, "exec.alias" },
	{ KR_ANY_OP, KB_PLAIN, ANY, EITHER, empty_outputs, NULL, "exec.empty" },
	PLAIN(Conv, F32, ROWS, small_dwconv, "small.dwconv"),
	PLAIN(Conv, F32, ROWS, direct_conv, "direct.conv"),
	PLAIN(FusedConv, F32, ROWS, direct_conv, "direct.conv"),
	PLAIN_B(Conv, F32, EITHER, chan_few_conv, chan_few_conv_build,
		"chan.conv"),
	PLAIN(ConvTranspose, F32, ROWS, direct_deconv, "direct.deconv"),
	PLAIN(Relu, F32, EITHER, fold_into_deconv, "direct.deconv_act"),
	PLAIN(Relu, F32, EITHER, fold_into_batchnorm, "chan.batchnorm_act"),
	PLAIN(Relu, F32, EITHER, fold_into_concat_bn, "chan.concat_bn_act"),
	PLAIN(Relu, F32, EITHER, direct_unary, "direct.relu"),
	PLAIN(Sigmoid, F32, EITHER, fold_into_deconv, "direct.deconv_act"),
	PLAIN(Sigmoid, F32, EITHER, direct_sigmoid, "direct.sigmoid"),
	PLAIN(FusedActivation, F32, EITHER, direct_act, "direct.act"),
	PLAIN(Softmax, F32, ROWS, direct_softmax, "direct.softmax"),
	PLAIN(LogSoftmax, F32, ROWS, direct_softmax, "direct.softmax"),
	PLAIN(Erf, F32, EITHER, direct_unary, "direct.erf"),
	PLAIN(Pow, F32, EITHER, direct_unary, "direct.square"),
	PLAIN(Cast, ANY, ROWS, convert_cast, "convert.cast"),
	PLAIN(Yuv420sp, U8, ROWS, direct_yuv420sp, "direct.yuv420sp"),
	PLAIN(MatMulInteger, Q8, ROWS, quant_matmul, "quant.matmul"),
	PLAIN(QLinearMatMul, Q8, ROWS, quant_matmul, "quant.matmul"),
	PLAIN(ConvInteger, Q8, ROWS, quant_conv, "quant.conv"),
	PLAIN_B(QLinearConv, Q8, EITHER, quant_conv, quant_conv_build,
		"quant.conv"),
	PLAIN(DynQuantMatMul, F32, ROWS, quant_dynquant, "quant.dynquant"),
	PLAIN(DynQuantConv, F32, ROWS, quant_dynquant, "quant.dynquant"),
	PLAIN(DynamicQuantizeLinear, F32, ROWS, quant_linear,
	      "quant.dynamic_quantize"),
	PLAIN(QuantizeLinear, F32, ROWS, quant_linear, "quant.quantize"),
	PLAIN(DequantizeLinear, Q8, ROWS, quant_linear, "quant.dequantize"),
	PLAIN(Add, F32, EITHER, direct_arith, "direct.arith"),
	PLAIN(Sub, F32, EITHER, direct_arith, "direct.arith"),
	PLAIN(Mul, F32, EITHER, direct_arith, "direct.arith"),
	PLAIN(Div, F32, EITHER, direct_arith, "direct.arith"),
	PLAIN_B(Add, F32, EITHER, chan_binary, chan_binary_build,
		"chan.binary"),
	PLAIN_B(Sub, F32, EITHER, chan_binary, chan_binary_build,
		"chan.binary"),
	PLAIN_B(Mul, F32, EITHER, chan_binary, chan_binary_build,
		"chan.binary"),
	PLAIN_B(Div, F32, EITHER, chan_binary, chan_binary_build,
		"chan.binary"),
	PLAIN_B(PRelu, F32, EITHER, chan_binary, chan_binary_build,
		"chan.binary"),
	PLAIN(BatchNormalization, F32, EITHER, fold_into_concat,
	      "chan.concat_bn"),
	PLAIN_B(BatchNormalization, F32, EITHER, chan_batchnorm,
		chan_batchnorm_build, "chan.batchnorm"),
	PLAIN(Add, IW, ROWS, intew_binary, "intew.binary"),
	PLAIN(Sub, IW, ROWS, intew_binary, "intew.binary"),
	PLAIN(Mul, IW, ROWS, intew_binary, "intew.binary"),
	PLAIN(Div, IW, ROWS, intew_binary, "intew.binary"),
	PLAIN(Max, IW, ROWS, intew_binary, "intew.binary"),
	PLAIN(Min, IW, ROWS, intew_binary, "intew.binary"),
	PLAIN(Equal, IW, ROWS, intew_binary, "intew.binary"),
	PLAIN(Less, IW, ROWS, intew_binary, "intew.binary"),
	PLAIN(Greater, IW, ROWS, intew_binary, "intew.binary"),
	PLAIN(Relu, IW, ROWS, intew_unary, "intew.unary"),
	PLAIN(Neg, IW, ROWS, intew_unary, "intew.unary"),
	PLAIN(Abs, IW, ROWS, intew_unary, "intew.unary"),
	PLAIN(Clip, IW, ROWS, intew_unary, "intew.unary"),
	PLAIN(Where, ANY, ROWS, intew_where, "intew.where"),
	/* float32 at any broadcast, and the unary ops (runtime/ew.c) */
	PLAIN(Add, F32, ROWS, ew_binary, "ew.binary"),
	PLAIN(Sub, F32, ROWS, ew_binary, "ew.binary"),
	PLAIN(Mul, F32, ROWS, ew_binary, "ew.binary"),
	PLAIN(Div, F32, ROWS, ew_binary, "ew.binary"),
	PLAIN(Max, F32, ROWS, ew_binary, "ew.binary"),
	PLAIN(Min, F32, ROWS, ew_binary, "ew.binary"),
	PLAIN(Pow, F32, ROWS, ew_binary, "ew.binary"),
	PLAIN(PRelu, F32, ROWS, ew_binary, "ew.binary"),
	PLAIN(Equal, F32, ROWS, ew_binary, "ew.binary"),
	PLAIN(Greater, F32, ROWS, ew_binary, "ew.binary"),
	PLAIN(GreaterOrEqual, F32, ROWS, ew_binary, "ew.binary"),
	PLAIN(Less, F32, ROWS, ew_binary, "ew.binary"),
	PLAIN(LessOrEqual, F32, ROWS, ew_binary, "ew.binary"),
	PLAIN(Tanh, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(LeakyRelu, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Elu, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Selu, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Softplus, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(HardSigmoid, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(HardSwish, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Mish, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Clip, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Reciprocal, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Softsign, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Floor, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Ceil, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Round, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Sign, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Celu, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(ThresholdedRelu, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Sin, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Cos, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Tan, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Asin, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Acos, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Atan, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Sinh, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Cosh, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Asinh, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Acosh, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(Atanh, F32, EITHER, ew_unary, "ew.unary"),
	PLAIN(LayerNormalization, F32, ROWS, direct_layernorm,
	      "direct.layernorm"),
	PLAIN(MS_SkipLayerNormalization, F32, ROWS, contrib_norm,
	      "contrib.norm"),
	PLAIN(MS_SkipSimplifiedLayerNormalization, F32, ROWS, contrib_norm,
	      "contrib.norm"),
	PLAIN(MS_SimplifiedLayerNormalization, F32, ROWS, contrib_norm,
	      "contrib.norm"),
	PLAIN(MS_Attention, F32, ROWS, contrib_attention, "contrib.attention"),
	PLAIN(MS_MultiHeadAttention, F32, ROWS, contrib_attention,
	      "contrib.attention"),
	PLAIN(MS_EmbedLayerNormalization, ANY, ROWS, contrib_embed,
	      "contrib.embed"),
	PLAIN(MS_RotaryEmbedding, F32, ROWS, contrib_rotary, "contrib.rotary"),
	PLAIN(MS_QLinearAdd, Q8, ROWS, contrib_qlinear_binary, "contrib.qbinary"),
	PLAIN(MS_QLinearMul, Q8, ROWS, contrib_qlinear_binary, "contrib.qbinary"),
	PLAIN(MS_QLinearSigmoid, Q8, ROWS, contrib_qlinear_table,
	      "contrib.qtable"),
	PLAIN(MS_QLinearLeakyRelu, Q8, ROWS, contrib_qlinear_table,
	      "contrib.qtable"),
	PLAIN(MS_QLinearConcat, ANY, ROWS, contrib_qlinear_concat,
	      "contrib.qconcat"),
	PLAIN(MS_QLinearGlobalAveragePool, Q8, ROWS, contrib_qlinear_gap,
	      "contrib.qgap"),
	PLAIN(MS_QLinearSoftmax, Q8, ROWS, contrib_qlinear_softmax,
	      "contrib.qsoftmax"),
	PLAIN(MS_QGemm, Q8, ROWS, contrib_qgemm, "contrib.qgemm"),
	PLAIN(MS_MatMulIntegerToFloat, Q8, ROWS, contrib_mm_int_float,
	      "contrib.qgemm"),
	PLAIN(MS_QLinearAveragePool, Q8, ROWS, contrib_qlinear_avgpool,
	      "contrib.qpool"),
	PLAIN(Sdpa, F32, ROWS, attn_sdpa, "attn.sdpa"),
	PLAIN_B(GlobalAveragePool, F32, EITHER, chan_gap, chan_gap_build,
		"chan.gap"),
	PLAIN_B(Concat, F32, EITHER, chan_concat, chan_concat_build,
		"chan.concat"),
	PLAIN_B(Concat, ANY, EITHER, small_concat, small_pieces_build,
		"small.concat"),
	PLAIN_B(Slice, F32, EITHER, small_chan_slice, small_pieces_build,
		"small.slice"),
	PLAIN(Slice, ANY, ROWS, small_move, "small.move"),
	PLAIN(Pad, ANY, ROWS, small_pad, "small.pad"),
	PLAIN(Pad, ANY, ROWS, small_move, "small.move"),
	PLAIN_B(Split, ANY, EITHER, small_split, small_pieces_build,
		"small.split"),
	PLAIN(Tile, ANY, ROWS, small_move, "small.move"),
	PLAIN(Expand, ANY, ROWS, small_move, "small.move"),
	PLAIN(ReduceMean, F32, ROWS, small_reduce, "small.reduce"),
	PLAIN(ReduceSum, F32, ROWS, small_reduce, "small.reduce"),
	PLAIN(Log, F32, ROWS, small_unary, "small.unary"),
	PLAIN(Sqrt, F32, ROWS, small_unary, "small.unary"),
	PLAIN(Neg, F32, ROWS, small_unary, "small.unary"),
	PLAIN(Abs, F32, ROWS, small_unary, "small.unary"),
	PLAIN(Exp, F32, ROWS, small_unary, "small.unary"),
	PLAIN_B(Transpose, B32, EITHER, direct_transpose,
		direct_transpose_build, "direct.transpose"),
	PLAIN_B(Resize, F32, EITHER, direct_resize, direct_resize_build,
		"direct.resize"),
	PLAIN_B(Resize, F32, EITHER, chan_resize, chan_resize_build,
		"chan.resize"),
	PLAIN_B(Gather, F32, EITHER, chan_gather, chan_gather_build,
		"chan.gather"),
	PLAIN(Gather, ANY, ROWS, direct_gather, "direct.gather"),
	PLAIN(ScatterND, ANY, ROWS, small_scatter, "small.scatter"),
	PLAIN(ScatterElements, ANY, ROWS, small_scatter, "small.scatter"),
	PLAIN(Scatter, ANY, ROWS, small_scatter, "small.scatter"),
	{ KR_ANY_OP, KB_PLAIN, ANY, EITHER, direct_view, NULL, "direct.view" },
	/* before the float32 kernels: a node marked reduced, where the CPU
	 * computes bfloat16 (rt_bf16) */
	DNNL_B(Conv, F32, EITHER, dnnl_fast_conv_bf16, dnnl_conv_build,
	       "dnnl.conv.bf16"),
	DNNL_B(FusedConv, F32, EITHER, dnnl_fast_conv_bf16, dnnl_conv_build,
	       "dnnl.conv.bf16"),
	DNNL_B(ConvTranspose, F32, EITHER, dnnl_fast_conv_bf16,
	       dnnl_conv_build, "dnnl.deconv.bf16"),
	DNNL(MatMul, F32, ROWS, dnnl_fast_matmul_bf16, "dnnl.matmul.bf16"),
	DNNL(FusedMatMul, F32, ROWS, dnnl_fast_matmul_bf16, "dnnl.matmul.bf16"),
	DNNL(Gemm, F32, ROWS, dnnl_fast_matmul_bf16, "dnnl.gemm.bf16"),
	DNNL(FusedGemm, F32, ROWS, dnnl_fast_matmul_bf16, "dnnl.gemm.bf16"),
	{ KR_ANY_OP, KB_PLAIN, ANY, ROWS, direct_copy, NULL, "direct.copy" },
	PLAIN_B(Conv, F32, EITHER, chan_pw_conv, chan_pw_conv_build,
		"chan.pwconv"),
	PLAIN_B(FusedConv, F32, EITHER, chan_pw_conv, chan_pw_conv_build,
		"chan.pwconv"),
	PLAIN_B(Conv, F32, EITHER, chan_wino_conv, chan_wino_conv_build,
		"chan.wino"),
	PLAIN_B(FusedConv, F32, EITHER, chan_wino_conv, chan_wino_conv_build,
		"chan.wino"),
	DNNL_B(Conv, F32, EITHER, dnnl_fast_conv, dnnl_conv_build,
	       "dnnl.conv"),
	DNNL_B(FusedConv, F32, EITHER, dnnl_fast_conv, dnnl_conv_build,
	       "dnnl.conv"),
	DNNL_B(ConvTranspose, F32, EITHER, dnnl_fast_conv, dnnl_conv_build,
	       "dnnl.deconv"),
	/* one row by constant weights: a GEMV, not a GEMM (runtime/gemv.c) */
	PLAIN(MatMul, F32, ROWS, gemv_match, "gemv"),
	PLAIN(FusedMatMul, F32, ROWS, gemv_match, "gemv"),
	PLAIN(Gemm, F32, ROWS, gemv_match, "gemv"),
	PLAIN(FusedGemm, F32, ROWS, gemv_match, "gemv"),
	/* many rows on AVX2: oneDNN's 1x1 convolution (jit_1x1) */
	DNNL(MatMul, F32, ROWS, dnnl_fast_matmul_conv, "dnnl.mmconv"),
	DNNL(FusedMatMul, F32, ROWS, dnnl_fast_matmul_conv, "dnnl.mmconv"),
	DNNL(Gemm, F32, ROWS, dnnl_fast_matmul_conv, "dnnl.mmconv"),
	DNNL(FusedGemm, F32, ROWS, dnnl_fast_matmul_conv, "dnnl.mmconv"),
	/* many rows, without AVX-512: tiles of runtime/pw_simd.h */
	PLAIN(MatMul, F32, ROWS, gemm_match, "gemm"),
	PLAIN(FusedMatMul, F32, ROWS, gemm_match, "gemm"),
	PLAIN(Gemm, F32, ROWS, gemm_match, "gemm"),
	PLAIN(FusedGemm, F32, ROWS, gemm_match, "gemm"),
	DNNL(MatMul, F32, ROWS, dnnl_fast_matmul, "dnnl.matmul"),
	DNNL(FusedMatMul, F32, ROWS, dnnl_fast_matmul, "dnnl.matmul"),
	DNNL(Gemm, F32, ROWS, dnnl_fast_matmul, "dnnl.gemm"),
	DNNL(FusedGemm, F32, ROWS, dnnl_fast_matmul, "dnnl.gemm"),
	PLAIN_B(MaxPool, F32, EITHER, chan_pool, chan_pool_build, "chan.pool"),
	PLAIN_B(AveragePool, F32, EITHER, chan_pool, chan_pool_build,
		"chan.pool"),
	DNNL_B(MaxPool, F32, EITHER, dnnl_fast_pool, dnnl_xy_build,
	       "dnnl.pool"),
	DNNL_B(AveragePool, F32, EITHER, dnnl_fast_pool, dnnl_xy_build,
	       "dnnl.pool"),
	DNNL_B(GlobalAveragePool, F32, EITHER, dnnl_fast_pool, dnnl_xy_build,
	       "dnnl.pool"),
	PLAIN(LSTM, F32, ROWS, small_lstm_packed, "small.lstm"),
	DNNL(LSTM, F32, ROWS, dnnl_fast_rnn, "dnnl.rnn"),
	PLAIN(GRU, F32, ROWS, small_gru_packed, "small.gru"),
	DNNL(GRU, F32, ROWS, dnnl_fast_rnn, "dnnl.rnn"),
	DNNL(RNN, F32, ROWS, dnnl_fast_rnn, "dnnl.rnn"),
	/* after oneDNN: the LSTMs it leaves (runtime/small.c) */
	PLAIN(LSTM, F32, ROWS, small_lstm, "small.lstm"),
	DNNL_B(Resize, F32, EITHER, dnnl_fast_resize, dnnl_xy_build,
	       "dnnl.resize"),
	{ KR_ANY_OP, KB_REFERENCE, ANY, EITHER, reference, NULL, "ref" },
	{ KR_ANY_OP, KB_EVAL, ANY, ROWS, evaluate, NULL, "eval" },
};

static bool row_matches(const KernelRow *r, const Prepared *p,
			const Task *t)
{
	const Node *n = t->n;
	if (r->op != KR_ANY_OP && r->op != n->op)
		return false;
	int dt = n->ninputs > 0 && n->inputs[0] >= 0
			 ? p->g->vals[n->inputs[0]].dtype
			 : DT_UNDEFINED;
	return !r->dtypes || (r->dtypes & KR_DT(dt));
}

/* A fast row may take t: fast paths on, and t's outputs planned. */
static bool fast_allowed(const RunCtx *s, const Task *t)
{
	return !s->no_fast && t->n->noutputs >= 1 && t->out[0];
}

/* t's name: its row's, and the variant of the kernel if it says. */
static void name_task(Task *t)
{
	const char *v = rt_fast(t) ? t->fast.variant : NULL;
	snprintf(t->name, sizeof(t->name), v && *v ? "%s.%s" : "%s",
		 t->kernel->name, v);
}

/* Tries row r on task t: 1 if its match takes t (t->kernel, t->fast
 * set), 0 if not (nothing kept), -1 with an error. */
static int try_row(RunCtx *s, Prepared *p, Task *t,
		   const KernelRow *r)
{
	FastKernel k = { 0 };
	int rc = r->match(s, p, t, &k);
	if (rc < 0 || (rc && t->lay && !(r->layouts & LAY_NHWC))) {
		if (rc > 0 && k.free)
			k.free(k.state);
		free(t->lay);
		t->lay = NULL;
		return rc < 0 ? -1
			      : error("node '%s' (%s): kernel %s takes NHWC "
				      "tensors its registry row does not "
				      "declare", t->n->name, t->n->op_type,
				      r->name);
	}
	if (!rc) {
		free(t->lay);
		t->lay = NULL;
		return 0;
	}
	if (t->fast.free)
		t->fast.free(t->fast.state);
	t->kernel = r;
	t->fast = k;
	name_task(t);
	return 1;
}

/* Gives t the first row from r on that takes it: 0, or -1 with an
 * error. */
static int choose_from(RunCtx *s, Prepared *p, Task *t, const KernelRow *r)
{
	bool fast = t->alias ||
		    (fast_allowed(s, t) && reference(s, p, t, NULL) == 1 &&
		     !legacy_broadcast(s, t) &&
		     (empty_outputs(s, p, t, &(FastKernel){ 0 }) ||
		      !degenerate(p, t)));
	free(t->lay);
	t->lay = NULL;
	for (;; r++) {
		bool is_fast = r->backend == KB_PLAIN || r->backend == KB_DNNL;
		if ((is_fast && !fast) || !row_matches(r, p, t))
			continue;
		int rc = try_row(s, p, t, r); /* evaluation takes every node */
		if (rc)
			return rc < 0 ? -1 : 0;
	}
}

int rt_kernel_choose(RunCtx *s, Prepared *p, Task *t)
{
	return choose_from(s, p, t, rows);
}

/* Whether every tensor t reads or writes is row-major. */
static bool all_rows(const Prepared *p, const Task *t)
{
	for (int32_t i = 0; i < t->n->ninputs; i++)
		if (rt_nhwc(p, t->n->inputs[i]))
			return false;
	for (int32_t i = 0; i < t->n->noutputs; i++)
		if (rt_nhwc(p, t->n->outputs[i]))
			return false;
	return true;
}

int rt_kernel_move(RunCtx *s, Prepared *p, Task *t)
{
	for (const KernelRow *r = t->kernel + 1;
	     r->backend == KB_PLAIN || r->backend == KB_DNNL; r++) {
		if (!(r->layouts & LAY_NHWC) || !row_matches(r, p, t))
			continue;
		int rc = try_row(s, p, t, r);
		if (rc)
			return rc;
	}
	return 0;
}

int rt_kernel_build(RunCtx *s, Prepared *p, Task *t)
{
	int rc = t->kernel->build ? t->kernel->build(s, p, t) : 0;
	/* oneDNN refused at its build what its match took: where t's
	 * tensors are row-major, any later row may run it (its tensors
	 * stay as decided) */
	if (rc && t->kernel->backend == KB_DNNL && all_rows(p, t) &&
	    choose_from(s, p, t, t->kernel + 1) == 0)
		rc = t->kernel->build ? t->kernel->build(s, p, t) : 0;
	name_task(t); /* the build may choose the variant */
	if (rc == 0)
		return 0;
	return error_prefix("node '%s' (%s)", t->n->name, t->n->op_type);
}

SlotLayout *rt_task_slots(Task *t)
{
	size_t n = (size_t)t->n->ninputs + (size_t)t->n->noutputs + 1;
	free(t->lay);
	t->lay = xmalloc(n * sizeof(*t->lay));
	memset(t->lay, 0, n * sizeof(*t->lay));
	return t->lay;
}

const char *rt_kernel_name(const Task *t)
{
	return !t->kernel ? "" : t->name[0] ? t->name : t->kernel->name;
}
