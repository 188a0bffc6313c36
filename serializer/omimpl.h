/*
 * serializer/omimpl.h - what the parts of serializer/ share (private).
 *
 *   lower.c  Model -> gearom.Model message without its graphs, the
 *            graphs numbered and checked, and the list of distinct
 *            weight tensors in Model.weights order;
 *   emit.c   each graph as the bytes of one Model.graphs entry;
 *   check.c  validation of an unpacked gearom.Model against its file;
 *   om.c     the container: layout, streaming writer, checked reader.
 */
#ifndef GEARC_OMIMPL_H
#define GEARC_OMIMPL_H

#include "om.h"

#define OM_MAX_PARTS 16 /* a reader's limit on partition_count */

/* Pointer -> index (a Tensor's in Model.weights, a Graph's in
 * Model.graphs), open addressing. */
typedef struct OmIndexMap {
	const void **keys;
	int32_t *vals;
	uint32_t cap, len;
} OmIndexMap;

/* The lowered form of a Model.  Everything is allocated from arena;
 * strings may point into the Model, which must outlive this.  msg has
 * no graphs: graph i is graphs[i], written by om_emit_graph. */
typedef struct OmLowered {
	Arena arena;
	Gearom__Model *msg;
	const Tensor **weights; /* distinct tensors, Model.weights order */
	int32_t nweights;
	uint64_t weights_size; /* bytes of the WEIGHTS partition */
	OmIndexMap wmap;       /* every tensor a graph names */
	/* Graphs depth first in node order, the root first: graph i's
	 * parent index (-1 for the root) and how many graphs its subtree
	 * holds, itself included (its subgraphs are the next indices). */
	const Graph **graphs;
	int32_t *parents, *subtree;
	int32_t ngraphs;
} OmLowered;

/* Lowers m; -1 with an error if m cannot be written (a malformed
 * attribute or tensor).  om_lowered_release() in either case. */
int om_lower(OmLowered *l, const Model *m);
void om_lowered_release(OmLowered *l);

/* Model.weights index of a tensor the lowered graphs name. */
int32_t om_weight_index(const OmLowered *l, const Tensor *t);

/* Bytes being written: p[start, n) once complete. */
typedef struct OmBuf {
	uint8_t *p;
	size_t start, n, cap;
} OmBuf;

/* Graph gi as one Model.graphs entry (tag, length, gearom.Graph) into
 * b, which must be empty ({0}); -1 with an error ("graph 2: node 5:
 * ...") if the reader would reject it.  Reads l only, so graphs can be
 * written on several threads at once. */
int om_emit_graph(const OmLowered *l, int32_t gi, OmBuf *b);

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

/* The checks om_check_model is made of that the writer makes on the IR
 * too, so both report a problem in the same words.  Each returns 0, or
 * -1 with an error. */
int om_check_dtype(int32_t dt);
/* rank -1..MAX_RANK, n dims exactly rank (none if rank is -1), each
 * dim >= min. */
int om_check_shape(int32_t rank, size_t n, const int64_t *dims, int64_t min);
int om_check_type_kind(int type);
int om_check_attr_type(int type);
/* v[0..n) index a graph's ntensors tensors (-1 allowed if optional). */
int om_check_refs(const char *what, const int32_t *v, size_t n,
		  size_t ntensors, bool optional);
int om_check_order(const int32_t *order, size_t n, size_t nnodes);
/* Memory-plan block k (a workspace if node != -1). */
int om_check_block(size_t k, int32_t tensor, int32_t node, int32_t alias_of,
		   uint64_t offset, uint64_t size, size_t ntensors,
		   size_t nnodes);

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
