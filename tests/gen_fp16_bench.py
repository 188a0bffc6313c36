#!/usr/bin/python3
"""tests/gen_fp16_bench.py - makes the float16 model of make bench
(tests/bench_ort.mjs), written as float16 converters write a float32
model with its inputs and outputs kept float32 (onnxconverter-common's
convert_float_to_float16(keep_io_types=True); its tools are not needed):
  - fp16_cnn: the CNN of tests/gen_qbench_models.py's qdyn_cnn (3x3 and
    1x1 convolutions, two strided, one grouped, Relu between, then
    GlobalAveragePool, Flatten and a Gemm head) on x [1,16,112,112], its
    weights and biases float16, a Cast to float16 after the input and a
    Cast to float32 before the output.
gearc computes it in float32 (the widen-fp16 pass, gearc(1) FLOAT16
MODELS); ONNX Runtime's CPU provider runs its own mix of float16 and
float32 kernels, so the two agree to float16's precision, not float32's.
Weights come from a fixed-seed generator; run from the repository root
with /usr/bin/python3."""
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

rng = np.random.default_rng(2830)
n = h.make_node


class Net:
    def __init__(self):
        self.nodes, self.inits, self.k = [], {}, 0

    def init(self, base, v):
        self.k += 1
        k = "%s%d" % (base, self.k)
        self.inits[k] = v.astype(np.float16)
        return k

    def conv(self, x, cin, cout, k, stride=1, group=1):
        fan = cin // group * k * k
        w = self.init("w", rng.normal(0, (2 / fan) ** 0.5,
                                      (cout, cin // group, k, k)))
        b = self.init("b", rng.normal(0, 0.05, cout))
        y = "conv%d" % self.k
        self.nodes.append(n("Conv", [x, w, b], [y], group=group,
                            kernel_shape=[k, k], strides=[stride, stride],
                            pads=[k // 2] * 4))
        self.nodes.append(n("Relu", [y], [y + "_r"]))
        return y + "_r"


def fp16_cnn():
    t = Net()
    t.nodes.append(n("Cast", ["x"], ["x16"], to=T.FLOAT16))
    y = t.conv("x16", 16, 32, 3)
    y = t.conv(y, 32, 32, 3, stride=2)
    y = t.conv(y, 32, 64, 1)
    y = t.conv(y, 64, 64, 3, group=2)
    y = t.conv(y, 64, 128, 3, stride=2)
    y = t.conv(y, 128, 128, 1)
    w = t.init("fc_w", rng.normal(0, 0.1, (128, 10)))
    b = t.init("fc_b", rng.normal(0, 0.05, 10))
    t.nodes += [n("GlobalAveragePool", [y], ["gap"]),
                n("Flatten", ["gap"], ["flat"]),
                n("Gemm", ["flat", w, b], ["logits16"]),
                n("Cast", ["logits16"], ["logits"], to=T.FLOAT)]
    g = h.make_graph(
        t.nodes, "fp16_cnn",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 16, 112, 112])],
        [h.make_tensor_value_info("logits", T.FLOAT, None)],
        [nh.from_array(v, k) for k, v in t.inits.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    m = onnx.shape_inference.infer_shapes(m)
    onnx.checker.check_model(m)
    onnx.save(m, "tests/fixtures/fp16_cnn.onnx")


if __name__ == "__main__":
    fp16_cnn()
