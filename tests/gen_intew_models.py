#!/usr/bin/python3
"""tests/gen_intew_models.py - one-op models of the integer and float16
elementwise fast paths (runtime/intew.c, runtime/convert.c):

  /usr/bin/python3 tests/gen_intew_models.py DIR [DIMS]

writes DIR/cast_FROM_TO.onnx for every pair of float32, float16,
double, int8, uint8, int32, int64 and bool, and DIR/OP_TYPE.onnx for
Add, Sub, Mul, Div, Max, Min, Equal, Less, Greater (a [DIMS] by a
broadcast [last dim] and by a scalar, and Div by a constant 3 for
benchmarks), Relu, Neg, Abs, Clip (constant bounds -3 and 5) and Where
(a bool condition) on int8, uint8, int32, int64 and float16, each with
inputs of shape DIMS (default 3,5,7; "16,1024,1024" for the 16M-element
benchmarks of issue 28).  tests/test_intew.c makes them at the default
shape in a temporary directory.  Run from the repository root."""
import os
import sys

import onnx
from onnx import helper as h, TensorProto as T

TYPES = {"float": T.FLOAT, "half": T.FLOAT16, "double": T.DOUBLE,
         "i8": T.INT8, "u8": T.UINT8, "i32": T.INT32, "i64": T.INT64,
         "bool": T.BOOL}
EW = ["i8", "u8", "i32", "i64", "half"]
BINARY = ["Add", "Sub", "Mul", "Div", "Max", "Min", "Equal", "Less",
          "Greater"]
BOOL_OUT = {"Equal", "Less", "Greater"}


def save(path, nodes, ins, outs, inits=()):
    g = h.make_graph(nodes, os.path.basename(path)[:-5],
                     [h.make_tensor_value_info(k, t, s) for k, t, s in ins],
                     [h.make_tensor_value_info(k, t, s) for k, t, s in outs],
                     list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def scalar(name, t, v):
    return h.make_tensor(name, t, [], [v])


def models(out, dims):
    n = h.make_node
    for a, ta in TYPES.items():
        for b, tb in TYPES.items():
            if a != b:
                save("%s/cast_%s_%s.onnx" % (out, a, b),
                     [n("Cast", ["x"], ["y"], to=tb)],
                     [("x", ta, dims)], [("y", tb, dims)])
    for d in EW:
        t = TYPES[d]
        for op in BINARY:
            ty = T.BOOL if op in BOOL_OUT else t
            save("%s/%s_%s.onnx" % (out, op.lower(), d),
                 [n(op, ["a", "b"], ["y"]), n(op, ["a", "r"], ["yr"]),
                  n(op, ["s", "a"], ["ys"])],
                 [("a", t, dims), ("b", t, dims), ("r", t, dims[-1:]),
                  ("s", t, [])],
                 [("y", ty, dims), ("yr", ty, dims), ("ys", ty, dims)])
        save("%s/div3_%s.onnx" % (out, d),
             [n("Div", ["a", "three"], ["y"])], [("a", t, dims)],
             [("y", t, dims)], [scalar("three", t, 3)])
        for op in ["Relu", "Neg", "Abs"]:
            if op in ("Relu", "Neg") and d == "u8":
                continue  # they take signed types only
            save("%s/%s_%s.onnx" % (out, op.lower(), d),
                 [n(op, ["x"], ["y"])], [("x", t, dims)], [("y", t, dims)])
        save("%s/clip_%s.onnx" % (out, d),
             [n("Clip", ["x", "lo", "hi"], ["y"])], [("x", t, dims)],
             [("y", t, dims)],
             [scalar("lo", t, 0 if d == "u8" else -3), scalar("hi", t, 5)])
        save("%s/where_%s.onnx" % (out, d),
             [n("Where", ["c", "a", "b"], ["y"]),
              n("Where", ["c", "a", "r"], ["yr"])],
             [("c", T.BOOL, dims), ("a", t, dims), ("b", t, dims),
              ("r", t, dims[-1:])],
             [("y", t, dims), ("yr", t, dims)])


if __name__ == "__main__":
    dims = [int(x) for x in (sys.argv[2] if len(sys.argv) > 2
                             else "3,5,7").split(",")]
    models(sys.argv[1], dims)
