#!/usr/bin/python3
"""tests/gen_precision_models.py - tests/fixtures/prec_cnn.onnx for
tests/test_precision.c: a small CNN whose convolutions and hidden MatMul
reduce over 64 values or more (where the runtime computes a node marked
reduced in bfloat16),
a depthwise one (marked, but computed in float32: memory-bound), and a
MatMul head, the last layer before the output (never marked).  Run from
the repository root with /usr/bin/python3."""
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

rng = np.random.default_rng(43)


def w(name, *shape, scale=0.2):
    return nh.from_array((rng.standard_normal(shape) * scale)
                         .astype(np.float32), name)


nodes = [
    h.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1],
                name="conv1"),
    h.make_node("Relu", ["c1"], ["r1"], name="relu1"),
    h.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2"),
    h.make_node("Relu", ["c2"], ["r2"], name="relu2"),
    h.make_node("Conv", ["r2", "w3"], ["c3"], pads=[1, 1, 1, 1], group=64,
                name="dwconv"),
    h.make_node("MatMul", ["c3t", "wm"], ["m1"], name="mm_hidden"),
    h.make_node("GlobalAveragePool", ["m1g"], ["g"], name="gap"),
    h.make_node("Flatten", ["g"], ["f"], name="flatten"),
    h.make_node("MatMul", ["f", "wh"], ["y0"], name="head"),
    h.make_node("Softmax", ["y0"], ["y"], axis=-1, name="softmax"),
]
# the hidden MatMul over channels: NCHW -> NHWC, MatMul, back
nodes.insert(5, h.make_node("Transpose", ["c3"], ["c3t"], perm=[0, 2, 3, 1],
                            name="to_nhwc"))
nodes.insert(7, h.make_node("Transpose", ["m1"], ["m1g"], perm=[0, 3, 1, 2],
                            name="to_nchw"))
g = h.make_graph(
    nodes, "prec_cnn",
    [h.make_tensor_value_info("x", T.FLOAT, ["N", 32, 16, 16])],
    [h.make_tensor_value_info("y", T.FLOAT, ["N", 10])],
    [w("w1", 64, 32, 3, 3, scale=0.1), w("b1", 64),
     w("w2", 64, 64, 1, 1, scale=0.1), w("b2", 64), w("w3", 64, 1, 3, 3),
     w("wm", 64, 64, scale=0.1), w("wh", 64, 10)])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, "tests/fixtures/prec_cnn.onnx")
