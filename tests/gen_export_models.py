#!/usr/bin/python3
"""Generates the fixtures of `gearc export`'s structural checks (issue 25,
items 7-9): models whose export must stay standard ONNX that
onnx.checker (full check) and ONNX Runtime accept.

Rerun from the repository root after changing it:

    /usr/bin/python3 tests/gen_export_models.py

It writes tests/fixtures/export_fail.onnx, export_loop.onnx and
export_kv.onnx; the files are committed, neither the build nor the tests
run Python.  Generation is deterministic (no random data, no
timestamps): rerunning gives byte-identical files.

  export_fail.onnx  opset 17.  Inputs: x float [1,"T"], k int64 scalar.
        If(k == 4):
          then: Reshape(x, [2,-1]) -> y; ReduceSum(x) as int64 -> n;
                Greater(y, 0) row 0 -> pos
          else: the same with Reshape(x, [3,-1]), valid only when T is a
                multiple of 3
        -> y float [2,T/2], n int64 scalar, pos bool [T/2].
        Compiled at T=4 with k at run time, the else branch is invalid:
        gearc compiles it to its Fail op (outputs of three dtypes and
        ranks 0, 1 and 2), which export must write as standard ONNX that
        fails when the branch is taken.
  export_loop.onnx  opset 17.  Loop(trip 3, cond true, v=x): the body
        keeps its condition with c_out = Identity(c_in) and adds w =
        x * 0.5 to v.  Valid under onnx.checker's full check (scalar trip
        count and condition).  gearc folds c_out to a constant.
  export_kv.onnx  opset 17, no node named (as some exporters write them).
        A decoder step with a KV cache: inputs x float [1,"T",8],
        past_key float [1,2,"P",4], use_cache_branch bool [1].
        If(use_cache_branch):
          then: past = Identity(past_key)
          else: past = Constant, an empty [1,2,0,4] (as in merged
                decoders without a past)
        key = Concat(past, Transpose(Reshape(x, [1,"T",2,4])), axis 2),
        y = Relu(x) -> outputs y and present_key.
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
FLOAT, INT64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, arr):
    return helper.make_node("Constant", [], [name], name=name + "/c",
                            value=init(name + "/v", arr))


def save(g, name, check=True):
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="gen_export_models")
    m.ir_version = 8
    if check:
        onnx.checker.check_model(m, full_check=True)
    path = os.path.join(HERE, "fixtures", name)
    onnx.save(m, path)
    return path


def fail_branch(name, rows):
    """One branch of export_fail: x as rows rows, its sum, row 0 > 0."""
    p = name + "/"
    nodes = [
        const(p + "shape", np.array([rows, -1], np.int64)),
        helper.make_node("Reshape", ["x", p + "shape"], [p + "y"],
                         name=p + "reshape"),
        helper.make_node("ReduceSum", ["x"], [p + "sum"], name=p + "sum",
                         keepdims=0),
        helper.make_node("Cast", [p + "sum"], [p + "n"], name=p + "cast",
                         to=INT64),
        const(p + "zero", np.array(0.0, np.float32)),
        helper.make_node("Greater", [p + "y", p + "zero"], [p + "gt"],
                         name=p + "gt"),
        const(p + "row", np.array(0, np.int64)),
        helper.make_node("Gather", [p + "gt", p + "row"], [p + "pos"],
                         name=p + "gather", axis=0),
    ]
    return helper.make_graph(nodes, name, [], [
        vi(p + "y", FLOAT, [rows, "C"]), vi(p + "n", INT64, []),
        vi(p + "pos", BOOL, ["C"])])


def export_fail():
    nodes = [
        helper.make_node("Equal", ["k", "four"], ["is4"], name="is4"),
        helper.make_node("If", ["is4"], ["y", "n", "pos"], name="if_k",
                         then_branch=fail_branch("rows2", 2),
                         else_branch=fail_branch("rows3", 3)),
    ]
    g = helper.make_graph(
        nodes, "export_fail", [vi("x", FLOAT, [1, "T"]), vi("k", INT64, [])],
        [vi("y", FLOAT, ["R", "C"]), vi("n", INT64, []),
         vi("pos", BOOL, ["C"])],
        [init("four", np.array(4, np.int64))])
    return save(g, "export_fail.onnx")


def export_loop():
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["c_in"], ["c_out"], name="keep"),
            helper.make_node("Add", ["v_in", "w"], ["v_out"], name="acc"),
        ],
        "body",
        [vi("i", INT64, []), vi("c_in", BOOL, []),
         vi("v_in", FLOAT, ["N", 4])],
        [vi("c_out", BOOL, []), vi("v_out", FLOAT, ["N", 4])])
    nodes = [
        helper.make_node("Mul", ["x", "half"], ["w"], name="scale"),
        helper.make_node("Loop", ["trip", "cond0", "x"], ["v_final"],
                         name="loop", body=body),
    ]
    inits = [
        init("trip", np.array(3, np.int64)),
        init("cond0", np.array(True)),
        init("half", np.array(0.5, np.float32)),
    ]
    g = helper.make_graph(nodes, "export_loop", [vi("x", FLOAT, ["N", 4])],
                          [vi("v_final", FLOAT, ["N", 4])], inits)
    return save(g, "export_loop.onnx")


def export_kv():
    then_b = helper.make_graph(
        [helper.make_node("Identity", ["past_key"], ["past_then"])],
        "use_cache", [], [vi("past_then", FLOAT, [1, 2, "P", 4])])
    else_b = helper.make_graph(
        [helper.make_node("Constant", [], ["past_else"],
                          value=init("empty", np.zeros([1, 2, 0, 4],
                                                       np.float32)))],
        "no_cache", [], [vi("past_else", FLOAT, [1, 2, 0, 4])])
    nodes = [
        helper.make_node("If", ["use_cache_branch"], ["past"],
                         then_branch=then_b, else_branch=else_b),
        helper.make_node("Reshape", ["x", "heads"], ["xh"]),
        helper.make_node("Transpose", ["xh"], ["new_key"], perm=[0, 2, 1, 3]),
        helper.make_node("Concat", ["past", "new_key"], ["present_key"],
                         axis=2),
        helper.make_node("Relu", ["x"], ["y"]),
    ]
    g = helper.make_graph(
        nodes, "export_kv",
        [vi("x", FLOAT, [1, "T", 8]), vi("past_key", FLOAT, [1, 2, "P", 4]),
         vi("use_cache_branch", BOOL, [1])],
        [vi("y", FLOAT, [1, "T", 8]),
         vi("present_key", FLOAT, [1, 2, "S", 4])],
        [init("heads", np.array([1, -1, 2, 4], np.int64))])
    return save(g, "export_kv.onnx")


if __name__ == "__main__":
    print(export_fail())
    print(export_loop())
    print(export_kv())
