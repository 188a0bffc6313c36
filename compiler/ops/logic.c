/*
 * compiler/ops/logic.c - logical, comparison and bitwise ops: And, Or,
 * Xor, Not, Equal, Greater, GreaterOrEqual, Less, LessOrEqual, BitShift,
 * IsNaN, IsInf, and Where.  They fold through the engine of
 * elementwise.c (ew_each and the EwNum kernels).
 */
#include <math.h>
#include <string.h>

#include "opimpl.h"

static EwNum num_i(int64_t i)
{
	EwNum r = { .kind = EW_I, .i = i };
	return r;
}

/* ---- binary -------------------------------------------------------------- */

int infer_logical(OpCtx *c)
{
	if (op_check_dtype(c, 0, DTS(DT_BOOL)) < 0 ||
	    op_check_dtype(c, 1, DTS(DT_BOOL)) < 0)
		return -1;
	return ew_infer_binary(c, DT_BOOL);
}

/* Equal also takes bool (and strings since opset 19, shape only). */
int infer_compare(OpCtx *c)
{
	uint32_t dts = DTS_NUMERIC;
	if (c->n->op == OP_Equal)
		dts |= DTS(DT_BOOL) | DTS(DT_STRING);
	if (op_check_dtype(c, 0, dts) < 0 || op_check_same_dtype(c, 1, 0) < 0)
		return -1;
	return ew_infer_binary(c, DT_BOOL);
}

int infer_bitshift(OpCtx *c)
{
	const char *dir = attr_str(c->n, "direction", "");
	if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
		return op_error(c, "attribute direction is '%s', expected LEFT "
				"or RIGHT", dir);
	if (op_check_dtype(c, 0, DTS_UINT) < 0 ||
	    op_check_same_dtype(c, 1, 0) < 0)
		return -1;
	return ew_infer_binary(c, 0);
}

/* a < b for two scalars of one kind (false if either is NaN). */
static bool lt(EwNum a, EwNum b)
{
	return a.kind == EW_F ? a.f < b.f : a.kind == EW_U ? a.u < b.u : a.i < b.i;
}

static bool eq(EwNum a, EwNum b)
{
	return a.kind == EW_F ? a.f == b.f : a.u == b.u;
}

static bool k_and(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	(void)p;
	*r = num_i(a.i && b.i);
	return true;
}

static bool k_or(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	(void)p;
	*r = num_i(a.i || b.i);
	return true;
}

static bool k_xor(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	(void)p;
	*r = num_i(!a.i != !b.i);
	return true;
}

static bool k_equal(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	(void)p;
	*r = num_i(eq(a, b));
	return true;
}

static bool k_greater(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	(void)p;
	*r = num_i(lt(b, a));
	return true;
}

static bool k_greater_equal(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	(void)p;
	*r = num_i(lt(b, a) || eq(a, b));
	return true;
}

static bool k_less(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	(void)p;
	*r = num_i(lt(a, b));
	return true;
}

static bool k_less_equal(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	(void)p;
	*r = num_i(lt(a, b) || eq(a, b));
	return true;
}

/* A shift by the dtype's width or more is undefined (C) or 0 (numpy):
 * not folded. */
static bool k_bitshift(EwNum a, EwNum b, EwNum *r, const EwParams *p)
{
	if (b.u >= dtype_size(p->dtype) * 8)
		return false;
	r->kind = a.kind;
	r->u = p->mode ? a.u << b.u : a.u >> b.u;
	return true;
}

/* The kernels of the binary logic ops, from the op table's ew column. */
static const EwBinFn logic2_ops[OP_COUNT] = {
#define EW_NONE NULL
#define EW_MATH(dts, f) NULL
#define EW_FLOAT(dts, f) NULL
#define EW_EXACT(dts, f) NULL
#define EW_ARITH(f) NULL
#define EW_LOGIC(f) f
#define X(nm, inf, run, vw, ip, sh, ew) [OP_##nm] = ew,
	GEARC_OPS(X)
#undef X
};

int run_logic2(OpCtx *c)
{
	const Value *a = op_in(c, 0);
	EwParams p = { .dtype = a ? a->dtype : 0,
		       .mode = !strcmp(attr_str(c->n, "direction", ""), "LEFT") };
	if (!a || a->dtype == DT_STRING)
		return 0;
	int rc = ew_fast_binary(c);
	if (rc)
		return rc < 0 ? -1 : 0;
	if (!logic2_ops[c->n->op])
		BUG("op %s has no logic kernel in the op table",
		    op_info[c->n->op].name);
	return ew_run_binary(c, logic2_ops[c->n->op], &p);
}

/* ---- unary --------------------------------------------------------------- */

int infer_not(OpCtx *c) { return ew_infer_unary(c, DTS(DT_BOOL), DT_BOOL); }

int infer_isnan(OpCtx *c) { return ew_infer_unary(c, DTS_FLOAT, DT_BOOL); }

/* IsInf takes float32/float64 (opset 10) and float16/bfloat16 (20). */
int infer_isinf(OpCtx *c) { return ew_infer_unary(c, DTS_FLOAT, DT_BOOL); }

static bool k_not(EwNum x, EwNum *r, const EwParams *p)
{
	(void)p;
	*r = num_i(!x.i);
	return true;
}

static bool k_isnan(EwNum x, EwNum *r, const EwParams *p)
{
	(void)p;
	*r = num_i(isnan(x.f) != 0);
	return true;
}

static bool k_isinf(EwNum x, EwNum *r, const EwParams *p)
{
	*r = num_i(isinf(x.f) && (x.f < 0 ? p->mode & 1 : p->mode & 2));
	return true;
}

int run_logic1(OpCtx *c)
{
	EwParams p = { .mode = (attr_int(c->n, "detect_negative", 1) != 0) |
			       (attr_int(c->n, "detect_positive", 1) != 0) << 1 };
	switch (c->n->op) {
	case OP_Not: return ew_run_unary(c, k_not, &p);
	case OP_IsNaN: return ew_run_unary(c, k_isnan, &p);
	case OP_IsInf: return ew_run_unary(c, k_isinf, &p);
	default: BUG("run_logic1 on %s", op_info[c->n->op].name);
	}
}

/* ---- Where --------------------------------------------------------------- */

/* Where(condition, X, Y): the broadcast of all three, of X's dtype (any,
 * strings included). */
int infer_where(OpCtx *c)
{
	Value *cond = op_need_in(c, 0), *x = cond ? op_need_in(c, 1) : NULL;
	Value *y = x ? op_need_in(c, 2) : NULL;
	Shape s;
	if (!y || op_check_dtype(c, 0, DTS(DT_BOOL)) < 0 ||
	    op_check_same_dtype(c, 2, 1) < 0 ||
	    op_broadcast(c, &cond->shape, &x->shape, &s) < 0 ||
	    op_broadcast(c, &s, &y->shape, &s) < 0)
		return -1;
	op_set_out(c, 0, x->dtype, &s);
	return 0;
}

typedef struct WhereCtx {
	const Tensor *cond, *x, *y;
	uint8_t *out;
	size_t size; /* bytes per element */
} WhereCtx;

static bool where_elem(void *ctx, int64_t o, const int64_t *in)
{
	WhereCtx *w = ctx;
	bool take_x = ((const uint8_t *)w->cond->data)[in[0]] != 0;
	const uint8_t *src = take_x ? w->x->data : w->y->data;
	memcpy(w->out + (size_t)o * w->size,
	       src + (size_t)in[take_x ? 1 : 2] * w->size, w->size);
	return true;
}

/* Elements are copied as they are, so every dtype folds. */
int run_where(OpCtx *c)
{
	const Tensor *cond = op_const_in(c, 0), *x = op_const_in(c, 1);
	const Tensor *y = op_const_in(c, 2);
	Value *out = op_out(c, 0);
	if (!cond || !x || !y || !out)
		return 0;
	size_t size = x->dtype == DT_STRING ? sizeof(Bytes) : dtype_size(x->dtype);
	Tensor *t = op_new_tensor(c, out->dtype, &out->shape);
	if (!t)
		return -1;
	WhereCtx w = { cond, x, y, tensor_mut(t), size };
	const Shape *sh[3] = { &cond->shape, &x->shape, &y->shape };
	ew_each(&t->shape, 3, sh, where_elem, &w);
	op_set_const(c, 0, t);
	return 0;
}
