/*
 * compiler/ops.h - the one op table (QBE's ops.h, ggml's op-name table).
 *
 * GEARC_OPS lists every ONNX operator of the default domain gearc knows,
 * one line each: X(Name, infer, fold, view).
 *   infer  shape/dtype inference hook (compiler/ops/<family>.c), or 0;
 *   fold   constant-folding hook, or 0;
 *   view   VIEW_ALIAS if the op's output is a pure view of input 0
 *          (shares its buffer in the memory plan), else VIEW_NONE.
 * GEARC_OWN_OPS lists gearc's own ops (domain "ai.gearc"): the gear
 * selector and the Case that the gear compile puts in the root graph.
 *
 * Adding an op: one line here, one hook function in the family's file,
 * its prototype in compiler/ops/opimpl.h.
 */
#ifndef GEARC_OPS_H
#define GEARC_OPS_H

struct OpCtx;
typedef int (*OpFn)(struct OpCtx *c);

typedef enum { VIEW_NONE = 0, VIEW_ALIAS } ViewKind;

#define GEARC_DOMAIN "ai.gearc"

#define GEARC_OPS(X) \
	X(Abs,                       infer_unary_numeric, 0, VIEW_NONE) \
	X(Acos,                      0, 0, VIEW_NONE) \
	X(Acosh,                     0, 0, VIEW_NONE) \
	X(Add,                       infer_arith, 0, VIEW_NONE) \
	X(And,                       0, 0, VIEW_NONE) \
	X(ArgMax,                    infer_argminmax, fold_argminmax, VIEW_NONE) \
	X(ArgMin,                    infer_argminmax, fold_argminmax, VIEW_NONE) \
	X(Asin,                      0, 0, VIEW_NONE) \
	X(Asinh,                     0, 0, VIEW_NONE) \
	X(Atan,                      0, 0, VIEW_NONE) \
	X(Atanh,                     0, 0, VIEW_NONE) \
	X(AveragePool,               infer_avgpool, 0, VIEW_NONE) \
	X(BatchNormalization,        infer_batchnorm, 0, VIEW_NONE) \
	X(Bernoulli,                 0, 0, VIEW_NONE) \
	X(BitShift,                  0, 0, VIEW_NONE) \
	X(BlackmanWindow,            infer_window, fold_window, VIEW_NONE) \
	X(Cast,                      0, 0, VIEW_NONE) \
	X(CastLike,                  0, 0, VIEW_NONE) \
	X(Ceil,                      infer_unary_float, 0, VIEW_NONE) \
	X(Celu,                      0, 0, VIEW_NONE) \
	X(Clip,                      infer_clip, 0, VIEW_NONE) \
	X(Compress,                  0, 0, VIEW_NONE) \
	X(Concat,                    infer_concat, 0, VIEW_NONE) \
	X(ConcatFromSequence,        0, 0, VIEW_NONE) \
	X(Constant,                  infer_constant, 0, VIEW_NONE) \
	X(ConstantOfShape,           0, 0, VIEW_NONE) \
	X(Conv,                      infer_conv, 0, VIEW_NONE) \
	X(ConvInteger,               infer_conv_integer, 0, VIEW_NONE) \
	X(ConvTranspose,             infer_conv_transpose, 0, VIEW_NONE) \
	X(Cos,                       0, 0, VIEW_NONE) \
	X(Cosh,                      0, 0, VIEW_NONE) \
	X(CumSum,                    0, 0, VIEW_NONE) \
	X(DFT,                       infer_dft, 0, VIEW_NONE) \
	X(DepthToSpace,              0, 0, VIEW_NONE) \
	X(DequantizeLinear,          infer_dequantize_linear, fold_dequantize_linear, VIEW_NONE) \
	X(Det,                       infer_det, 0, VIEW_NONE) \
	X(Div,                       infer_arith, 0, VIEW_NONE) \
	X(Dropout,                   infer_dropout, 0, VIEW_NONE) \
	X(DynamicQuantizeLinear,     infer_dynamic_quantize_linear, 0, VIEW_NONE) \
	X(Einsum,                    infer_einsum, 0, VIEW_NONE) \
	X(Elu,                       infer_unary_float, 0, VIEW_NONE) \
	X(Equal,                     0, 0, VIEW_NONE) \
	X(Erf,                       0, 0, VIEW_NONE) \
	X(Exp,                       infer_unary_float, 0, VIEW_NONE) \
	X(Expand,                    0, 0, VIEW_NONE) \
	X(EyeLike,                   0, 0, VIEW_NONE) \
	X(Flatten,                   infer_flatten, 0, VIEW_ALIAS) \
	X(Floor,                     infer_unary_float, 0, VIEW_NONE) \
	X(GRU,                       infer_rnn, 0, VIEW_NONE) \
	X(Gather,                    0, 0, VIEW_NONE) \
	X(GatherElements,            0, 0, VIEW_NONE) \
	X(GatherND,                  0, 0, VIEW_NONE) \
	X(Gemm,                      infer_gemm, 0, VIEW_NONE) \
	X(GlobalAveragePool,         infer_global_pool, 0, VIEW_NONE) \
	X(GlobalLpPool,              infer_global_pool, 0, VIEW_NONE) \
	X(GlobalMaxPool,             infer_global_pool, 0, VIEW_NONE) \
	X(Greater,                   0, 0, VIEW_NONE) \
	X(GreaterOrEqual,            0, 0, VIEW_NONE) \
	X(GridSample,                infer_grid_sample, 0, VIEW_NONE) \
	X(HammingWindow,             infer_window, fold_window, VIEW_NONE) \
	X(HannWindow,                infer_window, fold_window, VIEW_NONE) \
	X(HardSigmoid,               0, 0, VIEW_NONE) \
	X(HardSwish,                 0, 0, VIEW_NONE) \
	X(Hardmax,                   0, 0, VIEW_NONE) \
	X(Identity,                  infer_identity, fold_identity, VIEW_ALIAS) \
	X(If,                        0, 0, VIEW_NONE) \
	X(InstanceNormalization,     infer_instance_norm, 0, VIEW_NONE) \
	X(IsInf,                     0, 0, VIEW_NONE) \
	X(IsNaN,                     0, 0, VIEW_NONE) \
	X(LRN,                       infer_lrn, 0, VIEW_NONE) \
	X(LSTM,                      infer_rnn, 0, VIEW_NONE) \
	X(LayerNormalization,        infer_layer_norm, 0, VIEW_NONE) \
	X(LeakyRelu,                 infer_unary_float, 0, VIEW_NONE) \
	X(Less,                      0, 0, VIEW_NONE) \
	X(LessOrEqual,               0, 0, VIEW_NONE) \
	X(Log,                       infer_unary_float, 0, VIEW_NONE) \
	X(LogSoftmax,                infer_softmax, 0, VIEW_NONE) \
	X(Loop,                      0, 0, VIEW_NONE) \
	X(LpNormalization,           infer_lp_norm, 0, VIEW_NONE) \
	X(LpPool,                    infer_lppool, 0, VIEW_NONE) \
	X(MatMul,                    infer_matmul, 0, VIEW_NONE) \
	X(MatMulInteger,             infer_matmul_integer, 0, VIEW_NONE) \
	X(Max,                       0, 0, VIEW_NONE) \
	X(MaxPool,                   infer_maxpool, 0, VIEW_NONE) \
	X(MaxRoiPool,                infer_max_roi_pool, 0, VIEW_NONE) \
	X(MaxUnpool,                 infer_max_unpool, 0, VIEW_NONE) \
	X(Mean,                      0, 0, VIEW_NONE) \
	X(MeanVarianceNormalization, infer_mvn, 0, VIEW_NONE) \
	X(MelWeightMatrix,           infer_mel_weight_matrix, 0, VIEW_NONE) \
	X(Min,                       0, 0, VIEW_NONE) \
	X(Mish,                      0, 0, VIEW_NONE) \
	X(Mod,                       0, 0, VIEW_NONE) \
	X(Mul,                       infer_arith, 0, VIEW_NONE) \
	X(Multinomial,               0, 0, VIEW_NONE) \
	X(Neg,                       infer_unary_signed, 0, VIEW_NONE) \
	X(NegativeLogLikelihoodLoss, infer_nll_loss, 0, VIEW_NONE) \
	X(NonMaxSuppression,         infer_nms, 0, VIEW_NONE) \
	X(NonZero,                   0, 0, VIEW_NONE) \
	X(Not,                       0, 0, VIEW_NONE) \
	X(OneHot,                    0, 0, VIEW_NONE) \
	X(Optional,                  0, 0, VIEW_NONE) \
	X(OptionalGetElement,        0, 0, VIEW_NONE) \
	X(OptionalHasElement,        0, 0, VIEW_NONE) \
	X(Or,                        0, 0, VIEW_NONE) \
	X(PRelu,                     infer_prelu, 0, VIEW_NONE) \
	X(Pad,                       0, 0, VIEW_NONE) \
	X(Pow,                       infer_pow, 0, VIEW_NONE) \
	X(QLinearConv,               infer_qlinear_conv, 0, VIEW_NONE) \
	X(QLinearMatMul,             infer_qlinear_matmul, 0, VIEW_NONE) \
	X(QuantizeLinear,            infer_quantize_linear, fold_quantize_linear, VIEW_NONE) \
	X(RNN,                       infer_rnn, 0, VIEW_NONE) \
	X(RandomNormal,              0, 0, VIEW_NONE) \
	X(RandomNormalLike,          0, 0, VIEW_NONE) \
	X(RandomUniform,             0, 0, VIEW_NONE) \
	X(RandomUniformLike,         0, 0, VIEW_NONE) \
	X(Range,                     0, 0, VIEW_NONE) \
	X(Reciprocal,                0, 0, VIEW_NONE) \
	X(ReduceL1,                  infer_reduce, fold_reduce, VIEW_NONE) \
	X(ReduceL2,                  infer_reduce, fold_reduce, VIEW_NONE) \
	X(ReduceLogSum,              infer_reduce, fold_reduce, VIEW_NONE) \
	X(ReduceLogSumExp,           infer_reduce, fold_reduce, VIEW_NONE) \
	X(ReduceMax,                 infer_reduce, fold_reduce, VIEW_NONE) \
	X(ReduceMean,                infer_reduce, fold_reduce, VIEW_NONE) \
	X(ReduceMin,                 infer_reduce, fold_reduce, VIEW_NONE) \
	X(ReduceProd,                infer_reduce, fold_reduce, VIEW_NONE) \
	X(ReduceSum,                 infer_reduce, fold_reduce, VIEW_NONE) \
	X(ReduceSumSquare,           infer_reduce, fold_reduce, VIEW_NONE) \
	X(Relu,                      infer_unary_signed, 0, VIEW_NONE) \
	X(Reshape,                   infer_reshape, 0, VIEW_ALIAS) \
	X(Resize,                    infer_resize, 0, VIEW_NONE) \
	X(ReverseSequence,           0, 0, VIEW_NONE) \
	X(RoiAlign,                  infer_roi_align, 0, VIEW_NONE) \
	X(Round,                     0, 0, VIEW_NONE) \
	X(STFT,                      infer_stft, 0, VIEW_NONE) \
	X(Scan,                      0, 0, VIEW_NONE) \
	X(Scatter,                   0, 0, VIEW_NONE) \
	X(ScatterElements,           0, 0, VIEW_NONE) \
	X(ScatterND,                 0, 0, VIEW_NONE) \
	X(Selu,                      infer_unary_float, 0, VIEW_NONE) \
	X(SequenceAt,                0, 0, VIEW_NONE) \
	X(SequenceConstruct,         0, 0, VIEW_NONE) \
	X(SequenceEmpty,             0, 0, VIEW_NONE) \
	X(SequenceErase,             0, 0, VIEW_NONE) \
	X(SequenceInsert,            0, 0, VIEW_NONE) \
	X(SequenceLength,            0, 0, VIEW_NONE) \
	X(SequenceMap,               0, 0, VIEW_NONE) \
	X(Shape,                     infer_shape, fold_shape, VIEW_NONE) \
	X(Shrink,                    0, 0, VIEW_NONE) \
	X(Sigmoid,                   infer_unary_float, 0, VIEW_NONE) \
	X(Sign,                      0, 0, VIEW_NONE) \
	X(Sin,                       0, 0, VIEW_NONE) \
	X(Sinh,                      0, 0, VIEW_NONE) \
	X(Size,                      infer_size, fold_size, VIEW_NONE) \
	X(Slice,                     0, 0, VIEW_NONE) \
	X(Softmax,                   infer_softmax, 0, VIEW_NONE) \
	X(SoftmaxCrossEntropyLoss,   infer_sce_loss, 0, VIEW_NONE) \
	X(Softplus,                  infer_unary_float, 0, VIEW_NONE) \
	X(Softsign,                  infer_unary_float, 0, VIEW_NONE) \
	X(SpaceToDepth,              0, 0, VIEW_NONE) \
	X(Split,                     0, 0, VIEW_NONE) \
	X(SplitToSequence,           0, 0, VIEW_NONE) \
	X(Sqrt,                      infer_unary_float, 0, VIEW_NONE) \
	X(Squeeze,                   0, 0, VIEW_ALIAS) \
	X(StringNormalizer,          0, 0, VIEW_NONE) \
	X(Sub,                       infer_arith, 0, VIEW_NONE) \
	X(Sum,                       0, 0, VIEW_NONE) \
	X(Tan,                       0, 0, VIEW_NONE) \
	X(Tanh,                      infer_unary_float, 0, VIEW_NONE) \
	X(TfIdfVectorizer,           0, 0, VIEW_NONE) \
	X(ThresholdedRelu,           0, 0, VIEW_NONE) \
	X(Tile,                      0, 0, VIEW_NONE) \
	X(TopK,                      infer_topk, fold_topk, VIEW_NONE) \
	X(Transpose,                 infer_transpose, 0, VIEW_NONE) \
	X(Trilu,                     0, 0, VIEW_NONE) \
	X(Unique,                    0, 0, VIEW_NONE) \
	X(Unsqueeze,                 0, 0, VIEW_ALIAS) \
	X(Upsample,                  infer_upsample, 0, VIEW_NONE) \
	X(Where,                     0, 0, VIEW_NONE) \
	X(Xor,                       0, 0, VIEW_NONE)

#define GEARC_OWN_OPS(X) \
	X(MapIndex,        0, 0, VIEW_NONE) \
	X(Case,            0, 0, VIEW_NONE) \
	X(PartitionedCall, 0, 0, VIEW_NONE)

typedef enum {
	OP_UNKNOWN = 0,
#define X(name, infer, fold, view) OP_##name,
	GEARC_OPS(X)
	GEARC_OWN_OPS(X)
#undef X
	OP_COUNT
} Op;

typedef struct OpInfo {
	const char *name;
	const char *domain; /* "" or GEARC_DOMAIN */
	OpFn infer, fold;
	ViewKind view;
} OpInfo;

extern const OpInfo op_info[OP_COUNT];

/* The Op for (domain, op_type); "" and "ai.onnx" are the default domain.
 * OP_UNKNOWN if gearc does not know it. */
int op_lookup(const char *domain, const char *op_type);

#endif
