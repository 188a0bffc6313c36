// tests/check_real_isa.mjs - the public exports of `make bench-real`'s
// set 1 (PP-OCRv4 det and rec, PP-OCR cls, Silero VAD v5), compiled once
// by this machine's gearc, run by `gearc run` at each ISA cap and,
// with --arm64, by build/arm64/gearc under qemu-aarch64 -cpu neoverse-n1
// (the .om files compiled on x86-64), and with --x86emu=CPU by gearc
// under qemu-x86_64 -cpu CPU (qemu64: SSE3, no SSE4.1; Nehalem), against
// ONNX Runtime's outputs
// for the source model on the same fixed-seed inputs: within rtol 1e-3
// / atol 1e-4 elementwise (the worst excess printed per output).
//
//   node tests/check_real_isa.mjs BUILD REAL_DIR [--caps=avx2,sse41,...]
//        [--arm64] [--x86emu=qemu64,Nehalem] [--only=det,rec,...]
//
// BUILD holds gearc and ort/ (onnxruntime-node, as `make ort` installs
// it; ORT_DIR overrides where), REAL_DIR the models as `npm pack`
// unpacks them (`make real-models`).  One line per (model, engine);
// exit 1 if any is outside the tolerance or fails to run.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';

const RTOL = 1e-3, ATOL = 1e-4;
const args = process.argv.slice(2);
const build = path.resolve(args[0] || 'build');
const real = path.resolve(args[1] || path.join(build, 'real'));
const opt = name => {
	const a = args.find(x => x.startsWith(`--${name}=`));
	return a ? a.slice(name.length + 3) : null;
};
const caps = (opt('caps') ?? 'native,avx2,sse41,baseline').split(',')
	.filter(s => s);
const only = opt('only') ? opt('only').split(',') : null;
const arm64 = args.includes('--arm64');
const ortDir = process.env.ORT_DIR || path.join(build, 'ort');
const ort = createRequire(path.join(ortDir, 'x.js'))('onnxruntime-node');

const OCR = 'package/assets/', VAD = 'package/dist/';
const MODELS = [
	{ key: 'det', model: OCR + 'ch_PP-OCRv4_det_infer.onnx',
	  args: ['--input_shape=x:1,3,-1,-1', '--dynamic_image_size=320,320;640,640'],
	  inputs: { x: [1, 3, 320, 320] } },
	{ key: 'rec', model: OCR + 'ch_PP-OCRv4_rec_infer.onnx',
	  args: ['--input_shape=x:-1,3,48,-1', '--dynamic_dims=1,320;1,640'],
	  inputs: { x: [1, 3, 48, 320] } },
	{ key: 'cls', model: OCR + 'ch_ppocr_mobile_v2.0_cls_infer.onnx',
	  args: ['--input_shape=x:-1,3,48,192', '--dynamic_batch_size=1,6'],
	  inputs: { x: [6, 3, 48, 192] } },
	{ key: 'vad5', model: VAD + 'silero_vad_v5.onnx',
	  args: ['--input_shape=input:-1,512;state:2,-1,128;sr:',
		 '--dynamic_dims=1,1;4,4'],
	  inputs: { input: [1, 512], state: [2, 1, 128] },
	  int64: { sr: 16000n } },
	/* an LSTM: oneDNN's RNN kernel where it runs, small.c's below
	 * SSE4.1 (oneDNN 2.6's emits SSE4.1 regardless: SIGILL) */
	{ key: 'vad_old', model: VAD + 'silero_vad_legacy.onnx',
	  args: ['--input_shape=input:1,512;sr:;h:2,1,64;c:2,1,64'],
	  inputs: { input: [1, 512], h: [2, 1, 64], c: [2, 1, 64] },
	  int64: { sr: 16000n } },
];

// .npy v1.0, C order: float32 '<f4' or int64 '<i8'.
function writeNpy(file, data, shape) {
	const descr = data instanceof BigInt64Array ? '<i8' : '<f4';
	let h = `{'descr': '${descr}', 'fortran_order': False, 'shape': (` +
		shape.join(', ') + (shape.length === 1 ? ',' : '') + '), }';
	h += ' '.repeat(63 - (10 + h.length) % 64) + '\n';
	const head = Buffer.alloc(10);
	head.write('\x93NUMPY', 0, 'latin1');
	head[6] = 1, head[7] = 0;
	head.writeUInt16LE(h.length, 8);
	fs.writeFileSync(file, Buffer.concat([head, Buffer.from(h, 'latin1'),
		Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

function readNpy(file) {
	const b = fs.readFileSync(file);
	const hlen = b.readUInt16LE(8);
	const h = b.toString('latin1', 10, 10 + hlen);
	const descr = /'descr':\s*'([^']+)'/.exec(h)[1];
	const d = b.subarray(10 + hlen);
	const buf = d.buffer.slice(d.byteOffset, d.byteOffset + d.length);
	if (descr !== '<f4')
		throw new Error(`${file}: ${descr}, not float32`);
	return new Float32Array(buf);
}

// gearc run's file name for output NAME.
const escName = n => n.replace(/[^A-Za-z0-9._-]/g,
	c => '%' + c.charCodeAt(0).toString(16).padStart(2, '0'));

let seed = 7;
function rand() {
	seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
	return (seed >>> 8) / 16777216 - 0.5;
}

// The worst excess of |a - b| over atol + rtol |b|, and the worst |a-b|.
function compare(a, b) {
	let worst = -Infinity, diff = 0;
	if (a.length !== b.length)
		return { worst: Infinity, diff: Infinity };
	for (let i = 0; i < a.length; i++) {
		const d = Math.abs(a[i] - b[i]);
		const e = Number.isNaN(d) ? Infinity : d - (ATOL + RTOL *
			Math.abs(b[i]));
		worst = Math.max(worst, e), diff = Math.max(diff, d);
	}
	return { worst, diff };
}

const out = path.join(build, 'check_real_isa');
fs.mkdirSync(out, { recursive: true });
const gearc = path.join(build, 'gearc');
const engines = caps.map(c => ({ name: c, cmd: gearc, pre: [],
	env: c === 'native' ? {} : { GEARRT_MAX_ISA: c } }));
for (const cpu of (opt('x86emu') ?? '').split(',').filter(s => s))
	engines.push({ name: `x86 (qemu ${cpu})`, cmd: '/usr/bin/qemu-x86_64',
		       env: {}, pre: ['-cpu', cpu, gearc] });
if (arm64) {
	const lib = path.resolve(build, 'arm64-sysroot', 'usr', 'lib',
				 'aarch64-linux-gnu');
	engines.push({ name: 'arm64 (qemu neoverse-n1)',
		cmd: '/usr/bin/qemu-aarch64', env: {},
		pre: ['-cpu', 'neoverse-n1', '-E', `LD_LIBRARY_PATH=${lib}`,
		      path.join(build, 'arm64', 'gearc')] });
}
let bad = 0;
for (const m of MODELS) {
	if (only && !only.includes(m.key))
		continue;
	const dir = path.join(out, m.key), om = path.join(dir, m.key);
	fs.mkdirSync(dir, { recursive: true });
	execFileSync(gearc, [`--model=${path.join(real, m.model)}`, ...m.args,
			     `--output=${om}`, '-q']);
	const feeds = {}, flags = [];
	for (const [name, shape] of Object.entries(m.inputs)) {
		const n = shape.reduce((x, y) => x * y, 1);
		const data = Float32Array.from({ length: n }, rand);
		feeds[name] = new ort.Tensor('float32', data, shape);
		writeNpy(path.join(dir, `in_${name}.npy`), data, shape);
		flags.push('--input', `${name}=${path.join(dir, `in_${name}.npy`)}`);
	}
	for (const [name, v] of Object.entries(m.int64 || {})) {
		const data = BigInt64Array.from([v]);
		feeds[name] = new ort.Tensor('int64', data, []);
		writeNpy(path.join(dir, `in_${name}.npy`), data, []);
		flags.push('--input', `${name}=${path.join(dir, `in_${name}.npy`)}`);
	}
	const sess = await ort.InferenceSession.create(path.join(real, m.model));
	const want = await sess.run(feeds);
	for (const e of engines) {
		const od = path.join(dir, e.name.replace(/[^A-Za-z0-9]+/g, '_'));
		fs.rmSync(od, { recursive: true, force: true });
		fs.mkdirSync(od);
		let line = `${m.key.padEnd(5)} ${e.name.padEnd(26)}`, ok = true;
		try {
			execFileSync(e.cmd, [...e.pre, 'run', `${om}.om`, ...flags,
				     '--output-dir', od, '-q'],
				     { env: { ...process.env, GOMP_SPINCOUNT: '1000',
					      ...e.env }, stdio: 'pipe' });
			for (const [name, t] of Object.entries(want)) {
				const got = readNpy(path.join(od,
					`${escName(name)}.npy`));
				const r = compare(got, t.data);
				ok &&= r.worst <= 0;
				line += ` ${name}: max|a-b| ${r.diff.toExponential(2)}`;
			}
		} catch (err) {
			ok = false;
			line += ` failed: ${(err.stderr || err.message).toString()
				.trim().split('\n').pop()}`;
		}
		bad += !ok;
		console.log(`${line} ${ok ? 'ok' : 'OUT OF TOLERANCE'}`);
	}
}
console.log(`check_real_isa: ${bad ? bad + ' failed' : 'all within'} ` +
	    `rtol ${RTOL} / atol ${ATOL}`);
process.exit(bad ? 1 : 0);
