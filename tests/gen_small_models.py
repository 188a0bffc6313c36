#!/usr/bin/python3
# tests/gen_small_models.py - the tiny models of libgearrt's fixed per-run
# cost (tests/bench_overhead.c) and of the M=1 GEMV row of
# tests/bench_ort.mjs, written into OUTDIR (build/, never committed: the
# MLP's weights are half a megabyte):
#
#   chain.onnx      x [1] -> 8 trivial nodes (Relu and Neg alternating) -> y:
#                   next to no kernel work, so a run's time is its fixed
#                   cost;
#   bench_mlp.onnx  a 3-layer MLP head as torch exports nn.Linear (Gemm,
#                   transB=1): x [1, 256] -> 256 -> Relu -> 256 -> Relu -> 10.
#
# Weights are random with a fixed seed, so the files are reproducible.
#
#   /usr/bin/python3 tests/gen_small_models.py OUTDIR
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(40)


def save(graph, path):
    m = helper.make_model(graph, producer_name="gen_small_models",
                          opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def chain(path):
    nodes, prev = [], "x"
    for i in range(8):
        out = "y" if i == 7 else "t%d" % i
        nodes.append(helper.make_node("Relu" if i % 2 == 0 else "Neg",
                                      [prev], [out], name="n%d" % i))
        prev = out
    g = helper.make_graph(
        nodes, "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    save(g, path)


def mlp(path):
    widths = [256, 256, 256, 10]
    nodes, inits, prev = [], [], "x"
    for i in range(3):
        cin, cout = widths[i], widths[i + 1]
        w = (rng.standard_normal([cout, cin]) * (2.0 / cin) ** 0.5)
        b = rng.standard_normal([cout]) * 0.1
        inits.append(numpy_helper.from_array(w.astype(np.float32), "w%d" % i))
        inits.append(numpy_helper.from_array(b.astype(np.float32), "b%d" % i))
        out = "y" if i == 2 else "g%d" % i
        nodes.append(helper.make_node("Gemm", [prev, "w%d" % i, "b%d" % i],
                                      [out], name="fc%d" % i, transB=1))
        prev = out
        if i < 2:
            nodes.append(helper.make_node("Relu", [prev], ["r%d" % i],
                                          name="relu%d" % i))
            prev = "r%d" % i
    g = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        inits)
    save(g, path)


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    chain(os.path.join(out, "chain.onnx"))
    mlp(os.path.join(out, "bench_mlp.onnx"))
