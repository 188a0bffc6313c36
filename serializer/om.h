/*
 * serializer/om.h - the .om file: layout, writer and checked reader.
 *
 * Layout (all integers little-endian):
 *
 *   offset size  field
 *   0      8     magic "GEAROM\0\1"
 *   8      4     format_version (1)
 *   12     4     header_size (64): bytes before the partition table
 *   16     8     file_length: total bytes of the file
 *   24     4     checksum: CRC-32 (IEEE) of bytes [header_size, file_length)
 *   28     4     partition_count
 *   32     32    reserved, zero
 *   64     24*n  partition table, one 24-byte entry per partition:
 *                  u32 type (1 MODEL_DEF, 2 WEIGHTS), u32 reserved (0),
 *                  u64 offset (from the file start), u64 size
 *   ...          partitions, each starting 64-byte aligned, zero padding
 *                between them
 *
 * MODEL_DEF is a gearom.Model protobuf (proto/gearom.proto).  WEIGHTS holds
 * every weight's bytes once, each at a 64-byte aligned offset within the
 * partition (so a loader can mmap the file and use them in place).  A
 * string tensor's bytes are, per element, a u64 length then the bytes.
 *
 * The reader trusts nothing: the magic, version, sizes, checksum, every
 * partition bound, and then every index, enum, rank and dim in the model
 * message are checked before om_open() returns; a bad file is an error
 * naming the file and what is wrong, never a crash.
 */
#ifndef GEARC_OM_H
#define GEARC_OM_H

#include "compiler/ir.h"
#include "proto/gearom.pb-c.h"

#define OM_MAGIC "GEAROM\0\1"
#define OM_VERSION 1
#define OM_HEADER_SIZE 64
#define OM_PART_SIZE 24 /* u32 type, u32 reserved, u64 offset, u64 size */
#define OM_ALIGN 64

enum { OM_PART_MODEL_DEF = 1, OM_PART_WEIGHTS = 2 };

/* Writes m (its root graph m->graph and everything below it, the gear spec
 * and options) to path atomically: a temporary file in the same directory,
 * fsync, rename.  On failure nothing is left and an existing file at path
 * is untouched. */
int om_write(const Model *m, const char *path);

/* The same bytes in memory (malloc'd; free with free()). */
int om_encode(const Model *m, uint8_t **out, size_t *len);

typedef struct OmFile {
	FileMap map;
	const uint8_t *data; /* whole file */
	size_t size;
	Gearom__Model *model; /* validated */
	const uint8_t *weights; /* WEIGHTS partition (may be empty) */
	uint64_t weights_size;
} OmFile;

/* Opens and fully validates path; -1 with an error naming path. */
int om_open(OmFile *f, const char *path);
/* The same on bytes in memory (kept by reference; name for messages). */
int om_parse(OmFile *f, const uint8_t *data, size_t size, const char *name);
void om_close(OmFile *f);

#endif
