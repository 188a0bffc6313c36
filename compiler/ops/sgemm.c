/*
 * compiler/ops/sgemm.c - the fp32 matrix product every heavy kernel
 * (Gemm, MatMul, Conv, ConvTranspose) runs on, and the im2col/col2im
 * transforms that turn a convolution into one.
 *
 * sgemm is blocked the BLIS way: B is packed in KC x NR column panels
 * and A in MC x KC blocks of MR-row panels, so the micro-kernel reads
 * both with unit stride from cache while it keeps an MR x NR tile of C
 * in registers.  The micro-kernel is plain C that gcc -O2 vectorises
 * (fixed trip counts, restrict pointers); on x86-64 it is also built
 * for AVX2 and chosen when the CPU has it within the cap (compiler/cpu.h).  Partial
 * tiles at the edges are padded with zeros when packed and stored
 * through a small buffer.  Memory comes from the caller (op_scratch):
 * kernels must not allocate.
 */
#include <string.h>

#include "../cpu.h"
#include "opimpl.h"

enum {
	MR = 6,	   /* rows of the register tile */
	NR = 16,   /* columns of the register tile */
	KC = 256,  /* depth of a packed panel */
	MC = 96,   /* rows of a packed A block (a multiple of MR) */
	NC = 2048, /* columns of a packed B block (a multiple of NR) */
};

#if defined(__x86_64__) && defined(__GNUC__)
#define GEMM_AVX2 1
#endif

size_t sgemm_scratch(int64_t m, int64_t n, int64_t k)
{
	int64_t kc = k < KC ? k : KC, mc = m < MC ? m : MC;
	int64_t nc = n < NC ? n : NC;
	mc = (mc + MR - 1) / MR * MR;
	nc = (nc + NR - 1) / NR * NR;
	return (size_t)(kc * (mc + nc)) * sizeof(float);
}

/* Packs op(A)[i0.., p0..] (mc x kc) into MR-row panels, k-major:
 * panel r holds a[(r * kc + p) * MR + i]; rows past mc are zero.  Each
 * source row (or column of a transposed A) is read in one sweep. */
static void pack_a(bool ta, const float *a, int64_t lda, int64_t mc,
		   int64_t kc, float *restrict dst)
{
	for (int64_t i0 = 0; i0 < mc; i0 += MR, dst += MR * kc) {
		int64_t mr = mc - i0 < MR ? mc - i0 : MR;
		if (ta) {
			for (int64_t p = 0; p < kc; p++)
				for (int64_t i = 0; i < MR; i++)
					dst[p * MR + i] =
						i < mr ? a[p * lda + i0 + i] : 0;
			continue;
		}
		for (int64_t i = 0; i < mr; i++) {
			const float *row = a + (i0 + i) * lda;
			for (int64_t p = 0; p < kc; p++)
				dst[p * MR + i] = row[p];
		}
		for (int64_t i = mr; i < MR; i++)
			for (int64_t p = 0; p < kc; p++)
				dst[p * MR + i] = 0;
	}
}

/* Packs op(B)[p0.., j0..] (kc x nc) into NR-column panels, k-major:
 * panel r holds b[(r * kc + p) * NR + j]; columns past nc are zero.
 * Rows of a plain B are read whole (panel by panel, they would walk
 * down columns at a large power-of-two stride and thrash the cache). */
static void pack_b(bool tb, const float *b, int64_t ldb, int64_t kc,
		   int64_t nc, float *restrict dst)
{
	int64_t full = nc / NR * NR;
	if (!tb) {
		for (int64_t p = 0; p < kc; p++) {
			const float *row = b + p * ldb;
			for (int64_t j0 = 0; j0 < full; j0 += NR)
				memcpy(dst + j0 * kc + p * NR, row + j0,
				       NR * sizeof(float));
		}
	} else {
		for (int64_t j0 = 0; j0 < full; j0 += NR)
			for (int64_t p = 0; p < kc; p++)
				for (int64_t j = 0; j < NR; j++)
					dst[j0 * kc + p * NR + j] =
						b[(j0 + j) * ldb + p];
	}
	if (full == nc)
		return;
	dst += full * kc;
	for (int64_t p = 0; p < kc; p++, dst += NR)
		for (int64_t j = 0; j < NR; j++)
			dst[j] = full + j >= nc ? 0
				 : tb	       ? b[(full + j) * ldb + p]
					       : b[p * ldb + full + j];
}

/* Four and eight floats: SSE and AVX registers (NEON, ... elsewhere);
 * they alias the float arrays they are loaded from and stored to. */
typedef float V4 __attribute__((vector_size(16), aligned(4), may_alias));
#ifdef GEMM_AVX2
typedef float V8 __attribute__((vector_size(32), aligned(4), may_alias));
#endif

/* One row of the register tile: row i of the packed A panel times the
 * vectors of the packed B panel, for the V4 and V8 kernels. */
#define ROW(i, b0, b1)                             \
	do {                                       \
		c##i##0 += a[i] * (b0);            \
		c##i##1 += a[i] * (b1);            \
	} while (0)
#define TILE(V, b0, b1)                            \
	do {                                       \
		ROW(0, b0, b1);                    \
		ROW(1, b0, b1);                    \
		ROW(2, b0, b1);                    \
		ROW(3, b0, b1);                    \
		ROW(4, b0, b1);                    \
		ROW(5, b0, b1);                    \
	} while (0)
#define TILE_DECL(V)                                                    \
	V c00 = { 0 }, c01 = { 0 }, c10 = { 0 }, c11 = { 0 };         \
	V c20 = { 0 }, c21 = { 0 }, c30 = { 0 }, c31 = { 0 };         \
	V c40 = { 0 }, c41 = { 0 }, c50 = { 0 }, c51 = { 0 }
#define TILE_STORE(V, o, ld)                                            \
	do {                                                            \
		V *q = (V *)(o);                                        \
		q[0] = c00, q[1] = c01, q[ld] = c10, q[ld + 1] = c11;   \
		q[2 * ld] = c20, q[2 * ld + 1] = c21;                   \
		q[3 * ld] = c30, q[3 * ld + 1] = c31;                   \
		q[4 * ld] = c40, q[4 * ld + 1] = c41;                   \
		q[5 * ld] = c50, q[5 * ld + 1] = c51;                   \
	} while (0)

/* acc[MR][NR] = sum over p < kc of a[p][i] * b[p][j] (packed panels).
 * The tile lives in twelve named vectors so that gcc keeps it in
 * registers (an array indexed by a loop variable ends up in memory).
 * With 16-byte vectors the 6 x 16 tile takes two passes of 6 x 8. */
static void micro_kernel_v4(int64_t kc, const float *restrict a0,
			    const float *restrict b, float *restrict acc)
{
	for (int half = 0; half < 2; half++) {
		const float *a = a0, *bp = b + 8 * half;
		TILE_DECL(V4);
		for (int64_t p = 0; p < kc; p++, a += MR, bp += NR)
			TILE(V4, *(const V4 *)bp, *(const V4 *)(bp + 4));
		TILE_STORE(V4, acc + 8 * half, NR / 4);
	}
}

#ifdef GEMM_AVX2
__attribute__((target("avx2")))
static void micro_kernel_v8(int64_t kc, const float *restrict a,
			    const float *restrict b, float *restrict acc)
{
	TILE_DECL(V8);
	for (int64_t p = 0; p < kc; p++, a += MR, b += NR)
		TILE(V8, *(const V8 *)b, *(const V8 *)(b + 8));
	TILE_STORE(V8, acc, NR / 8);
}
#endif

typedef void (*MicroKernel)(int64_t, const float *restrict,
			    const float *restrict, float *restrict);

/* The widest micro-kernel this CPU runs. */
static MicroKernel micro_kernel(void)
{
#ifdef GEMM_AVX2
	if (cpu_has(CPU_AVX2))
		return micro_kernel_v8;
#endif
	return micro_kernel_v4;
}

/* C tile (mr x nr) = alpha * acc + beta * C (beta 0: C not read). */
static void store_tile(const float *acc, int64_t mr, int64_t nr, float alpha,
		       float beta, float *c, int64_t ldc)
{
	for (int64_t i = 0; i < mr; i++, c += ldc, acc += NR) {
		if (beta == 0)
			for (int64_t j = 0; j < nr; j++)
				c[j] = alpha * acc[j];
		else if (beta == 1)
			for (int64_t j = 0; j < nr; j++)
				c[j] += alpha * acc[j];
		else
			for (int64_t j = 0; j < nr; j++)
				c[j] = alpha * acc[j] + beta * c[j];
	}
}

/* One packed A block (mc x kc) times one packed B block (kc x nc). */
static void macro_kernel(int64_t mc, int64_t nc, int64_t kc, float alpha,
			 const float *pa, const float *pb, float beta,
			 float *c, int64_t ldc)
{
	float acc[MR * NR];
	MicroKernel kernel = micro_kernel();
	for (int64_t j0 = 0; j0 < nc; j0 += NR) {
		int64_t nr = nc - j0 < NR ? nc - j0 : NR;
		for (int64_t i0 = 0; i0 < mc; i0 += MR) {
			int64_t mr = mc - i0 < MR ? mc - i0 : MR;
			kernel(kc, pa + i0 * kc, pb + j0 * kc, acc);
			store_tile(acc, mr, nr, alpha, beta,
				   c + i0 * ldc + j0, ldc);
		}
	}
}

void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
	   const float *a, int64_t lda, const float *b, int64_t ldb,
	   float beta, float *c, int64_t ldc, float *pack)
{
	if (m <= 0 || n <= 0)
		return;
	if (k <= 0) {
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < n; j++)
				c[i * ldc + j] = beta == 0 ? 0
							   : beta * c[i * ldc + j];
		return;
	}
	int64_t kcmax = k < KC ? k : KC;
	int64_t mcmax = (m < MC ? m : MC);
	float *pa = pack, *pb = pack + kcmax * ((mcmax + MR - 1) / MR * MR);
	for (int64_t j0 = 0; j0 < n; j0 += NC) {
		int64_t nc = n - j0 < NC ? n - j0 : NC;
		for (int64_t p0 = 0; p0 < k; p0 += KC) {
			int64_t kc = k - p0 < KC ? k - p0 : KC;
			float bt = p0 ? 1 : beta;
			pack_b(tb, tb ? b + j0 * ldb + p0 : b + p0 * ldb + j0,
			       ldb, kc, nc, pb);
			for (int64_t i0 = 0; i0 < m; i0 += MC) {
				int64_t mc = m - i0 < MC ? m - i0 : MC;
				pack_a(ta,
				       ta ? a + p0 * lda + i0 : a + i0 * lda + p0,
				       lda, mc, kc, pa);
				macro_kernel(mc, nc, kc, alpha, pa, pb, bt,
					     c + i0 * ldc + j0, ldc);
			}
		}
	}
}

/* ---- im2col, col2im ----------------------------------------------------- */

/* Offset in the image of the row (all axes but the last) that column
 * position o and kernel offset k meet; -1 if it is in the padding. */
static int64_t row_offset(const ConvGeom *g, const int64_t *img,
			  const int64_t *o, const int64_t *k)
{
	int64_t off = 0;
	for (int32_t d = 0; d < g->nsp - 1; d++) {
		int64_t p = o[d] * g->stride[d] - g->pad[d] + k[d] * g->dilation[d];
		if (p < 0 || p >= img[d])
			return -1;
		off = off * img[d] + p;
	}
	return off * img[g->nsp - 1];
}

/* One row of columns dst[0..n): x[at + j * s] for j in [lo, hi), zeros
 * around (all zeros if the row is in the padding, row < 0). */
static void copy_row(float *restrict dst, const float *x, int64_t row,
		     int64_t at, int64_t s, int64_t lo, int64_t hi, int64_t n)
{
	if (row < 0) {
		memset(dst, 0, n * sizeof(float));
		return;
	}
	memset(dst, 0, lo * sizeof(float));
	if (s == 1 && hi > lo)
		memcpy(dst + lo, x + at + lo, (hi - lo) * sizeof(float));
	for (int64_t j = lo; s > 1 && j < hi; j++)
		dst[j] = x[at + j * s];
	memset(dst + hi, 0, (n - hi) * sizeof(float));
}

/* Walks every (channel, kernel offset, row of column positions): with
 * the image x it copies it into the columns colw, with the image y it
 * adds the columns colr into it. */
static void im2col_walk(const ConvGeom *g, const int64_t *img,
			const int64_t *cols, int64_t channels, const float *x,
			float *y, const float *colr, float *colw)
{
	int32_t last = g->nsp - 1;
	int64_t isz = 1, osz = 1, ksz = 1, k[MAX_RANK] = { 0 };
	int64_t o[MAX_RANK] = { 0 }, lo, hi, on = cols[last];
	int64_t s = g->stride[last], in = img[last];
	for (int32_t d = 0; d < g->nsp; d++) {
		isz *= img[d];
		osz *= cols[d];
		ksz *= g->kernel[d];
	}
	for (int64_t ch = 0; ch < channels; ch++) {
		for (int64_t kf = 0; kf < ksz; kf++) {
			int64_t off = k[last] * g->dilation[last] - g->pad[last];
			conv_range(off, s, in, on, &lo, &hi);
			for (int64_t r = 0; r < osz; r += on) {
				int64_t row = row_offset(g, img, o, k);
				int64_t at = ch * isz + row + off;
				int64_t ci = (ch * ksz + kf) * osz + r;
				if (colw)
					copy_row(colw + ci, x, row, at, s, lo,
						 hi, on);
				for (int64_t j = lo; !colw && row >= 0 && j < hi;
				     j++)
					y[at + j * s] += colr[ci + j];
				tn_next(last, cols, o);
			}
			tn_next(g->nsp, g->kernel, k);
		}
	}
}

void im2col(const ConvGeom *g, const int64_t *img, const int64_t *cols,
	    int64_t channels, const float *x, float *col)
{
	im2col_walk(g, img, cols, channels, x, NULL, NULL, col);
}

void col2im(const ConvGeom *g, const int64_t *img, const int64_t *cols,
	    int64_t channels, const float *col, float *x)
{
	im2col_walk(g, img, cols, channels, NULL, x, col, NULL);
}
