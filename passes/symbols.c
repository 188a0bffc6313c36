/*
 * passes/symbols.c - the symbolic walk over the dynamic graph of a
 * --hybrid compile (hybrid.h says what it gives; this file is how).
 *
 * Every value gets an SV: its rank and one Sym per dim, and for a small
 * integer tensor (rank <= 1, at most MAX_RANK elements: shape arithmetic)
 * one Sym per element.  A Sym is a constant, or floor((m*S + a) / d) of
 * one symbol S with d >= 1, or unknown.  Graph inputs start from their
 * dim_params, constants from their contents; each node's outputs come
 * from its inputs by the op's rule (rule()), or, for ops without one,
 * from what shape inference gave.  A rule never overrides inference: its
 * result is used only where inference left -1, and thrown away if the
 * ranks disagree.  Then write_back() records it in the graph.
 *
 * A partitioned graph is walked partition by partition, each subgraph's
 * inputs taking their node's inputs' SVs, so `gearc verify` can re-run
 * the walk on what a file holds.  If/Loop/Scan bodies are not walked.
 */
#include <stdlib.h>
#include <string.h>

#include "hybrid.h"
#include "partition.h"

enum { SYM_NONE = -2, SYM_CONST = -1 };

/* floor((m*sym + a) / d); the constant a if sym is SYM_CONST. */
typedef struct Sym {
	int32_t sym;
	int64_t m, a, d;
} Sym;

/* A value: rank (-1 unknown) and dims; contents n (-1: not tracked). */
typedef struct SV {
	int32_t rank, n;
	Sym d[MAX_RANK], v[MAX_RANK];
} SV;

typedef struct Walk {
	const char **names; /* symbols */
	int32_t nnames, capnames;
	int64_t opset; /* default-domain opset */
} Walk;

typedef struct GW {
	Walk *w;
	Graph *g;
	SV *sv; /* per value */
} GW;

/* ---- expressions ------------------------------------------------------- */

static Sym sy_none(void) { return (Sym){ SYM_NONE, 0, 0, 1 }; }
static Sym sy_const(int64_t c) { return (Sym){ SYM_CONST, 0, c, 1 }; }
static bool sy_known(Sym x) { return x.sym != SYM_NONE; }

static bool sy_is(Sym x, int64_t c)
{
	return x.sym == SYM_CONST && x.a == c;
}

static bool sy_eq(Sym x, Sym y)
{
	return sy_known(x) && x.sym == y.sym && x.m == y.m && x.a == y.a &&
	       x.d == y.d;
}

static int64_t gcd(int64_t a, int64_t b)
{
	a = a < 0 ? -a : a;
	b = b < 0 ? -b : b;
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static int64_t floor_div(int64_t a, int64_t d)
{
	int64_t q = a / d;
	return (a % d != 0 && (a < 0) != (d < 0)) ? q - 1 : q;
}

/* Lowest terms; a symbol with m = 0 is the constant floor(a / d). */
static Sym sy_norm(Sym x)
{
	if (x.sym < 0)
		return x;
	if (x.d < 1 || x.d == INT64_MIN || x.m == INT64_MIN ||
	    x.a == INT64_MIN)
		return sy_none();
	if (x.m == 0)
		return sy_const(floor_div(x.a, x.d));
	int64_t g = gcd(gcd(x.m, x.a), x.d);
	if (g > 1) {
		x.m /= g;
		x.a /= g;
		x.d /= g;
	}
	return x;
}

static Sym sy_add_c(Sym x, int64_t c)
{
	int64_t t;
	if (x.sym == SYM_CONST)
		return __builtin_add_overflow(x.a, c, &t) ? sy_none()
							  : sy_const(t);
	if (x.sym < 0 || __builtin_mul_overflow(c, x.d, &t) ||
	    __builtin_add_overflow(x.a, t, &x.a))
		return sy_none();
	return sy_norm(x);
}

static Sym sy_mul_c(Sym x, int64_t c)
{
	if (c == 1)
		return x;
	if (c == 0 && sy_known(x))
		return sy_const(0);
	if (x.sym == SYM_CONST)
		return __builtin_mul_overflow(x.a, c, &x.a) ? sy_none() : x;
	if (x.sym < 0 || x.d != 1 || __builtin_mul_overflow(x.m, c, &x.m) ||
	    __builtin_mul_overflow(x.a, c, &x.a))
		return sy_none();
	return sy_norm(x);
}

/* floor(x / c) for c >= 1: floor(floor(y / d) / c) = floor(y / (d*c)). */
static Sym sy_div_c(Sym x, int64_t c)
{
	if (c < 1 || !sy_known(x))
		return sy_none();
	if (x.sym == SYM_CONST)
		return sy_const(floor_div(x.a, c));
	if (__builtin_mul_overflow(x.d, c, &x.d))
		return sy_none();
	return sy_norm(x);
}

/* x + sign * y (sign 1 or -1). */
static Sym sy_add(Sym x, Sym y, int sign)
{
	Sym t = sy_mul_c(y, sign);
	if (t.sym == SYM_CONST)
		return sy_add_c(x, t.a);
	if (x.sym == SYM_CONST)
		return sy_add_c(t, x.a);
	if (!sy_known(x) || x.sym != t.sym || x.d != 1 || t.d != 1 ||
	    __builtin_add_overflow(x.m, t.m, &x.m) ||
	    __builtin_add_overflow(x.a, t.a, &x.a))
		return sy_none();
	return sy_norm(x);
}

static Sym sy_mul(Sym x, Sym y)
{
	if (y.sym == SYM_CONST)
		return sy_mul_c(x, y.a);
	if (x.sym == SYM_CONST)
		return sy_mul_c(y, x.a);
	return sy_none();
}

/* Integer Div as ONNX runs it (truncating): the same as floor for the
 * non-negative values shapes are made of. */
static Sym sy_div(Sym x, Sym y)
{
	if (y.sym != SYM_CONST || y.a < 1 || !sy_known(x))
		return sy_none();
	if (x.sym == SYM_CONST)
		return sy_const(x.a / y.a);
	return x.m >= 0 && x.a >= 0 ? sy_div_c(x, y.a) : sy_none();
}

/* "W", "W/8", "(W+7)/8", "2*W-1". */
static const char *sy_str(const Walk *w, Sym x, Arena *a)
{
	char num[320];
	const char *s = w->names[x.sym];
	size_t k;
	if (x.m == 1)
		k = (size_t)snprintf(num, sizeof(num), "%s", s);
	else if (x.m == -1)
		k = (size_t)snprintf(num, sizeof(num), "-%s", s);
	else
		k = (size_t)snprintf(num, sizeof(num), "%lld*%s",
				     (long long)x.m, s);
	if (x.a && k < sizeof(num))
		snprintf(num + k, sizeof(num) - k, "%+lld", (long long)x.a);
	if (x.d == 1)
		return arena_strdup(a, num);
	if (x.m == 1 && !x.a)
		return arena_printf(a, "%s/%lld", num, (long long)x.d);
	return arena_printf(a, "(%s)/%lld", num, (long long)x.d);
}

static int32_t symbol(Walk *w, const char *name)
{
	for (int32_t i = 0; i < w->nnames; i++)
		if (!strcmp(w->names[i], name))
			return i;
	if (w->nnames == w->capnames) {
		w->capnames = w->capnames ? 2 * w->capnames : 8;
		w->names = xrealloc(w->names,
				    (size_t)w->capnames * sizeof(char *));
	}
	w->names[w->nnames] = name;
	return w->nnames++;
}

/* ---- values -------------------------------------------------------------- */

static bool small_ints(const Value *v)
{
	return (v->dtype == DT_INT64 || v->dtype == DT_INT32) &&
	       v->shape.rank >= 0 && v->shape.rank <= 1 &&
	       shape_numel(&v->shape) >= 0 &&
	       shape_numel(&v->shape) <= MAX_RANK;
}

/* What inference knows of v: its dims, its contents if constant. */
static SV base_sv(const Value *v)
{
	SV s = { .rank = v->shape.rank, .n = -1 };
	for (int32_t k = 0; k < s.rank; k++)
		s.d[k] = v->shape.dims[k] >= 0 ? sy_const(v->shape.dims[k])
					       : sy_none();
	if (v->konst && v->tkind == TK_TENSOR && small_ints(v)) {
		s.n = (int32_t)shape_numel(&v->shape);
		for (int32_t i = 0; i < s.n; i++)
			s.v[i] = sy_const(tensor_get_i64(v->konst, i));
	}
	return s;
}

static SV sv_unknown(void) { return (SV){ .rank = -1, .n = -1 }; }

/* Input i of n, or NULL if omitted. */
static const SV *in(const GW *G, const Node *n, int i)
{
	return i < n->ninputs && n->inputs[i] >= 0 ? &G->sv[n->inputs[i]]
						   : NULL;
}

/* Input i's contents as constants into v (at most max); their count, or
 * -1 if absent or not all constant. */
static int32_t in_ints(const GW *G, const Node *n, int i, int64_t *v,
		       int32_t max)
{
	const SV *s = in(G, n, i);
	if (!s || s->n < 0 || s->n > max)
		return -1;
	for (int32_t k = 0; k < s->n; k++)
		if (s->v[k].sym != SYM_CONST)
			return -1;
		else
			v[k] = s->v[k].a;
	return s->n;
}

/* An int list: attribute attr before opset `since`, else input i. */
static int32_t int_list(const GW *G, const Node *n, int64_t opset,
			int64_t since, const char *attr, int i, int64_t *v)
{
	if (opset < since) {
		const int64_t *a;
		int32_t k = attr_ints(n, attr, &a);
		if (k < 0 || k > MAX_RANK)
			return -1;
		if (k)
			memcpy(v, a, (size_t)k * sizeof(int64_t));
		return k;
	}
	return in_ints(G, n, i, v, MAX_RANK);
}

static bool axis_ok(int64_t *axis, int32_t rank)
{
	if (*axis < 0)
		*axis += rank;
	return *axis >= 0 && *axis < rank;
}

/* ---- rules ------------------------------------------------------------- */

typedef struct Rule {
	const GW *G;
	const Node *n;
	int64_t opset;
	SV out[4]; /* outputs 0..3 */
} Rule;

#define IN(i) in(R->G, R->n, (i))

static void rule_same(Rule *R)
{
	const SV *x = IN(0);
	int op = R->n->op;
	if (!x)
		return;
	R->out[0] = *x;
	R->out[0].n = -1;
	/* contents pass through Identity and integer Casts */
	const Value *o = &R->G->g->vals[R->n->outputs[0]];
	if (op == OP_Identity || (op == OP_Cast && small_ints(o)))
		R->out[0].n = x->n;
}

/* Numpy broadcast of dims a and b (one position). */
static Sym bcast_dim(Sym a, Sym b)
{
	if (sy_is(a, 1))
		return b;
	if (sy_is(b, 1))
		return a;
	if (a.sym == SYM_CONST)
		return a;
	if (b.sym == SYM_CONST)
		return b;
	return sy_eq(a, b) ? a : sy_none();
}

static bool bcast(SV *y, const SV *a)
{
	if (a->rank < 0 || y->rank < 0)
		return false;
	int32_t r = a->rank > y->rank ? a->rank : y->rank;
	SV t = { .rank = r, .n = -1 };
	for (int32_t k = 0; k < r; k++) {
		int32_t i = k - (r - y->rank), j = k - (r - a->rank);
		Sym p = i >= 0 ? y->d[i] : sy_const(1);
		Sym q = j >= 0 ? a->d[j] : sy_const(1);
		t.d[k] = bcast_dim(p, q);
	}
	*y = t;
	return true;
}

/* Shape arithmetic on contents: elementwise with one side broadcast. */
static Sym arith(int op, Sym a, Sym b)
{
	switch (op) {
	case OP_Add: return sy_add(a, b, 1);
	case OP_Sub: return sy_add(a, b, -1);
	case OP_Mul: return sy_mul(a, b);
	case OP_Div: return sy_div(a, b);
	case OP_Min: case OP_Max:
		if (a.sym == SYM_CONST && b.sym == SYM_CONST)
			return sy_const((a.a < b.a) == (op == OP_Min) ? a.a
								      : b.a);
		return sy_eq(a, b) ? a : sy_none();
	default: return sy_none();
	}
}

static void rule_bcast(Rule *R)
{
	const Node *n = R->n;
	const SV *a = IN(0);
	if (!a)
		return;
	SV y = *a;
	for (int i = 1; i < n->ninputs; i++)
		if (!IN(i) || !bcast(&y, IN(i)))
			return;
	const SV *b = IN(1);
	y.n = -1;
	if (n->ninputs == 2 && a->n >= 0 && b && b->n >= 0 &&
	    (a->n == b->n || a->n == 1 || b->n == 1)) {
		y.n = a->n > b->n ? a->n : b->n;
		for (int32_t k = 0; k < y.n; k++)
			y.v[k] = arith(n->op, a->v[a->n == 1 ? 0 : k],
				       b->v[b->n == 1 ? 0 : k]);
	}
	R->out[0] = y;
}

typedef struct Window {
	int64_t k[MAX_RANK], s[MAX_RANK], dil[MAX_RANK], pads[2 * MAX_RANK];
	const char *auto_pad;
	bool ceil;
} Window;

/* Conv/pool attributes for nsp spatial dims; false if unreadable. */
static bool window(const Rule *R, int32_t nsp, Window *w)
{
	const Node *n = R->n;
	const int64_t *v;
	int32_t c = attr_ints(n, "kernel_shape", &v);
	if (c == nsp) {
		memcpy(w->k, v, (size_t)nsp * sizeof(int64_t));
	} else {
		const Value *wt = n->ninputs > 1 && n->inputs[1] >= 0
					  ? &R->G->g->vals[n->inputs[1]]
					  : NULL;
		if (!wt || wt->shape.rank != nsp + 2)
			return false;
		for (int32_t i = 0; i < nsp; i++)
			if ((w->k[i] = wt->shape.dims[2 + i]) < 0)
				return false;
	}
	for (int32_t i = 0; i < nsp; i++) {
		w->s[i] = w->dil[i] = 1;
		w->pads[i] = w->pads[nsp + i] = 0;
	}
	if ((c = attr_ints(n, "strides", &v)) == nsp)
		memcpy(w->s, v, (size_t)nsp * sizeof(int64_t));
	if ((c = attr_ints(n, "dilations", &v)) == nsp)
		memcpy(w->dil, v, (size_t)nsp * sizeof(int64_t));
	if ((c = attr_ints(n, "pads", &v)) == 2 * nsp)
		memcpy(w->pads, v, (size_t)(2 * nsp) * sizeof(int64_t));
	w->auto_pad = attr_str(n, "auto_pad", "NOTSET");
	w->ceil = attr_int(n, "ceil_mode", 0) != 0;
	for (int32_t i = 0; i < nsp; i++)
		if (w->s[i] < 1 || w->dil[i] < 1 || w->k[i] < 1)
			return false;
	return true;
}

/* a + b + c - d, or false if it overflows. */
static bool sum4(int64_t a, int64_t b, int64_t c, int64_t d, int64_t *r)
{
	return !__builtin_add_overflow(a, b, r) &&
	       !__builtin_add_overflow(*r, c, r) &&
	       !__builtin_sub_overflow(*r, d, r);
}

/* dil * (k - 1) + 1, the extent of a window; -1 if it overflows. */
static int64_t span(const Window *w, int32_t i)
{
	int64_t t;
	if (__builtin_mul_overflow(w->dil[i], w->k[i] - 1, &t) ||
	    __builtin_add_overflow(t, 1, &t))
		return -1;
	return t;
}

static bool same_pad(const Window *w)
{
	return !strcmp(w->auto_pad, "SAME_UPPER") ||
	       !strcmp(w->auto_pad, "SAME_LOWER");
}

static Sym conv_dim(Sym x, const Window *w, int32_t i, int32_t nsp)
{
	int64_t s = w->s[i], sp = span(w, i), c;
	bool valid = !strcmp(w->auto_pad, "VALID");
	if (same_pad(w))
		return sy_div_c(sy_add_c(x, s - 1), s);
	if (sp < 0 || !sum4(valid ? 0 : w->pads[i], valid ? 0 : w->pads[nsp + i],
			    w->ceil ? s - 1 : 0, sp, &c))
		return sy_none();
	return sy_add_c(sy_div_c(sy_add_c(x, c), s), 1);
}

/* s * (x - 1) + output_padding + span - pads. */
static Sym deconv_dim(const Rule *R, Sym x, const Window *w, int32_t i,
		      int32_t nsp)
{
	const int64_t *op;
	int64_t s = w->s[i], outpad = 0, pad = 0, sp = span(w, i), c;
	if (attr_ints(R->n, "output_padding", &op) == nsp)
		outpad = op[i];
	if (same_pad(w))
		return sy_mul_c(x, s);
	if (strcmp(w->auto_pad, "VALID") &&
	    __builtin_add_overflow(w->pads[i], w->pads[nsp + i], &pad))
		return sy_none();
	if (sp < 0 || !sum4(outpad, sp, 0, pad, &c))
		return sy_none();
	return sy_add_c(sy_mul_c(sy_add_c(x, -1), s), c);
}

/* Conv, ConvTranspose, MaxPool, AveragePool, LpPool: batch and spatial
 * dims from input 0; channels as inferred. */
static void rule_window(Rule *R)
{
	const SV *x = IN(0);
	const Value *o = &R->G->g->vals[R->n->outputs[0]];
	Window w;
	if (!x || x->rank < 3 || o->shape.rank != x->rank ||
	    node_attr(R->n, "output_shape") || !window(R, x->rank - 2, &w))
		return;
	int32_t nsp = x->rank - 2;
	SV y = base_sv(o);
	y.d[0] = x->d[0];
	for (int32_t i = 0; i < nsp; i++)
		y.d[2 + i] = R->n->op == OP_ConvTranspose
				     ? deconv_dim(R, x->d[2 + i], &w, i, nsp)
				     : conv_dim(x->d[2 + i], &w, i, nsp);
	R->out[0] = y;
	if (R->n->op == OP_MaxPool)
		R->out[1] = y;
}

/* GlobalAveragePool, GlobalMaxPool, GlobalLpPool: [N, C, 1, ...]. */
static void rule_global_pool(Rule *R)
{
	const SV *x = IN(0);
	if (!x || x->rank < 2)
		return;
	SV y = *x;
	y.n = -1;
	for (int32_t k = 2; k < y.rank; k++)
		y.d[k] = sy_const(1);
	R->out[0] = y;
}

static void rule_transpose(Rule *R)
{
	const SV *x = IN(0);
	const int64_t *perm;
	if (!x || x->rank < 0)
		return;
	int32_t n = attr_ints(R->n, "perm", &perm);
	SV y = { .rank = x->rank, .n = -1 };
	for (int32_t k = 0; k < x->rank; k++) {
		int64_t p = n < 0 ? x->rank - 1 - k : n == x->rank ? perm[k] : -1;
		if (p < 0 || p >= x->rank)
			return;
		y.d[k] = x->d[p];
	}
	R->out[0] = y;
}

static void rule_matmul(Rule *R)
{
	const SV *a = IN(0), *b = IN(1);
	if (!a || !b || a->rank < 2 || b->rank < 2)
		return;
	SV ba = { .rank = a->rank - 2, .n = -1 }, bb = { .rank = b->rank - 2 };
	memcpy(ba.d, a->d, (size_t)ba.rank * sizeof(Sym));
	memcpy(bb.d, b->d, (size_t)bb.rank * sizeof(Sym));
	if (!bcast(&ba, &bb) || ba.rank + 2 > MAX_RANK)
		return;
	ba.d[ba.rank] = a->d[a->rank - 2];
	ba.d[ba.rank + 1] = b->d[b->rank - 1];
	ba.rank += 2;
	R->out[0] = ba;
}

static void rule_gemm(Rule *R)
{
	const SV *a = IN(0), *b = IN(1);
	if (!a || !b || a->rank != 2 || b->rank != 2)
		return;
	bool ta = attr_int(R->n, "transA", 0), tb = attr_int(R->n, "transB", 0);
	R->out[0] = (SV){ .rank = 2, .n = -1,
			  .d = { a->d[ta ? 1 : 0], b->d[tb ? 0 : 1] } };
}

/* The reduced axes into mark[]; false if unknown. */
static bool reduced_axes(const Rule *R, int32_t rank, bool *mark)
{
	const Node *n = R->n;
	int64_t axes[MAX_RANK];
	int32_t na;
	int op = n->op;
	if (op == OP_ArgMax || op == OP_ArgMin) {
		axes[0] = attr_int(n, "axis", 0);
		na = 1;
	} else {
		int64_t since = op == OP_ReduceSum ? 13 : 18;
		const int64_t *a;
		if (R->opset < since) {
			na = attr_ints(n, "axes", &a);
			if (na > MAX_RANK)
				return false;
			if (na > 0)
				memcpy(axes, a, (size_t)na * sizeof(int64_t));
		} else if (n->ninputs > 1 && n->inputs[1] >= 0) {
			if ((na = in_ints(R->G, n, 1, axes, MAX_RANK)) < 0)
				return false;
		} else {
			na = -1;
		}
		if (na <= 0 && attr_int(n, "noop_with_empty_axes", 0))
			return false;
	}
	for (int32_t k = 0; k < rank; k++)
		mark[k] = na <= 0;
	for (int32_t i = 0; i < na; i++) {
		if (!axis_ok(&axes[i], rank))
			return false;
		mark[axes[i]] = true;
	}
	return true;
}

static void rule_reduce(Rule *R)
{
	const SV *x = IN(0);
	bool mark[MAX_RANK];
	if (!x || x->rank < 0 || !reduced_axes(R, x->rank, mark))
		return;
	bool keep = attr_int(R->n, "keepdims", 1) != 0;
	SV y = { .rank = 0, .n = -1 };
	for (int32_t k = 0; k < x->rank; k++)
		if (!mark[k])
			y.d[y.rank++] = x->d[k];
		else if (keep)
			y.d[y.rank++] = sy_const(1);
	R->out[0] = y;
}

static void rule_concat(Rule *R)
{
	const SV *x = IN(0);
	int64_t axis = attr_int(R->n, "axis", 0);
	if (!x || x->rank < 0 || !axis_ok(&axis, x->rank))
		return;
	SV y = *x;
	bool contents = x->n >= 0 && x->rank == 1;
	y.n = contents ? 0 : -1;
	for (int i = 0; i < R->n->ninputs; i++) {
		const SV *a = IN(i);
		if (!a || a->rank != x->rank)
			return;
		for (int32_t k = 0; k < x->rank; k++)
			if (k != axis && i)
				y.d[k] = sy_eq(y.d[k], a->d[k]) ? y.d[k]
				       : a->d[k].sym == SYM_CONST ? a->d[k]
				       : y.d[k].sym == SYM_CONST ? y.d[k]
								 : sy_none();
		if (i)
			y.d[axis] = sy_add(y.d[axis], a->d[axis], 1);
		contents &= a->n >= 0 && y.n + a->n <= MAX_RANK;
		for (int32_t k = 0; contents && k < a->n; k++)
			y.v[y.n++] = a->v[k];
	}
	if (!contents)
		y.n = -1;
	R->out[0] = y;
}

/* The product of dims [from, to). */
static Sym dims_prod(const SV *x, int32_t from, int32_t to)
{
	Sym p = sy_const(1);
	for (int32_t k = from; k < to; k++)
		p = sy_mul(p, x->d[k]);
	return p;
}

static void rule_flatten(Rule *R)
{
	const SV *x = IN(0);
	int64_t axis = attr_int(R->n, "axis", 1);
	if (!x || x->rank < 0)
		return;
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis > x->rank)
		return;
	R->out[0] = (SV){ .rank = 2, .n = -1,
			  .d = { dims_prod(x, 0, (int32_t)axis),
				 dims_prod(x, (int32_t)axis, x->rank) } };
}

static void rule_squeeze(Rule *R, bool un)
{
	const SV *x = IN(0);
	int64_t axes[MAX_RANK];
	int32_t na = int_list(R->G, R->n, R->opset, 13, "axes", 1, axes);
	if (!x || x->rank < 0 || na <= 0) /* no axes: inference's */
		return;
	int32_t r = un ? x->rank + na : x->rank;
	bool mark[MAX_RANK] = { false };
	if (r > MAX_RANK)
		return;
	for (int32_t i = 0; i < na; i++) {
		if (!axis_ok(&axes[i], r))
			return;
		mark[axes[i]] = true;
	}
	SV y = { .rank = 0, .n = x->n };
	memcpy(y.v, x->v, sizeof(y.v));
	for (int32_t k = 0, j = 0; k < r; k++)
		if (un)
			y.d[y.rank++] = mark[k] ? sy_const(1) : x->d[j++];
		else if (!mark[k])
			y.d[y.rank++] = x->d[k];
	R->out[0] = y;
}

/* Input dims as (constant factor) x (one symbolic factor, or 1). */
static bool factor(const SV *x, int32_t from, int32_t to, int64_t *c,
		   Sym *s)
{
	*c = 1;
	*s = sy_const(1);
	for (int32_t k = from; k < to; k++) {
		Sym d = x->d[k];
		if (d.sym == SYM_CONST) {
			if (__builtin_mul_overflow(*c, d.a, c))
				return false;
		} else if (sy_known(d) && sy_is(*s, 1)) {
			*s = d;
		} else {
			return false;
		}
	}
	return true;
}

/* Reshape to input 1's contents: 0 copies the input's dim (unless
 * allowzero), -1 is the element count over the other dims' (exact, since
 * the reshape is valid: floor division is exact there). */
static void rule_reshape(Rule *R)
{
	const SV *x = IN(0), *t = IN(1);
	bool allowzero = attr_int(R->n, "allowzero", 0) != 0;
	if (!x || !t || t->n < 0 || R->opset < 5)
		return;
	SV y = { .rank = t->n, .n = x->n };
	memcpy(y.v, x->v, sizeof(y.v));
	int32_t minus = -1;
	for (int32_t k = 0; k < t->n; k++) {
		Sym e = t->v[k];
		if (sy_is(e, 0) && !allowzero)
			e = k < x->rank ? x->d[k] : sy_none();
		if (sy_is(e, -1)) {
			if (minus >= 0)
				return;
			minus = k;
		}
		y.d[k] = e;
	}
	if (minus < 0) {
		R->out[0] = y;
		return;
	}
	int64_t cx, co;
	Sym sx, so;
	SV rest = y;
	rest.d[minus] = sy_const(1);
	y.d[minus] = sy_none();
	if (x->rank >= 0 && factor(x, 0, x->rank, &cx, &sx) &&
	    factor(&rest, 0, rest.rank, &co, &so) && co > 0) {
		if (sy_eq(sx, so))
			y.d[minus] = cx % co ? sy_none() : sy_const(cx / co);
		else if (sy_is(so, 1))
			y.d[minus] = sy_div_c(sy_mul_c(sx, cx), co);
	}
	R->out[0] = y;
}

static void rule_expand(Rule *R)
{
	const SV *x = IN(0), *t = IN(1);
	if (!x || !t || t->n < 0)
		return;
	SV y = { .rank = t->n, .n = -1 };
	memcpy(y.d, t->v, (size_t)t->n * sizeof(Sym));
	if (bcast(&y, x))
		R->out[0] = y;
}

static void rule_shape(Rule *R)
{
	const SV *x = IN(0);
	if (!x || x->rank < 0)
		return;
	int64_t start = attr_int(R->n, "start", 0);
	int64_t end = attr_int(R->n, "end", x->rank);
	start = start < 0 ? start + x->rank : start;
	end = end < 0 ? end + x->rank : end;
	start = start < 0 ? 0 : start > x->rank ? x->rank : start;
	end = end < start ? start : end > x->rank ? x->rank : end;
	SV y = { .rank = 1, .n = (int32_t)(end - start) };
	y.d[0] = sy_const(y.n);
	memcpy(y.v, x->d + start, (size_t)y.n * sizeof(Sym));
	R->out[0] = y;
}

static void rule_gather(Rule *R)
{
	const SV *x = IN(0), *ix = IN(1);
	int64_t axis = attr_int(R->n, "axis", 0);
	if (!x || !ix || x->rank < 0 || ix->rank < 0 ||
	    !axis_ok(&axis, x->rank) || x->rank - 1 + ix->rank > MAX_RANK)
		return;
	SV y = { .rank = 0, .n = -1 };
	for (int32_t k = 0; k < x->rank; k++)
		if (k != axis)
			y.d[y.rank++] = x->d[k];
		else
			for (int32_t j = 0; j < ix->rank; j++)
				y.d[y.rank++] = ix->d[j];
	int64_t idx[MAX_RANK];
	int32_t ni = in_ints(R->G, R->n, 1, idx, MAX_RANK);
	if (x->n >= 0 && x->rank == 1 && ni >= 0) {
		y.n = ni;
		for (int32_t j = 0; j < ni; j++) {
			int64_t i = idx[j] < 0 ? idx[j] + x->n : idx[j];
			if (i < 0 || i >= x->n)
				return;
			y.v[j] = x->v[i];
		}
	}
	R->out[0] = y;
}

/* Slice with step 1 of a symbolic dim d from a start s >= 0: to the end
 * (d - s) or to e < 0 from it (d + e - s), assuming d reaches that far.
 * Contents of a 1-D tensor are sliced too. */
static void rule_slice(Rule *R)
{
	const SV *x = IN(0);
	int64_t st[MAX_RANK], en[MAX_RANK], ax[MAX_RANK], sp[MAX_RANK];
	int32_t ns = int_list(R->G, R->n, R->opset, 10, "starts", 1, st);
	int32_t ne = int_list(R->G, R->n, R->opset, 10, "ends", 2, en);
	int32_t na = int_list(R->G, R->n, R->opset, 10, "axes", 3, ax);
	int32_t np = R->opset < 10 ? -1 : in_ints(R->G, R->n, 4, sp, MAX_RANK);
	bool has_axes = R->opset < 10 ? node_attr(R->n, "axes") != NULL
				      : R->n->ninputs > 3 && R->n->inputs[3] >= 0;
	bool has_steps = R->opset >= 10 && R->n->ninputs > 4 &&
			 R->n->inputs[4] >= 0;
	if (!x || x->rank < 0 || ns < 0 || ns != ne ||
	    (has_axes && na != ns) || (has_steps && np != ns))
		return;
	SV y = *x;
	y.n = -1;
	for (int32_t i = 0; i < ns; i++) {
		int64_t a = has_axes ? ax[i] : i, s = st[i], e = en[i];
		if (!axis_ok(&a, x->rank) || (has_steps && sp[i] != 1))
			return;
		Sym d = x->d[a];
		y.d[a] = sy_none(); /* a constant dim: inference has it */
		if (d.sym >= 0 && s >= 0 && s < INT32_MAX && e >= INT32_MAX)
			y.d[a] = sy_add_c(d, -s);
		else if (d.sym >= 0 && s >= 0 && s < INT32_MAX && e < 0 &&
			 e > -INT32_MAX)
			y.d[a] = sy_add_c(d, e - s);
		if (x->rank == 1 && x->n >= 0) {
			int64_t n = x->n;
			s = s < 0 ? s + n : s;
			e = e < 0 ? e + n : e;
			s = s < 0 ? 0 : s > n ? n : s;
			e = e < s ? s : e > n ? n : e;
			y.n = (int32_t)(e - s);
			memmove(y.v, x->v + s, (size_t)y.n * sizeof(Sym));
		}
	}
	R->out[0] = y;
}

static void rule_cos(Rule *R)
{
	const SV *t = IN(0);
	if (!t || t->n < 0)
		return;
	SV y = { .rank = t->n, .n = -1 };
	memcpy(y.d, t->v, (size_t)t->n * sizeof(Sym));
	R->out[0] = y;
}

static void rule_tile(Rule *R)
{
	const SV *x = IN(0);
	int64_t rep[MAX_RANK];
	int32_t nr = in_ints(R->G, R->n, 1, rep, MAX_RANK);
	if (!x || x->rank < 0 || nr != x->rank)
		return;
	SV y = { .rank = x->rank, .n = -1 };
	for (int32_t k = 0; k < x->rank; k++)
		y.d[k] = sy_mul_c(x->d[k], rep[k]);
	R->out[0] = y;
}

static void rule_pad(Rule *R)
{
	const SV *x = IN(0);
	int64_t p[2 * MAX_RANK];
	int32_t np;
	if (!x || x->rank < 0 || (R->n->ninputs > 3 && R->n->inputs[3] >= 0))
		return;
	if (R->opset < 11) {
		const int64_t *a;
		np = attr_ints(R->n, "pads", &a);
		if (np == 2 * x->rank && np)
			memcpy(p, a, (size_t)np * sizeof(int64_t));
	} else {
		const SV *s = IN(1);
		np = s && s->n == 2 * x->rank ? s->n : -1;
		for (int32_t k = 0; k < np; k++)
			if (s->v[k].sym != SYM_CONST)
				return;
			else
				p[k] = s->v[k].a;
	}
	if (np != 2 * x->rank)
		return;
	SV y = { .rank = x->rank, .n = -1 };
	for (int32_t k = 0; k < x->rank; k++) {
		int64_t t;
		y.d[k] = __builtin_add_overflow(p[k], p[x->rank + k], &t)
				 ? sy_none() : sy_add_c(x->d[k], t);
	}
	R->out[0] = y;
}

/* Resize/Upsample by integral constant scales, or to sizes. */
static void rule_resize(Rule *R)
{
	const SV *x = IN(0);
	const Node *n = R->n;
	int sidx = n->op == OP_Upsample ? 1 : R->opset >= 11 ? 2 : 1;
	const Value *sc = n->ninputs > sidx && n->inputs[sidx] >= 0
				  ? &R->G->g->vals[n->inputs[sidx]]
				  : NULL;
	const SV *sizes = n->op == OP_Resize && R->opset >= 11 ? IN(3) : NULL;
	if (!x || x->rank < 0)
		return;
	SV y = { .rank = x->rank, .n = -1 };
	if (sizes && sizes->n == x->rank) {
		memcpy(y.d, sizes->v, (size_t)x->rank * sizeof(Sym));
	} else if (sc && sc->konst && sc->dtype == DT_FLOAT &&
		   shape_numel(&sc->shape) == x->rank) {
		for (int32_t k = 0; k < x->rank; k++) {
			double f = tensor_get_f64(sc->konst, k);
			y.d[k] = f >= 1 && f < 0x1p62 && f == (double)(int64_t)f
					 ? sy_mul_c(x->d[k], (int64_t)f)
					 : sy_none();
		}
	} else {
		return;
	}
	R->out[0] = y;
}

/* LSTM/GRU/RNN: Y [seq, dirs, batch, hidden], Y_h/Y_c [dirs, batch,
 * hidden] (layout 0); seq and batch from X [seq, batch, in]. */
static void rule_rnn(Rule *R)
{
	const SV *x = IN(0);
	if (!x || x->rank != 3)
		return;
	bool batch_first = attr_int(R->n, "layout", 0) != 0;
	Sym seq = x->d[batch_first ? 1 : 0], b = x->d[batch_first ? 0 : 1];
	for (int k = 0; k < R->n->noutputs && k < 3; k++) {
		ValId o = R->n->outputs[k];
		if (o < 0)
			continue;
		SV y = base_sv(&R->G->g->vals[o]);
		if (k == 0 && y.rank == 4) {
			y.d[batch_first ? 1 : 0] = seq;
			y.d[batch_first ? 0 : 2] = b;
		} else if (k > 0 && y.rank == 3) {
			y.d[batch_first ? 0 : 1] = b;
		}
		R->out[k] = y;
	}
}

static void rule_topk(Rule *R)
{
	const SV *x = IN(0), *k = IN(1);
	int64_t axis = attr_int(R->n, "axis", -1);
	if (!x || x->rank < 0 || !k || k->n != 1 || !axis_ok(&axis, x->rank))
		return;
	SV y = *x;
	y.n = -1;
	y.d[axis] = k->v[0];
	R->out[0] = R->out[1] = y;
}

static void rule(Rule *R)
{
	int op = R->n->op;
	if (op_info[op].shape == SHAPE_SAME)
		rule_same(R);
	else if (op_info[op].shape == SHAPE_BCAST)
		rule_bcast(R);
	switch (op) {
	case OP_Conv: case OP_ConvTranspose: case OP_MaxPool:
	case OP_AveragePool: case OP_LpPool: rule_window(R); break;
	case OP_GlobalAveragePool: case OP_GlobalMaxPool:
	case OP_GlobalLpPool: rule_global_pool(R); break;
	case OP_Transpose: rule_transpose(R); break;
	case OP_MatMul: rule_matmul(R); break;
	case OP_Gemm: rule_gemm(R); break;
	case OP_ReduceL1: case OP_ReduceL2: case OP_ReduceLogSum:
	case OP_ReduceLogSumExp: case OP_ReduceMax: case OP_ReduceMean:
	case OP_ReduceMin: case OP_ReduceProd: case OP_ReduceSum:
	case OP_ReduceSumSquare: case OP_ArgMax: case OP_ArgMin:
		rule_reduce(R);
		break;
	case OP_Concat: rule_concat(R); break;
	case OP_Flatten: rule_flatten(R); break;
	case OP_Squeeze: rule_squeeze(R, false); break;
	case OP_Unsqueeze: rule_squeeze(R, true); break;
	case OP_Reshape: rule_reshape(R); break;
	case OP_Expand: rule_expand(R); break;
	case OP_Shape: rule_shape(R); break;
	case OP_Gather: rule_gather(R); break;
	case OP_Slice: rule_slice(R); break;
	case OP_ConstantOfShape: rule_cos(R); break;
	case OP_Tile: rule_tile(R); break;
	case OP_Pad: rule_pad(R); break;
	case OP_Resize: case OP_Upsample: rule_resize(R); break;
	case OP_LSTM: case OP_GRU: case OP_RNN: rule_rnn(R); break;
	case OP_TopK: rule_topk(R); break;
	default: break;
	}
}

/* ---- the walk ------------------------------------------------------------- */

/* What rule r says of a value inference gave as base: only where
 * inference has -1, only if the ranks agree; base's contents win. */
static SV merge(const SV *base, const SV *r)
{
	if (r->rank < 0 || r->rank != base->rank)
		return *base;
	SV y = *base;
	for (int32_t k = 0; k < y.rank; k++)
		if (!sy_known(y.d[k]))
			y.d[k] = r->d[k];
	if (y.n < 0 && r->n >= 0 && base->rank <= 1) {
		y.n = r->n;
		memcpy(y.v, r->v, sizeof(y.v));
	}
	return y;
}

static void walk_graph(GW *G, bool top);

static void walk_partition(GW *G, const Node *n)
{
	Graph *sub = partition_subgraph(n);
	if (!sub || sub->ninputs != n->ninputs || sub->noutputs != n->noutputs)
		return;
	GW S = { .w = G->w, .g = sub };
	S.sv = xmalloc(((size_t)sub->nvals + 1) * sizeof(SV));
	for (ValId v = 0; v < sub->nvals; v++)
		S.sv[v] = base_sv(&sub->vals[v]);
	for (int32_t k = 0; k < n->ninputs; k++)
		if (n->inputs[k] >= 0)
			S.sv[sub->inputs[k]] = G->sv[n->inputs[k]];
	walk_graph(&S, false);
	for (int32_t k = 0; k < n->noutputs; k++)
		if (n->outputs[k] >= 0)
			G->sv[n->outputs[k]] = S.sv[sub->outputs[k]];
	free(S.sv);
}

static void walk_node(GW *G, const Node *n)
{
	Rule R = { .G = G, .n = n, .opset = G->w->opset };
	if (partition_is_node(n)) {
		walk_partition(G, n);
		return;
	}
	for (int k = 0; k < 4; k++)
		R.out[k] = sv_unknown();
	rule(&R);
	for (int k = 0; k < n->noutputs; k++) {
		ValId o = n->outputs[k];
		if (o < 0)
			continue;
		SV base = base_sv(&G->g->vals[o]);
		G->sv[o] = k < 4 ? merge(&base, &R.out[k]) : base;
	}
}

/* Records v's SV: -1 dims it knows become constants or get their
 * expression as dim_param; a value fully described loses VF_DATA_DEP. */
static void write_back(GW *G, Value *v, const SV *s)
{
	const char **dp = NULL;
	bool all = true;
	if (v->shape.rank < 0 || s->rank != v->shape.rank)
		return;
	for (int32_t k = 0; k < v->shape.rank; k++) {
		Sym d = s->d[k];
		if (v->shape.dims[k] >= 0)
			continue;
		if (d.sym == SYM_CONST && d.a >= 0) {
			v->shape.dims[k] = d.a;
		} else if (d.sym >= 0) {
			if (!dp)
				dp = arena_array(G->g->arena,
						 (size_t)v->shape.rank,
						 sizeof(char *));
			dp[k] = sy_str(G->w, d, G->g->arena);
		} else {
			all = false;
		}
	}
	v->dim_params = dp;
	if (all)
		v->flags &= (uint16_t)~VF_DATA_DEP;
}

static void walk_graph(GW *G, bool top)
{
	Graph *g = G->g;
	for (int32_t i = 0; i < g->nnodes; i++)
		walk_node(G, &g->nodes[i]);
	for (ValId v = 0; v < g->nvals; v++) {
		Value *x = &g->vals[v];
		if (x->kind == VAL_NODE || (x->kind == VAL_INPUT && !top))
			write_back(G, x, &G->sv[v]);
	}
}

void hybrid_symbols(Graph *g, int64_t opset)
{
	Walk w = { .opset = opset };
	GW G = { .w = &w, .g = g };
	G.sv = xmalloc(((size_t)g->nvals + 1) * sizeof(SV));
	for (ValId v = 0; v < g->nvals; v++) {
		const Value *x = &g->vals[v];
		G.sv[v] = base_sv(x);
		if (x->kind != VAL_INPUT || !x->dim_params)
			continue;
		for (int32_t k = 0; k < x->shape.rank; k++)
			if (x->shape.dims[k] < 0 && x->dim_params[k] &&
			    *x->dim_params[k])
				G.sv[v].d[k] = (Sym){ symbol(&w,
							     x->dim_params[k]),
						      1, 0, 1 };
	}
	walk_graph(&G, true);
	free(G.sv);
	free(w.names);
}
