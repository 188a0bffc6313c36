#!/usr/bin/python3
"""Generates the kernel cross-check cases into tests/fixtures/kernels/.

Rerun from the repository root after changing it:

    npm install --prefix /tmp/ort --ignore-scripts onnxruntime-node
    /usr/bin/python3 tests/gen_kernel_cases.py

Each case is one node with its inputs in test_data_set_0/input_N.pb and
the expected outputs in output_N.pb, laid out like ONNX's backend tests
(tests/fixtures/kernels/node/test_k_*), so that both
tests/test_kernels_resize.c and `build/conformance -n
tests/fixtures/kernels` check them.  They cover what the backend tests at
the installed opsets do not: Resize antialias, axes,
keep_aspect_ratio_policy, half_pixel_symmetric, N-D, integer dtypes and
Resize-10; GridSample in 3-D, bicubic with border/reflection padding;
RNN/GRU/LSTM bidirectional, reverse, sequence_lens, layout 1, clip,
input_forget, linear_before_reset and activations; DFT with dft_length,
onesided, inverse and the opset-20 axis input; STFT of complex signals;
MelWeightMatrix as double.

Expected values come from ONNX Runtime (node, tests/gen_kernel_cases.mjs)
except for DFT and STFT, which numpy.fft computes (ORT computes them in
float, and its complex STFT disagrees with numpy).  ORT has no batchwise
(layout 1) recurrent ops, so those cases run ORT on transposed inputs with
layout 0.  Fixed seeds; the build and the tests do not run Python.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper as H, numpy_helper as NH, TensorProto as TP

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, 'fixtures', 'kernels')
ROOT = os.path.join(OUT, 'node')
TWINS = '/tmp/gearc_kernel_twins'
cases = []
rng = np.random.default_rng(7)
shutil.rmtree(ROOT, ignore_errors=True)
shutil.rmtree(TWINS, ignore_errors=True)
os.makedirs(TWINS)

NPT = {np.float32: TP.FLOAT, np.float64: TP.DOUBLE, np.int64: TP.INT64,
       np.int32: TP.INT32, np.uint8: TP.UINT8, np.int8: TP.INT8,
       np.float16: TP.FLOAT16}
def case(name, op, inputs, outs, opset, root=None, twin=None, **attrs):
    """inputs: list of (name, array or None)"""
    if attrs.get('layout') == 1 and twin is None:
        tr = {'X': (1, 0, 2), 'initial_h': (1, 0, 2), 'initial_c': (1, 0, 2)}
        ins0 = [(n, a.transpose(tr[n]) if a is not None and n in tr else a) for n, a in inputs]
        a0 = dict(attrs); a0['layout'] = 0
        case(name, op, ins0, outs, opset, root=TWINS, twin=True, **a0)
        cases[-1]['twin_of'] = os.path.join(ROOT, 'test_' + name)
    names = [n if a is not None else '' for n, a in inputs]
    node = H.make_node(op, names, outs, **attrs)
    gin = [H.make_tensor_value_info(n, NPT[a.dtype.type], a.shape)
           for n, a in inputs if a is not None]
    odt = attrs.get('output_datatype', NPT[inputs[0][1].dtype.type])
    gout = [H.make_tensor_value_info(o, odt, None) for o in outs if o]
    g = H.make_graph([node], name, gin, gout)
    m = H.make_model(g, opset_imports=[H.make_opsetid('', opset)])
    m.ir_version = 8
    d = os.path.join(root or ROOT, 'test_' + name)
    os.makedirs(d + '/test_data_set_0', exist_ok=True)
    onnx.save(m, d + '/model.onnx')
    k = 0
    feeds = []
    for n, a in inputs:
        if a is None:
            continue
        t = NH.from_array(a, n)
        open(d + '/test_data_set_0/input_%d.pb' % k, 'wb').write(
            t.SerializeToString())
        k += 1
        feeds.append({'name': n, 'dtype': str(a.dtype), 'dims': list(a.shape),
                      'data': a.flatten().tolist()})
    cases.append({'dir': d, 'feeds': feeds, 'outs': [o for o in outs if o]})

f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
i64 = lambda *v: np.array(v, dtype=np.int64)

# ---- Resize
x8 = f32(1, 2, 8, 8)
case('k_resize_linear_antialias', 'Resize',
     [('X', x8), ('roi', None), ('scales', np.array([1, 1, .5, .375], np.float32))],
     ['Y'], 18, mode='linear', antialias=1)
case('k_resize_cubic_antialias', 'Resize',
     [('X', x8), ('roi', None), ('scales', None), ('sizes', i64(1, 2, 3, 5))],
     ['Y'], 18, mode='cubic', antialias=1)
case('k_resize_axes_not_larger', 'Resize',
     [('X', f32(1, 2, 4, 6)), ('roi', None), ('scales', None), ('sizes', i64(7, 8))],
     ['Y'], 18, mode='linear', axes=[2, 3], keep_aspect_ratio_policy='not_larger')
case('k_resize_axes_not_smaller', 'Resize',
     [('X', f32(1, 2, 4, 6)), ('roi', None), ('scales', None), ('sizes', i64(7, 8))],
     ['Y'], 18, mode='nearest', axes=[3, 2], keep_aspect_ratio_policy='not_smaller')
case('k_resize_half_pixel_symmetric', 'Resize',
     [('X', f32(1, 1, 5, 7)), ('roi', None), ('scales', np.array([1, 1, 1.7, 0.6], np.float32))],
     ['Y'], 19, mode='linear', coordinate_transformation_mode='half_pixel_symmetric')
case('k_resize_trilinear', 'Resize',
     [('X', f32(1, 2, 3, 4, 5)), ('roi', None), ('scales', None), ('sizes', i64(1, 2, 5, 3, 7))],
     ['Y'], 13, mode='linear')
case('k_resize_uint8_nearest', 'Resize',
     [('X', rng.integers(0, 255, (1, 1, 3, 5)).astype(np.uint8)), ('roi', None),
      ('scales', np.array([1, 1, 2.5, 1.5], np.float32))],
     ['Y'], 13, mode='nearest', nearest_mode='ceil')
case('k_resize_uint8_linear', 'Resize',
     [('X', rng.integers(0, 255, (1, 1, 3, 5)).astype(np.uint8)), ('roi', None),
      ('scales', np.array([1, 1, 2.0, 2.0], np.float32))],
     ['Y'], 13, mode='linear')
case('k_resize_crop_nearest_axes', 'Resize',
     [('X', f32(1, 1, 5, 5)), ('roi', np.array([0.2, -0.1, 0.9, 1.2], np.float32)),
      ('scales', None), ('sizes', i64(4, 6))],
     ['Y'], 18, mode='nearest', axes=[2, 3], coordinate_transformation_mode='tf_crop_and_resize',
     extrapolation_value=-3.0)
case('k_resize10_nearest_down', 'Resize',
     [('X', f32(1, 1, 5, 7)), ('scales', np.array([1, 1, 0.6, 0.5], np.float32))],
     ['Y'], 10, mode='nearest')
case('k_resize10_linear_up', 'Resize',
     [('X', f32(1, 1, 3, 4)), ('scales', np.array([1, 1, 2, 1.5], np.float32))],
     ['Y'], 10, mode='linear')
case('k_resize_pytorch_1px', 'Resize',
     [('X', f32(1, 1, 4, 4)), ('roi', None), ('scales', None), ('sizes', i64(1, 1, 1, 3))],
     ['Y'], 13, mode='linear', coordinate_transformation_mode='pytorch_half_pixel')
case('k_resize_cubic_exclude_1d', 'Resize',
     [('X', f32(2, 9)), ('roi', None), ('scales', None), ('sizes', i64(2, 4))],
     ['Y'], 13, mode='cubic', exclude_outside=1, cubic_coeff_a=-0.5)
case('k_upsample_linear', 'Upsample',
     [('X', f32(1, 1, 3, 4)), ('scales', np.array([1, 1, 2, 2.5], np.float32))],
     ['Y'], 9, mode='linear')

# ---- GridSample
case('k_gridsample_3d_linear_border', 'GridSample',
     [('X', f32(1, 2, 3, 4, 5)), ('grid', (rng.random((1, 2, 3, 4, 3)) * 2.6 - 1.3).astype(np.float32))],
     ['Y'], 20, mode='linear', padding_mode='border')
case('k_gridsample_3d_nearest_zeros', 'GridSample',
     [('X', f32(2, 1, 3, 4, 5)), ('grid', (rng.random((2, 2, 2, 3, 3)) * 2.6 - 1.3).astype(np.float32))],
     ['Y'], 20, mode='nearest', padding_mode='zeros', align_corners=1)
case('k_gridsample_cubic_reflect_ac', 'GridSample',
     [('X', f32(1, 3, 4, 5)), ('grid', (rng.random((1, 3, 6, 2)) * 3.6 - 1.8).astype(np.float32))],
     ['Y'], 16, mode='bicubic', padding_mode='reflection', align_corners=1)
case('k_gridsample_cubic_border', 'GridSample',
     [('X', f32(1, 3, 4, 5)), ('grid', (rng.random((1, 3, 6, 2)) * 3.6 - 1.8).astype(np.float32))],
     ['Y'], 16, mode='bicubic', padding_mode='border')
case('k_gridsample_linear_reflect', 'GridSample',
     [('X', f32(1, 3, 4, 5)), ('grid', (rng.random((1, 3, 6, 2)) * 5 - 2.5).astype(np.float32))],
     ['Y'], 16, mode='bilinear', padding_mode='reflection')

# ---- RNN family
def rnn_inputs(G, D, T, B, I, Hs, lens=None, h0=True, c0=False, P=False, layout=0):
    X = f32(B, T, I) if layout else f32(T, B, I)
    ins = [('X', X), ('W', f32(D, G * Hs, I) * .5), ('R', f32(D, G * Hs, Hs) * .5),
           ('B', f32(D, 2 * G * Hs) * .5)]
    ins.append(('sequence_lens', np.array(lens, np.int32) if lens else None))
    hs = (B, D, Hs) if layout else (D, B, Hs)
    ins.append(('initial_h', f32(*hs) if h0 else None))
    if G == 4:
        ins.append(('initial_c', f32(*hs) if c0 else None))
        ins.append(('P', f32(D, 3 * Hs) if P else None))
    return ins

case('k_rnn_bidir_lens', 'RNN', rnn_inputs(1, 2, 4, 3, 3, 5, lens=[4, 1, 3]),
     ['Y', 'Y_h'], 14, hidden_size=5, direction='bidirectional',
     activations=['Relu', 'Tanh'])
case('k_rnn_reverse_layout', 'RNN', rnn_inputs(1, 1, 4, 2, 3, 4, layout=1),
     ['Y', 'Y_h'], 14, hidden_size=4, direction='reverse', layout=1, clip=0.8)
case('k_gru_lbr_reverse_lens', 'GRU', rnn_inputs(3, 1, 5, 3, 2, 4, lens=[5, 2, 3]),
     ['Y', 'Y_h'], 14, hidden_size=4, direction='reverse', linear_before_reset=1)
case('k_gru_bidir_acts', 'GRU', rnn_inputs(3, 2, 3, 2, 3, 4),
     ['Y', 'Y_h'], 14, hidden_size=4, direction='bidirectional',
     activations=['HardSigmoid', 'Tanh', 'Sigmoid', 'Softsign'],
     activation_alpha=[0.3], activation_beta=[0.4])
case('k_gru_bidir_lbr_layout', 'GRU', rnn_inputs(3, 2, 3, 2, 3, 4, layout=1, lens=[2, 3]),
     ['Y', 'Y_h'], 14, hidden_size=4, direction='bidirectional', layout=1,
     linear_before_reset=1)
case('k_lstm_bidir_peep_lens', 'LSTM', rnn_inputs(4, 2, 4, 3, 3, 5, lens=[4, 2, 3], c0=True, P=True),
     ['Y', 'Y_h', 'Y_c'], 14, hidden_size=5, direction='bidirectional')
case('k_lstm_layout_clip_forget', 'LSTM', rnn_inputs(4, 1, 3, 2, 3, 4, c0=True, layout=1),
     ['', 'Y_h', 'Y_c'], 14, hidden_size=4, layout=1, clip=0.7, input_forget=1)
case('k_lstm_reverse_acts', 'LSTM', rnn_inputs(4, 1, 3, 2, 2, 3, P=True),
     ['Y', '', 'Y_c'], 14, hidden_size=3, direction='reverse',
     activations=['Sigmoid', 'LeakyRelu', 'Elu'], activation_alpha=[0.2, 0.9])

# ---- signal
case('k_dft_onesided_pad', 'DFT', [('x', f32(2, 5, 3, 1)), ('dft_length', np.array(8, np.int64))],
     ['y'], 17, onesided=1, axis=1)
case('k_dft_truncate_axis2', 'DFT', [('x', f32(2, 3, 12, 2)), ('dft_length', np.array(7, np.int64))],
     ['y'], 17, axis=2)
case('k_dft_inverse_pow2', 'DFT', [('x', f32(1, 16, 2))], ['y'], 17, inverse=1, axis=1)
case('k_dft20_axis_input', 'DFT', [('x', f32(2, 6, 4, 1)), ('dft_length', None), ('axis', np.array(-3, np.int64))],
     ['y'], 20)
case('k_stft_complex_window', 'STFT',
     [('signal', f32(2, 40, 2)), ('frame_step', np.array(6, np.int64)),
      ('window', f32(10)), ('frame_length', np.array(10, np.int64))],
     ['y'], 17, onesided=0)
case('k_stft_real_pow2', 'STFT',
     [('signal', f32(1, 100, 1)), ('frame_step', np.array(12, np.int64)),
      ('window', f32(32))],
     ['y'], 17)
case('k_melweightmatrix_double', 'MelWeightMatrix',
     [('num_mel_bins', np.array(10, np.int64)), ('dft_length', np.array(64, np.int64)),
      ('sample_rate', np.array(16000, np.int64)), ('lower_edge_hertz', np.array(20, np.float32)),
      ('upper_edge_hertz', np.array(7000, np.float32))],
     ['y'], 17, output_datatype=TP.DOUBLE)


# ---- expected outputs


def cx(x):
    return x[..., 0] + (1j * x[..., 1] if x.shape[-1] == 2 else 0)


def feed(c, n):
    f = [f for f in c['feeds'] if f['name'] == n]
    if not f:
        return None
    return np.array(f[0]['data'], f[0]['dtype']).reshape(f[0]['dims'])


def numpy_signal(c):
    """DFT or STFT output of case c by numpy.fft, or None."""
    node = onnx.load(c['dir'] + '/model.onnx').graph.node[0]
    at = {a.name: H.get_attribute_value(a) for a in node.attribute}
    if node.op_type == 'DFT':
        x, n = cx(feed(c, 'x')), feed(c, 'dft_length')
        ax = at.get('axis', 1)
        if feed(c, 'axis') is not None:
            ax = int(feed(c, 'axis')) % (x.ndim + 1)
        N = int(n) if n is not None else x.shape[ax]
        y = (np.fft.ifft if at.get('inverse') else np.fft.fft)(x, N, axis=ax)
        if at.get('onesided'):
            y = np.take(y, range(N // 2 + 1), axis=ax)
    elif node.op_type == 'STFT':
        s, step = cx(feed(c, 'signal')), int(feed(c, 'frame_step'))
        w, fl = feed(c, 'window'), feed(c, 'frame_length')
        fl = int(fl) if fl is not None else len(w)
        w = w if w is not None else np.ones(fl)
        nf = (s.shape[1] - fl) // step + 1
        bins = fl // 2 + 1 if at.get('onesided', 1) else fl
        y = np.array([[np.fft.fft(s[b, t * step:t * step + fl] * w)[:bins]
                       for t in range(nf)] for b in range(s.shape[0])])
    else:
        return None
    return np.stack([y.real, y.imag], -1).astype(np.float32)


def main():
    json.dump(cases, open(TWINS + '/cases.json', 'w'))
    env = dict(os.environ, NODE_PATH='/tmp/ort/node_modules')
    subprocess.run(['node', os.path.join(HERE, 'gen_kernel_cases.mjs'),
                    TWINS + '/cases.json', TWINS + '/out.json'],
                   env=env, check=True)
    res = json.load(open(TWINS + '/out.json'))
    twin = {c['dir']: c['twin_of'] for c in cases if 'twin_of' in c}
    DT = {'float32': np.float32, 'float64': np.float64, 'uint8': np.uint8,
          'int8': np.int8}
    for c in cases:
        d = twin.get(c['dir'], c['dir'])
        y = numpy_signal(c)
        if y is not None:
            outs = [y]
        else:
            r = res[c['dir']]
            if 'error' in r:
                if c['dir'] in twin.values():
                    continue  # computed by its layout-0 twin
                sys.exit('%s: %s' % (c['dir'], r['error']))
            outs = []
            for o in r:
                a = np.array(o['data'], DT[o['type']]).reshape(o['dims'])
                if c['dir'] in twin:
                    a = a.transpose((2, 0, 1, 3) if a.ndim == 4
                                    else (1, 0, 2))
                outs.append(a)
        for k, a in enumerate(outs):
            t = NH.from_array(a, c['outs'][k])
            with open(d + '/test_data_set_0/output_%d.pb' % k, 'wb') as f:
                f.write(t.SerializeToString())
    shutil.rmtree(TWINS)


if __name__ == '__main__':
    main()
