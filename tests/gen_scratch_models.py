#!/usr/bin/python3
"""tests/gen_scratch_models.py - models for the kernels that take scratch
memory at run time (tests/test_scratch.c, tests/scratch_soak.c).

  scratch_ops.onnx  x float [2,16,32], n int32 [2,16,32] -> every op whose
                    kernel allocates scratch per run: ReduceMean (axis 2),
                    ReduceSum (axes input), ReduceMax, ReduceLogSumExp,
                    ReduceSum of int32, ArgMax, ArgMin, TopK (k=5), Split
                    (4, 4 and 8 along axis 1), opset 13.
  big_reduce.onnx   x float [1,2048,1024] -> ReduceMean over axis 2 and
                    ReduceSum over every axis: a 2M-element input, past the
                    1M elements constant folding reads.
  big_argmax.onnx   x float [1,21,256,256] -> ArgMax over axis 1 (keepdims)
                    and ArgMin over axis 1 (no keepdims).
  topk_nan.onnx     x float [2,6] -> TopK k=6 largest=1 and largest=0,
                    ArgMax and ArgMin (select_last_index 0 and 1) over
                    axis 1: the test feeds NaN and +-Inf.

Run from the repository root: /usr/bin/python3 tests/gen_scratch_models.py
"""
import onnx
from onnx import TensorProto as T
from onnx import helper


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


def save(nodes, name, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="gen_scratch_models")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, "tests/fixtures/%s.onnx" % name)


def n(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=outs[0], **attrs)


def scratch_ops():
    nodes = [
        n("ReduceMean", ["x"], ["mean"], axes=[2], keepdims=1),
        n("ReduceSum", ["x", "axes01"], ["sum"], keepdims=0),
        n("ReduceMax", ["x"], ["max"], axes=[1], keepdims=0),
        n("ReduceLogSumExp", ["x"], ["lse"], axes=[0, 2], keepdims=1),
        n("ReduceSum", ["n", "axes2"], ["isum"], keepdims=0),
        n("ArgMax", ["x"], ["amax"], axis=2, keepdims=0),
        n("ArgMin", ["x"], ["amin"], axis=1, keepdims=1),
        n("TopK", ["x", "k"], ["tv", "ti"], axis=-1),
        n("Split", ["x", "parts"], ["s0", "s1", "s2"], axis=1),
    ]
    inits = [helper.make_tensor("axes01", T.INT64, [2], [0, 1]),
             helper.make_tensor("axes2", T.INT64, [1], [2]),
             helper.make_tensor("k", T.INT64, [1], [5]),
             helper.make_tensor("parts", T.INT64, [3], [4, 4, 8])]
    outs = [vi("mean", T.FLOAT, [2, 16, 1]), vi("sum", T.FLOAT, [32]),
            vi("max", T.FLOAT, [2, 32]), vi("lse", T.FLOAT, [1, 16, 1]),
            vi("isum", T.INT32, [2, 16]), vi("amax", T.INT64, [2, 16]),
            vi("amin", T.INT64, [2, 1, 32]), vi("tv", T.FLOAT, [2, 16, 5]),
            vi("ti", T.INT64, [2, 16, 5]), vi("s0", T.FLOAT, [2, 4, 32]),
            vi("s1", T.FLOAT, [2, 4, 32]), vi("s2", T.FLOAT, [2, 8, 32])]
    save(nodes, "scratch_ops",
         [vi("x", T.FLOAT, [2, 16, 32]), vi("n", T.INT32, [2, 16, 32])],
         outs, inits)


def big_reduce():
    save([n("ReduceMean", ["x"], ["mean"], axes=[2], keepdims=1),
          n("ReduceSum", ["x"], ["sum"], keepdims=0)], "big_reduce",
         [vi("x", T.FLOAT, [1, 2048, 1024])],
         [vi("mean", T.FLOAT, [1, 2048, 1]), vi("sum", T.FLOAT, [])])


def big_argmax():
    save([n("ArgMax", ["x"], ["amax"], axis=1, keepdims=1),
          n("ArgMin", ["x"], ["amin"], axis=1, keepdims=0)], "big_argmax",
         [vi("x", T.FLOAT, [1, 21, 256, 256])],
         [vi("amax", T.INT64, [1, 1, 256, 256]),
          vi("amin", T.INT64, [1, 256, 256])])


def topk_nan():
    k = helper.make_tensor("k", T.INT64, [1], [6])
    save([n("TopK", ["x", "k"], ["hv", "hi"], axis=1, largest=1),
          n("TopK", ["x", "k"], ["lv", "li"], axis=1, largest=0),
          n("ArgMax", ["x"], ["amax"], axis=1, keepdims=0),
          n("ArgMax", ["x"], ["amax_last"], axis=1, keepdims=0,
            select_last_index=1),
          n("ArgMin", ["x"], ["amin"], axis=1, keepdims=0),
          n("ArgMin", ["x"], ["amin_last"], axis=1, keepdims=0,
            select_last_index=1)], "topk_nan",
         [vi("x", T.FLOAT, [2, 6])],
         [vi("hv", T.FLOAT, [2, 6]), vi("hi", T.INT64, [2, 6]),
          vi("lv", T.FLOAT, [2, 6]), vi("li", T.INT64, [2, 6]),
          vi("amax", T.INT64, [2]), vi("amax_last", T.INT64, [2]),
          vi("amin", T.INT64, [2]), vi("amin_last", T.INT64, [2])], [k])


if __name__ == "__main__":
    scratch_ops()
    big_reduce()
    big_argmax()
    topk_nan()
