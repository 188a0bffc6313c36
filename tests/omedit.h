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

#endif
