/*
 * runtime/pw_simd.h - the 1x1 convolution's matrix product (chanwise.c,
 * "Conv of 1x1 windows"), written once over runtime/simd.h's vectors
 * and included by chanwise.c once per ISA level: SF(chan_gemm) for
 * wino.c, SF(chan_gemm_part) for gemv.c's products of many rows,
 * SF(pw_nhwc) and SF(pw_rows_major), a work item each.
 *
 * A tile is MR rows by NV vectors of C in registers, each step along K
 * loading NV vectors of B and broadcasting MR values of A: with 32
 * vector registers (AVX-512, NEON) up to 4 vectors by 6 rows, 3 by 8 or
 * 2 by 12, as chanwise.c measured on AVX-512; with 16 (AVX2) 2 by 6 or
 * 1 by 12 (12 accumulators, 2 of B, one of A); SSE2 2 by 4 or 1 by 8.  A panel's columns
 * (nr: 32, 48 or 64) run a tile of PW_NVMAX vectors at a time.
 */
#include "simd.h"

#undef PW_NVMAX
#undef PW_SPARE_REGS
#if SIMD_VL == 16 || defined(__aarch64__)
#define PW_NVMAX 4
#else
#define PW_NVMAX 2
#endif
/* SSE2 has no fused multiply-add: a product needs a register of its
 * own, so its tiles are 2 by 4 or 1 by 8 (8 accumulators) */
#if SIMD_VL == 4 && RT_X86
#define PW_SPARE_REGS 0
#else
#define PW_SPARE_REGS 1
#endif

/* The rows of a tile of nv vectors. */
static inline int SF(pw_mr)(int nv)
{
	return PW_NVMAX == 4	    ? (nv == 4 ? 6 : nv == 3 ? 8 : 12)
	       : PW_SPARE_REGS	    ? (nv == 2 ? 6 : 12)
				    : (nv == 2 ? 4 : 8);
}

/* k's activations over y[0..n), in place: act.h's loops, inlined for
 * the level. */
SIMD_TARGET RT_OPT_FAST static void SF(pw_acts)(const Pw *k, float *y,
						size_t n)
{
	for (int j = 0; j < k->acts->n; j++)
		act_loop_f32(k->acts->act[j].kind, y, y, n, k->acts->act[j].a,
			     k->acts->act[j].b);
}

/* C [MR][nc] (row stride ldc) = A [MR][K] B [K][VL NV] (K >= 1) + the
 * bias: brow[i] per row, or bcol[j] per column (VL NV of them), or none;
 * add: C's values before, added last (a product in blocks of K).  nc
 * ends in the last vector, whose lanes past it are neither read nor
 * stored.  pf, if not NULL: MR rows like A's to fetch into cache
 * meanwhile; pfc: MR rows like C's of pfn floats to fetch for writing
 * (pfn 0: none). */
SIMD_FN void SF(pw_tile)(const int MR, const int NV, int64_t K,
			 const float *a, int64_t lda, const float *b,
			 int64_t ldb, float *c, int64_t ldc, int64_t nc,
			 const float *brow, const float *bcol, bool add,
			 const float *pf, float *pfc, int64_t pfn)
{
	V acc[PW_MR][PW_NVMAX];
	for (int i = 0; i < MR; i++) {
		for (int64_t k = 0; k < K && pf; k += 16)
			__builtin_prefetch(pf + i * lda + k);
		for (int64_t j = 0; j < pfn; j += 16)
			__builtin_prefetch(pfc + i * ldc + j, 1);
	}
	/* one path to acc, and a loop known to run: with a path per kind
	 * of bias, or a loop that may not, gcc kept acc on the stack */
	static const float zeros[SIMD_VL * PW_NVMAX]
		__attribute__((aligned(64)));
	const float *bc = bcol ? bcol : zeros, *br = brow ? brow : zeros;
	int64_t rs = brow ? 1 : 0;
	for (int i = 0; i < MR; i++)
		for (int v = 0; v < NV; v++)
			acc[i][v] = SF(vload)(bc + SIMD_VL * v) + br[i * rs];
	/* A's rows from one base per three (fewer registers) */
	const float *ab[PW_MR / 3];
	for (int i = 0; i < MR; i += 3)
		ab[i / 3] = a + i * lda;
	int64_t k = 0;
	do {
		V bv[PW_NVMAX];
		for (int v = 0; v < NV; v++)
			bv[v] = SF(vload)(b + SIMD_VL * v);
		for (int i = 0; i < MR; i++) {
			float s = ab[i / 3][k + i % 3 * lda];
			for (int v = 0; v < NV; v++)
				acc[i][v] += s * bv[v];
		}
		b += ldb;
	} while (++k < K);
	int64_t last = nc - SIMD_VL * (NV - 1);
	for (int i = 0; i < MR; i++)
		for (int v = 0; v < NV; v++) {
			float *at = c + i * ldc + SIMD_VL * v;
			bool whole = v < NV - 1 || last == SIMD_VL;
			if (add)
				acc[i][v] += whole ? SF(vload)(at)
						   : SF(vload_n)(at, last);
			if (whole)
				SF(vstore)(at, acc[i][v]);
			else
				SF(vstore_n)(at, acc[i][v], last);
		}
}

/* The tile of mr rows (1..pw_mr(nv)) by nc columns (1..VL PW_NVMAX) at
 * c, K deep. */
SIMD_TARGET RT_OPT_FAST static void
SF(pw_any)(int mr, int64_t nc, int64_t K, const float *a, int64_t lda,
	   const float *b, int64_t ldb, float *c, int64_t ldc,
	   const float *brow, const float *bcol, bool add, const float *pf,
	   float *pfc, int64_t pfn)
{
	int nv = (int)((nc + SIMD_VL - 1) / SIMD_VL);
#define PW_CASE(M, N)                                                     \
	case (M) * 8 + (N):                                               \
		SF(pw_tile)(M, N, K, a, lda, b, ldb, c, ldc, nc, brow, bcol, \
			    add, pf, pfc, pfn);                           \
		break;
#define PW_ROW12(M) PW_CASE(M, 1) PW_CASE(M, 2)
#if PW_NVMAX == 4
#define PW_ROW(M) PW_CASE(M, 1) PW_CASE(M, 2) PW_CASE(M, 3) PW_CASE(M, 4)
#define PW_ROW8(M) PW_CASE(M, 1) PW_CASE(M, 2) PW_CASE(M, 3)
	switch (mr * 8 + nv) {
		PW_ROW(1) PW_ROW(2) PW_ROW(3) PW_ROW(4) PW_ROW(5) PW_ROW(6)
		PW_ROW8(7) PW_ROW8(8) PW_ROW12(9) PW_ROW12(10) PW_ROW12(11)
		PW_ROW12(12)
	}
#undef PW_ROW
#undef PW_ROW8
#else
#define PW_ROW6(M) PW_CASE(M, 1) PW_CASE(M, 2)
#define PW_ROW1(M) PW_CASE(M, 1)
	switch (mr * 8 + nv) {
		PW_ROW6(1) PW_ROW6(2) PW_ROW6(3) PW_ROW6(4) PW_ROW6(5)
		PW_ROW6(6) PW_ROW1(7) PW_ROW1(8) PW_ROW1(9) PW_ROW1(10)
		PW_ROW1(11) PW_ROW1(12)
	}
#undef PW_ROW6
#undef PW_ROW1
#endif
#undef PW_ROW12
#undef PW_CASE
}

/* Rows [0, m) of C = A B + bias (+ C, add), nc columns (at most 64), K
 * deep; B's are bp (row stride ldb, whole vectors readable: padded).
 * ahead: A's rows two tiles on are fetched meanwhile, and C's where pfc
 * (rec's 64-channel 1x1 Convs at 8x24x320 ran 28% slower than oneDNN's
 * without). */
static void SF(pw_rows)(int64_t m, int64_t nc, int64_t K, const float *a,
			int64_t lda, const float *bp, int64_t ldb, float *c,
			int64_t ldc, const float *brow, const float *bcol,
			bool add, bool ahead, bool pfc)
{
	enum { COLS = SIMD_VL * PW_NVMAX };
	for (int64_t j0 = 0; j0 < nc; j0 += COLS) {
		int64_t cols = nc - j0 < COLS ? nc - j0 : COLS;
		int mr = SF(pw_mr)((int)((cols + SIMD_VL - 1) / SIMD_VL));
		bool pre = ahead && j0 == 0;
		/* the fewest tiles, of rows as even as they go: 49 rows
		 * as 7 tiles of 7, not 6 of 8 and one of 1, which loads
		 * as much of B as a whole tile for an eighth of its work */
		int64_t tiles = (m + mr - 1) / mr;
		for (int64_t i = 0, t = tiles, rows; t > 0; i += rows, t--) {
			rows = (m - i + t - 1) / t;
			SF(pw_any)((int)rows, cols, K,
				   a + i * lda, lda, bp + j0, ldb,
				   c + i * ldc + j0, ldc,
				   brow ? brow + i : NULL,
				   bcol ? bcol + j0 : NULL, add,
				   pre ? a + (i + 2 * mr) * lda : NULL,
				   c + (i + 2 * mr) * ldc, pre && pfc ? ldc : 0);
		}
	}
}

void SF(chan_gemm_part)(int64_t m, int64_t n, int64_t K, const float *a,
			int64_t lda, const float *bp, int64_t ps, int64_t nr,
			float *c, int64_t ldc, const float *bcol, bool add)
{
	for (int64_t n0 = 0; n0 < n; n0 += nr)
		SF(pw_rows)(m, n - n0 < nr ? n - n0 : nr, K, a, lda,
			    bp + n0 / nr * ps, nr, c + n0, ldc, NULL,
			    bcol ? bcol + n0 : NULL, add, false, false);
}

void SF(chan_gemm)(int64_t m, int64_t n, int64_t K, const float *a,
		   int64_t lda, const float *bp, int64_t nr, float *c,
		   int64_t ldc)
{
	SF(chan_gemm_part)(m, n, K, a, lda, bp, nr * K, nr, c, ldc, NULL,
			   false);
}

/* NHWC: chunk r of k->mc pixels against every panel of W', then the
 * activations over the chunk's outputs (contiguous, in cache). */
static void SF(pw_nhwc)(const Pw *k, const float *x, float *y, int64_t r)
{
	int64_t m0 = r * k->mc, m = k->n * k->hw - m0;
	m = m > k->mc ? k->mc : m;
	for (int64_t n0 = 0; n0 < k->cout; n0 += k->nr)
		SF(pw_rows)(m, k->cout - n0 < k->nr ? k->cout - n0 : k->nr,
			    k->cin, x + m0 * k->cin, k->cin,
			    k->wp + n0 * k->cin, k->nr, y + m0 * k->cout + n0,
			    k->cout, NULL, k->bp + n0, false, n0 == 0, k->pfc);
	SF(pw_acts)(k, y + m0 * k->cout, (size_t)(m * k->cout));
}

/* Row-major: PW_NP pixels from p0 of image i, every output channel, then
 * the activations along each channel's; B's columns are copied into
 * panel where they end before a whole vector. */
static void SF(pw_rows_major)(const Pw *k, const float *x, float *y,
			      int64_t i, int64_t p0, float *panel)
{
	int64_t nc = k->hw - p0 < PW_NP ? k->hw - p0 : PW_NP;
	const float *b = x + i * k->cin * k->hw + p0;
	float *c = y + i * k->cout * k->hw + p0;
	int64_t ldb = k->hw;
	if (nc % SIMD_VL) {
		for (int64_t ch = 0; ch < k->cin; ch++) {
			memcpy(panel + ch * PW_NP, b + ch * k->hw,
			       (size_t)nc * sizeof(float));
			memset(panel + ch * PW_NP + nc, 0,
			       (size_t)(PW_NP - nc) * sizeof(float));
		}
		b = panel, ldb = PW_NP;
	}
	SF(pw_rows)(k->cout, nc, k->cin, k->w, k->cin, b, ldb, c, k->hw, k->b,
		    NULL, false, false, false);
	for (int64_t o = 0; o < k->cout; o++)
		SF(pw_acts)(k, c + o * k->hw, (size_t)nc);
}
