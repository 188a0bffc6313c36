// tests/check_qbench_ort.mjs - ONNX Runtime's outputs for the quantized
// bench models of tests/gen_qbench_models.py (qdyn_cnn, qdyn_enc,
// qdq_cnn), which tests/test_quant.c compares libgearrt with, and a check
// that `gearc export` of each compiled model (its fused int8 ops written
// back as standard ONNX) loads in ONNX Runtime and matches the source.
// Optional (make check reads only the committed outputs); needs node, a
// built build/gearc and onnxruntime-node:
//
//   NODE_PATH=build/ort/node_modules node tests/check_qbench_ort.mjs \
//       [build/gearc] [--write]
//
// Inputs: float32 from the generator test_quant.c uses, seed 1: s = s *
// 1664525 + 1013904223 (32 bits), x = (s >> 8) / 2^24 - 0.5.  With
// --write it writes tests/fixtures/qbench/NAME.npy, ONNX Runtime's (1
// thread) output of NAME.onnx: graph optimizations off (ONNX's
// definition op by op) for the dynamic models; for qdq_cnn with them on,
// as gearc does it: both rewrite its QDQ groups into QLinearConv
// (passes/qfuse.c), whose one requantisation of the integer sum may
// move an output one step of its uint8 from the float QDQ definition.
// It prints, per model, the relative L2 distance of the export's output
// under ONNX Runtime from the source's, and the largest |difference|;
// exit 1 if one is above the tolerance: relative L2 0.05 where dynamic
// quantisation sits in the graph (one uint8 rounding apart moves an
// output), else rtol 1e-3 / atol 1e-4 (qdq_cnn's export holds the
// QLinearConv ops, so it is compared with the source optimized).  For
// qdq_cnn it also prints the relative L2 distance of the optimized
// source from the float definition (optimizations off).
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';

const require = createRequire(path.join(process.cwd(), 'x.js'));
const ort = require('onnxruntime-node');
const args = process.argv.slice(2);
const write = args.includes('--write');
const gearc = args.find(a => a !== '--write') || 'build/gearc';
const dir = path.join(path.dirname(new URL(import.meta.url).pathname),
	'fixtures');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'qbench-ort-'));
const models = { qdyn_cnn: true, qdyn_enc: true, qdq_cnn: false };

function input(shape) {
	const n = shape.reduce((a, b) => a * b, 1), d = new Float32Array(n);
	let s = 1;
	for (let i = 0; i < n; i++) {
		s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
		d[i] = (s >>> 8) / 16777216 - 0.5;
	}
	return d;
}

function writeNpy(file, data, shape) {
	let head = `{'descr': '<f4', 'fortran_order': False, 'shape': (${
		shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
	head += ' '.repeat(63 - ((10 + head.length) % 64)) + '\n';
	const pre = Buffer.alloc(10);
	pre.write('\x93NUMPY', 0, 'latin1');
	pre[6] = 1;
	pre.writeUInt16LE(head.length, 8);
	fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(head, 'latin1'),
		Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function run(file, feeds, opt = 'disabled') {
	const s = await ort.InferenceSession.create(file,
		{ intraOpNumThreads: 1, interOpNumThreads: 1,
		  graphOptimizationLevel: opt });
	const r = await s.run(feeds);
	return r[s.outputNames[0]];
}

function relL2(a, b) {
	let num = 0, den = 0;
	for (let i = 0; i < a.length; i++) {
		num += (a[i] - b[i]) ** 2;
		den += b[i] * b[i];
	}
	return Math.sqrt(num / den);
}

let bad = 0;
for (const [name, dynamic] of Object.entries(models)) {
	const src = path.join(dir, name + '.onnx');
	const om = path.join(tmp, name), exp = path.join(tmp, name + '.onnx');
	execFileSync(gearc, ['--model=' + src, '--output=' + om, '-q']);
	execFileSync(gearc, ['export', om + '.om', '-o', exp]);
	const x = new ort.Tensor('float32', input([1, ...(name === 'qdyn_enc'
		? [128, 256] : [16, 112, 112])]), name === 'qdyn_enc'
		? [1, 128, 256] : [1, 16, 112, 112]);
	const a = await run(src, { x }, dynamic ? 'disabled' : 'all');
	const b = await run(exp, { x });
	if (!dynamic) {
		const f = await run(src, { x });
		console.log(`${name}: source optimized vs its float definition: ` +
			`rel L2 ${relL2(a.data, f.data).toExponential(2)}`);
	}
	if (write) {
		fs.mkdirSync(path.join(dir, 'qbench'), { recursive: true });
		writeNpy(path.join(dir, 'qbench', name + '.npy'), a.data, a.dims);
	}
	let num = 0, den = 0, worst = 0, over = 0;
	for (let i = 0; i < a.data.length; i++) {
		const d = Math.abs(a.data[i] - b.data[i]);
		num += d * d;
		den += a.data[i] * a.data[i];
		worst = Math.max(worst, d);
		over += d > 1e-4 + 1e-3 * Math.abs(a.data[i]);
	}
	const rel = Math.sqrt(num / den);
	const ok = dynamic ? rel <= 0.05 : over === 0;
	bad += !ok;
	console.log(`${name}: export under ORT vs source: rel L2 ` +
		`${rel.toExponential(2)}, max |diff| ${worst.toExponential(2)}` +
		`${dynamic ? '' : `, ${over} beyond rtol 1e-3/atol 1e-4`}: ` +
		(ok ? 'ok' : 'FAIL'));
}
fs.rmSync(tmp, { recursive: true, force: true });
process.exit(bad ? 1 : 0);
