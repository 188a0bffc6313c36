#!/usr/bin/python3
"""tests/gen_defect_models.py - makes tests/fixtures/defects/*.onnx for
tests/test_defects.c: one small model per class of defect issue 39 found
on the fast paths (each a regression test that fails without its fix).
Weights are fixed-seed random; the tests make the inputs (NaN, +-Inf,
-0, huge values).  Run from the repository root."""
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

rng = np.random.default_rng(39)


def w(name, *shape):
    return nh.from_array(rng.standard_normal(shape).astype(np.float32), name)


def c(name, a):
    return nh.from_array(np.asarray(a), name)


def vi(name, dt, shape):
    return h.make_tensor_value_info(name, dt, shape)


def save(path, nodes, inits, inputs, outputs, opset=17):
    g = h.make_graph(nodes, path, inputs,
                     [vi(o, T.UNDEFINED, None) if isinstance(o, str) else o
                      for o in outputs], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, "tests/fixtures/defects/" + path + ".onnx")


F = T.FLOAT

# 1. Convolutions whose output is 1x1 over a larger input: 3x3 over 3x3
# behind a 1x1 Conv (X channels-last between them) and 7x7 over the
# graph's 7x7 input (row-major).
save("conv_1x1_out",
     [h.make_node("Conv", ["x", "w0"], ["a"]),
      h.make_node("Conv", ["a", "w1", "b1"], ["y1"]),
      h.make_node("Conv", ["s", "w2", "b2"], ["y2"])],
     [w("w0", 16, 8, 1, 1), w("w1", 32, 16, 3, 3), w("b1", 32),
      w("w2", 24, 16, 7, 7), w("b2", 24)],
     [vi("x", F, [1, 8, 3, 3]), vi("s", F, [1, 16, 7, 7])],
     ["y1", "y2"])

# 2. Products over an empty axis (K = 0): zeros, plus the bias.
save("k_zero",
     [h.make_node("MatMul", ["a", "b"], ["mm"]),
      h.make_node("Gemm", ["at", "bt", "c"], ["gemm"], transA=1),
      h.make_node("MatMul", ["a", "wk"], ["mmw"]),
      h.make_node("Add", ["mmw", "bias"], ["fused"])],
     [c("c", np.arange(4, dtype=np.float32)),
      c("wk", np.zeros((0, 5), np.float32)),
      c("bias", np.arange(5, dtype=np.float32) - 2)],
     [vi("a", F, [3, 0]), vi("b", F, [0, 4]), vi("at", F, [0, 3]),
      vi("bt", F, [0, 4])],
     ["mm", "gemm", "fused"])

# 3. MatMulInteger with N = 0 and with K = 0.
save("mmint_empty",
     [h.make_node("MatMulInteger", ["a", "b"], ["n0"]),
      h.make_node("MatMulInteger", ["ak", "bk"], ["k0"])],
     [],
     [vi("a", T.UINT8, [3, 5]), vi("b", T.INT8, [5, 0]),
      vi("ak", T.UINT8, [3, 0]), vi("bk", T.INT8, [0, 4])],
     ["n0", "k0"])

# 4. Linear Resize of an empty axis to a non-empty one (sizes given):
# ranks 3, 4 and 5, each a model of its own (the reference refuses).
for r, shape, sizes in [(3, [1, 3, 0], [1, 3, 6]),
                        (4, [1, 3, 0, 4], [1, 3, 5, 8]),
                        (5, [1, 2, 0, 4, 4], [1, 2, 3, 8, 8])]:
    save("resize_empty%d" % r,
         [h.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="linear")],
         [c("sz", np.array(sizes, np.int64))], [vi("x", F, shape)], ["y"])

# 5. Rank-3 and rank-5 linear Resize whose output, a graph output, is
# 1 MB and more (oneDNN's resampling; it may store it with aligned
# non-temporal stores).
save("resize_big",
     [h.make_node("Resize", ["x", "", "s3"], ["y3"], mode="linear"),
      h.make_node("Resize", ["v", "", "s5"], ["y5"], mode="linear")],
     [c("s3", np.array([1, 1, 4], np.float32)),
      c("s5", np.array([1, 1, 2, 2, 2], np.float32))],
     [vi("x", F, [1, 64, 1024]), vi("v", F, [1, 8, 8, 32, 32])],
     ["y3", "y5"])

# 6. Empty computations: QuantizeLinear of nothing with a scale of 0,
# integer Div of nothing (by a constant 0 too), QLinearMatMul with a
# run-time B of N = 0.
save("empty_compute",
     [h.make_node("QuantizeLinear", ["x", "s0", "z0"], ["q"]),
      h.make_node("Div", ["i", "j"], ["d32"]),
      h.make_node("Div", ["l", "zero"], ["d64"]),
      h.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb",
                                    "sy", "zy"], ["qmm"])],
     [c("s0", np.array(0, np.float32)), c("z0", np.array(0, np.uint8)),
      c("zero", np.array(0, np.int64)),
      c("sa", np.array(0.1, np.float32)), c("za", np.array(3, np.uint8)),
      c("sb", np.array(0.2, np.float32)), c("zb", np.array(5, np.uint8)),
      c("sy", np.array(0.3, np.float32)), c("zy", np.array(7, np.uint8))],
     [vi("x", F, [0, 4]), vi("i", T.INT32, [0, 4]), vi("j", T.INT32, [0, 4]),
      vi("l", T.INT64, [2, 0]), vi("a", T.UINT8, [3, 5]),
      vi("b", T.UINT8, [5, 0])],
     ["q", "d32", "d64", "qmm"])

# 7. Activations on NaN, +-Inf and -0, on every path that takes them: a
# Relu alone; Conv (oneDNN, strided) with Relu, Clip, HardSigmoid,
# LeakyRelu fused; Relu then a residual Add fused (z_after); depthwise
# Conv + Relu; Gemm + Relu, MatMul + Relu; a 1x1 Conv + Relu (chan).
save("act_nan",
     [h.make_node("Relu", ["x"], ["relu"]),
      h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1],
                  strides=[2, 2]),
      h.make_node("Relu", ["c"], ["conv_relu"]),
      h.make_node("Conv", ["x", "w2", "b"], ["c2"], pads=[1, 1, 1, 1],
                  strides=[2, 2]),
      h.make_node("Clip", ["c2", "lo", "hi"], ["conv_clip"]),
      h.make_node("Conv", ["x", "w3", "b"], ["c3"], pads=[1, 1, 1, 1],
                  strides=[2, 2]),
      h.make_node("HardSigmoid", ["c3"], ["conv_hsig"]),
      h.make_node("Conv", ["x", "w4", "b"], ["c4"], pads=[1, 1, 1, 1],
                  strides=[2, 2]),
      h.make_node("LeakyRelu", ["c4"], ["conv_leaky"], alpha=0.1),
      h.make_node("Conv", ["x", "w5"], ["c5"], pads=[1, 1, 1, 1]),
      h.make_node("Relu", ["c5"], ["r5"]),
      h.make_node("Add", ["r5", "x"], ["conv_relu_add"]),
      h.make_node("Conv", ["x", "wd"], ["cd"], pads=[1, 1, 1, 1], group=16),
      h.make_node("Relu", ["cd"], ["dw_relu"]),
      h.make_node("Flatten", ["x"], ["f"]),
      h.make_node("Gemm", ["f", "wg", "bg"], ["g"], transB=1),
      h.make_node("Relu", ["g"], ["gemm_relu"]),
      h.make_node("MatMul", ["x", "wm"], ["m"]),
      h.make_node("Relu", ["m"], ["matmul_relu"]),
      h.make_node("Conv", ["x", "w1"], ["c1"]),
      h.make_node("Relu", ["c1"], ["pw_relu"])],
     [w("w", 32, 16, 3, 3), w("b", 32), w("w2", 32, 16, 3, 3),
      w("w3", 32, 16, 3, 3), w("w4", 32, 16, 3, 3), w("w5", 16, 16, 3, 3),
      w("wd", 16, 1, 3, 3), w("wg", 10, 16 * 12 * 12), w("bg", 10),
      w("wm", 12, 12), w("w1", 24, 16, 1, 1),
      c("lo", np.array(-1, np.float32)), c("hi", np.array(2, np.float32))],
     [vi("x", F, [1, 16, 12, 12])],
     ["relu", "conv_relu", "conv_clip", "conv_hsig", "conv_leaky",
      "conv_relu_add", "dw_relu", "gemm_relu", "matmul_relu", "pw_relu"])

# 8. A 3x3 Conv of stride 1, 32 -> 32 channels at 40x40 behind a 1x1 Conv
# (Winograd's shape, X channels-last) and on the graph's input
# (row-major), with a Relu.
save("wino_special",
     [h.make_node("Conv", ["x", "w0"], ["a"]),
      h.make_node("Conv", ["a", "w1", "b1"], ["y"], pads=[1, 1, 1, 1]),
      h.make_node("Conv", ["v", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
      h.make_node("Relu", ["c2"], ["y2"])],
     [w("w0", 32, 16, 1, 1), w("w1", 32, 32, 3, 3), w("b1", 32),
      w("w2", 32, 32, 3, 3), w("b2", 32)],
     [vi("x", F, [1, 16, 40, 40]), vi("v", F, [1, 32, 40, 40])],
     ["y", "y2"])

# 9. MaxPool of windows of -inf, NaN and -FLT_MAX: 2-D (runtime/
# chanwise.c) on the graph's input (row-major) and behind a Conv
# (channels-last), padded; 1-D (oneDNN) over the rows of x.
save("maxpool_special",
     [h.make_node("MaxPool", ["x"], ["p"], kernel_shape=[2, 2],
                  strides=[2, 2]),
      h.make_node("Conv", ["x", "w"], ["c"]),
      h.make_node("MaxPool", ["c"], ["pc"], kernel_shape=[3, 3],
                  strides=[2, 2], pads=[1, 1, 1, 1]),
      h.make_node("Reshape", ["x", "rows"], ["xr"]),
      h.make_node("MaxPool", ["xr"], ["p1"], kernel_shape=[2],
                  strides=[2])],
     [nh.from_array(np.eye(16, dtype=np.float32).reshape(16, 16, 1, 1),
                    "w"),
      c("rows", np.array([1, 16, 64], np.int64))],
     [vi("x", F, [1, 16, 8, 8])], ["p", "pc", "p1"])

# 10. A bool input of any bytes: Cast to uint8 and float, Equal to
# True, Not, Where.
save("bool_bytes",
     [h.make_node("Cast", ["b"], ["u8"], to=T.UINT8),
      h.make_node("Cast", ["b"], ["f"], to=T.FLOAT),
      h.make_node("Equal", ["b", "t"], ["eq"]),
      h.make_node("Not", ["b"], ["nb"]),
      h.make_node("Where", ["b", "one", "two"], ["wh"])],
     [c("t", np.array(True)), c("one", np.ones(16, np.float32)),
      c("two", np.full(16, 2, np.float32))],
     [vi("b", T.BOOL, [16])], ["u8", "f", "eq", "nb", "wh"])

# 11. Tensors whose size comes from an input: ConstantOfShape of a shape
# and Expand to one (a hostile input asks for 2^48 bytes).
save("huge_alloc",
     [h.make_node("ConstantOfShape", ["s"], ["y"]),
      h.make_node("Expand", ["x", "e"], ["ex"])],
     [], [vi("s", T.INT64, [3]), vi("x", F, [1, 1]), vi("e", T.INT64, [2])],
     ["y", "ex"])

# 12. QDQ groups (ONNX Runtime's quantize_static) that must not fuse as
# they are: each differs from a fusable one in one precondition of
# passes/qfuse.c.  The Relu goes only with y's scale > 0.
def qdq(path, sy=0.05, zy=0, relu=True, sx=0.02, sw=0.01, conv=True):
    wq = rng.integers(-100, 100, (8, 4, 3, 3) if conv else (16, 8))
    inits = [c("sx", np.array(sx, np.float32)), c("zx", np.array(128, np.uint8)),
             c("wq", wq.astype(np.int8)),
             c("sw", np.full((8,) if conv else (), sw, np.float32)),
             c("zw", np.zeros((8,) if conv else (), np.int8)),
             c("sy", np.array(sy, np.float32)), c("zy", np.array(zy, np.uint8))]
    nodes = [h.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["x"]),
             h.make_node("DequantizeLinear", ["wq", "sw", "zw"], ["w"],
                         axis=0 if conv else 1),
             h.make_node("Conv", ["x", "w"], ["u"], pads=[1, 1, 1, 1])
             if conv else h.make_node("MatMul", ["x", "w"], ["u"])]
    if relu:
        nodes.append(h.make_node("Relu", ["u"], ["r"]))
    nodes.append(h.make_node("QuantizeLinear", ["r" if relu else "u", "sy",
                                                "zy"], ["y"]))
    save(path, nodes, inits,
         [vi("xq", T.UINT8, [1, 4, 6, 6] if conv else [3, 16])], ["y"],
         opset=13)


qdq("qdq_fuses")                     # the fusable group
qdq("qdq_neg_scale_relu", sy=-0.05)  # Relu kept: y's scale < 0
qdq("qdq_matmul_neg_scale_relu", sy=-0.05, conv=False)
qdq("qdq_zero_point_relu", zy=3)     # Relu kept: zy not the lowest
qdq("qdq_zero_scale", sy=0.0, relu=False)    # QuantizeLinear refuses
qdq("qdq_nan_x_scale", sx=float("nan"), relu=False)
qdq("qdq_inf_w_scale", sw=float("inf"), relu=False)

# Found by tests/fuzz/fuzz_diff.c after the twelve:
# 13. LayerNormalization of a row holding -1e37 (rows of 48: direct.c's
# vector path, whose float sum of squares overflowed).
save("layernorm_huge",
     [h.make_node("LayerNormalization", ["x", "g", "bb"], ["y"], axis=-1)],
     [w("g", 48), w("bb", 48)], [vi("x", F, [3, 2, 48])], ["y"])
# 14. FusedConv with Z and an activation where a pad covers the window
# (oneDNN's brgconv faulted with a sum and an eltwise post-op), both
# orders of the sum and the activation.
save("conv_pad_covers",
     [h.make_node("Conv", ["x", "w"], ["c"], pads=[3, 0, 0, 0]),
      h.make_node("Add", ["z", "c"], ["a"]),
      h.make_node("Sigmoid", ["a"], ["y"]),
      h.make_node("Conv", ["x", "w"], ["c2"], pads=[0, 0, 3, 0]),
      h.make_node("Tanh", ["c2"], ["t2"]),
      h.make_node("Add", ["z", "t2"], ["y2"])],
     [w("w", 4, 4, 3, 3)],
     [vi("x", F, [1, 4, 8, 8]), vi("z", F, [1, 4, 9, 6])], ["y", "y2"])
# 15. A grouped 1-D Conv with a Sigmoid and a Clip (oneDNN's gemm:jit
# convolution applies post-ops in a pass of its own: NaN became 0).
save("conv1d_gemm_acts",
     [h.make_node("Conv", ["x", "w"], ["c"], group=2, strides=[2],
                  pads=[0, 1]),
      h.make_node("Sigmoid", ["c"], ["y"]),
      h.make_node("Conv", ["x", "w"], ["c2"], group=2, strides=[2],
                  pads=[0, 1]),
      h.make_node("Clip", ["c2"], ["y2"])],
     [w("w", 4, 1, 3)], [vi("x", F, [1, 2, 8])], ["y", "y2"])
# 20. Gemm with beta = 0 and a C of NaN and Inf: C is not read (BLAS,
# ONNX Runtime), on every path.
save("gemm_beta0",
     [h.make_node("Gemm", ["a", "b", "c"], ["y"], beta=0.0)], [],
     [vi("a", F, [2, 3]), vi("b", F, [3, 4]), vi("c", F, [1, 4])], ["y"])
# 14b (after the rest, their weights unchanged). 14 where no pad covers the window but the dilation steps
# its taps over a 1-wide input (a 3-D Conv; fuzz_diff found it after
# the pool of threads changed its path through the corpus).
save("conv_dilation_skips_input",
     [h.make_node("Conv", ["x", "w"], ["c"], dilations=[1, 2, 2],
                  pads=[1, 3, 1, 2, 3, 1]),
      h.make_node("Add", ["c", "z"], ["a"]),
      h.make_node("LeakyRelu", ["a"], ["y"], alpha=0.6875)],
     [w("w", 2, 1, 4, 4, 2)],
     [vi("x", F, [1, 1, 1, 1, 1]), vi("z", F, [1, 2, 1, 1, 1])], ["y"])
# 23 (after the rest). MaxPool and AveragePool windows of every kind
# (ceil_mode, pads, SAME_UPPER and SAME_LOWER, dilations,
# count_include_pad) on runtime/chanwise.c's kernel, channels-last
# behind a Transpose of an NHWC input (its bytes copied as they are) and
# row-major on the graph's input: the reference's bits.
save("pool_windows",
     [h.make_node("Transpose", ["xt"], ["c"], perm=[0, 3, 1, 2]),
      h.make_node("MaxPool", ["c"], ["m1"], kernel_shape=[3, 3],
                  strides=[2, 2], pads=[1, 0, 1, 1], ceil_mode=1),
      h.make_node("AveragePool", ["c"], ["a1"], kernel_shape=[3, 3],
                  strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1,
                  count_include_pad=1),
      h.make_node("AveragePool", ["c"], ["a2"], kernel_shape=[2, 2],
                  auto_pad="SAME_UPPER"),
      h.make_node("MaxPool", ["c"], ["m2"], kernel_shape=[2, 3],
                  dilations=[2, 1], pads=[1, 1, 0, 2]),
      h.make_node("AveragePool", ["x"], ["a3"], kernel_shape=[3, 3],
                  strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
      h.make_node("MaxPool", ["x"], ["m3"], kernel_shape=[3, 3],
                  auto_pad="SAME_LOWER")],
     [], [vi("xt", F, [2, 11, 13, 20]), vi("x", F, [2, 20, 11, 13])],
     ["m1", "a1", "a2", "m2", "a3", "m3"])
