/*
 * compiler/ops.h - the one op table (QBE's ops.h, ggml's op-name table).
 *
 * GEARC_OPS lists every ONNX operator of the default domain gearc knows,
 * one line each: X(Name, infer, run, view).
 *   infer  shape/dtype inference hook (compiler/ops/<family>.c), or 0;
 *   run    the kernel: computes the outputs from the inputs' contents, or
 *          0.  The compiler runs it on constant inputs (constant folding,
 *          passes/infer.c); the runtime runs it on the tensors it binds
 *          (runtime/), so folding and execution share one implementation
 *          of each op's semantics;
 *   view   VIEW_ALIAS if the op's output is a pure view of input 0
 *          (shares its buffer in the memory plan), else VIEW_NONE.
 * GEARC_OWN_OPS lists gearc's own ops (domain "ai.gearc"): the gear
 * selector and the Case that the gear compile puts in the root graph, and
 * the PartitionedCall holding a multi-dims scope (passes/scope.h), and
 * Fail, the body of an If branch that is invalid at the compiled shapes
 * (compiler/ops/control.c): it raises its "message" if run, and the
 * fused ops FusedConv, FusedGemm, FusedMatMul that passes/fuse.c makes
 * (compiler/ops/fused.c: a Conv/Gemm/MatMul with its bias, residual and
 * activations).
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
	X(Abs,                       infer_unary, run_unary, VIEW_NONE) \
	X(Acos,                      infer_unary, run_unary, VIEW_NONE) \
	X(Acosh,                     infer_unary, run_unary, VIEW_NONE) \
	X(Add,                       infer_arith, run_arith, VIEW_NONE) \
	X(And,                       infer_logical, run_logic2, VIEW_NONE) \
	X(ArgMax,                    infer_argminmax, run_argminmax, VIEW_NONE) \
	X(ArgMin,                    infer_argminmax, run_argminmax, VIEW_NONE) \
	X(Asin,                      infer_unary, run_unary, VIEW_NONE) \
	X(Asinh,                     infer_unary, run_unary, VIEW_NONE) \
	X(Atan,                      infer_unary, run_unary, VIEW_NONE) \
	X(Atanh,                     infer_unary, run_unary, VIEW_NONE) \
	X(AveragePool,               infer_avgpool, run_avgpool, VIEW_NONE) \
	X(BatchNormalization,        infer_batchnorm, run_batchnorm, VIEW_NONE) \
	X(Bernoulli,                 infer_random_like, run_bernoulli, VIEW_NONE) \
	X(BitShift,                  infer_bitshift, run_logic2, VIEW_NONE) \
	X(BlackmanWindow,            infer_window, run_window, VIEW_NONE) \
	X(Cast,                      infer_cast, run_cast, VIEW_NONE) \
	X(CastLike,                  infer_castlike, run_cast, VIEW_NONE) \
	X(Ceil,                      infer_unary, run_unary, VIEW_NONE) \
	X(Celu,                      infer_unary, run_unary, VIEW_NONE) \
	X(Clip,                      infer_clip, run_clip, VIEW_NONE) \
	X(Compress,                  infer_compress, run_compress, VIEW_NONE) \
	X(Concat,                    infer_concat, run_concat, VIEW_NONE) \
	X(ConcatFromSequence,        infer_concat_from_sequence, run_concat_from_sequence, VIEW_NONE) \
	X(Constant,                  infer_constant, 0, VIEW_NONE) \
	X(ConstantOfShape,           infer_constantofshape, run_constantofshape, VIEW_NONE) \
	X(Conv,                      infer_conv, run_conv, VIEW_NONE) \
	X(ConvInteger,               infer_conv_integer, run_conv_integer, VIEW_NONE) \
	X(ConvTranspose,             infer_conv_transpose, run_conv_transpose, VIEW_NONE) \
	X(Cos,                       infer_unary, run_unary, VIEW_NONE) \
	X(Cosh,                      infer_unary, run_unary, VIEW_NONE) \
	X(CumSum,                    infer_cumsum, run_cumsum, VIEW_NONE) \
	X(DFT,                       infer_dft, run_dft, VIEW_NONE) \
	X(DepthToSpace,              infer_depthtospace, run_depthtospace, VIEW_NONE) \
	X(DequantizeLinear,          infer_dequantize_linear, run_dequantize_linear, VIEW_NONE) \
	X(Det,                       infer_det, run_det, VIEW_NONE) \
	X(Div,                       infer_arith, run_arith, VIEW_NONE) \
	X(Dropout,                   infer_dropout, run_dropout, VIEW_NONE) \
	X(DynamicQuantizeLinear,     infer_dynamic_quantize_linear, run_dynamic_quantize_linear, VIEW_NONE) \
	X(Einsum,                    infer_einsum, run_einsum, VIEW_NONE) \
	X(Elu,                       infer_unary, run_unary, VIEW_NONE) \
	X(Equal,                     infer_compare, run_logic2, VIEW_NONE) \
	X(Erf,                       infer_unary, run_unary, VIEW_NONE) \
	X(Exp,                       infer_unary, run_unary, VIEW_NONE) \
	X(Expand,                    infer_expand, run_expand, VIEW_NONE) \
	X(EyeLike,                   infer_eyelike, run_eyelike, VIEW_NONE) \
	X(Flatten,                   infer_flatten, run_reshape, VIEW_ALIAS) \
	X(Floor,                     infer_unary, run_unary, VIEW_NONE) \
	X(GRU,                       infer_rnn, run_rnn, VIEW_NONE) \
	X(Gather,                    infer_gather, run_gather, VIEW_NONE) \
	X(GatherElements,            infer_gatherelements, run_gatherelements, VIEW_NONE) \
	X(GatherND,                  infer_gathernd, run_gathernd, VIEW_NONE) \
	X(Gemm,                      infer_gemm, run_gemm, VIEW_NONE) \
	X(GlobalAveragePool,         infer_global_pool, run_global_pool, VIEW_NONE) \
	X(GlobalLpPool,              infer_global_pool, run_global_pool, VIEW_NONE) \
	X(GlobalMaxPool,             infer_global_pool, run_global_pool, VIEW_NONE) \
	X(Greater,                   infer_compare, run_logic2, VIEW_NONE) \
	X(GreaterOrEqual,            infer_compare, run_logic2, VIEW_NONE) \
	X(GridSample,                infer_grid_sample, run_grid_sample, VIEW_NONE) \
	X(HammingWindow,             infer_window, run_window, VIEW_NONE) \
	X(HannWindow,                infer_window, run_window, VIEW_NONE) \
	X(HardSigmoid,               infer_unary, run_unary, VIEW_NONE) \
	X(HardSwish,                 infer_unary, run_unary, VIEW_NONE) \
	X(Hardmax,                   infer_softmax, run_softmax, VIEW_NONE) \
	X(Identity,                  infer_identity, run_identity, VIEW_ALIAS) \
	X(If,                        infer_if, 0, VIEW_NONE) \
	X(InstanceNormalization,     infer_instance_norm, run_instance_norm, VIEW_NONE) \
	X(IsInf,                     infer_isinf, run_logic1, VIEW_NONE) \
	X(IsNaN,                     infer_isnan, run_logic1, VIEW_NONE) \
	X(LRN,                       infer_lrn, run_lrn, VIEW_NONE) \
	X(LSTM,                      infer_rnn, run_rnn, VIEW_NONE) \
	X(LayerNormalization,        infer_layer_norm, run_layer_norm, VIEW_NONE) \
	X(LeakyRelu,                 infer_unary, run_unary, VIEW_NONE) \
	X(Less,                      infer_compare, run_logic2, VIEW_NONE) \
	X(LessOrEqual,               infer_compare, run_logic2, VIEW_NONE) \
	X(Log,                       infer_unary, run_unary, VIEW_NONE) \
	X(LogSoftmax,                infer_softmax, run_softmax, VIEW_NONE) \
	X(Loop,                      infer_loop, 0, VIEW_NONE) \
	X(LpNormalization,           infer_lp_norm, run_lp_norm, VIEW_NONE) \
	X(LpPool,                    infer_lppool, run_lppool, VIEW_NONE) \
	X(MatMul,                    infer_matmul, run_matmul, VIEW_NONE) \
	X(MatMulInteger,             infer_matmul_integer, run_matmul_integer, VIEW_NONE) \
	X(Max,                       infer_variadic, run_variadic, VIEW_NONE) \
	X(MaxPool,                   infer_maxpool, run_maxpool, VIEW_NONE) \
	X(MaxRoiPool,                infer_max_roi_pool, run_max_roi_pool, VIEW_NONE) \
	X(MaxUnpool,                 infer_max_unpool, run_max_unpool, VIEW_NONE) \
	X(Mean,                      infer_variadic, run_variadic, VIEW_NONE) \
	X(MeanVarianceNormalization, infer_mvn, run_mvn, VIEW_NONE) \
	X(MelWeightMatrix,           infer_mel_weight_matrix, run_mel_weight_matrix, VIEW_NONE) \
	X(Min,                       infer_variadic, run_variadic, VIEW_NONE) \
	X(Mish,                      infer_unary, run_unary, VIEW_NONE) \
	X(Mod,                       infer_mod, run_arith, VIEW_NONE) \
	X(Mul,                       infer_arith, run_arith, VIEW_NONE) \
	X(Multinomial,               infer_multinomial, run_multinomial, VIEW_NONE) \
	X(Neg,                       infer_unary, run_unary, VIEW_NONE) \
	X(NegativeLogLikelihoodLoss, infer_nll_loss, run_nll_loss, VIEW_NONE) \
	X(NonMaxSuppression,         infer_nms, run_nms, VIEW_NONE) \
	X(NonZero,                   infer_nonzero, run_nonzero, VIEW_NONE) \
	X(Not,                       infer_not, run_logic1, VIEW_NONE) \
	X(OneHot,                    infer_onehot, run_onehot, VIEW_NONE) \
	X(Optional,                  infer_optional, 0, VIEW_NONE) \
	X(OptionalGetElement,        infer_optional_get_element, 0, VIEW_NONE) \
	X(OptionalHasElement,        infer_optional_has_element, run_optional_has_element, VIEW_NONE) \
	X(Or,                        infer_logical, run_logic2, VIEW_NONE) \
	X(PRelu,                     infer_prelu, run_arith, VIEW_NONE) \
	X(Pad,                       infer_pad, run_pad, VIEW_NONE) \
	X(Pow,                       infer_pow, run_arith, VIEW_NONE) \
	X(QLinearConv,               infer_qlinear_conv, run_qlinear_conv, VIEW_NONE) \
	X(QLinearMatMul,             infer_qlinear_matmul, run_qlinear_matmul, VIEW_NONE) \
	X(QuantizeLinear,            infer_quantize_linear, run_quantize_linear, VIEW_NONE) \
	X(RNN,                       infer_rnn, run_rnn, VIEW_NONE) \
	X(RandomNormal,              infer_random, run_random, VIEW_NONE) \
	X(RandomNormalLike,          infer_random_like, run_random, VIEW_NONE) \
	X(RandomUniform,             infer_random, run_random, VIEW_NONE) \
	X(RandomUniformLike,         infer_random_like, run_random, VIEW_NONE) \
	X(Range,                     infer_range, run_range, VIEW_NONE) \
	X(Reciprocal,                infer_unary, run_unary, VIEW_NONE) \
	X(ReduceL1,                  infer_reduce, run_reduce, VIEW_NONE) \
	X(ReduceL2,                  infer_reduce, run_reduce, VIEW_NONE) \
	X(ReduceLogSum,              infer_reduce, run_reduce, VIEW_NONE) \
	X(ReduceLogSumExp,           infer_reduce, run_reduce, VIEW_NONE) \
	X(ReduceMax,                 infer_reduce, run_reduce, VIEW_NONE) \
	X(ReduceMean,                infer_reduce, run_reduce, VIEW_NONE) \
	X(ReduceMin,                 infer_reduce, run_reduce, VIEW_NONE) \
	X(ReduceProd,                infer_reduce, run_reduce, VIEW_NONE) \
	X(ReduceSum,                 infer_reduce, run_reduce, VIEW_NONE) \
	X(ReduceSumSquare,           infer_reduce, run_reduce, VIEW_NONE) \
	X(Relu,                      infer_unary, run_unary, VIEW_NONE) \
	X(Reshape,                   infer_reshape, run_reshape, VIEW_ALIAS) \
	X(Resize,                    infer_resize, run_resize, VIEW_NONE) \
	X(ReverseSequence,           infer_reversesequence, run_reversesequence, VIEW_NONE) \
	X(RoiAlign,                  infer_roi_align, run_roi_align, VIEW_NONE) \
	X(Round,                     infer_unary, run_unary, VIEW_NONE) \
	X(STFT,                      infer_stft, run_stft, VIEW_NONE) \
	X(Scan,                      infer_scan, run_scan, VIEW_NONE) \
	X(Scatter,                   infer_scatterelements, run_scatterelements, VIEW_NONE) \
	X(ScatterElements,           infer_scatterelements, run_scatterelements, VIEW_NONE) \
	X(ScatterND,                 infer_scatternd, run_scatternd, VIEW_NONE) \
	X(Selu,                      infer_unary, run_unary, VIEW_NONE) \
	X(SequenceAt,                infer_sequence_at, run_sequence_at, VIEW_NONE) \
	X(SequenceConstruct,         infer_sequence_construct, run_sequence_construct, VIEW_NONE) \
	X(SequenceEmpty,             infer_sequence_empty, run_sequence_empty, VIEW_NONE) \
	X(SequenceErase,             infer_sequence_erase, run_sequence_erase, VIEW_NONE) \
	X(SequenceInsert,            infer_sequence_insert, run_sequence_insert, VIEW_NONE) \
	X(SequenceLength,            infer_sequence_length, run_sequence_length, VIEW_NONE) \
	X(SequenceMap,               infer_sequence_map, 0, VIEW_NONE) \
	X(Shape,                     infer_shape, run_shape, VIEW_NONE) \
	X(Shrink,                    infer_unary, run_unary, VIEW_NONE) \
	X(Sigmoid,                   infer_unary, run_unary, VIEW_NONE) \
	X(Sign,                      infer_unary, run_unary, VIEW_NONE) \
	X(Sin,                       infer_unary, run_unary, VIEW_NONE) \
	X(Sinh,                      infer_unary, run_unary, VIEW_NONE) \
	X(Size,                      infer_size, run_size, VIEW_NONE) \
	X(Slice,                     infer_slice, run_slice, VIEW_NONE) \
	X(Softmax,                   infer_softmax, run_softmax, VIEW_NONE) \
	X(SoftmaxCrossEntropyLoss,   infer_sce_loss, run_sce_loss, VIEW_NONE) \
	X(Softplus,                  infer_unary, run_unary, VIEW_NONE) \
	X(Softsign,                  infer_unary, run_unary, VIEW_NONE) \
	X(SpaceToDepth,              infer_spacetodepth, run_spacetodepth, VIEW_NONE) \
	X(Split,                     infer_split, run_split, VIEW_NONE) \
	X(SplitToSequence,           infer_split_to_sequence, run_split_to_sequence, VIEW_NONE) \
	X(Sqrt,                      infer_unary, run_unary, VIEW_NONE) \
	X(Squeeze,                   infer_squeeze, run_reshape, VIEW_ALIAS) \
	X(StringNormalizer,          infer_string_normalizer, run_string_normalizer, VIEW_NONE) \
	X(Sub,                       infer_arith, run_arith, VIEW_NONE) \
	X(Sum,                       infer_variadic, run_variadic, VIEW_NONE) \
	X(Tan,                       infer_unary, run_unary, VIEW_NONE) \
	X(Tanh,                      infer_unary, run_unary, VIEW_NONE) \
	X(TfIdfVectorizer,           infer_tfidf_vectorizer, run_tfidf_vectorizer, VIEW_NONE) \
	X(ThresholdedRelu,           infer_unary, run_unary, VIEW_NONE) \
	X(Tile,                      infer_tile, run_tile, VIEW_NONE) \
	X(TopK,                      infer_topk, run_topk, VIEW_NONE) \
	X(Transpose,                 infer_transpose, run_transpose, VIEW_NONE) \
	X(Trilu,                     infer_trilu, run_trilu, VIEW_NONE) \
	X(Unique,                    infer_unique, 0, VIEW_NONE) \
	X(Unsqueeze,                 infer_unsqueeze, run_reshape, VIEW_ALIAS) \
	X(Upsample,                  infer_upsample, run_upsample, VIEW_NONE) \
	X(Where,                     infer_where, run_where, VIEW_NONE) \
	X(Xor,                       infer_logical, run_logic2, VIEW_NONE)

#define GEARC_OWN_OPS(X) \
	X(MapIndex,        infer_mapindex, run_mapindex, VIEW_NONE) \
	X(Case,            infer_case,     run_case,      VIEW_NONE) \
	X(PartitionedCall, infer_partitioned_call, run_partitioned_call, VIEW_NONE) \
	X(Fail,            infer_fail,     run_fail,      VIEW_NONE) \
	X(FusedConv,       infer_fused_conv,   run_fused_conv,   VIEW_NONE) \
	X(FusedGemm,       infer_fused_gemm,   run_fused_gemm,   VIEW_NONE) \
	X(FusedMatMul,     infer_fused_matmul, run_fused_matmul, VIEW_NONE)

typedef enum {
	OP_UNKNOWN = 0,
#define X(name, infer, run, view) OP_##name,
	GEARC_OPS(X)
	GEARC_OWN_OPS(X)
#undef X
	OP_COUNT
} Op;

typedef struct OpInfo {
	const char *name;
	const char *domain; /* "" or GEARC_DOMAIN */
	OpFn infer, run;
	ViewKind view;
} OpInfo;

extern const OpInfo op_info[OP_COUNT];

/* "" (or NULL) and "ai.onnx" are the default ONNX domain. */
bool domain_is_default(const char *domain);

/* The Op for (domain, op_type); "" and "ai.onnx" are the default domain.
 * OP_UNKNOWN if gearc does not know it. */
int op_lookup(const char *domain, const char *op_type);

#endif
