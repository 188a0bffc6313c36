#!/usr/bin/python3
"""tests/gen_fuse_misses.py - makes tests/fixtures/fuse/misses/*.onnx for
tests/test_fuse.c's near misses: for each fusion of passes/fuse.c and
passes/qfuse.c, a fusable model (FAMILY.onnx) and, for each precondition
of the rewrite, a model that differs from it in that precondition alone
(FAMILY_PRECONDITION.onnx).  The test compiles each with and without
--no-fuse, asks gearc dump whether the fusion was made, and compares
libgearrt's outputs of the two compiles on inputs in [-4, 4) (some with
infinities planted) that would show a wrong rewrite.  Inputs are static
and small; weights are fixed-seed random.  Run from the repository root:
    /usr/bin/python3 tests/gen_fuse_misses.py"""
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

OUT = "tests/fixtures/fuse/misses/"
F = T.FLOAT


def w(*shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def f32(v):
    return np.array(v, dtype=np.float32)


def save(name, nodes, inits, inputs, opset=13, outputs=("y",)):
    """inputs: {name: (dtype, shape)}; inits: {name: array}; the outputs'
    types from ONNX's shape inference."""
    ins = [h.make_tensor_value_info(k, dt, s) for k, (dt, s) in inputs.items()]
    g = h.make_graph(nodes, name, ins, [], [nh.from_array(np.asarray(v), k)
                                            for k, v in inits.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    known = onnx.shape_inference.infer_shapes(m).graph.value_info
    typed = {v.name: v for v in known}
    for o in outputs:
        g.output.append(typed[o] if o in typed else
                        h.make_tensor_value_info(o, F, None))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, OUT + name + ".onnx")


def n(op, ins, outs, **kw):
    """A node; one input or output may be given as a string."""
    return h.make_node(op, [ins] if isinstance(ins, str) else ins,
                       [outs] if isinstance(outs, str) else outs, **kw)


X4 = {"x": (F, [1, 4, 6, 6])}   # a Conv's input
XM = {"x": (F, [2, 6, 8])}      # a MatMul's


def conv(x="x", y="c", cin=4, cout=4, bias=True, scale=0.3, wname="cw"):
    """A 3x3 Conv, pads 1: its node and weights."""
    inits = {wname: w(cout, cin, 3, 3, scale=scale)}
    ins = [x, wname]
    if bias:
        inits[wname + "_b"] = w(cout)
        ins.append(wname + "_b")
    return n("Conv", ins, y, pads=[1, 1, 1, 1]), inits


def conv_model(name, tail, inits=None, inputs=None, opset=13, bias=True,
               outputs=("y",), scale=0.3, x=X4["x"]):
    """x -> Conv -> c, then the nodes of tail."""
    c, ci = conv(bias=bias, scale=scale)
    save(name, [c] + tail, {**ci, **(inits or {})},
         {"x": x, **(inputs or {})}, opset, outputs)


def matmul_model(name, tail, inits=None, inputs=None, opset=13,
                 outputs=("y",), xin=None, scale=0.3):
    """x [2, 6, 8] -> MatMul by a constant [8, 8] -> a, then tail."""
    save(name, [n("MatMul", ["x", "mw"], "a")] + tail,
         {"mw": w(8, 8, scale=scale), **(inits or {})},
         {**(xin or XM), **(inputs or {})}, opset, outputs)


# ---- 1. BatchNormalization folded into a Conv ----------------------------

rng = np.random.default_rng(4041)

C = 4


def bn_inits(var=None):
    return {"bs": w(C) + 1, "bb": w(C), "bm": w(C),
            "bv": f32(rng.random(C) + 0.5) if var is None else f32(var)}


def bn(ins=("c", "bs", "bb", "bm", "bv"), outs=("y",), **kw):
    return n("BatchNormalization", list(ins), list(outs), **kw)


conv_model("bn", [bn(epsilon=1e-3)], bn_inits())
conv_model("bn_training_mode",
           [bn(outs=("y", "rm", "rv"), epsilon=1e-3, training_mode=1)],
           bn_inits(), opset=14)
conv_model("bn_scale_input", [bn()], {k: v for k, v in bn_inits().items()
                                      if k != "bs"},
           {"bs": (F, [C])})
conv_model("bn_conv_read_twice", [bn()], bn_inits(), outputs=("y", "c"))
save("bn_weights_input", [n("Conv", ["x", "cw"], "c", pads=[1, 1, 1, 1]),
                          bn()], bn_inits(),
     {**X4, "cw": (F, [C, C, 3, 3])})
# a MatMul's output [1, 4, 8]: BatchNormalization's channels are its rows
matmul_model("bn_after_matmul", [bn(ins=("a", "bs", "bb", "bm", "bv"))],
             bn_inits(), xin={"x": (F, [1, 4, 8])})
# the training form (the batch's statistics), each opset's way: is_test
# absent (0) before opset 7, the running statistics asked for (unread)
conv_model("bn_is_test_0", [bn(epsilon=1e-3)], bn_inits(), opset=6)
conv_model("bn_stats_outputs",
           [bn(outs=("y", "rm", "rv", "sm", "sv"), epsilon=1e-3)],
           bn_inits(), opset=9)
# var + eps = 0 in channel 1: s = scale / 0
conv_model("bn_var_eps_zero", [bn(epsilon=0.25)],
           bn_inits(var=[0.5, -0.25, 1.0, 0.75]))

# ---- 2. Add, Sub, Mul, Div by a constant folded into a Conv --------------

rng = np.random.default_rng(4042)

K = w(1, C, 1, 1) + 1
conv_model("affine", [n("Mul", ["k", "c"], "y")], {"k": K})
conv_model("affine_per_pixel", [n("Mul", ["c", "k"], "y")],
           {"k": w(1, 1, 6, 6) + 1})
conv_model("affine_per_batch", [n("Mul", ["c", "k"], "y")],
           {"k": w(2, 1, 1, 1) + 1}, x=(F, [2, 4, 6, 6]))
# [C] broadcasts along the last axis (width 4), not the channels
conv_model("affine_last_axis", [n("Add", ["c", "k"], "y")], {"k": w(C)},
           x=(F, [1, 4, 6, 4]))
conv_model("affine_input", [n("Mul", ["c", "k"], "y")], {},
           {"k": (F, [1, C, 1, 1])})
conv_model("affine_k_over_x", [n("Div", ["k", "c"], "y")], {"k": K})
conv_model("affine_div_zero", [n("Div", ["c", "k"], "y")],
           {"k": f32([1, 2, 0, 3]).reshape(1, C, 1, 1)})
conv_model("affine_conv_read_twice", [n("Mul", ["c", "k"], "y")], {"k": K},
           outputs=("y", "c"))
# a Gemm's [3, 5]: [3, 1] is one value per row, not per output column
save("affine_gemm_rows",
     [n("Gemm", ["x", "gw", "gb"], "a", transB=1),
      n("Add", ["a", "k"], "y")],
     {"gw": w(5, 8), "gb": w(5), "k": w(3, 1)}, {"x": (F, [3, 8])})
# folded weights not finite: W * inf; W / 1e-39 overflows
conv_model("affine_mul_inf", [n("Mul", ["c", "k"], "y")],
           {"k": f32([1, np.inf, 2, 3]).reshape(1, C, 1, 1)})
conv_model("affine_div_denormal", [n("Div", ["c", "k"], "y")],
           {"k": f32([1, 1e-39, 2, 3]).reshape(1, C, 1, 1)})

# ---- 3. a residual Add: FusedConv's Z ------------------------------------

rng = np.random.default_rng(4043)

Z = {"z": (F, [1, C, 6, 6])}
conv_model("residual", [n("Add", ["c", "z"], "y")], inputs=Z)
conv_model("residual_broadcast", [n("Add", ["c", "z"], "y")],
           inputs={"z": (F, [1, C, 1, 1])})
conv_model("residual_grows_x", [n("Add", ["z", "c"], "y")],
           inputs={"z": (F, [2, C, 6, 6])})
conv_model("residual_conv_read_twice", [n("Add", ["c", "z"], "y")],
           inputs=Z, outputs=("y", "c"))
# after the activations (z_after), then another activation
conv_model("residual_after", [n("Relu", "c", "r"),
                              n("Add", ["z", "r"], "s"),
                              n("Relu", "s", "y")], inputs=Z)
# Linear(2) and Linear(3) merged into one Linear(6)
conv_model("linear_merge", [n("Relu", "c", "r"),
                            n("Mul", ["r", "two"], "m"),
                            n("Mul", ["m", "three"], "y")],
           {"two": f32(2), "three": f32(3)})
# Z added between Linear(2) and Linear(3): no one Linear(6)
conv_model("linear_merge_across_z", [n("Relu", "c", "r"),
                                     n("Mul", ["r", "two"], "m"),
                                     n("Add", ["m", "z"], "s"),
                                     n("Mul", ["s", "three"], "y")],
           {"two": f32(2), "three": f32(3)}, inputs=Z)
# Z the Conv's own input: FusedConv writes a buffer of its own
conv_model("residual_of_x", [n("Add", ["c", "x"], "y")])

# ---- 4. a MatMul's bias ----------------------------------------------------

rng = np.random.default_rng(4044)

matmul_model("bias", [n("Add", ["a", "b"], "y")], {"b": w(8)})
matmul_model("bias_per_row", [n("Add", ["a", "b"], "y")], {"b": w(6, 1)})
matmul_model("bias_input", [n("Add", ["a", "b"], "y")], {},
             {"b": (F, [8])})

# ---- 5. the activation ops, Clip's bounds ---------------------------------

rng = np.random.default_rng(4045)

conv_model("clip", [n("Clip", ["c", "lo", "hi"], "y")],
           {"lo": f32(-1), "hi": f32(2)})
conv_model("clip_bound_input", [n("Clip", ["c", "lo", "hi"], "y")],
           {"hi": f32(2)}, {"lo": (F, [])})
conv_model("relu_conv_read_twice", [n("Relu", "c", "y")],
           outputs=("y", "c"))
# min > max: Clip gives max everywhere
conv_model("clip_min_above_max", [n("Clip", ["c", "lo", "hi"], "y")],
           {"lo": f32(1), "hi": f32(-1)})
# no min: -inf stays -inf (the test plants infinities in x; a 1x1 Conv
# of positive weights passes them on)
save("clip_no_min", [n("Conv", ["x", "cw"], "c"),
                     n("Clip", ["c", "", "hi"], "y")],
     {"cw": f32(rng.random((4, 1, 1, 1)) + 0.5), "hi": f32(2)},
     {"x": (F, [1, 1, 6, 6])})
# Clip-1 (opset 5) without a min attribute has none either
save("clip_no_min_opset_5", [n("Conv", ["x", "cw"], "c"),
                             n("Clip", ["c"], "y", max=2.0)],
     {"cw": f32(rng.random((4, 1, 1, 1)) + 0.5)}, {"x": (F, [1, 1, 6, 6])},
     opset=5)
# float64: the fused ops are float32's
save("relu_float64", [n("Conv", ["x", "cw"], "c", pads=[1, 1, 1, 1]),
                      n("Relu", "c", "y")],
     {"cw": w(C, C, 3, 3).astype(np.float64)},
     {"x": (T.DOUBLE, [1, C, 6, 6])})

# ---- 6. Add, Sub, Mul, Div by a scalar: Linear ----------------------------

rng = np.random.default_rng(4046)

matmul_model("linear", [n("Div", ["a", "four"], "d"),
                        n("Sub", ["d", "one"], "y")],
             {"four": f32(4), "one": f32(1)})
matmul_model("linear_vector", [n("Mul", ["a", "k"], "y")], {"k": w(8)})
matmul_model("linear_k_over_x", [n("Div", ["four", "a"], "y")],
             {"four": f32(4)})
matmul_model("linear_k_minus_x", [n("Sub", ["four", "a"], "y")],
             {"four": f32(4)})
# 1 / 1e-39 is not a float; small weights keep a / 1e-39 finite
matmul_model("linear_div_denormal", [n("Div", ["a", "k"], "y")],
             {"k": f32(1e-39)}, scale=1e-3)
# (a + 1) * 1e30 * 1e30: merged into one Linear, m and b overflow
matmul_model("linear_merge_overflow", [n("Add", ["a", "one"], "p"),
                                       n("Mul", ["p", "big"], "q"),
                                       n("Mul", ["q", "big"], "y")],
             {"one": f32(1), "big": f32(1e30)})

# ---- 7. HardSwish and HardSigmoid written out -----------------------------

rng = np.random.default_rng(4047)


def hswish(x="c", three=3.0, lo=0.0, hi=6.0, six=6.0, mul_x=None):
    """x * Clip(x + three, lo, hi) / six."""
    return ([n("Add", [x, "three"], "a3"),
             n("Clip", ["a3", "lo", "hi"], "cl"),
             n("Mul", [mul_x or x, "cl"], "p"),
             n("Div", ["p", "six"], "y")],
            {"three": f32(three), "lo": f32(lo), "hi": f32(hi),
             "six": f32(six)})


conv_model("hswish", *hswish())
conv_model("hswish_offset", *hswish(three=3.5))
conv_model("hswish_clip_min", *hswish(lo=-1))
conv_model("hswish_clip_max", *hswish(hi=5))
conv_model("hswish_x_read_thrice", *hswish(), outputs=("y", "c"))
conv_model("hswish_clip_read_twice", *hswish(), outputs=("y", "cl"))
# x times a chain of another value of x's shape
conv_model("hswish_other_factor", *hswish(mul_x="x"))
t, i = hswish()
i["six"] = np.full((1, C, 1, 1), 6, np.float32)
conv_model("hswish_six_per_channel", t, i)
t, i = hswish()
i["three"] = np.full((1, 1, 1, 1, 1), 3, np.float32)
conv_model("hswish_rank_grows", t, i)


def hsig(lo=0.0, hi=1.0):
    """Clip(a * 0.25 + 0.4, lo, hi) after a MatMul."""
    return ([n("Mul", ["a", "al"], "m"), n("Add", ["m", "be"], "b"),
             n("Clip", ["b", "lo", "hi"], "y")],
            {"al": f32(0.25), "be": f32(0.4), "lo": f32(lo), "hi": f32(hi)})


matmul_model("hsig", *hsig())
matmul_model("hsig_clip_max", *hsig(hi=2))
matmul_model("hsig_clip_min", *hsig(lo=-0.5))
# constants within 1e-5 of HardSwish's 3 and HardSigmoid's 1 (s h = 1),
# not within float rounding
conv_model("hswish_offset_near", *hswish(three=3.00003))
matmul_model("hsig_clip_max_near", *hsig(hi=1.000005))
# Clip((a + 1) * 1e30 * 1e30, 0, 1): merged, m and b overflow
matmul_model("hsig_merge_overflow",
             [n("Add", ["a", "one"], "p"), n("Mul", ["p", "big"], "q"),
              n("Mul", ["q", "big"], "b"),
              n("Clip", ["b", "lo", "hi"], "y")],
             {"one": f32(1), "big": f32(1e30), "lo": f32(0), "hi": f32(1)})

# ---- 8. gated activations: GELU (erf, tanh), SiLU, Mish -------------------

rng = np.random.default_rng(4048)


def gelu(k=2 ** -0.5, one=1.0, half=0.5):
    """a * (1 + Erf(a * k)) * half"""
    return ([n("Mul", ["a", "k"], "d"), n("Erf", "d", "e"),
             n("Add", ["e", "one"], "e1"), n("Mul", ["a", "e1"], "p"),
             n("Mul", ["p", "half"], "y")],
            {"k": f32(k), "one": f32(one), "half": f32(half)})


matmul_model("gelu", *gelu())
matmul_model("gelu_no_half", *gelu(half=1))
matmul_model("gelu_plus_2", *gelu(one=2))
matmul_model("gelu_x_read_thrice", *gelu(), outputs=("y", "a"))


def gelu_tanh(c=0.044715, k=(2 / np.pi) ** 0.5, p=3.0):
    """a * (1 + Tanh(k * (a + c * a^p))) * 0.5"""
    return ([n("Pow", ["a", "p"], "a3"), n("Mul", ["a3", "c"], "ac"),
             n("Add", ["a", "ac"], "u"), n("Mul", ["u", "k"], "uk"),
             n("Tanh", "uk", "t"), n("Add", ["t", "one"], "t1"),
             n("Mul", ["a", "half"], "ah"), n("Mul", ["ah", "t1"], "y")],
            {"p": f32(p), "c": f32(c), "k": f32(k), "one": f32(1),
             "half": f32(0.5)})


matmul_model("gelu_tanh", *gelu_tanh())
matmul_model("gelu_tanh_cube_coeff", *gelu_tanh(c=0.04))
matmul_model("gelu_tanh_square", *gelu_tanh(p=2))

matmul_model("silu", [n("Sigmoid", "a", "s"), n("Mul", ["s", "a"], "y")])
matmul_model("silu_scaled", [n("Mul", ["a", "k"], "ak"),
                             n("Sigmoid", "ak", "s"),
                             n("Mul", ["s", "a"], "y")], {"k": f32(1.702)})
matmul_model("silu_other_factor", [n("Sigmoid", "a", "s"),
                                   n("Mul", ["s", "x"], "y")])


def mish(one=1.0):
    return ([n("Exp", "a", "e"), n("Add", ["one", "e"], "e1"),
             n("Log", "e1", "sp"), n("Tanh", "sp", "t"),
             n("Mul", ["a", "t"], "y")], {"one": f32(one)})


matmul_model("mish", *mish())
matmul_model("mish_plus_2", *mish(one=2))
# 1 / sqrt(2) and sqrt(2 / pi) to 4 and 5 digits: within 1e-5 of them,
# not within float rounding
matmul_model("gelu_rsqrt2_near", *gelu(k=0.7071))
matmul_model("gelu_tanh_sqrt_2_pi_near", *gelu_tanh(k=0.79788))

# ---- 9. LayerNorm written out ---------------------------------------------

rng = np.random.default_rng(4049)


def layernorm(axes=(-1,), axes2=None, keepdims=1, p=2.0, eps=1e-5,
              eps_inside=True, gamma=None, sub=("x", "m")):
    """(x - mean) / Sqrt(var + eps) * gamma + beta over x [2, 6, 8]."""
    ax2 = list(axes2 or axes)
    nodes = [n("ReduceMean", ["x"], "m", axes=list(axes), keepdims=keepdims),
             n("Sub", list(sub), "d"), n("Pow", ["d", "p"], "d2"),
             n("ReduceMean", ["d2"], "v", axes=ax2, keepdims=keepdims)]
    if eps_inside:
        nodes += [n("Add", ["v", "eps"], "ve"), n("Sqrt", "ve", "sd")]
    else:
        nodes += [n("Sqrt", "v", "sv"), n("Add", ["sv", "eps"], "sd")]
    nodes += [n("Div", ["d", "sd"], "q"), n("Mul", ["q", "gamma"], "g"),
              n("Add", ["g", "beta"], "y")]
    return nodes, {"p": f32(p), "eps": f32(eps),
                   "gamma": w(8) + 1 if gamma is None else gamma,
                   "beta": w(8)}


def ln_model(name, nodes_inits, outputs=("y",), x=None):
    save(name, *nodes_inits, x or XM, outputs=outputs)


ln_model("layernorm", layernorm())
ln_model("layernorm_eps_outside_sqrt", layernorm(eps_inside=False))
ln_model("layernorm_pow_3", layernorm(p=3))
ln_model("layernorm_axis_1", layernorm(axes=(1,)), x={"x": (F, [2, 8, 8])})
ln_model("layernorm_var_axis_1", layernorm(axes2=(1,)),
         x={"x": (F, [2, 8, 8])})
ln_model("layernorm_keepdims_0", layernorm(keepdims=0),
         x={"x": (F, [8, 8])})
ln_model("layernorm_eps_negative", layernorm(eps=-1e-5))
ln_model("layernorm_gamma_per_row", layernorm(gamma=w(6, 1) + 1))
ln_model("layernorm_mean_minus_x", layernorm(sub=("m", "x")))
ln_model("layernorm_d_read_thrice", layernorm(), outputs=("y", "d"))
t, i = layernorm()
save("layernorm_float64", t, {k: np.asarray(v, np.float64)
                              for k, v in i.items()},
     {"x": (T.DOUBLE, [2, 6, 8])})

# ---- 10. dynamic int8: DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul

rng = np.random.default_rng(4050)


def dynq(ws=None, bias=None, zero="xz", wconst=True):
    """x [2, 6, 8] quantized, times constant int8 [8, 5] W, scaled, biased"""
    nodes = [n("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
             n("MatMulInteger", ["xq", "wq", zero], "i"),
             n("Cast", ["i"], "f", to=F),
             n("Mul", ["xs", "ws"], "p"), n("Mul", ["f", "p"], "m"),
             n("Add", ["m", "bias"], "y")]
    inits = {"ws": f32(rng.random(5) * 0.01 + 0.001) if ws is None else ws,
             "bias": w(5) if bias is None else bias,
             "zc": np.array(128, np.uint8)}
    if wconst:
        inits["wq"] = rng.integers(-100, 100, (8, 5)).astype(np.int8)
    return nodes, inits


def dynq_model(name, nodes_inits, inputs=None, outputs=("y",)):
    save(name, *nodes_inits, {**XM, **(inputs or {})}, outputs=outputs)


dynq_model("dynq", dynq())
dynq_model("dynq_scale_per_row", dynq(ws=f32(rng.random((6, 1)) * 0.01)))
dynq_model("dynq_bias_per_row", dynq(bias=w(6, 1)))
dynq_model("dynq_other_zero_point", dynq(zero="zc"))
dynq_model("dynq_weights_input", dynq(wconst=False),
           {"wq": (T.INT8, [8, 5])})
dynq_model("dynq_cast_read_twice", dynq(), outputs=("y", "f"))

# ---- 11. QDQ groups into QLinearConv -------------------------------------

rng = np.random.default_rng(4051)


def qdq(w_axis=0, sw=None, sx=None, relu=False, bias_scale=None):
    """DequantizeLinear(x_q), DequantizeLinear(W_q), Conv [+ bias], [Relu],
    QuantizeLinear, of x_q uint8 [1, 4, 6, 6]"""
    wq = rng.integers(-100, 100, (8, 4, 3, 3)).astype(np.int8)
    sw = f32(rng.random(8) * 0.01 + 0.005) if sw is None else sw
    nodes = [n("DequantizeLinear", ["xq", "sx", "zx"], "xf"),
             n("DequantizeLinear", ["wq", "sw", "zw"], "wf", axis=w_axis),
             n("DequantizeLinear", ["bq", "sb"], "bf", axis=0),
             n("Conv", ["xf", "wf", "bf"], "u", pads=[1, 1, 1, 1])]
    sx = f32(0.02) if sx is None else sx
    sb = (sx * sw).astype(np.float32) if bias_scale is None else bias_scale
    if relu:
        nodes.append(n("Relu", "u", "r"))
    nodes.append(n("QuantizeLinear", ["r" if relu else "u", "sy", "zy"], "y"))
    inits = {"sx": sx, "zx": np.full(sx.shape, 128, np.uint8), "wq": wq,
             "sw": sw,
             "zw": np.zeros(sw.shape, np.int8),
             "bq": rng.integers(-500, 500, 8).astype(np.int32), "sb": sb,
             "sy": f32(0.05), "zy": np.array(0, np.uint8)}
    return nodes, inits


def qdq_model(name, nodes_inits, outputs=("y",)):
    save(name, *nodes_inits, {"xq": (T.UINT8, [1, 4, 6, 6])},
         outputs=outputs)


qdq_model("qdq", qdq(relu=True))
# per-channel W scales along axis 1 (W's input channels, 4 of them)
qdq_model("qdq_w_scale_axis_1", qdq(w_axis=1, sw=f32(rng.random(4) * 0.01
                                                     + 0.005),
                                    bias_scale=f32(np.full(8, 1e-4))))
qdq_model("qdq_x_scale_per_channel", qdq(sx=f32([0.02, 0.03, 0.02, 0.01]),
                                         bias_scale=f32(np.full(8, 1e-4))))
qdq_model("qdq_bias_scale", qdq(bias_scale=f32(rng.random(8) * 1e-4)))
qdq_model("qdq_conv_read_twice", qdq(), outputs=("y", "u"))

# ---- 12. before opset 7: input 1 broadcasts from 'axis' --------------------

rng = np.random.default_rng(4052)

# K [4, 1, 1] from axis 0 scales the batch (of 4), not the channels
conv_model("affine_legacy_axis_0",
           [n("Mul", ["c", "k"], "y", broadcast=1, axis=0)],
           {"k": w(4, 1, 1) + 1}, x=(F, [4, C, 6, 6]), opset=6)
# b [8] from axis 1 is one value per row of a [2, 8, 8], not per column
matmul_model("bias_legacy_axis_1",
             [n("Add", ["a", "b"], "y", broadcast=1, axis=1)], {"b": w(8)},
             xin={"x": (F, [2, 8, 8])}, opset=6)
# gamma [8] from axis 1: per row
t, i = layernorm()
for node in t:
    if node.op_type in ("Sub", "Div", "Add", "Mul", "Pow"):
        node.attribute.append(h.make_attribute("broadcast", 1))
    if node.output[0] == "g":
        node.attribute.append(h.make_attribute("axis", 1))
save("layernorm_legacy_gamma_axis_1", t, i, {"x": (F, [2, 8, 8])}, opset=6)
