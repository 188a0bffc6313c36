/*
 * compiler/onnx.c - ONNX import: ModelProto bytes -> Model (see onnx.h).
 *
 * Steps:
 *  1. wire_check() walks the protobuf wire format iteratively and rejects
 *     messages nested deeper than MAX_WIRE_DEPTH: protobuf-c unpacks
 *     nested messages by recursion, so a small hostile file could
 *     otherwise overflow the C stack.
 *  2. protobuf-c unpacks the model into the Model's arena (pb_alloc), so
 *     names, typed data arrays and inline raw_data stay alive as long as
 *     the Model and tensors can point into them without a second copy.
 *  3. Each graph is built in passes (build_graph): initializers, inputs,
 *     the output names of every node (so nodes may come in any order and
 *     subgraphs may refer to any of them), then node inputs and
 *     attributes (subgraphs recursively, at most MAX_GRAPH_DEPTH deep),
 *     value_info hints and graph outputs.  A name a subgraph uses but does
 *     not define resolves to a VAL_OUTER value, created level by level up
 *     to the graph that defines it (resolve()).
 *  4. graph_toposort() and graph_verify() over the whole model; they find
 *     cycles and names produced twice.
 *
 * Tensor data (decode_tensor) is checked against its dims with overflow-
 * checked arithmetic before anything is allocated; external data files are
 * mapped once each and pointed into.
 */
#include "onnx.h"
#include "ops/opimpl.h"

#include <stdio.h>
#include <string.h>

#include "onnx/onnx.pb-c.h"
#include "pbwire.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tensor data is kept little-endian: big-endian hosts are not supported"
#endif

enum {
	MAX_WIRE_DEPTH = 256, /* nested protobuf messages */
};

typedef struct Importer {
	Model *m;
	Arena *a;
	const char *dir; /* the model file's directory; "" for the cwd */
	NameMap files;	 /* external data path -> index in m->maps */
	bool located;	 /* the error message already names its subgraph */
} Importer;

/* One graph being built: its names, and the enclosing graph's scope. */
typedef struct NameScope {
	Graph *g;
	NameMap names; /* name -> ValId in g; keys are Value.name */
	struct NameScope *parent;
	int depth; /* 0 for the main graph */
} NameScope;

/* A decoded TypeProto. */
typedef struct TypeInfo {
	int tkind;
	int dtype;
	Shape shape;
	const char **dim_params;
} TypeInfo;

static const char *str_or_empty(const char *s) { return s ? s : ""; }

/* ---- the wire format ---------------------------------------------------- */

/* The wire-format checks before unpacking (pbwire.h): nesting at most
 * MAX_WIRE_DEPTH deep, no NUL byte in a string field (a name would be
 * cut there).  0, or -1 with the error set. */
static int wire_check(const uint8_t *p, size_t n,
		      const ProtobufCMessageDescriptor *desc, const char *what)
{
	PbScan s = { .max_depth = MAX_WIRE_DEPTH };
	switch (pb_scan(p, n, desc, &s)) {
	case PB_OK:
		return 0;
	case PB_DEEP:
		return error("not a valid %s (protobuf messages are nested "
			     "more than %d levels deep)", what,
			     MAX_WIRE_DEPTH);
	case PB_NUL:
		return error("field %s.%s holds a NUL byte: names and "
			     "strings cannot contain one", s.message, s.field);
	default:
		return error("not a valid %s (protobuf parse failed)", what);
	}
}

static void *pb_alloc(void *arena, size_t n) { return arena_alloc(arena, n); }

static void pb_free(void *arena, void *p)
{
	(void)arena; /* freed with the arena */
	(void)p;
}

/* ---- types and shapes --------------------------------------------------- */

static int check_dtype(int dt, const char *name)
{
	if (!dtype_valid(dt))
		return error("tensor '%s' has unknown element type %d "
			     "(expected 1..16)",
			     name, dt);
	return 0;
}

static int decode_shape(Importer *im, const Onnx__TensorShapeProto *sp,
			const char *name, TypeInfo *ti)
{
	if (sp->n_dim > MAX_RANK)
		return error("tensor '%s' has rank %zu, more than the "
			     "maximum of %d",
			     name, sp->n_dim, MAX_RANK);
	ti->shape.rank = (int32_t)sp->n_dim;
	for (size_t k = 0; k < sp->n_dim; k++) {
		const Onnx__TensorShapeProto__Dimension *d = sp->dim[k];
		ti->shape.dims[k] = DIM_UNKNOWN;
		switch (d->value_case) {
		case ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE:
			if (d->dim_value < 0)
				return error("tensor '%s': dim %zu is %lld, "
					     "expected >= 0",
					     name, k, (long long)d->dim_value);
			ti->shape.dims[k] = d->dim_value;
			break;
		case ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM:
			if (!d->dim_param || !*d->dim_param)
				break;
			if (!ti->dim_params)
				ti->dim_params = arena_array(
					im->a, sp->n_dim, sizeof(char *));
			ti->dim_params[k] = d->dim_param;
			break;
		default: /* neither: unknown */
			break;
		}
	}
	return 0;
}

static int decode_tensor_type(Importer *im, const Onnx__TypeProto__Tensor *tt,
			      const char *name, TypeInfo *ti)
{
	if (!tt)
		return 0;
	/* An absent or 0 elem_type leaves the dtype to inference. */
	if (tt->has_elem_type && tt->elem_type != DT_UNDEFINED &&
	    check_dtype(tt->elem_type, name) < 0)
		return -1;
	ti->dtype = tt->has_elem_type ? tt->elem_type : DT_UNDEFINED;
	return tt->shape ? decode_shape(im, tt->shape, name, ti) : 0;
}

/* The element type of a sequence or optional: a tensor type, or NULL if it
 * is anything else (a nested sequence, a map ...). */
static const Onnx__TypeProto__Tensor *elem_tensor(const Onnx__TypeProto *tp)
{
	if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return NULL;
	return tp->tensor_type;
}

static int decode_type(Importer *im, const Onnx__TypeProto *tp,
		       const char *name, TypeInfo *ti)
{
	const Onnx__TypeProto__Tensor *tt = NULL;
	memset(ti, 0, sizeof(*ti));
	ti->tkind = TK_TENSOR;
	ti->shape = shape_unknown();
	if (!tp)
		return 0;
	switch (tp->value_case) {
	case ONNX__TYPE_PROTO__VALUE__NOT_SET:
		return 0; /* says nothing */
	case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
		tt = tp->tensor_type;
		break;
	case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
		ti->tkind = TK_SEQUENCE;
		if (tp->sequence_type)
			tt = elem_tensor(tp->sequence_type->elem_type);
		break;
	case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
		ti->tkind = TK_OPTIONAL;
		if (tp->optional_type)
			tt = elem_tensor(tp->optional_type->elem_type);
		break;
	default:
		ti->tkind = TK_OTHER;
		return 0;
	}
	if (!tt && ti->tkind != TK_TENSOR) {
		ti->tkind = TK_OTHER; /* a sequence of maps, ... */
		return 0;
	}
	return decode_tensor_type(im, tt, name, ti);
}

static void apply_type(Value *v, const TypeInfo *ti)
{
	v->tkind = (uint8_t)ti->tkind;
	v->dtype = ti->dtype;
	v->shape = ti->shape;
	v->dim_params = ti->dim_params;
}

/* ---- tensor data -------------------------------------------------------- */

static const char *tensor_label(const Onnx__TensorProto *tp)
{
	return tp->name && *tp->name ? tp->name : "(unnamed)";
}

/* Data from the typed fields.  Fields of the element's width are pointed
 * into (the unpacked message lives in the Model's arena); narrower types
 * stored in int32_data and uint32 in uint64_data are converted. */
static int typed_data(Importer *im, Tensor *t, const Onnx__TensorProto *tp,
		      int64_t numel)
{
	const char *field;
	size_t count, width = dtype_size(t->dtype);
	int64_t need = numel;
	const void *src;

	switch (t->dtype) {
	case DT_FLOAT:
	case DT_COMPLEX64:
		field = "float_data";
		count = tp->n_float_data;
		src = tp->float_data;
		break;
	case DT_DOUBLE:
	case DT_COMPLEX128:
		field = "double_data";
		count = tp->n_double_data;
		src = tp->double_data;
		break;
	case DT_INT64:
		field = "int64_data";
		count = tp->n_int64_data;
		src = tp->int64_data;
		break;
	case DT_UINT32:
	case DT_UINT64:
		field = "uint64_data";
		count = tp->n_uint64_data;
		src = tp->uint64_data;
		break;
	default: /* int32, int16, int8, uint16, uint8, bool, (b)float16 */
		field = "int32_data";
		count = tp->n_int32_data;
		src = tp->int32_data;
		break;
	}
	if ((t->dtype == DT_COMPLEX64 || t->dtype == DT_COMPLEX128) &&
	    !mul_nonneg_i64(numel, 2, &need))
		return error("tensor '%s': element count overflows",
			     tensor_label(tp));
	if ((uint64_t)need != count) {
		char buf[128];
		shape_str(&t->shape, buf, sizeof(buf));
		return error("tensor '%s' has %zu values in %s, but its dims "
			     "%s of %s need %lld",
			     tensor_label(tp), count, field, buf,
			     dtype_name(t->dtype), (long long)need);
	}
	if (t->dtype == DT_UINT32) {
		uint32_t *d = arena_array(im->a, count, sizeof(*d));
		for (size_t i = 0; i < count; i++)
			d[i] = (uint32_t)tp->uint64_data[i];
		t->data = d;
	} else if (width == 1 || width == 2) {
		uint8_t *d = arena_array(im->a, count, width);
		for (size_t i = 0; i < count; i++) {
			uint32_t u = (uint32_t)tp->int32_data[i];
			d[i * width] = (uint8_t)u;
			if (width == 2)
				d[i * width + 1] = (uint8_t)(u >> 8);
		}
		t->data = d;
	} else {
		t->data = count ? src : arena_alloc(im->a, 0);
	}
	return 0;
}

/* A bool is a byte of 0 or 1 to every kernel: a tensor holding other
 * bytes (any but 0 is true) gets a copy of 0s and 1s. */
static void bools_0_1(Importer *im, Tensor *t)
{
	const uint8_t *b = t->data;
	uint8_t any = 0;
	for (size_t i = 0; i < t->nbytes; i++)
		any |= b[i];
	if (any <= 1)
		return;
	uint8_t *c = arena_alloc(im->a, t->nbytes);
	for (size_t i = 0; i < t->nbytes; i++)
		c[i] = b[i] != 0;
	t->data = c;
}

static int string_data(Importer *im, Tensor *t, const Onnx__TensorProto *tp,
		       int64_t numel)
{
	if (tp->has_raw_data ||
	    (tp->has_data_location &&
	     tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL))
		return error("string tensor '%s' must keep its data in "
			     "string_data (raw_data and external data are "
			     "not supported for strings)",
			     tensor_label(tp));
	if ((uint64_t)numel != tp->n_string_data) {
		char buf[128];
		shape_str(&t->shape, buf, sizeof(buf));
		return error("tensor '%s' has %zu values in string_data, but "
			     "its dims %s need %lld",
			     tensor_label(tp), tp->n_string_data, buf,
			     (long long)numel);
	}
	Bytes *b = arena_array(im->a, tp->n_string_data, sizeof(Bytes));
	for (size_t i = 0; i < tp->n_string_data; i++) {
		b[i].len = tp->string_data[i].len;
		b[i].data = tp->string_data[i].data
				    ? tp->string_data[i].data
				    : (const uint8_t *)"";
	}
	t->data = b;
	t->nbytes = tp->n_string_data * sizeof(Bytes);
	return 0;
}

/* True if the relative path p has a ".." component. */
static bool has_dotdot(const char *p)
{
	while (*p) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return true;
		p += n;
		p += strspn(p, "/");
	}
	return false;
}

/* Maps the external data file at loc (relative to the model's directory,
 * which it may not leave, not even by a symbolic link) once per model;
 * returns its index in m->maps or -1. */
static int32_t map_external(Importer *im, const char *loc)
{
	Model *m = im->m;
	int32_t k = namemap_get(&im->files, loc);
	if (k >= 0)
		return k;
	FileMap f;
	if (filemap_open_below(&f, im->dir, loc, "external data file") < 0)
		return -1;
	k = ARENA_PUSH(im->a, m->maps, m->nmaps, m->capmaps);
	m->maps[k] = f;
	const char *name = arena_strdup(im->a, loc);
	namemap_put(&im->files, name, k);
	int32_t e = ARENA_PUSH(im->a, m->external, m->nexternal,
			       m->capexternal);
	m->external[e] = name;
	return k;
}

static int parse_ext_int(const Onnx__StringStringEntryProto *kv,
			 const char *name, int64_t *out)
{
	const char *v = str_or_empty(kv->value);
	if (!parse_i64(v, strlen(v), out) || *out < 0)
		return error("tensor '%s': external data %s '%s' is not a "
			     "non-negative integer",
			     name, kv->key, v);
	return 0;
}

static int external_data(Importer *im, Tensor *t, const Onnx__TensorProto *tp,
			 int64_t nbytes)
{
	const char *name = tensor_label(tp), *loc = NULL;
	int64_t off = 0, len = -1;
	for (size_t i = 0; i < tp->n_external_data; i++) {
		const Onnx__StringStringEntryProto *kv = tp->external_data[i];
		const char *key = str_or_empty(kv->key);
		if (!strcmp(key, "location"))
			loc = str_or_empty(kv->value);
		else if (!strcmp(key, "offset") &&
			 parse_ext_int(kv, name, &off) < 0)
			return -1;
		else if (!strcmp(key, "length") &&
			 parse_ext_int(kv, name, &len) < 0)
			return -1;
	}
	if (!loc || !*loc)
		return error("tensor '%s': external data has no location",
			     name);
	if (loc[0] == '/')
		return error("tensor '%s': external data location '%s' is an "
			     "absolute path; expected a path relative to the "
			     "model's directory",
			     name, loc);
	if (has_dotdot(loc))
		return error("tensor '%s': external data location '%s' "
			     "escapes the model's directory ('..')",
			     name, loc);
	int32_t k = map_external(im, loc);
	if (k < 0)
		return error_prefix("tensor '%s'", name);
	const FileMap *f = &im->m->maps[k];
	if ((uint64_t)off > f->size)
		return error("tensor '%s': external data offset %lld is past "
			     "the end of '%s' (%zu bytes)",
			     name, (long long)off, loc, f->size);
	uint64_t avail = f->size - (uint64_t)off;
	if (len < 0)
		len = (int64_t)avail;
	if ((uint64_t)len > avail)
		return error("tensor '%s': external data at offset %lld, "
			     "length %lld runs past the end of '%s' (%zu "
			     "bytes)",
			     name, (long long)off, (long long)len, loc,
			     f->size);
	if (len != nbytes) {
		char buf[128];
		shape_str(&t->shape, buf, sizeof(buf));
		return error("tensor '%s' has %lld bytes of external data, "
			     "but its dims %s of %s need %lld",
			     name, (long long)len, buf, dtype_name(t->dtype),
			     (long long)nbytes);
	}
	const uint8_t *p = f->data + off;
	size_t align = dtype_size(t->dtype) < 8 ? dtype_size(t->dtype) : 8;
	/* Elements are read in place: data at an offset that is not a
	 * multiple of their alignment is the one case we copy. */
	if ((uintptr_t)p % align)
		p = arena_memdup(im->a, p, (size_t)len);
	t->data = p;
	return 0;
}

static int decode_dims(const Onnx__TensorProto *tp, Tensor *t, int64_t *numel)
{
	const char *name = tensor_label(tp);
	if (tp->n_dims > MAX_RANK)
		return error("tensor '%s' has rank %zu, more than the maximum "
			     "of %d",
			     name, tp->n_dims, MAX_RANK);
	t->shape.rank = (int32_t)tp->n_dims;
	for (size_t k = 0; k < tp->n_dims; k++) {
		if (tp->dims[k] < 0)
			return error("tensor '%s': dim %zu is %lld, expected "
				     ">= 0",
				     name, k, (long long)tp->dims[k]);
		t->shape.dims[k] = tp->dims[k];
	}
	*numel = 1; /* every dim set first: the message shows them all */
	for (size_t k = 0; k < tp->n_dims; k++) {
		if (!mul_nonneg_i64(*numel, tp->dims[k], numel)) {
			char buf[128];
			shape_str(&t->shape, buf, sizeof(buf));
			return error("tensor '%s': dims %s overflow", name,
				     buf);
		}
	}
	return 0;
}

/* A TensorProto (initializer or attribute value) as a Tensor, its data
 * checked against its dims.  NULL with an error set. */
static const Tensor *decode_tensor(Importer *im, const Onnx__TensorProto *tp)
{
	const char *name = tensor_label(tp);
	int dt = tp->has_data_type ? tp->data_type : DT_UNDEFINED;
	int64_t numel, nbytes;
	Tensor *t = arena_alloc(im->a, sizeof(*t));
	int rc;

	if (check_dtype(dt, name) < 0 || decode_dims(tp, t, &numel) < 0)
		return NULL;
	t->name = tp->name;
	t->dtype = dt;
	if (tp->segment)
		return error("tensor '%s' is segmented, which is not "
			     "supported",
			     name),
		       NULL;
	if (dt == DT_STRING)
		return string_data(im, t, tp, numel) < 0 ? NULL : t;
	if (!mul_nonneg_i64(numel, (int64_t)dtype_size(dt), &nbytes)) {
		char buf[128];
		shape_str(&t->shape, buf, sizeof(buf));
		return error("tensor '%s': the byte size of dims %s of %s "
			     "overflows",
			     name, buf, dtype_name(dt)),
		       NULL;
	}
	t->nbytes = (size_t)nbytes;
	if (tp->has_data_location &&
	    tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT &&
	    tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
		return error("tensor '%s' has unknown data_location %d", name,
			     (int)tp->data_location),
		       NULL;
	if (tp->has_data_location &&
	    tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
		rc = external_data(im, t, tp, nbytes);
	} else if (tp->has_raw_data) {
		if ((uint64_t)nbytes != tp->raw_data.len) {
			char buf[128];
			shape_str(&t->shape, buf, sizeof(buf));
			return error("tensor '%s' has %zu bytes of raw_data, "
				     "but its dims %s of %s need %lld",
				     name, tp->raw_data.len, buf,
				     dtype_name(dt), (long long)nbytes),
			       NULL;
		}
		/* protobuf-c copied the bytes into the arena (16-aligned). */
		t->data = tp->raw_data.len ? tp->raw_data.data
					   : arena_alloc(im->a, 0);
		rc = 0;
	} else {
		rc = typed_data(im, t, tp, numel);
	}
	if (rc == 0 && dt == DT_BOOL)
		bools_0_1(im, t);
	return rc < 0 ? NULL : t;
}

/* ---- graphs ------------------------------------------------------------- */

static int build_graph(Importer *im, NameScope *s, const Onnx__GraphProto *gp);

/* The value named name as seen from s: defined in s's graph, or an outer
 * reference to it, with a VAL_OUTER value added in each graph between the
 * one defining it and s.  -1 if no enclosing graph defines it.  Recursion
 * is bounded by MAX_GRAPH_DEPTH. */
static ValId resolve(NameScope *s, const char *name)
{
	ValId v = namemap_get(&s->names, name);
	if (v >= 0 || !s->parent)
		return v;
	ValId pv = resolve(s->parent, name);
	if (pv < 0)
		return -1;
	const Value *p = &s->parent->g->vals[pv];
	v = graph_add_value(s->g, name, VAL_OUTER);
	Value *o = &s->g->vals[v];
	o->outer = pv;
	o->tkind = p->tkind;
	o->dtype = p->dtype;
	o->shape = p->shape;
	o->dim_params = p->dim_params;
	o->konst = p->konst;
	namemap_put(&s->names, o->name, v);
	return v;
}

static ValId define(NameScope *s, const char *name, ValKind kind)
{
	ValId v = graph_add_value(s->g, name, kind);
	namemap_put(&s->names, s->g->vals[v].name, v);
	return v;
}

static int add_initializers(Importer *im, NameScope *s, const Onnx__GraphProto *gp)
{
	if (gp->n_sparse_initializer) {
		const Onnx__SparseTensorProto *sp = gp->sparse_initializer[0];
		return error("sparse initializer '%s' is not supported",
			     sp->values ? tensor_label(sp->values)
					: "(unnamed)");
	}
	for (size_t i = 0; i < gp->n_initializer; i++) {
		const Onnx__TensorProto *tp = gp->initializer[i];
		const char *name = str_or_empty(tp->name);
		if (!*name)
			return error("initializer %zu has no name", i);
		if (namemap_get(&s->names, name) >= 0)
			return error("two initializers are named '%s'", name);
		const Tensor *t = decode_tensor(im, tp);
		if (!t)
			return -1;
		ValId id = define(s, name, VAL_WEIGHT);
		Value *v = &s->g->vals[id];
		v->dtype = t->dtype;
		v->shape = t->shape;
		v->konst = t;
	}
	return 0;
}

static int add_inputs(Importer *im, NameScope *s, const Onnx__GraphProto *gp)
{
	Graph *g = s->g;
	g->inputs = arena_array(im->a, gp->n_input, sizeof(ValId));
	for (size_t i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		const char *name = str_or_empty(vi->name);
		TypeInfo ti;
		if (!*name)
			return error("graph input %zu has no name", i);
		if (decode_type(im, vi->type, name, &ti) < 0)
			return -1;
		ValId v = namemap_get(&s->names, name);
		if (v >= 0 && g->vals[v].kind == VAL_INPUT)
			return error("graph input '%s' is listed twice", name);
		if (v >= 0) { /* an initializer: a weight, not an input */
			const Value *w = &g->vals[v];
			if (ti.tkind == TK_TENSOR && ti.dtype != DT_UNDEFINED &&
			    ti.dtype != w->dtype)
				return error("graph input '%s' is declared %s, "
					     "but its initializer is %s",
					     name, dtype_name(ti.dtype),
					     dtype_name(w->dtype));
			continue;
		}
		v = define(s, name, VAL_INPUT);
		apply_type(&g->vals[v], &ti);
		g->inputs[g->ninputs++] = v;
	}
	return 0;
}

/* "'conv1' (Conv)", or "#3 (Conv)" for an unnamed node; for messages. */
static const char *node_desc(Importer *im, const Onnx__NodeProto *np, size_t i)
{
	const char *op = str_or_empty(np->op_type);
	if (np->name && *np->name)
		return arena_printf(im->a, "'%s' (%s)", np->name, op);
	return arena_printf(im->a, "#%zu (%s)", i, op);
}

/* Adds every node with its outputs, so that inputs and subgraphs can
 * refer to any node output whatever the order of the nodes.  A name
 * produced twice gets one value with two producers, which
 * graph_toposort() reports. */
static int add_nodes(Importer *im, NameScope *s, const Onnx__GraphProto *gp)
{
	Graph *g = s->g;
	if (gp->n_node > INT32_MAX)
		return error("too many nodes (%zu)", gp->n_node);
	for (size_t i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *np = gp->node[i];
		if (!np->op_type || !*np->op_type)
			return error("node %s has no op_type",
				     node_desc(im, np, i));
		if (np->n_input > INT32_MAX || np->n_output > INT32_MAX)
			return error("node %s has too many inputs or outputs",
				     node_desc(im, np, i));
		if (domain_is_default(np->domain) && model_opset(im->m) <= 0)
			return error("node %s is in the default domain, but "
				     "the model imports no ai.onnx opset",
				     node_desc(im, np, i));
		Node *n = graph_add_node(g, np->name, np->op_type, np->domain,
					 (int32_t)np->n_input,
					 (int32_t)np->n_output);
		for (size_t k = 0; k < np->n_output; k++) {
			const char *name = np->output[k];
			if (!*name)
				continue;
			ValId v = namemap_get(&s->names, name);
			n->outputs[k] = v >= 0 ? v : define(s, name, VAL_NODE);
		}
	}
	return 0;
}

static Graph *import_subgraph(Importer *im, NameScope *parent, const Node *n,
			      const Onnx__GraphProto *gp, const char *fallback)
{
	if (parent->depth >= MAX_GRAPH_DEPTH) {
		im->located = true;
		return error("node '%s' (%s): subgraphs are nested more "
			     "than %d levels deep",
			     n->name, n->op_type, MAX_GRAPH_DEPTH),
		       NULL;
	}
	const char *name = gp->name && *gp->name ? gp->name : fallback;
	NameScope s = {
		.g = graph_new(im->a, name, parent->g),
		.parent = parent,
		.depth = parent->depth + 1,
	};
	namemap_init(&s.names);
	int rc = build_graph(im, &s, gp);
	namemap_release(&s.names);
	if (rc < 0 && !im->located) {
		im->located = true;
		error_prefix("subgraph '%s' of node '%s' (%s)", name, n->name,
			     n->op_type);
	}
	return rc < 0 ? NULL : s.g;
}

static Bytes copy_string(Arena *a, const ProtobufCBinaryData *b)
{
	Bytes r = { b->len, arena_alloc(a, b->len + 1) };
	if (b->len)
		memcpy((uint8_t *)r.data, b->data, b->len);
	return r; /* NUL-terminated: arena_alloc zeroes */
}

/* An attribute's type from the field that is set, for old files that
 * leave out the type (IR version 1). */
static int guess_attr_type(const Onnx__AttributeProto *ap)
{
	if (ap->t)
		return ATTR_TENSOR;
	if (ap->g)
		return ATTR_GRAPH;
	if (ap->sparse_tensor)
		return ATTR_SPARSE_TENSOR;
	if (ap->tp)
		return ATTR_TYPE_PROTO;
	if (ap->n_floats)
		return ATTR_FLOATS;
	if (ap->n_ints)
		return ATTR_INTS;
	if (ap->n_strings)
		return ATTR_STRINGS;
	if (ap->n_tensors)
		return ATTR_TENSORS;
	if (ap->n_graphs)
		return ATTR_GRAPHS;
	if (ap->n_sparse_tensors)
		return ATTR_SPARSE_TENSORS;
	if (ap->n_type_protos)
		return ATTR_TYPE_PROTOS;
	if (ap->has_f)
		return ATTR_FLOAT;
	if (ap->has_i)
		return ATTR_INT;
	if (ap->has_s)
		return ATTR_STRING;
	return ATTR_UNDEFINED;
}

static int attr_list(Attr *a, size_t n)
{
	if (n > INT32_MAX)
		return error("too many values (%zu)", n);
	a->n = (int32_t)n;
	return 0;
}

/* Fills a from ap; list types first set a->n.  n is not touched by
 * building subgraphs, which add nodes to their own graphs only. */
static int fill_attr(Importer *im, NameScope *s, const Node *n, Attr *a,
		     const Onnx__AttributeProto *ap)
{
	switch (a->type) {
	case ATTR_FLOAT: a->f = ap->f; return 0;
	case ATTR_INT: a->i = ap->i; return 0;
	case ATTR_STRING: a->s = copy_string(im->a, &ap->s); return 0;
	case ATTR_TENSOR:
		if (!ap->t)
			return error("no tensor given");
		return (a->t = decode_tensor(im, ap->t)) ? 0 : -1;
	case ATTR_GRAPH: {
		if (!ap->g)
			return error("no graph given");
		const char *fb = arena_printf(im->a, "%s.%s", n->name, a->name);
		return (a->g = import_subgraph(im, s, n, ap->g, fb)) ? 0 : -1;
	}
	case ATTR_FLOATS:
		a->floats = ap->floats;
		return attr_list(a, ap->n_floats);
	case ATTR_INTS:
		a->ints = ap->ints;
		return attr_list(a, ap->n_ints);
	case ATTR_STRINGS: {
		if (attr_list(a, ap->n_strings) < 0)
			return -1;
		Bytes *b = arena_array(im->a, ap->n_strings, sizeof(Bytes));
		for (size_t k = 0; k < ap->n_strings; k++)
			b[k] = copy_string(im->a, &ap->strings[k]);
		a->strings = b;
		return 0;
	}
	case ATTR_TENSORS: {
		if (attr_list(a, ap->n_tensors) < 0)
			return -1;
		const Tensor **t = arena_array(im->a, ap->n_tensors,
					       sizeof(*t));
		for (size_t k = 0; k < ap->n_tensors; k++)
			if (!(t[k] = decode_tensor(im, ap->tensors[k])))
				return -1;
		a->tensors = t;
		return 0;
	}
	case ATTR_GRAPHS: {
		if (attr_list(a, ap->n_graphs) < 0)
			return -1;
		Graph **g = arena_array(im->a, ap->n_graphs, sizeof(*g));
		for (size_t k = 0; k < ap->n_graphs; k++) {
			const char *fb = arena_printf(im->a, "%s.%s.%zu",
						      n->name, a->name, k);
			if (!(g[k] = import_subgraph(im, s, n, ap->graphs[k],
						    fb)))
				return -1;
		}
		a->graphs = g;
		return 0;
	}
	case ATTR_SPARSE_TENSOR:
	case ATTR_SPARSE_TENSORS:
		return error("sparse tensor attributes are not supported");
	case ATTR_TYPE_PROTO:
		return 0; /* kept as a type tag only */
	case ATTR_TYPE_PROTOS:
		return attr_list(a, ap->n_type_protos);
	}
	BUG("attribute type %d", a->type);
}

static int add_attr(Importer *im, NameScope *s, Node *n,
		    const Onnx__AttributeProto *ap)
{
	const char *name = str_or_empty(ap->name);
	if (!*name)
		return error("an attribute has no name");
	if (ap->ref_attr_name && *ap->ref_attr_name)
		return error("attribute '%s' refers to '%s' of an enclosing "
			     "function (ref_attr_name), which is only valid "
			     "inside a function",
			     name, ap->ref_attr_name);
	int type = ap->has_type ? (int)ap->type : ATTR_UNDEFINED;
	if (type == ATTR_UNDEFINED)
		type = guess_attr_type(ap);
	if (type == ATTR_UNDEFINED)
		return error("attribute '%s' has no type and no value", name);
	if (type < ATTR_FLOAT || type > ATTR_TYPE_PROTOS)
		return error("attribute '%s' has unknown type %d", name, type);
	/* n->attrs has room for all (node_inputs_attrs); node_add_attr()
	 * would copy the list for every attribute. */
	Attr *a = &n->attrs[n->nattrs++];
	a->name = name;
	a->type = type;
	if (fill_attr(im, s, n, a, ap) < 0) {
		if (im->located) /* a subgraph's error says where it is */
			return -1;
		return error_prefix("attribute '%s'", name);
	}
	return 0;
}

static int node_inputs_attrs(Importer *im, NameScope *s, Node *n,
			     const Onnx__NodeProto *np, size_t i)
{
	for (size_t k = 0; k < np->n_input; k++) {
		const char *name = np->input[k];
		if (!*name)
			continue; /* an omitted optional input */
		n->inputs[k] = resolve(s, name);
		if (n->inputs[k] < 0)
			return error("node %s input '%s' is not produced by "
				     "any node, graph input or initializer",
				     node_desc(im, np, i), name);
	}
	if (np->n_attribute > INT32_MAX)
		return error("node %s has too many attributes",
			     node_desc(im, np, i));
	n->attrs = arena_array(im->a, np->n_attribute, sizeof(Attr));
	for (size_t k = 0; k < np->n_attribute; k++)
		if (add_attr(im, s, n, np->attribute[k]) < 0)
			return im->located ? -1
					   : error_prefix("node %s",
							  node_desc(im, np, i));
	return contrib_import(s->g, n);
}

/* Dtype and shape hints for values of this graph.  The type is checked
 * even for names the graph does not have, which are ignored. */
static int add_value_info(Importer *im, NameScope *s, const Onnx__GraphProto *gp)
{
	for (size_t i = 0; i < gp->n_value_info; i++) {
		const Onnx__ValueInfoProto *vi = gp->value_info[i];
		const char *name = str_or_empty(vi->name);
		TypeInfo ti;
		if (decode_type(im, vi->type, name, &ti) < 0)
			return -1;
		ValId v = namemap_get(&s->names, name);
		if (v >= 0 && vi->type && (s->g->vals[v].kind == VAL_NODE ||
					   s->g->vals[v].kind == VAL_OUTER))
			apply_type(&s->g->vals[v], &ti);
	}
	return 0;
}

static int add_outputs(Importer *im, NameScope *s, const Onnx__GraphProto *gp)
{
	Graph *g = s->g;
	g->outputs = arena_array(im->a, gp->n_output, sizeof(ValId));
	for (size_t i = 0; i < gp->n_output; i++) {
		const Onnx__ValueInfoProto *vi = gp->output[i];
		const char *name = str_or_empty(vi->name);
		TypeInfo ti;
		if (!*name)
			return error("graph output %zu has no name", i);
		if (decode_type(im, vi->type, name, &ti) < 0)
			return -1;
		ValId v = resolve(s, name);
		if (v < 0)
			return error("graph output '%s' is not produced by any "
				     "node, graph input or initializer",
				     name);
		Value *val = &g->vals[v];
		if (val->flags & VF_GRAPH_OUT)
			return error("graph '%s': output '%s' is listed twice",
				     g->name, name);
		val->flags |= VF_GRAPH_OUT;
		if (vi->type &&
		    (val->kind == VAL_NODE || val->kind == VAL_OUTER))
			apply_type(val, &ti);
		g->outputs[g->noutputs++] = v;
	}
	return 0;
}

static int build_graph(Importer *im, NameScope *s, const Onnx__GraphProto *gp)
{
	if (add_initializers(im, s, gp) < 0 || add_inputs(im, s, gp) < 0 ||
	    add_nodes(im, s, gp) < 0)
		return -1;
	for (size_t i = 0; i < gp->n_node; i++)
		if (node_inputs_attrs(im, s, &s->g->nodes[i], gp->node[i],
				      i) < 0)
			return -1;
	if (add_value_info(im, s, gp) < 0 || add_outputs(im, s, gp) < 0)
		return -1;
	return 0;
}

/* ---- the model ---------------------------------------------------------- */

static void set_dir(Importer *im, const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	if (!slash)
		im->dir = "";
	else if (slash == path)
		im->dir = "/";
	else
		im->dir = arena_strndup(im->a, path, (size_t)(slash - path));
}

static void set_model_info(Model *m, const Onnx__ModelProto *mp)
{
	m->ir_version = mp->ir_version;
	m->model_version = mp->model_version;
	m->producer_name = str_or_empty(mp->producer_name);
	m->producer_version = str_or_empty(mp->producer_version);
	m->domain = str_or_empty(mp->domain);
	m->opsets = arena_array(&m->arena, mp->n_opset_import, sizeof(Opset));
	for (size_t i = 0; i < mp->n_opset_import; i++) {
		m->opsets[i].domain = str_or_empty(mp->opset_import[i]->domain);
		m->opsets[i].version = mp->opset_import[i]->version;
	}
	m->nopsets = (int32_t)mp->n_opset_import;
}

/* Each domain imported once, at a version that exists: ai.onnx (the
 * default domain, "" or "ai.onnx") 1 to OPSET_NEWEST, the newest gearc
 * has rules for; other domains from 1. */
static int check_opsets(const Model *m)
{
	NameMap seen;
	int rc = 0;
	namemap_init(&seen);
	for (int32_t i = 0; i < m->nopsets && !rc; i++) {
		const Opset *o = &m->opsets[i];
		bool dflt = domain_is_default(o->domain);
		const char *d = dflt ? "ai.onnx" : o->domain;
		int32_t j = namemap_put(&seen, d, i); /* -1: new */
		if (o->version < 1)
			rc = error("opset_import[%d]: domain '%s' version %lld, "
				   "expected >= 1", i, d, (long long)o->version);
		else if (dflt && o->version > OPSET_NEWEST)
			rc = error("opset_import[%d]: ai.onnx version %lld is "
				   "newer than gearc knows (1 to %d)", i,
				   (long long)o->version, OPSET_NEWEST);
		else if (j >= 0)
			rc = error("opset_import[%d]: domain '%s' is imported "
				   "twice (also at [%d])", i, d, j);
	}
	namemap_release(&seen);
	return rc;
}

static int import_model(Importer *im, const uint8_t *data, size_t size)
{
	Model *m = im->m;
	if (size == 0)
		return error("the file is empty, expected an ONNX model");
	if (wire_check(data, size, &onnx__model_proto__descriptor,
		       "ONNX model") < 0)
		return -1;
	ProtobufCAllocator alloc = { pb_alloc, pb_free, &m->arena };
	Onnx__ModelProto *mp = onnx__model_proto__unpack(&alloc, size, data);
	if (!mp)
		return error("not a valid ONNX model (protobuf parse failed)");
	if (mp->n_opset_import > INT32_MAX)
		return error("too many opset imports");
	set_model_info(m, mp);
	if (check_opsets(m) < 0)
		return -1;
	if (!mp->graph)
		return error("the model has no graph");
	const Onnx__GraphProto *gp = mp->graph;
	NameScope s = { .g = graph_new(im->a, gp->name && *gp->name ? gp->name
								 : "main",
				   NULL) };
	namemap_init(&s.names);
	int rc = build_graph(im, &s, gp);
	namemap_release(&s.names);
	m->graph = s.g;
	m->graph_name = s.g->name;
	if (rc < 0 || graph_toposort(m->graph) < 0)
		return -1;
	return graph_verify(m->graph);
}

Model *onnx_load_bytes(const uint8_t *data, size_t size, const char *path)
{
	Model *m = model_new();
	Importer im = { .m = m, .a = &m->arena };
	m->path = arena_strdup(&m->arena, path ? path : "");
	set_dir(&im, path);
	namemap_init(&im.files);
	int rc = import_model(&im, data, size);
	namemap_release(&im.files);
	if (rc < 0) {
		error_prefix("model '%s'", path ? path : "(memory)");
		model_free(m);
		return NULL;
	}
	return m;
}

Model *onnx_load(const char *path)
{
	FileMap f;
	/* Read, not mapped: a model cut while it is parsed is an error, not
	 * SIGBUS.  protobuf-c copies what it keeps, so the copy goes right
	 * away.  (External data stays mapped, used in place until the .om
	 * is written: a data file cut during a compile still faults.) */
	if (filemap_read(&f, path, "model") < 0)
		return NULL;
	Model *m = onnx_load_bytes(f.data, f.size, path);
	if (m) {
		char hex[65];
		sha256_hex(f.data, f.size, hex);
		m->sha256 = arena_strdup(&m->arena, hex);
	}
	filemap_release(&f);
	return m;
}

const Tensor *onnx_load_tensor(Model *m, const char *path)
{
	FileMap f;
	if (filemap_read(&f, path, "tensor") < 0)
		return NULL;
	Importer im = { .m = m, .a = &m->arena };
	ProtobufCAllocator alloc = { pb_alloc, pb_free, &m->arena };
	const Tensor *t = NULL;
	set_dir(&im, path);
	namemap_init(&im.files);
	Onnx__TensorProto *tp = NULL;
	if (wire_check(f.data, f.size, &onnx__tensor_proto__descriptor,
		       "TensorProto") == 0 &&
	    !(tp = onnx__tensor_proto__unpack(&alloc, f.size, f.data)))
		error("not a valid TensorProto (protobuf parse failed)");
	if (tp)
		t = decode_tensor(&im, tp);
	namemap_release(&im.files);
	filemap_release(&f);
	if (!t)
		error_prefix("tensor '%s'", path);
	return t;
}
