/*
 * serializer/export.c - an IR graph as an ONNX ModelProto file, weights
 * inline or as external data (export.h).
 *
 * The message is built in an arena, pointing at the weights' bytes where
 * they are (nothing is copied), then packed straight into the temporary
 * file through a ProtobufCBuffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "om.h"
#include "onnx/onnx.pb-c.h"

#define EXTERNAL_MIN 1024 /* smaller initializers stay inline (as onnx's) */
#define PROTO_LIMIT 2147483647u

typedef struct Writer {
	Arena a;
	NameMap used;  /* every value name in the model */
	NameMap nodes; /* every node name in the model */
	PtrMap init_of; /* Tensor -> its index in inits */
	Onnx__TensorProto **inits;
	const Tensor **isrc;
	const char **iname; /* the name readers use: the initializer's, or
			     * its widening Cast's output */
	int32_t ninits, capinits;
	bool half; /* OnnxExport.fp16_weights */
	Onnx__NodeProto **casts; /* the widening Casts, for the main graph */
	int32_t ncasts, capcasts;
	const char *node; /* for messages */
} Writer;

static Onnx__GraphProto *emit_graph(Writer *w, const Graph *g,
				    const char **up, bool main);

/* ---- names -------------------------------------------------------------- */

/* base if no name of taken has it yet, else base_2, base_3, ...; now
 * taken: the one way every name in an export is made unique. */
static const char *unique(Writer *w, NameMap *taken, const char *base)
{
	const char *name = base;
	for (int n = 2; namemap_get(taken, name) >= 0; n++)
		name = arena_printf(&w->a, "%s_%d", base, n);
	namemap_put(taken, name, 1);
	return name;
}

static const char *fresh(Writer *w, const char *base)
{
	return unique(w, &w->used, base);
}

/* n's name, unique among the model's nodes (ONNX Runtime refuses two
 * nodes of one name); an unnamed node is named after its op. */
static const char *node_name(Writer *w, const Node *n)
{
	return unique(w, &w->nodes, n->name[0] ? n->name : n->op_type);
}

/* ---- tensors ------------------------------------------------------------ */

static Onnx__TensorProto *tensor_proto(Writer *w, const Tensor *t,
				       const char *name)
{
	Onnx__TensorProto *p = arena_alloc(&w->a, sizeof(*p));
	onnx__tensor_proto__init(p);
	p->name = (char *)name;
	p->has_data_type = 1;
	p->data_type = t->dtype;
	p->n_dims = (size_t)t->shape.rank;
	p->dims = arena_memdup(&w->a, t->shape.dims,
			       sizeof(int64_t) * (size_t)(t->shape.rank + 1));
	if (t->dtype == DT_STRING) {
		const Bytes *b = t->data;
		size_t n = t->nbytes / sizeof(Bytes);
		p->n_string_data = n;
		p->string_data = arena_array(&w->a, n + 1,
					     sizeof(ProtobufCBinaryData));
		for (size_t i = 0; i < n; i++)
			p->string_data[i] = (ProtobufCBinaryData){
				b[i].len, (uint8_t *)b[i].data };
		return p;
	}
	p->has_raw_data = 1;
	p->raw_data.len = t->nbytes;
	p->raw_data.data = (uint8_t *)t->data;
	return p;
}

/* A float32 weight that was float16 in the source (exactly so: it was
 * widened from it), as a float16 initializer NAME_fp16 and the Cast to
 * float32 that makes name, queued for the main graph. */
static Onnx__TensorProto *half_init(Writer *w, const Tensor *t,
				    const char *name)
{
	size_t n = t->nbytes / sizeof(float);
	const float *f = t->data;
	uint16_t *h = arena_array(&w->a, n + 1, sizeof(uint16_t));
	for (size_t i = 0; i < n; i++)
		h[i] = minifloat_from(f[i], 5, 10);
	Tensor ht = *t;
	ht.dtype = DT_FLOAT16;
	ht.data = h;
	ht.nbytes = n * sizeof(uint16_t);
	const char *hname = fresh(w, arena_printf(&w->a, "%s_fp16", name));
	Onnx__TensorProto *p = tensor_proto(w, &ht, hname);

	Onnx__NodeProto *c = arena_alloc(&w->a, sizeof(*c));
	onnx__node_proto__init(c);
	c->name = (char *)unique(w, &w->nodes,
				 arena_printf(&w->a, "%s_widen", name));
	c->op_type = "Cast";
	c->n_input = 1;
	c->input = arena_array(&w->a, 2, sizeof(char *));
	c->input[0] = (char *)hname;
	c->n_output = 1;
	c->output = arena_array(&w->a, 2, sizeof(char *));
	c->output[0] = (char *)name;
	Onnx__AttributeProto *to = arena_alloc(&w->a, sizeof(*to));
	onnx__attribute_proto__init(to);
	to->name = "to";
	to->has_type = 1;
	to->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	to->has_i = 1;
	to->i = DT_FLOAT;
	c->n_attribute = 1;
	c->attribute = arena_array(&w->a, 2, sizeof(*c->attribute));
	c->attribute[0] = to;
	int32_t k = ARENA_PUSH(&w->a, w->casts, w->ncasts, w->capcasts);
	w->casts[k] = c;
	return p;
}

/* The initializer name of weight value v: its Tensor written once. */
static const char *init_name(Writer *w, const Value *v)
{
	int32_t i = ptrmap_get(&w->init_of, v->konst);
	if (i >= 0)
		return w->iname[i];
	i = ARENA_PUSH(&w->a, w->inits, w->ninits, w->capinits);
	w->isrc = arena_grow(&w->a, w->isrc, (size_t)i, (size_t)w->capinits,
			     sizeof(*w->isrc));
	w->iname = arena_grow(&w->a, w->iname, (size_t)i,
			      (size_t)w->capinits, sizeof(*w->iname));
	w->isrc[i] = v->konst;
	w->iname[i] = fresh(w, v->name);
	if (w->half && v->konst->from_half && v->konst->dtype == DT_FLOAT)
		w->inits[i] = half_init(w, v->konst, w->iname[i]);
	else
		w->inits[i] = tensor_proto(w, v->konst, w->iname[i]);
	ptrmap_put(&w->init_of, v->konst, i);
	return w->iname[i];
}

/* ---- types -------------------------------------------------------------- */

static Onnx__TypeProto *tensor_type(Writer *w, const Value *v)
{
	Onnx__TypeProto *tp = arena_alloc(&w->a, sizeof(*tp));
	Onnx__TypeProto__Tensor *tt = arena_alloc(&w->a, sizeof(*tt));
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	tt->has_elem_type = 1;
	tt->elem_type = v->dtype;
	if (v->shape.rank < 0)
		return tp;
	Onnx__TensorShapeProto *sp = arena_alloc(&w->a, sizeof(*sp));
	onnx__tensor_shape_proto__init(sp);
	tt->shape = sp;
	sp->n_dim = (size_t)v->shape.rank;
	sp->dim = arena_array(&w->a, sp->n_dim + 1, sizeof(*sp->dim));
	for (int32_t i = 0; i < v->shape.rank; i++) {
		Onnx__TensorShapeProto__Dimension *d =
			arena_alloc(&w->a, sizeof(*d));
		onnx__tensor_shape_proto__dimension__init(d);
		if (v->shape.dims[i] >= 0) {
			d->value_case =
				ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = v->shape.dims[i];
		} else if (v->dim_params && v->dim_params[i]) {
			d->value_case =
				ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d->dim_param = (char *)v->dim_params[i];
		}
		sp->dim[i] = d;
	}
	return tp;
}

/* v's type; NULL when gearc does not know it (opaque types, no dtype). */
static Onnx__TypeProto *type_proto(Writer *w, const Value *v)
{
	if (v->dtype == DT_UNDEFINED || v->tkind == TK_OTHER)
		return NULL;
	Onnx__TypeProto *tp = tensor_type(w, v);
	if (v->tkind == TK_TENSOR)
		return tp;
	Onnx__TypeProto *outer = arena_alloc(&w->a, sizeof(*outer));
	onnx__type_proto__init(outer);
	if (v->tkind == TK_SEQUENCE) {
		Onnx__TypeProto__Sequence *s = arena_alloc(&w->a, sizeof(*s));
		onnx__type_proto__sequence__init(s);
		s->elem_type = tp;
		outer->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
		outer->sequence_type = s;
	} else {
		Onnx__TypeProto__Optional *o = arena_alloc(&w->a, sizeof(*o));
		onnx__type_proto__optional__init(o);
		o->elem_type = tp;
		outer->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
		outer->optional_type = o;
	}
	return outer;
}

static Onnx__ValueInfoProto *value_info(Writer *w, const Value *v,
					const char *name)
{
	Onnx__ValueInfoProto *vi = arena_alloc(&w->a, sizeof(*vi));
	onnx__value_info_proto__init(vi);
	vi->name = (char *)name;
	vi->type = type_proto(w, v);
	return vi;
}

/* ---- attributes and nodes ----------------------------------------------- */

static ProtobufCBinaryData binary(Bytes b)
{
	return (ProtobufCBinaryData){ b.len, (uint8_t *)b.data };
}

static int attr_proto(Writer *w, const Attr *a, const char **names,
		      Onnx__AttributeProto **out)
{
	Onnx__AttributeProto *p = arena_alloc(&w->a, sizeof(*p));
	onnx__attribute_proto__init(p);
	p->name = (char *)a->name;
	p->has_type = 1;
	p->type = (Onnx__AttributeProto__AttributeType)a->type;
	size_t n = a->n > 0 ? (size_t)a->n : 0;
	switch (a->type) {
	case ATTR_FLOAT:
		p->has_f = 1;
		p->f = a->f;
		break;
	case ATTR_INT:
		p->has_i = 1;
		p->i = a->i;
		break;
	case ATTR_STRING:
		p->has_s = 1;
		p->s = binary(a->s);
		break;
	case ATTR_TENSOR:
		p->t = tensor_proto(w, a->t, (char *)a->t->name);
		break;
	case ATTR_GRAPH:
		if (!(p->g = emit_graph(w, a->g, names, false)))
			return -1;
		break;
	case ATTR_FLOATS:
		p->n_floats = n;
		p->floats = (float *)a->floats;
		break;
	case ATTR_INTS:
		p->n_ints = n;
		p->ints = (int64_t *)a->ints;
		break;
	case ATTR_STRINGS:
		p->n_strings = n;
		p->strings = arena_array(&w->a, n + 1, sizeof(*p->strings));
		for (size_t i = 0; i < n; i++)
			p->strings[i] = binary(a->strings[i]);
		break;
	case ATTR_TENSORS:
		p->n_tensors = n;
		p->tensors = arena_array(&w->a, n + 1, sizeof(*p->tensors));
		for (size_t i = 0; i < n; i++)
			p->tensors[i] = tensor_proto(w, a->tensors[i],
						     a->tensors[i]->name);
		break;
	case ATTR_GRAPHS:
		p->n_graphs = n;
		p->graphs = arena_array(&w->a, n + 1, sizeof(*p->graphs));
		for (size_t i = 0; i < n; i++)
			if (!(p->graphs[i] = emit_graph(w, a->graphs[i], names,
							false)))
				return -1;
		break;
	default:
		return error("node '%s': attribute '%s' has type %d, which "
			     "gearc cannot write",
			     w->node, a->name, a->type);
	}
	*out = p;
	return 0;
}

static char **name_list(Writer *w, const ValId *ids, int32_t n,
			const char **names)
{
	char **s = arena_array(&w->a, (size_t)n + 1, sizeof(char *));
	for (int32_t k = 0; k < n; k++)
		s[k] = (char *)(ids[k] >= 0 ? names[ids[k]] : "");
	return s;
}

static Onnx__NodeProto *node_proto(Writer *w, const Node *n,
				   const char **names)
{
	Onnx__NodeProto *p = arena_alloc(&w->a, sizeof(*p));
	onnx__node_proto__init(p);
	p->name = (char *)node_name(w, n);
	p->op_type = (char *)n->op_type;
	p->domain = n->domain[0] ? (char *)n->domain : NULL;
	p->n_input = (size_t)n->ninputs;
	p->input = name_list(w, n->inputs, n->ninputs, names);
	p->n_output = (size_t)n->noutputs;
	p->output = name_list(w, n->outputs, n->noutputs, names);
	p->n_attribute = (size_t)n->nattrs;
	p->attribute = arena_array(&w->a, p->n_attribute + 1,
				   sizeof(*p->attribute));
	for (int32_t k = 0; k < n->nattrs; k++) {
		w->node = n->name;
		if (attr_proto(w, &n->attrs[k], names, &p->attribute[k]) < 0)
			return NULL;
	}
	return p;
}

/* ---- graphs ------------------------------------------------------------- */

/* Names for g's values: the main graph's inputs and outputs first. */
static const char **value_names(Writer *w, const Graph *g, const char **up,
				bool main)
{
	const char **names = arena_array(&w->a, (size_t)g->nvals + 1,
					 sizeof(char *));
	if (main) {
		for (int32_t k = 0; k < g->ninputs; k++)
			names[g->inputs[k]] = fresh(w, g->vals[g->inputs[k]].name);
		for (int32_t k = 0; k < g->noutputs; k++)
			if (!names[g->outputs[k]])
				names[g->outputs[k]] =
					fresh(w, g->vals[g->outputs[k]].name);
	}
	for (ValId v = 0; v < g->nvals; v++) {
		const Value *x = &g->vals[v];
		if (names[v])
			continue;
		if (x->kind == VAL_OUTER)
			names[v] = up[x->outer];
		else if (x->kind == VAL_WEIGHT && x->konst)
			names[v] = init_name(w, x);
		else
			names[v] = fresh(w, x->name);
	}
	return names;
}

static Onnx__ValueInfoProto **io_list(Writer *w, const Graph *g,
				      const ValId *ids, int32_t n,
				      const char **names)
{
	Onnx__ValueInfoProto **l = arena_array(&w->a, (size_t)n + 1,
					       sizeof(*l));
	for (int32_t k = 0; k < n; k++)
		l[k] = value_info(w, &g->vals[ids[k]], names[ids[k]]);
	return l;
}

static Onnx__GraphProto *emit_graph(Writer *w, const Graph *g,
				    const char **up, bool main)
{
	Onnx__GraphProto *p = arena_alloc(&w->a, sizeof(*p));
	onnx__graph_proto__init(p);
	p->name = (char *)g->name;
	const char **names = value_names(w, g, up, main);
	p->n_node = (size_t)g->nnodes;
	p->node = arena_array(&w->a, p->n_node + 1, sizeof(*p->node));
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!(p->node[i] = node_proto(w, &g->nodes[i], names)))
			return NULL;
	p->n_input = (size_t)g->ninputs;
	p->input = io_list(w, g, g->inputs, g->ninputs, names);
	p->n_output = (size_t)g->noutputs;
	p->output = io_list(w, g, g->outputs, g->noutputs, names);
	p->value_info = arena_array(&w->a, (size_t)g->nvals + 1,
				    sizeof(*p->value_info));
	bool *out = arena_array(&w->a, (size_t)g->nvals + 1, sizeof(bool));
	for (int32_t k = 0; k < g->noutputs; k++)
		out[g->outputs[k]] = true;
	for (ValId v = 0; v < g->nvals; v++) {
		const Value *x = &g->vals[v];
		if (x->kind == VAL_NODE && !out[v] && x->producer >= 0 &&
		    type_proto(w, x))
			p->value_info[p->n_value_info++] =
				value_info(w, x, names[v]);
	}
	return p;
}

/* ---- the model ---------------------------------------------------------- */

static Onnx__StringStringEntryProto *entry(Writer *w, const char *k,
					   const char *v)
{
	Onnx__StringStringEntryProto *e = arena_alloc(&w->a, sizeof(*e));
	onnx__string_string_entry_proto__init(e);
	e->key = (char *)k;
	e->value = (char *)v;
	return e;
}

static Onnx__ModelProto *model_proto(Writer *w, const Model *m,
				     Onnx__GraphProto *gp, const OnnxExport *x)
{
	Onnx__ModelProto *p = arena_alloc(&w->a, sizeof(*p));
	onnx__model_proto__init(p);
	p->has_ir_version = 1;
	p->ir_version = m->ir_version;
	p->opset_import = arena_array(&w->a, (size_t)m->nopsets + 1,
				      sizeof(*p->opset_import));
	for (int32_t k = 0; k < m->nopsets; k++) {
		if (!strcmp(m->opsets[k].domain, GEARC_DOMAIN))
			continue;
		Onnx__OperatorSetIdProto *o = arena_alloc(&w->a, sizeof(*o));
		onnx__operator_set_id_proto__init(o);
		o->domain = (char *)m->opsets[k].domain;
		o->has_version = 1;
		o->version = m->opsets[k].version;
		p->opset_import[p->n_opset_import++] = o;
	}
	p->producer_name = "gearc";
	p->producer_version = GEARC_VERSION;
	p->domain = m->domain && *m->domain ? (char *)m->domain : NULL;
	p->has_model_version = m->model_version != 0;
	p->model_version = m->model_version;
	p->doc_string = (char *)x->doc;
	p->n_metadata_props = (size_t)x->nmeta;
	p->metadata_props = arena_array(&w->a, (size_t)x->nmeta + 1,
					sizeof(*p->metadata_props));
	for (int32_t k = 0; k < x->nmeta; k++)
		p->metadata_props[k] = entry(w, x->meta[k].key, x->meta[k].val);
	gp->n_initializer = (size_t)w->ninits;
	gp->initializer = w->inits;
	if (m->ir_version < 4) { /* initializers must be inputs too */
		Onnx__ValueInfoProto **in = arena_array(
			&w->a, gp->n_input + (size_t)w->ninits + 1, sizeof(*in));
		memcpy(in, gp->input, gp->n_input * sizeof(*in));
		for (int32_t k = 0; k < w->ninits; k++) {
			Value v = { .dtype = w->inits[k]->data_type,
				    .shape = w->isrc[k]->shape };
			in[gp->n_input++] = value_info(w, &v,
						       w->inits[k]->name);
		}
		gp->input = in;
	}
	p->graph = gp;
	return p;
}

/* Moves the large initializers out to location; returns the data file's
 * size. */
static uint64_t make_external(Writer *w, const char *location)
{
	uint64_t off = 0;
	for (int32_t k = 0; k < w->ninits; k++) {
		Onnx__TensorProto *t = w->inits[k];
		if (!t->has_raw_data || t->raw_data.len < EXTERNAL_MIN)
			continue;
		off = (off + 63) & ~(uint64_t)63;
		t->has_raw_data = 0;
		t->has_data_location = 1;
		t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
		t->n_external_data = 3;
		t->external_data = arena_array(&w->a, 3, sizeof(void *));
		t->external_data[0] = entry(w, "location", location);
		t->external_data[1] = entry(
			w, "offset", arena_printf(&w->a, "%llu",
						  (unsigned long long)off));
		t->external_data[2] = entry(
			w, "length",
			arena_printf(&w->a, "%zu", t->raw_data.len));
		off += t->raw_data.len;
	}
	return off;
}

/* ---- files -------------------------------------------------------------- */

typedef struct FdBuf {
	ProtobufCBuffer base;
	int fd, err;
	uint8_t *buf;
	size_t n;
	uint64_t pos;
} FdBuf;

#define FDBUF_SIZE (1 << 20)

static void write_all(FdBuf *b, const uint8_t *p, size_t n)
{
	while (n && !b->err) {
		ssize_t k = write(b->fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			b->err = k < 0 ? errno : EIO;
			return;
		}
		p += k;
		n -= (size_t)k;
	}
}

static void fdbuf_flush(FdBuf *b)
{
	write_all(b, b->buf, b->n);
	b->n = 0;
}

static void fdbuf_append(ProtobufCBuffer *base, size_t len,
			 const uint8_t *data)
{
	FdBuf *b = (FdBuf *)base;
	if (!len) /* protobuf-c appends empty bytes fields as (0, NULL) */
		return;
	b->pos += len;
	if (b->n + len > FDBUF_SIZE)
		fdbuf_flush(b);
	if (len >= FDBUF_SIZE) {
		write_all(b, data, len);
		return;
	}
	memcpy(b->buf + b->n, data, len);
	b->n += len;
}

static void fdbuf_pad_to(FdBuf *b, uint64_t off)
{
	static const uint8_t zeros[64];
	while (b->pos < off) {
		uint64_t n = off - b->pos;
		fdbuf_append(&b->base, n < 64 ? (size_t)n : 64, zeros);
	}
}

/* Writes the temporary file of path: the model, or (data) the external
 * data; 0 or an errno. */
static int write_temp(int fd, Writer *w, const Onnx__ModelProto *mp,
		      bool data)
{
	FdBuf b = { .base.append = fdbuf_append, .fd = fd,
		    .buf = xmalloc(FDBUF_SIZE) };
	if (!data) {
		protobuf_c_message_pack_to_buffer(&mp->base, &b.base);
	} else {
		for (int32_t k = 0; k < w->ninits; k++) {
			const Onnx__TensorProto *t = w->inits[k];
			if (!t->has_data_location)
				continue;
			fdbuf_pad_to(&b, strtoull(t->external_data[1]->value,
						  NULL, 10));
			fdbuf_append(&b.base, t->raw_data.len,
				     t->raw_data.data);
		}
	}
	fdbuf_flush(&b);
	free(b.buf);
	if (!b.err && fsync(fd) < 0)
		b.err = errno;
	return b.err;
}

/* A temporary file given up after another's failure (whose error
 * stands). */
static void discard(int fd, char *tmp)
{
	close(fd);
	unlink(tmp);
	free(tmp);
}

/* Both files written, then renamed: the data first, so the model never
 * names a file that is not there. */
static int write_files(Writer *w, const Onnx__ModelProto *mp,
		       const char *path, const char *data_path)
{
	char *tmp = NULL, *dtmp = NULL;
	int dfd = -1, fd;
	if (data_path &&
	    (dfd = om_temp_open("--output", data_path, &dtmp)) < 0)
		return -1;
	if ((fd = om_temp_open("--output", path, &tmp)) < 0) {
		if (dfd >= 0)
			discard(dfd, dtmp);
		return -1;
	}
	if (dfd >= 0) {
		int de = write_temp(dfd, w, mp, true);
		if (om_temp_commit(dfd, dtmp, "--output", data_path, de)) {
			discard(fd, tmp);
			return -1;
		}
	}
	return om_temp_commit(fd, tmp, "--output", path,
			      write_temp(fd, w, mp, false));
}

int onnx_write(const Model *m, const Graph *g, OnnxExport *x,
	       const char *path)
{
	Writer w = { .half = x->fp16_weights };
	arena_init(&w.a);
	namemap_init(&w.used);
	namemap_init(&w.nodes);
	int rc = -1;
	Onnx__GraphProto *gp = emit_graph(&w, g, NULL, true);
	if (!gp)
		goto out;
	if (w.ncasts) { /* the widening Casts first: every graph reads them */
		Onnx__NodeProto **l = arena_array(
			&w.a, gp->n_node + (size_t)w.ncasts + 1, sizeof(*l));
		memcpy(l, w.casts, (size_t)w.ncasts * sizeof(*l));
		memcpy(l + w.ncasts, gp->node, gp->n_node * sizeof(*l));
		gp->node = l;
		gp->n_node += (size_t)w.ncasts;
	}
	Onnx__ModelProto *mp = model_proto(&w, m, gp, x);
	char *data_path = NULL;
	bool ext = x->external ||
		   protobuf_c_message_get_packed_size(&mp->base) > PROTO_LIMIT;
	if (ext) {
		const char *slash = strrchr(path, '/');
		const char *location = arena_printf(
			&w.a, "%s.data", slash ? slash + 1 : path);
		make_external(&w, location);
		data_path = arena_printf(&w.a, "%s.data", path);
		if (protobuf_c_message_get_packed_size(&mp->base) >
		    PROTO_LIMIT) {
			error("--output '%s': the model is over 2 GB even "
			      "with its weights as external data",
			      path);
			goto out;
		}
	}
	rc = write_files(&w, mp, path, data_path);
	x->wrote_external = ext;
	x->nnodes = g->nnodes + w.ncasts;
	x->ninitializers = w.ninits;
out:
	ptrmap_release(&w.init_of);
	namemap_release(&w.used);
	namemap_release(&w.nodes);
	arena_release(&w.a);
	return rc;
}
