/*
 * passes/constwork.c - work on weights alone, done once.
 *
 * A node whose inputs are all weights (a DequantizeLinear of a constant
 * embedding table, the Transpose of that, a Cast of a constant) computes
 * the same tensor on every run.  Inference folds such a node at compile
 * time when its outputs fit Model.fold_limit (passes/infer.c); a larger
 * result would swell the file (a 32768x288 int8 table dequantizes to 36
 * MiB of float), so it is computed instead when the runtime opens the
 * model (runtime/model.c), once, into memory the model owns and its
 * sessions share:
 *   - constwork_values() says which values those are: made by a node of
 *     a deterministic op with a kernel and no subgraph, whose inputs are
 *     weights, folded constants or such values, with static plain-tensor
 *     outputs none of which is a graph output (the caller binds those);
 *   - the memory planner (passes/memplan.c) gives them no arena block;
 *   - constwork_eval() runs those nodes in graph order on the reference
 *     kernels (eval_node) and turns the values that other nodes read into
 *     weights; intermediate results are dropped at constwork_end(); a
 *     node's twin in another graph of the model (each gear's branch
 *     clones it) takes its results, not a second copy;
 *   - the runtime makes no task of a node whose outputs are all weights
 *     (constwork_done), so it never runs per run.
 * serializer/verify.c accepts those values without a block, by a check
 * of its own on the file.
 */
#include <stdlib.h>
#include <string.h>

#include "constwork.h"
#include "compiler/ops/opimpl.h"
#include "passes.h"

bool constwork_op(int op)
{
	bool random = op == OP_RandomNormal || op == OP_RandomNormalLike ||
		      op == OP_RandomUniform || op == OP_RandomUniformLike ||
		      op == OP_Bernoulli || op == OP_Multinomial;
	return op > 0 && op < OP_COUNT && op_info[op].run && !random;
}

static bool has_subgraphs(const Node *n)
{
	for (int32_t k = 0; k < n->nattrs; k++)
		if (n->attrs[k].type == ATTR_GRAPH ||
		    n->attrs[k].type == ATTR_GRAPHS)
			return true;
	return false;
}

static bool is_graph_output(const Graph *g, ValId v)
{
	for (int32_t k = 0; k < g->noutputs; k++)
		if (g->outputs[k] == v)
			return true;
	return false;
}

/* An output of a node worth computing once. */
static bool output_ok(const Graph *g, ValId v)
{
	const Value *x = &g->vals[v];
	return x->kind == VAL_NODE && !x->konst && x->tkind == TK_TENSOR &&
	       x->dtype != DT_STRING && shape_is_static(&x->shape) &&
	       shape_bytes(&x->shape, x->dtype) >= 0 && !is_graph_output(g, v);
}

/* Whether node n's work is on weights alone (once[] as far as known). */
static bool node_once(const Graph *g, const Node *n, const uint8_t *once)
{
	bool any_in = false, any_out = false;
	if (!constwork_op(n->op) || has_subgraphs(n))
		return false;
	for (int32_t k = 0; k < n->ninputs; k++) {
		ValId v = n->inputs[k];
		if (v < 0)
			continue;
		const Value *x = &g->vals[v];
		if (!(x->kind == VAL_WEIGHT || x->konst || once[v]))
			return false;
		any_in = true;
	}
	for (int32_t k = 0; k < n->noutputs; k++) {
		if (n->outputs[k] < 0)
			continue;
		if (!output_ok(g, n->outputs[k]))
			return false;
		any_out = true;
	}
	return any_in && any_out;
}

uint8_t *constwork_values(const Graph *g)
{
	uint8_t *once = xcalloc((size_t)g->nvals + 1, 1);
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		if (!node_once(g, n, once))
			continue;
		for (int32_t k = 0; k < n->noutputs; k++)
			if (n->outputs[k] >= 0)
				once[n->outputs[k]] = 1;
	}
	return once;
}

static const Tensor *konst_of(void *ctx, ValId v)
{
	const Graph *g = ctx;
	return v >= 0 && v < g->nvals ? g->vals[v].konst : NULL;
}

/* Whether node n makes values of once[]. */
static bool makes_once(const Node *n, const uint8_t *once)
{
	for (int32_t k = 0; k < n->noutputs; k++)
		if (n->outputs[k] >= 0)
			return once[n->outputs[k]];
	return false;
}

/* Per value of g: read by a node that still runs (any value, if a node
 * holds subgraphs, which may read any). */
static uint8_t *read_at_run(const Graph *g, const uint8_t *once)
{
	uint8_t *read = xcalloc((size_t)g->nvals + 1, 1);
	for (int32_t i = 0; i < g->nnodes; i++) {
		const Node *n = &g->nodes[i];
		if (has_subgraphs(n)) {
			memset(read, 1, (size_t)g->nvals);
			break;
		}
		for (int32_t k = 0; !makes_once(n, once) && k < n->ninputs; k++)
			if (n->inputs[k] >= 0)
				read[n->inputs[k]] = 1;
	}
	return read;
}

/* ---- twins: one node cloned per gear ------------------------------------ */

/* A node whose work was done: its inputs then and its outputs, in keep
 * (kept[k]) or in mid. */
typedef struct Done {
	const Node *n;
	const Tensor **in, **out;
	bool *kept;
	struct Done *next;
} Done;

static bool same_tensor(const Tensor *a, const Tensor *b)
{
	if (a == b)
		return true;
	if (!a || !b || a->dtype != b->dtype || a->nbytes != b->nbytes ||
	    !shape_equal(&a->shape, &b->shape))
		return false;
	return a->data == b->data || !memcmp(a->data, b->data, a->nbytes);
}

static bool same_bytes(Bytes a, Bytes b)
{
	return a.len == b.len && (!a.len || !memcmp(a.data, b.data, a.len));
}

/* Attributes of a node without subgraphs, alike in value. */
static bool same_attr(const Attr *a, const Attr *b)
{
	bool same = !strcmp(a->name, b->name) && a->type == b->type &&
		    a->n == b->n && a->i == b->i &&
		    !memcmp(&a->f, &b->f, sizeof(a->f)) &&
		    same_bytes(a->s, b->s) && same_tensor(a->t, b->t);
	size_t n = a->n > 0 ? (size_t)a->n : 0;
	if (same && a->type == ATTR_FLOATS)
		same = !n || !memcmp(a->floats, b->floats, n * sizeof(float));
	if (same && a->type == ATTR_INTS)
		same = !n || !memcmp(a->ints, b->ints, n * sizeof(int64_t));
	for (size_t k = 0; same && a->type == ATTR_STRINGS && k < n; k++)
		same = same_bytes(a->strings[k], b->strings[k]);
	for (size_t k = 0; same && a->type == ATTR_TENSORS && k < n; k++)
		same = same_tensor(a->tensors[k], b->tensors[k]);
	return same;
}

/* The work done on node n of g already (its twin in another gear's
 * graph), or NULL. */
static Done *twin(const ConstWork *cw, const Graph *g, const Node *n)
{
	for (Done *d = cw->done; d; d = d->next) {
		const Node *t = d->n;
		bool same = t->op == n->op && !strcmp(t->op_type, n->op_type) &&
			    !strcmp(t->domain, n->domain) &&
			    t->ninputs == n->ninputs &&
			    t->noutputs == n->noutputs && t->nattrs == n->nattrs;
		for (int32_t k = 0; same && k < n->ninputs; k++)
			same = same_tensor(d->in[k], n->inputs[k] >= 0
				   ? g->vals[n->inputs[k]].konst : NULL);
		for (int32_t k = 0; same && k < n->noutputs; k++)
			same = (t->outputs[k] < 0) == (n->outputs[k] < 0);
		for (int32_t k = 0; same && k < n->nattrs; k++)
			same = same_attr(&t->attrs[k], &n->attrs[k]);
		if (same)
			return d;
	}
	return NULL;
}

/* ---- doing the work --------------------------------------------------------- */

/* Node n of g run (on scratch of its own): its outputs, copied to keep
 * where a node that runs reads them, else to mid; NULL with an error. */
static Done *run_node(ConstWork *cw, Graph *g, const Node *n,
		      const uint8_t *read)
{
	EvalSource src = { konst_of, g };
	size_t ni = (size_t)n->ninputs + 1, no = (size_t)n->noutputs + 1;
	Done *d = arena_alloc(&cw->mid, sizeof(*d));
	d->n = n;
	d->in = arena_array(&cw->mid, ni, sizeof(*d->in));
	d->out = arena_array(&cw->mid, no, sizeof(*d->out));
	d->kept = arena_array(&cw->mid, no, sizeof(*d->kept));
	for (int32_t k = 0; k < n->ninputs; k++)
		d->in[k] = n->inputs[k] >= 0 ? g->vals[n->inputs[k]].konst
					     : NULL;
	Arena tmp;
	arena_init(&tmp);
	int rc = eval_node(cw->m, g, n, &src, &tmp, d->out);
	for (int32_t k = 0; !rc && k < n->noutputs; k++) {
		const Tensor *t = d->out[k];
		ValId v = n->outputs[k];
		if (v < 0)
			continue;
		Tensor *w = tensor_new(read[v] ? cw->keep : &cw->mid,
				       g->vals[v].name, t->dtype, &t->shape,
				       t->data);
		if (!w)
			rc = -1;
		else
			w->folded = true;
		d->out[k] = w;
		d->kept[k] = read[v];
		g->vals[v].konst = w;
	}
	arena_release(&tmp);
	if (rc < 0)
		return NULL;
	d->next = cw->done;
	cw->done = d;
	return d;
}

/* Node n of g's outputs from d: those a node that runs reads moved to
 * keep if they are not there yet. */
static int take_done(ConstWork *cw, Graph *g, const Node *n, Done *d,
		     const uint8_t *read)
{
	for (int32_t k = 0; k < n->noutputs; k++) {
		ValId v = n->outputs[k];
		if (v < 0)
			continue;
		if (read[v] && !d->kept[k]) {
			const Tensor *t = d->out[k];
			Tensor *w = tensor_new(cw->keep, t->name, t->dtype,
					       &t->shape, t->data);
			if (!w)
				return -1;
			w->folded = true;
			d->out[k] = w;
			d->kept[k] = true;
		}
		g->vals[v].konst = d->out[k];
	}
	return 0;
}

/* Does the work of the nodes making once[] values (or takes their
 * twins'): the count, or -1 with an error. */
static int run_once_nodes(ConstWork *cw, Graph *g, const uint8_t *once,
			  const uint8_t *read)
{
	int done = 0;
	for (int32_t i = 0; i < g->nnodes; i++) {
		Node *n = &g->nodes[i];
		if (!makes_once(n, once))
			continue;
		Done *d = twin(cw, g, n);
		if (d ? take_done(cw, g, n, d, read) < 0
		      : !(d = run_node(cw, g, n, read)))
			return -1;
		n->flags |= NF_CONSTWORK;
		done++;
	}
	return done;
}

void constwork_begin(ConstWork *cw, Model *m, Arena *keep)
{
	memset(cw, 0, sizeof(*cw));
	cw->m = m;
	cw->keep = keep;
	arena_init(&cw->mid);
}

int constwork_eval(ConstWork *cw, Graph *g)
{
	uint8_t *once = constwork_values(g), *read = read_at_run(g, once);
	int done = run_once_nodes(cw, g, once, read);
	for (ValId v = 0; v < g->nvals; v++) {
		Value *x = &g->vals[v];
		if (once[v] && read[v] && x->konst && done >= 0)
			x->kind = VAL_WEIGHT;
		else if (once[v])
			x->konst = NULL; /* in mid, or left by a failure */
	}
	free(read);
	free(once);
	return done;
}

void constwork_end(ConstWork *cw)
{
	arena_release(&cw->mid);
	cw->done = NULL;
}

bool constwork_done(const Node *n)
{
	return n->flags & NF_CONSTWORK;
}
