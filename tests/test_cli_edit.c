/*
 * tests/test_cli_edit.c - atc's edits of a model's inputs and outputs:
 * --out_nodes, --output_type, --input_fp16_nodes (compiler/edit.h), and
 * the preprocessing flags (compiler/preproc.h), run as a user runs them.
 * Fixtures: tests/gen_cli_models.py.
 */
#include <math.h>

#include "cli/npy.h"
#include "testrun.h"

#define CHAIN "--model=tests/fixtures/cli_chain.onnx"

/* Compiles with the given flags (NULL ended) to dir/m.om; asserts
 * success. */
static char *compile_with(const char *dir, const char *model,
			  const char *const *extra)
{
	return compile_fixture(dir, "m", model, extra);
}

/* Runs om with input NAME=file and returns output out's tensor. */
static Tensor *run_one(Arena *a, const char *dir, const char *om,
		       const char *input, const char *out)
{
	char *odir = path_in(dir, "out"), oflag[600];
	snprintf(oflag, sizeof(oflag), "--output-dir=%s", odir);
	Run r = run_gearc("run", om, "--input", input, oflag, "-q");
	cr_assert_eq(r.status, 0, "run: %s", r.err);
	run_free(&r);
	char name[256];
	snprintf(name, sizeof(name), "%s.npy", out);
	char *p = path_in(odir, name);
	Tensor *t = npy_read(a, p);
	cr_assert(t, "%s", last_error());
	free(p);
	free(odir);
	return t;
}

static char *write_npy(const char *dir, const char *name, int dt,
		       const Shape *s, const void *data)
{
	char *p = path_in(dir, name);
	cr_assert_eq(npy_write(p, dt, s, data), 0, "%s", last_error());
	return p;
}

Test(cli_edit, out_nodes_pick_outputs_and_drop_the_rest)
{
	char *dir = temp_dir();
	const char *extra[] = { "--out_nodes=/n:0;/s:1", NULL };
	char *om = compile_with(dir, "cli_chain", extra);
	Run r = run_gearc("dump", om);
	cr_expect(strstr(r.out, "outputs:\n  n                        float32  "
			 "[1,4]\n  s1                       float32  [1,2]\n"),
		  "%s", r.out);
	/* Abs, Exp, Concat no longer reach an output */
	cr_expect(strstr(r.out, "graph root: 3 nodes"), "%s", r.out);
	cr_expect(strstr(r.out, "option:    --out_nodes=/n:0;/s:1\n"), "%s",
		  r.out);
	run_free(&r);
	free(om);
	const char *tensors[] = { "--out_nodes=r;e", NULL };
	om = compile_with(dir, "cli_chain", tensors);
	r = run_gearc("dump", om);
	cr_expect(strstr(r.out, "outputs:\n  r  "), "%s", r.out);
	run_free(&r);
	free(om);
	remove_tree(dir);
	free(dir);
}

Test(cli_edit, out_nodes_errors)
{
	static const char *usage[][2] = {
		{ "--out_nodes=", "--out_nodes is empty" },
		{ "--out_nodes=/n:0;;/r:0", "--out_nodes: entry 2 is empty" },
		{ "--out_nodes=/n:0;r", "--out_nodes: entry 2 ('r') is a tensor name, but entry 1 a node output" },
		{ "--out_nodes=/n:0;/n:0", "--out_nodes: entry 2 repeats entry 1" },
	};
	for (size_t i = 0; i < sizeof(usage) / sizeof(usage[0]); i++) {
		Run r = run_gearc(CHAIN, "--output=/tmp/never", usage[i][0]);
		expect_error(&r, 2, usage[i][1]);
		run_free(&r);
	}
	static const char *model[][2] = {
		{ "--out_nodes=/nope:0", "--out_nodes: the model has no node named '/nope'" },
		{ "--out_nodes=/s:2", "--out_nodes: node '/s' (Split) has 2 outputs; '/s:2' is out of range" },
		{ "--out_nodes=zz", "--out_nodes: the model has no tensor named 'zz'" },
		{ "--out_nodes=/n:0;n", "--out_nodes: entry 2 ('n') is a tensor name" },
	};
	for (size_t i = 0; i < sizeof(model) / sizeof(model[0]); i++) {
		Run r = run_gearc(CHAIN, "--output=/tmp/never", model[i][0]);
		expect_error(&r, i == 3 ? 2 : 1, model[i][1]);
		run_free(&r);
	}
}

Test(cli_edit, output_type_uint8_rounds_half_to_even)
{
	char *dir = temp_dir();
	const char *extra[] = { "--output_type=UINT8", NULL };
	char *om = compile_with(dir, "cli_chain", extra);
	/* y = [|-relu(x0)|, |-relu(x1)|, exp(-relu(x2)), exp(-relu(x3))] */
	float x[4] = { 2.5f, 3.5f, 0, 400 };
	Shape s = { .rank = 2, .dims = { 1, 4 } };
	char *in = write_npy(dir, "x.npy", DT_FLOAT, &s, x), flag[600];
	snprintf(flag, sizeof(flag), "x=%s", in);
	Arena a = { 0 };
	Tensor *y = run_one(&a, dir, om, flag, "y");
	cr_assert_eq(y->dtype, DT_UINT8);
	const uint8_t *v = y->data;
	cr_expect(v[0] == 2 && v[1] == 4 && v[2] == 1 && v[3] == 0,
		  "%d %d %d %d", v[0], v[1], v[2], v[3]);
	arena_release(&a);
	free(in);
	free(om);
	/* FP16 per output keeps the name */
	const char *fp16[] = { "--output_type=/c:0:FP16", NULL };
	om = compile_with(dir, "cli_chain", fp16);
	Run r = run_gearc("dump", om);
	cr_expect(strstr(r.out, "outputs:\n  y                        float16"),
		  "%s", r.out);
	run_free(&r);
	free(om);
	remove_tree(dir);
	free(dir);
}

Test(cli_edit, output_type_errors)
{
	static const char *cases[][3] = {
		{ "--output_type=INT8", "2", "--output_type: 'INT8' is not an output type (expected FP32, FP16 or UINT8)" },
		{ "--output_type=/c:0:FP64", "2", "--output_type: 'FP64' is not an output type" },
		{ "--output_type=/c:FP16", "2", "--output_type: entry 1 ('/c') has no output index; expected NODE:INDEX:TYPE" },
		{ "--output_type=", "2", "--output_type is empty" },
		{ "--output_type=/n:0:FP16", "1", "--output_type: '/n:0' (tensor 'n') is not an output of the model" },
		{ "--output_type=/zz:0:FP16", "1", "--output_type: the model has no node named '/zz'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		Run r = run_gearc(CHAIN, "--output=/tmp/never", cases[i][0]);
		expect_error(&r, atoi(cases[i][1]), cases[i][2]);
		run_free(&r);
	}
}

Test(cli_edit, input_fp16_nodes)
{
	char *dir = temp_dir();
	const char *extra[] = { "--input_shape=x:-1,3,32,32",
				"--dynamic_batch_size=1,2",
				"--input_fp16_nodes=x", NULL };
	char *om = compile_with(dir, "demo_cnn", extra);
	Run r = run_gearc("dump", om);
	cr_expect(strstr(r.out, "  x                        float16  "
			 "[-1,3,32,32]"), "%s", r.out);
	cr_expect(strstr(r.out, "  probs                    float32"), "%s",
		  r.out);
	run_free(&r);
	r = run_gearc("run", om, "--random-inputs", "--gear=1");
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	free(om);
	remove_tree(dir);
	free(dir);
	r = run_gearc(CHAIN, "--output=/tmp/never", "--input_fp16_nodes=y");
	expect_error(&r, 1, "--input_fp16_nodes: 'y' is not an input of the "
		     "model");
	run_free(&r);
	r = run_gearc("--model=tests/fixtures/cli_kv.onnx",
		      "--output=/tmp/never", "--input_fp16_nodes=input_ids",
		      "--dynamic_dims=batch:1,2;seq:1;past_sequence_length:4");
	expect_error(&r, 1, "--input_fp16_nodes: input 'input_ids' is int64; "
		     "only float32 inputs can take float16");
	run_free(&r);
	r = run_gearc(CHAIN, "--output=/tmp/never", "--input_fp16_nodes=x;x");
	expect_error(&r, 2, "--input_fp16_nodes: 'x' is given twice");
	run_free(&r);
}

/* ---- preprocessing: a uint8 frame in, the model's answer out -------------- */

/* A deterministic uint8 frame [n,h,w,c]. */
static uint8_t *frame(int64_t n, int64_t h, int64_t w, int64_t c)
{
	uint8_t *p = malloc((size_t)(n * h * w * c));
	uint32_t x = 12345;
	for (int64_t i = 0; i < n * h * w * c; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
	return p;
}

/* The largest |a - b| of two float tensors of one shape. */
static double max_abs_diff(const Tensor *a, const Tensor *b)
{
	cr_assert(shape_equal(&a->shape, &b->shape));
	const float *x = a->data, *y = b->data;
	double m = 0;
	for (int64_t i = 0; i < shape_numel(&a->shape); i++)
		m = fmax(m, fabs((double)x[i] - (double)y[i]));
	return m;
}

/* Runs om on the frame and ref_om (the model as it is) on ref, the frame
 * normalised by hand (NULL: ref_om on the frame too); the largest
 * difference of output y. */
static double compare(const char *dir, const char *om, const uint8_t *fr,
		      const Shape *fs, const char *ref_om, const float *ref,
		      const Shape *rs, const char *out)
{
	char *a = write_npy(dir, "frame.npy", DT_UINT8, fs, fr),
	     *b = ref ? write_npy(dir, "ref.npy", DT_FLOAT, rs, ref) : NULL,
	     fa[600], fb[600];
	snprintf(fa, sizeof(fa), "x=%s", a);
	snprintf(fb, sizeof(fb), "x=%s", b ? b : a);
	Arena ar = { 0 };
	Tensor *y1 = run_one(&ar, dir, om, fa, out);
	Tensor *y2 = run_one(&ar, dir, ref_om, fb, out);
	double d = max_abs_diff(y1, y2);
	arena_release(&ar);
	free(a);
	free(b);
	return d;
}

/* x[n][c][h][w] of the model = (frame[n][h][w][c'] - mean) * scale, c'
 * the frame channel feeding model channel c. */
static float *normalise(const uint8_t *fr, int64_t n, int64_t h, int64_t w,
			int64_t cin, const int64_t *chan, const double *mean,
			const double *scale)
{
	float *x = malloc((size_t)(n * 3 * h * w) * sizeof(float));
	for (int64_t b = 0; b < n; b++)
		for (int64_t c = 0; c < 3; c++)
			for (int64_t i = 0; i < h * w; i++)
				x[((b * 3 + c) * h * w) + i] =
					(float)(((double)fr[(b * h * w + i) * cin +
							     chan[c]] -
						 mean[c]) *
						scale[c]);
	return x;
}

static const char aipp_cfg[] =
	"# ImageNet's normalisation of an RGB frame\n"
	"aipp_op {\n"
	"  aipp_mode: static\n"
	"  input_format: RGB888_U8\n"
	"  mean_chn_0: 124\n  mean_chn_1: 116\n  mean_chn_2: 104\n"
	"  min_chn_0: -0.325\n  min_chn_1: 0.28\n  min_chn_2: -0.47\n"
	"  var_reci_chn_0: 0.0171247538\n"
	"  var_reci_chn_1: 0.0175070028\n"
	"  var_reci_chn_2: 0.0174291939\n"
	"}\n";

static const double in_mean[3] = { 123.675, 116.28, 103.53 };
static const double in_scale[3] = { 0.0171247538, 0.0175070028,
				    0.0174291939 };

static char *write_cfg(const char *dir, const char *text)
{
	char *p = path_in(dir, "aipp.cfg");
	write_file(p, text, strlen(text));
	return p;
}

/* The model compiled as it is, and with the flags: the two .om paths. */
static void compile_pair(const char *dir, const char *model,
			 const char *const *plain, const char *const *pre,
			 char **ref_om, char **pre_om, char *err, size_t n)
{
	*ref_om = compile_fixture(dir, "ref", model, plain);
	char mflag[256], oflag[600];
	snprintf(mflag, sizeof(mflag), "--model=tests/fixtures/%s.onnx", model);
	char *out = path_in(dir, "pre");
	snprintf(oflag, sizeof(oflag), "--output=%s", out);
	const char *argv[16] = { mflag, oflag };
	int k = 2;
	for (; pre && *pre; pre++)
		argv[k++] = *pre;
	argv[k] = NULL;
	Run r = run_gearcv(argv);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(err, n, "%s", r.err);
	run_free(&r);
	*pre_om = malloc(strlen(out) + 4);
	sprintf(*pre_om, "%s.om", out);
	free(out);
}

Test(cli_edit, aipp_folds_into_the_first_conv)
{
	char *dir = temp_dir(), *cfg = write_cfg(dir, aipp_cfg), flag[600];
	snprintf(flag, sizeof(flag), "--insert_op_conf=%s", cfg);
	const char *pre[] = { flag, NULL };
	char *ref_om, *pre_om, err[4096];
	compile_pair(dir, "aipp_cnn", NULL, pre, &ref_om, &pre_om, err,
		     sizeof(err));
	cr_expect(!strstr(err, "note:"), "%s", err); /* folded: no note */
	Run r = run_gearc("dump", pre_om);
	cr_expect(strstr(r.out, "  x                        uint8    "
			 "[1,8,8,3]\n"), "%s", r.out);
	cr_expect(!strstr(r.out, "Mul") && !strstr(r.out, " Add "), "%s",
		  r.out);
	cr_expect(strstr(r.out, "/conv1/W_preproc"), "%s", r.out);
	run_free(&r);
	uint8_t *fr = frame(1, 8, 8, 3);
	int64_t chan[3] = { 0, 1, 2 };
	float *x = normalise(fr, 1, 8, 8, 3, chan, in_mean, in_scale);
	Shape fs = { 4, { 1, 8, 8, 3 } }, xs = { 4, { 1, 3, 8, 8 } };
	double d = compare(dir, pre_om, fr, &fs, ref_om, x, &xs, "y");
	cr_expect(d <= 1e-4, "max abs diff %g", d);
	free(fr);
	free(x);
	free(ref_om);
	free(pre_om);
	free(cfg);
	remove_tree(dir);
	free(dir);
}

Test(cli_edit, aipp_before_a_padding_conv_folds_the_scale_only)
{
	char *dir = temp_dir(), *cfg = write_cfg(dir, aipp_cfg), flag[600];
	snprintf(flag, sizeof(flag), "--insert_op_conf=%s", cfg);
	const char *pre[] = { flag, NULL };
	char *ref_om, *pre_om, err[4096];
	compile_pair(dir, "aipp_cnn_pad", NULL, pre, &ref_om, &pre_om, err,
		     sizeof(err));
	cr_expect(strstr(err, "gearc: note: --insert_op_conf: input 'x': Conv "
			 "'/conv1' pads its input, so only the scale folds "
			 "into its weights; the offset stays an Add before "
			 "it\n"), "%s", err);
	uint8_t *fr = frame(1, 8, 8, 3);
	int64_t chan[3] = { 0, 1, 2 };
	float *x = normalise(fr, 1, 8, 8, 3, chan, in_mean, in_scale);
	Shape fs = { 4, { 1, 8, 8, 3 } }, xs = { 4, { 1, 3, 8, 8 } };
	double d = compare(dir, pre_om, fr, &fs, ref_om, x, &xs, "y");
	cr_expect(d <= 1e-4, "max abs diff %g", d);
	free(fr);
	free(x);
	free(ref_om);
	free(pre_om);
	free(cfg);
	remove_tree(dir);
	free(dir);
}

Test(cli_edit, openvino_mean_scale_reverse_nhwc_u8)
{
	char *dir = temp_dir();
	const char *pre[] = { "--mean_values=x[123.675,116.28,103.53]",
			      "--scale_values=x[58.395,57.12,57.375]",
			      "--reverse_input_channels",
			      "--source_layout=nhwc", "--source_type=u8",
			      NULL };
	char *ref_om, *pre_om, err[4096];
	compile_pair(dir, "aipp_cnn", NULL, pre, &ref_om, &pre_om, err,
		     sizeof(err));
	cr_expect(!strstr(err, "note:"), "%s", err);
	uint8_t *fr = frame(1, 8, 8, 3);
	/* a BGR frame: model channel c is frame channel 2 - c */
	int64_t chan[3] = { 2, 1, 0 };
	double scale[3] = { 1 / 58.395, 1 / 57.12, 1 / 57.375 };
	float *x = normalise(fr, 1, 8, 8, 3, chan, in_mean, scale);
	Shape fs = { 4, { 1, 8, 8, 3 } }, xs = { 4, { 1, 3, 8, 8 } };
	double d = compare(dir, pre_om, fr, &fs, ref_om, x, &xs, "y");
	cr_expect(d <= 1e-4, "max abs diff %g", d);
	free(ref_om);
	free(pre_om);
	/* --layout says source and target at once; bare lists are the
	 * first input's */
	const char *layout[] = { "--mean_values=123.675,116.28,103.53",
				 "--scale_values=58.395,57.12,57.375",
				 "--reverse_input_channels",
				 "--layout=x(nhwc->nchw)", "--source_type=u8",
				 NULL };
	compile_pair(dir, "aipp_cnn", NULL, layout, &ref_om, &pre_om, err,
		     sizeof(err));
	d = compare(dir, pre_om, fr, &fs, ref_om, x, &xs, "y");
	cr_expect(d <= 1e-4, "max abs diff %g", d);
	free(fr);
	free(x);
	free(ref_om);
	free(pre_om);
	remove_tree(dir);
	free(dir);
}

Test(cli_edit, aipp_crop_xrgb_swap_padding)
{
	/* a 12x10 XRGB frame, (2,1)+6x6 cropped, B and R swapped, padded
	 * by 1 with -1 to the model's 8x8 */
	static const char cfg_text[] =
		"aipp_op {\n aipp_mode: static\n input_format: XRGB8888_U8\n"
		" src_image_size_w: 10\n src_image_size_h: 12\n"
		" crop: true\n load_start_pos_w: 1\n load_start_pos_h: 2\n"
		" crop_size_w: 6\n crop_size_h: 6\n rbuv_swap_switch: true\n"
		" padding: true\n left_padding_size: 1\n right_padding_size: 1\n"
		" top_padding_size: 1\n bottom_padding_size: 1\n"
		" padding_value: -1\n"
		" mean_chn_0: 10\n mean_chn_1: 20\n mean_chn_2: 30\n"
		" var_reci_chn_0: 0.01\n var_reci_chn_1: 0.02\n"
		" var_reci_chn_2: 0.03\n}\n";
	char *dir = temp_dir(), *cfg = write_cfg(dir, cfg_text), flag[600];
	snprintf(flag, sizeof(flag), "--insert_op_conf=%s", cfg);
	const char *pre[] = { flag, NULL };
	char *ref_om, *pre_om, err[4096];
	compile_pair(dir, "aipp_cnn", NULL, pre, &ref_om, &pre_om, err,
		     sizeof(err));
	cr_expect(strstr(err, "does not fold into a Conv (padding comes after "
			 "it)"), "%s", err);
	uint8_t *fr = frame(1, 12, 10, 4);
	float x[3 * 8 * 8];
	double mean[3] = { 10, 20, 30 }, var[3] = { 0.01, 0.02, 0.03 };
	for (int c = 0; c < 3; c++)
		for (int i = 0; i < 8; i++)
			for (int j = 0; j < 8; j++) {
				float *p = &x[(c * 8 + i) * 8 + j];
				if (i == 0 || j == 0 || i == 7 || j == 7) {
					*p = -1;
					continue;
				}
				int y = 2 + i - 1, xx = 1 + j - 1;
				/* X first, then R G B; swapped: B G R */
				int src = 1 + (2 - c);
				*p = (float)((fr[(y * 10 + xx) * 4 + src] -
					      mean[c]) * var[c]);
			}
	Shape fs = { 4, { 1, 12, 10, 4 } }, xs = { 4, { 1, 3, 8, 8 } };
	double d = compare(dir, pre_om, fr, &fs, ref_om, x, &xs, "y");
	cr_expect(d <= 1e-4, "max abs diff %g", d);
	free(fr);
	free(ref_om);
	free(pre_om);
	free(cfg);
	remove_tree(dir);
	free(dir);
}

Test(cli_edit, aipp_csc)
{
	/* BT.601 YUV444 -> RGB as atc's CSC table gives it (full range) */
	static const char cfg_text[] =
		"aipp_op {\n aipp_mode: static\n input_format: RGB888_U8\n"
		" csc_switch: true\n"
		" matrix_r0c0: 256\n matrix_r0c1: 0\n matrix_r0c2: 359\n"
		" matrix_r1c0: 256\n matrix_r1c1: -88\n matrix_r1c2: -183\n"
		" matrix_r2c0: 256\n matrix_r2c1: 454\n matrix_r2c2: 0\n"
		" input_bias_0: 0\n input_bias_1: 128\n input_bias_2: 128\n"
		" var_reci_chn_0: 0.00392157\n var_reci_chn_1: 0.00392157\n"
		" var_reci_chn_2: 0.00392157\n}\n";
	static const int m[3][3] = { { 256, 0, 359 },
				     { 256, -88, -183 },
				     { 256, 454, 0 } };
	static const int ib[3] = { 0, 128, 128 };
	char *dir = temp_dir(), *cfg = write_cfg(dir, cfg_text), flag[600];
	snprintf(flag, sizeof(flag), "--insert_op_conf=%s", cfg);
	const char *pre[] = { flag, NULL };
	char *ref_om, *pre_om, err[4096];
	compile_pair(dir, "aipp_cnn", NULL, pre, &ref_om, &pre_om, err,
		     sizeof(err));
	uint8_t *fr = frame(1, 8, 8, 3);
	float x[3 * 64];
	for (int i = 0; i < 64; i++)
		for (int r = 0; r < 3; r++) {
			int acc = 0;
			for (int k = 0; k < 3; k++)
				acc += m[r][k] * (fr[i * 3 + k] - ib[k]);
			/* >> 8 is floor; the result saturates to a byte */
			int v = (int)floor(acc / 256.0);
			v = v < 0 ? 0 : v > 255 ? 255 : v;
			x[r * 64 + i] = (float)(v * 0.00392157);
		}
	Shape fs = { 4, { 1, 8, 8, 3 } }, xs = { 4, { 1, 3, 8, 8 } };
	double d = compare(dir, pre_om, fr, &fs, ref_om, x, &xs, "y");
	cr_expect(d <= 1e-4, "max abs diff %g", d);
	free(fr);
	free(ref_om);
	free(pre_om);
	free(cfg);
	remove_tree(dir);
	free(dir);
}

Test(cli_edit, aipp_with_gears)
{
	char *dir = temp_dir(), *cfg = write_cfg(dir, aipp_cfg), flag[600];
	snprintf(flag, sizeof(flag), "--insert_op_conf=%s", cfg);
	const char *plain[] = { "--input_shape=x:-1,3,32,32",
				"--dynamic_batch_size=1,2", NULL };
	const char *pre[] = { flag, "--input_shape=x:-1,3,32,32",
			      "--dynamic_batch_size=1,2", "-q", NULL };
	char *ref_om, *pre_om, err[4096];
	compile_pair(dir, "demo_cnn", plain, pre, &ref_om, &pre_om, err,
		     sizeof(err));
	Run r = run_gearc("dump", pre_om);
	/* --input_shape's dims are the model's NCHW input's: N stays a
	 * gear dim, H, W, C move */
	cr_expect(strstr(r.out, "  x                        uint8    "
			 "[-1,32,32,3]  max [2,32,32,3]\n"), "%s", r.out);
	run_free(&r);
	uint8_t *fr = frame(2, 32, 32, 3);
	int64_t chan[3] = { 0, 1, 2 };
	float *x = normalise(fr, 2, 32, 32, 3, chan, in_mean, in_scale);
	Shape fs = { 4, { 2, 32, 32, 3 } }, xs = { 4, { 2, 3, 32, 32 } };
	double d = compare(dir, pre_om, fr, &fs, ref_om, x, &xs, "probs");
	cr_expect(d <= 1e-4, "max abs diff %g", d);
	free(fr);
	free(x);
	free(ref_om);
	free(pre_om);
	/* image-size gears: H and W stay gear dims in NHWC; AIPP on the
	 * first input only */
	const char *img[] = { flag, "--input_shape=a:1,3,-1,-1;b:1,3,-1,-1",
			      "--dynamic_image_size=32,32;48,64", NULL };
	char *om = compile_fixture(dir, "img", "two_inputs", img);
	r = run_gearc("dump", om);
	cr_expect(strstr(r.out, "  a                        uint8    "
			 "[1,-1,-1,3]  max [1,48,64,3]\n"), "%s", r.out);
	cr_expect(strstr(r.out, "  b                        float32  "
			 "[1,3,-1,-1]  max [1,3,48,64]\n"), "%s", r.out);
	run_free(&r);
	r = run_gearc("run", om, "--random-inputs", "--gear=1");
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	free(om);
	free(cfg);
	remove_tree(dir);
	free(dir);
}

/* ---- YUV420SP_U8: a camera's NV12 / NV21 buffer in ---------------------- */

/* BT.601 full range (JPEG), YUV -> RGB, as atc's CSC table gives it. */
static const int bt601[3][3] = { { 256, 0, 359 },
				 { 256, -88, -183 },
				 { 256, 454, 0 } };
static const int bt601_ib[3] = { 0, 128, 128 };

#define BT601_CFG                                                       \
	" csc_switch: true\n"                                           \
	" matrix_r0c0: 256\n matrix_r0c1: 0\n matrix_r0c2: 359\n"       \
	" matrix_r1c0: 256\n matrix_r1c1: -88\n matrix_r1c2: -183\n"    \
	" matrix_r2c0: 256\n matrix_r2c1: 454\n matrix_r2c2: 0\n"       \
	" input_bias_0: 0\n input_bias_1: 128\n input_bias_2: 128\n"

/* ImageNet's normalisation as aipp_cfg gives it (mean_chn + min_chn =
 * in_mean, var_reci_chn = in_scale). */
#define IMAGENET_CFG                                                    \
	" mean_chn_0: 124\n mean_chn_1: 116\n mean_chn_2: 104\n"        \
	" min_chn_0: -0.325\n min_chn_1: 0.28\n min_chn_2: -0.47\n"     \
	" var_reci_chn_0: 0.0171247538\n"                               \
	" var_reci_chn_1: 0.0175070028\n"                               \
	" var_reci_chn_2: 0.0174291939\n"

/* Channel values of pixel (i, j) of one frame fr of an h x w image
 * ([h*3/2][w] bytes: Y rows, then rows of U,V pairs; V,U if vu), the
 * straightforward way: the pixel's Y, the pair of its 2x2 block, then
 * atc's conversion out_r = sum_k M[r][k] (in_k - bias_k) >> 8, that is
 * floor(sum / 256), saturated to 0 .. 255 (m NULL: Y, U, V as read). */
static void yuv_pixel(const uint8_t *fr, int64_t h, int64_t w, int64_t i,
		      int64_t j, bool vu, const int (*m)[3], const int *ib,
		      int out[3])
{
	const uint8_t *pair = fr + (h + i / 2) * w + (j / 2) * 2;
	int in[3] = { fr[i * w + j], pair[vu ? 1 : 0], pair[vu ? 0 : 1] };
	for (int r = 0; r < 3; r++) {
		if (!m) {
			out[r] = in[r];
			continue;
		}
		int acc = 0;
		for (int k = 0; k < 3; k++)
			acc += m[r][k] * (in[k] - ib[k]);
		int v = (int)floor(acc / 256.0);
		out[r] = v < 0 ? 0 : v > 255 ? 255 : v;
	}
}

/* x[b][c][pt + i][pl + j] = (value c of pixel (cy + i, cx + j) - mean_c)
 * * scale_c for the crop's oh x ow pixels of each of n frames, pad (in
 * the output's units) around them in x's [n,3,xh,xw]. */
static float *yuv_reference(const uint8_t *fr, int64_t n, int64_t h,
			    int64_t w, bool vu, const int (*m)[3],
			    const int *ib, int64_t cy, int64_t cx,
			    int64_t oh, int64_t ow, int64_t pt, int64_t pl,
			    int64_t xh, int64_t xw, float pad,
			    const double *mean, const double *scale)
{
	float *x = malloc((size_t)(n * 3 * xh * xw) * sizeof(float));
	for (int64_t k = 0; k < n * 3 * xh * xw; k++)
		x[k] = pad;
	for (int64_t b = 0; b < n; b++)
		for (int64_t i = 0; i < oh; i++)
			for (int64_t j = 0; j < ow; j++) {
				int v[3];
				yuv_pixel(fr + b * (h * 3 / 2) * w, h, w,
					  cy + i, cx + j, vu, m, ib, v);
				for (int c = 0; c < 3; c++)
					x[((b * 3 + c) * xh + pt + i) * xw +
					  pl + j] = (float)((v[c] - mean[c]) *
							    scale[c]);
			}
	return x;
}

Test(cli_edit, aipp_yuv420sp_nv12_nv21)
{
	/* an 8x8 NV12 (then NV21) frame, BT.601 to RGB, ImageNet's
	 * normalisation folded into the first Conv */
	char *dir = temp_dir(), flag[600], cfg_text[2048];
	uint8_t *fr = frame(1, 12, 8, 1);
	Shape fs = { 3, { 1, 12, 8 } }, xs = { 4, { 1, 3, 8, 8 } };
	for (int vu = 0; vu < 2; vu++) {
		snprintf(cfg_text, sizeof(cfg_text),
			 "aipp_op {\n aipp_mode: static\n"
			 " input_format: YUV420SP_U8\n"
			 " rbuv_swap_switch: %s\n" BT601_CFG IMAGENET_CFG "}\n",
			 vu ? "true" : "false");
		char *cfg = write_cfg(dir, cfg_text);
		snprintf(flag, sizeof(flag), "--insert_op_conf=%s", cfg);
		const char *pre[] = { flag, NULL };
		char *ref_om, *pre_om, err[4096];
		compile_pair(dir, "aipp_cnn", NULL, pre, &ref_om, &pre_om, err,
			     sizeof(err));
		cr_expect(!strstr(err, "note:"), "%s", err); /* folded */
		Run r = run_gearc("dump", pre_om);
		/* one buffer as the camera gives it: [N, H*3/2, W] */
		cr_expect(strstr(r.out, "  x                        uint8    "
				 "[1,12,8]\n"), "%s", r.out);
		cr_expect(strstr(r.out, "Yuv420sp") &&
			  strstr(r.out, "/conv1/W_preproc"), "%s", r.out);
		run_free(&r);
		float *x = yuv_reference(fr, 1, 8, 8, vu, bt601, bt601_ib, 0,
					 0, 8, 8, 0, 0, 8, 8, 0, in_mean,
					 in_scale);
		double d = compare(dir, pre_om, fr, &fs, ref_om, x, &xs, "y");
		cr_expect(d <= 1e-4, "%s: max abs diff %g",
			  vu ? "NV21" : "NV12", d);
		free(x);
		free(ref_om);
		free(pre_om);
		free(cfg);
	}
	free(fr);
	remove_tree(dir);
	free(dir);
}

/* The image Yuv420sp makes of frame fr: aipp_img.onnx returns it. */
static Tensor *yuv_image(Arena *a, const char *dir, const char *om,
			 const char *frame_npy, const char *threads)
{
	char *odir = path_in(dir, "out"), oflag[600], in[600];
	snprintf(oflag, sizeof(oflag), "--output-dir=%s", odir);
	snprintf(in, sizeof(in), "x=%s", frame_npy);
	Run r = run_gearc("run", om, "--input", in, oflag, threads, "-q");
	cr_assert_eq(r.status, 0, "run: %s", r.err);
	run_free(&r);
	char *p = path_in(odir, "y.npy");
	Tensor *t = npy_read(a, p);
	cr_assert(t, "%s", last_error());
	free(p);
	free(odir);
	return t;
}

Test(cli_edit, aipp_yuv420sp_any_threads)
{
	/* two 132x202 frames, cropped at (2,4) to 129x197 (odd: the last
	 * rows and columns take half a chroma pair; 197 = 3 blocks of 64 and
	 * 5): the image itself out, with and without the colour conversion,
	 * at 1, 2 and 3 threads, capped at AVX2 and at the baseline ISA, and
	 * by the reference kernel: every run the same bytes, equal to the
	 * reference formula */
	static const char *variants[2] = {
		"aipp_op {\n aipp_mode: static\n input_format: YUV420SP_U8\n"
		" src_image_size_w: 202\n src_image_size_h: 132\n crop: true\n"
		" load_start_pos_w: 4\n load_start_pos_h: 2\n"
		" crop_size_w: 197\n crop_size_h: 129\n" BT601_CFG "}\n",
		"aipp_op {\n aipp_mode: static\n input_format: YUV420SP_U8\n"
		" rbuv_swap_switch: true\n"
		" src_image_size_w: 202\n src_image_size_h: 132\n crop: true\n"
		" load_start_pos_w: 4\n load_start_pos_h: 2\n"
		" crop_size_w: 197\n crop_size_h: 129\n}\n",
	};
	static const double zero[3] = { 0, 0, 0 }, one[3] = { 1, 1, 1 };
	char *dir = temp_dir(), flag[600];
	uint8_t *fr = frame(2, 198, 202, 1);
	Shape fs = { 3, { 2, 198, 202 } };
	char *fpath = write_npy(dir, "frame.npy", DT_UINT8, &fs, fr);
	for (int k = 0; k < 2; k++) {
		char *cfg = write_cfg(dir, variants[k]);
		snprintf(flag, sizeof(flag), "--insert_op_conf=%s", cfg);
		const char *pre[] = { flag, "--input_shape=x:2,3,129,197", NULL };
		char *om = compile_fixture(dir, "img", "aipp_img", pre);
		Arena a = { 0 };
		Tensor *y1 = yuv_image(&a, dir, om, fpath, "--threads=1");
		Tensor *y2 = yuv_image(&a, dir, om, fpath, "--threads=2");
		Tensor *y3 = yuv_image(&a, dir, om, fpath, "--threads=3");
		setenv("GEARRT_MAX_ISA", "avx2", 1);
		Tensor *ya = yuv_image(&a, dir, om, fpath, "--threads=2");
		setenv("GEARRT_MAX_ISA", "baseline", 1);
		Tensor *yb = yuv_image(&a, dir, om, fpath, "--threads=2");
		unsetenv("GEARRT_MAX_ISA");
		setenv("GEARRT_NO_FAST", "1", 1);
		Tensor *yr = yuv_image(&a, dir, om, fpath, "--threads=2");
		unsetenv("GEARRT_NO_FAST");
		cr_assert_eq(y1->nbytes, (size_t)(2 * 3 * 129 * 197) * 4);
		const Tensor *same[] = { y2, y3, ya, yb, yr };
		for (int i = 0; i < 5; i++)
			cr_expect(!memcmp(y1->data, same[i]->data, y1->nbytes),
				  "variant %d: run %d differs", k, i);
		float *x = yuv_reference(fr, 2, 132, 202, k == 1,
					 k == 0 ? bt601 : NULL, bt601_ib, 2, 4,
					 129, 197, 0, 0, 129, 197, 0, zero,
					 one);
		cr_expect(!memcmp(y1->data, x, y1->nbytes),
			  "variant %d differs from the formula", k);
		free(x);
		arena_release(&a);
		free(om);
		free(cfg);
	}
	free(fpath);
	free(fr);
	remove_tree(dir);
	free(dir);
}

Test(cli_edit, aipp_yuv420sp_gears_padding_export)
{
	/* batch gears 1 and 2; a 36x34 NV12 frame cropped at (2,2) to
	 * 31x29 and padded (1 top, 2 left, 1 right) to the model's 32x32:
	 * the normalisation cannot fold (padding comes after it) */
	static const char cfg_text[] =
		"aipp_op {\n aipp_mode: static\n input_format: YUV420SP_U8\n"
		" src_image_size_w: 34\n src_image_size_h: 36\n crop: true\n"
		" load_start_pos_w: 2\n load_start_pos_h: 2\n"
		" crop_size_w: 29\n crop_size_h: 31\n"
		" padding: true\n top_padding_size: 1\n left_padding_size: 2\n"
		" right_padding_size: 1\n padding_value: 0.5\n"
		BT601_CFG IMAGENET_CFG "}\n";
	char *dir = temp_dir(), *cfg = write_cfg(dir, cfg_text), flag[600];
	snprintf(flag, sizeof(flag), "--insert_op_conf=%s", cfg);
	const char *plain[] = { "--input_shape=x:-1,3,32,32",
				"--dynamic_batch_size=1,2", NULL };
	const char *pre[] = { flag, "--input_shape=x:-1,3,32,32",
			      "--dynamic_batch_size=1,2", NULL };
	char *ref_om, *pre_om, err[4096];
	compile_pair(dir, "demo_cnn", plain, pre, &ref_om, &pre_om, err,
		     sizeof(err));
	cr_expect(strstr(err, "does not fold into a Conv (padding comes after "
			 "it)"), "%s", err);
	Run r = run_gearc("dump", pre_om);
	/* N stays a gear dim; the frame's rows are the source's * 3/2 */
	cr_expect(strstr(r.out, "  x                        uint8    "
			 "[-1,54,34]  max [2,54,34]\n"), "%s", r.out);
	run_free(&r);
	uint8_t *fr = frame(2, 54, 34, 1);
	float *x = yuv_reference(fr, 2, 36, 34, false, bt601, bt601_ib, 2, 2,
				 31, 29, 1, 2, 32, 32, 0.5f, in_mean,
				 in_scale);
	Shape fs = { 3, { 2, 54, 34 } }, xs = { 4, { 2, 3, 32, 32 } };
	double d = compare(dir, pre_om, fr, &fs, ref_om, x, &xs, "probs");
	cr_expect(d <= 1e-4, "max abs diff %g", d);
	/* gearc export writes it in standard ops: the exported batch-2
	 * model, compiled again, gives the same answer */
	char *xdir = path_in(dir, "x"), oflag[600];
	snprintf(oflag, sizeof(oflag), "--output=%s/", xdir);
	r = run_gearc("export", pre_om, "--gear=all", oflag);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	char *onnx = path_in(xdir, "pre_2x54x34.onnx"), mflag[700], o2[700];
	snprintf(mflag, sizeof(mflag), "--model=%s", onnx);
	snprintf(o2, sizeof(o2), "--output=%s/re", xdir);
	r = run_gearc(mflag, o2, "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	char *re_om = path_in(xdir, "re.om");
	d = compare(dir, re_om, fr, &fs, pre_om, NULL, NULL, "probs");
	cr_expect(d <= 1e-5, "exported: max abs diff %g", d);
	free(re_om);
	free(onnx);
	free(xdir);
	free(fr);
	free(x);
	free(ref_om);
	free(pre_om);
	free(cfg);
	remove_tree(dir);
	free(dir);
}

Test(cli_edit, aipp_yuv420sp_errors)
{
	/* what atc refuses in the file: an error in the flag, exit 2 */
	static const char *files[][2] = {
		{ "src_image_size_w: 7 src_image_size_h: 8", "aipp.cfg: src_image_size_w: 7 is odd; YUV420SP_U8 expects an even number" },
		{ "src_image_size_w: 8 src_image_size_h: 9", "aipp.cfg: src_image_size_h: 9 is odd" },
		{ "crop: true load_start_pos_w: 1 crop_size_w: 4 crop_size_h: 4", "aipp.cfg: load_start_pos_w: 1 is odd" },
		{ "crop: true load_start_pos_h: 3 crop_size_w: 4 crop_size_h: 4", "aipp.cfg: load_start_pos_h: 3 is odd" },
		{ "csc_switch: true", "aipp.cfg: csc_switch: true, but matrix_r0c0 .. matrix_r2c2 are all 0: expected the conversion's matrix" },
		{ "csc_switch: true matrix_r1c2: -183.5", "aipp.cfg:1: matrix_r1c2: '-183.5' is not an integer from -32768 to 32767" },
		{ "csc_switch: true matrix_r0c0: 40000", "aipp.cfg:1: matrix_r0c0: '40000' is not an integer from -32768 to 32767" },
		{ "csc_switch: true matrix_r0c0: 256 input_bias_1: 300", "aipp.cfg:1: input_bias_1: '300' is not an integer from 0 to 255" },
		{ "csc_switch: true matrix_r0c0: 256 output_bias_0: -1", "aipp.cfg:1: output_bias_0: '-1' is not an integer from 0 to 255" },
	};
	char *dir = temp_dir(), flag[600], text[512];
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(text, sizeof(text), "aipp_op { aipp_mode: static "
			 "input_format: YUV420SP_U8 %s }", files[i][0]);
		char *cfg = write_cfg(dir, text);
		snprintf(flag, sizeof(flag), "--insert_op_conf=%s", cfg);
		Run r = run_gearc("--model=tests/fixtures/aipp_cnn.onnx",
				  "--output=/tmp/never", flag);
		expect_error(&r, 2, files[i][1]);
		cr_expect(!strchr(strchr(r.err, '\n') + 1, '\n'),
			  "one line: %s", r.err);
		run_free(&r);
		free(cfg);
	}
	char *cfg = write_cfg(dir, "aipp_op { aipp_mode: static input_format: "
			      "YUV400_U8 csc_switch: true matrix_r0c0: 1 }");
	snprintf(flag, sizeof(flag), "--insert_op_conf=%s", cfg);
	Run r = run_gearc("--model=tests/fixtures/aipp_cnn.onnx",
			  "--output=/tmp/never", flag);
	expect_error(&r, 2, "aipp.cfg: csc_switch: expected false with "
		     "YUV400_U8");
	run_free(&r);
	free(cfg);
	/* what does not fit the model: exit 1 */
	cfg = write_cfg(dir, "aipp_op { aipp_mode: static input_format: "
			"YUV420SP_U8 padding: true left_padding_size: 1 }");
	snprintf(flag, sizeof(flag), "--insert_op_conf=%s", cfg);
	r = run_gearc("--model=tests/fixtures/aipp_cnn.onnx",
		      "--output=/tmp/never", flag);
	expect_error(&r, 1, "--insert_op_conf: YUV420SP_U8 takes an even image "
		     "size, but input 'x' takes 8x7 (h x w)");
	run_free(&r);
	r = run_gearc("--model=tests/fixtures/aipp_img.onnx",
		      "--output=/tmp/never", flag, "--input_shape=x:1,3,9,8");
	expect_error(&r, 1, "--insert_op_conf: YUV420SP_U8 takes an even image "
		     "size, but input 'x' takes 9x7 (h x w)");
	run_free(&r);
	free(cfg);
	cfg = write_cfg(dir, "aipp_op { aipp_mode: static input_format: "
			"YUV420SP_U8 }");
	snprintf(flag, sizeof(flag), "--insert_op_conf=%s", cfg);
	r = run_gearc("--model=tests/fixtures/aipp_img.onnx",
		      "--output=/tmp/never", flag, "--input_shape=x:1,3,-1,-1",
		      "--dynamic_image_size=8,8;16,16");
	expect_error(&r, 1, "--insert_op_conf: input 'x' has gear dims at H or "
		     "W; YUV420SP_U8 needs its size fixed");
	run_free(&r);
	free(cfg);
	remove_tree(dir);
	free(dir);
}

Test(cli_edit, preprocessing_errors)
{
	char *dir = temp_dir(), flag[600];
	static const char *files[][2] = {
		{ "aipp_op { aipp_mode: dynamic }", "aipp_mode dynamic is not supported" },
		{ "aipp_op { aipp_mode: static input_format: YUV422SP_U8 }", "input_format YUV422SP_U8 is not supported" },
		{ "aipp_op { aipp_mode: static\n colour: 1 }", "aipp.cfg:2: aipp_op has no field 'colour'" },
		{ "aipp_op { input_format: RGB888_U8 }", "aipp_op needs aipp_mode: static" },
		{ "aipp_op { aipp_mode: static mean_chn_0: abc }", "mean_chn_0: 'abc' is not a number" },
		{ "aipp_op { aipp_mode: static crop: maybe }", "crop: 'maybe' is not true or false" },
		{ "nonsense", "expected aipp_op, found 'nonsense'" },
		{ "", "no aipp_op in the file" },
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *cfg = write_cfg(dir, files[i][0]);
		snprintf(flag, sizeof(flag), "--insert_op_conf=%s", cfg);
		Run r = run_gearc("--model=tests/fixtures/aipp_cnn.onnx",
				  "--output=/tmp/never", flag);
		expect_error(&r, 2, files[i][1]); /* the flag's file: 2 */
		run_free(&r);
		free(cfg);
	}
	static const char *model[][2] = {
		{ "aipp_op { aipp_mode: static related_input_rank: 2 }", "related_input_rank 2, but the model has 1 input" },
		{ "aipp_op { aipp_mode: static src_image_size_w: 9 src_image_size_h: 8 }", "src_image_size 8x9 (h x w), but input 'x' takes 8x8" },
		{ "aipp_op { aipp_mode: static input_format: YUV400_U8 }", "input 'x' has 3 channels, but the YUV400_U8 format gives 1" },
		{ "aipp_op { aipp_mode: static } aipp_op { aipp_mode: static }", "--insert_op_conf: input 'x' is preprocessed twice" },
		{ "aipp_op { aipp_mode: static crop: true crop_size_w: 4 crop_size_h: 4 src_image_size_w: 8 src_image_size_h: 8 }", "crop_size 4x4 (h x w), but input 'x' takes 8x8" },
	};
	for (size_t i = 0; i < sizeof(model) / sizeof(model[0]); i++) {
		char *cfg = write_cfg(dir, model[i][0]);
		snprintf(flag, sizeof(flag), "--insert_op_conf=%s", cfg);
		Run r = run_gearc("--model=tests/fixtures/aipp_cnn.onnx",
				  "--output=/tmp/never", flag);
		expect_error(&r, 1, model[i][1]);
		run_free(&r);
		free(cfg);
	}
	static const char *ov[][2] = {
		{ "--mean_values=x[1,2", "--mean_values: 'x[1,2' has unbalanced brackets" },
		{ "--scale_values=x[1,0,1]", "--scale_values: a scale is 0" },
		{ "--mean_values=1,a", "--mean_values: '1,a' is not a list of numbers" },
		{ "--source_layout=nwhc", "--source_layout: 'nwhc' is not a source layout gearc takes" },
		{ "--target_layout=nhwc", "--target_layout: the model's layout 'nhwc' is not supported" },
		{ "--source_type=u16", "--source_type: 'u16' is not u8, f16 or f32" },
	};
	for (size_t i = 0; i < sizeof(ov) / sizeof(ov[0]); i++) {
		Run r = run_gearc("--model=tests/fixtures/aipp_cnn.onnx",
				  "--output=/tmp/never", ov[i][0]);
		expect_error(&r, 2, ov[i][1]);
		run_free(&r);
	}
	Run r = run_gearc("--model=tests/fixtures/aipp_cnn.onnx",
			  "--output=/tmp/never", "--mean_values=y[1,2,3]");
	expect_error(&r, 1, "'y' is not an input of the model");
	run_free(&r);
	r = run_gearc("--model=tests/fixtures/aipp_cnn.onnx",
		      "--output=/tmp/never", "--mean_values=x[1,2]");
	expect_error(&r, 1, "2 values for input 'x', which has 3 channels");
	run_free(&r);
	r = run_gearc("--model=tests/fixtures/aipp_cnn.onnx",
		      "--output=/tmp/never", "--insert_op_conf=a.cfg",
		      "--mean_values=1");
	expect_error(&r, 2, "--insert_op_conf and OpenVINO's preprocessing "
		     "flags (--mean_values, ...) cannot be used together");
	run_free(&r);
	remove_tree(dir);
	free(dir);
}
