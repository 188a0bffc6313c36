#!/usr/bin/python3
"""Seeds for the cases issue 19 found (run from the repository root):

  corpus_onnx/ext_{data,link,fifo,dirlink}.onnx
      a float [4,4] weight in external data at location data.bin,
      link.bin, fifo.bin or dirlink/outside.bin: fuzz_onnx loads its input
      as DIR/fuzz.onnx in a scratch directory where data.bin is a file,
      link.bin a symlink to a file outside, fifo.bin a FIFO and dirlink a
      symlink to a directory outside (tests/fuzz/fuzz_onnx.c).
  corpus_om/many_empty_graphs.om
      mlp compiled, with 50,000 empty Model.graphs entries appended to its
      MODEL_DEF (checksum fixed): more entries than its size can hold.
  corpus_om/nul_in_name.om
      the same with an Option whose key holds a NUL byte.
"""
import struct
import sys
import zlib

from onnx import TensorProto, helper


def ext_model(location):
    w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[4, 4])
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", "64")):
        e = w.external_data.add()
        e.key, e.value = k, v
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"])], "ext",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m.SerializeToString()


def append_to_def(om, extra):
    nparts, = struct.unpack_from("<I", om, 28)
    defoff, defsz = struct.unpack_from("<QQ", om, 72)
    nd = defsz + len(extra)
    nwoff = (defoff + nd + 63) // 64 * 64
    out = bytearray(om[:defoff + defsz]) + extra
    if nparts == 2:
        woff, wsz = struct.unpack_from("<QQ", om, 96)
        out += bytes(nwoff - len(out)) + om[woff:woff + wsz]
        struct.pack_into("<Q", out, 96, nwoff)
    struct.pack_into("<Q", out, 16, len(out))
    struct.pack_into("<Q", out, 80, nd)
    struct.pack_into("<I", out, 24, zlib.crc32(bytes(out[64:])))
    return bytes(out)


def main():
    for name in ("data", "link", "fifo", "dirlink"):
        loc = "dirlink/outside.bin" if name == "dirlink" else name + ".bin"
        with open("tests/fuzz/corpus_onnx/ext_%s.onnx" % name, "wb") as f:
            f.write(ext_model(loc))
    om = open(sys.argv[1], "rb").read()  # a compiled mlp.om
    with open("tests/fuzz/corpus_om/many_empty_graphs.om", "wb") as f:
        f.write(append_to_def(om, b"\x3a\x00" * 50000))
    opt = b"\x1a\x05\x0a\x03a\x00b"
    with open("tests/fuzz/corpus_om/nul_in_name.om", "wb") as f:
        f.write(append_to_def(om, opt))


if __name__ == "__main__":
    main()
