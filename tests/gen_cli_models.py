#!/usr/bin/python3
"""Generates the fixtures of the command line as atc and OpenVINO users
write it (tests/test_cli_atc.c): small models, committed; neither the
build nor the tests run Python.  Rerun from the repository root after
changing it:

    /usr/bin/python3 tests/gen_cli_models.py

Deterministic (fixed seeds): rerunning gives byte-identical files.

  cli_unsupported.onnx  x float [1,4] -> NoSuchOp (ai.onnx) -> NotAnOp
                        (com.microsoft) -> FancyOp (com.example) -> Relu
                        -> NoSuchOp -> y: three distinct ops gearc does
                        not know, one of them twice.
  cli_chain.onnx        x float [1,4] -> /r Relu -> /n Neg -> /s Split
                        (two outputs of [1,2]) -> /a Abs (first half) and
                        /e Exp (second half) -> Concat -> y [1,4]; named
                        nodes for --out_nodes.
  cli_kv.onnx           a decoder step with a KV cache: input_ids int64
                        ["batch","seq"], past_key_0..2 and
                        past_value_0..2 float ["batch",2,
                        "past_sequence_length",4]; present_* = Concat of
                        past_* and a [batch,2,seq,4] projection of the
                        ids along the sequence axis; logits float
                        ["batch","seq",4].  Seven inputs share "batch",
                        six share "past_sequence_length".
  aipp_cnn.onnx         x float [1,3,8,8] -> Conv(3->4, 3x3, no padding,
                        bias) -> Relu -> Conv(4->2, 1x1) -> y [1,2,6,6]:
                        preprocessing folds into the first Conv.
  aipp_cnn_pad.onnx     the same with padding 1 on the first Conv ->
                        y [1,2,8,8]: a mean does not fold exactly (the
                        padded border would see the mean), so the
                        preprocessing stays a node of its own.
  aipp_img.onnx         x float ["n",3,"h","w"] -> Identity -> y: the
                        preprocessed image itself, to check it pixel by
                        pixel at any size.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def save(model, name):
    if name != "cli_unsupported.onnx":  # the checker knows no FancyOp
        onnx.checker.check_model(model)
    path = os.path.join(OUT, name)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    print("wrote", path)


def model(graph, opset=13, extra=()):
    ops = [helper.make_opsetid("", opset)] + [
        helper.make_opsetid(d, 1) for d in extra]
    m = helper.make_model(graph, opset_imports=ops,
                          producer_name="gen_cli_models")
    m.ir_version = 8
    return m


def unsupported():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    nodes = [
        helper.make_node("NoSuchOp", ["x"], ["a"], name="n1"),
        helper.make_node("NotAnOp", ["a"], ["b"], name="n2",
                         domain="com.microsoft"),
        helper.make_node("FancyOp", ["b"], ["c"], name="n3",
                         domain="com.example"),
        helper.make_node("Relu", ["c"], ["d"], name="n4"),
        helper.make_node("NoSuchOp", ["d"], ["y"], name="n5"),
    ]
    g = helper.make_graph(nodes, "unsupported", [x], [y])
    save(model(g, extra=("com.microsoft", "com.example")),
         "cli_unsupported.onnx")


def chain():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="/r"),
        helper.make_node("Neg", ["r"], ["n"], name="/n"),
        helper.make_node("Split", ["n"], ["s0", "s1"], name="/s", axis=1),
        helper.make_node("Abs", ["s0"], ["a"], name="/a"),
        helper.make_node("Exp", ["s1"], ["e"], name="/e"),
        helper.make_node("Concat", ["a", "e"], ["y"], name="/c", axis=1),
    ]
    g = helper.make_graph(nodes, "chain", [x], [y])
    save(model(g), "cli_chain.onnx")


def kv():
    rng = np.random.default_rng(7)
    past = ["batch", 2, "past_sequence_length", 4]
    ins = [helper.make_tensor_value_info("input_ids", TensorProto.INT64,
                                         ["batch", "seq"])]
    outs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                          ["batch", "seq", 4])]
    emb = numpy_helper.from_array(
        rng.standard_normal((16, 8)).astype(np.float32), "emb")
    nodes = [
        helper.make_node("Gather", ["emb", "input_ids"], ["h"]),  # [b,s,8]
        helper.make_node("Shape", ["input_ids"], ["ids_shape"]),
        helper.make_node("Concat", ["ids_shape", "kv_tail"], ["kv_shape"],
                         axis=0),
        helper.make_node("Reshape", ["h", "kv_shape"], ["h4"]),
        helper.make_node("Transpose", ["h4"], ["kv"], perm=[0, 2, 1, 3]),
        helper.make_node("Slice", ["h", "s0", "s4", "s2"], ["logits"]),
    ]
    # h [b,s,8] -> [b,s,2,4] -> [b,2,s,4]
    inits = [
        emb,
        numpy_helper.from_array(np.array([2, 4], np.int64), "kv_tail"),
        numpy_helper.from_array(np.array([0], np.int64), "s0"),
        numpy_helper.from_array(np.array([4], np.int64), "s4"),
        numpy_helper.from_array(np.array([2], np.int64), "s2"),
    ]
    for kind in ("key", "value"):
        for i in range(3):
            p, q = f"past_{kind}_{i}", f"present_{kind}_{i}"
            ins.append(helper.make_tensor_value_info(p, TensorProto.FLOAT,
                                                     past))
            outs.append(helper.make_tensor_value_info(
                q, TensorProto.FLOAT,
                ["batch", 2, "total_sequence_length", 4]))
            nodes.append(helper.make_node("Concat", [p, "kv"], [q], axis=2))
    g = helper.make_graph(nodes, "kv", ins, outs, inits)
    save(model(g), "cli_kv.onnx")


def cnn(name, pad):
    rng = np.random.default_rng(11 + pad)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    hw = 8 if pad else 6
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, hw, hw])
    inits = [
        numpy_helper.from_array(
            (rng.standard_normal((4, 3, 3, 3)) * 0.5).astype(np.float32),
            "w1"),
        numpy_helper.from_array(
            rng.standard_normal(4).astype(np.float32) * 0.1, "b1"),
        numpy_helper.from_array(
            (rng.standard_normal((2, 4, 1, 1)) * 0.5).astype(np.float32),
            "w2"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="/conv1",
                         kernel_shape=[3, 3], pads=[pad] * 4),
        helper.make_node("Relu", ["c1"], ["r1"], name="/relu"),
        helper.make_node("Conv", ["r1", "w2"], ["y"], name="/conv2",
                         kernel_shape=[1, 1]),
    ]
    g = helper.make_graph(nodes, "cnn", [x], [y], inits)
    save(model(g), name)


def image():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                      ["n", 3, "h", "w"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                      ["n", 3, "h", "w"])
    nodes = [helper.make_node("Identity", ["x"], ["y"], name="/id")]
    g = helper.make_graph(nodes, "img", [x], [y])
    save(model(g), "aipp_img.onnx")


def main():
    sys.dont_write_bytecode = True
    unsupported()
    chain()
    kv()
    cnn("aipp_cnn.onnx", 0)
    cnn("aipp_cnn_pad.onnx", 1)
    image()


if __name__ == "__main__":
    main()
