#!/usr/bin/python3
"""Checks preprocessing compiled into a real model: PaddleOCR's PP-OCRv4
detector (build/real, as 'make bench-real' fetches it) with ImageNet's
mean and std, once by OpenVINO's flags and once by an AIPP file, fed a
uint8 NHWC page, against the unmodified model fed the page normalised in
float64; then by an AIPP file taking the page as a camera's NV12 buffer
(YUV420SP_U8, BT.601 full range to RGB), against the unmodified model fed
the RGB image atc's formula gives of that buffer, normalised in float64.
Prints the largest differences, and the model's own
sensitivity: the same normalisation computed in float32.  Not part of
'make check' (it needs the model); run from the repository root:

    /usr/bin/python3 tests/check_preproc_real.py build/gearc \\
        build/real/package/assets/ch_PP-OCRv4_det_infer.onnx

It works in the current directory's build/preproc_real.
"""
import os
import numpy as np, subprocess, sys
G, M = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
os.makedirs('build/preproc_real', exist_ok=True)
os.chdir('build/preproc_real')
H, W = 320, 320
rng = np.random.default_rng(42)
# a page: light paper, dark lines of 'text' (blocks of strokes), noise
fr = np.full((1, H, W, 3), 225, np.float64) + rng.normal(0, 8, (1, H, W, 3))
for k in range(8):
    y = 20 + 36 * k
    for j in range(12 + 3 * (k % 4)):
        x0 = 16 + j * 14
        fr[0, y:y + 14, x0:x0 + 9] = 35 + rng.normal(0, 10, (14, 9, 3))
fr = np.clip(fr, 0, 255).astype(np.uint8)
np.save('ocr_fr.npy', fr)
mean = np.array([0.485, 0.456, 0.406]) * 255; std = np.array([0.229, 0.224, 0.225]) * 255
x = ((fr.astype(np.float64) - mean) / std).astype(np.float32).transpose(0, 3, 1, 2).copy()
np.save('ocr_x.npy', x)
shape = f'--input_shape=x:1,3,{H},{W}'
subprocess.run([G, '--model=' + M, '--output=ocr_ref', shape, '-q'], check=True)
def run(om, inp):
    subprocess.run([G, 'run', om, '--input', 'x=' + inp, '--output-dir', 'o_' + om, '-q'], check=True)
    return np.load('o_' + om + '/sigmoid_0.tmp_0.npy')
ref = run('ocr_ref.om', 'ocr_x.npy')
ms = ','.join('%.6f' % v for v in mean); ss = ','.join('%.6f' % v for v in std)
r = subprocess.run([G, '--model=' + M, '--output=ocr_ov', shape, f'--mean_values=x[{ms}]', f'--scale_values=x[{ss}]', '--source_layout=nhwc', '--source_type=u8'], capture_output=True, text=True, check=True)
print(r.stderr.strip())
a = run('ocr_ov.om', 'ocr_fr.npy')
print('OpenVINO flags: max abs diff', np.abs(a - ref).max(), 'output range', ref.min(), ref.max())
cfg = 'aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n' + ''.join(f' mean_chn_{c}: 0\n min_chn_{c}: {mean[c]:.6f}\n var_reci_chn_{c}: {1/std[c]:.9f}\n' for c in range(3)) + '}\n'
open('ocr_aipp.cfg', 'w').write(cfg)
r = subprocess.run([G, '--model=' + M, '--output=ocr_aipp', shape, '--insert_op_conf=ocr_aipp.cfg'], capture_output=True, text=True, check=True)
print(r.stderr.strip())
b = run('ocr_aipp.om', 'ocr_fr.npy')
print('AIPP: max abs diff', np.abs(b - ref).max())
# the noise floor: the same normalisation computed in float32 instead of
# float64, fed to the unmodified model
x32 = ((fr.astype(np.float32) - mean.astype(np.float32)) / std.astype(np.float32)).transpose(0, 3, 1, 2).copy()
np.save('ocr_x32.npy', x32)
c = run('ocr_ref.om', 'ocr_x32.npy')
print('float32 vs float64 normalisation, same model: max abs diff', np.abs(c - ref).max(), 'input diff', np.abs(x32 - x).max())

# YUV420SP_U8: the page as NV12 (BT.601 full range, chroma averaged over
# 2x2), through atc's JPEG csc table; the reference is the RGB image that
# table's integer formula gives of the buffer: floor(M (yuv - bias) / 256)
# saturated to a byte (atc's ">> 8")
f = fr[0].astype(np.float64)
Y = 0.299 * f[..., 0] + 0.587 * f[..., 1] + 0.114 * f[..., 2]
U = 128 + (f[..., 2] - Y) * 0.564
V = 128 + (f[..., 0] - Y) * 0.713
sub = lambda c: c.reshape(H // 2, 2, W // 2, 2).mean(axis=(1, 3))
q = lambda c: np.clip(np.round(c), 0, 255).astype(np.uint8)
uv = np.stack([q(sub(U)), q(sub(V))], -1).reshape(H // 2, W)
nv12 = np.concatenate([q(Y), uv])[None]
np.save('ocr_nv12.npy', nv12)
CSC = np.array([[256, 0, 359], [256, -88, -183], [256, 454, 0]])
bias = np.array([0, 128, 128])
up = lambda c: np.repeat(np.repeat(c, 2, 0), 2, 1).astype(np.int64)
yuv = np.stack([q(Y).astype(np.int64), up(uv[:, 0::2]), up(uv[:, 1::2])], -1)
rgb = np.clip((yuv - bias) @ CSC.T // 256, 0, 255).astype(np.float64)
xy = ((rgb - mean) / std).astype(np.float32).transpose(2, 0, 1)[None].copy()
np.save('ocr_xy.npy', xy)
refy = run('ocr_ref.om', 'ocr_xy.npy')
csc = ''.join(f' matrix_r{r}c{k}: {CSC[r][k]}\n' for r in range(3) for k in range(3)) + ''.join(f' input_bias_{c}: {bias[c]}\n' for c in range(3))
cfg = 'aipp_op {\n aipp_mode: static\n input_format: YUV420SP_U8\n csc_switch: true\n' + csc + ''.join(f' mean_chn_{c}: 0\n min_chn_{c}: {mean[c]:.6f}\n var_reci_chn_{c}: {1/std[c]:.9f}\n' for c in range(3)) + '}\n'
open('ocr_yuv.cfg', 'w').write(cfg)
r = subprocess.run([G, '--model=' + M, '--output=ocr_yuv', shape, '--insert_op_conf=ocr_yuv.cfg'], capture_output=True, text=True, check=True)
print(r.stderr.strip())
y = run('ocr_yuv.om', 'ocr_nv12.npy')
print('AIPP YUV420SP_U8 (NV12): max abs diff', np.abs(y - refy).max(), '(the RGB page against its NV12 round trip moves the output by', np.abs(refy - ref).max(), ')')
