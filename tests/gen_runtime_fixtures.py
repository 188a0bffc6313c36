#!/usr/bin/python3
"""tests/gen_runtime_fixtures.py - fixtures for the runtime's CLI tests.

  odd_names.onnx   x:0 float [2,3] -> Relu -> 'y/relu:0 é' (an output name
                   with '/', ':', a space and a non-ASCII letter, which
                   `gearc run --output-dir` must escape as %xx).

Run from the repository root: /usr/bin/python3 tests/gen_runtime_fixtures.py
"""
import onnx
from onnx import TensorProto, helper


def odd_names():
    g = helper.make_graph(
        [helper.make_node("Relu", ["x:0"], ["y/relu:0 \u00e9"], name="r")],
        "odd_names",
        [helper.make_tensor_value_info("x:0", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y/relu:0 \u00e9", TensorProto.FLOAT,
                                       [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="gen_runtime_fixtures")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, "tests/fixtures/odd_names.onnx")


if __name__ == "__main__":
    odd_names()
