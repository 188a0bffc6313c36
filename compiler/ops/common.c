/*
 * compiler/ops/common.c - helpers the op hooks share: required inputs,
 * dtype and rank checks, axes, checked dim arithmetic, broadcasting.
 * Every check returns 0, or -1 with an error naming the node (op_error).
 */
#include <stdio.h>
#include <string.h>

#include "opimpl.h"

Value *op_need_in(OpCtx *c, int i)
{
	Value *v = op_in(c, i);
	if (!v)
		op_error(c, "required input %d is missing", i);
	return v;
}

/* "float16, float32 or float64" into buf. */
static const char *dtype_set_str(uint32_t set, char *buf, size_t n)
{
	int count = 0, seen = 0;
	size_t k = 0;
	buf[0] = 0;
	for (int t = 1; t < DT_COUNT; t++)
		count += (set & DTS(t)) != 0;
	for (int t = 1; t < DT_COUNT && k < n; t++) {
		if (!(set & DTS(t)))
			continue;
		const char *sep = !seen ? "" : seen == count - 1 ? " or " : ", ";
		k += (size_t)snprintf(buf + k, n - k, "%s%s", sep, dtype_name(t));
		seen++;
	}
	return buf;
}

int op_check_dtype(OpCtx *c, int i, uint32_t allowed)
{
	Value *v = op_in(c, i);
	char list[256];
	if (!v || (dtype_valid(v->dtype) && (allowed & DTS(v->dtype))))
		return 0;
	return op_error(c, "input %d ('%s') has dtype %s, expected %s", i,
			v->name, dtype_name(v->dtype),
			dtype_set_str(allowed, list, sizeof(list)));
}

int op_check_same_dtype(OpCtx *c, int i, int j)
{
	Value *a = op_in(c, i), *b = op_in(c, j);
	if (!a || !b || a->dtype == b->dtype)
		return 0;
	return op_error(c, "input %d ('%s') has dtype %s, but input %d ('%s') "
			"has %s; expected the same",
			i, a->name, dtype_name(a->dtype), j, b->name,
			dtype_name(b->dtype));
}

int op_check_rank(OpCtx *c, int i, int32_t lo, int32_t hi)
{
	Value *v = op_in(c, i);
	char buf[64];
	int32_t r = v ? v->shape.rank : -1;
	if (r < 0 || (r >= lo && r <= hi))
		return 0;
	if (lo == hi)
		snprintf(buf, sizeof(buf), "%d", lo);
	else
		snprintf(buf, sizeof(buf), "%d to %d", lo, hi);
	return op_error(c, "input %d ('%s') has rank %d, expected %s", i,
			v->name, r, buf);
}

int op_check_scalar(OpCtx *c, int i)
{
	Value *v = op_in(c, i);
	char buf[128];
	if (!v || v->shape.rank < 0)
		return 0;
	for (int32_t k = 0; k < v->shape.rank; k++)
		if (v->shape.dims[k] != 1 && v->shape.dims[k] != DIM_UNKNOWN)
			return op_error(c, "input %d ('%s') has shape %s, "
					"expected a scalar",
					i, v->name,
					shape_str(&v->shape, buf, sizeof(buf)));
	return 0;
}

int op_axis(OpCtx *c, const char *what, int64_t axis, int32_t rank,
	    int32_t *out)
{
	if (axis < -(int64_t)rank || axis >= rank)
		return op_error(c, "%s %lld is out of range for rank %d "
				"(expected %d..%d)",
				what, (long long)axis, rank, -rank, rank - 1);
	*out = (int32_t)(axis < 0 ? axis + rank : axis);
	return 0;
}

int op_dim_mul(OpCtx *c, int64_t a, int64_t b, int64_t *r)
{
	if (a == 0 || b == 0) {
		*r = 0;
		return 0;
	}
	if (a < 0 || b < 0) {
		*r = DIM_UNKNOWN;
		return 0;
	}
	if (!mul_nonneg_i64(a, b, r))
		return op_error(c, "dims %lld x %lld overflow int64",
				(long long)a, (long long)b);
	return 0;
}

int op_dim_add(OpCtx *c, int64_t a, int64_t b, int64_t *r)
{
	if (a < 0 || b < 0) {
		*r = DIM_UNKNOWN;
		return 0;
	}
	if (!add_nonneg_i64(a, b, r))
		return op_error(c, "dims %lld + %lld overflow int64",
				(long long)a, (long long)b);
	return 0;
}

int op_dims_prod(OpCtx *c, const Shape *s, int32_t from, int32_t to,
		 int64_t *r)
{
	ASSERT(s->rank >= 0 && from >= 0 && to <= s->rank);
	*r = 1;
	for (int32_t i = from; i < to; i++)
		if (op_dim_mul(c, *r, s->dims[i], r) < 0)
			return -1;
	return 0;
}

/* One broadcast dim: equal dims, or 1 against anything; an unknown dim
 * against a known d != 1 must be d (or 1) to run, so the result is d. */
static bool broadcast_dim(int64_t a, int64_t b, int64_t *r)
{
	if (a == b || b == 1)
		*r = a;
	else if (a == 1)
		*r = b;
	else if (a == DIM_UNKNOWN)
		*r = b;
	else if (b == DIM_UNKNOWN)
		*r = a;
	else
		return false;
	return true;
}

int op_broadcast(OpCtx *c, const Shape *a, const Shape *b, Shape *out)
{
	char sa[128], sb[128];
	if (a->rank < 0 || b->rank < 0) {
		*out = shape_unknown();
		return 0;
	}
	int32_t r = a->rank > b->rank ? a->rank : b->rank;
	Shape o = { .rank = r };
	for (int32_t k = 0; k < r; k++) {
		int32_t ia = k - (r - a->rank), ib = k - (r - b->rank);
		int64_t da = ia >= 0 ? a->dims[ia] : 1;
		int64_t db = ib >= 0 ? b->dims[ib] : 1;
		if (!broadcast_dim(da, db, &o.dims[k]))
			return op_error(c, "shapes %s and %s cannot be "
					"broadcast: %lld vs %lld at axis %d of "
					"the result",
					shape_str(a, sa, sizeof(sa)),
					shape_str(b, sb, sizeof(sb)),
					(long long)da, (long long)db, k);
	}
	*out = o;
	return 0;
}

int op_broadcast_to(OpCtx *c, int i, const Shape *to)
{
	Value *v = op_in(c, i);
	char sa[128], sb[128];
	if (!v || v->shape.rank < 0 || to->rank < 0)
		return 0;
	const Shape *s = &v->shape;
	bool ok = s->rank <= to->rank;
	for (int32_t k = 0; ok && k < s->rank; k++) {
		int64_t d = s->dims[k], t = to->dims[to->rank - s->rank + k];
		ok = d == 1 || d == t || d == DIM_UNKNOWN || t == DIM_UNKNOWN;
	}
	if (ok)
		return 0;
	return op_error(c, "input %d ('%s') has shape %s, which does not "
			"broadcast to %s",
			i, v->name, shape_str(s, sa, sizeof(sa)),
			shape_str(to, sb, sizeof(sb)));
}

/* ---- folding helpers ---------------------------------------------------- */

Tensor *op_new_tensor(OpCtx *c, int dt, const Shape *s)
{
	Tensor *t = tensor_new(c->arena, NULL, dt, s, NULL);
	if (!t)
		op_error(c, "%s", last_error());
	else
		t->folded = true;
	return t;
}

void tensor_set_f64(Tensor *t, int64_t i, double v)
{
	void *p = tensor_mut(t);
	switch (t->dtype) {
	case DT_FLOAT: ((float *)p)[i] = (float)v; break;
	case DT_DOUBLE: ((double *)p)[i] = v; break;
	case DT_FLOAT16: ((uint16_t *)p)[i] = minifloat_from(v, 5, 10); break;
	case DT_BFLOAT16: ((uint16_t *)p)[i] = minifloat_from(v, 8, 7); break;
	case DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	default:
		/* out-of-range float to int is UB in C: saturate first */
		if (v != v)
			v = 0;
		if (v > 9.2e18)
			v = 9.2e18;
		if (v < -9.2e18)
			v = -9.2e18;
		tensor_set_i64(t, i, (int64_t)v);
	}
}

void tensor_set_i64(Tensor *t, int64_t i, int64_t v)
{
	void *p = tensor_mut(t);
	switch (t->dtype) {
	case DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	case DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case DT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
	case DT_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
	case DT_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
	case DT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
	case DT_INT64: ((int64_t *)p)[i] = v; break;
	case DT_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
	case DT_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
	case DT_FLOAT:
	case DT_DOUBLE:
	case DT_FLOAT16:
	case DT_BFLOAT16: tensor_set_f64(t, i, (double)v); break;
	default: BUG("tensor_set_i64 on %s", dtype_name(t->dtype));
	}
}

void *op_scratch(OpCtx *c, size_t bytes)
{
	if (bytes > (size_t)INT64_MAX / 2) {
		op_error(c, "needs %zu bytes of scratch memory", bytes);
		return NULL;
	}
	return arena_alloc_raw(c->arena, bytes ? bytes : 1);
}

void *op_scratch_zeroed(OpCtx *c, size_t bytes)
{
	void *p = op_scratch(c, bytes);
	if (p)
		memset(p, 0, bytes);
	return p;
}

bool op_all_const(OpCtx *c)
{
	for (int i = 0; i < c->n->ninputs; i++)
		if (op_in(c, i) && !op_const_in(c, i))
			return false;
	return true;
}

static bool is_int_dtype(int dt)
{
	return dt != DT_BOOL && (DTS_INT & DTS(dt));
}

int op_const_ints(OpCtx *c, int i, int64_t *v, int32_t *n, int32_t max)
{
	const Value *in = op_in(c, i);
	const Tensor *t = op_const_in(c, i);
	if (!t)
		return 0;
	if (!is_int_dtype(t->dtype))
		return op_error(c, "input %d ('%s') must be an integer tensor, "
				"not %s", i, in->name, dtype_name(t->dtype));
	int64_t numel = shape_numel(&t->shape);
	if (t->shape.rank > 1 || numel > max)
		return op_error(c, "input %d ('%s') must be a 1-D tensor of at "
				"most %d values", i, in->name, max);
	for (int64_t k = 0; k < numel; k++)
		v[k] = tensor_get_i64(t, k);
	*n = (int32_t)numel;
	return 1;
}
