// tests/check_models_ort.mjs - cross-checks tests/fixtures/expected.json
// with ONNX Runtime: runs every model at every gear on random inputs and
// compares the output shapes with those gen_models.py's numpy executor
// recorded.  Optional (the build and the tests do not use it); needs node
// and the npm package onnxruntime-node:
//
//   npm install --prefix /tmp/ort --ignore-scripts onnxruntime-node
//   NODE_PATH=/tmp/ort/node_modules node tests/check_models_ort.mjs
//
// An int64 scalar input (vad's sr) is fed 8000, 16000 and 32000 in turn.
// Prints one line per gear and "ort: P passed, F failed"; exit 1 on any
// mismatch.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';

const require = createRequire(path.join(process.cwd(), 'x.js'));
const ort = require('onnxruntime-node');
const dir = path.join(path.dirname(new URL(import.meta.url).pathname),
	'fixtures');
const expected = JSON.parse(fs.readFileSync(path.join(dir, 'expected.json')));

function gearShapes(spec, dims) {
	const vals = [...dims], out = {};
	for (const entry of spec.split(';')) {
		const k = entry.lastIndexOf(':');
		out[entry.slice(0, k)] = entry.slice(k + 1).split(',')
			.map(Number).map(d => d === -1 ? vals.shift() : d);
	}
	return out;
}

let seed = 1;
function rand() {
	seed = (seed * 1103515245 + 12345) % 2147483648;
	return seed / 2147483648 - 0.5;
}

let pass = 0, fail = 0;
for (const [key, e] of Object.entries(expected)) {
	const sess = await ort.InferenceSession.create(path.join(dir, e.model));
	const spec = e.args.find(a => a.startsWith('--input_shape='))
		.slice('--input_shape='.length);
	const scalars = sess.inputNames.filter(n => !spec.split(';')
		.some(s => s.slice(0, s.lastIndexOf(':')) === n));
	for (const g of e.gears) {
		const feeds = {};
		for (const [name, shape] of Object.entries(gearShapes(spec, g.dims))) {
			const n = shape.reduce((a, b) => a * b, 1);
			const data = Float32Array.from({ length: n }, rand);
			feeds[name] = new ort.Tensor('float32', data, shape);
		}
		const variants = scalars.length ? [8000n, 16000n, 32000n] : [null];
		for (const v of variants) {
			for (const s of scalars)
				feeds[s] = new ort.Tensor('int64',
					BigInt64Array.from([v]), []);
			const r = await sess.run(feeds);
			const got = Object.fromEntries(Object.entries(r)
				.map(([k, t]) => [k, t.dims]));
			const ok = Object.entries(g.outputs).every(([k, s]) =>
				JSON.stringify(got[k]) === JSON.stringify(s));
			const what = `${key} ${JSON.stringify(g.dims)}` +
				(v === null ? '' : ` sr=${v}`);
			console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}: ` +
				JSON.stringify(got) +
				(ok ? '' : ` expected ${JSON.stringify(g.outputs)}`));
			ok ? pass++ : fail++;
		}
	}
}
console.log(`ort: ${pass} passed, ${fail} failed`);
process.exit(fail ? 1 : 0);
