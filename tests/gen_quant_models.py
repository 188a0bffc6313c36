#!/usr/bin/python3
"""tests/gen_quant_models.py - makes the fixtures of tests/test_quant.c,
the integer and quantization ops runtime/quant.c runs, at the sizes of
real quantized models; float32 inputs (the tests fill them in [-1, 1]),
the integer results as int32 outputs:
  - quant_mm: DynamicQuantizeLinear of x [1,64,256] into MatMulInteger
    against a constant [256,256] B: uint8 with a zero point, int8 with
    per-column zero points; QuantizeLinear of x to int8 (scale 0.004)
    and to uint8 (scale 0.001, most values saturated at 0 and 255) into
    uint8 B of per-column zero points and of the extreme zero point 255;
    a batched MatMulInteger of two run-time operands ([2,64,256] x
    [2,256,64], int8 B from a per-axis QuantizeLinear); DequantizeLinear
    per tensor (uint8) and per axis (int8);
  - quant_conv: ConvInteger 3x3 with 32 channels on [1,32,28,28]: uint8
    W with a zero point (pads 1), int8 W with per-channel zero points
    (stride 2), int8 X into uint8 W with per-channel zero points (2
    groups, dilation 2, no pads), a depthwise one, a 1-D one, one on
    [1,32,96,96] whose output rows runtime/quant.c takes in 3 tiles;
  - quant_qlinear: QLinearMatMul ([1,64,256] x [256,128]) uint8 with
    per-tensor scales, int8 with per-column B scales; QLinearConv 3x3
    of 32 channels, uint8 with a bias, int8 strided with per-channel W
    scales; the scales chosen so that some results saturate; and both
    with scales of product 2^-9, so that some results are ties; a
    QLinearConv on [1,32,96,96], in 3 tiles; a depthwise int8 one,
    strided;
  - quant_mlp: a dynamic-quantized MLP as onnxruntime's quantize_dynamic
    writes it (DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul by
    the scale product -> Add bias, Relu between layers), uint8 weights
    with zero points, on x [1,16,128].
Run from the repository root with /usr/bin/python3."""
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

rng = np.random.default_rng(2828)


def u8(*shape):
    return rng.integers(0, 256, shape).astype(np.uint8)


def s8(*shape):
    return rng.integers(-128, 128, shape).astype(np.int8)


def save(name, nodes, inputs, outputs, inits, opset=13):
    ins = [h.make_tensor_value_info(k, T.FLOAT, s) for k, s in inputs]
    g = h.make_graph(nodes, name, ins, [],
                     [nh.from_array(v, k) for k, v in inits.items()])
    known = onnx.shape_inference.infer_shapes(h.make_model(
        g, opset_imports=[h.make_opsetid("", opset)])).graph.value_info
    shapes = {v.name: v for v in known}
    for k, dt in outputs:  # the inferred type, checked
        assert shapes[k].type.tensor_type.elem_type == dt, k
        g.output.append(shapes[k])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, "tests/fixtures/%s.onnx" % name)


def quant_mm():
    n = h.make_node
    inits = {
        "bu": u8(256, 256), "bu_z": np.array(131, np.uint8),
        "bs": s8(256, 256), "bs_z": s8(256),
        "bu_zc": u8(256), "bu_z255": np.array(255, np.uint8),
        "bext": np.where(u8(256, 256) > 127, 255, 0).astype(np.uint8),
        "s4": np.array(0.004, np.float32), "z0": np.array(-3, np.int8),
        "s1": np.array(0.001, np.float32), "z128": np.array(128, np.uint8),
        "sc": np.array([0.01, 0.02], np.float32), "zc": np.array([5, -7],
                                                                np.int8),
        "sd": np.linspace(0.01, 0.05, 64).astype(np.float32),
    }
    nodes = [
        n("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        n("MatMulInteger", ["xq", "bu", "xz", "bu_z"], ["y_u8"]),
        n("MatMulInteger", ["xq", "bs", "xz", "bs_z"], ["y_s8_col"]),
        n("QuantizeLinear", ["x", "s4", "z0"], ["xi"]),
        n("MatMulInteger", ["xi", "bu", "z0", "bu_zc"], ["y_i8_col"]),
        n("QuantizeLinear", ["x", "s1", "z128"], ["xsat"]),
        n("MatMulInteger", ["xsat", "bext", "", "bu_z255"], ["y_sat"]),
        n("MatMulInteger", ["xsat", "bext", "z128"], ["y_sat0"]),
        # run-time operands, batched
        n("QuantizeLinear", ["x2", "s4", "z0"], ["a2"]),
        n("QuantizeLinear", ["w2", "sc", "zc"], ["b2"], axis=0),
        n("MatMulInteger", ["a2", "b2", "z0"], ["y_batch"]),
        n("DequantizeLinear", ["xq", "xs", "xz"], ["dq_u8"]),
        n("DequantizeLinear", ["a2", "sd", ""], ["dq_axis"], axis=1),
    ]
    i32 = T.INT32
    save("quant_mm", nodes,
         [("x", [1, 64, 256]), ("x2", [2, 64, 256]), ("w2", [2, 256, 64])],
         [("y_u8", i32), ("y_s8_col", i32), ("y_i8_col", i32),
          ("y_sat", i32), ("y_sat0", i32), ("y_batch", i32),
          ("xq", T.UINT8), ("dq_u8", T.FLOAT), ("dq_axis", T.FLOAT),
          ("xs", T.FLOAT), ("xz", T.UINT8)], inits)


def quant_conv():
    n = h.make_node
    inits = {
        "wu": u8(32, 32, 3, 3), "wu_z": np.array(119, np.uint8),
        "ws": s8(32, 32, 3, 3), "ws_z": s8(32),
        "wg": u8(32, 16, 3, 3), "wg_z": u8(32),
        "wd": u8(32, 1, 3, 3), "wd_z": np.array(0, np.uint8),
        "w1": s8(16, 32, 5),
        "s4": np.array(0.004, np.float32), "z0": np.array(-3, np.int8),
    }
    nodes = [
        n("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        n("ConvInteger", ["xq", "wu", "xz", "wu_z"], ["c_u8"],
          pads=[1, 1, 1, 1]),
        n("ConvInteger", ["xq", "ws", "xz", "ws_z"], ["c_s8_ch"],
          pads=[1, 1, 1, 1], strides=[2, 2]),
        n("QuantizeLinear", ["x", "s4", "z0"], ["xi"]),
        n("ConvInteger", ["xi", "wg", "z0", "wg_z"], ["c_group"],
          group=2, dilations=[2, 2]),
        n("ConvInteger", ["xq", "wd", "xz", "wd_z"], ["c_dw"], group=32,
          pads=[1, 0, 1, 2]),
        n("DynamicQuantizeLinear", ["x1"], ["x1q", "x1s", "x1z"]),
        n("ConvInteger", ["x1q", "w1", "x1z"], ["c_1d"], pads=[2, 2]),
        # 288 x 96 columns a row: 3 tiles of output rows (37, 37, 22)
        n("DynamicQuantizeLinear", ["xl"], ["xlq", "xls", "xlz"]),
        n("ConvInteger", ["xlq", "ws", "xlz", "ws_z"], ["c_tiles"],
          pads=[1, 1, 1, 1]),
    ]
    i32 = T.INT32
    save("quant_conv", nodes, [("x", [1, 32, 28, 28]), ("x1", [2, 32, 50]),
                               ("xl", [1, 32, 96, 96])],
         [("c_u8", i32), ("c_s8_ch", i32), ("c_group", i32),
          ("c_dw", i32), ("c_1d", i32), ("c_tiles", i32)], inits)


def dense(x, k, m, name, nodes, inits, relu):
    """One quantize_dynamic layer of x [.., k] to m features."""
    n = h.make_node
    w = (rng.standard_normal((k, m)) / np.sqrt(k)).astype(np.float32)
    lo, hi = min(w.min(), 0), max(w.max(), 0)
    ws = np.float32((hi - lo) / 255)
    wz = np.uint8(np.clip(np.round(-lo / ws), 0, 255))
    wq = np.clip(np.round(w / ws) + wz, 0, 255).astype(np.uint8)
    inits.update({name + "_w": wq, name + "_ws": np.array(ws, np.float32),
                  name + "_wz": np.array(wz, np.uint8),
                  name + "_b": (rng.standard_normal(m) * 0.1)
                  .astype(np.float32)})
    nodes += [
        n("DynamicQuantizeLinear", [x], [x + "_q", x + "_s", x + "_z"]),
        n("MatMulInteger", [x + "_q", name + "_w", x + "_z", name + "_wz"],
          [name + "_i"]),
        n("Cast", [name + "_i"], [name + "_f"], to=T.FLOAT),
        n("Mul", [x + "_s", name + "_ws"], [name + "_scale"]),
        n("Mul", [name + "_f", name + "_scale"], [name + "_m"]),
        n("Add", [name + "_m", name + "_b"], [name + ("_a" if relu
                                                     else "")]),
    ]
    if relu:
        nodes.append(n("Relu", [name + "_a"], [name]))
    return name


def quant_mlp():
    nodes, inits = [], {}
    y = dense("x", 128, 512, "fc1", nodes, inits, True)
    y = dense(y, 512, 128, "fc2", nodes, inits, True)
    y = dense(y, 128, 32, "fc3", nodes, inits, False)
    save("quant_mlp", nodes, [("x", [1, 16, 128])], [(y, T.FLOAT)], inits)


def quant_qlinear():
    n = h.make_node
    f = np.float32
    inits = {
        "xs": np.array(0.01, f), "xz": np.array(120, np.uint8),
        "xs8z": np.array(-5, np.int8),
        "bu": u8(256, 128), "bu_s": np.array(0.003, f),
        "bu_z": np.array(128, np.uint8),
        "bs": s8(256, 128), "bs_s": np.linspace(1e-3, 4e-3, 128).astype(f),
        "bs_z": np.zeros(128, np.int8),
        "ys": np.array(0.04, f), "yz": np.array(10, np.uint8),
        "ys8": np.array(0.02, f), "ys8z": np.array(-2, np.int8),
        "wu": u8(32, 32, 3, 3), "wu_s": np.array(0.002, f),
        "wu_z": np.array(127, np.uint8),
        "ws": s8(16, 32, 3, 3), "ws_s": np.linspace(1e-3, 3e-3, 16)
        .astype(f), "ws_z": np.zeros(16, np.int8),
        "cb": rng.integers(-3000, 3000, 32).astype(np.int32),
        "cb16": rng.integers(-3000, 3000, 16).astype(np.int32),
        "cy": np.array(0.02, f),
        # scales whose product over y's is 2^-9: a sum of 256 mod 512
        # lies on a rounding tie (half to even, not away from zero)
        "p4": np.array(2.0 ** -4, f), "two": np.array(2.0, f),
        "zero8": np.array(0, np.int8), "zero8c": np.zeros(128, np.int8),
        "p4c": np.full(16, 2.0 ** -4, f),
        "wdw": s8(32, 1, 3, 3), "wdw_s": np.linspace(0.01, 0.04, 32)
        .astype(f), "wdw_z": np.zeros(32, np.int8),
    }
    nodes = [
        n("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        n("QuantizeLinear", ["x", "xs", "xs8z"], ["xq8"]),
        n("QLinearMatMul", ["xq", "xs", "xz", "bu", "bu_s", "bu_z", "ys",
                            "yz"], ["mm_u8"]),
        n("QLinearMatMul", ["xq8", "xs", "xs8z", "bs", "bs_s", "bs_z",
                            "ys8", "ys8z"], ["mm_s8"]),
        n("QuantizeLinear", ["xc", "xs", "xz"], ["cq"]),
        n("QLinearConv", ["cq", "xs", "xz", "wu", "wu_s", "wu_z", "cy", "yz",
                          "cb"], ["conv_u8"], pads=[1, 1, 1, 1]),
        n("QuantizeLinear", ["xc", "xs", "xs8z"], ["cq8"]),
        n("QLinearConv", ["cq8", "xs", "xs8z", "ws", "ws_s", "ws_z", "cy",
                          "ys8z"], ["conv_s8"], strides=[2, 2]),
        n("QLinearMatMul", ["xq8", "p4", "xs8z", "bs", "p4", "zero8c", "two",
                            "zero8"], ["mm_tie"]),
        n("QLinearConv", ["cq8", "p4", "xs8z", "ws", "p4c", "ws_z", "two",
                          "zero8", "cb16"], ["conv_tie"]),
        # 3 tiles of output rows, each requantized on its own
        n("QuantizeLinear", ["xl", "xs", "xz"], ["lq"]),
        n("QLinearConv", ["lq", "xs", "xz", "wu", "wu_s", "wu_z", "cy", "yz",
                          "cb"], ["conv_tiles"], pads=[1, 1, 1, 1]),
        n("QLinearConv", ["cq8", "xs", "xs8z", "wdw", "wdw_s", "wdw_z", "cy",
                          "ys8z", "cb"], ["conv_dw"], group=32,
          strides=[2, 2], pads=[1, 1, 1, 1]),
    ]
    save("quant_qlinear", nodes, [("x", [1, 64, 256]),
                                  ("xc", [1, 32, 28, 28]),
                                  ("xl", [1, 32, 96, 96])],
         [("mm_u8", T.UINT8), ("mm_s8", T.INT8), ("conv_u8", T.UINT8),
          ("conv_s8", T.INT8), ("mm_tie", T.INT8), ("conv_tie", T.INT8),
          ("conv_tiles", T.UINT8), ("conv_dw", T.INT8)], inits)


quant_mm()
quant_conv()
quant_mlp()
quant_qlinear()
