/*
 * compiler/ops/sequence.c - sequences, optionals and the string ops:
 * SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase,
 * SequenceAt, SequenceLength, SplitToSequence, ConcatFromSequence,
 * SequenceMap; Optional, OptionalHasElement, OptionalGetElement;
 * StringNormalizer, TfIdfVectorizer.
 *
 * A value of tkind TK_SEQUENCE holds its element dtype and the merge of
 * its elements' shapes (a dim that differs is -1).  That loses which
 * element has which shape, so when a sequence is built in the graph from
 * known pieces (SequenceEmpty/Construct/SplitToSequence, then Insert and
 * Erase at constant positions) seq_elems() replays that chain to list its
 * elements exactly: SequenceAt at a constant position then gets the exact
 * element, SequenceLength and ConcatFromSequence exact results, and with
 * constant pieces (a SplitToSequence of a constant is sliced on demand)
 * their contents.  Folding never stores a sequence's contents in the
 * graph: a Value's konst is always a plain tensor.
 *
 * At run time a sequence value is a "sequence tensor": a Tensor whose
 * dtype is the element dtype, whose shape is [n] and whose data is n
 * pointers (const Tensor *) to its elements (nbytes = n * sizeof(void *)).
 * The runtime binds a sequence input as such a tensor; the kernel of an
 * op with a sequence output (SequenceEmpty/Construct/Insert/Erase,
 * SplitToSequence) fills the output's tensor form (op_seq_out) through
 * op_set_seq (compiler/ops/opimpl.h), where it has one: the pointer array and deep
 * copies of the elements are allocated with op_scratch()/op_new_tensor(),
 * so the runtime must keep that node's scratch alive until the
 * sequence's last use (not reset it after the node).  Kernels reading a
 * sequence (SequenceAt, SequenceLength, ConcatFromSequence) get its
 * elements from seq_tensors(): the input's tensor form (op_seq_in) where
 * it has one, else the replayed chain.  SequenceMap needs the executor to run its
 * body and has no kernel yet.
 */
#include <string.h>

#include "opimpl.h"

enum {
	MAX_ELEMS = 64,	 /* longest sequence listed element by element */
	MAX_CHAIN = 256, /* longest Insert/Erase chain replayed */
};

typedef struct Elem {
	int32_t dtype;
	uint16_t dep; /* VF_DATA_DEP or 0 */
	Shape s;
	const Tensor *k;
	/* a piece of a constant SplitToSequence input, sliced on demand:
	 * s.dims[axis] (1 and dropped if squeeze) from index from */
	const Tensor *whole;
	int64_t from;
	int32_t axis;
	bool squeeze;
} Elem;

static Elem elem_of(const Value *v)
{
	Elem e = { .dtype = v->dtype, .s = v->shape, .k = v->konst,
		   .dep = (uint16_t)(v->flags & VF_DATA_DEP) };
	return e;
}

/* Merges shape b into a (a dim that differs becomes -1, a rank that
 * differs makes the rank unknown); true if a known dim was lost. */
static bool merge_shape(Shape *a, const Shape *b)
{
	if (a->rank < 0)
		return false;
	if (b->rank != a->rank) {
		*a = shape_unknown();
		return true;
	}
	bool lost = false;
	for (int32_t i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i] && a->dims[i] != DIM_UNKNOWN) {
			lost |= b->dims[i] != DIM_UNKNOWN;
			a->dims[i] = DIM_UNKNOWN;
		}
	return lost;
}

/* Sets output i to a sequence of dtype dt whose elements have shape s. */
static void set_seq(OpCtx *c, int i, int dt, const Shape *s, uint16_t dep)
{
	Value *v = op_out(c, i);
	if (!v)
		return;
	v->dtype = dt;
	v->tkind = TK_SEQUENCE;
	v->shape = *s;
	v->flags |= dep;
}

/* Input i, which must be a sequence. */
static Value *seq_in(OpCtx *c, int i)
{
	Value *v = op_need_in(c, i);
	if (v && v->tkind != TK_SEQUENCE)
		return op_error(c, "input %d ('%s') must be a sequence", i,
				v->name),
		       NULL;
	return v;
}

/* Input i, which must be a tensor. */
static Value *tensor_in(OpCtx *c, int i)
{
	Value *v = op_need_in(c, i);
	if (v && v->tkind != TK_TENSOR)
		return op_error(c, "input %d ('%s') must be a tensor", i,
				v->name),
		       NULL;
	return v;
}

/* A position input (int32 or int64, one element): 1 and *pos if it is
 * constant, 0 if absent or not constant. */
static int position(OpCtx *c, int i, int64_t *pos)
{
	if (!op_in(c, i))
		return 0;
	if (op_check_dtype(c, i, DTS(DT_INT32) | DTS(DT_INT64)) < 0 ||
	    op_check_scalar(c, i) < 0)
		return -1;
	const Tensor *t = op_const_in(c, i);
	if (!t)
		return 0;
	if (shape_numel(&t->shape) != 1)
		return op_error(c, "input %d ('%s') must hold one position", i,
				op_in(c, i)->name);
	*pos = tensor_get_i64(t, 0);
	return 1;
}

/* ---- SplitToSequence's pieces ------------------------------------------ */

/* The pieces SplitToSequence node n (of graph g) makes: *count of them
 * (-1 if not known) in out[] (when count <= MAX_ELEMS), and the merge of
 * their shapes in *merged.  With c (the node's own hook) problems are
 * errors; without, they only make the pieces unknown. */
static int split_pieces(OpCtx *c, const Graph *g, const Node *n, Elem *out,
			int *count, Shape *merged)
{
	const Value *x = &g->vals[n->inputs[0]];
	const Value *sp = n->ninputs > 1 && n->inputs[1] >= 0
				  ? &g->vals[n->inputs[1]]
				  : NULL;
	int64_t axis = attr_int(n, "axis", 0), keep = attr_int(n, "keepdims", 1);
	int32_t r = x->shape.rank;
	*count = -1;
	*merged = shape_unknown();
	if (r < 0)
		return 0;
	if (axis < -(int64_t)r || axis >= r)
		return c ? op_error(c, "axis %lld is out of range for rank %d",
				    (long long)axis, r)
			 : 0;
	int32_t ax = (int32_t)(axis < 0 ? axis + r : axis);
	int64_t d = x->shape.dims[ax];
	Elem e = { .dtype = x->dtype, .s = x->shape,
		   .dep = (uint16_t)(x->flags & VF_DATA_DEP) };
	int64_t sizes[MAX_ELEMS];
	int64_t nsz = -1, same = DIM_UNKNOWN; /* pieces; their common size */
	if (!sp) {
		/* pieces of 1, without the axis unless keepdims */
		if (!keep) {
			memmove(e.s.dims + ax, e.s.dims + ax + 1,
				(size_t)(r - ax - 1) * sizeof(int64_t));
			e.s.rank--;
		} else {
			e.s.dims[ax] = 1;
		}
		*merged = e.s;
		if (d < 0 || d > MAX_ELEMS)
			return 0;
		for (int i = 0; i < d; i++) {
			out[i] = e;
			out[i].whole = x->konst;
			out[i].axis = ax;
			out[i].from = i;
			out[i].squeeze = !keep;
		}
		*count = (int)d;
		return 0;
	}
	const Tensor *t = sp->konst;
	if (c && (op_check_dtype(c, 1, DTS(DT_INT32) | DTS(DT_INT64)) < 0 ||
		  op_check_rank(c, 1, 0, 1) < 0))
		return -1;
	if (sp->shape.rank == 0 && t) { /* equal pieces of s, the last less */
		int64_t s = tensor_get_i64(t, 0);
		if (s <= 0)
			return c ? op_error(c, "split %lld must be positive",
					    (long long)s)
				 : 0;
		if (d >= 0) {
			nsz = d / s + (d % s != 0);
			same = nsz == 1 ? d : d % s == 0 ? s : DIM_UNKNOWN;
			for (int64_t i = 0; i < nsz && nsz <= MAX_ELEMS; i++)
				sizes[i] = i < nsz - 1 || d % s == 0 ? s : d % s;
		}
	} else if (sp->shape.rank == 1 && t) {
		int64_t sum = 0;
		nsz = shape_numel(&t->shape);
		for (int64_t i = 0; i < nsz; i++) {
			int64_t s = tensor_get_i64(t, i);
			if (s < 0 || !add_nonneg_i64(sum, s, &sum))
				return c ? op_error(c, "split has a negative or "
						    "too large value %lld",
						    (long long)s)
					 : 0;
			if (i < MAX_ELEMS)
				sizes[i] = s;
			if (i == 0)
				same = s;
			else if (s != same)
				same = DIM_UNKNOWN;
		}
		if (d >= 0 && sum != d)
			return c ? op_error(c, "split sums to %lld, but input "
					    "0 ('%s') has %lld along axis %d",
					    (long long)sum, x->name,
					    (long long)d, ax)
				 : 0;
	} else if (sp->shape.rank == 1 && sp->shape.dims[0] >= 0 &&
		   sp->shape.dims[0] <= MAX_ELEMS) {
		/* not constant: only a 1-D split's length is known */
		nsz = sp->shape.dims[0];
		for (int64_t i = 0; i < nsz; i++)
			sizes[i] = DIM_UNKNOWN;
		e.dep = VF_DATA_DEP;
	} else {
		e.dep = VF_DATA_DEP;
	}
	e.s.dims[ax] = same;
	*merged = e.s;
	if (nsz < 0 || nsz > MAX_ELEMS)
		return 0;
	int64_t from = 0;
	for (int64_t i = 0; i < nsz; i++) {
		out[i] = e;
		out[i].s.dims[ax] = sizes[i];
		out[i].whole = x->konst && t ? x->konst : NULL;
		out[i].axis = ax;
		out[i].from = from;
		from += sizes[i];
	}
	*count = (int)nsz;
	return 0;
}

/* ---- the elements of a sequence ----------------------------------------- */

typedef struct Step {
	const Graph *g;
	const Node *n;
} Step;

static bool const_pos(const Graph *g, const Node *n, int i, int64_t *pos,
		      bool *given)
{
	*given = i < n->ninputs && n->inputs[i] >= 0;
	if (!*given)
		return true;
	const Tensor *t = g->vals[n->inputs[i]].konst;
	if (!t || shape_numel(&t->shape) != 1 || t->dtype == DT_STRING)
		return false;
	*pos = tensor_get_i64(t, 0);
	return true;
}

/* The elements of sequence v (of graph g) if the graph builds it from
 * known pieces: their count (at most MAX_ELEMS) with out[] filled, or -1
 * if not known. */
static int seq_elems(const Graph *g, ValId v, Elem *out)
{
	Step chain[MAX_CHAIN];
	int nc = 0, cnt = -1;
	for (;;) {
		const Value *val = &g->vals[v];
		if (val->kind == VAL_OUTER) {
			if (!g->parent || val->outer < 0)
				return -1;
			v = val->outer;
			g = g->parent;
			continue;
		}
		if (val->kind != VAL_NODE || val->producer < 0 ||
		    val->producer >= g->nnodes)
			return -1;
		const Node *n = &g->nodes[val->producer];
		if (n->op == OP_SequenceInsert || n->op == OP_SequenceErase ||
		    n->op == OP_Identity) {
			if (nc == MAX_CHAIN || n->ninputs < 1 ||
			    n->inputs[0] < 0)
				return -1;
			chain[nc++] = (Step){ g, n };
			v = n->inputs[0];
			continue;
		}
		if (n->op == OP_SequenceEmpty) {
			cnt = 0;
		} else if (n->op == OP_SequenceConstruct) {
			if (n->ninputs > MAX_ELEMS)
				return -1;
			for (cnt = 0; cnt < n->ninputs; cnt++) {
				if (n->inputs[cnt] < 0)
					return -1;
				out[cnt] = elem_of(&g->vals[n->inputs[cnt]]);
			}
		} else if (n->op == OP_SplitToSequence && n->ninputs >= 1 &&
			   n->inputs[0] >= 0) {
			Shape merged;
			if (split_pieces(NULL, g, n, out, &cnt, &merged) < 0)
				return -1;
		} else {
			return -1;
		}
		break;
	}
	while (cnt >= 0 && nc > 0) {
		const Step *s = &chain[--nc];
		int64_t pos = 0;
		bool given;
		if (s->n->op == OP_Identity)
			continue;
		if (s->n->op == OP_SequenceInsert) {
			if (s->n->ninputs < 2 || s->n->inputs[1] < 0 ||
			    cnt == MAX_ELEMS ||
			    !const_pos(s->g, s->n, 2, &pos, &given))
				return -1;
			pos = given ? pos : cnt;
			if (pos < -cnt || pos > cnt)
				return -1;
			pos += pos < 0 ? cnt : 0;
			memmove(out + pos + 1, out + pos,
				(size_t)(cnt - pos) * sizeof(Elem));
			out[pos] = elem_of(&s->g->vals[s->n->inputs[1]]);
			cnt++;
		} else {
			if (!const_pos(s->g, s->n, 1, &pos, &given))
				return -1;
			pos = given ? pos : cnt - 1;
			if (cnt == 0 || pos < -cnt || pos >= cnt)
				return -1;
			pos += pos < 0 ? cnt : 0;
			memmove(out + pos, out + pos + 1,
				(size_t)(cnt - pos - 1) * sizeof(Elem));
			cnt--;
		}
	}
	return cnt;
}

/* The merge of n elements' shapes (n >= 1) and their data-dependence. */
static Shape merge_elems(const Elem *e, int n, uint16_t *dep)
{
	Shape s = e[0].s;
	*dep = e[0].dep;
	for (int i = 1; i < n; i++) {
		if (merge_shape(&s, &e[i].s))
			*dep = VF_DATA_DEP;
		*dep |= e[i].dep;
	}
	return s;
}

/* ---- contents ----------------------------------------------------------- */

/* Elements len..len+n along axis ax of x from index from, as a new
 * tensor (axis dropped if squeeze, then n is 1). */
static Tensor *slice_piece(OpCtx *c, const Tensor *x, int32_t ax,
			   int64_t from, int64_t n, bool squeeze)
{
	Shape s = x->shape;
	int64_t outer = 1, inner = tn_esize(x->dtype), d = s.dims[ax];
	for (int32_t i = 0; i < ax; i++)
		outer *= s.dims[i];
	for (int32_t i = ax + 1; i < s.rank; i++)
		inner *= s.dims[i];
	s.dims[ax] = n;
	if (squeeze) {
		memmove(s.dims + ax, s.dims + ax + 1,
			(size_t)(s.rank - ax - 1) * sizeof(int64_t));
		s.rank--;
	}
	Tensor *t = op_new_tensor(c, x->dtype, &s);
	if (!t)
		return NULL;
	uint8_t *dst = tensor_mut(t);
	const uint8_t *src = x->data;
	for (int64_t o = 0; o < outer; o++)
		memcpy(dst + o * n * inner, src + (o * d + from) * inner,
		       (size_t)(n * inner));
	return t;
}

/* An element's contents: known, sliced from a constant, or NULL. */
static const Tensor *elem_konst(OpCtx *c, const Elem *e)
{
	if (e->k || !e->whole)
		return e->k;
	int64_t n = e->squeeze ? 1 : e->s.dims[e->axis];
	return slice_piece(c, e->whole, e->axis, e->from, n, e->squeeze);
}

/* The elements of sequence input i: their count with *els pointing at
 * them, -1 if not known (folding), -2 on error. */
static int64_t seq_tensors(OpCtx *c, int i, const Tensor *const **els)
{
	Elem el[MAX_ELEMS];
	const Tensor *t = op_seq_in(c, i);
	if (t) {
		*els = t->data;
		return t->shape.dims[0];
	}
	int n = seq_elems(c->g, c->n->inputs[i], el);
	if (n < 0)
		return -1;
	const Tensor **k = op_scratch_zeroed(c, (size_t)(n + 1) * sizeof(*k));
	if (!k)
		return -2;
	for (int j = 0; j < n; j++) {
		if (!el[j].k && !el[j].whole)
			return -1;
		if (!(k[j] = elem_konst(c, &el[j])))
			return -2;
	}
	*els = k;
	return n;
}

/* A copy of t that a sequence owns (run time). */
static const Tensor *seq_copy(OpCtx *c, const Tensor *t)
{
	Tensor *k = op_new_tensor(c, t->dtype, &t->shape);
	if (k)
		memcpy(tensor_mut(k), t->data, t->nbytes);
	return k;
}

/* Run time: a new array of n + extra element slots. */
static const Tensor **seq_slots(OpCtx *c, int64_t n)
{
	return op_scratch_zeroed(c, (size_t)(n + 1) * sizeof(const Tensor *));
}

/* ---- SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase ---- */

int infer_sequence_empty(OpCtx *c)
{
	int64_t dt = attr_int(c->n, "dtype", DT_FLOAT);
	Shape s = shape_unknown();
	if (!dtype_valid((int)dt) || dt != (int32_t)dt)
		return op_error(c, "attribute dtype %lld is not a tensor type",
				(long long)dt);
	set_seq(c, 0, (int)dt, &s, 0);
	return 0;
}

int infer_sequence_construct(OpCtx *c)
{
	Elem e[1];
	Shape s = shape_unknown();
	uint16_t dep = 0;
	if (c->n->ninputs < 1)
		return op_error(c, "expected at least one input");
	for (int i = 0; i < c->n->ninputs; i++) {
		Value *v = tensor_in(c, i);
		if (!v || op_check_same_dtype(c, i, 0) < 0)
			return -1;
		e[0] = elem_of(v);
		if (i == 0)
			s = e[0].s;
		else if (merge_shape(&s, &e[0].s))
			dep = VF_DATA_DEP;
		dep |= e[0].dep;
	}
	set_seq(c, 0, op_in(c, 0)->dtype, &s, dep);
	return 0;
}

/* The output sequence's element shape: exact from its elements when they
 * are known, else fallback. */
static void seq_result(OpCtx *c, int dt, const Shape *fallback, uint16_t dep)
{
	Elem el[MAX_ELEMS];
	int n = c->n->outputs[0] >= 0 ? seq_elems(c->g, c->n->outputs[0], el)
				       : -1;
	Shape s = *fallback;
	if (n > 0)
		s = merge_elems(el, n, &dep);
	else if (n == 0)
		s = shape_unknown();
	set_seq(c, 0, dt, &s, dep);
}

int infer_sequence_insert(OpCtx *c)
{
	Value *sq = seq_in(c, 0), *t = sq ? tensor_in(c, 1) : NULL;
	Elem el[MAX_ELEMS];
	int64_t pos;
	if (!t)
		return -1;
	if (t->dtype != sq->dtype)
		return op_error(c, "input 1 ('%s') has dtype %s, but the "
				"sequence holds %s",
				t->name, dtype_name(t->dtype),
				dtype_name(sq->dtype));
	int rc = position(c, 2, &pos);
	if (rc < 0)
		return -1;
	int n = seq_elems(c->g, c->n->inputs[0], el);
	if (rc && n >= 0 && (pos < -n || pos > n))
		return op_error(c, "position %lld is out of range for a "
				"sequence of %d (expected %d..%d)",
				(long long)pos, n, -n, n);
	Shape s = sq->shape;
	uint16_t dep = (uint16_t)((sq->flags | t->flags) & VF_DATA_DEP);
	if (merge_shape(&s, &t->shape))
		dep = VF_DATA_DEP;
	seq_result(c, sq->dtype, &s, dep);
	return 0;
}

int infer_sequence_erase(OpCtx *c)
{
	Value *sq = seq_in(c, 0);
	Elem el[MAX_ELEMS];
	int64_t pos;
	if (!sq)
		return -1;
	int rc = position(c, 1, &pos);
	if (rc < 0)
		return -1;
	int n = seq_elems(c->g, c->n->inputs[0], el);
	if (n == 0)
		return op_error(c, "the sequence is empty: nothing to erase");
	if (rc && n > 0 && (pos < -n || pos >= n))
		return op_error(c, "position %lld is out of range for a "
				"sequence of %d (expected %d..%d)",
				(long long)pos, n, -n, n - 1);
	seq_result(c, sq->dtype, &sq->shape,
		   (uint16_t)(sq->flags & VF_DATA_DEP));
	return 0;
}

/* The kernels of the ops making sequences have something to do only
 * where the output has a tensor form (op_seq_out): a graph value keeps
 * none, seq_elems() replays them. */

int run_sequence_empty(OpCtx *c)
{
	if (!op_seq_out(c, 0))
		return 0;
	const Tensor **els = seq_slots(c, 0);
	if (!els)
		return -1;
	op_set_seq(c, 0, (int)attr_int(c->n, "dtype", DT_FLOAT), els, 0);
	return 0;
}

int run_sequence_construct(OpCtx *c)
{
	int n = c->n->ninputs;
	if (!op_seq_out(c, 0))
		return 0;
	const Tensor **els = seq_slots(c, n);
	if (!els)
		return -1;
	for (int i = 0; i < n; i++) {
		const Tensor *t = op_const_in(c, i);
		if (!t)
			return op_error(c, "input %d is not bound", i);
		if (!(els[i] = seq_copy(c, t)))
			return -1;
	}
	op_set_seq(c, 0, els[0]->dtype, els, n);
	return 0;
}

/* SequenceInsert (ins: input 1 at position input 2, default the end)
 * and SequenceErase (position input 1, default the last). */
static int seq_edit(OpCtx *c, bool ins)
{
	const Tensor *const *old;
	const Tensor *t = ins ? op_const_in(c, 1) : NULL;
	int64_t pos = 0;
	if (!op_seq_out(c, 0))
		return 0;
	int64_t n = seq_tensors(c, 0, &old);
	int rc = position(c, ins ? 2 : 1, &pos);
	if (n < 0 || rc < 0 || (ins && !t))
		return -1;
	int64_t hi = ins ? n : n - 1;
	if (!rc)
		pos = hi;
	if (pos < -n || pos > hi)
		return op_error(c, "position %lld is out of range for a "
				"sequence of %lld",
				(long long)pos, (long long)n);
	pos += pos < 0 ? n : 0;
	const Tensor **els = seq_slots(c, n + 1);
	if (!els)
		return -1;
	int64_t k = 0;
	for (int64_t i = 0; i <= n; i++) {
		if (ins && i == pos && !(els[k++] = seq_copy(c, t)))
			return -1;
		if (i < n && (ins || i != pos) &&
		    !(els[k++] = seq_copy(c, old[i])))
			return -1;
	}
	op_set_seq(c, 0, op_in(c, 0)->dtype, els, k);
	return 0;
}

int run_sequence_insert(OpCtx *c) { return seq_edit(c, true); }

int run_sequence_erase(OpCtx *c) { return seq_edit(c, false); }

/* ---- SequenceAt, SequenceLength ----------------------------------------- */

/* The element SequenceAt reads, if known: 1 with *e, else 0. */
static int seq_at(OpCtx *c, Elem *e)
{
	Elem el[MAX_ELEMS];
	int64_t pos;
	int rc = position(c, 1, &pos);
	if (rc <= 0)
		return rc;
	int n = seq_elems(c->g, c->n->inputs[0], el);
	if (n < 0)
		return 0;
	if (pos < -n || pos >= n)
		return op_error(c, "position %lld is out of range for a "
				"sequence of %d",
				(long long)pos, n);
	*e = el[pos < 0 ? pos + n : pos];
	return 1;
}

int infer_sequence_at(OpCtx *c)
{
	Value *sq = seq_in(c, 0);
	Elem e;
	if (!sq || !op_need_in(c, 1))
		return -1;
	int rc = seq_at(c, &e);
	if (rc < 0)
		return -1;
	if (!rc) {
		e = elem_of(sq);
		e.k = NULL;
	}
	op_set_out(c, 0, e.dtype, &e.s);
	if (op_out(c, 0))
		op_out(c, 0)->flags |= e.dep;
	return 0;
}

int run_sequence_at(OpCtx *c)
{
	const Tensor *const *els;
	const Tensor *t;
	Elem e;
	int64_t pos;
	if (!op_seq_in(c, 0)) { /* replayed: only the element read is sliced */
		int rc = seq_at(c, &e);
		if (rc <= 0)
			return rc;
		t = elem_konst(c, &e);
		if (t)
			op_set_const(c, 0, t);
		return t || (!e.k && !e.whole) ? 0 : -1;
	}
	int rc = position(c, 1, &pos);
	if (rc <= 0)
		return rc;
	int64_t n = seq_tensors(c, 0, &els);
	if (n < 0)
		return -1;
	if (pos < -n || pos >= n)
		return op_error(c, "position %lld is out of range for a "
				"sequence of %lld",
				(long long)pos, (long long)n);
	op_set_const(c, 0, els[pos < 0 ? pos + n : pos]);
	return 0;
}

int infer_sequence_length(OpCtx *c)
{
	Shape s = { .rank = 0 };
	if (!seq_in(c, 0))
		return -1;
	op_set_out(c, 0, DT_INT64, &s);
	return 0;
}

int run_sequence_length(OpCtx *c)
{
	Elem el[MAX_ELEMS];
	const Tensor *sq = op_seq_in(c, 0);
	int64_t n = sq ? sq->shape.dims[0]
		       : seq_elems(c->g, c->n->inputs[0], el);
	Shape s = { .rank = 0 };
	if (n < 0)
		return 0;
	Tensor *t = op_new_output_zeroed(c, 0, DT_INT64, &s);
	if (!t)
		return -1;
	tensor_set_i64(t, 0, n);
	op_set_const(c, 0, t);
	return 0;
}

/* ---- SplitToSequence, ConcatFromSequence -------------------------------- */

int infer_split_to_sequence(OpCtx *c)
{
	Value *x = tensor_in(c, 0);
	Elem el[MAX_ELEMS];
	Shape s;
	int n;
	if (!x || (op_in(c, 1) && !tensor_in(c, 1)))
		return -1;
	if (split_pieces(c, c->g, c->n, el, &n, &s) < 0)
		return -1;
	uint16_t dep = (uint16_t)(x->flags & VF_DATA_DEP);
	if (n > 0)
		s = merge_elems(el, n, &dep);
	set_seq(c, 0, x->dtype, &s, dep);
	return 0;
}

/* The dims all n elements (of rank r) agree on, but at axis skip (-1:
 * none): a dim some element knows is that; an error if two differ. */
static int agree_dims(OpCtx *c, const Elem *el, int n, int32_t r,
		      int32_t skip, Shape *s)
{
	char sa[160], sb[160];
	s->rank = r;
	for (int32_t d = 0; d < r; d++) {
		int from = -1;
		s->dims[d] = DIM_UNKNOWN;
		for (int i = 0; i < n && d != skip; i++) {
			int64_t v = shape_dim(&el[i].s, d);
			if (v < 0)
				continue;
			if (from >= 0 && v != s->dims[d])
				return op_error(c, "sequence elements %d and %d "
						"have shapes %s and %s; only "
						"%s may differ",
						from, i,
						shape_str(&el[from].s, sa, sizeof(sa)),
						shape_str(&el[i].s, sb, sizeof(sb)),
						skip < 0 ? "nothing" : "the axis");
			s->dims[d] = v;
			from = i;
		}
	}
	return 0;
}

int infer_concat_from_sequence(OpCtx *c)
{
	Value *sq = seq_in(c, 0);
	Elem el[MAX_ELEMS];
	if (!sq)
		return -1;
	if (!node_attr(c->n, "axis"))
		return op_error(c, "attribute axis is required");
	int64_t axis = attr_int(c->n, "axis", 0);
	int nw = attr_int(c->n, "new_axis", 0) != 0;
	int n = seq_elems(c->g, c->n->inputs[0], el);
	uint16_t dep = (uint16_t)(sq->flags & VF_DATA_DEP);
	int32_t r = sq->shape.rank, ax;
	if (n == 0)
		return op_error(c, "the sequence is empty: nothing to "
				"concatenate");
	if (n > 0) /* known elements: only theirs */
		dep = 0;
	for (int i = 0; i < n; i++) {
		dep |= el[i].dep;
		if (el[i].s.rank < 0)
			continue;
		if (r >= 0 && el[i].s.rank != r)
			return op_error(c, "sequence elements have ranks %d and "
					"%d; expected one rank",
					r, el[i].s.rank);
		r = el[i].s.rank;
	}
	Shape s = sq->shape, y = shape_unknown();
	if (r < 0) {
		op_set_out(c, 0, sq->dtype, &y);
		return 0;
	}
	if (r + nw > MAX_RANK)
		return op_error(c, "the output would have rank %d; gearc "
				"supports at most %d",
				r + nw, MAX_RANK);
	if (op_axis(c, "axis", axis, r + nw, &ax) < 0)
		return -1;
	if (n > 0 && agree_dims(c, el, n, r, nw ? -1 : ax, &s) < 0)
		return -1;
	y.rank = r + nw;
	for (int32_t d = 0, k = 0; d < y.rank; d++)
		y.dims[d] = nw && d == ax ? n : s.dims[k++];
	if (!nw && n > 0) {
		y.dims[ax] = 0;
		for (int i = 0; i < n; i++)
			if (op_dim_add(c, y.dims[ax], shape_dim(&el[i].s, ax),
				       &y.dims[ax]) < 0)
				return -1;
	} else if (n < 0) {
		y.dims[ax] = DIM_UNKNOWN;
		dep = VF_DATA_DEP;
	}
	op_set_out(c, 0, sq->dtype, &y);
	if (op_out(c, 0))
		op_out(c, 0)->flags |= dep;
	return 0;
}

/* Run time: SplitToSequence's pieces of x (its sizes along the axis as
 * split_pieces() gives them when folding). */
int run_split_to_sequence(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0), *sp = op_const_in(c, 1);
	int32_t ax;
	if (!op_seq_out(c, 0))
		return 0;
	if (!x || op_axis(c, "axis", attr_int(c->n, "axis", 0), x->shape.rank,
			  &ax) < 0)
		return -1;
	int64_t d = x->shape.dims[ax], n, each = 1;
	bool squeeze = !sp && !attr_int(c->n, "keepdims", 1);
	if (sp && sp->shape.rank == 0) {
		each = tensor_get_i64(sp, 0);
		if (each <= 0)
			return op_error(c, "split %lld must be positive",
					(long long)each);
		n = d / each + (d % each != 0);
	} else {
		n = sp ? shape_numel(&sp->shape) : d;
	}
	const Tensor **els = seq_slots(c, n);
	if (!els)
		return -1;
	for (int64_t i = 0, from = 0; i < n; i++) {
		int64_t len = sp && sp->shape.rank == 1 ? tensor_get_i64(sp, i)
			      : from + each <= d	 ? each
							 : d - from;
		if (len < 0 || len > d - from)
			return op_error(c, "split does not add up to %lld "
					"along axis %d", (long long)d, ax);
		if (!(els[i] = slice_piece(c, x, ax, from, len, squeeze)))
			return -1;
		from += len;
		if (i == n - 1 && from != d)
			return op_error(c, "split adds up to %lld, not %lld",
					(long long)from, (long long)d);
	}
	op_set_seq(c, 0, x->dtype, els, n);
	return 0;
}

/* ConcatFromSequence: the elements joined along axis (new_axis: stacked
 * along a new one); every element gives each outer index one chunk. */
int run_concat_from_sequence(OpCtx *c)
{
	const Tensor *const *els;
	const Value *yv = op_out(c, 0);
	int64_t n = seq_tensors(c, 0, &els);
	int nw = attr_int(c->n, "new_axis", 0) != 0;
	int32_t ax;
	if (n == -1 || !yv)
		return 0;
	if (n < 0)
		return -1;
	if (n == 0)
		return op_error(c, "the sequence is empty: nothing to "
				"concatenate");
	int32_t r = els[0]->shape.rank;
	if (op_axis(c, "axis", attr_int(c->n, "axis", 0), r + nw, &ax) < 0)
		return -1;
	Tensor *y = op_new_output_zeroed(c, 0, yv->dtype, &yv->shape);
	if (!y)
		return -1;
	size_t total = 0;
	int64_t outer = 1;
	for (int32_t i = 0; i < ax; i++)
		outer *= els[0]->shape.dims[i];
	for (int64_t j = 0; j < n; j++) {
		const Shape *s = &els[j]->shape, *s0 = &els[0]->shape;
		bool same = els[j]->dtype == y->dtype && s->rank == r;
		for (int32_t i = 0; same && i < r; i++)
			same = s->dims[i] == s0->dims[i] || (!nw && i == ax);
		if (!same)
			return op_error(c, "sequence element %lld does not "
					"match element 0 but along the axis",
					(long long)j);
		total += els[j]->nbytes;
	}
	if (total != y->nbytes)
		return op_error(c, "the elements hold %zu bytes, the output "
				"%zu", total, y->nbytes);
	if (!total) {
		op_set_const(c, 0, y);
		return 0;
	}
	uint8_t *dst = tensor_mut(y);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t j = 0; j < n; j++) {
			size_t chunk = els[j]->nbytes / (size_t)outer;
			memcpy(dst, (const uint8_t *)els[j]->data + o * chunk,
			       chunk);
			dst += chunk;
		}
	op_set_const(c, 0, y);
	return 0;
}

/* ---- SequenceMap -------------------------------------------------------- */

/* The body runs once per element; sequence inputs give it one element
 * (the merge of their shapes), tensor inputs the whole tensor. */
int infer_sequence_map(OpCtx *c)
{
	const Attr *a = node_attr(c->n, "body");
	Graph *body = a && a->type == ATTR_GRAPH ? a->g : NULL;
	if (!body)
		return op_error(c, "attribute body (a graph) is required");
	if (!seq_in(c, 0))
		return -1;
	if (body->ninputs != c->n->ninputs || body->noutputs < c->n->noutputs)
		return op_error(c, "the body has %d inputs and %d outputs; "
				"expected %d and %d",
				body->ninputs, body->noutputs, c->n->ninputs,
				c->n->noutputs);
	for (int i = 0; i < c->n->ninputs; i++) {
		Value *v = op_need_in(c, i);
		if (!v)
			return -1;
		if (v->tkind != TK_SEQUENCE && v->tkind != TK_TENSOR)
			return op_error(c, "input %d ('%s') must be a sequence "
					"or a tensor",
					i, v->name);
		Value *b = &body->vals[body->inputs[i]];
		b->dtype = v->dtype;
		b->tkind = TK_TENSOR;
		b->shape = v->shape;
		b->konst = v->tkind == TK_TENSOR ? v->konst : NULL;
		b->dim_params = NULL;
		b->flags = (uint16_t)((b->flags & ~VF_DATA_DEP) |
				      (v->flags & VF_DATA_DEP));
	}
	if (op_infer_subgraph(c, body) < 0)
		return -1;
	for (int i = 0; i < c->n->noutputs; i++) {
		const Value *o = &body->vals[body->outputs[i]];
		if (o->tkind != TK_TENSOR)
			return op_error(c, "body output %d ('%s') must be a "
					"tensor",
					i, o->name);
		set_seq(c, i, o->dtype, &o->shape,
			(uint16_t)(o->flags & VF_DATA_DEP));
	}
	return 0;
}

/* ---- Optional ----------------------------------------------------------- */

/* Optional of a tensor; of anything else (or with only its type
 * attribute, which gearc keeps as a tag) it is opaque. */
int infer_optional(OpCtx *c)
{
	Value *x = op_in(c, 0), *y = op_out(c, 0);
	if (!y)
		return 0;
	if (x && x->tkind == TK_OPTIONAL)
		return op_error(c, "input 0 ('%s') is already optional",
				x->name);
	if (x && x->tkind == TK_TENSOR) {
		y->dtype = x->dtype;
		y->tkind = TK_OPTIONAL;
		y->shape = x->shape;
		y->flags |= x->flags & VF_DATA_DEP;
	} else {
		y->tkind = TK_OTHER;
	}
	return 0;
}

int infer_optional_has_element(OpCtx *c)
{
	Shape s = { .rank = 0 };
	op_set_out(c, 0, DT_BOOL, &s);
	return 0;
}

/* Known if the input is absent (opset 18: false), a plain tensor or
 * sequence (true), or made by an Optional node of this graph. */
int run_optional_has_element(OpCtx *c)
{
	const Value *x = op_in(c, 0);
	int has = -1;
	if (!x)
		has = 0;
	else if (x->tkind == TK_TENSOR || x->tkind == TK_SEQUENCE)
		has = 1;
	else if (x->kind == VAL_NODE && x->producer >= 0 &&
		 c->g->nodes[x->producer].op == OP_Optional) {
		const Node *p = &c->g->nodes[x->producer];
		has = p->ninputs > 0 && p->inputs[0] >= 0;
	}
	if (has < 0)
		return 0;
	Shape s = { .rank = 0 };
	Tensor *t = op_new_tensor(c, DT_BOOL, &s);
	if (!t)
		return -1;
	tensor_set_i64(t, 0, has);
	op_set_const(c, 0, t);
	return 0;
}

int infer_optional_get_element(OpCtx *c)
{
	Value *x = op_need_in(c, 0), *y = op_out(c, 0);
	if (!x)
		return -1;
	if (!y)
		return 0;
	y->dtype = x->dtype;
	y->shape = x->shape;
	y->tkind = x->tkind == TK_OPTIONAL ? TK_TENSOR : x->tkind;
	y->konst = x->tkind == TK_TENSOR ? x->konst : NULL;
	y->flags |= x->flags & VF_DATA_DEP;
	return 0;
}

/* ---- StringNormalizer --------------------------------------------------- */

static bool ascii(const Bytes *b)
{
	for (size_t i = 0; i < b->len; i++)
		if (b->data[i] >= 0x80)
			return false;
	return true;
}

static int ascii_lower(int ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

static bool same_word(const Bytes *a, const Bytes *b, bool sensitive)
{
	if (a->len != b->len)
		return false;
	for (size_t i = 0; i < a->len; i++)
		if (sensitive ? a->data[i] != b->data[i]
			      : ascii_lower(a->data[i]) != ascii_lower(b->data[i]))
			return false;
	return true;
}

/* For a constant input: the number of words kept (-1 if that cannot be
 * decided exactly: case-insensitive matching beyond ASCII depends on the
 * locale), and keep[i] for each. */
static int64_t strnorm_kept(OpCtx *c, const Tensor *t, uint8_t *keep)
{
	const Attr *sw = node_attr(c->n, "stopwords");
	bool sensitive = attr_int(c->n, "is_case_sensitive", 0) != 0;
	const Bytes *w = t->data;
	int64_t n = shape_numel(&t->shape), kept = 0;
	int32_t nsw = sw && sw->type == ATTR_STRINGS ? sw->n : 0;
	for (int32_t j = 0; j < nsw && !sensitive; j++)
		if (!ascii(&sw->strings[j]))
			return -1;
	for (int64_t i = 0; i < n; i++) {
		if (!sensitive && !ascii(&w[i]))
			return -1;
		keep[i] = 1;
		for (int32_t j = 0; j < nsw && keep[i]; j++)
			keep[i] = !same_word(&w[i], &sw->strings[j], sensitive);
		kept += keep[i];
	}
	return kept;
}

int infer_string_normalizer(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	if (!x || op_check_dtype(c, 0, DTS(DT_STRING)) < 0 ||
	    op_check_rank(c, 0, 1, 2) < 0)
		return -1;
	const char *act = attr_str(c->n, "case_change_action", "NONE");
	if (strcmp(act, "NONE") && strcmp(act, "LOWER") && strcmp(act, "UPPER"))
		return op_error(c, "case_change_action '%s' is not NONE, LOWER "
				"or UPPER", act);
	Shape y = x->shape;
	if (y.rank < 0) {
		op_set_out(c, 0, DT_STRING, &y);
		return 0;
	}
	if (y.rank == 2 && y.dims[0] != 1 && y.dims[0] != DIM_UNKNOWN)
		return op_error(c, "input 0 ('%s') has %lld rows; expected [C] "
				"or [1, C]",
				x->name, (long long)y.dims[0]);
	const Attr *sw = node_attr(c->n, "stopwords");
	int64_t *d = &y.dims[y.rank - 1];
	bool dep = false;
	if (sw && sw->type == ATTR_STRINGS && sw->n > 0) {
		/* words are removed: how many depends on the data */
		int64_t kept = -1;
		if (x->konst && shape_numel(&x->shape) <= INT32_MAX) {
			uint8_t *keep = arena_alloc(c->g->arena,
						    (size_t)shape_numel(&x->shape) + 1);
			kept = strnorm_kept(c, x->konst, keep);
		}
		*d = kept < 0 ? DIM_UNKNOWN : kept == 0 ? 1 : kept;
		dep = kept < 0;
	} else if (*d == 0) {
		*d = DIM_UNKNOWN; /* every word dropped, vacuously: unspecified */
		dep = true;
	}
	op_set_out(c, 0, DT_STRING, &y);
	if (dep)
		op_out(c, 0)->flags |= VF_DATA_DEP;
	return 0;
}

int run_string_normalizer(OpCtx *c)
{
	const Value *x = op_in(c, 0);
	const Tensor *t = x->konst;
	if (!t)
		return 0;
	const char *act = attr_str(c->n, "case_change_action", "NONE");
	int mode = !strcmp(act, "LOWER") ? 1 : !strcmp(act, "UPPER") ? 2 : 0;
	int64_t n = shape_numel(&t->shape);
	uint8_t *keep = op_scratch_zeroed(c, (size_t)n + 1);
	if (!keep)
		return -1;
	int64_t kept = strnorm_kept(c, t, keep);
	if (kept < 0)
		return 0;
	const Bytes *w = t->data;
	Shape ys = op_out(c, 0)->shape;
	Tensor *y = op_new_tensor(c, DT_STRING, &ys);
	if (!y)
		return -1;
	Bytes *o = tensor_mut(y);
	int64_t k = 0;
	for (int64_t i = 0; i < n; i++) {
		if (!keep[i])
			continue;
		if (mode && !ascii(&w[i]))
			return 0; /* case mapping beyond ASCII: locale */
		uint8_t *p = op_scratch_zeroed(c, w[i].len + 1);
		if (!p)
			return -1;
		for (size_t j = 0; j < w[i].len; j++) {
			int ch = w[i].data[j];
			p[j] = (uint8_t)(mode == 1   ? ascii_lower(ch)
					 : mode == 2 ? (ch >= 'a' && ch <= 'z'
								? ch - 'a' + 'A'
								: ch)
						     : ch);
		}
		o[k].len = w[i].len;
		o[k].data = p;
		k++;
	}
	/* nothing kept: one empty string (the output's shape says so) */
	op_set_const(c, 0, y);
	return 0;
}

/* ---- TfIdfVectorizer ---------------------------------------------------- */

int infer_tfidf_vectorizer(OpCtx *c)
{
	Value *x = op_need_in(c, 0);
	const int64_t *idx, *cnt;
	const Attr *pi = node_attr(c->n, "pool_int64s");
	const Attr *ps = node_attr(c->n, "pool_strings");
	if (!x || op_check_dtype(c, 0, DTS(DT_STRING) | DTS(DT_INT32) |
						DTS(DT_INT64)) < 0 ||
	    op_check_rank(c, 0, 1, 2) < 0)
		return -1;
	if (!pi == !ps)
		return op_error(c, "expected exactly one of the attributes "
				"pool_int64s and pool_strings");
	if ((ps != NULL) != (x->dtype == DT_STRING))
		return op_error(c, "input 0 ('%s') is %s, but the pool is of %s",
				x->name, dtype_name(x->dtype),
				ps ? "strings" : "integers");
	int64_t pool = pi ? pi->n : ps->n;
	int64_t mn = attr_int(c->n, "min_gram_length", -1);
	int64_t mx = attr_int(c->n, "max_gram_length", -1);
	int64_t skip = attr_int(c->n, "max_skip_count", -1);
	const char *mode = attr_str(c->n, "mode", NULL);
	if (mn < 1 || mx < mn || skip < 0)
		return op_error(c, "attributes min_gram_length (%lld), "
				"max_gram_length (%lld) and max_skip_count "
				"(%lld) are required, with 1 <= min <= max "
				"and skips >= 0",
				(long long)mn, (long long)mx, (long long)skip);
	if (!mode || (strcmp(mode, "TF") && strcmp(mode, "IDF") &&
		      strcmp(mode, "TFIDF")))
		return op_error(c, "attribute mode must be TF, IDF or TFIDF");
	int32_t ni = attr_ints(c->n, "ngram_indexes", &idx);
	int32_t nc = attr_ints(c->n, "ngram_counts", &cnt);
	if (ni < 1 || nc < 0)
		return op_error(c, "attributes ngram_indexes and ngram_counts "
				"are required");
	int64_t width = 0;
	for (int32_t i = 0; i < ni; i++) {
		if (idx[i] < 0)
			return op_error(c, "ngram_indexes[%d] is %lld", i,
					(long long)idx[i]);
		if (idx[i] >= width && !add_nonneg_i64(idx[i], 1, &width))
			return op_error(c, "ngram_indexes[%d] is too large", i);
	}
	for (int32_t i = 0; i < nc; i++)
		if (cnt[i] < 0 || cnt[i] > pool || (i && cnt[i] < cnt[i - 1]))
			return op_error(c, "ngram_counts[%d] = %lld is not a "
					"start within the pool of %lld",
					i, (long long)cnt[i], (long long)pool);
	Shape y = shape_unknown();
	if (x->shape.rank == 1)
		y = shape_of(1, &width);
	else if (x->shape.rank == 2) {
		int64_t d[2] = { x->shape.dims[0], width };
		y = shape_of(2, d);
	}
	op_set_out(c, 0, DT_FLOAT, &y);
	return 0;
}

/* Token i of x equals pool entry j. */
static bool tfidf_same(const Tensor *x, int64_t i, const Attr *pool,
		       int64_t j)
{
	if (x->dtype != DT_STRING)
		return tensor_get_i64(x, i) == pool->ints[j];
	const Bytes *w = (const Bytes *)x->data + i;
	return w->len == pool->strings[j].len &&
	       !memcmp(w->data, pool->strings[j].data, w->len);
}

typedef struct Ngrams {
	const Attr *pool;
	const int64_t *cnt, *idx; /* ngram_counts, ngram_indexes */
	int32_t ncnt, nidx;
	int64_t npool;
} Ngrams;

/* The output index of the n-gram of x at positions at, at + s, ...,
 * at + (n - 1) * s, or -1 if it is not in the pool. */
static int64_t tfidf_find(const Ngrams *g, const Tensor *x, int64_t at,
			  int64_t s, int64_t n)
{
	if (n > g->ncnt)
		return -1;
	int64_t from = g->cnt[n - 1];
	int64_t to = n < g->ncnt ? g->cnt[n] : g->npool;
	int64_t id = 0; /* n-grams before this size's first */
	for (int64_t k = 0; k + 1 < n; k++)
		id += ((k + 1 < g->ncnt ? g->cnt[k + 1] : g->npool) -
		       g->cnt[k]) / (k + 1);
	for (int64_t j = from; j + n <= to; j += n, id++) {
		int64_t k = 0;
		while (k < n && tfidf_same(x, at + k * s, g->pool, j + k))
			k++;
		if (k == n)
			return id < g->nidx ? g->idx[id] : -1;
	}
	return -1;
}

/* Counts the n-grams of one row (c tokens from element base of x) into
 * cnt, as ONNX Runtime does: for every skip count 0..max_skip_count and
 * every start, each n-gram of min..max_gram_length tokens that are
 * skip + 1 apart; unigrams only once (with no skip). */
static void tfidf_row(const Ngrams *g, const Tensor *x, int64_t base,
		      int64_t c, int64_t mn, int64_t mx, int64_t skips,
		      double *cnt)
{
	for (int64_t s = 1; s <= skips + 1; s++) {
		int64_t lo = s > 1 && mn == 1 ? 2 : mn;
		if (lo > mx)
			break;
		for (int64_t at = 0; at < c; at++)
			for (int64_t n = lo; n <= mx; n++) {
				if (at + (n - 1) * s >= c)
					break;
				int64_t o = tfidf_find(g, x, base + at, s, n);
				if (o >= 0)
					cnt[o] += 1;
			}
	}
}

int run_tfidf_vectorizer(OpCtx *c)
{
	const Tensor *x = op_const_in(c, 0);
	const Value *yv = op_out(c, 0);
	const Attr *pi = node_attr(c->n, "pool_int64s");
	const Attr *w = node_attr(c->n, "weights");
	Ngrams g = { .pool = pi ? pi : node_attr(c->n, "pool_strings") };
	if (!x || !yv || !g.pool)
		return 0;
	g.npool = g.pool->n;
	g.nidx = attr_ints(c->n, "ngram_indexes", &g.idx);
	g.ncnt = attr_ints(c->n, "ngram_counts", &g.cnt);
	int64_t mn = attr_int(c->n, "min_gram_length", 1);
	int64_t mx = attr_int(c->n, "max_gram_length", 1);
	int64_t skips = attr_int(c->n, "max_skip_count", 0);
	const char *mode = attr_str(c->n, "mode", "TF");
	int32_t nw = w && w->type == ATTR_FLOATS ? w->n : 0;
	int64_t rows = x->shape.rank == 2 ? x->shape.dims[0] : 1;
	int64_t cols = x->shape.dims[x->shape.rank - 1];
	int64_t width = yv->shape.dims[yv->shape.rank - 1];
	Tensor *y = op_new_output_zeroed(c, 0, DT_FLOAT, &yv->shape);
	double *cnt = op_scratch_zeroed(c, (size_t)width * 2 * sizeof(double));
	if (!y || !cnt)
		return -1;
	/* weights[i] is n-gram i's, so output ngram_indexes[i]'s */
	double *wt = cnt + width;
	for (int64_t o = 0; o < width; o++)
		wt[o] = 1;
	for (int32_t i = 0; i < nw && i < g.nidx; i++)
		wt[g.idx[i]] = w->floats[i];
	float *yp = tensor_mut(y);
	for (int64_t r = 0; r < rows; r++) {
		memset(cnt, 0, (size_t)width * sizeof(double));
		tfidf_row(&g, x, r * cols, cols, mn, mx, skips, cnt);
		for (int64_t o = 0; o < width; o++) {
			double v = cnt[o];
			if (!strcmp(mode, "IDF"))
				v = v > 0 ? wt[o] : 0;
			else if (!strcmp(mode, "TFIDF"))
				v *= wt[o];
			yp[r * width + o] = (float)v;
		}
	}
	op_set_const(c, 0, y);
	return 0;
}
