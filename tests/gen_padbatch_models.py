#!/usr/bin/python3
"""tests/gen_padbatch_models.py - makes tests/fixtures/padbatch/*.onnx for
tests/test_padbatch.c: models whose batch rows are independent (a run may
pad the batch to a larger gear, passes/batchrows.c) and near misses where
one node mixes the rows.  The batch is axis 0 of input x, left dynamic
("N").  Run from the repository root."""
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

rng = np.random.default_rng(41)
F = T.FLOAT


def w(name, *shape):
    return nh.from_array(rng.standard_normal(shape).astype(np.float32), name)


def c(name, a):
    return nh.from_array(np.asarray(a), name)


def save(path, nodes, inits, shape, outputs, opset=17, extra_inputs=()):
    for i, n in enumerate(nodes):
        n.name = "%s_%d" % (n.op_type.lower(), i)
    inputs = [h.make_tensor_value_info("x", F, shape)] + [
        h.make_tensor_value_info(name, F, s) for name, s in extra_inputs]
    g = h.make_graph(nodes, path, inputs,
                     [h.make_tensor_value_info(o, F, None) for o in outputs],
                     inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, "tests/fixtures/padbatch/" + path + ".onnx")


# A CNN classifier: Conv, BN, Relu, pooling, Flatten, Gemm, Softmax.
save("cnn", [h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c"], ["r"]),
             h.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2],
                         strides=[2, 2]),
             h.make_node("GlobalAveragePool", ["p"], ["g"]),
             h.make_node("Flatten", ["g"], ["f"]),
             h.make_node("Gemm", ["f", "wg", "bg"], ["l"], transB=1),
             h.make_node("Softmax", ["l"], ["y"])],
     [w("w", 8, 3, 3, 3), w("b", 8), w("wg", 5, 8), w("bg", 5)],
     ["N", 3, 8, 8], ["y"])
# Self-attention over [N, S, D]: MatMuls of the batch with itself,
# Softmax over the last axis, LayerNorm; and an output whose batch a
# Transpose puts on axis 1.
save("attention",
     [h.make_node("MatMul", ["x", "wq"], ["q"]),
      h.make_node("MatMul", ["x", "wk"], ["k"]),
      h.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
      h.make_node("MatMul", ["q", "kt"], ["s"]),
      h.make_node("Softmax", ["s"], ["p"], axis=-1),
      h.make_node("MatMul", ["p", "x"], ["a"]),
      h.make_node("LayerNormalization", ["a", "ln"], ["y"], axis=-1),
      h.make_node("Transpose", ["y"], ["yt"], perm=[1, 0, 2])],
     [w("wq", 16, 16), w("wk", 16, 16), w("ln", 16)],
     ["N", 6, 16], ["y", "yt"])
# Near misses, one node each mixing the rows:
# a mean over the batch (BatchNorm's statistics at run time),
save("mix_reduce",
     [h.make_node("ReduceMean", ["x"], ["m"], axes=[0], keepdims=1),
      h.make_node("Sub", ["x", "m"], ["y"])], [], ["N", 4, 8], ["y"])
# a Reshape folding the batch into the next axis,
save("mix_reshape",
     [h.make_node("Reshape", ["x", "s"], ["r"]),
      h.make_node("Softmax", ["r"], ["y"], axis=0)],
     [c("s", np.array([-1, 8], np.int64))], ["N", 4, 8], ["y"])
# a dynamic int8 quantisation (its scale from the whole tensor),
save("mix_dynq",
     [h.make_node("DynamicQuantizeLinear", ["x"], ["q", "sc", "zp"]),
      h.make_node("DequantizeLinear", ["q", "sc", "zp"], ["y"])],
     [], ["N", 4, 8], ["y"])
# a MatMul over the batch (rows of the transposed input).
save("mix_matmul",
     [h.make_node("Transpose", ["x"], ["xt"], perm=[1, 0]),
      h.make_node("MatMul", ["xt", "x"], ["y"])], [], ["N", 8], ["y"])
# a reduction over every axis (ReduceMean without axes, opset 13),
save("mix_reduceall",
     [h.make_node("ReduceMean", ["x"], ["m"], keepdims=1),
      h.make_node("Sub", ["x", "m"], ["y"])], [], ["N", 4, 8], ["y"],
     opset=13)
# a Slice of the batch, its axes an input (opset 13) or its starts
# attributes naming the first axes (opset 9).
save("mix_slice",
     [h.make_node("Slice", ["x", "st", "en", "ax"], ["y"])],
     [c("st", np.array([0], np.int64)), c("en", np.array([1], np.int64)),
      c("ax", np.array([0], np.int64))], ["N", 4, 8], ["y"], opset=13)
save("mix_slice9",
     [h.make_node("Slice", ["x"], ["y"], starts=[0], ends=[1])],
     [], ["N", 4, 8], ["y"], opset=9)
# Independent: a Transpose without perm (reversing the axes) puts the
# batch last.
save("transpose_default",
     [h.make_node("Transpose", ["x"], ["t"]),
      h.make_node("Relu", ["t"], ["y"])], [], ["N", 4, 8], ["y"])
# A streaming recurrent step: x [N, 8] and a state h [1, N, 16] whose batch
# is axis 1 (a gear dim tied to x's): GRU over one time step, the new
# state out ([1, N, 16]) and a head on it ([N, 4]).
save("rnn_state",
     [h.make_node("Unsqueeze", ["x", "ax0"], ["xs"]),
      h.make_node("GRU", ["xs", "gw", "gr", "gb", "", "h"], ["", "hn"],
                  hidden_size=16),
      h.make_node("Squeeze", ["hn", "ax0"], ["hs"]),
      h.make_node("MatMul", ["hs", "wo"], ["y"])],
     [c("ax0", np.array([0], np.int64)), w("gw", 1, 48, 8),
      w("gr", 1, 48, 16), w("gb", 1, 96), w("wo", 16, 4)],
     ["N", 8], ["hn", "y"], extra_inputs=[("h", [1, "N", 16])])
