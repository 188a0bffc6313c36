#!/usr/bin/python3
"""tests/gen_qbench_models.py - makes the quantized models of make bench
(tests/bench_ort.mjs) and of tests/test_quant.c's fused-op tests, written
as onnxruntime.quantization writes them (its tools are not needed):
  - qdyn_cnn: quantize_dynamic of a small CNN on x [1,16,112,112]: each
    Conv is DynamicQuantizeLinear -> ConvInteger (uint8 weights with a
    zero point) -> Cast -> Mul by the scale product -> Add of the bias
    (a Reshape of it to [1,C,1,1], as quantize_dynamic writes it), Relu
    between; 3x3 and 1x1 convolutions, two strided, one grouped; then
    GlobalAveragePool, Flatten and a dynamic-quantized MatMul head;
  - qdyn_enc: quantize_dynamic of a transformer encoder layer (d 256,
    4 heads, FFN 1024) on x [1,128,256]: one DynamicQuantizeLinear feeds
    the Q, K and V projections (MatMulInteger, int8 weights, per-column
    scales), attention in float, the output projection and the FFN
    (Gelu written out with Erf) dynamic-quantized, residual Adds and
    LayerNormalization;
  - qdq_cnn: static QDQ quantization of the CNN (QuantizeLinear ->
    DequantizeLinear pairs on activations, int8 weights with per-channel
    scales through DequantizeLinear, float bias) on x [1,16,112,112].
  - quant_direct: QLinearConv chains at the edges of runtime/quant.c's
    im2col-free path (tests/test_quant.c).
Weights come from a fixed-seed generator; run from the repository root
with /usr/bin/python3."""
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

rng = np.random.default_rng(2829)
n = h.make_node


def save(name, nodes, inputs, outputs, inits, opset=17):
    """Float inputs; outputs float but the integer sums (names "*_i")."""
    g = h.make_graph(
        nodes, name,
        [h.make_tensor_value_info(k, T.FLOAT, s) for k, s in inputs],
        [h.make_tensor_value_info(k, T.INT32 if k.endswith("_i") else
                                  T.FLOAT, None) for k in outputs],
        [nh.from_array(v, k) for k, v in inits.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    m = onnx.shape_inference.infer_shapes(m)
    onnx.checker.check_model(m)
    onnx.save(m, "tests/fixtures/%s.onnx" % name)


def qweight(w, axis=None, signed=False):
    """w quantized per tensor (uint8 with a zero point) or, signed, per
    channel along axis (int8, symmetric): (q, scale, zero point)."""
    if signed:
        red = tuple(i for i in range(w.ndim) if i != axis)
        s = (np.abs(w).max(axis=red) / 127).astype(np.float32)
        sh = [1] * w.ndim
        sh[axis] = -1
        q = np.clip(np.round(w / s.reshape(sh)), -127, 127).astype(np.int8)
        return q, s, np.zeros(s.shape, np.int8)
    lo, hi = min(w.min(), 0), max(w.max(), 0)
    s = np.float32((hi - lo) / 255)
    z = np.uint8(np.clip(np.round(-lo / s), 0, 255))
    q = np.clip(np.round(w / s) + z, 0, 255).astype(np.uint8)
    return q, np.array(s, np.float32), np.array(z, np.uint8)


class Net:
    def __init__(self):
        self.nodes, self.inits, self.k = [], {}, 0

    def name(self, base):
        self.k += 1
        return "%s%d" % (base, self.k)

    def init(self, base, v):
        k = self.name(base)
        self.inits[k] = v
        return k

    def dql(self, x):
        q, s, z = x + "_q", x + "_s", x + "_z"
        self.nodes.append(n("DynamicQuantizeLinear", [x], [q, s, z]))
        return q, s, z

    def scale_bias(self, acc, s, ws, bias, y):
        f, p, m = self.name("f"), self.name("p"), self.name("m")
        self.nodes += [n("Cast", [acc], [f], to=T.FLOAT),
                       n("Mul", [s, ws], [p]),
                       n("Mul", [f, p], [m if bias else y])]
        if bias:
            self.nodes.append(n("Add", [m, bias], [y]))
        return y

    def dyn_conv(self, x, cin, cout, k, stride=1, group=1, relu=True,
                 dq=None, dilation=1, signed=False):
        w = (rng.standard_normal((cout, cin // group, k, k)) /
             np.sqrt(cin // group * k * k)).astype(np.float32)
        q, s, z = qweight(w, 0, signed)
        if signed:  # per channel: scales [C, 1, 1] broadcast over axis 1
            s = s.reshape(cout, 1, 1)
        wq, ws, wz = (self.init("w", q), self.init("ws", s),
                      self.init("wz", z))
        b = self.init("b", (rng.standard_normal(cout) * 0.1)
                      .astype(np.float32))
        shape = self.init("bshape", np.array([1, -1, 1, 1], np.int64))
        br = self.name("bias")
        xq, xs, xz = dq or self.dql(x)
        acc, y = self.name("acc"), self.name("conv")
        self.nodes += [
            n("Reshape", [b, shape], [br]),
            n("ConvInteger", [xq, wq, xz, wz], [acc], strides=[stride] * 2,
              pads=[k // 2] * 4, group=group, dilations=[dilation] * 2)]
        self.scale_bias(acc, xs, ws, br, y)
        if relu:
            r = self.name("relu")
            self.nodes.append(n("Relu", [y], [r]))
            y = r
        return y

    def dyn_matmul(self, x, k, m, dq=None, signed=False):
        w = (rng.standard_normal((k, m)) / np.sqrt(k)).astype(np.float32)
        q, s, z = qweight(w, 1, signed)
        wq, ws = self.init("w", q), self.init("ws", s)
        wz = self.init("wz", z)
        b = self.init("b", (rng.standard_normal(m) * 0.05)
                      .astype(np.float32))
        xq, xs, xz = dq or self.dql(x)
        acc, y = self.name("acc"), self.name("mm")
        self.nodes.append(n("MatMulInteger", [xq, wq, xz, wz], [acc]))
        return self.scale_bias(acc, xs, ws, b, y)


def qdyn_cnn():
    t = Net()
    y = t.dyn_conv("x", 16, 32, 3)
    y = t.dyn_conv(y, 32, 32, 3, stride=2)
    y = t.dyn_conv(y, 32, 64, 1)
    y = t.dyn_conv(y, 64, 64, 3, group=2)
    y = t.dyn_conv(y, 64, 128, 3, stride=2)
    y = t.dyn_conv(y, 128, 128, 1)
    t.nodes += [n("GlobalAveragePool", [y], ["gap"]),
                n("Flatten", ["gap"], ["flat"])]
    t.dyn_matmul("flat", 128, 10)
    t.nodes[-1].output[0] = "logits"
    save("qdyn_cnn", t.nodes, [("x", [1, 16, 112, 112])], ["logits"],
         t.inits)


def layernorm(t, x, d):
    g = t.init("ln_g", (1 + rng.standard_normal(d) * 0.1).astype(np.float32))
    b = t.init("ln_b", (rng.standard_normal(d) * 0.1).astype(np.float32))
    y = t.name("ln")
    t.nodes.append(n("LayerNormalization", [x, g, b], [y], axis=-1,
                     epsilon=1e-5))
    return y


def qdyn_enc():
    t, d, heads, ff, seq = Net(), 256, 4, 1024, 128
    dh = d // heads
    dq = t.dql("x")
    proj = [t.dyn_matmul("x", d, d, dq, signed=True) for _ in range(3)]
    split = t.init("heads", np.array([1, seq, heads, dh], np.int64))
    hq, hk, hv = [], [], []
    for p, out, perm in zip(proj, (hq, hk, hv),
                            ([0, 2, 1, 3], [0, 2, 3, 1], [0, 2, 1, 3])):
        r, tr = t.name("r"), t.name("t")
        t.nodes += [n("Reshape", [p, split], [r]),
                    n("Transpose", [r], [tr], perm=perm)]
        out.append(tr)
    scale = t.init("scale", np.array(1 / np.sqrt(dh), np.float32))
    merged = t.init("merged", np.array([1, seq, d], np.int64))
    t.nodes += [
        n("MatMul", [hq[0], hk[0]], ["qk"]),
        n("Mul", ["qk", scale], ["qk_s"]),
        n("Softmax", ["qk_s"], ["attn"], axis=-1),
        n("MatMul", ["attn", hv[0]], ["ctx"]),
        n("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
        n("Reshape", ["ctx_t", merged], ["ctx_m"])]
    o = t.dyn_matmul("ctx_m", d, d, signed=True)
    t.nodes.append(n("Add", ["x", o], ["res1"]))
    y1 = layernorm(t, "res1", d)
    f1 = t.dyn_matmul(y1, d, ff, signed=True)
    c = [t.init(k, np.array(v, np.float32))
         for k, v in (("sqrt2", np.sqrt(2)), ("one", 1), ("half", 0.5))]
    t.nodes += [n("Div", [f1, c[0]], ["g_d"]), n("Erf", ["g_d"], ["g_e"]),
                n("Add", ["g_e", c[1]], ["g_a"]),
                n("Mul", [f1, "g_a"], ["g_m"]),
                n("Mul", ["g_m", c[2]], ["gelu"])]
    f2 = t.dyn_matmul("gelu", ff, d, signed=True)
    t.nodes.append(n("Add", [y1, f2], ["res2"]))
    y = layernorm(t, "res2", d)
    t.nodes[-1].output[0] = "y"
    save("qdyn_enc", t.nodes, [("x", [1, seq, d])], ["y"], t.inits)


def qdq(t, x, s, z):
    q, d = t.name("q"), t.name("dq")
    t.nodes += [n("QuantizeLinear", [x, s, z], [q]),
                n("DequantizeLinear", [q, s, z], [d])]
    return d


def qdq_conv(t, x, cin, cout, k, stride=1, group=1):
    w = (rng.standard_normal((cout, cin // group, k, k)) /
         np.sqrt(cin // group * k * k)).astype(np.float32)
    q, s, z = qweight(w, 0, True)
    wq, ws, wz = t.init("w", q), t.init("ws", s), t.init("wz", z)
    b = t.init("b", (rng.standard_normal(cout) * 0.1).astype(np.float32))
    wd, y, r = t.name("wdq"), t.name("conv"), t.name("relu")
    t.nodes += [n("DequantizeLinear", [wq, ws, wz], [wd], axis=0),
                n("Conv", [x, wd, b], [y], strides=[stride] * 2,
                  pads=[k // 2] * 4, group=group),
                n("Relu", [y], [r])]
    ys = t.init("as", np.array(0.02, np.float32))
    yz = t.init("az", np.array(0, np.uint8))
    return qdq(t, r, ys, yz)


def qdq_cnn():
    t = Net()
    xs = t.init("xs", np.array(2 / 255, np.float32))
    xz = t.init("xz", np.array(128, np.uint8))
    y = qdq(t, "x", xs, xz)
    for cin, cout, k, st, g in ((16, 32, 3, 1, 1), (32, 32, 3, 2, 1),
                                (32, 64, 1, 1, 1), (64, 64, 3, 1, 2),
                                (64, 128, 3, 2, 1), (128, 128, 1, 1, 1)):
        y = qdq_conv(t, y, cin, cout, k, st, g)
    t.nodes += [n("GlobalAveragePool", [y], ["gap"]),
                n("Flatten", ["gap"], ["logits"])]
    save("qdq_cnn", t.nodes, [("x", [1, 16, 112, 112])], ["logits"],
         t.inits, opset=13)


qdyn_cnn()
qdyn_enc()
qdq_cnn()


def quant_fused():
    """The chains passes/qfuse.c fuses and the fast kernel's edges, each
    output one fused op's (tests/test_quant.c): a MatMul of K 50 and N 37
    (neither a multiple of the kernel's 4 and 16) on 3-D x, uint8 W with
    a zero point, the Mul and Add operands swapped; int8 W with
    per-column scales and zero points, no bias; one DynamicQuantizeLinear
    feeding both; convolutions: 3x3 padded with the bias reshaped, int8
    W with per-channel scales ([C,1,1]) strided, 2 groups dilated, 1x1
    pointwise, the last three from one DynamicQuantizeLinear; 1-D; and a chain that must not fuse (its Cast's output is a graph
    output too)."""
    t = Net()
    f = np.float32
    dq = t.dql("x")
    w = t.init("w", rng.integers(0, 256, (50, 37)).astype(np.uint8))
    ws, wz = t.init("ws", np.array(0.01, f)), t.init("wz", np.array(
        131, np.uint8))
    b = t.init("b", rng.standard_normal(37).astype(f))
    t.nodes += [n("MatMulInteger", [dq[0], w, dq[2], wz], ["mm_i"]),
                n("Cast", ["mm_i"], ["mm_f"], to=T.FLOAT),
                n("Mul", [ws, dq[1]], ["mm_p"]),
                n("Mul", ["mm_p", "mm_f"], ["mm_m"]),
                n("Add", [b, "mm_m"], ["mm_u8"])]
    w2 = t.init("w2", rng.integers(-128, 128, (50, 40)).astype(np.int8))
    ws2 = t.init("ws2", np.linspace(0.005, 0.02, 40).astype(f))
    wz2 = t.init("wz2", rng.integers(-5, 5, 40).astype(np.int8))
    t.nodes += [n("MatMulInteger", [dq[0], w2, dq[2], wz2], ["mm2_i"]),
                n("Cast", ["mm2_i"], ["mm2_f"], to=T.FLOAT),
                n("Mul", [dq[1], ws2], ["mm2_p"]),
                n("Mul", ["mm2_f", "mm2_p"], ["mm_s8"])]
    # not fused: mm3_i is read by the Cast and is an output
    t.nodes += [n("MatMulInteger", [dq[0], w2, dq[2], wz2], ["mm3_i"]),
                n("Cast", ["mm3_i"], ["mm3_f"], to=T.FLOAT),
                n("Mul", ["mm3_f", "mm2_p"], ["mm_unfused"])]
    c = t.dyn_conv("xc", 16, 24, 3, relu=False)
    dqc = t.dql(c)
    convs = [c] + [t.dyn_conv(c, 24, co, k, stride=st, group=g, dilation=d,
                              relu=False, dq=dqc, signed=sg)
                   for co, k, st, g, d, sg in ((20, 3, 2, 1, 1, True),
                                               (32, 3, 1, 2, 2, False),
                                               (16, 1, 1, 1, 1, False))]
    wc = rng.standard_normal((16, 8, 5)).astype(f)
    q, s, z = qweight(wc, 0, True)
    t.inits.update({"w1d": q, "ws1d": s.reshape(16, 1), "wz1d": z})
    dq1 = t.dql("x1")
    t.nodes += [n("ConvInteger", [dq1[0], "w1d", dq1[2], "wz1d"], ["c1_i"],
                  pads=[2, 2]),
                n("Cast", ["c1_i"], ["c1_f"], to=T.FLOAT),
                n("Mul", [dq1[1], "ws1d"], ["c1_p"]),
                n("Mul", ["c1_f", "c1_p"], ["conv_1d"])]
    outs = ["mm_u8", "mm_s8", "mm_unfused", "mm3_i"] + convs + ["conv_1d"]
    save("quant_fused", t.nodes, [("x", [2, 7, 50]), ("xc", [1, 16, 30, 30]),
                                 ("x1", [2, 8, 40])], outs, t.inits)


quant_fused()


def quant_qdq():
    """The QDQ groups passes/qfuse.c rewrites into QLinear ops (and
    tests/test_quant.c's bit-exactness of the kernels running them,
    channels-last between the convolutions): x [1,8,20,20] quantized to
    uint8 (zero point 128), then Conv 3x3 (int8 W per channel, float
    bias) -> Relu -> QuantizeLinear uint8 at 0 (the Relu goes), Conv 3x3
    of 2 groups strided (uint8 W per tensor with a zero point, no bias)
    -> int8 at 3, Conv 1x1 (bias the DequantizeLinear of int32 at sx*sw)
    -> Relu -> int8 at -128 (the Relu goes), dequantized: y1; a MatMul
    (x2 [2,5,26], int8 W per column, axis 1) -> uint8 at 10: y2; and a
    group left as it is: Conv -> Relu -> uint8 at 5 (the Relu clamps
    below the zero point; its saturation does not): y3."""
    t = Net()
    f = np.float32
    c = {k: t.init(k, v) for k, v in (
        ("sx", np.array(0.01, f)), ("zx", np.array(128, np.uint8)),
        ("s1", np.array(0.03, f)), ("z1", np.array(0, np.uint8)),
        ("s2", np.array(0.05, f)), ("z2", np.array(3, np.int8)),
        ("s3", np.array(0.04, f)), ("z3", np.array(-128, np.int8)),
        ("sm", np.array(0.02, f)), ("zm", np.array(10, np.uint8)),
        ("s5", np.array(0.03, f)), ("z5", np.array(5, np.uint8)))}
    xd = qdq(t, "x", c["sx"], c["zx"])
    w1, ws1, wz1 = qweight(rng.standard_normal((12, 8, 3, 3)).astype(f) / 8,
                           0, True)
    w2 = rng.integers(0, 256, (16, 6, 3, 3)).astype(np.uint8)
    w3, ws3, _ = qweight(rng.standard_normal((10, 16, 1, 1)).astype(f) / 4,
                         0, True)
    ws3 = ws3.astype(f)
    bs = (np.float32(0.05) * ws3).astype(f)  # scale sx * sw, as float
    t.inits.update({
        "w1": w1, "ws1": ws1, "wz1": wz1,
        "b1": (rng.standard_normal(12) * 0.2).astype(f),
        "w2": w2, "ws2": np.array(0.004, f), "wz2": np.array(120, np.uint8),
        "w3": w3, "ws3": ws3,
        "b3": rng.integers(-300, 300, 10).astype(np.int32), "bs3": bs,
        "wm": qweight(rng.standard_normal((26, 16)).astype(f), 1, True)[0],
        "wms": qweight(rng.standard_normal((26, 16)).astype(f), 1,
                       True)[1]})
    t.nodes += [
        n("DequantizeLinear", ["w1", "ws1", "wz1"], ["w1d"], axis=0),
        n("Conv", [xd, "w1d", "b1"], ["c1"], pads=[1] * 4),
        n("Relu", ["c1"], ["r1"])]
    y = qdq(t, "r1", c["s1"], c["z1"])
    t.nodes += [
        n("DequantizeLinear", ["w2", "ws2", "wz2"], ["w2d"]),
        n("Conv", [y, "w2d"], ["c2"], pads=[1] * 4, strides=[2, 2],
          group=2)]
    y = qdq(t, "c2", c["s2"], c["z2"])
    t.nodes += [
        n("DequantizeLinear", ["w3", "ws3"], ["w3d"], axis=0),
        n("DequantizeLinear", ["b3", "bs3"], ["b3d"], axis=0),
        n("Conv", [y, "w3d", "b3d"], ["c3"]),
        n("Relu", ["c3"], ["r3"]),
        n("QuantizeLinear", ["r3", c["s3"], c["z3"]], ["q3"]),
        n("DequantizeLinear", ["q3", c["s3"], c["z3"]], ["y1"])]
    xm = qdq(t, "x2", c["sx"], c["zx"])
    t.nodes += [
        n("DequantizeLinear", ["wm", "wms"], ["wmd"], axis=1),
        n("MatMul", [xm, "wmd"], ["mm"]),
        n("QuantizeLinear", ["mm", c["sm"], c["zm"]], ["qm"]),
        n("DequantizeLinear", ["qm", c["sm"], c["zm"]], ["y2"]),
        n("DequantizeLinear", ["w1", "ws1", "wz1"], ["w5d"], axis=0),
        n("Conv", [xd, "w5d"], ["c5"], pads=[1] * 4),
        n("Relu", ["c5"], ["r5"]),
        n("QuantizeLinear", ["r5", c["s5"], c["z5"]], ["q5"]),
        n("DequantizeLinear", ["q5", c["s5"], c["z5"]], ["y3"])]
    save("quant_qdq", t.nodes, [("x", [1, 8, 20, 20]), ("x2", [2, 5, 26])],
         ["y1", "y2", "y3"], t.inits)


quant_qdq()


def quant_direct():
    """QLinearConv nodes runtime/quant.c computes straight from X padded
    channels last (no im2col), at that path's edges, each output
    dequantized: x [1,12,15,13] (NCHW, 12 channels: transposed without
    16 x 16 blocks) uint8 -> 3x5 kernel, pads 1/2, 20 channels (2 panels
    of 16 columns, one partial; rows of 13 pixels: a tile of 12 and one
    of 1), int8 W per channel, int32 bias -> uint8 -> stride 2,
    asymmetric pads, 72 channels (4 + 1 panels) -> int8 (X int8 next,
    flipped as it is padded) -> 3 groups of 24 in, 8 out, dilation 2,
    uint8 W at 128 -> uint8 -> 1x1 of stride 2 (one tap, not in place)
    -> y1; and x2 [1,8,3,200], rows of 200 pixels (more than a block's
    192), 3x3 padded, int8 Y at -5 -> y2; the same at Y's scale 1e-9,
    its products far beyond int32 (saturating, not wrapping) -> y3."""
    t = Net()
    f = np.float32
    i = t.init
    xs, xz = i("xs", np.array(0.02, f)), i("xz", np.array(128, np.uint8))

    def conv(x, xsn, xzn, cin, cout, k, ys, yz, group=1, wu8=False,
             bias=True, **at):
        w = rng.standard_normal((cout, cin // group) + k).astype(f)
        w /= np.sqrt(w[0].size)
        if wu8:
            q = rng.integers(0, 256, w.shape).astype(np.uint8)
            s, z = np.array(0.003, f), np.array(128, np.uint8)
        else:
            q, s, z = qweight(w, 0, True)
        args = [x, xsn, xzn, i("w", q), i("ws", s), i("wz", z),
                i("ys", np.array(ys, f)), i("yz", yz)]
        if bias:
            args.append(i("b", rng.integers(-2000, 2000, cout).astype(
                np.int32)))
        y = t.name("y")
        t.nodes.append(n("QLinearConv", args, [y], group=group, **at))
        return y, args[6], args[7]

    q = t.name("q")
    t.nodes.append(n("QuantizeLinear", ["x", xs, xz], [q]))
    y = conv(q, xs, xz, 12, 20, (3, 5), 0.03, np.array(3, np.uint8),
             pads=[1, 2, 1, 2])
    y = conv(*y, 20, 72, (3, 3), 0.04, np.array(-5, np.int8),
             strides=[2, 2], pads=[0, 1, 2, 0])
    y = conv(*y, 72, 24, (3, 3), 0.1, np.array(7, np.uint8), group=3,
             wu8=True, bias=False, dilations=[2, 2], pads=[2, 2, 2, 2])
    y = conv(*y, 24, 16, (1, 1), 0.05, np.array(2, np.uint8),
             strides=[2, 2])
    t.nodes.append(n("DequantizeLinear", list(y), ["y1"]))
    q2 = t.name("q")
    t.nodes.append(n("QuantizeLinear", ["x2", xs, xz], [q2]))
    y = conv(q2, xs, xz, 8, 16, (3, 3), 0.02, np.array(-5, np.int8),
             pads=[1, 1, 1, 1])
    t.nodes.append(n("DequantizeLinear", list(y), ["y2"]))
    y = conv(q2, xs, xz, 8, 16, (3, 3), 1e-9, np.array(-5, np.int8),
             pads=[1, 1, 1, 1])
    t.nodes.append(n("DequantizeLinear", list(y), ["y3"]))
    save("quant_direct", t.nodes, [("x", [1, 12, 15, 13]),
                                   ("x2", [1, 8, 3, 200])],
         ["y1", "y2", "y3"], t.inits)


quant_direct()
