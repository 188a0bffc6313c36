/*
 * compiler/ops/fused.c - gearc's fused ops: FusedConv, FusedGemm,
 * FusedMatMul (domain ai.gearc), made by the fuse pass (passes/fuse.c).
 *
 *   FusedConv   X, W, B?, Z?   Conv's attributes     Y = acts(Conv + Z),
 *                                                      or, with z_after k,
 *                                                      acts[k..](acts[..k)(Conv) + Z)
 *   FusedGemm   A, B, C?       Gemm's attributes     Y = acts(Gemm)
 *   FusedMatMul A, B, Bias?                          Y = acts(MatMul + Bias)
 *   FusedActivation X                                Y = acts(X)
 *
 * Each also has "activations" (STRINGS, applied in order) and
 * "activation_params" (FLOATS, alpha and beta per activation, 0 where
 * unused): the activations of compiler/act.h's table, which holds each
 * one's forms in fp32 and double and its parameters.  FusedConv's
 * "z_after" (INT, 0 if absent) is how many of them come before Z is
 * added: a residual Add after the activation (U-Net's RSU blocks,
 * pre-activation ResNets).  Bias of
 * FusedMatMul is 1-D and broadcasts over the last axis.
 *
 * These are the reference kernels: the standard op's kernel (conv.c,
 * matmul.c) computes into the output, then Z or Bias and the activations
 * are applied to it in place; fp32 in float, as the unfused ops compute,
 * other float dtypes in double.  Fast paths (runtime/fast.c) implement
 * the same contract.
 */
#include <string.h>

#include "compiler/act.h"
#include "opimpl.h"

typedef struct Act {
	int kind;
	float alpha, beta;
} Act;

#define MAX_ACTS 16

/* Reads and checks the activations attributes into a[0..*n). */
static int read_acts(OpCtx *c, Act *a, int *n)
{
	const Attr *as = node_attr(c->n, FUSED_ACTS_ATTR);
	const Attr *ps = node_attr(c->n, FUSED_ACT_PARAMS_ATTR);
	*n = 0;
	if (!as)
		return ps && ps->n ? op_error(c, "activation_params without "
						 "activations") : 0;
	if (as->type != ATTR_STRINGS)
		return op_error(c, "activations is not a list of strings");
	if (as->n > MAX_ACTS)
		return op_error(c, "%d activations, at most %d supported",
				as->n, MAX_ACTS);
	if (!ps || ps->type != ATTR_FLOATS || ps->n != 2 * as->n)
		return op_error(c, "activation_params has %d values, expected "
				"%d (alpha, beta per activation)",
				ps && ps->type == ATTR_FLOATS ? ps->n : 0,
				2 * as->n);
	for (int32_t i = 0; i < as->n; i++) {
		const Bytes *s = &as->strings[i];
		a[i].kind = act_lookup((const char *)s->data, s->len);
		char names[256];
		if (a[i].kind < 0)
			return op_error(c, "activation %d '%.*s' is not one of "
					"%s", i, (int)s->len,
					(const char *)s->data,
					act_names(names, sizeof(names)));
		a[i].alpha = ps->floats[2 * i];
		a[i].beta = ps->floats[2 * i + 1];
	}
	*n = as->n;
	return 0;
}

/* The z_after attribute of n (0 if absent), checked against its na
 * activations and whether it has Z: -1 with an error. */
static int read_z_after(OpCtx *c, int na, bool has_z, int *k)
{
	const Attr *a = node_attr(c->n, FUSED_Z_AFTER_ATTR);
	*k = 0;
	if (!a)
		return 0;
	if (c->n->op != OP_FusedConv)
		return op_error(c, "z_after is FusedConv's attribute only");
	if (a->type != ATTR_INT || a->i < 0 || a->i > na || (a->i && !has_z))
		return op_error(c, "z_after is %lld, expected an INT from 0 to "
				"%d (the activations before Z is added)%s",
				a->type == ATTR_INT ? (long long)a->i : -1LL,
				na, has_z ? "" : ", 0 without Z");
	*k = (int)a->i;
	return 0;
}

/* In place: the first zk activations, then y += add, add either y's
 * shape (period 0) or 1-D broadcast over the last axis (period = its
 * length), then the other activations. */
static void post_ops(Tensor *y, const Tensor *add, const Act *a, int na,
		     int zk)
{
	int64_t n = shape_numel(&y->shape);
	int64_t per = add ? shape_numel(&add->shape) : 0;
	if (y->dtype == DT_FLOAT) {
		float *p = tensor_mut(y);
		const float *q = add ? add->data : NULL;
		for (int64_t i = 0; i < n; i++) {
			float x = p[i];
			for (int k = 0; k < na; k++) {
				if (k == zk && q)
					x += q[per == n ? i : i % per];
				x = act_f32(a[k].kind, x, a[k].alpha,
					    a[k].beta);
			}
			if (zk == na && q)
				x += q[per == n ? i : i % per];
			p[i] = x;
		}
		return;
	}
	for (int64_t i = 0; i < n; i++) {
		double x = tensor_get_f64(y, i);
		for (int k = 0; k <= na; k++) {
			if (k == zk && add)
				x = ew_round(y->dtype,
					     x + tensor_get_f64(add, per == n
									? i
									: i % per));
			if (k < na)
				x = ew_round(y->dtype,
					     act_f64(a[k].kind, x, a[k].alpha,
						     a[k].beta));
		}
		tensor_set_f64(y, i, x);
	}
}

/* Runs kernel (the standard op's) then adds input extra (if present)
 * and applies the activations. */
static int run_fused(OpCtx *c, OpFn kernel, int extra)
{
	Act a[MAX_ACTS];
	int na;
	const Tensor *add = extra >= 0 ? op_const_in(c, extra) : NULL;
	if (extra >= 0 && op_in(c, extra) && !add)
		return 0;
	int zk;
	if (read_acts(c, a, &na) < 0 ||
	    read_z_after(c, na, extra >= 0 && op_in(c, extra), &zk) < 0 ||
	    kernel(c) < 0)
		return -1;
	Tensor *y = op_out_result(c, 0);
	if (y)
		post_ops(y, add, a, na, zk);
	return 0;
}

int run_fused_conv(OpCtx *c) { return run_fused(c, run_conv, 3); }

int run_fused_gemm(OpCtx *c) { return run_fused(c, run_gemm, -1); }

int run_fused_matmul(OpCtx *c) { return run_fused(c, run_matmul, 2); }

/* X's elements into Y, its buffer or X's own (in place). */
static int copy_input(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	if (!x)
		return 0;
	Tensor *y = op_new_output(c, 0, x->dtype, &x->shape);
	if (!y)
		return -1;
	if (y->data != x->data)
		memcpy(tensor_mut(y), x->data, x->nbytes);
	op_set_const(c, 0, y);
	return 0;
}

int run_fused_activation(OpCtx *c) { return run_fused(c, copy_input, -1); }

/* ---- inference ------------------------------------------------------------ */

int infer_fused_conv(OpCtx *c)
{
	Act a[MAX_ACTS];
	int na, zk;
	char sz[128], sy[128];
	Value *z = op_in(c, 3), *y = op_out(c, 0);
	if (infer_conv(c) < 0 || read_acts(c, a, &na) < 0 ||
	    read_z_after(c, na, z != NULL, &zk) < 0 ||
	    op_check_same_dtype(c, 3, 0) < 0)
		return -1;
	if (z && y && z->shape.rank >= 0 && y->shape.rank >= 0 &&
	    shape_is_static(&z->shape) && shape_is_static(&y->shape) &&
	    !shape_equal(&z->shape, &y->shape))
		return op_error(c, "input 3 (Z, '%s') has shape %s, expected "
				"the output's %s", z->name,
				shape_str(&z->shape, sz, sizeof(sz)),
				shape_str(&y->shape, sy, sizeof(sy)));
	return 0;
}

int infer_fused_gemm(OpCtx *c)
{
	Act a[MAX_ACTS];
	int na;
	if (infer_gemm(c) < 0 || read_acts(c, a, &na) < 0)
		return -1;
	return 0;
}

int infer_fused_activation(OpCtx *c)
{
	Act a[MAX_ACTS];
	int na;
	return ew_infer_unary(c, DTS_IEEE, 0) < 0 || read_acts(c, a, &na) < 0
		       ? -1
		       : 0;
}

int infer_fused_matmul(OpCtx *c)
{
	Act a[MAX_ACTS];
	int na;
	if (infer_matmul(c) < 0 || read_acts(c, a, &na) < 0 ||
	    op_check_same_dtype(c, 2, 0) < 0 || op_check_rank(c, 2, 1, 1) < 0)
		return -1;
	Value *b = op_in(c, 2), *y = op_out(c, 0);
	if (!b || !y || y->shape.rank < 1 || b->shape.rank != 1)
		return 0;
	int64_t nb = b->shape.dims[0], ny = y->shape.dims[y->shape.rank - 1];
	if (nb >= 0 && ny >= 0 && nb != ny)
		return op_error(c, "input 2 (Bias, '%s') has %lld values, "
				"expected %lld (the last dim of the output)",
				b->name, (long long)nb, (long long)ny);
	return 0;
}
