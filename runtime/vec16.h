/*
 * runtime/vec16.h - a vector of 16 floats reduced to one in one fixed
 * order: the largest lane, the sum, whether any lane is set.  The order
 * is the same every time (halving: lanes 8 apart, then 4, 2, 1), so a
 * row's max and sum do not depend on the thread that computes it.
 *
 * The includer defines VL (16), Vec (16 floats) and IVec (16 int32_t);
 * the functions are inlined into each ISA's variant of their callers.
 * GCC shuffles the lanes; other compilers (clang, the fuzz build) take
 * them one at a time in the same order.
 */
#ifndef GEARC_RUNTIME_VEC16_H
#define GEARC_RUNTIME_VEC16_H

_Static_assert(VL == 16, "vec16.h's lane numbers are 16");

/* Lanes of a where mask is set, of b elsewhere. */
#define VEC_PICK(mask, a, b) \
	((Vec)(((mask) & (IVec)(a)) | (~(mask) & (IVec)(b))))

#if defined(__GNUC__) && !defined(__clang__)
#define VEC_HALVE(v, op, h) ((v) = op((v), __builtin_shuffle((v), (h))))
#else
#define VEC_HALVE(v, op, h)                                               \
	do {                                                              \
		__typeof__(v) s_;                                         \
		for (int l_ = 0; l_ < VL; l_++)                           \
			s_[l_] = (v)[(h)[l_]];                            \
		(v) = op((v), s_);                                        \
	} while (0)
#endif
#define VEC_MAX2(a, b) VEC_PICK((b) > (a), (b), (a))
#define VEC_ADD2(a, b) ((a) + (b))
#define VEC_OR2(a, b) ((a) | (b))

static const IVec vec16_halve[4] = {
	{ 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7 },
	{ 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11 },
	{ 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13 },
	{ 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14 },
};

/* The largest lane of *p (NaN lanes aside). */
static inline __attribute__((always_inline)) float vec_max(const Vec *p)
{
	Vec v = *p;
	for (int i = 0; i < 4; i++)
		VEC_HALVE(v, VEC_MAX2, vec16_halve[i]);
	return v[0];
}

/* Whether any lane of *p is set. */
static inline __attribute__((always_inline)) bool ivec_any(const IVec *p)
{
	IVec v = *p;
	for (int i = 0; i < 4; i++)
		VEC_HALVE(v, VEC_OR2, vec16_halve[i]);
	return v[0] != 0;
}

/* The sum of the lanes of *p. */
static inline __attribute__((always_inline)) float vec_sum(const Vec *p)
{
	Vec v = *p;
	for (int i = 0; i < 4; i++)
		VEC_HALVE(v, VEC_ADD2, vec16_halve[i]);
	return v[0];
}

#endif
