#!/usr/bin/python3
"""tests/gen_resize_ort.py - makes tests/fixtures/resize_ort/: linear
Resize of [N,C,H,W] as ONNX Runtime computes it, to the last bit, for
tests/test_fast.c (runtime/chanwise.c's chan.resize follows ONNX
Runtime's arithmetic: a dynamic-int8 U-Net turns a last-bit difference
before a DynamicQuantizeLinear into percents of its output).

Each case is a directory holding model.onnx, x.npy (its input) and y.npy
(ONNX Runtime's output 'y', onnxruntime-node 1.30, one thread):
  - up:      [1,3,10,14] to sizes [1,3,23,31], half_pixel (no whole
             factor: every tap weight a rounded float);
  - twice:   [2,16,9,7] by scales 2, half_pixel;
  - pytorch: [1,2,6,5] to sizes [1,2,13,4], pytorch_half_pixel (W down);
  - nhwc:    x [1,32,13,17] -> a 3x3 Conv whose only tap is the identity
             at the centre (a = x exactly, in either engine) -> Resize to
             [1,32,29,43] -> y, and a 3x3 Conv of a and of y (z0, z):
             between convolutions, so that libgearrt keeps a and y
             channels-last.
Rerun from the repository root after changing it (needs node and
onnxruntime-node, as tests/gen_kernel_cases.py):

    npm install --prefix /tmp/ort --ignore-scripts onnxruntime-node
    /usr/bin/python3 tests/gen_resize_ort.py
"""
import json
import os
import shutil
import subprocess

import numpy as np
import onnx
from onnx import helper as H, numpy_helper as NH, TensorProto as TP

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, 'fixtures', 'resize_ort')
rng = np.random.default_rng(2811)
cases = []


def resize(x, y, sizes=None, scales=None, mode='half_pixel'):
    ins = [x, '', 'scales' if scales is not None else '',
           'sizes' if sizes is not None else '']
    while ins[-1] == '':
        ins.pop()
    return H.make_node('Resize', ins, [y], mode='linear',
                       coordinate_transformation_mode=mode)


def save(name, nodes, x, outs, inits):
    d = os.path.join(OUT, name)
    os.makedirs(d)
    g = H.make_graph(nodes, name,
                     [H.make_tensor_value_info('x', TP.FLOAT, x.shape)],
                     [H.make_tensor_value_info(o, TP.FLOAT, None)
                      for o in outs],
                     [NH.from_array(v, k) for k, v in inits.items()])
    m = H.make_model(g, opset_imports=[H.make_opsetid('', 13)])
    m.ir_version = 8
    onnx.save(m, d + '/model.onnx')
    np.save(d + '/x.npy', x)
    cases.append({'dir': d, 'outs': ['y'],
                  'feeds': [{'name': 'x', 'dtype': 'float32',
                             'dims': list(x.shape),
                             'data': x.flatten().tolist()}]})


def f32(*s):
    return rng.standard_normal(s).astype(np.float32)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    save('up', [resize('x', 'y', sizes=1)], f32(1, 3, 10, 14), ['y'],
         {'sizes': np.array([1, 3, 23, 31], np.int64)})
    save('twice', [resize('x', 'y', scales=1)], f32(2, 16, 9, 7), ['y'],
         {'scales': np.array([1, 1, 2, 2], np.float32)})
    save('pytorch', [resize('x', 'y', sizes=1, mode='pytorch_half_pixel')],
         f32(1, 2, 6, 5), ['y'],
         {'sizes': np.array([1, 2, 13, 4], np.int64)})
    eye = np.zeros((32, 32, 3, 3), np.float32)
    for c in range(32):
        eye[c, c, 1, 1] = 1
    save('nhwc', [H.make_node('Conv', ['x', 'eye'], ['a'], pads=[1] * 4),
                  H.make_node('Conv', ['a', 'w0'], ['z0'], pads=[1] * 4),
                  resize('a', 'y', sizes=1),
                  H.make_node('Conv', ['y', 'w1'], ['z'], pads=[1] * 4)],
         f32(1, 32, 13, 17), ['y', 'z0', 'z'],
         {'eye': eye, 'sizes': np.array([1, 32, 29, 43], np.int64),
          'w0': f32(8, 32, 3, 3) * 0.1, 'w1': f32(8, 32, 3, 3) * 0.1})
    tmp = '/tmp/gearc_resize_ort'
    os.makedirs(tmp, exist_ok=True)
    json.dump(cases, open(tmp + '/cases.json', 'w'))
    env = dict(os.environ, NODE_PATH='/tmp/ort/node_modules')
    subprocess.run(['node', os.path.join(HERE, 'gen_kernel_cases.mjs'),
                    tmp + '/cases.json', tmp + '/out.json'],
                   env=env, check=True)
    res = json.load(open(tmp + '/out.json'))
    for c in cases:
        r = res[c['dir']]
        assert 'error' not in r, r
        y = np.array(r[0]['data'], np.float32).reshape(r[0]['dims'])
        np.save(c['dir'] + '/y.npy', y)
    shutil.rmtree(tmp)


if __name__ == '__main__':
    main()
