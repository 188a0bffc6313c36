/*
 * tests/test_widen.c - float16 models computed in float32
 * (passes/widen.c) and the Cast fast path (runtime/convert.c), on
 * tests/fixtures/fp16_*.onnx (tests/gen_fp16_models.py): the same network
 * as torch.onnx writes a model.half() (fp16_half), as float16 converters
 * write it with float32 inputs and outputs (fp16_keepio), and in float32
 * with the same weights (fp16_twin).  The contract: gearc computes the
 * float16 network as its float32 twin computes (within the float32
 * rounding of a different summation order), rounding to float16 only at
 * the model's float16 outputs.
 */
#include <math.h>

#include "compiler/ir.h"
#include "onnx/onnx.pb-c.h"
#include "omedit.h"
#include "runtime/gearrt.h"
#include "runtime/rt.h"
#include "testrun.h"

enum { MAXIO = 12 };

/* Fixture name compiled to dir/name (dir/kept with extra): the network
 * at batch gears 1 and 2, fp16_cast as it is. */
static char *compile(const char *dir, const char *name, const char *extra)
{
	const char *gears[] = { "--input_shape=x:-1,3,16,16",
				"--dynamic_batch_size=1,2", extra, NULL };
	return compile_fixture(dir, extra ? "kept" : name, name,
			       strcmp(name, "fp16_cast") ? gears : NULL);
}

typedef struct Outs {
	size_t n;
	void *data[MAXIO];
	size_t size[MAXIO];
	int casts, fast_casts;
	int copies; /* Identity tasks that copy (not a view) */
	int refs;   /* tasks on a reference kernel */
} Outs;

/* Runs om once on in[] (data and sizes; dtype and dims from the model,
 * batch 2 for a gear file), the fast paths off if no_fast. */
static Outs run_om(const char *om, void *const *in, bool no_fast)
{
	Outs o = { 0 };
	gearrt_model *m;
	gearrt_session *s;
	gearrt_options opt = { .no_fast = no_fast };
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, &opt, &s), GEARRT_OK);
	size_t nin = gearrt_input_count(m);
	gearrt_tensor t[MAXIO];
	cr_assert(nin <= MAXIO);
	for (size_t i = 0; i < nin; i++) {
		cr_assert_eq(gearrt_input_info(m, i, &t[i]), GEARRT_OK);
		size_t cnt = 1;
		for (int32_t d = 0; d < t[i].rank; d++) {
			if (t[i].dims[d] < 0)
				t[i].dims[d] = 2;
			cnt *= (size_t)t[i].dims[d];
		}
		t[i].data = in[i];
		t[i].size = cnt * gearrt_dtype_size(t[i].dtype);
	}
	o.n = gearrt_output_count(m);
	gearrt_tensor out[MAXIO];
	memset(out, 0, sizeof(out));
	cr_assert_eq(gearrt_run(s, t, nin, out, o.n), GEARRT_OK, "%s",
		     gearrt_last_error());
	for (size_t k = 0; k < o.n; k++) {
		o.size[k] = out[k].size;
		o.data[k] = malloc(out[k].size + 1);
		memcpy(o.data[k], out[k].data, out[k].size);
	}
	Prepared *p = rt_session_ctx(s)->prep[gearrt_last_gear(s) < 0 ? 0 : gearrt_last_gear(s)];
	for (int32_t i = 0; i < p->ntasks; i++) {
		const Task *u = &p->tasks[i];
		if (u->n->op == OP_Cast) {
			o.casts++;
			o.fast_casts += rt_fast(u);
		}
		o.copies += u->n->op == OP_Identity && !u->alias &&
			    strcmp(rt_kernel_name(u), "direct.view");
		o.refs += !u->alias && !strcmp(rt_kernel_name(u), "ref");
	}
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	return o;
}

static void outs_free(Outs *o)
{
	for (size_t k = 0; k < o->n; k++)
		free(o->data[k]);
}

static uint16_t to_half(float f)
{
	return minifloat_from((double)f, 5, 10);
}

static float from_half(uint16_t h)
{
	return (float)minifloat_to(h, 5, 10);
}

enum { NX = 2 * 3 * 16 * 16 };

/* The fixtures' input x at batch 2: float16 values in [-1, 1). */
static void inputs(uint16_t *h, float *f)
{
	uint32_t seed = 28;
	for (int i = 0; i < NX; i++) {
		seed = seed * 1664525u + 1013904223u;
		h[i] = to_half((float)((seed >> 8) % 2001) / 1000.0f - 1.0f);
		f[i] = from_half(h[i]);
	}
}

Test(widen, half_model_computes_its_float32_twin)
{
	char *dir = temp_dir();
	char *half = compile(dir, "fp16_half", NULL);
	char *twin = compile(dir, "fp16_twin", NULL);
	static uint16_t h[NX];
	static float f[NX];
	inputs(h, f);
	void *hin[] = { h }, *fin[] = { f };
	Outs a = run_om(half, hin, false), b = run_om(twin, fin, false);
	cr_assert_eq(a.n, 2);
	for (size_t k = 0; k < 2; k++) {
		size_t n = b.size[k] / sizeof(float);
		cr_assert_eq(a.size[k], n * sizeof(uint16_t));
		const uint16_t *ah = a.data[k];
		const float *bf = b.data[k];
		size_t exact = 0, far = 0;
		for (size_t i = 0; i < n; i++) {
			int d = (int)ah[i] - (int)to_half(bf[i]);
			exact += d == 0;
			far += d < -1 || d > 1;
		}
		/* the kernels may sum in another order where the graphs
		 * differ (a Cast at each edge): a float32 rounding apart,
		 * which can tip a float16 rounding; a float16 evaluation
		 * rounds after every op and lands further */
		cr_expect_eq(far, 0, "output %zu: %zu of %zu elements more than "
			     "one float16 step from the float32 twin's", k,
			     far, n);
		cr_expect_geq(exact * 100, n * 99, "output %zu: %zu of %zu "
			      "elements are the float32 twin's rounded to "
			      "float16", k, exact, n);
	}
	/* only the edges convert, each by the fast path */
	cr_expect_eq(a.casts, 3);
	cr_expect_eq(a.fast_casts, 3);
	outs_free(&a);
	outs_free(&b);
	free(half);
	free(twin);
	remove_tree(dir);
	free(dir);
}

Test(widen, keep_io_model_is_its_float32_twin)
{
	char *dir = temp_dir();
	char *keep = compile(dir, "fp16_keepio", NULL);
	char *twin = compile(dir, "fp16_twin", NULL);
	static uint16_t h[NX];
	static float f[NX];
	inputs(h, f);
	void *fin[] = { f };
	Outs a = run_om(keep, fin, false), b = run_om(twin, fin, false);
	for (size_t k = 0; k < 2; k++) {
		cr_assert_eq(a.size[k], b.size[k]);
		const float *af = a.data[k], *bf = b.data[k];
		size_t bad = 0;
		for (size_t i = 0; i < a.size[k] / sizeof(float); i++)
			bad += fabsf(af[i] - bf[i]) > 1e-5f + 1e-4f * fabsf(bf[i]);
		cr_expect_eq(bad, 0, "output %zu: %zu elements differ from the "
			     "float32 twin's by more than rtol 1e-4, atol 1e-5",
			     k, bad);
	}
	/* the Cast pairs became views, and the Cast before each output
	 * went: its producer writes the output (fuse.c
	 * fold_output_identities) */
	cr_expect_eq(a.casts, 0);
	cr_expect_eq(a.copies, 0, "%d Identity copies", a.copies);
	outs_free(&a);
	outs_free(&b);
	free(keep);
	free(twin);
	remove_tree(dir);
	free(dir);
}

/* --keep-fp16: every value the model computes in float16 is rounded to
 * float16 where it is made (a Cast there and back), on fast kernels: no
 * node on a reference kernel, the outputs within a few float16 steps of
 * the widened compile's, and not all equal to them (the roundings). */
Test(widen, keep_fp16_rounds_each_op_on_fast_kernels)
{
	char *dir = temp_dir();
	char *half = compile(dir, "fp16_half", NULL);
	char *kept = compile(dir, "fp16_half", "--keep-fp16");
	static uint16_t h[NX];
	static float f[NX];
	inputs(h, f);
	void *hin[] = { h };
	Outs a = run_om(kept, hin, false), b = run_om(half, hin, false);
	/* no more than the widened compile (none where oneDNN runs: below
	 * SSE4.1 its Conv and Gemm run their reference kernels on both) */
	cr_expect_eq(a.refs, b.refs, "%d nodes on a reference kernel, %d "
		     "in the widened compile", a.refs, b.refs);
	cr_expect(!(RT_X86 && cpu_has(CPU_SSE41)) || a.refs == 0, "%d nodes "
		  "on a reference kernel", a.refs);
	cr_expect_gt(a.casts, b.casts);
	cr_expect_eq(a.fast_casts, a.casts);
	/* some ten ops rounded to float16 (2^-11 each) along the way:
	 * within 1% of the output's largest magnitude */
	size_t differ = 0;
	for (size_t k = 0; k < a.n; k++) {
		const uint16_t *x = a.data[k], *y = b.data[k];
		size_t n = a.size[k] / 2;
		float big = 0;
		for (size_t i = 0; i < n; i++)
			big = fmaxf(big, fabsf(from_half(y[i])));
		for (size_t i = 0; i < n; i++) {
			float d = fabsf(from_half(x[i]) - from_half(y[i]));
			differ += x[i] != y[i];
			cr_expect(d <= 1e-2f * big, "output %zu element %zu: "
				  "%g from the widened compile's (largest %g)",
				  k, i, d, big);
		}
	}
	cr_expect_gt(differ, 0, "no rounding shows");
	outs_free(&a);
	outs_free(&b);
	free(half);
	free(kept);
	remove_tree(dir);
	free(dir);
}

/* The "weights: N tensors, B bytes" line of gearc dump. */
static void weights_of(const char *om, long *count, long *bytes)
{
	Run r = run_gearc("dump", om);
	cr_assert_eq(r.status, 0, "%s", r.err);
	const char *w = strstr(r.out, "weights:");
	cr_assert(w, "%s", r.out);
	cr_assert_eq(sscanf(w, "weights: %ld tensors, %ld bytes", count,
			    bytes), 2);
	run_free(&r);
}

Test(widen, weights_widened_once_for_all_gears)
{
	char *dir = temp_dir();
	char *half = compile(dir, "fp16_half", NULL);
	char *twin = compile(dir, "fp16_twin", NULL);
	char *kept = compile(dir, "fp16_half", "--keep-fp16");
	long hc, hb, tc, tb, kc, kb;
	weights_of(half, &hc, &hb);
	weights_of(twin, &tc, &tb);
	weights_of(kept, &kc, &kb);
	/* both gears read one copy, as the twin's do, stored as the float16
	 * it was: half the twin's bytes (an alignment's worth more) */
	cr_expect_eq(hc, tc);
	cr_expect_leq(hb, tb / 2 + 64 * hc, "%ld bytes, the twin's %ld", hb,
		      tb);
	Run d = run_gearc("dump", half);
	cr_expect(strstr(d.out, "float32 stored as float16"), "%s", d.out);
	run_free(&d);
	/* --keep-fp16 widens the same weights, stored as float16 */
	cr_expect_eq(kc, hc);
	cr_expect_eq(kb, hb, "%ld, widened %ld", kb, hb);
	Run r = run_gearc("dump", kept);
	cr_expect(strstr(r.out, "keep_fp16"), "%s", r.out);
	run_free(&r);
	free(half);
	free(twin);
	free(kept);
	remove_tree(dir);
	free(dir);
}

static bool same_float(float a, float b)
{
	return (isnan(a) && isnan(b)) || !memcmp(&a, &b, sizeof(a));
}

static bool same_half(uint16_t a, uint16_t b)
{
	return (isnan(from_half(a)) && isnan(from_half(b))) || a == b;
}

/* Every float16 bit pattern; for float32 -> float16, the midpoints
 * between neighbouring float16 values and the floats either side of
 * each (where rounding to nearest even decides), and the specials. */
Test(widen, cast_fast_path_matches_the_reference_kernel)
{
	char *dir = temp_dir();
	char *om = compile(dir, "fp16_cast", NULL);
	static uint16_t h[65536];
	static float f[65536];
	static uint8_t ints[8][256 * 8];
	for (int i = 0; i < 65536; i++) {
		h[i] = (uint16_t)i;
		int k = (i / 3) % 31743; /* finite, below the largest */
		float lo = from_half((uint16_t)k), hi = from_half((uint16_t)(k + 1));
		float mid = (float)(((double)lo + (double)hi) / 2);
		float v = i % 3 == 0 ? mid
			  : i % 3 == 1 ? nextafterf(mid, INFINITY)
				       : nextafterf(mid, 0);
		f[i] = i & (1 << 15) ? -v : v;
	}
	const float special[] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN,
				  65504.0f, 65519.0f, 65520.0f, 1e-8f, 3e-8f,
				  -6e-8f, 1e30f, -1e-40f };
	memcpy(f, special, sizeof(special));
	for (int t = 0; t < 8; t++)
		for (int i = 0; i < 256 * 8; i++)
			ints[t][i] = (uint8_t)(i * 37 + t * 101 + (i >> 3) * 91);
	for (int i = 0; i < 256; i++)
		ints[7][i] &= 1; /* bools */
	void *in[10] = { h, f };
	for (int t = 0; t < 8; t++)
		in[2 + t] = ints[t];
	Outs fast = run_om(om, in, false), ref = run_om(om, in, true);
	cr_assert_eq(fast.fast_casts, fast.casts);
	cr_assert_eq(fast.casts, 10);
	cr_assert_eq(ref.fast_casts, 0);
	size_t bad = 0;
	for (size_t k = 0; k < fast.n; k++) {
		cr_assert_eq(fast.size[k], ref.size[k]);
		bool to16 = fast.size[k] == 65536 * sizeof(uint16_t);
		size_t n = fast.size[k] / (to16 ? 2 : 4);
		for (size_t i = 0; i < n; i++) {
			bool same = to16 ? same_half(((uint16_t *)fast.data[k])[i],
						     ((uint16_t *)ref.data[k])[i])
					 : same_float(((float *)fast.data[k])[i],
						      ((float *)ref.data[k])[i]);
			if (!same && bad++ < 5)
				cr_log_error("output %zu element %zu differs", k, i);
		}
	}
	cr_expect_eq(bad, 0);
	outs_free(&fast);
	outs_free(&ref);
	free(om);
	remove_tree(dir);
	free(dir);
}

/* A file's float16-stored weights as the reader checks them: a stored
 * dtype other than float16, a size for float32, two weights sharing
 * bytes (a reader releases a widened weight's bytes) are refused. */
Test(widen, float16_stored_weights_are_checked)
{
	Fx x = fx_compile("fp16_half.onnx", "x:-1,3,16,16",
			  "--dynamic_batch_size=1,2");
	Gearom__Model *m = x.f.model;
	size_t a = m->n_weights, b = m->n_weights;
	for (size_t k = 0; k < m->n_weights; k++)
		if (m->weights[k]->has_stored_dtype)
			a < m->n_weights ? (void)(b = b < m->n_weights ? b : k)
					 : (void)(a = k);
	cr_assert(a < m->n_weights && b < m->n_weights,
		  "two weights stored as float16");
	Gearom__Weight *w = m->weights[a], keep = *w;
	static const char *const want[] = {
		"stored dtype 1 for a float32 weight",
		"its dtype and dims need",
		"share bytes of WEIGHTS",
	};
	for (int c = 0; c < 3; c++) {
		*w = keep;
		uint64_t off = m->weights[b]->offset;
		if (c == 0)
			w->stored_dtype = DT_FLOAT;
		else if (c == 1)
			w->has_stored_dtype = 0;
		else
			m->weights[b]->offset = w->offset;
		omedit_write(x.data, m, x.om);
		m->weights[b]->offset = off;
		gearrt_model *md = NULL;
		cr_expect_eq(gearrt_model_open(x.om, &md), GEARRT_E_FILE,
			     "case %d opened", c);
		cr_expect(strstr(gearrt_last_error(), want[c]), "case %d: %s",
			  c, gearrt_last_error());
		gearrt_model_close(md);
	}
	*w = keep;
	fx_free(&x);
}

/* gearc export --fp16-weights: the weights that were float16 in the
 * source go out as float16, each read through a Cast to float32 named as
 * the weight; the file is smaller, and the model computes the same
 * bytes as the .om it came from. */
Test(widen, export_writes_float16_weights_back)
{
	char *dir = temp_dir();
	char *om = compile(dir, "fp16_keepio", NULL);
	char out[700], half[600], full[600], model[700], re[700];
	snprintf(half, sizeof(half), "%s/half.onnx", dir);
	snprintf(full, sizeof(full), "%s/full.onnx", dir);
	snprintf(out, sizeof(out), "--output=%s", half);
	Run r = run_gearc("export", om, "--gear=1", "--fp16-weights", out);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	snprintf(out, sizeof(out), "--output=%s", full);
	r = run_gearc("export", om, "--gear=1", out);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);

	size_t nh = 0, nf = 0;
	char *bh = read_file(half, &nh), *bf = read_file(full, &nf);
	cr_assert(bh && bf);
	cr_expect_lt(nh, nf, "%zu bytes with float16 weights, %zu without",
		     nh, nf);
	Onnx__ModelProto *m =
		onnx__model_proto__unpack(NULL, nh, (const uint8_t *)bh);
	cr_assert(m);
	const Onnx__GraphProto *g = m->graph;
	int halves = 0;
	size_t half_bytes = 0;
	for (size_t i = 0; i < g->n_initializer; i++) {
		const Onnx__TensorProto *t = g->initializer[i];
		if (t->data_type != DT_FLOAT16)
			continue;
		halves++;
		half_bytes += t->raw_data.len;
		const Onnx__NodeProto *cast = NULL;
		for (size_t j = 0; j < g->n_node && !cast; j++)
			if (g->node[j]->n_input == 1 &&
			    !strcmp(g->node[j]->input[0], t->name))
				cast = g->node[j];
		cr_assert(cast, "float16 weight '%s' read by no node",
			  t->name);
		cr_expect_str_eq(cast->op_type, "Cast");
		cr_expect_eq(cast->attribute[0]->i, DT_FLOAT);
	}
	cr_expect_gt(halves, 0);
	/* each float16 weight saved its bytes, less its Cast's */
	cr_expect_geq(nf - nh + (size_t)halves * 64, half_bytes,
		      "%zu bytes saved, %zu of float16 weights", nf - nh,
		      half_bytes);
	onnx__model_proto__free_unpacked(m, NULL);
	free(bh);
	free(bf);

	/* re-imported: the .om's outputs, byte for byte */
	snprintf(model, sizeof(model), "--model=%s", half);
	snprintf(re, sizeof(re), "--output=%s/re", dir);
	r = run_gearc(model, re);
	cr_assert_eq(r.status, 0, "re-import: %s", r.err);
	run_free(&r);
	snprintf(re, sizeof(re), "%s/re.om", dir);
	static uint16_t h[NX];
	static float f[NX];
	inputs(h, f);
	void *fin[] = { f };
	Outs a = run_om(om, fin, false), b = run_om(re, fin, false);
	cr_assert_eq(a.n, b.n);
	for (size_t k = 0; k < a.n; k++) {
		cr_assert_eq(a.size[k], b.size[k]);
		cr_expect(!memcmp(a.data[k], b.data[k], a.size[k]),
			  "output %zu differs", k);
	}
	outs_free(&a);
	outs_free(&b);
	free(om);
	remove_tree(dir);
	free(dir);
}
