#!/usr/bin/python3
"""tests/gen_api_fixtures.py - fixtures for tests/test_api.c.

  sum_1100.onnx  y = Sum(x0, ..., x1099), each float [2]: more inputs than
                 the runtime's fixed tables once held (1024).
  strings.onnx   text string [3] -> StringNormalizer (UPPER, stopword
                 "monday", case-insensitive) -> upper string [-1] (its
                 shape depends on the data), and -> StringNormalizer
                 (LOWER) -> lower string [3] (planned).

Run from the repository root: /usr/bin/python3 tests/gen_api_fixtures.py
"""
import onnx
from onnx import TensorProto, helper


def save(g, path, opset):
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="gen_api_fixtures")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def sum_1100():
    n = 1100
    names = ["x%d" % i for i in range(n)]
    g = helper.make_graph(
        [helper.make_node("Sum", names, ["y"], name="sum")], "sum_1100",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [2])
         for x in names],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    save(g, "tests/fixtures/sum_1100.onnx", 13)


def strings():
    g = helper.make_graph(
        [helper.make_node("StringNormalizer", ["text"], ["upper"],
                          name="up", case_change_action="UPPER",
                          stopwords=["monday"]),
         helper.make_node("StringNormalizer", ["text"], ["lower"],
                          name="low", case_change_action="LOWER")],
        "strings",
        [helper.make_tensor_value_info("text", TensorProto.STRING, [3])],
        [helper.make_tensor_value_info("upper", TensorProto.STRING, [None]),
         helper.make_tensor_value_info("lower", TensorProto.STRING, [3])])
    save(g, "tests/fixtures/strings.onnx", 10)


if __name__ == "__main__":
    sum_1100()
    strings()
