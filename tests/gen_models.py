#!/usr/bin/python3
"""Generates gearc's model fixtures: small models shaped like real exports,
with ground-truth output shapes per gear.

Rerun from the repository root after changing it:

    /usr/bin/python3 tests/gen_models.py

It writes into tests/fixtures/ (det.onnx, rec.onnx, vad.onnx, bench_rec.onnx,
cls.onnx and expected.json); the files are committed, neither the build nor
the tests run Python.  Generation is deterministic (fixed seeds, no timestamps):
rerunning gives byte-identical files.  Needs only numpy and the onnx module
(Debian's python3-onnx 1.12 is enough).

Ground truth.  expected.json records, for every model, the gear options a
user would pass and, per gear, the exact output shapes.  They come from
RUNNING the model on random inputs of the gear's shapes, not from shape
inference: Debian's onnx 1.12 has no onnx.reference, so this file carries a
small numpy executor (class Run, below) that computes every op the models
use, values included (Conv, ConvTranspose, Resize, LSTM, If ...).  Its
results were cross-checked against ONNX Runtime with
tests/check_models_ort.mjs (optional; needs node and onnxruntime-node):

    NODE_PATH=/path/to/node_modules node tests/check_models_ort.mjs

The models (C = channels, dim_params in quotes):

  det.onnx      DBNet-style text detector, opset 13, 54 nodes, as
                PaddleOCR/mmocr's DBNet exports from PyTorch.  x float
                [1,3,"H","W"] -> backbone of 3x3 Convs, five of them
                stride 2 (+BatchNormalization, Relu), giving C2..C5 at
                H/4, H/8, H/16, H/32 -> FPN: 1x1 lateral
                Convs (no bias), top-down path adding upsampled levels:
                  in5 -> Resize(scales=[1,1,2,2], nearest)      (+ in4)
                  out4 -> Resize(sizes=Concat(Slice(Shape(out4),0:2),
                          Slice(Shape(in3),2:4)))                (+ in3)
                  out3 -> Resize(sizes=Concat(Slice(Shape(out3),0:2),
                          Cast(Concat(Unsqueeze(Gather(Shape(in2),2)),
                          Unsqueeze(Gather(Shape(in2),3))))))    (+ in2)
                (the second and third are what torch.onnx makes of
                F.interpolate(x, size=y.shape[2:]); roi and scales are empty
                tensors there, as torch passes them) -> 3x3 smoothing Convs,
                Resize x8/x4/x2 by scales, Concat of the four levels at H/4
                -> head: Conv, BatchNormalization, Relu, ConvTranspose(k2,s2),
                BatchNormalization, Relu, ConvTranspose(k3,s2,pads 1,
                output_padding 1) -> Sigmoid -> maps float [1,1,"H","W"].
                Gears: --dynamic_image_size (H,W multiples of 32, as DBNet
                needs).
  rec.onnx      SVTR/CRNN-style text recognizer, opset 17, 154 nodes.
                x float
                [1,3,48,"W"] -> Conv stem (stride 2,2,2 then MaxPool (2,1)
                and a (3,1) Conv: H 48 -> 1, W -> W/8) -> flatten as torch
                exports x.view(n, c, h*w): Shape -> Gather(0/1/2/3) ->
                Mul(h,w) -> Unsqueeze -> Concat -> Reshape -> Transpose to
                [1,W/8,C] -> 2 pre-norm transformer blocks -> LayerNorm ->
                MatMul+Add to 97 classes -> Softmax -> probs float
                [1,"T",97], T = W/8.  Each block as torch exports SVTR's
                Attention/Mlp: LayerNormalization; MatMul+Add (qkv);
                Shape -> Gather(0,1,2) (B,N,C), Div(C, heads), Unsqueeze,
                Concat with Constant [3] and [heads] -> Reshape to
                [B,N,3,heads,C/heads]; Transpose(2,0,3,1,4); Gather 0/1/2
                (q,k,v); Transpose(k); MatMul; Div by the Constant
                sqrt(head dim); Softmax; MatMul; Transpose(0,2,1,3);
                Reshape to Concat(Unsqueeze(B),Unsqueeze(N),Unsqueeze(C));
                MatMul+Add; residual Add; LayerNormalization; MatMul+Add;
                GELU as exported (Div, Erf, Add, Mul, Mul); MatMul+Add;
                residual Add.  Every index, axis and shape piece is a
                Constant node, as torch.onnx emits them.
  bench_rec.onnx  the same recognizer with 12 blocks (C=32, 2 heads) for
                `make bench`: 764 nodes, 61 per block.
  cls.onnx      PP-OCR-style text direction classifier, opset 13, 237
                nodes, as Paddle2ONNX exports PaddleOCR's MobileNetV3-small
                (scale 0.35).  x float ["N",3,48,192] -> Conv 3x3/2 +
                BatchNormalization + hardswish -> 11 inverted residual
                blocks: 1x1 Conv + BN + act, depthwise kxk Conv (k 3 or 5,
                group = channels, stride (2,1) in four of them) + BN + act,
                squeeze-excite in eight (GlobalAveragePool, 1x1 Conv,
                Relu, 1x1 Conv, hardsigmoid written out as
                Clip(Mul(x,0.2)+0.5, 0, 1), Mul), 1x1 Conv + BN, residual
                Add where the shape stays; act is Relu in the first three,
                hardswish written out (Add 3, Clip 0..6, Mul, Div 6) in the
                rest -> 1x1 Conv to 200 + BN + hardswish -> MaxPool 2x2 ->
                GlobalAveragePool -> flatten as exported (Shape, Gather 0,
                Unsqueeze, Concat with [-1], Reshape) -> MatMul + Add to 2
                -> Softmax -> probs float ["N",2].  Gears:
                --dynamic_batch_size (PaddleOCR batches 6 crops).
  vad.onnx      Silero-VAD-like voice activity detector, opset 16, 69
                nodes (36 in the main graph, 33 in If branches), as
                torch.jit.script + torch.onnx export it (control flow kept
                as If).  Inputs input float ["batch","samples"], sr int64 []
                (sample rate; a runtime scalar, static shape, so it is not
                listed in --input_shape), h and c float [2,"batch",64]
                (LSTM state).
                  1. Chunk length, If on a SHAPE (folds per gear), two levels:
                     If(Greater(T,1024)) then keep the last 1024 samples
                     (Slice, starts = Sub(T,1024) from Shape) else
                     If(Less(T,1024)) then prepend a zero context [B,64]
                     (ConstantOfShape(Concat(Unsqueeze(B),[64])), Concat)
                     else Reshape(input, Concat(Unsqueeze(B),Unsqueeze(T))).
                     T=512 -> [B,576]; 1024 -> [B,1024]; 1536 -> [B,1024].
                  2. Resampling, If on sr's VALUE (stays dynamic), two levels:
                     If(Greater(sr,16000)) then If(Equal(Mod(sr,16000),0))
                     then x[:, ::sr/16000] (Slice with a step computed from
                     sr) else Identity; else Identity.  The sample count after
                     it depends on sr: only a -1 can describe it.
                  3. STFT as a Conv1d with a fixed basis: Unsqueeze to
                     [B,1,L], Pad(reflect, 16 each side), Conv(66 x 1 x 64,
                     stride 32), Slice real/imag halves, Mul, Add, Sqrt ->
                     magnitude [B,33,F]; encoder Conv1d(k3,p1)+Relu,
                     Conv1d(k3,s2,p1)+Relu -> [B,32,F2]; Transpose to
                     [F2,B,32].
                  4. Two LSTM layers (hidden 64) as torch exports nn.LSTM(
                     num_layers=2): initial_h/c = Slice(h, 0:1) / (1:2);
                     Squeeze(Y,1) feeds layer 2; hn = Concat(Y_h1, Y_h2),
                     cn likewise.
                  5. Decoder on the last step: Gather(Y, -1, axis 0),
                     Squeeze, Relu, MatMul+Add (64 -> 1), Sigmoid -> output
                     float ["batch",1].
                Outputs output [B,1], hn [2,B,64], cn [2,B,64] for every
                sr; expected.json's shapes were checked with sr = 8000,
                16000 and 32000 (the last takes the resampling branch).
                Subgraphs use outer-scope values and initializers.

Every model passes onnx.checker.check_model(full_check=True).
"""

import json
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures")
FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
BOOL = TensorProto.BOOL
INT64_MAX = 2**63 - 1


def path(name):
    return os.path.join(OUT, name)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


class Builder:
    """Accumulates nodes and initializers of one graph; every op call
    returns its output name(s), named after the node."""

    def __init__(self, prefix="", rng=None, const_nodes=False):
        self.nodes, self.inits = [], []
        self.prefix = prefix
        self.count = {}
        self.rng = rng
        self.const_nodes = const_nodes  # constants as Constant nodes

    def name(self, op):
        k = self.count.get(op, 0)
        self.count[op] = k + 1
        return "%s%s_%d" % (self.prefix, op, k)

    def op(self, op_type, inputs, nout=1, name=None, **attrs):
        n = name or self.name(op_type)
        outs = [n] if nout == 1 else ["%s.%d" % (n, i) for i in range(nout)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs,
                                           name=n, **attrs))
        return outs[0] if nout == 1 else outs

    def init(self, name, arr):
        # (not np.ascontiguousarray: it makes a 0-d array 1-d)
        arr = np.array(arr, order="C")
        self.inits.append(numpy_helper.from_array(arr, self.prefix + name))
        return self.prefix + name

    def const(self, arr, name=None):
        """A constant: a Constant node (const_nodes) or an initializer."""
        arr = np.asarray(arr)
        if self.const_nodes:
            n = name or self.name("Constant")
            self.nodes.append(helper.make_node(
                "Constant", [], [n], name=n,
                value=numpy_helper.from_array(arr, n)))
            return n
        return self.init(name or "c%d" % len(self.inits), arr)

    def i64(self, v, name=None):
        return self.const(np.array(v, dtype=np.int64), name)

    def weight(self, name, *shape, scale=None):
        if scale is None:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
            scale = 1.0 / math.sqrt(max(fan_in, 1))
        w = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        return self.init(name, w)

    def conv(self, x, cin, cout, k, stride=1, pad=None, bias=True,
             name=None):
        ks = list(k) if isinstance(k, (list, tuple)) else [k, k]
        st = list(stride) if isinstance(stride, (list, tuple)) \
            else [stride] * len(ks)
        if pad is None:
            pad = [kk // 2 for kk in ks] * 2
        n = name or self.name("Conv")
        ins = [x, self.weight(n + ".weight", cout, cin, *ks)]
        if bias:
            ins.append(self.init(n + ".bias",
                                 (self.rng.standard_normal(cout) * 0.1)
                                 .astype(np.float32)))
        return self.op("Conv", ins, name=n, kernel_shape=ks, strides=st,
                       pads=pad)

    def bn(self, x, c):
        n = self.name("BatchNormalization")
        r = self.rng
        ins = [x,
               self.init(n + ".scale", r.uniform(0.5, 1.5, c).astype("f4")),
               self.init(n + ".bias", (r.standard_normal(c) * .1)
                         .astype("f4")),
               self.init(n + ".mean", (r.standard_normal(c) * .1)
                         .astype("f4")),
               self.init(n + ".var", r.uniform(0.5, 1.5, c).astype("f4"))]
        return self.op("BatchNormalization", ins, name=n, epsilon=1e-5)

    def graph(self, name, inputs, outputs):
        return helper.make_graph(self.nodes, name, inputs, outputs,
                                 self.inits)


def make_model(graph, opset, producer="pytorch", version="1.13.1"):
    m = helper.make_model(graph,
                          opset_imports=[helper.make_opsetid("", opset)],
                          producer_name=producer, producer_version=version)
    m.ir_version = 8
    return m


def save(m, name):
    onnx.checker.check_model(m, full_check=True)
    data = m.SerializeToString()
    with open(path(name), "wb") as f:
        f.write(data)
    return m


# ---- det.onnx ----------------------------------------------------------------

def det():
    b = Builder(rng=np.random.RandomState(20240601))
    x = "x"
    # backbone: strides 2, 4, 8, 16, 32
    c1 = b.op("Relu", [b.bn(b.conv(x, 3, 8, 3, 2, bias=False), 8)])
    c2 = b.op("Relu", [b.conv(c1, 8, 16, 3, 2)])      # H/4
    c2 = b.op("Relu", [b.conv(c2, 16, 16, 3, 1)])
    c3 = b.op("Relu", [b.conv(c2, 16, 24, 3, 2)])     # H/8
    c4 = b.op("Relu", [b.conv(c3, 24, 32, 3, 2)])     # H/16
    c5 = b.op("Relu", [b.conv(c4, 32, 48, 3, 2)])     # H/32
    # FPN lateral 1x1 convs, no bias (DBNet's in2..in5)
    in2 = b.conv(c2, 16, 16, 1, bias=False, name="neck.in2")
    in3 = b.conv(c3, 24, 16, 1, bias=False, name="neck.in3")
    in4 = b.conv(c4, 32, 16, 1, bias=False, name="neck.in4")
    in5 = b.conv(c5, 48, 16, 1, bias=False, name="neck.in5")
    nearest = dict(mode="nearest", coordinate_transformation_mode="asymmetric",
                   nearest_mode="floor")
    up2 = b.init("up2.scales", np.array([1, 1, 2, 2], dtype=np.float32))
    # out4 = in4 + up(in5): Resize by scales, roi omitted
    out4 = b.op("Add", [in4, b.op("Resize", [in5, "", up2], **nearest)])
    # out3 = in3 + interpolate(out4, size=in3.shape[2:])
    roi = b.init("resize.roi", np.zeros([0], dtype=np.float32))
    noscale = b.init("resize.scales", np.zeros([0], dtype=np.float32))
    i0, i2, i4 = b.init("i0", np.array([0], dtype=np.int64)), \
        b.init("i2", np.array([2], dtype=np.int64)), \
        b.init("i4", np.array([4], dtype=np.int64))
    nc = b.op("Slice", [b.op("Shape", [out4]), i0, i2, i0])
    hw = b.op("Slice", [b.op("Shape", [in3]), i2, i4, i0])
    sizes3 = b.op("Concat", [nc, hw], axis=0)
    out3 = b.op("Add", [in3, b.op("Resize", [out4, roi, noscale, sizes3],
                                  **nearest)])
    # out2 = in2 + interpolate(out3, size=(in2.shape[2], in2.shape[3]))
    s2 = b.op("Shape", [in2])
    g2 = b.init("g2", np.array(2, dtype=np.int64))
    g3 = b.init("g3", np.array(3, dtype=np.int64))
    ax0 = b.init("axes0", np.array([0], dtype=np.int64))
    h2 = b.op("Unsqueeze", [b.op("Gather", [s2, g2], axis=0), ax0])
    w2 = b.op("Unsqueeze", [b.op("Gather", [s2, g3], axis=0), ax0])
    hw2 = b.op("Cast", [b.op("Concat", [h2, w2], axis=0)], to=INT64)
    nc3 = b.op("Slice", [b.op("Shape", [out3]), i0, i2, i0])
    sizes2 = b.op("Concat", [nc3, hw2], axis=0)
    out2 = b.op("Add", [in2, b.op("Resize", [out3, roi, noscale, sizes2],
                                  **nearest)])
    # smoothing convs and upsampling to H/4
    p5 = b.conv(in5, 16, 4, 3, bias=False, name="neck.p5")
    p4 = b.conv(out4, 16, 4, 3, bias=False, name="neck.p4")
    p3 = b.conv(out3, 16, 4, 3, bias=False, name="neck.p3")
    p2 = b.conv(out2, 16, 4, 3, bias=False, name="neck.p2")
    up4 = b.init("up4.scales", np.array([1, 1, 4, 4], dtype=np.float32))
    up8 = b.init("up8.scales", np.array([1, 1, 8, 8], dtype=np.float32))
    p5 = b.op("Resize", [p5, "", up8], **nearest)
    p4 = b.op("Resize", [p4, "", up4], **nearest)
    p3 = b.op("Resize", [p3, "", up2], **nearest)
    fuse = b.op("Concat", [p5, p4, p3, p2], axis=1)   # [1,16,H/4,W/4]
    # DB head (binarize branch)
    h = b.op("Relu", [b.bn(b.conv(fuse, 16, 4, 3, bias=False,
                                  name="head.conv1"), 4)])
    w = b.weight("head.deconv1.weight", 4, 4, 2, 2)
    bias = b.init("head.deconv1.bias", np.full([4], 0.05, np.float32))
    h = b.op("ConvTranspose", [h, w, bias], name="head.deconv1",
             kernel_shape=[2, 2], strides=[2, 2])              # H/2
    h = b.op("Relu", [b.bn(h, 4)])
    w = b.weight("head.deconv2.weight", 4, 1, 3, 3)
    bias = b.init("head.deconv2.bias", np.zeros([1], np.float32))
    h = b.op("ConvTranspose", [h, w, bias], name="head.deconv2",
             kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
             output_padding=[1, 1])                           # H
    b.op("Sigmoid", [h], name="maps")
    g = b.graph("det", [vi("x", FLOAT, [1, 3, "H", "W"])],
                [vi("maps", FLOAT, [1, 1, "H", "W"])])
    return save(make_model(g, 13), "det.onnx")


# ---- rec.onnx / bench_rec.onnx -------------------------------------------------

def rec_block(b, x, C, heads, k):
    """One pre-norm transformer block as torch.onnx exports SVTR's Block."""
    p = "blocks.%d." % k

    def ln(t, name):
        return b.op("LayerNormalization",
                    [t, b.init(name + ".weight", np.ones(C, np.float32)),
                     b.init(name + ".bias", np.zeros(C, np.float32))],
                    name=name, axis=-1, epsilon=1e-6)

    def linear(t, cin, cout, name):
        w = b.weight(name + ".weight", cin, cout)
        bias = b.init(name + ".bias",
                      (b.rng.standard_normal(cout) * .02).astype("f4"))
        return b.op("Add", [b.op("MatMul", [t, w], name=name + ".matmul"),
                            bias])

    def unsq(t):
        return b.op("Unsqueeze", [t, b.i64([0])])

    hd = C // heads
    t = ln(x, p + "norm1")
    s = b.op("Shape", [t])
    B = b.op("Gather", [s, b.i64(0)], axis=0)
    N = b.op("Gather", [s, b.i64(1)], axis=0)
    Cd = b.op("Gather", [s, b.i64(2)], axis=0)
    qkv = linear(t, C, 3 * C, p + "attn.qkv")
    hdim = b.op("Div", [Cd, b.i64(heads)])
    shape5 = b.op("Concat", [unsq(B), unsq(N), b.i64([3]), b.i64([heads]),
                             unsq(hdim)], axis=0)
    qkv = b.op("Reshape", [qkv, shape5])
    qkv = b.op("Transpose", [qkv], perm=[2, 0, 3, 1, 4])
    q = b.op("Gather", [qkv, b.i64(0)], axis=0)
    kk = b.op("Gather", [qkv, b.i64(1)], axis=0)
    v = b.op("Gather", [qkv, b.i64(2)], axis=0)
    kt = b.op("Transpose", [kk], perm=[0, 1, 3, 2])
    a = b.op("MatMul", [q, kt])
    a = b.op("Div", [a, b.const(np.array(math.sqrt(hd), np.float32))])
    a = b.op("Softmax", [a], axis=-1)
    o = b.op("MatMul", [a, v])
    o = b.op("Transpose", [o], perm=[0, 2, 1, 3])
    shape3 = b.op("Concat", [unsq(B), unsq(N), unsq(Cd)], axis=0)
    o = b.op("Reshape", [o, shape3])
    o = linear(o, C, C, p + "attn.proj")
    x = b.op("Add", [x, o])
    t = ln(x, p + "norm2")
    m = linear(t, C, 2 * C, p + "mlp.fc1")
    # GELU: x * 0.5 * (1 + erf(x / sqrt(2)))
    e = b.op("Erf", [b.op("Div", [m, b.const(np.array(1.4142135,
                                                       np.float32))])])
    e = b.op("Add", [e, b.const(np.array(1.0, np.float32))])
    m = b.op("Mul", [b.op("Mul", [m, e]), b.const(np.array(0.5,
                                                           np.float32))])
    m = linear(m, 2 * C, C, p + "mlp.fc2")
    return b.op("Add", [x, m])


def recognizer(name, blocks, C, heads, seed, classes=97):
    b = Builder(rng=np.random.RandomState(seed), const_nodes=True)
    # stem: H 48 -> 24 -> 12 -> 6 -> 3 (MaxPool) -> 1; W -> W/8
    t = b.op("Relu", [b.conv("x", 3, 16, 3, 2, name="stem.conv1")])
    t = b.op("Relu", [b.conv(t, 16, 32, 3, 2, name="stem.conv2")])
    t = b.op("Relu", [b.conv(t, 32, C, 3, 2, name="stem.conv3")])
    t = b.op("MaxPool", [t], kernel_shape=[2, 1], strides=[2, 1])
    t = b.op("Relu", [b.conv(t, C, C, [3, 1], 1, pad=[0, 0, 0, 0],
                             name="stem.conv4")])        # [1,C,1,W/8]
    # x.view(n, c, h * w).permute(0, 2, 1), as exported
    s = b.op("Shape", [t])
    n = b.op("Gather", [s, b.i64(0)], axis=0)
    c = b.op("Gather", [s, b.i64(1)], axis=0)
    h = b.op("Gather", [s, b.i64(2)], axis=0)
    w = b.op("Gather", [s, b.i64(3)], axis=0)
    hw = b.op("Mul", [h, w])
    shape = b.op("Concat", [b.op("Unsqueeze", [v, b.i64([0])])
                            for v in (n, c, hw)], axis=0)
    t = b.op("Reshape", [t, shape])
    t = b.op("Transpose", [t], perm=[0, 2, 1])           # [1,W/8,C]
    for k in range(blocks):
        t = rec_block(b, t, C, heads, k)
    t = b.op("LayerNormalization",
             [t, b.init("norm.weight", np.ones(C, np.float32)),
              b.init("norm.bias", np.zeros(C, np.float32))],
             name="norm", axis=-1, epsilon=1e-6)
    t = b.op("MatMul", [t, b.weight("head.weight", C, classes)],
             name="head.matmul")
    t = b.op("Add", [t, b.init("head.bias", np.zeros(classes, np.float32))])
    b.op("Softmax", [t], name="probs", axis=2)
    g = b.graph(name, [vi("x", FLOAT, [1, 3, 48, "W"])],
                [vi("probs", FLOAT, [1, "T", classes])])
    return save(make_model(g, 17), name + ".onnx")


# ---- cls.onnx ------------------------------------------------------------------

# PaddleOCR's MobileNetV3-small (scale 0.35) as its text direction
# classifier uses it: k, expanded, out, SE, activation, stride.
CLS_BLOCKS = [
    (3, 16, 16, True, "relu", (2, 1)),
    (3, 72, 24, False, "relu", (2, 1)),
    (3, 88, 24, False, "relu", 1),
    (5, 96, 40, True, "hardswish", (2, 1)),
    (5, 240, 40, True, "hardswish", 1),
    (5, 240, 40, True, "hardswish", 1),
    (5, 120, 48, True, "hardswish", 1),
    (5, 144, 48, True, "hardswish", 1),
    (5, 288, 96, True, "hardswish", (2, 1)),
    (5, 576, 96, True, "hardswish", 1),
    (5, 576, 96, True, "hardswish", 1),
]


def divisible(v, d=8):
    n = max(d, int(v + d / 2) // d * d)
    return n + d if n < 0.9 * v else n


def classifier():
    b = Builder(rng=np.random.RandomState(4848))
    f32 = lambda v: b.const(np.array(v, np.float32))  # noqa: E731

    def hardswish(t):
        # x * Clip(x + 3, 0, 6) / 6, as Paddle2ONNX writes it out
        c = b.op("Clip", [b.op("Add", [t, f32(3.0)]), f32(0.0), f32(6.0)])
        return b.op("Div", [b.op("Mul", [t, c]), f32(6.0)])

    def act(t, kind):
        return b.op("Relu", [t]) if kind == "relu" else hardswish(t)

    def conv_bn(t, cin, cout, k, stride=1, group=1, kind=None):
        n = b.name("Conv")
        w = b.weight(n + ".weight", cout, cin // group, k, k)
        st = list(stride) if isinstance(stride, tuple) else [stride] * 2
        t = b.op("Conv", [t, w], name=n, kernel_shape=[k, k], strides=st,
                 pads=[k // 2] * 4, group=group)
        t = b.bn(t, cout)
        return act(t, kind) if kind else t

    def se(t, c):
        # avg pool, 1x1 Conv, Relu, 1x1 Conv, hardsigmoid written out as
        # Clip(x * 0.2 + 0.5, 0, 1), Mul
        s = b.op("GlobalAveragePool", [t])
        s = b.op("Relu", [b.conv(s, c, c // 4, 1)])
        s = b.conv(s, c // 4, c, 1)
        s = b.op("Add", [b.op("Mul", [s, f32(0.2)]), f32(0.5)])
        s = b.op("Clip", [s, f32(0.0), f32(1.0)])
        return b.op("Mul", [t, s])

    t = conv_bn("x", 3, divisible(16 * 0.35), 3, 2, kind="hardswish")
    cin = divisible(16 * 0.35)
    for k, exp, out, has_se, kind, stride in CLS_BLOCKS:
        e, o = divisible(0.35 * exp), divisible(0.35 * out)
        y = conv_bn(t, cin, e, 1, kind=kind)
        y = conv_bn(y, e, e, k, stride, group=e, kind=kind)
        if has_se:
            y = se(y, e)
        y = conv_bn(y, e, o, 1)
        t = b.op("Add", [t, y]) if cin == o and stride == 1 else y
        cin = o
    last = divisible(0.35 * 576)
    t = conv_bn(t, cin, last, 1, kind="hardswish")
    t = b.op("MaxPool", [t], kernel_shape=[2, 2], strides=[2, 2])
    # head: adaptive average pool, flatten as exported, Linear, softmax
    t = b.op("GlobalAveragePool", [t])
    s = b.op("Shape", [t])
    n = b.op("Unsqueeze", [b.op("Gather", [s, b.i64(0)], axis=0),
                           b.i64([0])])
    t = b.op("Reshape", [t, b.op("Concat", [n, b.i64([-1])], axis=0)])
    t = b.op("MatMul", [t, b.weight("head.weight", last, 2)],
             name="head.matmul")
    t = b.op("Add", [t, b.init("head.bias", np.zeros(2, np.float32))])
    b.op("Softmax", [t], name="probs", axis=1)
    g = b.graph("cls", [vi("x", FLOAT, ["N", 3, 48, 192])],
                [vi("probs", FLOAT, ["N", 2])])
    return save(make_model(g, 13, producer="PaddlePaddle",
                           version="2.5.1"), "cls.onnx")


# ---- vad.onnx ----------------------------------------------------------------

def vad():
    b = Builder(rng=np.random.RandomState(777))
    HID, NFFT, HOP, PAD = 64, 64, 32, 16
    NB = NFFT // 2 + 1
    sub = {"n": 0}

    def branch(name, build, out_elem=FLOAT, rank=2):
        """A subgraph built by build(bb) -> output name."""
        bb = Builder(prefix=name + "/", rng=b.rng, const_nodes=True)
        out = build(bb)
        sub["n"] += 1
        return helper.make_graph(bb.nodes, name, [],
                                 [vi(out, out_elem, [None] * rank)])

    def if_node(cond, then_g, else_g, name, out):
        b.nodes.append(helper.make_node("If", [cond], [out], name=name,
                                        then_branch=then_g,
                                        else_branch=else_g))
        return out

    c64 = b.init("const.64", np.array([64], np.int64))
    # 1. chunk length: If on shapes, two levels
    s = b.op("Shape", ["input"])
    B = b.op("Gather", [s, b.init("idx0", np.array(0, np.int64))], axis=0)
    T = b.op("Gather", [s, b.init("idx1", np.array(1, np.int64))], axis=0)
    chunk = b.init("chunk", np.array(1024, np.int64))

    def keep_last(bb):
        start = bb.op("Unsqueeze", [bb.op("Sub", [T, chunk]), bb.i64([0])])
        end = bb.op("Unsqueeze", [T, bb.i64([0])])
        return bb.op("Slice", ["input", start, end, bb.i64([1])])

    def with_context(bb):
        zs = bb.op("Concat", [bb.op("Unsqueeze", [B, bb.i64([0])]), c64],
                   axis=0)
        z = bb.op("ConstantOfShape", [zs],
                  value=numpy_helper.from_array(np.zeros([1], np.float32)))
        return bb.op("Concat", [z, "input"], axis=1)

    def as_is(bb):
        shp = bb.op("Concat", [bb.op("Unsqueeze", [B, bb.i64([0])]),
                               bb.op("Unsqueeze", [T, bb.i64([0])])], axis=0)
        return bb.op("Reshape", ["input", shp])

    def short_chunk(bb):
        cond = bb.op("Less", [T, chunk])
        bb.nodes.append(helper.make_node(
            "If", [cond], ["short_chunk/x"], name="if_context",
            then_branch=branch("if_context.then", with_context),
            else_branch=branch("if_context.else", as_is)))
        return "short_chunk/x"

    x0 = if_node(b.op("Greater", [T, chunk]),
                 branch("if_chunk.then", keep_last),
                 branch("if_chunk.else", short_chunk), "if_chunk", "x0")

    # 2. resampling: If on sr's value, two levels
    r16k = b.init("sr16k", np.array(16000, np.int64))

    def decimate(bb):
        step = bb.op("Unsqueeze", [bb.op("Div", ["sr", r16k]), bb.i64([0])])
        return bb.op("Slice", [x0, bb.i64([0]), bb.i64([INT64_MAX]),
                               bb.i64([1]), step])

    def identity(bb):
        return bb.op("Identity", [x0])

    def resample(bb):
        cond = bb.op("Equal", [bb.op("Mod", ["sr", r16k]), bb.i64(0)])
        bb.nodes.append(helper.make_node(
            "If", [cond], ["resample/x"], name="if_divisible",
            then_branch=branch("if_divisible.then", decimate),
            else_branch=branch("if_divisible.else", identity)))
        return "resample/x"

    x1 = if_node(b.op("Greater", ["sr", r16k]),
                 branch("if_rate.then", resample),
                 branch("if_rate.else", identity), "if_rate", "x1")

    # 3. STFT as Conv1d with a fixed (Fourier) basis, magnitude
    t = b.op("Unsqueeze", [x1, b.init("axes1", np.array([1], np.int64))])
    t = b.op("Pad", [t, b.init("stft.pads", np.array([0, 0, PAD, 0, 0, PAD],
                                                      np.int64))],
             mode="reflect")
    n = np.arange(NFFT)
    win = 0.5 - 0.5 * np.cos(2 * np.pi * n / NFFT)
    f = np.arange(NB)[:, None]
    real = np.cos(2 * np.pi * f * n / NFFT) * win
    imag = -np.sin(2 * np.pi * f * n / NFFT) * win
    basis = np.concatenate([real, imag])[:, None, :].astype(np.float32)
    t = b.op("Conv", [t, b.init("stft.forward_basis_buffer", basis)],
             name="stft.conv", kernel_shape=[NFFT], strides=[HOP],
             pads=[0, 0])
    ax1 = b.init("axes_c", np.array([1], np.int64))
    re = b.op("Slice", [t, b.init("re.start", np.array([0], np.int64)),
                        b.init("re.end", np.array([NB], np.int64)), ax1])
    im = b.op("Slice", [t, b.init("im.start", np.array([NB], np.int64)),
                        b.init("im.end", np.array([2 * NB], np.int64)), ax1])
    mag = b.op("Sqrt", [b.op("Add", [b.op("Mul", [re, re]),
                                     b.op("Mul", [im, im])])])
    # encoder
    t = b.op("Relu", [b.conv(mag, NB, 32, [3], 1, pad=[1, 1],
                             name="encoder.0")])
    t = b.op("Relu", [b.conv(t, 32, 32, [3], 2, pad=[1, 1],
                             name="encoder.1")])
    t = b.op("Transpose", [t], perm=[2, 0, 1])          # [F2,B,32]

    # 4. two LSTM layers
    def lstm(inp, cin, k):
        W = b.weight("lstm.W%d" % k, 1, 4 * HID, cin, scale=0.2)
        R = b.weight("lstm.R%d" % k, 1, 4 * HID, HID, scale=0.2)
        Bb = b.weight("lstm.B%d" % k, 1, 8 * HID, scale=0.1)
        h0 = b.op("Slice", ["h", b.init("l%d.s" % k, np.array([k], np.int64)),
                            b.init("l%d.e" % k, np.array([k + 1], np.int64)),
                            b.init("l%d.a" % k, np.array([0], np.int64))])
        c0 = b.op("Slice", ["c", "l%d.s" % k, "l%d.e" % k, "l%d.a" % k])
        return b.op("LSTM", [inp, W, R, Bb, "", h0, c0], nout=3,
                    name="lstm%d" % k, hidden_size=HID)

    y1, h1, cc1 = lstm(t, 32, 0)
    sq = b.init("axes_dir", np.array([1], np.int64))
    y2, h2, cc2 = lstm(b.op("Squeeze", [y1, sq]), HID, 1)
    b.op("Concat", [h1, h2], name="hn", axis=0)
    b.op("Concat", [cc1, cc2], name="cn", axis=0)
    # 5. decoder on the last step
    last = b.op("Gather", [y2, b.init("last", np.array(-1, np.int64))],
                axis=0)                                   # [1,B,64]
    last = b.op("Squeeze", [last, b.init("axes_0", np.array([0], np.int64))])
    d = b.op("MatMul", [b.op("Relu", [last]),
                        b.weight("decoder.weight", HID, 1)])
    d = b.op("Add", [d, b.init("decoder.bias", np.zeros([1], np.float32))])
    b.op("Sigmoid", [d], name="output")
    g = b.graph("vad", [vi("input", FLOAT, ["batch", "samples"]),
                        vi("sr", INT64, []),
                        vi("h", FLOAT, [2, "batch", HID]),
                        vi("c", FLOAT, [2, "batch", HID])],
                [vi("output", FLOAT, ["batch", 1]),
                 vi("hn", FLOAT, [2, "batch", HID]),
                 vi("cn", FLOAT, [2, "batch", HID])])
    return save(make_model(g, 16), "vad.onnx")


# ---- a small numpy executor (ground truth) -----------------------------------

def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _conv_out(n, k, s, pb, pe, d=1):
    return (n + pb + pe - d * (k - 1) - 1) // s + 1


def conv(x, w, b, node):
    sp = x.ndim - 2
    ks = list(w.shape[2:])
    st = attr(node, "strides", [1] * sp)
    pads = attr(node, "pads", [0] * 2 * sp)
    dil = attr(node, "dilations", [1] * sp)
    grp = attr(node, "group", 1)
    assert attr(node, "auto_pad", b"NOTSET") in (b"NOTSET", "NOTSET")
    if grp > 1:
        xs, ws = np.split(x, grp, axis=1), np.split(w, grp, axis=0)
        bs = np.split(b, grp) if b is not None else [None] * grp
        one = onnx.helper.make_node("Conv", [], [], strides=st, pads=pads,
                                    dilations=dil)
        return np.concatenate([conv(xx, ww, bb, one) for xx, ww, bb
                               in zip(xs, ws, bs)], axis=1)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + sp])
                                       for i in range(sp)])
    osz = [_conv_out(x.shape[2 + i], ks[i], st[i], pads[i], pads[i + sp],
                     dil[i]) for i in range(sp)]
    y = np.zeros([x.shape[0], w.shape[0]] + osz, np.float64)
    for kk in np.ndindex(*ks):
        sl = tuple(slice(kk[i] * dil[i], kk[i] * dil[i] + st[i] *
                         (osz[i] - 1) + 1, st[i]) for i in range(sp))
        patch = xp[(slice(None), slice(None)) + sl]
        y += np.einsum("nc...,mc->nm...", patch, w[(slice(None),
                                                    slice(None)) + kk])
    if b is not None:
        y += b.reshape([1, -1] + [1] * sp)
    return y.astype(np.float32)


def conv_transpose(x, w, b, node):
    sp = x.ndim - 2
    ks = list(w.shape[2:])
    st = attr(node, "strides", [1] * sp)
    pads = attr(node, "pads", [0] * 2 * sp)
    op = attr(node, "output_padding", [0] * sp)
    assert attr(node, "group", 1) == 1 and attr(node, "dilations") is None
    assert attr(node, "output_shape") is None
    full = [st[i] * (x.shape[2 + i] - 1) + ks[i] + op[i] for i in range(sp)]
    y = np.zeros([x.shape[0], w.shape[1]] + full, np.float64)
    for kk in np.ndindex(*ks):
        sl = tuple(slice(kk[i], kk[i] + st[i] * (x.shape[2 + i] - 1) + 1,
                         st[i]) for i in range(sp))
        y[(slice(None), slice(None)) + sl] += np.einsum(
            "nc...,cm->nm...", x, w[(slice(None), slice(None)) + kk])
    crop = tuple(slice(pads[i], full[i] - pads[i + sp]) for i in range(sp))
    y = y[(slice(None), slice(None)) + crop]
    if b is not None:
        y += b.reshape([1, -1] + [1] * sp)
    return y.astype(np.float32)


def maxpool(x, node):
    sp = x.ndim - 2
    ks = attr(node, "kernel_shape")
    st = attr(node, "strides", [1] * sp)
    assert not any(attr(node, "pads", [0] * 2 * sp))
    assert not attr(node, "ceil_mode", 0)
    osz = [_conv_out(x.shape[2 + i], ks[i], st[i], 0, 0) for i in range(sp)]
    y = np.full(list(x.shape[:2]) + osz, -np.inf, np.float32)
    for kk in np.ndindex(*ks):
        sl = tuple(slice(kk[i], kk[i] + st[i] * (osz[i] - 1) + 1, st[i])
                   for i in range(sp))
        y = np.maximum(y, x[(slice(None), slice(None)) + sl])
    return y


def resize(x, roi, scales, sizes, node):
    assert attr(node, "mode", b"nearest") == b"nearest"
    assert attr(node, "coordinate_transformation_mode") == b"asymmetric"
    assert attr(node, "nearest_mode") == b"floor"
    if sizes is not None and sizes.size:
        out = [int(v) for v in sizes]
        sc = [o / i for o, i in zip(out, x.shape)]
    else:
        sc = [float(v) for v in scales]
        out = [int(math.floor(i * s)) for i, s in zip(x.shape, sc)]
    y = x
    for ax, (o, s) in enumerate(zip(out, sc)):
        idx = np.minimum(np.floor(np.arange(o) / s).astype(np.int64),
                         x.shape[ax] - 1)
        y = np.take(y, idx, axis=ax)
    return y


def lstm(X, W, R, B, h0, c0, node):
    assert attr(node, "direction", b"forward") == b"forward"
    assert not attr(node, "layout", 0)
    H = attr(node, "hidden_size")
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    Wb, Rb = B[0, :4 * H], B[0, 4 * H:]
    h, c = h0[0].astype(np.float64), c0[0].astype(np.float64)
    ys = []
    for t in range(X.shape[0]):
        g = X[t] @ W[0].T + h @ R[0].T + Wb + Rb
        i, o, f, cc = np.split(g, 4, axis=1)
        c = sig(f) * c + sig(i) * np.tanh(cc)
        h = sig(o) * np.tanh(c)
        ys.append(h)
    f32 = np.float32
    Y = np.stack(ys)[:, None].astype(f32) if ys else \
        np.zeros([0, 1] + list(h.shape), f32)
    return Y, h[None].astype(f32), c[None].astype(f32)


def slice_op(x, starts, ends, axes=None, steps=None):
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    sl = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        assert st > 0
        sl[int(a)] = slice(int(s), int(min(e, INT64_MAX)), int(st))
    return x[tuple(sl)]


def int_div(a, b):
    if a.dtype.kind in "iu":
        q = np.abs(a) // np.abs(b)
        return (q * np.sign(a) * np.sign(b)).astype(a.dtype)
    return (a / b).astype(a.dtype)


def layer_norm(x, g, b, node):
    axis = attr(node, "axis", -1)
    eps = attr(node, "epsilon", 1e-5)
    axes = tuple(range(axis % x.ndim, x.ndim))
    m = x.mean(axis=axes, keepdims=True)
    v = ((x - m) ** 2).mean(axis=axes, keepdims=True)
    return ((x - m) / np.sqrt(v + eps) * g + b).astype(x.dtype)


def softmax(x, node):
    axis = attr(node, "axis", -1)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)


_erf = np.vectorize(math.erf, otypes=[np.float64])

NP_DTYPE = {TensorProto.FLOAT: np.float32, TensorProto.INT64: np.int64,
            TensorProto.INT32: np.int32, TensorProto.BOOL: np.bool_}


class Run:
    """Runs an ONNX graph with numpy: run(graph, feeds) -> {name: array}.
    Covers exactly the ops and attributes the models above use (anything
    else is an assertion failure, not a silent guess)."""

    def __init__(self, model):
        self.model = model

    def __call__(self, feeds):
        g = self.model.graph
        env = dict(feeds)
        self.graph(g, env)
        return {o.name: env[o.name] for o in g.output}

    def graph(self, g, env):
        for t in g.initializer:
            env[t.name] = numpy_helper.to_array(t)
        for node in g.node:
            ins = [env[n] if n else None for n in node.input]
            outs = self.node(node, ins, env)
            if not isinstance(outs, tuple):
                outs = (outs,)
            for name, v in zip(node.output, outs):
                env[name] = np.asarray(v)

    def node(self, node, a, env):
        op = node.op_type
        if op == "Constant":
            return numpy_helper.to_array(attr(node, "value"))
        if op == "If":
            br = attr(node, "then_branch" if bool(a[0]) else "else_branch")
            inner = dict(env)  # outer scope visible
            self.graph(br, inner)
            return tuple(inner[o.name] for o in br.output)
        if op == "Conv":
            return conv(a[0], a[1], a[2] if len(a) > 2 else None, node)
        if op == "ConvTranspose":
            return conv_transpose(a[0], a[1], a[2] if len(a) > 2 else None,
                                  node)
        if op == "MaxPool":
            return maxpool(a[0], node)
        if op == "BatchNormalization":
            x, sc, b, m, v = a
            shp = [1, -1] + [1] * (x.ndim - 2)
            eps = attr(node, "epsilon", 1e-5)
            return ((x - m.reshape(shp)) / np.sqrt(v.reshape(shp) + eps) *
                    sc.reshape(shp) + b.reshape(shp)).astype(np.float32)
        if op == "Resize":
            a = a + [None] * (4 - len(a))
            return resize(a[0], a[1], a[2], a[3], node)
        if op == "LSTM":
            return lstm(a[0], a[1], a[2], a[3], a[5], a[6], node)
        if op == "LayerNormalization":
            return layer_norm(a[0], a[1], a[2], node)
        if op == "Softmax":
            return softmax(a[0], node)
        if op == "Shape":
            assert attr(node, "start") is None and attr(node, "end") is None
            return np.array(a[0].shape, np.int64)
        if op == "Gather":
            return np.take(a[0], a[1], axis=attr(node, "axis", 0))
        if op == "Slice":
            return slice_op(a[0], a[1], a[2], *(a[3:] + [None] * 2)[:2])
        if op == "Concat":
            return np.concatenate(a, axis=attr(node, "axis"))
        if op == "Unsqueeze":
            out = a[0]
            for ax in sorted(int(v) % (a[0].ndim + len(a[1])) for v in a[1]):
                out = np.expand_dims(out, ax)
            return out
        if op == "Squeeze":
            return np.squeeze(a[0], axis=tuple(int(v) for v in a[1]))
        if op == "Reshape":
            assert not attr(node, "allowzero", 0)
            shp = [a[0].shape[i] if v == 0 else int(v)
                   for i, v in enumerate(a[1])]
            return a[0].reshape(shp)
        if op == "Transpose":
            return np.transpose(a[0], attr(node, "perm"))
        if op == "Cast":
            return a[0].astype(NP_DTYPE[attr(node, "to")])
        if op == "ConstantOfShape":
            v = numpy_helper.to_array(attr(node, "value"))
            return np.full([int(d) for d in a[0]], v[0], v.dtype)
        if op == "Pad":
            assert attr(node, "mode") == b"reflect" and len(a) == 2
            r = a[0].ndim
            return np.pad(a[0], [(int(a[1][i]), int(a[1][i + r]))
                                 for i in range(r)], mode="reflect")
        if op == "MatMul":
            return np.matmul(a[0], a[1])
        if op == "Clip":
            return np.clip(a[0], a[1], a[2]).astype(a[0].dtype)
        if op == "GlobalAveragePool":
            ax = tuple(range(2, a[0].ndim))
            return a[0].mean(axis=ax, keepdims=True).astype(a[0].dtype)
        binary = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply,
                  "Div": int_div, "Equal": np.equal, "Less": np.less,
                  "Greater": np.greater, "And": np.logical_and}
        if op in binary:
            r = binary[op](a[0], a[1])
            return r if r.dtype == np.bool_ else r.astype(a[0].dtype)
        if op == "Mod":
            assert not attr(node, "fmod", 0)
            return np.mod(a[0], a[1])
        unary = {"Relu": lambda v: np.maximum(v, 0),
                 "Sigmoid": lambda v: 1 / (1 + np.exp(-v)),
                 "Sqrt": np.sqrt, "Erf": _erf,
                 "Identity": lambda v: v.copy()}
        if op in unary:
            return unary[op](a[0]).astype(a[0].dtype)
        raise AssertionError("executor: no op %s" % op)


# ---- expected.json -----------------------------------------------------------

def gear_shapes(spec, row):
    """--input_shape spec + one gear row -> {input: shape}."""
    vals = list(row)
    out = {}
    for entry in spec.split(";"):
        name, dims = entry.rsplit(":", 1)
        shape = []
        for d in dims.split(","):
            shape.append(vals.pop(0) if int(d) == -1 else int(d))
        out[name] = shape
    assert not vals
    return out


def run_gears(m, spec, rows, extra_feeds=(({},)), seed=0):
    """Runs model m at every gear; returns [{"dims", "outputs"}].  With
    several extra_feeds (e.g. sample rates), asserts they agree."""
    rng = np.random.RandomState(seed)
    run = Run(m)
    types = {i.name: i.type.tensor_type.elem_type for i in m.graph.input}
    gears = []
    for row in rows:
        shapes = gear_shapes(spec, row)
        feeds = {}
        for name, shp in shapes.items():
            assert types[name] == FLOAT
            feeds[name] = rng.standard_normal(shp).astype(np.float32)
        got = None
        for extra in extra_feeds:
            outs = run(dict(feeds, **extra))
            sh = {k: list(v.shape) for k, v in outs.items()}
            for k, v in outs.items():
                assert np.all(np.isfinite(v)), (k, row, extra)
            assert got is None or sh == got, (row, extra, sh, got)
            got = sh
        gears.append({"dims": list(row), "outputs": got})
    return gears


def all_nodes(g):
    """Every node of g and of its subgraphs, depth first."""
    for node in g.node:
        yield node
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from all_nodes(a.g)


def count_nodes(g):
    return sum(1 for _ in all_nodes(g))


def expected(models):
    det_m, rec_m, vad_m, bench_m, cls_m = models
    doc = {}

    def sep(opt):  # atc's: batch sizes are one list, other gears rows
        return "," if opt == "dynamic_batch_size" else ";"

    def entry(key, m, fname, spec, opt, rows, **kw):
        doc[key] = {
            "model": fname,
            "nodes": count_nodes(m.graph),
            "args": ["--input_shape=" + spec,
                     "--%s=%s" % (opt, sep(opt).join(
                         ",".join(str(v) for v in r) for r in rows))],
            "gears": run_gears(m, spec, rows, **kw)}

    entry("det", det_m, "det.onnx", "x:1,3,-1,-1", "dynamic_image_size",
          [(640, 640), (960, 960), (1280, 736)])
    entry("rec", rec_m, "rec.onnx", "x:1,3,48,-1", "dynamic_dims",
          [(320,), (640,), (1280,)])
    srs = tuple({"sr": np.array(v, np.int64)} for v in (8000, 16000, 32000))
    entry("vad", vad_m, "vad.onnx", "input:1,-1;h:2,1,64;c:2,1,64",
          "dynamic_dims", [(512,), (1024,), (1536,)], extra_feeds=srs)
    entry("vad_batch", vad_m, "vad.onnx", "input:-1,512;h:2,-1,64;c:2,-1,64",
          "dynamic_dims", [(1, 1, 1), (4, 4, 4), (8, 8, 8)],
          extra_feeds=srs)
    entry("bench_rec", bench_m, "bench_rec.onnx", "x:1,3,48,-1",
          "dynamic_dims", [(320,), (640,), (1280,)])
    entry("cls", cls_m, "cls.onnx", "x:-1,3,48,192", "dynamic_batch_size",
          [(1,), (6,), (16,)])
    return doc


def write_json(doc, name):
    """expected.json, one gear per line."""
    lines = ["{"]
    keys = list(doc)
    for i, k in enumerate(keys):
        e = doc[k]
        lines.append('  "%s": {' % k)
        lines.append('    "model": %s,' % json.dumps(e["model"]))
        lines.append('    "nodes": %d,' % e["nodes"])
        lines.append('    "args": %s,' % json.dumps(e["args"]))
        lines.append('    "gears": [')
        for j, gr in enumerate(e["gears"]):
            lines.append("      " + json.dumps(gr) +
                         ("," if j + 1 < len(e["gears"]) else ""))
        lines.append("    ]")
        lines.append("  }" + ("," if i + 1 < len(keys) else ""))
    lines.append("}")
    with open(path(name), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    models = [det(), recognizer("rec", 2, 32, 2, 4242),
              vad(), recognizer("bench_rec", 12, 32, 2, 9090),
              classifier()]
    write_json(expected(models), "expected.json")
    for f in ("det.onnx", "rec.onnx", "vad.onnx", "bench_rec.onnx",
              "cls.onnx"):
        m = onnx.load(path(f))
        ops = sorted({n.op_type for n in all_nodes(m.graph)})
        print("%-15s %4d nodes %7d bytes  %s" % (
            f, count_nodes(m.graph), os.path.getsize(path(f)),
            " ".join(ops)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
