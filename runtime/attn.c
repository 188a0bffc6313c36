/*
 * runtime/attn.c - Sdpa (compiler/ops/attention.c) in plain C
 * (runtime/attn.h).
 *
 * Attention as three nodes (MatMul, Softmax, MatMul) writes the scores
 * of every head to memory and reads them twice; around them Transposes
 * copy Q, K, V and the output once more.  Here a task is one batch block
 * (batch x head) and a tile of up to QT queries: Q's rows read as they
 * are (packed only if not contiguous), K transposed once into KT (D x
 * Skv, padded to whole vectors, in 16x16 blocks through registers), the
 * tile's scores a small matrix product in registers (rows x vectors of
 * keys a step, the variant's), scaled, causally masked and masked, its
 * softmax taken in float32 from the row's max (exp as act.h's, a key
 * whose score is more than 64 below the max counting 0: its weight would
 * be under 1.6e-28 of the largest, and near the float exp's underflow
 * its last step and its products with V go denormal, which slows every
 * instruction meeting one by two orders of magnitude), then the
 * unnormalised weights times V the same way and the rows scaled by
 * 1 / sum as they are written through y_perm.  Q, K, V and Y are read
 * and written through their permutations' strides, so the head
 * Transposes around attention cost nothing.  A row holding a NaN or
 * whose largest score is infinite is NaN, as the reference kernel's.
 * Each output row is computed by one task in one order: the same bits at
 * any thread count.  Tasks go to the session's threads one at a time
 * (RT_PARALLEL_FOR); their scratch is the session's work, a slice a
 * thread.  A task is compiled for AVX-512, AVX2 and the base ISA, the
 * variant picked by compiler/cpu.h (task_avx512 and its kin below).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/act.h"
#include "compiler/cpu.h"
#include "attn.h"

enum { VL = 16, JB = 2 * VL, QT = 64, ROWS = 8 };

typedef float Vec __attribute__((vector_size(VL * sizeof(float))));
typedef int32_t IVec __attribute__((vector_size(VL * sizeof(int32_t))));
typedef uint32_t UVec __attribute__((vector_size(VL * sizeof(uint32_t))));

#include "vec16.h" /* after VL, Vec and IVec */

typedef struct Attn Attn;
typedef void TaskFn(const Attn *k, const float *const *in, float *y,
		    int64_t i, float *w);

struct Attn {
	SdpaGeom g;
	TaskFn *task;	/* the variant for this CPU */
	RunCtx *s;	/* its work: per thread, scratch floats */
	int threads;
	int64_t qt;	/* queries a task */
	int64_t tiles;	/* tiles of a batch block */
	int64_t per_task; /* tiles a task: all, or 1 */
	int64_t ld;	/* Skv rounded up to VL: a row of scores, of KT */
	int64_t ldo;	/* Dv rounded up to VL: a row of O, of packed V */
	bool pack_v;	/* V's rows are not whole vectors in place */
	/* offsets of a thread's KT, Q tile, scores, O tile, packed V and
	 * 1 / sum, and its scratch, in floats */
	size_t kt, q, sc, o, v, inv, per_thread;
};

static int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

/* The x86-64 variants are built with GCC's target attributes (below,
 * with a task), and the AVX2 one packs K with simd_x86.h's transpose. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
	!defined(__SANITIZE_ADDRESS__)
#define ATTN_X86 1
#define ATTN_AVX2 __attribute__((target("avx2,fma"), \
				 optimize("O3", "fp-contract=fast")))
#include "simd_x86.h"
#endif

/* ---- packing -------------------------------------------------------------- */

/* Vectors go through memory and by pointer: a function returning one
 * would change the ABI between the variants. */
#define VLOAD(v, p) memcpy(&(v), (p), sizeof(Vec))
#define VSTORE(p, v) memcpy((p), &(v), sizeof(Vec))

/* d = lanes of a and b (a's 0..VL-1, b's VL..2VL-1) picked by m: GCC's
 * shuffle, else lane by lane (clang, the fuzz build). */
#if defined(__GNUC__) && !defined(__clang__)
#define VSHUF2(d, a, b, m) ((d) = __builtin_shuffle((a), (b), (m)))
#else
#define VSHUF2(d, a, b, m)                                                \
	do {                                                              \
		for (int l_ = 0; l_ < VL; l_++)                           \
			(d)[l_] = (m)[l_] < VL ? (a)[(m)[l_]]             \
					       : (b)[(m)[l_] - VL];       \
	} while (0)
#endif

/* The 16x16 block of floats at src (rows rs apart) transposed to dst
 * (rows ds apart), in registers: four stages, each swapping the
 * off-diagonal half x half blocks of every 2 half x 2 half block (two
 * vector shuffles a pair of rows: 64 for 256 floats, where a float at
 * a time took 3-4 cycles each). */
static inline __attribute__((always_inline)) void
transpose16(const float *src, int64_t rs, float *dst, int64_t ds)
{
	Vec r[VL];
	for (int i = 0; i < VL; i++)
		VLOAD(r[i], src + i * rs);
	for (int half = VL / 2; half >= 1; half /= 2) {
		IVec ma, mb;
		for (int l = 0; l < VL; l++) {
			ma[l] = l & half ? VL + l - half : l;
			mb[l] = l & half ? VL + l : l + half;
		}
		for (int i = 0; i < VL; i++) {
			if (i & half)
				continue;
			Vec a = r[i], b = r[i + half];
			VSHUF2(r[i], a, b, ma);
			VSHUF2(r[i + half], a, b, mb);
		}
	}
	for (int i = 0; i < VL; i++)
		VSTORE(dst + i * ds, r[i]);
}

#ifdef ATTN_X86
/* kt's whole 8 x 8 blocks (j < jf, e < df) from K's contiguous rows, in
 * AVX2's registers: transpose16's 16-float vectors are two registers
 * each there, and GCC spilled its shuffles to the stack (a third of
 * the AVX2 variant's time on a 4-head encoder layer). */
ATTN_AVX2 static void pack_kt8(const float *k, int64_t kj, int64_t jf,
			       int64_t df, float *kt, int64_t ld)
{
	for (int64_t j = 0; j < jf; j += 8)
		for (int64_t e = 0; e < df; e += 8) {
			__m256 r[8];
			for (int i = 0; i < 8; i++)
				r[i] = _mm256_loadu_ps(k + (j + i) * kj + e);
			simd_transpose8(r);
			for (int i = 0; i < 8; i++)
				_mm256_storeu_ps(kt + (e + i) * ld + j, r[i]);
		}
}
#endif

/* kt[d][j] = K[j][d] (strides kj, kd), lanes j >= skv 0: whole blocks
 * through registers where K's rows are contiguous (16 x 16, or 8 x 8
 * for the half variant), the edges a float at a time.  Inlined into
 * each variant. */
static inline __attribute__((always_inline)) void
pack_kt(const float *k, int64_t kj, int64_t kd, int64_t skv, int64_t d,
	float *kt, int64_t ld, const bool half)
{
	int64_t b = VL;
	(void)half; /* no half variant off x86-64 */
#ifdef ATTN_X86
	b = half ? 8 : VL;
#endif
	int64_t jf = kd == 1 ? skv / b * b : 0, df = d / b * b;
	if (b == VL)
		for (int64_t j = 0; j < jf; j += VL)
			for (int64_t e = 0; e < df; e += VL)
				transpose16(k + j * kj + e, kj, kt + e * ld + j,
					    ld);
#ifdef ATTN_X86
	else
		pack_kt8(k, kj, jf, df, kt, ld);
#endif
	for (int64_t e = 0; e < d; e++) {
		float *row = kt + e * ld;
		for (int64_t j = e < df ? jf : 0; j < skv; j++)
			row[j] = k[j * kj + e * kd];
		for (int64_t j = skv; j < ld; j++)
			row[j] = 0;
	}
}

/* dst[r][c] = src[r * rs + c * cs] for r < rows, c < cols; row length
 * ld, lanes c >= cols 0. */
static inline __attribute__((always_inline)) void
pack_rows(const float *src, int64_t rs, int64_t cs, int64_t rows,
		      int64_t cols, float *dst, int64_t ld)
{
	for (int64_t r = 0; r < rows; r++) {
		float *row = dst + r * ld;
		if (cs == 1)
			memcpy(row, src + r * rs, (size_t)cols * sizeof(float));
		else
			for (int64_t c = 0; c < cols; c++)
				row[c] = src[r * rs + c * cs];
		for (int64_t c = cols; c < ld; c++)
			row[c] = 0;
	}
}

/* ---- the two products ------------------------------------------------------ */

enum { MAXR = 8, MAXC = 4 };

typedef float Half __attribute__((vector_size(VL / 2 * sizeof(float))));

/* o[r][0..C VL) = sum_e a[r][e] b[e][0..C VL) for r < R (a rows lda
 * apart, b rows ldb, o rows ldo): R x C vector accumulators, R and C
 * constants of the variant (enough independent sums to keep its
 * multiply-add units busy, few enough to stay in its registers; each
 * scalar of a loaded once for C vectors of b). */
static inline __attribute__((always_inline)) void
mm_block(const float *a, int64_t lda, int64_t n, const float *b,
	 int64_t ldb, float *o, int64_t ldo, const int R, const int C)
{
	Vec c[MAXR][MAXC];
	for (int r = 0; r < R; r++)
		for (int q = 0; q < C; q++)
			c[r][q] = (Vec){ 0 };
	for (int64_t e = 0; e < n; e++, b += ldb) {
		Vec u[MAXC];
		for (int q = 0; q < C; q++)
			VLOAD(u[q], b + q * VL);
		for (int r = 0; r < R; r++) {
			float x = a[r * lda + e];
			for (int q = 0; q < C; q++)
				c[r][q] += x * u[q];
		}
	}
	for (int r = 0; r < R; r++)
		for (int q = 0; q < C; q++)
			VSTORE(o + r * ldo + q * VL, c[r][q]);
}

/* Columns [c0, cols) of rows [0, m) in blocks of C vectors (cols - c0 a
 * multiple of C VL): R rows at a time, then one. */
static inline __attribute__((always_inline)) void
mm_cols(const float *a, int64_t lda, int64_t m, int64_t n, const float *b,
	int64_t ldb, int64_t c0, int64_t cols, float *o, int64_t ldo,
	const int R, const int C)
{
	int64_t r = 0;
	for (; r + R <= m; r += R)
		for (int64_t c = c0; c < cols; c += C * VL)
			mm_block(a + r * lda, lda, n, b + c, ldb,
				 o + r * ldo + c, ldo, R, C);
	for (; r < m; r++)
		for (int64_t c = c0; c < cols; c += C * VL)
			mm_block(a + r * lda, lda, n, b + c, ldb,
				 o + r * ldo + c, ldo, 1, C);
}

/* o[r][c] = sum_e a[r][e] b[e][c] for r < m, c < cols (a multiple of
 * VL): blocks of R rows by C vectors, the columns left by them 2
 * vectors wide, then 1. */
static inline __attribute__((always_inline)) void
mm(const float *a, int64_t lda, int64_t m, int64_t n, const float *b,
   int64_t ldb, int64_t cols, float *o, int64_t ldo, const int R,
   const int C)
{
	int64_t wide = cols / (C * VL) * (C * VL);
	int64_t pairs = wide + (cols - wide) / JB * JB;
	mm_cols(a, lda, m, n, b, ldb, 0, wide, o, ldo, R, C);
	if (wide < pairs)
		mm_cols(a, lda, m, n, b, ldb, wide, pairs, o, ldo, R, 2);
	if (pairs < cols)
		mm_cols(a, lda, m, n, b, ldb, pairs, cols, o, ldo, R, 1);
}

#ifdef ATTN_X86
/* o[r][0..16) = sum_e a[r][e] b[e][0..16) for r < R: 2R accumulators of
 * AVX2's 8 floats, a row's scalar broadcast once for both (R = 6: 12
 * multiply-adds to 8 loads a step, where tiles of 2 rows of 2 vectors
 * made 8 to 6 and ran the attention's products at a third of the
 * multiply-add units' rate).  The same sums in the same order as
 * mm_block's, one fused multiply-add an e. */
ATTN_AVX2 static inline __attribute__((always_inline)) void
tile16_avx2(const float *a, int64_t lda, int64_t n, const float *b,
	    int64_t ldb, float *o, int64_t ldo, const int R)
{
	__m256 c0[6], c1[6];
#pragma GCC unroll 6
	for (int r = 0; r < R; r++)
		c0[r] = c1[r] = _mm256_setzero_ps();
	for (int64_t e = 0; e < n; e++, b += ldb) {
		__m256 u0 = _mm256_loadu_ps(b), u1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 6
		for (int r = 0; r < R; r++) {
			__m256 x = _mm256_broadcast_ss(a + r * lda + e);
			c0[r] = _mm256_fmadd_ps(x, u0, c0[r]);
			c1[r] = _mm256_fmadd_ps(x, u1, c1[r]);
		}
	}
#pragma GCC unroll 6
	for (int r = 0; r < R; r++) {
		_mm256_storeu_ps(o + r * ldo, c0[r]);
		_mm256_storeu_ps(o + r * ldo + 8, c1[r]);
	}
}

/* mm for AVX2: columns in blocks of 16 (cols is a multiple of VL), rows
 * 6 at a time, then the rest at once; a block of b's columns stays in
 * L1 across the rows. */
ATTN_AVX2 static void mm_avx2(const float *a, int64_t lda, int64_t m,
			      int64_t n, const float *b, int64_t ldb,
			      int64_t cols, float *o, int64_t ldo)
{
	for (int64_t c = 0; c < cols; c += 16) {
		int64_t r = 0;
		for (; r + 6 <= m; r += 6)
			tile16_avx2(a + r * lda, lda, n, b + c, ldb,
				    o + r * ldo + c, ldo, 6);
		const float *ar = a + r * lda;
		float *or = o + r * ldo + c;
		switch (m - r) {
		case 5: tile16_avx2(ar, lda, n, b + c, ldb, or, ldo, 5); break;
		case 4: tile16_avx2(ar, lda, n, b + c, ldb, or, ldo, 4); break;
		case 3: tile16_avx2(ar, lda, n, b + c, ldb, or, ldo, 3); break;
		case 2: tile16_avx2(ar, lda, n, b + c, ldb, or, ldo, 2); break;
		case 1: tile16_avx2(ar, lda, n, b + c, ldb, or, ldo, 1); break;
		default: break;
		}
	}
}
#endif

/* The variant's product: mm_avx2 for AVX2 (half), else mm. */
static inline __attribute__((always_inline)) void
product(const float *a, int64_t lda, int64_t m, int64_t n, const float *b,
	int64_t ldb, int64_t cols, float *o, int64_t ldo, const int R,
	const int C, const bool half)
{
#ifdef ATTN_X86
	if (half) {
		mm_avx2(a, lda, m, n, b, ldb, cols, o, ldo);
		return;
	}
#endif
	(void)half;
	mm(a, lda, m, n, b, ldb, cols, o, ldo, R, C);
}

/* ---- the softmax --------------------------------------------------------- */

/* A weight exp(x) for x = score - max below EXP_CUT counts 0: it is
 * under 1.6e-28 of the row's largest, and exp's last step, r * 2^k,
 * makes a denormal for x near -87, which costs a microcode assist per
 * vector (a softmax over 197 keys padded to 224 ran 3x slower). */
#define EXP_CUT (-64.0f)

/* *v = exp(*v - m) per lane, 0 where *v - m < EXP_CUT (m the row's max,
 * finite). */
static inline __attribute__((always_inline)) void vexp_from(Vec *v, float m)
{
	Vec x = *v - m;
	IVec keep = x >= EXP_CUT;
	Vec c = VEC_PICK(keep, x, (Vec){ 0 } + EXP_CUT);
	Vec fk = EXP_BIAS(c), y;
	Vec sc = (Vec)((UVec)fk << 23);
	EXP_FINISH(c, fk, sc, y);
	*v = VEC_PICK(keep, y, (Vec){ 0 });
}

typedef int32_t HalfI __attribute__((vector_size(VL / 2 * sizeof(int32_t))));
typedef uint32_t HalfU __attribute__((vector_size(VL / 2 * sizeof(uint32_t))));
#define HALF_PICK(mask, a, b) \
	((Half)(((mask) & (HalfI)(a)) | (~(mask) & (HalfI)(b))))

/* vexp_from on 8 lanes: the same operations lane by lane. */
static inline __attribute__((always_inline)) void vexp_half(Half *v, float m)
{
	Half x = *v - m;
	HalfI keep = x >= EXP_CUT;
	Half c = HALF_PICK(keep, x, (Half){ 0 } + EXP_CUT);
	Half fk = EXP_BIAS(c), y;
	Half sc = (Half)((HalfU)fk << 23);
	EXP_FINISH(c, fk, sc, y);
	*v = HALF_PICK(keep, y, (Half){ 0 });
}

/* The 16 lanes of a Vec as two halves, lanes 0-7 and 8-15. */
#define VEC_OF_HALVES(d, lo, hi)                                  \
	do {                                                      \
		memcpy(&(d), &(lo), sizeof(lo));                  \
		memcpy((char *)&(d) + sizeof(lo), &(hi), sizeof(hi)); \
	} while (0)

/* softmax_row's max, NaN lanes and exp loops over whole vectors of the
 * row, each vector as two halves of 8 floats (half: AVX2's variant,
 * where GCC spills 16-float vectors): the same lanes, the same
 * operations, the same bits. */
static inline __attribute__((always_inline)) void
row_max(const float *s, int64_t ld, Vec *vm, IVec *nan, const bool half)
{
	if (!half) {
		for (int64_t j = 0; j < ld; j += VL) {
			Vec v;
			VLOAD(v, s + j);
			*vm = VEC_PICK(v > *vm, v, *vm);
			*nan |= v != v;
		}
		return;
	}
	Half m[2] = { (Half){ 0 } - INFINITY, (Half){ 0 } - INFINITY };
	HalfI n[2] = { { 0 }, { 0 } };
	for (int64_t j = 0; j < ld; j += VL)
		for (int h = 0; h < 2; h++) {
			Half v;
			memcpy(&v, s + j + h * (VL / 2), sizeof(v));
			m[h] = HALF_PICK(v > m[h], v, m[h]);
			n[h] |= v != v;
		}
	VEC_OF_HALVES(*vm, m[0], m[1]);
	VEC_OF_HALVES(*nan, n[0], n[1]);
}

static inline __attribute__((always_inline)) void
row_exp(float *s, int64_t ld, float mx, Vec *acc, const bool half)
{
	if (!half) {
		for (int64_t j = 0; j < ld; j += VL) {
			Vec p;
			VLOAD(p, s + j);
			vexp_from(&p, mx);
			*acc += p;
			VSTORE(s + j, p);
		}
		return;
	}
	Half a[2] = { { 0 }, { 0 } };
	for (int64_t j = 0; j < ld; j += VL)
		for (int h = 0; h < 2; h++) {
			Half p;
			memcpy(&p, s + j + h * (VL / 2), sizeof(p));
			vexp_half(&p, mx);
			a[h] += p;
			memcpy(s + j + h * (VL / 2), &p, sizeof(p));
		}
	VEC_OF_HALVES(*acc, a[0], a[1]);
}

/* Row s[0..skv) of query i: the scores scaled, causally masked, plus
 * the mask row m (stride ms; NULL: none), lanes up to ld -inf; then
 * their exp from the max in place.  Returns 1 / their sum, or NaN for a
 * row holding a NaN or whose max is infinite (its weights then 0). */
static inline __attribute__((always_inline)) float
softmax_row(const SdpaGeom *g, float *s, int64_t ld, int64_t i,
	    const float *m, int64_t ms, const bool half)
{
	int64_t skv = g->skv, lim = skv;
	float scale = g->scale;
	if (g->causal) {
		lim = i + 1 + (g->causal == SDPA_CAUSAL_LOWER_RIGHT
				       ? skv - g->sq
				       : 0);
		lim = lim < 0 ? 0 : lim > skv ? skv : lim;
	}
	for (int64_t j = 0; j < lim; j++)
		s[j] *= scale;
	for (int64_t j = lim; j < skv; j++)
		s[j] = g->fill;
	if (m && ms == 1)
		for (int64_t j = 0; j < skv; j++)
			s[j] += m[j];
	else if (m)
		for (int64_t j = 0; j < skv; j++)
			s[j] += m[j * ms];
	for (int64_t j = skv; j < ld; j++)
		s[j] = -INFINITY;
	Vec vm = (Vec){ 0 } - INFINITY;
	IVec nan = { 0 };
	row_max(s, ld, &vm, &nan, half);
	float mx = vec_max(&vm);
	bool bad = isinf(mx) || ivec_any(&nan);
	if (bad) {
		memset(s, 0, (size_t)ld * sizeof(float));
		return NAN;
	}
	Vec acc = { 0 };
	row_exp(s, ld, mx, &acc, half);
	return 1.0f / vec_sum(&acc);
}

/* ---- a task -------------------------------------------------------------- */

/* Tile t (queries from t * qt) of block b: K packed in w already; R
 * rows a step of the products. */
static inline __attribute__((always_inline)) void
tile(const Attn *k, const float *const *in, float *y, int64_t b, int64_t t,
     float *w, const int R, const int C, const bool half)
{
	const SdpaGeom *g = &k->g;
	int32_t r = g->rank;
	const int64_t *qs = g->st[SDPA_Q], *vs = g->st[SDPA_V];
	const int64_t *ms = g->st[SDPA_M], *ys = g->st[SDPA_Y];
	int64_t i0 = t * k->qt, m = g->sq - i0 < k->qt ? g->sq - i0 : k->qt;
	const float *q = in[SDPA_Q] + sdpa_block_offset(g, SDPA_Q, b);
	const float *v = in[SDPA_V] + sdpa_block_offset(g, SDPA_V, b);
	const float *mk = in[SDPA_M] ? in[SDPA_M] +
					       sdpa_block_offset(g, SDPA_M, b)
				     : NULL;
	float *yb = y + sdpa_block_offset(g, SDPA_Y, b);
	float *kt = w + k->kt, *qp = w + k->q, *sc = w + k->sc;
	float *o = w + k->o, *inv = w + k->inv;
	/* Q's rows as they are where contiguous, else packed */
	const float *qa = q + i0 * qs[r - 2];
	int64_t lda = qs[r - 2];
	if (qs[r - 1] != 1) {
		pack_rows(qa, qs[r - 2], qs[r - 1], m, g->d, qp, g->d);
		qa = qp, lda = g->d;
	}
	product(qa, lda, m, g->d, kt, k->ld, k->ld, sc, k->ld, R, C, half);
	for (int64_t i = 0; i < m; i++)
		inv[i] = softmax_row(g, sc + i * k->ld, k->ld, i0 + i,
				     mk ? mk + (i0 + i) * ms[r - 2] : NULL,
				     ms[r - 1], half);
	const float *vr = k->pack_v ? w + k->v : v;
	int64_t ldv = k->pack_v ? k->ldo : vs[r - 2];
	product(sc, k->ld, m, g->skv, vr, ldv, k->ldo, o, k->ldo, R, C,
		half);
	for (int64_t i = 0; i < m; i++) {
		float *yr = yb + (i0 + i) * ys[r - 2];
		const float *orow = o + i * k->ldo;
		if (ys[r - 1] == 1)
			for (int64_t c = 0; c < g->dv; c++)
				yr[c] = orow[c] * inv[i];
		else
			for (int64_t c = 0; c < g->dv; c++)
				yr[c * ys[r - 1]] = orow[c] * inv[i];
	}
}

/* Task i of k: tiles [t0, t0 + k->per_task) of a block, K (and V, if it
 * is packed) packed once for them. */
static inline __attribute__((always_inline)) void
task(const Attn *k, const float *const *in, float *y, int64_t i, float *w,
     const int R, const int C, const bool half)
{
	const SdpaGeom *g = &k->g;
	int32_t r = g->rank;
	int64_t per_block = k->tiles / k->per_task;
	int64_t b = i / per_block, t0 = i % per_block * k->per_task;
	const int64_t *ks = g->st[SDPA_K], *vs = g->st[SDPA_V];
	const float *kk = in[SDPA_K] + sdpa_block_offset(g, SDPA_K, b);
	pack_kt(kk, ks[r - 2], ks[r - 1], g->skv, g->d, w + k->kt, k->ld,
		half);
	if (k->pack_v)
		pack_rows(in[SDPA_V] + sdpa_block_offset(g, SDPA_V, b),
			  vs[r - 2], vs[r - 1], g->skv, g->dv, w + k->v,
			  k->ldo);
	for (int64_t t = t0; t < t0 + k->per_task; t++)
		tile(k, in, y, b, t, w, R, C, half);
}

/* The variants of a task, chosen when matched by what compiler/cpu.h
 * says the CPU has (within the ISA cap): AVX-512 with 6 rows of 4
 * vectors a step (24 of its 32 registers), AVX2 with mm_avx2's 6 rows
 * of 2 vectors of 8 floats (the softmax in halves of 16-float vectors:
 * half), and plain C, whose
 * vectors the compiler splits for the base ISA, a row of 2 at a time. */
#ifdef ATTN_X86
RT_AVX512 static void task_avx512(const Attn *k, const float *const *in,
				  float *y, int64_t i, float *w)
{
	task(k, in, y, i, w, 6, 4, false);
}

ATTN_AVX2 static void task_avx2(const Attn *k, const float *const *in,
				float *y, int64_t i, float *w)
{
	task(k, in, y, i, w, 6, 2, true); /* mm_avx2's */
}
#endif

static void task_plain(const Attn *k, const float *const *in, float *y,
		       int64_t i, float *w)
{
	task(k, in, y, i, w, 1, 2, false);
}

static int attn_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const Attn *k = state;
	const float *x[SDPA_TENSORS - 1] = { in[0]->data, in[1]->data,
					     in[2]->data,
					     k->g.mask ? in[3]->data : NULL };
	float *y = tensor_mut(out[0]), *work = k->s->work;
	int64_t tasks = k->g.nblocks * (k->tiles / k->per_task);
	int nt = k->threads;
	RT_PARALLEL_FOR
	for (int64_t i = 0; i < tasks; i++)
		k->task(k, x, y, i, work + (size_t)rt_thread() * k->per_thread);
	return 0;
}

/* ---- matching ------------------------------------------------------------- */

static bool static_f32(const Value *v)
{
	return v && v->dtype == DT_FLOAT && v->tkind == TK_TENSOR &&
	       shape_is_static(&v->shape);
}

/* Lays out a thread's scratch (in floats, each part whole vectors). */
static void layout(Attn *k)
{
	const SdpaGeom *g = &k->g;
	size_t at = 0;
	size_t d = (size_t)round_up(g->d > 0 ? g->d : 1, VL);
	k->kt = at, at += d * (size_t)k->ld;
	k->q = at, at += (size_t)k->qt * d;
	k->sc = at, at += (size_t)(k->qt * k->ld);
	k->o = at, at += (size_t)(k->qt * k->ldo);
	k->v = at, at += k->pack_v ? (size_t)(g->skv * k->ldo) : 0;
	k->inv = at, at += (size_t)round_up(k->qt, VL);
	k->per_thread = at;
}

int attn_sdpa(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	const Node *n = t->n;
	for (int32_t i = 0; i < n->ninputs; i++)
		if (i < 3 && !static_f32(rt_in_val(p, n, i)))
			return 0;
	const Value *m = rt_in_val(p, n, 3);
	if ((m && !static_f32(m)) || n->ninputs > 4 ||
	    !static_f32(&p->g->vals[n->outputs[0]]))
		return 0;
	OpCtx c = { .model = s->model->m, .g = p->g, .n = (Node *)n,
		    .opset = model_opset(s->model->m),
		    .fold_limit = INT64_MAX };
	Attn *k = xmalloc(sizeof(*k));
	memset(k, 0, sizeof(*k));
	if (sdpa_geom(&c, &k->g) < 0 || k->g.nblocks <= 0 || k->g.sq <= 0 ||
	    k->g.skv <= 0 || k->g.dv <= 0) {
		clear_error();
		free(k);
		return 0;
	}
	const SdpaGeom *g = &k->g;
	k->s = s;
	k->ld = round_up(g->skv, VL);
	k->ldo = round_up(g->dv, VL);
	k->pack_v = g->st[SDPA_V][g->rank - 1] != 1 || g->dv % VL;
	double flops = 2.0 * (double)g->nblocks * (double)g->sq *
		       (double)g->skv * (double)(g->d + g->dv);
	k->threads = rt_threads_for(s, flops);
	/* tiles of QT queries, fewer where the scores of a tile would
	 * outgrow 128 KiB; on several threads, tiles enough for two tasks
	 * a thread when the blocks are fewer (each tile packs K itself) */
	int64_t qt = (32768 / k->ld) / ROWS * ROWS;
	qt = qt < ROWS ? ROWS : qt > QT ? QT : qt;
	if (k->threads > 1 && g->nblocks < 2 * k->threads) {
		int64_t want = round_up((g->sq + 2 * k->threads - 1) /
						(2 * k->threads),
					ROWS);
		qt = want < qt ? want : qt;
	}
	k->qt = qt < g->sq ? qt : g->sq;
	k->tiles = (g->sq + k->qt - 1) / k->qt;
	k->per_task = k->threads > 1 && g->nblocks < 2 * k->threads ? 1
								   : k->tiles;
	layout(k);
	size_t threads = (size_t)(k->threads > 1 ? k->threads : 1);
	if (!rt_work_reserve(s, threads * k->per_thread * sizeof(float))) {
		free(k);
		return error("node '%s' (Sdpa): out of memory for its "
			     "temporaries", n->name);
	}
	CpuLevel isa = cpu_isa();
	k->task = task_plain;
#ifdef ATTN_X86
	if (isa >= CPU_LEVEL_AVX512)
		k->task = task_avx512;
	else if (isa >= CPU_LEVEL_AVX2)
		k->task = task_avx2;
#endif
	fk->variant = cpu_isa_name(isa);
	fk->run = attn_run;
	fk->free = free;
	fk->state = k;
	fk->threads = k->threads;
	return 1;
}
