/* compiler/edit.c - --out_nodes, --output_type, --input_fp16_nodes on
 * the model (compiler/edit.h), and the graph surgery they share with
 * preprocessing (compiler/preproc.c). */
#include <stdlib.h>
#include <string.h>

#include "edit.h"

void edit_parsed_release(ParsedEdits *p)
{
	for (int32_t i = 0; i < p->nout; i++)
		free(p->out[i].name);
	for (int32_t i = 0; i < p->ntypes; i++)
		free(p->types[i].name);
	for (int32_t i = 0; i < p->nfp16; i++)
		free(p->fp16[i]);
	free(p->out);
	free(p->types);
	free(p->fp16);
	memset(p, 0, sizeof(*p));
}

/* ---- surgery -------------------------------------------------------------- */

void graph_replace_uses(Graph *g, ValId old, ValId new_id, int32_t limit)
{
	for (int32_t i = 0; i < limit; i++) {
		Node *n = &g->nodes[i];
		for (int32_t k = 0; k < n->ninputs; k++)
			if (n->inputs[k] == old)
				n->inputs[k] = new_id;
		for (int32_t a = 0; a < n->nattrs; a++) {
			Attr *at = &n->attrs[a];
			int32_t ng = at->type == ATTR_GRAPH ? 1
				     : at->type == ATTR_GRAPHS ? at->n
							       : 0;
			for (int32_t j = 0; j < ng; j++) {
				Graph *sub = at->type == ATTR_GRAPH
						     ? at->g
						     : at->graphs[j];
				for (ValId v = 0; v < sub->nvals; v++)
					if (sub->vals[v].kind == VAL_OUTER &&
					    sub->vals[v].outer == old)
						sub->vals[v].outer = new_id;
			}
		}
	}
	for (int32_t i = 0; i < g->noutputs; i++)
		if (g->outputs[i] == old) {
			g->outputs[i] = new_id;
			g->vals[old].flags &= (uint16_t)~VF_GRAPH_OUT;
			g->vals[new_id].flags |= VF_GRAPH_OUT;
		}
}

ValId graph_add_unary(Graph *g, const char *op, ValId in, const char *out)
{
	const char *name = graph_fresh_name(g, out);
	ValId v = graph_add_value(g, name, VAL_NODE);
	Node *n = graph_add_node(g, name, op, "", 1, 1);
	n->inputs[0] = in;
	n->outputs[0] = v;
	return v;
}

static ValId add_weight(Graph *g, const char *base, int dt, const void *v,
			int32_t rank, const int64_t *dims)
{
	Shape s = shape_of(rank, dims);
	const char *name = graph_fresh_name(g, base);
	Tensor *t = tensor_new(g->arena, name, dt, &s, v);
	t->folded = true; /* gearc's, not the model's */
	return graph_add_weight(g, name, t);
}

ValId graph_add_f32(Graph *g, const char *base, const float *v,
		    int32_t rank, const int64_t *dims)
{
	return add_weight(g, base, DT_FLOAT, v, rank, dims);
}

ValId graph_add_i64(Graph *g, const char *base, const int64_t *v,
		    int32_t rank, const int64_t *dims)
{
	return add_weight(g, base, DT_INT64, v, rank, dims);
}

/* ---- --out_nodes ------------------------------------------------------------ */

static int32_t find_node(const Graph *g, const char *name)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i].name, name))
			return i;
	return -1;
}

static ValId find_value(const Graph *g, const char *name)
{
	for (ValId v = 0; v < g->nvals; v++)
		if (!strcmp(g->vals[v].name, name))
			return v;
	return -1;
}

/* The value r names: node r->name's output r->index, or the value so
 * named. */
static ValId resolve(const Graph *g, const OutRef *r, const char *flag)
{
	if (r->index < 0) {
		ValId v = find_value(g, r->name);
		if (v < 0)
			return error("%s: the model has no tensor named '%s'",
				     flag, r->name);
		return v;
	}
	int32_t i = find_node(g, r->name);
	if (i < 0)
		return error("%s: the model has no node named '%s' (expected "
			     "NODE:INDEX with a node's name)", flag, r->name);
	const Node *n = &g->nodes[i];
	if (r->index >= n->noutputs || n->outputs[r->index] < 0)
		return error("%s: node '%s' (%s) has %d output%s; '%s:%d' is "
			     "out of range", flag, r->name, n->op_type,
			     n->noutputs, n->noutputs == 1 ? "" : "s", r->name,
			     r->index);
	return n->outputs[r->index];
}

static int set_outputs(Graph *g, const ParsedEdits *p)
{
	ValId *outs = arena_array(g->arena, (size_t)p->nout, sizeof(ValId));
	for (int32_t i = 0; i < p->nout; i++) {
		outs[i] = resolve(g, &p->out[i], "--out_nodes");
		if (outs[i] < 0)
			return -1;
		for (int32_t k = 0; k < i; k++)
			if (outs[k] == outs[i])
				return error("--out_nodes: entries %d and %d "
					     "name the same tensor '%s'", k + 1,
					     i + 1, g->vals[outs[i]].name);
	}
	for (int32_t i = 0; i < g->noutputs; i++)
		g->vals[g->outputs[i]].flags &= (uint16_t)~VF_GRAPH_OUT;
	for (int32_t i = 0; i < p->nout; i++)
		g->vals[outs[i]].flags |= VF_GRAPH_OUT;
	g->outputs = outs;
	g->noutputs = p->nout;
	return 0;
}

/* ---- --output_type -------------------------------------------------------- */

static bool is_float(int dt)
{
	return dt == DT_FLOAT || dt == DT_FLOAT16 || dt == DT_DOUBLE ||
	       dt == DT_BFLOAT16;
}

/* Output k of g converted to dt: the old value is renamed, a new one
 * with its name takes its place. */
static void cast_output(Graph *g, int32_t k, int dt)
{
	ValId v = g->outputs[k];
	if (g->vals[v].dtype == dt)
		return;
	const char *name = g->vals[v].name;
	g->vals[v].name = graph_fresh_name(
		g, arena_printf(g->arena, "%s/before_output_type", name));
	ValId w = graph_add_value(g, name, VAL_NODE);
	/* declared, as an exporter would: widen-fp16 keeps a float16
	 * output float16 by its declared dtype */
	value_copy_type(&g->vals[w], &g->vals[v]);
	g->vals[w].dtype = dt;
	Node *n;
	if (dt == DT_UINT8) { /* round half to even, saturate */
		float one = 1;
		uint8_t zero = 0;
		ValId s = graph_add_f32(g, "output_type/scale", &one, 0, NULL);
		Shape sc = shape_of(0, NULL);
		const char *zn = graph_fresh_name(g, "output_type/zero_point");
		Tensor *t = tensor_new(g->arena, zn, DT_UINT8, &sc, &zero);
		t->folded = true;
		ValId z = graph_add_weight(g, zn, t);
		n = graph_add_node(g, arena_printf(g->arena, "%s/output_type",
						   name),
				   "QuantizeLinear", "", 3, 1);
		n->inputs[1] = s;
		n->inputs[2] = z;
	} else {
		n = graph_add_node(g, arena_printf(g->arena, "%s/output_type",
						   name),
				   "Cast", "", 1, 1);
		Attr *a = node_add_attr(g, n, "to", ATTR_INT);
		a->i = dt;
	}
	n->inputs[0] = v;
	n->outputs[0] = w;
	g->vals[v].flags &= (uint16_t)~VF_GRAPH_OUT;
	g->vals[w].flags |= VF_GRAPH_OUT;
	g->outputs[k] = w;
}

static int set_types(Graph *g, const ParsedEdits *p)
{
	int32_t *want = arena_array(g->arena, (size_t)g->noutputs + 1,
				    sizeof(int32_t));
	for (int32_t k = 0; k < g->noutputs; k++)
		want[k] = is_float(g->vals[g->outputs[k]].dtype) ? p->all_type
								  : 0;
	for (int32_t i = 0; i < p->ntypes; i++) {
		ValId v = resolve(g, &p->types[i], "--output_type");
		if (v < 0)
			return -1;
		int32_t k = 0;
		while (k < g->noutputs && g->outputs[k] != v)
			k++;
		if (k == g->noutputs)
			return error("--output_type: '%s:%d' (tensor '%s') is "
				     "not an output of the model",
				     p->types[i].name, p->types[i].index,
				     g->vals[v].name);
		if (!is_float(g->vals[v].dtype))
			return error("--output_type: output '%s' is %s; only "
				     "float outputs are converted",
				     g->vals[v].name,
				     dtype_name(g->vals[v].dtype)
					     ? dtype_name(g->vals[v].dtype)
					     : "of unknown dtype");
		want[k] = p->types[i].dtype;
	}
	for (int32_t k = 0; k < g->noutputs; k++)
		if (want[k])
			cast_output(g, k, want[k]);
	return 0;
}

/* ---- --input_fp16_nodes ---------------------------------------------------- */

static int set_fp16_inputs(Graph *g, const ParsedEdits *p)
{
	for (int32_t i = 0; i < p->nfp16; i++) {
		ValId v = -1;
		for (int32_t k = 0; k < g->ninputs && v < 0; k++)
			if (!strcmp(g->vals[g->inputs[k]].name, p->fp16[i]))
				v = g->inputs[k];
		if (v < 0)
			return error("--input_fp16_nodes: '%s' is not an input "
				     "of the model", p->fp16[i]);
		if (g->vals[v].dtype != DT_FLOAT)
			return error("--input_fp16_nodes: input '%s' is %s; "
				     "only float32 inputs can take float16",
				     p->fp16[i],
				     dtype_name(g->vals[v].dtype)
					     ? dtype_name(g->vals[v].dtype)
					     : "of unknown dtype");
	}
	for (int32_t i = 0; i < p->nfp16; i++) {
		ValId v = find_value(g, p->fp16[i]);
		ValId w = graph_add_unary(
			g, "Cast", v,
			arena_printf(g->arena, "%s/from_fp16", p->fp16[i]));
		Node *n = &g->nodes[g->nnodes - 1];
		Attr *a = node_add_attr(g, n, "to", ATTR_INT);
		a->i = DT_FLOAT;
		value_copy_type(&g->vals[w], &g->vals[v]);
		graph_replace_uses(g, v, w, g->nnodes - 1);
		g->vals[v].dtype = DT_FLOAT16;
	}
	return 0;
}

int edit_apply(Model *m, const ParsedEdits *p)
{
	Graph *g = m->graph;
	static const char *const keys[] = { "out_nodes", "output_type",
					    "input_fp16_nodes" };
	if (p->nout && set_outputs(g, p) < 0)
		return -1;
	if ((p->all_type || p->ntypes) && set_types(g, p) < 0)
		return -1;
	if (p->nfp16 && set_fp16_inputs(g, p) < 0)
		return -1;
	/* the Casts added: producers set, order fixed */
	if ((p->nfp16 || p->all_type || p->ntypes) && graph_toposort(g) < 0)
		return -1;
	for (int i = 0; i < 3; i++)
		if (p->given[i])
			model_add_option(m, keys[i], p->given[i]);
	return 0;
}
