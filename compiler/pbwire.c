/*
 * compiler/pbwire.c - pb_scan(): the wire-format walk behind the ONNX and
 * .om readers' limits (pbwire.h).
 *
 * The allocation bound follows protobuf-c 1.x's unpacker: per message its
 * struct; per field occurrence a 32-byte scan record (kept until the
 * message is done); per repeated field one array of its element size
 * times its count; per string len + 1 bytes, per bytes field len bytes,
 * per unknown field a 24-byte record and a copy; every block rounded as
 * malloc rounds it.  It is an upper bound: a singular field given twice
 * is counted twice.
 */
#include "pbwire.h"

#include <string.h>

enum { MAX_DEPTH = 256, SCAN_RECORD = 32, UNKNOWN_RECORD = 24 };

/* What malloc(n) takes: a header word, 16-byte rounding, 32 at least. */
static uint64_t block(uint64_t n)
{
	uint64_t b = (n + 8 + 15) & ~(uint64_t)15;
	return b < 32 ? 32 : b;
}

static bool read_varint(const uint8_t *p, size_t end, size_t *pos,
			uint64_t *v)
{
	uint64_t r = 0;
	for (int shift = 0; shift < 64 && *pos < end; shift += 7) {
		uint8_t b = p[(*pos)++];
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

/* The size of one element of a repeated field of type t in its array. */
static uint64_t elt_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_MESSAGE:
		return 8;
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	default:
		return 4;
	}
}

/* Elements in a packed field's len bytes at p. */
static uint64_t packed_count(ProtobufCType t, const uint8_t *p, size_t len)
{
	uint64_t n = 0;
	if (t == PROTOBUF_C_TYPE_FIXED32 || t == PROTOBUF_C_TYPE_SFIXED32 ||
	    t == PROTOBUF_C_TYPE_FLOAT)
		return len / 4;
	if (t == PROTOBUF_C_TYPE_FIXED64 || t == PROTOBUF_C_TYPE_SFIXED64 ||
	    t == PROTOBUF_C_TYPE_DOUBLE)
		return len / 8;
	for (size_t i = 0; i < len; i++) /* varints: one end byte each */
		n += !(p[i] & 0x80);
	return n;
}

typedef struct Level {
	size_t end;
	const ProtobufCMessageDescriptor *desc;
	uint64_t arrays; /* repeated fields (by index < 64) already counted */
} Level;

/* A message of type d begins: its struct. */
static void enter(Level *l, size_t end, const ProtobufCMessageDescriptor *d,
		  PbScan *s)
{
	l->end = end;
	l->desc = d;
	l->arrays = 0;
	s->alloc += block(d->sizeof_message);
}

/* The cost of one occurrence of field f (NULL: unknown) holding len
 * bytes at p (wire type 2) or one value (other wire types). */
static void count_field(Level *l, const ProtobufCFieldDescriptor *f,
			const uint8_t *p, uint64_t len, bool delimited,
			PbScan *s)
{
	s->alloc += SCAN_RECORD;
	if (!f) {
		s->alloc += UNKNOWN_RECORD + block(len);
		return;
	}
	if (f->label == PROTOBUF_C_LABEL_REPEATED) {
		unsigned i = (unsigned)(f - l->desc->fields);
		uint64_t n = delimited && f->type != PROTOBUF_C_TYPE_STRING &&
					     f->type != PROTOBUF_C_TYPE_BYTES &&
					     f->type != PROTOBUF_C_TYPE_MESSAGE
				     ? packed_count(f->type, p, (size_t)len)
				     : 1;
		s->alloc += n * elt_size(f->type);
		if (i >= 64 || !(l->arrays & (uint64_t)1 << i))
			s->alloc += block(0);
		if (i < 64)
			l->arrays |= (uint64_t)1 << i;
	}
	if (f->type == PROTOBUF_C_TYPE_STRING)
		s->alloc += block(len + 1);
	else if (f->type == PROTOBUF_C_TYPE_BYTES)
		s->alloc += block(len);
}

static bool has_nul(const ProtobufCFieldDescriptor *f, const uint8_t *p,
		    uint64_t len)
{
	return f && f->type == PROTOBUF_C_TYPE_STRING &&
	       strcmp(f->name, "doc_string") && memchr(p, 0, (size_t)len);
}

int pb_scan(const uint8_t *p, size_t n, const ProtobufCMessageDescriptor *desc,
	    PbScan *s)
{
	Level st[MAX_DEPTH];
	int top = 0, max = s->max_depth < MAX_DEPTH ? s->max_depth : MAX_DEPTH;
	size_t pos = 0;
	s->alloc = 0;
	enter(&st[0], n, desc, s);
	for (;;) {
		while (pos == st[top].end) {
			if (top == 0)
				return PB_OK;
			top--;
		}
		Level *l = &st[top];
		uint64_t tag, len = 0;
		if (!read_varint(p, l->end, &pos, &tag))
			return PB_BROKEN;
		const ProtobufCFieldDescriptor *f = NULL;
		if ((tag >> 3) <= UINT32_MAX)
			f = protobuf_c_message_descriptor_get_field(
				l->desc, (unsigned)(tag >> 3));
		size_t at = pos;
		switch (tag & 7) {
		case 0:
			if (!read_varint(p, l->end, &pos, &len))
				return PB_BROKEN;
			count_field(l, f, p + at, pos - at, false, s);
			break;
		case 1:
		case 5:
			len = (tag & 7) == 1 ? 8 : 4;
			if (l->end - pos < len)
				return PB_BROKEN;
			pos += len;
			count_field(l, f, p + at, len, false, s);
			break;
		case 2:
			if (!read_varint(p, l->end, &pos, &len) ||
			    len > l->end - pos)
				return PB_BROKEN;
			count_field(l, f, p + pos, len, true, s);
			if (has_nul(f, p + pos, len)) {
				s->message = l->desc->name;
				s->field = f->name;
				return PB_NUL;
			}
			if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE) {
				pos += len;
				break;
			}
			if (top + 1 >= max)
				return PB_DEEP;
			top++;
			enter(&st[top], pos + len, f->descriptor, s);
			break;
		default: /* groups and reserved wire types */
			return PB_BROKEN;
		}
	}
}
