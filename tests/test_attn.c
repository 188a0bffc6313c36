/*
 * tests/test_attn.c - attention as exporters write it (passes/attn.c)
 * into Sdpa (compiler/ops/attention.c), GELU and LayerNorm in their
 * spellings (passes/fuse.c), on tests/fixtures/attn/ (made by
 * tests/gen_attn_models.py from torch.onnx's own graphs): each spelling
 * fuses as dumped, computes what --no-fuse computes (reference kernels,
 * fast paths at 1 and 2 threads), and exports back to standard ONNX
 * that computes the same; each near miss stays unfused.  Then
 * runtime/attn.c's kernel against the reference kernel on nodes built
 * here: NaN, infinities, fully masked rows, causal masks of both
 * alignments, permuted layouts, broadcast masks, odd sizes, the same
 * bits at 1 and 2 threads, and its AVX2 and plain C variants (the ISA
 * capped).
 */
#include <math.h>

#include "compiler/cpu.h"
#include "runtime/gearrt.h"
#include "runtime/rt.h"
#include "testrun.h"
#include "testutil.h"

enum { E = 16, B = 2, S = 7 };

typedef struct Spelling {
	const char *name;
	bool mask;	   /* takes mask [B, S] */
	int sdpa;	   /* Sdpa nodes a gear */
	const char *also;  /* in the fused dump too, or NULL */
} Spelling;

static const Spelling spellings[] = {
	{ "hf_bert", true, 1, NULL },
	{ "hf_bert_o12", true, 1, NULL },
	{ "mul_scale", true, 1, NULL },
	{ "mul_first", true, 1, NULL },
	{ "kt_direct", true, 1, NULL },
	{ "qk_scaled", true, 1, NULL },
	{ "gpt2", true, 1, "causal" },
	{ "nanogpt", false, 1, "causal" },
	{ "mha", true, 1, NULL },
	{ "mha_seq", false, 1, NULL },
	{ "ffn_erf", false, 0, "[Gelu]" },
	{ "ffn_tanh", false, 0, "[GeluTanh]" },
	{ "ffn_o17", false, 0, "[Gelu]" },
};

static char *compile_spelling(const char *dir, const Spelling *sp,
			      const char *out, const char *extra)
{
	char m[256], o[512], sh[128], dd[128];
	char *dst = path_in(dir, out);
	snprintf(m, sizeof(m), "--model=tests/fixtures/attn/%s.onnx",
		 sp->name);
	snprintf(o, sizeof(o), "--output=%s", dst);
	snprintf(sh, sizeof(sh), "--input_shape=x:-1,-1,%d%s", E,
		 sp->mask ? ";mask:-1,-1" : "");
	snprintf(dd, sizeof(dd), "--dynamic_dims=%s",
		 sp->mask ? "1,5,1,5;2,7,2,7" : "1,5;2,7");
	const char *args[8] = { m, o, sh, dd, "-q", extra };
	Run r = run_gearcv(args);
	cr_assert_eq(r.status, 0, "compile %s: %s", sp->name, r.err);
	run_free(&r);
	char *om = malloc(strlen(dst) + 4);
	sprintf(om, "%s.om", dst);
	free(dst);
	return om;
}

static void fill(float *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		p[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
	}
}

/* Output 0 of om at gear (B, S) on fixed inputs (malloc'd, *n floats):
 * mask 1 but for the second sequence's last two tokens; fast paths off
 * if no_fast. */
static float *run_spelling(const char *om, bool mask, bool no_fast,
			   int threads, size_t *n)
{
	gearrt_model *m;
	gearrt_session *s;
	gearrt_options opt = { .threads = threads, .no_fast = no_fast };
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, &opt, &s), GEARRT_OK);
	static float x[B * S * E];
	static int64_t mk[B * S];
	fill(x, B * S * E, 40);
	for (int i = 0; i < B * S; i++)
		mk[i] = i < 2 * S - 2;
	gearrt_tensor in[2] = {
		{ .dtype = GEARRT_FLOAT32, .rank = 3, .dims = { B, S, E },
		  .data = x, .size = sizeof(x) },
		{ .dtype = GEARRT_INT64, .rank = 2, .dims = { B, S },
		  .data = mk, .size = sizeof(mk) },
	};
	gearrt_tensor out = { 0 };
	cr_assert_eq(gearrt_run(s, in, mask ? 2 : 1, &out, 1), GEARRT_OK,
		     "%s: %s", om, gearrt_last_error());
	*n = out.size / sizeof(float);
	float *y = malloc(out.size);
	memcpy(y, out.data, out.size);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	return y;
}

static void expect_close(const float *a, const float *b, size_t n,
			 const char *what, const char *name)
{
	for (size_t i = 0; i < n; i++)
		cr_assert(fabsf(a[i] - b[i]) <= 1e-5f + 1e-4f * fabsf(b[i]),
			  "%s, %s: element %zu is %g, expected %g", name, what,
			  i, a[i], b[i]);
}

static char *dump_text(const char *om)
{
	Run r = run_gearc("dump", om);
	cr_assert_eq(r.status, 0, "dump %s: %s", om, r.err);
	char *t = strdup(r.out);
	run_free(&r);
	return t;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

Test(attn, spellings_fuse_and_compute_the_same)
{
	char *dir = temp_dir();
	for (size_t c = 0; c < sizeof(spellings) / sizeof(spellings[0]); c++) {
		const Spelling *sp = &spellings[c];
		char *on = compile_spelling(dir, sp, "on", NULL);
		char *off = compile_spelling(dir, sp, "off", "--no-fuse");
		char *t = dump_text(on);
		cr_expect_eq(count(t, " Sdpa "), 2 * sp->sdpa,
			     "%s: %d Sdpa in\n%s", sp->name,
			     count(t, " Sdpa "), t);
		cr_expect(!sp->sdpa || !strstr(t, "Softmax"),
			  "%s: a Softmax left in\n%s", sp->name, t);
		cr_expect(!sp->also || count(t, sp->also) == 2,
			  "%s: '%s' not once a gear in\n%s", sp->name,
			  sp->also, t);
		cr_expect(strstr(t, "LayerNormalization") || sp->sdpa,
			  "%s: LayerNorm not fused in\n%s", sp->name, t);
		size_t n0, n1, n2, n3;
		float *want = run_spelling(off, sp->mask, true, 1, &n0);
		float *ref = run_spelling(on, sp->mask, true, 1, &n1);
		float *f1 = run_spelling(on, sp->mask, false, 1, &n2);
		float *f2 = run_spelling(on, sp->mask, false, 2, &n3);
		cr_assert(n0 == n1 && n1 == n2 && n2 == n3);
		expect_close(ref, want, n0, "reference", sp->name);
		expect_close(f1, want, n0, "1 thread", sp->name);
		cr_expect(!memcmp(f1, f2, n0 * sizeof(float)),
			  "%s: 2 threads differ from 1", sp->name);
		free(want), free(ref), free(f1), free(f2);
		free(t), free(on), free(off);
	}
	remove_tree(dir);
	free(dir);
}

Test(attn, near_misses_stay_unfused)
{
	/* the Softmax over another axis, the mask added before the scale,
	 * scores read by a graph output, a K broadcast in the MatMul, a
	 * band instead of a causal triangle */
	static const char *const misses[] = { "miss_axis", "miss_mask_scaled",
					      "miss_scores_out", "miss_bcast",
					      "miss_band" };
	char *dir = temp_dir();
	for (size_t i = 0; i < sizeof(misses) / sizeof(misses[0]); i++) {
		char model[128];
		snprintf(model, sizeof(model), "attn/%s", misses[i]);
		char *om = compile_fixture(dir, misses[i], model, NULL);
		char *t = dump_text(om);
		cr_expect(!strstr(t, "Sdpa") && strstr(t, "Softmax"),
			  "%s fused:\n%s", misses[i], t);
		free(t);
		free(om);
	}
	remove_tree(dir);
	free(dir);
}

Test(attn, export_writes_attention_back)
{
	/* gear 1 of the fused file as standard ONNX: no gearc op, and it
	 * computes what the fused file does */
	static const char *const names[] = { "hf_bert", "gpt2", "mha",
					     "nanogpt" };
	char *dir = temp_dir();
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const Spelling *sp = NULL;
		for (size_t c = 0; c < sizeof(spellings) / sizeof(*spellings);
		     c++)
			if (!strcmp(spellings[c].name, names[i]))
				sp = &spellings[c];
		char *on = compile_spelling(dir, sp, "on", NULL);
		char *onnx = path_in(dir, "g1.onnx"), o[512], m[512], sh[128];
		snprintf(o, sizeof(o), "--output=%s", onnx);
		Run r = run_gearc("export", on, "--gear=1", o);
		cr_assert_eq(r.status, 0, "export %s: %s", sp->name, r.err);
		run_free(&r);
		size_t n = 0;
		char *bytes = read_file(onnx, &n);
		bool gearc_op = false;
		for (size_t k = 0; k + 8 <= n; k++)
			gearc_op |= !memcmp(bytes + k, "ai.gearc", 8);
		cr_expect(!gearc_op, "%s: gearc's op exported", sp->name);
		free(bytes);
		char *back = path_in(dir, "back");
		snprintf(m, sizeof(m), "--model=%s", onnx);
		snprintf(o, sizeof(o), "--output=%s", back);
		snprintf(sh, sizeof(sh), "--input_shape=x:%d,%d,%d%s", B, S,
			 E, sp->mask ? ";mask:2,7" : "");
		r = run_gearc(m, o, sh, "-q", "--no-fuse");
		cr_assert_eq(r.status, 0, "compile export of %s: %s",
			     sp->name, r.err);
		run_free(&r);
		char *bom = malloc(strlen(back) + 4);
		sprintf(bom, "%s.om", back);
		size_t n1, n0;
		float *y1 = run_spelling(on, sp->mask, false, 1, &n1);
		float *y0 = run_spelling(bom, sp->mask, true, 1, &n0);
		cr_assert_eq(n1, n0);
		expect_close(y1, y0, n1, "exported", sp->name);
		free(y1), free(y0), free(bom), free(back), free(onnx), free(on);
	}
	remove_tree(dir);
	free(dir);
}

/* ---- the kernel against the reference, on nodes built here ------------- */

typedef struct Case {
	int rank;
	int64_t q[4], k[4], v[4], m[4]; /* input shapes (m rank 0: none) */
	int mrank;
	const int64_t *qp, *kp, *vp, *yp; /* perms, or NULL */
	float scale;
	int causal;
	float fill;
} Case;

typedef struct Built {
	Model *m;
	Node *n;
	Tensor *in[4];
	Shape ys;
} Built;

/* A model holding the Sdpa of c, its inputs weights filled from seed
 * (the kernels read them as tensors either way). */
static Built build(const Case *c, uint32_t seed)
{
	Built b = { .m = tu_model(17) };
	Graph *g = b.m->graph;
	const int64_t *dims[4] = { c->q, c->k, c->v, c->m };
	const char *names[4] = { "q", "k", "v", "m" };
	ValId ids[4] = { -1, -1, -1, -1 };
	int nin = c->mrank ? 4 : 3;
	for (int i = 0; i < nin; i++) {
		Shape s = shape_of(i == 3 ? c->mrank : c->rank, dims[i]);
		int64_t cnt = shape_numel(&s);
		float *d = arena_alloc(&b.m->arena, (size_t)cnt * 4 + 4);
		fill(d, (size_t)cnt, seed + (uint32_t)i);
		ids[i] = tu_weight_data(g, names[i], DT_FLOAT, s, d);
		b.in[i] = (Tensor *)g->vals[ids[i]].konst;
	}
	b.n = tu_node(g, "Sdpa", "att", ids, nin, 1);
	b.n->domain = GEARC_DOMAIN;
	b.n->op = OP_Sdpa;
	tu_float(g, b.n, "scale", c->scale);
	if (c->causal) {
		tu_int(g, b.n, "causal", c->causal);
		tu_float(g, b.n, "causal_fill", c->fill);
	}
	const int64_t *perms[4] = { c->qp, c->kp, c->vp, c->yp };
	const char *pn[4] = { "q_perm", "k_perm", "v_perm", "y_perm" };
	for (int i = 0; i < 4; i++)
		if (perms[i])
			tu_ints(g, b.n, pn[i], perms[i], c->rank);
	return b;
}

/* Output of b's node: the reference kernel (its run hook) or the fast
 * path the registry picks, on threads threads. */
static float *run_node(Built *b, bool fast, int threads)
{
	Model *m = b->m;
	Graph *g = m->graph;
	OpCtx c = { .model = m, .g = g, .n = b->n, .opset = 17,
		    .fold_limit = INT64_MAX };
	SdpaGeom geom;
	cr_assert_eq(sdpa_geom(&c, &geom), 0, "%s", last_error());
	ValId yv = b->n->outputs[0];
	g->vals[yv].dtype = DT_FLOAT;
	g->vals[yv].shape = geom.yshape;
	int64_t ny = shape_numel(&geom.yshape);
	Tensor *y = tensor_new(&m->arena, NULL, DT_FLOAT, &geom.yshape, NULL);
	memset(tensor_mut(y), 0xA5, y->nbytes); /* garbage */
	const Tensor *in[4] = { b->in[0], b->in[1], b->in[2], b->in[3] };
	Tensor *outs[1] = { y };
	if (!fast) {
		Arena scratch = { 0 };
		uint8_t set[1] = { 0 };
		OpBind bind = { .in = in, .out = outs, .set = set };
		c.bind = &bind;
		c.arena = &scratch;
		cr_assert_eq(run_sdpa(&c), 0, "%s", last_error());
		cr_assert(set[0]);
		arena_release(&scratch);
	} else {
		gearrt_model md = { .m = m };
		RunCtx s = { .model = &md, .threads = threads };
		const Tensor *cur[16] = { 0 };
		Tensor vt[16];
		Prepared p = { .g = g, .vt = vt, .cur = cur };
		cur[yv] = y;
		Task t = { .n = b->n, .out = outs };
		cr_assert_eq(rt_kernel_choose(&s, &p, &t), 0, "%s",
			     last_error());
		/* the variant of the level the CPU has within the cap */
		char name[64];
		snprintf(name, sizeof(name), "attn.sdpa.%s",
			 cpu_isa_name(cpu_isa()));
		cr_assert_str_eq(rt_kernel_name(&t), name);
		cr_assert_eq(t.fast.run(t.fast.state, in, outs), 0);
		t.fast.free(t.fast.state);
		free(t.lay);
		free(s.work);
	}
	float *r = malloc((size_t)ny * sizeof(float) + 1);
	memcpy(r, y->data, (size_t)ny * sizeof(float));
	return r;
}

static void expect_same_values(const float *a, const float *b, int64_t n,
			       const char *what)
{
	for (int64_t i = 0; i < n; i++) {
		if (isnan(b[i])) {
			cr_assert(isnan(a[i]), "%s: element %lld is %g, the "
				  "reference NaN", what, (long long)i, a[i]);
			continue;
		}
		cr_assert(fabsf(a[i] - b[i]) <= 1e-5f + 1e-4f * fabsf(b[i]),
			  "%s: element %lld is %g, the reference %g", what,
			  (long long)i, a[i], b[i]);
	}
}

/* c's node, its inputs edited by poke (or NULL) after filling: the fast
 * kernel at 1 and 2 threads gives the reference's values, and the same
 * bits at both; returns the reference's output (malloc'd). */
static float *check_case(const Case *c, void (*poke)(Built *), int64_t *n,
			 const char *what)
{
	Built b = build(c, 7);
	if (poke)
		poke(&b);
	float *ref = run_node(&b, false, 1);
	float *f1 = run_node(&b, true, 1), *f2 = run_node(&b, true, 2);
	OpCtx cx = { .model = b.m, .g = b.m->graph, .n = b.n, .opset = 17 };
	SdpaGeom g;
	cr_assert_eq(sdpa_geom(&cx, &g), 0);
	*n = shape_numel(&g.yshape);
	expect_same_values(f1, ref, *n, what);
	cr_expect(!memcmp(f1, f2, (size_t)*n * sizeof(float)),
		  "%s: 2 threads differ from 1", what);
	free(f1), free(f2);
	model_free(b.m);
	return ref;
}

static const int64_t swap12[4] = { 0, 2, 1, 3 };

/* [2, 3, 9, D] queries over 17 keys, head sizes 3 and 5: no length a
 * whole vector; mask [2, 1, 1, 17] */
static Case odd_case(void)
{
	return (Case){ .rank = 4, .q = { 2, 3, 9, 3 }, .k = { 2, 3, 17, 3 },
		       .v = { 2, 3, 17, 5 }, .m = { 2, 1, 1, 17 }, .mrank = 4,
		       .scale = 0.5f };
}

Test(attn, kernel_odd_sizes_and_layouts_match_reference)
{
	int64_t n;
	Case c = odd_case();
	free(check_case(&c, NULL, &n, "odd sizes"));
	/* Q, V and Y as [B, S, H, D] views (y_perm), K as [S, H, B, D],
	 * a mask of [Sq, Skv] broadcast over batch and heads */
	static const int64_t kp[4] = { 2, 1, 0, 3 };
	Case p = { .rank = 4, .q = { 2, 9, 3, 4 }, .k = { 17, 3, 2, 4 },
		   .v = { 2, 17, 3, 6 }, .m = { 9, 17 }, .mrank = 2,
		   .qp = swap12, .kp = kp, .vp = swap12, .yp = swap12,
		   .scale = 0.7f };
	free(check_case(&p, NULL, &n, "permuted"));
	/* rank 3 (batch x heads merged), no mask, one key */
	Case r3 = { .rank = 3, .q = { 4, 5, 8 }, .k = { 4, 1, 8 },
		    .v = { 4, 1, 8 }, .scale = 1 };
	free(check_case(&r3, NULL, &n, "one key"));
	/* enough work for two threads: 4 blocks of 64 x 70 x 32 */
	Case big = { .rank = 4, .q = { 1, 4, 64, 32 }, .k = { 1, 4, 70, 32 },
		     .v = { 1, 4, 70, 40 }, .m = { 70 }, .mrank = 1,
		     .scale = 0.2f };
	free(check_case(&big, NULL, &n, "two threads"));
}

/* Q row 1 of block 0 NaN; K row 4 of block 1 NaN; the mask +inf for
 * key 2 of query 1 of batch 0, -inf for every key of query 2 of batch 1
 * (its heads' rows fully masked), and -inf, -0 and a large value for
 * some keys of query 0 of batch 0. */
static void poke_specials(Built *b)
{
	float *q = tensor_mut(b->in[0]), *k = tensor_mut(b->in[1]);
	float *m = tensor_mut(b->in[3]);
	q[1 * 3 + 0] = NAN;
	k[(1 * 17 + 4) * 3 + 1] = NAN;
	m[1 * 17 + 2] = INFINITY;
	for (int j = 0; j < 17; j++)
		m[(1 * 9 + 2) * 17 + j] = -INFINITY;
	m[3] = -INFINITY, m[5] = -0.0f, m[6] = 80.0f;
}

Test(attn, kernel_special_values_match_reference)
{
	/* the odd case with a full mask [2, 1, 9, 17] */
	Case c = odd_case();
	c.m[2] = 9;
	int64_t n;
	float *ref = check_case(&c, poke_specials, &n, "special values");
	/* NaN: the NaN query's row, every row of the block with the NaN
	 * key, query 1 of batch 0 in the third head too (+inf its max),
	 * batch 1's query 2 in each head; the rest finite */
	int nan = 0;
	for (int64_t i = 0; i < n; i++)
		nan += isnan(ref[i]);
	cr_expect_eq(nan, (1 + 9 + 1 + 3) * 5, "%d NaN", nan);
	free(ref);
}

Test(attn, kernel_causal_masks_match_reference)
{
	int64_t n;
	for (int causal = 1; causal <= 2; causal++)
		for (int wide = 0; wide < 2; wide++) {
			/* 5 queries of 3 keys or 3 of 5; -inf or finfo.min */
			Case c = { .rank = 4, .q = { 1, 2, wide ? 3 : 5, 4 },
				   .k = { 1, 2, wide ? 5 : 3, 4 },
				   .v = { 1, 2, wide ? 5 : 3, 4 },
				   .m = { wide ? 5 : 3 }, .mrank = 1,
				   .scale = 0.5f, .causal = causal,
				   .fill = wide ? -INFINITY : -3.4e38f };
			char what[64];
			snprintf(what, sizeof(what), "causal %d, %s", causal,
				 wide ? "wide" : "tall");
			float *ref = check_case(&c, NULL, &n, what);
			/* lower-right with more queries than keys leaves the
			 * first two queries no key: NaN under -inf, uniform
			 * under finfo.min */
			free(ref);
		}
}

Test(attn, kernel_variants_agree_under_an_isa_cap)
{
	/* the AVX2 and plain C variants (compiler/cpu.h's cap) give the
	 * reference's values */
	static const CpuLevel caps[] = { CPU_LEVEL_AVX2, CPU_LEVEL_BASELINE };
	for (size_t i = 0; i < 2; i++) {
		cpu_cap(caps[i]);
		Case c = odd_case();
		c.m[2] = 9;
		int64_t n;
		free(check_case(&c, poke_specials, &n,
				cpu_level_name(caps[i])));
		/* K in whole blocks of 8 and 16 floats and edges past
		 * them both ways: 27 keys of 20 */
		Case e = { .rank = 4, .q = { 1, 2, 11, 20 },
			   .k = { 1, 2, 27, 20 }, .v = { 1, 2, 27, 12 },
			   .scale = 0.3f };
		free(check_case(&e, NULL, &n, "blocks and edges"));
	}
}
