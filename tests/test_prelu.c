/*
 * tests/test_prelu.c - PRelu on a real network's path: a slope per
 * channel between two convolutions runs chan.binary in the
 * convolutions' layout (NHWC where they take it), a slope of one value
 * after a convolution is fused into it (LeakyRelu); what the compiled
 * model computes against the reference kernels (GEARRT_NO_FAST) at 1
 * and 2 threads, NaN, infinities and -0 in its input; and the profile
 * names the kernels.  (The kernels' bits against the reference's:
 * tests/test_fast.c prelu_slopes_match_reference.)
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

static float *run_prelu(const char *om, bool no_fast, int threads)
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

Test(prelu, per_channel_between_convolutions_matches_reference)
{
	char *dir = temp_dir(), *onnx = path_in(dir, "prelu.onnx");
	char *out = path_in(dir, "prelu"), mflag[512], oflag[512], om[600];
	Model *m = prelu_model();
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
	snprintf(om, sizeof(om), "%s.om", out);
	/* the slope of one value went into the Conv, the per-channel one
	 * stayed */
	r = run_gearc("dump", om);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "[LeakyRelu(0.25,0)]") &&
			  strstr(r.out, " PRelu "),
		  "%s", r.out);
	run_free(&r);
	float *ref = run_prelu(om, true, 1);
	for (int threads = 1; threads <= 2; threads++) {
		float *y = run_prelu(om, false, threads);
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
	/* the profile: chan.binary (or, where no convolution is NHWC at
	 * this ISA level, ew.binary), never ref */
	setenv("GEARRT_PROFILE", "nodes", 1);
	unsetenv("GEARRT_NO_FAST");
	r = run_gearc("run", om, "--random-inputs", "--quiet");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect((strstr(r.err, "PRelu/chan.binary") ||
		   strstr(r.err, "PRelu/ew.binary")) &&
			  !strstr(r.err, "PRelu/ref"),
		  "%s", r.err);
	run_free(&r);
	unsetenv("GEARRT_PROFILE");
	remove_tree(dir);
	free(dir);
	free(onnx);
	free(out);
}
