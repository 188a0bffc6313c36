/*
 * passes/precision.c - which nodes may compute in reduced precision
 * (atc's --precision_mode; man gearc, PRECISION).
 *
 * Under a mode that allows bfloat16 or float16, a node is marked reduced
 * (Node.reduced, kept in the .om) when
 *   - its op is one a reduced kernel exists for: Conv, ConvTranspose,
 *     MatMul, Gemm and their fused forms (the white list), or one
 *     --modify_mixlist's white list adds among those;
 *   - no --modify_mixlist black list or --keep_dtype line names its op
 *     type, and --keep_dtype does not name the node;
 *   - it is not the last such layer before a graph output: every path
 *     back from an output, through the ops that are not on the white
 *     list (activations, Softmax, reshapes), stops at the first white
 *     op, which stays float32, as atc keeps the last layers of a net.
 * Everything else (Softmax, the normalisations, reductions, Exp and Log,
 * elementwise arithmetic) is never marked: it computes in float32.
 *
 * The compiler decides nothing about the CPU: the runtime computes a
 * reduced node in bfloat16 where the CPU it runs on has AVX512_BF16 or
 * AMX-BF16, and in float32 elsewhere, from the same file.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "passes.h"

/* The ops a reduced kernel exists for (runtime/dnnl.c's bf16 rows). */
static bool reducible(int op)
{
	switch (op) {
	case OP_Conv: case OP_ConvTranspose: case OP_FusedConv:
	case OP_MatMul: case OP_FusedMatMul: case OP_Gemm: case OP_FusedGemm:
		return true;
	default:
		return false;
	}
}

static bool listed(const char *const *l, int32_t n, const char *s)
{
	for (int32_t i = 0; i < n; i++)
		if (!strcmp(l[i], s))
			return true;
	return false;
}

/* The op type a node counts as for the lists: a fused node as its
 * source op (FusedConv as Conv). */
static const char *list_type(const Node *n)
{
	switch (n->op) {
	case OP_FusedConv: return "Conv";
	case OP_FusedMatMul: return "MatMul";
	case OP_FusedGemm: return "Gemm";
	default: return n->op_type;
	}
}

/* Whether --keep_dtype names n: its source node's name, which a gear
 * branch's clone suffixes with "_" and its label lowercased
 * ("conv2_batch_1" in branch "Batch_1"). */
static bool kept(const PrecisionSpec *p, const Node *n)
{
	if (listed(p->keep, p->nkeep, n->name))
		return true;
	size_t len = strlen(n->name), ll = n->label ? strlen(n->label) : 0;
	if (!ll || len <= ll + 1 || n->name[len - ll - 1] != '_' ||
	    strncasecmp(n->name + len - ll, n->label, ll))
		return false;
	for (int32_t i = 0; i < p->nkeep; i++)
		if (strlen(p->keep[i]) == len - ll - 1 &&
		    !strncmp(p->keep[i], n->name, len - ll - 1))
			return true;
	return false;
}

static bool wanted(const PrecisionSpec *p, const Node *n)
{
	if (listed(p->deny, p->ndeny, list_type(n)) || kept(p, n))
		return false;
	return reducible(n->op);
}

/* Marks false, in keep[], the white-list nodes nearest each output of
 * g: back from each output through the nodes that are not reducible. */
static void last_layers(const Graph *g, bool *keep)
{
	int32_t *stack = xmalloc(((size_t)g->nvals + 1) * sizeof(int32_t));
	bool *seen = xcalloc((size_t)g->nvals + 1, 1);
	int32_t top = 0;
	for (int32_t k = 0; k < g->noutputs; k++)
		if (g->outputs[k] >= 0 && !seen[g->outputs[k]]) {
			seen[g->outputs[k]] = true;
			stack[top++] = g->outputs[k];
		}
	while (top) {
		ValId v = stack[--top];
		int32_t p = g->vals[v].producer;
		if (p < 0)
			continue;
		const Node *n = &g->nodes[p];
		if (reducible(n->op)) {
			keep[p] = true;
			continue;
		}
		for (int32_t i = 0; i < n->ninputs; i++) {
			ValId x = n->inputs[i];
			if (x >= 0 && !seen[x]) {
				seen[x] = true;
				stack[top++] = x;
			}
		}
	}
	free(stack);
	free(seen);
}

static int mark_graph(Graph *g, void *ctx)
{
	const PrecisionSpec *p = ctx;
	bool *keep = xcalloc((size_t)g->nnodes + 1, 1);
	last_layers(g, keep);
	for (int32_t i = 0; i < g->nnodes; i++)
		g->nodes[i].reduced = !keep[i] && wanted(p, &g->nodes[i]);
	free(keep);
	return 0;
}

int pass_precision(Model *m, Graph *g, const PassOptions *o)
{
	(void)m;
	if (!o->precision || !o->precision->dtype)
		return 0;
	return graph_walk(g, mark_graph, (void *)o->precision);
}
