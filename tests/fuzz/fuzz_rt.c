/*
 * tests/fuzz/fuzz_rt.c - libFuzzer: libgearrt's loader and a run.
 *
 * The input is a .om file (half the time with its length and checksum
 * fixed up, so the checks behind them are reached).  It is written to a
 * temporary file and opened with gearrt_model_open; if it opens, it is
 * described, and gear 0 (or the static graph) runs on zero inputs.  A
 * crash, leak, hang or a failure without a one-line message is a bug.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/gearrt.h"
#include "serializer/omimpl.h"

static void check_message(void)
{
	const char *e = gearrt_last_error();
	if (!*e || strchr(e, '\n'))
		abort();
}

/* Inputs shaped at gear 0, zero-filled; 0 if they would be too large. */
static size_t make_inputs(gearrt_model *m, gearrt_tensor *in, size_t nin)
{
	const int64_t *dims = NULL;
	size_t nd = 0, at = 0;
	if (gearrt_gear_count(m))
		gearrt_gear_dims(m, 0, &dims, &nd);
	for (size_t i = 0; i < nin; i++) {
		gearrt_input_info(m, i, &in[i]);
		size_t n = gearrt_dtype_size(in[i].dtype);
		for (int32_t d = 0; d < in[i].rank; d++) {
			if (in[i].dims[d] < 0)
				in[i].dims[d] = at < nd ? dims[at++] : 1;
			if (in[i].dims[d] > (1 << 20) ||
			    (n *= (size_t)in[i].dims[d]) > (16u << 20))
				return i;
		}
		in[i].size = n;
		in[i].data = calloc(1, n ? n : 1);
	}
	return nin;
}

static void run_model(gearrt_model *m)
{
	gearrt_session *s;
	gearrt_tensor in[16], out[16];
	size_t nin = gearrt_input_count(m), nout = gearrt_output_count(m);
	if (nin > 16 || nout > 16)
		return;
	memset(out, 0, sizeof(out));
	size_t made = make_inputs(m, in, nin);
	if (made == nin && gearrt_session_create(m, NULL, &s) == GEARRT_OK) {
		if (gearrt_run(s, in, nin, out, nout) != GEARRT_OK)
			check_message();
		gearrt_session_destroy(s);
	}
	for (size_t i = 0; i < made; i++)
		free(in[i].data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/fuzz_rt.%ld.om", (long)getpid());
	uint8_t *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	if (size >= OM_HEADER_SIZE && (data[size - 1] & 1)) {
		om_put_u64(copy + 16, size);
		om_put_u32(copy + 24, crc32_update(0, copy + OM_HEADER_SIZE,
						   size - OM_HEADER_SIZE));
	}
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(copy, 1, size, f) != size || fclose(f))
		abort();
	free(copy);
	gearrt_model *m;
	if (gearrt_model_open(path, &m) == GEARRT_OK) {
		run_model(m);
		gearrt_model_close(m);
	} else {
		check_message();
	}
	unlink(path);
	return 0;
}
