#!/usr/bin/python3
"""Checks preprocessing compiled into a real model: PaddleOCR's PP-OCRv4
detector (build/real, as 'make bench-real' fetches it) with ImageNet's
mean and std, once by OpenVINO's flags and once by an AIPP file, fed a
uint8 NHWC page, against the unmodified model fed the page normalised in
float64.  Prints the largest differences, and the model's own
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
