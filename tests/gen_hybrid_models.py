#!/usr/bin/python3
"""Generates the fixtures of gearc's hybrid mode and dynamic/static
partition tests (issue 9).

Rerun from the repository root after changing it:

    /usr/bin/python3 tests/gen_hybrid_models.py

It writes tests/fixtures/det_nms.onnx; the file is committed, neither the
build nor the tests run Python.  Deterministic (fixed seed, no
timestamps): rerunning gives a byte-identical file.  It reuses the Builder
of tests/gen_models.py (numpy and the onnx module, Debian's python3-onnx
1.12 is enough).

  det_nms.onnx  a one-class detector as exported from PyTorch with its
                post-processing, opset 13.  x float [1,3,"H","W"] ->
                static backbone: Conv(3x3, stride 2)+BatchNormalization+
                Relu, Conv(stride 2)+Relu, Conv+Relu, Conv(stride 2)+Relu,
                a residual block (Conv+Relu, Add) -> H/8 x W/8 features ->
                two 1x1 Conv heads, boxes [1,4,h,w] and objectness
                [1,1,h,w] -> flattened as torch exports x.view(n, c, h*w)
                (Shape -> Gather -> Mul -> Unsqueeze -> Concat -> Reshape),
                Transpose to boxes [1,N,4], Sigmoid on scores [1,1,N] ->
                pre-NMS top-k: K = Min(h*w, 100) from the shape, TopK on
                the scores, Gather of the boxes by the indices -> then the
                data-dependent part: NonMaxSuppression(boxes_k, scores_k,
                50, 0.5, 0.3) -> selected [n,3] -> Gather column 2,
                Squeeze -> Gather of the boxes and the scores by it.
                Outputs boxes float [1,"n",4], scores float ["n"]: their
                "n" is the number of boxes NMS keeps, known only at run
                time.  Every gear of --dynamic_image_size folds the shape
                arithmetic; what comes before NonMaxSuppression is then
                static, what comes after is not.

Every model passes onnx.checker.check_model(full_check=True).
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_models import (FLOAT, Builder, count_nodes, make_model,  # noqa: E402
                        path, save, vi)


def det_nms():
    b = Builder(rng=np.random.RandomState(20250109))
    # backbone: H/2, H/4, H/4, H/8, residual block at H/8
    t = b.op("Relu", [b.bn(b.conv("x", 3, 16, 3, 2, bias=False), 16)])
    t = b.op("Relu", [b.conv(t, 16, 32, 3, 2)])
    t = b.op("Relu", [b.conv(t, 32, 32, 3, 1)])
    t = b.op("Relu", [b.conv(t, 32, 48, 3, 2)])
    r = b.op("Relu", [b.conv(t, 48, 48, 3, 1)])
    t = b.op("Add", [t, r])
    box = b.conv(t, 48, 4, 1, name="head.box")      # [1,4,h,w]
    obj = b.conv(t, 48, 1, 1, name="head.obj")      # [1,1,h,w]
    # x.view(n, c, h * w) as torch exports it
    s = b.op("Shape", [box])
    n = b.op("Gather", [s, b.i64(0)], axis=0)
    hw = b.op("Mul", [b.op("Gather", [s, b.i64(2)], axis=0),
                      b.op("Gather", [s, b.i64(3)], axis=0)])

    def unsq(v):
        return b.op("Unsqueeze", [v, b.i64([0])])

    boxes = b.op("Reshape", [box, b.op("Concat", [unsq(n), b.i64([4]),
                                                  unsq(hw)], axis=0)])
    boxes = b.op("Transpose", [boxes], perm=[0, 2, 1])   # [1,N,4]
    scores = b.op("Reshape", [obj, b.op("Concat", [unsq(n), b.i64([1]),
                                                   unsq(hw)], axis=0)])
    scores = b.op("Sigmoid", [scores])                   # [1,1,N]
    # pre-NMS top-k, K = min(N, 100)
    k = unsq(b.op("Min", [hw, b.i64(100)]))
    vals, idx = b.op("TopK", [scores, k], nout=2, axis=-1)  # [1,1,K]
    idx = b.op("Squeeze", [idx, b.i64([0, 1])])             # [K]
    boxes_k = b.op("Gather", [boxes, idx], axis=1)          # [1,K,4]
    # the data-dependent part
    sel = b.op("NonMaxSuppression",
               [boxes_k, vals, b.i64([50]),
                b.const(np.array([0.5], np.float32)),
                b.const(np.array([0.3], np.float32))])      # [n,3]
    i = b.op("Squeeze", [b.op("Gather", [sel, b.i64([2])], axis=1),
                         b.i64([1])])                        # [n]
    b.op("Gather", [boxes_k, i], axis=1, name="boxes")       # [1,n,4]
    flat = b.op("Squeeze", [vals, b.i64([0, 1])])            # [K]
    b.op("Gather", [flat, i], axis=0, name="scores")         # [n]
    g = b.graph("det_nms", [vi("x", FLOAT, [1, 3, "H", "W"])],
                [vi("boxes", FLOAT, [1, "n", 4]),
                 vi("scores", FLOAT, ["n"])])
    return save(make_model(g, 13), "det_nms.onnx")


def main():
    m = det_nms()
    ops = sorted({n.op_type for n in m.graph.node})
    print("%-15s %4d nodes %7d bytes  %s" % (
        "det_nms.onnx", count_nodes(m.graph),
        os.path.getsize(path("det_nms.onnx")), " ".join(ops)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
