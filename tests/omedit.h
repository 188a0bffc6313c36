/*
 * tests/omedit.h - a .om whose MODEL_DEF was edited: the tests that check
 * what the reader, `gearc verify` and the runtime refuse parse a file
 * gearc wrote (om_parse), change fields of its gearom.Model, and write
 * the file again with its weights and a right checksum, so only the
 * checks after the container's can tell.
 */
#ifndef GEARC_OMEDIT_H
#define GEARC_OMEDIT_H

#include "serializer/omimpl.h"
#include "testrun.h"

/* Writes to path the file whose bytes are orig (as gearc wrote it) with
 * MODEL_DEF replaced by msg, its WEIGHTS partition kept. */
static inline void omedit_write(const uint8_t *orig, const Gearom__Model *msg,
				const char *path)
{
	uint32_t nparts = om_get_u32(orig + 28);
	uint64_t woff = nparts == 2 ? om_get_u64(orig + 88 + 8) : 0;
	uint64_t wsz = nparts == 2 ? om_get_u64(orig + 88 + 16) : 0;
	size_t defsz = protobuf_c_message_get_packed_size(&msg->base);
	uint64_t nwoff = om_align(128 + defsz);
	size_t len = (size_t)(nparts == 2 ? nwoff + wsz : 128 + defsz);
	uint8_t *c = calloc(len, 1);
	memcpy(c, orig, 64 + 24 * nparts);
	om_put_u64(c + 16, len);
	om_put_u64(c + 80, defsz);
	protobuf_c_message_pack(&msg->base, c + 128);
	if (nparts == 2) {
		om_put_u64(c + 96, nwoff);
		memcpy(c + nwoff, orig + woff, wsz);
	}
	om_put_u32(c + 24, crc32_update(0, c + 64, len - 64));
	write_file(path, c, len);
	free(c);
}

/* A compiled file to edit. */
typedef struct Fx {
	char *dir, *om;
	uint8_t *data; /* the file as gearc wrote it */
	size_t size;
	OmFile f; /* data, parsed: its message is edited */
} Fx;

/* tests/fixtures/MODEL compiled (--no-fuse) at --input_shape=SHAPE and
 * the gear flag gears (or NULL) into a fresh directory, and parsed. */
static inline Fx fx_compile(const char *model, const char *shape,
			    const char *gears)
{
	Fx x = { .dir = temp_dir() };
	x.om = path_in(x.dir, "m.om");
	char out[700], marg[300], sarg[300];
	snprintf(out, sizeof(out), "--output=%s", x.om);
	snprintf(marg, sizeof(marg), "--model=tests/fixtures/%s", model);
	snprintf(sarg, sizeof(sarg), "--input_shape=%s", shape);
	Run r = gears ? run_gearc(marg, out, sarg, gears, "--no-fuse")
		      : run_gearc(marg, out, sarg, "--no-fuse");
	cr_assert_eq(r.status, 0, "compile: %s", r.err);
	run_free(&r);
	x.data = (uint8_t *)read_file(x.om, &x.size);
	cr_assert(x.data);
	cr_assert_eq(om_parse(&x.f, x.data, x.size, "m.om"), 0, "%s",
		     last_error());
	return x;
}

static inline void fx_free(Fx *x)
{
	om_close(&x->f);
	free(x->data);
	remove_tree(x->dir);
	free(x->dir);
	free(x->om);
}

#endif
