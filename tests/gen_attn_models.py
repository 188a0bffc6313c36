#!/usr/bin/python3
"""Fixtures for tests/test_attn.c: attention, GELU and LayerNorm as
exporters write them, into tests/fixtures/attn/.  Run from the repository
root (needs python3-torch 1.13 for the torch.onnx spellings; the near
misses are built with python3-onnx):
    /usr/bin/python3 tests/gen_attn_models.py

Each model takes x [B, S, 16] (and, where named, mask [B, S] int64, 1 for
a token, 0 for padding) and gives y [B, S, 16]; one attention layer of 2
heads of 8, or a feed-forward block.  The torch.onnx spellings, each
exported as torch 1.13 writes it (opset 14 unless named):
  hf_bert       Hugging Face BERT: Q K^T / sqrt(D) + (1 - mask) * -1e4
  hf_bert_o12   the same at opset 12 (Softmax's axis before opset 13)
  mul_scale     Q K^T * (1 / sqrt(D))
  mul_first     (1 / sqrt(D)) * Q K^T
  kt_direct     K^T as one permute(0, 2, 3, 1) of K's [B, S, H, D] view
  qk_scaled     Q * D^-1/4 and K * D^-1/4 before the product
  gpt2          Where(causal bias, S, finfo.min) + the padding mask
  nanogpt       masked_fill(bias == 0, -inf), no padding mask
  mha           nn.MultiheadAttention, batch_first, key_padding_mask
  mha_seq       nn.MultiheadAttention, sequence first, no mask
  ffn_erf       Linear, GELU (erf), Linear, residual, LayerNorm
  ffn_tanh      the same with GELU's tanh form
  ffn_o17       the erf one at opset 17 (LayerNormalization itself)
and near misses that must not become Sdpa (python3-onnx), static, x
[2, 2, 5, 8] three times as Q, K and V (y [2, 2, 5, 8]):
  miss_axis          Softmax over axis 2
  miss_mask_scaled   the mask added before the scale
  miss_scores_out    the scores are a graph output too
  miss_bcast         K of batch 1 broadcast against Q's B
  miss_band          Where of a band, not a causal triangle
"""
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = "tests/fixtures/attn"
E, H = 16, 2
D = E // H


def torch_models():
    import torch
    import torch.nn as nn

    torch.manual_seed(40)

    class Hand(nn.Module):
        def __init__(self, how):
            super().__init__()
            self.how = how
            self.q, self.k = nn.Linear(E, E), nn.Linear(E, E)
            self.v, self.o = nn.Linear(E, E), nn.Linear(E, E)

        def forward(self, x, mask):
            b, t, _ = x.shape
            q = self.q(x).view(b, t, H, D).transpose(1, 2)
            k = self.k(x).view(b, t, H, D)
            v = self.v(x).view(b, t, H, D).transpose(1, 2)
            kt = (k.permute(0, 2, 3, 1) if self.how == "kt_direct" else
                  k.transpose(1, 2).transpose(-1, -2))
            if self.how == "qk_scaled":
                a = torch.matmul(q * D ** -0.25, kt * D ** -0.25)
            elif self.how == "mul_scale":
                a = torch.matmul(q, kt) * (1.0 / math.sqrt(D))
            elif self.how == "mul_first":
                a = (1.0 / math.sqrt(D)) * torch.matmul(q, kt)
            else:
                a = torch.matmul(q, kt) / math.sqrt(D)
            a = a + (1.0 - mask[:, None, None, :].float()) * -10000.0
            c = torch.matmul(torch.softmax(a, dim=-1), v)
            return self.o(c.transpose(1, 2).reshape(b, t, E))

    class Causal(nn.Module):
        def __init__(self, gpt2):
            super().__init__()
            self.gpt2 = gpt2
            self.qkv, self.o = nn.Linear(E, 3 * E), nn.Linear(E, E)
            self.register_buffer("bias", torch.tril(
                torch.ones(32, 32, dtype=torch.bool)).view(1, 1, 32, 32))

        def forward(self, x, mask=None):
            b, t, _ = x.shape
            q, k, v = [z.view(b, t, H, D).transpose(1, 2)
                       for z in self.qkv(x).split(E, dim=2)]
            a = torch.matmul(q, k.transpose(-1, -2))
            if self.gpt2:
                a = a / math.sqrt(D)
                lo = torch.tensor(torch.finfo(a.dtype).min)
                a = torch.where(self.bias[:, :, :t, :t], a, lo)
                a = a + (1.0 - mask[:, None, None, :].float()) * lo
            else:
                a = a * (1.0 / math.sqrt(D))
                a = a.masked_fill(self.bias[:, :, :t, :t] == 0,
                                  float("-inf"))
            y = torch.matmul(torch.softmax(a, dim=-1), v)
            return self.o(y.transpose(1, 2).contiguous().view(b, t, E))

    class Mha(nn.Module):
        def __init__(self, batch_first):
            super().__init__()
            self.bf = batch_first
            self.m = nn.MultiheadAttention(E, H, batch_first=batch_first)

        def forward(self, x, mask=None):
            if self.bf:
                return self.m(x, x, x, need_weights=False,
                              key_padding_mask=mask == 0)[0]
            x = x.transpose(0, 1)
            return self.m(x, x, x, need_weights=False)[0].transpose(0, 1)

    class Ffn(nn.Module):
        def __init__(self, approx):
            super().__init__()
            self.a, self.b = nn.Linear(E, 4 * E), nn.Linear(4 * E, E)
            self.g, self.ln = nn.GELU(approximate=approx), nn.LayerNorm(E)

        def forward(self, x):
            return self.ln(x + self.b(self.g(self.a(x))))

    hand = ["hf_bert", "mul_scale", "mul_first", "kt_direct", "qk_scaled"]
    for how in hand:
        yield how, Hand(how), True, 14
    yield "hf_bert_o12", Hand("hf_bert"), True, 12
    yield "gpt2", Causal(True), True, 14
    yield "nanogpt", Causal(False), False, 14
    yield "mha", Mha(True), True, 14
    yield "mha_seq", Mha(False), False, 14
    yield "ffn_erf", Ffn("none"), False, 14
    yield "ffn_tanh", Ffn("tanh"), False, 14
    yield "ffn_o17", Ffn("none"), False, 17


def export_torch():
    import torch
    for name, net, masked, opset in torch_models():
        net.eval()
        x = torch.rand(2, 7, E)
        args, names = (x,), ["x"]
        axes = {"x": {0: "B", 1: "S"}}
        if masked:
            args += (torch.ones(2, 7, dtype=torch.int64),)
            names.append("mask")
            axes["mask"] = {0: "B", 1: "S"}
        torch.onnx.export(net, args, "%s/%s.onnx" % (OUT, name),
                          input_names=names, output_names=["y"],
                          dynamic_axes=axes, opset_version=opset,
                          do_constant_folding=True)


def near_miss(name, nodes, inits, outputs=("y",), kshape=None):
    """Q, K, V are x [2, 2, 5, 8] (K broadcast from k [1, 2, 5, 8] where
    kshape is given)."""
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                         [2, H, 5, D])]
    if kshape:
        ins.append(helper.make_tensor_value_info("k", TensorProto.FLOAT,
                                                 kshape))
    outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT,
                                          [2, H, 5, 5 if o != "y" else D])
            for o in outputs]
    g = helper.make_graph(nodes, name, ins, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, "%s/%s.onnx" % (OUT, name))


def attention(last, k="x", mask_step=None, where=None, axis=-1):
    """x as Q, K, V: Transpose(k), MatMul, [where], Div, [mask_step],
    Softmax(axis), MatMul; the steps' nodes."""
    n = [helper.make_node("Transpose", [k], ["kt"], perm=[0, 1, 3, 2]),
         helper.make_node("MatMul", ["x", "kt"], ["s0"])]
    s = "s0"
    if mask_step:
        n.append(helper.make_node("Add", [s, "m"], ["s1"]))
        s = "s1"
    n.append(helper.make_node("Div", [s, "c"], ["s2"]))
    s = "s2"
    if where:
        n.append(helper.make_node("Where", ["band", s, "lo"], ["s3"]))
        s = "s3"
    n += [helper.make_node("Softmax", [s], ["p"], axis=axis),
          helper.make_node("MatMul", ["p", "x"], [last])]
    return n


def export_misses():
    c = numpy_helper.from_array(np.array(math.sqrt(D), np.float32), "c")
    m = numpy_helper.from_array(
        np.where(np.arange(5) < 4, 0, -1e4).astype(np.float32)
        .reshape(1, 1, 1, 5), "m")
    near_miss("miss_axis", attention("y", axis=2), [c])
    near_miss("miss_mask_scaled", attention("y", mask_step=True),
              [c, m])
    near_miss("miss_scores_out", attention("y"), [c],
              outputs=("y", "s2"))
    near_miss("miss_bcast", attention("y", k="k"), [c],
              kshape=[1, H, 5, D])
    i, j = np.meshgrid(np.arange(5), np.arange(5), indexing="ij")
    band = numpy_helper.from_array(abs(i - j) <= 1, "band")
    lo = numpy_helper.from_array(np.array(-1e9, np.float32), "lo")
    near_miss("miss_band", attention("y", where=True), [c, band, lo])


def main():
    os.makedirs(OUT, exist_ok=True)
    export_torch()
    export_misses()


if __name__ == "__main__":
    main()
