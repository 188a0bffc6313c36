/*
 * compiler/ops/contrib_attn.c - ONNX Runtime's transformer contrib ops
 * (com.microsoft), with the semantics of its docs and CPU kernels:
 *
 *   Attention  input [B, S, D], weights [D, Hq + Hk + Hv], bias?,
 *              mask_index?, past? [2, B, N, P, h], attention_bias?
 *              [B|1, N|1, S, T]; num_heads N, qkv_hidden_sizes (absent:
 *              three equal thirds), unidirectional, mask_filter_value
 *              (-10000), scale (absent or 0: 1/sqrt(h)) -> output [B, S,
 *              Hv], present? [2, B, N, T, h] (T = P + S)
 *   MultiHeadAttention  query [B, S, Hq], key and value either [B, L, Hk]
 *              and [B, L, Hv] (projected here: bias? [Hq + Hk + Hv]
 *              added) or [B, N, L, h] and [B, N, L, hv] (heads already
 *              split, no bias), key_padding_mask?, attention_bias?,
 *              past_key? and past_value? [B, N, P, h]; num_heads,
 *              mask_filter_value, scale, unidirectional -> output,
 *              present_key?, present_value? [B, N, T, h]
 *
 * Both run one attention per batch row and head: scores = scale Q K^T
 * plus the mask and attention_bias, a softmax over T in fp32, times V.
 * The mask is additive, as ONNX Runtime builds it (PrepareMask): from
 * mask_index (int32) of shape [B] (keys at or past mask_index[b] get
 * mask_filter_value), [2B] (also keys before the second half's start),
 * [B, T] or [B, S, T] (0 gets mask_filter_value, anything above 0 gets
 * 0); unidirectional adds mask_filter_value to every key after the
 * query's position (P + s).  ONNX Runtime's CPU kernels take no other
 * form (its [B, 1, M, M] and [3B + 2] forms are GPU-only), nor do these
 * ops: they are refused by name, as are do_rotary, the shared past /
 * present buffer and MultiHeadAttention's packed QKV and KV inputs and
 * its qk output.
 *
 *   EmbedLayerNormalization input_ids [B, S], segment_ids?, word
 *              embeddings [V, H], position embeddings [P, H], segment
 *              embeddings?, gamma, beta, mask? [B, S], position_ids?
 *              ([B, S] or [1, S]; absent: 0..S-1); epsilon (1e-12) ->
 *              output (LayerNorm of the embeddings' sum) [B, S, H],
 *              mask_index [B] (int32: the mask's sum per row, 0 without
 *              a mask), embedding_sum? [B, S, H]; an id out of range is
 *              an error naming it
 *   RotaryEmbedding input [B, S, N h] or [B, N, S, h], position_ids
 *              (int64 [1]: the first position, or [B, S]), cos_cache and
 *              sin_cache [M, r / 2]; interleaved, num_heads,
 *              rotary_embedding_dim r (absent: h, from the caches) ->
 *              each head's first r values rotated pairwise (halves, or
 *              neighbours when interleaved), the rest copied; scale is
 *              ignored, as ONNX Runtime's CPU kernel does
 *
 * fp32 only (ONNX Runtime's CPU kernels take no other), on sgemm.
 */
#include <math.h>
#include <string.h>

#include "opimpl.h"

/* ---- shared ------------------------------------------------------------- */

static int check_f32(OpCtx *c, int i)
{
	return op_check_dtype(c, i, DTS(DT_FLOAT));
}

/* A dim a must equal dim b where both are known. */
static int same_dim(OpCtx *c, int64_t a, int64_t b, const char *what)
{
	if (a >= 0 && b >= 0 && a != b)
		return op_error(c, "%s is %lld here and %lld there", what,
				(long long)a, (long long)b);
	return 0;
}

/* Input i of known rank must have rank r; its shape string for errors. */
static int need_rank(OpCtx *c, int i, int32_t lo, int32_t hi,
		     const char *what)
{
	Value *v = op_in(c, i);
	char s[128];
	if (!v || v->shape.rank < 0 ||
	    (v->shape.rank >= lo && v->shape.rank <= hi))
		return 0;
	return op_error(c, "input %d (%s, '%s') has shape %s, expected rank "
			"%d%s", i, what, v->name,
			shape_str(&v->shape, s, sizeof(s)), lo,
			lo == hi ? "" : " or more");
}

/* The kind of mask input i for batch b, query length s and key length
 * t (-1 where unknown): one of the forms gearc takes, else an error. */
static int mask_kind(OpCtx *c, int i, int64_t b, int64_t s, int64_t t,
		     int *kind)
{
	Value *m = op_in(c, i);
	char buf[128];
	*kind = MS_MASK_NONE;
	if (!m)
		return 0;
	if (op_check_dtype(c, i, DTS(DT_INT32)) < 0)
		return -1;
	const Shape *ms = &m->shape;
	int64_t d0 = shape_dim(ms, 0);
	if (ms->rank == 1 && (d0 < 0 || b < 0 || d0 == b || d0 == 2 * b)) {
		*kind = d0 >= 0 && b >= 0 && d0 == 2 * b && b ? MS_MASK_END_START
							      : MS_MASK_END;
		return 0;
	}
	if (ms->rank == 2 && (same_dim(c, d0, b, "the batch") < 0 ||
			      same_dim(c, ms->dims[1], t,
				       "the key length") < 0))
		return -1;
	if (ms->rank == 3 && (same_dim(c, d0, b, "the batch") < 0 ||
			      same_dim(c, ms->dims[1], s,
				       "the query length") < 0 ||
			      same_dim(c, ms->dims[2], t,
				       "the key length") < 0))
		return -1;
	if (ms->rank == 2 || ms->rank == 3) {
		*kind = ms->rank == 2 ? MS_MASK_2D : MS_MASK_3D;
		return 0;
	}
	return op_error(c, "input %d (mask, '%s') has shape %s: supported "
			"are [batch] (valid lengths), [2 * batch] (ends, "
			"starts), [batch, total_length] and [batch, length, "
			"total_length] (1 attends, 0 does not)", i, m->name,
			shape_str(ms, buf, sizeof(buf)));
}

/* attention_bias (input i) broadcasts as [B|1, N|1, S, T]. */
static int check_attn_bias(OpCtx *c, int i, int64_t b, int64_t n, int64_t s,
			   int64_t t)
{
	Value *v = op_in(c, i);
	char buf[128];
	if (!v || v->shape.rank < 0)
		return 0;
	const Shape *x = &v->shape;
	int64_t want[4] = { b, n, s, t };
	bool ok = x->rank == 4;
	for (int32_t k = 0; ok && k < 4; k++)
		ok = x->dims[k] < 0 || want[k] < 0 || x->dims[k] == want[k] ||
		     (k < 2 && x->dims[k] == 1);
	if (ok)
		return check_f32(c, i);
	return op_error(c, "input %d (attention_bias, '%s') has shape %s, "
			"expected [%lld or 1, %lld or 1, %lld, %lld]", i,
			v->name, shape_str(x, buf, sizeof(buf)), (long long)b,
			(long long)n, (long long)s, (long long)t);
}

void ms_attention_mask(float *mask, const int32_t *mi, int kind, int64_t b,
		       int64_t s, int64_t t, int64_t past, bool causal,
		       float filter)
{
	for (int64_t bi = 0; bi < b; bi++)
		for (int64_t si = 0; si < s; si++) {
			float *row = mask + (bi * s + si) * t;
			for (int64_t j = 0; j < t; j++) {
				bool off = false;
				if (kind == MS_MASK_END ||
				    kind == MS_MASK_END_START)
					off = j >= mi[bi] ||
					      (kind == MS_MASK_END_START &&
					       j < mi[b + bi]);
				else if (kind == MS_MASK_2D)
					off = mi[bi * t + j] <= 0;
				else if (kind == MS_MASK_3D)
					off = mi[(bi * s + si) * t + j] <= 0;
				row[j] = off ? filter : 0.0f;
				if (causal && j > past + si)
					row[j] += filter;
			}
		}
}

/* The additive mask of every batch row, [B][S][T] floats, or NULL when
 * there is none (no mask_index, not unidirectional). */
static float *build_mask(OpCtx *c, const Tensor *m, int kind, int64_t b,
			 int64_t s, int64_t t, int64_t past, bool causal,
			 float filter, int *rc)
{
	*rc = 0;
	if (kind == MS_MASK_NONE && !causal)
		return NULL;
	float *mask = op_scratch(c, (size_t)(b * s * t) * sizeof(float));
	if (!mask) {
		*rc = -1;
		return NULL;
	}
	ms_attention_mask(mask, m ? m->data : NULL, kind, b, s, t, past, causal,
			  filter);
	return mask;
}

void ms_attention_head(const MsAttn *a, int64_t b, int64_t n, float *work)
{
	int64_t S = a->S, T = a->T;
	const float *q = a->q + b * a->q_b + n * a->q_n;
	const float *k = a->k + b * a->k_b + n * a->k_n;
	const float *v = a->v + b * a->v_b + n * a->v_n;
	float *out = a->out + b * a->out_b + n * a->out_n;
	float *sc = work, *pack = work + S * T;
	if (!S)
		return;
	if (!T) {
		for (int64_t i = 0; i < S; i++)
			memset(out + i * a->out_s, 0,
			       (size_t)a->hv * sizeof(float));
		return;
	}
	sgemm(false, true, S, T, a->h, a->scale, q, a->q_s, k, a->k_t, 0, sc,
	      T, pack);
	for (int64_t i = 0; i < S; i++) {
		float *row = sc + i * T, m = -INFINITY, sum = 0;
		const float *mk = a->mask ? a->mask + (b * S + i) * T : NULL;
		const float *bs = a->bias ? a->bias + b * a->bias_b +
						     n * a->bias_n + i * T
					  : NULL;
		for (int64_t j = 0; j < T; j++) {
			row[j] += (mk ? mk[j] : 0.0f) + (bs ? bs[j] : 0.0f);
			m = row[j] > m ? row[j] : m;
		}
		for (int64_t j = 0; j < T; j++) {
			row[j] = expf(row[j] - m);
			sum += row[j];
		}
		for (int64_t j = 0; j < T; j++)
			row[j] /= sum;
	}
	sgemm(false, false, S, a->hv, T, 1, sc, T, v, a->v_t, 0, out,
	      a->out_s, pack);
}

size_t ms_attention_work(const MsAttn *a)
{
	size_t p1 = sgemm_scratch(a->S, a->T, a->h);
	size_t p2 = sgemm_scratch(a->S, a->hv, a->T);
	return (size_t)(a->S * a->T) * sizeof(float) + (p1 > p2 ? p1 : p2);
}

/* Every head of a, one after the other. */
static int attention_all(OpCtx *c, const MsAttn *a)
{
	float *work = op_scratch(c, ms_attention_work(a));
	if (!work)
		return -1;
	for (int64_t b = 0; b < a->B; b++)
		for (int64_t n = 0; n < a->N; n++)
			ms_attention_head(a, b, n, work);
	return 0;
}

/* The scale attribute, or 1/sqrt(h). */
static float attn_scale(const Node *n, int64_t h)
{
	float s = attr_float(n, "scale", 0.0f);
	return s != 0 ? s : (float)(1 / sqrt((double)h));
}

/* Refuses the attributes gearc does not implement. */
static int attn_unsupported(OpCtx *c)
{
	if (attr_int(c->n, "do_rotary", 0))
		return op_error(c, "do_rotary=1 is not supported (apply "
				"RotaryEmbedding before the op)");
	if (attr_int(c->n, "past_present_share_buffer", 0))
		return op_error(c, "past_present_share_buffer=1 is not "
				"supported");
	return 0;
}

void ms_concat_kv(float *present, const float *past, int64_t B,
		      int64_t N, int64_t P, int64_t L, int64_t h,
		      const float *cur, int64_t cb, int64_t cn, int64_t cs)
{
	for (int64_t b = 0; b < B; b++)
		for (int64_t n = 0; n < N; n++) {
			float *d = present + (b * N + n) * (P + L) * h;
			if (P)
				memcpy(d, past + (b * N + n) * P * h,
				       (size_t)(P * h) * sizeof(float));
			for (int64_t l = 0; l < L; l++)
				memcpy(d + (P + l) * h,
				       cur + b * cb + n * cn + l * cs,
				       (size_t)h * sizeof(float));
		}
}

/* ---- Attention ------------------------------------------------------------ */

/* Attention's Q, K, V widths from weights of width w. */
static int qkv_sizes(OpCtx *c, int64_t w, int64_t *hq, int64_t *hk,
		     int64_t *hv)
{
	const int64_t *sz;
	int32_t n = attr_ints(c->n, "qkv_hidden_sizes", &sz);
	if (n < 0) {
		*hq = *hk = *hv = w >= 0 ? w / 3 : -1;
		if (w >= 0 && w % 3)
			return op_error(c, "weights have %lld columns, not "
					"three equal parts (give "
					"qkv_hidden_sizes)", (long long)w);
		return 0;
	}
	if (n != 3 || sz[0] < 1 || sz[1] != sz[0] || sz[2] < 1)
		return op_error(c, "qkv_hidden_sizes must be 3 positive values "
				"with Q's equal to K's");
	*hq = sz[0], *hk = sz[1], *hv = sz[2];
	if (w >= 0 && w != sz[0] + sz[1] + sz[2])
		return op_error(c, "weights have %lld columns, qkv_hidden_sizes "
				"add up to %lld", (long long)w,
				(long long)(sz[0] + sz[1] + sz[2]));
	return 0;
}

static int num_heads(OpCtx *c, int64_t *n)
{
	*n = attr_int(c->n, "num_heads", 0);
	if (*n < 1)
		return op_error(c, "attribute num_heads is required and "
				"positive");
	return 0;
}

int infer_ms_attention(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *w = x ? op_need_in(c, 1) : NULL;
	int64_t nh, hq, hk, hv;
	int kind;
	if (!w || check_f32(c, 0) < 0 || check_f32(c, 1) < 0 ||
	    check_f32(c, 2) < 0 || check_f32(c, 4) < 0 ||
	    attn_unsupported(c) < 0 || num_heads(c, &nh) < 0 ||
	    need_rank(c, 0, 3, 3, "input") < 0 ||
	    need_rank(c, 1, 2, 2, "weights") < 0 ||
	    need_rank(c, 2, 1, 1, "bias") < 0 ||
	    need_rank(c, 4, 5, 5, "past") < 0 ||
	    qkv_sizes(c, shape_dim(&w->shape, 1), &hq, &hk, &hv) < 0 ||
	    same_dim(c, shape_dim(&x->shape, 2), shape_dim(&w->shape, 0),
		     "the input width") < 0)
		return -1;
	if (c->n->ninputs > 6 && c->n->inputs[6] >= 0)
		return op_error(c, "input 6 (past_sequence_length) goes with "
				"past_present_share_buffer, which is not "
				"supported");
	if ((hq >= 0 && hq % nh) || (hv >= 0 && hv % nh))
		return op_error(c, "hidden sizes %lld (Q, K) and %lld (V) are "
				"not multiples of num_heads %lld",
				(long long)hq, (long long)hv, (long long)nh);
	int64_t b = shape_dim(&x->shape, 0), s = shape_dim(&x->shape, 1);
	Value *past = op_in(c, 4);
	int64_t p = past ? shape_dim(&past->shape, 3) : 0;
	if (past && hq != hv)
		return op_error(c, "past needs equal Q, K and V hidden sizes");
	int64_t t = p >= 0 && s >= 0 ? p + s : -1;
	if (mask_kind(c, 3, b, s, t, &kind) < 0 ||
	    check_attn_bias(c, 5, b, nh, s, t) < 0)
		return -1;
	if (op_out(c, 1) && hq != hv)
		return op_error(c, "output 1 (present) needs equal Q, K and V "
				"hidden sizes");
	Shape y = shape_of(3, (int64_t[]){ b, s, hv });
	op_set_out(c, 0, DT_FLOAT, &y);
	int64_t hd = hk >= 0 ? hk / nh : -1;
	op_set_out(c, 1, DT_FLOAT,
		   &(Shape){ 5, { 2, b, nh, t, hd } });
	return 0;
}

int run_ms_attention(OpCtx *c)
{
	for (int i = 0; i < 6; i++)
		if (op_in(c, i) && !op_const_in(c, i))
			return 0;
	const Tensor *x = op_const_in(c, 0), *w = op_const_in(c, 1);
	const Tensor *bias = op_const_in(c, 2), *m = op_const_in(c, 3);
	const Tensor *past = op_const_in(c, 4), *ab = op_const_in(c, 5);
	int64_t nh, hq, hk, hv;
	if (num_heads(c, &nh) < 0 ||
	    qkv_sizes(c, w->shape.dims[1], &hq, &hk, &hv) < 0)
		return -1;
	int64_t B = x->shape.dims[0], S = x->shape.dims[1];
	int64_t D = x->shape.dims[2], W = hq + hk + hv;
	int64_t P = past ? past->shape.dims[3] : 0, T = P + S;
	int64_t h = hq / nh, vh = hv / nh;
	int kind;
	if (mask_kind(c, 3, B, S, T, &kind) < 0)
		return -1;
	float *qkv = op_scratch(c, (size_t)(B * S * W) * sizeof(float));
	float *pack = op_scratch(c, sgemm_scratch(B * S, W, D));
	/* K then V of every head (present's layout when hq == hv) */
	int64_t half = B * nh * T * h;
	Shape ps = { 5, { 2, B, nh, T, h } }, ks = { 1, { half + B * nh * T * vh } };
	Tensor *pt = op_out(c, 1) ? op_new_output(c, 1, DT_FLOAT, &ps)
				  : op_new_tensor(c, DT_FLOAT, &ks);
	Tensor *y = op_new_output(c, 0, DT_FLOAT, &op_out(c, 0)->shape);
	if (!qkv || !pack || !pt || !y)
		return -1;
	sgemm(false, false, B * S, W, D, 1, x->data, D, w->data, W, 0, qkv, W,
	      pack);
	for (int64_t r = 0; bias && r < B * S; r++)
		for (int64_t j = 0; j < W; j++)
			qkv[r * W + j] += ((const float *)bias->data)[j];
	float *present = tensor_mut(pt);
	const float *pd = past ? past->data : NULL;
	ms_concat_kv(present, pd, B, nh, P, S, h, qkv + hq, S * W, h, W);
	ms_concat_kv(present + half, pd ? pd + B * nh * P * h : NULL, B, nh, P,
		  S, vh, qkv + hq + hk, S * W, vh, W);
	int rc;
	float filter = attr_float(c->n, "mask_filter_value", -10000.0f);
	float *mask = build_mask(c, m, kind, B, S, T, P,
				 attr_int(c->n, "unidirectional", 0) != 0,
				 filter, &rc);
	if (rc < 0)
		return -1;
	MsAttn a = {
		.B = B, .N = nh, .S = S, .T = T, .h = h, .hv = vh,
		.scale = attn_scale(c->n, h), .mask = mask,
		.q = qkv, .q_b = S * W, .q_n = h, .q_s = W,
		.k = present, .k_b = nh * T * h, .k_n = T * h, .k_t = h,
		.v = present + half, .v_b = nh * T * vh, .v_n = T * vh,
		.v_t = vh,
		.out = tensor_mut(y), .out_b = S * hv, .out_n = vh,
		.out_s = hv,
	};
	if (ab) {
		a.bias = ab->data;
		a.bias_b = ab->shape.dims[0] == 1 ? 0 : ab->shape.dims[1] * S * T;
		a.bias_n = ab->shape.dims[1] == 1 ? 0 : S * T;
	}
	if (attention_all(c, &a) < 0)
		return -1;
	op_set_const(c, 0, y);
	if (op_out(c, 1))
		op_set_const(c, 1, pt);
	return 0;
}

/* ---- MultiHeadAttention ------------------------------------------------- */

/* Its inputs. */
enum { MHA_Q, MHA_K, MHA_V, MHA_BIAS, MHA_MASK, MHA_ABIAS, MHA_PK, MHA_PV };

/* Whether key and value come with their heads split ([B, N, L, h]). */
static bool mha_split(OpCtx *c)
{
	Value *k = op_in(c, MHA_K);
	return k && k->shape.rank == 4;
}

int infer_ms_mha(OpCtx *c)
{
	Value *q = op_need_in(c, MHA_Q);
	Value *k = op_in(c, MHA_K), *v = op_in(c, MHA_V);
	int64_t nh;
	int kind;
	for (int i = 0; i <= MHA_PV; i++)
		if (i != MHA_MASK && check_f32(c, i) < 0)
			return -1;
	if (!q || num_heads(c, &nh) < 0)
		return -1;
	if (q->shape.rank == 5 || (k && k->shape.rank == 5))
		return op_error(c, "packed QKV or KV inputs are not supported "
				"(ONNX Runtime's CPU kernel lacks them too); "
				"give query, key and value");
	if (!k || !v)
		return op_error(c, "needs query, key and value (packed forms "
				"are not supported)");
	for (int i = 8; i < c->n->ninputs; i++)
		if (c->n->inputs[i] >= 0)
			return op_error(c, "input %d (%s) is not supported", i,
					i == 8 ? "past_sequence_length"
					       : "cache_indirection");
	if (c->n->noutputs > 3 && c->n->outputs[3] >= 0)
		return op_error(c, "output 3 (qk) is not supported");
	bool split = mha_split(c);
	if (need_rank(c, MHA_Q, 3, 3, "query") < 0 ||
	    need_rank(c, MHA_K, 3, 4, "key") < 0 ||
	    need_rank(c, MHA_V, split ? 4 : 3, split ? 4 : 3, "value") < 0 ||
	    need_rank(c, MHA_BIAS, 1, 1, "bias") < 0 ||
	    need_rank(c, MHA_PK, 4, 4, "past_key") < 0 ||
	    need_rank(c, MHA_PV, 4, 4, "past_value") < 0)
		return -1;
	if (split && (op_in(c, MHA_BIAS) || op_in(c, MHA_PK)))
		return op_error(c, "key and value with their heads split "
				"([batch, num_heads, length, head_size]) take "
				"no bias nor past here");
	if (!op_in(c, MHA_PK) != !op_in(c, MHA_PV))
		return op_error(c, "past_key and past_value go together");
	int64_t b = shape_dim(&q->shape, 0), s = shape_dim(&q->shape, 1);
	int64_t hq = shape_dim(&q->shape, 2), l, hv;
	if (split) {
		l = shape_dim(&k->shape, 2);
		hv = shape_dim(&v->shape, 3);
		hv = hv >= 0 ? hv * nh : -1;
		if (same_dim(c, shape_dim(&k->shape, 1), nh, "num_heads") < 0 ||
		    same_dim(c, shape_dim(&k->shape, 3) >= 0
					? shape_dim(&k->shape, 3) * nh
					: -1,
			     hq, "the query width") < 0)
			return -1;
	} else {
		l = shape_dim(&k->shape, 1);
		hv = shape_dim(&v->shape, 2);
		if (same_dim(c, shape_dim(&k->shape, 2), hq,
			     "the query width") < 0 ||
		    same_dim(c, shape_dim(&v->shape, 1), l,
			     "the key length") < 0)
			return -1;
	}
	if ((hq >= 0 && hq % nh) || (hv >= 0 && hv % nh))
		return op_error(c, "widths %lld (query) and %lld (value) are "
				"not multiples of num_heads %lld",
				(long long)hq, (long long)hv, (long long)nh);
	Value *pk = op_in(c, MHA_PK);
	int64_t p = pk ? shape_dim(&pk->shape, 2) : 0;
	int64_t t = p >= 0 && l >= 0 ? p + l : -1;
	if (mask_kind(c, MHA_MASK, b, s, t, &kind) < 0 ||
	    check_attn_bias(c, MHA_ABIAS, b, nh, s, t) < 0)
		return -1;
	op_set_out(c, 0, DT_FLOAT, &(Shape){ 3, { b, s, hv } });
	int64_t h = hq >= 0 ? hq / nh : -1, vh = hv >= 0 ? hv / nh : -1;
	op_set_out(c, 1, DT_FLOAT, &(Shape){ 4, { b, nh, t, h } });
	op_set_out(c, 2, DT_FLOAT, &(Shape){ 4, { b, nh, t, vh } });
	return 0;
}

/* x (rows of w floats) plus bias[0..w), into scratch; x itself if no
 * bias. */
static const float *plus_bias(OpCtx *c, const Tensor *x, const float *bias)
{
	if (!bias)
		return x->data;
	int64_t n = shape_numel(&x->shape);
	int64_t w = x->shape.dims[x->shape.rank - 1];
	float *r = op_scratch(c, (size_t)n * sizeof(float));
	const float *xd = x->data;
	for (int64_t i = 0; r && i < n; i++)
		r[i] = xd[i] + bias[i % w];
	return r;
}

int run_ms_mha(OpCtx *c)
{
	for (int i = 0; i <= MHA_PV; i++)
		if (op_in(c, i) && !op_const_in(c, i))
			return 0;
	const Tensor *q = op_const_in(c, MHA_Q), *k = op_const_in(c, MHA_K);
	const Tensor *v = op_const_in(c, MHA_V);
	const Tensor *bias = op_const_in(c, MHA_BIAS);
	const Tensor *m = op_const_in(c, MHA_MASK);
	const Tensor *ab = op_const_in(c, MHA_ABIAS);
	const Tensor *pk = op_const_in(c, MHA_PK), *pv = op_const_in(c, MHA_PV);
	int64_t nh;
	if (num_heads(c, &nh) < 0)
		return -1;
	bool split = k->shape.rank == 4;
	int64_t B = q->shape.dims[0], S = q->shape.dims[1];
	int64_t hq = q->shape.dims[2], h = hq / nh;
	int64_t L = split ? k->shape.dims[2] : k->shape.dims[1];
	int64_t vh = split ? v->shape.dims[3] : v->shape.dims[2] / nh;
	int64_t hv = vh * nh, P = pk ? pk->shape.dims[2] : 0, T = P + L;
	int kind;
	if (mask_kind(c, MHA_MASK, B, S, T, &kind) < 0)
		return -1;
	const float *bd = bias ? bias->data : NULL;
	const float *qd = plus_bias(c, q, bd);
	Tensor *y = op_new_output(c, 0, DT_FLOAT, &op_out(c, 0)->shape);
	if (!qd || !y)
		return -1;
	MsAttn a = {
		.B = B, .N = nh, .S = S, .T = T, .h = h, .hv = vh,
		.scale = attn_scale(c->n, h),
		.q = qd, .q_b = S * hq, .q_n = h, .q_s = hq,
		.out = tensor_mut(y), .out_b = S * hv, .out_n = vh,
		.out_s = hv,
	};
	Tensor *kt = NULL, *vt = NULL;
	if (split) {
		a.k = k->data, a.k_b = nh * L * h, a.k_n = L * h, a.k_t = h;
		a.v = v->data, a.v_b = nh * L * vh, a.v_n = L * vh, a.v_t = vh;
	} else {
		Shape ks = { 4, { B, nh, T, h } }, vs = { 4, { B, nh, T, vh } };
		const float *kd = plus_bias(c, k, bd ? bd + hq : NULL);
		const float *vd = plus_bias(c, v, bd ? bd + 2 * hq : NULL);
		kt = op_out(c, 1) ? op_new_output(c, 1, DT_FLOAT, &ks)
				  : op_new_tensor(c, DT_FLOAT, &ks);
		vt = op_out(c, 2) ? op_new_output(c, 2, DT_FLOAT, &vs)
				  : op_new_tensor(c, DT_FLOAT, &vs);
		if (!kd || !vd || !kt || !vt)
			return -1;
		ms_concat_kv(tensor_mut(kt), pk ? pk->data : NULL, B, nh, P, L, h,
			  kd, L * hq, h, hq);
		ms_concat_kv(tensor_mut(vt), pv ? pv->data : NULL, B, nh, P, L,
			  vh, vd, L * hv, vh, hv);
		a.k = kt->data, a.k_b = nh * T * h, a.k_n = T * h, a.k_t = h;
		a.v = vt->data, a.v_b = nh * T * vh, a.v_n = T * vh,
		a.v_t = vh;
	}
	int rc;
	float filter = attr_float(c->n, "mask_filter_value", -10000.0f);
	a.mask = build_mask(c, m, kind, B, S, T, P,
			    attr_int(c->n, "unidirectional", 0) != 0, filter,
			    &rc);
	if (rc < 0)
		return -1;
	if (ab) {
		a.bias = ab->data;
		a.bias_b = ab->shape.dims[0] == 1 ? 0 : ab->shape.dims[1] * S * T;
		a.bias_n = ab->shape.dims[1] == 1 ? 0 : S * T;
	}
	if (attention_all(c, &a) < 0)
		return -1;
	op_set_const(c, 0, y);
	if (kt && op_out(c, 1))
		op_set_const(c, 1, kt);
	if (vt && op_out(c, 2))
		op_set_const(c, 2, vt);
	return 0;
}

/* ---- EmbedLayerNormalization -------------------------------------------- */

enum { ELN_IDS, ELN_SEG, ELN_WORD, ELN_POS, ELN_SEGEMB, ELN_GAMMA, ELN_BETA,
       ELN_MASK, ELN_POSIDS };

int infer_ms_embed_layer_norm(OpCtx *c)
{
	Value *ids = op_need_in(c, ELN_IDS), *w = op_need_in(c, ELN_WORD);
	if (!ids || !w || !op_need_in(c, ELN_POS) || !op_need_in(c, ELN_GAMMA) ||
	    !op_need_in(c, ELN_BETA))
		return -1;
	static const int ints[] = { ELN_IDS, ELN_SEG, ELN_MASK, ELN_POSIDS };
	static const int floats[] = { ELN_WORD, ELN_POS, ELN_SEGEMB, ELN_GAMMA,
				      ELN_BETA };
	for (size_t i = 0; i < 4; i++)
		if (op_check_dtype(c, ints[i], DTS(DT_INT32)) < 0)
			return -1;
	for (size_t i = 0; i < 5; i++)
		if (check_f32(c, floats[i]) < 0)
			return -1;
	if (!op_in(c, ELN_SEG) != !op_in(c, ELN_SEGEMB))
		return op_error(c, "segment_ids and segment_embedding go "
				"together");
	if (need_rank(c, ELN_IDS, 2, 2, "input_ids") < 0 ||
	    need_rank(c, ELN_WORD, 2, 2, "word_embedding") < 0 ||
	    need_rank(c, ELN_POS, 2, 2, "position_embedding") < 0 ||
	    need_rank(c, ELN_SEGEMB, 2, 2, "segment_embedding") < 0 ||
	    need_rank(c, ELN_GAMMA, 1, 1, "gamma") < 0 ||
	    need_rank(c, ELN_BETA, 1, 1, "beta") < 0 ||
	    op_broadcast_to(c, ELN_SEG, &ids->shape) < 0 ||
	    op_broadcast_to(c, ELN_MASK, &ids->shape) < 0 ||
	    op_broadcast_to(c, ELN_POSIDS, &ids->shape) < 0)
		return -1;
	int64_t hd = shape_dim(&w->shape, 1);
	static const int widths[] = { ELN_POS, ELN_SEGEMB, ELN_GAMMA,
				      ELN_BETA };
	for (size_t i = 0; i < 4; i++) {
		Value *v = op_in(c, widths[i]);
		if (v && v->shape.rank >= 1 &&
		    same_dim(c, v->shape.dims[v->shape.rank - 1], hd,
			     "the hidden size") < 0)
			return -1;
	}
	int64_t b = shape_dim(&ids->shape, 0), s = shape_dim(&ids->shape, 1);
	op_set_out(c, 0, DT_FLOAT, &(Shape){ 3, { b, s, hd } });
	op_set_out(c, 1, DT_INT32, &(Shape){ 1, { b } });
	op_set_out(c, 2, DT_FLOAT, &(Shape){ 3, { b, s, hd } });
	return 0;
}

/* Row id of table t ([rows, h]) for node c's input named what: NULL
 * with an error if out of range. */
static const float *emb_row(OpCtx *c, const Tensor *t, int64_t id,
			    const char *what)
{
	int64_t rows = t->shape.dims[0], h = t->shape.dims[1];
	if (id < 0 || id >= rows) {
		op_error(c, "%s %lld is out of range (the table has %lld rows)",
			 what, (long long)id, (long long)rows);
		return NULL;
	}
	return (const float *)t->data + id * h;
}

int run_ms_embed_layer_norm(OpCtx *c)
{
	for (int i = 0; i <= ELN_POSIDS; i++)
		if (op_in(c, i) && !op_const_in(c, i))
			return 0;
	const Tensor *ids = op_const_in(c, ELN_IDS);
	const Tensor *seg = op_const_in(c, ELN_SEG);
	const Tensor *word = op_const_in(c, ELN_WORD);
	const Tensor *pos = op_const_in(c, ELN_POS);
	const Tensor *segemb = op_const_in(c, ELN_SEGEMB);
	const float *g = op_const_in(c, ELN_GAMMA)->data;
	const float *be = op_const_in(c, ELN_BETA)->data;
	const Tensor *mask = op_const_in(c, ELN_MASK);
	const Tensor *pids = op_const_in(c, ELN_POSIDS);
	int64_t B = ids->shape.dims[0], S = ids->shape.dims[1];
	int64_t H = word->shape.dims[1];
	double eps = attr_float(c->n, "epsilon", 1e-12f);
	Shape ys = { 3, { B, S, H } }, ms = { 1, { B } };
	Tensor *y = op_new_output(c, 0, DT_FLOAT, &ys);
	Tensor *mi = op_new_output_zeroed(c, 1, DT_INT32, &ms);
	Tensor *es = op_out(c, 2) ? op_new_output(c, 2, DT_FLOAT, &ys) : NULL;
	float *sum = op_scratch(c, (size_t)H * sizeof(float));
	if (!y || !mi || (op_out(c, 2) && !es) || !sum)
		return -1;
	const int32_t *id = ids->data;
	for (int64_t b = 0; b < B; b++)
		for (int64_t s = 0; s < S; s++) {
			int64_t r = b * S + s, p = s;
			if (pids)
				p = ((const int32_t *)pids->data)
					[shape_numel(&pids->shape) == S ? s : r];
			const float *wr = emb_row(c, word, id[r], "input id");
			const float *pr = wr ? emb_row(c, pos, p, "position")
					     : NULL;
			const float *sr = NULL;
			if (pr && seg)
				sr = emb_row(c, segemb,
					     ((const int32_t *)seg->data)[r],
					     "segment id");
			if (!pr || (seg && !sr))
				return -1;
			float *e = es ? (float *)tensor_mut(es) + r * H : sum;
			double m = 0, v = 0;
			for (int64_t j = 0; j < H; j++) {
				e[j] = wr[j] + pr[j] + (sr ? sr[j] : 0.0f);
				m += e[j];
			}
			m /= (double)H;
			for (int64_t j = 0; j < H; j++)
				v += (e[j] - m) * (e[j] - m);
			float fm = (float)m;
			float inv = (float)(1 / sqrt(v / (double)H + eps));
			float *yr = (float *)tensor_mut(y) + r * H;
			for (int64_t j = 0; j < H; j++)
				yr[j] = (e[j] - fm) * inv * g[j] + be[j];
		}
	int32_t *mo = tensor_mut(mi);
	for (int64_t b = 0; mask && b < B; b++)
		for (int64_t s = 0; s < S; s++)
			mo[b] += ((const int32_t *)mask->data)[b * S + s];
	op_set_const(c, 0, y);
	op_set_const(c, 1, mi);
	if (es)
		op_set_const(c, 2, es);
	return 0;
}

/* ---- RotaryEmbedding ------------------------------------------------------ */

/* The geometry of RotaryEmbedding node c for an input of shape x and
 * caches of width cw: heads n, head size h, rotated dims r. */
static int rotary_geom(OpCtx *c, const Shape *x, int64_t cw, int64_t *n,
		       int64_t *h, int64_t *r)
{
	int64_t nh = attr_int(c->n, "num_heads", 0);
	int64_t rd = attr_int(c->n, "rotary_embedding_dim", 0);
	*n = *h = *r = -1;
	if (rd && !nh)
		return op_error(c, "rotary_embedding_dim needs num_heads");
	if (x->rank == 4) {
		*n = x->dims[1], *h = x->dims[3];
	} else if (nh > 0) {
		*n = nh;
		*h = x->dims[2] >= 0 ? x->dims[2] / nh : -1;
	} else if (cw >= 0) {
		*h = 2 * cw;
		*n = x->dims[2] >= 0 && *h ? x->dims[2] / *h : -1;
	}
	*r = rd ? rd : *h;
	if (*r >= 0 && *h >= 0 && (*r > *h || *r % 2))
		return op_error(c, "rotates %lld dims of heads of %lld: expected "
				"an even number, at most the head size",
				(long long)*r, (long long)*h);
	if (x->rank == 3 && *n >= 0 && *h >= 0 && x->dims[2] >= 0 &&
	    *n * *h != x->dims[2])
		return op_error(c, "input width %lld is not %lld heads of %lld",
				(long long)x->dims[2], (long long)*n,
				(long long)*h);
	if (cw >= 0 && *r >= 0 && cw * 2 != *r)
		return op_error(c, "cos_cache has %lld columns, expected %lld "
				"(half the rotated dims)", (long long)cw,
				(long long)(*r / 2));
	return 0;
}

int infer_ms_rotary(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *p = op_need_in(c, 1);
	Value *cc = op_need_in(c, 2), *sc = op_need_in(c, 3);
	int64_t n, h, r;
	if (!x || !p || !cc || !sc || check_f32(c, 0) < 0 ||
	    op_check_dtype(c, 1, DTS(DT_INT64)) < 0 || check_f32(c, 2) < 0 ||
	    check_f32(c, 3) < 0 || need_rank(c, 0, 3, 4, "input") < 0 ||
	    need_rank(c, 2, 2, 2, "cos_cache") < 0 ||
	    need_rank(c, 3, 2, 2, "sin_cache") < 0 ||
	    need_rank(c, 1, 1, 2, "position_ids") < 0)
		return -1;
	if (attr_int(c->n, "is_packed_batching", 0))
		return op_error(c, "is_packed_batching=1 is not supported");
	if (x->shape.rank >= 0 &&
	    rotary_geom(c, &x->shape, shape_dim(&cc->shape, 1), &n, &h, &r) < 0)
		return -1;
	op_set_out(c, 0, DT_FLOAT, &x->shape);
	return 0;
}

int run_ms_rotary(OpCtx *c)
{
	if (!op_all_const(c))
		return 0;
	const Tensor *x = op_const_in(c, 0), *pi = op_const_in(c, 1);
	const Tensor *cc = op_const_in(c, 2), *sc = op_const_in(c, 3);
	int64_t n, h, r;
	if (rotary_geom(c, &x->shape, cc->shape.dims[1], &n, &h, &r) < 0)
		return -1;
	bool bnsh = x->shape.rank == 4, inter = attr_int(c->n, "interleaved",
							 0) != 0;
	int64_t B = x->shape.dims[0], S = x->shape.dims[bnsh ? 2 : 1];
	int64_t M = cc->shape.dims[0], half = r / 2;
	Tensor *y = op_new_output(c, 0, DT_FLOAT, &x->shape);
	if (!y)
		return -1;
	const int64_t *pos = pi->data;
	bool one = shape_numel(&pi->shape) == 1;
	for (int64_t b = 0; b < B; b++)
		for (int64_t s = 0; s < S; s++) {
			int64_t p = one ? pos[0] + s : pos[b * S + s];
			if (p < 0 || p >= M)
				return op_error(c, "position %lld is out of "
						"range (the caches have %lld "
						"rows)", (long long)p,
						(long long)M);
			const float *co = (const float *)cc->data + p * half;
			const float *si = (const float *)sc->data + p * half;
			for (int64_t k = 0; k < n; k++) {
				int64_t off = bnsh ? ((b * n + k) * S + s) * h
						   : ((b * S + s) * n + k) * h;
				const float *xr = (const float *)x->data + off;
				float *yr = (float *)tensor_mut(y) + off;
				for (int64_t i = 0; i < half; i++) {
					int64_t i1 = inter ? 2 * i : i;
					int64_t i2 = inter ? 2 * i + 1 : i + half;
					float a = xr[i1], e = xr[i2];
					yr[i1] = a * co[i] - e * si[i];
					yr[i2] = e * co[i] + a * si[i];
				}
				memmove(yr + r, xr + r,
					(size_t)(h - r) * sizeof(float));
			}
		}
	op_set_const(c, 0, y);
	return 0;
}
