// tests/ort_run.mjs BUILD MODEL.onnx INDIR OUTDIR - one ONNX Runtime run
// (onnxruntime-node under BUILD/ort, as `make ort` installs it) of MODEL
// on INDIR/NAME.npy per input, each output written as OUTDIR/NAME.npy:
// the float32 reference of tests/check_precision_real.py.  .npy v1.0,
// little-endian, C order; dtypes float32, float16, int64, int32, int8,
// uint8, bool.  One thread, every graph optimisation.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const [build, model, indir, outdir] = process.argv.slice(2);
const ort = createRequire(path.resolve(build, 'ort', 'x.js'))(
	'onnxruntime-node');
const TYPES = { '<f4': ['float32', Float32Array], '<f2': ['float16',
	Uint16Array], '<i8': ['int64', BigInt64Array], '<i4': ['int32',
	Int32Array], '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array],
	'|b1': ['bool', Uint8Array] };

function readNpy(file) {
	const b = fs.readFileSync(file);
	const hl = b.readUInt16LE(8);
	const h = b.toString('latin1', 10, 10 + hl);
	const descr = /'descr':\s*'([^']+)'/.exec(h)[1];
	const shape = /'shape':\s*\(([^)]*)\)/.exec(h)[1].split(',')
		.map(s => s.trim()).filter(s => s).map(Number);
	const [type, A] = TYPES[descr];
	const raw = b.subarray(10 + hl);
	return new ort.Tensor(type, new A(raw.buffer.slice(raw.byteOffset,
		raw.byteOffset + raw.length)), shape);
}

function writeNpy(file, t) {
	const descr = Object.keys(TYPES).find(k => TYPES[k][0] === t.type);
	let h = `{'descr': '${descr}', 'fortran_order': False, 'shape': (` +
		t.dims.join(', ') + (t.dims.length === 1 ? ',' : '') + '), }';
	while ((10 + h.length + 1) % 64)
		h += ' ';
	h += '\n';
	const head = Buffer.alloc(10);
	head.write('\x93NUMPY', 0, 'latin1');
	head[6] = 1;
	head.writeUInt16LE(h.length, 8);
	const d = t.data;
	fs.writeFileSync(file, Buffer.concat([head, Buffer.from(h, 'latin1'),
		Buffer.from(d.buffer, d.byteOffset, d.byteLength)]));
}

const s = await ort.InferenceSession.create(model, {
	intraOpNumThreads: 1, interOpNumThreads: 1,
	graphOptimizationLevel: 'all' });
const feeds = {};
for (const n of s.inputNames)
	feeds[n] = readNpy(path.join(indir, n + '.npy'));
const r = await s.run(feeds);
fs.mkdirSync(outdir, { recursive: true });
for (const [k, v] of Object.entries(r))
	writeNpy(path.join(outdir, k.replace(/[^A-Za-z0-9._-]/g,
		c => '%' + c.charCodeAt(0).toString(16).padStart(2, '0')) +
		'.npy'), v);
