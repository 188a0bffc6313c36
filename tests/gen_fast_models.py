#!/usr/bin/python3
"""tests/gen_fast_models.py - makes tests/fixtures/fast_cnn.onnx, fast_mm.onnx
fast_direct.onnx, fast_chain.onnx, fast_rnn.onnx, fast_nhwc.onnx,
fast_rows.onnx, fast_batch.onnx, fast_pinned.onnx, fast_resize.onnx,
fast_fpn.onnx, fast_views.onnx, fast_threads.onnx, fast_heads.onnx,
fast_chan.onnx, fast_side.onnx, fast_residual.onnx, fast_lerp.onnx,
fast_fewconv.onnx, fast_stems.onnx, fast_pw.onnx, fast_wino.onnx,
fast_ew.onnx, fast_wino_res.onnx, fast_cl.onnx, fast_shuffle.onnx,
fast_upsample.onnx, fast_wino_parts.onnx and fast_cat_bn.onnx for
tests/test_fast.c:
the ops libgearrt's oneDNN fast paths take (Conv: plain, depthwise,
grouped, 1-D, dilated, SAME; ConvTranspose; MaxPool, AveragePool,
GlobalAveragePool; MatMul: constant, batched, both inputs variable; Gemm
with transposes, alpha, beta), each an output of one model, weights
as initializers.  Run from the repository root."""
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

rng = np.random.default_rng(15)


def w(name, *shape):
    return nh.from_array(rng.standard_normal(shape).astype(np.float32), name)


def out(name):
    return h.make_tensor_value_info(name, T.FLOAT, None)


def save(nodes, inits, inputs, outputs, path, opset=17):
    g = h.make_graph(nodes, path, inputs, [out(o) for o in outputs], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, "tests/fixtures/" + path)


cnn = [
    h.make_node("Conv", ["x", "w1", "b1"], ["conv"], pads=[1, 1, 1, 1],
                strides=[2, 2]),
    h.make_node("Conv", ["x", "w2"], ["depthwise"], group=4,
                dilations=[2, 2], pads=[2, 2, 2, 2]),
    h.make_node("Conv", ["x", "w3", "b3"], ["grouped"], group=2,
                auto_pad="SAME_UPPER", strides=[1, 2]),
    h.make_node("ConvTranspose", ["x", "wt", "bt"], ["convt"],
                strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]),
    h.make_node("ConvTranspose", ["x", "wt2"], ["convt_group"], group=2),
    h.make_node("MaxPool", ["x"], ["maxpool"], kernel_shape=[3, 3],
                strides=[2, 2], pads=[1, 1, 1, 1]),
    h.make_node("AveragePool", ["x"], ["avgpool_pad"], kernel_shape=[3, 3],
                strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1),
    h.make_node("AveragePool", ["x"], ["avgpool_ceil"], kernel_shape=[2, 2],
                strides=[2, 2], ceil_mode=1),
    h.make_node("GlobalAveragePool", ["x"], ["gap"]),
    h.make_node("Conv", ["s", "w4", "b4"], ["conv1d"], pads=[1, 2],
                dilations=[2]),
]
save(cnn, [w("w1", 8, 4, 3, 3), w("b1", 8), w("w2", 4, 1, 3, 3),
           w("w3", 6, 2, 1, 3), w("b3", 6), w("wt", 4, 3, 3, 3), w("bt", 3),
           w("wt2", 4, 3, 2, 2), w("w4", 5, 4, 3), w("b4", 5)],
     [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 9, 9]),
      h.make_tensor_value_info("s", T.FLOAT, [2, 4, 16])],
     [n.output[0] for n in cnn], "fast_cnn.onnx")

mm = [
    h.make_node("MatMul", ["a", "wm"], ["matmul"]),
    h.make_node("MatMul", ["a", "wb"], ["matmul_batched"]),
    h.make_node("Transpose", ["a"], ["at"], perm=[0, 1, 3, 2]),
    h.make_node("MatMul", ["a", "at"], ["matmul_vars"]),
    h.make_node("Gemm", ["f", "wg", "cg"], ["gemm"], transB=1, alpha=0.5,
                beta=2.0),
    h.make_node("Gemm", ["ft", "wg2", "cg2"], ["gemm_ta"], transA=1),
]
save(mm, [w("wm", 8, 6), w("wb", 3, 8, 4), w("wg", 6, 8), w("cg", 6),
          w("wg2", 8, 6), w("cg2", 5, 1)],
     [h.make_tensor_value_info("a", T.FLOAT, [2, 3, 5, 8]),
      h.make_tensor_value_info("f", T.FLOAT, [5, 8]),
      h.make_tensor_value_info("ft", T.FLOAT, [8, 5])],
     [n.output[0] for n in mm if n.output[0] != "at"], "fast_mm.onnx")

# runtime/direct.c: few-channel ConvTranspose (det-style 2x2 and 3x3
# stride-2 heads, stride 3 with dilation and output padding, grouped),
# Sigmoid and Softmax over a wide range (x * 40)
direct = [
    h.make_node("ConvTranspose", ["x", "wd1", "bd1"], ["convt_k2"],
                strides=[2, 2]),
    h.make_node("ConvTranspose", ["x", "wd2", "bd2"], ["convt_k3"],
                strides=[2, 2], pads=[1, 1, 1, 1]),
    h.make_node("ConvTranspose", ["x", "wd3"], ["convt_dil"],
                strides=[3, 2], dilations=[2, 1], pads=[1, 0, 2, 1],
                output_padding=[1, 1]),
    h.make_node("ConvTranspose", ["x", "wd4", "bd4"], ["convt_group"],
                group=2, strides=[2, 2]),
    h.make_node("Mul", ["x", "forty"], ["wide"]),
    h.make_node("Sigmoid", ["wide"], ["sigmoid"]),
    h.make_node("Softmax", ["wide"], ["softmax"]),
    # few output channels (runtime/direct.c direct_conv): 5 = a block of
    # 4 and one of 1; asymmetric pads; the second with a fused Relu
    h.make_node("Conv", ["xw", "wc5", "bc5"], ["conv_few"],
                pads=[1, 2, 1, 0]),
    h.make_node("Conv", ["xw", "wc4"], ["conv_relu_in"], pads=[0, 1, 0, 1]),
    h.make_node("Relu", ["conv_relu_in"], ["conv_relu"]),
    # Erf, arithmetic by a constant scalar, Transpose (4-byte elements)
    h.make_node("Div", ["x", "three"], ["div_scalar"]),
    h.make_node("Erf", ["div_scalar"], ["erf"]),
    h.make_node("Relu", ["x"], ["relu"]),
    h.make_node("Pow", ["x", "two"], ["square"]),
    h.make_node("Sub", ["x", "three"], ["sub_scalar"]),
    h.make_node("Transpose", ["x"], ["transpose"], perm=[2, 0, 3, 1]),
    h.make_node("Transpose", ["xw"], ["transpose_last"], perm=[0, 2, 1, 3]),
    # a ConvTranspose applying the Relu / Sigmoid after it (fast.c)
    h.make_node("ConvTranspose", ["x", "wd1", "bd1"], ["up_relu_in"],
                strides=[2, 2]),
    h.make_node("Relu", ["up_relu_in"], ["up_relu"]),
    h.make_node("ConvTranspose", ["x", "wd2", "bd2"], ["up_sigmoid_in"],
                strides=[2, 2], pads=[1, 1, 1, 1]),
    h.make_node("Sigmoid", ["up_sigmoid_in"], ["up_sigmoid"]),
    # 24 channels in and out, 2x2 stride 2: PP-OCRv4 det's upsampling
    # head, which oneDNN pads to 32 channels and reorders in and out
    h.make_node("ConvTranspose", ["x24", "wd24", "bd24"], ["convt_24"],
                strides=[2, 2]),
    # nearest Resize by whole factors (scales 2 x 3; sizes 4x, 1x); the
    # round_prefer_floor one runs its reference kernel
    h.make_node("Resize", ["x", "", "up23"], ["resize_scales"],
                mode="nearest", coordinate_transformation_mode="asymmetric",
                nearest_mode="floor"),
    h.make_node("Resize", ["x", "", "", "size41"], ["resize_sizes"],
                mode="nearest", coordinate_transformation_mode="asymmetric",
                nearest_mode="floor"),
    h.make_node("Resize", ["x", "", "up23"], ["resize_round"],
                mode="nearest", coordinate_transformation_mode="asymmetric"),
]
save(direct, [w("wd1", 4, 4, 2, 2), w("bd1", 4), w("wd2", 4, 1, 3, 3),
              w("bd2", 1), w("wd3", 4, 3, 3, 2), w("wd4", 4, 2, 3, 3),
              w("bd4", 4),
              nh.from_array(np.array(40, dtype=np.float32), "forty"),
              w("wc5", 5, 6, 3, 3), w("bc5", 5), w("wc4", 4, 6, 2, 3),
              nh.from_array(np.array([0.75], dtype=np.float32), "three"),
              nh.from_array(np.array(2, dtype=np.float32), "two"),
              nh.from_array(np.array([1, 1, 2, 3], dtype=np.float32), "up23"),
              nh.from_array(np.array([2, 4, 36, 7], dtype=np.int64),
                            "size41")] +
     # their own generator: the later models' weights stay as they were
     [nh.from_array(np.random.default_rng(27).standard_normal(s)
                    .astype(np.float32), k)
      for k, s in (("wd24", (24, 24, 2, 2)), ("bd24", (24,)))],
     [h.make_tensor_value_info("x", T.FLOAT, [2, 4, 9, 7]),
      h.make_tensor_value_info("xw", T.FLOAT, [2, 6, 5, 40]),
      h.make_tensor_value_info("x24", T.FLOAT, [1, 24, 5, 6])],
     [n.output[0] for n in direct
      if n.output[0] not in ("wide", "conv_relu_in", "div_scalar",
                             "up_relu_in", "up_sigmoid_in")],
     "fast_direct.onnx")

# runtime/dnnl.c dnnl_fast_link: Conv -> two Convs with 16 channels, the
# middle tensor read by them alone (kept in oneDNN's layout)
chain = [
    h.make_node("Conv", ["x", "wc1", "bc1"], ["mid"], pads=[1, 1, 1, 1]),
    h.make_node("Conv", ["mid", "wc2", "bc2"], ["y"], pads=[1, 1, 1, 1]),
    h.make_node("Conv", ["mid", "wc3"], ["y2"], pads=[1, 1, 1, 1]),
]
def ws(name, *shape):  # scaled by 1/sqrt(fan-in): sums stay near 1
    a = rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))
    return nh.from_array(a.astype(np.float32), name)


save(chain, [ws("wc1", 16, 16, 3, 3), w("bc1", 16), ws("wc2", 16, 16, 3, 3),
             w("bc2", 16), ws("wc3", 16, 16, 3, 3)],
     [h.make_tensor_value_info("x", T.FLOAT, [1, 16, 12, 12])], ["y", "y2"],
     "fast_chain.onnx")


# runtime/dnnl.c dnnl_fast_rnn: LSTM (with states and bias; reverse with
# neither; whole sequence_lens), GRU (linear_before_reset 0 and 1), RNN;
# a bidirectional LSTM and one with clip run their reference kernel
T_, B_, I_, H_ = 5, 3, 6, 8


def rnn_w(name, gates, k):
    return ws(name, 1, gates * H_, k)


def bias(name, gates):
    return w(name, 1, 2 * gates * H_)


rnn = [
    h.make_node("LSTM", ["q", "lw", "lr", "lb", "", "h0", "c0"],
                ["lstm_y", "lstm_h", "lstm_c"], hidden_size=H_),
    h.make_node("LSTM", ["q", "lw", "lr"], ["lstm_rev"], hidden_size=H_,
                direction="reverse"),
    h.make_node("LSTM", ["q", "lw", "lr", "lb", "lens"], ["lstm_lens"],
                hidden_size=H_),
    h.make_node("GRU", ["q", "gw", "gr", "gb", "", "h0"], ["gru_y", "gru_h"],
                hidden_size=H_),
    h.make_node("GRU", ["q", "gw", "gr", "gb"], ["gru_lbr"], hidden_size=H_,
                linear_before_reset=1, direction="reverse"),
    h.make_node("RNN", ["q", "rw", "rr", "rb", "", "h0"], ["rnn_y"],
                hidden_size=H_),
    h.make_node("LSTM", ["q", "lw2", "lr2"], ["lstm_bidi"], hidden_size=H_,
                direction="bidirectional"),
    h.make_node("LSTM", ["q", "lw", "lr"], ["lstm_clip"], hidden_size=H_,
                clip=0.5),
]
save(rnn, [rnn_w("lw", 4, I_), rnn_w("lr", 4, H_), bias("lb", 4),
           rnn_w("gw", 3, I_), rnn_w("gr", 3, H_), bias("gb", 3),
           rnn_w("rw", 1, I_), rnn_w("rr", 1, H_), bias("rb", 1),
           ws("lw2", 2, 4 * H_, I_), ws("lr2", 2, 4 * H_, H_),
           nh.from_array(np.full([B_], T_, dtype=np.int32), "lens")],
     [h.make_tensor_value_info("q", T.FLOAT, [T_, B_, I_]),
      h.make_tensor_value_info("h0", T.FLOAT, [1, B_, H_]),
      h.make_tensor_value_info("c0", T.FLOAT, [1, B_, H_])],
     [o for n in rnn for o in n.output], "fast_rnn.onnx")


# runtime/layout.c: tensors between oneDNN convolutions stay NHWC through
# a squeeze-excite block (GlobalAveragePool, 1x1 Convs, Sigmoid, Mul by
# [N,C,1,1]), a residual Add, a Sub of a constant [1,C,1,1], a MaxPool
# and a FusedConv's residual Z: only x in and y out are reordered
nhwc = [
    h.make_node("Conv", ["x", "na1", "nb1"], ["a"], pads=[1, 1, 1, 1]),
    h.make_node("Relu", ["a"], ["ar"]),
    h.make_node("Conv", ["ar", "na2"], ["b"], pads=[1, 1, 1, 1], group=16),
    h.make_node("GlobalAveragePool", ["b"], ["g"]),
    h.make_node("Conv", ["g", "na3", "nb3"], ["g1"]),
    h.make_node("Relu", ["g1"], ["g2"]),
    h.make_node("Conv", ["g2", "na4", "nb4"], ["g3"]),
    h.make_node("Sigmoid", ["g3"], ["se"]),
    h.make_node("Mul", ["b", "se"], ["m"]),
    h.make_node("Add", ["m", "ar"], ["res"]),
    h.make_node("Sub", ["res", "nc"], ["shifted"]),
    h.make_node("MaxPool", ["shifted"], ["p"], kernel_shape=[2, 2],
                strides=[2, 2]),
    h.make_node("Conv", ["p", "na5", "nb5"], ["q0"]),
    h.make_node("Add", ["q0", "p"], ["q"]),
    h.make_node("Conv", ["q", "na6"], ["y"]),
]
save(nhwc, [ws("na1", 16, 8, 3, 3), w("nb1", 16), ws("na2", 16, 1, 3, 3),
            ws("na3", 4, 16, 1, 1), w("nb3", 4), ws("na4", 16, 4, 1, 1),
            w("nb4", 16),
            nh.from_array(rng.standard_normal([1, 16, 1, 1])
                          .astype(np.float32), "nc"),
            ws("na5", 16, 16, 1, 1), w("nb5", 16), ws("na6", 8, 16, 1, 1)],
     [h.make_tensor_value_info("x", T.FLOAT, [2, 8, 12, 12])], ["y"],
     "fast_nhwc.onnx")


# runtime/direct.c: LayerNormalization (last axis with B; the last two
# axes, no B), Add, Sub, Mul, Div of two tensors of one shape, Softmax of
# rows of whole vectors (48) and with a tail (37)
rows = [
    h.make_node("LayerNormalization", ["r", "lg", "lb"], ["ln_last"],
                epsilon=1e-3),
    h.make_node("LayerNormalization", ["r", "lg2"], ["ln_two"], axis=-2),
    h.make_node("Add", ["r", "r2"], ["pair_add"]),
    h.make_node("Sub", ["r", "r2"], ["pair_sub"]),
    h.make_node("Mul", ["r", "r2"], ["pair_mul"]),
    h.make_node("Div", ["r", "r2"], ["pair_div"]),
    h.make_node("Softmax", ["r48"], ["softmax_48"]),
    h.make_node("Softmax", ["r37"], ["softmax_37"]),
]
save(rows, [w("lg", 8), w("lb", 8), w("lg2", 3, 8)],
     [h.make_tensor_value_info("r", T.FLOAT, [2, 3, 8]),
      h.make_tensor_value_info("r2", T.FLOAT, [2, 3, 8]),
      h.make_tensor_value_info("r48", T.FLOAT, [3, 48]),
      h.make_tensor_value_info("r37", T.FLOAT, [3, 37])],
     [n.output[0] for n in rows], "fast_rows.onnx")


# runtime/dnnl.c: a convolution of a graph input of 1 MB or more runs image
# by image (its input reorder needs one image's temporary): x [4,8,96,96]
# -> Conv 3x3 to 24 channels + Relu -> Conv 1x1 with x's residual -> y
batch = [
    h.make_node("Conv", ["x", "bw1", "bb1"], ["ba"], pads=[1, 1, 1, 1]),
    h.make_node("Relu", ["ba"], ["bar"]),
    h.make_node("Conv", ["bar", "bw2"], ["bc"]),
    h.make_node("Add", ["bc", "x"], ["y"]),
]
save(batch, [ws("bw1", 24, 8, 3, 3), w("bb1", 24), ws("bw2", 8, 24, 1, 1)],
     [h.make_tensor_value_info("x", T.FLOAT, [4, 8, 96, 96])], ["y"],
     "fast_batch.onnx")


# runtime/layout.c: a weight of a tensor's own shape (an Add's operand, a
# per-channel Mul's X) is row-major, so the tensors sharing its layout
# stay row-major too: x -> Conv -> a; a + Wa -> b -> Conv -> y; Wm *
# GlobalAveragePool(a) -> c -> Conv -> y2
pinned = [
    h.make_node("Conv", ["x", "pw1"], ["a"], pads=[1, 1, 1, 1]),
    h.make_node("Add", ["a", "pwa"], ["b"]),
    h.make_node("Conv", ["b", "pw2"], ["y"]),
    h.make_node("GlobalAveragePool", ["a"], ["ga"]),
    h.make_node("Mul", ["pwm", "ga"], ["c"]),
    h.make_node("Conv", ["c", "pw3"], ["y2"]),
]
save(pinned, [ws("pw1", 16, 8, 3, 3), w("pwa", 1, 16, 10, 10),
              ws("pw2", 8, 16, 1, 1), w("pwm", 1, 16, 10, 10),
              ws("pw3", 8, 16, 1, 1)],
     [h.make_tensor_value_info("x", T.FLOAT, [1, 8, 10, 10])], ["y", "y2"],
     "fast_pinned.onnx")


# linear Resize, half_pixel, by scales (x2 up, and 0.6 down where the
# output is not in * 0.6: the reference kernel's) and by sizes
# (pytorch_half_pixel down, half_pixel up): rank 4 runtime/chanwise.c's,
# rank 3 (half_pixel up by sizes) runtime/dnnl.c's dnnl_fast_resize
rs = [
    h.make_node("Resize", ["x", "", "up2"], ["lin_up"], mode="linear"),
    h.make_node("Resize", ["x", "", "down06"], ["lin_down_ref"],
                mode="linear"),
    h.make_node("Resize", ["x", "", "", "sz_down"], ["lin_pt_down"],
                mode="linear",
                coordinate_transformation_mode="pytorch_half_pixel"),
    h.make_node("Resize", ["x", "", "", "sz_up"], ["lin_sz_up"],
                mode="linear"),
    h.make_node("Resize", ["x3", "", "", "sz3_up"], ["lin_rank3"],
                mode="linear"),
]
save(rs, [nh.from_array(np.array([1, 1, 2, 2], np.float32), "up2"),
          nh.from_array(np.array([1, 1, 0.6, 0.6], np.float32), "down06"),
          nh.from_array(np.array([2, 6, 5, 3], np.int64), "sz_down"),
          nh.from_array(np.array([2, 6, 17, 23], np.int64), "sz_up"),
          nh.from_array(np.array([2, 6, 20], np.int64), "sz3_up")],
     [h.make_tensor_value_info("x", T.FLOAT, [2, 6, 8, 9]),
      h.make_tensor_value_info("x3", T.FLOAT, [2, 6, 9])],
     [n.output[0] for n in rs], "fast_resize.onnx")


# runtime/layout.c through an FPN's ops: nearest Resize by 2 (direct.c)
# and a channel Concat (chanwise.c) keep NHWC between the convolutions:
# x -> Conv -> a -> Conv/2 -> b; a + Resize(b) -> s; Concat(a, s) -> Conv -> y
fpn = [
    h.make_node("Conv", ["x", "fw1"], ["fa"], pads=[1, 1, 1, 1]),
    h.make_node("Conv", ["fa", "fw2"], ["fb"], pads=[1, 1, 1, 1],
                strides=[2, 2]),
    h.make_node("Resize", ["fb", "", "fup"], ["fu"], mode="nearest",
                coordinate_transformation_mode="asymmetric",
                nearest_mode="floor"),
    h.make_node("Add", ["fa", "fu"], ["fs"]),
    h.make_node("Concat", ["fa", "fs"], ["fc"], axis=1),
    h.make_node("Conv", ["fc", "fw3"], ["y"]),
]
save(fpn, [ws("fw1", 16, 8, 3, 3), ws("fw2", 16, 16, 3, 3),
           nh.from_array(np.array([1, 1, 2, 2], np.float32), "fup"),
           ws("fw3", 8, 32, 1, 1)],
     [h.make_tensor_value_info("x", T.FLOAT, [1, 8, 16, 16])], ["y"],
     "fast_fpn.onnx")


# runtime/direct.c: Gather by constant indices (int64 with a negative one,
# axis 1; an int32 scalar, axis 0) and a Reshape the plan aliases (a no-op)
views = [
    h.make_node("Gather", ["v", "gi"], ["gather_axis1"], axis=1),
    h.make_node("Gather", ["v", "gs"], ["gather_scalar"]),
    h.make_node("Relu", ["v"], ["vr"]),
    h.make_node("Reshape", ["vr", "vshape"], ["vflat"]),
    h.make_node("Sigmoid", ["vflat"], ["view_sigmoid"]),
]
save(views, [nh.from_array(np.array([2, -1, 0], np.int64), "gi"),
             nh.from_array(np.array(1, np.int32), "gs"),
             nh.from_array(np.array([6, 20], np.int64), "vshape")],
     [h.make_tensor_value_info("v", T.FLOAT, [2, 3, 4, 5])],
     ["gather_axis1", "gather_scalar", "view_sigmoid"], "fast_views.onnx")


# At 2 threads, the plain-C paths of enough work split their rows over
# both (runtime/rt.h RT_PARALLEL_FOR): a few-channel ConvTranspose and
# Conv, Softmax, LayerNormalization, nearest Resize and a per-channel Mul
par = [
    h.make_node("ConvTranspose", ["tx", "tw1", "tb1"], ["par_deconv"],
                strides=[2, 2]),
    h.make_node("Conv", ["tx16", "tw2"], ["par_conv"], pads=[1, 1, 1, 1]),
    h.make_node("Softmax", ["tsm"], ["par_softmax"]),
    h.make_node("LayerNormalization", ["tln", "tg", "tb"], ["par_ln"]),
    h.make_node("Resize", ["tx16", "", "tup"], ["par_resize"],
                mode="nearest", coordinate_transformation_mode="asymmetric",
                nearest_mode="floor"),
    h.make_node("Mul", ["par_resize", "tscale"], ["par_scale"]),
]
save(par, [w("tw1", 4, 4, 2, 2), w("tb1", 4), ws("tw2", 4, 16, 3, 3),
           w("tg", 128), w("tb", 128),
           nh.from_array(np.array([1, 1, 2, 2], np.float32), "tup"),
           w("tscale", 1, 16, 1, 1)],
     [h.make_tensor_value_info("tx", T.FLOAT, [1, 4, 64, 64]),
      h.make_tensor_value_info("tx16", T.FLOAT, [1, 16, 64, 64]),
      h.make_tensor_value_info("tsm", T.FLOAT, [64, 512]),
      h.make_tensor_value_info("tln", T.FLOAT, [256, 128])],
     [n.output[0] for n in par], "fast_threads.onnx")


# A detector's ends: its stem, a Conv of the 3-channel model input to 8
# channels (oneDNN writes them blocked by 8, NHWC's bytes, reading x as
# it is: dnnl.c reads_input_as_is), feeding a Conv to 16 in NHWC; and a
# few-channel ConvTranspose of strides 2 x 3 (runtime/direct.c: phases
# interleaved by the general loop, stride 2 having its own)
heads = [
    h.make_node("Conv", ["x", "hw1", "hb1"], ["stem_in"], pads=[1, 1, 1, 1],
                strides=[2, 2]),
    h.make_node("Relu", ["stem_in"], ["stem"]),
    h.make_node("Conv", ["stem", "hw2", "hb2"], ["c16"], pads=[1, 1, 1, 1]),
    h.make_node("ConvTranspose", ["d", "hwd", "hbd"], ["up23"],
                strides=[2, 3], pads=[1, 1, 0, 2]),
]
save(heads, [ws("hw1", 8, 3, 3, 3), w("hb1", 8), ws("hw2", 16, 8, 3, 3),
             w("hb2", 16), w("hwd", 4, 2, 3, 4), w("hbd", 2)],
     [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 24, 76]),
      h.make_tensor_value_info("d", T.FLOAT, [1, 4, 5, 7])],
     ["c16", "up23"], "fast_heads.onnx")


# runtime/chanwise.c: the per-channel operand on the left of Sub and Div
# (c - x, c / x), row-major on the graph input and NHWC between two
# convolutions (one pixel's channels at a time; the second Conv, 32
# channels to 1, runtime/chanwise.c's too), [1,C,1,1], [C,1,1] and
# [N,C,1,1] operands
chan = [
    h.make_node("Sub", ["cs", "x"], ["sub_plain"]),
    h.make_node("Div", ["cd", "x"], ["div_plain"]),
    h.make_node("Conv", ["x", "cw1", "cb1"], ["a"], pads=[1, 1, 1, 1]),
    h.make_node("Sigmoid", ["a"], ["g"]),  # away from 0, for the Div
    h.make_node("Div", ["cd16", "g"], ["d"]),
    h.make_node("Sub", ["cs16", "d"], ["s"]),
    h.make_node("Conv", ["s", "cw2"], ["y"], pads=[1, 1, 1, 1]),
]
save(chan, [nh.from_array(rng.standard_normal([1, 4, 1, 1])
                          .astype(np.float32), "cs"),
            nh.from_array(rng.standard_normal([4, 1, 1])
                          .astype(np.float32), "cd"),
            ws("cw1", 32, 4, 3, 3), w("cb1", 32),
            nh.from_array(rng.standard_normal([2, 32, 1, 1])
                          .astype(np.float32), "cs16"),
            nh.from_array(rng.standard_normal([1, 32, 1, 1])
                          .astype(np.float32), "cd16"),
            ws("cw2", 1, 32, 3, 3)],
     [h.make_tensor_value_info("x", T.FLOAT, [2, 4, 6, 9])],
     ["sub_plain", "div_plain", "y"], "fast_chan.onnx")


# runtime/layout.c on a U-Net's side outputs: a, a graph output the
# backbone reads on (through an Identity, an alias of the caller's
# bytes), and b (32 channels), read by a one-channel side Conv and by the
# next Conv, stay NHWC: a is computed in a buffer of its own and
# reordered into the caller's once, and the side Conv runs
# runtime/chanwise.c's kernel, which reads b as it is
side = [
    h.make_node("Conv", ["x", "sw1"], ["a"], pads=[1, 1, 1, 1]),
    h.make_node("Identity", ["a"], ["ai"]),
    h.make_node("Conv", ["ai", "sw2"], ["b"], pads=[1, 1, 1, 1]),
    h.make_node("Conv", ["b", "sw3"], ["side"], pads=[1, 1, 1, 1]),
    h.make_node("Conv", ["b", "sw4"], ["y"], pads=[1, 1, 1, 1]),
]
save(side, [ws("sw1", 16, 8, 3, 3), ws("sw2", 32, 16, 3, 3),
            ws("sw3", 1, 32, 3, 3), ws("sw4", 16, 32, 3, 3)],
     [h.make_tensor_value_info("x", T.FLOAT, [1, 8, 40, 40])],
     ["a", "side", "y"], "fast_side.onnx")


# runtime/dnnl.c: a residual Add after the activation (U-Net's RSU
# blocks), fused as FusedConv's z_after: oneDNN's post-ops run the Relu,
# then the sum of Z, then (the second) another Relu; 12x12 pixels, too few
# for wino.c's U
resid = [
    h.make_node("Conv", ["x", "rw1", "rb1"], ["r1"], pads=[1, 1, 1, 1]),
    h.make_node("Relu", ["r1"], ["r1r"]),
    h.make_node("Add", ["r1r", "x"], ["s1"]),
    h.make_node("Conv", ["s1", "rw2", "rb2"], ["r2"], pads=[1, 1, 1, 1]),
    h.make_node("Relu", ["r2"], ["r2r"]),
    h.make_node("Add", ["s1", "r2r"], ["s2"]),
    h.make_node("Relu", ["s2"], ["y"]),
]
save(resid, [ws("rw1", 16, 16, 3, 3), w("rb1", 16), ws("rw2", 16, 16, 3, 3),
             w("rb2", 16)],
     [h.make_tensor_value_info("x", T.FLOAT, [1, 16, 12, 12])], ["y"],
     "fast_residual.onnx")


# runtime/chanwise.c chan_resize: dnnl_fast_resize's linear Resize in
# either layout.  One-channel planes (two images): up by sizes to lengths
# no whole factor of the input's, pytorch_half_pixel down, x2 by scales,
# H down and W up, an output row of one (half_pixel), and one of enough
# work for 2 threads (each thread's rows start mid-plane); 4 channels
# row-major (pytorch_half_pixel); 32 channels NHWC between convolutions,
# up by sizes, the second by enough for 2 threads
lerp = [
    h.make_node("Resize", ["x", "", "", "lz_up"], ["lerp_up"],
                mode="linear"),
    h.make_node("Resize", ["x", "", "", "lz_down"], ["lerp_pt_down"],
                mode="linear",
                coordinate_transformation_mode="pytorch_half_pixel"),
    h.make_node("Resize", ["x", "", "lup2"], ["lerp_x2"], mode="linear"),
    h.make_node("Resize", ["x", "", "", "lz_mix"], ["lerp_mix"],
                mode="linear"),
    h.make_node("Resize", ["x", "", "", "lz_one"], ["lerp_one"],
                mode="linear"),
    h.make_node("Resize", ["x", "", "", "lz_big"], ["lerp_big"],
                mode="linear"),
    h.make_node("Resize", ["z", "", "", "lz_planes"], ["lerp_planes"],
                mode="linear",
                coordinate_transformation_mode="pytorch_half_pixel"),
    h.make_node("Conv", ["z", "lw1"], ["za"], pads=[1, 1, 1, 1]),
    h.make_node("Resize", ["za", "", "", "lz_nhwc"], ["zr"], mode="linear"),
    h.make_node("Conv", ["zr", "lw2"], ["lerp_nhwc"], pads=[1, 1, 1, 1]),
    h.make_node("Resize", ["za", "", "", "lz_nhwc_big"], ["zb"],
                mode="linear"),
    h.make_node("Conv", ["zb", "lw3"], ["lerp_nhwc_big"]),
]
save(lerp, [nh.from_array(np.array([2, 1, 32, 27], np.int64), "lz_up"),
            nh.from_array(np.array([2, 1, 3, 4], np.int64), "lz_down"),
            nh.from_array(np.array([1, 1, 2, 2], np.float32), "lup2"),
            nh.from_array(np.array([2, 1, 5, 20], np.int64), "lz_mix"),
            nh.from_array(np.array([2, 1, 1, 9], np.int64), "lz_one"),
            nh.from_array(np.array([2, 1, 257, 161], np.int64), "lz_big"),
            nh.from_array(np.array([1, 4, 4, 9], np.int64), "lz_planes"),
            ws("lw1", 32, 4, 3, 3),
            nh.from_array(np.array([1, 32, 13, 11], np.int64), "lz_nhwc"),
            ws("lw2", 1, 32, 3, 3),
            nh.from_array(np.array([1, 32, 130, 127], np.int64),
                          "lz_nhwc_big"),
            ws("lw3", 4, 32, 1, 1)],
     [h.make_tensor_value_info("x", T.FLOAT, [2, 1, 7, 9]),
      h.make_tensor_value_info("z", T.FLOAT, [1, 4, 6, 5])],
     [n.output[0] for n in lerp if n.output[0].startswith("lerp")],
     "fast_lerp.onnx")


# runtime/chanwise.c chan_few_conv: Conv to at most 8 channels, at least
# 32 input channels an output channel, reading X channels-last (oneDNN
# pads its outputs to 16): from 100 channels (six vectors of 16 lanes, 4
# one at a time), stride 2 with uneven pads and a bias, dilation 2 with
# no bias; from 80 (four vectors of lanes and one more), enough work for
# 2 threads; and stride 2 on the row-major graph input of 64 channels
# (direct.c takes stride 1 only), its channels 143 apart.  16 channels to
# 4 (a text detector's neck) is direct.c's, X reordered to row-major.
few = [
    h.make_node("Conv", ["x", "fw1", "fb1"], ["fa"], pads=[1, 1, 1, 1]),
    h.make_node("Conv", ["fa", "fw2", "fb2"], ["few_stride"],
                strides=[2, 2], pads=[1, 0, 2, 1]),
    h.make_node("Conv", ["fa", "fw3"], ["few_dilated"], dilations=[2, 2],
                pads=[2, 2, 2, 2]),
    h.make_node("Conv", ["x", "fw4"], ["fa80"], pads=[1, 1, 1, 1]),
    h.make_node("Conv", ["fa80", "fw5", "fb5"], ["few_80"],
                pads=[1, 1, 1, 1]),
    h.make_node("Conv", ["x", "fw6"], ["few_rows"], strides=[2, 2]),
    h.make_node("Conv", ["x", "fw7"], ["fa16"], pads=[1, 1, 1, 1]),
    h.make_node("Conv", ["fa16", "fw8"], ["few_narrow"], pads=[1, 1, 1, 1]),
]
save(few, [ws("fw1", 100, 64, 3, 3), w("fb1", 100),
           ws("fw2", 3, 100, 3, 3), w("fb2", 3), ws("fw3", 1, 100, 3, 3),
           ws("fw4", 80, 64, 3, 3), ws("fw5", 2, 80, 3, 3), w("fb5", 2),
           ws("fw6", 2, 64, 3, 3), ws("fw7", 16, 64, 3, 3),
           ws("fw8", 4, 16, 3, 3)],
     [h.make_tensor_value_info("x", T.FLOAT, [2, 64, 11, 13])],
     ["few_stride", "few_dilated", "few_80", "few_rows", "few_narrow"],
     "fast_fewconv.onnx")


# dnnl.c direct_jit's rules: a Conv of the 3-channel input on 2 images of
# 200x200, to 16 channels (oneDNN's direct JIT kernel builds 10 times
# faster and runs as fast) and to 32 (its brgemm one runs faster), both
# to 2x100x100 pixels; then from those 32 channels a window of the whole
# height, to one row of 50 pixels an image (a recognizer's sequence:
# direct JIT again, at most 2^14 pixels over both images), and a 3x3 Conv
# to 2x50x50 pixels (square images in a batch: brgemm, which runs them
# faster and builds fast there)
stems = [
    h.make_node("Conv", ["x", "sw16"], ["stem16"], pads=[1, 1, 1, 1],
                strides=[2, 2]),
    h.make_node("Conv", ["x", "sw32", "sb32"], ["stem32"], pads=[1, 1, 1, 1],
                strides=[2, 2]),
    h.make_node("Conv", ["stem32", "rw32"], ["row32"], pads=[0, 1, 0, 1],
                strides=[1, 2]),
    h.make_node("Conv", ["stem32", "mw32"], ["mid32"], pads=[1, 1, 1, 1],
                strides=[2, 2]),
]
save(stems, [ws("sw16", 16, 3, 3, 3), ws("sw32", 32, 3, 3, 3), w("sb32", 32),
             ws("rw32", 32, 32, 100, 3), ws("mw32", 32, 32, 3, 3)],
     [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 200, 200])],
     ["stem16", "row32", "mid32"], "fast_stems.onnx")


# chanwise.c's 1x1 Conv (chan.pwconv) in both layouts and on one pixel:
# on the row-major input, 20 -> 21 channels
# over 9x7 pixels (a tail of 15 pixels after 48, and of 5 output channels
# after 16); between two 3x3 Convs, NHWC, 32 -> 52 with HardSwish and
# 52 -> 100 with LeakyRelu, no bias (tails of 4 channels after whole
# panels of 48, and of 6 pixels after 15 tiles of 8 over 2 images); and a
# squeeze-excite pair after a GlobalAveragePool, 32 -> 20 with Relu and
# 20 -> 32 with Sigmoid, on 2 images of one pixel; 64 -> 128 on 5x5
# pixels between two more 3x3 Convs (panels of 64, a tail of one row)
pw = [
    h.make_node("Conv", ["x", "pw_rw", "pw_rb"], ["pw_rows"]),
    h.make_node("Conv", ["x", "pw_w1"], ["pw_a"], pads=[1, 1, 1, 1]),
    h.make_node("Conv", ["pw_a", "pw_w2", "pw_b2"], ["pw_b"]),
    h.make_node("HardSwish", ["pw_b"], ["pw_bh"]),
    h.make_node("Conv", ["pw_bh", "pw_w3"], ["pw_c"]),
    h.make_node("LeakyRelu", ["pw_c"], ["pw_cl"], alpha=0.1),
    h.make_node("Conv", ["pw_cl", "pw_w4"], ["pw_y"], pads=[1, 1, 1, 1]),
    h.make_node("GlobalAveragePool", ["pw_a"], ["pw_g"]),
    h.make_node("Conv", ["pw_g", "pw_f1", "pw_fb1"], ["pw_f"]),
    h.make_node("Relu", ["pw_f"], ["pw_fr"]),
    h.make_node("Conv", ["pw_fr", "pw_f2", "pw_fb2"], ["pw_s"]),
    h.make_node("Sigmoid", ["pw_s"], ["pw_fc"]),
    h.make_node("Conv", ["x2", "pw_w5"], ["pw_d"], pads=[1, 1, 1, 1]),
    h.make_node("Conv", ["pw_d", "pw_w6", "pw_b6"], ["pw_e"]),
    h.make_node("Conv", ["pw_e", "pw_w7"], ["pw_z"], pads=[1, 1, 1, 1]),
]
save(pw, [ws("pw_rw", 21, 20, 1, 1), w("pw_rb", 21),
          ws("pw_w1", 32, 20, 3, 3), ws("pw_w2", 52, 32, 1, 1),
          w("pw_b2", 52), ws("pw_w3", 100, 52, 1, 1),
          ws("pw_w4", 16, 100, 3, 3), ws("pw_f1", 20, 32, 1, 1),
          w("pw_fb1", 20), ws("pw_f2", 32, 20, 1, 1), w("pw_fb2", 32),
          ws("pw_w5", 64, 16, 3, 3), ws("pw_w6", 128, 64, 1, 1),
          w("pw_b6", 128), ws("pw_w7", 8, 128, 3, 3)],
     [h.make_tensor_value_info("x", T.FLOAT, [2, 20, 9, 7]),
      h.make_tensor_value_info("x2", T.FLOAT, [1, 16, 5, 5])],
     ["pw_rows", "pw_y", "pw_fc", "pw_z"], "fast_pw.onnx")


# runtime/wino.c's 3x3 Conv (chan.wino): on the row-major input, 20 -> 40
# channels with a bias and HardSwish (tails of 4 and 8 lanes); then NHWC,
# 2 groups of 20 -> 24 dilated 2 down and 1 across, no bias, LeakyRelu;
# then 2 groups of 24 -> 16, uneven pads, Relu (applied in registers),
# into a row-major tensor (the Flatten's); 2 images of 20x19 (tiles cut
# by both edges)
wino = [
    h.make_node("Conv", ["x", "wi_w1", "wi_b1"], ["wi_a"], pads=[1, 1, 1, 1]),
    h.make_node("HardSwish", ["wi_a"], ["wi_ah"]),
    h.make_node("Conv", ["wi_ah", "wi_w2"], ["wi_b"], group=2,
                dilations=[2, 1], pads=[2, 1, 2, 1]),
    h.make_node("LeakyRelu", ["wi_b"], ["wi_bl"], alpha=0.1),
    h.make_node("Conv", ["wi_bl", "wi_w3", "wi_b3"], ["wi_c"], group=2,
                pads=[0, 1, 2, 0]),
    h.make_node("Relu", ["wi_c"], ["wi_cr"]),
    h.make_node("Flatten", ["wi_cr"], ["wi_y"]),
]
save(wino, [ws("wi_w1", 40, 20, 3, 3), w("wi_b1", 40),
            ws("wi_w2", 48, 20, 3, 3), ws("wi_w3", 32, 24, 3, 3),
            w("wi_b3", 32)],
     [h.make_tensor_value_info("x", T.FLOAT, [2, 20, 20, 19])],
     ["wi_bl", "wi_y"], "fast_wino.onnx")


# oneDNN's bidirectional cells (bidirectional_concat, its [T, B, 2, H]
# put in ONNX's [T, 2, B, H]): GRU linear-before-reset with initial
# state and bias (Y, Y_h), GRU (Y read by nothing), LSTM with both initial
# states (Y, Y_h, Y_c), RNN (Y alone)
birnn = [
    h.make_node("GRU", ["bq", "bgw", "bgr", "bgb", "", "bh0"],
                ["bgru_y", "bgru_h"], hidden_size=H_, linear_before_reset=1,
                direction="bidirectional"),
    h.make_node("GRU", ["bq", "bgw", "bgr"], ["bgru0_y", "bgru0_h"],
                hidden_size=H_, direction="bidirectional"),
    h.make_node("LSTM", ["bq", "blw", "blr", "blb", "", "bh0", "bc0"],
                ["blstm_y", "blstm_h", "blstm_c"], hidden_size=H_,
                direction="bidirectional"),
    h.make_node("RNN", ["bq", "brw", "brr", "brb"], ["brnn_y"],
                hidden_size=H_, direction="bidirectional"),
]
save(birnn, [ws("bgw", 2, 3 * H_, I_), ws("bgr", 2, 3 * H_, H_),
             w("bgb", 2, 6 * H_), ws("blw", 2, 4 * H_, I_),
             ws("blr", 2, 4 * H_, H_), w("blb", 2, 8 * H_),
             ws("brw", 2, H_, I_), ws("brr", 2, H_, H_), w("brb", 2, 2 * H_)],
     [h.make_tensor_value_info("bq", T.FLOAT, [T_, B_, I_]),
      h.make_tensor_value_info("bh0", T.FLOAT, [2, B_, H_]),
      h.make_tensor_value_info("bc0", T.FLOAT, [2, B_, H_])],
     [o for n in birnn for o in n.output if o != "bgru0_y"],
     "fast_birnn.onnx")


# runtime/direct.c's Softmax and LogSoftmax on any axis: the last (rows
# of 37, a vector and a tail), axis 1 of [2, 5, 7, 3] (21 floats inner),
# axis 0 (17 inner), axis 2 of [3, 4, 40, 2]; the inputs scaled by 30 so
# that exps span far more than float's range
def softmaxes(pre):
    return [
        h.make_node("Mul", [pre + "a", "s30"], [pre + "a30"]),
        h.make_node("Softmax", [pre + "a30"], [pre + "sm_last"], axis=-1),
        h.make_node("LogSoftmax", [pre + "a30"], [pre + "lsm_last"]),
        h.make_node("Softmax", [pre + "b"], [pre + "sm_ax1"], axis=1),
        h.make_node("LogSoftmax", [pre + "b"], [pre + "lsm_ax1"], axis=1),
        h.make_node("LogSoftmax", [pre + "a30"], [pre + "lsm_ax0"], axis=0),
        h.make_node("Softmax", [pre + "c"], [pre + "sm_ax2"], axis=2),
    ]


for pre, opset in (("", 13), ("o11_", 11)):
    sm = softmaxes(pre)
    save(sm, [nh.from_array(np.array(30, np.float32), "s30")],
         [h.make_tensor_value_info(pre + "a", T.FLOAT, [17, 37]),
          h.make_tensor_value_info(pre + "b", T.FLOAT, [2, 5, 7, 3]),
          h.make_tensor_value_info(pre + "c", T.FLOAT, [3, 4, 40, 2])],
         [o for n in sm[1:] for o in n.output],
         "fast_softmax%s.onnx" % ("" if opset == 13 else "11"), opset)


# runtime/ew.c: float binary ops at numpy broadcasts ([2,3,4,5] with
# [3,1,5], [5] and a scalar first) and comparisons (Cast to float), the
# unary math and activation ops; 35 nodes a fast path takes
def bcast_and_unary():
    bin_ = [
        h.make_node("Add", ["ea", "eb"], ["e_add"]),
        h.make_node("Sub", ["e_k", "ea"], ["e_rsub"]),
        h.make_node("Mul", ["ea", "ec"], ["e_mul"]),
        h.make_node("Div", ["eb", "ea"], ["e_div"]),
        h.make_node("Max", ["ea", "eb"], ["e_max"]),
        h.make_node("Min", ["ec", "ea"], ["e_min"]),
        h.make_node("Pow", ["ea", "eb"], ["e_pow"]),
        h.make_node("Greater", ["ea", "eb"], ["e_gt_b"]),
        h.make_node("Cast", ["e_gt_b"], ["e_gt"], to=T.FLOAT),
        h.make_node("LessOrEqual", ["ec", "ea"], ["e_le_b"]),
        h.make_node("Cast", ["e_le_b"], ["e_le"], to=T.FLOAT),
    ]
    un = [(op, {}) for op in (
        "Tanh", "Elu", "Selu", "Softplus", "HardSigmoid", "HardSwish",
        "Mish", "Reciprocal", "Softsign", "Round", "Sign", "Sin", "Cos",
        "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh")]
    un += [("LeakyRelu", {"alpha": 0.1}), ("Celu", {"alpha": 0.7}),
           ("ThresholdedRelu", {"alpha": 0.2})]
    nodes = bin_ + [h.make_node("Mul", ["ea", "e_3"], ["ea3"])]
    outs = [n.output[0] for n in bin_ if not n.output[0].endswith("_b")]
    for op, at in un:
        nodes.append(h.make_node(op, ["ea"], ["e_" + op.lower()], **at))
        outs.append("e_" + op.lower())
    nodes += [h.make_node("Floor", ["ea3"], ["e_floor"]),
              h.make_node("Ceil", ["ea3"], ["e_ceil"]),
              h.make_node("Clip", ["ea", "e_lo", "e_hi"], ["e_clip"])]
    outs += ["e_floor", "e_ceil", "e_clip"]
    return nodes, outs


ew_nodes, ew_outs = bcast_and_unary()
save(ew_nodes, [nh.from_array(np.array([1.5], np.float32), "e_k"),
                nh.from_array(np.array(3, np.float32), "e_3"),
                nh.from_array(np.array(-0.5, np.float32), "e_lo"),
                nh.from_array(np.array(0.5, np.float32), "e_hi")],
     [h.make_tensor_value_info("ea", T.FLOAT, [2, 3, 4, 5]),
      h.make_tensor_value_info("eb", T.FLOAT, [3, 1, 5]),
      h.make_tensor_value_info("ec", T.FLOAT, [5])],
     ew_outs, "fast_ew.onnx")


# runtime/wino.c's 3x3 Conv with a residual (FusedConv's Z), as ResNets
# write it: Relu(Conv + a) (z_after 0, Z channels-last, dead after: Y may
# take its buffer), Relu(Conv) + s1 (z_after 1), and Relu(Conv + x) with
# x, the row-major graph input, as Z into the row-major output; 24
# channels (a tail of 8 lanes), 2 images of 20x19 (tiles the edges cut)
wres = [
    h.make_node("Conv", ["x", "wr_w1", "wr_b1"], ["wr_c1"], pads=[1, 1, 1, 1]),
    h.make_node("Relu", ["wr_c1"], ["wr_a"]),
    h.make_node("Conv", ["wr_a", "wr_w2", "wr_b2"], ["wr_c2"],
                pads=[1, 1, 1, 1]),
    h.make_node("Relu", ["wr_c2"], ["wr_b"]),
    h.make_node("Conv", ["wr_b", "wr_w3"], ["wr_c3"], pads=[1, 1, 1, 1]),
    h.make_node("Add", ["wr_c3", "wr_a"], ["wr_s1p"]),
    h.make_node("Relu", ["wr_s1p"], ["wr_s1"]),
    h.make_node("Conv", ["wr_s1", "wr_w4", "wr_b4"], ["wr_c4"],
                pads=[1, 1, 1, 1]),
    h.make_node("Relu", ["wr_c4"], ["wr_c"]),
    h.make_node("Conv", ["wr_c", "wr_w5", "wr_b5"], ["wr_c5"],
                pads=[1, 1, 1, 1]),
    h.make_node("Relu", ["wr_c5"], ["wr_c5r"]),
    h.make_node("Add", ["wr_s1", "wr_c5r"], ["wr_s2"]),
    h.make_node("Conv", ["wr_s2", "wr_w6", "wr_b6"], ["wr_c6"],
                pads=[1, 1, 1, 1]),
    h.make_node("Add", ["wr_c6", "x"], ["wr_yp"]),
    h.make_node("Relu", ["wr_yp"], ["wr_y"]),
]
save(wres, [ws("wr_w1", 24, 24, 3, 3), w("wr_b1", 24),
            ws("wr_w2", 24, 24, 3, 3), w("wr_b2", 24),
            ws("wr_w3", 24, 24, 3, 3), ws("wr_w4", 24, 24, 3, 3),
            w("wr_b4", 24), ws("wr_w5", 24, 24, 3, 3), w("wr_b5", 24),
            ws("wr_w6", 24, 24, 3, 3), w("wr_b6", 24)],
     [h.make_tensor_value_info("x", T.FLOAT, [2, 24, 20, 19])],
     ["wr_y"], "fast_wino_res.onnx")


# runtime/direct.c's Transpose between layouts, as a ConvNeXt block
# writes it: depthwise Conv -> Transpose to NHWC -> LayerNorm -> Linear,
# Relu, Linear -> Transpose back -> per-channel scale -> + the block's
# input -> depthwise Conv.  The Convs' tensors channels-last, each
# Transpose a copy of those bytes: no reorder anywhere
cl = [
    h.make_node("Conv", ["x", "cl_w0"], ["cl_a"], pads=[1, 1, 1, 1]),
    h.make_node("Conv", ["cl_a", "cl_dw", "cl_db"], ["cl_c"], group=32,
                pads=[3, 3, 3, 3]),
    h.make_node("Transpose", ["cl_c"], ["cl_t"], perm=[0, 2, 3, 1]),
    h.make_node("LayerNormalization", ["cl_t", "cl_g", "cl_b"], ["cl_ln"],
                axis=-1, epsilon=1e-6),
    h.make_node("MatMul", ["cl_ln", "cl_m1"], ["cl_h"]),
    h.make_node("Relu", ["cl_h"], ["cl_hr"]),
    h.make_node("MatMul", ["cl_hr", "cl_m2"], ["cl_o"]),
    h.make_node("Transpose", ["cl_o"], ["cl_ot"], perm=[0, 3, 1, 2]),
    h.make_node("Mul", ["cl_ot", "cl_gamma"], ["cl_s"]),
    h.make_node("Add", ["cl_a", "cl_s"], ["cl_r"]),
    h.make_node("Conv", ["cl_r", "cl_dw2"], ["cl_y"], group=32,
                pads=[1, 1, 1, 1]),
]
save(cl, [ws("cl_w0", 32, 8, 3, 3), ws("cl_dw", 32, 1, 7, 7),
          w("cl_db", 32), w("cl_g", 32), w("cl_b", 32),
          ws("cl_m1", 32, 64), ws("cl_m2", 64, 32), w("cl_gamma", 32, 1, 1),
          ws("cl_dw2", 32, 1, 3, 3)],
     [h.make_tensor_value_info("x", T.FLOAT, [2, 8, 14, 13])],
     ["cl_y"], "fast_cl.onnx")


# A ShuffleNet unit's channel ops in either layout: a channel shuffle of
# 2 groups (Reshape, Transpose, Reshape: passes/fuse.c makes it a Gather
# of the channels, runtime/chanwise.c interleaves two streams), Slices of
# the channel halves, a Concat, a shuffle of 3 groups (the Gather's
# general path), a Split of the channels; the convolutions around them
# keep every tensor channels-last
def shuffle(x, g, c, hw, tag):
    return [h.make_node("Reshape", [x, f"sh_s{tag}"], [f"sh_r{tag}"]),
            h.make_node("Transpose", [f"sh_r{tag}"], [f"sh_t{tag}"],
                        perm=[0, 2, 1, 3, 4]),
            h.make_node("Reshape", [f"sh_t{tag}", f"sh_b{tag}"],
                        [f"sh_y{tag}"])], [
        nh.from_array(np.array([2, g, c // g, *hw], np.int64), f"sh_s{tag}"),
        nh.from_array(np.array([2, c, *hw], np.int64), f"sh_b{tag}")]


def i64(name, *v):
    return nh.from_array(np.array(v, np.int64), name)


s1, c1 = shuffle("sh_a", 2, 24, [10, 9], 1)
s2, c2 = shuffle("sh_c", 3, 24, [10, 9], 2)
shn = ([h.make_node("Conv", ["x", "sh_w1"], ["sh_a"], pads=[1, 1, 1, 1])] +
       s1 +
       [h.make_node("Slice", ["sh_y1", "sh_0", "sh_12", "sh_ax"], ["sh_l"]),
        h.make_node("Slice", ["sh_y1", "sh_12", "sh_24", "sh_ax"],
                    ["sh_h"]),
        h.make_node("Conv", ["sh_h", "sh_w2"], ["sh_hc"]),
        h.make_node("Relu", ["sh_hc"], ["sh_hr"]),
        h.make_node("Concat", ["sh_l", "sh_hr"], ["sh_c"], axis=1)] +
       s2 +
       [h.make_node("Split", ["sh_y2", "sh_sp"], ["sh_p", "sh_q"], axis=1),
        h.make_node("Conv", ["sh_p", "sh_w3"], ["sh_y"], pads=[1, 1, 1, 1]),
        h.make_node("Conv", ["sh_q", "sh_w4"], ["sh_z"], pads=[1, 1, 1, 1])])
save(shn, [ws("sh_w1", 24, 24, 3, 3), ws("sh_w2", 12, 12, 1, 1),
           ws("sh_w3", 16, 10, 3, 3), ws("sh_w4", 16, 14, 3, 3),
           i64("sh_0", 0), i64("sh_12", 12), i64("sh_24", 24), i64("sh_ax", 1),
           i64("sh_sp", 10, 14)] + c1 + c2,
     [h.make_tensor_value_info("x", T.FLOAT, [2, 24, 10, 9])],
     ["sh_y", "sh_z"], "fast_shuffle.onnx")

# the upsampling of U-Nets (runtime/direct.c deconv_product: a
# ConvTranspose whose kernel is its stride, as one matrix product) with
# the Relu and the Sigmoid applied after it, a 3x3 stride-3 one of one
# input channel, and the 2x2 MaxPool and AveragePool between their
# blocks (row-major, whole windows: chanwise.c's row loop)
up_rng = np.random.default_rng(31)


def wu(name, *shape):
    return nh.from_array(up_rng.standard_normal(shape).astype(np.float32),
                         name)


up = [
    h.make_node("ConvTranspose", ["x", "up_w1", "up_b1"], ["up_r_in"],
                strides=[2, 2], kernel_shape=[2, 2]),
    h.make_node("Relu", ["up_r_in"], ["up_relu"]),
    h.make_node("ConvTranspose", ["x", "up_w2", "up_b2"], ["up_s_in"],
                strides=[3, 3]),
    h.make_node("Sigmoid", ["up_s_in"], ["up_sigmoid"]),
    h.make_node("ConvTranspose", ["x1", "up_w3"], ["up_one"],
                strides=[3, 3]),
    h.make_node("MaxPool", ["x"], ["up_max"], kernel_shape=[2, 2],
                strides=[2, 2]),
    h.make_node("AveragePool", ["x"], ["up_avg"], kernel_shape=[2, 2],
                strides=[2, 2]),
]
save(up, [wu("up_w1", 16, 16, 2, 2), wu("up_b1", 16),
          wu("up_w2", 16, 8, 3, 3), wu("up_b2", 8), wu("up_w3", 1, 32, 3, 3)],
     [h.make_tensor_value_info("x", T.FLOAT, [2, 16, 11, 30]),
      h.make_tensor_value_info("x1", T.FLOAT, [1, 1, 7, 5])],
     ["up_relu", "up_sigmoid", "up_one", "up_max", "up_avg"],
     "fast_upsample.onnx")


# runtime/wino.c's items split by output channels: one image of 16x16
# (16 tiles, one item of tiles), 48 -> 100 channels (panels of 48: parts
# of 96 and 4 channels at 2 threads), a bias and Relu; U 7 times Y, so
# wino.c's at every ISA level
parts = [
    h.make_node("Conv", ["x", "wp_w", "wp_b"], ["wp_c"], pads=[1, 1, 1, 1]),
    h.make_node("Relu", ["wp_c"], ["wp_y"]),
]
save(parts, [ws("wp_w", 100, 48, 3, 3), w("wp_b", 100)],
     [h.make_tensor_value_info("x", T.FLOAT, [1, 48, 16, 16])],
     ["wp_y"], "fast_wino_parts.onnx")

# DenseNet's Concat -> BatchNormalization (-> Relu), which the concat takes
# in (runtime/chanwise.c chan_concat_batchnorm): of two Convs' outputs
# (channels-last, then a 1x1 Conv), and of the graph inputs (row-major,
# with and without Relu); statistics with a -0 scale and bias, a mean of
# 1e30 and a negative variance (NaN)
def bn_stats(p, c):
    scale = rng.standard_normal(c).astype(np.float32)
    scale[1] = -0.0
    mean = (rng.standard_normal(c) * 0.1).astype(np.float32)
    mean[2] = 1e30
    var = np.abs(rng.standard_normal(c)).astype(np.float32) + 0.1
    var[3] = -1.0
    bias = rng.standard_normal(c).astype(np.float32)
    bias[1] = -0.0  # with the -0 scale: -0 out for x > 0
    return [nh.from_array(a, p + n) for a, n in
            ((scale, "_s"), (bias, "_b"), (mean, "_m"), (var, "_v"))]


def bn(p, x, y):
    return h.make_node("BatchNormalization",
                       [x, p + "_s", p + "_b", p + "_m", p + "_v"], [y],
                       epsilon=1e-3)


cat_bn = [
    h.make_node("Conv", ["x", "cb_w1"], ["cb_c1"]),
    h.make_node("Conv", ["x", "cb_w2"], ["cb_c2"], pads=[1, 1, 1, 1]),
    h.make_node("Concat", ["cb_c1", "cb_c2"], ["cb_cat1"], axis=1),
    bn("cb_n1", "cb_cat1", "cb_bn1"),
    h.make_node("Relu", ["cb_bn1"], ["cb_r1"]),
    h.make_node("Conv", ["cb_r1", "cb_w3"], ["cb_y1"]),
    h.make_node("Concat", ["x", "xb"], ["cb_cat2"], axis=1),
    bn("cb_n2", "cb_cat2", "cb_y2"),
    h.make_node("Concat", ["xb", "x"], ["cb_cat3"], axis=1),
    bn("cb_n3", "cb_cat3", "cb_bn3"),
    h.make_node("Relu", ["cb_bn3"], ["cb_y3"]),
    # two Convs' outputs that die at the Concat, and a big one before
    # them that died: the plan may put the BatchNormalization's output
    # over them (then the concat must not write it)
    h.make_node("Conv", ["x", "cb_w4"], ["cb_big"], pads=[1, 1, 1, 1]),
    h.make_node("Conv", ["cb_big", "cb_w5"], ["cb_d1"]),
    h.make_node("Conv", ["cb_d1", "cb_w6"], ["cb_d2"]),
    h.make_node("Concat", ["cb_d1", "cb_d2"], ["cb_cat4"], axis=1),
    bn("cb_n4", "cb_cat4", "cb_bn4"),
    h.make_node("Relu", ["cb_bn4"], ["cb_r4"]),
    h.make_node("Conv", ["cb_r4", "cb_w7"], ["cb_y4"]),
]
save(cat_bn, [ws("cb_w1", 4, 8, 1, 1), ws("cb_w2", 12, 8, 3, 3),
              ws("cb_w3", 5, 16, 1, 1), ws("cb_w4", 64, 8, 3, 3),
              ws("cb_w5", 16, 64, 1, 1), ws("cb_w6", 16, 16, 1, 1),
              ws("cb_w7", 5, 32, 1, 1)] + bn_stats("cb_n1", 16) +
     bn_stats("cb_n2", 12) + bn_stats("cb_n3", 12) + bn_stats("cb_n4", 32),
     [h.make_tensor_value_info("x", T.FLOAT, [2, 8, 6, 5]),
      h.make_tensor_value_info("xb", T.FLOAT, [2, 4, 6, 5])],
     ["cb_y1", "cb_y2", "cb_y3", "cb_y4"], "fast_cat_bn.onnx")
