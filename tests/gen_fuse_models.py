#!/usr/bin/python3
"""Fixtures for tests/test_fuse.c: one small model per fusion pattern of
passes/fuse.c, each with one float input x [N, 4, 8, 8] (or [N, 6, 16]
for the MatMul ones) and output y.  Run from the repository root:
    /usr/bin/python3 tests/gen_fuse_models.py"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(15)


def w(name, *shape, scale=0.3):
    return numpy_helper.from_array(
        (rng.standard_normal(shape) * scale).astype(np.float32), name)


def s(name, v):
    return numpy_helper.from_array(np.array(v, dtype=np.float32), name)


def save(name, nodes, inits, xshape, yshape, opset=13):
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, xshape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, yshape)],
        inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, "tests/fixtures/fuse/%s.onnx" % name)


def conv(name, x, y, cin=4, cout=4, bias=True):
    inits = [w(name + ".w", cout, cin, 3, 3)]
    ins = [x, name + ".w"]
    if bias:
        inits.append(w(name + ".b", cout))
        ins.append(name + ".b")
    return helper.make_node("Conv", ins, [y], name=name, pads=[1, 1, 1, 1]), inits


def bn(name, x, y, c=4):
    inits = [w(name + ".s", c), w(name + ".b", c),
             w(name + ".m", c),
             numpy_helper.from_array(
                 (rng.random(c) + 0.5).astype(np.float32), name + ".v")]
    return helper.make_node("BatchNormalization",
                            [x] + [name + k for k in (".s", ".b", ".m", ".v")],
                            [y], name=name, epsilon=1e-3), inits


X = ["N", 4, 8, 8]

# Conv + BatchNormalization + Relu, and a second conv sharing nothing
n1, i1 = conv("c1", "x", "a")
n2, i2 = bn("bn1", "a", "b")
save("conv_bn_relu", [n1, n2, helper.make_node("Relu", ["b"], ["y"])],
     i1 + i2, X, X)

# Conv (no bias) + residual Add of x + written-out HardSwish x*Clip(x+3,0,6)/6
n1, i1 = conv("c1", "x", "a", bias=False)
save("conv_res_hswish", [
    n1, helper.make_node("Add", ["x", "a"], ["r"]),
    helper.make_node("Add", ["r", "three"], ["r3"]),
    helper.make_node("Clip", ["r3", "zero", "six"], ["cl"]),
    helper.make_node("Mul", ["r", "cl"], ["p"]),
    helper.make_node("Div", ["p", "six"], ["y"])],
    i1 + [s("three", 3), s("zero", 0), s("six", 6)], X, X)

# Conv + x*Relu6(x+3) * (1/6) with the Mul by 1/6 first, then Clip(x*a+b,0,1)
n1, i1 = conv("c1", "x", "a")
n2, i2 = conv("c2", "h", "c")
save("conv_hsig_forms", [
    n1, helper.make_node("Add", ["a", "three"], ["a3"]),
    helper.make_node("Clip", ["a3", "zero", "six"], ["cl"]),
    helper.make_node("Mul", ["cl", "sixth"], ["hs"]),
    helper.make_node("Mul", ["a", "hs"], ["h"]),
    n2, helper.make_node("Mul", ["c", "alpha"], ["cm"]),
    helper.make_node("Add", ["cm", "beta"], ["cb"]),
    helper.make_node("Clip", ["cb", "zero", "one"], ["y"])],
    i1 + i2 + [s("three", 3), s("zero", 0), s("six", 6), s("one", 1),
               s("sixth", 1 / 6), s("alpha", 0.25), s("beta", 0.4)], X, X)

# Conv + Clip(x+3,0,6)/6 (HardSigmoid) + LeakyRelu + Tanh, opset 17 with
# a HardSwish op after a second conv
n1, i1 = conv("c1", "x", "a")
n2, i2 = conv("c2", "t", "c")
save("conv_acts17", [
    n1, helper.make_node("Add", ["a", "three"], ["a3"]),
    helper.make_node("Clip", ["a3", "zero", "six"], ["cl"]),
    helper.make_node("Div", ["cl", "six"], ["hs"]),
    helper.make_node("LeakyRelu", ["hs"], ["lr"], alpha=0.2),
    helper.make_node("Tanh", ["lr"], ["t"]),
    n2, helper.make_node("HardSwish", ["c"], ["y"])],
    i1 + i2 + [s("three", 3), s("zero", 0), s("six", 6)], X, X, opset=17)

# MatMul + bias Add + Sigmoid; Gemm + BatchNormalization + HardSigmoid
M = ["N", 6, 16]
save("matmul_bias", [
    helper.make_node("MatMul", ["x", "mw"], ["a"]),
    helper.make_node("Add", ["a", "mb"], ["b"]),
    helper.make_node("Sigmoid", ["b"], ["y"])],
    [w("mw", 16, 16), w("mb", 16)], M, M)
save("gemm_bn", [
    helper.make_node("Flatten", ["x"], ["f"], axis=1),
    helper.make_node("Gemm", ["f", "gw", "gc"], ["a"], transB=1, beta=0.5),
    bn("bn1", "a", "b", c=10)[0],
    helper.make_node("HardSigmoid", ["b"], ["y"], alpha=0.3, beta=0.6)],
    [w("gw", 10, 96), w("gc", 10)] + bn("bn1", "a", "b", c=10)[1],
    ["N", 6, 16], ["N", 10])

# ConvTranspose (group 2) + BatchNormalization
save("convt_bn", [
    helper.make_node("ConvTranspose", ["x", "tw", "tb"], ["a"], group=2,
                     strides=[2, 2]),
    bn("bn1", "a", "y", c=6)[0]],
    [w("tw", 4, 3, 2, 2), w("tb", 6)] + bn("bn1", "a", "y", c=6)[1],
    X, ["N", 6, 16, 16])

# A residual block whose shortcut Conv + BatchNormalization come after the
# main path in node order: the main path's chain takes in the Add first,
# and the shortcut's BatchNormalization must still fold into its Conv
n1, i1 = conv("c1", "x", "a")
n2, i2 = bn("bn1", "a", "b")
n3, i3 = conv("c2", "r", "c")
n4, i4 = bn("bn2", "c", "d")
n5, i5 = conv("c3", "x", "e")
n6, i6 = bn("bn3", "e", "f")
save("conv_res_shortcut_bn", [
    n1, n2, helper.make_node("Relu", ["b"], ["r"]), n3, n4, n5, n6,
    helper.make_node("Add", ["d", "f"], ["s"]),
    helper.make_node("Relu", ["s"], ["y"])],
    i1 + i2 + i3 + i4 + i5 + i6, X, X)

# MatMul + bias + GELU as torch.onnx writes it: x * (1 + Erf(x / sqrt(2)))
# * 0.5; and the other common form, 0.5 x first and x * (1 / sqrt(2))
save("matmul_gelu", [
    helper.make_node("MatMul", ["x", "gm"], ["a"]),
    helper.make_node("Add", ["a", "gb"], ["b"]),
    helper.make_node("Div", ["b", "sqrt2"], ["d"]),
    helper.make_node("Erf", ["d"], ["e"]),
    helper.make_node("Add", ["e", "one"], ["e1"]),
    helper.make_node("Mul", ["b", "e1"], ["p"]),
    helper.make_node("Mul", ["p", "half"], ["g"]),
    helper.make_node("MatMul", ["g", "gm2"], ["c"]),
    helper.make_node("Mul", ["c", "half"], ["ch"]),
    helper.make_node("Mul", ["c", "rsqrt2"], ["cd"]),
    helper.make_node("Erf", ["cd"], ["ce"]),
    helper.make_node("Add", ["one", "ce"], ["ce1"]),
    helper.make_node("Mul", ["ce1", "ch"], ["y"])],
    [w("gm", 16, 16), w("gb", 16), w("gm2", 16, 16), s("sqrt2", 2 ** 0.5),
     s("rsqrt2", 2 ** -0.5), s("one", 1), s("half", 0.5)], M, M)

# MatMul of two variables (attention's Q K^T) + Div by a constant + Sub of
# one: a Linear(1/4, -1) activation, the two steps merged
save("matmul_linear", [
    helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
    helper.make_node("MatMul", ["x", "xt"], ["a"]),
    helper.make_node("Div", ["a", "four"], ["d"]),
    helper.make_node("Sub", ["d", "one"], ["y"])],
    [s("four", 4), s("one", 1)], M, ["N", 6, 6])

# PP-LCNetV3's block as Paddle2ONNX writes it (opset 9): Conv, the
# learnable affine Mul(K, x) -> Add(x, K) of [1] constants, HardSwish as
# Add(x, 3) -> Clip(min=0, max=6 attributes) -> Mul(x, .) -> Div(6), then
# the next learnable affine Mul(K, x) -> Add(x, K): the first affine folds
# into the conv's weights, HardSwish and the second become activations
n1, i1 = conv("c1", "x", "a")
save("conv_paddle_hswish", [
    n1, helper.make_node("Mul", ["k1", "a"], ["am"]),
    helper.make_node("Add", ["am", "b1"], ["ab"]),
    helper.make_node("Add", ["ab", "three"], ["a3"]),
    helper.make_node("Clip", ["a3"], ["cl"], min=0.0, max=6.0),
    helper.make_node("Mul", ["ab", "cl"], ["p"]),
    helper.make_node("Div", ["p", "six"], ["hs"]),
    helper.make_node("Mul", ["k2", "hs"], ["hm"]),
    helper.make_node("Add", ["hm", "b2"], ["y"])],
    i1 + [s("k1", [1.4]), s("b1", [0.6]), s("three", 3), s("six", 6),
          s("k2", [0.17]), s("b2", [0.2])], X, X, opset=9)

# Per-channel affine steps after a conv, as torch.onnx and tf2onnx write a
# folded normalisation: Mul by [1,C,1,1] (constant on the left), Sub of
# [C,1,1], Div by a scalar, then Relu; after a second conv (no bias) the
# constant minus x, K - x with K [1,C,1,1]: all fold into the weights
n1, i1 = conv("c1", "x", "a")
n2, i2 = conv("c2", "r", "c", bias=False)
C4 = rng.standard_normal((1, 4, 1, 1)).astype(np.float32)
save("conv_chan_affine", [
    n1, helper.make_node("Mul", ["ck", "a"], ["am"]),
    helper.make_node("Sub", ["am", "cb"], ["as"]),
    helper.make_node("Div", ["as", "two"], ["ad"]),
    helper.make_node("Relu", ["ad"], ["r"]),
    n2, helper.make_node("Sub", ["ck", "c"], ["y"])],
    i1 + i2 + [numpy_helper.from_array(C4, "ck"),
               numpy_helper.from_array(C4[0] * 0.5 + 0.25, "cb"),
               s("two", 2)], X, X)

# LayerNorm written out over the last axis, as Paddle2ONNX writes SVTR's
# (opset 9, and torch.onnx before opset 17): ReduceMean, Sub, Pow 2,
# ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta; after a MatMul with
# its bias and a residual of x, x read by the residual after it too
save("matmul_layernorm", [
    helper.make_node("MatMul", ["x", "lw"], ["a"]),
    helper.make_node("Add", ["a", "lb"], ["ab"]),
    helper.make_node("Add", ["x", "ab"], ["r"]),
    helper.make_node("ReduceMean", ["r"], ["m"], axes=[-1]),
    helper.make_node("Sub", ["r", "m"], ["d"]),
    helper.make_node("Pow", ["d", "two"], ["d2"]),
    helper.make_node("ReduceMean", ["d2"], ["v"], axes=[-1]),
    helper.make_node("Add", ["v", "eps"], ["ve"]),
    helper.make_node("Sqrt", ["ve"], ["sd"]),
    helper.make_node("Div", ["d", "sd"], ["n"]),
    helper.make_node("Mul", ["n", "gamma"], ["ng"]),
    helper.make_node("Add", ["ng", "beta"], ["ln"]),
    helper.make_node("Add", ["r", "ln"], ["y"])],
    [w("lw", 16, 16), w("lb", 16), s("two", 2), s("eps", 1e-5),
     numpy_helper.from_array(
         (rng.random(16) + 0.5).astype(np.float32), "gamma"),
     w("beta", 16)], M, M, opset=9)

# Its other spelling: the square as d * d, axes [2] (the last axis
# counted from the front), eps on the left, gamma on the left and no beta
save("layernorm_muls", [
    helper.make_node("ReduceMean", ["x"], ["m"], axes=[2]),
    helper.make_node("Sub", ["x", "m"], ["d"]),
    helper.make_node("Mul", ["d", "d"], ["d2"]),
    helper.make_node("ReduceMean", ["d2"], ["v"], axes=[2]),
    helper.make_node("Add", ["eps", "v"], ["ve"]),
    helper.make_node("Sqrt", ["ve"], ["sd"]),
    helper.make_node("Div", ["d", "sd"], ["n"]),
    helper.make_node("Mul", ["gamma", "n"], ["y"])],
    [s("eps", 1e-6),
     numpy_helper.from_array(
         (rng.random(16) + 0.5).astype(np.float32), "gamma")], M, M)
