/*
 * runtime/fast.c - fast paths chosen when a gear is prepared (rt.h
 * FastKernel): which nodes oneDNN runs (runtime/dnnl.c).  A node no fast
 * path takes runs its op's reference kernel.  GEARRT_NO_FAST=1 in the
 * environment when a gear is prepared turns every fast path off (the
 * reference kernels are then the test oracle: tests/test_fast.c).
 */
#include <stdlib.h>
#include <string.h>

#include "direct.h"
#include "dnnl.h"
#include "rt.h"

static bool fast_disabled(void)
{
	const char *e = getenv("GEARRT_NO_FAST");
	return e && *e && strcmp(e, "0");
}

/* gearc's own fused ops (domain ai.gearc), by name: looked up once here,
 * never while running. */
static bool own_op(const Node *n, const char *name)
{
	return n->domain && !strcmp(n->domain, "ai.gearc") &&
	       !strcmp(n->op_type, name);
}

/* The plain-C paths (runtime/direct.c), tried before oneDNN: 1 if one
 * took t, 0 if none, -1 with an error. */
static int direct_prepare(gearrt_session *s, Prepared *p, Task *t)
{
	if (own_op(t->n, "FusedConv"))
		return direct_conv(s, p, t, &t->fast);
	switch (t->n->op) {
	case OP_Conv:
		return direct_conv(s, p, t, &t->fast);
	case OP_ConvTranspose:
		return direct_deconv(s, p, t, &t->fast);
	case OP_Sigmoid:
		return direct_sigmoid(s, p, t, &t->fast);
	case OP_Softmax:
		return direct_softmax(s, p, t, &t->fast);
	case OP_Erf:
	case OP_Add:
	case OP_Sub:
	case OP_Mul:
	case OP_Div:
		return direct_unary(s, p, t, &t->fast);
	case OP_Transpose:
		return direct_transpose(s, p, t, &t->fast);
	default:
		return 0;
	}
}

/* A oneDNN convolution, linked in blocked layout to the convolution
 * producing its input where it can be. */
static int conv_chained(gearrt_session *s, Prepared *p, Task *t)
{
	int rc = dnnl_fast_conv(s, p, t, false, &t->fast);
	if (rc == 1)
		dnnl_fast_chain(p, t);
	return rc;
}

int rt_fast_prepare(gearrt_session *s, Prepared *p, Task *t)
{
	const Node *n = t->n;
	if (fast_disabled() || n->noutputs < 1 || !t->out[0])
		return 0;
	int rc = direct_prepare(s, p, t);
	if (rc)
		return rc;
	switch (n->op) {
	case OP_Conv:
		return conv_chained(s, p, t);
	case OP_ConvTranspose:
		return dnnl_fast_conv(s, p, t, true, &t->fast);
	case OP_MatMul:
		return dnnl_fast_matmul(s, p, t, false, &t->fast);
	case OP_Gemm:
		return dnnl_fast_matmul(s, p, t, true, &t->fast);
	case OP_MaxPool:
	case OP_AveragePool:
	case OP_GlobalAveragePool:
		return dnnl_fast_pool(s, p, t, &t->fast);
	default:
		break;
	}
	if (own_op(n, "FusedConv"))
		return conv_chained(s, p, t);
	if (own_op(n, "FusedGemm"))
		return dnnl_fast_matmul(s, p, t, true, &t->fast);
	if (own_op(n, "FusedMatMul"))
		return dnnl_fast_matmul(s, p, t, false, &t->fast);
	return 0;
}
