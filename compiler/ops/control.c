/*
 * compiler/ops/control.c - control flow: If, Loop, Scan.
 *
 * The bodies are inferred with op_infer_subgraph(); their outer references
 * take the parent's values (contents included), so shape arithmetic in a
 * branch folds just as it does in the main graph.
 *
 * If: with a constant condition only the taken branch is inferred (the
 * other may not even be valid for these shapes) and the outputs are the
 * taken branch's, contents included; passes/inline.c later replaces the
 * If by that branch.  Otherwise both branches are inferred and merged: a
 * dim that differs becomes -1 (data-dependent), a rank that differs makes
 * the rank unknown.
 * A branch that is invalid at these shapes while the other is valid
 * (Silero VAD's If(sr == 16000): its 8 kHz branch does not fit a 16 kHz
 * chunk) is replaced by a branch of one Fail node, gearc's own op, which
 * raises that error if the branch is ever taken; the outputs are the
 * valid branch's, and a warning names the If, its condition and the gear.
 *
 * Loop and Scan: loop-carried values are found by iterating to a fixed
 * point.  The body is inferred with the initial values (their contents
 * too, as a hypothesis), then what it gives back is merged into them and
 * the body inferred again, until nothing changes.  Every round only loses
 * information (contents dropped, a dim or the rank made unknown), so this
 * ends; after FIX_ROUNDS rounds a value that still changes is widened at
 * once.  The body's values are then valid for every iteration.
 *
 * Loop, run at compile time: when the loop starts with a true condition
 * and runs at most UNROLL_MAX times, the body is first inferred once per
 * iteration with the exact iteration number and the exact values the
 * previous iteration gave (unroll_loop).  While the body's condition
 * output stays known this gives the exact trip count and exact outputs -
 * shapes that depend on the iteration number, as in Slice(x, i, i + 1),
 * come out static, and a loop over constants folds.  The body is then
 * inferred once more for all iterations together, as below, so that its
 * own values hold for every iteration.
 *
 * Loop's condition: when the loop starts with a true condition, the body
 * is first inferred with its condition input known to be true.  If the
 * body's condition output then folds to true, by induction it is true in
 * every iteration (the body only runs while it is), the loop cannot stop
 * early and with a constant trip count its scan outputs have a static
 * length.  Otherwise the body is inferred again without that knowledge and
 * the scan outputs' length is -1, marked data-dependent.
 */
#include <stdio.h>
#include <string.h>

#include "opimpl.h"

enum {
	FIX_ROUNDS = 2,		/* rounds before loop-carried values widen */
	UNROLL_MAX = 64,	/* iterations a Loop is run at compile time */
	UNROLL_BUDGET = 4096,	/* node inferences for that, per Loop */
};

/* What a value holds, as a subgraph input or an op output sees it. */
typedef struct Info {
	int32_t dtype;
	uint8_t tkind;
	uint16_t dep; /* VF_DATA_DEP or 0 */
	Shape s;
	const Tensor *k; /* known contents, or NULL */
} Info;

static Info info_of(const Value *v)
{
	Info in = { .dtype = v->dtype, .tkind = v->tkind,
		    .dep = (uint16_t)(v->flags & VF_DATA_DEP), .s = v->shape,
		    .k = v->konst };
	return in;
}

static bool same_konst(const Tensor *a, const Tensor *b)
{
	if (a == b)
		return true;
	if (!a || !b || a->dtype != b->dtype ||
	    !shape_equal(&a->shape, &b->shape) || a->nbytes != b->nbytes)
		return false;
	if (a->dtype != DT_STRING)
		return !memcmp(a->data, b->data, a->nbytes);
	const Bytes *x = a->data, *y = b->data;
	for (size_t i = 0; i < a->nbytes / sizeof(Bytes); i++)
		if (x[i].len != y[i].len ||
		    (x[i].len && memcmp(x[i].data, y[i].data, x[i].len)))
			return false;
	return true;
}

/* Merges shape b into a: a rank that differs makes it unknown, a dim that
 * differs becomes -1.  Returns 1 if a known dim or rank was lost, else 0;
 * *changed tells whether a changed at all. */
static int merge_shape(Shape *a, const Shape *b, bool *changed)
{
	*changed = false;
	if (a->rank < 0)
		return 0;
	if (b->rank != a->rank) {
		*a = shape_unknown();
		*changed = true;
		return b->rank >= 0; /* an unknown b carries its own flags */
	}
	int lost = 0;
	for (int32_t i = 0; i < a->rank; i++) {
		if (a->dims[i] == b->dims[i] || a->dims[i] == DIM_UNKNOWN)
			continue;
		lost |= b->dims[i] != DIM_UNKNOWN;
		a->dims[i] = DIM_UNKNOWN;
		*changed = true;
	}
	return lost;
}

/* The merge of two values one of which an op's output will be (If's
 * branches, a loop's initial and final values).  what names them in an
 * error: "then/else branch", ... */
static int merge_info(OpCtx *c, Info *a, const Info *b, int out,
		      const char *what)
{
	bool changed;
	if (a->tkind == TK_OTHER || b->tkind == TK_OTHER) {
		Info o = { .tkind = TK_OTHER, .s = shape_unknown() };
		*a = o;
		return 0;
	}
	if (a->tkind != b->tkind || a->dtype != b->dtype)
		return op_error(c, "output %d: %s disagree: %s%s vs %s%s", out,
				what,
				a->tkind == TK_SEQUENCE	  ? "sequence of "
				: a->tkind == TK_OPTIONAL ? "optional "
							  : "",
				dtype_name(a->dtype),
				b->tkind == TK_SEQUENCE	  ? "sequence of "
				: b->tkind == TK_OPTIONAL ? "optional "
							  : "",
				dtype_name(b->dtype));
	if (merge_shape(&a->s, &b->s, &changed))
		a->dep = VF_DATA_DEP;
	a->dep |= b->dep;
	if (!same_konst(a->k, b->k))
		a->k = NULL;
	return 0;
}

static void set_out(OpCtx *c, int i, const Info *in)
{
	Value *v = op_out(c, i);
	if (!v)
		return;
	v->dtype = in->dtype;
	v->tkind = in->tkind;
	v->shape = in->s;
	v->konst = in->tkind == TK_TENSOR ? in->k : NULL;
	v->flags = (uint16_t)((v->flags & ~VF_DATA_DEP) | in->dep);
}

static Graph *subgraph_attr(OpCtx *c, const char *name)
{
	const Attr *a = node_attr(c->n, name);
	if (!a || a->type != ATTR_GRAPH || !a->g)
		return op_error(c, "attribute %s (a graph) is required", name),
		       NULL;
	return a->g;
}

static void bind_input(Graph *sub, int i, const Info *in)
{
	Value *v = &sub->vals[sub->inputs[i]];
	v->dtype = in->dtype;
	v->tkind = in->tkind;
	v->shape = in->s;
	v->konst = in->tkind == TK_TENSOR ? in->k : NULL;
	v->dim_params = NULL;
	v->flags = (uint16_t)((v->flags & ~VF_DATA_DEP) | in->dep);
}

static const Value *sub_out(const Graph *sub, int i)
{
	return &sub->vals[sub->outputs[i]];
}

/* The single element of a constant bool or integer input, or -1 if the
 * input is absent or not constant; an error if it has more than one. */
static int const_scalar(OpCtx *c, int i, int64_t *v)
{
	const Tensor *t = op_const_in(c, i);
	if (!t)
		return 0;
	if (shape_numel(&t->shape) != 1)
		return op_error(c, "input %d ('%s') must hold one element",
				i, op_in(c, i)->name);
	*v = tensor_get_i64(t, 0);
	return 1;
}

/* ---- If: a branch invalid at these shapes --------------------------------- */

/* A graph input that value v of g derives from, found by walking back
 * through producers and outer references (at most a few hundred values),
 * or NULL: the warning names it ("sr"), as the user knows the model by
 * its inputs. */
static const char *source_input(const Graph *g, ValId v, int *budget)
{
	if (v < 0 || v >= g->nvals || --*budget < 0)
		return NULL;
	const Value *x = &g->vals[v];
	if (x->kind == VAL_INPUT)
		return x->name;
	if (x->kind == VAL_OUTER)
		return g->parent ? source_input(g->parent, x->outer, budget)
				 : NULL;
	if (x->producer < 0 || x->producer >= g->nnodes)
		return NULL;
	const Node *n = &g->nodes[x->producer];
	for (int32_t k = 0; k < n->ninputs; k++) {
		const char *r = source_input(g, n->inputs[k], budget);
		if (r)
			return r;
	}
	return NULL;
}

/* The gear whose branch c's node is in (its index orders the warnings),
 * or -1 for a static compile's graph. */
static int32_t gear_of(const OpCtx *c)
{
	const Model *m = c->model;
	for (const Graph *g = c->g; g && m && m->branches && m->gears;
	     g = g->parent)
		for (int32_t i = 0; i < m->gears->ngears; i++)
			if (m->branches[i] == g)
				return i;
	return -1;
}

/* The last error without the "node 'IF' (If): subgraph 'B': " that
 * op_infer_subgraph() put in front (the caller names them itself). */
static const char *branch_error(OpCtx *c, const Graph *b)
{
	char pre[512];
	const char *e = last_error();
	int n = snprintf(pre, sizeof(pre), "node '%s' (%s): subgraph '%s': ",
			 c->n->name, c->n->op_type, b->name);
	if (n > 0 && (size_t)n < sizeof(pre) && !strncmp(e, pre, (size_t)n))
		e += n;
	return arena_strdup(c->g->arena, e);
}

/* Output i of graph b as rank, dims... in *k of the shapes list. */
static void put_shape(int64_t *sh, int32_t *k, const Shape *s)
{
	sh[(*k)++] = s->rank;
	for (int32_t d = 0; d < s->rank; d++)
		sh[(*k)++] = s->dims[d];
}

/* Replaces the graph of attribute attr (the invalid branch) by one Fail
 * node whose outputs have valid's dtypes and shapes, and which raises
 * why when run. */
static int fail_branch(OpCtx *c, const char *attr, const Graph *valid,
		       const char *why)
{
	Graph *g = c->g;
	Attr *a = (Attr *)(uintptr_t)node_attr(c->n, attr);
	int32_t no = valid->noutputs, k = 0;
	int64_t *dt = arena_array(g->arena, (size_t)no + 1, sizeof(*dt));
	int64_t *sh = arena_array(g->arena, (size_t)no * (MAX_RANK + 1) + 1,
				  sizeof(*sh));
	Graph *f = graph_new(g->arena, a->g->name, g);
	Node *n = graph_add_node(f, arena_printf(g->arena, "%s/%s/fail",
						 c->n->name, attr),
				 "Fail", GEARC_DOMAIN, 0, no);
	n->label = c->n->label;
	node_add_string(f, n, FAIL_MESSAGE_ATTR,
			arena_printf(g->arena, "%s of If '%s' was taken, but "
				     "it is invalid at these shapes: %s",
				     attr, c->n->name, why));
	f->outputs = arena_array(g->arena, (size_t)no + 1, sizeof(ValId));
	f->noutputs = no;
	for (int32_t i = 0; i < no; i++) {
		const Value *v = sub_out(valid, i);
		const Graph *old = a->g;
		ValId id = graph_add_value(f, old->vals[old->outputs[i]].name,
					   VAL_NODE);
		f->vals[id].producer = 0;
		f->vals[id].flags = VF_GRAPH_OUT;
		n->outputs[i] = f->outputs[i] = id;
		dt[i] = v->dtype;
		put_shape(sh, &k, &v->shape);
	}
	node_add_ints(f, n, FAIL_DTYPES_ATTR, dt, no);
	node_add_ints(f, n, FAIL_SHAPES_ATTR, sh, k);
	a->g = f;
	return op_infer_subgraph(c, f);
}

/* A Fail node holds tensors only: a branch with sequence outputs stays
 * an error. */
static bool tensors_only(const Graph *b)
{
	for (int32_t i = 0; i < b->noutputs; i++)
		if (sub_out(b, i)->tkind != TK_TENSOR)
			return false;
	return true;
}

static void warn_branch(OpCtx *c, const char *attr, const char *why)
{
	int budget = 256;
	const Value *cond = op_in(c, 0);
	const char *src = source_input(c->g, c->n->inputs[0], &budget);
	int32_t gear = gear_of(c);
	char at[160];
	if (c->n->label)
		snprintf(at, sizeof(at), "gear %s", c->n->label);
	else
		snprintf(at, sizeof(at), "the compiled shapes");
	model_warn(c->model, gear < 0 ? 0 : gear,
		   "If '%s' (condition '%s'%s%s%s): %s is invalid at %s and "
		   "will raise an error if taken: %s", c->n->name, cond->name,
		   src && strcmp(src, cond->name) ? ", from input '" : "",
		   src && strcmp(src, cond->name) ? src : "",
		   src && strcmp(src, cond->name) ? "'" : "", attr, at, why);
}

/* Infers both branches of an If whose condition is not known.  One that
 * fails (it does not fit these shapes: a model exported for several
 * input sizes, one per branch) becomes a Fail branch and a warning; both
 * failing is the error. */
static int infer_branches(OpCtx *c, Graph **th, Graph **el)
{
	const char *terr = NULL, *eerr = NULL;
	if (op_infer_subgraph(c, *th) < 0)
		terr = branch_error(c, *th);
	if (op_infer_subgraph(c, *el) < 0)
		eerr = branch_error(c, *el);
	if (!terr && !eerr)
		return 0;
	if (terr && eerr)
		return op_error(c, "both branches are invalid at these shapes: "
				"then_branch: %s; else_branch: %s", terr, eerr);
	const char *attr = terr ? "then_branch" : "else_branch";
	const char *why = terr ? terr : eerr;
	const Graph *valid = terr ? *el : *th;
	if (!c->model || !tensors_only(valid))
		return op_error(c, "%s: %s", attr, why);
	if (fail_branch(c, attr, valid, why) < 0)
		return -1;
	warn_branch(c, attr, why);
	*th = node_attr(c->n, "then_branch")->g;
	*el = node_attr(c->n, "else_branch")->g;
	return 0;
}

/* ---- Fail: gearc's own op, a branch that can only raise ----------------- */

/* Outputs as the attributes say: dtypes, one per output; shapes, per
 * output its rank (-1: unknown) and then its dims. */
int infer_fail(OpCtx *c)
{
	const int64_t *dt, *sh;
	int32_t ndt = attr_ints(c->n, FAIL_DTYPES_ATTR, &dt);
	int32_t nsh = attr_ints(c->n, FAIL_SHAPES_ATTR, &sh), k = 0;
	if (ndt != c->n->noutputs)
		return op_error(c, "attribute dtypes has %d entries, expected "
				"one per output (%d)", ndt, c->n->noutputs);
	for (int i = 0; i < c->n->noutputs; i++) {
		Shape s = shape_unknown();
		int64_t r = k < nsh ? sh[k++] : -2;
		if (r < -1 || r > MAX_RANK || k + (r > 0 ? r : 0) > nsh ||
		    !dtype_valid((int)dt[i]))
			return op_error(c, "attributes dtypes and shapes are "
					"malformed at output %d", i);
		s.rank = (int32_t)r;
		for (int32_t d = 0; d < s.rank; d++)
			s.dims[d] = sh[k++];
		op_set_out(c, i, (int)dt[i], &s);
	}
	if (k != nsh)
		return op_error(c, "attribute shapes has %d entries, expected "
				"%d", nsh, k);
	return 0;
}

/* Raises its message when run; folding (no bound tensors) computes
 * nothing, so the compile goes on. */
int run_fail(OpCtx *c)
{
	if (!op_at_run_time(c))
		return 0;
	return op_error(c, "%s",
			attr_str(c->n, FAIL_MESSAGE_ATTR, "cannot run"));
}

/* ---- If ---------------------------------------------------------------- */

int infer_if(OpCtx *c)
{
	Value *cond = op_need_in(c, 0);
	if (!cond || op_check_dtype(c, 0, DTS(DT_BOOL)) < 0 ||
	    op_check_scalar(c, 0) < 0)
		return -1;
	Graph *th = subgraph_attr(c, "then_branch");
	Graph *el = th ? subgraph_attr(c, "else_branch") : NULL;
	if (!el)
		return -1;
	if (th->noutputs != el->noutputs || c->n->noutputs > th->noutputs)
		return op_error(c, "the node has %d outputs, then_branch %d and "
				"else_branch %d; expected the same number",
				c->n->noutputs, th->noutputs, el->noutputs);
	int64_t taken;
	int rc = const_scalar(c, 0, &taken);
	if (rc < 0)
		return -1;
	if (rc) {
		Graph *b = taken ? th : el;
		if (op_infer_subgraph(c, b) < 0)
			return -1;
		for (int i = 0; i < c->n->noutputs; i++) {
			Info in = info_of(sub_out(b, i));
			set_out(c, i, &in);
		}
		return 0;
	}
	if (infer_branches(c, &th, &el) < 0)
		return -1;
	for (int i = 0; i < c->n->noutputs; i++) {
		Info a = info_of(sub_out(th, i)), b = info_of(sub_out(el, i));
		if (merge_info(c, &a, &b, i, "then_branch and else_branch") < 0)
			return -1;
		set_out(c, i, &a);
	}
	return 0;
}

/* ---- loop-carried values ------------------------------------------------ */

/* Infers body, whose inputs in[0..body->ninputs) describe, until the
 * carried inputs in[cin .. cin+nc), fed back from body outputs
 * cout .. cout+nc, are stable (see the comment at the top). */
static int infer_carried(OpCtx *c, Graph *body, Info *in, int cin, int cout,
			 int nc)
{
	for (int round = 0;; round++) {
		for (int i = 0; i < body->ninputs; i++)
			bind_input(body, i, &in[i]);
		if (op_infer_subgraph(c, body) < 0)
			return -1;
		bool again = false;
		for (int k = 0; k < nc; k++) {
			Info *st = &in[cin + k];
			const Value *o = sub_out(body, cout + k);
			bool changed = false;
			if (st->tkind == TK_OTHER || o->tkind == TK_OTHER) {
				changed = st->tkind != TK_OTHER;
				st->tkind = TK_OTHER;
				st->dtype = DT_UNDEFINED;
				st->s = shape_unknown();
				st->k = NULL;
			} else if (st->tkind != o->tkind ||
				   st->dtype != o->dtype) {
				return op_error(c, "body output %d ('%s') is "
						"%s%s, but the loop-carried "
						"value it feeds starts as %s%s",
						cout + k, o->name,
						o->tkind == TK_SEQUENCE
							? "a sequence of "
							: "",
						dtype_name(o->dtype),
						st->tkind == TK_SEQUENCE
							? "a sequence of "
							: "",
						dtype_name(st->dtype));
			} else {
				if (merge_shape(&st->s, &o->shape, &changed))
					st->dep = VF_DATA_DEP;
				if (st->k && !same_konst(st->k, o->konst)) {
					st->k = NULL;
					changed = true;
				}
			}
			st->dep |= (uint16_t)(o->flags & VF_DATA_DEP);
			if (changed && round >= FIX_ROUNDS) {
				/* widen: all dims, then the rank; each value
				 * changes at most twice more */
				st->k = NULL;
				if (round == FIX_ROUNDS && st->s.rank >= 0)
					for (int32_t d = 0; d < st->s.rank; d++)
						st->s.dims[d] = DIM_UNKNOWN;
				else
					st->s = shape_unknown();
				st->dep = VF_DATA_DEP;
			}
			again |= changed;
		}
		if (!again)
			return 0;
	}
}

/* A carried value's final output: the initial value if the body never
 * runs (trips == 0), the body's output if it surely runs (trips > 0),
 * else either. */
static int final_value(OpCtx *c, int out, const Info *init, const Value *o,
		       int64_t trips)
{
	Info a = *init, b = info_of(o);
	if (trips == 0) {
		set_out(c, out, &a);
		return 0;
	}
	if (trips > 0) {
		set_out(c, out, &b);
		return 0;
	}
	if (merge_info(c, &a, &b, out, "initial and final loop values") < 0)
		return -1;
	set_out(c, out, &a);
	return 0;
}

/* Output out: the scan output stacking body value o along axis (of the
 * output's rank), len of them. */
static int stacked(OpCtx *c, int out, const Value *o, int64_t axis,
		   int64_t len, uint16_t dep)
{
	Info r = { .dtype = o->dtype, .tkind = TK_TENSOR, .s = shape_unknown(),
		   .dep = (uint16_t)(dep | (o->flags & VF_DATA_DEP)) };
	int32_t ax;
	if (o->tkind != TK_TENSOR)
		return op_error(c, "body output '%s' for scan output %d is not "
				"a tensor",
				o->name, out);
	if (o->shape.rank >= MAX_RANK)
		return op_error(c, "scan output %d would have rank %d; gearc "
				"supports at most %d",
				out, o->shape.rank + 1, MAX_RANK);
	if (o->shape.rank >= 0) {
		if (op_axis(c, "scan output axis", axis, o->shape.rank + 1,
			    &ax) < 0)
			return -1;
		r.s.rank = o->shape.rank + 1;
		for (int32_t d = 0, k = 0; d < r.s.rank; d++)
			r.s.dims[d] = d == ax ? len : o->shape.dims[k++];
	}
	set_out(c, out, &r);
	return 0;
}

/* ---- Loop -------------------------------------------------------------- */

static const Tensor *bool_true(OpCtx *c)
{
	static const uint8_t one = 1;
	Shape s = { .rank = 0 };
	return tensor_new(c->g->arena, NULL, DT_BOOL, &s, &one);
}

static int count_nodes(Graph *g, void *ctx)
{
	*(int64_t *)ctx += g->nnodes;
	return 0;
}

/* The n tensors parts[] stacked along a new axis 0 into shape s, if they
 * are all known, of one dtype and shape, and s is within the fold limit. */
static const Tensor *stack_konst(OpCtx *c, const Tensor **parts, int64_t n,
				 const Shape *s)
{
	if (n < 1 || !parts[0] || parts[0]->dtype == DT_STRING)
		return NULL;
	for (int64_t i = 1; i < n; i++)
		if (!parts[i] || parts[i]->dtype != parts[0]->dtype ||
		    !shape_equal(&parts[i]->shape, &parts[0]->shape))
			return NULL;
	int64_t bytes = shape_bytes(s, parts[0]->dtype);
	if (bytes < 0 || bytes > c->fold_limit ||
	    (uint64_t)bytes != (uint64_t)n * parts[0]->nbytes)
		return NULL;
	Tensor *t = op_new_tensor(c, parts[0]->dtype, s);
	if (!t)
		return NULL;
	for (int64_t i = 0; i < n; i++)
		memcpy((uint8_t *)tensor_mut(t) + (size_t)i * parts[0]->nbytes,
		       parts[i]->data, parts[i]->nbytes);
	return t;
}

/* Runs a loop that starts with a true condition at compile time, one
 * body inference per iteration with the iteration number and the exact
 * values of the previous one (contents included), as long as the body's
 * condition output is known; it ends when that turns false or after M
 * iterations.  Bounded by UNROLL_MAX iterations and UNROLL_BUDGET node
 * inferences.  Returns 1 with the loop's outputs set (exact: shapes that
 * depend on the iteration number, as in Slice(x, i, i+1), come out static,
 * and all-constant loops fold), or 0 if it cannot tell (nothing set; a
 * problem met on the way is left to the general inference to report).
 * The body is left inferred for the last iteration only: the caller
 * infers it again for all of them. */
static int unroll_loop(OpCtx *c, Graph *body, const Info *init, int n, int k,
		       int has_m, int64_t m)
{
	int64_t limit = has_m ? m : UNROLL_MAX, nodes = 0, trips = 0;
	if (limit < 1 || limit > UNROLL_MAX)
		return 0;
	graph_walk(body, count_nodes, &nodes);
	if (nodes * limit > UNROLL_BUDGET)
		return 0;
	Info *cur = arena_array(c->g->arena, (size_t)n + 2, sizeof(Info));
	Info *scan = arena_array(c->g->arena, (size_t)k + 1, sizeof(Info));
	const Tensor **parts = arena_array(c->g->arena, (size_t)(k * limit) + 1,
					   sizeof(*parts));
	memcpy(cur, init, ((size_t)n + 2) * sizeof(Info));
	cur[1].k = bool_true(c);
	bool ok = true, done = false;
	for (int64_t i = 0; i < limit && ok && !done; i++) {
		cur[0].k = tensor_new(c->g->arena, NULL, DT_INT64, &cur[0].s, &i);
		for (int j = 0; j < body->ninputs; j++)
			bind_input(body, j, &cur[j]);
		if (op_infer_subgraph(c, body) < 0) {
			clear_error();
			ok = false;
			break;
		}
		const Value *co = sub_out(body, 0);
		ok = co->konst && co->dtype == DT_BOOL &&
		     shape_numel(&co->shape) == 1;
		for (int j = 0; ok && j < n; j++) {
			const Value *o = sub_out(body, 1 + j);
			ok = o->tkind == cur[2 + j].tkind && o->tkind != TK_OTHER &&
			     o->dtype == cur[2 + j].dtype;
			cur[2 + j] = info_of(o);
		}
		for (int j = 0; ok && j < k; j++) {
			const Value *o = sub_out(body, 1 + n + j);
			bool changed;
			ok = o->tkind == TK_TENSOR && (!i || o->dtype == scan[j].dtype);
			if (!i)
				scan[j] = info_of(o);
			else if (merge_shape(&scan[j].s, &o->shape, &changed))
				scan[j].dep = VF_DATA_DEP;
			scan[j].dep |= (uint16_t)(o->flags & VF_DATA_DEP);
			parts[j * limit + i] = o->konst;
		}
		trips = i + 1;
		done = ok && !tensor_get_i64(co->konst, 0);
	}
	ok = ok && (done || has_m);
	for (int i = 0; ok && i < n && i < c->n->noutputs; i++)
		set_out(c, i, &cur[2 + i]);
	for (int j = 0; ok && n + j < c->n->noutputs; j++) {
		Info r = scan[j];
		if (r.s.rank >= MAX_RANK) {
			ok = false; /* the general inference reports it */
			break;
		}
		if (r.s.rank >= 0) {
			memmove(r.s.dims + 1, r.s.dims,
				(size_t)r.s.rank * sizeof(int64_t));
			r.s.dims[0] = trips;
			r.s.rank++;
		}
		r.k = shape_is_static(&r.s)
			      ? stack_konst(c, parts + j * limit, trips, &r.s)
			      : NULL;
		set_out(c, n + j, &r);
	}
	return ok;
}

int infer_loop(OpCtx *c)
{
	Graph *body = subgraph_attr(c, "body");
	if (!body)
		return -1;
	int n = c->n->ninputs - 2; /* loop-carried values */
	if (n < 0)
		return op_error(c, "expected inputs M, cond and the loop-carried "
				"values; got %d inputs", c->n->ninputs);
	int k = body->noutputs - 1 - n; /* scan outputs */
	if (body->ninputs != n + 2 || k < 0)
		return op_error(c, "the body has %d inputs and %d outputs; "
				"with %d loop-carried values it needs %d "
				"inputs and at least %d outputs",
				body->ninputs, body->noutputs, n, n + 2, n + 1);
	if (c->n->noutputs > n + k)
		return op_error(c, "the node has %d outputs; the body gives %d",
				c->n->noutputs, n + k);
	if (op_check_dtype(c, 0, DTS(DT_INT64)) < 0 ||
	    op_check_dtype(c, 1, DTS(DT_BOOL)) < 0 ||
	    op_check_scalar(c, 0) < 0 || op_check_scalar(c, 1) < 0)
		return -1;
	/* M and cond when constant; an absent cond counts as true */
	int64_t m = -1, cond = 1;
	int has_m = const_scalar(c, 0, &m), has_cond = 1;
	if (op_in(c, 1))
		has_cond = const_scalar(c, 1, &cond);
	if (has_m < 0 || has_cond < 0)
		return -1;
	/* trips: 0 if the body surely never runs, 1 if it surely runs at
	 * least once, -1 if not known */
	int64_t trips = -1;
	if ((has_m && m <= 0) || (has_cond && !cond))
		trips = 0;
	else if (has_cond && (has_m || !op_in(c, 0)))
		trips = 1;

	Info *in = arena_array(c->g->arena, (size_t)n + 2, sizeof(Info));
	Shape scalar = { .rank = 0 };
	in[0] = (Info){ .dtype = DT_INT64, .s = scalar };
	in[1] = (Info){ .dtype = DT_BOOL, .s = scalar };
	for (int i = 0; i < n; i++) {
		Value *v = op_need_in(c, i + 2);
		if (!v)
			return -1;
		in[i + 2] = info_of(v);
	}
	Info *init = arena_array(c->g->arena, (size_t)n + 2, sizeof(Info));
	memcpy(init, in, ((size_t)n + 2) * sizeof(Info));

	/* Exact outputs by running the loop at compile time, when it can */
	int unrolled = trips == 1 ? unroll_loop(c, body, init, n, k, has_m, m)
				  : 0;
	/* Hypothesis: the condition stays true (see the top comment). */
	bool steady = has_cond && cond && trips != 0;
	int rc = 0;
	if (steady) {
		in[1].k = bool_true(c);
		rc = infer_carried(c, body, in, 2, 1, n);
		const Value *co = sub_out(body, 0);
		steady = !rc && co->konst && co->dtype == DT_BOOL &&
			 shape_numel(&co->shape) == 1 &&
			 tensor_get_i64(co->konst, 0);
		if (!rc && !steady) {
			memcpy(in, init, ((size_t)n + 2) * sizeof(Info));
			in[1].k = NULL;
		}
	}
	if (!rc && !steady)
		rc = infer_carried(c, body, in, 2, 1, n);
	if (!rc && sub_out(body, 0)->dtype != DT_BOOL)
		rc = op_error(c, "body output 0 ('%s') is the condition and "
			      "must be bool, not %s",
			      sub_out(body, 0)->name,
			      dtype_name(sub_out(body, 0)->dtype));
	for (int i = 0; !rc && !unrolled && i < n && i < c->n->noutputs; i++)
		rc = final_value(c, i, &init[i + 2], sub_out(body, 1 + i),
				 trips);
	int64_t len = trips == 0 ? 0 : steady && has_m ? m : DIM_UNKNOWN;
	for (int j = 0; !rc && !unrolled && n + j < c->n->noutputs; j++)
		rc = stacked(c, n + j, sub_out(body, 1 + n + j), 0, len,
			     len < 0 ? VF_DATA_DEP : 0);
	return rc;
}

/* ---- Scan -------------------------------------------------------------- */

/* Shape s without its dims a and b (b < 0: only a). */
static Shape drop_dims(const Shape *s, int32_t a, int32_t b)
{
	Shape r = { .rank = s->rank };
	if (s->rank < 0)
		return *s;
	r.rank = 0;
	for (int32_t d = 0; d < s->rank; d++)
		if (d != a && d != b)
			r.dims[r.rank++] = s->dims[d];
	return r;
}

/* Merges dim d (of input i) into *len, which all scan inputs share. */
static int same_len(OpCtx *c, int i, int64_t d, int64_t *len,
		    const char *what)
{
	if (d == DIM_UNKNOWN)
		return 0;
	if (*len != DIM_UNKNOWN && *len != d)
		return op_error(c, "input %d ('%s') has %s %lld, but an earlier "
				"one has %lld",
				i, op_in(c, i)->name, what, (long long)d,
				(long long)*len);
	*len = d;
	return 0;
}

/* The optional ints attribute name: n values, or an error. */
static int list_attr(OpCtx *c, const char *name, int n, const int64_t **v)
{
	int32_t got = attr_ints(c->n, name, v);
	if (got < 0) {
		*v = NULL;
		return 0;
	}
	if (got != n)
		return op_error(c, "attribute %s has %d values, expected %d",
				name, got, n);
	return 0;
}

/* What the body sees of Scan input v (number i): a state (scan false)
 * whole, a scan input without its scan axis; opset 8 drops the batch axis
 * 0 of both, and the scan axis is 1. */
static int scan_input(OpCtx *c, const Value *v, int i, bool scan,
		      int64_t axis, int64_t *len, int64_t *batch, Info *out)
{
	int32_t r = v->shape.rank, ax;
	*out = info_of(v);
	if (c->opset < 9) {
		if (r >= 0 && r < 1 + scan)
			return op_error(c, "input %d ('%s') has rank %d, "
					"expected at least %d (batch%s)",
					i, v->name, r, 1 + scan,
					scan ? " and sequence" : "");
		if (same_len(c, i, shape_dim(&v->shape, 0), batch,
			     "batch size") < 0 ||
		    (scan && same_len(c, i, shape_dim(&v->shape, 1), len,
				      "sequence length") < 0))
			return -1;
		out->s = drop_dims(&v->shape, 0, scan ? 1 : -1);
		out->k = NULL;
		return 0;
	}
	if (!scan || r < 0)
		return 0;
	out->k = NULL;
	if (op_axis(c, "scan_input_axes", axis, r, &ax) < 0 ||
	    same_len(c, i, v->shape.dims[ax], len, "scan length") < 0)
		return -1;
	out->s = drop_dims(&v->shape, ax, -1);
	return 0;
}

/* Opset 8: output i gets the batch axis in front. */
static int add_batch(OpCtx *c, int i, int64_t batch)
{
	Value *o = op_out(c, i);
	if (!o || o->shape.rank < 0)
		return 0;
	if (o->shape.rank >= MAX_RANK)
		return op_error(c, "output %d would have rank %d; gearc "
				"supports at most %d",
				i, o->shape.rank + 1, MAX_RANK);
	memmove(o->shape.dims + 1, o->shape.dims,
		(size_t)o->shape.rank * sizeof(int64_t));
	o->shape.dims[0] = batch;
	o->shape.rank++;
	o->konst = NULL;
	return 0;
}

int infer_scan(OpCtx *c)
{
	Graph *body = subgraph_attr(c, "body");
	if (!body)
		return -1;
	bool v8 = c->opset < 9;
	int first = v8 ? 1 : 0; /* opset 8: input 0 is sequence_lens */
	int64_t m = attr_int(c->n, "num_scan_inputs", -1);
	int nin = c->n->ninputs - first;
	if (m < 1 || m > nin)
		return op_error(c, "attribute num_scan_inputs is %lld; expected "
				"1..%d (the number of scan inputs)",
				(long long)m, nin);
	int n = nin - (int)m, k = body->noutputs - n;
	if (body->ninputs != nin || k < 0)
		return op_error(c, "the body has %d inputs and %d outputs; "
				"expected %d inputs and at least %d outputs",
				body->ninputs, body->noutputs, nin, n);
	if (c->n->noutputs > n + k)
		return op_error(c, "the node has %d outputs; the body gives %d",
				c->n->noutputs, n + k);
	const int64_t *in_axes = NULL, *out_axes = NULL;
	if (!v8 && (list_attr(c, "scan_input_axes", (int)m, &in_axes) < 0 ||
		    list_attr(c, "scan_output_axes", k, &out_axes) < 0))
		return -1;
	if (v8 && (op_check_dtype(c, 0, DTS(DT_INT64)) < 0 ||
		   op_check_rank(c, 0, 1, 1) < 0))
		return -1;

	Info *in = arena_array(c->g->arena, (size_t)nin, sizeof(Info));
	Info *init = arena_array(c->g->arena, (size_t)nin, sizeof(Info));
	int64_t len = DIM_UNKNOWN, batch = DIM_UNKNOWN;
	int rc = 0;
	for (int i = 0; !rc && i < nin; i++) {
		Value *v = op_need_in(c, first + i);
		if (!v)
			rc = -1;
		else if (v->tkind != TK_TENSOR)
			rc = op_error(c, "input %d ('%s') is not a tensor",
				      first + i, v->name);
		else
			rc = scan_input(c, v, first + i, i >= n,
					in_axes ? in_axes[i - n < 0 ? 0 : i - n]
						: 0,
					&len, &batch, &in[i]);
		init[i] = in[i];
	}
	if (!rc)
		rc = infer_carried(c, body, in, 0, 0, n);
	/* 0: the body never runs, 1: it surely runs, -1: not known (opset
	 * 8's sequence_lens may stop a batch entry early) */
	int64_t trips = len == 0 ? 0 : len < 0 || (v8 && op_in(c, 0)) ? -1 : 1;
	for (int i = 0; !rc && i < n && i < c->n->noutputs; i++) {
		rc = final_value(c, i, &init[i], sub_out(body, i), trips);
		if (!rc && v8)
			rc = add_batch(c, i, batch);
	}
	for (int j = 0; !rc && n + j < c->n->noutputs; j++) {
		rc = stacked(c, n + j, sub_out(body, n + j),
			     out_axes ? out_axes[j] : 0, len, 0);
		if (!rc && v8)
			rc = add_batch(c, n + j, batch);
	}
	return rc;
}

/* ---- Scan's kernel ----------------------------------------------------------
 *
 * Runs the body once per position along the scan axis: each scan input
 * sliced at that position (from the end for direction 1), the carried
 * states passed on, each scan output's element stacked at its position.
 * Opset 8's batched form runs that per batch entry (axis 0 of every input
 * and output).  The body runs through op_eval_subgraph, so this works
 * both when folding and at run time. */

/* x[..., at, ...] along axis a: a tensor of x's shape without axis a. */
static Tensor *scan_slice(OpCtx *c, const Tensor *x, int32_t a, int64_t at)
{
	Shape s = { .rank = x->shape.rank - 1 };
	int64_t outer = 1, inner = 1, n = x->shape.dims[a];
	for (int32_t k = 0; k < x->shape.rank; k++) {
		if (k < a)
			outer *= x->shape.dims[k];
		if (k > a)
			inner *= x->shape.dims[k];
		if (k != a)
			s.dims[k - (k > a)] = x->shape.dims[k];
	}
	Tensor *t = op_new_tensor(c, x->dtype, &s);
	if (!t)
		return NULL;
	size_t row = (size_t)inner * tn_esize(x->dtype);
	for (int64_t o = 0; o < outer; o++)
		memcpy((uint8_t *)tensor_mut(t) + (size_t)o * row,
		       (const uint8_t *)x->data + (size_t)(o * n + at) * row, row);
	return t;
}

/* The n elements el[] (equal shapes) stacked along axis a. */
static Tensor *scan_stack(OpCtx *c, const Tensor **el, int64_t n, int32_t a)
{
	const Tensor *e = el[0];
	if (a < 0 || a > e->shape.rank)
		return op_error(c, "scan output axis %d is outside 0..%d", a,
				e->shape.rank), NULL;
	Shape s = { .rank = e->shape.rank + 1 };
	int64_t outer = 1, inner = 1;
	for (int32_t k = 0; k < s.rank; k++)
		s.dims[k] = k < a ? e->shape.dims[k]
			   : k == a ? n : e->shape.dims[k - 1];
	for (int32_t k = 0; k < e->shape.rank; k++)
		*(k < a ? &outer : &inner) *= e->shape.dims[k];
	Tensor *t = op_new_tensor(c, e->dtype, &s);
	if (!t)
		return NULL;
	size_t row = (size_t)inner * tn_esize(e->dtype);
	for (int64_t i = 0; i < n; i++) {
		if (!shape_equal(&el[i]->shape, &e->shape))
			return op_error(c, "the body's scan output changes shape "
					"between iterations"), NULL;
		for (int64_t o = 0; o < outer; o++)
			memcpy((uint8_t *)tensor_mut(t) +
				       (size_t)(o * n + i) * row,
			       (const uint8_t *)el[i]->data + (size_t)o * row,
			       row);
	}
	return t;
}

static int64_t list_at(const Node *nd, const char *name, int i)
{
	const int64_t *v;
	int32_t n = attr_ints(nd, name, &v);
	return n > i ? v[i] : 0;
}

/* One scan over states st[0..ns) and scan inputs sc[0..m): the final
 * states into st, the scan outputs (k of them) into out[]. */
static int scan_once(OpCtx *c, const Graph *body, const Tensor **st, int ns,
		     const Tensor **sc, int m, int k, bool v8,
		     const Tensor **out)
{
	int64_t len = -1;
	for (int j = 0; j < m; j++) {
		int64_t ax = v8 ? 0 : list_at(c->n, "scan_input_axes", j);
		if (ax < 0)
			ax += sc[j]->shape.rank;
		if (ax < 0 || ax >= sc[j]->shape.rank)
			return op_error(c, "scan input %d: axis out of range", j);
		if (len >= 0 && sc[j]->shape.dims[ax] != len)
			return op_error(c, "scan inputs differ in length");
		len = sc[j]->shape.dims[ax];
	}
	const Tensor **in = op_scratch(c, (size_t)(ns + m + 1) * sizeof(*in));
	const Tensor **res = op_scratch(c, (size_t)(ns + k + 1) * sizeof(*res));
	const Tensor **els = op_scratch(c, (size_t)(k * (len + 1) + 1) *
						   sizeof(*els));
	if (!in || !res || !els)
		return -1;
	for (int64_t t = 0; t < len; t++) {
		for (int i = 0; i < ns; i++)
			in[i] = st[i];
		for (int j = 0; j < m; j++) {
			int64_t ax = v8 ? 0 : list_at(c->n, "scan_input_axes", j);
			bool rev = !v8 && list_at(c->n, "scan_input_directions", j);
			if (ax < 0)
				ax += sc[j]->shape.rank;
			if (!(in[ns + j] = scan_slice(c, sc[j], (int32_t)ax,
						      rev ? len - 1 - t : t)))
				return -1;
		}
		if (op_eval_subgraph(c, body, in, res) < 0)
			return -1;
		for (int i = 0; i < ns; i++)
			st[i] = res[i];
		for (int q = 0; q < k; q++) {
			bool rev = !v8 && list_at(c->n, "scan_output_directions", q);
			els[q * len + (rev ? len - 1 - t : t)] = res[ns + q];
		}
	}
	if (len <= 0 && k)
		return op_error(c, "a scan of length 0 has no output shape");
	for (int q = 0; q < k; q++) {
		int64_t ax = v8 ? 0 : list_at(c->n, "scan_output_axes", q);
		if (ax < 0)
			ax += els[q * len]->shape.rank + 1;
		if (!(out[q] = scan_stack(c, els + q * len, len, (int32_t)ax)))
			return -1;
	}
	return 0;
}

int run_scan(OpCtx *c)
{
	const Attr *ba = node_attr(c->n, "body");
	bool v8 = c->opset < 9;
	int first = v8 ? 1 : 0;
	int64_t m = attr_int(c->n, "num_scan_inputs", -1);
	int nin = c->n->ninputs - first;
	if (!ba || ba->type != ATTR_GRAPH || !ba->g || m < 1 || m > nin)
		return 0; /* infer_scan reported it */
	const Graph *body = ba->g;
	int ns = nin - (int)m, k = body->noutputs - ns;
	if (v8 && op_in(c, 0))
		return op_error(c, "Scan-8's sequence_lens is not supported at "
				"run time");
	const Tensor **x = op_scratch(c, (size_t)(nin + 1) * sizeof(*x));
	const Tensor **out = op_scratch(c, (size_t)(ns + k + 1) * sizeof(*out));
	if (!x || !out)
		return -1;
	for (int i = 0; i < nin; i++)
		if (!(x[i] = op_const_in(c, first + i)))
			return 0;
	if (!v8) {
		if (scan_once(c, body, x, ns, x + ns, (int)m, k, false,
			      out + ns) < 0)
			return -1;
		for (int i = 0; i < ns; i++)
			out[i] = x[i];
	} else {
		int64_t nb = x[0]->shape.rank > 0 ? x[0]->shape.dims[0] : 0;
		const Tensor **per = op_scratch(c, (size_t)((ns + k) * nb + 1) *
							   sizeof(*per));
		const Tensor **b = op_scratch(c, (size_t)(nin + 1) * sizeof(*b));
		if (!per || !b || nb < 1)
			return per && b ? op_error(c, "an empty batch") : -1;
		for (int64_t e = 0; e < nb; e++) {
			for (int i = 0; i < nin; i++)
				if (!(b[i] = scan_slice(c, x[i], 0, e)))
					return -1;
			if (scan_once(c, body, b, ns, b + ns, (int)m, k, true,
				      per + e * (ns + k) + ns) < 0)
				return -1;
			for (int i = 0; i < ns; i++)
				per[e * (ns + k) + i] = b[i];
		}
		const Tensor **col = op_scratch(c, (size_t)(nb + 1) *
							   sizeof(*col));
		for (int q = 0; q < ns + k; q++) {
			for (int64_t e = 0; e < nb; e++)
				col[e] = per[e * (ns + k) + q];
			if (!(out[q] = scan_stack(c, col, nb, 0)))
				return -1;
		}
	}
	for (int q = 0; q < ns + k && q < c->n->noutputs; q++)
		if (op_out(c, q))
			op_set_const(c, q, out[q]);
	return 0;
}
