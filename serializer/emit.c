/*
 * serializer/emit.c - a lowered Model's graphs as gearom.Graph bytes.
 *
 * With many gears the graphs are nearly all of MODEL_DEF, and building a
 * protobuf-c message per tensor, node and memory block only to pack it
 * again cost more than compiling the gears.  So graphs skip the message
 * objects: this writes the wire format of gearom.Graph
 * (proto/gearom.proto) straight from the IR, one graph per call, and the
 * writer calls it on several threads.  om_lower() has numbered graphs and
 * weights; on the way this makes the reader's checks (check.c) on what
 * it writes, so gearc never writes a file it would reject.
 *
 * Fields go out in field-number order, each only when its message
 * counterpart would be set, so a reader sees exactly what om_lower's
 * messages used to carry; their numbers and wire types come from
 * protobuf-c's descriptors (FIELDS below).  The reader decodes these
 * bytes with protobuf-c (om.c); debug builds read back every MODEL_DEF
 * they write, and tests/test_emit.c checks every field against
 * protobuf-c's unpacker and packer.
 */
#include "omimpl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/*
 * Every field written here, as message and field names of
 * proto/gearom.proto.  Their keys (field number << 3 | wire type) come
 * from the descriptors protoc-c generated from it, looked up once by
 * name, so the schema alone says where and how a field goes.
 */
#define FIELDS(X)                                                           \
	X(model, graphs)                                                    \
	X(graph, name) X(graph, parent) X(graph, tensors) X(graph, nodes)   \
	X(graph, inputs) X(graph, outputs) X(graph, plan)                   \
	X(tensor, name) X(tensor, dtype) X(tensor, rank) X(tensor, dims)    \
	X(tensor, kind) X(tensor, weight) X(tensor, outer) X(tensor, flags) \
	X(tensor, type) X(tensor, dim_params)                               \
	X(node, name) X(node, op_type) X(node, domain) X(node, inputs)      \
	X(node, outputs) X(node, attrs) X(node, label) X(node, fused)       \
	X(node, reduced)                                                    \
	X(attribute, name) X(attribute, type) X(attribute, f)               \
	X(attribute, i) X(attribute, s) X(attribute, t) X(attribute, g)     \
	X(attribute, floats) X(attribute, ints) X(attribute, strings)       \
	X(attribute, tensors) X(attribute, graphs)                          \
	X(memory_plan, order) X(memory_plan, blocks)                        \
	X(memory_plan, arena_bytes) X(memory_plan, lower_bound_bytes)       \
	X(memory_plan, naive_bytes) X(memory_plan, unplanned)               \
	X(mem_block, tensor) X(mem_block, offset) X(mem_block, size)        \
	X(mem_block, first) X(mem_block, last) X(mem_block, alias_of)       \
	X(mem_block, node) X(mem_block, inplace)

#define FIELD_ENUM(msg, field) F_##msg##_##field,
enum { FIELDS(FIELD_ENUM) NFIELDS };

static uint32_t keys[NFIELDS];

/* The key of field `field` of gearom message `msg`. */
#define KEY(msg, field) keys[F_##msg##_##field]

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

static int wire_type(const ProtobufCFieldDescriptor *f)
{
	if (f->label == PROTOBUF_C_LABEL_REPEATED &&
	    (f->flags & PROTOBUF_C_FIELD_FLAG_PACKED))
		return WT_LEN;
	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
	case PROTOBUF_C_TYPE_MESSAGE: return WT_LEN;
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_SFIXED32: return WT_I32;
	case PROTOBUF_C_TYPE_DOUBLE:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_SFIXED64: return WT_I64;
	default: return WT_VARINT;
	}
}

static void set_key(int k, const ProtobufCMessageDescriptor *d,
		    const char *field)
{
	const ProtobufCFieldDescriptor *f =
		protobuf_c_message_descriptor_get_field_by_name(d, field);
	if (!f)
		BUG("%s has no field %s", d->name, field);
	keys[k] = f->id << 3 | (uint32_t)wire_type(f);
	if (keys[k] > 0x7f) /* put_key and FIELD_MAX: one byte */
		BUG("%s.%s: field number %u takes a two-byte key", d->name,
		    field, f->id);
}

static void keys_init(void)
{
#define SET_KEY(msg, field) \
	set_key(F_##msg##_##field, &gearom__##msg##__descriptor, #field);
	FIELDS(SET_KEY)
#undef SET_KEY
}

/*
 * Bytes go through a cursor q into b, which every emit_* function first
 * makes room for (the most its fixed-size fields can take, strings and
 * arrays counted exactly), so the put_* calls below need no checks.
 * Where a field starts is kept as an offset: growing b moves its bytes.
 */
enum { VARINT_MAX = 10, FIELD_MAX = 1 + VARINT_MAX }; /* key + value */

static void grow(OmBuf *b, size_t k)
{
	size_t cap = b->cap ? b->cap : 4096;
	while (cap - b->n < k) {
		ASSERT(cap <= SIZE_MAX / 2);
		cap *= 2;
	}
	b->p = xrealloc(b->p, cap);
	b->cap = cap;
}

/* q with room for k more bytes after it. */
static inline uint8_t *room(OmBuf *b, uint8_t *q, size_t k)
{
	b->n = (size_t)(q - b->p);
	if (b->cap - b->n < k)
		grow(b, k);
	return b->p + b->n;
}

static inline uint8_t *put_varint(uint8_t *q, uint64_t v)
{
	for (; v > 0x7f; v >>= 7)
		*q++ = (uint8_t)(v | 0x80);
	*q++ = (uint8_t)v;
	return q;
}

/* A key: one byte, as keys_init checked. */
static inline uint8_t *put_key(uint8_t *q, uint32_t key)
{
	*q++ = (uint8_t)key;
	return q;
}

/* int32, int64, uint32, uint64, bool and enum fields: negative values
 * sign-extend to ten bytes, as protobuf has it. */
static inline uint8_t *put_int(uint8_t *q, uint32_t key, int64_t v)
{
	return put_varint(put_key(q, key), (uint64_t)v);
}

static inline uint8_t *put_uint(uint8_t *q, uint32_t key, uint64_t v)
{
	return put_varint(put_key(q, key), v);
}

static inline uint64_t zigzag(int32_t v)
{
	uint32_t u = (uint32_t)v;
	return (uint64_t)(v < 0 ? ~(u << 1) : u << 1);
}

static inline uint8_t *put_sint(uint8_t *q, uint32_t key, int32_t v)
{
	return put_uint(q, key, zigzag(v));
}

static inline uint8_t *put_bytes(uint8_t *q, uint32_t key, const void *p,
				 size_t n)
{
	q = put_varint(put_key(q, key), n);
	if (n)
		memcpy(q, p, n);
	return q + n;
}

/* Room a string field takes; NULL goes out as "", as om_lower's
 * messages had it. */
static size_t str_room(const char *s)
{
	return FIELD_MAX + (s ? strlen(s) : 0);
}

static inline uint8_t *put_str(uint8_t *q, uint32_t key, const char *s)
{
	return put_bytes(q, key, s ? s : "", s ? strlen(s) : 0);
}

static inline uint8_t *put_fixed32(uint8_t *q, uint32_t u)
{
	om_put_u32(q, u);
	return q + 4;
}

static inline uint8_t *put_float(uint8_t *q, uint32_t key, float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	return put_fixed32(put_key(q, key), u);
}

/* A length-delimited field whose length is known only at its end: one
 * byte is kept for it (*at: the contents' offset), and the rare longer
 * length moves the contents. */
static inline uint8_t *open_field(OmBuf *b, uint8_t *q, uint32_t key,
				  size_t *at)
{
	q = put_key(q, key);
	*at = (size_t)(q - b->p) + 1;
	return q + 1;
}

static uint8_t *close_field(OmBuf *b, uint8_t *q, size_t at)
{
	uint8_t len[VARINT_MAX];
	size_t body = (size_t)(q - b->p) - at;
	size_t k = (size_t)(put_varint(len, body) - len);
	if (k > 1) {
		q = room(b, q, k - 1);
		memmove(b->p + at + k - 1, b->p + at, body);
		q += k - 1;
	}
	memcpy(b->p + at - 1, len, k);
	return q;
}

/* ---- packed repeated fields (none at all when empty) ------------------ */

/* Room for a packed field of n varints. */
static size_t packed_room(int32_t n)
{
	return FIELD_MAX + VARINT_MAX * (size_t)(n > 0 ? n : 0);
}

/* int32 entries, or sint32 ones (zigzag) if signed_ */
static uint8_t *put_int32s(OmBuf *b, uint8_t *q, uint32_t key,
			   const int32_t *v, int32_t n, bool signed_)
{
	size_t at;
	if (n <= 0)
		return q;
	q = open_field(b, q, key, &at);
	for (int32_t i = 0; i < n; i++)
		q = put_varint(q, signed_ ? zigzag(v[i])
					  : (uint64_t)(int64_t)v[i]);
	return close_field(b, q, at);
}

static uint8_t *put_int64s(OmBuf *b, uint8_t *q, uint32_t key,
			   const int64_t *v, int32_t n)
{
	size_t at;
	if (n <= 0)
		return q;
	q = open_field(b, q, key, &at);
	for (int32_t i = 0; i < n; i++)
		q = put_varint(q, (uint64_t)v[i]);
	return close_field(b, q, at);
}

static uint8_t *put_floats(uint8_t *q, uint32_t key, const float *v,
			   int32_t n)
{
	if (n <= 0)
		return q;
	q = put_varint(put_key(q, key), (uint64_t)n * 4);
	for (int32_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, &v[i], sizeof(u));
		q = put_fixed32(q, u);
	}
	return q;
}

/* ---- gearom messages --------------------------------------------------- */

typedef struct Emit {
	const OmLowered *l;
	OmBuf *b;
	int32_t gi;
	int32_t next_sub; /* graph index of the next subgraph met */
} Emit;

static int check_value(const Emit *e, const Value *v)
{
	int32_t rank = v->shape.rank, parent = e->l->parents[e->gi];
	if (om_check_dtype(v->dtype) < 0 ||
	    om_check_shape(rank, rank > 0 ? (size_t)rank : 0, v->shape.dims,
			   -1) < 0 ||
	    om_check_type_kind(v->tkind) < 0)
		return -1;
	if (v->kind != VAL_OUTER)
		return 0;
	if (parent < 0)
		return error("outer reference in the root graph");
	int32_t n = e->l->graphs[parent]->nvals;
	if (v->outer < 0 || v->outer >= n)
		return error("outer %d is out of range (graph %d has %d "
			     "tensors)",
			     v->outer, parent, n);
	return 0;
}

static int tensor_kind(int kind)
{
	switch (kind) {
	case VAL_NODE: return GEAROM__TENSOR_KIND__TK_NODE;
	case VAL_INPUT: return GEAROM__TENSOR_KIND__TK_INPUT;
	case VAL_WEIGHT: return GEAROM__TENSOR_KIND__TK_WEIGHT;
	case VAL_OUTER: return GEAROM__TENSOR_KIND__TK_OUTER;
	default: BUG("value kind %d", kind);
	}
}

/* gearom.Tensor (Graph.tensors); NULL with an error if the reader
 * would reject it. */
static uint8_t *emit_tensor(Emit *e, uint8_t *q, const Value *v)
{
	OmBuf *b = e->b;
	int32_t rank = v->shape.rank;
	bool params = false;
	size_t at, need = 8 * FIELD_MAX + str_room(v->name) + packed_room(rank);
	if (check_value(e, v) < 0)
		return NULL;
	for (int32_t k = 0; v->dim_params && k < rank; k++)
		params |= v->dim_params[k] != NULL;
	for (int32_t k = 0; params && k < rank; k++)
		need += str_room(v->dim_params[k]);
	q = open_field(b, room(b, q, need), KEY(graph, tensors), &at);
	q = put_str(q, KEY(tensor, name), v->name);
	q = put_int(q, KEY(tensor, dtype), v->dtype);
	q = put_sint(q, KEY(tensor, rank), rank);
	q = put_int64s(b, q, KEY(tensor, dims), v->shape.dims, rank);
	q = put_int(q, KEY(tensor, kind), tensor_kind(v->kind));
	if (v->konst)
		q = put_sint(q, KEY(tensor, weight),
			     om_weight_index(e->l, v->konst));
	if (v->kind == VAL_OUTER)
		q = put_sint(q, KEY(tensor, outer), v->outer);
	if (v->flags)
		q = put_uint(q, KEY(tensor, flags), v->flags);
	if (v->tkind)
		q = put_int(q, KEY(tensor, type), v->tkind);
	for (int32_t k = 0; params && k < rank; k++)
		q = put_str(q, KEY(tensor, dim_params), v->dim_params[k]);
	return close_field(b, q, at);
}

/* The next subgraph's index: depth first in node order, as numbered. */
static int32_t take_sub(Emit *e)
{
	int32_t gi = e->next_sub;
	e->next_sub += e->l->subtree[gi];
	return gi;
}

/* Room an attribute's value takes. */
static size_t attr_room(const Attr *at)
{
	size_t n = at->n > 0 ? (size_t)at->n : 0;
	switch (at->type) {
	case ATTR_STRING: return FIELD_MAX + at->s.len;
	case ATTR_FLOATS: return FIELD_MAX + 4 * n;
	case ATTR_INTS:
	case ATTR_TENSORS:
	case ATTR_GRAPHS: return packed_room(at->n);
	case ATTR_STRINGS: {
		size_t k = 0;
		for (size_t j = 0; j < n; j++)
			k += FIELD_MAX + at->strings[j].len;
		return k;
	}
	default: return FIELD_MAX;
	}
}

static uint8_t *emit_attr(Emit *e, uint8_t *q, const Attr *at)
{
	OmBuf *b = e->b;
	size_t pos, k;
	if (om_check_attr_type(at->type) < 0)
		return NULL;
	q = room(b, q, 3 * FIELD_MAX + str_room(at->name) + attr_room(at));
	q = open_field(b, q, KEY(node, attrs), &pos);
	q = put_str(q, KEY(attribute, name), at->name);
	q = put_int(q, KEY(attribute, type), at->type);
	switch (at->type) {
	case ATTR_FLOAT: q = put_float(q, KEY(attribute, f), at->f); break;
	case ATTR_INT: q = put_int(q, KEY(attribute, i), at->i); break;
	case ATTR_STRING:
		q = put_bytes(q, KEY(attribute, s), at->s.data, at->s.len);
		break;
	case ATTR_TENSOR:
		q = put_sint(q, KEY(attribute, t),
			     om_weight_index(e->l, at->t));
		break;
	case ATTR_GRAPH: q = put_sint(q, KEY(attribute, g), take_sub(e)); break;
	case ATTR_FLOATS:
		q = put_floats(q, KEY(attribute, floats), at->floats, at->n);
		break;
	case ATTR_INTS:
		q = put_int64s(b, q, KEY(attribute, ints), at->ints, at->n);
		break;
	case ATTR_STRINGS:
		for (int32_t j = 0; j < at->n; j++)
			q = put_bytes(q, KEY(attribute, strings),
				      at->strings[j].data, at->strings[j].len);
		break;
	case ATTR_TENSORS:
		if (at->n <= 0)
			break;
		q = open_field(b, q, KEY(attribute, tensors), &k);
		for (int32_t j = 0; j < at->n; j++)
			q = put_varint(q, (uint64_t)om_weight_index(
						  e->l, at->tensors[j]));
		q = close_field(b, q, k);
		break;
	case ATTR_GRAPHS:
		if (at->n <= 0)
			break;
		q = open_field(b, q, KEY(attribute, graphs), &k);
		for (int32_t j = 0; j < at->n; j++)
			q = put_varint(q, (uint64_t)take_sub(e));
		q = close_field(b, q, k);
		break;
	default: break; /* sparse tensors and type protos: name and type */
	}
	return close_field(b, q, pos);
}

static uint8_t *emit_node(Emit *e, uint8_t *q, const Node *n)
{
	OmBuf *b = e->b;
	size_t at, nt = (size_t)e->l->graphs[e->gi]->nvals;
	if (om_check_refs("input", n->inputs, (size_t)n->ninputs, nt, true) <
		    0 ||
	    om_check_refs("output", n->outputs, (size_t)n->noutputs, nt,
			  true) < 0)
		return NULL;
	q = room(b, q, FIELD_MAX + str_room(n->name) + str_room(n->op_type) +
			       str_room(n->domain) + packed_room(n->ninputs) +
			       packed_room(n->noutputs));
	q = open_field(b, q, KEY(graph, nodes), &at);
	q = put_str(q, KEY(node, name), n->name);
	q = put_str(q, KEY(node, op_type), n->op_type);
	q = put_str(q, KEY(node, domain), n->domain);
	q = put_int32s(b, q, KEY(node, inputs), n->inputs, n->ninputs, true);
	q = put_int32s(b, q, KEY(node, outputs), n->outputs, n->noutputs,
		       true);
	for (int32_t k = 0; k < n->nattrs; k++)
		if (!(q = emit_attr(e, q, &n->attrs[k]))) {
			error_prefix("attribute %d", k);
			return NULL;
		}
	if (n->label)
		q = put_str(room(b, q, str_room(n->label)), KEY(node, label),
			    n->label);
	for (int32_t k = 0; k < n->nfused; k++)
		q = put_str(room(b, q, str_room(n->fused[k])), KEY(node, fused),
			    n->fused[k]);
	if (n->reduced)
		q = put_int(room(b, q, FIELD_MAX), KEY(node, reduced), 1);
	return close_field(b, q, at);
}

static uint8_t *emit_block(OmBuf *b, uint8_t *q, const MemBlock *m)
{
	size_t at;
	q = open_field(b, room(b, q, 9 * FIELD_MAX), KEY(memory_plan, blocks),
		       &at);
	q = put_int(q, KEY(mem_block, tensor), m->tensor);
	q = put_uint(q, KEY(mem_block, offset), m->offset);
	q = put_uint(q, KEY(mem_block, size), m->size);
	q = put_int(q, KEY(mem_block, first), m->first);
	q = put_int(q, KEY(mem_block, last), m->last);
	if (m->alias_of >= 0)
		q = put_sint(q, KEY(mem_block, alias_of), m->alias_of);
	if (m->node >= 0)
		q = put_sint(q, KEY(mem_block, node), m->node);
	if (m->inplace)
		q = put_uint(q, KEY(mem_block, inplace), 1);
	return close_field(b, q, at);
}

static uint8_t *emit_plan(OmBuf *b, uint8_t *q, const MemPlan *p,
			  const Graph *g)
{
	size_t at;
	if (om_check_order(p->order, p->norder > 0 ? (size_t)p->norder : 0,
			   (size_t)g->nnodes) < 0)
		return NULL;
	for (int32_t k = 0; k < p->nblocks; k++) {
		const MemBlock *m = &p->blocks[k];
		if (om_check_block((size_t)k, m->tensor, m->node, m->alias_of,
				   m->offset, m->size, (size_t)g->nvals,
				   (size_t)g->nnodes) < 0)
			return NULL;
	}
	q = room(b, q, FIELD_MAX + packed_room(p->norder));
	q = open_field(b, q, KEY(graph, plan), &at);
	q = put_int32s(b, q, KEY(memory_plan, order), p->order, p->norder,
		       false);
	for (int32_t k = 0; k < p->nblocks; k++)
		q = emit_block(b, q, &p->blocks[k]);
	q = room(b, q, 4 * FIELD_MAX);
	q = put_uint(q, KEY(memory_plan, arena_bytes), p->arena_bytes);
	q = put_uint(q, KEY(memory_plan, lower_bound_bytes),
		     p->lower_bound_bytes);
	q = put_uint(q, KEY(memory_plan, naive_bytes), p->naive_bytes);
	q = put_uint(q, KEY(memory_plan, unplanned),
		     p->unplanned > 0 ? (uint64_t)p->unplanned : 0);
	return close_field(b, q, at);
}

static uint8_t *emit_graph(Emit *e, uint8_t *q, const Graph *g)
{
	OmBuf *b = e->b;
	int32_t gi = e->gi;
	q = room(b, q, 2 * FIELD_MAX + str_room(g->name));
	q = put_str(q, KEY(graph, name), g->name);
	if (e->l->parents[gi] >= 0)
		q = put_sint(q, KEY(graph, parent), e->l->parents[gi]);
	for (int32_t i = 0; i < g->nvals; i++)
		if (!(q = emit_tensor(e, q, &g->vals[i]))) {
			error_prefix("tensor %d", i);
			return NULL;
		}
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!(q = emit_node(e, q, &g->nodes[i]))) {
			error_prefix("node %d", i);
			return NULL;
		}
	if (om_check_refs("input", g->inputs, (size_t)g->ninputs,
			  (size_t)g->nvals, false) < 0 ||
	    om_check_refs("output", g->outputs, (size_t)g->noutputs,
			  (size_t)g->nvals, false) < 0)
		return NULL;
	q = room(b, q, packed_room(g->ninputs) + packed_room(g->noutputs));
	q = put_int32s(b, q, KEY(graph, inputs), g->inputs, g->ninputs, false);
	q = put_int32s(b, q, KEY(graph, outputs), g->outputs, g->noutputs,
		       false);
	if (g->plan && !(q = emit_plan(b, q, g->plan, g))) {
		error_prefix("memory plan");
		return NULL;
	}
	ASSERT(e->next_sub == gi + e->l->subtree[gi]);
	return q;
}

/* Room before a graph for its Model.graphs tag and length, so they go in
 * front of it once its length is known. */
enum { GRAPH_HEAD = FIELD_MAX };

int om_emit_graph(const OmLowered *l, int32_t gi, OmBuf *b)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	Emit e = { .l = l, .b = b, .gi = gi, .next_sub = gi + 1 };
	pthread_once(&once, keys_init);
	ASSERT(!b->p);
	grow(b, GRAPH_HEAD);
	uint8_t *q = b->p + GRAPH_HEAD;
	if (!(q = emit_graph(&e, q, l->graphs[gi])))
		return error_prefix("graph %d", gi);
	b->n = (size_t)(q - b->p);
	uint8_t head[GRAPH_HEAD], *h = head;
	h = put_varint(put_key(h, KEY(model, graphs)), b->n - GRAPH_HEAD);
	b->start = GRAPH_HEAD - (size_t)(h - head);
	memcpy(b->p + b->start, head, (size_t)(h - head));
	return 0;
}
