/*
 * cli/npy.h - NumPy .npy files (format versions 1.0-3.0) for `gearc run`.
 *
 * Reading accepts little-endian (or byte-order-free) dtypes gearc knows
 * (<f4 <f8 <f2 |b1 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8), C order, any rank up
 * to 8, and checks that the data fills the file exactly.  Writing emits
 * version 1.0 with the header padded to a multiple of 64 bytes, as NumPy
 * does.
 */
#ifndef GEARC_NPY_H
#define GEARC_NPY_H

#include "compiler/ir.h"

/* Reads path into a tensor allocated from a (data copied, aligned).
 * NULL with an error "PATH: what is wrong". */
Tensor *npy_read(Arena *a, const char *path);
/* Writes dtype/shape/data as path atomically, as `gearc run --output-dir`
 * does (serializer/om.h's om_write_bytes: an exclusive temporary file,
 * then rename; nothing but a regular file at path is replaced); -1 with
 * an error "--output-dir 'PATH': ...". */
int npy_write(const char *path, int dtype, const Shape *s, const void *data);

#endif
