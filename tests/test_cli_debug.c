/*
 * tests/test_cli_debug.c - accuracy debugging from the command line:
 * `gearc run --dump-tensors` (every tensor, the fused-away ones named,
 * NCHW whatever the runtime held) and `gearc compare`, which must name
 * the first tensor a broken weight makes wrong, and the errors of both.
 */
#include <math.h>

#include "cli/npy.h"
#include "serializer/omimpl.h"
#include "testrun.h"

static char *cat(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 1;
	char *s = malloc(n);
	snprintf(s, n, "%s%s", a, b);
	return s;
}

/* demo_cnn at one static shape: conv1 (+BatchNormalization, Relu),
 * pool1, conv2 (+Relu), gap, flatten, fc, softmax. */
static char *compile_demo(const char *dir)
{
	return compile_fixture(dir, "demo", "demo_cnn",
			       (const char *[]){ "--input_shape=x:1,3,32,32",
						 NULL });
}

/* gearc run om --random-inputs --dump-tensors=DIR/sub, asserting
 * success; the folder (malloc'd). */
static char *dump(const char *om, const char *dir, const char *sub)
{
	char *out = path_in(dir, sub), *f = cat("--dump-tensors=", out);
	Run r = run_gearc("run", om, "--random-inputs", f);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "dump-tensors: 8 tensors written to "),
		  "%s", r.out);
	cr_expect(strstr(r.out, "; 3 values fused away, 0 not written: see "),
		  "%s", r.out);
	run_free(&r);
	free(f);
	return out;
}

Test(cli_debug, dump_tensors_writes_every_tensor_and_names_the_fused)
{
	char *dir = temp_dir(), *om = compile_demo(dir);
	char *d = dump(om, dir, "t");
	static const char *files[] = { "x", "r1", "p1", "r2", "g", "f",
				       "logits", "probs" };
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char *f = path_in(d, files[i]), *p = cat(f, ".npy");
		cr_expect_eq(access(p, F_OK), 0, "%s missing", p);
		free(f), free(p);
	}
	char *ip = path_in(d, "index.json");
	char *idx = read_file(ip, NULL);
	cr_assert(idx);
	cr_expect(strstr(idx, "\"format\": \"gearc-tensors\""), "%s", idx);
	cr_expect(strstr(idx, "\"complete\": true"), "%s", idx);
	/* run order: the input, c1 and b1 fused into conv1, then r1 */
	const char *x = strstr(idx, "\"name\": \"x\", \"kind\": \"input\"");
	const char *c1 = strstr(idx, "{ \"name\": \"c1\", \"kind\": \"fused\", "
				     "\"file\": null, \"graph\": \"root\", "
				     "\"node\": \"conv1\", \"op\": \"FusedConv\"");
	const char *b1 = strstr(idx, "\"name\": \"b1\", \"kind\": \"fused\"");
	const char *r1 = strstr(idx, "\"name\": \"r1\", \"kind\": \"node\", "
				     "\"file\": \"r1.npy\"");
	cr_expect(x && c1 && b1 && r1 && x < c1 && c1 < b1 && b1 < r1, "%s",
		  idx);
	cr_expect(strstr(idx, "\"name\": \"c2\", \"kind\": \"fused\""), "%s",
		  idx);
	free(idx), free(ip);
	remove_tree(dir);
	free(dir), free(om), free(d);
}

/* The runtime holds fast_nhwc's tensors channels-last; the dump is NCHW,
 * as the reference kernels (GEARRT_NO_FAST=1, all row-major) give them. */
Test(cli_debug, dump_is_nchw_as_the_reference_kernels_give_it)
{
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "n", "fast_nhwc", NULL);
	char *a = path_in(dir, "fast"), *b = path_in(dir, "ref");
	char *fa = cat("--dump-tensors=", a), *fb = cat("--dump-tensors=", b);
	Run r = run_gearc("run", om, "--random-inputs", fa, "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	setenv("GEARRT_NO_FAST", "1", 1);
	r = run_gearc("run", om, "--random-inputs", fb, "-q");
	unsetenv("GEARRT_NO_FAST");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	r = run_gearc("compare", a, b);
	cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, " past it; 0 only in A, 0 only in B\n"), "%s",
		  r.out);
	cr_expect(!strstr(r.out, "FAIL"), "%s", r.out);
	run_free(&r);
	remove_tree(dir);
	free(dir), free(om), free(a), free(b), free(fa), free(fb);
}

/* A copy of om with weight `name`'s first float times 10 (and a right
 * checksum, so only its values tell). */
static char *break_weight(const char *om, const char *dir, const char *name)
{
	size_t size;
	uint8_t *c = (uint8_t *)read_file(om, &size);
	OmFile f;
	cr_assert(c);
	cr_assert_eq(om_parse(&f, c, size, "m.om"), 0, "%s", last_error());
	uint64_t woff = om_get_u64(c + 88 + 8);
	const Gearom__Weight *w = NULL;
	for (size_t i = 0; i < f.model->n_weights && !w; i++)
		if (!strcmp(f.model->weights[i]->name, name))
			w = f.model->weights[i];
	cr_assert(w && !w->has_data, "no weight '%s' in WEIGHTS", name);
	float *p = (float *)(c + woff + w->offset);
	*p = *p * 10 + 1;
	om_close(&f);
	om_put_u32(c + 24, crc32_update(0, c + 64, size - 64));
	char *out = path_in(dir, "broken.om");
	write_file(out, c, size);
	free(c);
	return out;
}

Test(cli_debug, compare_names_the_first_tensor_a_broken_weight_changes)
{
	char *dir = temp_dir(), *om = compile_demo(dir);
	char *bad = break_weight(om, dir, "conv2.W");
	char *a = dump(om, dir, "good"), *b = dump(bad, dir, "bad");
	Run r = run_gearc("compare", a, b);
	cr_expect_eq(r.status, 1, "%s%s", r.out, r.err);
	cr_expect_str_empty(r.err);
	cr_expect(strstr(r.out, "\n  ok     p1 "), "%s", r.out);
	cr_expect(strstr(r.out, "\n  FAIL   r2 "), "%s", r.out);
	cr_expect(strstr(r.out, "\nfirst past tolerance: 'r2' (node 'conv2', "
				"FusedConv)\n"), "%s", r.out);
	run_free(&r);
	/* -q: only that line */
	r = run_gearc("compare", "-q", a, b);
	cr_expect_eq(r.status, 1);
	cr_expect_str_eq(r.out, "first past tolerance: 'r2' (node 'conv2', "
				"FusedConv)\n");
	run_free(&r);
	/* a tolerance wide enough: nothing past */
	r = run_gearc("compare", a, b, "--atol=1e9");
	cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_expect(!strstr(r.out, "first past"), "%s", r.out);
	run_free(&r);
	remove_tree(dir);
	free(dir), free(om), free(bad), free(a), free(b);
}

/* Expected tensors as ONNX Runtime's would be: .npy files without an
 * index, some the dump does not have (fused away, or none at all). */
Test(cli_debug, compare_with_plain_npy_files)
{
	char *dir = temp_dir(), *om = compile_demo(dir);
	char *a = dump(om, dir, "t"), *b = path_in(dir, "ort");
	cr_assert_eq(mkdir(b, 0777), 0);
	Arena ar = { 0 };
	static const char *same[] = { "r1", "probs" };
	for (size_t i = 0; i < ARRAY_SIZE(same); i++) {
		char *src = npy_path(a, same[i]), *dst = npy_path(b, same[i]);
		Tensor *t = npy_read(&ar, src);
		cr_assert(t, "%s", last_error());
		cr_assert_eq(npy_write(dst, t->dtype, &t->shape, t->data), 0);
		free(src), free(dst);
	}
	Shape s1 = { .rank = 1, .dims = { 4 } };
	float v[4] = { 1, 2, NAN, 4 };
	char *c1 = npy_path(b, "c1"), *extra = npy_path(b, "not/in:A");
	cr_assert_eq(npy_write(c1, DT_FLOAT, &s1, v), 0);
	cr_assert_eq(npy_write(extra, DT_FLOAT, &s1, v), 0);
	Run r = run_gearc("compare", a, b);
	cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "B '") && strstr(r.out, "(.npy files)"), "%s",
		  r.out);
	cr_expect(strstr(r.out, "\n  fused  c1 ") &&
		  strstr(r.out, "in A: fused away into node 'conv1' "
				"(FusedConv), not compared\n"), "%s", r.out);
	cr_expect(strstr(r.out, "only in B (1, not compared): not/in:A\n"),
		  "%s", r.out);
	cr_expect(strstr(r.out, "only in A (6, not compared): x, p1, r2, g, "
				"f, logits\n"), "%s", r.out);
	cr_expect(strstr(r.out, "compare: 2 tensors compared, 2 within "
				"tolerance, 0 past it; 6 only in A, 1 only in "
				"B\n"), "%s", r.out);
	run_free(&r);
	/* B first: the order is still the dump's */
	r = run_gearc("compare", b, a);
	cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "in B: fused away into node 'conv1'"), "%s",
		  r.out);
	run_free(&r);
	arena_release(&ar);
	remove_tree(dir);
	free(dir), free(om), free(a), free(b), free(c1), free(extra);
}

/* A NaN where the other has a number, and another shape: both past. */
Test(cli_debug, nan_and_shape_mismatches_are_failures)
{
	char *dir = temp_dir(), *a = path_in(dir, "a"), *b = path_in(dir, "b");
	cr_assert_eq(mkdir(a, 0777), 0);
	cr_assert_eq(mkdir(b, 0777), 0);
	Shape s4 = { .rank = 1, .dims = { 4 } }, s22 = { .rank = 2,
							 .dims = { 2, 2 } };
	float x[4] = { 1, 2, 3, INFINITY }, y[4] = { 1, NAN, 3, INFINITY };
	char *ta = npy_path(a, "t"), *tb = npy_path(b, "t");
	char *ua = npy_path(a, "u"), *ub = npy_path(b, "u");
	cr_assert_eq(npy_write(ta, DT_FLOAT, &s4, x), 0);
	cr_assert_eq(npy_write(tb, DT_FLOAT, &s4, y), 0);
	cr_assert_eq(npy_write(ua, DT_FLOAT, &s4, x), 0);
	cr_assert_eq(npy_write(ub, DT_FLOAT, &s22, x), 0);
	Run r = run_gearc("compare", a, b);
	cr_expect_eq(r.status, 1, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "\n  FAIL   t ") &&
		  strstr(r.out, "1 of 4 elements past, 1 NaN/Inf mismatches"),
		  "%s", r.out);
	cr_expect(strstr(r.out, "\n  FAIL   u        shape [4] in A, [2,2] "
				"in B\n"), "%s", r.out);
	cr_expect(strstr(r.out, "first past tolerance: 't'\n"), "%s", r.out);
	run_free(&r);
	remove_tree(dir);
	free(dir), free(a), free(b), free(ta), free(tb), free(ua), free(ub);
}

Test(cli_debug, errors_name_the_flag_or_folder)
{
	char *dir = temp_dir(), *om = compile_demo(dir);
	char *a = dump(om, dir, "t"), *empty = path_in(dir, "empty");
	cr_assert_eq(mkdir(empty, 0777), 0);
	Run r = run_gearc("compare", a);
	expect_error(&r, 2, "compare needs two folders of tensors");
	run_free(&r);
	r = run_gearc("compare", a, a, "--rtol=-1");
	expect_error(&r, 2, "--rtol '-1': expected a number >= 0");
	run_free(&r);
	r = run_gearc("compare", a, a, "--atol", "x");
	expect_error(&r, 2, "--atol 'x': expected a number >= 0");
	run_free(&r);
	r = run_gearc("compare", a, a, "--tol=1");
	expect_error(&r, 2, "unknown option '--tol' for 'gearc compare'");
	run_free(&r);
	r = run_gearc("compare", a, "/nonexistent/x");
	expect_error(&r, 1, "compare: '/nonexistent/x' is not a folder of "
			    "tensors");
	run_free(&r);
	r = run_gearc("compare", a, empty);
	expect_error(&r, 1, "holds no .npy file");
	run_free(&r);
	char *other = path_in(empty, "zz.npy");
	Shape s1 = { .rank = 1, .dims = { 1 } };
	float one = 1;
	cr_assert_eq(npy_write(other, DT_FLOAT, &s1, &one), 0);
	r = run_gearc("compare", a, empty);
	expect_error(&r, 1, "have no tensor of the same name");
	run_free(&r);
	char *idx = path_in(empty, "index.json");
	write_file(idx, "{\"format\": \"other\"}", 19);
	r = run_gearc("compare", a, empty);
	expect_error(&r, 1, "index.json' is not a tensor index");
	run_free(&r);
	/* run: --dump-tensors naming a file, or in a missing parent */
	char *ff = cat("--dump-tensors=", other);
	r = run_gearc("run", om, "--random-inputs", ff);
	expect_error(&r, 2, "run: --dump-tensors '");
	cr_expect(strstr(r.err, "zz.npy' is not a directory"), "%s", r.err);
	run_free(&r);
	r = run_gearc("run", om, "--random-inputs",
		      "--dump-tensors=/nonexistent/a/b");
	expect_error(&r, 1, "--dump-tensors '/nonexistent/a/b': cannot "
			    "create the directory");
	run_free(&r);
	remove_tree(dir);
	free(dir), free(om), free(a), free(empty), free(other), free(idx);
	free(ff);
}
