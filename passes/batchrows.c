/*
 * passes/batchrows.c - whether a gear's batch may be padded: the proof
 * that no node mixes the batch rows (passes/passes.h pass_batch_rows).
 *
 * A gear compile's batch is the gear dim at axis 0 of the inputs that
 * have one there.  A run may zero-pad its batch up to a larger gear and
 * slice the outputs back (gearrt_options.pad_batch) only if every output
 * row depends on the input rows of its own batch index alone: then the
 * padded rows change nothing the caller keeps.  This pass follows the
 * batch axis through each gear's nodes, op by op, from the inputs (axis
 * 0) to the outputs: elementwise ops align it as numpy broadcasting
 * does, a convolution or pooling keeps it at 0, a MatMul keeps it in A's
 * batch or row axes, a reshape keeps it where the elements before it
 * and its own length are kept, a Transpose moves it, a reduction,
 * Softmax, Concat, Split, Slice, Pad, Gather or Resize must leave it
 * alone, and so on.  A node whose op has no rule here, or whose rule the
 * node breaks (a reduction over the batch, a dynamic quantization's
 * min and max over the whole tensor, a Reshape merging the batch with
 * another axis), mixes the rows: the model records the first such node,
 * and a padded run is refused naming it.  Values no input row reaches
 * (weights, what is folded per gear) carry no batch.  Every gear must
 * give its outputs the same batch axes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

enum { NONE = -1, MIXED = -2 };

/* An axis a of a rank-r value, negative counting from the end. */
static int norm_axis(int64_t a, int r)
{
	return (int)(a < 0 ? a + r : a);
}

static const Shape *shape_of_val(const Graph *g, ValId v)
{
	return &g->vals[v].shape;
}

/* The values of input k of n, a constant of integers (int32 or int64,
 * at most 2 * MAX_RANK: axes, pads), into buf: *cnt of them; NULL if it
 * is no such constant. */
static const int64_t *const_ints(const Graph *g, const Node *n, int k,
				 int64_t *cnt, int64_t buf[2 * MAX_RANK])
{
	ValId v = k < n->ninputs ? n->inputs[k] : -1;
	const Tensor *t = v >= 0 ? g->vals[v].konst : NULL;
	if (!t || (t->dtype != DT_INT64 && t->dtype != DT_INT32) ||
	    (*cnt = shape_numel(&t->shape)) > 2 * MAX_RANK)
		return NULL;
	for (int64_t i = 0; i < *cnt; i++)
		buf[i] = tensor_get_i64(t, i);
	return buf;
}

/* Whether list l (cnt values, axes of a rank-r value) holds axis a. */
static bool holds(const int64_t *l, int64_t cnt, int a, int r)
{
	for (int64_t i = 0; i < cnt; i++)
		if (norm_axis(l[i], r) == a)
			return true;
	return false;
}

/* An ints attribute's values, none when absent. */
static int32_t ints(const Node *n, const char *name, const int64_t **v)
{
	int32_t c = attr_ints(n, name, v);
	if (c < 0)
		*v = NULL;
	return c < 0 ? 0 : c;
}

/* A Slice's list: attribute name before opset 10, input k since; NULL
 * if it is neither a constant nor absent (*cnt 0). */
static const int64_t *slice_list(const Graph *g, const Node *n,
				 const char *name, int k, int64_t *cnt,
				 int64_t buf[2 * MAX_RANK])
{
	const int64_t *l;
	if ((*cnt = ints(n, name, &l)))
		return l;
	if (k >= n->ninputs || n->inputs[k] < 0)
		return buf; /* absent: none */
	return const_ints(g, n, k, cnt, buf);
}

/* Whether Slice n keeps every row of axis a of its rank-r input, for
 * any length of it: a is not sliced, or from the start to the end by
 * step 1 (a start of 0 or below -2^31, an end of 2^31 or more: the
 * exporters' "to the end" is INT64_MAX). */
static bool slice_keeps(const Graph *g, const Node *n, int a, int r)
{
	int64_t ns, ne, na, nt, b[4][2 * MAX_RANK];
	const int64_t *st = slice_list(g, n, "starts", 1, &ns, b[0]);
	const int64_t *en = slice_list(g, n, "ends", 2, &ne, b[1]);
	const int64_t *ax = slice_list(g, n, "axes", 3, &na, b[2]);
	const int64_t *sp = slice_list(g, n, "steps", 4, &nt, b[3]);
	if (!st || !en || !ax || !sp || ne != ns || (na && na != ns) ||
	    (nt && nt != ns))
		return false;
	for (int64_t i = 0; i < ns; i++) {
		if ((na ? norm_axis(ax[i], r) : i) != a)
			continue;
		const int64_t far = (int64_t)1 << 31;
		return (!nt || sp[i] == 1) && (st[i] == 0 || st[i] <= -far) &&
		       en[i] >= far;
	}
	return true;
}

/* Where a reduction puts axis a of its rank-r input: a with keepdims,
 * else a less the reduced axes before it; MIXED if it reduces a.  Its
 * axes: its "axes" attribute or input 1 (axes from the run: any), all
 * if neither (noop_with_empty_axes aside). */
static int reduced_axis(const Graph *g, const Node *n, int a, int r)
{
	const int64_t *l;
	int64_t buf[2 * MAX_RANK];
	int32_t na = ints(n, "axes", &l);
	int64_t cnt = na;
	if (!na && n->ninputs > 1 && n->inputs[1] >= 0 &&
	    !(l = const_ints(g, n, 1, &cnt, buf)))
		return MIXED;
	if (!cnt)
		return attr_int(n, "noop_with_empty_axes", 0) ? a : MIXED;
	if (holds(l, cnt, a, r))
		return MIXED;
	if (attr_int(n, "keepdims", 1))
		return a;
	int before = 0;
	for (int64_t i = 0; i < cnt; i++)
		before += norm_axis(l[i], r) < a;
	return a - before;
}

/* The output axis of the batch, for elementwise ops of numpy
 * broadcasting: every input that carries it must align it with the
 * others. */
static int broadcast(const Graph *g, const Node *n, const int *ax)
{
	int out = NONE, yr = shape_of_val(g, n->outputs[0])->rank;
	for (int k = 0; k < n->ninputs; k++) {
		if (ax[k] == NONE)
			continue;
		int r = shape_of_val(g, n->inputs[k])->rank;
		int at = ax[k] + (yr - r);
		if (out != NONE && out != at)
			return MIXED;
		out = at;
	}
	return out;
}

/* A reshape (Reshape, Flatten, Squeeze, Unsqueeze) of x, batch at a, to
 * y: the batch stays an axis of y where the elements before it and its
 * length stay (row-major order kept), else it merges with another. */
static int reshaped(const Shape *x, int a, const Shape *y)
{
	int64_t before = 1, got = 1;
	for (int i = 0; i < a; i++)
		before *= x->dims[i];
	for (int b = 0; b < y->rank; b++) {
		if (got == before && y->dims[b] == x->dims[a] &&
		    (b + 1 == y->rank || y->dims[b] != 1 || x->dims[a] == 1))
			return b;
		got *= y->dims[b];
		if (got > before)
			break;
	}
	return MIXED;
}

/* The recurrent ops' batch axis in X and in Y, Y_h, Y_c: 1, 2, 1 for
 * layout 0; 0 for layout 1. */
static int rnn_axis(const Node *n, int which)
{
	bool first = attr_int(n, "layout", 0) != 0;
	return first ? 0 : which == 1 ? 2 : 1;
}

/* The logical axis (compiler/ops/attention.c) of input axis a of an
 * Sdpa's input read through permutation attribute name, r axes. */
static int sdpa_logical(const Node *n, const char *name, int a, int r)
{
	const int64_t *p;
	int32_t np = attr_ints(n, name, &p);
	for (int i = 0; np == r && i < r; i++)
		if (p[i] == a)
			return i;
	return a;
}

/* Sdpa (attention.c): rows stay apart when Q, K and V carry the batch
 * on one of their batch dims (N..., the same logical axis in each), the
 * mask on that axis too or not at all (one mask for every row); Y has it
 * where y_perm puts that axis. */
static int sdpa_carry(const Graph *g, const Node *n, const int *ax)
{
	static const char *const perm[] = { SDPA_Q_PERM_ATTR,
					    SDPA_K_PERM_ATTR,
					    SDPA_V_PERM_ATTR };
	int r = shape_of_val(g, n->inputs[0])->rank, la = NONE;
	for (int i = 0; i < 3; i++) {
		int l = ax[i] == NONE ? NONE
				      : sdpa_logical(n, perm[i], ax[i], r);
		if (l == NONE || l >= r - 2 || (la != NONE && l != la))
			return MIXED;
		la = l;
	}
	if (n->ninputs > 3 && n->inputs[3] >= 0 && ax[3] != NONE &&
	    ax[3] + r - shape_of_val(g, n->inputs[3])->rank != la)
		return MIXED;
	const int64_t *yp;
	int32_t ny = attr_ints(n, SDPA_Y_PERM_ATTR, &yp);
	for (int i = 0; ny == r && i < r; i++)
		if (yp[i] == la)
			return i;
	return la;
}

/* How n carries the batch (opset: the model's): its inputs' batch axes
 * ax[] (NONE, or an axis) to output k's (NONE for an output no batch
 * reaches); MIXED if it mixes the rows. */
static int carry(const Graph *g, const Node *n, const int *ax, int k,
		 int64_t opset)
{
	const Shape *x = n->ninputs > 0 && n->inputs[0] >= 0
				 ? shape_of_val(g, n->inputs[0])
				 : NULL;
	int a = n->ninputs > 0 ? ax[0] : NONE, r = x ? x->rank : 0;
	bool rest = false; /* a batch in any input but the first */
	for (int i = 1; i < n->ninputs; i++)
		rest |= ax[i] != NONE;
	bool any = a != NONE || rest;
	if (!any)
		return NONE;
	if (op_info[n->op].ew != EW_KIND_NONE)
		return broadcast(g, n, ax);
	switch (n->op) {
	case OP_Identity: case OP_Cast: case OP_CastLike: case OP_Relu:
	case OP_LeakyRelu: case OP_PRelu: case OP_Sigmoid: case OP_HardSigmoid:
	case OP_HardSwish: case OP_Tanh: case OP_Clip: case OP_Elu:
	case OP_Selu: case OP_Softplus: case OP_Softsign: case OP_Mish:
	case OP_Erf: case OP_FusedActivation: case OP_Where:
	case OP_Dropout: case OP_QuantizeLinear: case OP_DequantizeLinear:
	case OP_Not: case OP_IsNaN: case OP_IsInf: case OP_Sign:
	case OP_ThresholdedRelu: case OP_Shrink:
		/* elementwise (per-tensor parameters) */
		return broadcast(g, n, ax);
	case OP_Conv: case OP_FusedConv: case OP_ConvTranspose:
	case OP_ConvInteger: case OP_QLinearConv: case OP_MaxPool:
	case OP_AveragePool: case OP_LpPool: case OP_GlobalAveragePool:
	case OP_GlobalMaxPool: case OP_GlobalLpPool: case OP_LRN:
	case OP_BatchNormalization: case OP_InstanceNormalization:
	case OP_DepthToSpace: case OP_SpaceToDepth: {
		/* X [N, C, ...]; the rest are weights, but for FusedConv's Z
		 * (input 3), of Y's shape */
		bool z = n->op == OP_FusedConv;
		for (int i = 1; i < n->ninputs; i++)
			if (ax[i] != NONE && !(z && i == 3 && ax[i] == 0))
				return MIXED;
		if (n->op == OP_BatchNormalization &&
		    attr_int(n, "training_mode", 0))
			return MIXED;
		return a == 0 && (k == 0 || n->op == OP_MaxPool) ? 0 : MIXED;
	}
	case OP_MatMul: case OP_FusedMatMul: case OP_MatMulInteger: {
		const Shape *b = shape_of_val(g, n->inputs[1]);
		int yr = shape_of_val(g, n->outputs[0])->rank;
		int bb = ax[1];
		if (a == r - 1 || (bb != NONE && bb >= b->rank - 2))
			return MIXED; /* K, or B's K or N */
		for (int i = 2; i < n->ninputs; i++)
			if (ax[i] != NONE)
				return MIXED;
		int at = a != NONE ? a + (yr - r) : NONE;
		int bt = bb != NONE ? bb + (yr - b->rank) : NONE;
		return at != NONE && bt != NONE && at != bt ? MIXED
		       : at != NONE				? at
							: bt;
	}
	case OP_Gemm: case OP_FusedGemm: {
		bool ta = attr_int(n, "transA", 0) != 0;
		return !rest && a == (ta ? 1 : 0) ? 0 : MIXED;
	}
	case OP_Reshape: case OP_Flatten: case OP_Squeeze: case OP_Unsqueeze:
		return rest ? MIXED
			    : reshaped(x, a, shape_of_val(g, n->outputs[0]));
	case OP_Transpose: {
		const int64_t *p;
		int32_t np = ints(n, "perm", &p);
		for (int i = 0; i < r; i++)
			if (np ? norm_axis(p[i], r) == a : r - 1 - i == a)
				return i;
		return MIXED;
	}
	case OP_Softmax: case OP_LogSoftmax: case OP_Hardmax: {
		/* before opset 13, the axes from axis on are flattened */
		int ax0 = norm_axis(attr_int(n, "axis", opset >= 13 ? -1 : 1),
				    r);
		return rest || (opset >= 13 ? a == ax0 : a >= ax0) ? MIXED : a;
	}
	case OP_LayerNormalization: {
		int ax0 = norm_axis(attr_int(n, "axis", -1), r);
		return rest || a >= ax0 ? MIXED : a;
	}
	case OP_ReduceMean: case OP_ReduceSum: case OP_ReduceMax:
	case OP_ReduceMin: case OP_ReduceProd: case OP_ReduceL1:
	case OP_ReduceL2: case OP_ReduceLogSum: case OP_ReduceLogSumExp:
	case OP_ReduceSumSquare: {
		if (rest && !(n->ninputs > 1 && ax[1] == NONE))
			return MIXED;
		return reduced_axis(g, n, a, r);
	}
	case OP_ArgMax: case OP_ArgMin: {
		int ax0 = norm_axis(attr_int(n, "axis", 0), r);
		if (ax0 == a)
			return MIXED;
		return attr_int(n, "keepdims", 1) || a < ax0 ? a : a - 1;
	}
	case OP_TopK: {
		int ax0 = norm_axis(attr_int(n, "axis", -1), r);
		return rest || ax0 == a ? MIXED : a;
	}
	case OP_Concat: {
		int ax0 = norm_axis(attr_int(n, "axis", 0), r);
		for (int i = 0; i < n->ninputs; i++)
			if (ax[i] != NONE && (ax[i] != a || ax[i] == ax0))
				return MIXED;
		return a != NONE ? a : MIXED;
	}
	case OP_Split: {
		int ax0 = norm_axis(attr_int(n, "axis", 0), r);
		return rest || a == ax0 ? MIXED : a;
	}
	case OP_Slice:
		return !rest && slice_keeps(g, n, a, r) ? a : MIXED;
	case OP_Pad: {
		int64_t cnt, buf[2 * MAX_RANK];
		const int64_t *p = const_ints(g, n, 1, &cnt, buf);
		if (rest && !(ax[1] == NONE && (n->ninputs < 3 ||
						 ax[2] == NONE)))
			return MIXED;
		return p && cnt == 2 * r && !p[a] && !p[r + a] ? a : MIXED;
	}
	case OP_Gather: {
		int ax0 = norm_axis(attr_int(n, "axis", 0), r);
		int ir = shape_of_val(g, n->inputs[1])->rank;
		if (a != NONE && (ax[1] != NONE || a == ax0))
			return MIXED;
		if (a != NONE)
			return a < ax0 ? a : a + ir - 1;
		return ax0 + ax[1];
	}
	case OP_Resize: case OP_Upsample: {
		const Shape *y = shape_of_val(g, n->outputs[0]);
		return !rest && y->dims[a] == x->dims[a] && !a ? a : MIXED;
	}
	case OP_Expand: case OP_Tile: {
		const Shape *y = shape_of_val(g, n->outputs[0]);
		int at = a + (y->rank - r);
		return !rest && y->dims[at] == x->dims[a] ? at : MIXED;
	}
	case OP_Sdpa:
		return sdpa_carry(g, n, ax);
	case OP_Yuv420sp: /* frame n -> image n */
		return a == 0 && k == 0 ? 0 : MIXED;
	case OP_LSTM: case OP_GRU: case OP_RNN: {
		/* X, and the initial states (batch at 1, or 0 for layout 1) */
		int want = rnn_axis(n, 0);
		if (a != want)
			return MIXED;
		for (int i = 1; i < n->ninputs; i++)
			if (ax[i] != NONE && ax[i] != want)
				return MIXED;
		return rnn_axis(n, k == 0 ? 1 : 2);
	}
	default:
		return MIXED;
	}
}

/* The batch: the gear table's column of the first gear dim at an
 * input's axis 0; -1 if none. */
static int32_t batch_column(const GearSpec *gs)
{
	for (int32_t i = 0; i < gs->ninputs; i++)
		for (int32_t d = 0; d < gs->inputs[i].ndyn; d++)
			if (gs->inputs[i].dyn_axes[d] == 0)
				return gs->inputs[i].first + d;
	return -1;
}

static int64_t gear_value(const GearSpec *gs, int32_t gi, int32_t column)
{
	return gs->table[(size_t)gi * (size_t)gs->nvals + (size_t)column];
}

/* The axis of input name that is the batch, NONE for none: axis 0 if
 * it is a gear dim tied to the batch column (equal in every gear), else
 * its first gear dim so tied (a recurrent state's [layers, batch,
 * hidden]). */
static int batch_axis(const GearSpec *gs, int32_t column, const char *name)
{
	int found = NONE;
	for (int32_t i = 0; i < gs->ninputs; i++) {
		const GearInput *in = &gs->inputs[i];
		if (strcmp(in->name, name))
			continue;
		for (int32_t d = in->ndyn - 1; d >= 0; d--) {
			bool tied = true;
			for (int32_t g = 0; g < gs->ngears && tied; g++)
				tied = gear_value(gs, g, in->first + d) ==
				       gear_value(gs, g, column);
			if (tied)
				found = in->dyn_axes[d];
		}
	}
	return found;
}

/* Follows the batch through g (of a model of opset) from its inputs'
 * batch axes (batch_axis); out[k] gets graph output k's batch axis.  -1 with *why naming the node that mixes the
 * rows. */
static int follow(const Graph *g, int64_t opset, const GearSpec *gs, int *out,
		  char *why, size_t size)
{
	int32_t most = 1;
	for (int32_t i = 0; i < g->nnodes; i++)
		most = g->nodes[i].ninputs > most ? g->nodes[i].ninputs : most;
	int *ax = xmalloc(((size_t)g->nvals + 1) * sizeof(int));
	int *in = xmalloc((size_t)most * sizeof(int));
	for (ValId v = 0; v < g->nvals; v++)
		ax[v] = NONE;
	int32_t column = batch_column(gs);
	for (int32_t i = 0; i < g->ninputs; i++)
		ax[g->inputs[i]] = batch_axis(gs, column,
					      g->vals[g->inputs[i]].name);
	const MemPlan *pl = g->plan;
	int32_t count = pl ? pl->norder : g->nnodes;
	int rc = 0;
	for (int32_t i = 0; i < count && !rc; i++) {
		const Node *n = &g->nodes[pl ? pl->order[i] : i];
		bool reads = false;
		for (int k = 0; k < n->ninputs; k++) {
			in[k] = n->inputs[k] >= 0 ? ax[n->inputs[k]] : NONE;
			reads |= in[k] != NONE;
		}
		for (int k = 0; k < n->noutputs && !rc; k++) {
			if (n->outputs[k] < 0)
				continue;
			int c = !reads ? NONE
				: node_has_subgraphs(n) || !n->op
					? MIXED
					: carry(g, n, in, k, opset);
			rc = c == MIXED ? -1 : 0;
			ax[n->outputs[k]] = c;

		}
		if (rc)
			snprintf(why, size, "node '%s' (%s) mixes the rows", n->name,
				 n->op_type);
	}
	for (int32_t k = 0; !rc && k < g->noutputs; k++)
		out[k] = ax[g->outputs[k]];
	free(ax);
	free(in);
	return rc;
}

int pass_batch_rows(Model *m, const PassOptions *o)
{
	(void)o;
	const GearSpec *gs = m->gears;
	if (!gs || !m->branches)
		return 0;
	int32_t column = batch_column(gs);
	if (column < 0) /* no input's axis 0 is a gear dim */
		return 0;
	BatchRows *br = arena_alloc(&m->arena, sizeof(*br));
	int32_t nout = m->graph->noutputs, nin = m->graph->ninputs;
	br->axis = arena_array(&m->arena, (size_t)nout + 1, sizeof(int32_t));
	br->in_axis = arena_array(&m->arena, (size_t)nin + 1, sizeof(int32_t));
	for (int32_t i = 0; i < nin; i++)
		br->in_axis[i] = batch_axis(gs, column, m->graph->vals[
						 m->graph->inputs[i]].name);
	int *got = arena_array(&m->arena, (size_t)nout + 1, sizeof(int));
	char why[256];
	int followed = 0;
	for (int32_t gi = 0; gi < gs->ngears && !br->mixer; gi++) {
		const Graph *b = m->branches[gi];
		/* a gear of batch 1 is never padded to (a batch of 1 is
		 * that gear), and its axes of length 1 would make a Reshape
		 * or Unsqueeze of the batch ambiguous */
		if (!b || b->noutputs != nout || gear_value(gs, gi, column) < 2)
			continue;
		if (follow(b, model_opset(m), gs, got, why, sizeof(why)) < 0) {
			br->mixer = arena_strdup(&m->arena, why);
			break;
		}
		for (int32_t k = 0; k < nout && !br->mixer; k++) {
			if (followed && got[k] != br->axis[k])
				br->mixer = arena_printf(
					&m->arena, "output '%s': its batch axis "
					"differs between gears", b->vals[
					b->outputs[k]].name);
			br->axis[k] = got[k];
		}
		followed++;
	}
	if (!followed && !br->mixer)
		br->mixer = "no gear's batch is 2 or more (none to pad to)";
	m->batch_rows = br;
	return 0;
}
