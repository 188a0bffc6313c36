/*
 * runtime/small.c - fast paths in plain C for small graphs (small.h).
 *
 * A voice-activity detector runs a few hundred microseconds a step, and
 * its slices, concatenations and paddings took most of them on the
 * reference kernels, which walk every element through a general index
 * loop.  Data movement here is replayed: when the gear is prepared, the
 * op's own reference kernel runs once on tensors of element numbers (in
 * the node's dtype; input k's numbered after input k-1's, from 1; 0 is
 * Pad's fill value) and the numbers it puts in each output become a list
 * of runs (input, first element, length) of consecutive elements, which
 * every run of the node copies with memcpy.  The semantics stay the
 * reference kernel's, in one place.  A Slice's runs come straight from
 * the strided view the reference kernel reads (slice_view), with no
 * numbering: any dtype, any size, as long as the runs are at most
 * MOVE_MAX.  A constant Pad's (pad_view), a Split's and a Concat's
 * come from the planned shapes: any dtype, any size.
 *
 * The LSTM cell of a small hidden size (Silero VAD: 64 and 128) in plain
 * C: oneDNN's RNN primitive has a large fixed cost per call, and the
 * reference kernel's dot products and allocations are not vectorised.
 * The gates of one timestep are a dot product of each row of W with x
 * and of R with h; Sigmoid is direct.c's vectorised one and
 * tanh(v) = 2 sigmoid(2v) - 1.
 *
 * Depthwise 1-D convolution (a filter per channel): oneDNN runs it as a
 * GEMM (Silero VAD legacy's 258-channel one: 52 us); here each tap adds
 * its weight times the input row to the output row (a tenth of the
 * reference kernel's instructions); 2-D ones stay oneDNN's (jit_dw, in
 * the layout of the convolutions around them).
 *
 * ReduceMean/ReduceSum over adjacent axes and Log, Sqrt, Neg, Abs, Exp:
 * the reference kernels go through an index or a double per element
 * (Silero VAD legacy: 18% of a run's instructions).
 *
 * ScatterND/ScatterElements: a streaming model's cache update, in place
 * of the state where the memory plan allows (see its section).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cpu.h"
#include "chanwise.h"
#include "direct.h"
#include "gemv.h"
#include "small.h"

static bool static_tensor(const Value *v)
{
	return v && v->tkind == TK_TENSOR && shape_is_static(&v->shape) &&
	       dtype_size(v->dtype) && v->dtype != DT_STRING;
}

static bool static_f32(const Value *v)
{
	return static_tensor(v) && v->dtype == DT_FLOAT;
}

static const Tensor *const_of(const Value *v)
{
	return v && v->kind == VAL_WEIGHT ? v->konst : NULL;
}

/* ---- data movement ------------------------------------------------------ */

/* Elements [src, src + len) of input in (-1: the fill value) to
 * [dst, dst + len) of the output. */
typedef struct Run {
	int32_t in;
	int64_t src, dst, len;
} Run;

typedef struct Move {
	size_t es;	  /* bytes of an element */
	int nout;
	Run **runs;	  /* per output */
	int64_t *nruns;	  /* per output */
	int fill_in;	  /* the input holding the fill value, or -1: 0 */
} Move;

static void move_free(void *state)
{
	Move *m = state;
	for (int o = 0; o < m->nout; o++)
		free(m->runs[o]);
	free(m->runs);
	free(m->nruns);
	free(m);
}

static void fill(uint8_t *y, const uint8_t *v, size_t es, int64_t n)
{
	for (int64_t i = 0; i < n; i++, y += es)
		memcpy(y, v, es);
}

static int move_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const Move *m = state;
	static const uint8_t zero[16];
	const uint8_t *v = zero;
	if (m->fill_in >= 0 && in[m->fill_in] &&
	    in[m->fill_in]->nbytes >= m->es)
		v = in[m->fill_in]->data;
	for (int o = 0; o < m->nout; o++) {
		if (!out[o])
			continue;
		uint8_t *y = tensor_mut(out[o]);
		for (int64_t r = 0; r < m->nruns[o]; r++) {
			const Run *u = &m->runs[o][r];
			uint8_t *d = y + (size_t)u->dst * m->es;
			if (u->in < 0)
				fill(d, v, m->es, u->len);
			else
				memcpy(d, (const uint8_t *)in[u->in]->data +
						  (size_t)u->src * m->es,
				       (size_t)u->len * m->es);
		}
	}
	return 0;
}

/* The inputs whose elements the op moves (the others must be constant);
 * -1 for an op this path does not take. */
static int moved_inputs(const Node *n)
{
	switch (n->op) {
	case OP_Concat:
		return n->ninputs;
	case OP_Slice:
	case OP_Pad:
	case OP_Split:
	case OP_Tile:
	case OP_Expand:
		return 1;
	default:
		return -1;
	}
}

/* Numbered elements (inputs and outputs) above this stay the reference
 * kernel's: numbering them would lengthen a gear's preparation for
 * little (the VADs' largest: 128K).  Below 2^24, a float holds every
 * number exactly. */
enum { MOVE_MAX = 1 << 20 };

/* The dtypes whose elements can hold element numbers, with their C types
 * (the loops that number and read back are one per dtype): the numbered
 * tensors have the node's own dtype, so the reference kernel runs on
 * exactly the tensors it would run on. */
#define NUMBER_TYPES(X)                                               \
	X(DT_FLOAT, float) X(DT_DOUBLE, double) X(DT_INT32, int32_t)  \
	X(DT_UINT32, uint32_t) X(DT_INT64, int64_t) X(DT_UINT64, uint64_t)

static bool numbers_fit(int dt)
{
	switch (dt) {
#define FITS(DT, T) case DT:
		NUMBER_TYPES(FITS)
#undef FITS
		return true;
	default:
		return false;
	}
}

/* Output elements [dst, dst + n) with element numbers num (0: the fill
 * value) appended to the k runs in r: the new count. */
static int64_t runs_add(Run *r, int64_t k, const int64_t *num, int64_t n,
			int64_t dst, const int64_t *base, int nin)
{
	for (int64_t i = 0; i < n; i++) {
		int32_t in = -1;
		int64_t src = 0;
		if (num[i] > 0) {
			in = 0;
			while (in + 1 < nin && num[i] > base[in + 1])
				in++;
			src = num[i] - 1 - base[in];
		}
		Run *last = k ? &r[k - 1] : NULL;
		if (last && last->in == in &&
		    (in < 0 || last->src + last->len == src)) {
			last->len++;
			continue;
		}
		r[k++] = (Run){ in, src, dst + i, 1 };
	}
	return k;
}

/* x's elements numbered first, first + 1, ... in its own dtype (one of
 * NUMBER_TYPES): a loop per dtype, not a call per element, since
 * numbering half a million elements that way took a third of a PP-OCR
 * rec gear's preparation. */
static void number(Tensor *x, int64_t first)
{
	int64_t c = shape_numel(&x->shape);
#define NUMBER(DT, T)                                            \
	case DT:                                                 \
		for (int64_t i = 0; i < c; i++)                  \
			((T *)x->data)[i] = (T)(first + i);      \
		break;
	switch (x->dtype) {
		NUMBER_TYPES(NUMBER)
	}
#undef NUMBER
}

/* A tensor of v's dtype and shape numbered from first (not zeroed first:
 * number() writes every element). */
static Tensor *numbered(Arena *a, const Value *v, int64_t first)
{
	int64_t nb = shape_bytes(&v->shape, v->dtype);
	if (nb < 0)
		return NULL;
	Tensor *x = arena_alloc(a, sizeof(*x));
	x->dtype = v->dtype;
	x->shape = v->shape;
	x->nbytes = (size_t)nb;
	x->data = arena_alloc_raw(a, x->nbytes);
	number(x, first);
	return x;
}

/* Elements [at, at + n) of y as element numbers in num: false if one is
 * not a whole number in [lo, hi]. */
static bool numbers_of(const Tensor *y, int64_t at, int64_t n, int64_t *num,
		       int64_t lo, int64_t hi)
{
	bool ok = true;
#define NUMBERS(DT, T)                                                \
	case DT:                                                      \
		for (int64_t i = 0; i < n; i++) {                     \
			T v = ((const T *)y->data)[at + i];           \
			num[i] = (int64_t)v;                          \
			ok &= v >= (T)lo && v <= (T)hi &&             \
			      (T)num[i] == v;                         \
		}                                                     \
		break;
	switch (y->dtype) {
		NUMBER_TYPES(NUMBERS)
	default:
		ok = false;
	}
#undef NUMBERS
	return ok;
}

/* Output o's numbers as runs, read a block at a time: false if one is no
 * element number. */
static bool replay(Move *m, int o, const Tensor *y, const int64_t *base,
		   int nmoved, int64_t total, bool fills)
{
	enum { BLOCK = 2048 };
	int64_t cnt = shape_numel(&y->shape), k = 0, num[BLOCK];
	Run *r = xmalloc(((size_t)cnt + 1) * sizeof(*r));
	for (int64_t at = 0; at < cnt; at += BLOCK) {
		int64_t n = cnt - at < BLOCK ? cnt - at : BLOCK;
		if (!numbers_of(y, at, n, num, fills ? 0 : 1, total)) {
			free(r);
			return false;
		}
		k = runs_add(r, k, num, n, at, base, nmoved);
	}
	m->runs[o] = xrealloc(r, ((size_t)k + 1) * sizeof(*r));
	m->nruns[o] = k;
	return true;
}

/* The context to run or read node n's reference kernel at prepare time,
 * its tensors in b, allocating from the session's scratch. */
static OpCtx prepare_ctx(RunCtx *s, Prepared *p, const Node *n,
			 OpBind *b)
{
	return (OpCtx){ .model = s->model->m, .g = p->g, .n = (Node *)n,
			.opset = model_opset(s->model->m),
			.fold_limit = INT64_MAX, .bind = b,
			.arena = &s->scratch };
}

/* prepare_ctx with n's inputs as the gear has them (in *b, from the
 * session's scratch: arena_reset it after), to read its arguments as
 * its reference kernel does. */
static OpCtx reading_ctx(RunCtx *s, Prepared *p, const Node *n, OpBind *b)
{
	const Tensor **in = arena_array(&s->scratch, (size_t)n->ninputs + 1,
					sizeof(*in));
	for (int k = 0; k < n->ninputs; k++)
		in[k] = rt_in_val(p, n, k) ? p->cur[n->inputs[k]] : NULL;
	*b = (OpBind){ .in = in, .exec = p };
	return prepare_ctx(s, p, n, b);
}

/* Runs the reference kernel of t's node on tensors of element numbers
 * and turns its outputs into m's runs: 1 if done, 0 if the numbers did
 * not come out as element numbers (then another path runs the node). */
static int number_and_replay(RunCtx *s, Prepared *p, Task *t,
			     int nmoved, Move *m)
{
	const Node *n = t->n;
	int nin = n->ninputs, nout = n->noutputs;
	Arena *a = &s->scratch;
	const Tensor **in = arena_array(a, (size_t)nin + 1, sizeof(*in));
	Tensor **out = arena_array(a, (size_t)nout + 1, sizeof(*out));
	uint8_t *set = arena_alloc(a, (size_t)nout + 1);
	int64_t *base = arena_array(a, (size_t)nin + 1, sizeof(*base));
	int64_t total = 0;
	int rc = 1;
	for (int k = 0; rc && k < nin; k++) {
		const Value *v = rt_in_val(p, n, k);
		in[k] = v ? p->cur[n->inputs[k]] : NULL;
		if (v && k == m->fill_in) /* Pad's value: 0 */
			rc = (in[k] = tensor_new(a, NULL, v->dtype, &v->shape,
						 NULL)) != NULL;
		if (!v || k >= nmoved)
			continue;
		Tensor *x = numbered(a, v, total + 1);
		base[k] = total;
		total += shape_numel(&v->shape);
		rc = (in[k] = x) != NULL;
	}
	for (int o = 0; rc && o < nout; o++) {
		const Value *v = &p->g->vals[n->outputs[o]];
		rc = (out[o] = tensor_new(a, NULL, v->dtype, &v->shape,
					  NULL)) != NULL;
	}
	OpBind b = { .in = in, .out = out, .set = set, .exec = p };
	OpCtx c = prepare_ctx(s, p, n, &b);
	if (!rc || op_info[n->op].run(&c) < 0)
		rc = 0;
	for (int o = 0; rc && o < nout; o++)
		rc = set[o] && replay(m, o, out[o], base, nmoved, total,
				      n->op == OP_Pad);
	clear_error();
	arena_reset(a);
	return rc;
}

/* Output 0's runs when it reads input 0's element off + sum i_k sst[k]
 * (ys its shape): one per row of the innermost axes that read
 * consecutive elements, adjacent rows joined, as replay would have them;
 * false if there would be more than MOVE_MAX. */
static bool view_runs(Move *m, const Shape *ys, int64_t off,
		      const int64_t *sst)
{
	int32_t inner = ys->rank;
	int64_t len = 1, idx[MAX_RANK] = { 0 }, k = 0, src = off;
	while (inner > 0 && (ys->dims[inner - 1] == 1 || sst[inner - 1] == len))
		len *= ys->dims[--inner];
	int64_t rows = len ? shape_numel(ys) / len : 0;
	if (rows > MOVE_MAX)
		return false;
	Run *u = xmalloc(((size_t)rows + 1) * sizeof(*u));
	for (int64_t row = 0; row < rows; row++) {
		if (k && u[k - 1].src + u[k - 1].len == src)
			u[k - 1].len += len;
		else
			u[k++] = (Run){ 0, src, row * len, len };
		for (int32_t ax = inner - 1; ax >= 0; ax--) { /* next row */
			src += sst[ax];
			if (++idx[ax] < ys->dims[ax])
				break;
			src -= sst[ax] * ys->dims[ax];
			idx[ax] = 0;
		}
	}
	m->runs[0] = xrealloc(u, ((size_t)k + 1) * sizeof(*u));
	m->nruns[0] = k;
	return true;
}

/* A Slice's runs straight from what it reads (slice_view: the reference
 * kernel's own reading of its arguments), without numbering its input:
 * rec's attention slices at 8x640 took 0.5-0.9 ms each to number and
 * replay.  1 if done, 0 if not. */
static int slice_runs(RunCtx *s, Prepared *p, Task *t, Move *m)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0), *y = &p->g->vals[n->outputs[0]];
	OpBind b;
	OpCtx c = reading_ctx(s, p, n, &b);
	int64_t off, sst[MAX_RANK];
	int rc = slice_view(&c, &x->shape, &off, sst) == 1 &&
		 view_runs(m, &y->shape, off, sst);
	clear_error();
	arena_reset(&s->scratch);
	return rc;
}

/* small_pad's pads: pad_view's answer, read at prepare time. */
static int pad_view_of(RunCtx *s, Prepared *p, const Node *n, int32_t r,
		       int64_t *pb, int64_t *pe)
{
	OpBind b;
	OpCtx c = reading_ctx(s, p, n, &b);
	int known = pad_view(&c, r, pb, pe);
	clear_error();
	arena_reset(&s->scratch);
	return known;
}

/* Pad's fill value: input 2 (opset 11 on, 0 if absent); before, the
 * attribute value, taken here only when 0. */
static bool pad_fill(const Prepared *p, const Node *n, int64_t opset,
		     int *fill_in)
{
	*fill_in = -1;
	if (n->op != OP_Pad)
		return true;
	if (opset < 11)
		return attr_float(n, "value", 0) == 0;
	*fill_in = rt_in_val(p, n, 2) ? 2 : -1;
	return true;
}

int small_move(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	int nmoved = moved_inputs(n), fill_in;
	const Value *x = rt_in_val(p, n, 0);
	int64_t total = 0, opset = model_opset(s->model->m);
	bool view = n->op == OP_Slice; /* slice_runs, else replay */
	if (nmoved < 1 || !static_tensor(x) ||
	    !(view || numbers_fit(x->dtype)) || !op_info[n->op].run ||
	    !pad_fill(p, n, opset, &fill_in))
		return 0;
	for (int i = 0; i < n->ninputs; i++) {
		const Value *v = rt_in_val(p, n, i);
		if (i < nmoved ? !static_tensor(v) || v->dtype != x->dtype
			       : v && i != fill_in && !const_of(v))
			return 0;
		total += i < nmoved ? shape_numel(&v->shape) : 0;
	}
	for (int o = 0; o < n->noutputs; o++) {
		const Value *v = n->outputs[o] >= 0 ? &p->g->vals[n->outputs[o]]
						    : NULL;
		if (!v || !t->out[o] || !static_tensor(v) ||
		    v->dtype != x->dtype)
			return 0;
		total += shape_numel(&v->shape);
	}
	bool replayable = numbers_fit(x->dtype) && total <= MOVE_MAX;
	if (!view && !replayable)
		return 0;
	Move *m = xmalloc(sizeof(*m));
	m->es = dtype_size(x->dtype);
	m->nout = n->noutputs;
	m->fill_in = fill_in;
	m->runs = xmalloc(((size_t)m->nout + 1) * sizeof(*m->runs));
	m->nruns = xmalloc(((size_t)m->nout + 1) * sizeof(*m->nruns));
	memset(m->runs, 0, ((size_t)m->nout + 1) * sizeof(*m->runs));
	if (!(view && slice_runs(s, p, t, m)) &&
	    !(replayable && number_and_replay(s, p, t, nmoved, m))) {
		move_free(m);
		return 0;
	}
	k->run = move_run;
	k->free = move_free;
	k->state = m;
	return 1;
}

/* Pad of mode constant by pads of at least 0, any size and dtype: Y is
 * filled with the value, then each row of X (its last axes that have no
 * pads, together) copied to its place, from the planned shapes and the
 * pads its reference kernel reads (pad_view): no numbering, no
 * MOVE_MAX (Swin-T's window padding at batch 2, 600K elements, ran the
 * reference kernel's per-element index loop: 5% of a run). */
typedef struct PadRun {
	size_t es;
	int32_t rank;		 /* of the axes rows are counted over */
	int64_t xd[MAX_RANK];	 /* X's dims on them */
	int64_t ys[MAX_RANK];	 /* Y's strides on them (elements) */
	int64_t base;		 /* where X's first element goes in Y */
	int64_t rows, len, ny;	 /* X's rows, a row's elements, Y's */
	int fill_in;		 /* the input of the value, or -1: 0 */
} PadRun;

static bool all_zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static int pad_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const PadRun *k = state;
	const uint8_t *x = in[0]->data;
	uint8_t *y = tensor_mut(out[0]), value[16] = { 0 };
	const Tensor *v = k->fill_in >= 0 ? in[k->fill_in] : NULL;
	if (v && v->nbytes >= k->es)
		memcpy(value, v->data, k->es);
	if (k->rows * k->len < k->ny) { /* there are pads to fill */
		if (all_zero(value, k->es))
			memset(y, 0, (size_t)k->ny * k->es);
		else
			for (int64_t i = 0; i < k->ny; i++)
				memcpy(y + (size_t)i * k->es, value, k->es);
	}
	size_t row = (size_t)k->len * k->es;
	for (int64_t r = 0; r < k->rows; r++) {
		int64_t off = k->base, q = r;
		for (int32_t a = k->rank - 1; a >= 0; a--) {
			off += q % k->xd[a] * k->ys[a];
			q /= k->xd[a];
		}
		memcpy(y + (size_t)off * k->es, x + (size_t)r * row, row);
	}
	return 0;
}

int small_pad(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0), *y = &p->g->vals[n->outputs[0]];
	int fill_in;
	int64_t pb[MAX_RANK], pe[MAX_RANK];
	if (!static_tensor(x) || !static_tensor(y) || !t->out[0] ||
	    x->dtype != y->dtype || dtype_size(x->dtype) > 16 ||
	    !pad_fill(p, n, model_opset(s->model->m), &fill_in))
		return 0;
	for (int i = 1; i < n->ninputs; i++)
		if (rt_in_val(p, n, i) && i != fill_in &&
		    !const_of(rt_in_val(p, n, i)))
			return 0;
	int32_t r = x->shape.rank;
	int known = pad_view_of(s, p, n, r, pb, pe);
	if (known != 1)
		return 0;
	for (int32_t a = 0; a < r; a++)
		if (pb[a] < 0 || pe[a] < 0 ||
		    x->shape.dims[a] + pb[a] + pe[a] != y->shape.dims[a])
			return 0;
	PadRun *m = xmalloc(sizeof(*m));
	memset(m, 0, sizeof(*m));
	m->es = dtype_size(x->dtype);
	m->fill_in = fill_in;
	m->ny = shape_numel(&y->shape);
	m->len = 1;
	m->rank = r; /* the last axes without pads make one row */
	while (m->rank > 0 && !pb[m->rank - 1] && !pe[m->rank - 1])
		m->len *= x->shape.dims[--m->rank];
	int64_t stride = m->len;
	for (int32_t a = r - 1; a >= 0; a--) {
		if (a < m->rank) {
			m->xd[a] = x->shape.dims[a];
			m->ys[a] = stride;
			m->base += pb[a] * stride;
		}
		stride *= a < m->rank ? y->shape.dims[a] : 1;
	}
	m->rows = m->len ? shape_numel(&x->shape) / m->len : 0;
	k->run = pad_run;
	k->free = free;
	k->state = m;
	return 1;
}

/* Split and Concat of any size and dtype: per piece (an output of a
 * Split, an input of a Concat), per index before the axis, one memcpy
 * (the runs the replay above would find, computed from the planned
 * shapes: no numbering, no MOVE_MAX: Swin-T's cyclic shifts, a Concat
 * of slices along H or W, 600K elements at batch 2).  The pieces' sizes
 * are their dims along the axis, which inference took from the
 * constant split (or the even split) the reference kernel reads. */
typedef struct Pieces {
	int n;
	size_t es;
	int64_t outer, inner, d; /* before, after, along the axis */
	int64_t pos0;		 /* where the first piece starts (a Slice) */
	int64_t *len;		 /* per piece, along the axis */
	bool chan;		 /* the channels of a rank-4 float tensor */
} Pieces;

static void pieces_free(void *state)
{
	Pieces *pc = state;
	free(pc->len);
	free(pc);
}

/* Where, in bytes, the whole holds a piece that starts at position pos
 * along the axis, at outer index i. */
static size_t whole_at(const Pieces *pc, int64_t i, int64_t pos)
{
	return (size_t)(i * pc->d + pos) * (size_t)pc->inner * pc->es;
}

static int split_run(void *state, const Tensor *const *in,
		     Tensor *const *out)
{
	const Pieces *pc = state;
	const uint8_t *x = in[0]->data;
	int64_t pos = pc->pos0;
	for (int o = 0; o < pc->n; pos += pc->len[o++]) {
		uint8_t *y = tensor_mut(out[o]);
		size_t piece = (size_t)(pc->len[o] * pc->inner) * pc->es;
		for (int64_t i = 0; piece && i < pc->outer; i++)
			memcpy(y + (size_t)i * piece, x + whole_at(pc, i, pos),
			       piece);
	}
	return 0;
}

static int concat_run(void *state, const Tensor *const *in,
		      Tensor *const *out)
{
	const Pieces *pc = state;
	uint8_t *y = tensor_mut(out[0]);
	int64_t pos = 0;
	for (int k = 0; k < pc->n; pos += pc->len[k++]) {
		const uint8_t *x = in[k]->data;
		size_t piece = (size_t)(pc->len[k] * pc->inner) * pc->es;
		for (int64_t i = 0; piece && i < pc->outer; i++)
			memcpy(y + whole_at(pc, i, pos), x + (size_t)i * piece,
			       piece);
	}
	return 0;
}

/* The pieces of whole w along its axis a (a < 0: from the end), if
 * part(0..np) (NULL: not one) tile it there; else NULL. */
static Pieces *pieces_along(const Value *w, int64_t a,
			    const Value *const *part, int np)
{
	if (!static_tensor(w) || w->shape.rank < 1 || np < 1)
		return NULL;
	int32_t r = w->shape.rank;
	int64_t sum = 0;
	if (a < 0)
		a += r;
	if (a < 0 || a >= r)
		return NULL;
	for (int k = 0; k < np; k++) {
		const Value *v = part[k];
		if (!static_tensor(v) || v->dtype != w->dtype ||
		    v->shape.rank != r)
			return NULL;
		for (int32_t d = 0; d < r; d++)
			if (d != a && v->shape.dims[d] != w->shape.dims[d])
				return NULL;
		sum += v->shape.dims[a];
	}
	if (sum != w->shape.dims[a])
		return NULL;
	Pieces *pc = xmalloc(sizeof(*pc));
	pc->n = np;
	pc->es = dtype_size(w->dtype);
	pc->outer = pc->inner = 1;
	for (int32_t d = 0; d < r; d++) {
		if (d < a)
			pc->outer *= w->shape.dims[d];
		if (d > a)
			pc->inner *= w->shape.dims[d];
	}
	pc->d = w->shape.dims[a];
	pc->pos0 = 0;
	pc->chan = r == 4 && a == 1 && w->dtype == DT_FLOAT;
	pc->len = xmalloc((size_t)np * sizeof(int64_t));
	for (int k = 0; k < np; k++)
		pc->len[k] = part[k]->shape.dims[a];
	return pc;
}

/* The same along n's attribute "axis" (0 if absent). */
static Pieces *pieces_of(const Node *n, const Value *w,
			 const Value *const *part, int np)
{
	return pieces_along(w, attr_int(n, "axis", 0), part, np);
}

/* Pieces along the channels of rank-4 float tensors take either
 * layout, the whole and its pieces one (channels-last: the copies run
 * per pixel); others keep theirs row-major. */
static int take_pieces(Task *t, FastKernel *k, Pieces *pc,
		       int (*run)(void *, const Tensor *const *,
				  Tensor *const *))
{
	if (!pc)
		return 0;
	k->run = run;
	k->free = pieces_free;
	k->state = pc;
	rt_task_slots(t);
	bool cat = t->n->op == OP_Concat;
	for (int slot = -t->n->noutputs; pc->chan && slot < t->n->ninputs;
	     slot++)
		if (slot < 0 || slot == 0 || cat) /* the whole and pieces */
			rt_slot(t, slot)->group = 1;
	return 1;
}

int small_pieces_build(RunCtx *s, Prepared *p, Task *t)
{
	(void)s;
	Pieces *pc = t->fast.state;
	if (pc->chan && rt_nhwc(p, t->n->inputs[0])) { /* [N*H*W, C] */
		pc->outer *= pc->inner;
		pc->inner = 1;
	}
	return 0;
}

int small_split(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	for (int i = 1; i < n->ninputs; i++) /* split: a constant */
		if (rt_in_val(p, n, i) && !const_of(rt_in_val(p, n, i)))
			return 0;
	const Value **part = xmalloc(((size_t)n->noutputs + 1) *
				     sizeof(*part));
	for (int o = 0; o < n->noutputs; o++)
		part[o] = n->outputs[o] >= 0 && t->out[o]
				  ? &p->g->vals[n->outputs[o]]
				  : NULL;
	Pieces *pc = pieces_of(n, rt_in_val(p, n, 0), part, n->noutputs);
	free(part);
	return take_pieces(t, k, pc, split_run);
}

int small_chan_slice(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0), *y = &p->g->vals[n->outputs[0]];
	if (!static_f32(x) || !static_f32(y) || x->shape.rank != 4 ||
	    y->shape.rank != 4)
		return 0;
	const int64_t *xd = x->shape.dims, *yd = y->shape.dims;
	int64_t hw = xd[2] * xd[3], off, sst[MAX_RANK];
	OpBind b;
	OpCtx c = reading_ctx(s, p, n, &b);
	/* Y: channels [off / hw, + yd[1]) of X, every other axis whole */
	bool chan = slice_view(&c, &x->shape, &off, sst) == 1 && hw > 0 &&
		    yd[0] == xd[0] && yd[2] == xd[2] && yd[3] == xd[3] &&
		    sst[0] == xd[1] * hw && sst[1] == hw && sst[2] == xd[3] &&
		    sst[3] == 1 && off % hw == 0 && off / hw + yd[1] <= xd[1];
	clear_error();
	arena_reset(&s->scratch);
	const Value *part[1] = { x };
	Pieces *pc = chan ? pieces_along(x, 1, part, 1) : NULL;
	if (!pc)
		return 0;
	pc->pos0 = off / hw;
	pc->len[0] = yd[1];
	return take_pieces(t, k, pc, split_run);
}

int small_concat(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	if (n->noutputs != 1 || !t->out[0] || !node_attr(n, "axis"))
		return 0;
	const Value **part = xmalloc(((size_t)n->ninputs + 1) *
				     sizeof(*part));
	for (int i = 0; i < n->ninputs; i++)
		part[i] = rt_in_val(p, n, i);
	Pieces *pc = pieces_of(n, &p->g->vals[n->outputs[0]], part,
			       n->ninputs);
	free(part);
	return take_pieces(t, k, pc, concat_run);
}

/* ---- LSTM ---------------------------------------------------------------- */

/* Hidden sizes and timesteps (times batch) up to which this cell takes
 * an LSTM that oneDNN's RNN leaves (its registry row comes after
 * dnnl.rnn's): weights computed at run time (Silero VAD v5 before its
 * weights became constant work), bidirectional ones.  Where oneDNN can
 * take it, it is as fast at one step and faster beyond: 0.016 against
 * 0.040 ms for Silero v5's batch 4, 0.06 against 0.128 ms for the vad
 * fixture's gears of several steps. */
enum { LSTM_MAX_HIDDEN = 256, LSTM_MAX_STEPS = 64 };

typedef struct Lstm {
	int64_t dirs, seq, batch, input, hidden;
	int nin, nout; /* the node's inputs and outputs */
	bool reverse;
	float *g, *tmp, *h, *c; /* 4H gates, 4H, H, H */
} Lstm;

static void lstm_free(void *state)
{
	Lstm *l = state;
	free(l->g);
	free(l);
}

/* Inlined into the RT_HOT loops, so each ISA's clone has its own. */
static inline __attribute__((always_inline)) float
dot(const float *restrict a, const float *restrict b, int64_t n)
{
	float lane[16] = { 0 }, s = 0;
	int64_t i = 0;
	for (; i + 16 <= n; i += 16)
		for (int k = 0; k < 16; k++)
			lane[k] += a[i + k] * b[i + k];
	for (; i < n; i++)
		s += a[i] * b[i];
	for (int k = 0; k < 16; k++)
		s += lane[k];
	return s;
}

/* g[j] = bias[j] + W[j] . x + R[j] . h for the 4H gate rows. */
RT_HOT_FN(static, void, gates,
	   (const Lstm *l, const float *w, const float *r, const float *b, const float *x, float *g),
	   (l, w, r, b, x, g))
{
	int64_t I = l->input, H = l->hidden;
	for (int64_t j = 0; j < 4 * H; j++)
		g[j] = (b ? b[j] + b[4 * H + j] : 0) + dot(w + j * I, x, I) +
		       dot(r + j * H, l->h, H);
}

/* tanh(v) = 2 sigmoid(2v) - 1 over n floats, through tmp. */
RT_HOT_FN(static, void, tanh_run,
	   (const float *v, float *y, float *tmp, size_t n),
	   (v, y, tmp, n))
{
	for (size_t i = 0; i < n; i++)
		tmp[i] = 2 * v[i];
	direct_sigmoid_run(tmp, y, n);
	for (size_t i = 0; i < n; i++)
		y[i] = 2 * y[i] - 1;
}

/* One timestep on the gates g (ONNX's order i, o, f, c): the state h, c
 * updated. */
RT_HOT_FN(static, void, cell,
	   (const Lstm *l, float *g),
	   (l, g))
{
	int64_t H = l->hidden;
	float *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;
	direct_sigmoid_run(g, g, (size_t)(3 * H));
	tanh_run(gc, gc, l->tmp, (size_t)H);
	for (int64_t j = 0; j < H; j++)
		l->c[j] = gf[j] * l->c[j] + gi[j] * gc[j];
	tanh_run(l->c, l->h, l->tmp, (size_t)H);
	for (int64_t j = 0; j < H; j++)
		l->h[j] *= go[j];
}

static int lstm_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const Lstm *l = state;
	int64_t T = l->seq, B = l->batch, H = l->hidden, I = l->input;
	const float *x = in[0]->data, *w = in[1]->data, *r = in[2]->data;
	const float *b = l->nin > 3 && in[3] ? in[3]->data : NULL;
	const float *h0 = l->nin > 5 && in[5] ? in[5]->data : NULL;
	const float *c0 = l->nin > 6 && in[6] ? in[6]->data : NULL;
	float *y = out[0] ? tensor_mut(out[0]) : NULL;
	float *yh = l->nout > 1 && out[1] ? tensor_mut(out[1]) : NULL;
	float *yc = l->nout > 2 && out[2] ? tensor_mut(out[2]) : NULL;
	size_t hb = (size_t)H * sizeof(float);
	for (int64_t d = 0; d < l->dirs; d++) {
		const float *wd = w + d * 4 * H * I, *rd = r + d * 4 * H * H;
		const float *bd = b ? b + d * 8 * H : NULL;
		bool rev = d == 1 || l->reverse;
		for (int64_t bi = 0; bi < B; bi++) {
			int64_t at = (d * B + bi) * H;
			if (h0)
				memcpy(l->h, h0 + at, hb);
			else
				memset(l->h, 0, hb);
			if (c0)
				memcpy(l->c, c0 + at, hb);
			else
				memset(l->c, 0, hb);
			for (int64_t s = 0; s < T; s++) {
				int64_t tt = rev ? T - 1 - s : s;
				gates(l, wd, rd, bd, x + (tt * B + bi) * I,
				      l->g);
				cell(l, l->g);
				if (y)
					memcpy(y + ((tt * l->dirs + d) * B +
						    bi) * H, l->h, hb);
			}
			if (yh)
				memcpy(yh + at, l->h, hb);
			if (yc)
				memcpy(yc + at, l->c, hb);
		}
	}
	return 0;
}

/* The activations attribute, if given, names the defaults. */
static bool default_acts(const Node *n, int64_t dirs)
{
	/* LSTM's f, g, h; GRU's f, g */
	static const char *const want[3] = { "Sigmoid", "Tanh", "Tanh" };
	int per = n->op == OP_GRU ? 2 : 3;
	const Attr *a = node_attr(n, "activations");
	if (!a)
		return true;
	if (a->type != ATTR_STRINGS || a->n != per * dirs)
		return false;
	for (int32_t i = 0; i < a->n; i++) {
		const char *w = want[i % per];
		if (a->strings[i].len != strlen(w) ||
		    strncasecmp(w, (const char *)a->strings[i].data,
				a->strings[i].len))
			return false;
	}
	return true;
}

static bool numel_is(const Value *v, int64_t want)
{
	return !v || shape_numel(&v->shape) == want;
}

/* The tensors the run reads and writes have the sizes it assumes. */
static bool lstm_sizes(const Prepared *p, const Node *n, const Lstm *l)
{
	int64_t D = l->dirs, H = l->hidden, state = D * l->batch * H;
	const Value *out[3] = { NULL, NULL, NULL };
	for (int o = 0; o < n->noutputs && o < 3; o++)
		out[o] = n->outputs[o] >= 0 ? &p->g->vals[n->outputs[o]] : NULL;
	return numel_is(rt_in_val(p, n, 1), D * 4 * H * l->input) &&
	       numel_is(rt_in_val(p, n, 2), D * 4 * H * H) &&
	       numel_is(rt_in_val(p, n, 3), D * 8 * H) &&
	       numel_is(rt_in_val(p, n, 5), state) &&
	       numel_is(rt_in_val(p, n, 6), state) &&
	       numel_is(out[0], l->seq * state) && numel_is(out[1], state) &&
	       numel_is(out[2], state);
}

/* The LSTM node of t in a form the cells here run (*l its sizes): float
 * tensors of static shapes, no sequence lengths, peepholes, clip or
 * coupled gates, the default activations, every output wanted. */
static bool lstm_match(const Prepared *p, const Task *t, Lstm *lo)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0), *w = rt_in_val(p, n, 1);
	const Value *r = rt_in_val(p, n, 2);
	const char *dir = attr_str(n, "direction", "forward");
	if (n->op != OP_LSTM || !static_f32(x) || !static_f32(w) ||
	    !static_f32(r) || x->shape.rank != 3 || r->shape.rank != 3 ||
	    rt_in_val(p, n, 4) || rt_in_val(p, n, 7) ||
	    node_attr(n, "clip") || attr_int(n, "input_forget", 0) ||
	    attr_int(n, "layout", 0))
		return false;
	for (int i = 3; i <= 6; i++)
		if (i != 4 && rt_in_val(p, n, i) &&
		    !static_f32(rt_in_val(p, n, i)))
			return false;
	for (int o = 0; o < n->noutputs && o < 3; o++)
		if (n->outputs[o] >= 0 && !t->out[o])
			return false;
	Lstm l = { .dirs = r->shape.dims[0], .hidden = r->shape.dims[2],
		   .seq = x->shape.dims[0], .batch = x->shape.dims[1],
		   .input = x->shape.dims[2], .nin = n->ninputs,
		   .nout = n->noutputs,
		   .reverse = !strcmp(dir, "reverse") };
	if (l.hidden < 1 || l.hidden > LSTM_MAX_HIDDEN ||
	    w->shape.dims[1] != 4 * l.hidden || w->shape.dims[2] != l.input ||
	    l.dirs != (strcmp(dir, "bidirectional") ? 1 : 2) ||
	    !default_acts(n, l.dirs) || !lstm_sizes(p, n, &l))
		return false;
	*lo = l;
	return true;
}

int small_lstm(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	Lstm l;
	if (!lstm_match(p, t, &l) || l.seq * l.batch > LSTM_MAX_STEPS)
		return 0;
	Lstm *st = xmalloc(sizeof(*st));
	*st = l;
	st->g = xmalloc((size_t)(10 * l.hidden) * sizeof(float));
	st->tmp = st->g + 4 * l.hidden;
	st->h = st->tmp + 4 * l.hidden;
	st->c = st->h + l.hidden;
	k->run = lstm_run;
	k->free = lstm_free;
	k->state = st;
	return 1;
}

/* ---- LSTM and GRU on packed weights ------------------------------------ */

/* An LSTM or GRU of constant weights, ahead of oneDNN's RNN, which ran
 * a batch of one at 6-8 us a step (brgemm of one row; a GRU of
 * linear_before_reset, torch's form, on its reference RNN): a speech
 * model's 2-layer LSTM of 128 over 100 steps took 1.4 ms, 1.3x ONNX
 * Runtime's.  W and R are packed once, W^T [I][G] into chanwise.c's
 * GEMM panels and R^T [H][G] into gemv.c's panels of 16 (G = gates x
 * H); a direction's input products for every step and row are one
 * product X [T B][I] W^T starting from the input bias, and each step
 * adds h R^T, streaming R once, then the cell.  A batch of one takes
 * h R^T as a GEMV; a batch of B as pw_simd.h's tiles of B rows, still
 * reading R once a step.  Without AVX-512 oneDNN's RNN is its reference
 * one on its sgemm, which picks its kernels by the thread count; there
 * every batch up to RNN_MAX_BATCH runs here (a batch of 4 over 100
 * steps of the torch recurrent model, bidirectional GRU and 2 LSTMs of
 * 128: 7.9 ms in oneDNN).  On AVX-512 larger batches stay oneDNN's
 * brgemm one (at a batch of 4, 3.4 against 4.8 ms for a GEMV a row,
 * before there were tiles of rows here).  One thread, one order: the
 * same bits at any thread count. */
enum { RNN_MAX_BATCH = 64 };

typedef struct RnnPack {
	int64_t dirs, seq, batch, input, hidden, g; /* g: gates x hidden */
	int nin, nout;
	bool reverse;
	ChanGemmPart part;
	int64_t nr;	/* W^T's panels' width (chan_gemm_nr) */
	int64_t padded; /* g rounded up to whole panels of nr */
	int64_t np;	/* R^T's panels of 16 */
	int64_t ldr;	/* a row of hr: np 16 */
	float *wp, *rp; /* per direction: W^T, R^T panels */
	float *bias;	/* per direction [padded]: the input products' */
	float *xw;	/* [T][B][g] */
	float *hr;	/* [B][ldr]: a step's h R^T, aligned */
} RnnPack;

static void rnn_pack_free(RnnPack *k)
{
	free(k->wp);
	free(k->rp);
	free(k->bias);
	free(k->xw);
	free(k->hr);
}

/* m [rows][cols] row-major, transposed into GEMM panels of nr. */
static void pack_t(const float *m, int64_t rows, int64_t cols, int64_t nr,
		   float *p)
{
	for (int64_t j = 0; j < rows; j++)
		for (int64_t k = 0; k < cols; k++)
			p[chan_gemm_at(j, k, cols, nr)] = m[j * cols + k];
}

/* k packed from node n's W and R (constant), x [T][B][I], gates per
 * hidden unit; extra floats a row after xw for the cell's state.  0, or
 * -1 with an error if out of memory. */
static int rnn_pack(RnnPack *k, const Node *n, const Value *x,
		    const Value *w, const Value *r, int gates, int64_t extra)
{
	int64_t D = r->shape.dims[0], H = r->shape.dims[2];
	int64_t B = x->shape.dims[1], I = x->shape.dims[2], G = gates * H;
	*k = (RnnPack){ .dirs = D, .seq = x->shape.dims[0], .batch = B,
			.input = I, .hidden = H, .g = G, .nin = n->ninputs,
			.nout = n->noutputs,
			.reverse = !strcmp(attr_str(n, "direction", "forward"),
					   "reverse") };
	k->nr = chan_gemm_nr(G);
	k->padded = (G + k->nr - 1) / k->nr * k->nr;
	k->np = (G + 15) / 16;
	k->ldr = k->np * 16;
	k->part = chan_gemm_part_for(cpu_isa());
	size_t rbytes = (size_t)(D * k->np * 16 * H) * sizeof(float);
	k->wp = xcalloc((size_t)(D * k->padded * I), sizeof(float));
	k->bias = xcalloc((size_t)(D * k->padded), sizeof(float));
	k->rp = aligned_alloc(64, rbytes);
	k->xw = xmalloc((size_t)((k->seq * G + extra) * B) * sizeof(float));
	k->hr = aligned_alloc(64, (size_t)(B * k->ldr) * sizeof(float));
	if (!k->rp || !k->hr) {
		rnn_pack_free(k);
		return error("node '%s' (%s): out of memory for its packed "
			     "weights", n->name, n->op_type);
	}
	memset(k->rp, 0, rbytes);
	const float *wd = w->konst->data, *rd = r->konst->data;
	for (int64_t d = 0; d < D; d++) {
		pack_t(wd + d * G * I, G, I, k->nr, k->wp + d * k->padded * I);
		pack_t(rd + d * G * H, G, H, 16, k->rp + d * k->np * 16 * H);
	}
	return 0;
}

/* Direction d's input products for every step and row into k->xw, each
 * starting from the direction's bias. */
static void rnn_inputs(const RnnPack *k, int64_t d, const float *x)
{
	int64_t I = k->input;
	k->part(k->seq * k->batch, k->g, I, x, I, k->wp + d * k->padded * I,
		k->nr * I, k->nr, k->xw, k->g, k->bias + d * k->padded,
		false);
}

/* acc (rows ldr apart) = h R^T of direction d over np panels of 16 from
 * panel p0, for each row of h [B][H]. */
static void rnn_recur(const RnnPack *k, int64_t d, const float *h,
		      int64_t p0, int64_t np, float *acc)
{
	int64_t H = k->hidden;
	const float *rp = k->rp + (d * k->np + p0) * 16 * H;
	if (k->batch == 1)
		gemv_rows(h, rp, H, np, acc);
	else
		k->part(k->batch, np * 16, H, h, H, rp, 16 * H, 16, acc,
			k->ldr, NULL, false);
}

/* The state [B][H] of a direction, from input i (h0 or c0) or zeros. */
static void rnn_state(const RnnPack *k, const Tensor *const *in, int i,
		      int64_t d, float *s)
{
	int64_t n = k->batch * k->hidden;
	if (k->nin > i && in[i])
		memcpy(s, (const float *)in[i]->data + d * n,
		       (size_t)n * sizeof(float));
	else
		memset(s, 0, (size_t)n * sizeof(float));
}

/* The state s [B][H] of direction d into dst [D][B][H] (Y_h, Y_c), if
 * wanted. */
static void rnn_final(const RnnPack *k, float *dst, int64_t d,
		      const float *s)
{
	int64_t n = k->batch * k->hidden;
	if (dst)
		memcpy(dst + d * n, s, (size_t)n * sizeof(float));
}

/* Step tt's output of direction d, every row: y [T][D][B][H]. */
static void rnn_output(const RnnPack *k, float *y, int64_t tt, int64_t d,
		       const float *h)
{
	int64_t B = k->batch, H = k->hidden;
	if (y)
		memcpy(y + (tt * k->dirs + d) * B * H, h,
		       (size_t)(B * H) * sizeof(float));
}

/* X's, W's and R's shapes fit; constant weights, a batch of one, or up
 * to RNN_MAX_BATCH below AVX-512. */
static bool rnn_packable(const Node *n, const Value *x, const Value *w,
			 const Value *r, int gates)
{
	int64_t D = r && r->shape.rank == 3 ? r->shape.dims[0] : 0;
	int64_t H = D ? r->shape.dims[2] : 0;
	int64_t B = x && x->shape.rank == 3 ? x->shape.dims[1] : 0;
	return static_f32(x) && static_f32(w) && static_f32(r) && w->konst &&
	       r->konst && x->shape.rank == 3 && w->shape.rank == 3 &&
	       B >= 1 && B <= RNN_MAX_BATCH &&
	       (B == 1 || cpu_isa() < CPU_LEVEL_AVX512) && H >= 1 &&
	       H <= LSTM_MAX_HIDDEN &&
	       D == (strcmp(attr_str(n, "direction", "forward"),
			    "bidirectional") ? 1 : 2) &&
	       w->shape.dims[0] == D && w->shape.dims[1] == gates * H &&
	       w->shape.dims[2] == x->shape.dims[2] &&
	       r->shape.dims[1] == gates * H && default_acts(n, D);
}

typedef struct LstmP {
	RnnPack k;
	Lstm l;
	float *h, *c, *tmp;	/* [B][H] each (after xw), tmp [4H] */
} LstmP;

static void lstmp_free(void *state)
{
	LstmP *p = state;
	rnn_pack_free(&p->k);
	free(p);
}

/* The cell: gates g (i, o, f, c; pre-activation) and the state h, c
 * updated. */
static void cell_row(const Lstm *l, float *g, float *h, float *c, float *tmp)
{
	int64_t H = l->hidden;
	float *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;
	direct_sigmoid_run(g, g, (size_t)(3 * H));
	tanh_run(gc, gc, tmp, (size_t)H);
	for (int64_t j = 0; j < H; j++)
		c[j] = gf[j] * c[j] + gi[j] * gc[j];
	tanh_run(c, h, tmp, (size_t)H);
	for (int64_t j = 0; j < H; j++)
		h[j] *= go[j];
}

static int lstmp_run(void *state, const Tensor *const *in,
		     Tensor *const *out)
{
	LstmP *p = state;
	const RnnPack *k = &p->k;
	int64_t T = k->seq, B = k->batch, H = k->hidden, G = k->g;
	float *y = out[0] ? tensor_mut(out[0]) : NULL;
	float *yh = k->nout > 1 && out[1] ? tensor_mut(out[1]) : NULL;
	float *yc = k->nout > 2 && out[2] ? tensor_mut(out[2]) : NULL;
	for (int64_t d = 0; d < k->dirs; d++) {
		bool rev = d == 1 || k->reverse;
		rnn_inputs(k, d, in[0]->data);
		rnn_state(k, in, 5, d, p->h);
		rnn_state(k, in, 6, d, p->c);
		for (int64_t s = 0; s < T; s++) {
			int64_t tt = rev ? T - 1 - s : s;
			rnn_recur(k, d, p->h, 0, k->np, k->hr);
			for (int64_t b = 0; b < B; b++) {
				float *g = k->hr + b * k->ldr;
				const float *xg = k->xw + (tt * B + b) * G;
				for (int64_t j = 0; j < G; j++)
					g[j] = xg[j] + g[j];
				cell_row(&p->l, g, p->h + b * H,
					 p->c + b * H, p->tmp);
			}
			rnn_output(k, y, tt, d, p->h);
		}
		rnn_final(k, yh, d, p->h);
		rnn_final(k, yc, d, p->c);
	}
	return 0;
}

int small_lstm_packed(RunCtx *s, Prepared *pr, Task *t, FastKernel *fk)
{
	(void)s;
	const Node *n = t->n;
	const Value *x = rt_in_val(pr, n, 0), *w = rt_in_val(pr, n, 1);
	const Value *r = rt_in_val(pr, n, 2), *b = rt_in_val(pr, n, 3);
	Lstm l;
	if (n->op != OP_LSTM || !lstm_match(pr, t, &l) || (b && !b->konst) ||
	    !rnn_packable(n, x, w, r, 4))
		return 0;
	int64_t D = l.dirs, H = l.hidden, G = 4 * H, B = l.batch;
	LstmP *p = xmalloc(sizeof(*p));
	memset(p, 0, sizeof(*p));
	p->l = l;
	/* after xw: h and c [B][H], tmp [4H] */
	if (rnn_pack(&p->k, n, x, w, r, 4, 2 * H + G) < 0) {
		free(p);
		return -1;
	}
	p->h = p->k.xw + l.seq * B * G;
	p->c = p->h + B * H;
	p->tmp = p->c + B * H;
	const float *bd = b ? b->konst->data : NULL;
	for (int64_t i = 0; bd && i < D * G; i++) /* Wb + Rb */
		p->k.bias[i / G * p->k.padded + i % G] =
			bd[i / G * 2 * G + i % G] +
			bd[i / G * 2 * G + G + i % G];
	fk->run = lstmp_run;
	fk->free = lstmp_free;
	fk->state = p;
	fk->variant = cpu_isa_name(cpu_isa());
	return 1;
}

/* A GRU: gates z, r, h (ONNX's order); each step h R^T for all three,
 * or with linear_before_reset 0 for z and r, then (r h) R_h^T (2H whole
 * panels of 16). */
typedef struct GruP {
	RnnPack k;
	bool lbr;
	float *rb;	/* per direction [3H] */
	float *h, *rh;	/* [B][H] each (after xw) */
} GruP;

static void grup_free(void *state)
{
	GruP *p = state;
	rnn_pack_free(&p->k);
	free(p->rb);
	free(p);
}

/* One step of direction d: x's products xg [B][3H] (with Wb), h [B][H]
 * updated. */
static void gru_step(const GruP *p, int64_t d, const float *xg, float *h)
{
	const RnnPack *k = &p->k;
	int64_t H = k->hidden, B = k->batch, zr = 2 * H / 16;
	const float *rb = p->rb + d * 3 * H;
	/* linear_before_reset: all three; else z and r first */
	rnn_recur(k, d, h, 0, p->lbr ? k->np : zr, k->hr);
	for (int64_t b = 0; b < B; b++) {
		float *hr = k->hr + b * k->ldr;
		const float *xb = xg + b * 3 * H;
		for (int64_t j = 0; j < 2 * H; j++)
			hr[j] += xb[j] + rb[j];
		direct_sigmoid_run(hr, hr, (size_t)(2 * H));
		float *r = hr + H, *nn = hr + 2 * H;
		if (p->lbr)
			for (int64_t j = 0; j < H; j++)
				nn[j] = xb[2 * H + j] +
					r[j] * (nn[j] + rb[2 * H + j]);
		else
			for (int64_t j = 0; j < H; j++)
				p->rh[b * H + j] = r[j] * h[b * H + j];
	}
	if (!p->lbr)
		rnn_recur(k, d, p->rh, zr, k->np - zr, k->hr + 2 * H);
	for (int64_t b = 0; b < B; b++) {
		float *z = k->hr + b * k->ldr, *nn = z + 2 * H, *hb = h + b * H;
		const float *xb = xg + b * 3 * H;
		if (!p->lbr)
			for (int64_t j = 0; j < H; j++)
				nn[j] += xb[2 * H + j] + rb[2 * H + j];
		/* row b of rh is spent: tanh's scratch */
		tanh_run(nn, nn, p->rh + b * H, (size_t)H);
		for (int64_t j = 0; j < H; j++)
			hb[j] = (1 - z[j]) * nn[j] + z[j] * hb[j];
	}
}

static int grup_run(void *state, const Tensor *const *in,
		    Tensor *const *out)
{
	GruP *p = state;
	const RnnPack *k = &p->k;
	int64_t T = k->seq, B = k->batch, G = k->g;
	float *y = out[0] ? tensor_mut(out[0]) : NULL;
	float *yh = k->nout > 1 && out[1] ? tensor_mut(out[1]) : NULL;
	for (int64_t d = 0; d < k->dirs; d++) {
		bool rev = d == 1 || k->reverse;
		rnn_inputs(k, d, in[0]->data);
		rnn_state(k, in, 5, d, p->h);
		for (int64_t s = 0; s < T; s++) {
			int64_t tt = rev ? T - 1 - s : s;
			gru_step(p, d, k->xw + tt * B * G, p->h);
			rnn_output(k, y, tt, d, p->h);
		}
		rnn_final(k, yh, d, p->h);
	}
	return 0;
}

int small_gru_packed(RunCtx *s, Prepared *pr, Task *t, FastKernel *fk)
{
	(void)s;
	const Node *n = t->n;
	const Value *x = rt_in_val(pr, n, 0), *w = rt_in_val(pr, n, 1);
	const Value *r = rt_in_val(pr, n, 2), *b = rt_in_val(pr, n, 3);
	const Value *h0 = rt_in_val(pr, n, 5);
	if (n->op != OP_GRU || !rnn_packable(n, x, w, r, 3) ||
	    (b && (!static_f32(b) || !b->konst)) ||
	    (h0 && !static_f32(h0)) || rt_in_val(pr, n, 4) ||
	    node_attr(n, "clip") || attr_int(n, "layout", 0) ||
	    n->noutputs > 2)
		return 0;
	for (int o = 0; o < n->noutputs; o++)
		if (n->outputs[o] >= 0 && !t->out[o])
			return 0;
	int64_t D = r->shape.dims[0], H = r->shape.dims[2], G = 3 * H;
	int64_t T = x->shape.dims[0], B = x->shape.dims[1];
	bool lbr = attr_int(n, "linear_before_reset", 0) != 0;
	const Value *out[2] = { NULL, NULL };
	for (int o = 0; o < n->noutputs; o++)
		out[o] = n->outputs[o] >= 0 ? &pr->g->vals[n->outputs[o]]
					    : NULL;
	if ((!lbr && (2 * H) % 16) || !numel_is(b, D * 2 * G) ||
	    !numel_is(h0, D * B * H) || !numel_is(out[0], T * D * B * H) ||
	    !numel_is(out[1], D * B * H))
		return 0;
	GruP *p = xmalloc(sizeof(*p));
	memset(p, 0, sizeof(*p));
	p->lbr = lbr;
	/* after xw: h and rh [B][H] */
	if (rnn_pack(&p->k, n, x, w, r, 3, 2 * H) < 0) {
		free(p);
		return -1;
	}
	p->h = p->k.xw + T * B * G;
	p->rh = p->h + B * H;
	p->rb = xcalloc((size_t)(D * G), sizeof(float));
	const float *bd = b ? b->konst->data : NULL;
	for (int64_t i = 0; bd && i < D * G; i++) {
		p->k.bias[i / G * p->k.padded + i % G] =
			bd[i / G * 2 * G + i % G];
		p->rb[i] = bd[i / G * 2 * G + G + i % G];
	}
	fk->run = grup_run;
	fk->free = grup_free;
	fk->state = p;
	fk->variant = cpu_isa_name(cpu_isa());
	return 1;
}

/* ---- depthwise convolution --------------------------------------------- */

/* Tap a of the filter reads input ox * stride + off[a] for the outputs
 * ox in [lo[a], hi[a]), the ones inside the row (the same for every
 * channel, found once). */
typedef struct Dw {
	ConvGeom g;
	const float *w, *b; /* [C, 1, k], [C] or NULL */
	int64_t *off, *lo, *hi;
} Dw;

static void dw_free(void *state)
{
	Dw *d = state;
	free(d->off);
	free(d);
}

static void dw_taps(Dw *d)
{
	const ConvGeom *g = &d->g;
	int64_t k = g->kernel[0], sw = g->stride[0], iw = g->in[0];
	d->off = xmalloc((size_t)(3 * k) * sizeof(int64_t));
	d->lo = d->off + k, d->hi = d->lo + k;
	for (int64_t a = 0; a < k; a++) {
		int64_t off = a * g->dilation[0] - g->pad[0];
		int64_t hi = iw - 1 - off < 0 ? 0 : (iw - 1 - off) / sw + 1;
		d->off[a] = off;
		d->lo[a] = off >= 0 ? 0 : (-off + sw - 1) / sw;
		d->hi[a] = hi < g->out[0] ? hi : g->out[0];
	}
}

/* Channel ch of one image: x its input row, y its output row. */
RT_HOT_FN(static, void, dw_row,
	   (const Dw *d, const float *restrict x, float *restrict y, int64_t ch),
	   (d, x, y, ch))
{
	const ConvGeom *g = &d->g;
	int64_t ow = g->out[0], kw = g->kernel[0], sw = g->stride[0];
	const float *wc = d->w + ch * kw;
	float bias = d->b ? d->b[ch] : 0;
	for (int64_t ox = 0; ox < ow; ox++)
		y[ox] = bias;
	for (int64_t a = 0; a < kw; a++) {
		float wv = wc[a];
		const float *xa = x + d->off[a];
		for (int64_t ox = d->lo[a]; ox < d->hi[a]; ox++)
			y[ox] += wv * xa[ox * sw];
	}
}

static int dw_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const Dw *d = state;
	const ConvGeom *g = &d->g;
	const float *x = in[0]->data;
	float *y = tensor_mut(out[0]);
	for (int64_t i = 0; i < g->n; i++)
		for (int64_t ch = 0; ch < g->cin; ch++) {
			int64_t row = i * g->cin + ch;
			dw_row(d, x + row * g->in[0], y + row * g->out[0], ch);
		}
	return 0;
}

int small_dwconv(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0), *w = rt_in_val(p, n, 1);
	const Value *b = rt_in_val(p, n, 2);
	Dw d = { .w = NULL };
	if (n->op != OP_Conv || !static_f32(x) || !static_f32(w) ||
	    !const_of(w) || (b && (!static_f32(b) || !const_of(b))) ||
	    x->shape.rank != 3 || n->noutputs != 1 ||
	    !static_f32(&p->g->vals[n->outputs[0]]))
		return 0;
	OpCtx c = { .model = s->model->m, .g = p->g, .n = (Node *)n,
		    .opset = model_opset(s->model->m),
		    .fold_limit = INT64_MAX };
	if (nn_conv_geom(&c, 0, 1, false, &d.g) < 0) {
		clear_error();
		return 0;
	}
	if (d.g.group < 2 || d.g.group != d.g.cin || d.g.cout != d.g.cin ||
	    shape_numel(&w->shape) != d.g.cin * d.g.kernel[0] ||
	    (b && shape_numel(&b->shape) != d.g.cin))
		return 0;
	d.w = const_of(w)->data;
	d.b = b ? const_of(b)->data : NULL;
	Dw *st = xmalloc(sizeof(*st));
	*st = d;
	dw_taps(st);
	k->run = dw_run;
	k->free = dw_free;
	k->state = st;
	return 1;
}

/* ---- ReduceMean, ReduceSum ------------------------------------------------ */

/* Y[o, i] = sum over r of X[o, r, i] (divided by red for a mean), summed
 * in double in X's order, as the reference kernel sums. */
typedef struct Reduce {
	int64_t outer, red, inner;
	bool mean;
	double *acc; /* inner */
} Reduce;

static void reduce_free(void *state)
{
	Reduce *r = state;
	free(r->acc);
	free(r);
}

static int reduce_run(void *state, const Tensor *const *in,
		      Tensor *const *out)
{
	const Reduce *r = state;
	const float *x = in[0]->data;
	float *y = tensor_mut(out[0]);
	for (int64_t o = 0; o < r->outer; o++, y += r->inner) {
		for (int64_t i = 0; i < r->inner; i++)
			r->acc[i] = 0;
		for (int64_t k = 0; k < r->red; k++, x += r->inner)
			for (int64_t i = 0; i < r->inner; i++)
				r->acc[i] += x[i];
		for (int64_t i = 0; i < r->inner; i++)
			y[i] = (float)(r->mean ? r->acc[i] / (double)r->red
					       : r->acc[i]);
	}
	return 0;
}

/* The reduced axes of node n over rank r: false if not known here (a
 * computed axes input, noop_with_empty_axes, an axis out of range). */
static bool reduce_axes(const Prepared *p, const Node *n, int64_t opset,
			int32_t r, bool *red)
{
	bool input = n->op == OP_ReduceSum ? opset >= 13 : opset >= 18;
	const Value *av = input ? rt_in_val(p, n, 1) : NULL;
	const Tensor *at = const_of(av);
	const int64_t *attr = NULL;
	int64_t cnt = input ? (at ? shape_numel(&at->shape) : 0)
			    : attr_ints(n, "axes", &attr);
	if ((av && !at) || (cnt <= 0 && attr_int(n, "noop_with_empty_axes", 0)))
		return false;
	for (int32_t a = 0; a < r; a++)
		red[a] = cnt <= 0;
	for (int64_t k = 0; k < cnt; k++) {
		int64_t a = at ? tensor_get_i64(at, k) : attr[k];
		a = a < 0 ? a + r : a;
		if (a < 0 || a >= r)
			return false;
		red[a] = true;
	}
	return true;
}

int small_reduce(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0), *y = &p->g->vals[n->outputs[0]];
	bool red[MAX_RANK];
	Reduce r = { .outer = 1, .red = 1, .inner = 1,
		     .mean = n->op == OP_ReduceMean };
	if ((n->op != OP_ReduceMean && n->op != OP_ReduceSum) ||
	    !static_f32(x) || !static_f32(y) ||
	    !reduce_axes(p, n, model_opset(s->model->m), x->shape.rank, red))
		return 0;
	/* outer axes, then reduced ones, then inner ones; axes of one
	 * element may sit anywhere */
	int stage = 0;
	for (int32_t a = 0; a < x->shape.rank; a++) {
		int64_t d = x->shape.dims[a];
		if (d == 1)
			continue;
		int want = red[a] ? 1 : stage == 0 ? 0 : 2;
		if (want < stage)
			return 0;
		stage = want;
		*(want == 0 ? &r.outer : want == 1 ? &r.red : &r.inner) *= d;
	}
	if (r.outer * r.inner != shape_numel(&y->shape) ||
	    shape_numel(&x->shape) == 0)
		return 0;
	Reduce *st = xmalloc(sizeof(*st));
	*st = r;
	st->acc = xmalloc((size_t)r.inner * sizeof(double));
	k->run = reduce_run;
	k->free = reduce_free;
	k->state = st;
	return 1;
}

/* ---- Log, Sqrt, Neg, Abs, Exp ------------------------------------------ */

RT_HOT_FN(static, void, unary_loop,
	   (int op, const float *x, float *y, size_t n),
	   (op, x, y, n))
{
	switch (op) {
	case OP_Log:
		for (size_t i = 0; i < n; i++)
			y[i] = logf(x[i]);
		break;
	case OP_Sqrt:
		for (size_t i = 0; i < n; i++)
			y[i] = sqrtf(x[i]);
		break;
	case OP_Neg:
		for (size_t i = 0; i < n; i++)
			y[i] = -x[i];
		break;
	case OP_Abs:
		for (size_t i = 0; i < n; i++)
			y[i] = fabsf(x[i]);
		break;
	default:
		for (size_t i = 0; i < n; i++)
			y[i] = expf(x[i]);
	}
}

/* y may be x (in place): each element is read before it is written. */
static int unary_run(void *state, const Tensor *const *in, Tensor *const *out)
{
	const Node *n = state;
	unary_loop(n->op, in[0]->data, tensor_mut(out[0]),
		   out[0]->nbytes / sizeof(float));
	return 0;
}

int small_unary(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0), *y = &p->g->vals[n->outputs[0]];
	if ((n->op != OP_Log && n->op != OP_Sqrt && n->op != OP_Neg &&
	     n->op != OP_Abs && n->op != OP_Exp) ||
	    !static_f32(x) || !static_f32(y) ||
	    !shape_equal(&x->shape, &y->shape))
		return 0;
	k->run = unary_run;
	k->free = NULL;
	k->state = (void *)n;
	return 1;
}

/* ---- ScatterND, ScatterElements ------------------------------------------ */

/* A streaming model's cache update (ScatterND of the new frame into the
 * state) copied the whole state element by element through the
 * reference kernel's index walk and a tensor the size of the state.
 * Here the data is copied once with memcpy, not at all when the memory
 * plan put the output in its bytes (INPLACE_DATA: the data dies at the
 * node and no other input reads its buffer), then each update's slice
 * (ScatterND: one memcpy without a reduction) or element
 * (ScatterElements) is written in the reference kernel's order, so the
 * last of duplicate indices wins as there; every index is checked as the
 * reference checks it, with its error.  Reductions: float32 inline, in
 * double as the reference computes them; other dtypes through the
 * reference's own scatter_reduce_into. */
typedef struct Scatter {
	bool nd;	    /* ScatterND, else ScatterElements */
	ScatterRed red;
	size_t es;	    /* bytes of an element */
	bool f32;	    /* float32 (reductions inline) */
	int32_t rank, axis; /* data's rank; ScatterElements' axis */
	int64_t dims[MAX_RANK], st[MAX_RANK]; /* data's, row-major */
	int64_t idims[MAX_RANK]; /* indices' (ScatterElements) */
	int64_t nidx;		 /* indices' elements (ScatterElements) */
	int64_t k, n, slice;	 /* ScatterND: tuple length, tuples,
				    elements a slice */
	bool i32;		 /* int32 indices, else int64 */
} Scatter;

static int64_t scatter_index(const Scatter *sc, const Tensor *ind,
			     int64_t i)
{
	return sc->i32 ? ((const int32_t *)ind->data)[i]
		       : ((const int64_t *)ind->data)[i];
}

/* Element di of y = red(y[di], u[ui]). */
static void scatter_put(const Scatter *sc, Tensor *y, int64_t di,
			const Tensor *u, int64_t ui)
{
	if (sc->red == SCATTER_NONE) {
		memcpy((uint8_t *)tensor_mut(y) + (size_t)di * sc->es,
		       (const uint8_t *)u->data + (size_t)ui * sc->es, sc->es);
	} else if (sc->f32) {
		float *py = (float *)tensor_mut(y) + di;
		double a = *py, b = ((const float *)u->data)[ui];
		double v = sc->red == SCATTER_ADD   ? a + b
			   : sc->red == SCATTER_MUL ? a * b
			   : sc->red == SCATTER_MAX ? (a > b ? a : b)
						    : (a < b ? a : b);
		*py = (float)v;
	} else {
		scatter_reduce_into(y, di, u, ui, sc->red);
	}
}

static int scatter_range(int64_t v, int64_t d)
{
	return error("index %lld is out of range for a dim of %lld",
		     (long long)v, (long long)d);
}

static int scatter_nd(const Scatter *sc, const Tensor *ind, const Tensor *u,
		      Tensor *y)
{
	uint8_t *yb = tensor_mut(y);
	const uint8_t *ub = u->data;
	size_t row = (size_t)sc->slice * sc->es;
	for (int64_t i = 0; i < sc->n; i++) {
		int64_t off = 0;
		for (int64_t j = 0; j < sc->k; j++) {
			int64_t v = scatter_index(sc, ind, i * sc->k + j);
			int64_t d = sc->dims[j];
			if (v < -d || v >= d)
				return scatter_range(v, d);
			off += (v < 0 ? v + d : v) * sc->st[j];
		}
		if (sc->red == SCATTER_NONE) {
			memcpy(yb + (size_t)off * sc->es, ub + (size_t)i * row,
			       row);
			continue;
		}
		for (int64_t e = 0; e < sc->slice; e++)
			scatter_put(sc, y, off + e, u, i * sc->slice + e);
	}
	return 0;
}

static int scatter_elements(const Scatter *sc, const Tensor *ind,
			    const Tensor *u, Tensor *y)
{
	int32_t r = sc->rank, a = sc->axis;
	int64_t idx[MAX_RANK] = { 0 }, last = sc->idims[r - 1];
	int64_t len = sc->dims[a], sa = sc->st[a];
	/* a row of indices' last dim at a time: its base offset once */
	for (int64_t e = 0; e < sc->nidx; e += last) {
		int64_t base = 0;
		for (int32_t d = 0; d < r - 1; d++)
			base += (d == a ? 0 : idx[d]) * sc->st[d];
		for (int64_t j = 0; j < last; j++) {
			int64_t v = scatter_index(sc, ind, e + j);
			if (v < -len || v >= len)
				return scatter_range(v, len);
			int64_t off = base + (v < 0 ? v + len : v) * sa +
				      (a == r - 1 ? 0 : j);
			scatter_put(sc, y, off, u, e + j);
		}
		idx[r - 1] = last - 1;
		tn_next(r, sc->idims, idx);
	}
	return 0;
}

static int scatter_run(void *state, const Tensor *const *in,
		       Tensor *const *out)
{
	const Scatter *sc = state;
	Tensor *y = out[0];
	if (in[0]->data != y->data && y->nbytes)
		memcpy(tensor_mut(y), in[0]->data, y->nbytes);
	return sc->nd ? scatter_nd(sc, in[1], in[2], y)
		      : scatter_elements(sc, in[1], in[2], y);
}

int small_scatter(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0), *iv = rt_in_val(p, n, 1);
	const Value *u = rt_in_val(p, n, 2);
	int64_t opset = model_opset(s->model->m); /* as exec.c gives the */
	int red = scatter_reduction(attr_str(n, "reduction", "none"), /* ref */
				    opset > 0 ? opset : OPSET_NEWEST);
	if (n->ninputs != 3 || !static_tensor(x) || !static_tensor(iv) ||
	    !static_tensor(u) || u->dtype != x->dtype || red < 0 ||
	    !scatter_reducible(x->dtype, (ScatterRed)red) ||
	    (iv->dtype != DT_INT64 &&
	     (iv->dtype != DT_INT32 || n->op == OP_ScatterND)) ||
	    x->shape.rank < 1 || iv->shape.rank < 1 ||
	    !shape_numel(&x->shape))
		return 0;
	Scatter sc = { .nd = n->op == OP_ScatterND,
		       .red = (ScatterRed)red,
		       .es = dtype_size(x->dtype),
		       .f32 = x->dtype == DT_FLOAT,
		       .rank = x->shape.rank,
		       .i32 = iv->dtype == DT_INT32 };
	memcpy(sc.dims, x->shape.dims, sizeof(sc.dims));
	memcpy(sc.idims, iv->shape.dims, sizeof(sc.idims));
	tn_strides(&x->shape, sc.st);
	int32_t q = iv->shape.rank;
	int64_t ni = shape_numel(&iv->shape), nu = shape_numel(&u->shape);
	if (sc.nd) {
		sc.k = iv->shape.dims[q - 1];
		if (sc.k < 1 || sc.k > sc.rank)
			return 0; /* the reference kernel says what is wrong */
		sc.n = 1;
		for (int32_t d = 0; d < q - 1; d++)
			sc.n *= iv->shape.dims[d];
		sc.slice = sc.st[sc.k - 1];
		if (nu != sc.n * sc.slice)
			return 0;
	} else {
		int64_t a = attr_int(n, "axis", 0);
		if (a < 0)
			a += sc.rank;
		if (q != sc.rank || u->shape.rank != q ||
		    !shape_equal(&u->shape, &iv->shape) || a < 0 ||
		    a >= sc.rank)
			return 0;
		sc.axis = (int32_t)a;
		sc.nidx = ni;
		/* an indices dim past data's fails in the reference kernel
		 * (unless there are no indices): it says so */
		for (int32_t d = 0; ni && d < q; d++)
			if (d != sc.axis && iv->shape.dims[d] > sc.dims[d])
				return 0;
	}
	Scatter *st = xmalloc(sizeof(*st));
	*st = sc;
	k->run = scatter_run;
	k->free = free;
	k->state = st;
	return 1;
}
