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
 * The writer emits MODEL_DEF, then WEIGHTS only if there are weights; the
 * file ends where the last partition ends.
 *
 * The writer numbers graphs depth first in node order from the root
 * (graphs[0]); weights in the order the same walk first meets them (per
 * graph: tensors, then node attributes), once per distinct Tensor.  The
 * same Model always gives the same bytes.
 *
 * The reader trusts nothing: the magic, version, sizes, checksum, every
 * partition bound, and then every index, enum, rank and dim in the model
 * message are checked before om_open() returns; a bad file is an error
 * naming the file and what is wrong, never a crash.  After a successful
 * open a consumer may rely on:
 *   - producer and source are set; every string field is non-NULL except
 *     Node.label (NULL outside gear branches);  an empty bytes field may
 *     have data NULL;
 *   - graphs[root] is the root, with parent -1; every other graph has
 *     0 <= parent < its own index (so the tree has no cycle), is at most
 *     MAX_OM_GRAPH_DEPTH levels below the root (compiler/ir.h: so every
 *     walk recursing into subgraphs is bounded), and is named by at most
 *     one ATTR_GRAPH(S) attribute, which is in its parent;
 *   - tensors: dtype 0..16, rank -1..8 with exactly rank dims (none for
 *     -1), dims >= -1, kind and type in their enums, weight -1 or a valid
 *     index (valid for TK_WEIGHT), outer a valid index into the parent's
 *     tensors for TK_OUTER (never in the root; typed as that tensor:
 *     type, dtype, rank, dims) and -1 otherwise,
 *     dim_params empty or rank entries;
 *   - nodes: inputs/outputs -1 or valid tensor indices; attributes: type
 *     0..14, t/tensors valid weight indices (t set for ATTR_TENSOR), g /
 *     graphs valid subgraphs (g set for ATTR_GRAPH);
 *   - graph inputs/outputs valid tensor indices, the inputs exactly the
 *     graph's TK_INPUT tensors, each once; every static shape (tensors,
 *     inputs and outputs, max shapes) has a byte size that fits int64;
 *     memory plans: order valid
 *     node indices, blocks valid tensor (and alias_of -1 or valid) indices,
 *     or tensor and alias_of -1 with a valid node (a workspace), offset +
 *     size does not overflow (the rest is `gearc verify`'s job);
 *   - weights: dtype 1..16, at most 8 dims >= 0, 64-aligned and inside
 *     WEIGHTS, size = numel * dtype size (strings: the u64-length layout
 *     exactly fills size);
 *   - inputs/outputs as tensors' shapes, no two inputs and no two outputs
 *     of one name, max_shape empty or as many dims
 *     (the writer gives every input a max_shape: the shape at the gear
 *     with the largest product of its gear values, or its shape if it
 *     has none);
 *     gear inputs: rank <= 8, dyn_axes index -1 dims; gears: index = their
 *     position, the same number of dims each, graph -1 or valid, input and
 *     output shapes as tensors' shapes;
 *   - the gear table holds together: mode static exactly when there are
 *     no gears and no gear inputs; the gear inputs are the model inputs
 *     with a -1 dim, in the model's order, each of the same shape as its
 *     model input, its dyn_axes every -1 of it in increasing order;
 *     each gear has one value >= 1 per -1 of the gear inputs, a branch
 *     graph (if any) that is a child of the root and no other gear's, its
 *     inputs' shapes the gear inputs' with its values at the -1s, its
 *     outputs (if listed) named as the model's, and bytes exactly when a
 *     shape is static: numel * dtype size;
 *   - a plan's arena_bytes is at most its blocks' sizes summed;
 *   - every partition entry's reserved field is 0 and the file ends where
 *     the last partition ends.
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
 * and options) to path atomically: the bytes go to an unnamed file in
 * path's directory (O_TMPFILE) that gets the name ".NAME.tmp.PID.N" only
 * once it is complete and synced, and is then renamed to path; where the
 * file system has no unnamed files, to that named temporary file from the
 * start.  Then the directory is synced (best effort).  Weights are
 * streamed from their Tensors.  On failure nothing is left and an
 * existing file at path is untouched; the error reads
 * "--output 'PATH': cannot create file: REASON" (or "cannot write",
 * "cannot replace it", "is a FIFO; gearc replaces only a regular file":
 * nothing but a regular file at path is replaced, see om_temp_open).  A Model the reader would reject is refused
 * before any file is created. */
int om_write(const Model *m, const char *path);
/* false: om_write writes the named temporary file from the start, as on
 * a file system without O_TMPFILE (for tests of that path). */
extern bool om_use_tmpfile;

/* Removes the named temporary file om_write is writing, if any: for a
 * handler of SIGTERM, SIGINT or SIGHUP, which then re-raises the signal
 * (async-signal-safe: one unlink()).  The library installs no handler. */
void om_remove_temp(void);

/* Removes the temporary files (".NAME.om.tmp.PID.N", any NAME) that a
 * gearc killed while writing left in path's directory: those whose PID
 * is no running process and that were not modified for
 * OM_STALE_TEMP_SECONDS (a writer in another PID namespace or on another
 * host sharing the directory may have the same PID and be alive; its
 * file is modified as it is written).  Best effort, no error. */
void om_remove_stale_temps(const char *path);
#define OM_STALE_TEMP_SECONDS 60

/* om_write's atomic-file protocol, for every other output (serializer/
 * export.c, cli/npy.c); flag names the option the path came from in the
 * errors ("--output 'PATH': ...").  om_temp_open refuses a path that
 * holds anything but a regular file (a device, FIFO, socket, directory
 * or symbolic link: "is a FIFO; gearc replaces only a regular file"),
 * then creates the temporary file ".NAME.tmp.PID.N" next to path
 * exclusively (O_EXCL | O_NOFOLLOW: a name already taken, by a planted
 * symbolic link too, is skipped) and returns its descriptor, its name in
 * *tmp (malloc'd), or -1 with the error set.  The caller writes and
 * fsyncs; om_temp_commit then closes fd and, if e (an errno from the
 * writes) is 0, checks path again and renames the file to it, else
 * removes it; it frees tmp and returns 0 or -1 with om_write's errors.
 * om_write_bytes does all three for nparts buffers written in order. */
int om_temp_open(const char *flag, const char *path, char **tmp);
int om_temp_commit(int fd, char *tmp, const char *flag, const char *path,
		   int e);
int om_write_bytes(const char *flag, const char *path,
		   const void *const *parts, const size_t *sizes, int nparts);

/* The same bytes in memory (malloc'd; free with free()). */
int om_encode(const Model *m, uint8_t **out, size_t *len);

typedef struct OmFile {
	FileMap map;
	const uint8_t *data; /* whole file */
	size_t size;
	Gearom__Model *model; /* validated */
	const uint8_t *weights; /* WEIGHTS partition; NULL if none */
	uint64_t weights_size;
	uint64_t def_off, def_size; /* the MODEL_DEF partition */
	/* om_open_readonly's model lives in one arena; om_open's and
	 * om_parse's are malloc'd field by field (dump and the tests edit
	 * them). */
	Arena pb;
	bool in_arena;
} OmFile;

/* Opens and fully validates path; -1 with an error "PATH: what is wrong"
 * (f is then zeroed; om_close on it is harmless).
 *
 * The file is read into memory, not mapped (f->data is a private copy;
 * f->weights points into it, and a runtime uses the weights there in
 * place).  Why: a mapping of a file that another process truncates
 * faults (SIGBUS) in whatever code next touches a lost page, which a
 * library cannot catch (a signal handler is the whole process's, and
 * MAP_PRIVATE does not help: truncation drops private pages too).  So
 * mapping would turn a file replaced or cut while dump, verify or a
 * runtime reads it into a crash; read, it is an error ("the file changed
 * while it was read") at open and cannot hurt afterwards.
 *
 * What it costs.  Time: little, since the checksum reads every byte at
 * open either way; the copy goes into huge pages where the kernel has
 * them (filemap_read).  On a 256 MB .om, `gearc verify` took 0.5 to 1.2 s
 * read and 0.65 to 1.0 s mapped (a loaded 2-core machine; with 4 KB pages
 * the read took 1.8 s), with the same peak RSS, 264 MB.  Memory: the
 * copy is the process's own, so the kernel cannot drop and re-read it
 * under pressure, and several processes running one model hold one copy
 * each (500 MB each for a 500 MB .om) where mappings would share the
 * page cache's.  A runtime that needs that sharing should map weights
 * only from a file that cannot change under it (a sealed memfd, or a
 * copy it owns), not from a path a user may rewrite. */
int om_open(OmFile *f, const char *path);
/* om_open for a reader that never edits the message (the runtime's
 * loader, export): it is unpacked into one arena, without a malloc per
 * field, and freed at once.  The MODEL_DEF bytes of data are given back
 * once unpacked (the message holds copies; constants gearc computed are
 * most of them: 6 of a PP-OCR rec file's 11 MB): data then covers the
 * header, the partition table and WEIGHTS only. */
int om_open_readonly(OmFile *f, const char *path);
/* om_open_readonly of size bytes at data, which it copies (the caller
 * may free them when it returns); name, for messages. */
int om_open_memory(OmFile *f, const void *data, size_t size,
		   const char *name);
/* The same on bytes in memory (kept by reference; name, non-NULL, for
 * messages).  om_close() frees the message. */
int om_parse(OmFile *f, const uint8_t *data, size_t size, const char *name);
void om_close(OmFile *f);

#endif
