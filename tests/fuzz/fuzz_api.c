/*
 * tests/fuzz/fuzz_api.c - libFuzzer: libgearrt's session options and
 * `gearc run`'s .npy reader, then a run of what they give.
 *
 * The input is 13 bytes and a .npy file: gearrt_options (threads,
 * shape_cache and no_gears as little-endian int32), a byte taken off the
 * input tensor's size, then the file's bytes.  A session is made with
 * those options on tests/fixtures/strings.onnx (compiled once per
 * process; a string input [3], StringNormalizer to a data-dependent and
 * a fixed output) and, if the file parses, it runs with the file's
 * tensor as the input, as gearc run passes it; a string tensor is also
 * written back as .npy and must read back the same.  A crash, leak, hang
 * or a failure without a one-line message is a bug.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/npy.h"
#include "compiler/onnx.h"
#include "passes/passes.h"
#include "runtime/gearrt.h"
#include "serializer/om.h"

static void check_message(const char *e)
{
	if (!*e || strchr(e, '\n')) {
		fprintf(stderr, "bad error message: '%s'\n", e);
		abort();
	}
}

static char om_path[64];

static void remove_om(void) { unlink(om_path); }

/* The model every input runs on, opened once. */
static gearrt_model *model(void)
{
	static gearrt_model *md;
	if (md)
		return md;
	snprintf(om_path, sizeof(om_path), "/tmp/fuzz_api.%ld.om",
		 (long)getpid());
	Model *m = onnx_load("tests/fixtures/strings.onnx");
	PassOptions o = { .jobs = 1 };
	if (!m || run_passes(m, &o) < 0 || om_write(m, om_path) < 0 ||
	    gearrt_model_open(om_path, &md) != GEARRT_OK) {
		fprintf(stderr, "fuzz_api: cannot compile strings.onnx: %s\n",
			last_error());
		abort();
	}
	model_free(m);
	atexit(remove_om);
	return md;
}

static int32_t le32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
			 (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* A string tensor written as .npy reads back the same. */
static void round_trip(const Tensor *t, const char *const *str)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/fuzz_api.%ld.npy", (long)getpid());
	if (npy_write(path, DT_STRING, &t->shape, str) < 0) {
		check_message(last_error()); /* not UTF-8: cannot be <U */
		return;
	}
	Arena a = { 0 };
	const Tensor *back = npy_read(&a, path);
	const Bytes *x = t->data, *y = back ? back->data : NULL;
	int64_t n = shape_numel(&t->shape);
	if (!back || !shape_equal(&back->shape, &t->shape))
		abort();
	for (int64_t i = 0; i < n; i++)
		if (x[i].len != y[i].len || memcmp(x[i].data, y[i].data, x[i].len))
			abort();
	arena_release(&a);
	unlink(path);
}

/* t as gearrt_run takes it (strings as char *, in a), size less cut. */
static gearrt_tensor api_input(Arena *a, const Tensor *t, size_t cut)
{
	gearrt_tensor in = { .dtype = t->dtype, .rank = t->shape.rank,
			     .data = (void *)t->data, .size = t->nbytes };
	memcpy(in.dims, t->shape.dims, (size_t)t->shape.rank * sizeof(int64_t));
	if (t->dtype == DT_STRING) {
		size_t n = (size_t)shape_numel(&t->shape);
		const Bytes *b = t->data;
		char **str = arena_array(a, n + 1, sizeof(char *));
		for (size_t k = 0; k < n; k++)
			str[k] = arena_strndup(a, (const char *)b[k].data,
					       b[k].len);
		in.data = str;
		in.size = n * sizeof(char *);
		round_trip(t, (const char *const *)str);
	}
	in.size -= cut < in.size ? cut : in.size;
	return in;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 13)
		return 0;
	gearrt_model *md = model();
	gearrt_options o = { .threads = le32(data), .shape_cache = le32(data + 4),
			     .no_gears = le32(data + 8) };
	gearrt_session *s = NULL;
	if (gearrt_session_create(md, &o, &s) != GEARRT_OK) {
		check_message(gearrt_last_error());
		if (o.threads >= 0 && o.threads <= GEARRT_THREADS_MAX &&
		    o.shape_cache <= GEARRT_SHAPE_CACHE_MAX)
			abort(); /* options in range are taken */
	}
	Arena a = { 0 };
	clear_error();
	const Tensor *t = npy_parse(&a, data + 13, size - 13);
	if (!t)
		check_message(last_error());
	if (t && s) {
		gearrt_tensor in = api_input(&a, t, data[12]);
		gearrt_tensor out[2] = { { 0 }, { 0 } };
		if (gearrt_run(s, &in, 1, out, 2) != GEARRT_OK)
			check_message(gearrt_last_error());
	}
	gearrt_session_destroy(s);
	arena_release(&a);
	return 0;
}
