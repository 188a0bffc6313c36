#!/usr/bin/python3
"""Generates the fixture of issue 18 (a model as a new user brings it):
a Silero-VAD-style If on a runtime sample-rate input whose other branch
does not fit the chunk size being compiled.

Rerun from the repository root after changing it:

    /usr/bin/python3 tests/gen_usable_models.py

It writes tests/fixtures/vad_sr.onnx and no_opset.onnx; the files are
committed, neither the build nor the tests run Python.  Generation is
deterministic (fixed seed, no timestamps): rerunning gives byte-identical
files.

  vad_sr.onnx  opset 17.  Inputs: x float [1,"T"] (audio samples), sr
               int64 with no declared shape (a scalar at run time: give
               it as 'sr:' in --input_shape, or pin it with
               --input_value=sr:16000), mode int64 [2].
               is16k = Equal(sr, 16000); If(is16k):
                 then (16 kHz, any T divisible by 64):
                   Reshape(x, [-1,1,64]) -> LSTM(hidden 16) -> Y_h
                 else (8 kHz, exactly 256 samples):
                   Reshape(x, [4,1,64])  -> LSTM(hidden 16) -> Y_h
               -> Sigmoid -> prob [1,1,16].  mode_out = mode + [10,20].
               At T=512 the else branch cannot reshape 512 samples into
               [4,1,64]: a compile with sr at run time warns and compiles
               that branch to a runtime error; pinning sr to 16000 leaves
               the then branch alone.
  no_opset.onnx  y = Relu(x), x float [2,3], with no opset import (which
               ONNX requires): gearc warns and reads it with the newest
               opset's rules.
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HID, IN = 16, 64
HERE = os.path.dirname(os.path.abspath(__file__))


def init(name, arr):
    return numpy_helper.from_array(arr, name)


def branch(name, shape):
    """One branch: Reshape(x, shape) -> LSTM -> Y_h."""
    nodes = [
        helper.make_node("Constant", [], [name + "/shape"], name=name + "/c",
                         value=init(name + "/shape_v",
                                    np.array(shape, np.int64))),
        helper.make_node("Reshape", ["x", name + "/shape"], [name + "/seq"],
                         name=name + "/reshape"),
        helper.make_node("LSTM", [name + "/seq", "lstm.W", "lstm.R",
                                  "lstm.B"],
                         ["", name + "/h"], name=name + "/lstm",
                         hidden_size=HID),
    ]
    out = helper.make_tensor_value_info(name + "/h", TensorProto.FLOAT,
                                        None)
    return helper.make_graph(nodes, name, [], [out])


def vad_sr():
    rng = np.random.RandomState(18)
    inits = [
        init("lstm.W", (rng.randn(1, 4 * HID, IN) * 0.1).astype(np.float32)),
        init("lstm.R", (rng.randn(1, 4 * HID, HID) * 0.1).astype(np.float32)),
        init("lstm.B", np.zeros([1, 8 * HID], np.float32)),
        init("sr16k", np.array(16000, np.int64)),
        init("mode_bias", np.array([10, 20], np.int64)),
    ]
    nodes = [
        helper.make_node("Equal", ["sr", "sr16k"], ["is16k"], name="is16k"),
        helper.make_node("If", ["is16k"], ["state"], name="if_sr",
                         then_branch=branch("sr16k_branch", [-1, 1, IN]),
                         else_branch=branch("sr8k_branch", [4, 1, IN])),
        helper.make_node("Sigmoid", ["state"], ["prob"], name="prob"),
        helper.make_node("Add", ["mode", "mode_bias"], ["mode_out"],
                         name="mode_add"),
    ]
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "T"]),
        helper.make_tensor_value_info("sr", TensorProto.INT64, None),
        helper.make_tensor_value_info("mode", TensorProto.INT64, [2]),
    ]
    outputs = [
        helper.make_tensor_value_info("prob", TensorProto.FLOAT,
                                      [1, 1, HID]),
        helper.make_tensor_value_info("mode_out", TensorProto.INT64, [2]),
    ]
    g = helper.make_graph(nodes, "vad_sr", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="gen_usable_models")
    m.ir_version = 8
    # No onnx.checker: it wants a shape on every value_info, and an
    # unknown-rank input (sr) is exactly what this model is about.
    path = os.path.join(HERE, "fixtures", "vad_sr.onnx")
    onnx.save(m, path)
    return path


def no_opset():
    """no_opset.onnx: y = Relu(x), x float [2,3], and no opset import."""
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "no_opset",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    m = helper.make_model(g, producer_name="gen_usable_models")
    del m.opset_import[:]
    m.ir_version = 8
    path = os.path.join(HERE, "fixtures", "no_opset.onnx")
    onnx.save(m, path)
    return path


if __name__ == "__main__":
    print(vad_sr())
    print(no_opset())
