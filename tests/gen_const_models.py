#!/usr/bin/python3
"""tests/gen_const_models.py - makes tests/fixtures/const_decoder.onnx,
the fixture of passes/constwork.c (tests/test_constwork.c): a decoder
step's tied embedding as quantized decoders store it, an int8 table
[vocab, dim] dequantized (DequantizeLinear with a scale and a zero
point), gathered at the int64 token ids [1, T], added to x [1, T, dim]
and multiplied by the transposed table to give logits [1, T, vocab],
plus a bias Cast from a constant int32 [vocab].  At the fixture's size
(512 x 64) the dequantized table (128 KiB) is above gearc's fold limit
and the bias (2 KiB) below it.

  /usr/bin/python3 tests/gen_const_models.py [VOCAB DIM OUT.onnx]

writes the fixture, or the same graph at another size (32768 288 for
the decoder of issue 28: a 36 MiB dequantized table) to OUT.onnx.
Run from the repository root."""
import sys

import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh


def decoder(vocab, dim, path):
    rng = np.random.default_rng(2805)
    inits = {
        "table": rng.integers(-128, 128, (vocab, dim)).astype(np.int8),
        "scale": np.array(0.02, np.float32),
        "zp": np.array(3, np.int8),
        "bias_i": rng.integers(-50, 50, vocab).astype(np.int32),
    }
    n = h.make_node
    nodes = [
        n("DequantizeLinear", ["table", "scale", "zp"], ["emb"], name="dq"),
        n("Gather", ["emb", "ids"], ["e"], name="gather", axis=0),
        n("Add", ["e", "x"], ["hid"]),
        n("Transpose", ["emb"], ["emb_t"], name="transpose", perm=[1, 0]),
        n("MatMul", ["hid", "emb_t"], ["mm"], name="matmul"),
        n("Cast", ["bias_i"], ["bias"], name="cast", to=T.FLOAT),
        n("Add", ["mm", "bias"], ["logits"]),
    ]
    g = h.make_graph(
        nodes, "const_decoder",
        [h.make_tensor_value_info("ids", T.INT64, [1, "T"]),
         h.make_tensor_value_info("x", T.FLOAT, [1, "T", dim])],
        [h.make_tensor_value_info("logits", T.FLOAT, [1, "T", vocab])],
        [nh.from_array(v, k) for k, v in inits.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


if __name__ == "__main__":
    if len(sys.argv) == 4:
        decoder(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
    else:
        decoder(512, 64, "tests/fixtures/const_decoder.onnx")
