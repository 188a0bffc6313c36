/*
 * cli/npy.h - NumPy .npy files (format versions 1.0-3.0) for `gearc run`.
 *
 * Reading parses the header as the Python dict literal numpy writes
 * ('descr', 'fortran_order' and 'shape', nothing else) and accepts
 * little-endian (or byte-order-free) dtypes gearc knows (<f4 <f8 <f2 |b1
 * |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8) and <U strings (UTF-32LE, read as
 * UTF-8), C order, any rank up to 8, and checks that the data fills the
 * file exactly.  Writing emits version 1.0 with the header padded to a
 * multiple of 64 bytes, as NumPy does; strings as <U of the longest
 * element's width.
 */
#ifndef GEARC_NPY_H
#define GEARC_NPY_H

#include "compiler/ir.h"

/* Reads path into a tensor allocated from a (data copied, aligned; a
 * string tensor as the IR holds one, Bytes of UTF-8).  NULL with an
 * error "PATH: what is wrong". */
Tensor *npy_read(Arena *a, const char *path);
/* The same from the file's bytes p[0..size); the error names no file. */
Tensor *npy_parse(Arena *a, const uint8_t *p, size_t size);
/* Writes dtype/shape/data as path atomically, as `gearc run --output-dir`
 * does (serializer/om.h's om_write_bytes: an exclusive temporary file,
 * then rename; nothing but a regular file at path is replaced); -1 with
 * an error "--output-dir 'PATH': ...".  For DT_STRING data is an array of
 * NUL-terminated UTF-8 strings (const char *), as gearrt.h gives them. */
int npy_write(const char *path, int dtype, const Shape *s, const void *data);
/* The same, the errors naming flag ("--dump-tensors 'PATH': ...").
 * npy_writable: whether dtype has a .npy form (bfloat16 has none). */
int npy_write_as(const char *flag, const char *path, int dtype,
		 const Shape *s, const void *data);
bool npy_writable(int dtype);

/* The file a tensor called name is written to, as `gearc run
 * --output-dir`, --dump-tensors and --save-inputs name them: NAME.npy,
 * every byte of NAME other than a letter, digit, '.', '_' or '-' as %xx
 * (so no name makes a path, and two names never one file); npy_path
 * puts it in dir.  npy_name is the inverse for a file name ending in
 * .npy: the tensor name (malloc'd), or NULL if it is no such name. */
char *npy_file(const char *name);
char *npy_path(const char *dir, const char *name);
char *npy_name(const char *file);

#endif
