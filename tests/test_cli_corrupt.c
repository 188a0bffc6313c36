/* tests/test_cli_corrupt.c - broken models through the command line: each
 * is one line on stderr and exit status 1, quickly, with nothing written. */
#include <stdint.h>
#include <time.h>

#include "testrun.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Compiles model (with extra, if given) and expects a one-line error that
 * contains want, exit 1, in under 10 s, and no .om. */
static void expect_rejected(const char *model, const char *extra,
			    const char *want)
{
	char *d = temp_dir(), marg[1024], oarg[1024];
	snprintf(marg, sizeof(marg), "--model=%s", model);
	snprintf(oarg, sizeof(oarg), "--output=%s/out", d);
	double t0 = now();
	Run r = extra ? run_gearc(marg, oarg, extra) : run_gearc(marg, oarg);
	double dt = now() - t0;
	expect_error(&r, 1, want);
	cr_expect_lt(dt, 10.0, "%s took %.1f s", model, dt);
	char om[1100];
	snprintf(om, sizeof(om), "%s/out.om", d);
	cr_expect_neq(access(om, F_OK), 0, "%s: a .om was written", model);
	run_free(&r);
	remove_tree(d);
	free(d);
}

#define FX "tests/fixtures/"

Test(cli_corrupt, malformed_models)
{
	static const char *cases[][2] = {
		{ FX "bad_cycle.onnx", "cycle" },
		{ FX "bad_dangling_input.onnx", "not produced by any node" },
		{ FX "bad_dangling_subgraph.onnx", "not produced by any node" },
		{ FX "bad_data_size.onnx", "raw_data" },
		{ FX "bad_deep_nesting.onnx", "nest" },
		{ FX "bad_dtype.onnx", "dtype" },
		{ FX "bad_dtype_init.onnx", "dtype" },
		{ FX "bad_external_abs.onnx", "external" },
		{ FX "bad_external_escape.onnx", "external" },
		{ FX "bad_external_range.onnx", "external" },
		{ FX "bad_huge_tensor.onnx", "tensor" },
		{ FX "bad_neg_dim.onnx", "dim" },
		{ FX "bad_overflow_tensor.onnx", "overflow" },
		{ FX "bad_rank9.onnx", "rank" },
		{ FX "bad_sparse.onnx", "not supported" },
		{ FX "bad_two_producers.onnx", "produced by two nodes" },
		{ FX "bad_typed_count.onnx", "tensor" },
		{ FX "truncated.onnx", "not a valid ONNX model" },
		{ FX "not_onnx.onnx", "not a valid ONNX model" },
		{ FX "empty.onnx", "empty" },
		{ FX, "is a directory" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_rejected(cases[i][0], "--input_shape=x:1,3,32,32",
				cases[i][1]);
}

/* A valid model cut at many points, and with bytes flipped: never a
 * crash, always one line and status 1 (or a successful compile when a
 * flip happens to keep the model valid). */
Test(cli_corrupt, cut_and_flipped_models, .timeout = 600)
{
	size_t n;
	char *bytes = read_file(FX "demo_cnn.onnx", &n);
	cr_assert(bytes);
	char *d = temp_dir(), *bad = path_in(d, "bad.onnx"), oarg[1024];
	snprintf(oarg, sizeof(oarg), "--output=%s/out", d);
	for (size_t cut = 1; cut < n; cut += n / 40 + 1) {
		write_file(bad, bytes, cut);
		char marg[1024];
		snprintf(marg, sizeof(marg), "--model=%s", bad);
		Run r = run_gearc(marg, oarg, "--input_shape=x:1,3,32,32");
		cr_expect(r.status == 1 || r.status == 0, "cut %zu: status %d: %s",
			  cut, r.status, r.err);
		if (r.status)
			expect_error(&r, 1, "bad.onnx");
		run_free(&r);
	}
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < 40; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t at = (size_t)(x % n);
		bytes[at] ^= (char)(1 + x % 255);
		write_file(bad, bytes, n);
		char marg[1024];
		snprintf(marg, sizeof(marg), "--model=%s", bad);
		Run r = run_gearc(marg, oarg, "--input_shape=x:1,3,32,32");
		cr_expect(r.status == 1 || r.status == 0, "flip at %zu: status "
			  "%d: %s", at, r.status, r.err);
		if (r.status)
			expect_error(&r, 1, "bad.onnx");
		run_free(&r);
		bytes[at] ^= (char)(1 + x % 255);
	}
	free(bad);
	free(bytes);
	remove_tree(d);
	free(d);
}

Test(cli_corrupt, absurd_dims)
{
	/* 2^62 as a batch: overflow-checked, a clear error, no allocation */
	expect_rejected(FX "demo_cnn.onnx",
			"--input_shape=x:4611686018427387904,3,32,32",
			"too large");
}
