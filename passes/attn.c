/*
 * passes/attn.c - attention as exporters write it, rewritten to gearc's
 * Sdpa (compiler/ops/attention.c), the fuse pass's step before its
 * anchors (passes/fuse.c takes a MatMul's scale as an activation
 * otherwise).
 *
 * From each Softmax over the last axis (axis -1, or before opset 13 the
 * last axis, where the old flattening reads one row), backwards to the
 * MatMul of the scores and forwards to the MatMul with the values:
 *
 *   S = MatMul(A, B)                    A = Q', B = K'^T, of one rank r
 *   S = S * k | S / k | k * S ...       scale steps, a scalar constant k
 *   S = Where(C, S, f) | Where(C, f, S) causal: C a constant bool of
 *                                       [.., Sq, Skv] that keeps exactly
 *                                       the keys j <= i (or, for a
 *                                       decoder, j <= i + Skv - Sq), f a
 *                                       scalar constant (-inf, finfo.min)
 *   S = S * k ...                       more scale steps (f scaled too)
 *   S = Add(S, M) | Add(M, S)           an additive mask broadcast into
 *                                       S: Hugging Face's (1 - m) * -1e4,
 *                                       a runtime value or a constant
 *   P = Softmax(S)
 *   O = MatMul(P, V')
 *
 * and around it the Transposes that split and merge the heads (the
 * Reshapes between are views: Sdpa reads their outputs): Q' and K'^T
 * walked back through Transposes and scale steps (torch's
 * nn.MultiheadAttention divides Q by sqrt(D) before the product; some
 * exporters scale Q and K each by D^-1/4), V' through Transposes, O
 * forward through Transposes; each Transpose composed into the input's
 * permutation (K'^T's with its last two axes swapped: K' itself), the
 * scales multiplied (in double, rounded to float once).  torch.onnx's
 * hand-written attention (Q K^T / sqrt(D) + mask), nn.MultiheadAttention
 * (Q / sqrt(D) K^T, K^T one Transpose of [S, B*H, D]), Mul by 1/sqrt(D),
 * K^T written straight as Transpose(K, [0,2,3,1]), GPT-2's
 * Where(bias, S, finfo.min) and nanoGPT's masked_fill(-inf) all match.
 *
 * What the rewrite keeps exact, up to float rounding: every value of
 * the chain but the last is read by the next step alone (no graph
 * output, no other reader, no subgraph); Q', K'^T, V' and S are float32
 * of static shapes of one rank, whose batch dims are equal (no
 * broadcasting inside a MatMul: Sdpa has none); the mask broadcasts into
 * S without growing it; scale steps multiply by a scalar (x / k only
 * where 1 / k is a finite float); the causal Where's condition is the
 * same triangle in every batch block; the mask is added after the
 * causal fill (the order Sdpa computes; an Add before the Where is not
 * taken).  The Sdpa node takes the slot and output of the last node
 * taken in and the name of the scores' MatMul; the rest go dead
 * (graph_dce).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/ops/opimpl.h"
#include "passes.h"

typedef struct Att {
	Graph *g;
	int64_t opset;
	int32_t *uses;	/* per value: node inputs, outer refs, graph outputs */
	int32_t *user;	/* per value: a node reading it (the one, if one) */
} Att;

static void add_use(Att *A, ValId v, int32_t node)
{
	if (v < 0 || v >= A->g->nvals)
		return;
	A->uses[v]++;
	A->user[v] = node;
}

static void count_outer(Att *A, const Graph *sub, int32_t node)
{
	for (ValId i = 0; i < sub->nvals; i++)
		if (sub->vals[i].kind == VAL_OUTER)
			add_use(A, sub->vals[i].outer, node);
}

static void count_uses(Att *A)
{
	Graph *g = A->g;
	A->uses = xcalloc((size_t)g->nvals + 1, sizeof(int32_t));
	A->user = xcalloc((size_t)g->nvals + 1, sizeof(int32_t));
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		for (int32_t k = 0; k < n->ninputs; k++)
			add_use(A, n->inputs[k], i);
		for (int32_t k = 0; k < n->nattrs; k++) {
			const Attr *a = &n->attrs[k];
			if (a->type == ATTR_GRAPH && a->g)
				count_outer(A, a->g, i);
			for (int32_t j = 0; a->type == ATTR_GRAPHS && j < a->n;
			     j++)
				count_outer(A, a->graphs[j], i);
		}
	}
	for (int32_t k = 0; k < g->noutputs; k++)
		add_use(A, g->outputs[k], -1);
}

/* The node producing v, or NULL. */
static Node *producer(Att *A, ValId v)
{
	const Value *x = &A->g->vals[v];
	return x->kind == VAL_NODE && x->producer >= 0
		       ? &A->g->nodes[x->producer]
		       : NULL;
}

/* The node that alone reads v, or NULL (read by more, by none, or as a
 * graph output). */
static Node *sole_reader(Att *A, ValId v)
{
	return A->uses[v] == 1 && A->user[v] >= 0 ? &A->g->nodes[A->user[v]]
						  : NULL;
}

/* v is float32 of static shape and rank r (r < 0: any). */
static bool f32_of_rank(Att *A, ValId v, int32_t r)
{
	const Value *x = &A->g->vals[v];
	return x->tkind == TK_TENSOR && x->dtype == DT_FLOAT &&
	       shape_is_static(&x->shape) && (r < 0 || x->shape.rank == r);
}

static const Shape *shape(Att *A, ValId v) { return &A->g->vals[v].shape; }

static bool scalar_const(Att *A, ValId v, float *out)
{
	const Tensor *t = v >= 0 ? A->g->vals[v].konst : NULL;
	if (!t || t->dtype != DT_FLOAT || shape_numel(&t->shape) != 1)
		return false;
	*out = ((const float *)t->data)[0];
	return true;
}

/* n (one output, of its input's shape) multiplies x by a scalar
 * constant: x * k, k * x, x / k (1 / k a finite float, so x / k is
 * x * (1 / k) within an ulp); x and the factor into *x, *k. */
static bool scale_step(Att *A, const Node *n, ValId *x, double *k)
{
	float c;
	if ((n->op != OP_Mul && n->op != OP_Div) || n->ninputs != 2 ||
	    n->noutputs != 1 || n->outputs[0] < 0)
		return false;
	for (int side = 0; side < 2; side++) {
		ValId a = n->inputs[side], b = n->inputs[!side];
		if (a < 0 || !scalar_const(A, b, &c) || a == b ||
		    A->g->vals[a].konst ||
		    !shape_equal(shape(A, a), shape(A, n->outputs[0])) ||
		    A->g->vals[a].dtype != DT_FLOAT)
			continue;
		if (n->op == OP_Div &&
		    (side || c == 0 || !isfinite(1.0f / c)))
			return false;
		*x = a;
		*k = n->op == OP_Div ? 1.0 / c : c;
		return true;
	}
	return false;
}

/* Transpose n's permutation of r axes into t (none given: reversed). */
static bool transpose_perm(const Node *n, int32_t r, int32_t *t)
{
	const int64_t *p;
	int32_t np = attr_ints(n, "perm", &p);
	if (n->op != OP_Transpose || n->ninputs != 1 || n->noutputs != 1 ||
	    (np >= 0 && np != r))
		return false;
	for (int32_t i = 0; i < r; i++) {
		int64_t a = np >= 0 ? p[i] : r - 1 - i;
		if (a < 0 || a >= r)
			return false;
		t[i] = (int32_t)a;
	}
	return true;
}

static void identity(int32_t r, int32_t *p)
{
	for (int32_t i = 0; i < r; i++)
		p[i] = i;
}

/* From v (read by a node of the chain), back through Transposes and
 * (scales) scale steps, each value read by the next step alone: the
 * value reached, v being Transpose(it, p) times *k. */
static ValId walk_in(Att *A, ValId v, int32_t r, int32_t *p, double *k,
		     bool scales)
{
	identity(r, p);
	*k = 1;
	for (;;) {
		Node *n = producer(A, v);
		int32_t t[MAX_RANK], np[MAX_RANK];
		ValId x;
		double f;
		if (!n || A->uses[v] != 1)
			return v;
		if (transpose_perm(n, r, t) && n->inputs[0] >= 0 &&
		    shape(A, n->inputs[0])->rank == r) {
			/* v[i] = in[t[i]], and what we read is v[p[i]] */
			for (int32_t i = 0; i < r; i++)
				np[i] = t[p[i]];
			memcpy(p, np, sizeof(int32_t) * (size_t)r);
			v = n->inputs[0];
		} else if (scales && scale_step(A, n, &x, &f)) {
			*k *= f;
			v = x;
		} else {
			return v;
		}
	}
}

/* From v forward through Transposes that alone read each value: the
 * value reached, Transpose(v, p). */
static ValId walk_out(Att *A, ValId v, int32_t r, int32_t *p,
		      int32_t *last)
{
	identity(r, p);
	for (;;) {
		Node *n = sole_reader(A, v);
		int32_t t[MAX_RANK], np[MAX_RANK];
		if (!n || !transpose_perm(n, r, t) || n->inputs[0] != v ||
		    n->outputs[0] < 0)
			return v;
		/* out[i] = cur[t[i]] = O[p[t[i]]] */
		for (int32_t i = 0; i < r; i++)
			np[i] = p[t[i]];
		memcpy(p, np, sizeof(int32_t) * (size_t)r);
		v = n->outputs[0];
		*last = (int32_t)(n - A->g->nodes);
	}
}

/* ---- the scores ---------------------------------------------------------- */

enum { ST_SCALE, ST_WHERE, ST_ADD, MAX_STEPS = 8 };

typedef struct Step {
	int kind;
	double k;	/* ST_SCALE: the factor */
	ValId other;	/* ST_ADD: the mask */
	float fill;	/* ST_WHERE: the fill */
	int causal;	/* ST_WHERE: SDPA_CAUSAL_* */
} Step;

/* SDPA_CAUSAL_* if constant bool cond, broadcast to [.., sq, skv] from
 * one [sq, skv] triangle, holds keep (true: kept) at exactly the keys a
 * causal mask keeps; else 0. */
static int causal_kind(const Tensor *c, int64_t sq, int64_t skv, bool keep)
{
	const Shape *cs = &c->shape;
	if (c->dtype != DT_BOOL || cs->rank < 2 ||
	    cs->dims[cs->rank - 2] != sq || cs->dims[cs->rank - 1] != skv ||
	    shape_numel(cs) != sq * skv)
		return 0;
	for (int kind = SDPA_CAUSAL_UPPER_LEFT;
	     kind <= SDPA_CAUSAL_LOWER_RIGHT; kind++) {
		int64_t off = kind == SDPA_CAUSAL_UPPER_LEFT ? 0 : skv - sq;
		bool ok = true;
		for (int64_t i = 0; i < sq && ok; i++)
			for (int64_t j = 0; j < skv && ok; j++) {
				bool kept = j <= i + off;
				ok = (tensor_get_i64(c, i * skv + j) != 0) ==
				     (keep ? kept : !kept);
			}
		if (ok)
			return kind;
	}
	return 0;
}

/* Where n as a causal mask of the scores s (its output's shape): *s the
 * score operand, st the fill and the kind. */
static bool causal_where(Att *A, const Node *n, ValId *s, Step *st)
{
	if (n->op != OP_Where || n->ninputs != 3 || n->noutputs != 1)
		return false;
	const Tensor *c = n->inputs[0] >= 0 ? A->g->vals[n->inputs[0]].konst
					    : NULL;
	const Shape *ys = shape(A, n->outputs[0]);
	if (!c || ys->rank < 2)
		return false;
	int64_t sq = ys->dims[ys->rank - 2], skv = ys->dims[ys->rank - 1];
	for (int keep = 1; keep >= 0; keep--) {
		ValId x = n->inputs[keep ? 1 : 2], f = n->inputs[keep ? 2 : 1];
		if (x < 0 || !scalar_const(A, f, &st->fill) ||
		    A->g->vals[x].konst || !shape_equal(shape(A, x), ys) ||
		    A->g->vals[x].dtype != DT_FLOAT ||
		    !(st->causal = causal_kind(c, sq, skv, keep)))
			continue;
		*s = x;
		return true;
	}
	return false;
}

/* M broadcasts into scores of shape ss without growing them: float, of
 * rank <= ss's, each dim 1 or ss's. */
static bool mask_fits(Att *A, ValId m, const Shape *ss)
{
	const Value *x = &A->g->vals[m];
	if (x->tkind != TK_TENSOR || x->dtype != DT_FLOAT ||
	    !shape_is_static(&x->shape) || x->shape.rank > ss->rank)
		return false;
	for (int32_t a = 0; a < x->shape.rank; a++) {
		int64_t d = x->shape.dims[a];
		if (d != 1 && d != ss->dims[ss->rank - x->shape.rank + a])
			return false;
	}
	return true;
}

/* Back from v (the Softmax's input) to the scores' MatMul, each value
 * read by the next step alone, the steps in st[0..*n) from the Softmax
 * back: the MatMul node, or NULL.  Steps read in graph order (the
 * reverse) must be scale* [Where scale*] [Add]: an Add is st[0] alone,
 * a Where once. */
static Node *score_chain(Att *A, ValId v, Step *st, int at, int *n)
{
	Node *p = producer(A, v);
	if (!p || A->uses[v] != 1 || p->noutputs != 1 ||
	    !shape_equal(shape(A, p->outputs[0]), shape(A, v)))
		return NULL;
	if (p->op == OP_MatMul && p->ninputs == 2) {
		*n = at;
		return p;
	}
	if (at == MAX_STEPS)
		return NULL;
	Step *s = &st[at];
	ValId x;
	memset(s, 0, sizeof(*s));
	if (scale_step(A, p, &x, &s->k)) {
		s->kind = ST_SCALE;
		return score_chain(A, x, st, at + 1, n);
	}
	if (causal_where(A, p, &x, s)) {
		for (int i = 0; i < at; i++)
			if (st[i].kind == ST_WHERE)
				return NULL;
		s->kind = ST_WHERE;
		return score_chain(A, x, st, at + 1, n);
	}
	if (p->op != OP_Add || p->ninputs != 2 || at != 0)
		return NULL;
	for (int pick = 0; pick < 2; pick++) {
		ValId a = p->inputs[pick], m = p->inputs[!pick];
		if (a < 0 || m < 0 || a == m ||
		    !shape_equal(shape(A, a), shape(A, v)) ||
		    !mask_fits(A, m, shape(A, v)))
			continue;
		s->kind = ST_ADD;
		s->other = m;
		Node *mm = score_chain(A, a, st, at + 1, n);
		if (mm)
			return mm;
	}
	return NULL;
}

/* ---- matching and rewriting ---------------------------------------------- */

typedef struct Match {
	const Node *qk, *pv;
	ValId q, k, v, m, y;
	int32_t qp[MAX_RANK], kp[MAX_RANK], vp[MAX_RANK], yp[MAX_RANK];
	int32_t last; /* the node whose slot Sdpa takes */
	double scale;
	int causal;
	float fill;
} Match;

/* The batch dims of a and b (rank r) are equal. */
static bool same_lead(const Shape *a, const Shape *b, int32_t r)
{
	for (int32_t i = 0; i < r - 2; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

/* Softmax sm over the last axis of a rank-r float input. */
static bool last_axis_softmax(Att *A, const Node *sm, int32_t *r)
{
	if (sm->op != OP_Softmax || sm->ninputs != 1 || sm->noutputs != 1 ||
	    sm->inputs[0] < 0 || sm->outputs[0] < 0 ||
	    !f32_of_rank(A, sm->inputs[0], -1))
		return false;
	*r = shape(A, sm->inputs[0])->rank;
	int64_t ax = attr_int(sm, "axis", A->opset < 13 ? 1 : -1);
	return *r >= 2 && (ax == -1 || ax == *r - 1);
}

/* The steps of the scores (score_chain) into m's scale, causal, fill
 * and mask: the Where's fill scaled by the steps after it, in float as
 * the graph computes it; false if a product is not a finite float. */
static bool fold_steps(const Step *st, int n, Match *m)
{
	double scale = 1;
	float fill = -INFINITY;
	m->m = -1;
	m->causal = 0;
	for (int i = n - 1; i >= 0; i--) { /* graph order */
		switch (st[i].kind) {
		case ST_SCALE:
			scale *= st[i].k;
			fill = (float)(fill * st[i].k);
			break;
		case ST_WHERE:
			m->causal = st[i].causal;
			fill = st[i].fill;
			break;
		default:
			m->m = st[i].other;
		}
	}
	m->scale *= scale;
	m->fill = fill;
	return isfinite((float)m->scale);
}

/* Attention around Softmax node sm into *m: true if it matches. */
static bool match(Att *A, const Node *sm, Match *m)
{
	int32_t r;
	Step st[MAX_STEPS];
	int nst;
	memset(m, 0, sizeof(*m));
	if (!last_axis_softmax(A, sm, &r))
		return false;
	ValId s = sm->inputs[0], p = sm->outputs[0];
	const Node *pv = sole_reader(A, p);
	const Node *qk = score_chain(A, s, st, 0, &nst);
	if (!pv || !qk || pv->op != OP_MatMul || pv->ninputs != 2 ||
	    pv->inputs[0] != p || pv->inputs[1] == p || pv->noutputs != 1 ||
	    pv->outputs[0] < 0)
		return false;
	ValId a = qk->inputs[0], b = qk->inputs[1], vv = pv->inputs[1];
	if (a < 0 || b < 0 || vv < 0 || !f32_of_rank(A, a, r) ||
	    !f32_of_rank(A, b, r) || !f32_of_rank(A, vv, r) ||
	    !f32_of_rank(A, pv->outputs[0], r) ||
	    !same_lead(shape(A, a), shape(A, b), r) ||
	    !same_lead(shape(A, a), shape(A, vv), r) ||
	    shape(A, vv)->dims[r - 2] != shape(A, s)->dims[r - 1])
		return false;
	double kq, kk, kv;
	int32_t kt[MAX_RANK];
	m->q = walk_in(A, a, r, m->qp, &kq, true);
	m->k = walk_in(A, b, r, kt, &kk, true);
	m->v = walk_in(A, vv, r, m->vp, &kv, false);
	/* B = K'^T: K' is B with its last two axes swapped */
	memcpy(m->kp, kt, sizeof(kt));
	m->kp[r - 2] = kt[r - 1];
	m->kp[r - 1] = kt[r - 2];
	m->scale = kq * kk;
	m->last = (int32_t)(pv - A->g->nodes);
	m->y = walk_out(A, pv->outputs[0], r, m->yp, &m->last);
	m->qk = qk;
	m->pv = pv;
	return fold_steps(st, nst, m);
}

/* perm as an INTS attribute of d unless it is the identity. */
static void perm_attr(Graph *g, Node *d, const char *name, const int32_t *p,
		      int32_t r)
{
	int64_t v[MAX_RANK];
	bool id = true;
	for (int32_t i = 0; i < r; i++) {
		v[i] = p[i];
		id &= p[i] == i;
	}
	if (!id)
		node_add_ints(g, d, name, v, r);
}

static void rewrite(Att *A, const Match *m)
{
	Graph *g = A->g;
	int32_t r = shape(A, m->q)->rank;
	const Node *last = &g->nodes[m->last];
	Node d;
	node_init(g, &d, m->qk->name, "Sdpa", GEARC_DOMAIN, m->m >= 0 ? 4 : 3,
		  1);
	d.label = last->label;
	d.inputs[0] = m->q;
	d.inputs[1] = m->k;
	d.inputs[2] = m->v;
	if (m->m >= 0)
		d.inputs[3] = m->m;
	d.outputs[0] = m->y;
	node_add_attr(g, &d, SDPA_SCALE_ATTR, ATTR_FLOAT)->f = (float)m->scale;
	if (m->causal) {
		node_add_attr(g, &d, SDPA_CAUSAL_ATTR, ATTR_INT)->i = m->causal;
		if (m->fill != -INFINITY)
			node_add_attr(g, &d, SDPA_CAUSAL_FILL_ATTR, ATTR_FLOAT)
				->f = m->fill;
	}
	perm_attr(g, &d, SDPA_Q_PERM_ATTR, m->qp, r);
	perm_attr(g, &d, SDPA_K_PERM_ATTR, m->kp, r);
	perm_attr(g, &d, SDPA_V_PERM_ATTR, m->vp, r);
	perm_attr(g, &d, SDPA_Y_PERM_ATTR, m->yp, r);
	g->nodes[m->last] = d;
	g->vals[m->y].producer = m->last;
}

int attn_fuse_graph(Graph *g, int64_t opset)
{
	Att A = { .g = g, .opset = opset };
	int fused = 0;
	count_uses(&A);
	for (int32_t i = 0; i < g->nnodes; i++) {
		Match m;
		if (g->nodes[i].op == OP_Softmax && match(&A, &g->nodes[i], &m)) {
			rewrite(&A, &m);
			fused++;
		}
	}
	free(A.uses);
	free(A.user);
	return fused;
}
