/*
 * compiler/ops.h - the one op table (QBE's ops.h, ggml's op-name table):
 * every fact about an op that more than one file needs lives in its line.
 *
 * GEARC_OPS lists every ONNX operator of the default domain gearc knows,
 * one line each: X(Name, infer, run, view, inplace, shape, ew).
 *   infer    shape/dtype inference hook (compiler/ops/<family>.c), or 0;
 *   run      the kernel: computes the outputs from the inputs' contents,
 *            or 0.  The compiler runs it on constant inputs (constant
 *            folding, compiler/infer.c); the runtime runs it on the tensors
 *            it binds (runtime/), so folding and execution share one
 *            implementation of each op's semantics;
 *   view     VIEW_ALIAS if the op's output is a pure view of input 0
 *            (shares its buffer in the memory plan), else VIEW_NONE;
 *   inplace  which inputs' buffers output 0 may overwrite when the memory
 *            plan finds one of the output's dtype and shape dying there
 *            (the kernel reads element i before writing it): InPlace;
 *   shape    how output 0's shape follows from the inputs' (the symbolic
 *            shapes of passes/symbols.c): ShapeRule;
 *   ew       for an elementwise op computed by a scalar kernel of the
 *            folding engine (compiler/ops/elementwise.c), that kernel:
 *              EW_MATH(dts, f)   unary, f a libm double(double);
 *              EW_FLOAT(dts, f)  unary, f(double, const EwParams *);
 *              EW_EXACT(dts, f)  unary, f an EwUnFn with integer cases;
 *              EW_ARITH(f)       binary (broadcast), f an EwBinFn;
 *              EW_LOGIC(f)       the same, f in compiler/ops/logic.c;
 *            dts being the input dtypes (a DTS_ set of opimpl.h) of the
 *            op's newest version; else EW_NONE.  Each file that needs the
 *            column defines these macros before expanding the table.
 * GEARC_OWN_OPS lists gearc's own ops (domain "ai.gearc"): the gear
 * selector and the Case that the gear compile puts in the root graph, and
 * the PartitionedCall holding a multi-dims scope (passes/scope.h), and
 * Fail, the body of an If branch that is invalid at the compiled shapes
 * (compiler/ops/control.c): it raises its "message" if run, and the
 * fused ops FusedConv, FusedGemm, FusedMatMul that passes/fuse.c makes
 * (compiler/ops/fused.c: a Conv/Gemm/MatMul with its bias, residual and
 * activations), FusedActivation (the activations alone, of a
 * written-out form after no such op), and DynQuantMatMul, DynQuantConv
 * that passes/qfuse.c makes (compiler/ops/qfused.c: a dynamic int8 chain
 * in one op), and Sdpa, scaled dot-product attention, the canonical form
 * passes/attn.c rewrites every exporter's attention to
 * (compiler/ops/attention.c), and Yuv420sp, the NV12/NV21 camera frame
 * of atc's AIPP as a float NCHW image (compiler/preproc.h makes it;
 * compiler/ops/image.h).
 *
 * GEARC_MS_OPS lists ONNX Runtime's contrib ops (domain "com.microsoft",
 * compiler/ops/contrib*.c), with ONNX Runtime's documented semantics
 * (its docs/ContribOperators.md and CPU kernels), and GEARC_ORT_OPS the
 * ops ONNX Runtime registers in the default domain that ONNX lacks
 * (SimplifiedLayerNormalization, which its transformer optimizer writes
 * there).  Their enum names are OP_MS_<name>, their names ONNX Runtime's:
 * a com.microsoft op may share a name with a default-domain or gearc op
 * of other semantics (FusedMatMul).  ONNX Runtime's FusedConv and
 * FusedGemm are gearc's own ops of that name (the same computation): the
 * importer rewrites their attributes into gearc's (contrib_import).
 *
 * Adding an op: one line here and its hook functions in the family's
 * file (prototypes in compiler/ops/opimpl.h).  A unary math op is one
 * line with infer_unary, run_unary and EW_MATH/EW_FLOAT/EW_EXACT, plus
 * its kernel in elementwise.c unless libm has it.
 */
#ifndef GEARC_OPS_H
#define GEARC_OPS_H

#include <stdbool.h>
#include <stdint.h>

struct OpCtx;
typedef int (*OpFn)(struct OpCtx *c);

typedef enum { VIEW_NONE = 0, VIEW_ALIAS } ViewKind;

/* The inputs whose buffer output 0 may take over (memplan_inplace_ok). */
typedef enum {
	INPLACE_NONE = 0,
	INPLACE_IN0,  /* input 0 (the others broadcast or are parameters) */
	INPLACE_ANY,  /* any input (elementwise on broadcast inputs) */
	INPLACE_IN12, /* inputs 1 and 2 (Where's X and Y, not its condition) */
	INPLACE_DATA, /* input 0 if no other input reads its buffer: the
			 kernel writes the output before it has read the
			 others (Scatter's updates into its data) */
} InPlace;

/* How output 0's shape follows from the inputs'. */
typedef enum {
	SHAPE_OWN = 0, /* the op's own rule (its infer hook) */
	SHAPE_SAME,    /* input 0's shape */
	SHAPE_BCAST,   /* the numpy broadcast of all inputs */
} ShapeRule;

/* The ew column's kinds (OpInfo.ew). */
typedef enum { EW_KIND_NONE = 0, EW_KIND_UNARY, EW_KIND_BINARY } EwKind;

#define GEARC_DOMAIN "ai.gearc"
#define MS_DOMAIN "com.microsoft"

#define GEARC_OPS(X) \
	X(Abs,                       infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_EXACT(DTS_NUMERIC, k_abs)) \
	X(Acos,                      infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_IEEE, acos)) \
	X(Acosh,                     infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_IEEE, acosh)) \
	X(Add,                       infer_arith,                   run_arith,                   VIEW_NONE,  INPLACE_ANY,  SHAPE_BCAST, EW_ARITH(k_add)) \
	X(And,                       infer_logical,                 run_logic2,                  VIEW_NONE,  INPLACE_ANY,  SHAPE_BCAST, EW_LOGIC(k_and)) \
	X(ArgMax,                    infer_argminmax,               run_argminmax,               VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(ArgMin,                    infer_argminmax,               run_argminmax,               VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Asin,                      infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_IEEE, asin)) \
	X(Asinh,                     infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_IEEE, asinh)) \
	X(Atan,                      infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_IEEE, atan)) \
	X(Atanh,                     infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_IEEE, atanh)) \
	X(AveragePool,               infer_avgpool,                 run_avgpool,                 VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(BatchNormalization,        infer_batchnorm,               run_batchnorm,               VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(Bernoulli,                 infer_random_like,             run_bernoulli,               VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(BitShift,                  infer_bitshift,                run_logic2,                  VIEW_NONE,  INPLACE_ANY,  SHAPE_BCAST, EW_LOGIC(k_bitshift)) \
	X(BlackmanWindow,            infer_window,                  run_window,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Cast,                      infer_cast,                    run_cast,                    VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(CastLike,                  infer_castlike,                run_cast,                    VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(Ceil,                      infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_FLOAT, ceil)) \
	X(Celu,                      infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_FLOAT(DTS(DT_FLOAT), f_celu)) \
	X(Clip,                      infer_clip,                    run_clip,                    VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_NONE) \
	X(Compress,                  infer_compress,                run_compress,                VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Concat,                    infer_concat,                  run_concat,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(ConcatFromSequence,        infer_concat_from_sequence,    run_concat_from_sequence,    VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Constant,                  infer_constant,                0,                           VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(ConstantOfShape,           infer_constantofshape,         run_constantofshape,         VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Conv,                      infer_conv,                    run_conv,                    VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(ConvInteger,               infer_conv_integer,            run_conv_integer,            VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(ConvTranspose,             infer_conv_transpose,          run_conv_transpose,          VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Cos,                       infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_IEEE, cos)) \
	X(Cosh,                      infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_IEEE, cosh)) \
	X(CumSum,                    infer_cumsum,                  run_cumsum,                  VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(DFT,                       infer_dft,                     run_dft,                     VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(DepthToSpace,              infer_depthtospace,            run_depthtospace,            VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(DequantizeLinear,          infer_dequantize_linear,       run_dequantize_linear,       VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Det,                       infer_det,                     run_det,                     VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Div,                       infer_arith,                   run_arith,                   VIEW_NONE,  INPLACE_ANY,  SHAPE_BCAST, EW_ARITH(k_div)) \
	X(Dropout,                   infer_dropout,                 run_dropout,                 VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(DynamicQuantizeLinear,     infer_dynamic_quantize_linear, run_dynamic_quantize_linear, VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Einsum,                    infer_einsum,                  run_einsum,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Elu,                       infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_FLOAT(DTS_IEEE, f_elu)) \
	X(Equal,                     infer_compare,                 run_logic2,                  VIEW_NONE,  INPLACE_NONE, SHAPE_BCAST, EW_LOGIC(k_equal)) \
	X(Erf,                       infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_NUMERIC, erf)) \
	X(Exp,                       infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_FLOAT, exp)) \
	X(Expand,                    infer_expand,                  run_expand,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(EyeLike,                   infer_eyelike,                 run_eyelike,                 VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Flatten,                   infer_flatten,                 run_reshape,                 VIEW_ALIAS, INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Floor,                     infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_FLOAT, floor)) \
	X(GRU,                       infer_rnn,                     run_rnn,                     VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Gather,                    infer_gather,                  run_gather,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(GatherElements,            infer_gatherelements,          run_gatherelements,          VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(GatherND,                  infer_gathernd,                run_gathernd,                VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Gemm,                      infer_gemm,                    run_gemm,                    VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(GlobalAveragePool,         infer_global_pool,             run_global_pool,             VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(GlobalLpPool,              infer_global_pool,             run_global_pool,             VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(GlobalMaxPool,             infer_global_pool,             run_global_pool,             VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Greater,                   infer_compare,                 run_logic2,                  VIEW_NONE,  INPLACE_NONE, SHAPE_BCAST, EW_LOGIC(k_greater)) \
	X(GreaterOrEqual,            infer_compare,                 run_logic2,                  VIEW_NONE,  INPLACE_NONE, SHAPE_BCAST, EW_LOGIC(k_greater_equal)) \
	X(GridSample,                infer_grid_sample,             run_grid_sample,             VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(HammingWindow,             infer_window,                  run_window,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(HannWindow,                infer_window,                  run_window,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(HardSigmoid,               infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_FLOAT(DTS_IEEE, f_hardsigmoid)) \
	X(HardSwish,                 infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_FLOAT(DTS_IEEE, f_hardswish)) \
	X(Hardmax,                   infer_softmax,                 run_softmax,                 VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(Identity,                  infer_identity,                run_identity,                VIEW_ALIAS, INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(If,                        infer_if,                      0,                           VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(InstanceNormalization,     infer_instance_norm,           run_instance_norm,           VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(IsInf,                     infer_isinf,                   run_logic1,                  VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(IsNaN,                     infer_isnan,                   run_logic1,                  VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(LRN,                       infer_lrn,                     run_lrn,                     VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(LSTM,                      infer_rnn,                     run_rnn,                     VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(LayerNormalization,        infer_layer_norm,              run_layer_norm,              VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(LeakyRelu,                 infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_FLOAT(DTS_FLOAT, f_leakyrelu)) \
	X(Less,                      infer_compare,                 run_logic2,                  VIEW_NONE,  INPLACE_NONE, SHAPE_BCAST, EW_LOGIC(k_less)) \
	X(LessOrEqual,               infer_compare,                 run_logic2,                  VIEW_NONE,  INPLACE_NONE, SHAPE_BCAST, EW_LOGIC(k_less_equal)) \
	X(Log,                       infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_FLOAT, log)) \
	X(LogSoftmax,                infer_softmax,                 run_softmax,                 VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(Loop,                      infer_loop,                    0,                           VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(LpNormalization,           infer_lp_norm,                 run_lp_norm,                 VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(LpPool,                    infer_lppool,                  run_lppool,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(MatMul,                    infer_matmul,                  run_matmul,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(MatMulInteger,             infer_matmul_integer,          run_matmul_integer,          VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Max,                       infer_variadic,                run_variadic,                VIEW_NONE,  INPLACE_ANY,  SHAPE_BCAST, EW_ARITH(k_max)) \
	X(MaxPool,                   infer_maxpool,                 run_maxpool,                 VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(MaxRoiPool,                infer_max_roi_pool,            run_max_roi_pool,            VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(MaxUnpool,                 infer_max_unpool,              run_max_unpool,              VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Mean,                      infer_variadic,                run_variadic,                VIEW_NONE,  INPLACE_ANY,  SHAPE_BCAST, EW_ARITH(k_add)) \
	X(MeanVarianceNormalization, infer_mvn,                     run_mvn,                     VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(MelWeightMatrix,           infer_mel_weight_matrix,       run_mel_weight_matrix,       VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Min,                       infer_variadic,                run_variadic,                VIEW_NONE,  INPLACE_ANY,  SHAPE_BCAST, EW_ARITH(k_min)) \
	X(Mish,                      infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_FLOAT(DTS_IEEE, f_mish)) \
	X(Mod,                       infer_mod,                     run_arith,                   VIEW_NONE,  INPLACE_ANY,  SHAPE_BCAST, EW_ARITH(k_mod)) \
	X(Mul,                       infer_arith,                   run_arith,                   VIEW_NONE,  INPLACE_ANY,  SHAPE_BCAST, EW_ARITH(k_mul)) \
	X(Multinomial,               infer_multinomial,             run_multinomial,             VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Neg,                       infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_EXACT(DTS_FLOAT | DTS_SINT, k_neg)) \
	X(NegativeLogLikelihoodLoss, infer_nll_loss,                run_nll_loss,                VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(NonMaxSuppression,         infer_nms,                     run_nms,                     VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(NonZero,                   infer_nonzero,                 run_nonzero,                 VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Not,                       infer_not,                     run_logic1,                  VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_NONE) \
	X(OneHot,                    infer_onehot,                  run_onehot,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Optional,                  infer_optional,                0,                           VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(OptionalGetElement,        infer_optional_get_element,    0,                           VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(OptionalHasElement,        infer_optional_has_element,    run_optional_has_element,    VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Or,                        infer_logical,                 run_logic2,                  VIEW_NONE,  INPLACE_ANY,  SHAPE_BCAST, EW_LOGIC(k_or)) \
	X(PRelu,                     infer_prelu,                   run_arith,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_BCAST, EW_ARITH(k_prelu)) \
	X(Pad,                       infer_pad,                     run_pad,                     VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Pow,                       infer_pow,                     run_arith,                   VIEW_NONE,  INPLACE_ANY,  SHAPE_BCAST, EW_ARITH(k_pow)) \
	X(QLinearConv,               infer_qlinear_conv,            run_qlinear_conv,            VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(QLinearMatMul,             infer_qlinear_matmul,          run_qlinear_matmul,          VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(QuantizeLinear,            infer_quantize_linear,         run_quantize_linear,         VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(RNN,                       infer_rnn,                     run_rnn,                     VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(RandomNormal,              infer_random,                  run_random,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(RandomNormalLike,          infer_random_like,             run_random,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(RandomUniform,             infer_random,                  run_random,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(RandomUniformLike,         infer_random_like,             run_random,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Range,                     infer_range,                   run_range,                   VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Reciprocal,                infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_FLOAT(DTS_FLOAT, f_reciprocal)) \
	X(ReduceL1,                  infer_reduce,                  run_reduce,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(ReduceL2,                  infer_reduce,                  run_reduce,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(ReduceLogSum,              infer_reduce,                  run_reduce,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(ReduceLogSumExp,           infer_reduce,                  run_reduce,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(ReduceMax,                 infer_reduce,                  run_reduce,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(ReduceMean,                infer_reduce,                  run_reduce,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(ReduceMin,                 infer_reduce,                  run_reduce,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(ReduceProd,                infer_reduce,                  run_reduce,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(ReduceSum,                 infer_reduce,                  run_reduce,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(ReduceSumSquare,           infer_reduce,                  run_reduce,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Relu,                      infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_EXACT(DTS_FLOAT | DTS_SINT, k_relu)) \
	X(Reshape,                   infer_reshape,                 run_reshape,                 VIEW_ALIAS, INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Resize,                    infer_resize,                  run_resize,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(ReverseSequence,           infer_reversesequence,         run_reversesequence,         VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(RoiAlign,                  infer_roi_align,               run_roi_align,               VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Round,                     infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_FLOAT(DTS_IEEE, f_round)) \
	X(STFT,                      infer_stft,                    run_stft,                    VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Scan,                      infer_scan,                    run_scan,                    VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Scatter,                   infer_scatterelements,         run_scatterelements,         VIEW_NONE,  INPLACE_DATA, SHAPE_SAME,  EW_NONE) \
	X(ScatterElements,           infer_scatterelements,         run_scatterelements,         VIEW_NONE,  INPLACE_DATA, SHAPE_SAME,  EW_NONE) \
	X(ScatterND,                 infer_scatternd,               run_scatternd,               VIEW_NONE,  INPLACE_DATA, SHAPE_SAME,  EW_NONE) \
	X(Selu,                      infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_FLOAT(DTS_IEEE, f_selu)) \
	X(SequenceAt,                infer_sequence_at,             run_sequence_at,             VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(SequenceConstruct,         infer_sequence_construct,      run_sequence_construct,      VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(SequenceEmpty,             infer_sequence_empty,          run_sequence_empty,          VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(SequenceErase,             infer_sequence_erase,          run_sequence_erase,          VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(SequenceInsert,            infer_sequence_insert,         run_sequence_insert,         VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(SequenceLength,            infer_sequence_length,         run_sequence_length,         VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(SequenceMap,               infer_sequence_map,            0,                           VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Shape,                     infer_shape,                   run_shape,                   VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Shrink,                    infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_FLOAT(DTS_IEEE | DTS_INT, f_shrink)) \
	X(Sigmoid,                   infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_FLOAT(DTS_FLOAT, f_sigmoid)) \
	X(Sign,                      infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_EXACT(DTS_NUMERIC, k_sign)) \
	X(Sin,                       infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_IEEE, sin)) \
	X(Sinh,                      infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_IEEE, sinh)) \
	X(Size,                      infer_size,                    run_size,                    VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Slice,                     infer_slice,                   run_slice,                   VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Softmax,                   infer_softmax,                 run_softmax,                 VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(SoftmaxCrossEntropyLoss,   infer_sce_loss,                run_sce_loss,                VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Softplus,                  infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_FLOAT(DTS_IEEE, f_softplus)) \
	X(Softsign,                  infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_FLOAT(DTS_IEEE, f_softsign)) \
	X(SpaceToDepth,              infer_spacetodepth,            run_spacetodepth,            VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Split,                     infer_split,                   run_split,                   VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(SplitToSequence,           infer_split_to_sequence,       run_split_to_sequence,       VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Sqrt,                      infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_FLOAT, sqrt)) \
	X(Squeeze,                   infer_squeeze,                 run_reshape,                 VIEW_ALIAS, INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(StringNormalizer,          infer_string_normalizer,       run_string_normalizer,       VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Sub,                       infer_arith,                   run_arith,                   VIEW_NONE,  INPLACE_ANY,  SHAPE_BCAST, EW_ARITH(k_sub)) \
	X(Sum,                       infer_variadic,                run_variadic,                VIEW_NONE,  INPLACE_ANY,  SHAPE_BCAST, EW_ARITH(k_add)) \
	X(Tan,                       infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_IEEE, tan)) \
	X(Tanh,                      infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_MATH(DTS_FLOAT, tanh)) \
	X(TfIdfVectorizer,           infer_tfidf_vectorizer,        run_tfidf_vectorizer,        VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(ThresholdedRelu,           infer_unary,                   run_unary,                   VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_FLOAT(DTS_IEEE, f_thresholdedrelu)) \
	X(Tile,                      infer_tile,                    run_tile,                    VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(TopK,                      infer_topk,                    run_topk,                    VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Transpose,                 infer_transpose,               run_transpose,               VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Trilu,                     infer_trilu,                   run_trilu,                   VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(Unique,                    infer_unique,                  0,                           VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Unsqueeze,                 infer_unsqueeze,               run_reshape,                 VIEW_ALIAS, INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Upsample,                  infer_upsample,                run_upsample,                VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Where,                     infer_where,                   run_where,                   VIEW_NONE,  INPLACE_IN12, SHAPE_BCAST, EW_NONE) \
	X(Xor,                       infer_logical,                 run_logic2,                  VIEW_NONE,  INPLACE_ANY,  SHAPE_BCAST, EW_LOGIC(k_xor))

#define GEARC_OWN_OPS(X) \
	X(MapIndex,                  infer_mapindex,                run_mapindex,                VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Case,                      infer_case,                    run_case,                    VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(PartitionedCall,           infer_partitioned_call,        run_partitioned_call,        VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Fail,                      infer_fail,                    run_fail,                    VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(FusedConv,                 infer_fused_conv,              run_fused_conv,              VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(FusedGemm,                 infer_fused_gemm,              run_fused_gemm,              VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(FusedMatMul,               infer_fused_matmul,            run_fused_matmul,            VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(DynQuantMatMul,            infer_dynquant_matmul,         run_dynquant_matmul,         VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(DynQuantConv,              infer_dynquant_conv,           run_dynquant_conv,           VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(FusedActivation,           infer_fused_activation,        run_fused_activation,        VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_NONE) \
	X(Sdpa,                      infer_sdpa,                    run_sdpa,                    VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Yuv420sp,                  infer_yuv420sp,                run_yuv420sp,                VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE)

#define GEARC_MS_OPS(X) \
	X(Attention,                 infer_ms_attention,            run_ms_attention,            VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(BiasAdd,                   infer_ms_bias_add,             run_ms_bias_add,             VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(BiasGelu,                  infer_ms_gelu,                 run_ms_gelu,                 VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(DynamicQuantizeMatMul,     infer_ms_dynquant_matmul,      run_ms_dynquant_matmul,      VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(EmbedLayerNormalization,   infer_ms_embed_layer_norm,     run_ms_embed_layer_norm,     VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(FastGelu,                  infer_ms_gelu,                 run_ms_gelu,                 VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_NONE) \
	X(FusedMatMul,               infer_ms_fused_matmul,         run_ms_fused_matmul,         VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(Gelu,                      infer_ms_gelu,                 run_ms_gelu,                 VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_NONE) \
	X(MatMulIntegerToFloat,      infer_ms_matmul_int_to_float,  run_ms_matmul_int_to_float,  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(MultiHeadAttention,        infer_ms_mha,                  run_ms_mha,                  VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(QGemm,                     infer_ms_qgemm,                run_ms_qgemm,                VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(QLinearAdd,                infer_ms_qlinear_binary,       run_ms_qlinear_binary,       VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(QLinearAveragePool,        infer_ms_qlinear_avgpool,      run_ms_qlinear_avgpool,      VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(QLinearConcat,             infer_ms_qlinear_concat,       run_ms_qlinear_concat,       VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(QLinearGlobalAveragePool,  infer_ms_qlinear_gap,          run_ms_qlinear_gap,          VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(QLinearLeakyRelu,          infer_ms_qlinear_unary,        run_ms_qlinear_unary,        VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(QLinearMul,                infer_ms_qlinear_binary,       run_ms_qlinear_binary,       VIEW_NONE,  INPLACE_NONE, SHAPE_OWN,   EW_NONE) \
	X(QLinearSigmoid,            infer_ms_qlinear_unary,        run_ms_qlinear_unary,        VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(QLinearSoftmax,            infer_ms_qlinear_softmax,      run_ms_qlinear_softmax,      VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(QuickGelu,                 infer_ms_gelu,                 run_ms_gelu,                 VIEW_NONE,  INPLACE_IN0,  SHAPE_SAME,  EW_NONE) \
	X(RotaryEmbedding,           infer_ms_rotary,               run_ms_rotary,               VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(SkipLayerNormalization,    infer_ms_skip_norm,            run_ms_skip_norm,            VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE) \
	X(SkipSimplifiedLayerNormalization, infer_ms_skip_norm,     run_ms_skip_norm,            VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE)

#define GEARC_ORT_OPS(X) \
	X(SimplifiedLayerNormalization, infer_ms_rms_norm,          run_ms_rms_norm,             VIEW_NONE,  INPLACE_NONE, SHAPE_SAME,  EW_NONE)

typedef enum {
	OP_UNKNOWN = 0,
#define X(name, infer, run, view, inplace, shape, ew) OP_##name,
	GEARC_OPS(X)
	GEARC_OWN_OPS(X)
#undef X
#define X(name, infer, run, view, inplace, shape, ew) OP_MS_##name,
	GEARC_MS_OPS(X)
	GEARC_ORT_OPS(X)
#undef X
	OP_COUNT
} Op;

typedef struct OpInfo {
	const char *name;
	const char *domain; /* "", GEARC_DOMAIN or MS_DOMAIN */
	OpFn infer, run;
	ViewKind view;
	InPlace inplace;
	ShapeRule shape;
	EwKind ew;
	uint32_t ew_dts; /* unary: the input dtypes (DTS_ set), else 0 */
} OpInfo;

extern const OpInfo op_info[OP_COUNT];

/* "" (or NULL) and "ai.onnx" are the default ONNX domain. */
bool domain_is_default(const char *domain);

/* The Op for (domain, op_type); "" and "ai.onnx" are the default domain.
 * OP_UNKNOWN if gearc does not know it. */
int op_lookup(const char *domain, const char *op_type);

/* Whether domain is ONNX Runtime's contrib domain, com.microsoft. */
bool domain_is_ms(const char *domain);

#endif
