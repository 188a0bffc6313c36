/*
 * runtime/fast.c - fast paths chosen when a gear is prepared (rt.h
 * FastKernel): which nodes the plain-C kernels (runtime/direct.c and
 * chanwise.c, tried first) and oneDNN (runtime/dnnl.c) run, and which
 * neighbours share work: a ConvTranspose applying the activation after
 * it (the layouts tensors take between kernels are runtime/layout.c's).
 * A node no fast path takes runs its op's reference kernel.
 * GEARRT_NO_FAST=1 in the environment when a gear is prepared turns
 * every fast path off (the reference kernels are then the test oracle:
 * tests/test_fast.c).
 */
#include <stdlib.h>
#include <string.h>

#include "chanwise.h"
#include "convert.h"
#include "direct.h"
#include "dnnl.h"
#include "quant.h"
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

/* Value v is read by node n alone and is no graph output. */
static bool read_by_only(const Graph *g, ValId v, const Node *n)
{
	for (int32_t k = 0; k < g->noutputs; k++)
		if (g->outputs[k] == v)
			return false;
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *m = &g->nodes[i];
		if (rt_has_subgraphs(m))
			return false; /* a subgraph may read v */
		for (int32_t k = 0; k < m->ninputs; k++)
			if (m->inputs[k] == v && m != n)
				return false;
	}
	return true;
}

/* A Relu or Sigmoid whose input only it reads, made by an earlier plain-C
 * ConvTranspose: that kernel applies the activation and writes t's
 * output tensor instead of its own (never read now); t does nothing.
 * 1 if so, else 0. */
static int fold_into_deconv(Prepared *p, Task *t)
{
	const Node *n = t->n;
	ValId v = n->ninputs == 1 ? n->inputs[0] : -1;
	if (v < 0 || !p->tasks || t < p->tasks ||
	    t >= p->tasks + p->ntasks || n->noutputs != 1 || !t->out[0] ||
	    t->out[0]->dtype != p->vt[v].dtype ||
	    !shape_equal(&t->out[0]->shape, &p->vt[v].shape))
		return 0;
	Task *u = t;
	while (u-- > p->tasks)
		if (u->n->noutputs > 0 && u->n->outputs[0] == v)
			break;
	if (u < p->tasks || !u->out[0] || !read_by_only(p->g, v, n) ||
	    !direct_deconv_act(&u->fast, n->op == OP_Relu ? DIRECT_RELU
							   : DIRECT_SIGMOID))
		return 0;
	u->out[0] = t->out[0];
	direct_noop(&t->fast);
	return 1;
}

/* The plain-C paths (runtime/direct.c, chanwise.c), tried before
 * oneDNN: 1 if one took t, 0 if none, -1 with an error. */
static int direct_prepare(gearrt_session *s, Prepared *p, Task *t)
{
	if (own_op(t->n, "FusedConv"))
		return direct_conv(s, p, t, &t->fast);
	switch (t->n->op) {
	case OP_Conv:
		return direct_conv(s, p, t, &t->fast);
	case OP_ConvTranspose:
		return direct_deconv(s, p, t, &t->fast);
	case OP_Relu:
		return fold_into_deconv(p, t) ? 1
					       : direct_unary(s, p, t, &t->fast);
	case OP_Sigmoid:
		return fold_into_deconv(p, t) ? 1
					       : direct_sigmoid(s, p, t, &t->fast);
	case OP_Softmax:
		return direct_softmax(s, p, t, &t->fast);
	case OP_Erf:
	case OP_Pow:
		return direct_unary(s, p, t, &t->fast);
	case OP_Cast:
		return convert_cast(s, p, t, &t->fast);
	case OP_MatMulInteger:
	case OP_QLinearMatMul:
		return quant_matmul(s, p, t, &t->fast);
	case OP_ConvInteger:
	case OP_QLinearConv:
		return quant_conv(s, p, t, &t->fast);
	case OP_DynamicQuantizeLinear:
	case OP_QuantizeLinear:
	case OP_DequantizeLinear:
		return quant_linear(s, p, t, &t->fast);
	case OP_Add:
	case OP_Sub:
	case OP_Mul:
	case OP_Div:
		return direct_arith(s, p, t, &t->fast) ||
		       chan_binary(s, p, t, &t->fast);
	case OP_LayerNormalization:
		return direct_layernorm(s, p, t, &t->fast);
	case OP_GlobalAveragePool:
		return chan_gap(s, p, t, &t->fast);
	case OP_Concat:
		return chan_concat(s, p, t, &t->fast);
	case OP_Transpose:
		return direct_transpose(s, p, t, &t->fast);
	case OP_Resize:
		return direct_resize(s, p, t, &t->fast);
	case OP_Gather:
		return direct_gather(s, p, t, &t->fast);
	case OP_FusedActivation:
		return direct_act(s, p, t, &t->fast);
	default:
		return op_info[t->n->op].view == VIEW_ALIAS
			       ? direct_view(s, p, t, &t->fast)
			       : 0;
	}
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
		return dnnl_fast_conv(s, p, t, false, &t->fast);
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
	case OP_LSTM:
	case OP_GRU:
	case OP_RNN:
		return dnnl_fast_rnn(s, p, t, &t->fast);
	case OP_Resize:
		return dnnl_fast_resize(s, p, t, &t->fast);
	default:
		break;
	}
	if (own_op(n, "FusedConv"))
		return dnnl_fast_conv(s, p, t, false, &t->fast);
	if (own_op(n, "FusedGemm"))
		return dnnl_fast_matmul(s, p, t, true, &t->fast);
	if (own_op(n, "FusedMatMul"))
		return dnnl_fast_matmul(s, p, t, false, &t->fast);
	return 0;
}
