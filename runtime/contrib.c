/*
 * runtime/contrib.c - fast paths of ONNX Runtime's contrib ops
 * (compiler/ops/contrib*.c) that have no standard form as fast as a
 * kernel of their own (runtime/contrib.h).  Each computes what the op's
 * reference kernel computes, in fp32 (or int8), on the session's
 * threads:
 *   - the norms: a row at a time, the sum of input, skip and bias into
 *     the output (and the sum output), then normalized in place, the
 *     moments in double as the reference's;
 *   - Attention, MultiHeadAttention: the projection on sgemm in blocks
 *     of rows, one attention per batch row and head (the reference's
 *     ms_attention_head), each on the threads;
 *   - EmbedLayerNormalization, RotaryEmbedding: rows on the threads;
 *   - the QLinear ops: QLinearAdd and QLinearMul in float exactly as the
 *     reference rounds; QLinearSigmoid, QLinearLeakyRelu and
 *     QLinearConcat by tables of the 256 values made once at prepare
 *     from their constant scales; QLinearGlobalAveragePool in integer
 *     sums; QLinearSoftmax by ONNX Runtime's table, rows on the threads.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contrib.h"

static bool f32(const Value *v)
{
	return v && v->dtype == DT_FLOAT && v->tkind == TK_TENSOR &&
	       shape_is_static(&v->shape);
}

static bool of_dtype(const Value *v, int dt)
{
	return v && v->dtype == dt && v->tkind == TK_TENSOR &&
	       shape_is_static(&v->shape);
}

/* Output k of t, planned (every present output must be). */
static bool outs_planned(const Task *t)
{
	for (int32_t k = 0; k < t->n->noutputs; k++)
		if (t->n->outputs[k] >= 0 && !t->out[k])
			return false;
	return true;
}

static const Value *out_val(const Prepared *p, const Node *n, int k)
{
	return k < n->noutputs && n->outputs[k] >= 0
		       ? &p->g->vals[n->outputs[k]]
		       : NULL;
}

/* Input i of a node of nin inputs, NULL if omitted or past the end; the
 * same for outputs. */
static const Tensor *in_at(const Tensor *const *in, int32_t nin, int i)
{
	return i >= 0 && i < nin ? in[i] : NULL;
}

static float *out_at(Tensor *const *out, int32_t nout, int i)
{
	return i >= 0 && i < nout && out[i] ? tensor_mut(out[i]) : NULL;
}

/* v is 1-D of n values (or absent). */
static bool vec_or_absent(const Value *v, int64_t n)
{
	return !v || (f32(v) && v->shape.rank == 1 && v->shape.dims[0] == n);
}

/* ---- norms -------------------------------------------------------------- */

typedef struct Norm {
	int32_t nin, nout;
	int64_t rows, cols, skip_rows;
	float eps;
	bool rms;
	int beta, bias; /* input indices, -1: none */
	int threads;
} Norm;

/* One row s[0..n) (in place in y) normalized: LayerNorm or RMS. */
RT_HOT_FN(static, void, norm_row,
	  (float *y, int64_t n, bool rms, float eps, const float *g, const float *b, float *mean, float *inv),
	  (y, n, rms, eps, g, b, mean, inv))
{
	double m = 0, v = 0;
	if (!rms) {
		for (int64_t j = 0; j < n; j++)
			m += y[j];
		m = n ? m / (double)n : 0;
	}
	for (int64_t j = 0; j < n; j++)
		v += (y[j] - m) * (y[j] - m);
	v = n ? v / (double)n : 0;
	float fm = (float)m, fi = (float)(1 / sqrt(v + eps));
	if (b)
		for (int64_t j = 0; j < n; j++)
			y[j] = (y[j] - fm) * fi * g[j] + b[j];
	else
		for (int64_t j = 0; j < n; j++)
			y[j] = (y[j] - fm) * fi * g[j];
	*mean = fm;
	*inv = fi;
}

static int norm_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const Norm *z = state;
	const Tensor *bet = in_at(in, z->nin, z->beta);
	const Tensor *bit = in_at(in, z->nin, z->bias);
	bool sk_ = z->skip_rows != 0;
	const float *x = in[0]->data;
	const float *sk = sk_ ? in[1]->data : NULL;
	const float *g = in[sk_ ? 2 : 1]->data;
	const float *be = bet ? bet->data : NULL, *bi = bit ? bit->data : NULL;
	float *y = tensor_mut(out[0]);
	float *mo = sk_ ? out_at(out, z->nout, 1) : NULL;
	float *io = out_at(out, z->nout, sk_ ? 2 : 1);
	float *so = sk_ ? out_at(out, z->nout, 3) : NULL;
	int64_t c = z->cols;
	int nt = z->threads;
	RT_PARALLEL_ROWS
	for (int64_t r = 0; r < z->rows; r++) {
		float *yr = y + r * c, m, inv;
		const float *xr = x + r * c;
		if (sk) {
			const float *kr = sk + (r % z->skip_rows) * c;
			for (int64_t j = 0; j < c; j++)
				yr[j] = bi ? xr[j] + kr[j] + bi[j]
					   : xr[j] + kr[j];
			if (so)
				memcpy(so + r * c, yr, (size_t)c * sizeof(float));
		} else if (yr != xr) {
			memcpy(yr, xr, (size_t)c * sizeof(float));
		}
		norm_row(yr, c, z->rms, z->eps, g, be, &m, &inv);
		if (mo)
			mo[r] = m;
		if (io)
			io[r] = inv;
	}
	return 0;
}

int contrib_norm(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	bool skip = n->op != OP_MS_SimplifiedLayerNormalization;
	const Value *x = rt_in_val(p, n, 0), *y = out_val(p, n, 0);
	if (!f32(x) || !f32(y) || x->shape.rank < 1 || !outs_planned(t) ||
	    !shape_equal(&x->shape, &y->shape))
		return 0;
	int32_t r = x->shape.rank;
	int64_t axis = skip ? -1 : attr_int(n, "axis", -1);
	axis += axis < 0 ? r : 0;
	if (axis < 0 || axis >= r)
		return 0;
	Norm z = { .nin = n->ninputs, .nout = n->noutputs, .cols = 1,
		   .beta = -1, .bias = -1,
		   .rms = n->op != OP_MS_SkipLayerNormalization };
	for (int32_t i = (int32_t)axis; i < r; i++)
		z.cols *= x->shape.dims[i];
	z.rows = z.cols ? shape_numel(&x->shape) / z.cols : 0;
	const Value *g = rt_in_val(p, n, skip ? 2 : 1);
	if (!g || !f32(g) || shape_numel(&g->shape) != z.cols)
		return 0;
	for (int32_t i = 0; i < g->shape.rank; i++) {
		/* the scale laid out as the normalized dims (leading 1s) */
		int32_t xi = r - g->shape.rank + i;
		if (g->shape.dims[i] != (xi >= axis ? x->shape.dims[xi] : 1))
			return 0;
	}
	if (skip) {
		const Value *sk = rt_in_val(p, n, 1);
		z.bias = n->op == OP_MS_SkipLayerNormalization ? 4 : 3;
		z.beta = n->op == OP_MS_SkipLayerNormalization ? 3 : -1;
		if (!f32(sk) || !vec_or_absent(rt_in_val(p, n, z.bias), z.cols) ||
		    (z.beta >= 0 &&
		     !vec_or_absent(rt_in_val(p, n, z.beta), z.cols)))
			return 0;
		z.skip_rows = z.cols ? shape_numel(&sk->shape) / z.cols : 0;
		if (!z.skip_rows || z.rows % z.skip_rows ||
		    sk->shape.dims[sk->shape.rank - 1] != z.cols)
			return 0;
		z.eps = attr_float(n, "epsilon", 1e-12f);
	} else {
		z.eps = attr_float(n, "epsilon", 1e-5f);
	}
	Norm *st = xmalloc(sizeof(*st));
	*st = z;
	st->threads = rt_threads_for(s, 8.0 * (double)shape_numel(&x->shape));
	*k = (FastKernel){ .run = norm_run, .free = free, .state = st,
			   .threads = st->threads };
	return 1;
}

/* ---- Attention, MultiHeadAttention -------------------------------------- */

typedef struct Attn {
	int32_t nin, nout;
	bool mha, split, causal;
	int kind; /* MS_MASK_ */
	int64_t B, N, S, L, P, T, h, vh, D, W, hq, hk, hv;
	float scale, filter;
	int threads;
	size_t work; /* bytes of a head's scratch */
	float *qkv;  /* Attention's projection [B S, W] (or MHA's q, k, v
			with their bias) */
	float *kv;   /* K and V of every head [B, N, T, h] each, where no
			present output takes them */
	float *mask; /* [B, S, T] */
	float *scratch; /* threads x work */
	float *pack;	/* threads x the projection's sgemm scratch */
	size_t pack_bytes;
	int64_t rows_per; /* the projection's rows per block */
} Attn;

static void attn_free(void *state)
{
	Attn *a = state;
	free(a->qkv);
	free(a->kv);
	free(a->mask);
	free(a->scratch);
	free(a->pack);
	free(a);
}

/* Attention's projection: rows of x [B S, D] times w [D, W] plus bias,
 * in blocks of rows on the threads. */
static void project(Attn *a, const float *x, const float *w,
		    const float *bias)
{
	int64_t rows = a->B * a->S, nb = (rows + a->rows_per - 1) / a->rows_per;
	int nt = a->threads;
	RT_PARALLEL_FOR
	for (int64_t blk = 0; blk < nb; blk++) {
		int64_t r0 = blk * a->rows_per;
		int64_t m = rows - r0 < a->rows_per ? rows - r0 : a->rows_per;
		float *pk = (float *)((char *)a->pack +
				      (size_t)rt_thread() * a->pack_bytes);
		float *y = a->qkv + r0 * a->W;
		sgemm(false, false, m, a->W, a->D, 1, x + r0 * a->D, a->D, w,
		      a->W, 0, y, a->W, pk);
		for (int64_t i = 0; bias && i < m; i++)
			for (int64_t j = 0; j < a->W; j++)
				y[i * a->W + j] += bias[j];
	}
}

static void heads_run(Attn *a, const MsAttn *m)
{
	int nt = a->threads;
	RT_PARALLEL_FOR
	for (int64_t i = 0; i < a->B * a->N; i++) {
		float *work = (float *)((char *)a->scratch +
					(size_t)rt_thread() * a->work);
		ms_attention_head(m, i / a->N, i % a->N, work);
	}
}

/* q, k or v [rows, w] plus bias into dst. */
static void plus_bias(float *dst, const float *x, const float *bias,
		      int64_t rows, int64_t w)
{
	for (int64_t i = 0; i < rows; i++)
		for (int64_t j = 0; j < w; j++)
			dst[i * w + j] = x[i * w + j] + bias[j];
}

static int attn_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	Attn *a = state;
	int64_t B = a->B, N = a->N, T = a->T, h = a->h, vh = a->vh;
	float *kb, *vb;
	MsAttn m = { .B = B, .N = N, .S = a->S, .T = T, .h = h, .hv = vh,
		     .scale = a->scale, .out = tensor_mut(out[0]),
		     .out_b = a->S * a->hv, .out_n = vh, .out_s = a->hv };
	const Tensor *mask, *ab, *pk = NULL, *pv = NULL;
	const Tensor *bt = in_at(in, a->nin, a->mha ? 3 : 2);
	const float *bias = bt ? bt->data : NULL;
	if (!a->mha) {
		const Tensor *past = in_at(in, a->nin, 4);
		float *pres = out_at(out, a->nout, 1);
		project(a, in[0]->data, in[1]->data, bias);
		pres = pres ? pres : a->kv;
		kb = pres, vb = pres + B * N * T * h;
		const float *pd = past ? past->data : NULL;
		ms_concat_kv(kb, pd, B, N, a->P, a->S, h, a->qkv + a->hq,
			     a->S * a->W, h, a->W);
		ms_concat_kv(vb, pd ? pd + B * N * a->P * h : NULL, B, N, a->P,
			     a->S, vh, a->qkv + a->hq + a->hk, a->S * a->W, vh,
			     a->W);
		m.q = a->qkv, m.q_b = a->S * a->W, m.q_n = h, m.q_s = a->W;
		mask = in_at(in, a->nin, 3);
		ab = in_at(in, a->nin, 5);
	} else {
		const float *q = in[0]->data;
		if (bias) {
			plus_bias(a->qkv, q, bias, B * a->S, a->hq);
			q = a->qkv;
		}
		m.q = q, m.q_b = a->S * a->hq, m.q_n = h, m.q_s = a->hq;
		mask = in_at(in, a->nin, 4);
		ab = in_at(in, a->nin, 5);
		pk = in_at(in, a->nin, 6), pv = in_at(in, a->nin, 7);
		if (a->split) {
			kb = (float *)in[1]->data, vb = (float *)in[2]->data;
		} else {
			const float *kd = in[1]->data, *vd = in[2]->data;
			if (bias) {
				float *kk = a->qkv + B * a->S * a->hq;
				float *vv = kk + B * a->L * a->hq;
				plus_bias(kk, kd, bias + a->hq, B * a->L, a->hq);
				plus_bias(vv, vd, bias + 2 * a->hq, B * a->L,
					  a->hv);
				kd = kk, vd = vv;
			}
			kb = out_at(out, a->nout, 1);
			vb = out_at(out, a->nout, 2);
			kb = kb ? kb : a->kv;
			vb = vb ? vb : a->kv + B * N * T * h;
			ms_concat_kv(kb, pk ? pk->data : NULL, B, N, a->P, a->L,
				     h, kd, a->L * a->hq, h, a->hq);
			ms_concat_kv(vb, pv ? pv->data : NULL, B, N, a->P, a->L,
				     vh, vd, a->L * a->hv, vh, a->hv);
		}
	}
	m.k = kb, m.k_b = N * T * h, m.k_n = T * h, m.k_t = h;
	m.v = vb, m.v_b = N * T * vh, m.v_n = T * vh, m.v_t = vh;
	if (a->kind != MS_MASK_NONE || a->causal) {
		ms_attention_mask(a->mask, mask ? mask->data : NULL, a->kind, B,
				  a->S, T, a->P, a->causal, a->filter);
		m.mask = a->mask;
	}
	if (ab) {
		m.bias = ab->data;
		m.bias_b = ab->shape.dims[0] == 1 ? 0 : ab->shape.dims[1] * a->S * T;
		m.bias_n = ab->shape.dims[1] == 1 ? 0 : a->S * T;
	}
	heads_run(a, &m);
	return 0;
}

/* The mask's kind from its shape (the reference checked it). */
static int mask_kind_of(const Value *m, int64_t b)
{
	if (!m)
		return MS_MASK_NONE;
	if (m->shape.rank == 1)
		return m->shape.dims[0] == 2 * b && b ? MS_MASK_END_START
						      : MS_MASK_END;
	return m->shape.rank == 2 ? MS_MASK_2D : MS_MASK_3D;
}

int contrib_attention(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	bool mha = n->op == OP_MS_MultiHeadAttention;
	if (!outs_planned(t) || !f32(out_val(p, n, 0)))
		return 0;
	for (int32_t i = 0; i < n->ninputs; i++) {
		const Value *v = rt_in_val(p, n, i);
		if (v && !(f32(v) || (i == (mha ? 4 : 3) &&
				      of_dtype(v, DT_INT32))))
			return 0;
	}
	Attn a = { .nin = n->ninputs, .nout = n->noutputs, .mha = mha,
		   .causal = attr_int(n, "unidirectional", 0) != 0,
		   .N = attr_int(n, "num_heads", 0),
		   .filter = attr_float(n, "mask_filter_value", -10000.0f) };
	const Value *x = rt_in_val(p, n, 0);
	if (x->shape.rank != 3 || a.N < 1)
		return 0;
	a.B = x->shape.dims[0], a.S = x->shape.dims[1];
	if (!mha) {
		const Value *w = rt_in_val(p, n, 1), *past = rt_in_val(p, n, 4);
		const int64_t *sz;
		a.D = x->shape.dims[2], a.W = w->shape.dims[1];
		if (attr_ints(n, "qkv_hidden_sizes", &sz) == 3)
			a.hq = sz[0], a.hk = sz[1], a.hv = sz[2];
		else
			a.hq = a.hk = a.hv = a.W / 3;
		a.P = past ? past->shape.dims[3] : 0;
		a.L = a.S;
		a.kind = mask_kind_of(rt_in_val(p, n, 3), a.B);
	} else {
		const Value *kv = rt_in_val(p, n, 1), *vv = rt_in_val(p, n, 2);
		const Value *pk = rt_in_val(p, n, 6);
		a.split = kv->shape.rank == 4;
		a.hq = a.hk = x->shape.dims[2];
		a.L = kv->shape.dims[a.split ? 2 : 1];
		a.hv = a.split ? vv->shape.dims[3] * a.N : vv->shape.dims[2];
		a.P = pk ? pk->shape.dims[2] : 0;
		a.kind = mask_kind_of(rt_in_val(p, n, 4), a.B);
	}
	a.T = a.P + a.L;
	a.h = a.hq / a.N, a.vh = a.hv / a.N;
	float sc = attr_float(n, "scale", 0.0f);
	a.scale = sc != 0 ? sc : (float)(1 / sqrt((double)a.h));
	MsAttn shape = { .S = a.S, .T = a.T, .h = a.h, .hv = a.vh };
	a.work = (ms_attention_work(&shape) + 63) / 64 * 64;
	double flops = 2.0 * (double)(a.B * a.N) * (double)(a.S * a.T) *
		       (double)(a.h + a.vh);
	if (!mha)
		flops += 2.0 * (double)(a.B * a.S) * (double)(a.D * a.W);
	a.threads = rt_threads_for(s, flops);
	int nt = a.threads > 0 ? a.threads : 1;
	a.rows_per = 96;
	a.pack_bytes = (sgemm_scratch(a.rows_per, a.W, a.D) + 63) / 64 * 64;
	size_t qkv = mha ? (size_t)(a.B * a.S * a.hq + a.B * a.L * (a.hq + a.hv))
			 : (size_t)(a.B * a.S * a.W);
	Attn *st = xmalloc(sizeof(*st));
	*st = a;
	st->qkv = xmalloc(qkv * sizeof(float) + 64);
	st->kv = xmalloc((size_t)(a.B * a.N * a.T * (a.h + a.vh)) *
			 sizeof(float) + 64);
	st->mask = xmalloc((size_t)(a.B * a.S * a.T) * sizeof(float) + 64);
	st->scratch = xmalloc((size_t)nt * a.work + 64);
	st->pack = mha ? NULL : xmalloc((size_t)nt * a.pack_bytes + 64);
	*k = (FastKernel){ .run = attn_run, .free = attn_free, .state = st,
			   .threads = a.threads };
	return 1;
}

/* ---- EmbedLayerNormalization ---------------------------------------------- */

typedef struct Embed {
	int32_t nin, nout;
	int64_t B, S, H, V, P, G; /* G: segment rows */
	bool seg, pids, pids_row;
	float eps;
	int threads;
} Embed;

/* Every id, position and segment id of the run within its table: -1
 * with an error naming the first that is not (checked before the rows
 * run on threads). */
static int embed_check(const Embed *e, const int32_t *ids,
		       const int32_t *seg, const int32_t *pids)
{
	for (int64_t r = 0; r < e->B * e->S; r++) {
		int64_t s = r % e->S, pi = pids ? pids[e->pids_row ? r : s] : s;
		if (ids[r] < 0 || ids[r] >= e->V)
			return error("input id %d (row %lld) is out of range "
				     "(the table has %lld rows)", ids[r],
				     (long long)r, (long long)e->V);
		if (pi < 0 || pi >= e->P)
			return error("position %lld is out of range (the table "
				     "has %lld rows)", (long long)pi,
				     (long long)e->P);
		if (seg && (seg[r] < 0 || seg[r] >= e->G))
			return error("segment id %d is out of range (the table "
				     "has %lld rows)", seg[r], (long long)e->G);
	}
	return 0;
}

static int embed_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const Embed *e = state;
	const Tensor *mt = in_at(in, e->nin, 7), *pt = in_at(in, e->nin, 8);
	const int32_t *ids = in[0]->data, *seg = e->seg ? in[1]->data : NULL;
	const int32_t *pids = pt ? pt->data : NULL;
	const float *word = in[2]->data, *pos = in[3]->data;
	const float *segemb = e->seg ? in[4]->data : NULL;
	const float *g = in[5]->data, *b = in[6]->data;
	float *y = tensor_mut(out[0]);
	float *sum = out_at(out, e->nout, 2);
	int32_t *mi = (int32_t *)out_at(out, e->nout, 1);
	int64_t H = e->H;
	if (embed_check(e, ids, seg, pids) < 0)
		return -1;
	int nt = e->threads;
	RT_PARALLEL_ROWS
	for (int64_t r = 0; r < e->B * e->S; r++) {
		int64_t s = r % e->S, pi = pids ? pids[e->pids_row ? r : s] : s;
		float *yr = y + r * H, m, inv;
		const float *wr = word + (int64_t)ids[r] * H, *pr = pos + pi * H;
		const float *sr = seg ? segemb + (int64_t)seg[r] * H : NULL;
		for (int64_t j = 0; j < H; j++)
			yr[j] = wr[j] + pr[j] + (sr ? sr[j] : 0.0f);
		if (sum)
			memcpy(sum + r * H, yr, (size_t)H * sizeof(float));
		norm_row(yr, H, false, e->eps, g, b, &m, &inv);
	}
	for (int64_t bi = 0; mi && bi < e->B; bi++) {
		const int32_t *mk = mt ? mt->data : NULL;
		mi[bi] = 0;
		for (int64_t s = 0; mk && s < e->S; s++)
			mi[bi] += mk[bi * e->S + s];
	}
	return 0;
}

int contrib_embed(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *ids = rt_in_val(p, n, 0), *w = rt_in_val(p, n, 2);
	const Value *pos = rt_in_val(p, n, 3), *se = rt_in_val(p, n, 4);
	const Value *pid = rt_in_val(p, n, 8);
	if (!outs_planned(t) || !of_dtype(ids, DT_INT32) || !f32(w) ||
	    !f32(pos) || (se && !f32(se)) || ids->shape.rank != 2)
		return 0;
	Embed e = { .nin = n->ninputs, .nout = n->noutputs, .B = ids->shape.dims[0], .S = ids->shape.dims[1],
		    .H = w->shape.dims[1], .V = w->shape.dims[0],
		    .P = pos->shape.dims[0], .G = se ? se->shape.dims[0] : 1,
		    .seg = se && rt_in_val(p, n, 1),
		    .pids = pid != NULL,
		    .eps = attr_float(n, "epsilon", 1e-12f) };
	e.pids_row = pid && shape_numel(&pid->shape) == e.B * e.S &&
		     pid->shape.dims[0] == e.B;
	Embed *st = xmalloc(sizeof(*st));
	*st = e;
	st->threads = rt_threads_for(s, 10.0 * (double)(e.B * e.S * e.H));
	*k = (FastKernel){ .run = embed_run, .free = free, .state = st,
			   .threads = st->threads };
	return 1;
}

/* ---- RotaryEmbedding -------------------------------------------------------- */

typedef struct Rotary {
	int64_t B, S, N, h, r, M;
	bool bnsh, inter, one;
	int threads;
} Rotary;

static int rotary_run(void *state, const Tensor *const *in,
		      Tensor *const *out)
{
	const Rotary *z = state;
	const float *x = in[0]->data, *cc = in[2]->data, *sc = in[3]->data;
	const int64_t *pos = in[1]->data;
	float *y = tensor_mut(out[0]);
	int64_t half = z->r / 2;
	for (int64_t bs = 0; bs < z->B * z->S; bs++) {
		int64_t p = z->one ? pos[0] + bs % z->S : pos[bs];
		if (p < 0 || p >= z->M)
			return error("position %lld is out of range (the caches "
				     "have %lld rows)", (long long)p,
				     (long long)z->M);
	}
	int nt = z->threads;
	RT_PARALLEL_ROWS
	for (int64_t bs = 0; bs < z->B * z->S; bs++) {
		int64_t b = bs / z->S, s = bs % z->S;
		int64_t p = z->one ? pos[0] + s : pos[bs];
		const float *co = cc + p * half, *si = sc + p * half;
		for (int64_t k = 0; k < z->N; k++) {
			int64_t off = z->bnsh ? ((b * z->N + k) * z->S + s) * z->h
					      : ((b * z->S + s) * z->N + k) * z->h;
			const float *xr = x + off;
			float *yr = y + off;
			for (int64_t i = 0; i < half; i++) {
				int64_t i1 = z->inter ? 2 * i : i;
				int64_t i2 = z->inter ? 2 * i + 1 : i + half;
				float a = xr[i1], e = xr[i2];
				yr[i1] = a * co[i] - e * si[i];
				yr[i2] = e * co[i] + a * si[i];
			}
			memmove(yr + z->r, xr + z->r,
				(size_t)(z->h - z->r) * sizeof(float));
		}
	}
	return 0;
}

int contrib_rotary(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0), *pi = rt_in_val(p, n, 1);
	const Value *cc = rt_in_val(p, n, 2);
	if (!outs_planned(t) || !f32(x) || !f32(cc) ||
	    !of_dtype(pi, DT_INT64) || x->shape.rank < 3)
		return 0;
	Rotary z = { .bnsh = x->shape.rank == 4, .M = cc->shape.dims[0],
		     .inter = attr_int(n, "interleaved", 0) != 0,
		     .one = shape_numel(&pi->shape) == 1 };
	int64_t nh = attr_int(n, "num_heads", 0);
	z.B = x->shape.dims[0];
	z.S = x->shape.dims[z.bnsh ? 2 : 1];
	z.r = 2 * cc->shape.dims[1];
	if (z.bnsh)
		z.N = x->shape.dims[1], z.h = x->shape.dims[3];
	else if (nh > 0)
		z.N = nh, z.h = x->shape.dims[2] / nh;
	else
		z.h = z.r, z.N = z.h ? x->shape.dims[2] / z.h : 0;
	Rotary *st = xmalloc(sizeof(*st));
	*st = z;
	st->threads = rt_threads_for(s, 6.0 * (double)shape_numel(&x->shape));
	*k = (FastKernel){ .run = rotary_run, .free = free, .state = st,
			   .threads = st->threads };
	return 1;
}

/* ---- the QLinear ops ------------------------------------------------------ */

static bool q8(const Value *v)
{
	return v && v->tkind == TK_TENSOR && shape_is_static(&v->shape) &&
	       (v->dtype == DT_UINT8 || v->dtype == DT_INT8);
}

/* A per-tensor parameter of the node: input i a constant of one value
 * (absent: dflt as the zero point), as float or int. */
static bool konst_one(const Prepared *p, const Node *n, int i, bool absent_ok)
{
	const Value *v = rt_in_val(p, n, i);
	if (!v)
		return absent_ok;
	return v->kind == VAL_WEIGHT && v->konst &&
	       shape_numel(&v->konst->shape) == 1;
}

static float scale_of(const Prepared *p, const Node *n, int i)
{
	return (float)tensor_get_f64(rt_in_val(p, n, i)->konst, 0);
}

static int32_t zero_of(const Prepared *p, const Node *n, int i)
{
	const Value *v = rt_in_val(p, n, i);
	return v ? (int32_t)tensor_get_i64(v->konst, 0) : 0;
}

/* QLinearAdd, QLinearMul: C's elements in order, B (or A) repeating
 * with a period (one value, or the trailing dims of C). */
typedef struct QBin {
	bool mul, s8;
	int64_t n, pa, pb; /* elements; A's and B's periods (n: none) */
	float as, bs, cs;
	int32_t az, bz, cz;
	int threads;
} QBin;

RT_HOT_FN(static, void, qbin_u8,
	  (const QBin *q, const uint8_t *a, const uint8_t *b, uint8_t *c, int64_t lo, int64_t hi),
	  (q, a, b, c, lo, hi))
{
	for (int64_t i = lo; i < hi; i++) {
		float va = q->as * (float)((int32_t)a[i % q->pa] - q->az);
		float vb = q->bs * (float)((int32_t)b[i % q->pb] - q->bz);
		float v = (q->mul ? va * vb : va + vb) / q->cs;
		float r = rintf(v) + (float)q->cz;
		r = r < 0 ? 0 : r > 255 ? 255 : r;
		c[i] = (uint8_t)(v == v ? r : (float)q->cz);
	}
}

RT_HOT_FN(static, void, qbin_s8,
	  (const QBin *q, const int8_t *a, const int8_t *b, int8_t *c, int64_t lo, int64_t hi),
	  (q, a, b, c, lo, hi))
{
	for (int64_t i = lo; i < hi; i++) {
		float va = q->as * (float)((int32_t)a[i % q->pa] - q->az);
		float vb = q->bs * (float)((int32_t)b[i % q->pb] - q->bz);
		float v = (q->mul ? va * vb : va + vb) / q->cs;
		float r = rintf(v) + (float)q->cz;
		r = r < -128 ? -128 : r > 127 ? 127 : r;
		c[i] = (int8_t)(v == v ? r : (float)q->cz);
	}
}

/* The same where A and B have C's shape (no period). */
RT_HOT_FN(static, void, qbin_same,
	  (const QBin *q, const void *a, const void *b, void *c, int64_t lo, int64_t hi),
	  (q, a, b, c, lo, hi))
{
	float lo_q = q->s8 ? -128 : 0, hi_q = q->s8 ? 127 : 255;
	for (int64_t i = lo; i < hi; i++) {
		int32_t x = q->s8 ? ((const int8_t *)a)[i]
				  : ((const uint8_t *)a)[i];
		int32_t w = q->s8 ? ((const int8_t *)b)[i]
				  : ((const uint8_t *)b)[i];
		float va = q->as * (float)(x - q->az);
		float vb = q->bs * (float)(w - q->bz);
		float v = (q->mul ? va * vb : va + vb) / q->cs;
		float r = rintf(v) + (float)q->cz;
		r = r < lo_q ? lo_q : r > hi_q ? hi_q : r;
		r = v == v ? r : (float)q->cz;
		if (q->s8)
			((int8_t *)c)[i] = (int8_t)r;
		else
			((uint8_t *)c)[i] = (uint8_t)r;
	}
}

static int qbin_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const QBin *q = state;
	enum { BLK = 1 << 14 };
	int64_t nb = (q->n + BLK - 1) / BLK;
	int nt = q->threads;
	RT_PARALLEL_FOR
	for (int64_t k = 0; k < nb; k++) {
		int64_t lo = k * BLK, hi = lo + BLK < q->n ? lo + BLK : q->n;
		if (q->pa == q->n && q->pb == q->n)
			qbin_same(q, in[0]->data, in[3]->data,
				  tensor_mut(out[0]), lo, hi);
		else if (q->s8)
			qbin_s8(q, in[0]->data, in[3]->data, tensor_mut(out[0]),
				lo, hi);
		else
			qbin_u8(q, in[0]->data, in[3]->data, tensor_mut(out[0]),
				lo, hi);
	}
	return 0;
}

/* The period of an operand of shape s within y: its element count if it
 * is y's shape or y's trailing dims (after leading 1s), else 0. */
static int64_t period(const Shape *s, const Shape *y)
{
	int64_t e = shape_numel(s);
	if (e == 1)
		return 1;
	int32_t lead = 0;
	while (lead < s->rank && s->dims[lead] == 1)
		lead++;
	if (s->rank - lead > y->rank)
		return 0;
	for (int32_t i = lead; i < s->rank; i++)
		if (s->dims[i] != y->dims[y->rank - s->rank + i])
			return 0;
	return e;
}

int contrib_qlinear_binary(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *a = rt_in_val(p, n, 0), *b = rt_in_val(p, n, 3);
	const Value *y = out_val(p, n, 0);
	if (!q8(a) || !q8(b) || !q8(y) || !t->out[0] ||
	    !konst_one(p, n, 1, false) || !konst_one(p, n, 2, true) ||
	    !konst_one(p, n, 4, false) || !konst_one(p, n, 5, true) ||
	    !konst_one(p, n, 6, false) || !konst_one(p, n, 7, true))
		return 0;
	QBin q = { .mul = n->op == OP_MS_QLinearMul,
		   .s8 = y->dtype == DT_INT8, .n = shape_numel(&y->shape),
		   .pa = period(&a->shape, &y->shape),
		   .pb = period(&b->shape, &y->shape),
		   .as = scale_of(p, n, 1), .az = zero_of(p, n, 2),
		   .bs = scale_of(p, n, 4), .bz = zero_of(p, n, 5),
		   .cs = scale_of(p, n, 6), .cz = zero_of(p, n, 7) };
	if (!q.pa || !q.pb)
		return 0;
	QBin *st = xmalloc(sizeof(*st));
	*st = q;
	st->threads = rt_threads_for(s, 8.0 * (double)q.n);
	*k = (FastKernel){ .run = qbin_run, .free = free, .state = st,
			   .threads = st->threads };
	return 1;
}

/* QLinearSigmoid, QLinearLeakyRelu: a table of the 256 values, made once
 * from the constant scales and zero points. */
typedef struct QTable {
	uint8_t table[256];
	int64_t n;
} QTable;

static int qtable_run(void *state, const Tensor *const *in,
		      Tensor *const *out)
{
	const QTable *q = state;
	const uint8_t *x = in[0]->data;
	uint8_t *y = tensor_mut(out[0]);
	for (int64_t i = 0; i < q->n; i++)
		y[i] = q->table[x[i]];
	return 0;
}

int contrib_qlinear_table(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0), *y = out_val(p, n, 0);
	if (!q8(x) || !q8(y) || !t->out[0] || !konst_one(p, n, 1, false) ||
	    !konst_one(p, n, 2, true) || !konst_one(p, n, 3, false) ||
	    !konst_one(p, n, 4, true))
		return 0;
	QTable *st = xmalloc(sizeof(*st));
	st->n = shape_numel(&x->shape);
	ms_qlinear_table_of(n->op, x->dtype, scale_of(p, n, 1),
			    zero_of(p, n, 2), scale_of(p, n, 3),
			    zero_of(p, n, 4), attr_float(n, "alpha", 0.01f),
			    st->table);
	*k = (FastKernel){ .run = qtable_run, .free = free, .state = st };
	return 1;
}

/* QLinearConcat: each input through its requantization table (a copy
 * where it is the identity). */
typedef struct QConcat {
	int32_t nin;
	int64_t outer, ylen; /* y's elements per outer index */
	int64_t *len;	     /* per input: its elements per outer index */
	uint8_t (*table)[256];
	bool *copy;
} QConcat;

static void qconcat_free(void *state)
{
	QConcat *q = state;
	free(q->len);
	free(q->table);
	free(q->copy);
	free(q);
}

static int qconcat_run(void *state, const Tensor *const *in,
		       Tensor *const *out)
{
	const QConcat *q = state;
	uint8_t *y = tensor_mut(out[0]);
	for (int64_t o = 0; o < q->outer; o++) {
		uint8_t *yo = y + o * q->ylen;
		for (int32_t j = 0; j < q->nin; j++) {
			const uint8_t *x = (const uint8_t *)in[2 + 3 * j]->data +
					   o * q->len[j];
			if (q->copy[j])
				memcpy(yo, x, (size_t)q->len[j]);
			else
				for (int64_t i = 0; i < q->len[j]; i++)
					yo[i] = q->table[j][x[i]];
			yo += q->len[j];
		}
	}
	return 0;
}

int contrib_qlinear_concat(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	const Value *y = out_val(p, n, 0);
	if (!q8(y) || !t->out[0] || (n->ninputs - 2) % 3 ||
	    !konst_one(p, n, 0, false) || !konst_one(p, n, 1, true))
		return 0;
	int32_t r = y->shape.rank, nin = (n->ninputs - 2) / 3;
	int64_t axis = attr_int(n, "axis", 0);
	axis += axis < 0 ? r : 0;
	if (axis < 0 || axis >= r)
		return 0;
	for (int32_t j = 0; j < nin; j++)
		if (!q8(rt_in_val(p, n, 2 + 3 * j)) ||
		    !konst_one(p, n, 3 + 3 * j, false) ||
		    !konst_one(p, n, 4 + 3 * j, true))
			return 0;
	QConcat *q = xmalloc(sizeof(*q));
	q->nin = nin;
	q->outer = 1;
	for (int32_t i = 0; i < axis; i++)
		q->outer *= y->shape.dims[i];
	q->ylen = q->outer ? shape_numel(&y->shape) / q->outer : 0;
	q->len = xmalloc((size_t)nin * sizeof(int64_t));
	q->table = xmalloc((size_t)nin * sizeof(*q->table));
	q->copy = xmalloc((size_t)nin * sizeof(bool));
	float ys = scale_of(p, n, 0);
	int32_t yz = zero_of(p, n, 1);
	for (int32_t j = 0; j < nin; j++) {
		const Value *x = rt_in_val(p, n, 2 + 3 * j);
		q->len[j] = q->outer ? shape_numel(&x->shape) / q->outer : 0;
		ms_qlinear_table_of(OP_MS_QLinearConcat, y->dtype,
				    scale_of(p, n, 3 + 3 * j),
				    zero_of(p, n, 4 + 3 * j), ys, yz, 0,
				    q->table[j]);
		q->copy[j] = true;
		for (int32_t v = 0; v < 256; v++)
			q->copy[j] = q->copy[j] && q->table[j][v] == v;
	}
	*k = (FastKernel){ .run = qconcat_run, .free = qconcat_free,
			   .state = q };
	return 1;
}

/* QLinearGlobalAveragePool: integer sums of x - x_zp per channel, times
 * x_scale / (y_scale n) in float. */
typedef struct QGap {
	bool last, s8;
	int64_t n, ch, img;
	float scale;
	int32_t xz, yz;
	int threads;
} QGap;

static int32_t q8_at(const void *p, bool s8, int64_t i)
{
	return s8 ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

static int qgap_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const QGap *q = state;
	const void *x = in[0]->data;
	void *y = tensor_mut(out[0]);
	int nt = q->threads;
	int dt = q->s8 ? DT_INT8 : DT_UINT8;
	RT_PARALLEL_FOR
	for (int64_t bc = 0; bc < q->n * q->ch; bc++) {
		int64_t b = bc / q->ch, c = bc % q->ch, sum = 0;
		for (int64_t i = 0; i < q->img; i++)
			sum += q8_at(x, q->s8, q->last ? (b * q->img + i) * q->ch + c
						       : bc * q->img + i);
		sum -= (int64_t)q->xz * q->img;
		int32_t v = ms_q_store((float)sum * q->scale, q->yz, dt);
		if (q->s8)
			((int8_t *)y)[bc] = (int8_t)v;
		else
			((uint8_t *)y)[bc] = (uint8_t)v;
	}
	return 0;
}

int contrib_qlinear_gap(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0), *y = out_val(p, n, 0);
	if (!q8(x) || !q8(y) || !t->out[0] || x->shape.rank < 3 ||
	    !konst_one(p, n, 1, false) || !konst_one(p, n, 2, false) ||
	    !konst_one(p, n, 3, false) || !konst_one(p, n, 4, false))
		return 0;
	QGap q = { .last = attr_int(n, "channels_last", 0) != 0,
		   .s8 = x->dtype == DT_INT8, .n = x->shape.dims[0],
		   .xz = zero_of(p, n, 2), .yz = zero_of(p, n, 4) };
	q.ch = x->shape.dims[q.last ? x->shape.rank - 1 : 1];
	q.img = q.n && q.ch ? shape_numel(&x->shape) / (q.n * q.ch) : 0;
	if (!q.img)
		return 0;
	q.scale = scale_of(p, n, 1) / (scale_of(p, n, 3) * (float)q.img);
	QGap *st = xmalloc(sizeof(*st));
	*st = q;
	st->threads = rt_threads_for(s, 2.0 * (double)shape_numel(&x->shape));
	*k = (FastKernel){ .run = qgap_run, .free = free, .state = st,
			   .threads = st->threads };
	return 1;
}

/* QLinearSoftmax: ONNX Runtime's table, made once, and its rows. */
typedef struct QSoftmax {
	float table[256];
	bool s8;
	int64_t outer, d, inner;
	float ys;
	int32_t yz;
	int threads;
} QSoftmax;

static int qsoftmax_run(void *state, const Tensor *const *in,
			Tensor *const *out)
{
	const QSoftmax *q = state;
	const uint8_t *x = in[0]->data;
	uint8_t *y = tensor_mut(out[0]);
	int nt = q->threads;
	RT_PARALLEL_ROWS
	for (int64_t r = 0; r < q->outer * q->inner; r++) {
		int64_t o = r / q->inner, i = r % q->inner;
		ms_qsoftmax_row(x + o * q->d * q->inner + i,
				y + o * q->d * q->inner + i, q->d, q->inner,
				q->table, q->s8, q->ys, q->yz);
	}
	return 0;
}

int contrib_qlinear_softmax(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0), *y = out_val(p, n, 0);
	if (!q8(x) || !q8(y) || !t->out[0] || !konst_one(p, n, 1, false) ||
	    !konst_one(p, n, 3, false) || !konst_one(p, n, 4, true))
		return 0;
	int32_t r = x->shape.rank;
	int64_t opset = attr_int(n, "opset", 13);
	int64_t axis = attr_int(n, "axis", opset < 13 ? 1 : -1);
	axis += axis < 0 ? r : 0;
	if (axis < 0 || axis >= r)
		return 0;
	QSoftmax *q = xmalloc(sizeof(*q));
	q->s8 = x->dtype == DT_INT8;
	q->outer = q->d = q->inner = 1;
	for (int32_t i = 0; i < r; i++)
		*(i < axis ? &q->outer
		  : i == axis || opset < 13 ? &q->d
					    : &q->inner) *= x->shape.dims[i];
	ms_qsoftmax_table(scale_of(p, n, 1), q->d, q->s8, q->table);
	q->ys = floorf(1.0f / scale_of(p, n, 3));
	q->yz = zero_of(p, n, 4);
	q->threads = rt_threads_for(s, 12.0 * (double)shape_numel(&x->shape));
	*k = (FastKernel){ .run = qsoftmax_run, .free = free, .state = q,
			   .threads = q->threads };
	return 1;
}

/* QGemm with a constant B: B - b_zp packed once as int16 columns, A's
 * rows less a_zp in int16, int32 dot products (the compiler's vector
 * multiply-adds), then C and the scales as the reference applies them. */
typedef struct QGemm {
	int64_t m, n, k;
	bool ta, s8a, quant, ys8;
	int16_t *bt; /* [n][k] */
	float *scale; /* per column: alpha a_scale b_scale [/ y_scale] */
	int32_t *c;   /* [m][n] or NULL: C broadcast */
	float *bias;  /* per column, added to the float result, or NULL */
	int32_t az, yz;
	int threads;
} QGemm;

static void qgemm_free(void *state)
{
	QGemm *q = state;
	free(q->bt);
	free(q->scale);
	free(q->c);
	free(q->bias);
	free(q);
}

RT_HOT_FN(static, int32_t, dot16,
	  (const int16_t *a, const int16_t *b, int64_t k),
	  (a, b, k))
{
	int32_t s = 0;
	for (int64_t i = 0; i < k; i++)
		s += (int32_t)a[i] * b[i];
	return s;
}

static int qgemm_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const QGemm *q = state;
	const void *a = in[0]->data;
	void *y = tensor_mut(out[0]);
	int nt = q->threads;
	RT_PARALLEL_FOR
	for (int64_t i = 0; i < q->m; i++) {
		int16_t row[4096];
		for (int64_t p = 0; p < q->k; p++)
			row[p] = (int16_t)(q8_at(a, q->s8a, q->ta ? p * q->m + i
							      : i * q->k + p) -
					   q->az);
		for (int64_t j = 0; j < q->n; j++) {
			int32_t acc = dot16(row, q->bt + j * q->k, q->k);
			if (q->c)
				acc += q->c[i * q->n + j];
			float v = (float)acc * q->scale[j];
			int64_t o = i * q->n + j;
			if (!q->quant)
				((float *)y)[o] = q->bias ? v + q->bias[j] : v;
			else if (q->ys8)
				((int8_t *)y)[o] = (int8_t)ms_q_store(v, q->yz,
								      DT_INT8);
			else
				((uint8_t *)y)[o] =
					(uint8_t)ms_q_store(v, q->yz, DT_UINT8);
		}
	}
	return 0;
}

/* Constant 8-bit B less its zero point bz (absent: 0; one value or per
 * column) as int16 columns [n][k] (tb: B is [n, k]). */
static int16_t *pack_b(const Value *b, const Value *bz, int64_t n, int64_t k,
		       bool tb)
{
	int16_t *bt = xmalloc((size_t)(n * k + 1) * sizeof(int16_t));
	int64_t nbz = bz ? shape_numel(&bz->shape) : 0;
	for (int64_t j = 0; j < n; j++) {
		int32_t zb = nbz ? (int32_t)tensor_get_i64(bz->konst,
							   nbz > 1 ? j : 0)
				 : 0;
		for (int64_t pp = 0; pp < k; pp++)
			bt[j * k + pp] = (int16_t)(q8_at(
				b->konst->data, b->dtype == DT_INT8,
				tb ? j * k + pp : pp * n + j) - zb);
	}
	return bt;
}

int contrib_qgemm(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *a = rt_in_val(p, n, 0), *b = rt_in_val(p, n, 3);
	const Value *bs = rt_in_val(p, n, 4), *bz = rt_in_val(p, n, 5);
	const Value *c = rt_in_val(p, n, 6), *y = out_val(p, n, 0);
	bool quant = rt_in_val(p, n, 7) != NULL;
	if (!q8(a) || !q8(b) || !y || !t->out[0] || b->kind != VAL_WEIGHT ||
	    !b->konst || !bs->konst || !bz || !bz->konst ||
	    !konst_one(p, n, 1, false) || !konst_one(p, n, 2, false) ||
	    (c && !c->konst) ||
	    (quant && (!konst_one(p, n, 7, false) || !konst_one(p, n, 8, true))))
		return 0;
	QGemm q = { .ta = attr_int(n, "transA", 0) != 0,
		    .s8a = a->dtype == DT_INT8, .quant = quant,
		    .ys8 = y->dtype == DT_INT8, .az = zero_of(p, n, 2),
		    .yz = quant ? zero_of(p, n, 8) : 0 };
	bool tb = attr_int(n, "transB", 0) != 0;
	q.m = y->shape.dims[0], q.n = y->shape.dims[1];
	q.k = a->shape.dims[q.ta ? 0 : 1];
	if (q.k > 4096)
		return 0;
	int64_t nbs = shape_numel(&bs->shape);
	float alpha = attr_float(n, "alpha", 1.0f), as = scale_of(p, n, 1);
	float ys = quant ? scale_of(p, n, 7) : 1;
	QGemm *st = xmalloc(sizeof(*st));
	*st = q;
	st->bt = pack_b(b, bz, q.n, q.k, tb);
	st->scale = xmalloc((size_t)(q.n + 1) * sizeof(float));
	st->c = NULL;
	st->bias = NULL;
	for (int64_t j = 0; j < q.n; j++) {
		/* the reference's order: alpha a_scale b_scale, / y_scale */
		float sc = alpha * as *
			   (float)tensor_get_f64(bs->konst, nbs > 1 ? j : 0);
		st->scale[j] = quant ? sc / ys : sc;
	}
	if (c) {
		const Shape *cs = &c->shape;
		st->c = xmalloc((size_t)(q.m * q.n + 1) * sizeof(int32_t));
		for (int64_t i = 0; i < q.m; i++)
			for (int64_t j = 0; j < q.n; j++) {
				int64_t ci = 0, cr = cs->rank;
				if (cr >= 1 && cs->dims[cr - 1] != 1)
					ci += j;
				if (cr == 2 && cs->dims[0] != 1)
					ci += i * cs->dims[1];
				st->c[i * q.n + j] =
					(int32_t)tensor_get_i64(c->konst, ci);
			}
	}
	st->threads = rt_threads_for(s, 2.0 * (double)(q.m * q.n * q.k));
	*k = (FastKernel){ .run = qgemm_run, .free = qgemm_free, .state = st,
			   .threads = st->threads };
	return 1;
}

/* QLinearAveragePool, 2-D, either layout, explicit pads (or none): the
 * integer sum of x - x_zp over each window's taps inside the input,
 * times x_scale over the count (the taps inside the padded input with
 * count_include_pad), quantized. */
typedef struct QPool {
	bool last, s8, incl;
	int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, peh, pew;
	float xs, ys;
	int32_t xz, yz;
	int threads;
} QPool;

static int qpool_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const QPool *q = state;
	const void *x = in[0]->data;
	void *y = tensor_mut(out[0]);
	int dt = q->s8 ? DT_INT8 : DT_UINT8;
	int nt = q->threads;
	RT_PARALLEL_FOR
	for (int64_t bc = 0; bc < q->n * q->c; bc++) {
		int64_t b = bc / q->c, ch = bc % q->c;
		for (int64_t oy = 0; oy < q->oh; oy++)
			for (int64_t ox = 0; ox < q->ow; ox++) {
				int64_t y0 = oy * q->sh - q->ph, x0 = ox * q->sw - q->pw;
				int64_t y1 = y0 + q->kh, x1 = x0 + q->kw;
				int64_t py1 = y1 < q->h + q->peh ? y1 : q->h + q->peh;
				int64_t px1 = x1 < q->w + q->pew ? x1 : q->w + q->pew;
				int64_t ya = y0 > 0 ? y0 : 0, xa = x0 > 0 ? x0 : 0;
				int64_t yb = y1 < q->h ? y1 : q->h;
				int64_t xb = x1 < q->w ? x1 : q->w;
				int64_t sum = 0, cnt = q->incl
							       ? (py1 - y0) * (px1 - x0)
							       : (yb - ya) * (xb - xa);
				for (int64_t i = ya; i < yb; i++)
					for (int64_t j = xa; j < xb; j++)
						sum += q8_at(x, q->s8,
							     q->last ? ((b * q->h + i) * q->w + j) * q->c + ch
								     : (bc * q->h + i) * q->w + j) -
						       q->xz;
				float v = cnt > 0 ? q->xs * (float)sum / (float)cnt : 0;
				int32_t r = ms_q_store(v / q->ys, q->yz, dt);
				int64_t o = q->last ? ((b * q->oh + oy) * q->ow + ox) * q->c + ch
						    : (bc * q->oh + oy) * q->ow + ox;
				if (q->s8)
					((int8_t *)y)[o] = (int8_t)r;
				else
					((uint8_t *)y)[o] = (uint8_t)r;
			}
	}
	return 0;
}

int contrib_qlinear_avgpool(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0), *y = out_val(p, n, 0);
	const int64_t *ks, *st, *pads;
	const char *ap = attr_str(n, "auto_pad", "NOTSET");
	if (!q8(x) || !q8(y) || !t->out[0] || x->shape.rank != 4 ||
	    !konst_one(p, n, 1, false) || !konst_one(p, n, 2, true) ||
	    !konst_one(p, n, 3, false) || !konst_one(p, n, 4, true) ||
	    attr_ints(n, "kernel_shape", &ks) != 2 ||
	    (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")))
		return 0;
	QPool q = { .last = attr_int(n, "channels_last", 0) != 0,
		    .s8 = x->dtype == DT_INT8,
		    .incl = attr_int(n, "count_include_pad", 0) != 0,
		    .kh = ks[0], .kw = ks[1], .sh = 1, .sw = 1,
		    .xs = scale_of(p, n, 1), .xz = zero_of(p, n, 2),
		    .ys = scale_of(p, n, 3), .yz = zero_of(p, n, 4) };
	const int64_t *d = x->shape.dims, *e = y->shape.dims;
	q.n = d[0];
	q.c = q.last ? d[3] : d[1];
	q.h = q.last ? d[1] : d[2], q.w = q.last ? d[2] : d[3];
	q.oh = q.last ? e[1] : e[2], q.ow = q.last ? e[2] : e[3];
	if (attr_ints(n, "strides", &st) == 2)
		q.sh = st[0], q.sw = st[1];
	if (!strcmp(ap, "NOTSET") && attr_ints(n, "pads", &pads) == 4)
		q.ph = pads[0], q.pw = pads[1], q.peh = pads[2], q.pew = pads[3];
	QPool *sp = xmalloc(sizeof(*sp));
	*sp = q;
	sp->threads = rt_threads_for(s, (double)(q.n * q.c * q.oh * q.ow *
						 q.kh * q.kw));
	*k = (FastKernel){ .run = qpool_run, .free = free, .state = sp,
			   .threads = sp->threads };
	return 1;
}

/* MatMulIntegerToFloat of a constant 2-D B: QGemm's kernel over A's rows,
 * a_scale b_scale per column and the bias added in float. */
int contrib_mm_int_float(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *a = rt_in_val(p, n, 0), *b = rt_in_val(p, n, 1);
	const Value *bs = rt_in_val(p, n, 3), *bz = rt_in_val(p, n, 5);
	const Value *bias = rt_in_val(p, n, 6), *y = out_val(p, n, 0);
	if (!q8(a) || !q8(b) || !f32(y) || !t->out[0] || a->shape.rank < 1 ||
	    b->shape.rank != 2 || b->kind != VAL_WEIGHT || !b->konst ||
	    !bs->konst || (bz && !bz->konst) || (bias && !bias->konst) ||
	    !konst_one(p, n, 2, false) || !konst_one(p, n, 4, true))
		return 0;
	QGemm q = { .s8a = a->dtype == DT_INT8, .az = zero_of(p, n, 4) };
	q.k = b->shape.dims[0], q.n = b->shape.dims[1];
	q.m = q.k ? shape_numel(&a->shape) / q.k : 0;
	if (q.k > 4096 || a->shape.dims[a->shape.rank - 1] != q.k)
		return 0;
	int64_t nbs = shape_numel(&bs->shape);
	float as = scale_of(p, n, 2);
	QGemm *st = xmalloc(sizeof(*st));
	*st = q;
	st->bt = pack_b(b, bz, q.n, q.k, false);
	st->scale = xmalloc((size_t)(q.n + 1) * sizeof(float));
	st->c = NULL;
	st->bias = bias ? xmalloc((size_t)(q.n + 1) * sizeof(float)) : NULL;
	for (int64_t j = 0; j < q.n; j++) {
		st->scale[j] = as * (float)tensor_get_f64(bs->konst,
							  nbs > 1 ? j : 0);
		if (bias)
			st->bias[j] = (float)tensor_get_f64(bias->konst, j);
	}
	st->threads = rt_threads_for(s, 2.0 * (double)(q.m * q.n * q.k));
	*k = (FastKernel){ .run = qgemm_run, .free = qgemm_free, .state = st,
			   .threads = st->threads };
	return 1;
}
