/*
 * compiler/ops/detect.c - the NonMaxSuppression kernel (its infer hook is
 * in misc.c and calls nms_select() to learn the row count when every
 * input is constant, so the kernel and the inferred shape agree).
 *
 * Per batch and class: the boxes whose score is above score_threshold
 * (all of them without one), by score, highest first (ties: lower box
 * index first); each is kept unless its IOU with a box already kept for
 * that class is above iou_threshold; at most max_output_boxes_per_class
 * are kept (0 or absent: none).  A row [batch, class, box] per kept box,
 * in batch, class, then selection order, as ONNX Runtime does.  Boxes
 * are [y1, x1, y2, x2] with the corners in either order, or with
 * center_point_box [x_center, y_center, width, height]; IOU is computed
 * in float32, and a box of zero area overlaps nothing.
 */
#include <string.h>

#include "opimpl.h"

/* One box as min/max corners. */
typedef struct Box {
	float y0, x0, y1, x1;
} Box;

static Box box_at(const float *b, bool center)
{
	Box r;
	if (center) {
		float xc = b[0], yc = b[1], w = b[2] / 2, h = b[3] / 2;
		r = (Box){ yc - h, xc - w, yc + h, xc + w };
	} else {
		r.y0 = b[0] < b[2] ? b[0] : b[2];
		r.y1 = b[0] < b[2] ? b[2] : b[0];
		r.x0 = b[1] < b[3] ? b[1] : b[3];
		r.x1 = b[1] < b[3] ? b[3] : b[1];
	}
	return r;
}

static float fmaxf_(float a, float b) { return a > b ? a : b; }
static float fminf_(float a, float b) { return a < b ? a : b; }

/* True if a and b overlap by an IOU above th. */
static bool suppresses(const Box *a, const Box *b, float th)
{
	float ix0 = fmaxf_(a->x0, b->x0), ix1 = fminf_(a->x1, b->x1);
	float iy0 = fmaxf_(a->y0, b->y0), iy1 = fminf_(a->y1, b->y1);
	if (ix1 <= ix0 || iy1 <= iy0)
		return false;
	float inter = (ix1 - ix0) * (iy1 - iy0);
	float aa = (a->x1 - a->x0) * (a->y1 - a->y0);
	float ab = (b->x1 - b->x0) * (b->y1 - b->y0);
	if (aa <= 0 || ab <= 0)
		return false;
	float uni = aa + ab - inter;
	return uni > 0 && inter / uni > th;
}

/* Sorts idx[0..n) by score descending, index ascending (a stable
 * bottom-up merge sort through tmp). */
static void sort_by_score(int64_t *idx, int64_t *tmp, int64_t n,
			  const float *sc)
{
	for (int64_t w = 1; w < n; w *= 2) {
		for (int64_t lo = 0; lo < n; lo += 2 * w) {
			int64_t mid = lo + w < n ? lo + w : n;
			int64_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			int64_t i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				tmp[k++] = sc[idx[j]] > sc[idx[i]] ? idx[j++]
								   : idx[i++];
			while (i < mid)
				tmp[k++] = idx[i++];
			while (j < hi)
				tmp[k++] = idx[j++];
		}
		memcpy(idx, tmp, (size_t)n * sizeof(int64_t));
	}
}

/* The optional scalar input i as a float (def if absent). */
static float opt_float(const Tensor *t, float def)
{
	return t ? (float)tensor_get_f64(t, 0) : def;
}

int nms_select(OpCtx *c, int64_t *rows, int64_t cap, int64_t *count)
{
	const Tensor *bt = op_const_in(c, 0), *st = op_const_in(c, 1);
	const Tensor *mt = op_const_in(c, 2);
	for (int i = 0; i < 5; i++)
		if (op_in(c, i) && !op_const_in(c, i))
			return 0;
	if (!bt || !st || bt->dtype != DT_FLOAT || st->dtype != DT_FLOAT)
		return 0;
	int64_t nb = bt->shape.dims[0], n = bt->shape.dims[1];
	int64_t ncls = st->shape.dims[1];
	if (st->shape.dims[0] != nb || st->shape.dims[2] != n ||
	    bt->shape.dims[2] != 4)
		return op_error(c, "boxes and scores do not agree on the "
				"batch and box counts");
	int64_t maxout = mt ? tensor_get_i64(mt, 0) : 0;
	float iou = opt_float(op_const_in(c, 3), 0);
	const Tensor *tt = op_const_in(c, 4);
	float sth = opt_float(tt, 0);
	bool center = attr_int(c->n, "center_point_box", 0) != 0;
	if (maxout > n)
		maxout = n;
	int64_t *idx = op_scratch_zeroed(c, (size_t)(2 * n + 1) * sizeof(int64_t));
	Box *kept = op_scratch_zeroed(c, (size_t)(n + 1) * sizeof(Box));
	if (!idx || !kept)
		return -1;
	const float *bx = bt->data, *sc = st->data;
	*count = 0;
	for (int64_t b = 0; b < nb && maxout > 0; b++)
		for (int64_t k = 0; k < ncls; k++) {
			const float *s = sc + (b * ncls + k) * n;
			int64_t m = 0, nk = 0;
			for (int64_t i = 0; i < n; i++)
				if (!tt || s[i] > sth)
					idx[m++] = i;
			sort_by_score(idx, idx + n, m, s);
			for (int64_t i = 0; i < m && nk < maxout; i++) {
				Box cand = box_at(bx + (b * n + idx[i]) * 4,
						  center);
				bool drop = false;
				for (int64_t j = 0; j < nk && !drop; j++)
					drop = suppresses(&kept[j], &cand, iou);
				if (drop)
					continue;
				kept[nk++] = cand;
				if (rows && *count < cap) {
					int64_t *r = rows + *count * 3;
					r[0] = b, r[1] = k, r[2] = idx[i];
				}
				++*count;
			}
		}
	return 1;
}

int run_nms(OpCtx *c)
{
	const Value *yv = op_out(c, 0);
	int64_t count;
	if (!yv)
		return 0;
	int64_t want = shape_dim(&yv->shape, 0);
	if (want < 0)
		return 0;
	Tensor *y = op_new_output_zeroed(c, 0, DT_INT64, &yv->shape);
	if (!y)
		return -1;
	/* rows past the output's are counted, not written */
	int rc = nms_select(c, tensor_mut(y), want, &count);
	if (rc <= 0)
		return rc;
	if (count != want)
		return op_error(c, "selects %lld boxes, but the output has "
				"room for %lld", (long long)count,
				(long long)want);
	op_set_const(c, 0, y);
	return 0;
}
