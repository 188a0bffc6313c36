#!/usr/bin/python3
"""python/tests/gen_dtypes.py - the dtype round-trip model for test_gearrt.py.

  dtypes.onnx  one input per dtype the runtime takes across its API
               (gearrt.h's gearrt_dtype), each [2, -1] ('n' varies), each
               through an Identity to an output of its own: x_float32 ->
               y_float32, ...

Run from the repository root: /usr/bin/python3 python/tests/gen_dtypes.py
"""
import onnx
from onnx import TensorProto, helper

# gearrt_dtype's names, in its order
DTYPES = ["float32", "uint8", "int8", "uint16", "int16", "int32", "int64",
          "string", "bool", "float16", "float64", "uint32", "uint64",
          "bfloat16"]
ONNX = {"float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE,
        "bfloat16": TensorProto.BFLOAT16, "float16": TensorProto.FLOAT16,
        "bool": TensorProto.BOOL}


def main():
    nodes, ins, outs = [], [], []
    for d in DTYPES:
        t = ONNX.get(d, getattr(TensorProto, d.upper(), None))
        nodes.append(helper.make_node("Identity", ["x_" + d], ["y_" + d],
                                      name="id_" + d))
        ins.append(helper.make_tensor_value_info("x_" + d, t, [2, "n"]))
        outs.append(helper.make_tensor_value_info("y_" + d, t, [2, "n"]))
    g = helper.make_graph(nodes, "dtypes", ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="gen_dtypes")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, "python/tests/dtypes.onnx")


if __name__ == "__main__":
    main()
