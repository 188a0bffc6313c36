#!/usr/bin/python3
# tests/gen_bench_models.py - the synthetic models of `make bench`'s
# ONNX Runtime comparison (tests/bench_ort.mjs):
#
#   bench_cnn.onnx  a ResNet-style CNN, x: [N, 3, 224, 224] -> probs [N, 100]:
#                   7x7/2 stem, max pool, four stages of one basic block
#                   (3x3 convs with BatchNormalization, Relu, residual Add,
#                   1x1/2 projection where the width changes), global average
#                   pool, Gemm, Softmax.  Widths 16-96 keep the file < 2 MB.
#   bench_tf.onnx   a transformer encoder, x: [1, S, 128] -> y [1, S, 128]:
#                   two layers of 4-head self-attention (MatMul + bias,
#                   Reshape/Transpose per head, scaled Softmax) and an Erf
#                   GELU feed-forward of width 256, post-LayerNormalization.
#
# Weights are random with a fixed seed, so the files are reproducible; the
# bench only reads the committed .onnx files (it never needs python):
#
#   /usr/bin/python3 tests/gen_bench_models.py tests/fixtures
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(15)
inits = []
nodes = []
count = [0]


def name(prefix):
    count[0] += 1
    return "%s_%d" % (prefix, count[0])


def weight(shape, scale=None):
    n = name("w")
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    s = scale if scale is not None else (2.0 / fan_in) ** 0.5
    w = (rng.standard_normal(shape) * s).astype(np.float32)
    inits.append(numpy_helper.from_array(w, n))
    return n


def const(values, dtype=np.float32):
    n = name("c")
    inits.append(numpy_helper.from_array(np.array(values, dtype=dtype), n))
    return n


def node(op, inputs, **attrs):
    out = name(op.lower())
    nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
    return out


def conv_bn(x, cin, cout, k, stride, relu=True):
    w = weight([cout, cin, k, k])
    y = node("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride],
             pads=[k // 2] * 4)
    scale = const(rng.uniform(0.5, 1.5, cout))
    bias = const(rng.uniform(-0.1, 0.1, cout))
    mean = const(rng.uniform(-0.1, 0.1, cout))
    var = const(rng.uniform(0.5, 1.5, cout))
    y = node("BatchNormalization", [y, scale, bias, mean, var],
             epsilon=1e-5)
    return node("Relu", [y]) if relu else y


def basic_block(x, cin, cout, stride):
    y = conv_bn(x, cin, cout, 3, stride)
    y = conv_bn(y, cout, cout, 3, 1, relu=False)
    skip = x if cin == cout and stride == 1 else \
        conv_bn(x, cin, cout, 1, stride, relu=False)
    return node("Relu", [node("Add", [y, skip])])


def cnn():
    x = "x"
    y = conv_bn(x, 3, 16, 7, 2)
    y = node("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1])
    widths = [16, 32, 64, 96]
    cin = 16
    for i, c in enumerate(widths):
        y = basic_block(y, cin, c, 1 if i == 0 else 2)
        cin = c
    y = node("GlobalAveragePool", [y])
    y = node("Flatten", [y], axis=1)
    y = node("Gemm", [y, weight([100, cin]), const(np.zeros(100))],
             transB=1)
    nodes.append(helper.make_node("Softmax", [y], ["probs"], axis=1))
    return helper.make_graph(
        nodes, "bench_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       ["N", 3, 224, 224])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT,
                                       ["N", 100])], inits)


def linear(x, din, dout):
    y = node("MatMul", [x, weight([din, dout], (1.0 / din) ** 0.5)])
    return node("Add", [y, const(rng.uniform(-0.1, 0.1, dout))])


def layer_norm(x, d):
    return node("LayerNormalization",
                [x, const(rng.uniform(0.8, 1.2, d)),
                 const(rng.uniform(-0.1, 0.1, d))], axis=-1, epsilon=1e-5)


def attention(x, d, heads):
    split = const([1, -1, heads, d // heads], np.int64)
    def proj(perm):
        return node("Transpose", [node("Reshape", [linear(x, d, d), split])],
                    perm=perm)
    q, k, v = proj([0, 2, 1, 3]), proj([0, 2, 3, 1]), proj([0, 2, 1, 3])
    s = node("Mul", [node("MatMul", [q, k]),
                     const((d // heads) ** -0.5)])
    a = node("MatMul", [node("Softmax", [s], axis=-1), v])
    a = node("Transpose", [a], perm=[0, 2, 1, 3])
    a = node("Reshape", [a, const([1, -1, d], np.int64)])
    return linear(a, d, d)


def gelu(x):
    e = node("Erf", [node("Div", [x, const(2 ** 0.5)])])
    return node("Mul", [node("Mul", [x, node("Add", [e, const(1.0)])]),
                        const(0.5)])


def transformer():
    d, ffn, heads = 128, 256, 4
    y = "x"
    for _ in range(2):
        y = layer_norm(node("Add", [y, attention(y, d, heads)]), d)
        f = linear(gelu(linear(y, d, ffn)), ffn, d)
        y = layer_norm(node("Add", [y, f]), d)
    nodes.append(helper.make_node("Identity", [y], ["y"]))
    return helper.make_graph(
        nodes, "bench_tf",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [1, "S", d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       [1, "S", d])], inits)


def save(graph, path):
    model = helper.make_model(graph, producer_name="gen_bench_models",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    del nodes[:], inits[:]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures"
    save(cnn(), out + "/bench_cnn.onnx")
    save(transformer(), out + "/bench_tf.onnx")


if __name__ == "__main__":
    main()
