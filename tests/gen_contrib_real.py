#!/usr/bin/python3
"""tests/gen_contrib_real.py - two models written the way ONNX Runtime's
own tools write them, with random weights, for tests/test_contrib.c
(added to tests/fixtures/contrib/cases.txt by tests/gen_contrib_models.py,
which imports this file):

  zoo_qcnn   an int8 CNN as onnxruntime.quantization's QOperator format
             writes the model zoo's int8 models (ResNet, MobileNet,
             SqueezeNet -int8): QuantizeLinear at the input, QLinearConv
             (with int32 bias), QLinearLeakyRelu and QLinearSigmoid,
             QLinearAdd for the residual, QLinearConcat of two branches,
             QLinearAveragePool, QLinearGlobalAveragePool, a Reshape,
             QGemm and QLinearMatMul heads, QLinearSoftmax, and
             DequantizeLinear at the outputs; input [batch, 3, 32, 32]
  bert_opt   a BERT encoder as onnxruntime.transformers' optimizer
             writes one (optimize_model(model_type="bert")):
             EmbedLayerNormalization (word, position and segment
             embeddings, the attention mask's mask_index), then per
             layer Attention (merged QKV weights, the mask_index),
             MatMul, SkipLayerNormalization (the output bias as its
             bias), MatMul, FastGelu with its bias (BiasGelu in the
             second layer), MatMul, SkipLayerNormalization; a pooler
             (Gather of the first token, MatMul, Add, Tanh); inputs
             input_ids, segment_ids, input_mask [batch, seq] int32

Each is compiled at several gears (batch, and batch x sequence) and
checked at two of them against ONNX Runtime."""
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

MS = "com.microsoft"


def qparams(rng, x):
    """uint8 scale and zero point covering x (asymmetric, as the
    quantizer's calibration with MinMax)."""
    lo, hi = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    s = (hi - lo) / 255 or 1.0
    return np.float32(s), np.uint8(round(-lo / s))


def zoo_qcnn(rng):
    """The int8 CNN: (nodes, inits, input name, output names)."""
    nodes, inits = [], {}

    def init(name, v):
        inits[name] = v
        return name

    def qp(name, s, z, dt=np.uint8):
        init(name + "_s", np.float32(s))
        init(name + "_z", np.array(z, dt))
        return name + "_s", name + "_z"

    def qconv(name, x, xq, cin, cout, k, stride=1, pad=None, group=1):
        pad = k // 2 if pad is None else pad
        w = rng.integers(-100, 100, (cout, cin // group, k, k)).astype(np.int8)
        ws = (rng.random(cout) * 0.004 + 0.002).astype(np.float32)
        init(name + "_w", w)
        init(name + "_ws", ws)
        init(name + "_wz", np.zeros(cout, np.int8))
        init(name + "_b", rng.integers(-2000, 2000, cout).astype(np.int32))
        yq = qp(name + "_y", 0.06, 128)
        nodes.append(h.make_node(
            "QLinearConv", [x, xq[0], xq[1], name + "_w", name + "_ws",
                            name + "_wz", yq[0], yq[1], name + "_b"],
            [name], kernel_shape=[k, k], strides=[stride, stride],
            pads=[pad] * 4, group=group, name=name))
        return name, yq

    x0q = qp("x", 0.02, 128)
    nodes.append(h.make_node("QuantizeLinear", ["x", x0q[0], x0q[1]],
                             ["xq"], name="quant_x"))
    c1, q1 = qconv("conv1", "xq", x0q, 3, 16, 3, stride=2)
    a1q = qp("act1", 0.03, 30)
    nodes.append(h.make_node("QLinearLeakyRelu", [c1, q1[0], q1[1], a1q[0],
                                                  a1q[1]], ["act1"],
                             domain=MS, alpha=0.1, name="act1"))
    c2, q2 = qconv("conv2", "act1", a1q, 16, 16, 3)
    c3, q3 = qconv("conv3", c2, q2, 16, 16, 3, group=4)
    addq = qp("res", 0.07, 120)
    nodes.append(h.make_node("QLinearAdd", ["act1", a1q[0], a1q[1], c3,
                                            q3[0], q3[1], addq[0], addq[1]],
                             ["res"], domain=MS, name="res"))
    b1, bq1 = qconv("branch1", "res", addq, 16, 8, 1, pad=0)
    b2, bq2 = qconv("branch2", "res", addq, 16, 8, 3)
    sq = qp("sig", 1 / 256, 0)
    nodes.append(h.make_node("QLinearSigmoid", [b2, bq2[0], bq2[1], sq[0],
                                                sq[1]], ["sig"], domain=MS,
                             name="sig"))
    catq = qp("cat", 0.05, 100)
    nodes.append(h.make_node("QLinearConcat", [catq[0], catq[1], b1, bq1[0],
                                               bq1[1], "sig", sq[0], sq[1]],
                             ["cat"], domain=MS, axis=1, name="cat"))
    poolq = qp("pool", 0.05, 100)
    nodes.append(h.make_node("QLinearAveragePool", ["cat", catq[0], catq[1],
                                                    poolq[0], poolq[1]],
                             ["pool"], domain=MS, kernel_shape=[2, 2],
                             strides=[2, 2], name="pool"))
    c4, q4 = qconv("conv4", "pool", poolq, 16, 32, 3)
    gq = qp("gap", 0.04, 110)
    nodes.append(h.make_node("QLinearGlobalAveragePool",
                             [c4, q4[0], q4[1], gq[0], gq[1]], ["gap"],
                             domain=MS, channels_last=0, name="gap"))
    init("flat_shape", np.array([0, -1], np.int64))
    nodes.append(h.make_node("Reshape", ["gap", "flat_shape"], ["flat"],
                             name="flatten"))
    # the classifier as QGemm (transB, int32 bias) and QLinearMatMul
    init("fc_w", rng.integers(-100, 100, (10, 32)).astype(np.int8))
    init("fc_ws", np.float32(0.004))
    init("fc_wz", np.array(0, np.int8))
    init("fc_b", rng.integers(-3000, 3000, 10).astype(np.int32))
    fcq = qp("fc", 0.05, 128)
    nodes.append(h.make_node("QGemm", ["flat", gq[0], gq[1], "fc_w", "fc_ws",
                                       "fc_wz", "fc_b", fcq[0], fcq[1]],
                             ["fc"], domain=MS, transB=1, name="fc"))
    init("mm_w", rng.integers(0, 256, (32, 5)).astype(np.uint8))
    init("mm_ws", np.float32(0.003))
    init("mm_wz", np.array(128, np.uint8))
    mmq = qp("mm", 0.05, 128)
    nodes.append(h.make_node("QLinearMatMul", ["flat", gq[0], gq[1], "mm_w",
                                               "mm_ws", "mm_wz", mmq[0],
                                               mmq[1]], ["mm"], name="mm"))
    smq = qp("prob", 1 / 256, 0)
    nodes.append(h.make_node("QLinearSoftmax", ["fc", fcq[0], fcq[1], smq[0],
                                                smq[1]], ["prob_q"],
                             domain=MS, axis=-1, opset=13, name="softmax"))
    nodes.append(h.make_node("DequantizeLinear", ["prob_q", smq[0], smq[1]],
                             ["prob"], name="dequant_prob"))
    nodes.append(h.make_node("DequantizeLinear", ["mm", mmq[0], mmq[1]],
                             ["emb"], name="dequant_emb"))
    return nodes, inits, "x", ["prob", "emb"]


def bert_opt(rng, vocab=64, hidden=32, heads=4, layers=2, inter=64,
             maxpos=40):
    """The optimizer's BERT: (nodes, inits, inputs, outputs)."""
    nodes, inits = [], {}

    def w(name, *shape, scale=0.08):
        inits[name] = (rng.standard_normal(shape) * scale).astype(np.float32)
        return name

    nodes.append(h.make_node(
        "EmbedLayerNormalization",
        ["input_ids", "segment_ids", w("word", vocab, hidden, scale=0.5),
         w("pos", maxpos, hidden, scale=0.5), w("seg", 2, hidden, scale=0.5),
         w("emb_g", hidden, scale=1), w("emb_b", hidden, scale=0.1),
         "input_mask"],
        ["emb", "mask_index"], domain=MS, epsilon=1e-12, name="embed"))
    x = "emb"
    for i in range(layers):
        p = "l%d_" % i
        nodes.append(h.make_node(
            "Attention", [x, w(p + "qkv_w", hidden, 3 * hidden),
                          w(p + "qkv_b", 3 * hidden), "mask_index"],
            [p + "attn"], domain=MS, num_heads=heads, name=p + "attention"))
        nodes.append(h.make_node("MatMul", [p + "attn",
                                            w(p + "o_w", hidden, hidden)],
                                 [p + "o"], name=p + "attn_out"))
        nodes.append(h.make_node(
            "SkipLayerNormalization", [p + "o", x, w(p + "ln1_g", hidden,
                                                     scale=1),
                                       w(p + "ln1_b", hidden, scale=0.1),
                                       w(p + "o_b", hidden)],
            [p + "ln1"], domain=MS, epsilon=1e-12, name=p + "ln1"))
        nodes.append(h.make_node("MatMul", [p + "ln1",
                                            w(p + "i_w", hidden, inter)],
                                 [p + "i"], name=p + "inter"))
        gelu = "FastGelu" if i % 2 == 0 else "BiasGelu"
        nodes.append(h.make_node(gelu, [p + "i", w(p + "i_b", inter)],
                                 [p + "gelu"], domain=MS, name=p + "gelu"))
        nodes.append(h.make_node("MatMul", [p + "gelu",
                                            w(p + "f_w", inter, hidden)],
                                 [p + "f"], name=p + "ffn_out"))
        nodes.append(h.make_node(
            "SkipLayerNormalization", [p + "f", p + "ln1",
                                       w(p + "ln2_g", hidden, scale=1),
                                       w(p + "ln2_b", hidden, scale=0.1),
                                       w(p + "f_b", hidden)],
            [p + "out"], domain=MS, epsilon=1e-12, name=p + "ln2"))
        x = p + "out"
    inits["first"] = np.array(0, np.int64)
    nodes.append(h.make_node("Gather", [x, "first"], ["cls"], axis=1,
                             name="pool_first"))
    nodes.append(h.make_node("MatMul", ["cls", w("pool_w", hidden, hidden)],
                             ["pool_mm"], name="pool_dense"))
    nodes.append(h.make_node("Add", ["pool_mm", w("pool_b", hidden)],
                             ["pool_add"], name="pool_bias"))
    nodes.append(h.make_node("Tanh", ["pool_add"], ["pooled"],
                             name="pool_tanh"))
    ins = [h.make_tensor_value_info(n, T.INT32, ["batch", "seq"])
           for n in ("input_ids", "segment_ids", "input_mask")]
    return nodes, inits, ins, [x, "pooled"]


def bert_inputs(rng, b, s, vocab=64):
    ids = rng.integers(1, vocab, (b, s)).astype(np.int32)
    seg = (np.arange(s)[None, :] >= s // 2).astype(np.int32).repeat(b, 0)
    mask = np.ones((b, s), np.int32)
    for i in range(b):  # right padding of each row after a few tokens
        mask[i, s - i * (s // 4):] = 0
    return {"input_ids": ids, "segment_ids": seg, "input_mask": mask}


def make_model(name, nodes, inits, ins, outs, directory):
    g = h.make_graph(nodes, name, ins,
                     [onnx.ValueInfoProto(name=o) for o in outs],
                     [nh.from_array(np.asarray(v), k)
                      for k, v in inits.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13),
                                       h.make_opsetid(MS, 1)],
                     producer_name="gen_contrib_real")
    m.ir_version = 7
    onnx.save(m, "%s/%s.onnx" % (directory, name))
