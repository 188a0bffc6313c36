// tests/check_quant_ort.mjs - runs the quantized fixtures of
// tests/gen_quant_models.py with ONNX Runtime and with gearc on the same
// inputs: integer outputs must be equal (exact integer arithmetic on both
// sides; requantized ones within one unit, see requant below), float
// outputs within relative L2 0.05 (issue 28: dynamic
// quantisation is discontinuous, one rounding apart flips a uint8).
// Optional (make check does not use it); needs node and onnxruntime-node:
//
//   npm install --prefix build/ort --ignore-scripts onnxruntime-node
//   NODE_PATH=build/ort/node_modules node tests/check_quant_ort.mjs \
//       [build/gearc]
//
// Prints a line per output and "quant ort: P passed, F failed"; exit 1 on
// any failure.  A model ONNX Runtime refuses or fails to run (its
// kernels' limits: 1.30's ConvInteger takes per-tensor W zero points
// only) is reported and skipped.
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';

const require = createRequire(path.join(process.cwd(), 'x.js'));
const ort = require('onnxruntime-node');
const gearc = process.argv[2] || 'build/gearc';
const dir = path.join(path.dirname(new URL(import.meta.url).pathname),
	'fixtures');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quant-ort-'));
const models = ['quant_mlp', 'quant_mm', 'quant_conv', 'quant_qlinear'];
// Requantized outputs (QLinear*): ONNX Runtime multiplies the sum by the
// scale in float, gearc's reference kernels in double; a sum whose
// product lies next to a rounding tie may round one unit apart.
const requant = ['quant_qlinear'];
const dtypes = { '<f4': Float32Array, '<i4': Int32Array, '|u1': Uint8Array,
	'|i1': Int8Array };

function writeNpy(file, data, shape) {
	let head = `{'descr': '<f4', 'fortran_order': False, 'shape': (${
		shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
	head += ' '.repeat(63 - ((10 + head.length) % 64)) + '\n';
	const pre = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0,
		head.length & 255, head.length >> 8]);
	fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(head),
		Buffer.from(data.buffer)]));
}

function readNpy(file) {
	const b = fs.readFileSync(file);
	const hl = b.readUInt16LE(8), head = b.toString('latin1', 10, 10 + hl);
	const T = dtypes[/'descr': '([^']*)'/.exec(head)[1]];
	const body = b.subarray(10 + hl);
	return new T(body.buffer.slice(body.byteOffset,
		body.byteOffset + body.length));
}

let seed = 28;
function rand() {
	seed = (seed * 1103515245 + 12345) % 2147483648;
	return 2 * seed / 2147483648 - 1;
}

let pass = 0, fail = 0;
for (const name of models) {
	const onnx = path.join(dir, name + '.onnx');
	let sess;
	try {
		sess = await ort.InferenceSession.create(onnx,
			{ intraOpNumThreads: 1 });
	} catch (e) {
		console.log(`${name}: ONNX Runtime refuses it (${
			String(e.message).split('\n')[0]}), skipped`);
		continue;
	}
	const om = path.join(tmp, name);
	execFileSync(gearc, ['--model=' + onnx, '--output=' + om, '-q']);
	const feeds = {}, args = ['run', om + '.om', '-q', '-o', tmp];
	for (const inp of sess.inputNames) {
		const meta = sess.inputMetadata.find(m => m.name === inp);
		const shape = meta.shape;
		const n = shape.reduce((a, b) => a * b, 1);
		const data = Float32Array.from({ length: n }, rand);
		feeds[inp] = new ort.Tensor('float32', data, shape);
		writeNpy(path.join(tmp, inp + '.npy'), data, shape);
		args.push('-i', `${inp}=${path.join(tmp, inp + '.npy')}`);
	}
	execFileSync(gearc, args);
	let r;
	try {
		r = await sess.run(feeds);
	} catch (e) {
		console.log(`${name}: ONNX Runtime cannot run it (${
			String(e.message).split('\n')[0].slice(-80)}), skipped`);
		continue;
	}
	for (const [out, t] of Object.entries(r)) {
		const got = readNpy(path.join(tmp, out + '.npy'));
		const want = t.data;
		let ok, what;
		if (want instanceof Float32Array) {
			let d = 0, s = 0;
			for (let i = 0; i < want.length; i++) {
				d += (got[i] - want[i]) ** 2;
				s += want[i] ** 2;
			}
			const rel = Math.sqrt(d / (s || 1));
			ok = got.length === want.length && rel <= 0.05;
			what = `relative L2 ${rel.toExponential(2)}`;
		} else {
			let diff = 0, most = 0;
			for (let i = 0; i < want.length; i++) {
				diff += got[i] !== want[i];
				most = Math.max(most, Math.abs(got[i] - want[i]));
			}
			ok = got.length === want.length &&
				(diff === 0 || (requant.includes(name) && most <= 1));
			what = `${diff} of ${want.length} differ` +
				(diff ? ` by at most ${most}` : '');
		}
		console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}/${out}: ${what}`);
		ok ? pass++ : fail++;
	}
}
fs.rmSync(tmp, { recursive: true });
console.log(`quant ort: ${pass} passed, ${fail} failed`);
process.exit(fail ? 1 : 0);
