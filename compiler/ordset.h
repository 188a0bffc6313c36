/*
 * compiler/ordset.h - an ordered set of items 0..n-1, each with a key
 * (two uint64s compared in order, distinct within the set) and a weight:
 * insert, remove, the neighbours of a key, and the leftmost item of at
 * least a given weight, each in O(log n) expected time.  A treap whose
 * priorities come from a fixed-seed generator, so every run builds the
 * same tree.  The memory planner's sweep (passes/memplan.c) and verify's
 * overlap check (cli/verify.c) keep the live buffers in one by offset.
 *
 *	OrdSet s;
 *	ordset_init(&s, n);
 *	ordset_insert(&s, i, (OrdKey){ off, 0 }, gap);
 *	int32_t j = ordset_below(&s, (OrdKey){ off, 0 });  // -1: none
 *	ordset_release(&s);
 */
#ifndef GEARC_ORDSET_H
#define GEARC_ORDSET_H

#include "util.h"

typedef struct OrdKey {
	uint64_t a, b;
} OrdKey;

typedef struct OrdNode OrdNode;

typedef struct OrdSet {
	OrdNode *node; /* per item */
	int32_t root, n;
	uint64_t seed;
} OrdSet;

void ordset_init(OrdSet *s, int32_t n);
void ordset_release(OrdSet *s);
/* Item i (not in the set) with key k, distinct from every key in it. */
void ordset_insert(OrdSet *s, int32_t i, OrdKey k, uint64_t weight);
/* Item i, which is in the set. */
void ordset_remove(OrdSet *s, int32_t i);
uint64_t ordset_weight(const OrdSet *s, int32_t i);
/* The item with the smallest key >= k, > k; the largest < k; the last;
 * -1 if there is none. */
int32_t ordset_ceil(const OrdSet *s, OrdKey k);
int32_t ordset_above(const OrdSet *s, OrdKey k);
int32_t ordset_below(const OrdSet *s, OrdKey k);
int32_t ordset_last(const OrdSet *s);
/* The item with the smallest key among those of weight >= w; -1. */
int32_t ordset_first_heavy(const OrdSet *s, uint64_t w);

#endif
