#!/usr/bin/python3
"""tests/gen_contrib_models.py - makes the fixtures of tests/test_contrib.c:
small models of ONNX Runtime's contrib ops (domain com.microsoft, and
SimplifiedLayerNormalization, which ONNX Runtime registers in the default
domain), each with several attribute and shape variants as nodes of one
graph, and their inputs, into tests/fixtures/contrib/:

  CASE.onnx         the model (several cases may share one: MODEL below)
  CASE.inK.npy      input K (numpy, fixed seed; NaN, Inf and -0 where
                    they mean something)
  CASE.outK.npy     output K as ONNX Runtime computes it: written by
                    tests/gen_contrib_expected.mjs (node and
                    onnxruntime-node), or here for an op ONNX Runtime's
                    CPU provider lacks (BiasAdd: numpy's)
  cases.txt         one line per case: CASE MODEL TOL ORACLE [gearc flags]
                    TOL f (floats: rtol 1e-4, atol 1e-5), q (8-bit
                    integers: within 1, where ONNX Runtime's vector
                    kernels round a float computed in another order),
                    l (floats of an int8 graph: relative L2 error at
                    most 0.05, issue 40's rule), e (exact); ORACLE ort
                    or numpy

Run from the repository root with /usr/bin/python3, then
  node tests/gen_contrib_expected.mjs
(make check reads the committed files and needs neither)."""
import os

import numpy as np

import gen_contrib_real
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

DIR = "tests/fixtures/contrib"
MS = "com.microsoft"
rng = np.random.default_rng(4040)
CASES = []

NP2T = {np.dtype(np.float32): T.FLOAT, np.dtype(np.float16): T.FLOAT16,
        np.dtype(np.int32): T.INT32, np.dtype(np.int64): T.INT64,
        np.dtype(np.uint8): T.UINT8, np.dtype(np.int8): T.INT8,
        np.dtype(np.float64): T.DOUBLE}


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def u8(*shape):
    return rng.integers(0, 256, shape).astype(np.uint8)


def s8(*shape):
    return rng.integers(-128, 128, shape).astype(np.int8)


def edges(x):
    """x with NaN, +-Inf, -0 and large values in its first elements."""
    f = x.reshape(-1)
    special = [np.nan, np.inf, -np.inf, -0.0, 0.0, 30.0, -30.0, 1e-30]
    f[:min(len(f), len(special))] = special[:len(f)]
    return x


def model(name, nodes, inputs, outputs, inits=None, dims=None, opset=17,
          ms=True):
    """Saves DIR/name.onnx: inputs a dict name -> array (its dtype and
    shape; dims[name] overrides the declared shape, e.g. symbolic dims),
    outputs a list of names (types left to inference), inits a dict
    name -> array of initializers."""
    dims = dims or {}
    ins = [h.make_tensor_value_info(k, NP2T[v.dtype], dims.get(k, v.shape))
           for k, v in inputs.items()]
    outs = [onnx.ValueInfoProto(name=o) for o in outputs]
    g = h.make_graph(nodes, name, ins, outs,
                     [nh.from_array(v, k) for k, v in (inits or {}).items()])
    ops = [h.make_opsetid("", opset)]
    if ms:
        ops.append(h.make_opsetid(MS, 1))
    m = h.make_model(g, opset_imports=ops, producer_name="gen_contrib_models")
    m.ir_version = 8
    onnx.save(m, "%s/%s.onnx" % (DIR, name))


def case(name, inputs, tol="f", oracle="ort", flags=(), model_name=None,
         expected=None):
    """Records a case: its inputs (dict, in the model's input order) as
    CASE.inK.npy; expected (a list of arrays) as CASE.outK.npy when the
    oracle is numpy."""
    for k, v in enumerate(inputs.values()):
        np.save("%s/%s.in%d.npy" % (DIR, name, k), v)
    for k, v in enumerate(expected or []):
        np.save("%s/%s.out%d.npy" % (DIR, name, k), v)
    CASES.append(" ".join([name, model_name or name, tol, oracle] +
                          list(flags)))


def simple(name, nodes, inputs, outputs, inits=None, tol="f", **kw):
    model(name, nodes, inputs, outputs, inits, **kw)
    case(name, inputs, tol)


def node(op, ins, outs, **attrs):
    return h.make_node(op, ins, outs, domain=MS, **attrs)


# ---- the GELU family, BiasAdd ----------------------------------------------

def gen_gelu():
    x = edges(f32(2, 3, 8, scale=3))
    b = f32(8)
    simple("gelu", [
        node("Gelu", ["x"], ["gelu"]),
        node("FastGelu", ["x"], ["fast"]),
        node("FastGelu", ["x", "b"], ["fast_bias"]),
        node("BiasGelu", ["x", "b"], ["bias_gelu"]),
        node("QuickGelu", ["x"], ["quick"]),
        node("QuickGelu", ["x"], ["quick_1"], alpha=1.0),
    ], {"x": x, "b": b},
        ["gelu", "fast", "fast_bias", "bias_gelu", "quick", "quick_1"])
    # a tensor of no elements
    simple("gelu_empty", [node("Gelu", ["x"], ["y"]),
                          node("FastGelu", ["x", "b"], ["z"])],
           {"x": np.zeros((2, 0, 4), np.float32), "b": f32(4)}, ["y", "z"])


def gen_bias_add():
    x, b, s = f32(2, 5, 8), f32(8), f32(2, 5, 8)
    model("bias_add", [node("BiasAdd", ["x", "b", "s"], ["y"])],
          {"x": x, "b": b, "s": s}, ["y"])
    # ONNX Runtime's CPU provider has no BiasAdd: numpy is the oracle
    case("bias_add", {"x": x, "b": b, "s": s}, oracle="numpy",
         expected=[x + b + s])


# ---- normalizations --------------------------------------------------------

def gen_skip_norm():
    x, s, g, be, bi = f32(2, 4, 16), f32(2, 4, 16), f32(16), f32(16), f32(16)
    x[0, 1] *= 1e-3  # a row of small variance: epsilon matters
    s[0, 1] *= 1e-3
    simple("skip_ln", [
        node("SkipLayerNormalization", ["x", "s", "g", "be", "bi"],
             ["y", "mean", "inv", "sum"], epsilon=1e-5),
        node("SkipLayerNormalization", ["x", "s", "g"], ["y_min"]),
        node("SkipLayerNormalization", ["x", "s2", "g", "be"],
             ["y_2d", "", "", "sum_2d"], epsilon=1e-6),
        node("SkipLayerNormalization", ["x", "s1", "g", "", "bi"],
             ["y_1"], epsilon=1e-5),
        node("SkipSimplifiedLayerNormalization", ["x", "s", "g", "bi"],
             ["r", "r_mean", "r_inv", "r_sum"], epsilon=1e-5),
        node("SkipSimplifiedLayerNormalization", ["x", "s2", "g"],
             ["r_min"]),
    ], {"x": x, "s": s, "g": g, "be": be, "bi": bi, "s2": f32(4, 16),
        "s1": f32(1, 4, 16)},
        ["y", "mean", "inv", "sum", "y_min", "y_2d", "sum_2d", "y_1", "r",
         "r_mean", "r_inv", "r_sum", "r_min"])
    # 2-D input, NaN in a row (it stays in that row)
    x2 = f32(6, 8)
    x2[2, 3] = np.nan
    simple("skip_ln_2d", [
        node("SkipLayerNormalization", ["x", "s", "g", "be"], ["y"],
             epsilon=1e-5),
        node("SkipSimplifiedLayerNormalization", ["x", "s", "g"], ["r"],
             epsilon=1e-5),
    ], {"x": x2, "s": f32(6, 8), "g": f32(8), "be": f32(8)}, ["y", "r"])


def gen_rms_norm():
    x = f32(2, 3, 8)
    x[1, 2] *= 1e-3
    simple("rms_norm", [
        h.make_node("SimplifiedLayerNormalization", ["x", "g"], ["y", "inv"],
                    epsilon=1e-5),
        h.make_node("SimplifiedLayerNormalization", ["x", "g"], ["y_def"]),
        h.make_node("SimplifiedLayerNormalization", ["x", "g2"], ["y_ax1",
                    "inv_ax1"], axis=1, epsilon=1e-6),
    ], {"x": x, "g": f32(8), "g2": f32(3, 8)},
        ["y", "inv", "y_def", "y_ax1", "inv_ax1"])


# ---- matrix products ---------------------------------------------------------

def gen_fused_matmul():
    simple("fused_matmul", [
        node("FusedMatMul", ["a", "b"], ["plain"]),
        node("FusedMatMul", ["a", "bt"], ["tb"], transB=1, alpha=0.5),
        node("FusedMatMul", ["at", "b"], ["ta"], transA=1, alpha=-2.0),
        node("FusedMatMul", ["at", "bt"], ["tab"], transA=1, transB=1),
        node("FusedMatMul", ["a", "b2"], ["bcast"], alpha=0.25),
        node("FusedMatMul", ["a", "v"], ["vec"]),
        node("FusedMatMul", ["abat", "b"], ["tba"], transBatchA=1),
        node("FusedMatMul", ["a", "bbat"], ["tbb"], transBatchB=1,
             transB=1),
    ], {"a": f32(2, 3, 4, 5), "b": f32(2, 3, 5, 6), "bt": f32(2, 3, 6, 5),
        "at": f32(2, 3, 5, 4), "b2": f32(5, 6), "v": f32(5),
        "abat": f32(4, 2, 3, 5), "bbat": f32(6, 2, 3, 5)},
        ["plain", "tb", "ta", "tab", "bcast", "vec", "tba", "tbb"])


def gen_fused_conv_gemm():
    x, w, b = f32(1, 3, 7, 7), f32(4, 3, 3, 3), f32(4)
    z = f32(1, 4, 7, 7)
    simple("fused_conv", [
        node("FusedConv", ["x", "w", "b"], ["relu"], activation="Relu",
             pads=[1, 1, 1, 1]),
        node("FusedConv", ["x", "w", "b", "z"], ["leaky_z"],
             activation="LeakyRelu", activation_params=[0.2],
             pads=[1, 1, 1, 1]),
        node("FusedConv", ["x", "w"], ["clip"], activation="Clip",
             activation_params=[-0.5, 0.5], strides=[2, 2]),
        node("FusedConv", ["x", "w", "b"], ["hsig"],
             activation="HardSigmoid", activation_params=[0.3, 0.4],
             dilations=[2, 2]),
        node("FusedConv", ["x", "w", "b"], ["none"]),
        node("FusedConv", ["x", "w", "b"], ["tanh"], activation="Tanh",
             pads=[0, 1, 1, 0]),
    ], {"x": x, "z": z}, ["relu", "leaky_z", "clip", "hsig", "none", "tanh"],
        inits={"w": w, "b": b})
    a, bb, c = f32(3, 5), f32(5, 4), f32(4)
    simple("fused_gemm", [
        node("FusedGemm", ["a", "b", "c"], ["leaky"], activation="LeakyRelu",
             activation_alpha=0.1),
        node("FusedGemm", ["at", "bt"], ["relu_t"], activation="Relu",
             transA=1, transB=1, alpha=0.5),
        node("FusedGemm", ["a", "b", "c2"], ["hsig"],
             activation="HardSigmoid", activation_alpha=0.25,
             activation_beta=0.4, beta=2.0),
        node("FusedGemm", ["a", "b"], ["sig"], activation="Sigmoid"),
    ], {"a": a, "at": f32(5, 3), "c2": f32(3, 4)},
        ["leaky", "relu_t", "hsig", "sig"],
        inits={"b": bb, "bt": f32(4, 5), "c": c})


# ---- quantized ops -----------------------------------------------------------

def sc(v):
    return np.array(v, np.float32)


def zp(v, dt):
    return np.array(v, dt)


def gen_qlinear_binary():
    for op in ("Add", "Mul"):
        q = "QLinear" + op
        a, b = u8(2, 3, 8), u8(8)
        ai, bi = s8(2, 3, 8), s8(1)
        mul = op == "Mul"
        simple("qlinear_" + op.lower(), [
            node(q, ["a", "as", "az", "b", "bs", "bz", "cs", "cz"], ["u8"]),
            node(q, ["ai", "as", "aiz", "bi", "bs", "biz", "cs2", "ciz"],
                 ["i8"]),
            node(q, ["b", "bs", "bz", "a", "as", "az", "cs", "cz"],
                 ["swap"]),
            node(q, ["a", "as", "az", "a", "as2", "az2", "cs3", "cz"],
                 ["sat"]),
        ], {"a": a, "b": b, "ai": ai, "bi": bi}, ["u8", "i8", "swap", "sat"],
            inits={"as": sc(0.02), "az": zp(120, np.uint8),
                   "bs": sc(0.05), "bz": zp(100, np.uint8),
                   "cs": sc(0.2 if mul else 0.04), "cz": zp(128, np.uint8),
                   "aiz": zp(-3, np.int8), "biz": zp(0, np.int8),
                   "cs2": sc(0.1 if mul else 0.03),
                   "ciz": zp(5, np.int8), "as2": sc(0.03),
                   "az2": zp(10, np.uint8),
                   "cs3": sc(0.01 if mul else 0.005)}, tol="q")


def gen_qlinear_unary():
    x, xi = u8(2, 64), s8(2, 64)
    x[0, :5] = [0, 1, 127, 128, 255]
    simple("qlinear_unary", [
        node("QLinearSigmoid", ["x", "xs", "xz", "ys", "yz"], ["sig"]),
        node("QLinearSigmoid", ["xi", "xs", "xiz", "ys2", "yiz"], ["sig_i8"]),
        node("QLinearLeakyRelu", ["x", "xs", "xz", "xs", "xz"], ["leaky"],
             alpha=0.1),
        node("QLinearLeakyRelu", ["xi", "xs", "", "ys3", ""], ["leaky_i8"]),
    ], {"x": x, "xi": xi}, ["sig", "sig_i8", "leaky", "leaky_i8"],
        inits={"xs": sc(0.05), "xz": zp(128, np.uint8), "ys": sc(1 / 256),
               "yz": zp(0, np.uint8), "xiz": zp(3, np.int8),
               "ys2": sc(1 / 255), "yiz": zp(-128, np.int8),
               "ys3": sc(0.02)}, tol="q")


def gen_qlinear_concat():
    simple("qlinear_concat", [
        node("QLinearConcat", ["ys", "yz", "a", "as", "az", "b", "bs", "bz",
                               "c", "ys", "yz"], ["y"], axis=1),
        node("QLinearConcat", ["ys2", "yiz", "ai", "as", "aiz", "bi", "bs",
                               "biz"], ["yi"], axis=-1),
    ], {"a": u8(2, 3, 4), "b": u8(2, 1, 4), "c": u8(2, 2, 4),
        "ai": s8(2, 3), "bi": s8(2, 5)}, ["y", "yi"],
        inits={"ys": sc(0.05), "yz": zp(128, np.uint8), "as": sc(0.02),
               "az": zp(100, np.uint8), "bs": sc(0.1),
               "bz": zp(30, np.uint8), "ys2": sc(0.04),
               "yiz": zp(-10, np.int8), "aiz": zp(0, np.int8),
               "biz": zp(7, np.int8)}, tol="q")


def gen_qlinear_pool():
    simple("qlinear_gap", [
        node("QLinearGlobalAveragePool", ["x", "xs", "xz", "ys", "yz"],
             ["nchw"]),
        node("QLinearGlobalAveragePool", ["xi", "xs", "xiz", "ys", "yiz"],
             ["nhwc"], channels_last=1),
    ], {"x": u8(2, 3, 5, 5), "xi": s8(2, 4, 4, 3)}, ["nchw", "nhwc"],
        inits={"xs": sc(0.05), "xz": zp(120, np.uint8), "ys": sc(0.01),
               "yz": zp(128, np.uint8), "xiz": zp(-5, np.int8),
               "yiz": zp(3, np.int8)}, tol="q")
    simple("qlinear_avgpool", [
        node("QLinearAveragePool", ["x", "xs", "xz", "ys", "yz"], ["k3"],
             kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        node("QLinearAveragePool", ["x", "xs", "xz", "ys", "yz"], ["incl"],
             kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
             count_include_pad=1),
        node("QLinearAveragePool", ["x", "xs", "xz", "ys", "yz"], ["ceil"],
             kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
        node("QLinearAveragePool", ["xi", "xs", "xiz", "ys2", "yiz"],
             ["nhwc"], kernel_shape=[2, 2], channels_last=1),
    ], {"x": u8(1, 3, 7, 7), "xi": s8(1, 5, 5, 2)},
        ["k3", "incl", "ceil", "nhwc"],
        inits={"xs": sc(0.05), "xz": zp(120, np.uint8), "ys": sc(0.03),
               "yz": zp(100, np.uint8), "xiz": zp(-5, np.int8),
               "ys2": sc(0.05), "yiz": zp(3, np.int8)}, tol="q")


def gen_qlinear_softmax():
    x, xi = u8(2, 3, 10), s8(2, 3, 10)
    simple("qlinear_softmax", [
        node("QLinearSoftmax", ["x", "xs", "xz", "ys", "yz"], ["last"],
             opset=13),
        node("QLinearSoftmax", ["x", "xs", "xz", "ys", "yz"], ["axis1"],
             opset=13, axis=1),
        node("QLinearSoftmax", ["x", "xs2", "", "ys", "yz"], ["coerce"],
             opset=12, axis=1),
        node("QLinearSoftmax", ["xi", "xs", "xiz", "ys", "yiz"], ["i8"],
             opset=13),
    ], {"x": x, "xi": xi}, ["last", "axis1", "coerce", "i8"],
        inits={"xs": sc(0.02), "xz": zp(128, np.uint8), "xs2": sc(0.01),
               "ys": sc(1 / 256), "yz": zp(0, np.uint8),
               "xiz": zp(0, np.int8), "yiz": zp(-128, np.int8)}, tol="q")


def gen_qgemm():
    a, b = u8(4, 16), u8(16, 6)
    simple("qgemm", [
        node("QGemm", ["a", "as", "az", "b", "bs", "bz", "c", "ys", "yz"],
             ["q"]),
        node("QGemm", ["a", "as", "az", "bt", "bs", "bz", "", "", ""],
             ["f"], transB=1, alpha=0.5),
        node("QGemm", ["ai", "as", "aiz", "bi", "bsc", "bizc", "c2", "ys",
                       "yiz"], ["i8"]),
        node("QGemm", ["at", "as", "az", "bi", "bsc", "bizc", "c"], ["t"],
             transA=1),
    ], {"a": a, "ai": s8(4, 16), "at": u8(16, 4)}, ["q", "f", "i8", "t"],
        inits={"b": b, "bt": u8(6, 16), "bi": s8(16, 6), "as": sc(0.02),
               "az": zp(120, np.uint8), "bs": sc(0.01),
               "bz": zp(128, np.uint8), "ys": sc(0.5),
               "yz": zp(100, np.uint8),
               "c": rng.integers(-500, 500, 6).astype(np.int32),
               "c2": rng.integers(-500, 500, (4, 6)).astype(np.int32),
               "aiz": zp(2, np.int8),
               "bsc": (rng.random(6) * 0.02 + 0.005).astype(np.float32),
               "bizc": np.zeros(6, np.int8), "yiz": zp(-4, np.int8)},
        tol="q")


def gen_int_matmul_float():
    simple("dynquant_matmul", [
        node("DynamicQuantizeMatMul", ["a", "b", "bs", "bz", "bias"], ["u8"]),
        node("DynamicQuantizeMatMul", ["a", "bi", "bsc"], ["i8"]),
        node("DynamicQuantizeMatMul", ["a2", "b", "bs", "bz"], ["d2"]),
    ], {"a": f32(2, 3, 16), "a2": f32(5, 16)}, ["u8", "i8", "d2"],
        inits={"b": u8(16, 6), "bs": sc(0.01), "bz": zp(128, np.uint8),
               "bias": f32(6), "bi": s8(16, 6),
               "bsc": (rng.random(6) * 0.02 + 0.005).astype(np.float32)})
    simple("matmul_int_float", [
        node("MatMulIntegerToFloat", ["a", "b", "as", "bs", "az", "bz",
                                      "bias"], ["full"]),
        node("MatMulIntegerToFloat", ["a", "bi", "as", "bsc"], ["min"]),
        node("MatMulIntegerToFloat", ["ai", "bi", "as", "bsc", "aiz", "biz"],
             ["i8"]),
    ], {"a": u8(2, 3, 16), "ai": s8(3, 16)}, ["full", "min", "i8"],
        inits={"b": u8(16, 6), "as": sc(0.02), "bs": sc(0.01),
               "az": zp(120, np.uint8), "bz": zp(128, np.uint8),
               "bias": f32(6), "bi": s8(16, 6),
               "bsc": (rng.random(6) * 0.02 + 0.005).astype(np.float32),
               "aiz": zp(1, np.int8), "biz": np.zeros(6, np.int8)})


# ---- transformer ops ---------------------------------------------------------

def i32(a):
    return np.array(a, np.int32)


def gen_attention():
    B, S, D, N, P = 2, 4, 8, 2, 3
    x = f32(B, S, D)
    w, w2, bias = f32(D, 3 * D, scale=0.5), f32(D, 20, scale=0.5), f32(3 * D)
    simple("attention", [
        # (ONNX Runtime 1.31's CPU kernel crashes without a bias)
        node("Attention", ["x", "w", "bias"], ["plain"], num_heads=N),
        node("Attention", ["x", "w", "bias", "m_end"], ["end"], num_heads=N),
        node("Attention", ["x", "w", "bias", "m_2b"], ["end_start"],
             num_heads=N),
        node("Attention", ["x", "w", "bias", "m_raw"], ["raw"], num_heads=N,
             mask_filter_value=-1e4),
        node("Attention", ["x", "w", "bias", "m_3d"], ["raw3"], num_heads=N),
        node("Attention", ["x", "w", "bias"], ["causal"], num_heads=N,
             unidirectional=1, scale=0.3),
        node("Attention", ["x", "w", "bias", "m_past", "past"],
             ["with_past", "present"], num_heads=N, unidirectional=1),
        node("Attention", ["x", "w", "bias", "", "", "abias"],
             ["with_abias"], num_heads=N),
        node("Attention", ["x", "w2", "bias2", "m_end", "", "abias2"],
             ["qkv"],
             num_heads=N, qkv_hidden_sizes=[8, 8, 4]),
    ], {"x": x, "past": f32(2, B, N, P, D // N)},
        ["plain", "end", "end_start", "raw", "raw3", "causal", "with_past",
         "present", "with_abias", "qkv"],
        inits={"w": w, "w2": w2, "bias": bias, "bias2": f32(20),
               "m_end": i32([3, 1]),
               "m_2b": i32([4, 3, 1, 0]),
               "m_raw": i32([[1, 1, 0, 1], [0, 1, 1, 1]]),
               "m_3d": rng.integers(0, 2, (B, S, S)).astype(np.int32) |
               np.eye(S, dtype=np.int32),
               "m_past": i32([[1] * 7, [1, 1, 0, 1, 1, 1, 0]]),
               "abias": f32(1, N, S, S), "abias2": f32(B, 1, S, S)})


def gen_mha():
    B, S, L, N, h, P = 2, 3, 5, 2, 4, 2
    D = N * h
    simple("mha", [
        node("MultiHeadAttention", ["q", "k", "v"], ["cross"], num_heads=N),
        node("MultiHeadAttention", ["q", "k", "v", "bias", "m2"],
             ["masked", "pk", "pv"], num_heads=N, scale=0.25),
        node("MultiHeadAttention", ["q", "ks", "vs", "", "m1"], ["split"],
             num_heads=N),
        node("MultiHeadAttention", ["q", "k", "v", "bias", "mp", "abias",
                                    "past_k", "past_v"],
             ["past", "pk2", "pv2"], num_heads=N),
        node("MultiHeadAttention", ["q", "q", "q"], ["causal"], num_heads=N,
             unidirectional=1),
    ], {"q": f32(B, S, D), "k": f32(B, L, D), "v": f32(B, L, D),
        "past_k": f32(B, N, P, h), "past_v": f32(B, N, P, h)},
        ["cross", "masked", "pk", "pv", "split", "past", "pk2", "pv2",
         "causal"],
        inits={"bias": f32(3 * D), "m2": i32([[1, 1, 1, 0, 0],
                                              [1, 0, 1, 1, 1]]),
               "ks": f32(B, N, L, h), "vs": f32(B, N, L, h),
               "m1": i32([4, 2]), "mp": i32([[1] * 7, [1, 1, 1, 1, 0, 1, 1]]),
               "abias": f32(B, N, S, P + L)})


def gen_embed_ln():
    B, S, V, H = 2, 5, 11, 8
    ids = rng.integers(0, V, (B, S)).astype(np.int32)
    seg = rng.integers(0, 2, (B, S)).astype(np.int32)
    simple("embed_ln", [
        node("EmbedLayerNormalization", ["ids", "seg", "word", "pos", "segemb",
                                         "g", "b", "mask"],
             ["y", "mi", "sum"]),
        node("EmbedLayerNormalization", ["ids", "", "word", "pos", "", "g",
                                         "b"], ["y_min", "mi_min"],
             epsilon=1e-5),
        node("EmbedLayerNormalization", ["ids", "seg", "word", "pos", "segemb",
                                         "g", "b", "", "pid1"],
             ["y_pid1", "mi_pid1"]),
        node("EmbedLayerNormalization", ["ids", "", "word", "pos", "", "g",
                                         "b", "mask", "pid"],
             ["y_pid", "mi_pid"]),
    ], {"ids": ids, "seg": seg,
        "mask": i32([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])},
        ["y", "mi", "sum", "y_min", "mi_min", "y_pid1", "mi_pid1", "y_pid",
         "mi_pid"],
        inits={"word": f32(V, H), "pos": f32(9, H), "segemb": f32(2, H),
               "g": f32(H), "b": f32(H), "pid1": i32([[4, 3, 2, 1, 0]]),
               "pid": rng.integers(0, 9, (B, S)).astype(np.int32)})


def gen_rotary():
    B, S, N, h, M = 2, 3, 2, 8, 10
    ang = np.arange(M)[:, None] * (1.0 / 10000 ** (np.arange(h // 2) / (h // 2)))
    cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    ang4 = ang[:, :2]
    simple("rotary", [
        node("RotaryEmbedding", ["x", "p1", "cos", "sin"], ["half"]),
        node("RotaryEmbedding", ["x", "p", "cos", "sin"], ["inter"],
             interleaved=1),
        node("RotaryEmbedding", ["x4", "p", "cos", "sin"], ["bnsh"]),
        node("RotaryEmbedding", ["x", "p1", "cos4", "sin4"], ["partial"],
             num_heads=N, rotary_embedding_dim=4),
    ], {"x": f32(B, S, N * h), "x4": f32(B, N, S, h)},
        ["half", "inter", "bnsh", "partial"],
        inits={"p1": np.array([2], np.int64),
               "p": rng.integers(0, M, (B, S)).astype(np.int64),
               "cos": cos, "sin": sin,
               "cos4": np.cos(ang4).astype(np.float32),
               "sin4": np.sin(ang4).astype(np.float32)})


# ---- the real-model stand-ins (tests/gen_contrib_real.py) -----------------

def gen_real():
    r = np.random.default_rng(77)
    nodes, inits, x, outs = gen_contrib_real.zoo_qcnn(r)
    gen_contrib_real.make_model(
        "zoo_qcnn", nodes, inits,
        [h.make_tensor_value_info(x, T.FLOAT, ["batch", 3, 32, 32])], outs,
        DIR)
    gears = ["--input_shape=x:-1,3,32,32", "--dynamic_batch_size=1,2,4"]
    for b in (1, 4):
        img = (r.random((b, 3, 32, 32)) * 4 - 2).astype(np.float32)
        case("zoo_qcnn_b%d" % b, {"x": img}, tol="l", flags=gears,
             model_name="zoo_qcnn")
    nodes, inits, ins, outs = gen_contrib_real.bert_opt(r)
    gen_contrib_real.make_model("bert_opt", nodes, inits, ins, outs, DIR)
    dyn = ";".join(",".join([str(b), str(s)] * 3)
                   for b, s in ((1, 8), (2, 16), (4, 32)))
    gears = ["--input_shape=input_ids:-1,-1;segment_ids:-1,-1;"
             "input_mask:-1,-1", "--dynamic_dims=" + dyn]
    for b, s in ((1, 8), (2, 16)):
        case("bert_opt_b%ds%d" % (b, s), gen_contrib_real.bert_inputs(r, b, s),
             flags=gears, model_name="bert_opt")


def main():
    os.makedirs(DIR, exist_ok=True)
    for f in os.listdir(DIR):
        if f.endswith(".onnx") or f.endswith(".npy"):
            os.remove(os.path.join(DIR, f))
    gen_gelu()
    gen_bias_add()
    gen_skip_norm()
    gen_rms_norm()
    gen_fused_matmul()
    gen_fused_conv_gemm()
    gen_qlinear_binary()
    gen_qlinear_unary()
    gen_qlinear_concat()
    gen_qlinear_pool()
    gen_qlinear_softmax()
    gen_qgemm()
    gen_int_matmul_float()
    gen_attention()
    gen_mha()
    gen_embed_ln()
    gen_rotary()
    gen_real()
    with open(DIR + "/cases.txt", "w") as f:
        f.write("# CASE MODEL TOL ORACLE [gearc flags]: "
                "tests/gen_contrib_models.py\n")
        f.write("".join(c + "\n" for c in CASES))


if __name__ == "__main__":
    main()
