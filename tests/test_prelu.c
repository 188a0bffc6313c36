/*
 * tests/test_prelu.c - per-channel ops between convolutions on a real
 * network's path, in the convolutions' layout (NHWC where they take
 * it): PRelu by a slope per channel runs chan.binary, a slope of one
 * value after a convolution is fused into it (LeakyRelu); a
 * BatchNormalization no convolution took in (DenseNet's, after a
 * Concat) runs chan.batchnorm with the Relu after it taken in.  What
 * the compiled model computes against the reference kernels
 * (GEARRT_NO_FAST) at 1 and 2 threads, NaN, infinities and -0 in its
 * input; and the profile names the kernels.  (The kernels' bits
 * against the reference's: tests/test_fast.c
 * prelu_slopes_match_reference, batchnorm_matches_reference.)
 */
#include <float.h>
#include <math.h>

#include "runtime/gearrt.h"
#include "serializer/export.h"
#include "synth.h"
#include "testrun.h"

enum { C = 8, H = 12, W = 12, N = C * H * W };

/* x [1,C,H,W] -> Conv -> PRelu (slope [C,1,1]) -> Conv -> PRelu (one
 * slope, 0.25) -> y */
static Model *prelu_model(void)
{
	Synth s = sy_begin("prelu");
	ValId x = tu_input(s.g, "x", DT_FLOAT, SHAPE(1, C, H, W));
	float *w = arena_array(&s.m->arena, C * C * 9, sizeof(float));
	for (int i = 0; i < C * C * 9; i++)
		w[i] = (float)((i * 37) % 17 - 8) / 32;
	static const float slope[C] = { 0.0f, -0.0f, 0.25f, -0.5f, 1.0f,
					3.0f, 1e-40f, -2.0f };
	static const float one = 0.25f;
	ValId wv = tu_weight_data(s.g, "w", DT_FLOAT, SHAPE(C, C, 3, 3), w);
	ValId sv = tu_weight_data(s.g, "slope", DT_FLOAT, SHAPE(C, 1, 1),
				  slope);
	ValId ov = tu_weight_data(s.g, "one", DT_FLOAT, SHAPE(1), &one);
	Node *c = tu_node(s.g, "Conv", "c1", IDS(x, wv), 1);
	tu_ints(s.g, c, "pads", INTS(1, 1, 1, 1));
	ValId p = tu_out(tu_node(s.g, "PRelu", "p1", IDS(tu_out(c, 0), sv), 1),
			 0);
	c = tu_node(s.g, "Conv", "c2", IDS(p, wv), 1);
	tu_ints(s.g, c, "pads", INTS(1, 1, 1, 1));
	ValId y = tu_out(tu_node(s.g, "PRelu", "p2", IDS(tu_out(c, 0), ov), 1),
			 0);
	Model *m = sy_end(&s, y);
	cr_assert(m, "%s", last_error());
	m->ir_version = 8;
	return m;
}

/* x [1,C,H,W] -> Conv -> Concat(it, x) -> BatchNormalization -> Relu
 * -> Conv -> y */
static Model *batchnorm_model(void)
{
	Synth s = sy_begin("batchnorm");
	ValId x = tu_input(s.g, "x", DT_FLOAT, SHAPE(1, C, H, W));
	float *w = arena_array(&s.m->arena, 2 * C * C * 9, sizeof(float));
	for (int i = 0; i < 2 * C * C * 9; i++)
		w[i] = (float)((i * 37) % 17 - 8) / 32;
	float *st = arena_array(&s.m->arena, 4 * 2 * C, sizeof(float));
	for (int i = 0; i < 2 * C; i++) {
		st[i] = (float)(i % 5 - 2) / 2;		  /* scale, -1..1 */
		st[2 * C + i] = (float)(i % 3) - 1;	  /* B */
		st[4 * C + i] = (float)(i % 7 - 3) / 4;	  /* mean */
		st[6 * C + i] = (float)(i % 4) + 0.5f;	  /* var */
	}
	ValId w1 = tu_weight_data(s.g, "w1", DT_FLOAT, SHAPE(C, C, 3, 3), w);
	ValId w2 = tu_weight_data(s.g, "w2", DT_FLOAT, SHAPE(C, 2 * C, 3, 3),
				  w);
	ValId sv[4];
	static const char *names[] = { "scale", "B", "mean", "var" };
	for (int i = 0; i < 4; i++)
		sv[i] = tu_weight_data(s.g, names[i], DT_FLOAT, SHAPE(2 * C),
				       st + i * 2 * C);
	Node *c = tu_node(s.g, "Conv", "c1", IDS(x, w1), 1);
	tu_ints(s.g, c, "pads", INTS(1, 1, 1, 1));
	Node *cat = tu_node(s.g, "Concat", "cat", IDS(tu_out(c, 0), x), 1);
	tu_int(s.g, cat, "axis", 1);
	Node *bn = tu_node(s.g, "BatchNormalization", "bn",
			   IDS(tu_out(cat, 0), sv[0], sv[1], sv[2], sv[3]), 1);
	Node *r = tu_node(s.g, "Relu", "r", IDS(tu_out(bn, 0)), 1);
	c = tu_node(s.g, "Conv", "c2", IDS(tu_out(r, 0), w2), 1);
	tu_ints(s.g, c, "pads", INTS(1, 1, 1, 1));
	Model *m = sy_end(&s, tu_out(c, 0));
	cr_assert(m, "%s", last_error());
	m->ir_version = 8;
	return m;
}

static float *run_model(const char *om, bool no_fast, int threads)
{
	gearrt_model *m;
	gearrt_session *s;
	gearrt_options opt = { .threads = threads, .no_fast = no_fast };
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, &opt, &s), GEARRT_OK);
	static const float edges[] = { NAN, INFINITY, -INFINITY, -0.0f };
	static float x[N];
	for (int i = 0; i < N; i++)
		x[i] = (float)((i * 29) % 23 - 11) / 8;
	for (int i = 0; i < 4; i++) /* far apart: each spreads 5x5 */
		x[(i + 1) * N / 5 + i * 7] = edges[i];
	gearrt_tensor in = { .dtype = GEARRT_FLOAT32, .rank = 4,
			     .dims = { 1, C, H, W }, .data = x,
			     .size = sizeof(x) };
	gearrt_tensor out = { 0 };
	cr_assert_eq(gearrt_run(s, &in, 1, &out, 1), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(out.size, sizeof(x));
	float *y = malloc(out.size);
	memcpy(y, out.data, out.size);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	return y;
}

/* Compiles m (consumed) into DIR/NAME.om, whose path it returns in om,
 * the directory in *dir. */
static void compile_net(Model *m, const char *name, char **dir,
			  char om[600])
{
	char onnx[520], out[520], mflag[600], oflag[600];
	*dir = temp_dir();
	snprintf(onnx, sizeof(onnx), "%s/%s.onnx", *dir, name);
	snprintf(out, sizeof(out), "%s/%s", *dir, name);
	OnnxExport ox = { 0 };
	cr_assert_eq(onnx_write(m, m->graph, &ox, onnx), 0, "%s",
		     last_error());
	model_free(m);
	snprintf(mflag, sizeof(mflag), "--model=%s", onnx);
	snprintf(oflag, sizeof(oflag), "--output=%s", out);
	const char *args[] = { mflag, oflag, "-q", NULL };
	Run r = run_gearcv(args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	snprintf(om, 600, "%s.om", out);
}

/* om's outputs at 1 and 2 threads against the reference kernels'
 * (NaN reaching them), then its profile has every string of want and
 * none of shun. */
static void check_model(const char *om, const char *const *want,
			const char *const *shun)
{
	float *ref = run_model(om, true, 1);
	for (int threads = 1; threads <= 2; threads++) {
		float *y = run_model(om, false, threads);
		int nan = 0;
		for (int i = 0; i < N; i++) {
			nan += isnan(ref[i]);
			cr_assert((isnan(y[i]) && isnan(ref[i])) ||
					  y[i] == ref[i] ||
					  fabsf(y[i] - ref[i]) <=
						  1e-5f + 1e-4f * fabsf(ref[i]),
				  "%d threads: element %d is %g, the reference "
				  "%g", threads, i, y[i], ref[i]);
		}
		cr_expect_gt(nan, 0, "no NaN reached the output");
		free(y);
	}
	free(ref);
	setenv("GEARRT_PROFILE", "nodes", 1);
	unsetenv("GEARRT_NO_FAST");
	Run r = run_gearc("run", om, "--random-inputs", "--quiet");
	cr_assert_eq(r.status, 0, "%s", r.err);
	for (; *want; want++)
		cr_expect(strstr(r.err, *want), "no %s: %s", *want, r.err);
	for (; *shun; shun++)
		cr_expect(!strstr(r.err, *shun), "%s: %s", *shun, r.err);
	run_free(&r);
	unsetenv("GEARRT_PROFILE");
}

Test(prelu, per_channel_between_convolutions_matches_reference)
{
	char *dir, om[600];
	compile_net(prelu_model(), "prelu", &dir, om);
	/* the slope of one value went into the Conv, the per-channel one
	 * stayed */
	Run r = run_gearc("dump", om);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "[LeakyRelu(0.25,0)]") &&
			  strstr(r.out, " PRelu "),
		  "%s", r.out);
	run_free(&r);
	/* the profile: chan.binary (ew.binary only where no convolution
	 * is NHWC at this ISA level), never ref */
	static const char *const want[] = { "PRelu/", NULL };
	static const char *const shun[] = { "PRelu/ref", NULL };
	check_model(om, want, shun);
	remove_tree(dir);
	free(dir);
}

Test(prelu, batchnorm_after_a_concat_matches_reference)
{
	char *dir, om[600];
	compile_net(batchnorm_model(), "batchnorm", &dir, om);
	static const char *const want[] = { "BatchNormalization/chan.batchnorm",
					    "Relu/chan.batchnorm_act", NULL };
	static const char *const shun[] = { "/ref", NULL };
	check_model(om, want, shun);
	remove_tree(dir);
	free(dir);
}
