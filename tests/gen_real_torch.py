#!/usr/bin/python3
"""tests/gen_real_torch.py OUTDIR [NAME...] - real exporter graphs of real
architectures for `make bench-real`: Debian's python3-torch 1.13 and
python3-torchvision 0.14, torch.onnx.export at opset 14 (random weights,
seeded: the graph is the exporter's own, the numbers only need to be the
same for both engines).  Each model is written as OUTDIR/NAME.onnx with
its dynamic axes named, beside OUTDIR/NAME.json: the gears its users would
compile (gearc flags) and the input to run.  Nothing here is committed;
make check never reads it.

The set spans the classes users bring: CNN classifiers (ResNet, MobileNetV3,
EfficientNet, RegNet, ConvNeXt, ShuffleNet, SqueezeNet; DenseNet, whose
BatchNormalization -> Relu follow Concats; GoogLeNet; MobileNetV2), a
segmentation head (LR-ASPP) and a small U-Net (ConvTranspose, skip Concat,
bilinear Resize), vision and text transformers (ViT; Swin-T, its windows
padded and shifted; a BERT-style encoder with an attention mask;
nn.TransformerEncoder; a pre-norm nn.TransformerDecoder with a causal
mask), recurrent sequence models (bidirectional GRU, stacked LSTM), a
Conv1d audio stack (BatchNorm1d, GELU, a dilated grouped Conv1d, PReLU
per channel, AvgPool1d, Softmax over channels) and a tiny MLP head.  New
models go at the end of models(): the weights come from one seeded
stream, so the earlier ones stay as they were.
"""
import json
import os
import sys

import torch
import torch.nn as nn
import torchvision.models as tvm
from torchvision.models.segmentation import lraspp_mobilenet_v3_large

OPSET = 14


def image(name, net, size, batches=(1, 4), sizes=None):
    """A vision model of input x [N, 3, H, W]: gears over the batch, or
    over (N, H, W) where sizes are given."""
    x = torch.rand(1, 3, size, size)
    axes = {"x": {0: "N"}}
    if sizes:
        axes = {"x": {0: "N", 2: "H", 3: "W"}}
        gears = ";".join("%d,%d,%d" % (b, s, s) for b in batches
                         for s in sizes)
        args = ["--input_shape=x:-1,3,-1,-1", "--dynamic_dims=" + gears]
    else:
        args = ["--input_shape=x:-1,3,%d,%d" % (size, size),
                "--dynamic_batch_size=" + ",".join(map(str, batches))]
    return name, net, (x,), ["x"], axes, args


class Bert(nn.Module):
    """A BERT-style encoder as exporters see one: token, position and type
    embeddings, LayerNorm, then layers of self-attention with an additive
    padding mask built from attention_mask, GELU feed-forward, post-norm;
    a pooled first token.  Written out, as Hugging Face's modules are,
    so the attention is MatMul -> Div -> Add(mask) -> Softmax -> MatMul
    with the heads reshaped and transposed."""

    def __init__(self, vocab=1000, hidden=256, heads=4, layers=4, ff=1024):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(512, hidden)
        self.typ = nn.Embedding(2, hidden)
        self.ln = nn.LayerNorm(hidden)
        self.layers = nn.ModuleList()
        for _ in range(layers):
            self.layers.append(nn.ModuleDict({
                "q": nn.Linear(hidden, hidden), "k": nn.Linear(hidden, hidden),
                "v": nn.Linear(hidden, hidden), "o": nn.Linear(hidden, hidden),
                "ln1": nn.LayerNorm(hidden), "f1": nn.Linear(hidden, ff),
                "f2": nn.Linear(ff, hidden), "ln2": nn.LayerNorm(hidden)}))
        self.pool = nn.Linear(hidden, hidden)

    def split(self, t):
        b, s, h = t.shape
        return t.view(b, s, self.heads, h // self.heads).transpose(1, 2)

    def forward(self, input_ids, attention_mask):
        b, s = input_ids.shape
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0)
        h = self.ln(self.tok(input_ids) + self.pos(pos) +
                    self.typ(torch.zeros_like(input_ids)))
        mask = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        for L in self.layers:
            q, k, v = self.split(L["q"](h)), self.split(L["k"](h)), \
                self.split(L["v"](h))
            a = torch.matmul(q, k.transpose(-1, -2)) / (q.shape[-1] ** 0.5)
            a = torch.softmax(a + mask, dim=-1)
            c = torch.matmul(a, v).transpose(1, 2).reshape(b, s, -1)
            h = L["ln1"](h + L["o"](c))
            h = L["ln2"](h + L["f2"](nn.functional.gelu(L["f1"](h))))
        return h, torch.tanh(self.pool(h[:, 0]))


class Encoder(nn.Module):
    """nn.TransformerEncoder (torch's fused-attention module) over
    [N, S, 256] features, with a key padding mask."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True,
                                           activation="gelu")
        self.enc = nn.TransformerEncoder(layer, 3)

    def forward(self, x):
        return self.enc(x)


class Recurrent(nn.Module):
    """A speech-style sequence model: a bidirectional GRU, a 2-layer LSTM
    and a linear head over [N, T, 40] features."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(40, 128, batch_first=True, bidirectional=True)
        self.lstm = nn.LSTM(256, 128, num_layers=2, batch_first=True)
        self.head = nn.Linear(128, 30)

    def forward(self, x):
        y, _ = self.gru(x)
        y, _ = self.lstm(y)
        return self.head(y).log_softmax(-1)


class Mlp(nn.Module):
    """A tiny MLP head: 3 layers over [N, 64] features."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(),
                                 nn.Linear(128, 128), nn.ReLU(),
                                 nn.Linear(128, 10))

    def forward(self, x):
        return self.net(x)


class Seg(nn.Module):
    """LR-ASPP on MobileNetV3-Large, its "out" map alone."""

    def __init__(self):
        super().__init__()
        self.net = lraspp_mobilenet_v3_large(weights=None,
                                             weights_backbone=None)

    def forward(self, x):
        return self.net(x)["out"]


class UNet(nn.Module):
    """Two levels: Conv-Relu blocks, MaxPool, ConvTranspose up, the skip
    concatenated, a 1x1 head, bilinear downscale, Sigmoid."""

    def __init__(self):
        super().__init__()
        self.d1 = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
                                nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())
        self.d2 = nn.Sequential(nn.MaxPool2d(2),
                                nn.Conv2d(16, 32, 3, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(32, 16, 2, stride=2)
        self.head = nn.Sequential(nn.Conv2d(32, 16, 3, padding=1),
                                  nn.ReLU(), nn.Conv2d(16, 2, 1))

    def forward(self, x):
        a = self.d1(x)
        y = self.head(torch.cat([a, self.up(self.d2(a))], 1))
        y = nn.functional.interpolate(y, scale_factor=0.5, mode="bilinear",
                                      align_corners=False)
        return torch.sigmoid(y)


class Decoder(nn.Module):
    """nn.TransformerDecoder, pre-norm, with a causal mask over x and
    cross-attention to a memory m of another length."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerDecoderLayer(128, 4, 256, batch_first=True,
                                           norm_first=True)
        self.dec = nn.TransformerDecoder(layer, 2)

    def forward(self, x, m):
        t = x.shape[1]
        mask = torch.triu(torch.full((t, t), float("-inf")), 1)
        return self.dec(x, m, tgt_mask=mask)


class Conv1dNet(nn.Module):
    """A Conv1d stack over 80 mel channels, Softmax over the channels."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(80, 128, 5, padding=2), nn.BatchNorm1d(128), nn.GELU(),
            nn.Conv1d(128, 128, 3, padding=2, dilation=2, groups=4),
            nn.PReLU(128), nn.Conv1d(128, 64, 1), nn.Hardswish(),
            nn.AvgPool1d(2), nn.Conv1d(64, 32, 3, padding=1))

    def forward(self, x):
        return torch.softmax(self.net(x), dim=1)


def models():
    vit = tvm.VisionTransformer(image_size=224, patch_size=16, num_layers=6,
                                num_heads=6, hidden_dim=384, mlp_dim=1536)
    # torchvision starts the head at zero: every output 0 whatever the
    # engine computes before it
    nn.init.normal_(vit.heads.head.weight, std=0.02)
    yield image("resnet18", tvm.resnet18(), 224)
    yield image("mobilenet_v3_small", tvm.mobilenet_v3_small(), 224)
    yield image("efficientnet_b0", tvm.efficientnet_b0(), 224)
    yield image("regnet_y_400mf", tvm.regnet_y_400mf(), 224)
    yield image("convnext_tiny", tvm.convnext_tiny(), 224, batches=(1, 2))
    yield image("shufflenet_v2", tvm.shufflenet_v2_x1_0(), 224)
    yield image("squeezenet", tvm.squeezenet1_1(), 224)
    yield image("lraspp", Seg(), 320, batches=(1,), sizes=(320, 512))
    yield image("vit_s", vit, 224, batches=(1, 2))
    ids = torch.randint(0, 1000, (1, 128))
    yield ("bert", Bert(), (ids, torch.ones(1, 128, dtype=torch.int64)),
           ["input_ids", "attention_mask"],
           {"input_ids": {0: "N", 1: "S"}, "attention_mask": {0: "N", 1: "S"}},
           ["--input_shape=input_ids:-1,-1;attention_mask:-1,-1",
            "--dynamic_dims=1,64,1,64;1,128,1,128;4,128,4,128"])
    yield ("encoder", Encoder(), (torch.rand(1, 64, 256),), ["x"],
           {"x": {0: "N", 1: "S"}},
           ["--input_shape=x:-1,-1,256", "--dynamic_dims=1,64;1,128;4,64"])
    yield ("recurrent", Recurrent(), (torch.rand(1, 100, 40),), ["x"],
           {"x": {0: "N", 1: "T"}},
           ["--input_shape=x:-1,-1,40", "--dynamic_dims=1,100;1,200;4,100"])
    yield ("mlp", Mlp(), (torch.rand(1, 64),), ["x"], {"x": {0: "N"}},
           ["--input_shape=x:-1,64", "--dynamic_batch_size=1,16"])
    yield image("densenet121", tvm.densenet121(), 160, batches=(1, 2))
    yield image("googlenet", tvm.googlenet(aux_logits=False,
                                           init_weights=True), 160,
                batches=(1, 2))
    yield image("mobilenet_v2", tvm.mobilenet_v2(), 224, batches=(1, 2))
    yield image("swin_t", tvm.swin_t(), 224, batches=(1, 2))
    yield image("unet", UNet(), 64, batches=(1,), sizes=(64, 96))
    yield ("decoder", Decoder(), (torch.rand(1, 16, 128),
                                  torch.rand(1, 20, 128)), ["x", "m"],
           {"x": {0: "N", 1: "T"}, "m": {0: "N", 1: "S"}},
           ["--input_shape=x:-1,-1,128;m:-1,-1,128",
            "--dynamic_dims=1,16,1,20;2,32,2,20"])
    yield ("conv1d", Conv1dNet(), (torch.rand(1, 80, 100),), ["x"],
           {"x": {0: "N", 2: "T"}},
           ["--input_shape=x:-1,80,-1", "--dynamic_dims=1,100;2,200"])


def main():
    out = sys.argv[1]
    only = set(sys.argv[2:])
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    for name, net, args, inputs, axes, gears in models():
        if only and name not in only:
            continue
        path = os.path.join(out, name + ".onnx")
        net.eval()
        # not under no_grad: there torch 1.13 runs nn.TransformerEncoder's
        # fused attention, which has no ONNX export
        torch.onnx.export(net, args, path, input_names=inputs,
                          dynamic_axes=axes, opset_version=OPSET,
                          do_constant_folding=True)
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump({"model": name + ".onnx", "args": gears}, f)
        print("%s: %d bytes" % (path, os.path.getsize(path)))


if __name__ == "__main__":
    main()
