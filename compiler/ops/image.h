/*
 * compiler/ops/image.h - Yuv420sp (domain ai.gearc), the camera frame of
 * atc's AIPP input_format YUV420SP_U8 as the model's float NCHW image
 * (compiler/preproc.h makes it; compiler/ops/image.c has its hooks).
 *
 *   Yuv420sp  X uint8 [N, H*3/2, W]  ->  Y float [N, 3, h, w]
 *
 * Each of X's N frames is one buffer as cameras and decoders deliver it:
 * H rows of W luma bytes, then H/2 rows of W bytes of interleaved chroma
 * at half resolution in both axes, U then V (NV12), or V then U with
 * "vu" = 1 (NV21).  H and W are even.  Attributes:
 *   vu           INT, 0 (default) or 1
 *   crop         INTS [y, x, h, w] of the image (y and x even, as atc
 *                requires for YUV420SP); absent: all of it
 *   matrix       INTS, 9, row-major (atc's matrix_r0c0 .. matrix_r2c2,
 *                each in int16); absent: no colour conversion
 *   input_bias   INTS, 3 (0 .. 255; default 0)
 *   output_bias  INTS, 3 (0 .. 255; default 0)
 * Pixel (i, j) of the crop reads luma Y = X[y + i][x + j] and the chroma
 * pair at row H + (y + i) / 2, columns (x + j) & ~1 and +1 (U, V in
 * order, swapped for NV21).  Without a matrix the output's channels are
 * Y, U, V as read; with one, channel r is atc's
 *   clip(((sum_k M[r][k] (in_k - input_bias_k)) >> 8) + output_bias_r,
 *        0, 255)
 * over in = (Y, U, V), ">> 8" an arithmetic shift (floor division by
 * 256).  Integer arithmetic throughout: every kernel gives the same
 * bytes, whatever the ISA or the threads.
 *
 * The loop is here, shared by the reference kernel (image.c) and the
 * runtime's (runtime/direct.c, which compiles it per ISA and spreads the
 * row pairs over threads): yuv420sp_pair computes the two output rows
 * that read one chroma row, 64 pixels at a time, the chroma terms once
 * for both rows in a block on the stack, then each row in a loop of
 * contiguous loads and stores that compilers vectorise.
 */
#ifndef GEARC_OPS_IMAGE_H
#define GEARC_OPS_IMAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler/ir.h"

typedef struct Yuv420sp {
	int64_t n, h, w;	/* frames, and their image's rows, columns */
	int64_t y0, x0, oh, ow; /* the crop */
	bool vu;		/* NV21 */
	bool csc;
	int32_t m[3][3], ib[3], ob[3];
} Yuv420sp;

/* The node's attributes and its input's shape (rank 3; dims may be -1)
 * into *p: 0, or -1 with why set to what is wrong (a static string or
 * one in buf).  With unknown dims, h, w (and oh, ow without a crop) are
 * -1. */
int yuv420sp_params(const Node *nd, const Shape *x, Yuv420sp *p,
		    char *buf, size_t nbuf, const char **why);

enum { YUV420SP_BLOCK = 64 };
/* Added to the sums so that they are never negative: |sum| <= 3 * 32768
 * * 255 < 2^25, so sum + 2^25 is in [0, 2^26) and its >> 8 is exact. */
#define YUV420SP_OFF (1 << 25)

/* Output rows 2j and 2j + 1 (if < oh) of one frame fr (H*3/2*W bytes)
 * into out (that frame's 3*oh*ow floats). */
static inline __attribute__((always_inline)) void
yuv420sp_pair(const Yuv420sp *p, const uint8_t *fr, float *out, int64_t j)
{
	const int64_t ow = p->ow, plane = p->oh * ow, r0 = 2 * j;
	const int nr = p->oh - r0 < 2 ? 1 : 2;
	const uint8_t *uv = fr + (p->h + p->y0 / 2 + j) * p->w + p->x0;
	const int su = p->vu ? 1 : 0, sv = 1 - su;
	const int32_t m00 = p->m[0][0], m01 = p->m[0][1], m02 = p->m[0][2],
		      m10 = p->m[1][0], m11 = p->m[1][1], m12 = p->m[1][2],
		      m20 = p->m[2][0], m21 = p->m[2][1], m22 = p->m[2][2];
	const int32_t ib0 = p->ib[0], ib1 = p->ib[1], ib2 = p->ib[2];
	const int32_t ob0 = p->ob[0] - (YUV420SP_OFF >> 8),
		      ob1 = p->ob[1] - (YUV420SP_OFF >> 8),
		      ob2 = p->ob[2] - (YUV420SP_OFF >> 8);
	/* per pixel of the block: the chroma's terms of each channel (or,
	 * without a matrix, U and V); a pair's two pixels share them */
	int32_t c0[YUV420SP_BLOCK], c1[YUV420SP_BLOCK], c2[YUV420SP_BLOCK];
	for (int64_t b = 0; b < ow; b += YUV420SP_BLOCK) {
		const int64_t nb = ow - b < YUV420SP_BLOCK ? ow - b
							   : YUV420SP_BLOCK;
		const int64_t np = (nb + 1) / 2; /* pairs; the last may be half */
		const uint8_t *q = uv + b;	 /* b even: whole pairs */
		if (p->csc) {
			for (int64_t k = 0; k < np; k++) {
				int32_t u = (int32_t)q[2 * k + su] - ib1,
					v = (int32_t)q[2 * k + sv] - ib2;
				int32_t t0 = m01 * u + m02 * v + YUV420SP_OFF,
					t1 = m11 * u + m12 * v + YUV420SP_OFF,
					t2 = m21 * u + m22 * v + YUV420SP_OFF;
				c0[2 * k] = c0[2 * k + 1] = t0;
				c1[2 * k] = c1[2 * k + 1] = t1;
				c2[2 * k] = c2[2 * k + 1] = t2;
			}
		} else {
			for (int64_t k = 0; k < np; k++) {
				c1[2 * k] = c1[2 * k + 1] = q[2 * k + su];
				c2[2 * k] = c2[2 * k + 1] = q[2 * k + sv];
			}
		}
		for (int r = 0; r < nr; r++) {
			const uint8_t *restrict yr =
				fr + (p->y0 + r0 + r) * p->w + p->x0 + b;
			float *restrict o0 = out + (r0 + r) * ow + b;
			float *restrict o1 = o0 + plane;
			float *restrict o2 = o1 + plane;
			if (!p->csc) {
				for (int64_t i = 0; i < nb; i++) {
					o0[i] = (float)yr[i];
					o1[i] = (float)c1[i];
					o2[i] = (float)c2[i];
				}
				continue;
			}
			for (int64_t i = 0; i < nb; i++) {
				int32_t l = (int32_t)yr[i] - ib0;
				int32_t a0 = ((m00 * l + c0[i]) >> 8) + ob0,
					a1 = ((m10 * l + c1[i]) >> 8) + ob1,
					a2 = ((m20 * l + c2[i]) >> 8) + ob2;
				a0 = a0 < 0 ? 0 : a0 > 255 ? 255 : a0;
				a1 = a1 < 0 ? 0 : a1 > 255 ? 255 : a1;
				a2 = a2 < 0 ? 0 : a2 > 255 ? 255 : a2;
				o0[i] = (float)a0;
				o1[i] = (float)a1;
				o2[i] = (float)a2;
			}
		}
	}
}

/* The row pairs of all frames: iteration t of 0 .. yuv420sp_pairs(p) is
 * frame t / per, pair t % per (per = (oh + 1) / 2); each writes rows of
 * its own. */
static inline int64_t yuv420sp_pairs(const Yuv420sp *p)
{
	return p->n * ((p->oh + 1) / 2);
}

static inline __attribute__((always_inline)) void
yuv420sp_step(const Yuv420sp *p, const uint8_t *x, float *y, int64_t t)
{
	int64_t per = (p->oh + 1) / 2, f = t / per;
	yuv420sp_pair(p, x + f * (p->h * 3 / 2) * p->w,
		      y + f * 3 * p->oh * p->ow, t % per);
}

#endif
