/*
 * compiler/ops/rnn.c - the recurrent ops RNN, GRU and LSTM.
 *
 * Inputs: X, W [D, G*H, I], R [D, G*H, H], optional B [D, 2*G*H],
 * sequence_lens [batch] (int32), initial_h, (LSTM) initial_c and
 * P [D, 3*H], where G is 1 (RNN), 3 (GRU) or 4 (LSTM), D the number of
 * directions (2 for "bidirectional", else 1) and H hidden_size (the
 * attribute, else read off the weights).  With layout 0 (the default, the
 * only one before opset 14) X is [seq, batch, I], Y [seq, D, batch, H]
 * and Y_h, Y_c [D, batch, H]; with layout 1 X is [batch, seq, I], Y
 * [batch, seq, D, H] and Y_h, Y_c [batch, D, H].  Every output is
 * optional.
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "compiler/act.h"
#include "opimpl.h"

typedef struct Rnn {
	int64_t dirs, hidden, seq, batch, input;
} Rnn;

/* *known must equal v where both are known; an unknown *known takes v. */
static int agree(OpCtx *c, int64_t *known, int64_t v, const char *what,
		 int i)
{
	const Value *in = op_in(c, i);
	char buf[128];
	if (v < 0)
		return 0;
	if (*known >= 0 && *known != v)
		return op_error(c, "input %d ('%s', shape %s) gives %s = %lld, "
				"expected %lld", i, in->name,
				shape_str(&in->shape, buf, sizeof(buf)), what,
				(long long)v, (long long)*known);
	*known = v;
	return 0;
}

/* A dim that must be a multiple m of the hidden size: gives H. */
static int hidden_from(OpCtx *c, Rnn *r, int i, int32_t axis, int64_t m)
{
	const Value *in = op_in(c, i);
	char buf[128];
	int64_t d = in ? shape_dim(&in->shape, axis) : DIM_UNKNOWN;
	if (d < 0)
		return 0;
	if (d % m)
		return op_error(c, "input %d ('%s') has shape %s; dim %d must "
				"be a multiple of %lld", i, in->name,
				shape_str(&in->shape, buf, sizeof(buf)), axis,
				(long long)m);
	return agree(c, &r->hidden, d / m, "hidden_size", i);
}

int infer_rnn(OpCtx *c)
{
	int op = c->n->op;
	int64_t gates = op == OP_LSTM ? 4 : op == OP_GRU ? 3 : 1;
	int64_t layout = c->opset >= 14 ? attr_int(c->n, "layout", 0) : 0;
	const char *dir = attr_str(c->n, "direction", "forward");
	const Attr *hs = nn_attr(c->n, "hidden_size", ATTR_INT);
	int nin = op == OP_LSTM ? 8 : 6;
	Value *x = op_need_in(c, 0);
	Rnn r = { .hidden = DIM_UNKNOWN, .seq = DIM_UNKNOWN };
	if (!x || !op_need_in(c, 1) || !op_need_in(c, 2) ||
	    op_check_dtype(c, 0, DTS_FLOAT) < 0)
		return -1;
	for (int i = 1; i < nin; i++) {
		int32_t rank = i == 3 || i == 7 ? 2 : i == 4 ? 1 : 3;
		if (i == 4 ? op_check_dtype(c, i, DTS(DT_INT32)) < 0
			   : op_check_same_dtype(c, i, 0) < 0)
			return -1;
		if (op_check_rank(c, i, rank, rank) < 0)
			return -1;
	}
	if (op_check_rank(c, 0, 3, 3) < 0)
		return -1;
	if (!strcmp(dir, "forward") || !strcmp(dir, "reverse"))
		r.dirs = 1;
	else if (!strcmp(dir, "bidirectional"))
		r.dirs = 2;
	else
		return op_error(c, "direction is '%s', expected forward, "
				"reverse or bidirectional", dir);
	if (layout != 0 && layout != 1)
		return op_error(c, "layout is %lld, expected 0 or 1",
				(long long)layout);
	if (hs) {
		if (hs->i < 1)
			return op_error(c, "hidden_size is %lld, expected >= 1",
					(long long)hs->i);
		r.hidden = hs->i;
	}
	const Shape *xs = &x->shape;
	r.seq = shape_dim(xs, layout ? 1 : 0);
	r.batch = shape_dim(xs, layout ? 0 : 1);
	r.input = shape_dim(xs, 2);
	/* hidden size and directions from W, R, B, initial_h/c, P */
	if (hidden_from(c, &r, 2, 2, 1) < 0 || hidden_from(c, &r, 1, 1, gates) < 0 ||
	    hidden_from(c, &r, 2, 1, gates) < 0 ||
	    hidden_from(c, &r, 3, 1, 2 * gates) < 0 ||
	    hidden_from(c, &r, 5, 2, 1) < 0 ||
	    (op == OP_LSTM && (hidden_from(c, &r, 6, 2, 1) < 0 ||
			       hidden_from(c, &r, 7, 1, 3) < 0)))
		return -1;
	for (int i = 1; i < nin; i++) {
		const Value *in = op_in(c, i);
		if (!in || i == 4)
			continue;
		int32_t da = (i == 5 || i == 6) && layout ? 1 : 0;
		if (agree(c, &r.dirs, shape_dim(&in->shape, da),
			  "num_directions", i) < 0)
			return -1;
		if ((i == 5 || i == 6) &&
		    agree(c, &r.batch, shape_dim(&in->shape, layout ? 0 : 1),
			  "batch_size", i) < 0)
			return -1;
	}
	if (agree(c, &r.input, shape_dim(&op_in(c, 1)->shape, 2),
		  "input_size", 1) < 0)
		return -1;
	const Value *sl = op_in(c, 4);
	if (sl && agree(c, &r.batch, shape_dim(&sl->shape, 0), "batch_size",
			4) < 0)
		return -1;
	Shape y = { .rank = 4 }, yh = { .rank = 3 };
	if (layout) {
		y.dims[0] = r.batch, y.dims[1] = r.seq, y.dims[2] = r.dirs;
		yh.dims[0] = r.batch, yh.dims[1] = r.dirs;
	} else {
		y.dims[0] = r.seq, y.dims[1] = r.dirs, y.dims[2] = r.batch;
		yh.dims[0] = r.dirs, yh.dims[1] = r.batch;
	}
	y.dims[3] = yh.dims[2] = r.hidden;
	op_set_out(c, 0, x->dtype, &y);
	op_set_out(c, 1, x->dtype, &yh);
	if (op == OP_LSTM)
		op_set_out(c, 2, x->dtype, &yh);
	return 0;
}

/* ---- kernels ------------------------------------------------------------
 *
 * Gate order in W, R and B: RNN i; GRU z, r, h; LSTM i, o, f, c (P: i,
 * o, f).  With f, g, h the direction's activations (defaults Sigmoid,
 * Tanh, Tanh):
 *   RNN   H = f(x Wi + H Ri + Wbi + Rbi)
 *   GRU   z = f(x Wz + H Rz + bz), r = f(x Wr + H Rr + br),
 *         h = g(x Wh + (r . H) Rh + Rbh + Wbh), or with
 *         linear_before_reset g(x Wh + r . (H Rh + Rbh) + Wbh),
 *         H = (1 - z) . h + z . H
 *   LSTM  i = f(x Wi + H Ri + Pi . C + bi), f = f(... Pf . C ...) (1 - i
 *         with input_forget), c = g(x Wc + H Rc + bc), C = f . C + i . c,
 *         o = f(x Wo + H Ro + Po . C + bo), H = o . h(C)
 * clip bounds the pre-activations.  Each direction first computes x W +
 * the biases for every timestep in one product, then runs the recurrence;
 * both are dot products along rows of W and R, which stream memory.  Batch
 * entry b runs sequence_lens[b] steps (the reverse direction from its
 * own last step); Y past that is 0, and Y_h, Y_c hold the last state (0
 * for an empty sequence).  Computes in float.
 */

enum { A_SIGMOID, A_TANH, A_RELU, A_AFFINE, A_LEAKYRELU, A_THRESHRELU,
       A_SCALEDTANH, A_HARDSIGMOID, A_ELU, A_SOFTSIGN, A_SOFTPLUS,
       A_COUNT };

typedef struct Act {
	int kind;
	float alpha, beta;
} Act;

typedef struct RnnK {
	int op;
	int64_t gates, dirs, seq, batch, input, hidden;
	bool layout, lbr, input_forget, reverse;
	float clip; /* 0: none */
	Act act[2][3];
	const float *x, *w, *r, *b, *h0, *c0, *p;
	const int32_t *lens; /* NULL: every sequence is seq long */
	float *y, *yh, *yc;
} RnnK;

/* The functions ONNX's RNNs share with the fused ops' activations are
 * compiler/act.h's fp32 forms. */
static float act_apply(const Act *a, float v)
{
	switch (a->kind) {
	case A_SIGMOID: return act_sigmoid_f32(v);
	case A_TANH: return act_tanh_f32(v);
	case A_RELU: return act_f32(ACT_Relu, v, 0, 0);
	case A_AFFINE: return a->alpha * v + a->beta;
	case A_LEAKYRELU: return act_f32(ACT_LeakyRelu, v, a->alpha, 0);
	case A_THRESHRELU: return v > a->alpha ? v : 0;
	case A_SCALEDTANH: return a->alpha * act_tanh_f32(a->beta * v);
	case A_HARDSIGMOID:
		return act_f32(ACT_HardSigmoid, v, a->alpha, a->beta);
	case A_ELU: return act_f32(ACT_Elu, v, a->alpha, 0);
	case A_SOFTSIGN: return v / (1 + fabsf(v));
	default: return act_softplus_f32(v);
	}
}

/* The activations attribute (with activation_alpha and _beta, consumed
 * in order by the functions that take them). */
static int rnn_acts(OpCtx *c, RnnK *k)
{
	static const struct {
		const char *name;
		bool alpha, beta;
		float da, db;
	} fns[A_COUNT] = {
		{ "Sigmoid", 0, 0, 0, 0 }, { "Tanh", 0, 0, 0, 0 },
		{ "Relu", 0, 0, 0, 0 }, { "Affine", 1, 1, 1, 0 },
		{ "LeakyRelu", 1, 0, 0.01f, 0 },
		{ "ThresholdedRelu", 1, 0, 1, 0 },
		{ "ScaledTanh", 1, 1, 1, 1 },
		{ "HardSigmoid", 1, 1, 0.2f, 0.5f },
		{ "Elu", 1, 0, 1, 0 }, { "Softsign", 0, 0, 0, 0 },
		{ "Softplus", 0, 0, 0, 0 },
	};
	int per = k->op == OP_LSTM ? 3 : k->op == OP_GRU ? 2 : 1;
	static const int dflt[3] = { A_SIGMOID, A_TANH, A_TANH };
	const Attr *as = nn_attr(c->n, "activations", ATTR_STRINGS);
	const Attr *al = nn_attr(c->n, "activation_alpha", ATTR_FLOATS);
	const Attr *be = nn_attr(c->n, "activation_beta", ATTR_FLOATS);
	int32_t ia = 0, ib = 0;
	if (as && as->n != per * k->dirs)
		return op_error(c, "activations has %d names, expected %d",
				as->n, (int)(per * k->dirs));
	for (int64_t d = 0; d < k->dirs; d++)
		for (int j = 0; j < per; j++) {
			Act *a = &k->act[d][j];
			a->kind = k->op == OP_RNN ? A_TANH : dflt[j];
			if (!as)
				continue;
			const Bytes *s = &as->strings[d * per + j];
			for (a->kind = 0; a->kind < A_COUNT; a->kind++)
				if (strlen(fns[a->kind].name) == s->len &&
				    !strncasecmp(fns[a->kind].name,
						 (const char *)s->data, s->len))
					break;
			if (a->kind == A_COUNT)
				return op_error(c, "activation '%.*s' is not "
						"supported", (int)s->len,
						(const char *)s->data);
			a->alpha = fns[a->kind].da, a->beta = fns[a->kind].db;
			if (fns[a->kind].alpha && al && ia < al->n)
				a->alpha = al->floats[ia++];
			if (fns[a->kind].beta && be && ib < be->n)
				a->beta = be->floats[ib++];
		}
	return 0;
}

/* a . b over n floats, in 8 independent lanes (which the compiler
 * vectorizes without reassociating) and a scalar tail. */
static float dot(const float *restrict a, const float *restrict b, int64_t n)
{
	float lane[8] = { 0 }, s = 0;
	int64_t i = 0;
	for (; i + 8 <= n; i += 8)
		for (int k = 0; k < 8; k++)
			lane[k] += a[i + k] * b[i + k];
	for (; i < n; i++)
		s += a[i] * b[i];
	for (int k = 0; k < 8; k++)
		s += lane[k];
	return s;
}

/* acc[j] += m[j] . v for the rows j < rows of m (row length n). */
static void mat_vec(float *acc, const float *m, const float *v,
		    int64_t rows, int64_t n)
{
	for (int64_t j = 0; j < rows; j++)
		acc[j] += dot(m + j * n, v, n);
}

static void clip_vec(float *v, int64_t n, float clip)
{
	if (clip > 0)
		for (int64_t i = 0; i < n; i++)
			v[i] = fminf(clip, fmaxf(-clip, v[i]));
}

/* Offset of (direction d, batch b) in initial_h/c, Y_h and Y_c. */
static int64_t state_at(const RnnK *k, int64_t d, int64_t b)
{
	return (k->layout ? b * k->dirs + d : d * k->batch + b) * k->hidden;
}

/* One timestep of batch entry b: g holds x W + biases (GH values) on
 * entry, h and cs the state, updated in place; tmp has GH floats. */
static void rnn_cell(const RnnK *k, int64_t d, float *g, float *h, float *cs,
		     const float *rw, const float *rbh, const float *pd,
		     float *tmp)
{
	int64_t H = k->hidden, GH = k->gates * H;
	const Act *a = k->act[d];
	if (k->op == OP_RNN) {
		mat_vec(g, rw, h, H, H);
		clip_vec(g, H, k->clip);
		for (int64_t j = 0; j < H; j++)
			h[j] = act_apply(&a[0], g[j]);
	} else if (k->op == OP_GRU) {
		float *z = g, *r = g + H, *hh = g + 2 * H;
		memset(tmp, 0, (size_t)GH * sizeof(float));
		mat_vec(tmp, rw, h, k->lbr ? GH : 2 * H, H);
		for (int64_t j = 0; j < 2 * H; j++)
			g[j] += tmp[j];
		clip_vec(g, 2 * H, k->clip);
		for (int64_t j = 0; j < 2 * H; j++)
			g[j] = act_apply(&a[0], g[j]);
		if (k->lbr) {
			for (int64_t j = 0; j < H; j++)
				hh[j] += r[j] * (tmp[2 * H + j] + rbh[j]);
		} else {
			float *rh = tmp;
			for (int64_t j = 0; j < H; j++)
				rh[j] = r[j] * h[j];
			mat_vec(hh, rw + 2 * H * H, rh, H, H);
		}
		clip_vec(hh, H, k->clip);
		for (int64_t j = 0; j < H; j++) {
			float v = act_apply(&a[1], hh[j]);
			h[j] = (1 - z[j]) * v + z[j] * h[j];
		}
	} else {
		float *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;
		mat_vec(g, rw, h, GH, H);
		for (int64_t j = 0; j < H; j++) {
			float c0 = cs[j], vi, vf, vc, vo;
			vi = gi[j] + (pd ? pd[j] * c0 : 0);
			vf = gf[j] + (pd ? pd[2 * H + j] * c0 : 0);
			vc = gc[j];
			if (k->clip > 0) {
				vi = fminf(k->clip, fmaxf(-k->clip, vi));
				vf = fminf(k->clip, fmaxf(-k->clip, vf));
				vc = fminf(k->clip, fmaxf(-k->clip, vc));
			}
			vi = act_apply(&a[0], vi);
			vf = k->input_forget ? 1 - vi : act_apply(&a[0], vf);
			vc = act_apply(&a[1], vc);
			float cn = vf * c0 + vi * vc;
			vo = go[j] + (pd ? pd[H + j] * cn : 0);
			if (k->clip > 0)
				vo = fminf(k->clip, fmaxf(-k->clip, vo));
			vo = act_apply(&a[0], vo);
			cs[j] = cn;
			h[j] = vo * act_apply(&a[2], cn);
		}
	}
}

/* Direction d: xw [seq * batch, GH] = x W^T + biases, then the loop. */
static int rnn_dir(OpCtx *c, const RnnK *k, int64_t d, bool reverse)
{
	int64_t H = k->hidden, GH = k->gates * H, I = k->input;
	int64_t B = k->batch, T = k->seq;
	const float *wd = k->w + d * GH * I, *rw = k->r + d * GH * H;
	float *bias = op_scratch_zeroed(c, (size_t)GH * 4);
	float *rbh = op_scratch_zeroed(c, (size_t)H * 4);
	float *xw = op_scratch_zeroed(c, (size_t)(T * B * GH) * 4);
	float *hs = op_scratch_zeroed(c, (size_t)(B * H) * 4);
	float *cs = op_scratch_zeroed(c, (size_t)(B * H) * 4);
	float *tmp = op_scratch_zeroed(c, (size_t)GH * 4);
	if (!bias || !rbh || !xw || !hs || !cs || !tmp)
		return -1;
	if (k->b) {
		const float *wb = k->b + d * 2 * GH, *rb = wb + GH;
		for (int64_t j = 0; j < GH; j++)
			bias[j] = wb[j] + rb[j];
		if (k->op == OP_GRU && k->lbr)
			for (int64_t j = 0; j < H; j++) {
				rbh[j] = rb[2 * H + j];
				bias[2 * H + j] = wb[2 * H + j];
			}
	}
	for (int64_t t = 0; t < T; t++)
		for (int64_t b = 0; b < B; b++) {
			float *row = xw + (t * B + b) * GH;
			int64_t xi = k->layout ? b * T + t : t * B + b;
			memcpy(row, bias, (size_t)GH * 4);
			mat_vec(row, wd, k->x + xi * I, GH, I);
		}
	for (int64_t b = 0; b < B; b++) {
		int64_t at = state_at(k, d, b);
		if (k->h0)
			memcpy(hs + b * H, k->h0 + at, (size_t)H * 4);
		if (k->c0)
			memcpy(cs + b * H, k->c0 + at, (size_t)H * 4);
	}
	const float *pd = k->p ? k->p + d * 3 * H : NULL;
	for (int64_t s = 0; s < T; s++)
		for (int64_t b = 0; b < B; b++) {
			int64_t len = k->lens ? k->lens[b] : T;
			if (s >= len)
				continue;
			int64_t t = reverse ? len - 1 - s : s;
			float *g = xw + (t * B + b) * GH;
			rnn_cell(k, d, g, hs + b * H, cs + b * H, rw, rbh, pd,
				 tmp);
			if (k->y) {
				int64_t D = k->dirs;
				int64_t yi = k->layout ? (b * T + t) * D + d
						       : (t * D + d) * B + b;
				memcpy(k->y + yi * H, hs + b * H,
				       (size_t)H * 4);
			}
		}
	for (int64_t b = 0; b < B; b++) {
		bool empty = k->lens && k->lens[b] == 0;
		int64_t at = state_at(k, d, b);
		if (k->yh && !empty)
			memcpy(k->yh + at, hs + b * H, (size_t)H * 4);
		if (k->yc && !empty)
			memcpy(k->yc + at, cs + b * H, (size_t)H * 4);
	}
	return 0;
}

/* Input i as floats if present; false if present but not constant. */
static bool rnn_in(OpCtx *c, int i, const float **f, bool *err)
{
	const Tensor *t = op_const_in(c, i);
	*f = NULL;
	if (!op_in(c, i))
		return true;
	if (!t)
		return false;
	if (!(*f = nn_floats_in(c, t)))
		*err = true;
	return true;
}

static int rnn_setup(OpCtx *c, RnnK *k)
{
	const Tensor *x = op_const_in(c, 0), *r = op_const_in(c, 2);
	const char *dir = attr_str(c->n, "direction", "forward");
	k->op = c->n->op;
	k->gates = k->op == OP_LSTM ? 4 : k->op == OP_GRU ? 3 : 1;
	k->layout = c->opset >= 14 && attr_int(c->n, "layout", 0) != 0;
	k->lbr = attr_int(c->n, "linear_before_reset", 0) != 0;
	k->input_forget = attr_int(c->n, "input_forget", 0) != 0;
	k->clip = nn_attr(c->n, "clip", ATTR_FLOAT) ? attr_float(c->n, "clip",
								  0) : 0;
	k->reverse = !strcmp(dir, "reverse");
	k->dirs = r->shape.dims[0];
	k->hidden = r->shape.dims[2];
	k->seq = x->shape.dims[k->layout ? 1 : 0];
	k->batch = x->shape.dims[k->layout ? 0 : 1];
	k->input = x->shape.dims[2];
	if (k->clip < 0)
		return op_error(c, "clip is %g, expected > 0", k->clip);
	if (rnn_acts(c, k) < 0)
		return -1;
	const Tensor *sl = op_const_in(c, 4);
	if (sl) {
		k->lens = sl->data;
		for (int64_t b = 0; b < k->batch; b++)
			if (k->lens[b] < 0 || k->lens[b] > k->seq)
				return op_error(c, "sequence_lens[%lld] is %d, "
						"expected 0..%lld",
						(long long)b,
						k->lens[b], (long long)k->seq);
	}
	return 0;
}

int run_rnn(OpCtx *c)
{
	RnnK k = { 0 };
	bool err = false;
	const float *in[8];
	int nin = c->n->op == OP_LSTM ? 8 : 6;
	for (int i = 0; i < 8; i++)
		in[i] = NULL;
	for (int i = 0; i < nin; i++)
		if (i != 4 && !rnn_in(c, i, &in[i], &err))
			return 0;
	if (op_in(c, 4) && !op_const_in(c, 4))
		return 0;
	if (err || rnn_setup(c, &k) < 0)
		return -1;
	k.x = in[0], k.w = in[1], k.r = in[2], k.b = in[3];
	k.h0 = in[5], k.c0 = in[6], k.p = in[7];
	Tensor *out[3] = { NULL, NULL, NULL };
	float *of[3] = { NULL, NULL, NULL };
	for (int i = 0; i < (k.op == OP_LSTM ? 3 : 2); i++) {
		const Value *v = op_out(c, i);
		if (!v)
			continue;
		if (!shape_is_static(&v->shape))
			return 0;
		if (!(out[i] = op_new_output_zeroed(c, i, v->dtype, &v->shape)) ||
		    !(of[i] = nn_floats_out(c, out[i])))
			return -1;
		if (v->dtype != DT_FLOAT)
			memset(of[i], 0, (size_t)shape_numel(&v->shape) * 4);
	}
	k.y = of[0], k.yh = of[1], k.yc = of[2];
	for (int64_t d = 0; d < k.dirs; d++)
		if (rnn_dir(c, &k, d, d == 1 || k.reverse) < 0)
			return -1;
	for (int i = 0; i < 3; i++)
		if (out[i]) {
			nn_floats_store(out[i], of[i]);
			op_set_const(c, i, out[i]);
		}
	return 0;
}
