/*
 * serializer/omimpl.h - what the parts of serializer/ share (private).
 *
 *   lower.c  Model -> gearom.Model message, plus the list of distinct
 *            weight tensors in Model.weights order;
 *   check.c  validation of an unpacked gearom.Model against its file;
 *   om.c     the container: layout, streaming writer, checked reader.
 */
#ifndef GEARC_OMIMPL_H
#define GEARC_OMIMPL_H

#include "om.h"

#define OM_MAX_PARTS 16 /* a reader's limit on partition_count */

/* The lowered form of a Model.  Everything is allocated from arena;
 * strings may point into the Model, which must outlive this. */
typedef struct OmLowered {
	Arena arena;
	Gearom__Model *msg;
	const Tensor **weights; /* distinct tensors, Model.weights order */
	int32_t nweights;
	uint64_t weights_size; /* bytes of the WEIGHTS partition */
} OmLowered;

/* Lowers m; -1 with an error if m cannot be written (a malformed
 * attribute or tensor).  om_lowered_release() in either case. */
int om_lower(OmLowered *l, const Model *m);
void om_lowered_release(OmLowered *l);

/* Bytes a tensor takes in WEIGHTS: its data, or for strings a u64
 * length and the bytes of every element.  -1 with an error if its
 * nbytes does not match its dtype and shape. */
int om_tensor_size(const Tensor *t, uint64_t *size);

/* Checks every index, enum, rank and dim of m (see om.h); weights is
 * the WEIGHTS partition (NULL if there is none).  The writer's
 * self-check has sizes but no bytes (have_bytes false): it skips looking
 * inside string weights.  -1 with an error naming the place (the caller
 * prefixes the file name). */
int om_check_model(const Gearom__Model *m, const uint8_t *weights,
		   uint64_t weights_size, bool have_bytes);

/* Little-endian fields, byte by byte (no alignment assumed). */
static inline void om_put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void om_put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t om_get_u32(const uint8_t *p)
{
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline uint64_t om_get_u64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline uint64_t om_align(uint64_t x)
{
	return (x + (OM_ALIGN - 1)) & ~(uint64_t)(OM_ALIGN - 1);
}

#endif
