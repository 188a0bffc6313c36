/*
 * compiler/ops/image.c - Yuv420sp's hooks (its contract and its loop:
 * compiler/ops/image.h).
 */
#include <stdio.h>
#include <string.h>

#include "image.h"
#include "opimpl.h"

/* An INTS attribute of exactly n values in [lo, hi] into v (absent:
 * *given false, v untouched). */
static const char *ints_attr(const Node *nd, const char *name, int32_t n,
			     int64_t lo, int64_t hi, int32_t *v, bool *given,
			     char *buf, size_t nbuf)
{
	const int64_t *a;
	int32_t k = attr_ints(nd, name, &a);
	*given = k >= 0;
	if (k < 0)
		return NULL;
	if (k != n) {
		snprintf(buf, nbuf, "%s has %d values, expected %d", name, k, n);
		return buf;
	}
	for (int32_t i = 0; i < n; i++) {
		if (a[i] < lo || a[i] > hi) {
			snprintf(buf, nbuf, "%s[%d] is %lld, expected %lld to "
				 "%lld", name, i, (long long)a[i],
				 (long long)lo, (long long)hi);
			return buf;
		}
		v[i] = (int32_t)a[i];
	}
	return NULL;
}

int yuv420sp_params(const Node *nd, const Shape *x, Yuv420sp *p,
		    char *buf, size_t nbuf, const char **why)
{
	memset(p, 0, sizeof(*p));
	*why = NULL;
	if (x->rank >= 0 && x->rank != 3) {
		snprintf(buf, nbuf, "the frame has rank %d, expected 3 "
			 "([N, H*3/2, W])", x->rank);
		*why = buf;
		return -1;
	}
	int64_t rows = x->rank == 3 ? x->dims[1] : -1;
	p->n = x->rank == 3 ? x->dims[0] : -1;
	p->w = x->rank == 3 ? x->dims[2] : -1;
	p->h = rows >= 0 ? rows / 3 * 2 : -1;
	if (rows >= 0 && (rows % 3 || p->h % 2)) {
		snprintf(buf, nbuf, "the frame has %lld rows, expected H*3/2 "
			 "for an even H", (long long)rows);
		*why = buf;
		return -1;
	}
	if (p->w >= 0 && p->w % 2) {
		snprintf(buf, nbuf, "the frame is %lld wide, expected an even "
			 "width", (long long)p->w);
		*why = buf;
		return -1;
	}
	int64_t vu = attr_int(nd, "vu", 0);
	if (vu != 0 && vu != 1) {
		*why = "vu is neither 0 nor 1";
		return -1;
	}
	p->vu = vu == 1;
	int32_t m[9], crop[4];
	bool given;
	if ((*why = ints_attr(nd, "matrix", 9, -32768, 32767, m, &p->csc, buf,
			      nbuf)) ||
	    (*why = ints_attr(nd, "input_bias", 3, 0, 255, p->ib, &given, buf,
			      nbuf)) ||
	    (*why = ints_attr(nd, "output_bias", 3, 0, 255, p->ob, &given,
			      buf, nbuf)) ||
	    (*why = ints_attr(nd, "crop", 4, 0, INT32_MAX, crop, &given, buf,
			      nbuf)))
		return -1;
	for (int r = 0; r < 3; r++)
		for (int k = 0; k < 3; k++)
			p->m[r][k] = p->csc ? m[r * 3 + k] : 0;
	if (!given) {
		p->oh = p->h;
		p->ow = p->w;
		return 0;
	}
	p->y0 = crop[0], p->x0 = crop[1], p->oh = crop[2], p->ow = crop[3];
	if (p->y0 % 2 || p->x0 % 2) {
		*why = "the crop starts at an odd row or column";
		return -1;
	}
	if (!p->oh || !p->ow) {
		*why = "the crop is empty";
		return -1;
	}
	if ((p->h >= 0 && p->y0 + p->oh > p->h) ||
	    (p->w >= 0 && p->x0 + p->ow > p->w)) {
		snprintf(buf, nbuf, "the crop (%lld,%lld)+%lldx%lld does not "
			 "fit the %lldx%lld image", (long long)p->y0,
			 (long long)p->x0, (long long)p->oh, (long long)p->ow,
			 (long long)p->h, (long long)p->w);
		*why = buf;
		return -1;
	}
	return 0;
}

/* [N, H*3/2, W] uint8 -> [N, 3, h, w] float. */
int infer_yuv420sp(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	if (!x || op_check_dtype(c, 0, DTS(DT_UINT8)) < 0)
		return -1;
	Yuv420sp p;
	char buf[160];
	const char *why;
	if (yuv420sp_params(c->n, &x->shape, &p, buf, sizeof(buf), &why) < 0)
		return op_error(c, "%s", why);
	Shape y = { 4, { p.n, 3, p.oh, p.ow } };
	op_set_out(c, 0, DT_FLOAT, &y);
	return 0;
}

int run_yuv420sp(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	if (!x)
		return 0;
	Yuv420sp p;
	char buf[160];
	const char *why;
	if (yuv420sp_params(c->n, &x->shape, &p, buf, sizeof(buf), &why) < 0)
		return op_error(c, "%s", why);
	Shape ys = { 4, { p.n, 3, p.oh, p.ow } };
	Tensor *y = op_new_output(c, 0, DT_FLOAT, &ys);
	if (!y)
		return -1;
	const uint8_t *xd = x->data;
	float *yd = tensor_mut(y);
	for (int64_t t = 0; t < yuv420sp_pairs(&p); t++)
		yuv420sp_step(&p, xd, yd, t);
	op_set_const(c, 0, y);
	return 0;
}
