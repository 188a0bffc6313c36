#!/usr/bin/python3
"""Generates the fixtures of --gear_scope (passes/scope.h): small models
named hierarchically as exporters name them (/backbone/block1/Conv), with
parts that depend on the gear and parts that do not.

Rerun from the repository root after changing it:

    /usr/bin/python3 tests/gen_scope_models.py

It writes tests/fixtures/scope_*.onnx and scope_expected.json; the files
are committed, neither the build nor the tests run Python.  Generation is
deterministic (fixed seeds): rerunning gives byte-identical files.  It
reuses tests/gen_models.py's Builder and numpy executor (extended below
with the few ops these models add), so expected shapes come from RUNNING
each model at each gear, not from shape inference.

The models:

  scope_cls.onnx   image classifier, opset 13.  x float [1,3,"H","W"] ->
                   /stem/ Conv(3->8, s2) Relu -> /backbone/block1..3/ Conv
                   (s2) Relu, 8->16->32->32 -> /backbone/pool/
                   GlobalAveragePool [1,32,1,1] -> /head/: Reshape to
                   [n,-1] with n from Shape(the last feature map)[0] (as
                   torch exports x.view(x.size(0), -1)), three Gemm+Relu
                   (32->64->64->64), Gemm(64->10), Softmax -> probs [1,10].
                   Under --dynamic_image_size every node up to the pooling
                   depends on the gear and the 12-node head does not:
                   --gear_scope=auto clones the first part only.
  scope_enc.onnx   text encoder, opset 17.  x float [1,"T",16] -> /embed/
                   MatMul+Add (16->32) -> /encoder/layer.0 and layer.1:
                   LayerNormalization, self-attention with 2 heads
                   (MatMul q/k/v, Reshape to [1,T,2,16] with T from the
                   top-level shape arithmetic /Shape -> /Gather ->
                   /Unsqueeze -> /Concat, Transpose, MatMul, Softmax,
                   MatMul, Transpose, Reshape back), residual Add, MLP
                   (MatMul+Add, Relu, MatMul+Add), residual Add -> /pool/
                   ReduceMean over T -> /head/ Gemm(32->8), Softmax -> y
                   [1,8].  --gear_scope=/encoder/ takes the shape
                   arithmetic into the scope (its contents depend on T).
  scope_two.onnx   two inputs, opset 13.  a float [1,"A",8] -> /a/ MatMul,
                   Relu, MatMul, Relu, ReduceMean -> [1,8]; b float
                   [1,"B",8] -> /b/ the same; /head/ Concat, Gemm(16->16),
                   Relu, Gemm(16->4) -> y [1,4].  Under --dynamic_dims each
                   branch depends on one input only: auto makes two scopes,
                   each cloned once per distinct length of its input.
  scope_cycle.onnx x float [1,"N"] -> /pre/Relu -> /s/a Neg -> /o/b Abs ->
                   /s/c Add(a, b) -> /post/Relu -> y.  --gear_scope=/s/
                   would put /o/b in a cycle with the scope: an error.
"""

import json
import os
import sys

import numpy as np
import onnx
from onnx import helper

sys.dont_write_bytecode = True  # no __pycache__ in tests/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_models as gm  # noqa: E402

FLOAT = gm.FLOAT


class Builder(gm.Builder):
    """Names nodes /scope/Op or /scope/Op_k, as torch.onnx does."""

    def name(self, op):
        k = self.count.get((self.prefix, op), 0)
        self.count[(self.prefix, op)] = k + 1
        return "%s%s%s" % (self.prefix, op, "_%d" % k if k else "")

    def init(self, name, arr):
        # a name starting with "/" is taken as it is
        if not name.startswith("/"):
            name = self.prefix + name
        arr = np.array(arr, order="C")
        self.inits.append(gm.numpy_helper.from_array(arr, name))
        return name

    def conv(self, x, cin, cout, k, stride=1, pad=None, bias=True,
             name=None):
        w = self.weight(name + ".weight", cout, cin, k, k)
        bb = self.init(name + ".bias", (self.rng.standard_normal(cout) *
                                        0.1).astype(np.float32))
        return self.op("Conv", [x, w, bb], name=name, kernel_shape=[k, k],
                       strides=[stride, stride], pads=[k // 2] * 4)

    def at(self, prefix):
        self.prefix = prefix
        return self

    def matmul(self, x, cin, cout, bias=True):
        w = self.weight(self.prefix + "w%d" % len(self.inits), cin, cout)
        y = self.op("MatMul", [x, w])
        if bias:
            b = self.init("b%d" % len(self.inits),
                          (self.rng.standard_normal(cout) * 0.1)
                          .astype(np.float32))
            y = self.op("Add", [y, b])
        return y

    def gemm(self, x, cin, cout):
        w = self.weight(self.prefix + "w%d" % len(self.inits), cout, cin)
        b = self.init("b%d" % len(self.inits),
                      (self.rng.standard_normal(cout) * 0.1)
                      .astype(np.float32))
        return self.op("Gemm", [x, w, b], transB=1)

    def weight(self, name, *shape, scale=None):
        # names are already prefixed by the callers
        w = (self.rng.standard_normal(shape) /
             np.sqrt(max(int(np.prod(shape[:-1] if len(shape) > 1
                                     else shape)), 1))).astype(np.float32)
        self.inits.append(gm.numpy_helper.from_array(w, name))
        return name


def scope_cls():
    b = Builder(rng=np.random.RandomState(7001))
    h = b.at("/stem/").conv("x", 3, 8, 3, stride=2, name="/stem/Conv")
    h = b.op("Relu", [h])
    cin = 8
    for i, cout in enumerate((16, 32, 32)):
        p = "/backbone/block%d/" % (i + 1)
        h = b.at(p).conv(h, cin, cout, 3, stride=2, name=p + "Conv")
        h = b.op("Relu", [h])
        cin = cout
    feat = h
    pooled = b.at("/backbone/pool/").op("GlobalAveragePool", [feat])
    b.at("/head/")
    n = b.op("Gather", [b.op("Shape", [feat]), b.i64(0, "zero")],
             axis=0)
    target = b.op("Concat", [b.op("Unsqueeze", [n, b.i64([0], "ax")]),
                             b.i64([-1], "minus1")], axis=0)
    h = b.op("Reshape", [pooled, target])
    for cout in (64, 64, 64):
        h = b.op("Relu", [b.gemm(h, cin, cout)])
        cin = cout
    h = b.gemm(h, cin, 10)
    b.op("Softmax", [h], name="probs", axis=1)
    g = b.graph("scope_cls", [gm.vi("x", FLOAT, [1, 3, "H", "W"])],
                [gm.vi("probs", FLOAT, [1, 10])])
    return gm.save(gm.make_model(g, 13), "scope_cls.onnx")


def attention(b, x, shape_t, C=32, heads=2):
    """Self-attention as torch exports it; shape_t is [1,T,heads,C/heads]
    and [1,T,C] computed outside (by the top-level shape arithmetic)."""
    split, merge = shape_t
    d = C // heads

    def heads_of(t):
        return b.op("Transpose", [b.op("Reshape", [t, split])],
                    perm=[0, 2, 1, 3])

    q = heads_of(b.matmul(x, C, C))
    k = heads_of(b.matmul(x, C, C))
    v = heads_of(b.matmul(x, C, C))
    kt = b.op("Transpose", [k], perm=[0, 1, 3, 2])
    s = b.op("Mul", [b.op("MatMul", [q, kt]),
                     b.init("scale", np.array(1.0 / np.sqrt(d), np.float32))])
    a = b.op("MatMul", [b.op("Softmax", [s], axis=-1), v])
    a = b.op("Transpose", [a], perm=[0, 2, 1, 3])
    return b.matmul(b.op("Reshape", [a, merge]), C, C)


def layer_norm(b, x, C):
    g = b.init("ln_g%d" % len(b.inits), np.ones(C, np.float32))
    z = b.init("ln_b%d" % len(b.inits), np.zeros(C, np.float32))
    return b.op("LayerNormalization", [x, g, z], axis=-1, epsilon=1e-5)


def scope_enc():
    b = Builder(rng=np.random.RandomState(7002))
    C = 32
    h = b.at("/embed/").matmul("x", 16, C)
    # top-level shape arithmetic, as torch leaves x.size(1) outside modules
    b.at("/")
    t = b.op("Unsqueeze", [b.op("Gather", [b.op("Shape", [h]),
                                           b.i64(1, "one")], axis=0),
                           b.i64([0], "ax0")])
    split = b.op("Concat", [b.i64([1], "c1"), t, b.i64([2, 16], "c2")],
                 axis=0)
    merge = b.op("Concat", [b.i64([1], "c1b"), t, b.i64([C], "cC")],
                 axis=0)
    for layer in range(2):
        p = "/encoder/layer.%d/" % layer
        b.at(p + "attn/")
        a = attention(b, layer_norm(b, h, C), (split, merge))
        h = b.at(p).op("Add", [h, a])
        b.at(p + "mlp/")
        m = b.op("Relu", [b.matmul(layer_norm(b, h, C), C, 2 * C)])
        m = b.matmul(m, 2 * C, C)
        h = b.at(p).op("Add", [h, m])
    pooled = b.at("/pool/").op("ReduceMean", [h], axes=[1], keepdims=0)
    b.at("/head/")
    b.op("Softmax", [b.gemm(pooled, C, 8)], name="y", axis=1)
    g = b.graph("scope_enc", [gm.vi("x", FLOAT, [1, "T", 16])],
                [gm.vi("y", FLOAT, [1, 8])])
    return gm.save(gm.make_model(g, 17), "scope_enc.onnx")


def scope_two():
    b = Builder(rng=np.random.RandomState(7003))
    pooled = []
    for name in ("a", "b"):
        b.at("/%s/" % name)
        h = b.op("Relu", [b.matmul(name, 8, 8, bias=False)])
        h = b.op("Relu", [b.matmul(h, 8, 8, bias=False)])
        pooled.append(b.op("ReduceMean", [h], axes=[1], keepdims=0))
    b.at("/head/")
    h = b.op("Concat", pooled, axis=1)
    h = b.op("Relu", [b.gemm(h, 16, 16)])
    w = b.weight("/head/w_out", 4, 16)
    bias = b.init("b_out", np.zeros(4, np.float32))
    b.op("Gemm", [h, w, bias], name="y", transB=1)
    g = b.graph("scope_two", [gm.vi("a", FLOAT, [1, "A", 8]),
                              gm.vi("b", FLOAT, [1, "B", 8])],
                [gm.vi("y", FLOAT, [1, 4])])
    return gm.save(gm.make_model(g, 13), "scope_two.onnx")


def scope_cycle():
    b = Builder(rng=np.random.RandomState(7004))
    x = b.at("/pre/").op("Relu", ["x"])
    a = b.at("/s/").op("Neg", [x], name="/s/a")
    o = b.at("/o/").op("Abs", [a], name="/o/b")
    c = b.at("/s/").op("Add", [a, o], name="/s/c")
    b.at("/post/").op("Relu", [c], name="y")
    g = b.graph("scope_cycle", [gm.vi("x", FLOAT, [1, "N"])],
                [gm.vi("y", FLOAT, [1, "N"])])
    return gm.save(gm.make_model(g, 13), "scope_cycle.onnx")


# ---- the executor, for the ops these models add ------------------------------

class Run(gm.Run):
    def node(self, node, a, env):
        op = node.op_type
        if op == "GlobalAveragePool":
            return a[0].mean(axis=(2, 3), keepdims=True)
        if op == "Gemm":
            assert gm.attr(node, "transB") == 1
            return (a[0] @ a[1].T + a[2]).astype(np.float32)
        if op == "ReduceMean":
            return a[0].mean(axis=tuple(gm.attr(node, "axes")),
                             keepdims=bool(gm.attr(node, "keepdims", 1)))
        if op == "Neg":
            return -a[0]
        if op == "Abs":
            return np.abs(a[0])
        return super().node(node, a, env)


def run_gears(m, spec, rows):
    rng = np.random.RandomState(0)
    run = Run(m)
    gears = []
    for row in rows:
        feeds = {n: rng.standard_normal(s).astype(np.float32)
                 for n, s in gm.gear_shapes(spec, row).items()}
        outs = run(feeds)
        gears.append({"dims": list(row),
                      "outputs": {k: list(v.shape) for k, v in outs.items()}})
    return gears


def expected(models):
    cls_m, enc_m, two_m, cyc_m = models
    doc = {}

    def entry(key, m, fname, spec, opt, rows):
        doc[key] = {
            "model": fname,
            "nodes": gm.count_nodes(m.graph),
            "args": ["--input_shape=" + spec,
                     "--%s=%s" % (opt, ";".join(",".join(str(v) for v in r)
                                                for r in rows))],
            "gears": run_gears(m, spec, rows)}

    entry("scope_cls", cls_m, "scope_cls.onnx", "x:1,3,-1,-1",
          "dynamic_image_size", [(224, 224), (320, 320), (448, 448),
                                 (640, 480)])
    entry("scope_enc", enc_m, "scope_enc.onnx", "x:1,-1,16", "dynamic_dims",
          [(32,), (64,), (128,)])
    entry("scope_two", two_m, "scope_two.onnx", "a:1,-1,8;b:1,-1,8",
          "dynamic_dims", [(16, 16), (32, 16), (16, 32), (32, 32),
                           (16, 64)])
    entry("scope_cycle", cyc_m, "scope_cycle.onnx", "x:1,-1",
          "dynamic_dims", [(4,), (8,)])
    return doc


def main():
    models = [scope_cls(), scope_enc(), scope_two(), scope_cycle()]
    gm.write_json(expected(models), "scope_expected.json")
    for m, f in zip(models, ("scope_cls.onnx", "scope_enc.onnx",
                             "scope_two.onnx", "scope_cycle.onnx")):
        ops = sorted({n.op_type for n in gm.all_nodes(m.graph)})
        print("%-17s %4d nodes %7d bytes  %s" % (
            f, gm.count_nodes(m.graph), os.path.getsize(gm.path(f)),
            " ".join(ops)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
