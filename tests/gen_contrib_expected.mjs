// tests/gen_contrib_expected.mjs - the expected outputs of the contrib-op
// fixtures (tests/gen_contrib_models.py): runs ONNX Runtime on each case
// of tests/fixtures/contrib/cases.txt whose oracle is "ort", on its
// committed inputs (CASE.inK.npy, in the model's input order), and
// writes CASE.outK.npy, in the model's output order.  Run after the
// generator, from the repository root:
//
//   node tests/gen_contrib_expected.mjs [path of onnxruntime-node's parent]
//
// onnxruntime-node is looked up from the given directory (default
// /work/main/build/ort, else build/ort).  make check reads the committed
// outputs and needs neither node nor onnxruntime.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';

const where = process.argv[2] ||
	(fs.existsSync('/work/main/build/ort/node_modules') ?
		'/work/main/build/ort' : 'build/ort');
const ort = createRequire(path.resolve(where, 'x.js'))('onnxruntime-node');
const dir = 'tests/fixtures/contrib';

const types = {
	'<f4': ['float32', Float32Array], '<i4': ['int32', Int32Array],
	'<i8': ['int64', BigInt64Array], '|u1': ['uint8', Uint8Array],
	'|i1': ['int8', Int8Array], '|b1': ['bool', Uint8Array],
};
const descr = {};
for (const [k, v] of Object.entries(types))
	descr[v[0]] = k;

function readNpy(file) {
	const b = fs.readFileSync(file);
	const hl = b.readUInt16LE(8), head = b.toString('latin1', 10, 10 + hl);
	const d = /'descr': '([^']*)'/.exec(head)[1];
	if (!types[d])
		throw new Error(`${file}: dtype ${d} not handled`);
	const shape = /'shape': \(([^)]*)\)/.exec(head)[1].split(',')
		.filter(s => s.trim()).map(Number);
	const body = b.subarray(10 + hl);
	const [t, A] = types[d];
	const data = new A(body.buffer.slice(body.byteOffset,
		body.byteOffset + body.length));
	return new ort.Tensor(t, t === 'bool' ? Array.from(data, Boolean) :
		data, shape);
}

function writeNpy(file, t) {
	const d = descr[t.type];
	if (!d)
		throw new Error(`${file}: output type ${t.type} not handled`);
	const dims = t.dims.join(', ') + (t.dims.length === 1 ? ',' : '');
	let head = `{'descr': '${d}', 'fortran_order': False, ` +
		`'shape': (${dims}), }`;
	head += ' '.repeat(63 - ((10 + head.length) % 64)) + '\n';
	const pre = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0,
		head.length & 255, head.length >> 8]);
	const data = t.type === 'bool' ? Uint8Array.from(t.data, Number) :
		t.data;
	fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(head),
		Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

let n = 0;
for (const line of fs.readFileSync(`${dir}/cases.txt`, 'utf8').split('\n')) {
	if (!line.trim() || line.startsWith('#'))
		continue;
	const [name, model, , oracle] = line.split(/\s+/);
	if (oracle !== 'ort')
		continue;
	if (process.env.VERBOSE)
		console.log(name);
	const sess = await ort.InferenceSession.create(`${dir}/${model}.onnx`,
		{ intraOpNumThreads: 1, graphOptimizationLevel: 'disabled' });
	const feeds = {};
	sess.inputNames.forEach((k, i) => {
		feeds[k] = readNpy(`${dir}/${name}.in${i}.npy`);
	});
	const out = await sess.run(feeds);
	sess.outputNames.forEach((k, i) => {
		writeNpy(`${dir}/${name}.out${i}.npy`, out[k]);
	});
	n++;
}
console.log(`contrib expected: ${n} cases`);
