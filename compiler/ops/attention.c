/*
 * compiler/ops/attention.c - Sdpa (domain ai.gearc): scaled dot-product
 * attention, the one canonical form every exporter's attention is
 * rewritten to (passes/attn.c) and one kernel family runs
 * (runtime/attn.c; this file's kernel is the reference).
 *
 *   Sdpa  Q, K, V [, M]  ->  Y
 *
 * Inputs (float32, one rank r >= 2 for Q, K and V):
 *   Q  queries: Transpose(Q, q_perm) is [N..., Sq, D]
 *   K  keys:    Transpose(K, k_perm) is [N..., Skv, D] (K, not K^T)
 *   V  values:  Transpose(V, v_perm) is [N..., Skv, Dv]
 *   M  optional additive mask, numpy-broadcast to [N..., Sq, Skv]
 *      (rank <= r; [B or 1, H or 1, Sq or 1, Skv] for r = 4)
 * N... are the r - 2 batch dims (batch x heads), the same in Q, K and V.
 * Output: Y = Transpose(O, y_perm), O [N..., Sq, Dv], where per batch
 * index n and query i
 *   s_ij = scale * (Q_i . K_j)       j < Skv
 *   s_ij = causal_fill               if causal masks key j of query i
 *   s_ij += M_ij
 *   p_ij = exp(s_ij - max_j s_ij) / sum_j exp(s_ij - max_j s_ij)
 *   O_i  = sum_j p_ij V_j
 * Attributes:
 *   scale        FLOAT, default 1 / sqrt(D)
 *   causal       INT, default 0: no causal mask; 1: key j of query i is
 *                masked when j > i (upper-left aligned, as torch's and
 *                ONNX's is_causal); 2: when j > i + Skv - Sq
 *                (lower-right aligned: a decoder's queries are the last
 *                Sq of the Skv positions)
 *   causal_fill  FLOAT, default -inf: the value a causally masked score
 *                takes before M is added (exporters write finfo.min)
 *   q_perm, k_perm, v_perm, y_perm
 *                INTS, default the identity: permutations of r axes that
 *                take the head-splitting Transposes around attention
 *                into the op (a [B, S, H, D] view read as [B, H, S, D]).
 * The softmax is computed in float32 from the max-subtracted scores, as
 * the Softmax op: a row holding a NaN, or whose largest score is +-inf
 * (every key masked with -inf), gives NaN, as the unfused graph does;
 * with Skv = 0, Y is 0.  The reference kernel computes the scores and
 * products in float (dot products in order), the softmax in double
 * rounded to float, as run_softmax.
 */
#include <math.h>
#include <string.h>

#include "opimpl.h"

/* The permutation attribute name of n (r axes) into p: the identity
 * when absent; -1 with an error unless a permutation of r axes. */
static int read_perm(OpCtx *c, const char *name, int32_t r, int32_t *p)
{
	const int64_t *v;
	int32_t n = attr_ints(c->n, name, &v);
	bool seen[MAX_RANK] = { false };
	if (!node_attr(c->n, name)) {
		for (int32_t i = 0; i < r; i++)
			p[i] = i;
		return 0;
	}
	if (n != r)
		return op_error(c, "%s has %d values, expected %d (the inputs' "
				"rank)", name, n, r);
	for (int32_t i = 0; i < r; i++) {
		if (v[i] < 0 || v[i] >= r || seen[v[i]])
			return op_error(c, "%s is not a permutation of %d axes",
					name, r);
		seen[v[i]] = true;
		p[i] = (int32_t)v[i];
	}
	return 0;
}

/* Row-major element strides of dims[0..r). */
static void row_strides(int32_t r, const int64_t *dims, int64_t *st)
{
	int64_t s = 1;
	for (int32_t i = r - 1; i >= 0; i--) {
		st[i] = s;
		s *= dims[i] > 0 ? dims[i] : 1;
	}
}

/* Logical dims and strides of input i (shape xs) read through perm p. */
static void logical(const Shape *xs, const int32_t *p, int64_t *dims,
		    int64_t *st)
{
	int64_t phys[MAX_RANK];
	row_strides(xs->rank, xs->dims, phys);
	for (int32_t a = 0; a < xs->rank; a++) {
		dims[a] = xs->dims[p[a]];
		st[a] = phys[p[a]];
	}
}

/* Dims a and b agree (either unknown counts as agreeing). */
static bool dims_agree(int64_t a, int64_t b)
{
	return a < 0 || b < 0 || a == b;
}

static const char *const tensor_name[] = { "Q", "K", "V", "M" };

/* Fills g from node c->n at its inputs' shapes (unknown dims stay -1):
 * -1 with an error if the inputs do not fit the contract above. */
static int geom(OpCtx *c, SdpaGeom *g)
{
	memset(g, 0, sizeof(*g));
	Value *in[4];
	for (int i = 0; i < 3; i++)
		if (!(in[i] = op_need_in(c, i)))
			return -1;
	in[3] = op_in(c, 3);
	for (int i = 0; i < 4; i++)
		if (in[i] && op_check_dtype(c, i, DTS(DT_FLOAT)) < 0)
			return -1;
	int32_t r = in[0]->shape.rank;
	if (r < 0 || in[1]->shape.rank < 0 || in[2]->shape.rank < 0)
		return 1; /* rank unknown: nothing to say yet */
	if (r < 2 || r > MAX_RANK || in[1]->shape.rank != r ||
	    in[2]->shape.rank != r)
		return op_error(c, "Q, K and V have ranks %d, %d and %d, "
				"expected one rank of at least 2", r,
				in[1]->shape.rank, in[2]->shape.rank);
	static const char *const pname[] = { SDPA_Q_PERM_ATTR,
					     SDPA_K_PERM_ATTR,
					     SDPA_V_PERM_ATTR,
					     SDPA_Y_PERM_ATTR };
	int32_t perm[4][MAX_RANK];
	for (int i = 0; i < 4; i++)
		if (read_perm(c, pname[i], r, perm[i]) < 0)
			return -1;
	int64_t dims[3][MAX_RANK];
	for (int i = 0; i < 3; i++)
		logical(&in[i]->shape, perm[i], dims[i], g->st[i]);
	g->rank = r;
	g->nlead = r - 2;
	g->nblocks = 1;
	for (int32_t a = 0; a < r - 2; a++) {
		for (int i = 1; i < 3; i++)
			if (!dims_agree(dims[0][a], dims[i][a]))
				return op_error(c, "batch dim %d is %lld in Q "
						"and %lld in %s, expected one "
						"size", a, (long long)dims[0][a],
						(long long)dims[i][a],
						tensor_name[i]);
		g->lead[a] = dims[0][a];
		g->nblocks = g->lead[a] < 0 || g->nblocks < 0
				     ? -1
				     : g->nblocks * g->lead[a];
	}
	g->sq = dims[0][r - 2];
	g->d = dims[0][r - 1];
	g->skv = dims[1][r - 2];
	g->dv = dims[2][r - 1];
	if (!dims_agree(g->d, dims[1][r - 1]) ||
	    !dims_agree(g->skv, dims[2][r - 2]))
		return op_error(c, "Q's head size %lld, K's %lld; K's length "
				"%lld, V's %lld: expected equal pairs",
				(long long)g->d, (long long)dims[1][r - 1],
				(long long)g->skv, (long long)dims[2][r - 2]);
	/* Y = Transpose(O, y_perm): O's axis a is Y's axis inv[a] */
	int64_t odims[MAX_RANK], ydims[MAX_RANK];
	memcpy(odims, g->lead, sizeof(int64_t) * (size_t)(r - 2));
	odims[r - 2] = g->sq;
	odims[r - 1] = g->dv;
	for (int32_t a = 0; a < r; a++)
		ydims[a] = odims[perm[3][a]];
	int64_t yst[MAX_RANK];
	row_strides(r, ydims, yst);
	for (int32_t a = 0; a < r; a++)
		g->st[SDPA_Y][perm[3][a]] = yst[a];
	g->yshape = shape_of(r, ydims);
	if (in[3]) {
		const Shape *ms = &in[3]->shape;
		if (ms->rank < 0)
			return 1;
		if (ms->rank > r)
			return op_error(c, "M has rank %d, expected at most %d",
					ms->rank, r);
		int64_t mst[MAX_RANK], want[MAX_RANK];
		row_strides(ms->rank, ms->dims, mst);
		memcpy(want, odims, sizeof(want));
		want[r - 1] = g->skv;
		for (int32_t a = 0; a < r; a++) {
			int32_t k = a - (r - ms->rank);
			int64_t d = k >= 0 ? ms->dims[k] : 1;
			if (d != 1 && !dims_agree(d, want[a]))
				return op_error(c, "M's dim %d is %lld, expected "
						"1 or %lld (M broadcasts to "
						"[N..., Sq, Skv])", k,
						(long long)d,
						(long long)want[a]);
			g->st[SDPA_M][a] = d == 1 ? 0 : mst[k];
		}
		g->mask = true;
	}
	float dflt = g->d > 0 ? (float)(1 / sqrt((double)g->d)) : 1.0f;
	g->scale = attr_float(c->n, SDPA_SCALE_ATTR, dflt);
	g->causal = (int)attr_int(c->n, SDPA_CAUSAL_ATTR, 0);
	g->fill = attr_float(c->n, SDPA_CAUSAL_FILL_ATTR, -INFINITY);
	if (g->causal < 0 || g->causal > 2)
		return op_error(c, "causal is %d, expected 0, 1 (upper-left) "
				"or 2 (lower-right)", g->causal);
	return 0;
}

int sdpa_geom(OpCtx *c, SdpaGeom *g)
{
	int rc = geom(c, g);
	if (rc > 0 || (rc == 0 && (g->nblocks < 0 || g->sq < 0 ||
				   g->skv < 0 || g->d < 0 || g->dv < 0)))
		return op_error(c, "the shapes of Q, K and V are not known");
	return rc;
}

int infer_sdpa(OpCtx *c)
{
	SdpaGeom g;
	int rc = geom(c, &g);
	if (rc < 0)
		return -1;
	if (rc > 0) {
		op_set_out(c, 0, DT_FLOAT, &(Shape){ .rank = -1 });
		return 0;
	}
	op_set_out(c, 0, DT_FLOAT, &g.yshape);
	return 0;
}

bool sdpa_masked(const SdpaGeom *g, int64_t i, int64_t j)
{
	return (g->causal == SDPA_CAUSAL_UPPER_LEFT && j > i) ||
	       (g->causal == SDPA_CAUSAL_LOWER_RIGHT &&
		j > i + g->skv - g->sq);
}

int64_t sdpa_block_offset(const SdpaGeom *g, int t, int64_t b)
{
	int64_t off = 0;
	for (int32_t a = g->nlead - 1; a >= 0; a--) {
		off += b % g->lead[a] * g->st[t][a];
		b /= g->lead[a];
	}
	return off;
}

/* One query row i of block b: p[0..skv) the softmax of its scores
 * (scratch of skv doubles in e), then its output row. */
static void ref_row(const SdpaGeom *g, const float *q, const float *k,
		    const float *v, const float *m, float *y, int64_t i,
		    double *e)
{
	int32_t r = g->rank;
	const int64_t *qs = g->st[SDPA_Q], *ks = g->st[SDPA_K];
	const int64_t *vs = g->st[SDPA_V], *ms = g->st[SDPA_M];
	const int64_t *ys = g->st[SDPA_Y];
	double mx = -INFINITY, sum = 0;
	for (int64_t j = 0; j < g->skv; j++) {
		float s = 0;
		for (int64_t d = 0; d < g->d; d++)
			s += q[i * qs[r - 2] + d * qs[r - 1]] *
			     k[j * ks[r - 2] + d * ks[r - 1]];
		s *= g->scale;
		if (sdpa_masked(g, i, j))
			s = g->fill;
		if (m)
			s += m[i * ms[r - 2] + j * ms[r - 1]];
		e[j] = s;
		mx = s > mx ? s : mx;
	}
	for (int64_t j = 0; j < g->skv; j++)
		sum += exp(e[j] - mx);
	for (int64_t j = 0; j < g->skv; j++)
		e[j] = (float)(exp(e[j] - mx) / sum);
	for (int64_t d = 0; d < g->dv; d++) {
		float o = 0;
		for (int64_t j = 0; j < g->skv; j++)
			o += (float)e[j] * v[j * vs[r - 2] + d * vs[r - 1]];
		y[i * ys[r - 2] + d * ys[r - 1]] = o;
	}
}

int run_sdpa(OpCtx *c)
{
	const Tensor *t[4];
	for (int i = 0; i < 4; i++)
		t[i] = op_const_in(c, i);
	if (!t[0] || !t[1] || !t[2] || (op_in(c, 3) && !t[3]))
		return 0;
	SdpaGeom g;
	if (sdpa_geom(c, &g) < 0)
		return -1;
	Tensor *y = op_new_output(c, 0, DT_FLOAT, &g.yshape);
	double *e = op_scratch(c, (size_t)(g.skv + 1) * sizeof(double));
	if (!y || !e)
		return -1;
	float *yd = tensor_mut(y);
	for (int64_t b = 0; b < g.nblocks; b++) {
		const float *q = t[0]->data, *k = t[1]->data;
		const float *v = t[2]->data;
		const float *m = t[3] ? t[3]->data : NULL;
		q += sdpa_block_offset(&g, SDPA_Q, b);
		k += sdpa_block_offset(&g, SDPA_K, b);
		v += sdpa_block_offset(&g, SDPA_V, b);
		if (m)
			m += sdpa_block_offset(&g, SDPA_M, b);
		float *yb = yd + sdpa_block_offset(&g, SDPA_Y, b);
		for (int64_t i = 0; i < g.sq; i++)
			ref_row(&g, q, k, v, m, yb, i, e);
	}
	op_set_const(c, 0, y);
	return 0;
}
