// tests/gen_kernel_cases.mjs - runs the cases tests/gen_kernel_cases.py
// wrote (argv[2], JSON) with ONNX Runtime and writes their outputs as
// JSON to argv[3].  A case ORT cannot run gets {"error": message}.
// Needs node and the npm package onnxruntime-node (see the .py).
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';

const require = createRequire(path.join(process.cwd(), 'x.js'));
const ort = require('onnxruntime-node');
const cases = JSON.parse(fs.readFileSync(process.argv[2]));
const arrays = { float32: Float32Array, float64: Float64Array,
	int64: BigInt64Array, int32: Int32Array, uint8: Uint8Array,
	int8: Int8Array };
const res = {};
for (const c of cases) {
	try {
		const s = await ort.InferenceSession.create(
			c.dir + '/model.onnx');
		const feeds = {};
		for (const f of c.feeds) {
			const A = arrays[f.dtype];
			const data = f.dtype === 'int64'
				? A.from(f.data.map(BigInt)) : A.from(f.data);
			feeds[f.name] = new ort.Tensor(f.dtype, data, f.dims);
		}
		const out = await s.run(feeds);
		res[c.dir] = c.outs.map(o => ({ name: o,
			type: out[o].type, dims: out[o].dims,
			data: Array.from(out[o].data, Number) }));
	} catch (e) {
		res[c.dir] = { error: String(e) };
	}
}
fs.writeFileSync(process.argv[3], JSON.stringify(res));
