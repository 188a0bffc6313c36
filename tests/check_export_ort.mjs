// tests/check_export_ort.mjs - cross-checks `gearc export` with ONNX
// Runtime, and writes the expected outputs the runtime tests compare with.
//
// For every case below: build/gearc compiles the fixture with the case's
// gear options, `gearc export --gear=all` writes one static model per gear,
// and ONNX Runtime runs the source model and each exported gear on the
// same fixed-seed inputs; outputs must agree within rtol 1e-4 / atol 1e-5.
// Optional (the build and the tests do not use it); needs node, a built
// build/gearc and the npm package onnxruntime-node:
//
//   npm install --prefix /tmp/ort --ignore-scripts onnxruntime-node
//   NODE_PATH=/tmp/ort/node_modules node tests/check_export_ort.mjs [--write]
//
// With --write it also (re)writes tests/fixtures/ort/: per case and gear
// K, gear<K>/input_NAME.npy (the inputs) and gear<K>/output_NAME.npy (the
// SOURCE model's outputs under ORT), .npy v1.0, little-endian, C order;
// names escaped (any byte other than a letter, digit, '.', '_' or '-' as
// %xx); and index.json: per case the model, the compile options and per
// gear its dims and input and output shapes.  Float inputs are uniform in
// [-0.5, 0.5) from a linear congruential generator seeded with 1 for every
// gear; an int64 input (vad's sample rate sr) is 16000.  Gears are chosen
// small so the folder stays near 2 MB: det, rec, bench_rec, scope_cls and cls
// use smaller gears than tests/fixtures/expected.json.
//
// Then the exports of issue 25's cases (tests/gen_export_models.py and
// vad_sr.onnx), which hold what gearc makes of its own: a branch compiled
// to Fail, a Loop body and an If branch returning constants, unnamed
// nodes.  Each must load; each run (its own int64 and bool inputs, floats
// as above) must agree with the source model, or, when the run takes a
// Fail branch, raise an error in both.  These are not written.
//
// Prints one line per gear (and run) and "export-ort: P passed, F
// failed"; exit 1 on any mismatch.
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';

const require = createRequire(path.join(process.cwd(), 'x.js'));
const ort = require('onnxruntime-node');
const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const fixtures = path.join(root, 'tests', 'fixtures');
const gearc = process.env.GEARC || path.join(root, 'build', 'gearc');
const write = process.argv.includes('--write');
const RTOL = 1e-4, ATOL = 1e-5;

const cases = [
	{ key: 'det', model: 'det.onnx', args: ['--input_shape=x:1,3,-1,-1',
		'--dynamic_image_size=64,64;96,128;160,96'] },
	{ key: 'rec', model: 'rec.onnx', args: ['--input_shape=x:1,3,48,-1',
		'--dynamic_dims=32;64;96'] },
	{ key: 'vad', model: 'vad.onnx', args: [
		'--input_shape=input:1,-1;h:2,1,64;c:2,1,64',
		'--dynamic_dims=512;1024;1536'] },
	{ key: 'vad_batch', model: 'vad.onnx', args: [
		'--input_shape=input:-1,512;h:2,-1,64;c:2,-1,64',
		'--dynamic_dims=1,1,1;4,4,4;8,8,8'] },
	{ key: 'bench_rec', model: 'bench_rec.onnx', args: [
		'--input_shape=x:1,3,48,-1', '--dynamic_dims=32;64;96'] },
	{ key: 'scope_cls', model: 'scope_cls.onnx', args: [
		'--input_shape=x:1,3,-1,-1',
		'--dynamic_image_size=32,32;64,64;96,64;64,96',
		'--gear_scope=auto'] },
	{ key: 'scope_enc', model: 'scope_enc.onnx', args: [
		'--input_shape=x:1,-1,16', '--dynamic_dims=32;64;128',
		'--gear_scope=auto'] },
	{ key: 'scope_two', model: 'scope_two.onnx', args: [
		'--input_shape=a:1,-1,8;b:1,-1,8',
		'--dynamic_dims=16,16;32,16;16,32;32,32;16,64',
		'--gear_scope=auto'] },
	{ key: 'scope_cycle', model: 'scope_cycle.onnx', args: [
		'--input_shape=x:1,-1', '--dynamic_dims=4;8',
		'--gear_scope=auto'] },
	{ key: 'demo_cnn', model: 'demo_cnn.onnx', args: [
		'--input_shape=x:-1,3,32,32', '--dynamic_batch_size=1,4,8'] },
	{ key: 'cls', model: 'cls.onnx', args: [
		'--input_shape=x:-1,3,48,192', '--dynamic_batch_size=1,2'] },
];

// runs: per run, the values of the int64 and bool inputs (one value for
// every element); fails: the gears at which that run takes a Fail branch.
const standardCases = [
	{ key: 'export_fail', model: 'export_fail.onnx', args: [
		'--input_shape=x:1,-1;k:', '--dynamic_dims=4;6'],
		runs: [{ k: 4n }, { k: 5n, fails: [0] }] },
	{ key: 'vad_sr', model: 'vad_sr.onnx', args: [
		'--input_shape=x:1,512;sr:'],
		runs: [{ sr: 16000n, mode: 1n }, { sr: 8000n, mode: 1n,
			fails: [0] }] },
	{ key: 'export_loop', model: 'export_loop.onnx', args: [
		'--input_shape=x:2,4'], runs: [{}] },
	{ key: 'export_kv', model: 'export_kv.onnx', args: [
		'--input_shape=x:1,-1,8;past_key:1,2,4,4;use_cache_branch:1',
		'--dynamic_dims=1;2'],
		runs: [{ use_cache_branch: true }, { use_cache_branch: false }] },
];

let seed = 1;
function rand() {
	seed = (seed * 1103515245 + 12345) % 2147483648;
	return seed / 2147483648 - 0.5;
}

function escapeName(s) {
	return [...Buffer.from(s, 'utf8')].map(b => {
		const c = String.fromCharCode(b);
		return /[A-Za-z0-9._-]/.test(c) ? c
			: '%' + b.toString(16).padStart(2, '0');
	}).join('');
}

// A .npy v1.0 file: header padded to a multiple of 64 bytes.
function npy(tensor) {
	const descr = { float32: '<f4', int64: '<i8', int32: '<i4' }[tensor.type];
	if (!descr)
		throw new Error(`no .npy dtype for ${tensor.type}`);
	const dims = tensor.dims.map(Number);
	const shape = dims.length === 1 ? `(${dims[0]},)`
		: `(${dims.join(', ')})`;
	let h = `{'descr': '${descr}', 'fortran_order': False, ` +
		`'shape': ${shape}, }`;
	const pad = 64 - ((10 + h.length + 1) % 64);
	h += ' '.repeat(pad % 64) + '\n';
	const head = Buffer.alloc(10);
	Buffer.from([0x93, ...Buffer.from('NUMPY'), 1, 0]).copy(head);
	head.writeUInt16LE(h.length, 8);
	const d = tensor.data;
	const body = Buffer.from(d.buffer, d.byteOffset, d.byteLength);
	if (os.endianness() !== 'LE')
		throw new Error('.npy files are written little-endian only');
	return Buffer.concat([head, Buffer.from(h, 'latin1'), body]);
}

// values: an int64 or bool input's value (default 16000, true).
// The file `gearc export --gear=all` writes for a gear: NAME, then the
// gear inputs' shapes ("_1x3x48x320" each; a static file's inputs', its
// scalars left out).
function gearFile(dir, name, dump, gear) {
	const ins = dump.gears.length ? gear.inputs
		: dump.inputs.filter(i => i.shape.length);
	return path.join(dir, name + ins.map(i => '_' + i.shape.join('x'))
		.join('') + '.onnx');
}

function feedsFor(dump, gear, values = {}) {
	const feeds = {}, shapes = {};
	seed = 1;
	for (const inp of dump.inputs) {
		const g = gear.inputs.find(i => i.name === inp.name);
		const shape = g ? g.shape : inp.shape;
		const n = shape.reduce((a, b) => a * b, 1);
		const v = values[inp.name];
		if (inp.dtype === 'float32')
			feeds[inp.name] = new ort.Tensor('float32',
				Float32Array.from({ length: n }, rand), shape);
		else if (inp.dtype === 'int64')
			feeds[inp.name] = new ort.Tensor('int64',
				BigInt64Array.from({ length: n },
					() => v ?? 16000n), shape);
		else if (inp.dtype === 'bool')
			feeds[inp.name] = new ort.Tensor('bool',
				Uint8Array.from({ length: n },
					() => (v ?? true) ? 1 : 0), shape);
		else
			throw new Error(`input ${inp.name}: dtype ${inp.dtype}`);
		shapes[inp.name] = shape;
	}
	return { feeds, shapes };
}

function compare(ref, got) {
	for (const [name, r] of Object.entries(ref)) {
		const g = got[name];
		if (!g)
			return `no output ${name}`;
		if (JSON.stringify(g.dims) !== JSON.stringify(r.dims))
			return `${name}: shape ${JSON.stringify(g.dims)}, ` +
				`source ${JSON.stringify(r.dims)}`;
		for (let i = 0; i < r.data.length; i++) {
			const a = Number(r.data[i]), b = Number(g.data[i]);
			if (!(Math.abs(a - b) <= ATOL + RTOL * Math.abs(a)))
				return `${name}[${i}]: ${b}, source ${a}`;
		}
	}
	return null;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gearc-export-'));
const outDir = path.join(fixtures, 'ort');
const index = {};
let pass = 0, fail = 0;
for (const c of cases) {
	const om = path.join(tmp, `${c.key}.om`), dir = path.join(tmp, c.key);
	fs.mkdirSync(dir);
	execFileSync(gearc, [`--model=${path.join(fixtures, c.model)}`,
		...c.args, `--output=${om}`]);
	execFileSync(gearc, ['export', om, '--gear=all', `--output=${dir}`]);
	const dump = JSON.parse(execFileSync(gearc,
		['dump', '--format=json', om]));
	const src = await ort.InferenceSession.create(
		path.join(fixtures, c.model));
	index[c.key] = { model: c.model, args: c.args, gears: [] };
	for (const gear of dump.gears) {
		const { feeds, shapes } = feedsFor(dump, gear);
		const ref = await src.run(feeds);
		const exp = await ort.InferenceSession.create(
			gearFile(dir, c.key, dump, gear));
		const got = await exp.run(feeds);
		const why = compare(ref, got);
		console.log(`${why ? 'FAIL' : 'ok  '} ${c.key} gear ${gear.index} ` +
			`${JSON.stringify(gear.dims)}${why ? ': ' + why : ''}`);
		why ? fail++ : pass++;
		index[c.key].gears.push({ index: gear.index, dims: gear.dims,
			inputs: shapes, outputs: Object.fromEntries(
				Object.entries(ref).map(([k, t]) => [k, t.dims])) });
		if (!write)
			continue;
		const gd = path.join(outDir, c.key, `gear${gear.index}`);
		fs.rmSync(gd, { recursive: true, force: true });
		fs.mkdirSync(gd, { recursive: true });
		for (const [k, t] of Object.entries(feeds))
			fs.writeFileSync(path.join(gd,
				`input_${escapeName(k)}.npy`), npy(t));
		for (const [k, t] of Object.entries(ref))
			fs.writeFileSync(path.join(gd,
				`output_${escapeName(k)}.npy`), npy(t));
	}
}
// The error of run(), or null.
async function error(run) {
	try {
		await run();
		return null;
	} catch (e) {
		return String(e.message).split('\n')[0];
	}
}

for (const c of standardCases) {
	const om = path.join(tmp, `${c.key}.om`), dir = path.join(tmp, c.key);
	fs.mkdirSync(dir);
	execFileSync(gearc, [`--model=${path.join(fixtures, c.model)}`,
		...c.args, '--quiet', `--output=${om}`]);
	execFileSync(gearc, ['export', om, '--gear=all', `--output=${dir}`]);
	const dump = JSON.parse(execFileSync(gearc,
		['dump', '--format=json', om]));
	// runs that take a Fail branch raise: no error log for them
	const quiet = { logSeverityLevel: 4 };
	const src = await ort.InferenceSession.create(
		path.join(fixtures, c.model), quiet);
	const gears = dump.gears.length ? dump.gears
		: [{ index: 0, dims: [], inputs: [] }];
	for (const gear of gears) {
		let exp = null;
		const file = gearFile(dir, c.key, dump, gear);
		const load = await error(async () => {
			exp = await ort.InferenceSession.create(file, quiet);
		});
		for (const [r, values] of c.runs.entries()) {
			const { feeds } = feedsFor(dump, gear, values);
			const fails = (values.fails || []).includes(gear.index);
			let ref, got, why = load && `does not load: ${load}`;
			const se = await error(async () => {
				ref = await src.run(feeds);
			});
			const ee = load ? null : await error(async () => {
				got = await exp.run(feeds);
			});
			if (!why && fails)
				why = !se ? 'the source model runs' : !ee
					? 'runs, the source model fails' : null;
			else if (!why)
				why = se || ee || compare(ref, got);
			console.log(`${why ? 'FAIL' : 'ok  '} ${c.key} gear ` +
				`${gear.index} run ${r}` +
				(why ? `: ${why}` : fails ? `: fails: ${ee}` : ''));
			why ? fail++ : pass++;
		}
	}
}
if (write)
	fs.writeFileSync(path.join(outDir, 'index.json'),
		JSON.stringify(index, null, 1) + '\n');
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`export-ort: ${pass} passed, ${fail} failed`);
process.exit(fail ? 1 : 0);
