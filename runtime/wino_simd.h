/*
 * runtime/wino_simd.h - the Winograd convolution's work (wino.c),
 * written once over runtime/simd.h's vectors and included by wino.c once
 * per ISA level: SF(wino_item), a work item, and SF(rows_to_nhwc), X put
 * in NHWC.  A vector holds VL channels of one transformed value; V and
 * M keep their rows padded to 16 channels whatever the level.
 */
#include "simd.h"

/* r = B^T a, for a and r strided by s vectors. */
SIMD_FN void SF(bt6)(const V *a, int sa, V *r, int sr)
{
	V a0 = a[0], a1 = a[sa], a2 = a[2 * sa], a3 = a[3 * sa],
	  a4 = a[4 * sa], a5 = a[5 * sa];
	r[0] = 4 * a0 - 5 * a2 + a4;
	r[sr] = a3 + a4 - 4 * (a1 + a2);
	r[2 * sr] = a4 - a3 + 4 * (a1 - a2);
	r[3 * sr] = a4 - a2 + 2 * (a3 - a1);
	r[4 * sr] = a4 - a2 + 2 * (a1 - a3);
	r[5 * sr] = a5 + 4 * a1 - 5 * a3;
}

/* r = A^T a (4 of 6), strided likewise. */
SIMD_FN void SF(at6)(const V *a, int sa, V *r, int sr)
{
	V p = a[sa] + a[2 * sa], m = a[sa] - a[2 * sa];
	V q = a[3 * sa] + a[4 * sa], n = a[3 * sa] - a[4 * sa];
	r[0] = a[0] + p + q;
	r[sr] = m + 2 * n;
	r[2 * sr] = p + 4 * q;
	r[3 * sr] = m + 8 * n + a[5 * sa];
}

/* r = B^T d for the 6x6 inputs d at x (NHWC), rs floats between rows
 * and cs between columns, of which those at bits e of ry and f of rx
 * (all: an inner tile) are loaded, lanes channels of each, the rest 0:
 * a column at a time, from X straight into its transform (through an
 * array of all 36 they went by the stack: wino_in took 8.6% of
 * fp16_cnn's run, now 6.6-7.3%). */
SIMD_FN void SF(wino_cols)(const float *x, int64_t rs, int64_t cs,
			   unsigned ry, unsigned rx, int64_t lanes, V r[WE])
{
	for (int f = 0; f < WA; f++) {
		V a[WA];
		for (int e = 0; e < WA; e++) {
			a[e] = (V){ 0 };
			if (ry >> e & rx >> f & 1)
				a[e] = lanes == SIMD_VL
					       ? SF(vload)(x + e * rs + f * cs)
					       : SF(vload_n)(x + e * rs + f * cs,
							     lanes);
		}
		SF(bt6)(a, 1, r + f, WA);
	}
}

/* V [e][c..c+VL) of the tile at input (iy, ix) of image x (NHWC, at
 * the group's first channel): true, or false if a value of V is NaN or
 * above k->vmax in magnitude (an input not finite, or so large that a
 * sum of products would overflow where the window's does not). */
SIMD_TARGET RT_OPT_FAST static bool SF(wino_in)(const Wino *k, const float *x,
						int64_t iy, int64_t ix,
						int64_t c, float *v)
{
	const ConvGeom *g = &k->g;
	int64_t h = g->in[0], w = g->in[1];
	int64_t dy = g->dilation[0], dx = g->dilation[1];
	unsigned ry = inside(iy, dy, h), rx = inside(ix, dx, w);
	int64_t lanes = k->cg - c < SIMD_VL ? k->cg - c : SIMD_VL;
	/* the address of an input outside X is never loaded */
	int64_t first = ((iy * w + ix) * g->cin + c) * (int64_t)sizeof(float);
	const float *at = (const float *)((uintptr_t)x + (uintptr_t)first);
	V r[WE];
	if (ry == 63 && rx == 63)
		SF(wino_cols)(at, dy * w * g->cin, dx * g->cin, 63, 63, lanes,
			      r);
	else
		SF(wino_cols)(at, dy * w * g->cin, dx * g->cin, ry, rx, lanes,
			      r);
	VI bad = { 0 };
	for (int e = 0; e < WA; e++) {
		V o[WA];
		SF(bt6)(r + e * WA, 1, o, 1);
		for (int f = 0; f < WA; f++) {
			SF(vstore)(v + (e * WA + f) * k->cgp + c, o[f]);
			bad |= SF(vnot_within)(o[f], k->vmax);
		}
	}
	for (int64_t l = 0; l < lanes; l++)
		if (bad[l])
			return false;
	return true;
}

/* k's activations [j0, j1) over a row of a tile's outputs, in place. */
SIMD_FN void SF(wino_acts)(const Wino *k, V row[WM], int j0, int j1)
{
	if (j1 == j0 + 1 && k->acts->act[j0].kind == ACT_Relu) {
		/* the CNNs' one activation, in registers */
		for (int f = 0; f < WM; f++)
			row[f] = SF(vrelu)(row[f]);
	} else if (j1 > j0) {
		float buf[WM * SIMD_VL] __attribute__((aligned(64)));
		memcpy(buf, row, sizeof(buf));
		for (int j = j0; j < j1; j++)
			act_loop_f32(k->acts->act[j].kind, buf, buf,
				     WM * SIMD_VL, k->acts->act[j].a,
				     k->acts->act[j].b);
		memcpy(row, buf, sizeof(buf));
	}
}

/* Y's 4x4 outputs of tile (oy, ox), channels o..o+VL of the group at
 * y (its first channel), from M [e][o..): a row at a time from the
 * columns' transforms, so that the outputs stay in registers; z, Z at
 * Y's offset, or NULL.  Z is read where Y is written, row by row, so Y
 * may be Z's buffer. */
SIMD_TARGET RT_OPT_FAST static void SF(wino_out)(const Wino *k, const float *mt,
						 int64_t o, const float *z,
						 float *y, const float *bias,
						 int64_t oy, int64_t ox)
{
	const ConvGeom *g = &k->g;
	int64_t oh = g->out[0], ow = g->out[1];
	int64_t dy = g->dilation[0], dx = g->dilation[1];
	V r[WA * WM];
	for (int f = 0; f < WA; f++) {
		V a[WA];
		for (int e = 0; e < WA; e++)
			a[e] = SF(vload)(mt + (e * WA + f) * k->ogp + o);
		SF(at6)(a, 1, r + f, WA);
	}
	int64_t lanes = k->og - o < SIMD_VL ? k->og - o : SIMD_VL;
	V b = bias ? SF(vload_n)(bias + o, lanes) : (V){ 0 };
	int nf = ox + 3 * dx < ow ? WM : (int)((ow - ox + dx - 1) / dx);
	for (int e = 0; e < WM && oy + e * dy < oh; e++) {
		V row[WM];
		SF(at6)(r + e * WA, 1, row, 1);
		for (int f = 0; f < WM; f++)
			row[f] += b;
		int64_t at = k->ynhwc ? ((oy + e * dy) * ow + ox) * g->cout + o
				      : o * oh * ow + (oy + e * dy) * ow + ox;
		int64_t fs = k->ynhwc ? dx * g->cout : dx; /* f's stride */
		if (z) {
			SF(wino_acts)(k, row, 0, k->za);
			for (int f = 0; f < nf; f++) {
				if (k->ynhwc) {
					row[f] += SF(vload_n)(z + at + f * fs,
							      lanes);
					continue;
				}
				for (int64_t l = 0; l < lanes; l++)
					row[f][l] += z[at + l * oh * ow +
						       f * fs];
			}
			SF(wino_acts)(k, row, k->za, k->acts->n);
		} else {
			SF(wino_acts)(k, row, 0, k->acts->n);
		}
		if (k->ynhwc) {
			for (int f = 0; f < nf; f++)
				SF(vstore_n)(y + at + f * fs, row[f], lanes);
			continue;
		}
		for (int f = 0; f < nf; f++)
			for (int64_t l = 0; l < lanes; l++)
				y[at + l * oh * ow + f * fs] = row[f][l];
	}
}

/* Work item it, X NHWC: its tiles' inputs transformed (all input
 * channels), then its output channels' products and outputs. */
static void SF(wino_item)(const Wino *k, const float *x, const float *z,
			  float *y, const WinoItem *it, float *scratch)
{
	const ConvGeom *g = &k->g;
	int64_t hw = g->in[0] * g->in[1], ohw = g->out[0] * g->out[1];
	int64_t gi = it->gi, nt = it->nt, o0 = it->o0;
	const float *xi = x + it->i * g->cin * hw + gi * k->cg;
	int64_t yo = it->i * g->cout * ohw +
		     gi * k->og * (k->ynhwc ? 1 : ohw);
	float *yi = y + yo;
	const float *zi = z ? z + yo : NULL;
	float *v = scratch, *mt = scratch + WE * WTB * k->cgp;
	int64_t vs = WE * k->cgp, ms = WE * k->ogp;
	uint32_t direct = 0; /* tiles wino_direct computes (WTB <= 32) */
	for (int64_t t = 0; t < nt; t++) {
		int64_t ty = (it->t0 + t) / k->tw, tx = (it->t0 + t) % k->tw;
		int64_t iy = tile_origin(ty, g->dilation[0]) - g->pad[0];
		int64_t ix = tile_origin(tx, g->dilation[1]) - g->pad[1];
		for (int64_t c = 0; c < k->cg; c += SIMD_VL)
			if (!SF(wino_in)(k, xi, iy, ix, c, v + t * vs))
				direct |= 1u << t;
	}
	/* o0 is a whole panel's first column: its panel at o0 * cg */
	for (int e = 0; e < WE; e++)
		SF(chan_gemm)(nt, it->o1 - o0, k->cg, v + e * k->cgp, vs,
			      k->u + (gi * WE + e) * k->usz + o0 * k->cg,
			      k->nr, mt + e * k->ogp + o0, ms);
	const float *bias = k->b ? k->b + gi * k->og : NULL;
	for (int64_t t = 0; t < nt; t++) {
		int64_t ty = (it->t0 + t) / k->tw, tx = (it->t0 + t) % k->tw;
		int64_t oy = tile_origin(ty, g->dilation[0]);
		int64_t ox = tile_origin(tx, g->dilation[1]);
		if (direct >> t & 1)
			wino_direct(k, xi, zi, yi, it, oy, ox);
		else
			for (int64_t o = o0; o < it->o1; o += SIMD_VL)
				SF(wino_out)(k, mt + t * ms, o, zi, yi, bias,
					     oy, ox);
	}
}

#if SIMD_VL == 16 && RT_X86
/* r's 16 rows of 16 floats, transposed: four rounds of shuffles, which
 * pair rows 1, 2, 4 and 8 apart, interleaving floats, pairs of floats,
 * then 128-bit lanes twice. */
SIMD_FN void SF(transpose)(__m512 r[16])
{
	__m512 a[16], b[16], c[16];
	for (int i = 0; i < 16; i += 2) {
		a[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
		a[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
	}
	/* b[4i + j]: in each 128-bit lane L, column 4L + j of rows 4i.. */
	for (int i = 0; i < 16; i += 4)
		for (int j = 0; j < 2; j++) {
			__m512d lo = _mm512_castps_pd(a[i + j]),
				hi = _mm512_castps_pd(a[i + j + 2]);
			b[i + 2 * j] = _mm512_castpd_ps(
				_mm512_unpacklo_pd(lo, hi));
			b[i + 2 * j + 1] = _mm512_castpd_ps(
				_mm512_unpackhi_pd(lo, hi));
		}
	/* then the lanes of b[j], b[4 + j], b[8 + j], b[12 + j] gathered */
	for (int j = 0; j < 4; j++) {
		c[j] = _mm512_shuffle_f32x4(b[j], b[4 + j], 0x88);
		c[4 + j] = _mm512_shuffle_f32x4(b[j], b[4 + j], 0xdd);
		c[8 + j] = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0x88);
		c[12 + j] = _mm512_shuffle_f32x4(b[8 + j], b[12 + j], 0xdd);
	}
	for (int j = 0; j < 4; j++) {
		r[j] = _mm512_shuffle_f32x4(c[j], c[8 + j], 0x88);
		r[8 + j] = _mm512_shuffle_f32x4(c[j], c[8 + j], 0xdd);
		r[4 + j] = _mm512_shuffle_f32x4(c[4 + j], c[12 + j], 0x88);
		r[12 + j] = _mm512_shuffle_f32x4(c[4 + j], c[12 + j], 0xdd);
	}
}
#define WINO_TRANSPOSE 1
#elif SIMD_VL == 8 && RT_X86
/* runtime/simd_x86.h's 8 x 8 transpose */
SIMD_FN void SF(transpose)(__m256 r[8]) { simd_transpose8(r); }
#define WINO_TRANSPOSE 1
#else
#define WINO_TRANSPOSE 0
#endif

/* Pixels [p0, p0 + np) of row-major x [c][hw] into NHWC xt: VL channels
 * of VL pixels a transpose where the level has one (16 gathers of a
 * pixel's channels ran 1.5 times as long on AVX-512), else a channel's
 * row at a time. */
SIMD_TARGET RT_OPT_FAST static void SF(rows_to_nhwc)(const float *x, float *xt,
						     int64_t c, int64_t hw,
						     int64_t p0, int64_t np)
{
#if WINO_TRANSPOSE
	for (int64_t ch = 0; ch < c; ch += SIMD_VL) {
		int lanes = c - ch < SIMD_VL ? (int)(c - ch) : SIMD_VL;
		for (int64_t p = p0; p < p0 + np; p += SIMD_VL) {
			int n = p0 + np - p < SIMD_VL ? (int)(p0 + np - p)
						      : SIMD_VL;
			const float *at = x + ch * hw + p;
			V r[SIMD_VL];
			for (int l = 0; l < SIMD_VL; l++)
				r[l] = (V){ 0 };
			for (int l = 0; l < lanes; l++)
				r[l] = SF(vload_n)(at + l * hw, n);
#if SIMD_VL == 16
			SF(transpose)((__m512 *)r);
#else
			SF(transpose)((__m256 *)r);
#endif
			for (int j = 0; j < n; j++)
				SF(vstore_n)(xt + (p + j) * c + ch, r[j],
					     lanes);
		}
	}
#else
	for (int64_t ch = 0; ch < c; ch++)
		for (int64_t p = p0; p < p0 + np; p++)
			xt[p * c + ch] = x[ch * hw + p];
#endif
}
#undef WINO_TRANSPOSE
