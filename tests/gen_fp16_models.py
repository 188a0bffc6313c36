#!/usr/bin/python3
"""tests/gen_fp16_models.py - makes tests/fixtures/fp16_half.onnx,
fp16_keepio.onnx and fp16_twin.onnx for tests/test_widen.c: one small
network (Conv, Relu, a residual Add, Sigmoid, a Constant scale,
ConstantOfShape, GlobalAveragePool, Flatten, Gemm) spelled three ways:
  - fp16_half: everything float16, the inputs and outputs too, as
    torch.onnx writes a model.half();
  - fp16_keepio: float32 inputs and outputs, a Cast to float16 after the
    input and one to float32 before each output, the body float16, as
    float16 converters write it with keep_io_types;
  - fp16_twin: the same network in float32 with the float16 weights
    widened exactly: what gearc computes for the other two.
Run from the repository root."""
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

rng = np.random.default_rng(28)


def weights():
    def ws(*shape):  # scaled by 1/sqrt(fan-in): sums stay near 1
        fan = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        return (rng.standard_normal(shape) / np.sqrt(fan)).astype(np.float16)
    return {"w1": ws(8, 3, 3, 3), "b1": ws(8), "w2": ws(8, 8, 3, 3),
            "b2": ws(8), "wg": ws(8, 5), "bg": ws(5)}


W = weights()


def body(dt, x):
    """The network's nodes from x on, computing in dt."""
    np_dt = np.float16 if dt == T.FLOAT16 else np.float32
    half = nh.from_array(np.array([0.5], np_dt))
    return [
        h.make_node("Conv", [x, "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        h.make_node("Relu", ["c1"], ["r1"]),
        h.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        h.make_node("Add", ["c2", "r1"], ["res"]),
        h.make_node("Constant", [], ["half"], value=half),
        h.make_node("Mul", ["res", "half"], ["scaled"]),
        h.make_node("Sigmoid", ["scaled"], ["map"]),
        h.make_node("Shape", ["map"], ["shp"]),
        h.make_node("ConstantOfShape", ["shp"], ["ones"],
                    value=nh.from_array(np.array([1], np_dt))),
        h.make_node("Sub", ["ones", "map"], ["inv"]),
        h.make_node("GlobalAveragePool", ["inv"], ["pool"]),
        h.make_node("Flatten", ["pool"], ["flat"]),
        h.make_node("Gemm", ["flat", "wg", "bg"], ["logits"], transB=0),
    ]


def save(nodes, io_dt, weight_dt, outputs, path):
    inits = [nh.from_array(v.astype(np.float16 if weight_dt == T.FLOAT16
                                    else np.float32), k)
             for k, v in W.items()]
    x = h.make_tensor_value_info("x", io_dt, ["N", 3, 16, 16])
    outs = [h.make_tensor_value_info(o, io_dt, []) for o in outputs]
    g = h.make_graph(nodes, path, [x], outs, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, "tests/fixtures/" + path)


save(body(T.FLOAT16, "x"), T.FLOAT16, T.FLOAT16, ["map", "logits"],
     "fp16_half.onnx")
keep = [h.make_node("Cast", ["x"], ["x16"], to=T.FLOAT16)] + \
    body(T.FLOAT16, "x16") + \
    [h.make_node("Cast", ["map"], ["map32"], to=T.FLOAT),
     h.make_node("Cast", ["logits"], ["logits32"], to=T.FLOAT)]
save(keep, T.FLOAT, T.FLOAT16, ["map32", "logits32"], "fp16_keepio.onnx")
save(body(T.FLOAT, "x"), T.FLOAT, T.FLOAT, ["map", "logits"],
     "fp16_twin.onnx")

# fp16_cast: the Casts runtime/convert.c runs, one output each.
ints = [(T.INT8, "i8"), (T.UINT8, "u8"), (T.INT16, "i16"), (T.UINT16, "u16"),
        (T.INT32, "i32"), (T.UINT32, "u32"), (T.INT64, "i64"),
        (T.BOOL, "b")]
casts = [h.make_node("Cast", ["h"], ["h2f"], to=T.FLOAT),
         h.make_node("Cast", ["f"], ["f2h"], to=T.FLOAT16)] + \
    [h.make_node("Cast", [n], [n + "2f"], to=T.FLOAT) for _, n in ints]
ins = [h.make_tensor_value_info("h", T.FLOAT16, [65536]),
       h.make_tensor_value_info("f", T.FLOAT, [65536])] + \
    [h.make_tensor_value_info(n, t, [256]) for t, n in ints]
outs = [h.make_tensor_value_info(o.output[0], o.attribute[0].i, [])
        for o in casts]
g = h.make_graph(casts, "fp16_cast", ins, outs)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, "tests/fixtures/fp16_cast.onnx")
